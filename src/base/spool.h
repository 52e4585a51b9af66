/*
 * spool.h - output held until it may be shown, most of it outside the heap.
 *
 * berth render prints nothing unless every run of a stream is allowed, so it
 * holds the whole output (36 MB for 10,000 runs) until the stream's end. In
 * a growing heap buffer every page of it is a fresh 4 KiB page: a fault, a
 * zeroed page and its accounting, about a tenth of render's time; in a
 * memory file (memfd) the kernel still allocates, copies and frees each
 * page, 8 % of it. A spool is a berth_buf that writers append to: on the
 * heap while it is small (a server's one run), and past SPOOL_WINDOW in an
 * anonymous mapping on 2 MiB boundaries that asks for transparent huge
 * pages, made a huge page at a time ahead of the writer (one madvise call).
 * The mapping grows by doubling, its pages moved whole by mremap, not
 * copied. Huge pages were 13 % of render's time on a VM whose page faults
 * cost 11 to 18 us (docs/performance.md); where the kernel has them off,
 * the pages are small and the rest is the same.
 *
 * A spool is not shared between threads.
 */
#ifndef BERTH_BASE_SPOOL_H
#define BERTH_BASE_SPOOL_H

#include <stddef.h>

#include "base/internal.h"

/* The most bytes held on the heap: past it, the bytes go to a mapping. */
#define SPOOL_WINDOW (256u << 10)

typedef struct spool {
	berth_buf buf; /* every byte: writers append here (its grow is spool_grow);
	                  buf.failed: -BERTH_ENOMEM when no memory or mapping could be had */
	size_t room;   /* the mapping's size; 0 while buf is on the heap */
} spool;

/* buf's grow (internal.h): the heap's way up to SPOOL_WINDOW, then the mapping */
int spool_grow(berth_buf *b, size_t need);

#define SPOOL_INIT {{NULL, 0, 0, 0, 0, spool_grow}, 0}

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
