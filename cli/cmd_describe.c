/*
 * cmd_describe.c - berth describe [run] ID: everything about a run on one
 * page, as kubectl describe gives it: what it is, its state and why, its
 * resources with where each value came from, the rest of its effective
 * spec, its workers, its events, and where its log is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char usage_describe[] =
	"usage: berth describe [run] ID [--kubeconfig FILE] [--context NAME]\n"
	"       berth describe [run] ID --server URL [--token TOKEN]\n"
	"\n"
	"Shows one run on one page: its name, project, backend, image, profile and\n"
	"priority; its state, the reason it waits or failed, its times, exit code or\n"
	"signal, OOM kill, attempts and usage; a distributed job's workers and the\n"
	"state of each; its resources (requests and limits) and the rest of its\n"
	"effective spec, each value with where it came from (built-in, policy\n"
	"default, function, run spec, profile, policy rule: 'berth explain'); its\n"
	"events, oldest first ('berth events'); and where its log is ('berth logs').\n"
	"The record as data: 'berth get run ID -o json'.\n"
	"\n"
	CLI_CLUSTER_HELP
	CLI_SERVER_HELP;

const cli_args args_describe = {
	.opts = (const cli_opt[]){
		CLI_OPT_CONFIG,
		CLI_OPT_CLUSTER,
		CLI_OPT_SERVER,
		{0},
	},
	.arg = CLI_RUN, /* "run" first too */
};

static void line(const char *key, const char *value)
{
	if (value && *value)
		printf("%-13s %s\n", key, value);
}

static void time_line(const char *key, int64_t ms)
{
	char t[48];
	if (!ms)
		return;
	berth_format_time(t, sizeof(t), ms);
	line(key, t);
}

/* What the record says. */
static void record(const berth_run_info *r, bool remote)
{
	char buf[512];
	line("Name:", r->name);
	line("ID:", r->id);
	line("Project:", r->project);
	line("Backend:", r->backend);
	line("Action:", r->action);
	line("Image:", r->image);
	line("Profile:", r->profile ? r->profile : "(none)");
	if (r->priority_class) {
		snprintf(buf, sizeof(buf), "%s (%lld)", r->priority_class, (long long)r->priority);
		line("Priority:", buf);
	}
	line("State:", berth_state_name(r->state));
	line("Reason:", r->reason);
	time_line("Created:", r->created);
	time_line("Started:", r->started);
	time_line("Finished:", r->finished);
	if (r->exit_code >= 0) {
		snprintf(buf, sizeof(buf), "%d", r->exit_code);
		line("Exit code:", buf);
	}
	if (r->signal) {
		snprintf(buf, sizeof(buf), "%d", r->signal);
		line("Signal:", buf);
	}
	if (r->oom_killed)
		line("OOM killed:", "yes: a process went over the memory limit");
	if (r->attempts) {
		snprintf(buf, sizeof(buf), "%d", r->attempts);
		line("Attempts:", buf);
	}
	char cpu[32], mem[32], disk[32];
	berth_format_cpu(cpu, sizeof(cpu), r->cpu_milli);
	berth_format_bytes(mem, sizeof(mem), r->mem);
	berth_format_bytes(disk, sizeof(disk), r->disk);
	snprintf(buf, sizeof(buf), "cpu %s, mem %s, gpu %lld, disk %s%s", cpu, mem, (long long)r->gpus, disk,
		 r->workers > 1 ? " (every worker's together)" : "");
	line("Requests:", buf);
	if (r->cpu_limit_milli || r->mem_limit) {
		berth_format_cpu(cpu, sizeof(cpu), r->cpu_limit_milli);
		berth_format_bytes(mem, sizeof(mem), r->mem_limit);
		snprintf(buf, sizeof(buf), "cpu %s, mem %s", r->cpu_limit_milli ? cpu : "none",
			 r->mem_limit ? mem : "none");
		line("Limits:", buf);
	}
	if (r->gpu_ids)
		line("GPUs:", r->gpu_ids);
	line("Enforcement:", r->enforcement);
	if (r->cpu_usage_ns || r->mem_peak) {
		berth_format_bytes(mem, sizeof(mem), r->mem_peak);
		snprintf(buf, sizeof(buf), "%lld.%03lld s of CPU, memory peak %s",
			 (long long)(r->cpu_usage_ns / 1000000000), (long long)(r->cpu_usage_ns / 1000000 % 1000),
			 mem);
		line("Usage:", buf);
	}
	line("Target:", r->target);
	if (r->workers > 1) {
		/* a distributed job: each worker's state, by index */
		printf("%-13s %lld, started together\n", "Workers:", (long long)r->workers);
		const char *p = r->worker_states;
		for (int64_t i = 0; p && *p && i < r->workers; i++) {
			size_t n = strcspn(p, ",");
			printf("  worker %lld: %.*s\n", (long long)i, (int)n, p);
			p += n + (p[n] == ',');
		}
	}
	if (r->log_path)
		snprintf(buf, sizeof(buf), "%s%s ('berth logs %s'%s)", r->log_path, remote ? " on the server" : "",
			 r->id, r->workers > 1 ? "; --rank N: worker N's" : "");
	else
		snprintf(buf, sizeof(buf), "'berth logs %s'%s", r->id,
			 r->target ? ": its newest pod's, through the cluster's API" : "");
	line("Log:", buf);
}

