/*
 * supervisor.c - the supervisor of one local run (`berth __supervise ID`).
 *
 * It puts the run in a cgroup of its own with the run's limits (rlimits
 * where no cgroup can be written), makes its volumes visible at their mount
 * paths in a private mount namespace, switches user, starts the command
 * with its environment and secrets, enforces the timeout, stops everything
 * on `berth stop` (SIGTERM, the grace period, SIGKILL), restarts it as its
 * retries (or a server's restart policy) say, and records how it ended:
 * exit code, signal, OOM kill, usage. As a child subreaper it also collects
 * whatever the run left running, so that no process outlives the run.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <linux/capability.h>
#include <sys/statvfs.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backend/local/mpi.h"
#include "backend/local/supervisor.h"
#include "backend/local/supervisor_internal.h"
#include "base/internal.h"
#include "base/names.h"
#include "base/seal.h"


/* ---- environment -------------------------------------------------------------------- */

static int push_env(sup_worker *w, char *entry)
{
	char **grown = berth_realloc(w->envp, (w->nenv + 2) * sizeof(*grown));
	if (!grown || !entry)
		return -1;
	w->envp = grown;
	w->envp[w->nenv++] = entry;
	w->envp[w->nenv] = NULL;
	return 0;
}

static char *fmt(const char *f, ...) BERTH_PRINTF(1, 2);
static char *fmt(const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	berth_buf b = BERTH_BUF_INIT;
	int rc = berth_buf_vprintf(&b, f, ap);
	va_end(ap);
	return rc ? (berth_buf_release(&b), NULL) : berth_buf_detach(&b);
}

/* ---- the store ------------------------------------------------------------------------ */

/* The store, opened on first need: a supervisor forked by the caller that
 * submitted its run has the record already, and starts the run first. */
static int sup_store(sup *s)
{
	if (s->st)
		return 0;
	char path[4096];
	berth_error *e = NULL;
	int rc = backend_store_where(path, sizeof(path), s->home) ? -1 : store_open(&s->st, path, &e);
	berth_error_free(e);
	return rc ? -1 : 0;
}

static void event(sup *s, const char *kind, const char *message)
{
	if (s->st)
		store_event(s->st, s->r->info.id, kind, message);
}

void sup_note(sup *s, const char *kind, const char *message)
{
	berth_buf_append(&s->notes, kind, strlen(kind) + 1);
	berth_buf_append(&s->notes, message, strlen(message) + 1);
}

/* The events noted before the store was written (sup_note), in their order. */
static void flush_notes(sup *s)
{
	for (size_t off = 0; s->st && !s->notes.failed && off < s->notes.len;) {
		const char *kind = s->notes.data + off, *msg = kind + strlen(kind) + 1;
		event(s, kind, msg);
		off = (size_t)(msg + strlen(msg) + 1 - s->notes.data);
	}
	berth_buf_release(&s->notes);
}

/* A volume's path in the environment, where no mount namespace is allowed:
 * BERTH_VOLUME_<NAME>, the name as a variable's (upper-cased, '-' and '.'
 * made '_'). */
static char *volume_env(const volume *v)
{
	char name[BERTH_ENV_NAME_MAX];
	return fmt("BERTH_VOLUME_%s=%s", berth_env_name_from(v->name, name, sizeof(name)), v->source);
}

/* A distributed job's worker variable (store_run.worker_env) with {rank} and
 * {port} filled in. */
static char *worker_var(const sup *s, size_t rank, const char *entry)
{
	berth_buf b = BERTH_BUF_INIT;
	for (const char *p = entry; *p;) {
		if (!strncmp(p, "{rank}", 6)) {
			berth_buf_printf(&b, "%zu", rank);
			p += 6;
		} else if (!strncmp(p, "{port}", 6)) {
			berth_buf_printf(&b, "%d", s->port);
			p += 6;
		} else {
			berth_buf_append(&b, p++, 1);
		}
	}
	berth_buf_append(&b, "", 1);
	return b.failed ? (berth_buf_release(&b), NULL) : berth_buf_detach(&b);
}

/* Worker rank's share of the run's GPUs (ids "0,1,2,3" in the order they
 * were given, an equal count each); NULL when it has none. */
static char *worker_gpus(const char *ids, size_t rank, size_t nw)
{
	size_t n = 0;
	for (const char *p = ids; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ','))
		n++;
	size_t each = n / (nw ? nw : 1), k = 0;
	berth_buf b = BERTH_BUF_INIT;
	for (const char *p = ids; each && p && *p; k++) {
		size_t len = strcspn(p, ",");
		if (k >= rank * each && k < (rank + 1) * each)
			berth_buf_printf(&b, "%s%.*s", b.len ? "," : "", (int)len, p);
		p += len + (p[len] == ',');
	}
	return b.len && !b.failed ? berth_buf_detach(&b) : (berth_buf_release(&b), NULL);
}

/* One entry a name, the last one given, in the order they were given. The
 * environment is the caller's variables, then the spec's envs, then what
 * berth sets (BERTH_RUN_ID, a distributed job's WORLD_SIZE, RANK ..., the GPU
 * variables, secrets, the MPI token): a later one is meant over an earlier,
 * as a container's env list is read on Kubernetes. Left twice in envp, each
 * program would pick its own: getenv (C, Python) the first, a shell the last,
 * so that a spec's RANK or CUDA_VISIBLE_DEVICES was what python saw and berth's
 * what sh saw. An entry dropped that this worker allocated is freed. */
static int env_last_wins(sup_worker *w, const store_run *r)
{
	size_t n = w->nenv, cap = 16;
	while (cap < 2 * n)
		cap <<= 1;
	size_t *slot = berth_calloc(cap, sizeof(*slot)); /* index + 1 of a name kept; 0: free */
	bool *drop = berth_calloc(n ? n : 1, sizeof(*drop));
	if (!slot || !drop) {
		free(slot);
		free(drop);
		return -1;
	}
	for (size_t i = n; i-- > 0;) {
		const char *e = w->envp[i];
		size_t len = strcspn(e, "=");
		uint64_t h = 1469598103934665603ULL; /* FNV-1a */
		for (size_t k = 0; k < len; k++)
			h = (h ^ (unsigned char)e[k]) * 1099511628211ULL;
		size_t at = (size_t)h & (cap - 1);
		for (; slot[at]; at = (at + 1) & (cap - 1)) {
			const char *kept = w->envp[slot[at] - 1];
			if (!strncmp(kept, e, len) && kept[len] == e[len]) {
				drop[i] = true;
				break;
			}
		}
		if (!drop[i])
			slot[at] = i + 1;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (!drop[i])
			w->envp[k++] = w->envp[i];
		else if (w->envp[i] < r->env || w->envp[i] >= r->env + r->env_len)
			free(w->envp[i]);
	}
	w->envp[k] = NULL;
	w->nenv = k;
	free(slot);
	free(drop);
	return 0;
}

static int build_env(sup *s, size_t rank, bool volume_fallback)
{
	const store_run *r = s->r;
	sup_worker *w = &s->w[rank];
	for (size_t off = 0; off < r->env_len; off += strlen(r->env + off) + 1)
		if (push_env(w, r->env + off))
			return -1;
	for (size_t off = 0; off < r->worker_env_len; off += strlen(r->worker_env + off) + 1)
		if (push_env(w, worker_var(s, rank, r->worker_env + off)))
			return -1;
	w->gpu_ids = s->nw > 1 ? worker_gpus(r->info.gpu_ids, rank, s->nw)
			       : r->info.gpu_ids ? berth_strdup(r->info.gpu_ids) : NULL;
	if (w->gpu_ids) {
		if (push_env(w, fmt("CUDA_VISIBLE_DEVICES=%s", w->gpu_ids)) ||
		    push_env(w, fmt("NVIDIA_VISIBLE_DEVICES=%s", w->gpu_ids)) ||
		    push_env(w, fmt("CUDA_DEVICE_ORDER=PCI_BUS_ID")))
			return -1;
	} else if (push_env(w, fmt("CUDA_VISIBLE_DEVICES=")) ||
		   push_env(w, fmt("NVIDIA_VISIBLE_DEVICES=void")))
		return -1;
	for (size_t i = 0; volume_fallback && i < s->nvols; i++)
		if (push_env(w, volume_env(&s->vols[i])))
			return -1;
	for (size_t off = 0; off < s->secret_len; off += strlen(s->secret_values + off) + 1)
		if (push_env(w, fmt("%s", s->secret_values + off)))
			return -1;
	if (s->mpi && push_env(w, fmt("BERTH_MPI_TOKEN=%s", s->mpi_token)))
		return -1;
	return env_last_wins(w, r);
}

/* Launcher mpi: the token of the run's MPI requests, and what each worker
 * runs: berth's MPI worker, worker 0's with the command (mpi.h). */
