/*
 * check.c - whether a cluster has what the policy names, before the first
 * run finds out (berth cluster check): the namespace, each PriorityClass,
 * the storage class, a node that offers the GPU resources, and every right
 * berth uses, asked with SelfSubjectAccessReview as the identity berth is.
 * Each missing piece is named with what would fix it.
 */
#include <stdio.h>
#include <string.h>

#include "backend/kubernetes/kind.h"
#include "backend/kubernetes/kueue.h"
#include "berth/policy.h"
#include "base/internal.h"
#include "base/names.h"
#include "plan/policy_internal.h"
#include "spec/yaml.h"

/* GET path: 1 there, 0 not found, -1 when it cannot be told (why in *why). */
static int exists(kube *api, const char *path, char *why, size_t len)
{
	kube_reply r;
	memset(&r, 0, sizeof(r));
	berth_error *e = NULL;
	int rc = kube_request(api, "GET", path, NULL, NULL, 0, &r, &e);
	int out;
	if (rc) {
		const berth_problem *p = berth_error_get(e, 0);
		snprintf(why, len, "%s", p ? p->message : "the cluster cannot be asked");
		out = -1;
	} else if (r.status == 200)
		out = 1;
	else if (r.status == 404)
		out = 0;
	else {
		snprintf(why, len, "%s (HTTP %ld)",
			 r.status == 403 ? "this identity may not read it" : "the API refused to say", r.status);
		out = -1;
	}
	berth_error_free(e);
	kube_reply_free(&r);
	return out;
}

/* One line of the report; a problem counts. */
static void line(berth_buf *report, int *problems, bool problem, const char *fmt, ...)
	BERTH_PRINTF(4, 5);
static void line(berth_buf *report, int *problems, bool problem, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	berth_buf_vprintf(report, fmt, ap);
	va_end(ap);
	berth_buf_puts(report, "\n");
	*problems += problem;
}

static void check_named(kube *api, berth_buf *report, int *problems, const char *what,
			const char *path, const char *name, const char *fix)
{
	char why[300] = "";
	int e = exists(api, path, why, sizeof(why));
	if (e > 0)
		line(report, problems, false, "ok %s %s", what, name);
	else if (e == 0)
		line(report, problems, true, "missing %s %s: %s", what, name, fix);
	else
		line(report, problems, false, "unknown %s %s: %s", what, name, why);
}

/* The rights berth uses in the runs' namespace (docs/kubernetes.md, "The identity"). */
static const struct right {
	const char *group, *resource, *subresource;
	const char *verbs[6];
} rights[] = {
	{"", "secrets", NULL, {"create", "patch", "delete", "get", "list", NULL}},
	{"", "persistentvolumeclaims", NULL, {"create", "patch", "delete", "get", "list", NULL}},
	{"", "services", NULL, {"create", "patch", "delete", "get", "list", NULL}},
	{"batch", "jobs", NULL, {"create", "patch", "delete", "get", "list", "watch"}},
	{"batch", "cronjobs", NULL, {"create", "patch", "delete", "get", "list", "watch"}},
	{"apps", "deployments", NULL, {"create", "patch", "delete", "get", "list", "watch"}},
	{"autoscaling", "horizontalpodautoscalers", NULL, {"create", "patch", "delete", "get", "list", NULL}},
	{"", "pods", NULL, {"get", "list", "watch", NULL}},
	{"", "pods", "log", {"get", NULL}},
	{"", "events", NULL, {"list", NULL}},
};

/* Whether this identity may verb the resource in ns: 1, 0, or -1 (why). */
static int allowed(kube *api, const char *ns, const struct right *r, const char *verb,
		   char *why, size_t len)
{
	berth_buf body = BERTH_BUF_INIT;
	berth_buf_printf(&body,
			 "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SelfSubjectAccessReview\","
			 "\"spec\":{\"resourceAttributes\":{\"namespace\":\"%s\",\"verb\":\"%s\","
			 "\"group\":\"%s\",\"resource\":\"%s\",\"subresource\":\"%s\"}}}",
			 ns, verb, r->group, r->resource, r->subresource ? r->subresource : "");
	kube_reply rep;
	memset(&rep, 0, sizeof(rep));
	berth_error *e = NULL;
	int out = -1;
	if (body.failed)
		snprintf(why, len, "out of memory");
	else if (kube_request(api, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
			      "application/json", body.data, body.len, &rep, &e)) {
		const berth_problem *p = berth_error_get(e, 0);
		snprintf(why, len, "%s", p ? p->message : "the cluster cannot be asked");
	} else if (rep.status != 201 && rep.status != 200) {
		snprintf(why, len, "SelfSubjectAccessReview answered HTTP %ld", rep.status);
	} else {
		berth_arena *a = berth_arena_new();
		const berth_node *root = NULL;
		if (a && !berth_json_root(a, "an access review", rep.body, rep.len, &root, NULL)) {
			const char *v = berth_node_text(berth_node_at(root, "status.allowed"));
			out = v && !strcmp(v, "true");
		} else
			snprintf(why, len, "an access review that is not JSON");
		berth_arena_free(a);
	}
	berth_error_free(e);
	berth_buf_release(&body);
	kube_reply_free(&rep);
	return out;
}

