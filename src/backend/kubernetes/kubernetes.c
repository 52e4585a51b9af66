/*
 * kubernetes.c - the kubernetes backend: a run's objects (render.c) are
 * applied to the cluster with server-side apply, its workload and pods are
 * watched and their state mapped to berth's, its log is read through the
 * API, and stopping deletes it with foreground propagation.
 *
 * The store under the data dir keeps each run's record, as on the local
 * backend; the cluster is the truth about its state. Every berth object
 * carries the label berth.dev/run=ID, which is how a run's pods, and
 * whatever it left, are found again.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/logfile.h"
#include "backend/record.h"
#include "backend/runtime.h"
#include "base/curl_dl.h"
#include "base/fs.h"
#include "backend/kubernetes/api.h"
#include "backend/kubernetes/kind.h"
#include "backend/kubernetes/kueue.h"
#include "base/names.h"
#include "plan/policy_internal.h"
#include "plan/workload.h"
#include "render/render_internal.h"
#include "base/seal.h"
#include "spec/yaml.h"

#define APPLY "application/apply-patch+yaml"

/* ---- kinds and paths ------------------------------------------------------------------ */

static const kres kinds[] = {
	{"Secret", "v1", "secrets", false},
	{"PersistentVolumeClaim", "v1", "persistentvolumeclaims", false},
	{"Job", "batch/v1", "jobs", false},
	{"CronJob", "batch/v1", "cronjobs", false},
	{"Deployment", "apps/v1", "deployments", false},
	{"Service", "v1", "services", false},
	{"HorizontalPodAutoscaler", "autoscaling/v2", "horizontalpodautoscalers", false},
	{"Pod", "v1", "pods", false},
};
#define POD_KIND (&kinds[BERTH_ARRAY_SIZE(kinds) - 1])

/* The operators' workloads of a distributed job (distributed.operator,
 * docs/distributed.md): custom resources that a cluster may not serve, so
 * they are asked for by name only, never listed for every run. */
static const kres operator_kinds[] = {
	{"PyTorchJob", "kubeflow.org/v1", "pytorchjobs", false},
	{"MPIJob", "kubeflow.org/v2beta1", "mpijobs", false},
	{"JobSet", "jobset.x-k8s.io/v1alpha2", "jobsets", false},
};

const kres *kres_in(const kres *table, size_t n, const char *kind)
{
	for (size_t i = 0; kind && i < n; i++)
		if (!strcmp(table[i].kind, kind))
			return &table[i];
	return NULL;
}

static const kres *kres_of(const char *kind)
{
	const kres *r = kres_in(kinds, BERTH_ARRAY_SIZE(kinds), kind);
	return r ? r : kres_in(operator_kinds, BERTH_ARRAY_SIZE(operator_kinds), kind);
}

static bool is_operator_kind(const kres *r)
{
	return r >= operator_kinds && r < operator_kinds + BERTH_ARRAY_SIZE(operator_kinds);
}

static bool is_workload(const kres *r)
{
	return r && (!strcmp(r->kind, "Job") || !strcmp(r->kind, "CronJob") ||
		     !strcmp(r->kind, "Deployment") || is_operator_kind(r));
}

void kpath(berth_buf *b, const kres *r, const char *ns, const char *name)
{
	berth_buf_printf(b, "%s/%s", strchr(r->api, '/') ? "/apis" : "/api", r->api);
	if (!r->cluster)
		berth_buf_printf(b, "/namespaces/%s", ns);
	berth_buf_printf(b, "/%s%s%s", r->plural, name ? "/" : "", name ? name : "");
}

/* A run's target "Kind namespace/name on SERVER" split up. */
typedef struct target {
	const kres *res;
	char ns[254], name[254], server[512];
} target;

static int parse_target(const char *s, target *t)
{
	char kind[64];
	t->server[0] = '\0';
	int n = s ? sscanf(s, "%63s %253[^/]/%253s on %511s", kind, t->ns, t->name, t->server) : 0;
	if (n < 3)
		return -1;
	t->res = kres_of(kind);
	/* the names go into API paths and queries: a store made to hold
	 * "a&fieldSelector=..." or "../.." names nothing */
	if (berth_check_dns_label(t->ns) || berth_check_dns_subdomain(t->name))
		return -1;
	return t->res ? 0 : -1;
}


static int kube_refresh(berth_backend *b, const char *id, berth_error **err);
static int delete_labelled(berth_backend *b, const kres *res, const char *ns, const char *id,
			   int grace_s, berth_error **err);
static int delete_run_objects(berth_backend *b, const char *id, const target *t, int grace_s,
			      berth_error **err);
static int kube_reconcile(berth_backend *b, berth_error **err);
static void kube_sweep(berth_backend *b);
static void keep_log(berth_backend *b, const char *id, const target *t);
static void forget_kept_log(berth_backend *b, const char *id);

/* ---- the connection ---------------------------------------------------------------------- */

/* Connects to the cluster of the handle's kubeconfig, once. */
static int kube_connect(berth_backend *b, berth_error **err)
{
	if (KUBE(b)->api)
		return 0;
	kube_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	int rc = kube_config_load(&cfg, b->config, b->context, err);
	if (!rc)
		rc = kube_open(&KUBE(b)->api, &cfg, err);
	kube_config_free(&cfg);
	return rc;
}

static const char *run_namespace(berth_backend *b, const berth_run *run)
{
	return run->namespace ? run->namespace : kube_cfg(KUBE(b)->api)->namespace;
}

/* ---- what the cluster says: a view of one run ------------------------------------------ */

#define VIEW_PODS 32
#define VIEW_CLAIMS 8
typedef struct kview {
	berth_action action;
	const char *kind;      /* its kind: Job, CronJob, Deployment, or an operator's */
	const char *workload;  /* its name */
	bool seen, gone;       /* the workload was read; it is not there */
	bool complete, failed;
	char reason[512];      /* the workload's: a Failed condition, a CronJob's schedule */
	int64_t started, finished;
	int ready;
	kpod pods[VIEW_PODS];
	size_t npods;
	char uid[64];          /* the workload's, once read */
	char said[512];        /* what the cluster said last in a Warning Event about the
				  run's objects, when nothing else explains a wait */
	bool refused;          /* ... and it is a refusal that retrying will not change */
	bool said_of_claim;    /* ... about a claim of its pods: it says more than the pod */
	char claims[VIEW_CLAIMS][254]; /* the claims its pods mount */
	size_t nclaims;
	kueue_view kueue;      /* a Job: suspended, its LocalQueue, what Kueue says */
	int64_t gone_since;    /* a Job gone, its end untold: since when berth knows it gone */
	berth_state was;       /* ... and the run's state until then */
	int worker_filter;     /* rank + 1 of the worker whose pods alone are kept (its
				  log); 0: every pod */
	/* each worker's newest pod, by index, past the VIEW_PODS kept whole: its
	 * creation and phase (empty: none seen) */
	struct {
		char created[40];
		char phase[16];
	} workers[BERTH_WORKERS_MAX];
} kview;

/* A refusal seen this long is the run's end, not a wait (the controllers
 * retry a forbidden create for ever). */
#define REFUSED_GRACE_MS 10000
/* A Job gone whose Events do not tell how it ended is given this long before
 * it is taken for deleted outside berth: the controller manager writes its
 * Events after the fact (seconds later when it is busy), and the TTL
 * controller may take a finished Job before its Completed Event is written. */
#define GONE_GRACE_MS 10000
#define GONE_UNTOLD "its %s is gone from the cluster, and its Events do not say yet how it ended"
/* A wait watches this long, then asks for the Events of a run that waits. */
#define WAIT_SLICE_MS 5000
/* A server sweeps at its start and then this often. */
#define SWEEP_EVERY_MS 60000
/* The namespaces swept are those of the newest this many kubernetes runs. */
#define SWEEP_RUNS 500
/* At most this many runs' leftovers are deleted in one sweep. */
#define SWEEP_IDS 256
/* The pages of 500 objects of a kind a sweep reads in one namespace. */
#define SWEEP_PAGES 20

/* RFC 3339 to Unix ms; 0 when absent or unreadable. */
static int64_t rfc3339_ms(const char *s)
{
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	if (!s || !strptime(s, "%Y-%m-%dT%H:%M:%S", &tm))
		return 0;
	return (int64_t)timegm(&tm) * 1000;
}

