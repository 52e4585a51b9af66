/*
 * backend.c - the public face of the backends (berth/backend.h): opens the
 * kinds of the registry over one runtime and sends each operation on a run
 * to the kind it was submitted to. Nothing here knows a kind by its name.
 */
#include <stdio.h>
#include <string.h>

#include "backend/record.h"
#include "plan/plan.h"
#include "backend/logfile.h"
#include "backend/runtime.h"
#include "base/internal.h"
#include "base/names.h"
#include "base/seal.h"
#include "berth/project.h"

int berth_backend_open(berth_backend **out, const char *kind, const berth_backend_opts *opts,
		       berth_error **err)
{
	*out = NULL;
	const backend_ops *ops = kind ? backend_kind(kind) : backend_kind_at(0);
	if (!ops) {
		berth_buf known = BERTH_BUF_INIT;
		const char *names[BACKEND_KINDS_MAX] = {NULL};
		for (size_t i = 0; backend_kind_at(i); i++) {
			names[i] = backend_kind_at(i)->kind;
			berth_buf_printf(&known, "%s%s", i ? ", " : "", names[i]);
		}
		const char *hint = berth_suggest(kind, names, BACKEND_KINDS_MAX);
		int rc = berth_fail(err, BERTH_EARG, "backend \"%s\" is not one of %s%s%s%s", kind,
				    known.data ? known.data : "", hint ? "; did you mean \"" : "",
				    hint ? hint : "", hint ? "\"?" : "");
		berth_buf_release(&known);
		return rc;
	}
	berth_backend *b;
	int rc = backend_runtime_open(&b, opts, err);
	if (rc)
		return rc;
	b->ops = ops;
	/* every kind, in the registry's order: runs of any kind in the data dir
	 * are followed through the kind they were submitted to */
	for (size_t i = 0; !rc && backend_kind_at(i); i++)
		rc = backend_kind_at(i)->open(b, backend_kind_at(i) == ops, err);
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
	for (size_t i = 0; backend_kind_at(i); i++)
		if (backend_state(b, backend_kind_at(i)))
			backend_kind_at(i)->close(b);
	backend_runtime_close(b);
}

int berth_backend_sync(berth_backend *b, berth_error **err)
{
	return store_sync(b->st, err);
}

uint64_t berth_backend_sync_take(berth_backend *b)
{
	return store_sync_take(b->st);
}

int berth_backend_sync_to(berth_backend *b, uint64_t seq, berth_error **err)
{
	return store_sync_to(b->st, seq, err);
}

void berth_backend_sync_stats(berth_backend *b, uint64_t *commits, uint64_t *fsyncs)
{
	uint64_t durable;
	store_sync_stats(b->st, commits, &durable, fsyncs);
}

int berth_backend_check(berth_backend *b, char **report, berth_error **err)
{
	*report = NULL;
	if (!b->ops->check)
		return berth_fail(err, BERTH_EARG, "backend \"%s\" has nothing to check: what it needs is "
				  "checked at each submission", b->ops->kind);
	berth_buf out = BERTH_BUF_INIT;
	int rc = b->ops->check(b, &out, err);
	if (rc >= 0 && out.failed)
		rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
	if (rc < 0) {
		berth_buf_release(&out);
		return rc;
	}
	*report = out.data ? berth_buf_detach(&out) : berth_strdup("");
	return *report ? rc : berth_fail(err, BERTH_ENOMEM, "out of memory");
}

int berth_backend_setup(berth_backend *b, bool dry_run, char **out, berth_error **err)
{
	*out = NULL;
	if (!b->ops->setup)
		return berth_fail(err, BERTH_EARG, "backend \"%s\" has nothing to set up", b->ops->kind);
	berth_buf buf = BERTH_BUF_INIT;
	int rc = b->ops->setup(b, dry_run, &buf, err);
	*out = berth_buf_detach(&buf); /* NULL after a failed append */
	if (!*out && !rc)
		rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
	return rc;
}

