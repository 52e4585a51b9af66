/*
 * render.c - the Kubernetes objects of a planned run (runspec.md section 5).
 *
 * Each object is built as an output tree (emit.h) in a per-run arena and
 * written at once, so a stream of many runs keeps one run in memory. The
 * pod template is built once, by one function, for every workload kind.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/names.h"
#include "plan/distributed.h"
#include "plan/workload.h"
#include "plan/policy_internal.h"
#include "base/spool.h"
#include "render/emit.h"
#include "render/render_internal.h"

struct berth_render {
	berth_format fmt;
	spool out; /* a stream's output is held until it may be shown (spool.h) */
	size_t objects;
	berth_arena *arena; /* a run's objects, released after each: the next reuses it */
};

/* What a pod template is for: a plain pod (a Job's, an Indexed Job's, a
 * JobSet's, a Deployment's), or one replica type of an operator's job. */
typedef enum role {
	ROLE_POD,
	ROLE_MASTER,     /* a PyTorchJob's Master (rank 0) */
	ROLE_WORKER,     /* a PyTorchJob's Workers (ranks 1 ..) */
	ROLE_LAUNCHER,   /* an MPIJob's Launcher: mpirun */
	ROLE_MPI_WORKER, /* an MPIJob's Workers: sshd, where mpirun starts the ranks */
} role;

typedef struct ctx {
	obuild b;
	const berth_run *run;
	const berth_spec *s;
	const char *workload_api, *workload_kind;
	plan_workload wl;
	role role;
} ctx;

static const char *const int_keys[] = {"weight", NULL};

/* ---- metadata --------------------------------------------------------------- */

static void labels(ctx *c, onode *parent)
{
	const berth_run *r = c->run;
	onode *l = o_map(&c->b, parent, "labels");
	o_str(&c->b, l, "app.kubernetes.io/name", r->base_name);
	o_str(&c->b, l, "app.kubernetes.io/instance", r->name);
	o_str(&c->b, l, "app.kubernetes.io/component", berth_action_name(c->s->action));
	o_str(&c->b, l, "app.kubernetes.io/managed-by", "berth");
	o_str(&c->b, l, "berth.dev/project", c->s->project.s);
	o_str(&c->b, l, "berth.dev/run", r->id);
	if (r->profile)
		o_str(&c->b, l, "berth.dev/profile", r->profile->id.s);
	for (size_t i = 0; i < c->s->labels.n; i++)
		o_str(&c->b, l, c->s->labels.items[i].key.s, c->s->labels.items[i].value.s);
}

static onode *object(ctx *c, const char *api, const char *kind, const char *name, int owned)
{
	onode *o = o_root(&c->b, O_MAP);
	o_str(&c->b, o, "apiVersion", api);
	o_str(&c->b, o, "kind", kind);
	onode *m = o_map(&c->b, o, "metadata");
	o_str(&c->b, m, "name", name);
	if (c->run->namespace)
		o_str(&c->b, m, "namespace", c->run->namespace);
	labels(c, m);
	if (owned) {
		onode *ref = o_map(&c->b, o_seq(&c->b, m, "ownerReferences"), NULL);
		o_str(&c->b, ref, "apiVersion", c->workload_api);
		o_str(&c->b, ref, "kind", c->workload_kind);
		o_str(&c->b, ref, "name", c->run->name);
		o_str(&c->b, ref, "uid", ""); /* filled in at submission */
		o_bool(&c->b, ref, "blockOwnerDeletion", 1);
	}
	return o;
}

/* ---- the pod ------------------------------------------------------------------- */

static void resources(ctx *c, onode *container)
{
	const berth_resources *res = &c->s->resources;
	const struct {
		const berth_resource *r;
		const char *name;
	} rs[] = {
		{&res->cpu, "cpu"},
		{&res->mem, "memory"},
		{&res->disk, "ephemeral-storage"},
		{&res->gpu, c->run->gpu_resource},
	};
	onode *o = o_map(&c->b, container, "resources");
	onode *req = NULL, *lim = NULL;
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(rs); i++) {
		/* a GPU is a limit only: Kubernetes makes the request equal to it */
		if (rs[i].r->requests.set && i != 3) {
			if (!req)
				req = o_map(&c->b, o, "requests");
			o_qty(&c->b, req, rs[i].name, &rs[i].r->requests.q);
		}
	}
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(rs); i++) {
		if (!rs[i].r->limits.set || (i == 3 && (!rs[i].name || berth_quantity_sign(&rs[i].r->limits.q) <= 0)))
			continue;
		/* mpirun needs no GPU: the ranks on the workers have them */
		if (i == 3 && c->role == ROLE_LAUNCHER)
			continue;
		if (!lim)
			lim = o_map(&c->b, o, "limits");
		o_qty(&c->b, lim, rs[i].name, &rs[i].r->limits.q);
	}
}

const char *render_inputs_json(const berth_node *inputs, berth_arena *arena)
{
	obuild b = {.arena = arena};
	berth_buf json = BERTH_BUF_INIT;
	onode *in = o_copy_typed(&b, o_root(&b, O_SEQ), NULL, inputs);
	if (in && !b.failed)
		emit_json(&json, in, 0, 0);
	const char *out = json.failed || !json.data ? NULL : berth_arena_strdup(arena, json.data);
	berth_buf_release(&json);
	return out;
}

