/*
 * cgroup.c - a run's control group on Linux, v2 (unified) or v1 (one
 * hierarchy per controller), behind one small table of operations per
 * version (crun's libcrun_cgroup_manager is the model).
 *
 * A handle holds one directory per hierarchy: one on v2, one per distinct
 * v1 mount among cpu, cpuacct, memory and pids (cpu and cpuacct are often
 * one mount "cpu,cpuacct" reached through two symlinks: they share a
 * directory, found by device and inode). Control files are written with
 * plain open/write; on a tree that is not a cgroup filesystem (the tests'
 * temporary directories) required files are created and, when directories
 * are removed, the plain files in them are removed first.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "backend/local/cgroup.h"
#include "base/internal.h"

#define CGROUP2_SUPER_MAGIC_ 0x63677270UL
#define CGROUP_SUPER_MAGIC_ 0x27e0ebUL

#define CPU_PERIOD_US 100000
#define MAX_SHARES 262144
#define MIN_SHARES 2
#define MAX_READ (64u << 20) /* a cgroup.procs of millions of pids */

enum { C_CPU = 1u, C_CPUACCT = 2u, C_MEMORY = 4u, C_PIDS = 8u };

typedef struct ctrl_name {
	const char *name;
	unsigned bit;
} ctrl_name;

/* v1: the hierarchies looked for, in the order they are created. */
static const ctrl_name v1_ctrls[] = {
	{"cpu", C_CPU}, {"cpuacct", C_CPUACCT}, {"memory", C_MEMORY}, {"pids", C_PIDS}};
/* v2: the controllers enabled for runs, in the order they are enabled. */
static const ctrl_name v2_ctrls[] = {{"cpu", C_CPU}, {"memory", C_MEMORY}, {"pids", C_PIDS}};

/* One hierarchy: HIER/PARENT/NAME. */
typedef struct cg_dir {
	char *hier;          /* ROOT (v2) or ROOT/CTRL (v1) */
	char *parent;        /* HIER/PARENT */
	char *path;          /* HIER/PARENT/NAME */
	unsigned ctrls;      /* v1: the controllers of this mount; v2: those ROOT offers */
	bool cgfs;           /* a real cgroup filesystem */
	bool parent_created; /* by this handle's cg_create */
	bool created;
	dev_t dev;
	ino_t ino;
} cg_dir;

typedef struct cg_ops cg_ops;

struct cg_handle {
	cg_version v;
	char *root;
	const cg_ops *ops;
	size_t n;
	size_t primary; /* the memory (v1) or unified (v2) directory */
	cg_dir dirs[BERTH_ARRAY_SIZE(v1_ctrls)];
};

struct cg_ops {
	/* Fills h->dirs for ROOT, PARENT, NAME. */
	int (*layout)(cg_handle *h, const char *root, const char *parent, const char *name,
		      berth_error **err);
	/* Checks what cg_create needs before anything is made. */
	int (*check)(const cg_handle *h, berth_error **err);
	/* Writes the limits into the directories made. */
	int (*write_limits)(const cg_handle *h, const cg_limits *l, berth_error **err);
	int (*stats)(const cg_handle *h, cg_stats *out, berth_error **err);
};

/* ---- small helpers ------------------------------------------------------ */

static int oom(berth_error **err)
{
	return berth_fail(err, BERTH_ENOMEM, "out of memory");
}

static char *join(const char *a, const char *b)
{
	size_t n = strlen(a) + strlen(b) + 2;
	char *p = berth_malloc(n);
	if (p)
		snprintf(p, n, "%s/%s", a, b);
	return p;
}

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool exists(const char *dir, const char *file)
{
	char *p = join(dir, file);
	bool ok = p && access(p, F_OK) == 0;
	free(p);
	return ok;
}

