/*
 * test_plan.c - what the CLI goldens cannot reach: quotas against a
 * project's usage (the server's path), secret checks with and without a
 * store, the run handed back on a refusal, and allocation failure at every
 * step of policy -> spec -> plan -> render -> explain.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/berth.h"
#include "base/internal.h"
#include "plan/policy_internal.h"
#include "t.h"

static const char policy_text[] =
	"namespace: ml\n"
	"defaults: {resources: {cpu: 100m, mem: 256Mi}, mem_limit_ratio: 1.1, priority_class: low}\n"
	"limits: {cpu: '32', gpu: '8'}\n"
	"security: {disable_root: true}\n"
	"gpu: {types: [nvidia.com/gpu]}\n"
	"storage: {default_class: standard}\n"
	"preemptible_nodes: {node_selector: {spot: 'true'}, tolerations: [{key: spot, operator: Exists, effect: NoSchedule}]}\n"
	"priority_classes: {high: berth-high, low: berth-low}\n"
	"profiles: [{id: gpu, resources: {cpu: '8', gpu: 1}, envs: [{name: A, value: b}]}]\n"
	"quotas: {default: {cpu: '4', gpu: '2', runs: 2}}\n"
	"projects: {ml: {defaults: {envs: [{name: T, value: ml}], volumes: [{volume_type: empty_dir, name: s, "
	"mount_path: /s}]}, limits: {mem: 64Gi}, priority_classes: {urgent: berth-urgent}, security: "
	"{user_fields: [affinity]}, profiles: [{id: ml-gpu, resources: {gpu: 1}}], quotas: {gpu: '2'}}}\n";

static const char spec_text[] =
	"function: {name: train, image: python:3.11, command: [python, t.py]}\n"
	"resources: {cpu: '2', mem: 1Gi}\n"
	"secrets: [token]\n"
	"volumes: [{volume_type: persistent_volume_claim, name: data, mount_path: /data, spec: {size: 1Gi}}]\n"
	"affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]}}}\n"
	"labels: {team: x}\n";

static berth_policy *policy(void)
{
	berth_policy *p = NULL;
	CHECK_INT(berth_policy_parse(&p, "policy.yaml", policy_text, sizeof(policy_text) - 1, NULL), 0);
	return p;
}

static berth_spec_set *specs(const char *text)
{
	berth_spec_set *s = NULL;
	CHECK_INT(berth_spec_parse(&s, "spec.yaml", text, strlen(text), NULL), 0);
	return s;
}

static int has_problem(const berth_error *e, const char *needle)
{
	for (size_t i = 0; i < berth_error_count(e); i++)
		if (strstr(berth_error_get(e, i)->message, needle))
			return 1;
	return 0;
}

static void test_quota_counts_usage(void)
{
	berth_policy *p = policy();
	berth_spec_set *s = specs(spec_text);
	berth_run *run = NULL;
	berth_error *err = NULL;
	berth_run_opts o = {.run_id = "q1"};

	/* alone the run fits: 2 of 4 CPUs, 1 of 2 runs */
	CHECK_INT(berth_run_plan(&run, berth_spec_set_get(s, 0), p, &o, &err), 0);
	CHECK_INT(berth_error_errors(err), 0);
	berth_run_free(run);
	berth_error_free(err);
	err = NULL;

	/* over the quota's headroom, it is accepted and would wait, with every
	 * dimension that does not fit, its use and its quota */
	berth_usage u = {.cpu = berth_quantity_from_int(3, BERTH_QUANTITY_DECIMAL_SI), .runs = 2};
	o.usage = &u;
	CHECK_INT(berth_run_plan(&run, berth_spec_set_get(s, 0), p, &o, &err), 0);
	CHECK_INT(berth_error_errors(err), 0);
	CHECK_STR(run->quota_wait, "waiting for quota: cpu 3 of 4 in use; runs 2 of 2 in use");
	berth_run_free(run);
	berth_error_free(err);
	err = NULL;

	/* where no queue holds it (kubernetes), refused as it is */
	o.quota_refuses = true;
	CHECK_INT(berth_run_plan(&run, berth_spec_set_get(s, 0), p, &o, &err), -BERTH_EPOLICY);
	CHECK_INT(berth_error_errors(err), 2);
	CHECKF(has_problem(err, "already uses 3 of its quota of 4"), "cpu usage not named");
	CHECKF(has_problem(err, "may have 2 active runs and has 2 already"), "runs usage not named");
	CHECKF(run != NULL, "a refused run is handed back for explain");
	berth_run_free(run);
	berth_error_free(err);
	berth_spec_set_free(s);
	berth_policy_free(p);
}

/* A distributed job's workers count all at once against the quota (gang:
 * none starts until every one may): 3 workers of 2 CPUs are 6, over 4. */
static void test_quota_counts_every_worker(void)
{
	berth_policy *p = policy();
	berth_spec_set *s = specs("function: {name: train, image: python:3.11, command: [torchrun, t.py]}\n"
				  "resources: {cpu: '2', mem: 1Gi}\n"
				  "replicas: 3\n"
				  "distributed: {launcher: torchrun}\n");
	berth_run *run = NULL;
	berth_error *err = NULL;
	berth_run_opts o = {.run_id = "w1"};
	CHECK_INT(berth_run_plan(&run, berth_spec_set_get(s, 0), p, &o, &err), -BERTH_EPOLICY);
	CHECKF(has_problem(err, "the run needs 6 cpu, more than project \"default\"'s whole quota of 4"),
	       "the workers' cpu is not counted together");
	berth_run_free(run);
	berth_error_free(err);
	berth_spec_set_free(s);
	/* two workers of 2 fit the 4 */
	s = specs("function: {name: train, image: python:3.11, command: [python, t.py]}\n"
		  "resources: {cpu: '2', mem: 1Gi}\nreplicas: 2\n");
	err = NULL;
	CHECK_INT(berth_run_plan(&run, berth_spec_set_get(s, 0), p, &o, &err), 0);
	berth_run_free(run);
	berth_error_free(err);
	berth_spec_set_free(s);
	berth_policy_free(p);
}

