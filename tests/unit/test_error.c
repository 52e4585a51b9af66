/*
 * test_error.c - berth/error.h: problems, formatting, ordering, moving, the
 * out-of-memory error, and the mapping of codes to names and statuses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/error.h"
#include "base/internal.h"
#include "t.h"

/* A problem built by hand, for berth_problem_format. */
static berth_problem problem(const char *file, unsigned line, unsigned col, const char *path,
			     berth_severity sev, const char *msg)
{
	berth_problem p = {BERTH_EINVALID, sev, file, line, col, path, msg};
	return p;
}

static const char *fmt(const berth_problem *p)
{
	static char buf[512];
	size_t n = berth_problem_format(p, buf, sizeof(buf));
	CHECKF(n == strlen(buf), "returned %zu for \"%s\"", n, buf);
	return buf;
}

/* Adds an error at line:col of file with message msg. */
static void add(berth_error **err, const char *file, unsigned line, unsigned col, const char *msg)
{
	berth_where w = {file, line, col, NULL};
	CHECK_INT(berth_problem_add(err, BERTH_EINVALID, BERTH_ERROR, &w, "%s", msg), -BERTH_EINVALID);
}

/* The messages of err, joined by spaces, in a static buffer. */
static const char *messages(const berth_error *err)
{
	static char buf[1024];
	size_t o = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < berth_error_count(err) && o < sizeof(buf); i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%s", i ? " " : "",
				      berth_error_get(err, i)->message);
	return buf;
}

/* ---- berth_problem_format ---------------------------------------------------- */

static void test_format_full(void)
{
	berth_problem p = problem("train.yaml", 12, 10, "resources.mem.requests", BERTH_ERROR,
				  "\"32Gb\" is not a quantity");
	CHECK_STR(fmt(&p), "train.yaml:12:10: resources.mem.requests: \"32Gb\" is not a quantity");
}

static void test_format_parts_left_out(void)
{
	berth_problem p = problem("t.yaml", 0, 0, NULL, BERTH_ERROR, "holds no run spec");
	CHECK_STR(fmt(&p), "t.yaml: holds no run spec");
	p = problem("t.yaml", 3, 0, NULL, BERTH_ERROR, "m");
	CHECK_STR(fmt(&p), "t.yaml:3: m");
	p = problem("t.yaml", 0, 0, "fs_group", BERTH_ERROR, "m");
	CHECK_STR(fmt(&p), "t.yaml: fs_group: m");
	p = problem(NULL, 0, 0, "fs_group", BERTH_ERROR, "m");
	CHECK_STR(fmt(&p), "fs_group: m");
	p = problem(NULL, 0, 0, NULL, BERTH_ERROR, "out of memory");
	CHECK_STR(fmt(&p), "out of memory");
	/* a position without a file is not shown */
	p = problem(NULL, 4, 2, NULL, BERTH_ERROR, "m");
	CHECK_STR(fmt(&p), "m");
}

static void test_format_warning(void)
{
	berth_problem p = problem("t.yaml", 3, 19, NULL, BERTH_WARNING, "comma ignored");
	CHECK_STR(fmt(&p), "t.yaml:3:19: warning: comma ignored");
	p = problem("t.yaml", 40, 7, "args", BERTH_WARNING, "args replace function.args (line 8)");
	CHECK_STR(fmt(&p), "t.yaml:40:7: warning: args: args replace function.args (line 8)");
	p = problem(NULL, 0, 0, NULL, BERTH_WARNING, "w");
	CHECK_STR(fmt(&p), "warning: w");
}

static void test_format_truncates(void)
{
	berth_problem p = problem("t.yaml", 2, 19, "resources.cpu", BERTH_ERROR, "bad");
	const char *full = "t.yaml:2:19: resources.cpu: bad";
	char buf[8];
	memset(buf, '@', sizeof(buf));
	CHECK_INT(berth_problem_format(&p, buf, sizeof(buf)), strlen(full));
	CHECK_STR(buf, "t.yaml:");
	CHECK_INT(berth_problem_format(&p, NULL, 0), strlen(full));
	char one[1] = {'@'};
	CHECK_INT(berth_problem_format(&p, one, 1), strlen(full));
	CHECK_INT(one[0], '\0');
	char exact[32];
	CHECK_INT(strlen(full), 31);
	CHECK_INT(berth_problem_format(&p, exact, sizeof(exact)), 31);
	CHECK_STR(exact, full);
}

