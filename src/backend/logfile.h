/*
 * logfile.h - a run's log as a file under the data dir, and when each part
 * of it was written: what the local kind's supervisor writes (each worker's
 * runs/ID/log or log.RANK) and what the kubernetes kind keeps of an ended
 * run's pod (runs/ID/log), read the same way for berth_backend_logs with
 * its tail, since and timestamps (berth_log_opts).
 *
 * The times: beside LOG, the file LOG.times holds records of two int64 in
 * the host's order, (end, ms): the bytes of LOG before `end` were all
 * written by the Unix time ms, and those from the previous record's end on
 * were first seen then. Records are in order of both end and time, so a
 * reader searches them. A line's time is the time of its first byte.
 *
 * The local supervisor sees a log grow through inotify (or looks every
 * second without it) and writes a record at most every LOG_CLOCK_MS, so a
 * time is late by that at most, and the times of a log grow by 16 bytes a
 * record, 160 bytes a second at most however much is written (a day of a
 * log that never stops: 14 MB). Bytes past the last record (written since,
 * or by a supervisor that died) are as old as the log's mtime: a log
 * without times (written before berth kept them) is all of that one time.
 */
#ifndef BERTH_BACKEND_LOGFILE_H
#define BERTH_BACKEND_LOGFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/internal.h"
#include "berth/backend.h"

#define LOG_TIMES_SUFFIX ".times"
#define LOG_CLOCK_MS 100

/* 0 when o (NULL: all of the log) is in range: tail 0 to BERTH_LOG_TAIL_MAX,
 * since_ms 0 to BERTH_DURATION_MAX_MS; else BERTH_EARG, saying which. */
int log_opts_check(const berth_log_opts *o, berth_error **err);

/* ---- the writer: one clock per log ----------------------------------------------------- */

typedef struct log_clock {
	int fd;                  /* LOG.times, appended to; -1: not open */
	char *made;              /* LOG.times's path while it is not made yet (no record:
				  * an empty log has no times file); NULL with fd -1: no
				  * times are kept */
	int64_t end, at;         /* the last record */
	int64_t seen, seen_at;   /* a growth seen and not recorded yet (seen > end) */
} log_clock;

/* Opens the times of the log at log_path (appended to; made with the first
 * record); a clock that cannot be opened keeps no times (log_clock_on false),
 * and every call on it is a no-op. */
void log_clock_open(log_clock *c, const char *log_path);
/* Whether c keeps times. */
static inline bool log_clock_on(const log_clock *c)
{
	return c->fd >= 0 || c->made;
}
/* The log is size bytes long at now (ms): a record now, or LOG_CLOCK_MS
 * after the last one. Returns when a record is due (ms), or -1 when none is
 * pending. */
int64_t log_clock_note(log_clock *c, int64_t size, int64_t now);
/* Writes the pending record when it is due at now, or at once with force;
 * returns as log_clock_note. */
int64_t log_clock_flush(log_clock *c, int64_t now, bool force);
/* For a log whose times are known line by line (a pod's, as the API gives
 * them): the bytes before end were written at ms; lines of the same ms make
 * one record, written when a line of another time (or the flush) comes. */
void log_clock_mark(log_clock *c, int64_t end, int64_t ms);
void log_clock_close(log_clock *c);

/* ---- the reader ------------------------------------------------------------------------ */

/* One log as it is read: from a start (tail, since), each line with its
 * time when asked, and whole lines out when they carry a prefix. */
typedef struct log_src {
	int fd;                  /* -1 until the file is there */
	char path[4096];
	int index;               /* the worker it is of, for "[rank N] " */
	int64_t off;             /* the offset of the next byte read */
	int64_t line_off;        /* where the line in part starts */
	berth_buf part;          /* the line read in part (line mode) */
	bool in_line;            /* a line has begun and not ended */
	bool head_out;           /* ... and a piece of it went out with its head */
	int times;               /* LOG.times, -1: none */
	int64_t rec_i;           /* the times' cursor: the record ... */
	int64_t rec_end, rec_ms; /* ... and what it holds; rec_end -1: not read */
	bool started;            /* placed at its start (tail, since) */
} log_src;

/* What is read of one run's logs, in all. */
typedef struct log_view {
	const berth_log_opts *o;
	bool prefix;             /* "[rank N] " before each line (several workers) */
	int64_t since;           /* the Unix time (ms) of --since; 0: none */
	berth_log_write write;
	void *ctx;
} log_view;

/* v for opts o (NULL: all, at once) and several workers (prefix). */
void log_view_init(log_view *v, const berth_log_opts *o, bool prefix, berth_log_write write,
		   void *ctx);
/* A source of path (the log), index its worker. */
void log_src_init(log_src *src, const char *path, int index);
/* Reads each source once to its current end: opened when the file is
 * there, placed at its start the first time. 1 when something was read, 0
 * nothing, -1 to stop (*rc set on a read error; 0 when the writer stopped). */
int log_read(log_src *srcs, size_t n, const log_view *v, int *rc, berth_error **err);
/* The last line of each source, when it has no newline (line mode); frees
 * what the sources hold and closes them. */
void log_finish(log_src *srcs, size_t n, const log_view *v, int *rc);

#endif
