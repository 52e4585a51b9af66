/*
 * client.c - the verbs as clients of a berth server: the --server and
 * --token flags (also before the verb, and from $BERTH_SERVER and
 * $BERTH_TOKEN), in one place for run, get, logs, stop, secrets and
 * profiles.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

cli_server cli_global_server;

int cli_server_flag(cli_server *s, int argc, char **argv, int *i)
{
	if (!strcmp(argv[*i], "--insecure-skip-tls-verify")) {
		s->insecure = true;
		return 1;
	}
	int r = cli_flag(argc, argv, i, "--server", &s->url);
	if (!r)
		r = cli_flag(argc, argv, i, "--token", &s->token);
	return r ? r : cli_flag(argc, argv, i, "--cacert", &s->cacert);
}

int cli_server_use(cli_server *s, const char *verb, const char *local_flag)
{
	const char *url = s->url ? s->url : cli_global_server.url;
	const char *token = s->token ? s->token : cli_global_server.token;
	const char *cacert = s->cacert ? s->cacert : cli_global_server.cacert;
	bool insecure = s->insecure || cli_global_server.insecure;
	const char *given = token ? "--token" : cacert ? "--cacert"
			    : insecure ? "--insecure-skip-tls-verify" : NULL;
	int from_env = 0;
	if (!url && (url = getenv("BERTH_SERVER")) && *url)
		from_env = 1;
	if (!token)
		token = getenv("BERTH_TOKEN");
	if (!url || !*url) {
		s->url = s->token = NULL;
		if (given) {
			cli_error("%s: %s is for a server: give --server URL or set $BERTH_SERVER",
				  verb, given);
			return -1;
		}
		return 0;
	}
	if (local_flag) {
		cli_error("%s: %s is for this machine, not for a server (the server uses its own "
			  "policy and backend)%s", verb, local_flag,
			  from_env ? "; $BERTH_SERVER is set: unset it, or give --server '' to "
				     "work on this machine" : "");
		return -1;
	}
	s->url = url;
	s->token = token;
	s->cacert = cacert;
	s->insecure = insecure;
	return 1;
}

int cli_server_open(const cli_server *s, berth_client **c)
{
	berth_error *err = NULL;
	*c = NULL;
	if (berth_client_open(c, s->url, s->token ? s->token : "", &err) < 0 ||
	    berth_client_tls(*c, s->cacert, s->insecure, &err) < 0) {
		berth_client_close(*c);
		*c = NULL;
		int status = cli_report(err);
		berth_error_free(err);
		return status ? status : 1;
	}
	berth_error_free(err);
	return 0;
}

int cli_server_check(const cli_server *s, const cli_check *k, const char *name, const char *text,
		     size_t len)
{
	berth_client *c = NULL;
	berth_error *err = NULL;
	char **runs = NULL;
	size_t n = 0;
	int status = cli_server_open(s, &c);
	if (status)
		return status;
	if (berth_client_validate(c, k->project, name, text, len, &runs, &n, &err)) {
		status = cli_report(err);
		status = status ? status : 1;
		goto out;
	}
	cli_report(err); /* warnings */
	for (size_t i = 0; i < n && k->what == CLI_CHECK_EXPLAIN; i++) {
		char *doc = NULL;
		size_t dlen = 0;
		berth_error *e = NULL;
		if (i)
			fputs(k->fmt == BERTH_EXPLAIN_YAML ? "---\n" : "\n", stdout);
		int ret = berth_explain_json_format(runs[i], strlen(runs[i]), k->fmt, &doc, &dlen, &e);
		int st = cli_print_doc(ret, doc, dlen, e);
		berth_error_free(e);
		if (st) {
			status = st;
			break;
		}
	}
	if (k->what == CLI_CHECK_VALIDATE && !k->quiet)
		printf("%s: valid (%zu run%s)\n", name, n, n == 1 ? "" : "s");
	else if (k->what == CLI_CHECK_DRY_RUN)
		printf("%s: valid (%zu run%s) for the server at %s (its policy and backend); nothing was "
		       "created\n", name, n, n == 1 ? "" : "s", berth_client_url(c));
out:
	for (size_t i = 0; i < n; i++)
		free(runs[i]);
	free(runs);
	berth_error_free(err);
	berth_client_close(c);
	return status;
}
