/*
 * local.c - the local backend: runs wait in a queue in the store until their
 * requests fit the machine's free capacity, then a supervisor process of
 * their own (supervisor.c) runs them. Nothing runs in the background besides
 * the supervisors: whoever changes what is free (a submission, a run that
 * ends, a stop) runs the scheduler, and every open recovers what a dead
 * supervisor left behind.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "plan/distributed.h"
#include "plan/plan.h"
#include "backend/local/local.h"
#include "backend/logfile.h"
#include "berth/explain.h"
#include "base/internal.h"
#include "plan/policy_internal.h"
#include "render/render_internal.h"

static int local_wait(berth_backend *b, const char *id, int64_t timeout_ms, berth_error **err);

/* Admits queued runs that fit the free capacity and starts their supervisors. */
static int local_schedule(berth_backend *b, berth_error **err);
/* The same for runs being submitted (not stored yet: inserted here, all in the
 * same transaction, or none); nfresh 0: every queued run. */
static int local_schedule_runs(berth_backend *b, store_run **fresh, size_t nfresh,
			const submit_check *check, berth_error **err);

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
static void local_watch_open(local_watch *w, const char *dir);
/* Up to ms for a file to be created or written there. */
static void local_watch_wait(local_watch *w, int ms);
static void local_watch_close(local_watch *w);
/* Waits up to ms for the end of run id, through the pipe from the supervisor
 * this handle started for it (opts.waits): 1 when that supervisor is done, or
 * died (then its run is recovered, as on open), 0 when ms passed, -1 when
 * there is no such pipe. */
static int local_wait_done(berth_backend *b, const char *id, int ms);
static void local_waiters_close(berth_backend *b);
/* Whether run id is marked done while its record is not final: its
 * supervisor could not write the store (a full disk). Then recovers what
 * it can (waiting 100 ms from the second call on, counted in *tries). */
static bool local_done_unrecorded(berth_backend *b, const char *id, int *tries);

/* ---- small helpers ------------------------------------------------------------- */

/* What a supervisor wrote in the done marker of a run it could not record
 * (a full disk): 0 and r updated, or -1 when the marker says nothing. */
static int read_outcome(const char *home, store_run *r)
{
	char path[4096], buf[1100];
	if (backend_run_path(path, sizeof(path), home, r->info.id, "done"))
		return -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	int state, exit_code, sig, oom, used = 0;
	if (n <= 0)
		return -1;
	buf[n] = 0;
	if (sscanf(buf, "%d %d %d %d\n%n", &state, &exit_code, &sig, &oom, &used) != 4 || !used ||
	    !berth_state_final((berth_state)state))
		return -1;
	r->info.state = (berth_state)state;
	r->info.exit_code = exit_code;
	r->info.signal = sig;
	r->info.oom_killed = oom != 0;
	free(r->info.reason);
	r->info.reason = buf[used] ? berth_strdup(buf + used) : NULL;
	return 0;
}

/* ---- the machine ----------------------------------------------------------------- */

static int node_from_policy(berth_backend *b, berth_error **err)
{
	const berth_policy *p = b->policy;
	local_state *ls = LOCAL(b);
	if (local_node_from_policy(&ls->node, b->arena, p))
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	ls->grace_s = p->local.grace_period.set ? (int)p->local.grace_period.v : BACKEND_GRACE_S;
	ls->keep_volumes = p->local.keep_volumes.set && p->local.keep_volumes.v;
	return 0;
}

/* ---- recovery ------------------------------------------------------------------------ */

/* A run marked Running whose supervisor is gone: its processes are killed,
 * what it made is removed, and it is Failed with the reason. */
static int recover(berth_backend *b)
{
	int freed = 0;
	store_supervised *list;
	size_t n;
	berth_error *e = NULL;
	if (store_run_supervised(b->st, local_backend_ops.kind, &list, &n, &e)) {
		berth_error_free(e);
		return 0;
	}
	int64_t now = store_now_ms();
	for (size_t i = 0; i < n; i++) {
		store_supervised *r = &list[i];
		if (local_pid_is(r->supervisor_pid, r->supervisor_start))
			continue;
		/* admitted but its supervisor not yet recorded: give it time */
		if (!r->supervisor_pid && now - r->started < 30000)
			continue;
		if (store_begin(b->st, &e))
			break;
		store_run *fresh = NULL;
		if (store_run_get(b->st, r->id, &fresh, &e) ||
		    fresh->info.state != BERTH_STATE_RUNNING ||
		    fresh->supervisor_pid != r->supervisor_pid) {
			store_rollback(b->st);
			store_run_free(fresh);
			berth_error_free(e);
			e = NULL;
			continue;
		}
		local_kill_leftovers(LOCAL(b)->cgv, LOCAL(b)->cg_root, fresh);
		fresh->info.finished = now;
		/* its supervisor saw it end but could not record it (a full disk):
		 * the marker says how */
		if (read_outcome(b->home, fresh)) {
			fresh->info.state = BERTH_STATE_FAILED;
			free(fresh->info.reason);
			fresh->info.reason = berth_strdup("its supervisor died while it ran (the machine "
							  "restarted, or the process was killed); its "
							  "processes were stopped");
		}
		if (store_run_update(b->st, fresh, &e) || store_commit(b->st, &e)) {
			store_rollback(b->st);
		} else {
			store_event(b->st, fresh->info.id, "Failed", fresh->info.reason);
			local_cleanup_volumes(b->home, fresh);
			local_cleanup_run_dirs(b->home, fresh->info.id);
			local_mark_done(b->home, fresh->info.id);
			freed++;
		}
		store_run_free(fresh);
		berth_error_free(e);
		e = NULL;
	}
	store_supervised_free(list, n);
	return freed;
}

static int local_reconcile(berth_backend *b, berth_error **err);

static bool local_done_unrecorded(berth_backend *b, const char *id, int *tries)
{
	char done[4096];
	if (backend_run_path(done, sizeof(done), b->home, id, "done") || access(done, F_OK))
		return false;
	/* its supervisor is gone, or about to be: recovery records the marker's outcome */
	struct timespec ts = {0, 100000000};
	if ((*tries)++)
		nanosleep(&ts, NULL);
	if (recover(b) > 0)
		local_schedule(b, NULL);
	return true;
}

