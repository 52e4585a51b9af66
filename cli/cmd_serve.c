/*
 * cmd_serve.c - berth serve: the REST API (server/); cmd_token.c says who
 * may use it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h" /* first: its system headers come before banned.h (cli.h) */
#include "cli.h"

const char usage_serve[] =
	"usage: berth serve [--listen HOST:PORT] [--config POLICY] [--backend local|kubernetes]\n"
	"                   [--kubeconfig FILE] [--context NAME] [--insecure-local]\n"
	"                   [--max-body BYTES] [--threads N] [--max-connections N]\n"
	"                   [--max-per-ip N] [--idle-timeout SECONDS] [--max-streams N]\n"
	"                   [--tls-cert FILE --tls-key FILE] [--store URL]\n"
	"\n"
	"Serves the REST API of docs/api.md (OpenAPI at /api/v1/openapi.json), with\n"
	"/healthz and /metrics, over the store in $BERTH_HOME (default ~/.berth).\n"
	"Requests need a bearer token (berth token create). On start, every unfinished\n"
	"run is reconciled with its backend; it then goes on every 5 seconds.\n"
	"\n"
	"  --listen HOST:PORT  where to listen (default 127.0.0.1:8720; port 0: any free)\n"
	"  --config POLICY     the platform policy (default: $BERTH_CONFIG, then\n"
	"                      /etc/berth/config.yaml, else built-in defaults)\n"
	"  --backend KIND      where runs run: local (default) or kubernetes\n"
	"  --kubeconfig FILE, --context NAME\n"
	"                      the cluster (default: $KUBECONFIG, ~/.kube/config, else\n"
	"                      the service account of the pod berth runs in)\n"
	"  --insecure-local    requests without a token act as an admin of every project\n"
	"                      (only on a loopback address)\n"
	"  --max-body BYTES    the largest request body (default 1048576)\n"
	"  --threads N         threads answering requests (default: one per core)\n"
	"  --max-connections N open connections in all (default 4096; fewer when the\n"
	"                      open file limit, raised to its hard limit, is too low)\n"
	"  --max-per-ip N      open connections from one address (default 128; behind\n"
	"                      a proxy every client has its address: raise it)\n"
	"  --idle-timeout S    a connection that sends and reads nothing for S seconds\n"
	"                      is closed (default 30; a log follower waiting for the\n"
	"                      run's output is not idle)\n"
	"  --max-streams N     logs being sent and stop waits at once (default 1024);\n"
	"                      past them such requests answer 503 with Retry-After\n"
	"  --tls-cert FILE, --tls-key FILE\n"
	"                      serve HTTPS with this certificate (PEM, its chain after\n"
	"                      it) and key; without them plain HTTP, which off a\n"
	"                      loopback address is warned of\n"
	"  --store URL         the store on PostgreSQL (postgresql://USER@HOST/DB), which\n"
	"                      several servers share (default: $BERTH_STORE, else\n"
	"                      $BERTH_HOME/berth.db, SQLite); a password is better in\n"
	"                      $BERTH_STORE or ~/.pgpass than on a command line\n"
	"\n"
	"While the filesystem of $BERTH_HOME has less free space than a reserve\n"
	"($BERTH_DISK_RESERVE bytes, default 64Mi or 1% of it, whichever is less),\n"
	"requests that add data answer 507 and /healthz answers 503; reads go on.\n"
	"\n"
	"On SIGHUP, or when its file changes, the policy is loaded again, and so are\n"
	"the certificate and key: each checked completely and in force at once, or\n"
	"refused with its problem while the one before stays.\n"
	"\n"
	"Stops on SIGINT or SIGTERM; runs go on.\n";

