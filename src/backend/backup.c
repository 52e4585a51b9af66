/*
 * backup.c - berth_backup and berth_restore (berth/backup.h): a data dir's
 * store to one file and back; what the store does with the file is
 * src/store/backup.c's.
 *
 * Files appear whole or not at all: each is written under a temporary name
 * in its directory, fsynced, then renamed (a backup without force is linked,
 * so that a file made meanwhile is not replaced), and the directory fsynced.
 * A restore works on a copy in the data dir (HOME/.restore-XXXXXX): the
 * user's file is only read, and the old store stays until the copy has
 * passed every check and been migrated; the rename makes it the store.
 *
 * Who uses the data dir: a server holds HOME/serve.lock shared for as long
 * as it runs (berth_backend_opts.serves, runtime.c); a restore holds it exclusive, so
 * it refuses a running server and no server starts during it. A run's
 * supervisor is seen in the store (its pid and start time); another berth
 * command by the store's WAL, which SQLite removes when the last connection
 * closes (store_retire).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "backend/local/local.h"
#include "backend/runtime.h"
#include "base/fs.h"
#include "base/internal.h"
#include "base/seal.h"
#include "berth/backup.h"

/* a restore copies at most this much (a store of millions of runs is a few GiB) */
#define RESTORE_MAX ((off_t)64 << 30)

/* A new empty file beside path (path.tmp-XXXXXX, 0600): its name in tmp. */
static int temp_beside(const char *path, char *tmp, size_t len, berth_error **err)
{
	if ((size_t)snprintf(tmp, len, "%s.tmp-XXXXXX", path) >= len)
		return berth_fail(err, BERTH_EARG, "%s: the path is too long", path);
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return berth_fail(err, BERTH_EIO, "cannot write beside %s: %s", path, strerror(errno));
	close(fd);
	return 0;
}

static char *home_of(const berth_backup_opts *o)
{
	return o && o->home ? berth_strdup(o->home) : backend_default_home();
}

/* Refuses a file in the data dir home (or under it): there --force replaced
 * the store under a server, or the secret key with a copy of the store (every
 * secret lost), and a backup would go with the data dir it is to outlive. */
static int outside_home(const char *file, const char *home, berth_error **err)
{
	char *copy = berth_strdup(file), *dir = NULL, *in = NULL;
	if (!copy)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	dir = realpath(dirname(copy), NULL);
	in = dir ? realpath(home, NULL) : NULL; /* no data dir: the open says so */
	size_t n = in ? strlen(in) : 0;
	int rc = in && !strncmp(dir, in, n) && (dir[n] == '/' || !dir[n] || !strcmp(in, "/"))
			 ? berth_fail(err, BERTH_EARG, "%s is in the data dir %s: write the backup "
							"outside it (it could replace the store or its "
							"key, and would be lost with the data dir)",
				      file, in)
			 : 0;
	free(in);
	free(dir);
	free(copy);
	return rc;
}

int berth_backup(const char *file, const berth_backup_opts *o, berth_error **err)
{
	char *home = home_of(o);
	if (!home)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	berth_backend *b = NULL;
	char tmp[4200] = "";
	unsigned char key[SECRET_KEY_BYTES];
	char keyfile[4200];
	bool with_key = o && o->include_key;
	bool force = o && o->force;
	int rc = outside_home(file, home, err);
	struct stat st;
	if (rc)
		;
	else if (!force && lstat(file, &st) == 0)
		rc = berth_fail(err, BERTH_ECONFLICT, "%s exists: --force replaces it", file);
	else if (with_key && fs_path(keyfile, sizeof(keyfile), home, "secret.key"))
		rc = berth_fail(err, BERTH_EARG, "the data dir's path is too long");
	else if (with_key && access(keyfile, F_OK) && errno == ENOENT) {
		berth_problem_add(err, BERTH_ENOTFOUND, BERTH_WARNING, NULL,
				  "%s has no secret key (no secret was ever set): the backup has none",
				  home);
		with_key = false;
	} else if (with_key && secret_key_load(home, 0, key, err))
		rc = -BERTH_EIO;
	if (!rc) {
		berth_backend_opts bo = {.home = home, .passive = true, .existing = true};
		rc = berth_backend_open(&b, NULL, &bo, err);
	}
	if (!rc)
		rc = temp_beside(file, tmp, sizeof(tmp), err);
	if (!rc)
		rc = store_backup_into(b->st, tmp, with_key ? key : NULL, sizeof(key), err);
	if (!rc && fs_sync(tmp))
		rc = berth_fail(err, BERTH_EIO, "cannot write %s: %s", tmp, strerror(errno));
	if (!rc && !force) {
		/* a link fails when file exists: one made since the check is kept (a
		 * filesystem without links: renamed, after one more look) */
		int e = link(tmp, file) ? errno : 0;
		if (e && e != EEXIST)
			e = lstat(file, &st) == 0 ? EEXIST : rename(tmp, file) ? errno : 0;
		if (e)
			rc = berth_fail(err, e == EEXIST ? BERTH_ECONFLICT : BERTH_EIO,
					"cannot write %s: %s", file, strerror(e));
	} else if (!rc && rename(tmp, file))
		rc = berth_fail(err, BERTH_EIO, "cannot write %s: %s", file, strerror(errno));
	if (!rc && fs_sync_dir_of(file))
		rc = berth_fail(err, BERTH_EIO, "cannot write %s: %s", file, strerror(errno));
	if (*tmp)
		unlink(tmp); /* after the link, or what a failure left */
	berth_backend_close(b);
	sodium_memzero(key, sizeof(key));
	free(home);
	return rc;
}

