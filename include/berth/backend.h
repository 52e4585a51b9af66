/*
 * berth/backend.h - where runs run: submit a planned run, follow its state,
 * read its log, stop it, and find it again after a restart.
 *
 * One interface for every backend (product.md): "local", the embedded
 * default, runs the function's command as a process on this machine, with
 * its CPU and memory limits enforced through cgroups, GPUs handed out by
 * index, and a queue for runs that do not fit the free capacity yet
 * (docs/local.md). Its state lives in SQLite under the data dir
 * ($BERTH_HOME, default ~/.berth), so runs outlive the process that
 * submitted them: each running run has a supervisor process of its own.
 *
 * A backend handle is used by one thread at a time. Every function returns 0
 * or a negative berth_code with the reason in *err.
 */
#ifndef BERTH_BACKEND_H
#define BERTH_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "berth/error.h"
#include "berth/policy.h"
#include "berth/render.h"
#include "berth/run.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum berth_state {
	BERTH_STATE_PENDING = 0, /* queued: reason says what it waits for */
	BERTH_STATE_RUNNING,
	BERTH_STATE_SUCCEEDED,
	BERTH_STATE_FAILED,      /* reason: exit code, signal, OOMKilled, DeadlineExceeded, ... */
	BERTH_STATE_STOPPED,     /* berth stop */
} berth_state;

/* "Pending", "Running", ...; berth_state_parse returns -1 for an unknown name
 * (case-insensitive). */
const char *berth_state_name(berth_state s);
int berth_state_parse(const char *name);
bool berth_state_final(berth_state s);

/* What a backend knows of one run. Strings are owned by the record. */
typedef struct berth_run_info {
	char *id, *name, *project, *backend, *profile, *image, *action;
	berth_state state;
	char *reason;            /* one line; NULL when there is nothing to say */
	char *priority_class;
	int64_t priority;        /* the PriorityClass value that orders the queue */
	int64_t created, started, finished; /* Unix time in ms; 0 when not yet */
	int64_t cpu_milli, mem, gpus, disk; /* requests: every worker's together */
	int64_t workers;         /* a distributed job's workers; 1 for any other run */
	char *worker_states;     /* a distributed run's: each worker's state, by index,
				    comma-separated ("Running,Failed"); NULL when unknown */
	int64_t cpu_limit_milli, mem_limit; /* 0: none */
	char *gpu_ids;           /* "0,1" while it holds GPUs or after; NULL if none */
	int exit_code;           /* -1 when it did not exit by itself */
	int signal;              /* the signal that ended it, 0 if none */
	bool oom_killed;
	int attempts;            /* processes started (retries + 1 at most) */
	int64_t cpu_usage_ns;    /* from the cgroup, when there is one */
	int64_t mem_peak;        /* bytes; 0 when unknown */
	char *enforcement;       /* "cgroup v1", "cgroup v2" or "rlimits" */
	char *log_path;
	char *target;            /* where it runs on its backend: "Job ml-jobs/train-t1 on
				    https://10.0.0.1:6443" (kubernetes); NULL on the local one */
	char *effective;         /* the effective spec with origins when it was submitted
				    (berth explain -o json) */
	char *labels;            /* its labels (the spec's merged with the policy's), in
				    their order, as "key=value,key=value" (keys and values
				    never hold ',' or '='); NULL: none */
	char *submitted_by;      /* who submitted it: "token:ID" (through berth serve),
				    "user:NAME" (a berth command, by its Unix user),
				    "anonymous" (serve --insecure-local); NULL: not recorded */
} berth_run_info;

void berth_run_info_free(berth_run_info *info);
/* 0 when rank is one of the run's workers (0 to workers-1), else
 * BERTH_ENOTFOUND with a message that says how many it has. */
int berth_run_check_rank(const berth_run_info *info, int rank, berth_error **err);

/* Records as YAML or JSON: a list when list is set, else the first alone. */
int berth_run_info_format(berth_run_info *const *infos, size_t n, bool list, berth_format fmt,
			  char **out, size_t *len, berth_error **err);
void berth_run_info_list_free(berth_run_info **list, size_t n);

