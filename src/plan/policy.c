/*
 * policy.c - the platform policy file and profiles.d/ into a berth_policy.
 *
 * Read with the decoders of the run spec (spec.c): defaults, profiles and
 * preemptible_nodes are run spec fragments, decoded by the run spec's own
 * table entries and checked by the same rules, so a profile's `resources`
 * accepts exactly what a run's does.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/names.h"
#include "plan/merge.h"
#include "plan/policy_internal.h"
#include "spec/spec_internal.h"
#include "spec/yaml.h"

#define MAX_FIELDS 48

/* Run spec keys a profile may set. */
static const char *const profile_keys[] = {
	"resources", "volumes", "node_selector", "affinity", "tolerations", "secrets", "envs",
	"fs_group", "run_as_user", "run_as_group", "priority_class", "preemption_mode", "labels",
	"timeout", "retries", NULL,
};

/* Run spec keys the policy's defaults may set: volumes are mounted on every
 * run that does not opt out (volume_mode: manual or none). */
static const char *const default_keys[] = {
	"resources", "volumes", "node_selector", "tolerations", "envs", "labels", "fs_group", "run_as_user",
	"run_as_group", "priority_class", "preemption_mode", "timeout", "retries", NULL,
};

static const char *const preemptible_keys[] = {"node_selector", "tolerations", NULL};

/* Run spec fields that security.user_fields may lock. */
static const char *const lockable_keys[] = {
	"resources", "volumes", "node_selector", "affinity", "tolerations", "secrets", "envs",
	"fs_group", "run_as_user", "run_as_group", "priority_class", "preemption_mode", "labels",
	"timeout", "retries", "replicas", "min_replicas", "max_replicas", "service", "profile",
	"volume_mode",
};

/* true/false, nothing else (YAML 1.2: yes/no are strings). */
static void dec_bool(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	berth_int *out = dst;
	if (n->kind != BERTH_NODE_SCALAR || n->type != BERTH_SCALAR_BOOL) {
		report(c, n->pos, BERTH_ETYPE, "must be true or false, not %s", berth_node_kind_name(n));
		return;
	}
	out->v = n->u.text[0] == 't' || n->u.text[0] == 'T';
	out->pos = n->pos;
	out->set = true;
}

/* ---- id ranges ---------------------------------------------------------------- */

/* Built-in defaults (docs/policy.md). */
#define ID_MIN_DEFAULT 1000         /* no system ids: below 1000 on most distributions */
#define ID_MAX 2147483647LL         /* the largest uid/gid a pod or a run may have */
#define PIDS_DEFAULT 1024
#define PIDS_MAX 4194304LL          /* the kernel's largest pid count (PID_MAX_LIMIT) */
#define UID_RANGE_MIN 2000000000LL  /* local.uid_range: far from any distribution's ids */
#define UID_RANGE_MAX 2000065535LL

/* What either bound of a range may be. */
typedef struct range_arg {
	int64_t lo, hi;
} range_arg;

static const range_arg id_range = {0, ID_MAX};
/* uid 0 handed out would be root; uid_t's last value is (uid_t)-1, "no uid" */
static const range_arg uid_range = {1, 4294967294LL};

static const field range_fields[] = {
	{"min", dec_int, offsetof(berth_range, min), NULL},
	{"max", dec_int, offsetof(berth_range, max), NULL},
};

/* "MIN-MAX", two unsigned decimal integers; 0 when s is one. */
static int parse_range(const char *s, int64_t *min, int64_t *max)
{
	int64_t *v[2] = {min, max};
	for (int i = 0; i < 2; i++) {
		size_t n = strspn(s, "0123456789");
		if (n == 0 || n > 18 || s[n] != (i ? '\0' : '-'))
			return -1;
		*v[i] = strtoll(s, NULL, 10);
		s += n + 1;
	}
	return 0;
}

/*
 * A range of ids: "MIN-MAX" or {min: N, max: N} (a bound left out keeps its
 * default). dst is a berth_range; arg a range_arg. The bounds are stored
 * only when the whole range is good.
 */
static void dec_range(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	const range_arg *ra = arg;
	berth_int *min = &((berth_range *)dst)->min, *max = &((berth_range *)dst)->max;
	berth_range r;
	size_t before = c->errors;
	memset(&r, 0, sizeof(r));
	if (n->kind == BERTH_NODE_MAP) {
		decode_map(c, n, range_fields, BERTH_ARRAY_SIZE(range_fields), &r);
		berth_int *b[2] = {&r.min, &r.max};
		static const char *const key[2] = {"min", "max"};
		for (int i = 0; i < 2; i++) {
			if (!b[i]->set || (b[i]->v >= ra->lo && b[i]->v <= ra->hi))
				continue;
			size_t len = path_key(c, key[i]);
			if (b[i]->v < 0)
				report(c, b[i]->pos, BERTH_ERANGE, "%lld: an id must not be negative",
				       (long long)b[i]->v);
			else
				report(c, b[i]->pos, BERTH_ERANGE, "%lld is out of range (%lld to %lld)",
				       (long long)b[i]->v, (long long)ra->lo, (long long)ra->hi);
			path_pop(c, len);
		}
	} else if (n->kind == BERTH_NODE_SCALAR && n->u.text[0] == '-' && n->u.text[1] >= '0' &&
		   n->u.text[1] <= '9') {
		report(c, n->pos, BERTH_ERANGE, "%s: an id must not be negative", QUOTE(n->u.text));
	} else if (n->kind != BERTH_NODE_SCALAR || parse_range(n->u.text, &r.min.v, &r.max.v)) {
		report(c, n->pos, BERTH_ETYPE,
		       "%s is not a range: write \"MIN-MAX\" (e.g. \"%lld-%lld\") or {min: MIN, max: MAX}",
		       n->kind == BERTH_NODE_SCALAR ? QUOTE(n->u.text) : berth_node_kind_name(n),
		       (long long)min->v, (long long)max->v);
	} else {
		r.min.set = r.max.set = true;
		r.min.pos = r.max.pos = n->pos;
		for (int i = 0; i < 2; i++) {
			int64_t v = i ? r.max.v : r.min.v;
			if (v < ra->lo || v > ra->hi) {
				report(c, n->pos, BERTH_ERANGE, "%lld is out of range (%lld to %lld)",
				       (long long)v, (long long)ra->lo, (long long)ra->hi);
				break;
			}
		}
	}
	if (c->errors != before)
		return;
	int64_t lo = r.min.set ? r.min.v : min->v, hi = r.max.set ? r.max.v : max->v;
	if (lo > hi) {
		report(c, r.min.set ? r.min.pos : r.max.pos, BERTH_ERANGE,
		       "min %lld%s is more than max %lld%s", (long long)lo,
		       r.min.set ? "" : " (the default)", (long long)hi, r.max.set ? "" : " (the default)");
		return;
	}
	if (r.min.set)
		*min = r.min;
	if (r.max.set)
		*max = r.max;
}

/* Decodes map n with the run spec keys in keys plus extra entries, all
 * relative to base; then checks the fragment with the run spec's rules. */
static void dec_fragment(dctx *c, const berth_node *n, const char *const *keys, const field *extra,
			 size_t nextra, void *base, berth_spec *spec, const char *prefix)
{
	field t[MAX_FIELDS];
	size_t nt = 0;
	for (; nt < nextra; nt++)
		t[nt] = extra[nt];
	nt += spec_fields_subset(t + nt, MAX_FIELDS - nt, keys, (size_t)((char *)spec - (char *)base));
	size_t before = c->errors;
	decode_map(c, n, t, nt, base);
	spec_finish(c, spec);
	if (c->errors == before) {
		/* within a project's overlay: "projects.NAME.profiles[0]" */
		char full[160];
		const char *saved = c->prefix;
		if (saved)
			snprintf(full, sizeof(full), "%s.%s", saved, prefix);
		c->prefix = saved ? full : prefix;
		berth_spec_validate(c, spec);
		c->prefix = saved;
	}
}

