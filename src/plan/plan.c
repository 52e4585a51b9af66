/*
 * plan.c - berth_run_plan: the layers of a run merged (merge.c), then the
 * policy's rules in the order of runspec.md section 3: the GPU rule,
 * mem_limit_ratio, preemption mode, priority class, security, limits,
 * quotas. A rule that derives a value records why (a note); a rule that
 * refuses names the field, the value, the rule and where the rule is
 * written. Every refusal is reported; none stops the others.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <unistd.h>

#include "plan/merge.h"
#include "plan/distributed.h"
#include "plan/workload.h"
#include "plan/plan.h"
#include "base/names.h"
#include "plan/policy_internal.h"
#include "spec/spec_internal.h"

typedef struct plan {
	berth_run *run;
	const berth_policy *pol;
	const berth_spec *spec;
	const berth_run_opts *opts;
	berth_error **err;
	size_t errors;
	size_t notes_cap;
	int nomem;
	int no_notes; /* opts->no_notes: NOTE neither formats nor keeps them */
} plan;

#define Q(q) qfmt(&(q), (char[BERTH_QUANTITY_STR_MAX]){0})
/* a ratio is a number, not a quantity: "1.1" as written, never "1100m" */
#define RATIO(r) berth_qty_written(&(r), (char[BERTH_QUANTITY_STR_MAX]){0})

static const char *qfmt(const berth_quantity *q, char *buf)
{
	berth_quantity_format(q, buf, BERTH_QUANTITY_STR_MAX);
	return buf;
}

/* "config.yaml:4:20", or "built-in" for a rule with no file. */
static const char *where(const char *file, berth_pos pos, char *buf, size_t len)
{
	/* in every warning of an overriding profile, one a run: without printf */
	char tail[24], *d = tail + sizeof(tail);
	uint32_t v = pos.column;
	*--d = '\0';
	do
		*--d = (char)('0' + v % 10);
	while (v /= 10);
	*--d = ':';
	v = pos.line;
	do
		*--d = (char)('0' + v % 10);
	while (v /= 10);
	*--d = ':';
	return path_make(buf, len, file ? file : "built-in", SIZE_MAX, file && pos.line ? d : "");
}
#define WHERE(file, pos) where(file, pos, (char[512]){0}, 512)
#define POLICY_AT(p, pos) WHERE((p)->pol->file, pos)
/* a rule's key, as the run's project's overlay names it where it writes it */
#define RULE_KEY(p, at, key) berth_policy_key((p)->pol, at, key, (char[160]){0}, 160)

static void vproblem(plan *p, berth_severity sev, berth_code code, uint8_t origin, berth_pos pos,
		     const char *path, const char *fmt, va_list ap)
{
	const char *file = origin <= BERTH_ORIGIN_RULE ? p->run->origin_file[origin] : NULL;
	berth_where w = {file ? file : (p->spec->file ? p->spec->file : "<run>"),
			 file ? pos.line : 0, file ? pos.column : 0, path};
	if (sev == BERTH_ERROR)
		p->errors++;
	berth_problem_vadd(p->err, code, sev, &w, fmt, ap);
}

static void BERTH_PRINTF(6, 7) refuse(plan *p, berth_code code, uint8_t origin, berth_pos pos,
				      const char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vproblem(p, BERTH_ERROR, code, origin, pos, path, fmt, ap);
	va_end(ap);
}

static void BERTH_PRINTF(5, 6) warn(plan *p, uint8_t origin, berth_pos pos, const char *path,
				    const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vproblem(p, BERTH_WARNING, BERTH_EPOLICY, origin, pos, path, fmt, ap);
	va_end(ap);
}

/* A note, when the run keeps them: its arguments are not even formatted
 * otherwise. */
#define NOTE(p, ...)                                  \
	do {                                          \
		if (!(p)->no_notes)                   \
			note((p), __VA_ARGS__);        \
	} while (0)

static void BERTH_PRINTF(3, 4) note(plan *p, const char *path, const char *fmt, ...)
{
	berth_run *r = p->run;
	char text[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (r->nnotes == p->notes_cap) {
		size_t cap = p->notes_cap ? p->notes_cap * 2 : 8;
		berth_note *n = berth_arena_alloc(r->arena, cap * sizeof(*n));
		if (!n) {
			p->nomem = 1;
			return;
		}
		if (r->nnotes)
			memcpy(n, r->notes, r->nnotes * sizeof(*n));
		r->notes = n;
		p->notes_cap = cap;
	}
	berth_note *n = &r->notes[r->nnotes];
	n->path = berth_arena_strdup(r->arena, path);
	n->text = berth_arena_strdup(r->arena, text);
	if (!n->path || !n->text)
		p->nomem = 1;
	else
		r->nnotes++;
}

static const char *origin_names[] = {
	[BERTH_ORIGIN_UNSET] = "unset",     [BERTH_ORIGIN_BUILTIN] = "built-in",
	[BERTH_ORIGIN_DEFAULT] = "policy default", [BERTH_ORIGIN_PROJECT] = "project default",
	[BERTH_ORIGIN_FUNCTION] = "function",
	[BERTH_ORIGIN_RUN] = "run spec",    [BERTH_ORIGIN_PROFILE] = "profile",
	[BERTH_ORIGIN_RULE] = "policy rule",
};

const char *berth_origin_name(berth_origin o)
{
	return (size_t)o < BERTH_ARRAY_SIZE(origin_names) ? origin_names[o] : "?";
}

/* "the run spec", "profile 1xa100", "the policy's defaults" for messages
 * (one in every warning of an overriding profile, one a run: no printf). */
static const char *who(plan *p, uint8_t origin, char *buf, size_t len)
{
	switch (origin) {
	case BERTH_ORIGIN_PROFILE:
		return berth_join(buf, len, "profile \"", p->run->profile ? p->run->profile->id.s : "?", "\"",
				  (char *)NULL);
	case BERTH_ORIGIN_DEFAULT:
		return "the policy's defaults";
	case BERTH_ORIGIN_PROJECT:
		return berth_join(buf, len, "projects.", p->pol->project ? p->pol->project : "?", ".defaults",
				  (char *)NULL);
	case BERTH_ORIGIN_RUN:
		return "the run spec";
	case BERTH_ORIGIN_FUNCTION:
		return "the function";
	default:
		return berth_origin_name((berth_origin)origin);
	}
}
#define WHO(p, o) who(p, o, (char[128]){0}, 128)

/* ---- run ids ------------------------------------------------------------------- */

const char *berth_run_id_check(const char *id)
{
	size_t n = strlen(id);
	if (n < 1 || n > 24)
		return "must be 1 to 24 characters long";
	for (size_t i = 0; i < n; i++)
		if (!((id[i] >= 'a' && id[i] <= 'z') || (id[i] >= '0' && id[i] <= '9') ||
		      (id[i] == '-' && i > 0 && i + 1 < n)))
			return "must consist of lowercase letters, digits and inner '-'";
	return NULL;
}

void berth_run_id_nth(char *buf, size_t len, const char *base, size_t index)
{
	/* once for every run of a stream: without printf, the same text */
	if (index == 0) {
		path_make(buf, len, base, SIZE_MAX, "");
		return;
	}
	char head[25], tail[24], *d = tail + sizeof(tail);
	size_t n = strnlen(base, 24), v = index + 1;
	memcpy(head, base, n);
	head[n] = '\0';
	*--d = '\0';
	do
		*--d = (char)('0' + v % 10);
	while (v /= 10);
	*--d = '-';
	path_make(buf, len, head, SIZE_MAX, d);
}

int berth_run_id_new(char *buf, size_t len)
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char rnd[10];
	if (len < 11)
		return -BERTH_EARG;
	ssize_t n;
	while ((n = getrandom(rnd, sizeof(rnd), GRND_NONBLOCK)) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(rnd)) {
		/* no getrandom (ENOSYS), or the pool not ready at boot (EAGAIN) */
		int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
		n = fd < 0 ? -1 : read(fd, rnd, sizeof(rnd));
		if (fd >= 0)
			close(fd);
		if (n != (ssize_t)sizeof(rnd))
			return -BERTH_EIO;
	}
	/* a letter first, so that the id also makes a valid DNS-1035 name */
	buf[0] = alphabet[rnd[0] % 26];
	for (size_t i = 1; i < sizeof(rnd); i++)
		buf[i] = alphabet[rnd[i] % 36];
	buf[sizeof(rnd)] = '\0';
	return 0;
}

/* ---- layers ---------------------------------------------------------------------- */

static berth_str builtin_str(const char *s)
{
	berth_str v = {s, {0, 0}, 0};
	return v;
}

/*
 * A value of the user's that the profile replaced (merge_profile): kept for
 * explain, and named by a warning at the user's value, the profile's place
 * second. The seeds: "the requirements defined in the template have priority
 * over those defined by the user and are not overwritten".
 */
