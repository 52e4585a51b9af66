/*
 * berth/policy.h - the platform policy: what admins offer and allow
 * (runspec.md section 2).
 *
 * One YAML file (namespace, defaults, limits, security, gpu, storage,
 * preemptible_nodes, priority_classes, profiles, quotas) plus any
 * `profiles.d/NAME.yaml` beside it, each a map with a `profiles:` list. Read
 * with the same strictness as run specs: unknown keys, wrong types and bad
 * values are errors with file, line, column and key path.
 *
 * A berth_policy is immutable once loaded and may be shared by threads.
 */
#ifndef BERTH_POLICY_H
#define BERTH_POLICY_H

#include <stddef.h>

#include "berth/error.h"
#include "berth/spec.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct berth_policy berth_policy;

/* A hardware profile: an id and the run spec fields it sets, which win
 * over the user's ("the requirements defined in the template have priority"). */
typedef struct berth_profile {
	berth_str id;
	berth_str description;
	const char *file;   /* where it is defined */
	const char *project; /* the project whose overlay defines it (projects.NAME.profiles):
				it is that project's only; NULL: every project's */
	berth_spec spec;    /* only the fields the profile sets */
	berth_pos pos;
} berth_profile;

/*
 * Loads the policy at path with the profiles.d/ folder beside it. With path
 * NULL: $BERTH_CONFIG, then /etc/berth/config.yaml if it exists, else the
 * built-in policy (no file; every key at its default). A path that is given
 * but missing is an error. Returns 0 or a negative berth_code with every
 * problem of every file in *err.
 */
int berth_policy_load(berth_policy **out, const char *path, berth_error **err);

/* Parses one policy document from memory (name is used in messages). */
int berth_policy_parse(berth_policy **out, const char *name, const char *data, size_t len,
		       berth_error **err);

/* The built-in policy. NULL only when out of memory. */
berth_policy *berth_policy_builtin(void);

void berth_policy_free(berth_policy *p);

/* The main file, or NULL for the built-in policy. */
const char *berth_policy_file(const berth_policy *p);

/*
 * The policy as the runs of project see it: the overlay projects.NAME (its
 * defaults, limits, profiles, quotas, security, priority_classes, namespace)
 * over the global keys; p itself when the policy has no overlay for it.
 * The view lives as long as p and is not freed on its own.
 */
const berth_policy *berth_policy_for_project(const berth_policy *p, const char *project);

/* The project of a view (NULL for a whole policy). */
const char *berth_policy_project(const berth_policy *p);

/* Profiles, in the order they are defined (config.yaml first, then
 * profiles.d files by name); a project's view: its own first, then the
 * policy's that it does not define again. */
size_t berth_policy_profile_count(const berth_policy *p);
const berth_profile *berth_policy_profile_get(const berth_policy *p, size_t i);
const berth_profile *berth_policy_profile_find(const berth_policy *p, const char *id);

#ifdef __cplusplus
}
#endif

#endif