/* The defaults (the policy's, or a project's into spec) and mem_limit_ratio. */
static void decode_defaults(dctx *c, const berth_node *n, berth_policy *p, berth_spec *spec)
{
	const field extra[] = {{"mem_limit_ratio", dec_qty, offsetof(berth_policy, mem_limit_ratio), NULL}};
	dec_fragment(c, n, default_keys, extra, 1, p, spec, "defaults");
	const berth_resource *res[] = {&spec->resources.cpu, &spec->resources.mem, &spec->resources.disk};
	static const char *const resname[] = {"cpu", "mem", "disk"};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(res); i++)
		if (res[i]->requests.from_default) {
			char path[64];
			snprintf(path, sizeof(path), "defaults.resources.%s.requests", resname[i]);
			report_at(c, res[i]->requests.pos, path, BERTH_EINVALID,
				  "\"default\" is this very request, which users' runs get: give a quantity");
		}
	if (p->mem_limit_ratio.set) {
		berth_quantity one = berth_quantity_from_int(1, BERTH_QUANTITY_DECIMAL_SI);
		if (berth_quantity_cmp(&p->mem_limit_ratio.q, &one) < 0)
			report_at(c, p->mem_limit_ratio.pos, "defaults.mem_limit_ratio", BERTH_ERANGE,
				  "must be at least 1 (a limit below the request is refused by Kubernetes)");
	}
}

static void dec_defaults(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	berth_policy *p = dst;
	decode_defaults(c, n, p, &p->defaults);
}

static void dec_preemptible(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	berth_policy *p = dst;
	dec_fragment(c, n, preemptible_keys, NULL, 0, &p->preemptible, &p->preemptible,
		     "preemptible_nodes");
}

static const field limits_fields[] = {
	{"cpu", dec_qty, offsetof(berth_policy, limits.cpu), NULL},
	{"mem", dec_qty, offsetof(berth_policy, limits.mem), NULL},
	{"gpu", dec_qty, offsetof(berth_policy, limits.gpu), NULL},
	{"disk", dec_qty, offsetof(berth_policy, limits.disk), NULL},
	{"volume_size", dec_qty, offsetof(berth_policy, limits.volume_size), NULL},
	{"pids", dec_int, offsetof(berth_policy, limits.pids), NULL},
};

static void dec_limits(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	decode_map(c, n, limits_fields, BERTH_ARRAY_SIZE(limits_fields), dst);
}

static const field security_fields[] = {
	{"disable_root", dec_bool, offsetof(berth_policy, security.disable_root), NULL},
	{"block_existing_volumes", dec_bool, offsetof(berth_policy, security.block_existing_volumes), NULL},
	{"seccomp_profile", dec_str, offsetof(berth_policy, security.seccomp_profile), NULL},
	{"user_fields", dec_strlist, offsetof(berth_policy, security.user_fields), "a list of run spec keys"},
	{"run_as_user_range", dec_range, offsetof(berth_policy, security.run_as_user_range), &id_range},
	{"run_as_group_range", dec_range, offsetof(berth_policy, security.run_as_group_range), &id_range},
	{"fs_group_range", dec_range, offsetof(berth_policy, security.fs_group_range), &id_range},
	{"secret_writers", dec_str, offsetof(berth_policy, security.secret_writers), NULL},
};

static void dec_security(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	decode_map(c, n, security_fields, BERTH_ARRAY_SIZE(security_fields), dst);
}

static const field gpu_fields[] = {
	{"default_type", dec_str, offsetof(berth_policy, gpu.default_type), NULL},
	{"types", dec_strlist, offsetof(berth_policy, gpu.types), "a list of extended resource names"},
};

static void dec_gpu(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	decode_map(c, n, gpu_fields, BERTH_ARRAY_SIZE(gpu_fields), dst);
}

static const field storage_fields[] = {
	{"default_class", dec_str, offsetof(berth_policy, storage.default_class), NULL},
	{"pvc_lifecycle", dec_str, offsetof(berth_policy, storage.pvc_lifecycle), NULL},
};

static void dec_storage(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	decode_map(c, n, storage_fields, BERTH_ARRAY_SIZE(storage_fields), dst);
}

static const field cleanup_fields[] = {
	{"ttl_after_finished", dec_int, offsetof(berth_policy, cleanup.ttl_after_finished), NULL},
};

static void dec_cleanup(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	decode_map(c, n, cleanup_fields, BERTH_ARRAY_SIZE(cleanup_fields), dst);
}

static const field kueue_fields[] = {
	{"local_queue", dec_str, offsetof(berth_policy, kueue.local_queue), NULL},
};

static void dec_kueue(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	decode_map(c, n, kueue_fields, BERTH_ARRAY_SIZE(kueue_fields), dst);
}

/* distributed.operator's values; "none" is an Indexed Job, as unset. */
static const char *const dist_operators[] = {"none", "kubeflow", "jobset"};

static void dec_operator(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	berth_str *s = dst;
	dec_str(c, n, dst, arg);
	if (s->s && enum_value(c, s, dist_operators, BERTH_ARRAY_SIZE(dist_operators)) < 0)
		s->s = NULL;
}

static const field distributed_fields[] = {
	{"operator", dec_operator, offsetof(berth_policy, distributed.op), NULL},
	{"ssh_auth_mount_path", dec_str, offsetof(berth_policy, distributed.ssh_auth_mount_path), NULL},
};

static void dec_distributed(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	decode_map(c, n, distributed_fields, BERTH_ARRAY_SIZE(distributed_fields), dst);
}

/* ---- profiles ---------------------------------------------------------------- */

typedef struct profiles_dst {
	berth_policy *p;
	const char *file;
} profiles_dst;

static void dec_profiles(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	berth_policy *p = ((profiles_dst *)dst)->p;
	const field extra[] = {
		{"id", dec_str, offsetof(berth_profile, id), NULL},
		{"description", dec_str, offsetof(berth_profile, description), NULL},
	};
	if (!want(c, n, BERTH_NODE_SEQ, "a list of profiles"))
		return;
	berth_profile *all = berth_arena_alloc(c->arena, (p->nprofiles + n->len) * sizeof(*all));
	if (!all) {
		report(c, n->pos, BERTH_ENOMEM, "out of memory");
		return;
	}
	if (p->nprofiles)
		memcpy(all, p->profiles, p->nprofiles * sizeof(*all));
	p->profiles = all;
	for (size_t i = 0; i < n->len; i++) {
		berth_profile *pr = &p->profiles[p->nprofiles];
		char prefix[32];
		size_t len = path_index(c, i);
		memset(pr, 0, sizeof(*pr));
		pr->pos = n->u.items[i]->pos;
		pr->file = c->file;
		snprintf(prefix, sizeof(prefix), "profiles[%zu]", i);
		dec_fragment(c, n->u.items[i], profile_keys, extra, 2, pr, &pr->spec, prefix);
		pr->spec.file = c->file;
		if (n->u.items[i]->kind == BERTH_NODE_MAP && !pr->id.s)
			report(c, pr->pos, BERTH_EMISSING, "\"id\" is required");
		if (pr->id.s) {
			const char *why = berth_check_dns_subdomain(pr->id.s);
			if (why)
				report_at(c, pr->id.pos, prefix, BERTH_EINVALID,
					  "id %s is not a valid profile id: it %s", QUOTE(pr->id.s), why);
			for (size_t j = 0; j < p->nprofiles; j++)
				if (p->profiles[j].id.s && strcmp(p->profiles[j].id.s, pr->id.s) == 0) {
					report_at(c, pr->id.pos, prefix, BERTH_EDUPLICATE,
						  "profile %s is defined twice (first at %s:%u)", QUOTE(pr->id.s),
						  p->profiles[j].file, p->profiles[j].id.pos.line);
					break;
				}
			p->nprofiles++;
		}
		path_pop(c, len);
	}
}

