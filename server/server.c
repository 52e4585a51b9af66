/*
 * server.c - berth serve's requests: routing, authentication, answers and
 * errors (server.h, docs/api.md), and the server they share. serve.c starts
 * the libmicrohttpd daemon over them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include "mhd_dl.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>

#include <stdatomic.h>

#include "server.h"

struct server {
	const serve_opts *o;
	/* the policy in force; one a reload replaced is kept (retired) until the
	 * server closes: a request or stream may still read it */
	berth_policy *_Atomic policy;
	berth_policy **retired;
	size_t nretired;
	berth_backend *b;          /* the main thread's: recovery at start, then the reconciler */
	int leading;               /* server_lead's last answer: 1, 0, -1 failed */
	pthread_key_t handle;      /* each worker thread's own backend handle (srv_backend) */
	pthread_mutex_t lock;      /* submissions (srv_lock) */
	size_t max_body;
	/* the data dir's free space: one statvfs a second at most, shared by every
	 * thread under disk_lock (held for that statvfs only, never with lock) */
	pthread_mutex_t disk_lock;
	int64_t disk_reserve;      /* bytes ($BERTH_DISK_RESERVE); -1: the default */
	double disk_at;            /* when disk was read (monotonic); 0: never, or stale */
	disk_state disk;
};

/* ---- answers ------------------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define WARNING_HEADERS 8    /* Berth-Warning headers at most; every warning is in the body */
#define WARNING_HEADER_MAX 400 /* bytes of one, "..." past them */

/* The first warnings of w as Berth-Warning headers, one line each, then one
 * saying how many more there are: all of them fit the daemon's buffer for
 * the headers of an answer, whatever the spec. */
static void warning_headers(struct MHD_Response *resp, const berth_error *w)
{
	size_t shown = 0, more = 0;
	for (size_t i = 0; i < berth_error_count(w); i++) {
		const berth_problem *p = berth_error_get(w, i);
		if (p->severity != BERTH_WARNING)
			continue;
		if (shown == WARNING_HEADERS) {
			more++;
			continue;
		}
		char line[WARNING_HEADER_MAX + 4];
		if (berth_problem_format(p, line, WARNING_HEADER_MAX + 1) > WARNING_HEADER_MAX)
			memcpy(line + WARNING_HEADER_MAX, "...", 4);
		for (char *c = line; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = ' ';
		MHD_add_response_header(resp, "Berth-Warning", line);
		shown++;
	}
	if (more) {
		char line[64];
		snprintf(line, sizeof(line), "%zu more warning%s in the body", more, more == 1 ? "" : "s");
		MHD_add_response_header(resp, "Berth-Warning", line);
	}
}

int reply(req *r, int status, const char *type, char *body, size_t len)
{
	/* what the request wrote is on disk before it is answered (durable.c): its
	 * last commit, if one is not known durable yet */
	berth_backend *b = r->sync_failed ? NULL : pthread_getspecific(r->srv->handle);
	uint64_t seq = b ? berth_backend_sync_take(b) : 0;
	struct MHD_Response *resp =
		MHD_create_response_from_buffer(len, body ? body : (char *)"", body ? MHD_RESPMEM_MUST_FREE
										   : MHD_RESPMEM_PERSISTENT);
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	if (type)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == 401)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"berth\"");
	if (status == 405 && r->allow[0])
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, r->allow);
	if (r->retry_after) {
		char secs[16];
		snprintf(secs, sizeof(secs), "%u", r->retry_after);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, secs);
	}
	warning_headers(resp, r->warnings);
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	r->status = status;
	int held = seq ? durable_hold(r, resp, (unsigned)status, seq) : 0;
	if (held > 0)
		return MHD_YES; /* sent when the commit is on disk (durable_send) */
	if (held < 0) {
		r->held = resp;
		r->sync_failed = true;
		return durable_send(r);
	}
	enum MHD_Result ret = MHD_queue_response(r->conn, (unsigned)status, resp);
	MHD_destroy_response(resp);
	return ret;
}

int reply_json(req *r, int status, sbuf *body)
{
	if (body->failed) {
		sb_free(body);
		return reply_fail(r, 500, "out-of-memory", "out of memory");
	}
	if (!body->data)
		sb_puts(body, "{}");
	if (body->data[body->len - 1] != '\n')
		sb_put(body, "\n", 1);
	size_t len = body->len;
	char *data = body->data;
	memset(body, 0, sizeof(*body));
	return reply(r, status, "application/json; charset=utf-8", data, len);
}

