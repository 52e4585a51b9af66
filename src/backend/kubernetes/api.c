/*
 * kubernetes/api.c - requests to a Kubernetes API server over libcurl.
 *
 * One easy handle serves the plain requests and is reset between them so
 * its connection stays open; watches get handles of their own in a multi
 * handle. All of them take their connections, TLS sessions and DNS answers
 * from one share, so that over HTTP/2 a submission, its watches and its log
 * travel on one connection. Replies are JSON, read with the YAML reader.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/arena.h"
#include "base/curl_dl.h"
#include "berth/berth.h"
#include "base/internal.h"
#include "backend/kubernetes/api.h"
#include "spec/yaml.h"

/* What berth reads of one reply, whatever the API server sends (a hostile
 * or broken one, or someone between): a body that is read whole (a GET, a
 * list, an error's Status) at most KUBE_MAX_REPLY, the largest list berth
 * reads (the pods of a busy namespace) and more; one event of a watch at
 * most KUBE_MAX_LINE. A stream's 2xx body (a log) is not kept: it is handed
 * on as it comes. docs/kubernetes.md, Limits. */
#define KUBE_MAX_REPLY (64u << 20)
#define KUBE_MAX_LINE (16u << 20)
/* The most one plain request may take, its body read whole. */
#define KUBE_REQUEST_S 60

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)(ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

struct kube {
	kube_config cfg;
	CURL *h;
	CURLSH *share;
	char *agent;
	struct curl_slist *connect_to; /* tls-server-name: "NAME:PORT:HOST:PORT" */
	char *url;        /* the server, or the server under its tls-server-name */
	char errbuf[CURL_ERROR_SIZE];
};

void kube_reply_free(kube_reply *r)
{
	free(r->body);
	memset(r, 0, sizeof(*r));
}

void kube_put_escaped(berth_buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("-._~", *p))
			berth_buf_append(b, p, 1);
		else
			berth_buf_printf(b, "%%%c%c", hex[*p >> 4], hex[*p & 15]);
	}
}

/* ---- open, close ---------------------------------------------------------------------- */

/* "https://name:port" for a server "https://host:port[/path]" with
 * tls-server-name, and the CONNECT_TO entry that still dials host. */
static int server_name_override(kube *k)
{
	const char *s = k->cfg.server, *hostp = strstr(s, "://");
	hostp = hostp ? hostp + 3 : s;
	size_t hlen = strcspn(hostp, "/");
	const char *colon = memrchr(hostp, ':', hlen);
	const char *bracket = memrchr(hostp, ']', hlen);
	if (colon && bracket && colon < bracket)
		colon = NULL;
	size_t host_len = colon ? (size_t)(colon - hostp) : hlen;
	const char *port = colon ? colon + 1 : (strncmp(s, "http://", 7) ? "443" : "80");
	int port_len = colon ? (int)(hlen - host_len - 1) : (int)strlen(port);
	berth_buf b = BERTH_BUF_INIT;
	berth_buf_printf(&b, "%s:%.*s:%.*s:%.*s", k->cfg.tls_server_name, port_len, port,
			 (int)host_len, hostp, port_len, port);
	k->connect_to = b.data ? curl_slist_append(NULL, b.data) : NULL;
	berth_buf_release(&b);
	berth_buf_printf(&b, "%.*s%s:%.*s%s", (int)(hostp - s), s, k->cfg.tls_server_name, port_len,
			 port, hostp + hlen);
	k->url = berth_buf_detach(&b);
	return k->connect_to && k->url ? 0 : -1;
}

