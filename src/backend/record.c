/*
 * record.c - a run's record (record.h): states, the record of a new run, its
 * insertion and reading, and the record as YAML or JSON.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "backend/record.h"
#include "base/internal.h"
#include "berth/explain.h"
#include "plan/node_fit.h"
#include "plan/plan.h"
#include "plan/policy_internal.h"
#include "render/emit.h"

static const char *const state_names[] = {"Pending", "Running", "Succeeded", "Failed", "Stopped"};

const char *berth_state_name(berth_state s)
{
	return (unsigned)s < BERTH_ARRAY_SIZE(state_names) ? state_names[s] : "Unknown";
}

int berth_state_parse(const char *name)
{
	for (size_t i = 0; name && i < BERTH_ARRAY_SIZE(state_names); i++)
		if (!strcasecmp(name, state_names[i]))
			return (int)i;
	return -1;
}

bool berth_state_final(berth_state s)
{
	return s == BERTH_STATE_SUCCEEDED || s == BERTH_STATE_FAILED || s == BERTH_STATE_STOPPED;
}

void berth_run_info_free(berth_run_info *i)
{
	if (!i)
		return;
	char *const strs[] = {i->id, i->name, i->project, i->backend, i->profile, i->image,
			      i->action, i->reason, i->priority_class, i->gpu_ids, i->enforcement,
			      i->log_path, i->target, i->effective, i->worker_states, i->labels,
			      i->submitted_by};
	for (size_t k = 0; k < BERTH_ARRAY_SIZE(strs); k++)
		free(strs[k]);
	free(i);
}

int berth_run_check_rank(const berth_run_info *i, int rank, berth_error **err)
{
	long long workers = i->workers > 1 ? i->workers : 1;
	if (rank >= 0 && rank < workers)
		return 0;
	return berth_fail(err, BERTH_ENOTFOUND, "run %s has %lld worker%s: there is no rank %d", i->id, workers,
			  workers > 1 ? "s" : "", rank);
}

void berth_run_info_list_free(berth_run_info **list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		berth_run_info_free(list[i]);
	free(list);
}

berth_run_info *record_info_take(store_run *r)
{
	berth_run_info *i = berth_malloc(sizeof(*i));
	if (!i)
		return NULL;
	*i = r->info;
	memset(&r->info, 0, sizeof(r->info));
	return i;
}

/* ---- a record as bytes ------------------------------------------------------------------ */

enum pack_type { P_STR, P_I64, P_INT, P_BOOL, P_STATE };

/* Every field of berth_run_info, in the order packed. */
static const struct {
	const char *name;
	size_t off;
	enum pack_type type;
} packed[] = {
#define P(field, type) {#field, offsetof(berth_run_info, field), type}
	P(id, P_STR), P(name, P_STR), P(project, P_STR), P(backend, P_STR), P(profile, P_STR),
	P(image, P_STR), P(action, P_STR), P(state, P_STATE), P(reason, P_STR),
	P(priority_class, P_STR), P(priority, P_I64), P(created, P_I64), P(started, P_I64),
	P(finished, P_I64), P(cpu_milli, P_I64), P(mem, P_I64), P(gpus, P_I64), P(disk, P_I64),
	P(workers, P_I64), P(worker_states, P_STR), P(cpu_limit_milli, P_I64), P(mem_limit, P_I64),
	P(gpu_ids, P_STR), P(exit_code, P_INT), P(signal, P_INT), P(oom_killed, P_BOOL),
	P(attempts, P_INT), P(cpu_usage_ns, P_I64), P(mem_peak, P_I64), P(enforcement, P_STR),
	P(log_path, P_STR), P(target, P_STR), P(effective, P_STR), P(labels, P_STR),
	P(submitted_by, P_STR),
#undef P
};
/* A field added to berth_run_info must be added above too: this fails until
 * the size below (that of a 64-bit build) is changed with it. */
#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(berth_run_info) == 264, "berth_run_info changed: update packed[]");
#endif

/* The value of a field that is not a string, at at, whatever its C type. */
static int64_t scalar_at(const char *at, enum pack_type type)
{
	return type == P_I64   ? *(const int64_t *)at
	       : type == P_INT  ? *(const int *)at
	       : type == P_BOOL ? *(const bool *)at
				: (int64_t)*(const berth_state *)at;
}

