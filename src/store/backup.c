/*
 * backup.c - the store as one file, and a file checked before it becomes
 * the store (src/backend/backup.c decides when, and where).
 *
 * A backup is a SQLite database: VACUUM INTO writes a consistent copy of
 * what was committed when it began, while the server goes on writing (it
 * reads, in WAL mode, as any reader does). With the data dir's secret key
 * it also holds a table berth_backup_key.
 *
 * A file to restore is a copy (the caller's, in the data dir: the user's
 * file is never opened for writing) that SQLite may be handed by anyone, so
 * it is opened defensively (no schema-defined code is trusted) and must be
 * berth's schema exactly: the tables, indexes and triggers of its version,
 * as this berth's migrations make them, and nothing else. Only then is it
 * migrated up (store_open).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "store/store_internal.h"

#define KEY_TABLE "berth_backup_key"
#define KEY_TABLE_SQL "CREATE TABLE " KEY_TABLE " (key BLOB NOT NULL)"

int store_backup_into(store *s, const char *path, const void *key, size_t keylen, berth_error **err)
{
	if (store_dialect(s) != DB_SQLITE)
		return berth_fail(err, BERTH_EARG, "store %s: a store on PostgreSQL is backed up by "
				  "PostgreSQL (pg_dump), with the data dir's secret.key", s->path);
	store_arg to[] = {STORE_S(path)};
	db_stmt *st;
	int rc = store_prepare_args(s, "VACUUM INTO ?1", to, 1, &st, err);
	if (rc)
		return rc;
	if (db_step(st) != DB_DONE)
		rc = store_db_fail(s, err, "writing the backup");
	store_stmt_put(s, st);
	if (rc || !key)
		return rc;
	sqlite3 *conn = NULL;
	sqlite3_stmt *ins = NULL;
	if (sqlite3_open_v2(path, &conn, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
	    sqlite3_exec(conn, KEY_TABLE_SQL, NULL, NULL, NULL) !=
		    SQLITE_OK ||
	    sqlite3_prepare_v2(conn, "INSERT INTO " KEY_TABLE " (key) VALUES (?1)", -1, &ins, NULL) !=
		    SQLITE_OK ||
	    sqlite3_bind_blob(ins, 1, key, (int)keylen, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_step(ins) != SQLITE_DONE)
		rc = berth_fail(err, BERTH_EIO, "%s: cannot add the key: %s", path,
				conn ? sqlite3_errmsg(conn) : "out of memory");
	sqlite3_finalize(ins);
	sqlite3_close(conn);
	return rc;
}

int store_schema_latest(void)
{
	return store_migrations();
}

/* The schema (every table, index, view and trigger) as one text, in name
 * order: all but the statistics tables ANALYZE may make and the backup's key
 * as store_backup_into makes it. What is left out is left out by its kind
 * and whole text, never by its name alone: a trigger named as the key table,
 * or "sqlite_..." (a file can hold one, written past SQLite's checks), is
 * compared as any other and so refused. */
static int schema_text(sqlite3 *conn, berth_buf *out)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(conn,
			       "SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE NOT (type ="
			       " 'table' AND ((name IN ('sqlite_stat1', 'sqlite_stat4') AND name ="
			       " tbl_name) OR (name = '" KEY_TABLE "' AND tbl_name = name AND sql = '"
			       KEY_TABLE_SQL "'))) ORDER BY type, name",
			       -1, &st, NULL) != SQLITE_OK)
		return -1;
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		for (int i = 0; i < 4; i++) {
			const char *v = (const char *)sqlite3_column_text(st, i);
			berth_buf_puts(out, v ? v : "");
			berth_buf_append(out, "", 1); /* a NUL between fields */
		}
	sqlite3_finalize(st);
	return step == SQLITE_DONE && !out->failed ? 0 : -1;
}

