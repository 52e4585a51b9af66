/*
 * test_spec.c - berth_spec_parse: typed values, every spelling the user
 * documentation shows, positions, documents and JSON streams, error
 * collection, caps on hostile input, and allocation failures.
 *
 * Every input is parsed from an exact-size heap copy that is freed right
 * after berth_spec_parse returns: ASan catches a read past len, and any
 * pointer the spec set keeps into the input.
 */
#define _DEFAULT_SOURCE /* mincore */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "berth/node.h"
#include "berth/spec.h"
#include "render/emit.h"
#include "base/internal.h"
#include "base/rodata.h"
#include "base/hugemap.h"
#include "base/spool.h"
#include "spec/yaml.h"
#include "t.h"

/* ---- helpers --------------------------------------------------------------- */

static void dump(const berth_error *err)
{
	char buf[1024];
	for (size_t i = 0; i < berth_error_count(err); i++) {
		berth_problem_format(berth_error_get(err, i), buf, sizeof(buf));
		fprintf(stderr, "    problem: %s\n", buf);
	}
}

/* Parses the first len bytes of text from an exact-size heap copy. */
static int parse_n(berth_spec_set **set, const char *text, size_t len, berth_error **err)
{
	char *copy = malloc(len ? len : 1);
	int ret;

	if (!copy)
		abort();
	memcpy(copy, text, len);
	ret = berth_spec_parse(set, "t.yaml", copy, len, err);
	memset(copy, 'X', len); /* anything still pointing in reads garbage */
	free(copy);
	return ret;
}

static int parse(berth_spec_set **set, const char *text, berth_error **err)
{
	return parse_n(set, text, strlen(text), err);
}

/* Parses text that must be valid and draw no problem at all. */
static berth_spec_set *must(const char *text)
{
	berth_spec_set *set = NULL;
	berth_error *err = NULL;
	int ret = parse(&set, text, &err);

	CHECKF(ret == 0, "parse returned %d for:\n%s", ret, text);
	CHECKF(berth_error_count(err) == 0, "%zu unexpected problems", berth_error_count(err));
	dump(err);
	berth_error_free(err);
	CHECK((ret == 0) == (set != NULL));
	return set;
}

/* The only spec of a set (NULL, with a failed check, when there is not one). */
static const berth_spec *only(const berth_spec_set *set)
{
	CHECK_INT(berth_spec_set_count(set), set ? 1 : 0);
	return berth_spec_set_get(set, 0);
}

/* Parses text that must fail with return value -code; returns the error. */
static berth_error *must_fail(const char *text, berth_code code)
{
	berth_spec_set *set = NULL;
	berth_error *err = NULL;
	int ret = parse(&set, text, &err);

	CHECKF(ret == -(int)code, "parse returned %d, want %d", ret, -(int)code);
	CHECK(set == NULL);
	CHECK(err != NULL);
	if (ret != -(int)code)
		dump(err);
	berth_spec_set_free(set);
	return err;
}

/* The canonical form of q, in a rotating static buffer. */
static const char *qfmt(const berth_quantity *q)
{
	static char bufs[4][BERTH_QUANTITY_STR_MAX];
	static int i;
	char *b = bufs[i++ % 4];
	berth_quantity_format(q, b, BERTH_QUANTITY_STR_MAX);
	return b;
}

/* 1 when q equals the quantity s (whatever their formats). */
static int qeq(const berth_quantity *q, const char *s)
{
	berth_quantity want;
	char msg[256];
	if (berth_quantity_parse_message(&want, s, strlen(s), msg, sizeof(msg)) < 0) {
		CHECKF(0, "bad quantity in the test: %s", msg);
		return 0;
	}
	return berth_quantity_cmp(q, &want) == 0;
}

/* CHECK_INT that also yields whether it held. */
#define CHECK_INT_RET(a, b)                                                                 \
	t_check((long long)(a) == (long long)(b), __FILE__, __LINE__, "%s == %s: %lld != %lld", \
		#a, #b, (long long)(a), (long long)(b))

#define CHECK_POS(p, l, c)                                                                  \
	do {                                                                                \
		CHECK_INT((p).line, l);                                                     \
		CHECK_INT((p).column, c);                                                   \
	} while (0)

/* Problem i of err must have these fields (path NULL: none). */
static void check_problem(const berth_error *err, size_t i, berth_code code, berth_severity sev,
			  unsigned line, unsigned col, const char *path, const char *msg_has)
{
	const berth_problem *p = berth_error_get(err, i);
	if (!CHECKF(p != NULL, "no problem %zu (count %zu)", i, berth_error_count(err)))
		return;
	CHECKF(p->code == code, "problem %zu: code %d (%s), want %d (%s): %s", i, (int)p->code,
	       berth_code_name(p->code), (int)code, berth_code_name(code), p->message);
	CHECK_INT(p->severity, sev);
	CHECK_STR(p->file, "t.yaml");
	CHECKF(p->line == line && p->column == col, "problem %zu at %u:%u, want %u:%u: %s", i, p->line,
	       p->column, line, col, p->message);
	if (path)
		CHECK_STR(p->path, path);
	else
		CHECKF(p->path == NULL, "problem %zu: path \"%s\", want none", i, p->path);
	CHECKF(p->message && strstr(p->message, msg_has), "problem %zu: message \"%s\" lacks \"%s\"", i,
	       p->message ? p->message : "(null)", msg_has);
}

/* ---- typed values ----------------------------------------------------------------- */

static void test_fs_group_string_and_int(void)
{
	static const char *const texts[] = {"fs_group: '8877'\n", "fs_group: \"8877\"\n",
					    "fs_group: 8877\n"};
	for (size_t i = 0; i < 3; i++) {
		berth_spec_set *set = must(texts[i]);
		const berth_spec *s = only(set);
		if (s) {
			CHECK_INT(s->fs_group.v, 8877);
			CHECK(s->fs_group.set);
			CHECK_INT(s->fs_group.pos.line, 1);
			CHECK(!s->run_as_user.set);
			CHECK(!s->run_as_group.set);
			CHECK_INT(s->run_as_user.v, 0);
		}
		berth_spec_set_free(set);
	}
}

static void test_run_as_user_group(void)
{
	berth_spec_set *set = must("run_as_user: 1000\nrun_as_group: '2000'\n");
	const berth_spec *s = only(set);
	if (s) {
		CHECK(s->run_as_user.set);
		CHECK_INT(s->run_as_user.v, 1000);
		CHECK_POS(s->run_as_user.pos, 1, 14);
		CHECK(s->run_as_group.set);
		CHECK_INT(s->run_as_group.v, 2000);
		CHECK(!s->fs_group.set);
	}
	berth_spec_set_free(set);
}

static void test_int_not_padded(void)
{
	berth_error *err = must_fail("fs_group: \" 8877\"\n", BERTH_ETYPE);
	check_problem(err, 0, BERTH_ETYPE, BERTH_ERROR, 1, 12, "fs_group", "\" 8877\" is not an integer");
	berth_error_free(err);
	err = must_fail("fs_group: \"8877 \"\n", BERTH_ETYPE);
	check_problem(err, 0, BERTH_ETYPE, BERTH_ERROR, 1, 12, "fs_group", "is not an integer");
	berth_error_free(err);
	/* leading white space of any kind is refused */
	berth_error_free(must_fail("fs_group: \"\\t8877\"\n", BERTH_ETYPE));
	berth_error_free(must_fail("fs_group: \"\\n8877\"\n", BERTH_ETYPE));

}

static void test_int_spellings(void)
{
	/* YAML 1.2 core schema: +12, 0x1f and 0o17 are integers */
	berth_spec_set *set = must("timeout: +12\nretries: 0x1f\nrun_as_user: 0o17\n");
	const berth_spec *s = only(set);
	if (s) {
		CHECK_INT(s->timeout.v, 12);
		CHECK_INT(s->retries.v, 31);
		CHECK_INT(s->run_as_user.v, 15);
	}
	berth_spec_set_free(set);
}

static void test_resources_cpu_string(void)
{
	berth_spec_set *set = must("resources:\n  cpu: \"8\"\n");
	const berth_spec *s = only(set);
	if (s) {
		CHECK(s->resources.set);
		CHECK(s->resources.cpu.requests.set);
		CHECK(!s->resources.cpu.limits.set);
		CHECK(qeq(&s->resources.cpu.requests.q, "8"));
		CHECK(qeq(&s->resources.cpu.requests.q, "8000m"));
		CHECK(!qeq(&s->resources.cpu.requests.q, "9"));
		CHECK_STR(qfmt(&s->resources.cpu.requests.q), "8");
		CHECK_INT(berth_quantity_milli(&s->resources.cpu.requests.q), 8000);
		CHECK_INT(s->resources.cpu.requests.pos.line, 2);
		/* a double-quoted scalar is placed at its first character, after the quote */
		CHECK_INT(s->resources.cpu.requests.pos.column, 9);
		CHECK(!s->resources.mem.requests.set && !s->resources.mem.limits.set);
		CHECK(!s->resources.gpu.requests.set && !s->resources.gpu.limits.set);
		CHECK(!s->resources.disk.requests.set && !s->resources.disk.limits.set);
		CHECK(s->resources.gpu_type.s == NULL);
	}
	berth_spec_set_free(set);
}

static void test_resources_spellings(void)
{
	berth_spec_set *set = must("resources:\n"
				   "  cpu: {requests: \"10\", limits: \"12\"}\n"
				   "  mem: 32Gi\n"
				   "  gpu: \"1\"\n"
				   "  disk: 100Gi\n"
				   "  gpu_type: nvidia.com/gpu\n");
	const berth_spec *s = only(set);
	if (s) {
		const berth_resources *r = &s->resources;
		CHECK(r->set);
		CHECK_POS(r->pos, 2, 3);
		CHECK(r->cpu.requests.set && r->cpu.limits.set);
		CHECK(qeq(&r->cpu.requests.q, "10"));
		CHECK(qeq(&r->cpu.limits.q, "12"));
		CHECK_STR(qfmt(&r->cpu.limits.q), "12");
		CHECK_POS(r->cpu.requests.pos, 2, 20);
		CHECK_POS(r->cpu.limits.pos, 2, 34);
		CHECK_POS(r->cpu.pos, 2, 8);

		CHECK(r->mem.requests.set);
		CHECK(!r->mem.limits.set);
		CHECK(qeq(&r->mem.requests.q, "32Gi"));
		CHECK(qeq(&r->mem.requests.q, "32768Mi"));
		CHECK_STR(qfmt(&r->mem.requests.q), "32Gi");
		CHECK_INT(berth_quantity_value(&r->mem.requests.q), 34359738368LL);
		CHECK_POS(r->mem.requests.pos, 3, 8);

		/* the short form of gpu is the limit */
		CHECK(!r->gpu.requests.set);
		CHECK(r->gpu.limits.set);
		CHECK(qeq(&r->gpu.limits.q, "1"));
		CHECK_INT(berth_quantity_value(&r->gpu.limits.q), 1);
		CHECK_POS(r->gpu.limits.pos, 4, 9);

		CHECK(r->disk.requests.set);
		CHECK(!r->disk.limits.set);
		CHECK_STR(qfmt(&r->disk.requests.q), "100Gi");

		CHECK_STR(r->gpu_type.s, "nvidia.com/gpu");
		CHECK_POS(r->gpu_type.pos, 6, 13);
	}
	berth_spec_set_free(set);
}

static void test_resources_numbers(void)
{
	/* integers and floats are quantities too; canonical forms as Kubernetes prints */
	berth_spec_set *set = must("resources: {cpu: 0.5, mem: 1.5Gi, disk: 1000M, gpu: {limits: 2}}\n");
	const berth_spec *s = only(set);
	if (s) {
		CHECK_STR(qfmt(&s->resources.cpu.requests.q), "500m");
		CHECK_STR(qfmt(&s->resources.mem.requests.q), "1536Mi");
		CHECK_STR(qfmt(&s->resources.disk.requests.q), "1G");
		CHECK(s->resources.gpu.limits.set);
		CHECK(!s->resources.gpu.requests.set);
		CHECK_STR(qfmt(&s->resources.gpu.limits.q), "2");
	}
	berth_spec_set_free(set);
}

static void check_selector(const berth_kvlist *l)
{
	CHECK(l->set);
	if (!CHECK_INT_RET(l->n, 2))
		return;
	CHECK_STR(l->items[0].key.s, "zone");
	CHECK_STR(l->items[0].value.s, "us-east-1a");
	CHECK_STR(l->items[1].key.s, "nvidia.com/gpu.product");
	CHECK_STR(l->items[1].value.s, "A100");
}

static void test_node_selector_list_and_map(void)
{
	berth_spec_set *a = must("node_selector:\n"
				 "  - key: zone\n"
				 "    value: us-east-1a\n"
				 "  - {key: nvidia.com/gpu.product, value: A100}\n");
	berth_spec_set *b = must("node_selector: {zone: us-east-1a, nvidia.com/gpu.product: A100}\n");
	const berth_spec *sa = only(a), *sb = only(b);
	if (sa) {
		check_selector(&sa->node_selector);
		if (sa->node_selector.n == 2) {
			CHECK_POS(sa->node_selector.items[0].key.pos, 2, 10);
			CHECK_POS(sa->node_selector.items[0].value.pos, 3, 12);
			CHECK_POS(sa->node_selector.items[1].pos, 4, 5);
		}
		CHECK_POS(sa->node_selector.pos, 2, 3);
	}
	if (sb) {
		check_selector(&sb->node_selector);
		if (sb->node_selector.n == 2) {
			CHECK_POS(sb->node_selector.items[0].key.pos, 1, 17);
			CHECK_POS(sb->node_selector.items[0].pos, 1, 17);
			CHECK_POS(sb->node_selector.items[0].value.pos, 1, 23);
		}
	}
	berth_spec_set_free(a);
	berth_spec_set_free(b);
}

static void test_kv_item_with_bad_value(void)
{
	/* an item whose value is misspelt or not a string: reported, no crash
	 * (HEAD 079811e crashed in check_labels on the NULL value) */
	berth_error *err = must_fail("node_selector: [{key: a, valeu: b}]\n", BERTH_EUNKNOWN);
	CHECK_INT(berth_error_errors(err), 1);
	check_problem(err, 0, BERTH_EUNKNOWN, BERTH_ERROR, 1, 26, "node_selector[0].valeu",
		      "unknown key \"valeu\"; did you mean \"value\"?");
	berth_error_free(err);
	err = must_fail("node_selector: [{key: a, value: [x]}]\n", BERTH_ETYPE);
	CHECK_INT(berth_error_errors(err), 1);
	check_problem(err, 0, BERTH_ETYPE, BERTH_ERROR, 1, 33, "node_selector[0].value",
		      "must be a string, not a list");
	berth_error_free(err);
	err = must_fail("envs: [{name: A, valeu: b}, {value: c}]\n", BERTH_EUNKNOWN);
	CHECK_INT(berth_error_errors(err), 2);
	check_problem(err, 0, BERTH_EUNKNOWN, BERTH_ERROR, 1, 18, "envs[0].valeu", "unknown key \"valeu\"");
	check_problem(err, 1, BERTH_EMISSING, BERTH_ERROR, 1, 29, "envs[1]", "\"name\" is required");
	berth_error_free(err);
}

static void test_envs_labels_secrets_args(void)
{
	berth_spec_set *set = must("envs:\n"
				   "  - name: HF_HOME\n"
				   "    value: /data/hf\n"
				   "  - {\"name\": \"EPOCHS\", \"value\": \"3\"}\n"
				   "  - name: EMPTY\n"
				   "labels: {team: ml, tier: \"\"}\n"
				   "secrets: [s3-creds, HF_TOKEN]\n"
				   "args: [--epochs, \"3\", 4]\n");
	const berth_spec *s = only(set);
	if (s) {
		CHECK(s->envs.set);
		if (CHECK_INT_RET(s->envs.n, 3)) {
			CHECK_STR(s->envs.items[0].key.s, "HF_HOME");
			CHECK_STR(s->envs.items[0].value.s, "/data/hf");
			CHECK_STR(s->envs.items[1].key.s, "EPOCHS");
			CHECK_STR(s->envs.items[1].value.s, "3");
			/* {name: X} alone: an empty value */
			CHECK_STR(s->envs.items[2].key.s, "EMPTY");
			CHECK_STR(s->envs.items[2].value.s, "");
			CHECK_POS(s->envs.items[0].key.pos, 2, 11);
		}
		CHECK(s->labels.set);
		if (CHECK_INT_RET(s->labels.n, 2)) {
			CHECK_STR(s->labels.items[0].key.s, "team");
			CHECK_STR(s->labels.items[0].value.s, "ml");
			CHECK_STR(s->labels.items[1].key.s, "tier");
			CHECK_STR(s->labels.items[1].value.s, "");
		}
		CHECK(s->secrets.set);
		if (CHECK_INT_RET(s->secrets.n, 2)) {
			CHECK_STR(s->secrets.items[0].s, "s3-creds");
			CHECK_STR(s->secrets.items[1].s, "HF_TOKEN");
			CHECK_POS(s->secrets.items[1].pos, 7, 21);
		}
		CHECK(s->args.set);
		if (CHECK_INT_RET(s->args.n, 3)) {
			CHECK_STR(s->args.items[0].s, "--epochs");
			CHECK_STR(s->args.items[1].s, "3");
			CHECK_STR(s->args.items[2].s, "4"); /* numbers keep their spelling */
		}
		CHECK(!s->node_selector.set);
		CHECK_INT(s->node_selector.n, 0);
	}
	berth_spec_set_free(set);
}

static void test_envs_as_map(void)
{
	berth_spec_set *set = must("envs: {A: \"1\", B: ~}\n");
	const berth_spec *s = only(set);
	if (s && CHECK_INT_RET(s->envs.n, 2)) {
		CHECK_STR(s->envs.items[0].key.s, "A");
		CHECK_STR(s->envs.items[0].value.s, "1");
		CHECK_STR(s->envs.items[1].key.s, "B");
		CHECK_STR(s->envs.items[1].value.s, ""); /* null: empty */
	}
	berth_spec_set_free(set);
}

static void test_function_inline_and_ref(void)
{
	berth_spec_set *a = must("function:\n"
				 "  name: train\n"
				 "  image: python:3.11\n"
				 "  command: [python, train.py]\n"
				 "  args: [--lr, \"0.1\"]\n"
				 "  image_pull_policy: IfNotPresent\n");
	berth_spec_set *b = must("function: registered-name\n");
	const berth_spec *sa = only(a), *sb = only(b);
	if (sa) {
		const berth_function *f = &sa->function;
		CHECK(f->set);
		CHECK(f->ref.s == NULL);
		CHECK_STR(f->name.s, "train");
		CHECK_STR(f->image.s, "python:3.11");
		CHECK_STR(f->image_pull_policy.s, "IfNotPresent");
		CHECK(f->command.set);
		if (CHECK_INT_RET(f->command.n, 2)) {
			CHECK_STR(f->command.items[0].s, "python");
			CHECK_STR(f->command.items[1].s, "train.py");
			CHECK_POS(f->command.items[1].pos, 4, 21);
		}
		if (CHECK_INT_RET(f->args.n, 2)) {
			CHECK_STR(f->args.items[0].s, "--lr");
			CHECK_STR(f->args.items[1].s, "0.1");
		}
		CHECK_POS(f->pos, 2, 3);
		CHECK_POS(f->name.pos, 2, 9);
		CHECK(!sa->args.set);
	}
	if (sb) {
		CHECK(sb->function.set);
		CHECK_STR(sb->function.ref.s, "registered-name");
		CHECK_POS(sb->function.ref.pos, 1, 11);
		CHECK(sb->function.name.s == NULL);
		CHECK(sb->function.image.s == NULL);
		CHECK(!sb->function.command.set);
	}
	berth_spec_set_free(a);
	berth_spec_set_free(b);
}

static void test_action_enum(void)
{
	static const struct {
		const char *text;
		berth_action action;
		const char *name;
	} rows[] = {
		{"project: p\n", BERTH_ACTION_JOB, NULL},
		{"action: job\n", BERTH_ACTION_JOB, "job"},
		{"action: serve\n", BERTH_ACTION_SERVE, "serve"},
		{"action: deploy\n", BERTH_ACTION_DEPLOY, "deploy"},
		{"action: cronjob\nschedule: \"0 3 * * *\"\n", BERTH_ACTION_CRONJOB, "cronjob"},
	};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(rows); i++) {
		berth_spec_set *set = must(rows[i].text);
		const berth_spec *s = only(set);
		if (s) {
			CHECKF(s->action == rows[i].action, "row %zu: action %d", i, (int)s->action);
			if (rows[i].name)
				CHECK_STR(s->action_name.s, rows[i].name);
			else
				CHECK(s->action_name.s == NULL);
		}
		berth_spec_set_free(set);
	}
	CHECK_STR(berth_action_name(BERTH_ACTION_JOB), "job");
	CHECK_STR(berth_action_name(BERTH_ACTION_SERVE), "serve");
	CHECK_STR(berth_action_name(BERTH_ACTION_DEPLOY), "deploy");
	CHECK_STR(berth_action_name(BERTH_ACTION_CRONJOB), "cronjob");
	CHECK_STR(berth_action_name((berth_action)99), "?");

	berth_error *err = must_fail("action: srve\n", BERTH_EINVALID);
	CHECK_INT(berth_error_errors(err), 1);
	check_problem(err, 0, BERTH_EINVALID, BERTH_ERROR, 1, 9, "action",
		      "\"srve\" is not one of job, serve, deploy, cronjob; did you mean \"serve\"?");
	berth_error_free(err);
}

