/*
 * routes.c - the handlers of berth serve, one per route of docs/api.md.
 * Each runs its library calls on its worker thread's own backend handle (server.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include "mhd_dl.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server.h"

/* rc = call, a library call on this thread's handle, timed for the store metric */
#define STORE(r, rc, call)                                                                       \
	do {                                                                                     \
		double t0_ = srv_now();                                                          \
		rc = (call);                                                                     \
		metrics_store(srv_now() - t0_);                                                  \
	} while (0)

/* Answers err (and frees it) when rc failed; 0 when it did not. */
static int failed(req *r, int rc, berth_error *err, int *ret)
{
	if (!rc) {
		berth_error_free(err);
		return 0;
	}
	*ret = reply_error(r, err);
	berth_error_free(err);
	return 1;
}

#define JSON_TYPE "application/json; charset=utf-8"

static int reply_text_json(req *r, int status, const char *prefix, char *text, size_t len,
			   const char *suffix);

/* Answers what a library call returned: its error, or no content (out NULL,
 * status 204), or out as type (NULL: JSON), wrapped as {"items": out} when items. */
static int answer(req *r, int rc, berth_error *err, char *out, size_t len, const char *type,
		  bool items)
{
	int ret;
	if (failed(r, rc, err, &ret)) {
		free(out);
		return ret;
	}
	if (!out)
		return reply(r, 204, NULL, NULL, 0);
	if (items)
		return reply_text_json(r, 200, "{\"items\": ", out, len, "}");
	return reply(r, 200, type ? type : JSON_TYPE, out, len);
}

static int reply_text_json(req *r, int status, const char *prefix, char *text, size_t len,
			   const char *suffix)
{
	sbuf b = {0};
	sb_puts(&b, prefix);
	sb_put(&b, text ? text : "[]", text ? len : 2);
	sb_puts(&b, suffix);
	free(text);
	return reply_json(r, status, &b);
}

/* ?file=NAME: the name a spec is read as, in the place of every problem (and so
 * in every line of an answer): at most 255 bytes, no control character (a
 * line break would forge lines of a client's output). dflt without it; NULL
 * when refused (answered 400, *ret). */
static const char *file_arg(req *r, const char *dflt, int *ret)
{
	const char *f = req_arg(r, "file");
	if (!f || !*f)
		return dflt;
	size_t n = strlen(f);
	bool control = false;
	for (const unsigned char *c = (const unsigned char *)f; *c && !control; c++)
		control = *c < 0x20 || *c == 0x7f;
	if (n <= 255 && !control)
		return f;
	*ret = reply_fail(r, 400, "usage", "file: the name of a spec is at most 255 bytes of text "
			  "without control characters (%zu bytes given)", n);
	return NULL;
}

static bool flag_arg(const req *r, const char *name)
{
	const char *v = req_arg(r, name);
	return v && (!strcmp(v, "true") || !strcmp(v, "1") || !*v);
}

/* ---- health, metrics, the document ----------------------------------------------------- */

static int get_healthz(req *r)
{
	int64_t counts[5];
	berth_error *err = NULL;
	int rc;
	STORE(r, rc, berth_run_counts(srv_backend(r->srv), counts, &err));
	berth_error_free(err);
	/* the disk: under its reserve the server takes nothing new (507), so it is not
	 * healthy (503), though it still reads */
	disk_state d;
	srv_disk(r->srv, &d);
	char disk[160], free_s[32], reserve_s[32];
	berth_format_size(free_s, sizeof(free_s), d.free, 1);
	berth_format_size(reserve_s, sizeof(reserve_s), d.reserve, 1);
	if (!d.ok)
		snprintf(disk, sizeof(disk), "unknown: the free space under BERTH_HOME cannot be read: %s",
			 strerror(d.err));
	else if (d.low)
		snprintf(disk, sizeof(disk), "%s free under BERTH_HOME, under the reserve of %s: "
			 "nothing new is accepted", free_s, reserve_s);
	else
		snprintf(disk, sizeof(disk), "ok");
	sbuf b = {0};
	sb_printf(&b, "{\"status\": \"%s\", \"version\": \"%s\", \"store\": \"%s\", \"disk\": ",
		  rc ? "unavailable" : d.low ? "degraded" : "ok", berth_version(),
		  rc ? "unavailable" : "ok");
	sb_json(&b, disk);
	if (d.ok)
		sb_printf(&b, ", \"disk_free\": %lld, \"disk_reserve\": %lld", (long long)d.free,
			  (long long)d.reserve);
	sb_puts(&b, "}");
	return reply_json(r, rc || d.low ? 503 : 200, &b);
}

static int get_metrics(req *r)
{
	/* the runs' gauges name runs: those of the projects the request's token
	 * sees (as GET /api/v1/runs lists them), none without a token; the
	 * existence of a run is not told to who may not see it */
	if (req_authenticate(r))
		return r->status ? MHD_YES : MHD_NO;
	int64_t counts[5];
	berth_error *err = NULL;
	int rc;
	STORE(r, rc, berth_run_counts(srv_backend(r->srv), counts, &err));
	berth_error_free(err);
	if (rc)
		return reply_fail(r, 503, "io", "the store is unavailable");
	const berth_principal *who = r->who;
	char *quota = NULL, *usage = NULL;
	STORE(r, rc, berth_backend_quota_metrics(srv_backend(r->srv), &quota, &err));
	if (!rc)
		STORE(r, rc, berth_backend_usage_metrics(srv_backend(r->srv),
							 who ? (const char *const *)who->projects : NULL,
							 who ? who->nprojects : 0, who && who->all,
							 &usage, &err));
	berth_error_free(err);
	if (rc) {
		free(quota);
		return reply_fail(r, 503, "io", "the store is unavailable");
	}
	sbuf b = {0};
	metrics_format(&b, counts, counts[BERTH_STATE_PENDING]);
	uint64_t commits, fsyncs;
	berth_backend_sync_stats(srv_backend(r->srv), &commits, &fsyncs);
	sb_printf(&b, "# HELP berth_store_commits_total Commits of this server to the store.\n"
		      "# TYPE berth_store_commits_total counter\nberth_store_commits_total %llu\n"
		      "# HELP berth_store_fsyncs_total Fsyncs that made them durable (one for the "
		      "commits of the moment; 0 with BERTH_STORE_SYNC=normal).\n"
		      "# TYPE berth_store_fsyncs_total counter\nberth_store_fsyncs_total %llu\n",
		  (unsigned long long)commits, (unsigned long long)fsyncs);
	sb_puts(&b, quota);
	sb_puts(&b, usage);
	free(quota);
	free(usage);
	if (b.failed) {
		sb_free(&b);
		return reply_fail(r, 500, "out-of-memory", "out of memory");
	}
	size_t len = b.len;
	return reply(r, 200, "text/plain; version=0.0.4; charset=utf-8", b.data, len);
}