/* A request a rule derives from a limit is refused at the limit someone
 * wrote, in that one's file: the function's, not the policy's (the server's
 * stored functions), nor without a position. */
static void test_derived_request_at_its_limit(void)
{
	berth_policy *p = policy();
	static const char fn[] = "function: {name: f, image: i, command: [x]}\nresources:\n  cpu: {limits: '16'}\n";
	berth_spec_set *f = NULL;
	CHECK_INT(berth_spec_parse(&f, "function.yaml", fn, sizeof(fn) - 1, NULL), 0);
	berth_spec_set *s = specs("function: f\n");
	berth_run *run = NULL;
	berth_error *err = NULL;
	berth_run_opts o = {.run_id = "d1", .function = berth_spec_set_get(f, 0)};
	CHECK_INT(berth_run_plan(&run, berth_spec_set_get(s, 0), p, &o, &err), -BERTH_EPOLICY);
	const berth_problem *q = berth_error_count(err) ? berth_error_get(err, 0) : NULL;
	CHECKF(q && q->file && !strcmp(q->file, "function.yaml") && q->line == 3 && q->column == 18,
	       "refused at %s:%u:%u: %s", q && q->file ? q->file : "-", q ? q->line : 0,
	       q ? q->column : 0, q ? q->message : "no problem");
	berth_run_free(run);
	berth_error_free(err);
	berth_spec_set_free(s);
	berth_spec_set_free(f);
	berth_policy_free(p);
}

/* The ids of a stream's runs: the base, then base-N (the base cut at 24
 * bytes), cut to the buffer as snprintf cuts. */
static void test_run_id_nth(void)
{
	static const struct {
		const char *base;
		size_t index, size;
		const char *want;
	} rows[] = {
		{"train", 0, 64, "train"},
		{"train", 1, 64, "train-2"},
		{"train", 99, 64, "train-100"},
		{"abcdefghijklmnopqrstuvwxyz0123", 2, 64, "abcdefghijklmnopqrstuvwx-3"},
		{"train", 1, 6, "train"},
		{"ab", 12344, 6, "ab-12"},
	};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(rows); i++) {
		char id[64];
		berth_run_id_nth(id, rows[i].size, rows[i].base, rows[i].index);
		CHECK_STR(id, rows[i].want);
	}
}

/* Without notes (berth render) the run is the same, and says nothing of why. */
static void test_no_notes(void)
{
	berth_policy *p = policy();
	berth_spec_set *s = specs(spec_text);
	berth_run *with = NULL, *without = NULL;
	berth_error *e1 = NULL, *e2 = NULL;
	const char *const secrets[] = {"token"};
	berth_run_opts o = {.run_id = "n1", .secrets = secrets, .nsecrets = 1};
	CHECK_INT(berth_run_plan(&with, berth_spec_set_get(s, 0), p, &o, &e1), 0);
	o.no_notes = true;
	CHECK_INT(berth_run_plan(&without, berth_spec_set_get(s, 0), p, &o, &e2), 0);
	if (with && without) {
		CHECK(berth_run_note(with, "resources.mem.limits") != NULL);
		CHECK(berth_run_note(without, "resources.mem.limits") == NULL);
		CHECK_INT(berth_quantity_cmp(&with->spec.resources.mem.limits.q,
					     &without->spec.resources.mem.limits.q), 0);
		CHECK_INT(berth_error_count(e2), berth_error_count(e1));
	}
	berth_run_free(with);
	berth_run_free(without);
	berth_error_free(e1);
	berth_error_free(e2);
	berth_spec_set_free(s);
	berth_policy_free(p);
}

static void test_secrets_need_a_store(void)
{
	berth_spec_set *s = specs(spec_text);
	berth_run *run = NULL;
	berth_error *err = NULL;
	const char *known[] = {"tokens"};
	berth_run_opts o = {.run_id = "s1"};

	/* no store: names are not checked */
	CHECK_INT(berth_run_plan(&run, berth_spec_set_get(s, 0), NULL, &o, &err), 0);
	berth_run_free(run);
	o.secrets = known;
	o.nsecrets = 1;
	o.check_secrets = true;
	CHECK_INT(berth_run_plan(&run, berth_spec_set_get(s, 0), NULL, &o, &err), -BERTH_EPOLICY);
	CHECKF(has_problem(err, "unknown secret \"token\" in project \"default\"; did you mean \"tokens\"?"),
	       "secret refusal");
	berth_run_free(run);
	berth_error_free(err);
	berth_spec_set_free(s);
}

static const char *step; /* the step that failed, for messages */

/* The whole path; returns 0 with the rendered YAML and explain JSON in *out. */
static int whole(char **out, berth_error **err)
{
	berth_policy *p = NULL;
	berth_spec_set *s = NULL;
	berth_run *run = NULL;
	berth_render *r = NULL;
	char *yaml = NULL, *json = NULL;
	size_t yl = 0, jl = 0;
	berth_run_opts o = {.run_id = "f1"};
	step = "policy";
	int ret = berth_policy_parse(&p, "policy.yaml", policy_text, sizeof(policy_text) - 1, err);
	if (ret == 0 && (step = "spec"))
		ret = berth_spec_parse(&s, "spec.yaml", spec_text, sizeof(spec_text) - 1, err);
	if (ret == 0 && (step = "plan"))
		ret = berth_run_plan(&run, berth_spec_set_get(s, 0), p, &o, err);
	if (ret == 0 && (step = "render_new") && !(r = berth_render_new(BERTH_FORMAT_YAML)))
		ret = berth_fail(err, BERTH_ENOMEM, "out of memory"); /* NULL is its only failure */
	if (ret == 0 && (step = "render"))
		ret = berth_render_add(r, run, err);
	if (ret == 0 && (step = "finish"))
		ret = berth_render_finish(r, &yaml, &yl, err);
	if (ret == 0 && (step = "explain"))
		ret = berth_explain(run, NULL, BERTH_EXPLAIN_JSON, &json, &jl, err);
	if (ret == 0) {
		*out = malloc(yl + jl + 1);
		if (*out) {
			memcpy(*out, yaml, yl);
			memcpy(*out + yl, json, jl + 1);
		}
	}
	free(yaml);
	free(json);
	berth_render_free(r);
	berth_run_free(run);
	berth_spec_set_free(s);
	berth_policy_free(p);
	return ret;
}

