/*
 * cmd_token.c - berth token create, list, revoke: the server's access tokens,
 * in the store of $BERTH_HOME (the server need not run), or through a server
 * (--server: an admin token of the projects).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

const char usage_token[] =
	"usage: berth token create --project P [--project Q ...] --role admin|user|viewer\n"
	"                          [--description TEXT] [--expires-in DURATION | --expires TIME]\n"
	"       berth token list [-o yaml|json]\n"
	"       berth token revoke ID\n"
	"       (each also with [--server URL] [--token TOKEN])\n"
	"\n"
	"Tokens of the server whose data is in $BERTH_HOME, or, with a server, made\n"
	"and revoked through it by an admin token of their projects (an admin or '*'\n"
	"token only by an admin of every project). A token sees only its projects\n"
	"('*': every project). viewer reads; user also runs, stops and registers\n"
	"functions; admin also manages secrets and tokens and, with '*', reads the\n"
	"policy and creates projects. 'create' prints the token once: only its hash\n"
	"is kept.\n"
	"\n"
	"  --expires-in D   refused after D: 30d, 12h, 90m (at most 400d)\n"
	"  --expires TIME   refused from TIME (RFC 3339: 2027-01-31T00:00:00Z)\n"
	"                   (neither: it never expires)\n"
	"\n"
	"A revoked or expired token is refused with 401 and that reason; 'list' shows\n"
	"each one's expiry, revocation, last use (to a minute) and the token that made\n"
	"it through a server (made_by). Revoking a token revokes those it made (and\n"
	"theirs): a token made by another expires and is revoked with it.\n"
	"\n" CLI_SERVER_HELP;

const cli_args args_token = {
	.opts = (const cli_opt[]){
		{.name = "--project", .arg = "P"},
		{.name = "--role", .arg = "ROLE", .values = CLI_VALUES("admin", "user", "viewer")},
		{.name = "--description", .arg = "TEXT"},
		{.name = "--expires-in", .arg = "DURATION"},
		{.name = "--expires", .arg = "TIME"},
		{.name = "--output", .alias = "-o", .arg = "FORMAT", .values = CLI_VALUES("yaml", "json")},
		CLI_OPT_SERVER,
		{0},
	},
	.words = (const cli_word[]){{"create", CLI_ANY}, {"list", CLI_ANY}, {"revoke", CLI_ANY},
				    {NULL, CLI_ANY}},
};

/* Where the verb works: this machine's store (*b) or a server (*c). */
typedef struct token_where {
	cli_server srv;
	berth_backend *b;
	berth_client *c;
} token_where;

static int open_where(token_where *w)
{
	int remote = cli_server_use(&w->srv, "token", NULL);
	if (remote < 0)
		return 2;
	if (remote)
		return cli_server_open(&w->srv, &w->c);
	berth_error *err = NULL;
	berth_backend_opts o = {.passive = true};
	if (berth_backend_open(&w->b, NULL, &o, &err)) {
		int st = cli_report(err);
		berth_error_free(err);
		return st ? st : 1;
	}
	return 0;
}

