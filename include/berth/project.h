/*
 * berth/project.h - what a shared berth keeps beside runs: projects,
 * registered functions, the events of each run, and access tokens with
 * per-project roles. All of it lives in the backend's store.
 *
 * Listings come back formatted (YAML or JSON, as berth_run_info_format),
 * ready to print or to send: a list of maps whose keys are documented at
 * each function. Times are "2026-11-22T13:08:57.039Z".
 */
#ifndef BERTH_PROJECT_H
#define BERTH_PROJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "berth/backend.h"
#include "berth/error.h"
#include "berth/render.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- projects ------------------------------------------------------------------------ */

/* Projects are made by the first run or function in them, by a token naming
 * them, or here. BERTH_ECONFLICT when it exists; BERTH_EINVALID for a name
 * that is not a DNS-1123 label. */
int berth_project_create(berth_backend *b, const char *name, berth_error **err);
/* Whether name can be a project's (a DNS label: it names namespaces and the
 * directories of shared claims): 0, or EINVALID with the reason. A name from
 * outside (a URL, a flag) is checked before anything is looked up by it. */
int berth_project_check(const char *name, berth_error **err);
/* [{name, created}], of the given projects only unless all is set. */
int berth_project_list(berth_backend *b, const char *const *only, size_t n, bool all,
		       berth_format fmt, char **out, size_t *len, berth_error **err);

/* ---- functions ----------------------------------------------------------------------- */

/*
 * Registers (or replaces) a function of project: text is one run spec whose
 * `function` is inline and named; that spec, every field of it, is the
 * function layer of runs that name the function (function: NAME). Invalid
 * text fails with every problem, positions in file. Returns 1 when created,
 * 0 when replaced; *name (may be NULL) receives the function's name.
 */
int berth_function_put(berth_backend *b, const char *project, const char *file, const char *text,
		       size_t len, char **name, berth_error **err);
/* {name, project, spec, created, updated}; BERTH_ENOTFOUND when there is none. */
int berth_function_get(berth_backend *b, const char *project, const char *name, berth_format fmt,
		       char **out, size_t *len, berth_error **err);
/* [{name, project, spec, created, updated}], by name. */
int berth_function_list(berth_backend *b, const char *project, berth_format fmt, char **out,
			size_t *len, berth_error **err);
int berth_function_delete(berth_backend *b, const char *project, const char *name,
			  berth_error **err);

/* ---- runs ---------------------------------------------------------------------------- */

/* [{time, kind, message}] of one run, oldest first. */
int berth_run_events(berth_backend *b, const char *id, berth_format fmt, char **out, size_t *len,
		     berth_error **err);
/* [{time, t (ms), rank, cpu, cpu_milli, mem, mem_bytes, gpu_util (percent),
 * gpu_mem_bytes}] of one run, oldest first, after after_ms (0: all): each
 * worker's use as its supervisor sampled it (CPU over the interval before,
 * memory in use; GPU where nvidia-smi is there). At most BERTH_USAGE_PAGE,
 * ending at a whole t: the rest is after the last one's t. */
#define BERTH_USAGE_PAGE 10000
int berth_run_usage(berth_backend *b, const char *id, int64_t after_ms, berth_format fmt, char **out,
		    size_t *len, berth_error **err);
/* Forgets a final run: its record, events and files. BERTH_ECONFLICT while
 * it is Pending or Running (stop it first). */
int berth_run_delete(berth_backend *b, const char *id, berth_error **err);
/* One page of runs, newest first: of the given projects (n 0: all), in state
 * (< 0: any), with the labels selector asks (NULL or "": any; the syntax of
 * berth_run_filter), submitted before the run with seq `after` (0: from the
 * newest), at most limit. *next receives the seq to pass as `after` for the
 * next page, 0 when this is the last. */
int berth_run_page(berth_backend *b, const char *const *projects, size_t n, int state,
		   const char *selector, int64_t after, int64_t limit, berth_run_info ***out,
		   size_t *count, int64_t *next, berth_error **err);
/* The store's version: it grows with every change to a run (created,
 * changed, deleted), by any process, as Kubernetes' resourceVersion does. */
int berth_run_version(berth_backend *b, int64_t *rv, berth_error **err);
/* What changed in the given projects (n 0: all) after version since. */
typedef struct berth_run_changes {
	berth_run_info **runs;  /* the runs changed, as they are now, oldest change first */
	size_t n;
	char **deleted;         /* the ids of the runs deleted */
	size_t ndeleted;
	int64_t rv;             /* the version to ask from next */
} berth_run_changes;
/* At most limit runs (<= 0: all); BERTH_EGONE when since is older than the
 * deletions the store keeps (list the runs again, then watch from then). */
int berth_run_changes_since(berth_backend *b, const char *const *projects, size_t n,
			    int64_t since, int64_t limit, berth_run_changes *out, berth_error **err);
void berth_run_changes_free(berth_run_changes *c);
/* The Kubernetes objects of a run (as berth render prints them), planned
 * again from the spec it was submitted with, under its id: byte-stable for
 * the same policy and function. */
int berth_run_manifests(berth_backend *b, const char *id, berth_format fmt, char **out,
			size_t *len, berth_error **err);
/* The spec a run was submitted with, as JSON: {"id", "doc" (its document's
 * index in the text), "spec" (the text as written), "fields" (that document
 * as data)}: what a client needs to submit it again. */
