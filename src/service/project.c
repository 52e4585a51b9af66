/*
 * project.c - projects, registered functions, run events, deleting and
 * paging runs (berth/project.h), over the backend's store.
 */
#include <stdio.h>
#include <string.h>

#include "backend/backend_internal.h"
#include "berth/project.h"
#include "render/emit.h"
#include "base/internal.h"
#include "base/names.h"
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
	if (all)
		return store_select_format(b->st, "SELECT name, created FROM projects ORDER BY name", NULL, 0, true,
				   NULL, fmt, out, len, err);
	/* a token's projects are few: one IN list */
	berth_buf sql = BERTH_BUF_INIT;
	store_arg *args = berth_calloc(n ? n : 1, sizeof(*args));
	berth_buf_puts(&sql, "SELECT name, created FROM projects WHERE name IN (NULL");
	for (size_t i = 0; args && i < n; i++) {
		berth_buf_printf(&sql, ", ?%zu", i + 1);
		args[i] = STORE_S(only[i]);
	}
	berth_buf_puts(&sql, ") ORDER BY name");
	int rc = !args || sql.failed ? berth_fail(err, BERTH_ENOMEM, "out of memory")
				     : store_select_format(b->st, sql.data, args, n, true, NULL, fmt, out, len, err);
	berth_buf_release(&sql);
	free(args);
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
	int rc = berth_spec_parse(&set, file ? file : "function.yaml", text, len, err);
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
		/* the same text must plan: a function that no run could use is refused now */
		berth_run *run = NULL;
		berth_run_opts ro = {.run_id = "check"};
		rc = berth_run_plan(&run, s, b->policy, &ro, err);
		berth_run_free(run);
	}
	char *copy = NULL;
	if (!rc) {
		char *old = NULL;
		store_arg args[] = {STORE_S(project), STORE_S(s->function.name.s),
				    STORE_S(text), STORE_I(store_now_ms())};
		if (!(copy = berth_malloc(len + 1)))
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
		else {
			memcpy(copy, text, len);
			copy[len] = 0;
			args[2] = STORE_S(copy);
		}
		if (!rc)
			rc = store_select_text(b->st,
					       "SELECT name FROM functions WHERE project = ?1 AND name = ?2",
					       args, 2, &old, err);
		if (!rc)
			rc = store_exec(b->st,
					"INSERT INTO functions (project, name, spec, created, updated)"
					" VALUES (?1, ?2, ?3, ?4, ?4) ON CONFLICT (project, name)"
					" DO UPDATE SET spec = ?3, updated = ?4",
					args, 4, err);
		if (rc >= 0) {
			store_project_add(b->st, project, NULL);
			rc = old ? 0 : 1;
			if (name && !(*name = berth_strdup(s->function.name.s)))
				rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
		}
		free(old);
	}
	free(copy);
	berth_spec_set_free(set);
	return rc;
}

#define FUNCTION_COLS "SELECT name, project, spec, created, updated FROM functions"

/* A function's spec also as data ("fields"), for clients that read JSON only
 * (the Python SDK has no YAML parser). */
static void spec_fields(obuild *b, onode *row)
{
	onode *spec = o_get(row, "spec");
	berth_yaml_doc *docs;
	size_t ndocs;
	berth_error *e = NULL;
	if (spec && spec->s &&
	    !berth_yaml_parse(b->arena, "spec", spec->s, strlen(spec->s), &docs, &ndocs, &e) &&
	    ndocs && docs[0].root)
		o_copy_typed(b, row, "fields", docs[0].root);
	berth_error_free(e);
}

int berth_function_get(berth_backend *b, const char *project, const char *name, berth_format fmt,
		       char **out, size_t *len, berth_error **err)
{
	char what[300];
	snprintf(what, sizeof(what), "no function \"%s\" in project \"%s\"", name, project);
	store_arg args[] = {STORE_S(project), STORE_S(name)};
	return store_select_format_rows(b->st, FUNCTION_COLS " WHERE project = ?1 AND name = ?2", args,
					2, false, what, fmt, spec_fields, out, len, err);
}

