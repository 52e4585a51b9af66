/*
 * store.c - the store's handle (see store.h): opening it, the schema and its
 * migrations, transactions, the cache of prepared statements, and what the
 * other files of the store share to run SQL (store_internal.h).
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
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/store_internal.h"

static int connect_db(store *s, berth_error **err);

sqlite3 *store_db(store *s)
{
	if (!s->db)
		store_resume(s, NULL);
	return s->db;
}

/* sqlite3_prepare_v2's shape, from the cache when the text was seen */
int store_stmt_get(store *s, const char *sql, int nbytes, sqlite3_stmt **st, const char **tail)
{
	(void)nbytes;
	(void)tail;
	store_db(s);
	stmt_slot *free_slot = NULL;
	for (size_t i = 0; i < STMT_CACHE; i++) {
		stmt_slot *c = &s->cache[i];
		if (!c->sql) {
			if (!free_slot)
				free_slot = c;
			continue;
		}
		if (!c->busy && !strcmp(c->sql, sql)) {
			c->busy = true;
			*st = c->st;
			return SQLITE_OK;
		}
	}
	int rc = sqlite3_prepare_v3(s->db, sql, -1, free_slot ? SQLITE_PREPARE_PERSISTENT : 0, st, NULL);
	if (rc == SQLITE_OK && free_slot && (free_slot->sql = berth_strdup(sql))) {
		free_slot->st = *st;
		free_slot->busy = true;
	}
	return rc;
}

/* sqlite3_finalize's shape: a cached statement is reset for its next use */
int store_stmt_put(store *s, sqlite3_stmt *st)
{
	if (!st)
		return SQLITE_OK;
	for (size_t i = 0; i < STMT_CACHE; i++)
		if (s->cache[i].st == st && s->cache[i].busy) {
			s->cache[i].busy = false;
			sqlite3_reset(st);
			sqlite3_clear_bindings(st);
			return SQLITE_OK;
		}
	return sqlite3_finalize(st);
}

/* ---- schema --------------------------------------------------------------- */

