/*
 * curl_dl.c - loads libcurl on first use (curl_dl.h says why).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "curl_dl.h"
#include "internal.h"

curl_dl berth_curl;

static const struct {
	const char *name;
	size_t off;
} syms[] = {
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
	/* the runtime library (libcurl4*), else the development link */
	void *lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		lib = dlopen("libcurl.so", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		const char *e = dlerror();
		snprintf(why, sizeof(why), "%s", e ? e : "libcurl.so.4 not found");
		return;
	}
	curl_dl t;
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(syms); i++) {
		void *f = dlsym(lib, syms[i].name);
		if (!f) {
			snprintf(why, sizeof(why), "libcurl has no %s (it is older than 7.84)", syms[i].name);
			return;
		}
		/* a data pointer to a function pointer: POSIX dlsym's documented use */
		memcpy((char *)&t + syms[i].off, &f, sizeof(f));
	}
	berth_curl = t;
}

int berth_curl_load(berth_error **err)
{
	pthread_once(&once, load);
	if (berth_curl.easy_init)
		return 0;
	return berth_fail(err, BERTH_EIO, "cannot load libcurl (needed to talk HTTP): %s", why);
}
