/*
 * emit.c - the output tree (emit.h) and its YAML and JSON writers.
 *
 * Why not libfyaml's emitter: it needs its own document tree built node by
 * node through its API, a second copy of every object that costs more than
 * the rendering itself (bench/). What berth writes is a small, known subset
 * (block maps and lists, and scalars), so the writer is short: a string is
 * written plain only when it is unambiguous under both YAML 1.1 and 1.2,
 * else double-quoted with JSON escapes, which YAML reads the same way.
 *
 * Every walk here recurses once per level of maps and lists. The trees come
 * from the reader (at most BERTH_YAML_MAX_DEPTH levels, or a peer's
 * BERTH_YAML_PEER_MAX_DEPTH) inside a few levels of berth's own objects;
 * O_MAX_DEPTH guards against any other source. Indentation costs two bytes
 * a level on every line, so past O_BLOCK_DEPTH levels collections are
 * written on one line: each node then costs at most a fixed number of bytes
 * besides its text, and an output is linear in its tree.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/rodata.h"
#include "render/emit.h"
#include "spec/yaml.h"

static onode *add(obuild *b, onode *parent, const char *key, okind kind)
{
	if (!parent || b->failed)
		return NULL;
	onode *n = berth_arena_alloc(b->arena, sizeof(*n));
	if (!n) {
		b->failed = 1;
		return NULL;
	}
	n->kind = kind;
	n->key = parent->kind == O_MAP ? key : NULL;
	if (parent->last)
		parent->last->next = n;
	else
		parent->first = n;
	parent->last = n;
	return n;
}

onode *o_root(obuild *b, okind kind)
{
	onode *n = b->failed ? NULL : berth_arena_alloc(b->arena, sizeof(*n));
	if (!n)
		b->failed = 1;
	else
		n->kind = kind;
	return n;
}

onode *o_map(obuild *b, onode *parent, const char *key)
{
	return add(b, parent, key, O_MAP);
}

onode *o_seq(obuild *b, onode *parent, const char *key)
{
	return add(b, parent, key, O_SEQ);
}

onode *o_str(obuild *b, onode *parent, const char *key, const char *s)
{
	onode *n = add(b, parent, key, O_STR);
	if (n)
		n->s = s ? s : "";
	return n;
}

onode *o_strf(obuild *b, onode *parent, const char *key, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	va_start(ap, fmt);
	int len = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (len < 0) {
		b->failed = 1;
		return NULL;
	}
	char *s = berth_arena_alloc(b->arena, (size_t)len + 1);
	if (!s) {
		b->failed = 1;
		return NULL;
	}
	if ((size_t)len < sizeof(small)) {
		memcpy(s, small, (size_t)len + 1);
	} else {
		va_start(ap, fmt);
		vsnprintf(s, (size_t)len + 1, fmt, ap);
		va_end(ap);
	}
	return o_str(b, parent, key, s);
}

onode *o_int(obuild *b, onode *parent, const char *key, int64_t v)
{
	onode *n = add(b, parent, key, O_INT);
	if (n)
		n->i = v;
	return n;
}

onode *o_bool(obuild *b, onode *parent, const char *key, int v)
{
	onode *n = add(b, parent, key, O_BOOL);
	if (n)
		n->i = v != 0;
	return n;
}

onode *o_qty(obuild *b, onode *parent, const char *key, const berth_quantity *q)
{
	char buf[BERTH_QUANTITY_STR_MAX];
	berth_quantity_format(q, buf, sizeof(buf));
	const char *s = berth_arena_strdup(b->arena, buf);
	if (!s) {
		b->failed = 1;
		return NULL;
	}
	return o_str(b, parent, key, s);
}

onode *o_get(const onode *m, const char *key)
{
	for (onode *c = m ? m->first : NULL; c; c = c->next)
		if (c->key && strcmp(c->key, key) == 0)
			return c;
	return NULL;
}

onode *o_take(onode *m, const char *key)
{
	onode *prev = NULL;
	for (onode *c = m ? m->first : NULL; c; prev = c, c = c->next) {
		if (!c->key || strcmp(c->key, key))
			continue;
		if (prev)
			prev->next = c->next;
		else
			m->first = c->next;
		if (m->last == c)
			m->last = prev;
		c->next = NULL;
		return c;
	}
	return NULL;
}

static int listed(const char *key, const char *const *keys)
{
	for (size_t i = 0; key && keys && keys[i]; i++)
		if (strcmp(keys[i], key) == 0)
			return 1;
	return 0;
}

/* A tree deeper than O_MAX_DEPTH is not copied: the copy fails. */
static int too_deep(obuild *b, unsigned depth)
{
	if (depth <= O_MAX_DEPTH)
		return 0;
	b->failed = 1;
	return 1;
}

