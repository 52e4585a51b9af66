/*
 * store_internal.h - what the files of the store share: the handle, its
 * cache of prepared statements and the helpers that run SQL on it. Nothing
 * outside src/store/ includes it; SQL lives here and nowhere else.
 *
 *   store.c     the handle: open, the schema and its migrations, transactions,
 *               the statement cache, any statement (store_select_*)
 *   runs.c      run records and their queries, what runs hold, their events
 *   projects.c  projects, the uid each project's runs get, registered functions
 *   tokens.c    the server's API tokens (their hashes)
 *   secrets.c   sealed secrets
 *   sync.c      durability: the group fsync of the WAL after commits
 *   backup.c    the store as one file, and a file checked before it is restored
 */
#ifndef BERTH_STORE_INTERNAL_H
#define BERTH_STORE_INTERNAL_H

#include <sqlite3.h>

#include "base/internal.h"
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

/* Statements are prepared once and kept (sqlite3_prepare is a large part of a
 * short statement's cost): keyed by their text, reset when handed back. */
#define STMT_CACHE 48
typedef struct stmt_slot {
	char *sql;
	sqlite3_stmt *st;
	bool busy;
} stmt_slot;

struct store {
	sqlite3 *db;
	char *path;
	stmt_slot cache[STMT_CACHE];
	char *project;  /* the last project recorded through this handle */
	int64_t busy_since; /* when the wait for another writer began (ms, monotonic) */
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

/* ---- durability (sync.c) ---- */
/* The group fsync of path's WAL in this process (shared by its handles):
 * NULL and 0 when BERTH_STORE_SYNC is normal, -1 with *err on a bad value. */
int wal_sync_get(const char *path, struct wal_sync **out, berth_error **err);
void wal_sync_put(struct wal_sync *w);
/* SQLite's WAL hook (sqlite3_wal_hook; ctx is the handle): each commit gets
 * its number, is made durable at once unless the handle defers it, and a
 * WAL of ckpt_pages pages or more is checkpointed (as SQLite's own
 * wal_autocheckpoint, which this hook replaces). */
int store_on_commit(void *ctx, sqlite3 *db, const char *name, int pages);

/* The schema's migrations (store.c): how many, and the SQL of the i-th (from 0),
 * which makes version i + 1. */
int store_migrations(void);
const char *store_migration(int i);

/* The connection, opened again first when suspended (store_suspend). */
sqlite3 *store_db(store *s);

/* sqlite3_prepare_v2's shape, from the cache when the text was seen */
int store_stmt_get(store *s, const char *sql, int nbytes, sqlite3_stmt **st, const char **tail);
/* sqlite3_finalize's shape: a cached statement is reset for its next use */
int store_stmt_put(store *s, sqlite3_stmt *st);

/* Fails with the connection's last error ("store PATH: what: message"):
 * BERTH_ENOSPC for a full disk, else BERTH_EIO. */
int store_db_fail(store *s, berth_error **err, const char *what);
/* Runs SQL text (one statement or several, no parameters), uncached. */
int store_db_exec(store *s, const char *sql, berth_error **err);

/* A cached statement with ?1, ?2, ... bound from args. */
int store_prepare_args(store *s, const char *sql, const store_arg *args, size_t nargs,
		       sqlite3_stmt **st, berth_error **err);
/* Runs a statement; returns the number of rows it changed, or a negative
 * code (BERTH_ECONFLICT "it exists already" when a constraint refused it). */
int store_exec_args(store *s, const char *sql, const store_arg *args, size_t nargs,
		    berth_error **err);

/* A copy of column i's text in *out (NULL for SQL NULL); -1 when out of memory. */
int store_col_text(sqlite3_stmt *st, int i, char **out);

/* list (of *cap items of size bytes), grown when needed to hold item n: the
 * list (maybe moved), or NULL when out of memory (list left as it was). */
void *store_grow(void *list, size_t size, size_t n, size_t *cap);


#endif
