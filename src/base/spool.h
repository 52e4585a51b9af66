/*
 * spool.h - output held until it may be shown, most of it outside the heap.
 *
 * berth render prints nothing unless every run of a stream is allowed, so it
 * holds the whole output (36 MB for 10,000 runs) until the stream's end. In
 * a growing heap buffer every page of it is a fresh page: a fault, a zeroed
 * page and its accounting, about a tenth of render's time. A spool keeps a
 * window of the bytes (a berth_buf that a writer appends to) and moves them,
 * each time the window fills, to an unnamed memory file (memfd_create): the
 * window stays hot in the cache and the file's pages are written whole
 * (nothing zeroed, no fault). Where no such file can be made, the bytes stay
 * in the window, which then grows as a berth_buf does.
 *
 * A spool is not shared between threads.
 */
#ifndef BERTH_BASE_SPOOL_H
#define BERTH_BASE_SPOOL_H

#include <stddef.h>

#include "base/internal.h"

/* The window's size: bytes past it go to the file at the next spool_settle. */
#define SPOOL_WINDOW (256u << 10)

typedef struct spool {
	berth_buf buf; /* the bytes not yet moved: writers append here */
	int fd;        /* the file, -1 before the first move, -2 when none can be made */
	size_t moved;  /* bytes in the file */
	int failed;    /* sticky: 0 or -BERTH_ENOMEM (the file could not take the bytes) */
} spool;

#define SPOOL_INIT {BERTH_BUF_INIT, -1, 0, 0}

/* Moves the window to the file when it holds SPOOL_WINDOW bytes or more;
 * called between whole pieces (a run's objects). 0, or the sticky failure
 * (of the window's berth_buf, or of the file). */
int spool_settle(spool *s);

/* Every byte, in order: written to fd (a pipe, a file, a terminal; a
 * non-blocking one is waited for), then the spool is empty. 0, or -1 with
 * errno when fd failed. The spool must not have failed. */
int spool_write(spool *s, int fd);

/* Every byte, in order, in one NUL-terminated malloc'd string (*data, *len),
 * then the spool is empty. 0, or -BERTH_ENOMEM. */
int spool_detach(spool *s, char **data, size_t *len);

/* Empties s (its file closed): it may be used again. */
void spool_release(spool *s);

#endif
