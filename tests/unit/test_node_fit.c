/*
 * test_node_fit.c - the local machine as one node: detection (CPUs, memory,
 * GPUs from a driver directory or nvidia-smi, disk, labels) and whether a
 * planned run fits it (capacity, node_selector, required node affinity with
 * the spot labels of the preemption modes, taints), with the reasons.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/arena.h"
#include "berth/berth.h"
#include "base/internal.h"
#include "plan/node_fit.h"
#include "plan/plan.h"
#include "t.h"

#define GI ((int64_t)1 << 30)

/* A spec planned with a policy (NULL: built-in); everything freed by done(). */
typedef struct fixture {
	berth_policy *pol;
	berth_spec_set *set;
	berth_run *run;
	berth_arena *arena;
} fixture;

static const berth_run *plan(fixture *f, const char *extra, const char *policy_text)
{
	char text[4096];
	berth_error *err = NULL;
	memset(f, 0, sizeof(*f));
	f->arena = berth_arena_new();
	snprintf(text, sizeof(text), "function: {name: f, image: python:3.11}\n%s", extra);
	if (policy_text &&
	    berth_policy_parse(&f->pol, "policy.yaml", policy_text, strlen(policy_text), &err) != 0) {
		CHECKF(0, "policy does not parse: %s", berth_error_count(err) ? berth_error_get(err, 0)->message : "?");
		goto fail;
	}
	if (berth_spec_parse(&f->set, "spec.yaml", text, strlen(text), &err) != 0) {
		CHECKF(0, "spec does not parse: %s", berth_error_count(err) ? berth_error_get(err, 0)->message : "?");
		goto fail;
	}
	berth_run_opts o = {.run_id = "n1"};
	if (berth_run_plan(&f->run, berth_spec_set_get(f->set, 0), f->pol, &o, &err) != 0) {
		CHECKF(0, "spec is refused: %s", berth_error_count(err) ? berth_error_get(err, 0)->message : "?");
		goto fail;
	}
	berth_error_free(err);
	return f->run;
fail:
	berth_error_free(err);
	return NULL;
}

static void done(fixture *f)
{
	berth_run_free(f->run);
	berth_spec_set_free(f->set);
	berth_policy_free(f->pol);
	berth_arena_free(f->arena);
}

/* A node: 2 CPUs, 23.4Gi, no GPU, 50Gi free, host "vm", labels zone=a, cores=8. */
static void node_init(local_node *n, berth_arena *a)
{
	memset(n, 0, sizeof(*n));
	n->cpu_milli = 2000;
	n->mem = (234 * GI + 9) / 10;
	n->gpus = 0;
	n->disk = 50 * GI;
	n->name = "vm";
	CHECK_INT(local_node_label(n, a, "kubernetes.io/hostname", "vm"), 0);
	CHECK_INT(local_node_label(n, a, "zone", "a"), 0);
	CHECK_INT(local_node_label(n, a, "cores", "8"), 0);
}

/* Plans extra (with policy_text) and checks local_node_admits against node
 * (NULL: node_init's); want_reason NULL means admitted. */
static void expect(const local_node *node, const char *extra, const char *policy_text,
		   const char *want_reason, int line)
{
	fixture f;
	local_node def;
	const berth_run *run = plan(&f, extra, policy_text);
	if (!run) {
		CHECKF(0, "line %d: no run", line);
		done(&f);
		return;
	}
	if (!node) {
		node_init(&def, f.arena);
		node = &def;
	}
	const char *why = "unset";
	bool ok = local_node_admits(node, run, f.arena, &why);
	if (!want_reason)
		CHECKF(ok && why == NULL, "line %d: %s refused: %s", line, extra, why ? why : "(null)");
	else
		CHECKF(!ok && why && strcmp(why, want_reason) == 0,
		       "line %d: %s\n    got  %s\n    want %s", line, extra, ok ? "admitted" : why,
		       want_reason);
	done(&f);
}

#define EXPECT(node, extra, pol, reason) expect(node, extra, pol, reason, __LINE__)

/* ---- demand and capacity ------------------------------------------------------------- */