int kube_open(kube **out, kube_config *cfg, berth_error **err)
{
	*out = NULL;
	int rc = berth_curl_load(err);
	if (rc)
		return rc;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return berth_fail(err, BERTH_EINTERNAL, "libcurl cannot be initialised");
	kube *k = berth_calloc(1, sizeof(*k));
	if (!k)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	k->cfg = *cfg;
	memset(cfg, 0, sizeof(*cfg));
	berth_buf b = BERTH_BUF_INIT;
	berth_buf_printf(&b, "berth/%s", berth_version());
	k->agent = berth_buf_detach(&b);
	k->h = curl_easy_init();
	k->share = curl_share_init();
	int bad = !k->agent || !k->h || !k->share;
	if (!bad && k->cfg.tls_server_name)
		bad = server_name_override(k);
	else if (!bad)
		bad = !(k->url = berth_strdup(k->cfg.server));
	if (!bad) {
		curl_share_setopt(k->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
		curl_share_setopt(k->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
		curl_share_setopt(k->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
	}
	if (bad) {
		kube_close(k);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	*out = k;
	return 0;
}

void kube_close(kube *k)
{
	if (!k)
		return;
	if (k->h)
		curl_easy_cleanup(k->h);
	if (k->share)
		curl_share_cleanup(k->share);
	kube_config_free(&k->cfg);
	free(k->agent);
	curl_slist_free_all(k->connect_to);
	free(k->url);
	free(k);
}

const kube_config *kube_cfg(const kube *k)
{
	return &k->cfg;
}

/* ---- one request ------------------------------------------------------------------------ */

/* The bearer token: given inline, or read from its file now (it rotates). */
static int auth_header(const kube *k, struct curl_slist **hdrs, berth_error **err)
{
	char *token = NULL;
	size_t len = 0;
	if (k->cfg.token_file) {
		int rc = berth_read_file(k->cfg.token_file, 1u << 20, &token, &len, err);
		if (rc)
			return rc;
		while (len && (token[len - 1] == '\n' || token[len - 1] == '\r' || token[len - 1] == ' '))
			token[--len] = '\0';
	}
	const char *t = token ? token : k->cfg.token;
	int rc = 0;
	if (t && *t) {
		berth_buf b = BERTH_BUF_INIT;
		berth_buf_printf(&b, "Authorization: Bearer %s", t);
		struct curl_slist *more = b.data ? curl_slist_append(*hdrs, b.data) : NULL;
		if (b.data)
			memset(b.data, 0, b.len);
		berth_buf_release(&b);
		if (more)
			*hdrs = more;
		else
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	if (token) {
		memset(token, 0, len);
		free(token);
	}
	return rc;
}

/* The options every handle gets: where, who, how. */
static int setup(kube *k, CURL *h, const char *target, const char *content_type,
		 struct curl_slist **hdrs, berth_buf *url, berth_error **err)
{
	char ct[160];
	snprintf(ct, sizeof(ct), "Content-Type: %s", content_type ? content_type : "");
	const char *lines[] = {"Accept: application/json", "Expect:", content_type ? ct : NULL};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(lines); i++) {
		struct curl_slist *more = lines[i] ? curl_slist_append(*hdrs, lines[i]) : *hdrs;
		if (!more)
			return berth_fail(err, BERTH_ENOMEM, "out of memory");
		*hdrs = more;
	}
	int rc = auth_header(k, hdrs, err);
	if (rc)
		return rc;
	berth_buf_printf(url, "%s%s", k->url, target);
	if (url->failed)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");

	curl_easy_setopt(h, CURLOPT_URL, url->data);
	curl_easy_setopt(h, CURLOPT_SHARE, k->share);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
	curl_easy_setopt(h, CURLOPT_PIPEWAIT, 1L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_USERAGENT, k->agent);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, *hdrs);
	curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
	if (k->connect_to)
		curl_easy_setopt(h, CURLOPT_CONNECT_TO, k->connect_to);
	const kube_config *c = &k->cfg;
	if (c->insecure) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (c->ca_data) {
		struct curl_blob blob = {c->ca_data, c->ca_len, CURL_BLOB_COPY};
		curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
	} else if (c->ca_file)
		curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_file);
	if (c->cert_data) {
		struct curl_blob blob = {c->cert_data, c->cert_len, CURL_BLOB_COPY};
		curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &blob);
	} else if (c->cert_file)
		curl_easy_setopt(h, CURLOPT_SSLCERT, c->cert_file);
	if (c->key_data) {
		struct curl_blob blob = {c->key_data, c->key_len, CURL_BLOB_COPY};
		curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &blob);
	} else if (c->key_file)
		curl_easy_setopt(h, CURLOPT_SSLKEY, c->key_file);
	if (c->cert_data || c->cert_file)
		curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
	return 0;
}

