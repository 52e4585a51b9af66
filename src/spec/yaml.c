/*
 * yaml.c - libfyaml's event stream into berth_node trees.
 *
 * The event API is used rather than libfyaml's documents so that a spec is
 * parsed straight into the arena that owns it, once. Types of plain scalars
 * are resolved with the YAML 1.2 core schema; aliases share the anchored
 * subtree and are counted as expanded against the caps of yaml.h.
 *
 * Nothing here recurses: open maps and lists are a stack of frames, so the
 * depth cap is checked as each one opens. libfyaml's event parser keeps its
 * own state on the heap and applies no depth limit: its limit of 64
 * (fy_depth_limit(), FYPCF_DISABLE_DEPTH_LIMIT) is checked only where it
 * loads a document tree, which berth does not use. So the cap is berth's,
 * the same for YAML and JSON.
 */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include <libfyaml.h>

#include "base/internal.h"
#include "spec/yaml.h"

struct frame {
	berth_node_kind kind;
	berth_pos pos;
	const char *anchor;
	size_t anchor_len;
	size_t first;    /* index of its first child in the child stack */
	size_t text0;    /* the builder's text count when it opened */
	unsigned height; /* levels of maps and lists below it, aliases expanded */
};

struct anchor {
	struct anchor *next;
	const char *name;
	size_t len;
	const berth_node *node;
	size_t text;     /* bytes of scalar text in node, aliases expanded */
	unsigned height; /* levels of maps and lists in node (0: a scalar) */
};

struct builder {
	berth_arena *arena;
	const char *name;
	const berth_yaml_limits *lim;
	size_t nodes, text; /* of the whole input so far, aliases expanded */
	/* position offset when parsing a JSON value that follows another */
	uint32_t line0, col0;
	struct frame *frames;
	size_t nframes, frames_cap;
	const berth_node **kids;
	size_t nkids, kids_cap;
	struct anchor *anchors;
	size_t nanchors;
	berth_yaml_doc *docs;
	size_t ndocs, docs_cap;
	berth_error **err;
	int failed;
	int peer; /* a peer's JSON reply: NUL in strings is kept (cut where read) */
	const berth_yaml_each *each; /* documents handed over one at a time */
	uintptr_t in_lo, in_hi;      /* the input of this pass (checked: no NUL in it) */
	berth_arena_mark doc_mark;   /* the arena when the document started */
};

static berth_pos mark_pos(const struct builder *b, const struct fy_mark *m)
{
	berth_pos p = {0, 0};
	if (!m)
		return p;
	p.line = (uint32_t)m->line + 1 + b->line0;
	p.column = (uint32_t)m->column + 1 + (m->line == 0 ? b->col0 : 0);
	return p;
}

BERTH_PRINTF(3, 4) __attribute__((cold, noinline)) static int syntax(struct builder *b, berth_pos pos, const char *fmt, ...)
{
	va_list ap;
	int ret;
	berth_where w = {b->name, pos.line, pos.column, NULL};
	b->failed = 1;
	va_start(ap, fmt);
	ret = berth_problem_vadd(b->err, BERTH_ESYNTAX, BERTH_ERROR, &w, fmt, ap);
	va_end(ap);
	return ret;
}

/* An input over one of the caps. */
BERTH_PRINTF(3, 4) __attribute__((cold, noinline)) static int too_big(struct builder *b, berth_pos pos, const char *fmt, ...)
{
	va_list ap;
	berth_where w = {b->name, pos.line, pos.column, NULL};
	b->failed = 1;
	va_start(ap, fmt);
	berth_problem_vadd(b->err, BERTH_ETOOBIG, BERTH_ERROR, &w, fmt, ap);
	va_end(ap);
	return -BERTH_ETOOBIG;
}

/* Counts n nodes and text bytes more, aliases expanded, against the caps. */
static inline int count(struct builder *b, berth_pos pos, size_t nodes, size_t text)
{
	b->nodes += nodes;
	b->text += text;
	if (b->nodes > b->lim->nodes)
		return too_big(b, pos, "input too large: more than %zu nodes once aliases are expanded",
			       b->lim->nodes);
	if (b->text > b->lim->text)
		return too_big(b, pos, "input too large: more than %zu bytes of text once aliases are "
			       "expanded", b->lim->text);
	return 0;
}

/* A child of height h (0: a scalar) goes in the open collection, if any. */
static inline int nest(struct builder *b, berth_pos pos, unsigned h, int alias)
{
	if (b->nframes == 0)
		return 0;
	if (b->nframes + h > b->lim->depth)
		return too_big(b, pos, "nesting deeper than %u levels%s", b->lim->depth,
			       alias ? " once aliases are expanded" : "");
	struct frame *top = &b->frames[b->nframes - 1];
	if (top->height < h)
		top->height = h;
	return 0;
}

static int nomem(struct builder *b)
{
	b->failed = 1;
	return berth_fail(b->err, BERTH_ENOMEM, "out of memory");
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap * 2 : 16;
	while (n < need)
		n *= 2;
	void *q = berth_realloc(*p, n * size);
	if (!q)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

/* s (n > 0 bytes) is all digits of base 8, 10 or 16 */
static int is_digits(const char *s, size_t n, int base)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		int ok = base == 8	? c >= '0' && c <= '7'
			 : base == 10	? c >= '0' && c <= '9'
					: (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
		if (!ok)
			return 0;
	}
	return 1;
}

