/*
 * batch.c - from a spec text to submitted runs (berth/backend.h): parse
 * every document, resolve registered functions, plan each run against the
 * policy, the project's secrets and its quota, and submit all or none.
 * The CLI's `run` and the server's POST of a run are this one path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/runtime.h"
#include "plan/policy_internal.h"
#include "berth/project.h"
#include "base/internal.h"
#include "render/emit.h"
#include "spec/yaml.h"

/* What a project's active runs held when the batch was planned: the quota of a
 * request is checked against it plus the request's earlier runs, and checked
 * again at submission when it has changed since. */
typedef struct batch_usage {
	const char *project;
	berth_usage stored;
} batch_usage;

struct berth_batch {
	berth_backend *b;
	char *text;
	berth_spec_set *set;
	berth_spec *specs;          /* copies of the set's specs, with the batch's project */
	berth_spec_set **functions; /* the registered function of each run, or NULL */
	berth_run **runs;
	size_t n;
	batch_usage *usage;         /* one per project with a quota */
	size_t nusage;
	berth_batch_opts opts;      /* as planned (the strings are the caller's) */
};

void berth_batch_free(berth_batch *batch)
{
	if (!batch)
		return;
	for (size_t i = 0; i < batch->n; i++) {
		berth_run_free(batch->runs ? batch->runs[i] : NULL);
		berth_spec_set_free(batch->functions ? batch->functions[i] : NULL);
	}
	free(batch->runs);
	free(batch->functions);
	free(batch->specs);
	free(batch->usage);
	berth_spec_set_free(batch->set);
	free(batch->text);
	free(batch);
}

size_t berth_batch_count(const berth_batch *batch)
{
	return batch ? berth_spec_set_count(batch->set) : 0;
}

const char *berth_batch_project(const berth_batch *batch, size_t i)
{
	if (!batch || i >= berth_spec_set_count(batch->set))
		return NULL;
	const berth_spec *s = berth_spec_set_get(batch->set, i);
	return batch->opts.project ? batch->opts.project : s->project.s ? s->project.s : "default";
}

const berth_run *berth_batch_run(const berth_batch *batch, size_t i)
{
	return batch && i < batch->n ? batch->runs[i] : NULL;
}

/* The registered function a spec names, parsed; a problem at its position when there is none. */
static int find_function(berth_batch *batch, const berth_spec *s, const char *project,
			 berth_spec_set **out, berth_error **err)
{
	store_function *f = NULL;
	int rc = store_function_get(batch->b->st, project, s->function.ref.s, &f, err);
	if (rc)
		return rc;
	if (!f) {
		berth_where w = {s->file, s->function.ref.pos.line, s->function.ref.pos.column,
				 "function"};
		berth_problem_add(err, BERTH_EINVALID, BERTH_ERROR, &w,
				  "no function \"%s\" is registered in project \"%s\"",
				  s->function.ref.s, project);
		return -BERTH_EINVALID;
	}
	char name[300];
	snprintf(name, sizeof(name), "function %s", s->function.ref.s);
	berth_error *ferr = NULL;
	rc = berth_spec_parse_function(out, name, f->spec, strlen(f->spec), &ferr);
	store_function_free(f);
	if (rc) {
		/* it was valid when registered: this berth reads it differently (a cap
		 * on input it did not have); the run is refused where it names it */
		char why[512] = "";
		const berth_problem *p = berth_error_get(ferr, 0);
		if (p)
			berth_problem_format(p, why, sizeof(why));
		berth_where w = {s->file, s->function.ref.pos.line, s->function.ref.pos.column,
				 "function"};
		berth_problem_add(err, BERTH_EINVALID, BERTH_ERROR, &w,
				  "function \"%s\" of project \"%s\" was registered by an older berth and "
				  "no longer reads (%s): register it again", s->function.ref.s, project, why);
		berth_error_free(ferr);
		return -BERTH_EINVALID;
	}
	berth_error_free(ferr);
	return 0;
}

/* What project holds for the quota of run i: its active runs (read once per
 * batch) and the runs of this batch before i. */
static int batch_usage_of(berth_batch *batch, const char *project, size_t i, berth_usage *out,
			  berth_error **err)
{
	batch_usage *u = NULL;
	for (size_t k = 0; k < batch->nusage && !u; k++)
		if (!strcmp(batch->usage[k].project, project))
			u = &batch->usage[k];
	if (!u) {
		batch_usage *grown = berth_realloc(batch->usage, (batch->nusage + 1) * sizeof(*grown));
		if (!grown)
			return berth_fail(err, BERTH_ENOMEM, "out of memory");
		batch->usage = grown;
		u = &grown[batch->nusage];
		u->project = project;
		int rc = berth_backend_usage(batch->b, project, &u->stored, err);
		if (rc)
			return rc;
		batch->nusage++;
	}
	*out = u->stored;
	for (size_t k = 0; k < i; k++)
		if (batch->runs[k] && !strcmp(batch->specs[k].project.s ? batch->specs[k].project.s
						: "default", project))
			berth_usage_add(out, batch->runs[k]);
	out->in_request = out->runs - u->stored.runs;
	return 0;
}