static bool on_cgroupfs(const char *path)
{
	struct statfs sf;
	if (statfs(path, &sf) != 0)
		return false;
	unsigned long t = (unsigned long)sf.f_type;
	return t == CGROUP2_SUPER_MAGIC_ || t == CGROUP_SUPER_MAGIC_;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Writes value to path with open flags; 0 or an errno value. */
static int write_str(const char *path, const char *value, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno;
	size_t len = strlen(value), off = 0;
	while (off < len) {
		ssize_t w = write(fd, value + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = w < 0 ? errno : EIO;
			close(fd);
			return e;
		}
		off += (size_t)w;
	}
	return close(fd) == 0 ? 0 : errno;
}

/*
 * Reads path whole into *out (NUL-terminated, the caller frees). Returns 0,
 * -BERTH_EIO with errno set (ENOENT when absent) or -BERTH_ENOMEM.
 */
static int read_str(const char *path, char **out)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -BERTH_EIO;
	berth_buf b = BERTH_BUF_INIT;
	b.max = MAX_READ;
	char chunk[4096];
	for (;;) {
		ssize_t r = read(fd, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			close(fd);
			berth_buf_release(&b);
			errno = e;
			return -BERTH_EIO;
		}
		if (r == 0)
			break;
		int failed = berth_buf_append(&b, chunk, (size_t)r);
		if (failed) {
			close(fd);
			berth_buf_release(&b);
			errno = EFBIG;
			return failed == -BERTH_ETOOBIG ? -BERTH_EIO : -BERTH_ENOMEM;
		}
	}
	close(fd);
	*out = berth_buf_detach(&b);
	return *out ? 0 : -BERTH_ENOMEM;
}

/* Reads dir/file; 1 when absent (*out NULL), 0, or a negative code in *err. */
static int read_at(const char *dir, const char *file, char **out, berth_error **err)
{
	char *path = join(dir, file);
	if (!path)
		return oom(err);
	int ret = read_str(path, out);
	if (ret == -BERTH_EIO && errno == ENOENT)
		ret = 1;
	else if (ret == -BERTH_ENOMEM)
		oom(err);
	else if (ret < 0)
		berth_fail(err, BERTH_EIO, "cannot read \"%s\": %s", path, strerror(errno));
	free(path);
	return ret;
}

/*
 * Writes value to d/file. A required file is created where the tree is not a
 * cgroup filesystem (a test); an optional one is written only when it exists.
 * Returns 0, 1 when an optional file is absent, or a negative code.
 */
static int put(const cg_dir *d, const char *file, const char *value, bool optional,
	       berth_error **err)
{
	char *path = join(d->path, file);
	if (!path)
		return oom(err);
	int flags = O_WRONLY | O_TRUNC | (!optional && !d->cgfs ? O_CREAT : 0);
	int e = write_str(path, value, flags);
	int ret = 0;
	if (e == ENOENT && optional)
		ret = 1;
	else if (e)
		ret = berth_fail(err, BERTH_EIO, "cannot write \"%s\" to \"%s\": %s", value, path,
				 strerror(e));
	free(path);
	return ret;
}

static int put_i64(const cg_dir *d, const char *file, int64_t v, bool optional, berth_error **err)
{
	char num[32];
	snprintf(num, sizeof(num), "%" PRId64, v);
	return put(d, file, num, optional, err);
}

/* The value of the line "KEY N" in text; false when there is none. */
static bool keyed(const char *text, const char *key, uint64_t *out)
{
	size_t klen = strlen(key);
	for (const char *line = text; line && *line;) {
		if (strncmp(line, key, klen) == 0 && line[klen] == ' ') {
			char *end;
			errno = 0;
			unsigned long long v = strtoull(line + klen + 1, &end, 10);
			if (errno || end == line + klen + 1)
				return false;
			*out = v;
			return true;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return false;
}

/* A file holding one number ("max" reads as 0). */
static bool number(const char *text, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno || end == text)
		return false;
	*out = v;
	return true;
}

/* Reads dir/file and applies fn to each (key, field) pair; absent files are fine. */
typedef struct stat_key {
	const char *key;
	uint64_t *field;
	uint64_t scale;
} stat_key;

static int read_keys(const char *dir, const char *file, const stat_key *keys, size_t n,
		     berth_error **err)
{
	char *text;
	int ret = read_at(dir, file, &text, err);
	if (ret)
		return ret < 0 ? ret : 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t v;
		if (keyed(text, keys[i].key, &v))
			*keys[i].field = v * keys[i].scale;
	}
	free(text);
	return 0;
}

