/*
 * projects.c - projects, the uid each project's runs get, and the functions
 * registered in a project (see store.h).
 */
#include <stdio.h>
#include <string.h>

#include "store/store_internal.h"

/* ---- projects -------------------------------------------------------------------- */

int store_project_add(store *s, const char *name, berth_error **err)
{
	/* projects are never removed: one this handle recorded exists (a write saved
	 * on every run of a busy project) */
	if (s->project && !strcmp(s->project, name))
		return 0;
	store_arg args[] = {STORE_S(name), STORE_I(store_now_ms())};
	int rc = store_exec_args(s, "INSERT INTO projects (name, created) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
				 args, 2, err);
	if (rc >= 0 && !s->ops->in_transaction(s->db)) { /* committed: not in a transaction */
		free(s->project);
		s->project = berth_strdup(name);
	}
	return rc;
}

int store_project_uid(store *s, const char *project, int64_t min, int64_t max, int64_t *uid,
		      berth_error **err)
{
	store_arg args[] = {STORE_S(project), STORE_I(min), STORE_I(max)};
	/* the project's uid, read with no write lock: what every submission but
	 * a project's first finds */
	int rc = store_select_int(s, "SELECT uid FROM project_uids WHERE project = ?1", args, 1, uid, err);
	if (rc < 0 || (*uid >= min && *uid <= max && *uid))
		return rc < 0 ? rc : 0;
	/* one statement each, so that two processes never hand out the same uid:
	 * an id the range no longer holds (the admin moved it) is given anew */
	rc = store_exec_args(s,
			     "DELETE FROM project_uids WHERE project = ?1 AND uid NOT BETWEEN ?2 AND ?3",
			     args, 3, err);
	if (rc >= 0)
		rc = store_exec_args(s,
				     "INSERT INTO project_uids (project, uid)"
				     " SELECT ?1, coalesce(max(uid) + 1, ?2) FROM project_uids WHERE uid BETWEEN ?2 AND ?3"
				     " HAVING coalesce(max(uid) + 1, ?2) <= ?3 ON CONFLICT DO NOTHING",
				     args, 3, err);
	if (rc >= 0)
		rc = store_select_int(s, "SELECT uid FROM project_uids WHERE project = ?1", args, 1, uid, err);
	if (rc < 0)
		return rc;
	if (*uid < min || *uid > max)
		return berth_fail(err, BERTH_EPOLICY,
				  "no uid left for project \"%s\": every uid of local.uid_range %lld-%lld is "
				  "given to a project", project, (long long)min, (long long)max);
	return 0;
}

void store_project_list_free(store_project *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(list[i].name);
	free(list);
}