static int local_open(berth_backend *b, bool primary, berth_error **err)
{
	local_state *ls = berth_calloc(1, sizeof(*ls));
	if (!ls)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	backend_state_set(b, &local_backend_ops, ls);
	char path[4096];
	/* as root, runs of other uids reach their work dir (runs/ID/work, their
	 * HOME) by its path: runs/ may be passed through, never listed or read;
	 * volumes/ only by berth (a run sees its volumes where they are mounted) */
	mode_t pass = geteuid() == 0 ? 0711 : 0700;
	if (fs_path(path, sizeof(path), b->home, "runs") || fs_private_dir(path, pass) ||
	    fs_path(path, sizeof(path), b->home, "volumes") || fs_private_dir(path, 0700))
		return berth_fail(err, BERTH_EIO, "cannot create %s: %s", path, strerror(errno));
	const char *gpu_dir = getenv("BERTH_GPU_DIR");
	if (local_node_detect(&ls->node, b->arena, b->home, gpu_dir ? gpu_dir : "/proc/driver/nvidia/gpus",
			      err) ||
	    node_from_policy(b, err))
		return -BERTH_EIO;
	const char *root = getenv("BERTH_CGROUP_ROOT");
	ls->cg_root = root && *root ? root : "/sys/fs/cgroup";
	ls->cgv = cg_detect(ls->cg_root);
	/* a tree this process cannot write is as good as none (not root, no delegation) */
	char probe[4096];
	snprintf(probe, sizeof(probe), "%s%s", ls->cg_root, ls->cgv == CG_V1 ? "/memory" : "");
	if (ls->cgv != CG_NONE && access(probe, W_OK))
		ls->cgv = CG_NONE;
	return b->passive ? 0 : local_reconcile(b, err);
}

/* The scheduler reads only the queued runs that fit the free capacity, so
 * this is cheap however long the queue is. */
static int local_reconcile(berth_backend *b, berth_error **err)
{
	recover(b);
	return local_schedule(b, err);
}

static void local_close(berth_backend *b)
{
	local_state *ls = LOCAL(b);
	local_waiters_close(b);
	free(ls->user.home);
	free(ls->user.name);
	free(ls);
	backend_state_set(b, &local_backend_ops, NULL);
}

/* ---- the queue --------------------------------------------------------------------- */

typedef struct freecap {
	int64_t cpu_milli, mem, gpus, disk;
	unsigned char gpu_used[256];
} freecap;

static void take_gpus(freecap *f, const char *ids, int sign)
{
	for (const char *p = ids; p && *p;) {
		char *end;
		long i = strtol(p, &end, 10);
		if (end == p)
			break;
		if (i >= 0 && i < 256)
			f->gpu_used[i] = sign > 0;
		p = *end == ',' ? end + 1 : end;
	}
}

static bool fits(const freecap *f, const store_run *r)
{
	return r->info.cpu_milli <= f->cpu_milli && r->info.mem <= f->mem &&
	       r->info.gpus <= f->gpus && r->info.disk <= f->disk;
}

static void format_bytes(char *buf, size_t len, int64_t v)
{
	berth_format_size(buf, len, v, 1);
}

static void format_count(char *buf, size_t len, int64_t v)
{
	snprintf(buf, len, "%lld", (long long)v);
}

/* "waiting for capacity: cpu 2 asked, 500m free of 2; ..." */
static char *wait_reason(const freecap *f, const local_node *node, const store_run *r)
{
	const struct {
		const char *name;
		int64_t asked, free, cap;
		void (*format)(char *, size_t, int64_t);
	} dims[] = {
		{"cpu", r->info.cpu_milli, f->cpu_milli, node->cpu_milli, local_format_cpu},
		{"mem", r->info.mem, f->mem, node->mem, format_bytes},
		{"gpu", r->info.gpus, f->gpus, node->gpus, format_count},
		{"disk", r->info.disk, f->disk, node->disk, format_bytes},
	};
	berth_buf b = BERTH_BUF_INIT;
	berth_buf_puts(&b, "waiting for capacity:");
	const char *sep = " ";
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(dims); i++) {
		char a[32], fr[32], cap[32];
		if (dims[i].asked <= dims[i].free)
			continue;
		dims[i].format(a, sizeof(a), dims[i].asked);
		dims[i].format(fr, sizeof(fr), dims[i].free < 0 ? 0 : dims[i].free);
		dims[i].format(cap, sizeof(cap), dims[i].cap);
		berth_buf_printf(&b, "%s%s %s asked, %s free of %s", sep, dims[i].name, a, fr, cap);
		sep = "; ";
	}
	if (b.failed) {
		berth_buf_release(&b);
		return NULL;
	}
	return berth_buf_detach(&b);
}

/* What each project's admitted runs hold in one pass of the queue: read from
 * the store (its Running runs) at the first queued run of the project, then
 * kept up to date with what the pass admits. */
typedef struct quota_pass {
	struct {
		const char *project;
		berth_usage used;
	} *p;
	size_t n;
} quota_pass;

/* Whether r fits its project's quota (1), with the reason it waits in why
 * when it does not (0); a negative code when the store cannot be read. */
static int quota_fits(berth_backend *b, quota_pass *qp, const store_run *r, char *why, size_t len,
		      berth_usage **used_out, berth_error **err)
{
	const char *project = r->info.project ? r->info.project : "default";
	/* the quota it was accepted under; a run of an older berth: the policy's */
	berth_quota recorded;
	const berth_quota *q = &recorded;
	if (r->quota_of && r->quota_of[0]) {
		const int64_t lim[4] = {r->qlim_cpu_milli, r->qlim_mem, r->qlim_gpus, r->qlim_runs};
		plan_quota_from(&recorded, r->quota_of, lim);
	} else
		q = r->quota_of ? NULL : berth_policy_quota(b->policy, project);
	*used_out = NULL;
	if (!q)
		return 1;
	size_t k = 0;
	while (k < qp->n && strcmp(qp->p[k].project, project))
		k++;
	if (k == qp->n) {
		void *grown = berth_realloc(qp->p, (qp->n + 1) * sizeof(*qp->p));
		if (!grown)
			return berth_fail(err, BERTH_ENOMEM, "out of memory");
		qp->p = grown;
		int64_t sum[4];
		int rc = store_usage(b->st, project, sum, err);
		if (rc)
			return rc;
		qp->p[k].project = project;
		plan_usage_of(&qp->p[k].used, sum[0], sum[1], sum[2], sum[3]);
		qp->n++;
	}
	berth_usage need;
	plan_usage_of(&need, r->quota_cpu_milli, r->quota_mem, r->quota_gpus, 1);
	*used_out = &qp->p[k].used;
	return !plan_quota_wait(q, &qp->p[k].used, &need, why, len);
}

/* Adds what admitted run r holds of its quota to used. */
static void quota_take(berth_usage *used, const store_run *r)
{
	berth_usage need;
	if (!used)
		return;
	plan_usage_of(&need, r->quota_cpu_milli, r->quota_mem, r->quota_gpus, 1);
	berth_quantity_add(&used->cpu, &used->cpu, &need.cpu);
	berth_quantity_add(&used->mem, &used->mem, &need.mem);
	berth_quantity_add(&used->gpu, &used->gpu, &need.gpu);
	used->runs++;
}

/* Double fork: the supervisor belongs to no terminal and to no process that
 * waits for it; the middle process tells its pid through a pipe. */
extern char **environ;

static int add_waiter(berth_backend *b, const char *id, int fd, pid_t child, bool forked);

/* exe as a child of this process, in a session of its own, with stdin and
 * stdout on /dev/null, stderr appended to diag, keep_fd kept open, and the
 * signals of block blocked besides this thread's; -1 when it cannot be. */