static int read_number(const char *dir, const char *file, uint64_t *field, uint64_t scale,
		       berth_error **err)
{
	char *text;
	int ret = read_at(dir, file, &text, err);
	if (ret)
		return ret < 0 ? ret : 0;
	uint64_t v;
	if (number(text, &v))
		*field = v * scale;
	free(text);
	return 0;
}

/* ---- CPU conversions ------------------------------------------------------ */

static int64_t clamp_milli(int64_t m)
{
	return m < 0 ? 0 : m > INT64_C(1000000000) ? INT64_C(1000000000) : m;
}

/* The CFS quota in microseconds per 100 ms period; 0 for no limit. */
static int64_t cpu_quota(int64_t limit_milli)
{
	int64_t m = clamp_milli(limit_milli);
	if (!m)
		return 0;
	int64_t q = m * CPU_PERIOD_US / 1000;
	return q < 1000 ? 1000 : q;
}

/* Kubernetes MilliCPUToShares. */
static int64_t cpu_shares(int64_t request_milli)
{
	int64_t m = clamp_milli(request_milli);
	if (!m)
		return 1024;
	int64_t s = m * 1024 / 1000;
	return s < MIN_SHARES ? MIN_SHARES : s > MAX_SHARES ? MAX_SHARES : s;
}

/* Kubernetes CpuSharesToCpuWeight (cgroup v2). */
static int64_t cpu_weight(int64_t request_milli)
{
	if (clamp_milli(request_milli) == 0)
		return 100;
	return 1 + ((cpu_shares(request_milli) - 2) * 9999) / 262142;
}

/* ---- directories ------------------------------------------------------- */

/* mkdir path; an existing directory is reused (a leftover of a run that died). */
static int make_dir(const char *path, bool *created, berth_error **err)
{
	if (mkdir(path, 0755) == 0) {
		*created = true;
		return 0;
	}
	int e = errno;
	if (e == EEXIST && is_dir(path))
		return 0;
	if (e == EEXIST)
		e = ENOTDIR;
	return berth_fail(err, BERTH_EIO, "cannot create \"%s\": %s", path, strerror(e));
}

/*
 * rmdir path, retrying for about a second while the kernel still counts
 * exiting processes (EBUSY). Not on a cgroup filesystem the directory holds
 * the plain files written into it: they go first. 0 or an errno value.
 */
static int remove_dir(const char *path, bool cgfs)
{
	if (!cgfs) {
		DIR *dir = opendir(path);
		if (dir) {
			struct dirent *de;
			while ((de = readdir(dir)) != NULL)
				if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
					unlinkat(dirfd(dir), de->d_name, 0);
			closedir(dir);
		}
	}
	for (int i = 0;; i++) {
		if (rmdir(path) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY || i == 100)
			return errno;
		sleep_ms(10);
	}
}

/* Removes what cg_create made, in reverse. */
static void undo(cg_handle *h)
{
	for (size_t i = h->n; i-- > 0;) {
		cg_dir *d = &h->dirs[i];
		if (d->created && remove_dir(d->path, d->cgfs) == 0)
			d->created = false;
		if (d->parent_created && remove_dir(d->parent, d->cgfs) == 0)
			d->parent_created = false;
	}
}

/* Adds HIER with PARENT/NAME below it. */
static int add_dir(cg_handle *h, char *hier, unsigned ctrls, const struct stat *st,
		   const char *parent, const char *name, berth_error **err)
{
	cg_dir *d = &h->dirs[h->n];
	d->hier = hier;
	h->n++;
	d->ctrls = ctrls;
	d->cgfs = on_cgroupfs(hier);
	d->dev = st->st_dev;
	d->ino = st->st_ino;
	d->parent = join(hier, parent);
	d->path = d->parent ? join(d->parent, name) : NULL;
	return d->path ? 0 : oom(err);
}

static const cg_dir *dir_of(const cg_handle *h, unsigned ctrl)
{
	for (size_t i = 0; i < h->n; i++)
		if (h->dirs[i].ctrls & ctrl)
			return &h->dirs[i];
	return NULL;
}

