/*
 * fuzz_http.c - libFuzzer target for the server's request path: routing,
 * authentication and authorization, query strings, bodies of every route
 * (runs, validate, parse, functions, secrets, projects), and the answers.
 *
 * No socket and no libmicrohttpd: berth_mhd (server/mhd_dl.h) is filled with
 * a stand-in that hands the server one request at a time, as the daemon's
 * access handler sees it (the headers, then the body in two parts, then the
 * end), and checks every answer: exactly one per request, a status a server
 * sends, header values without line breaks and bounded, and a JSON body that
 * parses. The backend is the kubernetes kind with a cluster nobody listens
 * on: every submission fails at its connection, so no run process is ever
 * started, and the store (in a temporary dir) sees every other write.
 *
 * The input: byte 0 picks the token (none, an admin of every project, a user
 * of p1, a viewer of p1, one that does not exist), byte 1 the method, then
 * the URL up to a newline (with its query string), then the body.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/arena.h"
#include "mhd_dl.h"
#include "server.h"
#include "spec/yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct MHD_Connection {
	const char *auth;
	const char *query;   /* after '?', not decoded */
	char arg[4096];      /* the last argument looked up, decoded */
	char length[32];     /* Content-Length */
	int answers;
	unsigned status;
	bool suspended;
};

struct MHD_Response {
	void *data;
	size_t len;
	bool must_free;
	int refs;
	void *cls;
	MHD_ContentReaderFreeCallback free_cb;
	char type[128];
	unsigned headers;
};

static void response_unref(struct MHD_Response *r)
{
	if (!r || --r->refs > 0)
		return;
	if (r->must_free)
		free(r->data);
	if (r->free_cb)
		r->free_cb(r->cls);
	free(r);
}

static struct MHD_Response *response_new(void)
{
	struct MHD_Response *r = calloc(1, sizeof(*r));
	if (!r)
		abort();
	r->refs = 1;
	return r;
}

static struct MHD_Response *fake_from_buffer(size_t size, void *buffer, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = response_new();
	r->data = buffer;
	r->len = size;
	r->must_free = mode == MHD_RESPMEM_MUST_FREE;
	return r;
}

static struct MHD_Response *fake_from_callback(uint64_t size, size_t block, MHD_ContentReaderCallback crc,
					       void *cls, MHD_ContentReaderFreeCallback crfc)
{
	(void)size;
	(void)block;
	(void)crc;
	struct MHD_Response *r = response_new();
	r->cls = cls;
	r->free_cb = crfc;
	return r;
}

static void fake_destroy(struct MHD_Response *r)
{
	response_unref(r);
}

static enum MHD_Result fake_add_header(struct MHD_Response *r, const char *h, const char *v)
{
	/* what a client reads as one header: no line break may get in, and none is huge */
	if (strpbrk(h, "\r\n") || strpbrk(v, "\r\n") || strlen(v) > 8192)
		abort();
	if (++r->headers > 64)
		abort();
	if (!strcasecmp(h, MHD_HTTP_HEADER_CONTENT_TYPE))
		snprintf(r->type, sizeof(r->type), "%s", v);
	return MHD_YES;
}

/* %XX and + decoded, as the daemon gives query arguments */
static void decode(char *out, size_t cap, const char *s, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o + 1 < cap; i++) {
		if (s[i] == '+')
			out[o++] = ' ';
		else if (s[i] == '%' && i + 2 < n && s[i + 1] && s[i + 2]) {
			char hex[3] = {s[i + 1], s[i + 2], 0};
			out[o++] = (char)strtol(hex, NULL, 16);
			i += 2;
		} else
			out[o++] = s[i];
	}
	out[o] = 0;
}

