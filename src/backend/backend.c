/*
 * backend.c - the public face of the backends (berth/backend.h): picks the
 * kind, resolves the data dir, and does what is the same for every kind
 * (records, waiting, secrets) over the store.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "backend/backend_internal.h"
#include "berth/explain.h"
#include "berth/project.h"
#include "plan/policy_internal.h"
#include "render/emit.h"
#include "base/internal.h"
#include "base/names.h"
#include "base/seal.h"

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
			      i->log_path, i->target, i->effective};
	for (size_t k = 0; k < BERTH_ARRAY_SIZE(strs); k++)
		free(strs[k]);
	free(i);
}

void berth_run_info_list_free(berth_run_info **list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		berth_run_info_free(list[i]);
	free(list);
}

static char *default_home(void)
{
	const char *h = getenv("BERTH_HOME");
	if (h && *h)
		return berth_strdup(h);
	const char *home = getenv("HOME");
	if (!home || !*home) {
		struct passwd *pw = getpwuid(getuid());
		home = pw ? pw->pw_dir : "/";
	}
	berth_buf b = BERTH_BUF_INIT;
	berth_buf_printf(&b, "%s/.berth", home);
	return b.failed ? (berth_buf_release(&b), NULL) : berth_buf_detach(&b);
}

int berth_backend_open(berth_backend **out, const char *kind, const berth_backend_opts *opts,
		       berth_error **err)
{
	*out = NULL;
	const backend_ops *ops = NULL;
	if (!kind || !strcmp(kind, "local"))
		ops = &local_backend_ops;
	else if (!strcmp(kind, "kubernetes"))
		ops = &kube_backend_ops;
	else
		return berth_fail(err, BERTH_EARG, "backend \"%s\" is not one of local, kubernetes", kind);
	berth_backend *b = berth_calloc(1, sizeof(*b));
	if (!b)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	b->ops = ops;
	b->home = opts && opts->home ? berth_strdup(opts->home) : default_home();
	b->exe = berth_strdup(opts && opts->exe ? opts->exe : "/proc/self/exe");
	b->arena = berth_arena_new();
	b->policy = opts ? opts->policy : NULL;
	b->passive = opts && opts->passive;
	b->cached = opts && opts->cached;
	b->waits = opts && opts->waits;
	if (opts && opts->kubeconfig && !(b->kubeconfig = berth_strdup(opts->kubeconfig)))
		b->home = NULL;
	if (opts && opts->context && !(b->kube_context = berth_strdup(opts->context)))
		b->home = NULL;
	if (!b->policy)
		b->policy = b->own_policy = berth_policy_builtin();
	if (!b->home || !b->exe || !b->arena || !b->policy) {
		berth_backend_close(b);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	/* /proc/self/exe names this process's binary only while it runs: keep the path */
	if (!strcmp(b->exe, "/proc/self/exe")) {
		char path[4096];
		ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
		if (n > 0) {
			path[n] = 0;
			free(b->exe);
			b->exe = berth_strdup(path);
		}
	}
	int rc = ops->open(b, err);
	if (rc) {
		berth_backend_close(b);
		return rc;
	}
	*out = b;
	return 0;
}

void berth_backend_close(berth_backend *b)
{
	if (!b)
		return;
	if (b->ops && b->st)
		b->ops->close(b);
	local_waiters_close(b);
	free(b->user.home);
	free(b->user.name);
	kube_close(b->kube);
	free(b->kubeconfig);
	free(b->kube_context);
	berth_policy_free(b->own_policy);
	berth_arena_free(b->arena);
	free(b->home);
	free(b->exe);
	free(b);
}

const char *berth_backend_home(const berth_backend *b)
{
	return b->home;
}

int berth_backend_submit(berth_backend *b, const berth_run *run, const char *spec_text,
			 berth_run_info **out, berth_error **err)
{
	if (out)
		*out = NULL;
	return b->ops->submit(b, &run, 1, spec_text, NULL, out, err);
}

/* The kind a run was submitted to: its operations go there. */
static const backend_ops *ops_of(berth_backend *b, const char *id)
{
	char *kind = NULL;
	store_select_text(b->st, "SELECT backend FROM runs WHERE id = ?1", &STORE_S(id), 1, &kind, NULL);
	const backend_ops *ops = kind && !strcmp(kind, "kubernetes") ? &kube_backend_ops
								    : &local_backend_ops;
	free(kind);
	return ops;
}

int berth_backend_stop(berth_backend *b, const char *id, int grace_s, berth_error **err)
{
	return ops_of(b, id)->stop(b, id, grace_s, true, err);
}

