/*
 * internal.h - helpers shared by the files of libberth; not installed.
 */
#ifndef BERTH_INTERNAL_H
#define BERTH_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "berth/error.h"

#define BERTH_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define BERTH_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define BERTH_UNUSED __attribute__((unused))

/* ---- problems ---------------------------------------------------------- */

/* Where a problem is: file, 1-based line and column, key path. */
typedef struct berth_where {
	const char *file;
	unsigned line, column;
	const char *path;
} berth_where;

/*
 * Appends a problem to *err (creating it). Returns -code for an error and 0
 * for a warning, so that `return berth_fail(...)` reads naturally. On
 * allocation failure *err becomes the static out-of-memory error.
 */
int berth_problem_add(berth_error **err, berth_code code, berth_severity sev,
		      const berth_where *where, const char *fmt, ...) BERTH_PRINTF(5, 6);
int berth_problem_vadd(berth_error **err, berth_code code, berth_severity sev,
		       const berth_where *where, const char *fmt, va_list ap);

/* An error with no position. */
int berth_fail(berth_error **err, berth_code code, const char *fmt, ...) BERTH_PRINTF(3, 4);

/* Moves every problem of src to the end of *dst; frees src. */
int berth_error_move(berth_error **dst, berth_error *src);

/* ---- growable string with a size cap (git strbuf, curl dynbuf) -------- */

typedef struct berth_buf {
	char *data;    /* NUL-terminated when len > 0 or after any append */
	size_t len;
	size_t cap;
	size_t max;    /* 0: no cap */
	int failed;    /* sticky: 0, -BERTH_ENOMEM or -BERTH_ETOOBIG */
	/* NULL, or who makes room for need bytes (the NUL counted) when data is
	 * full: 0 with data and cap set, 1 to have them realloc'd as usual, or a
	 * -BERTH_ code (a spool's mapping, spool.h) */
	int (*grow)(struct berth_buf *b, size_t need);
} berth_buf;

#define BERTH_BUF_INIT {NULL, 0, 0, 0, 0, NULL}

int berth_buf_append(berth_buf *b, const void *data, size_t len);
int berth_buf_puts(berth_buf *b, const char *s);
/* Room for extra bytes more (and the NUL) at data + len: 0, or b->failed. */
int berth_buf_reserve(berth_buf *b, size_t extra);
int berth_buf_printf(berth_buf *b, const char *fmt, ...) BERTH_PRINTF(2, 3);
int berth_buf_vprintf(berth_buf *b, const char *fmt, va_list ap) BERTH_PRINTF(2, 0);
/* Hands the string over (never NULL on success) and resets b. */
char *berth_buf_detach(berth_buf *b);
void berth_buf_release(berth_buf *b);

/* ---- memory ------------------------------------------------------------- */

char *berth_strndup(const char *s, size_t n);
char *berth_strdup(const char *s);
/* The strings after n, up to a NULL, one after the other in buf (n bytes:
 * cut to fit, NUL-terminated); returns buf. What a run's messages are made
 * of, without printf's parsing of a format. */
char *berth_join(char *buf, size_t n, ...) __attribute__((sentinel));

/* Fault injection for tests: when set > 0, the n-th next allocation made
 * through berth_malloc (or a mapping through hugemap) fails. Only in test
 * builds (BERTH_FAULT_INJECTION); berth_injected_failure says whether this
 * allocation is the one, and counts it. */
void *berth_malloc(size_t n);
void *berth_calloc(size_t n, size_t size);
void *berth_realloc(void *p, size_t n);
extern long berth_fail_alloc_after;
int berth_injected_failure(void);
/* Tests: sleeps as many milliseconds as the environment variable name says
 * (a slow step, for a race to be seen). Test builds only: elsewhere, nothing. */
void berth_test_pause(const char *name);
/* Tests: appends line and a newline to the file the environment variable
 * name names (how often, and by which process, a step happened). Test builds
 * only: elsewhere, nothing. */
void berth_test_note(const char *name, const char *line);

#include "base/banned.h"

#endif
