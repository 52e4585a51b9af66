/*
 * workload.h - which Kubernetes workload a planned run is, for the renderer,
 * explain and the kubernetes backend: a distributed job is an Indexed Job,
 * or, when the policy's distributed.operator names one the cluster runs, a
 * PyTorchJob, an MPIJob or a JobSet (docs/distributed.md, "Operators").
 */
#ifndef BERTH_PLAN_WORKLOAD_H
#define BERTH_PLAN_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "berth/run.h"

typedef enum plan_workload {
	WL_PLAIN,      /* not distributed: a Job, a CronJob or a Deployment */
	WL_INDEXED,    /* an Indexed Job and the headless Service of its workers */
	WL_PYTORCHJOB, /* the Training Operator's (kubeflow.org/v1) */
	WL_MPIJOB,     /* the MPI Operator's (kubeflow.org/v2beta1) */
	WL_JOBSET,     /* jobset.x-k8s.io/v1alpha2 */
	WL_NO_MPI,     /* launcher mpi with no MPI Operator: refused on a cluster */
} plan_workload;

/* The replicated Job of a JobSet: its pods are <name>-worker-0-<index>. */
#define JOBSET_REPLICATED_JOB "worker"
/* Where the MPI Operator mounts an MPIJob's SSH keys unless the policy
 * says (distributed.ssh_auth_mount_path): the home of the non-root user of
 * the MPI Operator's images. */
#define DIST_SSH_AUTH_DEFAULT "/home/mpiuser/.ssh"
/* The container a PyTorchJob's replicas must have, and its port's name,
 * which the Training Operator reads MASTER_PORT from. */
#define PYTORCH_CONTAINER "pytorch"
#define PYTORCH_PORT_NAME "pytorchjob-port"
/* The labels the operators give their pods: the Training Operator a
 * PyTorchJob's replica type (master, worker) and index; the MPI Operator an
 * MPIJob's role (launcher, worker) and a worker's index. */
#define KUBEFLOW_REPLICA_TYPE "training.kubeflow.org/replica-type"
#define KUBEFLOW_REPLICA_INDEX "training.kubeflow.org/replica-index"
#define KUBEFLOW_JOB_ROLE "training.kubeflow.org/job-role"

/* The workload of run r. */
plan_workload plan_workload_of(const berth_run *r);

/* Its kind and apiVersion (*api); WL_PLAIN and WL_NO_MPI: NULL. */
const char *plan_workload_kind(plan_workload w, const char **api);

/* How many characters the names of its workers add to the run's name, at
 * most, for workers workers: "-<index>" of an Indexed Job, "-worker-<i>"
 * and "-master-0" of a PyTorchJob, ... (host names are 63 at most). */
size_t plan_worker_suffix(plan_workload w, int64_t workers);

#endif