/*
 * Which runs a list returns. A label selector is kubectl's equality-based
 * one: terms joined by ',', each "key=value" (or "key==value": the run has
 * the label with that value), "key!=value" (it has not: another value, or no
 * such label), "key" (it has the label) or "!key" (it has not); every term
 * must hold. At most 1024 bytes and 32 terms; keys are qualified names and
 * values label values (BERTH_EARG with what is wrong otherwise).
 */
typedef struct berth_run_filter {
	const char *project;  /* NULL: every project */
	int state;            /* a berth_state; < 0: any */
	const char *selector; /* NULL or "": any labels */
	int64_t limit;        /* the newest limit runs; <= 0: all of them */
} berth_run_filter;
/* Every run: a filter that keeps them all. */
#define BERTH_RUN_FILTER_ALL {NULL, -1, NULL, 0}

/* The kinds of backend, in the order of the registry (the first is the
 * default): "local", "kubernetes"; NULL past the last. */
const char *berth_backend_kind_name(size_t i);

typedef struct berth_backend berth_backend;

typedef struct berth_backend_opts {
	const char *home;        /* data dir; NULL: $BERTH_HOME, else ~/.berth */
	const berth_policy *policy; /* local capacity, labels, priorities; NULL: built-in */
	const char *exe;         /* the berth binary that runs `berth __supervise ID`;
				    NULL: /proc/self/exe */
	bool passive;            /* open only: no recovery and no scheduling (a second
				    handle in a process that reconciles with its first) */
	bool existing;           /* only a data dir that exists: BERTH_ENOTFOUND when
				    there is none, and none is made (a reader: explain) */
	bool cached;             /* berth_backend_get and _list read the store only (a
				    server that reconciles every few seconds); else they
				    ask the cluster about unfinished kubernetes runs */
	const char *kubeconfig;  /* kubernetes: the kubeconfig file; NULL: $KUBECONFIG,
				    ~/.kube/config, else the pod's service account */
	const char *context;     /* kubernetes: the kubeconfig context; NULL: current */
	bool waits;              /* the caller will berth_backend_wait for the runs it
				    submits: each local supervisor this handle starts
				    keeps a pipe to it, which wakes the wait the moment
				    the run is done (else a watch on its dir does) */
	bool fork_supervisors;   /* the caller has one thread and keeps it so: a local
				    supervisor it waits for (waits) is forked from it
				    and runs in it, with the run's record, rather than
				    as a new berth process (no exec, no loading of
				    berth's libraries); false: posix_spawn of exe */
	bool serves;             /* a server's: the data dir is marked as served while the
				    handle is open (a shared lock on HOME/serve.lock, which
				    several servers may hold): berth_restore refuses it,
				    and the handle does not open during a restore
				    (BERTH_ECONFLICT) */
	bool defer_sync;         /* the handle's commits are made durable (on disk, not
				    only written) by berth_backend_sync, which the caller
				    calls before it tells anyone of them: the commits of
				    threads that wait at once share one fsync (a server's
				    workers, before they answer); false: each commit is
				    durable before the call that made it returns */
} berth_backend_opts;

/* Opens kind ("local" or "kubernetes"; NULL means local): the kind new runs
 * are submitted to. Runs of either kind in the data dir are followed,
 * stopped and read through the kind they were submitted to. Recovers on
 * open: a run whose supervisor died is marked Failed and what it left is
 * cleaned up, and queued runs that now fit are started; the kubernetes
 * kind connects to the cluster (docs/kubernetes.md) and brings its runs'
 * records up to what the cluster says. */
int berth_backend_open(berth_backend **out, const char *kind, const berth_backend_opts *opts,
		       berth_error **err);
void berth_backend_close(berth_backend *b);
/* Waits until every commit made through b is on disk (a handle opened with
 * defer_sync; at once for any other, or with BERTH_STORE_SYNC=normal, which
 * lets a power cut lose the last commits). BERTH_EIO when an fsync failed:
 * from then on every call fails, as what was written may be lost. */
int berth_backend_sync(berth_backend *b, berth_error **err);
/* berth_backend_sync in two halves, for a caller that waits elsewhere (a
 * server's thread that answers once the commits are on disk): the number of
 * b's last commit not yet known durable (0: none), which b forgets; then the
 * wait until that commit is on disk, through any handle of the same data
 * dir in this process (its own thread's). */
