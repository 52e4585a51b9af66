/*
 * backend.c - what run, get, logs, stop and secrets share when they work on
 * this machine: the backend they open (--config, --kubeconfig, --context),
 * their flags' values, and how they print a run's state and output.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

/* --kubeconfig FILE and --context NAME: which cluster the kubernetes runs are on. */
int cli_cluster_flag(cli_backend *c, int argc, char **argv, int *i)
{
	const char *flag = argv[*i];
	int r = cli_flag(argc, argv, i, "--kubeconfig", &c->kubeconfig);
	if (!r)
		r = cli_flag(argc, argv, i, "--context", &c->context);
	if (r > 0 && !c->cluster_flag)
		c->cluster_flag = !strncmp(flag, "--kubeconfig", 12) ? "--kubeconfig" : "--context";
	return r;
}

int cli_backend_open(cli_backend *c, const char *kind)
{
	berth_error *err = NULL;
	int status = cli_plan_load(&c->plan, &c->policy);
	if (status)
		return status;
	berth_backend_opts o = {.policy = c->policy,
				.kubeconfig = c->kubeconfig,
				.context = c->context,
				.waits = c->waits,
				.passive = c->passive,
				/* one thread: a supervisor it waits for is a fork of it */
				.fork_supervisors = true};
	if (berth_backend_open(&c->b, kind, &o, &err)) {
		status = cli_report(err);
		berth_error_free(err);
		return status ? status : 1;
	}
	cli_report(err); /* warnings: runs whose state could not be read */
	berth_error_free(err);
	return 0;
}

void cli_backend_close(cli_backend *c)
{
	berth_backend_close(c->b);
	berth_policy_free(c->policy);
	cli_plan_release(&c->plan);
}

/* A flag's value: argv[i+1], or after '='. NULL (reported) when missing. */
const char *cli_flag_value(const char *verb, int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);
	if (!strncmp(argv[*i], name, n) && argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (*i + 1 >= argc) {
		cli_error("%s: %s needs a value", verb, name);
		return NULL;
	}
	return argv[++*i];
}

int cli_grace_flag(const char *verb, int argc, char **argv, int *i, int *grace)
{
	if (!cli_is_flag(argv[*i], "--grace"))
		return 0;
	const char *v = cli_flag_value(verb, argc, argv, i, "--grace");
	char *end = NULL;
	/* digits alone: strtol takes a sign and leading spaces too */
	long g = v && *v >= '0' && *v <= '9' ? strtol(v, &end, 10) : -1;
	if (!v || g < 0 || *end || g > 86400) {
		cli_error("%s: --grace takes seconds, 0 to 86400", verb);
		return -1;
	}
	*grace = (int)g;
	return 1;
}

int cli_is_flag(const char *arg, const char *name)
{
	size_t n = strlen(name);
	return !strncmp(arg, name, n) && (arg[n] == 0 || arg[n] == '=');
}

void cli_pause_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int cli_print_chunk(void *ctx, const char *data, size_t len)
{
	(void)ctx;
	return fwrite(data, 1, len, stdout) == len && fflush(stdout) == 0 ? 0 : -1;
}

void cli_say_state(const berth_run_info *i)
{
	fprintf(stderr, "run %s (%s): %s%s%s\n", i->id, i->name, berth_state_name(i->state),
		i->reason ? ": " : "", i->reason ? i->reason : "");
}

/* Reads a spec or a secret's value whole ('-': standard input), capped at 4 MiB. */
char *cli_read_file(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!f) {
		cli_error("cannot open %s", path);
		return NULL;
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			if (cap >= (4u << 20)) {
				cli_error("%s is over 4 MiB", path);
				free(buf);
				buf = NULL;
				break;
			}
			char *grown = realloc(buf, cap * 2 + 1);
			if (!grown) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = grown;
			cap *= 2;
		}
	}
	if (f != stdin)
		fclose(f);
	if (buf)
		buf[n] = 0;
	*len = n;
	return buf;
}