/* Whether name is a C identifier: what mpirun -x can pass on. */
static bool env_name(const char *name)
{
	if (!name || !((*name >= 'A' && *name <= 'Z') || (*name >= 'a' && *name <= 'z') || *name == '_'))
		return false;
	for (const char *p = name + 1; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	return true;
}

/* An MPIJob's Launcher: mpirun starts the run's command once for every rank
 * (slotsPerWorker on each worker, through the hostfile the MPI Operator
 * gives it), and passes the run's variables on to them (-x: Open MPI, the
 * MPI Operator's default implementation), for the ranks that ssh starts get
 * only what mpirun gives them. */
static void mpirun(ctx *c, onode *k)
{
	const berth_spec *s = c->s;
	obuild *b = &c->b;
	int64_t procs = s->procs_per_worker.set ? s->procs_per_worker.v : 1;
	o_str(b, o_seq(b, k, "command"), NULL, "mpirun");
	onode *args = o_seq(b, k, "args");
	o_str(b, args, NULL, "-n");
	o_strf(b, args, NULL, "%lld", (long long)(plan_workers(s) * procs));
	const char *pass[] = {"BERTH_RUN_ID", "BERTH_WORKERS", s->inputs ? "BERTH_INPUTS" : NULL};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(pass); i++)
		if (pass[i]) {
			o_str(b, args, NULL, "-x");
			o_str(b, args, NULL, pass[i]);
		}
	for (size_t i = 0; i < s->envs.n; i++)
		if (env_name(s->envs.items[i].key.s)) {
			o_str(b, args, NULL, "-x");
			o_str(b, args, NULL, s->envs.items[i].key.s);
		}
	/* the secrets reach the launcher's environment as their variables */
	for (size_t i = 0; i < s->secrets.n; i++) {
		char name[BERTH_ENV_NAME_MAX];
		o_str(b, args, NULL, "-x");
		o_str(b, args, NULL, berth_arena_strdup(b->arena, berth_env_name_from(s->secrets.items[i].s,
											  name, sizeof(name))));
	}
	for (size_t i = 0; i < s->function.command.n; i++)
		o_str(b, args, NULL, s->function.command.items[i].s);
	for (size_t i = 0; i < s->args.n; i++)
		o_str(b, args, NULL, s->args.items[i].s);
}

/* An MPIJob's Worker: the SSH server mpirun reaches it through, as the MPI
 * Operator's images run it: as root with its own configuration, as another
 * user with the one in that user's home (the parent of sshAuthMountPath). */
static void sshd(ctx *c, onode *k)
{
	obuild *b = &c->b;
	const char *keys = c->run->ssh_auth_mount_path, *slash = strrchr(keys, '/');
	o_str(b, o_seq(b, k, "command"), NULL, "/usr/sbin/sshd");
	onode *args = o_seq(b, k, "args");
	o_str(b, args, NULL, "-De");
	if (strcmp(keys, "/root/.ssh") && slash) {
		o_str(b, args, NULL, "-f");
		o_strf(b, args, NULL, "%.*s/.sshd_config", (int)(slash - keys), keys);
	}
}

/* Names the Training Operator sets in a PyTorchJob's containers itself
 * (after the template's own: a variable of berth's cannot refer to them). */
static bool set_by_training_operator(const char *name)
{
	static const char *const set[] = {"MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK",
					  "PET_MASTER_ADDR", "PET_MASTER_PORT", "PET_NNODES",
					  "PET_NODE_RANK", "PET_NPROC_PER_NODE", "PYTHONUNBUFFERED"};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(set); i++)
		if (!strcmp(name, set[i]))
			return true;
	return false;
}

/*
 * A distributed job's variables (plan/distributed.c says which), as each
 * workload can give them:
 *   Indexed Job: worker 0 is <name>-0 in the headless Service <name>, the
 *     index the Job's annotation of each pod;
 *   JobSet: worker 0 is <name>-worker-0-0 in the JobSet's Service <name>,
 *     the index its Indexed Job's, as above;
 *   PyTorchJob: worker 0 is the Master, <name>-master-0 (the operator's
 *     Service); the operator sets the rank variables and where the Master
 *     is itself, so berth gives only what it does not;
 *   MPIJob: mpirun gives each rank its own (OMPI_COMM_WORLD_RANK, ...):
 *     berth gives the number of workers.
 */
static void worker_vars(ctx *c, onode *env)
{
	obuild *b = &c->b;
	const char *name = c->run->name;
	char host[300];
	switch (c->wl) {
	case WL_PLAIN:
		return;
	case WL_MPIJOB: {
		onode *e = o_map(b, env, NULL);
		o_str(b, e, "name", "BERTH_WORKERS");
		o_strf(b, e, "value", "%lld", (long long)plan_workers(c->s));
		return;
	}
	case WL_PYTORCHJOB:
		snprintf(host, sizeof(host), "%s-master-0", name);
		break;
	case WL_JOBSET:
		snprintf(host, sizeof(host), "%s-" JOBSET_REPLICATED_JOB "-0-0.%s", name, name);
		break;
	case WL_INDEXED:
	case WL_NO_MPI:
		snprintf(host, sizeof(host), "%s-0.%s", name, name);
		break;
	}
	worker_env we[WORKER_ENV_MAX];
	int nwe = plan_worker_env(c->s, host, NULL, b->arena, we);
	if (nwe < 0)
		b->failed = 1;
	for (int i = 0; i < nwe; i++) {
		if (c->wl == WL_PYTORCHJOB && (we[i].rank || set_by_training_operator(we[i].name)))
			continue;
		onode *e = o_map(b, env, NULL);
		o_str(b, e, "name", we[i].name);
		if (we[i].rank)
			o_str(b, o_map(b, o_map(b, e, "valueFrom"), "fieldRef"), "fieldPath",
			      "metadata.annotations['batch.kubernetes.io/job-completion-index']");
		else
			o_str(b, e, "value", we[i].value);
	}
}

