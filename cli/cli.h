/*
 * cli.h - the berth command: verbs as a table (git.c's commands[]).
 */
#ifndef BERTH_CLI_H
#define BERTH_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "berth/berth.h"
#include "berth/client.h"

/* ---- the grammar of a verb (cli/opts.c) ------------------------------------------ */

/* What a value or an argument is, for completion. */
typedef enum cli_kind {
	CLI_ANY = 0, /* anything: nothing to complete */
	CLI_FILE,    /* a file */
	CLI_RUN,     /* a run's id */
	CLI_VERB,    /* one of berth's verbs */
} cli_kind;

/* cli_opt.flags */
#define CLI_EQ 1u     /* the value is optional, and only after '=' (--dry-run[=server]) */
#define CLI_ICASE 2u  /* its values in any case (--state running) */
#define CLI_HIDDEN 4u /* for tests: neither completed nor suggested */

/* One option of a verb. A verb's table ends with an entry whose name is NULL. */
typedef struct cli_opt {
	const char *name;            /* "--follow" */
	const char *alias;           /* "-f"; NULL: none */
	const char *arg;             /* the value's name in help ("SECONDS"); NULL: a switch */
	const char *const *values;   /* the values it takes, NULL-terminated; NULL: any */
	const char *(*value_at)(size_t i); /* or these, from the library (NULL past the last) */
	cli_kind kind;               /* what the value is */
	unsigned flags;
} cli_opt;

/* A word the first argument of a verb may be ("get run ID"), and what the
 * arguments after it are. A verb's list ends with an entry whose name is NULL. */
typedef struct cli_word {
	const char *name;
	cli_kind arg;
} cli_word;

typedef struct cli_args {
	const cli_opt *opts;
	const cli_word *words; /* NULL: the first argument is free */
	cli_kind arg;          /* what its arguments are (with words: see each word's) */
} cli_args;

/* The shared options, for the tables */
#define CLI_OPT_SERVER {.name = "--server", .arg = "URL"}, {.name = "--token", .arg = "TOKEN"}, \
	{.name = "--cacert", .arg = "FILE"}, {.name = "--insecure-skip-tls-verify"}
#define CLI_OPT_CLUSTER                                                                    \
	{.name = "--kubeconfig", .arg = "FILE", .kind = CLI_FILE}, {.name = "--context", .arg = "NAME"}
#define CLI_OPT_CONFIG {.name = "--config", .arg = "POLICY", .kind = CLI_FILE}
#define CLI_OPT_BACKEND {.name = "--backend", .arg = "KIND", .value_at = berth_backend_kind_name}
#define CLI_VALUES(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Checks argv (argv[0] the verb) against a before the verb reads it: every
 * option is one of the verb's (else "unknown option", with the closest as a
 * did-you-mean), has its value, and a value one of those it takes; the first
 * argument one of a->words when it is close to one. "-ojson" becomes
 * "-o=json" in argv. Up to "--". 0, or -1 (reported). */
int cli_args_check(const char *verb, const cli_args *a, int argc, char **argv);
/* The parser of a verb whose command line cli_args_check passed: the option
 * at argv[*i], its value in *value (after '=', or the next argument, which *i
 * then passes; NULL for a switch), or NULL when argv[*i] is an argument. */
const cli_opt *cli_opt_next(const cli_args *a, int argc, char **argv, int *i, const char **value);
/* The option arg ("--x", "--x=V", an alias) names in opts; NULL when none. */
const cli_opt *cli_opt_find(const cli_opt *opts, const char *arg);
/* The i-th value of o; NULL past the last (or when o takes any). */
const char *cli_opt_value(const cli_opt *o, size_t i);
/* Whether v is one of o's values (or o takes any). */
int cli_value_ok(const cli_opt *o, const char *v);
/* 0 when v is one of o's values, else -1 after "VERB: AS takes a, b or c,
 * not "v"; did you mean "b"?" (AS: the option as written, up to '='). */