static const field capacity_fields[] = {
	{"cpu", dec_qty, offsetof(berth_policy, local.cpu), NULL},
	{"mem", dec_qty, offsetof(berth_policy, local.mem), NULL},
	{"gpu", dec_qty, offsetof(berth_policy, local.gpu), NULL},
	{"disk", dec_qty, offsetof(berth_policy, local.disk), NULL},
};

static void dec_capacity(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	decode_map(c, n, capacity_fields, BERTH_ARRAY_SIZE(capacity_fields), dst);
}

static const field local_fields[] = {
	{"capacity", dec_capacity, 0, NULL},
	{"labels", dec_kvlist, offsetof(berth_policy, local.labels), &kv_map},
	{"taints", dec_strlist, offsetof(berth_policy, local.taints), "a list of taints (key=value:Effect)"},
	{"priority_values", dec_kvlist, offsetof(berth_policy, local.priority_values), &kv_map},
	{"grace_period", dec_int, offsetof(berth_policy, local.grace_period), NULL},
	{"keep_volumes", dec_bool, offsetof(berth_policy, local.keep_volumes), NULL},
	{"uid_range", dec_range, offsetof(berth_policy, local.uid_range), &uid_range},
};

static void dec_local(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	decode_map(c, n, local_fields, BERTH_ARRAY_SIZE(local_fields), dst);
}

/* ---- quotas ------------------------------------------------------------------ */

static const field quota_fields[] = {
	{"cpu", dec_qty, offsetof(berth_quota, cpu), NULL},
	{"mem", dec_qty, offsetof(berth_quota, mem), NULL},
	{"gpu", dec_qty, offsetof(berth_quota, gpu), NULL},
	{"runs", dec_int, offsetof(berth_quota, runs), NULL},
};

/* One project's quota (quotas.NAME, or projects.NAME.quotas) into q. */
static void decode_quota(dctx *c, const berth_node *n, berth_quota *q)
{
	decode_map(c, n, quota_fields, BERTH_ARRAY_SIZE(quota_fields), q);
	const berth_qty *v[3] = {&q->cpu, &q->mem, &q->gpu};
	for (int j = 0; j < 3; j++)
		if (v[j]->set && berth_quantity_sign(&v[j]->q) < 0)
			report(c, v[j]->pos, BERTH_ERANGE, "a quota must not be negative");
	if (q->runs.set && q->runs.v < 0)
		report(c, q->runs.pos, BERTH_ERANGE, "a quota must not be negative");
}

static void dec_quotas(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	berth_policy *p = dst;
	if (!want(c, n, BERTH_NODE_MAP, "a map of project name to quota"))
		return;
	if (!(p->quotas = berth_arena_alloc(c->arena, n->len * sizeof(*p->quotas)))) {
		report(c, n->pos, BERTH_ENOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < n->len; i++) {
		berth_quota *q = &p->quotas[p->nquotas++];
		const berth_node *k = n->u.pairs[i].key;
		size_t len = path_key(c, k->u.text);
		q->project.s = k->u.text;
		q->project.pos = q->pos = k->pos;
		const char *why = strcmp(k->u.text, "default") ? berth_check_dns_label(k->u.text) : NULL;
		if (why)
			report(c, k->pos, BERTH_EINVALID, "%s is not a valid project name: it %s",
			       QUOTE(k->u.text), why);
		decode_quota(c, n->u.pairs[i].value, q);
		path_pop(c, len);
	}
}

/* ---- the file ---------------------------------------------------------------- */

/* ---- projects: an overlay per project ---------------------------------------------- */

/*
 * projects: {NAME: {defaults, limits, profiles, quotas, security,
 * priority_classes, namespace}}. Only its shape is read here; each overlay is
 * read over the whole policy once profiles.d is (build_views).
 */
static void dec_projects(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	berth_policy *p = dst;
	if (!want(c, n, BERTH_NODE_MAP, "a map of project name to what that project's runs get"))
		return;
	check_duplicate_keys(c, n);
	if (n->len > BERTH_POLICY_PROJECTS_MAX) {
		report(c, n->pos, BERTH_ERANGE, "%zu projects: at most %d may have an overlay", n->len,
		       BERTH_POLICY_PROJECTS_MAX);
		return;
	}
	p->projects_node = n; /* its names are checked with the overlays (build_views) */
}

static void dec_project_defaults(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	berth_policy *v = dst;
	decode_defaults(c, n, v, &v->project_defaults);
}

/* The overlay's profiles: that project's only; one with the id of the
 * policy's replaces it for the project. */
static void dec_project_profiles(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	berth_policy *v = dst, own;
	memset(&own, 0, sizeof(own));
	profiles_dst pd = {&own, c->file};
	dec_profiles(c, n, &pd, NULL);
	for (size_t i = 0; i < own.nprofiles; i++)
		own.profiles[i].project = v->project;
	v->profiles = own.profiles;
	v->nprofiles = own.nprofiles;
}

/* The overlay's priority classes, merged by name over the policy's. */
static void dec_project_classes(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	berth_policy *v = dst;
	berth_kvlist own;
	memset(&own, 0, sizeof(own));
	dec_kvlist(c, n, &own, &kv_map);
	berth_kv *all = berth_arena_alloc(c->arena, (v->priority_classes.n + own.n + 1) * sizeof(*all));
	if (!all) {
		report(c, n->pos, BERTH_ENOMEM, "out of memory");
		return;
	}
	size_t k = v->priority_classes.n;
	if (k)
		memcpy(all, v->priority_classes.items, k * sizeof(*all));
	for (size_t i = 0; i < own.n; i++) {
		size_t j = 0;
		while (j < k && strcmp(all[j].key.s, own.items[i].key.s))
			j++;
		all[j] = own.items[i];
		all[j].origin = BERTH_ORIGIN_PROJECT; /* named as the overlay's (priority_rule) */
		k += j == k;
	}
	v->priority_classes.items = all;
	v->priority_classes.n = k;
	v->priority_classes.set = true;
}

/* projects.NAME.quotas: the quota of that project, as quotas.NAME writes it. */
static void dec_project_quota(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	berth_policy *v = dst;
	berth_quota *q = berth_arena_alloc(c->arena, sizeof(*q));
	if (!q) {
		report(c, n->pos, BERTH_ENOMEM, "out of memory");
		return;
	}
	memset(q, 0, sizeof(*q));
	q->project.s = v->project;
	q->project.pos = q->pos = n->pos;
	q->overlay = true;
	decode_quota(c, n, q);
	v->overlay_quota = q;
}

static const field project_fields[] = {
	{"namespace", dec_str, offsetof(berth_policy, namespace), NULL},
	{"defaults", dec_project_defaults, 0, NULL},
	{"limits", dec_limits, 0, NULL},
	{"security", dec_security, 0, NULL},
	{"priority_classes", dec_project_classes, 0, NULL},
	{"profiles", dec_project_profiles, 0, NULL},
	{"quotas", dec_project_quota, 0, NULL},
};

/* profiles are read after the rest of the file (see decode_file). */
static void dec_later(dctx *c, const berth_node *n, void *dst, const void *arg)
{
}

static const field policy_fields[] = {
	{"namespace", dec_str, offsetof(berth_policy, namespace), NULL},
	{"defaults", dec_defaults, 0, NULL},
	{"limits", dec_limits, 0, NULL},
	{"security", dec_security, 0, NULL},
	{"gpu", dec_gpu, 0, NULL},
	{"storage", dec_storage, 0, NULL},
	{"cleanup", dec_cleanup, 0, NULL},
	{"kueue", dec_kueue, 0, NULL},
	{"distributed", dec_distributed, 0, NULL},
	{"preemptible_nodes", dec_preemptible, 0, NULL},
	{"priority_classes", dec_kvlist, offsetof(berth_policy, priority_classes), &kv_map},
	{"profiles", dec_later, 0, NULL},
	{"quotas", dec_quotas, 0, NULL},
	{"local", dec_local, 0, NULL},
	{"projects", dec_projects, 0, NULL},
};

int berth_taint_parse(const char *s, berth_toleration *out, berth_arena *arena)
{
	const char *eq = strchr(s, '='), *colon = strrchr(s, ':');
	if (!colon || colon == s || (eq && eq > colon))
		return -1;
	memset(out, 0, sizeof(*out));
	const char *kend = eq ? eq : colon;
	out->key.s = berth_arena_strndup(arena, s, (size_t)(kend - s));
	out->value.s = eq ? berth_arena_strndup(arena, eq + 1, (size_t)(colon - eq - 1)) : NULL;
	out->effect.s = berth_arena_strdup(arena, colon + 1);
	if (!out->key.s || !out->effect.s || (eq && !out->value.s))
		return -1;
	return strcmp(out->effect.s, "NoSchedule") && strcmp(out->effect.s, "PreferNoSchedule") &&
		       strcmp(out->effect.s, "NoExecute")
		       ? -1
		       : 0;
}

int64_t berth_policy_class_value(size_t i, size_t n)
{
	if (n > 7)
		return 1000 * (int64_t)(n - i);
	int64_t v = 1000;
	for (size_t k = i + 1; k < n; k++)
		v *= 10;
	return v;
}

int64_t berth_policy_priority_value(const berth_policy *p, const char *class_name)
{
	if (!p || !class_name)
		return 0;
	for (size_t i = 0; i < p->local.priority_values.n; i++)
		if (!strcmp(p->local.priority_values.items[i].key.s, class_name))
			return strtoll(p->local.priority_values.items[i].value.s, NULL, 10);
	if (p->local.priority_values.n || p->file)
		return 0;
	/* the built-in policy: the values berth cluster setup gives its classes */
	for (size_t i = 0; i < p->priority_classes.n; i++)
		if (!strcmp(p->priority_classes.items[i].value.s, class_name))
			return berth_policy_class_value(i, p->priority_classes.n);
	return 0;
}

static void check_local(dctx *c, berth_policy *p)
{
	const berth_qty *cap[] = {&p->local.cpu, &p->local.mem, &p->local.gpu, &p->local.disk};
	static const char *const capname[] = {"local.capacity.cpu", "local.capacity.mem",
					      "local.capacity.gpu", "local.capacity.disk"};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(cap); i++)
		if (cap[i]->set && berth_quantity_sign(&cap[i]->q) < 0)
			report_at(c, cap[i]->pos, capname[i], BERTH_ERANGE, "a capacity must not be negative");
	if (p->local.gpu.set && !berth_quantity_is_integer(&p->local.gpu.q))
		report_at(c, p->local.gpu.pos, "local.capacity.gpu", BERTH_EINVALID, "GPUs are whole devices");
	for (size_t i = 0; i < p->local.taints.n; i++) {
		berth_toleration t;
		const char *why = NULL, *part = NULL;
		if (berth_taint_parse(p->local.taints.items[i].s, &t, c->arena))
			report_at(c, p->local.taints.items[i].pos, "local.taints", BERTH_EINVALID,
				  "%s is not a taint: write key=value:Effect or key:Effect, the effect one of "
				  "NoSchedule, PreferNoSchedule, NoExecute",
				  QUOTE(p->local.taints.items[i].s));
		else if ((why = berth_check_qualified_name(t.key.s)))
			part = "key";
		else if (t.value.s && (why = berth_check_label_value(t.value.s)))
			part = "value";
		if (part)
			report_at(c, p->local.taints.items[i].pos, "local.taints", BERTH_EINVALID,
				  "%s is not a taint: its %s %s", QUOTE(p->local.taints.items[i].s), part, why);
	}
	for (size_t i = 0; i < p->local.priority_values.n; i++) {
		const berth_kv *kv = &p->local.priority_values.items[i];
		char *end;
		errno = 0;
		long long v = strtoll(kv->value.s, &end, 10);
		if (errno || end == kv->value.s || *end || v < -2147483648LL || v > 1000000000LL)
			report_at(c, kv->value.pos, "local.priority_values", BERTH_EINVALID,
				  "%s is not a priority value: an integer up to 1000000000, as in a PriorityClass",
				  QUOTE(kv->value.s));
	}
	if (p->local.grace_period.set && p->local.grace_period.v < 0)
		report_at(c, p->local.grace_period.pos, "local.grace_period", BERTH_ERANGE,
			  "must not be negative");
	for (size_t i = 0; i < p->local.labels.n; i++) {
		const berth_kv *kv = &p->local.labels.items[i];
		const char *why;
		if ((why = berth_check_qualified_name(kv->key.s)))
			report_at(c, kv->key.pos, "local.labels", BERTH_EINVALID,
				  "%s is not a valid label key: it %s", QUOTE(kv->key.s), why);
		if ((why = berth_check_label_value(kv->value.s)))
			report_at(c, kv->value.pos, "local.labels", BERTH_EINVALID,
				  "%s is not a valid label value: it %s", QUOTE(kv->value.s), why);
	}
}

