/*
 * cmd_logs.c - berth logs ID: a run's output, or follows it until the run ends.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char usage_logs[] =
	"usage: berth logs ID [-f] [--rank N] [--kubeconfig FILE] [--context NAME]\n"
	"       berth logs ID [-f] [--rank N] --server URL [--token TOKEN]\n"
	"\n"
	"Prints the run's standard output and error. -f follows the log until the run ends.\n"
	"A distributed job (replicas workers): every worker's log, each line after\n"
	"\"[rank N] \"; --rank N prints worker N's alone (0 is the first).\n"
	"A run on a Kubernetes cluster: the log of its newest pod (of worker N's pod with\n"
	"--rank N), through the API.\n"
	"\n"
	CLI_CLUSTER_HELP
	CLI_SERVER_HELP;

const cli_args args_logs = {
	.opts = (const cli_opt[]){
		{.name = "--follow", .alias = "-f"},
		{.name = "--rank", .arg = "N"},
		CLI_OPT_CONFIG,
		CLI_OPT_CLUSTER,
		CLI_OPT_SERVER,
		{0},
	},
	.arg = CLI_RUN,
};

int cmd_logs(int argc, char **argv)
{
	cli_backend c;
	cli_server srv = {NULL, NULL};
	memset(&c, 0, sizeof(c));
	const char *id = NULL;
	int follow = 0;
	long rank = -1;
	for (int i = 1; i < argc; i++) {
		int r = cli_server_flag(&srv, argc, argv, &i);
		if (!r)
			r = cli_plan_flag(&c.plan, argc, argv, &i);
		if (!r)
			r = cli_cluster_flag(&c, argc, argv, &i);
		if (r < 0)
			return 2;
		if (r)
			continue;
		if (!strcmp(argv[i], "-f") || !strcmp(argv[i], "--follow"))
			follow = 1;
		else if (!strcmp(argv[i], "--rank") || !strncmp(argv[i], "--rank=", 7)) {
			const char *v = argv[i][6] == '=' ? argv[i] + 7 : i + 1 < argc ? argv[++i] : NULL;
			char *end = NULL;
			/* digits alone: strtol takes a sign and leading spaces too */
			rank = v && *v >= '0' && *v <= '9' ? strtol(v, &end, 10) : -1;
			if (!v || !*v || rank < 0 || *end || rank >= BERTH_WORKERS_MAX) {
				cli_error("logs: --rank takes a worker's index, 0 to %d", BERTH_WORKERS_MAX - 1);
				return 2;
			}
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cli_error("logs: unknown option \"%s\" (see 'berth help logs')", argv[i]);
			return 2;
		} else if (!id)
			id = argv[i];
		else {
			cli_error("logs: one run at a time");
			return 2;
		}
	}
	if (!id) {
		cli_error("logs: no run id given");
		return 2;
	}
	int remote = cli_server_use(&srv, "logs", c.plan.config ? "--config" : c.cluster_flag);
	if (remote < 0) {
		cli_plan_release(&c.plan);
		return 2;
	}
	berth_client *cl = NULL;
	berth_error *err = NULL;
	int status = remote ? cli_server_open(&srv, &cl) : cli_backend_open(&c, NULL);
	if (!status && (remote ? berth_client_logs(cl, id, (int)rank, follow, cli_print_chunk, NULL, &err)
			       : berth_backend_logs(c.b, id, (int)rank, follow, cli_print_chunk, NULL, &err)))
		status = cli_report(err);
	berth_error_free(err);
	berth_client_close(cl);
	cli_backend_close(&c);
	return status;
}
