/*
 * cgroup.h - CPU and memory limits for a local run through Linux control
 * groups, v2 (unified) or v1 (one hierarchy per controller), behind one
 * interface (crun's libcrun_cgroup_manager is the model).
 *
 * A run's cgroup is ROOT/PARENT/NAME on v2 and ROOT/CTRL/PARENT/NAME for each
 * v1 controller among cpu, cpuacct, memory and pids that ROOT has. ROOT is
 * normally /sys/fs/cgroup; tests point it at a temporary directory, where the
 * control files are plain files, to check exactly what is written.
 */
#ifndef BERTH_CGROUP_H
#define BERTH_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "berth/error.h"

typedef enum cg_version {
	CG_NONE = 0, /* no writable cgroup tree: the caller falls back to rlimits */
	CG_V1 = 1,
	CG_V2 = 2,
} cg_version;

typedef struct cg_limits {
	int64_t cpu_limit_milli;   /* 0: no CPU limit */
	int64_t cpu_request_milli; /* 0: the default weight */
	int64_t mem_limit;         /* bytes; 0: no memory limit */
	int64_t pids_max;          /* 0: no limit */
} cg_limits;

typedef struct cg_stats {
	uint64_t cpu_usage_ns;   /* CPU time used by every process of the cgroup */
	uint64_t nr_periods, nr_throttled, throttled_ns;
	uint64_t mem_current;    /* bytes in use now */
	uint64_t mem_peak;       /* the most ever used; 0 where the kernel does not say */
	uint64_t oom_kills;      /* processes killed by the OOM killer in this cgroup */
} cg_stats;

typedef struct cg_handle cg_handle;

/* The layout of the tree at root: CG_V2 when root/cgroup.controllers exists,
 * CG_V1 when root/memory or root/cpu is a directory, else CG_NONE. */
cg_version cg_detect(const char *root);
const char *cg_version_name(cg_version v);

/*
 * Creates the run's cgroup (and PARENT when missing) and writes limits.
 * v2: "+cpu +memory +pids" (those listed in cgroup.controllers) into the
 * cgroup.subtree_control of ROOT and of ROOT/PARENT; cpu.max "QUOTA 100000"
 * (or "max 100000"), cpu.weight from the request (the Kubernetes conversion
 * of shares: 1 + ((shares - 2) * 9999) / 262142, shares = milli * 1024 / 1000,
 * at least 2), memory.max, memory.swap.max 0 (when the file exists),
 * memory.oom.group 1, pids.max.
 * v1: cpu.cfs_period_us 100000, cpu.cfs_quota_us (or -1), cpu.shares,
 * memory.limit_in_bytes, then memory.memsw.limit_in_bytes to the same value
 * when that file exists, pids.max.
 * Unset limits are written as the kernel's defaults ("max", -1, weight 100,
 * shares 1024); pids.max is written where the pids controller is.
 * PARENT and NAME must each be one path component. An existing NAME
 * directory (left by a run that died) is reused and its limits rewritten.
 * On a tree that is not a cgroup filesystem (tests) the required control
 * files are created; optional ones (memory.swap.max, memory.oom.group,
 * memory.memsw.limit_in_bytes, cgroup.kill) are written only where present.
 * On failure nothing is left behind (the directories this call made are
 * removed) and *err names the file and errno text.
 */
int cg_create(cg_handle **out, cg_version v, const char *root, const char *parent,
	      const char *name, const cg_limits *limits, berth_error **err);

/* Opens an existing run cgroup (stop or recovery from another process). */
int cg_open(cg_handle **out, cg_version v, const char *root, const char *parent,
	    const char *name, berth_error **err);

/* Moves pid into the cgroup (cgroup.procs of each hierarchy). */
int cg_enter(cg_handle *cg, pid_t pid, berth_error **err);

/*
 * v1: moves the calling thread, the only one of a process just forked, into
 * the cgroup: "0" to each hierarchy's tasks (cgroup.procs where there is
 * none). A move by pid through cgroup.procs takes the kernel's lock on every
 * process's threads, whose write side waits for an RCU grace period (5 to
 * 15 ms) unless another move came in the last few ms; a thread moving itself
 * through tasks takes none. No allocation: for a child between fork and
 * exec. 0, or an errno value (EINVAL: not v1).
 */
int cg_enter_self(const cg_handle *cg);

/* v2: the run cgroup's directory, open for clone3's CLONE_INTO_CGROUP (a
 * child made in its cgroup is never moved); -1 on v1, or with errno. */
int cg_dir_fd(const cg_handle *cg);

cg_version cg_version_of(const cg_handle *cg);
/* Whether cg_create made every directory of cg (none was left by a run
 * that died): nothing has run in it before. */
bool cg_fresh(const cg_handle *cg);

/* Reads usage; fields a kernel does not offer stay 0. */
int cg_stats_read(cg_handle *cg, cg_stats *out, berth_error **err);

/* Number of processes in the cgroup now; negative on error. */
int cg_count(cg_handle *cg);

/* Sends sig to every process of the cgroup (v2 with SIGKILL: cgroup.kill
 * when the kernel has it). Returns the number signalled, or negative. */
int cg_kill(cg_handle *cg, int sig);

/* Removes the cgroup directories (retrying for about a second while the
 * kernel still counts exiting processes); 0 when gone, also when already
 * gone. PARENT stays: other runs share it. The handle still needs cg_free. */
int cg_destroy(cg_handle *cg, berth_error **err);

/* The directory of the memory (v1) or unified (v2) cgroup, for messages. */
const char *cg_path(const cg_handle *cg);

void cg_free(cg_handle *cg);

#endif