static void test_demand_of(void)
{
	fixture f;
	plan_demand d;
	const berth_run *run = plan(&f,
				    "resources: {cpu: 500m, mem: 1.5Gi, gpu: 2, disk: {limits: 3G}}\n",
				    NULL);
	if (run) {
		plan_demand_of(&d, run);
		CHECK_INT(d.cpu_milli, 500);
		CHECK_INT(d.mem, 1536LL << 20);
		CHECK_INT(d.gpus, 2);
		CHECK_INT(d.disk, 3000000000LL); /* the limit stands for the request */
	}
	done(&f);
	run = plan(&f, "resources: {cpu: {limits: '1.5'}, mem: {requests: 100M, limits: 200M}}\n", NULL);
	if (run) {
		plan_demand_of(&d, run);
		CHECK_INT(d.cpu_milli, 1500);
		CHECK_INT(d.mem, 100000000);
		CHECK_INT(d.gpus, 0);
		CHECK_INT(d.disk, 0);
	}
	done(&f);
	/* nothing asked: nothing needed */
	run = plan(&f, "", NULL);
	if (run) {
		plan_demand_of(&d, run);
		CHECK_INT(d.cpu_milli + d.mem + d.gpus + d.disk, 0);
	}
	done(&f);
}

static void test_capacity(void)
{
	EXPECT(NULL, "resources: {cpu: '64'}\n", NULL,
	       "resources.cpu.requests: 64 CPUs asked, the machine has 2");
	EXPECT(NULL, "resources: {cpu: 2500m}\n", NULL,
	       "resources.cpu.requests: 2500m asked, the machine has 2");
	EXPECT(NULL, "resources: {mem: 300Gi}\n", NULL,
	       "resources.mem.requests: 300Gi asked, the machine has 25125558682");
	/* exact: never a rounded "23.4Gi" or "25.1G" (kubectl says 24536678Ki too) */
	EXPECT(NULL, "resources: {mem: 30G}\n", NULL,
	       "resources.mem.requests: 30G asked, the machine has 25125558682");
	EXPECT(NULL, "resources: {gpu: 2}\n", NULL,
	       "resources.gpu.limits: 2 GPUs asked, the machine has 0");
	EXPECT(NULL, "resources: {disk: 100Gi}\n", NULL,
	       "resources.disk.requests: 100Gi asked, the machine has 50Gi free");
	/* every resource over capacity is named, cpu first (issue 23) */
	EXPECT(NULL, "resources: {cpu: '3', mem: 300Gi}\n", NULL,
	       "resources.cpu.requests: 3 CPUs asked, the machine has 2; "
	       "resources.mem.requests: 300Gi asked, the machine has 25125558682");
	/* exactly the capacity fits */
	EXPECT(NULL, "resources: {cpu: '2', mem: 23Gi, disk: 50Gi}\n", NULL, NULL);

	fixture f;
	local_node n;
	const berth_run *run = plan(&f, "resources: {gpu: 2, cpu: 1}\n", NULL);
	if (run) {
		node_init(&n, f.arena);
		const char *why = NULL;
		n.gpus = 1;
		CHECK(!local_node_admits(&n, run, f.arena, &why));
		CHECK_STR(why, "resources.gpu.limits: 2 GPUs asked, the machine has 1");
		n.gpus = 2;
		CHECK(local_node_admits(&n, run, f.arena, &why));
		CHECK(why == NULL);
		n.cpu_milli = 500;
		CHECK(!local_node_admits(&n, run, f.arena, &why));
		CHECK_STR(why, "resources.cpu.requests: 1 CPU asked, the machine has 500m");
	}
	done(&f);
}

/* ---- node_selector ------------------------------------------------------------------- */

static void test_node_selector(void)
{
	EXPECT(NULL, "node_selector: {gpu: a100}\n", NULL, "node_selector: the node has no label \"gpu\"");
	EXPECT(NULL, "node_selector: {zone: b}\n", NULL,
	       "node_selector: the node has \"zone=a\", the run asks \"zone=b\"");
	EXPECT(NULL, "node_selector: [{key: zone, value: a}, {key: cores, value: '8'}]\n", NULL, NULL);
	EXPECT(NULL, "node_selector: {zone: a, cores: '4'}\n", NULL,
	       "node_selector: the node has \"cores=8\", the run asks \"cores=4\"");
	EXPECT(NULL, "node_selector: {kubernetes.io/hostname: vm}\n", NULL, NULL);
}

