/*
 * policy_internal.h - the policy's fields, for the merge and the renderer.
 */
#ifndef BERTH_POLICY_INTERNAL_H
#define BERTH_POLICY_INTERNAL_H

#include "base/arena.h"
#include "base/internal.h"
#include "berth/policy.h"

/* The label by which a Job names its Kueue LocalQueue (kueue.local_queue). */
#define KUEUE_QUEUE_LABEL "kueue.x-k8s.io/queue-name"

/* A range of ids, both bounds inclusive. */
typedef struct berth_range {
	berth_int min, max;
} berth_range;

typedef struct berth_quota {
	berth_str project;  /* a project name, or "default" for every other project */
	berth_qty cpu, mem, gpu;
	berth_int runs;
	berth_pos pos;
	bool overlay;       /* written as projects.NAME.quotas, not quotas.NAME */
} berth_quota;

/* The most project overlays (projects.NAME) one policy may write. */
#define BERTH_POLICY_PROJECTS_MAX 1000

/* A project's overlay: projects.NAME, and the policy as that project sees it. */
typedef struct berth_project_policy {
	berth_str name;
	berth_policy *view;     /* in the policy's arena: never freed on its own */
	const berth_node *node; /* the overlay as written */
} berth_project_policy;

struct berth_policy {
	berth_arena *arena;
	const char *file;          /* NULL: built-in */
	berth_str namespace;
	berth_spec defaults;       /* fields filled when nobody set them */
	berth_qty mem_limit_ratio; /* defaults.mem_limit_ratio */
	/*
	 * Integers with a default (disable_root, the id ranges, limits.pids,
	 * local.uid_range): v is always the value in force, the built-in default
	 * until the file sets it; set (and pos) say that the file wrote it.
	 */
	struct {
		berth_qty cpu, mem, gpu, disk, volume_size;
		berth_int pids;            /* processes per run (local backend); default 1024 */
	} limits;
	struct {
		berth_int disable_root, block_existing_volumes; /* booleans: v 0 or 1; disable_root
								   defaults to 1 */
		berth_str seccomp_profile;
		berth_strlist user_fields;
		/* the ids a run may ask for, each bound inclusive; default 1000-2147483647 */
		berth_range run_as_user_range, run_as_group_range, fs_group_range;
		/* the least role that may set and delete a project's secrets on a
		 * server: "admin" (unset: the default) or "user" */
		berth_str secret_writers;
	} security;
	struct {
		berth_str default_type;
		berth_strlist types;
	} gpu;
	struct {
		berth_str default_class;
		berth_str pvc_lifecycle;  /* "run" or "pod" */
	} storage;
	struct {
		berth_int ttl_after_finished; /* seconds a finished Job stays on a cluster */
	} cleanup;
	struct {
		berth_str local_queue;    /* the LocalQueue of a run's Job; may name {project} */
	} kueue;
	struct {
		/* distributed.operator: what runs a distributed job's workers on a
		 * cluster: "none" (or unset: an Indexed Job), "kubeflow" (the
		 * Training Operator's PyTorchJob and the MPI Operator's MPIJob),
		 * "jobset" (a JobSet) */
		berth_str op;
		berth_str ssh_auth_mount_path; /* an MPIJob's SSH keys, where its image's user reads them */
	} distributed;
	berth_spec preemptible;    /* preemptible_nodes: node_selector, tolerations */
	berth_kvlist priority_classes; /* name in a spec -> PriorityClass object */
	bool priority_open;            /* a name not in priority_classes is used as
					  written (the built-in policy's) */
	berth_profile *profiles;
	size_t nprofiles;
	berth_quota *quotas;
	size_t nquotas;
	/* projects: the overlays (the whole policy's; none in a view), read once
	 * the main file and profiles.d are */
	berth_project_policy *projects;
	size_t nprojects;
	const berth_node *projects_node;
	/*
	 * A project's view (berth_policy_for_project): every key of the whole
	 * policy (base) with the overlay's over it. project_defaults are the
	 * overlay's defaults as written, a layer of the merge over base's
	 * defaults (BERTH_ORIGIN_PROJECT); defaults holds the two merged.
	 * profiles are the overlay's own (each with its project); base's that it
	 * does not define again follow them (berth_policy_profile_get).
	 */
	const berth_policy *base;
	const char *project;
	berth_spec project_defaults;
	berth_quota *overlay_quota; /* projects.NAME.quotas, while the overlay is read */
	const berth_profile **visible; /* every profile of the view, its own first (nvisible) */
	size_t nvisible;
	struct {                   /* the local backend's machine (docs/local.md) */
		berth_qty cpu, mem, gpu, disk;  /* capacity: overrides what is detected */
		berth_kvlist labels;            /* node labels, besides the built-in ones */
		berth_strlist taints;           /* "key=value:Effect", as kubectl taint writes them */
		berth_kvlist priority_values;   /* PriorityClass name -> value, for queue order */
		berth_int grace_period;         /* seconds between SIGTERM and SIGKILL on stop */
		berth_int keep_volumes;         /* keep persistent_volume_claim directories */
		berth_range uid_range;          /* the uids given, one per project,
						   to runs with no run_as_user when berth is root;
						   default 2000000000-2000065535 */
	} local;
};

/* Splits a taint "key=value:Effect" (or "key:Effect"); -1 if it is not one. */
int berth_taint_parse(const char *s, berth_toleration *out, berth_arena *arena);

/* The value of a PriorityClass for the local queue (local.priority_values; under
 * the built-in policy, that of berth_policy_class_value); 0 if none. */
int64_t berth_policy_priority_value(const berth_policy *p, const char *class_name);

/* The value of the i-th of n PriorityClasses, the first the highest: the last
 * 1000, each one before it ten times the next (100000, 10000, 1000 for three);
 * past 7 classes (10^9 is the ceiling of a class that is not the system's),
 * 1000 apart. */
int64_t berth_policy_class_value(size_t i, size_t n);

/* The uids of local.uid_range, bounds inclusive, into *min and *max (the
 * built-in 2000000000-2000065535 when p is NULL or does not set it). */
void berth_policy_uid_range(const berth_policy *p, int64_t *min, int64_t *max);

/* The memory limit defaults.mem_limit_ratio gives a request: request x
 * ratio, rounded up to a whole MiB (a binary request) or byte; -1 when it is
 * too large. */
int berth_mem_limit_by_ratio(const berth_quantity *request, const berth_quantity *ratio,
			     berth_quantity *limit);

/* When a name of the policy (tpl: its namespace, its LocalQueue) names
 * {project}: true, and project's name appended to out (unchecked); else false. */
bool berth_policy_project_name(const char *tpl, const char *project, berth_buf *out);

/* A rule's key ("limits.mem") as the view p names it, at its place (at, a
 * member of *p): "projects.P.limits.mem" where P's overlay writes it (its
 * place is not the policy's), else key itself. */
const char *berth_policy_key(const berth_policy *p, const berth_pos *at, const char *key, char *buf, size_t len);

/* The quota for project: its own entry, else "default", else NULL. */
const berth_quota *berth_policy_quota(const berth_policy *p, const char *project);

#endif
