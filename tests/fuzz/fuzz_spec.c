/*
 * fuzz_spec.c - libFuzzer target for the run spec reader (YAML/JSON
 * parsing, decoding, validation, the error formatter), the whole path of a
 * valid spec (merge with a policy that uses every rule, render as YAML and
 * JSON, explain), and the policy reader on the same input. Any crash, leak,
 * sanitizer report or hang is a bug.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "berth/berth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char policy_text[] =
	"namespace: ml\n"
	"defaults: {resources: {cpu: 100m, mem: 256Mi}, mem_limit_ratio: 1.1, priority_class: low,\n"
	"  volumes: [{volume_type: empty_dir, name: scratch, mount_path: /scratch}]}\n"
	"limits: {cpu: '32', mem: 256Gi, gpu: '8', disk: 500Gi, volume_size: 1Ti}\n"
	"security: {disable_root: true, block_existing_volumes: true, user_fields: [affinity]}\n"
	"gpu: {default_type: nvidia.com/gpu, types: [nvidia.com/gpu, amd.com/gpu]}\n"
	"storage: {default_class: standard, pvc_lifecycle: run}\n"
	"preemptible_nodes: {node_selector: {spot: 'true'}, tolerations: [{key: spot, operator: Exists, effect: NoSchedule}]}\n"
	"priority_classes: {high: berth-high, low: berth-low}\n"
	"profiles: [{id: 1xa100, resources: {cpu: '8', gpu: 1}, node_selector: {gpu: a100}, envs: [{name: A, value: b}]}]\n"
	"quotas: {default: {cpu: '64', gpu: '4', runs: 5}}\n"
	"projects: {vision: {defaults: {envs: [{name: T, value: v}], volumes: [{volume_type: empty_dir, "
	"name: data, mount_path: /data}]}, limits: {mem: 64Gi}, priority_classes: {urgent: berth-urgent}, "
	"profiles: [{id: v1, resources: {gpu: 1}}], quotas: {gpu: '2'}}}\n";

static void whole_path(const berth_spec *s, const berth_policy *policy)
{
	berth_run *run = NULL;
	berth_error *err = NULL;
	berth_run_opts o = {.run_id = "fuzz"};
	char *out = NULL;
	size_t len;
	int ret = berth_run_plan(&run, s, policy, &o, &err);
	if (run && berth_explain(run, err, BERTH_EXPLAIN_YAML, &out, &len, NULL) == 0)
		free(out);
	for (int f = 0; run && ret == 0 && f < 2; f++) {
		berth_render *r = berth_render_new(f ? BERTH_FORMAT_JSON : BERTH_FORMAT_YAML);
		if (r && berth_render_add(r, run, NULL) == 0 && berth_render_finish(r, &out, &len, NULL) == 0)
			free(out);
		berth_render_free(r);
	}
	berth_run_free(run);
	berth_error_free(err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	berth_spec_set *set = NULL;
	berth_error *err = NULL;
	char line[512];
	int ret = berth_spec_parse(&set, "fuzz.yaml", (const char *)data, size, &err);

	if ((ret < 0) != (set == NULL))
		abort(); /* a set is returned exactly on success */
	if (ret < 0 && berth_error_errors(err) == 0)
		abort(); /* a failure always says why */
	for (size_t i = 0; i < berth_error_count(err); i++)
		berth_problem_format(berth_error_get(err, i), line, sizeof(line));
	for (size_t i = 0; i < berth_spec_set_count(set); i++) {
		const berth_spec *s = berth_spec_set_get(set, i);
		char q[BERTH_QUANTITY_STR_MAX];
		if (s->resources.mem.requests.set)
			berth_quantity_format(&s->resources.mem.requests.q, q, sizeof(q));
	}
	static berth_policy *policy;
	if (!policy && berth_policy_parse(&policy, "policy.yaml", policy_text, sizeof(policy_text) - 1, NULL) < 0)
		abort();
	for (size_t i = 0; i < berth_spec_set_count(set); i++) {
		whole_path(berth_spec_set_get(set, i), NULL);
		whole_path(berth_spec_set_get(set, i), policy);
	}
	berth_error_free(err);
	berth_spec_set_free(set);

	berth_policy *p = NULL;
	err = NULL;
	ret = berth_policy_parse(&p, "fuzz.yaml", (const char *)data, size, &err);
	if ((ret < 0) != (p == NULL))
		abort();
	if (p) {
		char *out;
		size_t len;
		if (berth_explain_profiles(p, BERTH_EXPLAIN_JSON, &out, &len, NULL) == 0)
			free(out);
	}
	berth_policy_free(p);
	berth_error_free(err);
	return 0;
}