/* A berth store of schema version as this berth makes it. */
static int schema_of(int version, berth_buf *out)
{
	sqlite3 *conn = NULL;
	int rc = sqlite3_open_v2(":memory:", &conn, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK ? 0 : -1;
	for (int v = 0; !rc && v < version; v++)
		rc = sqlite3_exec(conn, store_migration(v), NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
	if (!rc)
		rc = schema_text(conn, out);
	sqlite3_close(conn);
	return rc;
}

int store_restore_check(const char *path, const char *shown, unsigned char *key, size_t keylen,
			bool *has_key, berth_error **err)
{
	*has_key = false;
	sqlite3 *conn = NULL;
	int rc = 0;
	if (sqlite3_open_v2(path, &conn, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		rc = berth_fail(err, BERTH_EARG, "%s cannot be opened: %s", shown,
				conn ? sqlite3_errmsg(conn) : "out of memory");
		sqlite3_close(conn);
		return rc;
	}
	/* nothing the file defines runs: no trigger or view of its own is trusted,
	 * and the schema cannot be written through SQL */
	sqlite3_db_config(conn, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(conn, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	sqlite3_stmt *st = NULL;
	char *check = NULL;
	if (sqlite3_prepare_v2(conn, "PRAGMA integrity_check(1)", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		check = berth_strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	if (!check || strcmp(check, "ok")) {
		rc = berth_fail(err, BERTH_EARG, "%s is not a whole berth backup: %s", shown,
				check ? check : sqlite3_errmsg(conn));
		goto out;
	}
	int version = -1;
	if (sqlite3_prepare_v2(conn, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	int latest = store_migrations();
	if (version > latest) {
		rc = berth_fail(err, BERTH_EARG,
				"%s is a store of schema version %d, newer than this berth knows (%d): "
				"restore it with the berth that made it, or a newer one",
				shown, version, latest);
		goto out;
	}
	berth_buf want = BERTH_BUF_INIT, have = BERTH_BUF_INIT;
	bool same = version >= 1 && !schema_of(version, &want) && !schema_text(conn, &have) &&
		    want.len == have.len && !memcmp(want.data, have.data, want.len);
	berth_buf_release(&want);
	berth_buf_release(&have);
	if (!same) {
		rc = berth_fail(err, BERTH_EARG,
				"%s is not a berth backup: its tables are not those of a berth store "
				"(schema version %d)",
				shown, version);
		goto out;
	}
	/* the key, when the backup has one: taken out of the store */
	if (sqlite3_prepare_v2(conn, "SELECT key FROM " KEY_TABLE, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW &&
		    (size_t)sqlite3_column_bytes(st, 0) == keylen) {
			memcpy(key, sqlite3_column_blob(st, 0), keylen);
			*has_key = true;
		} else
			rc = berth_fail(err, BERTH_EARG, "%s: its secret key is not one", shown);
		sqlite3_finalize(st);
		if (!rc && sqlite3_exec(conn, "DROP TABLE " KEY_TABLE, NULL, NULL, NULL) != SQLITE_OK)
			rc = berth_fail(err, BERTH_EIO, "%s: %s", shown, sqlite3_errmsg(conn));
	}
out:
	free(check);
	if (sqlite3_close(conn) != SQLITE_OK && !rc)
		rc = berth_fail(err, BERTH_EIO, "%s: cannot be closed", shown);
	return rc;
}

int store_retire(const char *path, berth_error **err)
{
	if (access(path, F_OK) && errno == ENOENT)
		return 0;
	/* out of WAL mode: SQLite checkpoints the WAL into the database and
	 * removes it, which it does only for the one connection to the store */
	sqlite3 *conn = NULL;
	sqlite3_stmt *st = NULL;
	const char *mode = NULL;
	if (sqlite3_open_v2(path, &conn, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK) {
		sqlite3_busy_timeout(conn, 2000);
		if (sqlite3_prepare_v2(conn, "PRAGMA journal_mode=DELETE", -1, &st, NULL) == SQLITE_OK &&
		    sqlite3_step(st) == SQLITE_ROW)
			mode = (const char *)sqlite3_column_text(st, 0);
	}
	int rc = 0;
	if (!mode || strcmp(mode, "delete"))
		rc = berth_fail(err, BERTH_ECONFLICT,
				"store %s: another process has it open (a berth command, a run's "
				"supervisor?): let it end first (%s)",
				path, conn ? sqlite3_errmsg(conn) : "out of memory");
	sqlite3_finalize(st);
	sqlite3_close(conn);
	return rc;
}
