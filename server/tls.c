/*
 * tls.c - berth serve's certificate and key (tls.h says how a reload reaches
 * the daemon, and why GnuTLS is loaded with dlopen).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <pthread.h>
#include <sodium.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tls.h"

#include "base/dl.h"
#include "base/internal.h"

/* ---- GnuTLS, loaded ---------------------------------------------------------------------- */

#define G_FN(f) __typeof__(&f) f
static struct gnutls_dl {
	G_FN(gnutls_strerror);
	G_FN(gnutls_certificate_allocate_credentials);
	G_FN(gnutls_certificate_set_x509_key_mem2);
	G_FN(gnutls_certificate_free_credentials);
	G_FN(gnutls_pcert_list_import_x509_raw);
	G_FN(gnutls_pcert_deinit);
	G_FN(gnutls_privkey_init);
	G_FN(gnutls_privkey_import_x509_raw);
	G_FN(gnutls_privkey_deinit);
	G_FN(gnutls_x509_crt_init);
	G_FN(gnutls_x509_crt_import);
	G_FN(gnutls_x509_crt_get_dn);
	G_FN(gnutls_x509_crt_get_serial);
	G_FN(gnutls_x509_crt_get_activation_time);
	G_FN(gnutls_x509_crt_get_expiration_time);
	G_FN(gnutls_x509_crt_deinit);
} gt;
#undef G_FN

static const dl_sym gt_syms[] = {
#define S(f) {#f, offsetof(struct gnutls_dl, f)}
	S(gnutls_strerror), S(gnutls_certificate_allocate_credentials),
	S(gnutls_certificate_set_x509_key_mem2), S(gnutls_certificate_free_credentials),
	S(gnutls_pcert_list_import_x509_raw), S(gnutls_pcert_deinit), S(gnutls_privkey_init),
	S(gnutls_privkey_import_x509_raw), S(gnutls_privkey_deinit), S(gnutls_x509_crt_init),
	S(gnutls_x509_crt_import), S(gnutls_x509_crt_get_dn), S(gnutls_x509_crt_get_serial),
	S(gnutls_x509_crt_get_activation_time), S(gnutls_x509_crt_get_expiration_time),
	S(gnutls_x509_crt_deinit),
#undef S
};

/* ---- a pair --------------------------------------------------------------------------------- */

#define TLS_FILE_MAX (1u << 20) /* bytes of a certificate chain or a key file */
#define TLS_CHAIN_MAX 16        /* certificates in the chain */

typedef struct pair {
	gnutls_pcert_st pcerts[TLS_CHAIN_MAX];
	unsigned npcerts;
	gnutls_privkey_t key;
	unsigned char digest[crypto_generichash_BYTES]; /* of the two files' bytes */
	struct pair *older; /* the pairs it replaced: a handshake may still hold one */
} pair;

static const char *cert_path, *key_path;
static pair *_Atomic current;

static void pair_free(pair *p)
{
	while (p) {
		pair *older = p->older;
		for (unsigned i = 0; i < p->npcerts; i++)
			gt.gnutls_pcert_deinit(&p->pcerts[i]);
		if (p->key)
			gt.gnutls_privkey_deinit(p->key);
		free(p);
		p = older;
	}
}

/* The file at path, whole (at most TLS_FILE_MAX bytes): 0, or -1 said. Only
 * a plain file is read: a FIFO or a device put in its place would hold the
 * server's loop (which reloads, reconciles and sees files change) for as long
 * as it gives nothing. *mode: the file's. */
