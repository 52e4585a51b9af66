/*
 * cmd_explain.c - berth explain SPEC: the effective spec with each value's
 * origin; berth profiles: what each profile gives.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char usage_explain[] =
	"usage: berth explain SPEC|- [--config POLICY] [--run-id ID] [-o table|yaml|json]\n"
	"                     [--secrets LIST]\n"
	"\n"
	"Shows the effective spec of each run of SPEC once merged with the platform\n"
	"policy: every value, where it came from (built-in, policy default, function,\n"
	"run spec, profile, policy rule) and the file and line it is written at; then\n"
	"why the run is refused, if it is.\n"
	"\n"
	"exit status: 0 every run accepted, 2 a run is refused or an input is invalid,\n"
	"1 anything else.\n";

const char usage_profiles[] =
	"usage: berth profiles [--config POLICY] [-o table|yaml|json]\n"
	"       berth profiles --server URL [--token TOKEN] [-o table|yaml|json]\n"
	"\n"
	"Lists the platform's hardware profiles and every field each one sets. A\n"
	"profile wins over the fields a user sets, and only those it sets. With a\n"
	"server: the profiles of the server's policy (-o json prints its reply as is).\n"
	"\n"
	CLI_SERVER_HELP;

static int explain_format(const char *verb, const char *o, berth_explain_format *fmt)
{
	if (!o || !strcmp(o, "table"))
		*fmt = BERTH_EXPLAIN_TABLE;
	else if (!strcmp(o, "yaml"))
		*fmt = BERTH_EXPLAIN_YAML;
	else if (!strcmp(o, "json"))
		*fmt = BERTH_EXPLAIN_JSON;
	else {
		cli_error("%s: -o takes table, yaml or json, not \"%s\"", verb, o);
		return -1;
	}
	return 0;
}

static int print_doc(int ret, char *data, size_t len, berth_error *err)
{
	if (ret < 0)
		return cli_report(err);
	fwrite(data, 1, len, stdout);
	free(data);
	return 0;
}

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
	    explain_format("explain", o.output, &fmt) < 0)
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
			int st = print_doc(r2, data, len, e2);
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

/* berth profiles with a server: its JSON as is, else printed as a local policy's. */
static int profiles_remote(const cli_server *s, berth_explain_format fmt)
{
	berth_client *c = NULL;
	berth_error *err = NULL;
	char *json = NULL, *data = NULL;
	size_t len, dlen;
	int status = cli_server_open(s, &c);
	if (status)
		return status;
	if (berth_client_profiles(c, &json, &len, &err) < 0) {
		status = cli_report(err);
	} else if (fmt == BERTH_EXPLAIN_JSON) {
		fwrite(json, 1, len, stdout);
		if (len && json[len - 1] != '\n')
			fputc('\n', stdout);
	} else {
		int ret = berth_client_profiles_format(json, len, fmt, &data, &dlen, &err);
		status = print_doc(ret, data, dlen, err);
	}
	free(json);
	berth_error_free(err);
	berth_client_close(c);
	return status;
}

int cmd_profiles(int argc, char **argv)
{
	cli_plan_opts o;
	cli_server srv = {NULL, NULL};
	berth_explain_format fmt;
	berth_policy *policy = NULL;
	berth_error *err = NULL;
	char *data = NULL;
	size_t len;
	int status;

	memset(&o, 0, sizeof(o));
	for (int i = 1; i < argc; i++) {
		int r = cli_server_flag(&srv, argc, argv, &i);
		if (r > 0)
			continue;
		if (!r)
			r = cli_plan_flag(&o, argc, argv, &i);
		if (r < 0)
			return 2;
		if (!r || o.run_id || o.secrets) {
			cli_error("profiles: unexpected argument \"%s\" (see 'berth help profiles')", argv[i]);
			return 2;
		}
	}
	if (explain_format("profiles", o.output, &fmt) < 0)
		return 2;
	int remote = cli_server_use(&srv, "profiles", o.config ? "--config" : NULL);
	if (remote)
		return remote < 0 ? 2 : profiles_remote(&srv, fmt);
	if ((status = cli_plan_load(&o, &policy)))
		goto out;
	status = berth_explain_profiles(policy, fmt, &data, &len, &err);
	status = print_doc(status, data, len, err);
out:
	berth_error_free(err);
	berth_policy_free(policy);
	cli_plan_release(&o);
	return status;
}
