/*
 * explain.c - `berth explain` and `berth profiles`: the fields of a spec,
 * walked through the merge's own table (merge.c), as rows of path, value,
 * origin, position and note; printed as a table, YAML or JSON.
 */
#include <stdio.h>
#include <string.h>

#include "berth/explain.h"
#include "plan/distributed.h"
#include "plan/merge.h"
#include "plan/node_fit.h"
#include "plan/plan.h"
#include "plan/policy_internal.h"
#include "plan/workload.h"
#include "render/render_internal.h"
#include "spec/yaml.h"

typedef struct xctx {
	obuild b;
	onode *rows;
	const berth_run *run;          /* NULL for a profile */
	const char *const *files;      /* file of each origin */
	const char *profile_file;
	uint8_t layer;                 /* rows of one layer as written: its origin */
	const char *project;           /* the project overlay of the policy (projects.NAME) */
	onode *given;                  /* those rows, for what a profile overrides */
} xctx;

static const char *qtext(xctx *x, const berth_quantity *q)
{
	char buf[BERTH_QUANTITY_STR_MAX];
	berth_quantity_format(q, buf, sizeof(buf));
	return berth_arena_strdup(x->b.arena, buf);
}

/* The row of the user's layers that a profile's value at path replaced: the
 * same path, or for a toleration (merged by key and effect) the same identity. */
static const onode *replaced(const xctx *x, const char *path, const char *ident)
{
	const onode *last = NULL; /* the run spec's rows follow the function's: it wins */
	for (const onode *g = x->given ? x->given->first : NULL; g; g = g->next) {
		const onode *id = o_get(g, "ident");
		if (ident ? id && !strcmp(id->s, ident) : !strcmp(o_get(g, "path")->s, path))
			last = g;
	}
	return last;
}

/* Whether the plan says the profile replaced the user's value at path (a
 * toleration: of that identity; service.ports, replaced whole: any port). */
static int overrode(const berth_run *run, const char *path, const char *ident)
{
	for (size_t i = 0; run && run->profile && i < run->noverrides; i++) {
		const berth_override *o = &run->overrides[i];
		size_t n = strlen(o->path);
		if (ident ? o->ident && !strcmp(o->ident, ident)
			  : !o->ident && !strncmp(o->path, path, n) && (!path[n] || path[n] == '['))
			return 1;
	}
	return 0;
}

static void row_id(xctx *x, const char *path, const char *value, uint8_t origin, berth_pos pos,
		   const char *ident)
{
	obuild *b = &x->b;
	onode *r = o_map(b, x->rows, NULL);
	if (x->layer) {
		origin = x->layer == BERTH_ORIGIN_RUN && !strncmp(path, "function.", 9)
				 ? BERTH_ORIGIN_FUNCTION : x->layer;
		if (ident)
			o_str(b, r, "ident", ident);
	}
	o_str(b, r, "path", path);
	o_str(b, r, "value", value);
	/* a project's overlay is named: its defaults, and its own profiles */
	const berth_profile *pr = x->run ? x->run->profile : NULL;
	if (origin == BERTH_ORIGIN_PROJECT && x->project)
		o_strf(b, r, "origin", "projects.%s.defaults", x->project);
	else if (origin == BERTH_ORIGIN_PROFILE && pr && pr->project)
		o_strf(b, r, "origin", "projects.%s.profiles", pr->project);
	else if (origin)
		o_str(b, r, "origin", berth_origin_name((berth_origin)origin));
	const char *file = x->files ? x->files[origin] : x->profile_file;
	if (file && pos.line && origin != BERTH_ORIGIN_RULE) /* a rule's note says where */
		o_strf(b, r, "at", "%s:%u:%u", file, pos.line, pos.column);
	const char *note = x->run ? berth_run_note(x->run, path) : NULL;
	if (note)
		o_str(b, r, "note", note);
	const onode *was = !x->layer && overrode(x->run, path, ident) ? replaced(x, path, ident) : NULL;
	if (was) {
		onode *o = o_map(b, r, "overrides");
		for (const onode *c = was->first; c; c = c->next)
			if (strcmp(c->key, "path") && strcmp(c->key, "ident"))
				o_str(b, o, c->key, c->s);
		o_strf(b, o, "by", "profile \"%s\"", x->run->profile->id.s);
	}
}

