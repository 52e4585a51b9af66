/*
 * cmd_render.c - berth render SPEC|-: the Kubernetes objects of runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char usage_render[] =
	"usage: berth render SPEC|- [--config POLICY] [--run-id ID] [-o yaml|json] [--secrets LIST]\n"
	"\n"
	"Merges each run of SPEC with the platform policy and prints the Kubernetes\n"
	"objects berth would create: multi-document YAML (default) or a JSON v1 List.\n"
	"'-' reads a stream of documents from standard input, one run each. Nothing is\n"
	"printed unless every run is valid and allowed.\n"
	"\n"
	"  --config POLICY  the platform policy (default: $BERTH_CONFIG, then\n"
	"                   /etc/berth/config.yaml, else built-in defaults)\n"
	"  --run-id ID      the run id, so that the output is byte-stable (default:\n"
	"                   random); with several runs: ID, ID-2, ID-3, ...\n"
	"  -o yaml|json     the output format\n"
	"  --secrets LIST   the project's secret names (a,b,c): unknown ones are refused\n"
	"\n"
	"exit status: 0 rendered, 2 a spec, the policy or a flag is invalid or a run\n"
	"is refused, 1 anything else.\n";

const cli_args args_render = {
	.opts = (const cli_opt[]){
		CLI_OPT_CONFIG,
		{.name = "--run-id", .arg = "ID"},
		{.name = "--output", .alias = "-o", .arg = "FORMAT", .values = CLI_VALUES("yaml", "json")},
		{.name = "--secrets", .arg = "LIST"},
		CLI_OPT_BACKEND,
		{0},
	},
	.arg = CLI_FILE,
};

int cmd_render(int argc, char **argv)
{
	cli_plan_opts o;
	const char *path;
	berth_format fmt = BERTH_FORMAT_YAML;
	berth_policy *policy = NULL;
	berth_spec_set *set = NULL;
	berth_render *out = NULL;
	berth_error *err = NULL;
	int status;

	memset(&o, 0, sizeof(o));
	if (cli_plan_args("render", &o, NULL, argc, argv, &path) < 0)
		return 2;
	if (o.backend && strcmp(o.backend, "kubernetes")) {
		cli_error("render: the objects are Kubernetes'; --backend takes only \"kubernetes\"");
		return 2;
	}
	/* what a cluster needs of each run (its image) is checked as validate
	 * --backend kubernetes checks it */
	o.backend = "kubernetes";
	if (o.output && !strcmp(o.output, "json"))
		fmt = BERTH_FORMAT_JSON;
	else if (o.output && strcmp(o.output, "yaml")) {
		cli_error("render: -o takes yaml or json, not \"%s\"", o.output);
		return 2;
	}
	if ((status = cli_plan_open(&o, path, &policy, &set)))
		goto out;
	if (!(out = berth_render_new(fmt))) {
		cli_error("out of memory");
		status = 1;
		goto out;
	}
	/* every run is planned, and rendered as what Kubernetes needs of it is
	 * checked, before anything is printed: all or nothing */
	o.render = out;
	size_t n = berth_spec_set_count(set);
	int refused = 0;
	for (size_t i = 0; i < n; i++) {
		berth_run *run = NULL;
		if (cli_plan_run(&o, policy, berth_spec_set_get(set, i), i, &run, &err) < 0)
			refused = 1;
		berth_run_free(run);
	}
	if (refused || berth_error_count(err)) {
		status = cli_report(err);
		if (!refused)
			status = 0;
	}
	if (!refused && !status) {
		char *data;
		size_t len;
		if (berth_render_finish(out, &data, &len, &err) < 0) {
			status = cli_report(err);
		} else {
			fwrite(data, 1, len, stdout);
			free(data);
			if (fflush(stdout) != 0) {
				cli_error("render: cannot write the output");
				status = 1;
			}
		}
	}
out:
	berth_render_free(out);
	berth_error_free(err);
	berth_spec_set_free(set);
	berth_policy_free(policy);
	cli_plan_release(&o);
	return status;
}
