/*
 * project.c - projects, registered functions, run events, deleting and
 * paging runs (berth/project.h), over the backend's store.
 */
#include <stdio.h>
#include <string.h>

#include "backend/record.h"
#include "backend/runtime.h"
#include "berth/project.h"
#include "base/internal.h"
#include "base/names.h"
#include "render/emit.h"
#include "service/output.h"
#include "spec/yaml.h"

/* ---- projects ------------------------------------------------------------------------- */

int berth_project_check(const char *name, berth_error **err)
{
	const char *why = berth_check_dns_label(name);
	return why ? berth_fail(err, BERTH_EINVALID, "project name \"%s\" %s", name, why) : 0;
}

int berth_project_create(berth_backend *b, const char *name, berth_error **err)
{
	int rc = berth_project_check(name, err);
	if (rc)
		return rc;
	rc = store_project_add(b->st, name, err);
	if (rc == 0)
		return berth_fail(err, BERTH_ECONFLICT, "project \"%s\" exists already", name);
	return rc < 0 ? rc : 0;
}

int berth_project_list(berth_backend *b, const char *const *only, size_t n, bool all,
		       berth_format fmt, char **out, size_t *len, berth_error **err)
{
	*out = NULL;
	*len = 0;
	store_project *list;
	size_t cnt;
	int rc = store_project_list(b->st, only, n, all, &list, &cnt, err);
	if (rc)
		return rc;
	obuild ob = {.arena = berth_arena_new()};
	onode *seq = ob.arena ? o_root(&ob, O_SEQ) : NULL;
	for (size_t i = 0; seq && i < cnt; i++) {
		onode *m = o_map(&ob, seq, NULL);
		o_str(&ob, m, "name", list[i].name);
		o_time(&ob, m, "created", list[i].created);
	}
	rc = service_output(&ob, seq, fmt, out, len, err);
	berth_arena_free(ob.arena);
	store_project_list_free(list, cnt);
	return rc;
}

/* ---- functions ------------------------------------------------------------------------ */

int berth_function_put(berth_backend *b, const char *project, const char *file, const char *text,
		       size_t len, char **name, berth_error **err)
{
	if (name)
		*name = NULL;
	const char *why = berth_check_dns_label(project);
	if (why)
		return berth_fail(err, BERTH_EINVALID, "project name \"%s\" %s", project, why);
	berth_spec_set *set = NULL;
	int rc = berth_spec_parse_function(&set, file ? file : "function.yaml", text, len, err);
	if (rc)
		return rc;
	const berth_spec *s = berth_spec_set_get(set, 0);
	berth_where w = {s->file, s->pos.line, s->pos.column, "function"};
	if (berth_spec_set_count(set) != 1)
		rc = berth_fail(err, BERTH_EINVALID, "a function is one document; this text has %zu",
				berth_spec_set_count(set));
	else if (s->function.ref.s) {
		w.line = s->function.ref.pos.line;
		w.column = s->function.ref.pos.column;
		rc = berth_problem_add(err, BERTH_EINVALID, BERTH_ERROR, &w,
				       "a registered function is written inline (name, image, command, "
				       "...), not as the name \"%s\"", s->function.ref.s);
	} else if (!s->function.name.s)
		rc = berth_problem_add(err, BERTH_EMISSING, BERTH_ERROR, &w,
				       "a registered function needs function.name");
	else if (s->project.s && strcmp(s->project.s, project)) {
		w = (berth_where){s->file, s->project.pos.line, s->project.pos.column, "project"};
		rc = berth_problem_add(err, BERTH_EINVALID, BERTH_ERROR, &w,
				       "\"%s\" is not the project of this request (\"%s\")",
				       s->project.s, project);
	}
	if (!rc) {
		/* the same text must plan: a function that no run could use is refused now,
		 * as the function layer of a run that names it and sets nothing else, so
		 * its values are the function's in what is said of them */
		berth_run *run = NULL;
		berth_spec bare;
		memset(&bare, 0, sizeof(bare));
		bare.file = s->file;
		bare.pos = s->pos;
		bare.project = s->project;
		bare.function.ref = s->function.name;
		berth_run_opts ro = {.run_id = "check", .template = true, .function = s};
		rc = berth_run_plan(&run, &bare, b->policy, &ro, err);
		berth_run_free(run);
	}
	char *copy = NULL;
	if (!rc) {
		if (!(copy = berth_malloc(len + 1)))
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
		else {
			memcpy(copy, text, len);
			copy[len] = 0;
			/* 1: new, 0: it replaced one */
			rc = store_function_put(b->st, project, s->function.name.s, copy, err);
		}
		if (rc >= 0) {
			store_project_add(b->st, project, NULL);
			if (name && !(*name = berth_strdup(s->function.name.s)))
				rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
		}
	}
	free(copy);
	berth_spec_set_free(set);
	return rc;
}