/* The rows of the effective spec (berth explain -o json) whose path starts
 * with prefix (resources: "resources."), or, with !match, the others. */
static void fields(const berth_node *list, const char *prefix, bool match)
{
	size_t w = 5, wv = 5, n = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; list && i < list->len; i++) {
			const berth_node *f = list->u.items[i];
			const char *path = berth_node_text(berth_node_get(f, "path")),
				   *value = berth_node_text(berth_node_get(f, "value")),
				   *origin = berth_node_text(berth_node_get(f, "origin")),
				   *at = berth_node_text(berth_node_get(f, "at")),
				   *note = berth_node_text(berth_node_get(f, "note"));
			if (!path || !value || (!strncmp(path, prefix, strlen(prefix))) != match)
				continue;
			if (!pass) {
				w = strlen(path) > w ? strlen(path) : w;
				wv = strlen(value) > wv ? strlen(value) : wv;
				n++;
				continue;
			}
			printf("  %-*s  %-*s  %s", (int)w, path, (int)(wv > 40 ? 40 : wv), value,
			       origin ? origin : "");
			if (at)
				printf(" (%s)", at);
			if (note)
				printf(": %s", note);
			putchar('\n');
		}
		if (!pass && n)
			printf("  %-*s  %-*s  %s\n", (int)w, "FIELD", (int)(wv > 40 ? 40 : wv), "VALUE", "ORIGIN");
	}
	if (!n)
		printf("  (none recorded)\n");
}

static void spec(const char *json, size_t len)
{
	berth_doc *doc = NULL;
	berth_error *err = NULL;
	const berth_node *list = NULL;
	if (json && berth_doc_parse(&doc, "the effective spec", json, len, &err) == 0)
		list = berth_node_get(berth_doc_root(doc), "fields");
	if (list && list->kind != BERTH_NODE_SEQ)
		list = NULL;
	printf("\nResources (each value, and where it came from):\n");
	fields(list, "resources.", true);
	printf("\nSpec (the rest of the effective spec: 'berth explain'):\n");
	fields(list, "resources.", false);
	berth_doc_free(doc);
	berth_error_free(err);
}

int cmd_describe(int argc, char **argv)
{
	cli_target t;
	memset(&t, 0, sizeof(t));
	const char *id = NULL;
	int first = argc > 1 && (!strcmp(argv[1], "run") || !strcmp(argv[1], "runs")) ? 2 : 1;
	for (int i = first; i < argc; i++) {
		int r = cli_target_flag(&t, argc, argv, &i);
		if (r < 0)
			goto usage;
		if (r)
			continue;
		if (argv[i][0] == '-' && argv[i][1]) {
			cli_error("describe: unknown option \"%s\" (see 'berth help describe')", argv[i]);
			goto usage;
		}
		if (id) {
			cli_error("describe: one run at a time");
			goto usage;
		}
		id = argv[i];
	}
	if (!id) {
		cli_error("describe: no run id given (berth describe run ID)");
		goto usage;
	}
	int status = cli_target_open(&t, "describe");
	berth_error *err = NULL;
	berth_run_info *info = NULL;
	char *effective = NULL, *events = NULL;
	size_t elen = 0, evlen = 0;
	if (!status && cli_target_get(&t, id, &info, &err))
		status = cli_report(err);
	if (!status && t.remote && berth_client_spec(t.cl, id, &effective, &elen, &err))
		status = cli_report(err); /* the record without the spec is half the page */
	if (!status && !t.remote && info->effective) {
		effective = strdup(info->effective);
		elen = effective ? strlen(effective) : 0;
	}
	if (!status && cli_target_events(&t, id, &events, &evlen, &err))
		status = cli_report(err);
	if (!status) {
		record(info, t.remote);
		spec(effective, elen);
		cli_events ev;
		memset(&ev, 0, sizeof(ev));
		printf("\nEvents:\n");
		if (cli_events_add(&ev, id, events, evlen, NULL) == 0)
			cli_events_print(&ev, false, "  ");
		else
			printf("  (unreadable)\n");
		cli_events_free(&ev);
	}
	free(effective);
	free(events);
	berth_run_info_free(info);
	berth_error_free(err);
	cli_target_close(&t);
	return status;
usage:
	cli_plan_release(&t.c.plan);
	return 2;
}
