/*
 * stream.c - answers that wait without holding a worker thread: a run's log
 * being sent (GET .../logs, ?follow=true until the run ends), a stop that
 * waits for the run's end (POST .../stop?wait=true), and a watch of runs
 * (GET .../runs?watch=true) that waits for a change.
 *
 * What blocks runs on a thread of the stream's own, with a passive backend
 * handle (berth_backend_logs and berth_backend_wait block). A log's thread
 * appends to a bounded ring, and libmicrohttpd takes from it through a
 * callback response; while the ring is empty the connection is suspended,
 * and the thread resumes it when data or the end comes. While the ring is
 * full the thread waits: a client that reads slowly slows the reading of the
 * log, it does not grow the server. A wait suspends the connection in the
 * handler; its thread resumes it when the run is final or the time is up,
 * and the route's handler is called again to answer.
 *
 * libmicrohttpd does not watch a suspended connection: one watcher thread
 * looks at the sockets of the streams' clients twice a second and ends the
 * streams whose client hung up, so that their connections close at once. A
 * thread learns that its client left at its next step: a wait within a second
 * (it waits in slices), a log at its next write (berth_backend_logs stops
 * only when its writer says so; a quiet run's log thread stays until the run
 * writes or ends, and counts against the cap until then).
 *
 * A watch has no thread: its connection is suspended until the store's
 * version (berth_run_version) passes the one it saw, or its time is up; the
 * watcher thread reads the version at each look while watches are open (one
 * small read for all of them: nothing else while nothing changes), resumes
 * those, and the route's handler is called again to answer, or to watch on.
 *
 * Locks: the list's (S.lock), then a stream's own (s->mu). libmicrohttpd's
 * suspend is called under a stream's lock, from its callbacks as it asks;
 * resume is called under none of ours. A stream marked suspended is resumed
 * once, by whoever clears the mark.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mhd_dl.h"
#include "server.h"

#define RING_SIZE (64 * 1024)  /* bytes of a log held for its client */
#define WATCH_MS 250           /* how often the clients' sockets (and the store's
				  version, for watches) are looked at */
#define WAIT_SLICE_MS 1000     /* a wait looks whether its client left this often */
#define STOP_MS 2000           /* how long streams_stop waits for the threads */
#define STREAMS_DEFAULT 1024

typedef enum kind { LOGS, WAIT, WATCH } kind;

struct stream {
	kind kind;
	pthread_mutex_t mu;
	pthread_cond_t room;            /* a log's thread waits here while the ring is full */
	int refs;                       /* the request's, the thread's, a log's response's */
	struct MHD_Connection *conn;    /* NULL once the request is over */
	int fd;                         /* the client's socket, for the watcher */
	bool suspended;                 /* by us, until whoever clears this resumes it */
	bool gone;                      /* the client left or the server stops: stop */
	bool ended;                     /* the thread is done */
	/* what the thread works on (copies: a thread may outlive the server's handle) */
	char *id, *home, *backend;
	const char *kubeconfig, *context; /* argv */
	const berth_policy *policy;
	berth_log_opts log; /* LOGS: what of the log (its rank, follow, tail, since, timestamps) */
	int64_t timeout_ms;
	/* a log: the ring */
	char *ring;
	size_t head, len;
	/* a wait: how it ended */
	int rc;
	berth_error *err;
	/* a watch: resumed when the store's version passes since, or at deadline */
	int64_t since, deadline;
	stream *prev, *next;            /* in S.head while the request is open */
};

static struct {
	pthread_mutex_t lock;           /* everything below */
	pthread_cond_t changed;         /* a stream or a thread ended (streams_stop waits) */
	pthread_cond_t wake;            /* the watcher's sleep (CLOCK_MONOTONIC) */
	stream *head;                   /* the streams whose request is open */
	unsigned open, max;             /* streams alive, and the cap */
	unsigned threads;               /* streams' threads running */
	bool started, stopping;
	unsigned watches;               /* WATCH streams open */
	char *home;                     /* the data dir whose version watches wait on */
	const berth_policy *policy;
	pthread_t watcher;
	struct pollfd *fds;             /* the watcher's, max of each */
	stream **polled;
} S = {.lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER,
       .wake = PTHREAD_COND_INITIALIZER};

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct timespec after_ms(int64_t ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)(ms / 1000);
	ts.tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return ts;
}

