/*
 * kubernetes/api.h - talking to a Kubernetes API server: where it is and who we are
 * (kubeconfig.c), and requests over one reused libcurl connection (kubernetes/api.c).
 * The kubernetes backend (kubernetes.c) is built on these.
 */
#ifndef BERTH_KUBE_H
#define BERTH_KUBE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/internal.h"
#include "berth/error.h"
#include "berth/node.h"

/* ---- kubeconfig.c: the connection a kubeconfig context or a pod's service
 * account describes. Strings are malloc'd; NULL when not given. */
typedef struct kube_config {
	char *context;        /* the context used; "in-cluster" for a service account */
	char *server;         /* "https://host:port[/path]", no trailing '/' */
	char *tls_server_name;
	bool insecure;        /* insecure-skip-tls-verify */
	char *ca_data;        /* PEM, from certificate-authority-data (decoded) */
	size_t ca_len;
	char *ca_file;        /* absolute path */
	char *token;          /* a bearer token given inline */
	char *token_file;     /* absolute path; read again for each connection (it rotates) */
	char *cert_data, *key_data; /* PEM, from client-certificate-data / client-key-data */
	size_t cert_len, key_len;
	char *cert_file, *key_file; /* absolute paths */
	char *namespace;      /* the context's namespace, else "default" */
} kube_config;

/*
 * Finds and reads the connection, as kubectl does:
 *   path when given (--kubeconfig), else each file of $KUBECONFIG (a ':'
 *   list; the first file that sets a key wins, as kubectl merges), else
 *   ~/.kube/config; when none of these exists and KUBERNETES_SERVICE_HOST is
 *   set, the pod's service account (kube_config_in_cluster).
 * context: the context to use; NULL: the current-context.
 * Relative file names in a kubeconfig are relative to the file's directory.
 * Errors name the file, and the line and column where one is known.
 */
int kube_config_load(kube_config *out, const char *path, const char *context, berth_error **err);

/* Parses one kubeconfig held in memory (name is used in messages; dir is
 * where relative paths start). */
int kube_config_parse(kube_config *out, const char *name, const char *text, size_t len,
		      const char *dir, const char *context, berth_error **err);

/* The service account of the pod berth runs in: https://$KUBERNETES_SERVICE_HOST:
 * $KUBERNETES_SERVICE_PORT, with token, ca.crt and namespace from sa_dir
 * (NULL: $BERTH_SERVICEACCOUNT_DIR, else /var/run/secrets/kubernetes.io/serviceaccount). */
int kube_config_in_cluster(kube_config *out, const char *sa_dir, berth_error **err);

void kube_config_free(kube_config *c);

/* ---- kubernetes/api.c: requests ---------------------------------------------------------- */

typedef struct kube kube;

/* Takes cfg over (it is emptied). */
int kube_open(kube **out, kube_config *cfg, berth_error **err);
void kube_close(kube *k);
const kube_config *kube_cfg(const kube *k);

/* One answer: the HTTP status and its body (NUL-terminated). */
typedef struct kube_reply {
	long status;
	char *body;
	size_t len;
} kube_reply;
void kube_reply_free(kube_reply *r);

/* Appends s to b percent-encoded (all but RFC 3986's unreserved
 * characters): a query value, such as a label selector's, from data. */
void kube_put_escaped(berth_buf *b, const char *s);

/*
 * method path[?query] with body (NULL: none) of content_type. A transport
 * failure is an error (BERTH_EIO, with curl's words), and so is a reply over
 * 64 MiB or one that takes over 60 s (api.c: KUBE_MAX_REPLY, KUBE_REQUEST_S);
 * any HTTP status is returned in *r for the caller to read
 * (kube_status_error turns a Status body into an error).
 */
int kube_request(kube *k, const char *method, const char *path, const char *content_type,
		 const char *body, size_t len, kube_reply *r, berth_error **err);

/* A streaming GET (watch, follow a log): data is handed to chunk as it
 * arrives; a nonzero return of chunk ends the stream (not an error). While
 * nothing comes, chunk is called with len 0 about once a second.
 * *status receives the HTTP status; on a status >= 300 the body is kept in
 * *r (may be NULL, at most KUBE_MAX_REPLY) instead of being streamed.
 * timeout_s: the stream ends then, as if whole (0: none). stall_s: a stream
 * that sends nothing for that long fails (BERTH_EIO; 0: it may be quiet for
 * ever, as a followed log is); KUBE_STALL_S for a reply that should flow. */
#define KUBE_STALL_S 60
typedef int (*kube_chunk_fn)(void *ctx, const char *data, size_t len);
int kube_stream(kube *k, const char *path, int timeout_s, int stall_s, kube_chunk_fn chunk,
		void *ctx, long *status, kube_reply *r, berth_error **err);

/*
 * Watches collections (a workload and its pods) at once, until an event
 * callback says done or timeout_ms passes (< 0: no limit; then
 * BERTH_ETIMEOUT). Each watch lists first when its rv is empty: event(ctx,
 * "RESET", NULL), then "ADDED" for each item, then "SYNCED" (NULL): the
 * list is whole (also when it is empty). Then it
 * watches from rv with bookmarks, following rv, and reconnects when the
 * stream ends; when the API says the rv is too old (410 Gone, as an HTTP
 * status or an ERROR event) it lists again. event returns 0 to go on, 1
 * when done, or a negative code (an error in *err) to give up. An event
 * over 16 MiB (KUBE_MAX_LINE) is an error (BERTH_EIO).
 */
typedef int (*kube_event_fn)(void *ctx, const char *type, const berth_node *obj,
			     berth_error **err);
typedef struct kube_watch {
	const char *path;     /* a collection: /apis/batch/v1/namespaces/NS/jobs */
	const char *selector; /* labelSelector; NULL: every object */
	char rv[64];          /* where to go on from; "": list first */
	kube_event_fn event;
	void *ctx;
} kube_watch;
int kube_watch_run(kube *k, kube_watch *w, size_t n, long timeout_ms, berth_error **err);
/* Lists w's collection once, as a watch does before it watches (RESET,
 * then ADDED for each item) and sets w->rv. Returns what the last event
 * returned (1: done), or a negative code. */
int kube_list(kube *k, kube_watch *w, berth_error **err);


/*
 * The error a refused request stands for: the API's Status message
 * verbatim, then each cause (field: message), prefixed by what (e.g.
 * "Job ml-jobs/train-t1"). Maps 401 to BERTH_EAUTH, 403 to BERTH_EFORBIDDEN,
 * 404 to BERTH_ENOTFOUND, 409 to BERTH_ECONFLICT, 422 and 400 to
 * BERTH_EINVALID, anything else to BERTH_EIO.
 */
int kube_status_error(const kube_reply *r, const char *what, berth_error **err);

#endif
