/*
 * cmd_get.c - berth get runs, berth get run ID: the runs and their state,
 * as a table (columns as wide as what they hold), YAML, JSON or their ids;
 * selected by project, state and labels, sorted, cut; with --watch, then
 * each change as it happens, as kubectl get -w does.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

const char usage_get[] =
	"usage: berth get runs [-l SELECTOR] [--project P] [--state STATE] [--sort-by KEY]\n"
	"                      [--limit N] [-w] [-o table|yaml|json|name]\n"
	"       berth get run ID [-w] [-o yaml|json|name]\n"
	"\n"
	"Shows runs: state (with the reason a run waits or failed), profile, requests,\n"
	"age; for one run also its labels, limits, GPUs, exit code or signal, OOM kill,\n"
	"attempts, usage measured by its cgroup, and its log file. With a server: the\n"
	"runs of every project the token sees (or of --project). Unfinished runs on a\n"
	"Kubernetes cluster are read from the cluster first.\n"
	"\n"
	"  -l, --selector SELECTOR\n"
	"                   runs whose labels it selects, as kubectl's: key=value,\n"
	"                   key!=value (also runs without the label), key, !key;\n"
	"                   terms joined by ',' must all hold\n"
	"  --project P      runs of project P\n"
	"  --state STATE    runs in STATE: Pending, Running, Succeeded, Failed, Stopped\n"
	"  --sort-by KEY    name, id, project, state (Pending to Stopped), profile,\n"
	"                   age (newest first), created (oldest first), cpu, mem, gpu\n"
	"                   or priority (the most first); default: newest first\n"
	"  --limit N        the first N runs (the newest N, or the first N of --sort-by)\n"
	"  -w, --watch      after the list, a line for each run that starts, changes\n"
	"                   state or reason, or is new, as it happens; until Ctrl-C\n"
	"  -o FORMAT        table (default for runs), yaml (default for one run), json,\n"
	"                   or name: the ids alone, one a line\n"
	"\n"
	"The table's columns are as wide as what they hold; STATE is in colour on a\n"
	"terminal, unless $NO_COLOR is set.\n"
	"\n"
	CLI_CLUSTER_HELP
	CLI_SERVER_HELP;

static const char *const states[] = {"Pending", "Running", "Succeeded", "Failed", "Stopped", NULL};
static const char *const sort_keys[] = {"name", "id", "project", "state", "profile", "age",
					 "created", "cpu", "mem", "gpu", "priority", NULL};

const cli_args args_get = {
	.opts = (const cli_opt[]){
		{.name = "--output", .alias = "-o", .arg = "FORMAT",
		 .values = CLI_VALUES("table", "yaml", "json", "name")},
		{.name = "--project", .arg = "P"},
		{.name = "--state", .arg = "STATE", .values = states, .flags = CLI_ICASE},
		{.name = "--selector", .alias = "-l", .arg = "SELECTOR"},
		{.name = "--sort-by", .arg = "KEY", .values = sort_keys},
		{.name = "--limit", .arg = "N"},
		{.name = "--watch", .alias = "-w"},
		CLI_OPT_CONFIG,
		CLI_OPT_CLUSTER,
		CLI_OPT_SERVER,
		{0},
	},
	.words = (const cli_word[]){{"runs", CLI_ANY}, {"run", CLI_RUN}, {NULL, CLI_ANY}},
};

/* ---- where the runs are read ----------------------------------------------------------- */

typedef struct source {
	berth_client *cl;  /* a server's, or NULL */
	cli_backend c;     /* else this machine's */
	bool open;
} source;

/* Opens what srv says (a server) or this machine's store; an exit status. */
static int source_open(source *s, cli_server *srv)
{
	int remote = cli_server_use(srv, "get", s->c.plan.config ? "--config" : s->c.cluster_flag);
	if (remote < 0)
		return 2;
	int status = remote ? cli_server_open(srv, &s->cl) : cli_backend_open(&s->c, NULL);
	s->open = status == 0;
	return status;
}

static void source_close(source *s)
{
	berth_client_close(s->cl);
	cli_backend_close(&s->c);
}

