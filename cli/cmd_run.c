/*
 * cmd_run.c - berth run, get, logs, stop, secrets: runs on a backend
 * (the local machine by default).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

const char usage_run[] =
	"usage: berth run SPEC|- [--config POLICY] [--backend local|kubernetes] [--run-id ID]\n"
	"                 [--kubeconfig FILE] [--context NAME] [--dry-run=server]\n"
	"                 [--wait] [--follow]\n"
	"       berth run SPEC|- --server URL [--token TOKEN] [--wait] [--follow]\n"
	"\n"
	"Merges each run of SPEC with the platform policy, checks it as 'berth render'\n"
	"does, and starts it. On the local backend (the default) the function's command\n"
	"runs as a process on this machine with the CPU and memory limits it declares\n"
	"(cgroups), its GPUs, volumes, user, environment and secrets; it waits in a\n"
	"queue while the machine is busy, and is refused at once if it can never fit.\n"
	"State lives in $BERTH_HOME (default ~/.berth). Prints each run's id on\n"
	"standard output and its state on standard error.\n"
	"\n"
	"With a server (--server or $BERTH_SERVER) the spec is sent as written: the\n"
	"server checks it against its own policy and runs it on its backend; its\n"
	"problems are printed as local ones are.\n"
	"\n"
	"  --config POLICY  the platform policy (default: $BERTH_CONFIG, then\n"
	"                   /etc/berth/config.yaml, else built-in defaults)\n"
	"  --backend KIND   where to run: local (default), or kubernetes: the objects\n"
	"                   'berth render' prints are applied to the cluster of the\n"
	"                   kubeconfig (docs/kubernetes.md)\n"
	"  --kubeconfig FILE, --context NAME\n"
	"                   the cluster (default: $KUBECONFIG, ~/.kube/config and its\n"
	"                   current context, else the pod's service account)\n"
	"  --dry-run=server the API server validates every object; nothing is created\n"
	"  --run-id ID      the run id (default: random)\n"
	"  --wait           wait until the runs end\n"
	"  --follow, -f     print the log while it runs, then wait (one run)\n"
	CLI_SERVER_HELP
	"\n"
	"exit status: 0 started (with --wait: succeeded), 2 a spec, the policy or a\n"
	"flag is invalid or a run is refused, 1 anything else (with --wait: a run\n"
	"did not succeed).\n";

#define CLI_CLUSTER_HELP                                                                   \
	"  --kubeconfig FILE, --context NAME\n"                                               \
	"                   the cluster of kubernetes runs (default: as kubectl finds it)\n"

const char usage_get[] =
	"usage: berth get runs [--project P] [--state STATE] [-o table|yaml|json]\n"
	"       berth get run ID [-o yaml|json]\n"
	"\n"
	"Shows runs: state (with the reason a run waits or failed), profile, requests,\n"
	"age; for one run also its limits, GPUs, exit code or signal, OOM kill, attempts,\n"
	"usage measured by its cgroup, and its log file. With a server: the runs of\n"
	"every project the token sees (or of --project). Unfinished runs on a\n"
	"Kubernetes cluster are read from the cluster first.\n"
	"\n"
	CLI_CLUSTER_HELP
	CLI_SERVER_HELP;

const char usage_logs[] =
	"usage: berth logs ID [-f] [--kubeconfig FILE] [--context NAME]\n"
	"       berth logs ID [-f] --server URL [--token TOKEN]\n"
	"\n"
	"Prints the run's standard output and error. -f follows the log until the run ends.\n"
	"A run on a Kubernetes cluster: the log of its newest pod, through the API.\n"
	"\n"
	CLI_CLUSTER_HELP
	CLI_SERVER_HELP;

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

const char usage_secrets[] =
	"usage: berth secrets set NAME [--project P] [--from-file FILE]\n"
	"       berth secrets list [--project P]\n"
	"       berth secrets rm NAME [--project P]\n"
	"       (each also with [--server URL] [--token TOKEN])\n"
	"\n"
	"The project's secrets, for the runs that name them (secrets: [NAME], or a\n"
	"volume of type secret). 'set' reads the value from standard input (or FILE),\n"
	"never from the command line, where other users could see it. Values are\n"
	"encrypted at rest in $BERTH_HOME and are never printed. With a server, they\n"
	"are kept in the server's store (set and rm need an admin token), and a value\n"
	"must be UTF-8 text.\n"
	"\n"
	CLI_SERVER_HELP;

/* ---- shared ------------------------------------------------------------------------ */

