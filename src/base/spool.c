/*
 * spool.c - output held until it may be shown, most of it outside the heap
 * (spool.h).
 */
#define _GNU_SOURCE /* mremap */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/hugemap.h"
#include "base/spool.h"

/* After a write to fd that failed: 1 to try again (EINTR; a full
 * non-blocking fd, waited for), else 0 */
static int again(int fd)
{
	if (errno == EINTR)
		return 1;
	if (errno != EAGAIN && errno != EWOULDBLOCK)
		return 0;
	struct pollfd pfd = {fd, POLLOUT, 0};
	return poll(&pfd, 1, -1) >= 0 || errno == EINTR;
}

/* write(2) of all n bytes */
static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && again(fd))
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The mapping's pages are made a huge page at a time (hugemap.h), ahead of
 * the writer (MADV_POPULATE_WRITE: one call, not a fault a page where huge
 * pages are off); buf.cap is where the made pages end. */
#define SPOOL_STEP HUGEMAP_PAGE

/* The mapping of room bytes at p, which holds old bytes (0: a new one),
 * moved to a 2 MiB boundary when it grows, its pages moved whole (mremap
 * onto a reserved place: where it chooses, the huge pages would be split);
 * MAP_FAILED, and p as it was, when no place could be had. */
static char *map_room(char *p, size_t old, size_t room)
{
	if (!old)
		return hugemap(room, PROT_READ | PROT_WRITE);
	char *at = hugemap(room, PROT_NONE);
	if (at == MAP_FAILED)
		return at;
	char *to = mremap(p, old, room, MREMAP_MAYMOVE | MREMAP_FIXED, at);
	if (to == MAP_FAILED)
		return to; /* the reserved place is not unmapped: mremap unmaps it before
			      most of its failures, and another thread may have mapped
			      something there since */
	/* the rights the grown part has, said again: nothing for the kernel,
	 * but valgrind's memcheck gives that part the rights of whatever it
	 * finds where the old mapping was, unwritable (make valgrind failed) */
	mprotect(to + old, room - old, PROT_READ | PROT_WRITE);
	hugemap_advise(to, room);
	return to;
}

/* The window's berth_buf grow (internal.h): on the heap up to SPOOL_WINDOW
 * (1: realloc'd as usual); past it, an anonymous mapping (8 MiB at first,
 * then twice as large, its pages moved by mremap, not its bytes) that takes
 * the heap's bytes once, its pages made a step ahead of the writer. */
int spool_grow(berth_buf *b, size_t need)
{
	spool *s = (spool *)b; /* the buffer is a spool's first member */
	if (!s->room && need <= SPOOL_WINDOW)
		return 1;
	size_t made = s->room ? b->cap : 0;
	char *heap = NULL;
	if (need > s->room) {
		size_t room = s->room ? 2 * s->room : 4 * SPOOL_STEP;
		while (room < need) {
			if (room > SIZE_MAX / 4)
				return -BERTH_ENOMEM;
			room *= 2;
		}
		char *p = map_room(s->room ? b->data : NULL, s->room, room);
		if (p == MAP_FAILED)
			return -BERTH_ENOMEM;
		if (!s->room)
			heap = b->data;
		b->data = p;
		s->room = room;
	}
	size_t end = (need + SPOOL_STEP - 1) / SPOOL_STEP * SPOOL_STEP;
	if (end > s->room)
		end = s->room;
	if (end > made) /* where the kernel cannot, each page is made at its first write */
		madvise(b->data + made, end - made, MADV_POPULATE_WRITE);
	b->cap = end > made ? end : made;
	if (heap) {
		if (b->len)
			memcpy(b->data, heap, b->len + 1);
		free(heap);
	}
	return 0;
}

int spool_write(spool *s, int fd)
{
	int ret = 0;
	if (s->buf.len && write_all(fd, s->buf.data, s->buf.len) < 0)
		ret = -1;
	int saved = errno;
	spool_release(s);
	errno = saved;
	return ret;
}

int spool_detach(spool *s, char **data, size_t *len)
{
	*data = NULL;
	*len = 0;
	int ret = s->buf.failed;
	if (!ret && !s->room) { /* on the heap: handed over as it is */
		*len = s->buf.len;
		*data = berth_buf_detach(&s->buf);
		ret = *data ? 0 : -BERTH_ENOMEM;
	} else if (!ret) {
		char *d = berth_malloc(s->buf.len + 1);
		if (d) {
			memcpy(d, s->buf.data, s->buf.len + 1);
			*data = d;
			*len = s->buf.len;
		}
		ret = d ? 0 : -BERTH_ENOMEM;
	}
	spool_release(s);
	return ret;
}

void spool_release(spool *s)
{
	if (s->room)
		munmap(s->buf.data, s->room);
	else
		berth_buf_release(&s->buf);
	*s = (spool)SPOOL_INIT;
}
