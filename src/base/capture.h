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
/* Runs argv (argv[0] looked up on $PATH) with stdin and stderr on /dev/null
 * and reads its stdout into out, NUL-terminated, at most cap - 1 bytes (the
 * rest is read and dropped); waits for it. The length read, or -1 when it
 * could not start or did not exit 0. */
long capture_output(char *const argv[], char *out, size_t cap);

#endif