uint64_t berth_backend_sync_take(berth_backend *b);
int berth_backend_sync_to(berth_backend *b, uint64_t seq, berth_error **err);
/* This process's commits to b's store, and the fsyncs that made them durable
 * (fewer when commits shared one; both 0 with BERTH_STORE_SYNC=normal). */
void berth_backend_sync_stats(berth_backend *b, uint64_t *commits, uint64_t *fsyncs);
/* Uses policy from now on (a server's reload; the caller keeps the old one
 * alive while anything opened with it may still read it): what the kinds
 * took from the old one (the local machine's capacity and labels, its grace
 * period) is taken again. On failure the old one stays. */
int berth_backend_set_policy(berth_backend *b, const berth_policy *policy, berth_error **err);
/* The policy b uses. */
const berth_policy *berth_backend_policy(const berth_backend *b);

/* Checks that where the handle's kind runs has what the policy names (the
 * kubernetes kind: the namespace, each PriorityClass, the storage class, the
 * GPU resources, and the rights berth needs, through SelfSubjectAccessReview).
 * *report gets a line per check: "ok WHAT" or "missing WHAT: what fixes it".
 * Returns the number of problems (0: ready), or a negative berth_code. */
int berth_backend_check(berth_backend *b, char **report, berth_error **err);

/*
 * Makes what the policy needs where the handle's kind runs, as an admin does
 * once before users run (the kubernetes kind: berth cluster setup,
 * docs/kubernetes.md): the PriorityClasses of priority_classes, the namespace
 * of runs, berth's ServiceAccount with its rights, and the namespace,
 * ResourceQuota and LimitRange of each project the policy's quotas name.
 * Each object is applied with server-side apply, and *out gets a line per
 * object: "created KIND NAME", "configured KIND NAME" or "unchanged KIND
 * NAME" (NS/NAME for an object in a namespace). The first refusal stops it:
 * *out then holds the lines of the objects applied before it, and *err the
 * API's words. With dry_run, nothing is asked of the cluster: *out gets the
 * objects as a multi-document YAML stream, for kubectl apply -f, each after
 * a comment that says why it is there. Free *out with free().
 */
int berth_backend_setup(berth_backend *b, bool dry_run, char **out, berth_error **err);

/*
 * What the backend kind (NULL: the default, local) needs of a planned run and
 * cannot have, checked without creating or connecting to anything: the one
 * check validate, explain, render, run --dry-run, run and the server's
 * validate and runs routes make. Each is a problem at the user's field (the
 * file and position of the value, or of the function when it lacks one):
 *  - kubernetes: function.image (the cluster pulls it);
 *  - local: function.command (the local backend runs it, and does not read
 *    the image's entrypoint), action cronjob, and every way the run can never
 *    fit this machine (each resource over its capacity, the node selector,
 *    the required affinity, the taints), each "can never fit here: ...".
 * The local machine is detected as `berth run` detects it (the data dir of
 * $BERTH_HOME for its free disk), with the policy's local capacity, labels
 * and taints over it. Returns 0, or a negative berth_code with the problems
 * added to *err.
 */
int berth_run_needs(const berth_run *run, const char *kind, const berth_policy *policy,
		    berth_error **err);

/*
 * berth_run_needs(run, "kubernetes", ...) for berth render: what only the
 * objects say is found by making them, and here they are added to rd
 * (berth_render_add) rather than made again. The same problems; on failure
 * rd may hold part of the run's objects (print nothing of it).
 */
int berth_run_needs_render(const berth_run *run, berth_render *rd, berth_error **err);

/* The kind new runs go to when none is named ("local"). */
const char *berth_backend_default_kind(void);

/* The data dir in use. */
const char *berth_backend_home(const berth_backend *b);

/* The names of the project's secrets (for berth_run_opts.secrets), and the
 * usage of its active runs (for quotas). Arrays are owned by the caller:
 * free each name and the array. */
int berth_backend_secret_names(berth_backend *b, const char *project, char ***names, size_t *n,
			       berth_error **err);
int berth_backend_usage(berth_backend *b, const char *project, berth_usage *out, berth_error **err);

/* One resource of a project's quota: what the project's admitted runs use of
 * it (Running ones; on a cluster, Pending ones too), the quota and what is
 * free, in the canonical form ("500m", "4Gi", "3"); quota and free are ""
 * when the quota does not limit it. The values are in cores, bytes, GPUs and
 * runs (for metrics). */
