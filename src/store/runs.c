/*
 * runs.c - run records in the store (see store.h): each run's row, written
 * and read through one table of its columns (run_cols); pages of runs read
 * from an index in the order they are shown; what the runs of a backend or
 * a project hold; and each run's events.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "store/store_internal.h"

/* ---- the columns of a run ----------------------------------------------------- */

enum col_kind { C_STR, C_INT, C_I32, C_BOOL, C_STATE, C_BLOB };

typedef struct run_col {
	const char *name;
	enum col_kind kind;
	size_t off;      /* in store_run */
	size_t len_off;  /* C_BLOB: the size_t length */
	bool mutable;    /* written by store_run_update */
} run_col;

#define I(f) offsetof(store_run, info.f)
#define R(f) offsetof(store_run, f)
static const run_col run_cols[] = {
	{"id", C_STR, I(id), 0, false},
	{"name", C_STR, I(name), 0, false},
	{"project", C_STR, I(project), 0, false},
	{"backend", C_STR, I(backend), 0, false},
	{"profile", C_STR, I(profile), 0, false},
	{"image", C_STR, I(image), 0, false},
	{"action", C_STR, I(action), 0, false},
	{"state", C_STATE, I(state), 0, true},
	{"reason", C_STR, I(reason), 0, true},
	{"priority_class", C_STR, I(priority_class), 0, false},
	{"priority", C_INT, I(priority), 0, false},
	{"created", C_INT, I(created), 0, false},
	{"started", C_INT, I(started), 0, true},
	{"finished", C_INT, I(finished), 0, true},
	{"cpu_milli", C_INT, I(cpu_milli), 0, false},
	{"mem", C_INT, I(mem), 0, false},
	{"gpus", C_INT, I(gpus), 0, false},
	{"disk", C_INT, I(disk), 0, false},
	{"cpu_limit_milli", C_INT, I(cpu_limit_milli), 0, false},
	{"mem_limit", C_INT, I(mem_limit), 0, false},
	{"gpu_ids", C_STR, I(gpu_ids), 0, true},
	{"workers", C_INT, I(workers), 0, false},
	{"worker_states", C_STR, I(worker_states), 0, true},
	{"worker_env", C_BLOB, R(worker_env), R(worker_env_len), false},
	{"launcher", C_STR, R(launcher), 0, false},
	{"exit_code", C_I32, I(exit_code), 0, true},
	{"signal", C_I32, I(signal), 0, true},
	{"oom_killed", C_BOOL, I(oom_killed), 0, true},
	{"attempts", C_I32, I(attempts), 0, true},
	{"cpu_usage_ns", C_INT, I(cpu_usage_ns), 0, true},
	{"mem_peak", C_INT, I(mem_peak), 0, true},
	{"enforcement", C_STR, I(enforcement), 0, true},
	{"log_path", C_STR, I(log_path), 0, false},
	{"effective", C_STR, I(effective), 0, false},
	{"spec", C_STR, R(spec), 0, false},
	{"argv", C_BLOB, R(argv), R(argv_len), false},
	{"env", C_BLOB, R(env), R(env_len), false},
	{"secret_env", C_STR, R(secret_env), 0, false},
	{"volumes", C_BLOB, R(volumes), R(volumes_len), false},
	{"workdir", C_STR, R(workdir), 0, false},
	{"uid", C_INT, R(uid), 0, false},
	{"gid", C_INT, R(gid), 0, false},
	{"fs_group", C_INT, R(fs_group), 0, false},
	{"timeout", C_INT, R(timeout), 0, false},
	{"retries", C_INT, R(retries), 0, false},
	{"restart", C_BOOL, R(restart), 0, false},
	{"grace", C_INT, R(grace), 0, false},
	{"keep_volumes", C_BOOL, R(keep_volumes), 0, false},
	{"supervisor_pid", C_INT, R(supervisor_pid), 0, false},
	{"supervisor_start", C_INT, R(supervisor_start), 0, false},
	{"pid", C_INT, R(pid), 0, true},
	{"stop_requested", C_BOOL, R(stop_requested), 0, false},
	{"cgroup", C_STR, R(cgroup), 0, true},
	{"doc", C_INT, R(doc), 0, false},
	{"target", C_STR, I(target), 0, true},
	{"pids_max", C_INT, R(pids_max), 0, false},
	{"disk_limit", C_INT, R(disk_limit), 0, false},
	{"quota_cpu_milli", C_INT, R(quota_cpu_milli), 0, false},
	{"quota_mem", C_INT, R(quota_mem), 0, false},
	{"quota_gpus", C_INT, R(quota_gpus), 0, false},
	{"quota_of", C_STR, R(quota_of), 0, false},
	{"qlim_cpu_milli", C_INT, R(qlim_cpu_milli), 0, false},
	{"qlim_mem", C_INT, R(qlim_mem), 0, false},
	{"qlim_gpus", C_INT, R(qlim_gpus), 0, false},
	{"qlim_runs", C_INT, R(qlim_runs), 0, false},
	{"submitted_by", C_STR, I(submitted_by), 0, false},
	{"labels", C_STR, I(labels), 0, false},
};
#undef I
#undef R

#define FIELD(r, c, T) ((T *)((char *)(r) + (c)->off))

