/*
 * test_kubeconfig.c - kube_config_load, kube_config_parse and
 * kube_config_in_cluster: a kubeconfig written by kubectl itself, the
 * $KUBECONFIG merge, relative and ~/ paths, errors with their positions,
 * a pod's service account, and allocation failures.
 *
 * Every test that touches the environment (KUBECONFIG, HOME,
 * KUBERNETES_SERVICE_*, BERTH_SERVICEACCOUNT_DIR) saves it first and puts
 * it back. When kubectl is not on PATH, the kubectl test is left out and
 * "skip kubeconfig-kubectl (no kubectl)" is printed instead of its result.
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/internal.h"
#include "backend/kubernetes/api.h"
#include "t.h"

/* ---- helpers ---------------------------------------------------------------- */

static void dump(const berth_error *err)
{
	char buf[1024];
	for (size_t i = 0; i < berth_error_count(err); i++) {
		berth_problem_format(berth_error_get(err, i), buf, sizeof(buf));
		fprintf(stderr, "    problem: %s\n", buf);
	}
}

/* The first problem of err, formatted (a static buffer). */
static const char *first(const berth_error *err)
{
	static char buf[1024];
	const berth_problem *p = berth_error_get(err, 0);
	buf[0] = '\0';
	if (p)
		berth_problem_format(p, buf, sizeof(buf));
	return buf;
}

static int is_zero(const kube_config *c)
{
	static const kube_config zero;
	return memcmp(c, &zero, sizeof(zero)) == 0;
}

/* dir/name in a static rotating buffer. */
static const char *at(const char *dir, const char *name)
{
	static char bufs[8][1024];
	static int i;
	char *b = bufs[i++ % 8];
	snprintf(b, 1024, "%s/%s", dir, name);
	return b;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	CHECKF(f != NULL, "cannot write %s", path);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

/* The whole file, malloc'd (NULL if unreadable). */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *b = NULL;
	long n;
	*len = 0;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (b = malloc((size_t)n + 1)) != NULL) {
		*len = fread(b, 1, (size_t)n, f);
		b[*len] = '\0';
	}
	fclose(f);
	return b;
}

/* data (len bytes) equals the contents of file path. */
static int same_as_file(const char *data, size_t len, const char *path)
{
	size_t flen;
	char *want = slurp(path, &flen);
	int ok = want && data && len == flen && memcmp(data, want, len) == 0;
	free(want);
	return ok;
}

/* ---- the environment ---------------------------------------------------------- */

static const char *const env_names[] = {
	"KUBECONFIG", "HOME", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT",
	"BERTH_SERVICEACCOUNT_DIR",
};

typedef struct saved_env {
	char *values[5];
	int set[5];
} saved_env;

static void env_save(saved_env *s)
{
	for (size_t i = 0; i < 5; i++) {
		const char *v = getenv(env_names[i]);
		s->set[i] = v != NULL;
		s->values[i] = v ? berth_strdup(v) : NULL;
	}
}

static void env_restore(saved_env *s)
{
	for (size_t i = 0; i < 5; i++) {
		if (s->set[i] && s->values[i])
			setenv(env_names[i], s->values[i], 1);
		else
			unsetenv(env_names[i]);
		free(s->values[i]);
		s->values[i] = NULL;
	}
}

/* ---- parsing helpers ------------------------------------------------------------- */

/* Parses text (from an exact-size heap copy) as file "/k/config" in "/k". */
static int parse_ctx(kube_config *c, const char *text, const char *context, berth_error **err)
{
	size_t len = strlen(text);
	char *copy = malloc(len ? len : 1);
	int ret;
	if (!copy)
		abort();
	memcpy(copy, text, len);
	ret = kube_config_parse(c, "/k/config", copy, len, "/k", context, err);
	memset(copy, 'X', len); /* anything still pointing in reads garbage */
	free(copy);
	return ret;
}

/* Parses text that must fail with -code and a first problem containing
 * want; returns nothing, checks that *out is clean. */
#define MUST_FAIL(text, context, code, want)                                            \
	do {                                                                            \
		kube_config c_;                                                         \
		berth_error *e_ = NULL;                                                 \
		int r_ = parse_ctx(&c_, (text), (context), &e_);                        \
		CHECK_INT(r_, -(int)(code));                                            \
		CHECK_INT(berth_error_code(e_), (code));                                \
		CHECKF(strstr(first(e_), (want)) != NULL, "got \"%s\", want \"%s\"",    \
		       first(e_), (want));                                              \
		CHECK(is_zero(&c_));                                                    \
		berth_error_free(e_);                                                   \
	} while (0)

