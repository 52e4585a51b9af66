#define _GNU_SOURCE
#include <dirent.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

char *t_temp_dir(const char *prefix)
{
	char tmpl[256];
	snprintf(tmpl, sizeof(tmpl), "/tmp/%s-XXXXXX", prefix);
	char *d = mkdtemp(tmpl);
	CHECK(d != NULL);
	return d ? strdup(d) : NULL;
}

void t_rm_rf(const char *path)
{
	struct stat st;
	if (lstat(path, &st))
		return;
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		if (d) {
			struct dirent *de;
			while ((de = readdir(d)) != NULL) {
				if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
					continue;
				char sub[1024];
				snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
				t_rm_rf(sub);
			}
			closedir(d);
		}
		rmdir(path);
	} else {
		unlink(path);
	}
}

int t_huge_asked(const void *addr)
{
	if (access("/sys/kernel/mm/transparent_hugepage", F_OK))
		return -1;
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	char line[512];
	int in = 0, ret = -1;
	while (ret < 0 && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
		else if (in && !strncmp(line, "VmFlags:", 8))
			ret = strstr(line, " hg") != NULL;
	}
	fclose(f);
	return ret;
}
