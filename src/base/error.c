/*
 * error.c - the one error type of libberth: a list of problems.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "base/hugemap.h"
#include "base/internal.h"

/* Where the problems' strings are kept: chunks that are filled in turn and
 * freed with the error. Most errors hold a problem or two, in the first
 * small chunk; a stream of runs holds thousands of warnings (a MB of text
 * for 4,000 runs), which past CHUNK_HEAP bytes go to huge pages (hugemap.h),
 * not to a fresh 4 KiB page every twenty of them. */
struct chunk {
	struct chunk *next;
	size_t size; /* of the whole chunk: mapped when it is a multiple of HUGEMAP_PAGE */
	char text[];
};
#define CHUNK_FIRST ((size_t)1 << 10)
#define CHUNK_HEAP ((size_t)64 << 10) /* the largest chunk on the heap */

struct berth_error {
	size_t count, cap;
	berth_problem *items;
	int is_static;
	size_t errors; /* items of severity BERTH_ERROR */
	/* berth_error_sort: items[0, sorted) are in order, and files[0, nfiles)
	 * are their files in order of first appearance (NULL one of them), so
	 * that sorting again places only the problems added since: a stream of
	 * runs sorts its growing list once a run */
	size_t sorted, nfiles, files_cap;
	const char **files;
	struct chunk *chunks; /* the newest first */
	char *at, *end;       /* the free bytes of the newest */
};

/* Returned when even the error cannot be allocated. */
static berth_problem oom_problem = {BERTH_ENOMEM, BERTH_ERROR, NULL, 0, 0, NULL, "out of memory"};
static berth_error oom_error = {.count = 1, .cap = 1, .items = &oom_problem, .is_static = 1,
				.errors = 1};

static void chunks_free(struct chunk *c)
{
	while (c) {
		struct chunk *next = c->next;
		if (c->size % HUGEMAP_PAGE == 0)
			munmap(c, c->size);
		else
			free(c);
		c = next;
	}
}

/* n bytes for e's problems' strings: from its newest chunk, or from a new
 * one four times as large as the last (huge pages past CHUNK_HEAP). NULL
 * when there is no memory. */
static char *text_alloc(berth_error *e, size_t n)
{
	if (!e->at || (size_t)(e->end - e->at) < n) {
		size_t last = e->chunks ? e->chunks->size : 0;
		size_t size = last ? 4 * last : CHUNK_FIRST;
		if (n > SIZE_MAX / 2)
			return NULL;
		size_t need = n + offsetof(struct chunk, text);
		struct chunk *c;
		if (size > CHUNK_HEAP || need > CHUNK_HEAP) {
			size = (need + HUGEMAP_PAGE - 1) / HUGEMAP_PAGE * HUGEMAP_PAGE;
			c = hugemap(size, PROT_READ | PROT_WRITE);
			if (c == MAP_FAILED)
				return NULL;
		} else {
			while (size < need)
				size *= 2;
			if (!(c = berth_malloc(size)))
				return NULL;
		}
		c->size = size;
		c->next = e->chunks;
		e->chunks = c;
		e->at = c->text;
		e->end = (char *)c + size;
	}
	char *p = e->at;
	e->at += n;
	return p;
}