const char *berth_backend_default_kind(void)
{
	return backend_kind_at(0)->kind;
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

/* The kind a run was submitted to: its operations go there (a run that is
 * not there: the default kind, which says so). Not knowing is an error, never
 * a guess: a run sent to the wrong kind would be waited for forever. */
static int ops_of(berth_backend *b, const char *id, const backend_ops **ops, berth_error **err)
{
	if (b->ops->holds && b->ops->holds(b, id)) {
		*ops = b->ops;
		return 0;
	}
	char *kind = NULL;
	int rc = store_run_kind(b->st, id, &kind, err);
	if (rc)
		return rc;
	/* no kind: no such run (the default kind says so), or a record without
	 * one, which no kind may guess at */
	if (!kind && (rc = store_run_exists(b->st, id, err)) != 0)
		return rc < 0 ? rc : berth_fail(err, BERTH_EINTERNAL, "run \"%s\" has no backend recorded", id);
	*ops = kind ? backend_kind(kind) : backend_kind_at(0);
	if (!*ops || !backend_state(b, *ops))
		rc = berth_fail(err, BERTH_EINTERNAL, "run \"%s\" is of backend \"%s\", which this berth "
				"does not have", id, kind);
	free(kind);
	return rc;
}

int berth_backend_stop(berth_backend *b, const char *id, int grace_s, berth_error **err)
{
	const backend_ops *ops;
	int rc = ops_of(b, id, &ops, err);
	return rc ? rc : ops->stop(b, id, grace_s, true, err);
}

int berth_backend_stop_request(berth_backend *b, const char *id, int grace_s, berth_error **err)
{
	const backend_ops *ops;
	int rc = ops_of(b, id, &ops, err);
	return rc ? rc : ops->stop(b, id, grace_s, false, err);
}

int berth_backend_reconcile(berth_backend *b, berth_error **err)
{
	int rc = 0;
	for (size_t i = 0; backend_kind_at(i); i++) {
		const backend_ops *k = backend_kind_at(i);
		int r = backend_state(b, k) ? k->reconcile(b, err) : 0;
		rc = rc ? rc : r;
	}
	return rc;
}

int berth_backend_logs(berth_backend *b, const char *id, const berth_log_opts *o,
		       berth_log_write write, void *ctx, berth_error **err)
{
	static const berth_log_opts all = {.rank = -1};
	const backend_ops *ops;
	int rc = log_opts_check(o, err);
	if (!rc)
		rc = ops_of(b, id, &ops, err);
	return rc ? rc : ops->logs(b, id, o ? o : &all, write, ctx, err);
}

/* Asks where run id runs for its state, unless the handle's records are
 * kept by a reconciler; what cannot be asked is a warning. */
static void refresh(berth_backend *b, const backend_ops *ops, const char *id, berth_error **err)
{
	if (b->cached || b->passive || !ops->refresh)
		return;
	berth_error *e = NULL;
	if (ops->refresh(b, id, &e)) {
		const berth_problem *p = berth_error_get(e, 0);
		berth_problem_add(err, BERTH_EIO, BERTH_WARNING, NULL,
				  "the state of run \"%s\" is the last one recorded: %s", id,
				  p ? p->message : "it cannot be asked");
	}
	berth_error_free(e);
}

int berth_backend_get(berth_backend *b, const char *id, berth_run_info **out, berth_error **err)
{
	int rc = record_get(b->st, id, out, err);
	if (rc || berth_state_final((*out)->state))
		return rc;
	const backend_ops *ops = backend_kind((*out)->backend);
	if (!ops || !ops->refresh || b->cached || b->passive || !backend_state(b, ops))
		return rc;
	berth_run_info_free(*out);
	refresh(b, ops, id, err);
	return record_get(b->st, id, out, err);
}

int berth_backend_list(berth_backend *b, const berth_run_filter *f, berth_run_info ***out,
		       size_t *n, berth_error **err)
{
	static const berth_run_filter all = BERTH_RUN_FILTER_ALL;
	if (!f)
		f = &all;
	/* the unfinished runs of kinds whose records can be behind: asked first
	 * (warnings for what cannot be) */
	for (size_t i = 0; !b->cached && !b->passive && backend_kind_at(i); i++) {
		const backend_ops *k = backend_kind_at(i);
		if (k->refresh && backend_state(b, k))
			k->reconcile(b, err);
	}
	return berth_run_page(b, &f->project, f->project ? 1 : 0, f->state, f->selector, 0,
			      f->limit, out, n, NULL, err);
}

int berth_backend_wait(berth_backend *b, const char *id, int64_t timeout_ms, berth_run_info **out,
		       berth_error **err)
{
	if (out)
		*out = NULL;
	const backend_ops *ops;
	int rc = ops_of(b, id, &ops, err);
	if (!rc)
		rc = ops->wait(b, id, timeout_ms, err);
	/* the record the kind was told with the end is the stored one */
	berth_run_info *end = !rc && ops->take_end ? ops->take_end(b, id) : NULL;
#ifdef BERTH_FAULT_INJECTION
	/* tests: every such record is checked against the store's (unless a
	 * test counts the store's connections) */
	if (end && !getenv("BERTH_TEST_STORE_OPEN_LOG") && record_same_as_stored(b->st, end, err)) {
		berth_run_info_free(end);
		return -BERTH_EINTERNAL;
	}
#endif
	if (end && out)
		*out = end;
	else
		berth_run_info_free(end);
	if (!rc && out && !end)
		rc = record_get(b->st, id, out, err);
	return rc;
}

int backend_forget(berth_backend *b, const char *id, berth_error **err)
{
	const backend_ops *ops;
	int rc = ops_of(b, id, &ops, err);
	return rc || !ops->forget ? rc : ops->forget(b, id, err);
}

int backend_dry_run(berth_backend *b, const berth_run *run, berth_buf *report, berth_error **err)
{
	if (b->ops->dry_run)
		return b->ops->dry_run(b, run, report, err);
	const backend_ops *k = NULL;
	for (size_t i = 0; !k && backend_kind_at(i); i++)
		k = backend_kind_at(i)->dry_run ? backend_kind_at(i) : NULL;
	return berth_fail(err, BERTH_EARG, "a server-side dry run needs the %s backend (--backend %s)",
			  k ? k->kind : "?", k ? k->kind : "?");
}

int berth_run_page(berth_backend *b, const char *const *projects, size_t n, int state,
		   const char *selector, int64_t after, int64_t limit, berth_run_info ***out,
		   size_t *count, int64_t *next, berth_error **err)
{
	*out = NULL;
	*count = 0;
	if (next)
		*next = 0;
	label_selector labels;
	int rc = selector_parse(selector, &labels, err);
	store_query q = {.projects = projects, .nprojects = n, .state = state, .after = after,
			 .limit = limit > 0 ? limit + 1 : 0, .labels = &labels};
	store_run **list;
	size_t cnt;
	if (!rc)
		rc = store_run_query(b->st, &q, &list, &cnt, err);
	selector_release(&labels);
	if (rc)
		return rc;
	/* one more than asked tells whether there is a next page */
	size_t keep = limit > 0 && cnt > (size_t)limit ? (size_t)limit : cnt;
	if (next && keep < cnt)
		*next = list[keep - 1]->seq;
	berth_run_info **infos = berth_calloc(keep ? keep : 1, sizeof(*infos));
	for (size_t i = 0; infos && i < keep; i++)
		if (!(infos[i] = record_info_take(list[i]))) {
			berth_run_info_list_free(infos, i);
			infos = NULL;
		}
	store_run_list_free(list, cnt);
	if (!infos)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	*out = infos;
	*count = keep;
	return 0;
}

int berth_backend_set_policy(berth_backend *b, const berth_policy *policy, berth_error **err)
{
	if (!policy)
		return berth_fail(err, BERTH_EARG, "no policy");
	const berth_policy *was = b->policy;
	b->policy = policy;
	for (size_t i = 0; backend_kind_at(i); i++) {
		const backend_ops *k = backend_kind_at(i);
		int rc = k->policy_changed && backend_state(b, k) ? k->policy_changed(b, err) : 0;
		if (rc) {
			b->policy = was;
			if (k->policy_changed)
				k->policy_changed(b, NULL);
			return rc;
		}
	}
	return 0;
}

const berth_policy *berth_backend_policy(const berth_backend *b)
{
	return b->policy;
}

int berth_run_version(berth_backend *b, int64_t *rv, berth_error **err)
{
	return store_version(b->st, rv, err);
}

int berth_run_changes_since(berth_backend *b, const char *const *projects, size_t n,
			    int64_t since, int64_t limit, berth_run_changes *out, berth_error **err)
{
	memset(out, 0, sizeof(*out));
	store_run **list;
	size_t cnt;
	int rc = store_run_changes(b->st, projects, n, since, limit, &list, &cnt, &out->deleted,
				   &out->ndeleted, &out->rv, err);
	if (rc)
		return rc;
	out->runs = berth_calloc(cnt ? cnt : 1, sizeof(*out->runs));
	for (size_t i = 0; out->runs && i < cnt; i++)
		if (!(out->runs[i] = record_info_take(list[i]))) {
			berth_run_info_list_free(out->runs, i);
			out->runs = NULL;
		}
	store_run_list_free(list, cnt);
	if (!out->runs) {
		berth_run_changes_free(out);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	out->n = cnt;
	return 0;
}

void berth_run_changes_free(berth_run_changes *c)
{
	if (c->runs)
		berth_run_info_list_free(c->runs, c->n);
	for (size_t i = 0; i < c->ndeleted; i++)
		free(c->deleted[i]);
	free(c->deleted);
	memset(c, 0, sizeof(*c));
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
	plan_usage_of(out, sum[0], sum[1], sum[2], sum[3]);
	return 0;
}


int berth_backend_quota(berth_backend *b, const char *project, berth_quota_state *out,
			berth_error **err)
{
	memset(out, 0, sizeof(*out));
	int64_t sum[4];
	int rc = store_usage(b->st, project, sum, err);
	if (!rc)
		rc = store_quota_waiting(b->st, project, &out->waiting, err);
	if (rc)
		return rc;
	const berth_quota *q = berth_policy_quota(b->policy, project);
	snprintf(out->quota_of, sizeof(out->quota_of), "%s", q ? q->project.s : "");
	static const char *const names[4] = {"cpu", "mem", "gpu", "runs"};
	const berth_qty *lim[3] = {q ? &q->cpu : NULL, q ? &q->mem : NULL, q ? &q->gpu : NULL};
	int64_t quota[4] = {0};
	bool set[4] = {false};
	for (int i = 0; i < 3; i++)
		if (lim[i] && lim[i]->set) {
			set[i] = true;
			quota[i] = i == 0 ? berth_quantity_milli(&lim[i]->q) : berth_quantity_value(&lim[i]->q);
		}
	if (q && q->runs.set) {
		set[3] = true;
		quota[3] = q->runs.v;
	}
	int64_t free_[4];
	for (int i = 0; i < 4; i++)
		free_[i] = quota[i] > sum[i] ? quota[i] - sum[i] : 0;
	berth_usage u, f;
	plan_usage_of(&u, sum[0], sum[1], sum[2], sum[3]);
	plan_usage_of(&f, free_[0], free_[1], free_[2], free_[3]);
	const berth_quantity *uq[3] = {&u.cpu, &u.mem, &u.gpu}, *fq[3] = {&f.cpu, &f.mem, &f.gpu};
	for (int i = 0; i < 4; i++) {
		berth_quota_use *r = &out->res[i];
		r->resource = names[i];
		r->limited = set[i];
		double scale = i == 0 ? 1000.0 : 1.0;
		r->used_value = (double)sum[i] / scale;
		r->quota_value = (double)quota[i] / scale;
		if (i < 3)
			berth_quantity_format(uq[i], r->used, sizeof(r->used));
		else
			snprintf(r->used, sizeof(r->used), "%lld", (long long)sum[i]);
		if (!set[i])
			continue;
		if (i < 3) {
			/* the quota as the policy writes it; free in the used one's form */
			berth_quantity_format(&lim[i]->q, r->quota, sizeof(r->quota));
			berth_quantity_format(fq[i], r->free, sizeof(r->free));
		} else {
			snprintf(r->quota, sizeof(r->quota), "%lld", (long long)quota[i]);
			snprintf(r->free, sizeof(r->free), "%lld", (long long)free_[i]);
		}
	}
	return 0;
}

/* A label value of the Prometheus text format: \\, \" and \\n escaped. */
static void label_value(berth_buf *b, const char *v)
{
	for (; *v; v++)
		if (*v == '\\' || *v == '"')
			berth_buf_printf(b, "\\%c", *v);
		else if (*v == '\n')
			berth_buf_puts(b, "\\n");
		else
			berth_buf_append(b, v, 1);
}

int berth_backend_usage_metrics(berth_backend *b, const char *const *projects, size_t np, bool all,
				char **out, berth_error **err)
{
	*out = NULL;
	store_sample_of *list = NULL;
	size_t n = 0;
	/* no project: no run to read (an anonymous scrape costs no read of the samples) */
	int rc = all || np ? store_sample_latest(b->st, &list, &n, err) : 0;
	if (rc)
		return rc;
	static const struct {
		const char *name, *help;
	} m[] = {
		{"berth_run_cpu_cores", "CPU a Running run's worker used over its last sample's interval, in cores."},
		{"berth_run_memory_bytes", "Memory a Running run's worker had in use at its last sample."},
		{"berth_run_gpu_utilization_percent", "The mean utilization of a Running run's worker's GPUs at its last sample."},
		{"berth_run_gpu_memory_bytes", "GPU memory a Running run's worker had in use at its last sample."},
	};
	berth_buf o = BERTH_BUF_INIT;
	for (size_t k = 0; k < BERTH_ARRAY_SIZE(m); k++) {
		berth_buf_printf(&o, "# HELP %s %s\n# TYPE %s gauge\n", m[k].name, m[k].help, m[k].name);
		for (size_t i = 0; i < n; i++) {
			const store_sample *x = &list[i].x;
			bool seen = all;
			for (size_t j = 0; !seen && j < np; j++)
				seen = list[i].project && !strcmp(list[i].project, projects[j]);
			if (!seen || (k >= 2 && x->gpu_util < 0))
				continue;
			berth_buf_printf(&o, "%s{project=\"", m[k].name);
			label_value(&o, list[i].project);
			berth_buf_puts(&o, "\",run=\"");
			label_value(&o, list[i].id);
			berth_buf_printf(&o, "\",rank=\"%lld\"} ", (long long)x->rank);
			if (k == 0)
				berth_buf_printf(&o, "%.3f\n", (double)x->cpu_milli / 1000.0);
			else
				berth_buf_printf(&o, "%lld\n", (long long)(k == 1 ? x->mem : k == 2 ? x->gpu_util
											 : x->gpu_mem));
		}
	}
	store_sample_of_free(list, n);
	if (o.failed) {
		berth_buf_release(&o);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	*out = berth_buf_detach(&o);
	return 0;
}

int berth_backend_quota_metrics(berth_backend *b, char **out, berth_error **err)
{
	*out = NULL;
	store_project *list = NULL;
	size_t n = 0;
	int rc = store_project_list(b->st, NULL, 0, true, &list, &n, err);
	if (rc)
		return rc;
	berth_buf used = BERTH_BUF_INIT, lim = BERTH_BUF_INIT;
	berth_buf_puts(&used, "# HELP berth_quota_used What a project's admitted runs hold of its quota "
		       "(cpu in cores, mem in bytes, gpu, runs).\n# TYPE berth_quota_used gauge\n");
	berth_buf_puts(&lim, "# HELP berth_quota_limit A project's quota (cpu in cores, mem in bytes, "
		       "gpu, runs).\n# TYPE berth_quota_limit gauge\n");
	for (size_t i = 0; i < n && !rc; i++) {
		berth_quota_state q;
		if (!berth_policy_quota(b->policy, list[i].name))
			continue;
		if ((rc = berth_backend_quota(b, list[i].name, &q, err)))
			break;
		for (int k = 0; k < 4; k++) {
			if (!q.res[k].limited)
				continue;
			/* a project name is [a-z0-9-]: nothing to escape in a label */
			berth_buf_printf(&used, "berth_quota_used{project=\"%s\",resource=\"%s\"} %.15g\n",
					 list[i].name, q.res[k].resource, q.res[k].used_value);
			berth_buf_printf(&lim, "berth_quota_limit{project=\"%s\",resource=\"%s\"} %.15g\n",
					 list[i].name, q.res[k].resource, q.res[k].quota_value);
		}
	}
	store_project_list_free(list, n);
	if (!rc) {
		berth_buf_append(&used, lim.data ? lim.data : "", lim.len);
		if (used.failed)
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
		else
			*out = berth_buf_detach(&used);
	}
	berth_buf_release(&used);
	berth_buf_release(&lim);
	return rc;
}