static int prepare_mpi(sup *s)
{
	unsigned char raw[32];
	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return -1;
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(s->mpi_token + 2 * i, 3, "%02x", raw[i]);
	size_t argc = 0;
	while (s->argv[argc])
		argc++;
	s->mpi_argv[0] = "berth";
	s->mpi_argv[1] = MPI_WORKER_VERB;
	s->mpi_argv0 = berth_calloc(argc + 4, sizeof(char *));
	if (!s->mpi_argv0)
		return -1;
	s->mpi_argv0[0] = "berth";
	s->mpi_argv0[1] = MPI_WORKER_VERB;
	s->mpi_argv0[2] = "--";
	memcpy(s->mpi_argv0 + 3, s->argv, argc * sizeof(char *));
	s->mpi = true;
	return 0;
}

/* Opens each secret the run names (in memory only). */
static int open_secrets(sup *s, char ***files, size_t **lens, berth_buf *why)
{
	const store_run *r = s->r;
	unsigned char key[SECRET_KEY_BYTES];
	bool have_key = false;
	berth_buf vals = BERTH_BUF_INIT;
	*files = berth_calloc(s->nvols + 1, sizeof(char *));
	*lens = berth_calloc(s->nvols + 1, sizeof(size_t));
	if (!*files || !*lens)
		return -1;
	int rc = 0;
	bool any = r->secret_env && *r->secret_env;
	for (size_t i = 0; i < s->nvols; i++)
		any |= !strcmp(s->vols[i].kind, "secret");
	if (any && sup_store(s)) {
		berth_buf_printf(why, "its secrets cannot be read: the store cannot be opened");
		return -1;
	}
	/* names of the run's secrets, then of its secret volumes */
	char *names = r->secret_env ? berth_strdup(r->secret_env) : NULL;
	for (char *name = names, *next; name && *name && !rc; name = next) {
		next = strchr(name, ',');
		if (next)
			*next++ = 0;
		else
			next = name + strlen(name);
		void *sealed;
		size_t slen;
		char *value = NULL;
		size_t vlen = 0;
		berth_error *e = NULL;
		if ((!have_key && secret_key_load(s->home, 0, key, &e)) ||
		    store_secret_get(s->st, r->info.project, name, &sealed, &slen, &e)) {
			berth_buf_printf(why, "secret \"%s\": %s", name,
					 berth_error_get(e, 0) ? berth_error_get(e, 0)->message : "unreadable");
			rc = -1;
		} else if (!sealed) {
			berth_buf_printf(why, "secret \"%s\" does not exist in project \"%s\"", name,
					 r->info.project);
			rc = -1;
		} else if (secret_open(key, r->info.project, name, sealed, slen, &value, &vlen, &e)) {
			berth_buf_printf(why, "%s", berth_error_get(e, 0)->message);
			rc = -1;
		} else {
			/* by the variable the secret's name makes: "my-secret-key" is
			 * MY_SECRET_KEY, which a shell reads (the plan refused a clash) */
			char env[BERTH_ENV_NAME_MAX];
			berth_buf_printf(&vals, "%s=", berth_env_name_from(name, env, sizeof(env)));
			berth_buf_append(&vals, value, vlen);
			berth_buf_append(&vals, "", 1);
		}
		have_key = true;
		free(sealed);
		secret_free(value, vlen);
		berth_error_free(e);
	}
	free(names);
	for (size_t i = 0; i < s->nvols && !rc; i++) {
		if (strcmp(s->vols[i].kind, "secret"))
			continue;
		void *sealed = NULL;
		size_t slen;
		berth_error *e = NULL;
		if ((!have_key && secret_key_load(s->home, 0, key, &e)) ||
		    store_secret_get(s->st, r->info.project, s->vols[i].source, &sealed, &slen, &e) ||
		    !sealed ||
		    secret_open(key, r->info.project, s->vols[i].source, sealed, slen, &(*files)[i],
				&(*lens)[i], &e)) {
			berth_buf_printf(why, "secret \"%s\" of volume \"%s\" cannot be read%s%s",
					 s->vols[i].source, s->vols[i].name, e ? ": " : " (no such secret)",
					 e ? berth_error_get(e, 0)->message : "");
			rc = -1;
		}
		have_key = true;
		free(sealed);
		berth_error_free(e);
	}
	memset(key, 0, sizeof(key));
	if (vals.failed)
		rc = -1;
	s->secret_len = vals.len;
	s->secret_values = vals.data;
	return rc;
}

/* ---- the process ------------------------------------------------------------------------ */

static void child_fail(int errp, int step, int e)
{
	int msg[2] = {step, e};
	ssize_t w = write(errp, msg, sizeof(msg));
	(void)w;
	_exit(127);
}

enum { STEP_EXEC = 1, STEP_MOUNT, STEP_USER, STEP_RLIMIT, STEP_HARDEN, STEP_FORK, STEP_CGROUP };

/* Closes every fd from lo up but keep (-1: none); with cloexec, marks them
 * close-on-exec instead. Without close_range (Linux < 5.9), one by one. */
static void close_from(int lo, int keep, bool cloexec)
{
	unsigned flags = cloexec ? CLOSE_RANGE_CLOEXEC : 0;
	bool done = keep < lo ? close_range((unsigned)lo, ~0U, flags) == 0
			      : (keep == lo || close_range((unsigned)lo, (unsigned)keep - 1, flags) == 0) &&
					close_range((unsigned)keep + 1, ~0U, flags) == 0;
	if (done)
		return;
	long max = sysconf(_SC_OPEN_MAX);
	for (int fd = lo; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
		if (fd != keep) {
			if (cloexec)
				fcntl(fd, F_SETFD, FD_CLOEXEC);
			else
				close(fd);
		}
}

/* No capability can come back: the bounding and ambient sets emptied (as
 * root; elsewhere they are empty of use already), and for a run that stays
 * uid 0 the process's own sets too, as a pod's "drop: [ALL]". */
static int drop_capabilities(bool stays_root)
{
	/* each capability the kernel has, until it says EINVAL past its last */
	if (geteuid() == 0)
		for (int c = 0;; c++)
			if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0)) {
				if (errno == EINVAL && c > CAP_SETFCAP)
					break;
				return -1;
			}
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (!stays_root)
		return 0;
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	memset(d, 0, sizeof(d));
	return (int)syscall(SYS_capset, &h, d);
}

/* execvpe with the run's own PATH (envp's: its envs', else the one berth
 * passed it), not this process's, as a container's runtime looks up its
 * command: a name without a slash is tried in each of its directories (an
 * empty one: the work dir; no PATH: execvp's /bin:/usr/bin), and execvpe on
 * the path found runs a file that is no program (ENOEXEC) with /bin/sh.
 * Stack memory and system calls only (a vfork child). Returns, with errno,
 * when nothing ran: EACCES when a file there was refused (not executable, a
 * noexec mount); a directory the run's user cannot search holds nothing it
 * can run (execvp would say EACCES for a command that is nowhere, as with
 * the caller's /root/bin in PATH; a container's runtime says not found). */
static void exec_in_run_path(char *const argv[], char *const envp[])
{
	const char *file = argv[0], *path = "/bin:/usr/bin";
	if (!*file || strchr(file, '/')) {
		execvpe(file, argv, envp);
		return;
	}
	for (char *const *e = envp; *e; e++)
		if (!strncmp(*e, "PATH=", 5))
			path = *e + 5;
	size_t flen = strlen(file);
	bool refused = false;
	for (const char *p = path;; p++) {
		const char *end = strchrnul(p, ':');
		size_t dlen = end > p ? (size_t)(end - p) : 1;
		char full[PATH_MAX];
		if (dlen + 1 + flen < sizeof(full)) {
			memcpy(full, end > p ? p : ".", dlen);
			full[dlen] = '/';
			memcpy(full + dlen + 1, file, flen + 1);
			struct stat st;
			execvpe(full, argv, envp);
			if (errno == EACCES)
				refused |= stat(full, &st) == 0;
			else if (errno != ENOENT && errno != ENOTDIR && errno != ESTALE && errno != ENODEV &&
				 errno != ETIMEDOUT)
				return; /* found, and it cannot run (E2BIG, ENOMEM, ...) */
		}
		if (!*end)
			break;
		p = end;
	}
	errno = refused ? EACCES : ENOENT;
}

/* The run's own process: its limits, directory, user and hardening, then
 * the command. Never returns. */