static void container(ctx *c, onode *containers)
{
	const berth_spec *s = c->s;
	obuild *b = &c->b;
	onode *k = o_map(b, containers, NULL);
	/* the Training Operator finds a PyTorchJob's container by its name */
	bool pytorch = c->role == ROLE_MASTER || c->role == ROLE_WORKER;
	o_str(b, k, "name", pytorch ? PYTORCH_CONTAINER : s->function.name.s ? s->function.name.s : "main");
	o_str(b, k, "image", s->function.image.s);
	if (s->function.image_pull_policy.s)
		o_str(b, k, "imagePullPolicy", s->function.image_pull_policy.s);
	if (c->role == ROLE_LAUNCHER)
		mpirun(c, k);
	else if (c->role == ROLE_MPI_WORKER)
		sshd(c, k);
	else {
		if (s->function.command.n) {
			onode *cmd = o_seq(b, k, "command");
			for (size_t i = 0; i < s->function.command.n; i++)
				o_str(b, cmd, NULL, s->function.command.items[i].s);
		}
		if (s->args.n) {
			onode *args = o_seq(b, k, "args");
			for (size_t i = 0; i < s->args.n; i++)
				o_str(b, args, NULL, s->args.items[i].s);
		}
	}
	onode *env = o_seq(b, k, "env");
	for (size_t i = 0; i < s->envs.n; i++) {
		onode *e = o_map(b, env, NULL);
		o_str(b, e, "name", s->envs.items[i].key.s);
		o_str(b, e, "value", s->envs.items[i].value.s);
	}
	onode *e = o_map(b, env, NULL);
	o_str(b, e, "name", "BERTH_RUN_ID");
	o_str(b, e, "value", c->run->id);
	worker_vars(c, env);
	if (s->inputs) {
		const char *json = render_inputs_json(s->inputs, b->arena);
		e = o_map(b, env, NULL);
		o_str(b, e, "name", "BERTH_INPUTS");
		if (!json)
			b->failed = 1;
		else
			o_str(b, e, "value", json);
	}
	/* each secret as the variable its name makes (MY_SECRET_KEY for
	 * my-secret-key: envFrom would give the name as is, which a shell cannot
	 * read), from its key of the run's Secret; a secret mounted as a file
	 * only is no variable */
	for (size_t i = 0; i < s->secrets.n; i++) {
		char name[BERTH_ENV_NAME_MAX];
		e = o_map(b, env, NULL);
		o_str(b, e, "name", berth_arena_strdup(b->arena, berth_env_name_from(s->secrets.items[i].s,
										     name, sizeof(name))));
		onode *ref = o_map(b, o_map(b, e, "valueFrom"), "secretKeyRef");
		o_str(b, ref, "name", c->run->name);
		o_str(b, ref, "key", s->secrets.items[i].s);
	}
	if (pytorch) {
		/* MASTER_PORT: the Training Operator reads it from the Master's port of this name */
		onode *pm = o_map(b, o_seq(b, k, "ports"), NULL);
		o_str(b, pm, "name", PYTORCH_PORT_NAME);
		o_int(b, pm, "containerPort", s->dist_port.set ? s->dist_port.v : DIST_PORT_DEFAULT);
	}
	if (s->action == BERTH_ACTION_SERVE) {
		onode *ports = NULL;
		for (size_t i = 0; i < s->nports; i++) {
			const berth_port *p = &s->ports[i];
			if (!p->target_port.set && p->target_port_name.s)
				continue; /* a named port must be declared by the image's owner */
			if (!ports)
				ports = o_seq(b, k, "ports");
			onode *pm = o_map(b, ports, NULL);
			if (p->name.s)
				o_str(b, pm, "name", p->name.s);
			o_int(b, pm, "containerPort", p->target_port.set ? p->target_port.v : p->port.v);
			if (p->protocol.s)
				o_str(b, pm, "protocol", p->protocol.s);
		}
		if (!s->nports) {
			onode *pm = o_map(b, o_seq(b, k, "ports"), NULL);
			o_str(b, pm, "name", "http");
			o_int(b, pm, "containerPort", 8080);
		}
	}
	resources(c, k);
	if (s->nvolumes) {
		onode *mounts = o_seq(b, k, "volumeMounts");
		for (size_t i = 0; i < s->nvolumes; i++) {
			onode *m = o_map(b, mounts, NULL);
			o_str(b, m, "name", s->volumes[i].name.s);
			o_str(b, m, "mountPath", s->volumes[i].mount_path.s);
			if (s->volumes[i].type == BERTH_VOLUME_SECRET || s->volumes[i].type == BERTH_VOLUME_CONFIG_MAP)
				o_bool(b, m, "readOnly", 1);
		}
	}
	onode *sc = o_map(b, k, "securityContext");
	o_bool(b, sc, "allowPrivilegeEscalation", 0);
	o_str(b, o_seq(b, o_map(b, sc, "capabilities"), "drop"), NULL, "ALL");
	o_bool(b, sc, "privileged", 0);
}