typedef struct cli_backend {
	cli_plan_opts plan;
	berth_policy *policy;
	berth_backend *b;
	const char *kubeconfig, *context; /* --kubeconfig, --context */
	const char *cluster_flag;         /* the first of them given */
	bool waits;                       /* --wait or --follow: berth_backend_opts.waits */
} cli_backend;

/* --kubeconfig FILE and --context NAME: which cluster the kubernetes runs are on. */
static int cluster_flag(cli_backend *c, int argc, char **argv, int *i)
{
	const char *flag = argv[*i];
	int r = cli_flag(argc, argv, i, "--kubeconfig", &c->kubeconfig);
	if (!r)
		r = cli_flag(argc, argv, i, "--context", &c->context);
	if (r > 0 && !c->cluster_flag)
		c->cluster_flag = !strncmp(flag, "--kubeconfig", 12) ? "--kubeconfig" : "--context";
	return r;
}

static int backend_open(cli_backend *c, const char *kind)
{
	berth_error *err = NULL;
	int status = cli_plan_load(&c->plan, &c->policy);
	if (status)
		return status;
	berth_backend_opts o = {.policy = c->policy,
				.kubeconfig = c->kubeconfig,
				.context = c->context,
				.waits = c->waits};
	if (berth_backend_open(&c->b, kind, &o, &err)) {
		status = cli_report(err);
		berth_error_free(err);
		return status ? status : 1;
	}
	cli_report(err); /* warnings: runs whose state could not be read */
	berth_error_free(err);
	return 0;
}

static void backend_close(cli_backend *c)
{
	berth_backend_close(c->b);
	berth_policy_free(c->policy);
	cli_plan_release(&c->plan);
}

/* A flag's value: argv[i+1], or after '='. NULL (reported) when missing. */
static const char *flag_value(const char *verb, int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);
	if (!strncmp(argv[*i], name, n) && argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (*i + 1 >= argc) {
		cli_error("%s: %s needs a value", verb, name);
		return NULL;
	}
	return argv[++*i];
}

static int is_flag(const char *arg, const char *name)
{
	size_t n = strlen(name);
	return !strncmp(arg, name, n) && (arg[n] == 0 || arg[n] == '=');
}

static int print_chunk(void *ctx, const char *data, size_t len)
{
	(void)ctx;
	return fwrite(data, 1, len, stdout) == len && fflush(stdout) == 0 ? 0 : -1;
}

static void say_state(const berth_run_info *i)
{
	fprintf(stderr, "run %s (%s): %s%s%s\n", i->id, i->name, berth_state_name(i->state),
		i->reason ? ": " : "", i->reason ? i->reason : "");
}

/* Reads SPEC whole ('-': standard input), capped at 4 MiB. */
static char *read_spec(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!f) {
		cli_error("cannot open %s", path);
		return NULL;
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			if (cap >= (4u << 20)) {
				cli_error("%s is over 4 MiB", path);
				free(buf);
				buf = NULL;
				break;
			}
			char *grown = realloc(buf, cap * 2 + 1);
			if (!grown) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = grown;
			cap *= 2;
		}
	}
	if (f != stdin)
		fclose(f);
	if (buf)
		buf[n] = 0;
	*len = n;
	return buf;
}

/* ---- against a server -------------------------------------------------------------- */

static void pause_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Asks the server for the run until it is final. */
static int remote_wait(berth_client *c, const char *id, berth_run_info **out, berth_error **err)
{
	for (int delay = 200;; delay = delay < 2000 ? delay * 3 / 2 : delay) {
		berth_run_info *i = NULL;
		if (berth_client_get(c, id, &i, err))
			return -1;
		if (berth_state_final(i->state)) {
			*out = i;
			return 0;
		}
		berth_run_info_free(i);
		pause_ms(delay);
	}
}

