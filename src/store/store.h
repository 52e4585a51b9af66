/*
 * store.h - berth's durable state in SQLite: runs and their events, projects,
 * registered functions, API tokens, sealed secrets.
 *
 * One database file under the data dir, in WAL mode so that readers (berth
 * get, berth logs) never wait for the supervisors that write. The schema is
 * versioned with PRAGMA user_version and migrated forward on open. Writers
 * that read-modify-write (the scheduler) use store_begin(), an IMMEDIATE
 * transaction, so two processes never admit runs against the same capacity.
 *
 * The store speaks types: each function names what it reads or writes, and
 * hands back plain structs that the caller frees with the matching _free.
 * SQL is written in src/store/ alone, and nothing here formats output.
 */
#ifndef BERTH_STORE_H
#define BERTH_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/selector.h"
#include "berth/backend.h"

typedef struct store store;

/* A run as the local backend keeps it: the public record plus what its
 * supervisor needs to start it. */
typedef struct store_run {
	berth_run_info info;
	char *spec;          /* as written */
	char *argv;          /* NUL-separated, argv_len bytes */
	size_t argv_len;
	char *env;           /* NUL-separated NAME=VALUE, env_len bytes (no secrets) */
	size_t env_len;
	char *worker_env;    /* a distributed run's: NUL-separated NAME=VALUE that each worker
			        gets, where {rank} is its index and {port} the rendezvous
			        port its supervisor picked; worker_env_len bytes */
	size_t worker_env_len;
	char *launcher;      /* a distributed job's distributed.launcher; NULL: none */
	char *secret_env;    /* comma-separated secret names, resolved at start */
	char *volumes;       /* per volume 6 NUL-terminated fields (local.c plan_volumes): */
	size_t volumes_len;  /* KIND NAME SOURCE MOUNT_PATH LIFE SIZE; volumes_len bytes */
	char *workdir;
	int64_t uid, gid, fs_group; /* -1: unset */
	int64_t pids_max;    /* processes at most; 0: no limit */
	int64_t disk_limit;  /* bytes of log, work dir and volumes at most; 0: no limit */
	/* what the run counts against its project's quota (berth_usage_add: cpu and
	 * mem requests and gpu limits, times its pods): millicores, bytes, gpus */
	int64_t quota_cpu_milli, quota_mem, quota_gpus;
	/* the quota it was accepted under, which it waits for whoever runs the
	 * queue: the policy's quotas entry (the project's or "default"), "" none,
	 * NULL not recorded (a run of an older berth: the queue's policy holds it);
	 * its limits in the units above and runs, -1 where it sets none */
	char *quota_of;
	int64_t qlim_cpu_milli, qlim_mem, qlim_gpus, qlim_runs;
	int64_t timeout;     /* seconds; 0: none */
	int64_t retries;
	bool restart;        /* serve: started again whenever it exits */
	int64_t grace;       /* seconds from SIGTERM to SIGKILL */
	bool keep_volumes;   /* persistent_volume_claim directories outlive the run */
	int64_t supervisor_pid, supervisor_start; /* start time in clock ticks (/proc) */
	int64_t pid;
	bool stop_requested;
	char *cgroup;        /* the cgroup's name, when one was made */
	int64_t doc;         /* the index of its document in spec */
	int64_t seq;         /* the row's place in the store: the order of submission */
	int64_t rv;          /* the store's version at its last change (store_run_changes) */
} store_run;

/* A handle is one SQLite connection: one thread uses it at a time. Handles
 * are independent: several, on one file, may be used by as many threads at
 * once (a server's readers, each with its own), and a reader never waits for
 * a writer (WAL): it reads what was committed when its statement began. */
int store_open(store **out, const char *path, berth_error **err);
void store_close(store *s);
/* SQLite's state of a process's open databases is not for a child of fork
 * to use: a process that forks closes its connection first (statements
 * included; -1 when one is still running). It is opened again by
 * store_resume, or by the handle's next use (a failure leaves every call
 * failing until an open succeeds). */