/* ---- a kubeconfig written by kubectl ------------------------------------------------ */

static const char fake_pem[] = "-----BEGIN CERTIFICATE-----\n"
			       "MIIBczCCARmgAwIBAgIUNBrETfakefakefakefakefakefakefakewCgYIKoZIzj0E\n"
			       "AwIwDzENMAsGA1UEAwwEdGVzdDAeFw0yNTAxMDEwMDAwMDBaFw0yNTAxMDIwMDAw\n"
			       "-----END CERTIFICATE-----\n";

static int sh(const char *fmt, ...) BERTH_PRINTF(1, 2);
static int sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	int rc = system(cmd);
	CHECKF(rc == 0, "command failed (%d): %s", rc, cmd);
	return rc;
}

/* A self-signed certificate and its key, as ca.pem, cert.pem and key.pem. */
static int make_cert(const char *d)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd),
		 "cd %s && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
		 "-nodes -subj /CN=test -days 1 -keyout key.pem -out cert.pem >/dev/null 2>&1 && "
		 "cp cert.pem ca.pem",
		 d);
	return system(cmd);
}

static void test_kubectl(void)
{
	char *d = t_temp_dir("berth-kubeconfig");
	kube_config c;
	berth_error *err = NULL;
	int ret;

	if (!d)
		return;
	/* a real certificate and key when openssl is there, else any text:
	 * kubectl --embed-certs embeds what it is given */
	if (system("command -v openssl >/dev/null 2>&1") != 0 ||
	    make_cert(d) != 0) {
		write_file(at(d, "ca.pem"), fake_pem);
		write_file(at(d, "cert.pem"), fake_pem);
		write_file(at(d, "key.pem"), "-----BEGIN PRIVATE KEY-----\nMIGHAgEA\n-----END PRIVATE KEY-----\n");
	}
	sh("cd %s && kubectl config --kubeconfig=%s/config set-cluster c1 "
	   "--server=https://127.0.0.1:6443 --certificate-authority=ca.pem --embed-certs >/dev/null",
	   d, d);
	sh("kubectl config --kubeconfig=%s/config set-cluster c2 --server=https://k8s.example:8443/ "
	   "--insecure-skip-tls-verify=true --tls-server-name=api.example >/dev/null",
	   d);
	sh("kubectl config --kubeconfig=%s/config set-credentials u1 --token=abc >/dev/null", d);
	sh("cd %s && kubectl config --kubeconfig=%s/config set-credentials u2 "
	   "--client-certificate=cert.pem --client-key=key.pem --embed-certs >/dev/null",
	   d, d);
	sh("kubectl config --kubeconfig=%s/config set-context ctx1 --cluster=c1 --user=u1 "
	   "--namespace=ml >/dev/null",
	   d);
	sh("kubectl config --kubeconfig=%s/config set-context ctx2 --cluster=c1 --user=u2 >/dev/null",
	   d);
	sh("kubectl config --kubeconfig=%s/config set-context ctx3 --cluster=c2 --user=u1 >/dev/null",
	   d);
	sh("kubectl config --kubeconfig=%s/config use-context ctx1 >/dev/null", d);

	ret = kube_config_load(&c, at(d, "config"), NULL, &err);
	CHECK_INT(ret, 0);
	dump(err);
	CHECK_STR(c.context, "ctx1");
	CHECK_STR(c.server, "https://127.0.0.1:6443");
	CHECK(same_as_file(c.ca_data, c.ca_len, at(d, "ca.pem")));
	CHECK(c.ca_data && c.ca_data[c.ca_len] == '\0');
	CHECK(c.ca_file == NULL);
	CHECK_STR(c.token, "abc");
	CHECK(c.token_file == NULL && c.cert_data == NULL && c.key_data == NULL);
	CHECK_STR(c.namespace, "ml");
	CHECK(!c.insecure);
	kube_config_free(&c);
	CHECK(is_zero(&c));
	berth_error_free(err);
	err = NULL;

	ret = kube_config_load(&c, at(d, "config"), "ctx2", &err);
	CHECK_INT(ret, 0);
	dump(err);
	CHECK_STR(c.context, "ctx2");
	CHECK(same_as_file(c.cert_data, c.cert_len, at(d, "cert.pem")));
	CHECK(same_as_file(c.key_data, c.key_len, at(d, "key.pem")));
	CHECK(c.cert_file == NULL && c.key_file == NULL && c.token == NULL);
	CHECK_STR(c.namespace, "default");
	kube_config_free(&c);
	berth_error_free(err);
	err = NULL;

	ret = kube_config_load(&c, at(d, "config"), "ctx3", &err);
	CHECK_INT(ret, 0);
	dump(err);
	CHECK_STR(c.server, "https://k8s.example:8443");
	CHECK(c.insecure);
	CHECK_STR(c.tls_server_name, "api.example");
	CHECK(c.ca_data == NULL && c.ca_file == NULL);
	kube_config_free(&c);
	berth_error_free(err);
	err = NULL;

	/* kubectl's own delete-context leaves current-context dangling */
	sh("kubectl config --kubeconfig=%s/config unset current-context >/dev/null", d);
	ret = kube_config_load(&c, at(d, "config"), NULL, &err);
	CHECK_INT(ret, -BERTH_EMISSING);
	CHECKF(strstr(first(err), "no current-context; pass --context NAME (contexts: ctx1, ctx2, ctx3)"),
	       "%s", first(err));
	CHECK(is_zero(&c));
	berth_error_free(err);

	t_rm_rf(d);
	free(d);
}