static void test_allocation_failures(void)
{
	char *want = NULL;
	berth_error *err = NULL;
	CHECK_INT(whole(&want, &err), 0);
	CHECK(want && strstr(want, "nodeSelectorTerms") && strstr(want, "\"status\": \"accepted\""));
	berth_error_free(err);
	int done = 0;
	for (long n = 1; n < 20000 && !done; n++) {
		char *got = NULL;
		err = NULL;
		berth_fail_alloc_after = n;
		int ret = whole(&got, &err);
		int injected = berth_fail_alloc_after == 0;
		berth_fail_alloc_after = 0;
		if (!injected) {
			CHECKF(ret == 0, "n=%ld: no failure injected but %d", n, ret);
			done = 1;
		}
		if (ret == 0) {
			/* a failure that costs nothing leaves the output as it was */
			CHECKF(got && want && strcmp(got, want) == 0, "n=%ld: output differs", n);
		} else {
			CHECKF(ret == -BERTH_ENOMEM, "n=%ld (%s): failed with %d, not ENOMEM", n, step, ret);
			CHECKF(berth_error_code(err) == BERTH_ENOMEM, "n=%ld (%s): error says %s", n, step,
			       berth_code_name(berth_error_code(err)));
		}
		free(got);
		berth_error_free(err);
	}
	CHECK(done);
	free(want);
}

/* explain names what a profile overrode: of the run spec where it set the
 * field, else of the registered function (the function layer). */
static void test_overrides_of_each_layer(void)
{
	berth_policy *p = policy();
	berth_spec_set *fn = specs("function: {name: train, image: python:3.11, command: [python]}\n"
				   "resources: {cpu: '3', gpu: 2}\nenvs: [{name: A, value: fn}]\n");
	berth_spec_set *s = specs("function: train\nprofile: gpu\nresources: {cpu: '2'}\n");
	berth_run_opts o = {.run_id = "o1", .function = berth_spec_set_get(fn, 0)};
	berth_run *run = NULL;
	berth_error *err = NULL;
	char *json = NULL;
	size_t jl = 0;
	/* refused by the quota (cpu 8 of 4): the run is handed back all the same */
	berth_run_plan(&run, berth_spec_set_get(s, 0), p, &o, &err);
	CHECK(run != NULL);
	if (!run)
		goto out;
	CHECK_INT(berth_explain(run, NULL, BERTH_EXPLAIN_JSON, &json, &jl, NULL), 0);
	/* cpu: both layers set it, the run spec's 2 is what the profile's 8 replaced */
	CHECKF(json && strstr(json, "\"value\": \"8\",\n      \"origin\": \"profile\",\n      \"at\": \"policy.yaml:9:40\",\n"
				    "      \"overrides\": {\n        \"value\": \"2\",\n        \"origin\": \"run spec\",\n"
				    "        \"at\": \"spec.yaml:3:19\",\n        \"by\": \"profile \\\"gpu\\\"\"\n"),
	       "cpu:\n%s", json ? json : "(null)");
	/* gpu and env A: only the function set them */
	CHECKF(json && strstr(json, "\"overrides\": {\n        \"value\": \"2\",\n        \"origin\": \"function\""),
	       "gpu:\n%s", json ? json : "(null)");
	CHECKF(json && strstr(json, "\"path\": \"envs.A\",\n      \"value\": \"b\",\n      \"origin\": \"profile\",\n"
				    "      \"at\": \"policy.yaml:9:60\",\n      \"overrides\": {\n        \"value\": \"fn\",\n"
				    "        \"origin\": \"function\""),
	       "env:\n%s", json ? json : "(null)");
	/* a value no layer below set has nothing to override */
	CHECKF(json && !strstr(json, "\"path\": \"profile\",\n      \"value\": \"gpu\",\n      \"origin\": \"run spec\",\n      \"at\": \"spec.yaml:2:10\",\n      \"overrides\""),
	       "profile row");
	free(json);
out:
	berth_run_free(run);
	berth_error_free(err);
	berth_spec_set_free(s);
	berth_spec_set_free(fn);
	berth_policy_free(p);
}

/* Every problem of err, formatted ("FILE:LINE:COL: PATH: message"), one a line. */
static const char *problems(const berth_error *e)
{
	static char all[4096];
	size_t o = 0;
	all[0] = '\0';
	for (size_t i = 0; i < berth_error_count(e) && o < sizeof(all) - 1; i++) {
		o += berth_problem_format(berth_error_get(e, i), all + o, sizeof(all) - o);
		if (o < sizeof(all) - 1)
			all[o++] = '\n';
		all[o] = '\0';
	}
	return all;
}

/* A policy from text (NULL: the built-in one): 0, or its errors in *err. */
static int policy_from(berth_policy **p, const char *text, berth_error **err)
{
	*p = NULL;
	if (!text)
		return (*p = berth_policy_builtin()) ? 0 : -BERTH_ENOMEM;
	return berth_policy_parse(p, "policy.yaml", text, strlen(text), err);
}