static void close_where(token_where *w)
{
	berth_backend_close(w->b);
	berth_client_close(w->c);
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int token_create(int argc, char **argv, token_where *w)
{
	const char **projects = calloc((size_t)argc, sizeof(char *));
	size_t n = 0;
	const char *role = NULL, *desc = NULL, *expires_in = NULL, *expires = NULL;
	if (!projects)
		return 1;
	for (int i = 2; i < argc; i++) {
		int r = cli_flag(argc, argv, &i, "--project", &projects[n]);
		if (r > 0)
			n++;
		if (!r && !(r = cli_flag(argc, argv, &i, "--role", &role)) &&
		    !(r = cli_flag(argc, argv, &i, "--description", &desc)) &&
		    !(r = cli_flag(argc, argv, &i, "--expires-in", &expires_in)) &&
		    !(r = cli_flag(argc, argv, &i, "--expires", &expires)))
			r = cli_server_flag(&w->srv, argc, argv, &i);
		if (r < 0) {
			free(projects);
			return 2;
		}
		if (!r) {
			cli_error("token create: unknown option \"%s\" (see 'berth help token')", argv[i]);
			free(projects);
			return 2;
		}
	}
	berth_token_new t = {.role = berth_role_parse(role), .projects = projects, .nprojects = n,
			     .description = desc};
	if (!n || t.role == BERTH_ROLE_NONE) {
		cli_error("token create: %s", !n ? "--project P is needed ('*': every project)"
					       : "--role must be admin, user or viewer");
		free(projects);
		return 2;
	}
	berth_error *err = NULL;
	char *token = NULL, *id = NULL;
	int status = berth_token_expiry(expires_in, expires, now_ms(), &t.expires, &err) ? 2 : 0;
	if (status)
		cli_report(err);
	if (!status)
		status = open_where(w);
	if (!status && (w->c ? berth_client_token_create(w->c, &t, &token, &id, &err)
			     : berth_token_create(w->b, &t, &token, &id, &err)))
		status = cli_report(err);
	if (!status && token) {
		char when[40] = "never";
		if (t.expires)
			berth_format_time(when, sizeof(when), t.expires);
		printf("%s\n", token);
		fprintf(stderr, "token %s: %s of %s%s, expires %s (shown once; revoke with 'berth "
				"token revoke %s')\n", id, berth_role_name(t.role), projects[0],
			n > 1 ? ", ..." : "", when, id);
	}
	berth_error_free(err);
	if (token)
		memset(token, 0, strlen(token));
	free(token);
	free(id);
	free(projects);
	return status;
}

int cmd_token(int argc, char **argv)
{
	const char *verb = argc > 1 ? argv[1] : "";
	token_where w = {.srv = {0}};
	int status;
	if (!strcmp(verb, "create")) {
		status = token_create(argc, argv, &w);
		close_where(&w);
		return status;
	}
	berth_error *err = NULL;
	if (!strcmp(verb, "list")) {
		berth_format fmt = BERTH_FORMAT_YAML;
		for (int i = 2; i < argc; i++) {
			const char *v = NULL;
			int r = cli_server_flag(&w.srv, argc, argv, &i);
			if (r < 0)
				return 2;
			if (r)
				continue;
			if ((cli_flag(argc, argv, &i, "-o", &v) > 0 ||
			     cli_flag(argc, argv, &i, "--output", &v) > 0) && !strcmp(v, "json"))
				fmt = BERTH_FORMAT_JSON;
			else if (!v || strcmp(v, "yaml")) {
				cli_error("token list: -o yaml or -o json");
				return 2;
			}
		}
		char *out = NULL;
		size_t len = 0;
		if ((status = open_where(&w)))
			return status;
		if (w.c ? berth_client_token_list(w.c, fmt, &out, &len, &err)
			: berth_token_list(w.b, fmt, &out, &len, &err))
			status = cli_report(err);
		else
			fwrite(out, 1, len, stdout);
		free(out);
	} else if (!strcmp(verb, "revoke")) {
		const char *id = NULL;
		for (int i = 2; i < argc; i++) {
			int r = cli_server_flag(&w.srv, argc, argv, &i);
			if (r < 0)
				return 2;
			if (!r && (id || argv[i][0] == '-')) {
				fputs(usage_token, stderr);
				return 2;
			}
			if (!r)
				id = argv[i];
		}
		if (!id) {
			fputs(usage_token, stderr);
			return 2;
		}
		if ((status = open_where(&w)))
			return status;
		if (w.c ? berth_client_token_revoke(w.c, id, &err) : berth_token_revoke(w.b, id, &err))
			status = cli_report(err);
		else
			fprintf(stderr, "token %s revoked\n", id);
	} else {
		fputs(usage_token, stderr);
		return 2;
	}
	berth_error_free(err);
	close_where(&w);
	return status;
}
