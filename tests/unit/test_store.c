/*
 * test_store.c - src/store/store.c at scale: a store of 100,000 runs, made in one
 * transaction through the store's API; every kind of list (every project,
 * one state, one project, a project and a state, a token's projects with
 * and without a state, the scheduler's queue, a watch's wake) read from an index in the
 * order it is shown (EXPLAIN QUERY PLAN names the index and sorts nothing),
 * and walked page by page through berth_run_page with its cursor: newest
 * first, no run twice, none left out, none that the filter refuses; more
 * projects than one query merges, read in parts. Then a
 * store of schema 5 migrated on open, and readers on their own handles
 * while a writer holds its transaction open. Then, on small stores of their
 * own, each typed record: projects, functions, events, samples, tokens, a run's kind,
 * its deletion and the counts by state, with allocation failures injected.
 *
 * With BERTH_TEST_STORE=postgresql (tests/run.sh unit-pg, which starts a
 * PostgreSQL of its own and names it in BERTH_TEST_PG_HOST and _PORT), the
 * same tests on PostgreSQL, each store a database of its own; what only
 * SQLite has (EXPLAIN QUERY PLAN's words, its older schemas) is skipped.
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#include "berth/berth.h"
#include "base/internal.h"
#include "store/pq_dl.h"
#include "store/store.h"
#include "t.h"

#define N 100000

/* A call that returns 0, else a failed check with the error's first message. */
static int ok_(int rc, berth_error *const *err, const char *file, int line, const char *what)
{
	const berth_problem *p = rc && *err ? berth_error_get(*err, 0) : NULL;
	return t_check(rc == 0, file, line, "%s: %d: %s", what, rc, p ? p->message : "");
}
#define OK(call, err) ok_((call), &(err), __FILE__, __LINE__, #call)

/* What run i (its seq, 1..N) is: most of them Succeeded in one of seven
 * projects; one in a thousand in project "rare". */
static const char *project_of(int64_t i)
{
	static const char *const p[] = {"p0", "p1", "p2", "p3", "p4", "p5", "p6"};
	return i % 1000 == 0 ? "rare" : p[i % 7];
}

static berth_state state_of(int64_t i)
{
	if (i % 97 == 0)
		return BERTH_STATE_PENDING;
	if (i % 50 == 0)
		return BERTH_STATE_RUNNING;
	if (i % 7 == 3)
		return BERTH_STATE_FAILED;
	if (i % 13 == 5)
		return BERTH_STATE_STOPPED;
	return BERTH_STATE_SUCCEEDED;
}

static char *home;   /* the data dir: home/berth.db */
static char db[4200];

static bool on_pg(void)
{
	const char *s = getenv("BERTH_TEST_STORE");
	return s && !strcmp(s, "postgresql");
}

/* The URL of database name on the test's PostgreSQL. */
static void pg_url(char *buf, size_t len, const char *name)
{
	const char *host = getenv("BERTH_TEST_PG_HOST"), *port = getenv("BERTH_TEST_PG_PORT");
	snprintf(buf, len, "postgresql:///%s?host=%s&port=%s", name, host ? host : "",
		 port ? port : "5432");
}

/* Where a test's store goes: dir/berth.db, or on PostgreSQL a new database. */
static void where_of(char *buf, size_t len, const char *dir)
{
	static int made_dbs;
	if (!on_pg()) {
		snprintf(buf, len, "%s/berth.db", dir);
		return;
	}
	char why[256], name[64], admin[600], sql[128];
	snprintf(name, sizeof(name), "berth_t%d_%d", (int)getpid(), ++made_dbs);
	pg_url(admin, sizeof(admin), "postgres");
	pg_url(buf, len, name);
	snprintf(sql, sizeof(sql), "CREATE DATABASE %s", name);
	if (t_check(berth_pq_load(why, sizeof(why)) == 0, __FILE__, __LINE__, "%s", why)) {
		PGconn *c = berth_pq.connectdb(admin);
		PGresult *r = c ? berth_pq.exec(c, sql) : NULL;
		t_check(r && berth_pq.result_status(r) == PGRES_COMMAND_OK, __FILE__, __LINE__,
			"%s: %s", sql, c ? berth_pq.error_message(c) : "no connection");
		if (r)
			berth_pq.clear(r);
		if (c)
			berth_pq.finish(c);
	}
}

/* Makes the store of N runs once (the tests share it; none writes to it). */
static int made(void)
{
	static int done = -1;
	if (done >= 0)
		return done;
	done = 0;
	if (!(home = t_temp_dir("berth-store")))
		return 0;
	where_of(db, sizeof(db), home);
	if (on_pg()) /* the handles the tests open on home read it (berth_run_page) */
		setenv("BERTH_STORE", db, 1);
	store *s = NULL;
	berth_error *err = NULL;
	if (!OK(store_open(&s, db, &err), err) || !OK(store_begin(s, &err), err)) {
		berth_error_free(err);
		store_close(s);
		return 0;
	}
	int ok = 1;
	for (int64_t i = 1; ok && i <= N; i++) {
		char id[32];
		snprintf(id, sizeof(id), "r%07lld", (long long)i);
		store_run r = {.info = {.id = id, .name = "job", .project = (char *)project_of(i),
					.backend = "local", .state = state_of(i), .created = 1000 + i,
					.cpu_milli = 100 + i % 4000, .mem = (i % 64) << 20,
					.gpus = i % 3, .exit_code = -1},
			       .uid = -1, .gid = -1, .fs_group = -1};
		ok = OK(store_run_insert(s, &r, &err), err);
	}
	ok = ok && OK(store_commit(s, &err), err);
	berth_error_free(err);
	store_close(s);
	return done = ok;
}

/* ---- plans ---------------------------------------------------------------------- */

/* 120 projects: p0..p6, rare, and 112 with no runs, more than one query
 * merges; in the order of their names, some with runs in each part */
static const char *const *many_projects(void)
{
	static char names[120][16];
	static const char *many[120];
	for (int k = 0; k < 120; k++) {
		if (k < 7)
			snprintf(names[k], sizeof(names[k]), "p%d", k);
		else
			snprintf(names[k], sizeof(names[k]), "%c%03d", k < 63 ? 'o' : 'q', k);
		many[k] = names[k];
	}
	many[119] = "rare";
	return many;
}

static const char *const rare_p1[] = {"p1", "rare", "p1", "nosuch"};

typedef struct plan_case {
	const char *what;
	store_query q;
	const char *want[3]; /* in the plan, each */
} plan_case;

/* Each list is read from the index named, from its cursor on, in its order:
 * no step sorts ("TEMP B-TREE"), none scans an index whole. */
static void test_plans(void)
{
	if (on_pg()) {
		printf("skip test_plans (EXPLAIN QUERY PLAN is SQLite's)\n");
		return;
	}
	if (!made())
		return;
	static const char *const p3[] = {"p3"};
	static const int64_t fit[4] = {1000, 1LL << 30, 1, 0};
	const plan_case cases[] = {
		{"every run", {.state = -1, .limit = 101}, {"SCAN runs"}},
		{"every run, after", {.state = -1, .after = 5000, .limit = 101},
		 {"SEARCH runs USING INTEGER PRIMARY KEY (rowid<?)"}},
		{"a state", {.state = BERTH_STATE_RUNNING, .limit = 101},
		 {"SEARCH runs USING INDEX runs_state (state=?)"}},
		{"a state, after", {.state = BERTH_STATE_RUNNING, .after = 5000, .limit = 101},
		 {"SEARCH runs USING INDEX runs_state (state=? AND rowid<?)"}},
		{"a project", {.projects = p3, .nprojects = 1, .state = -1, .limit = 101},
		 {"MERGE (UNION ALL)", "runs_project (project=? AND state=?)"}},
		{"a project, after",
		 {.projects = p3, .nprojects = 1, .state = -1, .after = 5000, .limit = 101},
		 {"MERGE (UNION ALL)", "runs_project (project=? AND state=? AND rowid<?)",
		  "SEARCH runs USING INTEGER PRIMARY KEY (rowid=?)"}},
		{"a project and a state",
		 {.projects = p3, .nprojects = 1, .state = BERTH_STATE_FAILED, .after = 5000, .limit = 101},
		 {"SEARCH runs USING INDEX runs_project (project=? AND state=? AND rowid<?)"}},
		{"projects", {.projects = rare_p1, .nprojects = 4, .state = -1, .after = 5000, .limit = 101},
		 {"MERGE (UNION ALL)", "runs_project (project=? AND state=? AND rowid<?)"}},
		{"projects and a state",
		 {.projects = rare_p1, .nprojects = 4, .state = BERTH_STATE_PENDING, .after = 5000,
		  .limit = 101},
		 {"MERGE (UNION ALL)", "runs_project (project=? AND state=? AND rowid<?)"}},
		{"120 projects (the first 100)",
		 {.projects = many_projects(), .nprojects = 120, .state = -1, .after = 5000, .limit = 101},
		 {"MERGE (UNION ALL)", "runs_project (project=? AND state=? AND rowid<?)"}},
	};
	store *s = NULL;
	berth_error *err = NULL;
	if (!OK(store_open(&s, db, &err), err))
		goto out;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const plan_case *c = &cases[i];
		char *plan = NULL;
		if (!OK(store_run_query_plan(s, &c->q, &plan, &err), err))
			continue;
		CHECKF(!strstr(plan, "TEMP B-TREE"), "%s: sorts:\n%s", c->what, plan);
		CHECKF(!strstr(plan, "SCAN") || !strcmp(c->want[0], "SCAN runs"),
		       "%s: scans:\n%s", c->what, plan);
		for (size_t k = 0; k < 3 && c->want[k]; k++)
			CHECKF(strstr(plan, c->want[k]) != NULL, "%s: no \"%s\" in:\n%s", c->what,
			       c->want[k], plan);
		free(plan);
	}
	/* the scheduler's queue: the queued runs that fit, from runs_queue, which
	 * holds what each asks for (only runs of one priority and time are sorted
	 * by submission: "RIGHT PART") */
	store_query queue = {.state = BERTH_STATE_PENDING, .queue = true, .backend = "local",
			     .fit = fit};
	char *plan = NULL;
	if (OK(store_run_query_plan(s, &queue, &plan, &err), err)) {
		CHECKF(strstr(plan, "SEARCH runs USING INDEX runs_queue (state=?)") != NULL,
		       "queue:\n%s", plan);
		CHECKF(!strstr(plan, "USE TEMP B-TREE FOR ORDER BY"), "queue:\n%s", plan);
	}
	free(plan);
	/* a watch reads what changed since it looked from runs_rv, whatever its
	 * projects: never a project's every run, sorted */
	const char *const two[] = {"p1", "p2"};
	for (size_t np = 0; np <= 2; np++) {
		plan = NULL;
		if (!OK(store_run_changes_plan(s, two, np, &plan, &err), err))
			continue;
		CHECKF(strstr(plan, "SEARCH runs USING INDEX runs_rv (rv>?)") != NULL &&
			       !strstr(plan, "TEMP B-TREE"),
		       "changes of %zu projects:\n%s", np, plan);
		free(plan);
	}
out:
	berth_error_free(err);
	store_close(s);
}

/* ---- pages ---------------------------------------------------------------------- */

static bool wanted(int64_t i, const char *const *projects, size_t np, int state)
{
	if (state >= 0 && state_of(i) != (berth_state)state)
		return false;
	for (size_t k = 0; k < np; k++)
		if (!strcmp(projects[k], project_of(i)))
			return true;
	return np == 0;
}

/* Walks every page from after (0: the newest) with the cursor each page
 * gives: each run is one the filter wants, newer than every run after it,
 * and every run wanted between two of them, or before the first or after
 * the last, is a gap. Returns the number of runs read. */