/* One path component, so that PARENT and NAME stay below ROOT. */
static bool component(const char *s)
{
	return s && *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

/* ---- v1 ------------------------------------------------------------------ */

static int v1_layout(cg_handle *h, const char *root, const char *parent, const char *name,
		     berth_error **err)
{
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(v1_ctrls); i++) {
		char *hier = join(root, v1_ctrls[i].name);
		if (!hier)
			return oom(err);
		struct stat st;
		if (stat(hier, &st) != 0 || !S_ISDIR(st.st_mode)) {
			free(hier);
			continue;
		}
		size_t j = 0;
		while (j < h->n && (h->dirs[j].dev != st.st_dev || h->dirs[j].ino != st.st_ino))
			j++;
		if (j < h->n) { /* cpu,cpuacct: one mount, two names */
			h->dirs[j].ctrls |= v1_ctrls[i].bit;
			free(hier);
			continue;
		}
		int ret = add_dir(h, hier, v1_ctrls[i].bit, &st, parent, name, err);
		if (ret)
			return ret;
	}
	for (size_t i = 0; i < h->n; i++)
		if (h->dirs[i].ctrls & C_MEMORY)
			h->primary = i;
	return 0;
}

static int v1_check(const cg_handle *h, berth_error **err)
{
	static const ctrl_name needed[] = {{"memory", C_MEMORY}, {"cpu", C_CPU}};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(needed); i++)
		if (!dir_of(h, needed[i].bit))
			return berth_fail(err, BERTH_EIO,
					  "cgroup v1 without the %s controller: \"%s/%s\" is not a directory",
					  needed[i].name, h->root, needed[i].name);
	return 0;
}

static int v1_write_limits(const cg_handle *h, const cg_limits *l, berth_error **err)
{
	const cg_dir *cpu = dir_of(h, C_CPU), *mem = dir_of(h, C_MEMORY), *pids = dir_of(h, C_PIDS);
	int64_t quota = cpu_quota(l->cpu_limit_milli);
	int64_t mem_limit = l->mem_limit > 0 ? l->mem_limit : -1;
	int ret;
	if (!cpu || !mem)
		return berth_fail(err, BERTH_EINTERNAL, "cgroup v1 without cpu or memory");
	/* a cgroup made just now has the kernel's defaults (no quota over a
	 * 100 ms period, no memory limit): what would write them again is
	 * skipped, five writes of a launch's critical path; a reused one gets
	 * every value */
	bool cpu_fresh = cpu->created && !quota, mem_fresh = mem->created && mem_limit < 0;
	if ((!cpu_fresh && ((ret = put_i64(cpu, "cpu.cfs_period_us", CPU_PERIOD_US, false, err)) < 0 ||
			    (ret = put_i64(cpu, "cpu.cfs_quota_us", quota ? quota : -1, false, err)) < 0)) ||
	    (ret = put_i64(cpu, "cpu.shares", cpu_shares(l->cpu_request_milli), false, err)) < 0)
		return ret;
	if (mem_fresh)
		goto pids;
	/* The kernel keeps memory <= memory + swap at every write: in a reused
	 * cgroup whose memsw is below the new limit, memsw has to go first; in a
	 * new one it cannot, and this first try fails harmlessly. */
	berth_error *ignored = NULL;
	ret = put_i64(mem, "memory.memsw.limit_in_bytes", mem_limit, true, &ignored);
	bool nomem = ret < 0 && berth_error_code(ignored) == BERTH_ENOMEM;
	berth_error_free(ignored);
	if (nomem)
		return oom(err);
	if ((ret = put_i64(mem, "memory.limit_in_bytes", mem_limit, false, err)) < 0 ||
	    /* memory + swap no more than memory: no escape into swap */
	    (ret = put_i64(mem, "memory.memsw.limit_in_bytes", mem_limit, true, err)) < 0)
		return ret;
pids:
	if (pids) {
		if (l->pids_max > 0)
			ret = put_i64(pids, "pids.max", l->pids_max, false, err);
		else
			ret = put(pids, "pids.max", "max", false, err);
	}
	return ret < 0 ? ret : 0;
}