/* ---- affinity ------------------------------------------------------------------------ */

#define AFF(terms) \
	"affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: " \
	"{nodeSelectorTerms: " terms "}}}\n"
#define NOMATCH "affinity: no required node selector term matches the node ("

static void test_affinity_operators(void)
{
	static const struct {
		const char *expr;
		const char *reason; /* NULL: admitted */
	} rows[] = {
		{"{key: zone, operator: In, values: [b, a]}", NULL},
		{"{key: zone, operator: In, values: [b]}", "\"zone\" In [b]: the node has \"zone=a\""},
		{"{key: rack, operator: In, values: [r1]}", "\"rack\" In [r1]: the node has no label \"rack\""},
		{"{key: zone, operator: NotIn, values: [b, c]}", NULL},
		{"{key: rack, operator: NotIn, values: [r1]}", NULL},
		{"{key: zone, operator: NotIn, values: [c, a]}", "\"zone\" NotIn [c, a]: the node has \"zone=a\""},
		{"{key: zone, operator: Exists}", NULL},
		{"{key: rack, operator: Exists}", "\"rack\" Exists: the node has no label \"rack\""},
		{"{key: rack, operator: DoesNotExist}", NULL},
		{"{key: zone, operator: DoesNotExist}", "\"zone\" DoesNotExist: the node has \"zone=a\""},
		{"{key: cores, operator: Gt, values: ['4']}", NULL},
		{"{key: cores, operator: Gt, values: ['8']}", "\"cores\" Gt [8]: the node has \"cores=8\""},
		{"{key: cores, operator: Lt, values: ['16']}", NULL},
		{"{key: cores, operator: Lt, values: ['8']}", "\"cores\" Lt [8]: the node has \"cores=8\""},
		{"{key: cores, operator: Gt, values: ['-3']}", NULL},
		{"{key: zone, operator: Gt, values: ['1']}",
		 "\"zone\" Gt [1]: the node has \"zone=a\", not an integer"},
		{"{key: rack, operator: Lt, values: ['1']}", "\"rack\" Lt [1]: the node has no label \"rack\""},
	};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(rows); i++) {
		char spec[512], want[512];
		snprintf(spec, sizeof(spec), AFF("[{matchExpressions: [%s]}]"), rows[i].expr);
		snprintf(want, sizeof(want), NOMATCH "term 1: %s)", rows[i].reason ? rows[i].reason : "");
		expect(NULL, spec, NULL, rows[i].reason ? want : NULL, (int)i);
	}
}

