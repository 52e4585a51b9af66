/*
 * runtime.c - what the kinds of backend share (runtime.h): the data dir,
 * made private whatever the umask; the store in it; the policy; the berth
 * binary that starts supervisors; the options the handle was opened with.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/runtime.h"
#include "base/fs.h"
#include "base/internal.h"
#include "plan/policy_internal.h"

char *backend_default_home(void)
{
	const char *h = getenv("BERTH_HOME");
	if (h && *h)
		return berth_strdup(h);
	const char *home = getenv("HOME");
	if (!home || !*home) {
		struct passwd *pw = getpwuid(getuid());
		home = pw ? pw->pw_dir : "/";
	}
	berth_buf b = BERTH_BUF_INIT;
	berth_buf_printf(&b, "%s/.berth", home);
	return b.failed ? (berth_buf_release(&b), NULL) : berth_buf_detach(&b);
}

/* A copy of s, or NULL for NULL; *failed set when out of memory. */
static char *dup_opt(const char *s, bool *failed)
{
	char *d = s ? berth_strdup(s) : NULL;
	if (s && !d)
		*failed = true;
	return d;
}

/* A server's mark on its data dir (opts.serves): HOME/serve.lock held shared,
 * which berth_restore (backup.c) takes exclusive. */
static int hold_served(berth_backend *b, berth_error **err)
{
	char path[4200];
	if (fs_path(path, sizeof(path), b->home, "serve.lock"))
		return berth_fail(err, BERTH_EARG, "the data dir's path is too long");
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return berth_fail(err, BERTH_EIO, "cannot open %s: %s", path, strerror(errno));
	if (flock(fd, LOCK_SH | LOCK_NB)) {
		int e = errno;
		close(fd);
		if (e == EWOULDBLOCK)
			return berth_fail(err, BERTH_ECONFLICT,
					  "%s: a restore (berth admin restore) is replacing its store: "
					  "start again when it is done",
					  b->home);
		return berth_fail(err, BERTH_EIO, "%s: %s", path, strerror(e));
	}
	b->served_fd = fd;
	return 0;
}

int backend_runtime_open(berth_backend **out, const berth_backend_opts *opts, berth_error **err)
{
	*out = NULL;
	berth_backend *b = berth_calloc(1, sizeof(*b));
	if (!b)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	bool failed = false;
	b->served_fd = -1;
	b->home = opts && opts->home ? dup_opt(opts->home, &failed) : backend_default_home();
	b->exe = dup_opt(opts && opts->exe ? opts->exe : "/proc/self/exe", &failed);
	b->arena = berth_arena_new();
	b->policy = opts ? opts->policy : NULL;
	b->passive = opts && opts->passive;
	b->cached = opts && opts->cached;
	b->waits = opts && opts->waits;
	b->fork_supervisors = opts && opts->fork_supervisors;
	b->config = dup_opt(opts ? opts->kubeconfig : NULL, &failed);
	b->context = dup_opt(opts ? opts->context : NULL, &failed);
	if (!b->policy)
		b->policy = b->own_policy = berth_policy_builtin();
	if (failed || !b->home || !b->exe || !b->arena || !b->policy) {
		backend_runtime_close(b);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	/* /proc/self/exe names this process's binary only while it runs: keep the path */
	if (!strcmp(b->exe, "/proc/self/exe")) {
		char path[4096];
		ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
		char *exe = NULL;
		if (n > 0) {
			path[n] = 0;
			exe = berth_strdup(path);
		}
		if (exe) {
			free(b->exe);
			b->exe = exe;
		}
	}
	/* as root, runs of other uids reach their work dir (runs/ID/work, their
	 * HOME) by its path: the data dir may be passed through, never listed or
	 * read */
	char path[4096];
	mode_t pass = geteuid() == 0 ? 0711 : 0700;
	int rc = 0;
	struct stat st;
	if (opts && opts->existing && stat(b->home, &st) != 0 && errno == ENOENT)
		/* a handle that reads what is there makes nothing: no data dir, no runs */
		rc = berth_fail(err, BERTH_ENOTFOUND, "no data dir %s", b->home);
	else if (fs_private_dir(b->home, pass))
		rc = berth_fail(err, BERTH_EIO, "cannot create the data dir %s: %s", b->home,
				strerror(errno));
	else if (opts && opts->serves && (rc = hold_served(b, err)))
		;
	else if (backend_store_where(path, sizeof(path), b->home) || store_open(&b->st, path, err))
		rc = -BERTH_EIO;
	if (rc) {
		backend_runtime_close(b);
		return rc;
	}
	if (b->cached)
		store_long_lived(b->st);
	store_defer_sync(b->st, opts && opts->defer_sync);
	*out = b;
	return 0;
}

void backend_runtime_close(berth_backend *b)
{
	if (!b)
		return;
	store_close(b->st);
	store_close(b->lead);
	if (b->served_fd >= 0)
		close(b->served_fd);
	free(b->config);
	free(b->context);
	berth_policy_free(b->own_policy);
	berth_arena_free(b->arena);
	free(b->home);
	free(b->exe);
	free(b);
}

/* A kind's state is found by its table of operations, not by its place in
 * the registry: the kinds and the runtime need no registry. */
void *backend_state(const berth_backend *b, const backend_ops *kind)
{
	for (size_t i = 0; i < BACKEND_KINDS_MAX; i++)
		if (b->state[i].kind == kind)
			return b->state[i].state;
	return NULL;
}

void backend_state_set(berth_backend *b, const backend_ops *kind, void *state)
{
	size_t i = 0, free_slot = BACKEND_KINDS_MAX;
	for (; i < BACKEND_KINDS_MAX && b->state[i].kind != kind; i++)
		if (!b->state[i].kind && free_slot == BACKEND_KINDS_MAX)
			free_slot = i;
	if (i == BACKEND_KINDS_MAX)
		i = free_slot;
	if (i == BACKEND_KINDS_MAX)
		return; /* more kinds than the registry holds: cannot be */
	b->state[i].kind = state ? kind : NULL;
	b->state[i].state = state;
}

int berth_backend_lead(berth_backend *b, berth_error **err)
{
	char path[4096];
	if (!b->lead && (backend_store_where(path, sizeof(path), b->home) || store_open(&b->lead, path, err)))
		return -BERTH_EIO;
	return store_lead(b->lead, err);
}

int backend_store_where(char *buf, size_t len, const char *home)
{
	const char *url = getenv("BERTH_STORE");
	if (url && *url)
		return snprintf(buf, len, "%s", url) < (int)len ? 0 : -1;
	return fs_path(buf, len, home, "berth.db");
}

int backend_run_path(char *buf, size_t len, const char *home, const char *id, const char *sub)
{
	/* the id is a path component: only what a run id may be ([a-z0-9-]), never ".." */
	if (!id || berth_run_id_check(id))
		return -1;
	return sub ? fs_path(buf, len, home, "runs/%s/%s", id, sub) : fs_path(buf, len, home, "runs/%s", id);
}

int64_t backend_sample_ms(void)
{
	enum { EVERY = 5000, MIN = 100, MAX = BACKEND_SAMPLE_MS_MAX }; /* 720 samples are the first hour */
	const char *v = getenv("BERTH_SAMPLE_MS");
	char *end = NULL;
	long long ms = v && *v ? strtoll(v, &end, 10) : EVERY;
	if (v && *v && (*end || ms < 0))
		ms = EVERY;
	return ms == 0 ? 0 : ms < MIN ? MIN : ms > MAX ? MAX : ms;
}