static void row(xctx *x, const char *path, const char *value, uint8_t origin, berth_pos pos)
{
	row_id(x, path, value, origin, pos, NULL);
}

static const char *flat(xctx *x, onode *n)
{
	berth_buf buf = BERTH_BUF_INIT;
	if (n)
		emit_json(&buf, n, 0, 0);
	const char *s = buf.data ? berth_arena_strdup(x->b.arena, buf.data) : "";
	if (buf.failed || !s)
		x->b.failed = 1;
	berth_buf_release(&buf);
	return s;
}

static const char *strs(xctx *x, const berth_strlist *l)
{
	onode *seq = o_root(&x->b, O_SEQ);
	for (size_t i = 0; i < l->n; i++)
		o_str(&x->b, seq, NULL, l->items[i].s);
	return flat(x, seq);
}

#define PATHF(...) (snprintf(path, sizeof(path), __VA_ARGS__), berth_arena_strdup(b->arena, path))

static void field_rows(xctx *x, const berth_spec *s, const merge_field *f)
{
	obuild *b = &x->b;
	char path[256];
	const void *v = (const char *)s + f->off;
	switch (f->kind) {
	case M_STR: {
		const berth_str *p = v;
		if (p->s)
			row(x, f->path, p->s, p->origin, p->pos);
		break;
	}
	case M_INT: {
		const berth_int *p = v;
		if (p->set)
			row(x, f->path, PATHF("%lld", (long long)p->v), p->origin, p->pos);
		break;
	}
	case M_QTY: {
		const berth_qty *p = v;
		if (p->set) /* the given spec's requests: default is still the word */
			row(x, f->path, p->from_default ? "default" : qtext(x, &p->q), p->origin, p->pos);
		break;
	}
	case M_STRS: {
		const berth_strlist *p = v;
		if (p->set)
			row(x, f->path, strs(x, p), p->origin, p->pos);
		break;
	}
	case M_SET: {
		const berth_strlist *p = v;
		for (size_t i = 0; i < p->n; i++)
			row(x, PATHF("%s[%zu]", f->path, i), p->items[i].s, p->items[i].origin, p->items[i].pos);
		break;
	}
	case M_MAP: {
		const berth_kvlist *p = v;
		for (size_t i = 0; i < p->n; i++)
			row(x, PATHF("%s.%s", f->path, p->items[i].key.s), p->items[i].value.s,
			    p->items[i].origin, p->items[i].pos);
		break;
	}
	case M_NODE: {
		const berth_node *n = *(const berth_node *const *)v;
		uint8_t origin = *((const uint8_t *)s + f->aux);
		onode *tmp = o_root(b, O_MAP);
		onode *val = NULL;
		if (x->run && f->off == offsetof(berth_spec, affinity))
			val = render_affinity(b, tmp, x->run);
		else if (n)
			val = o_copy_typed(b, tmp, "v", n);
		if (val)
			row(x, f->path, flat(x, val), n ? origin : BERTH_ORIGIN_RULE, n ? n->pos : (berth_pos){0, 0});
		break;
	}
	case M_VOLUMES:
		for (size_t i = 0; i < s->nvolumes; i++) {
			const berth_volume *vol = &s->volumes[i];
			onode *m = o_root(b, O_MAP);
			o_str(b, m, "volume_type", berth_volume_type_name(vol->type));
			o_str(b, m, "mount_path", vol->mount_path.s);
			if (vol->size.set)
				o_qty(b, m, "size", &vol->size.q);
			if (vol->storage_class.s)
				o_str(b, m, "storage_class", vol->storage_class.s);
			if (vol->access_mode.s)
				o_str(b, m, "access_mode", vol->access_mode.s);
			if (vol->medium.s)
				o_str(b, m, "medium", vol->medium.s);
			if (vol->ref.s)
				o_str(b, m, vol->type == BERTH_VOLUME_SHARED ? "claim_name" : "name", vol->ref.s);
			row(x, PATHF("volumes.%s", vol->name.s ? vol->name.s : "?"), flat(x, m), vol->origin, vol->pos);
		}
		break;
	case M_TOLERATIONS:
		for (size_t i = 0; i < s->ntolerations; i++) {
			const berth_toleration *t = &s->tolerations[i];
			onode *m = o_root(b, O_MAP);
			render_toleration(b, m, t);
			char ident[300];
			snprintf(ident, sizeof(ident), "%s:%s", t->key.s ? t->key.s : "",
				 t->effect.s ? t->effect.s : "");
			row_id(x, PATHF("tolerations[%zu]", i), flat(x, m), t->origin, t->pos,
			       berth_arena_strdup(b->arena, ident));
		}
		break;
	case M_PORTS:
		for (size_t i = 0; i < s->nports; i++) {
			const berth_port *p = &s->ports[i];
			onode *m = o_root(b, O_MAP);
			if (p->name.s)
				o_str(b, m, "name", p->name.s);
			o_int(b, m, "port", p->port.v);
			if (p->target_port.set)
				o_int(b, m, "target_port", p->target_port.v);
			if (p->target_port_name.s)
				o_str(b, m, "target_port", p->target_port_name.s);
			if (p->protocol.s)
				o_str(b, m, "protocol", p->protocol.s);
			if (p->node_port.set)
				o_int(b, m, "node_port", p->node_port.v);
			row(x, PATHF("service.ports[%zu]", i), flat(x, m), p->origin, p->pos);
		}
		break;
	}
}

