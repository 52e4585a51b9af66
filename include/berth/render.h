/*
 * berth/render.h - the Kubernetes objects of planned runs (runspec.md
 * section 5), as multi-document YAML or a JSON v1 List.
 *
 *   job      Secret, PVCs, batch/v1 Job
 *   serve    Secret, PVCs, apps/v1 Deployment, v1 Service, autoscaling/v2 HPA
 *   deploy   Secret, PVCs, apps/v1 Deployment (+ HPA)
 *   cronjob  Secret, PVCs, batch/v1 CronJob
 *
 * A Secret is rendered only for a run with secrets, PVCs only for
 * persistent_volume_claim volumes, an HPA only with min/max replicas. The
 * output depends only on the runs: the same run id gives the same bytes.
 * Secret values never appear: the Secret lists its keys in an annotation
 * and gets its data when the run is submitted. ownerReferences point to the
 * workload by kind and name; their uid is filled in at submission, once the
 * workload exists.
 */
#ifndef BERTH_RENDER_H
#define BERTH_RENDER_H

#include <stddef.h>

#include "berth/error.h"
#include "berth/run.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum berth_format {
	BERTH_FORMAT_YAML = 0,
	BERTH_FORMAT_JSON,
} berth_format;

typedef struct berth_render berth_render;

/* An empty output in format fmt. NULL when out of memory. */
berth_render *berth_render_new(berth_format fmt);

/* Appends the objects of run. Returns 0 or a negative berth_code. */
int berth_render_add(berth_render *r, const berth_run *run, berth_error **err);

/* Hands the output over: *data (NUL-terminated, free with free()) and *len.
 * The render is empty again afterwards. */
int berth_render_finish(berth_render *r, char **data, size_t *len, berth_error **err);

/* Writes the output to the file descriptor fd (all of it, in order; a
 * non-blocking fd is waited for) rather than handing it over: a long output
 * is held outside the heap until then. The render is empty again afterwards.
 * Returns 0, -BERTH_ENOMEM, or -BERTH_EIO when fd failed. */
int berth_render_write(berth_render *r, int fd, berth_error **err);

void berth_render_free(berth_render *r);

#ifdef __cplusplus
}
#endif

#endif
