/*
 * spec.c - run spec documents into berth_spec structs.
 *
 * Table-driven (after redis' standardConfig): each object of the spec is a
 * table of {key, decoder, offset}. decode_map() walks a YAML map against a
 * table, reporting unknown keys (with a did-you-mean), duplicate keys and
 * wrong types, and goes on after every problem so that one pass finds all
 * (decode.c holds that machinery). Rules about values live in validate.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/names.h"
#include "spec/spec_internal.h"
#include "spec/yaml.h"

struct berth_spec_set {
	berth_arena *arena;
	berth_spec *specs;
	size_t n;
};

/* ---- resources ------------------------------------------------------------------ */

/* A request: a quantity, or "default", the policy's default request (as MLRun
 * keeps its service's default request under a limit set by with_limits). */
static void dec_request(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	berth_qty *out = dst;
	if (n->kind == BERTH_NODE_SCALAR && n->type == BERTH_SCALAR_STR && n->len == 7 &&
	    !memcmp(n->u.text, "default", 7)) {
		memset(out, 0, sizeof(*out));
		out->text = "default";
		out->pos = n->pos;
		out->set = true;
		out->from_default = true;
		return;
	}
	dec_qty(c, n, dst, arg);
}

static const field resource_fields[] = {
	{"requests", dec_request, offsetof(berth_resource, requests), NULL},
	{"limits", dec_qty, offsetof(berth_resource, limits), NULL},
};

/* "8", 8 or {requests, limits}. The short form is the request, except for
 * gpu where it is the limit (a GPU is always a limit; request = limit). */
static void dec_resource(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	berth_resource *r = dst;
	r->pos = n->pos;
	if (n->kind == BERTH_NODE_MAP) {
		DECODE_MAP(c, n, resource_fields, r);
		return;
	}
	dec_qty(c, n, arg ? &r->limits : &r->requests, NULL);
}

/* Memory and disk are whole bytes: a fraction ("0.0001Ki", which Kubernetes
 * would print as "102400u") is rounded up, as the kubelet does, and said. */
static void whole_bytes(dctx *c, berth_qty *q, const char *which)
{
	if (!q->set || berth_quantity_sign(&q->q) <= 0 || berth_quantity_is_integer(&q->q))
		return;
	berth_quantity up;
	if (berth_quantity_ceil(&up, &q->q) < 0)
		return;
	char was[BERTH_QUANTITY_STR_MAX], now[BERTH_QUANTITY_STR_MAX], path[160];
	const char *at = path_text(c);
	snprintf(path, sizeof(path), "%s.%s", at ? at : "", which);
	berth_format_bytes(now, sizeof(now), berth_quantity_value(&up));
	warn_at(c, q->pos, path, "%s is not a whole number of bytes: %s is used",
		berth_qty_written(q, was), now);
	q->q = berth_quantity_from_int(berth_quantity_value(&up), BERTH_QUANTITY_BINARY_SI);
	q->text = NULL;
}

static void dec_bytes(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	berth_resource *r = dst;
	dec_resource(c, n, dst, arg);
	whole_bytes(c, &r->requests, "requests");
	whole_bytes(c, &r->limits, "limits");
}

static const field resources_fields[] = {
	{"cpu", dec_resource, offsetof(berth_resources, cpu), NULL},
	{"mem", dec_bytes, offsetof(berth_resources, mem), NULL},
	{"gpu", dec_resource, offsetof(berth_resources, gpu), "gpu"},
	{"disk", dec_bytes, offsetof(berth_resources, disk), NULL},
	{"gpu_type", dec_str, offsetof(berth_resources, gpu_type), NULL},
};

static void dec_resources(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	berth_resources *r = dst;
	r->pos = n->pos;
	r->set = true;
	DECODE_MAP(c, n, resources_fields, r);
}

/* ---- volumes ---------------------------------------------------------------------- */


struct volume_raw {
	berth_volume v;
	const berth_node *spec;
};

static const field volume_fields[] = {
	{"volume_type", dec_str, offsetof(struct volume_raw, v.type_name), NULL},
	{"name", dec_str, offsetof(struct volume_raw, v.name), NULL},
	{"mount_path", dec_str, offsetof(struct volume_raw, v.mount_path), NULL},
	{"spec", dec_node, offsetof(struct volume_raw, spec), NULL},
};

