/*
 * curl_dl.h - libcurl, loaded when first needed (dlopen), not linked.
 *
 * libcurl brings some 30 shared libraries with it (TLS, LDAP, Kerberos, SSH,
 * IDN, ...). Linked, they cost every berth process about 5 ms of the dynamic
 * loader's symbol lookups before main(): render, run and each run's
 * supervisor, which never talk HTTP. Loaded on first use, they cost only the
 * processes that do (a client of berth serve, the kubernetes backend).
 *
 * Include this instead of <curl/curl.h>; call berth_curl_load() before the
 * first curl function (berth_client_open and kube_open do).
 */
#ifndef BERTH_CURL_DL_H
#define BERTH_CURL_DL_H

#include <curl/curl.h>

#include "berth/error.h"

typedef struct curl_dl {
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *h, CURLoption option, ...);
	CURLcode (*easy_perform)(CURL *h);
	CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
	void (*easy_cleanup)(CURL *h);
	void (*easy_reset)(CURL *h);
	char *(*easy_escape)(CURL *h, const char *s, int len);
	void (*free)(void *p);
	const char *(*easy_strerror)(CURLcode code);
	CURLHcode (*easy_header)(CURL *h, const char *name, size_t index, unsigned int origin,
				 int request, struct curl_header **hout);
	struct curl_slist *(*slist_append)(struct curl_slist *list, const char *s);
	void (*slist_free_all)(struct curl_slist *list);
	CURLSH *(*share_init)(void);
	CURLSHcode (*share_setopt)(CURLSH *sh, CURLSHoption option, ...);
	CURLSHcode (*share_cleanup)(CURLSH *sh);
	CURLM *(*multi_init)(void);
	CURLMcode (*multi_setopt)(CURLM *m, CURLMoption option, ...);
	CURLMcode (*multi_add_handle)(CURLM *m, CURL *h);
	CURLMcode (*multi_remove_handle)(CURLM *m, CURL *h);
	CURLMcode (*multi_perform)(CURLM *m, int *running);
	CURLMcode (*multi_poll)(CURLM *m, struct curl_waitfd *fds, unsigned int nfds, int timeout_ms,
				int *numfds);
	CURLMsg *(*multi_info_read)(CURLM *m, int *left);
	CURLMcode (*multi_cleanup)(CURLM *m);
} curl_dl;

/* The functions, once berth_curl_load has succeeded. */
extern curl_dl berth_curl;

/* Loads libcurl (libcurl.so.4) and its functions, once; thread-safe.
 * BERTH_EIO with dlerror's words when it cannot. */
int berth_curl_load(berth_error **err);

/* curl.h's type-checking macros give way to the loaded functions */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#undef curl_share_setopt
#undef curl_multi_setopt
#define curl_global_init (berth_curl.global_init)
#define curl_easy_init (berth_curl.easy_init)
#define curl_easy_setopt (berth_curl.easy_setopt)
#define curl_easy_perform (berth_curl.easy_perform)
#define curl_easy_getinfo (berth_curl.easy_getinfo)
#define curl_easy_cleanup (berth_curl.easy_cleanup)
#define curl_easy_reset (berth_curl.easy_reset)
#define curl_easy_escape (berth_curl.easy_escape)
#define curl_free (berth_curl.free)
#define curl_easy_strerror (berth_curl.easy_strerror)
#define curl_easy_header (berth_curl.easy_header)
#define curl_slist_append (berth_curl.slist_append)
#define curl_slist_free_all (berth_curl.slist_free_all)
#define curl_share_init (berth_curl.share_init)
#define curl_share_setopt (berth_curl.share_setopt)
#define curl_share_cleanup (berth_curl.share_cleanup)
#define curl_multi_init (berth_curl.multi_init)
#define curl_multi_setopt (berth_curl.multi_setopt)
#define curl_multi_add_handle (berth_curl.multi_add_handle)
#define curl_multi_remove_handle (berth_curl.multi_remove_handle)
#define curl_multi_perform (berth_curl.multi_perform)
#define curl_multi_poll (berth_curl.multi_poll)
#define curl_multi_info_read (berth_curl.multi_info_read)
#define curl_multi_cleanup (berth_curl.multi_cleanup)

#endif