/* Without a word in the policy: root disabled, ids from 1000, 1024
 * processes a run, local uids 2000000000-2000065535. */
static void test_policy_defaults(void)
{
	static const struct {
		const char *policy;
		bool non_root;
		int64_t pids, uid_min, uid_max;
	} rows[] = {
		{NULL, true, 1024, 2000000000, 2000065535},
		{"namespace: ml\n", true, 1024, 2000000000, 2000065535},
		{"security: {disable_root: false}\nlimits: {pids: 77}\n", false, 77, 2000000000, 2000065535},
		{"security: {disable_root: true}\nlimits: {pids: \"4194304\"}\n", true, 4194304, 2000000000, 2000065535},
		{"local: {uid_range: \"100000-165535\"}\n", true, 1024, 100000, 165535},
		{"local: {uid_range: {max: 2000000100}}\n", true, 1024, 2000000000, 2000000100},
		{"local: {uid_range: {min: 3000000000, max: 3000000009}}\n", true, 1024, 3000000000, 3000000009},
	};
	int64_t lo = 0, hi = 0;
	berth_policy_uid_range(NULL, &lo, &hi);
	CHECK_INT(lo, 2000000000);
	CHECK_INT(hi, 2000065535);
	berth_spec_set *s = specs("function: {name: train, image: python:3.11, command: [python]}\n"
				  "run_as_user: 1000\n");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		berth_policy *p = NULL;
		berth_error *err = NULL;
		berth_run *run = NULL;
		berth_run_opts o = {.run_id = "d1"};
		if (!CHECKF(policy_from(&p, rows[i].policy, &err) == 0, "row %zu: %s", i, problems(err))) {
			berth_error_free(err);
			continue;
		}
		berth_policy_uid_range(p, &lo, &hi);
		CHECKF(lo == rows[i].uid_min && hi == rows[i].uid_max, "row %zu: uid_range %lld-%lld", i,
		       (long long)lo, (long long)hi);
		CHECKF(berth_run_plan(&run, berth_spec_set_get(s, 0), p, &o, &err) == 0, "row %zu: %s", i,
		       problems(err));
		if (run) {
			CHECKF(run->run_as_non_root == rows[i].non_root, "row %zu: run_as_non_root", i);
			CHECKF(run->pids_max == rows[i].pids, "row %zu: pids_max %lld", i, (long long)run->pids_max);
		}
		berth_run_free(run);
		berth_error_free(err);
		berth_policy_free(p);
	}
	berth_spec_set_free(s);
}

/* MLRun's classes (seed 002: "High, Medium, Low. The default is Medium."): the
 * built-in policy's, in any case, ordered in the local queue as berth cluster
 * setup orders them; any other name is used as written there. A policy file
 * has only its own classes, and "HIGH" is one of them only when every name it
 * can be maps to one class. */
static void test_builtin_priority_classes(void)
{
	static const struct {
		const char *policy, *spec, *want; /* want: the PriorityClass, or a problem */
		int64_t value;
	} rows[] = {
		{NULL, "", "berth-medium", 10000},
		{NULL, "priority_class: High\n", "berth-high", 100000},
		{NULL, "priority_class: MEDIUM\n", "berth-medium", 10000},
		{NULL, "priority_class: low\n", "berth-low", 1000},
		{NULL, "priority_class: default-priority\n", "default-priority", 0},
		{NULL, "priority_class: Top\n", "is none of the built-in classes high, medium, low", 0},
		{"priority_classes: {high: pc-h, low: pc-l}\n", "priority_class: HIGH\n", "pc-h", 0},
		{"priority_classes: {high: pc-h, low: pc-l}\n", "", NULL, 0},
		{"priority_classes: {high: pc-h}\n", "priority_class: medium\n", "unknown priority class", 0},
		{"priority_classes: {high: pc-h, High: pc-h, HIGH: pc-x}\n", "priority_class: High\n", "pc-h", 0},
		{"priority_classes: {high: pc-h, High: pc-h, HIGH: pc-x}\n", "priority_class: hIGH\n",
		 "\"HIGH\" of priority_classes (policy.yaml:1:19), which are different classes", 0},
		{"namespace: ml\n", "priority_class: High\n", "not a valid PriorityClass name", 0},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char text[256];
		snprintf(text, sizeof(text), "function: {name: t, image: python:3.11, command: [python]}\n%s",
			 rows[i].spec);
		berth_spec_set *s = specs(text);
		berth_policy *p = NULL;
		berth_error *err = NULL;
		berth_run *run = NULL;
		berth_run_opts o = {.run_id = "p1"};
		CHECK_INT(policy_from(&p, rows[i].policy, NULL), 0);
		int rc = berth_run_plan(&run, berth_spec_set_get(s, 0), p, &o, &err);
		if (rows[i].want && !strchr(rows[i].want, ' ')) {
			CHECKF(rc == 0, "row %zu: %s", i, problems(err));
			if (run && CHECKF(run->priority_class_name != NULL, "row %zu: no class", i))
				CHECKF(!strcmp(run->priority_class_name, rows[i].want), "row %zu: %s", i,
				       run->priority_class_name);
			CHECKF(berth_policy_priority_value(p, rows[i].want) == rows[i].value,
			       "row %zu: value %lld", i, (long long)berth_policy_priority_value(p, rows[i].want));
		} else if (rows[i].want) {
			CHECKF(rc < 0 && has_problem(err, rows[i].want), "row %zu: %s", i, problems(err));
		} else {
			CHECKF(rc == 0 && run && !run->priority_class_name, "row %zu: %s", i, problems(err));
		}
		berth_run_free(run);
		berth_error_free(err);
		berth_policy_free(p);
		berth_spec_set_free(s);
	}
}