/* ---- building errors ---------------------------------------------------------------- */

static void test_problem_add(void)
{
	berth_error *err = NULL;
	char file[] = "a.yaml", path[] = "resources.cpu";
	berth_where w = {file, 5, 7, path};

	CHECK_INT(berth_problem_add(&err, BERTH_EQUANTITY, BERTH_ERROR, &w, "%s is bad (%d)", "\"x\"", 3),
		  -BERTH_EQUANTITY);
	CHECK_INT(berth_problem_add(&err, BERTH_EINVALID, BERTH_WARNING, NULL, "w%d", 1), 0);
	CHECK_INT(berth_fail(&err, BERTH_EIO, "cannot open \"%s\"", "x"), -BERTH_EIO);
	/* the strings are copies */
	file[0] = 'X';
	path[0] = 'X';
	CHECK_INT(berth_error_count(err), 3);
	CHECK_INT(berth_error_errors(err), 2);
	CHECK_INT(berth_error_code(err), BERTH_EQUANTITY);
	const berth_problem *p = berth_error_get(err, 0);
	if (CHECK(p != NULL)) {
		CHECK_INT(p->code, BERTH_EQUANTITY);
		CHECK_INT(p->severity, BERTH_ERROR);
		CHECK_STR(p->file, "a.yaml");
		CHECK_INT(p->line, 5);
		CHECK_INT(p->column, 7);
		CHECK_STR(p->path, "resources.cpu");
		CHECK_STR(p->message, "\"x\" is bad (3)");
	}
	p = berth_error_get(err, 1);
	if (CHECK(p != NULL)) {
		CHECK_INT(p->severity, BERTH_WARNING);
		CHECK(p->file == NULL);
		CHECK(p->path == NULL);
		CHECK_INT(p->line, 0);
		CHECK_STR(p->message, "w1");
	}
	p = berth_error_get(err, 2);
	if (CHECK(p != NULL)) {
		CHECK_INT(p->code, BERTH_EIO);
		CHECK(p->file == NULL);
		CHECK_STR(p->message, "cannot open \"x\"");
	}
	CHECK(berth_error_get(err, 3) == NULL);
	berth_error_free(err);
}

static void test_problem_add_long_message_and_empty_path(void)
{
	berth_error *err = NULL;
	char longs[1001];
	memset(longs, 'q', 1000);
	longs[1000] = '\0';
	berth_where w = {"f", 1, 1, ""};
	CHECK_INT(berth_problem_add(&err, BERTH_EINVALID, BERTH_ERROR, &w, "<%s>", longs), -BERTH_EINVALID);
	const berth_problem *p = berth_error_get(err, 0);
	if (CHECK(p != NULL)) {
		CHECK_INT(strlen(p->message), 1002);
		CHECK(p->message[0] == '<' && p->message[1001] == '>' && p->message[500] == 'q');
		CHECK(p->path == NULL); /* an empty path is no path */
	}
	/* a path without a file, and no place at all: the strings a problem
	 * keeps are one allocation, freed whichever of them it starts with */
	berth_where nofile = {NULL, 3, 4, "p.q"};
	CHECK_INT(berth_problem_add(&err, BERTH_ETYPE, BERTH_WARNING, &nofile, "m %d", 2), 0);
	CHECK_INT(berth_problem_add(&err, BERTH_ETYPE, BERTH_WARNING, NULL, "%s", longs), 0);
	p = berth_error_get(err, 1);
	if (CHECK(p != NULL)) {
		CHECK(p->file == NULL);
		CHECK_STR(p->path, "p.q");
		CHECK_STR(p->message, "m 2");
		CHECK_INT(p->line, 3);
		CHECK_INT(p->column, 4);
	}
	p = berth_error_get(err, 2);
	if (CHECK(p != NULL))
		CHECK(p->file == NULL && p->path == NULL && strcmp(p->message, longs) == 0);
	berth_error_free(err);
}

