/*
 * test_client.c - berth/client.h: Run JSON back into records (a round trip
 * with berth_run_info_format), the profiles of a server printed as those of
 * a local policy, and the client against a small HTTP server (libmicrohttpd)
 * that answers as docs/api.md says: problems of a 422, warnings, errors,
 * pages, logs, secrets, the token, an unreachable server.
 */
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/berth.h"
#include "berth/client.h"
#include "base/internal.h"
#include "t.h"

static berth_run_info *info_new(const char *id, berth_state st)
{
	berth_run_info *i = calloc(1, sizeof(*i));
	i->id = strdup(id);
	i->name = strdup("hello-local-x");
	i->project = strdup("demo");
	i->backend = strdup("local");
	i->state = st;
	i->exit_code = -1;
	return i;
}

static char *format(berth_run_info *const *list, size_t n, bool as_list)
{
	char *out = NULL;
	size_t len;
	berth_error *err = NULL;
	CHECK_INT(berth_run_info_format(list, n, as_list, BERTH_FORMAT_JSON, &out, &len, &err), 0);
	berth_error_free(err);
	return out;
}

/* format -> parse -> format gives the same bytes, list and single. */
static void test_roundtrip(void)
{
	berth_run_info *in[4];
	in[0] = info_new("p1", BERTH_STATE_PENDING);
	in[0]->reason = strdup("waiting for capacity: gpu 2 asked, 0 free of 1");
	in[0]->created = 1795446537039LL;
	in[0]->cpu_milli = 250;
	in[0]->mem = 64LL << 20;
	in[0]->gpus = 2;
	in[0]->priority = -5;

	in[1] = info_new("jqj9mbv70r", BERTH_STATE_SUCCEEDED);
	in[1]->action = strdup("job");
	in[1]->profile = strdup("1xa100");
	in[1]->image = strdup("python:3.11-slim");
	in[1]->priority_class = strdup("berth-high");
	in[1]->priority = 1000000;
	in[1]->created = 1795446537039LL;
	in[1]->started = 1795446537100LL;
	in[1]->finished = 1795446599999LL;
	in[1]->cpu_milli = 2500;
	in[1]->mem = (23LL << 30) + (4LL << 30) / 10; /* "23.4Gi": lossy, must be stable */
	in[1]->disk = 1000;
	in[1]->cpu_limit_milli = 500;
	in[1]->mem_limit = 128LL << 20;
	in[1]->gpu_ids = strdup("0,1");
	in[1]->exit_code = 0;
	in[1]->attempts = 1;
	in[1]->cpu_usage_ns = 13456789;
	in[1]->mem_peak = 1773568;
	in[1]->enforcement = strdup("cgroup v1");
	in[1]->log_path = strdup("/var/lib/berth/runs/jqj9mbv70r/log");
	in[1]->labels = strdup("team=vision,app.kubernetes.io/part-of=demo,empty=");

	in[2] = info_new("f1", BERTH_STATE_FAILED);
	in[2]->reason = strdup("OOMKilled \"quoted\" \\ \xc3\xa9");
	in[2]->signal = 9;
	in[2]->oom_killed = true;
	in[2]->attempts = 3;
	in[2]->created = 86400000;
	in[2]->cpu_milli = 1;
	in[2]->mem = 1;
	in[2]->cpu_usage_ns = 5000000000LL;
	in[2]->enforcement = strdup("rlimits"); /* usage is measured only where something enforces */

	in[3] = info_new("s1", BERTH_STATE_STOPPED);

	char *first = format(in, 4, true);
	berth_run_info **back = NULL;
	size_t n = 0;
	berth_error *err = NULL;
	CHECK_INT(berth_run_info_parse(first, strlen(first), &back, &n, &err), 0);
	CHECKF(err == NULL, "unexpected problems");
	berth_error_free(err);
	CHECK_INT(n, 4);
	if (n == 4) {
		char *second = format(back, n, true);
		CHECK_STR(second, first);
		free(second);
		CHECK_STR(back[1]->log_path, in[1]->log_path);
		CHECK_STR(back[1]->labels, in[1]->labels);
		CHECK(back[0]->labels == NULL);
		CHECK_INT(back[1]->created, in[1]->created);
		CHECK_INT(back[1]->finished, in[1]->finished);
		CHECK_INT(back[1]->cpu_milli, 2500);
		CHECK_INT(back[1]->mem_limit, 128LL << 20);
		CHECK_INT(back[1]->exit_code, 0);
		CHECK_INT(back[1]->cpu_usage_ns, 13000000); /* printed to the ms */
		CHECK_INT(back[0]->exit_code, -1);
		CHECK_INT(back[0]->gpus, 2);
		CHECK_INT(back[0]->priority, -5);
		CHECK_INT(back[0]->state, BERTH_STATE_PENDING);
		CHECK_INT(back[2]->signal, 9);
		CHECK(back[2]->oom_killed);
		CHECK_STR(back[2]->reason, in[2]->reason);
		CHECK_INT(back[2]->cpu_usage_ns, 5000000000LL);
		CHECK(back[3]->reason == NULL && back[3]->created == 0);
	}
	berth_run_info_list_free(back, n);

	/* one object alone */
	char *one = format(in, 1, false);
	CHECK_INT(berth_run_info_parse(one, strlen(one), &back, &n, NULL), 0);
	CHECK_INT(n, 1);
	if (n == 1) {
		char *again = format(back, 1, false);
		CHECK_STR(again, one);
		free(again);
	}
	berth_run_info_list_free(back, n);
	free(one);
	free(first);
	for (int i = 0; i < 4; i++)
		berth_run_info_free(in[i]);
}