int cli_value_check(const char *verb, const cli_opt *o, const char *as, const char *v);
/* The option of opts, or the value of o, closest to arg; NULL when none is. */
const char *cli_suggest_opt(const cli_opt *opts, const char *arg);
const char *cli_suggest_value(const cli_opt *o, const char *v);
const cli_word *cli_word_find(const cli_word *words, const char *arg);

typedef struct cli_verb {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	const char *usage;      /* full help text */
	int server;             /* takes --server and --token */
	const cli_args *args;   /* its grammar; NULL: not checked */
} cli_verb;

/* The options berth takes before its verb (complete.c). */
extern const cli_args cli_global_args;
/* The verbs, in the order of 'berth help' (main.c); hidden ones are not in it. */
extern const cli_verb cli_verbs[];
extern const size_t cli_nverbs;
const cli_verb *cli_verb_find(const char *name);

/* Prints every problem of err to stderr, one per line; returns the exit status. */
int cli_report(const berth_error *err);

/* "berth: " + message on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The flags render, explain and validate share (cli/plan.c). */
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
	const char *backend;  /* --backend KIND: what it needs is checked (berth_run_needs) */
	berth_render *render; /* kubernetes: the runs' objects go here (berth_run_needs_render) */
	const char *project;  /* --project P (with a server): the project of every run */
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
/* Reads the shared flags and the one SPEC argument, and with srv (NULL: not
 * taken) --server, --token and --project; -1 after a usage error. */
struct cli_server;
int cli_plan_args(const char *verb, cli_plan_opts *o, struct cli_server *srv, int argc, char **argv,
		  const char **spec);
/* Plans the index-th run of a file (see berth_run_plan), then, with
 * o->backend, checks what that backend needs of it (berth_run_needs; with
 * o->render, its objects are added there): the problems of both in *err. */
int cli_plan_run(cli_plan_opts *o, const berth_policy *policy, const berth_spec *spec, size_t index,
		 berth_run **run, berth_error **err);
/* -o table|yaml|json of explain and profiles (NULL: table); -1 (reported) else. */
int cli_explain_format(const char *verb, const char *o, berth_explain_format *fmt);
/* Prints the document data (len bytes, freed) when ret >= 0, else reports err;
 * returns the exit status. */
int cli_print_doc(int ret, char *data, size_t len, berth_error *err);

/* Where run, get, logs, stop, secrets and profiles send their work (cli/client.c). */
typedef struct cli_server cli_server;
struct cli_server {
	const char *url;   /* --server URL, else $BERTH_SERVER; "" or none: this machine */
	const char *token; /* --token TOKEN, else $BERTH_TOKEN */
	const char *cacert; /* --cacert FILE (else the client reads $BERTH_CACERT) */
	bool insecure;      /* --insecure-skip-tls-verify */
};

/* --server and --token given before the verb (main.c fills it). */
extern cli_server cli_global_server;

/* Takes argv[*i] (and its value) if it is --server, --token, --cacert or
 * --insecure-skip-tls-verify: 1 taken, 0 not one of them, -1 a value is
 * missing (reported). */
int cli_server_flag(cli_server *s, int argc, char **argv, int *i);
/* After the verb's flags: fills s from the global flags and the environment.
 * 1: the verb talks to the server s->url; 0: it works on this machine; -1
 * (reported) a flag that only this machine knows (local_flag: the first one
 * given, or NULL) came with a server, or --token without a server. */
int cli_server_use(cli_server *s, const char *verb, const char *local_flag);
/* Opens the client of s; reports problems and returns an exit status (0: open). */
int cli_server_open(const cli_server *s, berth_client **c);

/* What validate, explain and run --dry-run ask a server of a spec: it plans
 * the runs as it would run them (its policy and backend, the project's
 * secrets and quota) and creates nothing. */
typedef enum cli_check_what { CLI_CHECK_VALIDATE, CLI_CHECK_EXPLAIN, CLI_CHECK_DRY_RUN } cli_check_what;
typedef struct cli_check {
	cli_check_what what;
	const char *project;        /* --project P, or NULL: each spec's own */
	berth_explain_format fmt;   /* explain's -o */
	bool quiet;                 /* validate -q */
} cli_check;
/* Sends the spec text (len bytes, name in messages) to the server s and
 * prints the answer as the local verb prints its own: the problems, then
 * "NAME: valid (N runs)" (validate), each run's effective spec (explain), or
 * that nothing was created (run --dry-run). Returns the exit status. */