static void overridden(void *ctx, const berth_override *o)
{
	plan *p = ctx;
	berth_run *r = p->run;
	berth_override *all = berth_arena_alloc(r->arena, (r->noverrides + 1) * sizeof(*all));
	if (!all) {
		p->nomem = 1;
		return;
	}
	if (r->noverrides)
		memcpy(all, r->overrides, r->noverrides * sizeof(*all));
	all[r->noverrides++] = *o;
	r->overrides = all;
	const char *id = r->profile->id.s;
	const char *at = WHERE(r->profile->file, o->by_pos);
	/* one warning a run or more: made without printf */
	char what[320], text[1024];
	if (o->ident)
		berth_join(what, sizeof(what), "toleration \"", o->ident, "\"", (char *)NULL);
	else if (!strncmp(o->path, "volumes.", 8))
		berth_join(what, sizeof(what), "volume \"", o->path + 8, "\"", (char *)NULL);
	else
		berth_join(what, sizeof(what), o->value ? o->value : "the value", (char *)NULL);
	if (strcmp(o->by, o->path))
		berth_join(text, sizeof(text), what, " from ", WHO(p, o->origin), " is overridden by profile \"",
			   id, "\", which decides ", o->by, " whole, requests and limits (", at, ")",
			   (char *)NULL);
	else
		berth_join(text, sizeof(text), what, " from ", WHO(p, o->origin), " is overridden by profile \"",
			   id, "\" (", at, ")", (char *)NULL);
	warn(p, o->origin, o->pos, o->path, "%s", text);
}

/*
 * The volumes of a user's layer (the function's, the run spec's) named as
 * one the platform mounts on every run (defaults.volumes, a project's): a
 * volume is merged by name, so it would replace the platform's silently.
 */
static void auto_volume_names(plan *p, const berth_spec *layer, uint8_t origin)
{
	const berth_run *r = p->run;
	char path[64];
	for (size_t i = 0; i < layer->nvolumes; i++) {
		const berth_volume *u = &layer->volumes[i];
		for (size_t j = 0; j < r->spec.nvolumes; j++) {
			const berth_volume *a = &r->spec.volumes[j];
			if ((a->origin != BERTH_ORIGIN_DEFAULT && a->origin != BERTH_ORIGIN_PROJECT) ||
			    !u->name.s || !a->name.s || strcmp(u->name.s, a->name.s))
				continue;
			snprintf(path, sizeof(path), "volumes[%zu].name", i);
			refuse(p, BERTH_EDUPLICATE, origin, u->name.pos, path,
			       "volume \"%s\" of %s has the name of a volume the platform mounts on every run "
			       "(%s.volumes, %s): name it otherwise, or write volume_mode: manual to mount only "
			       "the volumes listed", u->name.s, WHO(p, origin),
			       a->origin == BERTH_ORIGIN_PROJECT ? WHO(p, a->origin) : "defaults",
			       POLICY_AT(p, a->pos));
		}
	}
}

static int merge_layers(plan *p)
{
	berth_run *r = p->run;
	const berth_spec *s = p->spec;
	berth_spec builtin, fn, run;

	memset(&builtin, 0, sizeof(builtin));
	builtin.project = builtin_str("default");
	builtin.action_name = builtin_str("job");
	builtin.preemption_name = builtin_str("prevent");
	builtin.retries.set = true;

	memset(&fn, 0, sizeof(fn));
	const berth_spec *reg = p->opts ? p->opts->function : NULL;
	if (reg) {
		/* a registered function: its whole spec is the function layer, but
		 * for the project and run name, which are the run's own */
		fn = *reg;
		memset(&fn.project, 0, sizeof(fn.project));
		memset(&fn.name, 0, sizeof(fn.name));
		memset(&fn.function.ref, 0, sizeof(fn.function.ref));
		if (!fn.args.set)
			fn.args = reg->function.args;
	} else {
		fn.function = s->function;
		fn.args = s->function.args;
	}

	run = *s;
	memset(&run.function, 0, sizeof(run.function));
	run.function.ref = s->function.ref;

	/* the policy's defaults, then the project's (projects.NAME.defaults);
	 * their volumes are mounted unless the run (or its function) says
	 * volume_mode manual or none */
	const berth_policy *pol = p->pol;
	berth_spec dflt = pol->base ? pol->base->defaults : pol->defaults, proj = pol->project_defaults;
	const berth_str *mode = s->volume_mode.s ? &s->volume_mode : reg ? &reg->volume_mode : NULL;
	if (mode && mode->s && strcmp(mode->s, "auto"))
		dflt.nvolumes = proj.nvolumes = 0;

	int ret = merge_layer(r->arena, &r->spec, &builtin, BERTH_ORIGIN_BUILTIN);
	if (!ret)
		ret = merge_layer(r->arena, &r->spec, &dflt, BERTH_ORIGIN_DEFAULT);
	if (!ret && pol->base)
		ret = merge_layer(r->arena, &r->spec, &proj, BERTH_ORIGIN_PROJECT);
	auto_volume_names(p, &fn, BERTH_ORIGIN_FUNCTION);
	auto_volume_names(p, &run, BERTH_ORIGIN_RUN);
	if (!ret)
		ret = merge_layer(r->arena, &r->spec, &fn, BERTH_ORIGIN_FUNCTION);
	if (!ret)
		ret = merge_layer(r->arena, &r->spec, &run, BERTH_ORIGIN_RUN);
	if (!ret && r->profile)
		ret = merge_profile(r->arena, &r->spec, &r->profile->spec, overridden, p);
	r->spec.file = s->file;
	r->spec.doc = s->doc;
	r->spec.pos = s->pos;
	r->spec.function.ref = s->function.ref;
	r->spec.function.pos = s->function.pos;
	r->spec.function.set = s->function.set;
	for (int a = 0; a <= BERTH_ACTION_CRONJOB; a++)
		if (strcmp(r->spec.action_name.s, berth_action_name((berth_action)a)) == 0)
			r->spec.action = (berth_action)a;
	for (int m = BERTH_PREEMPTION_ALLOW; m <= BERTH_PREEMPTION_NONE; m++)
		if (strcmp(r->spec.preemption_name.s, berth_preemption_name((berth_preemption)m)) == 0)
			r->spec.preemption_mode = (berth_preemption)m;
	return ret;
}

/* ---- rules across layers ------------------------------------------------------------ */

static void layer_report(void *ctx, uint8_t origin, berth_pos pos, const char *path, berth_code code,
			 const char *msg)
{
	refuse(ctx, code, origin, pos, path, "%s", msg);
}

/*
 * What ties fields of different layers (a function's min_replicas, the run's
 * action), on the merged spec: a document that is a whole run was checked
 * alone when it was read, and passes here too. A function's template planned
 * alone is not: a run that names it may give the action or the other half of
 * a pair, and each run is checked for what it has.
 */
static void check_layers(plan *p)
{
	if (!p->opts || !p->opts->template)
		berth_spec_check_layers(&p->run->spec, layer_report, p);
}

/* ---- the profile ------------------------------------------------------------------ */

static void find_profile(plan *p)
{
	const berth_str *id = &p->spec->profile;
	if (!id->s)
		return;
	if ((p->run->profile = berth_policy_profile_find(p->pol, id->s)))
		return;
	/* the profiles of the run's project: another project's are unknown here */
	berth_buf known = BERTH_BUF_INIT;
	const char *names[64];
	size_t n = 0, all = berth_policy_profile_count(p->pol);
	for (size_t i = 0; i < all; i++) {
		const char *pid = berth_policy_profile_get(p->pol, i)->id.s;
		berth_buf_printf(&known, "%s%s", i ? ", " : "", pid);
		if (n < 64)
			names[n++] = pid;
	}
	const char *hint = berth_suggest(id->s, names, n);
	if (!all)
		refuse(p, BERTH_EPOLICY, BERTH_ORIGIN_RUN, id->pos, "profile",
		       "unknown profile \"%s\": the platform defines no profiles (%s)", id->s,
		       p->pol->file ? p->pol->file : "built-in policy");
	else if (hint)
		refuse(p, BERTH_EPOLICY, BERTH_ORIGIN_RUN, id->pos, "profile",
		       "unknown profile \"%s\"; did you mean \"%s\"? (known: %s)", id->s, hint,
		       known.data ? known.data : "");
	else
		refuse(p, BERTH_EPOLICY, BERTH_ORIGIN_RUN, id->pos, "profile",
		       "unknown profile \"%s\" (known: %s)", id->s, known.data ? known.data : "");
	berth_buf_release(&known);
}

/* ---- fields locked to profiles ----------------------------------------------------- */

/* The locked keys spec sets, as layer origin: refused, once per key. A
 * registered function is checked too, against the policy in force now: one
 * registered before a key was locked sets it no more. */
