/*
 * node_fit.c - the local machine as a single Kubernetes node: what it has
 * (CPUs, memory, GPUs, disk, labels, taints) and whether a planned run can
 * ever be scheduled on it, with the scheduler's own rules for node
 * selectors, required node affinity and taints.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plan/node_fit.h"
#include "plan/plan.h"
#include "plan/policy_internal.h"

#include "base/capture.h"
#include "base/internal.h"

/* ---- detection ----------------------------------------------------------------------- */

/* The first line of path into buf, without its newline; 0 or -1. */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	char *ok = fgets(buf, (int)len, f);
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* A whole decimal number at *s (leading blanks allowed); end after it. */
static int parse_i64(const char *s, int64_t *out, const char **end)
{
	char *e;
	errno = 0;
	long long v = strtoll(s, &e, 10);
	if (e == s || errno)
		return -1;
	*out = v;
	if (end)
		*end = e;
	return 0;
}

/* One line of /proc/self/cgroup: "ID:CONTROLLERS:PATH". */
typedef struct cg_paths {
	char v2[PATH_MAX];     /* "" when none */
	char cpu[PATH_MAX];    /* v1 cpu controller */
	char memory[PATH_MAX]; /* v1 memory controller */
} cg_paths;

static int has_controller(const char *list, size_t len, const char *name)
{
	size_t n = strlen(name);
	const char *p = list, *stop = list + len;
	while (p < stop) {
		const char *comma = memchr(p, ',', (size_t)(stop - p));
		size_t l = comma ? (size_t)(comma - p) : (size_t)(stop - p);
		if (l == n && memcmp(p, name, n) == 0)
			return 1;
		p += l + 1;
	}
	return 0;
}

static void own_cgroups(cg_paths *c)
{
	char line[PATH_MAX + 128];
	memset(c, 0, sizeof(*c));
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		const char *ctrl = c1 + 1, *path = c2 + 1;
		size_t clen = (size_t)(c2 - ctrl);
		if (strncmp(line, "0:", 2) == 0 && clen == 0)
			snprintf(c->v2, sizeof(c->v2), "%s", path);
		if (has_controller(ctrl, clen, "cpu"))
			snprintf(c->cpu, sizeof(c->cpu), "%s", path);
		if (has_controller(ctrl, clen, "memory"))
			snprintf(c->memory, sizeof(c->memory), "%s", path);
	}
	fclose(f);
}

/* Reads /sys/fs/cgroup/<ctrl>/<path>/<file>, else the same file at the
 * hierarchy's root (a container sees its own cgroup there without a
 * cgroup namespace). ctrl "" is the unified hierarchy. */
static int cg_read(const char *ctrl, const char *path, const char *file, char *buf, size_t len)
{
	char p[PATH_MAX * 2];
	snprintf(p, sizeof(p), "/sys/fs/cgroup%s%s%s/%s", *ctrl ? "/" : "", ctrl, path, file);
	if (read_line(p, buf, len) == 0)
		return 0;
	if (!*ctrl)
		return -1;
	snprintf(p, sizeof(p), "/sys/fs/cgroup/%s/%s", ctrl, file);
	return read_line(p, buf, len);
}

/* The CPU quota of the process's own cgroup in millicores; 0 when none. */
static int64_t cgroup_cpu_milli(const cg_paths *c)
{
	char buf[128];
	int64_t quota = 0, period = 0;
	const char *end;
	if (c->v2[0] && cg_read("", c->v2, "cpu.max", buf, sizeof(buf)) == 0) {
		/* "max 100000" or "QUOTA PERIOD" */
		if (parse_i64(buf, &quota, &end) || parse_i64(end, &period, NULL))
			return 0;
	} else if (c->cpu[0] && cg_read("cpu", c->cpu, "cpu.cfs_quota_us", buf, sizeof(buf)) == 0 &&
		   parse_i64(buf, &quota, NULL) == 0) {
		if (cg_read("cpu", c->cpu, "cpu.cfs_period_us", buf, sizeof(buf)) ||
		    parse_i64(buf, &period, NULL))
			return 0;
	}
	if (quota <= 0 || period <= 0 || quota > INT64_MAX / 1000)
		return 0;
	return (quota * 1000 + period - 1) / period;
}

