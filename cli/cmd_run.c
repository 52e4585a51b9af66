/*
 * cmd_run.c - berth run: plans the runs of a spec and starts them on a
 * backend (the local machine by default), or sends the spec to a server.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pwd.h>
#include <unistd.h>

#include "cli.h"

const char usage_run[] =
	"usage: berth run SPEC|- [--config POLICY] [--backend local|kubernetes] [--run-id ID]\n"
	"                 [--kubeconfig FILE] [--context NAME] [--dry-run[=client|server]]\n"
	"                 [--project P] [--wait] [--follow]\n"
	"       berth run SPEC|- --server URL [--token TOKEN] [--project P] [--dry-run]\n"
	"                 [--wait] [--follow]\n"
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
	"problems are printed as local ones are. --dry-run asks the server to check it\n"
	"as it would run it (its policy, the project's secrets and quota, what its\n"
	"backend needs) and creates nothing.\n"
	"\n"
	"  --config POLICY  the platform policy (default: $BERTH_CONFIG, then\n"
	"                   /etc/berth/config.yaml, else built-in defaults)\n"
	"  --backend KIND   where to run: local (default), or kubernetes: the objects\n"
	"                   'berth render' prints are applied to the cluster of the\n"
	"                   kubeconfig (docs/kubernetes.md)\n"
	"  --kubeconfig FILE, --context NAME\n"
	"                   the cluster (default: $KUBECONFIG, ~/.kube/config and its\n"
	"                   current context, else the pod's service account)\n"
	"  --dry-run[=client] plans and checks each run as it would be submitted (the\n"
	"                   policy, the project's secrets and quota, what the backend\n"
	"                   needs: a command and this machine's capacity on the local\n"
	"                   backend, an image on Kubernetes); nothing is created\n"
	"  --dry-run=server the API server validates every object; nothing is created\n"
	"  --run-id ID      the run id (default: random)\n"
	"  --project P      the project of every run: a spec that names another one is\n"
	"                   refused (default: each spec's own, else \"default\")\n"
	"  --wait           wait until the runs end\n"
	"  --follow, -f     print the log while it runs, then wait (one run)\n"
	CLI_SERVER_HELP
	"\n"
	"exit status: 0 started (with --wait: succeeded), 2 a spec, the policy or a\n"
	"flag is invalid or a run is refused, 1 anything else (with --wait: a run\n"
	"did not succeed).\n";

const cli_args args_run = {
	.opts = (const cli_opt[]){
		CLI_OPT_CONFIG,
		CLI_OPT_BACKEND,
		CLI_OPT_CLUSTER,
		{.name = "--dry-run", .arg = "MODE", .values = CLI_VALUES("client", "server"),
		 .flags = CLI_EQ},
		{.name = "--run-id", .arg = "ID"},
		{.name = "--wait"},
		{.name = "--follow", .alias = "-f"},
		{.name = "--project", .arg = "P"},
		CLI_OPT_SERVER,
		{0},
	},
	.arg = CLI_FILE,
};

/* --follow: the run's whole log, until it ends */
static const berth_log_opts follow_all = {.rank = -1, .follow = true};

/* ---- against a server -------------------------------------------------------------- */

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
		cli_pause_ms(delay);
	}
}

