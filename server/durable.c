/*
 * durable.c - an answer is held until the commits of its request are on
 * disk, without holding a worker thread.
 *
 * A request that wrote (a create, a delete, a token, ...) is answered only
 * once its commit is durable (the store's WAL fsynced: src/store/sync.c).
 * Waiting on the worker thread would hold every connection of that thread
 * for an fsync (a millisecond on a loaded disk): with one thread per core,
 * two requests at a time could share an fsync. Here reply() hands the
 * answer it built to this file's thread and suspends the connection; the
 * thread takes every answer held so far, waits once for the last of their
 * commits (one fsync covers them all: group commit) and resumes their
 * connections, whose handler (server_request) then sends the answer, or a
 * 500 when the fsync failed. While the thread is not running (before
 * serve_main starts it, after it stops, in the fuzzer), reply() waits on
 * its own thread instead.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "server.h"

/* seconds from one fsync's start to the next one's, at least, while answers wait */
#define GROUP_WINDOW 0.002

static struct {
	pthread_mutex_t mu;
	pthread_cond_t wake;
	req **held;          /* answers waiting for their commit */
	size_t n, cap;
	bool running, quit;
	pthread_t thread;
	bool started;
} D = {.mu = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

static void *durable_main(void *arg)
{
	/* this thread's own handle (closed as it ends): none, and reply() waits */
	berth_backend *b = srv_backend(arg);
	req **batch = NULL;
	size_t cap = 0;
	pthread_mutex_lock(&D.mu);
	D.running = b != NULL;
	double last = 0; /* when the last fsync began */
	for (;;) {
		while (!D.n && !D.quit)
			pthread_cond_wait(&D.wake, &D.mu);
		if (!D.n)
			break;
		/* under load, one fsync per GROUP_WINDOW at most: the answers held
		 * meanwhile join this one (each fsync costs the disk and the CPU);
		 * after a quiet moment, at once */
		double wait = last + GROUP_WINDOW - srv_now();
		if (wait > 0 && !D.quit) {
			pthread_mutex_unlock(&D.mu);
			struct timespec ts = {0, (long)(wait * 1e9)};
			nanosleep(&ts, NULL);
			pthread_mutex_lock(&D.mu);
		}
		last = srv_now();
		/* every answer held so far: the next ones queue while these wait */
		req **t = D.held;
		size_t n = D.n, c = D.cap;
		D.held = batch;
		D.cap = cap;
		D.n = 0;
		batch = t;
		cap = c;
		pthread_mutex_unlock(&D.mu);
		uint64_t upto = 0;
		for (size_t i = 0; i < n; i++)
			if (batch[i]->held_seq > upto)
				upto = batch[i]->held_seq;
		berth_error *err = NULL;
		bool failed = berth_backend_sync_to(b, upto, &err) != 0;
		if (failed)
			srv_report(err);
		else
			berth_error_free(err);
		for (size_t i = 0; i < n; i++) {
			batch[i]->sync_failed = failed;
			MHD_resume_connection(batch[i]->conn);
		}
		pthread_mutex_lock(&D.mu);
	}
	D.running = false;
	pthread_mutex_unlock(&D.mu);
	free(batch);
	return NULL;
}

int durable_start(server *s)
{
	D.quit = false;
	D.started = !pthread_create(&D.thread, NULL, durable_main, s);
	return D.started ? 0 : -1;
}

void durable_stop(void)
{
	pthread_mutex_lock(&D.mu);
	D.quit = true;
	pthread_cond_signal(&D.wake);
	pthread_mutex_unlock(&D.mu);
	if (D.started)
		pthread_join(D.thread, NULL);
	D.started = false;
	free(D.held);
	D.held = NULL;
	D.n = D.cap = 0;
}

int durable_hold(req *r, struct MHD_Response *resp, unsigned status, uint64_t seq)
{
	pthread_mutex_lock(&D.mu);
	bool held = false;
	if (D.running && !D.quit) {
		if (D.n == D.cap) {
			size_t want = D.cap ? D.cap * 2 : 64;
			req **grown = realloc(D.held, want * sizeof(*grown));
			if (grown) {
				D.held = grown;
				D.cap = want;
			}
		}
		if (D.n < D.cap) {
			r->held = resp;
			r->held_status = status;
			r->held_seq = seq;
			MHD_suspend_connection(r->conn);
			D.held[D.n++] = r;
			pthread_cond_signal(&D.wake);
			held = true;
		}
	}
	pthread_mutex_unlock(&D.mu);
	if (held)
		return 1;
	/* no thread to hand it to: this one waits */
	berth_backend *b = srv_backend(r->srv);
	berth_error *err = NULL;
	if (b && berth_backend_sync_to(b, seq, &err)) {
		srv_report(err);
		return -1;
	}
	berth_error_free(err);
	return 0;
}

int durable_send(req *r)
{
	struct MHD_Response *resp = r->held;
	r->held = NULL;
	if (r->sync_failed) {
		MHD_destroy_response(resp);
		return reply_fail(r, 500, "io",
				  "the change was made but could not be made durable (the fsync of "
				  "the store failed: see the server's log); it may be lost to a "
				  "power cut");
	}
	enum MHD_Result ret = MHD_queue_response(r->conn, r->held_status, resp);
	MHD_destroy_response(resp);
	return ret;
}