static int v1_stats(const cg_handle *h, cg_stats *out, berth_error **err)
{
	const cg_dir *acct = dir_of(h, C_CPUACCT), *cpu = dir_of(h, C_CPU), *mem = dir_of(h, C_MEMORY);
	int ret = 0;
	if (acct && (ret = read_number(acct->path, "cpuacct.usage", &out->cpu_usage_ns, 1, err)) < 0)
		return ret;
	if (cpu) {
		const stat_key keys[] = {{"nr_periods", &out->nr_periods, 1},
					 {"nr_throttled", &out->nr_throttled, 1},
					 {"throttled_time", &out->throttled_ns, 1}};
		if ((ret = read_keys(cpu->path, "cpu.stat", keys, BERTH_ARRAY_SIZE(keys), err)) < 0)
			return ret;
	}
	if (mem) {
		const stat_key keys[] = {{"oom_kill", &out->oom_kills, 1}};
		if ((ret = read_number(mem->path, "memory.usage_in_bytes", &out->mem_current, 1, err)) < 0 ||
		    (ret = read_number(mem->path, "memory.max_usage_in_bytes", &out->mem_peak, 1, err)) < 0 ||
		    (ret = read_keys(mem->path, "memory.oom_control", keys, 1, err)) < 0)
			return ret;
	}
	return 0;
}

/* ---- v2 ------------------------------------------------------------------ */

/* The controllers named in text ("cpu memory" or, in a test, "+cpu +memory"). */
static unsigned ctrl_mask(const char *text)
{
	unsigned mask = 0;
	const char *p = text;
	while (*p) {
		while (*p == ' ' || *p == '\n' || *p == '\t')
			p++;
		if (*p == '+')
			p++;
		size_t len = strcspn(p, " \n\t");
		for (size_t i = 0; i < BERTH_ARRAY_SIZE(v2_ctrls); i++)
			if (strlen(v2_ctrls[i].name) == len && strncmp(p, v2_ctrls[i].name, len) == 0)
				mask |= v2_ctrls[i].bit;
		p += len;
	}
	return mask;
}

static int v2_layout(cg_handle *h, const char *root, const char *parent, const char *name,
		     berth_error **err)
{
	struct stat st;
	if (stat(root, &st) != 0)
		return berth_fail(err, BERTH_EIO, "cannot open \"%s\": %s", root, strerror(errno));
	char *hier = berth_strdup(root);
	if (!hier)
		return oom(err);
	int ret = add_dir(h, hier, 0, &st, parent, name, err);
	if (ret)
		return ret;
	char *text;
	if ((ret = read_at(root, "cgroup.controllers", &text, err)) < 0)
		return ret;
	if (ret == 0)
		h->dirs[0].ctrls = ctrl_mask(text);
	free(text);
	return 0;
}

static int v2_check(const cg_handle *h, berth_error **err)
{
	static const ctrl_name needed[] = {{"memory", C_MEMORY}, {"cpu", C_CPU}};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(needed); i++)
		if (!(h->dirs[0].ctrls & needed[i].bit))
			return berth_fail(err, BERTH_EIO, "\"%s/cgroup.controllers\" does not offer the %s controller",
					  h->dirs[0].hier, needed[i].name);
	return 0;
}

/*
 * Enables the controllers of want in dir/cgroup.subtree_control, one "+ctrl"
 * write each on a cgroup filesystem; in a test, the missing ones appended.
 */
static int enable(const char *dir, bool cgfs, unsigned want, berth_error **err)
{
	char *text;
	int ret = read_at(dir, "cgroup.subtree_control", &text, err);
	if (ret < 0)
		return ret;
	unsigned missing = want & ~(text ? ctrl_mask(text) : 0u);
	bool sep = text && *text && !strchr(" \n\t", text[strlen(text) - 1]);
	free(text);
	if (!missing)
		return 0;
	ret = 0;
	char *path = join(dir, "cgroup.subtree_control");
	if (!path)
		return oom(err);
	char all[64] = "";
	size_t len = 0;
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(v2_ctrls) && !ret; i++) {
		if (!(missing & v2_ctrls[i].bit))
			continue;
		char one[16];
		snprintf(one, sizeof(one), "+%s", v2_ctrls[i].name);
		if (!cgfs) {
			len += (size_t)snprintf(all + len, sizeof(all) - len, "%s%s", sep ? " " : "", one);
			sep = true;
			continue;
		}
		int e = write_str(path, one, O_WRONLY);
		if (e)
			ret = berth_fail(err, BERTH_EIO, "cannot write \"%s\" to \"%s\": %s", one, path,
					 strerror(e));
	}
	if (!cgfs) {
		int e = write_str(path, all, O_WRONLY | O_APPEND | O_CREAT);
		if (e)
			ret = berth_fail(err, BERTH_EIO, "cannot write \"%s\" to \"%s\": %s", all, path,
					 strerror(e));
	}
	free(path);
	return ret;
}