static void volumes(ctx *c, onode *pod)
{
	const berth_spec *s = c->s;
	obuild *b = &c->b;
	if (!s->nvolumes)
		return;
	onode *vols = o_seq(b, pod, "volumes");
	for (size_t i = 0; i < s->nvolumes; i++) {
		const berth_volume *v = &s->volumes[i];
		onode *o = o_map(b, vols, NULL), *x;
		o_str(b, o, "name", v->name.s);
		switch (v->type) {
		case BERTH_VOLUME_PVC:
			if (!c->run->pvc_per_pod) {
				o_strf(b, o_map(b, o, "persistentVolumeClaim"), "claimName", "%s-%s", c->run->name,
				       v->name.s);
				break;
			}
			x = o_map(b, o_map(b, o_map(b, o, "ephemeral"), "volumeClaimTemplate"), "spec");
			o_str(b, o_seq(b, x, "accessModes"), NULL,
			      v->access_mode.s ? v->access_mode.s : "ReadWriteOnce");
			if (v->storage_class.s)
				o_str(b, x, "storageClassName", v->storage_class.s);
			o_qty(b, o_map(b, o_map(b, x, "resources"), "requests"), "storage", &v->size.q);
			break;
		case BERTH_VOLUME_EMPTY_DIR:
			x = o_map(b, o, "emptyDir");
			if (v->medium.s && *v->medium.s)
				o_str(b, x, "medium", v->medium.s);
			if (v->size.set)
				o_qty(b, x, "sizeLimit", &v->size.q);
			break;
		case BERTH_VOLUME_CONFIG_MAP:
			o_str(b, o_map(b, o, "configMap"), "name", v->ref.s);
			break;
		case BERTH_VOLUME_SECRET:
			/* a platform secret: a key of the run's Secret, as a file */
			x = o_map(b, o, "secret");
			o_str(b, x, "secretName", c->run->name);
			x = o_map(b, o_seq(b, x, "items"), NULL);
			o_str(b, x, "key", v->ref.s);
			o_str(b, x, "path", v->ref.s);
			break;
		case BERTH_VOLUME_SHARED:
			o_str(b, o_map(b, o, "persistentVolumeClaim"), "claimName", v->ref.s);
			break;
		}
	}
}

void render_toleration(obuild *b, onode *o, const berth_toleration *t)
{
	if (t->key.s)
		o_str(b, o, "key", t->key.s);
	if (t->op.s)
		o_str(b, o, "operator", t->op.s);
	if (t->value.s)
		o_str(b, o, "value", t->value.s);
	if (t->effect.s)
		o_str(b, o, "effect", t->effect.s);
	if (t->seconds.set)
		o_int(b, o, "tolerationSeconds", t->seconds.v);
}

onode *render_affinity(obuild *b, onode *parent, const berth_run *run)
{
	const berth_spec *s = &run->spec;
	if (!s->affinity && !run->spot_operator)
		return NULL;
	onode *a = s->affinity ? o_copy(b, parent, "affinity", s->affinity, int_keys)
			       : o_map(b, parent, "affinity");
	if (!run->spot_operator || !a)
		return a;
	onode *na = o_get(a, "nodeAffinity");
	if (!na)
		na = o_map(b, a, "nodeAffinity");
	onode *req = o_get(na, "requiredDuringSchedulingIgnoredDuringExecution");
	if (!req)
		req = o_map(b, na, "requiredDuringSchedulingIgnoredDuringExecution");
	onode *terms = o_get(req, "nodeSelectorTerms");
	if (!terms)
		terms = o_seq(b, req, "nodeSelectorTerms");
	if (terms && !terms->first)
		o_map(b, terms, NULL);
	/* ANDed into every term: each term is one way to be scheduled */
	for (onode *t = terms ? terms->first : NULL; t; t = t->next) {
		onode *exprs = o_get(t, "matchExpressions");
		if (!exprs)
			exprs = o_seq(b, t, "matchExpressions");
		for (size_t i = 0; i < run->nspot_labels; i++) {
			onode *e = o_map(b, exprs, NULL);
			o_str(b, e, "key", run->spot_labels[i].key.s);
			o_str(b, e, "operator", run->spot_operator);
			o_str(b, o_seq(b, e, "values"), NULL, run->spot_labels[i].value.s);
		}
	}
	return a;
}

static void pod_template(ctx *c, onode *parent)
{
	const berth_spec *s = c->s;
	const berth_run *r = c->run;
	obuild *b = &c->b;
	onode *t = o_map(b, parent, "template");
	labels(c, o_map(b, t, "metadata"));
	onode *pod = o_map(b, t, "spec");
	/* an Indexed Job's workers are <name>-<index>.<name>: the headless
	 * Service (a JobSet sets its pods' subdomain itself) */
	if (c->wl == WL_INDEXED)
		o_str(b, pod, "subdomain", r->name);
	/* an operator's replicas have theirs in their replica spec */
	if ((s->action == BERTH_ACTION_JOB || s->action == BERTH_ACTION_CRONJOB) && c->role == ROLE_POD)
		o_str(b, pod, "restartPolicy", "Never");
	if (r->priority_class_name)
		o_str(b, pod, "priorityClassName", r->priority_class_name);
	onode *sc = o_map(b, pod, "securityContext");
	if (s->run_as_user.set)
		o_int(b, sc, "runAsUser", s->run_as_user.v);
	if (s->run_as_group.set)
		o_int(b, sc, "runAsGroup", s->run_as_group.v);
	if (s->fs_group.set)
		o_int(b, sc, "fsGroup", s->fs_group.v);
	if (r->run_as_non_root)
		o_bool(b, sc, "runAsNonRoot", 1);
	onode *sp = o_map(b, sc, "seccompProfile");
	if (strncmp(r->seccomp_profile, "localhost/", 10) == 0) {
		o_str(b, sp, "type", "Localhost");
		o_str(b, sp, "localhostProfile", r->seccomp_profile + 10);
	} else {
		o_str(b, sp, "type", r->seccomp_profile);
	}
	if (s->node_selector.n) {
		onode *ns = o_map(b, pod, "nodeSelector");
		for (size_t i = 0; i < s->node_selector.n; i++)
			o_str(b, ns, s->node_selector.items[i].key.s, s->node_selector.items[i].value.s);
	}
	render_affinity(b, pod, r);
	if (s->ntolerations) {
		onode *ts = o_seq(b, pod, "tolerations");
		for (size_t i = 0; i < s->ntolerations; i++)
			render_toleration(b, o_map(b, ts, NULL), &s->tolerations[i]);
	}
	container(c, o_seq(b, pod, "containers"));
	volumes(c, pod);
}