static void copy_str(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

static bool cond_true(const berth_node *conds, const char *type, const berth_node **out)
{
	for (size_t i = 0; conds && conds->kind == BERTH_NODE_SEQ && i < conds->len; i++) {
		const berth_node *c = conds->u.items[i];
		const char *t = berth_node_text(berth_node_get(c, "type"));
		const char *st = berth_node_text(berth_node_get(c, "status"));
		if (t && st && !strcmp(t, type) && !strcmp(st, "True")) {
			if (out)
				*out = c;
			return true;
		}
	}
	return false;
}

/* A create refused by admission for a reason that does not pass: a missing
 * PriorityClass, pod security, a webhook's refusal; not a quota (it frees
 * up), nor a namespace too new for its ServiceAccount. */
static bool permanent(const char *reason, const char *message)
{
	return reason && message && !strcmp(reason, "FailedCreate") && strstr(message, "forbidden") &&
	       !strstr(message, "exceeded quota") && !strstr(message, "status unknown for quota") &&
	       !strstr(message, "serviceaccount");
}

/*
 * The worker a pod is of a distributed job, -1 for none: an Indexed Job's
 * (a JobSet's too) pod its completion index (an annotation); an operator's
 * pod by the operator's labels (rank_selector reads them the same way): a
 * PyTorchJob's Master is worker 0, its Worker i worker i + 1; an MPIJob's
 * Worker i is worker i, and its Launcher none.
 */
int kpod_worker(const berth_node *obj)
{
	const berth_node *labels = berth_node_at(obj, "metadata.labels");
	const char *ix = berth_node_text(berth_node_get(berth_node_at(obj, "metadata.annotations"),
							"batch.kubernetes.io/job-completion-index"));
	const char *type = berth_node_text(berth_node_get(labels, KUBEFLOW_REPLICA_TYPE));
	const char *role = berth_node_text(berth_node_get(labels, KUBEFLOW_JOB_ROLE));
	int add = 0;
	if (!ix && type) { /* a PyTorchJob's */
		ix = berth_node_text(berth_node_get(labels, KUBEFLOW_REPLICA_INDEX));
		add = !strcmp(type, "worker") ? 1 : !strcmp(type, "master") ? 0 : -1;
	} else if (!ix && role && !strcmp(role, "worker")) { /* an MPIJob's */
		ix = berth_node_text(berth_node_get(labels, KUBEFLOW_REPLICA_INDEX));
	}
	char *end;
	long n = ix && *ix && add >= 0 ? strtol(ix, &end, 10) : -1;
	if (n < 0 || *end || n >= BERTH_WORKERS_MAX - add) /* (n + add overflowed at LONG_MAX) */
		return -1;
	return (int)n + add;
}

static void pod_read(kpod *p, const berth_node *obj)
{
	memset(p, 0, sizeof(*p));
	p->exit_code = -1;
	p->index = kpod_worker(obj);
	copy_str(p->name, sizeof(p->name), berth_node_text(berth_node_at(obj, "metadata.name")));
	copy_str(p->created, sizeof(p->created), berth_node_text(berth_node_at(obj, "metadata.creationTimestamp")));
	const berth_node *st = berth_node_get(obj, "status");
	copy_str(p->phase, sizeof(p->phase), berth_node_text(berth_node_get(st, "phase")));
	p->started = rfc3339_ms(berth_node_text(berth_node_get(st, "startTime")));
	const berth_node *conds = berth_node_get(st, "conditions"), *c = NULL;
	p->ready = cond_true(conds, "Ready", NULL);
	const char *sreason = berth_node_text(berth_node_get(st, "reason"));
	const char *smsg = berth_node_text(berth_node_get(st, "message"));
	if (cond_true(conds, "DisruptionTarget", &c)) {
		const char *r = berth_node_text(berth_node_get(c, "reason"));
		const char *m = berth_node_text(berth_node_get(c, "message"));
		p->preempted = r && strstr(r, "Preemption");
		p->evicted = !p->preempted;
		snprintf(p->reason, sizeof(p->reason), "%s: %s", p->preempted ? "preempted" : "disrupted",
			 m ? m : r ? r : "the pod was disrupted");
	}
	if (sreason && !strcmp(sreason, "Evicted")) {
		p->evicted = true;
		snprintf(p->reason, sizeof(p->reason), "evicted: %s", smsg ? smsg : "by the kubelet");
	}
	/* a pod the scheduler cannot place */
	for (size_t i = 0; conds && conds->kind == BERTH_NODE_SEQ && i < conds->len && !p->reason[0]; i++) {
		const berth_node *k = conds->u.items[i];
		const char *t = berth_node_text(berth_node_get(k, "type"));
		const char *s = berth_node_text(berth_node_get(k, "status"));
		const char *r = berth_node_text(berth_node_get(k, "reason"));
		if (t && !strcmp(t, "PodScheduled") && s && !strcmp(s, "False")) {
			const char *m = berth_node_text(berth_node_get(k, "message"));
			snprintf(p->reason, sizeof(p->reason), "%s: %s",
				 r && !strcmp(r, "Unschedulable") ? "unschedulable" : r ? r : "not scheduled",
				 m ? m : "no node fits it");
		}
	}
	const berth_node *cs = berth_node_get(st, "containerStatuses");
	for (size_t i = 0; cs && cs->kind == BERTH_NODE_SEQ && i < cs->len; i++) {
		const berth_node *c1 = cs->u.items[i];
		const berth_node *term = berth_node_at(c1, "state.terminated");
		if (!term)
			term = berth_node_at(c1, "lastState.terminated");
		const berth_node *wait = berth_node_at(c1, "state.waiting");
		if (term) {
			const char *r = berth_node_text(berth_node_get(term, "reason"));
			const char *code = berth_node_text(berth_node_get(term, "exitCode"));
			const char *m = berth_node_text(berth_node_get(term, "message"));
			p->exit_code = code ? (int)strtol(code, NULL, 10) : -1;
			p->finished = rfc3339_ms(berth_node_text(berth_node_get(term, "finishedAt")));
			if (r && !strcmp(r, "OOMKilled")) {
				p->oom = true;
				snprintf(p->reason, sizeof(p->reason),
					 "OOMKilled: the container went over its memory limit");
			} else if (!p->reason[0] && r && p->exit_code) {
				snprintf(p->reason, sizeof(p->reason), "%s: exit code %d%s%s", r, p->exit_code,
					 m ? ": " : "", m ? m : "");
			}
		}
		if (wait && !p->reason[0] && !term) {
			const char *r = berth_node_text(berth_node_get(wait, "reason"));
			const char *m = berth_node_text(berth_node_get(wait, "message"));
			if (r && strcmp(r, "ContainerCreating") && strcmp(r, "PodInitializing"))
				snprintf(p->reason, sizeof(p->reason), "%s%s%s", r, m ? ": " : "",
					 m ? m : "");
		}
	}
	if (!p->reason[0] && (sreason || smsg) && !strcmp(p->phase, "Failed"))
		snprintf(p->reason, sizeof(p->reason), "%s%s%s", sreason ? sreason : "",
			 sreason && smsg ? ": " : "", smsg ? smsg : "");
}

/*
 * An operator's workload: a PyTorchJob and an MPIJob end with their
 * condition Succeeded or Failed (Created, Running, Restarting say nothing
 * berth's pods do not), a JobSet with Completed or Failed.
 */
static void operator_read(kview *v, const berth_node *conds)
{
	const berth_node *c = NULL;
	bool jobset = !strcmp(v->kind, "JobSet");
	if (cond_true(conds, jobset ? "Completed" : "Succeeded", NULL)) {
		v->complete = true;
	} else if (cond_true(conds, "Failed", &c)) {
		const char *r = berth_node_text(berth_node_get(c, "reason"));
		const char *m = berth_node_text(berth_node_get(c, "message"));
		v->failed = true;
		snprintf(v->reason, sizeof(v->reason), "%s%s%s", r ? r : "Failed", m ? ": " : "", m ? m : "");
		if (!v->finished)
			v->finished = rfc3339_ms(berth_node_text(berth_node_get(c, "lastTransitionTime")));
	}
}

static void workload_read(kview *v, const berth_node *obj)
{
	v->seen = true;
	v->gone = false;
	copy_str(v->uid, sizeof(v->uid), berth_node_text(berth_node_at(obj, "metadata.uid")));
	v->complete = v->failed = false;
	v->reason[0] = '\0';
	const berth_node *st = berth_node_get(obj, "status");
	const berth_node *conds = berth_node_get(st, "conditions"), *c = NULL;
	v->started = rfc3339_ms(berth_node_text(berth_node_get(st, "startTime")));
	v->finished = rfc3339_ms(berth_node_text(berth_node_get(st, "completionTime")));
	const char *ready = berth_node_text(berth_node_get(st, "readyReplicas"));
	v->ready = ready ? (int)strtol(ready, NULL, 10) : 0;
	switch (v->action) {
	case BERTH_ACTION_JOB:
		kueue_job_read(&v->kueue, obj);
		if (strcmp(v->kind, "Job")) {
			operator_read(v, conds);
			break;
		}
		if (cond_true(conds, "Complete", NULL) || cond_true(conds, "SuccessCriteriaMet", NULL))
			v->complete = true;
		else if (cond_true(conds, "Failed", &c) || cond_true(conds, "FailureTarget", &c)) {
			const char *r = berth_node_text(berth_node_get(c, "reason"));
			const char *m = berth_node_text(berth_node_get(c, "message"));
			v->failed = true;
			snprintf(v->reason, sizeof(v->reason), "%s%s%s", r ? r : "Failed", m ? ": " : "",
				 m ? m : "");
			const char *t = berth_node_text(berth_node_get(c, "lastTransitionTime"));
			if (!v->finished)
				v->finished = rfc3339_ms(t);
		}
		break;
	case BERTH_ACTION_SERVE:
	case BERTH_ACTION_DEPLOY:
		for (size_t i = 0; conds && conds->kind == BERTH_NODE_SEQ && i < conds->len; i++) {
			const berth_node *k = conds->u.items[i];
			const char *r = berth_node_text(berth_node_get(k, "reason"));
			/* not final: the Deployment goes on trying (a node may come) */
			if (r && !strcmp(r, "ProgressDeadlineExceeded")) {
				const char *m = berth_node_text(berth_node_get(k, "message"));
				snprintf(v->reason, sizeof(v->reason), "ProgressDeadlineExceeded%s%s",
					 m ? ": " : "", m ? m : "");
			}
		}
		/* its ReplicaSet cannot create pods (the words of the ReplicaSet's
		 * Events); one that does not pass, held REFUSED_GRACE_MS, ends the run */
		v->refused = false;
		if (cond_true(conds, "ReplicaFailure", &c)) {
			const char *r = berth_node_text(berth_node_get(c, "reason"));
			const char *m = berth_node_text(berth_node_get(c, "message"));
			int64_t since = rfc3339_ms(berth_node_text(berth_node_get(c, "lastTransitionTime")));
			snprintf(v->reason, sizeof(v->reason), "%.60s: %.380s (its ReplicaSet, the cluster's words)",
				 r ? r : "ReplicaFailure", m ? m : "");
			v->refused = permanent(r, m) && since && store_now_ms() - since >= REFUSED_GRACE_MS;
		}
		break;
	case BERTH_ACTION_CRONJOB: {
		const char *last = berth_node_text(berth_node_get(st, "lastScheduleTime"));
		snprintf(v->reason, sizeof(v->reason), "scheduled%s%s", last ? "; last job at " : "",
			 last ? last : "; no job yet");
		break;
	}
	}
}

static void view_pod(kview *v, const char *type, const berth_node *obj)
{
	const char *name = berth_node_text(berth_node_at(obj, "metadata.name"));
	if (!name)
		return;
	kpod seen;
	pod_read(&seen, obj);
	if (v->worker_filter && seen.index != v->worker_filter - 1)
		return;
	/* a worker's state: its newest pod's (a deleted one's last phase stays) */
	if (seen.index >= 0 && seen.index < BERTH_WORKERS_MAX && strcmp(type, "DELETED") &&
	    strcmp(seen.created, v->workers[seen.index].created) >= 0) {
		copy_str(v->workers[seen.index].created, sizeof(v->workers[0].created), seen.created);
		copy_str(v->workers[seen.index].phase, sizeof(v->workers[0].phase), seen.phase);
	}
	size_t i = 0;
	while (i < v->npods && strcmp(v->pods[i].name, name))
		i++;
	if (!strcmp(type, "DELETED")) {
		if (i < v->npods)
			v->pods[i] = v->pods[--v->npods];
		return;
	}
	if (i == v->npods && v->npods == VIEW_PODS) {
		/* keep the newest: this one takes the oldest's place */
		i = 0;
		for (size_t k = 1; k < v->npods; k++)
			if (strcmp(v->pods[k].created, v->pods[i].created) < 0)
				i = k;
	} else if (i == v->npods)
		v->npods++;
	v->pods[i] = seen;
	/* the claims it mounts: their Events say why a pod that needs them waits */
	const berth_node *vols = berth_node_at(obj, "spec.volumes");
	for (size_t k = 0; vols && vols->kind == BERTH_NODE_SEQ && k < vols->len; k++) {
		const char *claim = berth_node_text(berth_node_at(vols->u.items[k], "persistentVolumeClaim.claimName"));
		size_t c = 0;
		while (claim && c < v->nclaims && strcmp(v->claims[c], claim))
			c++;
		/* (a name, since it goes into a field selector) */
		if (claim && c == v->nclaims && c < VIEW_CLAIMS && !berth_check_dns_subdomain(claim))
			copy_str(v->claims[v->nclaims++], sizeof(v->claims[c]), claim);
	}
}

/* The newest pod (by creation), or NULL. */
static const kpod *newest_pod(const kview *v)
{
	const kpod *best = NULL;
	for (size_t i = 0; i < v->npods; i++)
		if (!best || strcmp(v->pods[i].created, best->created) > 0 ||
		    (!strcmp(v->pods[i].created, best->created) && strcmp(v->pods[i].name, best->name) > 0))
			best = &v->pods[i];
	return best;
}

/* A distributed job's workers' states, by index ("Running,Pending"): each
 * one's newest pod's phase; Pending for one with no pod yet. NULL for a run
 * of one worker, or out of memory. */
static char *worker_states(const kview *v, int64_t workers)
{
	if (workers < 2)
		return NULL;
	berth_buf b = BERTH_BUF_INIT;
	for (int64_t w = 0; w < workers && w < BERTH_WORKERS_MAX; w++) {
		const char *ph = v->workers[w].phase;
		berth_state st = !strcmp(ph, "Running")	  ? BERTH_STATE_RUNNING
				 : !strcmp(ph, "Succeeded") ? BERTH_STATE_SUCCEEDED
				 : !strcmp(ph, "Failed")    ? BERTH_STATE_FAILED
							    : BERTH_STATE_PENDING;
		berth_buf_printf(&b, "%s%s", w ? "," : "", berth_state_name(st));
	}
	return b.failed ? (berth_buf_release(&b), NULL) : berth_buf_detach(&b);
}

/* Maps the view to a state and a one-line reason. */
static berth_state view_state(const kview *v, bool stopping, char *reason, size_t len, const kpod **pod)
{
	const kpod *p = newest_pod(v);
	*pod = p;
	reason[0] = '\0';
	if (v->gone) {
		if (stopping)
			return BERTH_STATE_STOPPED;
		/* a finished Job that the cluster's TTL controller removed
		 * (cleanup.ttl_after_finished): its end, as its Events tell it */
		if (v->complete) {
			snprintf(reason, len, "its %s was removed by the cluster after it finished", v->kind);
			return BERTH_STATE_SUCCEEDED;
		}
		if (v->failed) {
			snprintf(reason, len, "%.450s; its %s was removed by the cluster since", v->reason, v->kind);
			return BERTH_STATE_FAILED;
		}
		if (v->action == BERTH_ACTION_JOB && v->gone_since &&
		    store_now_ms() - v->gone_since < GONE_GRACE_MS) {
			snprintf(reason, len, GONE_UNTOLD, v->kind);
			return v->was == BERTH_STATE_RUNNING ? BERTH_STATE_RUNNING : BERTH_STATE_PENDING;
		}
		snprintf(reason, len, "its %s was deleted from the cluster outside berth", v->kind);
		return BERTH_STATE_FAILED;
	}
	if (v->complete)
		return BERTH_STATE_SUCCEEDED;
	if (v->failed) {
		/* the pod's own reason says more than BackoffLimitExceeded */
		if (p && (p->oom || p->evicted || p->preempted || p->exit_code > 0) && p->reason[0])
			snprintf(reason, len, "%.300s (the %s: %.250s)", p->reason, v->kind, v->reason);
		else
			copy_str(reason, len, v->reason);
		return BERTH_STATE_FAILED;
	}
	if (v->action == BERTH_ACTION_CRONJOB) {
		copy_str(reason, len, v->reason);
		return BERTH_STATE_RUNNING;
	}
	/* no pods until Kueue resumes it (or takes them back): Kueue says why */
	if (v->action == BERTH_ACTION_JOB && v->kueue.suspended)
		return kueue_state(&v->kueue, reason, len);
	bool running = false;
	for (size_t i = 0; i < v->npods; i++)
		if (!strcmp(v->pods[i].phase, "Running") ||
		    /* a Job's pod that ended before the Job says Complete or Failed */
		    (v->action == BERTH_ACTION_JOB && (!strcmp(v->pods[i].phase, "Succeeded") ||
						       !strcmp(v->pods[i].phase, "Failed"))))
			running = true;
	if (v->action != BERTH_ACTION_JOB)
		running = running && (v->ready > 0 || (p && p->ready));
	if (v->said_of_claim && !running)
		copy_str(reason, len, v->said);
	else if (p && p->reason[0] && (p->preempted || p->evicted) &&
		 (!strcmp(v->kind, "PyTorchJob") || !strcmp(v->kind, "MPIJob")))
		copy_str(reason, len, p->reason); /* no pod failure policy there: its operator may not */
	else if (p && p->reason[0] && (p->preempted || p->evicted))
		snprintf(reason, len, "%s; its %s starts it again", p->reason,
			 !strcmp(v->kind, "JobSet") ? "Job" : v->kind);
	else if (p && p->reason[0])
		copy_str(reason, len, p->reason);
	else if (v->reason[0])
		copy_str(reason, len, v->reason);
	if (running)
		return BERTH_STATE_RUNNING;
	if (!reason[0] && v->said[0])
		copy_str(reason, len, v->said);
	/* a refusal that does not pass: the workload would wait for ever */
	if (v->refused && !v->npods && reason[0])
		return BERTH_STATE_FAILED;
	if (!reason[0])
		copy_str(reason, len, !v->seen ? "submitted to the cluster" :
			 !v->npods ? "waiting for its pod to be created" : "waiting for its pod to start");
	return BERTH_STATE_PENDING;
}

/* ---- recording what the cluster says ---------------------------------------------------- */

/* Text from the cluster made fit for a one-line reason: control characters
 * (ESC, CR, LF..., and the C1 ones: CSI and NEL as UTF-8) and LINE and
 * PARAGRAPH SEPARATOR become spaces, and a UTF-8 sequence cut by a buffer's
 * end, or not UTF-8 at all, is dropped. */
static void one_line(char *s)
{
	size_t n = strlen(s), w = 0;
	for (size_t r = 0; r < n;) {
		unsigned char c = (unsigned char)s[r], c1 = (unsigned char)s[r + 1];
		size_t k = berth_utf8_len(s + r, n - r);
		if (!k) {
			r++;
			continue;
		}
		if ((k == 1 && (c < 0x20 || c == 0x7f)) || (k == 2 && c == 0xc2 && c1 < 0xa0) ||
		    (k == 3 && c == 0xe2 && c1 == 0x80 && ((unsigned char)s[r + 2] | 1) == 0xa9))
			s[w++] = ' ';
		else
			memmove(s + w, s + r, k), w += k;
		r += k;
	}
	s[w] = 0;
}

/* Records what v says of run id; *ended (may be NULL) is set when this
 * record made it final (once, whoever sees it first). */
static int record_view(berth_backend *b, const char *id, const kview *v, bool *ended,
		       berth_error **err)
{
	if (store_begin(b->st, err))
		return -BERTH_EIO;
	store_run *r = NULL;
	int rc = store_run_get(b->st, id, &r, err);
	if (rc || berth_state_final(r->info.state)) {
		store_rollback(b->st);
		store_run_free(r);
		return rc;
	}
	char reason[600];
	const kpod *p;
	berth_state st = view_state(v, r->stop_requested, reason, sizeof(reason), &p);
	one_line(reason);
	berth_run_info *i = &r->info;
	/* a wait that the cluster explained stays explained until something says
	 * more: a view without its Events (a watch) does not take the words back */
	if (st == BERTH_STATE_PENDING && i->state == BERTH_STATE_PENDING && !v->said[0] && i->reason &&
	    strstr(i->reason, ", the cluster's words)") &&
	    (!strcmp(reason, "waiting for its pod to be created") ||
	     !strcmp(reason, "submitted to the cluster")))
		copy_str(reason, sizeof(reason), i->reason);
	/* its workers' states, as long as their pods are seen (a final view
	 * without them keeps what was last seen) */
	char *ws = v->npods ? worker_states(v, i->workers) : NULL;
	bool workers_changed = ws && strcmp(ws, i->worker_states ? i->worker_states : "");
	if (workers_changed) {
		free(i->worker_states);
		i->worker_states = ws;
	} else {
		free(ws);
	}
	bool reason_changed = strcmp(reason, i->reason ? i->reason : "") != 0;
	bool changed = st != i->state || reason_changed || workers_changed;
	if (!changed) {
		store_rollback(b->st);
		store_run_free(r);
		return 0;
	}
	berth_state before = i->state;
	i->state = st;
	free(i->reason);
	i->reason = reason[0] ? berth_strdup(reason) : NULL;
	int64_t now = store_now_ms();
	if (st != BERTH_STATE_PENDING && !i->started)
		i->started = v->started ? v->started : p && p->started ? p->started : now;
	if (berth_state_final(st)) {
		i->finished = v->finished ? v->finished : p && p->finished ? p->finished : now;
		if (p) {
			i->exit_code = p->exit_code;
			i->oom_killed = p->oom;
		}
	}
	if (p)
		i->attempts = (int)(v->npods > (size_t)i->attempts ? v->npods : (size_t)i->attempts);
	rc = store_run_update(b->st, r, err);
	if (!rc)
		rc = store_commit(b->st, err);
	if (rc)
		store_rollback(b->st);
	else if (st != before)
		store_event(b->st, id, berth_state_name(st), i->reason);
	else if (reason_changed) /* the same state, a new reason (a worker's state alone: none) */
		store_event(b->st, id, "Waiting", i->reason);
	if (!rc && ended && berth_state_final(st))
		*ended = true;
	store_run_free(r);
	return rc;
}

typedef struct follower {
	berth_backend *b;
	const char *id;
	kview view;
	bool stopping;
	bool until_final;   /* a wait: done when the run is final */
	bool until_pod;     /* a log: done when a pod has started */
	bool ended;         /* the run became final while followed */
	const target *t;    /* where it is */
	bool outcome_read;  /* the Events of a gone Job were asked for its end */
	bool pods_synced;   /* the pods are listed whole */
	bool view_synced;   /* the workload is listed */
} follower;

static void read_outcome(berth_backend *b, const target *t, kview *v);

/* Since when berth knows the run's Job gone with its end untold: when its
 * record's reason became GONE_UNTOLD (the run's event says; without one, long
 * ago), else now; and its state until then. */
static void gone_since(berth_backend *b, const char *id, kview *v)
{
	store_run *r = NULL;
	store_event_row *ev = NULL;
	size_t n = 0;
	berth_error *e = NULL;
	char untold[200];
	snprintf(untold, sizeof(untold), GONE_UNTOLD, v->kind);
	v->gone_since = store_now_ms();
	v->was = BERTH_STATE_PENDING;
	if (!store_run_get(b->st, id, &r, &e)) {
		v->was = r->info.state;
		if (r->info.reason && !strcmp(r->info.reason, untold)) {
			v->gone_since = 1;
			if (!store_event_list(b->st, id, &ev, &n, &e))
				for (size_t i = n; i-- > 0;)
					if (ev[i].message && !strcmp(ev[i].message, untold)) {
						v->gone_since = ev[i].time;
						break;
					}
		}
	}
	store_event_list_free(ev, n);
	store_run_free(r);
	berth_error_free(e);
}

static int follow_done(follower *f, berth_error **err)
{
	if (f->view.gone && !f->stopping && f->view.action == BERTH_ACTION_JOB && !f->view.complete &&
	    !f->view.failed) {
		if (!f->outcome_read) {
			f->outcome_read = true;
			read_outcome(f->b, f->t, &f->view);
		}
		if (!f->view.complete && !f->view.failed && !f->view.gone_since)
			gone_since(f->b, f->id, &f->view);
	}
	char reason[600];
	const kpod *p;
	int rc = record_view(f->b, f->id, &f->view, &f->ended, err);
	if (rc)
		return rc;
	berth_state st = view_state(&f->view, f->stopping, reason, sizeof(reason), &p);
	if (f->until_final && berth_state_final(st))
		return 1;
	if (f->until_pod && (berth_state_final(st) ||
			     (p && (strcmp(p->phase, "Pending") || p->exit_code >= 0))))
		return 1;
	return 0;
}

static int on_workload(void *ctx, const char *type, const berth_node *obj, berth_error **err)
{
	follower *f = ctx;
	if (!strcmp(type, "RESET")) {
		f->view.seen = false;
		f->view.gone = true; /* until the list shows it */
		f->view_synced = false;
		return 0;
	}
	if (!strcmp(type, "SYNCED")) {
		f->view.seen = true; /* as listed: there, or gone */
		f->view_synced = true;
		return f->pods_synced ? follow_done(f, err) : 0;
	}
	const char *name = berth_node_text(berth_node_at(obj, "metadata.name"));
	if (!name || strcmp(name, f->view.workload))
		return 0; /* a CronJob's Jobs carry the run's label too */
	if (!strcmp(type, "DELETED")) {
		f->view.gone = true;
		f->view.seen = true;
	} else {
		workload_read(&f->view, obj);
		/* a suspended Job's reason is its Kueue Workload's, read with each
		 * change of the Job (and each list) */
		if (f->view.kueue.suspended)
			kueue_ask(KUBE(f->b)->api, f->t->ns, f->t->name, f->view.uid, &f->view.kueue);
	}
	/* while a list runs, the view is not whole yet */
	return f->view_synced && f->pods_synced ? follow_done(f, err) : 0;
}

static int on_pod(void *ctx, const char *type, const berth_node *obj, berth_error **err)
{
	follower *f = ctx;
	if (!strcmp(type, "RESET")) {
		f->view.npods = 0;
		f->pods_synced = false;
		return 0;
	}
	if (!strcmp(type, "SYNCED"))
		f->pods_synced = true;
	else
		view_pod(&f->view, type, obj);
	return f->pods_synced && f->view_synced ? follow_done(f, err) : 0;
}

static berth_action action_of(const char *name)
{
	for (int a = BERTH_ACTION_JOB; a <= BERTH_ACTION_CRONJOB; a++)
		if (name && !strcmp(name, berth_action_name((berth_action)a)))
			return (berth_action)a;
	return BERTH_ACTION_JOB;
}

/* Reads the run's record and where it lives. */
static int run_target(berth_backend *b, const char *id, store_run **r, target *t, berth_error **err)
{
	int rc = store_run_get(b->st, id, r, err);
	if (rc)
		return rc;
	const char *server = KUBE(b)->api ? kube_cfg(KUBE(b)->api)->server : NULL;
	if (parse_target((*r)->info.target, t))
		rc = berth_fail(err, BERTH_EINTERNAL, "run \"%s\" has no place on a cluster recorded", id);
	else if (server && t->server[0] && strcmp(server, t->server))
		rc = berth_fail(err, BERTH_EARG,
				"run \"%s\" is on the cluster at %s, and the kubeconfig's context (%s) is "
				"the one at %s: pick its context with --context or --kubeconfig",
				id, t->server, kube_cfg(KUBE(b)->api)->context ? kube_cfg(KUBE(b)->api)->context : "?",
				server);
	if (rc) {
		store_run_free(*r);
		*r = NULL;
	}
	return rc;
}

/* The reasons of the Events that tell how a workload of kind ended:
 * a Job's (the Job controller's), the operators' (kind + Succeeded or
 * Failed: the Training Operator's and the MPI Operator's), a JobSet's (its
 * conditions' reasons). */
static bool event_says(const char *kind, const char *reason, bool success)
{
	static const char *const job_ok[] = {"Completed"};
	static const char *const job_fail[] = {"BackoffLimitExceeded", "DeadlineExceeded"};
	static const char *const jobset_ok[] = {"AllJobsCompleted"};
	static const char *const jobset_fail[] = {"FailedJobs", "ReachedMaxRestarts", "FailJobSetAction"};
	const char *const *list;
	size_t n;
	if (!strcmp(kind, "Job"))
		list = success ? job_ok : job_fail, n = success ? 1 : 2;
	else if (!strcmp(kind, "JobSet"))
		list = success ? jobset_ok : jobset_fail, n = success ? 1 : 3;
	else {
		/* the MPI Operator says its Launcher's failure in the Job's words */
		size_t k = strlen(kind);
		return (!strncmp(reason, kind, k) && !strcmp(reason + k, success ? "Succeeded" : "Failed")) ||
		       (!success && (!strncmp(reason, "BackoffLimitExceeded", 20) ||
				     !strncmp(reason, "DeadlineExceeded", 16)));
	}
	for (size_t i = 0; i < n; i++)
		if (!strcmp(reason, list[i]))
			return true;
	return false;
}

/* How a Job (or an operator's workload) that is gone ended, from its Events
 * (kept an hour by the API server): Completed, or BackoffLimitExceeded /
 * DeadlineExceeded with their words (event_says); nothing when they do not
 * say. */
static void read_outcome(berth_backend *b, const target *t, kview *v)
{
	berth_buf path = BERTH_BUF_INIT;
	berth_buf_printf(&path, "/api/v1/namespaces/%s/events?fieldSelector=involvedObject.kind%%3D%s%%2C"
			 "involvedObject.name%%3D%s&limit=100", t->ns, t->res->kind, t->name);
	kube_reply rep;
	memset(&rep, 0, sizeof(rep));
	berth_error *e = NULL;
	int rc = path.failed ? -1 : kube_request(KUBE(b)->api, "GET", path.data, NULL, NULL, 0, &rep, &e);
	berth_buf_release(&path);
	berth_error_free(e);
	berth_arena *a = !rc && rep.status == 200 ? berth_arena_new() : NULL;
	const berth_node *root = NULL;
	if (a && !berth_json_root(a, "the Job's events", rep.body, rep.len, &root, NULL)) {
		const berth_node *items = berth_node_get(root, "items");
		for (size_t i = 0; items && items->kind == BERTH_NODE_SEQ && i < items->len; i++) {
			const char *r = berth_node_text(berth_node_get(items->u.items[i], "reason"));
			const char *m = berth_node_text(berth_node_get(items->u.items[i], "message"));
			if (r && event_says(t->res->kind, r, true))
				v->complete = true;
			else if (r && event_says(t->res->kind, r, false)) {
				v->failed = true;
				snprintf(v->reason, sizeof(v->reason), "%s%s%.400s", r, m ? ": " : "", m ? m : "");
			}
		}
	}
	berth_arena_free(a);
	kube_reply_free(&rep);
}

/* The Warning Events about one object: the newest into *best (in arena a),
 * and the span of the refusals that do not pass (a refusal naming the
 * generated pod is a new Event each time). uid, when given, must be the
 * object's: an Event of an earlier object of that name is not its. The
 * HTTP status of the list, or 0 when it could not be asked. */
typedef struct kevents {
	const berth_node *best;
	int64_t best_at, refused_first, refused_last;
} kevents;

static long events_of(berth_backend *b, berth_arena *a, const char *ns, const char *kind, const char *name,
		      const char *uid, kevents *ev)
{
	memset(ev, 0, sizeof(*ev));
	berth_buf path = BERTH_BUF_INIT;
	berth_buf_printf(&path, "/api/v1/namespaces/%s/events?fieldSelector=type%%3DWarning%%2C"
			 "involvedObject.kind%%3D%s%%2CinvolvedObject.name%%3D%s&limit=100", ns, kind, name);
	kube_reply rep;
	memset(&rep, 0, sizeof(rep));
	berth_error *e = NULL;
	long status = 0;
	if (!path.failed && !kube_request(KUBE(b)->api, "GET", path.data, NULL, NULL, 0, &rep, &e))
		status = rep.status;
	berth_error_free(e);
	berth_buf_release(&path);
	const berth_node *root = NULL;
	if (status == 200 && !berth_json_root(a, "the run's events", rep.body, rep.len, &root, NULL)) {
		const berth_node *items = berth_node_get(root, "items");
		for (size_t i = 0; items && items->kind == BERTH_NODE_SEQ && i < items->len; i++) {
			const berth_node *it = items->u.items[i];
			const char *u = berth_node_text(berth_node_at(it, "involvedObject.uid"));
			if (uid && uid[0] && (!u || strcmp(u, uid)))
				continue;
			int64_t at = rfc3339_ms(berth_node_text(berth_node_get(it, "lastTimestamp")));
			if (!at)
				at = rfc3339_ms(berth_node_text(berth_node_get(it, "eventTime")));
			int64_t first = rfc3339_ms(berth_node_text(berth_node_get(it, "firstTimestamp")));
			if (first && permanent(berth_node_text(berth_node_get(it, "reason")),
					       berth_node_text(berth_node_get(it, "message")))) {
				if (!ev->refused_first || first < ev->refused_first)
					ev->refused_first = first;
				if (at > ev->refused_last)
					ev->refused_last = at;
			}
			if (!ev->best || at > ev->best_at) {
				ev->best = it;
				ev->best_at = at;
			}
		}
	}
	kube_reply_free(&rep);
	return status;
}

/*
 * What the cluster says of a run that waits with nothing else to say: the
 * newest Warning Event about a claim its pods mount (FailedBinding,
 * ProvisioningFailed: they say why its pod cannot be placed), else about its
 * newest pod (FailedMount...), else about its workload itself (FailedCreate),
 * into v->said. v->refused when the workload's is a refusal that has lasted
 * REFUSED_GRACE_MS from its first report to its last, its last is recent,
 * and no pod exists (one that does says the refusal has passed). Best
 * effort: a cluster that cannot be asked says nothing, and an identity that
 * may not list Events is told so.
 */
static void read_events(berth_backend *b, const target *t, kview *v)
{
	berth_arena *a = berth_arena_new();
	if (!a)
		return;
	const kpod *p = newest_pod(v);
	kevents ev = {0};
	const char *kind = NULL, *name = NULL;
	long status = 0;
	bool claim = false;
	for (size_t i = 0; p && i < v->nclaims && !ev.best; i++) {
		status = events_of(b, a, t->ns, "PersistentVolumeClaim", v->claims[i], NULL, &ev);
		kind = "PersistentVolumeClaim", name = v->claims[i], claim = true;
	}
	if (status != 403 && !ev.best && p && !berth_check_dns_subdomain(p->name)) {
		status = events_of(b, a, t->ns, "Pod", p->name, NULL, &ev);
		kind = "Pod", name = p->name, claim = false;
	}
	if (status != 403 && !ev.best) {
		status = events_of(b, a, t->ns, t->res->kind, t->name, v->uid, &ev);
		kind = t->res->kind, name = t->name;
	}
	if (ev.best) {
		const char *r = berth_node_text(berth_node_get(ev.best, "reason"));
		const char *m = berth_node_text(berth_node_get(ev.best, "message"));
		snprintf(v->said, sizeof(v->said), "%.60s: %.300s (%s %.120s, the cluster's words)",
			 r ? r : "Warning", m ? m : "", kind, name);
		one_line(v->said);
		v->said_of_claim = claim;
		int64_t now = store_now_ms();
		v->refused = !strcmp(kind, t->res->kind) && permanent(r, m) && !v->npods && ev.refused_first &&
			     ev.refused_last - ev.refused_first >= REFUSED_GRACE_MS &&
			     now - ev.refused_last < 5 * REFUSED_GRACE_MS;
	} else if (status == 403) {
		snprintf(v->said, sizeof(v->said), "%s; berth may not list the Events of namespace %s, "
			 "which would say why (grant list on events: deploy/kubernetes/rbac.yaml)",
			 !v->seen ? "submitted to the cluster" : !v->npods ? "waiting for its pod to be created"
			 : "waiting for its pod to start", t->ns);
	}
	berth_arena_free(a);
}

/*
 * Follows a run: lists (and with watch, then watches) its workload and its
 * pods. until_final / until_pod say when a watch is done; without watch it
 * only lists, once.
 */
static int follow_run(berth_backend *b, const char *id, bool watch, bool until_final, bool until_pod,
		      long timeout_ms, berth_error **err)
{
	store_run *r;
	target t;
	int rc = kube_connect(b, err);
	if (!rc)
		rc = run_target(b, id, &r, &t, err);
	if (rc)
		return rc;
	follower f;
	memset(&f, 0, sizeof(f));
	f.b = b;
	f.id = id;
	f.t = &t;
	f.view.action = action_of(r->info.action);
	f.view.kind = t.res->kind;
	f.view.workload = t.name;
	f.stopping = r->stop_requested;
	f.until_final = until_final;
	f.until_pod = until_pod;
	char selector[300];
	snprintf(selector, sizeof(selector), RUN_LABEL "=%s", id);
	berth_buf wpath = BERTH_BUF_INIT, ppath = BERTH_BUF_INIT;
	kpath(&wpath, t.res, t.ns, NULL);
	kpath(&ppath, POD_KIND, t.ns, NULL);
	kube_watch w[2];
	memset(w, 0, sizeof(w));
	w[0] = (kube_watch){.path = ppath.data, .selector = selector, .event = on_pod, .ctx = &f};
	w[1] = (kube_watch){.path = wpath.data, .selector = selector, .event = on_workload, .ctx = &f};
	if (wpath.failed || ppath.failed)
		rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
	else if (!watch) {
		/* pods first: the workload's event decides with them in view */
		rc = kube_list(KUBE(b)->api, &w[0], err);
		if (!rc)
			rc = kube_list(KUBE(b)->api, &w[1], err);
		if (rc > 0)
			rc = 0;
		/* a run that waits with nothing to say: what the cluster says of it */
		char reason[600];
		const kpod *p;
		/* (a run submitted a moment ago has no Events yet) */
		if (!rc && store_now_ms() - r->info.created > 2000 &&
		    view_state(&f.view, f.stopping, reason, sizeof(reason), &p) == BERTH_STATE_PENDING &&
		    (!strcmp(reason, "waiting for its pod to be created") ||
		     !strcmp(reason, "waiting for its pod to start") || !f.view.seen ||
		     /* a claim that does not bind says why better than the scheduler */
		     (f.view.nclaims && !strncmp(reason, "unschedulable: ", 15)))) {
			read_events(b, &t, &f.view);
			if (f.view.said[0])
				rc = record_view(b, id, &f.view, &f.ended, err);
		}
		/* a server samples the use of its runs as it reconciles them */
		if (!rc && b->cached && !b->passive && !f.ended &&
		    view_state(&f.view, f.stopping, reason, sizeof(reason), &p) == BERTH_STATE_RUNNING)
			kube_sample_usage(b, id, t.ns, r->info.started, f.view.pods, f.view.npods);
	} else {
		rc = kube_watch_run(KUBE(b)->api, w, 2, timeout_ms, err);
	}
	berth_buf_release(&wpath);
	berth_buf_release(&ppath);
	store_run_free(r);
	/* its pods need its Secret no more: the values leave the cluster (the Job,
	 * its pods and claims stay, for their logs, until the run is deleted); a
	 * run the cluster refused has no pods, and its workload would be retried
	 * for ever: it goes */
	if (f.ended) {
		berth_error *e = NULL;
		/* before the cluster's TTL takes its pods, and their log, away */
		if (!f.view.refused)
			keep_log(b, id, &t);
		if (f.view.refused)
			delete_run_objects(b, id, &t, 0, &e);
		else
			delete_labelled(b, &kinds[0], t.ns, id, 0, &e);
		berth_error_free(e);
	}
	return rc;
}

/* ---- submit ---------------------------------------------------------------------------- */

/* The values of the run's secrets into the Secret's data (base64), from the store. */
static int secret_data(berth_backend *b, const berth_run *run, obuild *ob, onode *secret,
		       berth_error **err)
{
	onode *ann = o_get(o_get(secret, "metadata"), "annotations");
	onode *keys = o_get(ann, "berth.dev/secret-keys");
	if (!keys || !keys->s)
		return 0;
	onode *data = o_map(ob, secret, "data");
	unsigned char key[SECRET_KEY_BYTES];
	int rc = secret_key_load(b->home, 0, key, err);
	const char *project = run->spec.project.s ? run->spec.project.s : "default";
	char *list = berth_strdup(keys->s);
	if (!list)
		rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
	for (char *name = list, *next; !rc && name && *name; name = next) {
		next = strchr(name, ',');
		if (next)
			*next++ = '\0';
		else
			next = name + strlen(name);
		void *sealed = NULL;
		size_t slen, vlen = 0;
		char *value = NULL;
		rc = store_secret_get(b->st, project, name, &sealed, &slen, err);
		if (!rc && !sealed)
			rc = berth_fail(err, BERTH_EPOLICY, "secret \"%s\" does not exist in project \"%s\"",
					name, project);
		if (!rc)
			rc = secret_open(key, project, name, sealed, slen, &value, &vlen, err);
		if (!rc) {
			size_t blen = sodium_base64_ENCODED_LEN(vlen, sodium_base64_VARIANT_ORIGINAL);
			char *b64 = berth_arena_alloc(ob->arena, blen);
			if (!b64)
				rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
			else {
				sodium_bin2base64(b64, blen, (const unsigned char *)value, vlen,
						  sodium_base64_VARIANT_ORIGINAL);
				o_str(ob, data, berth_arena_strdup(ob->arena, name), b64);
			}
		}
		free(sealed);
		secret_free(value, vlen);
	}
	sodium_memzero(key, sizeof(key));
	free(list);
	return rc;
}

static onode *owner_refs(onode *o)
{
	return o_get(o_get(o, "metadata"), "ownerReferences");
}

int kube_apply(kube *api, const kres *res, const char *ns, const char *name, const onode *o,
	       bool dry_run, kube_applied *out, berth_error **err)
{
	berth_buf path = BERTH_BUF_INIT, body = BERTH_BUF_INIT;
	kpath(&path, res, ns, name);
	berth_buf_printf(&path, "?fieldManager=berth&force=true%s", dry_run ? "&dryRun=All" : "");
	emit_json(&body, o, 0, 0);
	int rc = path.failed || body.failed ? berth_fail(err, BERTH_ENOMEM, "out of memory") : 0;
	kube_reply r;
	memset(&r, 0, sizeof(r));
	if (!rc)
		rc = kube_request(api, "PATCH", path.data, APPLY, body.data, body.len, &r, err);
	sodium_memzero(body.data, body.len); /* a Secret's values */
	berth_buf_release(&body);
	berth_buf_release(&path);
	if (!rc && (r.status < 200 || r.status >= 300)) {
		char what[600];
		snprintf(what, sizeof(what), "%s %s%s%s", res->kind, res->cluster ? "" : ns,
			 res->cluster ? "" : "/", name);
		rc = kube_status_error(&r, what, err);
	} else if (!rc && out) {
		out->created = r.status == 201;
		berth_arena *a = berth_arena_new();
		const berth_node *root = NULL;
		if (a && !berth_json_root(a, "the applied object", r.body, r.len, &root, NULL)) {
			copy_str(out->uid, sizeof(out->uid), berth_node_text(berth_node_at(root, "metadata.uid")));
			copy_str(out->rv, sizeof(out->rv),
				 berth_node_text(berth_node_at(root, "metadata.resourceVersion")));
		}
		berth_arena_free(a);
	}
	if (r.body)
		sodium_memzero(r.body, r.len); /* a Secret's reply holds its values */
	kube_reply_free(&r);
	return rc;
}

static int delete_object(berth_backend *b, const kres *res, const char *ns, const char *name,
			 int grace_s, berth_error **err)
{
	berth_buf path = BERTH_BUF_INIT, body = BERTH_BUF_INIT;
	kpath(&path, res, ns, name);
	berth_buf_puts(&body, "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
			      "\"propagationPolicy\":\"Foreground\"");
	if (grace_s >= 0)
		berth_buf_printf(&body, ",\"gracePeriodSeconds\":%d", grace_s);
	berth_buf_puts(&body, "}");
	kube_reply r;
	int rc = path.failed || body.failed ? berth_fail(err, BERTH_ENOMEM, "out of memory")
		 : kube_request(KUBE(b)->api, "DELETE", path.data, "application/json", body.data, body.len,
				&r, err);
	if (!rc) {
		if (r.status >= 300 && r.status != 404) {
			char what[600];
			snprintf(what, sizeof(what), "deleting %s %s/%s", res->kind, ns, name);
			rc = kube_status_error(&r, what, err);
		}
		kube_reply_free(&r);
	}
	berth_buf_release(&path);
	berth_buf_release(&body);
	return rc;
}

/* A namespace per project (the policy's namespace with {project}): made,
 * with its quota and LimitRange, on the project's first run. */
static int project_namespace(berth_backend *b, const berth_run *run, berth_error **err)
{
	const char *project = run->spec.project.s ? run->spec.project.s : "default";
	/* the project's namespace: its overlay's (projects.NAME.namespace), else the policy's */
	const char *tpl = berth_policy_for_project(b->policy, project)->namespace.s;
	if (!tpl || !strstr(tpl, "{project}") || !run->namespace)
		return 0;
	return kube_project_namespace(KUBE(b)->api, b->policy, project, run->namespace, err);
}

/*
 * Applies the run's objects in order. An owned object applied before its
 * workload goes without its ownerReference (the API wants the uid), and
 * gets it in a second apply once the workload exists. If any object is
 * refused, the ones applied before it are deleted.
 */
static int apply_run(berth_backend *b, const berth_run *run, bool dry_run, berth_buf *report,
		     char *wtarget, size_t wlen, berth_error **err)
{
	int rc = kube_connect(b, err);
	if (rc)
		return rc;
	if (!dry_run && (rc = project_namespace(b, run, err)))
		return rc;
	berth_arena *arena = berth_arena_new();
	if (!arena)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	obuild ob = {.arena = arena};
	onode *objs[RENDER_MAX_OBJECTS] = {0};
	onode *refs[RENDER_MAX_OBJECTS] = {0};
	const kres *res[RENDER_MAX_OBJECTS] = {0};
	const char *names[RENDER_MAX_OBJECTS] = {0};
	size_t n = 0, w = SIZE_MAX, done = 0;
	const char *ns = run_namespace(b, run);
	rc = render_objects(arena, run, objs, &n, err);
	for (size_t i = 0; !rc && i < n; i++) {
		res[i] = kres_of(o_get(objs[i], "kind")->s);
		names[i] = o_get(o_get(objs[i], "metadata"), "name")->s;
		refs[i] = NULL;
		if (!res[i])
			rc = berth_fail(err, BERTH_EINTERNAL, "no API path for kind %s",
					o_get(objs[i], "kind")->s);
		else if (is_workload(res[i]))
			w = i;
		else if (!strcmp(res[i]->kind, "Secret") && !dry_run)
			rc = secret_data(b, run, &ob, objs[i], err);
	}
	if (!rc && w == SIZE_MAX)
		rc = berth_fail(err, BERTH_EINTERNAL, "run \"%s\" renders no workload", run->id);
	kube_applied wl;
	memset(&wl, 0, sizeof(wl));
	char *uid = wl.uid;
	/* before the workload: without ownerReferences */
	for (size_t i = 0; !rc && i < n; i++) {
		/* unlinked now, linked again below */
		if (i < w)
			refs[i] = o_take(o_get(objs[i], "metadata"), "ownerReferences");
		rc = kube_apply(KUBE(b)->api, res[i], ns, names[i], objs[i], dry_run, i == w ? &wl : NULL, err);
		if (rc)
			break;
		done = i + 1;
		if (report)
			berth_buf_printf(report, "%s %s/%s %s\n", res[i]->kind, ns, names[i],
					 dry_run ? "accepted (server dry run)" : "applied");
		if (i == w) {
			if (!uid[0])
				uid[0] = '?'; /* a stand-in that returns no uid: the API refuses "" */
			for (size_t j = 0; j < n; j++) {
				onode *list = refs[j] ? refs[j] : owner_refs(objs[j]);
				for (onode *ref = list ? list->first : NULL; ref; ref = ref->next) {
					onode *u = o_get(ref, "uid");
					if (u)
						u->s = berth_arena_strdup(arena, uid);
				}
			}
			/* the objects applied before it, with their owner now */
			for (size_t j = 0; !rc && j < w; j++) {
				if (!refs[j])
					continue;
				onode *md2 = o_get(objs[j], "metadata");
				md2->last->next = refs[j];
				md2->last = refs[j];
				rc = kube_apply(KUBE(b)->api, res[j], ns, names[j], objs[j], dry_run, NULL, err);
			}
		}
	}
	if (!rc)
		snprintf(wtarget, wlen, "%s %s/%s on %s", res[w]->kind, ns, names[w],
			 kube_cfg(KUBE(b)->api)->server);
	/* refused: nothing of the run is left behind */
	for (size_t i = done; rc && !dry_run && i-- > 0;) {
		berth_error *e = NULL;
		if (delete_object(b, res[i], ns, names[i], 0, &e))
			berth_error_move(err, e);
		else
			berth_error_free(e);
	}
	/* wipe the Secret's values */
	for (size_t i = 0; i < n && arena; i++) {
		onode *data = res[i] && !strcmp(res[i]->kind, "Secret") ? o_get(objs[i], "data") : NULL;
		for (onode *v = data ? data->first : NULL; v; v = v->next)
			if (v->s)
				sodium_memzero((void *)v->s, strlen(v->s));
	}
	berth_arena_free(arena);
	return rc;
}

/* Deletes each object of kind res that carries the run's label, by name:
 * not every resource has deletecollection (Services do not). */
static int delete_labelled(berth_backend *b, const kres *res, const char *ns, const char *id,
			   int grace_s, berth_error **err)
{
	berth_buf path = BERTH_BUF_INIT;
	kpath(&path, res, ns, NULL);
	berth_buf_printf(&path, "?labelSelector=" RUN_LABEL "%%3D%s", id);
	kube_reply r;
	int rc = path.failed ? berth_fail(err, BERTH_ENOMEM, "out of memory")
			     : kube_request(KUBE(b)->api, "GET", path.data, NULL, NULL, 0, &r, err);
	berth_buf_release(&path);
	if (rc)
		return rc;
	berth_arena *a = berth_arena_new();
	const berth_node *root = NULL;
	if (r.status != 200) {
		char what[300];
		snprintf(what, sizeof(what), "listing the %s of run %s", res->plural, id);
		rc = kube_status_error(&r, what, err);
	} else if (!a)
		rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
	else
		rc = berth_json_root(a, "a list", r.body, r.len, &root, err);
	const berth_node *items = rc ? NULL : berth_node_get(root, "items");
	for (size_t i = 0; items && items->kind == BERTH_NODE_SEQ && i < items->len && !rc; i++) {
		const char *name = berth_node_text(berth_node_at(items->u.items[i], "metadata.name"));
		if (name)
			rc = delete_object(b, res, ns, name, grace_s, err);
	}
	berth_arena_free(a);
	kube_reply_free(&r);
	return rc;
}

/* Deletes the run's workload (foreground: its pods go first, and what it
 * owns with it), then whatever else carries the run's label: the pods, with
 * the grace period (the garbage collector would use their own), owned
 * objects it has not reached yet, and the Service and HPA it does not own. */
static int delete_run_objects(berth_backend *b, const char *id, const target *t, int grace_s,
			      berth_error **err)
{
	int rc = delete_object(b, t->res, t->ns, t->name, grace_s, err);
	for (size_t i = BERTH_ARRAY_SIZE(kinds); i-- > 0 && !rc;)
		if (&kinds[i] != t->res)
			rc = delete_labelled(b, &kinds[i], t->ns, id, grace_s, err);
	return rc;
}

static int kube_needs(berth_backend *b, const berth_run *run, berth_error **err)
{
	return backend_needs("kubernetes", NULL, run, NULL, err);
}

static int kube_admit(berth_backend *b, const berth_run *run, berth_error **err)
{
	int rc = kube_needs(b, run, err);
	if (rc)
		return rc;
	rc = kube_connect(b, err);
	/* the API refuses every pod that names a PriorityClass it does not have:
	 * refused now, with what fixes it, rather than failed a little later */
	const char *pc = run->priority_class_name;
	kube_state *ks = KUBE(b);
	if (!rc && pc && strcmp(pc, ks->priority_class)) {
		int there = kube_priority_class_exists(ks->api, pc);
		if (there > 0)
			copy_str(ks->priority_class, sizeof(ks->priority_class), pc);
		else if (!there)
			rc = berth_fail(err, BERTH_ECONFLICT,
					"run \"%s\": the cluster at %s has no PriorityClass \"%s\" (the policy's for "
					"priority %s), and its API refuses every pod that names one it does not "
					"have: an admin creates it (berth cluster check says what else is missing)",
					run->base_name, kube_cfg(ks->api)->server, pc,
					run->spec.priority_class.s ? run->spec.priority_class.s : "?");
	}
	/* an operator's workload on a cluster that does not serve it: the API
	 * would refuse it with a bare 404; refused now, with what is missing */
	const char *api = NULL, *kind = plan_workload_kind(plan_workload_of(run), &api);
	const kres *res = kind ? kres_of(kind) : NULL;
	if (!rc && res && is_operator_kind(res) && strcmp(ks->served, kind)) {
		size_t n;
		const kube_operator_kind *k = kube_operator_kinds(run->dist_operator, &n);
		while (n && strcmp(k->kind, kind))
			k++, n--;
		char why[300] = "";
		int there = kube_served(ks->api, api, res->plural, why, sizeof(why));
		if (there > 0)
			copy_str(ks->served, sizeof(ks->served), kind);
		else if (!there)
			rc = berth_fail(err, BERTH_ECONFLICT,
					"run \"%s\": the cluster at %s does not serve %s: %s, and the policy's "
					"distributed.operator %s renders this run as one; install %s there, or change "
					"distributed.operator in the policy (berth cluster check says what else is "
					"missing)", run->base_name, kube_cfg(ks->api)->server, kind, why,
					run->dist_operator, n ? k->installer : "its operator");
	}
	return rc;
}

/* Takes the objects of the first n records (their targets) off the cluster again. */
static void unapply(berth_backend *b, store_run **recs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		target t;
		berth_error *e = NULL;
		if (recs[i]->info.target && !parse_target(recs[i]->info.target, &t))
			delete_run_objects(b, recs[i]->info.id, &t, 0, &e);
		berth_error_free(e);
	}
}

