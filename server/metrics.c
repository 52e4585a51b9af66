/*
 * metrics.c - what /metrics reports, in the Prometheus text format 0.0.4:
 * request latency by route, method and status class, store latency, and
 * runs by state. Counters are updated under one small lock.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "server.h"

static const double bounds[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
				0.01,   0.025,   0.05,   0.1,   0.25,   0.5,  1, 2.5, 10};
#define NB (sizeof(bounds) / sizeof(bounds[0]))

typedef struct histogram {
	uint64_t bucket[NB]; /* cumulative at format time, not here */
	uint64_t count;
	double sum;
} histogram;

typedef struct series {
	const char *route, *method;
	int cls;             /* status / 100 */
	histogram h;
} series;

#define MAX_SERIES 256
static series reqs[MAX_SERIES];
static size_t nreqs;
static histogram store_h;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void observe(histogram *h, double s)
{
	for (size_t i = 0; i < NB; i++)
		if (s <= bounds[i]) {
			h->bucket[i]++;
			break;
		}
	h->count++;
	h->sum += s;
}

/* The method as a series knows it: one of the known ones (static strings), or
 * "other" for any other, so that a client cannot add series by making up methods. */
static const char *method_label(const char *method)
{
	static const char *const known[] = {"GET", "POST", "PUT", "DELETE", "HEAD", "PATCH", "OPTIONS"};
	for (size_t i = 0; method && i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(known[i], method))
			return known[i];
	return "other";
}

void metrics_request(const char *path, const char *method, int status, double seconds)
{
	const char *m = method_label(method);
	int cls = status / 100;
	pthread_mutex_lock(&lock);
	series *s = NULL;
	for (size_t i = 0; !s && i < nreqs; i++)
		if (reqs[i].route == path && reqs[i].method == m && reqs[i].cls == cls)
			s = &reqs[i];
	if (!s && nreqs < MAX_SERIES) {
		s = &reqs[nreqs++];
		s->route = path;
		s->method = m;
		s->cls = cls;
	}
	if (s)
		observe(&s->h, seconds);
	pthread_mutex_unlock(&lock);
}

void metrics_store(double seconds)
{
	pthread_mutex_lock(&lock);
	observe(&store_h, seconds);
	pthread_mutex_unlock(&lock);
}

static void format_histogram(sbuf *out, const char *name, const char *labels, const histogram *h)
{
	uint64_t cum = 0;
	for (size_t i = 0; i < NB; i++) {
		cum += h->bucket[i];
		sb_printf(out, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, labels, *labels ? "," : "",
			  bounds[i], (unsigned long long)cum);
	}
	sb_printf(out, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, *labels ? "," : "",
		  (unsigned long long)h->count);
	const char *open = *labels ? "{" : "", *close = *labels ? "}" : "";
	sb_printf(out, "%s_sum%s%s%s %.9f\n", name, open, labels, close, h->sum);
	sb_printf(out, "%s_count%s%s%s %llu\n", name, open, labels, close,
		  (unsigned long long)h->count);
}

void metrics_format(sbuf *out, const int64_t counts[5], int64_t queued)
{
	sb_puts(out, "# HELP berth_runs Runs in the store, by state.\n# TYPE berth_runs gauge\n");
	for (int s = 0; s < 5; s++)
		sb_printf(out, "berth_runs{state=\"%s\"} %lld\n", berth_state_name((berth_state)s),
			  (long long)counts[s]);
	sb_puts(out, "# HELP berth_queue_length Runs waiting for capacity (Pending).\n"
		     "# TYPE berth_queue_length gauge\n");
	sb_printf(out, "berth_queue_length %lld\n", (long long)queued);
	pthread_mutex_lock(&lock);
	sb_puts(out, "# HELP berth_http_request_duration_seconds Time from a request's first byte to "
		     "its answer.\n# TYPE berth_http_request_duration_seconds histogram\n");
	for (size_t i = 0; i < nreqs; i++) {
		char labels[300];
		snprintf(labels, sizeof(labels), "route=\"%s\",method=\"%s\",code=\"%dxx\"",
			 reqs[i].route, reqs[i].method, reqs[i].cls);
		format_histogram(out, "berth_http_request_duration_seconds", labels, &reqs[i].h);
	}
	sb_puts(out, "# HELP berth_store_duration_seconds Time each request held the store (SQLite) "
		     "and its lock.\n# TYPE berth_store_duration_seconds histogram\n");
	format_histogram(out, "berth_store_duration_seconds", "", &store_h);
	pthread_mutex_unlock(&lock);
}