/*
 * A name of the policy that may name {project} once (a namespace, a
 * LocalQueue per project): checked with check after substitution, with a
 * one-letter project and with "default" (a spec that names none); what is
 * the kind of name in messages.
 */
static void check_project_template(dctx *c, const berth_str *v, const char *key, const char *what,
				   const char *(*check)(const char *))
{
	const char *why, *tpl = v->s ? strstr(v->s, "{project}") : NULL;
	if (tpl && strstr(tpl + 1, "{project}"))
		report_at(c, v->pos, key, BERTH_EINVALID, "%s names {project} twice", QUOTE(v->s));
	for (int k = 0; tpl && !strstr(tpl + 1, "{project}") && k < 2; k++) {
		berth_buf probe = BERTH_BUF_INIT;
		berth_policy_project_name(v->s, k ? "default" : "p", &probe);
		why = probe.failed ? "cannot be checked (out of memory)" : check(probe.data);
		if (why)
			report_at(c, v->pos, key, BERTH_EINVALID, "%s is not a valid %s for %s: it %s",
				  QUOTE(v->s), what,
				  k ? "project default (a spec that names no project)" : "a project", why);
		berth_buf_release(&probe);
		if (why)
			break;
	}
	if (v->s && !tpl && (why = check(v->s)))
		report_at(c, v->pos, key, BERTH_EINVALID, "%s is not a valid %s: it %s", QUOTE(v->s), what, why);
}