/* berth run with a server: the spec goes as written; the server plans it. */
static int run_remote(const cli_server *s, const char *name, const char *text, size_t len,
		      int wait, int follow)
{
	berth_client *c = NULL;
	berth_run_info **runs = NULL;
	berth_error *err = NULL;
	size_t n = 0;
	int status = cli_server_open(s, &c);
	if (status)
		return status;
	if (berth_client_submit(c, NULL, name, text, len, &runs, &n, &err)) {
		status = cli_report(err);
		status = status ? status : 1;
		goto out;
	}
	cli_report(err); /* warnings */
	berth_error_free(err);
	err = NULL;
	for (size_t i = 0; i < n; i++) {
		printf("%s\n", runs[i]->id);
		fflush(stdout);
		say_state(runs[i]);
	}
	if (!wait && !follow)
		goto out;
	if (follow && n != 1)
		cli_error("run: --follow follows one run; the server started %zu: waiting for them "
			  "instead", n);
	else if (follow && berth_client_logs(c, runs[0]->id, true, print_chunk, NULL, &err)) {
		status = cli_report(err);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		berth_run_info *info = NULL;
		if (remote_wait(c, runs[i]->id, &info, &err)) {
			status = cli_report(err);
			goto out;
		}
		say_state(info);
		if (info->state != BERTH_STATE_SUCCEEDED)
			status = 1;
		berth_run_info_free(info);
	}
out:
	berth_error_free(err);
	berth_run_info_list_free(runs, n);
	berth_client_close(c);
	return status;
}

/* ---- run ----------------------------------------------------------------------------- */

int cmd_run(int argc, char **argv)
{
	cli_backend c;
	cli_server srv = {NULL, NULL};
	memset(&c, 0, sizeof(c));
	const char *path = NULL, *kind = "local", *backend_flag = NULL, *dry_run = NULL;
	int wait = 0, follow = 0, status = 2;
	for (int i = 1; i < argc; i++) {
		int r = cli_plan_flag(&c.plan, argc, argv, &i);
		if (!r)
			r = cli_server_flag(&srv, argc, argv, &i);
		if (!r)
			r = cluster_flag(&c, argc, argv, &i);
		if (r < 0)
			return 2;
		if (r)
			continue;
		if (!strcmp(argv[i], "--wait"))
			wait = 1;
		else if (!strcmp(argv[i], "--follow") || !strcmp(argv[i], "-f"))
			follow = 1;
		else if (is_flag(argv[i], "--backend")) {
			if (!(kind = flag_value("run", argc, argv, &i, "--backend")))
				return 2;
			backend_flag = "--backend";
		} else if (is_flag(argv[i], "--dry-run")) {
			dry_run = argv[i][9] == '=' ? argv[i] + 10 : "server";
			if (strcmp(dry_run, "server")) {
				cli_error("run: --dry-run takes \"server\" (the API server validates the "
					  "objects); for a dry run on this machine use 'berth render'");
				return 2;
			}
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cli_error("run: unknown option \"%s\" (see 'berth help run')", argv[i]);
			return 2;
		} else if (path) {
			cli_error("run: one spec file at a time (use '-' and a stream for several runs)");
			return 2;
		} else
			path = argv[i];
	}
	if (c.plan.secrets || c.plan.output) {
		cli_error("run: %s is not an option of run (the project's secrets are checked in its "
			  "store; see 'berth help run')", c.plan.secrets ? "--secrets" : "-o");
		cli_plan_release(&c.plan);
		return 2;
	}
	if (!path) {
		cli_error("run: no spec given (use '-' for standard input)");
		return 2;
	}
	int remote = cli_server_use(&srv, "run", c.plan.config ? "--config"
					       : backend_flag ? backend_flag
					       : dry_run ? "--dry-run" : c.cluster_flag);
	if (remote > 0 && c.plan.run_id) {
		cli_error("run: --run-id is not an option with a server, which picks run ids");
		remote = -1;
	}
	if (remote < 0) {
		cli_plan_release(&c.plan);
		return 2;
	}
	size_t len;
	char *text = read_spec(path, &len);
	if (!text)
		return 1;
	if (remote) {
		const char *name = strcmp(path, "-") ? path : "<stdin>";
		status = run_remote(&srv, name, text, len, wait, follow);
		free(text);
		cli_plan_release(&c.plan);
		return status;
	}
	berth_error *err = NULL;
	berth_batch *batch = NULL;
	berth_run_info **infos = NULL;
	size_t n = 0;
	c.waits = wait || follow;
	if ((status = backend_open(&c, kind)))
		goto out;
	/* every run is planned, and checked against this machine, before any starts */
	berth_batch_opts bo = {.file = strcmp(path, "-") ? path : "<stdin>", .run_id = c.plan.run_id};
	int ret = berth_batch_plan(&batch, c.b, text, len, &bo, &err);
	if (!ret && dry_run) {
		char *report = NULL;
		ret = berth_batch_dry_run(batch, &report, &err);
		status = cli_report(err);
		if (report)
			fputs(report, stdout);
		free(report);
		status = ret < 0 ? (status ? status : 1) : 0;
		goto out;
	}
	if (!ret && follow && berth_batch_count(batch) != 1) {
		cli_error("run: --follow follows one run; this spec has %zu", berth_batch_count(batch));
		status = 2;
		goto out;
	}
	if (!ret)
		ret = berth_batch_submit(batch, &infos, &n, &err);
	status = cli_report(err);
	if (ret < 0) {
		status = status ? status : 1;
		goto out;
	}
	status = 0;
	for (size_t i = 0; i < n; i++) {
		printf("%s\n", infos[i]->id);
		fflush(stdout);
		say_state(infos[i]);
	}
	if (!wait && !follow)
		goto out;
	berth_error_free(err);
	err = NULL;
	if (follow && berth_backend_logs(c.b, infos[0]->id, 1, print_chunk, NULL, &err)) {
		status = cli_report(err);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		berth_run_info *info = NULL;
		if (berth_backend_wait(c.b, infos[i]->id, -1, &info, &err)) {
			status = cli_report(err);
			goto out;
		}
		say_state(info);
		if (info->state != BERTH_STATE_SUCCEEDED)
			status = 1;
		berth_run_info_free(info);
	}
out:
	berth_error_free(err);
	berth_run_info_list_free(infos, n);
	berth_batch_free(batch);
	free(text);
	backend_close(&c);
	return status;
}

