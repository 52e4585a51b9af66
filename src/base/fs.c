/*
 * fs.c - paths under the data dir and private directories (fs.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <string.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"

int fs_path(char *buf, size_t len, const char *home, const char *fmt, ...)
{
	int n = snprintf(buf, len, "%s/", home);
	if (n < 0 || (size_t)n >= len)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(buf + n, len - (size_t)n, fmt, ap);
	va_end(ap);
	return m < 0 || (size_t)m >= len - (size_t)n ? -1 : 0;
}

int fs_mkdirs(const char *path, mode_t mode)
{
	char buf[4096];
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -1;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, mode) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, mode) && errno != EEXIST ? -1 : 0;
}

int fs_private_dir(const char *path, mode_t mode)
{
	struct stat st;
	if (fs_mkdirs(path, mode & 0700))
		return -1;
	/* whatever the umask, or the mode of a data dir made by hand */
	if (lstat(path, &st) || !S_ISDIR(st.st_mode))
		return errno = ENOTDIR, -1;
	if (st.st_uid == geteuid() && (st.st_mode & 07777) != mode && chmod(path, mode))
		return -1;
	return 0;
}

int fs_sync(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	int rc = fsync(fd);
	int e = errno;
	close(fd);
	errno = e;
	return rc;
}

int fs_sync_dir_of(const char *path)
{
	char *copy = berth_strdup(path);
	if (!copy)
		return -1;
	int rc = fs_sync(dirname(copy));
	free(copy);
	return rc;
}

berth_code fs_errno_code(int e)
{
	return e == ENOSPC || e == EDQUOT ? BERTH_ENOSPC : BERTH_EIO;
}
