/*
 * cmd_validate.c - berth validate FILE...: parse and check run specs; with
 * --config or --backend, plan them and check what the backend needs, as
 * explain, render, run --dry-run and the server's validate do.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/berth.h"
#include "cli.h"

const char usage_validate[] =
	"usage: berth validate [-q] [--config POLICY] [--backend local|kubernetes]\n"
	"                      [--secrets LIST] FILE...\n"
	"       berth validate [-q] --server URL [--token TOKEN] [--project P] FILE...\n"
	"\n"
	"Checks run specs (YAML or JSON, one run per document) without running\n"
	"them, and reports every problem at once as FILE:LINE:COL: PATH: message.\n"
	"'-' reads standard input.\n"
	"\n"
	"With --config or --backend, each run is also merged with the platform policy\n"
	"and checked as 'berth explain' and 'berth run --dry-run' check it: with\n"
	"--backend, what that backend needs (an image on Kubernetes; on the local\n"
	"backend a command, and that the run can ever fit this machine).\n"
	"\n"
	"With a server (--server or $BERTH_SERVER), the server checks each file as it\n"
	"would run it: its policy and its backend decide, with the project's secrets\n"
	"and quota (--project P: the project of every run; default: each spec's own).\n"
	"\n"
	"  -q, --quiet      print nothing for valid files\n"
	"  --config POLICY  the platform policy (default: $BERTH_CONFIG, then\n"
	"                   /etc/berth/config.yaml, else built-in defaults)\n"
	"  --backend KIND   the backend that will run it: local or kubernetes\n"
	"  --secrets LIST   the project's secret names (a,b,c): unknown ones are refused\n"
	CLI_SERVER_HELP
	"\n"
	"exit status: 0 all valid, 2 a spec is invalid or refused, 1 a file cannot be read.\n";

const cli_args args_validate = {
	.opts = (const cli_opt[]){
		{.name = "--quiet", .alias = "-q"},
		CLI_OPT_CONFIG,
		CLI_OPT_BACKEND,
		{.name = "--secrets", .arg = "LIST"},
		{.name = "--project", .arg = "P"},
		CLI_OPT_SERVER,
		{0},
	},
	.arg = CLI_FILE,
};

/* Plans every run of set; its problems reported; the exit status. */
static int plan_all(cli_plan_opts *o, const berth_policy *policy, const berth_spec_set *set)
{
	int status = 0;
	for (size_t i = 0; i < berth_spec_set_count(set); i++) {
		berth_run *run = NULL;
		berth_error *err = NULL;
		int ret = cli_plan_run(o, policy, berth_spec_set_get(set, i), i, &run, &err);
		int st = cli_report(err);
		if (ret < 0 && !status)
			status = st ? st : 2;
		berth_error_free(err);
		berth_run_free(run);
	}
	return status;
}

int cmd_validate(int argc, char **argv)
{
	int quiet = 0, status = 0, nfiles = 0, stdin_used = 0;
	cli_plan_opts o;
	cli_server srv = {0};
	memset(&o, 0, sizeof(o));

	for (int i = 1; i < argc; i++) {
		int r = 0, start = i;
		if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet"))
			quiet = 1;
		else if (!strcmp(argv[i], "--")) {
			argv[i] = NULL;
			for (int j = i + 1; j < argc; j++)
				nfiles++;
			break;
		} else if ((r = cli_flag(argc, argv, &i, "--config", &o.config)) ||
			   (r = cli_flag(argc, argv, &i, "--backend", &o.backend)) ||
			   (r = cli_flag(argc, argv, &i, "--secrets", &o.secrets)) ||
			   (r = cli_flag(argc, argv, &i, "--project", &o.project)) ||
			   (r = cli_server_flag(&srv, argc, argv, &i))) {
			if (r < 0)
				return 2;
			/* the flag and its value are not files */
			for (int k = start; k <= i; k++)
				argv[k] = (char *)"\x01";
		} else if (argv[i][0] == '-' && argv[i][1] != '\0') {
			cli_error("validate: unknown option \"%s\" (see 'berth help validate')", argv[i]);
			return 2;
		} else {
			nfiles++;
		}
	}
	if (nfiles == 0) {
		cli_error("validate: no file given (use '-' for standard input)");
		return 2;
	}
	int remote = cli_server_use(&srv, "validate", o.config ? "--config" : o.backend ? "--backend"
						     : o.secrets ? "--secrets" : NULL);
	if (remote < 0)
		return 2;
	if (!remote && o.project) {
		cli_error("validate: --project is for a server (give --server URL); a spec names its "
			  "project");
		return 2;
	}
	berth_policy *policy = NULL;
	bool plan = !remote && (o.config || o.backend || o.secrets);
	if (plan && (status = cli_plan_load(&o, &policy))) {
		cli_plan_release(&o);
		return status;
	}
	for (int i = 1, after_dashes = 0; i < argc; i++) {
		if (!argv[i]) {
			after_dashes = 1;
			continue;
		}
		if (!after_dashes && ((argv[i][0] == '-' && argv[i][1] != '\0') ||
				      !strcmp(argv[i], "\x01")))
			continue;
		if (!strcmp(argv[i], "-") && stdin_used++) {
			cli_error("validate: standard input given twice");
			status = 2;
			break;
		}
		if (remote) {
			/* the file as written: the server reads and plans it */
			const char *name = strcmp(argv[i], "-") ? argv[i] : "<stdin>";
			size_t len;
			char *text = cli_read_file(argv[i], &len);
			cli_check k = {CLI_CHECK_VALIDATE, o.project, BERTH_EXPLAIN_TABLE, quiet};
			int st = text ? cli_server_check(&srv, &k, name, text, len) : 1;
			free(text);
			if (st && (st > status || status == 0))
				status = st == 1 && status == 2 ? 2 : st;
			continue;
		}
		berth_spec_set *set = NULL;
		berth_error *err = NULL;
		int ret = berth_spec_parse_file(&set, argv[i], &err);
		int st = cli_report(err);
		if (ret >= 0 && plan && (st = plan_all(&o, policy, set)))
			ret = -1;
		if (ret < 0) {
			if (st == 0)
				st = 1;
			if (st > status || status == 0)
				status = st == 1 && status == 2 ? 2 : st;
		} else if (!quiet) {
			size_t n = berth_spec_set_count(set);
			printf("%s: valid (%zu run%s)\n", strcmp(argv[i], "-") ? argv[i] : "<stdin>", n,
			       n == 1 ? "" : "s");
		}
		berth_error_free(err);
		berth_spec_set_free(set);
	}
	berth_policy_free(policy);
	cli_plan_release(&o);
	return status;
}