/* The memory limit of the process's own cgroup in bytes; 0 when none. */
static int64_t cgroup_mem(const cg_paths *c)
{
	char buf[128];
	int64_t v = 0;
	if (c->v2[0] && cg_read("", c->v2, "memory.max", buf, sizeof(buf)) == 0) {
		if (parse_i64(buf, &v, NULL)) /* "max" */
			return 0;
	} else if (!c->memory[0] ||
		   cg_read("memory", c->memory, "memory.limit_in_bytes", buf, sizeof(buf)) ||
		   parse_i64(buf, &v, NULL)) {
		return 0;
	}
	/* v1 writes "no limit" as the largest page multiple (9223372036854771712);
	 * the caller keeps MemTotal when the limit is not lower */
	return v > 0 ? v : 0;
}

static int64_t mem_total(void)
{
	char line[256];
	int64_t kb = -1;
	FILE *f = fopen("/proc/meminfo", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "MemTotal:", 9) == 0) {
			if (parse_i64(line + 9, &kb, NULL) || kb < 0 || kb > INT64_MAX / 1024)
				kb = -1;
			break;
		}
	fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}

/* Lines starting "GPU " in the output of `nvidia-smi -L`; 0 when it is not
 * on PATH or fails. */
static int64_t nvidia_smi_gpus(void)
{
	static char arg0[] = "nvidia-smi", arg1[] = "-L";
	char *argv[] = {arg0, arg1, NULL};
	char out[16384];
	int64_t n = 0;
	/* one that hangs (a GPU in a bad state) is killed: the machine has none to plan on */
	if (capture_output(argv, out, sizeof(out), 5000) < 0)
		return 0;
	for (const char *line = out; *line;) {
		n += strncmp(line, "GPU ", 4) == 0;
		const char *nl = strchr(line, '\n');
		line = nl ? nl + 1 : line + strlen(line);
	}
	return n;
}

static int64_t count_gpus(const char *gpu_dir)
{
	int64_t n = 0;
	DIR *d = opendir(gpu_dir ? gpu_dir : "/proc/driver/nvidia/gpus");
	bool driver = d != NULL;
	if (d) {
		const struct dirent *e;
		while ((e = readdir(d)) != NULL)
			if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, ".."))
				n++;
		closedir(d);
	}
	/* without a driver directory, nvidia-smi is asked: only when it is there
	 * (starting a process costs milliseconds on every start of berth) */
	return n || driver || !capture_on_path("nvidia-smi") ? n : nvidia_smi_gpus();
}

/* Free bytes under path, or under its nearest existing parent. */
static int free_disk(const char *path, int64_t *out)
{
	char p[PATH_MAX];
	struct statvfs st;
	snprintf(p, sizeof(p), "%s", path && *path ? path : ".");
	while (statvfs(p, &st) != 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			return -1;
		size_t l = strlen(p);
		while (l > 1 && p[l - 1] == '/') /* trailing slashes */
			p[--l] = '\0';
		char *slash = strrchr(p, '/');
		if (!slash) {
			if (strcmp(p, ".") == 0)
				return -1;
			snprintf(p, sizeof(p), ".");
		} else if (slash == p) {
			if (p[1] == '\0')
				return -1;
			p[1] = '\0';
		} else {
			*slash = '\0';
		}
	}
	uint64_t bytes = (uint64_t)st.f_bavail * (uint64_t)st.f_frsize;
	*out = bytes > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)bytes;
	return 0;
}

static const char *kube_arch(const char *m)
{
	static const char *const map[][2] = {
		{"x86_64", "amd64"}, {"amd64", "amd64"}, {"aarch64", "arm64"}, {"arm64", "arm64"},
		{"i386", "386"},     {"i686", "386"},    {"armv7l", "arm"},     {"armv6l", "arm"},
	};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(map); i++)
		if (strcmp(m, map[i][0]) == 0)
			return map[i][1];
	return m;
}