static int bind_col(db_stmt *st, int i, const store_run *r, const run_col *c)
{
	switch (c->kind) {
	case C_STR: {
		const char *v = *FIELD(r, c, char *const);
		return db_bind_text(st, i, v);
	}
	case C_INT:
		return db_bind_int(st, i, *FIELD(r, c, const int64_t));
	case C_I32:
		return db_bind_int(st, i, *FIELD(r, c, const int));
	case C_BOOL:
		return db_bind_int(st, i, *FIELD(r, c, const bool));
	case C_STATE:
		return db_bind_int(st, i, (int)*FIELD(r, c, const berth_state));
	case C_BLOB: {
		const char *v = *FIELD(r, c, char *const);
		size_t n = *(const size_t *)((const char *)r + c->len_off);
		return db_bind_blob(st, i, v, n);
	}
	}
	return -1;
}

static int read_col(db_stmt *st, int i, store_run *r, const run_col *c)
{
	switch (c->kind) {
	case C_STR:
	case C_BLOB: {
		if (db_col_null(st, i))
			return 0;
		size_t n = 0;
		const void *v = db_col_blob(st, i, &n);
		if (c->kind == C_STR && (v = db_col_text(st, i)))
			n = strlen(v);
		char *copy = berth_malloc(n + 1);
		if (!copy)
			return -1;
		if (n)
			memcpy(copy, v, n);
		copy[n] = 0;
		*FIELD(r, c, char *) = copy;
		if (c->kind == C_BLOB)
			*(size_t *)((char *)r + c->len_off) = n;
		return 0;
	}
	case C_INT:
		*FIELD(r, c, int64_t) = db_col_int(st, i);
		return 0;
	case C_I32:
		*FIELD(r, c, int) = (int)db_col_int(st, i);
		return 0;
	case C_BOOL:
		*FIELD(r, c, bool) = (int)db_col_int(st, i) != 0;
		return 0;
	case C_STATE:
		*FIELD(r, c, berth_state) = (berth_state)(int)db_col_int(st, i);
		return 0;
	}
	return -1;
}

/* "?N": the parameter of column i */
static void param(berth_buf *b, size_t i)
{
	char n[24];
	size_t len = 0;
	for (size_t v = i + 1; v; v /= 10)
		n[sizeof(n) - ++len] = (char)('0' + v % 10);
	berth_buf_append(b, "?", 1);
	berth_buf_append(b, n + sizeof(n) - len, len);
}

/* "a, b, c" of every column (or of the mutable ones as "a = ?1, ..."). Every
 * berth process writes these once, at its store's open: no printf. */
static int col_list(berth_buf *b, bool update)
{
	int k = 0;
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(run_cols); i++) {
		if (update && !run_cols[i].mutable)
			continue;
		if (k++)
			berth_buf_append(b, ", ", 2);
		berth_buf_puts(b, run_cols[i].name);
		if (update) {
			berth_buf_append(b, " = ", 3);
			param(b, i);
		}
	}
	return b->failed;
}

/* The SQL of a run's columns, once per handle, on its first use (it costs
 * more to write than to run): -1 when out of memory (then again next time). */
static int run_sql(store *s)
{
	if (s->cols && s->insert && s->update)
		return 0;
	free(s->cols);
	free(s->insert);
	free(s->update);
	berth_buf cols = BERTH_BUF_INIT, ins = BERTH_BUF_INIT, upd = BERTH_BUF_INIT;
	col_list(&cols, false);
	berth_buf_puts(&ins, "INSERT INTO runs (");
	berth_buf_puts(&ins, cols.data ? cols.data : "");
	berth_buf_puts(&ins, ") VALUES (");
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(run_cols); i++) {
		if (i)
			berth_buf_append(&ins, ", ", 2);
		param(&ins, i);
	}
	berth_buf_puts(&ins, ")");
	berth_buf_puts(&upd, "UPDATE runs SET ");
	col_list(&upd, true);
	berth_buf_puts(&upd, " WHERE id = ?1");
	s->cols = berth_buf_detach(&cols);
	s->insert = berth_buf_detach(&ins);
	s->update = berth_buf_detach(&upd);
	return s->cols && s->insert && s->update ? 0 : -1;
}

static int prepare(store *s, berth_buf *sql, db_stmt **st, berth_error **err)
{
	if (sql->failed)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	if (!(*st = store_stmt_get(s, sql->data)))
		return store_db_fail(s, err, "preparing a statement");
	return 0;
}

static int bind_all(db_stmt *st, const store_run *r, bool only_mutable)
{
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(run_cols); i++)
		if (!only_mutable || run_cols[i].mutable || !strcmp(run_cols[i].name, "id"))
			if (bind_col(st, (int)i + 1, r, &run_cols[i]) != 0)
				return -1;
	return 0;
}

int store_run_insert(store *s, const store_run *r, berth_error **err)
{
	db_stmt *st = NULL;
	if (run_sql(s))
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	if (!(st = store_stmt_get(s, s->insert)))
		return store_db_fail(s, err, "preparing a statement");
	int rc = 0;
	if (bind_all(st, r, false) || db_step(st) != DB_DONE)
		rc = s->ops->fault(s->db) == DB_F_UNIQUE
			     ? berth_fail(err, BERTH_EDUPLICATE, "a run with id \"%s\" exists already",
					  r->info.id)
			     : store_db_fail(s, err, "adding a run");
	store_stmt_put(s, st);
	return rc;
}

