/*
 * test_backend.c - the backend interface (berth/backend.h over runtime.h)
 * with a fake kind registered through the registry: every operation of the
 * public face reaches the kind the run was submitted to, generic code makes
 * no kind checks, and allocation failures anywhere on open -> submit -> get
 * -> wait -> stop -> delete fail cleanly (no leak, no crash: ASan).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/record.h"
#include "backend/runtime.h"
#include "base/internal.h"
#include "berth/berth.h"
#include "t.h"

/* ---- the fake kind: records in the store, every call counted ------------------ */

static struct {
	int open, open_primary, close, admit, submit, stop, reconcile, logs, wait, refresh, forget,
		dry_run;
	bool refuse;    /* admit refuses */
	int wait_polls; /* wait times out this many times before the run is final */
} calls;

typedef struct fake_state {
	int opened;
} fake_state;

static const backend_ops fake_ops;

static int fake_open(berth_backend *b, bool primary, berth_error **err)
{
	fake_state *s = berth_calloc(1, sizeof(*s));
	if (!s)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	s->opened = 1;
	backend_state_set(b, &fake_ops, s);
	calls.open++;
	calls.open_primary += primary;
	return 0;
}

static void fake_close(berth_backend *b)
{
	free(backend_state(b, &fake_ops));
	backend_state_set(b, &fake_ops, NULL);
	calls.close++;
}

static int fake_admit(berth_backend *b, const berth_run *run, berth_error **err)
{
	calls.admit++;
	return calls.refuse ? berth_fail(err, BERTH_EPOLICY, "the fake kind refuses %s", run->name)
			    : 0;
}

static int fake_submit(berth_backend *b, const berth_run *const *runs, size_t n,
		       const char *spec_text, const submit_check *check, berth_run_info **out,
		       berth_error **err)
{
	calls.submit++;
	for (size_t i = 0; i < n; i++) {
		int rc = fake_admit(b, runs[i], err);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < n; i++) {
		store_run *r = berth_calloc(1, sizeof(*r));
		int rc = r ? record_new(b->policy, runs[i], spec_text, fake_ops.kind, r, err)
			   : berth_fail(err, BERTH_ENOMEM, "out of memory");
		if (!rc)
			rc = record_insert(b->st, r, err);
		if (!rc && out && !(out[i] = record_info_take(r)))
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
		store_run_free(r);
		if (rc)
			return rc;
	}
	return 0;
}

/* Sets the run's state, as a kind does when it learns it. */
static int fake_set(berth_backend *b, const char *id, berth_state state, berth_error **err)
{
	store_run *r;
	int rc = store_run_get(b->st, id, &r, err);
	if (rc)
		return rc;
	r->info.state = state;
	rc = store_run_update(b->st, r, err);
	store_run_free(r);
	return rc;
}

static int fake_stop(berth_backend *b, const char *id, int grace_s, bool wait, berth_error **err)
{
	calls.stop++;
	return fake_set(b, id, BERTH_STATE_STOPPED, err);
}

static int fake_reconcile(berth_backend *b, berth_error **err)
{
	calls.reconcile++;
	return 0;
}

static int fake_logs(berth_backend *b, const char *id, const berth_log_opts *o, berth_log_write write,
		     void *ctx, berth_error **err)
{
	calls.logs++;
	return write(ctx, "fake log\n", 9);
}

static int fake_wait(berth_backend *b, const char *id, int64_t timeout_ms, berth_error **err)
{
	calls.wait++;
	if (calls.wait_polls > 0) {
		calls.wait_polls--;
		return berth_fail(err, BERTH_ETIMEOUT, "run \"%s\" is not finished after %lld ms", id,
				  (long long)timeout_ms);
	}
	return fake_set(b, id, BERTH_STATE_SUCCEEDED, err);
}

static int fake_refresh(berth_backend *b, const char *id, berth_error **err)
{
	calls.refresh++;
	return fake_set(b, id, BERTH_STATE_RUNNING, err);
}

static int fake_forget(berth_backend *b, const char *id, berth_error **err)
{
	calls.forget++;
	return 0;
}

static int fake_dry_run(berth_backend *b, const berth_run *run, berth_buf *report,
			berth_error **err)
{
	calls.dry_run++;
	return berth_buf_printf(report, "%s accepted\n", run->name) < 0 ? -BERTH_ENOMEM : 0;
}