static pid_t spawn_direct(const char *exe, char *const argv[], char *const envp[],
			  const char *diag, int keep_fd, const sigset_t *block)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t mask;
	pthread_sigmask(SIG_BLOCK, NULL, &mask);
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(block, sig) == 1)
			sigaddset(&mask, sig);
	if (posix_spawn_file_actions_init(&fa))
		return -1;
	pid_t pid = -1;
	if (posix_spawnattr_init(&at) == 0) {
		if (!posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0) &&
		    !posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0) &&
		    !posix_spawn_file_actions_addopen(&fa, 2, diag, O_WRONLY | O_CREAT | O_APPEND, 0600) &&
		    /* the same fd twice: its close-on-exec flag is cleared */
		    !posix_spawn_file_actions_adddup2(&fa, keep_fd, keep_fd) &&
		    !posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK) &&
		    !posix_spawnattr_setsigmask(&at, &mask) &&
		    posix_spawn(&pid, exe, &fa, &at, argv, envp))
			pid = -1;
		posix_spawnattr_destroy(&at);
	}
	posix_spawn_file_actions_destroy(&fa);
	return pid;
}

/* This process's command line as ps and pgrep show it: argv (a forked
 * supervisor is `berth __supervise ID`, as one started by exec is). Written
 * over the argument strings; when it is longer, on over the environment's,
 * whose strings environ keeps copies of, as setproctitle(3) does: the kernel
 * reads a command line whose last argument byte is no longer NUL on to its
 * first NUL. */
static void set_title(const char *const *argv)
{
	int64_t at[4]; /* arg_start, arg_end, env_start, env_end */
	if (local_proc_fields(getpid(), false, 48, 4, at) || at[1] <= at[0])
		return;
	char *start = (char *)(uintptr_t)at[0], *end = (char *)(uintptr_t)at[1];
	size_t len = 0, room = (size_t)(end - start);
	for (size_t i = 0; argv[i]; i++)
		len += strlen(argv[i]) + 1;
	if (len <= room) {
		memset(start, 0, room);
		for (char *p = start; *argv; p += strlen(*argv++) + 1)
			memcpy(p, *argv, strlen(*argv));
		return;
	}
	if (at[2] == at[1] && at[3] > at[2]) {
		char *env_end = (char *)(uintptr_t)at[3];
		for (char **e = environ; *e; e++) {
			char *copy = *e >= end && *e < env_end ? berth_strdup(*e) : *e;
			if (!copy)
				return; /* (copies of those before: nothing is written yet) */
			*e = copy;
		}
		room = (size_t)(env_end - start);
	}
	size_t n = 0;
	for (size_t i = 0; argv[i] && n + 1 < room; i++) {
		if (i)
			start[n++] = ' ';
		for (const char *c = argv[i]; *c && n + 1 < room; c++)
			start[n++] = *c;
	}
	memset(start + n, 0, room - n);
}

/* The supervisor of r as a fork of this process (opts.fork_supervisors: it
 * has one thread), running in it with the record as stored: no exec, no
 * loading of berth and its libraries again, and the run starts before the
 * store is opened. As posix_spawn makes the exec'd one: a session of its
 * own, stdin and stdout on /dev/null, stderr appended to diag, every signal
 * at its default, the stops blocked; the supervisor closes every other fd
 * but done_fd. The store is closed before the fork (store_suspend): SQLite's
 * state of this process's open databases is not the child's to use. -1 when
 * it cannot be (the caller spawns one instead). */
static pid_t fork_supervisor(berth_backend *b, store_run *r, const char *diag, int done_fd,
			     const sigset_t *stops)
{
	int64_t threads = 0;
	if (local_proc_fields(getpid(), false, 20, 1, &threads) || threads != 1 || store_suspend(b->st))
		return -1;
	sigset_t mask;
	pthread_sigmask(SIG_BLOCK, stops, &mask);
	pid_t pid = fork();
	if (pid == 0) {
		setsid();
		struct sigaction dfl = {.sa_handler = SIG_DFL};
		for (int sig = 1; sig < NSIG; sig++)
			sigaction(sig, &dfl, NULL);
		int null = open("/dev/null", O_RDWR), log = open(diag, O_WRONLY | O_CREAT | O_APPEND, 0600);
		if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(log >= 0 ? log : null, 2) < 0)
			_exit(127);
		const char *title[] = {"berth", "__supervise", r->info.id, NULL};
		set_title(title);
		/* the environment an exec'd one gets (its own queue pass reads it) */
		const char *config = berth_policy_file(b->policy);
		unsetenv("BERTH_DONE_FD");
		if (setenv("BERTH_HOME", b->home, 1) ||
		    (config ? setenv("BERTH_CONFIG", config, 1) : unsetenv("BERTH_CONFIG")))
			_exit(127);
		_exit(local_supervise_forked(b->home, r, done_fd) ? 1 : 0);
	}
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	/* the store stays closed until this process next uses it: a waiter is
	 * told the end with the record (local_wait), and does not open it */
	return pid;
}

/* Starts the supervisor of run id (record r) in a session of its own and
 * returns its pid: with wait (a caller that waits for this run), as its
 * child, with the pipe that says when the run is done: forked (see above),
 * else `berth __supervise ID` by posix_spawn; else, and when that fails, as
 * a daemon (double fork). Everything the children need is made before fork:
 * a server forks while other threads may hold malloc's locks, so between fork
 * and exec only async-signal-safe calls are made. */