static void test_preemption_enum(void)
{
	static const struct {
		const char *text;
		berth_preemption p;
	} rows[] = {
		{"project: p\n", BERTH_PREEMPTION_UNSET},
		{"preemption_mode: allow\n", BERTH_PREEMPTION_ALLOW},
		{"preemption_mode: constrain\n", BERTH_PREEMPTION_CONSTRAIN},
		{"preemption_mode: prevent\n", BERTH_PREEMPTION_PREVENT},
		{"preemption_mode: none\n", BERTH_PREEMPTION_NONE},
		/* any case, as MLRun's prose writes it (seed 002: "Prevent: Default.") */
		{"preemption_mode: Prevent\n", BERTH_PREEMPTION_PREVENT},
		{"preemption_mode: ALLOW\n", BERTH_PREEMPTION_ALLOW},
		{"preemption_mode: Constrain\n", BERTH_PREEMPTION_CONSTRAIN},
	};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(rows); i++) {
		berth_spec_set *set = must(rows[i].text);
		const berth_spec *s = only(set);
		if (s) {
			CHECKF(s->preemption_mode == rows[i].p, "row %zu: preemption %d", i,
			       (int)s->preemption_mode);
			/* the name is berth's spelling from then on (explain, merge) */
			if (rows[i].p != BERTH_PREEMPTION_UNSET)
				CHECK_STR(s->preemption_name.s, berth_preemption_name(rows[i].p));
		}
		berth_spec_set_free(set);
	}
	CHECK_STR(berth_preemption_name(BERTH_PREEMPTION_UNSET), "unset");
	CHECK_STR(berth_preemption_name(BERTH_PREEMPTION_PREVENT), "prevent");
	CHECK_STR(berth_preemption_name(BERTH_PREEMPTION_NONE), "none");
	CHECK_STR(berth_preemption_name((berth_preemption)42), "unset");

	/* "unset" is not a value a user can write */
	berth_error *err = must_fail("preemption_mode: unset\n", BERTH_EINVALID);
	check_problem(err, 0, BERTH_EINVALID, BERTH_ERROR, 1, 18, "preemption_mode",
		      "\"unset\" is not one of allow, constrain, prevent, none");
	berth_error_free(err);
}

static void test_volumes_every_type(void)
{
	berth_spec_set *set = must("volumes:\n"
				   "  - volume_type: persistent_volume_claim\n"
				   "    name: data\n"
				   "    mount_path: /data\n"
				   "    spec: {size: 10Gi, storage_class: fast-ssd, access_mode: ReadWriteOnce}\n"
				   "  - volume_type: empty_dir\n"
				   "    name: scratch\n"
				   "    mount_path: /scratch\n"
				   "    spec: {size: 1Gi, medium: Memory}\n"
				   "  - {volume_type: config_map, name: cfg, mount_path: /etc/cfg, spec: {name: my-config}}\n"
				   "  - {volume_type: secret, name: creds, mount_path: /etc/creds, spec: {name: my-secret}}\n"
				   "  - {volume_type: shared_volume, name: shared, mount_path: /shared, spec: {claim_name: team-pvc}}\n"
				   "  - {volume_type: empty_dir, name: tmp, mount_path: /tmp}\n");
	const berth_spec *s = only(set);
	if (s && CHECK_INT_RET(s->nvolumes, 6)) {
		const berth_volume *v = s->volumes;
		CHECK_POS(s->volumes_pos, 2, 3);

		CHECK_INT(v[0].type, BERTH_VOLUME_PVC);
		CHECK_STR(v[0].type_name.s, "persistent_volume_claim");
		CHECK_STR(v[0].name.s, "data");
		CHECK_STR(v[0].mount_path.s, "/data");
		CHECK(v[0].size.set);
		CHECK_STR(qfmt(&v[0].size.q), "10Gi");
		CHECK_STR(v[0].storage_class.s, "fast-ssd");
		CHECK_STR(v[0].access_mode.s, "ReadWriteOnce");
		CHECK(v[0].medium.s == NULL);
		CHECK(v[0].ref.s == NULL);
		CHECK_POS(v[0].pos, 2, 5);
		CHECK_POS(v[0].name.pos, 3, 11);
		CHECK_POS(v[0].size.pos, 5, 18);

		CHECK_INT(v[1].type, BERTH_VOLUME_EMPTY_DIR);
		CHECK_STR(v[1].name.s, "scratch");
		CHECK_STR(v[1].mount_path.s, "/scratch");
		CHECK_STR(qfmt(&v[1].size.q), "1Gi");
		CHECK_STR(v[1].medium.s, "Memory");
		CHECK(v[1].storage_class.s == NULL);

		CHECK_INT(v[2].type, BERTH_VOLUME_CONFIG_MAP);
		CHECK_STR(v[2].type_name.s, "config_map");
		CHECK_STR(v[2].ref.s, "my-config");
		CHECK(!v[2].size.set);

		CHECK_INT(v[3].type, BERTH_VOLUME_SECRET);
		CHECK_STR(v[3].ref.s, "my-secret");
		CHECK_STR(v[3].mount_path.s, "/etc/creds");

		CHECK_INT(v[4].type, BERTH_VOLUME_SHARED);
		CHECK_STR(v[4].ref.s, "team-pvc");
		CHECK_STR(v[4].name.s, "shared");

		CHECK_INT(v[5].type, BERTH_VOLUME_EMPTY_DIR);
		CHECK(!v[5].size.set);
		CHECK(v[5].medium.s == NULL);
	}
	berth_spec_set_free(set);

	CHECK_STR(berth_volume_type_name(BERTH_VOLUME_PVC), "persistent_volume_claim");
	CHECK_STR(berth_volume_type_name(BERTH_VOLUME_EMPTY_DIR), "empty_dir");
	CHECK_STR(berth_volume_type_name(BERTH_VOLUME_CONFIG_MAP), "config_map");
	CHECK_STR(berth_volume_type_name(BERTH_VOLUME_SECRET), "secret");
	CHECK_STR(berth_volume_type_name(BERTH_VOLUME_SHARED), "shared_volume");
	CHECK_STR(berth_volume_type_name((berth_volume_type)9), "?");
}

