/*
 * cmd_stop.c - berth stop ID...: stops runs and waits for their end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char usage_stop[] =
	"usage: berth stop ID... [--grace SECONDS] [--kubeconfig FILE] [--context NAME]\n"
	"       berth stop ID... [--grace SECONDS] --server URL [--token TOKEN]\n"
	"\n"
	"Stops runs: a queued run at once; a running one with SIGTERM to all its\n"
	"processes, then SIGKILL after the grace period (default: the policy's\n"
	"local.grace_period, else 30 s). Returns when every run has ended. A run on a\n"
	"Kubernetes cluster: its workload is deleted with foreground propagation (pods\n"
	"first, then what it owns), and whatever else carries its label.\n"
	"\n"
	CLI_CLUSTER_HELP
	CLI_SERVER_HELP;

const cli_args args_stop = {
	.opts = (const cli_opt[]){
		{.name = "--grace", .arg = "SECONDS"},
		CLI_OPT_CONFIG,
		CLI_OPT_CLUSTER,
		CLI_OPT_SERVER,
		{0},
	},
	.arg = CLI_RUN,
};

int cmd_stop(int argc, char **argv)
{
	cli_backend c;
	cli_server srv = {0};
	memset(&c, 0, sizeof(c));
	int grace = -1, nids = 0;
	const char **ids = calloc((size_t)argc, sizeof(*ids));
	if (!ids) {
		cli_error("out of memory");
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		int r = cli_server_flag(&srv, argc, argv, &i);
		if (!r)
			r = cli_plan_flag(&c.plan, argc, argv, &i);
		if (!r)
			r = cli_cluster_flag(&c, argc, argv, &i);
		if (!r)
			r = cli_grace_flag("stop", argc, argv, &i, &grace);
		if (r < 0)
			goto usage;
		if (r)
			continue;
		if (argv[i][0] == '-' && argv[i][1]) {
			cli_error("stop: unknown option \"%s\" (see 'berth help stop')", argv[i]);
			goto usage;
		} else
			ids[nids++] = argv[i];
	}
	if (!nids) {
		cli_error("stop: no run id given");
		goto usage;
	}
	int remote = cli_server_use(&srv, "stop", c.plan.config ? "--config" : c.cluster_flag);
	if (remote < 0)
		goto usage;
	berth_client *cl = NULL;
	int status = remote ? cli_server_open(&srv, &cl) : cli_backend_open(&c, NULL);
	/* each run says what was done to it, whatever the grace: its end, or that it
	 * had ended already */
	for (int i = 0; !status && i < nids; i++) {
		berth_error *err = NULL;
		berth_run_info *info = NULL;
		int rc = remote ? berth_client_get(cl, ids[i], &info, &err)
				: berth_backend_get(c.b, ids[i], &info, &err);
		bool ended = !rc && berth_state_final(info->state);
		berth_run_info_free(info);
		info = NULL;
		/* an ended run too: on a cluster, what is left of it goes */
		if (!rc)
			rc = remote ? berth_client_stop(cl, ids[i], grace, true, &err)
				    : berth_backend_stop(c.b, ids[i], grace, &err);
		if (!rc)
			rc = remote ? berth_client_get(cl, ids[i], &info, &err)
				    : berth_backend_get(c.b, ids[i], &info, &err);
		if (rc)
			status = cli_report(err);
		else if (ended)
			fprintf(stderr, "run %s (%s): had ended already (%s): nothing to stop\n", info->id,
				info->name, berth_state_name(info->state));
		else
			cli_say_state(info);
		berth_run_info_free(info);
		berth_error_free(err);
	}
	berth_client_close(cl);
	cli_backend_close(&c);
	free(ids);
	return status;
usage:
	cli_plan_release(&c.plan);
	free(ids);
	return 2;
}
