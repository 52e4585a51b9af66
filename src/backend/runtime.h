/*
 * runtime.h - what every kind of backend is given and what it implements
 * (crun's cgroup managers are the model: a table of operations per kind).
 *
 * A berth_backend handle is the runtime the kinds share: the data dir, the
 * store, the policy, the options it was opened with. Each kind keeps its
 * own state apart (backend_state), made by its open and freed by its close;
 * no kind reaches into another's. registry.c is the one list of kinds: the
 * only place where generic code learns that there are several.
 */
#ifndef BERTH_BACKEND_RUNTIME_H
#define BERTH_BACKEND_RUNTIME_H

#include "base/arena.h"
#include "base/internal.h"
#include "berth/backend.h"
#include "plan/node_fit.h"
#include "store/store.h"

/* Called by a backend's submit inside the write transaction that stores the
 * runs, before they are stored: 0 goes on; > 0 rolls back and submit returns
 * that (what the runs were planned against changed: plan them again); < 0 an
 * error (in *err). */
typedef struct submit_check {
	int (*fn)(void *ctx, berth_error **err);
	void *ctx;
} submit_check;

typedef struct backend_ops {
	const char *kind;
	/* a run over its project's quota waits in this kind's queue until the quota
	 * has room (false: it is refused, as no queue of berth's holds it) */
	bool queues_quota;
	/* makes the kind's state (backend_state); primary: the kind new runs of
	 * this handle go to, which may connect at once and fail the open. Unless
	 * the handle is passive, also what the kind does on every open (recover,
	 * start what fits, bring records up to date). */
	int (*open)(berth_backend *b, bool primary, berth_error **err);
	void (*close)(berth_backend *b);
	/* refuses a run that can never run on this backend, creating nothing */
	int (*admit)(berth_backend *b, const berth_run *run, berth_error **err);
	/* optional: what the kind needs of a run and it lacks, each a problem at
	 * the user's field (backend_needs), asking nothing of where it runs:
	 * checked when a batch is planned */
	int (*needs)(berth_backend *b, const berth_run *run, berth_error **err);
	/* submits n runs of one spec text, all or none: when one cannot be
	 * submitted, none is left behind; out (may be NULL) gets n records;
	 * check (may be NULL) is asked in the transaction that stores them */
	int (*submit)(berth_backend *b, const berth_run *const *runs, size_t n, const char *spec_text,
		      const submit_check *check, berth_run_info **out, berth_error **err);
	int (*stop)(berth_backend *b, const char *id, int grace_s, bool wait, berth_error **err);
	/* finds runs whose processes died and starts queued runs that fit, or
	 * brings the records of unfinished runs up to what is true */
	int (*reconcile)(berth_backend *b, berth_error **err);
	/* o is never NULL, and checked (log_opts_check) */
	int (*logs)(berth_backend *b, const char *id, const berth_log_opts *o, berth_log_write write,
		    void *ctx, berth_error **err);
	/* returns when the run's record is final (0) or timeout_ms (< 0: no
	 * limit) passed (BERTH_ETIMEOUT) */
	int (*wait)(berth_backend *b, const char *id, int64_t timeout_ms, berth_error **err);
	/* optional: after a wait, the final record the kind was told with the
	 * end (the caller's to free), so that the store need not be read;
	 * NULL: read it */
	berth_run_info *(*take_end)(berth_backend *b, const char *id);
	/* optional: asks where the run runs for its state and records it (a
	 * cluster); NULL: the record is always current */
	int (*refresh)(berth_backend *b, const char *id, berth_error **err);
	/* optional: removes what a finished run left outside the store (its
	 * objects on a cluster, its directory), before its record goes */
	int (*forget)(berth_backend *b, const char *id, berth_error **err);
	/* optional: whether run id is of this kind by what the handle holds
	 * (it submitted it), so that the store is not asked */
	bool (*holds)(berth_backend *b, const char *id);
	/* optional: asks where it would run to accept the run without creating
	 * anything, a line per object into report; NULL: not supported */
	int (*dry_run)(berth_backend *b, const berth_run *run, berth_buf *report, berth_error **err);
	/* optional: whether where it runs has what the policy names, a line per
	 * check into report ("ok ..." or "missing ...: what fixes it"); returns
	 * the number of problems, or a negative code */
	int (*check)(berth_backend *b, berth_buf *report, berth_error **err);
	/* optional: b->policy is a new one (berth_backend_set_policy): what the
	 * kind's state took from the old one is taken again */
	int (*policy_changed)(berth_backend *b, berth_error **err);
	/* optional: makes what the policy needs where it runs, a line per
	 * object into out; with dry_run, writes the objects into out instead
	 * (berth_backend_setup) */
	int (*setup)(berth_backend *b, bool dry_run, berth_buf *out, berth_error **err);
} backend_ops;

