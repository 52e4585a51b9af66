/*
 * capture.c - a helper program's output (capture.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/capture.h"

extern char **environ;

bool capture_on_path(const char *name)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];
	for (const char *p = path; p && *p;) {
		size_t len = 0;
		while (p[len] && p[len] != ':')
			len++;
		if (len && snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, p, name) < (int)sizeof(buf) &&
		    access(buf, X_OK) == 0)
			return true;
		p += len + (p[len] == ':');
	}
	return false;
}

static long long ms_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (long long)(t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

/* The helper's exit status once it has ended, by timeout_ms after t0 (-1 when
 * it did not exit by itself); past that, it is killed with its process group
 * (its children too, one of which may hold the pipe) and reaped, and *late set. */
static int reap(pid_t pid, const struct timespec *t0, int timeout_ms, bool *late)
{
	int status;
	pid_t w;
	while (!*late) {
		w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		if (w < 0 && errno != EINTR)
			return -1;
		if (ms_since(t0) >= timeout_ms)
			*late = true;
		else
			nanosleep(&(struct timespec){0, 5 * 1000000}, NULL);
	}
	kill(-pid, SIGKILL);
	while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	return -1;
}

long capture_output(char *const argv[], char *out, size_t cap, int timeout_ms)
{
	int fds[2];
	if (cap)
		out[0] = '\0';
	if (pipe2(fds, O_CLOEXEC) != 0)
		return -1;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	if (posix_spawn_file_actions_init(&fa) != 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (posix_spawnattr_init(&at) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	/* a group of its own, so that a helper that hangs is killed with what it
	 * started; no signal blocked or ignored (a supervisor blocks the ones it
	 * waits for: the helper would inherit that) */
	sigset_t none, dflt;
	sigemptyset(&none);
	sigemptyset(&dflt);
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaddset(&dflt, sig); /* glibc's own (32, 33) are refused: no matter */
	pid_t pid;
	int rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
						       POSIX_SPAWN_SETSIGDEF);
	if (rc == 0)
		rc = posix_spawnattr_setpgroup(&at, 0);
	if (rc == 0)
		rc = posix_spawnattr_setsigmask(&at, &none);
	if (rc == 0)
		rc = posix_spawnattr_setsigdefault(&at, &dflt);
	if (rc == 0)
		rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (rc == 0)
		rc = posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	if (rc == 0)
		rc = posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (rc == 0)
		rc = posix_spawnp(&pid, argv[0], &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(fds[1]);
	if (rc != 0) {
		close(fds[0]);
		return -1;
	}
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	size_t len = 0;
	char drop[512];
	bool late = false;
	for (;;) {
		long long left = timeout_ms - ms_since(&t0);
		if (left <= 0) {
			late = true;
			break;
		}
		struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
		int ready = poll(&pfd, 1, (int)(left > INT_MAX ? INT_MAX : left));
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready < 0)
			break;
		if (ready == 0)
			continue; /* the time is up: seen above */
		char *to = len + 1 < cap ? out + len : drop;
		size_t room = len + 1 < cap ? cap - 1 - len : sizeof(drop);
		ssize_t n = read(fds[0], to, room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (to != drop)
			len += (size_t)n;
	}
	close(fds[0]);
	if (cap)
		out[len] = '\0';
	/* the end of its output is not its end: one that closed its stdout and
	 * lives on is killed as one that writes for ever is */
	int status = reap(pid, &t0, timeout_ms, &late);
	if (late) {
		if (cap)
			out[0] = '\0';
		return CAPTURE_TIMEOUT;
	}
	return status == 0 ? (long)len : -1;
}