static int transport_error(kube *k, CURLcode rc, const char *errbuf, long status, berth_error **err)
{
	const char *why = errbuf && errbuf[0] ? errbuf : curl_easy_strerror(rc);
	if (status)
		return berth_fail(err, BERTH_EIO, "the connection to the Kubernetes API at %s broke: %s",
				  k->cfg.server, why);
	return berth_fail(err, BERTH_EIO, "cannot reach the Kubernetes API at %s: %s", k->cfg.server,
			  why);
}

/* A reply over a cap: an error of the API server (or of what is between),
 * not of the caller's input. */
static int over_cap(const char *what, const char *url, unsigned cap, berth_error **err)
{
	return berth_fail(err, BERTH_EIO,
			  "%s %s is over berth's cap of %u MiB: a Kubernetes API server that is "
			  "broken or not to be trusted, or a proxy in between",
			  what, url, cap >> 20);
}

typedef struct sink {
	CURL *h;
	long status;
	berth_buf body;
	kube_chunk_fn chunk; /* a 2xx body goes here */
	void *ctx;
	int stopped;
	curl_off_t last_poll; /* dlnow at the last empty chunk, -1 at none */
	long quiet_since;     /* when data last came (now_ms) */
	long stall_ms;        /* a stream quiet this long has stalled (0: it may be quiet) */
	bool stalled;
} sink;

static size_t on_body(char *data, size_t size, size_t nmemb, void *userp)
{
	sink *s = userp;
	size_t n = size * nmemb;
	if (!s->status)
		curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &s->status);
	if (s->chunk && s->status < 300) {
		if (s->chunk(s->ctx, data, n)) {
			s->stopped = 1;
			return 0;
		}
		return n;
	}
	return berth_buf_append(&s->body, data, n) < 0 ? 0 : n;
}

/* libcurl's progress callback, about once a second while a stream is quiet: the
 * reader is asked (an empty chunk) whether it still reads, as the local kind's
 * log does, so that one whose client went away stops without the next line. */
static int on_progress(void *userp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	sink *s = userp;
	(void)dltotal;
	(void)ultotal;
	(void)ulnow;
	if (!s->chunk || (s->status && s->status >= 300) || dlnow != s->last_poll) {
		s->last_poll = dlnow; /* data came since: not quiet */
		s->quiet_since = now_ms();
		return 0;
	}
	if (s->stall_ms && now_ms() - s->quiet_since >= s->stall_ms) {
		s->stalled = true;
		return 1;
	}
	if (s->chunk(s->ctx, "", 0)) {
		s->stopped = 1;
		return 1; /* CURLE_ABORTED_BY_CALLBACK */
	}
	return 0;
}

static int perform(kube *k, const char *method, const char *target, const char *content_type,
		   const char *body, size_t len, int timeout_s, sink *s, berth_error **err)
{
	struct curl_slist *hdrs = NULL;
	berth_buf url = BERTH_BUF_INIT;
	CURL *h = k->h;
	curl_easy_reset(h); /* keeps the live connection */
	s->h = h;
	s->body.max = KUBE_MAX_REPLY;
	int ret = setup(k, h, target, body ? content_type : NULL, &hdrs, &url, err);
	if (!ret) {
		k->errbuf[0] = '\0';
		curl_easy_setopt(h, CURLOPT_ERRORBUFFER, k->errbuf);
		curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(h, CURLOPT_WRITEDATA, s);
		if (timeout_s > 0)
			curl_easy_setopt(h, CURLOPT_TIMEOUT, (long)timeout_s);
		/* a body read whole: one whose length is said to be over the cap is
		 * refused before it comes (on_body caps the others as they come) */
		if (!s->chunk)
			curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)KUBE_MAX_REPLY);
		if (s->chunk) {
			s->last_poll = -1;
			s->quiet_since = now_ms();
			curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
			curl_easy_setopt(h, CURLOPT_XFERINFODATA, s);
			curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
		}
		if (body) {
			curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
			curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
		}
		if (strcmp(method, body ? "POST" : "GET"))
			curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
		CURLcode rc = curl_easy_perform(h);
		if (!s->status)
			curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &s->status);
		if (rc == CURLE_ABORTED_BY_CALLBACK && s->stalled)
			ret = berth_fail(err, BERTH_EIO, "the reply to GET %s stalled: nothing came for %ld s",
					 url.data, s->stall_ms / 1000);
		else if ((rc == CURLE_WRITE_ERROR || rc == CURLE_ABORTED_BY_CALLBACK) && s->stopped)
			ret = 0;
		else if (rc == CURLE_FILESIZE_EXCEEDED ||
			 (rc == CURLE_WRITE_ERROR && s->body.failed == -BERTH_ETOOBIG)) {
			char what[40];
			snprintf(what, sizeof(what), "the reply to %.16s", method);
			ret = over_cap(what, url.data, KUBE_MAX_REPLY, err);
		} else if (rc == CURLE_WRITE_ERROR && s->body.failed)
			ret = berth_fail(err, BERTH_ENOMEM, "out of memory");
		else if (rc == CURLE_OPERATION_TIMEDOUT && s->chunk && s->status && s->status < 300)
			ret = 0; /* a stream that ran its time */
		else if (rc != CURLE_OK)
			ret = transport_error(k, rc, k->errbuf, s->status, err);
	}
	curl_slist_free_all(hdrs);
	berth_buf_release(&url);
	return ret;
}