int store_suspend(store *s);
int store_resume(store *s, berth_error **err);
/* For a connection that stays open (the server's): the WAL is checkpointed
 * every 1000 pages rather than 100. Fewer checkpoints (each an fsync) cost
 * a larger WAL, which only the first process to open the store reads. */
void store_long_lived(store *s);

/* Durability (sync.c): every commit is on disk (the WAL fsynced) before the
 * call that made it returns, unless BERTH_STORE_SYNC=normal. With defer, a
 * handle's commits are made durable by store_sync instead, which its caller
 * calls before it tells anyone of them (a server, before it answers): the
 * commits of threads that wait at once share one fsync. Returns whether it
 * deferred before. */
bool store_defer_sync(store *s, bool defer);
/* Waits until the handle's commits are on disk (at once when they are). */
int store_sync(store *s, berth_error **err);
/* The number of the handle's last commit not yet known durable (0: none),
 * which the handle forgets: the caller makes it durable with store_sync_to,
 * with any handle of the same store in this process, from any thread. */
uint64_t store_sync_take(store *s);
int store_sync_to(store *s, uint64_t seq, berth_error **err);
/* The process's commits to this store, how many of them are known durable,
 * and the fsyncs that made them so (all 0 with BERTH_STORE_SYNC=normal). */
void store_sync_stats(store *s, uint64_t *committed, uint64_t *durable, uint64_t *fsyncs);

int store_begin(store *s, berth_error **err);  /* BEGIN IMMEDIATE (waits for other writers) */
int store_commit(store *s, berth_error **err);
void store_rollback(store *s);

int store_run_insert(store *s, const store_run *r, berth_error **err);
/* BERTH_EARG "no run ..." when there is none. */
int store_run_get(store *s, const char *id, store_run **out, berth_error **err);
/* Runs in state (< 0: any) of backend kind (NULL: any); newest first, or
 * the queue order (priority, then submission) when queue is true. */
/* A run's supervisor as recovery checks it, of every Running run of backend. */
typedef struct store_supervised {
	char *id;
	int64_t supervisor_pid, supervisor_start, started;
} store_supervised;
int store_run_supervised(store *s, const char *backend, store_supervised **out, size_t *n,
			 berth_error **err);
void store_supervised_free(store_supervised *list, size_t n);
int store_run_list(store *s, const char *backend, int state, bool queue, store_run ***out,
		   size_t *n, berth_error **err);
/* Which runs a query returns: newest first, or in the queue's order. */
typedef struct store_query {
	const char *const *projects; /* any of these projects; none: every project */
	size_t nprojects;
	int state;                   /* < 0: any */
	int64_t after;               /* > 0: only runs submitted before the one of this seq */
	int64_t limit;               /* <= 0: no limit */
	bool queue;                  /* priority, then submission; else newest first */
	const char *backend;         /* runs of this kind only; NULL: every kind */
	const int64_t *fit;          /* cpu milli, mem, gpus, disk: only runs whose requests are
					within these (that could start now); NULL: any */
	const label_selector *labels;      /* only runs whose labels it selects; NULL: any */
} store_query;
/* Newest first, a page (limit, and after = the last seq of the page before) is
 * read from an index in the order it is shown, from its cursor on: it costs
 * the same however many runs the store holds, for every project or some of
 * them, in one state or any. A project named twice counts once. Projects
 * beyond what one statement merges (100 in any state, 500 in one) are read
 * in parts of that many, a page of each, and the newest runs of all kept. */
int store_run_query(store *s, const store_query *q, store_run ***out, size_t *n, berth_error **err);
/* How SQLite reads q: EXPLAIN QUERY PLAN's steps, one a line, indented two
 * spaces a level ("SEARCH runs USING INDEX runs_state (state=? AND rowid<?)").
 * For tests and benchmarks; *out is the caller's to free. */