static void become_command(sup *s, const sup_worker *w, int errp)
{
	const store_run *r = s->r;
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigprocmask(SIG_SETMASK, &s->run_mask, NULL);
	umask(022); /* a container's, not the caller's */
	/* before the user changes: its own directory is reached through berth's */
	if (chdir(r->workdir) && chdir("/"))
		_exit(127);
	bool switch_user = r->uid >= 0 || r->gid >= 0 || r->fs_group >= 0;
	bool stays_root = r->uid >= 0 ? r->uid == 0 : geteuid() == 0;
	if (drop_capabilities(false))
		child_fail(errp, STEP_HARDEN, errno);
	if (switch_user) {
		gid_t groups[1] = {(gid_t)r->fs_group};
		gid_t gid = sup_run_gid(r) >= 0 ? (gid_t)sup_run_gid(r) : getgid();
		if (setgroups(r->fs_group >= 0 ? 1 : 0, groups) || setgid(gid) ||
		    (r->uid >= 0 && setuid((uid_t)r->uid)))
			child_fail(errp, STEP_USER, errno);
	}
	/* no setuid program gives it more, and the calls a pod's RuntimeDefault
	 * profile refuses are refused */
	if ((stays_root && drop_capabilities(true)) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    sup_harden_load())
		child_fail(errp, STEP_HARDEN, errno);
	/* the limits last: its address space is all of its parent's, a fork */
	if (!w->cg && r->info.mem_limit > 0) {
		struct rlimit rl = {(rlim_t)r->info.mem_limit, (rlim_t)r->info.mem_limit};
		if (setrlimit(RLIMIT_AS, &rl))
			child_fail(errp, STEP_RLIMIT, errno);
	}
	/* no one file, its log included, grows past the run's disk limit between
	 * two looks of the supervisor (SIGXFSZ) */
	if (r->disk_limit > 0) {
		struct rlimit rl = {(rlim_t)r->disk_limit, (rlim_t)r->disk_limit};
		if (setrlimit(RLIMIT_FSIZE, &rl))
			child_fail(errp, STEP_RLIMIT, errno);
	}
	/* the open files limit its starter had, not the supervisor's */
	if (s->nofile_raised && setrlimit(RLIMIT_NOFILE, &s->nofile))
		child_fail(errp, STEP_RLIMIT, errno);
	/* the run gets its stdin, stdout and stderr, and no other fd of berth's */
	close_from(3, errp, true);
	if (s->mpi) /* this binary, whatever path reaches it from here */
		execve("/proc/self/exe", w == s->w ? s->mpi_argv0 : s->mpi_argv, w->envp);
	else
		exec_in_run_path(s->argv, w->envp);
	child_fail(errp, STEP_EXEC, errno);
}

/* Pid 1 of the run's pid namespace: it starts the command, passes it
 * berth's stop signals, reaps what is reparented to it, and when the
 * command ends writes its wait status to statp and exits, which ends every
 * other process of the namespace. Never returns. */
static void run_init(sup *s, const sup_worker *w, int errp, int statp)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	/* blocked, a signal to pid 1 waits to be taken (unblocked, one with no
	 * handler would be dropped) */
	sigprocmask(SIG_BLOCK, &set, NULL);
	/* vfork: the command's child borrows this process's memory until its
	 * exec (no copy of the supervisor's page tables on the launch's path);
	 * become_command only makes system calls, into locals of its own, and
	 * execs or _exits */
	pid_t cmd = vfork();
	if (cmd < 0)
		child_fail(errp, STEP_FORK, errno);
	if (cmd == 0) {
		close(statp);
		become_command(s, w, errp);
	}
	close(errp);
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(&set, &si);
		if (sig != SIGCHLD) {
			if (sig > 0)
				kill(-1, sig); /* every process of the namespace but this one */
			continue;
		}
		int st;
		pid_t ended;
		while ((ended = waitpid(-1, &st, WNOHANG)) > 0)
			if (ended == cmd) {
				ssize_t n = write(statp, &st, sizeof(st));
				_exit(n == (ssize_t)sizeof(st) ? 0 : 127);
			}
	}
}

/* Starts the command; returns its pid, or -1 with the reason in why. With
 * a pid namespace, the pid is that of the run's init (pid 1 there), which
 * passes berth's stop signals on and writes the command's wait status to
 * statp. */
static void close_pair(int p[2])
{
	for (int i = 0; i < 2; i++)
		if (p[i] >= 0)
			close(p[i]);
}

static pid_t start(sup *s, sup_worker *w, const char *const *secret_files, const size_t *secret_lens,
		   berth_buf *why)
{
	/* its cgroup, before it runs anything of the run's: v1, it moves itself
	 * there (cg_enter_self); v2, it is made there (clone3), else moved there
	 * by this process, for which it waits (go) */
	bool self = cg_version_of(w->cg) == CG_V1;
	int go[2] = {-1, -1}, errp[2] = {-1, -1}, statp[2] = {-1, -1};
	if (pipe2(errp, O_CLOEXEC) || (s->pidns && pipe2(statp, O_CLOEXEC)) ||
	    (w->cg && !self && pipe2(go, O_CLOEXEC))) {
		berth_buf_printf(why, "pipe: %s", strerror(errno));
		close_pair(errp);
		close_pair(statp);
		return -1;
	}
	pid_t parent = getpid();
	/* with a pid namespace, the child is its pid 1 at once (and in a mount
	 * namespace of its own) */
	bool in_cg = false;
	pid_t pid = sup_clone(s->pidns, go[0] >= 0 ? w->cgfd : -1, &in_cg);
	if (pid < 0) {
		berth_buf_printf(why, "%s: %s", s->pidns ? "clone" : "fork", strerror(errno));
		close_pair(errp);
		close_pair(statp);
		close_pair(go);
		return -1;
	}
	if (pid == 0) {
		if (go[1] >= 0)
			close(go[1]);
		close(errp[0]);
		if (statp[0] >= 0)
			close(statp[0]);
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* the parent gone already? (in a pid namespace, it is outside: 0) */
		if (getppid() != (s->pidns ? 0 : parent))
			_exit(127);
		int e = self ? cg_enter_self(w->cg) : 0;
		if (e)
			child_fail(errp[1], STEP_CGROUP, e);
		char c;
		if (go[0] >= 0 && !in_cg && read(go[0], &c, 1) != 1)
			_exit(127);
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (null >= 0)
			dup2(null, 0);
		dup2(w->log, 1);
		dup2(w->log, 2);
		if (s->pidns) {
			prctl(PR_SET_NAME, "berth-init", 0, 0, 0);
			if (sup_mount_run(s, true, secret_files, secret_lens))
				child_fail(errp[1], STEP_MOUNT, errno);
			run_init(s, w, errp[1], statp[1]);
		}
		if (s->nvols && sup_mount_run(s, false, secret_files, secret_lens) == -2)
			child_fail(errp[1], STEP_MOUNT, errno);
		become_command(s, w, errp[1]);
	}
	if (go[0] >= 0)
		close(go[0]);
	close(errp[1]);
	if (statp[1] >= 0)
		close(statp[1]);
	w->statp = statp[0];
	berth_error *e = NULL;
	if (go[1] >= 0 && !in_cg && cg_enter(w->cg, pid, &e)) {
		berth_buf_printf(why, "cannot put the process in its cgroup: %s",
				 berth_error_get(e, 0)->message);
		berth_error_free(e);
		kill(pid, SIGKILL);
		close(go[1]);
		close(errp[0]);
		return -1;
	}
	if (go[1] >= 0) {
		ssize_t wrote = in_cg ? 1 : write(go[1], "g", 1);
		(void)wrote;
		close(go[1]);
	}
	/* while the child makes itself the command (mounts, user, exec): the
	 * store, which a supervisor forked by its caller has not opened yet */
	sup_store(s);
	int msg[2];
	ssize_t n;
	while ((n = read(errp[0], msg, sizeof(msg))) < 0 && errno == EINTR)
		;
	close(errp[0]);
	if (n == (ssize_t)sizeof(msg)) {
		static const char *const what[] = {"", "cannot run", "cannot mount the volumes for",
						   "cannot switch user for", "cannot set the rlimits of",
						   "cannot harden (capabilities, no_new_privs, seccomp)",
						   "cannot fork", "cannot move into its cgroup the process of"};
		berth_buf_printf(why, "%s \"%s\": %s", what[msg[0]], s->argv[0], strerror(msg[1]));
		return -2 - msg[0]; /* started and failed: reaped as usual */
	}
	return pid;
}

/* The command's wait status: what the run's init wrote, in a pid namespace
 * (else, or when it wrote nothing, because it was killed: status itself). */
static int command_status(sup_worker *w, int status)
{
	if (w->statp < 0)
		return status;
	int st;
	ssize_t n;
	while ((n = read(w->statp, &st, sizeof(st))) < 0 && errno == EINTR)
		;
	close(w->statp);
	w->statp = -1;
	return n == (ssize_t)sizeof(st) ? st : status;
}

/* Every process of the run: its cgroup, its process group, and any
 * descendant that was reparented to the supervisor (a subreaper: every
 * orphan of the run becomes its child, so with no child left there is no
 * one to look for in /proc). */