/* Refuses while a run's supervisor runs on the data dir's store. */
static int no_supervisor(berth_backend *b, berth_error **err)
{
	store_supervised *list = NULL;
	size_t n = 0;
	int rc = store_run_supervised(b->st, "local", &list, &n, err);
	for (size_t i = 0; !rc && i < n; i++)
		if (local_pid_is(list[i].supervisor_pid, list[i].supervisor_start))
			rc = berth_fail(err, BERTH_ECONFLICT,
					"run %s is running in %s (its supervisor is pid %lld): stop it, "
					"or let it end, before a restore",
					list[i].id, b->home, (long long)list[i].supervisor_pid);
	store_supervised_free(list, n);
	return rc;
}

/* file's bytes into the new file at to (at most RESTORE_MAX). */
static int copy_file(const char *file, const char *to, berth_error **err)
{
	int in = open(file, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return berth_fail(err, BERTH_EIO, "cannot read %s: %s", file, strerror(errno));
	int out = open(to, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	int rc = 0;
	if (out < 0 || fstat(in, &st))
		rc = berth_fail(err, BERTH_EIO, "cannot copy %s: %s", file, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		rc = berth_fail(err, BERTH_EARG, "%s is not a file", file);
	else if (st.st_size > RESTORE_MAX)
		rc = berth_fail(err, BERTH_ETOOBIG, "%s is over %lld GiB", file,
				(long long)(RESTORE_MAX >> 30));
	char buf[1 << 16];
	ssize_t got = 0;
	while (!rc && (got = read(in, buf, sizeof(buf))) > 0)
		for (ssize_t off = 0; !rc && off < got;) {
			ssize_t put = write(out, buf + off, (size_t)(got - off));
			if (put < 0 && errno != EINTR)
				rc = berth_fail(err, fs_errno_code(errno),
						"cannot copy %s: %s", file, strerror(errno));
			off += put > 0 ? put : 0;
		}
	if (!rc && got < 0)
		rc = berth_fail(err, BERTH_EIO, "cannot read %s: %s", file, strerror(errno));
	if (!rc && fsync(out))
		rc = berth_fail(err, BERTH_EIO, "cannot copy %s: %s", file, strerror(errno));
	if (out >= 0)
		close(out);
	close(in);
	return rc;
}

/* Writes key as home's secret.key (temporary, fsync, rename), unless it is that already. */
static int install_key(const char *home, const unsigned char *key, berth_error **err)
{
	unsigned char had[SECRET_KEY_BYTES];
	berth_error *none = NULL;
	bool same = !secret_key_load(home, 0, had, &none) && !memcmp(had, key, sizeof(had));
	berth_error_free(none);
	sodium_memzero(had, sizeof(had));
	if (same)
		return 0;
	char path[4200], tmp[4200];
	if (fs_path(path, sizeof(path), home, "secret.key") || temp_beside(path, tmp, sizeof(tmp), err))
		return berth_fail(err, BERTH_EIO, "cannot write the secret key in %s", home);
	int fd = open(tmp, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	bool ok = fd >= 0 && write(fd, key, SECRET_KEY_BYTES) == SECRET_KEY_BYTES && !fsync(fd);
	if (fd >= 0)
		close(fd);
	if (!ok || rename(tmp, path)) {
		unlink(tmp);
		return berth_fail(err, BERTH_EIO, "cannot write %s: %s", path, strerror(errno));
	}
	return 0;
}

/* A warning when the store's secrets do not open with home's key (the
 * first secret found, in the first 1000 projects). */
static void check_secrets(berth_backend *b, berth_error **err)
{
	store_project *projects = NULL;
	size_t np = 0, nn = 0, p = 0;
	char **names = NULL;
	berth_error *e = NULL;
	if (store_project_list(b->st, NULL, 0, true, &projects, &np, &e))
		goto out;
	for (; p < np && p < 1000 && !nn; p++) {
		for (size_t i = 0; i < nn; i++)
			free(names[i]);
		free(names);
		names = NULL;
		if (store_secret_names(b->st, projects[p].name, &names, &nn, &e))
			goto out;
	}
	if (!nn)
		goto out;
	const char *project = projects[p - 1].name;
	unsigned char key[SECRET_KEY_BYTES];
	void *sealed = NULL;
	size_t len = 0;
	char *value = NULL;
	size_t vlen = 0;
	bool opens = !secret_key_load(b->home, 0, key, &e) &&
		     !store_secret_get(b->st, project, names[0], &sealed, &len, &e) && sealed &&
		     !secret_open(key, project, names[0], sealed, len, &value, &vlen, &e);
	sodium_memzero(key, sizeof(key));
	if (value)
		secret_free(value, vlen);
	free(sealed);
	if (!opens)
		berth_problem_add(err, BERTH_EIO, BERTH_WARNING, NULL,
				  "the restored secrets do not open with the key of %s (secret.key): "
				  "restore a backup made with --include-key, or put back the key of "
				  "the data dir it was made in",
				  b->home);
out:
	berth_error_free(e);
	store_project_list_free(projects, np);
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	free(names);
}

int berth_restore(const char *file, const berth_backup_opts *o, berth_error **err)
{
	char *home = home_of(o);
	if (!home)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	char lock[4200], db[4200], copy[4200] = "";
	int lock_fd = -1, rc = 0;
	berth_backend *b = NULL;
	unsigned char key[SECRET_KEY_BYTES];
	bool has_key = false;
	struct stat st;
	const char *url = getenv("BERTH_STORE");
	if (url && *url)
		rc = berth_fail(err, BERTH_EARG, "the store is on PostgreSQL ($BERTH_STORE): restore it "
				"with PostgreSQL (pg_restore), not into the data dir %s", home);
	else if (stat(file, &st))
		rc = berth_fail(err, errno == ENOENT ? BERTH_ENOTFOUND : BERTH_EIO, "%s: %s", file,
				strerror(errno));
	else if (!S_ISREG(st.st_mode))
		rc = berth_fail(err, BERTH_EARG, "%s is not a file", file);
	else if (fs_private_dir(home, geteuid() == 0 ? 0711 : 0700) ||
	    fs_path(lock, sizeof(lock), home, "serve.lock") || fs_path(db, sizeof(db), home, "berth.db"))
		rc = berth_fail(err, BERTH_EIO, "cannot use the data dir %s: %s", home, strerror(errno));
	else if ((lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0)
		rc = berth_fail(err, BERTH_EIO, "cannot open %s: %s", lock, strerror(errno));
	else if (flock(lock_fd, LOCK_EX | LOCK_NB))
		rc = berth_fail(err, BERTH_ECONFLICT,
				"a server (berth serve) uses the data dir %s: stop it before a restore",
				home);
	if (!rc) {
		berth_backend_opts bo = {.home = home, .passive = true};
		rc = berth_backend_open(&b, NULL, &bo, err);
	}
	if (!rc)
		rc = no_supervisor(b, err);
	berth_backend_close(b);
	b = NULL;
	char shown[4200];
	snprintf(shown, sizeof(shown), "%s", file);
	if (!rc && !(rc = temp_beside(db, copy, sizeof(copy), err)))
		rc = copy_file(file, copy, err);
	if (!rc)
		rc = store_restore_check(copy, shown, key, sizeof(key), &has_key, err);
	if (!rc) { /* migrated up to this berth's schema, then whole in its one file */
		store *s = NULL;
		rc = store_open(&s, copy, err);
		if (!rc)
			rc = store_checkpoint(s, err);
		store_close(s);
		if (!rc)
			rc = store_retire(copy, err);
		if (!rc && fs_sync(copy))
			rc = berth_fail(err, BERTH_EIO, "cannot write %s: %s", copy, strerror(errno));
	}
	if (!rc)
		rc = store_retire(db, err);
	if (!rc && has_key)
		rc = install_key(home, key, err);
	if (!rc && rename(copy, db))
		rc = berth_fail(err, BERTH_EIO, "cannot replace %s: %s", db, strerror(errno));
	if (!rc) {
		*copy = 0;
		fs_sync_dir_of(db);
		berth_backend_opts bo = {.home = home, .passive = true};
		berth_error *e = NULL;
		if (!berth_backend_open(&b, NULL, &bo, &e))
			check_secrets(b, err);
		berth_error_free(e);
		berth_backend_close(b);
	}
	if (*copy) {
		char side[4300];
		unlink(copy);
		snprintf(side, sizeof(side), "%s-wal", copy);
		unlink(side);
		snprintf(side, sizeof(side), "%s-shm", copy);
		unlink(side);
	}
	if (lock_fd >= 0)
		close(lock_fd);
	sodium_memzero(key, sizeof(key));
	free(home);
	return rc;
}
