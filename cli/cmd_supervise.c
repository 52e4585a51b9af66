/*
 * cmd_supervise.c - berth __supervise ID (hidden): the process that watches
 * one local run; the local backend starts it, never a user.
 */
#include <stdlib.h>

#include "backend/local/supervisor.h"
#include "cli.h"

int cmd_supervise(int argc, char **argv)
{
	if (argc != 2 || !getenv("BERTH_HOME"))
		return 2;
	berth_error *err = NULL;
	int rc = berth_local_supervise(getenv("BERTH_HOME"), argv[1], &err);
	berth_error_free(err);
	return rc ? 1 : 0;
}
