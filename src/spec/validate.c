/*
 * validate.c - the rules of runspec.md section 4 that need no platform
 * policy: names, quantities, GPU rules, volumes, scheduling objects, cron,
 * replicas. Every rule reports and goes on; nothing stops at the first.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/names.h"
#include "spec/spec_internal.h"

/* Reports at the position of a value, under path key (relative to nothing). */
#define AT(c, pos, path, code, ...) report_at(c, pos, path, code, __VA_ARGS__)

static void name_invalid(dctx *c, const berth_str *s, const char *path, const char *why, const char *what)
{
	AT(c, s->pos, path, BERTH_EINVALID, "%s is not a valid %s: it %s", QUOTE(s->s), what, why);
}

/* s, when set, follows rule (a berth_check_* of names.h), else is reported at
 * path: path is made only then (a list item's, by path_make: a few each run) */
#define check_name(c_, str_, path_, rule_, what_)                                \
	do {                                                                    \
		const berth_str *n_ = (str_);                                   \
		const char *why_;                                               \
		if (n_->s && (why_ = (rule_)(n_->s)) != NULL)                   \
			name_invalid((c_), n_, (path_), why_, (what_));        \
	} while (0)

static void check_range(dctx *c, const berth_int *v, const char *path, int64_t lo, int64_t hi)
{
	if (!v->set)
		return;
	if (v->v < lo || v->v > hi)
		AT(c, v->pos, path, BERTH_ERANGE, "%lld is out of range (%lld to %lld)", (long long)v->v,
		   (long long)lo, (long long)hi);
}

static const char *qstr(const berth_quantity *q, char *buf)
{
	berth_quantity_format(q, buf, BERTH_QUANTITY_STR_MAX);
	return buf;
}

/* ---- resources ---------------------------------------------------------------- */

/* "resources.NAME" and which (".requests", ".limits") */
static const char *res_path(char *path, size_t n, const char *name, const char *which)
{
	char head[48];
	return path_make(path, n, path_make(head, sizeof(head), "resources.", SIZE_MAX, name), SIZE_MAX,
			 which);
}

static void check_resource(dctx *c, const berth_resource *r, const char *name, int gpu)
{
	char path[64], a[BERTH_QUANTITY_STR_MAX], b[BERTH_QUANTITY_STR_MAX];
	const berth_qty *q[2] = {&r->requests, &r->limits};
	const char *which[2] = {".requests", ".limits"};

	if (r->requests.from_default && gpu) {
		res_path(path, sizeof(path), name, ".requests");
		AT(c, r->requests.pos, path, BERTH_EINVALID,
		   "a GPU is set as a limit, and its request is that limit: \"default\" applies to the "
		   "requests of cpu, mem and disk");
	}
	for (int i = 0; i < 2; i++) {
		if (!q[i]->set || q[i]->from_default)
			continue;
		if (berth_quantity_sign(&q[i]->q) < 0)
			AT(c, q[i]->pos, res_path(path, sizeof(path), name, which[i]), BERTH_ERANGE,
			   "%s must not be negative", qstr(&q[i]->q, a));
		else if (gpu && !berth_quantity_is_integer(&q[i]->q))
			AT(c, q[i]->pos, res_path(path, sizeof(path), name, which[i]), BERTH_EINVALID,
			   "%s is not a whole number of GPUs (GPUs cannot be shared or split)",
			   berth_qty_written(q[i], a)); /* "0.5" as the user wrote it, not "500m" */
	}
	if (r->requests.from_default)
		return; /* the policy's default request: the plan knows it, and compares it */
	if (r->requests.set && r->limits.set && berth_quantity_sign(&r->requests.q) >= 0 &&
	    berth_quantity_cmp(&r->requests.q, &r->limits.q) > 0) {
		res_path(path, sizeof(path), name, ".requests");
		AT(c, r->requests.pos, path, BERTH_EINVALID, "request %s is more than the limit %s",
		   qstr(&r->requests.q, a), qstr(&r->limits.q, b));
	}
	if (gpu && r->requests.set && !r->limits.set) {
		res_path(path, sizeof(path), name, ".requests");
		AT(c, r->requests.pos, path, BERTH_EINVALID,
		   "a GPU is set as a limit, not a request: write gpu: {limits: \"%s\"} or gpu: \"%s\"",
		   qstr(&r->requests.q, a), a);
	}
	if (gpu && r->requests.set && r->limits.set &&
	    berth_quantity_cmp(&r->requests.q, &r->limits.q) < 0) {
		res_path(path, sizeof(path), name, ".requests");
		AT(c, r->requests.pos, path, BERTH_EINVALID,
		   "GPU request %s differs from its limit %s (for GPUs the request is the limit)",
		   qstr(&r->requests.q, a), qstr(&r->limits.q, b));
	}
}

static void check_resources(dctx *c, const berth_resources *r)
{
	check_resource(c, &r->cpu, "cpu", 0);
	check_resource(c, &r->mem, "mem", 0);
	check_resource(c, &r->gpu, "gpu", 1);
	check_resource(c, &r->disk, "disk", 0);
	if (r->gpu_type.s) {
		const char *why = berth_check_qualified_name(r->gpu_type.s);
		if (!why && !strchr(r->gpu_type.s, '/'))
			why = "must be an extended resource name with a domain, e.g. nvidia.com/gpu";
		if (why)
			AT(c, r->gpu_type.pos, "resources.gpu_type", BERTH_EINVALID,
			   "%s is not a valid GPU type: it %s", QUOTE(r->gpu_type.s), why);
		if (!r->gpu.requests.set && !r->gpu.limits.set)
			warn_at(c, r->gpu_type.pos, "resources.gpu_type",
				"gpu_type is set but no gpu count is asked for");
	}
}

