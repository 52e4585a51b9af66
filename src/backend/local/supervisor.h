/*
 * supervisor.h - the supervisor of one local run (supervisor.c). The local
 * kind starts it as its own berth binary with the hidden verb `__supervise
 * ID` (cli/cmd_supervise.c): the one entry of libberth that the CLI reaches
 * below include/berth/, because the process is the library's, hosted by the
 * binary.
 */
#ifndef BERTH_BACKEND_LOCAL_SUPERVISOR_H
#define BERTH_BACKEND_LOCAL_SUPERVISOR_H

#include "berth/error.h"

/* Runs run id of the data dir home to its end: returns when it is final. */
int berth_local_supervise(const char *home, const char *id, berth_error **err);

#endif