/* ---- a stream's life ------------------------------------------------------------------ */

/* What a stream owns (s may be NULL), and its place among the open ones, given back. */
static void stream_free(stream *s)
{
	if (s) {
		berth_error_free(s->err);
		free(s->ring);
		free(s->id);
		free(s->home);
		free(s->backend);
		free(s);
	}
	pthread_mutex_lock(&S.lock);
	S.open--;
	pthread_cond_broadcast(&S.changed);
	pthread_mutex_unlock(&S.lock);
}

static void put(stream *s)
{
	pthread_mutex_lock(&s->mu);
	bool last = --s->refs == 0;
	pthread_mutex_unlock(&s->mu);
	if (!last)
		return;
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->room);
	stream_free(s);
}

/* Under s->mu: the connection to resume (once the lock is let go), or NULL. */
static struct MHD_Connection *resumable(stream *s)
{
	if (!s->suspended)
		return NULL;
	s->suspended = false;
	return s->conn;
}

/* The client left, or the server stops: the connection ends and the thread
 * stops at its next step. */
static void leave(stream *s)
{
	pthread_mutex_lock(&s->mu);
	s->gone = true;
	pthread_cond_broadcast(&s->room);
	struct MHD_Connection *c = resumable(s);
	pthread_mutex_unlock(&s->mu);
	if (c)
		MHD_resume_connection(c);
}

/* A stream's thread is over, or did not start (counted from stream_new on). */
static void thread_over(void)
{
	pthread_mutex_lock(&S.lock);
	S.threads--;
	pthread_cond_broadcast(&S.changed);
	pthread_mutex_unlock(&S.lock);
}

/* The thread is done: its client is told (a log's end, a wait's answer). */
static void finish(stream *s, int rc, berth_error *err)
{
	pthread_mutex_lock(&s->mu);
	s->ended = true;
	s->rc = rc;
	s->err = err;
	struct MHD_Connection *c = resumable(s);
	pthread_mutex_unlock(&s->mu);
	if (c)
		MHD_resume_connection(c);
	put(s);
	thread_over();
}

static bool is_gone(stream *s)
{
	pthread_mutex_lock(&s->mu);
	bool gone = s->gone;
	pthread_mutex_unlock(&s->mu);
	return gone;
}

static int open_own(stream *s, berth_backend **b, berth_error **err)
{
	berth_backend_opts bo = {.home = s->home, .policy = s->policy, .passive = true,
				 .kubeconfig = s->kubeconfig, .context = s->context};
	return berth_backend_open(b, s->backend, &bo, err);
}

bool streams_full(void)
{
	pthread_mutex_lock(&S.lock);
	bool full = !S.started || S.stopping || S.open >= S.max;
	pthread_mutex_unlock(&S.lock);
	return full;
}

/* A new stream for r, holding the request's reference; 503 (answered, *ret)
 * when max are open. */
