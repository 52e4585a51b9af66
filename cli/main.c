/*
 * main.c - berth's entry point: the verbs' table, global flags, help, the
 * check of each verb's command line against its grammar (opts.c), dispatch
 * to cmd_<verb>, and how errors and problems are printed (in colour on a
 * terminal).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/local/mpi.h"
#include "berth/berth.h"
#include "cli.h"

static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const char usage_help[] =
	"usage: berth help [VERB]\n"
	"       berth help --man\n"
	"\n"
	"Shows the list of verbs, or the full help of one verb. --man prints the\n"
	"manual page of berth, made of the same help (man -l <(berth help --man)).\n";

static const char usage_version[] =
	"usage: berth version\n"
	"\n"
	"Prints berth's version (also: berth --version).\n";

static const cli_args args_help = {
	.opts = (const cli_opt[]){{.name = "--man"}, {0}},
	.arg = CLI_VERB,
};
static const cli_args args_version = {.opts = (const cli_opt[]){{0}}};

const cli_verb cli_verbs[] = {
	{"run", cmd_run, "run specs (on this machine by default)", usage_run, 1, &args_run},
	{"get", cmd_get, "show runs and their state", usage_get, 1, &args_get},
	{"logs", cmd_logs, "print or follow a run's output", usage_logs, 1, &args_logs},
	{"stop", cmd_stop, "stop runs", usage_stop, 1, &args_stop},
	{"delete", cmd_delete, "forget ended runs (--force: stop them first)", usage_delete, 1,
	 &args_delete},
	{"describe", cmd_describe, "everything about a run on one page", usage_describe, 1,
	 &args_describe},
	{"events", cmd_events, "what happened to runs, oldest first", usage_events, 1, &args_events},
	{"secrets", cmd_secrets, "set, list and remove the project's secrets", usage_secrets, 1,
	 &args_secrets},
	{"quota", cmd_quota, "show a project's quota: used, quota, free", usage_quota, 1, &args_quota},
	{"serve", cmd_serve, "serve the REST API (runs, functions, secrets, metrics)", usage_serve, 0,
	 &args_serve},
	{"token", cmd_token, "create, list and revoke the server's access tokens", usage_token, 1,
	 &args_token},
	{"admin", cmd_admin, "back up the data dir's state to a file, or restore it", usage_admin, 0,
	 &args_admin},
	{"validate", cmd_validate, "check run specs without running them", usage_validate, 1,
	 &args_validate},
	{"render", cmd_render, "print the Kubernetes objects of runs", usage_render, 0, &args_render},
	{"explain", cmd_explain, "show the effective spec and where each value comes from",
	 usage_explain, 1, &args_explain},
	{"profiles", cmd_profiles, "list the platform's hardware profiles", usage_profiles, 1,
	 &args_profiles},
	{"cluster", cmd_cluster, "check or set up what a Kubernetes cluster needs for the policy",
	 usage_cluster, 0, &args_cluster},
	{"completion", cmd_completion, "print a shell's completion script (bash, zsh, fish)",
	 usage_completion, 0, &args_completion},
	{"help", cmd_help, "show help for berth or one of its verbs", usage_help, 0, &args_help},
	{"version", cmd_version, "print the version", usage_version, 0, &args_version},
};
const size_t cli_nverbs = sizeof(cli_verbs) / sizeof(cli_verbs[0]);

static void print_usage(FILE *out)
{
	fprintf(out,
		"usage: berth [--version] [--help] [--server URL] [--token TOKEN] VERB [ARGS...]\n"
		"\n"
		"berth runs AI workloads with the hardware they declare.\n"
		"\n"
		"verbs:\n");
	for (size_t i = 0; i < cli_nverbs; i++)
		fprintf(out, "  %-10s %s\n", cli_verbs[i].name, cli_verbs[i].summary);
	fprintf(out,
		"\n"
		"'berth help VERB' shows the options of a verb.\n"
		"With --server URL (or $BERTH_SERVER), run, get, logs, stop, delete, describe,\n"
		"events, validate, explain, secrets, quota and profiles talk to a berth server\n"
		"instead of this machine; --token TOKEN (or $BERTH_TOKEN) is its bearer token,\n"
		"--cacert FILE (or $BERTH_CACERT) the CAs of an https:// server's certificate.\n"
		"exit status: 0 success, 2 invalid input (spec, policy, flags), 1 anything else.\n");
}

const cli_verb *cli_verb_find(const char *name)
{
	for (size_t i = 0; i < cli_nverbs; i++)
		if (strcmp(cli_verbs[i].name, name) == 0)
			return &cli_verbs[i];
	return NULL;
}

/* "WHAT "name"; did you mean "verb"?", or "WHAT "name" (see 'berth help')". */
static int no_verb(const char *what, const char *name)
{
	const char *names[32];
	size_t n = 0;
	for (; n < cli_nverbs && n < 32; n++)
		names[n] = cli_verbs[n].name;
	const char *hint = berth_suggest(name, names, n);
	if (hint)
		cli_error("%s \"%s\"; did you mean \"%s\"?", what, name, hint);
	else
		cli_error("%s \"%s\" (see 'berth help')", what, name);
	return 2;
}