/* A workload queued through Kueue (kueue.local_queue): its LocalQueue in a
 * label of its metadata md, and made suspended (suspend in spec, a Job's,
 * a JobSet's, or an operator's runPolicy); Kueue resumes it once the queue
 * admits it, all its pods at once. */
static void queued(ctx *c, onode *md, onode *spec)
{
	if (!c->run->local_queue)
		return;
	o_str(&c->b, o_get(md, "labels"), KUEUE_QUEUE_LABEL, c->run->local_queue);
	o_bool(&c->b, spec, "suspend", 1);
}

static void job_spec(ctx *c, onode *spec)
{
	obuild *b = &c->b;
	/* a distributed job: one pod a worker, each with its index, all at once;
	 * with no retries, one failing worker fails the Job */
	if (plan_distributed(c->s)) {
		o_str(b, spec, "completionMode", "Indexed");
		o_int(b, spec, "completions", plan_workers(c->s));
		o_int(b, spec, "parallelism", plan_workers(c->s));
	}
	o_int(b, spec, "backoffLimit", c->s->retries.set ? c->s->retries.v : 0);
	if (c->s->timeout.set)
		o_int(b, spec, "activeDeadlineSeconds", c->s->timeout.v);
	/* the cluster's TTL controller removes a finished Job and its pods; the
	 * run's record stays in berth (a JobSet's Job goes with its JobSet) */
	if (c->run->ttl_after_finished >= 0 && c->wl != WL_JOBSET)
		o_int(b, spec, "ttlSecondsAfterFinished", c->run->ttl_after_finished);
	/* a pod evicted for preemption (spot reclaim, priority) is not a failure:
	 * the Job starts another instead of counting it against backoffLimit */
	onode *rule = o_map(b, o_seq(b, o_map(b, spec, "podFailurePolicy"), "rules"), NULL);
	o_str(b, rule, "action", "Ignore");
	onode *cond = o_map(b, o_seq(b, rule, "onPodConditions"), NULL);
	o_str(b, cond, "type", "DisruptionTarget");
	o_str(b, cond, "status", "True"); /* required by the API schema, though documented as a default */
	pod_template(c, spec);
}

/* ---- the operators' workloads (docs/distributed.md, "Operators") -------------------- */

/* A JobSet of one replicated Job, the Indexed Job berth renders without an
 * operator; the JobSet makes the headless Service of its pods itself
 * (network: <name>-worker-0-<index>.<name>, published before they are
 * ready), and fails when its Job fails (no failurePolicy: no restarts). */
static void jobset_spec(ctx *c, onode *md, onode *spec)
{
	obuild *b = &c->b;
	queued(c, md, spec);
	if (c->run->ttl_after_finished >= 0)
		o_int(b, spec, "ttlSecondsAfterFinished", c->run->ttl_after_finished);
	onode *net = o_map(b, spec, "network");
	o_bool(b, net, "enableDNSHostnames", 1);
	o_str(b, net, "subdomain", c->run->name);
	o_bool(b, net, "publishNotReadyAddresses", 1);
	onode *rj = o_map(b, o_seq(b, spec, "replicatedJobs"), NULL);
	o_str(b, rj, "name", JOBSET_REPLICATED_JOB);
	o_int(b, rj, "replicas", 1);
	onode *jt = o_map(b, rj, "template");
	labels(c, o_map(b, jt, "metadata"));
	job_spec(c, o_map(b, jt, "spec"));
}

/* The runPolicy of a PyTorchJob or an MPIJob (the operators' RunPolicy):
 * what a Job has in its spec. */
static void run_policy(ctx *c, onode *md, onode *spec, const char *clean)
{
	obuild *b = &c->b;
	onode *rp = o_map(b, spec, "runPolicy");
	o_str(b, rp, "cleanPodPolicy", clean);
	o_int(b, rp, "backoffLimit", c->s->retries.set ? c->s->retries.v : 0);
	if (c->s->timeout.set)
		o_int(b, rp, "activeDeadlineSeconds", c->s->timeout.v);
	if (c->run->ttl_after_finished >= 0)
		o_int(b, rp, "ttlSecondsAfterFinished", c->run->ttl_after_finished);
	queued(c, md, rp);
}

/* One replica type of an operator's job, with its pod template. */
static void replica(ctx *c, onode *specs, const char *type, int64_t n, const char *restart, role r)
{
	obuild *b = &c->b;
	onode *rs = o_map(b, specs, type);
	o_int(b, rs, "replicas", n);
	o_str(b, rs, "restartPolicy", restart);
	c->role = r;
	pod_template(c, rs);
	c->role = ROLE_POD;
}

/* With retries, a failed replica's container is started again in place
 * (the operators count those restarts against backoffLimit); without, the
 * first failure fails the job. */
