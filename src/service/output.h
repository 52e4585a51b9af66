/*
 * output.h - what the services write: trees (render/emit.h) that they build
 * from the store's records, as YAML or JSON.
 */
#ifndef BERTH_SERVICE_OUTPUT_H
#define BERTH_SERVICE_OUTPUT_H

#include <stddef.h>

#include "berth/error.h"
#include "berth/render.h"
#include "render/emit.h"

/* top (a list of rows, or one row) as YAML or JSON (pretty) in *out, the
 * caller's to free; BERTH_ENOMEM when b or the writer failed. */
int service_output(const obuild *b, const onode *top, berth_format fmt, char **out, size_t *len,
		   berth_error **err);

#endif