int berth_backend_stop_request(berth_backend *b, const char *id, int grace_s, berth_error **err)
{
	return ops_of(b, id)->stop(b, id, grace_s, false, err);
}

int berth_backend_reconcile(berth_backend *b, berth_error **err)
{
	return b->ops->reconcile(b, err);
}

int berth_backend_logs(berth_backend *b, const char *id, bool follow, berth_log_write write,
		       void *ctx, berth_error **err)
{
	return ops_of(b, id)->logs(b, id, follow, write, ctx, err);
}

static char *dup_or_null(const char *s)
{
	return s ? berth_strdup(s) : NULL;
}

int backend_record(berth_backend *b, const berth_run *run, const char *spec_text, const char *kind,
		   store_run *r, berth_error **err)
{
	const berth_spec *s = &run->spec;
	local_demand d;
	local_demand_of(&d, run);
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
	i->priority = berth_policy_priority_value(b->policy, run->priority_class_name);
	i->created = store_now_ms();
	i->cpu_milli = d.cpu_milli;
	i->mem = d.mem;
	i->gpus = d.gpus;
	i->disk = d.disk;
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
	r->spec = dup_or_null(spec_text);
	size_t elen;
	berth_explain(run, NULL, BERTH_EXPLAIN_JSON, &i->effective, &elen, NULL);
	r->doc = (int64_t)s->doc;
	if (!i->id || !i->name || !i->project || !i->backend || !i->action)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	return 0;
}

int backend_insert(berth_backend *b, const store_run *r, berth_error **err)
{
	if (store_begin(b->st, err))
		return -BERTH_EIO;
	int rc = store_run_insert(b->st, r, err);
	if (!rc) {
		store_event(b->st, r->info.id, "Submitted", NULL);
		rc = store_commit(b->st, err);
	}
	if (rc)
		store_rollback(b->st);
	return rc;
}

int backend_get_stored(berth_backend *b, const char *id, berth_run_info **out, berth_error **err)
{
	*out = NULL;
	store_run *r;
	int rc = store_run_get(b->st, id, &r, err);
	if (rc)
		return rc;
	*out = local_info_take(r);
	store_run_free(r);
	return *out ? 0 : berth_fail(err, BERTH_ENOMEM, "out of memory");
}

/* Asks the cluster about one unfinished kubernetes run (id), or all of
 * them, unless the handle's records are kept by a reconciler; what cannot be
 * asked is a warning. */
static void refresh(berth_backend *b, const char *id, berth_error **err)
{
	if (b->cached || b->passive)
		return;
	if (!id) {
		kube_reconcile(b, err); /* warnings */
		return;
	}
	berth_error *e = NULL;
	if (kube_refresh(b, id, &e)) {
		const berth_problem *p = berth_error_get(e, 0);
		berth_problem_add(err, BERTH_EIO, BERTH_WARNING, NULL,
				  "the state of run \"%s\" is the last one recorded: %s", id,
				  p ? p->message : "the cluster cannot be asked");
	}
	berth_error_free(e);
}

int berth_backend_get(berth_backend *b, const char *id, berth_run_info **out, berth_error **err)
{
	int rc = backend_get_stored(b, id, out, err);
	if (rc || berth_state_final((*out)->state) || strcmp((*out)->backend, "kubernetes") ||
	    b->cached || b->passive)
		return rc;
	berth_run_info_free(*out);
	refresh(b, id, err);
	return backend_get_stored(b, id, out, err);
}

int berth_backend_list(berth_backend *b, const char *project, int state, berth_run_info ***out,
		       size_t *n, berth_error **err)
{
	refresh(b, NULL, err);
	return berth_run_page(b, &project, project ? 1 : 0, state, 0, 0, out, n, NULL, err);
}