static const backend_ops fake_ops = {
	.kind = "fake",
	.open = fake_open,
	.close = fake_close,
	.admit = fake_admit,
	.submit = fake_submit,
	.stop = fake_stop,
	.reconcile = fake_reconcile,
	.logs = fake_logs,
	.wait = fake_wait,
	.refresh = fake_refresh,
	.forget = fake_forget,
	.dry_run = fake_dry_run,
};

/* ---- helpers -------------------------------------------------------------------- */

static char *home;

static void setup(void)
{
	CHECK_INT(backend_kind_register(&fake_ops), 0);
	memset(&calls, 0, sizeof(calls));
	free(home);
	home = t_temp_dir("berth-backend");
}

static void teardown(void)
{
	if (home)
		t_rm_rf(home);
	free(home);
	home = NULL;
}

static int open_fake(berth_backend **b, berth_error **err)
{
	berth_backend_opts o = {.home = home, .passive = true};
	return berth_backend_open(b, "fake", &o, err);
}

static const char SPEC[] = "name: train\nfunction:\n  image: python:3.11\n  command: [\"true\"]\n";

static int collect(void *ctx, const char *data, size_t len)
{
	berth_buf *b = ctx;
	return berth_buf_append(b, data, len) < 0 ? -1 : 0;
}

/* ---- tests ------------------------------------------------------------------------- */

static void test_registry(void)
{
	setup();
	CHECK(backend_kind("local") != NULL);
	CHECK(backend_kind("kubernetes") != NULL);
	CHECK(backend_kind("fake") == &fake_ops);
	CHECK(backend_kind("nope") == NULL);
	CHECK_STR(backend_kind_at(0)->kind, "local"); /* the default */
	/* registering twice is one entry */
	CHECK_INT(backend_kind_register(&fake_ops), 0);
	size_t n = 0;
	while (backend_kind_at(n))
		n++;
	CHECK_INT(n, 3);
	/* an unknown kind is refused with the registry's names */
	berth_backend *b = NULL;
	berth_error *err = NULL;
	berth_backend_opts o = {.home = home};
	CHECK_INT(berth_backend_open(&b, "nope", &o, &err), -BERTH_EARG);
	CHECK(b == NULL);
	const berth_problem *p = berth_error_get(err, 0);
	CHECK(p && strstr(p->message, "local, kubernetes, fake"));
	CHECK(p && !strstr(p->message, "did you mean"));
	berth_error_free(err);
	/* a near one is named, and the names are the registry's (berth_backend_kind_name) */
	err = NULL;
	CHECK_INT(berth_backend_open(&b, "kubernets", &o, &err), -BERTH_EARG);
	p = berth_error_get(err, 0);
	CHECK_STR(p ? p->message : "", "backend \"kubernets\" is not one of local, kubernetes, fake; "
				       "did you mean \"kubernetes\"?");
	berth_error_free(err);
	CHECK_STR(berth_backend_kind_name(0), "local");
	CHECK_STR(berth_backend_kind_name(2), "fake");
	CHECK(berth_backend_kind_name(3) == NULL);
	teardown();
}

