/*
 * test_names.c - src/base/names.h: Kubernetes name rules as apimachinery's
 * validation states them, cron schedules as Kubernetes' CronJob accepts
 * them, and did-you-mean.
 */
#include <stdio.h>
#include <string.h>

#include "base/internal.h"
#include "base/names.h"
#include "t.h"

#define OK NULL

typedef const char *(*rule_fn)(const char *);

struct row {
	const char *s;
	const char *why; /* OK, or the exact phrase */
};

/* s repeated to n characters, in a rotating static buffer. */
static const char *rep(const char *s, size_t n)
{
	static char bufs[4][512];
	static int k;
	char *b = bufs[k++ % 4];
	size_t sl = strlen(s);
	if (n >= sizeof(bufs[0]))
		n = sizeof(bufs[0]) - 1;
	for (size_t i = 0; i < n; i++)
		b[i] = s[i % sl];
	b[n] = '\0';
	return b;
}

static void run_rows(const char *name, rule_fn rule, const struct row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *got = rule(rows[i].s);
		if (rows[i].why == OK)
			CHECKF(got == NULL, "%s(\"%s\"): \"%s\", want valid", name, rows[i].s, got);
		else
			CHECKF(got && strcmp(got, rows[i].why) == 0, "%s(\"%s\"): \"%s\", want \"%s\"", name,
			       rows[i].s, got ? got : "(valid)", rows[i].why);
	}
}

#define RUN(rule, rows) run_rows(#rule, rule, rows, sizeof(rows) / sizeof(rows[0]))

static void test_dns_label(void)
{
	const struct row rows[] = {
		{"a", OK},
		{"train-resnet", OK},
		{"0abc", OK},
		{"a1-b2-c3", OK},
		{rep("a", 63), OK},
		{"", "must not be empty"},
		{rep("a", 64), "must be at most 63 characters"},
		{"A", "must consist of lowercase letters, digits and '-'"},
		{"Train", "must consist of lowercase letters, digits and '-'"},
		{"a_b", "must consist of lowercase letters, digits and '-'"},
		{"a.b", "must consist of lowercase letters, digits and '-'"},
		{"a b", "must consist of lowercase letters, digits and '-'"},
		{"-a", "must start and end with a lowercase letter or a digit"},
		{"a-", "must start and end with a lowercase letter or a digit"},
		{"-", "must start and end with a lowercase letter or a digit"},
	};
	RUN(berth_check_dns_label, rows);
}

static void test_dns_subdomain(void)
{
	const struct row rows[] = {
		{"a", OK},
		{"my-config", OK},
		{"a.b.c", OK},
		{"nvidia.com", OK},
		{"0.1-x.y", OK},
		{rep("a", 253), OK},
		{rep("a", 100), OK}, /* parts are not limited to 63 */
		{"", "must not be empty"},
		{rep("a", 254), "must be at most 253 characters"},
		{"a..b", "must not have empty parts between dots"},
		{".a", "must not have empty parts between dots"},
		{"a.", "must not have empty parts between dots"},
		{"A.b", "must consist of lowercase letters, digits, '-' and '.'"},
		{"a_b", "must consist of lowercase letters, digits, '-' and '.'"},
		{"a/b", "must consist of lowercase letters, digits, '-' and '.'"},
		{"-a.b", "must start and end each part with a lowercase letter or a digit"},
		{"a.b-", "must start and end each part with a lowercase letter or a digit"},
		{"a.-b", "must start and end each part with a lowercase letter or a digit"},
	};
	RUN(berth_check_dns_subdomain, rows);
}