static const char *fake_lookup(struct MHD_Connection *c, enum MHD_ValueKind kind, const char *key)
{
	if (kind == MHD_HEADER_KIND) {
		if (!strcasecmp(key, MHD_HTTP_HEADER_AUTHORIZATION))
			return c->auth;
		if (!strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH))
			return c->length;
		return NULL;
	}
	if (kind != MHD_GET_ARGUMENT_KIND || !c->query)
		return NULL;
	size_t klen = strlen(key);
	for (const char *p = c->query; *p;) {
		const char *end = strchr(p, '&');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', n);
		size_t kn = eq ? (size_t)(eq - p) : n;
		if (kn == klen && !memcmp(p, key, klen)) {
			if (!eq) {
				c->arg[0] = 0;
				return c->arg;
			}
			decode(c->arg, sizeof(c->arg), eq + 1, n - kn - 1);
			return c->arg;
		}
		p += n + (end ? 1 : 0);
	}
	return NULL;
}

static enum MHD_Result fake_queue(struct MHD_Connection *c, unsigned status, struct MHD_Response *r)
{
	if (c->answers++ || status < 200 || status > 599)
		abort();
	static const unsigned sent[] = {200, 201, 202, 204, 400, 401, 403, 404, 405, 409, 413,
					422, 500, 503, 507};
	bool known = false;
	for (size_t i = 0; i < sizeof(sent) / sizeof(sent[0]); i++)
		known = known || sent[i] == status;
	if (!known)
		abort();
	c->status = status;
	/* a JSON answer is JSON, as a client reads a server's reply (berth_json_root:
	 * an answer may be bigger and deeper than the request it echoes) */
	if (r->data && r->len && strstr(r->type, "application/json")) {
		berth_arena *arena = berth_arena_new();
		const berth_node *root = NULL;
		berth_error *err = NULL;
		if (!arena)
			abort();
		if (berth_json_root(arena, "answer", r->data, r->len, &root, &err)) {
			char line[512] = "";
			berth_problem_format(berth_error_get(err, 0), line, sizeof(line));
			fprintf(stderr, "status %u: a JSON answer that does not parse (%s): %.*s\n", status,
				line, (int)(r->len > 300 ? 300 : r->len), (const char *)r->data);
			abort();
		}
		berth_error_free(err);
		berth_arena_free(arena);
	}
	r->refs++;
	response_unref(r); /* the daemon would send it, then let it go */
	return MHD_YES;
}

static void fake_suspend(struct MHD_Connection *c)
{
	c->suspended = true;
}

static void fake_resume(struct MHD_Connection *c)
{
	c->suspended = false;
}

static const union MHD_ConnectionInfo *fake_conn_info(struct MHD_Connection *c,
						      enum MHD_ConnectionInfoType type, ...)
{
	(void)c;
	(void)type;
	return NULL;
}

static int fake_values(struct MHD_Connection *c, enum MHD_ValueKind kind, MHD_KeyValueIterator it,
		       void *cls)
{
	int n = 0;
	if (kind != MHD_HEADER_KIND)
		return 0;
	if (c->auth && ++n && it)
		it(cls, kind, MHD_HTTP_HEADER_AUTHORIZATION, c->auth);
	if (++n && it)
		it(cls, kind, MHD_HTTP_HEADER_CONTENT_LENGTH, c->length);
	return n;
}

static server *srv;
static char *tokens[4];