static void check_locked_in(plan *p, const berth_spec *spec, uint8_t origin)
{
	const berth_strlist *locked = &p->pol->security.user_fields;
	for (size_t i = 0; i < locked->n; i++) {
		const berth_str *key = &locked->items[i];
		size_t klen = strlen(key->s);
		for (size_t f = 0; f < merge_nfields; f++) {
			const merge_field *mf = &merge_fields[f];
			berth_pos pos;
			if (strncmp(mf->path, key->s, klen) || (mf->path[klen] && mf->path[klen] != '.'))
				continue;
			if (!merge_field_get(spec, mf, &pos, NULL))
				continue;
			if (origin == BERTH_ORIGIN_FUNCTION)
				refuse(p, BERTH_EPOLICY, origin, pos, mf->path,
				       "%s is set by function \"%s\", but the platform reserves it to "
				       "profiles (security.user_fields, %s); register the function again "
				       "without it, or choose a profile that sets it", key->s,
				       p->spec->function.ref.s ? p->spec->function.ref.s : "?",
				       POLICY_AT(p, key->pos));
			else
				refuse(p, BERTH_EPOLICY, origin, pos, mf->path,
				       "%s is set by the run spec, but the platform reserves it to profiles "
				       "(security.user_fields, %s); choose a profile that sets it",
				       key->s, POLICY_AT(p, key->pos));
			break; /* once per locked key */
		}
	}
}

static void check_locked(plan *p)
{
	check_locked_in(p, p->spec, BERTH_ORIGIN_RUN);
	if (p->opts && p->opts->function)
		check_locked_in(p, p->opts->function, BERTH_ORIGIN_FUNCTION);
}

/* ---- names --------------------------------------------------------------------------- */

/* A name of the policy with {project} the run's project (a namespace, a
 * LocalQueue per project), into *out; refused at the run's project when the
 * result is not a valid what (check). Without {project}, *out is the name. */
static void project_name(plan *p, const berth_str *v, const char *key, const char *what,
			 const char *(*check)(const char *), const char **out)
{
	berth_run *r = p->run;
	const char *project = r->spec.project.s ? r->spec.project.s : "default";
	berth_buf b = BERTH_BUF_INIT;
	if (!berth_policy_project_name(v->s, project, &b))
		return;
	char *name = b.failed ? NULL : berth_arena_strdup(r->arena, b.data);
	berth_buf_release(&b);
	if (!name) {
		p->nomem = 1;
		return;
	}
	const char *why = check(name);
	if (why) {
		refuse(p, BERTH_EPOLICY, r->spec.project.s ? r->spec.project.origin : BERTH_ORIGIN_BUILTIN,
		       r->spec.project.pos, "project",
		       "%s \"%s\" (the policy's %s \"%s\" for this project) is not a valid %s: it %s (%s)",
		       what, name, key, v->s, what, why, POLICY_AT(p, v->pos));
		return;
	}
	*out = name;
}

/* The policy's namespace and LocalQueue for the run's project. The queue
 * is the policy's: a run's own label for it is refused. */
static void project_names(plan *p)
{
	berth_run *r = p->run;
	const berth_str *q = &p->pol->kueue.local_queue;
	project_name(p, &p->pol->namespace, "namespace", "namespace", berth_check_dns_label, &r->namespace);
	project_name(p, q, "kueue.local_queue", "LocalQueue", berth_check_labelled_name, &r->local_queue);
	for (size_t i = 0; q->s && i < r->spec.labels.n; i++) {
		const berth_kv *kv = &r->spec.labels.items[i];
		if (!strcmp(kv->key.s, KUEUE_QUEUE_LABEL))
			refuse(p, BERTH_EPOLICY, kv->origin, kv->key.pos, "labels",
			       "%s is set by the policy (kueue.local_queue, %s): a run does not pick its "
			       "queue", KUEUE_QUEUE_LABEL, POLICY_AT(p, q->pos));
	}
}

static void make_names(plan *p)
{
	berth_run *r = p->run;
	const char *base = r->spec.name.s ? r->spec.name.s
			   : r->spec.function.name.s ? r->spec.function.name.s : "run";
	/* a CronJob's name is at most 52 characters (its Jobs add 11); a
	 * distributed Job's workers are <name>-<index> as host names (at most
	 * 63), an operator's <name>-worker-<index> and the like */
	size_t max = r->spec.action == BERTH_ACTION_CRONJOB ? 52 : 63;
	bool distributed = plan_distributed(&r->spec);
	if (distributed)
		max -= plan_worker_suffix(plan_workload_of(r), plan_workers(&r->spec));
	size_t idlen = strlen(r->id), blen = strlen(base);
	if (blen + 1 + idlen > max) {
		blen = max - 1 - idlen;
		while (blen > 1 && base[blen - 1] == '-')
			blen--;
		NOTE(p, "name", "\"%s\" is cut to %zu characters so that \"<name>-<run id>\" fits in %zu",
		     base, blen, max);
	}
	char *b = berth_arena_strndup(r->arena, base, blen);
	char *n = berth_arena_alloc(r->arena, blen + idlen + 2);
	if (!b || !n) {
		p->nomem = 1;
		return;
	}
	memcpy(n, b, blen);
	n[blen] = '-';
	memcpy(n + blen + 1, r->id, idlen + 1);
	r->base_name = b;
	r->name = n;
	if ((r->spec.action == BERTH_ACTION_SERVE || distributed) && !(n[0] >= 'a' && n[0] <= 'z')) {
		uint8_t o = r->spec.name.s ? r->spec.name.origin : r->spec.function.name.origin;
		berth_pos pos = r->spec.name.s ? r->spec.name.pos : r->spec.function.name.pos;
		refuse(p, BERTH_EINVALID, o, pos, r->spec.name.s ? "name" : "function.name",
		       "\"%s\" must start with a letter for %s: it names a Service", base,
		       distributed ? "a distributed job (its workers find each other through it)" : "action serve");
	}
}

/* ---- resources ----------------------------------------------------------------------- */

typedef struct res_desc {
	const char *name;
	size_t off;
} res_desc;

static const res_desc resources[] = {
	{"cpu", offsetof(berth_resources, cpu)},
	{"mem", offsetof(berth_resources, mem)},
	{"gpu", offsetof(berth_resources, gpu)},
	{"disk", offsetof(berth_resources, disk)},
};

#define RES(r, i) ((berth_resource *)((char *)&(r)->spec.resources + resources[i].off))

/*
 * requests: default, the policy's default request (MLRun's with_limits sets
 * a limit and keeps its service's default request): that request when it is
 * at most the limit, else the limit; with none, as Kubernetes does, the limit.
 */
static void default_request(plan *p, size_t i, berth_resource *res)
{
	const berth_resource *d = (const berth_resource *)((const char *)&p->pol->defaults.resources +
							   resources[i].off);
	const berth_qty *dr = &d->requests;
	char path[64];
	uint8_t by = res->requests.origin;
	berth_join(path, sizeof(path), "resources.", resources[i].name, ".requests", (char *)NULL);
	if (dr->set && (!res->limits.set || berth_quantity_cmp(&dr->q, &res->limits.q) <= 0)) {
		res->requests = *dr;
		/* the project's defaults, merged over the policy's, mark their own */
		res->requests.origin = dr->origin == BERTH_ORIGIN_PROJECT ? BERTH_ORIGIN_PROJECT : BERTH_ORIGIN_DEFAULT;
		NOTE(p, path, "the policy's default request (requests: default, from %s)", WHO(p, by));
	} else if (res->limits.set) {
		if (dr->set)
			NOTE(p, path, "= limits %s (requests: default, from %s: the policy's default %s, %s, "
			     "is more than the limit)", Q(res->limits.q), WHO(p, by), Q(dr->q),
			     POLICY_AT(p, dr->pos));
		else
			NOTE(p, path, "= limits %s (requests: default, from %s: the policy has no default "
			     "request, and a limit given without a request is the request)", Q(res->limits.q),
			     WHO(p, by));
		res->requests = res->limits;
		res->requests.at = BERTH_QTY_AT(&res->limits);
		res->requests.origin = BERTH_ORIGIN_RULE;
	} else {
		memset(&res->requests, 0, sizeof(res->requests)); /* nothing to ask */
	}
}

/*
 * A GPU is a limit, and its request is the same. For the other resources,
 * as Kubernetes does, a limit given without a request is the request; a
 * request that comes only from the policy's defaults does not count, unless
 * a higher layer asks for it (requests: default).
 */