static onode *copy(obuild *b, onode *parent, const char *key, const berth_node *n,
		   const char *const *int_keys, unsigned depth)
{
	onode *o;
	switch (n->kind) {
	case BERTH_NODE_MAP:
		if (too_deep(b, depth))
			return NULL;
		o = o_map(b, parent, key);
		for (size_t i = 0; o && i < n->len; i++)
			copy(b, o, n->u.pairs[i].key->u.text, n->u.pairs[i].value, int_keys, depth + 1);
		return o;
	case BERTH_NODE_SEQ:
		if (too_deep(b, depth))
			return NULL;
		o = o_seq(b, parent, key);
		for (size_t i = 0; o && i < n->len; i++)
			copy(b, o, NULL, n->u.items[i], int_keys, depth + 1);
		return o;
	case BERTH_NODE_SCALAR:
		break;
	}
	if (n->type == BERTH_SCALAR_INT && listed(key, int_keys)) {
		char *end;
		long long v = strtoll(n->u.text, &end, 0);
		if (!*end)
			return o_int(b, parent, key, v);
	}
	return o_str(b, parent, key, n->type == BERTH_SCALAR_NULL ? "" : n->u.text);
}

onode *o_copy(obuild *b, onode *parent, const char *key, const berth_node *n,
	      const char *const *int_keys)
{
	return copy(b, parent, key, n, int_keys, 1);
}

/* t is a number as JSON writes one: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool json_number(const char *t)
{
	const char *c = t;
	if (*c == '-')
		c++;
	if (*c == '0')
		c++;
	else if (*c >= '1' && *c <= '9')
		while (*c >= '0' && *c <= '9')
			c++;
	else
		return false;
	if (*c == '.') {
		if (*++c < '0' || *c > '9')
			return false;
		while (*c >= '0' && *c <= '9')
			c++;
	}
	if (*c == 'e' || *c == 'E') {
		if (*++c == '+' || *c == '-')
			c++;
		if (*c < '0' || *c > '9')
			return false;
		while (*c >= '0' && *c <= '9')
			c++;
	}
	return !*c;
}

static onode *copy_typed(obuild *b, onode *parent, const char *key, const berth_node *n,
			 unsigned depth)
{
	onode *o;
	if (n->kind == BERTH_NODE_MAP) {
		if (too_deep(b, depth))
			return NULL;
		o = o_map(b, parent, key);
		for (size_t i = 0; o && i < n->len; i++)
			copy_typed(b, o, n->u.pairs[i].key->u.text, n->u.pairs[i].value, depth + 1);
		return o;
	}
	if (n->kind == BERTH_NODE_SEQ) {
		if (too_deep(b, depth))
			return NULL;
		o = o_seq(b, parent, key);
		for (size_t i = 0; o && i < n->len; i++)
			copy_typed(b, o, NULL, n->u.items[i], depth + 1);
		return o;
	}
	if (n->type == BERTH_SCALAR_STR)
		return o_str(b, parent, key, n->u.text);
	if (n->type == BERTH_SCALAR_BOOL)
		return o_bool(b, parent, key, n->u.text[0] == 't' || n->u.text[0] == 'T');
	if (n->type == BERTH_SCALAR_NULL) {
		o = add(b, parent, key, O_RAW);
		if (o)
			o->s = "null";
		return o;
	}
	/* numbers: JSON has no octal, hex, .inf, 1. or .5; those stay strings */
	const char *t = n->u.text;
	if (!json_number(t))
		return o_str(b, parent, key, t);
	o = add(b, parent, key, O_RAW);
	if (o)
		o->s = t;
	return o;
}