typedef struct berth_quota_use {
	const char *resource;   /* "cpu", "mem", "gpu", "runs" */
	bool limited;
	char used[48], quota[48], free[48];
	double used_value, quota_value;
} berth_quota_use;

typedef struct berth_quota_state {
	char quota_of[128];     /* the quotas entry in force: the project's own or "default";
				   "": the project has no quota */
	berth_quota_use res[4]; /* cpu, mem, gpu, runs */
	int64_t waiting;        /* its runs that wait for quota */
} berth_quota_state;

/* The quota of project, its use and its headroom. */
int berth_backend_quota(berth_backend *b, const char *project, berth_quota_state *out,
			berth_error **err);

/* The last sample of each worker of the Running runs of the n projects (all:
 * of every project's), in the Prometheus text format: berth_run_cpu_cores,
 * berth_run_memory_bytes and, where GPUs were sampled,
 * berth_run_gpu_utilization_percent and berth_run_gpu_memory_bytes, by
 * project, run and rank (the gauges' HELP and TYPE whatever runs there are).
 * *out: free() it. */
int berth_backend_usage_metrics(berth_backend *b, const char *const *projects, size_t n, bool all,
				char **out, berth_error **err);
/* Appends the quota gauges of every project of the store that has a quota, in
 * the Prometheus text format: berth_quota_used and berth_quota_limit by
 * project and resource (cores, bytes, GPUs, runs). NUL-terminated; free() it. */
int berth_backend_quota_metrics(berth_backend *b, char **out, berth_error **err);

/*
 * Submits a planned run. spec_text is the spec as written (kept with the
 * run). Refused at once, with the reason, when the run can never run here:
 * more than the machine has, labels or taints that do not match, an action
 * the backend cannot run. *out (may be NULL) receives the new run's record:
 * Running when it started, Pending with the reason when it waits.
 * Warnings (the image is not pulled, ...) are added to *err.
 */
int berth_backend_submit(berth_backend *b, const berth_run *run, const char *spec_text,
			 berth_run_info **out, berth_error **err);

/*
 * A batch: every run of one spec text (one per YAML document), planned
 * against the backend's policy, the project's secrets and its quota, ready
 * to submit: what `berth run` and `POST /api/v1/runs` do.
 *
 * A spec may name a function registered in its project (function: NAME):
 * that function's spec is the run's function layer. Every document is
 * planned before anything is created; berth_batch_plan fails with every
 * problem of every document, and berth_batch_submit checks that the backend
 * can run every run before it submits the first.
 */
typedef struct berth_batch berth_batch;
typedef struct berth_batch_opts {
	const char *file;     /* the name in messages; NULL: "spec.yaml" */
	const char *project;  /* the project of the runs: a spec naming another one is
				 refused; NULL: each spec's own (default "default") */
	const char *run_id;   /* the first run's id (then ID-2, ID-3, ...); NULL: random */
	const char *submitted_by; /* who submits: recorded with each run (berth_run_info) */
} berth_batch_opts;
int berth_batch_plan(berth_batch **out, berth_backend *b, const char *text, size_t len,
		     const berth_batch_opts *opts, berth_error **err);
/* berth_batch_plan in two halves: the parse, which reads nothing but text
 * (a server does it before it takes its store's lock), then the plan against
 * b, with the same opts. After a failed plan, only berth_batch_free. */
int berth_batch_parse(berth_batch **out, const char *text, size_t len, const berth_batch_opts *opts,
		      berth_error **err);
int berth_batch_plan_parsed(berth_batch *batch, berth_backend *b, const berth_batch_opts *opts,
			    berth_error **err);
/* The documents of a parsed batch (its runs, once planned). */
size_t berth_batch_count(const berth_batch *batch);
/* The project document i is planned in, known from the parse alone: opts'
 * project, else the spec's, else "default" (a server authorizes it before it
 * plans anything). NULL past the end. */
const char *berth_batch_project(const berth_batch *batch, size_t i);
/* The planned run of document i; NULL before the plan. */
const berth_run *berth_batch_run(const berth_batch *batch, size_t i);
/* Submits every run, all or none: the quotas are checked for the whole batch,
 * again if what the projects hold changed since the plan, and the runs are
 * stored in one transaction. *out (may be NULL) receives their records, in
 * order. */
