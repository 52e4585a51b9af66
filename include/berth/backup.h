/*
 * berth/backup.h - a data dir's state as one file, and back.
 *
 * A backup is what the store holds (runs and their events, projects,
 * functions, tokens, sealed secrets, samples), copied consistently while a
 * server runs; not the runs' logs and work dirs (HOME/runs), nor volumes.
 * The secrets are sealed with the data dir's key (HOME/secret.key), which a
 * backup holds only when asked (include_key): that file then opens every
 * secret, and is to be kept as the key is.
 */
#ifndef BERTH_BACKUP_H
#define BERTH_BACKUP_H

#include <stdbool.h>

#include "berth/backend.h"
#include "berth/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct berth_backup_opts {
	const char *home;  /* the data dir; NULL: $BERTH_HOME, else ~/.berth */
	bool include_key;  /* backup: with the secret key (restore writes it to the data dir) */
	bool force;        /* backup: replace the file when it exists */
} berth_backup_opts;

/* Writes the data dir's store to file: a consistent copy of what was
 * committed when it began (a server may run meanwhile), mode 0600, whole or
 * not at all (a temporary file renamed). BERTH_ECONFLICT when file exists
 * and force is not set; BERTH_ENOTFOUND when the data dir has no store. */
int berth_backup(const char *file, const berth_backup_opts *o, berth_error **err);

/* Makes file (a backup) the data dir's store, which is made when absent.
 * Refused (BERTH_ECONFLICT), with nothing changed, while a server uses the
 * data dir (berth_backend_opts.serves) or a run's supervisor runs, and when
 * file is not a whole berth backup or is of a newer schema than this berth's
 * (BERTH_EARG). The old store is replaced at once (a rename), the backup's key,
 * when it has one, written as the data dir's; the store is then migrated to
 * this berth's schema. A warning when the restored secrets do not open with
 * the data dir's key. */
int berth_restore(const char *file, const berth_backup_opts *o, berth_error **err);

#ifdef __cplusplus
}
#endif

#endif