int local_node_label(local_node *n, berth_arena *arena, const char *key, const char *value)
{
	char *v = berth_arena_strdup(arena, value ? value : "");
	if (!v)
		return -BERTH_ENOMEM;
	for (size_t i = 0; i < n->nlabels; i++)
		if (n->labels[i].key.s && strcmp(n->labels[i].key.s, key) == 0) {
			n->labels[i].value.s = v;
			return 0;
		}
	char *k = berth_arena_strdup(arena, key);
	berth_kv *all = berth_arena_alloc(arena, (n->nlabels + 1) * sizeof(*all));
	if (!k || !all)
		return -BERTH_ENOMEM;
	if (n->nlabels)
		memcpy(all, n->labels, n->nlabels * sizeof(*all));
	all[n->nlabels].key.s = k;
	all[n->nlabels].value.s = v;
	n->labels = all;
	n->nlabels++;
	return 0;
}

int local_node_detect(local_node *out, berth_arena *arena, const char *data_dir,
		      const char *gpu_dir, berth_error **err)
{
	memset(out, 0, sizeof(*out));
	cg_paths cg;
	own_cgroups(&cg);

	int64_t ncpu = 0;
	cpu_set_t set;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		ncpu = CPU_COUNT(&set);
	if (ncpu <= 0) /* more CPUs than a cpu_set_t holds */
		ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu <= 0)
		return berth_fail(err, BERTH_EIO, "cannot count the CPUs of this machine");
	out->cpu_milli = ncpu * 1000;
	int64_t quota = cgroup_cpu_milli(&cg);
	if (quota > 0 && quota < out->cpu_milli)
		out->cpu_milli = quota;

	if ((out->mem = mem_total()) < 0)
		return berth_fail(err, BERTH_EIO, "/proc/meminfo: no MemTotal line could be read");
	int64_t limit = cgroup_mem(&cg);
	if (limit > 0 && limit < out->mem)
		out->mem = limit;

	out->gpus = count_gpus(gpu_dir);

	if (free_disk(data_dir, &out->disk) != 0)
		return berth_fail(err, BERTH_EIO, "%s: cannot read the free disk space: %s",
				  data_dir && *data_dir ? data_dir : ".", strerror(errno));

	char host[256];
	if (gethostname(host, sizeof(host)) != 0)
		return berth_fail(err, BERTH_EIO, "cannot read the host name: %s", strerror(errno));
	host[sizeof(host) - 1] = '\0';
	for (char *p = host; *p; p++) /* the kubelet lowercases it too */
		*p = (char)tolower((unsigned char)*p);
	struct utsname u;
	if (uname(&u) != 0)
		return berth_fail(err, BERTH_EIO, "uname: %s", strerror(errno));

	if (!(out->name = berth_arena_strdup(arena, host)) ||
	    local_node_label(out, arena, "kubernetes.io/hostname", host) ||
	    local_node_label(out, arena, "kubernetes.io/os", "linux") ||
	    local_node_label(out, arena, "kubernetes.io/arch", kube_arch(u.machine)))
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	return 0;
}

/* ---- admission ----------------------------------------------------------------------- */

/* CPUs as every face writes them (berth_format_cpu): "2", "500m", "1250m". */
void local_format_cpu(char *buf, size_t len, int64_t milli)
{
	berth_format_cpu(buf, len, milli);
}
/* Bytes, readably, in binary (Ki, Mi, ...) or decimal (k, M, ...) units,
 * rounded down to a tenth so as never to overstate: "23.4Gi". */
static const char *finish(berth_buf *b, berth_arena *arena)
{
	const char *s = b->failed || !b->data ? NULL : berth_arena_strdup(arena, b->data);
	berth_buf_release(b);
	return s ? s : "out of memory";
}

/* The resources of a run, in the order they are checked. */
#define NDIMS 4

/* The reason when resource i (cpu, mem, gpu, disk) asks more than the node
 * has, or NULL; *asked (may be NULL): the value asked, for its place. */