int store_run_update(store *s, const store_run *r, berth_error **err)
{
	db_stmt *st = NULL;
	if (run_sql(s))
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	if (!(st = store_stmt_get(s, s->update)))
		return store_db_fail(s, err, "preparing a statement");
	int rc = 0;
	if (bind_all(st, r, true) || db_step(st) != DB_DONE)
		rc = store_db_fail(s, err, "updating a run");
	store_stmt_put(s, st);
	return rc;
}

/* "SELECT <every column>, rowid FROM runs " */
static void select_head(store *s, berth_buf *sql)
{
	berth_buf_puts(sql, "SELECT ");
	if (run_sql(s))
		sql->failed = -BERTH_ENOMEM;
	berth_buf_puts(sql, s->cols ? s->cols : "");
	berth_buf_puts(sql, ", rowid, rv FROM runs ");
}

/* The runs of sql (select_head's columns); bind fills its parameters. */
static int select_runs(store *s, berth_buf *sql, int (*bind)(db_stmt *, const void *),
		       const void *ctx, store_run ***out, size_t *n, berth_error **err)
{
	*out = NULL;
	*n = 0;
	db_stmt *st = NULL;
	int rc = prepare(s, sql, &st, err);
	if (rc)
		return rc;
	if (bind(st, ctx) != 0) {
		store_stmt_put(s, st);
		return store_db_fail(s, err, "binding a query");
	}
	store_run **list = NULL;
	size_t cnt = 0, cap = 0;
	int step;
	while ((step = db_step(st)) == DB_ROW) {
		if (cnt == cap) {
			cap = cap ? cap * 2 : 16;
			store_run **grown = berth_realloc(list, cap * sizeof(*list));
			if (!grown)
				goto oom;
			list = grown;
		}
		store_run *r = berth_calloc(1, sizeof(*r));
		if (!r)
			goto oom;
		list[cnt++] = r;
		for (size_t i = 0; i < BERTH_ARRAY_SIZE(run_cols); i++)
			if (read_col(st, (int)i, r, &run_cols[i]))
				goto oom;
		r->seq = db_col_int(st, (int)BERTH_ARRAY_SIZE(run_cols));
		r->rv = db_col_int(st, (int)BERTH_ARRAY_SIZE(run_cols) + 1);
	}
	if (step != DB_DONE) {
		rc = store_db_fail(s, err, "reading runs");
		goto fail;
	}
	store_stmt_put(s, st);
	*out = list;
	*n = cnt;
	return 0;
oom:
	rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
fail:
	store_stmt_put(s, st);
	store_run_list_free(list, cnt);
	return rc;
}

static int bind_id(db_stmt *st, const void *id)
{
	return db_bind_text(st, 1, id);
}

int store_run_get(store *s, const char *id, store_run **out, berth_error **err)
{
	store_run **list;
	size_t n;
	*out = NULL;
	berth_buf sql = BERTH_BUF_INIT;
	select_head(s, &sql);
	berth_buf_puts(&sql, "WHERE id = ?1");
	int rc = select_runs(s, &sql, bind_id, id, &list, &n, err);
	berth_buf_release(&sql);
	if (rc)
		return rc;
	if (!n) {
		free(list);
		return berth_fail(err, BERTH_ENOTFOUND, "no run \"%s\"", id);
	}
	*out = list[0];
	free(list);
	return 0;
}

/* ---- queries: a page of runs from an index, in its order ---------------------------- */

/* Every state a run can be in: runs_project holds a project's runs by state,
 * then by rowid, so a project's runs newest first are the merge of these. */
#define STATES (BERTH_STATE_STOPPED + 1)

/* The parameters of a query's SQL: ?1 the state, ?2 the cursor, ?3 the limit,
 * ?4... the projects, then the backend and the fit. The SQL may leave out the
 * state and the cursor (when there are none); it always names the limit. */
static int bind_query(db_stmt *st, const void *ctx)
{
	const store_query *q = ctx;
	int rc = db_bind_int(st, 1, q->state);
	if (rc == 0)
		rc = db_bind_int(st, 2, q->after);
	if (rc == 0)
		rc = db_bind_int(st, 3, q->limit > 0 ? q->limit : STORE_NO_LIMIT);
	for (size_t i = 0; rc == 0 && i < q->nprojects; i++)
		rc = db_bind_text(st, (int)i + 4, q->projects[i]);
	int next = (int)q->nprojects + 4;
	if (rc == 0 && q->backend)
		rc = db_bind_text(st, next++, q->backend);
	for (int i = 0; rc == 0 && q->fit && i < 4; i++)
		rc = db_bind_int(st, next++, q->fit[i]);
	for (size_t i = 0; rc == 0 && q->labels && i < q->labels->n; i++)
		rc = db_bind_text(st, next++, q->labels->terms[i].needle);
	return rc;
}

/* Appends a condition: " WHERE " before the first of a SELECT, " AND " after. */
static void where(berth_buf *sql, bool *any, const char *cond)
{
	berth_buf_puts(sql, *any ? " AND " : "WHERE ");
	berth_buf_puts(sql, cond);
	*any = true;
}

/* The conditions besides project and state: the cursor, the backend, the fit.
 * A cursor is "rowid < ?2" alone, never "?2 <= 0 OR rowid < ?2", which SQLite
 * cannot read as a range: every page then walked from the newest run. */
