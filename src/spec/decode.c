/*
 * decode.c - the machinery of table-driven decoding (spec_internal.h), shared
 * by the run spec (spec.c), its rules (validate.c) and the policy (policy.c):
 * key paths, problems at their place, typed decoders, maps walked against a
 * table, and the names of the spec's enums.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/names.h"
#include "spec/spec_internal.h"
#include "spec/yaml.h"

/* ---- context helpers ------------------------------------------------------ */

/* The characters of a key written after a dot (others go in brackets). */
static const unsigned char key_chars[256] = {
	['-'] = 1, ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1,
	['7'] = 1, ['8'] = 1, ['9'] = 1, ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1,
	['F'] = 1, ['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1,
	['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1, ['U'] = 1,
	['V'] = 1, ['W'] = 1, ['X'] = 1, ['Y'] = 1, ['Z'] = 1, ['_'] = 1, ['a'] = 1, ['b'] = 1,
	['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1,
	['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1,
	['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1,
};

struct path_seg {
	const char *key; /* NULL: an index */
	size_t index;
};

static size_t push(dctx *c, const char *key, size_t index)
{
	size_t mark = c->nsegs;
	if (c->nsegs == c->segs_cap) {
		size_t cap = c->segs_cap ? c->segs_cap * 2 : 16;
		struct path_seg *s = berth_realloc(c->segs, cap * sizeof(*s));
		if (!s)
			return mark; /* out of memory: the path lacks this part */
		c->segs = s;
		c->segs_cap = cap;
	}
	c->segs[c->nsegs++] = (struct path_seg){key, index};
	return mark;
}

/* A path is pushed for every key read, and made into text only for a
 * problem: a push is two stores. */
size_t path_key(dctx *c, const char *key)
{
	return push(c, key, SIZE_MAX);
}

size_t path_index(dctx *c, size_t i)
{
	return push(c, NULL, i);
}

void path_pop(dctx *c, size_t mark)
{
	if (mark <= c->nsegs)
		c->nsegs = mark;
}

void path_reset(dctx *c)
{
	c->nsegs = 0;
}

void path_release(dctx *c)
{
	berth_buf_release(&c->path);
	free(c->segs);
	c->segs = NULL;
	c->nsegs = c->segs_cap = 0;
}

/* i in decimal, written backwards from end; returns its first digit */
static char *decimal(char *end, size_t i)
{
	do
		*--end = (char)('0' + i % 10);
	while (i /= 10);
	return end;
}

const char *path_text(dctx *c)
{
	berth_buf *b = &c->path;
	b->len = 0;
	b->failed = 0;
	if (b->data)
		b->data[0] = '\0';
	for (size_t k = 0; k < c->nsegs; k++) {
		const char *key = c->segs[k].key;
		if (!key) {
			char num[24], *d = decimal(num + sizeof(num) - 1, c->segs[k].index);
			num[sizeof(num) - 1] = ']';
			*--d = '[';
			berth_buf_append(b, d, (size_t)(num + sizeof(num) - d));
			continue;
		}
		size_t n = 0;
		while (key_chars[(unsigned char)key[n]])
			n++;
		if (n && !key[n]) {
			if (b->len)
				berth_buf_append(b, ".", 1);
			berth_buf_append(b, key, n);
		} else {
			berth_buf_printf(b, "[%s]", QUOTE(key));
		}
	}
	return b->data;
}

const char *path_make(char *buf, size_t n, const char *head, size_t i, const char *tail)
{
	char num[24], *d = num + sizeof(num);
	size_t o = 0;
	if (i != SIZE_MAX) {
		*--d = ']';
		d = decimal(d, i);
		*--d = '[';
	}
	const char *part[3] = {head, d, tail};
	size_t plen[3] = {strlen(head), (size_t)(num + sizeof(num) - d), strlen(tail)};
	for (int k = 0; k < 3 && n; k++) {
		size_t m = plen[k] < n - 1 - o ? plen[k] : n - 1 - o;
		memcpy(buf + o, part[k], m);
		o += m;
	}
	if (n)
		buf[o] = '\0';
	return buf;
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
	vreport(c, pos, path_text(c), code, BERTH_ERROR, fmt, ap);
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
int scalar_text(dctx *c, const berth_node *n, berth_str *out)
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
	out->text = berth_arena_strndup(c->arena, n->u.text, n->len); /* NULL: only unquoted */
	out->pos = n->pos;
	out->set = true;
}

void dec_node(dctx *c, const berth_node *n, void *dst, const void *arg)
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
void check_duplicate_keys(dctx *c, const berth_node *n)
{
	if (n->len < 2)
		return;
	/* most maps have no repeat: a key's length and first and last bytes,
	 * one bit of 256 for each key, say so unless two keys share a bit */
	if (n->len > 4 && n->len <= 32) {
		uint64_t bits[4] = {0, 0, 0, 0};
		bool shared = false;
		for (size_t i = 0; i < n->len && !shared; i++) {
			const berth_node *k = n->u.pairs[i].key;
			unsigned h = (unsigned)(k->len * 31 + (unsigned char)k->u.text[0] * 7 +
						(k->len ? (unsigned char)k->u.text[k->len - 1] : 0)) & 255;
			uint64_t bit = (uint64_t)1 << (h & 63);
			shared = (bits[h >> 6] & bit) != 0;
			bits[h >> 6] |= bit;
		}
		if (!shared)
			return;
	}
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
void *arena_array(dctx *c, size_t n, size_t sz, berth_pos pos)
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
	out->n = 0; /* a list written replaces one there (a project's overlay over the policy's) */
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
	out->n = 0; /* as dec_strlist */
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

/* ---- the names of the spec's enums ---------------------------------------------- */

const char *const spec_volume_types[BERTH_VOLUME_SHARED + 1] = {
	[BERTH_VOLUME_PVC] = "persistent_volume_claim",
	[BERTH_VOLUME_EMPTY_DIR] = "empty_dir",
	[BERTH_VOLUME_CONFIG_MAP] = "config_map",
	[BERTH_VOLUME_SECRET] = "secret",
	[BERTH_VOLUME_SHARED] = "shared_volume",
};

const char *const spec_action_names[BERTH_ACTION_CRONJOB + 1] = {
	[BERTH_ACTION_JOB] = "job",
	[BERTH_ACTION_SERVE] = "serve",
	[BERTH_ACTION_DEPLOY] = "deploy",
	[BERTH_ACTION_CRONJOB] = "cronjob",
};

const char *const spec_preemption_names[BERTH_PREEMPTION_NONE + 1] = {
	[BERTH_PREEMPTION_UNSET] = NULL,
	[BERTH_PREEMPTION_ALLOW] = "allow",
	[BERTH_PREEMPTION_CONSTRAIN] = "constrain",
	[BERTH_PREEMPTION_PREVENT] = "prevent",
	[BERTH_PREEMPTION_NONE] = "none",
};

/* volume_mode, as MLRun's UI offers it: "Auto (using auto-mount), Manual or None" (seed 002) */
const char *const spec_volume_modes[3] = {"auto", "manual", "none"};

const char *berth_action_name(berth_action a)
{
	return (size_t)a < BERTH_ARRAY_SIZE(spec_action_names) ? spec_action_names[a] : "?";
}

const char *berth_preemption_name(berth_preemption p)
{
	return (size_t)p < BERTH_ARRAY_SIZE(spec_preemption_names) && spec_preemption_names[p]
		       ? spec_preemption_names[p]
		       : "unset";
}

const char *berth_volume_type_name(berth_volume_type t)
{
	return (size_t)t < BERTH_ARRAY_SIZE(spec_volume_types) ? spec_volume_types[t] : "?";
}