static void test_volume_spec_keys_follow_type(void)
{
	/* claim_name belongs to shared_volume, not to config_map */
	berth_error *err = must_fail("volumes:\n"
				     "  - volume_type: config_map\n"
				     "    name: cfg\n"
				     "    mount_path: /cfg\n"
				     "    spec: {claim_name: x}\n",
				     BERTH_EMISSING); /* problems are sorted: line 2 first */
	CHECK_INT(berth_error_errors(err), 2);
	check_problem(err, 0, BERTH_EMISSING, BERTH_ERROR, 2, 5, "volumes[0].spec.name",
		      "a config_map volume needs spec.name");
	check_problem(err, 1, BERTH_EUNKNOWN, BERTH_ERROR, 5, 12, "volumes[0].spec.claim_name",
		      "unknown key \"claim_name\"");
	berth_error_free(err);
}

static void test_tolerations(void)
{
	berth_spec_set *set = must("tolerations:\n"
				   "  - key: nvidia.com/gpu\n"
				   "    operator: Exists\n"
				   "    effect: NoExecute\n"
				   "    tolerationSeconds: 300\n"
				   "  - {key: dedicated, operator: Equal, value: ml, effect: NoSchedule}\n");
	const berth_spec *s = only(set);
	if (s && CHECK_INT_RET(s->ntolerations, 2)) {
		const berth_toleration *t = s->tolerations;
		CHECK_POS(s->tolerations_pos, 2, 3);
		CHECK_STR(t[0].key.s, "nvidia.com/gpu");
		CHECK_STR(t[0].op.s, "Exists");
		CHECK(t[0].value.s == NULL);
		CHECK_STR(t[0].effect.s, "NoExecute");
		CHECK(t[0].seconds.set);
		CHECK_INT(t[0].seconds.v, 300);
		CHECK_POS(t[0].seconds.pos, 5, 24);
		CHECK_POS(t[0].pos, 2, 5);
		CHECK_STR(t[1].key.s, "dedicated");
		CHECK_STR(t[1].op.s, "Equal");
		CHECK_STR(t[1].value.s, "ml");
		CHECK_STR(t[1].effect.s, "NoSchedule");
		CHECK(!t[1].seconds.set);
	}
	berth_spec_set_free(set);

	/* tolerationSeconds without NoExecute is refused */
	berth_error *err = must_fail("tolerations: [{key: a, effect: NoSchedule, tolerationSeconds: 5}]\n",
				     BERTH_EINVALID);
	check_problem(err, 0, BERTH_EINVALID, BERTH_ERROR, 1, 63, "tolerations[0].tolerationSeconds",
		      "only allowed with effect NoExecute");
	berth_error_free(err);
}

static void test_affinity_kept_as_node(void)
{
	berth_spec_set *set = must("affinity:\n"
				   "  nodeAffinity:\n"
				   "    requiredDuringSchedulingIgnoredDuringExecution:\n"
				   "      nodeSelectorTerms:\n"
				   "        - matchExpressions:\n"
				   "            - {key: nvidia.com/gpu.product, operator: In, values: [A100, H100]}\n");
	const berth_spec *s = only(set);
	if (s && CHECK(s->affinity != NULL)) {
		const berth_node *a = s->affinity;
		CHECK_INT(a->kind, BERTH_NODE_MAP);
		CHECK_INT(a->len, 1);
		CHECK_POS(a->pos, 2, 3);
		const berth_node *na = berth_node_get(a, "nodeAffinity");
		CHECK(berth_node_get(a, "podAffinity") == NULL);
		CHECK(berth_node_get(a, "nodeaffinity") == NULL);
		const berth_node *req = berth_node_get(na, "requiredDuringSchedulingIgnoredDuringExecution");
		const berth_node *terms = berth_node_get(req, "nodeSelectorTerms");
		if (CHECK(terms && terms->kind == BERTH_NODE_SEQ && terms->len == 1)) {
			const berth_node *exprs = berth_node_get(terms->u.items[0], "matchExpressions");
			if (CHECK(exprs && exprs->kind == BERTH_NODE_SEQ && exprs->len == 1)) {
				const berth_node *e = exprs->u.items[0];
				const berth_node *key = berth_node_get(e, "key");
				const berth_node *vals = berth_node_get(e, "values");
				if (CHECK(key && key->kind == BERTH_NODE_SCALAR)) {
					CHECK_STR(key->u.text, "nvidia.com/gpu.product");
					CHECK_INT(key->len, 22);
					CHECK_INT(key->type, BERTH_SCALAR_STR);
					CHECK_POS(key->pos, 6, 21);
				}
				if (CHECK(vals && vals->kind == BERTH_NODE_SEQ && vals->len == 2)) {
					CHECK_STR(vals->u.items[1]->u.text, "H100");
					CHECK_POS(vals->u.items[1]->pos, 6, 74);
				}
				CHECK_STR(berth_node_kind_name(e), "a map");
				CHECK_STR(berth_node_kind_name(vals), "a list");
			}
		}
		/* a node, not a map: no key */
		CHECK(berth_node_get(terms, "x") == NULL);
		CHECK(berth_node_get(NULL, "x") == NULL);
	}
	berth_spec_set_free(set);

	/* a bad affinity is not kept, and the error points into it */
	berth_error *err = must_fail("affinity:\n  nodeAffinity:\n    preferredDuringSchedulingIgnoredDuringExecution:\n"
				     "      - {weight: 0, preference: {}}\n",
				     BERTH_ERANGE);
	check_problem(err, 0, BERTH_ERANGE, BERTH_ERROR, 4, 18,
		      "affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
		      "0 is out of range (1 to 100)");
	berth_error_free(err);
}

static void test_inputs_node(void)
{
	berth_spec_set *set = must("inputs:\n"
				   "  lr: 0.1\n"
				   "  epochs: 3\n"
				   "  dataset: s3://bucket/data.csv\n"
				   "  flags: [true, null, \"x\"]\n"
				   "  nested: {a: {b: c}}\n");
	const berth_spec *s = only(set);
	if (s && CHECK(s->inputs != NULL)) {
		const berth_node *in = s->inputs, *n;
		CHECK_INT(in->kind, BERTH_NODE_MAP);
		CHECK_INT(in->len, 5);
		if (CHECK((n = berth_node_get(in, "lr")) != NULL)) {
			CHECK_INT(n->type, BERTH_SCALAR_FLOAT);
			CHECK_STR(n->u.text, "0.1");
		}
		if (CHECK((n = berth_node_get(in, "epochs")) != NULL)) {
			CHECK_INT(n->type, BERTH_SCALAR_INT);
			CHECK_STR(n->u.text, "3");
			CHECK_POS(n->pos, 3, 11);
			CHECK_STR(berth_node_kind_name(n), "an integer");
		}
		if (CHECK((n = berth_node_get(in, "dataset")) != NULL))
			CHECK_STR(n->u.text, "s3://bucket/data.csv");
		if (CHECK((n = berth_node_get(in, "flags")) != NULL && n->kind == BERTH_NODE_SEQ &&
			  n->len == 3)) {
			CHECK_INT(n->u.items[0]->type, BERTH_SCALAR_BOOL);
			CHECK_INT(n->u.items[1]->type, BERTH_SCALAR_NULL);
			CHECK_INT(n->u.items[2]->type, BERTH_SCALAR_STR);
			CHECK_STR(berth_node_kind_name(n->u.items[0]), "a boolean");
			CHECK_STR(berth_node_kind_name(n->u.items[1]), "null");
			CHECK_STR(berth_node_kind_name(n->u.items[2]), "a string");
		}
		n = berth_node_get(berth_node_get(berth_node_get(in, "nested"), "a"), "b");
		if (CHECK(n != NULL))
			CHECK_STR(n->u.text, "c");
		/* weight counts every node of the subtree: the map, its 5 keys,
		 * lr, epochs, dataset, flags (1 + 3 items), nested (1 + a + {b: c}) */
		CHECK_INT(in->weight, 1 + 5 + 1 + 1 + 1 + (1 + 3) + (1 + 1 + 3));
	}
	berth_spec_set_free(set);
}

static void test_scalars_keep_spelling(void)
{
	/* strings, numbers and booleans keep their spelling as strings */
	berth_spec_set *set = must("project: \"007\"\nname: 'run-1'\nprofile: 1xa100\nschedule: ~\n");
	const berth_spec *s = only(set);
	if (s) {
		CHECK_STR(s->project.s, "007");
		CHECK_STR(s->name.s, "run-1");
		CHECK_STR(s->profile.s, "1xa100");
		CHECK(s->schedule.s == NULL); /* null: not given */
		CHECK_POS(s->project.pos, 1, 11);
		CHECK_POS(s->name.pos, 2, 8);
		CHECK_POS(s->profile.pos, 3, 10);
	}
	berth_spec_set_free(set);
}

/* ---- positions -------------------------------------------------------------------- */

static void test_positions_plain_and_quoted(void)
{
	berth_spec_set *set = must("# a comment\n"
				   "resources:\n"
				   "  cpu: 8\n"
				   "  mem: '4Gi'\n"
				   "  disk: \"1Gi\"\n"
				   "timeout:    60\n");
	const berth_spec *s = only(set);
	if (s) {
		CHECK_POS(s->pos, 2, 1);
		CHECK_POS(s->resources.pos, 3, 3);
		CHECK_POS(s->resources.cpu.requests.pos, 3, 8);  /* plain: its first character */
		CHECK_POS(s->resources.mem.requests.pos, 4, 9);  /* single-quoted: after the quote */
		CHECK_POS(s->resources.disk.requests.pos, 5, 10); /* double-quoted: after the quote */
		CHECK_POS(s->timeout.pos, 6, 13);
		CHECK_INT(s->timeout.v, 60);
	}
	berth_spec_set_free(set);
}

/* ---- documents and JSON ------------------------------------------------------------ */

static void test_multi_document(void)
{
	berth_spec_set *set = must("action: job\n"
				   "---\n"
				   "action: serve\n"
				   "replicas: 2\n"
				   "---\n"
				   "# third\n"
				   "action: deploy\n"
				   "---\n");
	if (CHECK_INT_RET(berth_spec_set_count(set), 3)) {
		const berth_spec *s0 = berth_spec_set_get(set, 0), *s1 = berth_spec_set_get(set, 1),
				 *s2 = berth_spec_set_get(set, 2);
		CHECK_INT(s0->doc, 0);
		CHECK_INT(s1->doc, 1);
		CHECK_INT(s2->doc, 2);
		CHECK_INT(s0->action, BERTH_ACTION_JOB);
		CHECK_INT(s1->action, BERTH_ACTION_SERVE);
		CHECK_INT(s1->replicas.v, 2);
		CHECK_INT(s2->action, BERTH_ACTION_DEPLOY);
		CHECK_STR(s0->file, "t.yaml");
		CHECK_STR(s2->file, "t.yaml");
		CHECK_POS(s1->pos, 3, 1);
		CHECK_POS(s2->pos, 7, 1);
		CHECK_POS(s1->replicas.pos, 4, 11);
	}
	CHECK(berth_spec_set_get(set, 3) == NULL);
	CHECK(berth_spec_set_get(NULL, 0) == NULL);
	CHECK_INT(berth_spec_set_count(NULL), 0);
	berth_spec_set_free(set);
	berth_spec_set_free(NULL);
}

static void test_empty_middle_document(void)
{
	/* an empty document is skipped; doc keeps the index in the file */
	berth_spec_set *set = must("---\naction: job\n---\n---\naction: serve\n");
	if (CHECK_INT_RET(berth_spec_set_count(set), 2)) {
		CHECK_INT(berth_spec_set_get(set, 0)->doc, 0);
		CHECK_INT(berth_spec_set_get(set, 1)->doc, 2);
		CHECK_INT(berth_spec_set_get(set, 1)->action, BERTH_ACTION_SERVE);
	}
	berth_spec_set_free(set);
}

static void test_errors_across_documents(void)
{
	berth_error *err = must_fail("fs_group: x\n---\nrun_as_user: y\n---\nretries: z\n", BERTH_ETYPE);
	CHECK_INT(berth_error_errors(err), 3);
	check_problem(err, 0, BERTH_ETYPE, BERTH_ERROR, 1, 11, "fs_group", "\"x\" is not an integer");
	check_problem(err, 1, BERTH_ETYPE, BERTH_ERROR, 3, 14, "run_as_user", "\"y\" is not an integer");
	check_problem(err, 2, BERTH_ETYPE, BERTH_ERROR, 5, 10, "retries", "\"z\" is not an integer");
	berth_error_free(err);
}

static void test_json_single(void)
{
	berth_spec_set *set = must("{\"action\": \"serve\", \"replicas\": 2,\n"
				   " \"resources\": {\"cpu\": \"1\", \"mem\": 1073741824}}");
	const berth_spec *s = only(set);
	if (s) {
		CHECK_INT(s->action, BERTH_ACTION_SERVE);
		CHECK_INT(s->replicas.v, 2);
		CHECK(qeq(&s->resources.mem.requests.q, "1Gi"));
		CHECK_POS(s->replicas.pos, 1, 33);
		CHECK_POS(s->resources.cpu.requests.pos, 2, 24);
	}
	berth_spec_set_free(set);
}

static void test_json_stream(void)
{
	berth_spec_set *set = must("{\"action\": \"job\", \"resources\": {\"cpu\": 2}}\n"
				   "{\"action\": \"serve\", \"replicas\": 1}\n"
				   "\n"
				   "{\"action\": \"deploy\",\n  \"replicas\": 3}");
	if (CHECK_INT_RET(berth_spec_set_count(set), 3)) {
		const berth_spec *s0 = berth_spec_set_get(set, 0), *s1 = berth_spec_set_get(set, 1),
				 *s2 = berth_spec_set_get(set, 2);
		CHECK_INT(s0->action, BERTH_ACTION_JOB);
		CHECK(qeq(&s0->resources.cpu.requests.q, "2"));
		CHECK_INT(s1->action, BERTH_ACTION_SERVE);
		CHECK_INT(s1->replicas.v, 1);
		CHECK_INT(s2->action, BERTH_ACTION_DEPLOY);
		CHECK_INT(s2->replicas.v, 3);
		CHECK_INT(s0->doc, 0);
		CHECK_INT(s1->doc, 1);
		CHECK_INT(s2->doc, 2);
		CHECK_POS(s1->pos, 2, 1);
		CHECK_POS(s1->replicas.pos, 2, 33);
		CHECK_POS(s2->pos, 4, 1);
		CHECK_POS(s2->replicas.pos, 5, 15);
	}
	berth_spec_set_free(set);
}