/* ---- $KUBECONFIG -------------------------------------------------------------------- */

static const char merge_a[] = "apiVersion: v1\n"
			      "kind: Config\n"
			      "clusters:\n"
			      "- name: shared\n"
			      "  cluster:\n"
			      "    server: https://a.example\n"
			      "users:\n"
			      "- name: ua\n"
			      "  user:\n"
			      "    token: token-a\n"
			      "contexts:\n"
			      "- name: x\n"
			      "  context: {cluster: shared, user: ua, namespace: from-a}\n";

static const char merge_b[] = "apiVersion: v1\n"
			      "kind: Config\n"
			      "current-context: x\n"
			      "clusters:\n"
			      "- name: shared\n"
			      "  cluster:\n"
			      "    server: https://b.example\n"
			      "- name: onlyb\n"
			      "  cluster:\n"
			      "    server: https://onlyb.example/\n"
			      "    certificate-authority: ca.pem\n"
			      "contexts:\n"
			      "- name: x\n"
			      "  context: {cluster: onlyb, user: ua}\n"
			      "- name: y\n"
			      "  context: {cluster: onlyb, user: ua}\n";

static void test_kubeconfig_merge(void)
{
	saved_env saved;
	char *d = t_temp_dir("berth-kubeconfig");
	char list[4096];
	kube_config c;
	berth_error *err = NULL;
	int ret;

	if (!d)
		return;
	env_save(&saved);
	unsetenv("KUBERNETES_SERVICE_HOST");
	mkdir(at(d, "b"), 0700);
	write_file(at(d, "a"), merge_a);
	write_file(at(d, "b/config"), merge_b);
	write_file(at(d, "empty"), "");

	/* missing files and empty entries are skipped; a has no current-context,
	 * b's is used; a defines x and "shared" first */
	snprintf(list, sizeof(list), "%s/missing::%s/empty:%s/a:%s/b/config:", d, d, d, d);
	setenv("KUBECONFIG", list, 1);
	ret = kube_config_load(&c, NULL, NULL, &err);
	CHECK_INT(ret, 0);
	dump(err);
	CHECK_STR(c.context, "x");
	CHECK_STR(c.server, "https://a.example");
	CHECK_STR(c.token, "token-a");
	CHECK_STR(c.namespace, "from-a");
	kube_config_free(&c);
	berth_error_free(err);
	err = NULL;

	/* y is only in b, its user only in a; b's relative path is b's dir */
	ret = kube_config_load(&c, NULL, "y", &err);
	CHECK_INT(ret, 0);
	dump(err);
	CHECK_STR(c.server, "https://onlyb.example");
	CHECK_STR(c.ca_file, at(d, "b/ca.pem"));
	CHECK_STR(c.token, "token-a");
	CHECK_STR(c.namespace, "default");
	kube_config_free(&c);
	berth_error_free(err);
	err = NULL;

	/* the other order: b wins for x and for "shared" */
	snprintf(list, sizeof(list), "%s/b/config:%s/a", d, d);
	setenv("KUBECONFIG", list, 1);
	ret = kube_config_load(&c, NULL, NULL, &err);
	CHECK_INT(ret, 0);
	CHECK_STR(c.server, "https://onlyb.example");
	CHECK_STR(c.namespace, "default");
	kube_config_free(&c);
	berth_error_free(err);
	err = NULL;

	/* --kubeconfig: only that file, $KUBECONFIG is not read */
	ret = kube_config_load(&c, at(d, "a"), NULL, &err);
	CHECK_INT(ret, -BERTH_EMISSING);
	CHECKF(strstr(first(err), "no current-context") != NULL, "%s", first(err));
	CHECK(is_zero(&c));
	berth_error_free(err);
	err = NULL;

	/* a path given that does not exist is an error */
	ret = kube_config_load(&c, at(d, "missing"), NULL, &err);
	CHECK_INT(ret, -BERTH_EIO);
	CHECKF(strstr(first(err), "missing") != NULL, "%s", first(err));
	CHECK(is_zero(&c));
	berth_error_free(err);
	err = NULL;

	/* every file of the list empty or missing: the empty one is named */
	snprintf(list, sizeof(list), "%s/missing:%s/empty", d, d);
	setenv("KUBECONFIG", list, 1);
	ret = kube_config_load(&c, NULL, NULL, &err);
	CHECK_INT(ret, -BERTH_EMISSING);
	CHECKF(strstr(first(err), "empty: the kubeconfig is empty") != NULL, "%s", first(err));
	berth_error_free(err);
	err = NULL;

	/* no KUBECONFIG: $HOME/.kube/config */
	unsetenv("KUBECONFIG");
	setenv("HOME", d, 1);
	mkdir(at(d, ".kube"), 0700);
	write_file(at(d, ".kube/config"), merge_b);
	{
		FILE *f = fopen(at(d, ".kube/config"), "a");
		CHECK(f != NULL);
		if (f) {
			fputs("users: [{name: ua, user: {token: from-home}}]\n", f);
			fclose(f);
		}
	}
	ret = kube_config_load(&c, NULL, NULL, &err);
	CHECK_INT(ret, 0);
	CHECK_STR(c.server, "https://onlyb.example");
	CHECK_STR(c.ca_file, at(d, ".kube/ca.pem"));
	CHECK_STR(c.token, "from-home");
	kube_config_free(&c);
	berth_error_free(err);

	env_restore(&saved);
	t_rm_rf(d);
	free(d);
}