void sb_problem(sbuf *b, const berth_problem *p)
{
	char text[2048];
	berth_problem_format(p, text, sizeof(text));
	sb_puts(b, "{\"code\": ");
	sb_json(b, berth_code_name(p->code));
	sb_printf(b, ", \"severity\": \"%s\"", p->severity == BERTH_WARNING ? "warning" : "error");
	if (p->file) {
		sb_puts(b, ", \"file\": ");
		sb_json(b, p->file);
	}
	if (p->line)
		sb_printf(b, ", \"line\": %u", p->line);
	if (p->column)
		sb_printf(b, ", \"column\": %u", p->column);
	if (p->path) {
		sb_puts(b, ", \"path\": ");
		sb_json(b, p->path);
	}
	sb_puts(b, ", \"message\": ");
	sb_json(b, p->message);
	sb_puts(b, ", \"text\": ");
	sb_json(b, text);
	sb_puts(b, "}");
}

void sb_warnings(sbuf *b, const berth_error *w)
{
	size_t n = 0;
	sb_puts(b, "[");
	for (size_t i = 0; i < berth_error_count(w); i++) {
		const berth_problem *p = berth_error_get(w, i);
		if (p->severity != BERTH_WARNING)
			continue;
		sb_puts(b, n++ ? ", " : "");
		sb_problem(b, p);
	}
	sb_puts(b, "]");
}

static void error_json(sbuf *b, int status, const char *code, const char *message,
		       const berth_error *err)
{
	sb_printf(b, "{\"error\": {\"status\": %d, \"code\": ", status);
	sb_json(b, code);
	sb_puts(b, ", \"message\": ");
	sb_json(b, message);
	/* every problem, where the input was wrong (422, 413) or one names a
	 * place in it (404 a function the spec names, 409 ...): a client shows
	 * them at its own fields, never "FILE:LINE:COL" as text */
	bool placed = false;
	for (size_t i = 0; err && !placed && i < berth_error_count(err); i++)
		placed = berth_error_get(err, i)->file != NULL;
	if (err && berth_error_count(err) &&
	    (status == 422 || status == 413 || (status >= 400 && status < 500 && placed))) {
		sb_puts(b, ", \"problems\": [");
		for (size_t i = 0; i < berth_error_count(err); i++) {
			if (i)
				sb_puts(b, ", ");
			sb_problem(b, berth_error_get(err, i));
		}
		sb_puts(b, "]");
	}
	sb_puts(b, "}}");
}

int reply_fail(req *r, int status, const char *code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sbuf b = {0};
	error_json(&b, status, code, msg, NULL);
	return reply_json(r, status, &b);
}

/* An error the disk being full caused: the store's says so by its code
 * (BERTH_ENOSPC); a file's ENOSPC or EDQUOT reaches berth_error as BERTH_EIO
 * with strerror's text. */
static bool disk_full(const berth_error *err)
{
	static const char *const texts[] = {"No space left on device", "Disk quota exceeded"};
	if (berth_error_code(err) == BERTH_ENOSPC)
		return true;
	for (size_t i = 0; i < berth_error_count(err); i++) {
		const berth_problem *p = berth_error_get(err, i);
		for (size_t k = 0; p->severity == BERTH_ERROR && p->message && k < 2; k++)
			if (strstr(p->message, texts[k]))
				return true;
	}
	return false;
}

int reply_error(req *r, const berth_error *err)
{
	berth_code code = berth_error_code(err);
	if (code == BERTH_OK)
		code = BERTH_EINTERNAL;
	int status = berth_code_http_status(code);
	const char *code_name = berth_code_name(code);
	if (status >= 500 && disk_full(err)) {
		status = 507;
		code_name = "insufficient-storage";
		srv_disk_stale(r->srv); /* the next write looks at the disk again */
	}
	char msg[1024];
	size_t errors = berth_error_errors(err);
	const berth_problem *first = NULL;
	for (size_t i = 0; !first && i < berth_error_count(err); i++)
		if (berth_error_get(err, i)->severity == BERTH_ERROR)
			first = berth_error_get(err, i);
	if (status == 422 && errors > 1)
		snprintf(msg, sizeof(msg), "%zu problems", errors);
	else if (first)
		berth_problem_format(first, msg, sizeof(msg));
	else
		snprintf(msg, sizeof(msg), "internal error");
	sbuf b = {0};
	error_json(&b, status, code_name, msg, err);
	return reply_json(r, status, &b);
}