static const field pvc_spec[] = {
	{"size", dec_qty, offsetof(berth_volume, size), NULL},
	{"storage_class", dec_str, offsetof(berth_volume, storage_class), NULL},
	{"access_mode", dec_str, offsetof(berth_volume, access_mode), NULL},
};
static const field empty_dir_spec[] = {
	{"size", dec_qty, offsetof(berth_volume, size), NULL},
	{"medium", dec_str, offsetof(berth_volume, medium), NULL},
};
static const field named_spec[] = {
	{"name", dec_str, offsetof(berth_volume, ref), NULL},
};
static const field claim_spec[] = {
	{"claim_name", dec_str, offsetof(berth_volume, ref), NULL},
};

static const struct {
	const field *fields;
	size_t n;
} volume_specs[] = {
	[BERTH_VOLUME_PVC] = {pvc_spec, BERTH_ARRAY_SIZE(pvc_spec)},
	[BERTH_VOLUME_EMPTY_DIR] = {empty_dir_spec, BERTH_ARRAY_SIZE(empty_dir_spec)},
	[BERTH_VOLUME_CONFIG_MAP] = {named_spec, 1},
	[BERTH_VOLUME_SECRET] = {named_spec, 1},
	[BERTH_VOLUME_SHARED] = {claim_spec, 1},
};

static void dec_volumes(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	berth_spec *s = dst;
	if (!want(c, n, BERTH_NODE_SEQ, "a list of volumes"))
		return;
	s->volumes_pos = n->pos;
	/* each volume is checked against every other (names, mount paths): a pod
	 * has tens, and a list of thousands would cost seconds */
	if (n->len > BERTH_MAX_VOLUMES) {
		report(c, n->pos, BERTH_ETOOBIG, "%zu volumes; a run may have at most %d", n->len,
		       BERTH_MAX_VOLUMES);
		return;
	}
	if (!(s->volumes = arena_array(c, n->len, sizeof(*s->volumes), n->pos)))
		return;
	for (size_t i = 0; i < n->len; i++) {
		struct volume_raw raw;
		const berth_node *item = n->u.items[i];
		size_t len = path_index(c, i);
		memset(&raw, 0, sizeof(raw));
		raw.v.pos = item->pos;
		DECODE_MAP(c, item, volume_fields, &raw);
		if (item->kind != BERTH_NODE_MAP) {
			path_pop(c, len);
			continue;
		}
		int type = -1;
		if (!raw.v.type_name.s) {
			report(c, item->pos, BERTH_EMISSING,
			       "\"volume_type\" is required (persistent_volume_claim, empty_dir, "
			       "config_map, secret or shared_volume)");
		} else {
			size_t l2 = path_key(c, "volume_type");
			type = enum_value(c, &raw.v.type_name, spec_volume_types, BERTH_ARRAY_SIZE(spec_volume_types));
			path_pop(c, l2);
		}
		if (type >= 0) {
			raw.v.type = (berth_volume_type)type;
			if (raw.spec) {
				size_t l2 = path_key(c, "spec");
				decode_map(c, raw.spec, volume_specs[type].fields, volume_specs[type].n, &raw.v);
				path_pop(c, l2);
			}
		}
		s->volumes[s->nvolumes++] = raw.v;
		path_pop(c, len);
	}
}

/* ---- tolerations ---------------------------------------------------------------------- */

static const field toleration_fields[] = {
	{"key", dec_str, offsetof(berth_toleration, key), NULL},
	{"operator", dec_str, offsetof(berth_toleration, op), NULL},
	{"value", dec_str, offsetof(berth_toleration, value), NULL},
	{"effect", dec_str, offsetof(berth_toleration, effect), NULL},
	{"tolerationSeconds", dec_int, offsetof(berth_toleration, seconds), NULL},
};

static void dec_tolerations(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	berth_spec *s = dst;
	if (!want(c, n, BERTH_NODE_SEQ, "a list of tolerations"))
		return;
	s->tolerations_pos = n->pos;
	if (!(s->tolerations = arena_array(c, n->len, sizeof(*s->tolerations), n->pos)))
		return;
	for (size_t i = 0; i < n->len; i++) {
		berth_toleration *t = &s->tolerations[s->ntolerations];
		size_t len = path_index(c, i);
		t->pos = n->u.items[i]->pos;
		DECODE_MAP(c, n->u.items[i], toleration_fields, t);
		if (n->u.items[i]->kind == BERTH_NODE_MAP)
			s->ntolerations++;
		path_pop(c, len);
	}
}

