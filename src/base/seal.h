/*
 * seal.h - secret values sealed at rest (libsodium XChaCha20-Poly1305).
 *
 * The key is HOME/secret.key (32 random bytes, mode 0600, created on first
 * use). A sealed value is nonce || ciphertext, with "project/name" as the
 * associated data so that a sealed value copied to another row does not open.
 */
#ifndef BERTH_SECRET_H
#define BERTH_SECRET_H

#include <stddef.h>

#include "berth/error.h"

#define SECRET_KEY_BYTES 32
#define SECRET_MAX_BYTES (1u << 20) /* a Kubernetes Secret holds at most 1 MiB */

/* Reads home/secret.key, creating it (0600) when create is set and it is absent. */
int secret_key_load(const char *home, int create, unsigned char key[SECRET_KEY_BYTES],
		    berth_error **err);
int secret_seal(const unsigned char *key, const char *project, const char *name,
		const void *value, size_t len, unsigned char **out, size_t *outlen,
		berth_error **err);
/* *out is NUL-terminated (the NUL not counted in *outlen); free with secret_free. */
int secret_open(const unsigned char *key, const char *project, const char *name,
		const unsigned char *sealed, size_t len, char **out, size_t *outlen,
		berth_error **err);
/* Wipes and frees a value returned by secret_open. */
void secret_free(char *value, size_t len);

#endif
