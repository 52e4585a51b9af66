/*
 * cmd_cluster.c - berth cluster check: whether the cluster of the kubeconfig
 * has what the policy names, before a run finds out; berth cluster setup:
 * makes it, as an admin (or prints it, with --dry-run).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char usage_cluster[] =
	"usage: berth cluster check [--config FILE] [--kubeconfig FILE] [--context NAME]\n"
	"       berth cluster setup [--dry-run] [--config FILE] [--kubeconfig FILE] [--context NAME]\n"
	"\n"
	"check: checks the cluster that runs with --backend kubernetes go to against\n"
	"the policy: the namespace, each PriorityClass its priority_classes name, the\n"
	"storage class, a node that offers the GPU resources, and every right berth\n"
	"uses in the namespace (asked with SelfSubjectAccessReview, as the identity of\n"
	"the kubeconfig). Prints a line per check: ok, missing (with what fixes it),\n"
	"unknown (what could not be asked) or note. Exit status 0 when nothing is\n"
	"missing, 1 otherwise.\n"
	"\n"
	"setup: makes what the policy needs on that cluster, as an admin does once\n"
	"before users run: the PriorityClasses of priority_classes, the policy's\n"
	"namespace, berth's ServiceAccount (namespace berth) and its Role there; for a\n"
	"namespace per project ({project}), the ClusterRoles to make namespaces and to\n"
	"run in them, and the namespace, ResourceQuota and LimitRange of each project\n"
	"that quotas names. Each object is applied with server-side apply\n"
	"(fieldManager berth), and a line says what became of it: created, configured\n"
	"or unchanged. The first object the API refuses stops it, with the API's words\n"
	"and exit status 1.\n"
	"\n"
	"  --dry-run        print the objects instead, as YAML for kubectl apply -f -,\n"
	"                   each after a comment that says why; asks the cluster nothing\n"
	"  --config FILE    the platform policy (default: $BERTH_CONFIG, else built-in)\n"
	CLI_CLUSTER_HELP;

const cli_args args_cluster = {
	.opts = (const cli_opt[]){
		{.name = "--dry-run"},
		CLI_OPT_CONFIG,
		CLI_OPT_CLUSTER,
		{0},
	},
	.words = (const cli_word[]){{"check", CLI_ANY}, {"setup", CLI_ANY}, {NULL, CLI_ANY}},
};

/* check: its report, and the exit status. */
static int check(cli_backend *c)
{
	berth_error *err = NULL;
	char *report = NULL;
	int status;
	int problems = berth_backend_check(c->b, &report, &err);
	if (problems < 0)
		status = cli_report(err);
	else {
		fputs(report, stdout);
		/* a check that could ask nothing (an unreachable cluster) is no "ready" */
		int ok = 0, unknown = 0;
		for (const char *l = report; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
			ok += !strncmp(l, "ok ", 3);
			unknown += !strncmp(l, "unknown ", 8);
		}
		printf("%d missing%s\n", problems, unknown && !ok ? ", nothing could be asked" : "");
		status = problems || (unknown && !ok) ? 1 : 0;
	}
	free(report);
	berth_error_free(err);
	return status;
}

/* setup: what was applied (or the objects), then the refusal, if any. */
static int setup(cli_backend *c, bool dry_run)
{
	berth_error *err = NULL;
	char *out = NULL;
	int rc = berth_backend_setup(c->b, dry_run, &out, &err);
	if (out)
		fputs(out, stdout);
	fflush(stdout);
	if (rc)
		cli_report(err);
	free(out);
	berth_error_free(err);
	return rc ? 1 : 0;
}

int cmd_cluster(int argc, char **argv)
{
	cli_backend c;
	memset(&c, 0, sizeof(c));
	bool is_setup = argc >= 2 && !strcmp(argv[1], "setup"), dry_run = false;
	if (argc < 2 || (strcmp(argv[1], "check") && !is_setup)) {
		cli_error("cluster: say 'cluster check' or 'cluster setup' (see 'berth help cluster')");
		fputs(usage_cluster, stderr);
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		if (is_setup && !strcmp(argv[i], "--dry-run")) {
			dry_run = true;
			continue;
		}
		int r = cli_plan_flag(&c.plan, argc, argv, &i);
		if (!r)
			r = cli_cluster_flag(&c, argc, argv, &i);
		if (r < 0)
			return 2;
		if (!r) {
			cli_error("cluster: unknown option \"%s\" (see 'berth help cluster')", argv[i]);
			return 2;
		}
	}
	int status = cli_backend_open(&c, "kubernetes");
	if (!status)
		status = is_setup ? setup(&c, dry_run) : check(&c);
	cli_backend_close(&c);
	return status;
}
