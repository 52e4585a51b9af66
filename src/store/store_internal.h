/*
 * store_internal.h - what the files of the store share: the handle, its
 * cache of prepared statements and the helpers that run SQL on it. Nothing
 * outside src/store/ includes it; SQL lives here and nowhere else.
 *
 *   store.c     the handle: open, the schema and its migrations, transactions,
 *               the statement cache, any statement (store_select_*)
 *   db.h        the seam to the database: db_sqlite.c, db_pg.c (schema_pg.c)
 *   runs.c      run records and their queries, what runs hold, their events
 *   projects.c  projects, the uid each project's runs get, registered functions
 *   tokens.c    the server's API tokens (their hashes)
 *   secrets.c   sealed secrets
 *   sync.c      durability: the group fsync of the WAL after commits
 *   backup.c    the store as one file, and a file checked before it is restored
 */
#ifndef BERTH_STORE_INTERNAL_H
#define BERTH_STORE_INTERNAL_H

#include "base/internal.h"
#include "store/db.h"
#include "store/store.h"

/* Any statement: parameters ?1, ?2, ... from args. */
typedef struct store_arg {
	char kind;        /* 's' text (NULL: SQL NULL), 'i' integer, 'b' blob */
	const char *s;
	int64_t i;
	const void *blob;
	size_t len;
} store_arg;
#define STORE_S(x) ((store_arg){.kind = 's', .s = (x)})
#define STORE_I(x) ((store_arg){.kind = 'i', .i = (x)})
#define STORE_B(p, n) ((store_arg){.kind = 'b', .blob = (p), .len = (n)})

/* The first column of the first row (*out NULL when there is no row). */
int store_select_text(store *s, const char *sql, const store_arg *args, size_t nargs, char **out,
		      berth_error **err);
/* The first column of the first row as an integer (0 when there is no row, or NULL). */
int store_select_int(store *s, const char *sql, const store_arg *args, size_t nargs, int64_t *out,
		     berth_error **err);

/* Statements are prepared once and kept (preparing is a large part of a
 * short statement's cost): keyed by their text, reset when handed back. */
#define STMT_CACHE 48
typedef struct stmt_slot {
	char *sql;
	db_stmt *st;
	bool busy;
} stmt_slot;

struct store {
	db *db;
	const db_ops *ops;
	char *where;    /* what store_open was given: a path, or a URL (which may hold a password) */
	char *path;     /* where, as messages show it (no password) */
	stmt_slot cache[STMT_CACHE];
	char *project;  /* the last project recorded through this handle */
	bool part_own;
	bool nomem;     /* the last statement failed to prepare for want of memory */  /* the part begun (store_part_begin) is a transaction of its own */
	/* the SQL of a run's columns, written on first use (runs.c): "a, b, ...", the
	 * INSERT and the UPDATE of every mutable column */
	char *cols, *insert, *update;
	/* durability (sync.c): the process's group fsync of this store's WAL (NULL:
	 * BERTH_STORE_SYNC=normal), this handle's last commit not yet known durable
	 * (0: none), whether the caller waits for it (store_defer_sync) rather than
	 * each commit, and the WAL's size in pages that starts a checkpoint */
	struct wal_sync *sync;
	uint64_t pending;
	bool defer;
	int ckpt_pages;
};

/* The connection's dialect (what SQL beyond the common subset it takes). */
static inline db_dialect store_dialect(const store *s)
{
	return s->ops->dialect;
}
/* ---- durability (sync.c) ---- */
/* The group fsync of path's WAL in this process (shared by its handles):
 * NULL and 0 when BERTH_STORE_SYNC is normal, -1 with *err on a bad value. */
int wal_sync_get(const char *path, struct wal_sync **out, berth_error **err);
void wal_sync_put(struct wal_sync *w);
/* SQLite's WAL hook (sqlite3_wal_hook; ctx is the handle): each commit gets
 * its number, is made durable at once unless the handle defers it, and a
 * WAL of ckpt_pages pages or more is checkpointed (as SQLite's own
 * wal_autocheckpoint, which this hook replaces). conn is the sqlite3
 * connection (db_commit_hook); a PostgreSQL store has none. */
int store_on_commit(void *ctx, void *conn, const char *name, int pages);

/* The schema's migrations (store.c): how many, and the SQL of the i-th (from 0),
 * which makes version i + 1. */
int store_migrations(void);
const char *store_migration(int i);

/* The connection, opened again first when suspended (store_suspend): NULL
 * when it cannot be. */
db *store_conn(store *s);

/* A statement of sql, from the cache when the text was seen: NULL when it
 * cannot be prepared (store_db_fail says why). */
db_stmt *store_stmt_get(store *s, const char *sql);
/* Hands a statement back: a cached one is reset for its next use. */
void store_stmt_put(store *s, db_stmt *st);

/* Fails with the connection's last error ("store PATH: what: message"):
 * BERTH_ENOSPC for a full disk, else BERTH_EIO. */
int store_db_fail(store *s, berth_error **err, const char *what);
/* Runs SQL text (one statement or several, no parameters), uncached. */
int store_db_exec(store *s, const char *sql, berth_error **err);

/* A cached statement with ?1, ?2, ... bound from args. */
int store_prepare_args(store *s, const char *sql, const store_arg *args, size_t nargs,
		       db_stmt **st, berth_error **err);
/* Runs a statement; returns the number of rows it changed, or a negative
 * code (BERTH_ECONFLICT "it exists already" when a constraint refused it). */
int store_exec_args(store *s, const char *sql, const store_arg *args, size_t nargs,
		    berth_error **err);

/* A copy of column i's text in *out (NULL for SQL NULL); -1 when out of memory. */
int store_col_text(db_stmt *st, int i, char **out);

/* A part of the caller's transaction, or a transaction of its own outside
 * one: store_part_end commits it (ok) or undoes it. */
int store_part_begin(store *s, berth_error **err);
int store_part_end(store *s, bool ok, berth_error **err);

/* PostgreSQL's schema (schema_pg.c): a new store is made at version
 * STORE_PG_BASE in one step; store.c's pg_migrations[] go on from there. */
#define STORE_PG_BASE 14
extern const char *const store_pg_schema[]; /* its parts, NULL-terminated */

/* No LIMIT: a bound for ?N of "LIMIT ?N" that both dialects take. */
#define STORE_NO_LIMIT INT64_MAX

/* list (of *cap items of size bytes), grown when needed to hold item n: the
 * list (maybe moved), or NULL when out of memory (list left as it was). */
void *store_grow(void *list, size_t size, size_t n, size_t *cap);


#endif