static void reply_take(sink *s, kube_reply *r)
{
	if (!r) {
		berth_buf_release(&s->body);
		return;
	}
	r->status = s->status;
	r->len = s->body.len;
	r->body = s->body.data ? berth_buf_detach(&s->body) : berth_strdup("");
	berth_buf_release(&s->body);
}

int kube_request(kube *k, const char *method, const char *path, const char *content_type,
		 const char *body, size_t len, kube_reply *r, berth_error **err)
{
	sink s;
	memset(&s, 0, sizeof(s));
	memset(r, 0, sizeof(*r));
	int rc = perform(k, method, path, content_type, body, len, KUBE_REQUEST_S, &s, err);
	if (rc) {
		berth_buf_release(&s.body);
		return rc;
	}
	reply_take(&s, r);
	return r->body ? 0 : berth_fail(err, BERTH_ENOMEM, "out of memory");
}

int kube_stream(kube *k, const char *path, int timeout_s, int stall_s, kube_chunk_fn chunk,
		void *ctx, long *status, kube_reply *r, berth_error **err)
{
	sink s;
	memset(&s, 0, sizeof(s));
	s.chunk = chunk;
	s.ctx = ctx;
#ifdef BERTH_FAULT_INJECTION
	/* tests: a stall found in a second, not a minute */
	const char *stall = getenv("BERTH_TEST_KUBE_STALL_S");
	if (stall && stall_s > 0)
		stall_s = (int)strtol(stall, NULL, 10);
#endif
	s.stall_ms = stall_s > 0 ? stall_s * 1000L : 0;
	if (r)
		memset(r, 0, sizeof(*r));
	int rc = perform(k, "GET", path, NULL, NULL, 0, timeout_s, &s, err);
	*status = s.status;
	if (rc) {
		berth_buf_release(&s.body);
		return rc;
	}
	reply_take(&s, r);
	return 0;
}

/* ---- Status errors ------------------------------------------------------------------------ */

int kube_status_error(const kube_reply *r, const char *what, berth_error **err)
{
	berth_code code;
	switch (r->status) {
	case 401: code = BERTH_EAUTH; break;
	case 403: code = BERTH_EFORBIDDEN; break;
	case 404: code = BERTH_ENOTFOUND; break;
	case 409: code = BERTH_ECONFLICT; break;
	case 400:
	case 422: code = BERTH_EINVALID; break;
	default: code = BERTH_EIO; break;
	}
	berth_arena *arena = berth_arena_new();
	const berth_node *root = NULL;
	if (arena && r->body && r->len)
		berth_json_root(arena, "the Kubernetes API's reply", r->body, r->len, &root, NULL);
	const char *msg = berth_node_text(berth_node_at(root, "message"));
	const berth_node *causes = berth_node_at(root, "details.causes");
	berth_buf b = BERTH_BUF_INIT;
	if (what)
		berth_buf_printf(&b, "%s: ", what);
	if (msg)
		berth_buf_puts(&b, msg);
	else
		berth_buf_printf(&b, "the Kubernetes API answered HTTP %ld%s%.*s", r->status,
				 r->len ? ": " : "", (int)(r->len > 300 ? 300 : r->len),
				 r->body ? r->body : "");
	/* the message names the causes already when there is one; list them when several */
	for (size_t i = 0; causes && causes->kind == BERTH_NODE_SEQ && causes->len > 1 && i < causes->len;
	     i++) {
		const char *f = berth_node_text(berth_node_get(causes->u.items[i], "field"));
		const char *m = berth_node_text(berth_node_get(causes->u.items[i], "message"));
		berth_buf_printf(&b, "\n  %s%s%s", f ? f : "", f ? ": " : "", m ? m : "");
	}
	int rc = berth_fail(err, code, "%s", b.data ? b.data : "out of memory");
	berth_buf_release(&b);
	berth_arena_free(arena);
	return rc;
}

