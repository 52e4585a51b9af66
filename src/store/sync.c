/*
 * sync.c - a commit is on disk before anyone is told of it: the group fsync
 * of the store's WAL.
 *
 * SQLite runs with journal_mode=WAL and synchronous=NORMAL: a commit is
 * written to the WAL (in the page cache) and survives a crash of berth, but
 * SQLite fsyncs the WAL only before a checkpoint, so the last commits could
 * be lost to a power cut. FULL fsyncs the WAL in every commit, under the
 * write lock: one writer at a time, each waiting for its own fsync (3,250
 * creates/s through the server against 5,000-6,500 with NORMAL).
 *
 * Here the commit stays NORMAL and the fsync comes after it, outside the
 * lock: SQLite's WAL hook numbers every commit of the process once it is in
 * the WAL (the hook runs after the write and the lock's release); whoever
 * must wait for commit N waits until one fdatasync of the WAL has begun
 * after commit N was written. One thread fsyncs at a time and every commit
 * written before its fsync began is durable when it ends: the commits that
 * arrive while one fsync runs share the next (group commit).
 *
 * What makes "in the WAL file, fsynced" mean "on disk", from SQLite's WAL
 * design: (1) a WAL that is reset after a checkpoint (written again from its
 * start) had every frame copied into the database and the database fsynced
 * first (NORMAL syncs the database at every checkpoint), and SQLite fsyncs
 * the new WAL header before the first frame after it; (2) a WAL that is
 * truncated or deleted (wal_checkpoint(TRUNCATE), the last connection of a
 * tool that checkpoints on close) likewise held nothing that is not in the
 * fsynced database; (3) a new WAL file's directory entry: the directory is
 * fsynced when the WAL is opened here (and its parent, for a data dir made
 * just now), and the fd is opened again when the
 * file at the path is another one (deleted and made again). The database
 * file itself was written, with its header, under synchronous=FULL (SQLite's
 * default when journal_mode=WAL is set on a new store, in store.c).
 *
 * Once both directories are fsynced for a WAL file, the file is marked so
 * (an extended attribute, WAL_DURABLE_XATTR): every later process that opens
 * the same file reads the mark and fsyncs only the WAL, where it fsynced the
 * two directories too before (two of the three fsyncs of a short berth
 * command). The mark is set only after the fsyncs have returned, so a
 * process that sees it knows the entries are on disk; a WAL made again is
 * another inode, without it. The mark names the file and the place it was
 * synced at (entry_mark): a copy that kept the file's extended attributes
 * (cp -a, a restore), or a data dir renamed, is synced again. A file system
 * without user xattrs (tmpfs before Linux 6.6) keeps the three fsyncs.
 * SQLite never deletes the WAL of a berth connection (no checkpoint on
 * close, db_sqlite.c), so the mark lasts.
 *
 * Every writer of the store keeps this rule (the CLI, supervisors, the
 * server): a handle makes each commit durable before the call that made it
 * returns, or, with store_defer_sync (a server's worker), before the
 * caller's store_sync returns. BERTH_STORE_SYNC=normal turns it off: a
 * commit may then be lost to a power cut (not to a crash of berth).
 *
 * An fsync that fails for a full disk or quota (ENOSPC, EDQUOT) says so with
 * BERTH_ENOSPC (a server answers 507, as for a store that cannot write); any
 * other errno is BERTH_EIO.
 *
 * Test-only faults: BERTH_FAULT=kill-before-fsync:PATH (tests/server.sh)
 * kills the process with SIGKILL just before an fsync while PATH exists; in
 * a test build (BERTH_FAULT_INJECTION), BERTH_TEST_FSYNC_ERRNO=N fails every
 * fsync of the WAL with errno N (tests/unit/test_store.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "base/fs.h"
#include "store/store_internal.h"

struct wal_sync {
	struct wal_sync *next;
	char *db, *wal, *dir;     /* paths: the database, its WAL, their directory */
	unsigned refs;            /* handles of the process that use it */
	pthread_mutex_t mu;
	pthread_cond_t done;
	uint64_t committed;       /* the number of the last commit written to the WAL */
	uint64_t durable;         /* every commit up to this one is on disk */
	uint64_t fsyncs;          /* how many fdatasyncs (for tests and the bench) */
	bool syncing;             /* a thread is in fdatasync (the others wait for it) */
	int fd;                   /* the WAL, -1 until the first fsync */
	pid_t owner;              /* the process that opened fd: a forked child has
				   * its parent's registry, not its descriptors */
	int failed;               /* an fsync's errno: every wait fails from then on */
	char *fault;              /* BERTH_FAULT's kill-before-fsync file, or NULL */
};

static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static struct wal_sync *registry;