static void check_policy(dctx *c, berth_policy *p)
{
	check_local(c, p);
	const char *why;
	/* "ml-{project}": a namespace per project */
	check_project_template(c, &p->namespace, "namespace", "namespace", berth_check_dns_label);
	/* a LocalQueue is an object's name and the value of the Job's label */
	check_project_template(c, &p->kueue.local_queue, "kueue.local_queue", "LocalQueue name",
			       berth_check_labelled_name);
	if (p->cleanup.ttl_after_finished.set &&
	    (p->cleanup.ttl_after_finished.v < 0 || p->cleanup.ttl_after_finished.v > INT32_MAX))
		report_at(c, p->cleanup.ttl_after_finished.pos, "cleanup.ttl_after_finished", BERTH_ERANGE,
			  "%lld is out of range (0 to %d seconds)", (long long)p->cleanup.ttl_after_finished.v,
			  INT32_MAX);
	/* where the MPI Operator mounts an MPIJob's SSH keys: a directory of the
	 * image, whose parent is its user's home (the workers' sshd reads its
	 * configuration there) */
	const berth_str *ssh = &p->distributed.ssh_auth_mount_path;
	if (ssh->s && (ssh->s[0] != '/' || !strcmp(ssh->s, "/") || (why = berth_check_printable(ssh->s)) ||
		       strstr(ssh->s, "/../") || strstr(ssh->s, "//") ||
		       (strlen(ssh->s) >= 3 && !strcmp(ssh->s + strlen(ssh->s) - 3, "/.."))))
		report_at(c, ssh->pos, "distributed.ssh_auth_mount_path", BERTH_EINVALID,
			  "%s is not a directory of the image: write an absolute path below its user's home, "
			  "like /home/mpiuser/.ssh", QUOTE(ssh->s));
	if (p->limits.pids.set && (p->limits.pids.v < 1 || p->limits.pids.v > PIDS_MAX))
		report_at(c, p->limits.pids.pos, "limits.pids", BERTH_ERANGE,
			  "%lld is out of range (1 to %lld, the kernel's largest number of processes)",
			  (long long)p->limits.pids.v, PIDS_MAX);
	const berth_qty *lim[] = {&p->limits.cpu, &p->limits.mem, &p->limits.gpu, &p->limits.disk,
				  &p->limits.volume_size};
	static const char *const limname[] = {"limits.cpu", "limits.mem", "limits.gpu", "limits.disk",
					      "limits.volume_size"};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(lim); i++)
		if (lim[i]->set && berth_quantity_sign(&lim[i]->q) < 0)
			report_at(c, lim[i]->pos, limname[i], BERTH_ERANGE, "a limit must not be negative");
	for (size_t i = 0; i < p->security.user_fields.n; i++) {
		const berth_str *f = &p->security.user_fields.items[i];
		size_t k = 0;
		while (k < BERTH_ARRAY_SIZE(lockable_keys) && strcmp(lockable_keys[k], f->s))
			k++;
		if (k == BERTH_ARRAY_SIZE(lockable_keys)) {
			const char *hint = berth_suggest(f->s, lockable_keys, BERTH_ARRAY_SIZE(lockable_keys));
			report_at(c, f->pos, "security.user_fields", BERTH_EINVALID,
				  "%s is not a run spec field that can be locked%s%s%s", QUOTE(f->s),
				  hint ? "; did you mean \"" : "", hint ? hint : "", hint ? "\"?" : "");
		}
	}
	/* who may write a project's secrets: a viewer only reads, and a role
	 * berth does not have would lock everyone out (or in) by a typo */
	if (p->security.secret_writers.s && strcmp(p->security.secret_writers.s, "admin") &&
	    strcmp(p->security.secret_writers.s, "user"))
		report_at(c, p->security.secret_writers.pos, "security.secret_writers", BERTH_EINVALID,
			  "%s is not one of admin, user (the least role that may set and delete a "
			  "project's secrets)", QUOTE(p->security.secret_writers.s));
	for (size_t i = 0; i < p->gpu.types.n; i++)
		if ((why = berth_check_qualified_name(p->gpu.types.items[i].s)))
			report_at(c, p->gpu.types.items[i].pos, "gpu.types", BERTH_EINVALID,
				  "%s is not a valid resource name: it %s", QUOTE(p->gpu.types.items[i].s), why);
	if (p->gpu.default_type.s && (why = berth_check_qualified_name(p->gpu.default_type.s)))
		report_at(c, p->gpu.default_type.pos, "gpu.default_type", BERTH_EINVALID,
			  "%s is not a valid resource name: it %s", QUOTE(p->gpu.default_type.s), why);
	if (p->storage.pvc_lifecycle.s && strcmp(p->storage.pvc_lifecycle.s, "run") &&
	    strcmp(p->storage.pvc_lifecycle.s, "pod"))
		report_at(c, p->storage.pvc_lifecycle.pos, "storage.pvc_lifecycle", BERTH_EINVALID,
			  "%s is not one of run, pod", QUOTE(p->storage.pvc_lifecycle.s));
	if (p->storage.default_class.s && (why = berth_check_dns_subdomain(p->storage.default_class.s)))
		report_at(c, p->storage.default_class.pos, "storage.default_class", BERTH_EINVALID,
			  "%s is not a valid storage class name: it %s", QUOTE(p->storage.default_class.s), why);
	if (p->security.seccomp_profile.s && strcmp(p->security.seccomp_profile.s, "RuntimeDefault") &&
	    strcmp(p->security.seccomp_profile.s, "Unconfined") &&
	    strncmp(p->security.seccomp_profile.s, "localhost/", 10))
		report_at(c, p->security.seccomp_profile.pos, "security.seccomp_profile", BERTH_EINVALID,
			  "%s is not one of RuntimeDefault, Unconfined, localhost/PATH",
			  QUOTE(p->security.seccomp_profile.s));
	else if (p->security.seccomp_profile.s && (why = berth_check_printable(p->security.seccomp_profile.s)))
		report_at(c, p->security.seccomp_profile.pos, "security.seccomp_profile", BERTH_EINVALID,
			  "%s is not a valid seccomp profile: it %s", QUOTE(p->security.seccomp_profile.s), why);
	for (size_t i = 0; i < p->priority_classes.n; i++) {
		const berth_kv *kv = &p->priority_classes.items[i];
		if ((why = berth_check_printable(kv->key.s)) || !*kv->key.s)
			report_at(c, kv->key.pos, "priority_classes", BERTH_EINVALID,
				  "%s is not a valid priority class name: it %s", QUOTE(kv->key.s),
				  why ? why : "must not be empty");
		if ((why = berth_check_dns_subdomain(kv->value.s)))
			report_at(c, kv->value.pos, "priority_classes", BERTH_EINVALID,
				  "%s is not a valid PriorityClass name: it %s", QUOTE(kv->value.s), why);
	}
	/* a default GPU type outside the allowed list could never be used */
	if (p->gpu.default_type.s && p->gpu.types.n) {
		size_t i = 0;
		while (i < p->gpu.types.n && strcmp(p->gpu.types.items[i].s, p->gpu.default_type.s))
			i++;
		if (i == p->gpu.types.n)
			report_at(c, p->gpu.default_type.pos, "gpu.default_type", BERTH_EINVALID,
				  "%s is not in gpu.types", QUOTE(p->gpu.default_type.s));
	}
}

/* ---- what the limits leave usable ---------------------------------------------------- */

#define QF(q) qf(&(q), (char[BERTH_QUANTITY_STR_MAX]){0})

static const char *qf(const berth_quantity *q, char *buf)
{
	berth_quantity_format(q, buf, BERTH_QUANTITY_STR_MAX);
	return buf;
}

static const char *fit_names[4] = {"cpu", "mem", "gpu", "disk"};

/* The resource i (cpu, mem, gpu, disk) of s. */
static const berth_resource *fit_res(const berth_spec *s, size_t i)
{
	const berth_resource *r[4] = {&s->resources.cpu, &s->resources.mem, &s->resources.gpu,
				      &s->resources.disk};
	return r[i];
}

/*
 * The resources of one fragment (the defaults, or a profile, whose place is
 * at) against the policy's limits: a value over a limit is an error, since
 * every run it applies to would be refused; a memory limit that
 * mem_limit_ratio would take over limits.mem is a warning (it is capped).
 */
/* Whether a rule of a project's view is the policy's own (written at the
 * same place): base, the policy, then says what it finds itself. */
static bool base_rule(const berth_policy *base, bool set, berth_pos pos, berth_pos view_pos)
{
	return base && set && pos.line == view_pos.line && pos.column == view_pos.column;
}

/*
 * base: for a project's view, the policy, whose own findings on the same
 * fragment (its defaults, checked against its own rules) are not said again.
 */