static int source_list(source *s, const berth_run_filter *f, berth_run_info ***out, size_t *n,
		       berth_error **err)
{
	return s->cl ? berth_client_list(s->cl, f, out, n, err) : berth_backend_list(s->c.b, f, out, n, err);
}

/* Waits until a run may have changed after version *rv (the store's, or
 * the server's watch; *rv < 0: reads the version now), a while at most. */
static int source_wait(source *s, const char *project, int64_t *rv, berth_error **err)
{
	if (s->cl)
		return berth_client_watch(s->cl, project, rv, 30, err);
	/* this machine: the store's version, a small read four times a second */
	for (int i = 0; i < 120; i++) {
		int64_t now;
		int rc = berth_run_version(s->c.b, &now, err);
		if (rc || *rv < 0 || now != *rv) {
			*rv = rc ? *rv : now;
			return rc;
		}
		cli_pause_ms(250);
	}
	return 0;
}

static int source_get(source *s, const char *id, berth_run_info **out, berth_error **err)
{
	return s->cl ? berth_client_get(s->cl, id, out, err) : berth_backend_get(s->c.b, id, out, err);
}

int cli_list_runs(cli_server *srv, const berth_run_filter *f, berth_run_info ***out, size_t *n)
{
	source s;
	berth_error *err = NULL;
	memset(&s, 0, sizeof(s));
	s.c.passive = true;
	*out = NULL;
	*n = 0;
	int status = source_open(&s, srv);
	if (!status && source_list(&s, f, out, n, &err))
		status = cli_report(err);
	berth_error_free(err);
	source_close(&s);
	return status;
}

/* ---- the table ------------------------------------------------------------------------- */

enum { C_ID, C_NAME, C_STATE, C_PROFILE, C_CPU, C_MEM, C_GPU, C_AGE, C_REASON, NCOLS };
static const char *const heads[NCOLS] = {"ID", "NAME", "STATE", "PROFILE", "CPU", "MEM", "GPU",
					  "AGE", "REASON"};
#define CELL 48 /* a cell of its own (a name, an id, a reason are printed whole) */

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

/* The short cells of r (id, name, state and reason are r's own strings). */
typedef struct row {
	const char *cell[NCOLS];
	char cpu[32], mem[32], gpu[24], age[24];
} row;

static void row_of(row *w, const berth_run_info *r)
{
	/* the spelling of the record and of every other face */
	berth_format_cpu(w->cpu, sizeof(w->cpu), r->cpu_milli);
	berth_format_bytes(w->mem, sizeof(w->mem), r->mem);
	snprintf(w->gpu, sizeof(w->gpu), "%lld", (long long)r->gpus);
	age(w->age, sizeof(w->age), r->created);
	const char *cells[NCOLS] = {r->id, r->name, berth_state_name(r->state),
				    r->profile ? r->profile : "-", w->cpu, w->mem, w->gpu, w->age,
				    r->reason ? r->reason : ""};
	memcpy(w->cell, cells, sizeof(cells));
}

/* One line: each cell padded to its column's width, three spaces apart, as
 * kubectl's; nothing after the last cell that holds something. */
static void print_row(const char *const *cell, const size_t *width, berth_state state, bool color)
{
	int last = NCOLS - 1;
	while (last > 0 && !*cell[last])
		last--;
	for (int k = 0; k <= last; k++) {
		size_t n = strlen(cell[k]);
		if (k == C_STATE && color && state != (berth_state)-1)
			printf("%s%s%s", cli_state_color(state), cell[k], CLI_COLOR_END);
		else
			fputs(cell[k], stdout);
		if (k < last)
			printf("%*s", (int)((width[k] > n ? width[k] - n : 0) + 3), "");
	}
	putchar('\n');
}

/* The header and the rows; width receives the columns' widths (for the
 * lines of a watch). */
static void table(berth_run_info *const *list, size_t n, size_t *width)
{
	bool color = cli_color(stdout);
	for (int k = 0; k < NCOLS; k++)
		width[k] = strlen(heads[k]);
	for (size_t i = 0; i < n; i++) {
		row w;
		row_of(&w, list[i]);
		for (int k = 0; k < NCOLS; k++)
			if (strlen(w.cell[k]) > width[k])
				width[k] = strlen(w.cell[k]);
	}
	print_row(heads, width, (berth_state)-1, false);
	for (size_t i = 0; i < n; i++) {
		row w;
		row_of(&w, list[i]);
		print_row(w.cell, width, list[i]->state, color);
	}
}

