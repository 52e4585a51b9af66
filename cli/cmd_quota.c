/*
 * cmd_quota.c - berth quota [--project P]: a project's quota, what its
 * admitted runs use of it and what is free, on this machine or a server.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char usage_quota[] =
	"usage: berth quota [--project P] [--config POLICY] [--server URL] [--token TOKEN]\n"
	"\n"
	"Shows the quota of project P (default: default) from the policy's quotas:\n"
	"for each resource, what its admitted runs use (Running ones; on a cluster,\n"
	"Pending ones too), the quota and what is free, and how many of its runs wait\n"
	"for quota. A run over what is free waits (Pending, \"waiting for quota: ...\")\n"
	"and starts, in priority order, when the quota frees; one that needs more than\n"
	"the whole quota is refused.\n"
	"\n"
	CLI_SERVER_HELP;

const cli_args args_quota = {
	.opts = (const cli_opt[]){
		{.name = "--project", .arg = "P"},
		CLI_OPT_CONFIG,
		CLI_OPT_SERVER,
		{0},
	},
};

int cmd_quota(int argc, char **argv)
{
	cli_backend c;
	cli_server srv = {0};
	memset(&c, 0, sizeof(c));
	const char *project = "default";
	for (int i = 1; i < argc; i++) {
		int r = cli_server_flag(&srv, argc, argv, &i);
		if (r > 0)
			continue;
		if (!r)
			r = cli_plan_flag(&c.plan, argc, argv, &i);
		if (r < 0)
			return 2;
		if (r)
			continue;
		if (cli_is_flag(argv[i], "--project")) {
			if (!(project = cli_flag_value("quota", argc, argv, &i, "--project")))
				return 2;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cli_error("quota: unknown option \"%s\" (see 'berth help quota')", argv[i]);
			return 2;
		} else {
			cli_error("quota: too many arguments (see 'berth help quota')");
			return 2;
		}
	}
	int remote = cli_server_use(&srv, "quota", c.plan.config ? "--config" : NULL);
	if (remote < 0)
		return 2;
	berth_client *cl = NULL;
	berth_error *err = NULL;
	berth_quota_state q;
	int status = remote ? cli_server_open(&srv, &cl) : cli_backend_open(&c, NULL);
	if (status)
		goto out;
	if (remote ? berth_client_quota(cl, project, &q, &err) : berth_backend_quota(c.b, project, &q, &err)) {
		status = cli_report(err);
		goto out;
	}
	if (!q.quota_of[0]) {
		printf("project \"%s\" has no quota\n", project);
		goto out;
	}
	if (strcmp(q.quota_of, project))
		printf("project \"%s\": quotas.%s\n", project, q.quota_of);
	printf("%-10s %-10s %-10s %s\n", "RESOURCE", "USED", "QUOTA", "FREE");
	for (int i = 0; i < 4; i++)
		if (q.res[i].limited)
			printf("%-10s %-10s %-10s %s\n", q.res[i].resource, q.res[i].used, q.res[i].quota,
			       q.res[i].free);
	if (q.waiting)
		printf("%lld run%s waiting for quota\n", (long long)q.waiting, q.waiting == 1 ? "" : "s");
out:
	berth_error_free(err);
	berth_client_close(cl);
	cli_backend_close(&c);
	return status;
}