static void test_qualified_name(void)
{
	char long_prefix[300];
	snprintf(long_prefix, sizeof(long_prefix), "%s/x", rep("a", 254));
	char max_prefix[300];
	snprintf(max_prefix, sizeof(max_prefix), "%s/x", rep("a", 253));
	const struct row rows[] = {
		{"nvidia.com/gpu.product", OK},
		{"app", OK},
		{"app.kubernetes.io/name", OK},
		{"kubernetes.io/hostname", OK},
		{"My_Label.1", OK},
		{"x/A-b_c.d", OK},
		{rep("a", 63), OK},
		{max_prefix, OK},
		{"", "must not be empty"},
		{"a/b/c", "must have at most one '/'"},
		{"/a", "must not have an empty prefix before '/'"},
		{"Example.com/x", "must have a prefix that is a DNS subdomain (lowercase letters, digits, '-' and '.')"},
		{"a_b.com/x", "must have a prefix that is a DNS subdomain (lowercase letters, digits, '-' and '.')"},
		{long_prefix, "must have a prefix that is a DNS subdomain (lowercase letters, digits, '-' and '.')"},
		{"a/", "must not be empty"},
		{rep("a", 64), "must be at most 63 characters"},
		{"a b", "must consist of letters, digits, '-', '_' and '.'"},
		{"a:b", "must consist of letters, digits, '-', '_' and '.'"},
		{"_a", "must start and end with a letter or a digit"},
		{"a.", "must start and end with a letter or a digit"},
		{"x.io/-a", "must start and end with a letter or a digit"},
	};
	RUN(berth_check_qualified_name, rows);
}

static void test_label_value(void)
{
	const struct row rows[] = {
		{"", OK},
		{"v1.2_3-x", OK},
		{"A100", OK},
		{"NVIDIA-A100-SXM4-80GB", OK},
		{rep("a", 63), OK},
		{rep("a", 64), "must be at most 63 characters"},
		{"a b", "must consist of letters, digits, '-', '_' and '.'"},
		{"a/b", "must consist of letters, digits, '-', '_' and '.'"},
		{"-a", "must start and end with a letter or a digit"},
		{"a_", "must start and end with a letter or a digit"},
	};
	RUN(berth_check_label_value, rows);
}

/* a LocalQueue: an object name, and the value of a Job's label */
static void test_labelled_name(void)
{
	const struct row rows[] = {
		{"team-a", OK},
		{"gpu.queue", OK},
		{rep("a", 63), OK},
		{rep("a", 64), "must be at most 63 characters"},
		{"", "must not be empty"},
		{"Team", "must consist of lowercase letters, digits, '-' and '.'"},
		{"a_b", "must consist of lowercase letters, digits, '-' and '.'"},
		{"a&labelSelector=x", "must consist of lowercase letters, digits, '-' and '.'"},
		{"-a", "must start and end each part with a lowercase letter or a digit"},
	};
	RUN(berth_check_labelled_name, rows);
}

static void test_env_name(void)
{
	const struct row rows[] = {
		{"PATH", OK},
		{"HF_HOME", OK},
		{"_X", OK},
		{"my.var-1", OK},
		{".a", OK},
		{"-x", OK},
		{"", "must not be empty"},
		{"1A", "must not start with a digit"},
		{"A B", "must consist of letters, digits, '_', '-' and '.'"},
		{"A=B", "must not contain '=' (it ends a name in the environment)"},
		{"=", "must not contain '=' (it ends a name in the environment)"},
		{"A\nB", "must consist of letters, digits, '_', '-' and '.'"},
		{"Ä", "must consist of letters, digits, '_', '-' and '.'"},
		{".", "must not be '.' or start with '..'"},
		{"..", "must not be '.' or start with '..'"},
		{"..a", "must not be '.' or start with '..'"},
	};
	RUN(berth_check_env_name, rows);
}

static void test_port_name(void)
{
	const struct row rows[] = {
		{"http", OK},
		{"h2c-1", OK},
		{"a", OK},
		{"1a", OK},
		{"grpc-web-metric", OK}, /* 15 */
		{"", "must be 1 to 15 characters"},
		{"grpc-web-metrics", "must be 1 to 15 characters"}, /* 16 */
		{"HTTP", "must consist of lowercase letters, digits and '-'"},
		{"my_port", "must consist of lowercase letters, digits and '-'"},
		{"-http", "must not start or end with '-' or hold '--'"},
		{"http-", "must not start or end with '-' or hold '--'"},
		{"a--b", "must not start or end with '-' or hold '--'"},
		{"123", "must contain at least one letter"},
		{"8-0", "must contain at least one letter"},
	};
	RUN(berth_check_port_name, rows);
}