/* ---- get ------------------------------------------------------------------------------ */

static void age(char *buf, size_t len, int64_t created_ms)
{
	int64_t s = (int64_t)time(NULL) - created_ms / 1000;
	if (s < 0)
		s = 0;
	if (s < 120)
		snprintf(buf, len, "%llds", (long long)s);
	else if (s < 7200)
		snprintf(buf, len, "%lldm", (long long)(s / 60));
	else if (s < 172800)
		snprintf(buf, len, "%lldh", (long long)(s / 3600));
	else
		snprintf(buf, len, "%lldd", (long long)(s / 86400));
}

static void table(berth_run_info **list, size_t n)
{
	printf("%-12s %-28s %-9s %-10s %-6s %-7s %-4s %-5s %s\n", "ID", "NAME", "STATE", "PROFILE",
	       "CPU", "MEM", "GPU", "AGE", "REASON");
	for (size_t i = 0; i < n; i++) {
		const berth_run_info *r = list[i];
		char cpu[32], mem[32], a[32];
		if (r->cpu_milli % 1000)
			snprintf(cpu, sizeof(cpu), "%lldm", (long long)r->cpu_milli);
		else
			snprintf(cpu, sizeof(cpu), "%lld", (long long)(r->cpu_milli / 1000));
		if (r->mem >= (1LL << 30) && r->mem % (1LL << 30) == 0)
			snprintf(mem, sizeof(mem), "%lldGi", (long long)(r->mem >> 30));
		else
			snprintf(mem, sizeof(mem), "%lldMi", (long long)((r->mem + (1 << 20) - 1) >> 20));
		age(a, sizeof(a), r->created);
		printf("%-12s %-28s %-9s %-10s %-6s %-7s %-4lld %-5s %s\n", r->id, r->name,
		       berth_state_name(r->state),
		       r->profile ? r->profile : "-", cpu, mem, (long long)r->gpus, a,
		       r->reason ? r->reason : "");
	}
}