/* A function's template is checked for the action of each run that uses it,
 * on the merged spec (seed 002: spec.min_replicas = 1, spec.max_replicas = 4,
 * then run as a server): not as a job when it is registered, and never let
 * through when the run's action is one its fields do not apply to. */
static void test_template_checked_for_the_run_action(void)
{
	static const struct {
		const char *fn, *run;
		const char *want; /* NULL: planned; else the problems, formatted */
	} rows[] = {
		/* autoscaling set on a template with no action: a server's */
		{"min_replicas: 1\nmax_replicas: 4\n", "function: f\naction: serve\n", NULL},
		{"min_replicas: 1\nmax_replicas: 4\n", "function: f\n",
		 "function f:1:15: min_replicas: min_replicas applies to action serve or deploy, not job\n"
		 "function f:2:15: max_replicas: max_replicas applies to action serve or deploy, not job\n"},
		/* the function's action is not the run's: checked for the run's */
		{"action: serve\nmin_replicas: 1\nmax_replicas: 4\n", "function: f\naction: job\n",
		 "function f:2:15: min_replicas: min_replicas applies to action serve or deploy, not job\n"
		 "function f:3:15: max_replicas: max_replicas applies to action serve or deploy, not job\n"},
		{"action: serve\nservice: {ports: [{port: 80}]}\n", "function: f\naction: deploy\n",
		 "function f:2:10: service: a service applies to action serve, not deploy\n"},
		/* a pair across layers */
		{"action: serve\nmax_replicas: 4\n", "function: f\nmin_replicas: 2\n", NULL},
		{"action: serve\nmax_replicas: 4\n", "function: f\nmin_replicas: 5\n",
		 "spec.yaml:2:15: min_replicas: min_replicas 5 is more than max_replicas 4\n"},
		{"action: serve\nreplicas: 2\n", "function: f\nmin_replicas: 1\nmax_replicas: 3\n",
		 "function f:2:11: replicas: give either replicas or min_replicas and max_replicas "
		 "(autoscaling), not both\n"},
		{"schedule: \"0 3 * * *\"\n", "function: f\naction: cronjob\n", NULL},
		{"distributed: {launcher: torchrun}\n", "function: f\ndistributed: {procs_per_worker: 2}\n", NULL},
		{"distributed: {procs_per_worker: 2}\n", "function: f\n",
		 "function f:1:33: distributed.procs_per_worker: procs_per_worker applies to launchers "
		 "torchrun and mpi (which start them), not env (the default)\n"},
	};
	berth_policy *p = NULL;
	CHECK_INT(policy_from(&p, NULL, NULL), 0);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char text[512];
		snprintf(text, sizeof(text), "%sfunction: {name: f, image: python:3.11, command: [python]}\n",
			 rows[i].fn);
		berth_spec_set *fn = NULL, *run_set = NULL;
		berth_error *err = NULL;
		berth_run *run = NULL;
		/* registered: read and planned alone, as a template */
		if (!CHECKF(berth_spec_parse_function(&fn, "function f", text, strlen(text), &err) == 0,
			    "row %zu: %s", i, problems(err)))
			goto next;
		berth_run_opts t = {.run_id = "c1", .template = true};
		CHECKF(berth_run_plan(&run, berth_spec_set_get(fn, 0), p, &t, &err) == 0, "row %zu: %s", i,
		       problems(err));
		berth_run_free(run);
		run = NULL;
		berth_error_free(err);
		err = NULL;
		/* a run that names it: checked for its action */
		if (!CHECKF(berth_spec_parse(&run_set, "spec.yaml", rows[i].run, strlen(rows[i].run), &err) == 0,
			    "row %zu: %s", i, problems(err)))
			goto next;
		berth_run_opts o = {.run_id = "r1", .function = berth_spec_set_get(fn, 0)};
		int rc = berth_run_plan(&run, berth_spec_set_get(run_set, 0), p, &o, &err);
		if (rows[i].want)
			CHECKF(rc < 0 && !strcmp(problems(err), rows[i].want), "row %zu: %s", i, problems(err));
		else
			CHECKF(rc == 0, "row %zu: %s", i, problems(err));
	next:
		berth_run_free(run);
		berth_error_free(err);
		berth_spec_set_free(fn);
		berth_spec_set_free(run_set);
	}
	/* a whole run is still checked alone as it is read; a template is not,
	 * even for an action of its own, which a run may change */
	static const char text[] = "action: job\nmin_replicas: 1\nmax_replicas: 4\n"
				   "function: {name: f, image: i, command: [x]}\n";
	for (int template = 0; template < 2; template++) {
		berth_spec_set *set = NULL;
		berth_error *err = NULL;
		int rc = template ? berth_spec_parse_function(&set, "function f", text, sizeof(text) - 1, &err)
				  : berth_spec_parse(&set, "spec.yaml", text, sizeof(text) - 1, &err);
		if (template)
			CHECKF(rc == 0, "template: %s", problems(err));
		else
			CHECKF(rc < 0 && has_problem(err, "min_replicas applies to action serve or deploy, not job"),
			       "alone: %s", problems(err));
		berth_error_free(err);
		berth_spec_set_free(set);
	}
	berth_policy_free(p);
}

/* requests: default in a function (what the SDK's with_limits writes, as MLRun
 * keeps its default request under a limit): the policy's default request, until
 * a higher layer gives one; a profile that decides the resource drops it. */
