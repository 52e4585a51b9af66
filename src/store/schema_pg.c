/*
 * schema_pg.c - the store's schema in PostgreSQL, at version STORE_PG_BASE
 * (store.c's migrations[] up to it, written at once for a new store; the
 * later ones are store.c's pg_migrations[]).
 *
 * Tables and columns as SQLite's, with these differences:
 *   - BIGINT for INTEGER, BYTEA for BLOB; text that is sorted or compared
 *     (ids, names) in the "C" collation, as SQLite compares bytes;
 *   - runs, events and samples have a seq column (BIGSERIAL) where SQLite
 *     has its rowid: the driver writes rowid as seq;
 *   - the few functions of SQLite's that the store's SQL uses (instr,
 *     ifnull, group_concat) are defined here;
 *   - the watch's version (rv) is kept by PL/pgSQL triggers. Every statement
 *     that writes runs takes the rv row's lock first (a statement trigger),
 *     before any row of runs: the versions are given in the order of the
 *     commits, as SQLite's one writer gives them, and two writers of runs
 *     never wait for each other's rows the other way round (no deadlock);
 *   - the schema's version is in berth_schema (SQLite: PRAGMA user_version).
 */
#include "store/store_internal.h"

/* in parts: a C string has 4095 bytes at most */
const char *const store_pg_schema[] = {
	"CREATE TABLE runs ("
	" seq BIGSERIAL UNIQUE,"
	" id TEXT COLLATE \"C\" PRIMARY KEY, name TEXT NOT NULL, project TEXT COLLATE \"C\" NOT NULL,"
	" backend TEXT NOT NULL, profile TEXT, image TEXT, action TEXT, state BIGINT NOT NULL,"
	" reason TEXT, priority_class TEXT, priority BIGINT NOT NULL DEFAULT 0,"
	" created BIGINT NOT NULL, started BIGINT, finished BIGINT,"
	" cpu_milli BIGINT, mem BIGINT, gpus BIGINT, disk BIGINT,"
	" cpu_limit_milli BIGINT, mem_limit BIGINT, gpu_ids TEXT,"
	" exit_code BIGINT, signal BIGINT, oom_killed BIGINT, attempts BIGINT,"
	" cpu_usage_ns BIGINT, mem_peak BIGINT, enforcement TEXT, log_path TEXT, effective TEXT,"
	" spec TEXT, argv BYTEA, env BYTEA, secret_env TEXT, volumes BYTEA, workdir TEXT,"
	" uid BIGINT, gid BIGINT, fs_group BIGINT, timeout BIGINT, retries BIGINT,"
	" restart BIGINT, grace BIGINT, keep_volumes BIGINT, supervisor_pid BIGINT,"
	" supervisor_start BIGINT, pid BIGINT, stop_requested BIGINT NOT NULL DEFAULT 0, cgroup TEXT,"
	" doc BIGINT NOT NULL DEFAULT 0, target TEXT,"
	" pids_max BIGINT NOT NULL DEFAULT 0, disk_limit BIGINT NOT NULL DEFAULT 0,"
	" quota_cpu_milli BIGINT NOT NULL DEFAULT 0, quota_mem BIGINT NOT NULL DEFAULT 0,"
	" quota_gpus BIGINT NOT NULL DEFAULT 0,"
	" workers BIGINT NOT NULL DEFAULT 1, worker_states TEXT, worker_env BYTEA, launcher TEXT,"
	" quota_of TEXT, qlim_cpu_milli BIGINT NOT NULL DEFAULT -1, qlim_mem BIGINT NOT NULL DEFAULT -1,"
	" qlim_gpus BIGINT NOT NULL DEFAULT -1, qlim_runs BIGINT NOT NULL DEFAULT -1,"
	" rv BIGINT NOT NULL DEFAULT 0, labels TEXT, submitted_by TEXT);"
	"CREATE INDEX runs_queue ON runs(state, priority DESC, created, cpu_milli, mem, gpus, disk,"
	" backend);",
	"CREATE INDEX runs_project ON runs(project, state, seq);"
	"CREATE INDEX runs_state ON runs(state, seq);"
	"CREATE INDEX runs_rv ON runs(rv);"
	"CREATE TABLE events (seq BIGSERIAL, run_id TEXT COLLATE \"C\" NOT NULL, time BIGINT NOT NULL,"
	" kind TEXT NOT NULL, message TEXT);"
	"CREATE INDEX events_run ON events(run_id, time);"
	"CREATE TABLE secrets (project TEXT COLLATE \"C\" NOT NULL, name TEXT COLLATE \"C\" NOT NULL,"
	" sealed BYTEA NOT NULL, updated BIGINT NOT NULL, PRIMARY KEY (project, name));"
	"CREATE TABLE projects (name TEXT COLLATE \"C\" PRIMARY KEY, created BIGINT NOT NULL);"
	"CREATE TABLE functions (project TEXT COLLATE \"C\" NOT NULL, name TEXT COLLATE \"C\" NOT NULL,"
	" spec TEXT NOT NULL, created BIGINT NOT NULL, updated BIGINT NOT NULL,"
	" PRIMARY KEY (project, name));"
	"CREATE TABLE tokens (id TEXT COLLATE \"C\" PRIMARY KEY, hash BYTEA NOT NULL UNIQUE,"
	" role BIGINT NOT NULL, projects TEXT NOT NULL, description TEXT, created BIGINT NOT NULL);"
	"CREATE TABLE project_uids (project TEXT COLLATE \"C\" PRIMARY KEY, uid BIGINT NOT NULL UNIQUE);"
	"CREATE TABLE samples (seq BIGSERIAL, run_id TEXT COLLATE \"C\" NOT NULL, rank BIGINT NOT NULL,"
	" t BIGINT NOT NULL, cpu_milli BIGINT NOT NULL, mem BIGINT NOT NULL,"
	" gpu_util BIGINT NOT NULL, gpu_mem BIGINT NOT NULL);"
	"CREATE INDEX samples_run ON samples(run_id, t);"
	"CREATE TABLE rv (v BIGINT NOT NULL);"
	"INSERT INTO rv (v) VALUES (0);"
	"CREATE TABLE tombstones (rv BIGINT PRIMARY KEY, id TEXT NOT NULL, project TEXT NOT NULL);"
	,
	/* SQLite's functions that the store's SQL uses */
	"CREATE FUNCTION instr(a TEXT, b TEXT) RETURNS BIGINT LANGUAGE sql IMMUTABLE AS"
	" 'SELECT strpos(a, b)::BIGINT';"
	"CREATE FUNCTION ifnull(a TEXT, b TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE AS"
	" 'SELECT coalesce(a, b)';"
	"CREATE FUNCTION group_concat_step(acc TEXT, v TEXT, sep TEXT) RETURNS TEXT LANGUAGE sql"
	" IMMUTABLE AS 'SELECT CASE WHEN v IS NULL THEN acc WHEN acc IS NULL THEN v"
	" ELSE acc || sep || v END';"
	"CREATE AGGREGATE group_concat(TEXT, TEXT) (SFUNC = group_concat_step, STYPE = TEXT);"
	/* the watch's version: see above */
	"CREATE FUNCTION runs_rv_lock() RETURNS trigger LANGUAGE plpgsql AS $$"
	" BEGIN PERFORM 1 FROM rv FOR UPDATE; RETURN NULL; END $$;"
	"CREATE FUNCTION runs_rv_write() RETURNS trigger LANGUAGE plpgsql AS $$"
	" BEGIN UPDATE rv SET v = v + 1 RETURNING v INTO NEW.rv; RETURN NEW; END $$;"
	"CREATE FUNCTION runs_rv_delete() RETURNS trigger LANGUAGE plpgsql AS $$"
	" DECLARE n BIGINT; BEGIN"
	" UPDATE rv SET v = v + 1 RETURNING v INTO n;"
	" INSERT INTO tombstones (rv, id, project) VALUES (n, OLD.id, OLD.project);"
	" DELETE FROM tombstones WHERE rv <= n - " STORE_TOMBSTONES_TEXT ";"
	" RETURN OLD; END $$;"
	"CREATE TRIGGER runs_rv_lock BEFORE INSERT OR UPDATE OR DELETE ON runs"
	" FOR EACH STATEMENT EXECUTE FUNCTION runs_rv_lock();"
	"CREATE TRIGGER runs_rv_write BEFORE INSERT OR UPDATE ON runs"
	" FOR EACH ROW EXECUTE FUNCTION runs_rv_write();"
	"CREATE TRIGGER runs_rv_delete AFTER DELETE ON runs"
	" FOR EACH ROW EXECUTE FUNCTION runs_rv_delete();"
	/* the version of the schema */
	"CREATE TABLE berth_schema (version BIGINT NOT NULL);"
	"INSERT INTO berth_schema (version) VALUES (0);",
	NULL,
};
