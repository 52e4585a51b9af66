/*
 * test_setup.c - what berth cluster setup --dry-run writes (kube_setup):
 * deploy/kubernetes/ is the example policy's output, object for object; the
 * PriorityClasses' values and preemption; a project's LimitRange from the
 * policy's limits and defaults, only what the policy sets; a namespace per
 * project; and the policy's strings, which stay values however they read.
 * Each stream is read back with berth's YAML reader (berth_docs_json), so
 * what is compared is what kubectl would read, not the text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/kubernetes/kind.h"
#include "base/internal.h"
#include "berth/node.h"
#include "berth/policy.h"
#include "t.h"

/* The dry run of policy text, as JSON (a list of the objects); NULL (and a
 * failed check) when it fails. */
static char *setup_json(const char *policy, const char *ns)
{
	berth_policy *p = NULL;
	berth_error *err = NULL;
	berth_buf out = BERTH_BUF_INIT;
	char *json = NULL;
	size_t len;
	/* NULL: the built-in policy */
	int rc = policy ? berth_policy_parse(&p, "policy.yaml", policy, strlen(policy), &err)
			: (p = berth_policy_builtin()) ? 0 : -BERTH_ENOMEM;
	CHECKF(rc == 0, "policy: %s", rc ? berth_error_get(err, 0)->message : "");
	if (!rc) {
		rc = kube_setup(NULL, p, ns, true, &out, &err);
		CHECKF(rc == 0, "setup: %s", rc ? berth_error_get(err, 0)->message : "");
	}
	if (!rc) {
		rc = berth_docs_json("setup.yaml", out.data, out.len, &json, &len, &err);
		CHECKF(rc == 0, "the output does not read back: %s\n%s", rc ? berth_error_get(err, 0)->message : "",
		       out.data);
	}
	berth_buf_release(&out);
	berth_error_free(err);
	berth_policy_free(p);
	return json;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	berth_buf b = BERTH_BUF_INIT;
	char chunk[4096];
	size_t n;
	CHECKF(f != NULL, "cannot open %s", path);
	while (f && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		berth_buf_append(&b, chunk, n);
	if (f)
		fclose(f);
	return berth_buf_detach(&b);
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;
	for (const char *at = s; at && (at = strstr(at, what)); at += strlen(what))
		n++;
	return n;
}

#define CHECK_HAS(s, what) CHECKF((s) && strstr((s), (what)), "missing %s in\n%s", (what), (s) ? (s) : "(null)")
#define CHECK_HASNT(s, what) CHECKF((s) && !strstr((s), (what)), "unexpected %s in\n%s", (what), (s) ? (s) : "(null)")

/* deploy/kubernetes/priorityclasses.yaml and rbac.yaml are what setup makes of
 * the example policy: an edit to one without the other fails here. */
static void deploy_files_are_the_example_policys(void)
{
	char *policy = slurp("examples/policy/config.yaml");
	char *pcs = slurp("deploy/kubernetes/priorityclasses.yaml");
	char *rbac = slurp("deploy/kubernetes/rbac.yaml");
	berth_buf both = BERTH_BUF_INIT;
	berth_buf_printf(&both, "%s\n---\n%s", pcs ? pcs : "", rbac ? rbac : "");
	char *want = NULL, *got = setup_json(policy ? policy : "", "default");
	size_t len;
	berth_error *err = NULL;
	CHECK_INT(berth_docs_json("deploy", both.data, both.len, &want, &len, &err), 0);
	CHECKF(want && got && !strcmp(want, got), "deploy/kubernetes/ and setup differ:\n deploy: %s\n  setup: %s",
	       want ? want : "(null)", got ? got : "(null)");
	berth_error_free(err);
	berth_buf_release(&both);
	free(want);
	free(got);
	free(policy);
	free(pcs);
	free(rbac);
}

/* Values from the order of first naming (an alias names no new class), the
 * lowest never preempts; local.priority_values wins; past 7 classes, 1000 apart. */
static void priority_class_values(void)
{
	char *j = setup_json("namespace: ns\n"
			     "defaults: {priority_class: b}\n"
			     "priority_classes: {a: pc-a, b: pc-b, A: pc-a, c: pc-c}\n"
			     "local: {priority_values: {pc-b: 42}}\n", "default");
	CHECK_HAS(j, "{\"name\":\"pc-a\",\"labels\":{\"app.kubernetes.io/name\":\"berth\"}},\"value\":100000,"
		     "\"preemptionPolicy\":\"PreemptLowerPriority\",\"description\":\"berth runs of priority class a\"}");
	CHECK_HAS(j, "\"name\":\"pc-b\",\"labels\":{\"app.kubernetes.io/name\":\"berth\"}},\"value\":42,"
		     "\"preemptionPolicy\":\"PreemptLowerPriority\","
		     "\"description\":\"berth runs of priority class b (the policy's default)\"}");
	CHECK_HAS(j, "\"value\":1000,\"preemptionPolicy\":\"Never\"");
	CHECK_INT(count(j, "\"kind\":\"PriorityClass\""), 3);
	free(j);
	j = setup_json("priority_classes: {a: p1, b: p2, c: p3, d: p4, e: p5, f: p6, g: p7, h: p8}\n", "default");
	CHECK_HAS(j, "\"name\":\"p1\",\"labels\":{\"app.kubernetes.io/name\":\"berth\"}},\"value\":8000,");
	CHECK_HAS(j, "\"name\":\"p8\",\"labels\":{\"app.kubernetes.io/name\":\"berth\"}},\"value\":1000,");
	free(j);
	j = setup_json("priority_classes: {only: p1}\n", "default");
	CHECK_HAS(j, "\"value\":1000,\"preemptionPolicy\":\"PreemptLowerPriority\"");
	free(j);
	/* a project's overlay adds its own classes (projects.NAME.priority_classes), after the
	 * policy's, once each; one it names again is the policy's */
	j = setup_json("priority_classes: {high: pc-high, low: pc-low}\n"
		       "projects:\n  ml: {priority_classes: {urgent: pc-urgent, high: pc-high}}\n"
		       "  cv: {priority_classes: {urgent: pc-urgent}}\n", "default");
	CHECK_HAS(j, "\"name\":\"pc-high\",\"labels\":{\"app.kubernetes.io/name\":\"berth\"}},\"value\":100000,");
	CHECK_HAS(j, "\"name\":\"pc-urgent\",\"labels\":{\"app.kubernetes.io/name\":\"berth\"}},\"value\":1000,"
		     "\"preemptionPolicy\":\"Never\",\"description\":\"berth runs of priority class urgent");
	CHECK_INT(count(j, "\"kind\":\"PriorityClass\""), 3);
	free(j);
}

/* The built-in policy's classes (MLRun's High, Medium, Low; Medium the default), with
 * the values its local queue gives them too. */
static void builtin_priority_classes(void)
{
	char *j = setup_json(NULL, "default");
	CHECK_HAS(j, "\"name\":\"berth-high\",\"labels\":{\"app.kubernetes.io/name\":\"berth\"}},"
		     "\"value\":100000,\"preemptionPolicy\":\"PreemptLowerPriority\"");
	CHECK_HAS(j, "\"name\":\"berth-medium\",\"labels\":{\"app.kubernetes.io/name\":\"berth\"}},"
		     "\"value\":10000,\"preemptionPolicy\":\"PreemptLowerPriority\","
		     "\"description\":\"berth runs of priority class medium (the policy's default)\"}");
	CHECK_HAS(j, "\"name\":\"berth-low\",\"labels\":{\"app.kubernetes.io/name\":\"berth\"}},"
		     "\"value\":1000,\"preemptionPolicy\":\"Never\"");
	CHECK_INT(count(j, "\"kind\":\"PriorityClass\""), 3);
	free(j);
}

/* Without a policy namespace: the Role goes to the kubeconfig context's, and
 * no Namespace of runs is made; without priority_classes, no PriorityClass. */
static void namespace_of_the_context(void)
{
	char *j = setup_json("limits: {cpu: \"4\"}\n", "team-a");
	CHECK_HAS(j, "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"Role\",\"metadata\":{"
		     "\"name\":\"berth-runs\",\"namespace\":\"team-a\"");
	CHECK_HAS(j, "\"kind\":\"RoleBinding\",\"metadata\":{\"name\":\"berth-runs\",\"namespace\":\"team-a\"");
	CHECK_INT(count(j, "\"kind\":\"Namespace\""), 1); /* berth's own */
	CHECK_HASNT(j, "PriorityClass");
	CHECK_HASNT(j, "LimitRange"); /* a namespace of one's own only */
	free(j);
}

/* {project}: ClusterRoles instead of the Role, and each named project's
 * namespace, quota, LimitRange and RoleBinding; "default" names no project. */
static void namespace_per_project(void)
{
	char *j = setup_json("namespace: \"ml-{project}\"\n"
			     "defaults:\n  resources: {cpu: 100m, mem: 256Mi}\n  mem_limit_ratio: 1.1\n"
			     "limits: {cpu: \"12\", mem: 16Gi, gpu: \"2\"}\n"
			     "gpu: {default_type: nvidia.com/gpu, types: [nvidia.com/gpu, amd.com/gpu]}\n"
			     "quotas:\n  default: {cpu: \"4\"}\n  vision: {cpu: \"8\", mem: 32Gi, gpu: \"2\"}\n"
			     "  audio: {runs: 3}\n", "default");
	CHECK_HASNT(j, "\"kind\":\"Role\"");
	CHECK_HAS(j, "\"kind\":\"ClusterRole\",\"metadata\":{\"name\":\"berth-runs\"");
	CHECK_HAS(j, "\"kind\":\"ClusterRole\",\"metadata\":{\"name\":\"berth-namespaces\",\"labels\":{"
		     "\"app.kubernetes.io/name\":\"berth\"}},\"rules\":[{\"apiGroups\":[\"\"],\"resources\":"
		     "[\"namespaces\"],\"verbs\":[\"get\",\"create\",\"delete\"]},{\"apiGroups\":[\"\"],"
		     "\"resources\":[\"resourcequotas\",\"limitranges\"],\"verbs\":[\"create\"]}]}");
	CHECK_HAS(j, "\"kind\":\"ClusterRoleBinding\",\"metadata\":{\"name\":\"berth-namespaces\"");
	CHECK_HAS(j, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"ml-vision\",\"labels\":"
		     "{\"app.kubernetes.io/managed-by\":\"berth\",\"berth.dev/project\":\"vision\"}}}");
	CHECK_HAS(j, "\"kind\":\"ResourceQuota\",\"metadata\":{\"name\":\"berth-quota\",\"namespace\":\"ml-vision\","
		     "\"labels\":{\"app.kubernetes.io/managed-by\":\"berth\"}},\"spec\":{\"hard\":{\"requests.cpu\":"
		     "\"8\",\"requests.memory\":\"32Gi\",\"requests.nvidia.com/gpu\":\"2\"}}}");
	/* the memory limit is what mem_limit_ratio gives a run: 256Mi x 1.1, a whole Mi up */
	CHECK_HAS(j, "\"kind\":\"LimitRange\",\"metadata\":{\"name\":\"berth-limits\",\"namespace\":\"ml-vision\","
		     "\"labels\":{\"app.kubernetes.io/managed-by\":\"berth\"}},\"spec\":{\"limits\":[{\"type\":"
		     "\"Container\",\"max\":{\"cpu\":\"12\",\"memory\":\"16Gi\",\"nvidia.com/gpu\":\"2\","
		     "\"amd.com/gpu\":\"2\"},\"default\":{\"cpu\":\"12\",\"memory\":\"282Mi\",\"nvidia.com/gpu\":\"0\","
		     "\"amd.com/gpu\":\"0\"},\"defaultRequest\":{\"cpu\":\"100m\",\"memory\":\"256Mi\","
		     "\"nvidia.com/gpu\":\"0\",\"amd.com/gpu\":\"0\"}}]}}");
	CHECK_HAS(j, "\"kind\":\"RoleBinding\",\"metadata\":{\"name\":\"berth-runs\",\"namespace\":\"ml-vision\","
		     "\"labels\":{\"app.kubernetes.io/name\":\"berth\"}},\"roleRef\":{\"apiGroup\":"
		     "\"rbac.authorization.k8s.io\",\"kind\":\"ClusterRole\",\"name\":\"berth-runs\"}");
	/* audio's quota counts runs only: no ResourceQuota, the LimitRange all the same */
	CHECK_HAS(j, "\"name\":\"ml-audio\"");
	CHECK_INT(count(j, "\"kind\":\"ResourceQuota\""), 1);
	CHECK_INT(count(j, "\"kind\":\"LimitRange\""), 2);
	CHECK_HASNT(j, "ml-default");
	free(j);
	/* a ratio that would take the default over the platform's limit: the
	 * default limit is capped at it, as the plan caps a run's (else the API
	 * refuses the LimitRange: default greater than max) */
	j = setup_json("namespace: \"ml-{project}\"\n"
		       "defaults:\n  resources: {mem: 4Gi}\n  mem_limit_ratio: 1.5\n"
		       "limits: {mem: 5Gi}\nquotas:\n  vision: {runs: 3}\n", "default");
	CHECK_HAS(j, "\"max\":{\"memory\":\"5Gi\"},\"default\":{\"memory\":\"5Gi\"},"
		     "\"defaultRequest\":{\"memory\":\"4Gi\"}");
	free(j);
}

/* Only what the policy sets: a default request alone is a defaultRequest
 * alone; a default limit gives the request too (as the API would); a max
 * without defaults gives the max as limit and 0 as request; nothing set, no
 * LimitRange. */
static void limit_range_only_what_is_set(void)
{
	static const struct {
		const char *policy, *want;
	} cases[] = {
		{"defaults: {resources: {cpu: 250m}}\n",
		 "\"limits\":[{\"type\":\"Container\",\"defaultRequest\":{\"cpu\":\"250m\"}}]"},
		{"defaults: {resources: {mem: {limits: 1Gi}}}\n",
		 "\"limits\":[{\"type\":\"Container\",\"default\":{\"memory\":\"1Gi\"},"
		 "\"defaultRequest\":{\"memory\":\"1Gi\"}}]"},
		{"limits: {mem: 8Gi, disk: 100Gi}\n",
		 "\"limits\":[{\"type\":\"Container\",\"max\":{\"memory\":\"8Gi\",\"ephemeral-storage\":\"100Gi\"},"
		 "\"default\":{\"memory\":\"8Gi\",\"ephemeral-storage\":\"100Gi\"},"
		 "\"defaultRequest\":{\"memory\":\"0\",\"ephemeral-storage\":\"0\"}}]"},
		{"defaults: {resources: {gpu: 1}}\nlimits: {gpu: \"4\"}\n",
		 "\"limits\":[{\"type\":\"Container\",\"max\":{\"nvidia.com/gpu\":\"4\"},"
		 "\"default\":{\"nvidia.com/gpu\":\"1\"},\"defaultRequest\":{\"nvidia.com/gpu\":\"1\"}}]"},
		{"limits: {pids: 100, volume_size: 1Ti}\n", NULL},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		berth_buf policy = BERTH_BUF_INIT;
		berth_buf_printf(&policy, "namespace: \"p-{project}\"\nquotas: {vision: {runs: 1}}\n%s", cases[i].policy);
		char *j = setup_json(policy.data, "default");
		if (cases[i].want)
			CHECK_HAS(j, cases[i].want);
		else
			CHECK_HASNT(j, "LimitRange");
		CHECK_HASNT(j, "ResourceQuota");
		free(j);
		berth_buf_release(&policy);
	}
}

/* A priority class's name that reads as YAML (a key, a comment, a document
 * end, a quote) is a value: the stream reads back with the same objects and
 * the name in the description as written. */
static void policy_strings_are_values(void)
{
	/* (a control character is refused by the policy) */
	char *j = setup_json("priority_classes:\n  \"a: b # c --- d\": pc-one\n  \"'\\\"--- #\": pc-two\n", "default");
	CHECK_HAS(j, "\"description\":\"berth runs of priority class a: b # c --- d\"");
	CHECK_HAS(j, "\"description\":\"berth runs of priority class '\\\"--- #: they never preempt others\"");
	CHECK_INT(count(j, "\"kind\":\"PriorityClass\""), 2);
	free(j);
}

/* A name with a line break that only YAML 1.1 knows (NEL, LINE and PARAGRAPH
 * SEPARATOR: kubectl's reader breaks lines there) or with a byte that is not
 * UTF-8 stays in its comment: what follows it in the name would be a line
 * of the stream to kubectl (globalDefault: true on berth's class). */
static void names_stay_in_their_comments(void)
{
	berth_policy *p = NULL;
	berth_error *err = NULL;
	berth_buf out = BERTH_BUF_INIT;
	const char *text = "priority_classes:\n  \"a\\LglobalDefault: true\\L#\": pc-one\n"
			   "  \"b\\N  value: 1\\P#\": pc-two\n";
	CHECK_INT(berth_policy_parse(&p, "policy.yaml", text, strlen(text), &err), 0);
	if (p)
		CHECK_INT(kube_setup(NULL, p, "default", true, &out, &err), 0);
	for (const char *l = out.data; l && *l;) {
		const char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l) : strlen(l);
		/* a comment line holds no line break of any YAML, and only UTF-8 */
		for (size_t i = 0; l[0] == '#' && i < n; i++) {
			size_t k = berth_utf8_len(l + i, n - i);
			CHECKF(k && memcmp(l + i, "\xc2\x85", 2) && memcmp(l + i, "\xe2\x80\xa8", 3) &&
				       memcmp(l + i, "\xe2\x80\xa9", 3),
			       "a comment breaks to kubectl at byte %zu: %.*s", i, (int)n, l);
			i += k ? k - 1 : 0;
		}
		l = nl ? nl + 1 : NULL;
	}
	CHECK_HAS(out.data, "# priority_classes maps a?globalDefault: true?# to it");
	berth_buf_release(&out);
	berth_error_free(err);
	berth_policy_free(p);
}

