/*
 * merge.c - the layers of a run merged into its effective spec
 * (runspec.md section 3), by one table of fields.
 *
 * Each entry of `merge_fields` names a field of berth_spec, its key path and
 * how two layers combine: scalars and plain lists are replaced whole, maps
 * merge key by key, lists with an identity merge by it. Every value copied
 * keeps its position and gets the origin of its layer; the rules (plan.c)
 * then derive and check the rest.
 */
#include <stdio.h>
#include <string.h>

#include "plan/merge.h"

#define OFF(f) offsetof(berth_spec, f)

typedef const berth_node *node_ptr;

const merge_field merge_fields[] = {
	{"project", M_STR, OFF(project), 0, 0},
	{"name", M_STR, OFF(name), 0, 0},
	{"function.name", M_STR, OFF(function.name), 0, 0},
	{"function.image", M_STR, OFF(function.image), 0, 0},
	{"function.image_pull_policy", M_STR, OFF(function.image_pull_policy), 0, 0},
	{"function.command", M_STRS, OFF(function.command), 0, 0},
	{"args", M_STRS, OFF(args), 0, 0},
	{"action", M_STR, OFF(action_name), 0, 0},
	{"schedule", M_STR, OFF(schedule), 0, 0},
	{"profile", M_STR, OFF(profile), 0, 0},
	{"resources.cpu.requests", M_QTY, OFF(resources.cpu.requests), 0, 1},
	{"resources.cpu.limits", M_QTY, OFF(resources.cpu.limits), 0, 1},
	{"resources.mem.requests", M_QTY, OFF(resources.mem.requests), 0, 2},
	{"resources.mem.limits", M_QTY, OFF(resources.mem.limits), 0, 2},
	{"resources.gpu.requests", M_QTY, OFF(resources.gpu.requests), 0, 3},
	{"resources.gpu.limits", M_QTY, OFF(resources.gpu.limits), 0, 3},
	{"resources.gpu_type", M_STR, OFF(resources.gpu_type), 0, 3},
	{"resources.disk.requests", M_QTY, OFF(resources.disk.requests), 0, 4},
	{"resources.disk.limits", M_QTY, OFF(resources.disk.limits), 0, 4},
	{"volume_mode", M_STR, OFF(volume_mode), 0, 0},
	{"volumes", M_VOLUMES, OFF(volumes), OFF(nvolumes), 0},
	{"node_selector", M_MAP, OFF(node_selector), 0, 0},
	{"affinity", M_NODE, OFF(affinity), OFF(affinity_origin), 0},
	{"tolerations", M_TOLERATIONS, OFF(tolerations), OFF(ntolerations), 0},
	{"secrets", M_SET, OFF(secrets), 0, 0},
	{"envs", M_MAP, OFF(envs), 0, 0},
	{"fs_group", M_INT, OFF(fs_group), 0, 0},
	{"run_as_user", M_INT, OFF(run_as_user), 0, 0},
	{"run_as_group", M_INT, OFF(run_as_group), 0, 0},
	{"priority_class", M_STR, OFF(priority_class), 0, 0},
	{"preemption_mode", M_STR, OFF(preemption_name), 0, 0},
	{"replicas", M_INT, OFF(replicas), 0, 0},
	{"min_replicas", M_INT, OFF(min_replicas), 0, 0},
	{"max_replicas", M_INT, OFF(max_replicas), 0, 0},
	{"distributed.launcher", M_STR, OFF(launcher), 0, 0},
	{"distributed.procs_per_worker", M_INT, OFF(procs_per_worker), 0, 0},
	{"distributed.port", M_INT, OFF(dist_port), 0, 0},
	{"service.type", M_STR, OFF(service_type), 0, 0},
	{"service.ports", M_PORTS, OFF(ports), OFF(nports), 0},
	{"labels", M_MAP, OFF(labels), 0, 0},
	{"inputs", M_NODE, OFF(inputs), OFF(inputs_origin), 0},
	{"timeout", M_INT, OFF(timeout), 0, 0},
	{"retries", M_INT, OFF(retries), 0, 0},
};
const size_t merge_nfields = BERTH_ARRAY_SIZE(merge_fields);

