/*
 * sampler.c - a run's use over time: its supervisor samples each worker's
 * cgroup (CPU over the last interval, memory in use) and, where nvidia-smi
 * is there, its GPUs (utilization, memory), into the store. At most
 * STORE_SAMPLES a worker: when the store thins a worker's series, samples
 * come half as often, so a run of any length keeps its whole span.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/local/supervisor_internal.h"
#include "base/capture.h"
#include "base/internal.h"

#define FIRST_MS 1000           /* a short run has a sample too */
#define GPU_QUERY_MS 2000       /* nvidia-smi's longest answer: one that hangs (a GPU in a
				   bad state) is killed, and not asked again this attempt:
				   the supervisor waits on nothing else meanwhile */

int64_t sup_sample_start(sup *s, int64_t now)
{
	s->sample_ms = backend_sample_ms();
	bool gpus = false;
	for (size_t i = 0; i < s->nw; i++) {
		s->w[i].sample_t = now;
		s->w[i].sample_cpu_ns = 0; /* a fresh attempt: its cgroup counts from 0 */
		gpus = gpus || (s->w[i].gpu_ids && *s->w[i].gpu_ids);
	}
	s->sample_gpus = gpus && capture_on_path("nvidia-smi");
	if (!s->sample_ms)
		return -1;
	return now + (s->sample_ms < FIRST_MS ? s->sample_ms : FIRST_MS);
}

/* The GPUs' use from one `nvidia-smi --query-gpu`: per index, utilization in
 * percent and memory used in MiB; n of them (-1: none read; CAPTURE_TIMEOUT:
 * it did not answer in time). */
typedef struct gpu_use {
	long index, util, mem_mib;
} gpu_use;

static int read_gpus(gpu_use *out, int max)
{
	static char a0[] = "nvidia-smi", a1[] = "--query-gpu=index,utilization.gpu,memory.used",
		    a2[] = "--format=csv,noheader,nounits";
	char *argv[] = {a0, a1, a2, NULL};
	char text[8192];
	long got = capture_output(argv, text, sizeof(text), GPU_QUERY_MS);
	if (got < 0)
		return got == CAPTURE_TIMEOUT ? CAPTURE_TIMEOUT : -1;
	int n = 0;
	for (char *line = text; *line && n < max;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		gpu_use g;
		char *p = line, *e;
		g.index = strtol(p, &e, 10);
		if (e != p && *e == ',') {
			g.util = strtol(p = e + 1, &e, 10);
			if (e != p && *e == ',') {
				g.mem_mib = strtol(p = e + 1, &e, 10);
				if (e != p && g.index >= 0 && g.util >= 0 && g.mem_mib >= 0)
					out[n++] = g;
			}
		}
		line = nl ? nl + 1 : line + strlen(line);
	}
	return n;
}

/* A worker's GPUs' mean utilization and memory in use, from the query. */
static void worker_gpus(const sup_worker *w, const gpu_use *g, int n, int64_t *util, int64_t *mem)
{
	int64_t sum = 0, bytes = 0, k = 0;
	for (const char *p = w->gpu_ids; p && *p;) {
		char *e;
		long idx = strtol(p, &e, 10);
		if (e == p)
			break;
		for (int i = 0; i < n; i++)
			if (g[i].index == idx) {
				sum += g[i].util;
				bytes += (int64_t)g[i].mem_mib * 1048576;
				k++;
			}
		p = *e == ',' ? e + 1 : e;
	}
	*util = k ? sum / k : -1;
	*mem = k ? bytes : -1;
}

int64_t sup_sample(sup *s, int64_t now)
{
	gpu_use g[64];
	int ng = s->sample_gpus ? read_gpus(g, 64) : -1;
	if (ng == CAPTURE_TIMEOUT) {
		s->sample_gpus = false;
		if (s->st)
			store_event(s->st, s->r->info.id, "Warning",
				    "nvidia-smi did not answer in 2 s: killed, and the GPUs are not sampled "
				    "again this attempt");
	}
	bool thinned = false;
	for (size_t i = 0; i < s->nw && s->st; i++) {
		sup_worker *w = &s->w[i];
		cg_stats st;
		berth_error *e = NULL;
		if (!w->cg || w->ended || cg_stats_read(w->cg, &st, &e)) {
			berth_error_free(e);
			continue;
		}
		int64_t dt = now - w->sample_t;
		store_sample x = {.rank = (int64_t)i, .t = store_now_ms(), .mem = (int64_t)st.mem_current,
				  .gpu_util = -1, .gpu_mem = -1};
		if (dt > 0 && st.cpu_usage_ns >= w->sample_cpu_ns)
			x.cpu_milli = (int64_t)((st.cpu_usage_ns - w->sample_cpu_ns) / (uint64_t)dt / 1000);
		if (ng > 0)
			worker_gpus(w, g, ng, &x.gpu_util, &x.gpu_mem);
		w->sample_cpu_ns = st.cpu_usage_ns;
		w->sample_t = now;
		int rc = store_sample_add(s->st, s->r->info.id, &x, &e);
		berth_error_free(e);
		thinned = thinned || rc > 0;
	}
	if (thinned && s->sample_ms < BACKEND_SAMPLE_MS_MAX)
		s->sample_ms = s->sample_ms * 2 > BACKEND_SAMPLE_MS_MAX ? BACKEND_SAMPLE_MS_MAX : s->sample_ms * 2;
	return now + s->sample_ms;
}