static void test_problem_add_null_err(void)
{
	/* no error object: only the return value */
	CHECK_INT(berth_problem_add(NULL, BERTH_ETYPE, BERTH_ERROR, NULL, "x"), -BERTH_ETYPE);
	CHECK_INT(berth_problem_add(NULL, BERTH_ETYPE, BERTH_WARNING, NULL, "x"), 0);
	CHECK_INT(berth_fail(NULL, BERTH_EARG, "x"), -BERTH_EARG);
}

static void test_queries_on_null_and_warnings(void)
{
	berth_error *err = NULL;
	CHECK_INT(berth_error_code(NULL), BERTH_OK);
	CHECK_INT(berth_error_count(NULL), 0);
	CHECK_INT(berth_error_errors(NULL), 0);
	CHECK(berth_error_get(NULL, 0) == NULL);
	berth_error_free(NULL);
	berth_error_sort(NULL);

	berth_problem_add(&err, BERTH_ESYNTAX, BERTH_WARNING, NULL, "a");
	berth_problem_add(&err, BERTH_EINVALID, BERTH_WARNING, NULL, "b");
	CHECK_INT(berth_error_code(err), BERTH_OK); /* warnings only */
	CHECK_INT(berth_error_count(err), 2);
	CHECK_INT(berth_error_errors(err), 0);
	berth_problem_add(&err, BERTH_EDUPLICATE, BERTH_ERROR, NULL, "c");
	berth_problem_add(&err, BERTH_ETYPE, BERTH_ERROR, NULL, "d");
	/* the first error, not the first problem */
	CHECK_INT(berth_error_code(err), BERTH_EDUPLICATE);
	CHECK_INT(berth_error_errors(err), 2);
	berth_error_free(err);
}

static void test_out_of_memory_error(void)
{
	berth_error *err = NULL;
	add(&err, "f", 1, 1, "first");
	add(&err, "f", 2, 1, "second");
	/* a short message goes where the first two are kept: no allocation */
	berth_fail_alloc_after = 1;
	CHECK_INT(berth_problem_add(&err, BERTH_EINVALID, BERTH_WARNING, NULL, "third"), 0);
	CHECK_INT(berth_fail_alloc_after, 1);
	CHECK_INT(berth_error_count(err), 3);
	/* one past their first kilobyte cannot be copied: *err becomes the
	 * static error */
	char longs[1500];
	memset(longs, 'l', sizeof(longs) - 1);
	longs[sizeof(longs) - 1] = '\0';
	CHECK_INT(berth_problem_add(&err, BERTH_EINVALID, BERTH_ERROR, NULL, "%s", longs), -BERTH_ENOMEM);
	berth_fail_alloc_after = 0;
	CHECK_INT(berth_error_count(err), 1);
	CHECK_INT(berth_error_errors(err), 1);
	CHECK_INT(berth_error_code(err), BERTH_ENOMEM);
	const berth_problem *p = berth_error_get(err, 0);
	if (CHECK(p != NULL)) {
		CHECK_STR(p->message, "out of memory");
		CHECK(p->file == NULL);
		CHECK_STR(fmt(p), "out of memory");
	}
	/* adding to it keeps it, and freeing it is harmless (even twice) */
	CHECK_INT(berth_problem_add(&err, BERTH_ETYPE, BERTH_ERROR, NULL, "more"), -BERTH_ENOMEM);
	CHECK_INT(berth_problem_add(&err, BERTH_ETYPE, BERTH_WARNING, NULL, "more"), 0);
	CHECK_INT(berth_error_count(err), 1);
	CHECK_INT(berth_error_code(err), BERTH_ENOMEM);
	berth_error_sort(err);
	berth_error_free(err);
	berth_error_free(err);

	/* the very first allocation, the error object itself */
	err = NULL;
	berth_fail_alloc_after = 1;
	CHECK_INT(berth_fail(&err, BERTH_EIO, "x"), -BERTH_ENOMEM);
	berth_fail_alloc_after = 0;
	CHECK_INT(berth_error_code(err), BERTH_ENOMEM);
	berth_error_free(err);
}