int cmd_get(int argc, char **argv)
{
	cli_backend c;
	cli_server srv = {NULL, NULL};
	memset(&c, 0, sizeof(c));
	const char *what = NULL, *id = NULL, *project = NULL, *output = "table";
	int state = -1;
	for (int i = 1; i < argc; i++) {
		int r = cli_server_flag(&srv, argc, argv, &i);
		if (r > 0)
			continue;
		if (!r)
			r = cli_plan_flag(&c.plan, argc, argv, &i);
		if (!r)
			r = cluster_flag(&c, argc, argv, &i);
		if (r < 0)
			return 2;
		if (r) {
			if (c.plan.output)
				output = c.plan.output;
			continue;
		}
		if (is_flag(argv[i], "--project")) {
			if (!(project = flag_value("get", argc, argv, &i, "--project")))
				return 2;
		} else if (is_flag(argv[i], "--state")) {
			const char *s = flag_value("get", argc, argv, &i, "--state");
			if (!s)
				return 2;
			if ((state = berth_state_parse(s)) < 0) {
				cli_error("get: --state takes Pending, Running, Succeeded, Failed or Stopped, "
					  "not \"%s\"", s);
				return 2;
			}
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cli_error("get: unknown option \"%s\" (see 'berth help get')", argv[i]);
			return 2;
		} else if (!what)
			what = argv[i];
		else if (!id)
			id = argv[i];
		else {
			cli_error("get: too many arguments (see 'berth help get')");
			return 2;
		}
	}
	int one = what && !strcmp(what, "run");
	if (!what || (!one && strcmp(what, "runs")) || (one && !id) || (!one && id)) {
		cli_error("get: say 'get runs' or 'get run ID' (see 'berth help get')");
		return 2;
	}
	if (strcmp(output, "table") && strcmp(output, "yaml") && strcmp(output, "json")) {
		cli_error("get: -o takes table, yaml or json, not \"%s\"", output);
		return 2;
	}
	if (one && !strcmp(output, "table"))
		output = "yaml";
	int remote = cli_server_use(&srv, "get", c.plan.config ? "--config" : c.cluster_flag);
	if (remote < 0) {
		cli_plan_release(&c.plan);
		return 2;
	}
	berth_client *cl = NULL;
	int status = remote ? cli_server_open(&srv, &cl) : backend_open(&c, NULL);
	if (status) {
		backend_close(&c);
		return status;
	}
	berth_error *err = NULL;
	berth_run_info **list = NULL, *single = NULL;
	size_t n = 0;
	int rc;
	if (remote)
		rc = one ? berth_client_get(cl, id, &single, &err)
			 : berth_client_list(cl, project, state, &list, &n, &err);
	else
		rc = one ? berth_backend_get(c.b, id, &single, &err)
			 : berth_backend_list(c.b, project, state, &list, &n, &err);
	if (rc) {
		status = cli_report(err);
	} else if (!strcmp(output, "table")) {
		table(list, n);
	} else {
		char *out;
		size_t len;
		berth_format fmt = !strcmp(output, "json") ? BERTH_FORMAT_JSON : BERTH_FORMAT_YAML;
		if (berth_run_info_format(one ? &single : list, one ? 1 : n, !one, fmt, &out, &len, &err))
			status = cli_report(err);
		else {
			fwrite(out, 1, len, stdout);
			free(out);
		}
	}
	berth_error_free(err);
	berth_run_info_list_free(list, n);
	berth_run_info_free(single);
	berth_client_close(cl);
	backend_close(&c);
	return status;
}

/* ---- logs, stop --------------------------------------------------------------------------- */

