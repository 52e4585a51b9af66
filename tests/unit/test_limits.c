/*
 * test_limits.c - the reader's caps on hostile input (yaml.h): nesting depth,
 * documents, nodes and text once aliases are expanded, each refused where it
 * goes over with its file, line and column; and the walks over parsed trees
 * (o_copy, the YAML and JSON writers) bounded in depth and linear in output.
 *
 * Inputs are parsed from exact-size heap copies: ASan catches a read past len.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/node.h"
#include "berth/spec.h"
#include "render/emit.h"
#include "base/internal.h"
#include "spec/spec_internal.h"
#include "spec/yaml.h"
#include "t.h"

/* ---- helpers --------------------------------------------------------------- */

static void dump(const berth_error *err)
{
	char buf[1024];
	for (size_t i = 0; i < berth_error_count(err); i++) {
		berth_problem_format(berth_error_get(err, i), buf, sizeof(buf));
		fprintf(stderr, "    problem: %.300s\n", buf);
	}
}

/* berth_spec_parse of buf's text from an exact-size heap copy. */
static int spec_parse(const berth_buf *buf, berth_error **err)
{
	size_t len = buf->len;
	char *copy = malloc(len ? len : 1);
	if (!copy)
		abort();
	memcpy(copy, buf->data, len);
	berth_spec_set *set = NULL;
	int ret = berth_spec_parse(&set, "t.yaml", copy, len, err);
	free(copy);
	CHECK((ret == 0) == (set != NULL));
	berth_spec_set_free(set);
	return ret;
}

/* The one problem of err: code, line, column and message. */
static void check_only(const berth_error *err, berth_code code, unsigned line, unsigned col,
		       const char *msg)
{
	CHECKF(berth_error_count(err) == 1, "%zu problems, want 1", berth_error_count(err));
	const berth_problem *p = berth_error_get(err, 0);
	if (!CHECK(p != NULL))
		return;
	CHECKF(p->code == code, "code %s, want %s: %s", berth_code_name(p->code),
	       berth_code_name(code), p->message);
	CHECK_STR(p->file, "t.yaml");
	CHECKF(p->line == line && p->column == col, "at %u:%u, want %u:%u: %s", p->line, p->column,
	       line, col, p->message);
	CHECK_STR(p->message, msg);
	if (berth_error_count(err) != 1 || p->code != code)
		dump(err);
}

/* A spec whose inputs nest JSON lists: {"inputs": {"x": [[...1...]]}} with
 * lists levels of lists, so the document is lists + 2 levels deep. */
static void json_inputs(berth_buf *b, int lists)
{
	berth_buf_puts(b, "{\"inputs\": {\"x\": ");
	for (int i = 0; i < lists; i++)
		berth_buf_puts(b, "[");
	berth_buf_puts(b, "1");
	for (int i = 0; i < lists; i++)
		berth_buf_puts(b, "]");
	berth_buf_puts(b, "}}\n");
}

/* inputs: a block map under a block map, levels deep (the root is level 1,
 * inputs level 2): the map of level k starts at line k, column 2k - 1. */
static void yaml_inputs(berth_buf *b, int levels)
{
	berth_buf_puts(b, "inputs:\n");
	for (int k = 2; k < levels; k++)
		berth_buf_printf(b, "%*sk%d:\n", 2 * (k - 1), "", k);
	berth_buf_printf(b, "%*sleaf: 1\n", 2 * (levels - 1), "");
}

/* ---- depth ----------------------------------------------------------------- */

/* 64 levels are read; the 65th map or list is refused where it opens. */
static void test_depth_json(void)
{
	berth_buf b = BERTH_BUF_INIT;
	berth_error *err = NULL;
	json_inputs(&b, 62); /* 64 levels */
	CHECK_INT(spec_parse(&b, &err), 0);
	dump(err);
	berth_error_free(err);
	berth_buf_release(&b);

	b = (berth_buf)BERTH_BUF_INIT;
	err = NULL;
	json_inputs(&b, 63); /* 65: the 63rd "[" is one too deep */
	CHECK_INT(spec_parse(&b, &err), -BERTH_ETOOBIG);
	check_only(err, BERTH_ETOOBIG, 1, 17 + 63, "nesting deeper than 64 levels");
	berth_error_free(err);
	berth_buf_release(&b);
}