onode *o_copy_typed(obuild *b, onode *parent, const char *key, const berth_node *n)
{
	return copy_typed(b, parent, key, n, 1);
}

int berth_docs_json(const char *name, const char *data, size_t len, char **out, size_t *outlen,
		    berth_error **err)
{
	*out = NULL;
	*outlen = 0;
	obuild b = {berth_arena_new(), 0};
	if (!b.arena)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	berth_yaml_doc *docs = NULL;
	size_t n = 0;
	int rc = berth_yaml_parse(b.arena, name, data, len, &docs, &n, err);
	if (rc) {
		berth_arena_free(b.arena);
		return rc;
	}
	onode *list = o_root(&b, O_SEQ);
	for (size_t i = 0; i < n; i++) {
		onode *o = docs[i].root ? o_copy_typed(&b, list, NULL, docs[i].root)
					: add(&b, list, NULL, O_RAW);
		if (o && !docs[i].root)
			o->s = "null";
	}
	berth_buf buf = BERTH_BUF_INIT;
	if (!b.failed)
		emit_json(&buf, list, 0, 0);
	berth_buf_puts(&buf, "");
	berth_arena_free(b.arena);
	if (b.failed || buf.failed) {
		berth_buf_release(&buf);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	*outlen = buf.len;
	*out = berth_buf_detach(&buf);
	return 0;
}

/* ---- the writer -------------------------------------------------------------------- */

/* Writes straight into out's buffer, in one pass: the room for what comes
 * is made first (berth_buf_reserve), then the bytes are stored; out->len is
 * set when the writing ends (wr_close). After a failure (out->failed) every
 * write is a no-op. */
typedef struct wr {
	berth_buf *out;
	char *p, *end; /* the next byte's place; the end of the room (the NUL's place kept) */
} wr;

static void wr_open(wr *w, berth_buf *out)
{
	w->out = out;
	w->p = w->end = NULL;
	if (!out->failed && out->data) {
		w->p = out->data + out->len;
		w->end = out->data + out->cap - 1;
	}
}

static void wr_close(wr *w)
{
	berth_buf *b = w->out;
	if (!b->failed && w->p) {
		b->len = (size_t)(w->p - b->data);
		*w->p = '\0';
	}
}

/* Room for n bytes more; 0 after a failure. */
static int wr_grow(wr *w, size_t n)
{
	berth_buf *b = w->out;
	if (b->failed)
		return 0;
	wr_close(w); /* what was written stays a string, if growing fails */
	/* the buffer doubles: growing is rare */
	if (berth_buf_reserve(b, n) < 0) {
		w->p = w->end = NULL;
		return 0;
	}
	w->p = b->data + b->len;
	w->end = b->data + b->cap - 1;
	return 1;
}

static inline int room(wr *w, size_t n)
{
	return (w->p && (size_t)(w->end - w->p) >= n) || wr_grow(w, n);
}

/* n bytes of s to d: most are short (a key, a name), copied by a few
 * overlapping fixed-size moves rather than a call */
static inline void copy_bytes(char *d, const char *s, size_t n)
{
	if (n >= 8 && n <= 16) {
		memcpy(d, s, 8);
		memcpy(d + n - 8, s + n - 8, 8);
	} else if (n >= 4 && n < 8) {
		memcpy(d, s, 4);
		memcpy(d + n - 4, s + n - 4, 4);
	} else if (n < 4) {
		for (size_t i = 0; i < n; i++)
			d[i] = s[i];
	} else {
		memcpy(d, s, n);
	}
}

static inline void put(wr *w, const char *s, size_t n)
{
	if (room(w, n)) {
		copy_bytes(w->p, s, n);
		w->p += n;
	}
}

#define PUT_LIT(w, lit) put((w), (lit), sizeof(lit) - 1)

static inline void put_c(wr *w, char c)
{
	if (room(w, 1))
		*w->p++ = c;
}

static inline void put_indent(wr *w, size_t n)
{
	/* sixteen spaces at a time (most lines are indented less), the last
	 * ones past n overwritten later */
	static const char spaces[16] = "                ";
	if (room(w, n + 16)) {
		for (size_t i = 0; i < n; i += 16)
			memcpy(w->p + i, spaces, 16);
		w->p += n;
	}
}

static void put_int(wr *w, int64_t v)
{
	char buf[24], *e = buf + sizeof(buf), *d = e;
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	do
		*--d = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--d = '-';
	put(w, d, (size_t)(e - d));
}

/* ---- scalars -------------------------------------------------------------------- */

/* What a byte is to the writers: one a plain scalar may hold here (letters,
 * digits, _ . / -), one of a number-like word (digits, . _ + - and e x o b a
 * c d f of either case), one that ends a run of bytes copied as they are in
 * a double-quoted string (NUL, controls, '"', '\\', DEL, and the first bytes
 * of the UTF-8 forms that are escaped: C1 controls, LINE and PARAGRAPH
 * SEPARATOR). One table lookup a byte decides each. */
enum { PLAIN = 1, NUM = 2, ESC = 4 };
static const unsigned char scalar_chars[256] = {
	[0] = ESC, [1] = ESC, [2] = ESC, [3] = ESC, [4] = ESC, [5] = ESC, [6] = ESC, [7] = ESC,
	[8] = ESC, [9] = ESC, [10] = ESC, [11] = ESC, [12] = ESC, [13] = ESC, [14] = ESC, [15] = ESC,
	[16] = ESC, [17] = ESC, [18] = ESC, [19] = ESC, [20] = ESC, [21] = ESC, [22] = ESC,
	[23] = ESC, [24] = ESC, [25] = ESC, [26] = ESC, [27] = ESC, [28] = ESC, [29] = ESC,
	[30] = ESC, [31] = ESC, ['"'] = ESC, ['\\'] = ESC, [0x7f] = ESC, [0xc2] = ESC, [0xe2] = ESC,
	['+'] = NUM, ['-'] = PLAIN | NUM, ['.'] = PLAIN | NUM, ['/'] = PLAIN, ['0'] = PLAIN | NUM,
	['1'] = PLAIN | NUM, ['2'] = PLAIN | NUM, ['3'] = PLAIN | NUM, ['4'] = PLAIN | NUM,
	['5'] = PLAIN | NUM, ['6'] = PLAIN | NUM, ['7'] = PLAIN | NUM, ['8'] = PLAIN | NUM,
	['9'] = PLAIN | NUM, ['A'] = PLAIN | NUM, ['B'] = PLAIN | NUM, ['C'] = PLAIN | NUM,
	['D'] = PLAIN | NUM, ['E'] = PLAIN | NUM, ['F'] = PLAIN | NUM, ['G'] = PLAIN, ['H'] = PLAIN,
	['I'] = PLAIN, ['J'] = PLAIN, ['K'] = PLAIN, ['L'] = PLAIN, ['M'] = PLAIN, ['N'] = PLAIN,
	['O'] = PLAIN | NUM, ['P'] = PLAIN, ['Q'] = PLAIN, ['R'] = PLAIN, ['S'] = PLAIN,
	['T'] = PLAIN, ['U'] = PLAIN, ['V'] = PLAIN, ['W'] = PLAIN, ['X'] = PLAIN | NUM,
	['Y'] = PLAIN, ['Z'] = PLAIN, ['_'] = PLAIN | NUM, ['a'] = PLAIN | NUM, ['b'] = PLAIN | NUM,
	['c'] = PLAIN | NUM, ['d'] = PLAIN | NUM, ['e'] = PLAIN | NUM, ['f'] = PLAIN | NUM,
	['g'] = PLAIN, ['h'] = PLAIN, ['i'] = PLAIN, ['j'] = PLAIN, ['k'] = PLAIN, ['l'] = PLAIN,
	['m'] = PLAIN, ['n'] = PLAIN, ['o'] = PLAIN | NUM, ['p'] = PLAIN, ['q'] = PLAIN,
	['r'] = PLAIN, ['s'] = PLAIN, ['t'] = PLAIN, ['u'] = PLAIN, ['v'] = PLAIN, ['w'] = PLAIN,
	['x'] = PLAIN | NUM, ['y'] = PLAIN, ['z'] = PLAIN,
};

/* s (len bytes) is w (wl letters in lower case), W... or ALL in capitals:
 * the spellings YAML readers give a meaning. */
static int is_word(const char *s, size_t len, const char *w, size_t wl)
{
	if (len != wl)
		return 0;
	if (memcmp(s, w, len) == 0)
		return 1;
	if (s[0] != w[0] - 32)
		return 0;
	if (memcmp(s + 1, w + 1, len - 1) == 0)
		return 1;
	for (size_t i = 1; i < len; i++)
		if (s[i] != w[i] - 32)
			return 0;
	return 1;
}

#define IS_WORD(s, len, lit) is_word((s), (len), (lit), sizeof(lit) - 1)

/* Could a YAML reader take s (len bytes, all PLAIN) for something other
 * than a string? null, booleans of YAML 1.1 and 1.2, numbers. */
static int plain_is_ambiguous(const char *s, size_t len)
{
	if (len == 0 || s[0] == '-' || s[0] == '.' || s[len - 1] == '.')
		return 1;
	if (len <= 5) {
		switch (s[0] | 0x20) {
		case 'n':
			if (IS_WORD(s, len, "null") || IS_WORD(s, len, "no") || IS_WORD(s, len, "n"))
				return 1;
			break;
		case 't':
			if (IS_WORD(s, len, "true"))
				return 1;
			break;
		case 'f':
			if (IS_WORD(s, len, "false"))
				return 1;
			break;
		case 'y':
			if (IS_WORD(s, len, "yes") || IS_WORD(s, len, "y"))
				return 1;
			break;
		case 'o':
			if (IS_WORD(s, len, "on") || IS_WORD(s, len, "off"))
				return 1;
			break;
		default:
			break;
		}
	}
	/* number-like: a digit, then digits with at most e, x, o, b, '.', '_', sign */
	if (s[0] < '0' || s[0] > '9')
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!(scalar_chars[(unsigned char)s[i]] & NUM))
			return 0;
	return 1;
}

