/*
 * spool.c - output held until it may be shown, most of it outside the heap
 * (spool.h).
 */
#define _GNU_SOURCE /* memfd_create */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
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

int spool_settle(spool *s)
{
	if (s->failed || s->buf.failed)
		return s->failed ? s->failed : s->buf.failed;
	if (s->buf.len < SPOOL_WINDOW || s->fd == -2)
		return 0;
	if (s->fd == -1 && (s->fd = memfd_create("berth-spool", MFD_CLOEXEC)) < 0) {
		s->fd = -2; /* no such file here: the window holds everything */
		return 0;
	}
	if (write_all(s->fd, s->buf.data, s->buf.len) < 0)
		return s->failed = -BERTH_ENOMEM; /* the file's pages are memory too */
	s->moved += s->buf.len;
	s->buf.len = 0;
	s->buf.data[0] = '\0';
	return 0;
}

/* The file's bytes to fd: a character device (a terminal, /dev/null) is
 * written from a mapping of the file, which reads only what the device
 * takes (/dev/null nothing); anything else by sendfile(2), which copies in
 * the kernel (a pipe takes the pages by reference); where neither can be
 * had, read and write. */
static int copy_file(spool *s, int fd)
{
	off_t off = 0;
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode)) {
		void *map = mmap(NULL, s->moved, PROT_READ, MAP_SHARED, s->fd, 0);
		if (map != MAP_FAILED) {
			int ret = write_all(fd, map, s->moved);
			munmap(map, s->moved);
			return ret;
		}
	}
	while ((size_t)off < s->moved) {
		ssize_t n = sendfile(fd, s->fd, &off, s->moved - (size_t)off);
		if (n > 0)
			continue;
		if (n < 0 && (errno == EINVAL || errno == ENOSYS))
			break; /* fd takes no sendfile: the plain way */
		if (n < 0 && again(fd))
			continue;
		if (n < 0)
			return -1;
		break; /* 0: the file is shorter than moved, which pread reports */
	}
	char chunk[64 << 10];
	while ((size_t)off < s->moved) {
		size_t want = s->moved - (size_t)off < sizeof(chunk) ? s->moved - (size_t)off : sizeof(chunk);
		ssize_t r = pread(s->fd, chunk, want, off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				errno = EIO;
			return -1;
		}
		if (write_all(fd, chunk, (size_t)r) < 0)
			return -1;
		off += r;
	}
	return 0;
}

int spool_write(spool *s, int fd)
{
	int ret = 0;
	if (s->moved && copy_file(s, fd) < 0)
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
	for (size_t at = 0; at < s->moved;) {
		ssize_t r = pread(s->fd, d + at, s->moved - at, (off_t)at);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			free(d);
			spool_release(s);
			return -BERTH_ENOMEM;
		}
		at += (size_t)r;
	}
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
	if (s->fd >= 0)
		close(s->fd);
	berth_buf_release(&s->buf);
	s->fd = -1;
	s->moved = 0;
	s->failed = 0;
}