/* Each allocation of an add, in turn, fails: never a crash or a leak. The
 * message (len bytes) is given whole ("%s"), or formatted past the stack's
 * 256 bytes; past 64 KiB it goes to a chunk of huge pages (a mapping that
 * fails as an allocation does). */
static int every_allocation_fails(size_t len, int formatted)
{
	int done = 0, failed = 0;
	char *longs = malloc(len + 1);
	if (!CHECK(longs != NULL))
		return -1;
	memset(longs, 'z', len);
	longs[len] = '\0';
	for (long n = 1; n < 100 && !done; n++) {
		berth_error *err = NULL;
		berth_where w = {"f.yaml", 1, 2, "a.b"};
		add(&err, "f.yaml", 1, 1, "before");
		berth_fail_alloc_after = n;
		int ret = formatted ? berth_problem_add(&err, BERTH_ETYPE, BERTH_ERROR, &w, "<%s>", longs)
				    : berth_problem_add(&err, BERTH_ETYPE, BERTH_ERROR, &w, "%s", longs);
		int injected = berth_fail_alloc_after == 0;
		berth_fail_alloc_after = 0;
		if (injected) {
			failed++;
			CHECK_INT(ret, -BERTH_ENOMEM);
			CHECK_INT(berth_error_code(err), BERTH_ENOMEM);
			CHECK_INT(berth_error_count(err), 1);
		} else {
			CHECK_INT(ret, -BERTH_ETYPE);
			CHECK_INT(berth_error_count(err), 2);
			CHECK_INT(berth_error_code(err), BERTH_EINVALID);
			const berth_problem *p = berth_error_get(err, 1);
			CHECK(p && strlen(p->message) == len + 2 * (size_t)formatted &&
			      strcmp(p->file, "f.yaml") == 0 && strcmp(p->path, "a.b") == 0);
			done = 1;
		}
		berth_error_free(err);
	}
	CHECK(done);
	free(longs);
	return failed;
}

static void test_problem_add_every_allocation_fails(void)
{
	/* how many allocations each add makes, each failed in turn: none where
	 * the text fits the first chunk; the formatted message's buffer; the
	 * huge-page chunk; both */
	CHECK_INT(every_allocation_fails(399, 0), 0);
	CHECK_INT(every_allocation_fails(399, 1), 1);
	CHECK_INT(every_allocation_fails(100000, 0), 1);
	CHECK_INT(every_allocation_fails(100000, 1), 2);
}

/* One problem of many: warning i of a stream, as render's runs have them. */
static void many_add(berth_error **err, int i, char *want, size_t n)
{
	berth_where w = {"<stdin>", (unsigned)i + 1, 3, "resources.cpu.requests"};
	snprintf(want, n, "%dm from the run spec is overridden by profile \"p%d\", which decides "
		 "resources.cpu whole (x.yaml:%d:1)", i, i % 7, i);
	berth_problem_add(err, BERTH_EINVALID, BERTH_WARNING, &w, "%s", want);
}

/* Thousands of problems (a stream of runs): each keeps its strings whole,
 * past the first chunks in memory asked for huge pages, and they stay
 * whole when the problems move to another error and their first is freed. */