/* ---- watches ---------------------------------------------------------------------------- */

typedef struct wstate {
	kube *k;
	kube_watch *w;
	CURL *h;
	struct curl_slist *hdrs;
	berth_buf url, line;
	sink s;
	bool expired;      /* the rv is too old: list again */
	bool transient;    /* the API is busy or restarting: try again a little later */
	int done;          /* an event said done (1) or failed (< 0) */
	berth_error **err;
	char errbuf[CURL_ERROR_SIZE];
} wstate;

static void set_rv(kube_watch *w, const berth_node *obj)
{
	const char *rv = berth_node_text(berth_node_at(obj, "metadata.resourceVersion"));
	if (rv && strlen(rv) < sizeof(w->rv))
		memcpy(w->rv, rv, strlen(rv) + 1);
}

/* One line of a watch stream: {"type": ..., "object": {...}}. */
static int watch_line(wstate *ws, const char *text, size_t len)
{
	berth_arena *arena = berth_arena_new();
	const berth_node *root;
	if (!arena)
		return berth_fail(ws->err, BERTH_ENOMEM, "out of memory");
	int rc = berth_json_root(arena, "a watch event", text, len, &root, ws->err);
	const char *type = rc ? NULL : berth_node_text(berth_node_get(root, "type"));
	const berth_node *obj = rc ? NULL : berth_node_get(root, "object");
	if (!rc && (!type || !obj))
		rc = berth_fail(ws->err, BERTH_ESYNTAX, "a watch event of %s has no type or object",
				ws->w->path);
	if (rc) {
	} else if (!strcmp(type, "BOOKMARK")) {
		set_rv(ws->w, obj);
	} else if (!strcmp(type, "ERROR")) {
		const char *code = berth_node_text(berth_node_get(obj, "code"));
		if (code && !strcmp(code, "410")) {
			ws->expired = true;
			rc = 1;
		} else {
			const char *msg = berth_node_text(berth_node_get(obj, "message"));
			rc = berth_fail(ws->err, BERTH_EIO, "watching %s: %s", ws->w->path,
					msg ? msg : "the API sent an error event");
		}
	} else {
		set_rv(ws->w, obj);
		rc = ws->w->event(ws->w->ctx, type, obj, ws->err);
	}
	berth_arena_free(arena);
	return rc;
}

static int watch_chunk(void *ctx, const char *data, size_t len)
{
	wstate *ws = ctx;
	int full = berth_buf_append(&ws->line, data, len);
	if (full) {
		ws->done = full == -BERTH_ETOOBIG
				   ? over_cap("an event of the watch", ws->url.data, KUBE_MAX_LINE, ws->err)
				   : berth_fail(ws->err, BERTH_ENOMEM, "out of memory");
		return 1;
	}
	char *start = ws->line.data, *nl;
	size_t left = ws->line.len;
	while ((nl = memchr(start, '\n', left))) {
		size_t n = (size_t)(nl - start);
		int rc = n ? watch_line(ws, start, n) : 0;
		left -= n + 1;
		start = nl + 1;
		if (rc) {
			if (!ws->expired)
				ws->done = rc;
			return 1;
		}
	}
	memmove(ws->line.data, start, left);
	ws->line.len = left;
	return 0;
}

