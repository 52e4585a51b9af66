/*
 * kueue.c - a run's suspended Job and its Kueue Workload: found by the
 * label Kueue gives it (kueue.x-k8s.io/job-uid), else by its ownerReference
 * to the Job, and its conditions mapped to the run's reason (kueue.h).
 *
 * Kueue's conditions, newest Kueue first (v1beta1): QuotaReserved (the
 * queue's ClusterQueue holds quota for it), Admitted (quota and admission
 * checks: Kueue resumes the Job), Evicted and Preempted (Kueue took the
 * quota back and suspended the Job: it queues it again), Finished.
 */
#include <stdio.h>
#include <string.h>

#include "backend/kubernetes/kueue.h"
#include "base/names.h"
#include "plan/policy_internal.h"
#include "spec/yaml.h"

#define JOB_UID_LABEL "kueue.x-k8s.io/job-uid"
/* the Workloads read when none carries the Job's uid label (a Kueue older
 * than the label): one namespace's, at most this many */
#define OWNED_SCAN_LIMIT 500

void kueue_job_read(kueue_view *k, const berth_node *job)
{
	memset(k, 0, sizeof(*k));
	/* a Job's and a JobSet's spec.suspend, a PyTorchJob's or an MPIJob's
	 * spec.runPolicy.suspend */
	const char *s = berth_node_text(berth_node_at(job, "spec.suspend"));
	if (!s)
		s = berth_node_text(berth_node_at(job, "spec.runPolicy.suspend"));
	k->suspended = s && !strcmp(s, "true");
	const char *q = berth_node_text(berth_node_get(berth_node_at(job, "metadata.labels"), KUEUE_QUEUE_LABEL));
	/* a label's value is at most 63 characters; a longer one is not Kueue's */
	if (q && !berth_check_label_value(q))
		snprintf(k->queue, sizeof(k->queue), "%s", q);
}

/* The condition of type in a list of conditions, or NULL. */
static const berth_node *condition(const berth_node *conds, const char *type)
{
	for (size_t i = 0; conds && conds->kind == BERTH_NODE_SEQ && i < conds->len; i++) {
		const char *t = berth_node_text(berth_node_get(conds->u.items[i], "type"));
		if (t && !strcmp(t, type))
			return conds->u.items[i];
	}
	return NULL;
}

static bool is(const berth_node *cond, const char *status)
{
	const char *s = berth_node_text(berth_node_get(cond, "status"));
	return s && !strcmp(s, status);
}

static const char *field(const berth_node *cond, const char *key)
{
	const char *s = berth_node_text(berth_node_get(cond, key));
	return s && *s ? s : NULL;
}