/* a platform secret's name: a key of the run's Secret, and a file name */
static void test_secret_key(void)
{
	const struct row rows[] = {
		{"api-token", OK},
		{"HF_TOKEN", OK},
		{"tls.key", OK},
		{".hidden", OK},
		{rep("a", 253), OK},
		{"", "must not be empty"},
		{rep("a", 254), "must be at most 253 characters"},
		{"a b", "may hold only letters, digits, '-', '_' and '.' (a Secret key)"},
		{"../../../etc/passwd", "may hold only letters, digits, '-', '_' and '.' (a Secret key)"},
		{"a/b", "may hold only letters, digits, '-', '_' and '.' (a Secret key)"},
		{"tok\nen", "may hold only letters, digits, '-', '_' and '.' (a Secret key)"},
		{".", "must not be '.' or start with '..'"},
		{"..", "must not be '.' or start with '..'"},
		{"..data", "must not be '.' or start with '..'"},
	};
	RUN(berth_check_secret_key, rows);
}

/* a secret's name as the variable it reaches a run as: a C identifier always */
static void test_env_name_from(void)
{
	static const char *const rows[][2] = {
		{"my-secret-key", "MY_SECRET_KEY"},
		{"hf.token", "HF_TOKEN"},
		{"API_key", "API_KEY"},
		{"1password", "_1PASSWORD"},
		{"-.-", "___"},
		{"a", "A"},
	};
	char out[BERTH_ENV_NAME_MAX];
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		CHECK_STR(berth_env_name_from(rows[i][0], out, sizeof(out)), rows[i][1]);
	/* the longest name a secret may have, starting with a digit, fits */
	const char *longest = rep("9", 253);
	berth_env_name_from(longest, out, sizeof(out));
	CHECK_INT(strlen(out), 254);
	CHECK(out[0] == '_' && out[253] == '9');
	/* a short buffer is cut, NUL-terminated */
	char small[4];
	CHECK_STR(berth_env_name_from("my-secret", small, sizeof(small)), "MY_");
}

static void test_printable(void)
{
	const struct row rows[] = {
		{"", OK},
		{"/mnt/ok run", OK},
		{"caf\xc3\xa9", OK},
		{"/mnt/ok\trun", "must not contain control characters"},
		{"/mnt/ok\n", "must not contain control characters"},
		{"\r", "must not contain control characters"},
		{"\x01x", "must not contain control characters"},
		{"x\x1f", "must not contain control characters"},
		{"x\x7f", "must not contain control characters"},
	};
	RUN(berth_check_printable, rows);
}

static void test_cron(void)
{
	const char *fields5 = "must have 5 fields: minute hour day-of-month month day-of-week";
	const char *macro = "is not one of @yearly @annually @monthly @weekly @daily @midnight @hourly";
	const struct row rows[] = {
		{"0 3 * * *", OK},
		{"*/15 9-17 * jan-jun mon-fri", OK},
		{"@daily", OK},
		{"@yearly", OK},
		{"@annually", OK},
		{"@monthly", OK},
		{"@weekly", OK},
		{"@midnight", OK},
		{"@hourly", OK},
		{"0 0 ? * *", OK},
		{"0 0 * * ?", OK},
		{"0 0 1,15 * 0", OK},
		{"1-5/2,30 * * * *", OK},
		{"59 23 31 12 6", OK},
		{"0 0 * JAN,Dec SUN", OK},
		{"5/10 * * * *", OK},
		{"  0\t3 * * *  ", OK},
		{"61 * * * *", "has a bad minute field (0-59)"},
		{"60 * * * *", "has a bad minute field (0-59)"},
		{"5-1 * * * *", "has a bad minute field (0-59)"},
		{"*/0 * * * *", "has a bad minute field (0-59)"},
		{"*/ * * * *", "has a bad minute field (0-59)"},
		{"1, * * * *", "has a bad minute field (0-59)"},
		{"1,,2 * * * *", "has a bad minute field (0-59)"},
		{"? * * * *", "has a bad minute field (0-59)"},
		{"jan * * * *", "has a bad minute field (0-59)"},
		{"99999999 * * * *", "has a bad minute field (0-59)"},
		{"0 24 * * *", "has a bad hour field (0-23)"},
		{"0 0 0 * *", "has a bad day-of-month field (1-31)"},
		{"0 0 32 * *", "has a bad day-of-month field (1-31)"},
		{"0 0 * 13 *", "has a bad month field (1-12 or jan-dec)"},
		{"0 0 * 0 *", "has a bad month field (1-12 or jan-dec)"},
		{"0 0 * janx *", "has a bad month field (1-12 or jan-dec)"},
		{"0 0 * ? *", "has a bad month field (1-12 or jan-dec)"},
		{"0 0 * * 8", "has a bad day-of-week field (0-6 or sun-sat)"},
		{"0 0 * * fri-mon", "has a bad day-of-week field (0-6 or sun-sat)"},
		{"0 3 * *", fields5},
		{"0 3 * * * *", fields5},
		{"", fields5},
		{"   ", fields5},
		{"@often", macro},
		{"@daily ", macro},
		{"@", macro},
	};
	RUN(berth_check_cron, rows);
	/* Kubernetes (robfig/cron v3) allows day-of-week 0-6 only */
	CHECK(berth_check_cron("0 0 * * 7") != NULL);
	CHECK(berth_check_cron("0 0 * * 1-7") != NULL);

}