static int v2_write_limits(const cg_handle *h, const cg_limits *l, berth_error **err)
{
	const cg_dir *d = &h->dirs[0];
	unsigned want = d->ctrls & (C_CPU | C_MEMORY | C_PIDS);
	int ret;
	if ((ret = enable(d->hier, d->cgfs, want, err)) < 0 ||
	    (ret = enable(d->parent, d->cgfs, want, err)) < 0)
		return ret;

	char val[64];
	int64_t quota = cpu_quota(l->cpu_limit_milli);
	if (quota)
		snprintf(val, sizeof(val), "%" PRId64 " %d", quota, CPU_PERIOD_US);
	else
		snprintf(val, sizeof(val), "max %d", CPU_PERIOD_US);
	if ((ret = put(d, "cpu.max", val, false, err)) < 0 ||
	    (ret = put_i64(d, "cpu.weight", cpu_weight(l->cpu_request_milli), false, err)) < 0)
		return ret;

	if (l->mem_limit > 0)
		snprintf(val, sizeof(val), "%" PRId64, l->mem_limit);
	else
		snprintf(val, sizeof(val), "max");
	if ((ret = put(d, "memory.max", val, false, err)) < 0 ||
	    (ret = put(d, "memory.swap.max", l->mem_limit > 0 ? "0" : "max", true, err)) < 0 ||
	    /* an OOM kill takes the whole run, not one of its processes */
	    (ret = put(d, "memory.oom.group", "1", true, err)) < 0)
		return ret;

	if (want & C_PIDS) {
		if (l->pids_max > 0)
			ret = put_i64(d, "pids.max", l->pids_max, false, err);
		else
			ret = put(d, "pids.max", "max", false, err);
	}
	return ret < 0 ? ret : 0;
}

static int v2_stats(const cg_handle *h, cg_stats *out, berth_error **err)
{
	const char *dir = h->dirs[0].path;
	const stat_key cpu[] = {{"usage_usec", &out->cpu_usage_ns, 1000},
				{"nr_periods", &out->nr_periods, 1},
				{"nr_throttled", &out->nr_throttled, 1},
				{"throttled_usec", &out->throttled_ns, 1000}};
	const stat_key events[] = {{"oom_kill", &out->oom_kills, 1}};
	int ret;
	if ((ret = read_keys(dir, "cpu.stat", cpu, BERTH_ARRAY_SIZE(cpu), err)) < 0 ||
	    (ret = read_number(dir, "memory.current", &out->mem_current, 1, err)) < 0 ||
	    (ret = read_number(dir, "memory.peak", &out->mem_peak, 1, err)) < 0 ||
	    (ret = read_keys(dir, "memory.events", events, 1, err)) < 0)
		return ret;
	return 0;
}

static const cg_ops v1_ops = {v1_layout, v1_check, v1_write_limits, v1_stats};
static const cg_ops v2_ops = {v2_layout, v2_check, v2_write_limits, v2_stats};

/* ---- the interface ------------------------------------------------------- */

cg_version cg_detect(const char *root)
{
	if (!root)
		return CG_NONE;
	if (exists(root, "cgroup.controllers"))
		return CG_V2;
	char *mem = join(root, "memory"), *cpu = join(root, "cpu");
	bool v1 = (mem && is_dir(mem)) || (cpu && is_dir(cpu));
	free(mem);
	free(cpu);
	return v1 ? CG_V1 : CG_NONE;
}

const char *cg_version_name(cg_version v)
{
	switch (v) {
	case CG_V1:
		return "v1";
	case CG_V2:
		return "v2";
	case CG_NONE:
		break;
	}
	return "none";
}

void cg_free(cg_handle *cg)
{
	if (!cg)
		return;
	for (size_t i = 0; i < cg->n; i++) {
		free(cg->dirs[i].hier);
		free(cg->dirs[i].parent);
		free(cg->dirs[i].path);
	}
	free(cg->root);
	free(cg);
}

