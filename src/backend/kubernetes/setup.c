/*
 * setup.c - what a cluster needs before users run, made from the policy
 * (berth cluster setup; docs/kubernetes.md, "Set-up for an admin"): the
 * PriorityClasses its priority_classes name, the namespace of runs, berth's
 * ServiceAccount and its rights there (deploy/kubernetes/rbac.yaml is the
 * example policy's), and, for a namespace per project, the rights to make
 * namespaces and each listed project's namespace with its ResourceQuota and
 * LimitRange. A project's namespace is made of the same objects on the
 * project's first run (kube_project_namespace).
 *
 * Every object is a tree of the emitter (render/emit.h): the policy's
 * strings are values in it, written by the emitter, never text of the
 * output. The comment before each object is berth's words, with the
 * policy's names in it made printable.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/kubernetes/kind.h"
#include "base/names.h"
#include "plan/policy_internal.h"
#include "spec/yaml.h"

/* The kinds set-up makes, and where the API keeps them. */
static const kres kinds[] = {
	{"PriorityClass", "scheduling.k8s.io/v1", "priorityclasses", true},
	{"Namespace", "v1", "namespaces", true},
	{"ServiceAccount", "v1", "serviceaccounts", false},
	{"Role", "rbac.authorization.k8s.io/v1", "roles", false},
	{"RoleBinding", "rbac.authorization.k8s.io/v1", "rolebindings", false},
	{"ClusterRole", "rbac.authorization.k8s.io/v1", "clusterroles", true},
	{"ClusterRoleBinding", "rbac.authorization.k8s.io/v1", "clusterrolebindings", true},
	{"ResourceQuota", "v1", "resourcequotas", false},
	{"LimitRange", "v1", "limitranges", false},
};

static const kres *kind_of(const char *kind)
{
	return kres_in(kinds, BERTH_ARRAY_SIZE(kinds), kind);
}

/* The identity berth uses on a cluster (deploy/kubernetes/berth-serve.yaml
 * runs as it), and the names of its rights. */
#define BERTH_NS "berth"
#define BERTH_SA "berth"
#define RUNS_ROLE "berth-runs"
#define NS_ROLE "berth-namespaces"
#define RBAC_GROUP "rbac.authorization.k8s.io"

/* A new object: apiVersion, kind, metadata (name, and namespace when ns). */
static onode *object(obuild *b, const char *kind, const char *name, const char *ns)
{
	onode *o = o_root(b, O_MAP);
	o_str(b, o, "apiVersion", kind_of(kind)->api);
	o_str(b, o, "kind", kind);
	onode *md = o_map(b, o, "metadata");
	o_str(b, md, "name", name);
	if (ns)
		o_str(b, md, "namespace", ns);
	return o;
}

static onode *labels(obuild *b, onode *o)
{
	return o_map(b, o_get(o, "metadata"), "labels");
}

/* An admin's object of berth (as in deploy/kubernetes/). */
static onode *berth_object(obuild *b, const char *kind, const char *name, const char *ns)
{
	onode *o = object(b, kind, name, ns);
	o_str(b, labels(b, o), "app.kubernetes.io/name", "berth");
	return o;
}

/* prefix + name, in the arena (a key made of a policy's name). */
static const char *joined(obuild *b, const char *prefix, const char *name)
{
	size_t n = strlen(prefix) + strlen(name) + 1;
	char *s = b->failed ? NULL : berth_arena_alloc(b->arena, n);
	if (!s) {
		b->failed = 1;
		return NULL;
	}
	snprintf(s, n, "%s%s", prefix, name);
	return s;
}

/* ---- a project's namespace ------------------------------------------------------------ */

size_t kube_gpu_types(const berth_policy *p, const char *out[KUBE_GPU_TYPES_MAX])
{
	size_t n = 0;
	out[n++] = p->gpu.default_type.s ? p->gpu.default_type.s : "nvidia.com/gpu";
	for (size_t i = 0; i < p->gpu.types.n && n < KUBE_GPU_TYPES_MAX; i++)
		if (strcmp(p->gpu.types.items[i].s, out[0]))
			out[n++] = p->gpu.types.items[i].s;
	return n;
}