static void put_quoted(wr *w, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	put_c(w, '"');
	const unsigned char *run = (const unsigned char *)s, *b = run;
	for (;; b++) {
		while (!(scalar_chars[*b] & ESC))
			b++;
		unsigned char c = *b;
		/* C1 controls (NEL), LINE and PARAGRAPH SEPARATOR: line breaks or
		 * controls to a YAML 1.1 reader (kubectl's folds a NEL to a space) */
		unsigned wide = c == 0xc2 && b[1] >= 0x80 && b[1] < 0xa0 ? b[1]
				: c == 0xe2 && b[1] == 0x80 && (b[2] == 0xa8 || b[2] == 0xa9) ? 0x2000u + b[2] - 0x80 : 0;
		if (c >= 0x80 && !wide)
			continue;
		put(w, (const char *)run, (size_t)(b - run));
		if (!c)
			break;
		run = b + 1;
		if (wide) {
			char u[6] = {'\\', 'u', hex[wide >> 12], hex[(wide >> 8) & 15], hex[(wide >> 4) & 15],
				     hex[wide & 15]};
			put(w, u, 6);
			b += c == 0xc2 ? 1 : 2;
			run = b + 1;
			continue;
		}
		switch (c) {
		case '"': PUT_LIT(w, "\\\""); break;
		case '\\': PUT_LIT(w, "\\\\"); break;
		case '\n': PUT_LIT(w, "\\n"); break;
		case '\t': PUT_LIT(w, "\\t"); break;
		case '\r': PUT_LIT(w, "\\r"); break;
		default: {
			char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
			put(w, u, 6);
		}
		}
	}
	put_c(w, '"');
}