void record_pack(const berth_run_info *i, berth_buf *out)
{
	for (size_t k = 0; k < BERTH_ARRAY_SIZE(packed); k++) {
		const char *at = (const char *)i + packed[k].off;
		const char *s = packed[k].type == P_STR ? *(char *const *)at : NULL;
		/* a string's length + 1 (0: none, NULL), then its bytes */
		int64_t v = packed[k].type != P_STR ? scalar_at(at, packed[k].type)
			    : s			   ? (int64_t)strlen(s) + 1
						   : 0;
		berth_buf_append(out, &v, sizeof(v));
		if (s)
			berth_buf_append(out, s, (size_t)v - 1);
	}
}

int record_unpack(const char *data, size_t len, berth_run_info **out)
{
	*out = NULL;
	berth_run_info *i = berth_calloc(1, sizeof(*i));
	size_t at = 0;
	for (size_t k = 0; i && k < BERTH_ARRAY_SIZE(packed); k++) {
		char *to = (char *)i + packed[k].off;
		int64_t v;
		if (len - at < sizeof(v))
			break;
		memcpy(&v, data + at, sizeof(v));
		at += sizeof(v);
		switch (packed[k].type) {
		case P_STR:
			if (v < 0 || (uint64_t)v > len - at + 1)
				goto bad;
			if (v && !(*(char **)to = berth_strndup(data + at, (size_t)v - 1)))
				goto bad;
			/* a NUL inside would cut it short: not a string as packed */
			if (v && strlen(*(char **)to) != (size_t)v - 1)
				goto bad;
			at += v ? (size_t)v - 1 : 0;
			break;
		case P_I64:
			*(int64_t *)to = v;
			break;
		case P_INT:
			if (v < INT32_MIN || v > INT32_MAX)
				goto bad;
			*(int *)to = (int)v;
			break;
		case P_BOOL:
			if (v != 0 && v != 1)
				goto bad;
			*(bool *)to = v;
			break;
		case P_STATE:
			if (v < 0 || v > BERTH_STATE_STOPPED)
				goto bad;
			*(berth_state *)to = (berth_state)v;
			break;
		}
		if (k + 1 == BERTH_ARRAY_SIZE(packed) && at == len) {
			*out = i;
			return 0;
		}
	}
bad:
	berth_run_info_free(i);
	return -1;
}

#ifdef BERTH_FAULT_INJECTION
int record_same_as_stored(store *st, const berth_run_info *i, berth_error **err)
{
	berth_run_info *stored = NULL;
	int rc = record_get(st, i->id, &stored, err);
	if (rc)
		return rc;
	for (size_t k = 0; k < BERTH_ARRAY_SIZE(packed) && !rc; k++) {
		const char *pa = (const char *)i + packed[k].off, *pb = (const char *)stored + packed[k].off;
		bool same;
		if (packed[k].type == P_STR) {
			const char *x = *(char *const *)pa, *y = *(char *const *)pb;
			same = x == y || (x && y && !strcmp(x, y));
		} else
			same = scalar_at(pa, packed[k].type) == scalar_at(pb, packed[k].type);
		if (!same)
			rc = berth_fail(err, BERTH_EINTERNAL,
					"run %s: the record told with its end differs from the "
					"store's in %s", i->id, packed[k].name);
	}
	berth_run_info_free(stored);
	return rc;
}
#endif

static char *dup_or_null(const char *s)
{
	return s ? berth_strdup(s) : NULL;
}

