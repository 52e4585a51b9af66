/*
 * main.c - berth's entry point: global flags, help, dispatch to cmd_<verb>.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "backend/local/mpi.h"
#include "berth/berth.h"
#include "cli.h"

static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const char usage_help[] =
	"usage: berth help [VERB]\n"
	"\n"
	"Shows the list of verbs, or the full help of one verb.\n";

static const char usage_version[] =
	"usage: berth version\n"
	"\n"
	"Prints berth's version (also: berth --version).\n";

static const cli_verb verbs[] = {
	{"run", cmd_run, "run specs (on this machine by default)", usage_run, 1},
	{"get", cmd_get, "show runs and their state", usage_get, 1},
	{"logs", cmd_logs, "print or follow a run's output", usage_logs, 1},
	{"stop", cmd_stop, "stop runs", usage_stop, 1},
	{"delete", cmd_delete, "forget ended runs (--force: stop them first)", usage_delete, 1},
	{"describe", cmd_describe, "everything about a run on one page", usage_describe, 1},
	{"events", cmd_events, "what happened to runs, oldest first", usage_events, 1},
	{"secrets", cmd_secrets, "set, list and remove the project's secrets", usage_secrets, 1},
	{"quota", cmd_quota, "show a project's quota: used, quota, free", usage_quota, 1},
	{"serve", cmd_serve, "serve the REST API (runs, functions, secrets, metrics)", usage_serve, 0},
	{"token", cmd_token, "create, list and revoke the server's access tokens", usage_token, 0},
	{"validate", cmd_validate, "check run specs without running them", usage_validate, 1},
	{"render", cmd_render, "print the Kubernetes objects of runs", usage_render, 0},
	{"explain", cmd_explain, "show the effective spec and where each value comes from",
	 usage_explain, 1},
	{"profiles", cmd_profiles, "list the platform's hardware profiles", usage_profiles, 1},
	{"cluster", cmd_cluster, "check or set up what a Kubernetes cluster needs for the policy",
	 usage_cluster, 0},
	{"help", cmd_help, "show help for berth or one of its verbs", usage_help, 0},
	{"version", cmd_version, "print the version", usage_version, 0},
};

static void print_usage(FILE *out)
{
	fprintf(out,
		"usage: berth [--version] [--help] [--server URL] [--token TOKEN] VERB [ARGS...]\n"
		"\n"
		"berth runs AI workloads with the hardware they declare.\n"
		"\n"
		"verbs:\n");
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		fprintf(out, "  %-10s %s\n", verbs[i].name, verbs[i].summary);
	fprintf(out,
		"\n"
		"'berth help VERB' shows the options of a verb.\n"
		"With --server URL (or $BERTH_SERVER), run, get, logs, stop, delete, describe,\n"
		"events, validate, explain, secrets, quota and profiles talk to a berth server\n"
		"instead of this machine; --token TOKEN (or $BERTH_TOKEN) is its bearer token.\n"
		"exit status: 0 success, 2 invalid input (spec, policy, flags), 1 anything else.\n");
}

static const cli_verb *find_verb(const char *name)
{
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strcmp(verbs[i].name, name) == 0)
			return &verbs[i];
	return NULL;
}

static int cmd_help(int argc, char **argv)
{
	if (argc < 2) {
		print_usage(stdout);
		return 0;
	}
	const cli_verb *v = find_verb(argv[1]);
	if (!v) {
		cli_error("no verb \"%s\" (see 'berth help')", argv[1]);
		return 2;
	}
	fputs(v->usage, stdout);
	return 0;
}

static int cmd_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("berth %s\n", berth_version());
	return 0;
}

void cli_error(const char *fmt, ...)
{
	va_list ap;
	fputs("berth: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_report(const berth_error *err)
{
	char line[1024];
	for (size_t i = 0; i < berth_error_count(err); i++) {
		const berth_problem *p = berth_error_get(err, i);
		size_t n = berth_problem_format(p, line, sizeof(line));
		fputs(line, stderr);
		if (n >= sizeof(line))
			fputs("...", stderr);
		fputc('\n', stderr);
	}
	return berth_code_exit_status(berth_error_code(err));
}

int main(int argc, char **argv)
{
	int k = 1, global = 0;
	/* --server and --token may come before the verb */
	for (int r; k < argc && (r = cli_server_flag(&cli_global_server, argc, argv, &k)); k++) {
		if (r < 0)
			return 2;
		global = 1;
	}
	if (k >= argc) {
		print_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h"))
		return cmd_help(argc - k, argv + k);
	if (!strcmp(argv[k], "--version") || !strcmp(argv[k], "-V"))
		return cmd_version(argc - k, argv + k);
	if (!global && !strcmp(argv[k], "__supervise"))
		return cmd_supervise(argc - k, argv + k);
	if (!global && !strcmp(argv[k], MPI_WORKER_VERB))
		return berth_local_mpi_worker(argc - k, argv + k);
	if (!global && !strcmp(argv[k], MPI_EXEC_VERB))
		return berth_local_mpi_exec(argc - k, argv + k);
	const cli_verb *v = find_verb(argv[k]);
	if (!v) {
		cli_error("unknown verb \"%s\" (see 'berth help')", argv[k]);
		return 2;
	}
	for (int i = k + 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(v->usage, stdout);
			return 0;
		}
	if (global && !v->server && v->fn != cmd_help && v->fn != cmd_version &&
	    ((cli_global_server.url && *cli_global_server.url) || cli_global_server.token)) {
		cli_error("%s: --server and --token are not options of %s, which works on this "
			  "machine", v->name, v->name);
		return 2;
	}
	return v->fn(argc - k, argv + k);
}
