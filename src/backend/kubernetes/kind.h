/*
 * kind.h - what the files of the kubernetes kind share (kubernetes.c: runs
 * on the cluster; check.c: what the cluster must have for the policy).
 */
#ifndef BERTH_BACKEND_KUBERNETES_KIND_H
#define BERTH_BACKEND_KUBERNETES_KIND_H

#include "backend/kubernetes/api.h"
#include "backend/runtime.h"

extern const backend_ops kube_backend_ops;

/* The kubernetes kind's own part of a handle: its connection, made on first
 * use (at open, for a handle whose new runs go to the cluster). */
typedef struct kube_state {
	kube *api;
	int64_t swept;  /* when its last sweep was (ms), 0: none yet */
	char priority_class[254]; /* the last PriorityClass found on the cluster */
} kube_state;

#define KUBE(b) ((kube_state *)backend_state((b), &kube_backend_ops))

/* check.c: whether the cluster behind api has what policy p names, a line
 * per check into report; the number of problems. */
int kube_check(kube *api, const berth_policy *p, berth_buf *report);
/* check.c: whether PriorityClass name is on the cluster: 1 yes, 0 no, -1
 * when it cannot be told (an identity that may not read it). */
int kube_priority_class_exists(kube *api, const char *name);

#endif
