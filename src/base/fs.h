/*
 * fs.h - paths under the data dir and directories only their owner reads.
 */
#ifndef BERTH_BASE_FS_H
#define BERTH_BASE_FS_H

#include <stddef.h>
#include <sys/types.h>

#include "base/internal.h"

/* home/ then fmt (HOME/runs/ID, HOME/volumes/...); -1 when it does not fit len. */
int fs_path(char *buf, size_t len, const char *home, const char *fmt, ...) BERTH_PRINTF(4, 5);
/* mkdir -p */
int fs_mkdirs(const char *path, mode_t mode);
/* mkdir -p, then path itself (when this user owns it) chmod to mode, whatever
 * the umask or how it was made; -1 also when path is not a directory. */
int fs_private_dir(const char *path, mode_t mode);
/* fsync of the file or directory at path (never one of a database that SQLite
 * has open in this process: closing a descriptor drops its locks); -1 with errno. */
int fs_sync(const char *path);
/* fs_sync of the directory that holds path (its new or renamed entries). */
int fs_sync_dir_of(const char *path);
/* The code of a file's write or fsync that failed with errno e: BERTH_ENOSPC
 * for a full disk (ENOSPC) or quota (EDQUOT), else BERTH_EIO. */
berth_code fs_errno_code(int e);

#endif