static const char *restart_policy(const ctx *c)
{
	return c->s->retries.set && c->s->retries.v > 0 ? "OnFailure" : "Never";
}

/* A PyTorchJob: worker 0 is the Master, the others Workers; the Training
 * Operator tells each its rank and where the Master is. nprocPerNode is
 * torchrun's processes in each worker (1 for env: one process a worker). */
static void pytorchjob_spec(ctx *c, onode *md, onode *spec)
{
	obuild *b = &c->b;
	const berth_spec *s = c->s;
	int64_t n = plan_workers(s);
	bool torchrun = s->launcher.s && !strcmp(s->launcher.s, "torchrun");
	run_policy(c, md, spec, "None"); /* the pods stay, for their logs, until the run goes */
	o_strf(b, spec, "nprocPerNode", "%lld",
	       (long long)(torchrun && s->procs_per_worker.set ? s->procs_per_worker.v : 1));
	onode *specs = o_map(b, spec, "pytorchReplicaSpecs");
	replica(c, specs, "Master", 1, restart_policy(c), ROLE_MASTER);
	if (n > 1)
		replica(c, specs, "Worker", n - 1, restart_policy(c), ROLE_WORKER);
}

/* An MPIJob: the workers run sshd, and the Launcher mpirun, which starts
 * procs_per_worker ranks on each (slotsPerWorker); the MPI Operator gives it
 * the hostfile and the SSH keys. Once the Launcher has ended, the workers'
 * pods that still run go (cleanPodPolicy Running): their sshd would run for
 * ever. */
static void mpijob_spec(ctx *c, onode *md, onode *spec)
{
	obuild *b = &c->b;
	const berth_spec *s = c->s;
	o_int(b, spec, "slotsPerWorker", s->procs_per_worker.set ? s->procs_per_worker.v : 1);
	run_policy(c, md, spec, "Running");
	o_str(b, spec, "sshAuthMountPath", c->run->ssh_auth_mount_path);
	onode *specs = o_map(b, spec, "mpiReplicaSpecs");
	replica(c, specs, "Launcher", 1, restart_policy(c), ROLE_LAUNCHER);
	replica(c, specs, "Worker", plan_workers(s), "Never", ROLE_MPI_WORKER);
}

/* A run that cannot be rendered for a cluster, at the spec's value v (its
 * origin's file and position). */
static int refuse(const berth_run *run, berth_error **err, uint8_t origin, berth_pos pos, const char *path,
		  const char *fmt, ...) BERTH_PRINTF(6, 7);
static int refuse(const berth_run *run, berth_error **err, uint8_t origin, berth_pos pos, const char *path,
		  const char *fmt, ...)
{
	const char *file = origin <= BERTH_ORIGIN_RULE ? run->origin_file[origin] : NULL;
	berth_where w = {file ? file : run->spec.file ? run->spec.file : "<run>", file ? pos.line : 0,
			 file ? pos.column : 0, path};
	va_list ap;
	va_start(ap, fmt);
	int rc = berth_problem_vadd(err, BERTH_EPOLICY, BERTH_ERROR, &w, fmt, ap);
	va_end(ap);
	return rc;
}

/* What a cluster cannot run: launcher mpi without the MPI Operator (berth
 * cannot start MPI ranks across pods: that takes the operator's launcher),
 * and an MPIJob with no command for mpirun to start. */
static int renderable(const berth_run *run, plan_workload wl, berth_error **err)
{
	const berth_spec *s = &run->spec;
	if (wl == WL_NO_MPI)
		return refuse(run, err, s->launcher.origin, s->launcher.pos, "distributed.launcher",
			      "launcher \"mpi\" needs the MPI Operator on a cluster: berth cannot start MPI "
			      "ranks across pods without its launcher, and the policy's distributed.operator is "
			      "%s; set distributed.operator: kubeflow in the policy (with the MPI Operator "
			      "installed), or use launcher torchrun, env or jax",
			      run->dist_operator ? run->dist_operator : "none");
	if (wl == WL_MPIJOB && !s->function.command.n)
		return refuse(run, err, s->launcher.origin, s->launcher.pos, "distributed.launcher",
			      "launcher \"mpi\" on a cluster needs function.command: the program mpirun "
			      "starts in every rank (the workers run sshd, not the image's entrypoint)");
	return 0;
}

/* ---- writing ---------------------------------------------------------------------- */

#define JSON_LIST_HEAD "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"List\",\n  \"items\": ["

static void put(berth_render *r, const onode *o)
{
	if (!o)
		return;
	if (r->fmt == BERTH_FORMAT_YAML) {
		if (r->objects)
			berth_buf_puts(&r->out.buf, "---\n");
		emit_yaml(&r->out.buf, o);
	} else {
		/* the List's head goes before its first item: the output is made in
		 * one pass */
		berth_buf_puts(&r->out.buf, r->objects ? ",\n    " : JSON_LIST_HEAD "\n    ");
		emit_json(&r->out.buf, o, 4, 1);
	}
	r->objects++;
}

static const char *workload_kind(berth_action a, const char **api)
{
	switch (a) {
	case BERTH_ACTION_SERVE:
	case BERTH_ACTION_DEPLOY:
		*api = "apps/v1";
		return "Deployment";
	case BERTH_ACTION_CRONJOB:
		*api = "batch/v1";
		return "CronJob";
	case BERTH_ACTION_JOB:
		break;
	}
	*api = "batch/v1";
	return "Job";
}

