/*
 * server.c - berth serve: HTTP with libmicrohttpd, routing, authentication,
 * answers and errors (server.h, docs/api.md).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include "mhd_dl.h"
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "server.h"

struct server {
	const serve_opts *o;
	berth_policy *policy;
	berth_backend *b;          /* the main thread's: recovery at start, then the reconciler */
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

/* ---- strings ------------------------------------------------------------------------- */

void sb_put(sbuf *b, const char *s, size_t n)
{
	if (b->failed)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *grown = realloc(b->data, cap);
		if (!grown) {
			b->failed = true;
			return;
		}
		b->data = grown;
		b->cap = cap;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = 0;
}

void sb_puts(sbuf *b, const char *s)
{
	sb_put(b, s, strlen(s));
}

void sb_printf(sbuf *b, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->failed = true;
		return;
	}
	if ((size_t)n < sizeof(small)) {
		sb_put(b, small, (size_t)n);
		return;
	}
	char *big = malloc((size_t)n + 1);
	if (!big) {
		b->failed = true;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb_put(b, big, (size_t)n);
	free(big);
}

void sb_json(sbuf *b, const char *s)
{
	if (!s) {
		sb_puts(b, "null");
		return;
	}
	sb_put(b, "\"", 1);
	size_t left = strlen(s);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++, left--) {
		/* JSON is UTF-8: a byte that is not (a path parameter, say) is U+FFFD */
		size_t k = *p < 0x80 ? 1 : berth_utf8_len((const char *)p, left);
		if (!k) {
			sb_puts(b, "\\ufffd");
			continue;
		}
		if (k > 1) {
			sb_put(b, (const char *)p, k);
			p += k - 1;
			left -= k - 1;
			continue;
		}
		if (*p == '"' || *p == '\\') {
			char e[2] = {'\\', (char)*p};
			sb_put(b, e, 2);
		} else if (*p == '\n')
			sb_puts(b, "\\n");
		else if (*p == '\t')
			sb_puts(b, "\\t");
		else if (*p == '\r')
			sb_puts(b, "\\r");
		else if (*p < 0x20 || *p == 0x7f)
			sb_printf(b, "\\u%04x", *p);
		else
			sb_put(b, (const char *)p, 1);
	}
	sb_put(b, "\"", 1);
}

void sb_free(sbuf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

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
	if (err && berth_error_count(err) && (status == 422 || status == 413)) {
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
	if (b)
		return b;
	berth_backend_opts bo = {.home = srv_home(s), .policy = s->policy, .passive = true,
				 .cached = true, .kubeconfig = s->o->kubeconfig,
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
	return s->policy;
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

static bool loopback(const char *listen)
{
	return !strncmp(listen, "127.", 4) || !strncmp(listen, "localhost:", 10) ||
	       !strncmp(listen, "[::1]", 5);
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
	if (r->stream && !r->status) /* a wait is over (stream.c resumed the connection) */
		return stream_gone(r) ? MHD_NO : (enum MHD_Result)r->route->fn(r);
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
	metrics_request(r->route ? r->route->path : "other", r->method, r->status ? r->status : 499,
			now_s() - r->start);
	berth_principal_free(r->who);
	free(r->body);
	free(r);
	*state = NULL;
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

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static void report(berth_error *err)
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
	if (berth_policy_load(&s->policy, o->config, &err)) {
		int st = berth_code_exit_status(berth_error_code(err));
		report(err);
		free(s);
		return st ? st : 1;
	}
	report(err);
	err = NULL;
	/* the records are kept by the reconciler of serve_main: GET reads the store */
	berth_backend_opts bo = {.home = o->home, .policy = s->policy, .cached = true,
				 .kubeconfig = o->kubeconfig, .context = o->context};
	/* opening recovers: runs whose processes died while no one watched are
	 * marked Failed, and queued runs are started */
	if (berth_backend_open(&s->b, o->backend, &bo, &err)) {
		int st = berth_code_exit_status(berth_error_code(err));
		report(err);
		berth_policy_free(s->policy);
		free(s);
		return st ? st : 1;
	}
	report(err); /* warnings: runs whose state could not be read */
	if (pthread_key_create(&s->handle, close_handle)) {
		fprintf(stderr, "berth serve: out of memory\n");
		berth_backend_close(s->b);
		berth_policy_free(s->policy);
		free(s);
		return 1;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->disk_lock, NULL);
	*out = s;
	return 0;
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
	if (!keep_policy)
		berth_policy_free(s->policy);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->disk_lock);
	free(s);
}

int serve_main(const serve_opts *o)
{
	struct sockaddr_storage addr;
	socklen_t alen;
	berth_error *lerr = NULL;
	if (berth_mhd_load(&lerr)) {
		report(lerr);
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
	server *s = NULL;
	int st = server_open(&s, o);
	if (st)
		return st;
	berth_error *err = NULL;
	signal(SIGPIPE, SIG_IGN);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
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
	struct MHD_Daemon *d = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
			MHD_ALLOW_SUSPEND_RESUME | (addr.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
		0, NULL, NULL, server_request, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
		MHD_OPTION_THREAD_POOL_SIZE, threads, MHD_OPTION_NOTIFY_COMPLETED, server_completed, s,
		MHD_OPTION_CONNECTION_TIMEOUT, lim.idle, MHD_OPTION_CONNECTION_LIMIT, lim.conns,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, lim.per_ip, MHD_OPTION_UNESCAPE_CALLBACK, unescape,
		NULL, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY, MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "berth serve: cannot listen on %s: %s\n", o->listen, strerror(errno));
		streams_stop();
		server_close(s, false);
		return 1;
	}
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	fprintf(stderr, "berth serve: listening on %s (port %u), data in %s, backend %s%s\n",
		o->listen, di ? (unsigned)di->port : 0, srv_home(s),
		o->backend ? o->backend : "local",
		o->insecure_local ? ", anonymous requests allowed" : "");
	fprintf(stderr, "berth serve: at most %u connections, %u from one address, closed after %u s "
			"idle; %u logs and waits at once\n", lim.conns, lim.per_ip, lim.idle, lim.streams);
	/* reconcile now and then: a run whose supervisor died is seen without a restart */
	while (!stopping) {
		for (int i = 0; i < 50 && !stopping; i++)
			usleep(100000);
		if (stopping)
			break;
		/* on the main handle: SQLite orders its writes with the workers' */
		berth_backend_reconcile(s->b, &err);
		berth_error_free(err);
		err = NULL;
	}
	fprintf(stderr, "berth serve: stopping\n");
	/* no connection may be suspended when the daemon stops */
	unsigned left = streams_stop();
	MHD_stop_daemon(d); /* its threads end: their handles are closed */
	/* a log thread still reading a quiet run has the policy: it ends with the process */
	server_close(s, left > 0);
	return 0;
}
