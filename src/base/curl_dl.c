/*
 * curl_dl.c - loads libcurl on first use (curl_dl.h says why).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stddef.h>

#include "base/curl_dl.h"
#include "base/dl.h"
#include "base/internal.h"

curl_dl berth_curl;

static const dl_sym syms[] = {
#define S(f, field) {#f, offsetof(curl_dl, field)}
	S(curl_global_init, global_init),     S(curl_easy_init, easy_init),
	S(curl_easy_setopt, easy_setopt),     S(curl_easy_perform, easy_perform),
	S(curl_easy_getinfo, easy_getinfo),   S(curl_easy_cleanup, easy_cleanup),
	S(curl_easy_reset, easy_reset),       S(curl_easy_escape, easy_escape),
	S(curl_free, free),                   S(curl_easy_strerror, easy_strerror),
	S(curl_easy_header, easy_header),     S(curl_slist_append, slist_append),
	S(curl_slist_free_all, slist_free_all), S(curl_share_init, share_init),
	S(curl_share_setopt, share_setopt),   S(curl_share_cleanup, share_cleanup),
	S(curl_multi_init, multi_init),       S(curl_multi_setopt, multi_setopt),
	S(curl_multi_add_handle, multi_add_handle), S(curl_multi_remove_handle, multi_remove_handle),
	S(curl_multi_perform, multi_perform), S(curl_multi_poll, multi_poll),
	S(curl_multi_info_read, multi_info_read), S(curl_multi_cleanup, multi_cleanup),
#undef S
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char why[512];

static void load(void)
{
	static const char *const sonames[] = {"libcurl.so.4", "libcurl.so", NULL};
	curl_dl t;
	if (!berth_dl_load(sonames, syms, BERTH_ARRAY_SIZE(syms), &t, sizeof(t), why, sizeof(why)))
		berth_curl = t;
}

int berth_curl_load(berth_error **err)
{
	pthread_once(&once, load);
	if (berth_curl.easy_init)
		return 0;
	return berth_fail(err, BERTH_EIO, "cannot load libcurl (needed to talk HTTP): %s", why);
}
