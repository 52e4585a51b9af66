/*
 * test_cgroup.c - src/backend/local/cgroup.c: what is written for v2 and v1 into trees of
 * plain files under a temporary directory (layouts, limits, optional files,
 * shared cpu,cpuacct mounts), statistics read from fake files, errors that
 * leave nothing behind, allocation failures; then, as root on a host with
 * cgroups, a real cgroup: limits read back from the kernel, a process moved
 * in, counted, killed, an OOM kill counted, the cgroup removed; a child that
 * moves itself in (v1) or is made in it by clone3 (v2, also on the v2 mount
 * of a hybrid host).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "berth/error.h"
#include "backend/local/cgroup.h"
#include "backend/local/supervisor_internal.h"
#include "base/internal.h"
#include "t.h"

/* ---- helpers ---------------------------------------------------------------- */

static const char *at(const char *dir, const char *rel)
{
	static char bufs[4][1024];
	static int next;
	char *b = bufs[next++ % 4];
	snprintf(b, sizeof(bufs[0]), "%s/%s", dir, rel);
	return b;
}

static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!CHECKF(f != NULL, "cannot write %s", path))
		return;
	fputs(text, f);
	fclose(f);
}

/* The content of path in a static buffer; "<absent>" when it cannot be read. */
static const char *get_file(const char *path)
{
	static char bufs[2][4096];
	static int next;
	char *b = bufs[next++ % 2];
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(b, sizeof(bufs[0]), "<absent>");
		return b;
	}
	size_t n = fread(b, 1, sizeof(bufs[0]) - 1, f);
	b[n] = '\0';
	fclose(f);
	return b;
}

/* The content without one trailing newline (the kernel adds one). */
static const char *get_line(const char *path)
{
	char *s = (char *)get_file(path);
	size_t n = strlen(s);
	if (n && s[n - 1] == '\n')
		s[n - 1] = '\0';
	return s;
}

static int mkdirs(const char *path)
{
	return mkdir(path, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every path below dir, sorted and joined by spaces (symlinks not followed). */
static void list_into(const char *dir, const char *rel, char **names, size_t *n, size_t cap)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || *n == cap)
			continue;
		char r[512], full[1024];
		snprintf(r, sizeof(r), "%s%s%s", rel, *rel ? "/" : "", de->d_name);
		snprintf(full, sizeof(full), "%s/%s", dir, de->d_name);
		names[(*n)++] = berth_strdup(r);
		struct stat st;
		if (lstat(full, &st) == 0 && S_ISDIR(st.st_mode))
			list_into(full, r, names, n, cap);
	}
	closedir(d);
}

static const char *tree(const char *dir)
{
	static char out[4096];
	char *names[128];
	size_t n = 0;
	list_into(dir, "", names, &n, BERTH_ARRAY_SIZE(names));
	qsort(names, n, sizeof(names[0]), cmp_str);
	size_t o = 0;
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (o < sizeof(out))
			o += (size_t)snprintf(out + o, sizeof(out) - o, "%s%s", i ? " " : "", names[i]);
		free(names[i]);
	}
	return out;
}

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static const char *first_message(const berth_error *err)
{
	const berth_problem *p = berth_error_get(err, 0);
	return p ? p->message : "";
}

/* A v2 tree: ROOT/cgroup.controllers and an empty ROOT/cgroup.subtree_control. */
static char *v2_tree(const char *controllers)
{
	char *root = t_temp_dir("berth-cgroup");
	if (root) {
		put_file(at(root, "cgroup.controllers"), controllers);
		put_file(at(root, "cgroup.subtree_control"), "");
	}
	return root;
}

/* A v1 tree with a directory per controller named in ctrls (NULL-terminated). */
static char *v1_tree(const char *const *ctrls)
{
	char *root = t_temp_dir("berth-cgroup");
	for (size_t i = 0; root && ctrls[i]; i++)
		CHECK(mkdirs(at(root, ctrls[i])) == 0);
	return root;
}

static const char *const v1_all[] = {"cpu", "cpuacct", "memory", "pids", NULL};

/* ---- cg_detect ----------------------------------------------------------------- */

static void test_detect(void)
{
	char *v2 = v2_tree("cpu memory");
	static const char *const mem_only[] = {"memory", NULL}, *const cpu_only[] = {"cpu", NULL};
	char *v1a = v1_tree(v1_all), *v1m = v1_tree(mem_only), *v1c = v1_tree(cpu_only);
	char *none = t_temp_dir("berth-cgroup");
	if (!v2 || !v1a || !v1m || !v1c || !none)
		goto out;
	CHECK_INT(cg_detect(v2), CG_V2);
	CHECK_INT(cg_detect(v1a), CG_V1);
	CHECK_INT(cg_detect(v1m), CG_V1);
	CHECK_INT(cg_detect(v1c), CG_V1);
	CHECK_INT(cg_detect(none), CG_NONE);
	/* a file named memory is no hierarchy */
	put_file(at(none, "memory"), "");
	CHECK_INT(cg_detect(none), CG_NONE);
	CHECK_INT(cg_detect("/nonexistent/berth"), CG_NONE);
	CHECK_INT(cg_detect(NULL), CG_NONE);
	CHECK_STR(cg_version_name(CG_V1), "v1");
	CHECK_STR(cg_version_name(CG_V2), "v2");
	CHECK_STR(cg_version_name(CG_NONE), "none");
out:;
	char *trees[] = {v2, v1a, v1m, v1c, none};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(trees); i++) {
		if (trees[i])
			t_rm_rf(trees[i]);
		free(trees[i]);
	}
}

/* ---- v2 ------------------------------------------------------------------------- */