int render_objects(berth_arena *arena, const berth_run *run, onode **objs, size_t *nobjs,
		   berth_error **err)
{
	ctx c;
	size_t n = 0;
	memset(&c, 0, sizeof(c));
	c.run = run;
	c.s = &run->spec;
	*nobjs = 0;
	if (!run->spec.function.image.s)
		return berth_fail(err, BERTH_EMISSING, "%s: function.image: a run needs an image to render",
				  run->spec.file ? run->spec.file : "<run>");
	c.b.arena = arena;
	c.wl = plan_workload_of(run);
	int rc = renderable(run, c.wl, err);
	if (rc)
		return rc;
	c.workload_kind = plan_workload_kind(c.wl, &c.workload_api);
	if (!c.workload_kind || c.wl == WL_INDEXED)
		c.workload_kind = workload_kind(c.s->action, &c.workload_api);
	const berth_spec *s = c.s;
	obuild *b = &c.b;

	/* the run's Secret: the secrets it gets as variables, and those it mounts */
	berth_buf keys = BERTH_BUF_INIT;
	for (size_t i = 0; i < s->secrets.n; i++) {
		if (keys.len)
			berth_buf_append(&keys, ",", 1);
		berth_buf_puts(&keys, s->secrets.items[i].s);
	}
	for (size_t i = 0; i < s->nvolumes; i++) {
		const char *ref = s->volumes[i].ref.s;
		if (s->volumes[i].type != BERTH_VOLUME_SECRET || !ref)
			continue;
		bool listed = false; /* a key once, though it is a variable and a file */
		for (size_t j = 0; j < s->secrets.n && !listed; j++)
			listed = !strcmp(s->secrets.items[j].s, ref);
		for (size_t j = 0; j < i && !listed; j++)
			listed = s->volumes[j].type == BERTH_VOLUME_SECRET && !strcmp(s->volumes[j].ref.s, ref);
		if (!listed && keys.len)
			berth_buf_append(&keys, ",", 1);
		if (!listed)
			berth_buf_puts(&keys, ref);
	}
	if (keys.len || keys.failed) {
		onode *o = object(&c, "v1", "Secret", run->name, 1);
		onode *ann = o_map(b, o_get(o, "metadata"), "annotations");
		o_str(b, ann, "berth.dev/secret-keys", keys.data ? berth_arena_strdup(b->arena, keys.data) : NULL);
		o_str(b, ann, "berth.dev/secret-values", "set by berth at submission, never rendered");
		if (keys.failed)
			b->failed = 1;
		o_str(b, o, "type", "Opaque");
		objs[n++] = o;
	}
	berth_buf_release(&keys);
	for (size_t i = 0; i < s->nvolumes && !run->pvc_per_pod && n < RENDER_MAX_OBJECTS - 4; i++) {
		const berth_volume *v = &s->volumes[i];
		if (v->type != BERTH_VOLUME_PVC)
			continue;
		char name[320];
		berth_join(name, sizeof(name), run->name, "-", v->name.s, (char *)NULL);
		onode *o = object(&c, "v1", "PersistentVolumeClaim", berth_arena_strdup(b->arena, name), 1);
		onode *spec = o_map(b, o, "spec");
		o_str(b, o_seq(b, spec, "accessModes"), NULL, v->access_mode.s ? v->access_mode.s : "ReadWriteOnce");
		if (v->storage_class.s)
			o_str(b, spec, "storageClassName", v->storage_class.s);
		o_qty(b, o_map(b, o_map(b, spec, "resources"), "requests"), "storage", &v->size.q);
		objs[n++] = o;
	}
	if (c.wl == WL_INDEXED) {
		/* the workers' names: headless, and there before they are ready
		 * (they find each other to become ready); owned by the Job */
		onode *o = object(&c, "v1", "Service", run->name, 1);
		onode *sp = o_map(b, o, "spec");
		o_str(b, sp, "clusterIP", "None");
		o_bool(b, sp, "publishNotReadyAddresses", 1);
		o_str(b, o_map(b, sp, "selector"), "berth.dev/run", run->id);
		onode *pm = o_map(b, o_seq(b, sp, "ports"), NULL);
		o_str(b, pm, "name", "rendezvous");
		o_int(b, pm, "port", s->dist_port.set ? s->dist_port.v : DIST_PORT_DEFAULT);
		objs[n++] = o;
	}
	onode *w = object(&c, c.workload_api, c.workload_kind, run->name, 0);
	onode *spec = o_map(b, w, "spec");
	int hpa = s->min_replicas.set && s->max_replicas.set;
	switch (s->action) {
	case BERTH_ACTION_JOB:
		if (c.wl == WL_JOBSET)
			jobset_spec(&c, o_get(w, "metadata"), spec);
		else if (c.wl == WL_PYTORCHJOB)
			pytorchjob_spec(&c, o_get(w, "metadata"), spec);
		else if (c.wl == WL_MPIJOB)
			mpijob_spec(&c, o_get(w, "metadata"), spec);
		else {
			queued(&c, o_get(w, "metadata"), spec);
			job_spec(&c, spec);
		}
		break;
	case BERTH_ACTION_CRONJOB: {
		o_str(b, spec, "schedule", s->schedule.s);
		o_str(b, spec, "concurrencyPolicy", "Forbid");
		onode *jt = o_map(b, spec, "jobTemplate"), *jmd = o_map(b, jt, "metadata"),
		      *js = o_map(b, jt, "spec");
		labels(&c, jmd);
		queued(&c, jmd, js);
		job_spec(&c, js);
		break;
	}
	case BERTH_ACTION_SERVE:
	case BERTH_ACTION_DEPLOY:
		/* under an HPA the replica count is the autoscaler's, not the manifest's */
		if (!hpa)
			o_int(b, spec, "replicas", s->replicas.set ? s->replicas.v : 1);
		o_str(b, o_map(b, o_map(b, spec, "selector"), "matchLabels"), "berth.dev/run", run->id);
		pod_template(&c, spec);
		break;
	}
	objs[n++] = w;
	if (s->action == BERTH_ACTION_SERVE) {
		onode *o = object(&c, "v1", "Service", run->name, 0);
		onode *sp = o_map(b, o, "spec");
		o_str(b, sp, "type", s->service_type.s ? s->service_type.s : "ClusterIP");
		o_str(b, o_map(b, sp, "selector"), "berth.dev/run", run->id);
		onode *ports = o_seq(b, sp, "ports");
		for (size_t i = 0; i < s->nports; i++) {
			const berth_port *p = &s->ports[i];
			onode *pm = o_map(b, ports, NULL);
			if (p->name.s)
				o_str(b, pm, "name", p->name.s);
			o_int(b, pm, "port", p->port.v);
			if (p->target_port.set)
				o_int(b, pm, "targetPort", p->target_port.v);
			else if (p->target_port_name.s)
				o_str(b, pm, "targetPort", p->target_port_name.s);
			if (p->protocol.s)
				o_str(b, pm, "protocol", p->protocol.s);
			if (p->node_port.set)
				o_int(b, pm, "nodePort", p->node_port.v);
		}
		if (!s->nports) {
			onode *pm = o_map(b, ports, NULL);
			o_str(b, pm, "name", "http");
			o_int(b, pm, "port", 8080);
			o_int(b, pm, "targetPort", 8080);
		}
		objs[n++] = o;
	}
	if (hpa && (s->action == BERTH_ACTION_SERVE || s->action == BERTH_ACTION_DEPLOY)) {
		onode *o = object(&c, "autoscaling/v2", "HorizontalPodAutoscaler", run->name, 0);
		onode *sp = o_map(b, o, "spec");
		onode *ref = o_map(b, sp, "scaleTargetRef");
		o_str(b, ref, "apiVersion", "apps/v1");
		o_str(b, ref, "kind", "Deployment");
		o_str(b, ref, "name", run->name);
		o_int(b, sp, "minReplicas", s->min_replicas.v);
		o_int(b, sp, "maxReplicas", s->max_replicas.v);
		onode *m = o_map(b, o_seq(b, sp, "metrics"), NULL);
		o_str(b, m, "type", "Resource");
		onode *res = o_map(b, m, "resource");
		o_str(b, res, "name", "cpu");
		onode *tg = o_map(b, res, "target");
		o_str(b, tg, "type", "Utilization");
		o_int(b, tg, "averageUtilization", 80);
		objs[n++] = o;
	}
	if (b->failed)
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	*nobjs = n;
	return 0;
}

