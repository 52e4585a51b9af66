/*
 * merge.h - the table of run spec fields that the merge, the policy's
 * user_fields lock and `berth explain` walk.
 */
#ifndef BERTH_MERGE_H
#define BERTH_MERGE_H

#include "base/arena.h"
#include "berth/run.h"
#include "base/internal.h"

typedef enum merge_kind {
	M_STR,          /* berth_str, replaced */
	M_INT,          /* berth_int, replaced */
	M_QTY,          /* berth_qty, replaced */
	M_STRS,         /* berth_strlist, replaced whole (command, args) */
	M_SET,          /* berth_strlist, merged by value (secrets) */
	M_MAP,          /* berth_kvlist, merged by key (node_selector, labels, envs by name) */
	M_NODE,         /* a node tree, replaced; aux: offset of its origin byte */
	M_VOLUMES,      /* merged by name; aux: offset of the count */
	M_TOLERATIONS,  /* merged by key + effect; aux: offset of the count */
	M_PORTS,        /* service ports, replaced whole; aux: offset of the count */
} merge_kind;

typedef struct merge_field {
	const char *path;   /* key path in a run spec: "resources.cpu.requests" */
	merge_kind kind;
	size_t off;         /* in berth_spec */
	size_t aux;
	int group;          /* a resource, 1 to 4 (cpu, mem, gpu, disk), whose requests
			       and limits a profile decides whole; 0: none */
} merge_field;

extern const merge_field merge_fields[];
extern const size_t merge_nfields;

/* Whether s sets field f; its position and origin. */
int merge_field_get(const berth_spec *s, const merge_field *f, berth_pos *pos, uint8_t *origin);

/* Merges every field src sets into dst, as origin; dst's arrays are
 * reallocated in a (src is not changed). 0 or -BERTH_ENOMEM. */
int merge_layer(berth_arena *a, berth_spec *dst, const berth_spec *src, uint8_t origin);

/* Called for each value of the user's layers (function, run spec) that
 * merge_profile replaces or drops. */
typedef void (*merge_override_fn)(void *ctx, const berth_override *o);

/*
 * Merges a profile into dst (as BERTH_ORIGIN_PROFILE). A profile that sets a
 * resource's requests or limits decides that resource whole: what dst has of
 * it (requests, limits and, for GPUs, gpu_type) is dropped first, so the
 * user's parts of it do not survive. Every other field merges as merge_layer
 * merges it. Each value of the user's replaced, and not by an equal one, is
 * passed to cb. 0 or -BERTH_ENOMEM.
 */
int merge_profile(berth_arena *a, berth_spec *dst, const berth_spec *profile, merge_override_fn cb,
		  void *ctx);

#endif
