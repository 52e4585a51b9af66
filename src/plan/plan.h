/*
 * plan.h - what a planned run asks of a node, decided where the plan
 * decides its requests (plan.c): the fit of a node, the record of a run and
 * the queue all read it from here.
 */
#ifndef BERTH_PLAN_PLAN_H
#define BERTH_PLAN_PLAN_H

#include <stdint.h>

#include "berth/run.h"
#include "plan/policy_internal.h"

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

/* A usage from the store's sums: millicores, bytes, GPUs, runs. */
void plan_usage_of(berth_usage *u, int64_t cpu_milli, int64_t mem, int64_t gpus, int64_t runs);

/* A quota as numbers a store keeps (millicores, bytes, GPUs, runs; -1 where
 * it sets none), and back: the limits of q into lim, or into *q the quota
 * named name with limits lim. */
void plan_quota_limits(const berth_quota *q, int64_t lim[4]);
void plan_quota_from(berth_quota *q, const char *name, const int64_t lim[4]);

/* Whether a run that counts need (berth_usage_add of it alone) fits project
 * quota q on top of used (what its project's admitted runs hold): 0 when it
 * does; else 1, with "waiting for quota: gpu 4 of 4 in use; runs 3 of 3 in
 * use" (each dimension that does not fit, its use and its quota) in buf. */
int plan_quota_wait(const berth_quota *q, const berth_usage *used, const berth_usage *need,
		    char *buf, size_t len);

#endif