static void test_request_default_in_a_function(void)
{
	static const struct {
		const char *run;
		int cpu; /* the cpu request, else mem's */
		const char *want, *origin;
	} rows[] = {
		{"function: train\n", 0, "256Mi", "policy default"},
		{"function: train\n", 1, "100m", "policy default"},
		{"function: train\nresources: {mem: 2Gi}\n", 0, "2Gi", "run spec"},
		/* a limit of the run's leaves the function's requests: default in force */
		{"function: train\nresources: {mem: {limits: 3Gi}}\n", 0, "256Mi", "policy default"},
		/* profile gpu decides cpu whole (8) */
		{"function: train\nprofile: gpu\n", 1, "8", "profile"},
	};
	berth_policy *p = policy();
	berth_spec_set *fn = NULL;
	static const char text[] = "function: {name: train, image: python:3.11, command: [python]}\n"
				   "resources: {mem: {limits: 8Gi, requests: default}, "
				   "cpu: {limits: '6', requests: default}}\n";
	CHECK_INT(berth_spec_parse_function(&fn, "function train", text, sizeof(text) - 1, NULL), 0);
	for (size_t i = 0; fn && i < sizeof(rows) / sizeof(rows[0]); i++) {
		berth_spec_set *s = specs(rows[i].run);
		berth_run_opts o = {.run_id = "d1", .function = berth_spec_set_get(fn, 0)};
		berth_run *run = NULL;
		berth_error *err = NULL;
		berth_run_plan(&run, berth_spec_set_get(s, 0), p, &o, &err);
		if (CHECKF(run != NULL, "row %zu: %s", i, problems(err))) {
			const berth_qty *q = rows[i].cpu ? &run->spec.resources.cpu.requests
							 : &run->spec.resources.mem.requests;
			char got[BERTH_QUANTITY_STR_MAX] = "";
			berth_quantity_format(&q->q, got, sizeof(got));
			CHECKF(q->set && !q->from_default && !strcmp(got, rows[i].want) &&
				       !strcmp(berth_origin_name((berth_origin)q->origin), rows[i].origin),
			       "row %zu: %s from %s", i, got, berth_origin_name((berth_origin)q->origin));
		}
		berth_run_free(run);
		berth_error_free(err);
		berth_spec_set_free(s);
	}
	berth_spec_set_free(fn);
	berth_policy_free(p);
}

/* Bad ranges, pids and uid ranges: each refused at its place in the policy. */
static void test_policy_range_errors(void)
{
	static const struct {
		const char *policy, *want;
	} rows[] = {
		{"security: {run_as_user_range: \"2000-1000\"}\n",
		 "policy.yaml:1:32: security.run_as_user_range: min 2000 is more than max 1000\n"},
		{"security: {run_as_group_range: {min: 5, max: 4}}\n",
		 "policy.yaml:1:38: security.run_as_group_range: min 5 is more than max 4\n"},
		{"security: {fs_group_range: {max: 999}}\n",
		 "policy.yaml:1:34: security.fs_group_range: min 1000 (the default) is more than max 999\n"},
		{"security: {fs_group_range: {min: 1.5}}\n",
		 "policy.yaml:1:34: security.fs_group_range.min: must be an integer, not a number\n"},
		{"security: {fs_group_range: {min: 1, mx: 2}}\n",
		 "policy.yaml:1:37: security.fs_group_range.mx: unknown key \"mx\"; did you mean \"max\"?\n"},
		{"security: {run_as_user_range: -5-10}\n",
		 "policy.yaml:1:31: security.run_as_user_range: \"-5-10\": an id must not be negative\n"},
		{"security: {run_as_user_range: 1000}\n",
		 "policy.yaml:1:31: security.run_as_user_range: \"1000\" is not a range: write \"MIN-MAX\" "
		 "(e.g. \"1000-2147483647\") or {min: MIN, max: MAX}\n"},
		{"security: {run_as_user_range: \"1000 - 2000\"}\n",
		 "policy.yaml:1:32: security.run_as_user_range: \"1000 - 2000\" is not a range: write \"MIN-MAX\" "
		 "(e.g. \"1000-2147483647\") or {min: MIN, max: MAX}\n"},
		{"security: {run_as_user_range: \"1000-2147483648\"}\n",
		 "policy.yaml:1:32: security.run_as_user_range: 2147483648 is out of range (0 to 2147483647)\n"},
		{"limits: {pids: 0}\n",
		 "policy.yaml:1:16: limits.pids: 0 is out of range (1 to 4194304, the kernel's largest number of processes)\n"},
		{"limits: {pids: many}\n", "policy.yaml:1:16: limits.pids: \"many\" is not an integer\n"},
		{"limits: {pids: 4194305}\n",
		 "policy.yaml:1:16: limits.pids: 4194305 is out of range (1 to 4194304, the kernel's largest number of processes)\n"},
		{"local: {uid_range: \"0-65535\"}\n",
		 "policy.yaml:1:21: local.uid_range: 0 is out of range (1 to 4294967294)\n"},
		{"local: {uid_range: {min: 2000065536}}\n",
		 "policy.yaml:1:26: local.uid_range: min 2000065536 is more than max 2000065535 (the default)\n"},
		{"local: {uid_range: yes}\n",
		 "policy.yaml:1:20: local.uid_range: \"yes\" is not a range: write \"MIN-MAX\" "
		 "(e.g. \"2000000000-2000065535\") or {min: MIN, max: MAX}\n"},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		berth_policy *p = NULL;
		berth_error *err = NULL;
		CHECKF(policy_from(&p, rows[i].policy, &err) < 0, "row %zu: accepted", i);
		CHECKF(strcmp(problems(err), rows[i].want) == 0, "row %zu:\n got: %s want: %s", i,
		       problems(err), rows[i].want);
		berth_error_free(err);
		berth_policy_free(p);
	}
}

/* The overlays' own checks (issue 27): each problem at its place, its path
 * under projects.NAME, an unknown key with a did-you-mean; a bound an
 * overlay leaves out keeps the policy's. */
