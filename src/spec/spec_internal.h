/*
 * spec_internal.h - the decoding context (decode.c) shared by spec.c (YAML ->
 * structs), validate.c (rules) and policy.c: positions, key paths, problems.
 */
#ifndef BERTH_SPEC_INTERNAL_H
#define BERTH_SPEC_INTERNAL_H

#include "base/arena.h"
#include "berth/spec.h"
#include "base/internal.h"

/* One input reports at most this many errors. */
#define BERTH_MAX_PROBLEMS 200
/* A run has at most this many volumes (each is checked against every other). */
#define BERTH_MAX_VOLUMES 1024

typedef struct dctx {
	berth_arena *arena;
	const char *file;
	berth_error **err;
	/* the key path of the value being read, as the keys and indexes pushed
	 * (path_key, path_index): made into text (path, by path_text) only for
	 * a problem, which few of the keys read ever have */
	struct path_seg *segs;
	size_t nsegs, segs_cap;
	berth_buf path;
	size_t errors;
	berth_code first_code; /* of the first error, for callers without err */
	const char *prefix; /* put before the absolute paths of report_at ("profiles[0]") */
	bool template;      /* a registered function's text (berth_spec_parse_function) */
} dctx;

/* Key paths: push returns the mark to restore with path_pop. A key pushed
 * is kept by address, not copied: it must live until it is popped. */
size_t path_key(dctx *c, const char *key);
size_t path_index(dctx *c, size_t i);
void path_pop(dctx *c, size_t mark);
/* The path as text ("volumes[0].name", a key of other characters in
 * brackets: labels["a/b"]), in c's buffer: NULL or "" at the top. */
const char *path_text(dctx *c);
/* Back to the top (a new document); path_release frees what the path holds. */
void path_reset(dctx *c);
void path_release(dctx *c);
/* "head[i]tail" (i == SIZE_MAX: "headtail") into buf of size n, cut to fit
 * as snprintf would; returns buf. The paths of the checks, which are made for
 * every field of every run and printed only for a problem: without printf. */
const char *path_make(char *buf, size_t n, const char *head, size_t i, const char *tail);

/* Reports a problem at pos, under the current path (or under `path`). */
void report(dctx *c, berth_pos pos, berth_code code, const char *fmt, ...) BERTH_PRINTF(4, 5);
void report_at(dctx *c, berth_pos pos, const char *path, berth_code code, const char *fmt, ...)
	BERTH_PRINTF(5, 6);
void warn_at(dctx *c, berth_pos pos, const char *path, const char *fmt, ...) BERTH_PRINTF(4, 5);

/* Quotes s for a message: escapes controls and cuts long strings. */
const char *quoted(char *buf, size_t len, const char *s);
#define QUOTE(s) quoted((char[96]){0}, 96, (s))

/* ---- table-driven decoding (spec.c), shared with policy.c ---------------- */

typedef void (*decode_fn)(dctx *c, const berth_node *n, void *dst, const void *arg);

/* One key of a map: its decoder writes at base + off. */
typedef struct field {
	const char *key;
	decode_fn fn;
	size_t off;
	const void *arg;
} field;

/* Walks map n against the table: unknown keys (did-you-mean), duplicate keys,
 * wrong types are reported, and decoding goes on after each problem. */
void decode_map(dctx *c, const berth_node *n, const field *fields, size_t nf, void *base);
#define DECODE_MAP(c, n, table, base) decode_map(c, n, table, BERTH_ARRAY_SIZE(table), base)

int is_null(const berth_node *n);
int want(dctx *c, const berth_node *n, berth_node_kind kind, const char *what);
/* Index of s in names, or -1 after reporting it with the allowed values. */
int enum_value(dctx *c, const berth_str *s, const char *const *names, size_t n);

void dec_str(dctx *c, const berth_node *n, void *dst, const void *arg);
void dec_int(dctx *c, const berth_node *n, void *dst, const void *arg);
void dec_qty(dctx *c, const berth_node *n, void *dst, const void *arg);
/* arg: what the list should be, for the message ("a list of secret names") */
void dec_strlist(dctx *c, const berth_node *n, void *dst, const void *arg);

struct kv_arg {
	const char *key;   /* the key's name in list form: "key" or "name" */
	int allow_list;    /* [{key, value}] accepted besides a map */
};
extern const struct kv_arg kv_selector, kv_env, kv_map;
void dec_kvlist(dctx *c, const berth_node *n, void *dst, const void *arg);

/* Copies the run spec's table entries named in keys (NULL-terminated) into
 * out, their offsets moved by base; returns how many. A profile or the
 * policy's defaults are run spec fragments read with these entries. */
size_t spec_fields_subset(field *out, size_t max, const char *const *keys, size_t base);
/* Turns action and preemption_mode names into their enums (reporting bad ones). */
void spec_finish(dctx *c, berth_spec *s);

/* A scalar's text into out (0), or a type problem (-1). */
int scalar_text(dctx *c, const berth_node *n, berth_str *out);
/* Keeps the node itself (for what is decoded later, with other rules). */
void dec_node(dctx *c, const berth_node *n, void *dst, const void *arg);
/* Reports every key of map n given twice. */
void check_duplicate_keys(dctx *c, const berth_node *n);
/* n zeroed items of sz bytes in the document's arena (NULL, reported, when out of memory). */
void *arena_array(dctx *c, size_t n, size_t sz, berth_pos pos);

/* The names of the spec's enums, by value (decode.c). */
extern const char *const spec_volume_types[BERTH_VOLUME_SHARED + 1];
extern const char *const spec_action_names[BERTH_ACTION_CRONJOB + 1];
extern const char *const spec_preemption_names[BERTH_PREEMPTION_NONE + 1];
extern const char *const spec_volume_modes[3];

/* Checks a Kubernetes Affinity tree (validate.c). */
void berth_check_affinity(dctx *c, const berth_node *n);

/* Every rule of runspec.md section 4 that needs no policy (validate.c). */
void berth_spec_validate(dctx *c, berth_spec *s);

/* Where berth_spec_check_layers reports: a problem at pos of the layer origin. */
typedef void (*berth_layer_report)(void *ctx, uint8_t origin, berth_pos pos, const char *path,
				   berth_code code, const char *msg);

/*
 * The rules that tie fields which different layers may set (a function's
 * min_replicas, a run's action): what applies to the action, autoscaling's
 * pair, a launcher and its processes. Checked on a document alone when it is
 * the whole run, else on the merged spec of each run (the plan): never on a
 * function's template alone, which a run may complete.
 */
void berth_spec_check_layers(const berth_spec *s, berth_layer_report rep, void *ctx);

#endif
