/*
 * store.h - berth's durable state in SQLite: runs, their events, secrets.
 *
 * One database file under the data dir, in WAL mode so that readers (berth
 * get, berth logs) never wait for the supervisors that write. The schema is
 * versioned with PRAGMA user_version and migrated forward on open. Writers
 * that read-modify-write (the scheduler) use store_begin(), an IMMEDIATE
 * transaction, so two processes never admit runs against the same capacity.
 */
#ifndef BERTH_STORE_H
#define BERTH_STORE_H

#include <stdbool.h>
#include <stdint.h>

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
	char *secret_env;    /* comma-separated secret names, resolved at start */
	char *volumes;       /* one per line: TYPE\tNAME\tDIR\tMOUNT_PATH\tREADONLY */
	char *workdir;
	int64_t uid, gid, fs_group; /* -1: unset */
	int64_t timeout;     /* seconds; 0: none */
	int64_t retries;
	bool restart;        /* serve: started again whenever it exits */
	int64_t grace;       /* seconds from SIGTERM to SIGKILL */
	bool keep_volumes;   /* persistent_volume_claim directories outlive the run */
	int64_t supervisor_pid, supervisor_start; /* start time in clock ticks (/proc) */
	int64_t pid;
	bool stop_requested;
	char *cgroup;        /* the cgroup's name, when one was made */
} store_run;

int store_open(store **out, const char *path, berth_error **err);
void store_close(store *s);

int store_begin(store *s, berth_error **err);  /* BEGIN IMMEDIATE (waits for other writers) */
int store_commit(store *s, berth_error **err);
void store_rollback(store *s);

int store_run_insert(store *s, const store_run *r, berth_error **err);
/* BERTH_EARG "no run ..." when there is none. */
int store_run_get(store *s, const char *id, store_run **out, berth_error **err);
/* Runs in state (< 0: any) of project (NULL: any); newest first, or the
 * queue order (priority, then submission) when queue is true. */
int store_run_list(store *s, const char *project, int state, bool queue, store_run ***out,
		   size_t *n, berth_error **err);
void store_run_free(store_run *r);
void store_run_list_free(store_run **list, size_t n);

/* Writes back the fields the run's owner changes (state, reason, times, pid,
 * exit, usage, gpu_ids, cgroup); never stop_requested nor the supervisor,
 * which others set with the narrow updates below. */
int store_run_update(store *s, const store_run *r, berth_error **err);
/* Sets stop_requested (and grace when >= 0); BERTH_EARG when there is no such run. */
int store_run_request_stop(store *s, const char *id, int64_t grace, berth_error **err);
int store_run_set_supervisor(store *s, const char *id, int64_t pid, int64_t start,
			     berth_error **err);

int store_event(store *s, const char *run_id, const char *kind, const char *message);

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

#endif
