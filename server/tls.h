/*
 * tls.h - berth serve's certificate (--tls-cert, --tls-key): loaded and
 * checked as a pair, handed to GnuTLS at each handshake, and replaced on
 * reload without a restart.
 *
 * How a reload reaches the daemon: libmicrohttpd takes a certificate once,
 * at start (MHD_OPTION_HTTPS_MEM_CERT), so the daemon is given GnuTLS's
 * retrieve callback instead (MHD_OPTION_HTTPS_CERT_CALLBACK), which answers
 * each handshake with the pair in force. A reload swaps that pair at once;
 * connections already open keep the one they were made with. The other way,
 * a second daemon on the same listening socket (MHD_quiesce_daemon), would
 * have two daemons' worth of threads and connection limits while the old
 * one drained, and the old one could not stop while a log or a watch of
 * its kept a connection suspended (streams live for hours).
 *
 * GnuTLS is loaded with dlopen, as libmicrohttpd is (mhd_dl.h): it is the
 * library libmicrohttpd itself brought in, so loading it costs nothing more.
 */
#ifndef BERTH_TLS_H
#define BERTH_TLS_H

#include <gnutls/abstract.h>
#include <stdbool.h>

/* Loads the pair: 0, or -1 with every problem said on stderr. Once, before
 * the daemon starts. */
int tls_open(const char *cert_file, const char *key_file);
/* The callback for MHD_OPTION_HTTPS_CERT_CALLBACK, after tls_open. */
gnutls_certificate_retrieve_function2 *tls_callback(void);
/* Loads the files again: checked completely (both parse, the key is the
 * certificate's, the certificate is in its validity), then in force for
 * every new connection; else its problem is said on stderr and the pair
 * before stays. 0 reloaded, -1 not. */
int tls_reload(void);
/* The files tls_open was given (NULL before it): what the reload watches. */
const char *tls_cert_file(void);
const char *tls_key_file(void);
/* Frees every pair loaded (after the daemon stopped). */
void tls_close(void);

#endif
