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
#include "internal.h"
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
	"quotas: {default: {cpu: '4', gpu: '2', runs: 2}}\n";

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

	berth_usage u = {.cpu = berth_quantity_from_int(3, BERTH_QUANTITY_DECIMAL_SI), .runs = 2};
	o.usage = &u;
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
				    "        \"at\": \"spec.yaml:3:19\"\n"),
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

T_MAIN(T(test_overrides_of_each_layer), T(test_quota_counts_usage), T(test_secrets_need_a_store), T(test_allocation_failures))