int record_new(const berth_policy *policy, const berth_run *run, const char *spec_text,
	       const char *kind, store_run *r, berth_error **err)
{
	const berth_spec *s = &run->spec;
	plan_demand d;
	plan_demand_of(&d, run);
	berth_run_info *i = &r->info;
	i->id = berth_strdup(run->id);
	i->name = berth_strdup(run->name);
	i->project = berth_strdup(s->project.s ? s->project.s : "default");
	i->backend = berth_strdup(kind);
	i->profile = dup_or_null(run->profile ? run->profile->id.s : NULL);
	i->image = dup_or_null(s->function.image.s);
	i->action = berth_strdup(berth_action_name(s->action));
	i->state = BERTH_STATE_PENDING;
	i->priority_class = dup_or_null(run->priority_class_name);
	i->priority = berth_policy_priority_value(policy, run->priority_class_name);
	i->created = store_now_ms();
	i->cpu_milli = d.cpu_milli;
	i->mem = d.mem;
	i->gpus = d.gpus;
	i->disk = d.disk;
	i->workers = d.workers;
	i->cpu_limit_milli = s->resources.cpu.limits.set ? berth_quantity_milli(&s->resources.cpu.limits.q) : 0;
	i->mem_limit = s->resources.mem.limits.set ? berth_quantity_value(&s->resources.mem.limits.q) : 0;
	i->exit_code = -1;
	/* the quota's measure of the run, which the usage of its project sums */
	berth_usage quota;
	memset(&quota, 0, sizeof(quota));
	berth_usage_add(&quota, run);
	r->quota_cpu_milli = berth_quantity_milli(&quota.cpu);
	r->quota_mem = berth_quantity_value(&quota.mem);
	r->quota_gpus = berth_quantity_value(&quota.gpu);
	/* and the quota it is accepted under, which holds it while it waits */
	const berth_quota *q = berth_policy_quota(policy, i->project);
	int64_t lim[4] = {-1, -1, -1, -1};
	if (q)
		plan_quota_limits(q, lim);
	r->quota_of = berth_strdup(q ? q->project.s : "");
	r->qlim_cpu_milli = lim[0];
	r->qlim_mem = lim[1];
	r->qlim_gpus = lim[2];
	r->qlim_runs = lim[3];
	r->spec = dup_or_null(spec_text);
	size_t elen;
	berth_explain(run, NULL, BERTH_EXPLAIN_JSON, &i->effective, &elen, NULL);
	r->doc = (int64_t)s->doc;
	i->submitted_by = dup_or_null(run->submitted_by);
	if (s->labels.n) {
		berth_buf l = BERTH_BUF_INIT;
		for (size_t k = 0; k < s->labels.n; k++)
			berth_buf_printf(&l, "%s%s=%s", k ? "," : "", s->labels.items[k].key.s,
					 s->labels.items[k].value.s ? s->labels.items[k].value.s : "");
		if (l.failed) {
			berth_buf_release(&l);
			return berth_fail(err, BERTH_ENOMEM, "out of memory");
		}
		i->labels = berth_buf_detach(&l);
	}
	if ((run->submitted_by && !i->submitted_by) || !i->id || !i->name || !i->project ||
	    !i->backend || !i->action || !r->quota_of)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	return 0;
}

int record_insert(store *st, const store_run *r, berth_error **err)
{
	if (store_begin(st, err))
		return -BERTH_EIO;
	int rc = store_run_insert(st, r, err);
	if (!rc) {
		store_event(st, r->info.id, "Submitted", NULL);
		rc = store_commit(st, err);
	}
	if (rc)
		store_rollback(st);
	return rc;
}

int record_get(store *st, const char *id, berth_run_info **out, berth_error **err)
{
	*out = NULL;
	store_run *r;
	int rc = store_run_get(st, id, &r, err);
	if (rc)
		return rc;
	*out = record_info_take(r);
	store_run_free(r);
	return *out ? 0 : berth_fail(err, BERTH_ENOMEM, "out of memory");
}

/* ---- records as YAML or JSON ------------------------------------------------------------- */

static void o_opt(obuild *b, onode *m, const char *key, const char *s)
{
	if (s)
		o_str(b, m, key, s);
}

