/*
 * cmd_get.c - berth get runs, berth get run ID: the runs and their state,
 * as a table, YAML or JSON.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

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
		/* the spelling of the record and of every other face */
		berth_format_cpu(cpu, sizeof(cpu), r->cpu_milli);
		berth_format_bytes(mem, sizeof(mem), r->mem);
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
			r = cli_cluster_flag(&c, argc, argv, &i);
		if (r < 0)
			return 2;
		if (r) {
			if (c.plan.output)
				output = c.plan.output;
			continue;
		}
		if (cli_is_flag(argv[i], "--project")) {
			if (!(project = cli_flag_value("get", argc, argv, &i, "--project")))
				return 2;
		} else if (cli_is_flag(argv[i], "--state")) {
			const char *s = cli_flag_value("get", argc, argv, &i, "--state");
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
	int status = remote ? cli_server_open(&srv, &cl) : cli_backend_open(&c, NULL);
	if (status) {
		cli_backend_close(&c);
		return status;
	}
	berth_error *err = NULL;
	berth_run_info **list = NULL, *single = NULL;
	size_t n = 0;
	int rc;
	berth_run_filter f = {project, state, NULL, 0};
	if (remote)
		rc = one ? berth_client_get(cl, id, &single, &err)
			 : berth_client_list(cl, &f, &list, &n, &err);
	else
		rc = one ? berth_backend_get(c.b, id, &single, &err)
			 : berth_backend_list(c.b, &f, &list, &n, &err);
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
	cli_backend_close(&c);
	return status;
}