static int64_t walk(berth_backend *b, const char *what, const char *const *projects, size_t np,
		    int state, int64_t after, int64_t limit)
{
	int64_t prev = after > 0 ? after : N + 1, count = 0, pages = 0;
	berth_error *err = NULL;
	int bad = 0;
	do {
		berth_run_info **infos = NULL;
		size_t n = 0;
		int64_t next = -1;
		if (!CHECKF(berth_run_page(b, projects, np, state, NULL, after, limit, &infos, &n,
					   &next, &err) == 0, "%s: page %lld", what, (long long)pages))
			break;
		pages++;
		CHECKF(next == 0 || (int64_t)n == limit, "%s: page %lld has %zu runs and a next",
		       what, (long long)pages, n);
		for (size_t k = 0; k < n && bad < 5; k++) {
			int64_t i = strtoll(infos[k]->id + 1, NULL, 10);
			if (!CHECKF(i > 0 && i < prev, "%s: run %lld after run %lld", what,
				    (long long)i, (long long)prev) ||
			    !CHECKF(wanted(i, projects, np, state) &&
					    !strcmp(infos[k]->project, project_of(i)) &&
					    infos[k]->state == state_of(i),
				    "%s: run %lld is not one asked for", what, (long long)i)) {
				bad++;
				continue;
			}
			for (int64_t j = i + 1; j < prev; j++)
				if (!CHECKF(!wanted(j, projects, np, state), "%s: run %lld left out",
					    what, (long long)j)) {
					bad++;
					break;
				}
			prev = i;
			count++;
		}
		CHECKF(next == 0 || next == prev, "%s: next %lld is not the last run (%lld)", what,
		       (long long)next, (long long)prev);
		berth_run_info_list_free(infos, n);
		after = next;
	} while (after > 0 && bad < 5);
	for (int64_t j = 1; j < prev && !bad; j++)
		if (!CHECKF(!wanted(j, projects, np, state), "%s: run %lld left out at the end", what,
			    (long long)j))
			break;
	berth_error_free(err);
	return count;
}

static void test_pages(void)
{
	if (!made())
		return;
	berth_backend *b = NULL;
	berth_error *err = NULL;
	berth_backend_opts o = {.home = home, .passive = true, .cached = true};
	if (!OK(berth_backend_open(&b, "local", &o, &err), err)) {
		berth_error_free(err);
		return;
	}
	static const char *const p3[] = {"p3"}, *const rare[] = {"rare"};
	static const char *const p2p5[] = {"p5", "p2"};
	CHECK_INT(walk(b, "every run", NULL, 0, -1, 0, 1000), N);
	CHECK_INT(walk(b, "every run, from the middle", NULL, 0, -1, 20001, 999), 20000);
	walk(b, "Running", NULL, 0, BERTH_STATE_RUNNING, 0, 100);
	walk(b, "Pending, from the middle", NULL, 0, BERTH_STATE_PENDING, 77777, 13);
	CHECK_INT(walk(b, "rare", rare, 1, -1, 0, 7), N / 1000);
	walk(b, "p3", p3, 1, -1, 0, 1000);
	walk(b, "p3 Failed", p3, 1, BERTH_STATE_FAILED, 0, 50);
	walk(b, "p3 Stopped, from the middle", p3, 1, BERTH_STATE_STOPPED, 60000, 50);
	/* a token's projects: one named twice, one with no runs */
	walk(b, "p1 rare p1 nosuch", rare_p1, 4, -1, 0, 500);
	walk(b, "p1 rare p1 nosuch, Running", rare_p1, 4, BERTH_STATE_RUNNING, 0, 31);
	walk(b, "p5 p2 Pending, from the middle", p2p5, 2, BERTH_STATE_PENDING, 40000, 10);
	/* more projects than one query merges (100 of any state): read in parts */
	CHECK_INT(walk(b, "120 projects, from the middle", many_projects(), 120, -1, 30001, 1000), 30000);
	berth_backend_close(b);
	berth_error_free(err);
}

/* More projects than one query merges: the store reads them in parts and
 * gives the newest of all, no more than the limit. */
static void test_parts(void)
{
	if (!made())
		return;
	store *s = NULL;
	berth_error *err = NULL;
	if (!OK(store_open(&s, db, &err), err))
		goto out;
	store_query q = {.projects = many_projects(), .nprojects = 120, .state = -1, .limit = 10};
	store_run **list = NULL;
	size_t n = 0;
	if (OK(store_run_query(s, &q, &list, &n, &err), err)) {
		CHECK_INT(n, 10);
		for (size_t k = 0; k < n; k++)
			CHECK_INT(list[k]->seq, N - (int64_t)k);
	}
	store_run_list_free(list, n);
	q.state = BERTH_STATE_PENDING;
	q.after = N / 2;
	if (OK(store_run_query(s, &q, &list, &n, &err), err)) {
		CHECK_INT(n, 10);
		int64_t want = N / 2 - 1;
		for (size_t k = 0; k < n; k++, want--) {
			while (state_of(want) != BERTH_STATE_PENDING)
				want--;
			CHECK_INT(list[k]->seq, want);
		}
	}
	store_run_list_free(list, n);
out:
	berth_error_free(err);
	store_close(s);
}

/* ---- schema --------------------------------------------------------------------- */

/* SQL on the database file itself, past the store's API (a schema set back
 * by hand): 0, or a failed check. */
static int raw_exec(const char *path, const char *sql)
{
	sqlite3 *conn = NULL;
	char *msg = NULL;
	int rc = sqlite3_open(path, &conn);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(conn, sql, NULL, NULL, &msg);
	t_check(rc == SQLITE_OK, __FILE__, __LINE__, "%s: %s", sql, msg ? msg : sqlite3_errstr(rc));
	sqlite3_free(msg);
	sqlite3_close(conn);
	return rc == SQLITE_OK ? 0 : -1;
}

/* The first column of the first row, as text (malloc'd; NULL when none). */
static char *raw_text(const char *path, const char *sql)
{
	sqlite3 *conn = NULL;
	sqlite3_stmt *st = NULL;
	char *out = NULL;
	int rc = sqlite3_open(path, &conn);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(conn, sql, -1, &st, NULL);
	CHECK_INT(rc, SQLITE_OK);
	if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		out = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(conn);
	return out;
}

/* A store of schema 5 (its runs_project, no runs_state) is migrated on open,
 * its runs kept; a store newer than this berth is refused. */
static void test_migration(void)
{
	if (on_pg()) {
		printf("skip test_migration (SQLite's older schemas; PostgreSQL's: test_pg_store)\n");
		return;
	}
	char *dir = t_temp_dir("berth-store5");
	if (!dir)
		return;
	char path[4200];
	snprintf(path, sizeof(path), "%s/berth.db", dir);
	store *s = NULL;
	berth_error *err = NULL;
	if (!OK(store_open(&s, path, &err), err))
		goto out;
	store_run r = {.info = {.id = "old1", .name = "job", .project = "p", .backend = "local",
				.state = BERTH_STATE_SUCCEEDED, .created = 1}, .uid = -1, .gid = -1,
		       .fs_group = -1};
	CHECK_INT(store_run_insert(s, &r, &err), 0);
	store_close(s);
	s = NULL;
	/* back to schema 5 as it was */
	if (raw_exec(path, "DROP INDEX runs_state; DROP INDEX runs_project;"
			   " CREATE INDEX runs_project ON runs(project, created);"
			   " ALTER TABLE runs DROP COLUMN quota_cpu_milli;"
			   " ALTER TABLE runs DROP COLUMN quota_mem;"
			   " ALTER TABLE runs DROP COLUMN quota_gpus;"
			   " ALTER TABLE runs DROP COLUMN workers;"
			   " ALTER TABLE runs DROP COLUMN worker_states;"
			   " ALTER TABLE runs DROP COLUMN worker_env;"
			   " ALTER TABLE runs DROP COLUMN launcher;"
			   " ALTER TABLE runs DROP COLUMN quota_of;"
			   " ALTER TABLE runs DROP COLUMN qlim_cpu_milli;"
			   " ALTER TABLE runs DROP COLUMN qlim_mem;"
			   " ALTER TABLE runs DROP COLUMN qlim_gpus;"
			   " ALTER TABLE runs DROP COLUMN qlim_runs;"
			   " ALTER TABLE runs DROP COLUMN labels;"
			   " DROP TRIGGER runs_rv_insert; DROP TRIGGER runs_rv_update;"
			   " DROP TRIGGER runs_rv_delete; DROP INDEX runs_rv;"
			   " ALTER TABLE runs DROP COLUMN rv; DROP TABLE rv; DROP TABLE tombstones;"
			   " DROP TABLE samples;"
			   " ALTER TABLE runs DROP COLUMN submitted_by;"
			   " ALTER TABLE tokens DROP COLUMN expires;"
			   " ALTER TABLE tokens DROP COLUMN revoked;"
			   " ALTER TABLE tokens DROP COLUMN last_used;"
			   " ALTER TABLE tokens DROP COLUMN maker;"
			   " PRAGMA user_version = 5"))
		goto out;
	if (!OK(store_open(&s, path, &err), err))
		goto out;
	char *sql = raw_text(path, "PRAGMA user_version");
	CHECK_STR(sql, "17");
	free(sql);
	sql = raw_text(path, "SELECT sql FROM sqlite_master WHERE name = 'runs_state'");
	CHECK_STR(sql, "CREATE INDEX runs_state ON runs(state)");
	free(sql);
	sql = raw_text(path, "SELECT sql FROM sqlite_master WHERE name = 'runs_project'");
	CHECK_STR(sql, "CREATE INDEX runs_project ON runs(project, state)");
	free(sql);
	store_run *old = NULL;
	CHECK_INT(store_run_get(s, "old1", &old, &err), 0);
	CHECK(old && !strcmp(old->info.project, "p"));
	CHECK(old && old->info.workers == 1); /* a run from before distributed jobs: one worker */
	/* a run from before quotas were recorded: its quota is the queue's policy's */
	CHECK(old && old->quota_of == NULL && old->qlim_cpu_milli == -1 && old->qlim_runs == -1);
	CHECK(old && old->info.labels == NULL); /* and from before labels: none */
	store_run_free(old);
	store_close(s);
	/* a version that its tables do not match (another build's migrations): said so, and
	 * nothing of the failed step stays */
	raw_exec(path, "PRAGMA user_version = 15");
	s = NULL;
	CHECK_INT(store_open(&s, path, &err), -BERTH_EIO);
	const berth_problem *p = err ? berth_error_get(err, 0) : NULL;
	CHECK(p && strstr(p->message, "cannot migrate it from schema 15 to 16 (") &&
	      strstr(p->message, "maker") && strstr(p->message, "another build of berth"));
	sql = raw_text(path, "PRAGMA user_version");
	CHECK_STR(sql, "15");
	free(sql);
	berth_error_free(err);
	err = NULL;
	/* from a berth that knows more */
	raw_exec(path, "PRAGMA user_version = 99");
	s = NULL;
	berth_error_free(err);
	err = NULL;
	CHECK_INT(store_open(&s, path, &err), -BERTH_EIO);
	CHECK(s == NULL);
out:
	berth_error_free(err);
	store_close(s);
	t_rm_rf(dir);
	free(dir);
}

/* ---- readers -------------------------------------------------------------------- */

typedef struct reader {
	int64_t seen;    /* runs in state Pending, newest first, first page */
	int64_t first;   /* the newest run's seq */
	int rc;
} reader;

static void *read_page(void *arg)
{
	reader *r = arg;
	store *s = NULL;
	berth_error *err = NULL;
	r->rc = store_open(&s, db, &err);
	for (int k = 0; !r->rc && k < 20; k++) {
		store_query q = {.state = -1, .limit = 100};
		store_run **list = NULL;
		size_t n = 0;
		r->rc = store_run_query(s, &q, &list, &n, &err);
		if (!r->rc && n) {
			r->first = list[0]->seq;
			r->seen = (int64_t)n;
		}
		store_run_list_free(list, n);
	}
	berth_error_free(err);
	store_close(s);
	return NULL;
}