static void info_node(obuild *b, onode *m, const berth_run_info *i)
{
	char q[32];
	o_str(b, m, "id", i->id);
	o_str(b, m, "name", i->name);
	o_str(b, m, "project", i->project);
	o_str(b, m, "backend", i->backend);
	o_str(b, m, "state", berth_state_name(i->state));
	o_opt(b, m, "reason", i->reason);
	o_opt(b, m, "action", i->action);
	o_opt(b, m, "profile", i->profile);
	o_opt(b, m, "image", i->image);
	o_opt(b, m, "submitted_by", i->submitted_by);
	o_opt(b, m, "priority_class", i->priority_class);
	/* a map, as on Kubernetes; the record's "key=value,..." holds neither ',' nor '=' in them */
	onode *labels = i->labels && *i->labels ? o_map(b, m, "labels") : NULL;
	for (const char *p = i->labels; labels && *p;) {
		size_t n = strcspn(p, ","), k = strcspn(p, "=");
		k = k < n ? k : n;
		const char *key = berth_arena_strndup(b->arena, p, k);
		const char *value = berth_arena_strndup(b->arena, p + k + (k < n), n - k - (k < n));
		if (key && value)
			o_str(b, labels, key, value);
		else
			b->failed = 1;
		p += n + (p[n] == ',');
	}
	o_int(b, m, "priority", i->priority);
	o_time(b, m, "created", i->created);
	o_time(b, m, "started", i->started);
	o_time(b, m, "finished", i->finished);
	/* exact, as every face writes them: "150m", "1127Mi" (never "0.15", "1.1Gi") */
	onode *res = o_map(b, m, "resources"), *req = o_map(b, res, "requests");
	berth_format_cpu(q, sizeof(q), i->cpu_milli);
	o_strf(b, req, "cpu", "%s", q);
	berth_format_bytes(q, sizeof(q), i->mem);
	o_strf(b, req, "mem", "%s", q);
	o_int(b, req, "gpu", i->gpus);
	berth_format_bytes(q, sizeof(q), i->disk);
	o_strf(b, req, "disk", "%s", q);
	if (i->cpu_limit_milli || i->mem_limit) {
		onode *lim = o_map(b, res, "limits");
		if (i->cpu_limit_milli) {
			berth_format_cpu(q, sizeof(q), i->cpu_limit_milli);
			o_strf(b, lim, "cpu", "%s", q);
		}
		if (i->mem_limit) {
			berth_format_bytes(q, sizeof(q), i->mem_limit);
			o_strf(b, lim, "mem", "%s", q);
		}
	}
	o_opt(b, m, "gpu_ids", i->gpu_ids);
	if (i->workers > 1) {
		o_int(b, m, "workers", i->workers);
		onode *ws = i->worker_states ? o_seq(b, m, "worker_states") : NULL;
		for (const char *p = i->worker_states; p && *p;) {
			size_t n = strcspn(p, ",");
			o_strf(b, ws, NULL, "%.*s", (int)n, p);
			p += n + (p[n] == ',');
		}
	}
	if (berth_state_final(i->state) && i->attempts) {
		if (i->exit_code >= 0)
			o_int(b, m, "exit_code", i->exit_code);
		if (i->signal)
			o_int(b, m, "signal", i->signal);
		o_bool(b, m, "oom_killed", i->oom_killed);
	}
	o_int(b, m, "attempts", i->attempts);
	/* measured by the local backend's cgroup or rlimits; a cluster's is not read */
	if (i->attempts && berth_state_final(i->state) && i->enforcement) {
		onode *u = o_map(b, m, "usage");
		o_strf(b, u, "cpu_seconds", "%.3f", (double)i->cpu_usage_ns / 1e9);
		o_int(b, u, "mem_peak_bytes", i->mem_peak);
	}
	o_opt(b, m, "enforcement", i->enforcement);
	o_opt(b, m, "log", i->log_path);
	o_opt(b, m, "target", i->target);
}

int berth_run_info_format(berth_run_info *const *infos, size_t n, bool list, berth_format fmt,
			  char **out, size_t *len, berth_error **err)
{
	*out = NULL;
	*len = 0;
	obuild b = {.arena = berth_arena_new()};
	if (!b.arena)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	onode *top = o_root(&b, list ? O_SEQ : O_MAP);
	for (size_t i = 0; i < n && (list || i == 0); i++)
		info_node(&b, list ? o_map(&b, top, NULL) : top, infos[i]);
	berth_buf buf = BERTH_BUF_INIT;
	if (!b.failed && top) {
		if (fmt == BERTH_FORMAT_JSON) {
			emit_json(&buf, top, 0, 1);
			berth_buf_puts(&buf, "\n");
		} else
			emit_yaml(&buf, top);
		if (buf.len && buf.data[buf.len - 1] != '\n')
			berth_buf_puts(&buf, "\n");
	}
	berth_arena_free(b.arena);
	if (b.failed || buf.failed || !buf.data) {
		berth_buf_release(&buf);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	*len = buf.len;
	*out = berth_buf_detach(&buf);
	return 0;
}