/* ---- service ------------------------------------------------------------------------------ */

static void dec_target_port(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	berth_port *p = dst;
	if (n->kind == BERTH_NODE_SCALAR && n->type == BERTH_SCALAR_STR && n->len &&
	    !(n->u.text[0] >= '0' && n->u.text[0] <= '9'))
		scalar_text(c, n, &p->target_port_name);
	else
		dec_int(c, n, &p->target_port, NULL);
}

static const field port_fields[] = {
	{"name", dec_str, offsetof(berth_port, name), NULL},
	{"port", dec_int, offsetof(berth_port, port), NULL},
	{"target_port", dec_target_port, 0, NULL},
	{"protocol", dec_str, offsetof(berth_port, protocol), NULL},
	{"node_port", dec_int, offsetof(berth_port, node_port), NULL},
};

static void dec_ports(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	berth_spec *s = dst;
	if (!want(c, n, BERTH_NODE_SEQ, "a list of ports"))
		return;
	if (!(s->ports = arena_array(c, n->len, sizeof(*s->ports), n->pos)))
		return;
	for (size_t i = 0; i < n->len; i++) {
		berth_port *p = &s->ports[s->nports];
		size_t len = path_index(c, i);
		p->pos = n->u.items[i]->pos;
		DECODE_MAP(c, n->u.items[i], port_fields, p);
		if (n->u.items[i]->kind == BERTH_NODE_MAP)
			s->nports++;
		path_pop(c, len);
	}
}

static const field service_fields[] = {
	{"type", dec_str, offsetof(berth_spec, service_type), NULL},
	{"ports", dec_ports, 0, NULL},
};

static const field distributed_fields[] = {
	{"launcher", dec_str, offsetof(berth_spec, launcher), NULL},
	{"procs_per_worker", dec_int, offsetof(berth_spec, procs_per_worker), NULL},
	{"port", dec_int, offsetof(berth_spec, dist_port), NULL},
};

static void dec_distributed(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	berth_spec *s = dst;
	s->distributed_pos = n->pos;
	DECODE_MAP(c, n, distributed_fields, s);
}

static void dec_service(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	berth_spec *s = dst;
	s->service_pos = n->pos;
	DECODE_MAP(c, n, service_fields, s);
}

/* ---- function -------------------------------------------------------------------------------- */

static const field function_fields[] = {
	{"name", dec_str, offsetof(berth_function, name), NULL},
	{"image", dec_str, offsetof(berth_function, image), NULL},
	{"command", dec_strlist, offsetof(berth_function, command), "a list of strings, e.g. [python, train.py]"},
	{"args", dec_strlist, offsetof(berth_function, args), "a list of strings, e.g. [--epochs, \"3\"]"},
	{"image_pull_policy", dec_str, offsetof(berth_function, image_pull_policy), NULL},
};

/* An inline function, or the name of one registered on the server. */
static void dec_function(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	berth_function *f = dst;
	f->pos = n->pos;
	f->set = true;
	if (n->kind == BERTH_NODE_SCALAR) {
		scalar_text(c, n, &f->ref);
		return;
	}
	if (n->kind != BERTH_NODE_MAP) {
		report(c, n->pos, BERTH_ETYPE, "must be a map (an inline function) or the name of a "
		       "registered function, not %s", berth_node_kind_name(n));
		return;
	}
	DECODE_MAP(c, n, function_fields, f);
}

/* ---- the run spec ------------------------------------------------------------------------------ */

static void dec_map_node(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	if (want(c, n, BERTH_NODE_MAP, "a map")) {
		check_duplicate_keys(c, n);
		*(const berth_node **)dst = n;
	}
}

static void dec_affinity(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	size_t before = c->errors;
	berth_check_affinity(c, n);
	if (c->errors == before) {
		berth_spec *s = dst;
		s->affinity = n;
		s->affinity_pos = n->pos;
	}
}

/* volume_mode, also as volumeMode (MLRun's and Kubernetes' spelling): once. */
static void dec_volume_mode(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	berth_str *m = dst;
	if (m->s) {
		report(c, n->pos, BERTH_EDUPLICATE,
		       "the volume mode is written twice (volume_mode and volumeMode are one field; "
		       "first at line %u)", m->pos.line);
		return;
	}
	scalar_text(c, n, m);
}

