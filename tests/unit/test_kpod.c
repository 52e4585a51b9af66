/*
 * test_kpod.c - src/backend/kubernetes/kubernetes.c's kpod_worker: the worker
 * a pod (or its metrics, which copy its labels) is of, from what the cluster
 * wrote: an Indexed Job's completion index, a PyTorchJob's or an MPIJob's
 * replica index. Any number the cluster writes is read without overflow.
 */
#include <stdio.h>
#include <string.h>

#include "backend/kubernetes/kind.h"
#include "base/arena.h"
#include "spec/yaml.h"
#include "t.h"

/* The worker of a pod whose labels are labels (JSON object text) and whose
 * completion index annotation is ix (NULL: none). */
static int worker(const char *labels, const char *ix)
{
	char text[1024];
	snprintf(text, sizeof(text),
		 "{\"metadata\":{\"labels\":%s,\"annotations\":{%s%s%s}}}", labels,
		 ix ? "\"batch.kubernetes.io/job-completion-index\":\"" : "", ix ? ix : "",
		 ix ? "\"" : "");
	berth_arena *a = berth_arena_new();
	const berth_node *root = NULL;
	int rc = berth_json_root(a, "test", text, strlen(text), &root, NULL);
	CHECKF(rc == 0, "not JSON: %s", text);
	int w = rc ? -2 : kpod_worker(root);
	berth_arena_free(a);
	return w;
}

#define PYTORCH(type, ix) \
	"{\"training.kubeflow.org/replica-type\":\"" type "\",\"training.kubeflow.org/replica-index\":\"" ix "\"}"
#define MPI(ix) \
	"{\"training.kubeflow.org/job-role\":\"worker\",\"training.kubeflow.org/replica-index\":\"" ix "\"}"

static void test_worker(void)
{
	CHECK_INT(worker("{}", "3"), 3);
	CHECK_INT(worker("{}", NULL), -1);
	CHECK_INT(worker("{}", "999"), 999);
	CHECK_INT(worker("{}", "1000"), -1); /* BERTH_WORKERS_MAX */
	CHECK_INT(worker("{}", "-1"), -1);
	CHECK_INT(worker("{}", "3x"), -1);
	CHECK_INT(worker(PYTORCH("master", "0"), NULL), 0);
	CHECK_INT(worker(PYTORCH("worker", "0"), NULL), 1);
	CHECK_INT(worker(PYTORCH("worker", "998"), NULL), 999);
	CHECK_INT(worker(PYTORCH("worker", "999"), NULL), -1);
	CHECK_INT(worker(PYTORCH("launcher", "0"), NULL), -1);
	CHECK_INT(worker(MPI("7"), NULL), 7);
	/* the largest number strtol reads, and past it: no overflow (UBSan stops one) */
	CHECK_INT(worker(PYTORCH("worker", "9223372036854775807"), NULL), -1);
	CHECK_INT(worker(PYTORCH("worker", "99999999999999999999999"), NULL), -1);
	CHECK_INT(worker("{}", "99999999999999999999999"), -1);
}

T_MAIN(T(test_worker))