static stream *stream_new(req *r, kind k, const char *id, int *ret)
{
	pthread_mutex_lock(&S.lock);
	bool full = !S.started || S.stopping || S.open >= S.max;
	if (!full) {
		S.open++;
		S.threads++; /* the one it starts: thread_over when it ends, or cannot start */
	}
	unsigned max = S.max;
	pthread_mutex_unlock(&S.lock);
	if (full) {
		r->retry_after = 5;
		*ret = reply_fail(r, 503, "unavailable",
				  "the server sends %u logs and waits for runs already, its most "
				  "(--max-streams): try again in a few seconds", max);
		return NULL;
	}
	const serve_opts *o = srv_opts(r->srv);
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	stream *s = calloc(1, sizeof(*s));
	if (s) {
		s->kind = k;
		s->refs = 1;
		s->conn = r->conn;
		s->fd = ci ? ci->connect_fd : -1;
		s->id = strdup(id);
		s->home = strdup(srv_home(r->srv));
		s->backend = o->backend ? strdup(o->backend) : NULL;
		s->kubeconfig = o->kubeconfig;
		s->context = o->context;
		s->policy = srv_policy(r->srv);
		s->ring = k == LOGS ? malloc(RING_SIZE) : NULL;
	}
	if (!s || !s->id || !s->home || (o->backend && !s->backend) || (k == LOGS && !s->ring)) {
		stream_free(s);
		thread_over();
		*ret = reply_fail(r, 500, "out-of-memory", "out of memory");
		return NULL;
	}
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->room, NULL);
	return s;
}

/* r's stream from now on: stream_end lets it go when the request is over. */
static void attach(req *r, stream *s)
{
	r->stream = s;
	pthread_mutex_lock(&S.lock);
	s->next = S.head;
	if (S.head)
		S.head->prev = s;
	S.head = s;
	pthread_mutex_unlock(&S.lock);
}

/* Starts s's thread (detached; it holds a reference); under s->mu. When it
 * cannot, the caller calls thread_over once it has let s->mu go. */
static int start(stream *s, void *(*fn)(void *))
{
	pthread_t t;
	pthread_attr_t attr;
	if (pthread_attr_init(&attr))
		return -1;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	s->refs++;
	int rc = pthread_create(&t, &attr, fn, s);
	pthread_attr_destroy(&attr);
	if (rc)
		s->refs--;
	return rc ? -1 : 0;
}

void stream_end(req *r)
{
	stream *s = r->stream;
	if (!s)
		return;
	r->stream = NULL;
	pthread_mutex_lock(&S.lock);
	if (s->kind == WATCH)
		S.watches--;
	if (s->prev)
		s->prev->next = s->next;
	else
		S.head = s->next;
	if (s->next)
		s->next->prev = s->prev;
	s->prev = s->next = NULL;
	pthread_cond_broadcast(&S.changed);
	pthread_mutex_unlock(&S.lock);
	pthread_mutex_lock(&s->mu);
	s->conn = NULL; /* the daemon closes it: nobody resumes it any more */
	s->suspended = false;
	s->gone = true;
	pthread_cond_broadcast(&s->room);
	pthread_mutex_unlock(&s->mu);
	put(s);
}

bool stream_gone(req *r)
{
	return r->stream && is_gone(r->stream);
}

/* ---- logs ---------------------------------------------------------------------------- */

/* berth_backend_logs' writer: into the ring, waiting while it is full. A write
 * of no bytes only asks whether to go on (a backend that calls it while a run
 * is quiet lets a thread whose client left stop at once). */
static int log_write(void *ctx, const char *data, size_t len)
{
	stream *s = ctx;
	pthread_mutex_lock(&s->mu);
	while (len && !s->gone) {
		if (s->len == RING_SIZE) {
			pthread_cond_wait(&s->room, &s->mu);
			continue;
		}
		size_t tail = (s->head + s->len) % RING_SIZE;
		size_t n = RING_SIZE - s->len;
		if (n > RING_SIZE - tail)
			n = RING_SIZE - tail;
		if (n > len)
			n = len;
		memcpy(s->ring + tail, data, n);
		s->len += n;
		data += n;
		len -= n;
		struct MHD_Connection *c = resumable(s);
		if (c) {
			pthread_mutex_unlock(&s->mu);
			MHD_resume_connection(c);
			pthread_mutex_lock(&s->mu);
		}
	}
	bool gone = s->gone;
	pthread_mutex_unlock(&s->mu);
	return gone ? -1 : 0; /* -1: the client went away, berth_backend_logs stops */
}