static void test_affinity_terms(void)
{
	/* terms are ORed: the second matches */
	EXPECT(NULL, AFF("[{matchExpressions: [{key: zone, operator: In, values: [b]}]},"
			 " {matchExpressions: [{key: zone, operator: In, values: [a]}]}]"), NULL, NULL);
	/* none matches: each term says why */
	EXPECT(NULL, AFF("[{matchExpressions: [{key: zone, operator: In, values: [b]}]},"
			 " {matchExpressions: [{key: gpu, operator: Exists}]}]"), NULL,
	       NOMATCH "term 1: \"zone\" In [b]: the node has \"zone=a\"; "
		       "term 2: \"gpu\" Exists: the node has no label \"gpu\")");
	/* expressions of a term are ANDed: the second fails */
	EXPECT(NULL, AFF("[{matchExpressions: [{key: zone, operator: In, values: [a]},"
			 " {key: cores, operator: Gt, values: ['10']}]}]"), NULL,
	       NOMATCH "term 1: \"cores\" Gt [10]: the node has \"cores=8\")");
	EXPECT(NULL, AFF("[{matchExpressions: [{key: zone, operator: In, values: [a]},"
			 " {key: cores, operator: Gt, values: ['7']}]}]"), NULL, NULL);
	/* an empty term matches nothing, but another term may */
	EXPECT(NULL, AFF("[{}]"), NULL, NOMATCH "term 1: empty, it matches no node)");
	EXPECT(NULL, AFF("[{matchExpressions: []}, {matchExpressions: [{key: zone, operator: Exists}]}]"),
	       NULL, NULL);
	/* matchFields on metadata.name, ANDed with the expressions */
	EXPECT(NULL, AFF("[{matchFields: [{key: metadata.name, operator: In, values: [vm]}]}]"), NULL, NULL);
	EXPECT(NULL, AFF("[{matchFields: [{key: metadata.name, operator: In, values: [other]}]}]"), NULL,
	       NOMATCH "term 1: field metadata.name In [other]: the node is named \"vm\")");
	EXPECT(NULL, AFF("[{matchFields: [{key: metadata.name, operator: NotIn, values: [vm]}]}]"), NULL,
	       NOMATCH "term 1: field metadata.name NotIn [vm]: the node is named \"vm\")");
	EXPECT(NULL, AFF("[{matchExpressions: [{key: zone, operator: In, values: [b]}],"
			 " matchFields: [{key: metadata.name, operator: In, values: [vm]}]}]"), NULL,
	       NOMATCH "term 1: \"zone\" In [b]: the node has \"zone=a\")");
	/* preferred terms and pod affinity do not decide */
	EXPECT(NULL, "affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
		     "[{weight: 5, preference: {matchExpressions: [{key: gpu, operator: Exists}]}}]}}\n",
	       NULL, NULL);
}

/* ---- spot labels from the preemption modes ------------------------------------------ */

static const char spot_policy[] =
	"preemptible_nodes:\n"
	"  node_selector: {node-lifecycle: spot}\n"
	"  tolerations: [{key: node-lifecycle, operator: Equal, value: spot, effect: NoSchedule}]\n";

static void spot_node(local_node *n, berth_arena *a, int spot)
{
	node_init(n, a);
	if (spot) {
		CHECK_INT(local_node_label(n, a, "node-lifecycle", "spot"), 0);
		static berth_toleration taint;
		memset(&taint, 0, sizeof(taint));
		taint.key.s = "node-lifecycle";
		taint.value.s = "spot";
		taint.effect.s = "NoSchedule";
		n->taints = &taint;
		n->ntaints = 1;
	}
}

static void test_spot_prevent(void)
{
	fixture f;
	local_node n;
	const char *why = NULL;
	const berth_run *run = plan(&f, "preemption_mode: prevent\n", spot_policy);
	if (run) {
		CHECK_STR(run->spot_operator, "NotIn");
		spot_node(&n, f.arena, 0);
		CHECK(local_node_admits(&n, run, f.arena, &why));
		CHECK(why == NULL);
		/* the label alone refuses it, taint or not */
		CHECK_INT(local_node_label(&n, f.arena, "node-lifecycle", "spot"), 0);
		CHECK(!local_node_admits(&n, run, f.arena, &why));
		CHECK_STR(why, NOMATCH "term 1: \"node-lifecycle\" NotIn [spot]: the node has "
				   "\"node-lifecycle=spot\")");
		/* another value of the label is not spot */
		CHECK_INT(local_node_label(&n, f.arena, "node-lifecycle", "on-demand"), 0);
		CHECK(local_node_admits(&n, run, f.arena, &why));
	}
	done(&f);
	/* ANDed into the user's own term, after its expressions */
	run = plan(&f, AFF("[{matchExpressions: [{key: zone, operator: In, values: [a]}]}]"), spot_policy);
	if (run) {
		spot_node(&n, f.arena, 1);
		CHECK(!local_node_admits(&n, run, f.arena, &why));
		CHECK_STR(why, NOMATCH "term 1: \"node-lifecycle\" NotIn [spot]: the node has "
				   "\"node-lifecycle=spot\")");
		spot_node(&n, f.arena, 0);
		CHECK(local_node_admits(&n, run, f.arena, &why));
		CHECK_INT(local_node_label(&n, f.arena, "zone", "b"), 0);
		CHECK(!local_node_admits(&n, run, f.arena, &why));
		CHECK_STR(why, NOMATCH "term 1: \"zone\" In [a]: the node has \"zone=b\")");
	}
	done(&f);
	/* the spot node's taint: prevent removes the spot toleration */
	run = plan(&f, "preemption_mode: prevent\n"
		       "tolerations: [{key: node-lifecycle, operator: Exists, effect: NoSchedule}]\n",
		   spot_policy);
	if (run) {
		CHECK_INT(run->spec.ntolerations, 0);
		spot_node(&n, f.arena, 1);
		n.nlabels--; /* the taint without the label */
		CHECK(!local_node_admits(&n, run, f.arena, &why));
		CHECK_STR(why, "tolerations: the node's taint \"node-lifecycle=spot:NoSchedule\" is not tolerated");
	}
	done(&f);
	/* none: no spot labels, a spot node with its taint is not tolerated */
	run = plan(&f, "preemption_mode: none\n", spot_policy);
	if (run) {
		CHECK(run->spot_operator == NULL);
		spot_node(&n, f.arena, 0);
		CHECK(local_node_admits(&n, run, f.arena, &why));
	}
	done(&f);
}