/* Whether s is written plain, and its length then: its bytes are all
 * PLAIN and no reader could take it for another type. */
static inline int plain_len(const char *s, size_t *len)
{
	const unsigned char *u = (const unsigned char *)s;
	while (scalar_chars[*u] & PLAIN)
		u++;
	*len = (size_t)(u - (const unsigned char *)s);
	return !*u && !plain_is_ambiguous(s, *len);
}

/* What plain_len found of the program's own strings (rodata.h), by address:
 * the keys and the fixed values render.c writes (apiVersion, metadata,
 * RuntimeDefault, ...), a few hundred of which every run's objects repeat,
 * never change. A direct-mapped table for each thread (the server renders
 * on several). */
struct known {
	const char *s;
	uint32_t len;
	uint32_t plain;
};
static _Thread_local struct known known[1024];
static _Thread_local const rodata_range *ro; /* rodata(), asked once a thread */

/* A string in YAML: plain when no reader could take it for another type,
 * else double-quoted (JSON escapes, which YAML reads the same way). */
static void put_yaml_str_slow(wr *w, const char *s)
{
	size_t len;
	if (!ro)
		ro = rodata();
	if (rodata_has(ro, s)) {
		/* two places a string may be kept (a few hundred strings in 1,024
		 * places: one place each had some of them take each other's) */
		size_t i = ((uintptr_t)s * UINT64_C(0x9E3779B97F4A7C15)) >> 54;
		struct known *k = &known[i], *o = &known[i ^ 1];
		if (k->s == s) {
			/* found: a string written quoted */
		} else if (o->s == s) {
			k = o;
		} else {
			*o = *k; /* the older one moves to the other place */
			k->plain = (uint32_t)plain_len(s, &len);
			k->len = (uint32_t)len;
			k->s = s;
		}
		if (k->plain)
			put(w, s, k->len);
		else
			put_quoted(w, s);
		return;
	}
	if (plain_len(s, &len))
		put(w, s, len);
	else
		put_quoted(w, s);
}

