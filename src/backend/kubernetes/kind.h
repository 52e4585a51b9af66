/*
 * kind.h - what the files of the kubernetes kind share (kubernetes.c: runs
 * on the cluster; check.c: what the cluster must have for the policy;
 * setup.c: what an admin makes for it, and a project's namespace).
 */
#ifndef BERTH_BACKEND_KUBERNETES_KIND_H
#define BERTH_BACKEND_KUBERNETES_KIND_H

#include "backend/kubernetes/api.h"
#include "backend/runtime.h"
#include "render/emit.h"

extern const backend_ops kube_backend_ops;

/* The kubernetes kind's own part of a handle: its connection, made on first
 * use (at open, for a handle whose new runs go to the cluster). */
typedef struct kube_state {
	kube *api;
	int64_t swept;  /* when its last sweep was (ms), 0: none yet */
	char priority_class[254]; /* the last PriorityClass found on the cluster */
	char served[64];          /* the last operator's kind found served there */
	int64_t metrics_off_until; /* the metrics API is not asked before then (ms): it was
				     not served, or not berth's to read (metrics.c) */
} kube_state;

#define KUBE(b) ((kube_state *)backend_state((b), &kube_backend_ops))

/* One pod of a run, as its workload and pods are read (kubernetes.c). */
typedef struct kpod {
	char name[254];
	char created[40];
	char phase[16];
	char reason[512];    /* why it waits, or why it ended */
	bool ready, preempted, evicted, oom;
	int exit_code;       /* -1: none */
	int64_t started, finished;
	int index;           /* a distributed job's worker (pod_worker); -1: none */
} kpod;

/* The worker a pod (or its metrics, which carry its labels) is of, -1 for none. */
int kpod_worker(const berth_node *obj);

/* Every berth object carries it: berth.dev/run=ID. */
#define RUN_LABEL "berth.dev/run"

/* Samples the use of the Running run id's pods (those of its view read, which
 * say each one's worker) from the metrics API into the store, when its last
 * sample is older than the sampling interval (metrics.c). Best effort. */
void kube_sample_usage(berth_backend *b, const char *id, const char *ns, int64_t started,
		       const kpod *pods, size_t npods);

/* A kind of object and where the API keeps it. */
typedef struct kres {
	const char *kind, *api, *plural;
	bool cluster; /* not in a namespace */
} kres;

/* The kind of that name in table (n kinds); NULL when it has none. */
const kres *kres_in(const kres *table, size_t n, const char *kind);

/* /api/v1/namespaces/NS/pods[/NAME], /apis/GROUP/VERSION/namespaces/...,
 * or without namespaces/NS for a kind that is not in one. */
void kpath(berth_buf *b, const kres *r, const char *ns, const char *name);

/* What an apply answered: the object's uid and resourceVersion, and
 * whether the apply made it (201). */
typedef struct kube_applied {
	char uid[128], rv[64];
	bool created;
} kube_applied;

/* Applies one object (server-side apply, fieldManager=berth, force) as
 * res NAME in ns (NULL for a kind not in a namespace); out may be NULL.
 * A refusal is the API's words, after "KIND [NS/]NAME". */
int kube_apply(kube *api, const kres *res, const char *ns, const char *name, const onode *o,
	       bool dry_run, kube_applied *out, berth_error **err);

/* check.c: whether the cluster behind api has what policy p names, a line
 * per check into report; the number of problems. */
int kube_check(kube *api, const berth_policy *p, berth_buf *report);
/* check.c: whether PriorityClass name is on the cluster: 1 yes, 0 no, -1
 * when it cannot be told (an identity that may not read it). */
int kube_priority_class_exists(kube *api, const char *name);

/* check.c: whether the cluster serves the resource plural in group version
 * gv ("kubeflow.org/v1"): 1 yes, 0 no (*why says which is missing: the
 * group version, or the resource in it), -1 when it cannot be told (why). */
int kube_served(kube *api, const char *gv, const char *plural, char *why, size_t len);

/* A workload of an operator the policy may name (distributed.operator). */
typedef struct kube_operator_kind {
	const char *kind, *group, *api, *plural;
	const char *installer; /* what installs it: "the Kubeflow Training Operator ..." */
	const char *runs;     /* the runs it is rendered for */
} kube_operator_kind;

/* check.c: the workloads of distributed.operator op (n of them; none for
 * "none" or NULL). */
const kube_operator_kind *kube_operator_kinds(const char *op, size_t *n);

/* setup.c: the GPU resources policy p offers into out, its default type
 * first; how many. */
#define KUBE_GPU_TYPES_MAX 16
size_t kube_gpu_types(const berth_policy *p, const char *out[KUBE_GPU_TYPES_MAX]);

/* setup.c: what policy p needs on the cluster (berth cluster setup), ns
 * being where runs go when the policy names no namespace. dry_run: the
 * objects as a YAML stream into out, each with a comment that says why,
 * and api is not used (may be NULL); else each is applied, a line per
 * object into out ("created KIND NAME", "configured ...", "unchanged ...").
 * Stops at the first refusal. */
int kube_setup(kube *api, const berth_policy *p, const char *ns, bool dry_run, berth_buf *out,
	       berth_error **err);

/* setup.c: makes the namespace ns of project (the policy's namespace with
 * {project}) on its first run, with its ResourceQuota and LimitRange when
 * the policy sets anything for them. A namespace that exists is left as it
 * is; one whose quota or LimitRange cannot be made is taken away again. */
int kube_project_namespace(kube *api, const berth_policy *p, const char *project, const char *ns,
			   berth_error **err);

#endif
