/*
 * mpi.c - MPI ranks across the workers of a local distributed job (mpi.h).
 *
 * mpirun starts Open MPI's daemon (orted) on every host of its hostfile
 * through a remote shell, `AGENT HOST WORDS...` (plm_rsh_agent). Here the
 * hosts are the run's workers (worker-0 ... worker-N-1) and the agent is
 * berth's: it connects to the worker's server, a unix socket of the abstract
 * namespace named after the run and the worker, and hands it the words and
 * its own stdin, stdout and stderr (SCM_RIGHTS), as ssh would carry them. The
 * worker runs them with /bin/sh in itself, so the daemon and its ranks are in
 * that worker's cgroup with its GPUs, and answers their exit status, which
 * the agent exits with.
 *
 * A bound socket's name is no secret (/proc/net/unix lists it), but no one
 * can know it before it is bound: it ends with a tag of the worker's rank
 * keyed by the run's token (BLAKE2b), so a process of another user that
 * learns the run's id (its cgroups, berth/ID.RANK, are there to list) cannot
 * take a worker's name first, and learns no other worker's name, nor the
 * token, from one it sees. A request carries the run's token
 * (BERTH_MPI_TOKEN, 32 random bytes in hex, in the workers' environment
 * alone), and comes from a process of the same uid (SO_PEERCRED), both ways.
 * The token is kept from what the workers start, mpirun excepted (it starts
 * the agent).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "backend/local/mpi.h"
#include "base/internal.h"
#include "berth/run.h"

#define TOKEN_LEN 64          /* hex */
#define REQUEST_MAX (64 * 1024) /* token, NUL, the words */
#define CONNECT_WAIT_MS 30000 /* a worker's server may start after mpirun asks */
#define REQUEST_WAIT_S 5      /* an agent sends its request as it connects */
#define HANGUP_GRACE_MS 5000  /* a daemon whose agent is gone: SIGTERM, then SIGKILL */