/* The default grace period between SIGTERM and SIGKILL (Kubernetes'
 * terminationGracePeriodSeconds). */
#define BACKEND_GRACE_S 30

/* At most this many kinds (registry.c, and the ones tests register). */
#define BACKEND_KINDS_MAX 4

struct berth_backend {
	const backend_ops *ops;    /* the kind new runs are submitted to */
	char *home;
	char *exe;
	const berth_policy *policy;
	berth_policy *own_policy;  /* the built-in one when none was given */
	store *st;
	store *lead;               /* berth_backend_lead's own connection (NULL before) */
	berth_arena *arena;
	bool passive;              /* opened without reconciling (berth_backend_opts) */
	bool cached;               /* records are kept fresh by reconcile: get reads the store */
	bool waits;                /* opts.waits */
	bool fork_supervisors;     /* opts.fork_supervisors */
	char *config, *context;    /* opts.kubeconfig, opts.context: where a cluster is */
	int served_fd;             /* HOME/serve.lock, held shared (opts.serves); -1 */
	struct {
		const backend_ops *kind;
		void *state;
	} state[BACKEND_KINDS_MAX];  /* each kind's own (backend_state) */
};

/* registry.c: the kind of that name (NULL: none); the kinds in order (the
 * first is the default: new runs go there when no kind is named). */
const backend_ops *backend_kind(const char *name);
const backend_ops *backend_kind_at(size_t i);
/* For tests: adds a kind to the registry (-1 when it is full). */
int backend_kind_register(const backend_ops *kind);

/* runtime.c: home/runs/ID[/sub], a run's directory under the data dir, for
 * every kind; -1 when id is not a run id (a store may have been made to
 * hold anything) or it does not fit len. */
/* How often a run's use is sampled (ms), whoever samples it (the local
 * supervisor, a server reconciling cluster runs): BERTH_SAMPLE_MS, 5000 by
 * default, kept between 100 ms and an hour; 0: never. */
#define BACKEND_SAMPLE_MS_MAX 3600000
int64_t backend_sample_ms(void);

int backend_run_path(char *buf, size_t len, const char *home, const char *id, const char *sub);

/* runtime.c: where the store of data dir home is: $BERTH_STORE when set (a
 * PostgreSQL URL that several servers and their supervisors share: `berth
 * serve --store` and the config's store: set it, and every process started
 * from there inherits it), else home/berth.db; -1 when it does not fit len. */
int backend_store_where(char *buf, size_t len, const char *home);

/* backend.c: what service/ asks of the kind of a run (berth_run_delete,
 * berth_batch_dry_run): forget (nothing for a kind without), dry_run with
 * the handle's kind (BERTH_EARG for a kind without). */
int backend_forget(berth_backend *b, const char *id, berth_error **err);
int backend_dry_run(berth_backend *b, const berth_run *run, berth_buf *report, berth_error **err);

/* runtime.c: the kind's state in b (what its open set), NULL before; set
 * (NULL: forget it). */
void *backend_state(const berth_backend *b, const backend_ops *kind);
void backend_state_set(berth_backend *b, const backend_ops *kind, void *state);

/* The runtime alone, without any kind (a local run's supervisor, which
 * opens its own kind with it): the data dir made, the store open. */
/* The data dir when none is given: $BERTH_HOME, else ~/.berth (malloc'd; NULL: out of memory). */
char *backend_default_home(void);

/* What kind ("local" or "kubernetes") needs of a planned run that it cannot
 * have, each a problem at the user's field (berth_run_needs): node is the
 * local machine (the local kind; NULL: not checked). Returns 0, or the code of
 * the first problem, negated. */
int backend_needs(const char *kind, const local_node *node, const berth_run *run,
		  berth_arena *arena, berth_error **err);

int backend_runtime_open(berth_backend **out, const berth_backend_opts *opts, berth_error **err);
void backend_runtime_close(berth_backend *b);

#endif