static void *log_thread(void *arg)
{
	stream *s = arg;
	berth_backend *b = NULL;
	berth_error *err = NULL;
	if (!open_own(s, &b, &err))
		berth_backend_logs(b, s->id, &s->log, log_write, s, &err);
	/* an error ends the log where it is, as the end of the file does */
	berth_error_free(err);
	berth_backend_close(b);
	finish(s, 0, NULL);
	return NULL;
}

/* libmicrohttpd asks for the next bytes: what the ring holds, the end, or
 * nothing yet (the connection is suspended until the thread has more). */
static ssize_t log_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	stream *s = cls;
	ssize_t n;
	(void)pos;
	pthread_mutex_lock(&s->mu);
	if (s->gone) {
		n = MHD_CONTENT_READER_END_WITH_ERROR;
	} else if (s->len) {
		size_t k = s->len < max ? s->len : max;
		if (k > RING_SIZE - s->head)
			k = RING_SIZE - s->head;
		memcpy(buf, s->ring + s->head, k);
		s->head = (s->head + k) % RING_SIZE;
		s->len -= k;
		if (!s->len)
			s->head = 0;
		pthread_cond_broadcast(&s->room);
		n = (ssize_t)k;
	} else if (s->ended) {
		n = MHD_CONTENT_READER_END_OF_STREAM;
	} else {
		/* returning 0 must go with a suspend, or the daemon asks again at once */
		s->suspended = true;
		MHD_suspend_connection(s->conn);
		n = 0;
	}
	pthread_mutex_unlock(&s->mu);
	return n;
}

/* The response is freed: nobody reads the ring any more. */
static void log_free(void *cls)
{
	stream *s = cls;
	pthread_mutex_lock(&s->mu);
	s->gone = true;
	pthread_cond_broadcast(&s->room);
	pthread_mutex_unlock(&s->mu);
	put(s);
}