/* ---- paths ---------------------------------------------------------------------------- */

static const char paths_cfg[] = "current-context: p\n"
				"clusters:\n"
				"- name: c\n"
				"  cluster:\n"
				"    server: http://127.0.0.1:8080\n"
				"    certificate-authority: ca.pem\n"
				"users:\n"
				"- name: u\n"
				"  user:\n"
				"    client-certificate: ./certs/client.pem\n"
				"    client-key: /abs/client.key\n"
				"    tokenFile: ~/tokens/t\n"
				"contexts:\n"
				"- name: p\n"
				"  context:\n"
				"    cluster: c\n"
				"    user: u\n";

static void test_kubeconfig_paths(void)
{
	saved_env saved;
	kube_config c;
	berth_error *err = NULL;
	char cwd[1024], want[1200];
	int ret;

	env_save(&saved);
	setenv("HOME", "/home/tester", 1);
	ret = kube_config_parse(&c, "/etc/kc/config", paths_cfg, strlen(paths_cfg), "/etc/kc", NULL,
				&err);
	CHECK_INT(ret, 0);
	dump(err);
	CHECK_STR(c.server, "http://127.0.0.1:8080");
	CHECK_STR(c.ca_file, "/etc/kc/ca.pem");
	CHECK_STR(c.cert_file, "/etc/kc/certs/client.pem");
	CHECK_STR(c.key_file, "/abs/client.key");
	CHECK_STR(c.token_file, "/home/tester/tokens/t");
	CHECK(c.token == NULL);
	kube_config_free(&c);
	berth_error_free(err);
	err = NULL;

	/* a relative dir starts at the working directory */
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	ret = kube_config_parse(&c, "sub/config", paths_cfg, strlen(paths_cfg), "sub", NULL, &err);
	CHECK_INT(ret, 0);
	snprintf(want, sizeof(want), "%s/sub/ca.pem", cwd);
	CHECK_STR(c.ca_file, want);
	kube_config_free(&c);
	berth_error_free(err);
	err = NULL;

	/* ~ with no HOME */
	unsetenv("HOME");
	ret = kube_config_parse(&c, "/etc/kc/config", paths_cfg, strlen(paths_cfg), "/etc/kc", NULL,
				&err);
	CHECK_INT(ret, -BERTH_EINVALID);
	CHECKF(strstr(first(err), "/etc/kc/config:12:16: users[0].user.tokenFile: ") != NULL,
	       "%s", first(err));
	CHECK(is_zero(&c));
	berth_error_free(err);

	env_restore(&saved);
}

/* ---- errors --------------------------------------------------------------------------- */