const char *req_param(const req *r, const char *name)
{
	for (size_t i = 0; i < 3; i++)
		if (r->param[i][0] && !strcmp(r->param[i][0], name))
			return r->param[i][1];
	return NULL;
}

const char *req_arg(const req *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
}

/* A worker thread's handle: opened at its first request, closed when the
 * thread ends (the daemon's stop joins them, before the policy is freed). */
berth_backend *srv_backend(server *s)
{
	berth_backend *b = pthread_getspecific(s->handle);
	const berth_policy *now = srv_policy(s);
	if (b && berth_backend_policy(b) != now) {
		/* reloaded since this thread's last request */
		berth_error *err = NULL;
		if (berth_backend_set_policy(b, now, &err)) {
			berth_error_free(err);
			pthread_setspecific(s->handle, NULL);
			berth_backend_close(b);
			b = NULL; /* opened again with it */
		}
		berth_error_free(err);
	}
	if (b)
		return b;
	berth_backend_opts bo = {.home = srv_home(s), .policy = now, .passive = true,
				 .cached = true, .defer_sync = true, .kubeconfig = s->o->kubeconfig,
				 .context = s->o->context};
	berth_error *err = NULL;
	if (berth_backend_open(&b, s->o->backend, &bo, &err)) {
		berth_error_free(err);
		return NULL;
	}
	berth_error_free(err);
	if (pthread_setspecific(s->handle, b)) {
		berth_backend_close(b);
		return NULL;
	}
	return b;
}

static void close_handle(void *b)
{
	berth_backend_close(b);
}

double srv_now(void)
{
	return now_s();
}

void srv_lock(server *s)
{
	pthread_mutex_lock(&s->lock);
}

void srv_unlock(server *s)
{
	pthread_mutex_unlock(&s->lock);
}

const berth_policy *srv_policy(server *s)
{
	return atomic_load(&s->policy);
}

int server_reload_policy(server *s)
{
	berth_policy *p = NULL;
	berth_error *err = NULL;
	const char *was = berth_policy_file(srv_policy(s));
	if (berth_policy_load(&p, s->o->config, &err)) {
		fprintf(stderr, "berth serve: the policy %s is not reloaded; the one loaded before stays "
				"in force:\n", was ? was : "(built-in)");
		srv_report(err); /* and frees it */
		return -1;
	}
	berth_policy **grown = realloc(s->retired, (s->nretired + 1) * sizeof(*grown));
	berth_error *e2 = NULL;
	if (!grown || berth_backend_set_policy(s->b, p, &e2)) {
		fprintf(stderr, "berth serve: the policy is not reloaded: %s\n",
			grown ? "the backend refused it" : "out of memory");
		if (grown)
			s->retired = grown;
		srv_report(e2);
		berth_error_free(err);
		berth_policy_free(p);
		return -1;
	}
	s->retired = grown;
	srv_report(err); /* its warnings */
	s->retired[s->nretired++] = atomic_exchange(&s->policy, p);
	const char *file = berth_policy_file(p);
	fprintf(stderr, "berth serve: policy %s reloaded\n", file ? file : "(built-in)");
	return 0;
}

const serve_opts *srv_opts(server *s)
{
	return s->o;
}

const char *srv_home(server *s)
{
	return berth_backend_home(s->b);
}

/* ---- the data dir's free space -------------------------------------------------------- */

#define DISK_RESERVE_MAX (64ll << 20) /* the default reserve: 64Mi, or 1% when less */
#define DISK_TTL 1.0                  /* seconds a statvfs is trusted */

