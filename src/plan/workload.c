/*
 * workload.c - the Kubernetes workload of a planned run (workload.h).
 *
 *   no operator (distributed.operator none): an Indexed Job, any launcher
 *     but mpi (berth cannot start MPI ranks across pods by itself);
 *   kubeflow: torchrun and env -> PyTorchJob, mpi -> MPIJob; jax -> the
 *     Indexed Job: the Training Operator releases berth renders for (v1.7,
 *     v1.8) have no JAXJob, and the Indexed Job needs no operator;
 *   jobset: a JobSet for env, torchrun and jax; mpi is refused (a JobSet
 *     does not start ranks either).
 */
#include <string.h>

#include "plan/distributed.h"
#include "plan/workload.h"

plan_workload plan_workload_of(const berth_run *r)
{
	const berth_spec *s = &r->spec;
	if (!plan_distributed(s))
		return WL_PLAIN;
	const char *l = s->launcher.s ? s->launcher.s : "env";
	const char *op = r->dist_operator ? r->dist_operator : "none";
	bool mpi = !strcmp(l, "mpi");
	if (!strcmp(op, "kubeflow"))
		return mpi ? WL_MPIJOB : !strcmp(l, "jax") ? WL_INDEXED : WL_PYTORCHJOB;
	if (mpi)
		return WL_NO_MPI;
	return !strcmp(op, "jobset") ? WL_JOBSET : WL_INDEXED;
}

const char *plan_workload_kind(plan_workload w, const char **api)
{
	switch (w) {
	case WL_INDEXED:
		*api = "batch/v1";
		return "Job";
	case WL_PYTORCHJOB:
		*api = "kubeflow.org/v1";
		return "PyTorchJob";
	case WL_MPIJOB:
		*api = "kubeflow.org/v2beta1";
		return "MPIJob";
	case WL_JOBSET:
		*api = "jobset.x-k8s.io/v1alpha2";
		return "JobSet";
	case WL_PLAIN:
	case WL_NO_MPI:
		break;
	}
	*api = NULL;
	return NULL;
}

static size_t digits(int64_t v)
{
	size_t n = 1;
	for (; v >= 10; v /= 10)
		n++;
	return n;
}

size_t plan_worker_suffix(plan_workload w, int64_t workers)
{
	int64_t last = workers > 0 ? workers - 1 : 0;
	size_t n;
	switch (w) {
	case WL_PYTORCHJOB: /* <name>-master-0, <name>-worker-<0..N-2> */
		n = 8 + digits(last > 0 ? last - 1 : 0);
		return n > 9 ? n : 9;
	case WL_MPIJOB: /* <name>-launcher, <name>-worker-<0..N-1> */
		n = 8 + digits(last);
		return n > 9 ? n : 9;
	case WL_JOBSET: /* <name>-worker-0-<0..N-1> */
		return strlen("-" JOBSET_REPLICATED_JOB "-0-") + digits(last);
	case WL_PLAIN:
		return 0;
	case WL_INDEXED:
	case WL_NO_MPI:
		break;
	}
	return 1 + digits(last); /* <name>-<index> */
}