static void test_v2_create(void)
{
	char *root = v2_tree("cpu memory pids io\n");
	if (!root)
		return;
	cg_limits l = {500, 250, 64 << 20, 100};
	cg_handle *cg = NULL;
	berth_error *err = NULL;
	CHECK_INT(cg_create(&cg, CG_V2, root, "berth", "run1", &l, &err), 0);
	CHECK_STR(first_message(err), "");
	CHECK_STR(get_file(at(root, "cgroup.subtree_control")), "+cpu +memory +pids");
	CHECK_STR(get_file(at(root, "berth/cgroup.subtree_control")), "+cpu +memory +pids");
	CHECK_STR(get_file(at(root, "berth/run1/cpu.max")), "50000 100000");
	/* shares 250 * 1024 / 1000 = 256; weight 1 + (254 * 9999) / 262142 */
	char want[32];
	snprintf(want, sizeof(want), "%d", 1 + (254 * 9999) / 262142);
	CHECK_STR(get_file(at(root, "berth/run1/cpu.weight")), want);
	CHECK_STR(get_file(at(root, "berth/run1/cpu.weight")), "10");
	CHECK_STR(get_file(at(root, "berth/run1/memory.max")), "67108864");
	CHECK_STR(get_file(at(root, "berth/run1/pids.max")), "100");
	/* optional files are not made where the kernel has none */
	CHECK_STR(get_file(at(root, "berth/run1/memory.swap.max")), "<absent>");
	CHECK_STR(get_file(at(root, "berth/run1/memory.oom.group")), "<absent>");
	CHECK_STR(get_file(at(root, "berth/run1/cgroup.kill")), "<absent>");
	CHECK_STR(cg_path(cg), at(root, "berth/run1"));

	/* a second run under the same parent: nothing enabled twice */
	cg_handle *cg2 = NULL;
	CHECK_INT(cg_create(&cg2, CG_V2, root, "berth", "run2", &l, &err), 0);
	CHECK_STR(get_file(at(root, "cgroup.subtree_control")), "+cpu +memory +pids");
	CHECK_STR(get_file(at(root, "berth/cgroup.subtree_control")), "+cpu +memory +pids");

	CHECK_INT(cg_destroy(cg, &err), 0);
	CHECK(!is_dir(at(root, "berth/run1")));
	CHECK(is_dir(at(root, "berth/run2")));
	CHECK(is_dir(at(root, "berth"))); /* the parent is shared by runs */
	CHECK_INT(cg_destroy(cg, &err), 0); /* gone already: fine */
	CHECK_INT(cg_destroy(cg2, &err), 0);
	CHECK_STR(tree(root), "berth berth/cgroup.subtree_control cgroup.controllers cgroup.subtree_control");
	CHECK(err == NULL);
	cg_free(cg);
	cg_free(cg2);
	cg_free(NULL);
	berth_error_free(err);
	t_rm_rf(root);
	free(root);
}

static void test_v2_no_limits_and_optional_files(void)
{
	/* no pids controller; cpu already enabled at the root; the run's
	 * directory exists with the optional files (a kernel that has them) */
	char *root = v2_tree("cpu io memory");
	if (!root)
		return;
	put_file(at(root, "cgroup.subtree_control"), "cpu io\n");
	CHECK(mkdirs(at(root, "berth")) == 0 && mkdirs(at(root, "berth/run1")) == 0);
	put_file(at(root, "berth/run1/memory.swap.max"), "max\n");
	put_file(at(root, "berth/run1/memory.oom.group"), "0\n");
	cg_limits l = {0, 0, 64 << 20, 0};
	cg_handle *cg = NULL;
	berth_error *err = NULL;
	CHECK_INT(cg_create(&cg, CG_V2, root, "berth", "run1", &l, &err), 0);
	CHECK_STR(get_file(at(root, "cgroup.subtree_control")), "cpu io\n+memory");
	CHECK_STR(get_file(at(root, "berth/cgroup.subtree_control")), "+cpu +memory");
	CHECK_STR(get_file(at(root, "berth/run1/cpu.max")), "max 100000");
	CHECK_STR(get_file(at(root, "berth/run1/cpu.weight")), "100");
	CHECK_STR(get_file(at(root, "berth/run1/memory.max")), "67108864");
	CHECK_STR(get_file(at(root, "berth/run1/memory.swap.max")), "0");
	CHECK_STR(get_file(at(root, "berth/run1/memory.oom.group")), "1");
	CHECK_STR(get_file(at(root, "berth/run1/pids.max")), "<absent>");
	cg_free(cg);

	/* no limits at all */
	cg = NULL;
	CHECK_INT(cg_create(&cg, CG_V2, root, "berth", "run2", NULL, &err), 0);
	CHECK_STR(get_file(at(root, "berth/run2/cpu.max")), "max 100000");
	CHECK_STR(get_file(at(root, "berth/run2/memory.max")), "max");
	CHECK(err == NULL);
	cg_free(cg);
	t_rm_rf(root);
	free(root);
}

static void test_v2_cpu_conversions(void)
{
	static const struct {
		int64_t limit, request;
		const char *max, *weight;
	} rows[] = {
		{1000, 1000, "100000 100000", "39"}, /* shares 1024 */
		{4000, 2000, "400000 100000", "79"}, /* shares 2048: 1 + 2046 * 9999 / 262142 */
		{1, 1, "1000 100000", "1"},          /* the kernel's 1 ms minimum; shares at least 2 */
		{5, 2, "1000 100000", "1"},
		{256000, 256000, "25600000 100000", "10000"}, /* shares 262144, the most */
		{0, 1000000, "max 100000", "10000"},
		{-5, -5, "max 100000", "100"},
	};
	char *root = v2_tree("cpu memory");
	if (!root)
		return;
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(rows); i++) {
		char name[16];
		snprintf(name, sizeof(name), "r%zu", i);
		cg_limits l = {rows[i].limit, rows[i].request, 0, 0};
		cg_handle *cg = NULL;
		berth_error *err = NULL;
		CHECK_INT(cg_create(&cg, CG_V2, root, "p", name, &l, &err), 0);
		char rel[64];
		snprintf(rel, sizeof(rel), "p/%s/cpu.max", name);
		CHECKF(!strcmp(get_file(at(root, rel)), rows[i].max), "row %zu: cpu.max \"%s\"", i,
		       get_file(at(root, rel)));
		snprintf(rel, sizeof(rel), "p/%s/cpu.weight", name);
		CHECKF(!strcmp(get_file(at(root, rel)), rows[i].weight), "row %zu: cpu.weight \"%s\"", i,
		       get_file(at(root, rel)));
		berth_error_free(err);
		cg_free(cg);
	}
	t_rm_rf(root);
	free(root);
}

