/*
 * store.c - the store's handle (see store.h): opening it on its driver, the
 * schema and its migrations, transactions, the cache of prepared statements,
 * and what the other files of the store share to run SQL (store_internal.h).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store/store_internal.h"

static int connect_db(store *s, berth_error **err);

db *store_conn(store *s)
{
	/* a connection lost (its server restarted, or ended it) is opened anew
	 * once none of its statements is in use: the call that found it lost
	 * failed, the next one works */
	if (s->db && s->ops->broken(s->db))
		store_suspend(s);
	if (!s->db)
		store_resume(s, NULL);
	return s->db;
}

/* The connection (opened again when lost or suspended), or a failure in err. */
static int connected(store *s, berth_error **err)
{
	return store_conn(s) || !store_resume(s, err) ? 0 : -BERTH_EIO;
}

db_stmt *store_stmt_get(store *s, const char *sql)
{
	if (!store_conn(s))
		return NULL;
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
			return c->st;
		}
	}
	db_stmt *st = NULL;
	int rc = s->ops->prepare(s->db, sql, free_slot != NULL, &st);
	if (rc) {
		s->nomem = rc == DB_NOMEM;
		return NULL;
	}
	if (free_slot && (free_slot->sql = berth_strdup(sql))) {
		free_slot->st = st;
		free_slot->busy = true;
	}
	return st;
}

void store_stmt_put(store *s, db_stmt *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < STMT_CACHE; i++)
		if (s->cache[i].st == st && s->cache[i].busy) {
			s->cache[i].busy = false;
			s->ops->reset(st);
			return;
		}
	s->ops->finalize(st);
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
	/* 17: each worker's samples in order (its count, its thinning and its last one
	 * read that worker's alone: a run of 1000 workers had each sample count the
	 * whole run's, and /metrics read every sample of every Running run) */
	"CREATE INDEX samples_worker ON samples(run_id, rank, t);",
};

int store_migrations(void)
{
	return (int)BERTH_ARRAY_SIZE(migrations);
}

const char *store_migration(int i)
{
	return migrations[i];
}

/* PostgreSQL's migrations after its schema of STORE_PG_BASE (schema_pg.c): one
 * for each of migrations[] past it, in the same order */
static const char *const pg_migrations[] = {
	/* 15: as SQLite's */
	"ALTER TABLE tokens ADD COLUMN expires BIGINT;"
	"ALTER TABLE tokens ADD COLUMN revoked BIGINT;"
	"ALTER TABLE tokens ADD COLUMN last_used BIGINT;",
	/* 16: as SQLite's */
	"ALTER TABLE tokens ADD COLUMN maker TEXT;",
	/* 17: as SQLite's */
	"CREATE INDEX samples_worker ON samples(run_id, rank, t);",
};
_Static_assert(STORE_PG_BASE + BERTH_ARRAY_SIZE(pg_migrations) == BERTH_ARRAY_SIZE(migrations),
	       "each schema past STORE_PG_BASE needs its PostgreSQL migration in pg_migrations[]");

/* A full disk has a code of its own (a server answers 507, not 500). */
static berth_code db_code(store *s)
{
	return s->db && s->ops->fault(s->db) == DB_F_FULL ? BERTH_ENOSPC : BERTH_EIO;
}

static const char *db_msg(store *s)
{
	return s->db ? s->ops->errmsg(s->db) : "not connected";
}