static void say(const char *fmt, ...) BERTH_PRINTF(1, 2);
static void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("berth mpi: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* A whole number in [lo, hi] from the environment; -1 when absent or not one. */
static long env_num(const char *name, long lo, long hi)
{
	const char *v = getenv(name);
	char *end;
	long n = v && *v ? strtol(v, &end, 10) : -1;
	return v && *v && !*end && n >= lo && n <= hi ? n : -1;
}

/* The abstract socket of worker rank of run id: berth-mpi/ID/RANK/TAG, TAG
 * the rank keyed by the run's token (TOKEN_LEN bytes), which no one without
 * the token can tell before the worker binds it. */
static socklen_t worker_addr(struct sockaddr_un *a, const char *id, long rank, const char *token)
{
	char msg[48];
	unsigned char tag[16];
	char hex[2 * sizeof(tag) + 1];
	int mlen = snprintf(msg, sizeof(msg), "berth-mpi worker %ld", rank);
	if (sodium_init() < 0)
		abort();
	crypto_generichash(tag, sizeof(tag), (const unsigned char *)msg, (unsigned long long)mlen,
			   (const unsigned char *)token, TOKEN_LEN);
	sodium_bin2hex(hex, sizeof(hex), tag, sizeof(tag));
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	int n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "berth-mpi/%s/%ld/%s", id, rank, hex);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

static bool same_uid(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 && cr.uid == getuid();
}

static bool token_ok(const char *a, const char *b)
{
	unsigned char d = 0;
	for (size_t i = 0; i < TOKEN_LEN; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0 && strlen(a) == TOKEN_LEN;
}

/* The run's token and id, from the environment; NULL when either is not one. */
static const char *run_token(const char **id)
{
	const char *t = getenv("BERTH_MPI_TOKEN");
	*id = getenv("BERTH_RUN_ID");
	return t && strlen(t) == TOKEN_LEN && *id && !berth_run_id_check(*id) ? t : NULL;
}

/* ---- the agent ----------------------------------------------------------------------------- */

int berth_local_mpi_exec(int argc, char **argv)
{
	const char *id, *token = run_token(&id);
	/* an agent may be given a remote shell's options first */
	int i = 1;
	while (i < argc && argv[i][0] == '-')
		i++;
	long rank = -1;
	char *end;
	/* worker-N, N digits alone (strtol takes a sign and spaces too) */
	if (i < argc && !strncmp(argv[i], "worker-", 7) && argv[i][7] >= '0' && argv[i][7] <= '9')
		rank = strtol(argv[i] + 7, &end, 10);
	if (!token || rank < 0 || rank >= BERTH_WORKERS_MAX || *end || i + 1 >= argc) {
		say("usage: berth %s worker-N WORDS... (mpirun's agent in a distributed job's worker, "
		    "with BERTH_RUN_ID and BERTH_MPI_TOKEN)", MPI_EXEC_VERB);
		return 255;
	}
	berth_buf req = BERTH_BUF_INIT;
	berth_buf_append(&req, token, TOKEN_LEN + 1);
	for (int k = i + 1; k < argc; k++)
		berth_buf_printf(&req, "%s%s", k > i + 1 ? " " : "", argv[k]);
	if (req.failed || req.len >= REQUEST_MAX) {
		say("the command for %s is too long (%zu bytes, at most %d)", argv[i], req.len, REQUEST_MAX);
		berth_buf_release(&req);
		return 255;
	}
	struct sockaddr_un a;
	socklen_t alen = worker_addr(&a, id, rank, token);
	int fd = -1;
	for (int waited = 0;; waited += 50) {
		fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&a, alen) == 0)
			break;
		int e = errno;
		if (fd >= 0)
			close(fd);
		fd = -1;
		if (waited >= CONNECT_WAIT_MS || (e != ECONNREFUSED && e != ENOENT)) {
			say("cannot reach %s of run %s: %s", argv[i], id, strerror(e));
			berth_buf_release(&req);
			return 255;
		}
		struct timespec ts = {0, 50 * 1000000L};
		nanosleep(&ts, NULL);
	}
	if (!same_uid(fd)) {
		say("%s of run %s answers as another user: refused", argv[i], id);
		close(fd);
		berth_buf_release(&req);
		return 255;
	}
	int fds[3] = {0, 1, 2};
	union {
		char buf[CMSG_SPACE(sizeof(fds))];
		struct cmsghdr align;
	} ctl;
	memset(&ctl, 0, sizeof(ctl));
	struct iovec iov = {req.data, req.len};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			   .msg_controllen = sizeof(ctl.buf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	ssize_t sent = sendmsg(fd, &m, MSG_NOSIGNAL);
	berth_buf_release(&req);
	int status = 255;
	ssize_t n = -1;
	if (sent > 0)
		while ((n = recv(fd, &status, sizeof(status), 0)) < 0 && errno == EINTR)
			;
	close(fd);
	if (n != (ssize_t)sizeof(status)) {
		say("%s of run %s ended before the command did", argv[i], id);
		return 255;
	}
	return status & 0xff;
}

/* ---- the worker ---------------------------------------------------------------------------- */

/* A request served: the command's process group and the connection that
 * waits for its status (-1 once its agent is gone), and when the command,
 * sent SIGTERM then, is killed (0: not yet asked). */
typedef struct served {
	pid_t pid;
	int conn;
	int64_t kill_at;
} served;

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads one request from conn and starts it; 0 with *out, -1 refused. Every
 * fd a request carries is closed here, whatever it is (a request of 2 or 4
 * fds kept them in the worker, until it had none left for mpirun's), and a
 * peer that sends nothing holds the worker REQUEST_WAIT_S at most. */
static int serve(int conn, const char *token, served *out)
{
	char *buf = malloc(REQUEST_MAX + 1);
	int fds[3] = {-1, -1, -1}, got[4], ngot = 0;
	union {
		char b[CMSG_SPACE(sizeof(got))]; /* room for one fd too many: told apart */
		struct cmsghdr align;
	} ctl;
	memset(&ctl, 0, sizeof(ctl));
	struct iovec iov = {buf, REQUEST_MAX};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b,
			   .msg_controllen = sizeof(ctl.b)};
	struct timeval wait = {REQUEST_WAIT_S, 0};
	ssize_t n = buf && same_uid(conn) &&
			    setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait)) == 0
		    ? recvmsg(conn, &m, MSG_CMSG_CLOEXEC)
		    : -1;
	int cmsgs = 0;
	for (struct cmsghdr *c = n >= 0 ? CMSG_FIRSTHDR(&m) : NULL; c; c = CMSG_NXTHDR(&m, c)) {
		cmsgs++;
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS || c->cmsg_len < CMSG_LEN(0))
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t j = 0; j < k && ngot < (int)BERTH_ARRAY_SIZE(got); j++)
			memcpy(&got[ngot++], CMSG_DATA(c) + j * sizeof(int), sizeof(int));
	}
	if (cmsgs == 1 && ngot == 3)
		memcpy(fds, got, sizeof(fds));
	bool ok = n > TOKEN_LEN + 1 && !(m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) && fds[2] >= 0 &&
		  buf[TOKEN_LEN] == 0 && token_ok(buf, token);
	pid_t pid = -1;
	if (ok) {
		buf[n] = 0;
		pid = fork();
		if (pid == 0) {
			setpgid(0, 0);
			for (int k = 0; k < 3; k++)
				dup2(fds[k], k);
			execl("/bin/sh", "sh", "-c", buf + TOKEN_LEN + 1, (char *)NULL);
			_exit(127);
		}
	}
	for (int k = 0; k < ngot; k++)
		close(got[k]);
	free(buf);
	if (pid < 0) {
		if (!ok)
			say("a request was refused (not from this run, or malformed)");
		return -1;
	}
	setpgid(pid, pid);
	*out = (served){pid, conn, 0};
	return 0;
}

