/*
 * server.h - berth serve: the REST API of docs/api.md over libberth.
 *
 * libmicrohttpd answers HTTP on a pool of threads (one per core, epoll).
 * Each worker thread has a backend handle of its own, and with it its own
 * connection to the store: SQLite in WAL mode lets reads go on while one
 * writer commits, and orders the writers (of this process, the reconciler of
 * the main thread, and any berth command) itself. No handler plans or reads
 * under a lock of the server's; only a submission takes one (srv_lock), so
 * that the quotas of two requests are never checked against the same usage.
 * What can take long (following a log, waiting for a run to stop) runs on a
 * thread of its own with a passive handle while the connection is suspended
 * (stream.c): no answer holds a worker thread.
 */
#ifndef BERTH_SERVER_H
#define BERTH_SERVER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "berth/berth.h"
#include "mhd_dl.h"

typedef struct serve_opts {
	const char *listen;       /* "127.0.0.1:8720", "[::1]:8720", ":8720" */
	const char *config;       /* the policy file (NULL: $BERTH_CONFIG, ...) */
	const char *backend;      /* the kind new runs go to (NULL: the default kind) */
	const char *kubeconfig;   /* kubernetes: NULL: $KUBECONFIG, ~/.kube/config, in-cluster */
	const char *context;      /* (both point into argv: they outlive every thread) */
	const char *home;         /* NULL: $BERTH_HOME, else ~/.berth */
	bool insecure_local;      /* anonymous requests act as admin of every project */
	size_t max_body;          /* bytes; 0: 1 MiB */
	unsigned threads;         /* 0: one per core */
	unsigned max_connections; /* open connections in all; 0: 4096 (less when the open
				     file limit cannot be raised for them) */
	unsigned max_per_ip;      /* open connections from one address; 0: 128 */
	unsigned idle_timeout;    /* seconds a connection may do nothing; 0: 30 */
	unsigned max_streams;     /* logs being sent and stop waits at once; 0: 1024 */
	const char *tls_cert;     /* PEM: the certificate (and its chain), and its key; */
	const char *tls_key;      /* both NULL: plain HTTP. Reloaded as the policy is */
} serve_opts;

/* Runs until SIGINT or SIGTERM; returns an exit status (messages on stderr).
 * (serve.c) */
int serve_main(const serve_opts *o);

typedef struct server server;
/* The server without its daemon (serve_main's first half; tests/fuzz/fuzz_http.c
 * feeds it requests): the policy loaded, the store opened and recovered. An
 * exit status, with the reason on stderr; o must outlive it. */
int server_open(server **out, const serve_opts *o);
/* One pass of the reconciler (serve_main's loop, on the main thread): the
 * runs' records brought up to what their backend says. */
void server_reconcile(server *s);
/* Whether this server leads the reconciling among the servers of its store
 * (berth_backend_lead): a change is said on stderr. */
bool server_lead(server *s);
/* What the cluster of a kubernetes server lacks for the policy (berth cluster
 * check), into the log before the first submit: each line not ok, and a count. */
void server_check_cluster(server *s);
/* Loads the policy file again (SIGHUP, or the file changed): checked
 * completely, then in force for every request from now on; when it has a
 * problem, said on stderr, and the one before stays. 0 reloaded, -1 not. */
int server_reload_policy(server *s);
/* keep_policy: a thread that may still read it has not ended */
void server_close(server *s, bool keep_policy);
/* The daemon's access handler and completed callback (cls is the server). */
enum MHD_Result server_request(void *cls, struct MHD_Connection *conn, const char *url,
			       const char *method, const char *version, const char *upload,
			       size_t *upload_size, void **state);
void server_completed(void *cls, struct MHD_Connection *conn, void **state,
		      enum MHD_RequestTerminationCode why);
/* Prints every problem of err on stderr ("berth serve: " first) and frees err. */
void srv_report(berth_error *err);

/* ---- what handlers share (server.c) ---------------------------------------------------- */