static void test_spot_constrain_allow(void)
{
	fixture f;
	local_node n;
	const char *why = NULL;
	const berth_run *run = plan(&f, "preemption_mode: constrain\n", spot_policy);
	if (run) {
		CHECK_STR(run->spot_operator, "In");
		spot_node(&n, f.arena, 0);
		CHECK(!local_node_admits(&n, run, f.arena, &why));
		CHECK_STR(why, NOMATCH "term 1: \"node-lifecycle\" In [spot]: the node has no label "
				   "\"node-lifecycle\")");
		/* labelled and tainted: the rule added the toleration */
		spot_node(&n, f.arena, 1);
		CHECK(local_node_admits(&n, run, f.arena, &why));
		CHECK(why == NULL);
	}
	done(&f);
	/* allow: either kind of node */
	run = plan(&f, "preemption_mode: allow\n", spot_policy);
	if (run) {
		CHECK(run->spot_operator == NULL);
		spot_node(&n, f.arena, 1);
		CHECK(local_node_admits(&n, run, f.arena, &why));
		spot_node(&n, f.arena, 0);
		CHECK(local_node_admits(&n, run, f.arena, &why));
	}
	done(&f);
}

/* ---- taints -------------------------------------------------------------------------- */

static void test_taints(void)
{
	static const struct {
		const char *key, *value, *effect;
		const char *tolerations; /* the spec line */
		const char *reason;      /* NULL: admitted */
	} rows[] = {
		{"dedicated", "ml", "NoSchedule", "", "tolerations: the node's taint \"dedicated=ml:NoSchedule\" is not tolerated"},
		{"dedicated", "ml", "NoSchedule", "tolerations: [{key: dedicated, operator: Equal, value: ml, effect: NoSchedule}]\n", NULL},
		{"dedicated", "ml", "NoSchedule", "tolerations: [{key: dedicated, value: ml}]\n", NULL},
		{"dedicated", "ml", "NoSchedule", "tolerations: [{key: dedicated, operator: Equal, value: web, effect: NoSchedule}]\n",
		 "tolerations: the node's taint \"dedicated=ml:NoSchedule\" is not tolerated"},
		{"dedicated", "ml", "NoSchedule", "tolerations: [{key: other, operator: Exists}]\n",
		 "tolerations: the node's taint \"dedicated=ml:NoSchedule\" is not tolerated"},
		{"dedicated", "ml", "NoSchedule", "tolerations: [{key: dedicated, operator: Exists, effect: NoExecute}]\n",
		 "tolerations: the node's taint \"dedicated=ml:NoSchedule\" is not tolerated"},
		{"dedicated", "ml", "NoExecute", "tolerations: [{key: dedicated, operator: Exists}]\n", NULL},
		{"dedicated", "ml", "NoExecute", "", "tolerations: the node's taint \"dedicated=ml:NoExecute\" is not tolerated"},
		{"dedicated", "ml", "NoSchedule", "tolerations: [{operator: Exists}]\n", NULL},
		{"gpu", NULL, "NoSchedule", "", "tolerations: the node's taint \"gpu:NoSchedule\" is not tolerated"},
		{"gpu", NULL, "NoSchedule", "tolerations: [{key: gpu, operator: Equal, effect: NoSchedule}]\n", NULL},
		{"gpu", NULL, "NoSchedule", "tolerations: [{key: gpu, operator: Equal, value: x}]\n",
		 "tolerations: the node's taint \"gpu:NoSchedule\" is not tolerated"},
		/* PreferNoSchedule never keeps a pod off a node */
		{"dedicated", "ml", "PreferNoSchedule", "", NULL},
	};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(rows); i++) {
		fixture f;
		local_node n;
		berth_toleration taint;
		const berth_run *run = plan(&f, rows[i].tolerations, NULL);
		if (!run) {
			CHECKF(0, "row %zu: no run", i);
			done(&f);
			continue;
		}
		node_init(&n, f.arena);
		memset(&taint, 0, sizeof(taint));
		taint.key.s = rows[i].key;
		taint.value.s = rows[i].value;
		taint.effect.s = rows[i].effect;
		n.taints = &taint;
		n.ntaints = 1;
		const char *why = "unset";
		bool ok = local_node_admits(&n, run, f.arena, &why);
		if (rows[i].reason)
			CHECKF(!ok && why && strcmp(why, rows[i].reason) == 0, "row %zu: got %s", i,
			       ok ? "admitted" : why);
		else
			CHECKF(ok && !why, "row %zu: refused: %s", i, why ? why : "(null)");
		done(&f);
	}
}

