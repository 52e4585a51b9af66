/*
 * logfile.c - a run's log file and its times (logfile.h): the clock the
 * local supervisor keeps of each worker's log, and the reader of
 * berth_backend_logs (tail, since, timestamps, a distributed job's
 * "[rank N] ").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/logfile.h"
#include "berth/quantity.h"
#include "store/store.h"

/* A line held for its end, at most: past it the line goes out in pieces. */
#define LINE_MAX_HELD (64 * 1024)

typedef struct rec {
	int64_t end, ms;
} rec;

static int times_path(char *buf, size_t len, const char *log_path)
{
	return (size_t)snprintf(buf, len, "%s%s", log_path, LOG_TIMES_SUFFIX) >= len ? -1 : 0;
}

/* Record i of the times fd: 0, or -1 when there is none (yet). */
static int rec_get(int fd, int64_t i, rec *r)
{
	int64_t v[2];
	if (i < 0 || pread(fd, v, sizeof(v), (off_t)(i * (int64_t)sizeof(v))) != (ssize_t)sizeof(v))
		return -1;
	r->end = v[0];
	r->ms = v[1];
	return 0;
}

static int64_t rec_count(int fd)
{
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 ? (int64_t)st.st_size / (int64_t)sizeof(rec) : 0;
}

int log_opts_check(const berth_log_opts *o, berth_error **err)
{
	if (o && (o->tail < 0 || o->tail > BERTH_LOG_TAIL_MAX))
		return berth_fail(err, BERTH_EARG, "tail %lld is not a number of lines from 0 to %d",
				  (long long)o->tail, BERTH_LOG_TAIL_MAX);
	if (o && (o->since_ms < 0 || o->since_ms > BERTH_DURATION_MAX_MS))
		return berth_fail(err, BERTH_EARG, "since %lld ms is not a duration from 0 to 400 days",
				  (long long)o->since_ms);
	return 0;
}

/* ---- the writer -------------------------------------------------------------------------- */

void log_clock_open(log_clock *c, const char *log_path)
{
	char path[4200];
	memset(c, 0, sizeof(*c));
	c->fd = times_path(path, sizeof(path), log_path) ? -1
		: open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
	/* none yet: made with the first record (a run that writes nothing costs
	 * no inode for it, one less file made in its launch) */
	if (c->fd < 0 && errno == ENOENT && !times_path(path, sizeof(path), log_path))
		c->made = berth_strdup(path);
	/* a log appended to again (a retry, a new supervisor) goes on from its last record */
	rec last;
	int64_t n = rec_count(c->fd);
	if (n > 0 && !rec_get(c->fd, n - 1, &last)) {
		c->end = c->seen = last.end;
		c->at = c->seen_at = last.ms;
	}
}

static void clock_write(log_clock *c)
{
	if (c->fd < 0) {
		c->fd = open(c->made, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
		free(c->made);
		c->made = NULL;
		if (c->fd < 0)
			return;
	}
	/* times never go back (a clock set back): readers search them */
	int64_t v[2] = {c->seen, c->seen_at > c->at ? c->seen_at : c->at};
	if (write(c->fd, v, sizeof(v)) != (ssize_t)sizeof(v)) {
		/* a record cut short would shift every one after it: no more times */
		close(c->fd);
		c->fd = -1;
		return;
	}
	c->end = v[0];
	c->at = v[1];
}

int64_t log_clock_flush(log_clock *c, int64_t now, bool force)
{
	if (!log_clock_on(c) || c->seen <= c->end)
		return -1;
	int64_t due = c->at + LOG_CLOCK_MS;
	if (!force && now < due)
		return due;
	clock_write(c);
	return -1;
}

int64_t log_clock_note(log_clock *c, int64_t size, int64_t now)
{
	if (log_clock_on(c) && size > c->seen) {
		c->seen = size;
		c->seen_at = now;
	}
	return log_clock_flush(c, now, false);
}

void log_clock_mark(log_clock *c, int64_t end, int64_t ms)
{
	if (!log_clock_on(c) || end <= c->seen)
		return;
	if (c->seen > c->end && ms != c->seen_at)
		clock_write(c); /* the lines of the pending time end where this one starts */
	c->seen = end;
	c->seen_at = ms;
}

void log_clock_close(log_clock *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->made);
	c->made = NULL;
}

