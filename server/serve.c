/*
 * serve.c - berth serve's process: the address to listen on, the open file
 * limit, the signals, the libmicrohttpd daemon over server_request, and the
 * main thread's reconcile loop until SIGINT or SIGTERM. The requests
 * themselves are server.c's.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mhd_dl.h"
#include "server.h"
#include "tls.h"

/* ---- where to listen, what to hold open, signals ---------------------------------------- */

static int parse_listen(const char *listen, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[256];
	const char *colon = strrchr(listen, ':');
	if (!colon || !colon[1])
		return -1;
	char *end;
	unsigned long port = strtoul(colon + 1, &end, 10);
	if (*end || port > 65535)
		return -1;
	size_t hl = (size_t)(colon - listen);
	if (hl >= sizeof(host))
		return -1;
	memcpy(host, listen, hl);
	host[hl] = 0;
	memset(ss, 0, sizeof(*ss));
	if (host[0] == '[') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
		size_t n = strlen(host);
		if (n < 2 || host[n - 1] != ']')
			return -1;
		host[n - 1] = 0;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host + 1, &a->sin6_addr) != 1)
			return -1;
		*len = sizeof(*a);
		return 0;
	}
	struct sockaddr_in *a = (struct sockaddr_in *)ss;
	const char *addr = strcmp(host, "localhost") ? host : "127.0.0.1";
	a->sin_family = AF_INET;
	a->sin_port = htons((uint16_t)port);
	if (!*addr)
		a->sin_addr.s_addr = htonl(INADDR_ANY);
	else if (inet_pton(AF_INET, addr, &a->sin_addr) != 1)
		return -1;
	*len = sizeof(*a);
	return 0;
}

/* --insecure-local: only where no other machine can connect */
static bool loopback(const char *listen)
{
	return !strncmp(listen, "127.", 4) || !strncmp(listen, "localhost:", 10) ||
	       !strncmp(listen, "[::1]", 5);
}

/* What the daemon may hold open, from the flags. */
typedef struct limits {
	unsigned conns, per_ip, idle, streams;
} limits;

#define FILES_BASE 256     /* the store, the daemon, the reconciler: files besides these */
#define FILES_PER_STREAM 6 /* a stream's handle (SQLite and its WAL), its log, its watch */

/* Raises the soft limit of open files to the hard one, and lowers the
 * connections and streams to what fits it (said on stderr). */
static void fit_files(limits *l)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		rlim_t soft = rl.rlim_cur;
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			rl.rlim_cur = soft;
	}
	uint64_t need = FILES_BASE + (uint64_t)l->conns + (uint64_t)l->streams * FILES_PER_STREAM;
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
		return;
	uint64_t room = rl.rlim_cur > FILES_BASE + 64 ? rl.rlim_cur - FILES_BASE : 64;
	limits was = *l;
	l->conns = (unsigned)(room * l->conns / (need - FILES_BASE));
	l->streams = (unsigned)(room * l->streams / (need - FILES_BASE) / FILES_PER_STREAM);
	if (l->conns < 16)
		l->conns = 16;
	if (l->streams < 4)
		l->streams = 4;
	fprintf(stderr, "berth serve: %llu open files at most (ulimit -n): %u connections and %u "
			"streams, not %u and %u\n", (unsigned long long)rl.rlim_cur, l->conns,
		l->streams, was.conns, was.streams);
}

static volatile sig_atomic_t stopping, reload;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		reload = 1;
	else
		stopping = 1;
}

/* What tells that a watched file (the policy, the TLS certificate and key)
 * changed: its inode, size and mtime. */
typedef struct file_mark {
	bool ok;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
} file_mark;

static file_mark mark_of(const char *path)
{
	struct stat st;
	file_mark m = {false, 0, 0, 0, {0, 0}};
	if (path && stat(path, &st) == 0)
		m = (file_mark){true, st.st_dev, st.st_ino, st.st_size, st.st_mtim};
	return m;
}

static bool mark_changed(const file_mark *a, const file_mark *b)
{
	return a->ok != b->ok || a->dev != b->dev || a->ino != b->ino || a->size != b->size ||
	       a->mtime.tv_sec != b->mtime.tv_sec || a->mtime.tv_nsec != b->mtime.tv_nsec;
}

/* What the daemon keeps for one connection's request line, headers and arguments
 * (its default of 32 KiB answered nothing at all, until the idle timeout, to a
 * URL with 500 query arguments). */
#define CONN_MEMORY (128u << 10)

/* ---- the URL's escapes ------------------------------------------------------------------- */

static int hex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The daemon's unescaping of the path and of each query argument: %HH as the
 * default does, but %00 is left as written. Decoded, a NUL cut a name short
 * (secrets/a%00b set the secret "a"); kept, no name holds it, and the request
 * is refused by the check of the name. */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
	(void)cls;
	(void)c;
	char *out = s;
	for (const char *in = s; *in;) {
		int hi, lo;
		if (in[0] == '%' && (hi = hex(in[1])) >= 0 && (lo = hex(in[2])) >= 0 && (hi || lo)) {
			*out++ = (char)(hi << 4 | lo);
			in += 3;
		} else
			*out++ = *in++;
	}
	*out = 0;
	return (size_t)(out - s);
}

/* ---- start, run, stop ------------------------------------------------------------------ */