/* The first failing check wins: capacity, node_selector, affinity, taints. */
static void test_order(void)
{
	fixture f;
	local_node n;
	berth_toleration taint = {.key = {.s = "t"}, .effect = {.s = "NoSchedule"}};
	const char *why = NULL;
	const berth_run *run = plan(&f, "resources: {cpu: '4'}\nnode_selector: {gpu: x}\n"
				    AFF("[{matchExpressions: [{key: gpu, operator: Exists}]}]"), NULL);
	if (run) {
		node_init(&n, f.arena);
		n.taints = &taint;
		n.ntaints = 1;
		CHECK(!local_node_admits(&n, run, f.arena, &why));
		CHECK_STR(why, "resources.cpu.requests: 4 CPUs asked, the machine has 2");
		n.cpu_milli = 4000;
		CHECK(!local_node_admits(&n, run, f.arena, &why));
		CHECK_STR(why, "node_selector: the node has no label \"gpu\"");
		CHECK_INT(local_node_label(&n, f.arena, "gpu", "x"), 0);
		CHECK(!local_node_admits(&n, run, f.arena, &why));
		CHECK_STR(why, "tolerations: the node's taint \"t:NoSchedule\" is not tolerated");
		n.ntaints = 0;
		CHECK(local_node_admits(&n, run, f.arena, &why));
		CHECK(local_node_admits(&n, run, f.arena, NULL));
	}
	done(&f);
}

/* ---- labels and detection ------------------------------------------------------------ */

static const char *label_of(const local_node *n, const char *key)
{
	for (size_t i = 0; i < n->nlabels; i++)
		if (strcmp(n->labels[i].key.s, key) == 0)
			return n->labels[i].value.s;
	return NULL;
}

static void test_label_replaces(void)
{
	berth_arena *a = berth_arena_new();
	local_node n;
	memset(&n, 0, sizeof(n));
	CHECK_INT(local_node_label(&n, a, "gpu", "t4"), 0);
	CHECK_INT(local_node_label(&n, a, "zone", "a"), 0);
	CHECK_INT(local_node_label(&n, a, "gpu", "a100"), 0);
	CHECK_INT(n.nlabels, 2);
	CHECK_STR(label_of(&n, "gpu"), "a100");
	CHECK_STR(label_of(&n, "zone"), "a");
	berth_arena_free(a);
}

static char tmp[256];

static void rm_tmp(void)
{
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	CHECK_INT(system(cmd), 0);
}