/* The shapes and spellings a server may send, and what is refused. */
static void test_parse_shapes(void)
{
	const char *items = "{\"items\": [{\"id\": \"a\", \"state\": \"running\", "
			    "\"created\": \"2026-11-22T14:08:57+01:00\", "
			    "\"resources\": {\"requests\": {\"cpu\": \"500m\", \"mem\": \"1Gi\", "
			    "\"gpu\": 1, \"disk\": \"10G\"}}, \"future\": {\"x\": [1]}},"
			    " {\"id\": \"b\", \"state\": \"Stopped\", \"reason\": null}], "
			    "\"next\": \"zz\"}";
	berth_run_info **l = NULL;
	size_t n = 0;
	berth_error *err = NULL;
	CHECK_INT(berth_run_info_parse(items, strlen(items), &l, &n, &err), 0);
	CHECK_INT(n, 2);
	if (n == 2) {
		CHECK_INT(l[0]->state, BERTH_STATE_RUNNING);
		CHECK_INT(l[0]->created, 1795352937000LL); /* 13:08:57Z */
		CHECK_INT(l[0]->cpu_milli, 500);
		CHECK_INT(l[0]->mem, 1LL << 30);
		CHECK_INT(l[0]->gpus, 1);
		CHECK_INT(l[0]->disk, 10000000000LL);
		CHECK(l[1]->reason == NULL);
	}
	berth_run_info_list_free(l, n);
	berth_error_free(err);

	struct {
		const char *json;
		berth_code code;
		const char *text; /* the first problem as printed */
	} bad[] = {
		{"{\"id\": \"a\", \"state\": \"Sleeping\"}", BERTH_EINVALID,
		 "the server's reply:1:23: state: \"Sleeping\" is not a run state"},
		{"[{\"state\": \"Running\"}]", BERTH_EMISSING, "the server's reply:1:2: [0].id: is missing"},
		{"{\"items\": [{\"id\": \"a\", \"state\": \"Running\",\n \"resources\": {\"requests\": "
		 "{\"cpu\": \"2 cores\"}}}]}",
		 BERTH_EQUANTITY, "the server's reply:2:37: items[0].resources.requests.cpu: \"2 cores\""},
		{"{\"id\": \"a\", \"state\": \"Running\", \"created\": \"yesterday\"}", BERTH_EINVALID,
		 "the server's reply:1:45: created: \"yesterday\" is not an ISO-8601 UTC time"},
		{"{\"id\": \"a\", \"state\": \"Running\", \"attempts\": \"2\"}", BERTH_ETYPE,
		 "the server's reply:1:46: attempts: expected an integer, not \"2\""},
		{"{\"id\": [], \"state\": \"Running\"}", BERTH_ETYPE,
		 "the server's reply:1:8: id: expected a scalar, not a list"},
		{"{\"items\": 3}", BERTH_ETYPE, "the server's reply:1:11: items: expected a list"},
		{"{\"id\": ", BERTH_ESYNTAX, "the server's reply"},
		{"", BERTH_ESYNTAX, "the server's reply is not one JSON value"},
	};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(bad); i++) {
		char line[512] = "";
		err = NULL;
		l = NULL;
		n = 0;
		int rc = berth_run_info_parse(bad[i].json, strlen(bad[i].json), &l, &n, &err);
		CHECKF(rc == -(int)bad[i].code && berth_error_code(err) == bad[i].code,
		       "row %zu: %d, code %d", i, rc, berth_error_code(err));
		CHECKF(l == NULL && n == 0, "row %zu: output on failure", i);
		if (berth_error_get(err, 0))
			berth_problem_format(berth_error_get(err, 0), line, sizeof(line));
		CHECKF(!strncmp(line, bad[i].text, strlen(bad[i].text)), "row %zu: \"%s\"", i, line);
		berth_error_free(err);
	}
}

