/*
 * berth/berth.h - the whole public API of libberth.
 *
 * libberth holds every rule of berth; the CLI, the server and the SDK are
 * thin faces over it. It never prints and never exits: every fallible
 * function returns 0 or a negative berth_code and fills a berth_error.
 * Objects returned through `**out` belong to the caller, who frees them with
 * the matching berth_<type>_free(), which accepts NULL.
 */
#ifndef BERTH_BERTH_H
#define BERTH_BERTH_H

#include "berth/backend.h"
#include "berth/backup.h"
#include "berth/client.h"
#include "berth/error.h"
#include "berth/explain.h"
#include "berth/node.h"
#include "berth/policy.h"
#include "berth/project.h"
#include "berth/quantity.h"
#include "berth/render.h"
#include "berth/run.h"
#include "berth/spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version, "MAJOR.MINOR.PATCH". */
const char *berth_version(void);

#ifdef __cplusplus
}
#endif

#endif
