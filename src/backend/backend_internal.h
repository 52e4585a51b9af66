/*
 * backend_internal.h - the interface every backend implements (crun's
 * cgroup managers are the model: a table of operations, one per kind), and
 * what the local backend's files share.
 */
#ifndef BERTH_BACKEND_INTERNAL_H
#define BERTH_BACKEND_INTERNAL_H

#include <sys/types.h>

#include "base/arena.h"
#include "berth/backend.h"
#include "backend/local/cgroup.h"
#include "base/internal.h"
#include "plan/node_fit.h"
#include "backend/kubernetes/api.h"
#include "store/store.h"

/* Called by a backend's submit inside the write transaction that stores the
 * runs, before they are stored: 0 goes on; > 0 rolls back and submit returns
 * that (what the runs were planned against changed: plan them again); < 0 an
 * error (in *err). */
typedef struct submit_check {
	int (*fn)(void *ctx, berth_error **err);
	void *ctx;
} submit_check;

typedef struct backend_ops {
	const char *kind;
	int (*open)(berth_backend *b, berth_error **err);
	void (*close)(berth_backend *b);
	/* refuses a run that can never run on this backend, creating nothing */
	int (*admit)(berth_backend *b, const berth_run *run, berth_error **err);
	/* submits n runs of one spec text, all or none: when one cannot be
	 * submitted, none is left behind; out (may be NULL) gets n records;
	 * check (may be NULL) is asked in the transaction that stores them */
	int (*submit)(berth_backend *b, const berth_run *const *runs, size_t n, const char *spec_text,
		      const submit_check *check, berth_run_info **out, berth_error **err);
	int (*stop)(berth_backend *b, const char *id, int grace_s, bool wait, berth_error **err);
	/* finds runs whose processes died and starts queued runs that fit */
	int (*reconcile)(berth_backend *b, berth_error **err);
	int (*logs)(berth_backend *b, const char *id, bool follow, berth_log_write write,
		    void *ctx, berth_error **err);
	/* follows the run until it is final or timeout_ms passes (BERTH_ETIMEOUT);
	 * NULL: the record is kept by others (the local supervisors) */
	int (*wait)(berth_backend *b, const char *id, int64_t timeout_ms, berth_error **err);
} backend_ops;

typedef struct local_user {
	bool known;
	uid_t uid;
	char *home, *name;
} local_user;

/* A scheduling pass of the queue that started nothing: the free capacity it
 * had (cpu, mem, gpus, disk) and the store's data_version then. */
typedef struct queue_pass {
	bool valid;
	int64_t fit[4];
	int64_t version;
} queue_pass;

/* At most this many pipes from supervisors per handle (opts.waits); beyond,
 * a waiter watches the run's directory. */
#define LOCAL_MAX_WAITERS 256

struct berth_backend {
	const backend_ops *ops;
	char *home;
	char *exe;
	const berth_policy *policy;
	berth_policy *own_policy;  /* the built-in one when none was given */
	store *st;
	berth_arena *arena;
	bool passive;              /* opened without reconciling (berth_backend_opts) */
	bool cached;               /* records are kept fresh by reconcile: get reads the store */
	/* kubernetes: connected on first use */
	kube *kube;
	char *kubeconfig, *kube_context;
	/* local */
	local_node node;
	cg_version cgv;
	const char *cg_root;       /* $BERTH_CGROUP_ROOT, else /sys/fs/cgroup */
	int grace_s;
	bool keep_volumes;
	bool waits;                /* opts.waits: keep a pipe from each supervisor */
	struct local_waiter *waiters; /* their read ends, by run id */
	size_t nwaiters;
	local_user user;           /* the last uid a run was planned for (HOME, USER) */
	queue_pass last_pass;      /* local_schedule_run's, to skip the next one */
};

extern const backend_ops local_backend_ops;
extern const backend_ops kube_backend_ops;

/* kubernetes.c: applies a run's objects with dryRun=All, a line per object
 * into report; brings the records of unfinished kubernetes runs up to what
 * the cluster says. */
int kube_dry_run(berth_backend *b, const berth_run *run, berth_buf *report, berth_error **err);
int kube_reconcile(berth_backend *b, berth_error **err);
int kube_refresh(berth_backend *b, const char *id, berth_error **err);
/* Deletes every object of a finished run from its cluster (berth_run_delete). */
int kube_forget(berth_backend *b, const char *id, berth_error **err);