static void filters(berth_buf *sql, bool *any, const store_query *q)
{
	if (q->after > 0)
		where(sql, any, "rowid < ?2");
	size_t next = q->nprojects + 4;
	char cond[160];
	if (q->backend) {
		snprintf(cond, sizeof(cond), "backend = ?%zu", next++);
		where(sql, any, cond);
	}
	if (q->fit) {
		snprintf(cond, sizeof(cond), "cpu_milli <= ?%zu AND mem <= ?%zu AND gpus <= ?%zu"
			 " AND disk <= ?%zu", next, next + 1, next + 2, next + 3);
		where(sql, any, cond);
		next += 4;
	}
	/* a term's needle (",key=value,", ",key=") among the labels between commas */
	for (size_t i = 0; q->labels && i < q->labels->n; i++) {
		snprintf(cond, sizeof(cond), "instr(',' || ifnull(labels, '') || ',', ?%zu) %s 0",
			 next++, q->labels->terms[i].negate ? "=" : ">");
		where(sql, any, cond);
	}
}

/* One arm of a merge: the runs of project ?k in state (< 0: ?1). */
static void arm(berth_buf *sql, const store_query *q, size_t k, int state)
{
	bool any = false;
	char cond[64];
	snprintf(cond, sizeof(cond), "project = ?%zu", k);
	where(sql, &any, cond);
	if (state < 0)
		snprintf(cond, sizeof(cond), "state = ?1");
	else
		snprintf(cond, sizeof(cond), "state = %d", state);
	where(sql, &any, cond);
	filters(sql, &any, q);
}

/* The arms of a project: one for the state asked, else one per state. */
static size_t arms_per_project(const store_query *q)
{
	return q->state >= 0 ? 1 : STATES;
}

/* The SQL of q (its projects each named once). Newest first, each page is
 * read from an index in the order it is shown, from its cursor on, and no
 * further than its limit (EXPLAIN QUERY PLAN: a SEARCH, no "TEMP B-TREE"):
 *   - every project: the table itself (rowid) or runs_state (state, rowid);
 *   - projects: for each project, and each state asked (one, or all five),
 *     an arm on runs_project (project, state, rowid); one arm is read as it
 *     is, several are merged (UNION ALL with ORDER BY: SQLite merges arms
 *     that come in order) by rowid alone, and the page's rows read by rowid.
 * The queue (priority, then submission) is read from runs_queue. */