static void test_depth_yaml(void)
{
	berth_buf b = BERTH_BUF_INIT;
	berth_error *err = NULL;
	yaml_inputs(&b, 64);
	CHECK_INT(spec_parse(&b, &err), 0);
	dump(err);
	berth_error_free(err);
	berth_buf_release(&b);

	b = (berth_buf)BERTH_BUF_INIT;
	err = NULL;
	yaml_inputs(&b, 65);
	CHECK_INT(spec_parse(&b, &err), -BERTH_ETOOBIG);
	check_only(err, BERTH_ETOOBIG, 65, 129, "nesting deeper than 64 levels");
	berth_error_free(err);
	berth_buf_release(&b);

	/* flow collections in YAML: the same cap */
	b = (berth_buf)BERTH_BUF_INIT;
	err = NULL;
	berth_buf_puts(&b, "inputs:\n  x: ");
	for (int i = 0; i < 70; i++)
		berth_buf_puts(&b, "{a: ");
	berth_buf_puts(&b, "1");
	for (int i = 0; i < 70; i++)
		berth_buf_puts(&b, "}");
	berth_buf_puts(&b, "\n");
	CHECK_INT(spec_parse(&b, &err), -BERTH_ETOOBIG);
	/* levels 1 and 2 are the block maps; the 63rd "{" (at 6 + 4 * 62) is level 65 */
	check_only(err, BERTH_ETOOBIG, 2, 6 + 4 * 62, "nesting deeper than 64 levels");
	berth_error_free(err);
	berth_buf_release(&b);
}

/* 100,000 nested "[" (200 KB) overflowed the stack of the walks that copy
 * and print a tree: refused at level 65 (the position each problem names), on
 * every path that reads it. How fast is bench/'s, not a test's. */
static void test_depth_100000(void)
{
	size_t n = 100000;
	char *deep = malloc(2 * n + 1);
	if (!deep)
		abort();
	memset(deep, '[', n);
	memset(deep + n, ']', n);
	deep[2 * n] = '\n';

	berth_buf b = {deep, 2 * n + 1, 2 * n + 1, 0, 0, NULL};
	berth_error *err = NULL;
	CHECK_INT(spec_parse(&b, &err), -BERTH_ETOOBIG);
	check_only(err, BERTH_ETOOBIG, 1, 65, "nesting deeper than 64 levels");
	berth_error_free(err);

	/* POST /api/v1/parse */
	char *out = NULL;
	size_t len = 0;
	err = NULL;
	CHECK_INT(berth_docs_json("t.yaml", deep, 2 * n + 1, &out, &len, &err), -BERTH_ETOOBIG);
	CHECK(out == NULL);
	check_only(err, BERTH_ETOOBIG, 1, 65, "nesting deeper than 64 levels");
	berth_error_free(err);

	/* a JSON request body */
	berth_doc *doc = NULL;
	err = NULL;
	CHECK_INT(berth_doc_parse(&doc, "t.yaml", deep, 2 * n + 1, &err), -BERTH_ETOOBIG);
	CHECK(doc == NULL);
	berth_error_free(err);

	/* a peer's reply: deeper than its cap of 256 */
	berth_arena *arena = berth_arena_new();
	const berth_node *root = NULL;
	err = NULL;
	CHECK_INT(berth_json_root(arena, "t.yaml", deep, 2 * n + 1, &root, &err), -BERTH_ETOOBIG);
	check_only(err, BERTH_ETOOBIG, 1, 257, "nesting deeper than 256 levels");
	berth_error_free(err);
	berth_arena_free(arena);

	/* YAML flow, after a key */
	memcpy(deep, "a: ", 3);
	err = NULL;
	CHECK_INT(spec_parse(&b, &err), -BERTH_ETOOBIG);
	check_only(err, BERTH_ETOOBIG, 1, 3 + 64, "nesting deeper than 64 levels");
	berth_error_free(err);
	free(deep);
}

/* A peer (a server's reply) nests what a user wrote in objects of its own. */
static void test_depth_peer(void)
{
	berth_buf b = BERTH_BUF_INIT;
	berth_buf_puts(&b, "{\"items\": [{\"spec\": {\"inputs\": ");
	for (int i = 0; i < 100; i++)
		berth_buf_puts(&b, "[");
	for (int i = 0; i < 100; i++)
		berth_buf_puts(&b, "]");
	berth_buf_puts(&b, "}}]}");
	berth_arena *arena = berth_arena_new();
	const berth_node *root = NULL;
	berth_error *err = NULL;
	CHECK_INT(berth_json_root(arena, "reply", b.data, b.len, &root, &err), 0);
	CHECK(root != NULL);
	berth_error_free(err);
	berth_arena_free(arena);
	berth_buf_release(&b);
}