/* The ResourceQuota berth-quota: the project's quota as hard requests (the
 * GPUs of the default type). NULL when the quota sets none of them. */
static onode *project_quota(obuild *b, const berth_policy *p, const char *project, const char *ns)
{
	const berth_quota *q = berth_policy_quota(p, project);
	if (!q || (!q->cpu.set && !q->mem.set && !q->gpu.set))
		return NULL;
	onode *o = object(b, "ResourceQuota", "berth-quota", ns);
	o_str(b, labels(b, o), "app.kubernetes.io/managed-by", "berth");
	onode *hard = o_map(b, o_map(b, o, "spec"), "hard");
	const char *gpus[KUBE_GPU_TYPES_MAX];
	kube_gpu_types(p, gpus);
	if (q->cpu.set)
		o_qty(b, hard, "requests.cpu", &q->cpu.q);
	if (q->mem.set)
		o_qty(b, hard, "requests.memory", &q->mem.q);
	if (q->gpu.set)
		o_qty(b, hard, joined(b, "requests.", gpus[0]), &q->gpu.q);
	return o;
}

/* One resource of the LimitRange: its max, default (limit) and
 * defaultRequest; a NULL one is not written. */
typedef struct lrow {
	const char *name;
	const berth_quantity *max, *lim, *req;
	berth_quantity own_lim, own_req; /* what lim and req point to when berth decides them */
} lrow;

/*
 * The LimitRange berth-limits: for each container, the policy's limits per
 * run as max (a run is one container), and its defaults as default and
 * defaultRequest, so that a pod made around berth gets what a run that asks
 * for nothing gets. Only what the policy sets, and what the API's own
 * defaulting makes of it, written out: for a resource with a max, the API
 * makes a missing default the max, and a missing defaultRequest the
 * default. So a resource with a max and without a default limit gets the
 * max as its limit (what berth allows a run) and 0 as its request (what a
 * run without one asks, instead of the max), and a GPU type without a
 * default gets 0 (else every container would get the max in GPUs). NULL
 * when the policy sets none of it.
 */
static onode *project_limits(obuild *b, const berth_policy *p, const char *ns)
{
	const berth_resources *d = &p->defaults.resources;
	const char *gpus[KUBE_GPU_TYPES_MAX];
	size_t ngpus = kube_gpu_types(p, gpus);
	const char *dgpu = d->gpu_type.s ? d->gpu_type.s : gpus[0];
	const struct {
		const char *name;
		const berth_qty *max;
		const berth_resource *def;
	} rs[] = {{"cpu", &p->limits.cpu, &d->cpu},
		  {"memory", &p->limits.mem, &d->mem},
		  {"ephemeral-storage", &p->limits.disk, &d->disk}};
	lrow rows[BERTH_ARRAY_SIZE(rs) + KUBE_GPU_TYPES_MAX];
	size_t n = 0;
	const berth_quantity zero = berth_quantity_from_int(0, BERTH_QUANTITY_DECIMAL_SI);
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(rs) + ngpus; i++) {
		bool gpu = i >= BERTH_ARRAY_SIZE(rs);
		const berth_qty *max = gpu ? &p->limits.gpu : rs[i].max;
		const berth_resource *def = !gpu ? rs[i].def : strcmp(gpus[i - BERTH_ARRAY_SIZE(rs)], dgpu) ? NULL : &d->gpu;
		lrow *r = &rows[n];
		memset(r, 0, sizeof(*r));
		r->name = gpu ? gpus[i - BERTH_ARRAY_SIZE(rs)] : rs[i].name;
		r->max = max->set ? &max->q : NULL;
		if (def && def->limits.set)
			r->lim = &def->limits.q;
		else if (def == &d->mem && def->requests.set && p->mem_limit_ratio.set &&
			 !berth_mem_limit_by_ratio(&def->requests.q, &p->mem_limit_ratio.q, &r->own_lim))
			/* what defaults.mem_limit_ratio gives a run: capped at the
			 * platform's limit, as the plan caps it */
			r->lim = r->max && berth_quantity_cmp(&r->own_lim, r->max) > 0 ? r->max : &r->own_lim;
		if (!gpu && def && def->requests.set)
			r->req = &def->requests.q;
		if (r->max && !r->lim) {
			r->own_lim = gpu ? zero : *r->max;
			r->lim = &r->own_lim;
			if (!gpu && !r->req) {
				r->own_req = zero;
				r->req = &r->own_req;
			}
		}
		/* as the API (and berth's merge) make it: written, so that the
		 * object stored is the one applied, and applies again unchanged */
		if (r->lim && !r->req)
			r->req = r->lim;
		n += r->max || r->lim || r->req;
	}
	if (!n)
		return NULL;
	onode *o = object(b, "LimitRange", "berth-limits", ns);
	o_str(b, labels(b, o), "app.kubernetes.io/managed-by", "berth");
	onode *item = o_map(b, o_seq(b, o_map(b, o, "spec"), "limits"), NULL);
	o_str(b, item, "type", "Container");
	static const char *const keys[] = {"max", "default", "defaultRequest"};
	for (size_t k = 0; k < BERTH_ARRAY_SIZE(keys); k++) {
		onode *m = NULL;
		for (size_t i = 0; i < n; i++) {
			const berth_quantity *q = k == 0 ? rows[i].max : k == 1 ? rows[i].lim : rows[i].req;
			if (!q)
				continue;
			if (!m)
				m = o_map(b, item, keys[k]);
			o_qty(b, m, rows[i].name, q);
		}
	}
	return o;
}