static void check_fragment_fit(dctx *c, const berth_policy *p, const berth_spec *s, const char *prefix,
			       const char *what, const char *file, const berth_policy *base)
{
	const berth_qty *lim[4] = {&p->limits.cpu, &p->limits.mem, &p->limits.gpu, &p->limits.disk};
	char path[192], at[512];
	/* its volumes, as volume_rules (plan.c) would find them on every run */
	for (size_t i = 0; i < s->nvolumes; i++) {
		const berth_volume *v = &s->volumes[i];
		c->file = file;
		snprintf(path, sizeof(path), "%s.volumes[%zu]", prefix, i);
		const berth_qty *size = &p->limits.volume_size;
		if (size->set && v->size.set && berth_quantity_cmp(&v->size.q, &size->q) > 0 &&
		    !(base && base_rule(base, base->limits.volume_size.set, base->limits.volume_size.pos,
					size->pos))) {
			snprintf(path, sizeof(path), "%s.volumes[%zu].spec.size", prefix, i);
			report_at(c, v->size.pos, path, BERTH_EPOLICY,
				  "%s is over the platform's limit of %s (limits.volume_size, %s:%u:%u): every "
				  "run %s would be refused", QF(v->size.q), QF(p->limits.volume_size.q), p->file,
				  p->limits.volume_size.pos.line, p->limits.volume_size.pos.column, what);
		}
	}
	for (size_t i = 0; i < 4; i++) {
		const berth_resource *res = fit_res(s, i);
		const berth_qty *v[2] = {&res->requests, &res->limits};
		static const char *const which[2] = {"requests", "limits"};
		const berth_qty *blim[4] = {base ? &base->limits.cpu : NULL, base ? &base->limits.mem : NULL,
					    base ? &base->limits.gpu : NULL, base ? &base->limits.disk : NULL};
		if (!lim[i]->set || (base && base_rule(base, blim[i]->set, blim[i]->pos, lim[i]->pos)))
			continue;
		snprintf(at, sizeof(at), "%s:%u:%u", p->file, lim[i]->pos.line, lim[i]->pos.column);
		char key[128];
		snprintf(key, sizeof(key), "limits.%s", fit_names[i]);
		const char *lkey = berth_policy_key(p, &lim[i]->pos, key, (char[160]){0}, 160);
		for (int k = 0; k < 2; k++) {
			if (!v[k]->set || berth_quantity_cmp(&v[k]->q, &lim[i]->q) <= 0)
				continue;
			c->file = file;
			snprintf(path, sizeof(path), "%s.resources.%s.%s", prefix, fit_names[i], which[k]);
			report_at(c, v[k]->pos, path, BERTH_EPOLICY,
				  "%s %s is over the platform's limit of %s per run (%s, %s): every run "
				  "%s would be refused", fit_names[i], QF(v[k]->q), QF(lim[i]->q), lkey, at, what);
		}
		berth_quantity derived;
		if (i != 1 || !p->mem_limit_ratio.set || !res->requests.set || res->limits.set ||
		    berth_quantity_cmp(&res->requests.q, &lim[i]->q) > 0 ||
		    berth_mem_limit_by_ratio(&res->requests.q, &p->mem_limit_ratio.q, &derived) < 0 ||
		    berth_quantity_cmp(&derived, &lim[i]->q) <= 0)
			continue;
		c->file = file;
		snprintf(path, sizeof(path), "%s.resources.mem.requests", prefix);
		warn_at(c, res->requests.pos, path,
			"mem %s x defaults.mem_limit_ratio %s (%s:%u:%u) is %s, over the platform's limit of "
			"%s per run (%s, %s): the memory limit of every run %s is capped at %s",
			QF(res->requests.q), QF(p->mem_limit_ratio.q), p->file, p->mem_limit_ratio.pos.line,
			p->mem_limit_ratio.pos.column, QF(derived), QF(lim[i]->q), lkey, at, what, QF(lim[i]->q));
	}
}

/*
 * A project's view: its own defaults and profiles against its limits, and
 * the policy's defaults it keeps (what the overlay does not set) too.
 */
static void check_view_fit(dctx *c, const berth_policy *v)
{
	char prefix[192], what[320];
	berth_spec kept = v->base->defaults;
	/* the policy's defaults that the overlay's replace are not the project's */
	for (size_t i = 0; i < 4; i++) {
		berth_resource *k = (berth_resource *)fit_res(&kept, i);
		const berth_resource *own = fit_res(&v->project_defaults, i);
		if (own->requests.set)
			k->requests.set = false;
		if (own->limits.set)
			k->limits.set = false;
	}
	/* its volumes that the project's do not replace (by name) */
	kept.nvolumes = 0;
	kept.volumes = v->defaults.nvolumes ? berth_arena_alloc(c->arena, v->defaults.nvolumes * sizeof(berth_volume))
					    : NULL;
	for (size_t i = 0; kept.volumes && i < v->defaults.nvolumes; i++)
		if (v->defaults.volumes[i].origin != BERTH_ORIGIN_PROJECT)
			kept.volumes[kept.nvolumes++] = v->defaults.volumes[i];
	snprintf(what, sizeof(what), "of project %s that leaves it to the policy's defaults", QUOTE(v->project));
	check_fragment_fit(c, v, &kept, "defaults", what, v->file, v->base);
	snprintf(what, sizeof(what), "of project %s that leaves it to its defaults", QUOTE(v->project));
	snprintf(prefix, sizeof(prefix), "projects.%s.defaults", v->project);
	check_fragment_fit(c, v, &v->project_defaults, prefix, what, v->file, NULL);
	/* every volume the project's runs get: the two lists merged by name */
	for (size_t i = 0; i < v->defaults.nvolumes; i++) {
		const berth_volume *a = &v->defaults.volumes[i];
		for (size_t j = 0; j < i; j++) {
			const berth_volume *b = &v->defaults.volumes[j];
			if (!a->mount_path.s || !b->mount_path.s || strcmp(a->mount_path.s, b->mount_path.s))
				continue;
			const berth_volume *own = a->origin == BERTH_ORIGIN_PROJECT ? a : b;
			const berth_volume *other = own == a ? b : a;
			snprintf(prefix, sizeof(prefix), "projects.%s.defaults.volumes", v->project);
			report_at(c, own->mount_path.pos, prefix, BERTH_EDUPLICATE,
				  "mount path %s of volume %s is also that of volume \"%s\" (%s:%u:%u), which the "
				  "policy's defaults mount: every run of project %s would be refused; give it "
				  "another path, or the name %s to replace it", QUOTE(own->mount_path.s),
				  QUOTE(own->name.s), other->name.s, v->file, other->pos.line, other->pos.column,
				  QUOTE(v->project), QUOTE(other->name.s));
		}
	}
	for (size_t i = 0; i < v->nprofiles; i++) {
		const berth_profile *pr = &v->profiles[i];
		snprintf(prefix, sizeof(prefix), "projects.%s.profiles[%zu]", v->project, i);
		snprintf(what, sizeof(what), "with profile %s", QUOTE(pr->id.s));
		check_fragment_fit(c, v, &pr->spec, prefix, what, pr->file, NULL);
	}
}

/* The defaults and every profile (profiles.d's too) against the limits. */
static void check_fit(dctx *c, const berth_policy *p)
{
	const char *file = c->file;
	char prefix[48], what[320];
	check_fragment_fit(c, p, &p->defaults, "defaults",
			   "that leaves it to the policy's defaults", p->file, NULL);
	for (size_t i = 0; i < p->nprofiles; i++) {
		const berth_profile *pr = &p->profiles[i];
		size_t index = 0; /* its index in its own file */
		for (size_t j = 0; j < i; j++)
			index += p->profiles[j].file == pr->file;
		snprintf(prefix, sizeof(prefix), "profiles[%zu]", index);
		snprintf(what, sizeof(what), "with profile %s", QUOTE(pr->id.s));
		check_fragment_fit(c, p, &pr->spec, prefix, what, pr->file, NULL);
	}
	for (size_t i = 0; i < p->nprojects; i++)
		check_view_fit(c, p->projects[i].view);
	c->file = file;
}

/* ---- the projects' views -------------------------------------------------------------- */

static const berth_profile *own_profile(const berth_policy *p, const char *id);