/* The same, a plain program string found in its first place written here
 * (only program strings are kept there): most strings a tree holds are
 * (every key of berth's objects, their fixed values), and the call above
 * would cost about as much as writing one. */
static inline void put_yaml_str(wr *w, const char *s)
{
	const struct known *k = &known[((uintptr_t)s * UINT64_C(0x9E3779B97F4A7C15)) >> 54];
	if (k->s == s && k->plain)
		put(w, s, k->len);
	else
		put_yaml_str_slow(w, s);
}

static void put_scalar(wr *w, const onode *n, int json)
{
	switch (n->kind) {
	case O_STR:
		if (json)
			put_quoted(w, n->s);
		else
			put_yaml_str(w, n->s);
		break;
	case O_INT:
		put_int(w, n->i);
		break;
	case O_BOOL:
		if (n->i)
			PUT_LIT(w, "true");
		else
			PUT_LIT(w, "false");
		break;
	case O_RAW:
		put(w, n->s, strlen(n->s));
		break;
	default:
		break;
	}
}

/* ---- YAML ------------------------------------------------------------------------ */

/* How a collection is written: JSON on lines indented by level, JSON on one
 * line, or a YAML flow collection (JSON with a space after ':' and ',', which
 * YAML 1.1 readers need). */
enum style { PRETTY, COMPACT, FLOW };

static void json_value(wr *w, const onode *n, size_t ind, enum style st, unsigned depth);

/* A tree deeper than O_MAX_DEPTH is not written: the output fails. */
static int too_deep_out(wr *w, unsigned depth)
{
	if (depth <= O_MAX_DEPTH)
		return 0;
	if (!w->out->failed) {
		wr_close(w);
		w->out->failed = -BERTH_ETOOBIG;
		w->p = w->end = NULL;
	}
	return 1;
}

static void yaml_block(wr *w, const onode *n, size_t ind, int inline_first, unsigned depth);

/* What follows "key:" or "- ": a scalar, an empty collection, a block, or
 * past O_BLOCK_DEPTH levels a flow collection. v is at level depth. */
