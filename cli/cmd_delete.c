/*
 * cmd_delete.c - berth delete [run] ID...: forgets ended runs (their record,
 * events, log and what is left of them), as kubectl delete does; a run that
 * has not ended is refused unless --force stops it first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char usage_delete[] =
	"usage: berth delete [run] ID... [--force] [--grace SECONDS] [--kubeconfig FILE]\n"
	"                    [--context NAME]\n"
	"       berth delete [run] ID... [--force] [--grace SECONDS] --server URL [--token TOKEN]\n"
	"\n"
	"Forgets runs that have ended: their record, events and log on this machine (or\n"
	"the server), and what is left of them on a Kubernetes cluster. A run that is\n"
	"Pending or Running is refused and left as it is, unless --force: then it is\n"
	"stopped first (as 'berth stop' does: SIGTERM, SIGKILL after the grace period)\n"
	"and deleted once it has ended. Says what it did for each run; the others go on\n"
	"when one fails.\n"
	"\n"
	"  --force          stop a run that has not ended, then delete it\n"
	"  --grace SECONDS  with --force: between SIGTERM and SIGKILL (default: the\n"
	"                   policy's local.grace_period, else 30 s)\n"
	"\n"
	CLI_CLUSTER_HELP
	CLI_SERVER_HELP
	"\n"
	"exit status: 0 every run deleted, 1 a run could not be deleted (it has not\n"
	"ended and no --force was given, ...), 2 a flag is wrong or a run does not exist.\n";

const cli_args args_delete = {
	.opts = (const cli_opt[]){
		{.name = "--force"},
		{.name = "--grace", .arg = "SECONDS"},
		CLI_OPT_CONFIG,
		CLI_OPT_CLUSTER,
		CLI_OPT_SERVER,
		{0},
	},
	.arg = CLI_RUN, /* "run" first too, as kubectl's "delete job NAME" */
};

/* Deletes one run; its line on standard output, or its problem on standard
 * error; an exit status. */
static int delete_one(cli_target *t, const char *id, bool force, int grace)
{
	berth_error *err = NULL;
	berth_run_info *info = NULL;
	int rc = cli_target_get(t, id, &info, &err), status = 0;
	bool stopped = false;
	if (!rc && !berth_state_final(info->state)) {
		if (!force) {
			cli_error("delete: run \"%s\" is %s: stop it first ('berth stop %s'), or give "
				  "--force to stop it and delete it", id, berth_state_name(info->state), id);
			berth_run_info_free(info);
			return 1;
		}
		rc = t->remote ? berth_client_stop(t->cl, id, grace, true, &err)
			       : berth_backend_stop(t->c.b, id, grace, &err);
		stopped = !rc;
	}
	if (!rc)
		rc = t->remote ? berth_client_delete(t->cl, id, &err) : berth_run_delete(t->c.b, id, &err);
	if (rc)
		status = cli_report(err);
	else
		printf("run %s (%s) %sdeleted\n", id, info->name, stopped ? "stopped and " : "");
	status = rc && !status ? 1 : status;
	berth_run_info_free(info);
	berth_error_free(err);
	return status;
}

int cmd_delete(int argc, char **argv)
{
	cli_target t;
	memset(&t, 0, sizeof(t));
	bool force = false;
	int grace = -1, nids = 0, first = 1;
	const char **ids = calloc((size_t)argc, sizeof(*ids));
	if (!ids) {
		cli_error("out of memory");
		return 1;
	}
	/* kubectl's spelling: delete run ID (runs too) */
	if (argc > 1 && (!strcmp(argv[1], "run") || !strcmp(argv[1], "runs")))
		first = 2;
	for (int i = first; i < argc; i++) {
		int r = cli_target_flag(&t, argc, argv, &i);
		if (!r)
			r = cli_grace_flag("delete", argc, argv, &i, &grace);
		if (r < 0)
			goto usage;
		if (r)
			continue;
		if (!strcmp(argv[i], "--force"))
			force = true;
		else if (argv[i][0] == '-' && argv[i][1]) {
			cli_error("delete: unknown option \"%s\" (see 'berth help delete')", argv[i]);
			goto usage;
		} else
			ids[nids++] = argv[i];
	}
	if (!nids) {
		cli_error("delete: no run id given (berth delete run ID...)");
		goto usage;
	}
	if (grace >= 0 && !force) {
		cli_error("delete: --grace is for --force, which stops a run before it is deleted");
		goto usage;
	}
	int status = cli_target_open(&t, "delete");
	/* one that fails does not stop the others: the worst status is the command's */
	for (int i = 0, open = !status; open && i < nids; i++) {
		int st = delete_one(&t, ids[i], force, grace);
		status = st > status ? st : status;
	}
	cli_target_close(&t);
	free(ids);
	return status;
usage:
	cli_plan_release(&t.c.plan);
	free(ids);
	return 2;
}