static void test_suggest(void)
{
	static const char *const spec_keys[] = {"project", "name", "function", "action", "schedule",
						"profile", "resources", "volumes", "node_selector", "affinity",
						"tolerations", "secrets", "envs", "fs_group"};
	static const char *const res_keys[] = {"cpu", "mem", "gpu", "disk", "gpu_type"};
	static const char *const aff_keys[] = {"nodeAffinity", "podAffinity", "podAntiAffinity"};
	static const char *const with_nulls[] = {NULL, "job", NULL, "serve", NULL};
	const size_t ns = BERTH_ARRAY_SIZE(spec_keys);

	CHECK_STR(berth_suggest("resourcs", spec_keys, ns), "resources");
	CHECK_STR(berth_suggest("resource", spec_keys, ns), "resources");
	CHECK_STR(berth_suggest("node_selecter", spec_keys, ns), "node_selector");
	CHECK_STR(berth_suggest("nodeSelector", spec_keys, ns), "node_selector"); /* case, '_' ignored */
	CHECK_STR(berth_suggest("toleration", spec_keys, ns), "tolerations");
	CHECK_STR(berth_suggest("env", spec_keys, ns), "envs");
	CHECK_STR(berth_suggest("memory", res_keys, 5), "mem");
	CHECK_STR(berth_suggest("gpu-type", res_keys, 5), "gpu_type");
	CHECK_STR(berth_suggest("node_affinity", aff_keys, 3), "nodeAffinity");
	CHECK_STR(berth_suggest("pod_anti_affinity", aff_keys, 3), "podAntiAffinity");
	CHECK_STR(berth_suggest("srve", with_nulls, 5), "serve");
	CHECK_STR(berth_suggest("jb", with_nulls, 5), "job");
	/* two neighbours swapped are one edit: the typo of a verb or a word */
	static const char *const verbs[] = {"run", "get", "logs", "stop", "help"};
	static const char *const words[] = {"runs", "run"};
	CHECK_STR(berth_suggest("gte", verbs, 5), "get");
	CHECK_STR(berth_suggest("lgos", verbs, 5), "logs");
	CHECK_STR(berth_suggest("rnus", words, 2), "runs");
	CHECK_STR(berth_suggest("porfile", spec_keys, ns), "profile");
	CHECK(berth_suggest("teg", verbs, 5) == NULL); /* reversed is two swaps: too far */
	CHECK(berth_suggest("zzz", spec_keys, ns) == NULL);
	CHECK(berth_suggest("zzz", res_keys, 5) == NULL);
	CHECK(berth_suggest("completely-different", spec_keys, ns) == NULL);
	CHECK(berth_suggest("resources", spec_keys, 0) == NULL);
	CHECK(berth_suggest("x", with_nulls, 5) == NULL);
	CHECK(berth_suggest("", res_keys, 5) == NULL);
	const char *const only_nulls[] = {NULL, NULL};
	CHECK(berth_suggest("job", only_nulls, 2) == NULL);
	/* a very long key is compared on its first 64 characters, without overflow;
	 * one that starts with a candidate counts as close, as "memory" does */
	CHECK(berth_suggest(rep("zq", 300), spec_keys, ns) == NULL);
	CHECK_STR(berth_suggest(rep("resources", 300), spec_keys, ns), "resources");
	CHECK_STR(berth_suggest("resources_limits", spec_keys, ns), "resources");
}

T_MAIN(T(test_dns_label), T(test_dns_subdomain), T(test_qualified_name), T(test_label_value),
       T(test_labelled_name),
       T(test_env_name), T(test_port_name), T(test_secret_key), T(test_env_name_from), T(test_printable), T(test_cron), T(test_suggest))
