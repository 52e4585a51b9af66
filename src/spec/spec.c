/*
 * spec.c - run spec documents into berth_spec structs.
 *
 * Table-driven (after redis' standardConfig): each object of the spec is a
 * table of {key, decoder, offset}. decode_map() walks a YAML map against a
 * table, reporting unknown keys (with a did-you-mean), duplicate keys and
 * wrong types, and goes on after every problem so that one pass finds all.
 * Rules about values live in validate.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/names.h"
#include "spec/spec_internal.h"
#include "spec/yaml.h"

struct berth_spec_set {
	berth_arena *arena;
	berth_spec *specs;
	size_t n;
};

/* ---- context helpers ------------------------------------------------------ */

static int plain_key(const char *k)
{
	if (!*k)
		return 0;
	for (; *k; k++)
		if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') || (*k >= '0' && *k <= '9') ||
		      *k == '_' || *k == '-'))
			return 0;
	return 1;
}

size_t path_key(dctx *c, const char *key)
{
	size_t len = c->path.len;
	if (plain_key(key)) {
		if (len)
			berth_buf_append(&c->path, ".", 1);
		berth_buf_puts(&c->path, key);
	} else {
		berth_buf_printf(&c->path, "[%s]", QUOTE(key));
	}
	return len;
}

size_t path_index(dctx *c, size_t i)
{
	size_t len = c->path.len;
	berth_buf_printf(&c->path, "[%zu]", i);
	return len;
}

void path_pop(dctx *c, size_t len)
{
	if (c->path.data && len <= c->path.len) {
		c->path.len = len;
		c->path.data[len] = '\0';
	}
}

static void vreport(dctx *c, berth_pos pos, const char *path, berth_code code, berth_severity sev,
		    const char *fmt, va_list ap)
{
	berth_where w = {c->file, pos.line, pos.column, path};
	if (sev == BERTH_ERROR && !c->first_code)
		c->first_code = code;
	if (sev == BERTH_ERROR && ++c->errors > BERTH_MAX_PROBLEMS) {
		if (c->errors == BERTH_MAX_PROBLEMS + 1) {
			w.path = NULL;
			berth_problem_add(c->err, code, sev, &w, "too many problems; stopping after %d",
					  BERTH_MAX_PROBLEMS);
		}
		return;
	}
	berth_problem_vadd(c->err, code, sev, &w, fmt, ap);
}

void report(dctx *c, berth_pos pos, berth_code code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(c, pos, c->path.data, code, BERTH_ERROR, fmt, ap);
	va_end(ap);
}

void report_at(dctx *c, berth_pos pos, const char *path, berth_code code, const char *fmt, ...)
{
	va_list ap;
	berth_buf full = BERTH_BUF_INIT;
	if (c->prefix && path) {
		berth_buf_printf(&full, "%s%s%s", c->prefix, path[0] == '[' ? "" : ".", path);
		if (full.data)
			path = full.data;
	}
	va_start(ap, fmt);
	vreport(c, pos, path, code, BERTH_ERROR, fmt, ap);
	va_end(ap);
	berth_buf_release(&full);
}

void warn_at(dctx *c, berth_pos pos, const char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(c, pos, path, BERTH_EINVALID, BERTH_WARNING, fmt, ap);
	va_end(ap);
}

const char *quoted(char *buf, size_t len, const char *s)
{
	size_t o = 0, max = len > 8 ? len - 8 : 0;
	buf[o++] = '"';
	for (; *s && o < max; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\') {
			buf[o++] = '\\';
			buf[o++] = (char)ch;
		} else if (ch < 0x20 || ch == 0x7f) {
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", ch);
		} else {
			buf[o++] = (char)ch;
		}
	}
	if (*s) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o++] = '"';
	buf[o] = '\0';
	return buf;
}

/* ---- typed decoders --------------------------------------------------------- */

int is_null(const berth_node *n)
{
	return n->kind == BERTH_NODE_SCALAR && n->type == BERTH_SCALAR_NULL;
}

int want(dctx *c, const berth_node *n, berth_node_kind kind, const char *what)
{
	if (n->kind == kind)
		return 1;
	report(c, n->pos, BERTH_ETYPE, "must be %s, not %s", what, berth_node_kind_name(n));
	return 0;
}

/* A scalar as text: strings, numbers and booleans keep their spelling. */
static int scalar_text(dctx *c, const berth_node *n, berth_str *out)
{
	if (!want(c, n, BERTH_NODE_SCALAR, "a string"))
		return 0;
	if (strlen(n->u.text) != n->len) {
		report(c, n->pos, BERTH_EINVALID, "must not contain a NUL character");
		return 0;
	}
	out->s = n->u.text;
	out->pos = n->pos;
	return 1;
}

