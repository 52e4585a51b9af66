/*
 * supervisor_internal.h - what the files of one run's supervisor share:
 * supervisor.c (the process: environment, start, waits, disk, the end),
 * mounts.c (volumes at their mount paths), isolation.c (work dir, seccomp,
 * namespaces). Not for the rest of the local kind (local.h).
 */
#ifndef BERTH_BACKEND_LOCAL_SUPERVISOR_INTERNAL_H
#define BERTH_BACKEND_LOCAL_SUPERVISOR_INTERNAL_H

#include <linux/filter.h>
#include <signal.h>
#include <sys/resource.h>

#include "backend/local/local.h"
#include "backend/logfile.h"

typedef local_volume volume;

/* One worker of the run: the run itself, or one of a distributed job's. */
typedef struct sup_worker {
	pid_t child;         /* its process (its pid namespace's init); 0: none */
	int statp;           /* the wait status from its init, in a pid namespace */
	cg_handle *cg;       /* its cgroup; NULL: rlimits */
	int cgfd;            /* v2: the cgroup's directory, for clone3 (cg_dir_fd); -1: none */
	int log;             /* runs/ID/log, or log.RANK for a distributed job's worker RANK > 0 */
	log_clock clock;     /* when its log grew (logfile.h) */
	int wd;              /* the log's watch on sup.ifd; -1: none */
	char **envp;
	size_t nenv;
	char *gpu_ids;       /* its share of the run's GPUs, by index; NULL: none */
	int status;          /* its command's wait status, once ended */
	bool ended;
	bool stopped;        /* sent SIGTERM by berth (a stop, the timeout, another's failure) */
	uint64_t ooms;       /* its cgroup's OOM kills when the attempt started */
	bool oomed;          /* ... and more when it ended: a process of it was OOM-killed */
	cg_stats stats;      /* its cgroup's, as last read */
	bool have_stats;     /* ... when the last attempt had ended (its usage) */
	uint64_t sample_cpu_ns; /* its CPU time at its last sample (sampler.c) */
	int64_t sample_t;    /* ... and when (ms); 0: not sampled this attempt */
} sup_worker;

typedef struct sup {
	const char *home;
	store *st;
	store_run *r;
	sup_worker *w;       /* its workers: one (&one), or a distributed job's */
	sup_worker one;
	size_t nw;
	int failed;          /* the worker whose failure ended the attempt; -1: none */
	int port;            /* the rendezvous port of a distributed job's worker 0 */
	/* launcher mpi: each worker runs berth's MPI worker (mpi.h), worker 0's
	 * with the command; the token its requests carry */
	bool mpi;
	char **mpi_argv0;
	char *mpi_argv[3];
	char mpi_token[65];
	volume *vols;
	size_t nvols;
	char **argv;
	char *secret_values; /* NAME=VALUE\0..., wiped at the end */
	size_t secret_len;
	sigset_t run_mask;   /* the signal mask the command starts with */
	struct rlimit nofile; /* the open files the command starts with (the supervisor's
			       * own are raised for a distributed job's many workers) */
	bool nofile_raised;
	bool pidns;          /* the run has a pid namespace (and a mount namespace) */
	bool disk_watch;     /* the run has a disk limit or a sized volume */
	char *tmp;           /* runs/ID/tmp, the run's /tmp in a pid namespace; NULL: none */
	char *evicted;       /* why it was stopped for its disk use */
	berth_buf notes;     /* events noted before the store is written: KIND\0MESSAGE\0... */
	bool recorded;       /* this supervisor is in the record (pid and start time) */
	int done_fd;         /* the pipe to the process that waits for the run; -1: none */
	int64_t sample_ms;   /* how often its workers' use is sampled (sampler.c); 0: never */
	bool sample_gpus;    /* a worker has GPUs and nvidia-smi is on PATH */
	int sfd;             /* the stop signals and SIGCHLD as an fd (signalfd); -1: none */
	int ifd;             /* inotify: the workers' logs growing; -1: none (looked at
				every second instead) */
} sup;

/* supervisor.c: an event of the run, written with the record of its start
 * (or of its end, when it never starts). */
void sup_note(sup *s, const char *kind, const char *message);

/* sampler.c: at the start of an attempt, how often to sample
 * (BERTH_SAMPLE_MS, default 5 s; 0: never) and when first (ms; -1: never);
 * then each worker's CPU, memory and GPU use into the store, returning when
 * to sample next. */
int64_t sup_sample_start(sup *s, int64_t now);
int64_t sup_sample(sup *s, int64_t now);

/* mounts.c: the gid the run's processes have. */
int64_t sup_run_gid(const store_run *r);
/* The volumes' directories made and owned (fallback: no mount namespace, the
 * paths go in the environment); -1 with why. */
int sup_prepare_volumes(sup *s, bool fallback, berth_buf *why);
/* Removes the mount points made for the run's volumes. */
void sup_remove_mount_points(sup *s);
/* In the child: a private mount namespace (and /proc of its pid namespace),
 * then every volume at its mount path (the secrets' files from
 * secret_files). 0; -1 when the host allows no mount namespace (the
 * volumes' paths go in the environment); -2 when a mount failed. */
int sup_mount_run(sup *s, bool pidns, const char *const *secret_files, const size_t *secret_lens);

/* isolation.c: the run's work dir, /tmp and disk reserve; -1 with why. */
int sup_prepare_workdir(sup *s, berth_buf *why);
/* In a child, with no_new_privs set: loads the seccomp filter of a run's
 * processes (isolation.c); -1 with errno. */
int sup_harden_load(void);
/* A child of this process, as fork's return says: with pidns, the pid 1 of
 * new pid and mount namespaces; with cgfd >= 0 (a v2 cgroup's directory,
 * cg_dir_fd), made in that cgroup by clone3, never moved there, which
 * *in_cgroup says, in both processes (false: the kernel has no clone3 or no
 * CLONE_INTO_CGROUP, or cgfd is no cgroup2 directory; the caller moves it).
 * clone and clone3 copy the process as fork does: this process has one
 * thread, so libc has no lock to reset, and the child calls nothing that
 * reads its thread id (raise, pthread_*). */
pid_t sup_clone(bool pidns, int cgfd, bool *in_cgroup);
/* Pid and mount namespaces where the host allows them (events say what it
 * refused); true when the volumes' paths go in the environment instead. */
bool sup_namespaces(sup *s);

#endif