/* A server's profiles print as berth profiles prints the same policy. */
static void test_profiles_format(void)
{
	berth_policy *pol = NULL;
	berth_error *err = NULL;
	CHECK_INT(berth_policy_load(&pol, "examples/policy/config.yaml", &err), 0);
	berth_error_free(err);
	if (!pol)
		return;
	char *json;
	size_t jlen;
	CHECK_INT(berth_explain_profiles(pol, BERTH_EXPLAIN_JSON, &json, &jlen, NULL), 0);
	/* as the server wraps it */
	berth_buf wrapped = BERTH_BUF_INIT;
	const char *p = strchr(json, '[');
	berth_buf_printf(&wrapped, "{\"items\": %.*s", (int)(jlen - (size_t)(p - json)), p);
	for (berth_explain_format f = BERTH_EXPLAIN_TABLE; f <= BERTH_EXPLAIN_JSON; f++) {
		char *want, *got;
		size_t wl, gl;
		CHECK_INT(berth_explain_profiles(pol, f, &want, &wl, NULL), 0);
		CHECK_INT(berth_client_profiles_format(json, jlen, f, &got, &gl, NULL), 0);
		CHECKF(got && !strcmp(got, want), "format %d:\n%s\nwant:\n%s", f, got, want);
		free(got);
		CHECK_INT(berth_client_profiles_format(wrapped.data, wrapped.len, f, &got, &gl, NULL), 0);
		CHECKF(got && !strcmp(got, want), "format %d from items", f);
		free(got);
		free(want);
	}
	berth_buf_release(&wrapped);
	free(json);
	berth_policy_free(pol);

	char *got;
	size_t gl;
	CHECK_INT(berth_client_profiles_format("{\"items\": []}", 13, BERTH_EXPLAIN_TABLE, &got, &gl,
					       NULL), 0);
	CHECK_STR(got, "no profiles defined\n");
	free(got);
	err = NULL;
	CHECK_INT(berth_client_profiles_format("{}", 2, BERTH_EXPLAIN_TABLE, &got, &gl, &err),
		  -BERTH_ETYPE);
	berth_error_free(err);
}

/* ---- a fake berth serve ------------------------------------------------------------ */

#define RUN_A "{\"id\": \"a1\", \"name\": \"hello-a1\", \"project\": \"demo\", " \
	      "\"backend\": \"local\", \"state\": \"Running\", \"attempts\": 1}"

static struct {
	char last_query[512];  /* what the last request asked, for checks */
	char last_body[512];
	char last_auth[128];
	char last_method[16];
} seen;

struct body {
	berth_buf b;
};

