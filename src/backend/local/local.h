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
/* The most bytes of a record a supervisor tells its waiter with the end:
 * well under what a pipe usually holds (64 KiB; the start's byte may be in
 * it), so that it is told whole (its write never waits: one that does not
 * fit is cut short, and the waiter reads the store). */
#define LOCAL_END_MAX (32u << 10)

/* HOME/runs/ID, or HOME/runs/ID/SUB (sub non-NULL): -1 when id is not a run
 * id (berth_run_id_check) or the path does not fit len. Every path of a run's
 * directory is made here. */


/* A volume of a run as the volume table lists it (files.c). */
typedef struct local_volume {
	const char *kind, *name, *source, *mount, *life;
	int64_t size;
	int made;      /* how many of its mount path's last parts were made for it, to remove */
	bool in_tmp;   /* its mount path is under /tmp, the run's own in a pid namespace */
} local_volume;

/* Reads r's volume table (six NUL-terminated fields a volume: KIND NAME
 * SOURCE MOUNT_PATH LIFE SIZE), checking every field again: a kind and a life
 * of berth's, an absolute mount path, a source under home for what berth
 * makes; -1 with why otherwise. The volumes point into r. */
int local_volumes_parse(const char *home, const store_run *r, local_volume **vols, size_t *nvols,
			berth_buf *why);
/* True when path is dir itself or below it, by its text: no "..", no "//". */
bool local_path_under(const char *path, const char *dir);
/* The disk a tree uses (blocks, as du counts), and with remove, removes it;
 * links not followed, other file systems not entered. */
int64_t local_tree(const char *path, bool remove);

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

/* launch.c: fills r with how run will be started (command, user, groups,
 * environment, volume table, work dir, limits) with the kind's state ls;
 * refusals of the policy's id ranges in *err. */
int local_plan_launch(berth_backend *b, local_state *ls, const berth_run *run, store_run *r,
		      berth_error **err);

/* A process's start time in clock ticks since boot (/proc/PID/stat), -1 if gone:
 * with the pid, it names one process across pid reuse. */
int64_t local_proc_start(pid_t pid);
/* The same, also for a zombie when zombies is set (field 22 of /proc/PID/stat). */
int64_t local_proc_start_of(pid_t pid, bool zombies);
bool local_pid_is(int64_t pid, int64_t start);
/* Fields first .. first + n - 1 (from 1, as proc(5) counts them) of
 * /proc/PID/stat as numbers; -1 when it cannot be read (a zombie: unless
 * zombies). */
int local_proc_fields(pid_t pid, bool zombies, int first, int n, int64_t *out);

/* files.c: creates HOME/runs/ID/done, which waiters watch for. */
void local_mark_done(const char *home, const char *id);
/* The same, with how the run ended written in it (i: NULL, nothing): what
 * recovery records when the store could not be written (a full disk). With
 * make_dir false, only into the run's directory as it is: a run whose end is
 * recorded may be deleted by then (its directory is not made again). */
void local_mark_outcome(const char *home, const char *id, const berth_run_info *i, bool make_dir);

/* procs.c: the cgroup of worker rank of a run of workers whose cgroups are
 * named after base: base itself for a run of one worker, else base.RANK; -1
 * when it does not fit in len. */
int local_worker_cgroup(char *buf, size_t len, const char *base, int64_t rank, int64_t workers);
/* A TCP port free on loopback now (the kernel's pick), for a distributed
 * job's rendezvous; 0 when none can be had. */
int local_free_port(void);
/* files.c: the name of worker rank's log in its run's directory: log for
 * worker 0 (and any run of one), log.RANK for the others. */
void local_worker_log(char *buf, size_t len, int64_t rank);

/* procs.c: kills every process a run left (each worker's cgroup, its process
 * group, the processes of its supervisor's session where it had no cgroup) and
 * removes its cgroups. files.c: removes the volumes that live with
 * the run. */
void local_kill_leftovers(cg_version cgv, const char *cg_root, const store_run *r);
void local_cleanup_volumes(const char *home, const store_run *r);
/* Removes runs/ID/work, runs/ID/tmp and runs/ID/reserve: a run's own files
 * go with it, as a container's do. */
void local_cleanup_run_dirs(const char *home, const char *id);
/* rm -r, not following links */
void local_rm_tree(const char *path);

/* supervisor.c: berth_local_supervise (supervisor.h) in a child that the
 * submitting process forked (local.c), with the record it stored: the run
 * starts before the store is opened. done_fd: the pipe to that process. */
int local_supervise_forked(const char *home, store_run *r, int done_fd);

#define LOCAL_CGROUP_PARENT "berth"

#endif