static void test_many_problems(void)
{
	enum { N = 20000, M = 3000 };
	berth_error *err = NULL, *dst = NULL;
	char want[256];
	for (int i = 0; i < N; i++)
		many_add(&err, i, want, sizeof(want));
	for (int i = 0; i < M; i++)
		many_add(&dst, N + i, want, sizeof(want));
	CHECK_INT(berth_error_count(err), N);
	const berth_problem *last = berth_error_get(err, N - 1);
	if (CHECK(last != NULL))
		CHECK(t_huge_asked(last->message) != 0);
	CHECK_INT(berth_error_move(&dst, err), 0);
	CHECK_INT(berth_error_count(dst), N + M);
	int bad = 0;
	for (int k = 0; k < N + M; k++) {
		int i = k < M ? N + k : k - M; /* dst's own first, then the moved ones */
		const berth_problem *p = berth_error_get(dst, (size_t)k);
		snprintf(want, sizeof(want), "%dm from the run spec is overridden by profile \"p%d\", "
			 "which decides resources.cpu whole (x.yaml:%d:1)", i, i % 7, i);
		if (!p || strcmp(p->message, want) || strcmp(p->file, "<stdin>") ||
		    strcmp(p->path, "resources.cpu.requests") || p->line != (unsigned)i + 1)
			bad++;
	}
	CHECKF(bad == 0, "%d of %d problems not as added", bad, N + M);
	/* and more go on after the moved ones */
	many_add(&dst, 7, want, sizeof(want));
	const berth_problem *p = berth_error_get(dst, N + M);
	CHECK(p && strcmp(p->message, want) == 0);
	berth_error_free(dst);
}

/* ---- berth_error_sort ----------------------------------------------------------------- */

static void test_sort_by_line_and_column(void)
{
	berth_error *err = NULL;
	add(&err, "t.yaml", 3, 1, "c");
	add(&err, "t.yaml", 1, 5, "b");
	add(&err, "t.yaml", 1, 2, "a");
	add(&err, "t.yaml", 10, 1, "e");
	add(&err, "t.yaml", 3, 1, "d"); /* same place as "c": stays after it */
	add(&err, "t.yaml", 2, 9, "b2");
	berth_error_sort(err);
	CHECK_STR(messages(err), "a b b2 c d e");
	/* sorting again changes nothing */
	berth_error_sort(err);
	CHECK_STR(messages(err), "a b b2 c d e");
	CHECK_INT(berth_error_count(err), 6);
	berth_error_free(err);
}

static void test_sort_stable(void)
{
	berth_error *err = NULL;
	char msg[8];
	for (int i = 0; i < 20; i++) {
		snprintf(msg, sizeof(msg), "%c", 'a' + i);
		add(&err, "t.yaml", 5, 5, msg);
	}
	add(&err, "t.yaml", 1, 1, "0");
	berth_error_sort(err);
	CHECK_STR(messages(err), "0 a b c d e f g h i j k l m n o p q r s t");
	berth_error_free(err);
}

static void test_sort_files_in_order_of_appearance(void)
{
	berth_error *err = NULL;
	add(&err, "b.yaml", 9, 1, "b9");
	add(&err, "a.yaml", 1, 1, "a1");
	add(&err, NULL, 0, 0, "none");
	add(&err, "b.yaml", 2, 1, "b2");
	add(&err, "a.yaml", 0, 0, "a0");
	berth_problem_add(&err, BERTH_ESYNTAX, BERTH_WARNING, &(berth_where){"b.yaml", 5, 1, NULL}, "w5");
	berth_error_sort(err);
	CHECK_STR(messages(err), "b2 w5 b9 a0 a1 none");
	const berth_problem *p = berth_error_get(err, 1);
	if (CHECK(p != NULL)) {
		CHECK_INT(p->severity, BERTH_WARNING);
		CHECK_INT(p->code, BERTH_ESYNTAX);
	}
	CHECK_INT(berth_error_code(err), BERTH_EINVALID);
	berth_error_free(err);
}

static void test_sort_allocation_failure(void)
{
	/* sorting needs memory; without it the problems stay as they were */
	berth_error *err = NULL;
	add(&err, "t.yaml", 2, 1, "two");
	add(&err, "t.yaml", 1, 1, "one");
	berth_fail_alloc_after = 1;
	berth_error_sort(err);
	berth_fail_alloc_after = 0;
	CHECK_STR(messages(err), "two one");
	berth_fail_alloc_after = 2;
	berth_error_sort(err);
	berth_fail_alloc_after = 0;
	CHECK_STR(messages(err), "two one");
	berth_error_sort(err);
	CHECK_STR(messages(err), "one two");
	berth_error_free(err);
}

/* Sorting, adding and sorting again orders the list as one sort of
 * everything would: the new problems merged among the sorted ones (after
 * those at the same place), new files after the known ones; problems that
 * all go after the sorted ones (a stream's next run) are appended as they
 * sort. */