static pid_t spawn_supervisor(berth_backend *b, const char *id, store_run *r, bool wait, bool *forked)
{
	*forked = false;
	char diag_path[4096], home_env[4200], config_env[4200], done_env[32];
	if (backend_run_path(diag_path, sizeof(diag_path), b->home, id, "supervisor.log"))
		return -1;
	snprintf(home_env, sizeof(home_env), "BERTH_HOME=%s", b->home);
	const char *config = berth_policy_file(b->policy);
	if (config)
		snprintf(config_env, sizeof(config_env), "BERTH_CONFIG=%s", config);
	size_t n = 0;
	while (environ[n])
		n++;
	char **envp = berth_calloc(n + 4, sizeof(char *));
	if (!envp)
		return -1;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "BERTH_HOME=", 11) && strncmp(environ[i], "BERTH_CONFIG=", 13) &&
		    strncmp(environ[i], "BERTH_DONE_FD=", 14))
			envp[k++] = environ[i];
	envp[k++] = home_env;
	/* the supervisor schedules with the same policy */
	if (config)
		envp[k++] = config_env;
	char *const argv[] = {"berth", "__supervise", (char *)id, NULL};
	/* the waiter's pipe: the supervisor holds its write end, and closes it
	 * once the run is done */
	int done[2] = {-1, -1};
	if (wait && LOCAL(b)->nwaiters < LOCAL_MAX_WAITERS && pipe2(done, O_CLOEXEC))
		done[0] = done[1] = -1;
	/* the supervisor takes fds 0 to 2 for its own: its end must be above them
	 * (a caller started with them closed gets them from pipe2) */
	if (done[1] >= 0 && done[1] <= 2) {
		int moved = fcntl(done[1], F_DUPFD_CLOEXEC, 3);
		close(done[1]);
		done[1] = moved;
		if (moved < 0) {
			close(done[0]);
			done[0] = -1;
		}
	}
	if (done[1] >= 0) {
		snprintf(done_env, sizeof(done_env), "BERTH_DONE_FD=%d", done[1]);
		envp[k++] = done_env;
	}
	/* a stop may come as soon as the pid is known, before the supervisor
	 * has taken its signals: it waits, blocked, for them */
	sigset_t stops;
	sigemptyset(&stops);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGINT);
	sigaddset(&stops, SIGHUP);
	if (done[1] >= 0) {
		/* a caller that waits may be the supervisor's parent: it exits, or
		 * reaps nothing, soon after the run ends; one vfork-like spawn costs
		 * less than two forks of this process */
		bool fork_it = r && b->fork_supervisors;
#ifdef BERTH_FAULT_INJECTION
		/* tests: the spawn a caller with threads (a server) makes */
		fork_it = fork_it && !getenv("BERTH_TEST_SPAWN_SUPERVISOR");
#endif
		pid_t sup = fork_it ? fork_supervisor(b, r, diag_path, done[1], &stops) : -1;
		*forked = sup > 0;
		if (sup < 0)
			sup = spawn_direct(b->exe, argv, envp, diag_path, done[1], &stops);
		if (sup > 0) {
			free(envp);
			close(done[1]);
			if (add_waiter(b, id, done[0], sup, *forked))
				close(done[0]);
			return sup;
		}
	}
	int p[2] = {-1, -1};
	pid_t mid = -1;
	if (!pipe2(p, O_CLOEXEC))
		mid = fork();
	if (mid < 0) {
		if (p[0] >= 0) {
			close(p[0]);
			close(p[1]);
		}
		if (done[0] >= 0) {
			close(done[0]);
			close(done[1]);
		}
		free(envp);
		return -1;
	}
	if (mid == 0) {
		setsid();
		pid_t sup = vfork();
		if (sup == 0) {
			/* what the supervisor itself may say (a crash, a sanitizer) goes to
			 * HOME/runs/ID/supervisor.log, never to the run's log */
			int null = open("/dev/null", O_RDWR);
			int diag = open(diag_path, O_WRONLY | O_CREAT | O_APPEND, 0600);
			if (null >= 0) {
				dup2(null, 0);
				dup2(null, 1);
				dup2(diag >= 0 ? diag : null, 2);
			}
			sigprocmask(SIG_BLOCK, &stops, NULL);
			if (done[1] >= 0)
				fcntl(done[1], F_SETFD, 0);
			execve(b->exe, argv, envp);
			_exit(127);
		}
		ssize_t w = write(p[1], &sup, sizeof(sup));
		_exit(w == (ssize_t)sizeof(sup) ? 0 : 1);
	}
	close(p[1]);
	free(envp);
	pid_t sup = -1;
	while (waitpid(mid, NULL, 0) < 0 && errno == EINTR)
		;
	if (read(p[0], &sup, sizeof(sup)) != (ssize_t)sizeof(sup))
		sup = -1;
	close(p[0]);
	if (done[1] >= 0)
		close(done[1]);
	if (done[0] >= 0 && (sup < 0 || add_waiter(b, id, done[0], 0, false)))
		close(done[0]);
	return sup;
}

struct local_waiter {
	char *id;
	int fd;       /* -1 once it has said what it could */
	pid_t child;  /* the supervisor, when it is this process's child and not reaped */
	bool forked;  /* ... a fork of this process, which it has not recorded: */
	pid_t pid;    /* its pid and start time, for the record if it dies unrecorded */
	int64_t start;
	bool done;    /* its run is done: kept only to reap the child, or for end */
	berth_run_info *end; /* the record the supervisor told with the end, until taken */
};

static int add_waiter(berth_backend *b, const char *id, int fd, pid_t child, bool forked)
{
	struct local_waiter *w = realloc(LOCAL(b)->waiters, (LOCAL(b)->nwaiters + 1) * sizeof(*w));
	if (!w)
		return -1;
	LOCAL(b)->waiters = w;
	struct local_waiter *n = &w[LOCAL(b)->nwaiters];
	if (!(n->id = berth_strdup(id)))
		return -1;
	n->fd = fd;
	n->child = child;
	n->forked = forked;
	n->pid = child;
	n->start = forked ? local_proc_start_of(child, true) : -1;
	n->done = false;
	n->end = NULL;
	LOCAL(b)->nwaiters++;
	return 0;
}

/* Reaps the supervisors of done runs that have exited since (never waits). */
static void reap_done(berth_backend *b)
{
	for (size_t i = 0; i < LOCAL(b)->nwaiters;) {
		struct local_waiter *w = &LOCAL(b)->waiters[i];
		if (w->child > 0 && waitpid(w->child, NULL, WNOHANG) != 0)
			w->child = 0;
		if (w->done && !w->child && !w->end) {
			free(w->id);
			*w = LOCAL(b)->waiters[--LOCAL(b)->nwaiters];
			continue;
		}
		i++;
	}
}

static struct local_waiter *waiter_of(berth_backend *b, const char *id)
{
	for (size_t i = 0; i < LOCAL(b)->nwaiters; i++)
		if (!LOCAL(b)->waiters[i].done && !strcmp(LOCAL(b)->waiters[i].id, id))
			return &LOCAL(b)->waiters[i];
	return NULL;
}

/* The waiter of done run id whose supervisor told its record, or NULL. */
static struct local_waiter *end_of(berth_backend *b, const char *id)
{
	for (size_t i = 0; i < LOCAL(b)->nwaiters; i++)
		if (LOCAL(b)->waiters[i].end && !strcmp(LOCAL(b)->waiters[i].id, id))
			return &LOCAL(b)->waiters[i];
	return NULL;
}

static berth_run_info *local_take_end(berth_backend *b, const char *id)
{
	struct local_waiter *w = end_of(b, id);
	berth_run_info *end = w ? w->end : NULL;
	if (w)
		w->end = NULL;
	reap_done(b);
	return end;
}

/* Up to ms for the next bytes on fd: > 0 bytes read, 0 at its end, -1 when
 * nothing came or it failed. */
static ssize_t read_within(int fd, char *buf, size_t len, int ms)
{
	struct pollfd p = {fd, POLLIN, 0};
	if (poll(&p, 1, ms) <= 0)
		return -1;
	ssize_t n;
	while ((n = read(fd, buf, len)) < 0 && errno == EINTR)
		;
	return n;
}

/* The record told with the end ("E": its length, then record_pack's bytes),
 * of which have (nhave bytes) came with the "E": the rest was written at
 * once, so it comes at once; NULL when it does not (the store is read). */