void kueue_workload_map(const berth_node *wl, kueue_view *k)
{
	const char *name = berth_node_text(berth_node_at(wl, "metadata.name"));
	const berth_node *conds = berth_node_at(wl, "status.conditions");
	const berth_node *fin = condition(conds, "Finished"), *evicted = condition(conds, "Evicted"),
			 *preempted = condition(conds, "Preempted"), *admitted = condition(conds, "Admitted"),
			 *reserved = condition(conds, "QuotaReserved");
	const char *cq = berth_node_text(berth_node_at(wl, "status.admission.clusterQueue"));
	const char *active = berth_node_text(berth_node_at(wl, "spec.active"));
	/* why it waits, in Kueue's words: the quota's, else the admission's */
	const char *waits = !is(reserved, "True") && field(reserved, "message") ? field(reserved, "message")
			    : !is(admitted, "True") ? field(admitted, "message") : NULL;
	char *r = k->reason;
	size_t len = sizeof(k->reason);
	k->asked = true;
	k->failed = false;
	if (!name)
		name = "?";
	if (is(fin, "True")) {
		const char *why = field(fin, "reason"), *msg = field(fin, "message");
		/* Kueue's reason Failed; a success is the Job's own to say */
		k->failed = why && !strcmp(why, "Failed");
		snprintf(r, len, "Kueue finished its Workload%s: %.60s%s%.300s (Workload %.100s, Kueue's words)",
			 k->failed ? " as failed" : "", why ? why : "Finished", msg ? ": " : "", msg ? msg : "",
			 name);
	} else if (active && !strcmp(active, "false")) {
		snprintf(r, len, "its Workload is deactivated in Kueue (spec.active: false): it is not queued "
			 "until it is activated again (Workload %.100s)", name);
	} else if (is(preempted, "True") || is(evicted, "True")) {
		const berth_node *c = is(preempted, "True") ? preempted : evicted;
		const char *why = field(c, "reason"), *msg = field(c, "message");
		snprintf(r, len, "%s by Kueue: %.60s%s%.200s; queued again in LocalQueue %.63s%s%.150s "
			 "(Workload %.100s, Kueue's words)", c == preempted ? "preempted" : "evicted",
			 why ? why : "Evicted", msg ? ": " : "", msg ? msg : "", k->queue, waits ? ": " : "",
			 waits ? waits : "", name);
	} else if (is(admitted, "True")) {
		snprintf(r, len, "admitted by Kueue to ClusterQueue %.100s; Kueue resumes its Job (Workload %.100s)",
			 cq ? cq : "?", name);
	} else if (is(reserved, "True")) {
		snprintf(r, len, "quota reserved in ClusterQueue %.100s, waiting for its admission checks%s%.300s "
			 "(Workload %.100s%s)", cq ? cq : "?", waits ? ": " : "", waits ? waits : "", name,
			 waits ? ", Kueue's words" : "");
	} else if (waits) {
		snprintf(r, len, "queued in LocalQueue %.63s: %.380s (Workload %.100s, Kueue's words)",
			 k->queue, waits, name);
	} else {
		snprintf(r, len, "queued in LocalQueue %.63s: Kueue has not placed its Workload %.100s yet",
			 k->queue, name);
	}
}

/* Whether Workload wl is the Job's: owned by the Job with uid (by kind and
 * name when the uid is not known: a Job, or an operator's job that Kueue
 * admits as one Workload). */
static bool owned_by(const berth_node *wl, const char *job, const char *uid)
{
	const berth_node *refs = berth_node_at(wl, "metadata.ownerReferences");
	for (size_t i = 0; refs && refs->kind == BERTH_NODE_SEQ && i < refs->len; i++) {
		const berth_node *ref = refs->u.items[i];
		const char *u = berth_node_text(berth_node_get(ref, "uid"));
		const char *kind = berth_node_text(berth_node_get(ref, "kind"));
		const char *n = berth_node_text(berth_node_get(ref, "name"));
		bool jobkind = kind && (!strcmp(kind, "Job") || !strcmp(kind, "PyTorchJob") ||
					!strcmp(kind, "MPIJob") || !strcmp(kind, "JobSet"));
		if (*uid ? u && !strcmp(u, uid) : jobkind && n && !strcmp(n, job))
			return true;
	}
	return false;
}

/* GET path into *root (in a): the HTTP status, or -1 with why in k->reason. */
static long list(kube *api, const char *path, berth_arena *a, const berth_node **root, kueue_view *k)
{
	kube_reply rep;
	memset(&rep, 0, sizeof(rep));
	berth_error *e = NULL;
	long status = -1;
	if (kube_request(api, "GET", path, NULL, NULL, 0, &rep, &e)) {
		const berth_problem *p = berth_error_get(e, 0);
		snprintf(k->reason, sizeof(k->reason), "%.300s", p ? p->message : "the cluster cannot be asked");
	} else if (rep.status == 200 &&
		   berth_json_root(a, "Kueue's Workloads", rep.body, rep.len, root, NULL)) {
		snprintf(k->reason, sizeof(k->reason), "the list of Workloads is not JSON");
	} else {
		status = rep.status;
	}
	berth_error_free(e);
	kube_reply_free(&rep);
	return status;
}