static void derive_resources(plan *p)
{
	berth_run *r = p->run;
	char path[64];
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(resources); i++) {
		berth_resource *res = RES(r, i);
		int gpu = i == 2;
		if (res->requests.from_default) {
			default_request(p, i, res);
			continue;
		}
		if (!res->limits.set ||
		    (res->requests.set && berth_quantity_cmp(&res->requests.q, &res->limits.q) == 0))
			continue;
		/* what the run asks is its limit (plan_asked, the one place that
		 * decides it), or its request comes only from the policy's defaults */
		const char *which;
		bool asks_limit = plan_asked(res, gpu, &which) == &res->limits;
		bool default_request = res->requests.set && res->requests.origin <= BERTH_ORIGIN_PROJECT;
		if (!gpu && (res->limits.origin <= BERTH_ORIGIN_PROJECT || !(asks_limit || default_request)))
			continue;
		const char *why = gpu ? "a GPU is a limit; its request is the same"
				      : "a limit given without a request is the request";
		berth_join(path, sizeof(path), "resources.", resources[i].name, ".requests", (char *)NULL);
		if (res->requests.set)
			NOTE(p, path, "= limits %s from %s (%s; %s from %s does not apply)", Q(res->limits.q),
			     WHO(p, res->limits.origin), why, Q(res->requests.q), WHO(p, res->requests.origin));
		else
			NOTE(p, path, "= limits %s (%s)", Q(res->limits.q), why);
		res->requests = res->limits;
		res->requests.at = BERTH_QTY_AT(&res->limits);
		res->requests.origin = BERTH_ORIGIN_RULE;
	}
}

/* ---- demand -------------------------------------------------------------------------- */

const berth_qty *plan_asked(const berth_resource *r, int gpu, const char **which)
{
	const berth_qty *first = gpu ? &r->limits : &r->requests;
	const berth_qty *second = gpu ? &r->requests : &r->limits;
	if (first->set) {
		*which = gpu ? "limits" : "requests";
		return first;
	}
	if (second->set) {
		*which = gpu ? "requests" : "limits";
		return second;
	}
	*which = gpu ? "limits" : "requests";
	return NULL;
}

static int64_t nonneg(int64_t v)
{
	return v < 0 ? 0 : v;
}

void plan_demand_of(plan_demand *out, const berth_run *run)
{
	const berth_resources *r = &run->spec.resources;
	const char *which;
	const berth_qty *q;
	memset(out, 0, sizeof(*out));
	if ((q = plan_asked(&r->cpu, 0, &which)) != NULL)
		out->cpu_milli = nonneg(berth_quantity_milli(&q->q));
	if ((q = plan_asked(&r->mem, 0, &which)) != NULL)
		out->mem = nonneg(berth_quantity_value(&q->q));
	if ((q = plan_asked(&r->gpu, 1, &which)) != NULL)
		out->gpus = nonneg(berth_quantity_value(&q->q));
	if ((q = plan_asked(&r->disk, 0, &which)) != NULL)
		out->disk = nonneg(berth_quantity_value(&q->q));
	/* a distributed job's workers start together: the run asks for all of them
	 * (past what an int64 holds: the most it holds, which nothing has) */
	out->workers = plan_workers(&run->spec);
	int64_t *dims[] = {&out->cpu_milli, &out->mem, &out->gpus, &out->disk};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(dims); i++)
		if (__builtin_mul_overflow(*dims[i], out->workers, dims[i]))
			*dims[i] = INT64_MAX;
}

static void gpu_rule(plan *p)
{
	berth_run *r = p->run;
	berth_resources *res = &r->spec.resources;
	const berth_policy *pol = p->pol;
	if (!res->gpu.limits.set || berth_quantity_sign(&res->gpu.limits.q) <= 0)
		return;
	if (!res->gpu_type.s) {
		if (pol->gpu.default_type.s) {
			res->gpu_type = pol->gpu.default_type;
			res->gpu_type.origin = BERTH_ORIGIN_DEFAULT;
		} else {
			res->gpu_type = builtin_str("nvidia.com/gpu");
			res->gpu_type.origin = BERTH_ORIGIN_BUILTIN;
		}
	}
	r->gpu_resource = res->gpu_type.s;
	if (!pol->gpu.types.n)
		return;
	berth_buf allowed = BERTH_BUF_INIT;
	for (size_t i = 0; i < pol->gpu.types.n; i++) {
		if (strcmp(pol->gpu.types.items[i].s, res->gpu_type.s) == 0) {
			berth_buf_release(&allowed);
			return;
		}
		berth_buf_printf(&allowed, "%s%s", i ? ", " : "", pol->gpu.types.items[i].s);
	}
	refuse(p, BERTH_EPOLICY, res->gpu_type.origin, res->gpu_type.pos, "resources.gpu_type",
	       "GPU type \"%s\" is not offered by the platform (gpu.types, %s: %s)", res->gpu_type.s,
	       POLICY_AT(p, pol->gpu.types.pos), allowed.data ? allowed.data : "");
	berth_buf_release(&allowed);
}

int berth_mem_limit_by_ratio(const berth_quantity *request, const berth_quantity *ratio,
			     berth_quantity *limit)
{
	berth_quantity lim;
	if (berth_quantity_mul(&lim, request, ratio) < 0 || berth_quantity_value(&lim) > INT64_MAX - (1 << 20))
		return -1;
	/* rounded up to a whole MiB (binary requests) or byte: memory is not fractional */
	int64_t u = request->format == BERTH_QUANTITY_BINARY_SI ? 1 << 20 : 1;
	*limit = berth_quantity_from_int((berth_quantity_value(&lim) + u - 1) / u * u, request->format);
	return 0;
}

static void mem_ratio_rule(plan *p)
{
	berth_run *r = p->run;
	berth_resource *mem = &r->spec.resources.mem;
	const berth_qty *ratio = &p->pol->mem_limit_ratio;
	if (!ratio->set || !mem->requests.set || mem->limits.set)
		return;
	berth_quantity lim;
	int binary = mem->requests.q.format == BERTH_QUANTITY_BINARY_SI;
	if (berth_mem_limit_by_ratio(&mem->requests.q, &ratio->q, &lim)) {
		refuse(p, BERTH_ERANGE, BERTH_QTY_AT(&mem->requests), mem->requests.pos, "resources.mem.requests",
		       "%s x mem_limit_ratio is too large", Q(mem->requests.q));
		return;
	}
	mem->limits.q = lim;
	mem->limits.set = true;
	mem->limits.pos = ratio->pos;
	mem->limits.origin = BERTH_ORIGIN_RULE;
	/* a derived limit is capped at the platform's: it never refuses a request the
	 * platform allows (a request over it is refused as the user's, by limits_rule) */
	const berth_qty *cap = &p->pol->limits.mem;
	if (cap->set && berth_quantity_cmp(&lim, &cap->q) > 0 &&
	    berth_quantity_cmp(&mem->requests.q, &cap->q) <= 0) {
		mem->limits.q = cap->q;
		NOTE(p, "resources.mem.limits", "= requests %s x defaults.mem_limit_ratio %s (%s) = %s, capped "
		     "at the platform's limit of %s (%s, %s)", Q(mem->requests.q), Q(ratio->q),
		     POLICY_AT(p, ratio->pos), Q(lim), Q(cap->q), RULE_KEY(p, &cap->pos, "limits.mem"),
		     POLICY_AT(p, cap->pos));
		return;
	}
	NOTE(p, "resources.mem.limits", "= requests %s x defaults.mem_limit_ratio %s, rounded up to a whole %s (%s)",
	     Q(mem->requests.q), RATIO(*ratio), binary ? "Mi" : "byte", POLICY_AT(p, ratio->pos));
}

/* requests above limits once layers are merged (each layer alone was checked) */
static void check_requests(plan *p)
{
	berth_run *r = p->run;
	char path[64];
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(resources); i++) {
		berth_resource *res = RES(r, i);
		if (!res->requests.set || !res->limits.set ||
		    berth_quantity_cmp(&res->requests.q, &res->limits.q) <= 0)
			continue;
		berth_join(path, sizeof(path), "resources.", resources[i].name, ".requests", (char *)NULL);
		refuse(p, BERTH_EINVALID, BERTH_QTY_AT(&res->requests), res->requests.pos, path,
		       "requests %s from %s are more than limits %s from %s (%s)", Q(res->requests.q),
		       WHO(p, res->requests.origin), Q(res->limits.q), WHO(p, res->limits.origin),
		       WHERE(r->origin_file[res->limits.origin], res->limits.pos));
	}
}

/* ---- volumes ---------------------------------------------------------------------- */

