/*
 * files.c - what a local run has on disk: its directory (runs/ID: the log,
 * the work dir, its /tmp, the done marker), its volumes (the table the
 * supervisor reads, the directories berth makes for them), and the walk
 * that sizes and removes them without following what a run could swap.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/local/local.h"
#include "base/internal.h"

/* True when path is dir itself or below it, by its text: no "..", no "//". */
bool local_path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (strncmp(path, dir, n) || (path[n] && path[n] != '/'))
		return false;
	for (const char *p = path + n; *p; p++)
		if (p[0] == '/' && (p[1] == '/' || (p[1] == '.' && (!p[2] || p[2] == '/' ||
								     (p[2] == '.' && (!p[3] || p[3] == '/'))))))
			return false;
	return true;
}

static bool one_of(const char *s, const char *const *set)
{
	for (; *set; set++)
		if (!strcmp(s, *set))
			return true;
	return false;
}

/* The volume table (store.h): six NUL-terminated fields a volume, which no
 * string of a spec can break (none holds a NUL). Checked again here all the
 * same: a kind and a life of berth's, a mount path that is absolute, and a
 * directory under the data dir for what berth makes, chowns or removes. */
int local_volumes_parse(const char *home, const store_run *r, local_volume **vols, size_t *nvols,
			berth_buf *why)
{
	static const char *const kinds[] = {"dir", "ro", "tmpfs", "secret", NULL};
	static const char *const lives[] = {"run", "keep", NULL};
	const char *p = r->volumes, *end = p ? p + r->volumes_len : NULL;
	char dirs[4096], configmaps[4096];
	if (fs_path(dirs, sizeof(dirs), home, "volumes") ||
	    fs_path(configmaps, sizeof(configmaps), home, "configmaps"))
		return berth_buf_printf(why, "the data dir's path is too long"), -1;
	while (p && p < end) {
		const char *f[6];
		for (int i = 0; i < 6; i++) {
			const char *nul = p < end ? memchr(p, 0, (size_t)(end - p)) : NULL;
			if (!nul) {
				berth_buf_printf(why, "its volume table is malformed (made by another berth?)");
				return -1;
			}
			f[i] = p;
			p = nul + 1;
		}
		char *stop;
		long long size = strtoll(f[5], &stop, 10);
		bool ok = one_of(f[0], kinds) && one_of(f[4], lives) && f[3][0] == '/' && !*stop &&
			  size >= 0;
		if (ok && (!strcmp(f[0], "dir") || !strcmp(f[0], "tmpfs")))
			ok = local_path_under(f[2], dirs) && strlen(f[2]) > strlen(dirs);
		else if (ok && !strcmp(f[0], "ro"))
			ok = local_path_under(f[2], configmaps) && strlen(f[2]) > strlen(configmaps);
		else if (ok)
			ok = !strchr(f[2], '/');
		if (!ok) {
			berth_buf_printf(why, "its volume table names a volume berth would not make");
			return -1;
		}
		local_volume *grown = berth_realloc(*vols, (*nvols + 1) * sizeof(*grown));
		if (!grown)
			return berth_buf_printf(why, "out of memory"), -1;
		*vols = grown;
		(*vols)[(*nvols)++] = (local_volume){.kind = f[0], .name = f[1], .source = f[2],
					       .mount = f[3], .life = f[4], .size = size};
	}
	return 0;
}

/* Directories deeper than this are neither counted nor removed (each level
 * holds a descriptor while it is walked). */
#define TREE_DEPTH 512

/*
 * Walks name in the directory at: adds the blocks of everything in it to *bytes (when
 * not NULL) and, with remove, removes it all, depth first. Each directory is
 * opened O_NOFOLLOW in the one above it and never on another file system:
 * a run that renames a directory of its tree, or makes it a link, while
 * berth (root) walks it, leads the walk nowhere else (nftw, by path, would
 * follow the swap between its lstat and its open).
 */
static void tree_at(int at, const char *name, dev_t dev, int depth, bool remove, int64_t *bytes)
{
	struct stat st;
	if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW))
		return;
	if (bytes)
		*bytes += (int64_t)st.st_blocks * 512;
	bool dir = S_ISDIR(st.st_mode);
	if (dir && st.st_dev == dev && depth < TREE_DEPTH) {
		int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
		if (!d && fd >= 0)
			close(fd);
		struct dirent *de;
		while (d && (de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				tree_at(dirfd(d), de->d_name, dev, depth + 1, remove, bytes);
		if (d)
			closedir(d);
	}
	if (remove)
		unlinkat(at, name, dir ? AT_REMOVEDIR : 0);
}

/* tree_at on a path of berth's own (its parent is trusted, not its contents). */
int64_t local_tree(const char *path, bool remove)
{
	char parent[4096];
	const char *slash = strrchr(path, '/');
	if (!slash || slash == path || (size_t)(slash - path) >= sizeof(parent))
		return 0;
	memcpy(parent, path, (size_t)(slash - path));
	parent[slash - path] = 0;
	int64_t bytes = 0;
	struct stat st;
	int fd = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, &st) == 0)
		tree_at(fd, slash + 1, st.st_dev, 0, remove, &bytes);
	if (fd >= 0)
		close(fd);
	return bytes;
}

void local_rm_tree(const char *path)
{
	local_tree(path, true);
}

void local_worker_log(char *buf, size_t len, int64_t rank)
{
	if (rank > 0)
		snprintf(buf, len, "log.%lld", (long long)rank);
	else
		snprintf(buf, len, "log");
}

void local_cleanup_run_dirs(const char *home, const char *id)
{
	static const char *const dirs[] = {"work", "tmp", "reserve"};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(dirs); i++) {
		char path[4096];
		/* most often empty, or not there: one call */
		if (!backend_run_path(path, sizeof(path), home, id, dirs[i]) &&
		    rmdir(path) && errno != ENOENT)
			local_rm_tree(path);
	}
}

void local_cleanup_volumes(const char *home, const store_run *r)
{
	local_volume *vols = NULL;
	size_t n = 0;
	berth_buf why = BERTH_BUF_INIT;
	if (local_volumes_parse(home, r, &vols, &n, &why) == 0)
		for (size_t i = 0; i < n; i++)
			if (!strcmp(vols[i].life, "run"))
				local_rm_tree(vols[i].source);
	berth_buf_release(&why);
	free(vols);
	char dir[4096];
	if (!fs_path(dir, sizeof(dir), home, "volumes/%s", r->info.id))
		rmdir(dir);
}

/* Creates HOME/runs/ID/done, which waiters watch for. */
void local_mark_done(const char *home, const char *id)
{
	local_mark_outcome(home, id, NULL, true);
}

/* The outcome in the done marker: "STATE EXIT SIGNAL OOM\nREASON". */
void local_mark_outcome(const char *home, const char *id, const berth_run_info *i, bool make_dir)
{
	char path[4096];
	/* a run that never started has no directory yet */
	if (make_dir && (backend_run_path(path, sizeof(path), home, id, NULL) || fs_mkdirs(path, 0700)))
		return;
	if (backend_run_path(path, sizeof(path), home, id, "done"))
		return;
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0 && i)
		dprintf(fd, "%d %d %d %d\n%s", (int)i->state, i->exit_code, i->signal, i->oom_killed,
			i->reason ? i->reason : "");
	if (fd >= 0)
		close(fd);
}