/* A handle with its directories laid out; nothing made yet. */
static int handle_new(cg_handle **out, cg_version v, const char *root, const char *parent,
		      const char *name, berth_error **err)
{
	*out = NULL;
	if (v != CG_V1 && v != CG_V2)
		return berth_fail(err, BERTH_EARG, "no cgroup version to use");
	if (!root || !*root)
		return berth_fail(err, BERTH_EARG, "no cgroup root");
	if (!component(parent))
		return berth_fail(err, BERTH_EARG, "cgroup parent \"%s\" is not one path component",
				  parent ? parent : "");
	if (!component(name))
		return berth_fail(err, BERTH_EARG, "cgroup name \"%s\" is not one path component",
				  name ? name : "");
	cg_handle *h = berth_calloc(1, sizeof(*h));
	if (!h)
		return oom(err);
	h->v = v;
	h->ops = v == CG_V2 ? &v2_ops : &v1_ops;
	h->root = berth_strdup(root);
	int ret = h->root ? h->ops->layout(h, root, parent, name, err) : oom(err);
	if (ret) {
		cg_free(h);
		return ret;
	}
	*out = h;
	return 0;
}

int cg_create(cg_handle **out, cg_version v, const char *root, const char *parent,
	      const char *name, const cg_limits *limits, berth_error **err)
{
	static const cg_limits none = {0, 0, 0, 0};
	cg_handle *h;
	int ret = handle_new(&h, v, root, parent, name, err);
	if (ret)
		return ret;
	if ((ret = h->ops->check(h, err)) < 0)
		goto fail;
	for (size_t i = 0; i < h->n; i++) {
		cg_dir *d = &h->dirs[i];
		if ((ret = make_dir(d->parent, &d->parent_created, err)) < 0 ||
		    (ret = make_dir(d->path, &d->created, err)) < 0)
			goto fail;
	}
	if ((ret = h->ops->write_limits(h, limits ? limits : &none, err)) < 0)
		goto fail;
	for (size_t i = 0; i < h->n; i++)
		h->dirs[i].parent_created = false; /* PARENT is shared by runs from now on */
	*out = h;
	return 0;
fail:
	undo(h);
	cg_free(h);
	return ret;
}

int cg_open(cg_handle **out, cg_version v, const char *root, const char *parent,
	    const char *name, berth_error **err)
{
	cg_handle *h;
	int ret = handle_new(&h, v, root, parent, name, err);
	if (ret)
		return ret;
	if (h->n == 0 || !is_dir(h->dirs[h->primary].path)) {
		ret = h->n ? berth_fail(err, BERTH_EIO, "no cgroup \"%s\"", h->dirs[h->primary].path)
			   : berth_fail(err, BERTH_EIO, "no cgroup hierarchy under \"%s\"", root);
		cg_free(h);
		return ret;
	}
	*out = h;
	return 0;
}