static int plan_one(berth_batch *batch, size_t i, const berth_batch_opts *o, berth_error **err)
{
	berth_spec *s = &batch->specs[i];
	if (o->project) {
		if (s->project.s && strcmp(s->project.s, o->project)) {
			berth_where w = {s->file, s->project.pos.line, s->project.pos.column,
					 "project"};
			berth_problem_add(err, BERTH_EINVALID, BERTH_ERROR, &w,
					  "\"%s\" is not the project of this request (\"%s\")",
					  s->project.s, o->project);
			return -BERTH_EINVALID;
		}
		s->project.s = o->project;
	}
	const char *project = s->project.s ? s->project.s : "default";
	berth_run_opts ro;
	memset(&ro, 0, sizeof(ro));
	char id[64];
	if (o->run_id) {
		berth_run_id_nth(id, sizeof(id), o->run_id, i);
		ro.run_id = id;
	}
	if (s->function.ref.s) {
		int rc = find_function(batch, s, project, &batch->functions[i], err);
		if (rc)
			return rc;
		ro.function = berth_spec_set_get(batch->functions[i], 0);
	}
	char **names = NULL;
	size_t nnames = 0;
	berth_usage usage;
	int rc = berth_backend_secret_names(batch->b, project, &names, &nnames, err);
	/* what the project holds, and the earlier runs of this request hold: only
	 * when a quota needs it */
	bool quota = berth_policy_quota(batch->b->policy, project) != NULL;
	if (!rc && quota)
		rc = batch_usage_of(batch, project, i, &usage, err);
	if (!rc) {
		ro.secrets = (const char *const *)names;
		ro.nsecrets = nnames;
		ro.check_secrets = true;
		ro.usage = quota ? &usage : NULL;
		ro.quota_refuses = !batch->b->ops->queues_quota;
		rc = berth_run_plan(&batch->runs[i], s, batch->b->policy, &ro, err);
	}
	if (batch->runs[i])
		batch->runs[i]->submitted_by = o->submitted_by;
	/* what the backend that will run it needs: every problem, also of a run
	 * the policy refused */
	if (batch->runs[i] && batch->b->ops->needs &&
	    rc != -BERTH_ENOMEM && rc != -BERTH_EIO && rc != -BERTH_EARG) {
		int r2 = batch->b->ops->needs(batch->b, batch->runs[i], err);
		rc = rc ? rc : r2;
	}
	for (size_t k = 0; k < nnames; k++)
		free(names[k]);
	free(names);
	return rc;
}