static const char *over_capacity_dim(const local_node *node, const berth_run *run, size_t i,
				     berth_arena *arena, const berth_qty **asked)
{
	const berth_resources *r = &run->spec.resources;
	const struct {
		const char *name;
		const berth_resource *res;
		int gpu;
		int64_t have;
	} dims[NDIMS] = {
		{"cpu", &r->cpu, 0, node->cpu_milli},
		{"mem", &r->mem, 0, node->mem},
		{"gpu", &r->gpu, 1, node->gpus},
		{"disk", &r->disk, 0, node->disk},
	};
	plan_demand d;
	plan_demand_of(&d, run);
	const int64_t want[NDIMS] = {d.cpu_milli, d.mem, d.gpus, d.disk};
	if (want[i] <= dims[i].have)
		return NULL;
	const char *which;
	const berth_qty *q = plan_asked(dims[i].res, dims[i].gpu, &which);
	if (asked)
		*asked = q;
	char a[BERTH_QUANTITY_STR_MAX + 8], h[64];
	berth_buf b = BERTH_BUF_INIT;
	berth_buf_printf(&b, "resources.%s.%s: ", dims[i].name, which);
	if (d.workers > 1) /* each worker's, times the workers, which start together */
		berth_buf_printf(&b, "%lld workers together: ", (long long)d.workers);
	switch (i) {
	case 0:
		local_format_cpu(a, sizeof(a), want[i]);
		local_format_cpu(h, sizeof(h), dims[i].have);
		/* "64 CPUs asked", "2500m asked": millicores need no noun */
		berth_buf_printf(&b, "%s%s asked, the machine has %s", a,
				 want[i] % 1000 ? "" : want[i] == 1000 ? " CPU" : " CPUs", h);
		break;
	case 2:
		berth_buf_printf(&b, "%" PRId64 " %s asked, the machine has %" PRId64, want[i],
				 want[i] == 1 ? "GPU" : "GPUs", dims[i].have);
		break;
	default:
		if (q)
			berth_quantity_format(&q->q, a, sizeof(a));
		else
			berth_format_size(a, sizeof(a), want[i], 1);
		berth_format_size(h, sizeof(h), dims[i].have,
			  !q || q->q.format == BERTH_QUANTITY_BINARY_SI);
		berth_buf_printf(&b, "%s asked, the machine has %s%s", a, h,
				 i == 3 ? " free" : "");
		break;
	}
	return finish(&b, arena);
}

/* Every resource the run asks more of than the node has, "; " between them,
 * or NULL. */
static const char *over_capacity(const local_node *node, const berth_run *run, berth_arena *arena)
{
	berth_buf b = BERTH_BUF_INIT;
	for (size_t i = 0; i < NDIMS; i++) {
		const char *why = over_capacity_dim(node, run, i, arena, NULL);
		if (why)
			berth_buf_printf(&b, "%s%s", b.len ? "; " : "", why);
	}
	if (!b.len && !b.failed)
		return NULL;
	return finish(&b, arena);
}

static const berth_kv *label(const local_node *node, const char *key)
{
	for (size_t i = node->nlabels; i-- > 0;)
		if (node->labels[i].key.s && strcmp(node->labels[i].key.s, key) == 0)
			return &node->labels[i];
	return NULL;
}

static const char *str_or_empty(const char *s)
{
	return s ? s : "";
}

static const char *selector_mismatch(const local_node *node, const berth_run *run,
				     berth_arena *arena)
{
	const berth_kvlist *ns = &run->spec.node_selector;
	for (size_t i = 0; i < ns->n; i++) {
		const char *k = str_or_empty(ns->items[i].key.s), *v = str_or_empty(ns->items[i].value.s);
		const berth_kv *l = label(node, k);
		berth_buf b = BERTH_BUF_INIT;
		if (!l)
			berth_buf_printf(&b, "node_selector: the node has no label \"%s\"", k);
		else if (strcmp(str_or_empty(l->value.s), v) != 0)
			berth_buf_printf(&b, "node_selector: the node has \"%s=%s\", the run asks \"%s=%s\"",
					 k, str_or_empty(l->value.s), k, v);
		else
			continue;
		return finish(&b, arena);
	}
	return NULL;
}

/* A map value, null read as absent (as Kubernetes reads it). */
static const berth_node *get(const berth_node *n, const char *key)
{
	const berth_node *v = n ? berth_node_get(n, key) : NULL;
	return v && v->kind == BERTH_NODE_SCALAR && v->type == BERTH_SCALAR_NULL ? NULL : v;
}