int cli_server_check(const cli_server *s, const cli_check *k, const char *name, const char *text,
		     size_t len);

/* The lines of a verb's help about --server and --token. */
#define CLI_SERVER_HELP                                                                    \
	"  --server URL     send the work to a berth server (default: $BERTH_SERVER;\n"    \
	"                   '' or unset: this machine); see docs/cli-server.md\n"          \
	"  --token TOKEN    the server's bearer token (default: $BERTH_TOKEN)\n"        \
	"  --cacert FILE    the CAs (PEM) an https server's certificate is checked\n"     \
	"                   with (default: $BERTH_CACERT, else the system's)\n"           \
	"  --insecure-skip-tls-verify\n"                                                  \
	"                   check no certificate (anyone between may read the token)\n"

/* ---- run, get, logs, stop, secrets on this machine (cli/backend.c) ---- */

/* The lines of a verb's help about --kubeconfig and --context. */
#define CLI_CLUSTER_HELP                                                                   \
	"  --kubeconfig FILE, --context NAME\n"                                               \
	"                   the cluster of kubernetes runs (default: as kubectl finds it)\n"

/* The backend a verb works on when it does not talk to a server. */
typedef struct cli_backend {
	cli_plan_opts plan;
	berth_policy *policy;
	berth_backend *b;
	const char *kubeconfig, *context; /* --kubeconfig, --context */
	const char *cluster_flag;         /* the first of them given */
	bool waits;                       /* --wait or --follow: berth_backend_opts.waits */
	bool passive;                     /* berth_backend_opts.passive: reads only */
} cli_backend;

/* --kubeconfig FILE and --context NAME: which cluster the kubernetes runs are
 * on. Takes argv[*i] (and its value) if it is one of them: 1 taken, 0 not one
 * of them, -1 a value is missing (reported). */
int cli_cluster_flag(cli_backend *c, int argc, char **argv, int *i);
/* Loads the policy and opens the backend kind (NULL: local; runs of either
 * kind are read through the kind they were submitted to); reports problems
 * and returns an exit status (0: open). */
int cli_backend_open(cli_backend *c, const char *kind);
/* Closes what cli_backend_open opened, and releases c->plan. */
void cli_backend_close(cli_backend *c);
/* A flag's value: argv[i+1], or after '='. NULL (reported) when missing. */
const char *cli_flag_value(const char *verb, int argc, char **argv, int *i, const char *name);
/* --grace SECONDS (0 to 86400) of stop and delete: 1 taken into *grace, 0
 * another argument, -1 a missing or wrong value (reported). */
int cli_grace_flag(const char *verb, int argc, char **argv, int *i, int *grace);
/* Whether arg is the flag name, alone or as "name=VALUE". */
int cli_is_flag(const char *arg, const char *name);
/* Sleeps ms milliseconds (a signal that is caught does not cut it short). */
void cli_pause_ms(int ms);
/* A berth_log_write: the chunk on standard output, flushed. */
int cli_print_chunk(void *ctx, const char *data, size_t len);
/* "run ID (NAME): STATE: REASON" on standard error. */
void cli_say_state(const berth_run_info *i);
/* The runs f keeps, as 'berth get runs' lists them: from the server srv says
 * (its flags, else $BERTH_SERVER), else from this machine's store, read
 * passively (completion: nothing is scheduled, no cluster is asked). 0, or an
 * exit status (reported). */
int cli_list_runs(cli_server *srv, const berth_run_filter *f, berth_run_info ***out, size_t *n);
/* Reads a spec or a secret's value whole ('-': standard input), capped at
 * 4 MiB; NULL when it cannot. */
char *cli_read_file(const char *path, size_t *len);

/* ---- delete, describe, events: runs here or on a server (cli/runs.c) ---- */

