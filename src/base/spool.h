/*
 * spool.h - output held until it may be shown, most of it outside the heap.
 *
 * berth render prints nothing unless every run of a stream is allowed, so it
 * holds the whole output (36 MB for 10,000 runs) until the stream's end. In
 * a growing heap buffer every page of it is a fresh 4 KiB page: a fault, a
 * zeroed page and its accounting, about a tenth of render's time; in a
 * memory file (memfd) the kernel still allocates, copies and frees each
 * page, 8 % of it. A spool keeps a window of the bytes (a berth_buf that a
 * writer appends to) and copies them, each time the window fills, to an
 * anonymous mapping that asks for transparent huge pages (madvise): the
 * window stays hot in the cache and the mapping takes a fault and a clear
 * per 2 MiB. It grows by doubling, its pages moved by mremap, not copied.
 * Where the kernel gives no huge pages the mapping's pages are small, as a
 * heap's are.
 *
 * A spool is not shared between threads.
 */
#ifndef BERTH_BASE_SPOOL_H
#define BERTH_BASE_SPOOL_H

#include <stddef.h>

#include "base/internal.h"

/* The window's size: bytes past it go to the mapping at the next spool_settle. */
#define SPOOL_WINDOW (256u << 10)

typedef struct spool {
	berth_buf buf; /* the bytes not yet moved: writers append here */
	char *held;    /* the moved bytes: an anonymous mapping of room bytes */
	size_t room;   /* 0 before the first move */
	size_t moved;  /* bytes in held */
	int failed;    /* sticky: 0 or -BERTH_ENOMEM (no memory to hold the bytes) */
} spool;

#define SPOOL_INIT {BERTH_BUF_INIT, NULL, 0, 0, 0}

/* Moves the window to the mapping when it holds SPOOL_WINDOW bytes or more;
 * called between whole pieces (a run's objects). 0, or the sticky failure
 * (of the window's berth_buf, or -BERTH_ENOMEM: no mapping could be had). */
int spool_settle(spool *s);

/* Every byte, in order: written to fd (a pipe, a file, a terminal; a
 * non-blocking one is waited for), then the spool is empty. 0, or -1 with
 * errno when fd failed. The spool must not have failed. */
int spool_write(spool *s, int fd);

/* Every byte, in order, in one NUL-terminated malloc'd string (*data, *len),
 * then the spool is empty. 0, or -BERTH_ENOMEM. */
int spool_detach(spool *s, char **data, size_t *len);

/* Empties s (its mapping unmapped): it may be used again. */
void spool_release(spool *s);

#endif