/* A growable string (sbuf.c; writes are sticky on failure, like berth_buf). */
typedef struct sbuf {
	char *data;
	size_t len, cap;
	bool failed;
} sbuf;
void sb_put(sbuf *b, const char *s, size_t n);
void sb_puts(sbuf *b, const char *s);
void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s as a JSON string, quotes included; NULL as null */
void sb_json(sbuf *b, const char *s);
void sb_free(sbuf *b);
/* a problem as the JSON object of docs/api.md (code, severity, file, line, ...) */
void sb_problem(sbuf *b, const berth_problem *p);
/* the warnings of w (its problems of severity warning) as a JSON array of
 * problems: "[]" when there are none; w may be NULL */
void sb_warnings(sbuf *b, const berth_error *w);

typedef struct route route;
typedef struct stream stream;

/* One request, from the first byte to the answer. */
typedef struct req {
	server *srv;
	struct MHD_Connection *conn;
	const route *route;
	const char *method, *url;
	char *body;
	size_t len;
	bool too_big;
	bool sync_failed;              /* its commits could not be made durable: answered 500 */
	struct MHD_Response *held;     /* the answer, until its commit is on disk (durable.c) */
	unsigned held_status;
	uint64_t held_seq;             /* the commit it waits for */
	double start;
	const char *param[3][2];      /* path parameters: name, value (in pbuf) */
	char pbuf[512];
	berth_principal *who;
	int status;                    /* the answer's status, for the metrics */
	const berth_error *warnings;   /* sent as Berth-Warning headers (the first few) */
	char allow[64];                /* 405: the methods the path answers */
	unsigned retry_after;          /* seconds: a Retry-After header when not 0 */
	stream *stream;                /* a log being sent or a wait (stream.c); set, the
					  route's handler is called again when the wait is
					  over */
} req;