/* The overlay node of projects.NAME over a copy of p: the view of that project. */
static berth_policy *build_view(dctx *c, berth_policy *p, const berth_node *key, const berth_node *ov,
				bool policy_clean)
{
	berth_policy *v = berth_arena_alloc(c->arena, sizeof(*v));
	size_t plen = strlen(key->u.text) + 16;
	char *prefix = berth_arena_alloc(c->arena, plen);
	if (!v || !prefix) {
		report(c, key->pos, BERTH_ENOMEM, "out of memory");
		return NULL;
	}
	*v = *p;
	v->projects = NULL;
	v->nprojects = 0;
	v->projects_node = NULL;
	v->base = p;
	v->project = key->u.text;
	v->profiles = NULL;
	v->nprofiles = 0;
	v->overlay_quota = NULL;
	memset(&v->project_defaults, 0, sizeof(v->project_defaults));
	snprintf(prefix, plen, "projects.%s", key->u.text);
	size_t len = path_key(c, key->u.text);
	c->prefix = prefix;
	decode_map(c, ov, project_fields, BERTH_ARRAY_SIZE(project_fields), v);
	if (merge_layer(c->arena, &v->defaults, &v->project_defaults, BERTH_ORIGIN_PROJECT) < 0)
		report(c, key->pos, BERTH_ENOMEM, "out of memory");
	/* the profiles its runs see: its own, then the policy's it does not define again */
	v->visible = berth_arena_alloc(c->arena, (v->nprofiles + p->nprofiles + 1) * sizeof(*v->visible));
	if (!v->visible)
		report(c, key->pos, BERTH_ENOMEM, "out of memory");
	for (size_t i = 0; v->visible && i < v->nprofiles + p->nprofiles; i++) {
		const berth_profile *pr = i < v->nprofiles ? &v->profiles[i] : &p->profiles[i - v->nprofiles];
		if (i < v->nprofiles || !own_profile(v, pr->id.s))
			v->visible[v->nvisible++] = pr;
	}
	/* what the overlay sets, checked as the policy's keys are (an error of the
	 * policy's own is reported once, for the policy) */
	if (policy_clean)
		check_policy(c, v);
	c->prefix = NULL;
	path_pop(c, len);
	return v;
}