static const char *const migrations[] = {
	/* 1: runs, events, secrets */
	"CREATE TABLE runs ("
	" id TEXT PRIMARY KEY, name TEXT NOT NULL, project TEXT NOT NULL, backend TEXT NOT NULL,"
	" profile TEXT, image TEXT, action TEXT, state INTEGER NOT NULL, reason TEXT,"
	" priority_class TEXT, priority INTEGER NOT NULL DEFAULT 0,"
	" created INTEGER NOT NULL, started INTEGER, finished INTEGER,"
	" cpu_milli INTEGER, mem INTEGER, gpus INTEGER, disk INTEGER,"
	" cpu_limit_milli INTEGER, mem_limit INTEGER, gpu_ids TEXT,"
	" exit_code INTEGER, signal INTEGER, oom_killed INTEGER, attempts INTEGER,"
	" cpu_usage_ns INTEGER, mem_peak INTEGER, enforcement TEXT, log_path TEXT, effective TEXT,"
	" spec TEXT, argv BLOB, env BLOB, secret_env TEXT, volumes TEXT, workdir TEXT,"
	" uid INTEGER, gid INTEGER, fs_group INTEGER, timeout INTEGER, retries INTEGER,"
	" restart INTEGER, grace INTEGER, keep_volumes INTEGER, supervisor_pid INTEGER, supervisor_start INTEGER, pid INTEGER,"
	" stop_requested INTEGER NOT NULL DEFAULT 0, cgroup TEXT);"
	"CREATE INDEX runs_queue ON runs(state, priority DESC, created);"
	"CREATE INDEX runs_project ON runs(project, created);"
	"CREATE TABLE events (run_id TEXT NOT NULL, time INTEGER NOT NULL, kind TEXT NOT NULL,"
	" message TEXT);"
	"CREATE INDEX events_run ON events(run_id, time);"
	"CREATE TABLE secrets (project TEXT NOT NULL, name TEXT NOT NULL, sealed BLOB NOT NULL,"
	" updated INTEGER NOT NULL, PRIMARY KEY (project, name));",
	/* 2: the server's projects, registered functions and tokens */
	"CREATE TABLE projects (name TEXT PRIMARY KEY, created INTEGER NOT NULL);"
	"INSERT OR IGNORE INTO projects (name, created) SELECT project, MIN(created) FROM runs"
	" GROUP BY project;"
	"CREATE TABLE functions (project TEXT NOT NULL, name TEXT NOT NULL, spec TEXT NOT NULL,"
	" created INTEGER NOT NULL, updated INTEGER NOT NULL, PRIMARY KEY (project, name));"
	"CREATE TABLE tokens (id TEXT PRIMARY KEY, hash BLOB NOT NULL UNIQUE, role INTEGER NOT NULL,"
	" projects TEXT NOT NULL, description TEXT, created INTEGER NOT NULL);"
	"ALTER TABLE runs ADD COLUMN doc INTEGER NOT NULL DEFAULT 0;",
	/* 3: where a run lives on a cluster (the kubernetes backend) */
	"ALTER TABLE runs ADD COLUMN target TEXT;",
	/* 4: the queue index holds what a run needs, so that the scheduler finds the
	 * queued runs that fit without reading the others (90,000 queued: 70 ms to 10) */
	"DROP INDEX runs_queue;"
	"CREATE INDEX runs_queue ON runs(state, priority DESC, created, cpu_milli, mem, gpus, disk,"
	" backend);",
	/* 5: the supervisor's volume table as NUL-separated fields (a tab or newline
	 * in a mount path was syntax in the text of schema 4: a queued run kept in
	 * that form fails rather than be read); a pids limit and a disk limit per
	 * run; the uid the local backend gives each project's runs */
	"UPDATE runs SET state = 3, finished = created,"
	" reason = 'queued before an upgrade of berth that changed how volumes are kept;"
	" submit it again' WHERE state = 0 AND backend = 'local' AND typeof(volumes) = 'text';"
	"ALTER TABLE runs ADD COLUMN pids_max INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE runs ADD COLUMN disk_limit INTEGER NOT NULL DEFAULT 0;"
	"CREATE TABLE project_uids (project TEXT PRIMARY KEY, uid INTEGER NOT NULL UNIQUE);",
	/* 6: a page of runs, newest first, is read from an index in the order it is
	 * shown, from its cursor on: by state from runs_state (state, then rowid, which
	 * every index ends with), by project and state from runs_project (project, state,
	 * rowid; one project alone is the merge of its states, store_run_query). Before,
	 * every match was sorted to find the first 100: 300 ms at 100,000 runs. One index
	 * more than schema 5 (runs_project held created, which nothing read in order).
	 * Written to run again on a store that has them (one set back to an older
	 * version by hand, as tests do) */
	"DROP INDEX IF EXISTS runs_project;"
	"CREATE INDEX runs_project ON runs(project, state);"
	"CREATE INDEX IF NOT EXISTS runs_state ON runs(state);",
	/* 7: what each run counts against its project's quota (the quota rule's
	 * measure: cpu and mem requests and gpu limits, each times its pods), kept
	 * apart from what it holds of this machine (cpu_milli, ... per pod): a
	 * deployment of 2 replicas counted once in the usage and twice in the check */
	"ALTER TABLE runs ADD COLUMN quota_cpu_milli INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE runs ADD COLUMN quota_mem INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE runs ADD COLUMN quota_gpus INTEGER NOT NULL DEFAULT 0;"
	"UPDATE runs SET quota_cpu_milli = cpu_milli, quota_mem = mem, quota_gpus = gpus"
	" WHERE state IN (0, 1);",
	/* 8: a distributed job's workers: how many, each one's state, and the
	 * variables each gets (the local backend's supervisor fills in its index) */
	"ALTER TABLE runs ADD COLUMN workers INTEGER NOT NULL DEFAULT 1;"
	"ALTER TABLE runs ADD COLUMN worker_states TEXT;"
	"ALTER TABLE runs ADD COLUMN worker_env BLOB;",
	/* 9: how a distributed job's workers start (the local backend's MPI ranks
	 * through its own agent) */
	"ALTER TABLE runs ADD COLUMN launcher TEXT;",
	/* 10: the quota a run was accepted under, which it waits for: every berth
	 * command that runs the queue holds it to the same quota, whatever policy
	 * that command was given (its runs of before are held by the queue's) */
	"ALTER TABLE runs ADD COLUMN quota_of TEXT;"
	"ALTER TABLE runs ADD COLUMN qlim_cpu_milli INTEGER NOT NULL DEFAULT -1;"
	"ALTER TABLE runs ADD COLUMN qlim_mem INTEGER NOT NULL DEFAULT -1;"
	"ALTER TABLE runs ADD COLUMN qlim_gpus INTEGER NOT NULL DEFAULT -1;"
	"ALTER TABLE runs ADD COLUMN qlim_runs INTEGER NOT NULL DEFAULT -1;",
	/* 11: a version that grows with every change to a run, as Kubernetes'
	 * resourceVersion does: each run keeps the one of its last change (rv),
	 * a deleted run leaves a tombstone for a while, and a watch asks what
	 * changed after the version it saw (store_run_changes). Kept by triggers,
	 * so that every writer (a server, a supervisor, a berth command) keeps it */
	"CREATE TABLE rv (v INTEGER NOT NULL);"
	"INSERT INTO rv (v) VALUES (0);"
	"ALTER TABLE runs ADD COLUMN rv INTEGER NOT NULL DEFAULT 0;"
	"CREATE INDEX runs_rv ON runs(rv);"
	"CREATE TABLE tombstones (rv INTEGER PRIMARY KEY, id TEXT NOT NULL, project TEXT NOT NULL);"
	"CREATE TRIGGER runs_rv_insert AFTER INSERT ON runs BEGIN"
	" UPDATE rv SET v = v + 1;"
	" UPDATE runs SET rv = (SELECT v FROM rv) WHERE rowid = NEW.rowid; END;"
	"CREATE TRIGGER runs_rv_update AFTER UPDATE ON runs WHEN NEW.rv = OLD.rv BEGIN"
	" UPDATE rv SET v = v + 1;"
	" UPDATE runs SET rv = (SELECT v FROM rv) WHERE rowid = NEW.rowid; END;"
	"CREATE TRIGGER runs_rv_delete AFTER DELETE ON runs BEGIN"
	" UPDATE rv SET v = v + 1;"
	" INSERT INTO tombstones (rv, id, project) SELECT v, OLD.id, OLD.project FROM rv;"
	" DELETE FROM tombstones WHERE rv <= (SELECT v FROM rv) - " STORE_TOMBSTONES_TEXT "; END;",
	/* 12: a run's labels, "key=value,key=value", which label selectors match */
	"ALTER TABLE runs ADD COLUMN labels TEXT;",
	/* 13: each worker's use over time, as its supervisor samples it (samples.c) */
	"CREATE TABLE samples (run_id TEXT NOT NULL, rank INTEGER NOT NULL, t INTEGER NOT NULL,"
	" cpu_milli INTEGER NOT NULL, mem INTEGER NOT NULL, gpu_util INTEGER NOT NULL,"
	" gpu_mem INTEGER NOT NULL);"
	"CREATE INDEX samples_run ON samples(run_id, t);",
	/* 14: who submitted each run (a server's token, a berth command's user), which
	 * lists show and filter by */
	"ALTER TABLE runs ADD COLUMN submitted_by TEXT;",
	/* 15: a token's expiry, its revocation (kept, so that its holder is told why it is
	 * refused) and its last use (to a minute) */
	"ALTER TABLE tokens ADD COLUMN expires INTEGER;"
	"ALTER TABLE tokens ADD COLUMN revoked INTEGER;"
	"ALTER TABLE tokens ADD COLUMN last_used INTEGER;",
	/* 16: the token that made a token through a server: a revocation takes the
	 * tokens it made with it, as an expiry does (they expire by their maker's) */
	"ALTER TABLE tokens ADD COLUMN maker TEXT;",
};