static const char two_contexts[] = "clusters:\n"
				   "- name: c1\n"
				   "  cluster:\n"
				   "    server: https://c1\n"
				   "contexts:\n"
				   "- name: a\n"
				   "  context: {cluster: c1}\n"
				   "- name: b\n"
				   "  context:\n"
				   "    cluster: nope\n";

static void test_kubeconfig_errors_context(void)
{
	kube_config c;
	berth_error *err = NULL;
	const berth_problem *p;

	MUST_FAIL(two_contexts, NULL, BERTH_EMISSING,
		  "kubeconfig /k/config: no current-context; pass --context NAME (contexts: a, b)");
	MUST_FAIL(two_contexts, "zz", BERTH_EARG,
		  "no context \"zz\" in kubeconfig /k/config (contexts: a, b)");
	MUST_FAIL("current-context: gone\ncontexts: []\n", NULL, BERTH_EINVALID,
		  "/k/config:1:18: current-context: context \"gone\" is not defined; pass --context "
		  "NAME (contexts: none defined)");

	/* a context without a user is anonymous */
	CHECK_INT(parse_ctx(&c, two_contexts, "a", &err), 0);
	CHECK_STR(c.server, "https://c1");
	CHECK(c.token == NULL && c.token_file == NULL);
	kube_config_free(&c);
	berth_error_free(err);
	err = NULL;

	/* a reference to an unknown cluster: at the reference */
	CHECK_INT(parse_ctx(&c, two_contexts, "b", &err), -BERTH_EINVALID);
	p = berth_error_get(err, 0);
	CHECK(p != NULL);
	if (p) {
		CHECK_STR(p->file, "/k/config");
		CHECK_INT(p->line, 10);
		CHECK_INT(p->column, 14);
		CHECK_STR(p->path, "contexts[1].context.cluster");
		CHECK_STR(p->message, "cluster \"nope\" is not defined (clusters: c1)");
	}
	CHECK(is_zero(&c));
	berth_error_free(err);

	MUST_FAIL("current-context: a\n"
		  "clusters: [{name: c, cluster: {server: https://c}}]\n"
		  "contexts: [{name: a, context: {cluster: c, user: ghost}}]\n",
		  NULL, BERTH_EINVALID,
		  "/k/config:3:50: contexts[0].context.user: user \"ghost\" is not defined (users: none "
		  "defined)");
	MUST_FAIL("contexts:\n- name: a\n  context:\n    user: u\n", "a", BERTH_EMISSING,
		  "/k/config:4:5: contexts[0].context.cluster: is required");
	MUST_FAIL("contexts:\n- name: a\n", "a", BERTH_EMISSING, "/k/config:2:3: contexts[0].context: is required");
	MUST_FAIL("contexts: {a: b}\n", "a", BERTH_ETYPE, "/k/config:1:11: contexts: must be a list, not a map");
	MUST_FAIL("kind: Pod\nmetadata: {name: x}\n", NULL, BERTH_EINVALID,
		  "/k/config:1:7: kind: must be Config, not \"Pod\"");
	/* a namespace goes into API paths and JSON: a name, or nothing */
	MUST_FAIL("current-context: a\n"
		  "clusters: [{name: c, cluster: {server: https://c}}]\n"
		  "contexts: [{name: a, context: {cluster: c, namespace: \"a/../b\"}}]\n",
		  NULL, BERTH_EINVALID,
		  "/k/config:3:56: contexts[0].context.namespace: \"a/../b\" is not a namespace name: it "
		  "must consist of lowercase letters, digits and '-'");
}

#define CTX_HEAD                                                                       \
	"current-context: a\n"                                                         \
	"contexts: [{name: a, context: {cluster: c, user: u}}]\n"                      \
	"users: [{name: u, user: {token: t}}]\n"

#define USER_HEAD                                                                      \
	"current-context: a\n"                                                         \
	"contexts: [{name: a, context: {cluster: c, user: u}}]\n"                      \
	"clusters: [{name: c, cluster: {server: https://c}}]\n"

