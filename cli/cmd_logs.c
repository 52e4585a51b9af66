/*
 * cmd_logs.c - berth logs ID: a run's output, or follows it until the run ends.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char usage_logs[] =
	"usage: berth logs ID [-f] [--rank N] [--tail N] [--since DURATION] [--timestamps]\n"
	"                  [--kubeconfig FILE] [--context NAME]\n"
	"       berth logs ID [-f] [--rank N] [--tail N] [--since DURATION] [--timestamps]\n"
	"                  --server URL [--token TOKEN]\n"
	"\n"
	"Prints the run's standard output and error. -f follows the log until the run ends.\n"
	"A distributed job (replicas workers): every worker's log, each line after\n"
	"\"[rank N] \"; --rank N prints worker N's alone (0 is the first).\n"
	"A run on a Kubernetes cluster: the log of its newest pod (of worker N's pod with\n"
	"--rank N), through the API.\n"
	"\n"
	"  -f, --follow        go on until the run ends\n"
	"  --tail N            from the last N lines (of each worker's log), 0 to 10000000\n"
	"  --since DURATION    only the lines written in the last DURATION: 30s, 5m, 1h,\n"
	"                      1h30m, 2d (or whole seconds), up to 400 days\n"
	"  --timestamps        each line after the time it was written (RFC 3339, UTC)\n"
	"  --rank N            worker N's log only\n"
	"\n"
	"On this machine a line's time is when berth saw it written (within 0.1 s).\n"
	"\n"
	CLI_CLUSTER_HELP
	CLI_SERVER_HELP;

const cli_args args_logs = {
	.opts = (const cli_opt[]){
		{.name = "--follow", .alias = "-f"},
		{.name = "--rank", .arg = "N"},
		{.name = "--tail", .arg = "N"},
		{.name = "--since", .arg = "DURATION"},
		{.name = "--timestamps"},
		CLI_OPT_CONFIG,
		CLI_OPT_CLUSTER,
		CLI_OPT_SERVER,
		{0},
	},
	.arg = CLI_RUN,
};

/* A count of digits alone (strtol takes a sign and leading spaces too), at most max; -1 else. */
static long long digits_arg(const char *v, long long max)
{
	char *end = NULL;
	long long n = v && *v >= '0' && *v <= '9' ? strtoll(v, &end, 10) : -1;
	return n < 0 || *end || n > max ? -1 : n;
}

int cmd_logs(int argc, char **argv)
{
	cli_backend c;
	cli_server srv = {0};
	memset(&c, 0, sizeof(c));
	const char *id = NULL;
	berth_log_opts o = {.rank = -1};
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
		const char *v;
		if (!strcmp(argv[i], "-f") || !strcmp(argv[i], "--follow"))
			o.follow = true;
		else if (!strcmp(argv[i], "--timestamps"))
			o.timestamps = true;
		else if (cli_is_flag(argv[i], "--rank")) {
			long long rank = (v = cli_flag_value("logs", argc, argv, &i, "--rank"))
						 ? digits_arg(v, BERTH_WORKERS_MAX - 1) : -2;
			if (rank == -2)
				return 2;
			if (rank < 0) {
				cli_error("logs: --rank takes a worker's index, 0 to %d", BERTH_WORKERS_MAX - 1);
				return 2;
			}
			o.rank = (int)rank;
		} else if (cli_is_flag(argv[i], "--tail")) {
			if (!(v = cli_flag_value("logs", argc, argv, &i, "--tail")))
				return 2;
			if ((o.tail = digits_arg(v, BERTH_LOG_TAIL_MAX)) < 0) {
				cli_error("logs: --tail takes a number of lines, 0 to %d (\"%s\" given)",
					  BERTH_LOG_TAIL_MAX, v);
				return 2;
			}
		} else if (cli_is_flag(argv[i], "--since")) {
			berth_error *err = NULL;
			if (!(v = cli_flag_value("logs", argc, argv, &i, "--since")))
				return 2;
			if (berth_duration_parse(v, &o.since_ms, &err)) {
				cli_error("logs: --since: %s", berth_error_get(err, 0)->message);
				berth_error_free(err);
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
	if (!status && (remote ? berth_client_logs(cl, id, &o, cli_print_chunk, NULL, &err)
			       : berth_backend_logs(c.b, id, &o, cli_print_chunk, NULL, &err)))
		status = cli_report(err);
	berth_error_free(err);
	berth_client_close(cl);
	cli_backend_close(&c);
	return status;
}
