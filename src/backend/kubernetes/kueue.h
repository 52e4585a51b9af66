/*
 * kueue.h - what Kueue says of a run's suspended Job (policy
 * kueue.local_queue): the Job names its LocalQueue in a label and is made
 * suspended; Kueue makes a Workload for it (workloads.kueue.x-k8s.io, owned
 * by the Job) and resumes the Job once the queue admits it. Until then the
 * Job has no pods, and the Workload's conditions are the run's reason.
 * This file is the one map from Kueue's words to berth's.
 */
#ifndef BERTH_BACKEND_KUBERNETES_KUEUE_H
#define BERTH_BACKEND_KUBERNETES_KUEUE_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/kubernetes/api.h"
#include "berth/backend.h"
#include "berth/node.h"

/* Kueue's API group and version, as a path (/apis/...). */
#define KUEUE_API "/apis/kueue.x-k8s.io/v1beta1"

/* What is known of a Job's place in Kueue. Strings are cut to their
 * buffers; the cluster's words in reason are made one line by the caller
 * (kubernetes.c records every reason through one_line). */
typedef struct kueue_view {
	bool suspended;       /* the Job's spec.suspend */
	char queue[64];       /* its label kueue.x-k8s.io/queue-name; "": none */
	bool asked;           /* its Workload was looked for (kueue_ask) */
	bool failed;          /* Kueue finished the Workload as failed */
	char reason[600];     /* what Kueue says, or why it cannot be told */
} kueue_view;

/* Reads what a Job object says of Kueue: spec.suspend and the queue label.
 * Clears what was asked before (the Job changed). */
void kueue_job_read(kueue_view *k, const berth_node *job);

/*
 * Looks for the Workload of Job ns/job (uid: the Job's, "" when unknown)
 * and maps it into k: by the label kueue.x-k8s.io/job-uid, else by an
 * ownerReference to the Job. A cluster without Kueue's Workload resource,
 * an identity that may not list it, and no Workload yet each have their own
 * reason. Best effort: it never fails.
 */
void kueue_ask(kube *api, const char *ns, const char *job, const char *uid, kueue_view *k);

/* Maps one Workload object's conditions into k (kueue_ask's map). */
void kueue_workload_map(const berth_node *wl, kueue_view *k);

/* The run's state and reason while its Job is suspended: Pending, with
 * Kueue's words; Failed when Kueue finished the Workload as failed. */
berth_state kueue_state(const kueue_view *k, char *reason, size_t len);

#endif