static void init(void)
{
	static char home[] = "/tmp/berth-fuzz-http-XXXXXX";
	if (!mkdtemp(home))
		abort();
	char path[4200];
	snprintf(path, sizeof(path), "%s/kubeconfig", home);
	FILE *f = fopen(path, "w");
	if (!f)
		abort();
	/* a cluster nobody listens on: every submission fails at its connection */
	fputs("apiVersion: v1\nkind: Config\ncurrent-context: c\n"
	      "clusters: [{name: c, cluster: {server: \"https://127.0.0.1:1\"}}]\n"
	      "users: [{name: u, user: {token: t}}]\n"
	      "contexts: [{name: c, context: {cluster: c, user: u, namespace: fuzz}}]\n", f);
	fclose(f);
	static char kubeconfig[4200];
	snprintf(kubeconfig, sizeof(kubeconfig), "%s", path);
	static char homedir[4200];
	snprintf(homedir, sizeof(homedir), "%s/home", home);
	berth_mhd = (mhd_dl){
		.add_response_header = fake_add_header,
		.lookup_connection_value = fake_lookup,
		.queue_response = fake_queue,
		.destroy_response = fake_destroy,
		.create_response_from_buffer = fake_from_buffer,
		.create_response_from_callback = fake_from_callback,
		.suspend_connection = fake_suspend,
		.resume_connection = fake_resume,
		.get_connection_info = fake_conn_info,
		.get_connection_values = fake_values,
	};
	static serve_opts o;
	o.listen = "127.0.0.1:0";
	o.backend = "kubernetes";
	o.kubeconfig = kubeconfig;
	o.home = homedir;
	o.max_body = 1u << 20;
	setenv("BERTH_DISK_RESERVE", "0", 1);
	if (server_open(&srv, &o))
		abort(); /* the reason is on stderr */
	berth_backend *b = srv_backend(srv);
	if (!b)
		abort();
	static const char *const p1[] = {"p1"}, *const all[] = {"*"};
	char *id = NULL;
	if (berth_token_create(b, &(berth_token_new){BERTH_ROLE_ADMIN, all, 1, "fuzz", 0}, &tokens[0], &id, NULL))
		abort();
	free(id);
	if (berth_token_create(b, &(berth_token_new){BERTH_ROLE_USER, p1, 1, "fuzz", 0}, &tokens[1], &id, NULL))
		abort();
	free(id);
	if (berth_token_create(b, &(berth_token_new){BERTH_ROLE_VIEWER, p1, 1, "fuzz", 0}, &tokens[2], &id, NULL))
		abort();
	free(id);
	tokens[3] = strdup("berth_nosuchtoken");
	berth_project_create(b, "p1", NULL);
	berth_project_create(b, "p2", NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!srv)
		init();
	if (size < 2)
		return 0;
	static const char *const methods[] = {"GET", "POST", "PUT", "DELETE", "HEAD", "PATCH", "BREW"};
	const char *method = methods[data[1] % (sizeof(methods) / sizeof(methods[0]))];
	const char *rest = (const char *)data + 2, *end = (const char *)data + size;
	const char *nl = memchr(rest, '\n', (size_t)(end - rest));
	size_t ulen = nl ? (size_t)(nl - rest) : (size_t)(end - rest);
	/* the daemon gives the path without its query, NUL-terminated */
	char *url = strndup(rest, ulen);
	if (!url)
		return 0;
	char *q = strchr(url, '?');
	struct MHD_Connection c;
	memset(&c, 0, sizeof(c));
	if (q) {
		*q = 0;
		c.query = q + 1;
	}
	char auth[256];
	if (data[0] % 5) {
		snprintf(auth, sizeof(auth), "Bearer %s", tokens[data[0] % 5 - 1]);
		c.auth = auth;
	}
	const char *body = nl ? nl + 1 : end;
	size_t blen = (size_t)(end - body);
	snprintf(c.length, sizeof(c.length), "%zu", blen);
	void *state = NULL;
	size_t none = 0;
	enum MHD_Result ret = server_request(srv, &c, url, method, "HTTP/1.1", NULL, &none, &state);
	/* the body in two parts, as it may come */
	size_t half = blen / 2;
	for (int part = 0; ret == MHD_YES && part < 2 && blen && !c.answers; part++) {
		size_t n = part ? blen - half : half;
		size_t left = n;
		if (n)
			ret = server_request(srv, &c, url, method, "HTTP/1.1", part ? body + half : body,
					     &left, &state);
		if (left)
			abort(); /* every byte given is taken */
	}
	for (int k = 0; ret == MHD_YES && !c.answers && k < 3; k++) {
		none = 0;
		ret = server_request(srv, &c, url, method, "HTTP/1.1", NULL, &none, &state);
		/* a wait or a log stream: its answer comes later, off this thread; the
		 * fuzzer ends it as a client that goes away would */
		if (c.suspended)
			break;
	}
	if (ret == MHD_YES && !c.answers && !c.suspended)
		abort(); /* a request that got no answer, and was not closed */
	server_completed(srv, &c, &state, MHD_REQUEST_TERMINATED_COMPLETED_OK);
	free(url);
	return 0;
}
