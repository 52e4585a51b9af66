/*
 * berth/node.h - a parsed YAML/JSON value with its position.
 *
 * libberth keeps Kubernetes objects that a run spec passes through (affinity,
 * inputs) as a read-only tree of nodes, each with the line and column it was
 * written at. Nodes belong to the object that returned them (a berth_spec)
 * and live as long as it does. Trees may share subtrees (YAML aliases).
 */
#ifndef BERTH_NODE_H
#define BERTH_NODE_H

#include <stddef.h>
#include <stdint.h>

#include "berth/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A position in an input: 1-based line and column; 0 when not from a file. */
typedef struct berth_pos {
	uint32_t line;
	uint32_t column;
} berth_pos;

typedef enum berth_node_kind {
	BERTH_NODE_SCALAR = 0,
	BERTH_NODE_MAP = 1,
	BERTH_NODE_SEQ = 2,
} berth_node_kind;

/* The type of a scalar under the YAML 1.2 core schema (quoted: string). */
typedef enum berth_scalar_type {
	BERTH_SCALAR_STR = 0,
	BERTH_SCALAR_NULL = 1,
	BERTH_SCALAR_BOOL = 2,
	BERTH_SCALAR_INT = 3,
	BERTH_SCALAR_FLOAT = 4,
} berth_scalar_type;

typedef struct berth_node berth_node;

typedef struct berth_node_pair {
	const berth_node *key;   /* always a scalar */
	const berth_node *value;
} berth_node_pair;

struct berth_node {
	berth_node_kind kind;
	berth_scalar_type type;  /* scalars only */
	berth_pos pos;
	size_t len;              /* scalar: text length; map: pairs; seq: items */
	size_t weight;           /* nodes in this subtree, aliases expanded (for caps) */
	union {
		const char *text;            /* scalar, NUL-terminated (may hold NULs: use len) */
		const berth_node_pair *pairs; /* map, in document order */
		const berth_node *const *items; /* seq */
	} u;
};

/* The value of key in map node n, or NULL (also when n is not a map). */
const berth_node *berth_node_get(const berth_node *n, const char *key);

/* The node at a dotted path of map keys ("metadata.name"), or NULL. */
const berth_node *berth_node_at(const berth_node *n, const char *path);

/* A scalar's text, or NULL (no node, not a scalar, or null). */
const char *berth_node_text(const berth_node *n);

/* A short name of the node's kind for messages: "a map", "a list", "a string", ... */
const char *berth_node_kind_name(const berth_node *n);

/* A parsed YAML 1.2 or JSON document, for callers that read small inputs
 * of their own (a JSON request body): its first document only. */
typedef struct berth_doc berth_doc;
int berth_doc_parse(berth_doc **out, const char *name, const char *data, size_t len,
		    berth_error **err);
/* The root node; NULL for an empty document. */
const berth_node *berth_doc_root(const berth_doc *doc);
void berth_doc_free(berth_doc *doc);

/* Every document of a YAML 1.2 or JSON stream as one JSON list, scalars
 * keeping their YAML types (an empty document is null): a spec as data for
 * clients without a YAML parser (the web UI's YAML tab). Syntax problems go to
 * *err as berth_doc_parse's do. *out is NUL-terminated; free() it. */
int berth_docs_json(const char *name, const char *data, size_t len, char **out, size_t *outlen,
		    berth_error **err);

/* The length of the valid UTF-8 sequence at s (n bytes left, n > 0): 1 to 4;
 * 0 when the bytes there are not UTF-8 (overlong, a surrogate, past U+10FFFF,
 * cut short) or s[0] is NUL. */
size_t berth_utf8_len(const char *s, size_t n);

#ifdef __cplusplus
}
#endif

#endif
