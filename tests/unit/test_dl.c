/*
 * test_dl.c - berth_dl_load: a library's functions into a table, and its refusals
 * (the way berth loads libcurl and libmicrohttpd).
 */
#include <string.h>

#include "base/dl.h"
#include "t.h"

typedef struct table {
	size_t (*strlen)(const char *s);
	int (*strcmp)(const char *a, const char *b);
} table;

static const dl_sym syms[] = {
	{"strlen", offsetof(table, strlen)},
	{"strcmp", offsetof(table, strcmp)},
};

static void test_loads(void)
{
	static const char *const names[] = {"libberth-no-such.so.9", "libc.so.6", NULL};
	table t = {0};
	char why[256] = "";
	CHECK_INT(berth_dl_load(names, syms, 2, &t, sizeof(t), why, sizeof(why)), 0);
	if (CHECK(t.strlen && t.strcmp)) {
		CHECK_INT(t.strlen("berth"), 5);
		CHECK(t.strcmp("a", "b") < 0);
	}
}

static void test_refusals(void)
{
	static const char *const none[] = {"libberth-no-such.so.9", NULL};
	static const char *const libc[] = {"libc.so.6", NULL};
	static const dl_sym missing[] = {{"strlen", 0}, {"berth_no_such_symbol", sizeof(void *)}};
	table t = {0};
	char why[256] = "";
	CHECK_INT(berth_dl_load(none, syms, 2, &t, sizeof(t), why, sizeof(why)), -1);
	CHECK(strstr(why, "libberth-no-such.so.9") != NULL);
	CHECK_INT(berth_dl_load(libc, missing, 2, &t, sizeof(t), why, sizeof(why)), -1);
	CHECK(strstr(why, "berth_no_such_symbol") != NULL);
	/* a refusal leaves the table as it was: its callers test a pointer for "loaded" */
	CHECK(t.strlen == NULL && t.strcmp == NULL);
}

T_MAIN(T(test_loads), T(test_refusals))