static void signal_worker(sup_worker *w, int sig)
{
	if (w->cg)
		cg_kill(w->cg, sig);
	if (w->child > 0)
		kill(-w->child, sig);
}

static void signal_all(sup *s, int sig)
{
	for (size_t i = 0; i < s->nw; i++)
		signal_worker(&s->w[i], sig);
	siginfo_t si;
	if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 && errno == ECHILD)
		return;
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t self = getpid();
	while (d && (de = readdir(d))) {
		char path[300], buf[512];
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = 0;
		char *p = strrchr(buf, ')');
		long ppid;
		if (p && sscanf(p + 1, " %*c %ld", &ppid) == 1 && ppid == self)
			kill((pid_t)strtol(de->d_name, NULL, 10), sig);
	}
	if (d)
		closedir(d);
}

/* SIGKILL everything left and reap it, for at most 5 s (the caller killed
 * once already: nothing left, nothing more is read). */
static bool cgroups_empty(sup *s)
{
	for (size_t i = 0; i < s->nw; i++)
		if (s->w[i].cg && cg_count(s->w[i].cg) > 0)
			return false;
	return true;
}

static void reap_all(sup *s)
{
	for (int i = 0; i < 500; i++) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD && cgroups_empty(s))
			return;
		signal_all(s, SIGKILL);
		struct timespec ts = {0, 10000000};
		nanosleep(&ts, NULL);
	}
}

static const char *signame(int sig)
{
	const char *n = sigabbrev_np(sig);
	return n ? n : "?";
}

enum ending { END_EXIT, END_STOP, END_TIMEOUT, END_EVICTED };

/* Waits for the process, with the timeout and stop requests. */
/* ---- disk ---------------------------------------------------------------------------- */

/* The disk a tree uses, as du counts it (blocks; links not followed, other
 * filesystems not entered). */
static int64_t disk_used(const char *path)
{
	return local_tree(path, false);
}

/* Over its disk? As the kubelet evicts a pod: a sized volume over its size,
 * or the run over resources.disk, counting its log, its work dir and the
 * volumes made for it (not a shared claim, nor a tmpfs, which is memory).
 * Returns the reason, or NULL. */
static char *disk_over(sup *s)
{
	const store_run *r = s->r;
	char runvols[4096], rundir[4096], a[32], b[32];
	if (fs_path(runvols, sizeof(runvols), s->home, "volumes/%s", r->info.id) ||
	    backend_run_path(rundir, sizeof(rundir), s->home, r->info.id, NULL))
		return NULL;
	struct stat st;
	int64_t total = 0;
	for (size_t i = 0; i < s->nw; i++)
		total += fstat(s->w[i].log, &st) == 0 ? (int64_t)st.st_blocks * 512 : 0;
	if (local_path_under(r->workdir, rundir))
		total += disk_used(r->workdir);
	if (s->tmp)
		total += disk_used(s->tmp);
	for (size_t i = 0; i < s->nvols; i++) {
		const volume *v = &s->vols[i];
		if (strcmp(v->kind, "dir") || !local_path_under(v->source, runvols))
			continue;
		int64_t used = disk_used(v->source);
		total += used;
		if (v->size > 0 && used > v->size) {
			berth_format_size(a, sizeof(a), used, 1);
			berth_format_size(b, sizeof(b), v->size, 1);
			return fmt("Evicted: volume \"%s\" used %s, over its size %s", v->name, a, b);
		}
	}
	/* resources.disk is each worker's, as the machine's disk it asks for is
	 * (N x), and as each pod's ephemeral storage is on a cluster: the
	 * workers share a log dir, a work dir and a /tmp, which hold N times it */
	int64_t limit = r->disk_limit;
	if (s->nw > 1 && __builtin_mul_overflow(limit, (int64_t)s->nw, &limit))
		limit = INT64_MAX;
	if (r->disk_limit > 0 && total > limit) {
		char each[80] = "";
		berth_format_size(a, sizeof(a), total, 1);
		berth_format_size(b, sizeof(b), limit, 1);
		if (s->nw > 1) {
			char one[32];
			berth_format_size(one, sizeof(one), r->disk_limit, 1);
			snprintf(each, sizeof(each), ", %zu workers of %s", s->nw, one);
		}
		return fmt("Evicted: ephemeral storage: the run used %s, over its disk limit %s%s "
			   "(its log, work dir, /tmp and volumes)", a, b, each);
	}
	return NULL;
}

#define DISK_CHECK_MS 1000

/* SIGTERM to every worker still running, which then counts as stopped. */
static void stop_workers(sup *s)
{
	for (size_t i = 0; i < s->nw; i++)
		if (!s->w[i].ended) {
			s->w[i].stopped = true;
			signal_worker(&s->w[i], SIGTERM);
		}
	signal_all(s, SIGTERM);
}

static bool failed_status(int st)
{
	return !WIFEXITED(st) || WEXITSTATUS(st) != 0;
}

/* Reaps what ended; true when every worker's command has. The first worker
 * that fails stops the others (a distributed job ends with its first failing
 * worker, as a Job with backoffLimit 0 does): *kill_at is then set. */
static void set_worker_states(sup *s, bool running, size_t which);
static int save(sup *s);

static bool reap_workers(sup *s, enum ending end, int64_t *kill_at)
{
	pid_t pid;
	int st;
	size_t ended = 0;
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		for (size_t i = 0; i < s->nw; i++) {
			sup_worker *w = &s->w[i];
			if (w->ended || pid != w->child)
				continue;
			w->status = command_status(w, st);
			w->ended = true;
			ended++;
			signal_worker(w, SIGKILL); /* its main process is gone: so is the rest */
			/* one berth stopped is not the one that failed */
			if (!failed_status(w->status) || s->failed >= 0 || w->stopped)
				break;
			s->failed = (int)i;
			if (s->nw > 1 && end == END_EXIT && !w->stopped) {
				char why[128];
				snprintf(why, sizeof(why), "worker %zu failed: SIGTERM sent to the others, "
					 "SIGKILL after the grace period", i);
				event(s, "Killing", why);
				stop_workers(s);
				*kill_at = store_now_ms() + s->r->grace * 1000;
			}
			break;
		}
	size_t left = 0;
	for (size_t i = 0; i < s->nw; i++)
		left += !s->w[i].ended;
	/* a worker that ended while others run: its state in the record now */
	if (ended && left && s->nw > 1) {
		set_worker_states(s, true, SIZE_MAX);
		save(s);
	}
	return left == 0;
}

/* Launcher mpi: the run ends as mpirun does, on worker 0. When it has ended
 * well, the others are given this long to end with their daemons, then
 * stopped: a worker that mpirun never asked for a daemon (its command was
 * --version, or mpirun chose not to) would wait for one for ever. */
#define MPI_OTHERS_MS 5000

/* ---- the logs' times (logfile.h) ------------------------------------------------------- */

/* The clock of w's log (path), and a watch on it when there is an inotify. */
static void watch_log(sup *s, sup_worker *w, const char *path)
{
	log_clock_open(&w->clock, path);
	if (!log_clock_on(&w->clock))
		return;
	if (s->ifd < 0)
		s->ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	w->wd = s->ifd >= 0 ? inotify_add_watch(s->ifd, path, IN_MODIFY) : -1;
}

/* Each log's size now into its clock (all: every pending record written);
 * returns when the next record is due, or -1. */
static int64_t note_logs(sup *s, bool all)
{
	int64_t now = store_now_ms(), due = -1;
	for (size_t i = 0; i < s->nw; i++) {
		sup_worker *w = &s->w[i];
		struct stat st;
		if (w->log < 0 || !log_clock_on(&w->clock))
			continue;
		int64_t d = !fstat(w->log, &st) ? log_clock_note(&w->clock, (int64_t)st.st_size, now) : -1;
		if (all)
			d = log_clock_flush(&w->clock, now, true);
		due = d >= 0 && (due < 0 || d < due) ? d : due;
	}
	return due;
}

/* Waits up to ms for a signal of set (its number; 0 when the time is up),
 * noting meanwhile the logs that grow: woken by their watches, or looking
 * every second where there are none. Signals come through a signalfd, which
 * waits with the watches; without one, sigtimedwait in slices. */