/* An alias is as deep as what it names: nesting aliases, or an alias of a
 * deep subtree used deep down, goes over the cap without 65 brackets. */
static void test_depth_aliases(void)
{
	berth_buf b = BERTH_BUF_INIT;
	berth_error *err = NULL;
	/* a0 is 1 level (a list), a_k = [*a_{k-1}] k + 1; each list is at level 4 */
	berth_buf_puts(&b, "inputs:\n  x:\n    a0: &a0 [1]\n");
	for (int k = 1; k <= 70; k++)
		berth_buf_printf(&b, "    a%d: &a%d [*a%d]\n", k, k, k - 1);
	CHECK_INT(spec_parse(&b, &err), -BERTH_ETOOBIG);
	/* *a60 (61 levels) in a61's list (level 4) reaches 65; at the alias' name */
	check_only(err, BERTH_ETOOBIG, 3 + 61, 17,
		   "nesting deeper than 64 levels once aliases are expanded");
	berth_error_free(err);
	berth_buf_release(&b);

	/* a subtree of 62 levels: fine as y (2 + 62), not in z's list (3 + 62) */
	b = (berth_buf)BERTH_BUF_INIT;
	err = NULL;
	berth_buf_puts(&b, "inputs:\n  x: &deep ");
	for (int i = 0; i < 62; i++)
		berth_buf_puts(&b, "[");
	for (int i = 0; i < 62; i++)
		berth_buf_puts(&b, "]");
	berth_buf_puts(&b, "\n  y: *deep\n  z: [*deep]\n");
	CHECK_INT(spec_parse(&b, &err), -BERTH_ETOOBIG);
	check_only(err, BERTH_ETOOBIG, 4, 8, "nesting deeper than 64 levels once aliases are expanded");
	berth_error_free(err);
	berth_buf_release(&b);
}

/* ---- documents ------------------------------------------------------------- */

static void test_documents(void)
{
	berth_buf b = BERTH_BUF_INIT;
	berth_error *err = NULL;
	for (int i = 0; i < 300; i++)
		berth_buf_printf(&b, "%saction: job\n", i ? "---\n" : "");
	CHECK_INT(spec_parse(&b, &err), 0);
	berth_error_free(err);

	/* the 301st is refused where it starts, before it is read (its syntax error too) */
	err = NULL;
	berth_buf_puts(&b, "---\naction: [job\n");
	CHECK_INT(spec_parse(&b, &err), -BERTH_ETOOBIG);
	check_only(err, BERTH_ETOOBIG, 2 * 300, 1, "more than 300 documents in one input: split it");
	berth_error_free(err);

	/* a file that is only checked or rendered may hold more */
	char *dir = t_temp_dir("berth-limits");
	if (dir) {
		char path[512];
		snprintf(path, sizeof(path), "%s/many.yaml", dir);
		berth_buf m = BERTH_BUF_INIT;
		for (int i = 0; i < 1000; i++)
			berth_buf_printf(&m, "%saction: job\n", i ? "---\n" : "");
		FILE *f = fopen(path, "w");
		if (CHECK(f != NULL)) {
			fwrite(m.data, 1, m.len, f);
			fclose(f);
			berth_spec_set *set = NULL;
			err = NULL;
			CHECK_INT(berth_spec_parse_file(&set, path, &err), 0);
			CHECK_INT(berth_spec_set_count(set), 1000);
			berth_spec_set_free(set);
			berth_error_free(err);
		}
		berth_buf_release(&m);
		t_rm_rf(dir);
		free(dir);
	}
	berth_buf_release(&b);

	/* a JSON stream: the same cap, at the 301st value */
	b = (berth_buf)BERTH_BUF_INIT;
	err = NULL;
	for (int i = 0; i < 301; i++)
		berth_buf_puts(&b, "{\"action\": \"job\"}\n");
	CHECK_INT(spec_parse(&b, &err), -BERTH_ETOOBIG);
	check_only(err, BERTH_ETOOBIG, 301, 1, "more than 300 documents in one input: split it");
	berth_error_free(err);
	berth_buf_release(&b);
}

/* ---- nodes and text -------------------------------------------------------- */

static int yaml_parse(const berth_buf *b, berth_error **err)
{
	berth_arena *arena = berth_arena_new();
	berth_yaml_doc *docs = NULL;
	size_t ndocs = 0;
	char *copy = malloc(b->len);
	if (!arena || !copy)
		abort();
	memcpy(copy, b->data, b->len);
	int ret = berth_yaml_parse(arena, "t.yaml", copy, b->len, &docs, &ndocs, err);
	free(copy);
	berth_arena_free(arena);
	return ret;
}

