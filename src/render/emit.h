/*
 * emit.h - an output tree and its YAML and JSON writers.
 *
 * Renderers build Kubernetes objects as a tree of maps, lists and scalars in
 * an arena, in the key order they are to be printed, then write it as YAML
 * (block style, as kubectl prints it) or JSON. Building is sticky (sqlite's
 * printf): after an allocation failure every call is a no-op and
 * `failed` is set; the caller checks once at the end.
 */
#ifndef BERTH_EMIT_H
#define BERTH_EMIT_H

#include <stdint.h>

#include "base/arena.h"
#include "berth/node.h"
#include "berth/quantity.h"
#include "base/internal.h"

typedef enum okind { O_MAP, O_SEQ, O_STR, O_INT, O_BOOL, O_RAW } okind; /* O_RAW: s as written (numbers) */

typedef struct onode onode;
struct onode {
	okind kind;
	const char *key;      /* in a map */
	const char *s;        /* O_STR */
	int64_t i;            /* O_INT, O_BOOL */
	onode *first, *last;  /* O_MAP, O_SEQ */
	onode *next;
};

typedef struct obuild {
	berth_arena *arena;
	int failed;
} obuild;

/* A root map or list. */
onode *o_root(obuild *b, okind kind);
/* Children: key is used when parent is a map, ignored in a list. Each
 * returns the new node, or NULL (after failure, or with parent NULL). */
onode *o_map(obuild *b, onode *parent, const char *key);
onode *o_seq(obuild *b, onode *parent, const char *key);
onode *o_str(obuild *b, onode *parent, const char *key, const char *s);
onode *o_strf(obuild *b, onode *parent, const char *key, const char *fmt, ...) BERTH_PRINTF(4, 5);
onode *o_int(obuild *b, onode *parent, const char *key, int64_t v);
onode *o_bool(obuild *b, onode *parent, const char *key, int v);
/* A Unix time in ms as "2026-11-22T13:08:57.039Z"; nothing when ms is 0. */
onode *o_time(obuild *b, onode *parent, const char *key, int64_t ms);
/* A quantity in canonical form, as a string. */
onode *o_qty(obuild *b, onode *parent, const char *key, const berth_quantity *q);
/* The child of map m under key, or NULL. */
onode *o_get(const onode *m, const char *key);
/* The same, taken out of m (NULL, and m unchanged, when there is none). */
onode *o_take(onode *m, const char *key);
/* A copy of a parsed tree; scalars become strings except integers under a
 * key named in int_keys (NULL-terminated), and true/false under bool_keys. */
onode *o_copy(obuild *b, onode *parent, const char *key, const berth_node *n,
	      const char *const *int_keys);

/* A copy that keeps the YAML types of scalars (numbers, booleans, null), for
 * data that is handed on as JSON (inputs). */
onode *o_copy_typed(obuild *b, onode *parent, const char *key, const berth_node *n);

/* Trees deeper than this many levels of maps and lists are neither copied
 * (o_copy, o_copy_typed: b->failed is set) nor written (emit_*: out->failed
 * is -BERTH_ETOOBIG). The reader's caps (yaml.h) keep trees far shallower;
 * this bounds the recursion whatever a tree comes from. */
#define O_MAX_DEPTH 1024u
/* Past this many levels, emit_yaml and pretty emit_json write a collection
 * on one line, so that indentation cannot make an output quadratic. */
#define O_BLOCK_DEPTH 32u

/* Appends n as YAML (a block at indentation 0) or as JSON (pretty: indented
 * by two spaces from ind, else on one line). */
void emit_yaml(berth_buf *out, const onode *n);
void emit_json(berth_buf *out, const onode *n, int ind, int pretty);

#endif