void dec_str(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	scalar_text(c, n, dst);
}

static int parse_int(const char *s, int64_t *v)
{
	char *end;
	if (!((s[0] >= '0' && s[0] <= '9') || s[0] == '-'))
		return -BERTH_ETYPE; /* strtoll would skip leading white space */
	errno = 0;
	long long x = strtoll(s, &end, 10);
	if (*end)
		return -BERTH_ETYPE;
	if (errno == ERANGE)
		return -BERTH_ERANGE;
	*v = x;
	return 0;
}

/* An integer: 1000, or a string of digits ("8877", as seed 001 writes fs_group). */
void dec_int(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	berth_int *out = dst;
	int ret;
	if (n->kind != BERTH_NODE_SCALAR ||
	    (n->type != BERTH_SCALAR_INT && n->type != BERTH_SCALAR_STR)) {
		report(c, n->pos, BERTH_ETYPE, "must be an integer, not %s", berth_node_kind_name(n));
		return;
	}
	if (n->type == BERTH_SCALAR_INT && n->len > 2 && n->u.text[0] == '0' &&
	    (n->u.text[1] == 'x' || n->u.text[1] == 'o')) {
		errno = 0;
		char *end;
		unsigned long long x = strtoull(n->u.text + 2, &end, n->u.text[1] == 'x' ? 16 : 8);
		if (errno == ERANGE || x > INT64_MAX) {
			report(c, n->pos, BERTH_ERANGE, "%s is out of range", n->u.text);
			return;
		}
		out->v = (int64_t)x;
		out->pos = n->pos;
		out->set = true;
		return;
	}
	const char *t = n->u.text;
	if (t[0] == '+')
		t++;
	ret = parse_int(t, &out->v);
	if (ret == -BERTH_ERANGE)
		report(c, n->pos, BERTH_ERANGE, "%s is out of range", QUOTE(n->u.text));
	else if (ret < 0)
		report(c, n->pos, BERTH_ETYPE, "%s is not an integer", QUOTE(n->u.text));
	else {
		out->pos = n->pos;
		out->set = true;
	}
}

void dec_qty(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	berth_qty *out = dst;
	char msg[256];
	if (n->kind != BERTH_NODE_SCALAR || n->type == BERTH_SCALAR_BOOL) {
		report(c, n->pos, BERTH_ETYPE, "must be a quantity such as \"500m\", \"2\" or \"32Gi\", not %s",
		       berth_node_kind_name(n));
		return;
	}
	int ret = berth_quantity_parse_message(&out->q, n->u.text, n->len, msg, sizeof(msg));
	if (ret < 0) {
		report(c, n->pos, (berth_code)-ret, "%s", msg);
		return;
	}
	out->pos = n->pos;
	out->set = true;
}

static void dec_node(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	*(const berth_node **)dst = n;
}

/* Finds the table entry for key, or reports it unknown with a suggestion. */
static const field *lookup(dctx *c, const berth_node *key, const field *fields, size_t nf)
{
	const char *k = key->u.text;
	for (size_t i = 0; i < nf; i++)
		if (fields[i].key[0] == k[0] && strcmp(fields[i].key, k) == 0)
			return &fields[i];
	const char *names[64] = {0}; /* only when the key is unknown */
	size_t nn = 0;
	for (; nn < nf && nn < 64; nn++)
		names[nn] = fields[nn].key;
	const char *hint = berth_suggest(key->u.text, names, nn);
	size_t len = path_key(c, key->u.text);
	if (hint) {
		report(c, key->pos, BERTH_EUNKNOWN, "unknown key %s; did you mean \"%s\"?",
		       QUOTE(key->u.text), hint);
	} else {
		berth_buf allowed = BERTH_BUF_INIT;
		for (size_t i = 0; i < nn; i++)
			berth_buf_printf(&allowed, "%s%s", i ? ", " : "", names[i]);
		report(c, key->pos, BERTH_EUNKNOWN, "unknown key %s (known keys here: %s)",
		       QUOTE(key->u.text), allowed.data ? allowed.data : "");
		berth_buf_release(&allowed);
	}
	path_pop(c, len);
	return NULL;
}