/* The newest item of list root that is the Job's (every item, when the
 * API server filtered them by the Job's uid label). */
static const berth_node *newest_of(const berth_node *root, const char *job, const char *uid, bool all)
{
	const berth_node *items = berth_node_get(root, "items"), *best = NULL;
	const char *best_at = "";
	for (size_t i = 0; items && items->kind == BERTH_NODE_SEQ && i < items->len; i++) {
		const berth_node *wl = items->u.items[i];
		const char *at = berth_node_text(berth_node_at(wl, "metadata.creationTimestamp"));
		if ((all || owned_by(wl, job, uid)) && (!best || (at && strcmp(at, best_at) > 0))) {
			best = wl;
			best_at = at ? at : "";
		}
	}
	return best;
}

void kueue_ask(kube *api, const char *ns, const char *job, const char *uid, kueue_view *k)
{
	k->asked = k->suspended && k->queue[0];
	k->failed = false;
	k->reason[0] = '\0';
	if (!k->asked)
		return;
	berth_arena *a = berth_arena_new();
	berth_buf path = BERTH_BUF_INIT;
	const berth_node *root = NULL, *wl = NULL;
	long status = -1;
	/* by the label Kueue gives the Job's Workload, then by its owner */
	for (int pass = *uid ? 0 : 1; a && pass < 2 && !wl; pass++) {
		path.len = 0;
		berth_buf_printf(&path, KUEUE_API "/namespaces/%s/workloads?", ns);
		if (pass == 0) {
			berth_buf_puts(&path, "labelSelector=");
			kube_put_escaped(&path, JOB_UID_LABEL "=");
			kube_put_escaped(&path, uid);
		} else
			berth_buf_printf(&path, "limit=%d", OWNED_SCAN_LIMIT);
		if (path.failed)
			break;
		if ((status = list(api, path.data, a, &root, k)) != 200)
			break;
		wl = newest_of(root, job, uid, pass == 0);
	}
	if (!a || path.failed)
		snprintf(k->reason, sizeof(k->reason), "suspended, waiting for Kueue to admit it (LocalQueue %s); "
			 "its Workload cannot be read: out of memory", k->queue);
	else if (wl)
		kueue_workload_map(wl, k);
	else if (status == 200)
		snprintf(k->reason, sizeof(k->reason), "suspended, waiting for Kueue to make its Workload "
			 "(LocalQueue %s)", k->queue);
	else if (status == 404)
		snprintf(k->reason, sizeof(k->reason), "suspended, waiting for Kueue (LocalQueue %s), but the "
			 "cluster has no Kueue: the API has no workloads.kueue.x-k8s.io (the Workload CRD is "
			 "missing); install Kueue, or take kueue.local_queue out of the policy", k->queue);
	else if (status == 403)
		snprintf(k->reason, sizeof(k->reason), "suspended, waiting for Kueue (LocalQueue %s); its Workload "
			 "cannot be read: this identity may not list workloads.kueue.x-k8s.io", k->queue);
	else {
		char why[320];
		if (status > 0)
			snprintf(why, sizeof(why), "the API answered HTTP %ld", status);
		else
			snprintf(why, sizeof(why), "%.300s", k->reason);
		snprintf(k->reason, sizeof(k->reason), "suspended, waiting for Kueue (LocalQueue %s); its "
			 "Workload cannot be read: %s", k->queue, why);
	}
	berth_buf_release(&path);
	berth_arena_free(a);
}

berth_state kueue_state(const kueue_view *k, char *reason, size_t len)
{
	if (!k->queue[0])
		snprintf(reason, len, "its Job is suspended (spec.suspend: true): no pod is made until "
			 "something resumes it");
	else if (!k->asked)
		snprintf(reason, len, "suspended, waiting for Kueue to admit it (LocalQueue %s)", k->queue);
	else
		snprintf(reason, len, "%s", k->reason);
	return k->failed ? BERTH_STATE_FAILED : BERTH_STATE_PENDING;
}
