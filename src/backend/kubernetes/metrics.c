/*
 * metrics.c - a run's use over time on a cluster: what the metrics API
 * (metrics.k8s.io, as metrics-server serves it) says each of its pods uses,
 * summed over the pod's containers and by worker, into the store as the
 * local supervisor's sampler puts its own (a worker's CPU in millicores,
 * memory in bytes; the API says nothing of GPUs). A server samples its
 * Running runs as it reconciles them; a cluster without the API, or an
 * identity that may not read it, is asked again only after METRICS_RETRY_MS.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/kubernetes/kind.h"
#include "base/arena.h"
#include "spec/yaml.h"

#define METRICS_RETRY_MS 300000
/* The most of a run's samples is STORE_SAMPLES a worker: past half of them,
 * a long run is sampled less often, so that its whole span is kept. */
#define METRICS_SPAN_SHARE (STORE_SAMPLES / 2)
/* The pods of one run the API is read for, at most (a page). */
#define METRICS_PODS 1000

typedef struct worker_use {
	int64_t cpu_milli, mem;
	bool seen;
} worker_use;

/* A quantity's milliunits (CPU) or units (bytes); -1 when it is not one. */
static int64_t qty_of(const berth_node *n, bool milli)
{
	const char *s = berth_node_text(n);
	berth_quantity q;
	if (!s || berth_quantity_parse(&q, s, strlen(s), NULL) || berth_quantity_sign(&q) < 0)
		return -1;
	return milli ? berth_quantity_milli(&q) : berth_quantity_value(&q);
}

/* The worker a pod's metrics are of: by its name among the run's pods read
 * (they know an Indexed Job's completion index), else by the operators'
 * labels the API copies from the pod; a pod of no worker (a Deployment's
 * replica, an MPIJob's launcher) counts in worker 0. */
static int worker_of(const berth_node *item, const kpod *pods, size_t n)
{
	const char *name = berth_node_text(berth_node_at(item, "metadata.name"));
	for (size_t i = 0; name && i < n; i++)
		if (!strcmp(pods[i].name, name))
			return pods[i].index < 0 ? 0 : pods[i].index;
	int w = kpod_worker(item);
	return w < 0 ? 0 : w;
}

/* Sums the usage of each item of the list into use (by worker); the number
 * of items read, or -1 when the body is not a PodMetricsList. */
static long sum_use(berth_arena *a, const kube_reply *rep, const kpod *pods, size_t npods,
		    worker_use *use)
{
	const berth_node *root = NULL;
	if (berth_json_root(a, "the run's pod metrics", rep->body, rep->len, &root, NULL))
		return -1;
	const berth_node *items = berth_node_get(root, "items");
	if (!items || items->kind != BERTH_NODE_SEQ)
		return -1;
	long read = 0;
	for (size_t i = 0; i < items->len && i < METRICS_PODS; i++) {
		const berth_node *it = items->u.items[i];
		const berth_node *cs = berth_node_get(it, "containers");
		if (!cs || cs->kind != BERTH_NODE_SEQ)
			continue;
		int64_t cpu = 0, mem = 0;
		bool any = false;
		for (size_t j = 0; j < cs->len; j++) {
			int64_t c = qty_of(berth_node_at(cs->u.items[j], "usage.cpu"), true);
			int64_t m = qty_of(berth_node_at(cs->u.items[j], "usage.memory"), false);
			if (c < 0 || m < 0 || c > INT64_MAX / 2 - cpu || m > INT64_MAX / 2 - mem)
				continue;
			cpu += c;
			mem += m;
			any = true;
		}
		if (!any)
			continue;
		worker_use *u = &use[worker_of(it, pods, npods)];
		u->cpu_milli = u->cpu_milli + cpu < INT64_MAX / 2 ? u->cpu_milli + cpu : INT64_MAX / 2;
		u->mem = u->mem + mem < INT64_MAX / 2 ? u->mem + mem : INT64_MAX / 2;
		u->seen = true;
		read++;
	}
	return read;
}

void kube_sample_usage(berth_backend *b, const char *id, const char *ns, int64_t started,
		       const kpod *pods, size_t npods)
{
	kube_state *k = KUBE(b);
	int64_t every = backend_sample_ms(), now = store_now_ms();
	if (!every || !k->api || now < k->metrics_off_until)
		return;
	/* a long run is sampled less often: its span fits in the samples kept */
	if (started > 0 && now > started && (now - started) / METRICS_SPAN_SHARE > every)
		every = (now - started) / METRICS_SPAN_SHARE;
	int64_t last = 0;
	berth_error *e = NULL;
	if (store_sample_last(b->st, id, &last, &e) || (last && now - last < every)) {
		berth_error_free(e);
		return;
	}
	berth_buf path = BERTH_BUF_INIT;
	berth_buf_printf(&path, "/apis/metrics.k8s.io/v1beta1/namespaces/%s/pods?limit=%d&labelSelector=",
			 ns, METRICS_PODS);
	kube_put_escaped(&path, RUN_LABEL "=");
	kube_put_escaped(&path, id);
	kube_reply rep = {0};
	long status = 0;
	if (!path.failed && !kube_request(k->api, "GET", path.data, NULL, NULL, 0, &rep, &e))
		status = rep.status;
	berth_error_free(e);
	e = NULL;
	berth_buf_release(&path);
	/* not served (404, 503 while metrics-server starts), or not ours to read (403) */
	if (status == 404 || status == 403 || status == 503)
		k->metrics_off_until = now + METRICS_RETRY_MS;
	worker_use *use = status == 200 ? berth_calloc(BERTH_WORKERS_MAX, sizeof(*use)) : NULL;
	berth_arena *a = use ? berth_arena_new() : NULL;
	if (a && sum_use(a, &rep, pods, npods, use) > 0) {
		for (int w = 0; w < BERTH_WORKERS_MAX; w++) {
			if (!use[w].seen)
				continue;
			store_sample x = {.rank = w, .t = now, .cpu_milli = use[w].cpu_milli,
					  .mem = use[w].mem, .gpu_util = -1, .gpu_mem = -1};
			if (store_sample_add(b->st, id, &x, &e) < 0)
				break;
		}
	}
	berth_error_free(e);
	berth_arena_free(a);
	free(use);
	kube_reply_free(&rep);
}