/* Every run is recorded and checked first, then applied in order, then stored in
 * one transaction: a run the cluster refuses, or a store that cannot record
 * them, takes the objects applied so far off the cluster again. */
static int kube_submit(berth_backend *b, const berth_run *const *runs, size_t n,
		       const char *spec_text, const submit_check *check, berth_run_info **out,
		       berth_error **err)
{
	store_run **recs = berth_calloc(n ? n : 1, sizeof(*recs));
	if (!recs)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	int rc = 0;
	size_t applied = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		const berth_run *run = runs[i];
		if ((rc = kube_admit(b, run, err)))
			break;
		if (!(recs[i] = berth_calloc(1, sizeof(*recs[i])))) {
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
			break;
		}
		/* the objects of a run id in use are that run's: never apply over them */
		int taken = store_run_exists(b->st, run->id, err);
		rc = taken < 0 ? taken
		     : taken ? berth_fail(err, BERTH_ECONFLICT, "run id \"%s\" is in use", run->id) : 0;
		/* a log kept under the id is an earlier run's (deleted while it was kept) */
		if (!rc)
			forget_kept_log(b, run->id);
		if (!rc)
			rc = record_new(b->policy, run, spec_text, kube_backend_ops.kind, recs[i], err);
		if (!rc && !(recs[i]->info.reason = berth_strdup("submitted to the cluster")))
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	while (!rc && applied < n) {
		char where[600];
		if ((rc = apply_run(b, runs[applied], false, NULL, where, sizeof(where), err)))
			break;
		if (!(recs[applied]->info.target = berth_strdup(where)))
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
		applied++;
	}
	if (!rc && !(rc = store_begin(b->st, err))) {
		if (check)
			rc = check->fn(check->ctx, err);
		for (size_t i = 0; i < n && !rc; i++)
			if (!(rc = store_run_insert(b->st, recs[i], err)))
				store_event(b->st, recs[i]->info.id, "Submitted", NULL);
		if (!rc)
			rc = store_commit(b->st, err);
		if (rc)
			store_rollback(b->st);
	}
	if (rc)
		unapply(b, recs, applied); /* not recorded: take them off the cluster again */
	for (size_t i = 0; !rc && i < n; i++)
		store_event(b->st, runs[i]->id, "Applied", recs[i]->info.target);
	for (size_t i = 0; i < n; i++)
		store_run_free(recs[i]);
	free(recs);
	if (rc)
		return rc;
	for (size_t i = 0; i < n && !rc; i++) {
		/* what the cluster says now; a handle whose records a reconciler keeps
		 * (a server) answers at once, with the record as submitted */
		berth_error *e = NULL;
		if (!b->cached && follow_run(b, runs[i]->id, false, false, false, 0, &e)) {
			const berth_problem *p = berth_error_get(e, 0);
			berth_problem_add(err, BERTH_EIO, BERTH_WARNING, NULL,
					  "run \"%s\" is submitted; its state could not be read yet: %s",
					  runs[i]->id, p ? p->message : "unknown");
		}
		berth_error_free(e);
		if (out)
			rc = record_get(b->st, runs[i]->id, &out[i], err);
	}
	return rc;
}

