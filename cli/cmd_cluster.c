/*
 * cmd_cluster.c - berth cluster check: whether the cluster of the kubeconfig
 * has what the policy names, before a run finds out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char usage_cluster[] =
	"usage: berth cluster check [--config FILE] [--kubeconfig FILE] [--context NAME]\n"
	"\n"
	"Checks the cluster that runs with --backend kubernetes go to against the\n"
	"policy: the namespace, each PriorityClass its priority_classes name, the\n"
	"storage class, a node that offers the GPU resources, and every right berth\n"
	"uses in the namespace (asked with SelfSubjectAccessReview, as the identity of\n"
	"the kubeconfig). Prints a line per check: ok, missing (with what fixes it),\n"
	"unknown (what could not be asked) or note. Exit status 0 when nothing is\n"
	"missing, 1 otherwise.\n"
	"\n"
	"  --config FILE    the platform policy (default: $BERTH_CONFIG, else built-in)\n"
	CLI_CLUSTER_HELP;

int cmd_cluster(int argc, char **argv)
{
	cli_backend c;
	memset(&c, 0, sizeof(c));
	if (argc < 2 || strcmp(argv[1], "check")) {
		cli_error("cluster: say 'cluster check' (see 'berth help cluster')");
		fputs(usage_cluster, stderr);
		return 2;
	}
	for (int i = 2; i < argc; i++) {
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
	if (status) {
		cli_backend_close(&c);
		return status;
	}
	berth_error *err = NULL;
	char *report = NULL;
	int problems = berth_backend_check(c.b, &report, &err);
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
	cli_backend_close(&c);
	return status;
}