/* A wait status as an exit status. */
static int exit_of(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 255;
}

static const char *tmp_dir(void)
{
	const char *dir = getenv("TMPDIR");
	return dir && *dir == '/' ? dir : "/tmp";
}

/* Open MPI's session directories of a worker's daemon, apart from the
 * others': they share one machine and, in one run, one /tmp, where two
 * daemons of one job making the same directory race. The directory is this
 * user's, 0700: where /tmp is the machine's (berth not root), a name that is
 * there already and not so (another user's, a link, open to others) was
 * made by someone else, to fail the run or to read and change what its
 * daemons keep there; a fresh one is made instead. */
static void own_session_dir(long rank)
{
	char dir[4096];
	struct stat st;
	snprintf(dir, sizeof(dir), "%s/berth-ompi-%ld-%ld", tmp_dir(), (long)geteuid(), rank);
	bool ok = mkdir(dir, 0700) == 0 ||
		  (errno == EEXIST && lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) &&
		   st.st_uid == geteuid() && !(st.st_mode & 077));
	if (!ok) {
		snprintf(dir, sizeof(dir), "%s/berth-ompi-%ld-%ld-XXXXXX", tmp_dir(), (long)geteuid(), rank);
		ok = mkdtemp(dir) != NULL;
	}
	if (ok)
		setenv("OMPI_MCA_orte_tmpdir_base", dir, 1);
}

/* Worker 0's hostfile: every worker with its slots, in $TMPDIR or /tmp. */
static int write_hostfile(char *path, size_t len, long workers, long slots)
{
	snprintf(path, len, "%s/berth-mpi-hostfile-XXXXXX", tmp_dir());
	int fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return -1;
	FILE *f = fdopen(fd, "w");
	for (long w = 0; f && w < workers; w++)
		fprintf(f, "worker-%ld slots=%ld\n", w, slots);
	return f && fclose(f) == 0 ? 0 : -1;
}

/* Starts mpirun with the command on worker 0, its hostfile written at
 * hostfile (the worker removes it when mpirun ends): the pid, or -1. */
static pid_t start_mpirun(char **cmd, int ncmd, long workers, long slots, const char *token,
			  char hostfile[static 4096])
{
	char np[32], agent[64];
	if (write_hostfile(hostfile, 4096, workers, slots)) {
		say("cannot write the hostfile: %s", strerror(errno));
		return -1;
	}
	snprintf(np, sizeof(np), "%ld", workers * slots);
	/* the agent is this binary, whatever path reaches it from here */
	snprintf(agent, sizeof(agent), "/proc/%ld/exe %s", (long)getpid(), MPI_EXEC_VERB);
	char **argv = calloc((size_t)ncmd + 6, sizeof(char *));
	if (!argv)
		return -1;
	int k = 0;
	argv[k++] = "mpirun";
	argv[k++] = "-np";
	argv[k++] = np;
	argv[k++] = "--hostfile";
	argv[k++] = hostfile;
	for (int i = 0; i < ncmd; i++)
		argv[k++] = cmd[i];
	pid_t pid = fork();
	if (pid == 0) {
		/* mpirun's in $TMPDIR's default place: an MCA variable of its
		 * environment is passed on to every daemon, whose own it would be */
		unsetenv("OMPI_MCA_orte_tmpdir_base");
		setenv("OMPI_MCA_plm_rsh_agent", agent, 1);
		setenv("OMPI_MCA_orte_default_hostfile", hostfile, 0);
		setenv("BERTH_MPI_HOSTFILE", hostfile, 1);
		setenv("BERTH_MPI_TOKEN", token, 1); /* for the agent */
		if (geteuid() == 0) {
			setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
			setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
		}
		execvp(argv[0], argv);
		say("cannot run mpirun: %s (install Open MPI: mpirun and orted on the PATH)", strerror(errno));
		_exit(127);
	}
	free(argv);
	return pid;
}