static void test_kubeconfig_errors_values(void)
{
	kube_config c;
	berth_error *err = NULL;

	MUST_FAIL(CTX_HEAD "clusters:\n"
			   "- name: c\n"
			   "  cluster:\n"
			   "    insecure-skip-tls-verify: true\n",
		  NULL, BERTH_EMISSING, "/k/config:7:5: clusters[0].cluster.server: is required");
	MUST_FAIL(CTX_HEAD "clusters:\n- name: c\n  cluster:\n    server: \"\"\n", NULL,
		  BERTH_EMISSING, "clusters[0].cluster.server: is required");
	MUST_FAIL(CTX_HEAD "clusters:\n- name: c\n", NULL, BERTH_EMISSING,
		  "/k/config:5:3: clusters[0].cluster: is required");
	MUST_FAIL(CTX_HEAD "clusters:\n- name: c\n  cluster:\n    server: 127.0.0.1:6443\n", NULL,
		  BERTH_EINVALID,
		  "/k/config:7:13: clusters[0].cluster.server: \"127.0.0.1:6443\" must start with "
		  "https:// or http://");
	MUST_FAIL(CTX_HEAD "clusters:\n- name: c\n  cluster:\n    server: https://\n", NULL,
		  BERTH_EINVALID, "clusters[0].cluster.server: \"https://\" has no host");
	MUST_FAIL(CTX_HEAD "clusters:\n- name: c\n  cluster:\n    server: https://c\n"
			   "    certificate-authority-data: not*base64\n",
		  NULL, BERTH_EINVALID,
		  "/k/config:8:33: clusters[0].cluster.certificate-authority-data: is not valid base64");
	MUST_FAIL(CTX_HEAD "clusters:\n- name: c\n  cluster:\n    server: https://c\n"
			   "    insecure-skip-tls-verify: maybe\n",
		  NULL, BERTH_EINVALID,
		  "clusters[0].cluster.insecure-skip-tls-verify: must be true or false, not \"maybe\"");

	MUST_FAIL(USER_HEAD "users:\n"
			    "- name: u\n"
			    "  user:\n"
			    "    exec:\n"
			    "      apiVersion: client.authentication.k8s.io/v1beta1\n"
			    "      command: aws\n",
		  NULL, BERTH_EINVALID,
		  "/k/config:7:5: users[0].user.exec: credential plugins are not supported by berth; "
		  "use a token, a token file or a client certificate");
	MUST_FAIL(USER_HEAD "users:\n- name: u\n  user:\n    auth-provider: {name: gcp}\n", NULL,
		  BERTH_EINVALID, "users[0].user.auth-provider: credential plugins are not supported");
	MUST_FAIL(USER_HEAD "users:\n- name: u\n  user:\n    username: admin\n    password: x\n",
		  NULL, BERTH_EINVALID,
		  "users[0].user.username: basic authentication is not supported by berth");
	MUST_FAIL(USER_HEAD "users:\n- name: u\n  user:\n    token: t\n    as: admin\n", NULL,
		  BERTH_EINVALID, "/k/config:8:5: users[0].user.as: impersonation is not supported");
	MUST_FAIL(USER_HEAD "users:\n- name: u\n  user:\n    client-certificate-data: \"@@@@\"\n",
		  NULL, BERTH_EINVALID, "users[0].user.client-certificate-data: is not valid base64");
	MUST_FAIL(USER_HEAD "users:\n- name: u\n  user:\n    client-key-data: aGVsbG8K\n"
			    "    client-certificate-data: aGVsbG8=x\n",
		  NULL, BERTH_EINVALID, "users[0].user.client-certificate-data: is not valid base64");
	MUST_FAIL(USER_HEAD "users:\n- name: u\n  user:\n    client-certificate: c.pem\n", NULL,
		  BERTH_EMISSING, "users[0].user.client-key: a client certificate needs client-key");
	MUST_FAIL(USER_HEAD "users:\n- name: u\n  user:\n    token: [a]\n", NULL, BERTH_ETYPE,
		  "/k/config:7:12: users[0].user.token: must be a string, not a list");

	/* the documents themselves */
	MUST_FAIL("- a\n- b\n", NULL, BERTH_ETYPE, "/k/config:1:1: a kubeconfig must be a map, not a list");
	MUST_FAIL("just a string\n", NULL, BERTH_ETYPE, "a kubeconfig must be a map");
	MUST_FAIL("", NULL, BERTH_EMISSING, "/k/config: the kubeconfig is empty");
	MUST_FAIL("# nothing here\n---\n", NULL, BERTH_EMISSING, "the kubeconfig is empty");
	MUST_FAIL("clusters: [\n", NULL, BERTH_ESYNTAX, "/k/config:");

	/* base64 spread over lines, an inline value overriding the file, unknown
	 * keys ignored, "true" as a string, an int as a token */
	CHECK_INT(parse_ctx(&c,
			    CTX_HEAD "clusters:\n- name: c\n  cluster:\n    server: https://c/api/\n"
				     "    certificate-authority-data: |\n      aGVs\n      bG8K\n"
				     "    certificate-authority: ignored.pem\n"
				     "    insecure-skip-tls-verify: \"true\"\n"
				     "    proxy-url: http://proxy\n"
				     "    extensions: [{name: x, extension: {}}]\n"
				     "preferences: {colors: true}\n"
				     "somethingNew: 1\n",
			    NULL, &err),
		  0);
	dump(err);
	CHECK_STR(c.server, "https://c/api");
	CHECK_INT(c.ca_len, 6);
	CHECK_STR(c.ca_data, "hello\n");
	CHECK(c.ca_file == NULL);
	CHECK(c.insecure);
	CHECK_STR(c.token, "t");
	kube_config_free(&c);
	berth_error_free(err);
	err = NULL;

	CHECK_INT(parse_ctx(&c, USER_HEAD "users: [{name: u, user: {token: 12345, exec: null}}]\n",
			    NULL, &err),
		  0);
	CHECK_STR(c.token, "12345");
	kube_config_free(&c);
	berth_error_free(err);

	/* kube_config_free on a zeroed struct, twice */
	memset(&c, 0, sizeof(c));
	kube_config_free(&c);
	kube_config_free(&c);
	CHECK(is_zero(&c));
}

