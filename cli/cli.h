/*
 * cli.h - the berth command: verbs as a table (git.c's commands[]).
 */
#ifndef BERTH_CLI_H
#define BERTH_CLI_H

#include "berth/berth.h"
#include "berth/client.h"

typedef struct cli_verb {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	const char *usage; /* full help text */
	int server;        /* takes --server and --token */
} cli_verb;

/* Prints every problem of err to stderr, one per line; returns the exit status. */
int cli_report(const berth_error *err);

/* "berth: " + message on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The flags render, explain and validate share. */
typedef struct cli_plan_opts {
	const char *config;   /* --config POLICY */
	const char *run_id;   /* --run-id ID */
	const char *output;   /* -o FORMAT */
	const char *secrets;  /* --secrets a,b: known secret names */
	char **secret_names;
	size_t nsecret_names;
	char *secret_copy;
	int check_secrets;    /* secret_names come from a store: check them */
	const berth_usage *usage; /* the project's active runs, for quotas */
} cli_plan_opts;

/* Takes argv[*i] and its value if it is the flag name ("--x V" or "--x=V"): 1
 * taken (*value set), 0 another argument, -1 the value is missing (reported). */
int cli_flag(int argc, char **argv, int *i, const char *name, const char **value);

/* Takes argv[*i] (and its value) if it is one of the shared flags: 1 taken,
 * 0 not one of them, -1 a value is missing (reported). */
int cli_plan_flag(cli_plan_opts *o, int argc, char **argv, int *i);
/* Loads the policy; reports problems and returns an exit status (0: loaded). */
int cli_plan_load(cli_plan_opts *o, berth_policy **policy);
/* Loads the policy, then reads the spec file (path, '-': standard input);
 * reports problems and returns an exit status (0: both read). */
int cli_plan_open(cli_plan_opts *o, const char *path, berth_policy **policy, berth_spec_set **set);
void cli_plan_release(cli_plan_opts *o);
/* Reads the shared flags and the one SPEC argument; -1 after a usage error. */
int cli_plan_args(const char *verb, cli_plan_opts *o, int argc, char **argv, const char **spec);
/* Plans the index-th run of a file (see berth_run_plan). */
int cli_plan_run(cli_plan_opts *o, const berth_policy *policy, const berth_spec *spec, size_t index,
		 berth_run **run, berth_error **err);

/* Where run, get, logs, stop, secrets and profiles send their work (cli/client.c). */
typedef struct cli_server {
	const char *url;   /* --server URL, else $BERTH_SERVER; "" or none: this machine */
	const char *token; /* --token TOKEN, else $BERTH_TOKEN */
} cli_server;

/* --server and --token given before the verb (main.c fills it). */
extern cli_server cli_global_server;

/* Takes argv[*i] (and its value) if it is --server or --token: 1 taken, 0 not
 * one of them, -1 a value is missing (reported). */
int cli_server_flag(cli_server *s, int argc, char **argv, int *i);
/* After the verb's flags: fills s from the global flags and the environment.
 * 1: the verb talks to the server s->url; 0: it works on this machine; -1
 * (reported) a flag that only this machine knows (local_flag: the first one
 * given, or NULL) came with a server, or --token without a server. */
int cli_server_use(cli_server *s, const char *verb, const char *local_flag);
/* Opens the client of s; reports problems and returns an exit status (0: open). */
int cli_server_open(const cli_server *s, berth_client **c);

/* The lines of a verb's help about --server and --token. */
#define CLI_SERVER_HELP                                                                    \
	"  --server URL     send the work to a berth server (default: $BERTH_SERVER;\n"    \
	"                   '' or unset: this machine); see docs/cli-server.md\n"          \
	"  --token TOKEN    the server's bearer token (default: $BERTH_TOKEN)\n"

int cmd_validate(int argc, char **argv);
int cmd_render(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_profiles(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_get(int argc, char **argv);
int cmd_logs(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_secrets(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_token(int argc, char **argv);
extern const char usage_serve[], usage_token[];
int cmd_supervise(int argc, char **argv); /* hidden: berth __supervise ID */
extern const char usage_validate[], usage_render[], usage_explain[], usage_profiles[];
extern const char usage_run[], usage_get[], usage_logs[], usage_stop[], usage_secrets[];

/* Last, after every system header of the files that include this one:
 * strcpy, sprintf, atoi... are compile errors in the CLI as in libberth. */
#include "base/banned.h"

#endif