static berth_run_info *end_record(int fd, const char *have, size_t nhave)
{
	berth_buf m = BERTH_BUF_INIT;
	berth_buf_append(&m, have, nhave);
	uint32_t len = 0;
	char buf[4096];
	ssize_t n = 1;
	while (!m.failed && n > 0) {
		if (m.len >= sizeof(len)) {
			memcpy(&len, m.data, sizeof(len));
			if (len > LOCAL_END_MAX || m.len - sizeof(len) >= len)
				break;
		}
		if ((n = read_within(fd, buf, sizeof(buf), 1000)) > 0)
			berth_buf_append(&m, buf, (size_t)n);
	}
	berth_run_info *info = NULL;
	if (!m.failed && m.len >= sizeof(len) && len <= LOCAL_END_MAX && m.len - sizeof(len) == len &&
	    record_unpack(m.data + sizeof(len), len, &info))
		info = NULL;
	berth_buf_release(&m);
	return info;
}

/* Up to ms for what the pipe from w's supervisor says: 2 when it said the
 * run's end is recorded ("e", or "E" with the record: w->end; w is done,
 * its pipe closed: a run that never started says no "s" before), 1 when
 * it closed, 0 when it said the run started ("s") or nothing. */
static int waiter_hears(struct local_waiter *w, int ms)
{
	struct pollfd p = {w->fd, POLLIN, 0};
	if (poll(&p, 1, ms) <= 0)
		return 0;
	char said[512];
	ssize_t n;
	while ((n = read(w->fd, said, sizeof(said))) < 0 && errno == EINTR)
		;
	if (n <= 0)
		return n == 0 || errno != EAGAIN;
	/* "s" once, then the end's byte: what follows an "E" is its record */
	size_t i = 0;
	while (i < (size_t)n && said[i] == 's')
		i++;
	if (i == (size_t)n)
		return 0;
	if (said[i] == 'E')
		w->end = end_record(w->fd, said + i + 1, (size_t)n - i - 1);
	close(w->fd);
	w->fd = -1;
	w->done = true;
	return 2;
}

/* A run this handle waits on through a pipe is its own: the kind's, and its
 * store need not be asked (nor opened again, after a fork). */
static bool local_holds(berth_backend *b, const char *id)
{
	return waiter_of(b, id) != NULL;
}

static int local_wait_done(berth_backend *b, const char *id, int ms)
{
	reap_done(b);
	struct local_waiter *w = waiter_of(b, id);
	if (!w)
		return -1;
	if (w->fd >= 0) {
		int heard = waiter_hears(w, ms);
		if (!heard)
			return 0;
		if (heard == 2) {
			reap_done(b);
			return 1;
		}
		/* the supervisor closed its end: done, or it died */
		close(w->fd);
		w->fd = -1;
		char done[4096];
		if (backend_run_path(done, sizeof(done), b->home, id, "done") || access(done, F_OK) == 0) {
			w->done = true;
			reap_done(b);
			return 1;
		}
		/* a forked one records itself once the run has started: if it died
		 * before, this process says who it was, for recovery to see it gone */
		if (w->forked && w->start >= 0)
			store_run_set_supervisor(b->st, id, w->pid, w->start, NULL);
	} else {
		/* it died: until it is reaped (by this process, or by init when it
		 * is not ours) recovery takes it for alive */
		struct timespec ts = {0, (ms < 100 ? ms : 100) * 1000000L};
		nanosleep(&ts, NULL);
	}
	reap_done(b);
	/* what it held is free: start what waits for it, as its supervisor would have */
	if (recover(b) > 0)
		local_schedule(b, NULL);
	return 1;
}

static void local_waiters_close(berth_backend *b)
{
	reap_done(b);
	for (size_t i = 0; i < LOCAL(b)->nwaiters; i++) {
		if (LOCAL(b)->waiters[i].fd >= 0)
			close(LOCAL(b)->waiters[i].fd);
		berth_run_info_free(LOCAL(b)->waiters[i].end);
		free(LOCAL(b)->waiters[i].id);
	}
	free(LOCAL(b)->waiters);
	LOCAL(b)->waiters = NULL;
	LOCAL(b)->nwaiters = 0;
}

static int local_schedule(berth_backend *b, berth_error **err)
{
	return local_schedule_runs(b, NULL, 0, NULL, err);
}

/*
 * fresh: runs being submitted, not stored yet: they are inserted, and placed
 * in their order, in one transaction: all of them or none. A submission takes
 * capacity and frees none, so no other queued run can fit now that did not
 * before: only the new ones are looked at (the queue is not read, which would
 * cost every submission the whole queue).
 */
/* Takes what r asks from the free capacity f, with GPUs by index, and makes it
 * Running at now; -1 when out of memory (r unchanged). */
static int place(freecap *f, store_run *r, int64_t now)
{
	berth_buf ids = BERTH_BUF_INIT;
	unsigned char used[sizeof(f->gpu_used)];
	memcpy(used, f->gpu_used, sizeof(used));
	for (int64_t g = 0, k = 0; k < r->info.gpus && g < 256; g++)
		if (!used[g]) {
			used[g] = 1;
			berth_buf_printf(&ids, "%s%lld", k++ ? "," : "", (long long)g);
		}
	if (ids.failed) {
		berth_buf_release(&ids);
		return -1;
	}
	memcpy(f->gpu_used, used, sizeof(used));
	f->cpu_milli -= r->info.cpu_milli;
	f->mem -= r->info.mem;
	f->gpus -= r->info.gpus;
	f->disk -= r->info.disk;
	free(r->info.gpu_ids);
	r->info.gpu_ids = ids.len ? berth_buf_detach(&ids) : NULL;
	berth_buf_release(&ids);
	free(r->info.reason);
	r->info.reason = NULL;
	r->info.state = BERTH_STATE_RUNNING;
	r->info.started = now;
	return 0;
}

/* The record of admitted run id among pending. */
static store_run *record_of(const char *id, store_run **pending, size_t npending)
{
	for (size_t k = 0; k < npending; k++)
		if (pending[k]->info.id == id)
			return pending[k];
	return NULL;
}

/* After the commit that admitted them: a supervisor for each admitted run
 * (waits: with a pipe to this handle); a run whose supervisor cannot be
 * started fails, and frees what it held. */
