/*
 * node_fit.h - the local machine as a single Kubernetes node: its capacity
 * (detected, or set by the policy's local.capacity) and its labels and taints,
 * and whether a planned run can ever be scheduled on it.
 */
#ifndef BERTH_NODE_FIT_H
#define BERTH_NODE_FIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "berth/policy.h"
#include "berth/run.h"

typedef struct local_node {
	int64_t cpu_milli;   /* allocatable CPU, millicores */
	int64_t mem;         /* bytes */
	int64_t gpus;        /* NVIDIA GPUs, handed out by index 0..gpus-1 */
	int64_t disk;        /* bytes free under the data dir */
	const char *name;    /* host name: label kubernetes.io/hostname, matchFields metadata.name */
	berth_kv *labels;    /* every label, the built-in ones included */
	size_t nlabels;
	berth_toleration *taints; /* key, value, effect (op unused) */
	size_t ntaints;
} local_node;

/*
 * Detects the machine: CPUs this process may use (sched_getaffinity, capped
 * by a CPU quota of its own cgroup when there is one), MemTotal, NVIDIA GPUs
 * (the entries of gpu_dir, normally /proc/driver/nvidia/gpus; else the "GPU N:"
 * lines of `nvidia-smi -L` when nvidia-smi is on PATH; else 0), free disk of
 * data_dir (statvfs). Adds the labels kubernetes.io/hostname,
 * kubernetes.io/os=linux and kubernetes.io/arch (amd64, arm64, ...).
 * Strings live in the arena.
 */
int local_node_detect(local_node *out, berth_arena *arena, const char *data_dir,
		      const char *gpu_dir, berth_error **err);

/* Sets label key=value, replacing one of the same key. */
int local_node_label(local_node *n, berth_arena *arena, const char *key,
		     const char *value);

/* Millicores as CPUs ("2", "500m", "1250m"): berth_format_cpu, the one
 * spelling of every face (sizes: berth_format_bytes). */
void local_format_cpu(char *buf, size_t len, int64_t milli);


/*
 * Whether the run can ever run on this node. Returns true, or false with a
 * one-line reason in the arena, the first that fails in this order:
 *  - each request within capacity: "resources.cpu.requests: 64 CPUs asked,
 *    the machine has 2" (memory and disk in the request's own units, GPUs);
 *  - node_selector: every key present with that value ("node_selector:
 *    the node has no label \"gpu\"" / "node_selector: the node has
 *    \"gpu=t4\", the run asks \"gpu=a100\"");
 *  - required node affinity (spec affinity's nodeAffinity
 *    .requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms,
 *    ORed; each term's matchExpressions ANDed, operators In, NotIn, Exists,
 *    DoesNotExist, Gt, Lt; matchFields on metadata.name; an empty term
 *    matches nothing), with the run's spot_labels ANDed into each term with
 *    spot_operator (one term of them alone when there is no required
 *    affinity), exactly as the renderer writes it;
 *  - every taint with effect NoSchedule or NoExecute tolerated by one of the
 *    run's tolerations (Kubernetes rules: empty key with Exists tolerates
 *    all; Equal compares value; an empty effect matches every effect).
 * Preferred affinity and pod (anti-)affinity are ignored on one node.
 */
bool local_node_admits(const local_node *node, const berth_run *run,
		       berth_arena *arena, const char **reason);

/*
 * The same checks, each failing one a problem at the user's field (the value's
 * own file and position, the run spec's or the policy's): every resource over
 * capacity, then the first node_selector, affinity and taint that does not
 * match ("resources.mem.requests: run \"x\" can never fit here: 512Gi
 * asked, the machine has 62.7Gi"). Returns how many were added.
 */
int local_node_refuse(const local_node *node, const berth_run *run, berth_arena *arena,
		      berth_error **err);

/* Applies the policy's local section (capacity, labels, taints) to a detected node. */
int local_node_from_policy(local_node *n, berth_arena *arena, const berth_policy *p);

#endif
