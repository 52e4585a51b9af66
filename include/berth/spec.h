/*
 * berth/spec.h - the run spec: what a user asks for (runspec.md section 1).
 *
 * berth_spec_parse() reads YAML 1.2 or JSON (one or many documents, one run
 * each) into typed structs, accepting every spelling the user documentation
 * shows: a resource as a string, an integer or {requests, limits};
 * node_selector as [{key, value}] or a map; fs_group as 8877 or "8877".
 * It then checks every rule that needs no platform policy, and reports all
 * problems of all documents at once, each with file, line, column and key
 * path ("train.yaml:12:10: resources.mem.requests: \"32Gb\" is not a
 * quantity: ...").
 *
 * Every value keeps the position it was written at; `set` (or a non-NULL
 * string) tells whether the user wrote it. A berth_spec_set owns all memory
 * reachable from it, including the berth_node trees it points to.
 */
#ifndef BERTH_SPEC_H
#define BERTH_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "berth/error.h"
#include "berth/node.h"
#include "berth/quantity.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Where an effective value came from (runspec.md section 3), lowest layer
 * first. A parsed spec leaves every origin UNSET; berth_run_plan() sets it.
 */
typedef enum berth_origin {
	BERTH_ORIGIN_UNSET = 0,
	BERTH_ORIGIN_BUILTIN,   /* berth's own default */
	BERTH_ORIGIN_DEFAULT,   /* the policy's defaults */
	BERTH_ORIGIN_PROJECT,   /* the defaults of the run's project (projects.NAME.defaults) */
	BERTH_ORIGIN_FUNCTION,  /* the run's function */
	BERTH_ORIGIN_RUN,       /* the run spec */
	BERTH_ORIGIN_PROFILE,   /* the hardware profile */
	BERTH_ORIGIN_RULE,      /* a policy rule (GPU, mem_limit_ratio, preemption, ...) */
} berth_origin;

typedef struct berth_str {
	const char *s;  /* NULL when not given */
	berth_pos pos;
	uint8_t origin; /* berth_origin */
} berth_str;

typedef struct berth_int {
	int64_t v;
	berth_pos pos;
	bool set;
	uint8_t origin;
} berth_int;

typedef struct berth_qty {
	berth_quantity q;
	berth_pos pos;
	bool set;
	uint8_t origin;
	/* the layer whose file pos is in, when not origin's: a request a rule
	 * derives from a limit stays at the limit someone wrote (BERTH_QTY_AT) */
	uint8_t at;
	/* the value as written ("0.5", "1.1"), for messages that quote the user
	 * or print a ratio as written; NULL unless decoded from a document (a
	 * value a rule computes has none), and stale once q is changed: check
	 * that it still reads as q (berth_qty_written) */
	const char *text;
	/* requests: default (MLRun's with_limits keeps the platform's default
	 * request): q is 0 until the plan gives it the policy's default */
	bool from_default;
} berth_qty;

/* The layer whose file a qty's pos points into. */
#define BERTH_QTY_AT(qty) ((qty)->at ? (qty)->at : (qty)->origin)

typedef struct berth_strlist {
	berth_str *items;
	size_t n;
	berth_pos pos;
	bool set;
	uint8_t origin;
} berth_strlist;

/* A key/value entry: node_selector, labels (maps), envs ({name, value}). */
typedef struct berth_kv {
	berth_str key;
	berth_str value;
	berth_pos pos;
	uint8_t origin;
} berth_kv;

typedef struct berth_kvlist {
	berth_kv *items;
	size_t n;
	berth_pos pos;
	bool set;
} berth_kvlist;

typedef enum berth_action {
	BERTH_ACTION_JOB = 0,  /* the default */
	BERTH_ACTION_SERVE,
	BERTH_ACTION_DEPLOY,
	BERTH_ACTION_CRONJOB,
} berth_action;

typedef enum berth_preemption {
	BERTH_PREEMPTION_UNSET = 0,
	BERTH_PREEMPTION_ALLOW,
	BERTH_PREEMPTION_CONSTRAIN,
	BERTH_PREEMPTION_PREVENT,
	BERTH_PREEMPTION_NONE,
} berth_preemption;

typedef enum berth_volume_type {
	BERTH_VOLUME_PVC = 0,        /* persistent_volume_claim: a new PVC per run */
	BERTH_VOLUME_EMPTY_DIR,      /* empty_dir */
	BERTH_VOLUME_CONFIG_MAP,     /* config_map: an existing ConfigMap (pre-existing) */
	BERTH_VOLUME_SECRET,         /* secret: a platform secret as files */
	BERTH_VOLUME_SHARED,         /* shared_volume: an existing PVC (pre-existing) */
} berth_volume_type;

/* One resource: requests and limits. */
typedef struct berth_resource {
	berth_qty requests;
	berth_qty limits;
	berth_pos pos;
} berth_resource;

typedef struct berth_resources {
	berth_resource cpu, mem, gpu, disk;
	berth_str gpu_type;  /* extended resource name, e.g. nvidia.com/gpu */
	berth_pos pos;
	bool set;
} berth_resources;

typedef struct berth_volume {
	berth_volume_type type;
	berth_str type_name;     /* volume_type as written */
	berth_str name;
	berth_str mount_path;
	berth_qty size;          /* spec.size: pvc, empty_dir */
	berth_str storage_class; /* spec.storage_class: pvc */
	berth_str access_mode;   /* spec.access_mode: pvc */
	berth_str medium;        /* spec.medium: empty_dir */
	berth_str ref;           /* spec.name (config_map, secret), spec.claim_name (shared_volume) */
	berth_pos pos;
	uint8_t origin;
} berth_volume;

