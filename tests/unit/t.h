/*
 * t.h - the unit test harness: each test is a function; CHECK records a
 * failure with its position and goes on, so one table-driven test reports
 * every failing row. Each binary prints "ok NAME" or "FAIL NAME" per test,
 * which tests/run.sh counts.
 */
#ifndef BERTH_T_H
#define BERTH_T_H

#include <stddef.h>
#include <string.h>

typedef struct t_case {
	const char *name;
	void (*fn)(void);
} t_case;

int t_check(int ok, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int t_run(const t_case *cases, size_t n, int argc, char **argv);

/* A new directory /tmp/PREFIX-XXXXXX (malloc'd path; NULL, and a failed
 * check, when it cannot be made), and rm -r of a path (links not followed). */
char *t_temp_dir(const char *prefix);
void t_rm_rf(const char *path);

/* Whether the mapping at addr was asked for transparent huge pages
 * (MADV_HUGEPAGE: "hg" among its VmFlags in /proc/self/smaps): 1 or 0; -1
 * when the kernel has none or smaps cannot tell. */
int t_huge_asked(const void *addr);

#define CHECK(c) t_check(!!(c), __FILE__, __LINE__, "%s", #c)
#define CHECKF(c, ...) t_check(!!(c), __FILE__, __LINE__, __VA_ARGS__)
#define CHECK_INT(a, b)                                                                  \
	do {                                                                             \
		long long t_a_ = (long long)(a), t_b_ = (long long)(b);                  \
		t_check(t_a_ == t_b_, __FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, \
			t_a_, t_b_);                                                     \
	} while (0)
#define CHECK_STR(a, b)                                                                  \
	do {                                                                             \
		const char *t_a_ = (a), *t_b_ = (b);                                     \
		t_check(t_a_ && t_b_ && strcmp(t_a_, t_b_) == 0, __FILE__, __LINE__,     \
			"%s == %s: \"%s\" != \"%s\"", #a, #b, t_a_ ? t_a_ : "(null)",    \
			t_b_ ? t_b_ : "(null)");                                         \
	} while (0)

#define T(fn) {#fn, fn}
#define T_MAIN(...)                                                                      \
	int main(int argc, char **argv)                                                  \
	{                                                                                \
		static const t_case cases[] = {__VA_ARGS__};                             \
		return t_run(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);      \
	}

#endif