/* ---- volumes ------------------------------------------------------------------ */

static int path_has_dotdot(const char *p)
{
	for (const char *s = p; (s = strstr(s, "..")) != NULL; s += 2)
		if ((s == p || s[-1] == '/') && (s[2] == '\0' || s[2] == '/'))
			return 1;
	return 0;
}

/* A path the local backend would read otherwise than written: a "." part,
 * an empty one ("//"), or no part at all ("/": every file of the machine). */
static const char *path_oddity(const char *p)
{
	const char *s = p;
	while (*s == '/')
		s++;
	if (!*s)
		return "is the root of the file system: a volume there would hide every file";
	for (s = p; *s; s++)
		if (s[0] == '/' && s[1] == '/' && s[2])
			return "has an empty part (\"//\")";
		else if (s[0] == '/' && s[1] == '.' && (s[2] == '/' || !s[2]))
			return "has a \".\" part";
	return NULL;
}

/* Compares mount paths ignoring trailing slashes. */
static int same_path(const char *a, const char *b)
{
	size_t an = strlen(a), bn = strlen(b);
	while (an > 1 && a[an - 1] == '/')
		an--;
	while (bn > 1 && b[bn - 1] == '/')
		bn--;
	return an == bn && memcmp(a, b, an) == 0;
}

static void check_volume(dctx *c, const berth_spec *s, size_t i)
{
	const berth_volume *v = &s->volumes[i];
	char path[96];
	static const char *const access_modes[] = {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany",
						   "ReadWriteOncePod"};

#define VPATH(k) path_make(path, sizeof(path), "volumes", i, "." k)
	if (!v->name.s)
		AT(c, v->pos, VPATH("name"), BERTH_EMISSING, "\"name\" is required");
	else
		check_name(c, &v->name, VPATH("name"), berth_check_dns_label, "volume name");
	if (!v->mount_path.s)
		AT(c, v->pos, VPATH("mount_path"), BERTH_EMISSING, "\"mount_path\" is required");
	else if (v->mount_path.s[0] != '/')
		AT(c, v->mount_path.pos, VPATH("mount_path"), BERTH_EINVALID,
		   "%s is not an absolute path (it must start with '/')", QUOTE(v->mount_path.s));
	else if (path_has_dotdot(v->mount_path.s))
		AT(c, v->mount_path.pos, VPATH("mount_path"), BERTH_EINVALID, "%s must not contain '..'",
		   QUOTE(v->mount_path.s));
	else if (path_oddity(v->mount_path.s))
		AT(c, v->mount_path.pos, VPATH("mount_path"), BERTH_EINVALID, "%s %s",
		   QUOTE(v->mount_path.s), path_oddity(v->mount_path.s));
	else if (strchr(v->mount_path.s, ':'))
		AT(c, v->mount_path.pos, VPATH("mount_path"), BERTH_EINVALID, "%s must not contain ':'",
		   QUOTE(v->mount_path.s));
	else
		check_name(c, &v->mount_path, VPATH("mount_path"), berth_check_printable, "mount path");
	for (size_t j = 0; j < i; j++) {
		const berth_volume *w = &s->volumes[j];
		if (v->name.s && w->name.s && strcmp(v->name.s, w->name.s) == 0)
			AT(c, v->name.pos, VPATH("name"), BERTH_EDUPLICATE,
			   "volume name %s is used twice (also volumes[%zu], line %u)", QUOTE(v->name.s), j,
			   w->name.pos.line);
		if (v->mount_path.s && w->mount_path.s && same_path(v->mount_path.s, w->mount_path.s))
			AT(c, v->mount_path.pos, VPATH("mount_path"), BERTH_EDUPLICATE,
			   "mount path %s is used twice (also volumes[%zu], line %u)",
			   QUOTE(v->mount_path.s), j, w->mount_path.pos.line);
	}
	/* an unknown volume_type is reported where it is read; nothing more to check */
	if (!v->type_name.s || strcmp(v->type_name.s, berth_volume_type_name(v->type)))
		return;
	if (v->size.set && berth_quantity_sign(&v->size.q) <= 0) {
		char q[BERTH_QUANTITY_STR_MAX];
		AT(c, v->size.pos, VPATH("spec.size"), BERTH_ERANGE, "size %s must be more than zero",
		   qstr(&v->size.q, q));
	}
	switch (v->type) {
	case BERTH_VOLUME_PVC:
		if (!v->size.set)
			AT(c, v->pos, VPATH("spec.size"), BERTH_EMISSING,
			   "a persistent_volume_claim needs spec.size (e.g. 10Gi)");
		check_name(c, &v->storage_class, VPATH("spec.storage_class"), berth_check_dns_subdomain,
			   "storage class name");
		if (v->access_mode.s) {
			size_t k;
			for (k = 0; k < BERTH_ARRAY_SIZE(access_modes); k++)
				if (strcmp(v->access_mode.s, access_modes[k]) == 0)
					break;
			if (k == BERTH_ARRAY_SIZE(access_modes))
				AT(c, v->access_mode.pos, VPATH("spec.access_mode"), BERTH_EINVALID,
				   "%s is not one of ReadWriteOnce, ReadOnlyMany, ReadWriteMany, "
				   "ReadWriteOncePod", QUOTE(v->access_mode.s));
		}
		break;
	case BERTH_VOLUME_EMPTY_DIR:
		if (v->medium.s && strcmp(v->medium.s, "") && strcmp(v->medium.s, "Memory") &&
		    strcmp(v->medium.s, "HugePages"))
			AT(c, v->medium.pos, VPATH("spec.medium"), BERTH_EINVALID,
			   "%s is not one of \"\" (node disk), Memory, HugePages", QUOTE(v->medium.s));
		break;
	case BERTH_VOLUME_CONFIG_MAP:
	case BERTH_VOLUME_SECRET:
		if (!v->ref.s)
			AT(c, v->pos, VPATH("spec.name"), BERTH_EMISSING, "a %s volume needs spec.name",
			   berth_volume_type_name(v->type));
		else if (v->type == BERTH_VOLUME_CONFIG_MAP)
			check_name(c, &v->ref, VPATH("spec.name"), berth_check_dns_subdomain,
				   "ConfigMap name");
		else
			check_name(c, &v->ref, VPATH("spec.name"), berth_check_secret_key, "secret name");
		break;
	case BERTH_VOLUME_SHARED:
		if (!v->ref.s)
			AT(c, v->pos, VPATH("spec.claim_name"), BERTH_EMISSING,
			   "a shared_volume needs spec.claim_name (an existing PVC)");
		else
			check_name(c, &v->ref, VPATH("spec.claim_name"), berth_check_dns_subdomain,
				   "PVC name");
		break;
	}
#undef VPATH
}

