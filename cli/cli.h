/*
 * cli.h - the berth command: verbs as a table (git.c's commands[]).
 */
#ifndef BERTH_CLI_H
#define BERTH_CLI_H

#include "berth/error.h"

typedef struct cli_verb {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	const char *usage; /* full help text */
} cli_verb;

/* Prints every problem of err to stderr, one per line; returns the exit status. */
int cli_report(const berth_error *err);

/* "berth: " + message on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

int cmd_validate(int argc, char **argv);
extern const char usage_validate[];

#endif
