/*
 * sbuf.c - the server's growable string (server.h): what the answers are
 * written into, JSON strings included. A failed allocation is sticky, as
 * with berth_buf: the writer checks once, at the end.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"

void sb_put(sbuf *b, const char *s, size_t n)
{
	if (b->failed)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *grown = realloc(b->data, cap);
		if (!grown) {
			b->failed = true;
			return;
		}
		b->data = grown;
		b->cap = cap;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = 0;
}

void sb_puts(sbuf *b, const char *s)
{
	sb_put(b, s, strlen(s));
}

void sb_printf(sbuf *b, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->failed = true;
		return;
	}
	if ((size_t)n < sizeof(small)) {
		sb_put(b, small, (size_t)n);
		return;
	}
	char *big = malloc((size_t)n + 1);
	if (!big) {
		b->failed = true;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb_put(b, big, (size_t)n);
	free(big);
}

void sb_json(sbuf *b, const char *s)
{
	if (!s) {
		sb_puts(b, "null");
		return;
	}
	sb_put(b, "\"", 1);
	size_t left = strlen(s);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++, left--) {
		/* JSON is UTF-8: a byte that is not (a path parameter, say) is U+FFFD */
		size_t k = *p < 0x80 ? 1 : berth_utf8_len((const char *)p, left);
		if (!k) {
			sb_puts(b, "\\ufffd");
			continue;
		}
		if (k > 1) {
			sb_put(b, (const char *)p, k);
			p += k - 1;
			left -= k - 1;
			continue;
		}
		if (*p == '"' || *p == '\\') {
			char e[2] = {'\\', (char)*p};
			sb_put(b, e, 2);
		} else if (*p == '\n')
			sb_puts(b, "\\n");
		else if (*p == '\t')
			sb_puts(b, "\\t");
		else if (*p == '\r')
			sb_puts(b, "\\r");
		else if (*p < 0x20 || *p == 0x7f)
			sb_printf(b, "\\u%04x", *p);
		else
			sb_put(b, (const char *)p, 1);
	}
	sb_put(b, "\"", 1);
}

void sb_free(sbuf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}