static void test_v2_needs_cpu_and_memory(void)
{
	char *root = v2_tree("cpu pids");
	if (!root)
		return;
	cg_handle *cg = NULL;
	berth_error *err = NULL;
	CHECK_INT(cg_create(&cg, CG_V2, root, "berth", "run1", NULL, &err), -BERTH_EIO);
	CHECK(cg == NULL);
	CHECK(strstr(first_message(err), "does not offer the memory controller") != NULL);
	CHECK(strstr(first_message(err), at(root, "cgroup.controllers")) != NULL);
	CHECK_STR(tree(root), "cgroup.controllers cgroup.subtree_control");
	berth_error_free(err);
	t_rm_rf(root);
	free(root);
}

/* ---- v1 ------------------------------------------------------------------------- */

static void test_v1_create(void)
{
	char *root = v1_tree(v1_all);
	if (!root)
		return;
	cg_limits l = {500, 250, 64 << 20, 100};
	cg_handle *cg = NULL;
	berth_error *err = NULL;
	CHECK_INT(cg_create(&cg, CG_V1, root, "berth", "run1", &l, &err), 0);
	CHECK_STR(first_message(err), "");
	CHECK_STR(get_file(at(root, "cpu/berth/run1/cpu.cfs_quota_us")), "50000");
	CHECK_STR(get_file(at(root, "cpu/berth/run1/cpu.cfs_period_us")), "100000");
	CHECK_STR(get_file(at(root, "cpu/berth/run1/cpu.shares")), "256");
	CHECK_STR(get_file(at(root, "memory/berth/run1/memory.limit_in_bytes")), "67108864");
	CHECK_STR(get_file(at(root, "memory/berth/run1/memory.memsw.limit_in_bytes")), "<absent>");
	CHECK_STR(get_file(at(root, "pids/berth/run1/pids.max")), "100");
	CHECK(is_dir(at(root, "cpuacct/berth/run1")));
	CHECK_STR(cg_path(cg), at(root, "memory/berth/run1"));
	CHECK_INT(cg_destroy(cg, &err), 0);
	CHECK_STR(tree(root), "cpu cpu/berth cpuacct cpuacct/berth memory memory/berth pids pids/berth");
	cg_free(cg);

	/* memsw written when the kernel has it; then no limits */
	CHECK(mkdirs(at(root, "memory/berth/run2")) == 0);
	put_file(at(root, "memory/berth/run2/memory.memsw.limit_in_bytes"), "9223372036854771712\n");
	cg = NULL;
	CHECK_INT(cg_create(&cg, CG_V1, root, "berth", "run2", &l, &err), 0);
	CHECK_STR(get_file(at(root, "memory/berth/run2/memory.memsw.limit_in_bytes")), "67108864");
	cg_free(cg);
	cg = NULL;
	CHECK_INT(cg_create(&cg, CG_V1, root, "berth", "run3", NULL, &err), 0);
	/* made just now: the kernel's defaults are not written again */
	CHECK_STR(get_file(at(root, "cpu/berth/run3/cpu.cfs_quota_us")), "<absent>");
	CHECK_STR(get_file(at(root, "cpu/berth/run3/cpu.cfs_period_us")), "<absent>");
	CHECK_STR(get_file(at(root, "cpu/berth/run3/cpu.shares")), "1024");
	CHECK_STR(get_file(at(root, "memory/berth/run3/memory.limit_in_bytes")), "<absent>");
	CHECK_STR(get_file(at(root, "pids/berth/run3/pids.max")), "max");
	CHECK(err == NULL);
	cg_free(cg);
	/* reused (a limit left from before): every value is written */
	put_file(at(root, "cpu/berth/run3/cpu.cfs_quota_us"), "50000\n");
	put_file(at(root, "memory/berth/run3/memory.limit_in_bytes"), "67108864\n");
	cg = NULL;
	CHECK_INT(cg_create(&cg, CG_V1, root, "berth", "run3", NULL, &err), 0);
	CHECK_STR(get_file(at(root, "cpu/berth/run3/cpu.cfs_quota_us")), "-1");
	CHECK_STR(get_file(at(root, "cpu/berth/run3/cpu.cfs_period_us")), "100000");
	CHECK_STR(get_file(at(root, "memory/berth/run3/memory.limit_in_bytes")), "-1");
	CHECK(err == NULL);
	cg_free(cg);
	t_rm_rf(root);
	free(root);
}

static void test_v1_shared_cpu_cpuacct_mount(void)
{
	/* cpu -> cpu,cpuacct and cpuacct -> cpu,cpuacct; no pids */
	static const char *const ctrls[] = {"cpu,cpuacct", "memory", NULL};
	char *root = v1_tree(ctrls);
	if (!root)
		return;
	CHECK(symlink("cpu,cpuacct", at(root, "cpu")) == 0);
	CHECK(symlink("cpu,cpuacct", at(root, "cpuacct")) == 0);
	cg_limits l = {2000, 1000, 1 << 30, 50};
	cg_handle *cg = NULL;
	berth_error *err = NULL;
	CHECK_INT(cg_create(&cg, CG_V1, root, "berth", "run1", &l, &err), 0);
	CHECK_STR(first_message(err), "");
	CHECK_STR(get_file(at(root, "cpu,cpuacct/berth/run1/cpu.cfs_quota_us")), "200000");
	CHECK_STR(get_file(at(root, "cpu,cpuacct/berth/run1/cpu.shares")), "1024");
	CHECK_STR(get_file(at(root, "memory/berth/run1/memory.limit_in_bytes")), "1073741824");
	put_file(at(root, "cpu,cpuacct/berth/run1/cpuacct.usage"), "777\n");
	cg_stats st;
	CHECK_INT(cg_stats_read(cg, &st, &err), 0);
	CHECK_INT(st.cpu_usage_ns, 777);
	/* one directory entered once, removed once */
	pid_t self = getpid();
	CHECK_INT(cg_enter(cg, self, &err), 0);
	char pid[32];
	snprintf(pid, sizeof(pid), "%ld", (long)self);
	CHECK_STR(get_file(at(root, "cpu,cpuacct/berth/run1/cgroup.procs")), pid);
	CHECK_INT(cg_count(cg), 1);
	CHECK_INT(cg_destroy(cg, &err), 0);
	CHECK(err == NULL);
	CHECK_STR(tree(root), "cpu cpu,cpuacct cpu,cpuacct/berth cpuacct memory memory/berth");
	cg_free(cg);
	berth_error_free(err);
	t_rm_rf(root);
	free(root);
}

