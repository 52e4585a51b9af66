/*
 * local.h - what the files of the local kind share (local.c: the queue,
 * scheduling, recovery, waits; supervisor.c: one run's supervisor process;
 * cgroup.c: limits). Its state lives in the handle as LOCAL(b).
 */
#ifndef BERTH_BACKEND_LOCAL_H
#define BERTH_BACKEND_LOCAL_H

#include <sys/types.h>

#include "backend/local/cgroup.h"
#include "base/fs.h"
#include "backend/record.h"
#include "backend/runtime.h"
#include "plan/node_fit.h"

extern const backend_ops local_backend_ops;

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

/* The local kind's own part of a handle. */
typedef struct local_state {
	local_node node;
	cg_version cgv;
	const char *cg_root;       /* $BERTH_CGROUP_ROOT, else /sys/fs/cgroup */
	int grace_s;
	bool keep_volumes;
	struct local_waiter *waiters; /* read ends of pipes from supervisors, by run id */
	size_t nwaiters;
	local_user user;           /* the last uid a run was planned for (HOME, USER) */
	queue_pass last_pass;      /* local_schedule_run's, to skip the next one */
} local_state;

#define LOCAL(b) ((local_state *)backend_state((b), &local_backend_ops))

/* Admits queued runs that fit the free capacity and starts their supervisors. */
int local_schedule(berth_backend *b, berth_error **err);
/* The same for runs being submitted (not stored yet: inserted here, all in the
 * same transaction, or none); nfresh 0: every queued run. */
int local_schedule_runs(berth_backend *b, store_run **fresh, size_t nfresh,
			const submit_check *check, berth_error **err);


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

#define LOCAL_CGROUP_PARENT "berth"


#endif
