/*
 * cmd_validate.c - berth validate FILE...: parse and check run specs.
 */
#include <stdio.h>
#include <string.h>

#include "berth/berth.h"
#include "cli.h"

const char usage_validate[] =
	"usage: berth validate [-q] FILE...\n"
	"\n"
	"Checks run specs (YAML or JSON, one run per document) without running\n"
	"them, and reports every problem at once as FILE:LINE:COL: PATH: message.\n"
	"'-' reads standard input.\n"
	"\n"
	"  -q, --quiet   print nothing for valid files\n"
	"\n"
	"exit status: 0 all valid, 2 a spec is invalid, 1 a file cannot be read.\n";

int cmd_validate(int argc, char **argv)
{
	int quiet = 0, status = 0, nfiles = 0, stdin_used = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet"))
			quiet = 1;
		else if (argv[i][0] == '-' && argv[i][1] != '\0' && strcmp(argv[i], "--") != 0) {
			cli_error("validate: unknown option \"%s\" (see 'berth help validate')", argv[i]);
			return 2;
		} else if (!strcmp(argv[i], "--")) {
			argv[i] = NULL;
			for (int j = i + 1; j < argc; j++)
				nfiles++;
			break;
		} else {
			nfiles++;
		}
	}
	if (nfiles == 0) {
		cli_error("validate: no file given (use '-' for standard input)");
		return 2;
	}
	for (int i = 1, after_dashes = 0; i < argc; i++) {
		if (!argv[i]) {
			after_dashes = 1;
			continue;
		}
		if (!after_dashes && argv[i][0] == '-' && argv[i][1] != '\0')
			continue;
		if (!strcmp(argv[i], "-") && stdin_used++) {
			cli_error("validate: standard input given twice");
			return 2;
		}
		berth_spec_set *set = NULL;
		berth_error *err = NULL;
		int ret = berth_spec_parse_file(&set, argv[i], &err);
		int st = cli_report(err);
		if (ret < 0) {
			if (st == 0)
				st = 1;
			if (st > status || status == 0)
				status = st == 1 && status == 2 ? 2 : st;
		} else if (!quiet) {
			size_t n = berth_spec_set_count(set);
			printf("%s: valid (%zu run%s)\n", strcmp(argv[i], "-") ? argv[i] : "<stdin>", n,
			       n == 1 ? "" : "s");
		}
		berth_error_free(err);
		berth_spec_set_free(set);
	}
	return status;
}
