/*
 * render_internal.h - pieces of the renderer that `explain` shows too.
 */
#ifndef BERTH_RENDER_INTERNAL_H
#define BERTH_RENDER_INTERNAL_H

#include "berth/render.h"
#include "render/emit.h"

/* The pod's effective affinity under parent ("affinity"): the user's terms
 * with the preemption mode's terms ANDed in. NULL when there is none. */
onode *render_affinity(obuild *b, onode *parent, const berth_run *run);

/* The fields of a toleration into map o, as Kubernetes spells them. */
void render_toleration(obuild *b, onode *o, const berth_toleration *t);

/* The objects of a run, in the order they are applied (render.h), built in
 * arena: at most RENDER_MAX_OBJECTS. The workload is the one whose kind is
 * Job, CronJob or Deployment; owned objects carry an ownerReference to it
 * with an empty uid. */
#define RENDER_MAX_OBJECTS 64
int render_objects(berth_arena *arena, const berth_run *run, onode **objs, size_t *n,
		   berth_error **err);

/* The run's inputs as one line of JSON (the BERTH_INPUTS variable), in the arena. */
const char *render_inputs_json(const berth_node *inputs, berth_arena *arena);

/* The profiles document of berth_explain_profiles (a server's too) as
 * `berth profiles` prints it: the project whose view it is, then each profile. */
void render_profiles_table(berth_buf *out, const onode *doc);

#endif