/* The namespace of a project, its ResourceQuota and its LimitRange (the
 * last two when the policy sets anything for them), into objs; how many. */
#define PROJECT_OBJECTS 3
static size_t project_objects(obuild *b, const berth_policy *p, const char *project, const char *ns,
			      onode *objs[PROJECT_OBJECTS])
{
	size_t n = 0;
	onode *o = object(b, "Namespace", ns, NULL);
	onode *l = labels(b, o);
	o_str(b, l, "app.kubernetes.io/managed-by", "berth");
	o_str(b, l, "berth.dev/project", project);
	objs[n++] = o;
	if ((o = project_quota(b, p, project, ns)))
		objs[n++] = o;
	/* the limits and defaults the project's runs get (its overlay, projects.NAME) */
	if ((o = project_limits(b, berth_policy_for_project(p, project), ns)))
		objs[n++] = o;
	return n;
}

/* POST of an object to its collection: 0 made or there already (409); else
 * the API's refusal, as what. uid (may be NULL) gets the uid of the object
 * made, "" when it was there already. */
static int create(kube *api, const onode *o, const char *ns, const char *what, char uid[64],
		  berth_error **err)
{
	berth_buf path = BERTH_BUF_INIT, json = BERTH_BUF_INIT;
	kpath(&path, kind_of(o_get(o, "kind")->s), ns, NULL);
	emit_json(&json, o, 0, 0);
	kube_reply r;
	memset(&r, 0, sizeof(r));
	int rc = path.failed || json.failed ? berth_fail(err, BERTH_ENOMEM, "out of memory")
		 : kube_request(api, "POST", path.data, "application/json", json.data, json.len, &r, err);
	if (!rc && r.status >= 300 && r.status != 409)
		rc = kube_status_error(&r, what, err);
	if (uid)
		uid[0] = '\0';
	berth_arena *a = !rc && uid && r.status == 201 ? berth_arena_new() : NULL;
	const berth_node *root = NULL;
	if (a && !berth_json_root(a, "the object made", r.body, r.len, &root, NULL)) {
		const char *u = berth_node_text(berth_node_at(root, "metadata.uid"));
		snprintf(uid, 64, "%s", u && strlen(u) < 64 ? u : "");
	}
	berth_arena_free(a);
	kube_reply_free(&r);
	berth_buf_release(&path);
	berth_buf_release(&json);
	return rc;
}