int berth_batch_parse(berth_batch **out, const char *text, size_t len, const berth_batch_opts *opts,
		      berth_error **err)
{
	*out = NULL;
	berth_batch *batch = berth_calloc(1, sizeof(*batch));
	if (!batch || !(batch->text = berth_malloc(len + 1))) {
		free(batch);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	memcpy(batch->text, text, len);
	batch->text[len] = 0;
	if (opts)
		batch->opts = *opts;
	int rc = berth_spec_parse(&batch->set, opts && opts->file ? opts->file : "spec.yaml",
				  batch->text, len, err);
	if (rc) {
		berth_batch_free(batch);
		return rc;
	}
	*out = batch;
	return 0;
}

int berth_batch_plan_parsed(berth_batch *batch, berth_backend *b, const berth_batch_opts *opts,
			    berth_error **err)
{
	berth_batch_opts none = {0};
	const berth_batch_opts *o = opts ? opts : &none;
	if (batch->runs)
		return berth_fail(err, BERTH_EARG, "this batch is planned already");
	batch->b = b;
	batch->opts = *o;
	/* the request's project (a URL's) becomes every run's: a name, as a spec's is */
	if (o->project && berth_project_check(o->project, err))
		return -BERTH_EINVALID;
	size_t n = berth_spec_set_count(batch->set);
	batch->specs = berth_calloc(n, sizeof(*batch->specs));
	batch->functions = berth_calloc(n, sizeof(*batch->functions));
	batch->runs = berth_calloc(n, sizeof(*batch->runs));
	if (!batch->specs || !batch->functions || !batch->runs)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	batch->n = n;
	int worst = 0;
	for (size_t i = 0; i < n; i++) {
		batch->specs[i] = *berth_spec_set_get(batch->set, i);
		int rc = plan_one(batch, i, o, err);
		if (rc && (!worst || rc == -BERTH_ENOMEM || rc == -BERTH_EIO))
			worst = rc;
	}
	return worst;
}

int berth_batch_plan(berth_batch **out, berth_backend *b, const char *text, size_t len,
		     const berth_batch_opts *opts, berth_error **err)
{
	int rc = berth_batch_parse(out, text, len, opts, err);
	if (!rc && (rc = berth_batch_plan_parsed(*out, b, opts, err))) {
		berth_batch_free(*out);
		*out = NULL;
	}
	return rc;
}

/* 1 when a project's usage changed since the batch was planned (another request
 * was submitted in between): its quota is checked again. */
static int usage_changed(berth_batch *batch, berth_error **err)
{
	for (size_t k = 0; k < batch->nusage; k++) {
		berth_usage now;
		int rc = berth_backend_usage(batch->b, batch->usage[k].project, &now, err);
		if (rc)
			return rc;
		const berth_usage *was = &batch->usage[k].stored;
		if (now.runs != was->runs || berth_quantity_cmp(&now.cpu, &was->cpu) ||
		    berth_quantity_cmp(&now.mem, &was->mem) || berth_quantity_cmp(&now.gpu, &was->gpu))
			return 1;
	}
	return 0;
}

/* The batch planned again, the same way, against what its projects hold now. */
static int replan(berth_batch *batch, berth_error **err)
{
	for (size_t i = 0; i < batch->n; i++) {
		berth_run_free(batch->runs[i]);
		batch->runs[i] = NULL;
		berth_spec_set_free(batch->functions[i]);
		batch->functions[i] = NULL;
	}
	free(batch->specs);
	free(batch->functions);
	free(batch->runs);
	free(batch->usage);
	batch->specs = NULL;
	batch->functions = NULL;
	batch->runs = NULL;
	batch->usage = NULL;
	batch->n = batch->nusage = 0;
	berth_batch_opts o = batch->opts;
	/* its warnings were given at the first plan: only what refuses it now counts */
	berth_error *again = NULL;
	int rc = berth_batch_plan_parsed(batch, batch->b, &o, &again);
	if (rc)
		berth_error_move(err, again);
	else
		berth_error_free(again);
	return rc;
}

/* submit_check: the usage the batch was planned against is still what is stored */
static int usage_same(void *ctx, berth_error **err)
{
#ifdef BERTH_FAULT_INJECTION
	/* tests: other writers change the usage at every try */
	if (getenv("BERTH_TEST_USAGE_CHANGES"))
		return 1;
#endif
	return usage_changed(ctx, err);
}

int berth_batch_submit(berth_batch *batch, berth_run_info ***out, size_t *n, berth_error **err)
{
	if (out)
		*out = NULL;
	if (n)
		*n = 0;
	berth_backend *b = batch->b;
	if (!batch->runs)
		return berth_fail(err, BERTH_EARG, "this batch is not planned");
	/* the quotas hold for the whole request, against what is stored when it is
	 * stored: checked again in the transaction that stores the runs, and when
	 * another writer (a request, a berth command) changed the usage since the
	 * plan, the batch is planned again and the submission tried again */
	submit_check check = {usage_same, batch};
	int rc = usage_changed(batch, err);
	for (int attempt = 0; rc >= 0; attempt++) {
		if (rc > 0 && attempt >= 8)
			return berth_fail(err, BERTH_ECONFLICT,
					  "the usage of the projects of this request changed %d times while "
					  "it was submitted; submit it again", attempt);
		if (rc > 0 && (rc = replan(batch, err)))
			return rc;
		for (size_t i = 0; i < batch->n; i++) {
			int r = b->ops->admit(b, batch->runs[i], err);
			rc = rc ? rc : r;
		}
		if (rc)
			return rc;
		berth_run_info **infos =
			out ? berth_calloc(batch->n ? batch->n : 1, sizeof(*infos)) : NULL;
		if (out && !infos)
			return berth_fail(err, BERTH_ENOMEM, "out of memory");
		for (size_t i = 0; i < batch->n; i++)
			store_project_add(b->st, batch->runs[i]->spec.project.s, NULL);
		/* all or none: the backend stores every run in one transaction */
		rc = b->ops->submit(b, (const berth_run *const *)batch->runs, batch->n, batch->text,
				    batch->nusage ? &check : NULL, infos, err);
		if (rc) {
			berth_run_info_list_free(infos, batch->n);
			continue; /* > 0: planned against a usage that changed */
		}
		if (out) {
			*out = infos;
			*n = batch->n;
		}
		return 0;
	}
	return rc;
}

int berth_batch_dry_run(berth_batch *batch, char **report, berth_error **err)
{
	*report = NULL;
	berth_backend *b = batch->b;
	berth_buf out = BERTH_BUF_INIT;
	int rc = 0;
	for (size_t i = 0; i < batch->n && !rc; i++)
		rc = backend_dry_run(b, batch->runs[i], &out, err);
	if (!rc && out.failed)
		rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
	if (rc) {
		berth_buf_release(&out);
		return rc;
	}
	*report = out.data ? berth_buf_detach(&out) : berth_strdup("");
	return *report ? 0 : berth_fail(err, BERTH_ENOMEM, "out of memory");
}

int berth_run_manifests(berth_backend *b, const char *id, berth_format fmt, char **out,
			size_t *len, berth_error **err)
{
	*out = NULL;
	*len = 0;
	store_run *r = NULL;
	int rc = store_run_get(b->st, id, &r, err);
	if (rc)
		return rc;
	berth_batch *batch = berth_calloc(1, sizeof(*batch));
	if (!batch) {
		store_run_free(r);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	batch->b = b;
	batch->text = r->spec;
	r->spec = NULL;
	rc = berth_spec_parse(&batch->set, "spec.yaml", batch->text ? batch->text : "",
			      batch->text ? strlen(batch->text) : 0, err);
	size_t k = (size_t)r->doc;
	if (!rc && k >= berth_spec_set_count(batch->set))
		rc = berth_fail(err, BERTH_EINTERNAL, "run \"%s\" has no document %zu", id, k);
	if (!rc) {
		batch->specs = berth_calloc(1, sizeof(*batch->specs));
		batch->functions = berth_calloc(1, sizeof(*batch->functions));
		batch->runs = berth_calloc(1, sizeof(*batch->runs));
		batch->n = 1;
		if (!batch->specs || !batch->functions || !batch->runs)
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	berth_spec *s = batch->specs;
	berth_run_opts ro = {.run_id = id};
	if (!rc) {
		*s = *berth_spec_set_get(batch->set, k);
		s->project.s = r->info.project;
		if (s->function.ref.s && !(rc = find_function(batch, s, r->info.project,
							      &batch->functions[0], err)))
			ro.function = berth_spec_set_get(batch->functions[0], 0);
	}
	/* what was checked at submission (secrets, quota) is not checked again */
	if (!rc)
		rc = berth_run_plan(&batch->runs[0], s, b->policy, &ro, err);
	berth_render *rd = NULL;
	if (!rc && !(rd = berth_render_new(fmt)))
		rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
	if (!rc)
		rc = berth_render_add(rd, batch->runs[0], err);
	if (!rc)
		rc = berth_render_finish(rd, out, len, err);
	berth_render_free(rd);
	berth_batch_free(batch);
	store_run_free(r);
	return rc;
}

int berth_run_source(berth_backend *b, const char *id, char **out, size_t *len, berth_error **err)
{
	*out = NULL;
	*len = 0;
	store_run *r = NULL;
	int rc = store_run_get(b->st, id, &r, err);
	if (rc)
		return rc;
	obuild ob = {berth_arena_new(), 0};
	berth_yaml_doc *docs = NULL;
	size_t ndocs = 0;
	const char *text = r->spec ? r->spec : "";
	size_t k = (size_t)r->doc;
	if (!ob.arena)
		rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
	else if (!(rc = berth_yaml_parse(ob.arena, "spec.yaml", text, strlen(text), &docs, &ndocs, err)) &&
		 (k >= ndocs || !docs[k].root))
		rc = berth_fail(err, BERTH_EINTERNAL, "run \"%s\" has no document %zu", id, k);
	if (!rc) {
		onode *m = o_root(&ob, O_MAP);
		o_str(&ob, m, "id", id);
		o_int(&ob, m, "doc", (int64_t)k);
		o_str(&ob, m, "spec", text);
		o_copy_typed(&ob, m, "fields", docs[k].root);
		berth_buf buf = BERTH_BUF_INIT;
		if (!ob.failed)
			emit_json(&buf, m, 0, 1);
		berth_buf_puts(&buf, "\n");
		if (ob.failed || buf.failed) {
			berth_buf_release(&buf);
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
		} else {
			*len = buf.len;
			*out = berth_buf_detach(&buf);
		}
	}
	berth_arena_free(ob.arena);
	store_run_free(r);
	return rc;
}