/* ---- in a pod ---------------------------------------------------------------------------- */

static void test_kubeconfig_in_cluster(void)
{
	saved_env saved;
	char *d = t_temp_dir("berth-kubeconfig");
	kube_config c;
	berth_error *err = NULL;
	int ret;

	if (!d)
		return;
	env_save(&saved);
	write_file(at(d, "token"), "eyJhbGciOi.secret\n");
	write_file(at(d, "ca.crt"), fake_pem);
	write_file(at(d, "namespace"), "  ml-jobs\n");
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "6443", 1);

	ret = kube_config_in_cluster(&c, d, &err);
	CHECK_INT(ret, 0);
	dump(err);
	CHECK_STR(c.context, "in-cluster");
	CHECK_STR(c.server, "https://10.96.0.1:6443");
	CHECK_STR(c.token_file, at(d, "token"));
	CHECK_STR(c.ca_file, at(d, "ca.crt"));
	CHECK_STR(c.namespace, "ml-jobs");
	CHECK(c.token == NULL && c.ca_data == NULL && !c.insecure);
	kube_config_free(&c);
	berth_error_free(err);
	err = NULL;

	/* IPv6, the default port, no ca.crt, no namespace; sa dir from the env */
	unlink(at(d, "ca.crt"));
	unlink(at(d, "namespace"));
	setenv("KUBERNETES_SERVICE_HOST", "fd00:10:96::1", 1);
	unsetenv("KUBERNETES_SERVICE_PORT");
	setenv("BERTH_SERVICEACCOUNT_DIR", d, 1);
	ret = kube_config_in_cluster(&c, NULL, &err);
	CHECK_INT(ret, 0);
	CHECK_STR(c.server, "https://[fd00:10:96::1]:443");
	CHECK(c.ca_file == NULL);
	CHECK_STR(c.namespace, "default");
	CHECK_STR(c.token_file, at(d, "token"));
	kube_config_free(&c);
	berth_error_free(err);
	err = NULL;

	/* no kubeconfig anywhere, in a pod: the service account */
	setenv("KUBECONFIG", at(d, "no-such-file"), 1);
	ret = kube_config_load(&c, NULL, NULL, &err);
	CHECK_INT(ret, 0);
	CHECK_STR(c.context, "in-cluster");
	CHECK_STR(c.server, "https://[fd00:10:96::1]:443");
	kube_config_free(&c);
	berth_error_free(err);
	err = NULL;

	/* a bad port */
	setenv("KUBERNETES_SERVICE_PORT", "https", 1);
	ret = kube_config_in_cluster(&c, d, &err);
	CHECK_INT(ret, -BERTH_EINVALID);
	CHECK(is_zero(&c));
	berth_error_free(err);
	err = NULL;
	unsetenv("KUBERNETES_SERVICE_PORT");

	/* no token */
	unlink(at(d, "token"));
	ret = kube_config_in_cluster(&c, d, &err);
	CHECK_INT(ret, -BERTH_EIO);
	CHECKF(strstr(first(err), "service account token") && strstr(first(err), "/token"), "%s",
	       first(err));
	CHECK(is_zero(&c));
	berth_error_free(err);
	err = NULL;

	/* not in a pod */
	unsetenv("KUBERNETES_SERVICE_HOST");
	ret = kube_config_in_cluster(&c, d, &err);
	CHECK_INT(ret, -BERTH_EMISSING);
	CHECK(is_zero(&c));
	berth_error_free(err);

	env_restore(&saved);
	t_rm_rf(d);
	free(d);
}

