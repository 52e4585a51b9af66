/*
 * test_kueue.c - src/backend/kubernetes/kueue.c: a suspended Job's queue
 * label, and the map from a Kueue Workload's conditions to a run's state
 * and reason (the requests are tests/kube_real.sh's, on a real API server).
 */
#include <stdio.h>
#include <string.h>

#include "backend/kubernetes/kueue.h"
#include "base/arena.h"
#include "spec/yaml.h"
#include "t.h"

/* json parsed into a (NULL, and a failed check, when it is not JSON). */
static const berth_node *json(berth_arena *a, const char *text)
{
	const berth_node *root = NULL;
	int rc = berth_json_root(a, "test", text, strlen(text), &root, NULL);
	CHECKF(rc == 0, "not JSON: %s", text);
	return rc ? NULL : root;
}

static void test_job_read(void)
{
	berth_arena *a = berth_arena_new();
	kueue_view k;
	kueue_job_read(&k, json(a, "{\"metadata\":{\"labels\":{\"kueue.x-k8s.io/queue-name\":\"team-a\"}},"
				   "\"spec\":{\"suspend\":true}}"));
	CHECK(k.suspended);
	CHECK_STR(k.queue, "team-a");
	CHECK(!k.asked);
	char reason[600];
	CHECK_INT(kueue_state(&k, reason, sizeof(reason)), BERTH_STATE_PENDING);
	CHECK_STR(reason, "suspended, waiting for Kueue to admit it (LocalQueue team-a)");
	/* resumed: not suspended; and a label that is not a label value is no queue */
	kueue_job_read(&k, json(a, "{\"metadata\":{\"labels\":{\"kueue.x-k8s.io/queue-name\":\"a b\"}},"
				   "\"spec\":{\"suspend\":false}}"));
	CHECK(!k.suspended);
	CHECK_STR(k.queue, "");
	/* suspended by someone else than Kueue */
	kueue_job_read(&k, json(a, "{\"spec\":{\"suspend\":true}}"));
	CHECK(k.suspended);
	CHECK_INT(kueue_state(&k, reason, sizeof(reason)), BERTH_STATE_PENDING);
	CHECK_STR(reason, "its Job is suspended (spec.suspend: true): no pod is made until something resumes it");
	berth_arena_free(a);
}

struct row {
	const char *workload; /* JSON */
	berth_state state;
	const char *reason;
};

