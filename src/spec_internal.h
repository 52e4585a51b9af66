/*
 * spec_internal.h - the decoding context shared by spec.c (YAML -> structs)
 * and validate.c (rules): positions, key paths and problem reporting.
 */
#ifndef BERTH_SPEC_INTERNAL_H
#define BERTH_SPEC_INTERNAL_H

#include "arena.h"
#include "berth/spec.h"
#include "internal.h"

/* One input reports at most this many errors. */
#define BERTH_MAX_PROBLEMS 200

typedef struct dctx {
	berth_arena *arena;
	const char *file;
	berth_error **err;
	berth_buf path;     /* key path of the value being read */
	size_t errors;
	berth_code first_code; /* of the first error, for callers without err */
} dctx;

/* Key paths: push returns the length to restore with path_pop. */
size_t path_key(dctx *c, const char *key);
size_t path_index(dctx *c, size_t i);
void path_pop(dctx *c, size_t len);

/* Reports a problem at pos, under the current path (or under `path`). */
void report(dctx *c, berth_pos pos, berth_code code, const char *fmt, ...) BERTH_PRINTF(4, 5);
void report_at(dctx *c, berth_pos pos, const char *path, berth_code code, const char *fmt, ...)
	BERTH_PRINTF(5, 6);
void warn_at(dctx *c, berth_pos pos, const char *path, const char *fmt, ...) BERTH_PRINTF(4, 5);

/* Quotes s for a message: escapes controls and cuts long strings. */
const char *quoted(char *buf, size_t len, const char *s);
#define QUOTE(s) quoted((char[96]){0}, 96, (s))

/* Checks a Kubernetes Affinity tree (validate.c). */
void berth_check_affinity(dctx *c, const berth_node *n);

/* Every rule of runspec.md section 4 that needs no policy (validate.c). */
void berth_spec_validate(dctx *c, berth_spec *s);

#endif
