/*
 * secrets.c - sealed secrets in the store (see store.h): the store keeps
 * values sealed by base/seal.h, never a clear one.
 */
#include <string.h>

#include "store/store_internal.h"

int store_secret_put(store *s, const char *project, const char *name, const void *sealed,
		     size_t len, berth_error **err)
{
	sqlite3_stmt *st;
	if (store_stmt_get(s,
			       "INSERT INTO secrets (project, name, sealed, updated) VALUES (?1, ?2, ?3, ?4)"
			       " ON CONFLICT (project, name) DO UPDATE SET sealed = ?3, updated = ?4",
			       -1, &st, NULL) != SQLITE_OK)
		return store_db_fail(s, err, "preparing a statement");
	sqlite3_bind_text(st, 1, project, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
	sqlite3_bind_blob64(st, 3, sealed, len, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, store_now_ms());
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_fail(s, err, "storing a secret");
	store_stmt_put(s, st);
	return rc;
}

int store_secret_get(store *s, const char *project, const char *name, void **sealed,
		     size_t *len, berth_error **err)
{
	*sealed = NULL;
	*len = 0;
	sqlite3_stmt *st;
	if (store_stmt_get(s, "SELECT sealed FROM secrets WHERE project = ?1 AND name = ?2",
			       -1, &st, NULL) != SQLITE_OK)
		return store_db_fail(s, err, "preparing a statement");
	sqlite3_bind_text(st, 1, project, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
	int rc = 0, step = sqlite3_step(st);
	if (step == SQLITE_ROW) {
		size_t n = (size_t)sqlite3_column_bytes(st, 0);
		void *copy = berth_malloc(n ? n : 1);
		if (!copy)
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
		else {
			memcpy(copy, sqlite3_column_blob(st, 0), n);
			*sealed = copy;
			*len = n;
		}
	} else if (step != SQLITE_DONE)
		rc = store_db_fail(s, err, "reading a secret");
	store_stmt_put(s, st);
	return rc;
}

int store_secret_names(store *s, const char *project, char ***names, size_t *n,
		       berth_error **err)
{
	*names = NULL;
	*n = 0;
	sqlite3_stmt *st;
	if (store_stmt_get(s, "SELECT name FROM secrets WHERE project = ?1 ORDER BY name", -1,
			       &st, NULL) != SQLITE_OK)
		return store_db_fail(s, err, "preparing a statement");
	sqlite3_bind_text(st, 1, project, -1, SQLITE_STATIC);
	char **list = NULL;
	size_t cnt = 0;
	int rc = 0, step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		char **grown = berth_realloc(list, (cnt + 1) * sizeof(*list));
		char *name = grown ? berth_strdup((const char *)sqlite3_column_text(st, 0)) : NULL;
		if (grown)
			list = grown;
		if (!name) {
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
			break;
		}
		list[cnt++] = name;
	}
	if (!rc && step != SQLITE_DONE)
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
	sqlite3_stmt *st;
	if (store_stmt_get(s, "DELETE FROM secrets WHERE project = ?1 AND name = ?2", -1, &st,
			       NULL) != SQLITE_OK)
		return store_db_fail(s, err, "preparing a statement");
	sqlite3_bind_text(st, 1, project, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? sqlite3_changes(s->db) > 0
						 : store_db_fail(s, err, "deleting a secret");
	store_stmt_put(s, st);
	return rc;
}
