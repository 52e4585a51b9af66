/*
 * cmd_secrets.c - berth secrets set, list, rm: the project's secrets, in the
 * store of this machine or of a server.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char usage_secrets[] =
	"usage: berth secrets set NAME [--project P] [--from-file FILE]\n"
	"       berth secrets list [--project P]\n"
	"       berth secrets rm NAME [--project P]\n"
	"       (each also with [--server URL] [--token TOKEN])\n"
	"\n"
	"The project's secrets, for the runs that name them (secrets: [NAME], or a\n"
	"volume of type secret). 'set' reads the value from standard input (or FILE),\n"
	"never from the command line, where other users could see it. Values are\n"
	"encrypted at rest in $BERTH_HOME and are never printed. With a server, they\n"
	"are kept in the server's store, and a value must be UTF-8 text: set and rm\n"
	"need an admin token of the project, or a user token where the server's\n"
	"policy says security.secret_writers: user (docs/policy.md).\n"
	"\n"
	CLI_SERVER_HELP;

const cli_args args_secrets = {
	.opts = (const cli_opt[]){
		{.name = "--project", .arg = "P"},
		{.name = "--from-file", .arg = "FILE", .kind = CLI_FILE},
		CLI_OPT_SERVER,
		{0},
	},
	.words = (const cli_word[]){{"set", CLI_ANY}, {"list", CLI_ANY}, {"rm", CLI_ANY},
				    {NULL, CLI_ANY}},
};

int cmd_secrets(int argc, char **argv)
{
	cli_backend c;
	cli_server srv = {0};
	memset(&c, 0, sizeof(c));
	const char *op = NULL, *name = NULL, *project = "default", *file = NULL;
	for (int i = 1; i < argc; i++) {
		int r = cli_server_flag(&srv, argc, argv, &i);
		if (r < 0)
			return 2;
		if (r)
			continue;
		if (cli_is_flag(argv[i], "--project")) {
			if (!(project = cli_flag_value("secrets", argc, argv, &i, "--project")))
				return 2;
		} else if (cli_is_flag(argv[i], "--from-file")) {
			if (!(file = cli_flag_value("secrets", argc, argv, &i, "--from-file")))
				return 2;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cli_error("secrets: unknown option \"%s\" (see 'berth help secrets')", argv[i]);
			return 2;
		} else if (!op)
			op = argv[i];
		else if (!name)
			name = argv[i];
		else {
			cli_error("secrets: too many arguments: the value is read from standard input "
				  "or --from-file, never from the command line");
			return 2;
		}
	}
	int set = op && !strcmp(op, "set"), rm = op && !strcmp(op, "rm"),
	    list = op && !strcmp(op, "list");
	if (!(set || rm || list) || ((set || rm) && !name) || (list && name)) {
		cli_error("secrets: say 'set NAME', 'list' or 'rm NAME' (see 'berth help secrets')");
		return 2;
	}
	int remote = cli_server_use(&srv, "secrets", NULL);
	if (remote < 0)
		return 2;
	berth_client *cl = NULL;
	int status = remote ? cli_server_open(&srv, &cl) : cli_backend_open(&c, NULL);
	berth_error *err = NULL;
	if (status)
		goto out;
	if (set) {
		size_t len;
		char *value = cli_read_file(file ? file : "-", &len);
		if (!value) {
			status = 1;
			goto out;
		}
		/* a value typed at a terminal ends with the newline of its Enter */
		if (!file && len && value[len - 1] == '\n')
			len--;
		if (remote ? berth_client_secret_set(cl, project, name, value, len, &err)
			   : berth_backend_secret_set(c.b, project, name, value, len, &err))
			status = cli_report(err);
		else
			fprintf(stderr, "secret \"%s\" set in project \"%s\"\n", name, project);
		memset(value, 0, len);
		free(value);
	} else if (rm) {
		if (remote ? berth_client_secret_delete(cl, project, name, &err)
			   : berth_backend_secret_delete(c.b, project, name, &err))
			status = cli_report(err);
	} else {
		char **names;
		size_t n;
		if (remote ? berth_client_secret_names(cl, project, &names, &n, &err)
			   : berth_backend_secret_names(c.b, project, &names, &n, &err))
			status = cli_report(err);
		else {
			for (size_t i = 0; i < n; i++) {
				printf("%s\n", names[i]);
				free(names[i]);
			}
			free(names);
		}
	}
out:
	berth_error_free(err);
	berth_client_close(cl);
	cli_backend_close(&c);
	return status;
}