void srv_disk(server *s, disk_state *out)
{
	pthread_mutex_lock(&s->disk_lock);
	double now = now_s();
	if (!s->disk_at || now - s->disk_at >= DISK_TTL) {
		struct statvfs st;
		disk_state d = {0};
		if (statvfs(srv_home(s), &st)) {
			d.err = errno ? errno : EIO;
		} else {
			d.ok = true;
			uint64_t unit = st.f_frsize ? st.f_frsize : st.f_bsize;
			uint64_t avail = (uint64_t)st.f_bavail * unit, total = (uint64_t)st.f_blocks * unit;
			d.free = avail > INT64_MAX ? INT64_MAX : (int64_t)avail;
			d.reserve = s->disk_reserve;
			if (d.reserve < 0) {
				uint64_t pct = total / 100;
				d.reserve = pct < (uint64_t)DISK_RESERVE_MAX ? (int64_t)pct : DISK_RESERVE_MAX;
			}
			d.low = d.free < d.reserve;
		}
		s->disk = d;
		s->disk_at = now;
	}
	*out = s->disk;
	pthread_mutex_unlock(&s->disk_lock);
}

void srv_disk_stale(server *s)
{
	pthread_mutex_lock(&s->disk_lock);
	s->disk_at = 0;
	pthread_mutex_unlock(&s->disk_lock);
}

/* 507 (answered) when the data dir is under its reserve: before the store's lock
 * is taken for a write, or the body parsed. */
static int refuse_when_full(req *r)
{
	disk_state d;
	srv_disk(r->srv, &d);
	if (!d.low)
		return 0;
	char free_s[32], reserve_s[32];
	berth_format_size(free_s, sizeof(free_s), d.free, 1);
	berth_format_size(reserve_s, sizeof(reserve_s), d.reserve, 1);
	reply_fail(r, 507, "insufficient-storage",
		   "the data dir %s has %s free, under the reserve of %s: nothing new is accepted "
		   "until space is freed", srv_home(r->srv), free_s, reserve_s);
	return -1;
}

/* ---- routing ------------------------------------------------------------------------- */

/* 1 when url has the shape of rt's path; its {parameters} go into r. */
static int route_match(const route *rt, const char *url, req *r)
{
	const char *p = rt->path, *u = url;
	size_t np = 0, used = 0;
	while (*p && *u) {
		if (*p == '{') {
			const char *close = strchr(p, '}');
			const char *end = strchr(u, '/');
			size_t n = end ? (size_t)(end - u) : strlen(u);
			if (!close || !n || np == 3 || used + n + 1 > sizeof(r->pbuf))
				return 0;
			memcpy(r->pbuf + used, u, n);
			r->pbuf[used + n] = 0;
			r->param[np][1] = r->pbuf + used;
			/* the name, without braces, is kept in rt->path: point at a static copy */
			static const char *const names[] = {"id", "project", "name"};
			r->param[np][0] = NULL;
			for (size_t k = 0; k < 3; k++)
				if (!strncmp(p + 1, names[k], (size_t)(close - p - 1)) &&
				    strlen(names[k]) == (size_t)(close - p - 1))
					r->param[np][0] = names[k];
			np++;
			used += n + 1;
			p = close + 1;
			u += n;
			continue;
		}
		if (*p != *u)
			return 0;
		p++;
		u++;
	}
	/* a trailing slash is the same path */
	if (*u == '/' && !u[1])
		u++;
	return !*p && !*u;
}

static const route *find_route(req *r, bool *path_known)
{
	*path_known = false;
	for (size_t i = 0; i < nroutes; i++) {
		req probe;
		memset(&probe, 0, sizeof(probe));
		if (!route_match(&routes[i], r->url, &probe))
			continue;
		*path_known = true;
		size_t al = strlen(r->allow);
		snprintf(r->allow + al, sizeof(r->allow) - al, "%s%s", al ? ", " : "", routes[i].method);
		if (strcmp(routes[i].method, r->method) &&
		    !(!strcmp(r->method, "HEAD") && !strcmp(routes[i].method, "GET")))
			continue;
		memcpy(r->param, probe.param, sizeof(r->param));
		memcpy(r->pbuf, probe.pbuf, sizeof(r->pbuf));
		/* the names point into r->pbuf now */
		for (size_t k = 0; k < 3; k++)
			if (probe.param[k][1])
				r->param[k][1] = r->pbuf + (probe.param[k][1] - probe.pbuf);
		return &routes[i];
	}
	return NULL;
}

static int authenticate(req *r);

int req_authenticate(req *r)
{
	const char *h = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
						    MHD_HTTP_HEADER_AUTHORIZATION);
	if (r->who || ((!h || !*h) && !r->srv->o->insecure_local))
		return 0;
	return authenticate(r);
}