static void volume_rules(plan *p)
{
	berth_run *r = p->run;
	const berth_policy *pol = p->pol;
	char path[96];
	bool none = r->spec.volume_mode.s && !strcmp(r->spec.volume_mode.s, "none");
	for (size_t i = 0; i < r->spec.nvolumes; i++) {
		berth_volume *v = &r->spec.volumes[i];
		if (v->type == BERTH_VOLUME_PVC && !v->storage_class.s && pol->storage.default_class.s) {
			v->storage_class = pol->storage.default_class;
			v->storage_class.origin = BERTH_ORIGIN_DEFAULT;
			path_make(path, sizeof(path), "volumes", i, ".spec.storage_class");
			NOTE(p, path, "= storage.default_class %s (%s)", pol->storage.default_class.s,
			     POLICY_AT(p, pol->storage.default_class.pos));
		}
		if (none && (v->origin == BERTH_ORIGIN_RUN || v->origin == BERTH_ORIGIN_FUNCTION)) {
			snprintf(path, sizeof(path), "volumes[%zu]", i);
			refuse(p, BERTH_EINVALID, v->origin, v->pos, path,
			       "volume \"%s\" of %s is listed, but volume_mode is none (%s, %s): a run with "
			       "none mounts no volume; write volume_mode: manual to mount only the volumes "
			       "listed", v->name.s, WHO(p, v->origin), WHO(p, r->spec.volume_mode.origin),
			       WHERE(r->origin_file[r->spec.volume_mode.origin], r->spec.volume_mode.pos));
		}
		for (size_t j = 0; j < i; j++) {
			const berth_volume *w = &r->spec.volumes[j];
			bool automount = w->origin == BERTH_ORIGIN_DEFAULT || w->origin == BERTH_ORIGIN_PROJECT;
			if (v->mount_path.s && w->mount_path.s && strcmp(v->mount_path.s, w->mount_path.s) == 0) {
				snprintf(path, sizeof(path), "volumes[%zu].mount_path", i);
				refuse(p, BERTH_EDUPLICATE, v->origin, v->mount_path.pos, path,
				       "mount path \"%s\" of volume \"%s\" (%s) is also the mount path of "
				       "volume \"%s\" (%s)%s%s%s", v->mount_path.s, v->name.s, WHO(p, v->origin),
				       w->name.s, WHO(p, w->origin),
				       automount ? ", which the platform mounts on every run (" : "",
				       automount ? POLICY_AT(p, w->pos) : "",
				       automount ? "): mount it elsewhere, or write volume_mode: manual to mount "
						   "only the volumes listed" : "");
			}
		}
		/* the usage of pre-existing volumes is blocked (seeds 001, 004): a user's,
		 * that a run or its function names; the platform's own (its defaults, a
		 * project's, a profile's) are what the admin mounts, as the contract's
		 * example of a project's shared volume under block_existing_volumes */
		if (pol->security.block_existing_volumes.v &&
		    (v->origin == BERTH_ORIGIN_RUN || v->origin == BERTH_ORIGIN_FUNCTION) &&
		    (v->type == BERTH_VOLUME_CONFIG_MAP || v->type == BERTH_VOLUME_SHARED)) {
			snprintf(path, sizeof(path), "volumes[%zu]", i);
			refuse(p, BERTH_EPOLICY, v->origin, v->pos, path,
			       "volume \"%s\" mounts the existing %s \"%s\", and the platform blocks "
			       "pre-existing volumes (security.block_existing_volumes, %s)",
			       v->name.s, v->type == BERTH_VOLUME_SHARED ? "PVC" : "ConfigMap",
			       v->ref.s ? v->ref.s : "", POLICY_AT(p, pol->security.block_existing_volumes.pos));
		}
		if (pol->limits.volume_size.set && v->size.set &&
		    berth_quantity_cmp(&v->size.q, &pol->limits.volume_size.q) > 0) {
			snprintf(path, sizeof(path), "volumes[%zu].spec.size", i);
			refuse(p, BERTH_EPOLICY, v->origin, v->size.pos, path,
			       "%s is over the platform's limit of %s (%s, %s)", Q(v->size.q),
			       Q(pol->limits.volume_size.q),
			       RULE_KEY(p, &pol->limits.volume_size.pos, "limits.volume_size"),
			       POLICY_AT(p, pol->limits.volume_size.pos));
		}
	}
	r->pvc_per_pod = pol->storage.pvc_lifecycle.s && strcmp(pol->storage.pvc_lifecycle.s, "pod") == 0;
}

/* ---- preemption ---------------------------------------------------------------------- */

static int spot_toleration(plan *p, const berth_toleration *t)
{
	for (size_t i = 0; i < p->pol->preemptible.ntolerations; i++) {
		const berth_toleration *s = &p->pol->preemptible.tolerations[i];
		if (strcmp(t->key.s ? t->key.s : "", s->key.s ? s->key.s : "") == 0 &&
		    strcmp(t->effect.s ? t->effect.s : "", s->effect.s ? s->effect.s : "") == 0)
			return 1;
	}
	return 0;
}

static void preemption_rule(plan *p)
{
	berth_run *r = p->run;
	berth_spec *s = &r->spec;
	const berth_spec *pre = &p->pol->preemptible;
	berth_preemption mode = s->preemption_mode;
	const char *mname = berth_preemption_name(mode);
	char path[64];

	if (mode == BERTH_PREEMPTION_NONE || (!pre->node_selector.n && !pre->ntolerations))
		return;
	if (mode == BERTH_PREEMPTION_PREVENT) {
		size_t k = 0;
		for (size_t i = 0; i < s->ntolerations; i++) {
			const berth_toleration *t = &s->tolerations[i];
			if (!spot_toleration(p, t)) {
				s->tolerations[k++] = *t;
				continue;
			}
			snprintf(path, sizeof(path), "tolerations[%zu]", i);
			warn(p, t->origin, t->pos, path,
			     "toleration of spot nodes (key \"%s\") removed: preemption_mode is prevent",
			     t->key.s ? t->key.s : "");
			NOTE(p, "tolerations", "toleration \"%s\" from %s removed (preemption_mode prevent)",
			     t->key.s ? t->key.s : "", WHO(p, t->origin));
		}
		s->ntolerations = k;
		k = 0;
		for (size_t i = 0; i < s->node_selector.n; i++) {
			const berth_kv *kv = &s->node_selector.items[i];
			size_t j = 0;
			while (j < pre->node_selector.n && strcmp(pre->node_selector.items[j].key.s, kv->key.s))
				j++;
			if (j == pre->node_selector.n) {
				s->node_selector.items[k++] = *kv;
				continue;
			}
			warn(p, kv->origin, kv->pos, "node_selector",
			     "\"%s\" selects spot nodes and is removed: preemption_mode is prevent", kv->key.s);
			NOTE(p, "node_selector", "\"%s\" from %s removed (preemption_mode prevent)", kv->key.s,
			     WHO(p, kv->origin));
		}
		s->node_selector.n = k;
		r->spot_operator = "NotIn";
	} else {
		/* allow and constrain: the spot tolerations are added */
		for (size_t i = 0; i < pre->ntolerations; i++) {
			berth_toleration *t = NULL;
			for (size_t j = 0; j < s->ntolerations && !t; j++)
				if (spot_toleration(p, &s->tolerations[j]) &&
				    strcmp(s->tolerations[j].key.s ? s->tolerations[j].key.s : "",
					   pre->tolerations[i].key.s ? pre->tolerations[i].key.s : "") == 0)
					t = &s->tolerations[j];
			if (t)
				continue;
			berth_toleration *all = berth_arena_alloc(r->arena, (s->ntolerations + 1) * sizeof(*all));
			if (!all) {
				p->nomem = 1;
				return;
			}
			if (s->ntolerations)
				memcpy(all, s->tolerations, s->ntolerations * sizeof(*all));
			all[s->ntolerations] = pre->tolerations[i];
			all[s->ntolerations].origin = BERTH_ORIGIN_RULE;
			s->tolerations = all;
			path_make(path, sizeof(path), "tolerations", s->ntolerations++, "");
			NOTE(p, path, "added: preemption_mode %s tolerates spot nodes (preemptible_nodes, %s)",
			     mname, POLICY_AT(p, pre->tolerations[i].pos));
		}
		if (mode == BERTH_PREEMPTION_CONSTRAIN)
			r->spot_operator = "In";
	}
	if (r->spot_operator && pre->node_selector.n) {
		r->spot_labels = pre->node_selector.items;
		r->nspot_labels = pre->node_selector.n;
		NOTE(p, "affinity", "every required node affinity term gets %s %s (preemption_mode %s, "
		     "preemptible_nodes, %s)", pre->node_selector.items[0].key.s, r->spot_operator, mname,
		     POLICY_AT(p, pre->node_selector.pos));
	} else {
		r->spot_operator = NULL;
	}
}

/* ---- priority --------------------------------------------------------------------------- */

/* "high, medium, low": the names of priority_classes, into b (and names, up to 64). */
static size_t class_names(const berth_kvlist *classes, berth_buf *b, const char **names)
{
	size_t n = 0;
	for (size_t i = 0; i < classes->n; i++) {
		berth_buf_printf(b, "%s%s", i ? ", " : "", classes->items[i].key.s);
		if (n < 64)
			names[n++] = classes->items[i].key.s;
	}
	return n;
}

