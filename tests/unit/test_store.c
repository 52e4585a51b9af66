/*
 * test_store.c - src/store/store.c at scale: a store of 100,000 runs, made in one
 * transaction through the store's API; every kind of list (every project,
 * one state, one project, a project and a state, a token's projects with
 * and without a state, the scheduler's queue) read from an index in the
 * order it is shown (EXPLAIN QUERY PLAN names the index and sorts nothing),
 * and walked page by page through berth_run_page with its cursor: newest
 * first, no run twice, none left out, none that the filter refuses; more
 * projects than one query merges, read in parts. Then a
 * store of schema 5 migrated on open, and readers on their own handles
 * while a writer holds its transaction open.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/berth.h"
#include "base/internal.h"
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

/* Makes the store of N runs once (the tests share it; none writes to it). */
static int made(void)
{
	static int done = -1;
	if (done >= 0)
		return done;
	done = 0;
	if (!(home = t_temp_dir("berth-store")))
		return 0;
	snprintf(db, sizeof(db), "%s/berth.db", home);
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
		if (!CHECKF(berth_run_page(b, projects, np, state, after, limit, &infos, &n, &next,
					   &err) == 0, "%s: page %lld", what, (long long)pages))
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

static void schema_of(store *s, const char *index, char **sql)
{
	berth_error *err = NULL;
	store_arg a = STORE_S(index);
	CHECK_INT(store_select_text(s, "SELECT sql FROM sqlite_master WHERE name = ?1", &a, 1, sql,
				    &err), 0);
	berth_error_free(err);
}

/* A store of schema 5 (its runs_project, no runs_state) is migrated on open,
 * its runs kept; a store newer than this berth is refused. */
static void test_migration(void)
{
	char *dir = t_temp_dir("berth-store5");
	if (!dir)
		return;
	char path[4200];
	snprintf(path, sizeof(path), "%s/berth.db", dir);
	store *s = NULL;
	berth_error *err = NULL;
	int64_t version = 0, count = 0;
	if (!OK(store_open(&s, path, &err), err))
		goto out;
	store_run r = {.info = {.id = "old1", .name = "job", .project = "p", .backend = "local",
				.state = BERTH_STATE_SUCCEEDED, .created = 1}, .uid = -1, .gid = -1,
		       .fs_group = -1};
	CHECK_INT(store_run_insert(s, &r, &err), 0);
	/* back to schema 5 as it was */
	CHECK(store_exec(s, "DROP INDEX runs_state", NULL, 0, &err) >= 0);
	CHECK(store_exec(s, "DROP INDEX runs_project", NULL, 0, &err) >= 0);
	CHECK(store_exec(s, "CREATE INDEX runs_project ON runs(project, created)", NULL, 0, &err) >= 0);
	CHECK(store_exec(s, "ALTER TABLE runs DROP COLUMN quota_cpu_milli", NULL, 0, &err) >= 0);
	CHECK(store_exec(s, "ALTER TABLE runs DROP COLUMN quota_mem", NULL, 0, &err) >= 0);
	CHECK(store_exec(s, "ALTER TABLE runs DROP COLUMN quota_gpus", NULL, 0, &err) >= 0);
	CHECK(store_exec(s, "PRAGMA user_version = 5", NULL, 0, &err) >= 0);
	store_close(s);
	s = NULL;
	if (!OK(store_open(&s, path, &err), err))
		goto out;
	CHECK_INT(store_select_int(s, "PRAGMA user_version", NULL, 0, &version, &err), 0);
	CHECK_INT(version, 7);
	char *sql = NULL;
	schema_of(s, "runs_state", &sql);
	CHECK_STR(sql, "CREATE INDEX runs_state ON runs(state)");
	free(sql);
	sql = NULL;
	schema_of(s, "runs_project", &sql);
	CHECK_STR(sql, "CREATE INDEX runs_project ON runs(project, state)");
	free(sql);
	CHECK_INT(store_select_int(s, "SELECT COUNT(*) FROM runs WHERE project = 'p'", NULL, 0,
				   &count, &err), 0);
	CHECK_INT(count, 1);
	/* from a berth that knows more */
	CHECK(store_exec(s, "PRAGMA user_version = 99", NULL, 0, &err) >= 0);
	store_close(s);
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

static void test_cleanup(void)
{
	if (home)
		t_rm_rf(home);
	free(home);
	home = NULL;
}

T_MAIN(T(test_plans), T(test_pages), T(test_parts), T(test_migration), T(test_readers), T(test_cleanup))