/* Who makes the request: 401 (answered) when nobody is. */
static int authenticate(req *r)
{
	const char *h = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
						    MHD_HTTP_HEADER_AUTHORIZATION);
	if (!h || !*h) {
		if (r->srv->o->insecure_local) {
			r->who = calloc(1, sizeof(*r->who));
			if (!r->who)
				return reply_fail(r, 500, "out-of-memory", "out of memory") == MHD_YES ? -1 : -2;
			r->who->role = BERTH_ROLE_ADMIN;
			r->who->all = true;
			return 0;
		}
		reply_fail(r, 401, "unauthorized",
			   "this needs a token: Authorization: Bearer TOKEN (berth token create)");
		return -1;
	}
	if (strncasecmp(h, "Bearer ", 7)) {
		reply_fail(r, 401, "unauthorized", "the Authorization header is not \"Bearer TOKEN\"");
		return -1;
	}
	berth_error *err = NULL;
	double t0 = now_s();
	int rc = berth_token_check(srv_backend(r->srv), h + 7, &r->who, &err);
	metrics_store(now_s() - t0);
	if (rc) {
		reply_error(r, err);
		berth_error_free(err);
		return -1;
	}
	return 0;
}

/* The scope's project check; answers 403/404 itself. */
static int authorize(req *r)
{
	const route *rt = r->route;
	berth_error *err = NULL;
	int rc = 0;
	switch (rt->scope) {
	case SCOPE_PUBLIC:
		return 0;
	case SCOPE_ANY:
		/* the handler checks each project; the role is checked here */
		if (r->who->role < rt->need) {
			reply_fail(r, 403, "forbidden", "%s is a %s; this needs the role %s",
				   r->who->token_id ? "this token" : "an anonymous request",
				   berth_role_name(r->who->role), berth_role_name(rt->need));
			return -1;
		}
		break;
	case SCOPE_PROJECT:
		/* a name from the URL is checked before anything is looked up by it */
		rc = berth_project_check(req_param(r, "project"), &err);
		if (!rc)
			rc = berth_principal_may(r->who, req_param(r, "project"), rt->need, &err);
		break;
	case SCOPE_ALL:
		rc = berth_principal_may(r->who, NULL, rt->need, &err);
		break;
	case SCOPE_RUN: {
		berth_run_info *info = NULL;
		double t0 = now_s();
		rc = berth_backend_get(srv_backend(r->srv), req_param(r, "id"), &info, &err);
		metrics_store(now_s() - t0);
		/* a run of a project the token may not see answers as an unknown one
		 * does: its existence is not told */
		bool hidden = !rc && berth_principal_may(r->who, info->project, BERTH_ROLE_VIEWER, NULL);
		if (!rc && !hidden)
			rc = berth_principal_may(r->who, info->project, rt->need, &err);
		berth_run_info_free(info);
		if (hidden) {
			reply_fail(r, 404, berth_code_name(BERTH_ENOTFOUND), "no run \"%s\"",
				   req_param(r, "id"));
			return -1;
		}
		break;
	}
	}
	if (rc) {
		reply_error(r, err);
		berth_error_free(err);
		return -1;
	}
	return 0;
}

/* Counts the headers that say how long a body is (MHD_get_connection_values). */
static enum MHD_Result count_length(void *cls, enum MHD_ValueKind kind, const char *key,
				    const char *value)
{
	int *n = cls;
	(void)kind;
	(void)value;
	if (!strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH))
		n[0]++;
	else if (!strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING))
		n[1]++;
	return MHD_YES;
}

