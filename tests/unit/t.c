#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "t.h"

static int failures;

int t_check(int ok, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	if (ok)
		return 1;
	failures++;
	fprintf(stderr, "  %s:%d: check failed: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 0;
}

/* With an argument, runs only the tests whose name contains it. */
int t_run(const t_case *cases, size_t n, int argc, char **argv)
{
	int failed = 0;
	for (size_t i = 0; i < n; i++) {
		if (argc > 1 && !strstr(cases[i].name, argv[1]))
			continue;
		failures = 0;
		cases[i].fn();
		printf("%s %s\n", failures ? "FAIL" : "ok", cases[i].name);
		fflush(stdout);
		failed += failures != 0;
	}
	return failed ? 1 : 0;
}