int berth_function_list(berth_backend *b, const char *project, berth_format fmt, char **out,
			size_t *len, berth_error **err)
{
	store_arg arg = STORE_S(project);
	return store_select_format_rows(b->st, FUNCTION_COLS " WHERE project = ?1 ORDER BY name", &arg,
					1, true, NULL, fmt, spec_fields, out, len, err);
}

int berth_function_delete(berth_backend *b, const char *project, const char *name,
			  berth_error **err)
{
	store_arg args[] = {STORE_S(project), STORE_S(name)};
	int rc = store_exec(b->st, "DELETE FROM functions WHERE project = ?1 AND name = ?2", args, 2,
			    err);
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
	store_arg arg = STORE_S(id);
	return store_select_format(b->st, "SELECT time, kind, message FROM events WHERE run_id = ?1 ORDER BY rowid",
			   &arg, 1, true, NULL, fmt, out, len, err);
}

int berth_run_delete(berth_backend *b, const char *id, berth_error **err)
{
	/* a run on a cluster leaves its Job and pods there when it ends: they go
	 * first (outside the transaction: the cluster may take its time) */
	store_run *r = NULL;
	int rc = store_run_get(b->st, id, &r, err);
	if (!rc && berth_state_final(r->info.state) && !strcmp(r->info.backend, "kubernetes"))
		rc = kube_forget(b, id, err);
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
	store_arg arg = STORE_S(id);
	if (!rc && (store_exec(b->st, "DELETE FROM events WHERE run_id = ?1", &arg, 1, err) < 0 ||
		    store_exec(b->st, "DELETE FROM runs WHERE id = ?1", &arg, 1, err) < 0))
		rc = -BERTH_EIO;
	if (!rc)
		rc = store_commit(b->st, err);
	if (rc) {
		store_rollback(b->st);
		store_run_free(r);
		return rc;
	}
	char dir[4096];
	if (!local_path(dir, sizeof(dir), b->home, "runs/%s", id))
		local_rm_tree(dir);
	store_run_free(r);
	return 0;
}

int berth_run_page(berth_backend *b, const char *const *projects, size_t n, int state,
		   int64_t after, int64_t limit, berth_run_info ***out, size_t *count,
		   int64_t *next, berth_error **err)
{
	*out = NULL;
	*count = 0;
	if (next)
		*next = 0;
	store_query q = {.projects = projects, .nprojects = n, .state = state, .after = after,
			 .limit = limit > 0 ? limit + 1 : 0};
	store_run **list;
	size_t cnt;
	int rc = store_run_query(b->st, &q, &list, &cnt, err);
	if (rc)
		return rc;
	/* one more than asked tells whether there is a next page */
	size_t keep = limit > 0 && cnt > (size_t)limit ? (size_t)limit : cnt;
	if (next && keep < cnt)
		*next = list[keep - 1]->seq;
	berth_run_info **infos = berth_calloc(keep ? keep : 1, sizeof(*infos));
	for (size_t i = 0; infos && i < keep; i++)
		if (!(infos[i] = local_info_take(list[i]))) {
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

int berth_run_counts(berth_backend *b, int64_t counts[5], berth_error **err)
{
	memset(counts, 0, 5 * sizeof(counts[0]));
	obuild ob = {.arena = berth_arena_new()};
	if (!ob.arena)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	onode *seq = o_root(&ob, O_SEQ);
	int rc = store_select_tree(b->st, "SELECT state, COUNT(*) AS n FROM runs GROUP BY state", NULL,
				   0, &ob, seq, err);
	for (const onode *m = seq ? seq->first : NULL; rc >= 0 && m; m = m->next) {
		const onode *st = o_get(m, "state"), *cnt = o_get(m, "n");
		if (st && cnt && st->i >= 0 && st->i < 5)
			counts[st->i] = cnt->i;
	}
	berth_arena_free(ob.arena);
	return rc < 0 ? rc : 0;
}
