/*
 * mhd_dl.c - loads libmicrohttpd when the server starts (mhd_dl.h says why).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stddef.h>

#include "mhd_dl.h" /* <microhttpd.h>: before banned.h, which internal.h ends with */

#include "base/dl.h"
#include "base/internal.h"

mhd_dl berth_mhd;

static const dl_sym syms[] = {
#define S(f, field) {#f, offsetof(mhd_dl, field)}
	S(MHD_start_daemon, start_daemon),
	S(MHD_stop_daemon, stop_daemon),
	S(MHD_get_daemon_info, get_daemon_info),
	S(MHD_add_response_header, add_response_header),
	S(MHD_lookup_connection_value, lookup_connection_value),
	S(MHD_queue_response, queue_response),
	S(MHD_destroy_response, destroy_response),
	S(MHD_create_response_from_buffer, create_response_from_buffer),
	S(MHD_create_response_from_callback, create_response_from_callback),
	S(MHD_suspend_connection, suspend_connection),
	S(MHD_resume_connection, resume_connection),
	S(MHD_get_connection_info, get_connection_info),
	S(MHD_get_connection_values, get_connection_values),
	S(MHD_is_feature_supported, is_feature_supported),
#undef S
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char why[512];

static void load(void)
{
	static const char *const sonames[] = {"libmicrohttpd.so.12", "libmicrohttpd.so", NULL};
	mhd_dl t;
	if (!berth_dl_load(sonames, syms, BERTH_ARRAY_SIZE(syms), &t, sizeof(t), why, sizeof(why)))
		berth_mhd = t;
}

int berth_mhd_load(berth_error **err)
{
	pthread_once(&once, load);
	if (berth_mhd.start_daemon)
		return 0;
	return berth_fail(err, BERTH_EIO, "cannot load libmicrohttpd (berth serve needs it): %s", why);
}
