/*
 * bench/list.c - what a page of runs costs as the store grows. For each size
 * (1,000, 100,000 and 1,000,000 runs unless told), a store made in one
 * transaction through the store's API, then pages of 50 runs, newest first,
 * through berth_run_page (what GET /api/v1/runs calls under the server's
 * lock): of every run, of one state, of one project, of a project in one
 * state, of a token's two projects with and without a state; each the first
 * page and a deep one (after = the middle run of the store). Then 2,000
 * creates into each store, one transaction each as the server commits them,
 * and the same runs started (state Running), as their supervisors write it.
 *
 *   list DIR [SIZE...]    a Markdown table on stdout; the stores go under DIR
 *   list --final HOME N   only makes a store of N finished runs in HOME (for
 *                         a server: nothing in it is queued or running)
 *
 * Built against libberth's objects and its internal headers (bench/list.sh). The
 * runs are spread as a busy server's: four projects, each in every state,
 * a spec of 400 bytes and an effective spec of 1,200 kept with each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "berth/berth.h"
#include "store/store.h"
#include "store/store_internal.h"

#define LIMIT 50
#define MAX_SIZES 4

static const char *const projects[] = {"p0", "p1", "p2", "p3"};

typedef struct list_case {
	const char *what;
	size_t np;             /* projects from p1 on: 0, 1 or 2 */
	int state;             /* < 0: any */
	bool deep;             /* after = the middle run */
} list_case;