/*
 * The name of priority_classes the run's priority_class is: as written, else
 * in another case ("High" for high, as MLRun writes its classes) when every
 * name it can be maps to one class; NULL when none, or (refused) several.
 */
static const berth_kv *find_class(plan *p, const berth_str *pc, const berth_kvlist *classes)
{
	const berth_kv *found = NULL;
	for (size_t i = 0; i < classes->n; i++)
		if (strcmp(classes->items[i].key.s, pc->s) == 0)
			return &classes->items[i];
	for (size_t i = 0; i < classes->n; i++) {
		const berth_kv *kv = &classes->items[i];
		if (strcasecmp(kv->key.s, pc->s))
			continue;
		if (found && strcmp(found->value.s, kv->value.s)) {
			refuse(p, BERTH_EPOLICY, pc->origin, pc->pos, "priority_class",
			       "priority class \"%s\" is both \"%s\" and \"%s\" of priority_classes (%s), "
			       "which are different classes: write it as one of them", pc->s,
			       found->key.s, kv->key.s, POLICY_AT(p, classes->pos));
			return NULL;
		}
		found = kv;
	}
	return found;
}

static void priority_rule(plan *p)
{
	berth_run *r = p->run;
	const berth_str *pc = &r->spec.priority_class;
	const berth_kvlist *classes = &p->pol->priority_classes;
	if (!pc->s)
		return;
	size_t errors = p->errors;
	const berth_kv *found = find_class(p, pc, classes);
	if (found) {
		r->priority_class_name = found->value.s;
		if (p->no_notes) /* the key below is for the notes only */
			return;
		/* a class of the project's overlay is named as its own */
		char key[128];
		snprintf(key, sizeof(key), "%s%s%s", found->origin == BERTH_ORIGIN_PROJECT ? "projects." : "",
			 found->origin == BERTH_ORIGIN_PROJECT ? p->pol->project : "",
			 found->origin == BERTH_ORIGIN_PROJECT ? ".priority_classes" : "priority_classes");
		if (strcmp(found->key.s, pc->s))
			NOTE(p, "priority_class", "PriorityClass %s (\"%s\" of %s, %s)", found->value.s,
			     found->key.s, key, POLICY_AT(p, found->pos));
		else if (strcmp(found->value.s, pc->s))
			NOTE(p, "priority_class", "PriorityClass %s (%s, %s)", found->value.s, key,
			     POLICY_AT(p, found->pos));
		return;
	}
	if (p->errors != errors)
		return;
	berth_buf known = BERTH_BUF_INIT;
	const char *names[64];
	size_t n = class_names(classes, &known, names);
	if (!classes->n || p->pol->priority_open) {
		/* no class of the policy's: the name is the PriorityClass's */
		const char *why = berth_check_dns_subdomain(pc->s);
		if (why && classes->n)
			refuse(p, BERTH_EINVALID, pc->origin, pc->pos, "priority_class",
			       "\"%s\" is not a valid PriorityClass name: it %s (it is none of the built-in "
			       "classes %s, so the name is used as written)", pc->s, why,
			       known.data ? known.data : "");
		else if (why)
			refuse(p, BERTH_EINVALID, pc->origin, pc->pos, "priority_class",
			       "\"%s\" is not a valid PriorityClass name: it %s (the policy maps no "
			       "priority_classes, so the name is used as written)", pc->s, why);
		r->priority_class_name = pc->s;
		berth_buf_release(&known);
		return;
	}
	const char *hint = berth_suggest(pc->s, names, n);
	refuse(p, BERTH_EPOLICY, pc->origin, pc->pos, "priority_class",
	       "unknown priority class \"%s\"%s%s%s (priority_classes, %s: %s)", pc->s,
	       hint ? "; did you mean \"" : "", hint ? hint : "", hint ? "\"?" : "",
	       POLICY_AT(p, classes->pos), known.data ? known.data : "");
	berth_buf_release(&known);
}

/* ---- security ----------------------------------------------------------------------------- */

/* Where a policy value with a built-in default is written. */
#define SET_AT(p, v) ((v)->set ? POLICY_AT(p, (v)->pos) : "built-in default")

/*
 * uid/gid 0 under disable_root (on by default), then each id against its
 * range (security.*_range, default 1000-2147483647: no system ids).
 */
static void security_rule(plan *p)
{
	berth_run *r = p->run;
	const berth_policy *pol = p->pol;
	r->seccomp_profile = pol->security.seccomp_profile.s ? pol->security.seccomp_profile.s
							    : "RuntimeDefault";
	r->run_as_non_root = pol->security.disable_root.v != 0;
	const berth_int *ids[3] = {&r->spec.run_as_user, &r->spec.run_as_group, &r->spec.fs_group};
	const berth_range *range[3] = {&pol->security.run_as_user_range,
				       &pol->security.run_as_group_range, &pol->security.fs_group_range};
	static const char *const names[3] = {"run_as_user", "run_as_group", "fs_group"};
	for (int i = 0; i < 3; i++) {
		if (!ids[i]->set)
			continue;
		int64_t v = ids[i]->v;
		if (v == 0 && r->run_as_non_root)
			refuse(p, BERTH_EPOLICY, ids[i]->origin, ids[i]->pos, names[i],
			       "0 (root) is not allowed: the platform disables root (security.disable_root, %s)",
			       SET_AT(p, &pol->security.disable_root));
		else if (v < range[i]->min.v || v > range[i]->max.v)
			refuse(p, BERTH_EPOLICY, ids[i]->origin, ids[i]->pos, names[i],
			       "%lld from %s is outside the ids the platform allows, %lld-%lld "
			       "(security.%s_range, %s)", (long long)v, WHO(p, ids[i]->origin),
			       (long long)range[i]->min.v, (long long)range[i]->max.v, names[i],
			       SET_AT(p, v < range[i]->min.v ? &range[i]->min : &range[i]->max));
	}
}

/* ---- limits and quotas --------------------------------------------------------------------- */

/* The larger of requests and limits. */
static const berth_qty *peak(const berth_resource *res)
{
	if (res->limits.set && (!res->requests.set || berth_quantity_cmp(&res->limits.q, &res->requests.q) >= 0))
		return &res->limits;
	return res->requests.set ? &res->requests : NULL;
}

static void limits_rule(plan *p)
{
	berth_run *r = p->run;
	r->pids_max = p->pol->limits.pids.v;
	const berth_qty *lim[4] = {&p->pol->limits.cpu, &p->pol->limits.mem, &p->pol->limits.gpu,
				   &p->pol->limits.disk};
	char path[64];
	for (size_t i = 0; i < 4; i++) {
		const berth_resource *res = RES(r, i);
		const berth_qty *v = peak(res);
		if (!lim[i]->set || !v || berth_quantity_cmp(&v->q, &lim[i]->q) <= 0)
			continue;
		/* a value a rule derived (a limit by mem_limit_ratio, a request from its
		 * limit) is refused as the value it came from, that someone wrote */
		const berth_qty *src = v == &res->limits ? &res->requests : &res->limits;
		if (v->origin == BERTH_ORIGIN_RULE && src->set && src->origin != BERTH_ORIGIN_RULE &&
		    berth_quantity_cmp(&src->q, &lim[i]->q) > 0)
			v = src;
		snprintf(path, sizeof(path), "resources.%s.%s", resources[i].name,
			 v == &res->limits ? "limits" : "requests");
		char key[32];
		snprintf(key, sizeof(key), "limits.%s", resources[i].name);
		refuse(p, BERTH_EPOLICY, BERTH_QTY_AT(v), v->pos, path,
		       "%s from %s is over the platform's limit of %s per run (%s, %s)", Q(v->q),
		       WHO(p, v->origin), Q(lim[i]->q), RULE_KEY(p, &lim[i]->pos, key),
		       POLICY_AT(p, lim[i]->pos));
	}
}

static int64_t pods(const berth_spec *s)
{
	if (s->action == BERTH_ACTION_JOB)
		return plan_workers(s); /* a distributed job's: all of them at once */
	if (s->action != BERTH_ACTION_SERVE && s->action != BERTH_ACTION_DEPLOY)
		return 1;
	if (s->max_replicas.set)
		return s->max_replicas.v;
	return s->replicas.set ? s->replicas.v : 1;
}

/* What a run counts against its project's quota: cpu and mem requests and gpu
 * limits, each times its pods. */
static void quota_needs(const berth_spec *s, const berth_qty *need[3], berth_quantity *pods_out)
{
	*pods_out = berth_quantity_from_int(pods(s), BERTH_QUANTITY_DECIMAL_SI);
	need[0] = &s->resources.cpu.requests;
	need[1] = &s->resources.mem.requests;
	need[2] = &s->resources.gpu.limits;
}