static void start_admitted(berth_backend *b, char **admitted, size_t nadmitted,
			   store_run **pending, size_t npending, bool waits)
{
	for (size_t i = 0; i < nadmitted; i++) {
		char dir[4096];
		pid_t sup = -1;
		bool forked = false;
		if (!backend_run_path(dir, sizeof(dir), b->home, admitted[i], NULL) &&
		    !fs_mkdirs(dir, 0700))
			/* a waiting caller waits for what it submits, not for others' queued runs */
			sup = spawn_supervisor(b, admitted[i], record_of(admitted[i], pending, npending),
					       waits, &forked);
		/* tests: the spawner is slow, so that a short run's supervisor ends first */
		if (sup > 0)
			berth_test_pause("BERTH_TEST_SPAWN_DELAY_MS");
		/* one forked records itself: this process's store waits, closed */
		if (forked)
			continue;
		/* a short run's supervisor may be done and gone already: a zombie of this
		 * process (posix_spawn) still has its start time */
		int64_t start = sup > 0 ? local_proc_start_of(sup, true) : -1;
		if (sup > 0 && start >= 0) {
			store_run_set_supervisor(b->st, admitted[i], sup, start, NULL);
			continue;
		}
		/* reaped already (the double fork): it recorded its end, or died, which
		 * recovery sees; only a supervisor that never started fails the run here */
		store_run *stored = NULL;
		bool started = sup > 0 && !store_run_get(b->st, admitted[i], &stored, NULL) &&
			       (stored->supervisor_pid == sup || berth_state_final(stored->info.state));
		store_run_free(stored);
		if (started)
			continue;
		/* it could not be started: it fails, and frees what it held */
		store_run *r = record_of(admitted[i], pending, npending);
		if (!r)
			continue;
		r->info.state = BERTH_STATE_FAILED;
		r->info.finished = store_now_ms();
		r->info.reason = berth_strdup("cannot start its supervisor process");
		store_run_update(b->st, r, NULL);
		local_mark_done(b->home, r->info.id);
	}
}

static int local_schedule_runs(berth_backend *b, store_run **fresh, size_t nfresh,
			const submit_check *check, berth_error **err)
{
	store_run **pending = NULL;
	size_t npending = 0;
	char **admitted = NULL;
	size_t nadmitted = 0;
	/* a pass of the queue with nothing queued takes no write lock (a read
	 * needs none); what is queued after this read is placed by its submitter */
	if (!nfresh && !store_queued(b->st, local_backend_ops.kind))
		return 0;
	if (store_begin(b->st, err))
		return -BERTH_EIO;
	/* what the runs were planned against (their projects' quotas) still holds,
	 * now that no other writer can change it before the commit */
	int rc = check ? check->fn(check->ctx, err) : 0;
	if (rc) {
		store_rollback(b->st);
		return rc;
	}
	/* what the running runs hold: their sums, and the GPUs by id */
	int64_t held[4] = {0};
	char *gpu_ids = NULL;
	rc = store_running(b->st, local_backend_ops.kind, held, &gpu_ids, err);
	freecap f = {LOCAL(b)->node.cpu_milli - held[0], LOCAL(b)->node.mem - held[1], LOCAL(b)->node.gpus - held[2],
		     LOCAL(b)->node.disk - held[3], {0}};
	take_gpus(&f, gpu_ids, 1);
	free(gpu_ids);
	int64_t fit[4] = {f.cpu_milli, f.mem, f.gpus, f.disk};
	int64_t version = -1;
	if (!rc && !nfresh) {
		/* nothing can start that did not fit, with as much free or more, in the
		 * last pass of this handle that started nothing, unless another process
		 * wrote to the store since (data_version; what this handle writes itself
		 * either starts a pass afresh, a submission, or frees capacity, which the
		 * comparison sees): then the queue is not read at all */
		if (store_data_version(b->st, &version, NULL))
			version = -1;
		queue_pass *last = &LOCAL(b)->last_pass;
		bool same = last->valid && version >= 0 && version == last->version;
		for (int k = 0; same && k < 4; k++)
			same = fit[k] <= last->fit[k];
		/* only the queued runs that could start now are read: with a long
		 * queue behind a full machine, none (their reasons keep the free
		 * capacity of when they were last looked at) */
		store_query q = {.state = BERTH_STATE_PENDING, .queue = true, .backend = local_backend_ops.kind,
				 .fit = fit};
		if (!same)
			rc = store_run_query(b->st, &q, &pending, &npending, err);
	}
	/* runs being submitted are placed first, then stored once, as placed */
	if (!rc && nfresh) {
		if (!(pending = berth_calloc(nfresh, sizeof(*pending))))
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
		else
			for (; npending < nfresh; npending++)
				pending[npending] = fresh[npending];
	}
	if (rc)
		goto out;
	if (npending && !(admitted = berth_calloc(npending, sizeof(*admitted)))) {
		rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
		goto out;
	}
	int64_t now = store_now_ms();
	quota_pass qp = {NULL, 0};
	for (size_t i = 0; i < npending; i++) {
		store_run *r = pending[i];
		/* its project's quota first (as Kueue admits before the scheduler
		 * places), then the machine: in priority order, each run that fits both */
		char qwhy[512];
		berth_usage *qused = NULL;
		int qfit = quota_fits(b, &qp, r, qwhy, sizeof(qwhy), &qused, err);
		if (qfit < 0) {
			rc = qfit;
			free(qp.p);
			goto out;
		}
		if (!qfit || !fits(&f, r)) {
			char *why = qfit ? wait_reason(&f, &LOCAL(b)->node, r) : berth_strdup(qwhy);
			if (why && (!r->info.reason || strcmp(why, r->info.reason))) {
				free(r->info.reason);
				r->info.reason = why;
				if (!nfresh && (rc = store_run_update(b->st, r, err))) {
					free(qp.p);
					goto out;
				}
			} else
				free(why);
			continue;
		}
		if (place(&f, r, now)) {
			free(qp.p);
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
			goto out;
		}
		quota_take(qused, r);
		if (!nfresh && (rc = store_run_update(b->st, r, err))) {
			free(qp.p);
			goto out;
		}
		admitted[nadmitted++] = r->info.id;
	}
	free(qp.p);
	for (size_t i = 0; i < nfresh; i++) {
		if ((rc = store_run_insert(b->st, fresh[i], err)))
			goto out;
		store_event(b->st, fresh[i]->info.id, "Submitted", NULL);
	}
	/* in the same transaction: a commit less before the supervisors start */
	for (size_t i = 0; i < nadmitted; i++)
		store_event(b->st, admitted[i], "Scheduled", NULL);
	/* tests: a submission killed before its commit leaves nothing */
	if (nfresh)
		berth_test_pause("BERTH_TEST_COMMIT_DELAY_MS");
	/* the supervisors start while the commit is made durable (an fsync, a
	 * good part of a short run's launch, beside its preparation); no one is
	 * told of the runs before it is: this caller waits below, a server's
	 * worker before it answers (as for every commit of its own) */
	bool deferred = store_defer_sync(b->st, true);
	if (!rc)
		rc = store_commit(b->st, err);
	/* what the next pass may skip (see above) */
	LOCAL(b)->last_pass.valid = !rc && !nfresh && !nadmitted;
	LOCAL(b)->last_pass.version = version;
	memcpy(LOCAL(b)->last_pass.fit, fit, sizeof(fit));
	if (!rc)
		start_admitted(b, admitted, nadmitted, pending, npending, b->waits && nfresh);
	store_defer_sync(b->st, deferred);
	if (rc)
		goto out;
	/* durable, or the error says it may not be (its runs started) */
	if (!deferred)
		rc = store_sync(b->st, err);
	goto done;
out:
	store_rollback(b->st);
done:
	free(admitted);
	if (nfresh)
		free(pending); /* the runs are the caller's */
	else
		store_run_list_free(pending, npending);
	return rc;
}

/* ---- submit ---------------------------------------------------------------------- */

