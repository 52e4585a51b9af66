/*
 * client.c - a client of `berth serve` (berth/client.h) over libcurl: one
 * easy handle, reset between requests so that its connection is kept
 * alive; JSON replies read with the YAML parser (JSON is YAML) into
 * berth_run_info records and berth_error problems.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "base/arena.h"
#include "base/curl_dl.h"
#include "berth/berth.h"
#include "berth/client.h"
#include "render/emit.h"
#include "render/render_internal.h"
#include "service/output.h"
#include "base/internal.h"
#include "base/names.h"
#include "spec/yaml.h"

#define REPLY_NAME "the server's reply"

struct berth_client {
	CURL *h;
	char *url;   /* base, no trailing '/' */
	char *auth;  /* "Authorization: Bearer TOKEN", or NULL */
	char *agent; /* "berth/VERSION" */
	char *cacert; /* the CAs an https:// server's certificate is checked with; NULL: the system's */
	bool insecure; /* no check at all */
	char errbuf[CURL_ERROR_SIZE];
};

/* ---- open, close -------------------------------------------------------------------- */

static int bad_header_text(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	return 0;
}

int berth_client_open(berth_client **out, const char *url, const char *token, berth_error **err)
{
	*out = NULL;
	if (!url)
		url = getenv("BERTH_SERVER");
	if (!url || !*url)
		return berth_fail(err, BERTH_EARG,
				  "no berth server given ($BERTH_SERVER is not set)");
	if (!token)
		token = getenv("BERTH_TOKEN");
	if (token && !*token)
		token = NULL;
	if (bad_header_text(url) || strchr(url, ' '))
		return berth_fail(err, BERTH_EARG, "\"%s\" is not a server URL", url);
	if (token && bad_header_text(token))
		return berth_fail(err, BERTH_EARG, "the token holds a control character");
	int rc = berth_curl_load(err);
	if (rc)
		return rc;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return berth_fail(err, BERTH_EINTERNAL, "libcurl cannot be initialised");

	berth_client *c = berth_calloc(1, sizeof(*c));
	berth_buf b = BERTH_BUF_INIT;
	if (!c)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	const char *scheme = strstr(url, "://");
	if (!scheme)
		berth_buf_puts(&b, "http://");
	else if (!((scheme - url == 4 && !strncmp(url, "http", 4)) ||
		   (scheme - url == 5 && !strncmp(url, "https", 5)))) {
		free(c);
		return berth_fail(err, BERTH_EARG, "\"%s\" is not an http:// or https:// URL", url);
	}
	berth_buf_puts(&b, url);
	while (b.len && b.data[b.len - 1] == '/')
		b.data[--b.len] = '\0';
	c->url = berth_buf_detach(&b);
	if (token) {
		berth_buf_printf(&b, "Authorization: Bearer %s", token);
		c->auth = berth_buf_detach(&b);
	}
	berth_buf_printf(&b, "berth/%s", berth_version());
	c->agent = berth_buf_detach(&b);
	c->h = curl_easy_init();
	if (!c->url || (token && !c->auth) || !c->agent || !c->h) {
		berth_client_close(c);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	const char *ca = getenv("BERTH_CACERT");
	if (ca && *ca && (rc = berth_client_tls(c, ca, false, err))) {
		berth_client_close(c);
		return rc;
	}
	*out = c;
	return 0;
}

int berth_client_tls(berth_client *c, const char *cacert, bool insecure, berth_error **err)
{
	c->insecure = insecure;
	if (!cacert)
		return 0;
	FILE *f = fopen(cacert, "r");
	if (!f)
		return berth_fail(err, BERTH_EARG, "the CA file \"%s\" cannot be read: %s", cacert,
				  strerror(errno));
	fclose(f);
	char *copy = berth_strdup(cacert);
	if (!copy)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	free(c->cacert);
	c->cacert = copy;
	return 0;
}

void berth_client_close(berth_client *c)
{
	if (!c)
		return;
	if (c->h)
		curl_easy_cleanup(c->h);
	free(c->url);
	if (c->auth) {
		memset(c->auth, 0, strlen(c->auth));
		free(c->auth);
	}
	free(c->agent);
	free(c->cacert);
	free(c);
}

const char *berth_client_url(const berth_client *c)
{
	return c->url;
}

/* ---- one request -------------------------------------------------------------------- */

typedef struct request {
	const char *method;       /* GET, POST, PUT, DELETE */
	const char *target;       /* path and query after the base URL, escaped */
	const char *body;         /* NULL: none */
	size_t body_len;
	const char *content_type;
	berth_log_write stream;   /* a 2xx body goes here as it arrives */
	void *ctx;
} request;

typedef struct reply {
	CURL *h;
	long status;
	berth_buf body;
	const request *rq;
	int stopped;              /* the stream's writer asked to stop */
} reply;

static size_t on_body(char *data, size_t size, size_t nmemb, void *userp)
{
	reply *r = userp;
	size_t n = size * nmemb;
	if (!r->status)
		curl_easy_getinfo(r->h, CURLINFO_RESPONSE_CODE, &r->status);
	if (r->rq->stream && r->status < 400) {
		if (r->rq->stream(r->rq->ctx, data, n)) {
			r->stopped = 1;
			return 0;
		}
		return n;
	}
	return berth_buf_append(&r->body, data, n) < 0 ? 0 : n;
}

/* Appends s to b, percent-encoded as one path segment or query value. */
static void put_escaped(berth_buf *b, CURL *h, const char *s)
{
	char *e = curl_easy_escape(h, s, 0);
	if (!e) {
		b->failed = b->failed ? b->failed : -BERTH_ENOMEM;
		return;
	}
	berth_buf_puts(b, e);
	curl_free(e);
}

static int http_error(berth_client *c, reply *r, berth_error **err);

/*
 * Sends rq and reads the reply into r (the body, unless streamed). Returns
 * 0 for a status below 400; else the reply's error in *err. The caller
 * releases r->body.
 */
static int send_request(berth_client *c, const request *rq, reply *r, berth_error **err)
{
	struct curl_slist *hdrs = NULL, *more;
	char ct[128];
	int ret = 0;
	memset(r, 0, sizeof(*r));
	r->h = c->h;
	r->rq = rq;
	r->body.max = BERTH_CLIENT_MAX_REPLY;

	berth_buf url = BERTH_BUF_INIT;
	berth_buf_printf(&url, "%s%s", c->url, rq->target);
	if (url.failed)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	snprintf(ct, sizeof(ct), "Content-Type: %s",
		 rq->content_type ? rq->content_type : "application/json");
	const char *lines[] = {"Accept: application/json", "Expect:", rq->body ? ct : NULL,
			       c->auth};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(lines); i++) {
		if (!lines[i])
			continue;
		if (!(more = curl_slist_append(hdrs, lines[i]))) {
			curl_slist_free_all(hdrs);
			berth_buf_release(&url);
			return berth_fail(err, BERTH_ENOMEM, "out of memory");
		}
		hdrs = more;
	}

	CURL *h = c->h;
	curl_easy_reset(h); /* keeps the live connection */
	c->errbuf[0] = '\0';
	curl_easy_setopt(h, CURLOPT_URL, url.data);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf);
	curl_easy_setopt(h, CURLOPT_USERAGENT, c->agent);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
	if (c->cacert)
		curl_easy_setopt(h, CURLOPT_CAINFO, c->cacert);
	if (c->insecure) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (!rq->body && !strcmp(rq->method, "DELETE")) {
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "DELETE");
	} else if (rq->body || strcmp(rq->method, "GET")) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, rq->body ? rq->body : "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->body_len);
		if (strcmp(rq->method, "POST"))
			curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, rq->method);
	}

	CURLcode rc = curl_easy_perform(h);
	curl_slist_free_all(hdrs);
	if (!r->status)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	if (rc == CURLE_WRITE_ERROR && r->stopped) {
		ret = 0;
	} else if (rc == CURLE_WRITE_ERROR && r->body.failed == -BERTH_ETOOBIG) {
		ret = berth_fail(err, BERTH_ETOOBIG,
				 "the reply of the berth server at %s is over %zu MiB", c->url,
				 BERTH_CLIENT_MAX_REPLY >> 20);
	} else if (rc == CURLE_WRITE_ERROR && r->body.failed) {
		ret = berth_fail(err, BERTH_ENOMEM, "out of memory");
	} else if (rc != CURLE_OK) {
		const char *why = c->errbuf[0] ? c->errbuf : curl_easy_strerror(rc);
		if (r->status)
			ret = berth_fail(err, BERTH_EIO,
					 "the connection to the berth server at %s broke: %s",
					 c->url, why);
		else if (rc == CURLE_PEER_FAILED_VERIFICATION)
			ret = berth_fail(err, BERTH_EIO,
					 "the certificate of the berth server at %s is refused: %s "
					 "(checked with %s%s)", c->url, why,
					 c->cacert ? "the CAs of " : "this system's CAs; a private CA is "
					 "given with $BERTH_CACERT or --cacert FILE",
					 c->cacert ? c->cacert : "");
		else
			ret = berth_fail(err, BERTH_EIO, "cannot reach the berth server at %s: %s",
					 c->url, why);
	} else if (r->status >= 400) {
		ret = http_error(c, r, err);
	} else if (r->status < 200 || r->status >= 300) {
		ret = berth_fail(err, BERTH_EIO, "the berth server at %s answered HTTP %ld", c->url,
				 r->status);
	}
	berth_buf_release(&url);
	if (ret < 0)
		berth_buf_release(&r->body);
	return ret;
}