void berth_usage_add(berth_usage *u, const berth_run *run)
{
	const berth_qty *need[3];
	berth_quantity n, total;
	quota_needs(&run->spec, need, &n);
	berth_quantity *used[3] = {&u->cpu, &u->mem, &u->gpu};
	for (int i = 0; i < 3; i++)
		if (need[i]->set && berth_quantity_mul(&total, &need[i]->q, &n) >= 0)
			berth_quantity_add(used[i], used[i], &total);
	u->runs++;
}

void plan_usage_of(berth_usage *u, int64_t cpu_milli, int64_t mem, int64_t gpus, int64_t runs)
{
	memset(u, 0, sizeof(*u));
	u->cpu = berth_quantity_from_int(cpu_milli / 1000, BERTH_QUANTITY_DECIMAL_SI);
	u->cpu.nanos = (int32_t)(cpu_milli % 1000) * 1000000; /* millicores */
	u->mem = berth_quantity_from_int(mem, BERTH_QUANTITY_BINARY_SI);
	u->gpu = berth_quantity_from_int(gpus, BERTH_QUANTITY_DECIMAL_SI);
	u->runs = runs;
}

void plan_quota_limits(const berth_quota *q, int64_t lim[4])
{
	lim[0] = q->cpu.set ? berth_quantity_milli(&q->cpu.q) : -1;
	lim[1] = q->mem.set ? berth_quantity_value(&q->mem.q) : -1;
	lim[2] = q->gpu.set ? berth_quantity_value(&q->gpu.q) : -1;
	lim[3] = q->runs.set ? q->runs.v : -1;
}

void plan_quota_from(berth_quota *q, const char *name, const int64_t lim[4])
{
	berth_usage u;
	plan_usage_of(&u, lim[0] > 0 ? lim[0] : 0, lim[1] > 0 ? lim[1] : 0, lim[2] > 0 ? lim[2] : 0, 0);
	memset(q, 0, sizeof(*q));
	q->project.s = name;
	q->cpu = (berth_qty){.q = u.cpu, .set = lim[0] >= 0};
	q->mem = (berth_qty){.q = u.mem, .set = lim[1] >= 0};
	q->gpu = (berth_qty){.q = u.gpu, .set = lim[2] >= 0};
	q->runs.v = lim[3];
	q->runs.set = lim[3] >= 0;
}

int plan_quota_wait(const berth_quota *q, const berth_usage *used, const berth_usage *need,
		    char *buf, size_t len)
{
	const berth_qty *quota[3] = {&q->cpu, &q->mem, &q->gpu};
	const berth_quantity *u[3] = {&used->cpu, &used->mem, &used->gpu};
	const berth_quantity *n[3] = {&need->cpu, &need->mem, &need->gpu};
	static const char *const names[3] = {"cpu", "mem", "gpu"};
	size_t at = 0;
	int waits = 0;
	buf[0] = 0;
	at = (size_t)snprintf(buf, len, "waiting for quota:");
	for (int i = 0; i < 3; i++) {
		berth_quantity all;
		if (!quota[i]->set || berth_quantity_sign(n[i]) <= 0)
			continue;
		if (berth_quantity_add(&all, u[i], n[i]) >= 0 && berth_quantity_cmp(&all, &quota[i]->q) <= 0)
			continue;
		if (at < len)
			at += (size_t)snprintf(buf + at, len - at, "%s %s %s of %s in use", waits ? ";" : "",
					       names[i], Q(*u[i]), Q(quota[i]->q));
		waits = 1;
	}
	if (q->runs.set && used->runs + need->runs > q->runs.v) {
		if (at < len)
			snprintf(buf + at, len - at, "%s runs %lld of %lld in use", waits ? ";" : "",
				 (long long)used->runs, (long long)q->runs.v);
		waits = 1;
	}
	return waits;
}

/* The project's quota: a run whose own demand is over the whole quota is
 * refused (it can never fit); one over what the quota has free on the usage
 * given waits for it (quota_wait), or is refused where the backend cannot
 * queue it (opts.quota_refuses). */
/* Where a quota is written: "quotas.vision" or "projects.vision.quotas". */
static const char *quota_key(const berth_quota *q, char *buf, size_t len)
{
	snprintf(buf, len, q->overlay ? "projects.%s.quotas" : "quotas.%s", q->project.s);
	return buf;
}
#define QUOTA_KEY(q) quota_key(q, (char[160]){0}, 160)

static void quota_rule(plan *p)
{
	berth_run *r = p->run;
	const berth_quota *q = berth_policy_quota(p->pol, r->spec.project.s);
	const berth_usage *u = p->opts ? p->opts->usage : NULL;
	bool refuses = p->opts && p->opts->quota_refuses;
	if (!q)
		return;
	const char *project = r->spec.project.s;
	berth_quantity n;
	const berth_qty *quota[3] = {&q->cpu, &q->mem, &q->gpu};
	const berth_qty *need[3];
	quota_needs(&r->spec, need, &n);
	const berth_quantity *used[3] = {u ? &u->cpu : NULL, u ? &u->mem : NULL, u ? &u->gpu : NULL};
	static const char *const names[3] = {"cpu", "mem", "gpu"};
	char path[64];
	bool never = false;
	for (int i = 0; i < 3; i++) {
		berth_quantity total, all;
		if (!quota[i]->set || !need[i]->set)
			continue;
		if (berth_quantity_mul(&total, &need[i]->q, &n) < 0)
			total = need[i]->q;
		all = total;
		if (used[i] && berth_quantity_add(&all, &total, used[i]) < 0)
			all = total;
		if (berth_quantity_cmp(&all, &quota[i]->q) <= 0)
			continue;
		snprintf(path, sizeof(path), "resources.%s", names[i]);
		if (berth_quantity_cmp(&total, &quota[i]->q) > 0) {
			never = true;
			refuse(p, BERTH_EPOLICY, BERTH_QTY_AT(need[i]), need[i]->pos, path,
			       "the run needs %s %s, more than project \"%s\"'s whole quota of %s "
			       "(%s.%s, %s)", Q(total), names[i], project, Q(quota[i]->q), QUOTA_KEY(q),
			       names[i], POLICY_AT(p, quota[i]->pos));
		} else if (refuses) {
			refuse(p, BERTH_EPOLICY, BERTH_QTY_AT(need[i]), need[i]->pos, path,
			       "the run needs %s %s, and project \"%s\" already uses %s of its quota of %s "
			       "(%s.%s, %s)", Q(total), names[i], project, Q(*used[i]), Q(quota[i]->q),
			       QUOTA_KEY(q), names[i], POLICY_AT(p, quota[i]->pos));
		}
	}
	int64_t had = u ? u->runs - u->in_request : 0, before = u ? u->in_request : 0;
	if (q->runs.set && q->runs.v < 1) {
		never = true;
		refuse(p, BERTH_EPOLICY, r->spec.project.origin, r->spec.project.pos, "project",
		       "project \"%s\" may have %lld active run%s and has %lld already (%s.runs, %s)",
		       project, (long long)q->runs.v, q->runs.v == 1 ? "" : "s", (long long)had,
		       QUOTA_KEY(q), POLICY_AT(p, q->runs.pos));
	} else if (refuses && q->runs.set && had + before + 1 > q->runs.v && before)
		refuse(p, BERTH_EPOLICY, r->spec.project.origin, r->spec.project.pos, "project",
		       "project \"%s\" may have %lld active run%s: it has %lld, and this request adds "
		       "%lld before this one (%s.runs, %s)", project, (long long)q->runs.v,
		       q->runs.v == 1 ? "" : "s", (long long)had, (long long)before, QUOTA_KEY(q),
		       POLICY_AT(p, q->runs.pos));
	else if (refuses && q->runs.set && had + 1 > q->runs.v)
		refuse(p, BERTH_EPOLICY, r->spec.project.origin, r->spec.project.pos, "project",
		       "project \"%s\" may have %lld active run%s and has %lld already (%s.runs, %s)",
		       project, (long long)q->runs.v, q->runs.v == 1 ? "" : "s", (long long)had,
		       QUOTA_KEY(q), POLICY_AT(p, q->runs.pos));
	if (never || refuses || !u)
		return;
	berth_usage alone;
	char why[512];
	memset(&alone, 0, sizeof(alone));
	berth_usage_add(&alone, r);
	if (plan_quota_wait(q, u, &alone, why, sizeof(why)) &&
	    !(r->quota_wait = berth_arena_strdup(r->arena, why)))
		p->nomem = 1;
}

/* ---- secrets ------------------------------------------------------------------------------- */

static void check_secret(plan *p, const char *name, uint8_t origin, berth_pos pos, const char *path)
{
	const berth_run_opts *o = p->opts;
	for (size_t i = 0; i < o->nsecrets; i++)
		if (strcmp(o->secrets[i], name) == 0)
			return;
	const char *hint = berth_suggest(name, o->secrets, o->nsecrets);
	refuse(p, BERTH_EPOLICY, origin, pos, path,
	       "unknown secret \"%s\" in project \"%s\"%s%s%s (set it with 'berth secrets set')", name,
	       p->run->spec.project.s, hint ? "; did you mean \"" : "", hint ? hint : "", hint ? "\"?" : "");
}

