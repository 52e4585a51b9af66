/*
 * distributed.c - the workers of a distributed job and what each is told:
 *   every launcher: BERTH_WORKERS, BERTH_WORKER (its index), BERTH_COORDINATOR
 *   env:      WORLD_SIZE, RANK, NODE_RANK, LOCAL_RANK=0, MASTER_ADDR, MASTER_PORT
 *             (torch.distributed's env:// rendezvous, one process a worker)
 *   torchrun: PET_NNODES, PET_NODE_RANK, PET_NPROC_PER_NODE, PET_MASTER_ADDR,
 *             PET_MASTER_PORT (torchrun reads its options from PET_*: the
 *             command is `torchrun train.py`, with no flags)
 *   jax:      JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES, JAX_PROCESS_ID
 *   mpi:      BERTH_MPI_SLOTS (the ranks in each worker: mpirun starts them and
 *             numbers them, OMPI_COMM_WORLD_RANK ...)
 */
#include <stdio.h>
#include <string.h>

#include "plan/distributed.h"

int64_t plan_workers(const berth_spec *s)
{
	return s->action == BERTH_ACTION_JOB && s->replicas.set && s->replicas.v > 0 ? s->replicas.v : 1;
}

bool plan_distributed(const berth_spec *s)
{
	return s->action == BERTH_ACTION_JOB && (plan_workers(s) > 1 || s->launcher.s);
}

typedef struct envs {
	worker_env *out;
	int n;
	berth_arena *a;
	bool nomem;
} envs;

static void put(envs *e, const char *name, const char *value)
{
	if (e->n < WORKER_ENV_MAX)
		e->out[e->n++] = (worker_env){name, value, value == NULL};
}

static const char *num(envs *e, int64_t v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%lld", (long long)v);
	const char *s = berth_arena_strdup(e->a, buf);
	e->nomem |= !s;
	return s;
}

int plan_worker_env(const berth_spec *s, const char *host, const char *port, berth_arena *a,
		    worker_env *out)
{
	if (!plan_distributed(s))
		return 0;
	envs e = {out, 0, a, false};
	int64_t n = plan_workers(s);
	const char *launcher = s->launcher.s ? s->launcher.s : "env";
	const char *workers = num(&e, n);
	const char *ports = port ? berth_arena_strdup(a, port)
				 : num(&e, s->dist_port.set ? s->dist_port.v : DIST_PORT_DEFAULT);
	e.nomem |= !ports;
	char coord[600];
	snprintf(coord, sizeof(coord), "%s:%s", host, ports ? ports : "");
	const char *coordinator = berth_arena_strdup(a, coord);
	host = berth_arena_strdup(a, host); /* the values live as long as the arena */
	e.nomem |= !coordinator || !host;
	put(&e, "BERTH_WORKERS", workers);
	put(&e, "BERTH_WORKER", NULL);
	put(&e, "BERTH_COORDINATOR", coordinator);
	if (!strcmp(launcher, "torchrun")) {
		put(&e, "PET_NNODES", workers);
		put(&e, "PET_NODE_RANK", NULL);
		put(&e, "PET_NPROC_PER_NODE", num(&e, s->procs_per_worker.set ? s->procs_per_worker.v : 1));
		put(&e, "PET_MASTER_ADDR", host);
		put(&e, "PET_MASTER_PORT", ports);
	} else if (!strcmp(launcher, "mpi")) {
		/* the ranks are mpirun's to number (OMPI_COMM_WORLD_RANK ...) */
		put(&e, "BERTH_MPI_SLOTS", num(&e, s->procs_per_worker.set ? s->procs_per_worker.v : 1));
	} else if (!strcmp(launcher, "jax")) {
		put(&e, "JAX_COORDINATOR_ADDRESS", coordinator);
		put(&e, "JAX_NUM_PROCESSES", workers);
		put(&e, "JAX_PROCESS_ID", NULL);
	} else {
		put(&e, "WORLD_SIZE", workers);
		put(&e, "RANK", NULL);
		put(&e, "NODE_RANK", NULL);
		put(&e, "LOCAL_RANK", "0");
		put(&e, "MASTER_ADDR", host);
		put(&e, "MASTER_PORT", ports);
	}
	return e.nomem ? -1 : e.n;
}