/* berth run with a server: the spec goes as written; the server plans it. */
static int run_remote(const cli_server *s, const char *project, const char *name, const char *text,
		      size_t len, int wait, int follow)
{
	berth_client *c = NULL;
	berth_run_info **runs = NULL;
	berth_error *err = NULL;
	size_t n = 0;
	int status = cli_server_open(s, &c);
	if (status)
		return status;
	if (berth_client_submit(c, project, name, text, len, &runs, &n, &err)) {
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
		cli_say_state(runs[i]);
	}
	if (!wait && !follow)
		goto out;
	if (follow && n != 1)
		cli_error("run: --follow follows one run; the server started %zu: waiting for them "
			  "instead", n);
	else if (follow && berth_client_logs(c, runs[0]->id, &follow_all, cli_print_chunk, NULL, &err)) {
		status = cli_report(err);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		berth_run_info *info = NULL;
		if (remote_wait(c, runs[i]->id, &info, &err)) {
			status = cli_report(err);
			goto out;
		}
		cli_say_state(info);
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
	cli_server srv = {0};
	memset(&c, 0, sizeof(c));
	const char *path = NULL, *kind = NULL, *backend_flag = NULL, *dry_run = NULL, *project = NULL;
	int wait = 0, follow = 0, status = 2;
	for (int i = 1; i < argc; i++) {
		int r = cli_plan_flag(&c.plan, argc, argv, &i);
		if (!r)
			r = cli_server_flag(&srv, argc, argv, &i);
		if (!r)
			r = cli_cluster_flag(&c, argc, argv, &i);
		if (r < 0)
			return 2;
		if (r)
			continue;
		if (!strcmp(argv[i], "--wait"))
			wait = 1;
		else if (!strcmp(argv[i], "--follow") || !strcmp(argv[i], "-f"))
			follow = 1;
		else if (cli_is_flag(argv[i], "--project")) {
			if (!(project = cli_flag_value("run", argc, argv, &i, "--project")))
				return 2;
		} else if (cli_is_flag(argv[i], "--backend")) {
			if (!(kind = cli_flag_value("run", argc, argv, &i, "--backend")))
				return 2;
			backend_flag = "--backend";
		} else if (cli_is_flag(argv[i], "--dry-run")) {
			/* client or server (main checked it: args_run) */
			dry_run = argv[i][9] == '=' ? argv[i] + 10 : "client";
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cli_error("run: unknown option \"%s\" (see 'berth help run')", argv[i]);
			return 2;
		} else if (path) {
			cli_error("run: one spec file at a time (use '-' and a stream for several runs)");
			return 2;
		} else
			path = argv[i];
	}
	if (!path) {
		cli_error("run: no spec given (use '-' for standard input)");
		return 2;
	}
	/* --dry-run (=client) asks a server too; =server asks a cluster's API server */
	int remote = cli_server_use(&srv, "run", c.plan.config ? "--config"
					       : backend_flag ? backend_flag
					       : dry_run && !strcmp(dry_run, "server") ? "--dry-run=server"
					       : c.cluster_flag);
	if (remote > 0 && c.plan.run_id) {
		cli_error("run: --run-id is not an option with a server, which picks run ids");
		remote = -1;
	}
	if (remote < 0) {
		cli_plan_release(&c.plan);
		return 2;
	}
	size_t len;
	char *text = cli_read_file(path, &len);
	if (!text)
		return 1;
	if (remote) {
		const char *name = strcmp(path, "-") ? path : "<stdin>";
		cli_check k = {CLI_CHECK_DRY_RUN, project, BERTH_EXPLAIN_TABLE, false};
		status = dry_run ? cli_server_check(&srv, &k, name, text, len)
				 : run_remote(&srv, project, name, text, len, wait, follow);
		free(text);
		cli_plan_release(&c.plan);
		return status;
	}
	berth_error *err = NULL;
	berth_batch *batch = NULL;
	berth_run_info **infos = NULL;
	size_t n = 0;
	c.waits = wait || follow;
	if ((status = cli_backend_open(&c, kind)))
		goto out;
	/* every run is planned, and checked against this machine, before any starts */
	/* who submits, kept with each run: this command's Unix user */
	char who[300];
	const struct passwd *pw = getpwuid(getuid());
	if (pw && pw->pw_name)
		snprintf(who, sizeof(who), "user:%s", pw->pw_name);
	else
		snprintf(who, sizeof(who), "user:%u", (unsigned)getuid());
	berth_batch_opts bo = {.file = strcmp(path, "-") ? path : "<stdin>", .run_id = c.plan.run_id,
			       .project = project, .submitted_by = who};
	int ret = berth_batch_plan(&batch, c.b, text, len, &bo, &err);
	if (dry_run && !strcmp(dry_run, "client")) {
		/* planned and checked as a submission would be; nothing is stored */
		status = cli_report(err);
		if (!ret) {
			size_t nr = berth_batch_count(batch);
			printf("%s: valid (%zu run%s) for the %s backend; nothing was created\n",
			       bo.file, nr, nr == 1 ? "" : "s", kind ? kind : "local");
			status = 0;
		} else
			status = status ? status : 1;
		goto out;
	}
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
		cli_say_state(infos[i]);
	}
	if (!wait && !follow)
		goto out;
	berth_error_free(err);
	err = NULL;
	if (follow && berth_backend_logs(c.b, infos[0]->id, &follow_all, cli_print_chunk, NULL, &err)) {
		status = cli_report(err);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		berth_run_info *info = NULL;
		if (berth_backend_wait(c.b, infos[i]->id, -1, &info, &err)) {
			status = cli_report(err);
			goto out;
		}
		cli_say_state(info);
		if (info->state != BERTH_STATE_SUCCEEDED)
			status = 1;
		berth_run_info_free(info);
	}
out:
	berth_error_free(err);
	berth_run_info_list_free(infos, n);
	berth_batch_free(batch);
	free(text);
	cli_backend_close(&c);
	return status;
}