static void test_workload_map(void)
{
	const struct row rows[] = {
		/* Kueue has not looked at it yet */
		{"{\"metadata\":{\"name\":\"job-t-1\"}}", BERTH_STATE_PENDING,
		 "queued in LocalQueue q: Kueue has not placed its Workload job-t-1 yet"},
		/* no quota: Kueue's words */
		{"{\"metadata\":{\"name\":\"job-t-1\"},\"status\":{\"conditions\":[{\"type\":\"QuotaReserved\","
		 "\"status\":\"False\",\"reason\":\"Pending\",\"message\":\"insufficient unused quota\"}]}}",
		 BERTH_STATE_PENDING, "queued in LocalQueue q: insufficient unused quota (Workload job-t-1, Kueue's words)"},
		/* an older Kueue: Admitted only */
		{"{\"metadata\":{\"name\":\"job-t-1\"},\"status\":{\"conditions\":[{\"type\":\"Admitted\","
		 "\"status\":\"False\",\"message\":\"LocalQueue q doesn't exist\"}]}}",
		 BERTH_STATE_PENDING, "queued in LocalQueue q: LocalQueue q doesn't exist (Workload job-t-1, Kueue's words)"},
		/* quota, and admission checks to pass */
		{"{\"metadata\":{\"name\":\"w\"},\"status\":{\"admission\":{\"clusterQueue\":\"cq\"},\"conditions\":["
		 "{\"type\":\"QuotaReserved\",\"status\":\"True\"},{\"type\":\"Admitted\",\"status\":\"False\","
		 "\"message\":\"The workload has not all checks ready\"}]}}",
		 BERTH_STATE_PENDING, "quota reserved in ClusterQueue cq, waiting for its admission checks: The workload "
		 "has not all checks ready (Workload w, Kueue's words)"},
		/* admitted: Kueue resumes the Job next */
		{"{\"metadata\":{\"name\":\"w\"},\"status\":{\"admission\":{\"clusterQueue\":\"cq\"},\"conditions\":["
		 "{\"type\":\"QuotaReserved\",\"status\":\"True\"},{\"type\":\"Admitted\",\"status\":\"True\"}]}}",
		 BERTH_STATE_PENDING, "admitted by Kueue to ClusterQueue cq; Kueue resumes its Job (Workload w)"},
		/* preempted (Kueue 0.9+: its own condition says more than Evicted) */
		{"{\"metadata\":{\"name\":\"w\"},\"status\":{\"conditions\":["
		 "{\"type\":\"Evicted\",\"status\":\"True\",\"reason\":\"Preempted\",\"message\":\"Preempted\"},"
		 "{\"type\":\"Preempted\",\"status\":\"True\",\"reason\":\"InClusterQueue\",\"message\":\"Preempted to "
		 "accommodate a workload (UID: u1) due to prioritization in the ClusterQueue\"},"
		 "{\"type\":\"QuotaReserved\",\"status\":\"False\",\"message\":\"waiting\"}]}}",
		 BERTH_STATE_PENDING, "preempted by Kueue: InClusterQueue: Preempted to accommodate a workload (UID: u1) due "
		 "to prioritization in the ClusterQueue; queued again in LocalQueue q: waiting (Workload w, Kueue's words)"},
		/* evicted, then given quota again: the eviction is over */
		{"{\"metadata\":{\"name\":\"w\"},\"status\":{\"admission\":{\"clusterQueue\":\"cq\"},\"conditions\":["
		 "{\"type\":\"Evicted\",\"status\":\"False\",\"reason\":\"QuotaReserved\"},"
		 "{\"type\":\"QuotaReserved\",\"status\":\"True\"},{\"type\":\"Admitted\",\"status\":\"True\"}]}}",
		 BERTH_STATE_PENDING, "admitted by Kueue to ClusterQueue cq; Kueue resumes its Job (Workload w)"},
		/* deactivated */
		{"{\"metadata\":{\"name\":\"w\"},\"spec\":{\"active\":false},\"status\":{\"conditions\":["
		 "{\"type\":\"Evicted\",\"status\":\"True\",\"reason\":\"InactiveWorkload\"}]}}",
		 BERTH_STATE_PENDING, "its Workload is deactivated in Kueue (spec.active: false): it is not queued until it "
		 "is activated again (Workload w)"},
		/* finished: failed is the run's end; a success is the Job's to say */
		{"{\"metadata\":{\"name\":\"w\"},\"status\":{\"conditions\":[{\"type\":\"Finished\",\"status\":\"True\","
		 "\"reason\":\"Failed\",\"message\":\"rejected\"}]}}",
		 BERTH_STATE_FAILED, "Kueue finished its Workload as failed: Failed: rejected (Workload w, Kueue's words)"},
		{"{\"metadata\":{\"name\":\"w\"},\"status\":{\"conditions\":[{\"type\":\"Finished\",\"status\":\"True\","
		 "\"reason\":\"Succeeded\",\"message\":\"Job finished successfully\"}]}}",
		 BERTH_STATE_PENDING, "Kueue finished its Workload: Succeeded: Job finished successfully (Workload w, Kueue's "
		 "words)"},
	};
	berth_arena *a = berth_arena_new();
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		kueue_view k;
		memset(&k, 0, sizeof(k));
		k.suspended = true;
		snprintf(k.queue, sizeof(k.queue), "q");
		const berth_node *wl = json(a, rows[i].workload);
		if (!wl)
			continue;
		kueue_workload_map(wl, &k);
		char reason[600];
		berth_state st = kueue_state(&k, reason, sizeof(reason));
		CHECKF(st == rows[i].state, "row %zu: state %d, want %d", i, (int)st, (int)rows[i].state);
		CHECKF(!strcmp(reason, rows[i].reason), "row %zu: reason \"%s\"\n     want \"%s\"", i, reason,
		       rows[i].reason);
	}
	berth_arena_free(a);
}

/* Kueue's words are capped: a message of any length fits the reason */
static void test_long_words(void)
{
	berth_arena *a = berth_arena_new();
	char text[5000];
	int n = snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"w\"},\"status\":{\"conditions\":["
			 "{\"type\":\"QuotaReserved\",\"status\":\"False\",\"message\":\"");
	memset(text + n, 'x', 3000);
	snprintf(text + n + 3000, sizeof(text) - (size_t)n - 3000, "\"}]}}");
	kueue_view k;
	memset(&k, 0, sizeof(k));
	k.suspended = true;
	snprintf(k.queue, sizeof(k.queue), "q");
	const berth_node *wl = json(a, text);
	if (wl)
		kueue_workload_map(wl, &k);
	CHECK(strlen(k.reason) < sizeof(k.reason));
	CHECK(strstr(k.reason, "(Workload w, Kueue's words)") != NULL);
	berth_arena_free(a);
}

T_MAIN(T(test_job_read), T(test_workload_map), T(test_long_words))