static size_t seq_len(const berth_node *n)
{
	return n && n->kind == BERTH_NODE_SEQ ? n->len : 0;
}

/* One requirement, from the tree or from the spot labels. */
typedef struct req {
	const char *key, *op;
	const char *const *vals; /* spot: one value */
	const berth_node *valnode; /* tree: the values list */
	size_t nvals;
	int field;                /* matchFields */
} req;

static const char *req_val(const req *r, size_t i)
{
	if (r->vals)
		return r->vals[i];
	return str_or_empty(berth_node_text(r->valnode->u.items[i]));
}

static int parse_int_label(const char *s, int64_t *v)
{
	const char *end;
	return s && *s && !isspace((unsigned char)*s) && parse_i64(s, v, &end) == 0 && *end == '\0';
}

/* Whether the requirement holds for a value (NULL: the label is absent). */
static int req_holds(const req *r, const char *have)
{
	int in = 0;
	if (!strcmp(r->op, "In") || !strcmp(r->op, "NotIn")) {
		for (size_t i = 0; have && i < r->nvals && !in; i++)
			in = strcmp(req_val(r, i), have) == 0;
		return r->op[0] == 'I' ? in : !in;
	}
	if (!strcmp(r->op, "Exists"))
		return have != NULL;
	if (!strcmp(r->op, "DoesNotExist"))
		return have == NULL;
	if (!strcmp(r->op, "Gt") || !strcmp(r->op, "Lt")) {
		int64_t a, b;
		if (r->nvals != 1 || !parse_int_label(have, &a) || !parse_int_label(req_val(r, 0), &b))
			return 0;
		return r->op[0] == 'G' ? a > b : a < b;
	}
	return 0;
}

/* Appends why r does not hold: `"zone" In [a, b]: the node has "zone=c"`. */
static void req_explain(berth_buf *b, const req *r, const local_node *node, const char *have)
{
	if (r->field)
		berth_buf_printf(b, "field %s %s", r->key, r->op);
	else
		berth_buf_printf(b, "\"%s\" %s", r->key, r->op);
	if (r->nvals) {
		berth_buf_puts(b, " [");
		for (size_t i = 0; i < r->nvals; i++)
			berth_buf_printf(b, "%s%s", i ? ", " : "", req_val(r, i));
		berth_buf_puts(b, "]");
	}
	if (r->field && strcmp(r->key, "metadata.name") != 0)
		berth_buf_puts(b, ": only metadata.name is a node field");
	else if (r->field)
		berth_buf_printf(b, ": the node is named \"%s\"", str_or_empty(node->name));
	else if (!have)
		berth_buf_printf(b, ": the node has no label \"%s\"", r->key);
	else
		berth_buf_printf(b, ": the node has \"%s=%s\"", r->key, have);
	int64_t v;
	if ((!strcmp(r->op, "Gt") || !strcmp(r->op, "Lt")) && have && !parse_int_label(have, &v))
		berth_buf_puts(b, ", not an integer");
}

/* Checks r; on failure appends the explanation and returns 0. */
static int req_check(berth_buf *b, const req *r, const local_node *node)
{
	const char *have;
	if (r->field) {
		if (strcmp(r->key, "metadata.name") != 0) {
			req_explain(b, r, node, NULL);
			return 0;
		}
		have = str_or_empty(node->name);
	} else {
		const berth_kv *l = label(node, r->key);
		have = l ? str_or_empty(l->value.s) : NULL;
	}
	if (req_holds(r, have))
		return 1;
	req_explain(b, r, node, have);
	return 0;
}

/* Whether the requirements of a list (matchExpressions, matchFields) all
 * hold; explains the first that does not. */
static int reqs_check(berth_buf *b, const berth_node *list, int field, const local_node *node)
{
	for (size_t i = 0; i < seq_len(list); i++) {
		const berth_node *e = list->u.items[i];
		const berth_node *vals = get(e, "values");
		req r = {
			.key = str_or_empty(berth_node_text(get(e, "key"))),
			.op = str_or_empty(berth_node_text(get(e, "operator"))),
			.valnode = vals,
			.nvals = seq_len(vals),
			.field = field,
		};
		if (!req_check(b, &r, node))
			return 0;
	}
	return 1;
}