static void test_json_error_in_second_value(void)
{
	berth_error *err = must_fail("{\"action\": \"job\"}\n"
				     "{\"action\": \"serve\", \"replicas\": \"x\"}\n",
				     BERTH_ETYPE);
	CHECK_INT(berth_error_errors(err), 1);
	check_problem(err, 0, BERTH_ETYPE, BERTH_ERROR, 2, 34, "replicas", "\"x\" is not an integer");
	berth_error_free(err);

	err = must_fail("{\"action\": \"job\"}\n\n{\"resourcs\": {}}\n", BERTH_EUNKNOWN);
	check_problem(err, 0, BERTH_EUNKNOWN, BERTH_ERROR, 3, 3, "resourcs",
		      "unknown key \"resourcs\"; did you mean \"resources\"?");
	berth_error_free(err);

	/* a second value on the same line: columns go on from the first */
	err = must_fail("{\"action\": \"job\"} {\"timeout\": \"x\"}", BERTH_ETYPE);
	check_problem(err, 0, BERTH_ETYPE, BERTH_ERROR, 1, 32, "timeout", "\"x\" is not an integer");
	berth_error_free(err);

	/* columns are counted on from value to value: a third after an é in the
	 * second, and a value on the last line of one over two lines */
	err = must_fail("{} {\"args\": [\"\xc3\xa9\"]} {\"timeout\": \"x\"}", BERTH_ETYPE);
	check_problem(err, 0, BERTH_ETYPE, BERTH_ERROR, 1, 33, "timeout", "\"x\" is not an integer");
	berth_error_free(err);
	err = must_fail("{} {\"action\": \"job\",\n \"retries\": 1} {\"timeout\": \"x\"}", BERTH_ETYPE);
	check_problem(err, 0, BERTH_ETYPE, BERTH_ERROR, 2, 29, "timeout", "\"x\" is not an integer");
	berth_error_free(err);

	/* a syntax error in the second value */
	err = must_fail("{\"action\": \"job\"}\n{\"action\": \"job\",}\n", BERTH_ESYNTAX);
	CHECK_INT(berth_error_count(err), 1);
	const berth_problem *p = berth_error_get(err, 0);
	if (CHECK(p != NULL)) {
		CHECK_INT(p->line, 2);
		CHECK_STR(p->file, "t.yaml");
		CHECK(p->path == NULL);
	}
	berth_error_free(err);
}

/* A stream of JSON values is read with one parser, each object or array cut
 * where its brackets close: brackets and quotes inside strings do not cut,
 * and what is neither is read with the rest of the input, as before. */
static void test_json_stream_cut(void)
{
	berth_spec_set *set = must("{\"args\": [\"}]\\\"{[\", \"\\\\\"], \"action\": \"job\"}"
				   "{\"action\": \"serve\", \"replicas\": 2}\n"
				   "  {\"timeout\": 5}\n");
	if (CHECK_INT_RET(berth_spec_set_count(set), 3)) {
		const berth_spec *s0 = berth_spec_set_get(set, 0), *s2 = berth_spec_set_get(set, 2);
		if (CHECK_INT_RET(s0->args.n, 2)) {
			CHECK_STR(s0->args.items[0].s, "}]\"{[");
			CHECK_STR(s0->args.items[1].s, "\\");
		}
		CHECK_POS(s2->timeout.pos, 2, 15);
	}
	berth_spec_set_free(set);

	berth_error *err = must_fail("{\"action\": \"job\"} [1, \"]\"] {\"retries\": \"y\"}", BERTH_ETYPE);
	check_problem(err, 0, BERTH_ETYPE, BERTH_ERROR, 1, 19, NULL, "a run spec must be a map, not a list");
	check_problem(err, 1, BERTH_ETYPE, BERTH_ERROR, 1, 41, "retries", "\"y\" is not an integer");
	berth_error_free(err);

	/* a quote after an odd number of backslashes is in the string; columns
	 * count characters (é is one) */
	err = must_fail("{\"args\": [\"a\\\\\\\\\\\"b]\", \"\xc3\xa9\"], \"action\": \"job\"} {\"timeout\": \"x\"}",
			BERTH_ETYPE);
	check_problem(err, 0, BERTH_ETYPE, BERTH_ERROR, 1, 60, "timeout", "\"x\" is not an integer");
	berth_error_free(err);

	/* a string or a number: libfyaml reads on past it */
	err = must_fail("{\"action\": \"job\"} \"x\" {\"retries\": \"y\"}", BERTH_ESYNTAX);
	check_problem(err, 0, BERTH_ESYNTAX, BERTH_ERROR, 1, 23, NULL,
		      "invalid trailing content after double-quoted scalar");
	berth_error_free(err);
	err = must_fail("{\"action\": \"job\"} 12 {\"retries\": \"y\"}", BERTH_ESYNTAX);
	check_problem(err, 0, BERTH_ESYNTAX, BERTH_ERROR, 1, 19, NULL, "Invalid JSON plain scalar");
	berth_error_free(err);

	/* a value left open runs to the end: libfyaml says where */
	err = must_fail("{\"action\": \"job\"}\n{\"action\": \"job\"\n", BERTH_ESYNTAX);
	check_problem(err, 0, BERTH_ESYNTAX, BERTH_ERROR, 3, 1, NULL, "missing comma in flow mapping");
	berth_error_free(err);
}

/* Each JSON value is first given to libfyaml as the rest of its line; where
 * that is not the value (it goes on past the line, or another value follows
 * it there), what was read of it is undone, problems included, and it and
 * the rest are cut by their brackets. Either way, the same specs, positions
 * and problems, each once. */
static void test_json_cut_by_line(void)
{
	/* blanks and a carriage return after a value, an empty line, a value
	 * over three lines, then values a line again */
	berth_spec_set *set = must("{\"action\": \"job\"} \t\r\n"
				   "\n"
				   "{\"action\": \"serve\",\n \"replicas\": 2,\n \"timeout\": 7}\n"
				   "{\"action\": \"deploy\", \"replicas\": 3}\n");
	if (CHECK_INT_RET(berth_spec_set_count(set), 3)) {
		const berth_spec *s1 = berth_spec_set_get(set, 1), *s2 = berth_spec_set_get(set, 2);
		CHECK_INT(s1->replicas.v, 2);
		CHECK_POS(s1->pos, 3, 1);
		CHECK_POS(s1->timeout.pos, 5, 13);
		CHECK_INT(s2->replicas.v, 3);
		CHECK_POS(s2->replicas.pos, 6, 34);
	}
	berth_spec_set_free(set);

	/* a problem in a value read from its line, then one in a value the line
	 * cut gets wrong (it goes on), then one after the cut by brackets took
	 * over: each problem once, where it is */
	berth_error *err = must_fail("{\"action\": \"job\", \"retries\": \"a\"}\n"
				     "{\"action\": \"job\",\n \"timeout\": \"b\"}\n"
				     "{\"action\": \"job\", \"retries\": \"c\"}\n",
				     BERTH_ETYPE);
	CHECK_INT(berth_error_count(err), 3);
	check_problem(err, 0, BERTH_ETYPE, BERTH_ERROR, 1, 31, "retries", "\"a\" is not an integer");
	check_problem(err, 1, BERTH_ETYPE, BERTH_ERROR, 3, 14, "timeout", "\"b\" is not an integer");
	check_problem(err, 2, BERTH_ETYPE, BERTH_ERROR, 4, 31, "retries", "\"c\" is not an integer");
	berth_error_free(err);

	/* a syntax error on the value's own line: libfyaml's, once */
	err = must_fail("{\"action\": \"job\"}\n{\"action\": \"job\", \"x\"}\n", BERTH_ESYNTAX);
	CHECK_INT(berth_error_count(err), 1);
	check_problem(err, 0, BERTH_ESYNTAX, BERTH_ERROR, 2, 20, NULL,
		      "JSON does not allow empty values in a mapping");
	berth_error_free(err);
}

static void test_empty_inputs(void)
{
	static const char *const empty[] = {"", "\n\n", "# only a comment\n", "   "};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(empty); i++) {
		berth_error *err = must_fail(empty[i], BERTH_EMISSING);
		CHECK_INT(berth_error_count(err), 1);
		CHECK_INT(berth_error_code(err), BERTH_EMISSING);
		const berth_problem *p = berth_error_get(err, 0);
		if (CHECK(p != NULL)) {
			CHECK_STR(p->file, "t.yaml");
			CHECK_INT(p->line, 0);
			CHECK(p->path == NULL);
			CHECK_STR(p->message, "holds no run spec (the input is empty)");
		}
		berth_error_free(err);
	}
	/* documents, all empty */
	berth_error *err = must_fail("---\n---\n", BERTH_EMISSING);
	CHECK_INT(berth_error_count(err), 1);
	if (berth_error_get(err, 0))
		CHECK_STR(berth_error_get(err, 0)->message, "holds no run spec (every document is empty)");
	berth_error_free(err);

	/* an empty trailing document is ignored */
	berth_spec_set *set = must("action: job\n---\n");
	CHECK_INT(berth_spec_set_count(set), 1);
	berth_spec_set_free(set);
	set = must("action: job\n---\n...\n");
	CHECK_INT(berth_spec_set_count(set), 1);
	berth_spec_set_free(set);
}

static void test_not_a_map(void)
{
	berth_error *err = must_fail("- a\n- b\n", BERTH_ETYPE);
	check_problem(err, 0, BERTH_ETYPE, BERTH_ERROR, 1, 1, NULL, "a run spec must be a map, not a list");
	berth_error_free(err);
	err = must_fail("[1, 2]", BERTH_ETYPE);
	check_problem(err, 0, BERTH_ETYPE, BERTH_ERROR, 1, 1, NULL, "a run spec must be a map, not a list");
	berth_error_free(err);
	err = must_fail("just text\n", BERTH_ETYPE);
	check_problem(err, 0, BERTH_ETYPE, BERTH_ERROR, 1, 1, NULL, "a run spec must be a map, not a string");
	berth_error_free(err);
}

/* ---- errors -------------------------------------------------------------------------- */

static void test_errors_collected_in_one_pass(void)
{
	berth_error *err = must_fail("bogus: 1\n"
				     "resources:\n"
				     "  mem: {requests: 32Gb}\n"
				     "fs_group: abc\n",
				     BERTH_EUNKNOWN);
	CHECK_INT(berth_error_errors(err), 3);
	CHECK_INT(berth_error_count(err), 3);
	CHECK_INT(berth_error_code(err), BERTH_EUNKNOWN);
	check_problem(err, 0, BERTH_EUNKNOWN, BERTH_ERROR, 1, 1, "bogus", "unknown key \"bogus\"");
	check_problem(err, 1, BERTH_EQUANTITY, BERTH_ERROR, 3, 19, "resources.mem.requests",
		      "\"32Gb\" is not a quantity");
	check_problem(err, 2, BERTH_ETYPE, BERTH_ERROR, 4, 11, "fs_group", "\"abc\" is not an integer");
	berth_error_free(err);
}

static void test_problem_fields(void)
{
	berth_error *err = must_fail("resources:\n  mem: {requests: 32Gb}\n", BERTH_EQUANTITY);
	CHECK_INT(berth_error_count(err), 1);
	CHECK_INT(berth_error_code(err), BERTH_EQUANTITY);
	check_problem(err, 0, BERTH_EQUANTITY, BERTH_ERROR, 2, 19, "resources.mem.requests",
		      "\"32Gb\" is not a quantity");
	const berth_problem *p = berth_error_get(err, 0);
	char buf[512];
	if (p) {
		berth_problem_format(p, buf, sizeof(buf));
		CHECK_STR(buf, "t.yaml:2:19: resources.mem.requests: \"32Gb\" is not a quantity: unknown "
			       "suffix \"Gb\" (use one of n u m k M G T P E, Ki Mi Gi Ti Pi Ei, or an "
			       "exponent like e3)");
	}
	berth_error_free(err);
}

static void test_unknown_key_did_you_mean(void)
{
	berth_error *err = must_fail("resourcs: {cpu: \"1\"}\nresources: {memory: 1Gi}\n", BERTH_EUNKNOWN);
	CHECK_INT(berth_error_errors(err), 2);
	check_problem(err, 0, BERTH_EUNKNOWN, BERTH_ERROR, 1, 1, "resourcs", "");
	check_problem(err, 1, BERTH_EUNKNOWN, BERTH_ERROR, 2, 13, "resources.memory", "");
	if (berth_error_count(err) == 2) {
		CHECK_STR(berth_error_get(err, 0)->message, "unknown key \"resourcs\"; did you mean \"resources\"?");
		CHECK_STR(berth_error_get(err, 1)->message, "unknown key \"memory\"; did you mean \"mem\"?");
	}
	berth_error_free(err);

	/* nothing close: the known keys are listed */
	err = must_fail("resources: {zzzzzz: 1}\n", BERTH_EUNKNOWN);
	if (berth_error_get(err, 0))
		CHECK_STR(berth_error_get(err, 0)->message,
			  "unknown key \"zzzzzz\" (known keys here: cpu, mem, gpu, disk, gpu_type)");
	berth_error_free(err);

	/* a key that is not plain is quoted in the path */
	err = must_fail("\"a.b\": 1\n", BERTH_EUNKNOWN);
	check_problem(err, 0, BERTH_EUNKNOWN, BERTH_ERROR, 1, 2, "[\"a.b\"]", "unknown key \"a.b\"");
	berth_error_free(err);
}