/* A listed project whose namespace is no namespace name is refused by name. */
static void project_without_a_namespace(void)
{
	berth_policy *p = NULL;
	berth_error *err = NULL;
	berth_buf out = BERTH_BUF_INIT;
	const char *text = "namespace: \"ml-{project}\"\nquotas:\n"
			   "  a123456789012345678901234567890123456789012345678901234567890: {cpu: \"1\"}\n";
	CHECK_INT(berth_policy_parse(&p, "policy.yaml", text, strlen(text), &err), 0);
	if (p) {
		CHECK_INT(kube_setup(NULL, p, "default", true, &out, &err), -BERTH_EPOLICY);
		const berth_problem *pr = berth_error_get(err, 0);
		CHECKF(pr && strstr(pr->message, "quotas: project \"a1234") && strstr(pr->message, "no namespace"),
		       "%s", pr ? pr->message : "(no error)");
	}
	berth_buf_release(&out);
	berth_error_free(err);
	berth_policy_free(p);
}

/* distributed.operator: berth's rights on the operator's workloads join the
 * Role (and the ClusterRole of a namespace per project); none without it. */
static void operator_rights(void)
{
	char *j = setup_json("distributed: {operator: kubeflow}\n", "team-a");
	CHECK_HAS(j, "{\"apiGroups\":[\"kubeflow.org\"],\"resources\":[\"pytorchjobs\",\"mpijobs\"],\"verbs\":[\"get\","
		     "\"list\",\"watch\",\"create\",\"patch\",\"update\",\"delete\",\"deletecollection\"]}");
	CHECK_HAS(j, "\"resources\":[\"pytorchjobs/finalizers\",\"mpijobs/finalizers\"],\"verbs\":[\"update\"]");
	CHECK_HASNT(j, "jobsets");
	free(j);
	j = setup_json("namespace: \"ml-{project}\"\ndistributed: {operator: jobset}\n", "default");
	CHECK_HAS(j, "{\"apiGroups\":[\"jobset.x-k8s.io\"],\"resources\":[\"jobsets\"]");
	CHECK_HASNT(j, "kubeflow.org");
	free(j);
	j = setup_json("distributed: {operator: none}\n", "team-a");
	CHECK_HASNT(j, "kubeflow.org");
	CHECK_HASNT(j, "jobset.x-k8s.io");
	free(j);
}

T_MAIN(T(deploy_files_are_the_example_policys), T(priority_class_values), T(builtin_priority_classes), T(namespace_of_the_context),
       T(namespace_per_project), T(limit_range_only_what_is_set), T(policy_strings_are_values),
       T(names_stay_in_their_comments), T(project_without_a_namespace), T(operator_rights))