static int kube_dry_run(berth_backend *b, const berth_run *run, berth_buf *report, berth_error **err)
{
	char where[600];
	int rc = kube_admit(b, run, err);
	return rc ? rc : apply_run(b, run, true, report, where, sizeof(where), err);
}

/*
 * Which of a run's pods is worker rank (< 0: the run's own log), as a label
 * selector after its run's label:
 *   Job, JobSet (Indexed Jobs): the pod's completion index; the newest pod;
 *   PyTorchJob: rank 0 the Master, rank r Worker r-1 (the Training
 *     Operator's replica type and index); the Master;
 *   MPIJob: rank r Worker r (the MPI Operator's role and index; its log is
 *     sshd's); the Launcher, whose mpirun prints every rank's output.
 */
static void rank_selector(char *buf, size_t len, const char *id, int rank, const kres *res)
{
	int n = snprintf(buf, len, RUN_LABEL "=%s", id);
	size_t at = n > 0 && (size_t)n < len ? (size_t)n : len - 1;
	const char *kind = res ? res->kind : "Job";
	if (!strcmp(kind, "PyTorchJob") && rank >= 0)
		snprintf(buf + at, len - at, "," KUBEFLOW_REPLICA_TYPE "=%s," KUBEFLOW_REPLICA_INDEX "=%d",
			 rank ? "worker" : "master", rank ? rank - 1 : 0);
	else if (!strcmp(kind, "PyTorchJob"))
		snprintf(buf + at, len - at, "," KUBEFLOW_REPLICA_TYPE "=master");
	else if (!strcmp(kind, "MPIJob") && rank >= 0)
		snprintf(buf + at, len - at, "," KUBEFLOW_JOB_ROLE "=worker," KUBEFLOW_REPLICA_INDEX "=%d", rank);
	else if (!strcmp(kind, "MPIJob"))
		snprintf(buf + at, len - at, "," KUBEFLOW_JOB_ROLE "=launcher");
	/* an Indexed Job's pod: its index is an annotation on every version (a
	 * label only from 1.28): newest_run_pod keeps that worker's pods */
}