static void test_duplicate_key(void)
{
	berth_error *err = must_fail("timeout: 1\nretries: 2\ntimeout: 3\n", BERTH_EDUPLICATE);
	CHECK_INT(berth_error_errors(err), 1);
	check_problem(err, 0, BERTH_EDUPLICATE, BERTH_ERROR, 3, 1, "timeout",
		      "key \"timeout\" given twice (first at line 1)");
	berth_error_free(err);

	/* a map of more keys, looked at by their lengths and ends first: a
	 * repeat is found wherever it is, an unknown key's too, and keys that
	 * share a length and ends are not taken for one */
	err = must_fail("action: job\nname: a\nretries: 2\ntimeout: 1\nprofile: p\nreplicas: 1\n"
			"timeout: 3\nargs: [a]\nfoo_bar: 1\nfoo_bar: 2\n",
			BERTH_EDUPLICATE);
	CHECK_INT(berth_error_errors(err), 4);
	check_problem(err, 0, BERTH_EDUPLICATE, BERTH_ERROR, 7, 1, "timeout",
		      "key \"timeout\" given twice (first at line 4)");
	check_problem(err, 2, BERTH_EDUPLICATE, BERTH_ERROR, 10, 1, "foo_bar",
		      "key \"foo_bar\" given twice (first at line 9)");
	berth_error_free(err);
	berth_spec_set *set = must("action: job\nname: a\nretries: 2\ntimeout: 1\nprofile: p\n"
				   "replicas: 1\nargs: [b]\n"
				   "labels: {a: b, b: c, c: d, d: e, e: f, ab: x, ba: y}\n");
	berth_spec_set_free(set);
}

static void test_warning_trailing_comma(void)
{
	berth_spec_set *set = NULL;
	berth_error *err = NULL;
	int ret = parse(&set, "volumes:\n"
			      "  - volume_type: persistent_volume_claim\n"
			      "    name: \"my-pvc\",\n"
			      "    mount_path: /data\n"
			      "    spec: {size: 10Gi}\n",
			&err);
	CHECK_INT(ret, 0);
	CHECK(set != NULL);
	CHECK_INT(berth_error_count(err), 1);
	CHECK_INT(berth_error_errors(err), 0);
	CHECK_INT(berth_error_code(err), BERTH_OK);
	check_problem(err, 0, BERTH_ESYNTAX, BERTH_WARNING, 3, 19, NULL,
		      "comma after a quoted value ignored (YAML block mappings need no commas)");
	const berth_spec *s = only(set);
	if (s && CHECK_INT_RET(s->nvolumes, 1)) {
		CHECK_STR(s->volumes[0].name.s, "my-pvc");
		CHECK_STR(s->volumes[0].mount_path.s, "/data");
	}
	berth_error_free(err);
	berth_spec_set_free(set);
}

static void test_warning_gpu_type_without_gpu(void)
{
	berth_spec_set *set = NULL;
	berth_error *err = NULL;
	int ret = parse(&set, "resources: {gpu_type: nvidia.com/gpu}\n", &err);
	CHECK_INT(ret, 0);
	CHECK_INT(berth_error_count(err), 1);
	CHECK_INT(berth_error_errors(err), 0);
	check_problem(err, 0, BERTH_EINVALID, BERTH_WARNING, 1, 23, "resources.gpu_type",
		      "gpu_type is set but no gpu count is asked for");
	berth_error_free(err);
	berth_spec_set_free(set);
}

static void test_warnings_with_errors(void)
{
	/* a warning does not hide errors, and does not count as one */
	berth_spec_set *set = NULL;
	berth_error *err = NULL;
	int ret = parse(&set, "name: \"x\",\ntimeout: 0\n", &err);
	CHECK_INT(ret, -BERTH_ERANGE);
	CHECK(set == NULL);
	CHECK_INT(berth_error_count(err), 2);
	CHECK_INT(berth_error_errors(err), 1);
	CHECK_INT(berth_error_code(err), BERTH_ERANGE);
	check_problem(err, 0, BERTH_ESYNTAX, BERTH_WARNING, 1, 10, NULL, "comma after a quoted value");
	check_problem(err, 1, BERTH_ERANGE, BERTH_ERROR, 2, 10, "timeout", "0 is out of range (1 to 2147483647)");
	berth_error_free(err);
}

static void test_err_null(void)
{
	berth_spec_set *set = (berth_spec_set *)&set; /* must be reset to NULL */
	int ret = parse(&set, "fs_group: abc\n", NULL);
	CHECK(ret < 0);
	CHECK(set == NULL);
	/* without err, the code of the first problem is still returned */
	CHECK_INT(ret, -BERTH_ETYPE);


	set = (berth_spec_set *)&set;
	CHECK_INT(parse(&set, "a: [", NULL), -BERTH_ESYNTAX);
	CHECK(set == NULL);
	CHECK_INT(parse(&set, "", NULL), -BERTH_EMISSING);
	CHECK_INT(parse(&set, "resources:\n  mem: {requests: 32Gb}\n", NULL) < 0, 1);
	CHECK(set == NULL);

	/* warnings only, err NULL: success */
	CHECK_INT(parse(&set, "name: \"x\",\n", NULL), 0);
	if (CHECK(set != NULL))
		CHECK_STR(only(set)->name.s, "x");
	berth_spec_set_free(set);
}

static void test_syntax_error(void)
{
	berth_error *err = must_fail("resources:\n  cpu: \"1\"\n mem: 2Gi\n", BERTH_ESYNTAX);
	CHECK_INT(berth_error_errors(err), 1);
	check_problem(err, 0, BERTH_ESYNTAX, BERTH_ERROR, 3, 2, NULL, "invalid indentation in mapping");
	berth_error_free(err);

	/* an alias is placed at its name, after the '*' (as a quoted scalar after its quote) */
	err = must_fail("a: *nope\n", BERTH_ESYNTAX);
	check_problem(err, 0, BERTH_ESYNTAX, BERTH_ERROR, 1, 5, NULL, "unknown alias \"*nope\"");
	berth_error_free(err);

	/* a bad tag is placed at the value it tags */
	err = must_fail("timeout: !!binary aGk=\n", BERTH_ESYNTAX);
	check_problem(err, 0, BERTH_ESYNTAX, BERTH_ERROR, 1, 19, NULL,
		      "unsupported tag \"tag:yaml.org,2002:binary\"");
	berth_error_free(err);
}

/* A NUL in a scalar ("\0" in YAML, "\u0000" in JSON) is refused at the scalar:
 * berth's strings end at NUL, so the value would be read cut. A peer's JSON
 * reply keeps it (in the node's len). Newlines and tabs are data. */
static void test_nul_in_scalar(void)
{
	static const struct {
		const char *text;
		unsigned line, col;
	} rows[] = {
		{"envs: [{name: A, value: \"x\\0y\"}]\n", 1, 26},
		{"name: \"\\0\"\n", 1, 8},
		{"labels: {\"k\\0\": v}\n", 1, 11},
		{"volumes:\n  - mount_path: \"/data\\x00/x\"\n", 2, 18},
		{"{\"function\": {\"name\": \"f\\u0000\"}}", 1, 24},
		{"{\"inputs\": {\"a\\u0000\": 1}}", 1, 14},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		berth_error *err = must_fail(rows[i].text, BERTH_ESYNTAX);
		CHECK_INT(berth_error_errors(err), 1);
		check_problem(err, 0, BERTH_ESYNTAX, BERTH_ERROR, rows[i].line, rows[i].col, NULL,
			      "a NUL character (\\0, \\u0000) is not allowed in a value");
		berth_error_free(err);
	}
	berth_spec_set *set = must("envs: [{name: A, value: \"two\\n\\tlines\"}]\n");
	const berth_spec *sp = only(set);
	if (sp && CHECK_INT_RET(sp->envs.n, 1))
		CHECK_STR(sp->envs.items[0].value.s, "two\n\tlines");
	berth_spec_set_free(set);

	berth_arena *arena = berth_arena_new();
	const berth_node *root = NULL;
	static const char reply[] = "{\"message\": \"x\\u0000y\"}";
	CHECK_INT(berth_json_root(arena, "reply", reply, sizeof(reply) - 1, &root, NULL), 0);
	const berth_node *m = root ? berth_node_get(root, "message") : NULL;
	CHECK(m && m->len == 3 && strcmp(m->u.text, "x") == 0);
	berth_arena_free(arena);
}

/* ---- files ----------------------------------------------------------------------------- */

static void test_parse_file_missing(void)
{
	berth_spec_set *set = (berth_spec_set *)&set;
	berth_error *err = NULL;
	const char *path = "/nonexistent-berth-dir/run.yaml";
	CHECK_INT(berth_spec_parse_file(&set, path, &err), -BERTH_EIO);
	CHECK(set == NULL);
	CHECK_INT(berth_error_count(err), 1);
	CHECK_INT(berth_error_code(err), BERTH_EIO);
	const berth_problem *p = berth_error_get(err, 0);
	if (CHECK(p != NULL)) {
		CHECK(strstr(p->message, path) != NULL);
		CHECKF(strstr(p->message, "No such file") != NULL, "message: %s", p->message);
	}
	berth_error_free(err);
	CHECK_INT(berth_spec_parse_file(&set, path, NULL), -BERTH_EIO);
}

static char *temp_file(const char *text, size_t len)
{
	char *path = malloc(64);
	if (!path)
		abort();
	snprintf(path, 64, "/tmp/berth-test-spec-XXXXXX");
	int fd = mkstemp(path);
	if (!CHECK(fd >= 0)) {
		free(path);
		return NULL;
	}
	CHECK_INT(write(fd, text, len), (long long)len);
	close(fd);
	return path;
}

static void test_parse_file(void)
{
	const char *text = "resources:\n  cpu: \"8\"\n---\nbogus: 1\n";
	char *path = temp_file("action: serve\nreplicas: 3\n", 26);
	berth_spec_set *set = NULL;
	berth_error *err = NULL;
	if (!path)
		return;
	CHECK_INT(berth_spec_parse_file(&set, path, &err), 0);
	CHECK_INT(berth_error_count(err), 0);
	const berth_spec *s = only(set);
	if (s) {
		CHECK_STR(s->file, path);
		CHECK_INT(s->action, BERTH_ACTION_SERVE);
		CHECK_INT(s->replicas.v, 3);
		CHECK_POS(s->replicas.pos, 2, 11);
	}
	berth_spec_set_free(set);
	berth_error_free(err);
	unlink(path);
	free(path);

	/* problems name the file */
	path = temp_file(text, strlen(text));
	if (!path)
		return;
	err = NULL;
	CHECK_INT(berth_spec_parse_file(&set, path, &err), -BERTH_EUNKNOWN);
	CHECK(set == NULL);
	const berth_problem *p = berth_error_get(err, 0);
	if (CHECK(p != NULL)) {
		CHECK_STR(p->file, path);
		CHECK_INT(p->line, 4);
		CHECK_INT(p->column, 1);
	}
	berth_error_free(err);
	unlink(path);
	free(path);
}

static void test_parse_file_too_big(void)
{
	size_t len = (4u << 20) + 1;
	char *big = malloc(len);
	if (!big)
		abort();
	memset(big, '#', len);
	char *path = temp_file(big, len);
	free(big);
	if (!path)
		return;
	berth_spec_set *set = NULL;
	berth_error *err = NULL;
	CHECK_INT(berth_spec_parse_file(&set, path, &err), -BERTH_ETOOBIG);
	CHECK(set == NULL);
	CHECK_INT(berth_error_code(err), BERTH_ETOOBIG);
	if (berth_error_get(err, 0))
		CHECK(strstr(berth_error_get(err, 0)->message, path) != NULL);
	berth_error_free(err);
	unlink(path);
	free(path);
}

/* ---- caps on hostile input -------------------------------------------------------------- */