typedef struct berth_toleration {
	berth_str key, op, value, effect; /* op: "operator" */
	berth_int seconds;                /* tolerationSeconds */
	berth_pos pos;
	uint8_t origin;
} berth_toleration;

typedef struct berth_port {
	berth_str name;
	berth_int port;
	berth_int target_port;     /* a number ... */
	berth_str target_port_name; /* ... or a named container port */
	berth_str protocol;
	berth_int node_port;
	berth_pos pos;
	uint8_t origin;
} berth_port;

typedef struct berth_function {
	berth_str ref;  /* function: NAME, a function registered on the server */
	berth_str name, image, image_pull_policy;
	berth_strlist command, args;
	berth_pos pos;
	bool set;
} berth_function;

typedef struct berth_spec {
	const char *file;   /* as given to berth_spec_parse */
	size_t doc;         /* 0-based index of the document in the file */
	berth_pos pos;
	berth_str project;  /* default "default" */
	berth_str name;     /* default: the function name */
	berth_function function;
	berth_action action;
	berth_str action_name;
	berth_str schedule;
	berth_str profile;
	berth_resources resources;
	berth_volume *volumes;
	size_t nvolumes;
	berth_pos volumes_pos;
	berth_kvlist node_selector;
	const berth_node *affinity;   /* a Kubernetes Affinity, validated; NULL if unset */
	berth_pos affinity_pos;
	uint8_t affinity_origin;
	berth_toleration *tolerations;
	size_t ntolerations;
	berth_pos tolerations_pos;
	berth_strlist secrets;
	berth_kvlist envs;
	berth_int fs_group, run_as_user, run_as_group;
	berth_str priority_class;
	berth_preemption preemption_mode;
	berth_str preemption_name;
	berth_str volume_mode;        /* auto (unset: the policy's defaults.volumes too), manual
					 (only the volumes listed), none (no volume) */
	berth_int replicas, min_replicas, max_replicas; /* replicas of a job: its workers */
	berth_str launcher;           /* distributed.launcher: env, torchrun, jax */
	berth_int procs_per_worker;   /* distributed.procs_per_worker (torchrun's nproc_per_node) */
	berth_int dist_port;          /* distributed.port: worker 0's rendezvous port */
	berth_pos distributed_pos;
	berth_str service_type;
	berth_port *ports;
	size_t nports;
	berth_pos service_pos;
	berth_kvlist labels;
	berth_strlist args;           /* overrides function.args */
	const berth_node *inputs;     /* a map; given to the process as JSON */
	uint8_t inputs_origin;
	uint8_t ports_origin;         /* service.ports, replaced as a whole */
	berth_int timeout;            /* seconds */
	berth_int retries;
} berth_spec;

/* The most workers one distributed job may have (replicas of action job). */
#define BERTH_WORKERS_MAX 1000

typedef struct berth_spec_set berth_spec_set;

/*
 * Parses and validates every document of data (len bytes) into *out.
 * name is the file name used in messages ("-" or "<stdin>" for a stream).
 * Returns 0 when every run is valid (*err may then hold warnings), or a
 * negative code with every problem in *err; *out is NULL on failure.
 */
int berth_spec_parse(berth_spec_set **out, const char *name, const char *data, size_t len,
		     berth_error **err);

/*
 * As berth_spec_parse, for the text of a registered function: a template, one
 * layer of runs that name it. What ties its fields to the action or to fields
 * another layer may set (min_replicas needs serve or deploy; autoscaling needs
 * both bounds) is checked on each run's merged spec, for the action that run
 * has, not on the template alone.
 */
int berth_spec_parse_function(berth_spec_set **out, const char *name, const char *data, size_t len,
			      berth_error **err);

/* Reads path ("-": standard input) and parses it as berth_spec_parse. */
int berth_spec_parse_file(berth_spec_set **out, const char *path, berth_error **err);

/*
 * Who takes the runs of a stream as berth_spec_read_file reads them: start
 * before the first, and again when the input is read again from its start
 * (a stray comma dropped): what was done with the runs so far is to be
 * forgotten; run with each valid run spec as soon as its document is read,
 * index counting the runs (empty documents are none). The spec and what it
 * points to last until run returns.
 */
typedef struct berth_spec_sink {
	void *arg;
	void (*start)(void *arg);
	void (*run)(void *arg, const berth_spec *spec, size_t index);
} berth_spec_sink;

/*
 * berth_spec_parse_file, the runs handed to sink one at a time: a stream of
 * thousands is read in the memory of one run, at the pace of the parser.
 * The same problems in the same order, and the same return. Once a spec is
 * found invalid no run is handed over; when it returns < 0, what the sink
 * did with the runs it had is to be dropped (the input is not valid, and a
 * run is used only when all are).
 */
int berth_spec_read_file(const char *path, const berth_spec_sink *sink, berth_error **err);

size_t berth_spec_set_count(const berth_spec_set *set);
const berth_spec *berth_spec_set_get(const berth_spec_set *set, size_t i);
void berth_spec_set_free(berth_spec_set *set);

/* Names of enumerations, as written in a spec ("job", "prevent", ...). */
const char *berth_action_name(berth_action a);
const char *berth_preemption_name(berth_preemption p);
const char *berth_volume_type_name(berth_volume_type t);

/*
 * A quantity as its user wrote it, for a message about the value itself
 * ("0.5 is not a whole number of GPUs", "mem_limit_ratio 1.1"): q->text when
 * it still reads as q->q, else q's canonical form, written into buf (at
 * least BERTH_QUANTITY_STR_MAX bytes). Returns buf or q->text.
 */
const char *berth_qty_written(const berth_qty *q, char *buf);

#ifdef __cplusplus
}
#endif

#endif
