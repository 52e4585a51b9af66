/*
 * cmd_token.c - berth token create, list, revoke: the server's access tokens,
 * in the store of $BERTH_HOME (the server need not run).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char usage_token[] =
	"usage: berth token create --project P [--project Q ...] --role admin|user|viewer\n"
	"                          [--description TEXT]\n"
	"       berth token list [-o yaml|json]\n"
	"       berth token revoke ID\n"
	"\n"
	"Tokens of the server whose data is in $BERTH_HOME. A token sees only its\n"
	"projects ('*': every project). viewer reads; user also runs, stops and\n"
	"registers functions; admin also manages secrets, reads the policy and, with\n"
	"'*', creates projects. 'create' prints the token once: only its hash is kept.\n";

const cli_args args_token = {
	.opts = (const cli_opt[]){
		{.name = "--project", .arg = "P"},
		{.name = "--role", .arg = "ROLE", .values = CLI_VALUES("admin", "user", "viewer")},
		{.name = "--description", .arg = "TEXT"},
		{.name = "--output", .alias = "-o", .arg = "FORMAT", .values = CLI_VALUES("yaml", "json")},
		{0},
	},
	.words = (const cli_word[]){{"create", CLI_ANY}, {"list", CLI_ANY}, {"revoke", CLI_ANY},
				    {NULL, CLI_ANY}},
};

static int open_store(berth_backend **b)
{
	berth_error *err = NULL;
	berth_backend_opts o = {.passive = true};
	if (berth_backend_open(b, NULL, &o, &err)) {
		int st = cli_report(err);
		berth_error_free(err);
		return st ? st : 1;
	}
	return 0;
}

static int token_create(int argc, char **argv)
{
	const char **projects = calloc((size_t)argc, sizeof(char *));
	size_t n = 0;
	const char *role = NULL, *desc = NULL;
	if (!projects)
		return 1;
	for (int i = 2; i < argc; i++) {
		int r = cli_flag(argc, argv, &i, "--project", &projects[n]);
		if (r > 0)
			n++;
		if (!r && !(r = cli_flag(argc, argv, &i, "--role", &role)))
			r = cli_flag(argc, argv, &i, "--description", &desc);
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
	berth_role r = berth_role_parse(role);
	if (!n || r == BERTH_ROLE_NONE) {
		cli_error("token create: %s", !n ? "--project P is needed ('*': every project)"
					       : "--role must be admin, user or viewer");
		free(projects);
		return 2;
	}
	berth_backend *b = NULL;
	int status = open_store(&b);
	char *token = NULL, *id = NULL;
	berth_error *err = NULL;
	berth_token_new nt = {.role = r, .projects = projects, .nprojects = n, .description = desc};
	if (!status && berth_token_create(b, &nt, &token, &id, &err))
		status = cli_report(err);
	if (!status && token) {
		printf("%s\n", token);
		fprintf(stderr, "token %s: %s of %s%s (shown once; revoke with 'berth token revoke %s')\n",
			id, berth_role_name(r), projects[0], n > 1 ? ", ..." : "", id);
	}
	berth_error_free(err);
	free(token);
	free(id);
	free(projects);
	berth_backend_close(b);
	return status;
}

int cmd_token(int argc, char **argv)
{
	const char *verb = argc > 1 ? argv[1] : "";
	if (!strcmp(verb, "create"))
		return token_create(argc, argv);
	berth_backend *b = NULL;
	berth_error *err = NULL;
	int status;
	if (!strcmp(verb, "list")) {
		berth_format fmt = BERTH_FORMAT_YAML;
		for (int i = 2; i < argc; i++) {
			const char *v = NULL;
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
		if ((status = open_store(&b)))
			return status;
		if (berth_token_list(b, fmt, &out, &len, &err))
			status = cli_report(err);
		else
			fwrite(out, 1, len, stdout);
		free(out);
	} else if (!strcmp(verb, "revoke") && argc == 3) {
		if ((status = open_store(&b)))
			return status;
		if (berth_token_revoke(b, argv[2], &err))
			status = cli_report(err);
	} else {
		fputs(usage_token, stderr);
		return 2;
	}
	berth_error_free(err);
	berth_backend_close(b);
	return status;
}