/* A handler answers with one of these (or reply_* below), returning MHD_YES/NO. */
int reply(req *r, int status, const char *type, char *body, size_t len); /* takes body */
int reply_json(req *r, int status, sbuf *body);                          /* takes body */
int reply_error(req *r, const berth_error *err);                        /* status from code */
int reply_fail(req *r, int status, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The path parameter name, or NULL. */
const char *req_param(const req *r, const char *name);
/* A query argument, or NULL. */
const char *req_arg(const req *r, const char *name);
/* Who makes the request (r->who), for a public route that tells more to a
 * token: 0; else nonzero, answered (401: a token that is none) unless
 * r->status is 0. Without a token: nobody (r->who NULL), or, with
 * --insecure-local, an admin of every project as on every route. */
int req_authenticate(req *r);

/* This thread's backend handle (opened at its first request; NULL when the
 * store cannot be opened, which server_request answers with 503 before any
 * handler runs). */
berth_backend *srv_backend(server *s);
/* Held around a submission (quota checked, then stored): nothing else. */
void srv_lock(server *s);
void srv_unlock(server *s);
/* Monotonic seconds; the time of each library call is the store latency of /metrics. */
double srv_now(void);
const berth_policy *srv_policy(server *s);
const serve_opts *srv_opts(server *s);
const char *srv_home(server *s);

/* The free space of the data dir (srv_home) against its reserve: below it the
 * server takes nothing new (507) and /healthz answers 503. The reserve is
 * $BERTH_DISK_RESERVE bytes, else 64Mi or 1% of the filesystem, whichever is
 * less. One statvfs a second at most, shared by every thread. */
typedef struct disk_state {
	bool ok;         /* statvfs answered; else err is its errno */
	bool low;        /* free < reserve */
	int err;
	int64_t free;    /* bytes an unprivileged writer may still use */
	int64_t reserve; /* bytes */
} disk_state;
void srv_disk(server *s, disk_state *out);
/* The next srv_disk reads the disk again (after a write failed for space). */
void srv_disk_stale(server *s);

/* ---- routes (routes.c) ---------------------------------------------------------------- */

typedef enum scope {
	SCOPE_PUBLIC,   /* no token */
	SCOPE_ANY,      /* any valid token; the handler filters by project */
	SCOPE_PROJECT,  /* the {project} of the path */
	SCOPE_RUN,      /* the project of the run {id} */
	SCOPE_ALL,      /* every project ("*") */
} scope;

struct route {
	const char *method;
	const char *path;      /* "/api/v1/runs/{id}/logs" */
	int (*fn)(req *r);
	scope scope;
	berth_role need;
	const char *summary;
	bool grows;            /* writes new data: refused (507) when the data dir is under
				  its reserve; deletes and stops, which free space, are not */
};

extern const route routes[];
extern const size_t nroutes;

/* ---- streams (stream.c): answers that wait, off the worker threads --------------------- */

/* Starts the watcher of the streams' clients; at most max streams at once
 * (0: 1024). 0, or -1 with errno. Before the daemon starts. */
int streams_start(unsigned max);
/* Ends every stream (their clients see the connection close, each thread stops
 * at its next step) and waits a little for their threads. Before the daemon
 * stops: it must have no connection suspended. Returns how many threads still
 * run (log threads of quiet runs): what they use must not be freed. */
unsigned streams_stop(void);
/* Whether a stream would be refused now (503): a stop that waits asks first,
 * so that it is not made and then answered "try again". */
bool streams_full(void);
/* GET .../logs of run id: the log, read by a thread of its own (a passive
 * handle) and sent as it comes; with follow until the run is final. The
 * connection is suspended whenever nothing is there to send. Answers 503 with
 * Retry-After when max streams are open. */
int stream_logs(req *r, const char *id, const berth_log_opts *o);
/* Waits, on a thread of its own, until run id is final or timeout_ms passes;
 * the connection is suspended meanwhile, and the route's handler is called
 * again when the wait is over (r->stream set): stream_waited says how it
 * ended. 503 with Retry-After (answered) when max streams are open. */
int stream_wait(req *r, const char *id, int64_t timeout_ms);
/* How the wait of r ended: 0 final, -BERTH_ETIMEOUT the time is up (*err NULL),
 * else the library's error (*err, the caller frees it). */
int stream_waited(req *r, berth_error **err);
/* Waits until the store's version is past since or timeout_ms passes (from
 * the first call for r): the connection is suspended meanwhile, and the
 * route's handler is called again (r->stream set), to answer or to call this
 * again with the version it saw. 503 (answered) when max streams are open. */
int stream_watch(req *r, int64_t since, int64_t timeout_ms);
/* Whether r's watch has had its time. */
bool stream_watch_over(req *r);
/* The version r's watch saw last (nothing of its projects changed up to it),
 * or -1 before it first waited. */
int64_t stream_watch_seen(req *r);
/* Whether the client of r's stream went away (or the server stops). */
bool stream_gone(req *r);
/* The request is over (the daemon's completed callback): the stream's thread
 * stops at its next step. */
void stream_end(req *r);

/* ---- metrics (metrics.c) --------------------------------------------------------------- */

void metrics_request(const char *path, const char *method, int status, double seconds);
void metrics_store(double seconds);
/* The Prometheus text: the request and store histograms, plus runs by state. */
void metrics_format(sbuf *out, const int64_t counts[5], int64_t queued);

/* The web UI's files (ui.c): the asset at path ("index.html", "app.js"), or NULL. */
typedef struct ui_asset {
	const char *name, *type;
	const char *data, *end;   /* the bytes: [data, end) */
	const char *gz, *gz_end;  /* the same, gzip-compressed */
} ui_asset;
const ui_asset *ui_find(const char *name);
/* Whether a request's Accept-Encoding (NULL: none) takes gzip. */
bool ui_accepts_gzip(const char *accept);

/* The OpenAPI document (openapi.c). */
extern const char openapi_json[];
size_t openapi_json_len(void);

/* Last, after every system header of the files that include this one:
 * strcpy, sprintf, atoi... are compile errors in the server as in libberth. */
#include "base/banned.h"

/* ---- answers held until their commits are on disk (durable.c) ---- */
/* The thread that waits for the fsyncs (with a handle of its own); durable_stop
 * ends it once every answer held is released. */
int durable_start(server *s);
void durable_stop(void);
/* Holds resp (status) until commit seq is on disk: 1 held, the connection
 * suspended (durable_send answers it when resumed); without the thread,
 * waits here: 0 durable, -1 the fsync failed. */
int durable_hold(req *r, struct MHD_Response *resp, unsigned status, uint64_t seq);
/* Sends the held answer (a 500 instead when its fsync failed). */
int durable_send(req *r);


#endif
