/*
 * isolation.c - what keeps a local run to itself: its work dir and /tmp, the
 * disk it may take back on a full disk, its seccomp filter, and the pid and
 * mount namespaces the host allows (supervisor_internal.h).
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
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <linux/capability.h>
#include <stdint.h>
#include <linux/seccomp.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backend/local/supervisor_internal.h"
#include "base/internal.h"
#include "base/seal.h"

/* ---- isolation -------------------------------------------------------------------------- */

/* A run of another user than berth's works in runs/ID/work, its own: the
 * run's directory is passed through (0711), never listed. In a pid
 * namespace it gets runs/ID/tmp as its /tmp and /var/tmp, its user's alone. And runs/ID/reserve holds
 * RUN_RESERVE bytes of disk that its end gives back when the disk is full,
 * to record how it ended. */
#define RUN_RESERVE (256 << 10)
#define RESERVE_WHEN_UNDER (4ULL << 30) /* free bytes under which a run takes one */

int sup_prepare_workdir(sup *s, berth_buf *why)
{
	const store_run *r = s->r;
	char rundir[4096], tmp[4200], reserve[4200];
	if (backend_run_path(rundir, sizeof(rundir), s->home, r->info.id, NULL))
		return berth_buf_printf(why, "the data dir's path is too long"), -1;
	/* only where the disk could fill during the run: on a disk with room, the
	 * blocks a file system keeps for root (5% on ext4) and the done marker's
	 * outcome are enough, and 0.2 ms of allocating and freeing are saved */
	struct statvfs fs;
	snprintf(reserve, sizeof(reserve), "%s/reserve", rundir);
	int fd = statvfs(rundir, &fs) == 0 && (uint64_t)fs.f_bavail * fs.f_frsize >= RESERVE_WHEN_UNDER
			 ? -1
			 : open(reserve, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0) {
		if (posix_fallocate(fd, 0, RUN_RESERVE))
			unlink(reserve); /* the disk is full already: nothing to give back */
		close(fd);
	}
	struct stat st;
	bool own = local_path_under(r->workdir, rundir);
	if (own && (fs_private_dir(rundir, 0711) || fs_private_dir(r->workdir, 0700) ||
		    lstat(r->workdir, &st) ||
		    (r->uid >= 0 && st.st_uid != (uid_t)r->uid &&
		     chown(r->workdir, (uid_t)r->uid, (gid_t)sup_run_gid(r))))) {
		berth_buf_printf(why, "cannot make its work dir %s: %s", r->workdir, strerror(errno));
		return -1;
	}
	if (!s->pidns)
		return 0;
	/* its user's alone: no other user of the machine reaches it through the
	 * data dir (a run of another uid than berth's; berth's own, when not) */
	snprintf(tmp, sizeof(tmp), "%s/tmp", rundir);
	if (fs_private_dir(tmp, 0700) || lstat(tmp, &st) ||
	    (r->uid >= 0 && st.st_uid != (uid_t)r->uid && chown(tmp, (uid_t)r->uid, (gid_t)sup_run_gid(r))) ||
	    !(s->tmp = berth_strdup(tmp))) {
		berth_buf_printf(why, "cannot make its /tmp %s: %s", tmp, strerror(errno));
		return -1;
	}
	return 0;
}

/* The filter of a local run's processes: what a pod's RuntimeDefault
 * seccomp profile refuses, refused with EPERM (tools/seccomp_filter.c, which
 * libseccomp made into this program when berth was built). */
#include "seccomp_filter.h"

int sup_harden_load(void)
{
	/* the kernel copies the program and writes nothing through the pointer */
	struct sock_fprog prog = {(unsigned short)BERTH_ARRAY_SIZE(local_seccomp_bpf),
				  (struct sock_filter *)(uintptr_t)local_seccomp_bpf};
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

/* clone3's arguments up to its cgroup (CLONE_ARGS_SIZE_VER2), without
 * <linux/sched.h>, which clashes with <sched.h> on some libcs. */
struct clone3_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
		set_tid_size, cgroup;
};
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

pid_t sup_clone(bool pidns, int cgfd, bool *in_cgroup)
{
	unsigned long ns = pidns ? CLONE_NEWPID | CLONE_NEWNS : 0;
	*in_cgroup = false;
#ifdef SYS_clone3
	if (cgfd >= 0) {
		struct clone3_args a = {.flags = ns | CLONE_INTO_CGROUP, .exit_signal = SIGCHLD,
					.cgroup = (uint64_t)cgfd};
		pid_t pid = (pid_t)syscall(SYS_clone3, &a, sizeof(a));
		if (pid >= 0) {
			*in_cgroup = true;
			return pid;
		}
	}
#endif
	return pidns ? (pid_t)syscall(SYS_clone, ns | SIGCHLD, NULL, NULL, NULL, 0UL) : fork();
}

/* Whether a child of this process may unshare flags (tried in a throwaway one). */
static bool can_unshare(int flags)
{
	pid_t t = fork();
	if (t == 0)
		_exit(unshare(flags) ? 1 : 0);
	int st = 1;
	while (t > 0 && waitpid(t, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* Which namespaces the run gets: as root, a pid namespace with a mount
 * namespace; else, for volumes, a mount namespace where the host allows
 * one. What it does not get is said in a Warning event. Returns true when
 * there is no mount namespace for the volumes. */
bool sup_namespaces(sup *s)
{
	/* with CAP_SYS_ADMIN (root outside a container) nothing needs trying:
	 * a fork less on every launch */
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	if ((syscall(SYS_capget, &h, d) == 0 &&
	     (d[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective & CAP_TO_MASK(CAP_SYS_ADMIN))) ||
	    (geteuid() == 0 && can_unshare(CLONE_NEWPID | CLONE_NEWNS))) {
		s->pidns = true;
		return false;
	}
	sup_note(s, "Warning",
		 geteuid() ? "no pid namespace (berth is not root): the run's processes see the "
			     "machine's in /proc"
			   : "no pid namespace (the host refuses one): the run's processes see the "
			     "machine's in /proc");
	if (!s->nvols || can_unshare(CLONE_NEWNS))
		return false;
	sup_note(s, "Warning", "no mount namespace: the volumes' paths are in BERTH_VOLUME_<NAME>");
	return true;
}