static void spec_rows(xctx *x, const berth_spec *s)
{
	for (size_t i = 0; i < merge_nfields; i++)
		field_rows(x, s, &merge_fields[i]);
}

/* ---- output ------------------------------------------------------------------- */

static void table(berth_buf *out, const onode *rows)
{
	size_t w0 = 5, w1 = 5;
	for (const onode *r = rows->first; r; r = r->next) {
		size_t a = strlen(o_get(r, "path")->s), v = strlen(o_get(r, "value")->s);
		w0 = a > w0 ? a : w0;
		w1 = v > w1 ? v : w1;
	}
	if (w1 > 48)
		w1 = 48;
	berth_buf_printf(out, "%-*s  %-*s  %s\n", (int)w0, "FIELD", (int)w1, "VALUE", "ORIGIN");
	for (const onode *r = rows->first; r; r = r->next) {
		const onode *at = o_get(r, "at"), *note = o_get(r, "note"), *origin = o_get(r, "origin");
		berth_buf_printf(out, "%-*s  %-*s  %s", (int)w0, o_get(r, "path")->s, (int)w1,
				 o_get(r, "value")->s, origin ? origin->s : "");
		if (at)
			berth_buf_printf(out, " (%s)", at->s);
		if (note)
			berth_buf_printf(out, ": %s", note->s);
		const onode *was = o_get(r, "overrides");
		if (was) {
			const onode *wat = o_get(was, "at");
			berth_buf_printf(out, "; %s %s%s%s%s overridden by %s", o_get(was, "origin")->s,
					 o_get(was, "value")->s, wat ? " (" : "", wat ? wat->s : "",
					 wat ? ")" : "", o_get(was, "by")->s);
		}
		berth_buf_puts(out, "\n");
	}
}