static const list_case cases[] = {
	{"every run", 0, -1, false},
	{"every run, deep", 0, -1, true},
	{"state Succeeded", 0, BERTH_STATE_SUCCEEDED, false},
	{"state Succeeded, deep", 0, BERTH_STATE_SUCCEEDED, true},
	{"project p1", 1, -1, false},
	{"project p1, deep", 1, -1, true},
	{"project p1, Succeeded", 1, BERTH_STATE_SUCCEEDED, false},
	{"project p1, Succeeded, deep", 1, BERTH_STATE_SUCCEEDED, true},
	{"projects p1 p2", 2, -1, false},
	{"projects p1 p2, deep", 2, -1, true},
	{"projects p1 p2, Succeeded", 2, BERTH_STATE_SUCCEEDED, false},
	{"projects p1 p2, Succeeded, deep", 2, BERTH_STATE_SUCCEEDED, true},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

typedef struct result {
	double median, p99; /* seconds */
	size_t rows;
} result;

typedef struct size_result {
	long long n;
	double build_s;
	double creates_per_s, updates_per_s;
	result r[NCASES];
} size_result;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int fail(const char *what, berth_error *err)
{
	const berth_problem *p = err ? berth_error_get(err, 0) : NULL;
	fprintf(stderr, "list: %s: %s\n", what, p ? p->message : "failed");
	berth_error_free(err);
	return -1;
}

/* an id as berth makes them: 10 characters in no order */
static void run_id(char id[16], long long i)
{
	static const char digits[] = "0123456789abcdefghijklmnopqrstuv";
	unsigned long long x = (unsigned long long)i * 0x9E3779B97F4A7C15ULL;
	for (int k = 0; k < 10; k++, x >>= 5)
		id[k] = digits[x & 31];
	id[10] = 0;
}

static char spec[401], effective[1201];

static bool final_only; /* Running and Pending runs made Failed and Stopped */

static void fill(store_run *r, char id[16], long long i)
{
	run_id(id, i);
	memset(r, 0, sizeof(*r));
	r->info.id = id;
	r->info.name = "train";
	r->info.project = (char *)projects[i % 4];
	r->info.backend = "local";
	/* each project in every state: 40% Succeeded, 20% Failed and Running, 10%
	 * Pending and Stopped (so that a page of a project in one state is full at
	 * 1,000 runs, also from the middle) */
	static const berth_state states[10] = {
		BERTH_STATE_SUCCEEDED, BERTH_STATE_SUCCEEDED, BERTH_STATE_SUCCEEDED,
		BERTH_STATE_SUCCEEDED, BERTH_STATE_FAILED,    BERTH_STATE_FAILED,
		BERTH_STATE_RUNNING,   BERTH_STATE_RUNNING,   BERTH_STATE_PENDING,
		BERTH_STATE_STOPPED};
	r->info.state = states[i / 4 % 10];
	if (final_only && r->info.state == BERTH_STATE_RUNNING)
		r->info.state = BERTH_STATE_FAILED;
	if (final_only && r->info.state == BERTH_STATE_PENDING)
		r->info.state = BERTH_STATE_STOPPED;
	r->info.created = 1700000000000LL + i;
	r->info.cpu_milli = 1000;
	r->info.mem = 1LL << 30;
	r->info.exit_code = -1;
	r->info.effective = effective;
	r->spec = spec;
	r->uid = r->gid = r->fs_group = -1;
}

static int make_store(const char *home, long long n, double *secs)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/berth.db", home);
	store *s = NULL;
	berth_error *err = NULL;
	if (mkdir(home, 0700) || store_open(&s, path, &err))
		return fail("opening the store", err);
	double t0 = now();
	/* one transaction: its pages stay in memory (256 MiB) until the commit */
	store_db_exec(s, "PRAGMA cache_size = -262144", NULL);
	if (store_begin(s, &err))
		return fail("begin", err);
	for (long long i = 1; i <= n; i++) {
		char id[16];
		store_run r;
		fill(&r, id, i);
		if (store_run_insert(s, &r, &err)) {
			store_close(s);
			return fail("inserting", err);
		}
	}
	if (store_commit(s, &err) || store_checkpoint(s, &err))
		return fail("commit", err);
	*secs = now() - t0;
	store_close(s);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* the case's page again and again, for a quarter of a second (5 to 5,000 times) */
static int measure(berth_backend *b, const list_case *c, long long n, result *out)
{
	static double t[5000];
	size_t reps = 0;
	double start = now();
	int64_t after = c->deep ? n / 2 + 1 : 0;
	while (reps < 5 || (reps < 5000 && now() - start < 0.25)) {
		berth_run_info **infos = NULL;
		size_t got = 0;
		int64_t next = 0;
		berth_error *err = NULL;
		double t0 = now();
		int rc = berth_run_page(b, c->np ? projects + 1 : NULL, c->np, c->state, NULL, after, LIMIT,
					&infos, &got, &next, &err);
		t[reps++] = now() - t0;
		berth_run_info_list_free(infos, got);
		if (rc)
			return fail(c->what, err);
		out->rows = got;
	}
	qsort(t, reps, sizeof(t[0]), cmp_double);
	out->median = t[reps / 2];
	out->p99 = t[(reps * 99) / 100 < reps ? (reps * 99) / 100 : reps - 1];
	return 0;
}

/* creates as the server makes them, one transaction each; then each of them
 * started (state Running) as its supervisor writes it, one transaction each */
static int creates(const char *home, long long n, double *per_s, double *updates_per_s)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/berth.db", home);
	store *s = NULL;
	berth_error *err = NULL;
	if (store_open(&s, path, &err))
		return fail("opening the store", err);
	store_long_lived(s);
	const long long count = 2000;
	double t0 = now();
	for (long long i = 1; i <= count; i++) {
		char id[16];
		store_run r;
		fill(&r, id, n + i);
		if (store_begin(s, &err) || store_run_insert(s, &r, &err) || store_commit(s, &err)) {
			store_close(s);
			return fail("a create", err);
		}
	}
	*per_s = (double)count / (now() - t0);
	t0 = now();
	for (long long i = 1; i <= count; i++) {
		char id[16];
		store_run r;
		fill(&r, id, n + i);
		r.info.state = BERTH_STATE_RUNNING;
		r.info.started = r.info.created + 1;
		r.pid = 4242;
		if (store_begin(s, &err) || store_run_update(s, &r, &err) || store_commit(s, &err)) {
			store_close(s);
			return fail("an update", err);
		}
	}
	*updates_per_s = (double)count / (now() - t0);
	store_close(s);
	return 0;
}

static void fmt_time(char *buf, size_t len, double s)
{
	if (s < 1e-3)
		snprintf(buf, len, "%.0f µs", s * 1e6);
	else if (s < 1)
		snprintf(buf, len, "%.1f ms", s * 1e3);
	else
		snprintf(buf, len, "%.2f s", s);
}