static void secrets_rule(plan *p)
{
	berth_run *r = p->run;
	char path[64];
	if (!p->opts || !p->opts->check_secrets)
		return;
	for (size_t i = 0; i < r->spec.secrets.n; i++) {
		path_make(path, sizeof(path), "secrets", i, "");
		check_secret(p, r->spec.secrets.items[i].s, r->spec.secrets.items[i].origin,
			     r->spec.secrets.items[i].pos, path);
	}
	for (size_t i = 0; i < r->spec.nvolumes; i++)
		if (r->spec.volumes[i].type == BERTH_VOLUME_SECRET && r->spec.volumes[i].ref.s) {
			path_make(path, sizeof(path), "volumes", i, ".spec.name");
			check_secret(p, r->spec.volumes[i].ref.s, r->spec.volumes[i].origin,
				     r->spec.volumes[i].ref.pos, path);
		}
}

/* Each secret reaches the processes as a variable whose name berth makes
 * from the secret's (berth_env_name_from): two secrets that make the same
 * one, or a secret and an env of the same name, would leave one value to
 * chance (which one a program reads depends on the program). Sorted, not
 * compared in pairs: a spec may list thousands. */
typedef struct env_entry {
	const char *env;  /* the variable */
	size_t index;     /* its place: secrets[i], or envs[i] when is_env */
	bool is_env;
} env_entry;

static int env_entry_cmp(const void *a, const void *b)
{
	const env_entry *x = a, *y = b;
	int c = strcmp(x->env, y->env);
	if (c)
		return c;
	/* envs first, then secrets in their order: the later one is refused */
	if (x->is_env != y->is_env)
		return x->is_env ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static void secret_env_rule(plan *p)
{
	berth_run *r = p->run;
	const berth_strlist *sec = &r->spec.secrets;
	const berth_kvlist *envs = &r->spec.envs;
	if (!sec->n)
		return;
	size_t n = sec->n + envs->n;
	env_entry *all = berth_arena_alloc(r->arena, n * sizeof(*all));
	if (!all) {
		p->nomem = 1;
		return;
	}
	size_t k = 0;
	for (size_t i = 0; i < sec->n; i++) {
		char name[BERTH_ENV_NAME_MAX];
		berth_env_name_from(sec->items[i].s, name, sizeof(name));
		if (!(all[k].env = berth_arena_strdup(r->arena, name))) {
			p->nomem = 1;
			return;
		}
		all[k].index = i;
		all[k++].is_env = false;
		char path[64];
		path_make(path, sizeof(path), "secrets", i, "");
		if (!strncmp(name, "BERTH_", 6))
			warn(p, sec->items[i].origin, sec->items[i].pos, path,
			     "secret \"%s\" reaches the processes as %s: names starting with BERTH_ are "
			     "set by berth", sec->items[i].s, name);
		else if (strcmp(name, sec->items[i].s))
			NOTE(p, path, "reaches the processes as $%s", name);
	}
	for (size_t i = 0; i < envs->n; i++)
		if (envs->items[i].key.s)
			all[k++] = (env_entry){envs->items[i].key.s, i, true};
	qsort(all, k, sizeof(*all), env_entry_cmp);
	for (size_t i = 1; i < k; i++) {
		const env_entry *first = &all[i - 1], *e = &all[i];
		if (strcmp(first->env, e->env) || e->is_env)
			continue;
		/* the first of a run of equal names is the one the others clash with */
		while (first > all && !strcmp(first[-1].env, e->env))
			first--;
		const berth_str *it = &sec->items[e->index];
		char path[64];
		snprintf(path, sizeof(path), "secrets[%zu]", e->index);
		if (first->is_env)
			refuse(p, BERTH_EDUPLICATE, it->origin, it->pos, path,
			       "secret \"%s\" reaches the processes as %s, which envs[%zu] sets too: rename "
			       "the secret or the variable (a secret's variable is its name upper-cased, "
			       "'-' and '.' as '_')", it->s, e->env, first->index);
		else
			refuse(p, BERTH_EDUPLICATE, it->origin, it->pos, path,
			       "secrets \"%s\" and \"%s\" (secrets[%zu]) both reach the processes as %s: "
			       "rename one (a secret's variable is its name upper-cased, '-' and '.' as '_')",
			       it->s, sec->items[first->index].s, first->index, e->env);
	}
}

/* ---- the plan --------------------------------------------------------------------------------- */

int berth_run_plan(berth_run **out, const berth_spec *spec, const berth_policy *policy,
		   const berth_run_opts *opts, berth_error **err)
{
	plan p;
	berth_policy *builtin = NULL;
	char idbuf[24];
	*out = NULL;
	if (!spec)
		return berth_fail(err, BERTH_EARG, "no run spec");
	if (!policy && !(policy = builtin = berth_policy_builtin()))
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	/* the policy as the run's project sees it (projects.NAME over the rest) */
	policy = berth_policy_for_project(policy, spec->project.s ? spec->project.s : "default");
	memset(&p, 0, sizeof(p));
	p.pol = policy;
	p.spec = spec;
	p.opts = opts;
	p.no_notes = opts && opts->no_notes;
	p.err = err;

	const char *id = opts ? opts->run_id : NULL;
	if (id) {
		const char *why = berth_run_id_check(id);
		if (why) {
			berth_policy_free(builtin);
			return berth_fail(err, BERTH_EARG, "run id \"%s\" %s", id, why);
		}
	} else if (berth_run_id_new(idbuf, sizeof(idbuf)) < 0) {
		berth_policy_free(builtin);
		return berth_fail(err, BERTH_EIO, "cannot make a run id: no random bytes (getrandom, /dev/urandom)");
	} else {
		id = idbuf;
	}

	berth_run *r = berth_calloc(1, sizeof(*r));
	if (!r || !(r->arena = berth_arena_new()) || !(r->id = berth_arena_strdup(r->arena, id))) {
		berth_run_free(r);
		berth_policy_free(builtin);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	p.run = r;
	r->given = spec;
	r->function = opts ? opts->function : NULL;
	r->namespace = policy->namespace.s;
	r->local_queue = policy->kueue.local_queue.s;
	r->dist_operator = policy->distributed.op.s && strcmp(policy->distributed.op.s, "none")
				   ? policy->distributed.op.s : NULL;
	r->ssh_auth_mount_path = policy->distributed.ssh_auth_mount_path.s ? policy->distributed.ssh_auth_mount_path.s
									  : DIST_SSH_AUTH_DEFAULT;
	r->ttl_after_finished = policy->cleanup.ttl_after_finished.set ? policy->cleanup.ttl_after_finished.v
								       : -1;
	r->origin_file[BERTH_ORIGIN_DEFAULT] = policy->file;
	r->origin_file[BERTH_ORIGIN_PROJECT] = policy->file;
	r->policy_project = policy->project;
	r->origin_file[BERTH_ORIGIN_FUNCTION] = opts && opts->function ? opts->function->file
								      : spec->file;
	r->origin_file[BERTH_ORIGIN_RUN] = spec->file;
	r->origin_file[BERTH_ORIGIN_RULE] = policy->file;
	find_profile(&p);
	if (r->profile)
		r->origin_file[BERTH_ORIGIN_PROFILE] = r->profile->file;
	if (merge_layers(&p) < 0)
		p.nomem = 1;
	if (!p.nomem) {
		check_locked(&p);
		check_layers(&p);
		make_names(&p);
		project_names(&p);
		derive_resources(&p);
		gpu_rule(&p);
		mem_ratio_rule(&p);
		check_requests(&p);
		volume_rules(&p);
		preemption_rule(&p);
		priority_rule(&p);
		security_rule(&p);
		limits_rule(&p);
		quota_rule(&p);
		secrets_rule(&p);
		secret_env_rule(&p);
	}
	/* the built-in policy has no file and owns nothing the run points to */
	berth_policy_free(builtin);
	if (p.nomem) {
		berth_run_free(r);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	if (err)
		berth_error_sort(*err);
	*out = r;
	if (p.errors)
		return err && berth_error_code(*err) ? -(int)berth_error_code(*err) : -BERTH_EPOLICY;
	return 0;
}

void berth_run_free(berth_run *run)
{
	if (!run)
		return;
	berth_arena_free(run->arena);
	free(run);
}

const char *berth_run_note(const berth_run *run, const char *path)
{
	for (size_t i = 0; run && i < run->nnotes; i++)
		if (strcmp(run->notes[i].path, path) == 0)
			return run->notes[i].text;
	return NULL;
}