int berth_run_source(berth_backend *b, const char *id, char **out, size_t *len, berth_error **err);
/* How many runs are in each state (indexed by berth_state). */
int berth_run_counts(berth_backend *b, int64_t counts[5], berth_error **err);

/* ---- tokens and roles ---------------------------------------------------------------- */

typedef enum berth_role {
	BERTH_ROLE_NONE = 0,
	BERTH_ROLE_VIEWER,  /* reads runs, logs, functions, profiles, secret names */
	BERTH_ROLE_USER,    /* + creates and stops runs, registers functions */
	BERTH_ROLE_ADMIN,   /* + secrets, the policy, projects */
} berth_role;

/* "viewer", "user", "admin"; berth_role_parse returns BERTH_ROLE_NONE for others. */
const char *berth_role_name(berth_role r);
berth_role berth_role_parse(const char *name);

/* The least role that may set and delete a project's secrets: the policy's
 * security.secret_writers, BERTH_ROLE_ADMIN by default; BERTH_ROLE_USER lets
 * each project's users manage their own project's secrets (DigitalHub's
 * project members), never another's. policy NULL: the built-in one. */
berth_role berth_policy_secret_writers(const berth_policy *policy);

/* Who makes a request: a role over some projects, or over all ("*"). */
typedef struct berth_principal {
	char *token_id;     /* NULL: anonymous (berth serve --insecure-local) */
	berth_role role;
	bool all;           /* every project */
	char **projects;
	size_t nprojects;
	int64_t expires;    /* Unix ms the token is refused from; 0: never */
} berth_principal;
void berth_principal_free(berth_principal *p);

/*
 * 0 when p may act with role need on project (NULL: on the server as a
 * whole, which needs all projects); else BERTH_EFORBIDDEN with a message
 * naming what is missing.
 */
int berth_principal_may(const berth_principal *p, const char *project, berth_role need,
			berth_error **err);

/* A token to make. */
#define BERTH_TOKEN_DESCRIPTION_MAX 256 /* bytes */
#define BERTH_TOKEN_PROJECTS_MAX 64
/* Tokens made through the API (by a token) that are live (neither revoked nor
 * expired) or less than a day old: the most one token may have made, and the most
 * a server keeps; one that ended more than 30 days ago is deleted (a leaked admin
 * token cannot fill the store, even by making and revoking in a loop; a command
 * on the server's machine is not capped) */
#define BERTH_TOKENS_MADE_MAX 100
#define BERTH_TOKENS_LIVE_MAX 10000
typedef struct berth_token_new {
	berth_role role;
	const char *const *projects; /* "*": every project */
	size_t nprojects;            /* 1 to BERTH_TOKEN_PROJECTS_MAX */
	const char *description;     /* NULL: none; BERTH_TOKEN_DESCRIPTION_MAX bytes at most */
	int64_t expires;             /* Unix ms it is refused from; 0: never */
} berth_token_new;

/* Creates the token t; *token is the secret, shown once: the store keeps only
 * its hash. *id names it for revoke. */
int berth_token_create(berth_backend *b, const berth_token_new *t, char **token, char **id,
		       berth_error **err);
/* The same, asked by who (a server's request): who must be an admin of every
 * project of t, an admin of every project ("*") for a "*" token or an admin
 * token; else BERTH_EFORBIDDEN saying which. A token that expires makes only
 * tokens that expire by then (BERTH_EARG otherwise); one revoked takes the
 * tokens it made with it (berth_token_revoke). */
int berth_token_create_for(berth_backend *b, const berth_principal *who, const berth_token_new *t,
			   char **token, char **id, berth_error **err);
/* When a token made now expires, from a duration (expires_in: "30d", "12h",
 * "90m", as berth_duration_parse reads) or an RFC 3339 time (expires), one of
 * them or neither (*out 0: never). BERTH_EARG for both, a bad one, or a time
 * that is not in the future. */
int berth_token_expiry(const char *expires_in, const char *expires, int64_t now_ms, int64_t *out,
		       berth_error **err);
/* Who holds token; BERTH_EAUTH when it is unknown ("unknown or revoked token",
 * whether or not it ever was one), and, for a token whose hash is in the
 * store, "token ID expired at TIME" or "token ID revoked at TIME". */
int berth_token_check(berth_backend *b, const char *token, berth_principal **out,
		      berth_error **err);
/* [{id, role, projects, description, created, expires, revoked, last_used}]
 * (never the token; a time only when there is one; last_used is to a minute). */
int berth_token_list(berth_backend *b, berth_format fmt, char **out, size_t *len,
		     berth_error **err);
/* berth_token_list of the tokens who may see (NULL: every one): all of them
 * when who is for every project ("*"); else those whose projects are all
 * among who's, never a "*" token (who would learn of projects it has no
 * access to). A server lists them to an admin this way. */
int berth_token_list_for(berth_backend *b, const berth_principal *who, berth_format fmt,
			 char **out, size_t *len, berth_error **err);
/* Revokes token id: kept in the store, refused from now on with that reason;
 * the tokens it made through a server (their made_by), and theirs, with it.
 * BERTH_ENOTFOUND when there is none, BERTH_ECONFLICT when it is revoked already. */
int berth_token_revoke(berth_backend *b, const char *id, berth_error **err);
/* The same, asked by who: an admin who may see it (berth_token_list_for);
 * one it may not see is BERTH_ENOTFOUND, as an unknown id is. */
int berth_token_revoke_for(berth_backend *b, const berth_principal *who, const char *id,
			   berth_error **err);

#ifdef __cplusplus
}
#endif

#endif
