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

/* The mapping's pages are huge (2 MiB, transparent) where the kernel gives
 * them to a region that asks: one fault and one clear per 2 MiB, not per
 * 4 KiB. */
#define HUGE_PAGE ((size_t)2 << 20)

/* n bytes of fresh anonymous memory at a HUGE_PAGE boundary, asking for
 * huge pages; MAP_FAILED when none can be had. */
static char *map_aligned(size_t n)
{
	char *p = mmap(NULL, n + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return MAP_FAILED;
	size_t head = (HUGE_PAGE - (uintptr_t)p % HUGE_PAGE) % HUGE_PAGE;
	if (head)
		munmap(p, head);
	munmap(p + head + n, HUGE_PAGE - head);
	p += head;
	madvise(p, n, MADV_HUGEPAGE); /* advice: without it the pages are small */
	return p;
}

/* The window's berth_buf grow (internal.h): on the heap up to SPOOL_WINDOW
 * (1: realloc'd as usual); past it, a mapping twice as large as the last
 * (8 MiB at first), at a huge page's boundary, that takes the bytes: the
 * heap's by a copy, once; an old mapping's by mremap, its pages moved, not
 * copied. */
int spool_grow(berth_buf *b, size_t need)
{
	spool *s = (spool *)b; /* the window is a spool's first member */
	if (!s->room && need <= SPOOL_WINDOW)
		return 1;
	size_t room = s->room ? s->room : 4 * HUGE_PAGE;
	while (room < need) {
		if (room > SIZE_MAX / 4)
			return -BERTH_ENOMEM;
		room *= 2;
	}
	char *p = map_aligned(room);
	if (p == MAP_FAILED)
		return -BERTH_ENOMEM;
	if (s->room && mremap(b->data, s->room, s->room, MREMAP_MAYMOVE | MREMAP_FIXED, p) == MAP_FAILED) {
		munmap(p, room);
		return -BERTH_ENOMEM;
	}
	if (!s->room) {
		if (b->len)
			memcpy(p, b->data, b->len + 1);
		free(b->data);
	}
	b->data = p;
	b->cap = s->room = room;
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