/* The newest pod of run id (of its worker rank, when rank >= 0: see
 * rank_selector); 1 when it has none. */
static int newest_run_pod(berth_backend *b, const char *id, int rank, const target *t, kpod *out,
			  berth_error **err)
{
	follower *f = berth_calloc(1, sizeof(*f));
	if (!f)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	char selector[300];
	rank_selector(selector, sizeof(selector), id, rank, t->res);
	f->view.kind = t->res->kind;
	const char *kind = t->res ? t->res->kind : "Job";
	if (rank >= 0 && strcmp(kind, "PyTorchJob") && strcmp(kind, "MPIJob"))
		f->view.worker_filter = rank + 1;
	berth_buf ppath = BERTH_BUF_INIT;
	kpath(&ppath, POD_KIND, t->ns, NULL);
	kube_watch w = {.path = ppath.data, .selector = selector, .event = on_pod, .ctx = f};
	int rc = ppath.failed ? berth_fail(err, BERTH_ENOMEM, "out of memory") : kube_list(KUBE(b)->api, &w, err);
	berth_buf_release(&ppath);
	const kpod *p = rc < 0 ? NULL : newest_pod(&f->view);
	/* its name goes into a request's path: a name, whatever an API answers */
	if (p && berth_check_dns_subdomain(p->name))
		rc = berth_fail(err, BERTH_EIO, "the cluster named run \"%s\"'s pod with what is not a name", id);
	else if (p)
		*out = *p;
	free(f);
	return rc < 0 ? rc : p ? 0 : 1;
}

