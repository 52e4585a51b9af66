/*
 * cmd_explain.c - berth explain SPEC: the effective spec with each value's
 * origin.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char usage_explain[] =
	"usage: berth explain SPEC|- [--config POLICY] [--run-id ID] [-o table|yaml|json]\n"
	"                     [--secrets LIST] [--backend local|kubernetes]\n"
	"\n"
	"Shows the effective spec of each run of SPEC once merged with the platform\n"
	"policy: every value, where it came from (built-in, policy default, function,\n"
	"run spec, profile, policy rule) and the file and line it is written at; then\n"
	"why the run is refused, if it is. With --backend, also what that backend\n"
	"needs of the run (an image on Kubernetes; a command on the local backend,\n"
	"and that the run can ever fit this machine: \"can never fit here: ...\"),\n"
	"checked as 'berth run' checks it, before anything is created.\n"
	"\n"
	"exit status: 0 every run accepted, 2 a run is refused or an input is invalid,\n"
	"1 anything else.\n";

int cmd_explain(int argc, char **argv)
{
	cli_plan_opts o;
	const char *path;
	berth_explain_format fmt;
	berth_policy *policy = NULL;
	berth_spec_set *set = NULL;
	berth_error *err = NULL;
	int status;

	memset(&o, 0, sizeof(o));
	if (cli_plan_args("explain", &o, argc, argv, &path) < 0 ||
	    cli_explain_format("explain", o.output, &fmt) < 0)
		return 2;
	if ((status = cli_plan_open(&o, path, &policy, &set)))
		goto out;
	for (size_t i = 0; i < berth_spec_set_count(set); i++) {
		berth_run *run = NULL;
		berth_error *problems = NULL, *e2 = NULL;
		char *data = NULL;
		size_t len;
		int ret = cli_plan_run(&o, policy, berth_spec_set_get(set, i), i, &run, &problems);
		if (!run) {
			status = cli_report(problems);
		} else {
			if (i)
				fputs(fmt == BERTH_EXPLAIN_YAML ? "---\n" : "\n", stdout);
			int r2 = berth_explain(run, problems, fmt, &data, &len, &e2);
			int st = cli_print_doc(r2, data, len, e2);
			if (st)
				status = st;
			else if (ret < 0 && status == 0)
				status = berth_code_exit_status((berth_code)-ret);
		}
		berth_run_free(run);
		berth_error_free(problems);
		berth_error_free(e2);
	}
out:
	berth_error_free(err);
	berth_spec_set_free(set);
	berth_policy_free(policy);
	cli_plan_release(&o);
	return status;
}
