/*
 * selector.c - label selectors (selector.h): kubectl's equality-based terms.
 */
#include <stdlib.h>
#include <string.h>

#include "base/internal.h"
#include "base/names.h"
#include "base/selector.h"

static const char *trim(const char *s, size_t *n)
{
	while (*n && (*s == ' ' || *s == '\t'))
		s++, (*n)--;
	while (*n && (s[*n - 1] == ' ' || s[*n - 1] == '\t'))
		(*n)--;
	return s;
}

/* ",key=" or ",key=value," (value NULL: the first) */
static char *needle(const char *key, const char *value)
{
	berth_buf b = BERTH_BUF_INIT;
	berth_buf_printf(&b, ",%s=", key);
	if (value)
		berth_buf_printf(&b, "%s,", value);
	if (b.failed) {
		berth_buf_release(&b);
		return NULL;
	}
	return berth_buf_detach(&b);
}

/* One term of text (t, n bytes, trimmed) into out. */
static int term(const char *text, const char *t, size_t n, selector_term *out, berth_error **err)
{
	char key[320], value[80];
	const char *op = memchr(t, '=', n), *why;
	size_t kn = op ? (size_t)(op - t) : n, skip = 1;
	out->negate = false;
	if (!op && n && t[0] == '!') {
		out->negate = true;
		t++, n--, kn--;
	} else if (op && kn && op[-1] == '!') {
		out->negate = true;
		kn--;
	} else if (op && (size_t)(op - t) + 1 < n && op[1] == '=')
		skip = 2;
	const char *k = trim(t, &kn);
	if (!op && (memchr(k, '(', kn) || memchr(k, ' ', kn)))
		return berth_fail(err, BERTH_EARG, "label selector \"%s\": \"%.*s\" is not a term: "
				  "only equality-based ones are read (key=value, key!=value, key, !key), "
				  "not set-based ones (in, notin)", text, (int)n, t);
	if (kn >= sizeof(key))
		return berth_fail(err, BERTH_EARG, "label selector \"%s\": the key \"%.40s...\" is too long",
				  text, k);
	memcpy(key, k, kn);
	key[kn] = 0;
	if ((why = berth_check_qualified_name(key)))
		return berth_fail(err, BERTH_EARG, "label selector \"%s\": the key \"%s\" %s", text, key,
				  why);
	if (!op)
		return (out->needle = needle(key, NULL)) ? 0 : berth_fail(err, BERTH_ENOMEM, "out of memory");
	const char *v = op + skip;
	size_t vn = n - (size_t)(v - t);
	v = trim(v, &vn);
	if (vn >= sizeof(value) || memchr(v, '=', vn) || memchr(v, '!', vn))
		return berth_fail(err, BERTH_EARG, "label selector \"%s\": \"%.*s\" is not a label value",
				  text, (int)vn, v);
	memcpy(value, v, vn);
	value[vn] = 0;
	if (*value && (why = berth_check_label_value(value)))
		return berth_fail(err, BERTH_EARG, "label selector \"%s\": the value \"%s\" %s", text,
				  value, why);
	out->needle = needle(key, value);
	return out->needle ? 0 : berth_fail(err, BERTH_ENOMEM, "out of memory");
}

int selector_parse(const char *text, label_selector *out, berth_error **err)
{
	memset(out, 0, sizeof(*out));
	if (!text || !*text)
		return 0;
	if (strlen(text) > SELECTOR_TEXT_MAX)
		return berth_fail(err, BERTH_EARG, "a label selector is at most %d bytes",
				  SELECTOR_TEXT_MAX);
	for (const char *p = text;; p++) {
		size_t n = strcspn(p, ",");
		const char *t = trim(p, &n);
		if (!n)
			return berth_fail(err, BERTH_EARG, "label selector \"%s\": an empty term", text);
		if (out->n == SELECTOR_TERMS_MAX)
			return berth_fail(err, BERTH_EARG, "label selector \"%s\": more than %d terms", text,
					  SELECTOR_TERMS_MAX);
		int rc = term(text, t, n, &out->terms[out->n], err);
		if (rc)
			return rc;
		out->n++;
		p += strcspn(p, ",");
		if (!*p)
			return 0;
	}
}

void selector_release(label_selector *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->terms[i].needle);
	s->n = 0;
}