/* ---- the log kept in berth ---------------------------------------------------------------- */

/* A run's pods leave the cluster (its TTL, a stop, a delete), and their log
 * with them: what its newest pod wrote is kept in runs/ID/log under the data
 * dir when berth sees the run end, at most KEPT_LOG_MAX bytes (the head: the
 * API's limitBytes). */
#define KEPT_LOG_MAX (16L << 20)

static int kept_log_path(berth_backend *b, const char *id, const char *sub, char *buf, size_t len)
{
	return backend_run_path(buf, len, b->home, id, sub);
}

/* Removes the log kept under run id, if any. */
static void forget_kept_log(berth_backend *b, const char *id)
{
	char path[4096];
	if (!b->home || kept_log_path(b, id, "log", path, sizeof(path)))
		return;
	unlink(path);
	if (!kept_log_path(b, id, "log.part", path, sizeof(path)))
		unlink(path);
	if (!kept_log_path(b, id, "log" LOG_TIMES_SUFFIX, path, sizeof(path)))
		unlink(path);
	if (!kept_log_path(b, id, NULL, path, sizeof(path)))
		rmdir(path);
}

/* A keep gives up after this long (a log endpoint that stalls). */
#define KEEP_LOG_S 60

/* The log being kept: the head up to KEPT_LOG_MAX whatever the API sends;
 * lost when a write fails (a full disk) or time runs out, for a part is not
 * to be taken for the whole. */
typedef struct keeping {
	int fd;
	size_t left;
	int64_t deadline;
	bool lost;
	/* the API's times (timestamps=true): each line's, taken off it into the
	 * log's times (logfile.h), so that --since and --timestamps read a kept
	 * log as a local one */
	log_clock clock;
	int64_t written;    /* bytes in the log */
	int64_t line_ms;    /* the time of the line being written */
	bool mid_line;      /* past a line's time */
	char ts[48];        /* a line's time as it arrives, to its space */
	size_t nts;
} keeping;