static void test_sort_again_after_adding(void)
{
	berth_error *err = NULL, *once = NULL;
	static const struct {
		const char *file;
		unsigned line, col;
		const char *msg;
	} steps[] = {
		{"b.yaml", 5, 1, "b5"}, {"a.yaml", 2, 1, "a2"}, {"b.yaml", 1, 1, "b1"}, {NULL, 0, 0, "sort"},
		{"b.yaml", 5, 1, "b5x"}, {"c.yaml", 1, 1, "c1"}, {"b.yaml", 3, 1, "b3"},
		{"a.yaml", 1, 1, "a1"}, {NULL, 0, 0, "sort"},
		{"c.yaml", 7, 1, "c7"}, {"c.yaml", 9, 2, "c9"}, {NULL, 0, 0, "sort"},
		{NULL, 0, 0, "sort"}, {NULL, 1, 0, "none"}, {"a.yaml", 1, 1, "a1x"}, {NULL, 0, 0, "sort"},
	};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(steps); i++) {
		if (!strcmp(steps[i].msg, "sort")) {
			berth_error_sort(err);
			continue;
		}
		add(&err, steps[i].file, steps[i].line, steps[i].col, steps[i].msg);
		add(&once, steps[i].file, steps[i].line, steps[i].col, steps[i].msg);
	}
	berth_error_sort(once);
	CHECK_STR(messages(err), "b1 b3 b5 b5x a1 a1x a2 c1 c7 c9 none");
	char all[1024];
	snprintf(all, sizeof(all), "%s", messages(once));
	CHECK_STR(messages(err), all);
	CHECK_INT(berth_error_errors(err), 11);
	berth_problem_add(&err, BERTH_ESYNTAX, BERTH_WARNING, NULL, "%s", "w");
	CHECK_INT(berth_error_errors(err), 11);
	CHECK_INT(berth_error_count(err), 12);
	berth_error_free(err);
	berth_error_free(once);
}

/* ---- berth_error_move ---------------------------------------------------------------------- */

static void test_move(void)
{
	berth_error *dst = NULL, *src = NULL;

	/* NULL src: nothing happens */
	CHECK_INT(berth_error_move(&dst, NULL), 0);
	CHECK(dst == NULL);

	/* into an empty dst: src itself becomes dst */
	add(&src, "s", 1, 1, "s1");
	berth_error *keep = src;
	CHECK_INT(berth_error_move(&dst, src), 0);
	CHECK(dst == keep);
	CHECK_STR(messages(dst), "s1");

	/* appended in order, src freed (ASan would see a leak) */
	src = NULL;
	add(&src, "s", 1, 1, "s2");
	add(&src, "s", 1, 1, "s3");
	berth_problem_add(&src, BERTH_EIO, BERTH_WARNING, NULL, "w");
	CHECK_INT(berth_error_move(&dst, src), 0);
	CHECK_INT(berth_error_count(dst), 4);
	CHECK_STR(messages(dst), "s1 s2 s3 w");
	CHECK_INT(berth_error_errors(dst), 3);
	CHECK_INT(berth_error_code(dst), BERTH_EINVALID);
	if (berth_error_get(dst, 3))
		CHECK_INT(berth_error_get(dst, 3)->severity, BERTH_WARNING);

	/* many, so dst grows */
	src = NULL;
	for (int i = 0; i < 50; i++)
		add(&src, "s", (unsigned)i, 1, "x");
	CHECK_INT(berth_error_move(&dst, src), 0);
	CHECK_INT(berth_error_count(dst), 54);
	berth_error_free(dst);
}