int store_db_fail(store *s, berth_error **err, const char *what)
{
	if (s->nomem) {
		s->nomem = false;
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	return berth_fail(err, db_code(s), "store %s: %s: %s", s->path, what, db_msg(s));
}

int store_db_exec(store *s, const char *sql, berth_error **err)
{
	if (connected(s, err))
		return -BERTH_EIO;
	if (s->ops->exec(s->db, sql) == 0)
		return 0;
	return berth_fail(err, db_code(s), "store %s: %s", s->path, db_msg(s));
}

/* The steps from version v to the next. */
static int migrate_step(store *s, int64_t v, berth_error **err)
{
	if (store_dialect(s) == DB_SQLITE)
		return store_db_exec(s, migrations[v], err);
	for (size_t i = 0; v == 0 && store_pg_schema[i]; i++)
		if (store_db_exec(s, store_pg_schema[i], err))
			return -BERTH_EIO;
	if (v == 0)
		return 0;
	if (v < STORE_PG_BASE)
		return berth_fail(err, BERTH_EIO, "store %s: schema version %lld is older than any "
				  "PostgreSQL store of berth", s->path, (long long)v);
	return store_db_exec(s, pg_migrations[v - STORE_PG_BASE], err);
}

static int migrate(store *s, berth_error **err)
{
	int64_t version = 0;
	if (s->ops->schema_version(s->db, &version))
		return store_db_fail(s, err, "reading the schema version");
	int64_t latest = (int64_t)BERTH_ARRAY_SIZE(migrations);
	if (version > latest)
		return berth_fail(err, BERTH_EIO,
				  "store %s: schema version %lld is newer than this berth knows (%lld)",
				  s->path, (long long)version, (long long)latest);
	if (version == latest)
		return 0;
	if (store_begin(s, err))
		return -BERTH_EIO;
	/* another process may have migrated while this one waited */
	if (s->ops->schema_version(s->db, &version)) {
		int rc = store_db_fail(s, err, "reading the schema version");
		store_rollback(s);
		return rc;
	}
	while (version < latest) {
		/* a new PostgreSQL store is made at STORE_PG_BASE in one step */
		int64_t next = store_dialect(s) == DB_PG && version == 0 ? STORE_PG_BASE : version + 1;
		berth_error *e = NULL;
		if (migrate_step(s, version, &e) || s->ops->set_schema_version(s->db, next)) {
			berth_code code = e ? berth_error_code(e) : db_code(s);
			if (code == BERTH_EIO)
				/* a store whose tables are not those its version says (made
				 * by another build of berth) fails here: said so, not only
				 * in SQL's words */
				berth_fail(err, BERTH_EIO,
					   "store %s: cannot migrate it from schema %lld to %lld (%s): "
					   "its tables are not those of schema %lld (was this data dir "
					   "used by another build of berth?); restore a backup (berth "
					   "admin restore) or use another BERTH_HOME",
					   s->path, (long long)version, (long long)next, db_msg(s),
					   (long long)version);
			else /* a full disk, no memory: as they are */
				berth_fail(err, code, "store %s: cannot migrate it from schema %lld to "
					   "%lld: %s", s->path, (long long)version, (long long)next,
					   e ? berth_error_get(e, 0)->message : db_msg(s));
			berth_error_free(e);
			store_rollback(s);
			return -BERTH_EIO;
		}
		version = next;
	}
	return store_commit(s, err);
}

int store_open(store **out, const char *where, berth_error **err)
{
	*out = NULL;
	store *s = berth_calloc(1, sizeof(*s));
	if (!s || !(s->where = berth_strdup(where)) || !(s->path = db_display(where))) {
		if (s)
			free(s->where);
		free(s);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	s->ops = db_driver(where);
	/* a commit is durable before the call that made it returns: SQLite's by the
	 * group fsync of its WAL (sync.c), PostgreSQL's by its own commit */
	s->ckpt_pages = 100;
	if ((store_dialect(s) == DB_SQLITE && wal_sync_get(where, &s->sync, err)) || connect_db(s, err) ||
	    migrate(s, err)) {
		store_close(s);
		return -BERTH_EIO;
	}
	*out = s;
	return 0;
}

/* The connection to s->where, set up as every one is. */
static int connect_db(store *s, berth_error **err)
{
	char msg[512] = "";
	if (s->ops->open(&s->db, s->where, msg, sizeof(msg)))
		return berth_fail(err, BERTH_EIO, "cannot open the store %s: %s", s->path, msg);
#ifdef BERTH_FAULT_INJECTION
	/* tests: one line a connection, its pid (how many a launch opens) */
	char pid[24];
	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	berth_test_note("BERTH_TEST_STORE_OPEN_LOG", pid);
#endif
	/* each commit (SQLite's WAL hook): numbered for sync.c, and the WAL
	 * checkpointed every ckpt_pages pages (a server raises it: store_long_lived) */
	s->ops->commit_hook(s->db, store_on_commit, s);
	return 0;
}

static void drop_cache(store *s)
{
	for (size_t i = 0; i < STMT_CACHE; i++) {
		if (s->cache[i].st)
			s->ops->finalize(s->cache[i].st);
		free(s->cache[i].sql);
		s->cache[i] = (stmt_slot){0};
	}
}

int store_suspend(store *s)
{
	for (size_t i = 0; i < STMT_CACHE; i++)
		if (s->cache[i].busy)
			return -1;
	drop_cache(s);
	if (s->db)
		s->ops->close(s->db);
	s->db = NULL;
	return 0;
}

int store_resume(store *s, berth_error **err)
{
	if (s->db)
		return 0;
	return connect_db(s, err);
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
	drop_cache(s);
	if (s->db)
		s->ops->close(s->db);
	wal_sync_put(s->sync);
	free(s->cols);
	free(s->insert);
	free(s->update);
	free(s->project);
	free(s->path);
	free(s->where);
	free(s);
}

int store_begin(store *s, berth_error **err)
{
	if (connected(s, err))
		return -BERTH_EIO;
	return s->ops->begin(s->db) ? store_db_fail(s, err, "beginning a transaction") : 0;
}

int store_commit(store *s, berth_error **err)
{
	return store_db_exec(s, "COMMIT", err);
}

void store_rollback(store *s)
{
	if (s->db)
		s->ops->exec(s->db, "ROLLBACK");
}

/* A savepoint inside a transaction; outside one, a transaction of its own */
int store_part_begin(store *s, berth_error **err)
{
	if (connected(s, err))
		return -BERTH_EIO;
	s->part_own = !s->ops->in_transaction(s->db);
	return store_db_exec(s, s->part_own ? "BEGIN" : "SAVEPOINT part", err);
}

int store_part_end(store *s, bool ok, berth_error **err)
{
	if (ok)
		return store_db_exec(s, s->part_own ? "COMMIT" : "RELEASE part", err);
	if (s->part_own)
		store_rollback(s);
	else
		store_db_exec(s, "ROLLBACK TO part; RELEASE part", NULL);
	return 0;
}

int store_lead(store *s, berth_error **err)
{
	if (connected(s, err))
		return -BERTH_EIO;
	int rc = s->ops->try_lead(s->db);
	if (rc >= 0)
		return rc;
	rc = store_db_fail(s, err, "taking the lead");
	/* a lost connection: a new one next time (which takes the lead when free) */
	store_suspend(s);
	return rc;
}

int64_t store_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- any statement ---------------------------------------------------------------- */

int store_prepare_args(store *s, const char *sql, const store_arg *args, size_t nargs,
		       db_stmt **st, berth_error **err)
{
	if (!(*st = store_stmt_get(s, sql)))
		return store_db_fail(s, err, "preparing a statement");
	int rc = 0;
	for (size_t i = 0; !rc && i < nargs; i++) {
		int k = (int)i + 1;
		const store_arg *a = &args[i];
		if (a->kind == 'i')
			rc = db_bind_int(*st, k, a->i);
		else if (a->kind == 'b')
			rc = db_bind_blob(*st, k, a->blob, a->len);
		else
			rc = db_bind_text(*st, k, a->s);
	}
	if (rc) {
		store_stmt_put(s, *st);
		return store_db_fail(s, err, "binding a statement");
	}
	return 0;
}

int store_exec_args(store *s, const char *sql, const store_arg *args, size_t nargs, berth_error **err)
{
	db_stmt *st;
	int rc = store_prepare_args(s, sql, args, nargs, &st, err);
	if (rc)
		return rc;
	int step = db_step(st);
	db_fault f = step == DB_DONE ? DB_F_OTHER : s->ops->fault(s->db);
	if (step == DB_DONE)
		rc = (int)db_changes(s->db);
	else if (f == DB_F_UNIQUE || f == DB_F_CONSTRAINT)
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
	db_stmt *st;
	int rc = store_prepare_args(s, sql, args, nargs, &st, err);
	if (rc)
		return rc;
	int step = db_step(st);
	if (step == DB_ROW && !db_col_null(st, 0)) {
		if (num)
			*num = db_col_int(st, 0);
		else if (!(*text = berth_strdup(db_col_text(st, 0))))
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
	} else if (step != DB_ROW && step != DB_DONE) {
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
	*version = 0;
	if (connected(s, err))
		return -BERTH_EIO;
	return s->ops->data_version(s->db, version) ? store_db_fail(s, err, "reading the version") : 0;
}

/* ---- shared by the store's files ---------------------------------------------------- */

int store_col_text(db_stmt *st, int i, char **out)
{
	*out = NULL;
	const char *v = db_col_text(st, i);
	if (!v)
		return db_col_null(st, i) ? 0 : -1;
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
	if (connected(s, err))
		return -BERTH_EIO;
	return s->ops->checkpoint(s->db) ? store_db_fail(s, err, "checkpointing") : 0;
}
