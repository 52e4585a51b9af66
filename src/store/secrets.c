/*
 * secrets.c - sealed secrets in the store (see store.h): the store keeps
 * values sealed by base/seal.h, never a clear one.
 */
#include <string.h>

#include "store/store_internal.h"

int store_secret_put(store *s, const char *project, const char *name, const void *sealed,
		     size_t len, berth_error **err)
{
	db_stmt *st;
	if (!(st = store_stmt_get(s, "INSERT INTO secrets (project, name, sealed, updated) VALUES (?1, ?2, ?3, ?4)"
			       " ON CONFLICT (project, name) DO UPDATE SET sealed = ?3, updated = ?4")))
		return store_db_fail(s, err, "preparing a statement");
	db_bind_text(st, 1, project);
	db_bind_text(st, 2, name);
	db_bind_blob(st, 3, sealed, len);
	db_bind_int(st, 4, store_now_ms());
	int rc = db_step(st) == DB_DONE ? 0 : store_db_fail(s, err, "storing a secret");
	store_stmt_put(s, st);
	return rc;
}

int store_secret_get(store *s, const char *project, const char *name, void **sealed,
		     size_t *len, berth_error **err)
{
	*sealed = NULL;
	*len = 0;
	db_stmt *st;
	if (!(st = store_stmt_get(s, "SELECT sealed FROM secrets WHERE project = ?1 AND name = ?2")))
		return store_db_fail(s, err, "preparing a statement");
	db_bind_text(st, 1, project);
	db_bind_text(st, 2, name);
	int rc = 0, step = db_step(st);
	if (step == DB_ROW) {
		size_t n = 0;
		const void *v = db_col_blob(st, 0, &n);
		void *copy = berth_malloc(n ? n : 1);
		if (!copy)
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
		else {
			memcpy(copy, v, n);
			*sealed = copy;
			*len = n;
		}
	} else if (step != DB_DONE)
		rc = store_db_fail(s, err, "reading a secret");
	store_stmt_put(s, st);
	return rc;
}

int store_secret_names(store *s, const char *project, char ***names, size_t *n,
		       berth_error **err)
{
	*names = NULL;
	*n = 0;
	db_stmt *st;
	if (!(st = store_stmt_get(s, "SELECT name FROM secrets WHERE project = ?1 ORDER BY name")))
		return store_db_fail(s, err, "preparing a statement");
	db_bind_text(st, 1, project);
	char **list = NULL;
	size_t cnt = 0;
	int rc = 0, step;
	while ((step = db_step(st)) == DB_ROW) {
		char **grown = berth_realloc(list, (cnt + 1) * sizeof(*list));
		char *name = grown ? berth_strdup(db_col_text(st, 0)) : NULL;
		if (grown)
			list = grown;
		if (!name) {
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
			break;
		}
		list[cnt++] = name;
	}
	if (!rc && step != DB_DONE)
		rc = store_db_fail(s, err, "reading secrets");
	store_stmt_put(s, st);
	if (rc) {
		for (size_t i = 0; i < cnt; i++)
			free(list[i]);
		free(list);
		return rc;
	}
	*names = list;
	*n = cnt;
	return 0;
}

int store_secret_delete(store *s, const char *project, const char *name, berth_error **err)
{
	db_stmt *st;
	if (!(st = store_stmt_get(s, "DELETE FROM secrets WHERE project = ?1 AND name = ?2")))
		return store_db_fail(s, err, "preparing a statement");
	db_bind_text(st, 1, project);
	db_bind_text(st, 2, name);
	int rc = db_step(st) == DB_DONE ? db_changes(s->db) > 0
						 : store_db_fail(s, err, "deleting a secret");
	store_stmt_put(s, st);
	return rc;
}