int kube_project_namespace(kube *api, const berth_policy *p, const char *project, const char *ns,
			   berth_error **err)
{
	berth_buf path = BERTH_BUF_INIT;
	kpath(&path, kind_of("Namespace"), NULL, ns);
	kube_reply r;
	memset(&r, 0, sizeof(r));
	int rc = path.failed ? berth_fail(err, BERTH_ENOMEM, "out of memory")
		 : kube_request(api, "GET", path.data, NULL, NULL, 0, &r, err);
	long status = r.status;
	kube_reply_free(&r);
	/* only a namespace that is not there is made: one this identity may not
	 * read (403) may well exist, made by an admin; the apply says */
	if (rc || status != 404) {
		berth_buf_release(&path);
		return rc;
	}
	obuild b = {.arena = berth_arena_new()};
	onode *objs[PROJECT_OBJECTS];
	size_t n = b.arena ? project_objects(&b, p, project, ns, objs) : 0;
	if (!b.arena || b.failed)
		rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
	char made[64] = ""; /* the uid of the namespace, when this call made it */
	for (size_t i = 0; !rc && i < n; i++) {
		char what[600];
		const char *kind = o_get(objs[i], "kind")->s;
		if (i == 0)
			snprintf(what, sizeof(what), "namespace %s (the policy's namespace for project %s): berth "
				 "may not create it; create it, or grant berth create on namespaces", ns, project);
		else
			snprintf(what, sizeof(what), "the %s of namespace %s, which is taken away again (for "
				 "project %s)", kind, ns, project);
		rc = create(api, objs[i], ns, what, i == 0 ? made : NULL, err);
		if (rc && made[0]) {
			/* no namespace without its quota and limits: the next run makes them again.
			 * Only the one this call made: one that was there by the time it asked
			 * (another berth's, an admin's) is not berth's to take away */
			char opts[160];
			snprintf(opts, sizeof(opts), "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
				 "\"preconditions\":{\"uid\":\"%s\"}}", made);
			kube_reply d;
			memset(&d, 0, sizeof(d));
			berth_error *e = NULL;
			kube_request(api, "DELETE", path.data, "application/json", opts, strlen(opts), &d, &e);
			berth_error_free(e);
			kube_reply_free(&d);
		}
	}
	berth_arena_free(b.arena);
	berth_buf_release(&path);
	return rc;
}

/* ---- what an admin applies ------------------------------------------------------------- */

typedef struct setup {
	obuild b;
	struct sobj {
		onode *o;
		const char *why;
	} *objs;
	size_t n, cap;
} setup;

/* A policy's name in a comment: one printable line. Each control character
 * (C0, DEL, C1: NEL among them), LINE and PARAGRAPH SEPARATOR (line breaks
 * to a YAML 1.1 reader, kubectl's), and each byte that is not UTF-8 becomes
 * '?': else what follows one would be a line of the stream. */
static const char *line_of(setup *s, const char *name)
{
	char *c = berth_arena_strdup(s->b.arena, name ? name : "");
	if (!c) {
		s->b.failed = 1;
		return "";
	}
	size_t n = strlen(c), w = 0;
	for (size_t r = 0; r < n;) {
		const unsigned char *u = (const unsigned char *)c + r;
		size_t k = berth_utf8_len(c + r, n - r);
		bool bad = !k || (k == 1 && (u[0] < 0x20 || u[0] == 0x7f)) || (k == 2 && u[0] == 0xc2 && u[1] < 0xa0) ||
			   (k == 3 && u[0] == 0xe2 && u[1] == 0x80 && (u[2] == 0xa8 || u[2] == 0xa9));
		if (bad)
			c[w++] = '?';
		else
			memmove(c + w, c + r, k), w += k;
		r += k ? k : 1;
	}
	c[w] = '\0';
	return c;
}

