/*
 * mpi.h - MPI ranks across the workers of a local distributed job
 * (distributed.launcher mpi), without ssh: each worker runs berth's worker
 * (`berth __mpi-worker`), which starts, on a request of mpirun, Open MPI's
 * daemon in that worker (its cgroup, its GPUs); mpirun reaches the workers
 * through berth's remote agent (`berth __mpi-exec HOST COMMAND`) as it would
 * through ssh. Both are processes of the library hosted by the berth binary,
 * as the supervisor is (supervisor.h).
 *
 * Worker 0's also starts mpirun with the run's command, every worker's ranks
 * (BERTH_WORKERS x BERTH_MPI_SLOTS) and a hostfile of the workers
 * (worker-0 slots=P ...); its exit status is the run's.
 */
#ifndef BERTH_BACKEND_LOCAL_MPI_H
#define BERTH_BACKEND_LOCAL_MPI_H

/* The verbs, and what the supervisor execs: argv[0] is the verb. */
#define MPI_WORKER_VERB "__mpi-worker"
#define MPI_EXEC_VERB "__mpi-exec"

/* berth __mpi-worker [-- COMMAND...]: a worker's server of mpirun's daemon
 * requests, and on worker 0 mpirun with COMMAND. Its exit status: mpirun's on
 * worker 0, else the daemon's. */
int berth_local_mpi_worker(int argc, char **argv);
/* berth __mpi-exec HOST WORDS...: mpirun's agent; runs WORDS, as a remote
 * shell would, in worker HOST (worker-N) of its run; exits with their status. */
int berth_local_mpi_exec(int argc, char **argv);

#endif
