/*
 * seccomp_filter.c - run when berth is built (the Makefile writes its output
 * to build/gen/seccomp_filter.h): the seccomp filter of a local run's
 * processes, made into a BPF program by libseccomp, printed as a C array.
 *
 * The filter is the same for every run, so libseccomp makes it once, here,
 * not in each run's supervisor, where it took 60 rules' worth of allocation
 * and a memfd on the way from fork to the run's start (0.5 ms and more).
 * The program is for the architecture berth is built for, as it was when
 * made at run time; a process that calls the kernel as another one (int 0x80
 * on x86-64) is killed by it, as libseccomp makes every filter.
 *
 *   seccomp_filter > seccomp_filter.h
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>

/* What a pod's RuntimeDefault seccomp profile refuses, refused here too with
 * EPERM: the calls that change the machine (mounts, modules, clocks, swap,
 * reboot, keys), that reach other namespaces or make user namespaces, and
 * the kernel's risky corners (bpf, perf, userfaultfd, handles). clone3 says
 * ENOSYS so that libc falls back to clone, whose flags can be checked. */
static const char *const refused_calls[] = {
	"mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen",
	"fsconfig", "fsmount", "fspick", "mount_setattr", "swapon", "swapoff", "reboot", "kexec_load",
	"kexec_file_load", "init_module", "finit_module", "delete_module", "create_module",
	"get_kernel_syms", "query_module", "unshare", "setns", "keyctl", "add_key", "request_key",
	"bpf", "perf_event_open", "userfaultfd", "open_by_handle_at", "name_to_handle_at", "acct",
	"quotactl", "quotactl_fd", "lookup_dcookie", "clock_settime", "clock_adjtime", "settimeofday",
	"adjtimex", "stime", "syslog", "iopl", "ioperm", "uselib", "vm86", "vm86old", "nfsservctl",
	"fanotify_init", "process_vm_writev", "vhangup",
};

static int fail(const char *what, int rc)
{
	fprintf(stderr, "seccomp_filter: %s: %s\n", what, rc < 0 ? strerror(-rc) : "failed");
	return 1;
}

int main(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return fail("seccomp_init", -ENOMEM);
	int rc = 0;
	for (size_t i = 0; i < sizeof(refused_calls) / sizeof(*refused_calls) && !rc; i++) {
		int nr = seccomp_syscall_resolve_name(refused_calls[i]);
		/* a call this architecture does not have (vm86 on x86-64) */
		if (nr != __NR_SCMP_ERROR && nr >= 0)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
	}
	/* clone: never a new namespace (one rule a flag: the rules of a call are ORed) */
	static const unsigned long ns_flags[] = {CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
						 CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWCGROUP};
	for (size_t i = 0; i < sizeof(ns_flags) / sizeof(*ns_flags) && !rc; i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
				      SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]));
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	if (rc)
		return fail("seccomp_rule_add", rc);
	/* the program, through a file: libseccomp 2.5 exports to a descriptor only */
	FILE *tmp = tmpfile();
	if (!tmp)
		return fail("tmpfile", -errno);
	if ((rc = seccomp_export_bpf(ctx, fileno(tmp))))
		return fail("seccomp_export_bpf", rc);
	seccomp_release(ctx);
	rewind(tmp);
	const struct scmp_version *v = seccomp_version();
	printf("/* build/gen/seccomp_filter.h: made by tools/seccomp_filter.c with libseccomp "
	       "%u.%u.%u when berth was built; not to be edited */\n",
	       v ? v->major : 0, v ? v->minor : 0, v ? v->micro : 0);
	printf("static const struct sock_filter local_seccomp_bpf[] = {\n");
	struct sock_filter f;
	size_t n = 0;
	while (fread(&f, sizeof(f), 1, tmp) == 1) {
		printf("\t{0x%04x, %u, %u, 0x%08x},\n", f.code, f.jt, f.jf, f.k);
		n++;
	}
	printf("};\n");
	if (ferror(tmp) || !n || n > BPF_MAXINSNS)
		return fail("the exported program", -EINVAL);
	return fclose(tmp) || fflush(stdout) ? fail("writing", -errno) : 0;
}
