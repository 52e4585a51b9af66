/*
 * test_capture.c - a helper program's output (base/capture.h): what it
 * writes and how it ended; one that hangs, writes for ever, leaves a child
 * holding its output or lives on after closing it is killed at the timeout
 * with what it started, and one run from a caller that blocks signals (a
 * supervisor) has none blocked.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/capture.h"
#include "t.h"

static char *dir;

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* sh -c SCRIPT, its output in out; *ms how long it took */
static long sh(const char *script, char *out, size_t cap, int timeout_ms, long long *ms)
{
	char a0[] = "sh", a1[] = "-c";
	char *argv[] = {a0, a1, (char *)script, NULL};
	long long t0 = now_ms();
	long n = capture_output(argv, out, cap, timeout_ms);
	*ms = now_ms() - t0;
	return n;
}

/* The pid the script wrote to FILE in dir (0: none), and whether it is gone. */
static bool gone(const char *file)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	FILE *f = fopen(path, "r");
	long pid = 0;
	if (f) {
		if (fscanf(f, "%ld", &pid) != 1)
			pid = 0;
		fclose(f);
	}
	if (pid <= 0)
		return false;
	/* killed: a zombie of its parent's for a moment, or reaped by init */
	for (int i = 0; i < 100; i++) {
		char stat[64], line[256] = "";
		snprintf(stat, sizeof(stat), "/proc/%ld/stat", pid);
		FILE *s = fopen(stat, "r");
		if (!s)
			return true;
		bool zombie = fgets(line, sizeof(line), s) && strstr(line, ") Z ");
		fclose(s);
		if (zombie)
			return true;
		usleep(10000);
	}
	kill((pid_t)pid, SIGKILL);
	return false;
}

static void test_output_and_status(void)
{
	char out[64];
	long long ms;
	CHECK_INT(sh("printf 'GPU 0\\nGPU 1\\n'", out, sizeof(out), 5000, &ms), 12);
	CHECK_STR(out, "GPU 0\nGPU 1\n");
	CHECK_INT(sh("echo partial; exit 3", out, sizeof(out), 5000, &ms), -1);
	/* more than fits: the rest is read and dropped */
	CHECK_INT(sh("head -c 100000 /dev/zero | tr '\\0' x", out, sizeof(out), 5000, &ms), 63);
	CHECK_INT(strlen(out), 63);
	char a0[] = "berth-no-such-program";
	char *argv[] = {a0, NULL};
	CHECK_INT(capture_output(argv, out, sizeof(out), 5000), -1);
}

static void test_timeouts(void)
{
	dir = t_temp_dir("berth-capture");
	if (!dir)
		return;
	char script[1024], out[64];
	long long ms;
	/* hangs: killed at the timeout, its output dropped */
	snprintf(script, sizeof(script), "echo $$ >%s/hang; echo early; exec sleep 30", dir);
	CHECK_INT(sh(script, out, sizeof(out), 300, &ms), CAPTURE_TIMEOUT);
	CHECKF(ms >= 300 && ms < 3000, "a hanging helper returned after %lld ms", ms);
	CHECK_STR(out, "");
	CHECK(gone("hang"));
	/* writes for ever */
	CHECK_INT(sh("yes", out, sizeof(out), 300, &ms), CAPTURE_TIMEOUT);
	CHECKF(ms < 3000, "an endless writer returned after %lld ms", ms);
	/* ends, but its child holds the output: the child is killed too */
	snprintf(script, sizeof(script), "sleep 30 & echo $! >%s/child; echo done", dir);
	CHECK_INT(sh(script, out, sizeof(out), 300, &ms), CAPTURE_TIMEOUT);
	CHECKF(ms < 3000, "a helper whose child holds its output returned after %lld ms", ms);
	CHECK(gone("child"));
	/* closes its output and lives on */
	snprintf(script, sizeof(script), "echo $$ >%s/closed; exec >&-; exec sleep 30", dir);
	CHECK_INT(sh(script, out, sizeof(out), 300, &ms), CAPTURE_TIMEOUT);
	CHECKF(ms < 3000, "a helper that closed its output returned after %lld ms", ms);
	CHECK(gone("closed"));
	t_rm_rf(dir);
	free(dir);
	dir = NULL;
}

/* A supervisor blocks SIGTERM and SIGCHLD (it waits for them): a helper it
 * runs does not inherit that, a TERM ends it */
static void test_signals_unblocked(void)
{
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGCHLD);
	CHECK_INT(pthread_sigmask(SIG_BLOCK, &block, &old), 0);
	char out[64];
	long long ms;
	CHECK_INT(sh("kill -TERM $$; sleep 3; echo survived", out, sizeof(out), 2000, &ms), -1);
	CHECKF(ms < 1500, "a TERM took %lld ms", ms);
	CHECK_STR(out, "");
	CHECK_INT(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
}

T_MAIN(T(test_output_and_status), T(test_timeouts), T(test_signals_unblocked))