static int key_cmp(const void *a, const void *b)
{
	const berth_node_pair *x = *(const berth_node_pair *const *)a;
	const berth_node_pair *y = *(const berth_node_pair *const *)b;
	size_t n = x->key->len < y->key->len ? x->key->len : y->key->len;
	int r = memcmp(x->key->u.text, y->key->u.text, n);
	if (r)
		return r;
	if (x->key->len != y->key->len)
		return x->key->len < y->key->len ? -1 : 1;
	/* equal keys: document order, so the later one is reported */
	return x < y ? -1 : x > y;
}

static int same_key(const berth_node *a, const berth_node *b)
{
	return a->len == b->len && a->u.text[0] == b->u.text[0] &&
	       memcmp(a->u.text, b->u.text, a->len) == 0;
}

/* Reports every key written twice in map n. */
static void check_duplicate_keys(dctx *c, const berth_node *n)
{
	if (n->len < 2)
		return;
	/* most maps are small: look for a repeat at once, and sort only then */
	if (n->len <= 32) {
		bool repeated = false;
		for (size_t i = 1; i < n->len && !repeated; i++)
			for (size_t j = 0; j < i && !repeated; j++)
				repeated = same_key(n->u.pairs[i].key, n->u.pairs[j].key);
		if (!repeated)
			return;
	}
	const berth_node_pair **v = berth_malloc(n->len * sizeof(*v));
	if (!v) {
		report(c, n->pos, BERTH_ENOMEM, "out of memory");
		return;
	}
	for (size_t i = 0; i < n->len; i++)
		v[i] = &n->u.pairs[i];
	qsort(v, n->len, sizeof(*v), key_cmp);
	for (size_t i = 1; i < n->len; i++) {
		if (same_key(v[i]->key, v[i - 1]->key)) {
			size_t len = path_key(c, v[i]->key->u.text);
			report(c, v[i]->key->pos, BERTH_EDUPLICATE, "key %s given twice (first at line %u)",
			       QUOTE(v[i]->key->u.text), v[i - 1]->key->pos.line);
			path_pop(c, len);
		}
	}
	free(v);
}

void decode_map(dctx *c, const berth_node *n, const field *fields, size_t nf, void *base)
{
	if (!want(c, n, BERTH_NODE_MAP, "a map"))
		return;
	uint64_t seen = 0;
	check_duplicate_keys(c, n);
	for (size_t i = 0; i < n->len; i++) {
		const berth_node *k = n->u.pairs[i].key, *v = n->u.pairs[i].value;
		const field *f = lookup(c, k, fields, nf);
		if (!f)
			continue;
		/* a key given twice is reported once, and only its first value read */
		uint64_t bit = (uint64_t)1 << ((size_t)(f - fields) % 64);
		if (seen & bit)
			continue;
		seen |= bit;
		if (is_null(v))
			continue;
		size_t len = path_key(c, f->key);
		f->fn(c, v, (char *)base + f->off, f->arg);
		path_pop(c, len);
	}
}

/* Allocates an array of n elements of size sz in the arena. */
static void *arena_array(dctx *c, size_t n, size_t sz, berth_pos pos)
{
	void *p = berth_arena_alloc(c->arena, n * sz);
	if (!p)
		report(c, pos, BERTH_ENOMEM, "out of memory");
	return p;
}

void dec_strlist(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	berth_strlist *out = dst;
	if (!want(c, n, BERTH_NODE_SEQ, arg ? (const char *)arg : "a list of strings"))
		return;
	out->pos = n->pos;
	out->set = true;
	if (!(out->items = arena_array(c, n->len, sizeof(*out->items), n->pos)))
		return;
	for (size_t i = 0; i < n->len; i++) {
		size_t len = path_index(c, i);
		if (scalar_text(c, n->u.items[i], &out->items[out->n]))
			out->n++;
		path_pop(c, len);
	}
}

/* ---- key/value lists: node_selector, labels, envs ---------------------------- */

