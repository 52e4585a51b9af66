/*
 * seal.c - sealing secret values with libsodium (see seal.h). libsodium
 * is Debian's maintained, misuse-resistant choice: an AEAD with random
 * 192-bit nonces needs no nonce bookkeeping across processes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/internal.h"
#include "base/seal.h"

#define NONCE crypto_aead_xchacha20poly1305_ietf_NPUBBYTES
#define TAG crypto_aead_xchacha20poly1305_ietf_ABYTES

static int read_all(int fd, unsigned char *buf, size_t len)
{
	size_t got = 0;
	while (got < len) {
		ssize_t r = read(fd, buf + got, len - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

int secret_key_load(const char *home, int create, unsigned char key[SECRET_KEY_BYTES],
		    berth_error **err)
{
	if (sodium_init() < 0)
		return berth_fail(err, BERTH_EINTERNAL, "libsodium cannot start");
	char path[4096];
	snprintf(path, sizeof(path), "%s/secret.key", home);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 && errno == ENOENT && create) {
		randombytes_buf(key, SECRET_KEY_BYTES);
		char tmp[4200];
		snprintf(tmp, sizeof(tmp), "%s.%ld", path, (long)getpid());
		int w = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (w < 0)
			return berth_fail(err, BERTH_EIO, "cannot create %s: %s", tmp, strerror(errno));
		int ok = write(w, key, SECRET_KEY_BYTES) == SECRET_KEY_BYTES && fsync(w) == 0;
		close(w);
		/* link, not rename: of two processes creating it at once, one key wins */
		if (!ok || (link(tmp, path) && errno != EEXIST)) {
			unlink(tmp);
			return berth_fail(err, BERTH_EIO, "cannot create %s: %s", path, strerror(errno));
		}
		unlink(tmp);
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	}
	if (fd < 0)
		return berth_fail(err, BERTH_EIO, "cannot read the secret key %s: %s", path,
				  strerror(errno));
	struct stat st;
	int rc = 0;
	if (fstat(fd, &st) || st.st_size != SECRET_KEY_BYTES)
		rc = berth_fail(err, BERTH_EIO, "%s is not a berth secret key (%d bytes expected)", path,
				SECRET_KEY_BYTES);
	else if (st.st_mode & 077)
		rc = berth_fail(err, BERTH_EIO, "%s is readable by others (mode %03o); run chmod 600 %s",
				path, (unsigned)(st.st_mode & 0777), path);
	else if (read_all(fd, key, SECRET_KEY_BYTES))
		rc = berth_fail(err, BERTH_EIO, "cannot read the secret key %s", path);
	close(fd);
	return rc;
}

static char *aad(const char *project, const char *name, size_t *len)
{
	berth_buf b = BERTH_BUF_INIT;
	berth_buf_printf(&b, "%s/%s", project, name);
	*len = b.len;
	return b.failed ? (berth_buf_release(&b), NULL) : berth_buf_detach(&b);
}

int secret_seal(const unsigned char *key, const char *project, const char *name,
		const void *value, size_t len, unsigned char **out, size_t *outlen,
		berth_error **err)
{
	*out = NULL;
	if (len > SECRET_MAX_BYTES)
		return berth_fail(err, BERTH_ETOOBIG, "a secret value holds at most 1 MiB");
	size_t alen;
	char *ad = aad(project, name, &alen);
	unsigned char *box = berth_malloc(NONCE + len + TAG);
	if (!ad || !box) {
		free(ad);
		free(box);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	randombytes_buf(box, NONCE);
	unsigned long long clen;
	crypto_aead_xchacha20poly1305_ietf_encrypt(box + NONCE, &clen, value, len,
						   (const unsigned char *)ad, alen, NULL, box, key);
	free(ad);
	*out = box;
	*outlen = NONCE + (size_t)clen;
	return 0;
}

int secret_open(const unsigned char *key, const char *project, const char *name,
		const unsigned char *sealed, size_t len, char **out, size_t *outlen,
		berth_error **err)
{
	*out = NULL;
	if (len < NONCE + TAG)
		return berth_fail(err, BERTH_EIO, "secret \"%s\" is damaged", name);
	size_t alen;
	char *ad = aad(project, name, &alen);
	char *v = berth_malloc(len - NONCE - TAG + 1);
	if (!ad || !v) {
		free(ad);
		free(v);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	unsigned long long vlen;
	int bad = crypto_aead_xchacha20poly1305_ietf_decrypt((unsigned char *)v, &vlen, NULL,
							     sealed + NONCE, len - NONCE,
							     (const unsigned char *)ad, alen, sealed,
							     key);
	free(ad);
	if (bad) {
		free(v);
		return berth_fail(err, BERTH_EIO,
				  "secret \"%s\" does not open with this data dir's key (secret.key "
				  "replaced?)", name);
	}
	v[vlen] = 0;
	*out = v;
	*outlen = (size_t)vlen;
	return 0;
}

void secret_free(char *value, size_t len)
{
	if (!value)
		return;
	sodium_memzero(value, len);
	free(value);
}