/* The command, the action and the machine's capacity, labels and taints: every
 * reason it can never run here, each at the user's field. */
static int local_needs(berth_backend *b, const berth_run *run, berth_error **err)
{
	berth_arena *arena = berth_arena_new();
	if (!arena)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	int rc = backend_needs("local", &LOCAL(b)->node, run, arena, err);
	berth_arena_free(arena);
	return rc;
}

static int local_admit(berth_backend *b, const berth_run *run, berth_error **err)
{
	return local_needs(b, run, err);
}

/* The record of one run to submit: planned for this machine, not stored. */
static int local_prepare(berth_backend *b, const berth_run *run, const char *spec_text,
			 store_run **out, berth_error **err)
{
	*out = NULL;
	int rc = local_admit(b, run, err);
	if (rc)
		return rc;
	store_run *r = berth_calloc(1, sizeof(*r));
	if (!r)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	char log[4096];
	backend_run_path(log, sizeof(log), b->home, run->id, "log");
	berth_run_info *i = &r->info;
	if (!(rc = local_plan_launch(b, LOCAL(b), run, r, err)) &&
	    !(rc = record_new(b->policy, run, spec_text, local_backend_ops.kind, r, err))) {
		i->enforcement = berth_strdup(LOCAL(b)->cgv == CG_NONE ? "rlimits"
					      : LOCAL(b)->cgv == CG_V1 ? "cgroup v1" : "cgroup v2");
		i->log_path = berth_strdup(log);
		if (!i->enforcement || !i->log_path)
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	if (rc)
		store_run_free(r);
	else
		*out = r;
	return rc;
}

/* A warning, unless the same words are in err already (once per batch, not once per run). */
static void warn_once(berth_error **err, const char *fmt, ...) BERTH_PRINTF(2, 3);
static void warn_once(berth_error **err, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < berth_error_count(*err); i++)
		if (!strcmp(berth_error_get(*err, i)->message, msg))
			return;
	berth_problem_add(err, BERTH_EINVALID, BERTH_WARNING, NULL, "%s", msg);
}

static int local_submit(berth_backend *b, const berth_run *const *runs, size_t n,
			const char *spec_text, const submit_check *check, berth_run_info **out,
			berth_error **err)
{
	store_run **recs = berth_calloc(n ? n : 1, sizeof(*recs));
	if (!recs)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++)
		rc = local_prepare(b, runs[i], spec_text, &recs[i], err);
	/* stored and placed (started, or queued with their reasons) in one
	 * transaction, all or none; a run's directory (log, done marker) is made
	 * when it starts: a queued run costs no inode */
	if (!rc)
		rc = local_schedule_runs(b, recs, n, check, err);
	for (size_t i = 0; i < n; i++) {
		/* the records as stored and placed: no need to read them back */
		if (!rc && out && !(out[i] = record_info_take(recs[i])))
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
		store_run_free(recs[i]);
	}
	free(recs);
	if (rc) {
		for (size_t i = 0; out && i < n; i++) {
			berth_run_info_free(out[i]);
			out[i] = NULL;
		}
		return rc;
	}
	for (size_t i = 0; i < n; i++) {
		const berth_spec *s = &runs[i]->spec;
		bool limited = s->resources.cpu.limits.set || s->resources.mem.limits.set;
		if (s->function.image.s)
			warn_once(err, "function.image: \"%s\" is recorded, not pulled: the local backend "
				  "runs the command on this machine", s->function.image.s);
		if (s->action != BERTH_ACTION_JOB && ((s->replicas.set && s->replicas.v > 1) ||
						      (s->min_replicas.set && s->min_replicas.v > 1)))
			warn_once(err, "replicas: the local backend runs one replica");
		if (LOCAL(b)->cgv == CG_NONE && limited)
			warn_once(err, "no writable cgroup under %s: memory is limited with rlimits "
				  "(address space) and the CPU limit is not enforced", LOCAL(b)->cg_root);
	}
	return 0;
}

/* ---- stop, logs --------------------------------------------------------------------- */

static int local_stop(berth_backend *b, const char *id, int grace_s, bool wait, berth_error **err)
{
	if (store_begin(b->st, err))
		return -BERTH_EIO;
	store_run *r = NULL;
	int rc = store_run_get(b->st, id, &r, err);
	if (rc) {
		store_rollback(b->st);
		return rc;
	}
	if (berth_state_final(r->info.state)) {
		store_rollback(b->st);
		store_run_free(r);
		return 0;
	}
	if (r->info.state == BERTH_STATE_PENDING) {
		r->info.state = BERTH_STATE_STOPPED;
		r->info.finished = store_now_ms();
		free(r->info.reason);
		r->info.reason = berth_strdup("stopped before it started");
		rc = store_run_update(b->st, r, err);
		if (!rc)
			rc = store_commit(b->st, err);
		if (rc)
			store_rollback(b->st);
		else {
			store_event(b->st, id, "Stopped", r->info.reason);
			local_mark_done(b->home, id);
		}
		store_run_free(r);
		return rc;
	}
	rc = store_run_request_stop(b->st, id, grace_s, err);
	if (!rc)
		rc = store_commit(b->st, err);
	if (rc) {
		store_rollback(b->st);
		store_run_free(r);
		return rc;
	}
	/* once per stop, and again only for a shorter grace: a stop asked a thousand
	 * times is not a thousand events */
	if (!r->stop_requested || (grace_s >= 0 && grace_s < r->grace))
		store_event(b->st, id, "Stopping", NULL);
	if (local_pid_is(r->supervisor_pid, r->supervisor_start))
		kill((pid_t)r->supervisor_pid, SIGTERM);
	int64_t grace = grace_s >= 0 ? grace_s : r->grace;
	store_run_free(r);
	if (!wait)
		return 0;
	/* the supervisor stops the processes and records the end; if it is gone,
	 * recovery on the next open does */
	berth_error *e = NULL;
	rc = local_wait(b, id, (grace + 10) * 1000, &e);
	if (rc == -BERTH_ETIMEOUT) {
		berth_error_free(e);
		e = NULL;
		recover(b);
		if ((rc = local_wait(b, id, 1000, &e)) == -BERTH_ETIMEOUT) {
			berth_error_free(e);
			e = NULL;
			rc = berth_fail(err, BERTH_ETIMEOUT, "run \"%s\" is not finished after %lld ms: its "
					"supervisor does not answer", id, (long long)(grace + 11) * 1000);
		}
	}
	if (e)
		berth_error_move(err, e);
	return rc;
}

static void local_watch_open(local_watch *w, const char *dir)
{
	w->dir = dir;
	w->on_parent = false;
	w->wd = -1;
	w->fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (w->fd < 0)
		return;
	w->wd = inotify_add_watch(w->fd, dir, IN_CREATE | IN_MODIFY | IN_MOVED_TO);
	if (w->wd < 0 && errno == ENOENT) {
		/* not made yet (a queued run): its parent says when it is */
		char parent[4096];
		snprintf(parent, sizeof(parent), "%s", dir);
		char *slash = strrchr(parent, '/');
		if (slash && slash != parent) {
			*slash = '\0';
			w->wd = inotify_add_watch(w->fd, parent, IN_CREATE | IN_MOVED_TO);
			w->on_parent = w->wd >= 0;
		}
	}
	if (w->wd < 0) {
		close(w->fd);
		w->fd = -1;
	}
}

