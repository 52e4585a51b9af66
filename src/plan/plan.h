/*
 * plan.h - what a planned run asks of a node, decided where the plan
 * decides its requests (plan.c): the fit of a node, the record of a run and
 * the queue all read it from here.
 */
#ifndef BERTH_PLAN_PLAN_H
#define BERTH_PLAN_PLAN_H

#include <stdint.h>

#include "berth/run.h"

/* The quantity a resource asks for: the request, else the limit (GPUs: the
 * limit, else the request), as Kubernetes takes a limit given without a
 * request for the request; NULL when neither is set. *which: "requests" or
 * "limits", the one taken (or the one to set). */
const berth_qty *plan_asked(const berth_resource *r, int gpu, const char **which);

/* What a planned run asks of a node, in millicores, bytes, GPUs and bytes of
 * disk (0 for what it does not ask for): a distributed job's, all its workers'
 * (the resources are each worker's), since they start together. */
typedef struct plan_demand {
	int64_t cpu_milli, mem, gpus, disk;
	int64_t workers;
} plan_demand;

void plan_demand_of(plan_demand *out, const berth_run *run);

#endif