/* A 1 MiB body does not become a tree of half a million nodes. */
static void test_nodes(void)
{
	berth_buf b = BERTH_BUF_INIT;
	berth_error *err = NULL;
	/* the list and 99,999 items: 100,000 nodes */
	berth_buf_puts(&b, "[1");
	for (int i = 1; i < 99999; i++)
		berth_buf_puts(&b, ",1");
	berth_buf_puts(&b, "]");
	CHECK_INT(yaml_parse(&b, &err), 0);
	berth_error_free(err);

	err = NULL;
	b.len--;
	berth_buf_puts(&b, ",1]");
	CHECK_INT(yaml_parse(&b, &err), -BERTH_ETOOBIG);
	/* the 100,000th item is node 100,001 */
	check_only(err, BERTH_ETOOBIG, 1, 2 * 100000,
		   "input too large: more than 100000 nodes once aliases are expanded");
	berth_error_free(err);
	berth_buf_release(&b);
}

/* Aliases of a long string: 64 KiB of input, 4.5 MB of text for whatever
 * copies or prints the tree (POST /api/v1/parse gave it all back). */
static void test_text_aliases(void)
{
	berth_buf b = BERTH_BUF_INIT;
	berth_buf_puts(&b, "a: &s \"");
	for (int i = 0; i < 64 * 1024; i++)
		berth_buf_append(&b, "x", 1);
	berth_buf_puts(&b, "\"\nb: [*s");
	for (int i = 1; i < 70; i++)
		berth_buf_puts(&b, ", *s");
	berth_buf_puts(&b, "]\n");
	char *out = NULL;
	size_t len = 0;
	berth_error *err = NULL;
	int ret = berth_docs_json("t.yaml", b.data, b.len, &out, &len, &err);
	CHECK_INT(ret, -BERTH_ETOOBIG);
	CHECKF(out == NULL, "%zu bytes out of %zu in", len, b.len);
	/* the string and 62 aliases fit in 4 MiB with the keys "a" and "b": the
	 * 63rd alias does not (its name is at 5 + 4 * 62 + 1) */
	check_only(err, BERTH_ETOOBIG, 2, 5 + 4 * 62 + 1,
		   "input too large: more than 4194304 bytes of text once aliases are expanded");
	free(out);
	berth_error_free(err);
	berth_buf_release(&b);
}

/* ---- walks and output ------------------------------------------------------ */

/* An output is linear in its input: at most O_BLOCK_DEPTH levels are
 * indented, deeper collections go on one line. A list of nests 64 levels
 * deep: the old writers gave 32 (YAML) to 63 (JSON) times the input. */