/* The Berth-Warning headers of the last reply, as warnings in *err. Each is
 * a problem as berth_problem_format writes it ("FILE:LINE:COL: warning: PATH:
 * message", or "warning: message"), or a bare message. */
static void header_warnings(berth_client *c, berth_error **err)
{
	struct curl_header *hd;
	for (size_t i = 0;
	     curl_easy_header(c->h, "Berth-Warning", i, CURLH_HEADER, -1, &hd) == CURLHE_OK; i++) {
		const char *v = hd->value, *mark = strstr(v, ": warning: ");
		berth_where w = {NULL, 0, 0, NULL};
		char *file = NULL;
		if (mark) {
			/* FILE:LINE:COL before the mark, or FILE:LINE */
			const char *p = mark, *colon[2] = {NULL, NULL};
			int k = 0;
			while (p > v && k < 2) {
				const char *q = p;
				while (q > v && q[-1] >= '0' && q[-1] <= '9')
					q--;
				if (q == p || q == v || q[-1] != ':')
					break;
				colon[k++] = q - 1;
				p = q - 1;
			}
			if (k && (file = berth_strndup(v, (size_t)(p - v)))) {
				w.file = file;
				w.line = (unsigned)strtoul(colon[k - 1] + 1, NULL, 10);
				w.column = k == 2 ? (unsigned)strtoul(colon[0] + 1, NULL, 10) : 0;
				v = mark + strlen(": warning: ");
			}
		}
		if (!w.file && !strncmp(v, "warning: ", 9))
			v += 9;
		berth_problem_add(err, BERTH_EINVALID, BERTH_WARNING, w.file ? &w : NULL, "%s", v);
		free(file);
		if (hd->amount <= i + 1)
			break;
	}
}

/* ---- JSON replies ---------------------------------------------------------------------- */

static int parse_json(berth_arena *arena, const char *json, size_t len, const berth_node **root,
		      berth_error **err)
{
	return berth_json_root(arena, REPLY_NAME, json, len, root, err);
}

static berth_code code_of(const char *name, long status)
{
	for (int i = 0; name && i < 256; i++) {
		const char *known = berth_code_name((berth_code)i);
		if (!strcmp(known, "unknown"))
			break;
		if (!strcmp(known, name))
			return (berth_code)i;
	}
	switch (status) {
	case 401: return BERTH_EAUTH;
	case 403: return BERTH_EFORBIDDEN;
	case 404: return BERTH_ENOTFOUND;
	case 409: return BERTH_ECONFLICT;
	case 413: return BERTH_ETOOBIG;
	case 504: return BERTH_ETIMEOUT;
	default: return status < 500 ? BERTH_EARG : BERTH_EINTERNAL;
	}
}

static unsigned uint_of(const berth_node *n)
{
	const char *s = berth_node_text(n);
	if (!s)
		return 0;
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	return *end || v > 0xffffffffUL ? 0 : (unsigned)v;
}

/* A reply with status >= 400 as an error: its problems, else its message. */
static int http_error(berth_client *c, reply *r, berth_error **err)
{
	berth_arena *arena = berth_arena_new();
	const berth_node *root = NULL, *e = NULL;
	berth_error *perr = NULL;
	if (!arena)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	if (r->body.len && parse_json(arena, r->body.data, r->body.len, &root, &perr) == 0)
		e = berth_node_get(root, "error");
	berth_error_free(perr);
	const char *name = berth_node_text(berth_node_get(e, "code"));
	const char *msg = berth_node_text(berth_node_get(e, "message"));
	berth_code code = code_of(name, r->status);
	const berth_node *probs = berth_node_get(e, "problems");
	int ret = 0;
	for (size_t i = 0; probs && probs->kind == BERTH_NODE_SEQ && i < probs->len; i++) {
		const berth_node *p = probs->u.items[i];
		const char *sev = berth_node_text(berth_node_get(p, "severity"));
		const char *m = berth_node_text(berth_node_get(p, "message"));
		berth_where w = {berth_node_text(berth_node_get(p, "file")),
				 uint_of(berth_node_get(p, "line")),
				 uint_of(berth_node_get(p, "column")),
				 berth_node_text(berth_node_get(p, "path"))};
		if (!m && !(m = berth_node_text(berth_node_get(p, "text"))))
			continue;
		berth_code pc = code_of(berth_node_text(berth_node_get(p, "code")), r->status);
		berth_severity ps = sev && !strcmp(sev, "warning") ? BERTH_WARNING : BERTH_ERROR;
		int r2 = berth_problem_add(err, pc, ps, &w, "%s", m);
		if (r2 < 0 && !ret)
			ret = r2;
	}
	if (!ret) {
		if (msg)
			ret = berth_fail(err, code, "%s", msg);
		else
			ret = berth_fail(err, code, "the berth server at %s answered HTTP %ld",
					 c->url, r->status);
	}
	berth_arena_free(arena);
	return ret < 0 ? ret : -BERTH_EINTERNAL;
}