void dec_kvlist(dctx *c, const berth_node *n, void *dst, const void *arg)
{
	const struct kv_arg *ka = arg;
	berth_kvlist *out = dst;
	out->pos = n->pos;
	out->set = true;
	if (n->kind == BERTH_NODE_MAP) {
		/* duplicates are reported by the rules, for maps and lists alike */
		if (!(out->items = arena_array(c, n->len, sizeof(*out->items), n->pos)))
			return;
		for (size_t i = 0; i < n->len; i++) {
			berth_kv *kv = &out->items[out->n];
			const berth_node *v = n->u.pairs[i].value;
			size_t len = path_key(c, n->u.pairs[i].key->u.text);
			kv->key.s = n->u.pairs[i].key->u.text;
			kv->key.pos = kv->pos = n->u.pairs[i].key->pos;
			if (is_null(v)) {
				kv->value.s = "";
				kv->value.pos = v->pos;
				out->n++;
			} else if (scalar_text(c, v, &kv->value)) {
				out->n++;
			}
			path_pop(c, len);
		}
		return;
	}
	if (!ka->allow_list || n->kind != BERTH_NODE_SEQ) {
		report(c, n->pos, BERTH_ETYPE, "must be %s, not %s",
		       ka->allow_list ? (strcmp(ka->key, "name") == 0
					  ? "a list of {name, value} or a map"
					  : "a list of {key, value} or a map")
				      : "a map of strings",
		       berth_node_kind_name(n));
		return;
	}
	const field fields[] = {
		{ka->key, dec_str, offsetof(berth_kv, key), NULL},
		{"value", dec_str, offsetof(berth_kv, value), NULL},
	};
	if (!(out->items = arena_array(c, n->len, sizeof(*out->items), n->pos)))
		return;
	for (size_t i = 0; i < n->len; i++) {
		const berth_node *item = n->u.items[i];
		berth_kv *kv = &out->items[out->n];
		size_t len = path_index(c, i);
		memset(kv, 0, sizeof(*kv));
		kv->pos = item->pos;
		DECODE_MAP(c, item, fields, kv);
		if (item->kind == BERTH_NODE_MAP && !kv->key.s && !berth_node_get(item, ka->key))
			report(c, item->pos, BERTH_EMISSING, "%s is required", QUOTE(ka->key));
		if (!kv->value.s) {
			/* {name: X} alone: an empty value, as Kubernetes reads it */
			kv->value.s = "";
			kv->value.pos = item->pos;
		}
		if (kv->key.s)
			out->n++;
		path_pop(c, len);
	}
}

const struct kv_arg kv_selector = {"key", 1};
const struct kv_arg kv_env = {"name", 1};
const struct kv_arg kv_map = {"key", 0};

/* ---- resources ------------------------------------------------------------------ */

static const field resource_fields[] = {
	{"requests", dec_qty, offsetof(berth_resource, requests), NULL},
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

static const field resources_fields[] = {
	{"cpu", dec_resource, offsetof(berth_resources, cpu), NULL},
	{"mem", dec_resource, offsetof(berth_resources, mem), NULL},
	{"gpu", dec_resource, offsetof(berth_resources, gpu), "gpu"},
	{"disk", dec_resource, offsetof(berth_resources, disk), NULL},
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

static const char *const volume_types[] = {
	[BERTH_VOLUME_PVC] = "persistent_volume_claim",
	[BERTH_VOLUME_EMPTY_DIR] = "empty_dir",
	[BERTH_VOLUME_CONFIG_MAP] = "config_map",
	[BERTH_VOLUME_SECRET] = "secret",
	[BERTH_VOLUME_SHARED] = "shared_volume",
};

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

/* Finds s in names (n entries); reports it with the allowed values if absent. */
int enum_value(dctx *c, const berth_str *s, const char *const *names, size_t n)
{
	berth_buf list = BERTH_BUF_INIT;
	for (size_t i = 0; i < n; i++)
		if (names[i] && strcmp(s->s, names[i]) == 0)
			return (int)i;
	const char *hint = berth_suggest(s->s, names, n);
	for (size_t i = 0; i < n; i++)
		if (names[i])
			berth_buf_printf(&list, "%s%s", list.len ? ", " : "", names[i]);
	if (hint)
		report(c, s->pos, BERTH_EINVALID, "%s is not one of %s; did you mean \"%s\"?", QUOTE(s->s),
		       list.data ? list.data : "", hint);
	else
		report(c, s->pos, BERTH_EINVALID, "%s is not one of %s", QUOTE(s->s),
		       list.data ? list.data : "");
	berth_buf_release(&list);
	return -1;
}

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
			type = enum_value(c, &raw.v.type_name, volume_types, BERTH_ARRAY_SIZE(volume_types));
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
	{"replicas", dec_int, offsetof(berth_spec, replicas), NULL},
	{"min_replicas", dec_int, offsetof(berth_spec, min_replicas), NULL},
	{"max_replicas", dec_int, offsetof(berth_spec, max_replicas), NULL},
	{"service", dec_service, 0, NULL},
	{"labels", dec_kvlist, offsetof(berth_spec, labels), &kv_map},
	{"args", dec_strlist, offsetof(berth_spec, args), "a list of strings, e.g. [--epochs, \"3\"]"},
	{"inputs", dec_map_node, offsetof(berth_spec, inputs), NULL},
	{"timeout", dec_int, offsetof(berth_spec, timeout), NULL},
	{"retries", dec_int, offsetof(berth_spec, retries), NULL},
};

static const char *const action_names[] = {
	[BERTH_ACTION_JOB] = "job",
	[BERTH_ACTION_SERVE] = "serve",
	[BERTH_ACTION_DEPLOY] = "deploy",
	[BERTH_ACTION_CRONJOB] = "cronjob",
};

static const char *const preemption_names[] = {
	[BERTH_PREEMPTION_UNSET] = NULL,
	[BERTH_PREEMPTION_ALLOW] = "allow",
	[BERTH_PREEMPTION_CONSTRAIN] = "constrain",
	[BERTH_PREEMPTION_PREVENT] = "prevent",
	[BERTH_PREEMPTION_NONE] = "none",
};

const char *berth_action_name(berth_action a)
{
	return (size_t)a < BERTH_ARRAY_SIZE(action_names) ? action_names[a] : "?";
}

const char *berth_preemption_name(berth_preemption p)
{
	return (size_t)p < BERTH_ARRAY_SIZE(preemption_names) && preemption_names[p]
		       ? preemption_names[p]
		       : "unset";
}

const char *berth_volume_type_name(berth_volume_type t)
{
	return (size_t)t < BERTH_ARRAY_SIZE(volume_types) ? volume_types[t] : "?";
}

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
		int a = enum_value(c, &s->action_name, action_names, BERTH_ARRAY_SIZE(action_names));
		s->action = a < 0 ? BERTH_ACTION_JOB : (berth_action)a;
		path_pop(c, len);
	}
	if (s->preemption_name.s) {
		size_t len = path_key(c, "preemption_mode");
		int p = enum_value(c, &s->preemption_name, preemption_names, BERTH_ARRAY_SIZE(preemption_names));
		s->preemption_mode = p < 0 ? BERTH_PREEMPTION_UNSET : (berth_preemption)p;
		path_pop(c, len);
	}
}