static int read_whole(const char *what, const char *path, mode_t *mode, gnutls_datum_t *out)
{
	out->data = NULL;
	out->size = 0;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	const char *why = fd < 0 || fstat(fd, &st) ? strerror(errno)
			  : !S_ISREG(st.st_mode)   ? "it is not a file"
						   : NULL;
	if (why) {
		fprintf(stderr, "berth serve: the TLS %s %s cannot be read: %s\n", what, path, why);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*mode = st.st_mode;
	unsigned char *buf = malloc(TLS_FILE_MAX + 1);
	size_t n = 0;
	bool bad = false;
	while (buf && !bad && n <= TLS_FILE_MAX) {
		ssize_t got = read(fd, buf + n, TLS_FILE_MAX + 1 - n);
		if (got > 0)
			n += (size_t)got;
		else if (!got)
			break;
		else
			bad = errno != EINTR;
	}
	close(fd);
	if (!buf || bad || n > TLS_FILE_MAX || !n) {
		fprintf(stderr, "berth serve: the TLS %s %s %s\n", what, path,
			!buf ? "cannot be read: out of memory" : bad ? "cannot be read"
			: n ? "is over 1 MiB" : "is empty");
		free(buf);
		return -1;
	}
	out->data = buf;
	out->size = (unsigned)n;
	return 0;
}

static void say_gnutls(const char *what, int rc)
{
	fprintf(stderr, "berth serve: %s: %s\n", what, gt.gnutls_strerror(rc));
}

/* "subject CN=..., serial 1a2b..., valid until 2027-01-01T00:00:00Z" of p's
 * first certificate into line; -1 (said) when it is not in its validity. */
static int describe(const pair *p, char *line, size_t len)
{
	gnutls_x509_crt_t crt;
	char dn[512] = "?";
	unsigned char serial[64];
	size_t dnlen = sizeof(dn), slen = sizeof(serial);
	if (gt.gnutls_x509_crt_init(&crt) < 0)
		return -1;
	int rc = gt.gnutls_x509_crt_import(crt, &p->pcerts[0].cert, GNUTLS_X509_FMT_DER);
	if (rc < 0) {
		gt.gnutls_x509_crt_deinit(crt);
		say_gnutls("the TLS certificate cannot be read", rc);
		return -1;
	}
	if (gt.gnutls_x509_crt_get_dn(crt, dn, &dnlen) < 0)
		snprintf(dn, sizeof(dn), "?");
	char hex[2 * sizeof(serial) + 1] = "?";
	if (gt.gnutls_x509_crt_get_serial(crt, serial, &slen) >= 0)
		for (size_t i = 0; i < slen; i++)
			snprintf(hex + 2 * i, 3, "%02x", serial[i]);
	time_t from = gt.gnutls_x509_crt_get_activation_time(crt);
	time_t until = gt.gnutls_x509_crt_get_expiration_time(crt);
	gt.gnutls_x509_crt_deinit(crt);
	char when[32] = "?";
	struct tm tm;
	if (until != (time_t)-1 && gmtime_r(&until, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	time_t now = time(NULL);
	if (until != (time_t)-1 && until < now) {
		fprintf(stderr, "berth serve: the TLS certificate %s (subject %s) expired at %s\n",
			cert_path, dn, when);
		return -1;
	}
	if (from != (time_t)-1 && from > now) {
		fprintf(stderr, "berth serve: the TLS certificate %s (subject %s) is not valid yet\n",
			cert_path, dn);
		return -1;
	}
	snprintf(line, len, "subject %s, serial %s, valid until %s", dn, hex, when);
	return 0;
}

/* The pair of the files, checked: NULL when it has a problem (said), or when
 * the files hold just what in_force was loaded from (*unchanged). */
static pair *pair_load(char *line, size_t len, const pair *in_force, bool *unchanged)
{
	gnutls_datum_t cert, key;
	*unchanged = false;
	mode_t mode;
	if (read_whole("certificate", cert_path, &mode, &cert))
		return NULL;
	if (read_whole("key", key_path, &mode, &key)) {
		free(cert.data);
		return NULL;
	}
	unsigned char digest[crypto_generichash_BYTES];
	crypto_generichash_state h;
	crypto_generichash_init(&h, NULL, 0, sizeof(digest));
	crypto_generichash_update(&h, (const unsigned char *)&cert.size, sizeof(cert.size));
	crypto_generichash_update(&h, cert.data, cert.size);
	crypto_generichash_update(&h, key.data, key.size);
	crypto_generichash_final(&h, digest, sizeof(digest));
	if (in_force && !memcmp(digest, in_force->digest, sizeof(digest))) {
		*unchanged = true;
		sodium_memzero(key.data, key.size);
		free(key.data);
		free(cert.data);
		return NULL;
	}
	/* used all the same: the files are the operator's, as ssh's keys are */
	if (mode & 077)
		fprintf(stderr, "berth serve: warning: the TLS key %s may be read by others (mode "
				"%03o): chmod 600 it\n", key_path, (unsigned)(mode & 0777));
	pair *p = calloc(1, sizeof(*p));
	if (p)
		memcpy(p->digest, digest, sizeof(digest));
	gnutls_certificate_credentials_t cred = NULL;
	int rc = p ? gt.gnutls_certificate_allocate_credentials(&cred) : GNUTLS_E_MEMORY_ERROR;
	/* both parse and the key is the certificate's: what GnuTLS checks of a pair */
	if (rc >= 0 && (rc = gt.gnutls_certificate_set_x509_key_mem2(cred, &cert, &key,
								   GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
		fprintf(stderr, "berth serve: the TLS certificate %s and key %s are refused: %s\n",
			cert_path, key_path, gt.gnutls_strerror(rc));
		rc = -1;
	} else if (rc < 0)
		say_gnutls("the TLS pair cannot be loaded", rc);
	if (cred)
		gt.gnutls_certificate_free_credentials(cred);
	if (rc >= 0) {
		p->npcerts = TLS_CHAIN_MAX;
		if ((rc = gt.gnutls_pcert_list_import_x509_raw(p->pcerts, &p->npcerts, &cert,
								 GNUTLS_X509_FMT_PEM, 0)) < 0) {
			p->npcerts = 0;
			say_gnutls("the TLS certificate chain cannot be read", rc);
		}
	}
	if (rc >= 0 && (rc = gt.gnutls_privkey_init(&p->key)) >= 0 &&
	    (rc = gt.gnutls_privkey_import_x509_raw(p->key, &key, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0)
		say_gnutls("the TLS key cannot be read", rc);
	if (rc >= 0 && describe(p, line, len))
		rc = -1;
	memset(key.data, 0, key.size);
	free(key.data);
	free(cert.data);
	if (rc < 0) {
		pair_free(p);
		return NULL;
	}
	return p;
}

/* ---- the handshake, the reload ----------------------------------------------------------- */

/* gnutls_certificate_retrieve_function2: the pair in force. What it returns
 * is not freed by GnuTLS; a pair replaced meanwhile is kept (pair.older). */
static int retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn, int nreqs,
		    const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
		    gnutls_pcert_st **pcert, unsigned int *pcert_length, gnutls_privkey_t *privkey)
{
	(void)session, (void)req_ca_rdn, (void)nreqs, (void)pk_algos, (void)pk_algos_length;
	pair *p = atomic_load(&current);
	if (!p)
		return -1;
	*pcert = p->pcerts;
	*pcert_length = p->npcerts;
	*privkey = p->key;
	return 0;
}

gnutls_certificate_retrieve_function2 *tls_callback(void)
{
	return retrieve;
}

static pthread_mutex_t reload_lock = PTHREAD_MUTEX_INITIALIZER;

int tls_open(const char *cert_file, const char *key_file)
{
	static const char *const sonames[] = {"libgnutls.so.30", "libgnutls.so", NULL};
	char why[512];
	if (berth_dl_load(sonames, gt_syms, BERTH_ARRAY_SIZE(gt_syms), &gt, sizeof(gt), why,
			  sizeof(why))) {
		fprintf(stderr, "berth serve: cannot load GnuTLS (--tls-cert needs it): %s\n", why);
		return -1;
	}
	cert_path = cert_file;
	key_path = key_file;
	if (sodium_init() < 0) {
		fprintf(stderr, "berth serve: libsodium cannot start\n");
		return -1;
	}
	char line[1024];
	bool unchanged;
	pair *p = pair_load(line, sizeof(line), NULL, &unchanged);
	if (!p)
		return -1;
	atomic_store(&current, p);
	fprintf(stderr, "berth serve: TLS certificate %s: %s\n", cert_path, line);
	return 0;
}

int tls_reload(void)
{
	if (!cert_path)
		return 0;
	pthread_mutex_lock(&reload_lock);
	char line[1024];
	bool unchanged;
	/* the files as they were (a SIGHUP for the policy, a storm of them): nothing
	 * is loaded, so nothing is kept (each pair replaced is kept till the end) */
	pair *p = pair_load(line, sizeof(line), atomic_load(&current), &unchanged);
	if (p) {
		p->older = atomic_load(&current);
		atomic_store(&current, p);
		fprintf(stderr, "berth serve: TLS certificate %s reloaded: %s\n", cert_path, line);
	} else if (unchanged)
		fprintf(stderr, "berth serve: TLS certificate %s unchanged\n", cert_path);
	else
		fprintf(stderr, "berth serve: the TLS certificate in force stays\n");
	pthread_mutex_unlock(&reload_lock);
	return p || unchanged ? 0 : -1;
}

const char *tls_cert_file(void)
{
	return cert_path;
}

const char *tls_key_file(void)
{
	return key_path;
}

void tls_close(void)
{
	pair_free(atomic_exchange(&current, NULL));
}
