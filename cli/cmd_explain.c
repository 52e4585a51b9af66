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
	"       berth explain SPEC|- --server URL [--token TOKEN] [--project P]\n"
	"                     [-o table|yaml|json]\n"
	"\n"
	"Shows the effective spec of each run of SPEC once merged with the platform\n"
	"policy: every value, where it came from (built-in, policy default, the\n"
	"project's defaults as projects.P.defaults, function, run spec, profile, policy\n"
	"rule) and the file and line it is written at; then\n"
	"why the run is refused, if it is. With --backend, also what that backend\n"
	"needs of the run (an image on Kubernetes; a command on the local backend,\n"
	"that the run can ever fit this machine: \"can never fit here: ...\", and,\n"
	"from the runs of this machine's data dir, whether it would wait for its\n"
	"project's quota), checked as 'berth run' checks it, before anything is\n"
	"created. Without --backend, the spec and the policy alone are checked.\n"
	"\n"
	"With a server (--server or $BERTH_SERVER), the server explains it: its policy\n"
	"and its backend decide, with the project's secrets and quota (--project P: the\n"
	"project of every run; default: each spec's own).\n"
	"\n"
	CLI_SERVER_HELP
	"\n"
	"exit status: 0 every run accepted, 2 a run is refused or an input is invalid,\n"
	"1 anything else.\n";

const cli_args args_explain = {
	.opts = (const cli_opt[]){
		CLI_OPT_CONFIG,
		{.name = "--run-id", .arg = "ID"},
		{.name = "--output", .alias = "-o", .arg = "FORMAT",
		 .values = CLI_VALUES("table", "yaml", "json")},
		{.name = "--secrets", .arg = "LIST"},
		CLI_OPT_BACKEND,
		{.name = "--project", .arg = "P"},
		CLI_OPT_SERVER,
		{0},
	},
	.arg = CLI_FILE,
};

int cmd_explain(int argc, char **argv)
{
	cli_plan_opts o;
	cli_server srv = {0};
	const char *path;
	berth_explain_format fmt;
	berth_policy *policy = NULL;
	berth_spec_set *set = NULL;
	berth_error *err = NULL;
	berth_backend *b = NULL;
	int status;

	memset(&o, 0, sizeof(o));
	if (cli_plan_args("explain", &o, &srv, argc, argv, &path) < 0 ||
	    cli_explain_format("explain", o.output, &fmt) < 0)
		return 2;
	int remote = cli_server_use(&srv, "explain", o.config ? "--config" : o.backend ? "--backend"
						    : o.secrets ? "--secrets" : o.run_id ? "--run-id" : NULL);
	if (remote > 0) {
		size_t len;
		char *text = cli_read_file(path, &len);
		cli_check k = {CLI_CHECK_EXPLAIN, o.project, fmt, false};
		status = text ? cli_server_check(&srv, &k, strcmp(path, "-") ? path : "<stdin>", text, len) : 1;
		free(text);
		return status;
	}
	if (remote < 0 || o.project) {
		if (!remote)
			cli_error("explain: --project is for a server (give --server URL); a spec names its "
				  "project");
		return 2;
	}
	if ((status = cli_plan_open(&o, path, &policy, &set)))
		goto out;
	/* the local backend: what its projects' runs hold of their quotas, read
	 * without scheduling anything */
	berth_backend_opts bo = {.policy = policy, .passive = true, .existing = true};
	if (o.backend && !strcmp(o.backend, "local") && berth_backend_open(&b, "local", &bo, &err)) {
		/* no data dir: nothing runs here, so nothing holds a quota (and none is made) */
		if (berth_error_code(err) != BERTH_ENOTFOUND) {
			status = cli_report(err);
			goto out;
		}
		berth_error_free(err);
		err = NULL;
		b = NULL;
	}
	bool accepted = true;
	for (size_t i = 0; i < berth_spec_set_count(set); i++) {
		berth_run *run = NULL;
		berth_error *problems = NULL, *e2 = NULL;
		char *data = NULL;
		size_t len;
		const berth_spec *spec = berth_spec_set_get(set, i);
		berth_usage usage;
		o.usage = NULL;
		if (b && !berth_backend_usage(b, spec->project.s ? spec->project.s : "default", &usage,
					      &problems))
			o.usage = &usage;
		int ret = problems ? -1 : cli_plan_run(&o, policy, spec, i, &run, &problems);
		accepted = accepted && ret >= 0;
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
	if (!o.backend && accepted && !status)
		fputs("explain: the spec and the policy are checked; --backend local (where 'berth "
		      "run' runs it) or --backend kubernetes also checks what that backend needs\n",
		      stderr);
out:
	berth_backend_close(b);
	berth_error_free(err);
	berth_spec_set_free(set);
	berth_policy_free(policy);
	cli_plan_release(&o);
	return status;
}