/* Lists the collection: RESET, an ADDED for each item, and the list's rv. */
int kube_list(kube *k, kube_watch *w, berth_error **err)
{
	berth_buf path = BERTH_BUF_INIT;
	berth_buf_puts(&path, w->path);
	if (w->selector) {
		char *e = curl_easy_escape(k->h, w->selector, 0);
		berth_buf_printf(&path, "?labelSelector=%s", e ? e : "");
		curl_free(e);
	}
	if (path.failed)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	kube_reply r;
	int rc = kube_request(k, "GET", path.data, NULL, NULL, 0, &r, err);
	berth_buf_release(&path);
	if (rc)
		return rc;
	if (r.status != 200) {
		rc = kube_status_error(&r, w->path, err);
		kube_reply_free(&r);
		return rc;
	}
	berth_arena *arena = berth_arena_new();
	const berth_node *root = NULL;
	rc = arena ? berth_json_root(arena, "a list", r.body, r.len, &root, err)
		   : berth_fail(err, BERTH_ENOMEM, "out of memory");
	if (!rc)
		rc = w->event(w->ctx, "RESET", NULL, err);
	const berth_node *items = berth_node_get(root, "items");
	for (size_t i = 0; !rc && items && items->kind == BERTH_NODE_SEQ && i < items->len; i++)
		rc = w->event(w->ctx, "ADDED", items->u.items[i], err);
	if (!rc)
		rc = w->event(w->ctx, "SYNCED", NULL, err);
	if (rc >= 0) {
		w->rv[0] = '\0';
		set_rv(w, root);
	}
	berth_arena_free(arena);
	kube_reply_free(&r);
	return rc;
}

static void wstate_reset(wstate *ws)
{
	if (ws->h)
		curl_easy_cleanup(ws->h);
	curl_slist_free_all(ws->hdrs);
	berth_buf_release(&ws->url);
	berth_buf_release(&ws->line);
	berth_buf_release(&ws->s.body);
	ws->h = NULL;
	ws->hdrs = NULL;
	ws->expired = false;
	ws->transient = false;
	memset(&ws->s, 0, sizeof(ws->s));
}