static void test_kubeconfig_none(void)
{
	saved_env saved;
	char *d = t_temp_dir("berth-kubeconfig");
	kube_config c;
	berth_error *err = NULL;
	int ret;

	if (!d)
		return;
	env_save(&saved);
	unsetenv("KUBECONFIG");
	unsetenv("KUBERNETES_SERVICE_HOST");
	setenv("HOME", d, 1);
	ret = kube_config_load(&c, NULL, NULL, &err);
	CHECK_INT(ret, -BERTH_EMISSING);
	CHECK_STR(first(err), "no kubeconfig: set KUBECONFIG, pass --kubeconfig, or create "
			      "~/.kube/config (or run in a pod with a service account)");
	CHECK(is_zero(&c));
	berth_error_free(err);
	err = NULL;

	/* a KUBECONFIG of only separators is no list: ~/.kube/config */
	setenv("KUBECONFIG", "::", 1);
	ret = kube_config_load(&c, NULL, NULL, &err);
	CHECK_INT(ret, -BERTH_EMISSING);
	CHECKF(strstr(first(err), "no kubeconfig") != NULL, "%s", first(err));
	berth_error_free(err);

	env_restore(&saved);
	t_rm_rf(d);
	free(d);
}

/* ---- allocation failures ------------------------------------------------------------------ */

static void test_kubeconfig_allocation_failures(void)
{
	saved_env saved;
	char *d = t_temp_dir("berth-kubeconfig");
	char list[2048];
	int done[3] = {0, 0, 0};

	if (!d)
		return;
	env_save(&saved);
	mkdir(at(d, "b"), 0700);
	write_file(at(d, "a"), merge_a);
	write_file(at(d, "b/config"), merge_b);
	write_file(at(d, "token"), "t\n");
	write_file(at(d, "namespace"), "ns\n");
	snprintf(list, sizeof(list), "%s/a:%s/b/config", d, d);
	setenv("KUBECONFIG", list, 1);
	setenv("KUBERNETES_SERVICE_HOST", "::1", 1);

	for (int which = 0; which < 3; which++) {
		for (long n = 1; n < 2000 && !done[which]; n++) {
			kube_config c;
			berth_error *err = NULL;
			int ret;
			berth_fail_alloc_after = n;
			if (which == 0)
				ret = parse_ctx(&c, CTX_HEAD "clusters:\n- name: c\n  cluster:\n"
							     "    server: https://c\n"
							     "    certificate-authority-data: aGVsbG8K\n",
						NULL, &err);
			else if (which == 1)
				ret = kube_config_load(&c, NULL, "y", &err);
			else
				ret = kube_config_in_cluster(&c, d, &err);
			int injected = berth_fail_alloc_after == 0;
			berth_fail_alloc_after = 0;
			if (injected) {
				CHECKF(ret == -BERTH_ENOMEM, "case %d, allocation %ld: %d", which, n,
				       ret);
				CHECK_INT(berth_error_code(err), BERTH_ENOMEM);
				CHECK(is_zero(&c));
			} else {
				CHECK_INT(ret, 0);
				CHECK(c.server != NULL && c.namespace != NULL);
				done[which] = 1;
			}
			kube_config_free(&c);
			berth_error_free(err);
		}
		CHECKF(done[which], "case %d never succeeded", which);
	}

	env_restore(&saved);
	t_rm_rf(d);
	free(d);
}

int main(int argc, char **argv)
{
	static const t_case all[] = {
		T(test_kubectl),
		T(test_kubeconfig_merge),
		T(test_kubeconfig_paths),
		T(test_kubeconfig_errors_context),
		T(test_kubeconfig_errors_values),
		T(test_kubeconfig_in_cluster),
		T(test_kubeconfig_none),
		T(test_kubeconfig_allocation_failures),
	};
	t_case cases[BERTH_ARRAY_SIZE(all)];
	size_t n = 0;
	int have_kubectl = system("command -v kubectl >/dev/null 2>&1") == 0;

	for (size_t i = 0; i < BERTH_ARRAY_SIZE(all); i++) {
		if (all[i].fn == test_kubectl && !have_kubectl) {
			if (argc < 2 || strstr(all[i].name, argv[1]))
				printf("skip kubeconfig-kubectl (no kubectl)\n");
			continue;
		}
		cases[n++] = all[i];
	}
	return t_run(cases, n, argc, argv);
}