static void keep_write(keeping *k, const char *data, size_t n)
{
	k->written += (int64_t)n;
	while (n && !k->lost) {
		ssize_t w = write(k->fd, data, n);
		if (w < 0)
			k->lost = true;
		else
			data += w, n -= (size_t)w;
	}
}

/* The time before a line ("2026-11-22T13:08:57.123456789Z "): a line that has
 * none (an API server that sends no times) is as old as the keeping. */
static void keep_time(keeping *k, const char *data, size_t n, size_t *used)
{
	size_t i = 0;
	while (i < n && data[i] != ' ' && data[i] != '\n' && k->nts < sizeof(k->ts))
		k->ts[k->nts++] = data[i++];
	*used = i;
	if (i == n && k->nts < sizeof(k->ts))
		return; /* its end comes in the next chunk */
	size_t took = 0;
	int64_t ms = 0;
	bool is_time = !berth_time_parse(k->ts, k->nts, &ms, &took) && took == k->nts && i < n && data[i] == ' ';
	k->line_ms = is_time ? ms : store_now_ms();
	if (is_time)
		*used = i + 1; /* and its space */
	else
		keep_write(k, k->ts, k->nts);
	k->nts = 0;
	k->mid_line = true;
}

/* Whether the n bytes a keeping ended with are the start of a line's time,
 * cut by the cap (they are no line of the log). */
static bool time_cut_short(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strchr("0123456789-:.TZ+", s[i]) || !s[i])
			return false;
	return true;
}

static int keep_chunk(void *ctx, const char *data, size_t len)
{
	keeping *k = ctx;
	size_t n = len < k->left ? len : k->left;
	k->left -= n;
	while (n && !k->lost) {
		size_t used = 0;
		if (!k->mid_line) {
			keep_time(k, data, n, &used);
			data += used, n -= used;
			continue;
		}
		const char *nl = memchr(data, '\n', n);
		used = nl ? (size_t)(nl - data) + 1 : n;
		keep_write(k, data, used);
		data += used, n -= used;
		if (nl) {
			log_clock_mark(&k->clock, k->written, k->line_ms);
			k->mid_line = false;
		}
	}
	if (store_now_ms() > k->deadline)
		k->lost = true;
	return k->lost || !k->left; /* (at the cap: the rest is not read) */
}

/* Best effort: a run whose log cannot be read or written keeps none (and
 * its pods, while they last, still have it). */
static void keep_log(berth_backend *b, const char *id, const target *t)
{
	kpod p;
	char dir[4096], part[4096], done[4096];
	berth_error *e = NULL;
	if (!b->home || newest_run_pod(b, id, -1, t, &p, &e) || !strcmp(p.phase, "Pending") ||
	    kept_log_path(b, id, NULL, dir, sizeof(dir)) || kept_log_path(b, id, "log.part", part, sizeof(part)) ||
	    kept_log_path(b, id, "log", done, sizeof(done)) || fs_private_dir(dir, 0700)) {
		berth_error_free(e);
		return;
	}
	keeping k = {.fd = open(part, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600),
		     .left = KEPT_LOG_MAX, .deadline = store_now_ms() + KEEP_LOG_S * 1000L};
	if (k.fd < 0)
		return;
	char times[4200];
	snprintf(times, sizeof(times), "%s%s", done, LOG_TIMES_SUFFIX);
	unlink(times); /* an earlier keeping's */
	log_clock_open(&k.clock, done);
	berth_buf path = BERTH_BUF_INIT;
	kpath(&path, POD_KIND, t->ns, p.name);
	berth_buf_printf(&path, "/log?limitBytes=%ld&timestamps=true", KEPT_LOG_MAX);
	long status = 0;
	kube_reply rep;
	memset(&rep, 0, sizeof(rep));
	/* (libcurl's limit, a little later, ends a stream as if it were whole) */
	int rc = path.failed ? -1
			     : kube_stream(KUBE(b)->api, path.data, KEEP_LOG_S + 5, 0, keep_chunk, &k,
					   &status, &rep, &e);
	berth_buf_release(&path);
	kube_reply_free(&rep);
	berth_error_free(e);
	if (store_now_ms() > k.deadline)
		k.lost = true;
	if (k.mid_line) /* a last line without its newline */
		log_clock_mark(&k.clock, k.written, k.line_ms);
	else if (k.nts && !time_cut_short(k.ts, k.nts))
		keep_write(&k, k.ts, k.nts); /* a last line that was no time */
	log_clock_flush(&k.clock, 0, true);
	log_clock_close(&k.clock);
	/* a run deleted meanwhile has no log to keep */
	if (close(k.fd) || rc || status != 200 || k.lost || store_run_exists(b->st, id, NULL) != 1 ||
	    rename(part, done)) {
		unlink(part);
		unlink(times);
	}
}

/* Copies the kept log to write_fn as o says (logfile.h); 1 when there is none. */
static int read_kept_log(berth_backend *b, const char *id, const berth_log_opts *o,
			 berth_log_write write_fn, void *ctx, berth_error **err)
{
	char path[4096];
	if (kept_log_path(b, id, "log", path, sizeof(path)) || access(path, F_OK))
		return 1;
	berth_log_opts once = *o;
	once.follow = false;
	log_src src;
	log_view v;
	log_src_init(&src, path, 0);
	log_view_init(&v, &once, false, write_fn, ctx);
	int rc = 0;
	log_read(&src, 1, &v, &rc, err);
	log_finish(&src, 1, &v, &rc);
	return rc;
}

/* ---- stop, wait, logs, reconcile ------------------------------------------------------- */

/* Connects, and reads where the run is and whether it has ended. */
static int locate(berth_backend *b, const char *id, target *t, bool *final, berth_error **err)
{
	store_run *r;
	int rc = kube_connect(b, err);
	if (!rc)
		rc = run_target(b, id, &r, t, err);
	if (rc)
		return rc;
	*final = berth_state_final(r->info.state);
	store_run_free(r);
	return 0;
}

static int kube_forget(berth_backend *b, const char *id, berth_error **err)
{
	target t;
	bool final;
	int rc = locate(b, id, &t, &final, err);
	if (!rc)
		rc = delete_run_objects(b, id, &t, 0, err);
	if (!rc)
		forget_kept_log(b, id);
	return rc;
}

/* Marks the run Stopped (once its workload is gone, or at once when asked). */
static int mark_stopped(berth_backend *b, const char *id, berth_error **err)
{
	if (store_begin(b->st, err))
		return -BERTH_EIO;
	store_run *r = NULL;
	int rc = store_run_get(b->st, id, &r, err);
	if (!rc && !berth_state_final(r->info.state)) {
		r->info.state = BERTH_STATE_STOPPED;
		r->info.finished = store_now_ms();
		free(r->info.reason);
		r->info.reason = berth_strdup("stopped: its objects were deleted from the cluster");
		rc = store_run_update(b->st, r, err);
		if (!rc)
			rc = store_commit(b->st, err);
		if (!rc)
			store_event(b->st, id, "Stopped", r->info.reason);
	}
	if (rc || berth_state_final(r->info.state))
		store_rollback(b->st);
	store_run_free(r);
	return rc;
}

static int kube_stop(berth_backend *b, const char *id, int grace_s, bool wait, berth_error **err)
{
	target t;
	bool final;
	/* a run that ended since it was last read keeps its result */
	berth_error *e = NULL;
	kube_refresh(b, id, &e);
	berth_error_free(e);
	int rc = locate(b, id, &t, &final, err);
	if (rc)
		return rc;
	if (final) {
		/* a run that has ended keeps its result; what is left of it on the
		 * cluster (its Job, pods and claims, kept for their log) goes, its
		 * log kept in berth first */
		keep_log(b, id, &t);
		rc = delete_run_objects(b, id, &t, grace_s, err);
		if (!rc)
			store_event(b->st, id, "Cleaned", "what was left of it on the cluster was deleted");
		return rc;
	}
	if (store_begin(b->st, err))
		return -BERTH_EIO;
	rc = store_run_request_stop(b->st, id, grace_s, err);
	if (!rc)
		rc = store_commit(b->st, err);
	if (rc) {
		store_rollback(b->st);
		return rc;
	}
	store_event(b->st, id, "Stopping", NULL);
	keep_log(b, id, &t); /* what it wrote until now: its pods go */
	if ((rc = delete_run_objects(b, id, &t, grace_s, err)))
		return rc;
	if (wait) {
		/* foreground deletion: the workload goes once its pods are gone */
		long limit = (grace_s >= 0 ? grace_s : BACKEND_GRACE_S) * 1000L + 30000;
		berth_buf path = BERTH_BUF_INIT;
		kpath(&path, t.res, t.ns, t.name);
		long waited = 0;
		for (; !rc && waited < limit; waited += 200) {
			kube_reply rep;
			if ((rc = kube_request(KUBE(b)->api, "GET", path.data, NULL, NULL, 0, &rep, err)))
				break;
			long status = rep.status;
			kube_reply_free(&rep);
			if (status == 404)
				break;
			struct timespec ts = {0, 200 * 1000000L};
			nanosleep(&ts, NULL);
		}
		berth_buf_release(&path);
		/* still there: the run stays Stopping; the next look at it finds it gone */
		if (!rc && waited >= limit)
			rc = berth_fail(err, BERTH_ETIMEOUT, "run \"%s\": its %s %s/%s is still being "
					"deleted after %ld s", id, t.res->kind, t.ns, t.name, limit / 1000);
	}
	return rc ? rc : mark_stopped(b, id, err);
}

/* Watches the run until its record is final, or timeout_ms (< 0: no limit) passed. */
static int kube_wait(berth_backend *b, const char *id, int64_t timeout_ms, berth_error **err)
{
	int64_t deadline = timeout_ms < 0 ? -1 : store_now_ms() + timeout_ms;
	for (;;) {
		berth_run_info *i;
		int rc = record_get(b->st, id, &i, err);
		if (rc)
			return rc;
		bool final = berth_state_final(i->state);
		berth_run_info_free(i);
		if (final)
			return 0;
		int64_t left = deadline < 0 ? -1 : deadline - store_now_ms();
		if (deadline >= 0 && left <= 0)
			return berth_fail(err, BERTH_ETIMEOUT, "run \"%s\" is not finished after %lld ms",
					  id, (long long)timeout_ms);
		/* in slices: between two, what the cluster says of a run that waits
		 * (a refused create ends it) */
		long slice = left < 0 || left > WAIT_SLICE_MS ? WAIT_SLICE_MS : (long)left;
		berth_error *e = NULL;
		rc = follow_run(b, id, true, true, false, slice, &e);
		if (rc && rc != -BERTH_ETIMEOUT) {
			berth_error_move(err, e);
			return rc;
		}
		berth_error_free(e); /* a time limit: the record decides */
		e = NULL;
		if (rc == -BERTH_ETIMEOUT)
			kube_refresh(b, id, &e);
		berth_error_free(e);
	}
}