/* Adds o, after the comment fmt (berth's words; names through line_of). */
static void add(setup *s, onode *o, const char *fmt, ...) BERTH_PRINTF(3, 4);
static void add(setup *s, onode *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	berth_buf why = BERTH_BUF_INIT;
	berth_buf_vprintf(&why, fmt, ap);
	va_end(ap);
	const char *w = why.failed ? NULL : berth_arena_strdup(s->b.arena, why.data);
	berth_buf_release(&why);
	if (!o || !w || s->n >= s->cap) {
		s->b.failed = 1;
		return;
	}
	s->objs[s->n].o = o;
	s->objs[s->n++].why = w;
}

/* Each PriorityClass that priority_classes names, once, in the order the
 * policy first names them. */
static void priority_classes(setup *s, const berth_policy *p)
{
	obuild *b = &s->b;
	const berth_kvlist *pc = &p->priority_classes;
	/* the policy's classes, then those the projects' overlays add (projects.NAME.priority_classes) */
	size_t all = pc->n;
	for (size_t j = 0; j < p->nprojects; j++)
		all += p->projects[j].view->priority_classes.n;
	const berth_kv **first = all ? berth_arena_alloc(b->arena, all * sizeof(*first)) : NULL;
	size_t n = 0;
	if (all && !first) {
		b->failed = 1;
		return;
	}
	for (size_t j = 0; j <= p->nprojects; j++) {
		const berth_kvlist *l = j ? &p->projects[j - 1].view->priority_classes : pc;
		for (size_t i = 0; i < l->n; i++) {
			size_t k = 0;
			if (j && l->items[i].origin != BERTH_ORIGIN_PROJECT)
				continue; /* the policy's own, named above */
			while (k < n && strcmp(first[k]->value.s, l->items[i].value.s))
				k++;
			if (k == n)
				first[n++] = &l->items[i];
		}
	}
	const char *dflt = NULL; /* the PriorityClass of defaults.priority_class */
	for (size_t i = 0; i < pc->n && p->defaults.priority_class.s; i++)
		if (!strcmp(pc->items[i].key.s, p->defaults.priority_class.s))
			dflt = pc->items[i].value.s;
	for (size_t i = 0; i < n; i++) {
		const char *name = first[i]->value.s;
		int64_t value = berth_policy_class_value(i, n);
		const char *from = "from the order of priority_classes\n(the first class named is the highest)";
		for (size_t k = 0; k < p->local.priority_values.n; k++)
			if (!strcmp(p->local.priority_values.items[k].key.s, name)) {
				value = strtoll(p->local.priority_values.items[k].value.s, NULL, 10);
				from = "local.priority_values";
			}
		bool never = n > 1 && i == n - 1;
		bool is_default = dflt && !strcmp(dflt, name);
		onode *o = berth_object(b, "PriorityClass", name, NULL);
		o_int(b, o, "value", value);
		o_str(b, o, "preemptionPolicy", never ? "Never" : "PreemptLowerPriority");
		o_strf(b, o, "description", "berth runs of priority class %s%s%s", first[i]->key.s,
		       is_default ? " (the policy's default)" : "", never ? ": they never preempt others" : "");
		add(s, o, "priority_classes maps %s to it: the API refuses every pod that names a\n"
			  "PriorityClass it does not have. Its value: %s%s.", line_of(s, first[i]->key.s), from,
		    never ? "; the lowest of several never preempts" : "");
	}
}

/* The rights of a Role or ClusterRole. */
#define EVERY_VERB {"get", "list", "watch", "create", "patch", "update", "delete", "deletecollection"}
typedef struct rule {
	const char *group;
	const char *resources[3];
	const char *verbs[8];
} rule;