static void test_v1_needs_memory_and_cpu(void)
{
	static const char *const no_mem[] = {"cpu", "cpuacct", "pids", NULL};
	static const char *const no_cpu[] = {"memory", "pids", NULL};
	const char *const *layouts[] = {no_mem, no_cpu};
	const char *missing[] = {"memory", "cpu"};
	for (size_t i = 0; i < 2; i++) {
		char *root = v1_tree(layouts[i]);
		if (!root)
			return;
		char *before = berth_strdup(tree(root));
		cg_handle *cg = NULL;
		berth_error *err = NULL;
		CHECK_INT(cg_create(&cg, CG_V1, root, "berth", "run1", NULL, &err), -BERTH_EIO);
		CHECK(cg == NULL);
		char want[1100];
		snprintf(want, sizeof(want), "without the %s controller: \"%s\" is not a directory",
			 missing[i], at(root, missing[i]));
		CHECKF(strstr(first_message(err), want) != NULL, "%s", first_message(err));
		CHECK_STR(tree(root), before);
		free(before);
		berth_error_free(err);
		t_rm_rf(root);
		free(root);
	}
}

/* ---- errors leave nothing behind ---------------------------------------------------- */

static void test_create_parent_is_a_file(void)
{
	/* v2 */
	char *root = v2_tree("cpu memory pids");
	if (!root)
		return;
	put_file(at(root, "berth"), "not a directory\n");
	cg_handle *cg = NULL;
	berth_error *err = NULL;
	CHECK_INT(cg_create(&cg, CG_V2, root, "berth", "run1", NULL, &err), -BERTH_EIO);
	CHECK(cg == NULL);
	char want[1100];
	snprintf(want, sizeof(want), "cannot create \"%s\": Not a directory", at(root, "berth"));
	CHECK_STR(first_message(err), want);
	CHECK_STR(tree(root), "berth cgroup.controllers cgroup.subtree_control");
	berth_error_free(err);
	t_rm_rf(root);
	free(root);

	/* v1: cpu and cpuacct are made before memory fails, and removed again */
	root = v1_tree(v1_all);
	if (!root)
		return;
	put_file(at(root, "memory/berth"), "");
	err = NULL;
	CHECK_INT(cg_create(&cg, CG_V1, root, "berth", "run1", NULL, &err), -BERTH_EIO);
	CHECK(cg == NULL);
	snprintf(want, sizeof(want), "cannot create \"%s\": Not a directory", at(root, "memory/berth"));
	CHECK_STR(first_message(err), want);
	CHECK_STR(tree(root), "cpu cpuacct memory memory/berth pids");
	berth_error_free(err);
	t_rm_rf(root);
	free(root);
}

static void test_create_write_fails(void)
{
	/* memory/berth/run1 exists (reused, so kept) and its memory.limit_in_bytes
	 * cannot be written; cpu/berth exists (kept), its run1 with the files
	 * written goes; cpuacct/berth and pids/berth were made, and go */
	char *root = v1_tree(v1_all);
	if (!root)
		return;
	CHECK(mkdirs(at(root, "cpu/berth")) == 0);
	CHECK(mkdirs(at(root, "memory/berth")) == 0 && mkdirs(at(root, "memory/berth/run1")) == 0);
	CHECK(mkdirs(at(root, "memory/berth/run1/memory.limit_in_bytes")) == 0);
	char *before = berth_strdup(tree(root));
	cg_limits l = {500, 250, 64 << 20, 100};
	cg_handle *cg = NULL;
	berth_error *err = NULL;
	CHECK_INT(cg_create(&cg, CG_V1, root, "berth", "run1", &l, &err), -BERTH_EIO);
	CHECK(cg == NULL);
	char want[1100];
	snprintf(want, sizeof(want), "cannot write \"67108864\" to \"%s\": Is a directory",
		 at(root, "memory/berth/run1/memory.limit_in_bytes"));
	CHECK_STR(first_message(err), want);
	CHECK_STR(tree(root), before);
	free(before);
	berth_error_free(err);
	t_rm_rf(root);
	free(root);
}

static void test_create_bad_arguments(void)
{
	char *root = v2_tree("cpu memory");
	if (!root)
		return;
	static const struct {
		cg_version v;
		const char *parent, *name, *msg;
	} rows[] = {
		{CG_V2, "berth", "a/b", "cgroup name \"a/b\" is not one path component"},
		{CG_V2, "berth", "..", "cgroup name \"..\" is not one path component"},
		{CG_V2, "berth", "", "cgroup name \"\" is not one path component"},
		{CG_V2, NULL, "run", "cgroup parent \"\" is not one path component"},
		{CG_V2, "../etc", "run", "cgroup parent \"../etc\" is not one path component"},
		{CG_NONE, "berth", "run", "no cgroup version to use"},
	};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(rows); i++) {
		cg_handle *cg = NULL;
		berth_error *err = NULL;
		CHECK_INT(cg_create(&cg, rows[i].v, root, rows[i].parent, rows[i].name, NULL, &err),
			  -BERTH_EARG);
		CHECK(cg == NULL);
		CHECK_STR(first_message(err), rows[i].msg);
		berth_error_free(err);
	}
	CHECK_STR(tree(root), "cgroup.controllers cgroup.subtree_control");
	t_rm_rf(root);
	free(root);
}