static int wait_signal(sup *s, const sigset_t *set, int64_t ms)
{
	int64_t deadline = store_now_ms() + ms;
	if (s->sfd < 0)
		s->sfd = signalfd(-1, set, SFD_CLOEXEC | SFD_NONBLOCK);
	for (;;) {
		int64_t now = store_now_ms(), due = note_logs(s, false);
		int64_t wait = deadline - now;
		if (s->ifd < 0 && wait > 1000)
			wait = 1000; /* no watches: a look every second */
		if (due >= 0 && due - now < wait)
			wait = due - now;
		if (wait < 0)
			wait = 0;
		if (s->sfd < 0) {
			struct timespec ts = {wait / 1000, (long)(wait % 1000) * 1000000};
			siginfo_t info;
			int sig = sigtimedwait(set, &info, &ts);
			if (sig > 0)
				return sig;
		} else {
			struct pollfd p[2] = {{s->sfd, POLLIN, 0}, {s->ifd, POLLIN, 0}};
			int n = poll(p, s->ifd >= 0 ? 2 : 1, (int)wait);
			struct signalfd_siginfo si;
			if (n > 0 && (p[0].revents & POLLIN) && read(s->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				return (int)si.ssi_signo;
			if (n > 0 && s->ifd >= 0 && (p[1].revents & POLLIN)) {
				char ev[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
				while (read(s->ifd, ev, sizeof(ev)) > 0)
					; /* which log grew: note_logs looks at each */
			}
		}
		if (store_now_ms() >= deadline)
			return 0;
	}
}

/* Waits for the workers' commands, with the timeout and stop requests. */
static enum ending wait_workers(sup *s, const sigset_t *set, int64_t deadline)
{
	enum ending end = END_EXIT;
	int64_t kill_at = -1, disk_at = s->disk_watch ? store_now_ms() + DISK_CHECK_MS : -1;
	int64_t others_at = -1, sample_at = sup_sample_start(s, store_now_ms());
	for (;;) {
		int64_t now = store_now_ms(), wait = 5000;
		if (sample_at > 0 && now >= sample_at && end == END_EXIT)
			sample_at = sup_sample(s, now);
		if (sample_at > 0)
			wait = sample_at - now < wait ? sample_at - now : wait;
		if (s->mpi && s->nw > 1 && others_at < 0 && s->w[0].ended && s->failed < 0 && end == END_EXIT)
			others_at = now + MPI_OTHERS_MS;
		if (others_at > 0)
			wait = others_at - now < wait ? others_at - now : wait;
		if (disk_at > 0)
			wait = disk_at - now < wait ? disk_at - now : wait;
		if (deadline > 0 && end == END_EXIT)
			wait = deadline - now < wait ? deadline - now : wait;
		if (kill_at > 0)
			wait = kill_at - now < wait ? kill_at - now : wait;
		if (wait < 0)
			wait = 0;
		int sig = wait_signal(s, set, wait);
		if (sig == SIGCHLD) {
			if (reap_workers(s, end, &kill_at))
				return end;
			continue;
		}
		/* a worker failed, and the others are stopped: that is the ending */
		bool failing = s->failed >= 0;
		now = store_now_ms();
		if (disk_at > 0 && now >= disk_at && end == END_EXIT && !failing) {
			s->evicted = disk_over(s);
			/* a tree of many files costs the supervisor, not the run: it is
			 * walked at most a tenth of the time */
			int64_t took = store_now_ms() - now;
			disk_at = now + (took * 10 > DISK_CHECK_MS ? took * 10 : DISK_CHECK_MS);
			if (s->evicted) {
				/* as the kubelet does for local storage: no grace */
				end = END_EVICTED;
				disk_at = -1;
				signal_all(s, SIGKILL);
				event(s, "Evicted", s->evicted);
			}
		}
		if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) {
			store_run *fresh = NULL;
			berth_error *e = NULL;
			int64_t grace = s->r->grace;
			if (s->st && !store_run_get(s->st, s->r->info.id, &fresh, &e))
				grace = fresh->grace;
			store_run_free(fresh);
			berth_error_free(e);
			if (end == END_EXIT && !failing) {
				end = END_STOP;
				stop_workers(s);
				kill_at = now + grace * 1000;
				event(s, "Killing", "SIGTERM sent; SIGKILL after the grace period");
			} else if (kill_at > 0 && now + grace * 1000 < kill_at) {
				/* stopped again with a shorter grace: it counts from now, as a
				 * second delete with a shorter grace does on Kubernetes */
				kill_at = now + grace * 1000;
				char why[96];
				snprintf(why, sizeof(why), "stopped again: SIGKILL after %lld s",
					 (long long)grace);
				event(s, "Killing", why);
			}
			continue;
		}
		if (others_at > 0 && now >= others_at && end == END_EXIT && !failing) {
			others_at = 0; /* once */
			event(s, "Killing", "worker 0 ended (mpirun): SIGTERM sent to the others, SIGKILL "
					    "after the grace period");
			stop_workers(s);
			kill_at = now + s->r->grace * 1000;
		}
		if (deadline > 0 && now >= deadline && end == END_EXIT && !failing) {
			end = END_TIMEOUT;
			stop_workers(s);
			kill_at = now + s->r->grace * 1000;
			event(s, "DeadlineExceeded", "SIGTERM sent");
		}
		if (kill_at > 0 && now >= kill_at) {
			signal_all(s, SIGKILL);
			kill_at = -1;
		}
	}
}

static void set_reason(store_run *r, char *reason)
{
	free(r->info.reason);
	r->info.reason = reason;
}

/* Its usage, every worker's together: the cgroups' (as read when the last
 * attempt ended, by oom_kills), else what the kernel counted for the reaped
 * children. */
static void usage_of(sup *s)
{
	int64_t cpu = 0, mem = 0;
	bool all = true;
	for (size_t i = 0; i < s->nw && all; i++) {
		sup_worker *w = &s->w[i];
		berth_error *e = NULL;
		all = w->cg && (w->have_stats || cg_stats_read(w->cg, &w->stats, &e) == 0);
		berth_error_free(e);
		cpu += (int64_t)w->stats.cpu_usage_ns;
		mem += (int64_t)w->stats.mem_peak;
	}
	if (!all) {
		struct rusage ru;
		getrusage(RUSAGE_CHILDREN, &ru);
		cpu = ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
		      ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
		mem = (int64_t)ru.ru_maxrss * 1024;
	}
	s->r->info.cpu_usage_ns = cpu;
	s->r->info.mem_peak = mem;
}

/* A worker's cgroup's OOM kills so far (0 in a cgroup this supervisor made
 * and nothing ran in yet); read when an attempt has ended, its usage is kept. */
static uint64_t oom_kills(sup *s, sup_worker *w, bool ended)
{
	berth_error *e = NULL;
	w->have_stats = false;
	if (!w->cg || (!ended && !s->r->info.attempts && cg_fresh(w->cg)))
		return 0;
	bool ok = cg_stats_read(w->cg, &w->stats, &e) == 0;
	berth_error_free(e);
	w->have_stats = ok && ended;
	return ok ? w->stats.oom_kills : 0;
}

static int save(sup *s)
{
	berth_error *e = NULL;
	int rc = s->st ? store_run_update(s->st, s->r, &e) : -BERTH_EIO;
	berth_error_free(e);
	return rc;
}

/*
 * The start of an attempt, recorded in one transaction: this supervisor (the
 * first time), the process, what the preparation noted, Started. A stop asked
 * before this supervisor could hear it is taken now. false when the store
 * cannot be opened: the run cannot be recorded, and is stopped.
 *
 * Its commit is not fsynced on its own: the run was made durable as Running
 * when it was admitted, and a power cut that loses this record leaves what
 * losing the supervisor leaves (recovery fails the run); the end's commit,
 * fsynced before the run is said to be done, makes this one durable too. The
 * run's command, often short, does not wait on the disk to be recorded.
 */
static bool record_start(sup *s)
{
	store_run *r = s->r;
	if (sup_store(s))
		return false;
	berth_error *e = NULL;
	bool began = store_begin(s->st, &e) == 0, stop = false;
	store_run_stop_requested(s->st, r->info.id, &stop, &e);
	if (!s->recorded)
		store_run_set_supervisor(s->st, r->info.id, getpid(), local_proc_start(getpid()), NULL);
	s->recorded = true;
	save(s);
	flush_notes(s);
	berth_buf msg = BERTH_BUF_INIT;
	for (size_t i = 0; i < s->nw; i++)
		berth_buf_printf(&msg, "%s%ld", i ? "," : s->nw > 1 ? "pids " : "pid ", (long)s->w[i].child);
	berth_buf_printf(&msg, ", attempt %d", r->info.attempts);
	event(s, "Started", msg.failed ? "" : msg.data);
	berth_buf_release(&msg);
	bool deferred = store_defer_sync(s->st, true);
	if (began && store_commit(s->st, &e))
		store_rollback(s->st);
	store_defer_sync(s->st, deferred);
	berth_error_free(e);
	if (stop)
		raise(SIGTERM);
	return true;
}

/* Each worker's state in the record ("Running,Failed"): with running (the
 * attempt runs), a worker that has not ended is Running; one that has, how it
 * ended (one with an OOM kill failed, as the run does, even when its command
 * went on and exited 0); which: the worker whose OOM kill says how the run
 * ended (failed, even if stopped after it), else SIZE_MAX. */
static void set_worker_states(sup *s, bool running, size_t which)
{
	store_run *r = s->r;
	if (s->nw < 2)
		return;
	berth_buf b = BERTH_BUF_INIT;
	for (size_t i = 0; i < s->nw; i++) {
		const sup_worker *w = &s->w[i];
		bool failed = failed_status(w->status) || w->oomed;
		berth_state st = running && !w->ended ? BERTH_STATE_RUNNING
				 : !failed	    ? BERTH_STATE_SUCCEEDED
				 : w->stopped && (int)i != s->failed && i != which ? BERTH_STATE_STOPPED
										     : BERTH_STATE_FAILED;
		berth_buf_printf(&b, "%s%s", i ? "," : "", berth_state_name(st));
	}
	free(r->info.worker_states);
	r->info.worker_states = b.failed ? NULL : berth_buf_detach(&b);
	berth_buf_release(&b);
}

/* Starts every worker; 0, or, with why: -1 when one could not be started,
 * less when one started and could not become the command (the others are
 * killed; every process is reaped). */
static int start_workers(sup *s, const char *const *files, const size_t *lens, berth_buf *why)
{
	for (size_t i = 0; i < s->nw; i++) {
		sup_worker *w = &s->w[i];
		w->ooms = oom_kills(s, w, false);
		w->ended = w->stopped = false;
		w->status = 0;
		pid_t pid = start(s, w, files, lens, why);
		w->child = pid > 0 ? pid : 0;
		if (pid > 0)
			continue;
		if (s->nw > 1) {
			berth_buf msg = BERTH_BUF_INIT;
			berth_buf_printf(&msg, "worker %zu: %s", i, why->failed ? "" : why->data);
			berth_buf_release(why);
			*why = msg;
		}
		signal_all(s, SIGKILL);
		if (pid < -1 || i > 0) {
			while (waitpid(-1, NULL, 0) > 0)
				;
			for (size_t k = 0; k <= i; k++)
				command_status(&s->w[k], 0);
		}
		for (size_t k = 0; k <= i; k++)
			s->w[k].child = 0;
		return pid < -1 ? -2 : -1;
	}
	return 0;
}

/* How the attempt ended, in the record; true when it is to be tried again. */
static bool attempt_outcome(sup *s, enum ending end)
{
	store_run *r = s->r;
	/* the first worker that failed says how the run ended; else the first
	 * with an OOM kill; else worker 0. An OOM kill is that worker's: one in
	 * another worker (stopped, or ended after it) is not why the run failed */
	for (size_t i = 0; i < s->nw; i++)
		s->w[i].oomed = oom_kills(s, &s->w[i], true) > s->w[i].ooms;
	size_t which = s->failed >= 0 ? (size_t)s->failed : 0;
	for (size_t i = 0; s->failed < 0 && i < s->nw; i++)
		if (s->w[i].oomed) {
			which = i;
			break;
		}
	int status = s->w[which].status;
	bool oom = s->w[which].oomed;
	set_worker_states(s, false, oom ? which : SIZE_MAX);
	r->info.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	r->info.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	r->info.oom_killed = oom;
	char mem[32], rank[64] = "";
	berth_format_size(mem, sizeof(mem), r->info.mem_limit, 1);
	if (s->nw > 1)
		snprintf(rank, sizeof(rank), "worker %zu of %zu: ", which, s->nw);
	if (end == END_STOP) {
		r->info.state = BERTH_STATE_STOPPED;
		set_reason(r, fmt("stopped by berth stop"));
		return false;
	}
	if (end == END_EVICTED) {
		r->info.state = BERTH_STATE_FAILED;
		set_reason(r, s->evicted);
		s->evicted = NULL;
		return false;
	}
	if (end == END_TIMEOUT) {
		r->info.state = BERTH_STATE_FAILED;
		set_reason(r, fmt("DeadlineExceeded: stopped after its timeout of %llds",
				  (long long)r->timeout));
		return false;
	}
	if (oom) {
		r->info.state = BERTH_STATE_FAILED;
		set_reason(r, fmt("%sOOMKilled: the memory limit %s was reached", rank, mem));
	} else if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !r->restart) {
		r->info.state = BERTH_STATE_SUCCEEDED;
		set_reason(r, NULL);
		return false;
	} else if (WIFEXITED(status)) {
		r->info.state = BERTH_STATE_FAILED;
		set_reason(r, fmt("%sexit code %d", rank, WEXITSTATUS(status)));
	} else if (WTERMSIG(status) == SIGXFSZ && r->disk_limit > 0) {
		r->info.state = BERTH_STATE_FAILED;
		berth_format_size(mem, sizeof(mem), r->disk_limit, 1);
		set_reason(r, fmt("%sEvicted: ephemeral storage: a file reached the disk limit %s "
				  "(SIGXFSZ)", rank, mem));
		return false;
	} else {
		r->info.state = BERTH_STATE_FAILED;
		set_reason(r, fmt("%skilled by signal %d (SIG%s)", rank, WTERMSIG(status),
				  signame(WTERMSIG(status))));
	}
	/* again? a job up to its retries (a distributed job's workers all
	 * together); a server always, as a Deployment does */
	return r->restart || r->info.attempts <= r->retries;
}

/* Runs the command until it ends for good; sets the final state. */
static void run_attempts(sup *s, sigset_t *set, const char *const *files, const size_t *lens)
{
	store_run *r = s->r;
	int64_t deadline = r->timeout > 0 ? r->info.started + r->timeout * 1000 : -1;
	int64_t backoff = 1000;
	for (;;) {
		berth_buf why = BERTH_BUF_INIT;
		int64_t t0 = store_now_ms();
		s->failed = -1;
		int started = start_workers(s, files, lens, &why);
		r->info.attempts++;
		if (started) {
			r->info.state = BERTH_STATE_FAILED;
			if (started < -1)
				r->info.exit_code = 127; /* started, but never became the command */
			set_reason(r, berth_buf_detach(&why));
			return;
		}
		berth_buf_release(&why);
		r->pid = s->w[0].child;
		set_worker_states(s, true, SIZE_MAX);
		/* the waiter hears that the run started (one byte; the close says it
		 * ended): one this process was forked from opens its store now */
		if (s->done_fd >= 0 && r->info.attempts == 1) {
			ssize_t w = write(s->done_fd, "s", 1);
			(void)w;
		}
		if (!record_start(s)) {
			signal_all(s, SIGKILL);
			r->info.state = BERTH_STATE_FAILED;
			set_reason(r, fmt("the store of %s cannot be opened to record the run", s->home));
			return;
		}
		enum ending end = wait_workers(s, set, deadline);
		signal_all(s, SIGKILL); /* the main processes are gone: so is the rest */
		if (!attempt_outcome(s, end))
			return;
		if (store_now_ms() - t0 > 60000)
			backoff = 1000;
		event(s, "BackOff", r->info.reason);
		r->info.state = BERTH_STATE_RUNNING;
		save(s);
		struct timespec ts = {backoff / 1000, (long)(backoff % 1000) * 1000000};
		siginfo_t info;
		int sig = sigtimedwait(set, &info, &ts);
		if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) {
			r->info.state = BERTH_STATE_STOPPED;
			set_reason(r, fmt("stopped by berth stop"));
			return;
		}
		if (deadline > 0 && store_now_ms() >= deadline) {
			r->info.state = BERTH_STATE_FAILED;
			set_reason(r, fmt("DeadlineExceeded: stopped after its timeout of %llds",
					  (long long)r->timeout));
			return;
		}
		backoff = backoff * 2 > 60000 ? 60000 : backoff * 2;
	}
}