/* Four threads, each with a handle of its own, read pages while a writer
 * holds a transaction open with a run written: none waits for it (each
 * would fail after the 10 s of the busy wait), and none sees the run before
 * the commit. */
static void test_readers(void)
{
	if (!made())
		return;
	store *w = NULL;
	berth_error *err = NULL;
	if (!OK(store_open(&w, db, &err), err) || !OK(store_begin(w, &err), err))
		goto out;
	store_run r = {.info = {.id = "uncommitted", .name = "job", .project = "p0",
				.backend = "local", .created = 1}, .uid = -1, .gid = -1, .fs_group = -1};
	CHECK_INT(store_run_insert(w, &r, &err), 0);
	reader rd[4];
	pthread_t th[4];
	memset(rd, 0, sizeof(rd));
	for (int k = 0; k < 4; k++)
		CHECK_INT(pthread_create(&th[k], NULL, read_page, &rd[k]), 0);
	for (int k = 0; k < 4; k++) {
		pthread_join(th[k], NULL);
		CHECK_INT(rd[k].rc, 0);
		CHECK_INT(rd[k].seen, 100);
		CHECK_INT(rd[k].first, N);
	}
	store_rollback(w);
out:
	berth_error_free(err);
	store_close(w);
}

/* ---- records: projects, functions, events, tokens, runs ------------------------ */

/* A new, empty store of its own in *dir (NULL, and a failed check, when it
 * cannot be made). */
static char fresh_where[4200]; /* where the last fresh store is */

static store *fresh(char **dir)
{
	*dir = t_temp_dir("berth-records");
	if (!*dir)
		return NULL;
	char *path = fresh_where;
	where_of(fresh_where, sizeof(fresh_where), *dir);
	store *s = NULL;
	berth_error *err = NULL;
	OK(store_open(&s, path, &err), err);
	berth_error_free(err);
	return s;
}

static void done(store *s, char *dir)
{
	store_close(s);
	if (dir)
		t_rm_rf(dir);
	free(dir);
}

static void add_run(store *s, const char *id, const char *backend, berth_state state)
{
	berth_error *err = NULL;
	store_run r = {.info = {.id = (char *)id, .name = "job", .project = "p",
				.backend = (char *)backend, .state = state, .created = 1},
		       .uid = -1, .gid = -1, .fs_group = -1};
	OK(store_run_insert(s, &r, &err), err);
	berth_error_free(err);
}

/* The ids of the runs q selects with the label selector sel, newest first,
 * as "a b c"; "error: MESSAGE" when sel is refused. */
static char *selected(store *s, store_query q, const char *sel)
{
	static char out[256];
	berth_error *err = NULL;
	label_selector labels;
	store_run **list = NULL;
	size_t n = 0;
	int rc = selector_parse(sel, &labels, &err);
	q.labels = &labels;
	if (!rc)
		rc = store_run_query(s, &q, &list, &n, &err);
	const berth_problem *p = rc ? berth_error_get(err, 0) : NULL;
	snprintf(out, sizeof(out), "%s%s", p ? "error: " : "", p ? p->message : "");
	for (size_t i = 0; i < n; i++)
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", i ? " " : "",
			 list[i]->info.id);
	store_run_list_free(list, n);
	selector_release(&labels);
	berth_error_free(err);
	return out;
}

/* Label selectors: kubectl's equality-based terms, each of them held, also
 * with a project and a state (the merge of runs_project's arms) and a page;
 * a value is matched whole (team=a is not team=ab); != and !key select runs
 * without the label; what is not a selector is refused with its reason. */
static void test_labels(void)
{
	char *dir;
	store *s = fresh(&dir);
	berth_error *err = NULL;
	if (!s)
		goto out;
	static const struct {
		const char *id, *project, *labels;
		berth_state state;
	} runs[] = {
		{"r1", "p", "team=a,tier=gpu", BERTH_STATE_SUCCEEDED},
		{"r2", "p", "team=ab", BERTH_STATE_RUNNING},
		{"r3", "q", "team=a,app.kubernetes.io/part-of=x", BERTH_STATE_RUNNING},
		{"r4", "q", NULL, BERTH_STATE_SUCCEEDED},
		{"r5", "p", "empty=,team=b", BERTH_STATE_SUCCEEDED},
	};
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		store_run r = {.info = {.id = (char *)runs[i].id, .name = "job",
					.project = (char *)runs[i].project, .backend = "local",
					.state = runs[i].state, .created = 1, .labels = (char *)runs[i].labels},
			       .uid = -1, .gid = -1, .fs_group = -1};
		OK(store_run_insert(s, &r, &err), err);
	}
	store_query all = {.state = -1};
	CHECK_STR(selected(s, all, NULL), "r5 r4 r3 r2 r1");
	CHECK_STR(selected(s, all, "team=a"), "r3 r1");
	CHECK_STR(selected(s, all, "team==a"), "r3 r1");
	CHECK_STR(selected(s, all, " team = a , tier=gpu "), "r1");
	CHECK_STR(selected(s, all, "team!=a"), "r5 r4 r2");
	CHECK_STR(selected(s, all, "team"), "r5 r3 r2 r1");
	CHECK_STR(selected(s, all, "!team"), "r4");
	CHECK_STR(selected(s, all, "empty="), "r5");
	CHECK_STR(selected(s, all, "empty"), "r5");
	CHECK_STR(selected(s, all, "app.kubernetes.io/part-of=x"), "r3");
	CHECK_STR(selected(s, all, "team=c"), "");
	/* a label is not found inside another's value ("=a," in "team=a,") */
	CHECK_STR(selected(s, all, "tier=gpu,team"), "r1");
	const char *const pq[] = {"p", "q"};
	store_query projects = {.projects = pq, .nprojects = 2, .state = -1};
	CHECK_STR(selected(s, projects, "team=a"), "r3 r1");
	store_query one = {.projects = pq, .nprojects = 1, .state = BERTH_STATE_SUCCEEDED};
	CHECK_STR(selected(s, one, "team"), "r5 r1");
	store_query running = {.state = BERTH_STATE_RUNNING, .limit = 1};
	CHECK_STR(selected(s, running, "team!=b"), "r3");
	/* refused, with the reason */
	CHECK_STR(selected(s, all, "team=a,,x=y"), "error: label selector \"team=a,,x=y\": an empty term");
	CHECK_STR(selected(s, all, "Team Name=a"),
		  "error: label selector \"Team Name=a\": the key \"Team Name\" must consist of "
		  "letters, digits, '-', '_' and '.'");
	CHECK(strstr(selected(s, all, "env in (a,b)"), "\"env in (a\" is not a term: only equality-based") != NULL);
	CHECK(strstr(selected(s, all, "team=a=b"), "\"a=b\" is not a label value") != NULL);
	CHECK(strstr(selected(s, all, "team=-a"), "the value \"-a\"") != NULL);
	char many[200] = "";
	for (int i = 0; i < 33; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many), "%sk%d", i ? "," : "", i);
	CHECK(strstr(selected(s, all, many), "more than 32 terms") != NULL);
	char *longer = calloc(1100, 1);
	if (longer) {
		memset(longer, 'a', 1099);
		CHECK_STR(selected(s, all, longer), "error: a label selector is at most 1024 bytes");
		free(longer);
	}
out:
	berth_error_free(err);
	done(s, dir);
}

/* Projects by name: every one, or those a token names (each once, the
 * unknown left out); adding one twice says that it existed. */
static void test_projects(void)
{
	char *dir;
	store *s = fresh(&dir);
	berth_error *err = NULL;
	if (!s)
		goto out;
	int64_t before = store_now_ms();
	CHECK_INT(store_project_add(s, "b", &err), 1);
	CHECK_INT(store_project_add(s, "a", &err), 1);
	CHECK_INT(store_project_add(s, "c", &err), 1);
	CHECK_INT(store_project_add(s, "a", &err), 0);
	store_project *list = NULL;
	size_t n = 0;
	if (OK(store_project_list(s, NULL, 0, true, &list, &n, &err), err) && n == 3) {
		CHECK_STR(list[0].name, "a");
		CHECK_STR(list[1].name, "b");
		CHECK_STR(list[2].name, "c");
		CHECK(list[0].created >= before && list[0].created <= store_now_ms());
	}
	CHECK_INT(n, 3);
	store_project_list_free(list, n);
	const char *const some[] = {"c", "zz", "a", "c"};
	if (OK(store_project_list(s, some, 4, false, &list, &n, &err), err) && n == 2) {
		CHECK_STR(list[0].name, "a");
		CHECK_STR(list[1].name, "c");
	}
	CHECK_INT(n, 2);
	store_project_list_free(list, n);
	/* a token of no project sees none; all wins over names */
	CHECK_INT(store_project_list(s, NULL, 0, false, &list, &n, &err), 0);
	CHECK_INT(n, 0);
	store_project_list_free(list, n);
	CHECK_INT(store_project_list(s, some, 1, true, &list, &n, &err), 0);
	CHECK_INT(n, 3);
	store_project_list_free(list, n);
out:
	berth_error_free(err);
	done(s, dir);
}

/* A function is new once, then replaced (created kept, updated moved);
 * listed by name within its project; deleted once. */
static void test_functions(void)
{
	char *dir;
	store *s = fresh(&dir);
	berth_error *err = NULL;
	if (!s)
		goto out;
	CHECK_INT(store_function_put(s, "p", "train", "v1", &err), 1);
	store_function *f = NULL;
	CHECK_INT(store_function_get(s, "p", "train", &f, &err), 0);
	int64_t created = f ? f->created : 0;
	store_function_free(f);
	CHECK_INT(store_function_put(s, "p", "train", "v2", &err), 0);
	CHECK_INT(store_function_put(s, "p", "eval", "e", &err), 1);
	CHECK_INT(store_function_put(s, "q", "train", "other", &err), 1);
	f = NULL;
	if (OK(store_function_get(s, "p", "train", &f, &err), err) && f) {
		CHECK_STR(f->project, "p");
		CHECK_STR(f->name, "train");
		CHECK_STR(f->spec, "v2");
		CHECK_INT(f->created, created);
		CHECK(f->updated >= f->created && f->created > 0);
	}
	CHECK(f != NULL);
	store_function_free(f);
	/* none: no error, nothing */
	f = (store_function *)&f;
	CHECK_INT(store_function_get(s, "p", "nosuch", &f, &err), 0);
	CHECK(f == NULL);
	CHECK_INT(store_function_get(s, "nosuch", "train", &f, &err), 0);
	CHECK(f == NULL);
	store_function *list = NULL;
	size_t n = 0;
	if (OK(store_function_list(s, "p", &list, &n, &err), err) && n == 2) {
		CHECK_STR(list[0].name, "eval");
		CHECK_STR(list[1].name, "train");
		CHECK_STR(list[1].spec, "v2");
	}
	CHECK_INT(n, 2);
	store_function_list_free(list, n);
	CHECK_INT(store_function_list(s, "empty", &list, &n, &err), 0);
	CHECK_INT(n, 0);
	store_function_list_free(list, n);
	CHECK_INT(store_function_delete(s, "p", "train", &err), 1);
	CHECK_INT(store_function_delete(s, "p", "train", &err), 0);
	CHECK_INT(store_function_get(s, "p", "train", &f, &err), 0);
	CHECK(f == NULL);
	/* the other project's function of the same name stays */
	CHECK_INT(store_function_get(s, "q", "train", &f, &err), 0);
	CHECK(f && !strcmp(f->spec, "other"));
	store_function_free(f);
	store_function_free(NULL);
out:
	berth_error_free(err);
	done(s, dir);
}

/* A run's events in the order they were recorded, with no message when
 * none was given; another run's are not among them. */
