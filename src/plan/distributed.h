/*
 * distributed.h - a distributed job's workers (replicas of action job) and
 * the variables each gets for its framework to find the others: the one
 * place both backends read them from.
 */
#ifndef BERTH_PLAN_DISTRIBUTED_H
#define BERTH_PLAN_DISTRIBUTED_H

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "berth/run.h"

/* The port worker 0 listens on for the others, unless distributed.port says. */
#define DIST_PORT_DEFAULT 29500
/* The most variables plan_worker_env writes. */
#define WORKER_ENV_MAX 16

/* How many workers the run has: replicas of a job; 1 for anything else. */
int64_t plan_workers(const berth_spec *s);
/* Whether it is a distributed job: more than one worker, or a launcher named. */
bool plan_distributed(const berth_spec *s);

/* One variable of a worker: its value, or, with rank, the worker's index
 * (0 .. workers-1), which the backend fills in. */
typedef struct worker_env {
	const char *name;
	const char *value;
	bool rank;
} worker_env;

/* The variables of a distributed run's workers, whose worker 0 is reached at
 * host and port (NULL: distributed.port, else DIST_PORT_DEFAULT), into out (at
 * most WORKER_ENV_MAX, strings in a); how many, 0 for a run that is not
 * distributed, -1 when out of memory. */
int plan_worker_env(const berth_spec *s, const char *host, const char *port, berth_arena *a,
		    worker_env *out);

#endif