const cli_args args_serve = {
	.opts = (const cli_opt[]){
		{.name = "--listen", .arg = "HOST:PORT"},
		CLI_OPT_CONFIG,
		CLI_OPT_BACKEND,
		CLI_OPT_CLUSTER,
		{.name = "--insecure-local"},
		{.name = "--max-body", .arg = "BYTES"},
		{.name = "--threads", .arg = "N"},
		{.name = "--max-connections", .arg = "N"},
		{.name = "--max-per-ip", .arg = "N"},
		{.name = "--idle-timeout", .arg = "SECONDS"},
		{.name = "--max-streams", .arg = "N"},
		{.name = "--tls-cert", .arg = "FILE"},
		{.name = "--tls-key", .arg = "FILE"},
		{.name = "--store", .arg = "URL"},
		{.name = "--routes", .flags = CLI_HIDDEN},
		{0},
	},
};

static int parse_count(const char *flag, const char *v, unsigned long long max,
		       unsigned long long *out)
{
	char *end;
	*out = strtoull(v, &end, 10);
	if (!*v || *end || *out < 1 || *out > max) {
		cli_error("serve: %s \"%s\" is not a number from 1 to %llu", flag, v, max);
		return -1;
	}
	return 0;
}

int cmd_serve(int argc, char **argv)
{
	serve_opts o = {.listen = "127.0.0.1:8720", .backend = NULL};
	for (int i = 1; i < argc; i++) {
		const char *v = NULL;
		unsigned long long n;
		int r;
		if ((r = cli_flag(argc, argv, &i, "--listen", &o.listen)) ||
		    (r = cli_flag(argc, argv, &i, "--config", &o.config)) ||
		    (r = cli_flag(argc, argv, &i, "--backend", &o.backend)) ||
		    (r = cli_flag(argc, argv, &i, "--kubeconfig", &o.kubeconfig)) ||
		    (r = cli_flag(argc, argv, &i, "--context", &o.context)) ||
		    (r = cli_flag(argc, argv, &i, "--tls-cert", &o.tls_cert)) ||
		    (r = cli_flag(argc, argv, &i, "--tls-key", &o.tls_key))) {
			if (r < 0)
				return 2;
		} else if ((r = cli_flag(argc, argv, &i, "--max-body", &v))) {
			if (r < 0 || parse_count("--max-body", v, 1ull << 30, &n))
				return 2;
			o.max_body = (size_t)n;
		} else if ((r = cli_flag(argc, argv, &i, "--threads", &v))) {
			if (r < 0 || parse_count("--threads", v, 256, &n))
				return 2;
			o.threads = (unsigned)n;
		} else if ((r = cli_flag(argc, argv, &i, "--max-connections", &v))) {
			if (r < 0 || parse_count("--max-connections", v, 1000000, &n))
				return 2;
			o.max_connections = (unsigned)n;
		} else if ((r = cli_flag(argc, argv, &i, "--max-per-ip", &v))) {
			if (r < 0 || parse_count("--max-per-ip", v, 1000000, &n))
				return 2;
			o.max_per_ip = (unsigned)n;
		} else if ((r = cli_flag(argc, argv, &i, "--idle-timeout", &v))) {
			if (r < 0 || parse_count("--idle-timeout", v, 86400, &n))
				return 2;
			o.idle_timeout = (unsigned)n;
		} else if ((r = cli_flag(argc, argv, &i, "--max-streams", &v))) {
			if (r < 0 || parse_count("--max-streams", v, 100000, &n))
				return 2;
			o.max_streams = (unsigned)n;
		} else if ((r = cli_flag(argc, argv, &i, "--store", &v))) {
			/* the environment: the server's supervisors and commands read the same */
			if (r < 0 || setenv("BERTH_STORE", v, 1))
				return 2;
		} else if (!strcmp(argv[i], "--insecure-local"))
			o.insecure_local = true;
		else if (!strcmp(argv[i], "--routes")) {
			/* hidden: the route table, for the test that holds it against the OpenAPI document */
			for (size_t k = 0; k < nroutes; k++)
				printf("%s %s\n", routes[k].method, routes[k].path);
			return 0;
		} else {
			cli_error("serve: unknown option \"%s\" (see 'berth help serve')", argv[i]);
			return 2;
		}
	}
	return serve_main(&o);
}