/* What berth does with runs in their namespace (docs/kubernetes.md, "The identity"). */
static const rule run_rules[] = {
	{"", {"secrets", "persistentvolumeclaims", "services"}, EVERY_VERB},
	{"batch", {"jobs", "cronjobs"}, EVERY_VERB},
	{"apps", {"deployments"}, EVERY_VERB},
	{"autoscaling", {"horizontalpodautoscalers"}, EVERY_VERB},
	{"batch", {"jobs/finalizers", "cronjobs/finalizers"}, {"update"}},
	{"apps", {"deployments/finalizers"}, {"update"}},
	{"", {"pods"}, {"get", "list", "watch"}},
	{"", {"pods/log"}, {"get"}},
	{"", {"events"}, {"get", "list", "watch"}},
	/* kueue.local_queue: a queued Job's Workload, and its LocalQueue (harmless without Kueue) */
	{"kueue.x-k8s.io", {"workloads", "localqueues"}, {"get", "list"}},
	/* a server samples its runs' use from the metrics API (harmless without metrics-server) */
	{"metrics.k8s.io", {"pods"}, {"get", "list"}},
};

/* With distributed.operator: the operators' workloads, as berth's own
 * (the finalizers: blockOwnerDeletion of the Secret's and claims' owner). */
static const rule kubeflow_rules[] = {
	{"kubeflow.org", {"pytorchjobs", "mpijobs"}, EVERY_VERB},
	{"kubeflow.org", {"pytorchjobs/finalizers", "mpijobs/finalizers"}, {"update"}},
};
static const rule jobset_rules[] = {
	{"jobset.x-k8s.io", {"jobsets"}, EVERY_VERB},
	{"jobset.x-k8s.io", {"jobsets/finalizers"}, {"update"}},
};

/* The rights of runs under policy p into out (at least those of run_rules
 * and two more); how many. */
static size_t runs_rules(const berth_policy *p, rule *out)
{
	size_t n = BERTH_ARRAY_SIZE(run_rules);
	memcpy(out, run_rules, sizeof(run_rules));
	const char *op = p->distributed.op.s;
	const rule *extra = op && !strcmp(op, "kubeflow") ? kubeflow_rules
			    : op && !strcmp(op, "jobset") ? jobset_rules : NULL;
	for (size_t i = 0; extra && i < 2; i++)
		out[n++] = extra[i];
	return n;
}

/* What berth does to make a project's namespace on its first run (get: is
 * it there; delete: the rollback). */
static const rule ns_rules[] = {
	{"", {"namespaces"}, {"get", "create", "delete"}},
	{"", {"resourcequotas", "limitranges"}, {"create"}},
};

static onode *role(obuild *b, const char *kind, const char *name, const char *ns, const rule *r,
		   size_t n)
{
	onode *o = berth_object(b, kind, name, ns);
	onode *seq = o_seq(b, o, "rules");
	for (size_t i = 0; i < n; i++) {
		onode *item = o_map(b, seq, NULL);
		o_str(b, o_seq(b, item, "apiGroups"), NULL, r[i].group);
		onode *res = o_seq(b, item, "resources");
		for (size_t k = 0; k < BERTH_ARRAY_SIZE(r[i].resources) && r[i].resources[k]; k++)
			o_str(b, res, NULL, r[i].resources[k]);
		onode *verbs = o_seq(b, item, "verbs");
		for (size_t k = 0; k < BERTH_ARRAY_SIZE(r[i].verbs) && r[i].verbs[k]; k++)
			o_str(b, verbs, NULL, r[i].verbs[k]);
	}
	return o;
}

/* A binding of berth's ServiceAccount to role (a Role or ClusterRole). */
static onode *binding(obuild *b, const char *kind, const char *name, const char *ns,
		      const char *role_kind, const char *role_name)
{
	onode *o = berth_object(b, kind, name, ns);
	onode *ref = o_map(b, o, "roleRef");
	o_str(b, ref, "apiGroup", RBAC_GROUP);
	o_str(b, ref, "kind", role_kind);
	o_str(b, ref, "name", role_name);
	onode *sub = o_map(b, o_seq(b, o, "subjects"), NULL);
	o_str(b, sub, "kind", "ServiceAccount");
	o_str(b, sub, "name", BERTH_SA);
	o_str(b, sub, "namespace", BERTH_NS);
	return o;
}