static int query_sql(store *s, const store_query *q, berth_buf *sql)
{
	size_t arms = q->nprojects * arms_per_project(q);
	select_head(s, sql);
	if (!q->queue && arms == 1) {
		arm(sql, q, 4, q->state);
		berth_buf_puts(sql, " ORDER BY rowid DESC LIMIT ?3");
	} else if (!q->queue && arms) {
		berth_buf_puts(sql, "WHERE rowid IN (");
		for (size_t i = 0; i < q->nprojects; i++)
			for (int st = 0; st < (int)arms_per_project(q); st++) {
				berth_buf_puts(sql, i || st ? " UNION ALL SELECT rowid FROM runs "
							    : "SELECT rowid FROM runs ");
				arm(sql, q, i + 4, q->state >= 0 ? -1 : st);
			}
		berth_buf_puts(sql, " ORDER BY 1 DESC LIMIT ?3) ORDER BY rowid DESC");
	} else {
		bool any = false;
		/* "state = ?1" alone, not "(?1 < 0 OR state = ?1)": SQLite uses an index
		 * on state only for the plain comparison */
		if (q->state >= 0)
			where(sql, &any, "state = ?1");
		if (q->nprojects) {
			berth_buf in = BERTH_BUF_INIT;
			berth_buf_puts(&in, "project IN (");
			for (size_t i = 0; i < q->nprojects; i++)
				berth_buf_printf(&in, "%s?%zu", i ? ", " : "", i + 4);
			berth_buf_puts(&in, ")");
			where(sql, &any, in.data ? in.data : "");
			sql->failed |= in.failed;
			berth_buf_release(&in);
		}
		filters(sql, &any, q);
		berth_buf_puts(sql, q->queue ? " ORDER BY priority DESC, created, rowid LIMIT ?3"
					     : " ORDER BY rowid DESC LIMIT ?3");
	}
	return sql->failed ? -1 : 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* q with each of its projects once (a token may name one twice: UNION ALL
 * would give its runs twice); *names, when not NULL, is the caller's to free. */
static int distinct(const store_query *q, store_query *d, const char ***names)
{
	*d = *q;
	*names = NULL;
	if (q->nprojects < 2)
		return 0;
	const char **v = berth_calloc(q->nprojects, sizeof(*v));
	if (!v)
		return -1;
	memcpy(v, q->projects, q->nprojects * sizeof(*v));
	qsort(v, q->nprojects, sizeof(*v), by_name);
	size_t k = 1;
	for (size_t i = 1; i < q->nprojects; i++)
		if (strcmp(v[i], v[k - 1]))
			v[k++] = v[i];
	d->projects = v;
	d->nprojects = k;
	*names = v;
	return 0;
}

/* How many projects one query merges: as many as SQLite's compound SELECT
 * allows arms (500: 100 projects in any state, 500 in one). */
static size_t projects_per_query(store *s, const store_query *q)
{
	int most = store_conn(s) ? s->ops->compound_limit(s->db) : 0;
	if (q->queue || most <= 0 || !q->nprojects)
		return q->nprojects ? q->nprojects : 1;
	size_t per = (size_t)most / arms_per_project(q);
	return per ? per : 1;
}

static int newest_first(const void *a, const void *b)
{
	int64_t x = (*(store_run *const *)a)->seq, y = (*(store_run *const *)b)->seq;
	return x < y ? 1 : x > y ? -1 : 0;
}

int store_run_query(store *s, const store_query *q, store_run ***out, size_t *n, berth_error **err)
{
	*out = NULL;
	*n = 0;
	store_query d;
	const char **names;
	if (distinct(q, &d, &names))
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	/* more projects than one query merges: a page of each part (each read as
	 * one query is), then the newest of them */
	size_t per = projects_per_query(s, &d);
	store_run **all = NULL;
	size_t cnt = 0;
	int rc = 0;
	for (size_t at = 0; !rc && (at == 0 || at < d.nprojects); at += per) {
		store_query part = d;
		if (d.nprojects) {
			part.projects = d.projects + at;
			part.nprojects = d.nprojects - at < per ? d.nprojects - at : per;
		}
		berth_buf sql = BERTH_BUF_INIT;
		store_run **list = NULL;
		size_t got = 0;
		rc = query_sql(s, &part, &sql) ? berth_fail(err, BERTH_ENOMEM, "out of memory")
					       : select_runs(s, &sql, bind_query, &part, &list, &got, err);
		berth_buf_release(&sql);
		if (!rc && !all) {
			all = list;
			cnt = got;
		} else if (!rc && got) {
			store_run **grown = berth_realloc(all, (cnt + got) * sizeof(*all));
			if (!grown) {
				store_run_list_free(list, got);
				rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
			} else {
				all = grown;
				memcpy(all + cnt, list, got * sizeof(*all));
				cnt += got;
				free(list);
			}
		} else {
			free(list);
		}
	}
	free(names);
	if (rc) {
		store_run_list_free(all, cnt);
		return rc;
	}
	if (per < d.nprojects && cnt) {
		qsort(all, cnt, sizeof(*all), newest_first);
		for (; q->limit > 0 && cnt > (size_t)q->limit; cnt--)
			store_run_free(all[cnt - 1]);
	}
	*out = all;
	*n = cnt;
	return 0;
}

/* ---- changes (a watch) ------------------------------------------------------------ */

int store_version(store *s, int64_t *rv, berth_error **err)
{
	return store_select_int(s, "SELECT v FROM rv", NULL, 0, rv, err);
}

typedef struct changes_args {
	const char *const *projects;
	size_t n;
	int64_t since, upto, limit;
} changes_args;

/* ?1 since, ?2 the limit or upto, ?3... the projects */
static int bind_changes(db_stmt *st, const void *ctx)
{
	const changes_args *a = ctx;
	int rc = db_bind_int(st, 1, a->since);
	if (rc == 0)
		rc = db_bind_int(st, 2, a->limit ? a->limit : a->upto);
	for (size_t i = 0; rc == 0 && i < a->n; i++)
		rc = db_bind_text(st, (int)i + 3, a->projects[i]);
	return rc;
}

/* " AND +project IN (?3, ...)" of a's projects: the unary + keeps SQLite on the
 * rv index (what changed since a watch looked: a few rows), where it would read
 * a project's every run from runs_project and sort them (14,000 runs: 50 ms a
 * watch, and every watch of a project answers at each change) */
static void projects_in(store *s, berth_buf *sql, const changes_args *a)
{
	for (size_t i = 0; i < a->n; i++)
		berth_buf_printf(sql, "%s?%zu", i ? ", " : store_dialect(s) == DB_SQLITE ? " AND +project IN ("
										   : " AND project IN (", i + 3);
	if (a->n)
		berth_buf_puts(sql, ")");
}

static int explain_sql(store *s, berth_buf *sql, int (*bind)(db_stmt *, const void *),
		       const void *ctx, char **out, berth_error **err);

/* The runs a watch reads: from the rv index, what changed since it looked, no more */
static void changes_sql(store *s, berth_buf *sql, const changes_args *a)
{
	select_head(s, sql);
	berth_buf_puts(sql, "WHERE rv > ?1");
	projects_in(s, sql, a);
	berth_buf_puts(sql, " ORDER BY rv LIMIT ?2");
}

int store_run_changes_plan(store *s, const char *const *projects, size_t nprojects, char **out,
			   berth_error **err)
{
	changes_args a = {projects, nprojects, 0, 0, 500};
	berth_buf sql = BERTH_BUF_INIT;
	berth_buf_puts(&sql, "EXPLAIN QUERY PLAN ");
	changes_sql(s, &sql, &a);
	int rc = explain_sql(s, &sql, bind_changes, &a, out, err);
	berth_buf_release(&sql);
	return rc;
}

int store_run_changes(store *s, const char *const *projects, size_t nprojects, int64_t since,
		      int64_t limit, store_run ***runs, size_t *n, char ***deleted, size_t *ndeleted,
		      int64_t *rv, berth_error **err)
{
	*runs = NULL;
	*deleted = NULL;
	*n = *ndeleted = 0;
	/* the version first: a change after it is in what is read, or after *rv */
	int rc = store_version(s, rv, err);
	if (rc)
		return rc;
	if (since < *rv - STORE_TOMBSTONES)
		return berth_fail(err, BERTH_EGONE,
				  "version %lld is too old to watch from (the store is at %lld and "
				  "keeps the deletions of the last %d versions): list the runs again",
				  (long long)since, (long long)*rv, STORE_TOMBSTONES);
	changes_args a = {projects, nprojects, since, *rv, limit > 0 ? limit : STORE_NO_LIMIT};
	berth_buf sql = BERTH_BUF_INIT;
	changes_sql(s, &sql, &a);
	rc = select_runs(s, &sql, bind_changes, &a, runs, n, err);
	berth_buf_release(&sql);
	if (rc)
		return rc;
	/* a full page: the next one starts after its last run; else after all it
	 * read (changed after the version was: every lower version is in it too,
	 * versions being given in the order of the writes) */
	if ((limit > 0 && *n == (size_t)limit) || (*n && (*runs)[*n - 1]->rv > *rv))
		*rv = (*runs)[*n - 1]->rv;
	a.limit = 0;
	a.upto = *rv;
	berth_buf_puts(&sql, "SELECT id FROM tombstones WHERE rv > ?1 AND rv <= ?2");
	projects_in(s, &sql, &a);
	berth_buf_puts(&sql, " ORDER BY rv");
	db_stmt *st = NULL;
	rc = prepare(s, &sql, &st, err);
	berth_buf_release(&sql);
	if (!rc && bind_changes(st, &a) != 0)
		rc = store_db_fail(s, err, "binding a query");
	size_t cap = 0;
	int step = DB_DONE;
	while (!rc && (step = db_step(st)) == DB_ROW) {
		char **grown = store_grow(*deleted, sizeof(**deleted), *ndeleted, &cap);
		if (!grown) {
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
			break;
		}
		*deleted = grown;
		if (store_col_text(st, 0, &grown[*ndeleted]) || !grown[*ndeleted])
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
		else
			++*ndeleted;
	}
	if (!rc && step != DB_DONE)
		rc = store_db_fail(s, err, "reading deleted runs");
	if (st)
		store_stmt_put(s, st);
	if (rc) {
		store_run_list_free(*runs, *n);
		for (size_t i = 0; i < *ndeleted; i++)
			free((*deleted)[i]);
		free(*deleted);
		*runs = NULL;
		*deleted = NULL;
		*n = *ndeleted = 0;
	}
	return rc;
}

/* EXPLAIN QUERY PLAN of sql (bind fills its parameters): each step a line,
 * indented two spaces a level. */
static int explain_sql(store *s, berth_buf *sql, int (*bind)(db_stmt *, const void *),
		       const void *ctx, char **out, berth_error **err)
{
	*out = NULL;
	berth_buf plan = BERTH_BUF_INIT;
	db_stmt *st = NULL;
	int rc = 0;
	if (sql->failed)
		rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
	else if (!store_conn(s) || s->ops->prepare(s->db, sql->data, false, &st))
		rc = store_db_fail(s, err, "preparing a statement");
	else if (bind(st, ctx) != 0)
		rc = store_db_fail(s, err, "binding a query");
	/* each step's depth, from its parent's: the steps come parents first */
	int ids[64], depth[64], nids = 0, step = DB_DONE;
	while (!rc && (step = db_step(st)) == DB_ROW) {
		if (store_dialect(s) == DB_PG) { /* EXPLAIN: a line a row, indented already */
			berth_buf_printf(&plan, "%s\n", db_col_text(st, 0) ? db_col_text(st, 0) : "");
			continue;
		}
		int id = (int)db_col_int(st, 0), parent = (int)db_col_int(st, 1), dd = 0;
		for (int i = 0; i < nids; i++)
			if (ids[i] == parent)
				dd = depth[i] + 1;
		if (nids < (int)BERTH_ARRAY_SIZE(ids)) {
			ids[nids] = id;
			depth[nids++] = dd;
		}
		const char *detail = db_col_text(st, 3);
		berth_buf_printf(&plan, "%*s%s\n", 2 * dd, "", detail ? detail : "");
	}
	if (!rc && step != DB_DONE)
		rc = store_db_fail(s, err, "explaining a query");
	if (st)
		s->ops->finalize(st);
	if (!rc && plan.failed)
		rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
	if (rc) {
		berth_buf_release(&plan);
		return rc;
	}
	*out = plan.data ? berth_buf_detach(&plan) : berth_strdup("");
	return *out ? 0 : berth_fail(err, BERTH_ENOMEM, "out of memory");
}

int store_run_query_plan(store *s, const store_query *q, char **out, berth_error **err)
{
	*out = NULL;
	store_query d;
	const char **names;
	if (distinct(q, &d, &names))
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	/* of the first part, when the projects are read in parts */
	size_t per = projects_per_query(s, &d);
	if (d.nprojects > per)
		d.nprojects = per;
	berth_buf sql = BERTH_BUF_INIT;
	berth_buf_puts(&sql, "EXPLAIN QUERY PLAN ");
	if (query_sql(s, &d, &sql))
		sql.failed = -BERTH_ENOMEM;
	int rc = explain_sql(s, &sql, bind_query, &d, out, err);
	berth_buf_release(&sql);
	free(names);
	return rc;
}

int store_run_list(store *s, const char *backend, int state, bool queue, store_run ***out,
		   size_t *n, berth_error **err)
{
	store_query q = {.state = state, .queue = queue, .backend = backend};
	return store_run_query(s, &q, out, n, err);
}

static int update_one(store *s, const char *sql, const char *id, int64_t a, int64_t b,
		      berth_error **err)
{
	db_stmt *st;
	if (!(st = store_stmt_get(s, sql)))
		return store_db_fail(s, err, "preparing a statement");
	db_bind_text(st, 1, id);
	db_bind_int(st, 2, a);
	db_bind_int(st, 3, b);
	int rc = db_step(st) == DB_DONE ? 0 : store_db_fail(s, err, "updating a run");
	if (!rc && !db_changes(s->db))
		rc = berth_fail(err, BERTH_ENOTFOUND, "no run \"%s\"", id);
	store_stmt_put(s, st);
	return rc;
}

int store_run_request_stop(store *s, const char *id, int64_t grace, berth_error **err)
{
	return update_one(s,
			  "UPDATE runs SET stop_requested = 1,"
			  " grace = CASE WHEN ?2 >= 0 THEN ?2 ELSE grace END WHERE id = ?1",
			  id, grace, 0, err);
}

int store_run_stop_requested(store *s, const char *id, bool *stop, berth_error **err)
{
	store_arg args[] = {STORE_S(id)};
	int64_t v = 0;
	int rc = store_select_int(s, "SELECT stop_requested FROM runs WHERE id = ?1", args, 1, &v, err);
	*stop = !rc && v;
	return rc;
}

int store_run_set_supervisor(store *s, const char *id, int64_t pid, int64_t start,
			     berth_error **err)
{
	return update_one(s, "UPDATE runs SET supervisor_pid = ?2, supervisor_start = ?3 WHERE id = ?1",
			  id, pid, start, err);
}

void store_run_free(store_run *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(run_cols); i++)
		if (run_cols[i].kind == C_STR || run_cols[i].kind == C_BLOB)
			free(*FIELD(r, &run_cols[i], char *));
	free(r);
}

