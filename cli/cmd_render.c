/*
 * cmd_render.c - berth render SPEC|-: the Kubernetes objects of runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* The runs of the stream as they are read (berth_spec_read_file): each is
 * planned, and rendered into out as what Kubernetes needs of it is checked. */
struct render_runs {
	cli_plan_opts *o;
	const berth_policy *policy;
	berth_format fmt;
	berth_render *out;
	berth_error *err; /* the runs' problems */
	int refused;
};

static void runs_start(void *arg)
{
	struct render_runs *r = arg;
	berth_error_free(r->err);
	r->err = NULL;
	r->refused = 0;
	berth_render_free(r->out);
	r->o->render = r->out = berth_render_new(r->fmt);
}

static void runs_run(void *arg, const berth_spec *spec, size_t i)
{
	struct render_runs *r = arg;
	berth_run *run = NULL;
	if (!r->out)
		return;
	if (cli_plan_run(r->o, r->policy, spec, i, &run, &r->err) < 0)
		r->refused = 1;
	berth_run_free(run);
}

int cmd_render(int argc, char **argv)
{
	cli_plan_opts o;
	const char *path;
	berth_format fmt = BERTH_FORMAT_YAML;
	berth_policy *policy = NULL;
	berth_error *specs_err = NULL;
	struct render_runs r;
	int status;

	memset(&o, 0, sizeof(o));
	memset(&r, 0, sizeof(r));
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
	if ((status = cli_plan_load(&o, &policy)))
		goto out;
	/* every run is planned, and rendered as what Kubernetes needs of it is
	 * checked, as the stream is read; nothing is printed unless every spec
	 * is valid and every run allowed: all or nothing */
	r.o = &o;
	r.policy = policy;
	r.fmt = fmt;
	berth_spec_sink sink = {&r, runs_start, runs_run};
	int ret = berth_spec_read_file(path, &sink, &specs_err);
	/* warnings of a valid spec are shown too */
	int st = cli_report(specs_err);
	if (ret < 0) {
		status = st ? st : 1;
		goto out;
	}
	if (!r.out) {
		cli_error("out of memory");
		status = 1;
		goto out;
	}
	if (r.refused || berth_error_count(r.err)) {
		status = cli_report(r.err);
		if (!r.refused)
			status = 0;
	}
	if (!r.refused && !status) {
		berth_error_free(r.err);
		r.err = NULL;
		/* straight to the descriptor: nothing else was printed on stdout */
		int rc = fflush(stdout) == 0 ? berth_render_write(r.out, STDOUT_FILENO, &r.err) : -BERTH_EIO;
		if (rc == -BERTH_EIO) {
			cli_error("render: cannot write the output");
			status = 1;
		} else if (rc < 0) {
			status = cli_report(r.err);
		}
	}
out:
	berth_render_free(r.out);
	berth_error_free(r.err);
	berth_error_free(specs_err);
	berth_policy_free(policy);
	cli_plan_release(&o);
	return status;
}