static void yaml_value(wr *w, const onode *v, size_t ind, int in_seq, unsigned depth)
{
	if (v->kind != O_MAP && v->kind != O_SEQ) {
		put_c(w, ' ');
		put_scalar(w, v, 0);
		put_c(w, '\n');
	} else if (!v->first) {
		if (v->kind == O_MAP)
			PUT_LIT(w, " {}\n");
		else
			PUT_LIT(w, " []\n");
	} else if (depth > O_BLOCK_DEPTH) {
		put_c(w, ' ');
		json_value(w, v, 0, FLOW, depth);
		put_c(w, '\n');
	} else if (in_seq && v->kind == O_MAP) {
		put_c(w, ' ');
		yaml_block(w, v, ind + 2, 1, depth);
	} else {
		put_c(w, '\n');
		/* a list under a key sits at the key's indentation, as kubectl writes it */
		yaml_block(w, v, v->kind == O_SEQ && !in_seq ? ind : ind + 2, 0, depth);
	}
}

static void yaml_block(wr *w, const onode *n, size_t ind, int inline_first, unsigned depth)
{
	if (too_deep_out(w, depth))
		return;
	int map = n->kind == O_MAP;
	for (const onode *c = n->first; c; c = c->next) {
		if (!inline_first || c != n->first)
			put_indent(w, ind);
		if (map) {
			put_yaml_str(w, c->key);
			put_c(w, ':');
		} else {
			put_c(w, '-');
		}
		/* a string, the most common value, is written here rather than by
		 * yaml_value and put_scalar: three calls fewer a line */
		if (c->kind == O_STR) {
			put_c(w, ' ');
			put_yaml_str(w, c->s);
			put_c(w, '\n');
		} else {
			yaml_value(w, c, ind, !map, depth + 1);
		}
	}
}

void emit_yaml(berth_buf *out, const onode *n)
{
	wr w;
	wr_open(&w, out);
	if (n->kind == O_MAP || n->kind == O_SEQ) {
		if (n->first)
			yaml_block(&w, n, 0, 0, 1);
		else if (n->kind == O_MAP)
			PUT_LIT(&w, "{}\n");
		else
			PUT_LIT(&w, "[]\n");
	} else {
		put_scalar(&w, n, 0);
		put_c(&w, '\n');
	}
	wr_close(&w);
}

/* ---- JSON ------------------------------------------------------------------------ */

/* n is at level depth (the root: 1); past O_BLOCK_DEPTH, PRETTY is COMPACT. */
static void json_value(wr *w, const onode *n, size_t ind, enum style st, unsigned depth)
{
	if (n->kind != O_MAP && n->kind != O_SEQ) {
		put_scalar(w, n, 1);
		return;
	}
	if (too_deep_out(w, depth))
		return;
	if (st == PRETTY && depth > O_BLOCK_DEPTH)
		st = COMPACT;
	char open = n->kind == O_MAP ? '{' : '[', close = n->kind == O_MAP ? '}' : ']';
	put_c(w, open);
	if (!n->first) {
		put_c(w, close);
		return;
	}
	for (const onode *c = n->first; c; c = c->next) {
		if (st == PRETTY) {
			put_c(w, '\n');
			put_indent(w, ind + 2);
		}
		if (n->kind == O_MAP) {
			put_quoted(w, c->key);
			if (st == COMPACT)
				put_c(w, ':');
			else
				PUT_LIT(w, ": ");
		}
		json_value(w, c, ind + 2, st, depth + 1);
		if (c->next) {
			if (st == FLOW)
				PUT_LIT(w, ", ");
			else
				put_c(w, ',');
		}
	}
	if (st == PRETTY) {
		put_c(w, '\n');
		put_indent(w, ind);
	}
	put_c(w, close);
}

void emit_json(berth_buf *out, const onode *n, int ind, int pretty)
{
	wr w;
	wr_open(&w, out);
	json_value(&w, n, ind > 0 ? (size_t)ind : 0, pretty ? PRETTY : COMPACT, 1);
	wr_close(&w);
}

onode *o_time(obuild *b, onode *parent, const char *key, int64_t ms)
{
	char buf[48];
	if (!ms)
		return NULL;
	berth_format_time(buf, sizeof(buf), ms);
	return o_strf(b, parent, key, "%s", buf);
}