static void test_project_overlay_errors(void)
{
	static const struct {
		const char *policy, *want;
	} rows[] = {
		{"projects: {ml: {limit: {cpu: '2'}}}\n",
		 "policy.yaml:1:17: projects.ml.limit: unknown key \"limit\"; did you mean \"limits\"?\n"},
		{"projects: {ml: {defaults: {resources: {gpu: 0.5}}}}\n",
		 "policy.yaml:1:45: projects.ml.defaults.resources.gpu.limits: 0.5 is not a whole number of GPUs "
		 "(GPUs cannot be shared or split)\n"},
		{"projects: {ml: {security: {fs_group_range: {max: 999}}}}\n",
		 "policy.yaml:1:50: projects.ml.security.fs_group_range: min 1000 (the default) is more than max 999\n"},
		{"security: {fs_group_range: \"1-2000\"}\nprojects: {ml: {security: {fs_group_range: {max: 999}}}}\n",
		 ""},
		{"security: {user_fields: [resources]}\nprojects: {ml: {security: {user_fields: [volume_mod]}}}\n",
		 "policy.yaml:2:42: projects.ml.security.user_fields: \"volume_mod\" is not a run spec field that "
		 "can be locked; did you mean \"volume_mode\"?\n"},
		{"projects: {ml: {quotas: {gpu: -1}}}\n",
		 "policy.yaml:1:31: projects.ml.quotas: a quota must not be negative\n"},
		{"quotas: {ml: {gpu: '1'}}\nprojects: {ml: {quotas: {gpu: '2'}}}\n",
		 "policy.yaml:2:25: projects.ml.quotas: the quota of project \"ml\" is written twice: here and as "
		 "quotas.ml (line 1); keep one (they are the same quota)\n"},
		{"projects: [ml]\n",
		 "policy.yaml:1:11: projects: must be a map of project name to what that project's runs get, "
		 "not a list\n"},
		{"projects: {ml: {profiles: [{id: a}, {id: a}]}}\n",
		 "policy.yaml:1:42: projects.ml.profiles[1]: profile \"a\" is defined twice (first at policy.yaml:1)\n"},
		{"limits: {mem: 1Gi}\nprojects: {ml: {defaults: {volumes: [{volume_type: persistent_volume_claim, "
		 "name: v, mount_path: /v, spec: {size: 1Gi}}]}, limits: {volume_size: 512Mi}}}\n",
		 "policy.yaml:2:115: projects.ml.defaults.volumes[0].spec.size: 1Gi is over the platform's limit of "
		 "512Mi (limits.volume_size, policy.yaml:2:146): every run of project \"ml\" that leaves it to its "
		 "defaults would be refused\n"},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		berth_policy *p = NULL;
		berth_error *err = NULL;
		int rc = policy_from(&p, rows[i].policy, &err);
		CHECKF(rows[i].want[0] ? rc < 0 : rc == 0, "row %zu: %s", i, rc ? "refused" : "accepted");
		CHECKF(strcmp(problems(err), rows[i].want) == 0, "row %zu:\n got: %s want: %s", i,
		       problems(err), rows[i].want);
		berth_error_free(err);
		berth_policy_free(p);
	}
}

/* A project's view: its overlay over the policy's keys, by the merge's rules
 * (defaults key by key, profiles by id, priority classes by name), each value
 * of the overlay's with its own origin; another project's view is the policy. */
static void test_project_views(void)
{
	static const char text[] =
		"defaults: {resources: {cpu: 100m}, envs: [{name: A, value: all}, {name: B, value: all}],"
		" volumes: [{volume_type: empty_dir, name: scratch, mount_path: /scratch}]}\n"
		"limits: {cpu: '4', mem: 8Gi}\n"
		"priority_classes: {low: berth-low}\n"
		"profiles: [{id: small, resources: {cpu: '1'}}, {id: big, resources: {cpu: '4'}}]\n"
		"projects:\n"
		"  ml:\n"
		"    defaults: {envs: [{name: B, value: ml}]}\n"
		"    limits: {mem: 64Gi}\n"
		"    priority_classes: {urgent: berth-urgent}\n"
		"    profiles: [{id: big, resources: {cpu: '2'}}, {id: gpu, resources: {gpu: 1}}]\n"
		"    quotas: {gpu: '4'}\n"
		"    namespace: ml-team\n";
	berth_policy *p = NULL;
	berth_error *err = NULL;
	if (!CHECKF(policy_from(&p, text, &err) == 0, "%s", problems(err))) {
		berth_error_free(err);
		return;
	}
	const berth_policy *ml = berth_policy_for_project(p, "ml"), *other = berth_policy_for_project(p, "data");
	CHECK(other == p);
	CHECK(ml != p);
	CHECK_STR(berth_policy_project(ml), "ml");
	CHECK(berth_policy_project(p) == NULL);
	/* profiles: the overlay's first, then the policy's it does not define again */
	CHECK_INT(berth_policy_profile_count(ml), 3);
	CHECK_STR(berth_policy_profile_get(ml, 0)->id.s, "big");
	CHECK_STR(berth_policy_profile_get(ml, 1)->id.s, "gpu");
	CHECK_STR(berth_policy_profile_get(ml, 2)->id.s, "small");
	CHECK(berth_policy_profile_get(ml, 3) == NULL);
	CHECK_STR(berth_policy_profile_find(ml, "big")->project, "ml");
	CHECK(berth_policy_profile_find(ml, "small")->project == NULL);
	CHECK_INT(berth_policy_profile_count(p), 2);
	CHECK(berth_policy_profile_find(p, "gpu") == NULL);
	CHECK(berth_policy_profile_find(p, "big")->project == NULL);
	/* keys: replaced one by one; priority classes merged by name */
	CHECK(ml->limits.cpu.set && ml->limits.mem.set);
	CHECK_INT(ml->limits.mem.pos.line, 8);
	CHECK_INT(ml->limits.cpu.pos.line, 2);
	CHECK_INT(ml->priority_classes.n, 2);
	CHECK_STR(ml->namespace.s, "ml-team");
	CHECK(p->namespace.s == NULL);
	/* the quota is the project's, for the policy too (the server's quota routes) */
	const berth_quota *q = berth_policy_quota(p, "ml");
	CHECK(q && q->overlay && q->gpu.set);
	CHECK(berth_policy_quota(p, "data") == NULL);
	/* a run of ml: each value's origin, and the policy's volume with them */
	berth_spec_set *s = specs("project: ml\nfunction: {name: t, image: python:3.11}\n---\n"
				  "project: ml\nfunction: {name: t, image: python:3.11}\nvolume_mode: Manual\n");
	for (size_t d = 0; d < 2; d++) {
		berth_run *run = NULL;
		berth_run_opts o = {.run_id = "v1"};
		CHECKF(berth_run_plan(&run, berth_spec_set_get(s, d), p, &o, &err) == 0, "doc %zu: %s", d, problems(err));
		if (!run)
			continue;
		CHECK_STR(run->policy_project, "ml");
		CHECK_STR(run->namespace, "ml-team");
		const berth_kvlist *envs = &run->spec.envs;
		CHECK_INT(envs->n, 2);
		for (size_t i = 0; i < envs->n; i++)
			CHECKF(envs->items[i].origin == (!strcmp(envs->items[i].key.s, "B") ? BERTH_ORIGIN_PROJECT
											 : BERTH_ORIGIN_DEFAULT),
			       "env %s origin %d", envs->items[i].key.s, envs->items[i].origin);
		CHECK_INT(run->spec.nvolumes, d ? 0 : 1);
		CHECK(d ? run->spec.volume_mode.s && !strcmp(run->spec.volume_mode.s, "manual")
			: run->spec.volume_mode.s == NULL);
		berth_run_free(run);
	}
	berth_spec_set_free(s);
	berth_error_free(err);
	berth_policy_free(p);
}