int store_run_query_plan(store *s, const store_query *q, char **out, berth_error **err);
/* The store's version: one more at every change to a run, by anyone. */
int store_version(store *s, int64_t *rv, berth_error **err);
/* What changed in the given projects (nprojects 0: all) after version since,
 * oldest change first: the runs changed (as they are now), at most limit, and
 * the ids of the runs deleted. *rv is the version to ask from next: the last
 * run's when limit was reached, else the store's (read before the changes,
 * so that nothing after it is missed). BERTH_EGONE when since is older than
 * the deletions kept (STORE_TOMBSTONES versions): list again. */
int store_run_changes(store *s, const char *const *projects, size_t nprojects, int64_t since,
		      int64_t limit, store_run ***runs, size_t *n, char ***deleted, size_t *ndeleted,
		      int64_t *rv, berth_error **err);
/* How SQLite reads store_run_changes' runs (as store_run_query_plan says). */
int store_run_changes_plan(store *s, const char *const *projects, size_t nprojects, char **out,
			   berth_error **err);
#define STORE_TOMBSTONES 10000
#define STORE_TOMBSTONES_TEXT "10000"

/* ---- samples (samples.c): a worker's use over time ---- */

typedef struct store_sample {
	int64_t rank, t;          /* the worker; milliseconds since the epoch */
	int64_t cpu_milli, mem;   /* CPU since the sample before, in millicores; bytes in use */
	int64_t gpu_util, gpu_mem; /* percent (mean of its GPUs), bytes; -1: not known */
} store_sample;
/* At most STORE_SAMPLES a worker: past it, store_sample_add keeps every other
 * one (the older half of the detail goes) and says so (1): the sampler then
 * samples half as often. */
#define STORE_SAMPLES 720
int store_sample_add(store *s, const char *run_id, const store_sample *x, berth_error **err);
/* The time of run_id's last sample (0: none). */
int store_sample_last(store *s, const char *run_id, int64_t *t, berth_error **err);
/* run_id's samples after t (ms; 0: all), oldest first; at most max (0: all),
 * ending at a whole t (the samples of the next t, all of them, are after
 * the last one's: a reader that asks again from it misses none). */
int store_sample_list(store *s, const char *run_id, int64_t after, size_t max, store_sample **out,
		      size_t *n, berth_error **err);
/* The last sample of each worker of every Running run, with its run's id and
 * project (for /metrics). */
typedef struct store_sample_of {
	char *id, *project;
	store_sample x;
} store_sample_of;
int store_sample_latest(store *s, store_sample_of **out, size_t *n, berth_error **err);
void store_sample_of_free(store_sample_of *list, size_t n);

void store_run_free(store_run *r);
void store_run_list_free(store_run **list, size_t n);

/* Writes back the fields the run's owner changes (state, reason, times, pid,
 * exit, usage, gpu_ids, cgroup); never stop_requested nor the supervisor,
 * which others set with the narrow updates below. */
int store_run_update(store *s, const store_run *r, berth_error **err);
/* Sets stop_requested (and grace when >= 0); BERTH_EARG when there is no such run. */
int store_run_request_stop(store *s, const char *id, int64_t grace, berth_error **err);
/* Whether a stop was asked for run id (false when there is no such run). */
int store_run_stop_requested(store *s, const char *id, bool *stop, berth_error **err);
int store_run_set_supervisor(store *s, const char *id, int64_t pid, int64_t start,
			     berth_error **err);
/* The backend kind a run was submitted to ("local", "kubernetes"): *kind is the
 * caller's to free, NULL when there is no such run. */
int store_run_kind(store *s, const char *id, char **kind, berth_error **err);
/* 1 when a run of this id is stored, 0 when there is none, or a negative code. */
int store_run_exists(store *s, const char *id, berth_error **err);
/* Deletes the run and its events, both or neither: 1 when deleted, 0 when
 * there was no such run. Inside the caller's transaction (store_begin) it is
 * part of it; outside one, a transaction of its own. */
int store_run_delete(store *s, const char *id, berth_error **err);
/* counts[state]: how many runs are in each state below n (0 for none);
 * runs in other states are not counted. */