#define AT(s, f, T) ((T *)((char *)(s) + (f)->off))
#define CAT(s, f, T) ((const T *)((const char *)(s) + (f)->off))
#define COUNT(s, f) ((size_t *)((char *)(s) + (f)->aux))
#define CCOUNT(s, f) (*(const size_t *)((const char *)(s) + (f)->aux))

/* Whether s sets f: what a layer's merge asks of every field of every
 * layer, inline and without the position and origin merge_field_get finds. */
static inline int field_is_set(const berth_spec *s, const merge_field *f)
{
	switch (f->kind) {
	case M_STR:
		return CAT(s, f, berth_str)->s != NULL;
	case M_INT:
		return CAT(s, f, berth_int)->set;
	case M_QTY:
		return CAT(s, f, berth_qty)->set;
	case M_STRS:
	case M_SET:
		return CAT(s, f, berth_strlist)->set;
	case M_MAP:
		return CAT(s, f, berth_kvlist)->set;
	case M_NODE:
		return *CAT(s, f, node_ptr) != NULL;
	case M_VOLUMES:
	case M_TOLERATIONS:
	case M_PORTS:
		return CCOUNT(s, f) > 0;
	}
	return 0;
}

int merge_field_get(const berth_spec *s, const merge_field *f, berth_pos *pos, uint8_t *origin)
{
	berth_pos p = {0, 0};
	uint8_t o = 0;
	int set = field_is_set(s, f);
	switch (f->kind) {
	case M_STR:
		p = CAT(s, f, berth_str)->pos;
		o = CAT(s, f, berth_str)->origin;
		break;
	case M_INT:
		p = CAT(s, f, berth_int)->pos;
		o = CAT(s, f, berth_int)->origin;
		break;
	case M_QTY:
		p = CAT(s, f, berth_qty)->pos;
		o = CAT(s, f, berth_qty)->origin;
		break;
	case M_STRS:
	case M_SET:
		p = CAT(s, f, berth_strlist)->pos;
		o = CAT(s, f, berth_strlist)->origin;
		break;
	case M_MAP:
		p = CAT(s, f, berth_kvlist)->pos;
		o = CAT(s, f, berth_kvlist)->n ? CAT(s, f, berth_kvlist)->items[0].origin : 0;
		break;
	case M_NODE: {
		node_ptr n = *CAT(s, f, node_ptr);
		if (n)
			p = n->pos;
		o = *((const uint8_t *)s + f->aux);
		break;
	}
	case M_VOLUMES:
		p = s->volumes_pos;
		o = set ? s->volumes[0].origin : 0;
		break;
	case M_TOLERATIONS:
		p = s->tolerations_pos;
		o = set ? s->tolerations[0].origin : 0;
		break;
	case M_PORTS:
		p = s->service_pos;
		o = s->ports_origin;
		break;
	}
	if (pos)
		*pos = p;
	if (origin)
		*origin = o;
	return set;
}

/* ---- combining two layers ----------------------------------------------------- */