/* Every object, in the order they are applied. */
static int build(setup *s, const berth_policy *p, const char *ns, berth_error **err)
{
	obuild *b = &s->b;
	bool per_project = p->namespace.s && strstr(p->namespace.s, "{project}");
	rule rules[BERTH_ARRAY_SIZE(run_rules) + 2];
	size_t nrules = runs_rules(p, rules);
	priority_classes(s, p);
	add(s, berth_object(b, "Namespace", BERTH_NS, NULL),
	    "berth's own namespace: its ServiceAccount, and berth serve\n"
	    "(deploy/kubernetes/berth-serve.yaml).");
	if (p->namespace.s && !per_project)
		add(s, object(b, "Namespace", ns, NULL),
		    "The policy's namespace, where every run's objects go (leave it out if it\n"
		    "exists already).");
	add(s, berth_object(b, "ServiceAccount", BERTH_SA, BERTH_NS),
	    "The identity berth uses on the cluster: berth serve runs as it; for a berth\n"
	    "elsewhere, give it a token of it (kubectl create token berth -n berth).");
	if (!per_project) {
		add(s, role(b, "Role", RUNS_ROLE, ns, rules, nrules),
		    "What berth does with the objects of runs in namespace %s%s\n"
		    "(docs/kubernetes.md, \"The identity\").", line_of(s, ns),
		    p->namespace.s ? "" : " (the kubeconfig\ncontext's: the policy names no namespace)");
		add(s, binding(b, "RoleBinding", RUNS_ROLE, ns, "Role", RUNS_ROLE),
		    "Gives the Role berth-runs to berth's ServiceAccount.");
		return b->failed ? berth_fail(err, BERTH_ENOMEM, "out of memory") : 0;
	}
	add(s, role(b, "ClusterRole", RUNS_ROLE, NULL, rules, nrules),
	    "What berth does with the objects of runs in a project's namespace (the\n"
	    "policy's namespace names {project}), given there by a RoleBinding berth-runs.");
	add(s, role(b, "ClusterRole", NS_ROLE, NULL, ns_rules, BERTH_ARRAY_SIZE(ns_rules)),
	    "berth makes a project's namespace, with its ResourceQuota and LimitRange, on\n"
	    "the project's first run (those of the projects that quotas names follow\n"
	    "here). In a namespace berth made, its rights are an admin's RoleBinding:\n"
	    "  kubectl create rolebinding berth-runs -n NAMESPACE --clusterrole berth-runs \\\n"
	    "      --serviceaccount berth:berth");
	add(s, binding(b, "ClusterRoleBinding", NS_ROLE, NULL, "ClusterRole", NS_ROLE),
	    "Gives the ClusterRole berth-namespaces to berth's ServiceAccount.");
	for (size_t i = 0; i < p->nquotas; i++) {
		const char *project = p->quotas[i].project.s;
		if (!strcmp(project, "default"))
			continue; /* every other project: made on their first runs */
		berth_buf nsb = BERTH_BUF_INIT;
		berth_policy_project_name(p->namespace.s, project, &nsb);
		const char *pns = nsb.failed ? NULL : berth_arena_strdup(b->arena, nsb.data);
		berth_buf_release(&nsb);
		const char *why = pns ? berth_check_dns_label(pns) : NULL;
		if (!pns)
			return berth_fail(err, BERTH_ENOMEM, "out of memory");
		if (why)
			return berth_fail(err, BERTH_EPOLICY, "quotas: project \"%s\" has no namespace: \"%s\" "
					  "(the policy's namespace for it) is not a namespace name: it %s",
					  project, pns, why);
		onode *objs[PROJECT_OBJECTS];
		size_t n = project_objects(b, p, project, pns, objs);
		const char *name = line_of(s, project);
		for (size_t k = 0; k < n; k++) {
			const char *kind = o_get(objs[k], "kind")->s;
			if (!strcmp(kind, "Namespace"))
				add(s, objs[k], "The namespace of project %s's runs (made on its first run too).", name);
			else if (!strcmp(kind, "ResourceQuota"))
				add(s, objs[k], "Project %s's quota (quotas), held by the cluster for pods made "
				    "around\nberth too.", name);
			else
				add(s, objs[k], "The policy's limits per run as each container's max in project "
				    "%s's\nnamespace, and its defaults for a container that asks for nothing.", name);
		}
		add(s, binding(b, "RoleBinding", RUNS_ROLE, pns, "ClusterRole", RUNS_ROLE),
		    "Gives berth the ClusterRole berth-runs in project %s's namespace.", name);
	}
	return b->failed ? berth_fail(err, BERTH_ENOMEM, "out of memory") : 0;
}