/* ---- sorting --------------------------------------------------------------------------- */

static const char *sort_key;

static int cmp_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int cmp_i64(int64_t a, int64_t b)
{
	return a < b ? -1 : a > b;
}

/* A run and its place in the list (newest first), which breaks ties: qsort
 * is not stable. */
typedef struct ranked {
	berth_run_info *r;
	size_t at;
} ranked;

/* By the key, then in the order they came. */
static int by_key(const void *x, const void *y)
{
	const ranked *p = x, *q = y;
	const berth_run_info *a = p->r, *b = q->r;
	const char *k = sort_key;
	int c = !strcmp(k, "name")      ? cmp_str(a->name, b->name)
		: !strcmp(k, "id")      ? cmp_str(a->id, b->id)
		: !strcmp(k, "project") ? cmp_str(a->project, b->project)
		: !strcmp(k, "profile") ? cmp_str(a->profile, b->profile)
		: !strcmp(k, "state")   ? cmp_i64(a->state, b->state)
		: !strcmp(k, "age")     ? cmp_i64(b->created, a->created)
		: !strcmp(k, "created") ? cmp_i64(a->created, b->created)
		: !strcmp(k, "cpu")     ? cmp_i64(b->cpu_milli, a->cpu_milli)
		: !strcmp(k, "mem")     ? cmp_i64(b->mem, a->mem)
		: !strcmp(k, "gpu")     ? cmp_i64(b->gpus, a->gpus)
		: !strcmp(k, "priority") ? cmp_i64(b->priority, a->priority)
					: 0;
	return c ? c : p->at < q->at ? -1 : p->at > q->at;
}

/* Sorts by key (one of sort_keys), keeping the list's order among equals;
 * -1 out of memory. */
static int sort_runs(berth_run_info **list, size_t n, const char *key)
{
	ranked *v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return -1;
	for (size_t i = 0; i < n; i++)
		v[i] = (ranked){list[i], i};
	sort_key = key;
	qsort(v, n, sizeof(*v), by_key);
	for (size_t i = 0; i < n; i++)
		list[i] = v[i].r;
	free(v);
	return 0;
}

/* ---- output ---------------------------------------------------------------------------- */

typedef struct out_opts {
	const char *format; /* table, yaml, json, name */
	size_t width[NCOLS];
	bool one;           /* get run ID */
} out_opts;

/* Prints runs (the whole list, or the lines of a watch: rows without a
 * header, documents one by one); an exit status. */
static int print_runs(out_opts *o, berth_run_info **list, size_t n, bool change)
{
	berth_error *err = NULL;
	if (!strcmp(o->format, "name")) {
		for (size_t i = 0; i < n; i++)
			printf("%s\n", list[i]->id);
	} else if (!strcmp(o->format, "table")) {
		if (!change) {
			table(list, n, o->width);
		} else {
			bool color = cli_color(stdout);
			for (size_t i = 0; i < n; i++) {
				row w;
				row_of(&w, list[i]);
				print_row(w.cell, o->width, list[i]->state, color);
			}
		}
	} else {
		berth_format fmt = !strcmp(o->format, "json") ? BERTH_FORMAT_JSON : BERTH_FORMAT_YAML;
		bool as_list = !o->one && !change;
		for (size_t i = 0; i < (as_list ? 1 : n); i++) {
			char *text;
			size_t len;
			if (berth_run_info_format(list + i, as_list ? n : 1, as_list, fmt, &text, &len, &err)) {
				int st = cli_report(err);
				berth_error_free(err);
				return st ? st : 1;
			}
			if (change && fmt == BERTH_FORMAT_YAML)
				fputs("---\n", stdout);
			fwrite(text, 1, len, stdout);
			free(text);
		}
	}
	return fflush(stdout) ? 1 : 0;
}

/* ---- watch ----------------------------------------------------------------------------- */

/* What a watch last printed of a run. */
typedef struct seen {
	char *id, *reason;
	berth_state state;
} seen;

typedef struct seen_set {
	seen *v;
	size_t n, cap;
} seen_set;