/* The supervisor as a daemon of its run: stop signals blocked (set) and
 * unblocked for the run's processes (*run_mask), a subreaper, nothing of its
 * starter held, no core dump. Returns the pipe to the process that waits for
 * the run (berth run --wait), or -1. */
static int become_supervisor(sigset_t *set, sigset_t *run_mask, int done_fd)
{
	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGHUP);
	sigprocmask(SIG_BLOCK, set, run_mask);
	/* the spawner blocked the stop signals already (a stop may come first);
	 * the run's processes get them unblocked */
	sigdelset(run_mask, SIGCHLD);
	sigdelset(run_mask, SIGTERM);
	sigdelset(run_mask, SIGINT);
	sigdelset(run_mask, SIGHUP);
	signal(SIGPIPE, SIG_IGN);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	/* the leader of its own session, whose id is its pid: recovery finds
	 * the run's processes by it when the run had no cgroup (one exec'd by
	 * a spawner is in that spawner's session, led by a pid gone since) */
	if (getsid(0) != getpid())
		setsid();
	/* the pipe to the process that started it and waits (berth run --wait):
	 * closed once the run is done; kept from the run's processes */
	const char *df = done_fd >= 0 ? NULL : getenv("BERTH_DONE_FD");
	if (df) {
		char *end;
		long fd = strtol(df, &end, 10);
		if (!*end && fd > 2 && fd < INT_MAX && fcntl((int)fd, F_SETFD, FD_CLOEXEC) == 0)
			done_fd = (int)fd;
		unsetenv("BERTH_DONE_FD");
	}
	/* what it tells the waiter never waits for it to read (it may be stopped,
	 * or reading another run's pipe first; a user past the kernel's pipe
	 * pages gets pipes of a page): what does not fit is not told (tell_end) */
	int fl = done_fd >= 0 ? fcntl(done_fd, F_GETFL) : -1;
	if (fl >= 0)
		fcntl(done_fd, F_SETFL, fl | O_NONBLOCK);
	/* nothing its starter had open is held by this daemon (a pipe that a
	 * shell reads to its end, a lock) */
	close_from(3, done_fd, false);
	/* it holds the run's secrets: no core dump, no other process of this
	 * user reading its memory or environment */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	struct rlimit nocore = {0, 0};
	setrlimit(RLIMIT_CORE, &nocore);
	return done_fd;
}