int stream_logs(req *r, const char *id, const berth_log_opts *o)
{
	int ret;
	stream *s = stream_new(r, LOGS, id, &ret);
	if (!s)
		return ret;
	s->log = *o;
	s->refs++; /* the response's, let go by log_free */
	struct MHD_Response *resp =
		MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, log_read, s, log_free);
	if (!resp) {
		s->refs--;
		thread_over();
		put(s);
		return reply_fail(r, 500, "out-of-memory", "out of memory");
	}
	pthread_mutex_lock(&s->mu);
	int rc = start(s, log_thread);
	pthread_mutex_unlock(&s->mu);
	if (rc) {
		thread_over();
		MHD_destroy_response(resp); /* log_free */
		put(s);
		return reply_fail(r, 500, "internal", "cannot start a thread");
	}
	attach(r, s);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	r->status = 200;
	ret = MHD_queue_response(r->conn, 200, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* ---- waits ----------------------------------------------------------------------------- */

static void *wait_thread(void *arg)
{
	stream *s = arg;
	berth_backend *b = NULL;
	berth_error *err = NULL;
	int rc = open_own(s, &b, &err);
	int64_t deadline = now_ms() + s->timeout_ms;
	/* in slices: between two, a client that left is seen */
	while (!rc && !is_gone(s)) {
		int64_t left = deadline - now_ms();
		if (left <= 0) {
			rc = -BERTH_ETIMEOUT;
			break;
		}
		rc = berth_backend_wait(b, s->id, left < WAIT_SLICE_MS ? left : WAIT_SLICE_MS, NULL,
					&err);
		if (rc != -BERTH_ETIMEOUT)
			break;
		berth_error_free(err);
		err = NULL;
		rc = 0;
	}
	berth_backend_close(b);
	finish(s, rc, err);
	return NULL;
}

int stream_wait(req *r, const char *id, int64_t timeout_ms)
{
	int ret;
	stream *s = stream_new(r, WAIT, id, &ret);
	if (!s)
		return ret;
	s->timeout_ms = timeout_ms;
	attach(r, s);
	/* the thread's end takes the lock: it comes after the suspend */
	pthread_mutex_lock(&s->mu);
	if (start(s, wait_thread)) {
		pthread_mutex_unlock(&s->mu);
		thread_over();
		return reply_fail(r, 500, "internal", "cannot start a thread");
	}
	s->suspended = true;
	MHD_suspend_connection(r->conn);
	pthread_mutex_unlock(&s->mu);
	return MHD_YES;
}

int stream_waited(req *r, berth_error **err)
{
	stream *s = r->stream;
	*err = NULL;
	if (!s)
		return -BERTH_EINTERNAL;
	pthread_mutex_lock(&s->mu);
	int rc = s->ended ? s->rc : -BERTH_EINTERNAL;
	*err = s->err;
	s->err = NULL;
	pthread_mutex_unlock(&s->mu);
	return rc;
}

/* ---- watches ----------------------------------------------------------------------------- */

int stream_watch(req *r, int64_t since, int64_t timeout_ms)
{
	stream *s = r->stream;
	if (!s) {
		int ret;
		if (!(s = stream_new(r, WATCH, "", &ret)))
			return ret;
		thread_over(); /* a watch has none */
		s->deadline = now_ms() + timeout_ms;
		pthread_mutex_lock(&S.lock);
		if (!S.home)
			S.home = strdup(s->home);
		S.policy = s->policy;
		S.watches++;
		pthread_mutex_unlock(&S.lock);
		attach(r, s);
	}
	pthread_mutex_lock(&s->mu);
	s->since = since;
	s->suspended = true;
	MHD_suspend_connection(r->conn);
	pthread_mutex_unlock(&s->mu);
	return MHD_YES;
}

bool stream_watch_over(req *r)
{
	return r->stream && now_ms() >= r->stream->deadline;
}

int64_t stream_watch_seen(req *r)
{
	stream *s = r->stream;
	if (!s || s->kind != WATCH)
		return -1;
	pthread_mutex_lock(&s->mu);
	int64_t seen = s->since;
	pthread_mutex_unlock(&s->mu);
	return seen;
}

/* Under S.lock, which it lets go while it reads: resumes the watches that
 * the store's version passed, or whose time is up. */
static void watches_look(berth_backend **vb)
{
	const char *home = S.home;
	const berth_policy *policy = S.policy;
	pthread_mutex_unlock(&S.lock);
	int64_t version = -1;
	berth_error *err = NULL;
	berth_backend_opts bo = {.home = home, .policy = policy, .passive = true};
	if (!*vb && home && berth_backend_open(vb, NULL, &bo, &err))
		*vb = NULL;
	if (*vb && berth_run_version(*vb, &version, &err))
		version = -1; /* a store it cannot read: the watches end at their time */
	berth_error_free(err);
	int64_t now = now_ms();
	pthread_mutex_lock(&S.lock);
	size_t n = 0;
	for (stream *s = S.head; s && n < S.max; s = s->next) {
		if (s->kind != WATCH)
			continue;
		pthread_mutex_lock(&s->mu);
		if (s->suspended && (version > s->since || now >= s->deadline)) {
			s->refs++;
			S.polled[n++] = s;
		}
		pthread_mutex_unlock(&s->mu);
	}
	pthread_mutex_unlock(&S.lock);
	for (size_t i = 0; i < n; i++) {
		pthread_mutex_lock(&S.polled[i]->mu);
		struct MHD_Connection *c = resumable(S.polled[i]);
		pthread_mutex_unlock(&S.polled[i]->mu);
		if (c)
			MHD_resume_connection(c);
		put(S.polled[i]);
	}
	pthread_mutex_lock(&S.lock);
}

/* ---- the watcher of the clients, start and stop ------------------------------------------ */

static void *watch(void *arg)
{
	(void)arg;
	berth_backend *vb = NULL; /* this thread's own handle on the store, for its version */
	pthread_mutex_lock(&S.lock);
	while (!S.stopping) {
		struct timespec until = after_ms(WATCH_MS);
		while (!S.stopping && pthread_cond_timedwait(&S.wake, &S.lock, &until) != ETIMEDOUT)
			;
		if (S.stopping)
			break;
		if (S.watches)
			watches_look(&vb);
		/* a socket is not closed before its request's stream_end, which takes
		 * S.lock: every fd here is the stream's while it is held */
		size_t n = 0, hung = 0;
		for (stream *s = S.head; s && n < S.max; s = s->next) {
			if (s->fd < 0)
				continue;
			S.fds[n] = (struct pollfd){.fd = s->fd, .events = POLLRDHUP};
			S.polled[n++] = s;
		}
		if (n && poll(S.fds, n, 0) > 0)
			for (size_t i = 0; i < n; i++)
				if (S.fds[i].revents & (POLLRDHUP | POLLHUP | POLLERR)) {
					pthread_mutex_lock(&S.polled[i]->mu);
					S.polled[i]->refs++;
					pthread_mutex_unlock(&S.polled[i]->mu);
					S.polled[hung++] = S.polled[i];
				}
		pthread_mutex_unlock(&S.lock);
		for (size_t i = 0; i < hung; i++) {
			leave(S.polled[i]);
			put(S.polled[i]);
		}
		pthread_mutex_lock(&S.lock);
	}
	pthread_mutex_unlock(&S.lock);
	berth_backend_close(vb);
	return NULL;
}

int streams_start(unsigned max)
{
	pthread_condattr_t ca;
	S.max = max ? max : STREAMS_DEFAULT;
	S.fds = calloc(S.max, sizeof(*S.fds));
	S.polled = calloc(S.max, sizeof(*S.polled));
	if (!S.fds || !S.polled || pthread_condattr_init(&ca)) {
		free(S.fds);
		free(S.polled);
		errno = ENOMEM;
		return -1;
	}
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_destroy(&S.wake);
	pthread_cond_init(&S.wake, &ca);
	pthread_cond_destroy(&S.changed);
	pthread_cond_init(&S.changed, &ca);
	pthread_condattr_destroy(&ca);
	int rc = pthread_create(&S.watcher, NULL, watch, NULL);
	if (rc) {
		free(S.fds);
		free(S.polled);
		errno = rc;
		return -1;
	}
	S.started = true;
	return 0;
}

unsigned streams_stop(void)
{
	if (!S.started)
		return 0;
	pthread_mutex_lock(&S.lock);
	S.stopping = true;
	pthread_cond_broadcast(&S.wake);
	pthread_mutex_unlock(&S.lock);
	pthread_join(S.watcher, NULL);
	/* end every stream whose request is open: its suspended connection resumes,
	 * and closes */
	pthread_mutex_lock(&S.lock);
	size_t n = 0;
	for (stream *s = S.head; s && n < S.max; s = s->next) {
		pthread_mutex_lock(&s->mu);
		s->refs++;
		pthread_mutex_unlock(&s->mu);
		S.polled[n++] = s;
	}
	pthread_mutex_unlock(&S.lock);
	for (size_t i = 0; i < n; i++) {
		leave(S.polled[i]);
		put(S.polled[i]);
	}
	/* until no request is open (none is suspended when the daemon stops) and the
	 * threads are done, a while at most: a log thread of a quiet run stops only
	 * when the run writes or ends */
	struct timespec until = after_ms(STOP_MS);
	pthread_mutex_lock(&S.lock);
	while ((S.head || S.threads) &&
	       pthread_cond_timedwait(&S.changed, &S.lock, &until) != ETIMEDOUT)
		;
	if (S.head)
		fprintf(stderr, "berth serve: %s\n", "a stream's connection did not close in time");
	unsigned left = S.threads;
	pthread_mutex_unlock(&S.lock);
	free(S.fds);
	free(S.polled);
	free(S.home);
	S.fds = NULL;
	S.polled = NULL;
	S.home = NULL;
	return left;
}