static int get_openapi(req *r)
{
	size_t len = openapi_json_len();
	char *copy = malloc(len + 1);
	if (!copy)
		return reply_fail(r, 500, "out-of-memory", "out of memory");
	memcpy(copy, openapi_json, len);
	return reply(r, 200, JSON_TYPE, copy, len);
}

/* ---- the web UI: files compiled into the binary (ui.c) ----------------------------------- */

static int get_ui(req *r)
{
	const char *name = req_param(r, "name");
	const ui_asset *a = ui_find(name ? name : "index.html");
	if (!a)
		return reply_fail(r, 404, "not-found", "no file \"%s\" in the web UI", name);
	/* compressed for a browser that takes it (every one): a third of the bytes */
	bool gz = ui_accepts_gzip(MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
							      MHD_HTTP_HEADER_ACCEPT_ENCODING));
	const char *data = gz ? a->gz : a->data, *end = gz ? a->gz_end : a->end;
	struct MHD_Response *resp =
		MHD_create_response_from_buffer((size_t)(end - data), (void *)data,
						MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, a->type);
	if (gz)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	/* the UI loads nothing from anywhere else, and nothing may frame it */
	MHD_add_response_header(resp, "Content-Security-Policy",
				"default-src 'none'; script-src 'self'; style-src 'self'; "
				"img-src 'self' data:; connect-src 'self'; base-uri 'none'; "
				"form-action 'none'; frame-ancestors 'none'");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	r->status = 200;
	enum MHD_Result ret = MHD_queue_response(r->conn, 200, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* ---- who, projects, profiles, policy --------------------------------------------------- */

static int get_whoami(req *r)
{
	sbuf b = {0};
	sb_puts(&b, "{\"token\": ");
	sb_json(&b, r->who->token_id);
	/* a token of one project: that project's (its overlay of the policy) */
	const char *project = !r->who->all && r->who->nprojects == 1 ? r->who->projects[0] : NULL;
	sb_printf(&b, ", \"role\": \"%s\", \"secret_writers\": \"%s\", \"projects\": [",
		  berth_role_name(r->who->role),
		  berth_role_name(berth_policy_secret_writers(berth_policy_for_project(srv_policy(r->srv), project))));
	if (r->who->all)
		sb_puts(&b, "\"*\"");
	for (size_t i = 0; i < r->who->nprojects; i++) {
		if (i || r->who->all)
			sb_puts(&b, ", ");
		sb_json(&b, r->who->projects[i]);
	}
	sb_puts(&b, "]");
	if (r->who->expires) {
		char when[40];
		berth_format_time(when, sizeof(when), r->who->expires);
		sb_printf(&b, ", \"expires\": \"%s\"", when);
	}
	sb_puts(&b, "}");
	return reply_json(r, 200, &b);
}

static int get_projects(req *r)
{
	char *out = NULL;
	size_t len = 0;
	berth_error *err = NULL;
	int rc;
	STORE(r, rc, berth_project_list(srv_backend(r->srv),
						   (const char *const *)r->who->projects,
						   r->who->nprojects, r->who->all, BERTH_FORMAT_JSON,
						   &out, &len, &err));
	return answer(r, rc, err, out, len, NULL, true);
}

/* The tokens this admin may see (berth_token_list_for): never the token itself. */
static int get_tokens(req *r)
{
	char *out = NULL;
	size_t len = 0;
	berth_error *err = NULL;
	int rc;
	STORE(r, rc, berth_token_list_for(srv_backend(r->srv), r->who, BERTH_FORMAT_JSON, &out, &len,
					  &err));
	return answer(r, rc, err, out, len, NULL, true);
}

/* POST /api/v1/tokens: {"role", "projects": [...], "description", "expires_in" | "expires"};
 * who may make which is berth_token_create_for's. The token is in this answer only. */
static int post_tokens(req *r)
{
	berth_doc *doc = NULL;
	berth_error *err = NULL;
	int ret;
	if (berth_doc_parse(&doc, "body", r->body, r->len, &err)) {
		ret = reply_error(r, err);
		berth_error_free(err);
		return ret;
	}
	berth_error_free(err);
	err = NULL;
	const berth_node *root = berth_doc_root(doc), *pn = berth_node_get(root, "projects");
	static const char *const keys[] = {"role", "projects", "description", "expires_in", "expires"};
	const char *bad = !root || root->kind != BERTH_NODE_MAP ? "the body is not a JSON object" : NULL;
	for (size_t i = 0; !bad && i < root->len; i++) {
		bool known = false;
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			known = known || !strcmp(root->u.pairs[i].key->u.text, keys[k]);
		if (!known)
			bad = "the body has a field that is none of role, projects, description, "
			      "expires_in, expires";
		else if (strcmp(root->u.pairs[i].key->u.text, "projects") &&
			 root->u.pairs[i].value->kind != BERTH_NODE_SCALAR)
			bad = "role, description, expires_in and expires are strings";
	}
	size_t n = !bad && pn ? (pn->kind == BERTH_NODE_SEQ ? pn->len : 1) : 0;
	const char **projects = n ? calloc(n, sizeof(char *)) : NULL;
	for (size_t i = 0; !bad && i < n; i++) {
		const berth_node *p = pn->kind == BERTH_NODE_SEQ ? pn->u.items[i] : pn;
		if (!(projects[i] = berth_node_text(p)) || p->kind != BERTH_NODE_SCALAR)
			bad = "projects is a list of project names (\"*\": every project)";
	}
	if (!bad && n && !projects)
		bad = "out of memory";
	const char *role = berth_node_text(berth_node_get(root, "role"));
	berth_token_new t = {.role = berth_role_parse(role), .projects = projects, .nprojects = n,
			     .description = berth_node_text(berth_node_get(root, "description"))};
	if (!bad && t.role == BERTH_ROLE_NONE)
		bad = "role is one of viewer, user, admin";
	if (bad) {
		ret = reply_fail(r, 422, "invalid", "%s", bad);
		free(projects);
		berth_doc_free(doc);
		return ret;
	}
	char *token = NULL, *id = NULL;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	int rc = berth_token_expiry(berth_node_text(berth_node_get(root, "expires_in")),
				    berth_node_text(berth_node_get(root, "expires")),
				    (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000, &t.expires, &err);
	if (!rc)
		STORE(r, rc, berth_token_create_for(srv_backend(r->srv), r->who, &t, &token, &id, &err));
	if (!failed(r, rc, err, &ret)) {
		sbuf b = {0};
		sb_puts(&b, "{\"id\": ");
		sb_json(&b, id);
		sb_puts(&b, ", \"token\": ");
		sb_json(&b, token);
		sb_printf(&b, ", \"role\": \"%s\", \"projects\": [", berth_role_name(t.role));
		for (size_t i = 0; i < n; i++) {
			sb_puts(&b, i ? ", " : "");
			sb_json(&b, projects[i]);
		}
		sb_puts(&b, "], \"description\": ");
		sb_json(&b, t.description);
		char when[40] = "";
		if (t.expires)
			berth_format_time(when, sizeof(when), t.expires);
		sb_puts(&b, ", \"expires\": ");
		sb_json(&b, t.expires ? when : NULL);
		sb_puts(&b, "}");
		ret = reply_json(r, 201, &b);
	}
	if (token)
		memset(token, 0, strlen(token));
	free(token);
	free(id);
	free(projects);
	berth_doc_free(doc);
	return ret;
}

/* DELETE /api/v1/tokens/{id}: revoked (berth_token_revoke_for: a token this admin may
 * not see answers as an unknown one). */
static int delete_token(req *r)
{
	berth_error *err = NULL;
	int rc;
	STORE(r, rc, berth_token_revoke_for(srv_backend(r->srv), r->who, req_param(r, "id"), &err));
	return answer(r, rc, err, NULL, 0, NULL, false);
}

/* A string field of a small JSON body, or NULL (answered 422). */
static char *body_field(req *r, const char *key, int *ret)
{
	berth_doc *doc = NULL;
	berth_error *err = NULL;
	if (berth_doc_parse(&doc, "body", r->body, r->len, &err)) {
		*ret = reply_error(r, err);
		berth_error_free(err);
		return NULL;
	}
	berth_error_free(err);
	const berth_node *v = berth_node_get(berth_doc_root(doc), key);
	char *s = NULL;
	if (!v || v->kind != BERTH_NODE_SCALAR)
		*ret = reply_fail(r, 422, "missing", "the body needs {\"%s\": \"...\"}", key);
	else if (!(s = malloc(v->len + 1)))
		*ret = reply_fail(r, 500, "out-of-memory", "out of memory");
	else {
		memcpy(s, v->u.text, v->len);
		s[v->len] = 0;
	}
	berth_doc_free(doc);
	return s;
}

static int post_projects(req *r)
{
	int ret = 0;
	char *name = body_field(r, "name", &ret);
	if (!name)
		return ret;
	berth_error *err = NULL;
	int rc;
	STORE(r, rc, berth_project_create(srv_backend(r->srv), name, &err));
	if (failed(r, rc, err, &ret)) {
		free(name);
		return ret;
	}
	sbuf b = {0};
	sb_puts(&b, "{\"name\": ");
	sb_json(&b, name);
	sb_puts(&b, "}");
	free(name);
	return reply_json(r, 201, &b);
}

/*
 * The profiles, defaults and limits a project's runs get: its overlay of the
 * policy (projects.NAME) over the rest. The project is ?project=P (one the
 * token sees), else the token's one project; else the policy's global keys,
 * which hold no project's own profiles.
 */
static int get_profiles(req *r)
{
	char *out = NULL;
	size_t len = 0;
	berth_error *err = NULL;
	const char *project = req_arg(r, "project");
	int ret = 0;
	if (project) {
		int rc = berth_principal_may(r->who, project, BERTH_ROLE_VIEWER, &err);
		if (failed(r, rc, err, &ret))
			return ret;
		err = NULL;
	} else if (!r->who->all && r->who->nprojects == 1) {
		project = r->who->projects[0];
	}
	const berth_policy *pol = berth_policy_for_project(srv_policy(r->srv), project);
	int rc = berth_explain_profiles(pol, BERTH_EXPLAIN_JSON, &out, &len, &err);
	return answer(r, rc, err, out, len, NULL, false);
}

static int get_policy(req *r)
{
	const char *file = berth_policy_file(srv_policy(r->srv));
	sbuf b = {0};
	sb_puts(&b, "{\"file\": ");
	sb_json(&b, file);
	sb_puts(&b, ", \"text\": ");
	char *text = NULL;
	FILE *f = file ? fopen(file, "rb") : NULL;
	if (f) {
		sbuf t = {0};
		char chunk[4096];
		size_t n;
		while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0 && t.len < (4u << 20))
			sb_put(&t, chunk, n);
		fclose(f);
		text = t.data;
	}
	sb_json(&b, text ? text : "");
	free(text);
	sb_puts(&b, "}");
	return reply_json(r, 200, &b);
}

/* ---- runs -------------------------------------------------------------------------- */

static void run_json(sbuf *b, berth_run_info *const *infos, size_t n, bool list)
{
	char *out = NULL;
	size_t len = 0;
	if (berth_run_info_format(infos, n, list, BERTH_FORMAT_JSON, &out, &len, NULL)) {
		b->failed = true;
		return;
	}
	sb_put(b, out, len);
	free(out);
}

static int post_runs(req *r)
{
	const char *project = req_param(r, "project");
	int ret;
	const char *file = file_arg(r, "spec.yaml", &ret);
	if (!file)
		return ret;
	/* who submits, kept with each run: the token's id */
	char who[64];
	if (r->who->token_id)
		snprintf(who, sizeof(who), "token:%s", r->who->token_id);
	else
		snprintf(who, sizeof(who), "anonymous");
	berth_batch_opts o = {.file = file, .project = project, .submitted_by = who};
	berth_batch *batch = NULL;
	berth_error *err = NULL;
	berth_run_info **infos = NULL;
	size_t n = 0;
	/* the parse needs no store; the token must be allowed to submit to the project of every
	 * document before anything of a project is looked up (its secrets, functions,
	 * quota); the plan reads the store without a lock, and the submission holds the
	 * server's, so that two requests never pass a quota on the same usage (it is
	 * read again there, and the batch planned again when it changed) */
	int rc = berth_batch_parse(&batch, r->body, r->len, &o, &err);
	for (size_t i = 0; !rc && i < berth_batch_count(batch); i++)
		rc = berth_principal_may(r->who, berth_batch_project(batch, i), BERTH_ROLE_USER, &err);
	if (!rc)
		STORE(r, rc, berth_batch_plan_parsed(batch, srv_backend(r->srv), &o, &err));
	if (!rc) {
		srv_lock(r->srv);
		STORE(r, rc, berth_batch_submit(batch, &infos, &n, &err));
		srv_unlock(r->srv);
	}
	berth_batch_free(batch);
	if (rc) {
		ret = reply_error(r, err);
		berth_error_free(err);
		return ret;
	}
	/* one run: its record; several: {"items": [...]}; with the warnings of the
	 * request (image not pulled, ...) in "warnings" either way */
	sbuf b = {0};
	run_json(&b, infos, n, n != 1);
	while (b.len && (b.data[b.len - 1] == '\n' || b.data[b.len - 1] == ' '))
		b.data[--b.len] = 0;
	sbuf w = {0};
	if (n != 1) {
		sb_puts(&w, "{\"items\": ");
		sb_put(&w, b.data ? b.data : "[]", b.data ? b.len : 2);
	} else if (b.len && b.data[b.len - 1] == '}')
		sb_put(&w, b.data, b.len - 1);
	else
		w.failed = true;
	sb_puts(&w, ", \"warnings\": ");
	sb_warnings(&w, err);
	sb_puts(&w, "}");
	sb_free(&b);
	b = w;
	berth_run_info_list_free(infos, n);
	r->warnings = err;
	ret = reply_json(r, 201, &b);
	r->warnings = NULL;
	berth_error_free(err);
	return ret;
}

/* A number argument from 0 to max (def when absent); -1 (answered 400) when bad. */
static int64_t num_arg(req *r, const char *name, int64_t def, int64_t max, int *ret)
{
	const char *v = req_arg(r, name);
	char *end;
	if (!v)
		return def;
	errno = 0;
	long long n = strtoll(v, &end, 10);
	if (*end || !*v || errno || n < 0 || n > max) {
		*ret = reply_fail(r, 400, "usage", "%s \"%s\" is not a number from 0 to %lld", name,
				  v, (long long)max);
		return -1;
	}
	return n;
}

/* ?watch=true&rv=N: what changed in the projects after version rv (the list's
 * "rv", or the last answer's), answered as soon as something did, else when
 * timeout (seconds, default 30) is up, the connection suspended meanwhile
 * (stream.c): {"rv", "items" (the runs changed, as they are now), "deleted"
 * (ids)}. 410 when rv is older than the deletions kept: list again. */
static int watch_runs(req *r, const char *const *projects, size_t np)
{
	int ret = 0;
	int64_t since = num_arg(r, "rv", -1, INT64_MAX, &ret);
	int64_t timeout = since < 0 ? -1 : num_arg(r, "timeout", 30, 300, &ret);
	if (ret)
		return ret;
	if (since < 0)
		return reply_fail(r, 400, "usage", "a watch needs rv: the \"rv\" of a list of the runs, "
				  "or of the watch's last answer");
	/* woken by a change (of any project): from the version it saw last, up to
	 * which nothing of its projects changed, not from rv again. Else each wake
	 * read again all that changed since rv, and a busy store (10,000 changes
	 * in its timeout) ended it with 410 though nothing of its projects changed */
	int64_t seen = stream_watch_seen(r);
	if (seen > since)
		since = seen;
	berth_error *err = NULL;
	berth_run_changes c;
	int rc;
	STORE(r, rc, berth_run_changes_since(srv_backend(r->srv), projects, np, since, 500, &c, &err));
	if (failed(r, rc, err, &ret))
		return ret;
	if (!c.n && !c.ndeleted && timeout && !stream_watch_over(r)) {
		seen = c.rv;
		berth_run_changes_free(&c);
		return stream_watch(r, seen, timeout * 1000);
	}
	sbuf b = {0};
	sb_printf(&b, "{\"rv\": \"%lld\", \"items\": ", (long long)c.rv);
	if (c.n)
		run_json(&b, c.runs, c.n, true);
	else
		sb_puts(&b, "[]");
	sb_puts(&b, ", \"deleted\": [");
	for (size_t i = 0; i < c.ndeleted; i++) {
		sb_puts(&b, i ? ", " : "");
		sb_json(&b, c.deleted[i]);
	}
	sb_puts(&b, "]}");
	berth_run_changes_free(&c);
	return reply_json(r, 200, &b);
}

static int get_runs(req *r)
{
	const char *project = req_param(r, "project");
	if (!project)
		project = req_arg(r, "project");
	const char *s = req_arg(r, "state");
	int state = -1;
	if (s && (state = berth_state_parse(s)) < 0)
		return reply_fail(r, 400, "usage",
				  "state \"%s\" is not one of Pending, Running, Succeeded, Failed, "
				  "Stopped", s);
	char *end;
	const char *l = req_arg(r, "limit"), *a = req_arg(r, "after");
	errno = 0;
	long long limit = l ? strtoll(l, &end, 10) : 100;
	if (l && (*end || !*l || errno || limit < 1 || limit > 1000))
		return reply_fail(r, 400, "usage", "limit \"%s\" is not a number from 1 to 1000", l);
	errno = 0;
	long long after = a ? strtoll(a, &end, 10) : 0;
	if (a && (*end || !*a || errno || after < 1))
		return reply_fail(r, 400, "usage", "after \"%s\" is not a cursor from a list", a);
	berth_error *err = NULL;
	int ret;
	if (project && berth_principal_may(r->who, project, BERTH_ROLE_VIEWER, &err)) {
		ret = reply_error(r, err);
		berth_error_free(err);
		return ret;
	}
	const char *const *projects = project ? &project : (const char *const *)r->who->projects;
	size_t np = project ? 1 : r->who->all ? 0 : r->who->nprojects;
	if (!project && !r->who->all && !np)
		return reply_text_json(r, 200, "{\"items\": ", NULL, 0, "}");
	if (flag_arg(r, "watch")) {
		if (s || l || a || req_arg(r, "labelSelector"))
			return reply_fail(r, 400, "usage", "a watch takes rv and timeout, not state, "
					  "labelSelector, limit or after: it tells every change of the "
					  "projects' runs");
		return watch_runs(r, projects, np);
	}
	berth_run_info **infos = NULL;
	size_t n = 0;
	int64_t next = 0, rv = 0;
	int rc;
	/* the version before the page: a watch from it misses nothing after it */
	STORE(r, rc, berth_run_version(srv_backend(r->srv), &rv, &err));
	if (!rc)
		STORE(r, rc, berth_run_page(srv_backend(r->srv), projects, np, state,
					    req_arg(r, "labelSelector"), after, limit, &infos, &n,
					    &next, &err));
	if (failed(r, rc, err, &ret))
		return ret;
	sbuf b = {0};
	sb_printf(&b, "{\"rv\": \"%lld\", \"items\": ", (long long)rv);
	if (n)
		run_json(&b, infos, n, true);
	else
		sb_puts(&b, "[]");
	if (next)
		sb_printf(&b, ", \"next\": \"%lld\"", (long long)next);
	sb_puts(&b, "}");
	berth_run_info_list_free(infos, n);
	return reply_json(r, 200, &b);
}

static int post_validate(req *r)
{
	int ret;
	const char *file = file_arg(r, "spec.yaml", &ret);
	if (!file)
		return ret;
	berth_batch_opts o = {.file = file, .project = req_param(r, "project")};
	berth_batch *batch = NULL;
	berth_error *err = NULL;
	int rc;
	/* the parse needs no store; without a project in the path, the token must see
	 * the project of every document before anything of it is looked up (its
	 * secrets, functions, quota), as for a create */
	rc = berth_batch_parse(&batch, r->body, r->len, &o, &err);
	for (size_t i = 0; !rc && !o.project && i < berth_batch_count(batch); i++)
		rc = berth_principal_may(r->who, berth_batch_project(batch, i), BERTH_ROLE_VIEWER, &err);
	if (!rc)
		STORE(r, rc, berth_batch_plan_parsed(batch, srv_backend(r->srv), &o, &err));
	if (rc) {
		berth_batch_free(batch);
		ret = reply_error(r, err);
		berth_error_free(err);
		return ret;
	}
	sbuf b = {0};
	sb_puts(&b, "{\"problems\": [");
	for (size_t i = 0; i < berth_error_count(err); i++) {
		sb_puts(&b, i ? ", " : "");
		sb_problem(&b, berth_error_get(err, i));
	}
	sb_puts(&b, "], \"runs\": [");
	for (size_t i = 0; i < berth_batch_count(batch); i++) {
		char *out = NULL;
		size_t len = 0;
		if (berth_explain(berth_batch_run(batch, i), err, BERTH_EXPLAIN_JSON, &out, &len, NULL))
			b.failed = true;
		sb_puts(&b, i ? ", " : "");
		sb_put(&b, out ? out : "null", out ? len : 4);
		free(out);
	}
	sb_puts(&b, "]}");
	berth_batch_free(batch);
	r->warnings = err;
	ret = reply_json(r, 200, &b);
	r->warnings = NULL;
	berth_error_free(err);
	return ret;
}

/* A spec's documents as data: the web UI's YAML tab read by berth's own parser. */
static int post_parse(req *r)
{
	int ret;
	const char *file = file_arg(r, "spec.yaml", &ret);
	if (!file)
		return ret;
	char *out = NULL;
	size_t len = 0;
	berth_error *err = NULL;
	int rc = berth_docs_json(file, r->body, r->len, &out, &len, &err);
	return answer(r, rc, err, out, len, NULL, false);
}

static int get_run(req *r)
{
	berth_run_info *info = NULL;
	berth_error *err = NULL;
	int ret, rc;
	STORE(r, rc, berth_backend_get(srv_backend(r->srv), req_param(r, "id"), &info, &err));
	if (failed(r, rc, err, &ret))
		return ret;
	sbuf b = {0};
	run_json(&b, &info, 1, false);
	berth_run_info_free(info);
	return reply_json(r, 200, &b);
}

static int delete_run(req *r)
{
	berth_error *err = NULL;
	int rc;
	STORE(r, rc, berth_run_delete(srv_backend(r->srv), req_param(r, "id"), &err));
	return answer(r, rc, err, NULL, 0, NULL, false);
}

/* ?wait=true: the wait runs on a thread of its own while the connection is suspended
 * (stream.c); the handler is called again when it is over, r->stream set. */
static int stop_run(req *r)
{
	const char *id = req_param(r, "id"), *g = req_arg(r, "grace");
	char *end;
	long grace = g ? strtol(g, &end, 10) : -1;
	if (g && (*end || grace < 0 || grace > 86400))
		return reply_fail(r, 400, "usage", "grace \"%s\" is not a number of seconds", g);
	int64_t timeout_ms = (grace >= 0 ? grace : 30) * 1000 + 15000;
	berth_error *err = NULL;
	berth_run_info *info = NULL;
	int ret, rc;
	if (r->stream) {
		rc = stream_waited(r, &err);
		if (rc == -BERTH_ETIMEOUT)
			return reply_fail(r, berth_code_http_status(BERTH_ETIMEOUT),
					  berth_code_name(BERTH_ETIMEOUT),
					  "run \"%s\" is not finished after %lld ms", id,
					  (long long)timeout_ms);
		if (failed(r, rc, err, &ret))
			return ret;
	} else {
		STORE(r, rc, berth_backend_get(srv_backend(r->srv), id, &info, &err));
		if (failed(r, rc, err, &ret))
			return ret;
		bool was_final = berth_state_final(info->state);
		berth_run_info_free(info);
		info = NULL;
		if (!was_final && flag_arg(r, "wait") && streams_full()) {
			r->retry_after = 5;
			return reply_fail(r, 503, "unavailable",
					  "the server waits for its most runs already (--max-streams): "
					  "nothing was stopped; try again in a few seconds");
		}
		if (!was_final) {
			STORE(r, rc, berth_backend_stop_request(srv_backend(r->srv), id, (int)grace,
								 &err));
			if (failed(r, rc, err, &ret))
				return ret;
			if (flag_arg(r, "wait"))
				return stream_wait(r, id, timeout_ms);
		}
	}
	STORE(r, rc, berth_backend_get(srv_backend(r->srv), id, &info, &err));
	if (failed(r, rc, err, &ret))
		return ret;
	sbuf b = {0};
	run_json(&b, &info, 1, false);
	int status = berth_state_final(info->state) ? 200 : 202;
	berth_run_info_free(info);
	return reply_json(r, status, &b);
}

/* ---- logs: sent as a thread reads them, the connection suspended between (stream.c) ------- */

/* ?NAME=N: digits alone (strtol takes a sign and leading spaces too), up to max;
 * -1 when it is not one */
static long long count_arg(const char *v, long long max)
{
	char *end;
	errno = 0;
	long long n = *v >= '0' && *v <= '9' ? strtoll(v, &end, 10) : -1;
	return n < 0 || errno || *end || n > max ? -1 : n;
}

static int get_logs(req *r)
{
	/* HEAD: the headers a GET would have, and no reader (a HEAD a second must
	 * not take a stream each) */
	if (!strcmp(r->method, "HEAD"))
		return reply(r, 200, "text/plain; charset=utf-8", NULL, 0);
	/* ?rank=N&tail=N&since=DURATION&timestamps=true&follow=true, each checked before
	 * anything streams (an error after the first byte could not be told) */
	const char *id = req_param(r, "id"), *rk = req_arg(r, "rank"), *tl = req_arg(r, "tail"),
		   *sn = req_arg(r, "since");
	berth_log_opts o = {.rank = -1, .follow = flag_arg(r, "follow"),
			    .timestamps = flag_arg(r, "timestamps")};
	if (tl && (o.tail = count_arg(tl, BERTH_LOG_TAIL_MAX)) < 0)
		return reply_fail(r, 400, "usage", "tail: a number of lines, 0 to %d (\"%.32s\" given)",
				  BERTH_LOG_TAIL_MAX, tl);
	berth_error *err = NULL;
	int rc, ret;
	if (sn && berth_duration_parse(sn, &o.since_ms, &err)) {
		ret = reply_fail(r, 400, "usage", "since: %s", berth_error_get(err, 0)->message);
		berth_error_free(err);
		return ret;
	}
	if (rk) {
		if ((o.rank = (int)count_arg(rk, BERTH_WORKERS_MAX - 1)) < 0)
			return reply_fail(r, 400, "usage", "rank: a worker's index, 0 to %d (\"%.32s\" given)",
					  BERTH_WORKERS_MAX - 1, rk);
		/* one worker's log, which is checked to be one before it streams */
		berth_run_info *info = NULL;
		STORE(r, rc, berth_backend_get(srv_backend(r->srv), id, &info, &err));
		if (failed(r, rc, err, &ret))
			return ret;
		err = NULL;
		rc = berth_run_check_rank(info, o.rank, &err);
		berth_run_info_free(info);
		if (failed(r, rc, err, &ret))
			return ret;
	}
	return stream_logs(r, id, &o);
}

static int get_spec(req *r)
{
	berth_run_info *info = NULL;
	berth_error *err = NULL;
	int ret, rc;
	STORE(r, rc, berth_backend_get(srv_backend(r->srv), req_param(r, "id"), &info, &err));
	if (failed(r, rc, err, &ret))
		return ret;
	char *e = info->effective;
	info->effective = NULL;
	berth_run_info_free(info);
	if (!e)
		return reply_fail(r, 404, "not-found", "run \"%s\" has no effective spec recorded",
				  req_param(r, "id"));
	return reply(r, 200, JSON_TYPE, e, strlen(e));
}

static int get_source(req *r)
{
	char *out = NULL;
	size_t len = 0;
	berth_error *err = NULL;
	int rc;
	STORE(r, rc, berth_run_source(srv_backend(r->srv), req_param(r, "id"), &out, &len, &err));
	return answer(r, rc, err, out, len, NULL, false);
}

static int get_manifests(req *r)
{
	const char *f = req_arg(r, "format");
	if (f && strcmp(f, "json") && strcmp(f, "yaml"))
		return reply_fail(r, 400, "usage", "format \"%s\" is not yaml or json", f);
	bool yaml = f && !strcmp(f, "yaml");
	char *out = NULL;
	size_t len = 0;
	berth_error *err = NULL;
	int rc;
	STORE(r, rc, berth_run_manifests(srv_backend(r->srv), req_param(r, "id"),
						    yaml ? BERTH_FORMAT_YAML : BERTH_FORMAT_JSON, &out,
						    &len, &err));
	return answer(r, rc, err, out, len, yaml ? "application/yaml; charset=utf-8" : NULL, false);
}

static int get_events(req *r)
{
	char *out = NULL;
	size_t len = 0;
	berth_error *err = NULL;
	int rc;
	STORE(r, rc, berth_run_events(srv_backend(r->srv), req_param(r, "id"),
						 BERTH_FORMAT_JSON, &out, &len, &err));
	return answer(r, rc, err, out, len, NULL, true);
}

/* ?after=MS: the samples after that time (a page's last "t"), for a chart that follows */
static int get_usage(req *r)
{
	int ret = 0;
	int64_t after = num_arg(r, "after", 0, INT64_MAX, &ret);
	if (ret)
		return ret;
	char *out = NULL;
	size_t len = 0;
	berth_error *err = NULL;
	int rc;
	STORE(r, rc, berth_run_usage(srv_backend(r->srv), req_param(r, "id"), after,
					BERTH_FORMAT_JSON, &out, &len, &err));
	return answer(r, rc, err, out, len, NULL, true);
}

/* ---- functions ------------------------------------------------------------------------- */

static int get_functions(req *r)
{
	char *out = NULL;
	size_t len = 0;
	berth_error *err = NULL;
	int rc;
	STORE(r, rc, berth_function_list(srv_backend(r->srv), req_param(r, "project"),
						    BERTH_FORMAT_JSON, &out, &len, &err));
	return answer(r, rc, err, out, len, NULL, true);
}

static int post_function(req *r)
{
	int ret;
	const char *file = file_arg(r, "function.yaml", &ret);
	if (!file)
		return ret;
	const char *project = req_param(r, "project");
	char *name = NULL, *out = NULL;
	size_t len = 0;
	berth_error *err = NULL;
	double t0 = srv_now();
	int rc = berth_function_put(srv_backend(r->srv), project, file, r->body, r->len, &name, &err);
	int created = rc;
	if (rc >= 0)
		rc = berth_function_get(srv_backend(r->srv), project, name, BERTH_FORMAT_JSON, &out, &len,
					&err);
	metrics_store(srv_now() - t0);
	free(name);
	if (failed(r, rc < 0 ? rc : 0, err, &ret))
		return ret;
	return reply(r, created == 1 ? 201 : 200, JSON_TYPE, out, len);
}

static int get_function(req *r)
{
	char *out = NULL;
	size_t len = 0;
	berth_error *err = NULL;
	int rc;
	STORE(r, rc, berth_function_get(srv_backend(r->srv), req_param(r, "project"),
						   req_param(r, "name"), BERTH_FORMAT_JSON, &out, &len,
						   &err));
	return answer(r, rc, err, out, len, NULL, false);
}

static int delete_function(req *r)
{
	berth_error *err = NULL;
	int rc;
	STORE(r, rc, berth_function_delete(srv_backend(r->srv), req_param(r, "project"),
						      req_param(r, "name"), &err));
	return answer(r, rc, err, NULL, 0, NULL, false);
}

/* ---- secrets --------------------------------------------------------------------------- */

static int get_secrets(req *r)
{
	char **names = NULL;
	size_t n = 0;
	berth_error *err = NULL;
	int ret, rc;
	STORE(r, rc, berth_backend_secret_names(srv_backend(r->srv), req_param(r, "project"),
							   &names, &n, &err));
	if (failed(r, rc, err, &ret))
		return ret;
	sbuf b = {0};
	sb_puts(&b, "{\"items\": [");
	for (size_t i = 0; i < n; i++) {
		sb_puts(&b, i ? ", {\"name\": " : "{\"name\": ");
		sb_json(&b, names[i]);
		sb_puts(&b, "}");
		free(names[i]);
	}
	free(names);
	sb_puts(&b, "]}");
	return reply_json(r, 200, &b);
}

/* The project's quota, its use and headroom: every resource, the quota and free
 * null where the quota does not limit it. */
static int get_quota(req *r)
{
	berth_quota_state q;
	berth_error *err = NULL;
	int ret, rc;
	const char *project = req_param(r, "project");
	STORE(r, rc, berth_backend_quota(srv_backend(r->srv), project, &q, &err));
	if (failed(r, rc, err, &ret))
		return ret;
	sbuf b = {0};
	sb_puts(&b, "{\"project\": ");
	sb_json(&b, project);
	sb_puts(&b, ", \"quota_of\": ");
	if (q.quota_of[0])
		sb_json(&b, q.quota_of);
	else
		sb_puts(&b, "null");
	sb_printf(&b, ", \"waiting\": %lld, \"resources\": [", (long long)q.waiting);
	for (int i = 0; i < 4; i++) {
		const berth_quota_use *u = &q.res[i];
		sb_printf(&b, "%s{\"resource\": \"%s\", \"used\": ", i ? ", " : "", u->resource);
		sb_json(&b, u->used);
		sb_puts(&b, ", \"quota\": ");
		if (u->limited)
			sb_json(&b, u->quota);
		else
			sb_puts(&b, "null");
		sb_puts(&b, ", \"free\": ");
		if (u->limited)
			sb_json(&b, u->free);
		else
			sb_puts(&b, "null");
		sb_puts(&b, "}");
	}
	sb_puts(&b, "]}");
	return reply_json(r, 200, &b);
}

/* Whether the token may set and delete the project's secrets: the role the
 * policy's security.secret_writers names, in that project (the route asks for
 * user at least; another project's token was refused before). 0, or answered. */
static int may_write_secrets(req *r, int *ret)
{
	berth_error *err = NULL;
	const char *project = req_param(r, "project");
	const berth_policy *pol = berth_policy_for_project(srv_policy(r->srv), project);
	int rc = berth_principal_may(r->who, project, berth_policy_secret_writers(pol), &err);
	return failed(r, rc, err, ret);
}

static int put_secret(req *r)
{
	int ret = 0;
	if (may_write_secrets(r, &ret)) {
		explicit_bzero(r->body, r->len); /* a value refused is wiped as one taken */
		return ret;
	}
	char *value = body_field(r, "value", &ret);
	if (!value)
		return ret;
	berth_error *err = NULL;
	int rc;
	STORE(r, rc, berth_backend_secret_set(srv_backend(r->srv), req_param(r, "project"),
						    req_param(r, "name"), value, strlen(value), &err));
	explicit_bzero(value, strlen(value));
	explicit_bzero(r->body, r->len);
	free(value);
	return answer(r, rc, err, NULL, 0, NULL, false);
}

static int delete_secret(req *r)
{
	berth_error *err = NULL;
	int rc, ret;
	if (may_write_secrets(r, &ret))
		return ret;
	STORE(r, rc, berth_backend_secret_delete(srv_backend(r->srv), req_param(r, "project"),
							    req_param(r, "name"), &err));
	return answer(r, rc, err, NULL, 0, NULL, false);
}

/* ---- the table -------------------------------------------------------------------------- */

#define V BERTH_ROLE_VIEWER
#define U BERTH_ROLE_USER
#define A BERTH_ROLE_ADMIN
#define G true /* grows: refused while the data dir is under its reserve */
const route routes[] = {
	{"GET", "/healthz", get_healthz, SCOPE_PUBLIC, 0, "health of the server and its store", 0},
	{"GET", "/metrics", get_metrics, SCOPE_PUBLIC, 0, "Prometheus metrics", 0},
	{"GET", "/api/v1/openapi.json", get_openapi, SCOPE_PUBLIC, 0, "this API's OpenAPI document", 0},
	{"GET", "/", get_ui, SCOPE_PUBLIC, 0, "the web UI", 0},
	{"GET", "/ui/{name}", get_ui, SCOPE_PUBLIC, 0, "the web UI's scripts and styles", 0},
	{"GET", "/api/v1/whoami", get_whoami, SCOPE_ANY, V, "the token's role and projects", 0},
	{"GET", "/api/v1/projects", get_projects, SCOPE_ANY, V, "the projects the token sees", 0},
	{"POST", "/api/v1/projects", post_projects, SCOPE_ALL, A, "create a project", G},
	{"GET", "/api/v1/tokens", get_tokens, SCOPE_ANY, A, "the tokens an admin may see", 0},
	{"POST", "/api/v1/tokens", post_tokens, SCOPE_ANY, A, "create a token (shown once)", G},
	{"DELETE", "/api/v1/tokens/{id}", delete_token, SCOPE_ANY, A, "revoke a token", 0},
	{"GET", "/api/v1/profiles", get_profiles, SCOPE_ANY, V, "hardware profiles", 0},
	{"GET", "/api/v1/policy", get_policy, SCOPE_ALL, A, "the platform policy", 0},
	{"POST", "/api/v1/runs", post_runs, SCOPE_ANY, U, "create runs (project from the spec)", G},
	{"GET", "/api/v1/runs", get_runs, SCOPE_ANY, V, "list runs", 0},
	{"POST", "/api/v1/projects/{project}/runs", post_runs, SCOPE_PROJECT, U, "create runs", G},
	{"GET", "/api/v1/projects/{project}/runs", get_runs, SCOPE_PROJECT, V, "list runs", 0},
	{"POST", "/api/v1/validate", post_validate, SCOPE_ANY, V,
	 "plan runs without creating them (project from the spec)", 0},
	{"POST", "/api/v1/projects/{project}/validate", post_validate, SCOPE_PROJECT, V,
	 "plan runs without creating them", 0},
	{"POST", "/api/v1/parse", post_parse, SCOPE_ANY, V, "a spec's documents as data", 0},
	{"GET", "/api/v1/runs/{id}", get_run, SCOPE_RUN, V, "one run", 0},
	{"DELETE", "/api/v1/runs/{id}", delete_run, SCOPE_RUN, U, "forget a final run", 0},
	{"POST", "/api/v1/runs/{id}/stop", stop_run, SCOPE_RUN, U, "stop a run", 0},
	{"GET", "/api/v1/runs/{id}/logs", get_logs, SCOPE_RUN, V, "a run's output", 0},
	{"GET", "/api/v1/runs/{id}/spec", get_spec, SCOPE_RUN, V, "effective spec with origins", 0},
	{"GET", "/api/v1/runs/{id}/manifests", get_manifests, SCOPE_RUN, V, "Kubernetes objects", 0},
	{"GET", "/api/v1/runs/{id}/source", get_source, SCOPE_RUN, V, "the spec as submitted", 0},
	{"GET", "/api/v1/runs/{id}/events", get_events, SCOPE_RUN, V, "a run's events", 0},
	{"GET", "/api/v1/runs/{id}/usage", get_usage, SCOPE_RUN, V, "a run's use over time", 0},
	{"GET", "/api/v1/projects/{project}/functions", get_functions, SCOPE_PROJECT, V, "functions", 0},
	{"POST", "/api/v1/projects/{project}/functions", post_function, SCOPE_PROJECT, U,
	 "register a function", G},
	{"GET", "/api/v1/projects/{project}/functions/{name}", get_function, SCOPE_PROJECT, V,
	 "one function", 0},
	{"DELETE", "/api/v1/projects/{project}/functions/{name}", delete_function, SCOPE_PROJECT, U,
	 "delete a function", 0},
	{"GET", "/api/v1/projects/{project}/quota", get_quota, SCOPE_PROJECT, V,
	 "the project's quota, its use and headroom", 0},
	{"GET", "/api/v1/projects/{project}/secrets", get_secrets, SCOPE_PROJECT, V, "secret names", 0},
	/* user at least; the handlers ask for the role of security.secret_writers */
	{"PUT", "/api/v1/projects/{project}/secrets/{name}", put_secret, SCOPE_PROJECT, U,
	 "set a secret", G},
	{"DELETE", "/api/v1/projects/{project}/secrets/{name}", delete_secret, SCOPE_PROJECT, U,
	 "delete a secret", 0},
};
const size_t nroutes = sizeof(routes) / sizeof(routes[0]);