static void test_every_operation_reaches_its_kind(void)
{
	setup();
	berth_backend *b = NULL;
	berth_error *err = NULL;
	CHECK_INT(open_fake(&b, &err), 0);
	CHECK(b != NULL);
	if (!b) {
		berth_error_free(err);
		teardown();
		return;
	}
	/* every kind is opened; only the named one as the primary */
	CHECK_INT(calls.open, 1);
	CHECK_INT(calls.open_primary, 1);
	CHECK(backend_state(b, &fake_ops) != NULL);
	CHECK(backend_state(b, backend_kind("local")) != NULL);

	berth_batch *batch = NULL;
	berth_batch_opts bo = {.run_id = "f1"};
	CHECK_INT(berth_batch_plan(&batch, b, SPEC, strlen(SPEC), &bo, &err), 0);
	berth_run_info **infos = NULL;
	size_t n = 0;
	CHECK_INT(berth_batch_submit(batch, &infos, &n, &err), 0);
	CHECK_INT(calls.submit, 1);
	CHECK_INT(n, 1);
	if (n == 1) {
		CHECK_STR(infos[0]->backend, "fake");
		CHECK_STR(infos[0]->id, "f1");
		CHECK_INT(infos[0]->state, BERTH_STATE_PENDING);
	}
	berth_run_info_list_free(infos, n);

	/* a dry run goes to the handle's kind */
	char *report = NULL;
	CHECK_INT(berth_batch_dry_run(batch, &report, &err), 0);
	CHECK_INT(calls.dry_run, 1);
	CHECK(report && strstr(report, "train-f1 accepted"));
	free(report);
	berth_batch_free(batch);

	/* a passive handle reads records as stored: no refresh */
	berth_run_info *i = NULL;
	CHECK_INT(berth_backend_get(b, "f1", &i, &err), 0);
	CHECK_INT(calls.refresh, 0);
	CHECK(i && i->state == BERTH_STATE_PENDING);
	berth_run_info_free(i);
	berth_backend_close(b);
	CHECK_INT(calls.close, 1);

	/* an active handle asks the kind of an unfinished run */
	berth_backend_opts o = {.home = home};
	CHECK_INT(berth_backend_open(&b, "local", &o, &err), 0);
	CHECK_INT(calls.open_primary, 1); /* local is the primary now */
	CHECK_INT(calls.reconcile, 0);    /* the fake kind reconciles when asked to */
	i = NULL;
	CHECK_INT(berth_backend_get(b, "f1", &i, &err), 0);
	CHECK_INT(calls.refresh, 1);
	CHECK(i && i->state == BERTH_STATE_RUNNING);
	berth_run_info_free(i);

	/* list brings kinds that can be behind up to date */
	berth_run_info **list = NULL;
	CHECK_INT(berth_backend_list(b, NULL, &list, &n, &err), 0);
	CHECK_INT(calls.reconcile, 1);
	CHECK_INT(n, 1);
	berth_run_info_list_free(list, n);
	CHECK_INT(berth_backend_reconcile(b, &err), 0);
	CHECK_INT(calls.reconcile, 2);

	/* logs of the run come from its kind, whatever the handle's */
	berth_buf log = BERTH_BUF_INIT;
	CHECK_INT(berth_backend_logs(b, "f1", NULL, collect, &log, &err), 0);
	CHECK_INT(calls.logs, 1);
	CHECK_STR(log.data, "fake log\n");
	berth_buf_release(&log);

	/* a run that is not final cannot be deleted, and its kind forgets nothing */
	CHECK_INT(berth_run_delete(b, "f1", &err), -BERTH_ECONFLICT);
	CHECK_INT(calls.forget, 0);
	berth_error_free(err);
	err = NULL;

	/* wait: the kind's time limit is the caller's */
	calls.wait_polls = 1;
	CHECK_INT(berth_backend_wait(b, "f1", 10, NULL, &err), -BERTH_ETIMEOUT);
	CHECK_INT(berth_code_exit_status(berth_error_code(err)), 1);
	CHECK_INT(berth_code_http_status(berth_error_code(err)), 504);
	berth_error_free(err);
	err = NULL;
	i = NULL;
	CHECK_INT(berth_backend_wait(b, "f1", -1, &i, &err), 0);
	CHECK(i && i->state == BERTH_STATE_SUCCEEDED);
	berth_run_info_free(i);

	/* stop reaches the kind */
	CHECK_INT(berth_backend_stop(b, "f1", 0, &err), 0);
	CHECK_INT(calls.stop, 1);

	/* delete: the kind forgets what it left, then the record goes */
	CHECK_INT(berth_run_delete(b, "f1", &err), 0);
	CHECK_INT(calls.forget, 1);
	CHECK_INT(berth_backend_get(b, "f1", &i, &err), -BERTH_ENOTFOUND);
	berth_error_free(err);
	err = NULL;

	/* a dry run with a kind that has none names one that has */
	CHECK_INT(berth_batch_plan(&batch, b, SPEC, strlen(SPEC), &bo, &err), 0);
	report = NULL;
	CHECK_INT(berth_batch_dry_run(batch, &report, &err), -BERTH_EARG);
	const berth_problem *p = berth_error_get(err, 0);
	CHECK(p && strstr(p->message, "needs the kubernetes backend (--backend kubernetes)"));
	berth_batch_free(batch);
	berth_error_free(err);
	berth_backend_close(b);
	teardown();
}

