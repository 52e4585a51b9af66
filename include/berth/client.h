/*
 * berth/client.h - a client of `berth serve` (docs/api.md) over HTTP.
 *
 * The same operations as the local backend (berth/backend.h), asked of a
 * server: it plans runs with its own policy and keeps them in its store.
 * Records come back as berth_run_info, problems as berth_error, so a
 * program shows them exactly as it shows those of the local backend: a
 * spec refused by the server (422) yields one problem per problem of the
 * reply, with the same code, severity, file, line, column, key path and
 * message; warnings (the `Berth-Warning` headers of a reply) are added to
 * *err as warnings while the call succeeds.
 *
 * An HTTP status >= 400 becomes an error whose code is the reply's
 * `error.code` (a name of berth_code_name(); an unknown name gives
 * BERTH_EARG for a 4xx and BERTH_EINTERNAL for a 5xx) and whose message is
 * the reply's message. A server that cannot be reached gives BERTH_EIO
 * ("cannot reach the berth server at URL: ..."); a reply body over 64 MiB
 * (logs excepted: they stream) BERTH_ETOOBIG.
 *
 * A berth_client holds one connection, kept alive between requests, and is
 * used by one thread at a time. Every fallible function returns 0 or a
 * negative berth_code, with the reason in *err (see berth/error.h: a caller
 * passing a non-NULL err always frees *err, which may hold warnings).
 * Objects returned through out parameters belong to the caller.
 */
#ifndef BERTH_CLIENT_H
#define BERTH_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "berth/backend.h"
#include "berth/error.h"
#include "berth/explain.h"
#include "berth/project.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct berth_client berth_client;

/* Reply bodies larger than this are refused (BERTH_ETOOBIG); logs stream. */
#define BERTH_CLIENT_MAX_REPLY ((size_t)64 << 20)

/*
 * Opens a client of the server at url ("http://HOST:PORT", "https://...",
 * or "HOST:PORT" for http; a path prefix is kept). url NULL: $BERTH_SERVER,
 * and BERTH_EARG when that is unset or empty. token NULL: $BERTH_TOKEN;
 * no token (NULL or empty, and no variable) sends no Authorization header,
 * which a server started with --insecure-local accepts. Contacts nothing:
 * the first request connects. Calls curl_global_init(), which is not
 * thread-safe before libcurl 7.84.
 */
int berth_client_open(berth_client **out, const char *url, const char *token, berth_error **err);

/*
 * How c checks an https:// server's certificate. By default it must be
 * signed by one of the system's CAs, or, when $BERTH_CACERT names a file
 * when c is opened, by one of that file's (PEM): cacert does the same, and
 * NULL leaves it as it is. insecure checks nothing (kubectl's
 * --insecure-skip-tls-verify): anyone on the path may read and change the
 * requests. BERTH_EARG when cacert cannot be read. A certificate that is not
 * trusted fails each request with BERTH_EIO, its problem in the message.
 */
int berth_client_tls(berth_client *c, const char *cacert, bool insecure, berth_error **err);

/* Closes the connection and frees c. NULL is a no-op. */
void berth_client_close(berth_client *c);

/* The server's base URL in use, without a trailing '/'. */
const char *berth_client_url(const berth_client *c);

/*
 * Submits a run spec (text, len bytes: YAML or JSON, one or more
 * documents) as written; the server parses, plans and starts every run or
 * none. project NULL: each run's project is the spec's (default
 * "default"); else the spec must name that project or none. file is the
 * name problems carry (NULL: "spec.yaml"). On success *out receives the
 * new runs (a list of *n records: free with berth_run_info_list_free) and
 * warnings may be added to *err; on refusal every problem is in *err.
 */
int berth_client_submit(berth_client *c, const char *project, const char *file, const char *text,
			size_t len, berth_run_info ***out, size_t *n, berth_error **err);

/* One run's record (BERTH_ENOTFOUND when there is none the token sees). */
int berth_client_get(berth_client *c, const char *id, berth_run_info **out, berth_error **err);

/* Runs, newest first, that f keeps (NULL: all; its project NULL: of every
 * project the token sees), following the server's pages to the end or to
 * f->limit runs. */
int berth_client_list(berth_client *c, const berth_run_filter *f, berth_run_info ***out,
		      size_t *n, berth_error **err);

/* Waits until a run of project (NULL: of every project the token sees)
 * changes after version *rv, or timeout_s seconds pass (the server's watch,
 * GET .../runs?watch=true): *rv becomes the version to wait from next. With
 * *rv < 0, returns at once with the current version. BERTH_EGONE when *rv is
 * too old (list again). */
int berth_client_watch(berth_client *c, const char *project, int64_t *rv, int timeout_s,
		       berth_error **err);

/* Asks the server to stop a run, after grace_s seconds between SIGTERM and
 * SIGKILL (< 0: the server's default). With wait, returns once the run is
 * final; else once the stop is requested. */
