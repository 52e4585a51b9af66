/*
 * cmd_admin.c - berth admin backup, restore: a data dir's state to one file
 * and back (berth/backup.h), on this machine (the server need not run for a
 * backup, and must not for a restore).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

const char usage_admin[] =
	"usage: berth admin backup FILE [--include-key] [--force]\n"
	"       berth admin restore FILE\n"
	"\n"
	"The state of the data dir in $BERTH_HOME (runs and their events, projects,\n"
	"functions, tokens, sealed secrets) as one file, and back. Not the runs'\n"
	"logs and work dirs, nor volumes.\n"
	"\n"
	"'backup' writes FILE (mode 0600, whole or not at all) with what was committed\n"
	"when it began, also while a server runs. FILE is outside the data dir.\n"
	"  --include-key  with the key that seals the secrets (secret.key): FILE then\n"
	"                 opens every secret; keep it as the key is kept. Without it,\n"
	"                 the secrets of a restore open only in a data dir with the\n"
	"                 same key\n"
	"  --force        replace FILE when it exists\n"
	"\n"
	"'restore' makes FILE the data dir's store (the data dir is made when\n"
	"absent). It is refused, and nothing changes, while a server uses the data\n"
	"dir or a run's supervisor runs, and when FILE is not a whole berth backup\n"
	"or is of a newer berth. The old store is replaced at once; the restored one\n"
	"is migrated to this berth's schema, and a key the backup holds becomes the\n"
	"data dir's. Run no other berth command meanwhile.\n";

const cli_args args_admin = {
	.opts = (const cli_opt[]){
		{.name = "--include-key"},
		{.name = "--force"},
		{0},
	},
	.words = (const cli_word[]){{"backup", CLI_FILE}, {"restore", CLI_FILE}, {NULL, CLI_ANY}},
};

int cmd_admin(int argc, char **argv)
{
	const char *verb = NULL, *file = NULL;
	berth_backup_opts o = {0};
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--include-key"))
			o.include_key = true;
		else if (!strcmp(argv[i], "--force"))
			o.force = true;
		else if (argv[i][0] == '-' && argv[i][1]) {
			cli_error("admin: unknown option \"%s\" (see 'berth help admin')", argv[i]);
			return 2;
		} else if (!verb)
			verb = argv[i];
		else if (!file)
			file = argv[i];
		else {
			fputs(usage_admin, stderr);
			return 2;
		}
	}
	bool backup = verb && !strcmp(verb, "backup"), restore = verb && !strcmp(verb, "restore");
	if ((!backup && !restore) || !file || (restore && (o.include_key || o.force))) {
		fputs(usage_admin, stderr);
		return 2;
	}
	berth_error *err = NULL;
	int rc = backup ? berth_backup(file, &o, &err) : berth_restore(file, &o, &err);
	int status = err ? cli_report(err) : 0;
	berth_error_free(err);
	if (rc)
		return status ? status : 1;
	if (backup && o.include_key)
		fprintf(stderr, "berth: %s holds the secret key: whoever reads it opens every secret\n",
			file);
	fprintf(stderr, "%s %s\n", backup ? "backed up to" : "restored from", file);
	return 0;
}
