/*
 * berth/run.h - a planned run: a run spec merged with the platform policy
 * (runspec.md section 3), every effective value with its origin, and the
 * policy's rules applied.
 *
 * The merge goes, lowest to highest: built-in defaults < policy defaults <
 * function < run spec < profile. A profile wins every field it sets and only
 * those, but for a resource (cpu, mem, gpu, disk): a profile that sets its
 * requests or its limits decides it whole, and what the lower layers set of
 * it is dropped (each value of the user's so replaced is a berth_override,
 * and a warning); maps merge key by key (node_selector, labels), lists with an
 * identity by identity (envs by name, volumes by name, tolerations by key and
 * effect, secrets by name); other lists and scalars are replaced whole. Then,
 * in order: the GPU rule, mem_limit_ratio, preemption mode, priority class,
 * security, limits, quotas.
 */
#ifndef BERTH_RUN_H
#define BERTH_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "berth/error.h"
#include "berth/policy.h"
#include "berth/quantity.h"
#include "berth/spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a project's active runs already hold, for quotas. */
typedef struct berth_usage {
	berth_quantity cpu, mem, gpu;
	int64_t runs;
	int64_t in_request;  /* of runs, those of the same request before this one */
} berth_usage;
/* Adds what run counts against its project's quota to u (a request of several
 * runs is checked as one: each run against the usage plus the runs before it). */
struct berth_run;
void berth_usage_add(berth_usage *u, const struct berth_run *run);

typedef struct berth_run_opts {
	const char *run_id;          /* NULL: a new random id */
	const char *const *secrets;  /* the secret names the project has ... */
	size_t nsecrets;
	bool check_secrets;          /* ... checked only when true (a secret store is given) */
	const berth_usage *usage;    /* what the project's admitted runs hold; NULL: nothing */
	bool quota_refuses;          /* a run over its quota's headroom is refused (a backend
					with no queue for quotas: kubernetes); false: it is
					planned, with quota_wait saying why it would wait */
	const berth_spec *function;  /* the registered function a spec names (function: NAME):
					its spec is the function layer; NULL: the spec's own */
	bool template;               /* spec is a function's template planned alone (when it is
					registered): what ties its fields to the action or to
					another layer's is checked on each run that names it */
	bool no_notes;               /* the notes of why values are what they are
					(berth_run_note, explain) are not made: berth render,
					which prints objects, has no use for them */
} berth_run_opts;

/* Why a value is what it is, for a value a rule derived or changed. */
typedef struct berth_note {
	const char *path;   /* key path in the effective spec: "resources.mem.limits" */
	const char *text;   /* "requests 32Gi x defaults.mem_limit_ratio 1.1 (config.yaml:4:20)" */
} berth_note;

/* A value of the user's (the run spec's, the function's) that the profile
 * replaced or dropped: shown by explain, named by a warning. */
typedef struct berth_override {
	const char *path;   /* as explain names the field: "resources.mem.limits", "envs.B",
			       "volumes.data", "service.ports", "tolerations" */
	const char *ident;  /* a toleration's "key:effect" (explain's identity); else NULL */
	const char *value;  /* the user's value as text ("2Gi", "\"a\""); NULL for a list item
			       or a tree */
	uint8_t origin;     /* BERTH_ORIGIN_RUN or BERTH_ORIGIN_FUNCTION */
	berth_pos pos;      /* where the user wrote it */
	const char *by;     /* the profile's field that decides it: "resources.mem" (a whole
			       resource), else path */
	berth_pos by_pos;   /* where the profile writes it (in the profile's file) */
} berth_override;