/* lim: the reader's caps (yaml.h): a request's, or a file's that is only checked. */
static int spec_parse(berth_spec_set **out, const char *name, const char *data, size_t len,
		      const berth_yaml_limits *lim, berth_error **err)
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
		berth_where w = {name, 0, 0, NULL};
		ret = berth_problem_add(err, BERTH_EMISSING, BERTH_ERROR, &w, "%s",
					"holds no run spec (the input is empty)");
		goto fail;
	}
	if (!(set->specs = berth_arena_alloc(set->arena, ndocs * sizeof(*set->specs)))) {
		ret = berth_fail(err, BERTH_ENOMEM, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < ndocs; i++) {
		berth_spec *s = &set->specs[set->n++];
		memset(s, 0, sizeof(*s));
		s->file = name;
		s->doc = i;
		c.path.len = 0;
		if (c.path.data)
			c.path.data[0] = '\0';
		if (!docs[i].root || is_null(docs[i].root)) {
			set->n--; /* an empty document ("---" at the end) holds no run */
			continue;
		}
		decode_spec(&c, docs[i].root, s);
		berth_spec_validate(&c, s);
	}
	berth_buf_release(&c.path);
	if (set->n == 0 && !c.errors) {
		berth_where w = {name, 0, 0, NULL};
		berth_problem_add(err, BERTH_EMISSING, BERTH_ERROR, &w, "%s",
				  "holds no run spec (every document is empty)");
		c.errors++;
	}
	if (err)
		berth_error_sort(*err);
	/* an error object that could not record a warning holds an error */
	if (err && berth_error_errors(*err) && !c.errors)
		c.errors++;
	if (c.errors) {
		ret = err && berth_error_code(*err) ? -(int)berth_error_code(*err)
						    : -(int)(c.first_code ? c.first_code : BERTH_EINVALID);
		if (ret == 0)
			ret = -BERTH_EINVALID;
		goto fail;
	}
	*out = set;
	return 0;
fail:
	berth_buf_release(&c.path);
	berth_spec_set_free(set);
	return ret < 0 ? ret : -BERTH_EINVALID;
}

int berth_spec_parse(berth_spec_set **out, const char *name, const char *data, size_t len,
		     berth_error **err)
{
	return spec_parse(out, name, data, len, &berth_yaml_input_limits, err);
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
			 &berth_yaml_file_limits, err);
	free(data);
	return ret;
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
