/*
 * render_internal.h - pieces of the renderer that `explain` shows too.
 */
#ifndef BERTH_RENDER_INTERNAL_H
#define BERTH_RENDER_INTERNAL_H

#include "berth/render.h"
#include "emit.h"

/* The pod's effective affinity under parent ("affinity"): the user's terms
 * with the preemption mode's terms ANDed in. NULL when there is none. */
onode *render_affinity(obuild *b, onode *parent, const berth_run *run);

/* The fields of a toleration into map o, as Kubernetes spells them. */
void render_toleration(obuild *b, onode *o, const berth_toleration *t);

/* The run's inputs as one line of JSON (the BERTH_INPUTS variable), in the arena. */
const char *render_inputs_json(const berth_node *inputs, berth_arena *arena);

#endif
