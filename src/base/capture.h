/*
 * capture.h - a helper program's output: whether a program is on $PATH, and
 * what it writes to stdout (nvidia-smi, for the GPUs a machine has and how
 * busy they are).
 */
#ifndef BERTH_BASE_CAPTURE_H
#define BERTH_BASE_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>

/* Whether an executable name is on $PATH (no process is started to find out). */
bool capture_on_path(const char *name);
#define CAPTURE_TIMEOUT (-2)

/* Runs argv (argv[0] looked up on $PATH) with stdin and stderr on /dev/null,
 * in a process group of its own with no signal blocked, and reads its stdout
 * into out, NUL-terminated, at most cap - 1 bytes (the rest is read and
 * dropped); waits for it to end, timeout_ms at most. The length read; -1 when
 * it could not start or did not exit 0; CAPTURE_TIMEOUT (out empty) when it
 * had not ended by then: it and what it started are killed (a helper that
 * hangs, as nvidia-smi does on a GPU in a bad state, hangs no caller). */
long capture_output(char *const argv[], char *out, size_t cap, int timeout_ms);

#endif
