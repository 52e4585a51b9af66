/*
 * runs.c - what delete, describe and events share: where they work (a
 * server, or this machine's backend), one run's record, effective spec and
 * events from either, and the events as a table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_target_flag(cli_target *t, int argc, char **argv, int *i)
{
	int r = cli_server_flag(&t->srv, argc, argv, i);
	if (!r)
		r = cli_plan_flag(&t->c.plan, argc, argv, i);
	if (!r)
		r = cli_cluster_flag(&t->c, argc, argv, i);
	return r;
}

int cli_target_open(cli_target *t, const char *verb)
{
	t->remote = cli_server_use(&t->srv, verb, t->c.plan.config ? "--config" : t->c.cluster_flag);
	if (t->remote < 0)
		return 2;
	return t->remote ? cli_server_open(&t->srv, &t->cl) : cli_backend_open(&t->c, NULL);
}

void cli_target_close(cli_target *t)
{
	berth_client_close(t->cl);
	t->cl = NULL;
	cli_backend_close(&t->c);
}

int cli_target_get(cli_target *t, const char *id, berth_run_info **info, berth_error **err)
{
	return t->remote ? berth_client_get(t->cl, id, info, err) : berth_backend_get(t->c.b, id, info, err);
}

int cli_target_events(cli_target *t, const char *id, char **json, size_t *len, berth_error **err)
{
	return t->remote ? berth_client_events(t->cl, id, json, len, err)
			 : berth_run_events(t->c.b, id, BERTH_FORMAT_JSON, json, len, err);
}

/* ---- events --------------------------------------------------------------------------- */

void cli_events_free(cli_events *e)
{
	for (size_t i = 0; i < e->ndocs; i++)
		berth_doc_free(e->docs[i]);
	free(e->docs);
	free(e->rows);
	memset(e, 0, sizeof(*e));
}

/* A string of the map m, "" when it has none. */
static const char *text_of(const berth_node *m, const char *key)
{
	const char *s = berth_node_text(berth_node_get(m, key));
	return s ? s : "";
}

int cli_events_add(cli_events *e, const char *run, const char *json, size_t len, berth_error **err)
{
	berth_doc *doc = NULL;
	if (berth_doc_parse(&doc, "the events", json, len, err) < 0)
		return -1;
	berth_doc **docs = realloc(e->docs, (e->ndocs + 1) * sizeof(*docs));
	if (!docs) {
		berth_doc_free(doc);
		return -1;
	}
	e->docs = docs;
	e->docs[e->ndocs++] = doc;
	/* a list (the library's), or {"items": [...]} (the server's) */
	const berth_node *root = berth_doc_root(doc);
	const berth_node *items = root && root->kind == BERTH_NODE_SEQ ? root : berth_node_get(root, "items");
	if (!items || items->kind != BERTH_NODE_SEQ)
		return 0;
	cli_event *rows = realloc(e->rows, (e->n + items->len + 1) * sizeof(*rows));
	if (!rows)
		return -1;
	e->rows = rows;
	for (size_t i = 0; i < items->len; i++) {
		const berth_node *it = items->u.items[i];
		e->rows[e->n] = (cli_event){run, text_of(it, "time"), text_of(it, "kind"),
					    text_of(it, "message"), e->n};
		e->n++;
	}
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const cli_event *x = a, *y = b;
	/* RFC 3339 times in UTC with milliseconds sort as strings; ties keep the
	 * order they were recorded in */
	int c = strcmp(x->time, y->time);
	return c ? c : (x->index < y->index ? -1 : x->index > y->index);
}

void cli_events_sort(cli_events *e)
{
	if (e->n)
		qsort(e->rows, e->n, sizeof(*e->rows), by_time);
}

void cli_events_print(cli_events *e, bool with_run, const char *indent)
{
	cli_events_sort(e);
	int wr = 3, wt = 4, wk = 4;
	for (size_t i = 0; i < e->n; i++) {
		int r = (int)strlen(e->rows[i].run), t = (int)strlen(e->rows[i].time),
		    k = (int)strlen(e->rows[i].kind);
		wr = r > wr ? r : wr;
		wt = t > wt ? t : wt;
		wk = k > wk ? k : wk;
	}
	if (!e->n) {
		printf("%s(no events)\n", indent);
		return;
	}
	if (with_run)
		printf("%s%-*s  %-*s  %-*s  %s\n", indent, wt, "TIME", wr, "RUN", wk, "KIND", "MESSAGE");
	else
		printf("%s%-*s  %-*s  %s\n", indent, wt, "TIME", wk, "KIND", "MESSAGE");
	for (size_t i = 0; i < e->n; i++) {
		const cli_event *r = &e->rows[i];
		if (with_run)
			printf("%s%-*s  %-*s  %-*s  %s\n", indent, wt, r->time, wr, r->run, wk, r->kind,
			       r->message);
		else
			printf("%s%-*s  %-*s  %s\n", indent, wt, r->time, wk, r->kind, r->message);
	}
}