enum MHD_Result server_request(void *cls, struct MHD_Connection *conn, const char *url,
			       const char *method, const char *version, const char *upload,
			       size_t *upload_size, void **state)
{
	server *s = cls;
	req *r = *state;
	if (!r) {
		if (!(r = calloc(1, sizeof(*r))))
			return MHD_NO;
		r->srv = s;
		r->conn = conn;
		r->url = url;
		r->method = method;
		r->start = now_s();
		*state = r;
		/* two lengths, or a length and chunks: what a proxy in front reads as
		 * one request this server could read as two (request smuggling) */
		int lengths[2] = {0, 0};
		MHD_get_connection_values(conn, MHD_HEADER_KIND, count_length, lengths);
		if (lengths[0] > 1 || (lengths[0] && lengths[1]) || lengths[1] > 1)
			return (enum MHD_Result)reply_fail(r, 400, "usage",
							   "the body's length is given more than once "
							   "(Content-Length, Transfer-Encoding)");
		/* a declared length over the cap is refused before it is read */
		const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (cl && strtoull(cl, NULL, 10) > s->max_body) {
			r->too_big = true;
			return (enum MHD_Result)reply_fail(r, 413, "too-big",
							   "the body is over %zu bytes", s->max_body);
		}
		return MHD_YES;
	}
	if (*upload_size) {
		if (!r->too_big && r->len + *upload_size <= s->max_body) {
			char *grown = realloc(r->body, r->len + *upload_size + 1);
			if (!grown)
				return MHD_NO;
			r->body = grown;
			memcpy(r->body + r->len, upload, *upload_size);
			r->len += *upload_size;
			r->body[r->len] = 0;
		} else
			r->too_big = true;
		*upload_size = 0;
		return MHD_YES;
	}
	if (r->held) /* its commit is on disk (durable.c resumed the connection) */
		return (enum MHD_Result)durable_send(r);
	if (r->stream && !r->status) { /* a wait is over (stream.c resumed the connection) */
		if (stream_gone(r))
			return MHD_NO;
		/* a watch tells on at each wake, for minutes: a token revoked (or a
		 * project taken from it) meanwhile is refused at the next one */
		if (stream_watch_seen(r) >= 0 && r->who && r->who->token_id) {
			berth_principal_free(r->who);
			r->who = NULL;
			if (authenticate(r) || authorize(r))
				return r->status ? MHD_YES : MHD_NO;
		}
		return (enum MHD_Result)r->route->fn(r);
	}
	if (r->status)
		return MHD_YES; /* answered already (413 on the declared length) */
	if (r->too_big)
		return (enum MHD_Result)reply_fail(r, 413, "too-big", "the body is over %zu bytes",
						   s->max_body);
	bool known;
	r->route = find_route(r, &known);
	if (!r->route) {
		if (known)
			return (enum MHD_Result)reply_fail(r, 405, "method-not-allowed",
							   "%s is not a method of %s", method, url);
		return (enum MHD_Result)reply_fail(r, 404, "not-found", "no route %s %s", method, url);
	}
	/* the store on this thread's own connection: reads never wait for writers */
	if (!srv_backend(s))
		return (enum MHD_Result)reply_fail(r, 503, "io", "the store of %s cannot be opened",
						   srv_home(s));
	if (r->route->scope != SCOPE_PUBLIC) {
		if (authenticate(r))
			return r->status ? MHD_YES : MHD_NO;
		if (authorize(r))
			return r->status ? MHD_YES : MHD_NO;
	}
	/* after who asks is known (the answer names the data dir), before any write */
	if (r->route->grows && refuse_when_full(r))
		return r->status ? MHD_YES : MHD_NO;
	if (!r->body && !(r->body = calloc(1, 1)))
		return MHD_NO;
	return (enum MHD_Result)r->route->fn(r);
}

void server_completed(void *cls, struct MHD_Connection *conn, void **state,
		      enum MHD_RequestTerminationCode why)
{
	req *r = *state;
	if (!r)
		return;
	stream_end(r);
	if (r->held) /* never sent (the connection ended first) */
		MHD_destroy_response(r->held);
	metrics_request(r->route ? r->route->path : "other", r->method, r->status ? r->status : 499,
			now_s() - r->start);
	berth_principal_free(r->who);
	free(r->body);
	free(r);
	*state = NULL;
}

/* ---- open, close ------------------------------------------------------------------------ */

void srv_report(berth_error *err)
{
	char line[1024];
	for (size_t i = 0; i < berth_error_count(err); i++) {
		berth_problem_format(berth_error_get(err, i), line, sizeof(line));
		fprintf(stderr, "berth serve: %s\n", line);
	}
	berth_error_free(err);
}