static seen *seen_find(seen_set *s, const char *id)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].id, id))
			return &s->v[i];
	return NULL;
}

/* Records r; 1 when it is new or changed (state or reason), 0 when not, -1 out of memory. */
static int seen_note(seen_set *s, const berth_run_info *r)
{
	seen *e = seen_find(s, r->id);
	if (e && e->state == r->state && !cmp_str(e->reason, r->reason))
		return 0;
	char *reason = r->reason ? strdup(r->reason) : NULL;
	if (r->reason && !reason)
		return -1;
	if (!e) {
		if (s->n == s->cap) {
			size_t cap = s->cap ? s->cap * 2 : 64;
			seen *grown = realloc(s->v, cap * sizeof(*grown));
			if (!grown) {
				free(reason);
				return -1;
			}
			s->v = grown;
			s->cap = cap;
		}
		e = &s->v[s->n];
		if (!(e->id = strdup(r->id))) {
			free(reason);
			return -1;
		}
		e->reason = NULL;
		s->n++;
	}
	free(e->reason);
	e->reason = reason;
	e->state = r->state;
	return 1;
}

static void seen_free(seen_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].id);
		free(s->v[i].reason);
	}
	free(s->v);
}

/* How many of the newest runs each look of a watch reads: the runs submitted
 * since the last look are among them. The runs it has seen unfinished are
 * read one by one (they are few), however old. */
#define WATCH_NEWEST 100

/* Prints what changed since the last look, oldest change first (o NULL: notes
 * it only); an exit status. */
static int watch_look(source *src, const berth_run_filter *f, const char *id, seen_set *s,
		      out_opts *o)
{
	berth_run_info **list = NULL, **changed = NULL;
	size_t n = 0, nchanged = 0;
	berth_error *err = NULL;
	int status = 0;
	berth_run_filter newest = *f;
	newest.limit = WATCH_NEWEST;
	if (!id && source_list(src, &newest, &list, &n, &err))
		goto fail;
	/* the unfinished runs seen before that the list does not hold */
	size_t fresh = n;
	for (size_t i = 0; i < s->n; i++) {
		if (berth_state_final(s->v[i].state))
			continue;
		bool listed = false;
		for (size_t k = 0; k < fresh && !listed; k++)
			listed = !strcmp(list[k]->id, s->v[i].id);
		if (listed)
			continue;
		berth_run_info *one = NULL;
		if (source_get(src, s->v[i].id, &one, &err)) {
			/* deleted meanwhile: it is no more watched */
			berth_error_free(err);
			err = NULL;
			s->v[i].state = BERTH_STATE_STOPPED;
			continue;
		}
		berth_run_info **grown = realloc(list, (n + 1) * sizeof(*list));
		if (!grown) {
			berth_run_info_free(one);
			status = 1;
			goto out;
		}
		list = grown;
		list[n++] = one;
	}
	changed = calloc(n ? n : 1, sizeof(*changed));
	if (!changed) {
		status = 1;
		goto out;
	}
	/* the list is newest first: its changes are printed oldest first */
	for (size_t i = n; i-- > 0;) {
		int r = seen_note(s, list[i]);
		if (r < 0) {
			status = 1;
			goto out;
		}
		if (r)
			changed[nchanged++] = list[i];
	}
	if (nchanged && o)
		status = print_runs(o, changed, nchanged, true);
	goto out;
fail:
	status = cli_report(err);
	status = status ? status : 1;
out:
	free(changed);
	berth_error_free(err);
	berth_run_info_list_free(list, n);
	return status;
}

/* ---- get ------------------------------------------------------------------------------- */