static void test_refused_by_the_kind(void)
{
	setup();
	berth_backend *b = NULL;
	berth_error *err = NULL;
	CHECK_INT(open_fake(&b, &err), 0);
	calls.refuse = true;
	berth_batch *batch = NULL;
	berth_batch_opts bo = {.run_id = "r1"};
	CHECK_INT(berth_batch_plan(&batch, b, SPEC, strlen(SPEC), &bo, &err), 0);
	CHECK_INT(berth_batch_submit(batch, NULL, NULL, &err), -BERTH_EPOLICY);
	const berth_problem *p = berth_error_get(err, 0);
	CHECK(p && strstr(p->message, "the fake kind refuses train-r1"));
	berth_error_free(err);
	err = NULL;
	berth_run_info **list = NULL;
	size_t n = 9;
	CHECK_INT(berth_backend_list(b, NULL, &list, &n, &err), 0);
	CHECK_INT(n, 0); /* nothing was stored */
	berth_run_info_list_free(list, n);
	berth_batch_free(batch);
	berth_backend_close(b);
	teardown();
}

/* A store made to say what berth never writes: a kind no berth has, an id
 * that is a path. Operations fail with a reason; nothing outside the run's
 * directory is touched. */
static void test_tampered_records(void)
{
	setup();
	berth_backend *b = NULL;
	berth_error *err = NULL;
	berth_backend_opts o = {.home = home, .passive = true};
	CHECK_INT(berth_backend_open(&b, NULL, &o, &err), 0);
	if (!b) {
		teardown();
		return;
	}
	CHECK(backend_kind(NULL) == NULL);
	const char *ids[] = {"evil1", ".."};
	const char *kinds[] = {"evil", "local"};
	for (size_t k = 0; k < 2; k++) {
		store_run *r = berth_calloc(1, sizeof(*r));
		r->info.id = berth_strdup(ids[k]);
		r->info.name = berth_strdup("x");
		r->info.project = berth_strdup("default");
		r->info.backend = berth_strdup(kinds[k]);
		r->info.action = berth_strdup("job");
		r->info.state = BERTH_STATE_SUCCEEDED;
		CHECK_INT(record_insert(b->st, r, &err), 0);
		store_run_free(r);
	}
	/* a kind this berth does not have: an error that says so, no guess */
	CHECK_INT(berth_backend_stop(b, "evil1", 0, &err), -BERTH_EINTERNAL);
	const berth_problem *p = berth_error_get(err, 0);
	CHECK(p && strstr(p->message, "which this berth does not have"));
	berth_error_free(err);
	err = NULL;
	CHECK_INT(berth_backend_wait(b, "evil1", 10, NULL, &err), -BERTH_EINTERNAL);
	berth_error_free(err);
	err = NULL;
	/* an id that is a path: deleting its record removes no directory */
	char probe[4096];
	snprintf(probe, sizeof(probe), "%s/berth.db", home);
	CHECK_INT(berth_run_delete(b, "..", &err), 0);
	CHECK(access(probe, F_OK) == 0);
	snprintf(probe, sizeof(probe), "%s/runs", home);
	CHECK(access(probe, F_OK) == 0);
	berth_buf log = BERTH_BUF_INIT;
	CHECK_INT(berth_backend_logs(b, "..", NULL, collect, &log, &err), -BERTH_ENOTFOUND);
	berth_buf_release(&log);
	berth_error_free(err);
	berth_backend_close(b);
	teardown();
}

/* Every allocation on the way fails in turn: each step fails with a code
 * (out of memory, or what the failure turned into), never crashes or leaks;
 * a pass with no failure left to inject ends the loop. */