static const field spec_fields[] = {
	{"project", dec_str, offsetof(berth_spec, project), NULL},
	{"name", dec_str, offsetof(berth_spec, name), NULL},
	{"function", dec_function, offsetof(berth_spec, function), NULL},
	{"action", dec_str, offsetof(berth_spec, action_name), NULL},
	{"schedule", dec_str, offsetof(berth_spec, schedule), NULL},
	{"profile", dec_str, offsetof(berth_spec, profile), NULL},
	{"resources", dec_resources, offsetof(berth_spec, resources), NULL},
	{"volumes", dec_volumes, 0, NULL},
	{"node_selector", dec_kvlist, offsetof(berth_spec, node_selector), &kv_selector},
	{"affinity", dec_affinity, 0, NULL},
	{"tolerations", dec_tolerations, 0, NULL},
	{"secrets", dec_strlist, offsetof(berth_spec, secrets), "a list of secret names"},
	{"envs", dec_kvlist, offsetof(berth_spec, envs), &kv_env},
	{"fs_group", dec_int, offsetof(berth_spec, fs_group), NULL},
	{"run_as_user", dec_int, offsetof(berth_spec, run_as_user), NULL},
	{"run_as_group", dec_int, offsetof(berth_spec, run_as_group), NULL},
	{"priority_class", dec_str, offsetof(berth_spec, priority_class), NULL},
	{"preemption_mode", dec_str, offsetof(berth_spec, preemption_name), NULL},
	{"volume_mode", dec_volume_mode, offsetof(berth_spec, volume_mode), NULL},
	{"volumeMode", dec_volume_mode, offsetof(berth_spec, volume_mode), NULL},
	{"replicas", dec_int, offsetof(berth_spec, replicas), NULL},
	{"min_replicas", dec_int, offsetof(berth_spec, min_replicas), NULL},
	{"max_replicas", dec_int, offsetof(berth_spec, max_replicas), NULL},
	{"service", dec_service, 0, NULL},
	{"distributed", dec_distributed, 0, NULL},
	{"labels", dec_kvlist, offsetof(berth_spec, labels), &kv_map},
	{"args", dec_strlist, offsetof(berth_spec, args), "a list of strings, e.g. [--epochs, \"3\"]"},
	{"inputs", dec_map_node, offsetof(berth_spec, inputs), NULL},
	{"timeout", dec_int, offsetof(berth_spec, timeout), NULL},
	{"retries", dec_int, offsetof(berth_spec, retries), NULL},
};

size_t spec_fields_subset(field *out, size_t max, const char *const *keys, size_t base)
{
	size_t n = 0;
	for (size_t k = 0; keys[k]; k++)
		for (size_t i = 0; i < BERTH_ARRAY_SIZE(spec_fields) && n < max; i++)
			if (strcmp(spec_fields[i].key, keys[k]) == 0) {
				out[n] = spec_fields[i];
				out[n++].off += base;
			}
	return n;
}

static void decode_spec(dctx *c, const berth_node *root, berth_spec *s)
{
	s->pos = root->pos;
	if (root->kind != BERTH_NODE_MAP) {
		report(c, root->pos, BERTH_ETYPE, "a run spec must be a map, not %s",
		       berth_node_kind_name(root));
		return;
	}
	DECODE_MAP(c, root, spec_fields, s);
	spec_finish(c, s);
}

