/*
 * db_sqlite.c - the store's SQLite driver (db.h): one database file under
 * the data dir, in WAL mode.
 *
 * SQLite because the state is small, local and written by several short
 * processes (the CLI, one supervisor per run): it gives transactions across
 * processes, WAL readers that never block, and crash safety, with nothing to
 * run beside berth.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/internal.h"
#include "store/db.h"

typedef struct lite {
	db base;
	sqlite3 *conn;
	int64_t busy_since; /* when the wait for another writer began (ms, monotonic) */
	db_commit_hook hook; /* after each commit (lite_commit_hook) */
	void *hook_ctx;
} lite;

typedef struct lite_stmt {
	db_stmt base;
	sqlite3_stmt *st;
} lite_stmt;

#define L(d) ((lite *)(d))
#define S(st) (((lite_stmt *)(st))->st)

/* Another process writes: wait for it, up to 10 s. SQLite's own timeout
 * sleeps 1 ms at first and then longer, while a berth transaction holds the
 * lock for a few tenths of one: a short sleep that doubles (50 µs to 2 ms)
 * takes the lock soon after it is free. */
static int busy_wait(void *ctx, int tries)
{
	lite *d = ctx;
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	int64_t now = (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
	if (tries == 0)
		d->busy_since = now;
	else if (now - d->busy_since >= 10000)
		return 0;
	long us = tries < 6 ? 50L << tries : 2000;
	struct timespec ts = {0, us * 1000};
	nanosleep(&ts, NULL);
	return 1;
}

static int lite_exec(db *d, const char *sql)
{
	return sqlite3_exec(L(d)->conn, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

static void lite_close(db *d)
{
	if (!d)
		return;
	sqlite3_close(L(d)->conn);
	free(d);
}

static int lite_open(db **out, const char *path, char *msg, size_t len)
{
	*out = NULL;
	/* 0600 whatever the umask: it holds every run's environment. SQLite
	 * makes the WAL and its index with the database's mode; those of an
	 * older berth are set too. By path, never by a descriptor: closing any
	 * descriptor of a database file drops the POSIX locks that this
	 * process's other connections (a server's threads) hold on it */
	static const char *const suffix[] = {"", "-wal", "-shm"};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(suffix); i++) {
		char file[4200];
		struct stat st;
		snprintf(file, sizeof(file), "%s%s", path, suffix[i]);
		if (lstat(file, &st) == 0) {
			if (S_ISREG(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 0077))
				chmod(file, 0600);
		} else if (i == 0 && errno == ENOENT) {
			/* new: nobody has it open yet */
			int fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
			if (fd >= 0)
				close(fd);
		}
	}
	lite *d = berth_calloc(1, sizeof(*d));
	if (!d) {
		snprintf(msg, len, "out of memory");
		return -1;
	}
	d->base.ops = &db_sqlite_ops;
	int rc = sqlite3_open_v2(path, &d->conn, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
							 SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE, NULL);
	if (rc != SQLITE_OK) {
		snprintf(msg, len, "%s", d->conn ? sqlite3_errmsg(d->conn) : sqlite3_errstr(rc));
		lite_close(&d->base);
		return -1;
	}
	sqlite3_busy_handler(d->conn, busy_wait, d);
	/* the last connection to close would checkpoint the WAL into the database
	 * and fsync both: milliseconds at the end of every berth command. The WAL
	 * is checkpointed as it grows instead (every 1000 pages), by whoever writes */
	sqlite3_db_config(d->conn, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	/* WAL: readers never wait for writers; NORMAL: a commit survives a
	 * crash of berth, and the store's sync.c fsyncs the WAL after it,
	 * outside the write lock and shared by the commits of the moment,
	 * before anyone is told of it (SQLite's FULL would fsync under the
	 * lock, one commit at a time). journal_mode=WAL comes first: on a new
	 * store, SQLite writes the database's header under its default
	 * synchronous=FULL. The WAL is checkpointed by the store's commit hook
	 * (lite_commit_hook), which replaces SQLite's wal_autocheckpoint */
	if (lite_exec(&d->base, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON")) {
		snprintf(msg, len, "%s", sqlite3_errmsg(d->conn));
		lite_close(&d->base);
		return -1;
	}
	*out = &d->base;
	return 0;
}

static int lite_prepare(db *d, const char *sql, bool keep, db_stmt **out)
{
	*out = NULL;
	lite_stmt *s = berth_calloc(1, sizeof(*s));
	if (!s)
		return DB_NOMEM;
	s->base.ops = &db_sqlite_ops;
	if (sqlite3_prepare_v3(L(d)->conn, sql, -1, keep ? SQLITE_PREPARE_PERSISTENT : 0, &s->st,
			       NULL) != SQLITE_OK) {
		free(s);
		return -1;
	}
	*out = &s->base;
	return 0;
}

static int lite_bind_int(db_stmt *st, int i, int64_t v)
{
	return sqlite3_bind_int64(S(st), i, v) == SQLITE_OK ? 0 : -1;
}

static int lite_bind_text(db_stmt *st, int i, const char *v)
{
	int rc = v ? sqlite3_bind_text(S(st), i, v, -1, SQLITE_STATIC) : sqlite3_bind_null(S(st), i);
	return rc == SQLITE_OK ? 0 : -1;
}

static int lite_bind_blob(db_stmt *st, int i, const void *v, size_t len)
{
	int rc = v ? sqlite3_bind_blob64(S(st), i, v, len, SQLITE_STATIC) : sqlite3_bind_null(S(st), i);
	return rc == SQLITE_OK ? 0 : -1;
}

static int lite_step(db_stmt *st)
{
	int rc = sqlite3_step(S(st));
	if (rc == SQLITE_ROW || rc == SQLITE_DONE)
		return rc == SQLITE_ROW ? DB_ROW : DB_DONE;
	/* the connection's error is the statement's own once it is reset: a
	 * commit's WAL hook that failed (sync.c: SQLITE_FULL for a full disk)
	 * leaves SQLite's step with a bare SQLITE_ERROR, "SQL logic error" */
	sqlite3_reset(S(st));
	return DB_ERROR;
}

static void lite_reset(db_stmt *st)
{
	sqlite3_reset(S(st));
	sqlite3_clear_bindings(S(st));
}

static void lite_finalize(db_stmt *st)
{
	if (!st)
		return;
	sqlite3_finalize(S(st));
	free(st);
}

static bool lite_col_null(db_stmt *st, int i)
{
	return sqlite3_column_type(S(st), i) == SQLITE_NULL;
}

static int64_t lite_col_int(db_stmt *st, int i)
{
	return sqlite3_column_int64(S(st), i);
}

static const char *lite_col_text(db_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(S(st), i);
}

static const void *lite_col_blob(db_stmt *st, int i, size_t *len)
{
	const void *v = sqlite3_column_blob(S(st), i);
	*len = (size_t)sqlite3_column_bytes(S(st), i);
	return v;
}

static int64_t lite_changes(db *d)
{
	return sqlite3_changes64(L(d)->conn);
}

static db_fault lite_fault(db *d)
{
	int code = sqlite3_extended_errcode(L(d)->conn);
	if (code == SQLITE_CONSTRAINT_PRIMARYKEY || code == SQLITE_CONSTRAINT_UNIQUE)
		return DB_F_UNIQUE;
	if ((code & 0xff) == SQLITE_CONSTRAINT)
		return DB_F_CONSTRAINT;
	return (code & 0xff) == SQLITE_FULL ? DB_F_FULL : DB_F_OTHER;
}

static const char *lite_errmsg(db *d)
{
	return sqlite3_errmsg(L(d)->conn);
}

static bool lite_broken(db *d)
{
	return false; /* a file */
}

static bool lite_in_transaction(db *d)
{
	return !sqlite3_get_autocommit(L(d)->conn);
}

/* IMMEDIATE: the write lock at once, so two processes never admit runs
 * against the same capacity */
static int lite_begin(db *d)
{
	return lite_exec(d, "BEGIN IMMEDIATE");
}

static int lite_pragma_int(db *d, const char *sql, int64_t *v)
{
	sqlite3_stmt *st;
	*v = 0;
	if (sqlite3_prepare_v2(L(d)->conn, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

static int lite_schema_version(db *d, int64_t *v)
{
	return lite_pragma_int(d, "PRAGMA user_version", v);
}

static int lite_set_schema_version(db *d, int64_t v)
{
	char pragma[48];
	snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %lld", (long long)v);
	return lite_exec(d, pragma);
}

static int lite_data_version(db *d, int64_t *v)
{
	return lite_pragma_int(d, "PRAGMA data_version", v);
}

static int lite_compound_limit(db *d)
{
	return sqlite3_limit(L(d)->conn, SQLITE_LIMIT_COMPOUND_SELECT, -1);
}

static int lite_on_wal(void *ctx, sqlite3 *conn, const char *name, int pages)
{
	lite *d = ctx;
	return d->hook(d->hook_ctx, conn, name, pages);
}

static void lite_commit_hook(db *dd, db_commit_hook hook, void *ctx)
{
	lite *d = L(dd);
	d->hook = hook;
	d->hook_ctx = ctx;
	sqlite3_wal_hook(d->conn, hook ? lite_on_wal : NULL, d);
}

/* one server on one data dir: it leads */
static int lite_try_lead(db *d)
{
	return 1;
}

static int lite_checkpoint(db *d)
{
	int64_t busy;
	return lite_pragma_int(d, "PRAGMA wal_checkpoint(TRUNCATE)", &busy);
}

const db_ops db_sqlite_ops = {
	.dialect = DB_SQLITE,
	.open = lite_open,
	.close = lite_close,
	.prepare = lite_prepare,
	.bind_int = lite_bind_int,
	.bind_text = lite_bind_text,
	.bind_blob = lite_bind_blob,
	.step = lite_step,
	.reset = lite_reset,
	.finalize = lite_finalize,
	.col_null = lite_col_null,
	.col_int = lite_col_int,
	.col_text = lite_col_text,
	.col_blob = lite_col_blob,
	.changes = lite_changes,
	.exec = lite_exec,
	.fault = lite_fault,
	.errmsg = lite_errmsg,
	.in_transaction = lite_in_transaction,
	.broken = lite_broken,
	.begin = lite_begin,
	.schema_version = lite_schema_version,
	.set_schema_version = lite_set_schema_version,
	.data_version = lite_data_version,
	.compound_limit = lite_compound_limit,
	.commit_hook = lite_commit_hook,
	.try_lead = lite_try_lead,
	.checkpoint = lite_checkpoint,
};