/* The run's record as stored (berth_backend_get without asking a cluster). */
int backend_get_stored(berth_backend *b, const char *id, berth_run_info **out, berth_error **err);

/* The record of a new run, as every backend keeps it (r zeroed before);
 * and its insertion, with its Submitted event, in one transaction. */
int backend_record(berth_backend *b, const berth_run *run, const char *spec_text, const char *kind,
		   store_run *r, berth_error **err);
int backend_insert(berth_backend *b, const store_run *r, berth_error **err);

/* Copies the public part of a stored run out (the store_run is emptied of it). */
berth_run_info *local_info_take(store_run *r);

/* HOME/runs/ID (the log, the done marker) and HOME/volumes/... */
int local_path(char *buf, size_t len, const char *home, const char *fmt, ...) BERTH_PRINTF(4, 5);

/* Admits queued runs that fit the free capacity and starts their supervisors. */
int local_schedule(berth_backend *b, berth_error **err);
/* The same for runs being submitted (not stored yet: inserted here, all in the
 * same transaction, or none); nfresh 0: every queued run. */
int local_schedule_runs(berth_backend *b, store_run **fresh, size_t nfresh,
			const submit_check *check, berth_error **err);

/* mkdir -p */
int local_mkdirs(const char *path, mode_t mode);
/* mkdir -p, then path itself (when this user owns it) chmod to mode, whatever
 * the umask or how it was made; -1 also when path is not a directory. */
int local_private_dir(const char *path, mode_t mode);

/* A process's start time in clock ticks since boot (/proc/PID/stat), -1 if gone:
 * with the pid, it names one process across pid reuse. */
int64_t local_proc_start(pid_t pid);
bool local_pid_is(int64_t pid, int64_t start);
void local_mark_done(const char *home, const char *id);
/* The same, with how the run ended written in it (i: NULL, nothing): what
 * recovery records when the store could not be written (a full disk). */
void local_mark_outcome(const char *home, const char *id, const berth_run_info *i);
/* A watch (inotify) on a run's directory, for a whole wait: made before the
 * first look at what it watches, so that nothing done after that look is
 * missed, and closed once. Closing an instance that still has a watch waits
 * for the kernel (an SRCU grace period, 6 to 16 ms here): one per wakeup was
 * most of the time of a `logs -f`. Without inotify, a wait sleeps. */
typedef struct local_watch {
	int fd;         /* -1: no inotify */
	int wd;         /* on dir, or on its parent until dir exists */
	bool on_parent;
	const char *dir;
} local_watch;
void local_watch_open(local_watch *w, const char *dir);
/* Up to ms for a file to be created or written there. */
void local_watch_wait(local_watch *w, int ms);
void local_watch_close(local_watch *w);
/* Waits up to ms for the end of run id, through the pipe from the supervisor
 * this handle started for it (opts.waits): 1 when that supervisor is done, or
 * died (then its run is recovered, as on open), 0 when ms passed, -1 when
 * there is no such pipe. */
int local_wait_done(berth_backend *b, const char *id, int ms);
void local_waiters_close(berth_backend *b);
/* Whether run id is marked done while its record is not final: its
 * supervisor could not write the store (a full disk). Then recovers what
 * it can (waiting 100 ms from the second call on, counted in *tries). */
bool local_done_unrecorded(berth_backend *b, const char *id, int *tries);

/* supervisor.c: kills every process a run left (its cgroup, its process
 * group) and removes its cgroup; removes the volumes that live with the run. */
void local_kill_leftovers(berth_backend *b, const store_run *r);
void local_cleanup_volumes(const char *home, const store_run *r);
/* Removes runs/ID/work, runs/ID/tmp and runs/ID/reserve: a run's own files
 * go with it, as a container's do. */
void local_cleanup_run_dirs(const char *home, const char *id);
/* rm -r, not following links */
void local_rm_tree(const char *path);

/* The default grace period between SIGTERM and SIGKILL. */
#define LOCAL_GRACE_S 30
#define LOCAL_CGROUP_PARENT "berth"

#endif