static enum MHD_Result put_arg(void *cls, enum MHD_ValueKind kind, const char *key,
			       const char *value)
{
	berth_buf *b = cls;
	berth_buf_printf(b, "%s%s=%s", b->len ? "&" : "", key, value ? value : "");
	return MHD_YES;
}

static enum MHD_Result answer(struct MHD_Connection *conn, unsigned status, const char *body,
			      const char *warning)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body,
								 MHD_RESPMEM_MUST_COPY);
	MHD_add_response_header(r, "Content-Type", "application/json");
	if (warning) {
		MHD_add_response_header(r, "Berth-Warning", warning);
		MHD_add_response_header(r, "Berth-Warning", "warning: a bare one");
	}
	enum MHD_Result ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* The log arrives in three pieces. */
static ssize_t log_piece(void *cls, uint64_t pos, char *buf, size_t max)
{
	static const char *const pieces[] = {"line 1\n", "line 2\n", "done\n"};
	int *k = cls;
	if (*k >= 3)
		return MHD_CONTENT_READER_END_OF_STREAM;
	size_t n = strlen(pieces[*k]);
	memcpy(buf, pieces[(*k)++], n < max ? n : max);
	return (ssize_t)n;
}

static enum MHD_Result serve(void *cls, struct MHD_Connection *conn, const char *url,
			     const char *method, const char *version, const char *upload,
			     size_t *upload_size, void **req)
{
	struct body *bd = *req;
	if (!bd) {
		*req = calloc(1, sizeof(struct body));
		return MHD_YES;
	}
	if (*upload_size) {
		berth_buf_append(&bd->b, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	berth_buf q = BERTH_BUF_INIT;
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, put_arg, &q);
	snprintf(seen.last_query, sizeof(seen.last_query), "%s %s", url, q.data ? q.data : "");
	snprintf(seen.last_body, sizeof(seen.last_body), "%s", bd->b.data ? bd->b.data : "");
	snprintf(seen.last_auth, sizeof(seen.last_auth), "%s", auth ? auth : "");
	snprintf(seen.last_method, sizeof(seen.last_method), "%s", method);
	const char *after = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "after");
	berth_buf_release(&q);

	if (!auth || strcmp(auth, "Bearer t0k"))
		return answer(conn, 401, "{\"error\": {\"status\": 401, \"code\": \"unauthorized\", "
				  "\"message\": \"no token or an unknown one\"}}", NULL);
	if (!strcmp(url, "/api/v1/runs") && !strcmp(method, "POST")) {
		if (bd->b.data && strstr(bd->b.data, "bad"))
			return answer(conn, 422,
				      "{\"error\": {\"status\": 422, \"code\": \"invalid\", \"message\": "
				      "\"the spec has 2 problems\", \"problems\": [{\"code\": \"quantity\", "
				      "\"severity\": \"error\", \"file\": \"x.yaml\", \"line\": 12, "
				      "\"column\": 10, \"path\": \"resources.mem.requests\", \"message\": "
				      "\"\\\"32Gb\\\" is not a quantity\"}, {\"code\": \"policy\", "
				      "\"severity\": \"warning\", \"message\": \"careful\"}]}}", NULL);
		return answer(conn, 201, "{\"items\": [" RUN_A ", " RUN_A "]}",
			      "x.yaml:3:7: warning: image: not pulled");
	}
	const char *sel = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "labelSelector");
	if (!strcmp(url, "/api/v1/runs") && sel && !strcmp(sel, "team=none"))
		return answer(conn, 200, "{\"items\": []}", NULL);
	if (!strcmp(url, "/api/v1/runs") && !after)
		return answer(conn, 200, "{\"items\": [" RUN_A "], \"next\": \"c1\"}", NULL);
	if (!strcmp(url, "/api/v1/runs"))
		return answer(conn, 200, "{\"items\": [" RUN_A ", " RUN_A "]}", NULL);
	if (!strcmp(url, "/api/v1/runs/a1"))
		return answer(conn, 200, RUN_A, NULL);
	if (!strcmp(url, "/api/v1/runs/a1/stop"))
		return answer(conn, 200, RUN_A, NULL);
	if (!strcmp(url, "/api/v1/runs/a1/logs")) {
		int *k = calloc(1, sizeof(int));
		struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64, log_piece,
									   k, free);
		enum MHD_Result ret = MHD_queue_response(conn, 200, r);
		MHD_destroy_response(r);
		return ret;
	}
	if (!strcmp(url, "/api/v1/runs/a1") && !strcmp(method, "DELETE"))
		return answer(conn, 204, "", NULL);
	if (!strcmp(url, "/api/v1/runs/r1") && !strcmp(method, "DELETE"))
		return answer(conn, 409, "{\"error\": {\"status\": 409, \"code\": \"conflict\", "
				  "\"message\": \"run \\\"r1\\\" is Running: stop it before deleting it\"}}", NULL);
	if (!strcmp(url, "/api/v1/runs/a1/events"))
		return answer(conn, 200, "{\"items\": [{\"time\": \"2026-11-22T13:08:57.039Z\", "
				  "\"kind\": \"Started\"}]}", NULL);
	if (!strcmp(url, "/api/v1/validate") || !strcmp(url, "/api/v1/projects/demo/validate")) {
		if (bd->b.data && strstr(bd->b.data, "bad"))
			return answer(conn, 422, "{\"error\": {\"status\": 422, \"code\": \"invalid\", "
					  "\"message\": \"refused\", \"problems\": [{\"code\": \"policy\", "
					  "\"severity\": \"error\", \"file\": \"x.yaml\", \"line\": 2, "
					  "\"column\": 3, \"path\": \"profile\", \"message\": \"unknown\"}]}}",
				      NULL);
		return answer(conn, 200, "{\"problems\": [], \"runs\": [{\"run\": {\"id\": \"x\"}, "
				  "\"fields\": [{\"path\": \"project\", \"value\": \"demo\", \"origin\": "
				  "\"run spec\"}]}, {\"run\": {}, \"fields\": []}]}",
			      "x.yaml:3:7: warning: image: not pulled");
	}
	if (!strcmp(url, "/api/v1/runs/boom"))
		return answer(conn, 500, "<html>oops</html>", NULL);
	if (!strcmp(url, "/api/v1/runs/odd"))
		return answer(conn, 418, "{\"error\": {\"code\": \"teapot\", \"message\": \"short and "
				  "stout\"}}", NULL);
	if (!strcmp(url, "/api/v1/projects/demo/secrets"))
		return answer(conn, 200, "{\"items\": [{\"name\": \"hf\"}, {\"name\": \"wandb\"}]}",
			      NULL);
	if (!strncmp(url, "/api/v1/projects/demo/secrets/", 30))
		return answer(conn, 204, "", NULL);
	if (!strcmp(url, "/api/v1/profiles"))
		return answer(conn, 200, "{\"items\": []}", NULL);
	return answer(conn, 404, "{\"error\": {\"status\": 404, \"code\": \"not-found\", "
			  "\"message\": \"no run \\\"nope\\\"\"}}", NULL);
}