int store_run_count_by_state(store *s, int64_t *counts, size_t n, berth_error **err);

/* Records a project: 1 when it is new, 0 when it existed, or a negative code. */
int store_project_add(store *s, const char *name, berth_error **err);

typedef struct store_project {
	char *name;
	int64_t created; /* ms since the epoch */
} store_project;
/* Every project when all, else those of names (n of them; a name twice counts
 * once, one that is not a project is left out); by name. */
int store_project_list(store *s, const char *const *names, size_t n, bool all,
		       store_project **out, size_t *count, berth_error **err);
void store_project_list_free(store_project *list, size_t n);

/* The uid of project's runs, from [min, max]: the one it has, else the next
 * one free (BERTH_EPOLICY when the range is used up). Never the same for two
 * projects, also when processes ask at once. */
int store_project_uid(store *s, const char *project, int64_t min, int64_t max, int64_t *uid,
		      berth_error **err);

/* Whether any run of backend is queued (Pending), read from the queue index
 * with no write lock; 1 when the store cannot say. */
int store_queued(store *s, const char *backend);
/* What the running runs of backend hold: the sums of cpu_milli, mem, gpus and
 * disk, and their GPU ids joined with commas (*gpu_ids NULL when none). */
int store_running(store *s, const char *backend, int64_t sum[4], char **gpu_ids, berth_error **err);
/* What the project's runs that hold its quota count (Running ones; Pending ones of a
 * cluster, applied there; not a local queued one): cpu milli, mem, gpus, runs. */
int store_usage(store *s, const char *project, int64_t sum[4], berth_error **err);
/* How many of the project's runs wait for its quota (Pending, "waiting for quota: ..."). */
int store_quota_waiting(store *s, const char *project, int64_t *n, berth_error **err);

/* Functions registered in a project: a spec, run by its name. */
typedef struct store_function {
	char *project, *name;
	char *spec;               /* the text as registered */
	int64_t created, updated; /* ms since the epoch */
} store_function;
/* Registers spec as project's function name, or replaces the one it has: 1
 * when it is new, 0 when it replaced one, or a negative code. */
int store_function_put(store *s, const char *project, const char *name, const char *spec,
		       berth_error **err);
/* *out NULL (and 0 returned) when there is no such function. */
int store_function_get(store *s, const char *project, const char *name, store_function **out,
		       berth_error **err);
/* The project's functions, by name. */
int store_function_list(store *s, const char *project, store_function **out, size_t *n,
			berth_error **err);
/* 1 when deleted, 0 when there was none. */
int store_function_delete(store *s, const char *project, const char *name, berth_error **err);
void store_function_free(store_function *f);
void store_function_list_free(store_function *list, size_t n);

/* Records what happened to a run (kind: "Submitted", ...; message may be NULL). */
int store_event(store *s, const char *run_id, const char *kind, const char *message);
typedef struct store_event_row {
	int64_t time;  /* ms since the epoch */
	char *kind;
	char *message; /* NULL: none */
} store_event_row;
/* The run's events, in the order they were recorded (none for an unknown run). */
int store_event_list(store *s, const char *run_id, store_event_row **out, size_t *n,
		     berth_error **err);
void store_event_list_free(store_event_row *list, size_t n);

/* The server's API tokens: the store keeps a token's hash, never the token. */
#define STORE_TOKEN_HASH 32
typedef struct store_token {
	char *id;
	unsigned char hash[STORE_TOKEN_HASH]; /* BLAKE2b; not read by store_token_list */
	int64_t role;        /* berth_role */
	char *projects;      /* comma-separated; "*": every project */
	char *description;   /* NULL: none */
	int64_t created;     /* ms since the epoch */
	int64_t expires;     /* ms since the epoch it is refused after; 0: never */
	int64_t revoked;     /* ms since the epoch it was revoked; 0: it is not */
	int64_t last_used;   /* ms since the epoch, to a minute (store_token_touch); 0: never */
	char *maker;         /* the id of the token that made it (a server's); NULL: a command */
} store_token;
/* BERTH_ECONFLICT when a token of this id or hash exists already, or when a made
 * token (t->maker) would pass a cap: its maker's tokens live or less than a day
 * old at t->created (made_max) or all the made ones (live_max), each counted when
 * > 0; BERTH_EAUTH when its maker is revoked or gone. Made tokens that ended 30
 * days before t->created are deleted first. A made token is counted and inserted by one writer at a
 * time (store_begin's lock; within the caller's transaction when it has one). */
