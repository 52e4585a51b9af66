/*
 * capture.c - a helper program's output (capture.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
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

long capture_output(char *const argv[], char *out, size_t cap)
{
	int fds[2];
	if (cap)
		out[0] = '\0';
	if (pipe2(fds, O_CLOEXEC) != 0)
		return -1;
	posix_spawn_file_actions_t fa;
	if (posix_spawn_file_actions_init(&fa) != 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	pid_t pid;
	int rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (rc == 0)
		rc = posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	if (rc == 0)
		rc = posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (rc == 0)
		rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (rc != 0) {
		close(fds[0]);
		return -1;
	}
	size_t len = 0;
	char drop[512];
	for (;;) {
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
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? (long)len : -1;
}