/* ---- where a read starts ------------------------------------------------------------------ */

/* The offset of the first of the last n lines of fd (size bytes): a last line
 * without its newline is one. */
static int64_t tail_offset(int fd, int64_t size, int64_t n)
{
	char buf[65536];
	int64_t pos = size, seen = 0;
	bool last = true; /* the byte at size - 1: a final newline ends the last line */
	while (pos > 0) {
		size_t len = pos > (int64_t)sizeof(buf) ? sizeof(buf) : (size_t)pos;
		ssize_t got = pread(fd, buf, len, (off_t)(pos - (int64_t)len));
		if (got != (ssize_t)len)
			return 0;
		for (size_t k = len; k-- > 0;) {
			if (buf[k] == '\n' && !(last && pos - (int64_t)len + (int64_t)k == size - 1) &&
			    ++seen == n)
				return pos - (int64_t)len + (int64_t)k + 1;
			last = false;
		}
		pos -= (int64_t)len;
	}
	return 0;
}

/* The start of the line at or after off: a line that began before it is
 * not one of those written since (a line's time is its first byte's). */
static int64_t line_start_from(int fd, int64_t off, int64_t size)
{
	char buf[4096];
	if (off <= 0)
		return 0;
	for (int64_t pos = off - 1; pos < size;) {
		ssize_t got = pread(fd, buf, sizeof(buf), (off_t)pos);
		if (got <= 0)
			break;
		char *nl = memchr(buf, '\n', (size_t)got);
		if (nl)
			return pos + (nl - buf) + 1;
		pos += got;
	}
	return size;
}

/* The first record whose end is past off (binary search); count when none. */
static int64_t rec_after(int fd, int64_t off)
{
	int64_t lo = 0, hi = rec_count(fd);
	rec r;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		if (rec_get(fd, mid, &r) || r.end > off)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* The offset of the first byte written at or after since. */
static int64_t since_offset(int times, int64_t since, int64_t size, int64_t mtime)
{
	int64_t lo = 0, n = rec_count(times), hi = n;
	rec r;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		if (rec_get(times, mid, &r) || r.ms >= since)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo < n)
		return lo && !rec_get(times, lo - 1, &r) ? r.end : 0;
	/* every record is older: what is past the last is as old as the log's mtime */
	int64_t last = n && !rec_get(times, n - 1, &r) ? r.end : 0;
	return mtime >= since && size > last ? last : size;
}