/* ---- key/value lists ------------------------------------------------------------ */

/* ---- repeats: one sort, not every pair (30,000 envs took seconds) ---------------------- */

typedef struct keyed {
	const char *s;
	size_t i;
} keyed;

static int keyed_cmp(const void *a, const void *b)
{
	const keyed *x = a, *y = b;
	int c = strcmp(x->s, y->s);
	return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* For each of the n strings that key(list, i) gives, the index of the first
 * earlier one that is the same, or SIZE_MAX (an array of n, freed by the
 * caller); NULL when out of memory (reported). */
/* A list this short (a run's labels, variables, secrets) is compared pair by
 * pair into the caller's array: no sort, no allocation, four times a run. */
#define FIRST_SMALL 16

/* For each item of list (n items, key(list, i) its key): the index of the
 * first item with the same key, or SIZE_MAX for a first. In small (n <=
 * FIRST_SMALL), else malloc'd; NULL when out of memory. */
static size_t *first_same(dctx *c, const void *list, size_t n, const char *(*key)(const void *, size_t),
			  size_t small[FIRST_SMALL])
{
	if (n <= FIRST_SMALL) {
		for (size_t i = 0; i < n; i++) {
			const char *k = key(list, i);
			small[i] = SIZE_MAX;
			for (size_t j = 0; j < i; j++)
				if (!strcmp(k, key(list, j))) {
					small[i] = j;
					break;
				}
		}
		return small;
	}
	size_t *first = berth_malloc(n * sizeof(*first));
	keyed *v = berth_malloc(n * sizeof(*v));
	if (!first || !v) {
		free(first);
		free(v);
		report(c, (berth_pos){0, 0}, BERTH_ENOMEM, "out of memory");
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = (keyed){key(list, i), i};
	qsort(v, n, sizeof(*v), keyed_cmp);
	for (size_t k = 0; k < n; k++)
		first[v[k].i] = k && !strcmp(v[k].s, v[k - 1].s) ? (first[v[k - 1].i] == SIZE_MAX
								      ? v[k - 1].i : first[v[k - 1].i])
							: SIZE_MAX;
	free(v);
	return first;
}

static const char *kv_key(const void *list, size_t i)
{
	return ((const berth_kvlist *)list)->items[i].key.s;
}

static const char *str_at(const void *list, size_t i)
{
	return ((const berth_strlist *)list)->items[i].s;
}

static void check_labels(dctx *c, const berth_kvlist *l, const char *fname, int reserved)
{
	size_t top = path_key(c, fname);
	size_t small[FIRST_SMALL], *first = first_same(c, l, l->n, kv_key, small);
	for (size_t i = 0; first && i < l->n; i++) {
		const berth_kv *kv = &l->items[i];
		const char *why;
		size_t len = path_key(c, kv->key.s);
		if ((why = berth_check_qualified_name(kv->key.s)) != NULL)
			report(c, kv->key.pos, BERTH_EINVALID, "%s is not a valid label key: it %s",
			       QUOTE(kv->key.s), why);
		else if (reserved && (strncmp(kv->key.s, "berth.dev/", 10) == 0 ||
				      strncmp(kv->key.s, "app.kubernetes.io/", 18) == 0))
			report(c, kv->key.pos, BERTH_EINVALID,
			       "%s is reserved: berth sets the berth.dev/ and app.kubernetes.io/ labels",
			       QUOTE(kv->key.s));
		if ((why = berth_check_label_value(kv->value.s)) != NULL)
			report(c, kv->value.pos, BERTH_EINVALID, "%s is not a valid label value: it %s",
			       QUOTE(kv->value.s), why);
		if (first[i] != SIZE_MAX)
			report(c, kv->key.pos, BERTH_EDUPLICATE, "%s is given twice (first at line %u)",
			       QUOTE(kv->key.s), l->items[first[i]].key.pos.line);
		path_pop(c, len);
	}
	if (first != small)
		free(first);
	path_pop(c, top);
}

static void check_envs(dctx *c, const berth_kvlist *l)
{
	char path[64];
	size_t small[FIRST_SMALL], *first = first_same(c, l, l->n, kv_key, small);
	for (size_t i = 0; first && i < l->n; i++) {
		const berth_kv *kv = &l->items[i];
#define EPATH path_make(path, sizeof(path), "envs", i, ".name") /* made only for a problem */
		check_name(c, &kv->key, EPATH, berth_check_env_name, "environment variable name");
		if (first[i] != SIZE_MAX)
			AT(c, kv->key.pos, EPATH, BERTH_EDUPLICATE, "%s is set twice (first at line %u)",
			   QUOTE(kv->key.s), l->items[first[i]].key.pos.line);
		if (strncmp(kv->key.s, "BERTH_", 6) == 0)
			warn_at(c, kv->key.pos, EPATH, "%s: names starting with BERTH_ are set by berth",
				QUOTE(kv->key.s));
#undef EPATH
	}
	if (first != small)
		free(first);
}

static void check_secret_names(dctx *c, const berth_strlist *l)
{
	char path[64];
	size_t small[FIRST_SMALL], *first = first_same(c, l, l->n, str_at, small);
	for (size_t i = 0; first && i < l->n; i++) {
		const char *s = l->items[i].s;
#define SPATH path_make(path, sizeof(path), "secrets", i, "") /* made only for a problem */
		check_name(c, &l->items[i], SPATH, berth_check_secret_key, "secret name");
		if (first[i] != SIZE_MAX)
			AT(c, l->items[i].pos, SPATH, BERTH_EDUPLICATE,
			   "secret %s is listed twice (first at line %u)", QUOTE(s), l->items[first[i]].pos.line);
#undef SPATH
	}
	if (first != small)
		free(first);
}

/* ---- tolerations -------------------------------------------------------------------- */

static void check_toleration(dctx *c, const berth_toleration *t, size_t i)
{
	char path[64];
	int exists = 0;
#define TPATH(k) path_make(path, sizeof(path), "tolerations", i, "." k)
	if (t->op.s) {
		if (strcmp(t->op.s, "Exists") == 0)
			exists = 1;
		else if (strcmp(t->op.s, "Equal") != 0)
			AT(c, t->op.pos, TPATH("operator"), BERTH_EINVALID, "%s is not one of Exists, Equal",
			   QUOTE(t->op.s));
	}
	if (t->key.s && *t->key.s)
		check_name(c, &t->key, TPATH("key"), berth_check_qualified_name, "toleration key");
	else if (!exists)
		AT(c, t->key.s ? t->key.pos : t->pos, TPATH("key"), BERTH_EINVALID,
		   "an empty key needs operator Exists (it then tolerates every taint)");
	if (exists && t->value.s && *t->value.s)
		AT(c, t->value.pos, TPATH("value"), BERTH_EINVALID,
		   "must be empty when operator is Exists (got %s)", QUOTE(t->value.s));
	else if (t->value.s)
		check_name(c, &t->value, TPATH("value"), berth_check_label_value, "toleration value");
	if (t->effect.s && *t->effect.s && strcmp(t->effect.s, "NoSchedule") &&
	    strcmp(t->effect.s, "PreferNoSchedule") && strcmp(t->effect.s, "NoExecute"))
		AT(c, t->effect.pos, TPATH("effect"), BERTH_EINVALID,
		   "%s is not one of NoSchedule, PreferNoSchedule, NoExecute", QUOTE(t->effect.s));
	if (t->seconds.set && !(t->effect.s && strcmp(t->effect.s, "NoExecute") == 0))
		AT(c, t->seconds.pos, TPATH("tolerationSeconds"), BERTH_EINVALID,
		   "tolerationSeconds is only allowed with effect NoExecute");
#undef TPATH
}

/* ---- affinity: a Kubernetes Affinity object, checked against its schema --------- */

typedef struct kfield kfield;
typedef void (*kcheck_fn)(dctx *c, const berth_node *n);

/* One key of a Kubernetes object: its value's kind and how to check it. */
struct kfield {
	const char *key;
	enum { K_OBJ, K_LIST, K_STR, K_INT, K_STRLIST, K_STRMAP } kind;
	const kfield *sub;   /* K_OBJ, K_LIST of objects */
	size_t nsub;
	kcheck_fn check;     /* extra rule on the object (K_OBJ, each item of K_LIST) */
	int required;
};

static void kobj(dctx *c, const berth_node *n, const kfield *fields, size_t nf, kcheck_fn check);

static void kvalue(dctx *c, const berth_node *v, const kfield *f)
{
	switch (f->kind) {
	case K_OBJ:
		kobj(c, v, f->sub, f->nsub, f->check);
		break;
	case K_LIST:
		if (v->kind != BERTH_NODE_SEQ) {
			report(c, v->pos, BERTH_ETYPE, "must be a list, not %s", berth_node_kind_name(v));
			break;
		}
		for (size_t i = 0; i < v->len; i++) {
			size_t len = path_index(c, i);
			kobj(c, v->u.items[i], f->sub, f->nsub, f->check);
			path_pop(c, len);
		}
		break;
	case K_STR:
		if (v->kind != BERTH_NODE_SCALAR)
			report(c, v->pos, BERTH_ETYPE, "must be a string, not %s", berth_node_kind_name(v));
		break;
	case K_INT:
		if (v->kind != BERTH_NODE_SCALAR || v->type != BERTH_SCALAR_INT)
			report(c, v->pos, BERTH_ETYPE, "must be an integer, not %s", berth_node_kind_name(v));
		break;
	case K_STRLIST:
		if (v->kind != BERTH_NODE_SEQ) {
			report(c, v->pos, BERTH_ETYPE, "must be a list of strings, not %s",
			       berth_node_kind_name(v));
			break;
		}
		for (size_t i = 0; i < v->len; i++)
			if (v->u.items[i]->kind != BERTH_NODE_SCALAR) {
				size_t len = path_index(c, i);
				report(c, v->u.items[i]->pos, BERTH_ETYPE, "must be a string, not %s",
				       berth_node_kind_name(v->u.items[i]));
				path_pop(c, len);
			}
		break;
	case K_STRMAP:
		if (v->kind != BERTH_NODE_MAP) {
			report(c, v->pos, BERTH_ETYPE, "must be a map of strings, not %s",
			       berth_node_kind_name(v));
			break;
		}
		for (size_t i = 0; i < v->len; i++) {
			const berth_node_pair *p = &v->u.pairs[i];
			size_t len = path_key(c, p->key->u.text);
			const char *why = berth_check_qualified_name(p->key->u.text);
			if (why)
				report(c, p->key->pos, BERTH_EINVALID, "%s is not a valid label key: it %s",
				       QUOTE(p->key->u.text), why);
			if (p->value->kind != BERTH_NODE_SCALAR)
				report(c, p->value->pos, BERTH_ETYPE, "must be a string, not %s",
				       berth_node_kind_name(p->value));
			else if ((why = berth_check_label_value(p->value->u.text)) != NULL)
				report(c, p->value->pos, BERTH_EINVALID, "%s is not a valid label value: it %s",
				       QUOTE(p->value->u.text), why);
			path_pop(c, len);
		}
		break;
	}
}

static void kobj(dctx *c, const berth_node *n, const kfield *fields, size_t nf, kcheck_fn check)
{
	const char *names[16];
	if (n->kind != BERTH_NODE_MAP) {
		report(c, n->pos, BERTH_ETYPE, "must be a map, not %s", berth_node_kind_name(n));
		return;
	}
	for (size_t i = 0; i < nf && i < 16; i++)
		names[i] = fields[i].key;
	for (size_t i = 0; i < n->len; i++) {
		const berth_node_pair *p = &n->u.pairs[i];
		size_t k, len = path_key(c, p->key->u.text);
		for (k = 0; k < nf; k++)
			if (strcmp(fields[k].key, p->key->u.text) == 0)
				break;
		if (k == nf) {
			const char *hint = berth_suggest(p->key->u.text, names, nf < 16 ? nf : 16);
			report(c, p->key->pos, BERTH_EUNKNOWN, "unknown key %s%s%s%s", QUOTE(p->key->u.text),
			       hint ? "; did you mean \"" : "", hint ? hint : "", hint ? "\"?" : "");
		} else if (p->value->kind == BERTH_NODE_SCALAR && p->value->type == BERTH_SCALAR_NULL) {
			/* null: unset, as Kubernetes reads it */
		} else {
			for (size_t j = 0; j < i; j++)
				if (strcmp(n->u.pairs[j].key->u.text, p->key->u.text) == 0)
					report(c, p->key->pos, BERTH_EDUPLICATE, "key %s given twice",
					       QUOTE(p->key->u.text));
			kvalue(c, p->value, &fields[k]);
		}
		path_pop(c, len);
	}
	for (size_t k = 0; k < nf; k++)
		if (fields[k].required && !berth_node_get(n, fields[k].key))
			report(c, n->pos, BERTH_EMISSING, "\"%s\" is required", fields[k].key);
	if (check)
		check(c, n);
}

/* In/NotIn need values; Exists/DoesNotExist none; Gt/Lt exactly one integer. */
static void check_requirement(dctx *c, const berth_node *n, int node_ops)
{
	const berth_node *op = berth_node_get(n, "operator"), *vals = berth_node_get(n, "values");
	size_t nvals = vals && vals->kind == BERTH_NODE_SEQ ? vals->len : 0;
	if (!op || op->kind != BERTH_NODE_SCALAR)
		return;
	const char *o = op->u.text;
	size_t len = path_key(c, "operator");
	if (!strcmp(o, "In") || !strcmp(o, "NotIn")) {
		if (nvals == 0)
			report(c, op->pos, BERTH_EINVALID, "operator %s needs at least one value", o);
	} else if (!strcmp(o, "Exists") || !strcmp(o, "DoesNotExist")) {
		if (nvals)
			report(c, vals->pos, BERTH_EINVALID, "operator %s takes no values", o);
	} else if (node_ops && (!strcmp(o, "Gt") || !strcmp(o, "Lt"))) {
		if (nvals != 1)
			report(c, op->pos, BERTH_EINVALID, "operator %s needs exactly one value", o);
		else if (vals->u.items[0]->kind != BERTH_NODE_SCALAR ||
			 vals->u.items[0]->type == BERTH_SCALAR_FLOAT ||
			 vals->u.items[0]->type == BERTH_SCALAR_BOOL ||
			 strspn(vals->u.items[0]->u.text, "-0123456789") != vals->u.items[0]->len ||
			 vals->u.items[0]->len == 0)
			report(c, vals->u.items[0]->pos, BERTH_EINVALID,
			       "operator %s needs an integer value, not %s", o,
			       QUOTE(vals->u.items[0]->kind == BERTH_NODE_SCALAR ? vals->u.items[0]->u.text : "?"));
	} else {
		report(c, op->pos, BERTH_EINVALID, "%s is not one of %s", QUOTE(o),
		       node_ops ? "In, NotIn, Exists, DoesNotExist, Gt, Lt" : "In, NotIn, Exists, DoesNotExist");
	}
	path_pop(c, len);
	const berth_node *key = berth_node_get(n, "key");
	if (key && key->kind == BERTH_NODE_SCALAR) {
		const char *why = berth_check_qualified_name(key->u.text);
		if (why) {
			len = path_key(c, "key");
			report(c, key->pos, BERTH_EINVALID, "%s is not a valid label key: it %s",
			       QUOTE(key->u.text), why);
			path_pop(c, len);
		}
	}
}

static void check_node_req(dctx *c, const berth_node *n)
{
	check_requirement(c, n, 1);
}

static void check_label_req(dctx *c, const berth_node *n)
{
	check_requirement(c, n, 0);
}

static void check_weight(dctx *c, const berth_node *n)
{
	const berth_node *w = berth_node_get(n, "weight");
	if (w && w->kind == BERTH_NODE_SCALAR && w->type == BERTH_SCALAR_INT) {
		long long v = strtoll(w->u.text, NULL, 10);
		if (v < 1 || v > 100) {
			size_t len = path_key(c, "weight");
			report(c, w->pos, BERTH_ERANGE, "%lld is out of range (1 to 100)", v);
			path_pop(c, len);
		}
	}
}

static void check_node_term_list(dctx *c, const berth_node *n)
{
	const berth_node *t = berth_node_get(n, "nodeSelectorTerms");
	if (t && t->kind == BERTH_NODE_SEQ && t->len == 0) {
		size_t len = path_key(c, "nodeSelectorTerms");
		report(c, t->pos, BERTH_EINVALID, "must hold at least one term");
		path_pop(c, len);
	}
}

static const kfield node_req[] = {
	{"key", K_STR, NULL, 0, NULL, 1},
	{"operator", K_STR, NULL, 0, NULL, 1},
	{"values", K_STRLIST, NULL, 0, NULL, 0},
};
static const kfield node_term[] = {
	{"matchExpressions", K_LIST, node_req, 3, check_node_req, 0},
	{"matchFields", K_LIST, node_req, 3, check_node_req, 0},
};
static const kfield node_selector_obj[] = {
	{"nodeSelectorTerms", K_LIST, node_term, 2, NULL, 1},
};
static const kfield node_pref[] = {
	{"weight", K_INT, NULL, 0, NULL, 1},
	{"preference", K_OBJ, node_term, 2, NULL, 1},
};
static const kfield node_affinity[] = {
	{"requiredDuringSchedulingIgnoredDuringExecution", K_OBJ, node_selector_obj, 1,
	 check_node_term_list, 0},
	{"preferredDuringSchedulingIgnoredDuringExecution", K_LIST, node_pref, 2, check_weight, 0},
};
static const kfield label_req[] = {
	{"key", K_STR, NULL, 0, NULL, 1},
	{"operator", K_STR, NULL, 0, NULL, 1},
	{"values", K_STRLIST, NULL, 0, NULL, 0},
};
static const kfield label_selector[] = {
	{"matchLabels", K_STRMAP, NULL, 0, NULL, 0},
	{"matchExpressions", K_LIST, label_req, 3, check_label_req, 0},
};
static const kfield pod_term[] = {
	{"labelSelector", K_OBJ, label_selector, 2, NULL, 0},
	{"namespaceSelector", K_OBJ, label_selector, 2, NULL, 0},
	{"namespaces", K_STRLIST, NULL, 0, NULL, 0},
	{"topologyKey", K_STR, NULL, 0, NULL, 1},
	{"matchLabelKeys", K_STRLIST, NULL, 0, NULL, 0},
	{"mismatchLabelKeys", K_STRLIST, NULL, 0, NULL, 0},
};
static const kfield pod_pref[] = {
	{"weight", K_INT, NULL, 0, NULL, 1},
	{"podAffinityTerm", K_OBJ, pod_term, 6, NULL, 1},
};
static const kfield pod_affinity[] = {
	{"requiredDuringSchedulingIgnoredDuringExecution", K_LIST, pod_term, 6, NULL, 0},
	{"preferredDuringSchedulingIgnoredDuringExecution", K_LIST, pod_pref, 2, check_weight, 0},
};
static const kfield affinity[] = {
	{"nodeAffinity", K_OBJ, node_affinity, 2, NULL, 0},
	{"podAffinity", K_OBJ, pod_affinity, 2, NULL, 0},
	{"podAntiAffinity", K_OBJ, pod_affinity, 2, NULL, 0},
};

void berth_check_affinity(dctx *c, const berth_node *n)
{
	kobj(c, n, affinity, BERTH_ARRAY_SIZE(affinity), NULL);
}

/* ---- rules across layers ------------------------------------------------------------ */

/* A problem of berth_spec_check_layers, formatted, to its reporter. */
static void BERTH_PRINTF(7, 8) layer_problem(berth_layer_report rep, void *ctx, uint8_t origin,
					     berth_pos pos, const char *path, berth_code code,
					     const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rep(ctx, origin, pos, path, code, msg);
}
#define LAYER(origin, pos, path, code, ...) layer_problem(rep, ctx, origin, pos, path, code, __VA_ARGS__)

void berth_spec_check_layers(const berth_spec *s, berth_layer_report rep, void *ctx)
{
	int scaled = s->action == BERTH_ACTION_SERVE || s->action == BERTH_ACTION_DEPLOY;
	const char *action = berth_action_name(s->action);
	/* distributed's keys may come from several layers: the first one set is where it is */
	const berth_int *dint = s->procs_per_worker.set ? &s->procs_per_worker : &s->dist_port;
	bool dist = s->distributed_pos.line || s->launcher.s || dint->set;
	berth_pos dpos = s->distributed_pos.line ? s->distributed_pos : s->launcher.s ? s->launcher.pos : dint->pos;
	uint8_t dorigin = s->launcher.s ? s->launcher.origin : dint->origin;

	if (s->schedule.s && s->action != BERTH_ACTION_CRONJOB)
		LAYER(s->schedule.origin, s->schedule.pos, "schedule", BERTH_EINVALID,
		      "a schedule needs action: cronjob (the action is %s)", action);
	else if (!s->schedule.s && s->action == BERTH_ACTION_CRONJOB)
		LAYER(s->action_name.origin, s->action_name.pos, "schedule", BERTH_EMISSING,
		      "action cronjob needs a schedule, e.g. \"0 3 * * *\"");
	int64_t lo = s->action == BERTH_ACTION_JOB ? 1 : 0; /* a job's: its workers */
	int64_t hi = s->action == BERTH_ACTION_JOB ? BERTH_WORKERS_MAX : 2147483647;
	if (s->replicas.set && (s->replicas.v < lo || s->replicas.v > hi))
		LAYER(s->replicas.origin, s->replicas.pos, "replicas", BERTH_ERANGE,
		      "%lld is out of range (%lld to %lld)", (long long)s->replicas.v, (long long)lo,
		      (long long)hi);
	if (dist && s->action != BERTH_ACTION_JOB)
		LAYER(dorigin, dpos, "distributed", BERTH_EINVALID,
		      "distributed applies to action job, not %s", action);
	const berth_int *rep3[3] = {&s->replicas, &s->min_replicas, &s->max_replicas};
	const char *repname[3] = {"replicas", "min_replicas", "max_replicas"};
	for (int i = 0; i < 3; i++)
		if (rep3[i]->set && !scaled && (i || s->action != BERTH_ACTION_JOB))
			LAYER(rep3[i]->origin, rep3[i]->pos, repname[i], BERTH_EINVALID,
			      "%s applies to action %s, not %s", repname[i],
			      i ? "serve or deploy" : "serve, deploy or job (its workers)", action);
	if ((s->service_pos.line || s->service_type.s) && s->action != BERTH_ACTION_SERVE)
		LAYER(s->nports ? s->ports_origin : s->service_type.origin,
		      s->service_pos.line ? s->service_pos : s->service_type.pos, "service",
		      BERTH_EINVALID, "a service applies to action serve, not %s", action);
	if (s->procs_per_worker.set && (!s->launcher.s || (strcmp(s->launcher.s, "torchrun") &&
							    strcmp(s->launcher.s, "mpi"))))
		LAYER(s->procs_per_worker.origin, s->procs_per_worker.pos, "distributed.procs_per_worker",
		      BERTH_EINVALID,
		      "procs_per_worker applies to launchers torchrun and mpi (which start them), not %s",
		      s->launcher.s ? s->launcher.s : "env (the default)");
	if (s->min_replicas.set && s->max_replicas.set && s->min_replicas.v > s->max_replicas.v)
		LAYER(s->min_replicas.origin, s->min_replicas.pos, "min_replicas", BERTH_EINVALID,
		      "min_replicas %lld is more than max_replicas %lld", (long long)s->min_replicas.v,
		      (long long)s->max_replicas.v);
	if (s->min_replicas.set != s->max_replicas.set) {
		const berth_int *one = s->min_replicas.set ? &s->min_replicas : &s->max_replicas;
		LAYER(one->origin, one->pos, s->min_replicas.set ? "min_replicas" : "max_replicas",
		      BERTH_EMISSING, "autoscaling needs both min_replicas and max_replicas");
	}
	if (s->replicas.set && (s->min_replicas.set || s->max_replicas.set))
		LAYER(s->replicas.origin, s->replicas.pos, "replicas", BERTH_EINVALID,
		      "give either replicas or min_replicas and max_replicas (autoscaling), not both");
}

/* ---- the whole spec ------------------------------------------------------------------ */

/* At parse: every problem is in the document's own file. */
static void parse_report(void *ctx, uint8_t origin, berth_pos pos, const char *path, berth_code code,
			 const char *msg)
{
	AT((dctx *)ctx, pos, path, code, "%s", msg);
}

void berth_spec_validate(dctx *c, berth_spec *s)
{
	/* a spec that names a registered function, or a function's template:
	 * the rules across layers wait for the merged spec (the plan), since
	 * another layer may set the action, or the other half of a pair */
	bool defer = c->template || s->function.ref.s;

	check_name(c, &s->project, "project", berth_check_dns_label, "project name");
	check_name(c, &s->name, "name", berth_check_dns_label, "run name");
	check_name(c, &s->function.name, "function.name", berth_check_dns_label, "function name");
	check_name(c, &s->function.ref, "function", berth_check_dns_label, "function name");
	if (s->function.image.s && (!*s->function.image.s || strchr(s->function.image.s, ' ') ||
				    berth_check_printable(s->function.image.s)))
		AT(c, s->function.image.pos, "function.image", BERTH_EINVALID,
		   "%s is not a valid image reference", QUOTE(s->function.image.s));
	if (s->function.image_pull_policy.s && strcmp(s->function.image_pull_policy.s, "Always") &&
	    strcmp(s->function.image_pull_policy.s, "IfNotPresent") &&
	    strcmp(s->function.image_pull_policy.s, "Never"))
		AT(c, s->function.image_pull_policy.pos, "function.image_pull_policy", BERTH_EINVALID,
		   "%s is not one of Always, IfNotPresent, Never", QUOTE(s->function.image_pull_policy.s));
	if (s->function.command.set && s->function.command.n == 0)
		AT(c, s->function.command.pos, "function.command", BERTH_EINVALID, "must not be empty");

	if (s->schedule.s && (defer || s->action == BERTH_ACTION_CRONJOB)) {
		const char *why = berth_check_cron(s->schedule.s);
		if (why)
			AT(c, s->schedule.pos, "schedule", BERTH_EINVALID, "%s is not a valid cron schedule: it %s",
			   QUOTE(s->schedule.s), why);
	}
	if (s->profile.s && !*s->profile.s)
		AT(c, s->profile.pos, "profile", BERTH_EINVALID, "must not be empty");
	check_name(c, &s->profile, "profile", berth_check_printable, "profile id");

	check_resources(c, &s->resources);
	for (size_t i = 0; i < s->nvolumes; i++)
		check_volume(c, s, i);
	check_labels(c, &s->node_selector, "node_selector", 0);
	for (size_t i = 0; i < s->ntolerations; i++)
		check_toleration(c, &s->tolerations[i], i);
	check_secret_names(c, &s->secrets);
	check_envs(c, &s->envs);
	check_labels(c, &s->labels, "labels", 1);

	check_range(c, &s->fs_group, "fs_group", 0, 2147483647);
	check_range(c, &s->run_as_user, "run_as_user", 0, 2147483647);
	check_range(c, &s->run_as_group, "run_as_group", 0, 2147483647);
	/* a priority_class is a name in the policy's list ("High" in MLRun), not
	 * the PriorityClass object's name: it is checked against the policy */
	if (s->priority_class.s && !*s->priority_class.s)
		AT(c, s->priority_class.pos, "priority_class", BERTH_EINVALID, "must not be empty");
	check_name(c, &s->priority_class, "priority_class", berth_check_printable, "priority class");
	check_range(c, &s->timeout, "timeout", 1, 2147483647);
	check_range(c, &s->retries, "retries", 0, 2147483647);

	if (s->launcher.s && strcmp(s->launcher.s, "env") && strcmp(s->launcher.s, "torchrun") &&
	    strcmp(s->launcher.s, "jax") && strcmp(s->launcher.s, "mpi"))
		AT(c, s->launcher.pos, "distributed.launcher", BERTH_EINVALID,
		   "%s is not one of env, torchrun, mpi, jax", QUOTE(s->launcher.s));
	check_range(c, &s->procs_per_worker, "distributed.procs_per_worker", 1, 1024);
	check_range(c, &s->dist_port, "distributed.port", 1, 65535);
	check_range(c, &s->min_replicas, "min_replicas", 1, 2147483647);
	check_range(c, &s->max_replicas, "max_replicas", 1, 2147483647);
	if (defer)
		check_range(c, &s->replicas, "replicas", 0, 2147483647); /* what any action takes */
	else
		berth_spec_check_layers(s, parse_report, c);

	if (s->service_type.s && strcmp(s->service_type.s, "ClusterIP") &&
	    strcmp(s->service_type.s, "NodePort") && strcmp(s->service_type.s, "LoadBalancer"))
		AT(c, s->service_type.pos, "service.type", BERTH_EINVALID,
		   "%s is not one of ClusterIP, NodePort, LoadBalancer", QUOTE(s->service_type.s));
	for (size_t i = 0; i < s->nports; i++) {
		char path[64];
		const berth_port *p = &s->ports[i];
		path_make(path, sizeof(path), "service.ports", i, ".port");
		if (!p->port.set)
			AT(c, p->pos, path, BERTH_EMISSING, "\"port\" is required");
		check_range(c, &p->port, path, 1, 65535);
		path_make(path, sizeof(path), "service.ports", i, ".target_port");
		check_range(c, &p->target_port, path, 1, 65535);
		check_name(c, &p->target_port_name, path, berth_check_port_name, "port name");
		path_make(path, sizeof(path), "service.ports", i, ".node_port");
		check_range(c, &p->node_port, path, 30000, 32767);
		path_make(path, sizeof(path), "service.ports", i, ".name");
		check_name(c, &p->name, path, berth_check_port_name, "port name");
		path_make(path, sizeof(path), "service.ports", i, ".protocol");
		if (p->protocol.s && strcmp(p->protocol.s, "TCP") && strcmp(p->protocol.s, "UDP") &&
		    strcmp(p->protocol.s, "SCTP"))
			AT(c, p->protocol.pos, path, BERTH_EINVALID, "%s is not one of TCP, UDP, SCTP",
			   QUOTE(p->protocol.s));
	}
	if (s->args.set && s->args.n && s->function.args.set && s->function.args.n)
		warn_at(c, s->args.pos, "args", "args replace function.args (line %u)",
			s->function.args.pos.line);
}
