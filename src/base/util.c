/*
 * util.c - memory, the capped growable buffer, and the test builds' pause (berth_test_pause).
 */
#include <stdio.h>
#include <stdarg.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include "berth/node.h"
#include "base/internal.h"

long berth_fail_alloc_after = 0;

int berth_injected_failure(void)
{
#ifdef BERTH_FAULT_INJECTION
	if (berth_fail_alloc_after > 0 && --berth_fail_alloc_after == 0)
		return 1;
#endif
	return 0;
}

void *berth_malloc(size_t n)
{
	return berth_injected_failure() ? NULL : malloc(n ? n : 1);
}

void *berth_calloc(size_t n, size_t size)
{
	return berth_injected_failure() ? NULL : calloc(n ? n : 1, size ? size : 1);
}

void *berth_realloc(void *p, size_t n)
{
	return berth_injected_failure() ? NULL : realloc(p, n ? n : 1);
}

char *berth_strndup(const char *s, size_t n)
{
	char *d = berth_malloc(n + 1);
	if (!d)
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *berth_strdup(const char *s)
{
	return berth_strndup(s, strlen(s));
}

char *berth_join(char *buf, size_t n, ...)
{
	va_list ap;
	size_t o = 0;
	const char *s;
	if (!n)
		return buf;
	va_start(ap, n);
	while ((s = va_arg(ap, const char *)) != NULL) {
		size_t m = strlen(s);
		if (m > n - 1 - o)
			m = n - 1 - o;
		memcpy(buf + o, s, m);
		o += m;
	}
	va_end(ap);
	buf[o] = '\0';
	return buf;
}

static int buf_grow(berth_buf *b, size_t extra)
{
	if (b->failed)
		return b->failed;
	if (extra > SIZE_MAX - b->len - 1 || (b->max && b->len + extra > b->max))
		return b->failed = -BERTH_ETOOBIG;
	size_t need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	int by = b->grow ? b->grow(b, need) : 1;
	if (by <= 0)
		return by ? (b->failed = by) : 0;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	char *d = berth_realloc(b->data, cap);
	if (!d)
		return b->failed = -BERTH_ENOMEM;
	b->data = d;
	b->cap = cap;
	return 0;
}

int berth_buf_append(berth_buf *b, const void *data, size_t len)
{
	/* the common case, room enough, without buf_grow's checks */
	if (len < b->cap - b->len && !b->max && !b->failed) {
		if (len)
			memcpy(b->data + b->len, data, len);
		b->len += len;
		b->data[b->len] = '\0';
		return 0;
	}
	int ret = buf_grow(b, len);
	if (ret)
		return ret;
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

int berth_buf_reserve(berth_buf *b, size_t extra)
{
	return buf_grow(b, extra);
}

int berth_buf_puts(berth_buf *b, const char *s)
{
	return berth_buf_append(b, s, strlen(s));
}

int berth_buf_vprintf(berth_buf *b, const char *fmt, va_list ap)
{
	char tmp[256];
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	int ret = 0;
	if (n < 0)
		ret = b->failed = b->failed ? b->failed : -BERTH_EINTERNAL;
	else if ((size_t)n < sizeof(tmp))
		ret = berth_buf_append(b, tmp, (size_t)n);
	else if (!(ret = buf_grow(b, (size_t)n))) {
		vsnprintf(b->data + b->len, (size_t)n + 1, fmt, again);
		b->len += (size_t)n;
	}
	va_end(again);
	return ret;
}

int berth_buf_printf(berth_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int ret = berth_buf_vprintf(b, fmt, ap);
	va_end(ap);
	return ret;
}

char *berth_buf_detach(berth_buf *b)
{
	char *d;
	if (b->failed) {
		berth_buf_release(b);
		return NULL;
	}
	d = b->data ? b->data : berth_strdup("");
	b->data = NULL;
	b->len = b->cap = 0;
	return d;
}

void berth_buf_release(berth_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
	b->failed = 0;
}

size_t berth_utf8_len(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t k;
	unsigned min;
	if (!n)
		return 0;
	if (s[0] < 0x80)
		return s[0] ? 1 : 0;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		k = 2, min = 0x80;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		k = 3, min = 0x800;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		k = 4, min = 0x10000;
	else
		return 0;
	if (n < k)
		return 0;
	unsigned cp = s[0] & (0x7f >> k);
	for (size_t i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	return cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ? 0 : k;
}

void berth_test_note(const char *name, const char *line)
{
#ifdef BERTH_FAULT_INJECTION
	const char *path = getenv(name);
	int fd = path ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600) : -1;
	if (fd >= 0) {
		dprintf(fd, "%s\n", line);
		close(fd);
	}
#else
	(void)name;
	(void)line;
#endif
}

void berth_test_pause(const char *name)
{
#ifdef BERTH_FAULT_INJECTION
	const char *v = getenv(name);
	long ms = v ? strtol(v, NULL, 10) : 0;
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	if (ms > 0)
		nanosleep(&ts, NULL);
#else
	(void)name;
#endif
}