int serve_main(const serve_opts *o)
{
	struct sockaddr_storage addr;
	socklen_t alen;
	berth_error *lerr = NULL;
	if (berth_mhd_load(&lerr)) {
		srv_report(lerr);
		return 1;
	}
	if (parse_listen(o->listen, &addr, &alen)) {
		fprintf(stderr, "berth serve: --listen \"%s\" is not HOST:PORT\n", o->listen);
		return 2;
	}
	if (o->insecure_local && !loopback(o->listen)) {
		fprintf(stderr, "berth serve: --insecure-local is only for a loopback address "
				"(127.0.0.1, [::1]), not \"%s\"\n", o->listen);
		return 2;
	}
	bool tls = o->tls_cert || o->tls_key;
	if (tls && (!o->tls_cert || !o->tls_key)) {
		fprintf(stderr, "berth serve: --tls-cert and --tls-key go together (the certificate "
				"and its key)\n");
		return 2;
	}
	if (tls && (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES ||
		    MHD_is_feature_supported(MHD_FEATURE_HTTPS_CERT_CALLBACK) != MHD_YES)) {
		fprintf(stderr, "berth serve: this libmicrohttpd is built without TLS (GnuTLS): "
				"--tls-cert cannot be served\n");
		return 1;
	}
	if (tls && tls_open(o->tls_cert, o->tls_key))
		return 1;
	if (!tls && !loopback(o->listen))
		fprintf(stderr, "berth serve: warning: %s is not a loopback address and there is no "
				"TLS: tokens and specs cross the network in the clear (give --tls-cert and "
				"--tls-key, or put a TLS proxy in front)\n", o->listen);
	server *s = NULL;
	int st = server_open(&s, o);
	if (st) {
		tls_close();
		return st;
	}
	signal(SIGPIPE, SIG_IGN);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	unsigned threads = o->threads;
	if (!threads) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		threads = n > 0 ? (unsigned)n : 1;
	}
	limits lim = {o->max_connections ? o->max_connections : 4096,
		      o->max_per_ip ? o->max_per_ip : 128, o->idle_timeout ? o->idle_timeout : 30,
		      o->max_streams ? o->max_streams : 1024};
	fit_files(&lim);
	if (lim.per_ip > lim.conns)
		lim.per_ip = lim.conns;
	if (streams_start(lim.streams)) {
		fprintf(stderr, "berth serve: cannot start the streams' watcher: %s\n", strerror(errno));
		server_close(s, false);
		return 1;
	}
	if (durable_start(s)) {
		fprintf(stderr, "berth serve: cannot start the thread that waits for commits: %s\n",
			strerror(errno));
		streams_stop();
		server_close(s, false);
		tls_close();
		return 1;
	}
	struct MHD_Daemon *d = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
			MHD_ALLOW_SUSPEND_RESUME | (addr.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0) |
			(tls ? MHD_USE_TLS : 0),
		0, NULL, NULL, server_request, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
		MHD_OPTION_THREAD_POOL_SIZE, threads, MHD_OPTION_NOTIFY_COMPLETED, server_completed, s,
		MHD_OPTION_CONNECTION_TIMEOUT, lim.idle, MHD_OPTION_CONNECTION_LIMIT, lim.conns,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, lim.per_ip, MHD_OPTION_UNESCAPE_CALLBACK, unescape,
		NULL, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY,
		/* last: without TLS the options end here */
		tls ? MHD_OPTION_HTTPS_CERT_CALLBACK : MHD_OPTION_END, tls ? tls_callback() : NULL,
		MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "berth serve: cannot listen on %s: %s\n", o->listen, strerror(errno));
		durable_stop();
		streams_stop();
		server_close(s, false);
		tls_close();
		return 1;
	}
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	fprintf(stderr, "berth serve: listening on %s (port %u)%s, data in %s, backend %s%s\n",
		o->listen, di ? (unsigned)di->port : 0, tls ? " with TLS" : "", srv_home(s),
		o->backend ? o->backend : berth_backend_default_kind(),
		o->insecure_local ? ", anonymous requests allowed" : "");
	fprintf(stderr, "berth serve: at most %u connections, %u from one address, closed after %u s "
			"idle; %u logs and waits at once\n", lim.conns, lim.per_ip, lim.idle, lim.streams);
	if (o->backend && !strcmp(o->backend, "kubernetes"))
		server_check_cluster(s);
	/* reconcile now and then: a run whose supervisor died is seen without a
	 * restart; the policy and the TLS pair are loaded again on SIGHUP, or when
	 * one of their files changes (looked at once a second; a change that does
	 * not load is said once) */
	const char *files[3] = {berth_policy_file(srv_policy(s)), tls_cert_file(), tls_key_file()};
	file_mark seen[3];
	for (size_t k = 0; k < 3; k++)
		seen[k] = mark_of(files[k]);
	while (!stopping) {
		for (int i = 0; i < 50 && !stopping; i++) {
			usleep(100000);
			bool changed[3] = {false, false, false};
			for (size_t k = 0; k < 3 && i % 10 == 9; k++) {
				file_mark now = files[k] ? mark_of(files[k]) : seen[k];
				changed[k] = mark_changed(&now, &seen[k]);
			}
			bool hup = reload;
			reload = 0;
			for (size_t k = 0; k < 3; k++)
				if (hup || changed[k])
					seen[k] = mark_of(files[k]);
			if (hup || changed[0])
				server_reload_policy(s);
			if (hup || changed[1] || changed[2])
				tls_reload();
		}
		if (stopping)
			break;
		/* one server of those that share a store reconciles; another takes
		 * the lead when it ends */
		if (server_lead(s))
			server_reconcile(s);
	}
	fprintf(stderr, "berth serve: stopping\n");
	/* no connection may be suspended when the daemon stops */
	unsigned left = streams_stop();
	durable_stop(); /* after it, a request that writes waits for its fsync itself */
	MHD_stop_daemon(d); /* its threads end: their handles are closed */
	/* a log thread still reading a quiet run has the policy: it ends with the process */
	server_close(s, left > 0);
	tls_close();
	return 0;
}
