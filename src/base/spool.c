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

/* Room for need bytes in the mapping: a new one twice as large, at a huge
 * page's boundary, takes the old one's pages (mremap moves them, nothing is
 * copied). 0, or -1 when no memory can be had. */
static int grow(spool *s, size_t need)
{
	size_t room = s->room ? s->room : 4 * HUGE_PAGE;
	while (room < need) {
		if (room > SIZE_MAX / 2)
			return -1;
		room *= 2;
	}
	char *p = map_aligned(room);
	if (p == MAP_FAILED)
		return -1;
	if (s->room && mremap(s->held, s->room, s->room, MREMAP_MAYMOVE | MREMAP_FIXED, p) == MAP_FAILED) {
		munmap(p, room);
		return -1;
	}
	s->held = p;
	s->room = room;
	return 0;
}

int spool_settle(spool *s)
{
	if (s->failed || s->buf.failed)
		return s->failed ? s->failed : s->buf.failed;
	if (s->buf.len < SPOOL_WINDOW)
		return 0;
	if (s->buf.len > SIZE_MAX - s->moved ||
	    (s->moved + s->buf.len > s->room && grow(s, s->moved + s->buf.len) < 0))
		return s->failed = -BERTH_ENOMEM;
	memcpy(s->held + s->moved, s->buf.data, s->buf.len);
	s->moved += s->buf.len;
	s->buf.len = 0;
	s->buf.data[0] = '\0';
	return 0;
}

int spool_write(spool *s, int fd)
{
	int ret = 0;
	if (s->moved && write_all(fd, s->held, s->moved) < 0)
		ret = -1;
	if (!ret && s->buf.len && write_all(fd, s->buf.data, s->buf.len) < 0)
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
	if (s->failed || s->buf.failed) {
		int ret = s->failed ? s->failed : s->buf.failed;
		spool_release(s);
		return ret;
	}
	size_t n = s->moved + s->buf.len;
	char *d = berth_malloc(n + 1);
	if (!d) {
		spool_release(s);
		return -BERTH_ENOMEM;
	}
	if (s->moved)
		memcpy(d, s->held, s->moved);
	if (s->buf.len)
		memcpy(d + s->moved, s->buf.data, s->buf.len);
	d[n] = '\0';
	*data = d;
	*len = n;
	spool_release(s);
	return 0;
}

void spool_release(spool *s)
{
	if (s->room)
		munmap(s->held, s->room);
	berth_buf_release(&s->buf);
	s->held = NULL;
	s->room = 0;
	s->moved = 0;
	s->failed = 0;
}