void store_run_list_free(store_run **list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		store_run_free(list[i]);
	free(list);
}

int store_run_kind(store *s, const char *id, char **kind, berth_error **err)
{
	store_arg arg = STORE_S(id);
	return store_select_text(s, "SELECT backend FROM runs WHERE id = ?1", &arg, 1, kind, err);
}

int store_run_exists(store *s, const char *id, berth_error **err)
{
	store_arg arg = STORE_S(id);
	int64_t any = 0;
	int rc = store_select_int(s, "SELECT EXISTS (SELECT 1 FROM runs WHERE id = ?1)", &arg, 1,
				  &any, err);
	return rc < 0 ? rc : any != 0;
}

/* A savepoint, not BEGIN: it nests in the caller's transaction (which then
 * commits both deletions or neither) and is a transaction of its own outside one. */
int store_run_delete(store *s, const char *id, berth_error **err)
{
	int rc = store_part_begin(s, err);
	if (rc)
		return rc;
	store_arg arg = STORE_S(id);
	rc = store_exec_args(s, "DELETE FROM events WHERE run_id = ?1", &arg, 1, err);
	if (rc >= 0)
		rc = store_exec_args(s, "DELETE FROM samples WHERE run_id = ?1", &arg, 1, err);
	if (rc >= 0)
		rc = store_exec_args(s, "DELETE FROM runs WHERE id = ?1", &arg, 1, err);
	if (rc >= 0) {
		int released = store_part_end(s, true, err);
		rc = released ? released : rc > 0;
	}
	if (rc < 0)
		store_part_end(s, false, NULL);
	return rc;
}