static int watch_start(wstate *ws, CURLM *multi, long timeout_ms)
{
	kube *k = ws->k;
	kube_watch *w = ws->w;
	wstate_reset(ws);
	if (!(ws->h = curl_easy_init()))
		return berth_fail(ws->err, BERTH_ENOMEM, "out of memory");
	berth_buf target = BERTH_BUF_INIT;
	/* the API ends a watch after timeoutSeconds; berth then goes on from rv */
	long secs = timeout_ms >= 0 && timeout_ms / 1000 + 1 < 290 ? timeout_ms / 1000 + 1 : 290;
	berth_buf_printf(&target, "%s?watch=1&allowWatchBookmarks=true&timeoutSeconds=%ld", w->path, secs);
	if (w->rv[0])
		berth_buf_printf(&target, "&resourceVersion=%s", w->rv);
	if (w->selector) {
		char *e = curl_easy_escape(ws->h, w->selector, 0);
		berth_buf_printf(&target, "&labelSelector=%s", e ? e : "");
		curl_free(e);
	}
	ws->line.max = KUBE_MAX_LINE;
	int rc = target.failed ? berth_fail(ws->err, BERTH_ENOMEM, "out of memory")
			       : setup(k, ws->h, target.data, NULL, &ws->hdrs, &ws->url, ws->err);
	berth_buf_release(&target);
	if (rc)
		return rc;
	ws->s.h = ws->h;
	ws->s.chunk = watch_chunk;
	ws->s.ctx = ws;
	ws->s.body.max = KUBE_MAX_REPLY;
	ws->errbuf[0] = '\0';
	curl_easy_setopt(ws->h, CURLOPT_ERRORBUFFER, ws->errbuf);
	curl_easy_setopt(ws->h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(ws->h, CURLOPT_WRITEDATA, &ws->s);
	curl_easy_setopt(ws->h, CURLOPT_PRIVATE, ws);
	if (curl_multi_add_handle(multi, ws->h) != CURLM_OK)
		return berth_fail(ws->err, BERTH_EINTERNAL, "libcurl refused a watch");
	return 0;
}

/* A watch stream ended: why, and what next (0: start again). */
static int watch_ended(wstate *ws, CURLcode res)
{
	kube_watch *w = ws->w;
	if (ws->done)
		return ws->done;
	long status = ws->s.status;
	if (!status)
		curl_easy_getinfo(ws->h, CURLINFO_RESPONSE_CODE, &status);
	if (status == 410 || ws->expired) {
		w->rv[0] = '\0'; /* too old: list again */
		return 0;
	}
	/* busy, restarting, or (504) an rv this API server has not seen yet */
	if (status == 429 || status == 500 || status == 503 || status == 504) {
		if (status == 504)
			w->rv[0] = '\0';
		ws->transient = true;
		return 0;
	}
	if (status >= 300) {
		kube_reply r = {status, ws->s.body.data, ws->s.body.len};
		return kube_status_error(&r, w->path, ws->err);
	}
	/* the API closed it (timeoutSeconds), or the connection broke: go on from rv */
	return 0;
}

/* The pause before trying again after the n-th failure in a row: 0.1 s,
 * doubling, at most 5 s. */
static void pause_after(int n)
{
	long ms = n > 6 ? 5000 : 100L << (n - 1);
	if (ms > 5000)
		ms = 5000;
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

int kube_watch_run(kube *k, kube_watch *w, size_t n, long timeout_ms, berth_error **err)
{
	if (n > 8)
		return berth_fail(err, BERTH_EINTERNAL, "at most 8 watches at once");
	wstate ws[8];
	memset(ws, 0, sizeof(ws));
	CURLM *multi = curl_multi_init();
	if (!multi)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	curl_multi_setopt(multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
	long deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	int rc = 0, fails = 0;
	bool pending[8];
	for (size_t i = 0; i < n; i++) {
		ws[i].k = k;
		ws[i].w = &w[i];
		ws[i].err = err;
		pending[i] = true; /* needs (re)starting */
	}
	while (!rc) {
		for (size_t i = 0; i < n && !rc; i++) {
			if (!pending[i])
				continue;
			if (!w[i].rv[0]) {
				/* a list the API cannot answer now (EIO: busy, restarting,
				 * unreachable) is tried again, as a watch is */
				berth_error *le = NULL;
				int lr = kube_list(k, &w[i], &le);
				if (lr == -BERTH_EIO && ++fails <= 8) {
					berth_error_free(le);
					pause_after(fails);
					continue;
				}
				if (lr) {
					berth_error_move(err, le);
					rc = lr;
					break;
				}
				berth_error_free(le);
			}
			long left = deadline < 0 ? -1 : deadline - now_ms();
			if (!(rc = watch_start(&ws[i], multi, left)))
				pending[i] = false;
		}
		if (rc)
			break;
		int running = 0;
		curl_multi_perform(multi, &running);
		CURLMsg *msg;
		int q;
		while ((msg = curl_multi_info_read(multi, &q))) {
			if (msg->msg != CURLMSG_DONE)
				continue;
			wstate *s = NULL;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&s);
			CURLcode res = msg->data.result;
			curl_multi_remove_handle(multi, msg->easy_handle);
			if (!s)
				continue;
			int r = watch_ended(s, res);
			if (r) {
				rc = r;
				break;
			}
			/* a stream that broke, or a busy API: again after a pause that
			 * doubles (0.1 s to 5 s); after 8 in a row (about 16 s), give up */
			if (res == CURLE_OK && !s->transient) {
				fails = 0;
			} else if (!s->expired) {
				if (++fails > 8) {
					if (s->transient) {
						kube_reply busy = {s->s.status, s->s.body.data, s->s.body.len};
						rc = kube_status_error(&busy, s->w->path, err);
					} else
						rc = transport_error(k, res, s->errbuf, s->s.status, err);
					break;
				}
				pause_after(fails);
			}
			pending[s - ws] = true;
		}
		if (rc)
			break;
		long left = deadline < 0 ? 1000 : deadline - now_ms();
		if (left <= 0) {
			rc = berth_fail(err, BERTH_ETIMEOUT, "timed out");
			break;
		}
		curl_multi_poll(multi, NULL, 0, left > 1000 ? 1000 : (int)left, NULL);
	}
	for (size_t i = 0; i < n; i++) {
		if (ws[i].h)
			curl_multi_remove_handle(multi, ws[i].h);
		wstate_reset(&ws[i]);
	}
	curl_multi_cleanup(multi);
	return rc > 0 ? 0 : rc;
}
