/*
 * mounts.c - a local run's volumes made visible at their mount paths: their
 * directories made and owned, bind mounts (read-only, tmpfs, secrets) in the
 * run's private mount namespace, and the mount points it needed removed
 * after it (supervisor_internal.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <linux/capability.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backend/local/supervisor_internal.h"
#include "base/internal.h"
#include "base/seal.h"

/* ---- volumes ---------------------------------------------------------------------- */

/* The host's directories that a run in a pid namespace has of its own:
 * the temporary ones (runs/ID/tmp, on the data dir's disk, counted in its
 * disk use, gone with it) and /dev/shm (a tmpfs of the run's). What the
 * run needs under one of them (its work dir, a volume's mount path: a data
 * dir may be under /tmp or /dev/shm) is made again in the run's own. */
static const struct {
	const char *path;
	size_t parts; /* the path's parts */
	bool disk;    /* on the data dir's disk, not a tmpfs */
} run_own_dirs[] = {{"/tmp", 1, true}, {"/var/tmp", 2, true}, {"/dev/shm", 2, false}};

/* The index in run_own_dirs of the one path is under; -1: none. */
static int run_own_dir(const char *path)
{
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(run_own_dirs); i++)
		if (local_path_under(path, run_own_dirs[i].path))
			return (int)i;
	return -1;
}

/* Part n (from 0) of an absolute path, in buf; -1 when there is none, -2
 * when it is too long. */
static int nth_part(const char *path, size_t n, char *buf, size_t len)
{
	const char *p = path;
	for (size_t i = 0;; i++) {
		while (*p == '/')
			p++;
		if (!*p)
			return -1;
		const char *end = strchrnul(p, '/');
		if (i == n) {
			if ((size_t)(end - p) >= len)
				return -2;
			memcpy(buf, p, (size_t)(end - p));
			buf[end - p] = 0;
			return 0;
		}
		p = end;
	}
}

/*
 * Opens the directory of an absolute path's first `depth` parts (SIZE_MAX:
 * all), one part at a time from "/", never through a symbolic link: each
 * step is O_NOFOLLOW on the directory the last one opened, so a link put in
 * the path at any moment fails the walk instead of leading elsewhere. With
 * create, a missing part is made (0755) and counted in *made. Returns an
 * O_PATH descriptor, or -1 with errno. This is how berth, as root, touches a
 * mount path that a spec names and another user may be changing.
 */
