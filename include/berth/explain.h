/*
 * berth/explain.h - the effective spec of a run, each value with where it
 * came from, and why the run was refused; the profiles of a policy with
 * what each gives.
 */
#ifndef BERTH_EXPLAIN_H
#define BERTH_EXPLAIN_H

#include <stddef.h>

#include "berth/error.h"
#include "berth/policy.h"
#include "berth/run.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum berth_explain_format {
	BERTH_EXPLAIN_TABLE = 0,  /* aligned columns for a terminal */
	BERTH_EXPLAIN_YAML,
	BERTH_EXPLAIN_JSON,
} berth_explain_format;

/*
 * Describes run: every effective field (path, value, origin, the file:line
 * it was written at, and the rule's note for a derived value), then the
 * problems of plan (refusals and warnings; NULL: none). Secret values never
 * appear (a run holds only secret names). *out is NUL-terminated; free() it.
 */
int berth_explain(const berth_run *run, const berth_error *problems, berth_explain_format fmt,
		  char **out, size_t *len, berth_error **err);

/* The effective spec of berth_explain's JSON (a server's validate answer, a
 * run's /spec: docs/api.md) in fmt, as berth_explain writes it. The JSON is
 * a peer's: a row without its path or value is left out. */
int berth_explain_json_format(const char *json, size_t len, berth_explain_format fmt, char **out,
			      size_t *outlen, berth_error **err);

/* Describes the profiles of policy: id, description, where defined, and
 * every field each sets. */
int berth_explain_profiles(const berth_policy *policy, berth_explain_format fmt, char **out,
			   size_t *len, berth_error **err);

#ifdef __cplusplus
}
#endif

#endif
