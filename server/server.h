/*
 * server.h - berth serve: the REST API of docs/api.md over libberth.
 *
 * libmicrohttpd answers HTTP on a pool of threads (one per core, epoll).
 * Every handler goes through one backend handle under one lock: the store
 * is SQLite, whose writes are serial anyway, and a handler holds the lock
 * for microseconds. What can take long (following a log) runs on a thread
 * of its own with a second, passive handle.
 */
#ifndef BERTH_SERVER_H
#define BERTH_SERVER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "berth/berth.h"

typedef struct serve_opts {
	const char *listen;       /* "127.0.0.1:8720", "[::1]:8720", ":8720" */
	const char *config;       /* the policy file (NULL: $BERTH_CONFIG, ...) */
	const char *backend;      /* "local" or "kubernetes" */
	const char *kubeconfig;   /* kubernetes: NULL: $KUBECONFIG, ~/.kube/config, in-cluster */
	const char *context;      /* (both point into argv: they outlive every thread) */
	const char *home;         /* NULL: $BERTH_HOME, else ~/.berth */
	bool insecure_local;      /* anonymous requests act as admin of every project */
	size_t max_body;          /* bytes; 0: 1 MiB */
	unsigned threads;         /* 0: one per core */
} serve_opts;

/* Runs until SIGINT or SIGTERM; returns an exit status (messages on stderr). */
int serve_main(const serve_opts *o);

/* ---- what handlers share (server.c) ---------------------------------------------------- */

/* A growable string (writes are sticky on failure, like berth_buf). */
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

typedef struct route route;
typedef struct server server;

/* One request, from the first byte to the answer. */
typedef struct req {
	server *srv;
	struct MHD_Connection *conn;
	const route *route;
	const char *method, *url;
	char *body;
	size_t len;
	bool too_big;
	double start;
	const char *param[3][2];      /* path parameters: name, value (in pbuf) */
	char pbuf[512];
	berth_principal *who;
	int status;                    /* the answer's status, for the metrics */
	const berth_error *warnings;   /* sent as Berth-Warning headers */
	char allow[64];                /* 405: the methods the path answers */
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

/* The backend and its lock; the time each holder keeps it is the store
 * latency of /metrics. */
berth_backend *srv_backend(server *s);
void srv_lock(server *s);
void srv_unlock(server *s);
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

/* ---- metrics (metrics.c) --------------------------------------------------------------- */

void metrics_request(const char *path, const char *method, int status, double seconds);
void metrics_store(double seconds);
/* The Prometheus text: the request and store histograms, plus runs by state. */
void metrics_format(sbuf *out, const int64_t counts[5], int64_t queued);

/* The web UI's files (ui.c): the asset at path ("index.html", "app.js"), or NULL. */
typedef struct ui_asset {
	const char *name, *type;
	const char *data, *end;   /* the bytes: [data, end) */
} ui_asset;
const ui_asset *ui_find(const char *name);

/* The OpenAPI document (openapi.c). */
extern const char openapi_json[];
size_t openapi_json_len(void);

#endif
