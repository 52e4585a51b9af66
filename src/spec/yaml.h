/*
 * yaml.h - YAML 1.2 and JSON documents into berth_node trees (libfyaml).
 */
#ifndef BERTH_YAML_H
#define BERTH_YAML_H

#include "base/arena.h"
#include "berth/error.h"
#include "berth/node.h"

/*
 * Caps on untrusted input (docs/runspec.md, "Limits on input"). Each is
 * checked while libfyaml's events arrive, so an input over a cap is refused
 * at the place it goes over, before anything is built from it or walked:
 * BERTH_ETOOBIG, with the file, line and column.
 *
 * Depth bounds every recursive walk of a parsed tree (o_copy, the writers of
 * emit.c, spec and policy decoding): a map or list counts one level, scalars
 * none, and an alias counts as deep as the subtree it names. Nodes and text
 * bound the tree's size once aliases are expanded, which is what a walk that
 * copies or prints the tree costs, so an output is at most a fixed multiple
 * of them whatever the aliases.
 */
#define BERTH_YAML_MAX_BYTES (4u << 20)  /* one input */
#define BERTH_YAML_MAX_DEPTH 64u         /* nesting of maps and lists */
#define BERTH_YAML_MAX_DOCS 300u         /* documents in one input */
#define BERTH_YAML_MAX_NODES 100000u     /* nodes of one input, aliases expanded */
#define BERTH_YAML_MAX_TEXT (4u << 20)   /* bytes of scalars (keys too), aliases expanded */
#define BERTH_YAML_MAX_ANCHORS 10000u    /* anchors in one document */

/* A file read to be checked or rendered only (berth validate, render,
 * explain: berth_spec_parse_file) may hold more documents and nodes: a
 * stream of thousands of specs is rendered in one process (bench/render.sh).
 * Runs are created from berth_spec_parse's inputs only. */
#define BERTH_YAML_FILE_MAX_DOCS 100000u
#define BERTH_YAML_FILE_MAX_NODES 1000000u

/* A peer's JSON (a reply of berth's server or of the Kubernetes API) nests
 * what a user wrote inside objects of its own, and lists many objects. */
#define BERTH_YAML_PEER_MAX_DEPTH 256u

typedef struct berth_yaml_limits {
	size_t docs;    /* documents */
	size_t nodes;   /* nodes, aliases expanded */
	size_t text;    /* bytes of scalar text, aliases expanded */
	unsigned depth; /* nesting of maps and lists, aliases expanded */
} berth_yaml_limits;

/* BERTH_YAML_MAX_*: what berth_yaml_parse applies (requests, stored specs,
 * policies, kubeconfigs). */
extern const berth_yaml_limits berth_yaml_input_limits;
/* BERTH_YAML_FILE_MAX_* for documents and nodes, the rest as input. */
extern const berth_yaml_limits berth_yaml_file_limits;

typedef struct berth_yaml_doc {
	const berth_node *root; /* NULL for an empty document */
	berth_pos pos;          /* where the document starts */
} berth_yaml_doc;

/*
 * Parses every document of data (len bytes; name is used in messages) into
 * nodes allocated in arena. Input starting with '{' or '[' is read as JSON
 * (one value or several concatenated); anything else as a YAML 1.2 stream.
 * A comma right after a quoted value at the end of a line in block context,
 * as in `name: "my-pvc",` (seed 004), is accepted with a warning. A scalar
 * holding a NUL character (the escapes \0, \u0000) is a syntax error at its
 * position: berth's strings end at NUL.
 * On success *docs (arena memory) and *ndocs are set; warnings may be added
 * to *err. On failure every syntax problem found is added to *err.
 */
int berth_yaml_parse(berth_arena *arena, const char *name, const char *data, size_t len,
		     berth_yaml_doc **docs, size_t *ndocs, berth_error **err);

/* berth_yaml_parse with other caps (lim; the bytes of one input are always
 * BERTH_YAML_MAX_BYTES). */
int berth_yaml_parse_with(berth_arena *arena, const char *name, const char *data, size_t len,
			  const berth_yaml_limits *lim, berth_yaml_doc **docs, size_t *ndocs,
			  berth_error **err);

/*
 * berth_yaml_parse_with for a stream read one document at a time: each->doc
 * is called with each document as soon as it is read (index counts them
 * from 0), and what it and the document allocated in arena after the
 * document started is freed when it returns (so a stream of thousands of
 * documents needs the memory of one). each->start is called before the
 * first, and again when the input is read again from its start (a stray
 * comma dropped, see above): what was done with the documents so far is to
 * be forgotten. Problems as berth_yaml_parse_with; *ndocs: the documents.
 */
typedef struct berth_yaml_each {
	void *arg;
	void (*start)(void *arg);
	void (*doc)(void *arg, const berth_yaml_doc *doc, size_t index);
} berth_yaml_each;
int berth_yaml_parse_each(berth_arena *arena, const char *name, const char *data, size_t len,
			  const berth_yaml_limits *lim, const berth_yaml_each *each, size_t *ndocs,
			  berth_error **err);

/* One JSON value read from a peer (a server's reply): *root, in arena.
 * Warnings are dropped; err may be NULL. A NUL in a string is kept in the
 * node (its len) and cuts its text. The caps are the file's, with a depth
 * of BERTH_YAML_PEER_MAX_DEPTH. */
int berth_json_root(berth_arena *arena, const char *name, const char *data, size_t len,
		    const berth_node **root, berth_error **err);

/* Reads a whole file ("-": standard input) into a malloc'd NUL-terminated
 * buffer, refusing more than max bytes. */
int berth_read_file(const char *path, size_t max, char **out, size_t *len, berth_error **err);

#endif