int cg_enter(cg_handle *cg, pid_t pid, berth_error **err)
{
	if (!cg || pid <= 0)
		return berth_fail(err, BERTH_EARG, "no cgroup or no process to move");
	char num[32];
	snprintf(num, sizeof(num), "%ld", (long)pid);
	for (size_t i = 0; i < cg->n; i++) {
		int ret = put(&cg->dirs[i], "cgroup.procs", num, false, err);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int cg_enter_self(const cg_handle *cg)
{
	if (!cg || cg->v != CG_V1)
		return EINVAL;
	for (size_t i = 0; i < cg->n; i++) {
		const cg_dir *d = &cg->dirs[i];
		char path[4200];
		if (snprintf(path, sizeof(path), "%s/tasks", d->path) >= (int)sizeof(path))
			return ENAMETOOLONG;
		int e = write_str(path, "0", O_WRONLY | (d->cgfs ? 0 : O_CREAT));
		if (e == ENOENT && d->cgfs) {
			/* a hierarchy without tasks (never on Linux's v1): the whole
			 * process, which is this thread alone */
			snprintf(path, sizeof(path), "%s/cgroup.procs", d->path);
			e = write_str(path, "0", O_WRONLY);
		}
		if (e)
			return e;
	}
	return 0;
}

int cg_dir_fd(const cg_handle *cg)
{
	if (!cg || cg->v != CG_V2 || !cg->n)
		return -1;
	return open(cg->dirs[0].path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

bool cg_fresh(const cg_handle *cg)
{
	for (size_t i = 0; cg && i < cg->n; i++)
		if (!cg->dirs[i].created)
			return false;
	return cg && cg->n;
}

cg_version cg_version_of(const cg_handle *cg)
{
	return cg ? cg->v : CG_NONE;
}

int cg_stats_read(cg_handle *cg, cg_stats *out, berth_error **err)
{
	if (!cg || !out)
		return berth_fail(err, BERTH_EARG, "no cgroup");
	memset(out, 0, sizeof(*out));
	return cg->ops->stats(cg, out, err);
}

/* Appends the pids of dir/cgroup.procs to *pids (no duplicates). */
static int add_pids(const cg_dir *d, pid_t **pids, size_t *n, size_t *cap)
{
	char *path = join(d->path, "cgroup.procs");
	if (!path)
		return -BERTH_ENOMEM;
	char *text;
	int ret = read_str(path, &text);
	free(path);
	if (ret == -BERTH_EIO && errno == ENOENT && !d->cgfs)
		return 0; /* a test directory nothing entered */
	if (ret)
		return ret;
	for (char *p = text; *p;) {
		char *end;
		errno = 0;
		long v = strtol(p, &end, 10);
		if (end == p) {
			p++;
			continue;
		}
		p = end;
		if (errno || v <= 0 || (long)(pid_t)v != v)
			continue; /* never 0 or -1: kill() would reach far more */
		size_t j = 0;
		while (j < *n && (*pids)[j] != (pid_t)v)
			j++;
		if (j < *n)
			continue;
		if (*n == *cap) {
			size_t c = *cap ? *cap * 2 : 16;
			pid_t *g = berth_realloc(*pids, c * sizeof(**pids));
			if (!g) {
				free(text);
				return -BERTH_ENOMEM;
			}
			*pids = g;
			*cap = c;
		}
		(*pids)[(*n)++] = (pid_t)v;
	}
	free(text);
	return 0;
}

int cg_count(cg_handle *cg)
{
	if (!cg || cg->n == 0)
		return -BERTH_EARG;
	pid_t *pids = NULL;
	size_t n = 0, cap = 0;
	int ret = add_pids(&cg->dirs[cg->primary], &pids, &n, &cap);
	free(pids);
	return ret < 0 ? ret : n > INT32_MAX ? INT32_MAX : (int)n;
}

int cg_kill(cg_handle *cg, int sig)
{
	if (!cg || cg->n == 0)
		return -BERTH_EARG;
	pid_t *pids = NULL;
	size_t n = 0, cap = 0;
	int ret = 0;
	for (size_t i = 0; i < cg->n && ret == 0; i++)
		ret = add_pids(&cg->dirs[i], &pids, &n, &cap);
	if (ret < 0) {
		free(pids);
		return ret;
	}
	size_t signalled = 0;
	const cg_dir *d = &cg->dirs[cg->primary];
	if (cg->v == CG_V2 && sig == SIGKILL && put(d, "cgroup.kill", "1", true, NULL) == 0) {
		signalled = n; /* the kernel also reaches processes forked meanwhile */
	} else {
		for (size_t i = 0; i < n; i++)
			if (kill(pids[i], sig) == 0)
				signalled++;
	}
	free(pids);
	return signalled > INT32_MAX ? INT32_MAX : (int)signalled;
}

int cg_destroy(cg_handle *cg, berth_error **err)
{
	if (!cg)
		return 0;
	int ret = 0;
	for (size_t i = cg->n; i-- > 0;) {
		int e = remove_dir(cg->dirs[i].path, cg->dirs[i].cgfs);
		if (e && ret == 0)
			ret = berth_fail(err, BERTH_EIO, "cannot remove \"%s\": %s", cg->dirs[i].path,
					 strerror(e));
	}
	return ret;
}

const char *cg_path(const cg_handle *cg)
{
	return cg && cg->n ? cg->dirs[cg->primary].path : NULL;
}