/* Each overlay of projects, read over the whole policy (profiles.d's too). */
static void build_views(dctx *c, berth_policy *p)
{
	const berth_node *n = p->projects_node;
	if (!n)
		return;
	c->file = p->file;
	path_reset(c);
	bool clean = c->errors == 0;
	size_t len = path_key(c, "projects");
	if (!(p->projects = berth_arena_alloc(c->arena, n->len * sizeof(*p->projects) + 1))) {
		report(c, n->pos, BERTH_ENOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < n->len; i++) {
		const berth_node *k = n->u.pairs[i].key, *ov = n->u.pairs[i].value;
		const char *why = berth_check_dns_label(k->u.text);
		if (why) {
			size_t klen = path_key(c, k->u.text);
			report(c, k->pos, BERTH_EINVALID, "%s is not a valid project name: it %s",
			       QUOTE(k->u.text), why);
			path_pop(c, klen);
		}
		if (why || is_null(ov))
			continue; /* an empty overlay changes nothing */
		berth_policy *v = build_view(c, p, k, ov, clean);
		if (!v)
			break;
		berth_project_policy *pp = &p->projects[p->nprojects++];
		pp->name.s = k->u.text;
		pp->name.pos = k->pos;
		pp->view = v;
		pp->node = ov;
	}
	path_pop(c, len);
	/* projects.NAME.quotas is the quota of NAME, as quotas.NAME: one of the two */
	size_t nq = 0;
	for (size_t i = 0; i < p->nprojects; i++)
		nq += p->projects[i].view->overlay_quota != NULL;
	berth_quota *all = nq ? berth_arena_alloc(c->arena, (p->nquotas + nq) * sizeof(*all)) : NULL;
	if (nq && !all) {
		report(c, n->pos, BERTH_ENOMEM, "out of memory");
		return;
	}
	if (nq) {
		if (p->nquotas)
			memcpy(all, p->quotas, p->nquotas * sizeof(*all));
		p->quotas = all;
	}
	for (size_t i = 0; i < p->nprojects; i++) {
		const berth_quota *q = p->projects[i].view->overlay_quota;
		const char *name = p->projects[i].name.s;
		if (!q)
			continue;
		/* quotas.default is every other project's: as the default project's
		 * own, it would cap every project */
		if (!strcmp(name, "default")) {
			report_at(c, q->pos, "projects.default.quotas", BERTH_EINVALID,
				  "a quota named \"default\" is that of every project without its own: "
				  "write it as quotas.default");
			continue;
		}
		size_t j = 0;
		while (j < p->nquotas && strcmp(p->quotas[j].project.s, name))
			j++;
		if (j < p->nquotas) {
			char path[128];
			snprintf(path, sizeof(path), "projects.%s.quotas", name);
			report_at(c, q->pos, path, BERTH_EDUPLICATE,
				  "the quota of project %s is written twice: here and as quotas.%s (line %u); "
				  "keep one (they are the same quota)", QUOTE(name), name, p->quotas[j].pos.line);
			continue;
		}
		p->quotas[p->nquotas++] = *q;
	}
	for (size_t i = 0; i < p->nprojects; i++) {
		p->projects[i].view->quotas = p->quotas;
		p->projects[i].view->nquotas = p->nquotas;
	}
}

/* Parses one file of the policy: the main one (main != 0) or a profiles.d file. */
static void decode_file(dctx *c, berth_policy *p, const char *name, const char *data, size_t len,
			int main_file)
{
	berth_yaml_doc *docs;
	size_t ndocs;
	c->file = name;
	path_reset(c);
	if (berth_yaml_parse(c->arena, name, data, len, &docs, &ndocs, c->err) < 0) {
		c->errors++;
		return;
	}
	if (ndocs > 1) {
		berth_where w = {name, 0, 0, NULL};
		berth_problem_add(c->err, BERTH_EINVALID, BERTH_ERROR, &w, "%s",
				  "a policy file holds one document, not several");
		c->errors++;
		return;
	}
	if (ndocs == 0 || !docs[0].root || is_null(docs[0].root))
		return; /* an empty policy: every key at its default */
	const berth_node *root = docs[0].root;
	profiles_dst pd = {p, name};
	if (main_file) {
		if (!want(c, root, BERTH_NODE_MAP, "a map"))
			return;
		decode_map(c, root, policy_fields, BERTH_ARRAY_SIZE(policy_fields), p);
		const berth_node *pr = berth_node_get(root, "profiles");
		if (pr && !is_null(pr)) {
			size_t l = path_key(c, "profiles");
			dec_profiles(c, pr, &pd, NULL);
			path_pop(c, l);
		}
		check_policy(c, p);
	} else {
		const field f[] = {{"profiles", dec_profiles, 0, NULL}};
		decode_map(c, root, f, 1, &pd);
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int finish(dctx *c, berth_policy *p, berth_policy **out, berth_error **err)
{
	build_views(c, p);
	check_fit(c, p);
	path_release(c);
	if (err)
		berth_error_sort(*err);
	if (c->errors || (err && berth_error_errors(*err))) {
		int ret = err && berth_error_code(*err) ? -(int)berth_error_code(*err) : -BERTH_EINVALID;
		berth_policy_free(p);
		return ret;
	}
	*out = p;
	return 0;
}

/* A policy with every key at its built-in default (docs/policy.md). */
static berth_policy *policy_new(void)
{
	berth_policy *p = berth_calloc(1, sizeof(*p));
	if (!p || !(p->arena = berth_arena_new())) {
		free(p);
		return NULL;
	}
	p->security.disable_root.v = 1;
	berth_range *ids[] = {&p->security.run_as_user_range, &p->security.run_as_group_range,
			      &p->security.fs_group_range};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(ids); i++) {
		ids[i]->min.v = ID_MIN_DEFAULT;
		ids[i]->max.v = ID_MAX;
	}
	p->limits.pids.v = PIDS_DEFAULT;
	p->local.uid_range.min.v = UID_RANGE_MIN;
	p->local.uid_range.max.v = UID_RANGE_MAX;
	return p;
}

/* A new policy read from the file `name`, with its decoding context. */
static int policy_begin(dctx *c, berth_policy **out, const char *name, berth_error **err)
{
	berth_policy *p = policy_new();
	memset(c, 0, sizeof(*c));
	c->err = err;
	if (!p || !(p->file = berth_arena_strdup(p->arena, name))) {
		berth_policy_free(p);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	c->arena = p->arena;
	*out = p;
	return 0;
}

int berth_policy_parse(berth_policy **out, const char *name, const char *data, size_t len,
		       berth_error **err)
{
	dctx c;
	berth_policy *p;
	*out = NULL;
	if (policy_begin(&c, &p, name, err) < 0)
		return -BERTH_ENOMEM;
	decode_file(&c, p, p->file, data, len, 1);
	return finish(&c, p, out, err);
}

/* Reads the profiles.d/NAME.yaml files beside the main file, by name. */
static void load_profiles_d(dctx *c, berth_policy *p, const char *main_path)
{
	const char *slash = strrchr(main_path, '/');
	berth_buf dir = BERTH_BUF_INIT;
	char **names = NULL;
	size_t n = 0, cap = 0;
	if (slash)
		berth_buf_append(&dir, main_path, (size_t)(slash - main_path) + 1);
	berth_buf_puts(&dir, "profiles.d");
	if (dir.failed) {
		c->errors++;
		berth_buf_release(&dir);
		return;
	}
	DIR *d = opendir(dir.data);
	if (!d) {
		if (errno != ENOENT) {
			berth_where w = {dir.data, 0, 0, NULL};
			berth_problem_add(c->err, BERTH_EIO, BERTH_ERROR, &w, "cannot read: %s", strerror(errno));
			c->errors++;
		}
		berth_buf_release(&dir);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		int yaml = (l > 5 && strcmp(e->d_name + l - 5, ".yaml") == 0) ||
			   (l > 4 && strcmp(e->d_name + l - 4, ".yml") == 0);
		if (e->d_name[0] == '.' || !yaml)
			continue;
		if (n == cap) {
			char **nn = berth_realloc(names, (cap = cap ? cap * 2 : 8) * sizeof(*names));
			if (!nn)
				break;
			names = nn;
		}
		if (!(names[n] = berth_strdup(e->d_name)))
			break;
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		berth_buf path = BERTH_BUF_INIT;
		char *data;
		size_t len;
		berth_buf_printf(&path, "%s/%s", dir.data, names[i]);
		const char *name = path.data ? berth_arena_strdup(c->arena, path.data) : NULL;
		if (!name) {
			c->errors++;
		} else if (berth_read_file(name, BERTH_YAML_MAX_BYTES, &data, &len, c->err) < 0) {
			c->errors++;
		} else {
			decode_file(c, p, name, data, len, 0);
			free(data);
		}
		berth_buf_release(&path);
		free(names[i]);
	}
	free(names);
	berth_buf_release(&dir);
}

int berth_policy_load(berth_policy **out, const char *path, berth_error **err)
{
	dctx c;
	char *data;
	size_t len;
	struct stat st;
	*out = NULL;
	if (!path)
		path = getenv("BERTH_CONFIG");
	if (path && !*path)
		path = NULL;
	if (!path && stat("/etc/berth/config.yaml", &st) == 0)
		path = "/etc/berth/config.yaml";
	if (!path) {
		if (!(*out = berth_policy_builtin()))
			return berth_fail(err, BERTH_ENOMEM, "out of memory");
		return 0;
	}
	berth_policy *p;
	if (policy_begin(&c, &p, path, err) < 0)
		return -BERTH_ENOMEM;
	int ret = berth_read_file(path, BERTH_YAML_MAX_BYTES, &data, &len, err);
	if (ret < 0) {
		berth_policy_free(p);
		return ret;
	}
	decode_file(&c, p, p->file, data, len, 1);
	free(data);
	load_profiles_d(&c, p, path);
	return finish(&c, p, out, err);
}

/*
 * The built-in policy's priority classes: MLRun's three ("The priority values
 * are: High, Medium, Low. The default is Medium.", seed 002), names written in
 * any case (priority_rule); any other name is used as written, as without
 * priority_classes (seed 002's "default-priority"). A policy file names its
 * cluster's own classes, or none: these are not a default of a file.
 */
static const char *const builtin_classes[][2] = {
	{"high", "berth-high"},
	{"medium", "berth-medium"},
	{"low", "berth-low"},
};

berth_policy *berth_policy_builtin(void)
{
	berth_policy *p = policy_new();
	size_t n = BERTH_ARRAY_SIZE(builtin_classes);
	berth_kv *kv = p ? berth_arena_alloc(p->arena, n * sizeof(*kv)) : NULL;
	if (!kv) {
		berth_policy_free(p);
		return NULL;
	}
	memset(kv, 0, n * sizeof(*kv));
	for (size_t i = 0; i < n; i++) {
		kv[i].key.s = builtin_classes[i][0];
		kv[i].value.s = builtin_classes[i][1];
	}
	p->priority_classes.items = kv;
	p->priority_classes.n = n;
	p->priority_classes.set = true;
	p->priority_open = true;
	p->defaults.priority_class.s = "medium";
	return p;
}

void berth_policy_uid_range(const berth_policy *p, int64_t *min, int64_t *max)
{
	*min = p ? p->local.uid_range.min.v : UID_RANGE_MIN;
	*max = p ? p->local.uid_range.max.v : UID_RANGE_MAX;
}

void berth_policy_free(berth_policy *p)
{
	if (!p)
		return;
	berth_arena_free(p->arena);
	free(p);
}

const char *berth_policy_file(const berth_policy *p)
{
	return p ? p->file : NULL;
}

/* A profile of a view's own (an overlay's) with that id. */
static const berth_profile *own_profile(const berth_policy *p, const char *id)
{
	for (size_t i = 0; p && id && i < p->nprofiles; i++)
		if (strcmp(p->profiles[i].id.s, id) == 0)
			return &p->profiles[i];
	return NULL;
}

size_t berth_policy_profile_count(const berth_policy *p)
{
	return !p ? 0 : p->base ? p->nvisible : p->nprofiles;
}

const berth_profile *berth_policy_profile_get(const berth_policy *p, size_t i)
{
	if (!p || i >= berth_policy_profile_count(p))
		return NULL;
	return p->base ? p->visible[i] : &p->profiles[i];
}

const berth_profile *berth_policy_profile_find(const berth_policy *p, const char *id)
{
	const berth_profile *pr = own_profile(p, id);
	return pr || !p || !p->base ? pr : own_profile(p->base, id);
}

const berth_policy *berth_policy_for_project(const berth_policy *p, const char *project)
{
	for (size_t i = 0; p && project && i < p->nprojects; i++)
		if (strcmp(p->projects[i].name.s, project) == 0)
			return p->projects[i].view;
	return p;
}

const char *berth_policy_key(const berth_policy *p, const berth_pos *at, const char *key, char *buf, size_t len)
{
	if (!p || !p->base)
		return key;
	/* the same member of the policy the view was copied from */
	const berth_pos *own = (const berth_pos *)((const char *)p->base + ((const char *)at - (const char *)p));
	if (own->line == at->line && own->column == at->column)
		return key;
	snprintf(buf, len, "projects.%s.%s", p->project, key);
	return buf;
}

const char *berth_policy_project(const berth_policy *p)
{
	return p ? p->project : NULL;
}

bool berth_policy_project_name(const char *tpl, const char *project, berth_buf *out)
{
	const char *at = tpl ? strstr(tpl, "{project}") : NULL;
	if (at)
		berth_buf_printf(out, "%.*s%s%s", (int)(at - tpl), tpl, project, at + 9);
	return at != NULL;
}

const berth_quota *berth_policy_quota(const berth_policy *p, const char *project)
{
	const berth_quota *dflt = NULL;
	for (size_t i = 0; p && i < p->nquotas; i++) {
		if (strcmp(p->quotas[i].project.s, project) == 0)
			return &p->quotas[i];
		if (strcmp(p->quotas[i].project.s, "default") == 0)
			dflt = &p->quotas[i];
	}
	return dflt;
}