int store_run_count_by_state(store *s, int64_t *counts, size_t n, berth_error **err)
{
	memset(counts, 0, n * sizeof(*counts));
	db_stmt *st;
	if (!(st = store_stmt_get(s, "SELECT state, COUNT(*) FROM runs GROUP BY state")))
		return store_db_fail(s, err, "preparing a statement");
	int step;
	while ((step = db_step(st)) == DB_ROW) {
		int64_t state = db_col_int(st, 0);
		if (state >= 0 && (uint64_t)state < n)
			counts[state] = db_col_int(st, 1);
	}
	int rc = step == DB_DONE ? 0 : store_db_fail(s, err, "counting runs");
	store_stmt_put(s, st);
	return rc;
}

/* ---- what runs hold ------------------------------------------------------------------ */

int store_run_supervised(store *s, const char *backend, store_supervised **out, size_t *n,
			 berth_error **err)
{
	*out = NULL;
	*n = 0;
	db_stmt *st;
	store_arg args[] = {STORE_I(BERTH_STATE_RUNNING), STORE_S(backend)};
	/* four columns, not a record's sixty: every berth command asks, and
	 * most often there is no run, or none whose supervisor died */
	int rc = store_prepare_args(s,
				    "SELECT id, supervisor_pid, supervisor_start, started FROM runs"
				    " WHERE state = ?1 AND backend = ?2",
				    args, 2, &st, err);
	if (rc)
		return rc;
	store_supervised *list = NULL;
	size_t cnt = 0, cap = 0;
	int step;
	while ((step = db_step(st)) == DB_ROW) {
		store_supervised *grown = store_grow(list, sizeof(*list), cnt, &cap);
		if (grown)
			list = grown;
		store_supervised *r = grown ? &list[cnt] : NULL;
		if (r)
			*r = (store_supervised){.supervisor_pid = db_col_int(st, 1),
						.supervisor_start = db_col_int(st, 2),
						.started = db_col_int(st, 3)};
		if (!r || store_col_text(st, 0, &r->id)) {
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
			break;
		}
		cnt++;
	}
	if (!rc && step != DB_DONE)
		rc = store_db_fail(s, err, "reading the running runs");
	store_stmt_put(s, st);
	if (rc) {
		store_supervised_free(list, cnt);
		return rc;
	}
	*out = list;
	*n = cnt;
	return 0;
}