/* Takes the ownerReferences out of an object's metadata. Rendered for a
 * person or for GitOps, an owner has no uid yet and the API refuses an
 * empty one: the run's objects are kept together by their berth.dev/run
 * label instead (the backend adds the owner, with its uid, when it applies
 * them). */
static void drop_owner_refs(onode *obj)
{
	o_take(o_get(obj, "metadata"), "ownerReferences");
}

int berth_render_add(berth_render *rd, const berth_run *run, berth_error **err)
{
	onode *objs[RENDER_MAX_OBJECTS];
	size_t n;
	if (!rd->arena && !(rd->arena = berth_arena_new()))
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	berth_arena_mark mark = berth_arena_save(rd->arena);
	int rc = render_objects(rd->arena, run, objs, &n, err);
	for (size_t i = 0; i < n; i++) {
		drop_owner_refs(objs[i]);
		put(rd, objs[i]);
	}
	berth_arena_release(rd->arena, mark);
	if (rc)
		return rc;
	int failed = rd->out.buf.failed; /* sticky: the spool could not take the bytes */
	if (failed)
		return berth_fail(err, failed == -BERTH_ETOOBIG ? BERTH_ETOOBIG : BERTH_ENOMEM,
				  "the rendered output is too large");
	return 0;
}

berth_render *berth_render_new(berth_format fmt)
{
	berth_render *r = berth_calloc(1, sizeof(*r));
	if (r) {
		r->fmt = fmt;
		r->out = (spool)SPOOL_INIT;
	}
	return r;
}

/* The output's end: the JSON List's close (or, with no item, the whole
 * empty List); 0, or the output's sticky failure. */
static int close_output(berth_render *r)
{
	if (r->fmt == BERTH_FORMAT_JSON)
		berth_buf_puts(&r->out.buf, r->objects ? "\n  ]\n}\n" : JSON_LIST_HEAD "]\n}\n");
	else
		berth_buf_puts(&r->out.buf, ""); /* an empty output is "" too */
	r->objects = 0;
	return r->out.buf.failed;
}

int berth_render_finish(berth_render *r, char **data, size_t *len, berth_error **err)
{
	*data = NULL;
	*len = 0;
	if (close_output(r) || spool_detach(&r->out, data, len) < 0) {
		spool_release(&r->out);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	return 0;
}

int berth_render_write(berth_render *r, int fd, berth_error **err)
{
	if (close_output(r)) {
		spool_release(&r->out);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	if (spool_write(&r->out, fd) < 0)
		return berth_fail(err, BERTH_EIO, "cannot write the output: %s", strerror(errno));
	return 0;
}

void berth_render_free(berth_render *r)
{
	if (!r)
		return;
	spool_release(&r->out);
	berth_arena_free(r->arena);
	free(r);
}