/* A run's ids against the ranges and disable_root, refused at the spec's value. */
static void test_id_ranges(void)
{
	static const struct {
		const char *policy, *ids, *want; /* want: "" accepted */
	} rows[] = {
		{NULL, "run_as_user: 1000\nrun_as_group: 1000\nfs_group: \"8877\"\n", ""},
		{NULL, "run_as_user: 999\n",
		 "spec.yaml:2:14: run_as_user: 999 from the run spec is outside the ids the platform allows, "
		 "1000-2147483647 (security.run_as_user_range, built-in default)\n"},
		{NULL, "run_as_group: 0\n",
		 "spec.yaml:2:15: run_as_group: 0 (root) is not allowed: the platform disables root "
		 "(security.disable_root, built-in default)\n"},
		{"security: {disable_root: false}\n", "fs_group: 0\n",
		 "spec.yaml:2:11: fs_group: 0 from the run spec is outside the ids the platform allows, "
		 "1000-2147483647 (security.fs_group_range, built-in default)\n"},
		{"security: {disable_root: false, fs_group_range: 0-10}\n", "fs_group: 0\n", ""},
		{"security: {fs_group_range: 0-10}\n", "fs_group: 0\n",
		 "spec.yaml:2:11: fs_group: 0 (root) is not allowed: the platform disables root "
		 "(security.disable_root, built-in default)\n"},
		{"security: {disable_root: true, run_as_user_range: {min: 0, max: 10}}\n", "run_as_user: 0\n",
		 "spec.yaml:2:14: run_as_user: 0 (root) is not allowed: the platform disables root "
		 "(security.disable_root, policy.yaml:1:26)\n"},
		{"security: {run_as_group_range: \"1000-1999\"}\n", "run_as_group: 2000\n",
		 "spec.yaml:2:15: run_as_group: 2000 from the run spec is outside the ids the platform allows, "
		 "1000-1999 (security.run_as_group_range, policy.yaml:1:33)\n"},
		{"security: {run_as_group_range: {max: 1999}}\n", "run_as_group: 999\n",
		 "spec.yaml:2:15: run_as_group: 999 from the run spec is outside the ids the platform allows, "
		 "1000-1999 (security.run_as_group_range, built-in default)\n"},
		{"defaults: {run_as_user: 500}\n", "",
		 "policy.yaml:1:25: run_as_user: 500 from the policy's defaults is outside the ids the platform "
		 "allows, 1000-2147483647 (security.run_as_user_range, built-in default)\n"},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		berth_policy *p = NULL;
		berth_error *err = NULL;
		berth_run *run = NULL;
		berth_run_opts o = {.run_id = "r1"};
		char text[256];
		snprintf(text, sizeof(text), "function: {name: train, image: python:3.11, command: [python]}\n%s",
			 rows[i].ids);
		berth_spec_set *s = specs(text);
		if (!CHECKF(policy_from(&p, rows[i].policy, &err) == 0, "row %zu: %s", i, problems(err))) {
			berth_error_free(err);
			berth_spec_set_free(s);
			continue;
		}
		int ret = berth_run_plan(&run, berth_spec_set_get(s, 0), p, &o, &err);
		CHECKF(ret == (*rows[i].want ? -BERTH_EPOLICY : 0), "row %zu: returned %d", i, ret);
		CHECKF(strcmp(problems(err), rows[i].want) == 0, "row %zu:\n got: %s want: %s", i,
		       problems(err), rows[i].want);
		berth_run_free(run);
		berth_error_free(err);
		berth_policy_free(p);
		berth_spec_set_free(s);
	}
}

T_MAIN(T(test_project_overlay_errors), T(test_project_views), T(test_policy_defaults), T(test_builtin_priority_classes), T(test_template_checked_for_the_run_action), T(test_request_default_in_a_function), T(test_policy_range_errors), T(test_id_ranges), T(test_overrides_of_each_layer), T(test_quota_counts_usage), T(test_quota_counts_every_worker), T(test_derived_request_at_its_limit), T(test_secrets_need_a_store), T(test_no_notes), T(test_run_id_nth), T(test_allocation_failures))