/* ---- runs from JSON --------------------------------------------------------------------- */

typedef enum ftype { F_STR, F_I64, F_INT, F_BOOL, F_TIME, F_CPU, F_SIZE, F_STATE, F_NS, F_LABELS } ftype;

/* The keys of a Run (docs/api.md), as berth_run_info_format writes them. */
static const struct field {
	const char *key; /* dotted path */
	ftype type;
	size_t off;
	int required;
} fields[] = {
	{"id", F_STR, offsetof(berth_run_info, id), 1},
	{"name", F_STR, offsetof(berth_run_info, name), 0},
	{"project", F_STR, offsetof(berth_run_info, project), 0},
	{"backend", F_STR, offsetof(berth_run_info, backend), 0},
	{"state", F_STATE, offsetof(berth_run_info, state), 1},
	{"reason", F_STR, offsetof(berth_run_info, reason), 0},
	{"action", F_STR, offsetof(berth_run_info, action), 0},
	{"profile", F_STR, offsetof(berth_run_info, profile), 0},
	{"image", F_STR, offsetof(berth_run_info, image), 0},
	{"priority_class", F_STR, offsetof(berth_run_info, priority_class), 0},
	{"priority", F_I64, offsetof(berth_run_info, priority), 0},
	{"created", F_TIME, offsetof(berth_run_info, created), 0},
	{"started", F_TIME, offsetof(berth_run_info, started), 0},
	{"finished", F_TIME, offsetof(berth_run_info, finished), 0},
	{"resources.requests.cpu", F_CPU, offsetof(berth_run_info, cpu_milli), 0},
	{"resources.requests.mem", F_SIZE, offsetof(berth_run_info, mem), 0},
	{"resources.requests.gpu", F_SIZE, offsetof(berth_run_info, gpus), 0},
	{"resources.requests.disk", F_SIZE, offsetof(berth_run_info, disk), 0},
	{"resources.limits.cpu", F_CPU, offsetof(berth_run_info, cpu_limit_milli), 0},
	{"resources.limits.mem", F_SIZE, offsetof(berth_run_info, mem_limit), 0},
	{"gpu_ids", F_STR, offsetof(berth_run_info, gpu_ids), 0},
	{"exit_code", F_INT, offsetof(berth_run_info, exit_code), 0},
	{"signal", F_INT, offsetof(berth_run_info, signal), 0},
	{"oom_killed", F_BOOL, offsetof(berth_run_info, oom_killed), 0},
	{"attempts", F_INT, offsetof(berth_run_info, attempts), 0},
	{"usage.cpu_seconds", F_NS, offsetof(berth_run_info, cpu_usage_ns), 0},
	{"usage.mem_peak_bytes", F_I64, offsetof(berth_run_info, mem_peak), 0},
	{"enforcement", F_STR, offsetof(berth_run_info, enforcement), 0},
	{"target", F_STR, offsetof(berth_run_info, target), 0},
	{"log", F_STR, offsetof(berth_run_info, log_path), 0},
	{"effective", F_STR, offsetof(berth_run_info, effective), 0},
	{"labels", F_LABELS, offsetof(berth_run_info, labels), 0},
};

/* The value at a dotted key path of map m, or NULL. */
static const berth_node *lookup(const berth_node *m, const char *path)
{
	char key[64];
	while (m && *path) {
		const char *dot = strchr(path, '.');
		size_t n = dot ? (size_t)(dot - path) : strlen(path);
		snprintf(key, sizeof(key), "%.*s", (int)n, path);
		m = berth_node_get(m, key);
		path += n + (dot != NULL);
	}
	return m;
}

/* "2026-11-22T13:08:57.039Z" (fraction optional, Z or +HH:MM), whole -> Unix ms. */
static int parse_time(const char *s, int64_t *ms)
{
	size_t used = 0, n = strlen(s);
	return berth_time_parse(s, n, ms, &used) || used != n ? -1 : 0;
}

/* {"key": "value", ...} as the record keeps labels: "key=value,key=value" */
static int labels_value(char **out, const berth_node *v, const berth_where *w, berth_error **err)
{
	if (v->kind != BERTH_NODE_MAP)
		return berth_problem_add(err, BERTH_ETYPE, BERTH_ERROR, w, "expected a map, not %s",
					 berth_node_kind_name(v));
	berth_buf b = BERTH_BUF_INIT;
	for (size_t i = 0; i < v->len; i++) {
		const char *k = berth_node_text(v->u.pairs[i].key);
		const char *val = berth_node_text(v->u.pairs[i].value);
		if (!k || !val || berth_check_qualified_name(k) || (*val && berth_check_label_value(val))) {
			berth_buf_release(&b);
			return berth_problem_add(err, BERTH_EINVALID, BERTH_ERROR, w,
						 "\"%s\" is not a label", k ? k : "");
		}
		berth_buf_printf(&b, "%s%s=%s", i ? "," : "", k, val);
	}
	if (b.failed) {
		berth_buf_release(&b);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	free(*out);
	*out = v->len ? berth_buf_detach(&b) : NULL;
	return 0;
}

static int field_value(berth_run_info *info, const struct field *f, const berth_node *v,
		       const berth_where *w, berth_error **err)
{
	char *base = (char *)info + f->off;
	if (f->type == F_LABELS)
		return labels_value((char **)base, v, w, err);
	const char *s = berth_node_text(v);
	char msg[256];
	if (!s && v && v->kind == BERTH_NODE_SCALAR) /* null: left out */
		return f->required ? berth_problem_add(err, BERTH_EMISSING, BERTH_ERROR, w,
						       "must not be null") : 0;
	if (!s)
		return berth_problem_add(err, BERTH_ETYPE, BERTH_ERROR, w,
					 "expected a scalar, not %s", berth_node_kind_name(v));
	switch (f->type) {
	case F_STR: {
		char *copy = berth_strndup(s, v->len);
		if (!copy)
			return berth_fail(err, BERTH_ENOMEM, "out of memory");
		free(*(char **)base);
		*(char **)base = copy;
		return 0;
	}
	case F_I64:
	case F_INT: {
		char *end;
		errno = 0;
		long long n = strtoll(s, &end, 10);
		if (v->type != BERTH_SCALAR_INT || *end || end == s || errno ||
		    (f->type == F_INT && (n < INT32_MIN || n > INT32_MAX)))
			return berth_problem_add(err, BERTH_ETYPE, BERTH_ERROR, w,
						 "expected an integer, not \"%s\"", s);
		if (f->type == F_INT)
			*(int *)base = (int)n;
		else
			*(int64_t *)base = n;
		return 0;
	}
	case F_BOOL:
		if (v->type != BERTH_SCALAR_BOOL)
			return berth_problem_add(err, BERTH_ETYPE, BERTH_ERROR, w,
						 "expected true or false, not \"%s\"", s);
		*(bool *)base = s[0] == 't' || s[0] == 'T';
		return 0;
	case F_TIME:
		if (parse_time(s, (int64_t *)base) < 0)
			return berth_problem_add(err, BERTH_EINVALID, BERTH_ERROR, w,
						 "\"%s\" is not an ISO-8601 UTC time", s);
		return 0;
	case F_STATE: {
		int st = berth_state_parse(s);
		if (st < 0)
			return berth_problem_add(err, BERTH_EINVALID, BERTH_ERROR, w,
						 "\"%s\" is not a run state", s);
		*(berth_state *)base = (berth_state)st;
		return 0;
	}
	case F_CPU:
	case F_SIZE:
	case F_NS: {
		berth_quantity q;
		if (berth_quantity_parse_message(&q, s, v->len, msg, sizeof(msg)) < 0)
			return berth_problem_add(err, BERTH_EQUANTITY, BERTH_ERROR, w, "%s", msg);
		if (f->type == F_CPU)
			*(int64_t *)base = berth_quantity_milli(&q);
		else if (f->type == F_SIZE)
			*(int64_t *)base = berth_quantity_value(&q);
		else if (q.units > INT64_MAX / 1000000000 - 1 || q.units < 0)
			return berth_problem_add(err, BERTH_ERANGE, BERTH_ERROR, w,
						 "\"%s\" is out of range", s);
		else
			*(int64_t *)base = q.units * 1000000000 + q.nanos;
		return 0;
	}
	case F_LABELS: /* above */
		break;
	}
	return 0;
}

static int run_from_node(const berth_node *n, const char *at, berth_run_info **out,
			 berth_error **err)
{
	char path[160];
	berth_where w = {REPLY_NAME, n->pos.line, n->pos.column, at};
	*out = NULL;
	if (n->kind != BERTH_NODE_MAP)
		return berth_problem_add(err, BERTH_ETYPE, BERTH_ERROR, &w,
					 "expected a run (a map), not %s", berth_node_kind_name(n));
	berth_run_info *info = berth_calloc(1, sizeof(*info));
	if (!info)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	info->exit_code = -1;
	int ret = 0;
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(fields) && ret != -BERTH_ENOMEM; i++) {
		const berth_node *v = lookup(n, fields[i].key);
		snprintf(path, sizeof(path), "%s%s%s", at ? at : "", at ? "." : "", fields[i].key);
		if (!v) {
			if (fields[i].required) {
				w.path = path;
				int r = berth_problem_add(err, BERTH_EMISSING, BERTH_ERROR, &w,
							  "is missing");
				ret = ret ? ret : r;
			}
			continue;
		}
		berth_where vw = {REPLY_NAME, v->pos.line, v->pos.column, path};
		int r = field_value(info, &fields[i], v, &vw, err);
		ret = ret && r != -BERTH_ENOMEM ? ret : r;
	}
	if (ret < 0) {
		berth_run_info_free(info);
		return ret;
	}
	*out = info;
	return 0;
}