static int cmd_help(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "--man")) {
		cli_man(stdout);
		return 0;
	}
	if (argc < 2) {
		print_usage(stdout);
		return 0;
	}
	const cli_verb *v = cli_verb_find(argv[1]);
	if (!v)
		return no_verb("no verb", argv[1]);
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

/* ---- colours ---------------------------------------------------------------------- */

#define RED "\033[31m"
#define BOLD_RED "\033[1;31m"
#define YELLOW "\033[33m"

bool cli_color(FILE *f)
{
	const char *no = getenv("NO_COLOR"), *term = getenv("TERM");
	return isatty(fileno(f)) && !(no && *no) && !(term && !strcmp(term, "dumb"));
}

const char *cli_state_color(berth_state s)
{
	switch (s) {
	case BERTH_STATE_PENDING:
		return YELLOW;
	case BERTH_STATE_RUNNING:
		return "\033[36m"; /* cyan */
	case BERTH_STATE_SUCCEEDED:
		return "\033[32m"; /* green */
	case BERTH_STATE_FAILED:
		return RED;
	case BERTH_STATE_STOPPED:
		return "\033[35m"; /* magenta */
	}
	return "";
}

void cli_error(const char *fmt, ...)
{
	va_list ap;
	bool color = cli_color(stderr);
	fputs(color ? BOLD_RED "berth:" CLI_COLOR_END " " : "berth: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Problems go to stderr through a buffer: stderr is unbuffered, and a stream
 * of runs has thousands of warnings, which cost two writes each. */
struct report_out {
	char *buf;
	size_t len, cap;
};

static void report_put(struct report_out *r, const char *s, size_t n)
{
	if (r->buf && r->len + n > r->cap) {
		fwrite(r->buf, 1, r->len, stderr);
		r->len = 0;
	}
	if (!r->buf || n > r->cap) {
		fwrite(s, 1, n, stderr);
		return;
	}
	memcpy(r->buf + r->len, s, n);
	r->len += n;
}

int cli_report(const berth_error *err)
{
	char line[1024];
	bool color = cli_color(stderr);
	struct report_out r = {NULL, 0, 0};
	if (berth_error_count(err) > 1 && (r.buf = malloc(1 << 16)))
		r.cap = 1 << 16;
	for (size_t i = 0; i < berth_error_count(err); i++) {
		const berth_problem *p = berth_error_get(err, i);
		size_t n = berth_problem_format(p, line, sizeof(line));
		size_t shown = n < sizeof(line) ? n : sizeof(line) - 1;
		/* the message in the colour of its severity, after its place */
		const char *msg = color && p->message ? strstr(line, p->message) : NULL;
		if (msg) {
			const char *on = p->severity == BERTH_WARNING ? YELLOW : RED;
			report_put(&r, line, (size_t)(msg - line));
			report_put(&r, on, strlen(on));
			report_put(&r, msg, shown - (size_t)(msg - line));
			report_put(&r, CLI_COLOR_END, strlen(CLI_COLOR_END));
		} else
			report_put(&r, line, shown);
		if (n >= sizeof(line))
			report_put(&r, "...", 3);
		report_put(&r, "\n", 1);
	}
	if (r.buf) {
		fwrite(r.buf, 1, r.len, stderr);
		free(r.buf);
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
	if (!strcmp(argv[k], "__complete"))
		return cmd_complete(argc - k, argv + k);
	const cli_verb *v = cli_verb_find(argv[k]);
	if (!v && argv[k][0] == '-') {
		const char *hint = cli_suggest_opt(cli_global_args.opts, argv[k]);
		cli_error("unknown option \"%s\"%s%s%s (see 'berth help')", argv[k],
			  hint ? "; did you mean \"" : "", hint ? hint : "", hint ? "\"?" : "");
		return 2;
	}
	if (!v)
		return no_verb("unknown verb", argv[k]);
	for (int i = k + 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(v->usage, stdout);
			return 0;
		}
	if (cli_args_check(v->name, v->args, argc - k, argv + k))
		return 2;
	if (global && !v->server && v->fn != cmd_help && v->fn != cmd_version &&
	    ((cli_global_server.url && *cli_global_server.url) || cli_global_server.token ||
	     cli_global_server.cacert || cli_global_server.insecure)) {
		cli_error("%s: --server and --token are not options of %s, which works on this "
			  "machine", v->name, v->name);
		return 2;
	}
	return v->fn(argc - k, argv + k);
}