static int kube_logs(berth_backend *b, const char *id, const berth_log_opts *o,
		     berth_log_write write_fn, void *ctx, berth_error **err)
{
	int rank = o->rank;
	bool follow = o->follow;
	target t;
	bool final;
	int rc = locate(b, id, &t, &final, err);
	if (rc)
		return rc;
	berth_run_info *rec = NULL;
	if (rank >= 0 && !(rc = record_get(b->st, id, &rec, err)))
		rc = berth_run_check_rank(rec, rank, err);
	berth_run_info_free(rec);
	if (rc)
		return rc;
	/* a run that has ended: the log berth kept (its newest pod's), whether its
	 * pods are there or not; one worker's is its pod's */
	if (final && rank < 0 && (rc = read_kept_log(b, id, o, write_fn, ctx, err)) <= 0)
		return rc;
	for (int tries = 0;; tries++) {
		/* the newest pod of the run, once one has started */
		kpod pod;
		rc = newest_run_pod(b, id, rank, &t, &pod, err);
		if (rc < 0)
			return rc;
		const kpod *p = rc ? NULL : &pod;
		bool started = p && (strcmp(p->phase, "Pending") || p->exit_code >= 0);
		if (!started) {
			if (final && !p)
				return berth_fail(err, BERTH_ENOTFOUND, "run \"%s\" has ended, and its pods have "
						  "left the cluster with their log before berth kept it", id);
			if (!follow || final)
				return p ? 0 : berth_fail(err, BERTH_ENOTFOUND, "run \"%s\" has no pod yet", id);
			/* wait for a pod to start, or for the run to end */
			berth_run_info *info = NULL;
			berth_error *e = NULL;
			rc = follow_run(b, id, true, false, true, 60000, &e);
			if (rc == -BERTH_ETIMEOUT)
				rc = 0;
			else if (rc)
				berth_error_move(err, e), e = NULL;
			berth_error_free(e);
			if (!rc && !record_get(b->st, id, &info, NULL))
				final = berth_state_final(info->state);
			berth_run_info_free(info);
			if (rc)
				return rc;
			continue;
		}
		berth_buf path = BERTH_BUF_INIT;
		kpath(&path, POD_KIND, t.ns, p->name);
		/* the API's own tail, since and times (RFC 3339 with nanoseconds) */
		berth_buf_puts(&path, "/log");
		char sep = '?';
		if (follow)
			berth_buf_printf(&path, "%cfollow=true", sep), sep = '&';
		if (o->tail > 0)
			berth_buf_printf(&path, "%ctailLines=%lld", sep, (long long)o->tail), sep = '&';
		if (o->since_ms > 0)
			berth_buf_printf(&path, "%csinceSeconds=%lld", sep, (long long)((o->since_ms + 999) / 1000)),
				sep = '&';
		if (o->timestamps)
			berth_buf_printf(&path, "%ctimestamps=true", sep);
		long status = 0;
		kube_reply rep;
		rc = path.failed ? berth_fail(err, BERTH_ENOMEM, "out of memory")
				 : kube_stream(KUBE(b)->api, path.data, 0, follow ? 0 : KUBE_STALL_S, write_fn,
					       ctx, &status, &rep, err);
		berth_buf_release(&path);
		if (rc)
			return rc;
		if (status == 400 && follow && tries < 600) {
			/* the container is not started after all: wait a little */
			kube_reply_free(&rep);
			struct timespec ts = {0, 500 * 1000000L};
			nanosleep(&ts, NULL);
			continue;
		}
		if (status >= 300) {
			char what[600];
			snprintf(what, sizeof(what), "the log of pod %.253s/%.253s", t.ns, p->name);
			rc = kube_status_error(&rep, what, err);
		}
		kube_reply_free(&rep);
		return rc;
	}
}

static int kube_refresh(berth_backend *b, const char *id, berth_error **err)
{
	return follow_run(b, id, false, false, false, 0, err);
}

/* Brings every unfinished kubernetes run's record up to what the cluster
 * says. A run that cannot be read keeps its record and is a warning; the
 * first failure is returned after every run has been tried. */
static int kube_reconcile(berth_backend *b, berth_error **err)
{
	int rc = 0;
	for (int state = BERTH_STATE_PENDING; state <= BERTH_STATE_RUNNING; state++) {
		store_run **list;
		size_t n;
		int r = store_run_list(b->st, kube_backend_ops.kind, state, false, &list, &n, err);
		if (r)
			return r;
		for (size_t i = 0; i < n; i++) {
			berth_error *e = NULL;
			if ((r = follow_run(b, list[i]->info.id, false, false, false, 0, &e)) < 0) {
				const berth_problem *p = berth_error_get(e, 0);
				berth_problem_add(err, -r, BERTH_WARNING, NULL,
						  "run \"%s\": its state is the last one recorded: %s",
						  list[i]->info.id, p ? p->message : "the cluster cannot be asked");
				rc = rc ? rc : r;
			}
			berth_error_free(e);
		}
		store_run_list_free(list, n);
	}
	/* a server sweeps now and then what TTLs and stops left */
	int64_t now = store_now_ms();
	if (b->cached && !b->passive && KUBE(b)->api && (!KUBE(b)->swept || now - KUBE(b)->swept >= SWEEP_EVERY_MS)) {
		KUBE(b)->swept = now;
		kube_sweep(b);
	}
	return rc;
}

/* ---- berth's own sweep ---------------------------------------------------------------------- */

/* Whether what is left of run id on the cluster is berth's to delete now: its
 * record is a kubernetes run that was stopped, or that finished
 * cleanup.ttl_after_finished ago. A run berth has no record of (rendered for
 * GitOps, another berth's) is not. */
static bool sweepable(berth_backend *b, const char *id, int64_t now, target *t)
{
	store_run *r = NULL;
	berth_error *e = NULL;
	bool yes = false;
	const berth_int *ttl = &b->policy->cleanup.ttl_after_finished;
	if (!berth_run_id_check(id) && !store_run_get(b->st, id, &r, &e) && r->info.backend &&
	    !strcmp(r->info.backend, kube_backend_ops.kind) && berth_state_final(r->info.state) &&
	    r->info.target && !parse_target(r->info.target, t))
		yes = r->info.state == BERTH_STATE_STOPPED ||
		      (ttl->set && r->info.finished && r->info.finished + ttl->v * 1000 <= now);
	berth_error_free(e);
	store_run_free(r);
	return yes;
}

/* Adds to ids the run ids of berth's objects of kind res in namespace ns
 * that are sweepable: every page of the list (SWEEP_PAGES at most), and only
 * those, for a namespace may hold any number of objects of runs that are not
 * berth's to delete (running, kept for their logs, or no record's) before
 * the ones that are. */
static void sweep_list(berth_backend *b, const kres *res, const char *ns, int64_t now, char (*ids)[64],
		       size_t *n)
{
	berth_buf cont = BERTH_BUF_INIT;
	for (int page = 0; page < SWEEP_PAGES && *n < SWEEP_IDS; page++) {
		berth_buf path = BERTH_BUF_INIT;
		kpath(&path, res, ns, NULL);
		berth_buf_puts(&path, "?labelSelector=app.kubernetes.io%2Fmanaged-by%3Dberth%2C" RUN_LABEL "&limit=500");
		if (cont.len) {
			berth_buf_puts(&path, "&continue=");
			kube_put_escaped(&path, cont.data);
		}
		cont.len = 0;
		kube_reply rep;
		memset(&rep, 0, sizeof(rep));
		berth_error *e = NULL;
		berth_arena *a = berth_arena_new();
		const berth_node *root = NULL;
		if (a && !path.failed && !kube_request(KUBE(b)->api, "GET", path.data, NULL, NULL, 0, &rep, &e) &&
		    rep.status == 200 && !berth_json_root(a, "a list", rep.body, rep.len, &root, NULL)) {
			const berth_node *items = berth_node_get(root, "items");
			for (size_t i = 0; items && items->kind == BERTH_NODE_SEQ && i < items->len && *n < SWEEP_IDS; i++) {
				const berth_node *md = berth_node_get(items->u.items[i], "metadata");
				/* being deleted already: in its grace period, or held by finalizers
				 * (deleting it again would cut the one short, and not move the other) */
				if (berth_node_get(md, "deletionTimestamp"))
					continue;
				const char *id = berth_node_text(berth_node_get(berth_node_get(md, "labels"), RUN_LABEL));
				size_t k = 0;
				while (id && k < *n && strcmp(ids[k], id))
					k++;
				target t;
				if (id && k == *n && strlen(id) < sizeof(ids[0]) && sweepable(b, id, now, &t))
					snprintf(ids[(*n)++], sizeof(ids[0]), "%s", id);
			}
			const char *c = berth_node_text(berth_node_at(root, "metadata.continue"));
			if (c && *c)
				berth_buf_puts(&cont, c);
		}
		berth_error_free(e);
		berth_arena_free(a);
		berth_buf_release(&path);
		kube_reply_free(&rep);
		if (!cont.len || cont.failed)
			break;
	}
	berth_buf_release(&cont);
}

/*
 * berth's own sweep, besides the cluster's TTL controller (which takes only
 * finished Jobs, and only on a cluster that runs it): in each namespace of
 * its recent runs, berth's objects (label app.kubernetes.io/managed-by=berth)
 * are listed, and whatever of a run that was stopped, or finished
 * cleanup.ttl_after_finished ago, is still there is deleted: a delete that
 * failed, a Service or claim left when a stop was cut short. Best effort.
 */
static void kube_sweep(berth_backend *b)
{
	store_query q = {.state = -1, .limit = SWEEP_RUNS, .backend = kube_backend_ops.kind};
	store_run **runs = NULL;
	size_t nruns = 0;
	berth_error *e = NULL;
	if (store_run_query(b->st, &q, &runs, &nruns, &e)) {
		berth_error_free(e);
		return;
	}
	char (*ids)[64] = berth_calloc(SWEEP_IDS, sizeof(*ids));
	char (*spaces)[254] = berth_calloc(nruns ? nruns : 1, sizeof(*spaces));
	size_t nspaces = 0;
	for (size_t i = 0; ids && spaces && i < nruns; i++) {
		target t;
		if (!runs[i]->info.target || parse_target(runs[i]->info.target, &t))
			continue;
		size_t k = 0;
		while (k < nspaces && strcmp(spaces[k], t.ns))
			k++;
		if (k < nspaces)
			continue;
		copy_str(spaces[nspaces++], sizeof(spaces[0]), t.ns);
		size_t nids = 0;
		int64_t now = store_now_ms();
		for (size_t r = 0; r < BERTH_ARRAY_SIZE(kinds); r++)
			sweep_list(b, &kinds[r], t.ns, now, ids, &nids);
		/* and the workloads of the policy's operator (not of every cluster) */
		size_t nop;
		const kube_operator_kind *op = kube_operator_kinds(b->policy->distributed.op.s, &nop);
		for (size_t r = 0; r < nop; r++)
			if (kres_of(op[r].kind))
				sweep_list(b, kres_of(op[r].kind), t.ns, now, ids, &nids);
		for (size_t r = 0; r < nids; r++) {
			target rt;
			if (!sweepable(b, ids[r], now, &rt))
				continue;
			if (!delete_run_objects(b, ids[r], &rt, 0, &e))
				store_event(b->st, ids[r], "Cleaned", "what was left of it on the cluster was deleted");
			berth_error_free(e);
			e = NULL;
		}
	}
	free(ids);
	free(spaces);
	store_run_list_free(runs, nruns);
}

static int kube_backend_open(berth_backend *b, bool primary, berth_error **err)
{
	kube_state *ks = berth_calloc(1, sizeof(*ks));
	if (!ks)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	backend_state_set(b, &kube_backend_ops, ks);
	/* a handle for runs on a cluster connects now; others on first use */
	int rc = primary ? kube_connect(b, err) : 0;
	/* a handle whose records are read as stored (a server) brings them up to
	 * date now; others ask the cluster about the runs they are asked about */
	if (!rc && primary && b->cached && !b->passive)
		kube_reconcile(b, err); /* what it cannot read is a warning */
	return rc;
}

static int kube_backend_check(berth_backend *b, berth_buf *report, berth_error **err)
{
	int rc = kube_connect(b, err);
	return rc ? rc : kube_check(KUBE(b)->api, b->policy, report);
}

static int kube_backend_setup(berth_backend *b, bool dry_run, berth_buf *out, berth_error **err)
{
	int rc = kube_connect(b, err);
	return rc ? rc : kube_setup(KUBE(b)->api, b->policy, kube_cfg(KUBE(b)->api)->namespace, dry_run, out, err);
}

static void kube_backend_close(berth_backend *b)
{
	kube_state *ks = KUBE(b);
	kube_close(ks->api);
	free(ks);
	backend_state_set(b, &kube_backend_ops, NULL);
}

const backend_ops kube_backend_ops = {
	.kind = "kubernetes",
	.open = kube_backend_open,
	.close = kube_backend_close,
	.reconcile = kube_reconcile,
	.admit = kube_admit,
	.needs = kube_needs,
	.submit = kube_submit,
	.stop = kube_stop,
	.logs = kube_logs,
	.wait = kube_wait,
	.refresh = kube_refresh,
	.forget = kube_forget,
	.dry_run = kube_dry_run,
	.check = kube_backend_check,
	.setup = kube_backend_setup,
};