int cmd_get(int argc, char **argv)
{
	source src;
	cli_server srv = {0};
	memset(&src, 0, sizeof(src));
	cli_backend *c = &src.c;
	const char *what = NULL, *id = NULL, *output = NULL, *sort = NULL, *many = NULL;
	berth_run_filter f = {NULL, -1, NULL, 0};
	bool watch = false;
	for (int i = 1; i < argc; i++) {
		const char *v;
		int r = cli_server_flag(&srv, argc, argv, &i);
		if (!r)
			r = cli_plan_flag(&c->plan, argc, argv, &i);
		if (!r)
			r = cli_cluster_flag(c, argc, argv, &i);
		if (r < 0)
			return 2;
		if (r)
			continue;
		const cli_opt *o = cli_opt_next(&args_get, argc, argv, &i, &v);
		if (!o && !what)
			what = argv[i];
		else if (!o && !id)
			id = argv[i];
		else if (!o) {
			cli_error("get: too many arguments (see 'berth help get')");
			return 2;
		} else if (!strcmp(o->name, "--project"))
			f.project = v;
		else if (!strcmp(o->name, "--state"))
			f.state = berth_state_parse(v);
		else if (!strcmp(o->name, "--selector"))
			f.selector = v;
		else if (!strcmp(o->name, "--sort-by"))
			sort = v;
		else if (!strcmp(o->name, "--limit"))
			many = v;
		else if (!strcmp(o->name, "--watch"))
			watch = true;
	}
	output = c->plan.output;
	int one = what && !strcmp(what, "run");
	if (!what || (!one && strcmp(what, "runs")) || (one && !id) || (!one && id)) {
		cli_error("get: say 'get runs' or 'get run ID' (see 'berth help get')");
		return 2;
	}
	if (one && (f.project || f.state >= 0 || f.selector || sort || many)) {
		cli_error("get: --project, --state, -l, --sort-by and --limit choose among runs: "
			  "not with 'get run ID'");
		return 2;
	}
	if (many) {
		char *end;
		errno = 0;
		long long l = strtoll(many, &end, 10);
		if (*many < '0' || *many > '9' || *end || errno || l < 1 || l > 1000000) {
			cli_error("get: --limit takes a number from 1 to 1000000, not \"%s\"", many);
			return 2;
		}
		f.limit = l;
	}
	/* one run is a document: yaml unless json or name is asked */
	if (!output || (one && !strcmp(output, "table")))
		output = one ? "yaml" : "table";
	out_opts o = {.format = output, .one = one};
	/* sorted: every run is read, then the first --limit shown */
	berth_run_filter read = f;
	if (sort)
		read.limit = 0;
	int status = source_open(&src, &srv);
	if (status) {
		source_close(&src);
		return status;
	}
	berth_error *err = NULL;
	berth_run_info **list = NULL;
	size_t n = 0;
	int rc;
	if (one) {
		berth_run_info *single = NULL;
		rc = source_get(&src, id, &single, &err);
		if (!rc && !(list = malloc(sizeof(*list)))) {
			berth_run_info_free(single);
			cli_error("out of memory");
			status = 1;
			goto out;
		} else if (!rc) {
			list[0] = single;
			n = 1;
		}
	} else
		rc = source_list(&src, &read, &list, &n, &err);
	if (rc) {
		status = cli_report(err);
		status = status ? status : 1;
		goto out;
	}
	if (sort && sort_runs(list, n, sort)) {
		cli_error("out of memory");
		status = 1;
		goto out;
	}
	for (; f.limit > 0 && (int64_t)n > f.limit; n--)
		berth_run_info_free(list[n - 1]);
	status = print_runs(&o, list, n, false);
	if (watch && !status) {
		seen_set s = {NULL, 0, 0};
		int64_t rv = -1;
		berth_error *werr = NULL;
		for (size_t i = 0; i < n && !status; i++)
			status = seen_note(&s, list[i]) < 0;
		/* the version first: what changes after it is seen */
		if (!status && source_wait(&src, f.project, &rv, &werr))
			status = cli_report(werr) ? 2 : 1;
		/* what a look reads and the table did not show (past --limit) is not new */
		if (!status)
			status = watch_look(&src, &f, one ? id : NULL, &s, NULL);
		/* a look when the store's version moved (a server's watch answers
		 * then): nothing is read while nothing changes */
		while (!status) {
			int64_t was = rv;
			if (source_wait(&src, f.project, &rv, &werr)) {
				status = cli_report(werr) ? 2 : 1;
				break;
			}
			if (rv != was)
				status = watch_look(&src, &f, one ? id : NULL, &s, &o);
		}
		berth_error_free(werr);
		seen_free(&s);
	}
out:
	berth_error_free(err);
	berth_run_info_list_free(list, n);
	source_close(&src);
	return status;
}