static void test_output_linear(void)
{
	berth_buf in = BERTH_BUF_INIT;
	berth_buf_puts(&in, "[");
	for (int k = 0; k < 200; k++) {
		berth_buf_puts(&in, k ? ", " : "");
		for (int i = 0; i < 63; i++)
			berth_buf_puts(&in, "[");
		berth_buf_puts(&in, "\"x\"");
		for (int i = 0; i < 63; i++)
			berth_buf_puts(&in, "]");
	}
	berth_buf_puts(&in, "]\n");

	berth_arena *arena = berth_arena_new();
	berth_yaml_doc *docs = NULL;
	size_t ndocs = 0;
	berth_error *err = NULL;
	CHECK_INT(berth_yaml_parse(arena, "t.yaml", in.data, in.len, &docs, &ndocs, &err), 0);
	berth_error_free(err);
	if (!CHECK(ndocs == 1 && docs[0].root)) {
		berth_arena_free(arena);
		berth_buf_release(&in);
		return;
	}
	obuild ob = {arena, 0};
	onode *o = o_copy_typed(&ob, o_root(&ob, O_SEQ), NULL, docs[0].root);
	CHECK(o != NULL && !ob.failed);

	berth_buf js = BERTH_BUF_INIT, ym = BERTH_BUF_INIT, compact = BERTH_BUF_INIT;
	emit_json(&js, o, 0, 1);
	emit_yaml(&ym, o);
	emit_json(&compact, o, 0, 0);
	CHECK(!js.failed && !ym.failed && !compact.failed);
	CHECKF(js.len < 20 * in.len, "pretty JSON: %zu bytes from %zu", js.len, in.len);
	CHECKF(ym.len < 12 * in.len, "YAML: %zu bytes from %zu", ym.len, in.len);
	CHECKF(compact.len < 2 * in.len, "JSON: %zu bytes from %zu", compact.len, in.len);

	/* what is written reads back as the same tree, the deep part in flow style */
	const char *texts[] = {js.data, ym.data, compact.data};
	size_t lens[] = {js.len, ym.len, compact.len};
	for (int t = 0; t < 3; t++) {
		berth_yaml_doc *back = NULL;
		size_t nback = 0;
		err = NULL;
		CHECK_INT(berth_yaml_parse(arena, "out.yaml", texts[t], lens[t], &back, &nback, &err), 0);
		dump(err);
		berth_error_free(err);
		if (!CHECK(nback == 1 && back[0].root))
			continue;
		obuild ob2 = {arena, 0};
		berth_buf again = BERTH_BUF_INIT;
		emit_json(&again, o_copy_typed(&ob2, o_root(&ob2, O_SEQ), NULL, back[0].root), 0, 0);
		CHECKF(again.len == compact.len && memcmp(again.data, compact.data, again.len) == 0,
		       "output %d reads back differently", t);
		berth_buf_release(&again);
	}
	/* the first levels are indented as before, past O_BLOCK_DEPTH on one line */
	for (int t = 0; t < 2; t++) {
		size_t widest = 0, run = 0;
		for (const char *p = texts[t]; *p; p++) {
			run = *p == '\n' ? 0 : run + 1;
			if (*p != ' ' && *p != '\n' && p > texts[t] && p[-1] == ' ' && run - 1 > widest &&
			    (p - run == texts[t] || p[-(long)run] == '\n'))
				widest = run - 1;
		}
		CHECKF(widest <= 2 * O_BLOCK_DEPTH, "output %d indented by %zu", t, widest);
	}
	berth_buf_release(&js);
	berth_buf_release(&ym);
	berth_buf_release(&compact);
	berth_arena_free(arena);
	berth_buf_release(&in);
}

/* A tree from anywhere but the reader: the walks refuse it past O_MAX_DEPTH
 * rather than recurse without end. */
static void test_walk_guard(void)
{
	enum { N = 5000 };
	berth_node *nodes = calloc(N + 1, sizeof(*nodes));
	const berth_node **items = calloc(N, sizeof(*items));
	if (!nodes || !items)
		abort();
	for (size_t i = 0; i < N; i++) {
		nodes[i].kind = BERTH_NODE_SEQ;
		nodes[i].len = 1;
		items[i] = &nodes[i + 1];
		nodes[i].u.items = &items[i];
	}
	nodes[N].kind = BERTH_NODE_SCALAR;
	nodes[N].type = BERTH_SCALAR_STR;
	nodes[N].u.text = "x";
	nodes[N].len = 1;

	berth_arena *arena = berth_arena_new();
	obuild ob = {arena, 0};
	o_copy_typed(&ob, o_root(&ob, O_SEQ), NULL, nodes);
	CHECK(ob.failed);
	obuild ob2 = {arena, 0};
	o_copy(&ob2, o_root(&ob2, O_MAP), "k", nodes, NULL);
	CHECK(ob2.failed);

	/* an output tree built deeper by hand */
	obuild ob3 = {arena, 0};
	onode *root = o_root(&ob3, O_SEQ), *at = root;
	for (int i = 0; i < N; i++)
		at = o_seq(&ob3, at, NULL);
	CHECK(!ob3.failed);
	berth_buf out = BERTH_BUF_INIT;
	emit_json(&out, root, 0, 1);
	CHECK_INT(out.failed, -BERTH_ETOOBIG);
	berth_buf_release(&out);
	out = (berth_buf)BERTH_BUF_INIT;
	emit_yaml(&out, root);
	CHECK_INT(out.failed, -BERTH_ETOOBIG);
	berth_buf_release(&out);

	/* O_MAX_DEPTH levels are written */
	obuild ob4 = {arena, 0};
	root = at = o_root(&ob4, O_SEQ);
	for (unsigned i = 1; i < O_MAX_DEPTH; i++)
		at = o_seq(&ob4, at, NULL);
	out = (berth_buf)BERTH_BUF_INIT;
	emit_yaml(&out, root);
	CHECK_INT(out.failed, 0);
	berth_buf_release(&out);

	berth_arena_free(arena);
	free(items);
	free(nodes);
}

/* Repeats in long lists are found by one sort, each against its first (every
 * pair of 16,000 envs took seconds): the first repeat names the line of the
 * first; past 200 problems, one more says the rest were left out. */