static void wal_sync_free(struct wal_sync *w)
{
	if (w->fd >= 0 && w->owner == getpid())
		close(w->fd);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->done);
	free(w->db);
	free(w->wal);
	free(w->dir);
	free(w->fault);
	free(w);
}

static struct wal_sync *wal_sync_new(const char *path)
{
	struct wal_sync *w = berth_calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->fd = -1;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->done, NULL);
	char *copy = berth_strdup(path);
	size_t n = strlen(path) + 5;
	w->db = berth_strdup(path);
	w->wal = berth_malloc(n);
	w->dir = copy ? berth_strdup(dirname(copy)) : NULL;
	free(copy);
	const char *fault = getenv("BERTH_FAULT");
	if (fault && !strncmp(fault, "kill-before-fsync:", 18))
		w->fault = berth_strdup(fault + 18);
	if (!w->db || !w->wal || !w->dir) {
		wal_sync_free(w);
		return NULL;
	}
	snprintf(w->wal, n, "%s-wal", path);
	return w;
}

int wal_sync_get(const char *path, struct wal_sync **out, berth_error **err)
{
	*out = NULL;
	const char *mode = getenv("BERTH_STORE_SYNC");
	if (mode && !strcmp(mode, "normal"))
		return 0;
	if (mode && *mode && strcmp(mode, "durable"))
		return berth_fail(err, BERTH_EARG,
				  "BERTH_STORE_SYNC is \"%s\": durable (the default: a commit is on "
				  "disk before it is answered) or normal (the last commits may be "
				  "lost to a power cut)",
				  mode);
	pthread_mutex_lock(&registry_mu);
	struct wal_sync *w = registry;
	while (w && strcmp(w->db, path))
		w = w->next;
	if (!w && (w = wal_sync_new(path))) {
		w->next = registry;
		registry = w;
	}
	if (w)
		w->refs++;
	pthread_mutex_unlock(&registry_mu);
	if (!w)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	*out = w;
	return 0;
}

void wal_sync_put(struct wal_sync *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&registry_mu);
	bool last = --w->refs == 0;
	if (last)
		for (struct wal_sync **p = &registry; *p; p = &(*p)->next)
			if (*p == w) {
				*p = w->next;
				break;
			}
	pthread_mutex_unlock(&registry_mu);
	if (last)
		wal_sync_free(w);
}

#define WAL_DURABLE_XATTR "user.berth.entry-synced"

/* What the mark says, in buf: this WAL file (device, inode) in this directory
 * (path, device, inode) of this parent (device, inode). A copy that kept the
 * extended attributes (cp -a, rsync -X, a restore of a backup), a hard link
 * elsewhere, or a data dir moved or renamed since has another, and its
 * entries are fsynced again: no one fsynced them there. Its length; 0 when it
 * cannot be said (no mark then: the entries are fsynced every time). */
static size_t entry_mark(const struct wal_sync *w, char *buf, size_t len)
{
	struct stat f, d, p;
	char *copy = berth_strdup(w->dir);
	bool ok = copy && !fstat(w->fd, &f) && !stat(w->dir, &d) && !stat(dirname(copy), &p);
	free(copy);
	int n = ok ? snprintf(buf, len, "1 %ju:%ju %ju:%ju %ju:%ju %s", (uintmax_t)f.st_dev,
			      (uintmax_t)f.st_ino, (uintmax_t)d.st_dev, (uintmax_t)d.st_ino,
			      (uintmax_t)p.st_dev, (uintmax_t)p.st_ino, w->dir)
		   : -1;
	return n > 0 && (size_t)n < len ? (size_t)n : 0;
}

/* The WAL's directory entry, and the directory's own, on disk: fsynced here
 * unless an earlier process marked this file, at this place, after fsyncing
 * them. 0 or an errno. */
static int sync_wal_entry(struct wal_sync *w)
{
	char want[4400], had[4400];
	size_t n = entry_mark(w, want, sizeof(want));
	if (n && fgetxattr(w->fd, WAL_DURABLE_XATTR, had, sizeof(had)) == (ssize_t)n && !memcmp(had, want, n))
		return 0;
	if (fs_sync(w->dir) || fs_sync_dir_of(w->dir))
		return errno;
	/* best effort: without it, the next process fsyncs them again */
	if (n)
		fsetxattr(w->fd, WAL_DURABLE_XATTR, want, n, 0);
	return 0;
}

/* One fdatasync of the WAL as it is at its path now (the syncer's, outside
 * the lock): 0 or an errno. */