static void local_watch_wait(local_watch *w, int ms)
{
	if (w->fd < 0) {
		struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
		nanosleep(&ts, NULL);
		return;
	}
	struct pollfd p = {w->fd, POLLIN, 0};
	if (poll(&p, 1, ms) > 0) {
		char ev[4096];
		while (read(w->fd, ev, sizeof(ev)) > 0)
			;
	}
	/* the run's directory made since: watch it instead of its parent */
	if (w->on_parent) {
		int wd = inotify_add_watch(w->fd, w->dir, IN_CREATE | IN_MODIFY | IN_MOVED_TO);
		if (wd >= 0) {
			inotify_rm_watch(w->fd, w->wd);
			w->wd = wd;
			w->on_parent = false;
		}
	}
}

static void local_watch_close(local_watch *w)
{
	if (w->fd < 0)
		return;
	/* without its watch, the instance closes without waiting for the kernel */
	inotify_rm_watch(w->fd, w->wd);
	close(w->fd);
	w->fd = -1;
}

/* The run's log: one worker's (rank >= 0), else every worker's, each line
 * of a distributed job's after its worker's "[rank N] " (logfile.h). */
static int local_logs(berth_backend *b, const char *id, const berth_log_opts *o,
		      berth_log_write write_fn, void *ctx, berth_error **err)
{
	store_run *r = NULL;
	int rank = o->rank;
	int rc = store_run_get(b->st, id, &r, err);
	if (rc)
		return rc;
	int64_t workers = r->info.workers > 1 ? r->info.workers : 1;
	rc = rank >= 0 ? berth_run_check_rank(&r->info, rank, err) : 0;
	store_run_free(r);
	if (rc)
		return rc;
	size_t first = rank >= 0 ? (size_t)rank : 0, n = rank >= 0 ? 1 : (size_t)workers;
	log_view v;
	log_view_init(&v, o, rank < 0 && workers > 1, write_fn, ctx);
	/* the logs are where this data dir keeps them, whatever path the record says */
	char dir[4096], done[4096];
	log_src *srcs = berth_calloc(n, sizeof(*srcs));
	if (!srcs)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	bool bad = backend_run_path(dir, sizeof(dir), b->home, id, NULL) ||
		   backend_run_path(done, sizeof(done), b->home, id, "done");
	for (size_t i = 0; i < n; i++) {
		char sub[32], path[4096];
		local_worker_log(sub, sizeof(sub), (int64_t)(first + i));
		bad |= backend_run_path(path, sizeof(path), b->home, id, sub) != 0;
		log_src_init(&srcs[i], path, (int)(first + i));
	}
	if (bad) {
		free(srcs);
		return berth_fail(err, BERTH_EINVALID, "\"%s\" is not a run id", id);
	}
	/* one watch for the whole follow, made before the first read: nothing
	 * written after that read is missed */
	local_watch w = {.fd = -1};
	if (o->follow)
		local_watch_open(&w, dir);
	for (;;) {
		int got = log_read(srcs, n, &v, &rc, err);
		if (got < 0)
			break;
		if (got)
			continue;
		if (!o->follow)
			break;
		if (access(done, F_OK) == 0) {
			/* final: what was written before the marker is read above, once more */
			log_read(srcs, n, &v, &rc, err);
			break;
		}
		local_watch_wait(&w, 1000);
		/* a quiet run: the caller is asked whether it still reads (a server's
		 * client may have gone), about once a second */
		if (write_fn(ctx, "", 0))
			break;
	}
	local_watch_close(&w);
	log_finish(srcs, n, &v, &rc);
	free(srcs);
	return rc;
}

/* Until the run's record is final: woken by the pipe from its supervisor when
 * this handle started it, else by a watch on its directory made before the
 * first read of its record; a run that ended but could not be recorded (a
 * full disk) is recovered from its done marker. */
static int local_wait(berth_backend *b, const char *id, int64_t timeout_ms, berth_error **err)
{
	char dir[4096];
	backend_run_path(dir, sizeof(dir), b->home, id, NULL);
	int64_t deadline = timeout_ms < 0 ? -1 : store_now_ms() + timeout_ms;
	local_watch w = {.fd = -1};
	if (local_wait_done(b, id, 0) < 0)
		local_watch_open(&w, dir);
	int rc = 0, stale = 0;
	for (;;) {
		/* while the pipe from its supervisor is open, it tells the end, and
		 * the record with it: the store is not read (nor opened again, after
		 * a fork) */
		if (end_of(b, id))
			break;
		struct local_waiter *pw = waiter_of(b, id);
		if (!pw || pw->fd < 0) {
			berth_run_info *i;
			if ((rc = record_get(b->st, id, &i, err)))
				break;
			bool final = berth_state_final(i->state);
			berth_run_info_free(i);
			if (final)
				break;
		}
		int64_t left = deadline < 0 ? 1000 : deadline - store_now_ms();
		if (left <= 0) {
			rc = berth_fail(err, BERTH_ETIMEOUT, "run \"%s\" is not finished after %lld ms", id,
					(long long)timeout_ms);
			break;
		}
		if (local_done_unrecorded(b, id, &stale)) {
			if (stale > 50) {
				rc = berth_fail(err, BERTH_EIO,
						"run \"%s\" ended but its end cannot be recorded in the store "
						"(is the data dir full?)", id);
				break;
			}
			continue;
		}
		int ms = left > 1000 ? 1000 : (int)left;
		if (local_wait_done(b, id, ms) < 0) {
			if (w.fd < 0)
				local_watch_open(&w, dir);
			local_watch_wait(&w, ms);
		}
	}
	local_watch_close(&w);
	return rc;
}

/* Its directory (the log, what is left of its work dir) goes before its record. */
static int local_forget(berth_backend *b, const char *id, berth_error **err)
{
	char dir[4096];
	if (!backend_run_path(dir, sizeof(dir), b->home, id, NULL)) {
		local_rm_tree(dir);
		/* its supervisor, told the end is recorded, makes the done marker
		 * into it last: once more, if that came between the walk and the
		 * directory's removal */
		if (access(dir, F_OK) == 0)
			local_rm_tree(dir);
	}
	return 0;
}

const backend_ops local_backend_ops = {
	.kind = "local",
	.queues_quota = true,
	.open = local_open,
	.policy_changed = node_from_policy,
	.close = local_close,
	.reconcile = local_reconcile,
	.admit = local_admit,
	.needs = local_needs,
	.submit = local_submit,
	.stop = local_stop,
	.take_end = local_take_end,
	.logs = local_logs,
	.wait = local_wait,
	.forget = local_forget,
	.holds = local_holds,
};