void spec_finish(dctx *c, berth_spec *s)
{
	if (s->action_name.s) {
		size_t len = path_key(c, "action");
		int a = enum_value(c, &s->action_name, spec_action_names, BERTH_ARRAY_SIZE(spec_action_names));
		s->action = a < 0 ? BERTH_ACTION_JOB : (berth_action)a;
		path_pop(c, len);
	}
	if (s->preemption_name.s) {
		/* in any case: MLRun's prose writes "Prevent", its code "prevent"
		 * (seed 002); the name is kept as berth spells it */
		size_t len = path_key(c, "preemption_mode");
		for (size_t i = 0; i < BERTH_ARRAY_SIZE(spec_preemption_names); i++)
			if (spec_preemption_names[i] && !strcasecmp(s->preemption_name.s, spec_preemption_names[i]))
				s->preemption_name.s = spec_preemption_names[i];
		int p = enum_value(c, &s->preemption_name, spec_preemption_names, BERTH_ARRAY_SIZE(spec_preemption_names));
		s->preemption_mode = p < 0 ? BERTH_PREEMPTION_UNSET : (berth_preemption)p;
		path_pop(c, len);
	}
	if (s->volume_mode.s) {
		/* in any case: MLRun's UI writes "Auto", "Manual", "None" */
		size_t len = path_key(c, "volume_mode");
		for (size_t i = 0; i < BERTH_ARRAY_SIZE(spec_volume_modes); i++)
			if (!strcasecmp(s->volume_mode.s, spec_volume_modes[i]))
				s->volume_mode.s = spec_volume_modes[i];
		if (enum_value(c, &s->volume_mode, spec_volume_modes, BERTH_ARRAY_SIZE(spec_volume_modes)) < 0)
			s->volume_mode.s = NULL;
		path_pop(c, len);
	}
}

/* Document i of a file into s, decoded and checked: 0 when the document is
 * empty ("---" at the end: it holds no run), else 1. */
static int spec_doc(dctx *c, const berth_node *root, size_t i, berth_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->file = c->file;
	s->doc = i;
	path_reset(c);
	if (!root || is_null(root))
		return 0;
	decode_spec(c, root, s);
	berth_spec_validate(c, s);
	return 1;
}

/* The end of a file's read (ndocs documents, runs of them not empty): a file
 * without a run is an error, the problems are sorted; 0, or the error the
 * problems say. */
static int spec_end(dctx *c, size_t ndocs, size_t runs, berth_error **err)
{
	int ret = 0;
	if (ndocs == 0) {
		berth_where w = {c->file, 0, 0, NULL};
		return berth_problem_add(err, BERTH_EMISSING, BERTH_ERROR, &w, "%s",
					 "holds no run spec (the input is empty)");
	}
	if (runs == 0 && !c->errors) {
		berth_where w = {c->file, 0, 0, NULL};
		berth_problem_add(err, BERTH_EMISSING, BERTH_ERROR, &w, "%s",
				  "holds no run spec (every document is empty)");
		c->errors++;
	}
	if (err)
		berth_error_sort(*err);
	/* an error object that could not record a warning holds an error */
	if (err && berth_error_errors(*err) && !c->errors)
		c->errors++;
	if (c->errors) {
		ret = err && berth_error_code(*err) ? -(int)berth_error_code(*err)
						    : -(int)(c->first_code ? c->first_code : BERTH_EINVALID);
		if (ret == 0)
			ret = -BERTH_EINVALID;
	}
	return ret;
}