int berth_backend_wait(berth_backend *b, const char *id, int64_t timeout_ms, berth_run_info **out,
		       berth_error **err)
{
	if (out)
		*out = NULL;
	const backend_ops *ops = ops_of(b, id);
	char dir[4096];
	local_path(dir, sizeof(dir), b->home, "runs/%s", id);
	int64_t deadline = timeout_ms < 0 ? -1 : store_now_ms() + timeout_ms;
	/* a local run without a pipe from its supervisor: its directory is
	 * watched, from before the first read of its record */
	local_watch w = {.fd = -1};
	if (!ops->wait && local_wait_done(b, id, 0) < 0)
		local_watch_open(&w, dir);
	int rc, stale = 0;
	for (;;) {
		berth_run_info *i;
		if ((rc = backend_get_stored(b, id, &i, err)))
			break;
		if (berth_state_final(i->state)) {
			if (out)
				*out = i;
			else
				berth_run_info_free(i);
			break;
		}
		berth_run_info_free(i);
		int64_t left = deadline < 0 ? 1000 : deadline - store_now_ms();
		if (left <= 0) {
			rc = berth_fail(err, BERTH_ETIMEOUT, "run \"%s\" is not finished after %lld ms", id,
					(long long)timeout_ms);
			break;
		}
		if (!ops->wait && local_done_unrecorded(b, id, &stale)) {
			if (stale > 50) {
				rc = berth_fail(err, BERTH_EIO,
						"run \"%s\" ended but its end cannot be recorded in the store "
						"(is the data dir full?)", id);
				break;
			}
			continue;
		}
		if (!ops->wait) {
			int ms = left > 1000 ? 1000 : (int)left;
			if (local_wait_done(b, id, ms) < 0) {
				if (w.fd < 0)
					local_watch_open(&w, dir);
				local_watch_wait(&w, ms);
			}
			continue;
		}
		berth_error *e = NULL;
		rc = ops->wait(b, id, deadline < 0 ? -1 : left, &e);
		if (rc && rc != -BERTH_ETIMEOUT) {
			berth_error_move(err, e);
			break;
		}
		berth_error_free(e); /* a time limit: the record decides */
	}
	local_watch_close(&w);
	return rc;
}

/* ---- secrets and usage ---------------------------------------------------------------- */

int berth_backend_secret_names(berth_backend *b, const char *project, char ***names, size_t *n,
			       berth_error **err)
{
	return store_secret_names(b->st, project, names, n, err);
}

int berth_backend_secret_set(berth_backend *b, const char *project, const char *name,
			     const char *value, size_t len, berth_error **err)
{
	const char *why = berth_check_secret_key(name);
	if (why)
		return berth_fail(err, BERTH_EINVALID, "secret name \"%s\" %s", name, why);
	unsigned char key[SECRET_KEY_BYTES], *sealed;
	size_t slen;
	int rc = secret_key_load(b->home, 1, key, err);
	if (!rc)
		rc = secret_seal(key, project, name, value, len, &sealed, &slen, err);
	memset(key, 0, sizeof(key));
	if (rc)
		return rc;
	rc = store_secret_put(b->st, project, name, sealed, slen, err);
	free(sealed);
	return rc;
}

int berth_backend_secret_delete(berth_backend *b, const char *project, const char *name,
				berth_error **err)
{
	int rc = store_secret_delete(b->st, project, name, err);
	if (rc < 0)
		return rc;
	return rc ? 0 : berth_fail(err, BERTH_ENOTFOUND, "no secret \"%s\" in project \"%s\"", name, project);
}

int berth_backend_usage(berth_backend *b, const char *project, berth_usage *out, berth_error **err)
{
	memset(out, 0, sizeof(*out));
	int64_t sum[4];
	int rc = store_usage(b->st, project, sum, err);
	if (rc)
		return rc;
	out->cpu = berth_quantity_from_int(sum[0] / 1000, BERTH_QUANTITY_DECIMAL_SI);
	out->cpu.nanos = (int32_t)(sum[0] % 1000) * 1000000; /* millicores */
	out->mem = berth_quantity_from_int(sum[1], BERTH_QUANTITY_BINARY_SI);
	out->gpu = berth_quantity_from_int(sum[2], BERTH_QUANTITY_DECIMAL_SI);
	out->runs = sum[3];
	return 0;
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
	o_opt(b, m, "priority_class", i->priority_class);
	o_int(b, m, "priority", i->priority);
	o_time(b, m, "created", i->created);
	o_time(b, m, "started", i->started);
	o_time(b, m, "finished", i->finished);
	onode *res = o_map(b, m, "resources"), *req = o_map(b, res, "requests");
	local_format_cpu(q, sizeof(q), i->cpu_milli);
	o_strf(b, req, "cpu", "%s", q);
	berth_format_size(q, sizeof(q), i->mem, 1);
	o_strf(b, req, "mem", "%s", q);
	o_int(b, req, "gpu", i->gpus);
	berth_format_size(q, sizeof(q), i->disk, 1);
	o_strf(b, req, "disk", "%s", q);
	if (i->cpu_limit_milli || i->mem_limit) {
		onode *lim = o_map(b, res, "limits");
		if (i->cpu_limit_milli) {
			local_format_cpu(q, sizeof(q), i->cpu_limit_milli);
			o_strf(b, lim, "cpu", "%s", q);
		}
		if (i->mem_limit) {
			berth_format_size(q, sizeof(q), i->mem_limit, 1);
			o_strf(b, lim, "mem", "%s", q);
		}
	}
	o_opt(b, m, "gpu_ids", i->gpu_ids);
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