void berth_error_free(berth_error *err)
{
	if (!err || err->is_static)
		return;
	chunks_free(err->chunks);
	free(err->items);
	free(err->files);
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
	return err ? err->errors : 0;
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

/* *err, made when it is NULL; NULL when it is the static error or no
 * memory could be had. */
static berth_error *error_of(berth_error **err)
{
	if (!*err)
		*err = berth_calloc(1, sizeof(**err));
	return *err && !(*err)->is_static ? *err : NULL;
}

/* Appends p (its strings kept by e or by a chunk handed to e) to e. */
static int push(berth_error *e, const berth_problem *p)
{
	if (e->count == e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 4;
		berth_problem *items = berth_realloc(e->items, cap * sizeof(*items));
		if (!items)
			return -1;
		e->items = items;
		e->cap = cap;
	}
	e->items[e->count++] = *p;
	e->errors += p->severity == BERTH_ERROR;
	return 0;
}

/* s (n bytes, NUL added) at *at, which moves past it */
static const char *put_str(char **at, const char *s, size_t n)
{
	char *d = *at;
	memcpy(d, s, n);
	d[n] = '\0';
	*at = d + n + 1;
	return d;
}

int berth_problem_vadd(berth_error **err, berth_code code, berth_severity sev,
		       const berth_where *where, const char *fmt, va_list ap)
{
	berth_problem p = {code, sev, NULL, 0, 0, NULL, NULL};
	int ret = sev == BERTH_ERROR ? -(int)code : 0;
	char tmp[256], *big = NULL;
	const char *text = tmp;
	size_t n;
	va_list aq;

	if (!err)
		return ret;
	va_copy(aq, ap);
	if (fmt[0] == '%' && fmt[1] == 's' && !fmt[2]) {
		/* a message made by the caller (one a run: no printf) */
		text = va_arg(aq, const char *);
		if (!text)
			text = "(null)";
		n = strlen(text);
	} else {
		int len = vsnprintf(tmp, sizeof(tmp), fmt, aq);
		n = len < 0 ? 0 : (size_t)len;
		if (n >= sizeof(tmp) && (big = berth_malloc(n + 1))) {
			vsnprintf(big, n + 1, fmt, ap);
			text = big;
		}
	}
	va_end(aq);
	const char *file = where ? where->file : NULL;
	const char *path = where && where->path && where->path[0] ? where->path : NULL;
	size_t flen = file ? strlen(file) + 1 : 0, plen = path ? strlen(path) + 1 : 0;
	berth_error *e = text == tmp && n >= sizeof(tmp) ? NULL : error_of(err);
	char *at = e ? text_alloc(e, flen + plen + n + 1) : NULL;
	if (at) {
		if (where) {
			p.line = where->line;
			p.column = where->column;
		}
		if (file)
			p.file = put_str(&at, file, flen - 1);
		if (path)
			p.path = put_str(&at, path, plen - 1);
		p.message = put_str(&at, text, n);
	}
	free(big);
	if (!at || push(e, &p) < 0) {
		set_oom(err);
		return sev == BERTH_ERROR ? -BERTH_ENOMEM : 0;
	}
	return ret;
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

/* src's chunks, its problems' strings, to e (after e's newest: e keeps
 * filling its own) */
static void chunks_take(berth_error *e, berth_error *src)
{
	struct chunk **tail = e->chunks ? &e->chunks->next : &e->chunks;
	struct chunk *last = src->chunks;
	if (!last)
		return;
	while (last->next)
		last = last->next;
	last->next = *tail;
	*tail = src->chunks;
	if (!e->at) {
		e->at = src->at;
		e->end = src->end;
	}
	src->chunks = NULL;
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
	berth_error *e = *dst;
	chunks_take(e, src); /* the strings go with the problems */
	int ret = 0;
	for (size_t i = 0; i < src->count && !ret; i++)
		if (push(e, &src->items[i]) < 0)
			ret = -1;
	berth_error_free(src);
	return ret ? set_oom(dst) : 0;
}

struct sortkey {
	size_t file, index;
	const berth_problem *p;
};

/* Orders by file rank, line, column; the index keeps the order of equals. */
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

/* The rank of file f: its place among files[0, *n), where it is added when
 * it is new (files has room for it). NULL is a file of its own. */
static size_t file_rank(const char **files, size_t *n, const char *f)
{
	for (size_t i = 0; i < *n; i++)
		if (files[i] == f || (f && files[i] && strcmp(files[i], f) == 0))
			return i;
	files[*n] = f;
	return (*n)++;
}

/*
 * A stable sort of the whole list, done as one of the problems added since
 * the last sort (items[sorted, count)) merged into the sorted ones after
 * them: the same order, as a stable sort of a sorted list and what follows
 * it keeps the sorted ones first among equals. When the new ones all go
 * after the old (a stream's runs, each further down the file), only they
 * are moved. Without memory the problems stay as they were.
 */
void berth_error_sort(berth_error *err)
{
	if (!err || err->is_static || err->sorted >= err->count)
		return;
	size_t a = err->sorted, nb = err->count - a, nfiles = err->nfiles;
	if (err->files_cap < nfiles + nb) {
		const char **files = berth_realloc(err->files, (nfiles + nb) * sizeof(*files));
		if (!files)
			return;
		err->files = files;
		err->files_cap = nfiles + nb;
	}
	struct sortkey *keys = berth_malloc(nb * sizeof(*keys));
	berth_problem *items = NULL;
	if (!keys)
		return;
	for (size_t i = 0; i < nb; i++) {
		keys[i].file = file_rank(err->files, &nfiles, err->items[a + i].file);
		keys[i].index = i;
		keys[i].p = &err->items[a + i];
	}
	qsort(keys, nb, sizeof(*keys), sortkey_cmp);
	struct sortkey last = {0, 0, NULL};
	if (a) {
		size_t n = nfiles; /* the old problems' files are all there */
		last = (struct sortkey){file_rank(err->files, &n, err->items[a - 1].file), 0,
					&err->items[a - 1]};
	}
	/* equals keep the old first: compare without the index */
	if (!a || sortkey_cmp(&last, &(struct sortkey){keys[0].file, 0, keys[0].p}) <= 0) {
		if (!(items = berth_malloc(nb * sizeof(*items)))) {
			free(keys);
			return;
		}
		for (size_t i = 0; i < nb; i++)
			items[i] = *keys[i].p;
		memcpy(err->items + a, items, nb * sizeof(*items));
	} else {
		if (!(items = berth_malloc(err->count * sizeof(*items)))) {
			free(keys);
			return;
		}
		size_t i = 0, j = 0, k = 0;
		while (i < a || j < nb) {
			int old_first = j == nb;
			if (i < a && j < nb) {
				size_t n = nfiles;
				struct sortkey x = {file_rank(err->files, &n, err->items[i].file), 0,
						    &err->items[i]};
				old_first = sortkey_cmp(&x, &(struct sortkey){keys[j].file, 0, keys[j].p}) <= 0;
			}
			items[k++] = old_first ? err->items[i++] : *keys[j++].p;
		}
		free(err->items);
		err->items = items;
		err->cap = err->count;
		items = NULL;
	}
	free(items);
	free(keys);
	err->nfiles = nfiles;
	err->sorted = err->count;
}

/* Appends s (n bytes) at *o of buf (len bytes), as much as fits with the NUL;
 * *o counts what the whole text needs, as snprintf's return does. */
static void fmt_put(char *buf, size_t len, size_t *o, const char *s, size_t n)
{
	if (*o + 1 < len) {
		size_t room = len - 1 - *o;
		memcpy(buf + *o, s, n < room ? n : room);
	}
	*o += n;
}

static void fmt_uint(char *buf, size_t len, size_t *o, unsigned v)
{
	char d[16], *e = d + sizeof(d), *p = e;
	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	fmt_put(buf, len, o, p, (size_t)(e - p));
}

/* Without printf: a stream of runs formats thousands of warnings. */
size_t berth_problem_format(const berth_problem *p, char *buf, size_t len)
{
	size_t o = 0;
	if (p->file) {
		fmt_put(buf, len, &o, p->file, strlen(p->file));
		if (p->line) {
			fmt_put(buf, len, &o, ":", 1);
			fmt_uint(buf, len, &o, p->line);
			if (p->column) {
				fmt_put(buf, len, &o, ":", 1);
				fmt_uint(buf, len, &o, p->column);
			}
		}
		fmt_put(buf, len, &o, ": ", 2);
	}
	if (p->severity == BERTH_WARNING)
		fmt_put(buf, len, &o, "warning: ", 9);
	if (p->path) {
		fmt_put(buf, len, &o, p->path, strlen(p->path));
		fmt_put(buf, len, &o, ": ", 2);
	}
	if (p->message)
		fmt_put(buf, len, &o, p->message, strlen(p->message));
	if (len)
		buf[o < len ? o : len - 1] = '\0';
	return o;
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