int cmd_logs(int argc, char **argv)
{
	cli_backend c;
	cli_server srv = {NULL, NULL};
	memset(&c, 0, sizeof(c));
	const char *id = NULL;
	int follow = 0;
	for (int i = 1; i < argc; i++) {
		int r = cli_server_flag(&srv, argc, argv, &i);
		if (!r)
			r = cli_plan_flag(&c.plan, argc, argv, &i);
		if (!r)
			r = cluster_flag(&c, argc, argv, &i);
		if (r < 0)
			return 2;
		if (r)
			continue;
		if (!strcmp(argv[i], "-f") || !strcmp(argv[i], "--follow"))
			follow = 1;
		else if (argv[i][0] == '-' && argv[i][1]) {
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
	int status = remote ? cli_server_open(&srv, &cl) : backend_open(&c, NULL);
	if (!status && (remote ? berth_client_logs(cl, id, follow, print_chunk, NULL, &err)
			       : berth_backend_logs(c.b, id, follow, print_chunk, NULL, &err)))
		status = cli_report(err);
	berth_error_free(err);
	berth_client_close(cl);
	backend_close(&c);
	return status;
}

int cmd_stop(int argc, char **argv)
{
	cli_backend c;
	cli_server srv = {NULL, NULL};
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
			r = cluster_flag(&c, argc, argv, &i);
		if (r < 0)
			goto usage;
		if (r)
			continue;
		if (is_flag(argv[i], "--grace")) {
			const char *v = flag_value("stop", argc, argv, &i, "--grace");
			char *end;
			long g = v ? strtol(v, &end, 10) : -1;
			if (!v || *end || end == v || g < 0 || g > 86400) {
				cli_error("stop: --grace takes seconds, 0 to 86400");
				goto usage;
			}
			grace = (int)g;
		} else if (argv[i][0] == '-' && argv[i][1]) {
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
	int status = remote ? cli_server_open(&srv, &cl) : backend_open(&c, NULL);
	for (int i = 0; !status && i < nids; i++) {
		berth_error *err = NULL;
		berth_run_info *info = NULL;
		int rc = remote ? berth_client_stop(cl, ids[i], grace, true, &err)
				: berth_backend_stop(c.b, ids[i], grace, &err);
		if (!rc)
			rc = remote ? berth_client_get(cl, ids[i], &info, &err)
				    : berth_backend_get(c.b, ids[i], &info, &err);
		if (rc)
			status = cli_report(err);
		else
			say_state(info);
		berth_run_info_free(info);
		berth_error_free(err);
	}
	berth_client_close(cl);
	backend_close(&c);
	free(ids);
	return status;
usage:
	cli_plan_release(&c.plan);
	free(ids);
	return 2;
}

/* ---- secrets -------------------------------------------------------------------------------- */

int cmd_secrets(int argc, char **argv)
{
	cli_backend c;
	cli_server srv = {NULL, NULL};
	memset(&c, 0, sizeof(c));
	const char *op = NULL, *name = NULL, *project = "default", *file = NULL;
	for (int i = 1; i < argc; i++) {
		int r = cli_server_flag(&srv, argc, argv, &i);
		if (r < 0)
			return 2;
		if (r)
			continue;
		if (is_flag(argv[i], "--project")) {
			if (!(project = flag_value("secrets", argc, argv, &i, "--project")))
				return 2;
		} else if (is_flag(argv[i], "--from-file")) {
			if (!(file = flag_value("secrets", argc, argv, &i, "--from-file")))
				return 2;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cli_error("secrets: unknown option \"%s\" (see 'berth help secrets')", argv[i]);
			return 2;
		} else if (!op)
			op = argv[i];
		else if (!name)
			name = argv[i];
		else {
			cli_error("secrets: too many arguments: the value is read from standard input "
				  "or --from-file, never from the command line");
			return 2;
		}
	}
	int set = op && !strcmp(op, "set"), rm = op && !strcmp(op, "rm"),
	    list = op && !strcmp(op, "list");
	if (!(set || rm || list) || ((set || rm) && !name) || (list && name)) {
		cli_error("secrets: say 'set NAME', 'list' or 'rm NAME' (see 'berth help secrets')");
		return 2;
	}
	int remote = cli_server_use(&srv, "secrets", NULL);
	if (remote < 0)
		return 2;
	berth_client *cl = NULL;
	int status = remote ? cli_server_open(&srv, &cl) : backend_open(&c, NULL);
	berth_error *err = NULL;
	if (status)
		goto out;
	if (set) {
		size_t len;
		char *value = read_spec(file ? file : "-", &len);
		if (!value) {
			status = 1;
			goto out;
		}
		/* a value typed at a terminal ends with the newline of its Enter */
		if (!file && len && value[len - 1] == '\n')
			len--;
		if (remote ? berth_client_secret_set(cl, project, name, value, len, &err)
			   : berth_backend_secret_set(c.b, project, name, value, len, &err))
			status = cli_report(err);
		else
			fprintf(stderr, "secret \"%s\" set in project \"%s\"\n", name, project);
		memset(value, 0, len);
		free(value);
	} else if (rm) {
		if (remote ? berth_client_secret_delete(cl, project, name, &err)
			   : berth_backend_secret_delete(c.b, project, name, &err))
			status = cli_report(err);
	} else {
		char **names;
		size_t n;
		if (remote ? berth_client_secret_names(cl, project, &names, &n, &err)
			   : berth_backend_secret_names(c.b, project, &names, &n, &err))
			status = cli_report(err);
		else {
			for (size_t i = 0; i < n; i++) {
				printf("%s\n", names[i]);
				free(names[i]);
			}
			free(names);
		}
	}
out:
	berth_error_free(err);
	berth_client_close(cl);
	backend_close(&c);
	return status;
}

int cmd_supervise(int argc, char **argv)
{
	if (argc != 2 || !getenv("BERTH_HOME"))
		return 2;
	berth_error *err = NULL;
	int rc = berth_local_supervise(getenv("BERTH_HOME"), argv[1], &err);
	berth_error_free(err);
	return rc ? 1 : 0;
}
