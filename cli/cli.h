/*
 * cli.h - the berth command: verbs as a table (git.c's commands[]).
 */
#ifndef BERTH_CLI_H
#define BERTH_CLI_H

#include "berth/berth.h"

typedef struct cli_verb {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	const char *usage; /* full help text */
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

int cmd_validate(int argc, char **argv);
int cmd_render(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_profiles(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_get(int argc, char **argv);
int cmd_logs(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_secrets(int argc, char **argv);
int cmd_supervise(int argc, char **argv); /* hidden: berth __supervise ID */
extern const char usage_validate[], usage_render[], usage_explain[], usage_profiles[];
extern const char usage_run[], usage_get[], usage_logs[], usage_stop[], usage_secrets[];

#endif