static void remove_cgroups(sup *s);

/* Limits: a cgroup for each worker (the resources are each worker's), else
 * rlimits (the child sets them); the record says which. */
static void make_cgroups(sup *s, const char *id)
{
	store_run *r = s->r;
	const char *root = getenv("BERTH_CGROUP_ROOT");
	root = root && *root ? root : "/sys/fs/cgroup";
	cg_version v = cg_detect(root);
	int64_t nw = (int64_t)s->nw;
	cg_limits lim = {r->info.cpu_limit_milli, r->info.cpu_milli / nw, r->info.mem_limit, r->pids_max};
	berth_error *e = NULL;
	free(r->info.enforcement);
	bool made = v != CG_NONE;
	for (size_t i = 0; made && i < s->nw; i++) {
		char name[128];
		made = !local_worker_cgroup(name, sizeof(name), id, (int64_t)i, nw) &&
		       cg_create(&s->w[i].cg, v, root, LOCAL_CGROUP_PARENT, name, &lim, &e) == 0;
		if (made)
			s->w[i].cgfd = cg_dir_fd(s->w[i].cg);
	}
	if (made) {
		r->info.enforcement = fmt("cgroup %s", cg_version_name(v));
		r->cgroup = berth_strdup(id);
	} else {
		remove_cgroups(s);
		r->info.enforcement = berth_strdup("rlimits");
		sup_note(s, "Warning",
			 e && berth_error_get(e, 0) ? berth_error_get(e, 0)->message : "no cgroup tree: rlimits only");
	}
	berth_error_free(e);
}

/* The supervisor holds fds for each worker while the run runs (its log, its
 * init's status pipe, its cgroup's directory on v2) and a few of its own: a
 * job of 1000 workers needs some 3000, past the 1024 that most shells give.
 * Its soft limit is raised to what it needs (its hard limit too, with
 * CAP_SYS_RESOURCE); the run's processes get the starter's back. false with
 * why when no limit it may have is enough. */
#define FDS_EACH 3
#define FDS_OWN 64
static bool enough_fds(sup *s, berth_buf *why)
{
	rlim_t need = (rlim_t)s->nw * FDS_EACH + FDS_OWN;
	if (getrlimit(RLIMIT_NOFILE, &s->nofile))
		return true; /* nothing known: as it was */
	if (s->nofile.rlim_cur == RLIM_INFINITY || s->nofile.rlim_cur >= need)
		return true;
	struct rlimit raised = {need, s->nofile.rlim_max};
	if (raised.rlim_max != RLIM_INFINITY && raised.rlim_max < need)
		raised.rlim_max = need; /* as root alone */
	if (setrlimit(RLIMIT_NOFILE, &raised) == 0) {
		s->nofile_raised = true;
		return true;
	}
	berth_buf_printf(why, "cannot prepare the run: its %zu workers need %llu open files in its "
			 "supervisor, past the hard limit %llu (ulimit -Hn; with CAP_SYS_RESOURCE, as "
			 "root has it, berth raises it)", s->nw, (unsigned long long)need,
			 (unsigned long long)(s->nofile.rlim_max == RLIM_INFINITY ? s->nofile.rlim_cur
										   : s->nofile.rlim_max));
	return false;
}

/* Everything the run's processes start with: argv, the log, the volumes,
 * the seccomp filter, namespaces, the work dir, secrets and the environment.
 * false with why when the run cannot start. */
static bool prepare(sup *s, char ***files, size_t **lens, berth_buf *why)
{
	store_run *r = s->r;
	size_t argc = 0;
	for (size_t off = 0; off < r->argv_len; off += strlen(r->argv + off) + 1)
		argc++;
	s->argv = berth_calloc(argc + 1, sizeof(char *));
	for (size_t off = 0, i = 0; s->argv && off < r->argv_len; off += strlen(r->argv + off) + 1)
		s->argv[i++] = r->argv + off;
	/* each worker's log where this data dir keeps it (not a path read from
	 * the store) */
	int logfail = 0;
	for (size_t i = 0; i < s->nw && !logfail; i++) {
		char log[4096], sub[32];
		local_worker_log(sub, sizeof(sub), (int64_t)i);
		s->w[i].log = backend_run_path(log, sizeof(log), s->home, r->info.id, sub)
				      ? (errno = ENAMETOOLONG, -1)
				      : open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
		logfail = s->w[i].log < 0 ? errno : 0;
		if (!logfail)
			watch_log(s, &s->w[i], log);
	}
	if (!s->argv || !argc || logfail) {
		berth_buf_printf(why, "cannot prepare the run: %s",
				 logfail ? strerror(logfail) : "out of memory");
		return false;
	}
	if (local_volumes_parse(s->home, r, &s->vols, &s->nvols, why))
		return false;
	bool fallback = sup_namespaces(s);
	for (size_t i = 0; i < s->nvols; i++)
		s->disk_watch |= !strcmp(s->vols[i].kind, "dir") && s->vols[i].size > 0;
	s->disk_watch |= r->disk_limit > 0;
	if (sup_prepare_workdir(s, why) || sup_prepare_volumes(s, fallback, why) ||
	    open_secrets(s, files, lens, why))
		return false;
	s->port = r->worker_env ? local_free_port() : 0;
	if (r->launcher && !strcmp(r->launcher, "mpi") && prepare_mpi(s)) {
		berth_buf_printf(why, "cannot prepare the run's MPI workers: %s", strerror(errno));
		return false;
	}
	for (size_t i = 0; i < s->nw; i++)
		if (build_env(s, i, fallback)) {
			berth_buf_printf(why, "out of memory");
			return false;
		}
	return true;
}

/* Tells the waiter the end is recorded, in one write: "E", the length of the
 * record as stored (uint32_t) and the record (record_pack), so that the
 * waiter need not open the store to read it; "e" alone when the record is
 * larger than LOCAL_END_MAX (or no memory): the waiter reads the store. The
 * pipe does not wait (become_supervisor): a record that does not fit whole
 * is cut short, which the waiter takes for none, and reads the store once
 * this process closes the pipe. */
static void tell_end(sup *s)
{
	berth_buf m = BERTH_BUF_INIT;
	uint32_t n = 0;
	berth_buf_append(&m, "E", 1);
	berth_buf_append(&m, &n, sizeof(n));
	record_pack(&s->r->info, &m);
#ifdef BERTH_FAULT_INJECTION
	/* tests: a record told that is not the store's (its reason), which the
	 * waiter's check (record_same_as_stored) must see */
	const char *lie = getenv("BERTH_TEST_END_TOLD_REASON");
	if (lie) {
		berth_run_info told = s->r->info;
		told.reason = (char *)lie;
		m.len = 1 + sizeof(n);
		record_pack(&told, &m);
	}
#endif
	bool whole = !m.failed && m.len <= LOCAL_END_MAX;
	if (whole) {
		n = (uint32_t)(m.len - 1 - sizeof(n));
		memcpy(m.data + 1, &n, sizeof(n));
	}
	ssize_t w = write(s->done_fd, whole ? m.data : "e", whole ? m.len : 1);
	(void)w;
	berth_buf_release(&m);
}

/* After the run: what is left killed, its usage read, its mount points and
 * run-long volumes removed, and its end recorded, also on a full disk (the
 * done marker says it then, for recovery to record). Its cgroup, empty,
 * goes after the marker (remove_cgroup): the kernel may hold it a while. */