/* lim: the reader's caps (yaml.h): a request's, or a file's that is only checked. */
static int spec_parse(berth_spec_set **out, const char *name, const char *data, size_t len,
		      const berth_yaml_limits *lim, bool template, berth_error **err)
{
	berth_spec_set *set = NULL;
	berth_yaml_doc *docs;
	size_t ndocs;
	dctx c;
	int ret;

	*out = NULL;
	memset(&c, 0, sizeof(c));
	c.file = name;
	c.err = err;
	c.template = template;
	if (!(set = berth_calloc(1, sizeof(*set))) || !(set->arena = berth_arena_new())) {
		free(set);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	c.arena = set->arena;
	if (!(c.file = name = berth_arena_strdup(set->arena, name))) {
		ret = berth_fail(err, BERTH_ENOMEM, "out of memory");
		goto fail;
	}
	ret = berth_yaml_parse_with(set->arena, name, data, len, lim, &docs, &ndocs, err);
	if (ret < 0)
		goto fail;
	if (ndocs == 0) {
		ret = spec_end(&c, 0, 0, err);
		goto fail;
	}
	if (!(set->specs = berth_arena_alloc(set->arena, ndocs * sizeof(*set->specs)))) {
		ret = berth_fail(err, BERTH_ENOMEM, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < ndocs; i++)
		set->n += spec_doc(&c, docs[i].root, i, &set->specs[set->n]);
	path_release(&c);
	if ((ret = spec_end(&c, ndocs, set->n, err)) < 0)
		goto fail;
	*out = set;
	return 0;
fail:
	path_release(&c);
	berth_spec_set_free(set);
	return ret < 0 ? ret : -BERTH_EINVALID;
}

int berth_spec_parse(berth_spec_set **out, const char *name, const char *data, size_t len,
		     berth_error **err)
{
	return spec_parse(out, name, data, len, &berth_yaml_input_limits, false, err);
}

int berth_spec_parse_function(berth_spec_set **out, const char *name, const char *data, size_t len,
			      berth_error **err)
{
	return spec_parse(out, name, data, len, &berth_yaml_input_limits, true, err);
}

int berth_spec_parse_file(berth_spec_set **out, const char *path, berth_error **err)
{
	char *data;
	size_t len;
	*out = NULL;
	int ret = berth_read_file(path, BERTH_YAML_MAX_BYTES, &data, &len, err);
	if (ret < 0)
		return ret;
	ret = spec_parse(out, strcmp(path, "-") == 0 ? "<stdin>" : path, data, len,
			 &berth_yaml_file_limits, false, err);
	free(data);
	return ret;
}

/* berth_spec_read_file: spec_parse, each document decoded as it is read. */
struct stream {
	dctx c;
	const berth_spec_sink *sink;
	berth_error *spec; /* the specs' problems, in order (the reader's go in its own list) */
	size_t runs;       /* the runs read: non-empty documents */
};

static void stream_start(void *arg)
{
	struct stream *st = arg;
	berth_error_free(st->spec);
	st->spec = NULL;
	st->runs = 0;
	st->c.errors = 0;
	st->c.first_code = BERTH_OK;
	st->sink->start(st->sink->arg);
}

static void stream_doc(void *arg, const berth_yaml_doc *doc, size_t i)
{
	struct stream *st = arg;
	dctx *c = &st->c;
	berth_spec s;
	if (!spec_doc(c, doc->root, i, &s))
		return; /* an empty document holds no run */
	if (!c->errors && !berth_error_errors(st->spec))
		st->sink->run(st->sink->arg, &s, st->runs);
	st->runs++;
}

int berth_spec_read_file(const char *path, const berth_spec_sink *sink, berth_error **err)
{
	struct stream st;
	berth_error *yaml = NULL;
	berth_arena *arena = NULL;
	char *data;
	size_t len, ndocs = 0;
	int ret = berth_read_file(path, BERTH_YAML_MAX_BYTES, &data, &len, err);
	if (ret < 0)
		return ret;
	memset(&st, 0, sizeof(st));
	st.sink = sink;
	st.c.err = &st.spec;
	if (!(arena = berth_arena_new()) ||
	    !(st.c.file = berth_arena_strdup(arena, strcmp(path, "-") == 0 ? "<stdin>" : path))) {
		free(data);
		berth_arena_free(arena);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	st.c.arena = arena;
	berth_yaml_each each = {&st, stream_start, stream_doc};
	ret = berth_yaml_parse_each(arena, st.c.file, data, len, &berth_yaml_file_limits, &each, &ndocs,
				    &yaml);
	free(data);
	path_release(&st.c);
	/* the problems as spec_parse has them: the reader's, then the specs' */
	if (err) {
		berth_error_move(err, yaml);
		if (ret == 0)
			berth_error_move(err, st.spec);
		else
			berth_error_free(st.spec);
	} else {
		berth_error_free(yaml);
		berth_error_free(st.spec);
	}
	if (ret < 0)
		goto out;
	ret = spec_end(&st.c, ndocs, st.runs, err);
out:
	berth_arena_free(arena);
	return ret < 0 ? ret : 0;
}

size_t berth_spec_set_count(const berth_spec_set *set)
{
	return set ? set->n : 0;
}

const berth_spec *berth_spec_set_get(const berth_spec_set *set, size_t i)
{
	return set && i < set->n ? &set->specs[i] : NULL;
}

void berth_spec_set_free(berth_spec_set *set)
{
	if (!set)
		return;
	berth_arena_free(set->arena);
	free(set);
}

const char *berth_qty_written(const berth_qty *q, char *buf)
{
	berth_quantity as_written;
	if (q->text && strlen(q->text) < BERTH_QUANTITY_STR_MAX &&
	    berth_quantity_parse(&as_written, q->text, strlen(q->text), NULL) == 0 &&
	    berth_quantity_cmp(&as_written, &q->q) == 0)
		return q->text;
	berth_quantity_format(&q->q, buf, BERTH_QUANTITY_STR_MAX);
	return buf;
}