static void test_events(void)
{
	char *dir;
	store *s = fresh(&dir);
	berth_error *err = NULL;
	if (!s)
		goto out;
	int64_t before = store_now_ms();
	CHECK_INT(store_event(s, "r1", "Submitted", "queued"), 0);
	CHECK_INT(store_event(s, "r2", "Submitted", "other"), 0);
	CHECK_INT(store_event(s, "r1", "Started", NULL), 0);
	CHECK_INT(store_event(s, "r1", "Accepted", "a"), 0);
	store_event_row *list = NULL;
	size_t n = 0;
	if (OK(store_event_list(s, "r1", &list, &n, &err), err) && n == 3) {
		CHECK_STR(list[0].kind, "Submitted");
		CHECK_STR(list[0].message, "queued");
		CHECK_STR(list[1].kind, "Started");
		CHECK(list[1].message == NULL);
		CHECK_STR(list[2].kind, "Accepted");
		CHECK(list[0].time >= before && list[2].time >= list[0].time);
	}
	CHECK_INT(n, 3);
	store_event_list_free(list, n);
	CHECK_INT(store_event_list(s, "nosuch", &list, &n, &err), 0);
	CHECK_INT(n, 0);
	store_event_list_free(list, n);
out:
	berth_error_free(err);
	done(s, dir);
}

/* Samples: a series read in pages of at most max, each ending at a whole t,
 * the next from its last t: none missed, none twice; a worker's series thinned
 * to STORE_SAMPLES, keeping its span. */
static void test_samples(void)
{
	char *dir;
	store *s = fresh(&dir);
	berth_error *err = NULL;
	if (!s)
		goto out;
	/* 10 rounds of 3 workers, one t a round */
	for (int64_t round = 0; round < 10; round++)
		for (int64_t rank = 0; rank < 3; rank++) {
			store_sample x = {.rank = rank, .t = 1000 + round * 100, .cpu_milli = round,
					  .mem = rank, .gpu_util = -1, .gpu_mem = -1};
			CHECK_INT(store_sample_add(s, "r1", &x, &err), 0);
		}
	int64_t after = 0;
	size_t seen = 0, pages = 0;
	for (; pages < 20; pages++) {
		store_sample *list = NULL;
		size_t n = 0;
		if (!OK(store_sample_list(s, "r1", after, 7, &list, &n, &err), err))
			break;
		CHECKF(n <= 7 && n % 3 == 0, "page %zu: %zu samples", pages, n);
		for (size_t i = 0; i < n; i++)
			CHECKF(list[i].t == 1000 + (int64_t)(seen + i) / 3 * 100 &&
				       list[i].rank == (int64_t)(seen + i) % 3,
			       "sample %zu: t %lld rank %lld", seen + i, (long long)list[i].t,
			       (long long)list[i].rank);
		seen += n;
		if (n)
			after = list[n - 1].t;
		free(list);
		if (!n)
			break;
	}
	CHECK_INT(seen, 30);
	CHECK_INT(pages, 5); /* 6 a page, then none */
	store_sample *all = NULL;
	size_t n = 0;
	if (OK(store_sample_list(s, "r1", 0, 0, &all, &n, &err), err))
		CHECK_INT(n, 30);
	free(all);
	/* one worker past STORE_SAMPLES: every other older one goes, the first and last stay */
	int thinned = 0;
	for (int64_t i = 0; i < STORE_SAMPLES + 1; i++) {
		store_sample x = {.rank = 0, .t = 1 + i, .gpu_util = -1, .gpu_mem = -1};
		int rc = store_sample_add(s, "r2", &x, &err);
		CHECKF(rc >= 0, "sample %lld: %d", (long long)i, rc);
		thinned += rc > 0;
	}
	CHECK_INT(thinned, 1);
	if (OK(store_sample_list(s, "r2", 0, 0, &all, &n, &err), err) && n) {
		CHECKF(n <= STORE_SAMPLES / 2 + 1, "%zu samples kept", n);
		CHECK_INT(all[n - 1].t, STORE_SAMPLES + 1);
	}
	free(all);
	/* each worker's newest sample, of the Running runs alone: r3 has three workers, of
	 * which 1 has none yet; r4 has ended; r1's samples have no run */
	store_run r3 = {.info = {.id = "r3", .name = "j", .project = "p3", .backend = "local",
				 .state = BERTH_STATE_RUNNING, .created = 1, .workers = 3},
			.uid = -1, .gid = -1, .fs_group = -1};
	store_run r4 = r3;
	r4.info.id = "r4";
	r4.info.state = BERTH_STATE_SUCCEEDED;
	CHECK_INT(store_run_insert(s, &r3, &err), 0);
	CHECK_INT(store_run_insert(s, &r4, &err), 0);
	static const int64_t ts[] = {300, 100, 200}; /* out of order: the newest is not the last */
	for (size_t i = 0; i < 3; i++)
		for (int64_t rank = 0; rank < 3; rank += 2) {
			store_sample x = {.rank = rank, .t = ts[i], .cpu_milli = ts[i] + rank,
					  .gpu_util = -1, .gpu_mem = -1};
			CHECK_INT(store_sample_add(s, "r3", &x, &err), 0);
			CHECK_INT(store_sample_add(s, "r4", &x, &err), 0);
		}
	store_sample_of *latest = NULL;
	if (OK(store_sample_latest(s, &latest, &n, &err), err)) {
		CHECK_INT(n, 2);
		for (size_t i = 0; i < n && i < 2; i++) {
			CHECK_STR(latest[i].id, "r3");
			CHECK_STR(latest[i].project, "p3");
			CHECK_INT(latest[i].x.rank, (int64_t)i * 2);
			CHECK_INT(latest[i].x.t, 300);
			CHECK_INT(latest[i].x.cpu_milli, 300 + (int64_t)i * 2);
		}
		store_sample_of_free(latest, n);
	}
	/* a record's worker count is read no further than BERTH_WORKERS_MAX (a store
	 * restored from elsewhere may say anything) */
	store_run r5 = r3;
	r5.info.id = "r5";
	r5.info.workers = BERTH_WORKERS_MAX + 5;
	CHECK_INT(store_run_insert(s, &r5, &err), 0);
	for (int64_t rank = BERTH_WORKERS_MAX - 1; rank <= BERTH_WORKERS_MAX; rank++) {
		store_sample x = {.rank = rank, .t = 500, .gpu_util = -1, .gpu_mem = -1};
		CHECK_INT(store_sample_add(s, "r5", &x, &err), 0);
	}
	latest = NULL;
	if (OK(store_sample_latest(s, &latest, &n, &err), err)) {
		CHECK_INT(n, 3);
		if (n == 3) {
			CHECK_STR(latest[2].id, "r5");
			CHECK_INT(latest[2].x.rank, BERTH_WORKERS_MAX - 1);
		}
		store_sample_of_free(latest, n);
	}
out:
	berth_error_free(err);
	done(s, dir);
}

/* Tokens: unique by id and by hash, found by hash, listed oldest first
 * (then by id), deleted once. */
static void test_tokens(void)
{
	char *dir;
	store *s = fresh(&dir);
	berth_error *err = NULL;
	if (!s)
		goto out;
	store_token t1 = {.id = "t1", .role = 2, .projects = "a,b", .description = "ci",
			  .created = 5000, .expires = 90000};
	store_token t2 = {.id = "t2", .role = 3, .projects = "*", .created = 3000};
	store_token t0 = {.id = "t0", .role = 1, .projects = "a", .created = 5000};
	memset(t1.hash, 1, sizeof(t1.hash));
	memset(t2.hash, 2, sizeof(t2.hash));
	memset(t0.hash, 0, sizeof(t0.hash));
	CHECK_INT(store_token_insert(s, &t1, 0, 0, &err), 0);
	CHECK_INT(store_token_insert(s, &t2, 0, 0, &err), 0);
	CHECK_INT(store_token_insert(s, &t0, 0, 0, &err), 0);
	/* the same id, the same hash */
	store_token again = t1;
	memset(again.hash, 9, sizeof(again.hash));
	CHECK_INT(store_token_insert(s, &again, 0, 0, &err), -BERTH_ECONFLICT);
	again = t2;
	again.id = "t9";
	CHECK_INT(store_token_insert(s, &again, 0, 0, &err), -BERTH_ECONFLICT);
	berth_error_free(err);
	err = NULL;

	store_token *t = NULL;
	if (OK(store_token_find(s, t1.hash, &t, &err), err) && t) {
		CHECK_STR(t->id, "t1");
		CHECK_INT(t->role, 2);
		CHECK_STR(t->projects, "a,b");
		CHECK_STR(t->description, "ci");
		CHECK_INT(t->created, 5000);
		CHECK_INT(t->expires, 90000);
		CHECK_INT(t->revoked, 0);
		CHECK_INT(t->last_used, 0);
		CHECK(!memcmp(t->hash, t1.hash, sizeof(t1.hash)));
	}
	CHECK(t != NULL);
	store_token_free(t);
	unsigned char unknown[STORE_TOKEN_HASH];
	memset(unknown, 7, sizeof(unknown));
	t = (store_token *)&t;
	CHECK_INT(store_token_find(s, unknown, &t, &err), 0);
	CHECK(t == NULL);

	store_token *list = NULL;
	size_t n = 0;
	if (OK(store_token_list(s, &list, &n, &err), err) && n == 3) {
		CHECK_STR(list[0].id, "t2");
		CHECK(list[0].description == NULL);
		CHECK_INT(list[0].role, 3);
		CHECK_STR(list[0].projects, "*");
		CHECK_STR(list[1].id, "t0"); /* created as t1: by id */
		CHECK_STR(list[2].id, "t1");
	}
	CHECK_INT(n, 3);
	store_token_list_free(list, n);
	/* revoked: kept (its holder is told why it is refused), revoked once */
	CHECK_INT(store_token_revoke(s, "t1", 7000, &err), 1);
	CHECK_INT(store_token_revoke(s, "t1", 8000, &err), 0);
	CHECK_INT(store_token_revoke(s, "nope", 8000, &err), 0);
	CHECK_INT(store_token_touch(s, "t1", 7500, &err), 0);
	if (OK(store_token_get(s, "t1", &t, &err), err) && t) {
		CHECK_INT(t->revoked, 7000);
		CHECK_INT(t->last_used, 7500);
		CHECK_INT(t->expires, 90000);
	}
	CHECK(t != NULL);
	store_token_free(t);
	t = (store_token *)&t;
	CHECK_INT(store_token_get(s, "nope", &t, &err), 0);
	CHECK(t == NULL);
	/* a token made by one revoked (or gone) meanwhile is not made: the revocation
	 * took what its maker had made, and this one came after */
	store_token made = {.id = "m1", .role = 1, .projects = "a", .created = 9000, .maker = "t1"};
	memset(made.hash, 5, sizeof(made.hash));
	CHECK_INT(store_token_insert(s, &made, 0, 0, &err), -BERTH_EAUTH);
	made.maker = "nope";
	CHECK_INT(store_token_insert(s, &made, 0, 0, &err), -BERTH_EAUTH);
	berth_error_free(err);
	err = NULL;
	t = (store_token *)&t;
	CHECK_INT(store_token_get(s, "m1", &t, &err), 0);
	CHECK(t == NULL);
	made.maker = "t2";
	CHECK_INT(store_token_insert(s, &made, 0, 0, &err), 0);
	if (OK(store_token_get(s, "m1", &t, &err), err) && t)
		CHECK_STR(t->maker, "t2");
	CHECK(t != NULL);
	store_token_free(t);
	store_token_free(NULL);
out:
	berth_error_free(err);
	done(s, dir);
}

/* A run's kind and whether it exists; counts by state; a deletion takes
 * the run and its events, commits on its own, and is undone with the
 * transaction of its caller. */