static void test_create_allocation_failures(void)
{
	for (int v = 1; v <= 2; v++) {
		char *root = v == 1 ? v1_tree(v1_all) : v2_tree("cpu memory pids");
		if (!root)
			return;
		char *before = berth_strdup(tree(root));
		cg_limits l = {500, 250, 64 << 20, 100};
		int done = 0;
		for (long n = 1; n < 200 && !done; n++) {
			cg_handle *cg = NULL;
			berth_error *err = NULL;
			berth_fail_alloc_after = n;
			int ret = cg_create(&cg, (cg_version)v, root, "berth", "run1", &l, &err);
			int injected = berth_fail_alloc_after == 0;
			berth_fail_alloc_after = 0;
			if (injected) {
				CHECKF(ret == -BERTH_ENOMEM, "v%d, allocation %ld: %d", v, n, ret);
				CHECK(cg == NULL);
				CHECK_INT(berth_error_code(err), BERTH_ENOMEM);
				CHECKF(!strcmp(tree(root), before), "v%d, allocation %ld: left %s", v, n,
				       tree(root));
			} else {
				CHECK_INT(ret, 0);
				CHECK_INT(cg_destroy(cg, &err), 0);
				done = 1;
			}
			cg_free(cg);
			berth_error_free(err);
		}
		CHECK(done);
		free(before);
		t_rm_rf(root);
		free(root);
	}
}

/* ---- statistics ---------------------------------------------------------------------- */

static void test_stats_v1(void)
{
	char *root = v1_tree(v1_all);
	if (!root)
		return;
	cg_handle *cg = NULL;
	berth_error *err = NULL;
	CHECK_INT(cg_create(&cg, CG_V1, root, "berth", "run1", NULL, &err), 0);
	cg_stats st;
	memset(&st, 0xff, sizeof(st));
	/* no statistics files: zeros, no error */
	CHECK_INT(cg_stats_read(cg, &st, &err), 0);
	CHECK_INT(st.cpu_usage_ns, 0);
	CHECK_INT(st.mem_peak, 0);
	CHECK_INT(st.oom_kills, 0);
	put_file(at(root, "cpuacct/berth/run1/cpuacct.usage"), "123456789\n");
	put_file(at(root, "cpu/berth/run1/cpu.stat"),
		 "nr_periods 10\nnr_throttled 3\nthrottled_time 5000\nnr_bursts 0\n");
	put_file(at(root, "memory/berth/run1/memory.usage_in_bytes"), "4096\n");
	put_file(at(root, "memory/berth/run1/memory.max_usage_in_bytes"), "8192\n");
	put_file(at(root, "memory/berth/run1/memory.oom_control"),
		 "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n");
	CHECK_INT(cg_stats_read(cg, &st, &err), 0);
	CHECK_INT(st.cpu_usage_ns, 123456789);
	CHECK_INT(st.nr_periods, 10);
	CHECK_INT(st.nr_throttled, 3);
	CHECK_INT(st.throttled_ns, 5000);
	CHECK_INT(st.mem_current, 4096);
	CHECK_INT(st.mem_peak, 8192);
	CHECK_INT(st.oom_kills, 3);
	/* an unreadable statistics file is an error that names it */
	CHECK(mkdirs(at(root, "memory/berth/run1/memory.oom_control.tmp")) == 0);
	CHECK(rename(at(root, "memory/berth/run1/memory.oom_control"),
		     at(root, "memory/berth/run1/x")) == 0);
	CHECK(rename(at(root, "memory/berth/run1/memory.oom_control.tmp"),
		     at(root, "memory/berth/run1/memory.oom_control")) == 0);
	CHECK_INT(cg_stats_read(cg, &st, &err), -BERTH_EIO);
	char want[1100];
	snprintf(want, sizeof(want), "cannot read \"%s\": Is a directory",
		 at(root, "memory/berth/run1/memory.oom_control"));
	CHECK_STR(first_message(err), want);
	berth_error_free(err);
	cg_free(cg);
	t_rm_rf(root);
	free(root);
}

static void test_stats_v2(void)
{
	char *root = v2_tree("cpu memory pids");
	if (!root)
		return;
	cg_handle *cg = NULL;
	berth_error *err = NULL;
	CHECK_INT(cg_create(&cg, CG_V2, root, "berth", "run1", NULL, &err), 0);
	put_file(at(root, "berth/run1/cpu.stat"),
		 "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\nnr_periods 7\n"
		 "nr_throttled 2\nthrottled_usec 40\n");
	put_file(at(root, "berth/run1/memory.current"), "1048576\n");
	put_file(at(root, "berth/run1/memory.events"),
		 "low 0\nhigh 0\nmax 5\noom 1\noom_kill 2\noom_group_kill 0\n");
	cg_stats st;
	CHECK_INT(cg_stats_read(cg, &st, &err), 0);
	CHECK_INT(st.cpu_usage_ns, 1500000);
	CHECK_INT(st.nr_periods, 7);
	CHECK_INT(st.nr_throttled, 2);
	CHECK_INT(st.throttled_ns, 40000);
	CHECK_INT(st.mem_current, 1048576);
	CHECK_INT(st.mem_peak, 0); /* no memory.peak before Linux 5.19 */
	CHECK_INT(st.oom_kills, 2);
	put_file(at(root, "berth/run1/memory.peak"), "2097152\n");
	CHECK_INT(cg_stats_read(cg, &st, &err), 0);
	CHECK_INT(st.mem_peak, 2097152);
	CHECK(err == NULL);
	cg_free(cg);
	t_rm_rf(root);
	free(root);
}

/* ---- open, enter, count, kill, destroy ---------------------------------------------- */

static pid_t sleeper(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	CHECK(pid > 0);
	return pid;
}