/* One node selector term (NULL: the term the renderer adds for the spot
 * labels alone); on failure appends why to b. */
static int term_matches(berth_buf *b, const berth_node *term, const local_node *node,
			const berth_run *run)
{
	const berth_node *exprs = get(term, "matchExpressions"), *fields = get(term, "matchFields");
	size_t nspot = run->spot_operator ? run->nspot_labels : 0;
	if (!seq_len(exprs) && !seq_len(fields) && !nspot) {
		berth_buf_puts(b, "empty, it matches no node");
		return 0;
	}
	if (!reqs_check(b, exprs, 0, node) || !reqs_check(b, fields, 1, node))
		return 0;
	for (size_t i = 0; i < nspot; i++) {
		const char *v = str_or_empty(run->spot_labels[i].value.s);
		req r = {
			.key = str_or_empty(run->spot_labels[i].key.s),
			.op = run->spot_operator,
			.vals = &v,
			.nvals = 1,
		};
		if (!req_check(b, &r, node))
			return 0;
	}
	return 1;
}

static const char *affinity_mismatch(const local_node *node, const berth_run *run,
				      berth_arena *arena)
{
	const berth_node *required = get(get(run->spec.affinity, "nodeAffinity"),
					 "requiredDuringSchedulingIgnoredDuringExecution");
	const berth_node *terms = get(required, "nodeSelectorTerms");
	size_t n = seq_len(terms);
	if (!required && !run->spot_operator)
		return NULL;
	berth_buf b = BERTH_BUF_INIT;
	berth_buf_puts(&b, "affinity: no required node selector term matches the node (");
	if (n == 0 && run->spot_operator) {
		/* the renderer writes one term of the spot labels alone */
		berth_buf_puts(&b, "term 1: ");
		if (term_matches(&b, NULL, node, run)) {
			berth_buf_release(&b);
			return NULL;
		}
	} else if (n == 0) {
		berth_buf_puts(&b, "there are no terms");
	}
	for (size_t i = 0; i < n; i++) {
		berth_buf_printf(&b, "%sterm %zu: ", i ? "; " : "", i + 1);
		if (term_matches(&b, terms->u.items[i], node, run)) {
			berth_buf_release(&b);
			return NULL;
		}
	}
	berth_buf_puts(&b, ")");
	return finish(&b, arena);
}

/* Kubernetes' Toleration.ToleratesTaint. */
static int tolerates(const berth_toleration *t, const berth_toleration *taint)
{
	const char *effect = str_or_empty(t->effect.s), *key = str_or_empty(t->key.s);
	if (*effect && strcmp(effect, str_or_empty(taint->effect.s)) != 0)
		return 0;
	if (*key && strcmp(key, str_or_empty(taint->key.s)) != 0)
		return 0;
	const char *op = str_or_empty(t->op.s);
	if (!strcmp(op, "Exists"))
		return 1;
	if (!*op || !strcmp(op, "Equal"))
		return strcmp(str_or_empty(t->value.s), str_or_empty(taint->value.s)) == 0;
	return 0;
}

static const char *taint_untolerated(const local_node *node, const berth_run *run,
				     berth_arena *arena)
{
	const berth_spec *s = &run->spec;
	for (size_t i = 0; i < node->ntaints; i++) {
		const berth_toleration *taint = &node->taints[i];
		const char *effect = str_or_empty(taint->effect.s);
		if (strcmp(effect, "NoSchedule") != 0 && strcmp(effect, "NoExecute") != 0)
			continue;
		size_t j = 0;
		while (j < s->ntolerations && !tolerates(&s->tolerations[j], taint))
			j++;
		if (j < s->ntolerations)
			continue;
		berth_buf b = BERTH_BUF_INIT;
		const char *v = str_or_empty(taint->value.s);
		berth_buf_printf(&b, "tolerations: the node's taint \"%s%s%s:%s\" is not tolerated",
				 str_or_empty(taint->key.s), *v ? "=" : "", v, effect);
		return finish(&b, arena);
	}
	return NULL;
}