static int eq(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

/* YAML 1.2 core schema (https://yaml.org/spec/1.2.2/#1032-tag-resolution). */
static berth_scalar_type resolve_plain(const char *s, size_t n)
{
	if (n == 0)
		return BERTH_SCALAR_NULL;
	/* most plain scalars are words: only these first characters start
	 * anything else */
	switch (s[0]) {
	case '~': case 'n': case 'N': case 't': case 'T': case 'f': case 'F': case '+': case '-':
	case '.': case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7':
	case '8': case '9':
		break;
	default:
		return BERTH_SCALAR_STR;
	}
	if (eq(s, n, "~") || eq(s, n, "null") || eq(s, n, "Null") || eq(s, n, "NULL"))
		return BERTH_SCALAR_NULL;
	if (eq(s, n, "true") || eq(s, n, "True") || eq(s, n, "TRUE") || eq(s, n, "false") ||
	    eq(s, n, "False") || eq(s, n, "FALSE"))
		return BERTH_SCALAR_BOOL;
	const char *d = s;
	size_t dn = n;
	if (*d == '-' || *d == '+')
		d++, dn--;
	if (is_digits(d, dn, 10))
		return BERTH_SCALAR_INT;
	if (n > 2 && s[0] == '0' && s[1] == 'o' && is_digits(s + 2, n - 2, 8))
		return BERTH_SCALAR_INT;
	if (n > 2 && s[0] == '0' && s[1] == 'x' && is_digits(s + 2, n - 2, 16))
		return BERTH_SCALAR_INT;
	if (eq(d, dn, ".inf") || eq(d, dn, ".Inf") || eq(d, dn, ".INF") || eq(s, n, ".nan") ||
	    eq(s, n, ".NaN") || eq(s, n, ".NAN"))
		return BERTH_SCALAR_FLOAT;
	/* [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )? */
	size_t i = 0, int_digits = 0, frac_digits = 0;
	while (i < dn && d[i] >= '0' && d[i] <= '9')
		i++, int_digits++;
	if (i < dn && d[i] == '.') {
		i++;
		while (i < dn && d[i] >= '0' && d[i] <= '9')
			i++, frac_digits++;
	}
	if (int_digits + frac_digits == 0 || (int_digits == 0 && frac_digits == 0))
		return BERTH_SCALAR_STR;
	if (i < dn && (d[i] == 'e' || d[i] == 'E')) {
		i++;
		if (i < dn && (d[i] == '-' || d[i] == '+'))
			i++;
		size_t e = 0;
		while (i < dn && d[i] >= '0' && d[i] <= '9')
			i++, e++;
		if (!e)
			return BERTH_SCALAR_STR;
	}
	return i == dn ? BERTH_SCALAR_FLOAT : BERTH_SCALAR_STR;
}

static int tag_is(const char *t, size_t n, const char *shortname)
{
	char full[64];
	snprintf(full, sizeof(full), "tag:yaml.org,2002:%s", shortname);
	if (eq(t, n, full))
		return 1;
	return n == strlen(shortname) + 2 && t[0] == '!' && t[1] == '!' &&
	       memcmp(t + 2, shortname, n - 2) == 0;
}

/* Adds a finished node: to its parent's children, or as the document root.
 * text and height are those of n, aliases expanded, for an anchor. */
static int emit_slow(struct builder *b, const berth_node *n, const char *anchor, size_t anchor_len,
		     size_t text, unsigned height)
{
	if (anchor) {
		if (b->nanchors >= BERTH_YAML_MAX_ANCHORS)
			return too_big(b, n->pos, "too many anchors (at most %u)", BERTH_YAML_MAX_ANCHORS);
		struct anchor *a = berth_arena_alloc(b->arena, sizeof(*a));
		if (!a)
			return nomem(b);
		a->name = anchor;
		a->len = anchor_len;
		a->node = n;
		a->text = text;
		a->height = height;
		a->next = b->anchors;
		b->anchors = a;
		b->nanchors++;
	}
	if (b->nframes == 0) {
		berth_yaml_doc d = {n, n->pos};
		if (b->each) {
			/* handed over, then its memory is the next one's */
			b->each->doc(b->each->arg, &d, b->ndocs++);
			berth_arena_release(b->arena, b->doc_mark);
			return 0;
		}
		if (grow((void **)&b->docs, &b->docs_cap, b->ndocs + 1, sizeof(*b->docs)))
			return nomem(b);
		b->docs[b->ndocs++] = d;
		return 0;
	}
	if (grow((void **)&b->kids, &b->kids_cap, b->nkids + 1, sizeof(*b->kids)))
		return nomem(b);
	b->kids[b->nkids++] = n;
	return 0;
}

/* The same, inline for the most nodes: no anchor, a child of an open
 * collection whose stack has room. */
static inline int emit(struct builder *b, const berth_node *n, const char *anchor,
		       size_t anchor_len, size_t text, unsigned height)
{
	if (anchor || b->nframes == 0 || b->nkids >= b->kids_cap)
		return emit_slow(b, n, anchor, anchor_len, text, height);
	b->kids[b->nkids++] = n;
	return 0;
}

static const char *anchor_of(struct builder *b, struct fy_token *tok, size_t *len)
{
	const char *a = fy_token_get_text(tok, len);
	return berth_arena_strndup(b->arena, a ? a : "", a ? *len : 0);
}

static int bad_tag(struct builder *b, berth_pos pos, const char *t, size_t tlen)
{
	char *tag = berth_strndup(t ? t : "", t ? tlen : 0);
	syntax(b, pos, "unsupported tag \"%s\" (berth reads plain YAML; !!str forces a string)",
	       tag ? tag : "?");
	free(tag);
	return -BERTH_ESYNTAX;
}

static int on_scalar(struct builder *b, struct fy_event *e)
{
	struct fy_token *tok = e->scalar.value;
	size_t len = 0, alen = 0, tlen = 0;
	const char *text = fy_token_get_text(tok, &len);
	const char *anchor = NULL;
	berth_node *n = berth_arena_alloc(b->arena, sizeof(*n));
	if (!n)
		return nomem(b);
	if (!text)
		text = "";
	n->kind = BERTH_NODE_SCALAR;
	n->pos = mark_pos(b, fy_event_start_mark(e));
	n->len = len;
	n->weight = 1;
	if (count(b, n->pos, 1, len) < 0 || nest(b, n->pos, 0, 0) < 0)
		return -BERTH_ETOOBIG;
	/* a "\0" or "\u0000" escape: berth's strings end at NUL, so the text
	 * would be cut there; refused rather than read as something else */
	uintptr_t at = (uintptr_t)text;
	if (!b->peer && (at < b->in_lo || at >= b->in_hi) && memchr(text, '\0', len))
		return syntax(b, n->pos, "%s",
			      "a NUL character (\\0, \\u0000) is not allowed in a value");
	if (!(n->u.text = berth_arena_strndup(b->arena, text, len)))
		return nomem(b);
	if (fy_token_scalar_style(tok) != FYSS_PLAIN)
		n->type = BERTH_SCALAR_STR;
	else
		n->type = resolve_plain(text, len);
	if (e->scalar.tag) {
		const char *t = fy_token_get_text(e->scalar.tag, &tlen);
		if (t && (tag_is(t, tlen, "str") || eq(t, tlen, "!")))
			n->type = BERTH_SCALAR_STR;
		else if (!t || !((tag_is(t, tlen, "null") && n->type == BERTH_SCALAR_NULL) ||
				 (tag_is(t, tlen, "bool") && n->type == BERTH_SCALAR_BOOL) ||
				 (tag_is(t, tlen, "int") && n->type == BERTH_SCALAR_INT) ||
				 (tag_is(t, tlen, "float") && n->type == BERTH_SCALAR_FLOAT)))
			return bad_tag(b, n->pos, t, tlen);
	}
	if (e->scalar.anchor && !(anchor = anchor_of(b, e->scalar.anchor, &alen)))
		return nomem(b);
	return emit(b, n, anchor, alen, len, 0);
}

static int on_alias(struct builder *b, struct fy_event *e)
{
	size_t len = 0;
	const char *name = fy_token_get_text(e->alias.anchor, &len);
	berth_pos pos = mark_pos(b, fy_event_start_mark(e));
	for (struct anchor *a = b->anchors; a; a = a->next)
		if (name && a->len == len && memcmp(a->name, name, len) == 0) {
			if (count(b, pos, a->node->weight, a->text) < 0 ||
			    nest(b, pos, a->height, 1) < 0)
				return -BERTH_ETOOBIG;
			return emit(b, a->node, NULL, 0, 0, 0);
		}
	char *s = berth_strndup(name ? name : "", name ? len : 0);
	syntax(b, pos, "unknown alias \"*%s\"", s ? s : "?");
	free(s);
	return -BERTH_ESYNTAX;
}

static int on_start(struct builder *b, struct fy_event *e, berth_node_kind kind)
{
	struct fy_token *anchor = kind == BERTH_NODE_MAP ? e->mapping_start.anchor : e->sequence_start.anchor;
	struct fy_token *tag = kind == BERTH_NODE_MAP ? e->mapping_start.tag : e->sequence_start.tag;
	struct frame *f;
	berth_pos pos = mark_pos(b, fy_event_start_mark(e));

	if (tag) {
		size_t tlen = 0;
		const char *t = fy_token_get_text(tag, &tlen);
		if (!t || !tag_is(t, tlen, kind == BERTH_NODE_MAP ? "map" : "seq"))
			return bad_tag(b, pos, t, tlen);
	}
	/* refused as it opens: nothing deeper is read */
	if (b->nframes >= b->lim->depth)
		return too_big(b, pos, "nesting deeper than %u levels", b->lim->depth);
	if (count(b, pos, 1, 0) < 0)
		return -BERTH_ETOOBIG;
	if (grow((void **)&b->frames, &b->frames_cap, b->nframes + 1, sizeof(*b->frames)))
		return nomem(b);
	f = &b->frames[b->nframes++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->pos = pos;
	f->first = b->nkids;
	f->text0 = b->text;
	if (anchor && !(f->anchor = anchor_of(b, anchor, &f->anchor_len)))
		return nomem(b);
	return 0;
}

static int on_end(struct builder *b)
{
	struct frame f = b->frames[--b->nframes];
	size_t n = b->nkids - f.first;
	const berth_node **kids = n ? b->kids + f.first : NULL;
	berth_node *node = berth_arena_alloc(b->arena, sizeof(*node));
	size_t weight = 1;

	if (!node)
		return nomem(b);
	node->kind = f.kind;
	node->pos = f.pos;
	/* at most lim->nodes: every node was counted as it came */
	for (size_t i = 0; i < n; i++)
		weight += kids[i]->weight;
	node->weight = weight;
	if (f.kind == BERTH_NODE_SEQ) {
		const berth_node **items = berth_arena_alloc(b->arena, n * sizeof(*items));
		if (!items)
			return nomem(b);
		if (n)
			memcpy(items, kids, n * sizeof(*items));
		node->len = n;
		node->u.items = items;
	} else {
		berth_node_pair *pairs = berth_arena_alloc(b->arena, n / 2 * sizeof(*pairs));
		if (!pairs)
			return nomem(b);
		for (size_t i = 0; i + 1 < n; i += 2) {
			if (kids[i]->kind != BERTH_NODE_SCALAR)
				return syntax(b, kids[i]->pos, "%s", "a key must be a plain value, not a map or a list");
			pairs[i / 2].key = kids[i];
			pairs[i / 2].value = kids[i + 1];
		}
		node->len = n / 2;
		node->u.pairs = pairs;
	}
	b->nkids = f.first;
	if (b->nframes > 0 && b->frames[b->nframes - 1].height < f.height + 1)
		b->frames[b->nframes - 1].height = f.height + 1;
	return emit(b, node, f.anchor, f.anchor_len, b->text - f.text0, f.height + 1);
}

static int on_event(struct builder *b, struct fy_event *e)
{
	switch (e->type) {
	case FYET_SCALAR:
		return on_scalar(b, e);
	case FYET_ALIAS:
		return on_alias(b, e);
	case FYET_MAPPING_START:
		return on_start(b, e, BERTH_NODE_MAP);
	case FYET_SEQUENCE_START:
		return on_start(b, e, BERTH_NODE_SEQ);
	case FYET_MAPPING_END:
	case FYET_SEQUENCE_END:
		return on_end(b);
	case FYET_DOCUMENT_START:
		/* refused as it starts: nothing of it is read */
		if (b->ndocs >= b->lim->docs) {
			berth_pos pos = mark_pos(b, fy_event_start_mark(e));
			if (!pos.line) /* a JSON value: where parse_json started this pass */
				pos = (berth_pos){b->line0 + 1, b->col0 + 1};
			return too_big(b, pos, "more than %zu documents in one input: split it",
				       b->lim->docs);
		}
		b->anchors = NULL; /* anchors do not cross documents */
		b->nanchors = 0;
		b->doc_mark = berth_arena_save(b->arena);
		return 0;
	default:
		return 0;
	}
}

/* Is the syntax error a comma after a quoted scalar, ending its line? */
static size_t stray_comma(const char *data, size_t len, struct fy_diag_error *de)
{
	if (!de->fyt || !de->msg || strncmp(de->msg, "invalid trailing content after", 30) != 0)
		return SIZE_MAX;
	const struct fy_mark *m = fy_token_start_mark(de->fyt);
	if (!m || m->input_pos >= len || data[m->input_pos] != ',')
		return SIZE_MAX;
	for (size_t i = m->input_pos + 1; i < len && data[i] != '\n' && data[i] != '\r'; i++) {
		if (data[i] == '#')
			break;
		if (data[i] != ' ' && data[i] != '\t')
			return SIZE_MAX;
	}
	return m->input_pos;
}

struct pass {
	int json;
	size_t comma;       /* where a stray comma was found, or SIZE_MAX */
	berth_pos comma_pos;
	size_t consumed;    /* JSON: bytes of input used by the documents read */
	int framed;         /* JSON: the input is one value, cut by json_value_end */
	int guess;          /* JSON: the input is the rest of the value's line (parse_json) */
};

/* parse_pass: a guessed cut was wrong (the value is not all of its line) */
#define CUT_WRONG 1

/* One libfyaml parser (and its diagnostics) for a whole input: a pass over
 * it, or over each JSON value of a stream of them, takes the same parser
 * rather than making another (making and destroying one costs more than
 * parsing a spec). A parser reads the inputs it is given one after the
 * other, each its own stream: one whose last stream ended cleanly (no
 * error) takes the next input as it is, as one given several files does;
 * resetting it would build its document state a second time (default tags
 * made with snprintf, each in a malloc'd input), which the stream's start
 * builds anyway: 11,000 instructions a JSON value. After a stream error it
 * is reset. libfyaml 0.7.12 resets a parser only at the end of a stream (in
 * the middle of one it refuses, or frees twice): a pass that stops before
 * the end leaves it dirty, and the next pass makes a new one. */
struct reader {
	struct fy_diag *diag;
	struct fy_parser *fyp;
	int json;
	int used;  /* a pass ran and did not end its stream cleanly: reset before the next */
	int dirty; /* a pass stopped before the stream's end: make a new one */
};

static int reader_open(struct reader *r, struct builder *b, int json)
{
	struct fy_diag_cfg dcfg;
	struct fy_parse_cfg cfg;
	memset(r, 0, sizeof(*r));
	r->json = json;
	fy_diag_cfg_default(&dcfg);
	dcfg.fp = NULL;
	dcfg.output_fn = NULL;
	dcfg.colorize = false;
	if (!(r->diag = fy_diag_create(&dcfg)))
		return nomem(b);
	fy_diag_set_collect_errors(r->diag, true);
	memset(&cfg, 0, sizeof(cfg));
	cfg.flags = FYPCF_QUIET | FYPCF_DEFAULT_VERSION_1_2 | FYPCF_DISABLE_MMAP_OPT |
		    FYPCF_SLOPPY_FLOW_INDENTATION | (json ? FYPCF_JSON_FORCE : FYPCF_JSON_NONE);
	cfg.diag = r->diag;
	if (!(r->fyp = fy_parser_create(&cfg))) {
		fy_diag_destroy(r->diag);
		r->diag = NULL;
		return nomem(b);
	}
	return 0;
}

static void reader_close(struct reader *r)
{
	if (r->fyp)
		fy_parser_destroy(r->fyp);
	if (r->diag)
		fy_diag_destroy(r->diag);
	memset(r, 0, sizeof(*r));
}

/* One pass of r's parser over data; fills b. */
static int parse_pass(struct builder *b, struct reader *r, const char *data, size_t len,
		      struct pass *ps)
{
	struct fy_parser *fyp;
	struct fy_event *e = NULL;
	int ret = 0;

	if (r->dirty) {
		reader_close(r);
		if (reader_open(r, b, ps->json) < 0)
			return -BERTH_ENOMEM;
	} else if (r->used && fy_parser_reset(r->fyp) != 0) {
		return nomem(b);
	}
	fyp = r->fyp;
	r->used = 1;
	/* text libfyaml hands out in place is this input's, which bad_text
	 * found free of NUL; what it made (escapes, folding) is looked at */
	b->in_lo = (uintptr_t)data;
	b->in_hi = (uintptr_t)data + len;
	if (fy_parser_set_string(fyp, data, len) != 0)
		return nomem(b);
	ps->comma = SIZE_MAX;
	while (!b->failed && (e = fy_parser_parse(fyp)) != NULL) {
		int is_doc_end = e->type == FYET_DOCUMENT_END;
		/* JSON: where the top-level value ends (asked only there) */
		if (ps->json && (is_doc_end || (b->nframes <= 1 && (e->type == FYET_MAPPING_END ||
								    e->type == FYET_SEQUENCE_END ||
								    e->type == FYET_SCALAR)))) {
			const struct fy_mark *m = fy_event_end_mark(e);
			if (m)
				ps->consumed = m->input_pos;
			/* a guessed cut holds if the value closes with nothing but
			 * blanks after it on its line (parse_json says why) */
			if (ps->guess && b->nframes == 1 && e->type != FYET_SCALAR) {
				size_t i = ps->consumed;
				while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r'))
					i++;
				if (!m || i < len) {
					fy_parser_event_free(fyp, e);
					r->dirty = 1;
					return CUT_WRONG;
				}
			}
		}
		ret = on_event(b, e);
		fy_parser_event_free(fyp, e);
		if (ret < 0) {
			r->dirty = 1;
			return ps->guess ? CUT_WRONG : ret;
		}
		/* JSON: stop after each top-level value; the caller goes on. A
		 * value cut from the stream is all of this pass's input: what
		 * follows is the stream's and the document's end */
		if (ps->json && b->nframes == 0 && b->ndocs > 0 && !is_doc_end && ps->consumed) {
			while (ps->framed && (e = fy_parser_parse(fyp)) != NULL)
				fy_parser_event_free(fyp, e);
			if (!ps->framed || fy_parser_get_stream_error(fyp))
				r->dirty = 1;
			else
				r->used = 0; /* its stream ended cleanly */
			return b->failed ? -BERTH_ESYNTAX : 0;
		}
	}
	if (ps->guess) {
		/* the line ended before the value did, or is not JSON */
		r->dirty = 1;
		return CUT_WRONG;
	}
	if (!e && !b->failed && !fy_parser_get_stream_error(fyp))
		r->used = 0; /* its stream ended cleanly */
	if (fy_parser_get_stream_error(fyp)) {
		void *it = NULL;
		struct fy_diag_error *de;
		int n = 0;
		while ((de = fy_diag_errors_iterate(r->diag, &it)) != NULL) {
			if (de->type < FYET_ERROR)
				continue;
			size_t c = n == 0 ? stray_comma(data, len, de) : SIZE_MAX;
			if (c != SIZE_MAX && !ps->json) {
				ps->comma = c;
				ps->comma_pos.line = (uint32_t)de->line + b->line0;
				ps->comma_pos.column = (uint32_t)de->column + (de->line == 1 ? b->col0 : 0);
				return -BERTH_ESYNTAX;
			}
			berth_pos p = {(uint32_t)(de->line > 0 ? de->line : 0) + b->line0,
				       (uint32_t)(de->column > 0 ? de->column : 0) + (de->line == 1 ? b->col0 : 0)};
			syntax(b, p, "%s", de->msg ? de->msg : "syntax error");
			n++;
		}
		if (!n)
			syntax(b, (berth_pos){b->line0 + 1, 1}, "%s", "not well-formed YAML");
		ret = -BERTH_ESYNTAX;
	}
	return ret < 0 ? ret : (b->failed ? -BERTH_ESYNTAX : 0);
}

static void builder_reset(struct builder *b)
{
	b->nframes = b->nkids = b->ndocs = 0;
	b->nodes = b->text = 0;
	b->anchors = NULL;
	b->nanchors = 0;
	b->failed = 0;
}

/* Advances line/col over s[from, to). */
static void advance(const char *s, size_t from, size_t to, uint32_t *line, uint32_t *col)
{
	const char *p = s + from, *end = s + to, *nl;
	/* whole lines by memchr, then the characters of the last one */
	while (p < end && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		(*line)++;
		*col = 0;
		p = nl + 1;
	}
	for (; p < end; p++)
		if ((*p & 0xC0) != 0x80)
			(*col)++;
}

/*
 * Where the JSON value at data[at] ends, one past its last byte, as its
 * brackets and strings say, so that libfyaml, which reads one JSON value a
 * stream, is given one value at a time of a stream of them, all with one
 * parser. This only cuts: what is malformed is libfyaml's to find, in the
 * same bytes. A value that is not an object or an array (a string, a
 * number: no run spec, and libfyaml looks past it for what follows), or
 * whose end is not found, runs to the end of the input.
 */
static size_t json_value_end(const char *s, size_t at, size_t len)
{
	size_t depth = 0;
	if (s[at] != '{' && s[at] != '[')
		return len;
	for (size_t i = at; i < len; i++) {
		switch (s[i]) {
		case '"':
			/* to the closing quote: one after an even number of backslashes */
			for (;;) {
				const char *q = memchr(s + i + 1, '"', len - i - 1);
				if (!q)
					return len;
				size_t k = (size_t)(q - s), bs = 0;
				while (k - bs > i + 1 && s[k - bs - 1] == '\\')
					bs++;
				i = k;
				if (bs % 2 == 0)
					break;
			}
			break;
		case '{':
		case '[':
			depth++;
			break;
		case '}':
		case ']':
			if (--depth == 0)
				return i + 1;
			break;
		default:
			break;
		}
	}
	return len;
}

/* The characters (not UTF-8 continuation bytes) of s[from, to). */
static uint32_t columns(const char *s, size_t from, size_t to)
{
	uint32_t n = 0;
	for (size_t i = from; i < to; i++)
		n += (s[i] & 0xC0) != 0x80;
	return n;
}

/*
 * A guessed cut: most JSON streams are one value a line, so a value is first
 * given to libfyaml as the rest of its line, found by memchr, rather than
 * cut by json_value_end, which looks at every byte (3,500 instructions a
 * spec). The guess holds, and gives the events json_value_end's cut gives,
 * when libfyaml reads an object or an array there that closes with nothing
 * but blanks after it on the line: in JSON mode libfyaml takes only JSON's
 * tokens inside a collection (double-quoted strings on one line, with JSON's
 * escapes; numbers, true, false and null; brackets, commas and colons) and a
 * comment only to the end of a line, which would leave the value open; so
 * its brackets and strings are those json_value_end counts, and the cut is
 * the same but for the blanks, which libfyaml reads as the stream's end.
 * Anything else (the line ends before the value, an error, a cap, something
 * after the value on its line) undoes what the pass built, with its
 * problems, before a document was handed over, and the value is read again
 * cut by json_value_end, as is the rest of the input.
 */
static int guess_pass(struct builder *b, struct reader *r, const char *data, size_t len,
		      struct pass *ps)
{
	berth_error *problems = NULL, **err = b->err;
	berth_arena_mark mark = berth_arena_save(b->arena);
	size_t nodes = b->nodes, text = b->text, ndocs = b->ndocs;
	berth_arena_mark doc_mark = b->doc_mark;
	b->err = &problems;
	int ret = parse_pass(b, r, data, len, ps);
	b->err = err;
	if (ret != CUT_WRONG) {
		berth_error_move(err, problems); /* none but out of memory */
		return ret;
	}
	berth_error_free(problems);
	b->nodes = nodes;
	b->text = text;
	b->ndocs = ndocs;
	b->nframes = b->nkids = 0;
	b->anchors = NULL;
	b->nanchors = 0;
	b->failed = 0;
	b->doc_mark = doc_mark;
	berth_arena_release(b->arena, mark);
	return CUT_WRONG;
}

static int parse_json(struct builder *b, struct reader *r, const char *data, size_t len)
{
	/* where each value starts: its line, and the start of that line (its
	 * column is counted only when it does not start the line); the columns
	 * are counted on from the last value's start on the same line, not from
	 * the line's (values on one long line cost their length once, not the
	 * square of their count) */
	uint32_t line = 0, col = 0;
	size_t line_start = 0, at = 0, col_at = 0;
	int guess = 1; /* until a guessed cut was wrong */
	for (;;) {
		for (; at < len && (data[at] == ' ' || data[at] == '\t' || data[at] == '\n' ||
				    data[at] == '\r'); at++)
			if (data[at] == '\n')
				line++, line_start = at + 1;
		if (at >= len)
			break;
		size_t before = b->ndocs;
		int ret = CUT_WRONG;
		struct pass ps = {1, SIZE_MAX, {0, 0}, 0, 0, 0};
		if (col_at < line_start)
			col_at = line_start, col = 0;
		col += columns(data, col_at, at);
		col_at = at;
		b->line0 = line;
		b->col0 = col;
		if (guess && (data[at] == '{' || data[at] == '[')) {
			const char *nl = memchr(data + at, '\n', len - at);
			size_t end = nl ? (size_t)(nl - data) : len;
			ps.guess = ps.framed = 1;
			ret = guess_pass(b, r, data + at, end - at, &ps);
			guess = ret != CUT_WRONG;
		}
		if (ret == CUT_WRONG) {
			size_t end = json_value_end(data, at, len);
			ps = (struct pass){1, SIZE_MAX, {0, 0}, 0, end != len, 0};
			ret = parse_pass(b, r, data + at, end - at, &ps);
		}
		if (ret < 0)
			return ret;
		if (b->ndocs == before || ps.consumed == 0)
			break;
		const char *p = data + at, *stop = data + at + ps.consumed, *nl;
		while (p < stop && (nl = memchr(p, '\n', (size_t)(stop - p))) != NULL) {
			line++;
			line_start = (size_t)(nl - data) + 1;
			p = nl + 1;
		}
		at += ps.consumed;
	}
	return 0;
}

/*
 * YAML and JSON are Unicode text: reject bytes that are not UTF-8 and control
 * characters other than tab, line feed and carriage return, before libfyaml
 * sees them (0.7.12 loops forever on some invalid bytes in a directive).
 * Returns the offset of the first bad byte, or SIZE_MAX.
 */
#define SWAR_ONES 0x0101010101010101u
#define SWAR_HIGHS (SWAR_ONES * 0x80)

/* The high bit of each byte of v that is c. */
static inline uint64_t byte_is(uint64_t v, unsigned char c)
{
	uint64_t t = v ^ (SWAR_ONES * c);
	return ~(((t & (SWAR_ONES * 0x7f)) + SWAR_ONES * 0x7f) | t) & SWAR_HIGHS;
}

static size_t bad_text(const char *data, size_t len, unsigned *cp)
{
	const unsigned char *s = (const unsigned char *)data;
	for (size_t i = 0; i < len;) {
		/* eight bytes at a time while they are printable ASCII or a tab,
		 * line feed or carriage return (a spec is almost all of them);
		 * each test is exact for each byte (no carry crosses bytes) */
		while (len - i >= 8) {
			uint64_t v;
			memcpy(&v, s + i, 8);
			if (v & SWAR_HIGHS)
				break;
			/* the bytes < 0x20 or 0x7f: b + 0x60 below 0x80, or b + 1 at 0x80 */
			uint64_t odd = (~(v + SWAR_ONES * 0x60) | (v + SWAR_ONES)) & SWAR_HIGHS;
			if (odd && (odd & ~(byte_is(v, '\t') | byte_is(v, '\n') | byte_is(v, '\r'))))
				break;
			i += 8;
		}
		if (i >= len)
			break;
		unsigned c = s[i];
		size_t n;
		if (c < 0x80) {
			if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
				*cp = c;
				return i;
			}
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			n = 1;
		else if (c >= 0xe0 && c <= 0xef)
			n = 2;
		else if (c >= 0xf0 && c <= 0xf4)
			n = 3;
		else
			goto bad;
		unsigned v = c & (0x3f >> n);
		for (size_t k = 1; k <= n; k++) {
			if (i + k >= len || (s[i + k] & 0xc0) != 0x80)
				goto bad;
			v = v << 6 | (s[i + k] & 0x3f);
		}
		/* overlong forms, surrogates, beyond U+10FFFF */
		if ((n == 2 && v < 0x800) || (n == 3 && (v < 0x10000 || v > 0x10ffff)) ||
		    (v >= 0xd800 && v <= 0xdfff))
			goto bad;
		i += n + 1;
		continue;
bad:
		*cp = 0x110000 + c; /* marks a raw byte */
		return i;
	}
	return SIZE_MAX;
}

const berth_yaml_limits berth_yaml_input_limits = {
	BERTH_YAML_MAX_DOCS, BERTH_YAML_MAX_NODES, BERTH_YAML_MAX_TEXT, BERTH_YAML_MAX_DEPTH,
};

const berth_yaml_limits berth_yaml_file_limits = {
	BERTH_YAML_FILE_MAX_DOCS, BERTH_YAML_FILE_MAX_NODES, BERTH_YAML_MAX_TEXT, BERTH_YAML_MAX_DEPTH,
};

static const berth_yaml_limits peer_limits = {
	BERTH_YAML_FILE_MAX_DOCS, BERTH_YAML_FILE_MAX_NODES, BERTH_YAML_MAX_TEXT,
	BERTH_YAML_PEER_MAX_DEPTH,
};

static int parse_docs(berth_arena *arena, const char *name, const char *data, size_t len,
		      const berth_yaml_limits *lim, berth_yaml_doc **docs, size_t *ndocs,
		      berth_error **err, int peer, const berth_yaml_each *each)
{
	struct builder b;
	char *copy = NULL;
	const char *text = data;
	int ret, tries = 0;
	size_t i = 0;

	memset(&b, 0, sizeof(b));
	b.arena = arena;
	b.name = name;
	b.lim = lim;
	b.err = err;
	b.peer = peer;
	b.each = each;
	*docs = NULL;
	*ndocs = 0;
	if (len > BERTH_YAML_MAX_BYTES)
		return berth_fail(err, BERTH_ETOOBIG, "%s: input is %zu bytes, more than the %u allowed",
				  name, len, BERTH_YAML_MAX_BYTES);
	unsigned cp = 0;
	size_t bad = bad_text(data, len, &cp);
	if (bad != SIZE_MAX) {
		uint32_t line = 0, col = 0;
		advance(data, 0, bad, &line, &col);
		berth_where w = {name, line + 1, col + 1, NULL};
		if (cp >= 0x110000)
			return berth_problem_add(err, BERTH_ESYNTAX, BERTH_ERROR, &w,
						 "byte 0x%02x is not valid UTF-8 (YAML and JSON are UTF-8 text)",
						 cp - 0x110000);
		return berth_problem_add(err, BERTH_ESYNTAX, BERTH_ERROR, &w,
					 "control character U+%04X is not allowed (use an escape in a "
					 "double-quoted string)", cp);
	}
	while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r'))
		i++;
	struct reader r;
	int json = i < len && (data[i] == '{' || data[i] == '[');
	if (each)
		each->start(each->arg);
	if ((ret = reader_open(&r, &b, json)) < 0) {
		free(b.docs);
		return ret;
	}
	if (json) {
		ret = parse_json(&b, &r, data, len);
	} else {
		for (;;) {
			struct pass ps = {0, SIZE_MAX, {0, 0}, 0, 0, 0};
			ret = parse_pass(&b, &r, text, len, &ps);
			if (ret == 0 || ps.comma == SIZE_MAX)
				break;
			/* seed 004 writes `name: "my-pvc",`: drop the comma, say so */
			/* each comma costs a parse of the whole input: few are allowed */
			if (++tries > 32) {
				ret = syntax(&b, ps.comma_pos, "%s", "too many stray commas");
				break;
			}
			if (!copy) {
				if (!(copy = berth_malloc(len + 1))) {
					ret = nomem(&b);
					break;
				}
				memcpy(copy, data, len);
				copy[len] = '\0';
				text = copy;
			}
			copy[ps.comma] = ' ';
			berth_where w = {name, ps.comma_pos.line, ps.comma_pos.column, NULL};
			berth_problem_add(err, BERTH_ESYNTAX, BERTH_WARNING, &w, "%s",
					  "comma after a quoted value ignored (YAML block mappings "
					  "need no commas)");
			builder_reset(&b);
			if (each)
				each->start(each->arg);
			/* a fresh parser: the diagnostics hold the last pass's errors */
			reader_close(&r);
			if ((ret = reader_open(&r, &b, 0)) < 0)
				break;
		}
	}
	reader_close(&r);
	free(copy);
	free(b.frames);
	free(b.kids);
	if (ret == 0 && each) {
		*ndocs = b.ndocs; /* handed over as they came */
	} else if (ret == 0) {
		berth_yaml_doc *out = berth_arena_alloc(arena, b.ndocs * sizeof(*out));
		if (!out) {
			free(b.docs);
			return berth_fail(err, BERTH_ENOMEM, "out of memory");
		}
		if (b.ndocs)
			memcpy(out, b.docs, b.ndocs * sizeof(*out));
		*docs = out;
		*ndocs = b.ndocs;
	}
	free(b.docs);
	return ret;
}

int berth_yaml_parse(berth_arena *arena, const char *name, const char *data, size_t len,
		     berth_yaml_doc **docs, size_t *ndocs, berth_error **err)
{
	return parse_docs(arena, name, data, len, &berth_yaml_input_limits, docs, ndocs, err, 0, NULL);
}

int berth_yaml_parse_with(berth_arena *arena, const char *name, const char *data, size_t len,
			  const berth_yaml_limits *lim, berth_yaml_doc **docs, size_t *ndocs,
			  berth_error **err)
{
	return parse_docs(arena, name, data, len, lim, docs, ndocs, err, 0, NULL);
}

int berth_yaml_parse_each(berth_arena *arena, const char *name, const char *data, size_t len,
			  const berth_yaml_limits *lim, const berth_yaml_each *each, size_t *ndocs,
			  berth_error **err)
{
	berth_yaml_doc *docs;
	return parse_docs(arena, name, data, len, lim, &docs, ndocs, err, 0, each);
}

int berth_read_file(const char *path, size_t max, char **out, size_t *len, berth_error **err)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	berth_buf b = BERTH_BUF_INIT;
	struct stat st;

	*out = NULL;
	*len = 0;
	if (!f)
		return berth_fail(err, BERTH_EIO, "cannot open \"%s\": %s", path, strerror(errno));
	b.max = max;
	/* read into the buffer itself: a file's size asked for at once (one
	 * allocation, one read, and room to see its end), else 64 KiB at a time */
	size_t want = 65536;
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uintmax_t)st.st_size < SIZE_MAX - 1)
		want = (size_t)st.st_size + 1;
	for (;;) {
		if (max && want > max - b.len)
			want = max - b.len;
		if (!want) { /* max bytes read: one more is one too many */
			char c;
			if (fread(&c, 1, 1, f) == 1)
				b.failed = -BERTH_ETOOBIG;
			break;
		}
		if (berth_buf_reserve(&b, want) < 0)
			break;
		size_t n = fread(b.data + b.len, 1, want, f);
		b.len += n;
		b.data[b.len] = '\0';
		if (n < want)
			break;
		want = 65536;
	}
	int rerr = ferror(f);
	if (f != stdin)
		fclose(f);
	if (b.failed == -BERTH_ETOOBIG) {
		berth_buf_release(&b);
		return berth_fail(err, BERTH_ETOOBIG, "\"%s\" is larger than %zu bytes", path, max);
	}
	if (rerr || b.failed) {
		berth_buf_release(&b);
		return berth_fail(err, rerr ? BERTH_EIO : BERTH_ENOMEM, "cannot read \"%s\"%s", path,
				  rerr ? ": read error" : ": out of memory");
	}
	*len = b.len;
	*out = berth_buf_detach(&b);
	return *out ? 0 : berth_fail(err, BERTH_ENOMEM, "out of memory");
}