int store_token_insert(store *s, const store_token *t, int64_t made_max, int64_t live_max,
		       berth_error **err);
/* The token of this hash: *out NULL (and 0 returned) when there is none. */
int store_token_find(store *s, const unsigned char hash[STORE_TOKEN_HASH], store_token **out,
		     berth_error **err);
/* Every token, oldest first (then by id). */
int store_token_list(store *s, store_token **out, size_t *n, berth_error **err);
/* The token of this id: *out NULL (and 0 returned) when there is none. */
int store_token_get(store *s, const char *id, store_token **out, berth_error **err);
/* Marks it revoked at time now (kept: a request with it is told so), and the
 * tokens it made (store_token.maker), theirs, and so on. 1 when one was
 * revoked now, 0 when there is none or all were revoked already. */
int store_token_revoke(store *s, const char *id, int64_t now, berth_error **err);
/* Its last use is now. */
int store_token_touch(store *s, const char *id, int64_t now, berth_error **err);
void store_token_free(store_token *t);
void store_token_list_free(store_token *list, size_t n);

/* Secrets: sealed values only; the store never sees a clear value. */
int store_secret_put(store *s, const char *project, const char *name, const void *sealed,
		     size_t len, berth_error **err);
/* *sealed NULL (and 0 returned) when there is no such secret. */
int store_secret_get(store *s, const char *project, const char *name, void **sealed,
		     size_t *len, berth_error **err);
int store_secret_names(store *s, const char *project, char ***names, size_t *n,
		       berth_error **err);
/* 1 when deleted, 0 when there was none. */
int store_secret_delete(store *s, const char *project, const char *name, berth_error **err);

int64_t store_now_ms(void);

/* Whether this handle leads the work that one server at a time does for a
 * store several servers share (reconciling): 1 it does, until its connection
 * ends (its process too, killed or not), 0 another handle does, or a
 * negative code. A handle whose connection was lost is connected again and
 * tries anew. SQLite: always 1 (one server on one data dir). Keep the handle
 * for nothing else: its connection holds the lead. */
int store_lead(store *s, berth_error **err);

/* PRAGMA data_version: a number that changes when another connection commits. */
int store_data_version(store *s, int64_t *version, berth_error **err);

/* ---- backup.c: backup and restore ---- */
/* A consistent copy of what s has committed, into path (empty or absent),
 * with the secret key (keylen bytes) when key is not NULL. */
int store_backup_into(store *s, const char *path, const void *key, size_t keylen,
		      berth_error **err);
/* The schema version this berth makes. */
int store_schema_latest(void);
/* Checks the store file at path (a copy nobody else uses; shown names it in
 * messages): whole (integrity_check), of a schema version this berth knows
 * and exactly its tables, indexes and triggers; the key of keylen bytes it
 * holds is copied to key (*has_key) and taken out of it. BERTH_EARG when it
 * is not a berth backup; store_open then migrates it up. */
int store_restore_check(const char *path, const char *shown, unsigned char *key, size_t keylen,
			bool *has_key, berth_error **err);
/* Makes the store at path (absent: nothing) whole in its database file: its
 * WAL checkpointed and removed as SQLite leaves WAL mode (the next store_open
 * enters it again), so that another file can take its place, or be copied:
 * BERTH_ECONFLICT when another connection has it open. */
int store_retire(const char *path, berth_error **err);

/* Writes the WAL back into the database and truncates it (a benchmark's
 * load, before it measures reads). */
int store_checkpoint(store *s, berth_error **err);

#endif