int berth_client_stop(berth_client *c, const char *id, int grace_s, bool wait, berth_error **err);

/* Calls write(ctx, data, len) with the run's log as o says (NULL: all of it,
 * at once; see berth_backend_logs), as the bytes arrive; with o->follow,
 * until the run ends. A nonzero return of write stops (and the call returns
 * 0). */
int berth_client_logs(berth_client *c, const char *id, const berth_log_opts *o,
		      berth_log_write write, void *ctx, berth_error **err);

/* Forgets a final run: its record, events and files (DELETE
 * /api/v1/runs/{id}); BERTH_ECONFLICT while it is Pending or Running. */
int berth_client_delete(berth_client *c, const char *id, berth_error **err);

/* A run's events as the server sends them ({"items": [{"time", "kind",
 * "message"}]}), and its effective spec with each value's origin (as
 * `berth explain -o json` writes it, berth_explain_json_format prints it):
 * NUL-terminated JSON, *len bytes; free() it. */
int berth_client_events(berth_client *c, const char *id, char **json, size_t *len,
			berth_error **err);
int berth_client_spec(berth_client *c, const char *id, char **json, size_t *len, berth_error **err);

/*
 * Asks the server to plan a run spec as berth_client_submit would, creating
 * nothing: its policy, the project's secrets and quota, what its backend
 * needs (POST /api/v1/validate, or /api/v1/projects/{project}/validate).
 * project and file as in berth_client_submit. On success *runs receives
 * each run's effective spec as JSON text (n of them; free each and the
 * array) and the warnings are added to *err; a refused spec has every
 * problem in *err.
 */
int berth_client_validate(berth_client *c, const char *project, const char *file, const char *text,
			  size_t len, char ***runs, size_t *n, berth_error **err);

/* The project's secrets (set and delete: an admin of the project, or a user
 * where the server's policy says security.secret_writers: user). A value is sent as a
 * JSON string: it must be UTF-8 text without NUL bytes (BERTH_EARG). A
 * value is never returned: names only (free each and the array). */
int berth_client_secret_set(berth_client *c, const char *project, const char *name,
			    const char *value, size_t len, berth_error **err);
int berth_client_secret_names(berth_client *c, const char *project, char ***names, size_t *n,
			      berth_error **err);
int berth_client_secret_delete(berth_client *c, const char *project, const char *name,
			       berth_error **err);

/* A project's quota, its use and headroom (GET /api/v1/projects/{p}/quota). */
struct berth_quota_state;
int berth_client_quota(berth_client *c, const char *project, struct berth_quota_state *out,
		       berth_error **err);

/* The server's profiles as the JSON it sends (GET /api/v1/profiles),
 * NUL-terminated; free() it. With project: what that project's runs see
 * (its overlay of the policy, ?project=P); NULL: the server's choice (the
 * token's project when it has one). */
int berth_client_profiles(berth_client *c, const char *project, char **json, size_t *len,
			  berth_error **err);

/*
 * The profiles JSON of berth_client_profiles ({"items": [...]} or
 * {"profiles": [...]}) as `berth profiles` prints a local policy's
 * (berth_explain_profiles): a table or YAML; JSON as {"profiles": [...]}.
 * *out is NUL-terminated; free() it.
 */
int berth_client_profiles_format(const char *json, size_t len, berth_explain_format fmt,
				 char **out, size_t *outlen, berth_error **err);

/*
 * Parses the Run JSON of docs/api.md back into records: one Run object, a
 * list of them, or {"items": [...]}. The inverse of berth_run_info_format()
 * with BERTH_FORMAT_JSON for every field that writes: times (ISO-8601 UTC,
 * milliseconds) become Unix ms; cpu ("0.25", "2", "500m") millicores;
 * sizes ("64Mi", "23.4Gi") bytes, rounded up; usage.cpu_seconds
 * nanoseconds. A key left out keeps its default (exit_code -1, 0 or NULL
 * for the rest); unknown keys are ignored. Problems carry the name "the
 * server's reply" with a position and key path. *out is a list of *n
 * records (free with berth_run_info_list_free).
 */
int berth_run_info_parse(const char *json, size_t len, berth_run_info ***out, size_t *n,
			 berth_error **err);

/* Tokens through the server (POST, GET, DELETE /api/v1/tokens): the client's
 * token must be an admin of the new token's projects (berth_token_create_for
 * says which); *token is shown once. */
int berth_client_token_create(berth_client *c, const berth_token_new *t, char **token, char **id,
			      berth_error **err);
/* The tokens the client's token sees, as berth_token_list prints them. */
int berth_client_token_list(berth_client *c, berth_format fmt, char **out, size_t *len,
			    berth_error **err);
int berth_client_token_revoke(berth_client *c, const char *id, berth_error **err);

#ifdef __cplusplus
}
#endif

#endif