static void test_billion_laughs(void)
{
	berth_buf b = BERTH_BUF_INIT;
	berth_buf_puts(&b, "inputs:\n  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
	for (int i = 1; i <= 9; i++) {
		berth_buf_printf(&b, "  l%d: &l%d [", i, i);
		for (int j = 0; j < 10; j++)
			berth_buf_printf(&b, "%s*l%d", j ? ", " : "", i - 1);
		berth_buf_puts(&b, "]\n");
	}
	if (!CHECK(b.data && !b.failed))
		return;
	berth_error *err = must_fail(b.data, BERTH_ETOOBIG);
	CHECK_INT(berth_error_count(err), 1);
	const berth_problem *p = berth_error_get(err, 0);
	if (CHECK(p != NULL)) {
		CHECK_STR(p->message, "input too large: more than 100000 nodes once aliases are expanded");
		/* nodes are counted as they come: the root and l0..l3 make 12,351,
		 * l4's key and list 2, each *l3 11,111: the 8th goes over (column
		 * 48, its name) */
		CHECK_INT(p->line, 6);
		CHECK_INT(p->column, 48);
	}
	berth_error_free(err);
	berth_buf_release(&b);
}

static void test_aliases_share(void)
{
	/* aliases under the cap are fine and share the anchored subtree */
	berth_spec_set *set = must("inputs:\n  a: &x {k: v}\n  b: *x\n");
	const berth_spec *s = only(set);
	if (s && s->inputs) {
		CHECK(berth_node_get(s->inputs, "a") == berth_node_get(s->inputs, "b"));
		CHECK_INT(s->inputs->weight, 1 + 2 + 3 + 3);
	}
	berth_spec_set_free(set);
}

static void test_too_big(void)
{
	size_t max = 4u << 20;
	char *big = malloc(max + 1);
	if (!big)
		abort();
	memset(big, ' ', max + 1);
	memcpy(big, "# ", 2);
	big[max - 1] = '\n';
	berth_spec_set *set = NULL;
	berth_error *err = NULL;
	CHECK_INT(parse_n(&set, big, max + 1, &err), -BERTH_ETOOBIG);
	CHECK(set == NULL);
	CHECK_INT(berth_error_count(err), 1);
	CHECK_INT(berth_error_code(err), BERTH_ETOOBIG);
	const berth_problem *p = berth_error_get(err, 0);
	if (CHECK(p != NULL))
		CHECK_STR(p->message, "t.yaml: input is 4194305 bytes, more than the 4194304 allowed");
	berth_error_free(err);

	/* exactly the cap is read (and holds only a comment) */
	err = NULL;
	CHECK_INT(parse_n(&set, big, max, &err), -BERTH_EMISSING);
	CHECK_INT(berth_error_code(err), BERTH_EMISSING);
	berth_error_free(err);
	free(big);
}

/* berth_spec_read_file hands each run over as its document is read, and ends
 * with the problems berth_spec_parse_file has, in the same order. */
struct sink_log {
	int starts;
	char runs[256];
};

static void log_start(void *arg)
{
	struct sink_log *l = arg;
	l->starts++;
	l->runs[0] = '\0';
}

static void log_run(void *arg, const berth_spec *spec, size_t i)
{
	struct sink_log *l = arg;
	size_t o = strlen(l->runs);
	snprintf(l->runs + o, sizeof(l->runs) - o, "%s%zu:%zu:%s", o ? " " : "", i, spec->doc,
		 spec->name.s ? spec->name.s : "-");
}

static char *problems_text(const berth_error *err)
{
	berth_buf b = BERTH_BUF_INIT;
	char line[512];
	for (size_t i = 0; i < berth_error_count(err); i++) {
		berth_problem_format(berth_error_get(err, i), line, sizeof(line));
		berth_buf_printf(&b, "%s\n", line);
	}
	berth_buf_puts(&b, "");
	return berth_buf_detach(&b);
}

static void check_read_file(const char *text, int want_ret, int want_starts, const char *want_runs)
{
	char *path = temp_file(text, strlen(text));
	if (!path)
		return;
	berth_spec_set *set = NULL;
	berth_error *err1 = NULL, *err2 = NULL;
	struct sink_log log = {0, ""};
	berth_spec_sink sink = {&log, log_start, log_run};
	int r1 = berth_spec_parse_file(&set, path, &err1);
	int r2 = berth_spec_read_file(path, &sink, &err2);
	CHECK_INT(r2, r1);
	CHECK_INT(r2, want_ret);
	char *t1 = problems_text(err1), *t2 = problems_text(err2);
	CHECK_STR(t2, t1);
	CHECK_INT(log.starts, want_starts);
	CHECK_STR(log.runs, want_runs);
	free(t1);
	free(t2);
	berth_error_free(err1);
	berth_error_free(err2);
	berth_spec_set_free(set);
	unlink(path);
	free(path);
}

static void test_read_file_stream(void)
{
	/* runs counted without the empty document; a warning of each kept */
	check_read_file("name: a\nenvs: {BERTH_X: 1}\n---\n---\nname: b\nenvs: {BERTH_Y: 2}\n", 0, 1,
			"0:0:a 1:2:b");
	/* an invalid spec: no run after it is handed over, and the problems
	 * are those of the file */
	check_read_file("name: a\n---\nname: b\nreplicas: x\n---\nname: c\nretries: y\n", -BERTH_ETYPE, 1,
			"0:0:a");
	/* a syntax error in the third: the runs read before are to be dropped */
	check_read_file("name: a\n---\nname: b\n---\nname: [c\n", -BERTH_ESYNTAX, 1, "0:0:a 1:1:b");
	/* a stray comma: read again from the start, after start again */
	check_read_file("name: a\n---\nname: \"b\",\nretries: 1\n", 0, 2, "0:0:a 1:1:b");
	/* JSON values */
	check_read_file("{\"name\": \"a\"}\n{\"name\": \"b\", \"timeout\": 1}\n", 0, 1, "0:0:a 1:1:b");
	check_read_file("", -BERTH_EMISSING, 1, "");
	check_read_file("---\n---\n", -BERTH_EMISSING, 1, "");
}

/* What a stream's document allocated is freed once it is used: the next
 * one reuses the memory, what was allocated before stays. */
/* The text check, eight bytes at a time: each ASCII byte at each place of a
 * word is refused exactly when it is a control character other than tab,
 * line feed and carriage return, or DEL; and where it is. */
static void test_control_bytes(void)
{
	for (unsigned c = 0; c < 0x80; c++) {
		int bad = (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f;
		for (size_t at = 3; at < 3 + 16; at++) {
			char text[] = "k: \"aaaaaaaaaaaaaaaaaaaaaaaa\"\n";
			text[at] = (char)c;
			berth_arena *a = berth_arena_new();
			berth_yaml_doc *docs = NULL;
			size_t ndocs = 0;
			berth_error *err = NULL;
			berth_yaml_parse(a, "t.yaml", text, sizeof(text) - 1, &docs, &ndocs, &err);
			const berth_problem *p = berth_error_count(err) ? berth_error_get(err, 0) : NULL;
			int refused = p && p->message && strstr(p->message, "is not allowed (use an escape");
			CHECKF(refused == bad, "byte 0x%02x at %zu: refused %d", c, at, refused);
			if (refused)
				CHECKF(p->column == at + 1, "byte 0x%02x at %zu: column %u", c, at, p->column);
			berth_error_free(err);
			berth_arena_free(a);
		}
	}
}

/* The inline allocation: zeroed (memory a released document used too),
 * 16-byte aligned, each after the last in the head chunk, a one-off behind
 * the head leaving the head's free bytes to the next. */
static void test_arena_window(void)
{
	berth_arena *a = berth_arena_new();
	if (!CHECK(a != NULL))
		return;
	CHECK(berth_arena_alloc(a, 8) != NULL); /* the head chunk, kept */
	berth_arena_mark m = berth_arena_save(a);
	unsigned char *p = berth_arena_alloc(a, 40);
	if (!CHECK(p != NULL))
		goto out;
	memset(p, 0xab, 40);
	berth_arena_release(a, m);
	unsigned char *q = berth_arena_alloc(a, 40), *r = berth_arena_alloc(a, 3);
	CHECK(q == p);
	CHECK(r == q + 48);
	for (int i = 0; q && i < 40; i++)
		CHECKF(q[i] == 0, "byte %d of a reused allocation is 0x%02x", i, q[i]);
	CHECK(berth_arena_alloc(a, 1 << 21) != NULL); /* a one-off behind the head */
	unsigned char *s = berth_arena_alloc(a, 1);
	CHECK(s == r + 16);
	char *t = berth_arena_strndup(a, "abc", 3);
	CHECK(t == (char *)s + 16);
	CHECK(((uintptr_t)berth_arena_alloc(a, 0) & 15) == 0);
	for (int i = 0; i < 2000; i++) /* past the first chunks */
		CHECK(((uintptr_t)berth_arena_alloc(a, (size_t)i % 50) & 15) == 0);
out:
	berth_arena_free(a);
}

static void test_arena_release(void)
{
	berth_arena *a = berth_arena_new();
	if (!CHECK(a != NULL))
		return;
	char *keep = berth_arena_strdup(a, "kept");
	berth_arena_mark m = berth_arena_save(a);
	void *first = berth_arena_alloc(a, 100);
	for (int i = 0; i < 1000; i++)
		CHECK(berth_arena_alloc(a, 64) != NULL);
	CHECK(berth_arena_alloc(a, 1 << 21) != NULL); /* a one-off behind the head */
	berth_arena_release(a, m);
	CHECK(berth_arena_alloc(a, 100) == first);
	CHECK_STR(keep, "kept");
	berth_arena_release(a, berth_arena_save(a));
	berth_arena_free(a);

	/* the largest chunk released is kept, and is the next chunk made: each
	 * document (each run's objects) reuses the memory of the one before */
	a = berth_arena_new();
	if (!CHECK(a != NULL))
		return;
	m = berth_arena_save(a);
	void *small = berth_arena_alloc(a, 3000), *large = berth_arena_alloc(a, 3000);
	CHECK(small && large && small != large); /* a 4 KiB chunk, then an 8 KiB one */
	berth_arena_release(a, m);
	CHECK(berth_arena_alloc(a, 3000) == large);
	CHECK(berth_arena_alloc(a, 3000) == (char *)large + 3008); /* the same chunk, 8 KiB */
	berth_arena_free(a);
}

/* A spool's bytes: pieces appended to it (n bytes each), in order. */
static void spool_fill(spool *s, berth_buf *want, size_t pieces)
{
	for (size_t i = 0; i < pieces; i++) {
		char piece[1000];
		int n = snprintf(piece, sizeof(piece), "piece %zu ", i);
		memset(piece + n, 'a' + (int)(i % 26), sizeof(piece) - (size_t)n - 1);
		piece[sizeof(piece) - 2] = '\n';
		berth_buf_append(&s->buf, piece, sizeof(piece) - 1);
		berth_buf_append(want, piece, sizeof(piece) - 1);
		CHECK_INT(s->buf.failed, 0);
	}
}

/* 1 when the spool's last page below buf.cap is in memory though nothing
 * was written there (its pages made ahead of the writer), 0 when it is not,
 * -1 when mincore cannot tell. */
static int made_ahead(const spool *s)
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t last = ((uintptr_t)s->buf.data + s->buf.cap - 1) & ~(uintptr_t)(pg - 1);
	unsigned char in = 0;
	if (pg <= 0 || (uintptr_t)s->buf.data + s->buf.len + 1 > last)
		return -1; /* written up to that page: it tells nothing */
	return mincore((void *)last, (size_t)pg, &in) == 0 ? (in & 1) : -1;
}

/* hugemap: whole huge pages on their boundary, or MAP_FAILED for a size that
 * is none (0, not a multiple, too large for the address space). */
static void test_hugemap(void)
{
	CHECK(hugemap(0, PROT_READ | PROT_WRITE) == MAP_FAILED);
	CHECK(hugemap(HUGEMAP_PAGE + 4096, PROT_READ | PROT_WRITE) == MAP_FAILED);
	CHECK(hugemap(SIZE_MAX - HUGEMAP_PAGE + 1, PROT_READ | PROT_WRITE) == MAP_FAILED);
	for (int none = 0; none < 2; none++) {
		char *p = hugemap(2 * HUGEMAP_PAGE, none ? PROT_NONE : PROT_READ | PROT_WRITE);
		if (!CHECK(p != MAP_FAILED))
			continue;
		CHECKF((uintptr_t)p % HUGEMAP_PAGE == 0, "at %p", (void *)p);
		if (!none) {
			p[0] = 'a';
			p[2 * HUGEMAP_PAGE - 1] = 'z';
			CHECK(p[0] == 'a' && t_huge_asked(p) != 0);
		}
		CHECK_INT(munmap(p, 2 * HUGEMAP_PAGE), 0);
	}
}

/* A spool whose mapping cannot be had (made first, or grown past 8 MiB) fails
 * sticky, keeps what it held whole, and frees it: the output is refused, not
 * cut or crashed (a mapping fails as an allocation does under fault
 * injection). */
static void test_spool_no_mapping(void)
{
	for (int grown = 0; grown < 2; grown++) {
		spool s = SPOOL_INIT;
		berth_buf want = BERTH_BUF_INIT;
		size_t pieces = grown ? (8u << 20) / 999 - 10 : SPOOL_WINDOW / 999 - 1;
		spool_fill(&s, &want, pieces);
		CHECK(grown ? s.room == (8u << 20) : s.room == 0);
		char big[20000];
		memset(big, 'b', sizeof(big));
		berth_fail_alloc_after = 1;
		CHECK_INT(berth_buf_append(&s.buf, big, sizeof(big)), -BERTH_ENOMEM);
		CHECKF(berth_fail_alloc_after == 0, "grown %d: the mapping was not asked for", grown);
		berth_fail_alloc_after = 0;
		CHECK_INT(berth_buf_puts(&s.buf, "more"), -BERTH_ENOMEM); /* sticky */
		CHECK(s.buf.len == want.len && memcmp(s.buf.data, want.data, want.len) == 0);
		char *data = NULL;
		size_t len = 0;
		CHECK_INT(spool_detach(&s, &data, &len), -BERTH_ENOMEM);
		CHECK(data == NULL && len == 0 && s.buf.data == NULL && s.room == 0);
		berth_buf_release(&want);
	}
}

static int grow_calls;
static int grow_refuse(berth_buf *b, size_t need)
{
	grow_calls++;
	return need > 100 ? -BERTH_ENOMEM : 1; /* small: the heap's way */
}

/* A berth_buf's grow decides where its bytes go: 1 lets the heap take them,
 * a failure is the buffer's sticky failure (a spool's failed mapping). */
static void test_buf_grow_hook(void)
{
	berth_buf b = BERTH_BUF_INIT;
	b.grow = grow_refuse;
	CHECK_INT(berth_buf_puts(&b, "small"), 0);
	CHECK(grow_calls == 1 && b.len == 5 && strcmp(b.data, "small") == 0);
	char big[200];
	memset(big, 'x', sizeof(big));
	CHECK_INT(berth_buf_append(&b, big, sizeof(big)), -BERTH_ENOMEM);
	CHECK_INT(berth_buf_puts(&b, "!"), -BERTH_ENOMEM); /* sticky */
	CHECK(b.failed == -BERTH_ENOMEM && b.len == 5);
	berth_buf_release(&b);
}

/* A small output stays on the heap and is handed over as it is; past the
 * window the bytes go to a mapping whose pages are made ahead of the
 * writer, which keeps them when it grows; they come back whole and in
 * order, handed over or written. */
static void test_spool(void)
{
	spool s = SPOOL_INIT;
	berth_buf want = BERTH_BUF_INIT;
	spool_fill(&s, &want, SPOOL_WINDOW / 999 - 1);
	CHECK(s.room == 0 && s.buf.len == want.len); /* on the heap */
	char *data = NULL;
	size_t len = 0;
	CHECK_INT(spool_detach(&s, &data, &len), 0);
	CHECK(len == want.len && data && memcmp(data, want.data, len) == 0 && data[len] == '\0');
	free(data);
	CHECK(s.buf.len == 0 && s.buf.data == NULL && s.room == 0 && s.buf.grow == spool_grow);

	size_t pieces = 3 * SPOOL_WINDOW / 999 + 7;
	berth_buf_release(&want);
	spool_fill(&s, &want, pieces);
	CHECKF(s.room >= s.buf.cap && s.buf.cap > s.buf.len && s.buf.len == want.len,
	       "room %zu, cap %zu, len %zu", s.room, s.buf.cap, s.buf.len);
	CHECK_INT(made_ahead(&s), 1);
	/* on a 2 MiB boundary, asked for huge pages */
	CHECKF((uintptr_t)s.buf.data % (2u << 20) == 0, "mapping at %p", (void *)s.buf.data);
	CHECK(t_huge_asked(s.buf.data) != 0);
	CHECK_INT(spool_detach(&s, &data, &len), 0);
	CHECK(len == want.len && data && memcmp(data, want.data, len) == 0 && data[len] == '\0');
	free(data);
	CHECK(s.buf.len == 0 && s.buf.data == NULL && s.room == 0); /* empty, to be used again */

	/* written to a file, which gets every byte in order */
	for (size_t i = 0; i < pieces; i++)
		berth_buf_append(&s.buf, want.data + i * 999, 999);
	char *dir = t_temp_dir("berth-spool");
	if (dir) {
		char path[512];
		snprintf(path, sizeof(path), "%s/out", dir);
		FILE *f = fopen(path, "w+");
		if (CHECK(f != NULL)) {
			CHECK_INT(spool_write(&s, fileno(f)), 0);
			char *back = malloc(want.len + 1);
			rewind(f);
			CHECK(back && fread(back, 1, want.len + 1, f) == want.len &&
			      memcmp(back, want.data, want.len) == 0);
			free(back);
			fclose(f);
		}
		t_rm_rf(dir);
		free(dir);
	}

	/* past the first mapping (8 MiB): a larger one takes its bytes */
	berth_buf_release(&want);
	spool_fill(&s, &want, (10u << 20) / 999);
	CHECKF(s.room >= (16u << 20) && s.buf.cap > s.buf.len && s.buf.len == want.len,
	       "room %zu, cap %zu, len %zu", s.room, s.buf.cap, s.buf.len);
	/* moved whole to a 2 MiB boundary (elsewhere its huge pages would be split) */
	CHECKF((uintptr_t)s.buf.data % (2u << 20) == 0, "mapping at %p", (void *)s.buf.data);
	CHECK(t_huge_asked(s.buf.data) != 0);
	CHECK_INT(spool_detach(&s, &data, &len), 0);
	CHECK(len == want.len && data && memcmp(data, want.data, len) == 0);
	free(data);
	berth_buf_release(&want);
}

/* berth_read_file of path (max bytes at most): its return, and the bytes
 * compared with want (n of them) when it read them */
static int read_cap(const char *path, size_t max, const char *want, size_t n)
{
	char *data = NULL;
	size_t len = 0;
	berth_error *err = NULL;
	int ret = berth_read_file(path, max, &data, &len, &err);
	if (ret == 0)
		CHECKF(len == n && memcmp(data, want, n) == 0 && data[n] == '\0', "%s: %zu bytes of %zu",
		       path, len, n);
	else
		CHECK(data == NULL && err != NULL);
	free(data);
	berth_error_free(err);
	return ret;
}

/* A file is read whole up to its cap and not a byte past it, whether its
 * size is known (a regular file: read at once) or not (a pipe: in pieces). */
static void test_read_file_cap(void)
{
	size_t n = 200000;
	char *text = malloc(n + 1);
	char *dir = t_temp_dir("berth-readcap");
	if (!CHECK(text && dir)) {
		free(text);
		free(dir);
		return;
	}
	for (size_t i = 0; i <= n; i++)
		text[i] = (char)('a' + i % 23);
	char path[512];
	snprintf(path, sizeof(path), "%s/in", dir);
	FILE *f = fopen(path, "wb");
	CHECK(f && fwrite(text, 1, n, f) == n && fclose(f) == 0);
	CHECK_INT(read_cap(path, n, text, n), 0);          /* exactly the cap */
	CHECK_INT(read_cap(path, n + 100, text, n), 0);    /* under it */
	CHECK_INT(read_cap(path, n - 1, text, n), -BERTH_ETOOBIG);
	CHECK_INT(read_cap(path, 70000, text, n), -BERTH_ETOOBIG);
	for (size_t max = n - 1; max <= n; max++) { /* through a pipe */
		int fd[2];
		if (!CHECK(pipe(fd) == 0))
			break;
		pid_t pid = fork();
		if (pid == 0) {
			close(fd[0]);
			ssize_t w = write(fd[1], text, n);
			_exit(w == (ssize_t)n ? 0 : 1);
		}
		close(fd[1]);
		char dev[64];
		snprintf(dev, sizeof(dev), "/dev/fd/%d", fd[0]);
		CHECK_INT(read_cap(dev, max, text, n), max < n ? -BERTH_ETOOBIG : 0);
		close(fd[0]);
		int status = 0;
		waitpid(pid, &status, 0);
	}
	t_rm_rf(dir);
	free(dir);
	free(text);
}

/* Each stray comma costs a parse of the whole input: at most 32 are fixed. */
static void test_stray_comma_cap(void)
{
	berth_buf b = BERTH_BUF_INIT;
	berth_spec_set *set = NULL;
	berth_error *err = NULL;
	berth_buf_puts(&b, "labels:\n");
	for (int i = 0; i < 40; i++)
		berth_buf_printf(&b, "  k%d: \"v\",\n", i);
	CHECK_INT(berth_spec_parse(&set, "t.yaml", b.data, b.len, &err), -BERTH_ESYNTAX);
	CHECK(set == NULL);
	int found = 0;
	for (size_t i = 0; i < berth_error_count(err); i++)
		found |= strstr(berth_error_get(err, i)->message, "too many stray commas") != NULL;
	CHECK(found);
	berth_error_free(err);
	berth_buf_release(&b);
}

static void test_too_many_problems(void)
{
	berth_buf b = BERTH_BUF_INIT;
	for (int i = 0; i < 300; i++)
		berth_buf_printf(&b, "zz%d: 1\n", i);
	if (!CHECK(b.data && !b.failed))
		return;
	berth_error *err = must_fail(b.data, BERTH_EUNKNOWN);
	size_t n = berth_error_count(err);
	CHECKF(n <= 202, "%zu problems", n);
	CHECK_INT(n, 201);
	const berth_problem *p = berth_error_get(err, n - 1);
	if (CHECK(p != NULL)) {
		CHECK_STR(p->message, "too many problems; stopping after 200");
		CHECK(p->path == NULL);
		CHECK_INT(p->line, 201);
	}
	p = berth_error_get(err, 199);
	if (CHECK(p != NULL)) {
		CHECK_STR(p->path, "zz199");
		CHECK_INT(p->line, 200);
	}
	berth_error_free(err);
	berth_buf_release(&b);
}

/* ---- allocation failures ------------------------------------------------------------------ */

static const char rich_spec[] =
	"project: vision\n"
	"name: train-resnet\n"
	"function:\n"
	"  name: train\n"
	"  image: python:3.11\n"
	"  command: [python, train.py]\n"
	"action: job\n"
	"resources:\n"
	"  cpu: \"8\"\n"
	"  mem: {requests: 32Gi, limits: 64Gi}\n"
	"  gpu: \"1\"\n"
	"  gpu_type: nvidia.com/gpu\n"
	"volumes:\n"
	"  - {volume_type: persistent_volume_claim, name: data, mount_path: /data, spec: {size: 10Gi}}\n"
	"  - {volume_type: shared_volume, name: shared, mount_path: /shared, spec: {claim_name: team}}\n"
	"node_selector: [{key: zone, value: a}]\n"
	"affinity:\n"
	"  nodeAffinity:\n"
	"    requiredDuringSchedulingIgnoredDuringExecution:\n"
	"      nodeSelectorTerms:\n"
	"        - matchExpressions: [{key: gpu, operator: In, values: [a100]}]\n"
	"tolerations: [{key: gpu, operator: Exists, effect: NoSchedule}]\n"
	"secrets: [s1]\n"
	"envs: [{name: A, value: b}]\n"
	"labels: &lab {team: vision}\n"
	"inputs: *lab\n"
	"fs_group: '8877'\n"
	"---\n"
	"action: serve\n"
	"replicas: 2\n"
	"labels: {tier: web}\n";

static void check_rich(const berth_spec_set *set)
{
	if (!CHECK_INT_RET(berth_spec_set_count(set), 2))
		return;
	const berth_spec *s = berth_spec_set_get(set, 0), *s1 = berth_spec_set_get(set, 1);
	CHECK_STR(s->name.s, "train-resnet");
	CHECK_STR(s->function.image.s, "python:3.11");
	CHECK_INT(s->function.command.n, 2);
	CHECK(qeq(&s->resources.mem.limits.q, "64Gi"));
	CHECK(qeq(&s->resources.gpu.limits.q, "1"));
	CHECK_INT(s->nvolumes, 2);
	CHECK_INT(s->node_selector.n, 1);
	CHECK(s->affinity != NULL);
	CHECK_INT(s->ntolerations, 1);
	CHECK_INT(s->secrets.n, 1);
	CHECK_INT(s->envs.n, 1);
	CHECK_INT(s->labels.n, 1);
	CHECK(s->inputs != NULL);
	CHECK_INT(s->fs_group.v, 8877);
	CHECK_INT(s1->replicas.v, 2);
	CHECK_INT(s1->labels.n, 1);
}

static void test_fault_injection_valid(void)
{
	int done = 0;
	long n;
	for (n = 1; n < 100000 && !done; n++) {
		berth_spec_set *set = NULL;
		berth_error *err = NULL;
		berth_fail_alloc_after = n;
		int ret = parse(&set, rich_spec, &err);
		int injected = berth_fail_alloc_after == 0;
		berth_fail_alloc_after = 0;
		if (!injected) {
			CHECKF(ret == 0, "n=%ld: no failure injected but parse returned %d", n, ret);
			CHECK_INT(berth_error_count(err), 0);
			check_rich(set);
			done = 1;
		} else if (ret == 0) {
			/* a failure that costs nothing (a key path, sorting) */
			CHECKF(berth_error_errors(err) == 0, "n=%ld: success with %zu errors", n,
			       berth_error_errors(err));
			check_rich(set);
		} else {
			CHECKF(ret == -BERTH_ENOMEM, "n=%ld: parse returned %d", n, ret);
			CHECK(set == NULL);
			CHECKF(berth_error_code(err) == BERTH_ENOMEM, "n=%ld: code %d", n,
			       (int)berth_error_code(err));
			for (size_t i = 0; i < berth_error_count(err); i++)
				CHECKF(berth_error_get(err, i)->code == BERTH_ENOMEM, "n=%ld: problem %zu: %s",
				       n, i, berth_error_get(err, i)->message);
		}
		berth_error_free(err);
		berth_spec_set_free(set);
	}
	CHECKF(done, "still failing after %ld allocations", n);
	CHECKF(n > 10, "only %ld allocations", n);
}

static void test_fault_injection_invalid(void)
{
	/* an invalid spec never turns valid because memory ran out */
	static const char text[] =
		"resourcs: {cpu: 1}\n"
		"resources: {mem: {requests: 32Gb}}\n"
		"volumes: [{volume_type: secret, name: Bad_Name, mount_path: rel}]\n"
		"labels: {team: vision, team: x}\n"
		"name: \"x\",\n";
	int done = 0;
	long n;
	for (n = 1; n < 100000 && !done; n++) {
		berth_spec_set *set = NULL;
		berth_error *err = NULL;
		berth_fail_alloc_after = n;
		int ret = parse(&set, text, &err);
		int injected = berth_fail_alloc_after == 0;
		berth_fail_alloc_after = 0;
		CHECKF(ret < 0, "n=%ld: parse returned %d", n, ret);
		CHECK(set == NULL);
		CHECKF(berth_error_errors(err) > 0, "n=%ld: no error", n);
		if (!injected) {
			CHECK_INT(ret, -BERTH_EUNKNOWN);
			CHECK_INT(berth_error_errors(err), 6);
			CHECK_INT(berth_error_count(err), 7);
			done = 1;
		}
		berth_error_free(err);
		berth_spec_set_free(set);
	}
	CHECKF(done, "still failing after %ld allocations", n);
}

static void test_fault_injection_warnings(void)
{
	/* a valid spec with warnings: losing a warning to a failed allocation
	 * must not lose the spec */
	static const char text[] = "name: \"x\",\nresources: {gpu_type: nvidia.com/gpu}\n";
	int done = 0;
	for (long n = 1; n < 100000 && !done; n++) {
		berth_spec_set *set = NULL;
		berth_error *err = NULL;
		berth_fail_alloc_after = n;
		int ret = parse(&set, text, &err);
		int injected = berth_fail_alloc_after == 0;
		berth_fail_alloc_after = 0;
		CHECKF(ret == 0 || ret == -BERTH_ENOMEM, "n=%ld: parse returned %d", n, ret);
		CHECK((ret == 0) == (set != NULL));
		if (ret == 0) {
			const berth_spec *s = only(set);
			if (s) {
				CHECK_STR(s->name.s, "x");
				CHECK_STR(s->resources.gpu_type.s, "nvidia.com/gpu");
			}
			/* a success holds warnings only */
			CHECK_INT(berth_error_errors(err), 0);
		} else {
			CHECK_INT(berth_error_code(err), BERTH_ENOMEM);
		}
		if (!injected) {
			CHECK_INT(ret, 0);
			CHECK_INT(berth_error_count(err), 2);
			CHECK_INT(berth_error_errors(err), 0);
			done = 1;
		}
		berth_error_free(err);
		berth_spec_set_free(set);
	}
	CHECK(done);
}

static void test_fault_injection_err_null(void)
{
	int done = 0;
	for (long n = 1; n < 100000 && !done; n++) {
		berth_spec_set *set = NULL;
		berth_fail_alloc_after = n;
		int ret = parse(&set, rich_spec, NULL);
		int injected = berth_fail_alloc_after == 0;
		berth_fail_alloc_after = 0;
		if (!injected) {
			CHECK_INT(ret, 0);
			done = 1;
		} else {
			CHECKF(ret == 0 || ret == -BERTH_ENOMEM || ret == -BERTH_EINVALID,
			       "n=%ld: parse returned %d", n, ret);
		}
		CHECK((ret == 0) == (set != NULL));
		berth_spec_set_free(set);
	}
	CHECK(done);
}

static void test_fault_injection_file(void)
{
	char *path = temp_file(rich_spec, strlen(rich_spec));
	int done = 0;
	if (!path)
		return;
	for (long n = 1; n < 100000 && !done; n++) {
		berth_spec_set *set = NULL;
		berth_error *err = NULL;
		berth_fail_alloc_after = n;
		int ret = berth_spec_parse_file(&set, path, &err);
		int injected = berth_fail_alloc_after == 0;
		berth_fail_alloc_after = 0;
		if (!injected) {
			CHECK_INT(ret, 0);
			check_rich(set);
			done = 1;
		} else if (ret < 0) {
			CHECKF(ret == -BERTH_ENOMEM, "n=%ld: %d", n, ret);
			CHECK_INT(berth_error_code(err), BERTH_ENOMEM);
		}
		berth_error_free(err);
		berth_spec_set_free(set);
	}
	CHECK(done);
	unlink(path);
	free(path);
}

/* berth_node_at and berth_node_text: what readers of a peer's JSON use */
static void test_node_at_and_text(void)
{
	static const char doc[] = "{\"metadata\": {\"name\": \"j1\", \"uid\": null,"
				  " \"labels\": {\"a.b/c\": \"x\"}}, \"n\": 3}";
	berth_doc *d = NULL;
	berth_error *err = NULL;
	if (!CHECK(berth_doc_parse(&d, "doc", doc, sizeof(doc) - 1, &err) == 0)) {
		berth_error_free(err);
		return;
	}
	const berth_node *root = berth_doc_root(d);
	CHECK_STR(berth_node_text(berth_node_at(root, "metadata.name")), "j1");
	CHECK_STR(berth_node_text(berth_node_at(root, "n")), "3");
	CHECK(berth_node_text(berth_node_at(root, "metadata.uid")) == NULL);   /* null */
	CHECK(berth_node_text(berth_node_at(root, "metadata")) == NULL);       /* a map */
	CHECK(berth_node_at(root, "metadata.nope") == NULL);
	CHECK(berth_node_at(root, "n.deeper") == NULL);                        /* a scalar has no keys */
	CHECK(berth_node_at(NULL, "metadata") == NULL);
	CHECK(berth_node_at(root, "") == root);
	/* a key holding a dot is reached with berth_node_get */
	CHECK_STR(berth_node_text(berth_node_get(berth_node_at(root, "metadata.labels"), "a.b/c")), "x");
	berth_doc_free(d);
	berth_error_free(err);
}

/* A stream as JSON data, for clients without a YAML parser (POST /api/v1/parse). */
/* The YAML writer: a string is written plain only when no YAML 1.1 or 1.2
 * reader could take it for anything else; every string reads back the same. */
/* A variable set again names its first setting, whether the list is short
 * (compared pair by pair) or long (sorted): a third one too names the first. */
static void test_envs_set_twice(void)
{
	for (int n = 5; n <= 40; n += 35) {
		berth_buf b = BERTH_BUF_INIT;
		berth_buf_puts(&b, "function: {name: f, image: x}\nenvs:\n"); /* the list from line 3 */
		for (int i = 0; i < n; i++)
			if (i == 1 || i == 3 || i == n - 1)
				berth_buf_puts(&b, "  - {name: SAME, value: v}\n");
			else
				berth_buf_printf(&b, "  - {name: V%d, value: v}\n", i);
		berth_spec_set *set = NULL;
		berth_error *err = NULL;
		CHECK_INT(berth_spec_parse(&set, "s.yaml", b.data, b.len, &err), -BERTH_EDUPLICATE);
		int twice = 0;
		for (size_t i = 0; i < berth_error_count(err); i++)
			if (strstr(berth_error_get(err, i)->message, "\"SAME\" is set twice (first at line 4)"))
				twice++;
		CHECKF(twice == 2, "%d envs: %d of 2 repeats name line 4", n, twice);
		berth_error_free(err);
		berth_spec_set_free(set);
		berth_buf_release(&b);
	}
}

/* The program's own strings are known by address (rodata.h), and the writer
 * keeps what it found of them: a literal and a copy of it on the heap are
 * written the same, plain or quoted, however often and in whatever order. */
static void test_emit_program_strings(void)
{
	static const char *const lits[] = {"apiVersion", "true", "8Gi", "a b", "", "-x", "berth.dev/run",
					   "0755", "caf\xc3\xa9"};
	char local[16] = "apiVersion";
	const rodata_range *ro = rodata();
	CHECK(ro->size > 0 && rodata_has(ro, lits[0]) && rodata_has(ro, "apiVersion"));
	CHECK(!rodata_has(ro, local));
	char *heap = strdup("apiVersion");
	CHECK(heap && !rodata_has(ro, heap));
	free(heap);
	berth_arena *arena = berth_arena_new();
	obuild b = {arena, 0};
	onode *a = o_root(&b, O_SEQ), *h = o_root(&b, O_SEQ);
	for (int round = 0; round < 3; round++)
		for (size_t i = 0; i < sizeof(lits) / sizeof(lits[0]); i++) {
			o_str(&b, a, NULL, lits[i]);
			o_str(&b, h, NULL, berth_arena_strdup(arena, lits[i]));
			onode *m = o_map(&b, a, NULL), *n = o_map(&b, h, NULL);
			o_str(&b, m, lits[i], "v");
			o_str(&b, n, berth_arena_strdup(arena, lits[i]), "v");
		}
	berth_buf x = BERTH_BUF_INIT, y = BERTH_BUF_INIT;
	emit_yaml(&x, a);
	emit_yaml(&y, h);
	CHECK(!b.failed && x.data && y.data && strcmp(x.data, y.data) == 0);
	CHECK(x.data && strstr(x.data, "- apiVersion\n- apiVersion: v\n- \"true\"\n- \"true\": v\n- 8Gi\n- 8Gi: v\n"
				       "- \"a b\"\n- \"a b\": v\n- \"\"\n- \"\": v\n"));
	berth_buf_release(&x);
	berth_buf_release(&y);
	berth_arena_free(arena);
}

static void test_emit_strings_read_back(void)
{
	static const struct {
		const char *s;
		int plain;
	} cases[] = {
		{"name", 1}, {"v1.2", 1}, {"a-b", 1}, {"/usr/bin/env", 1}, {"tru", 1}, {"nope", 1},
		{"yes", 0}, {"Yes", 0}, {"YES", 0}, {"y", 0}, {"N", 0}, {"on", 0}, {"OFF", 0},
		{"true", 0}, {"False", 0}, {"null", 0}, {"NULL", 0}, {"~", 0}, {".inf", 0},
		{".NaN", 0}, {"1", 0}, {"1e3", 0}, {"0x1F", 0}, {"0o17", 0}, {"1_000", 0}, {"3d", 0},
		{"1.0", 0}, {"-1", 0}, {".5", 0}, {"trailing.", 0}, {"", 0}, {"a b", 0}, {"a:b", 0},
		{"#x", 0}, {"-x", 0}, {"quote\"d", 0}, {"tab\there", 0}, {"new\nline", 0},
		{"\x7f", 0}, {"caf\xc3\xa9", 0}, {"3x", 0}, {"8Gi", 1}, {"nULL", 1},
		/* NEL, LINE and PARAGRAPH SEPARATOR, a C1 control: line breaks, or controls, to
		 * a YAML 1.1 reader (kubectl folds a NEL in a double-quoted scalar to a space) */
		{"a\xc2\x85" "b", 0}, {"a\xe2\x80\xa8" "b", 0}, {"a\xe2\x80\xa9" "b", 0}, {"a\xc2\x9b" "31m", 0},
	};
	size_t ncases = sizeof(cases) / sizeof(cases[0]);
	berth_arena *arena = berth_arena_new();
	obuild b = {arena, 0};
	onode *root = o_root(&b, O_SEQ);
	for (size_t i = 0; i < ncases; i++)
		o_str(&b, root, NULL, cases[i].s);
	CHECK(!b.failed);
	berth_buf out = BERTH_BUF_INIT;
	emit_yaml(&out, root);
	CHECK(!out.failed && out.data);
	/* each item on its line: "- " and the string, plain or double-quoted */
	const char *line = out.data;
	for (size_t i = 0; line && i < ncases; i++) {
		const char *end = strchr(line, '\n');
		int n = end ? (int)(end - line) : (int)strlen(line);
		int plain = n > 2 && line[2] != '"';
		CHECKF(plain == cases[i].plain, "\"%s\" written as %.*s", cases[i].s, n, line);
		line = end ? end + 1 : NULL;
	}
	/* ... and escaped: no YAML reader folds or breaks them */
	static const char *const breaks[] = {"\xc2\x85", "\xe2\x80\xa8", "\xe2\x80\xa9", "\xc2\x9b"};
	for (size_t i = 0; out.data && i < sizeof(breaks) / sizeof(breaks[0]); i++)
		CHECKF(!strstr(out.data, breaks[i]), "written as is: %s", out.data);
	berth_yaml_doc *docs = NULL;
	size_t ndocs = 0;
	berth_error *err = NULL;
	CHECK_INT(berth_yaml_parse(arena, "out.yaml", out.data, out.len, &docs, &ndocs, &err), 0);
	CHECK_INT(ndocs, 1);
	const berth_node *seq = ndocs ? docs[0].root : NULL;
	CHECK(seq && seq->kind == BERTH_NODE_SEQ && seq->len == ncases);
	for (size_t i = 0; seq && i < seq->len; i++) {
		const berth_node *n = seq->u.items[i];
		CHECKF(n->type == BERTH_SCALAR_STR && strcmp(n->u.text, cases[i].s) == 0,
		       "item %zu \"%s\" read back as type %d \"%s\"", i, cases[i].s, (int)n->type, n->u.text);
	}
	berth_error_free(err);
	berth_buf_release(&out);
	berth_arena_free(arena);
}

static void test_docs_json(void)
{
	const char *in = "resources: {cpu: 2, mem: \"1Gi\", gpu: '1'}\nlabels: {on: yes, x: true, n: null}\n"
			 "args: [--epochs, 3, 0x1F, 1.5e3, -.5]\n---\n---\n[1, {a: b}]\n";
	char *out = NULL;
	size_t len = 0;
	berth_error *err = NULL;
	CHECK_INT(berth_docs_json("s.yaml", in, strlen(in), &out, &len, &err), 0);
	/* YAML 1.2 core types: numbers and booleans stay typed; yes and on are strings;
	 * hex and a bare leading dot stay strings (JSON has neither) */
	CHECK_STR(out, "[{\"resources\":{\"cpu\":2,\"mem\":\"1Gi\",\"gpu\":\"1\"},"
		       "\"labels\":{\"on\":\"yes\",\"x\":true,\"n\":null},"
		       "\"args\":[\"--epochs\",3,\"0x1F\",1.5e3,\"-.5\"]},null,[1,{\"a\":\"b\"}]]");
	CHECK_INT(len, out ? strlen(out) : 0);
	free(out);
	berth_error_free(err);

	out = NULL;
	err = NULL;
	CHECK_INT(berth_docs_json("s.yaml", "", 0, &out, &len, &err), 0);
	CHECK_STR(out, "[]");
	free(out);
	berth_error_free(err);

	/* a syntax error: nothing out, the problem with its place */
	out = NULL;
	err = NULL;
	CHECK(berth_docs_json("bad.yaml", "a: [1\n", 6, &out, &len, &err) < 0);
	CHECK(out == NULL);
	CHECK_INT(berth_error_code(err), BERTH_ESYNTAX);
	CHECK_STR(berth_error_get(err, 0)->file, "bad.yaml");
	CHECK_INT(berth_error_get(err, 0)->line, 2);
	berth_error_free(err);

	/* every allocation failing in turn: out of memory, nothing out, or the same answer */
	for (long n = 1; n < 10000; n++) {
		out = NULL;
		err = NULL;
		berth_fail_alloc_after = n;
		int ret = berth_docs_json("s.yaml", in, strlen(in), &out, &len, &err);
		int injected = berth_fail_alloc_after == 0;
		berth_fail_alloc_after = 0;
		if (ret)
			CHECKF(ret == -BERTH_ENOMEM && !out, "n=%ld: %d", n, ret);
		else
			CHECKF(out && !strncmp(out, "[{\"resources\"", 13), "n=%ld: %s", n, out ? out : "(null)");
		free(out);
		berth_error_free(err);
		if (!injected)
			break;
	}
}

T_MAIN(T(test_node_at_and_text), T(test_docs_json), T(test_emit_strings_read_back), T(test_emit_program_strings), T(test_envs_set_twice), T(test_fs_group_string_and_int), T(test_run_as_user_group), T(test_int_not_padded), T(test_int_spellings),
       T(test_resources_cpu_string), T(test_resources_spellings), T(test_resources_numbers),
       T(test_node_selector_list_and_map), T(test_envs_labels_secrets_args), T(test_envs_as_map), T(test_kv_item_with_bad_value),
       T(test_function_inline_and_ref), T(test_action_enum), T(test_preemption_enum),
       T(test_volumes_every_type), T(test_volume_spec_keys_follow_type), T(test_tolerations),
       T(test_affinity_kept_as_node), T(test_inputs_node), T(test_scalars_keep_spelling),
       T(test_positions_plain_and_quoted), T(test_multi_document), T(test_empty_middle_document),
       T(test_errors_across_documents), T(test_json_single), T(test_json_stream),
       T(test_json_error_in_second_value), T(test_json_stream_cut), T(test_json_cut_by_line), T(test_empty_inputs), T(test_not_a_map),
       T(test_errors_collected_in_one_pass), T(test_problem_fields), T(test_unknown_key_did_you_mean),
       T(test_duplicate_key), T(test_warning_trailing_comma), T(test_warning_gpu_type_without_gpu),
       T(test_warnings_with_errors), T(test_err_null), T(test_syntax_error), T(test_nul_in_scalar),
       T(test_parse_file_missing), T(test_parse_file), T(test_parse_file_too_big),
       T(test_billion_laughs), T(test_aliases_share), T(test_too_big), T(test_too_many_problems), T(test_stray_comma_cap), T(test_read_file_stream), T(test_arena_release), T(test_arena_window), T(test_spool), T(test_spool_no_mapping), T(test_hugemap), T(test_buf_grow_hook), T(test_read_file_cap), T(test_control_bytes),
       T(test_fault_injection_valid), T(test_fault_injection_invalid),
       T(test_fault_injection_warnings), T(test_fault_injection_err_null),
       T(test_fault_injection_file))