static int fsync_wal(struct wal_sync *w)
{
	struct stat had, now;
	/* a descriptor of the parent that forked this process: that number may
	 * be another file here (the supervisor closes what it inherits) */
	if (w->fd >= 0 && w->owner != getpid())
		w->fd = -1;
	if (w->fd >= 0 && (fstat(w->fd, &had) || stat(w->wal, &now) || had.st_ino != now.st_ino ||
			   had.st_dev != now.st_dev)) {
		/* deleted (its commits were checkpointed into the database first),
		 * perhaps made again: this fd's file is no longer the WAL. Only a
		 * descriptor of the database file would drop SQLite's locks */
		close(w->fd);
		w->fd = -1;
	}
	if (w->fd < 0) {
		w->fd = open(w->wal, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		/* with no WAL, every commit is in the database, which the
		 * checkpoint that removed the WAL fsynced (its entry, that of a
		 * store made just now, with the directories') */
		if (w->fd < 0)
			return errno != ENOENT			   ? errno
			       : fs_sync(w->dir) || fs_sync_dir_of(w->dir) ? errno
									   : 0;
		w->owner = getpid();
		/* the WAL's directory entry (SQLite fsyncs it only through its own
		 * descriptor), and the directory's own (a data dir made just now) */
		int rc = sync_wal_entry(w);
		if (rc)
			return rc;
	}
	struct stat armed;
	if (w->fault && stat(w->fault, &armed) == 0)
		raise(SIGKILL);
#ifdef BERTH_FAULT_INJECTION
	const char *inject = getenv("BERTH_TEST_FSYNC_ERRNO");
	if (inject && *inject)
		return (int)strtol(inject, NULL, 10);
	/* tests: one line a WAL fsync, its pid (how many a launch makes) */
	char pid[24];
	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	berth_test_note("BERTH_TEST_FSYNC_LOG", pid);
#endif
	return fdatasync(w->fd) ? errno : 0;
}

/* Waits until commit seq is on disk: 0, or the errno of the fsync that failed. */
static int wal_sync_wait(struct wal_sync *w, uint64_t seq)
{
	pthread_mutex_lock(&w->mu);
	while (w->durable < seq && !w->failed) {
		if (w->syncing) {
			pthread_cond_wait(&w->done, &w->mu);
			continue;
		}
		/* every commit numbered up to now is in the WAL file: one fsync covers them */
		uint64_t upto = w->committed;
		w->syncing = true;
		pthread_mutex_unlock(&w->mu);
		int rc = fsync_wal(w);
		pthread_mutex_lock(&w->mu);
		w->syncing = false;
		w->fsyncs++;
		if (rc)
			w->failed = rc;
		else if (upto > w->durable)
			w->durable = upto;
		pthread_cond_broadcast(&w->done);
	}
	int rc = w->durable >= seq ? 0 : w->failed;
	pthread_mutex_unlock(&w->mu);
	return rc;
}

int store_on_commit(void *ctx, void *conn, const char *name, int pages)
{
	store *s = ctx;
	if (pages >= s->ckpt_pages)
		sqlite3_wal_checkpoint(conn, name);
	if (!s->sync)
		return SQLITE_OK;
	pthread_mutex_lock(&s->sync->mu);
	s->pending = ++s->sync->committed;
	pthread_mutex_unlock(&s->sync->mu);
	if (s->defer)
		return SQLITE_OK;
	/* the commit stays made; its statement fails, and the caller says so:
	 * SQLITE_FULL is SQLite's "database or disk is full" (BERTH_ENOSPC) */
	int rc = store_sync(s, NULL);
	return rc == -BERTH_ENOSPC ? SQLITE_FULL : rc ? SQLITE_IOERR_FSYNC : SQLITE_OK;
}

bool store_defer_sync(store *s, bool defer)
{
	bool was = s->defer;
	s->defer = defer;
	return was;
}

uint64_t store_sync_take(store *s)
{
	uint64_t seq = s->pending;
	s->pending = 0;
	return seq;
}

int store_sync_to(store *s, uint64_t seq, berth_error **err)
{
	if (!s->sync || !seq)
		return 0;
	int rc = wal_sync_wait(s->sync, seq);
	if (!rc)
		return 0;
	berth_code code = fs_errno_code(rc);
	return berth_fail(err, code,
			  "store %s: a commit could not be made durable%s (fsync of the WAL: %s); "
			  "it may be lost to a power cut, and no further commit is answered "
			  "until berth is started again",
			  s->path, code == BERTH_ENOSPC ? ": the disk is full" : "", strerror(rc));
}

int store_sync(store *s, berth_error **err)
{
	uint64_t seq = store_sync_take(s);
	int rc = store_sync_to(s, seq, err);
	if (rc)
		s->pending = seq; /* still not durable */
	return rc;
}

void store_sync_stats(store *s, uint64_t *committed, uint64_t *durable, uint64_t *fsyncs)
{
	*committed = *durable = *fsyncs = 0;
	if (!s->sync)
		return;
	pthread_mutex_lock(&s->sync->mu);
	*committed = s->sync->committed;
	*durable = s->sync->durable;
	*fsyncs = s->sync->fsyncs;
	pthread_mutex_unlock(&s->sync->mu);
}