static void check_right(kube *api, berth_buf *report, int *problems, const char *ns,
			const struct right *r)
{
	berth_buf denied = BERTH_BUF_INIT;
	char why[300] = "";
	bool unknown = false;
	for (size_t k = 0; k < BERTH_ARRAY_SIZE(r->verbs) && r->verbs[k] && !unknown; k++) {
		int a = allowed(api, ns, r, r->verbs[k], why, sizeof(why));
		if (a < 0)
			unknown = true;
		else if (!a)
			berth_buf_printf(&denied, "%s%s", denied.len ? ", " : "", r->verbs[k]);
	}
	char what[120];
	snprintf(what, sizeof(what), "%s%s%s%s%s", r->group, *r->group ? "/" : "", r->resource,
		 r->subresource ? "/" : "", r->subresource ? r->subresource : "");
	if (unknown)
		line(report, problems, false, "unknown rights on %s in namespace %s: %s", what, ns, why);
	else if (denied.len)
		line(report, problems, true, "missing rights on %s in namespace %s: %s (berth cluster "
		     "setup grants them, as deploy/kubernetes/rbac.yaml does)", what, ns, denied.data);
	else
		line(report, problems, false, "ok rights on %s in namespace %s", what, ns);
	berth_buf_release(&denied);
}

static void check_rights(kube *api, berth_buf *report, int *problems, const char *ns)
{
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(rights); i++)
		check_right(api, report, problems, ns, &rights[i]);
}

/*
 * kueue.local_queue: Kueue's API, the LocalQueue in the runs' namespace ns
 * (a queue per project: the default project's), and the right to read the
 * Workloads that say why a run waits. Without them every Job waits
 * suspended for ever.
 */
static void check_kueue(kube *api, berth_buf *report, int *problems, const berth_policy *p,
			const char *ns)
{
	const char *q = p->kueue.local_queue.s;
	if (!q)
		return;
	/* names of at most 63 (the policy and the plan checked them) */
	char name[128], path[400], fix[400];
	berth_buf of = BERTH_BUF_INIT;
	if (berth_policy_project_name(q, "default", &of))
		line(report, problems, false, "note LocalQueues per project (%s): the default project's is "
		     "asked", q);
	snprintf(name, sizeof(name), "%.100s", of.len && !of.failed ? of.data : q);
	berth_buf_release(&of);
	char why[300] = "";
	int e = exists(api, KUEUE_API, why, sizeof(why));
	if (e == 0) {
		line(report, problems, true, "missing Kueue: the API has no kueue.x-k8s.io/v1beta1, and every "
		     "run's Job would wait suspended; install Kueue, or take kueue.local_queue out of the policy");
		return;
	}
	if (e < 0) {
		line(report, problems, false, "unknown Kueue: %s", why);
		return;
	}
	line(report, problems, false, "ok Kueue (kueue.x-k8s.io/v1beta1)");
	snprintf(path, sizeof(path), KUEUE_API "/namespaces/%.100s/localqueues/%s", ns, name);
	snprintf(fix, sizeof(fix), "every run's Job waits suspended until it exists; create the LocalQueue "
		 "%s in namespace %.100s, pointing to a ClusterQueue (kueue.local_queue)", name, ns);
	check_named(api, report, problems, "LocalQueue", path, name, fix);
	const struct right wright = {"kueue.x-k8s.io", "workloads", NULL, {"list", NULL}};
	check_right(api, report, problems, ns, &wright);
}