static void done(void *cls, struct MHD_Connection *conn, void **req,
		 enum MHD_RequestTerminationCode why)
{
	struct body *bd = *req;
	if (bd)
		berth_buf_release(&bd->b);
	free(bd);
	*req = NULL;
}

static int collect(void *ctx, const char *data, size_t len)
{
	return berth_buf_append(ctx, data, len);
}

static const char *first_text(const berth_error *err, size_t i)
{
	static char line[512];
	line[0] = '\0';
	if (berth_error_get(err, i))
		berth_problem_format(berth_error_get(err, i), line, sizeof(line));
	return line;
}

static void test_http(void)
{
	struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, serve,
						NULL, MHD_OPTION_NOTIFY_COMPLETED, done, NULL,
						MHD_OPTION_END);
	CHECK(d != NULL);
	if (!d)
		return;
	unsigned port = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port;
	char url[64];
	snprintf(url, sizeof(url), "127.0.0.1:%u/", port);

	berth_client *c = NULL, *anon = NULL;
	berth_error *err = NULL;
	CHECK_INT(berth_client_open(&c, url, "t0k", &err), 0);
	CHECK_INT(berth_client_open(&anon, url, "", &err), 0);
	CHECK(err == NULL);
	if (!c || !anon)
		goto out;
	char want[64];
	snprintf(want, sizeof(want), "http://127.0.0.1:%u", port);
	CHECK_STR(berth_client_url(c), want);

	/* submit: runs and warnings */
	berth_run_info **runs = NULL;
	size_t n = 0;
	CHECK_INT(berth_client_submit(c, NULL, "x.yaml", "image: x\n", 9, &runs, &n, &err), 0);
	CHECK_INT(n, 2);
	CHECK_STR(seen.last_query, "/api/v1/runs file=x.yaml");
	CHECK_STR(seen.last_body, "image: x\n");
	CHECK_STR(seen.last_auth, "Bearer t0k");
	CHECK_INT(berth_error_count(err), 2);
	CHECK_INT(berth_error_errors(err), 0);
	CHECK_STR(first_text(err, 0), "x.yaml:3:7: warning: image: not pulled");
	CHECK_STR(first_text(err, 1), "warning: a bare one");
	berth_run_info_list_free(runs, n);
	berth_error_free(err);
	err = NULL;

	/* a refused spec: every problem, with its code and place */
	CHECK_INT(berth_client_submit(c, NULL, "x.yaml", "bad", 3, &runs, &n, &err), -BERTH_EQUANTITY);
	CHECK(runs == NULL && n == 0);
	CHECK_INT(berth_error_count(err), 2);
	CHECK_STR(first_text(err, 0), "x.yaml:12:10: resources.mem.requests: \"32Gb\" is not a quantity");
	CHECK_STR(first_text(err, 1), "warning: careful");
	CHECK_INT(berth_error_get(err, 1) ? berth_error_get(err, 1)->code : 0, BERTH_EPOLICY);
	berth_error_free(err);
	err = NULL;

	/* no token: the server's 401 */
	CHECK_INT(berth_client_submit(anon, "demo", NULL, "x", 1, &runs, &n, &err), -BERTH_EAUTH);
	CHECK_STR(first_text(err, 0), "no token or an unknown one");
	CHECK_STR(seen.last_query, "/api/v1/projects/demo/runs file=spec.yaml");
	CHECK_STR(seen.last_auth, "");
	berth_error_free(err);
	err = NULL;

	/* get, errors */
	berth_run_info *one = NULL;
	CHECK_INT(berth_client_get(c, "a1", &one, &err), 0);
	CHECK(one && !strcmp(one->id, "a1") && one->state == BERTH_STATE_RUNNING);
	berth_run_info_free(one);
	CHECK_INT(berth_client_get(c, "nope", &one, &err), -BERTH_ENOTFOUND);
	CHECK_STR(first_text(err, 0), "no run \"nope\"");
	berth_error_free(err);
	err = NULL;
	CHECK_INT(berth_client_get(c, "boom", &one, &err), -BERTH_EINTERNAL);
	CHECKF(strstr(first_text(err, 0), "answered HTTP 500") != NULL, "%s", first_text(err, 0));
	berth_error_free(err);
	err = NULL;
	CHECK_INT(berth_client_get(c, "odd", &one, &err), -BERTH_EARG);
	CHECK_STR(first_text(err, 0), "short and stout");
	berth_error_free(err);
	err = NULL;
	CHECK_INT(berth_client_get(c, "a b/c", &one, &err), -BERTH_ENOTFOUND);
	CHECK_STR(seen.last_query, "/api/v1/runs/a b/c "); /* MHD decodes %20; %2F stays one segment */
	berth_error_free(err);
	err = NULL;

	/* list follows the cursor */
	berth_run_filter f = {"demo", BERTH_STATE_RUNNING, NULL, 0};
	CHECK_INT(berth_client_list(c, &f, &runs, &n, &err), 0);
	CHECK_INT(n, 3);
	CHECK_STR(seen.last_query, "/api/v1/runs limit=1000&project=demo&state=Running&after=c1");
	berth_run_info_list_free(runs, n);
	/* a limit asks for what is left of it, and stops there; a selector goes as written */
	berth_run_filter lim = {NULL, -1, "team=a b,tier!=dev", 2};
	CHECK_INT(berth_client_list(c, &lim, &runs, &n, &err), 0);
	CHECK_INT(n, 2);
	CHECK_STR(seen.last_query, "/api/v1/runs limit=1&labelSelector=team=a b,tier!=dev&after=c1");
	berth_run_info_list_free(runs, n);
	/* none selected: an empty list, not a failure */
	berth_run_filter none = {NULL, -1, "team=none", 0};
	runs = NULL;
	CHECK_INT(berth_client_list(c, &none, &runs, &n, &err), 0);
	CHECK(runs != NULL && n == 0);
	berth_run_info_list_free(runs, n);

	/* stop, logs */
	CHECK_INT(berth_client_stop(c, "a1", 5, true, &err), 0);
	CHECK_STR(seen.last_query, "/api/v1/runs/a1/stop grace=5&wait=true");
	CHECK_STR(seen.last_method, "POST");
	CHECK_INT(berth_client_stop(c, "a1", -1, false, &err), 0);
	CHECK_STR(seen.last_query, "/api/v1/runs/a1/stop ");
	berth_buf log = BERTH_BUF_INIT;
	berth_log_opts lo = {.rank = -1, .follow = true};
	CHECK_INT(berth_client_logs(c, "a1", &lo, collect, &log, &err), 0);
	CHECK_STR(log.data, "line 1\nline 2\ndone\n");
	CHECK_STR(seen.last_query, "/api/v1/runs/a1/logs follow=true");
	berth_buf_release(&log);
	/* what is asked goes as query parameters, the duration in ms; nothing else */
	lo = (berth_log_opts){.rank = 2, .tail = 5, .since_ms = 90000, .timestamps = true};
	CHECK_INT(berth_client_logs(c, "a1", &lo, collect, &log, &err), 0);
	CHECK_STR(seen.last_query, "/api/v1/runs/a1/logs rank=2&tail=5&since=90000ms&timestamps=true");
	berth_buf_release(&log);
	CHECK_INT(berth_client_logs(c, "a1", NULL, collect, &log, &err), 0);
	CHECK_STR(seen.last_query, "/api/v1/runs/a1/logs ");
	berth_buf_release(&log);
	lo = (berth_log_opts){.rank = -1, .tail = BERTH_LOG_TAIL_MAX + 1};
	CHECK_INT(berth_client_logs(c, "a1", &lo, collect, &log, &err), -BERTH_EARG);
	berth_error_free(err);
	err = NULL;
	CHECK_INT(berth_client_logs(c, "nope", NULL, collect, &log, &err), -BERTH_ENOTFOUND);
	CHECK(log.len == 0);
	berth_error_free(err);
	err = NULL;

	/* delete, events, the server's check of a spec */
	CHECK_INT(berth_client_delete(c, "a1", &err), 0);
	CHECK_STR(seen.last_method, "DELETE");
	CHECK_INT(berth_client_delete(c, "r1", &err), -BERTH_ECONFLICT);
	CHECK(err && strstr(berth_error_get(err, 0)->message, "stop it before deleting it"));
	berth_error_free(err);
	err = NULL;
	char *ev = NULL;
	size_t evlen = 0;
	CHECK_INT(berth_client_events(c, "a1", &ev, &evlen, &err), 0);
	CHECK(ev && strstr(ev, "\"Started\"") && evlen == strlen(ev));
	free(ev);
	char **runs2 = NULL;
	size_t nruns = 0;
	CHECK_INT(berth_client_validate(c, NULL, "x.yaml", "project: demo\n", 14, &runs2, &nruns, &err), 0);
	CHECK_STR(seen.last_query, "/api/v1/validate file=x.yaml");
	CHECK_INT(nruns, 2);
	CHECK(nruns == 2 && strstr(runs2[0], "\"path\": \"project\""));
	/* the warnings of the headers come back as warnings */
	CHECK(err && berth_error_count(err) == 2 && !berth_error_errors(err));
	char *table = NULL;
	size_t tlen = 0;
	berth_error *e2 = NULL;
	CHECK_INT(nruns == 2 ? berth_explain_json_format(runs2[0], strlen(runs2[0]), BERTH_EXPLAIN_TABLE,
							  &table, &tlen, &e2) : -1, 0);
	CHECK(table && strstr(table, "id: x\n") && strstr(table, "project  demo   run spec"));
	free(table);
	berth_error_free(e2);
	for (size_t i = 0; i < nruns; i++)
		free(runs2[i]);
	free(runs2);
	berth_error_free(err);
	err = NULL;
	CHECK_INT(berth_client_validate(c, "demo", NULL, "bad", 3, &runs2, &nruns, &err), -BERTH_EPOLICY);
	CHECK_STR(seen.last_query, "/api/v1/projects/demo/validate file=spec.yaml");
	CHECK(err && berth_error_count(err) == 1 && berth_error_get(err, 0)->line == 2);
	berth_error_free(err);
	err = NULL;

	/* secrets */
	CHECK_INT(berth_client_secret_set(c, "demo", "hf", "a\"b\\c\n\xc3\xa9", 8, &err), 0);
	CHECK_STR(seen.last_method, "PUT");
	CHECK_STR(seen.last_body, "{\"value\": \"a\\\"b\\\\c\\u000a\xc3\xa9\"}");
	CHECK_INT(berth_client_secret_set(c, "demo", "hf", "\xff", 1, &err), -BERTH_EARG);
	berth_error_free(err);
	err = NULL;
	char **names = NULL;
	CHECK_INT(berth_client_secret_names(c, "demo", &names, &n, &err), 0);
	CHECK_INT(n, 2);
	if (n == 2) {
		CHECK_STR(names[0], "hf");
		CHECK_STR(names[1], "wandb");
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	CHECK_INT(berth_client_secret_delete(c, "demo", "hf", &err), 0);
	CHECK_STR(seen.last_method, "DELETE");
	CHECK_STR(seen.last_query, "/api/v1/projects/demo/secrets/hf ");

	char *json = NULL;
	size_t jl;
	CHECK_INT(berth_client_profiles(c, NULL, &json, &jl, &err), 0);
	CHECK_STR(json, "{\"items\": []}");
	free(json);
	CHECK(err == NULL);
out:
	berth_client_close(c);
	berth_client_close(anon);
	MHD_stop_daemon(d);

	/* nobody listens there any more */
	err = NULL;
	CHECK_INT(berth_client_open(&c, url, NULL, &err), 0);
	CHECK_INT(berth_client_get(c, "a1", &one, &err), -BERTH_EIO);
	snprintf(want, sizeof(want), "cannot reach the berth server at http://127.0.0.1:%u: ",
		 port);
	CHECKF(!strncmp(first_text(err, 0), want, strlen(want)), "%s", first_text(err, 0));
	berth_error_free(err);
	berth_client_close(c);
}

static void test_open(void)
{
	berth_client *c = NULL;
	berth_error *err = NULL;
	unsetenv("BERTH_SERVER");
	CHECK_INT(berth_client_open(&c, NULL, NULL, &err), -BERTH_EARG);
	CHECK(c == NULL);
	berth_error_free(err);
	err = NULL;
	CHECK_INT(berth_client_open(&c, "ftp://x", NULL, &err), -BERTH_EARG);
	berth_error_free(err);
	err = NULL;
	CHECK_INT(berth_client_open(&c, "http://x", "a\nb", &err), -BERTH_EARG);
	berth_error_free(err);
	err = NULL;
	setenv("BERTH_SERVER", "https://berth.example.com/base//", 1);
	CHECK_INT(berth_client_open(&c, NULL, NULL, &err), 0);
	CHECK_STR(c ? berth_client_url(c) : NULL, "https://berth.example.com/base");
	berth_client_close(c);
	berth_client_close(NULL);
	unsetenv("BERTH_SERVER");
}

T_MAIN(T(test_roundtrip), T(test_parse_shapes), T(test_profiles_format), T(test_http),
       T(test_open))