static int finish(xctx *x, onode *doc, berth_explain_format fmt, char **out, size_t *len,
		  berth_error **err, void (*head)(berth_buf *, const onode *))
{
	berth_buf buf = BERTH_BUF_INIT;
	*out = NULL;
	*len = 0;
	if (x->b.failed) {
		berth_arena_free(x->b.arena);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	if (fmt == BERTH_EXPLAIN_YAML)
		emit_yaml(&buf, doc);
	else if (fmt == BERTH_EXPLAIN_JSON) {
		emit_json(&buf, doc, 0, 1);
		berth_buf_puts(&buf, "\n");
	} else
		head(&buf, doc);
	berth_arena_free(x->b.arena);
	berth_buf_puts(&buf, "");
	if (buf.failed) {
		berth_buf_release(&buf);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	*len = buf.len;
	*out = berth_buf_detach(&buf);
	return 0;
}

static void problems_list(xctx *x, onode *doc, const char *key, const berth_error *e, berth_severity sev)
{
	onode *seq = NULL;
	char line[1024];
	for (size_t i = 0; i < berth_error_count(e); i++) {
		const berth_problem *p = berth_error_get(e, i);
		if (p->severity != sev)
			continue;
		if (!seq)
			seq = o_seq(&x->b, doc, key);
		berth_problem_format(p, line, sizeof(line));
		o_str(&x->b, seq, NULL, berth_arena_strdup(x->b.arena, line));
	}
}

static void run_table(berth_buf *out, const onode *doc)
{
	const onode *r = o_get(doc, "run");
	for (const onode *c = r->first; c; c = c->next)
		berth_buf_printf(out, "%s: %s\n", c->key, c->s);
	berth_buf_puts(out, "\n");
	table(out, o_get(doc, "fields"));
	const char *const sections[] = {"refused", "warnings"};
	for (int i = 0; i < 2; i++) {
		const onode *l = o_get(doc, sections[i]);
		if (!l)
			continue;
		berth_buf_printf(out, "\n%s:\n", sections[i]);
		for (const onode *c = l->first; c; c = c->next)
			berth_buf_printf(out, "  %s\n", c->s);
	}
}

/* What a distributed job is on a cluster: an Indexed Job, or the
 * workload of the operator the policy names (distributed.operator). */
static void workload_row(obuild *b, onode *r, const berth_run *run)
{
	plan_workload wl = plan_workload_of(run);
	int64_t n = plan_workers(&run->spec);
	const char *op = run->dist_operator ? run->dist_operator : "none";
	const char *key = "kubernetes workload";
	switch (wl) {
	case WL_PLAIN:
		return;
	case WL_INDEXED:
		if (!strcmp(op, "kubeflow"))
			o_strf(b, r, key, "Job (Indexed, %lld workers) and a headless Service: launcher jax under "
			       "distributed.operator kubeflow (the Training Operator berth renders for has no "
			       "JAXJob; an Indexed Job needs no operator)", (long long)n);
		else
			o_strf(b, r, key, "Job (Indexed, %lld workers) and a headless Service", (long long)n);
		return;
	case WL_PYTORCHJOB:
		o_strf(b, r, key, "PyTorchJob kubeflow.org/v1 (distributed.operator kubeflow): Master 1, Worker %lld",
		       (long long)(n - 1));
		return;
	case WL_MPIJOB:
		o_strf(b, r, key, "MPIJob kubeflow.org/v2beta1 (distributed.operator kubeflow): Launcher 1, Worker %lld",
		       (long long)n);
		return;
	case WL_JOBSET:
		o_strf(b, r, key, "JobSet jobset.x-k8s.io/v1alpha2 (distributed.operator jobset): one Indexed "
		       "Job of %lld workers", (long long)n);
		return;
	case WL_NO_MPI:
		o_strf(b, r, key, "(none: launcher mpi needs the MPI Operator on a cluster, and "
		       "distributed.operator is %s; the local backend runs it)", op);
		return;
	}
}

int berth_explain(const berth_run *run, const berth_error *problems, berth_explain_format fmt,
		  char **out, size_t *len, berth_error **err)
{
	xctx x;
	memset(&x, 0, sizeof(x));
	if (!(x.b.arena = berth_arena_new()))
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	x.run = run;
	x.files = run->origin_file;
	x.project = run->policy_project;
	obuild *b = &x.b;
	onode *doc = o_root(b, O_MAP);
	onode *r = o_map(b, doc, "run");
	o_str(b, r, "id", run->id);
	o_str(b, r, "name", run->name);
	o_str(b, r, "namespace", run->namespace ? run->namespace : "(the context's)");
	o_str(b, r, "profile", run->profile ? run->profile->id.s : "(none)");
	/* berth queues Jobs through Kueue (a cronjob's Jobs too), not Deployments */
	if (run->local_queue && (run->spec.action == BERTH_ACTION_JOB || run->spec.action == BERTH_ACTION_CRONJOB))
		o_str(b, r, "kueue LocalQueue", run->local_queue);
	else if (run->local_queue)
		o_strf(b, r, "kueue LocalQueue", "(none: kueue.local_queue %s is for Jobs; a %s run is not queued)",
		       run->local_queue, berth_action_name(run->spec.action));
	workload_row(b, r, run);
	if (run->priority_class_name)
		o_str(b, r, "priorityClassName", run->priority_class_name);
	if (run->gpu_resource)
		o_str(b, r, "gpu resource", run->gpu_resource);
	o_strf(b, r, "pids max", "%lld", (long long)run->pids_max);
	/* a distributed job's workers start together: what they ask in all */
	plan_demand d;
	plan_demand_of(&d, run);
	if (d.workers > 1) {
		char cpu[64], mem[32], disk[32], gpu[32];
		berth_format_cpu(cpu, sizeof(cpu), d.cpu_milli);
		berth_format_bytes(mem, sizeof(mem), d.mem);
		berth_format_bytes(disk, sizeof(disk), d.disk);
		snprintf(gpu, sizeof(gpu), "%lld", (long long)d.gpus);
		const char *dims[][2] = {{"cpu", cpu}, {"mem", mem}, {"gpu", gpu}, {"disk", disk}};
		const int64_t asked[] = {d.cpu_milli, d.mem, d.gpus, d.disk};
		char all[256] = "";
		for (size_t i = 0; i < BERTH_ARRAY_SIZE(asked); i++)
			if (asked[i])
				snprintf(all + strlen(all), sizeof(all) - strlen(all), "%s%s %s",
					 all[0] ? ", " : ": ", dims[i][0], dims[i][1]);
		o_strf(b, r, "workers", "%lld, started together%s%s", (long long)d.workers, all,
		       all[0] ? " in all (resources are each worker's)" : "");
	}
	o_str(b, r, "status", berth_error_errors(problems) ? "refused" : "accepted");
	/* accepted, but over what its project's quota has free now: it would be queued */
	if (!berth_error_errors(problems) && run->quota_wait)
		o_strf(b, r, "quota", "would wait for quota:%s",
		       run->quota_wait + strlen("waiting for quota:"));
	if (run->profile && run->given) {
		/* what the user wrote, where a profile may have replaced it */
		x.run = NULL;
		x.rows = x.given = o_root(b, O_SEQ);
		x.layer = BERTH_ORIGIN_FUNCTION;
		if (run->function)
			spec_rows(&x, run->function);
		x.layer = BERTH_ORIGIN_RUN;
		spec_rows(&x, run->given);
		x.layer = 0;
		x.run = run;
	}
	x.rows = o_seq(b, doc, "fields");
	spec_rows(&x, &run->spec);
	problems_list(&x, doc, "refused", problems, BERTH_ERROR);
	problems_list(&x, doc, "warnings", problems, BERTH_WARNING);
	return finish(&x, doc, fmt, out, len, err, run_table);
}

/* A string of the peer's map m, or NULL when it has none (or no string). */
static const char *peer_str(const berth_node *m, const char *key)
{
	const berth_node *v = berth_node_get(m, key);
	return v && v->kind == BERTH_NODE_SCALAR ? berth_node_text(v) : NULL;
}

int berth_explain_json_format(const char *json, size_t len, berth_explain_format fmt, char **out,
			      size_t *outlen, berth_error **err)
{
	xctx x;
	const berth_node *root = NULL, *run = NULL, *fields = NULL;
	*out = NULL;
	*outlen = 0;
	memset(&x, 0, sizeof(x));
	berth_arena *in = berth_arena_new();
	if (!in || !(x.b.arena = berth_arena_new())) {
		berth_arena_free(in);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	int rc = berth_json_root(in, "the effective spec", json, len, &root, err);
	if (!rc && (root->kind != BERTH_NODE_MAP || !(run = berth_node_get(root, "run")) ||
		    run->kind != BERTH_NODE_MAP || !(fields = berth_node_get(root, "fields")) ||
		    fields->kind != BERTH_NODE_SEQ))
		rc = berth_fail(err, BERTH_ETYPE, "the effective spec is not {\"run\": {...}, \"fields\": [...]}");
	if (rc) {
		berth_arena_free(in);
		berth_arena_free(x.b.arena);
		return rc;
	}
	/* rebuilt from what a peer sent: the strings the table prints, each there */
	obuild *b = &x.b;
	onode *doc = o_root(b, O_MAP), *r = o_map(b, doc, "run");
	for (size_t i = 0; i < run->len; i++) {
		const char *k = berth_node_text(run->u.pairs[i].key), *v = peer_str(run, k ? k : "");
		if (k && v)
			o_str(b, r, k, v);
	}
	onode *rows = o_seq(b, doc, "fields");
	for (size_t i = 0; i < fields->len; i++) {
		const berth_node *f = fields->u.items[i], *was = berth_node_get(f, "overrides");
		const char *path = peer_str(f, "path"), *value = peer_str(f, "value");
		if (f->kind != BERTH_NODE_MAP || !path || !value)
			continue;
		onode *row = o_map(b, rows, NULL);
		const char *const keys[] = {"path", "value", "origin", "at", "note"};
		for (size_t k = 0; k < BERTH_ARRAY_SIZE(keys); k++)
			if (peer_str(f, keys[k]))
				o_str(b, row, keys[k], peer_str(f, keys[k]));
		if (was && was->kind == BERTH_NODE_MAP && peer_str(was, "value") && peer_str(was, "origin") &&
		    peer_str(was, "by")) {
			onode *o = o_map(b, row, "overrides");
			const char *const wkeys[] = {"value", "origin", "at", "by"};
			for (size_t k = 0; k < BERTH_ARRAY_SIZE(wkeys); k++)
				if (peer_str(was, wkeys[k]))
					o_str(b, o, wkeys[k], peer_str(was, wkeys[k]));
		}
	}
	const char *const lists[] = {"refused", "warnings"};
	for (size_t k = 0; k < BERTH_ARRAY_SIZE(lists); k++) {
		const berth_node *l = berth_node_get(root, lists[k]);
		onode *seq = NULL;
		for (size_t i = 0; l && l->kind == BERTH_NODE_SEQ && i < l->len; i++)
			if (l->u.items[i]->kind == BERTH_NODE_SCALAR) {
				if (!seq)
					seq = o_seq(b, doc, lists[k]);
				o_str(b, seq, NULL, berth_node_text(l->u.items[i]));
			}
	}
	rc = finish(&x, doc, fmt, out, outlen, err, run_table);
	berth_arena_free(in);
	return rc;
}

static const char *ostr(const onode *m, const char *key)
{
	const onode *v = m ? o_get(m, key) : NULL;
	return v && v->kind == O_STR ? v->s : NULL;
}

void render_profiles_table(berth_buf *out, const onode *doc)
{
	const onode *l = o_get(doc, "profiles");
	const char *project = ostr(doc, "project");
	if (project)
		berth_buf_printf(out, "profiles of project %s\n\n", project);
	if (!l || l->kind != O_SEQ || !l->first) {
		berth_buf_puts(out, "no profiles defined\n");
		return;
	}
	for (const onode *p = l->first; p; p = p->next) {
		const char *id = ostr(p, "id"), *d = ostr(p, "description"), *at = ostr(p, "at");
		const char *from = ostr(p, "from");
		const onode *fl = o_get(p, "fields");
		berth_buf_printf(out, "%s%s%s%s\n", p == l->first ? "" : "\n", id ? id : "?", d ? " - " : "",
				 d ? d : "");
		if (at)
			berth_buf_printf(out, "  defined at %s%s%s%s\n", at, from ? " (" : "", from ? from : "",
					 from ? ")" : "");
		for (const onode *f = fl && fl->kind == O_SEQ ? fl->first : NULL; f; f = f->next) {
			const char *path = ostr(f, "path"), *value = ostr(f, "value");
			if (path)
				berth_buf_printf(out, "  %s: %s\n", path, value ? value : "");
		}
	}
}

int berth_explain_profiles(const berth_policy *policy, berth_explain_format fmt, char **out,
			   size_t *len, berth_error **err)
{
	xctx x;
	memset(&x, 0, sizeof(x));
	if (!(x.b.arena = berth_arena_new()))
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	obuild *b = &x.b;
	onode *doc = o_root(b, O_MAP);
	/* a project's view: what the runs of that project see (projects.NAME) */
	x.project = berth_policy_project(policy);
	if (x.project)
		o_str(b, doc, "project", x.project);
	onode *list = o_seq(b, doc, "profiles");
	/* what else a user picks from (the web UI's choices) */
	onode *c = o_map(b, doc, "choices");
	onode *pc = o_seq(b, c, "priority_classes");
	for (size_t i = 0; i < policy->priority_classes.n; i++)
		o_str(b, pc, NULL, policy->priority_classes.items[i].key.s);
	onode *gt = o_seq(b, c, "gpu_types");
	for (size_t i = 0; i < policy->gpu.types.n; i++)
		o_str(b, gt, NULL, policy->gpu.types.items[i].s);
	if (policy->gpu.default_type.s)
		o_str(b, c, "default_gpu_type", policy->gpu.default_type.s);
	/* the least role that may write the project's secrets (security.secret_writers) */
	o_str(b, c, "secret_writers",
	      policy->security.secret_writers.s && !strcmp(policy->security.secret_writers.s, "user") ? "user"
												    : "admin");
	onode *lk = o_seq(b, c, "locked_fields");
	for (size_t i = 0; i < policy->security.user_fields.n; i++)
		o_str(b, lk, NULL, policy->security.user_fields.items[i].s);
	/* what bounds every run (limits) and what fills what nobody set (defaults),
	 * each as the policy writes it */
	onode *lim = o_map(b, doc, "limits");
	const struct {
		const char *key;
		const berth_qty *q;
	} ceil[] = {{"cpu", &policy->limits.cpu}, {"mem", &policy->limits.mem},
		    {"gpu", &policy->limits.gpu}, {"disk", &policy->limits.disk},
		    {"volume_size", &policy->limits.volume_size}};
	char qbuf[BERTH_QUANTITY_STR_MAX];
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(ceil); i++)
		if (ceil[i].q->set)
			o_strf(b, lim, ceil[i].key, "%s", berth_qty_written(ceil[i].q, qbuf));
	o_int(b, lim, "pids", policy->limits.pids.v);
	onode *dm = o_map(b, doc, "defaults");
	if (policy->mem_limit_ratio.set)
		o_strf(b, dm, "mem_limit_ratio", "%s", berth_qty_written(&policy->mem_limit_ratio, qbuf));
	x.rows = o_seq(b, dm, "fields");
	x.profile_file = policy->file;
	spec_rows(&x, &policy->defaults);
	for (size_t i = 0; i < berth_policy_profile_count(policy); i++) {
		const berth_profile *p = berth_policy_profile_get(policy, i);
		onode *m = o_map(b, list, NULL);
		o_str(b, m, "id", p->id.s);
		if (p->project)
			o_strf(b, m, "from", "projects.%s.profiles", p->project);
		if (p->description.s)
			o_str(b, m, "description", p->description.s);
		if (p->file)
			o_strf(b, m, "at", "%s:%u:%u", p->file, p->pos.line, p->pos.column);
		x.rows = o_seq(b, m, "fields");
		x.profile_file = p->file;
		spec_rows(&x, &p->spec);
	}
	return finish(&x, doc, fmt, out, len, err, render_profiles_table);
}