int store_project_list(store *s, const char *const *names, size_t n, bool all,
		       store_project **out, size_t *count, berth_error **err)
{
	*out = NULL;
	*count = 0;
	/* a token's projects are few: one IN list */
	berth_buf sql = BERTH_BUF_INIT;
	if (all)
		berth_buf_puts(&sql, "SELECT name, created FROM projects ORDER BY name");
	else {
		berth_buf_puts(&sql, "SELECT name, created FROM projects WHERE name IN (NULL");
		for (size_t i = 0; i < n; i++)
			berth_buf_printf(&sql, ", ?%zu", i + 1);
		berth_buf_puts(&sql, ") ORDER BY name");
	}
	db_stmt *st = NULL;
	int rc = 0;
	if (sql.failed)
		rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
	else if (!(st = store_stmt_get(s, sql.data)))
		rc = store_db_fail(s, err, "preparing a statement");
	for (size_t i = 0; !rc && !all && i < n; i++)
		if (db_bind_text(st, (int)i + 1, names[i]) != 0)
			rc = store_db_fail(s, err, "binding a statement");
	berth_buf_release(&sql);
	store_project *list = NULL;
	size_t cnt = 0, cap = 0;
	int step = DB_DONE;
	while (!rc && (step = db_step(st)) == DB_ROW) {
		store_project *grown = store_grow(list, sizeof(*list), cnt, &cap);
		if (!grown) {
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
			break;
		}
		list = grown;
		store_project *p = &list[cnt++];
		*p = (store_project){.created = db_col_int(st, 1)};
		if (store_col_text(st, 0, &p->name))
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	if (!rc && step != DB_DONE)
		rc = store_db_fail(s, err, "reading projects");
	store_stmt_put(s, st);
	if (rc) {
		store_project_list_free(list, cnt);
		return rc;
	}
	*out = list;
	*count = cnt;
	return 0;
}

/* ---- functions ------------------------------------------------------------------- */

#define FUNCTION_COLS "SELECT project, name, spec, created, updated FROM functions"

/* The functions of a statement of FUNCTION_COLS (bound by the caller), in its order. */
static int read_functions(store *s, db_stmt *st, store_function **out, size_t *n,
			  berth_error **err)
{
	store_function *list = NULL;
	size_t cnt = 0, cap = 0;
	int rc = 0, step;
	while ((step = db_step(st)) == DB_ROW) {
		store_function *grown = store_grow(list, sizeof(*list), cnt, &cap);
		if (!grown) {
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
			break;
		}
		list = grown;
		store_function *f = &list[cnt++];
		*f = (store_function){.created = db_col_int(st, 3),
				      .updated = db_col_int(st, 4)};
		if (store_col_text(st, 0, &f->project) || store_col_text(st, 1, &f->name) ||
		    store_col_text(st, 2, &f->spec)) {
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
			break;
		}
	}
	if (!rc && step != DB_DONE)
		rc = store_db_fail(s, err, "reading functions");
	store_stmt_put(s, st);
	if (rc) {
		store_function_list_free(list, cnt);
		return rc;
	}
	*out = list;
	*n = cnt;
	return 0;
}

int store_function_put(store *s, const char *project, const char *name, const char *spec,
		       berth_error **err)
{
	int64_t had = 0;
	store_arg args[] = {STORE_S(project), STORE_S(name), STORE_S(spec), STORE_I(store_now_ms())};
	int rc = store_select_int(s, "SELECT EXISTS (SELECT 1 FROM functions"
				     " WHERE project = ?1 AND name = ?2)",
				  args, 2, &had, err);
	if (rc >= 0)
		rc = store_exec_args(s,
				     "INSERT INTO functions (project, name, spec, created, updated)"
				     " VALUES (?1, ?2, ?3, ?4, ?4) ON CONFLICT (project, name)"
				     " DO UPDATE SET spec = ?3, updated = ?4",
				     args, 4, err);
	return rc < 0 ? rc : !had;
}

int store_function_get(store *s, const char *project, const char *name, store_function **out,
		       berth_error **err)
{
	*out = NULL;
	db_stmt *st;
	if (!(st = store_stmt_get(s, FUNCTION_COLS " WHERE project = ?1 AND name = ?2")))
		return store_db_fail(s, err, "preparing a statement");
	db_bind_text(st, 1, project);
	db_bind_text(st, 2, name);
	store_function *list;
	size_t n;
	int rc = read_functions(s, st, &list, &n, err);
	if (rc)
		return rc;
	if (n)
		*out = list; /* the first: a project's names are unique */
	else
		free(list);
	return 0;
}

int store_function_list(store *s, const char *project, store_function **out, size_t *n,
			berth_error **err)
{
	*out = NULL;
	*n = 0;
	db_stmt *st;
	if (!(st = store_stmt_get(s, FUNCTION_COLS " WHERE project = ?1 ORDER BY name")))
		return store_db_fail(s, err, "preparing a statement");
	db_bind_text(st, 1, project);
	return read_functions(s, st, out, n, err);
}

int store_function_delete(store *s, const char *project, const char *name, berth_error **err)
{
	store_arg args[] = {STORE_S(project), STORE_S(name)};
	int rc = store_exec_args(s, "DELETE FROM functions WHERE project = ?1 AND name = ?2", args, 2,
				 err);
	return rc < 0 ? rc : rc > 0;
}

void store_function_free(store_function *f)
{
	store_function_list_free(f, f ? 1 : 0);
}

void store_function_list_free(store_function *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(list[i].project);
		free(list[i].name);
		free(list[i].spec);
	}
	free(list);
}