static void test_move_out_of_memory(void)
{
	/* a static out-of-memory src turns dst into it */
	berth_error *dst = NULL, *oom = NULL;
	add(&dst, "d", 1, 1, "d1");
	berth_fail_alloc_after = 1;
	berth_fail(&oom, BERTH_EIO, "x");
	berth_fail_alloc_after = 0;
	CHECK_INT(berth_error_code(oom), BERTH_ENOMEM);
	CHECK_INT(berth_error_move(&dst, oom), -BERTH_ENOMEM);
	CHECK_INT(berth_error_code(dst), BERTH_ENOMEM);
	CHECK_INT(berth_error_count(dst), 1);
	berth_error_free(dst);

	/* the first push needs to grow dst, and cannot */
	berth_error *src = NULL;
	dst = NULL;
	for (int i = 0; i < 4; i++)
		add(&dst, "d", 1, 1, "d"); /* full: count == capacity */
	add(&src, "s", 1, 1, "s1");
	add(&src, "s", 1, 1, "s2");
	berth_fail_alloc_after = 1;
	CHECK_INT(berth_error_move(&dst, src), -BERTH_ENOMEM);
	berth_fail_alloc_after = 0;
	CHECK_INT(berth_error_code(dst), BERTH_ENOMEM);
	CHECK_INT(berth_error_count(dst), 1);
	berth_error_free(dst);

	/* a push that fails after some items moved: the rest are freed */
	dst = NULL;
	src = NULL;
	add(&dst, "d", 1, 1, "d");
	for (int i = 0; i < 5; i++)
		add(&src, "s", 1, 1, "s");
	berth_fail_alloc_after = 1;
	CHECK_INT(berth_error_move(&dst, src), -BERTH_ENOMEM);
	berth_fail_alloc_after = 0;
	berth_error_free(dst);


	/* moving into the static out-of-memory error frees src */
	dst = NULL;
	src = NULL;
	berth_fail_alloc_after = 1;
	berth_fail(&dst, BERTH_EIO, "x");
	berth_fail_alloc_after = 0;
	add(&src, "s", 1, 1, "s");
	CHECK_INT(berth_error_move(&dst, src), -BERTH_ENOMEM);
	berth_error_free(dst);

}

/* ---- codes ------------------------------------------------------------------------------------ */

static void test_code_exit_status(void)
{
	static const struct {
		berth_code code;
		int status;
	} rows[] = {
		{BERTH_OK, 0},         {BERTH_ENOMEM, 1},    {BERTH_EIO, 1},
		{BERTH_ESYNTAX, 2},    {BERTH_EUNKNOWN, 2},  {BERTH_ETYPE, 2},
		{BERTH_EQUANTITY, 2},  {BERTH_ERANGE, 2},    {BERTH_EINVALID, 2},
		{BERTH_EMISSING, 2},   {BERTH_EDUPLICATE, 2}, {BERTH_ETOOBIG, 2},
		{BERTH_EPOLICY, 2},    {BERTH_EARG, 2},      {BERTH_EINTERNAL, 1},
		{BERTH_ENOTFOUND, 2},  {BERTH_ECONFLICT, 1}, {BERTH_EAUTH, 1},
		{BERTH_EFORBIDDEN, 1}, {BERTH_ENOSPC, 1}, {BERTH_ETIMEOUT, 1}, {(berth_code)99, 1},
	};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(rows); i++)
		CHECKF(berth_code_exit_status(rows[i].code) == rows[i].status, "code %d: exit %d, want %d",
		       (int)rows[i].code, berth_code_exit_status(rows[i].code), rows[i].status);
}

static void test_code_http_status(void)
{
	static const struct {
		berth_code code;
		int status;
	} rows[] = {
		{BERTH_OK, 200},         {BERTH_ENOMEM, 500},     {BERTH_EIO, 500},
		{BERTH_ESYNTAX, 422},    {BERTH_EUNKNOWN, 422},   {BERTH_ETYPE, 422},
		{BERTH_EQUANTITY, 422},  {BERTH_ERANGE, 422},     {BERTH_EINVALID, 422},
		{BERTH_EMISSING, 422},   {BERTH_EDUPLICATE, 422}, {BERTH_ETOOBIG, 413},
		{BERTH_EPOLICY, 422},    {BERTH_EARG, 400},       {BERTH_EINTERNAL, 500},
		{BERTH_ENOTFOUND, 404},  {BERTH_ECONFLICT, 409},  {BERTH_EAUTH, 401},
		{BERTH_EFORBIDDEN, 403}, {BERTH_ENOSPC, 507}, {BERTH_ETIMEOUT, 504}, {BERTH_EGONE, 410}, {(berth_code)99, 500},
	};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(rows); i++)
		CHECKF(berth_code_http_status(rows[i].code) == rows[i].status, "code %d: http %d, want %d",
		       (int)rows[i].code, berth_code_http_status(rows[i].code), rows[i].status);
}