static int same(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

static int toleration_same(const berth_toleration *a, const berth_toleration *b)
{
	/* identity: key and effect (an empty key or effect is an identity too) */
	return strcmp(a->key.s ? a->key.s : "", b->key.s ? b->key.s : "") == 0 &&
	       strcmp(a->effect.s ? a->effect.s : "", b->effect.s ? b->effect.s : "") == 0;
}

/* Merges list hi (nhi items of size sz) into *lo (*nlo items) by identity:
 * an item of hi replaces the item of lo it matches, or is appended. */
static int merge_list(berth_arena *a, void **lo, size_t *nlo, const void *hi, size_t nhi, size_t sz,
		      int (*eq)(const void *, const void *), size_t origin_off, uint8_t origin)
{
	char *out = berth_arena_alloc(a, (*nlo + nhi) * sz + 1);
	size_t n = *nlo;
	if (!out)
		return -BERTH_ENOMEM;
	if (n)
		memcpy(out, *lo, n * sz);
	for (size_t i = 0; i < nhi; i++) {
		const char *item = (const char *)hi + i * sz;
		size_t j = 0;
		while (j < n && !eq(out + j * sz, item))
			j++;
		memcpy(out + j * sz, item, sz);
		out[j * sz + origin_off] = (char)origin;
		if (j == n)
			n++;
	}
	*lo = out;
	*nlo = n;
	return 0;
}

static int eq_kv(const void *a, const void *b)
{
	return same(((const berth_kv *)a)->key.s, ((const berth_kv *)b)->key.s);
}

static int eq_str(const void *a, const void *b)
{
	return same(((const berth_str *)a)->s, ((const berth_str *)b)->s);
}

static int eq_volume(const void *a, const void *b)
{
	return same(((const berth_volume *)a)->name.s, ((const berth_volume *)b)->name.s);
}

static int eq_toleration(const void *a, const void *b)
{
	return toleration_same(a, b);
}

/* The items of a replaced list get the origin of their layer. */
static int copy_strs(berth_arena *a, berth_strlist *dst, const berth_strlist *src, uint8_t origin)
{
	*dst = *src;
	dst->origin = origin;
	dst->items = berth_arena_alloc(a, (src->n + 1) * sizeof(*dst->items));
	if (!dst->items)
		return -BERTH_ENOMEM;
	for (size_t i = 0; i < src->n; i++) {
		dst->items[i] = src->items[i];
		dst->items[i].origin = origin;
	}
	return 0;
}

int merge_layer(berth_arena *a, berth_spec *dst, const berth_spec *src, uint8_t origin)
{
	int ret = 0;
	for (size_t i = 0; i < merge_nfields && ret == 0; i++) {
		const merge_field *f = &merge_fields[i];
		if (!field_is_set(src, f))
			continue;
		switch (f->kind) {
		case M_STR:
			*AT(dst, f, berth_str) = *CAT(src, f, berth_str);
			AT(dst, f, berth_str)->origin = origin;
			break;
		case M_INT:
			*AT(dst, f, berth_int) = *CAT(src, f, berth_int);
			AT(dst, f, berth_int)->origin = origin;
			break;
		case M_QTY:
			*AT(dst, f, berth_qty) = *CAT(src, f, berth_qty);
			AT(dst, f, berth_qty)->origin = origin;
			break;
		case M_STRS:
			ret = copy_strs(a, AT(dst, f, berth_strlist), CAT(src, f, berth_strlist), origin);
			break;
		case M_SET: {
			berth_strlist *d = AT(dst, f, berth_strlist);
			const berth_strlist *s = CAT(src, f, berth_strlist);
			void *items = d->items;
			ret = merge_list(a, &items, &d->n, s->items, s->n, sizeof(berth_str), eq_str,
					 offsetof(berth_str, origin), origin);
			d->items = items;
			d->set = true;
			d->pos = s->pos;
			d->origin = origin;
			break;
		}
		case M_MAP: {
			berth_kvlist *d = AT(dst, f, berth_kvlist);
			const berth_kvlist *s = CAT(src, f, berth_kvlist);
			void *items = d->items;
			ret = merge_list(a, &items, &d->n, s->items, s->n, sizeof(berth_kv), eq_kv,
					 offsetof(berth_kv, origin), origin);
			d->items = items;
			d->set = true;
			d->pos = s->pos;
			break;
		}
		case M_NODE:
			*AT(dst, f, node_ptr) = *CAT(src, f, node_ptr);
			*((uint8_t *)dst + f->aux) = origin;
			break;
		case M_VOLUMES: {
			void *items = dst->volumes;
			ret = merge_list(a, &items, &dst->nvolumes, src->volumes, src->nvolumes,
					 sizeof(berth_volume), eq_volume, offsetof(berth_volume, origin), origin);
			dst->volumes = items;
			dst->volumes_pos = src->volumes_pos;
			break;
		}
		case M_TOLERATIONS: {
			void *items = dst->tolerations;
			ret = merge_list(a, &items, &dst->ntolerations, src->tolerations, src->ntolerations,
					 sizeof(berth_toleration), eq_toleration,
					 offsetof(berth_toleration, origin), origin);
			dst->tolerations = items;
			dst->tolerations_pos = src->tolerations_pos;
			break;
		}
		case M_PORTS:
			dst->ports = berth_arena_alloc(a, src->nports * sizeof(*dst->ports));
			if (!dst->ports) {
				ret = -BERTH_ENOMEM;
				break;
			}
			for (size_t k = 0; k < src->nports; k++) {
				dst->ports[k] = src->ports[k];
				dst->ports[k].origin = origin;
			}
			dst->nports = src->nports;
			dst->ports_origin = origin;
			dst->service_pos = src->service_pos;
			break;
		}
	}
	return ret;
}

/* ---- a profile: whole resources, and what it replaces of the user's ----------------- */

static int user_origin(uint8_t o)
{
	return o == BERTH_ORIGIN_RUN || o == BERTH_ORIGIN_FUNCTION;
}

typedef struct override_ctx {
	berth_arena *a;
	merge_override_fn cb;
	void *ctx;
	int nomem;
} override_ctx;

static void report(override_ctx *c, const char *path, const char *ident, const char *value,
		   uint8_t origin, berth_pos pos, const char *by, berth_pos by_pos)
{
	berth_override o = {berth_arena_strdup(c->a, path), ident ? berth_arena_strdup(c->a, ident) : NULL,
			    value ? berth_arena_strdup(c->a, value) : NULL, origin, pos,
			    by ? berth_arena_strdup(c->a, by) : NULL, by_pos};
	if (!o.path || (ident && !o.ident) || (value && !o.value) || (by && !o.by)) {
		c->nomem = 1;
		return;
	}
	if (!o.by)
		o.by = o.path;
	if (c->cb)
		c->cb(c->ctx, &o);
}

/* The value of a scalar field as text, into buf; NULL for a list or a tree. */
static const char *scalar_text(const berth_spec *s, const merge_field *f, char *buf, size_t len)
{
	switch (f->kind) {
	case M_STR:
		snprintf(buf, len, "\"%s\"", CAT(s, f, berth_str)->s);
		return buf;
	case M_INT:
		snprintf(buf, len, "%lld", (long long)CAT(s, f, berth_int)->v);
		return buf;
	case M_QTY:
		if (CAT(s, f, berth_qty)->from_default)
			snprintf(buf, len, "default"); /* requests: default, as written */
		else
			berth_quantity_format(&CAT(s, f, berth_qty)->q, buf, len);
		return buf;
	default:
		return NULL;
	}
}

/* Whether field f holds the same scalar in a and b. */
static int same_scalar(const berth_spec *a, const berth_spec *b, const merge_field *f)
{
	switch (f->kind) {
	case M_STR:
		return same(CAT(a, f, berth_str)->s, CAT(b, f, berth_str)->s);
	case M_INT:
		return CAT(a, f, berth_int)->v == CAT(b, f, berth_int)->v;
	case M_QTY:
		return CAT(a, f, berth_qty)->from_default == CAT(b, f, berth_qty)->from_default &&
		       berth_quantity_cmp(&CAT(a, f, berth_qty)->q, &CAT(b, f, berth_qty)->q) == 0;
	default:
		return 0;
	}
}

static void clear_field(berth_spec *s, const merge_field *f)
{
	if (f->kind == M_QTY)
		memset(AT(s, f, berth_qty), 0, sizeof(berth_qty));
	else if (f->kind == M_STR)
		memset(AT(s, f, berth_str), 0, sizeof(berth_str));
}

/* The resources the profile decides whole: each one's user values reported, then dropped. */
static void whole_resources(override_ctx *c, berth_spec *dst, const berth_spec *pro)
{
	char buf[BERTH_QUANTITY_STR_MAX + 64], by[32];
	for (int g = 1; g <= 4; g++) {
		const merge_field *first = NULL;
		berth_pos by_pos = {0, 0};
		for (size_t i = 0; i < merge_nfields && !first; i++)
			if (merge_fields[i].group == g && merge_fields[i].kind == M_QTY &&
			    merge_field_get(pro, &merge_fields[i], &by_pos, NULL))
				first = &merge_fields[i];
		if (!first)
			continue;
		/* "resources.mem.requests" -> "resources.mem" */
		size_t bl = (size_t)(strrchr(first->path, '.') - first->path);
		if (bl >= sizeof(by))
			bl = sizeof(by) - 1;
		memcpy(by, first->path, bl);
		by[bl] = '\0';
		for (size_t i = 0; i < merge_nfields; i++) {
			const merge_field *f = &merge_fields[i];
			berth_pos pos;
			uint8_t origin;
			if (f->group != g || !merge_field_get(dst, f, &pos, &origin))
				continue;
			if (user_origin(origin) &&
			    !(field_is_set(pro, f) && same_scalar(dst, pro, f)))
				report(c, f->path, NULL, scalar_text(dst, f, buf, sizeof(buf)), origin, pos, by,
				       by_pos);
			clear_field(dst, f);
		}
	}
}

/* The other fields the profile sets (a resource's gpu_type too, when the
 * profile sets it but not the GPUs): each value of the user's it replaces. */
static void replaced_values(override_ctx *c, const berth_spec *dst, const berth_spec *pro)
{
	char buf[BERTH_QUANTITY_STR_MAX + 64], path[320];
	for (size_t i = 0; i < merge_nfields; i++) {
		const merge_field *f = &merge_fields[i];
		berth_pos pos, by_pos;
		uint8_t origin;
		if (!merge_field_get(pro, f, &by_pos, NULL))
			continue;
		switch (f->kind) {
		case M_STR:
		case M_INT:
		case M_QTY:
		case M_STRS:
		case M_NODE:
		case M_PORTS:
			if (merge_field_get(dst, f, &pos, &origin) && user_origin(origin) &&
			    !same_scalar(dst, pro, f))
				report(c, f->path, NULL, scalar_text(dst, f, buf, sizeof(buf)), origin, pos,
				       NULL, by_pos);
			break;
		case M_SET: /* merged by value: nothing of the user's is replaced */
			break;
		case M_MAP: {
			const berth_kvlist *d = CAT(dst, f, berth_kvlist), *s = CAT(pro, f, berth_kvlist);
			for (size_t k = 0; k < s->n; k++)
				for (size_t j = 0; j < d->n; j++) {
					const berth_kv *kv = &d->items[j];
					if (!eq_kv(kv, &s->items[k]) || !user_origin(kv->origin) ||
					    same(kv->value.s, s->items[k].value.s))
						continue;
					snprintf(path, sizeof(path), "%s.%s", f->path, kv->key.s);
					snprintf(buf, sizeof(buf), "\"%s\"", kv->value.s ? kv->value.s : "");
					report(c, path, NULL, buf, kv->origin, kv->pos, NULL, s->items[k].pos);
				}
			break;
		}
		case M_VOLUMES:
			for (size_t k = 0; k < pro->nvolumes; k++)
				for (size_t j = 0; j < dst->nvolumes; j++) {
					const berth_volume *v = &dst->volumes[j];
					if (!eq_volume(v, &pro->volumes[k]) || !user_origin(v->origin))
						continue;
					snprintf(path, sizeof(path), "volumes.%s", v->name.s);
					report(c, path, NULL, NULL, v->origin, v->pos, NULL, pro->volumes[k].pos);
				}
			break;
		case M_TOLERATIONS:
			for (size_t k = 0; k < pro->ntolerations; k++)
				for (size_t j = 0; j < dst->ntolerations; j++) {
					const berth_toleration *t = &dst->tolerations[j];
					if (!toleration_same(t, &pro->tolerations[k]) || !user_origin(t->origin))
						continue;
					snprintf(path, sizeof(path), "%s:%s", t->key.s ? t->key.s : "",
						 t->effect.s ? t->effect.s : "");
					report(c, "tolerations", path, NULL, t->origin, t->pos, NULL,
					       pro->tolerations[k].pos);
				}
			break;
		}
	}
}

int merge_profile(berth_arena *a, berth_spec *dst, const berth_spec *profile, merge_override_fn cb,
		  void *ctx)
{
	override_ctx c = {a, cb, ctx, 0};
	whole_resources(&c, dst, profile); /* first: what it drops is not replaced again */
	replaced_values(&c, dst, profile);
	if (c.nomem)
		return -BERTH_ENOMEM;
	return merge_layer(a, dst, profile, BERTH_ORIGIN_PROFILE);
}