int server_open(server **out, const serve_opts *o)
{
	*out = NULL;
	server *s = calloc(1, sizeof(*s));
	if (!s) {
		fprintf(stderr, "berth serve: out of memory\n");
		return 1;
	}
	s->o = o;
	s->leading = 1; /* what a server alone on its store does: said only when it changes */
	s->max_body = o->max_body ? o->max_body : 1u << 20;
	s->disk_reserve = -1;
	const char *reserve = getenv("BERTH_DISK_RESERVE");
	if (reserve && *reserve) {
		berth_quantity q;
		char why[256];
		if (berth_quantity_parse_message(&q, reserve, strlen(reserve), why, sizeof(why)) ||
		    berth_quantity_sign(&q) < 0) {
			fprintf(stderr, "berth serve: BERTH_DISK_RESERVE \"%s\" is not a number of bytes "
					"(0 or more, like 67108864 or 64Mi)%s%s\n", reserve, *why ? ": " : "", why);
			free(s);
			return 2;
		}
		s->disk_reserve = berth_quantity_value(&q);
	}
	berth_error *err = NULL;
	berth_policy *loaded = NULL;
	if (berth_policy_load(&loaded, o->config, &err)) {
		int st = berth_code_exit_status(berth_error_code(err));
		srv_report(err);
		free(s);
		return st ? st : 1;
	}
	atomic_store(&s->policy, loaded);
	srv_report(err);
	err = NULL;
	/* the records are kept by the reconciler of serve_main: GET reads the store */
	berth_backend_opts bo = {.home = o->home, .policy = loaded, .cached = true, .serves = true,
				 .kubeconfig = o->kubeconfig, .context = o->context};
	/* opening recovers: runs whose processes died while no one watched are
	 * marked Failed, and queued runs are started */
	if (berth_backend_open(&s->b, o->backend, &bo, &err)) {
		int st = berth_code_exit_status(berth_error_code(err));
		srv_report(err);
		berth_policy_free(loaded);
		free(s);
		return st ? st : 1;
	}
	srv_report(err); /* warnings: runs whose state could not be read */
	if (pthread_key_create(&s->handle, close_handle)) {
		fprintf(stderr, "berth serve: out of memory\n");
		berth_backend_close(s->b);
		berth_policy_free(loaded);
		free(s);
		return 1;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->disk_lock, NULL);
	*out = s;
	return 0;
}

void server_reconcile(server *s)
{
	berth_error *err = NULL;
	/* on the main handle: SQLite orders its writes with the workers' */
	berth_backend_reconcile(s->b, &err);
	berth_error_free(err);
}

bool server_lead(server *s)
{
	berth_error *err = NULL;
	int rc = berth_backend_lead(s->b, &err);
	int was = s->leading;
	s->leading = rc > 0 ? 1 : rc == 0 ? 0 : -1;
	if (s->leading != was) {
		const berth_problem *p = rc < 0 ? berth_error_get(err, 0) : NULL;
		fprintf(stderr, "berth serve: %s\n",
			rc > 0	   ? "this server leads the reconciling"
			: rc == 0 ? "another server leads the reconciling: this one answers requests"
				  : p ? p->message : "the lead cannot be known");
	}
	berth_error_free(err);
	return rc > 0;
}

void server_check_cluster(server *s)
{
	berth_error *err = NULL;
	char *report = NULL;
	int problems = berth_backend_check(s->b, &report, &err);
	if (problems < 0) {
		const berth_problem *p = berth_error_get(err, 0);
		fprintf(stderr, "berth serve: the cluster could not be checked: %s\n",
			p ? p->message : "unknown");
	}
	/* what is there is no news; what is missing or unknown is */
	for (const char *l = report; l && *l;) {
		const char *end = strchr(l, '\n');
		int len = end ? (int)(end - l) : (int)strlen(l);
		if (strncmp(l, "ok ", 3))
			fprintf(stderr, "berth serve: cluster check: %.*s\n", len, l);
		l = end ? end + 1 : NULL;
	}
	if (problems >= 0)
		fprintf(stderr, "berth serve: cluster check: %d missing (berth cluster check says more)\n", problems);
	free(report);
	berth_error_free(err);
}

void server_close(server *s, bool keep_policy)
{
	if (!s)
		return;
	/* this thread's own handle (the worker threads closed theirs as they ended) */
	berth_backend *own = pthread_getspecific(s->handle);
	pthread_setspecific(s->handle, NULL);
	berth_backend_close(own);
	pthread_key_delete(s->handle);
	berth_backend_close(s->b);
	if (!keep_policy) {
		berth_policy_free(atomic_load(&s->policy));
		for (size_t i = 0; i < s->nretired; i++)
			berth_policy_free(s->retired[i]);
	}
	free(s->retired);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->disk_lock);
	free(s);
}

