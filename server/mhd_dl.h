/*
 * mhd_dl.h - libmicrohttpd, loaded when `berth serve` starts (dlopen), not
 * linked: it brings GnuTLS and its libraries, whose loading every other
 * berth process (render, run, each run's supervisor) would pay for at start
 * (src/base/curl_dl.h says the same of libcurl).
 *
 * Include this instead of <microhttpd.h>; call berth_mhd_load() first.
 */
#ifndef BERTH_MHD_DL_H
#define BERTH_MHD_DL_H

#include <microhttpd.h>

#include "berth/error.h"

typedef struct mhd_dl {
	struct MHD_Daemon *(*start_daemon)(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
					   void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls, ...);
	void (*stop_daemon)(struct MHD_Daemon *d);
	const union MHD_DaemonInfo *(*get_daemon_info)(struct MHD_Daemon *d,
						       enum MHD_DaemonInfoType type, ...);
	enum MHD_Result (*add_response_header)(struct MHD_Response *r, const char *header,
					       const char *content);
	const char *(*lookup_connection_value)(struct MHD_Connection *c, enum MHD_ValueKind kind,
					       const char *key);
	enum MHD_Result (*queue_response)(struct MHD_Connection *c, unsigned int status,
					  struct MHD_Response *r);
	void (*destroy_response)(struct MHD_Response *r);
	struct MHD_Response *(*create_response_from_buffer)(size_t size, void *buffer,
							    enum MHD_ResponseMemoryMode mode);
	struct MHD_Response *(*create_response_from_callback)(uint64_t size, size_t block_size,
							      MHD_ContentReaderCallback crc,
							      void *crc_cls,
							      MHD_ContentReaderFreeCallback crfc);
	void (*suspend_connection)(struct MHD_Connection *c);
	void (*resume_connection)(struct MHD_Connection *c);
	const union MHD_ConnectionInfo *(*get_connection_info)(struct MHD_Connection *c,
							       enum MHD_ConnectionInfoType type, ...);
	int (*get_connection_values)(struct MHD_Connection *c, enum MHD_ValueKind kind,
				     MHD_KeyValueIterator it, void *it_cls);
	enum MHD_Result (*is_feature_supported)(enum MHD_FEATURE feature);
} mhd_dl;

extern mhd_dl berth_mhd;

/* Loads libmicrohttpd (libmicrohttpd.so.12) once; BERTH_EIO with dlerror's words. */
int berth_mhd_load(berth_error **err);

#define MHD_start_daemon (berth_mhd.start_daemon)
#define MHD_stop_daemon (berth_mhd.stop_daemon)
#define MHD_get_daemon_info (berth_mhd.get_daemon_info)
#define MHD_add_response_header (berth_mhd.add_response_header)
#define MHD_lookup_connection_value (berth_mhd.lookup_connection_value)
#define MHD_queue_response (berth_mhd.queue_response)
#define MHD_destroy_response (berth_mhd.destroy_response)
#define MHD_create_response_from_buffer (berth_mhd.create_response_from_buffer)
#define MHD_create_response_from_callback (berth_mhd.create_response_from_callback)
#define MHD_suspend_connection (berth_mhd.suspend_connection)
#define MHD_resume_connection (berth_mhd.resume_connection)
#define MHD_get_connection_info (berth_mhd.get_connection_info)
#define MHD_get_connection_values (berth_mhd.get_connection_values)
#define MHD_is_feature_supported (berth_mhd.is_feature_supported)

#endif
