/*
 * error.c - the one error type of libberth: a list of problems.
 */
#include <stdio.h>
#include <string.h>

#include "base/internal.h"

struct berth_error {
	size_t count, cap;
	berth_problem *items;
	int is_static;
};

/* Returned when even the error cannot be allocated. */
static berth_problem oom_problem = {BERTH_ENOMEM, BERTH_ERROR, NULL, 0, 0, NULL, "out of memory"};
static berth_error oom_error = {1, 1, &oom_problem, 1};

static void problem_clear(berth_problem *p)
{
	free((char *)p->file);
	free((char *)p->path);
	free((char *)p->message);
}

void berth_error_free(berth_error *err)
{
	if (!err || err->is_static)
		return;
	for (size_t i = 0; i < err->count; i++)
		problem_clear(&err->items[i]);
	free(err->items);
	free(err);
}

berth_code berth_error_code(const berth_error *err)
{
	if (!err)
		return BERTH_OK;
	for (size_t i = 0; i < err->count; i++)
		if (err->items[i].severity == BERTH_ERROR)
			return err->items[i].code;
	return BERTH_OK;
}

size_t berth_error_count(const berth_error *err)
{
	return err ? err->count : 0;
}

size_t berth_error_errors(const berth_error *err)
{
	size_t n = 0;
	for (size_t i = 0; err && i < err->count; i++)
		n += err->items[i].severity == BERTH_ERROR;
	return n;
}

const berth_problem *berth_error_get(const berth_error *err, size_t i)
{
	return err && i < err->count ? &err->items[i] : NULL;
}

static int set_oom(berth_error **err)
{
	berth_error_free(*err);
	*err = &oom_error;
	return -BERTH_ENOMEM;
}

static int push(berth_error **err, berth_problem *p)
{
	berth_error *e = *err;
	if (!e) {
		e = berth_calloc(1, sizeof(*e));
		if (!e)
			return -1;
		*err = e;
	}
	if (e->is_static)
		return -1;
	if (e->count == e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 4;
		berth_problem *items = berth_realloc(e->items, cap * sizeof(*items));
		if (!items)
			return -1;
		e->items = items;
		e->cap = cap;
	}
	e->items[e->count++] = *p;
	return 0;
}

int berth_problem_vadd(berth_error **err, berth_code code, berth_severity sev,
		       const berth_where *where, const char *fmt, va_list ap)
{
	berth_problem p = {code, sev, NULL, 0, 0, NULL, NULL};
	int ret = sev == BERTH_ERROR ? -(int)code : 0;
	berth_buf msg = BERTH_BUF_INIT;
	va_list aq;

	if (!err)
		return ret;
	if (where) {
		p.line = where->line;
		p.column = where->column;
		if (where->file && !(p.file = berth_strdup(where->file)))
			goto oom;
		if (where->path && where->path[0] && !(p.path = berth_strdup(where->path)))
			goto oom;
	}
	va_copy(aq, ap);
	{
		char tmp[256];
		int n = vsnprintf(tmp, sizeof(tmp), fmt, aq);
		va_end(aq);
		if (n < 0)
			n = 0;
		if ((size_t)n < sizeof(tmp)) {
			berth_buf_append(&msg, tmp, (size_t)n);
		} else {
			char *big = berth_malloc((size_t)n + 1);
			if (big) {
				vsnprintf(big, (size_t)n + 1, fmt, ap);
				berth_buf_append(&msg, big, (size_t)n);
				free(big);
			} else {
				msg.failed = -BERTH_ENOMEM;
			}
		}
	}
	if (msg.failed || !(p.message = berth_buf_detach(&msg)))
		goto oom;
	if (push(err, &p) < 0)
		goto oom;
	return ret;
oom:
	berth_buf_release(&msg);
	problem_clear(&p);
	set_oom(err);
	return sev == BERTH_ERROR ? -BERTH_ENOMEM : 0;
}

int berth_problem_add(berth_error **err, berth_code code, berth_severity sev,
		      const berth_where *where, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int ret = berth_problem_vadd(err, code, sev, where, fmt, ap);
	va_end(ap);
	return ret;
}

int berth_fail(berth_error **err, berth_code code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int ret = berth_problem_vadd(err, code, BERTH_ERROR, NULL, fmt, ap);
	va_end(ap);
	return ret;
}

int berth_error_move(berth_error **dst, berth_error *src)
{
	if (!src)
		return 0;
	if (src->is_static || (*dst && (*dst)->is_static)) {
		berth_error_free(src);
		return set_oom(dst);
	}
	if (!*dst) {
		*dst = src;
		return 0;
	}
	for (size_t i = 0; i < src->count; i++) {
		if (push(dst, &src->items[i]) < 0) {
			/* items moved so far belong to dst; free the rest */
			for (size_t j = i; j < src->count; j++)
				problem_clear(&src->items[j]);
			free(src->items);
			free(src);
			return set_oom(dst);
		}
	}
	free(src->items);
	free(src);
	return 0;
}