/* Runs of a reply (one Run, a list, or {"items": [...], "next": ...}); *next
 * (arena memory; may be NULL) receives the cursor of the next page. */
static int runs_from_json(const char *json, size_t len, berth_run_info ***out, size_t *n,
			  char **next, berth_error **err)
{
	const berth_node *root, *items;
	berth_run_info **list = NULL;
	size_t count = 0;
	int ret;
	*out = NULL;
	*n = 0;
	if (next)
		*next = NULL;
	berth_arena *arena = berth_arena_new();
	if (!arena)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	if ((ret = parse_json(arena, json, len, &root, err)) < 0)
		goto out;
	items = root->kind == BERTH_NODE_SEQ ? root : berth_node_get(root, "items");
	if (items && items->kind != BERTH_NODE_SEQ) {
		berth_where w = {REPLY_NAME, items->pos.line, items->pos.column, "items"};
		ret = berth_problem_add(err, BERTH_ETYPE, BERTH_ERROR, &w,
					"expected a list, not %s", berth_node_kind_name(items));
		goto out;
	}
	if (items && root != items && next) {
		const char *cursor = berth_node_text(berth_node_get(root, "next"));
		if (cursor && *cursor && !(*next = berth_strdup(cursor))) {
			ret = berth_fail(err, BERTH_ENOMEM, "out of memory");
			goto out;
		}
	}
	count = items ? items->len : 1;
	if (!(list = berth_calloc(count, sizeof(*list)))) {
		ret = berth_fail(err, BERTH_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < count; i++) {
		char at[48];
		snprintf(at, sizeof(at), "%s[%zu]", root == items ? "" : "items", i);
		const berth_node *it = items ? items->u.items[i] : root;
		int r = run_from_node(it, items ? at : NULL, &list[i], err);
		if (r < 0)
			ret = r;
		if (r == -BERTH_ENOMEM)
			break;
	}
	if (ret < 0)
		goto out;
	*out = list;
	*n = count;
	list = NULL;
out:
	if (list)
		berth_run_info_list_free(list, count);
	if (ret < 0 && next) {
		free(*next);
		*next = NULL;
	}
	berth_arena_free(arena);
	return ret;
}

int berth_run_info_parse(const char *json, size_t len, berth_run_info ***out, size_t *n,
			 berth_error **err)
{
	return runs_from_json(json, len, out, n, NULL, err);
}

/* ---- the API -------------------------------------------------------------------------- */

static int nomem_target(berth_buf *t, berth_error **err)
{
	if (!t->failed)
		return 0;
	berth_buf_release(t);
	return berth_fail(err, BERTH_ENOMEM, "out of memory");
}

/* POST of a spec text (as written) to /api/v1/projects/PROJECT/ROUTE, or to
 * /api/v1/ROUTE without a project, named file in problems; the reply in *r
 * (its body for the caller to release). */
static int post_spec(berth_client *c, const char *route, const char *project, const char *file,
		     const char *text, size_t len, reply *r, berth_error **err)
{
	berth_buf t = BERTH_BUF_INIT;
	int ret;
	if (project) {
		berth_buf_puts(&t, "/api/v1/projects/");
		put_escaped(&t, c->h, project);
		berth_buf_printf(&t, "/%s?file=", route);
	} else {
		berth_buf_printf(&t, "/api/v1/%s?file=", route);
	}
	put_escaped(&t, c->h, file ? file : "spec.yaml");
	if ((ret = nomem_target(&t, err)))
		return ret;
	request rq = {"POST", t.data, text, len, "application/yaml", NULL, NULL};
	ret = send_request(c, &rq, r, err);
	berth_buf_release(&t);
	return ret;
}

int berth_client_submit(berth_client *c, const char *project, const char *file, const char *text,
			size_t len, berth_run_info ***out, size_t *n, berth_error **err)
{
	reply r;
	*out = NULL;
	*n = 0;
	int ret = post_spec(c, "runs", project, file, text, len, &r, err);
	if (ret < 0)
		return ret;
	ret = runs_from_json(r.body.data ? r.body.data : "", r.body.len, out, n, NULL, err);
	berth_buf_release(&r.body);
	if (ret == 0)
		header_warnings(c, err);
	return ret;
}

static int run_target(berth_client *c, berth_buf *t, const char *id, const char *tail,
		      berth_error **err)
{
	if (!id || !*id)
		return berth_fail(err, BERTH_EARG, "no run id given");
	berth_buf_puts(t, "/api/v1/runs/");
	put_escaped(t, c->h, id);
	berth_buf_puts(t, tail);
	return nomem_target(t, err);
}

int berth_client_get(berth_client *c, const char *id, berth_run_info **out, berth_error **err)
{
	berth_buf t = BERTH_BUF_INIT;
	berth_run_info **list = NULL;
	size_t n = 0;
	reply r;
	int ret;
	*out = NULL;
	if ((ret = run_target(c, &t, id, "", err)))
		return ret;
	request rq = {"GET", t.data, NULL, 0, NULL, NULL, NULL};
	ret = send_request(c, &rq, &r, err);
	berth_buf_release(&t);
	if (ret < 0)
		return ret;
	ret = runs_from_json(r.body.data ? r.body.data : "", r.body.len, &list, &n, NULL, err);
	berth_buf_release(&r.body);
	if (ret < 0)
		return ret;
	if (n != 1) {
		berth_run_info_list_free(list, n);
		return berth_fail(err, BERTH_EINTERNAL, "%s holds %zu runs, not one", REPLY_NAME,
				  n);
	}
	*out = list[0];
	free(list);
	return 0;
}

/* Every run of a list, page by page with the cursor each page gives (each
 * page costs the server the same, however deep): pages of 1,000, the most a
 * server gives, so that 40,000 runs are 40 requests, not 400. */
int berth_client_watch(berth_client *c, const char *project, int64_t *rv, int timeout_s,
		       berth_error **err)
{
	berth_buf t = BERTH_BUF_INIT;
	if (*rv < 0) /* a list's rv: its version now */
		berth_buf_puts(&t, "/api/v1/runs?limit=1");
	else
		berth_buf_printf(&t, "/api/v1/runs?watch=true&rv=%lld&timeout=%d", (long long)*rv,
				 timeout_s);
	if (project) {
		berth_buf_puts(&t, "&project=");
		put_escaped(&t, c->h, project);
	}
	int ret = nomem_target(&t, err);
	reply r;
	if (!ret) {
		request rq = {"GET", t.data, NULL, 0, NULL, NULL, NULL};
		ret = send_request(c, &rq, &r, err);
	}
	berth_buf_release(&t);
	if (ret < 0)
		return ret;
	berth_arena *a = berth_arena_new();
	const berth_node *root = NULL;
	ret = a ? parse_json(a, r.body.data ? r.body.data : "", r.body.len, &root, err)
		: berth_fail(err, BERTH_ENOMEM, "out of memory");
	const char *v = ret ? NULL : berth_node_text(lookup(root, "rv"));
	char *end = NULL;
	long long n = v ? strtoll(v, &end, 10) : -1;
	if (!ret && (!v || *end || n < 0))
		ret = berth_fail(err, BERTH_EIO, "the server's answer has no version (\"rv\"): is it an "
				 "older berth?");
	if (!ret)
		*rv = n;
	berth_arena_free(a);
	berth_buf_release(&r.body);
	return ret;
}

int berth_client_list(berth_client *c, const berth_run_filter *f, berth_run_info ***out,
		      size_t *n, berth_error **err)
{
	static const berth_run_filter every = BERTH_RUN_FILTER_ALL;
	berth_run_info **all = NULL;
	size_t count = 0, cap = 0;
	char *after = NULL;
	int ret = 0;
	*out = NULL;
	*n = 0;
	if (!f)
		f = &every;
	if (f->state >= 0 && berth_state_parse(berth_state_name((berth_state)f->state)) < 0)
		return berth_fail(err, BERTH_EARG, "%d is not a run state", f->state);
	for (int page = 0;; page++) {
		berth_buf t = BERTH_BUF_INIT;
		berth_run_info **list;
		size_t got;
		char *next;
		reply r;
		/* the last page asks for what is left of the limit */
		int64_t left = f->limit > 0 ? f->limit - (int64_t)count : 1000;
		berth_buf_printf(&t, "/api/v1/runs?limit=%lld", (long long)(left < 1000 ? left : 1000));
		if (f->project) {
			berth_buf_puts(&t, "&project=");
			put_escaped(&t, c->h, f->project);
		}
		if (f->state >= 0)
			berth_buf_printf(&t, "&state=%s", berth_state_name((berth_state)f->state));
		if (f->selector && *f->selector) {
			berth_buf_puts(&t, "&labelSelector=");
			put_escaped(&t, c->h, f->selector);
		}
		if (after) {
			berth_buf_puts(&t, "&after=");
			put_escaped(&t, c->h, after);
		}
		if ((ret = nomem_target(&t, err)))
			break;
		request rq = {"GET", t.data, NULL, 0, NULL, NULL, NULL};
		ret = send_request(c, &rq, &r, err);
		berth_buf_release(&t);
		if (ret < 0)
			break;
		ret = runs_from_json(r.body.data ? r.body.data : "", r.body.len, &list, &got, &next,
				     err);
		berth_buf_release(&r.body);
		if (ret < 0)
			break;
		if (count + got > cap) {
			size_t want = cap * 2 > count + got ? cap * 2 : count + got;
			berth_run_info **grown = berth_realloc(all, want * sizeof(*all));
			if (!grown) {
				berth_run_info_list_free(list, got);
				free(next);
				ret = berth_fail(err, BERTH_ENOMEM, "out of memory");
				break;
			}
			all = grown;
			cap = want;
		}
		if (got) /* an empty page: no list to copy to (a selector that holds none) */
			memcpy(all + count, list, got * sizeof(*all));
		count += got;
		free(list);
		/* a cursor that does not move, or an empty page, ends the walk */
		int same = next && after && !strcmp(next, after);
		free(after);
		after = next;
		if (!after || same || !got || (f->limit > 0 && (int64_t)count >= f->limit))
			break;
	}
	free(after);
	if (ret < 0) {
		berth_run_info_list_free(all, count);
		return ret;
	}
	for (; f->limit > 0 && (int64_t)count > f->limit; count--)
		berth_run_info_free(all[count - 1]);
	if (!all && !(all = berth_calloc(1, sizeof(*all))))
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	*out = all;
	*n = count;
	return 0;
}

int berth_client_stop(berth_client *c, const char *id, int grace_s, bool wait, berth_error **err)
{
	berth_buf t = BERTH_BUF_INIT;
	reply r;
	int ret;
	berth_buf_puts(&t, "/api/v1/runs/");
	put_escaped(&t, c->h, id ? id : "");
	berth_buf_puts(&t, "/stop");
	if (grace_s >= 0)
		berth_buf_printf(&t, "?grace=%d%s", grace_s, wait ? "&wait=true" : "");
	else if (wait)
		berth_buf_puts(&t, "?wait=true");
	if (!id || !*id) {
		berth_buf_release(&t);
		return berth_fail(err, BERTH_EARG, "no run id given");
	}
	if ((ret = nomem_target(&t, err)))
		return ret;
	request rq = {"POST", t.data, NULL, 0, NULL, NULL, NULL};
	ret = send_request(c, &rq, &r, err);
	berth_buf_release(&t);
	berth_buf_release(&r.body);
	return ret;
}

/* METHOD /api/v1/runs/{id}TAIL without a body; what the reply holds goes to
 * stream (NULL: dropped). */
static int run_call(berth_client *c, const char *method, const char *id, const char *tail,
		    berth_log_write stream, void *ctx, berth_error **err)
{
	berth_buf t = BERTH_BUF_INIT;
	reply r;
	int ret = run_target(c, &t, id, tail, err);
	if (ret)
		return ret;
	request rq = {method, t.data, NULL, 0, NULL, stream, ctx};
	ret = send_request(c, &rq, &r, err);
	berth_buf_release(&t);
	berth_buf_release(&r.body);
	return ret;
}

int berth_client_logs(berth_client *c, const char *id, const berth_log_opts *o,
		      berth_log_write write, void *ctx, berth_error **err)
{
	int ret;
	if (o && (o->tail < 0 || o->tail > BERTH_LOG_TAIL_MAX || o->since_ms < 0 ||
		  o->since_ms > BERTH_DURATION_MAX_MS))
		return berth_fail(err, BERTH_EARG, "tail or since out of range (berth_log_opts)");
	/* ?follow=true&rank=N&tail=N&since=Nms&timestamps=true: what is not asked is not sent */
	berth_buf q = BERTH_BUF_INIT;
	if (o && o->follow)
		berth_buf_puts(&q, "&follow=true");
	if (o && o->rank >= 0)
		berth_buf_printf(&q, "&rank=%d", o->rank);
	if (o && o->tail > 0)
		berth_buf_printf(&q, "&tail=%lld", (long long)o->tail);
	if (o && o->since_ms > 0)
		berth_buf_printf(&q, "&since=%lldms", (long long)o->since_ms);
	if (o && o->timestamps)
		berth_buf_puts(&q, "&timestamps=true");
	if (q.len)
		q.data[0] = '?';
	berth_buf tail = BERTH_BUF_INIT;
	berth_buf_printf(&tail, "/logs%s", q.len ? q.data : "");
	berth_buf_release(&q);
	if (tail.failed) {
		berth_buf_release(&tail);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	ret = run_call(c, "GET", id, tail.data, write, ctx, err);
	berth_buf_release(&tail);
	return ret;
}

int berth_client_delete(berth_client *c, const char *id, berth_error **err)
{
	return run_call(c, "DELETE", id, "", NULL, NULL, err);
}

/* A GET of target whose body is handed over as it is: NUL-terminated, *len bytes. */
static int get_body(berth_client *c, const char *target, char **out, size_t *len, berth_error **err)
{
	reply r;
	*out = NULL;
	*len = 0;
	request rq = {"GET", target, NULL, 0, NULL, NULL, NULL};
	int ret = send_request(c, &rq, &r, err);
	if (ret < 0)
		return ret;
	*len = r.body.len;
	berth_buf_puts(&r.body, ""); /* an empty body is "" too */
	if (r.body.failed || !(*out = berth_buf_detach(&r.body))) {
		berth_buf_release(&r.body);
		*len = 0;
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	return 0;
}

/* GET /api/v1/runs/{id}TAIL, the body as it is */
static int get_run_body(berth_client *c, const char *id, const char *tail, char **out, size_t *len,
			berth_error **err)
{
	berth_buf t = BERTH_BUF_INIT;
	*out = NULL;
	*len = 0;
	int ret = run_target(c, &t, id, tail, err);
	if (!ret)
		ret = get_body(c, t.data, out, len, err);
	berth_buf_release(&t);
	return ret;
}

int berth_client_events(berth_client *c, const char *id, char **json, size_t *len, berth_error **err)
{
	return get_run_body(c, id, "/events", json, len, err);
}

int berth_client_spec(berth_client *c, const char *id, char **json, size_t *len, berth_error **err)
{
	return get_run_body(c, id, "/spec", json, len, err);
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int berth_client_validate(berth_client *c, const char *project, const char *file, const char *text,
			  size_t len, char ***runs, size_t *n, berth_error **err)
{
	reply r;
	*runs = NULL;
	*n = 0;
	int ret = post_spec(c, "validate", project, file, text, len, &r, err);
	if (ret < 0)
		return ret;
	/* {"problems": [warnings], "runs": [effective spec...]}: each run back as JSON text */
	const berth_node *root, *list = NULL;
	char **out = NULL;
	size_t count = 0;
	berth_arena *arena = berth_arena_new();
	if (!arena)
		ret = berth_fail(err, BERTH_ENOMEM, "out of memory");
	else if (!(ret = parse_json(arena, r.body.data ? r.body.data : "", r.body.len, &root, err)) &&
		 (!(list = berth_node_get(root, "runs")) || list->kind != BERTH_NODE_SEQ))
		ret = berth_fail(err, BERTH_ETYPE, "%s has no list of runs", REPLY_NAME);
	if (!ret && !(out = berth_calloc(list->len + 1, sizeof(*out))))
		ret = berth_fail(err, BERTH_ENOMEM, "out of memory");
	for (size_t i = 0; !ret && i < list->len; i++) {
		obuild ob = {.arena = arena};
		onode *doc = o_root(&ob, O_SEQ);
		o_copy_typed(&ob, doc, NULL, list->u.items[i]);
		berth_buf j = BERTH_BUF_INIT;
		if (!ob.failed && doc->first)
			emit_json(&j, doc->first, 0, 1);
		berth_buf_puts(&j, "\n");
		if (ob.failed || j.failed || !(out[count] = berth_buf_detach(&j))) {
			berth_buf_release(&j);
			ret = berth_fail(err, BERTH_ENOMEM, "out of memory");
		} else
			count++;
	}
	berth_arena_free(arena);
	berth_buf_release(&r.body);
	if (ret < 0) {
		free_names(out, count);
		return ret;
	}
	header_warnings(c, err);
	*runs = out;
	*n = count;
	return 0;
}

static int secret_target(berth_client *c, berth_buf *t, const char *project, const char *name,
			 berth_error **err)
{
	if (!project || !*project)
		return berth_fail(err, BERTH_EARG, "no project given");
	berth_buf_puts(t, "/api/v1/projects/");
	put_escaped(t, c->h, project);
	berth_buf_puts(t, "/secrets");
	if (name) {
		if (!*name)
			return berth_fail(err, BERTH_EARG, "no secret name given");
		berth_buf_puts(t, "/");
		put_escaped(t, c->h, name);
	}
	return nomem_target(t, err);
}

int berth_client_secret_set(berth_client *c, const char *project, const char *name,
			    const char *value, size_t len, berth_error **err)
{
	berth_buf t = BERTH_BUF_INIT, body = BERTH_BUF_INIT;
	reply r;
	int ret;
	if ((ret = secret_target(c, &t, project, name, err))) {
		berth_buf_release(&t);
		return ret;
	}
	berth_buf_puts(&body, "{\"value\": \"");
	for (size_t i = 0; i < len;) {
		const unsigned char *s = (const unsigned char *)value + i;
		size_t k = berth_utf8_len((const char *)s, len - i);
		if (!k) {
			ret = berth_fail(err, BERTH_EARG,
					 "the value of secret \"%s\" is not UTF-8 text without NUL "
					 "bytes (byte %zu): the server takes text", name, i);
			goto out;
		}
		if (*s == '"' || *s == '\\')
			berth_buf_printf(&body, "\\%c", *s);
		else if (*s < 0x20)
			berth_buf_printf(&body, "\\u%04x", *s);
		else
			berth_buf_append(&body, s, k);
		i += k;
	}
	berth_buf_puts(&body, "\"}");
	if (body.failed) {
		ret = berth_fail(err, BERTH_ENOMEM, "out of memory");
		goto out;
	}
	request rq = {"PUT", t.data, body.data, body.len, "application/json", NULL, NULL};
	ret = send_request(c, &rq, &r, err);
	berth_buf_release(&r.body);
out:
	if (body.data)
		memset(body.data, 0, body.cap);
	berth_buf_release(&body);
	berth_buf_release(&t);
	return ret;
}

/* Appends the names of one page ([{"name"}...] or {"items": [...]}). */
static int names_from_json(const char *json, size_t len, char ***names, size_t *n,
			   berth_error **err)
{
	const berth_node *root, *items;
	int ret;
	berth_arena *arena = berth_arena_new();
	if (!arena)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	if ((ret = parse_json(arena, json, len, &root, err)) < 0)
		goto out;
	items = root->kind == BERTH_NODE_SEQ ? root : berth_node_get(root, "items");
	if (!items || items->kind != BERTH_NODE_SEQ) {
		ret = berth_fail(err, BERTH_ETYPE, "%s is not a list of secrets", REPLY_NAME);
		goto out;
	}
	char **grown = berth_realloc(*names, (*n + items->len + 1) * sizeof(**names));
	if (!grown) {
		ret = berth_fail(err, BERTH_ENOMEM, "out of memory");
		goto out;
	}
	*names = grown;
	for (size_t i = 0; i < items->len; i++) {
		const berth_node *it = items->u.items[i];
		const char *s = it->kind == BERTH_NODE_MAP ? berth_node_text(berth_node_get(it, "name"))
							    : berth_node_text(it);
		if (!s)
			continue;
		if (!((*names)[*n] = berth_strdup(s))) {
			ret = berth_fail(err, BERTH_ENOMEM, "out of memory");
			goto out;
		}
		(*n)++;
	}
out:
	berth_arena_free(arena);
	return ret;
}

int berth_client_secret_names(berth_client *c, const char *project, char ***names, size_t *n,
			      berth_error **err)
{
	char **all = NULL;
	size_t count = 0;
	*names = NULL;
	*n = 0;
	/* the server answers every name at once: a project's secrets are few */
	berth_buf t = BERTH_BUF_INIT;
	reply r;
	int ret = secret_target(c, &t, project, NULL, err);
	if (!ret) {
		request rq = {"GET", t.data, NULL, 0, NULL, NULL, NULL};
		ret = send_request(c, &rq, &r, err);
	}
	berth_buf_release(&t);
	if (ret >= 0) {
		ret = names_from_json(r.body.data ? r.body.data : "", r.body.len, &all, &count, err);
		berth_buf_release(&r.body);
	}
	if (ret < 0) {
		free_names(all, count);
		return ret;
	}
	if (!all && !(all = berth_calloc(1, sizeof(*all))))
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	*names = all;
	*n = count;
	return 0;
}

int berth_client_secret_delete(berth_client *c, const char *project, const char *name,
			       berth_error **err)
{
	berth_buf t = BERTH_BUF_INIT;
	reply r;
	int ret;
	if ((ret = secret_target(c, &t, project, name, err))) {
		berth_buf_release(&t);
		return ret;
	}
	request rq = {"DELETE", t.data, NULL, 0, NULL, NULL, NULL};
	ret = send_request(c, &rq, &r, err);
	berth_buf_release(&t);
	berth_buf_release(&r.body);
	return ret;
}

int berth_client_profiles(berth_client *c, const char *project, char **json, size_t *len,
			  berth_error **err)
{
	if (!project)
		return get_body(c, "/api/v1/profiles", json, len, err);
	berth_buf t = BERTH_BUF_INIT;
	berth_buf_puts(&t, "/api/v1/profiles?project=");
	put_escaped(&t, c->h, project);
	int ret = nomem_target(&t, err);
	if (!ret)
		ret = get_body(c, t.data, json, len, err);
	berth_buf_release(&t);
	return ret;
}

static void copy_text(char *dst, size_t len, const berth_node *n)
{
	const char *s = n && n->kind == BERTH_NODE_SCALAR ? berth_node_text(n) : NULL;
	snprintf(dst, len, "%s", s && strcmp(s, "null") ? s : "");
}

int berth_client_quota(berth_client *c, const char *project, berth_quota_state *out,
		       berth_error **err)
{
	memset(out, 0, sizeof(*out));
	berth_buf t = BERTH_BUF_INIT;
	reply r;
	if (!project || !*project)
		return berth_fail(err, BERTH_EARG, "no project given");
	berth_buf_puts(&t, "/api/v1/projects/");
	put_escaped(&t, c->h, project);
	berth_buf_puts(&t, "/quota");
	int ret = nomem_target(&t, err);
	if (ret) {
		berth_buf_release(&t);
		return ret;
	}
	request rq = {"GET", t.data, NULL, 0, NULL, NULL, NULL};
	ret = send_request(c, &rq, &r, err);
	berth_buf_release(&t);
	if (ret < 0)
		return ret;
	const berth_node *root, *items;
	berth_arena *arena = berth_arena_new();
	if (!arena)
		ret = berth_fail(err, BERTH_ENOMEM, "out of memory");
	else if ((ret = parse_json(arena, r.body.data ? r.body.data : "", r.body.len, &root, err)) >= 0) {
		ret = 0;
		items = root->kind == BERTH_NODE_MAP ? berth_node_get(root, "resources") : NULL;
		if (!items || items->kind != BERTH_NODE_SEQ) {
			ret = berth_fail(err, BERTH_ETYPE, "%s is not a quota", REPLY_NAME);
		} else {
			copy_text(out->quota_of, sizeof(out->quota_of), berth_node_get(root, "quota_of"));
			const berth_node *w = berth_node_get(root, "waiting");
			out->waiting = w && berth_node_text(w) ? strtoll(berth_node_text(w), NULL, 10) : 0;
			static const char *const names[4] = {"cpu", "mem", "gpu", "runs"};
			for (size_t i = 0; i < items->len && i < 4; i++) {
				const berth_node *it = items->u.items[i];
				berth_quota_use *u = &out->res[i];
				u->resource = names[i];
				if (it->kind != BERTH_NODE_MAP)
					continue;
				copy_text(u->used, sizeof(u->used), berth_node_get(it, "used"));
				copy_text(u->quota, sizeof(u->quota), berth_node_get(it, "quota"));
				copy_text(u->free, sizeof(u->free), berth_node_get(it, "free"));
				u->limited = u->quota[0] != 0;
			}
		}
	}
	berth_arena_free(arena);
	berth_buf_release(&r.body);
	return ret;
}

/* ---- profiles as berth profiles prints them ------------------------------------------- */

int berth_client_profiles_format(const char *json, size_t len, berth_explain_format fmt,
				 char **out, size_t *outlen, berth_error **err)
{
	const berth_node *root, *items;
	berth_buf buf = BERTH_BUF_INIT;
	int ret;
	*out = NULL;
	*outlen = 0;
	obuild b = {.arena = berth_arena_new()};
	if (!b.arena)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	if ((ret = parse_json(b.arena, json, len, &root, err)) < 0)
		goto out;
	items = root->kind == BERTH_NODE_SEQ ? root : berth_node_get(root, "items");
	if (!items)
		items = berth_node_get(root, "profiles");
	if (!items || items->kind != BERTH_NODE_SEQ) {
		ret = berth_fail(err, BERTH_ETYPE, "%s is not a list of profiles", REPLY_NAME);
		goto out;
	}
	onode *doc = o_root(&b, O_MAP);
	/* the project whose view it is (GET /api/v1/profiles?project=P) */
	const berth_node *project = root->kind == BERTH_NODE_MAP ? berth_node_get(root, "project") : NULL;
	if (project && project->kind == BERTH_NODE_SCALAR && berth_node_text(project))
		o_str(&b, doc, "project", berth_node_text(project));
	onode *list = o_seq(&b, doc, "profiles");
	for (size_t i = 0; i < items->len; i++)
		o_copy(&b, list, NULL, items->u.items[i], NULL);
	const berth_node *choices = root->kind == BERTH_NODE_MAP ? berth_node_get(root, "choices") : NULL;
	if (choices && choices->kind == BERTH_NODE_MAP)
		o_copy(&b, doc, "choices", choices, NULL);
	/* the policy's limits and defaults, with their numbers as numbers (pids) */
	for (size_t k = 0; root->kind == BERTH_NODE_MAP && k < 2; k++) {
		const char *key = k ? "defaults" : "limits";
		const berth_node *m = berth_node_get(root, key);
		if (m && m->kind == BERTH_NODE_MAP)
			o_copy_typed(&b, doc, key, m);
	}
	if (!b.failed) {
		if (fmt == BERTH_EXPLAIN_YAML)
			emit_yaml(&buf, doc);
		else if (fmt == BERTH_EXPLAIN_JSON) {
			emit_json(&buf, doc, 0, 1);
			berth_buf_puts(&buf, "\n");
		} else
			render_profiles_table(&buf, doc);
		berth_buf_puts(&buf, "");
	}
	if (b.failed || buf.failed) {
		berth_buf_release(&buf);
		ret = berth_fail(err, BERTH_ENOMEM, "out of memory");
		goto out;
	}
	*outlen = buf.len;
	*out = berth_buf_detach(&buf);
out:
	berth_arena_free(b.arena);
	return ret;
}

/* ---- tokens ------------------------------------------------------------------------------ */

int berth_client_token_create(berth_client *c, const berth_token_new *t, char **token, char **id,
			      berth_error **err)
{
	*token = NULL;
	if (id)
		*id = NULL;
	obuild ob = {.arena = berth_arena_new()};
	onode *m = ob.arena ? o_root(&ob, O_MAP) : NULL;
	if (m) {
		o_str(&ob, m, "role", berth_role_name(t->role));
		onode *ps = o_seq(&ob, m, "projects");
		for (size_t i = 0; ps && i < t->nprojects; i++)
			o_str(&ob, ps, NULL, t->projects[i]);
		if (t->description)
			o_str(&ob, m, "description", t->description);
		if (t->expires)
			o_time(&ob, m, "expires", t->expires);
	}
	char *body = NULL;
	size_t blen = 0;
	int ret = m ? service_output(&ob, m, BERTH_FORMAT_JSON, &body, &blen, err)
		    : berth_fail(err, BERTH_ENOMEM, "out of memory");
	berth_arena_free(ob.arena);
	if (ret)
		return ret;
	reply r;
	request rq = {"POST", "/api/v1/tokens", body, blen, "application/json", NULL, NULL};
	ret = send_request(c, &rq, &r, err);
	free(body);
	if (ret < 0)
		return ret;
	berth_arena *arena = berth_arena_new();
	const berth_node *root = NULL;
	if (!arena)
		ret = berth_fail(err, BERTH_ENOMEM, "out of memory");
	else
		ret = parse_json(arena, r.body.data ? r.body.data : "", r.body.len, &root, err);
	const char *tok = ret ? NULL : berth_node_text(berth_node_get(root, "token"));
	const char *tid = ret ? NULL : berth_node_text(berth_node_get(root, "id"));
	if (!ret && (!tok || !tid))
		ret = berth_fail(err, BERTH_EIO, "%s has no token and id", REPLY_NAME);
	if (!ret && (!(*token = berth_strdup(tok)) || (id && !(*id = berth_strdup(tid))))) {
		free(*token);
		*token = NULL;
		ret = berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	if (r.body.data)
		memset(r.body.data, 0, r.body.len);
	berth_buf_release(&r.body);
	berth_arena_free(arena);
	return ret;
}

int berth_client_token_list(berth_client *c, berth_format fmt, char **out, size_t *len,
			    berth_error **err)
{
	*out = NULL;
	*len = 0;
	char *json = NULL;
	size_t jlen = 0;
	int ret = get_body(c, "/api/v1/tokens", &json, &jlen, err);
	if (ret)
		return ret;
	berth_arena *arena = berth_arena_new();
	obuild ob = {.arena = berth_arena_new()};
	const berth_node *root = NULL, *items = NULL;
	if (!arena || !ob.arena)
		ret = berth_fail(err, BERTH_ENOMEM, "out of memory");
	else if (!(ret = parse_json(arena, json, jlen, &root, err)) &&
		 (!(items = berth_node_get(root, "items")) || items->kind != BERTH_NODE_SEQ))
		ret = berth_fail(err, BERTH_EIO, "%s has no list of tokens (items)", REPLY_NAME);
	onode *top = ret ? NULL : o_root(&ob, O_SEQ);
	for (size_t i = 0; top && i < items->len; i++)
		o_copy_typed(&ob, top, NULL, items->u.items[i]);
	if (!ret)
		ret = top ? service_output(&ob, top, fmt, out, len, err)
			  : berth_fail(err, BERTH_ENOMEM, "out of memory");
	berth_arena_free(ob.arena);
	berth_arena_free(arena);
	free(json);
	return ret;
}

int berth_client_token_revoke(berth_client *c, const char *id, berth_error **err)
{
	berth_buf t = BERTH_BUF_INIT;
	berth_buf_puts(&t, "/api/v1/tokens/");
	put_escaped(&t, c->h, id);
	if (t.failed) {
		berth_buf_release(&t);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	reply r;
	request rq = {"DELETE", t.data, NULL, 0, NULL, NULL, NULL};
	int ret = send_request(c, &rq, &r, err);
	berth_buf_release(&t);
	berth_buf_release(&r.body);
	return ret;
}