static void test_open_enter_kill_fake(void)
{
	char *root = v1_tree(v1_all);
	if (!root)
		return;
	cg_handle *cg = NULL, *again = NULL;
	berth_error *err = NULL;
	CHECK_INT(cg_create(&cg, CG_V1, root, "berth", "run1", NULL, &err), 0);
	CHECK_INT(cg_open(&again, CG_V1, root, "berth", "run1", &err), 0);
	CHECK_STR(cg_path(again), cg_path(cg));
	/* made by this handle: nothing ran in it; opened, or made again over a
	 * leftover: something may have */
	CHECK(cg_fresh(cg));
	CHECK(!cg_fresh(again));
	cg_handle *reused = NULL;
	CHECK_INT(cg_create(&reused, CG_V1, root, "berth", "run1", NULL, &err), 0);
	CHECK(reused && !cg_fresh(reused));
	CHECK(!cg_fresh(NULL));
	cg_free(reused);
	CHECK_INT(cg_count(again), 0);

	cg_handle *none = NULL;
	CHECK_INT(cg_open(&none, CG_V1, root, "berth", "run9", &err), -BERTH_EIO);
	CHECK(none == NULL);
	char want[1100];
	snprintf(want, sizeof(want), "no cgroup \"%s\"", at(root, "memory/berth/run9"));
	CHECK_STR(first_message(err), want);
	berth_error_free(err);
	err = NULL;

	pid_t child = sleeper();
	if (child > 0) {
		CHECK_INT(cg_enter(cg, child, &err), 0);
		char pid[32];
		snprintf(pid, sizeof(pid), "%ld", (long)child);
		CHECK_STR(get_file(at(root, "pids/berth/run1/cgroup.procs")), pid);
		CHECK_INT(cg_count(again), 1);
		/* pids that are no process (0 and -1 would reach many) are skipped;
		 * signal 0 so that a mistake could harm nothing */
		char procs[64];
		snprintf(procs, sizeof(procs), "0\n-1\nx\n%ld\n", (long)child);
		put_file(at(root, "memory/berth/run1/cgroup.procs"), procs);
		CHECK_INT(cg_count(again), 1);
		CHECK_INT(cg_kill(again, 0), 1);
		CHECK_INT(cg_kill(again, SIGKILL), 1);
		int status = 0;
		CHECK_INT(waitpid(child, &status, 0), child);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	}
	CHECK_INT(cg_enter(cg, 0, &err), -BERTH_EARG);
	berth_error_free(err);
	err = NULL;

	/* a directory inside: cannot be removed, and says so */
	CHECK(mkdirs(at(root, "cpuacct/berth/run1/sub")) == 0);
	CHECK_INT(cg_destroy(again, &err), -BERTH_EIO);
	snprintf(want, sizeof(want), "cannot remove \"%s\": Directory not empty",
		 at(root, "cpuacct/berth/run1"));
	CHECK_STR(first_message(err), want);
	CHECK(!is_dir(at(root, "memory/berth/run1"))); /* the others went */
	berth_error_free(err);
	cg_free(cg);
	cg_free(again);
	t_rm_rf(root);
	free(root);
}

/* A child's own move (cg_enter_self): "0" to the tasks of each hierarchy, v1 only. */
static void test_enter_self_fake(void)
{
	char *root = v1_tree(v1_all);
	if (!root)
		return;
	cg_handle *cg = NULL;
	berth_error *err = NULL;
	CHECK_INT(cg_create(&cg, CG_V1, root, "berth", "run1", NULL, &err), 0);
	pid_t child = fork();
	if (child == 0)
		_exit(cg_enter_self(cg));
	int status = -1;
	CHECK_INT(waitpid(child, &status, 0), child);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	for (size_t i = 0; v1_all[i]; i++) {
		char rel[64];
		snprintf(rel, sizeof(rel), "%s/berth/run1/tasks", v1_all[i]);
		CHECK_STR(get_file(at(root, rel)), "0");
	}
	CHECK_INT(cg_dir_fd(cg), -1);
	CHECK_INT(cg_version_of(cg), CG_V1);
	cg_free(cg);
	cg = NULL;
	/* v2 has no such move: a child is made in its cgroup (clone3) or moved by pid */
	char *root2 = v2_tree("cpu memory pids");
	if (root2) {
		CHECK_INT(cg_create(&cg, CG_V2, root2, "berth", "run1", NULL, &err), 0);
		CHECK_INT(cg_enter_self(cg), EINVAL);
		int fd = cg_dir_fd(cg);
		CHECK(fd >= 0);
		/* not a cgroup2 directory: made as fork makes it, for the caller to move */
		bool in = true;
		pid_t c = sup_clone(false, fd, &in);
		if (c == 0)
			_exit(in ? 3 : 0);
		CHECK(c > 0 && !in);
		CHECK_INT(waitpid(c, &status, 0), c);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		if (fd >= 0)
			close(fd);
		cg_free(cg);
		t_rm_rf(root2);
		free(root2);
	}
	CHECK_INT(cg_enter_self(NULL), EINVAL);
	CHECK(err == NULL);
	t_rm_rf(root);
	free(root);
}

static void test_kill_v2_cgroup_kill(void)
{
	char *root = v2_tree("cpu memory pids");
	if (!root)
		return;
	cg_handle *cg = NULL;
	berth_error *err = NULL;
	CHECK_INT(cg_create(&cg, CG_V2, root, "berth", "run1", NULL, &err), 0);
	pid_t child = sleeper();
	if (child > 0) {
		CHECK_INT(cg_enter(cg, child, &err), 0);
		/* the kernel's cgroup.kill: written instead of signalling each */
		put_file(at(root, "berth/run1/cgroup.kill"), "");
		CHECK_INT(cg_kill(cg, SIGKILL), 1);
		CHECK_STR(get_file(at(root, "berth/run1/cgroup.kill")), "1");
		CHECK_INT(kill(child, 0), 0); /* a plain file kills nothing */
		/* other signals go to each process */
		CHECK_INT(cg_kill(cg, SIGTERM), 1);
		int status = 0;
		CHECK_INT(waitpid(child, &status, 0), child);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	}
	CHECK(err == NULL);
	cg_free(cg);
	t_rm_rf(root);
	free(root);
}

/* ---- a real cgroup ------------------------------------------------------------------- */

#define REAL_ROOT "/sys/fs/cgroup"
#define REAL_PARENT "berth-unit-test"