static void fmt_count(char *buf, size_t len, long long n)
{
	if (n >= 1000000 && n % 1000000 == 0)
		snprintf(buf, len, "%lld,000,000", n / 1000000);
	else if (n >= 1000 && n % 1000 == 0)
		snprintf(buf, len, "%lld,000", n / 1000);
	else
		snprintf(buf, len, "%lld", n);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: list DIR [SIZE...] | list --final HOME N\n");
		return 2;
	}
	memset(spec, 's', sizeof(spec) - 1);
	memset(effective, 'e', sizeof(effective) - 1);
	if (!strcmp(argv[1], "--final")) {
		double secs;
		final_only = true;
		return argc == 4 && !make_store(argv[2], strtoll(argv[3], NULL, 10), &secs) ? 0 : 1;
	}
	static size_result sizes[MAX_SIZES];
	size_t nsizes = 0;
	for (int i = 2; i < argc && nsizes < MAX_SIZES; i++)
		sizes[nsizes++].n = strtoll(argv[i], NULL, 10);
	if (!nsizes) {
		sizes[0].n = 1000;
		sizes[1].n = 100000;
		sizes[2].n = 1000000;
		nsizes = 3;
	}
	for (size_t k = 0; k < nsizes; k++) {
		size_result *z = &sizes[k];
		char home[4096];
		snprintf(home, sizeof(home), "%s/%lld", argv[1], z->n);
		fprintf(stderr, "list: %lld runs: making the store\n", z->n);
		if (make_store(home, z->n, &z->build_s))
			return 1;
		berth_backend *b = NULL;
		berth_error *err = NULL;
		berth_backend_opts o = {.home = home, .passive = true, .cached = true};
		if (berth_backend_open(&b, "local", &o, &err))
			return fail("opening the backend", err) ? 1 : 0;
		berth_error_free(err);
		fprintf(stderr, "list: %lld runs: pages\n", z->n);
		for (size_t c = 0; c < NCASES; c++)
			if (measure(b, &cases[c], z->n, &z->r[c])) {
				berth_backend_close(b);
				return 1;
			}
		berth_backend_close(b);
		if (creates(home, z->n, &z->creates_per_s, &z->updates_per_s))
			return 1;
	}
	char a[32], p[32];
	printf("| page of %d, newest first: median (p99) |", LIMIT);
	for (size_t k = 0; k < nsizes; k++) {
		fmt_count(a, sizeof(a), sizes[k].n);
		printf(" %s runs |", a);
	}
	printf(" largest / smallest |\n|---|");
	for (size_t k = 0; k <= nsizes; k++)
		printf("---|");
	printf("\n");
	for (size_t c = 0; c < NCASES; c++) {
		printf("| %s |", cases[c].what);
		for (size_t k = 0; k < nsizes; k++) {
			const result *r = &sizes[k].r[c];
			fmt_time(a, sizeof(a), r->median);
			fmt_time(p, sizeof(p), r->p99);
			printf(" %s (%s)%s |", a, p, r->rows == LIMIT ? "" : " *");
		}
		printf(" %.2f |\n", sizes[nsizes - 1].r[c].median / sizes[0].r[c].median);
	}
	printf("| store made in one transaction, runs/s |");
	for (size_t k = 0; k < nsizes; k++)
		printf(" %.0f |", (double)sizes[k].n / sizes[k].build_s);
	printf(" |\n| creates, one transaction each, /s |");
	for (size_t k = 0; k < nsizes; k++)
		printf(" %.0f |", sizes[k].creates_per_s);
	printf(" %.2f |\n| the same runs started, one transaction each, /s |",
	       sizes[nsizes - 1].creates_per_s / sizes[0].creates_per_s);
	for (size_t k = 0; k < nsizes; k++)
		printf(" %.0f |", sizes[k].updates_per_s);
	printf(" %.2f |\n", sizes[nsizes - 1].updates_per_s / sizes[0].updates_per_s);
	bool shorts = false;
	for (size_t c = 0; c < NCASES; c++)
		for (size_t k = 0; k < nsizes; k++)
			shorts |= sizes[k].r[c].rows != LIMIT;
	if (shorts)
		printf("\n\\* a page of fewer than %d runs (the store holds no more)\n", LIMIT);
	return 0;
}