int kube_served(kube *api, const char *gv, const char *plural, char *why, size_t len)
{
	char path[300];
	snprintf(path, sizeof(path), "/apis/%s", gv);
	kube_reply rep;
	memset(&rep, 0, sizeof(rep));
	berth_error *e = NULL;
	int out = -1;
	if (kube_request(api, "GET", path, NULL, NULL, 0, &rep, &e)) {
		const berth_problem *p = berth_error_get(e, 0);
		snprintf(why, len, "%s", p ? p->message : "the cluster cannot be asked");
	} else if (rep.status == 404) {
		snprintf(why, len, "the API has no %s", gv);
		out = 0;
	} else if (rep.status != 200) {
		snprintf(why, len, "%s (HTTP %ld)", rep.status == 403 ? "this identity may not read the API's "
			 "resources" : "the API refused to list its resources", rep.status);
	} else {
		berth_arena *a = berth_arena_new();
		const berth_node *root = NULL;
		if (a && !berth_json_root(a, "the API's resources", rep.body, rep.len, &root, NULL)) {
			const berth_node *items = berth_node_get(root, "resources");
			out = 0;
			for (size_t i = 0; items && items->kind == BERTH_NODE_SEQ && i < items->len && !out; i++) {
				const char *name = berth_node_text(berth_node_get(items->u.items[i], "name"));
				out = name && !strcmp(name, plural);
			}
			if (!out)
				snprintf(why, len, "%s has no %s", gv, plural);
		} else
			snprintf(why, len, "the list of %s's resources is not JSON", gv);
		berth_arena_free(a);
	}
	berth_error_free(e);
	kube_reply_free(&rep);
	return out;
}

const kube_operator_kind *kube_operator_kinds(const char *op, size_t *n)
{
	static const kube_operator_kind kubeflow[] = {
		{"PyTorchJob", "kubeflow.org", "kubeflow.org/v1", "pytorchjobs",
		 "the Kubeflow Training Operator (v1.7 or later)", "torchrun and env jobs"},
		{"MPIJob", "kubeflow.org", "kubeflow.org/v2beta1", "mpijobs", "the MPI Operator (v0.4 or later)",
		 "mpi jobs"},
	};
	static const kube_operator_kind jobset[] = {
		{"JobSet", "jobset.x-k8s.io", "jobset.x-k8s.io/v1alpha2", "jobsets", "JobSet",
		 "distributed jobs but mpi"},
	};
	*n = 0;
	if (op && !strcmp(op, "kubeflow"))
		return *n = BERTH_ARRAY_SIZE(kubeflow), kubeflow;
	if (op && !strcmp(op, "jobset"))
		return *n = BERTH_ARRAY_SIZE(jobset), jobset;
	return NULL;
}

/*
 * distributed.operator: the API of each workload it renders, and berth's
 * rights on it in the runs' namespace ns. Without it, the API refuses every
 * distributed job of that kind (berth refuses it first, naming what is
 * missing).
 */
static void check_operator(kube *api, berth_buf *report, int *problems, const berth_policy *p,
			   const char *ns)
{
	size_t n;
	const char *op = p->distributed.op.s;
	const kube_operator_kind *k = kube_operator_kinds(op, &n);
	for (size_t i = 0; i < n; i++) {
		char why[300] = "";
		int e = kube_served(api, k[i].api, k[i].plural, why, sizeof(why));
		if (e > 0)
			line(report, problems, false, "ok %s API (%s, %s)", k[i].kind, k[i].api, k[i].installer);
		else if (e == 0)
			line(report, problems, true, "missing %s API: %s; distributed.operator %s renders %s as %ss, "
			     "which this cluster would refuse: install %s, or change distributed.operator in the "
			     "policy", k[i].kind, why, op, k[i].runs, k[i].kind, k[i].installer);
		else
			line(report, problems, false, "unknown %s API (%s): %s", k[i].kind, k[i].api, why);
		const struct right r = {k[i].group, k[i].plural, NULL, {"create", "patch", "delete", "get", "list", "watch"}};
		check_right(api, report, problems, ns, &r);
	}
}

/* Whether a node offers the extended resource (allocatable): 1, 0, -1. */
static int offered(kube *api, const char *resource, char *why, size_t len)
{
	kube_reply rep;
	memset(&rep, 0, sizeof(rep));
	berth_error *e = NULL;
	int out = -1;
	if (kube_request(api, "GET", "/api/v1/nodes", NULL, NULL, 0, &rep, &e)) {
		const berth_problem *p = berth_error_get(e, 0);
		snprintf(why, len, "%s", p ? p->message : "the cluster cannot be asked");
	} else if (rep.status != 200) {
		snprintf(why, len, "%s (HTTP %ld)", rep.status == 403 ? "this identity may not list nodes"
					: "the API refused to list nodes", rep.status);
	} else {
		berth_arena *a = berth_arena_new();
		const berth_node *root = NULL;
		out = 0;
		if (a && !berth_json_root(a, "the nodes", rep.body, rep.len, &root, NULL)) {
			const berth_node *items = berth_node_get(root, "items");
			for (size_t i = 0; items && items->kind == BERTH_NODE_SEQ && i < items->len; i++) {
				const char *v = berth_node_text(
					berth_node_get(berth_node_at(items->u.items[i], "status.allocatable"), resource));
				if (v && strcmp(v, "0"))
					out = 1;
			}
		}
		berth_arena_free(a);
	}
	berth_error_free(e);
	kube_reply_free(&rep);
	return out;
}