/* A function as a map: its columns, and its spec also as data ("fields"),
 * for clients that read JSON only (the Python SDK has no YAML parser). */
static void function_node(obuild *b, onode *seq, const store_function *f)
{
	onode *m = o_map(b, seq, NULL);
	if (!m)
		return;
	o_str(b, m, "name", f->name);
	o_str(b, m, "project", f->project);
	o_str(b, m, "spec", f->spec);
	o_time(b, m, "created", f->created);
	o_time(b, m, "updated", f->updated);
	berth_yaml_doc *docs;
	size_t ndocs;
	berth_error *e = NULL;
	if (!berth_yaml_parse(b->arena, "spec", f->spec, strlen(f->spec), &docs, &ndocs, &e) &&
	    ndocs && docs[0].root)
		o_copy_typed(b, m, "fields", docs[0].root);
	berth_error_free(e);
}

/* functions (n of them) as a list, or the first alone */
static int functions_output(const store_function *f, size_t n, bool list, berth_format fmt,
			    char **out, size_t *len, berth_error **err)
{
	obuild ob = {.arena = berth_arena_new()};
	onode *seq = ob.arena ? o_root(&ob, O_SEQ) : NULL;
	for (size_t i = 0; seq && i < n; i++)
		function_node(&ob, seq, &f[i]);
	int rc = service_output(&ob, list || !seq ? seq : seq->first, fmt, out, len, err);
	berth_arena_free(ob.arena);
	return rc;
}

int berth_function_get(berth_backend *b, const char *project, const char *name, berth_format fmt,
		       char **out, size_t *len, berth_error **err)
{
	*out = NULL;
	*len = 0;
	store_function *f = NULL;
	int rc = store_function_get(b->st, project, name, &f, err);
	if (rc)
		return rc;
	if (!f) {
		char what[300]; /* the message as it was: cut at 300 bytes */
		snprintf(what, sizeof(what), "no function \"%s\" in project \"%s\"", name, project);
		return berth_fail(err, BERTH_ENOTFOUND, "%s", what);
	}
	rc = functions_output(f, 1, false, fmt, out, len, err);
	store_function_free(f);
	return rc;
}

int berth_function_list(berth_backend *b, const char *project, berth_format fmt, char **out,
			size_t *len, berth_error **err)
{
	*out = NULL;
	*len = 0;
	store_function *list;
	size_t n;
	int rc = store_function_list(b->st, project, &list, &n, err);
	if (rc)
		return rc;
	rc = functions_output(list, n, true, fmt, out, len, err);
	store_function_list_free(list, n);
	return rc;
}

int berth_function_delete(berth_backend *b, const char *project, const char *name,
			  berth_error **err)
{
	int rc = store_function_delete(b->st, project, name, err);
	if (rc == 0)
		return berth_fail(err, BERTH_ENOTFOUND, "no function \"%s\" in project \"%s\"", name,
				  project);
	return rc < 0 ? rc : 0;
}

/* ---- runs ---------------------------------------------------------------------------- */