void store_supervised_free(store_supervised *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(list[i].id);
	free(list);
}

int store_queued(store *s, const char *backend)
{
	int64_t any = 1;
	store_arg args[] = {STORE_I(BERTH_STATE_PENDING), STORE_S(backend)};
	if (store_select_int(s, "SELECT EXISTS (SELECT 1 FROM runs WHERE state = ?1 AND backend = ?2)",
			     args, 2, &any, NULL))
		return 1; /* unread: a reader looks */
	return any != 0;
}

int store_running(store *s, const char *backend, int64_t sum[4], char **gpu_ids, berth_error **err)
{
	*gpu_ids = NULL;
	db_stmt *st;
	store_arg args[] = {STORE_I(BERTH_STATE_RUNNING), STORE_S(backend)};
	int rc = store_prepare_args(s,
			      "SELECT coalesce(SUM(cpu_milli), 0), coalesce(SUM(mem), 0), coalesce(SUM(gpus), 0),"
			      " coalesce(SUM(disk), 0),"
			      " group_concat(gpu_ids, ',') FROM runs WHERE state = ?1 AND backend = ?2",
			      args, 2, &st, err);
	if (rc)
		return rc;
	if (db_step(st) == DB_ROW) {
		for (int i = 0; i < 4; i++)
			sum[i] = db_col_int(st, i);
		const char *ids = db_col_text(st, 4);
		if (ids && !(*gpu_ids = berth_strdup(ids)))
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
	} else {
		rc = store_db_fail(s, err, "reading the running runs");
	}
	store_stmt_put(s, st);
	return rc;
}

int store_usage(store *s, const char *project, int64_t sum[4], berth_error **err)
{
	db_stmt *st;
	store_arg arg = STORE_S(project);
	/* the queue index (state first) reaches the active runs only; what holds a
	 * quota: a run admitted (Running), or applied to a cluster (a Pending run
	 * of the local backend waits in its queue and holds nothing) */
	int rc = store_prepare_args(s,
			      "SELECT coalesce(SUM(quota_cpu_milli), 0), coalesce(SUM(quota_mem), 0),"
			      " coalesce(SUM(quota_gpus), 0), COUNT(*)"
			      " FROM runs"
			      " WHERE state IN (0, 1) AND project = ?1"
			      " AND (state = 1 OR backend <> 'local')",
			      &arg, 1, &st, err);
	if (rc)
		return rc;
	if (db_step(st) == DB_ROW)
		for (int i = 0; i < 4; i++)
			sum[i] = db_col_int(st, i);
	else
		rc = store_db_fail(s, err, "reading usage");
	store_stmt_put(s, st);
	return rc;
}

int store_quota_waiting(store *s, const char *project, int64_t *n, berth_error **err)
{
	*n = 0;
	store_arg args[] = {STORE_I(BERTH_STATE_PENDING), STORE_S(project)};
	return store_select_int(s, "SELECT COUNT(*) FROM runs WHERE state = ?1 AND project = ?2"
				" AND reason LIKE 'waiting for quota:%'", args, 2, n, err);
}

/* ---- events ------------------------------------------------------------------------ */

int store_event(store *s, const char *run_id, const char *kind, const char *message)
{
	db_stmt *st;
	if (!(st = store_stmt_get(s, "INSERT INTO events (run_id, time, kind, message) VALUES (?1, ?2, ?3, ?4)")))
		return -BERTH_EIO;
	db_bind_text(st, 1, run_id);
	db_bind_int(st, 2, store_now_ms());
	db_bind_text(st, 3, kind);
	db_bind_text(st, 4, message);
	int rc = db_step(st) == DB_DONE ? 0 : -BERTH_EIO;
	store_stmt_put(s, st);
	return rc;
}

int store_event_list(store *s, const char *run_id, store_event_row **out, size_t *n,
		     berth_error **err)
{
	*out = NULL;
	*n = 0;
	db_stmt *st;
	if (!(st = store_stmt_get(s, "SELECT time, kind, message FROM events WHERE run_id = ?1 ORDER BY rowid")))
		return store_db_fail(s, err, "preparing a statement");
	db_bind_text(st, 1, run_id);
	store_event_row *list = NULL;
	size_t cnt = 0, cap = 0;
	int rc = 0, step;
	while ((step = db_step(st)) == DB_ROW) {
		store_event_row *grown = store_grow(list, sizeof(*list), cnt, &cap);
		if (!grown) {
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
			break;
		}
		list = grown;
		store_event_row *e = &list[cnt++];
		*e = (store_event_row){.time = db_col_int(st, 0)};
		if (store_col_text(st, 1, &e->kind) || store_col_text(st, 2, &e->message)) {
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
			break;
		}
	}
	if (!rc && step != DB_DONE)
		rc = store_db_fail(s, err, "reading events");
	store_stmt_put(s, st);
	if (rc) {
		store_event_list_free(list, cnt);
		return rc;
	}
	*out = list;
	*n = cnt;
	return 0;
}

void store_event_list_free(store_event_row *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(list[i].kind);
		free(list[i].message);
	}
	free(list);
}