/* Whether this host can take a real cgroup: root and a cgroup tree. */
static cg_version real_version(void)
{
	if (geteuid() != 0)
		return CG_NONE;
	return cg_detect(REAL_ROOT);
}

/* Removes REAL_PARENT where no other test uses it. */
static void real_cleanup(cg_version v)
{
	if (v == CG_V2) {
		rmdir(REAL_ROOT "/" REAL_PARENT);
		return;
	}
	for (size_t i = 0; v1_all[i]; i++) {
		char p[256];
		snprintf(p, sizeof(p), "%s/%s/%s", REAL_ROOT, v1_all[i], REAL_PARENT);
		rmdir(p);
	}
}

static void ms_sleep(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* A child that waits for a byte on fd, then touches `touch` bytes and spins
 * for 100 ms, then sleeps. */
static pid_t real_child(int fd, size_t touch)
{
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		if (read(fd, &c, 1) != 1)
			_exit(1);
		volatile char *mem = malloc(touch);
		for (size_t i = 0; mem && i < touch; i += 4096)
			mem[i] = 1;
		struct timespec t0, t;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do
			clock_gettime(CLOCK_MONOTONIC, &t);
		while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < 100);
		for (;;)
			pause();
	}
	CHECK(pid > 0);
	return pid;
}

/* A cgroup on the real tree, named PREFIX<pid>; NULL (cleaned up) when the
 * host has none, or on failure, which is a test failure. */
static cg_handle *real_create(char prefix, const cg_limits *l, cg_version *v)
{
	*v = real_version();
	if (*v == CG_NONE)
		return NULL;
	char name[32];
	snprintf(name, sizeof(name), "%c%ld", prefix, (long)getpid());
	cg_handle *cg = NULL;
	berth_error *err = NULL;
	int ret = cg_create(&cg, *v, REAL_ROOT, REAL_PARENT, name, l, &err);
	CHECKF(ret == 0, "cg_create: %s", first_message(err));
	berth_error_free(err);
	if (ret)
		real_cleanup(*v);
	return cg;
}

/* Removes a cgroup of real_create, which must go without an error. */
static void real_destroy(cg_handle *cg, cg_version v)
{
	berth_error *err = NULL;
	CHECK_INT(cg_destroy(cg, &err), 0);
	CHECK_STR(first_message(err), "");
	berth_error_free(err);
	cg_free(cg);
	real_cleanup(v);
}

static void test_cgroup_real(void)
{
	cg_version v;
	cg_limits l = {100, 100, 64 << 20, 0};
	cg_handle *cg = real_create('t', &l, &v);
	if (!cg)
		return;
	berth_error *err = NULL;
	char name[32];
	snprintf(name, sizeof(name), "t%ld", (long)getpid());
	const char *dir = cg_path(cg);
	char rel[128];
	/* what the kernel took */
	if (v == CG_V1) {
		CHECK_STR(get_line(at(dir, "memory.limit_in_bytes")), "67108864");
		const char *memsw = get_line(at(dir, "memory.memsw.limit_in_bytes"));
		CHECK(!strcmp(memsw, "<absent>") || !strcmp(memsw, "67108864"));
		snprintf(rel, sizeof(rel), "cpu/%s/%s/cpu.cfs_quota_us", REAL_PARENT, name);
		CHECK_STR(get_line(at(REAL_ROOT, rel)), "10000");
		snprintf(rel, sizeof(rel), "cpu/%s/%s/cpu.shares", REAL_PARENT, name);
		CHECK_STR(get_line(at(REAL_ROOT, rel)), "102");
	} else {
		CHECK_STR(get_line(at(dir, "memory.max")), "67108864");
		CHECK_STR(get_line(at(dir, "cpu.max")), "10000 100000");
		CHECK_STR(get_line(at(dir, "cpu.weight")), "4");
	}
	CHECK_INT(cg_count(cg), 0);

	int fds[2];
	CHECK(pipe(fds) == 0);
	pid_t child = real_child(fds[0], 8 << 20);
	if (child > 0) {
		CHECK_INT(cg_enter(cg, child, &err), 0);
		CHECK_STR(first_message(err), "");
		CHECK_INT(cg_count(cg), 1);
		CHECK(write(fds[1], "x", 1) == 1);
		/* until the child has touched its memory and been throttled: at 100m
		 * that takes 0.3 s where a page fault costs 15 us (2,048 of them), so
		 * up to 10 s, not a fixed wait */
		cg_stats st;
		for (int i = 0; i < 100; i++) {
			ms_sleep(100);
			CHECK_INT(cg_stats_read(cg, &st, &err), 0);
			if (st.mem_current >= (8u << 20) && st.nr_throttled >= 1 && st.cpu_usage_ns > 1000000)
				break;
		}
		CHECKF(st.cpu_usage_ns > 1000000, "cpu %llu ns", (unsigned long long)st.cpu_usage_ns);
		/* 100m: 10 ms of each 100 ms; the child spun for 100 ms */
		CHECKF(st.nr_throttled >= 1, "throttled %llu of %llu periods",
		       (unsigned long long)st.nr_throttled, (unsigned long long)st.nr_periods);
		CHECKF(st.mem_current >= (8u << 20), "memory %llu", (unsigned long long)st.mem_current);
		CHECK_INT(st.oom_kills, 0);
		CHECK_INT(cg_kill(cg, SIGKILL), 1);
		int status = 0;
		CHECK_INT(waitpid(child, &status, 0), child);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		CHECK_INT(cg_count(cg), 0);
	}
	close(fds[0]);
	close(fds[1]);
	CHECK_INT(cg_destroy(cg, &err), 0);
	CHECK_STR(first_message(err), "");
	CHECK(!is_dir(dir));
	cg_free(cg);
	berth_error_free(err);
	real_cleanup(v);
}

