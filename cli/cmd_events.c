/*
 * cmd_events.c - berth events [ID...]: what happened to runs (queued,
 * started, OOM-killed, retried, stopped, a cluster's warnings), oldest
 * first, as the API's events route gives them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char usage_events[] =
	"usage: berth events [ID...] [--project P] [-o table|json]\n"
	"                    [--kubeconfig FILE] [--context NAME]\n"
	"       berth events [ID...] [--project P] [-o table|json] --server URL [--token TOKEN]\n"
	"\n"
	"Shows the events of runs, oldest first: TIME, KIND (Queued, Started, Stopping,\n"
	"Killing, BackOff, OOMKilled, Evicted, a cluster's Warning events, ...) and the\n"
	"message. Without ID, the events of the 20 newest runs (of --project P), with\n"
	"each event's run. -o json prints {\"items\": [...]}: each event's run, time,\n"
	"kind and message.\n"
	"\n"
	CLI_CLUSTER_HELP
	CLI_SERVER_HELP;

const cli_args args_events = {
	.opts = (const cli_opt[]){
		{.name = "--project", .arg = "P"},
		{.name = "--output", .alias = "-o", .arg = "FORMAT", .values = CLI_VALUES("table", "json")},
		CLI_OPT_CONFIG,
		CLI_OPT_CLUSTER,
		CLI_OPT_SERVER,
		{0},
	},
	.arg = CLI_RUN,
};

#define EVENTS_RUNS 20

static void json_str(const char *s)
{
	putchar('"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p < 0x20)
			printf("\\u%04x", *p);
		else
			putchar(*p);
	}
	putchar('"');
}

/* The EVENTS_RUNS newest runs of project (NULL: all) the target sees: a
 * server is asked for that many and no more pages; this machine's store is
 * read as it is (no cluster is asked to bring its records up to date). */
static int newest_runs(cli_target *t, const char *project, berth_run_info ***list, size_t *n,
		       berth_error **err)
{
	berth_run_filter f = {project, -1, NULL, EVENTS_RUNS};
	if (t->remote)
		return berth_client_list(t->cl, &f, list, n, err);
	return berth_run_page(t->c.b, &f.project, project ? 1 : 0, f.state, f.selector, 0, f.limit,
			      list, n, NULL, err);
}

int cmd_events(int argc, char **argv)
{
	cli_target t;
	memset(&t, 0, sizeof(t));
	const char *project = NULL, *output = NULL;
	int nids = 0, status = 0;
	const char **ids = calloc((size_t)argc + EVENTS_RUNS, sizeof(*ids));
	if (!ids) {
		cli_error("out of memory");
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		int r = cli_target_flag(&t, argc, argv, &i);
		if (r < 0)
			goto usage;
		if (r)
			continue;
		if (cli_is_flag(argv[i], "--project")) {
			if (!(project = cli_flag_value("events", argc, argv, &i, "--project")))
				goto usage;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cli_error("events: unknown option \"%s\" (see 'berth help events')", argv[i]);
			goto usage;
		} else
			ids[nids++] = argv[i];
	}
	output = t.c.plan.output; /* table or json (main checked it: args_events) */
	if (nids && project) {
		cli_error("events: --project picks the runs when no ID is given");
		goto usage;
	}
	t.c.plan.output = NULL;
	if ((status = cli_target_open(&t, "events"))) {
		cli_target_close(&t);
		free(ids);
		return status;
	}
	berth_error *err = NULL;
	berth_run_info **list = NULL;
	size_t nlist = 0;
	bool all = !nids;
	if (all && newest_runs(&t, project, &list, &nlist, &err))
		status = cli_report(err);
	for (size_t i = 0; i < nlist && i < EVENTS_RUNS; i++)
		ids[nids++] = list[i]->id;
	cli_events ev;
	memset(&ev, 0, sizeof(ev));
	for (int i = 0; !status && i < nids; i++) {
		char *json = NULL;
		size_t len = 0;
		berth_error *e = NULL;
		if (cli_target_events(&t, ids[i], &json, &len, &e) || cli_events_add(&ev, ids[i], json, len, &e)) {
			status = e ? cli_report(e) : 1;
			status = status ? status : 1;
		}
		free(json);
		berth_error_free(e);
	}
	if (!status && output && !strcmp(output, "json")) {
		cli_events_sort(&ev);
		printf("{\"items\": [");
		for (size_t i = 0; i < ev.n; i++) {
			const cli_event *r = &ev.rows[i];
			printf("%s\n  {\"run\": ", i ? "," : "");
			json_str(r->run);
			printf(", \"time\": ");
			json_str(r->time);
			printf(", \"kind\": ");
			json_str(r->kind);
			printf(", \"message\": ");
			json_str(r->message);
			printf("}");
		}
		printf("%s]}\n", ev.n ? "\n" : "");
	} else if (!status)
		cli_events_print(&ev, nids > 1 || all, "");
	cli_events_free(&ev);
	berth_run_info_list_free(list, nlist);
	berth_error_free(err);
	cli_target_close(&t);
	free(ids);
	return status;
usage:
	cli_plan_release(&t.c.plan);
	free(ids);
	return 2;
}