bool local_node_admits(const local_node *node, const berth_run *run, berth_arena *arena,
		       const char **reason)
{
	const char *why = over_capacity(node, run, arena);
	if (!why)
		why = selector_mismatch(node, run, arena);
	if (!why)
		why = affinity_mismatch(node, run, arena);
	if (!why)
		why = taint_untolerated(node, run, arena);
	if (reason)
		*reason = why;
	return why == NULL;
}

/* A problem of a run that can never be scheduled on node: reason is
 * "PATH: why", at origin's file and pos. */
static void never(berth_error **err, const berth_run *run, uint8_t origin, berth_pos pos,
		  const char *reason)
{
	const char *file = origin <= BERTH_ORIGIN_RULE ? run->origin_file[origin] : NULL;
	const char *colon = strstr(reason, ": ");
	char path[128] = "";
	if (colon && (size_t)(colon - reason) < sizeof(path)) {
		memcpy(path, reason, (size_t)(colon - reason));
		path[colon - reason] = '\0';
		reason = colon + 2;
	}
	berth_where w = {file ? file : run->spec.file ? run->spec.file : "<run>",
			 file ? pos.line : 0, file ? pos.column : 0, *path ? path : NULL};
	berth_problem_add(err, BERTH_EPOLICY, BERTH_ERROR, &w, "run \"%s\" can never fit here: %s",
			  run->base_name, reason);
}

int local_node_refuse(const local_node *node, const berth_run *run, berth_arena *arena,
		      berth_error **err)
{
	const berth_spec *s = &run->spec;
	int n = 0;
	for (size_t i = 0; i < NDIMS; i++) {
		const berth_qty *q = NULL;
		const char *why = over_capacity_dim(node, run, i, arena, &q);
		if (why) {
			never(err, run, q ? BERTH_QTY_AT(q) : BERTH_ORIGIN_UNSET,
			      q ? q->pos : (berth_pos){0, 0}, why);
			n++;
		}
	}
	const char *why = selector_mismatch(node, run, arena);
	if (why) {
		const berth_kv *kv = s->node_selector.n ? &s->node_selector.items[0] : NULL;
		/* the key the reason names, when it is one of them */
		for (size_t i = 0; i < s->node_selector.n; i++)
			if (s->node_selector.items[i].key.s &&
			    strstr(why, s->node_selector.items[i].key.s)) {
				kv = &s->node_selector.items[i];
				break;
			}
		never(err, run, kv ? kv->origin : BERTH_ORIGIN_UNSET,
		      kv ? kv->key.pos : (berth_pos){0, 0}, why);
		n++;
	}
	if ((why = affinity_mismatch(node, run, arena))) {
		never(err, run, s->affinity ? s->affinity_origin : BERTH_ORIGIN_RULE, s->affinity_pos,
		      why);
		n++;
	}
	if ((why = taint_untolerated(node, run, arena))) {
		never(err, run, s->ntolerations ? s->tolerations[0].origin : BERTH_ORIGIN_UNSET,
		      s->tolerations_pos, why);
		n++;
	}
	return n;
}

int local_node_from_policy(local_node *n, berth_arena *arena, const berth_policy *p)
{
	if (p->local.cpu.set)
		n->cpu_milli = berth_quantity_milli(&p->local.cpu.q);
	if (p->local.mem.set)
		n->mem = berth_quantity_value(&p->local.mem.q);
	if (p->local.gpu.set)
		n->gpus = berth_quantity_value(&p->local.gpu.q);
	if (p->local.disk.set)
		n->disk = berth_quantity_value(&p->local.disk.q);
	for (size_t i = 0; i < p->local.labels.n; i++)
		if (local_node_label(n, arena, p->local.labels.items[i].key.s,
				     p->local.labels.items[i].value.s))
			return -1;
	if (p->local.taints.n) {
		n->taints = berth_arena_alloc(arena, p->local.taints.n * sizeof(berth_toleration));
		if (!n->taints)
			return -1;
		n->ntaints = 0;
		for (size_t i = 0; i < p->local.taints.n; i++)
			if (!berth_taint_parse(p->local.taints.items[i].s, &n->taints[n->ntaints], arena))
				n->ntaints++;
	}
	return 0;
}