struct sortkey {
	size_t file, index;
	const berth_problem *p;
};

static int sortkey_cmp(const void *a, const void *b)
{
	const struct sortkey *x = a, *y = b;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	if (x->p->line != y->p->line)
		return x->p->line < y->p->line ? -1 : 1;
	if (x->p->column != y->p->column)
		return x->p->column < y->p->column ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

void berth_error_sort(berth_error *err)
{
	struct sortkey *keys;
	berth_problem *items;
	if (!err || err->is_static || err->count < 2)
		return;
	keys = berth_malloc(err->count * sizeof(*keys));
	items = berth_malloc(err->count * sizeof(*items));
	if (!keys || !items) {
		free(keys);
		free(items);
		return; /* unsorted is still correct */
	}
	for (size_t i = 0; i < err->count; i++) {
		const char *f = err->items[i].file;
		size_t first = i;
		/* a file's rank is the index of its first problem */
		for (size_t j = 0; j < i; j++)
			if ((f == NULL) == (err->items[j].file == NULL) &&
			    (!f || strcmp(f, err->items[j].file) == 0)) {
				first = keys[j].file;
				break;
			}
		keys[i].file = first;
		keys[i].index = i;
		keys[i].p = &err->items[i];
	}
	qsort(keys, err->count, sizeof(*keys), sortkey_cmp);
	for (size_t i = 0; i < err->count; i++)
		items[i] = *keys[i].p;
	free(err->items);
	err->items = items;
	err->cap = err->count;
	free(keys);
}

size_t berth_problem_format(const berth_problem *p, char *buf, size_t len)
{
	char pos[64] = "";
	int n;

	if (p->line && p->column)
		snprintf(pos, sizeof(pos), ":%u:%u", p->line, p->column);
	else if (p->line)
		snprintf(pos, sizeof(pos), ":%u", p->line);
	n = snprintf(buf, len, "%s%s%s%s%s%s%s",
		     p->file ? p->file : "", p->file ? pos : "", p->file ? ": " : "",
		     p->severity == BERTH_WARNING ? "warning: " : "",
		     p->path ? p->path : "", p->path ? ": " : "", p->message);
	return n < 0 ? 0 : (size_t)n;
}

static const char *const code_names[] = {
	[BERTH_OK] = "ok",
	[BERTH_ENOMEM] = "out-of-memory",
	[BERTH_EIO] = "io",
	[BERTH_ESYNTAX] = "syntax",
	[BERTH_EUNKNOWN] = "unknown-key",
	[BERTH_ETYPE] = "type",
	[BERTH_EQUANTITY] = "quantity",
	[BERTH_ERANGE] = "range",
	[BERTH_EINVALID] = "invalid",
	[BERTH_EMISSING] = "missing",
	[BERTH_EDUPLICATE] = "duplicate",
	[BERTH_ETOOBIG] = "too-big",
	[BERTH_EPOLICY] = "policy",
	[BERTH_EARG] = "usage",
	[BERTH_EINTERNAL] = "internal",
	[BERTH_ENOTFOUND] = "not-found",
	[BERTH_ECONFLICT] = "conflict",
	[BERTH_EAUTH] = "unauthorized",
	[BERTH_EFORBIDDEN] = "forbidden",
	[BERTH_ENOSPC] = "insufficient-storage",
	[BERTH_ETIMEOUT] = "timeout",
	[BERTH_EGONE] = "gone",
};

const char *berth_code_name(berth_code code)
{
	if ((size_t)code < BERTH_ARRAY_SIZE(code_names) && code_names[code])
		return code_names[code];
	return "unknown";
}

/* The one place where codes become exit and HTTP statuses. */
static int is_input_code(berth_code code)
{
	switch (code) {
	case BERTH_ESYNTAX: case BERTH_EUNKNOWN: case BERTH_ETYPE:
	case BERTH_EQUANTITY: case BERTH_ERANGE: case BERTH_EINVALID:
	case BERTH_EMISSING: case BERTH_EDUPLICATE: case BERTH_ETOOBIG:
	case BERTH_EPOLICY: case BERTH_EARG: case BERTH_ENOTFOUND:
		return 1;
	default:
		return 0;
	}
}

int berth_code_exit_status(berth_code code)
{
	if (code == BERTH_OK)
		return 0;
	return is_input_code(code) ? 2 : 1;
}

int berth_code_http_status(berth_code code)
{
	switch (code) {
	case BERTH_OK: return 200;
	case BERTH_ETOOBIG: return 413;
	case BERTH_EARG: return 400;
	case BERTH_EPOLICY: return 422;
	case BERTH_ENOTFOUND: return 404;
	case BERTH_ECONFLICT: return 409;
	case BERTH_EAUTH: return 401;
	case BERTH_EFORBIDDEN: return 403;
	case BERTH_ENOSPC: return 507;
	case BERTH_ETIMEOUT: return 504;
	case BERTH_EGONE: return 410;
	default: return is_input_code(code) ? 422 : 500;
	}
}