typedef struct berth_run {
	berth_spec spec;             /* the effective spec; every value's origin is set */
	const char *id;              /* the run id: [a-z0-9] and inner '-', at most 24 */
	const char *name;            /* <run-name>-<id>, the name of its objects (<= 63) */
	const char *base_name;       /* <run-name>: spec name, else function name, else "run" */
	const char *namespace;       /* NULL: none set by the policy */
	const char *local_queue;     /* kueue.local_queue, {project} filled in: the Kueue
					LocalQueue of its Job (a job or a cronjob's Jobs);
					NULL: none */
	const char *dist_operator;   /* distributed.operator: what runs a distributed job's
					workers on a cluster, "kubeflow" or "jobset"; NULL:
					none (an Indexed Job) */
	const char *ssh_auth_mount_path; /* distributed.ssh_auth_mount_path (an MPIJob's) */
	const berth_profile *profile;
	const char *policy_project;  /* the project whose overlay of the policy (projects.NAME)
					the run was planned under; NULL: none */
	const berth_spec *given;     /* the run spec as written, and the function layer when it ... */
	const berth_spec *function;  /* ... is a registered function: what a profile may override */
	const char *origin_file[BERTH_ORIGIN_RULE + 1]; /* the file each origin's positions are in */
	const char *priority_class_name; /* the PriorityClass object, NULL if none */
	const char *gpu_resource;    /* extended resource of the GPUs, when any are asked for */
	const char *seccomp_profile; /* RuntimeDefault unless the policy says otherwise */
	bool run_as_non_root;        /* security.disable_root */
	int64_t pids_max;            /* limits.pids: processes the run may have at once
					(the local backend's cap; default 1024) */
	bool pvc_per_pod;            /* storage.pvc_lifecycle: pod (generic ephemeral volumes) */
	int64_t ttl_after_finished;  /* cleanup.ttl_after_finished: seconds a finished Job stays
					on a cluster; -1: until the run is deleted */
	const berth_kv *spot_labels; /* preemptible_nodes.node_selector, when the mode uses it ... */
	size_t nspot_labels;
	const char *spot_operator;   /* ... ANDed into each required affinity term: "In" or "NotIn" */
	const char *submitted_by;    /* who submits it (berth_batch_opts), kept in its record */
	const char *quota_wait;      /* "waiting for quota: gpu 4 of 4 in use" when the run
					needs more than its project's quota has free on the
					usage it was planned against (it waits for it, in the
					queue of the local backend); NULL: it fits */
	berth_note *notes;
	size_t nnotes;
	berth_override *overrides;   /* what the profile replaced of the user's, in table order */
	size_t noverrides;
	struct berth_arena *arena;   /* internal */
} berth_run;

/*
 * Merges spec with policy (NULL: the built-in policy) and applies every
 * policy rule. Returns 0, or a negative berth_code with every refusal in
 * *err, each naming the field, the value, the rule and where the rule is
 * written. Unlike other functions, *out is set on a refusal too (NULL only
 * when out of memory or on bad arguments), so callers can show the effective
 * spec next to the reasons; free it with berth_run_free.
 *
 * The run points into spec and policy: keep both alive as long as the run.
 */
int berth_run_plan(berth_run **out, const berth_spec *spec, const berth_policy *policy,
		   const berth_run_opts *opts, berth_error **err);

void berth_run_free(berth_run *run);

/* A name for origin: "built-in", "policy default", "project default",
 * "function", "run spec", "profile", "policy rule". */
const char *berth_origin_name(berth_origin origin);

/* The note for path, or NULL. */
const char *berth_run_note(const berth_run *run, const char *path);

/* Writes a new random run id (10 characters of [a-z0-9]) into buf (>= 11 bytes). */
int berth_run_id_new(char *buf, size_t len);

/* The id of the index-th (0-based) run of a stream whose first run has id
 * base: base, then base-2, base-3, ... (base cut to 24 characters). */
void berth_run_id_nth(char *buf, size_t len, const char *base, size_t index);
/* NULL if id can be a run id, else why not ("must be 1 to 20 characters ..."). */
const char *berth_run_id_check(const char *id);

#ifdef __cplusplus
}
#endif

#endif