static void test_run_records(void)
{
	char *dir;
	store *s = fresh(&dir);
	berth_error *err = NULL;
	store *other = NULL;
	if (!s)
		goto out;
	add_run(s, "l1", "local", BERTH_STATE_SUCCEEDED);
	add_run(s, "l2", "local", BERTH_STATE_RUNNING);
	add_run(s, "k1", "kubernetes", BERTH_STATE_SUCCEEDED);
	add_run(s, "k2", "kubernetes", BERTH_STATE_FAILED);
	char *kind = NULL;
	CHECK_INT(store_run_kind(s, "k1", &kind, &err), 0);
	CHECK_STR(kind, "kubernetes");
	free(kind);
	CHECK_INT(store_run_kind(s, "l1", &kind, &err), 0);
	CHECK_STR(kind, "local");
	free(kind);
	kind = (char *)"x";
	CHECK_INT(store_run_kind(s, "nosuch", &kind, &err), 0);
	CHECK(kind == NULL);
	CHECK_INT(store_run_exists(s, "l2", &err), 1);
	CHECK_INT(store_run_exists(s, "nosuch", &err), 0);

	int64_t counts[5] = {9, 9, 9, 9, 9};
	CHECK_INT(store_run_count_by_state(s, counts, 5, &err), 0);
	CHECK_INT(counts[BERTH_STATE_PENDING], 0);
	CHECK_INT(counts[BERTH_STATE_RUNNING], 1);
	CHECK_INT(counts[BERTH_STATE_SUCCEEDED], 2);
	CHECK_INT(counts[BERTH_STATE_FAILED], 1);
	CHECK_INT(counts[BERTH_STATE_STOPPED], 0);
	/* fewer slots than states: the others are not counted, nor written */
	int64_t two[3] = {9, 9, 9};
	CHECK_INT(store_run_count_by_state(s, two, 2, &err), 0);
	CHECK_INT(two[BERTH_STATE_RUNNING], 1);
	CHECK_INT(two[2], 9);

	CHECK_INT(store_event(s, "k1", "Submitted", "m"), 0);
	CHECK_INT(store_event(s, "k2", "Submitted", "m"), 0);
	/* undone with the caller's transaction */
	if (OK(store_begin(s, &err), err)) {
		CHECK_INT(store_run_delete(s, "k1", &err), 1);
		CHECK_INT(store_run_exists(s, "k1", &err), 0);
		store_rollback(s);
	}
	CHECK_INT(store_run_exists(s, "k1", &err), 1);
	store_event_row *ev = NULL;
	size_t n = 0;
	CHECK_INT(store_event_list(s, "k1", &ev, &n, &err), 0);
	CHECK_INT(n, 1);
	store_event_list_free(ev, n);
	/* committed with it */
	if (OK(store_begin(s, &err), err)) {
		CHECK_INT(store_run_delete(s, "k1", &err), 1);
		OK(store_commit(s, &err), err);
	}
	CHECK_INT(store_run_exists(s, "k1", &err), 0);
	CHECK_INT(store_event_list(s, "k1", &ev, &n, &err), 0);
	CHECK_INT(n, 0);
	store_event_list_free(ev, n);
	/* on its own: committed, another handle sees it gone */
	const char *path = fresh_where;
	CHECK_INT(store_run_delete(s, "k2", &err), 1);
	CHECK_INT(store_run_delete(s, "k2", &err), 0);
	if (OK(store_open(&other, path, &err), err)) {
		CHECK_INT(store_run_exists(other, "k2", &err), 0);
		CHECK_INT(store_event_list(other, "k2", &ev, &n, &err), 0);
		CHECK_INT(n, 0);
		store_event_list_free(ev, n);
		CHECK_INT(store_run_exists(other, "l1", &err), 1);
	}
	/* and the handle is out of any transaction: store_begin works */
	if (OK(store_begin(s, &err), err))
		OK(store_commit(s, &err), err);
out:
	berth_error_free(err);
	store_close(other);
	done(s, dir);
}

/* data_version moves when another handle commits, not for the handle's own writes. */
static void test_data_version(void)
{
	char *dir;
	store *s = fresh(&dir), *w = NULL;
	berth_error *err = NULL;
	if (!s)
		goto out;
	const char *path = fresh_where;
	int64_t v0 = -1, v1 = -1, v2 = -1;
	CHECK_INT(store_data_version(s, &v0, &err), 0);
	add_run(s, "own", "local", BERTH_STATE_PENDING);
	CHECK_INT(store_data_version(s, &v1, &err), 0);
	if (!on_pg()) /* PostgreSQL's is the store's version (rv): its own writes move it too */
		CHECK_INT(v1, v0);
	if (OK(store_open(&w, path, &err), err))
		add_run(w, "theirs", "local", BERTH_STATE_PENDING);
	CHECK_INT(store_data_version(s, &v2, &err), 0);
	CHECK(v2 != v1);
out:
	berth_error_free(err);
	store_close(w);
	done(s, dir);
}

/* Who holds the WAL index's dead man switch (byte 128 of PATH-shm), as a
 * process that opens the store now finds it (F_GETLK, asked by a child of
 * fork: the caller's own POSIX locks are not reported to itself): 'n' nobody
 * (the opener would build the index again from the WAL), 'p' a process's
 * lock (SQLite's connection), 'o' an open file description's, '?' the probe
 * failed. */