int store_migrations(void)
{
	return (int)BERTH_ARRAY_SIZE(migrations);
}

const char *store_migration(int i)
{
	return migrations[i];
}

/* A full disk has a code of its own (a server answers 507, not 500). */
static berth_code db_code(store *s)
{
	return (sqlite3_errcode(s->db) & 0xff) == SQLITE_FULL ? BERTH_ENOSPC : BERTH_EIO;
}

int store_db_fail(store *s, berth_error **err, const char *what)
{
	return berth_fail(err, db_code(s), "store %s: %s: %s", s->path, what, sqlite3_errmsg(s->db));
}

int store_db_exec(store *s, const char *sql, berth_error **err)
{
	char *msg = NULL;
	if (sqlite3_exec(store_db(s), sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	int rc = berth_fail(err, db_code(s), "store %s: %s", s->path, msg ? msg : "error");
	sqlite3_free(msg);
	return rc;
}

static int migrate(store *s, berth_error **err)
{
	sqlite3_stmt *st;
	if (store_stmt_get(s, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return store_db_fail(s, err, "reading the schema version");
	int version = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	store_stmt_put(s, st);
	int latest = (int)BERTH_ARRAY_SIZE(migrations);
	if (version > latest)
		return berth_fail(err, BERTH_EIO,
				  "store %s: schema version %d is newer than this berth knows (%d)",
				  s->path, version, latest);
	if (version == latest)
		return 0;
	if (store_begin(s, err))
		return -BERTH_EIO;
	/* another process may have migrated while this one waited */
	if (store_stmt_get(s, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK) {
		store_rollback(s);
		return store_db_fail(s, err, "reading the schema version");
	}
	version = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	store_stmt_put(s, st);
	for (int v = version; v < latest; v++) {
		char pragma[40];
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", v + 1);
		if (store_db_exec(s, migrations[v], err) || store_db_exec(s, pragma, err)) {
			store_rollback(s);
			return -BERTH_EIO;
		}
	}
	return store_commit(s, err);
}

/* Another process writes: wait for it, up to 10 s. SQLite's own timeout
 * sleeps 1 ms at first and then longer, while a berth transaction holds the
 * lock for a few tenths of one: a short sleep that doubles (50 µs to 2 ms)
 * takes the lock soon after it is free. */
static int busy_wait(void *ctx, int tries)
{
	store *s = ctx;
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	int64_t now = (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
	if (tries == 0)
		s->busy_since = now;
	else if (now - s->busy_since >= 10000)
		return 0;
	long us = tries < 6 ? 50L << tries : 2000;
	struct timespec ts = {0, us * 1000};
	nanosleep(&ts, NULL);
	return 1;
}

int store_open(store **out, const char *path, berth_error **err)
{
	*out = NULL;
	store *s = berth_calloc(1, sizeof(*s));
	if (!s || !(s->path = berth_strdup(path))) {
		free(s);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
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
	s->ckpt_pages = 100;
	if (wal_sync_get(path, &s->sync, err) || connect_db(s, err) || migrate(s, err)) {
		store_close(s);
		return -BERTH_EIO;
	}
	*out = s;
	return 0;
}

/* The connection to s->path, set up as every one is. */
static int connect_db(store *s, berth_error **err)
{
	int rc = sqlite3_open_v2(s->path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
						      SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE, NULL);
	if (rc != SQLITE_OK)
		return berth_fail(err, BERTH_EIO, "cannot open the store %s: %s", s->path,
				  s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
	sqlite3_busy_handler(s->db, busy_wait, s);
	/* the last connection to close would checkpoint the WAL into the database
	 * and fsync both: milliseconds at the end of every berth command. The WAL
	 * is checkpointed as it grows instead (every 1000 pages), by whoever writes */
	sqlite3_db_config(s->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	/* WAL: readers never wait for writers; NORMAL: a commit survives a
	 * crash of berth, and sync.c fsyncs the WAL after it, outside the write
	 * lock and shared by the commits of the moment, before anyone is told
	 * of it (SQLite's FULL would fsync under the lock, one commit at a
	 * time). journal_mode=WAL comes first: on a new store, SQLite writes
	 * the database's header under its default synchronous=FULL.
	 * The first process to open the store reads the whole WAL to index it
	 * (0.5 to 1.5 ms for the 1000 pages of SQLite's default), so the WAL is
	 * checkpointed every 100 pages (ckpt_pages, by sync.c's hook, which
	 * replaces SQLite's wal_autocheckpoint); a server raises it (store_long_lived) */
	rc = store_db_exec(s, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON",
			   err);
	if (!rc)
		sqlite3_wal_hook(s->db, store_on_commit, s);
	return rc;
}

int store_suspend(store *s)
{
	for (size_t i = 0; i < STMT_CACHE; i++) {
		sqlite3_finalize(s->cache[i].st);
		free(s->cache[i].sql);
		s->cache[i] = (stmt_slot){0};
	}
	if (sqlite3_close(s->db) != SQLITE_OK)
		return -1;
	s->db = NULL;
	return 0;
}

int store_resume(store *s, berth_error **err)
{
	if (s->db)
		return 0;
	int rc = connect_db(s, err);
	if (rc) {
		sqlite3_close(s->db);
		s->db = NULL;
	}
	return rc;
}

void store_long_lived(store *s)
{
	s->ckpt_pages = 1000;
}

void store_close(store *s)
{
	if (!s)
		return;
	store_sync(s, NULL);
	for (size_t i = 0; i < STMT_CACHE; i++) {
		sqlite3_finalize(s->cache[i].st);
		free(s->cache[i].sql);
	}
	sqlite3_close(s->db);
	wal_sync_put(s->sync);
	free(s->cols);
	free(s->insert);
	free(s->update);
	free(s->project);
	free(s->path);
	free(s);
}

int store_begin(store *s, berth_error **err)
{
	return store_db_exec(s, "BEGIN IMMEDIATE", err);
}

int store_commit(store *s, berth_error **err)
{
	return store_db_exec(s, "COMMIT", err);
}

void store_rollback(store *s)
{
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

int64_t store_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- any statement ---------------------------------------------------------------- */

int store_prepare_args(store *s, const char *sql, const store_arg *args, size_t nargs,
			sqlite3_stmt **st, berth_error **err)
{
	if (store_stmt_get(s, sql, -1, st, NULL) != SQLITE_OK)
		return store_db_fail(s, err, "preparing a statement");
	int rc = SQLITE_OK;
	for (size_t i = 0; rc == SQLITE_OK && i < nargs; i++) {
		int k = (int)i + 1;
		const store_arg *a = &args[i];
		if (a->kind == 'i')
			rc = sqlite3_bind_int64(*st, k, a->i);
		else if (a->kind == 'b')
			rc = sqlite3_bind_blob64(*st, k, a->blob, a->len, SQLITE_STATIC);
		else
			rc = a->s ? sqlite3_bind_text(*st, k, a->s, -1, SQLITE_STATIC)
				  : sqlite3_bind_null(*st, k);
	}
	if (rc != SQLITE_OK) {
		store_stmt_put(s, *st);
		return store_db_fail(s, err, "binding a statement");
	}
	return 0;
}

int store_exec_args(store *s, const char *sql, const store_arg *args, size_t nargs, berth_error **err)
{
	sqlite3_stmt *st;
	int rc = store_prepare_args(s, sql, args, nargs, &st, err);
	if (rc)
		return rc;
	int step = sqlite3_step(st);
	if (step == SQLITE_DONE)
		rc = sqlite3_changes(s->db);
	else if ((sqlite3_extended_errcode(s->db) & 0xff) == SQLITE_CONSTRAINT)
		rc = berth_fail(err, BERTH_ECONFLICT, "it exists already");
	else
		rc = store_db_fail(s, err, "writing");
	store_stmt_put(s, st);
	return rc;
}

/* The first column of the first row: a copy of its text, or its integer. */
static int select_first(store *s, const char *sql, const store_arg *args, size_t nargs,
			char **text, int64_t *num, berth_error **err)
{
	sqlite3_stmt *st;
	int rc = store_prepare_args(s, sql, args, nargs, &st, err);
	if (rc)
		return rc;
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
		if (num)
			*num = sqlite3_column_int64(st, 0);
		else if (!(*text = berth_strdup((const char *)sqlite3_column_text(st, 0))))
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
	} else if (step != SQLITE_ROW && step != SQLITE_DONE) {
		rc = store_db_fail(s, err, "reading");
	}
	store_stmt_put(s, st);
	return rc;
}

int store_select_text(store *s, const char *sql, const store_arg *args, size_t nargs, char **out,
		      berth_error **err)
{
	*out = NULL;
	return select_first(s, sql, args, nargs, out, NULL, err);
}

int store_select_int(store *s, const char *sql, const store_arg *args, size_t nargs, int64_t *out,
		     berth_error **err)
{
	*out = 0;
	return select_first(s, sql, args, nargs, NULL, out, err);
}

int store_data_version(store *s, int64_t *version, berth_error **err)
{
	return store_select_int(s, "PRAGMA data_version", NULL, 0, version, err);
}

/* ---- shared by the store's files ---------------------------------------------------- */

int store_col_text(sqlite3_stmt *st, int i, char **out)
{
	*out = NULL;
	const char *v = (const char *)sqlite3_column_text(st, i);
	if (!v)
		return sqlite3_column_type(st, i) == SQLITE_NULL ? 0 : -1;
	return (*out = berth_strdup(v)) ? 0 : -1;
}

void *store_grow(void *list, size_t size, size_t n, size_t *cap)
{
	if (list && n < *cap)
		return list;
	size_t want = *cap > n ? *cap : n ? n * 2 : 8;
	void *grown = berth_realloc(list, want * size);
	if (grown)
		*cap = want;
	return grown;
}

int store_checkpoint(store *s, berth_error **err)
{
	int64_t busy;
	return store_select_int(s, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, 0, &busy, err);
}
