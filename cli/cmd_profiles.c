/*
 * cmd_profiles.c - berth profiles: what each hardware profile of the policy
 * (this machine's, or a server's) gives.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char usage_profiles[] =
	"usage: berth profiles [--project P] [--config POLICY] [-o table|yaml|json]\n"
	"       berth profiles [--project P] --server URL [--token TOKEN] [-o table|yaml|json]\n"
	"\n"
	"Lists the platform's hardware profiles and every field each one sets. A\n"
	"profile wins over the fields a user sets, and only those it sets. With\n"
	"--project: what the runs of project P see, the policy's projects.P overlay\n"
	"(its own profiles, defaults and limits) over the rest; another project's\n"
	"profiles are not among them. With a server: the profiles of the server's\n"
	"policy, for P or else the token's project (-o json prints its reply as is).\n"
	"\n"
	CLI_SERVER_HELP;

const cli_args args_profiles = {
	.opts = (const cli_opt[]){
		{.name = "--project", .arg = "P"},
		CLI_OPT_CONFIG,
		{.name = "--output", .alias = "-o", .arg = "FORMAT",
		 .values = CLI_VALUES("table", "yaml", "json")},
		CLI_OPT_SERVER,
		{0},
	},
};

/* berth profiles with a server: its JSON as is, else printed as a local policy's. */
static int profiles_remote(const cli_server *s, const char *project, berth_explain_format fmt)
{
	berth_client *c = NULL;
	berth_error *err = NULL;
	char *json = NULL, *data = NULL;
	size_t len, dlen;
	int status = cli_server_open(s, &c);
	if (status)
		return status;
	if (berth_client_profiles(c, project, &json, &len, &err) < 0) {
		status = cli_report(err);
	} else if (fmt == BERTH_EXPLAIN_JSON) {
		fwrite(json, 1, len, stdout);
		if (len && json[len - 1] != '\n')
			fputc('\n', stdout);
	} else {
		int ret = berth_client_profiles_format(json, len, fmt, &data, &dlen, &err);
		status = cli_print_doc(ret, data, dlen, err);
	}
	free(json);
	berth_error_free(err);
	berth_client_close(c);
	return status;
}

int cmd_profiles(int argc, char **argv)
{
	cli_plan_opts o;
	cli_server srv = {0};
	berth_explain_format fmt;
	berth_policy *policy = NULL;
	berth_error *err = NULL;
	char *data = NULL;
	size_t len;
	const char *project = NULL;
	int status;

	memset(&o, 0, sizeof(o));
	for (int i = 1; i < argc; i++) {
		int r = cli_server_flag(&srv, argc, argv, &i);
		if (r > 0)
			continue;
		if (!r && cli_is_flag(argv[i], "--project")) {
			if (!(project = cli_flag_value("profiles", argc, argv, &i, "--project")))
				return 2;
			continue;
		}
		if (!r)
			r = cli_plan_flag(&o, argc, argv, &i);
		if (r < 0)
			return 2;
		if (!r || o.run_id || o.secrets) {
			cli_error("profiles: unexpected argument \"%s\" (see 'berth help profiles')", argv[i]);
			return 2;
		}
	}
	if (cli_explain_format("profiles", o.output, &fmt) < 0)
		return 2;
	int remote = cli_server_use(&srv, "profiles", o.config ? "--config" : NULL);
	if (remote)
		return remote < 0 ? 2 : profiles_remote(&srv, project, fmt);
	if ((status = cli_plan_load(&o, &policy)))
		goto out;
	status = berth_explain_profiles(berth_policy_for_project(policy, project), fmt, &data, &len, &err);
	status = cli_print_doc(status, data, len, err);
out:
	berth_error_free(err);
	berth_policy_free(policy);
	cli_plan_release(&o);
	return status;
}