const berth_node *berth_node_get(const berth_node *n, const char *key)
{
	size_t kl = strlen(key);
	if (!n || n->kind != BERTH_NODE_MAP)
		return NULL;
	for (size_t i = 0; i < n->len; i++)
		if (n->u.pairs[i].key->len == kl && memcmp(n->u.pairs[i].key->u.text, key, kl) == 0)
			return n->u.pairs[i].value;
	return NULL;
}

const char *berth_node_kind_name(const berth_node *n)
{
	if (!n)
		return "nothing";
	switch (n->kind) {
	case BERTH_NODE_MAP:
		return "a map";
	case BERTH_NODE_SEQ:
		return "a list";
	default:
		break;
	}
	switch (n->type) {
	case BERTH_SCALAR_NULL:
		return "null";
	case BERTH_SCALAR_BOOL:
		return "a boolean";
	case BERTH_SCALAR_INT:
		return "an integer";
	case BERTH_SCALAR_FLOAT:
		return "a number";
	default:
		return "a string";
	}
}

struct berth_doc {
	berth_arena *arena;
	const berth_node *root;
};

int berth_doc_parse(berth_doc **out, const char *name, const char *data, size_t len,
		    berth_error **err)
{
	*out = NULL;
	berth_doc *d = berth_calloc(1, sizeof(*d));
	if (!d || !(d->arena = berth_arena_new())) {
		free(d);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	berth_yaml_doc *docs = NULL;
	size_t n = 0;
	int rc = berth_yaml_parse(d->arena, name, data, len, &docs, &n, err);
	if (rc) {
		berth_doc_free(d);
		return rc;
	}
	d->root = n ? docs[0].root : NULL;
	*out = d;
	return 0;
}

const berth_node *berth_doc_root(const berth_doc *doc)
{
	return doc ? doc->root : NULL;
}

void berth_doc_free(berth_doc *doc)
{
	if (!doc)
		return;
	berth_arena_free(doc->arena);
	free(doc);
}

int berth_json_root(berth_arena *arena, const char *name, const char *data, size_t len,
		    const berth_node **root, berth_error **err)
{
	berth_yaml_doc *docs;
	size_t ndocs;
	berth_error *perr = NULL;
	*root = NULL;
	int ret = parse_docs(arena, name, data, len, &peer_limits, &docs, &ndocs, &perr, 1, NULL);
	if (ret < 0) {
		if (err)
			berth_error_move(err, perr);
		else
			berth_error_free(perr);
		return ret;
	}
	berth_error_free(perr); /* warnings about a peer's JSON help nobody */
	if (ndocs != 1 || !docs[0].root)
		return berth_fail(err, BERTH_ESYNTAX, "%s is not one JSON value", name);
	*root = docs[0].root;
	return 0;
}

const char *berth_node_text(const berth_node *n)
{
	return n && n->kind == BERTH_NODE_SCALAR && n->type != BERTH_SCALAR_NULL ? n->u.text : NULL;
}

const berth_node *berth_node_at(const berth_node *n, const char *path)
{
	char key[128];
	while (n && *path) {
		size_t len = strcspn(path, ".");
		if (len >= sizeof(key))
			return NULL;
		memcpy(key, path, len);
		key[len] = '\0';
		n = berth_node_get(n, key);
		path += len + (path[len] == '.');
	}
	return n;
}