int berth_batch_submit(berth_batch *batch, berth_run_info ***out, size_t *n, berth_error **err);
void berth_batch_free(berth_batch *batch);
/* Asks the cluster to validate every object of every run without creating
 * anything (server-side dry run): the kubernetes kind only. *report gets a
 * line per object accepted. */
int berth_batch_dry_run(berth_batch *batch, char **report, berth_error **err);

int berth_backend_get(berth_backend *b, const char *id, berth_run_info **out, berth_error **err);

/* Runs, newest first, that f keeps (NULL: every run). */
int berth_backend_list(berth_backend *b, const berth_run_filter *f, berth_run_info ***out,
		       size_t *n, berth_error **err);

/* Stops a run: a queued one at once; a running one with SIGTERM to all its
 * processes, then SIGKILL after grace_s seconds (< 0: the policy's
 * local.grace_period, else 10). Returns when it is final. */
int berth_backend_stop(berth_backend *b, const char *id, int grace_s, berth_error **err);

/* Asks a run to stop as berth_backend_stop does, and returns at once. */
int berth_backend_stop_request(berth_backend *b, const char *id, int grace_s, berth_error **err);
/* Recovers (runs whose processes died are marked Failed with the reason)
 * and starts the queued runs that fit: what opening does, for a process
 * that keeps its handle open (berth serve calls it every few seconds). */
int berth_backend_reconcile(berth_backend *b, berth_error **err);
/* Whether this handle leads the work that one process at a time does for a
 * store several servers share (berth_backend_reconcile): 1 it does, until it
 * is closed or its process ends (killed or not: another server's handle then
 * takes the lead at its next call), 0 another handle leads, or a negative
 * code. It holds a connection of its own to the store for it. On a store
 * of one data dir (SQLite), always 1. */
int berth_backend_lead(berth_backend *b, berth_error **err);
/* Waits until the run is final or timeout_ms passes (< 0: no limit); *out
 * (may be NULL) receives its record. BERTH_ETIMEOUT on timeout. */
int berth_backend_wait(berth_backend *b, const char *id, int64_t timeout_ms, berth_run_info **out,
		       berth_error **err);

/* What berth_backend_logs and berth_client_logs read of a run's log (NULL:
 * the whole log of the run, at once). */
typedef struct berth_log_opts {
	int rank;           /* one worker's log (0 to workers-1; BERTH_ENOTFOUND past
			       them), or, < 0, the run's: every worker's of a
			       distributed job on the local backend, each line after
			       "[rank N] ", its newest pod's on a cluster */
	bool follow;        /* goes on until the run is final */
	int64_t tail;       /* > 0: from the last tail lines (of each worker's log), at
			       most BERTH_LOG_TAIL_MAX; 0: from the start */
	int64_t since_ms;   /* > 0: only the lines written in the last since_ms ms, at
			       most BERTH_DURATION_MAX_MS (a line's time is its first
			       byte's) */
	bool timestamps;    /* each line after the time it was written and a space:
			       "2026-11-22T13:08:57.039Z " (a pod's, as Kubernetes
			       writes it, with nanoseconds), after "[rank N] " */
} berth_log_opts;
#define BERTH_LOG_TAIL_MAX 10000000

/* Calls write(ctx, data, len) with the run's log as o says; with o->follow,
 * goes on until the run is final. A nonzero return of write stops. While a
 * followed run writes nothing, write is called with len 0 about once a
 * second, so that a reader that went away stops it then. On the local
 * backend the times of lines are those its supervisor saw the log grow at,
 * late by 0.1 s at most (docs/local.md); a log written before berth kept
 * times is as old as its last write. BERTH_EARG for a tail or since out of
 * range. */
typedef int (*berth_log_write)(void *ctx, const char *data, size_t len);
int berth_backend_logs(berth_backend *b, const char *id, const berth_log_opts *o,
		       berth_log_write write, void *ctx, berth_error **err);

/* Secrets of the embedded store, encrypted at rest (libsodium secretbox,
 * key file HOME/secret.key, mode 0600). Values never leave but to a run. */
int berth_backend_secret_set(berth_backend *b, const char *project, const char *name,
			     const char *value, size_t len, berth_error **err);
int berth_backend_secret_delete(berth_backend *b, const char *project, const char *name,
				berth_error **err);

#ifdef __cplusplus
}
#endif

#endif