int berth_local_mpi_worker(int argc, char **argv)
{
	const char *id, *t = run_token(&id);
	long rank = env_num("BERTH_WORKER", 0, BERTH_WORKERS_MAX - 1);
	long workers = env_num("BERTH_WORKERS", 1, BERTH_WORKERS_MAX);
	long slots = env_num("BERTH_MPI_SLOTS", 1, 1024);
	int cmd = argc > 1 && !strcmp(argv[1], "--") ? 2 : argc;
	if (!t || rank < 0 || workers < 1 || slots < 1 || (rank == 0) != (cmd < argc)) {
		say("usage: berth %s [-- COMMAND...] (a worker of a distributed job with launcher mpi: "
		    "BERTH_RUN_ID, BERTH_WORKER, BERTH_WORKERS, BERTH_MPI_SLOTS and BERTH_MPI_TOKEN; "
		    "the command on worker 0 alone)", MPI_WORKER_VERB);
		return 2;
	}
	char token[TOKEN_LEN + 1];
	memcpy(token, t, sizeof(token));
	unsetenv("BERTH_MPI_TOKEN"); /* nothing it starts has it, mpirun excepted */
	/* what every daemon and mpirun read, unless the run says otherwise: the
	 * workers share one machine (several daemons: no shared topology; ranks
	 * of two workers, in two pid namespaces, copy through sockets), talk on
	 * loopback, and are started by mpirun itself (no tree of daemons, whose
	 * agents would name this process by its pid in another namespace); a
	 * daemon stays this process's child (it does not detach: its end is the
	 * worker's), and the shell mpirun assumes is the one that runs it */
	setenv("OMPI_MCA_orte_leave_session_attached", "1", 0);
	own_session_dir(rank);
	setenv("SHELL", "/bin/sh", 1);
	setenv("OMPI_MCA_rtc", "^hwloc", 0);
	setenv("OMPI_MCA_plm_rsh_no_tree_spawn", "1", 0);
	setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 0);
	setenv("OMPI_MCA_btl_tcp_if_include", "lo", 0);
	setenv("OMPI_MCA_oob_tcp_if_include", "lo", 0);
	signal(SIGPIPE, SIG_IGN);
	struct sockaddr_un a;
	socklen_t alen = worker_addr(&a, id, rank, token);
	int lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, alen) || listen(lfd, 8)) {
		say("worker %ld cannot listen for mpirun: %s", rank, strerror(errno));
		return 255;
	}
	char hostfile[4096] = "";
	pid_t mpirun = rank == 0 ? start_mpirun(argv + cmd, argc - cmd, workers, slots, token, hostfile) : 0;
	if (mpirun < 0) {
		if (hostfile[0])
			unlink(hostfile);
		return 127;
	}
	served s = {-1, -1, 0};
	int result = -1, mpirun_status = -1;
	for (;;) {
		int st;
		pid_t w;
		while ((w = waitpid(-1, &st, WNOHANG)) > 0) {
			if (w == mpirun)
				mpirun_status = exit_of(st);
			if (w == s.pid) {
				int code = exit_of(st);
				if (s.conn >= 0) {
					ssize_t sent = send(s.conn, &code, sizeof(code), MSG_NOSIGNAL);
					(void)sent;
					close(s.conn);
				}
				s = (served){-1, -1, 0};
				result = code;
			}
		}
		/* worker 0 ends with mpirun (its daemon given a moment to end
		 * first); another with the daemon it served */
		if (rank == 0 && mpirun_status >= 0) {
			if (s.pid > 0)
				kill(-s.pid, SIGTERM);
			unlink(hostfile);
			return mpirun_status;
		}
		if (rank > 0 && result >= 0)
			return result;
		struct pollfd p[2] = {{lfd, POLLIN, 0}, {s.conn, POLLIN, 0}};
		int n = poll(p, s.conn >= 0 ? 2 : 1, 100);
		if (n > 0 && (p[0].revents & POLLIN)) {
			int conn = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
			/* one daemon a worker: a second request is refused */
			if (conn >= 0 && (s.pid > 0 || result >= 0 || serve(conn, token, &s)))
				close(conn);
		}
		/* the agent gone (mpirun stopped it): so is its command, SIGTERM
		 * once, and SIGKILL after a grace period (the connection, which
		 * stays readable, is no longer polled: no busy loop) */
		if (n > 0 && s.conn >= 0 && (p[1].revents & (POLLHUP | POLLERR | POLLIN))) {
			kill(-s.pid, SIGTERM);
			close(s.conn);
			s.conn = -1;
			s.kill_at = now_ms() + HANGUP_GRACE_MS;
		}
		if (s.pid > 0 && s.kill_at > 0 && now_ms() >= s.kill_at) {
			kill(-s.pid, SIGKILL);
			s.kill_at = 0;
		}
	}
}