int berth_run_events(berth_backend *b, const char *id, berth_format fmt, char **out, size_t *len,
		     berth_error **err)
{
	store_run *r = NULL;
	int rc = store_run_get(b->st, id, &r, err);
	store_run_free(r);
	if (rc)
		return rc;
	store_event_row *list;
	size_t n;
	if ((rc = store_event_list(b->st, id, &list, &n, err)))
		return rc;
	obuild ob = {.arena = berth_arena_new()};
	onode *seq = ob.arena ? o_root(&ob, O_SEQ) : NULL;
	for (size_t i = 0; seq && i < n; i++) {
		onode *m = o_map(&ob, seq, NULL);
		o_time(&ob, m, "time", list[i].time);
		if (list[i].kind)
			o_str(&ob, m, "kind", list[i].kind);
		if (list[i].message)
			o_str(&ob, m, "message", list[i].message);
	}
	rc = service_output(&ob, seq, fmt, out, len, err);
	berth_arena_free(ob.arena);
	store_event_list_free(list, n);
	return rc;
}

int berth_run_usage(berth_backend *b, const char *id, int64_t after_ms, berth_format fmt, char **out,
		    size_t *len, berth_error **err)
{
	store_run *r = NULL;
	int rc = store_run_get(b->st, id, &r, err);
	store_run_free(r);
	if (rc)
		return rc;
	store_sample *list;
	size_t n;
	/* a page: a run of 1,000 workers keeps 720,000 samples (120 MB of JSON) */
	if ((rc = store_sample_list(b->st, id, after_ms, BERTH_USAGE_PAGE, &list, &n, err)))
		return rc;
	obuild ob = {.arena = berth_arena_new()};
	onode *seq = ob.arena ? o_root(&ob, O_SEQ) : NULL;
	for (size_t i = 0; seq && i < n; i++) {
		const store_sample *x = &list[i];
		onode *m = o_map(&ob, seq, NULL);
		o_time(&ob, m, "time", x->t);
		o_int(&ob, m, "t", x->t);
		o_int(&ob, m, "rank", x->rank);
		/* exact numbers, and the quantities' canonical form */
		char q[48];
		berth_format_cpu(q, sizeof(q), x->cpu_milli);
		o_strf(&ob, m, "cpu", "%s", q); /* o_str keeps the pointer: a copy */
		o_int(&ob, m, "cpu_milli", x->cpu_milli);
		berth_format_bytes(q, sizeof(q), x->mem);
		o_strf(&ob, m, "mem", "%s", q);
		o_int(&ob, m, "mem_bytes", x->mem);
		if (x->gpu_util >= 0) {
			o_int(&ob, m, "gpu_util", x->gpu_util);
			o_int(&ob, m, "gpu_mem_bytes", x->gpu_mem);
		}
	}
	rc = service_output(&ob, seq, fmt, out, len, err);
	berth_arena_free(ob.arena);
	free(list);
	return rc;
}

int berth_run_delete(berth_backend *b, const char *id, berth_error **err)
{
	/* what a finished run left outside the store (its Job and pods on a
	 * cluster, its log) goes first, through its kind: outside the
	 * transaction, as a cluster may take its time */
	store_run *r = NULL;
	int rc = store_run_get(b->st, id, &r, err);
	if (!rc && berth_state_final(r->info.state))
		rc = backend_forget(b, id, err);
	store_run_free(r);
	r = NULL;
	if (rc)
		return rc;
	if (store_begin(b->st, err))
		return -BERTH_EIO;
	rc = store_run_get(b->st, id, &r, err);
	if (!rc && !berth_state_final(r->info.state))
		rc = berth_fail(err, BERTH_ECONFLICT, "run \"%s\" is %s: stop it before deleting it", id,
				berth_state_name(r->info.state));
	if (!rc && store_run_delete(b->st, id, err) < 0)
		rc = -BERTH_EIO;
	if (!rc)
		rc = store_commit(b->st, err);
	if (rc) {
		store_rollback(b->st);
		store_run_free(r);
		return rc;
	}
	store_run_free(r);
	return 0;
}

int berth_run_counts(berth_backend *b, int64_t counts[5], berth_error **err)
{
	int rc = store_run_count_by_state(b->st, counts, 5, err);
	return rc < 0 ? rc : 0;
}
