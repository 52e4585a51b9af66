/*
 * yaml.h - YAML 1.2 and JSON documents into berth_node trees (libfyaml).
 */
#ifndef BERTH_YAML_H
#define BERTH_YAML_H

#include "arena.h"
#include "berth/error.h"
#include "berth/node.h"

/* Caps on untrusted input. */
#define BERTH_YAML_MAX_BYTES (4u << 20)     /* one input */
#define BERTH_YAML_MAX_NODES 1000000u       /* nodes, aliases expanded */
#define BERTH_YAML_MAX_DOCS 100000u

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

/* One JSON value read from a peer (a server's reply): *root, in arena.
 * Warnings are dropped; err may be NULL. A NUL in a string is kept in the
 * node (its len) and cuts its text. */
int berth_json_root(berth_arena *arena, const char *name, const char *data, size_t len,
		    const berth_node **root, berth_error **err);

/* Reads a whole file ("-": standard input) into a malloc'd NUL-terminated
 * buffer, refusing more than max bytes. */
int berth_read_file(const char *path, size_t max, char **out, size_t *len, berth_error **err);

#endif