static void test_code_names(void)
{
	static const struct {
		berth_code code;
		const char *name;
	} rows[] = {
		{BERTH_OK, "ok"},
		{BERTH_ENOMEM, "out-of-memory"},
		{BERTH_EIO, "io"},
		{BERTH_ESYNTAX, "syntax"},
		{BERTH_EUNKNOWN, "unknown-key"},
		{BERTH_ETYPE, "type"},
		{BERTH_EQUANTITY, "quantity"},
		{BERTH_ERANGE, "range"},
		{BERTH_EINVALID, "invalid"},
		{BERTH_EMISSING, "missing"},
		{BERTH_EDUPLICATE, "duplicate"},
		{BERTH_ETOOBIG, "too-big"},
		{BERTH_EPOLICY, "policy"},
		{BERTH_EARG, "usage"},
		{BERTH_EINTERNAL, "internal"},
		{BERTH_ENOTFOUND, "not-found"},
		{BERTH_ECONFLICT, "conflict"},
		{BERTH_EAUTH, "unauthorized"},
		{BERTH_EFORBIDDEN, "forbidden"},
		{BERTH_ENOSPC, "insufficient-storage"},
		{BERTH_ETIMEOUT, "timeout"},
		{BERTH_EGONE, "gone"},
		{(berth_code)22, "unknown"},
		{(berth_code)-1, "unknown"},
	};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(rows); i++)
		CHECK_STR(berth_code_name(rows[i].code), rows[i].name);
	/* the codes themselves are stable */
	CHECK_INT(BERTH_ENOMEM, 1);
	CHECK_INT(BERTH_ESYNTAX, 3);
	CHECK_INT(BERTH_EINVALID, 8);
	CHECK_INT(BERTH_ETOOBIG, 11);
	CHECK_INT(BERTH_EINTERNAL, 14);
	CHECK_INT(BERTH_EFORBIDDEN, 18);
	CHECK_INT(BERTH_ENOSPC, 19);
}

/* berth_join: the parts in order, cut to the buffer, always NUL-terminated;
 * and a problem whose format is "%s" has that text as its message. */
static void test_join_and_text_message(void)
{
	char buf[16];
	CHECK_STR(berth_join(buf, sizeof(buf), "a", "", "bc", "\"d\"", (char *)NULL), "abc\"d\"");
	CHECK_STR(berth_join(buf, sizeof(buf), "0123456789", "abcdefghij", (char *)NULL), "0123456789abcde");
	CHECK_STR(berth_join(buf, 1, "x", (char *)NULL), "");
	CHECK_STR(berth_join(buf, sizeof(buf), (char *)NULL), "");
	berth_error *err = NULL;
	berth_where w = {"f.yaml", 1, 2, "a.b"};
	berth_problem_add(&err, BERTH_EPOLICY, BERTH_WARNING, &w, "%s", "50% of \"x\" %d");
	const berth_problem *p = berth_error_get(err, 0);
	CHECK(p && strcmp(p->message, "50% of \"x\" %d") == 0);
	berth_error_free(err);
}

T_MAIN(T(test_join_and_text_message), T(test_format_full), T(test_format_parts_left_out), T(test_format_warning),
       T(test_format_truncates), T(test_problem_add), T(test_problem_add_long_message_and_empty_path),
       T(test_problem_add_null_err), T(test_queries_on_null_and_warnings), T(test_out_of_memory_error),
       T(test_problem_add_every_allocation_fails), T(test_many_problems), T(test_sort_by_line_and_column), T(test_sort_stable),
       T(test_sort_files_in_order_of_appearance), T(test_sort_allocation_failure),
       T(test_sort_again_after_adding), T(test_move),
       T(test_move_out_of_memory), T(test_code_exit_status), T(test_code_http_status),
       T(test_code_names))
