/*
 * db.h - the seam between the store and the database it is kept in: one
 * connection, its statements, their parameters and their rows. Two drivers
 * implement it: SQLite (db_sqlite.c, a file under the data dir, the default)
 * and PostgreSQL (db_pg.c, a server several berth servers share). Nothing
 * outside src/store/ includes it.
 *
 * SQL handed to a driver is the common subset of both: parameters ?1, ?2, ...
 * (PostgreSQL's driver writes them $1, $2, ... once per statement text), the
 * word rowid for a table's order of insertion (PostgreSQL's tables have a
 * seq column for it), ON CONFLICT rather than INSERT OR IGNORE. What differs
 * beyond that is chosen by the store with db_dialect.
 */
#ifndef BERTH_STORE_DB_H
#define BERTH_STORE_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct db db;
typedef struct db_stmt db_stmt;
typedef struct db_ops db_ops;

typedef enum db_dialect { DB_SQLITE, DB_PG } db_dialect;

/* Called after each commit of the connection: conn is SQLite's (sqlite3 *), the
 * name of the database and the WAL's pages (sqlite3_wal_hook's arguments). */
typedef int (*db_commit_hook)(void *ctx, void *conn, const char *name, int pages);

/* What a step gives. */
enum { DB_NOMEM = -2, DB_ERROR = -1, DB_ROW = 1, DB_DONE = 2 };

/* What the last failure was, as the store tells it apart. */
typedef enum db_fault {
	DB_F_OTHER,
	DB_F_UNIQUE,     /* a primary key or unique index refused the row */
	DB_F_CONSTRAINT, /* another constraint refused it */
	DB_F_FULL,       /* the disk is full */
} db_fault;

struct db {
	const db_ops *ops;
};
struct db_stmt {
	const db_ops *ops;
};

struct db_ops {
	db_dialect dialect;
	/* opens the database where says (a path, a URL); msg gets why not */
	int (*open)(db **out, const char *where, char *msg, size_t len);
	void (*close)(db *d);
	/* keep: the statement is kept for many uses (a driver may prepare it harder);
	 * DB_NOMEM when out of memory, else DB_ERROR */
	int (*prepare)(db *d, const char *sql, bool keep, db_stmt **out);
	int (*bind_int)(db_stmt *st, int i, int64_t v);
	int (*bind_text)(db_stmt *st, int i, const char *v); /* NULL: SQL NULL */
	int (*bind_blob)(db_stmt *st, int i, const void *v, size_t len);
	int (*step)(db_stmt *st);
	void (*reset)(db_stmt *st); /* for its next use, its parameters cleared */
	void (*finalize)(db_stmt *st);
	bool (*col_null)(db_stmt *st, int i);
	int64_t (*col_int)(db_stmt *st, int i);
	const char *(*col_text)(db_stmt *st, int i);
	const void *(*col_blob)(db_stmt *st, int i, size_t *len);
	int64_t (*changes)(db *d);
	int (*exec)(db *d, const char *sql); /* several statements, no parameters */
	db_fault (*fault)(db *d);
	const char *(*errmsg)(db *d);
	bool (*in_transaction)(db *d);
	bool (*broken)(db *d);    /* the connection is lost (a server restarted): open another */
	int (*begin)(db *d);      /* the writers' transaction: one at a time */
	/* the schema's version, and setting it (inside the migration's transaction) */
	int (*schema_version)(db *d, int64_t *v);
	int (*set_schema_version)(db *d, int64_t v);
	/* a number that changes when another connection commits */
	int (*data_version)(db *d, int64_t *v);
	/* how many arms one compound SELECT may have */
	int (*compound_limit)(db *d);
	/* hook is called after each commit (SQLite's WAL hook; PostgreSQL: never,
	 * its commit is durable when it returns) */
	void (*commit_hook)(db *d, db_commit_hook hook, void *ctx);
	/* the lead of the work one server does at a time, held by this connection
	 * until it ends: 1 held, 0 another connection holds it, -1 failed */
	int (*try_lead)(db *d);
	int (*checkpoint)(db *d);
};

/* The driver of where: PostgreSQL for a postgresql:// or postgres:// URL, else SQLite. */
const db_ops *db_driver(const char *where);
extern const db_ops db_sqlite_ops;
extern const db_ops db_pg_ops;

/* where as it may be shown: a URL's password and any ...password= left out
 * (the caller's to free; NULL when out of memory). */
char *db_display(const char *where);

static inline int db_bind_int(db_stmt *st, int i, int64_t v) { return st->ops->bind_int(st, i, v); }
static inline int db_bind_text(db_stmt *st, int i, const char *v) { return st->ops->bind_text(st, i, v); }
static inline int db_bind_blob(db_stmt *st, int i, const void *v, size_t n)
{
	return st->ops->bind_blob(st, i, v, n);
}
static inline int db_step(db_stmt *st) { return st->ops->step(st); }
static inline bool db_col_null(db_stmt *st, int i) { return st->ops->col_null(st, i); }
static inline int64_t db_col_int(db_stmt *st, int i) { return st->ops->col_int(st, i); }
static inline const char *db_col_text(db_stmt *st, int i) { return st->ops->col_text(st, i); }
static inline const void *db_col_blob(db_stmt *st, int i, size_t *n) { return st->ops->col_blob(st, i, n); }
static inline int64_t db_changes(db *d) { return d->ops->changes(d); }

#endif