static int walk_dir(const char *path, size_t depth, bool create, int *made)
{
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	char part[NAME_MAX + 1];
	for (size_t i = 0; fd >= 0 && i < depth; i++) {
		int r = nth_part(path, i, part, sizeof(part));
		if (r == -1)
			break;
		if (r == -2) {
			close(fd);
			errno = ENAMETOOLONG;
			return -1;
		}
		int next = openat(fd, part, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT && create) {
			if (mkdirat(fd, part, 0755) == 0 && made)
				(*made)++;
			next = openat(fd, part, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		int e = errno;
		close(fd);
		errno = e;
		fd = next;
	}
	return fd;
}

/* How many parts an absolute path has. */
static size_t parts_of(const char *path)
{
	char part[NAME_MAX + 1];
	size_t n = 0;
	while (nth_part(path, n, part, sizeof(part)) != -1)
		n++;
	return n;
}

/* mount(2) onto the directory fd names, not onto a path to look up again. */
static int mount_at(const char *source, int fd, const char *type, unsigned long flags,
		    const char *data)
{
	char target[64];
	snprintf(target, sizeof(target), "/proc/self/fd/%d", fd);
	return mount(source, target, type, flags, data);
}

/* The gid the run's processes have. */
int64_t sup_run_gid(const store_run *r)
{
	return r->gid >= 0 ? r->gid : r->uid >= 0 ? r->uid : -1;
}

/* Makes each volume's directory, and its mount path when missing
 * (remembering the first directory made, to remove it afterwards). A mount
 * path is made on the host as root: none of its parts may be a symbolic
 * link, which another user could point anywhere. */
int sup_prepare_volumes(sup *s, bool fallback, berth_buf *why)
{
	const store_run *r = s->r;
	for (size_t i = 0; i < s->nvols; i++) {
		volume *v = &s->vols[i];
		if (!strcmp(v->kind, "dir")) {
			struct stat before;
			bool made = lstat(v->source, &before) != 0;
			errno = 0;
			if (fs_mkdirs(v->source, 0755) || lstat(v->source, &before) ||
			    !S_ISDIR(before.st_mode)) {
				berth_buf_printf(why, "volume \"%s\": cannot create %s: %s", v->name, v->source,
						 errno ? strerror(errno) : "not a directory");
				return -1;
			}
			/* the run's user owns what is made for it (a shared claim: when it is
			 * made, by the first run of the project); fs_group: the group owns
			 * the volume and every file made in it */
			if (r->uid >= 0 && (made || !strcmp(v->life, "run")) &&
			    chown(v->source, (uid_t)r->uid, (gid_t)sup_run_gid(r))) {
				berth_buf_printf(why, "volume \"%s\": chown: %s", v->name, strerror(errno));
				return -1;
			}
			if (r->fs_group >= 0 && chown(v->source, (uid_t)-1, (gid_t)r->fs_group) == 0)
				chmod(v->source, 02775);
		}
		if (!strcmp(v->kind, "secret") && fallback) {
			berth_buf_printf(why, "volume \"%s\": a secret volume needs a mount namespace, "
					 "which this host does not allow berth", v->name);
			return -1;
		}
		if (fallback)
			continue;
		/* under /tmp or /dev/shm, the run's own: made there by its init */
		v->in_tmp = s->pidns && run_own_dir(v->mount) >= 0;
		if (v->in_tmp)
			continue;
		int fd = walk_dir(v->mount, SIZE_MAX, true, &v->made);
		if (fd < 0) {
			berth_buf_printf(why, "volume \"%s\": cannot make the mount path %s: %s%s", v->name,
					 v->mount, strerror(errno),
					 errno == ENOTDIR || errno == ELOOP
						 ? " (a part of it is a symbolic link, or not a directory)"
						 : "");
			return -1;
		}
		close(fd);
	}
	return 0;
}

/* Removes the mount path directories made for the run, when still empty,
 * by the same walk: a part renamed or made a link since is not followed. */
void sup_remove_mount_points(sup *s)
{
	for (size_t i = s->nvols; i-- > 0;) {
		volume *v = &s->vols[i];
		size_t parts = 0;
		for (const char *p = v->mount; *p; p++)
			parts += p[0] == '/' && p[1] && p[1] != '/';
		for (int k = 0; k < v->made && parts > 0; k++, parts--) {
			int parent = walk_dir(v->mount, parts - 1, false, NULL);
			char last[NAME_MAX + 1];
			if (parent < 0 || nth_part(v->mount, parts - 1, last, sizeof(last)) < 0 ||
			    unlinkat(parent, last, AT_REMOVEDIR)) {
				if (parent >= 0)
					close(parent);
				break;
			}
			close(parent);
		}
	}
}

/* In the child: the run's mount namespace (made already with its pid
 * namespace, or here). In a pid namespace: a /proc of the run's processes
 * alone, a /tmp of its own (runs/ID/tmp) and a /dev/shm of its own (a
 * tmpfs that goes with the namespace); for a run that stays uid 0, /sys
 * and /proc/sys read-only. Then the volumes at their mount paths, each
 * reached by walk_dir and mounted through its descriptor. Returns 0, or -1
 * when the host allows no mount namespace (the caller then passes the
 * volumes' paths in the environment), -2 when a mount failed. */
int sup_mount_run(sup *s, bool pidns, const char *const *secret_files, const size_t *secret_lens)
{
	const store_run *r = s->r;
	if (!pidns && unshare(CLONE_NEWNS))
		return -1;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return -2;
	/* the volumes' directories, opened before a /tmp of its own hides a data
	 * dir under /tmp */
	int *src = berth_calloc(s->nvols + 1, sizeof(int));
	if (!src)
		return -2;
	for (size_t i = 0; i < s->nvols; i++) {
		bool bind = !strcmp(s->vols[i].kind, "dir") || !strcmp(s->vols[i].kind, "ro");
		src[i] = bind ? open(s->vols[i].source, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
		if (bind && src[i] < 0)
			return -2;
	}
	if (pidns) {
		const unsigned long safe = MS_NOSUID | MS_NODEV;
		char shm[64] = "mode=1777";
		if (r->info.mem_limit > 0)
			snprintf(shm, sizeof(shm), "mode=1777,size=%lld", (long long)r->info.mem_limit);
		/* a working directory under /tmp or /dev/shm stays where it was:
		 * bound again at its path in the run's own */
		int own = run_own_dir(r->workdir);
		if (own >= 0 && (run_own_dirs[own].disk ? !s->tmp : access("/dev/shm", F_OK) != 0))
			own = -1; /* not replaced */
		int work = own >= 0 ? open(r->workdir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
		/* (one gone since the run was submitted: the command starts in "/", as
		 * anywhere else) */
		/* (by its descriptor: a data dir under /tmp or /dev/shm is hidden once
		 * the run's own are there) */
		int tmp = s->tmp ? open(s->tmp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
		if (mount("proc", "/proc", "proc", safe | MS_NOEXEC, NULL) ||
		    (access("/dev/shm", F_OK) == 0 && mount("tmpfs", "/dev/shm", "tmpfs", safe, shm)))
			return -2;
		char tmp_at[64];
		snprintf(tmp_at, sizeof(tmp_at), "/proc/self/fd/%d", tmp);
		for (size_t i = 0; tmp >= 0 && i < BERTH_ARRAY_SIZE(run_own_dirs); i++)
			if (run_own_dirs[i].disk && access(run_own_dirs[i].path, F_OK) == 0 &&
			    mount(tmp_at, run_own_dirs[i].path, NULL, MS_BIND, NULL))
				return -2;
		if (s->tmp && tmp < 0)
			return -2;
		if (work >= 0) {
			/* under /tmp, its first part below it is made there, on the data
			 * dir's disk, and holds a small tmpfs, read-only once the rest of
			 * the path is made in it: one directory on the disk for the whole
			 * path (each costs an inode to make and another to remove, 0.05 to
			 * 0.3 ms on a busy ext4); /dev/shm is a tmpfs already */
			size_t top_parts = run_own_dirs[own].parts + 1;
			bool deep = run_own_dirs[own].disk && parts_of(r->workdir) > top_parts;
			int top = deep ? walk_dir(r->workdir, top_parts, true, NULL) : -1;
			if (deep && (top < 0 || mount_at("tmpfs", top, "tmpfs", safe | MS_NOEXEC,
							  "mode=0755,size=16k,nr_inodes=64")))
				return -2;
			if (top >= 0)
				close(top);
			char from[64];
			snprintf(from, sizeof(from), "/proc/self/fd/%d", work);
			int at = walk_dir(r->workdir, SIZE_MAX, true, NULL);
			if (at < 0 || mount_at(from, at, NULL, MS_BIND, NULL))
				return -2;
			close(at);
			close(work);
			top = deep ? walk_dir(r->workdir, top_parts, false, NULL) : -1;
			if (deep && (top < 0 || mount_at(NULL, top, NULL,
							  MS_BIND | MS_REMOUNT | MS_RDONLY | safe | MS_NOEXEC, NULL)))
				return -2;
			if (top >= 0)
				close(top);
		}
		bool root = r->uid >= 0 ? r->uid == 0 : geteuid() == 0;
		static const char *const ro[] = {"/sys", "/proc/sys", "/proc/sysrq-trigger"};
		/* (what this kernel has: one without magic SysRq has no sysrq-trigger) */
		for (size_t i = 0; root && i < BERTH_ARRAY_SIZE(ro); i++)
			if (access(ro[i], F_OK) == 0 && (mount(ro[i], ro[i], NULL, MS_BIND | MS_REC, NULL) ||
						      mount(NULL, ro[i], NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | safe,
							    NULL)))
				return -2;
	}
	for (size_t i = 0; i < s->nvols; i++) {
		volume *v = &s->vols[i];
		int at = walk_dir(v->mount, SIZE_MAX, v->in_tmp, NULL);
		if (at < 0)
			return -2;
		bool bind = !strcmp(v->kind, "dir") || !strcmp(v->kind, "ro");
		bool secret = !strcmp(v->kind, "secret");
		char opts[64];
		snprintf(opts, sizeof(opts), "mode=%s", secret ? "0755" : "1777");
		if (v->size > 0)
			snprintf(opts + strlen(opts), sizeof(opts) - strlen(opts), ",size=%lld",
				 (long long)v->size);
		char from[64];
		snprintf(from, sizeof(from), "/proc/self/fd/%d", src[i]);
		int rc = bind ? mount_at(from, at, NULL, MS_BIND | MS_REC, NULL)
			      : mount_at("tmpfs", at, "tmpfs", MS_NOSUID | MS_NODEV, opts);
		close(at);
		if (rc)
			return -2;
		if (!secret && strcmp(v->kind, "ro"))
			continue;
		/* what was mounted, looked up anew: the mount's root, not the directory under it */
		int top = walk_dir(v->mount, SIZE_MAX, false, NULL);
		if (top < 0)
			return -2;
		if (secret) {
			/* the value lives in memory only, as a file only the run's user reads */
			int fd = openat(top, v->source, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
			if (fd < 0 || write(fd, secret_files[i], secret_lens[i]) != (ssize_t)secret_lens[i] ||
			    (r->uid >= 0 && fchown(fd, (uid_t)r->uid, (gid_t)sup_run_gid(r))))
				rc = -2;
			if (fd >= 0)
				close(fd);
		}
		/* MS_BIND: the flags of this mount alone, never of the file system under it */
		if (!rc && mount_at(NULL, top, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV,
				    NULL))
			rc = -2;
		close(top);
		if (rc)
			return -2;
	}
	return 0;
}