static char dms_holder(const char *path)
{
	char shm[4300];
	snprintf(shm, sizeof(shm), "%s-shm", path);
	int pfd[2];
	if (pipe(pfd))
		return '?';
	pid_t pid = fork();
	if (pid == 0) {
		char c = '?';
		int fd = open(shm, O_RDONLY | O_CLOEXEC);
		struct flock l = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 128, .l_len = 1};
		if (fd >= 0 && fcntl(fd, F_GETLK, &l) == 0)
			c = l.l_type == F_UNLCK ? 'n' : l.l_pid == -1 ? 'o' : 'p';
		_exit(write(pfd[1], &c, 1) == 1 ? 0 : 1);
	}
	char c = '?';
	close(pfd[1]);
	if (pid < 0 || read(pfd[0], &c, 1) != 1)
		c = '?';
	close(pfd[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return c;
}

/* A connection opened while another of the same process is open (a
 * server's threads) leaves that one's locks on the WAL index as they were:
 * nothing of the store closes a descriptor of a file this process's SQLite
 * connections lock (closing any drops every POSIX lock of the process on
 * it; a probe of the -shm in d33b798 did); else another process would take
 * the index as the machine's first, and empty it under the open connections. */
static void test_second_connection_keeps_the_locks(void)
{
	char *dir;
	store *s = fresh(&dir), *other = NULL;
	berth_error *err = NULL;
	if (!s || on_pg())
		goto out;
	CHECK_INT(dms_holder(fresh_where), 'p');
	if (OK(store_open(&other, fresh_where, &err), err))
		CHECK_INT(dms_holder(fresh_where), 'p');
	store_close(other);
	CHECK_INT(dms_holder(fresh_where), 'p');
	store_close(s);
	s = NULL;
	CHECK_INT(dms_holder(fresh_where), 'n');
out:
	berth_error_free(err);
	done(s, dir);
}

/* A process that takes the database for itself while a handle is suspended
 * (SQLite's locking_mode=EXCLUSIVE, asked before its first read: its WAL
 * index in its own memory, the WAL and the database written past the -shm,
 * the WAL ended at its close) leaves the next connection of another process
 * (a forked supervisor's) reading what it wrote, the handle's too once it
 * resumes, and the database whole. A suspended handle holds nothing, so the
 * writer gets the database; anything that ever keeps the -shm's index in use
 * while the handle has no connection must have the writer refused, busy,
 * instead (the hold of d33b798 kept the index and not the database: that
 * connection read frames of a WAL that was gone, "disk I/O error"). */
static void test_suspended_store_not_taken_alone(void)
{
	char *dir;
	store *s = fresh(&dir);
	berth_error *err = NULL;
	sqlite3 *conn = NULL;
	if (!s || on_pg())
		goto out;
	/* frames in the WAL that the database has not yet */
	add_run(s, "before", "local", BERTH_STATE_PENDING);
	add_run(s, "more", "local", BERTH_STATE_PENDING);
	CHECK_INT(store_suspend(s), 0);
	pid_t pid = fork();
	if (pid == 0) {
		sqlite3 *c = NULL;
		int rc = sqlite3_open_v2(fresh_where, &c, SQLITE_OPEN_READWRITE, NULL);
		if (rc == SQLITE_OK)
			rc = sqlite3_exec(c, "PRAGMA locking_mode=EXCLUSIVE; UPDATE runs SET name = 'taken' WHERE id = 'before'",
					  NULL, NULL, NULL);
		sqlite3_close(c);
		_exit(rc == SQLITE_OK ? 0 : (rc & 0xff) == SQLITE_BUSY ? 2 : 1);
	}
	int status = -1;
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status));
	int took = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	CHECK(took == 0 || took == 2);
	pid = fork();
	if (pid == 0) {
		store *c = NULL;
		store_run *r = NULL;
		berth_error *e = NULL;
		int same = store_open(&c, fresh_where, &e) == 0 && store_run_get(c, "before", &r, &e) == 0 && r &&
			   !strcmp(r->info.name, took == 0 ? "taken" : "job");
		if (!same)
			fprintf(stderr, "another process's connection reads: %s\n",
				r ? r->info.name : e ? berth_error_get(e, 0)->message : "no run");
		_exit(same ? 0 : 1);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	store_run *r = NULL;
	if (OK(store_resume(s, &err), err) && OK(store_run_get(s, "before", &r, &err), err) && r)
		CHECK_STR(r->info.name, took == 0 ? "taken" : "job");
	store_run_free(r);
	sqlite3_stmt *st = NULL;
	if (sqlite3_open_v2(fresh_where, &conn, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(conn, "PRAGMA integrity_check", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		CHECK_STR((const char *)sqlite3_column_text(st, 0), "ok");
	else
		CHECK(!"integrity_check ran");
	sqlite3_finalize(st);
out:
	sqlite3_close(conn);
	berth_error_free(err);
	done(s, dir);
}

/* A stop asked is what the supervisor's narrow read says; a run that does
 * not exist asks for none. */
static void test_stop_requested(void)
{
	char *dir;
	store *s = fresh(&dir);
	berth_error *err = NULL;
	if (!s)
		goto out;
	add_run(s, "r", "local", BERTH_STATE_RUNNING);
	bool stop = true;
	CHECK_INT(store_run_stop_requested(s, "r", &stop, &err), 0);
	CHECK(!stop);
	CHECK_INT(store_run_request_stop(s, "r", 5, &err), 0);
	CHECK_INT(store_run_stop_requested(s, "r", &stop, &err), 0);
	CHECK(stop);
	CHECK_INT(store_run_stop_requested(s, "none", &stop, &err), 0);
	CHECK(!stop);
	/* what recovery reads of the Running runs of a kind: their supervisors */
	add_run(s, "q", "local", BERTH_STATE_PENDING);
	add_run(s, "k", "kubernetes", BERTH_STATE_RUNNING);
	CHECK_INT(store_run_set_supervisor(s, "r", 42, 7, &err), 0);
	store_supervised *sup = NULL;
	size_t n = 0;
	CHECK_INT(store_run_supervised(s, "local", &sup, &n, &err), 0);
	CHECK(n == 1 && sup && !strcmp(sup[0].id, "r") && sup[0].supervisor_pid == 42 &&
	      sup[0].supervisor_start == 7);
	store_supervised_free(sup, n);
	CHECK(err == NULL);
out:
	berth_error_free(err);
	done(s, dir);
}

/* Each reader of a list, with its n-th allocation failing, for every n
 * until none fails: BERTH_ENOMEM and nothing handed back, or all of it
 * (a failure that costs nothing: the statement cache's copy of its SQL). */
typedef int (*reader_fn)(store *s, size_t *n, berth_error **err);

static int read_projects(store *s, size_t *n, berth_error **err)
{
	store_project *list = (store_project *)&list;
	int rc = store_project_list(s, (const char *const[]){"a", "b"}, 2, false, &list, n, err);
	CHECK(rc ? list == NULL && *n == 0 : list != NULL);
	for (size_t i = 0; !rc && i < *n; i++)
		CHECK(list[i].name && list[i].name[0] == "ab"[i]);
	store_project_list_free(rc ? NULL : list, *n);
	return rc;
}

static int read_functions_of(store *s, size_t *n, berth_error **err)
{
	store_function *list = (store_function *)&list;
	int rc = store_function_list(s, "a", &list, n, err);
	CHECK(rc ? list == NULL && *n == 0 : list != NULL);
	for (size_t i = 0; !rc && i < *n; i++)
		CHECK(list[i].project && list[i].name && list[i].spec &&
		      !strncmp(list[i].spec, "spec of ", 8));
	store_function_list_free(rc ? NULL : list, *n);
	return rc;
}

static int read_function(store *s, size_t *n, berth_error **err)
{
	store_function *f = (store_function *)&f;
	int rc = store_function_get(s, "a", "f2", &f, err);
	CHECK(rc ? f == NULL : f && !strcmp(f->spec, "spec of f2"));
	*n = f ? 1 : 0;
	store_function_free(f);
	return rc;
}

static int read_events(store *s, size_t *n, berth_error **err)
{
	store_event_row *list = (store_event_row *)&list;
	int rc = store_event_list(s, "r1", &list, n, err);
	CHECK(rc ? list == NULL && *n == 0 : list != NULL);
	for (size_t i = 0; !rc && i < *n; i++)
		CHECK(list[i].kind && (i % 2 ? list[i].message != NULL : list[i].message == NULL));
	store_event_list_free(rc ? NULL : list, *n);
	return rc;
}

static int read_tokens(store *s, size_t *n, berth_error **err)
{
	store_token *list = (store_token *)&list;
	int rc = store_token_list(s, &list, n, err);
	CHECK(rc ? list == NULL && *n == 0 : list != NULL);
	for (size_t i = 0; !rc && i < *n; i++)
		CHECK(list[i].id && list[i].projects &&
		      (i % 2 ? list[i].description != NULL : list[i].description == NULL));
	store_token_list_free(rc ? NULL : list, *n);
	return rc;
}

static int read_token(store *s, size_t *n, berth_error **err)
{
	unsigned char hash[STORE_TOKEN_HASH];
	memset(hash, 4, sizeof(hash));
	store_token *t = (store_token *)&t;
	int rc = store_token_find(s, hash, &t, err);
	CHECK(rc ? t == NULL : t && !strcmp(t->id, "t4"));
	*n = t ? 1 : 0;
	store_token_free(t);
	return rc;
}

static int read_supervised(store *s, size_t *n, berth_error **err)
{
	store_supervised *list = (store_supervised *)&list;
	int rc = store_run_supervised(s, "local", &list, n, err);
	CHECK(rc ? list == NULL && *n == 0 : *n == 0 || list != NULL);
	for (size_t i = 0; !rc && i < *n; i++)
		CHECK(list[i].id && list[i].id[0] == 'u');
	store_supervised_free(rc ? NULL : list, *n);
	return rc;
}

static int read_kind(store *s, size_t *n, berth_error **err)
{
	char *kind = (char *)"x";
	int rc = store_run_kind(s, "r1", &kind, err);
	CHECK(rc ? kind == NULL : kind && !strcmp(kind, "local"));
	*n = kind ? 1 : 0;
	free(kind);
	return rc;
}

static void test_alloc_failures(void)
{
	char *dir;
	store *s = fresh(&dir);
	berth_error *err = NULL;
	if (!s)
		goto out;
	store_project_add(s, "a", NULL);
	store_project_add(s, "b", NULL);
	add_run(s, "r1", "local", BERTH_STATE_PENDING);
	for (int k = 0; k < 20; k++) {
		char id[16];
		snprintf(id, sizeof(id), "u%d", k);
		add_run(s, id, "local", BERTH_STATE_RUNNING);
	}
	for (int k = 0; k < 12; k++) {
		char name[16], text[32], tid[16];
		snprintf(name, sizeof(name), "f%d", k);
		snprintf(text, sizeof(text), "spec of %s", name);
		snprintf(tid, sizeof(tid), "t%d", k);
		store_function_put(s, "a", name, text, NULL);
		store_event(s, "r1", "Event", k % 2 ? text : NULL);
		store_token t = {.id = tid, .role = 1, .projects = "a",
				 .description = k % 2 ? text : NULL, .created = k};
		memset(t.hash, k, sizeof(t.hash));
		store_token_insert(s, &t, 0, 0, NULL);
	}
	static const struct {
		const char *what;
		reader_fn fn;
		size_t want;
	} readers[] = {
		{"store_project_list", read_projects, 2},   {"store_function_list", read_functions_of, 12},
		{"store_function_get", read_function, 1},   {"store_event_list", read_events, 12},
		{"store_token_list", read_tokens, 12},      {"store_token_find", read_token, 1},
		{"store_run_kind", read_kind, 1},           {"store_run_supervised", read_supervised, 20},
	};
	for (size_t r = 0; r < sizeof(readers) / sizeof(readers[0]); r++) {
		int finished = 0;
		for (long n = 1; n < 10000 && !finished; n++) {
			size_t got = 0;
			berth_fail_alloc_after = n;
			int rc = readers[r].fn(s, &got, &err);
			int injected = berth_fail_alloc_after == 0;
			berth_fail_alloc_after = 0;
			if (rc)
				CHECKF(injected && rc == -BERTH_ENOMEM &&
					       berth_error_code(err) == BERTH_ENOMEM,
				       "%s, allocation %ld failing: %d", readers[r].what, n, rc);
			else
				CHECKF(got == readers[r].want, "%s, allocation %ld failing: %zu of %zu",
				       readers[r].what, n, got, readers[r].want);
			finished = !injected;
			berth_error_free(err);
			err = NULL;
		}
		CHECKF(finished, "%s: still failing", readers[r].what);
	}
out:
	berth_error_free(err);
	done(s, dir);
}

/* The first column of the first row of sql on PostgreSQL at url, as a number
 * (-1 when it fails). */
static long long pg_number(const char *url, const char *sql)
{
	char why[256];
	long long v = -1;
	if (berth_pq_load(why, sizeof(why)))
		return -1;
	PGconn *c = berth_pq.connectdb(url);
	PGresult *r = c ? berth_pq.exec(c, sql) : NULL;
	if (r && berth_pq.result_status(r) == PGRES_TUPLES_OK && berth_pq.ntuples(r) > 0)
		v = strtoll(berth_pq.getvalue(r, 0, 0), NULL, 10);
	if (r)
		berth_pq.clear(r);
	if (c)
		berth_pq.finish(c);
	return v;
}

/* On PostgreSQL: a handle whose connection is ended by the server (a restart)
 * connects again: the call that finds it lost fails, the next ones work; the
 * lead is held by one handle, and taken by another once its connection ends. */
static void test_pg_reconnect(void)
{
	if (!on_pg()) {
		printf("skip test_pg_reconnect (BERTH_TEST_STORE is not postgresql)\n");
		return;
	}
	char *dir;
	store *s = fresh(&dir), *other = NULL;
	berth_error *err = NULL;
	if (!s)
		goto out;
	add_run(s, "r1", "local", BERTH_STATE_PENDING);
	CHECK_INT(store_lead(s, &err), 1);
	if (OK(store_open(&other, fresh_where, &err), err))
		CHECK_INT(store_lead(other, &err), 0);
	char admin[600], sql[300];
	pg_url(admin, sizeof(admin), "postgres");
	const char *name = fresh_where + strlen("postgresql:///");
	snprintf(sql, sizeof(sql), "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
		 " WHERE datname = '%.*s'", (int)strcspn(name, "?"), name);
	CHECK(pg_number(admin, sql) >= 2);
	int rc = 1;
	for (int k = 0; k < 3 && rc != 0; k++) { /* the first may find it lost */
		rc = store_run_exists(s, "r1", &err) == 1 ? 0 : -1;
		berth_error_free(err);
		err = NULL;
	}
	CHECK_INT(rc, 0);
	/* both lost the lead with their connections; the first to ask takes it */
	int lead = -1;
	for (int k = 0; k < 3 && lead < 0; k++) {
		lead = store_lead(other, &err);
		berth_error_free(err);
		err = NULL;
	}
	CHECK_INT(lead, 1);
	CHECK_INT(store_lead(s, &err), 0);
	CHECK_INT(store_run_exists(other, "r1", &err), 1);
out:
	berth_error_free(err);
	store_close(other);
	done(s, dir);
}

/* On PostgreSQL: a store of schema STORE_PG_BASE (14) is migrated on open by the
 * later migrations; a store of a newer schema than this berth knows is refused;
 * a URL's password is in no message (the server refuses a database that is
 * not there, and says so). */
static void test_pg_store(void)
{
	if (!on_pg()) {
		printf("skip test_pg_store (BERTH_TEST_STORE is not postgresql)\n");
		return;
	}
	char *dir;
	store *s = fresh(&dir);
	berth_error *err = NULL;
	if (!s)
		goto out;
	char where[4200];
	snprintf(where, sizeof(where), "%s", fresh_where);
	store_close(s);
	s = NULL;
	/* set back to the schema a new store is made at, then set on by hand */
	static const char *const by_hand[] = {
		"UPDATE berth_schema SET version = 14; ALTER TABLE tokens DROP COLUMN expires,"
		" DROP COLUMN revoked, DROP COLUMN last_used, DROP COLUMN maker;"
		" DROP INDEX samples_worker",
		"UPDATE berth_schema SET version = 99",
	};
	char why[256];
	for (size_t k = 0; k < 2 && !berth_pq_load(why, sizeof(why)); k++) {
		PGconn *c = berth_pq.connectdb(where);
		PGresult *r = c ? berth_pq.exec(c, by_hand[k]) : NULL;
		CHECK(r && berth_pq.result_status(r) == PGRES_COMMAND_OK);
		if (r)
			berth_pq.clear(r);
		if (c)
			berth_pq.finish(c);
		if (k == 0 && OK(store_open(&s, where, &err), err)) {
			CHECK_INT(pg_number(where, "SELECT version FROM berth_schema"), 17);
			store_token t = {.id = "t1", .role = 1, .projects = "a", .created = 1, .expires = 7};
			CHECK_INT(store_token_insert(s, &t, 0, 0, &err), 0);
			store_token *got = NULL;
			CHECK_INT(store_token_get(s, "t1", &got, &err), 0);
			CHECK(got && got->expires == 7);
			store_token_free(got);
			store_close(s);
			s = NULL;
		}
	}
	CHECK_INT(store_open(&s, where, &err), -BERTH_EIO);
	const berth_problem *p = berth_error_get(err, 0);
	CHECK(p && strstr(p->message, "schema version 99 is newer"));
	berth_error_free(err);
	err = NULL;
	/* a password is never said */
	const char *host = getenv("BERTH_TEST_PG_HOST"), *port = getenv("BERTH_TEST_PG_PORT");
	snprintf(where, sizeof(where), "postgresql://someone:s3cret-word@/nosuchdb?host=%s&port=%s"
		 "&password=0ther-s3cret", host ? host : "", port ? port : "5432");
	CHECK_INT(store_open(&s, where, &err), -BERTH_EIO);
	p = berth_error_get(err, 0);
	CHECK(p && !strstr(p->message, "s3cret") && strstr(p->message, "postgresql://someone@/nosuchdb"));
	CHECKF(p && strstr(p->message, "password=***"), "%s", p ? p->message : "");
out:
	berth_error_free(err);
	done(s, dir);
}

/* A store's location as messages show it: no password of a URL, of its
 * user or of any parameter named ...password (libpq's sslpassword is the
 * passphrase of the client's key); a path as it is. */
char *db_display(const char *where); /* store/db.h, whose type db this file's static db hides */

static void test_display(void)
{
	static const char *const cases[][2] = {
		{"postgresql://u:pw1@h:5/db", "postgresql://u@h:5/db"},
		{"postgres://u@h/db?password=pw2&sslmode=require", "postgres://u@h/db?password=***&sslmode=require"},
		{"postgresql://h/db?sslmode=require&sslpassword=pw3", "postgresql://h/db?sslmode=require&sslpassword=***"},
		{"postgresql:///db?host=/run&passwordx=v&sslpassword", "postgresql:///db?host=/run&passwordx=v&sslpassword"},
		{"/data/berth.db", "/data/berth.db"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *shown = db_display(cases[i][0]);
		CHECK_STR(shown, cases[i][1]);
		free(shown);
	}
}

/* ---- durability (sync.c) ---- */

typedef struct sync_worker {
	const char *path;
	int bad;      /* syncs that returned before their commit was counted durable */
	int writes;
} sync_worker;

/* A server's worker: its own deferred handle; each commit, then the wait for it. */
static void *sync_writer(void *arg)
{
	sync_worker *w = arg;
	store *s = NULL;
	berth_error *err = NULL;
	if (store_open(&s, w->path, &err)) {
		berth_error_free(err);
		w->bad = -1;
		return NULL;
	}
	store_defer_sync(s, true);
	for (int i = 0; i < 50; i++) {
		char name[32];
		snprintf(name, sizeof(name), "w%p-%d", (void *)w, i);
		if (store_project_add(s, name, &err) != 1)
			w->bad++;
		uint64_t seq = store_sync_take(s), committed, durable, fsyncs;
		if (!seq || store_sync_to(s, seq, &err))
			w->bad++;
		store_sync_stats(s, &committed, &durable, &fsyncs);
		if (durable < seq)
			w->bad++;
		w->writes++;
	}
	berth_error_free(err);
	store_close(s);
	return NULL;
}

/* Every commit is counted durable before the call that made it returns;
 * a deferred handle's, before store_sync returns; the waits of threads at
 * once share fsyncs (never more fsyncs than commits); BERTH_STORE_SYNC=normal
 * makes no fsync, and a value it does not know is refused. */
static void test_sync(void)
{
	if (on_pg()) {
		printf("skip test_sync (the fsync of SQLite's WAL; PostgreSQL's commit is its own)\n");
		return;
	}
	char *dir;
	store *s = fresh(&dir);
	berth_error *err = NULL;
	uint64_t c0, d0, f0, c1, d1, f1;
	if (!s)
		goto out;
	store_sync_stats(s, &c0, &d0, &f0);
	CHECK(c0 > 0 && d0 == c0 && f0 > 0); /* the migrations' commit */
	CHECK_INT(store_project_add(s, "a", &err), 1);
	store_sync_stats(s, &c1, &d1, &f1);
	CHECK_INT(c1, c0 + 1);
	CHECK_INT(d1, c1);
	CHECK_INT(f1, f0 + 1);
	/* deferred: committed (another handle reads it), not yet known durable */
	store_defer_sync(s, true);
	CHECK_INT(store_project_add(s, "b", &err), 1);
	store_sync_stats(s, &c1, &d1, &f1);
	CHECK_INT(c1, c0 + 2);
	CHECK_INT(d1, c0 + 1);
	CHECK(OK(store_sync(s, &err), err));
	store_sync_stats(s, &c1, &d1, &f1);
	CHECK_INT(d1, c1);
	CHECK(OK(store_sync(s, &err), err)); /* nothing left: no fsync */
	store_sync_stats(s, &c0, &d0, &f0);
	CHECK_INT(f0, f1);
	/* four threads, a handle each */
	char path[4200];
	snprintf(path, sizeof(path), "%s/berth.db", dir);
	sync_worker w[4];
	pthread_t th[4];
	for (int i = 0; i < 4; i++) {
		w[i] = (sync_worker){.path = path};
		pthread_create(&th[i], NULL, sync_writer, &w[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		CHECK_INT(w[i].bad, 0);
		CHECK_INT(w[i].writes, 50);
	}
	store_sync_stats(s, &c1, &d1, &f1);
	CHECK_INT(c1, c0 + 200);
	CHECK_INT(d1, c1);
	CHECK(f1 - f0 <= 200);
	/* the opt-out: no number, no fsync */
	store *n = NULL;
	setenv("BERTH_STORE_SYNC", "normal", 1);
	if (OK(store_open(&n, path, &err), err)) {
		CHECK_INT(store_project_add(n, "c", &err), 1);
		store_sync_stats(n, &c1, &d1, &f1);
		CHECK(c1 == 0 && d1 == 0 && f1 == 0);
		store_close(n);
	}
	setenv("BERTH_STORE_SYNC", "fast", 1);
	n = NULL;
	CHECK(store_open(&n, path, &err) != 0 && !n);
	const berth_problem *p = err ? berth_error_get(err, 0) : NULL;
	CHECK(p && strstr(p->message, "BERTH_STORE_SYNC is \"fast\""));
	unsetenv("BERTH_STORE_SYNC");
out:
	berth_error_free(err);
	done(s, dir);
}

/* A token made by maker, numbered k (its id and hash), created at 1000. */
#define DAY_MS 86400000LL

static store_token made_token_at(char *id, size_t len, const char *maker, int k, int64_t expires,
				 int64_t created)
{
	snprintf(id, len, "%s-m%d", maker, k);
	store_token t = {.id = id, .role = 1, .projects = "a", .created = created, .expires = expires,
			 .maker = (char *)maker};
	memset(t.hash, 0, sizeof(t.hash));
	memcpy(t.hash, id, strlen(id) < sizeof(t.hash) ? strlen(id) : sizeof(t.hash));
	return t;
}

static store_token made_token(char *id, size_t len, const char *maker, int k, int64_t expires)
{
	return made_token_at(id, len, maker, k, expires, 1000);
}

struct cap_try {
	const char *where;
	bool revoke; /* revoke c3 (and what it made), or make a token of c1 */
	int rc;
};

/* Another handle (another server worker, another server on the same
 * PostgreSQL): makes a token of c1 under a cap of 1 made token, or revokes c3. */
static void *cap_try(void *arg)
{
	struct cap_try *c = arg;
	store *o = NULL;
	berth_error *e = NULL;
	c->rc = -1000;
	if (!store_open(&o, c->where, &e)) {
		char id[32];
		store_token t = made_token(id, sizeof(id), "c1", 99, 0);
		c->rc = c->revoke ? store_token_revoke(o, "c3", 2000, &e) : store_token_insert(o, &t, 1, 0, &e);
	}
	store_close(o);
	berth_error_free(e);
	return NULL;
}

/* Handle a makes token t in a transaction that another handle's cap_try c
 * comes into (it counts or walks by then, unless it waits for a, as it
 * should); whichever order they come in, the result is the same. */
static void at_once(store *a, store_token *t, struct cap_try *c, int64_t made_max)
{
	berth_error *err = NULL;
	pthread_t th;
	bool started = false;
	if (OK(store_begin(a, &err), err)) {
		CHECK_INT(store_token_insert(a, t, made_max, 0, &err), 0);
		started = pthread_create(&th, NULL, cap_try, c) == 0;
		CHECK(started);
		struct timespec ts = {0, 300 * 1000000L};
		nanosleep(&ts, NULL);
		CHECK_INT(store_commit(a, &err), 0);
	}
	if (started)
		pthread_join(th, NULL);
	berth_error_free(err);
}

/* The caps on made tokens count the live ones only (not revoked, not expired,
 * not made by a command), and hold against requests at once: one that counts
 * while another's insert is not yet committed waits for it. */
static void test_token_caps(void)
{
	char *dir;
	store *s = fresh(&dir), *a = NULL;
	berth_error *err = NULL;
	char id[8][32];
	if (!s)
		goto out;
	store_token c1 = {.id = "c1", .role = 3, .projects = "*", .created = 1};
	store_token c2 = {.id = "c2", .role = 3, .projects = "*", .created = 1};
	memset(c1.hash, 0xc1, sizeof(c1.hash));
	memset(c2.hash, 0xc2, sizeof(c2.hash));
	CHECK_INT(store_token_insert(s, &c1, 1, 1, &err), 0); /* a command's: no cap */
	CHECK_INT(store_token_insert(s, &c2, 1, 1, &err), 0);
	/* c2: one expired (at 500), one revoked, both made more than a day before the next */
	store_token t = made_token(id[0], sizeof(id[0]), "c2", 0, 500);
	CHECK_INT(store_token_insert(s, &t, 0, 0, &err), 0);
	t = made_token(id[1], sizeof(id[1]), "c2", 1, 0);
	CHECK_INT(store_token_insert(s, &t, 0, 0, &err), 0);
	CHECK_INT(store_token_revoke(s, id[1], 900, &err), 1);
	t = made_token_at(id[2], sizeof(id[2]), "c2", 2, 0, 1000 + DAY_MS + 1);
	CHECK_INT(store_token_insert(s, &t, 1, 2, &err), 0);
	t = made_token_at(id[3], sizeof(id[3]), "c2", 3, 0, 1000 + DAY_MS + 2);
	CHECK_INT(store_token_insert(s, &t, 1, 0, &err), -BERTH_ECONFLICT);
	berth_error_free(err);
	err = NULL;
	/* one made and revoked at once still counts for a day: no churn past the cap */
	store_token c4 = {.id = "c4", .role = 3, .projects = "*", .created = 1};
	memset(c4.hash, 0xc4, sizeof(c4.hash));
	CHECK_INT(store_token_insert(s, &c4, 0, 0, &err), 0);
	int64_t t0 = 100 * DAY_MS;
	t = made_token_at(id[6], sizeof(id[6]), "c4", 6, 0, t0);
	CHECK_INT(store_token_insert(s, &t, 1, 0, &err), 0);
	CHECK_INT(store_token_revoke(s, id[6], t0 + 1, &err), 1);
	t = made_token_at(id[7], sizeof(id[7]), "c4", 7, 0, t0 + 2);
	CHECK_INT(store_token_insert(s, &t, 1, 0, &err), -BERTH_ECONFLICT);
	const berth_problem *why = err ? berth_error_get(err, 0) : NULL;
	CHECK(why && strstr(why->message, "live or less than a day old"));
	berth_error_free(err);
	err = NULL;
	/* a day on, it makes room; 30 days after it ended, it goes (a command's own stay) */
	t = made_token_at(id[7], sizeof(id[7]), "c4", 7, 0, t0 + DAY_MS + 1);
	CHECK_INT(store_token_insert(s, &t, 1, 0, &err), 0);
	store_token *kept = NULL;
	CHECK_INT(store_token_get(s, id[6], &kept, &err), 0);
	CHECK(kept != NULL);
	store_token_free(kept);
	CHECK_INT(store_token_revoke(s, id[7], t0 + DAY_MS + 2, &err), 1);
	t = made_token_at(id[3], sizeof(id[3]), "c4", 8, 0, t0 + 31 * DAY_MS);
	CHECK_INT(store_token_insert(s, &t, 1, 0, &err), 0);
	kept = NULL;
	CHECK_INT(store_token_get(s, id[6], &kept, &err), 0);
	CHECK(kept == NULL);
	store_token_free(kept);
	kept = NULL;
	CHECK_INT(store_token_get(s, id[7], &kept, &err), 0);
	CHECK(kept != NULL); /* ended 29 days before */
	store_token_free(kept);
	kept = NULL;
	CHECK_INT(store_token_get(s, "c1", &kept, &err), 0);
	CHECK(kept != NULL);
	store_token_free(kept);
	/* c1 under a cap of one made token: a's insert, not committed yet, and
	 * another handle's at the same time: one is made */
	struct cap_try c = {fresh_where, false, 0};
	if (!OK(store_open(&a, fresh_where, &err), err))
		goto out;
	t = made_token(id[4], sizeof(id[4]), "c1", 4, 0);
	at_once(a, &t, &c, 1);
	CHECK_INT(c.rc, -BERTH_ECONFLICT);
	/* c3 revoked while a makes a token of it: that token is revoked too */
	store_token c3 = {.id = "c3", .role = 3, .projects = "*", .created = 1};
	memset(c3.hash, 0xc3, sizeof(c3.hash));
	CHECK_INT(store_token_insert(s, &c3, 0, 0, &err), 0);
	struct cap_try r = {fresh_where, true, 0};
	t = made_token(id[5], sizeof(id[5]), "c3", 5, 0);
	at_once(a, &t, &r, 0);
	CHECK_INT(r.rc, 1);
	store_token *got = NULL;
	if (OK(store_token_get(s, id[5], &got, &err), err) && got)
		CHECK(got->revoked > 0);
	store_token_free(got);
	store_token *list = NULL;
	size_t n = 0, of_c1 = 0;
	if (OK(store_token_list(s, &list, &n, &err), err))
		for (size_t i = 0; i < n; i++)
			of_c1 += list[i].maker && !strcmp(list[i].maker, "c1");
	CHECK_INT(of_c1, 1);
	store_token_list_free(list, n);
out:
	store_close(a);
	berth_error_free(err);
	done(s, dir);
}

/* An fsync of the WAL that fails for a full disk or quota (ENOSPC, EDQUOT) is
 * BERTH_ENOSPC (a server's 507) and says the disk is full, for a commit made
 * durable at once (SQLite's "database or disk is full") or deferred (the
 * wait's own words); any other errno is BERTH_EIO. A failed fsync stays
 * failed: the next commit is refused too. */
static void test_sync_full(void)
{
	if (on_pg()) {
		printf("skip test_sync_full (the fsync of SQLite's WAL)\n");
		return;
	}
#ifndef BERTH_FAULT_INJECTION
	printf("skip test_sync_full (no BERTH_TEST_FSYNC_ERRNO outside a test build)\n");
#else
	static const struct {
		int errnum;
		bool deferred;
		berth_code code;
		const char *says;
	} cases[] = {
		{ENOSPC, false, BERTH_ENOSPC, "database or disk is full"},
		{EDQUOT, false, BERTH_ENOSPC, "database or disk is full"},
		{ENOSPC, true, BERTH_ENOSPC, "could not be made durable: the disk is full (fsync of the WAL: No space left on device)"},
		{EDQUOT, true, BERTH_ENOSPC, "the disk is full (fsync of the WAL: Disk quota exceeded)"},
		{EIO, false, BERTH_EIO, "disk I/O error"},
		{EIO, true, BERTH_EIO, "could not be made durable (fsync of the WAL: Input/output error)"},
	};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(cases); i++) {
		char *dir;
		store *s = fresh(&dir);
		berth_error *err = NULL;
		if (!s) {
			CHECK(s != NULL);
			done(s, dir);
			continue;
		}
		store_defer_sync(s, cases[i].deferred);
		char num[16];
		snprintf(num, sizeof(num), "%d", cases[i].errnum);
		setenv("BERTH_TEST_FSYNC_ERRNO", num, 1);
		int rc = store_project_add(s, "a", &err);
		if (cases[i].deferred) {
			CHECK_INT(rc, 1); /* made; durable only once store_sync says so */
			berth_error_free(err);
			err = NULL;
			rc = store_sync(s, &err);
		}
		CHECK_INT(rc, -(int)cases[i].code);
		CHECK_INT(berth_error_code(err), cases[i].code);
		const berth_problem *p = err ? berth_error_get(err, 0) : NULL;
		CHECK(p && strstr(p->message, cases[i].says));
		if (!(p && strstr(p->message, cases[i].says)))
			printf("    case %zu: %s\n", i, p ? p->message : "(no error)");
		unsetenv("BERTH_TEST_FSYNC_ERRNO");
		/* sticky: the disk may have room again, the lost fsync's commits not */
		berth_error_free(err);
		err = NULL;
		if (!cases[i].deferred)
			CHECK(store_project_add(s, "b", &err) < 0);
		berth_error_free(err);
		done(s, dir);
	}
#endif
}

/* The highest descriptor of this process open on the store's WAL (-1: none). */
static int wal_fd_of(const char *wal)
{
	int found = -1;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	while (d && (de = readdir(d))) {
		char link[300], target[4300];
		snprintf(link, sizeof(link), "/proc/self/fd/%s", de->d_name);
		ssize_t n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		int fd = (int)strtol(de->d_name, NULL, 10);
		if (!strcmp(target, wal) && fd > found)
			found = fd;
	}
	if (d)
		closedir(d);
	return found;
}

/* The WAL's directory entry is fsynced once per WAL file: the first commit
 * marks the file, and a WAL made again (another inode) has no mark. A child
 * forked after its parent committed keeps its own descriptors: the parent's
 * WAL descriptor number, reused for another file by the child, is not the
 * child's to fstat or close (a supervisor forked by berth run --wait closes
 * what it inherits, and its first commit once closed the fd that took that
 * number: a worker's log). */
static void test_sync_entry(void)
{
	if (on_pg()) {
		printf("skip test_sync_entry (SQLite's WAL)\n");
		return;
	}
	char *dir;
	store *s = fresh(&dir);
	berth_error *err = NULL;
	if (!s)
		goto out;
	char wal[4300], mark[8192];
	snprintf(wal, sizeof(wal), "%s/berth.db-wal", dir);
	ssize_t got = getxattr(wal, "user.berth.entry-synced", mark, sizeof(mark));
	bool xattrs = !(got < 0 && (errno == ENOTSUP || errno == EOPNOTSUPP));
	if (!xattrs)
		printf("skip the mark of test_sync_entry (no user xattrs on %s)\n", dir);
	/* the migrations' commit made it durable, entry included */
	if (xattrs)
		CHECK(got > 0);
	/* unmarked (as a WAL made again by a tool is): the next process to sync
	 * it fsyncs the directories and marks it */
	if (xattrs)
		CHECK_INT(removexattr(wal, "user.berth.entry-synced"), 0);
	/* as berth run --wait forks its supervisor: its own connection closed
	 * first (SQLite's is not a child's to use), the WAL's sync fd kept */
	CHECK_INT(store_suspend(s), 0);
	int parent_fd = wal_fd_of(wal);
	CHECK(parent_fd >= 3);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		/* as a supervisor does: nothing inherited stays open */
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		/* and then its own files, which take the freed numbers */
		int fds[1024], n = 0, fd;
		while ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0 && fd <= parent_fd)
			fds[n++] = fd;
		if (fd >= 0)
			close(fd);
		store *c = NULL;
		berth_error *e = NULL;
		int bad = store_open(&c, fresh_where, &e) ? 1 : store_project_add(c, "child", &e) != 1 ? 2 : 0;
		for (int i = 0; i < n; i++)
			bad |= fcntl(fds[i], F_GETFD) < 0 ? 4 : 0;
		if (bad)
			fprintf(stderr, "child: %d %s\n", bad,
				e && berth_error_get(e, 0) ? berth_error_get(e, 0)->message : "");
		store_close(c);
		berth_error_free(e);
		_exit(bad ? 1 : 0);
	}
	int st = -1;
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	if (xattrs)
		CHECK(getxattr(wal, "user.berth.entry-synced", mark, sizeof(mark)) > 0);
	/* the parent's own descriptor is still the WAL, and still syncs */
	CHECK_INT(wal_fd_of(wal), parent_fd);
	CHECK(OK(store_resume(s, &err), err));
	CHECK_INT(store_project_add(s, "parent", &err), 1);
out:
	berth_error_free(err);
	done(s, dir);
}

/* The mark of the WAL's entry (x, 0: none), read into buf. */
static ssize_t entry_mark_of(const char *dir, char *buf, size_t len)
{
	char wal[4300];
	snprintf(wal, sizeof(wal), "%s/berth.db-wal", dir);
	ssize_t n = getxattr(wal, "user.berth.entry-synced", buf, len);
	return n < 0 ? 0 : n;
}

/* One commit through a store opened at dir/berth.db, and closed (its WAL stays). */
static void commit_at(const char *dir, const char *project)
{
	char where[4300];
	snprintf(where, sizeof(where), "%s/berth.db", dir);
	store *s = NULL;
	berth_error *err = NULL;
	if (OK(store_open(&s, where, &err), err))
		CHECK_INT(store_project_add(s, project, &err), 1);
	store_close(s);
	berth_error_free(err);
}

/* The mark says that this file's entry, at this place, was fsynced: a WAL
 * copied with its extended attributes (cp -a, rsync -X, a restore from tar
 * --xattrs), whose new entry no one fsynced, or a data dir renamed, is not
 * trusted: its directories are fsynced again, and the mark made anew, once. */
static void test_sync_entry_copied(void)
{
	if (on_pg()) {
		printf("skip test_sync_entry_copied (SQLite's WAL)\n");
		return;
	}
	char *dir;
	store *s = fresh(&dir);
	if (!s)
		goto out;
	char m0[8192], m1[8192], m2[8192], m3[8192];
	ssize_t n0 = entry_mark_of(dir, m0, sizeof(m0));
	if (!n0) {
		printf("skip test_sync_entry_copied (no user xattrs on %s)\n", dir);
		goto out;
	}
	store_close(s);
	s = NULL;
	char copy[4300], moved[4300], cmd[9000];
	snprintf(copy, sizeof(copy), "%s-copy", dir);
	snprintf(moved, sizeof(moved), "%s-moved", dir);
	snprintf(cmd, sizeof(cmd), "cp -a '%s' '%s'", dir, copy);
	CHECK_INT(system(cmd), 0);
	/* copied with the file: the same mark, on a file no one synced there */
	CHECK_INT(entry_mark_of(copy, m1, sizeof(m1)), n0);
	commit_at(copy, "restored");
	ssize_t n1 = entry_mark_of(copy, m1, sizeof(m1));
	CHECK(n1 > 0 && (n1 != n0 || memcmp(m0, m1, (size_t)n1)));
	/* the original keeps its own */
	CHECK_INT(entry_mark_of(dir, m3, sizeof(m3)), n0);
	CHECK(!memcmp(m0, m3, (size_t)n0));
	/* renamed: its new entry was never synced either */
	CHECK_INT(rename(copy, moved), 0);
	commit_at(moved, "moved");
	ssize_t n2 = entry_mark_of(moved, m2, sizeof(m2));
	CHECK(n2 > 0 && (n2 != n1 || memcmp(m1, m2, (size_t)n2)));
	/* and where it stays, the mark stays */
	commit_at(moved, "again");
	CHECK_INT(entry_mark_of(moved, m3, sizeof(m3)), n2);
	CHECK(!memcmp(m2, m3, (size_t)n2));
	t_rm_rf(moved);
	t_rm_rf(copy);
out:
	done(s, dir);
}

static void test_cleanup(void)
{
	if (home)
		t_rm_rf(home);
	free(home);
	home = NULL;
}

T_MAIN(T(test_plans), T(test_pages), T(test_parts), T(test_migration), T(test_readers),
       T(test_projects), T(test_functions), T(test_events), T(test_samples), T(test_tokens), T(test_token_caps), T(test_run_records), T(test_labels),
       T(test_data_version), T(test_stop_requested), T(test_second_connection_keeps_the_locks), T(test_suspended_store_not_taken_alone), T(test_sync), T(test_sync_full), T(test_sync_entry), T(test_sync_entry_copied), T(test_alloc_failures), T(test_pg_store),
       T(test_pg_reconnect), T(test_display), T(test_cleanup))