/* Where a verb that reads or acts on runs works. */
typedef struct cli_target {
	cli_backend c;        /* this machine: --config, --kubeconfig, --context */
	cli_server srv;       /* a server: --server, --token */
	berth_client *cl;
	int remote;           /* 1: the server's; 0: this machine's */
} cli_target;
/* Takes argv[*i] (and its value) if it is a flag of where the verb works:
 * 1 taken, 0 not one, -1 a value is missing (reported). */
int cli_target_flag(cli_target *t, int argc, char **argv, int *i);
/* Opens the server's client or this machine's backend; an exit status. */
int cli_target_open(cli_target *t, const char *verb);
void cli_target_close(cli_target *t);
int cli_target_get(cli_target *t, const char *id, berth_run_info **info, berth_error **err);
/* A run's events as JSON (a list, or the server's {"items": [...]}); free() it. */
int cli_target_events(cli_target *t, const char *id, char **json, size_t *len, berth_error **err);

/* Events of one or more runs, for a table. */
typedef struct cli_event {
	const char *run, *time, *kind, *message;
	size_t index; /* as recorded: the order of a tie */
} cli_event;
typedef struct cli_events {
	cli_event *rows;
	size_t n;
	berth_doc **docs; /* what the rows point into */
	size_t ndocs;
} cli_events;
/* Adds the events of run (json as cli_target_events gives it); -1 when it
 * cannot be read (err, when a problem was found) or memory runs out. */
int cli_events_add(cli_events *e, const char *run, const char *json, size_t len, berth_error **err);
/* Oldest first; events of the same time in the order they were recorded. */
void cli_events_sort(cli_events *e);
/* TIME [RUN] KIND MESSAGE, oldest first, each line after indent. */
void cli_events_print(cli_events *e, bool with_run, const char *indent);
void cli_events_free(cli_events *e);

/* ---- the verbs: cmd_<verb>() and usage_<verb>[] in cli/cmd_<verb>.c ---- */

int cmd_validate(int argc, char **argv);
int cmd_render(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_profiles(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_get(int argc, char **argv);
int cmd_logs(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_secrets(int argc, char **argv);
int cmd_quota(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_token(int argc, char **argv);
int cmd_admin(int argc, char **argv);
int cmd_cluster(int argc, char **argv);
int cmd_delete(int argc, char **argv);
int cmd_describe(int argc, char **argv);
int cmd_events(int argc, char **argv);
int cmd_supervise(int argc, char **argv); /* hidden: berth __supervise ID */
int cmd_completion(int argc, char **argv);
int cmd_complete(int argc, char **argv);  /* hidden: berth __complete WORD... */
extern const char usage_validate[], usage_render[], usage_explain[], usage_profiles[];
extern const char usage_run[], usage_get[], usage_logs[], usage_stop[], usage_secrets[];
extern const char usage_quota[];
extern const char usage_serve[], usage_token[], usage_cluster[], usage_completion[];
extern const cli_args args_validate, args_render, args_explain, args_profiles, args_run;
extern const cli_args args_get, args_logs, args_stop, args_secrets, args_quota, args_serve;
extern const cli_args args_token, args_cluster, args_completion;
extern const char usage_admin[];
extern const cli_args args_admin;
extern const char usage_delete[], usage_describe[], usage_events[];
extern const cli_args args_delete, args_describe, args_events;

/* The man page of berth (troff), from the verbs' summaries and help (cli/man.c). */
void cli_man(FILE *out);

/* ---- colours (cli/main.c) ------------------------------------------------------------ */

/* Whether to colour what goes to f: a terminal, and $NO_COLOR unset or empty
 * (no-color.org), and $TERM not "dumb". */
bool cli_color(FILE *f);
/* The escape that colours a run state ("" when none), and the one that ends it. */
const char *cli_state_color(berth_state s);
#define CLI_COLOR_END "\033[0m"

/* Last, after every system header of the files that include this one:
 * strcpy, sprintf, atoi... are compile errors in the CLI as in libberth. */
#include "base/banned.h"

#endif
