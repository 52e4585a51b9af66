/*
 * procs.c - a local run's processes: one named across pid reuse by its start
 * time, and what a run left behind killed (its cgroup, else its group).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/local/local.h"
#include "base/internal.h"

int local_proc_fields(pid_t pid, bool zombies, int first, int n, int64_t *out)
{
	char path[64], buf[2048];
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got <= 0)
		return -1;
	buf[got] = 0;
	/* the command may hold spaces and parentheses: fields count from the last ')' */
	char *p = strrchr(buf, ')');
	/* a zombie is gone already: only its parent has not looked */
	if (!p || p[1] != ' ' || (!zombies && (p[2] == 'Z' || p[2] == 'X')))
		return -1;
	for (int field = 3; field < first + n; field++) {
		if (!(p = strchr(p + 1, ' ')))
			return -1;
		if (field >= first)
			out[field - first] = strtoll(p + 1, NULL, 10);
	}
	return 0;
}

int64_t local_proc_start_of(pid_t pid, bool zombies)
{
	int64_t start;
	return local_proc_fields(pid, zombies, 22, 1, &start) ? -1 : start;
}

int64_t local_proc_start(pid_t pid)
{
	return local_proc_start_of(pid, false);
}

bool local_pid_is(int64_t pid, int64_t start)
{
	return pid > 0 && local_proc_start((pid_t)pid) == start;
}

void local_kill_leftovers(cg_version cgv, const char *cg_root, const store_run *r)
{
	cg_handle *cg = NULL;
	berth_error *e = NULL;
	if (r->cgroup && cgv != CG_NONE &&
	    cg_open(&cg, cgv, cg_root, LOCAL_CGROUP_PARENT, r->cgroup, &e) == 0) {
		for (int i = 0; i < 100 && cg_count(cg) > 0; i++) {
			cg_kill(cg, SIGKILL);
			struct timespec ts = {0, 10000000};
			nanosleep(&ts, NULL);
		}
		cg_destroy(cg, NULL);
		cg_free(cg);
	} else if (r->pid > 0 && getpgid((pid_t)r->pid) == (pid_t)r->pid) {
		kill(-(pid_t)r->pid, SIGKILL);
	}
	berth_error_free(e);
}