static void finish(sup *s, const char *id)
{
	store_run *r = s->r;
	reap_all(s);
	usage_of(s);
	sup_remove_mount_points(s);
	if (!r->keep_volumes)
		local_cleanup_volumes(s->home, r);
	note_logs(s, true);
	for (size_t i = 0; i < s->nw; i++) {
		if (s->w[i].log >= 0)
			close(s->w[i].log);
		s->w[i].log = -1;
		log_clock_close(&s->w[i].clock);
	}
	r->info.finished = store_now_ms();
	r->pid = 0;
	/* the end and its event in one transaction; a full disk does not lose how
	 * the run ended: its reserve is given back, and the done marker says it */
	bool recorded = false;
	for (int i = 0; i < 2 && !sup_store(s); i++) {
		berth_error *e = NULL;
		int rc = store_begin(s->st, &e);
		if (!rc && !(rc = save(s))) {
			flush_notes(s); /* a run that never started: what its preparation noted */
			event(s, berth_state_name(r->info.state), r->info.reason);
			rc = store_commit(s->st, &e);
		}
		berth_error_free(e);
		/* recorded, and durable: the waiter hears it now, while the marker,
		 * for the others, is made */
		if (!rc && s->done_fd >= 0)
			tell_end(s);
		if ((recorded = !rc))
			break;
		store_rollback(s->st);
		/* made, only its fsync failed (the store says it ended as this says):
		 * a second try would record the end twice. Not durable: no "e", and
		 * the marker says how it ended */
		store_run *now = NULL;
		bool made = !store_run_get(s->st, id, &now, NULL) && berth_state_final(now->info.state) &&
			    now->info.finished == r->info.finished;
		store_run_free(now);
		if (made)
			break;
		char reserve[4096];
		if (!backend_run_path(reserve, sizeof(reserve), s->home, id, "reserve"))
			unlink(reserve);
	}
	/* tests: the marker made late (a waiter told by the pipe does not wait for it) */
	berth_test_pause("BERTH_TEST_MARKER_DELAY_MS");
	/* recorded, the waiter may have deleted the run already: its directory
	 * is not made again (a leftover no one removes); else the marker is
	 * the record of the end, made whatever */
	local_mark_outcome(s->home, id, &r->info, !recorded);
}

static void remove_cgroups(sup *s)
{
	for (size_t i = 0; i < s->nw; i++) {
		sup_worker *w = &s->w[i];
		if (w->cg) {
			cg_destroy(w->cg, NULL);
			cg_free(w->cg);
			w->cg = NULL;
		}
		if (w->cgfd >= 0)
			close(w->cgfd);
		w->cgfd = -1;
	}
}

/* Frees what the supervisor held; secret values are wiped first. */
static void release(sup *s, char **files, size_t *lens)
{
	store_run *r = s->r;
	for (size_t i = 0; files && i < s->nvols; i++)
		secret_free(files[i], lens[i]);
	free(files);
	free(lens);
	if (s->secret_values) {
		memset(s->secret_values, 0, s->secret_len);
		free(s->secret_values);
	}
	for (size_t k = 0; k < s->nw; k++) {
		sup_worker *w = &s->w[k];
		for (size_t i = 0; i < w->nenv; i++)
			if (w->envp[i] < r->env || w->envp[i] >= r->env + r->env_len)
				free(w->envp[i]);
		free(w->envp);
		free(w->gpu_ids);
	}
	if (s->w != &s->one)
		free(s->w);
	s->w = NULL;
	s->nw = 0;
	free(s->argv);
	free(s->mpi_argv0);
	memset(s->mpi_token, 0, sizeof(s->mpi_token));
	free(s->tmp);
	free(s->evicted);
	free(s->vols);
	berth_buf_release(&s->notes);
	store_run_free(s->r);
	s->r = NULL;
}

/* What a run held is free: the local kind, opened alone as any handle opens
 * it (recovery, then the queue), starts what waits for it. */
static void start_queue(const char *home)
{
	berth_backend *b = NULL;
	berth_policy *policy = NULL;
	berth_backend_opts o = {.home = home};
	if (berth_policy_load(&policy, NULL, NULL) == 0)
		o.policy = policy;
	if (backend_runtime_open(&b, &o, NULL) == 0) {
		if (local_backend_ops.open(b, true, NULL) == 0 || LOCAL(b))
			local_backend_ops.close(b);
		backend_runtime_close(b);
	}
	berth_policy_free(policy);
}

/* The supervisor of run id: with r (its record, as the caller that forked
 * this process stored it), the store is opened once the command runs; else
 * the record is read from it first. done_fd: the waiter's pipe, or -1 for
 * the one BERTH_DONE_FD names. */
static int supervise(const char *home, const char *id, store_run *r, int done_fd, berth_error **err)
{
	sigset_t set, run_mask;
	done_fd = become_supervisor(&set, &run_mask, done_fd);
	sup s = {.home = home, .run_mask = run_mask, .r = r, .done_fd = done_fd, .failed = -1,
		 .sfd = -1, .ifd = -1};
	char path[4096];
#ifdef BERTH_FAULT_INJECTION
	/* tests: how this supervisor was started */
	berth_test_note("BERTH_TEST_SUPERVISOR_HOW", r ? "forked" : "exec");
	/* tests: a supervisor that dies before it has started the run, or recorded itself */
	if (getenv("BERTH_TEST_SUPERVISOR_DIES"))
		_exit(1);
	/* tests: this supervisor's fsyncs fail with this errno (store/sync.c), its caller's not */
	const char *fsync_errno = getenv("BERTH_TEST_SUPERVISOR_FSYNC_ERRNO");
	if (fsync_errno)
		setenv("BERTH_TEST_FSYNC_ERRNO", fsync_errno, 1);
#endif
	if (!s.r) {
		if (backend_store_where(path, sizeof(path), home) || store_open(&s.st, path, err))
			return -BERTH_EIO;
		int rc = store_run_get(s.st, id, &s.r, err);
		if (rc || s.r->info.state != BERTH_STATE_RUNNING) {
			store_run_free(s.r);
			store_close(s.st);
			return rc;
		}
	}
	/* its workers: one, or a distributed job's */
	s.nw = s.r->info.workers > 1 && s.r->info.workers <= BERTH_WORKERS_MAX ? (size_t)s.r->info.workers : 1;
	s.w = s.nw > 1 ? berth_calloc(s.nw, sizeof(*s.w)) : &s.one;
	if (!s.w) {
		s.w = &s.one;
		s.nw = 1;
	}
	for (size_t i = 0; i < s.nw; i++)
		s.w[i] = (sup_worker){.statp = -1, .cgfd = -1, .log = -1, .clock = {.fd = -1}, .wd = -1};
	berth_buf why = BERTH_BUF_INIT;
	bool all = s.nw == (s.r->info.workers > 1 ? (size_t)s.r->info.workers : 1);
	if (!all)
		berth_buf_printf(&why, "cannot prepare the run: its %lld workers: out of memory",
				 (long long)s.r->info.workers);
	/* before the cgroups, which hold an fd each on v2 */
	bool fds = all && enough_fds(&s, &why);
	make_cgroups(&s, id);
	char **files = NULL;
	size_t *lens = NULL;
	if (fds && prepare(&s, &files, &lens, &why)) {
		run_attempts(&s, &set, (const char *const *)files, lens);
	} else {
		s.r->info.state = BERTH_STATE_FAILED;
		set_reason(s.r, why.len ? berth_buf_detach(&why) : fmt("cannot prepare the run"));
	}
	berth_buf_release(&why);
	finish(&s, id);
	if (done_fd >= 0)
		close(done_fd);
	/* after the waiter is told: closing an inotify instance waits for the
	 * kernel's grace period (15 ms on some machines, most of a short run's
	 * launch when it came before the end was recorded) */
	if (s.ifd >= 0)
		close(s.ifd);
	if (s.sfd >= 0)
		close(s.sfd);
	s.ifd = s.sfd = -1;
	/* what is left no one waits for: its own files and its cgroup go, at idle
	 * priority, behind whatever else wants the CPU (the waiter, which is
	 * woken now; the next launch), not beside it */
	struct sched_param idle = {0};
	bool idled = sched_getscheduler(0) == SCHED_OTHER && sched_setscheduler(0, SCHED_IDLE, &idle) == 0;
	remove_cgroups(&s);
	local_cleanup_run_dirs(home, id);
	release(&s, files, lens);
	bool queued = s.st && store_queued(s.st, local_backend_ops.kind);
	store_close(s.st);
	/* the runs that now fit start at the usual priority */
	if (queued && (!idled || sched_setscheduler(0, SCHED_OTHER, &idle) == 0))
		start_queue(home);
	return 0;
}

int berth_local_supervise(const char *home, const char *id, berth_error **err)
{
	return supervise(home, id, NULL, -1, err);
}

int local_supervise_forked(const char *home, store_run *r, int done_fd)
{
	berth_error *err = NULL;
	int rc = supervise(home, r->info.id, r, done_fd, &err);
	berth_error_free(err);
	return rc;
}