/* Each line of why as a comment. */
static void comment(berth_buf *out, const char *why)
{
	for (const char *l = why; l;) {
		const char *nl = strchr(l, '\n');
		berth_buf_printf(out, "# %.*s\n", nl ? (int)(nl - l) : (int)strlen(l), l);
		l = nl ? nl + 1 : NULL;
	}
}

/* The resourceVersion of path into rv: 1 it is there, 0 it is not, -1
 * cannot be told. */
static int version_of(kube *api, const char *path, char *rv, size_t len)
{
	kube_reply r;
	memset(&r, 0, sizeof(r));
	berth_error *e = NULL;
	int out = -1;
	if (!kube_request(api, "GET", path, NULL, NULL, 0, &r, &e)) {
		out = r.status == 404 ? 0 : r.status == 200 ? 1 : -1;
		berth_arena *a = out > 0 ? berth_arena_new() : NULL;
		const berth_node *root = NULL;
		const char *v = NULL;
		if (a && !berth_json_root(a, "an object", r.body, r.len, &root, NULL))
			v = berth_node_text(berth_node_at(root, "metadata.resourceVersion"));
		snprintf(rv, len, "%s", v ? v : "");
		if (out > 0 && !v)
			out = -1;
		berth_arena_free(a);
	}
	berth_error_free(e);
	kube_reply_free(&r);
	return out;
}

static int apply_all(kube *api, const setup *s, berth_buf *out, berth_error **err)
{
	int rc = 0;
	for (size_t i = 0; !rc && i < s->n; i++) {
		const onode *o = s->objs[i].o;
		const kres *k = kind_of(o_get(o, "kind")->s);
		const onode *md = o_get(o, "metadata");
		const char *name = o_get(md, "name")->s;
		const char *ns = k->cluster ? NULL : o_get(md, "namespace")->s;
		berth_buf path = BERTH_BUF_INIT;
		kpath(&path, k, ns, name);
		char before[64] = "";
		int there = path.failed ? -1 : version_of(api, path.data, before, sizeof(before));
		berth_buf_release(&path);
		kube_applied got;
		memset(&got, 0, sizeof(got));
		rc = kube_apply(api, k, ns, name, o, false, &got, err);
		if (rc)
			break;
		const char *what = got.created || there == 0 ? "created"
				   : there < 0 ? "applied"
				   : strcmp(before, got.rv) ? "configured" : "unchanged";
		berth_buf_printf(out, "%s %s %s%s%s\n", what, k->kind, ns ? ns : "", ns ? "/" : "", name);
	}
	return rc;
}

int kube_setup(kube *api, const berth_policy *p, const char *ns, bool dry_run, berth_buf *out,
	       berth_error **err)
{
	setup s;
	memset(&s, 0, sizeof(s));
	s.b.arena = berth_arena_new();
	s.cap = p->priority_classes.n + p->nquotas * (PROJECT_OBJECTS + 1) + 8;
	s.objs = s.b.arena ? berth_arena_alloc(s.b.arena, s.cap * sizeof(*s.objs)) : NULL;
	int rc = s.objs ? build(&s, p, p->namespace.s ? p->namespace.s : ns, err)
			: berth_fail(err, BERTH_ENOMEM, "out of memory");
	for (size_t i = 0; !rc && dry_run && i < s.n; i++) {
		if (i)
			berth_buf_puts(out, "---\n");
		comment(out, s.objs[i].why);
		emit_yaml(out, s.objs[i].o);
	}
	if (!rc && !dry_run)
		rc = apply_all(api, &s, out, err);
	berth_arena_free(s.b.arena);
	return rc;
}