static int64_t mtime_ms(int fd)
{
	struct stat st;
	if (fd < 0 || fstat(fd, &st))
		return store_now_ms();
	return (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
}

/* Opens what src needs, then places it at its first byte: the last lines of
 * --tail, the first line written since --since, whichever is later. */
static void place(log_src *src, const log_view *v)
{
	const berth_log_opts *o = v->o;
	struct stat st;
	int64_t start = 0, size = fstat(src->fd, &st) ? 0 : (int64_t)st.st_size;
	char path[4200];
	if (o && (o->timestamps || v->since) && !times_path(path, sizeof(path), src->path))
		src->times = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (o && o->tail > 0)
		start = tail_offset(src->fd, size, o->tail);
	if (v->since) {
		int64_t s = line_start_from(src->fd, since_offset(src->times, v->since, size, mtime_ms(src->fd)),
					    size);
		start = s > start ? s : start;
	}
	if (start && lseek(src->fd, (off_t)start, SEEK_SET) < 0)
		start = 0;
	src->off = src->line_off = start;
	src->rec_i = src->times >= 0 ? rec_after(src->times, start) : 0;
	src->rec_end = -1;
	src->started = true;
}

/* ---- the reader ------------------------------------------------------------------------- */

void log_view_init(log_view *v, const berth_log_opts *o, bool prefix, berth_log_write write,
		   void *ctx)
{
	memset(v, 0, sizeof(*v));
	v->o = o;
	v->prefix = prefix;
	v->write = write;
	v->ctx = ctx;
	if (o && o->since_ms > 0)
		v->since = store_now_ms() - o->since_ms;
}

void log_src_init(log_src *src, const char *path, int index)
{
	memset(src, 0, sizeof(*src));
	src->fd = src->times = -1;
	src->index = index;
	src->rec_end = -1;
	snprintf(src->path, sizeof(src->path), "%s", path);
}

/* The time of the byte at off; asked for in increasing order. */
static int64_t time_at(log_src *src, int64_t off)
{
	rec r;
	while (src->times >= 0) {
		if (src->rec_end < 0) {
			if (rec_get(src->times, src->rec_i, &r))
				break; /* not recorded yet: asked again next time */
			src->rec_end = r.end;
			src->rec_ms = r.ms;
		}
		if (src->rec_end > off)
			return src->rec_ms;
		src->rec_i++;
		src->rec_end = -1;
	}
	return mtime_ms(src->fd);
}

static bool line_mode(const log_view *v)
{
	return v->prefix || (v->o && v->o->timestamps);
}

/* What goes before a line: "[rank N] ", its time. */
static void line_head(berth_buf *out, log_src *src, const log_view *v)
{
	if (v->prefix)
		berth_buf_printf(out, "[rank %d] ", src->index);
	if (v->o && v->o->timestamps) {
		char t[40];
		berth_format_time(t, sizeof(t), time_at(src, src->line_off));
		berth_buf_printf(out, "%s ", t);
	}
}

/* Writes n bytes read from src; nonzero to stop. In line mode whole lines go
 * out, each after its head; a line longer than LINE_MAX_HELD goes in pieces,
 * the head before the first. */
static int emit(log_src *src, const log_view *v, const char *data, size_t n)
{
	if (!line_mode(v)) {
		src->off += (int64_t)n;
		return v->write(v->ctx, data, n);
	}
	berth_buf out = BERTH_BUF_INIT;
	for (const char *p = data, *end = data + n; p < end;) {
		if (!src->in_line) {
			src->line_off = src->off + (p - data);
			src->in_line = true;
		}
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t take = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		if (!nl && !src->head_out && src->part.len + take < LINE_MAX_HELD) {
			berth_buf_append(&src->part, p, take); /* held for its end */
			break;
		}
		if (!src->head_out)
			line_head(&out, src, v);
		berth_buf_append(&out, src->part.data ? src->part.data : "", src->part.len);
		berth_buf_append(&out, p, take);
		src->part.len = 0;
		/* a piece of a long line went out with its head: the rest follows as is */
		src->head_out = !nl;
		src->in_line = !nl;
		p += take;
	}
	src->off += (int64_t)n;
	int rc = out.failed || src->part.failed ? -1 : out.len ? v->write(v->ctx, out.data, out.len) : 0;
	berth_buf_release(&out);
	return rc;
}

int log_read(log_src *srcs, size_t n, const log_view *v, int *rc, berth_error **err)
{
	char buf[65536];
	int got = 0;
	for (size_t i = 0; i < n; i++) {
		log_src *src = &srcs[i];
		/* the file appears when the run starts */
		if (src->fd < 0 && (src->fd = open(src->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
			continue;
		if (!src->started)
			place(src, v);
		for (;;) {
			ssize_t len = read(src->fd, buf, sizeof(buf));
			if (len < 0 && errno == EINTR)
				continue;
			if (len < 0) {
				*rc = berth_fail(err, BERTH_EIO, "cannot read %s: %s", src->path, strerror(errno));
				return -1;
			}
			if (len == 0)
				break;
			got = 1;
			if (emit(src, v, buf, (size_t)len))
				return -1;
		}
	}
	return got;
}

void log_finish(log_src *srcs, size_t n, const log_view *v, int *rc)
{
	for (size_t i = 0; i < n; i++) {
		log_src *src = &srcs[i];
		/* a last line without its newline */
		if (!*rc && line_mode(v) && src->in_line && emit(src, v, "\n", 1))
			*rc = 0; /* the reader stopped: nothing more to say */
		berth_buf_release(&src->part);
		if (src->fd >= 0)
			close(src->fd);
		if (src->times >= 0)
			close(src->times);
		src->fd = src->times = -1;
	}
}