static void test_repeats_and_problem_cap(void)
{
	enum { N = 16000 }; /* 80,000 nodes: under the cap */
	berth_buf in = BERTH_BUF_INIT;
	berth_buf_puts(&in, "function: {name: f, command: [x]}\nenvs:\n");
	for (int i = 0; i < N; i++)
		berth_buf_printf(&in, "- {name: E%d, value: v}\n", i % (N / 2));
	berth_error *err = NULL;
	CHECK(spec_parse(&in, &err) < 0);
	CHECK_INT(berth_error_count(err), 201);
	const berth_problem *p = berth_error_get(err, 0);
	CHECKF(p && strstr(p->message, "\"E0\" is set twice (first at line 3)") && p->line == N / 2 + 3,
	       "first problem: %s at line %u", p ? p->message : "none", p ? p->line : 0);
	p = berth_error_get(err, 200);
	CHECKF(p && strstr(p->message, "too many problems; stopping after 200"), "last problem: %s",
	       p ? p->message : "none");
	berth_error_free(err);
	berth_buf_release(&in);

	/* secrets, and labels, the same way; a list without repeats has none */
	in = (berth_buf)BERTH_BUF_INIT;
	berth_buf_puts(&in, "function: {name: f, command: [x]}\nsecrets: [a, b, c, b, a, b]\n"
			    "labels: {x: \"1\", y: \"2\"}\nenvs: [{name: A, value: a}, {name: B, value: b}]\n");
	err = NULL;
	CHECK(spec_parse(&in, &err) < 0);
	CHECK_INT(berth_error_count(err), 3);
	for (size_t i = 0; i < berth_error_count(err); i++)
		CHECKF(strstr(berth_error_get(err, i)->message, "listed twice (first at line 2)"),
		       "%s", berth_error_get(err, i)->message);
	berth_error_free(err);
	berth_buf_release(&in);
}

/* More volumes than a run may have: refused at the list, not compared pair by pair. */
static void test_volumes_cap(void)
{
	for (int n = BERTH_MAX_VOLUMES; n <= BERTH_MAX_VOLUMES + 1; n++) {
		berth_buf in = BERTH_BUF_INIT;
		berth_buf_puts(&in, "function: {name: f, command: [x]}\nvolumes:\n");
		for (int i = 0; i < n; i++)
			berth_buf_printf(&in, "- {name: v%d, volume_type: empty_dir, mount_path: /m/%d}\n", i, i);
		berth_error *err = NULL;
		int rc = spec_parse(&in, &err);
		if (n == BERTH_MAX_VOLUMES) {
			CHECK_INT(rc, 0);
			dump(err);
		} else {
			char want[64];
			snprintf(want, sizeof(want), "%d volumes; a run may have at most %d", n,
				 BERTH_MAX_VOLUMES);
			check_only(err, BERTH_ETOOBIG, 3, 1, want);
		}
		berth_error_free(err);
		berth_buf_release(&in);
	}
}

/* Numbers YAML has and JSON has not (1., .5, 01, 0x1f, .inf) are strings in
 * JSON output: what a client reads back is JSON (found by fuzz_http). */
static void test_json_numbers(void)
{
	static const char in[] = "a: [1., .2, 1, -0.5, 1e3, 01, 0x1f, .inf, -.5, 1.e5, 0, -0, 2E-3]\n";
	char *out = NULL;
	size_t len = 0;
	berth_error *err = NULL;
	CHECK_INT(berth_docs_json("t.yaml", in, sizeof(in) - 1, &out, &len, &err), 0);
	CHECKF(out && strstr(out, "[\"1.\",\".2\",1,-0.5,1e3,\"01\",\"0x1f\",\".inf\",\"-.5\","
				  "\"1.e5\",0,-0,2E-3]"), "%s", out ? out : "(null)");
	/* and it reads back */
	berth_doc *doc = NULL;
	CHECK_INT(out ? berth_doc_parse(&doc, "out", out, len, &err) : -1, 0);
	berth_doc_free(doc);
	berth_error_free(err);
	free(out);
}

T_MAIN(T(test_json_numbers), T(test_repeats_and_problem_cap), T(test_volumes_cap), T(test_depth_json), T(test_depth_yaml), T(test_depth_100000), T(test_depth_peer),
       T(test_depth_aliases), T(test_documents), T(test_nodes), T(test_text_aliases),
       T(test_output_linear), T(test_walk_guard))