static int64_t meminfo_total(void)
{
	char line[256];
	long long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %lld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb * 1024;
}

static void test_detect(void)
{
	char path[400], gpus[400], oldpath[4096];
	const char *p = getenv("PATH");
	snprintf(oldpath, sizeof(oldpath), "%s", p ? p : "/usr/bin:/bin");
	snprintf(tmp, sizeof(tmp), "/tmp/berth-node-fit-XXXXXX");
	if (!CHECK(mkdtemp(tmp) != NULL))
		return;
	/* no nvidia-smi on PATH, no driver directory */
	CHECK_INT(setenv("PATH", tmp, 1), 0);
	berth_arena *a = berth_arena_new();
	berth_error *err = NULL;
	local_node n;
	snprintf(path, sizeof(path), "%s/data/not/yet", tmp);
	snprintf(gpus, sizeof(gpus), "%s/no-such-dir", tmp);
	CHECK_INT(local_node_detect(&n, a, path, gpus, &err), 0);
	CHECK_INT(berth_error_count(err), 0);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	CHECKF(n.cpu_milli > 0 && n.cpu_milli <= ncpu * 1000, "cpu_milli %lld", (long long)n.cpu_milli);
	CHECKF(n.mem > 0 && n.mem <= meminfo_total(), "mem %lld", (long long)n.mem);
	CHECK_INT(n.gpus, 0);
	CHECKF(n.disk > 0, "disk %lld", (long long)n.disk);
	char host[256] = "";
	CHECK_INT(gethostname(host, sizeof(host) - 1), 0);
	CHECK(n.name && strcasecmp(n.name, host) == 0);
	CHECK_STR(label_of(&n, "kubernetes.io/hostname"), n.name);
	CHECK_STR(label_of(&n, "kubernetes.io/os"), "linux");
	const char *arch = label_of(&n, "kubernetes.io/arch");
	CHECK(arch && *arch);
#if defined(__x86_64__)
	CHECK_STR(arch, "amd64");
#elif defined(__aarch64__)
	CHECK_STR(arch, "arm64");
#endif
	CHECK_INT(n.ntaints, 0);

	/* a driver directory with two GPUs */
	snprintf(path, sizeof(path), "%s/gpus", tmp);
	CHECK_INT(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/gpus/0000:17:00.0", tmp);
	CHECK_INT(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/gpus/0000:65:00.0", tmp);
	CHECK_INT(mkdir(path, 0700), 0);
	snprintf(gpus, sizeof(gpus), "%s/gpus", tmp);
	CHECK_INT(local_node_detect(&n, a, tmp, gpus, &err), 0);
	CHECK_INT(n.gpus, 2);

	/* no driver directory: nvidia-smi -L counts them (MIG lines are not GPUs) */
	snprintf(path, sizeof(path), "%s/nvidia-smi", tmp);
	FILE *f = fopen(path, "w");
	if (CHECK(f != NULL)) {
		fputs("#!/bin/sh\n[ \"$1\" = -L ] || exit 1\n"
		      "echo 'GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)'\n"
		      "echo '  MIG 1g.10gb     Device  0: (UUID: MIG-1)'\n"
		      "echo 'GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-2)'\n"
		      "echo 'GPU 2: NVIDIA H100 80GB HBM3 (UUID: GPU-3)'\n"
		      "echo 'warning: GPU 3 is not a line start' >&2\n",
		      f);
		fclose(f);
		CHECK_INT(chmod(path, 0755), 0);
	}
	snprintf(gpus, sizeof(gpus), "%s/no-such-dir", tmp);
	CHECK_INT(local_node_detect(&n, a, NULL, gpus, &err), 0);
	CHECK_INT(n.gpus, 3);

	CHECK_INT(setenv("PATH", oldpath, 1), 0);
	berth_error_free(err);
	berth_arena_free(a);
	rm_tmp();
}

T_MAIN(T(test_demand_of), T(test_capacity), T(test_node_selector), T(test_affinity_operators),
       T(test_affinity_terms), T(test_spot_prevent), T(test_spot_constrain_allow), T(test_taints),
       T(test_order), T(test_label_replaces), T(test_detect))
