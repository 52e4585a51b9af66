/*
 * procs.c - a local run's processes: one named across pid reuse by its start
 * time, what a run left behind killed (its cgroups, else its group), a
 * distributed job's workers' cgroup names and their rendezvous port.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

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

int local_worker_cgroup(char *buf, size_t len, const char *base, int64_t rank, int64_t workers)
{
	int n = workers > 1 ? snprintf(buf, len, "%s.%lld", base, (long long)rank)
			    : snprintf(buf, len, "%s", base);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int local_free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);
	int port = fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
				   getsockname(fd, (struct sockaddr *)&a, &alen) == 0
			   ? ntohs(a.sin_port)
			   : 0;
	if (fd >= 0)
		close(fd);
	return port;
}

/* SIGKILL to every process of session sid, that of a supervisor gone (its
 * start time start): each of its run's processes, every worker's, is in it
 * but those that made a session of their own. A session is named by its
 * leader's pid, which is not given again while a process of the session
 * lives; a process of that pid there now (another start time) is another's,
 * and so may its session be: nothing is killed then. */
static void kill_session(int64_t sid, int64_t start)
{
	int64_t now = sid > 1 ? local_proc_start_of((pid_t)sid, true) : 0;
	if (sid <= 1 || (now >= 0 && now != start) || sid == (int64_t)getsid(0))
		return;
	for (int round = 0; round < 10; round++) {
		DIR *d = opendir("/proc");
		struct dirent *de;
		int found = 0;
		while (d && (de = readdir(d))) {
			if (de->d_name[0] < '1' || de->d_name[0] > '9')
				continue;
			pid_t pid = (pid_t)strtol(de->d_name, NULL, 10);
			int64_t session;
			if (pid != (pid_t)sid && local_proc_fields(pid, false, 6, 1, &session) == 0 && session == sid) {
				kill(pid, SIGKILL);
				found++;
			}
		}
		if (d)
			closedir(d);
		if (!found)
			return;
		struct timespec ts = {0, 10000000};
		nanosleep(&ts, NULL);
	}
}

void local_kill_leftovers(cg_version cgv, const char *cg_root, const store_run *r)
{
	int64_t workers = r->info.workers > 1 ? r->info.workers : 1;
	bool opened = false;
	for (int64_t w = 0; r->cgroup && cgv != CG_NONE && w < workers; w++) {
		cg_handle *cg = NULL;
		berth_error *e = NULL;
		char name[128];
		if (!local_worker_cgroup(name, sizeof(name), r->cgroup, w, workers) &&
		    cg_open(&cg, cgv, cg_root, LOCAL_CGROUP_PARENT, name, &e) == 0) {
			opened = true;
			for (int i = 0; i < 100 && cg_count(cg) > 0; i++) {
				cg_kill(cg, SIGKILL);
				struct timespec ts = {0, 10000000};
				nanosleep(&ts, NULL);
			}
			cg_destroy(cg, NULL);
			cg_free(cg);
		}
		berth_error_free(e);
	}
	if (!opened && r->pid > 0 && getpgid((pid_t)r->pid) == (pid_t)r->pid)
		kill(-(pid_t)r->pid, SIGKILL);
	/* without a cgroup, worker 0's process group is not all: every worker
	 * has its own, and one whose first process is gone (killed with its
	 * supervisor, reaped) leaves its children in a group no one names;
	 * they are all in the supervisor's session */
	if (!opened && r->supervisor_pid > 0)
		kill_session(r->supervisor_pid, r->supervisor_start);
}