static void test_allocation_failures(void)
{
	setup();
	int passes = 0;
	for (long n = 1; n < 100000; n++) {
		berth_backend *b = NULL;
		berth_error *err = NULL;
		berth_batch *batch = NULL;
		berth_run_info **infos = NULL, *i = NULL;
		size_t cnt = 0;
		char id[32];
		snprintf(id, sizeof(id), "a%ld", n);
		berth_batch_opts bo = {.run_id = id};
		berth_fail_alloc_after = n;
		int rc = open_fake(&b, &err);
		if (!rc)
			rc = berth_batch_plan(&batch, b, SPEC, strlen(SPEC), &bo, &err);
		if (!rc)
			rc = berth_batch_submit(batch, &infos, &cnt, &err);
		if (!rc)
			rc = berth_backend_get(b, id, &i, &err);
		if (!rc)
			rc = berth_backend_wait(b, id, -1, NULL, &err);
		if (!rc)
			rc = berth_backend_stop(b, id, 0, &err);
		if (!rc)
			rc = berth_run_delete(b, id, &err);
		bool injected = berth_fail_alloc_after == 0;
		berth_fail_alloc_after = 0;
		/* a step fails only because an allocation did, and says so with
		 * the code it returns (out of memory, or what that turned into) */
		CHECKF(rc == 0 || injected, "pass %ld: failed (%d) with no failure injected", n, rc);
		CHECKF(rc == 0 || (rc < 0 && err && berth_error_count(err) > 0),
		       "pass %ld: failed (%d) without a reason", n, rc);
		berth_run_info_free(i);
		berth_run_info_list_free(infos, cnt);
		berth_batch_free(batch);
		berth_error_free(err);
		berth_backend_close(b);
		passes++;
		if (!injected) {
			CHECKF(rc == 0, "pass %ld with no failure injected: %d", n, rc);
			break;
		}
	}
	CHECKF(passes > 20, "only %d passes: the loop did not reach the operations", passes);
	teardown();
}

/* A record as bytes (record_pack) comes back whole (record_unpack), every
 * field; bytes that are not exactly one packed record are refused. */
static void test_record_packed(void)
{
	berth_run_info in = {
		.id = "r1", .name = "train", .project = "p1", .backend = "local", .profile = "gpu",
		.image = "img", .action = "job", .state = BERTH_STATE_FAILED,
		.reason = "exit code 3\nsecond line, \"quoted\", tab\t", .priority_class = "high",
		.priority = -7, .created = 1, .started = 2, .finished = INT64_MAX, .cpu_milli = 1500,
		.mem = 1LL << 40, .gpus = 2, .disk = 3, .workers = 4, .worker_states = "Running,Failed",
		.cpu_limit_milli = 2000, .mem_limit = 5, .gpu_ids = "0,1", .exit_code = 3,
		.signal = 9, .oom_killed = true, .attempts = 2, .cpu_usage_ns = 123456789,
		.mem_peak = 6, .enforcement = "cgroup v2", .log_path = "/l", .target = NULL,
		.effective = "{}", .labels = "a=b,c=", .submitted_by = "user:root"};
	berth_buf b = BERTH_BUF_INIT;
	record_pack(&in, &b);
	CHECK(!b.failed && b.len > 0);
	berth_run_info *out = NULL;
	CHECK_INT(record_unpack(b.data, b.len, &out), 0);
	if (out) {
		/* the same bytes again: every field came back */
		berth_buf again = BERTH_BUF_INIT;
		record_pack(out, &again);
		CHECK(again.len == b.len && !memcmp(again.data, b.data, b.len));
		CHECK_STR(out->reason, in.reason);
		CHECK_STR(out->submitted_by, "user:root");
		CHECK(!out->target);
		CHECK_INT(out->finished, INT64_MAX);
		CHECK_INT(out->state, BERTH_STATE_FAILED);
		CHECK(out->oom_killed);
		berth_buf_release(&again);
		berth_run_info_free(out);
	}
	/* cut anywhere, or one byte more: not a record */
	for (size_t n = 0; n < b.len; n++) {
		out = NULL;
		CHECKF(record_unpack(b.data, n, &out) == -1 && !out, "cut at %zu of %zu", n, b.len);
	}
	char *more = malloc(b.len + 1);
	if (more) {
		memcpy(more, b.data, b.len);
		more[b.len] = 0;
		CHECK_INT(record_unpack(more, b.len + 1, &out), -1);
		/* a string's length that runs past the end, or a NUL inside it */
		int64_t huge = INT64_MAX;
		memcpy(more, &huge, sizeof(huge));
		CHECK_INT(record_unpack(more, b.len, &out), -1);
		memcpy(more, b.data, b.len);
		more[sizeof(int64_t)] = 0; /* in "r1" */
		CHECK_INT(record_unpack(more, b.len, &out), -1);
		free(more);
	}
	berth_buf_release(&b);
}

T_MAIN(T(test_registry), T(test_record_packed), T(test_every_operation_reaches_its_kind), T(test_refused_by_the_kind),
       T(test_tampered_records), T(test_allocation_failures))