int kube_check(kube *api, const berth_policy *p, berth_buf *report)
{
	const char *ns = p->namespace.s ? p->namespace.s : kube_cfg(api)->namespace;
	/* a template is the policy's; a kubeconfig's namespace is a name */
	const char *tpl = p->namespace.s ? strstr(ns, "{project}") : NULL;
	berth_buf nsbuf = BERTH_BUF_INIT;
	int problems = 0;
	char path[600], fix[600];
	line(report, &problems, false, "cluster %s, context %s", kube_cfg(api)->server,
	     kube_cfg(api)->context ? kube_cfg(api)->context : "-");
	const char *bad = tpl ? NULL : berth_check_dns_label(ns);
	if (bad) {
		line(report, &problems, true, "missing namespace: \"%.100s\" (the kubeconfig context's) is not a "
		     "namespace name: it %s", ns, bad);
		return problems;
	}
	if (tpl) {
		/* a namespace per project, made on its first run: the rights are
		 * asked in the default project's */
		berth_policy_project_name(p->namespace.s, "default", &nsbuf);
		line(report, &problems, false, "note namespaces per project (%s): each is made, with a "
		     "ResourceQuota from the project's quota and a LimitRange from the policy's limits "
		     "and defaults, on the project's first run", ns);
		static const struct right made[] = {{"", "namespaces", NULL, {"create", NULL}},
						    {"", "resourcequotas", NULL, {"create", NULL}},
						    {"", "limitranges", NULL, {"create", NULL}}};
		char why[300] = "";
		int a = 1;
		for (size_t i = 0; a > 0 && i < BERTH_ARRAY_SIZE(made); i++)
			a = allowed(api, "", &made[i], "create", why, sizeof(why));
		if (a > 0)
			line(report, &problems, false, "ok rights to create namespaces");
		else if (a == 0)
			line(report, &problems, true, "missing rights to create namespaces: grant create on "
			     "namespaces, resourcequotas and limitranges (the ClusterRole berth-namespaces of "
			     "berth cluster setup), or create each project's namespace");
		else
			line(report, &problems, false, "unknown rights to create namespaces: %s", why);
		ns = nsbuf.failed ? "default" : nsbuf.data;
	} else {
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s", ns);
		snprintf(fix, sizeof(fix), "kubectl create namespace %s (where every run's objects go)", ns);
		check_named(api, report, &problems, "namespace", path, ns, fix);
	}
	for (size_t i = 0; i < p->priority_classes.n; i++) {
		const char *name = p->priority_classes.items[i].value.s;
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = !strcmp(p->priority_classes.items[k].value.s, name);
		if (seen)
			continue;
		snprintf(path, sizeof(path), "/apis/scheduling.k8s.io/v1/priorityclasses/%s", name);
		snprintf(fix, sizeof(fix), "the API refuses every pod that names it; berth cluster "
			 "setup makes it (deploy/kubernetes/priorityclasses.yaml has the example policy's)");
		check_named(api, report, &problems, "PriorityClass", path, name, fix);
	}
	if (p->storage.default_class.s) {
		snprintf(path, sizeof(path), "/apis/storage.k8s.io/v1/storageclasses/%s",
			 p->storage.default_class.s);
		check_named(api, report, &problems, "StorageClass", path, p->storage.default_class.s,
			    "claims that name none stay Pending; create it or change storage.default_class");
	}
	const char *gpus[KUBE_GPU_TYPES_MAX];
	size_t ngpus = kube_gpu_types(p, gpus);
	for (size_t i = 0; i < ngpus; i++) {
		char why[300] = "";
		int o = offered(api, gpus[i], why, sizeof(why));
		if (o > 0)
			line(report, &problems, false, "ok GPU resource %s (a node offers it)", gpus[i]);
		else if (o == 0)
			line(report, &problems, false, "note GPU resource %s: no node offers it now (runs that "
			     "ask for it wait, unless an autoscaler adds such nodes)", gpus[i]);
		else
			line(report, &problems, false, "unknown GPU resource %s: %s", gpus[i], why);
	}
	check_kueue(api, report, &problems, p, ns);
	check_operator(api, report, &problems, p, ns);
	check_rights(api, report, &problems, ns);
	berth_buf_release(&nsbuf);
	return problems;
}

int kube_priority_class_exists(kube *api, const char *name)
{
	char path[400], why[300];
	if (berth_check_dns_subdomain(name))
		return -1;
	snprintf(path, sizeof(path), "/apis/scheduling.k8s.io/v1/priorityclasses/%s", name);
	return exists(api, path, why, sizeof(why));
}