static void test_cgroup_real_oom(void)
{
	cg_version v;
	cg_limits l = {0, 0, 32 << 20, 0};
	cg_handle *cg = real_create('o', &l, &v);
	if (!cg)
		return;
	berth_error *err = NULL;
	int fds[2];
	CHECK(pipe(fds) == 0);
	pid_t child = real_child(fds[0], (size_t)256 << 20);
	if (child > 0) {
		CHECK_INT(cg_enter(cg, child, &err), 0);
		CHECK(write(fds[1], "x", 1) == 1);
		int status = 0;
		CHECK_INT(waitpid(child, &status, 0), child);
		CHECKF(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "status %#x", status);
		cg_stats st;
		CHECK_INT(cg_stats_read(cg, &st, &err), 0);
		CHECKF(st.oom_kills >= 1, "oom kills %llu", (unsigned long long)st.oom_kills);
		CHECKF(st.mem_peak >= (30u << 20), "peak %llu", (unsigned long long)st.mem_peak);
	}
	close(fds[0]);
	close(fds[1]);
	berth_error_free(err);
	real_destroy(cg, v);
}

static void test_cgroup_real_reuse(void)
{
	/* a leftover cgroup is reused, its limits raised and lowered: on v1 the
	 * kernel refuses a memory limit above memory + swap, so the order matters */
	cg_version v = real_version();
	if (v == CG_NONE)
		return;
	char name[32];
	snprintf(name, sizeof(name), "r%ld", (long)getpid());
	static const int64_t mems[] = {32 << 20, 64 << 20, 16 << 20};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(mems); i++) {
		cg_limits l = {200, 0, mems[i], 10};
		cg_handle *cg = NULL;
		berth_error *err = NULL;
		int ret = cg_create(&cg, v, REAL_ROOT, REAL_PARENT, name, &l, &err);
		CHECKF(ret == 0, "%lld bytes: %s", (long long)mems[i], first_message(err));
		char want[32];
		snprintf(want, sizeof(want), "%lld", (long long)mems[i]);
		if (cg)
			CHECK_STR(get_line(at(cg_path(cg), v == CG_V1 ? "memory.limit_in_bytes" : "memory.max")),
				  want);
		if (cg && i + 1 == BERTH_ARRAY_SIZE(mems))
			CHECK_INT(cg_destroy(cg, &err), 0);
		cg_free(cg);
		berth_error_free(err);
	}
	real_cleanup(v);
}

/* A child of the real v1 tree's cgroup by its own move: counted there, and in
 * its /proc/self/cgroup. */
static void test_cgroup_real_enter_self(void)
{
	cg_version v;
	cg_handle *cg = real_create('s', NULL, &v);
	if (!cg)
		return;
	if (v == CG_V1) {
		int go[2];
		CHECK(pipe(go) == 0);
		pid_t child = fork();
		if (child == 0) {
			char c;
			int e = cg_enter_self(cg);
			_exit(e ? 1 : read(go[0], &c, 1) == 1 ? 0 : 2);
		}
		for (int i = 0; i < 200 && cg_count(cg) < 1; i++)
			ms_sleep(5);
		CHECK_INT(cg_count(cg), 1);
		char path[64], name[32];
		snprintf(path, sizeof(path), "/proc/%ld/cgroup", (long)child);
		snprintf(name, sizeof(name), "/%s/s%ld", REAL_PARENT, (long)getpid());
		CHECKF(strstr(get_file(path), name) != NULL, "%s", get_file(path));
		CHECK(write(go[1], "g", 1) == 1);
		int status = -1;
		CHECK_INT(waitpid(child, &status, 0), child);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		close(go[0]);
		close(go[1]);
	}
	real_destroy(cg, v);
}

/* clone3 into a real cgroup2 directory: /sys/fs/cgroup on v2, its "unified"
 * mount on a hybrid host (no controller is needed to hold a process); with
 * and without the pid namespace the run's init has. */
static void test_clone_into_cgroup_real(void)
{
	if (geteuid() != 0)
		return;
	const char *base = cg_detect(REAL_ROOT) == CG_V2 ? REAL_ROOT : REAL_ROOT "/unified";
	char dir[256];
	snprintf(dir, sizeof(dir), "%s/berth-unit-clone%ld", base, (long)getpid());
	if (cg_detect(base) != CG_V2 || mkdir(dir, 0755))
		return;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(fd >= 0);
	for (int pidns = 0; fd >= 0 && pidns < 2; pidns++) {
		int go[2];
		CHECK(pipe(go) == 0);
		bool in = false;
		pid_t child = sup_clone(pidns, fd, &in);
		if (child == 0) {
			char c;
			_exit(!in ? 3 : pidns && getpid() != 1 ? 4 : read(go[0], &c, 1) == 1 ? 0 : 5);
		}
		CHECKF(child > 0 && in, "clone3 into %s: %s", dir, strerror(errno));
		if (child <= 0)
			break;
		char path[64], want[300];
		snprintf(path, sizeof(path), "/proc/%ld/cgroup", (long)child);
		snprintf(want, sizeof(want), "0::%s\n", dir + strlen(base));
		CHECKF(strstr(get_file(path), want) != NULL, "%s", get_file(path));
		CHECK(write(go[1], "g", 1) == 1);
		int status = -1;
		CHECK_INT(waitpid(child, &status, 0), child);
		CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
		close(go[0]);
		close(go[1]);
	}
	if (fd >= 0)
		close(fd);
	for (int i = 0; i < 100 && rmdir(dir) && errno == EBUSY; i++)
		ms_sleep(10);
	CHECK(!is_dir(dir));
}

T_MAIN(T(test_detect), T(test_v2_create), T(test_v2_no_limits_and_optional_files),
       T(test_v2_cpu_conversions), T(test_v2_needs_cpu_and_memory), T(test_v1_create),
       T(test_v1_shared_cpu_cpuacct_mount), T(test_v1_needs_memory_and_cpu),
       T(test_create_parent_is_a_file), T(test_create_write_fails), T(test_create_bad_arguments),
       T(test_create_allocation_failures), T(test_stats_v1), T(test_stats_v2),
       T(test_open_enter_kill_fake), T(test_enter_self_fake), T(test_kill_v2_cgroup_kill),
       T(test_cgroup_real), T(test_cgroup_real_oom), T(test_cgroup_real_reuse),
       T(test_cgroup_real_enter_self), T(test_clone_into_cgroup_real))
