/*
 * kubeconfig.c - where the Kubernetes API server is and who we are to it:
 * a kubeconfig file, the files of $KUBECONFIG merged as kubectl merges them,
 * ~/.kube/config, or the service account of the pod berth runs in.
 *
 * Files are parsed with berth_yaml_parse and read in place. The context,
 * then its cluster and its user, are looked up by name across the files in
 * order, the first file that defines a name winning, which is kubectl's
 * merge; only what the chosen context uses is decoded and checked, and
 * keys berth does not know are ignored, as kubectl ignores them. Errors
 * carry the file, line and column, and the key path
 * ("clusters[0].cluster.server").
 *
 * When a value is given both inline (certificate-authority-data) and as a
 * file (certificate-authority), the inline one is kept and the file name
 * dropped, as client-go does ("certificate-authority-data will override").
 * A token and a tokenFile are both kept as given.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "backend/kubernetes/api.h"
#include "base/names.h"
#include "spec/spec_internal.h" /* QUOTE, is_null */
#include "spec/yaml.h"

#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define CREDENTIAL_HINT "use a token, a token file or a client certificate"

/* One kubeconfig file, parsed. */
typedef struct kfile {
	char *name;            /* as given, for messages */
	char *dir;             /* absolute: where its relative paths start */
	berth_arena *arena;
	const berth_node *root; /* a map; NULL for an empty file */
} kfile;

/* One entry of clusters, users or contexts. */
typedef struct kitem {
	const kfile *f;
	const char *section;   /* "clusters" */
	const char *inner;     /* "cluster" */
	size_t index;
	const berth_node *node; /* the list entry */
	const berth_node *body; /* its inner map (may be NULL or not a map) */
} kitem;

typedef struct kctx {
	kfile *files;
	size_t nfiles;
	berth_error **err;
	int ret; /* the first error (-code), 0 while none */
} kctx;

/* ---- problems ------------------------------------------------------------- */

BERTH_PRINTF(6, 7)
static int fail_at(kctx *c, const kfile *f, berth_pos pos, const char *path, berth_code code,
		   const char *fmt, ...)
{
	va_list ap;
	berth_where w = {f ? f->name : NULL, pos.line, pos.column, path};
	va_start(ap, fmt);
	int ret = berth_problem_vadd(c->err, code, BERTH_ERROR, &w, fmt, ap);
	va_end(ap);
	if (!c->ret)
		c->ret = ret;
	return ret;
}

static int nomem(kctx *c)
{
	int ret = berth_fail(c->err, BERTH_ENOMEM, "out of memory");
	if (!c->ret)
		c->ret = ret;
	return ret;
}

/* "clusters[2].cluster.server" (key NULL: "clusters[2].cluster"). */
static const char *item_path(char *buf, size_t len, const kitem *it, const char *key)
{
	snprintf(buf, len, "%s[%zu].%s%s%s", it->section, it->index, it->inner, key ? "." : "",
		 key ? key : "");
	return buf;
}

#define PATH(it, key) item_path((char[160]){0}, 160, (it), (key))

/* ---- small helpers ------------------------------------------------------------ */

static int is_scalar_text(const berth_node *n)
{
	return n && n->kind == BERTH_NODE_SCALAR && !is_null(n) && n->len > 0 &&
	       strlen(n->u.text) == n->len;
}

/* The value of key in the item's body when it is a non-empty string; NULL
 * when absent, null or empty; an error (and NULL) when it is not a string. */
static const berth_node *get_str(kctx *c, const kitem *it, const char *key)
{
	const berth_node *n = berth_node_get(it->body, key);
	if (!n || is_null(n))
		return NULL;
	if (n->kind != BERTH_NODE_SCALAR) {
		fail_at(c, it->f, n->pos, PATH(it, key), BERTH_ETYPE, "must be a string, not %s",
			berth_node_kind_name(n));
		return NULL;
	}
	if (strlen(n->u.text) != n->len) {
		fail_at(c, it->f, n->pos, PATH(it, key), BERTH_EINVALID, "must not hold a NUL byte");
		return NULL;
	}
	return n->len ? n : NULL;
}

static int set_str(kctx *c, char **dst, const char *s)
{
	free(*dst);
	if (!(*dst = berth_strdup(s)))
		return nomem(c);
	return 0;
}

/* dir made absolute (NULL or "": the working directory); malloc'd. */
static char *abs_dir(const char *dir)
{
	berth_buf b = BERTH_BUF_INIT;
	if (!dir || !*dir)
		dir = ".";
	if (dir[0] != '/') {
		char *cwd = getcwd(NULL, 0);
		if (!cwd)
			return NULL;
		berth_buf_puts(&b, cwd);
		free(cwd);
		if (strcmp(dir, ".") != 0) {
			if (b.len && b.data[b.len - 1] != '/')
				berth_buf_puts(&b, "/");
			berth_buf_puts(&b, dir[0] == '.' && dir[1] == '/' ? dir + 2 : dir);
		}
	} else {
		berth_buf_puts(&b, dir);
	}
	return berth_buf_detach(&b);
}

/* dir/name, without a doubled '/'; malloc'd. */
static char *join(const char *dir, const char *name)
{
	berth_buf b = BERTH_BUF_INIT;
	size_t dl = strlen(dir);
	berth_buf_puts(&b, dir);
	if (!dl || dir[dl - 1] != '/')
		berth_buf_puts(&b, "/");
	berth_buf_puts(&b, name);
	return berth_buf_detach(&b);
}

/* Finds the entry named name in section: the first file, then the first
 * entry, that defines it wins. */
static int find_item(const kctx *c, const char *section, const char *inner, const char *name,
		     kitem *out)
{
	size_t nl = strlen(name);
	for (size_t i = 0; i < c->nfiles; i++) {
		const berth_node *s = berth_node_get(c->files[i].root, section);
		if (!s || s->kind != BERTH_NODE_SEQ)
			continue;
		for (size_t j = 0; j < s->len; j++) {
			const berth_node *e = s->u.items[j];
			const berth_node *n = berth_node_get(e, "name");
			if (!is_scalar_text(n) || n->len != nl || memcmp(n->u.text, name, nl) != 0)
				continue;
			out->f = &c->files[i];
			out->section = section;
			out->inner = inner;
			out->index = j;
			out->node = e;
			out->body = berth_node_get(e, inner);
			return 1;
		}
	}
	return 0;
}

/* The names defined in section across the files, for messages: "a, b". */
static char *names_of(const kctx *c, const char *section)
{
	berth_buf b = BERTH_BUF_INIT;
	for (size_t i = 0; i < c->nfiles; i++) {
		const berth_node *s = berth_node_get(c->files[i].root, section);
		if (!s || s->kind != BERTH_NODE_SEQ)
			continue;
		for (size_t j = 0; j < s->len; j++) {
			const berth_node *name = berth_node_get(s->u.items[j], "name");
			if (!is_scalar_text(name))
				continue;
			/* once each: a later entry of the same name is shadowed */
			kitem first;
			if (find_item(c, section, "", name->u.text, &first) &&
			    (first.f != &c->files[i] || first.index != j))
				continue;
			if (b.len)
				berth_buf_puts(&b, ", ");
			berth_buf_append(&b, name->u.text, name->len);
		}
	}
	if (!b.failed && !b.len)
		berth_buf_puts(&b, "none defined");
	return berth_buf_detach(&b);
}

/* The files for messages: "a" or "a:b". */
static char *files_label(const kctx *c)
{
	berth_buf b = BERTH_BUF_INIT;
	for (size_t i = 0; i < c->nfiles; i++) {
		if (b.len)
			berth_buf_puts(&b, ":");
		berth_buf_puts(&b, c->files[i].name);
	}
	return berth_buf_detach(&b);
}

/* The item's inner map: NULL (after an error when required) if absent. */
static int want_body(kctx *c, const kitem *it, int required)
{
	if (!it->body || is_null(it->body)) {
		if (required)
			return fail_at(c, it->f, it->node->pos, PATH(it, NULL), BERTH_EMISSING,
				       "is required");
		return 0;
	}
	if (it->body->kind != BERTH_NODE_MAP)
		return fail_at(c, it->f, it->body->pos, PATH(it, NULL), BERTH_ETYPE,
			       "must be a map, not %s", berth_node_kind_name(it->body));
	return 1;
}

/* ---- values ------------------------------------------------------------------- */

/* A file name of the kubeconfig, made absolute: "~/" is $HOME, a relative
 * name starts at the directory of the file that holds it. */
static int get_path(kctx *c, const kitem *it, const char *key, char **dst)
{
	const berth_node *n = get_str(c, it, key);
	const char *s;
	char *p;
	if (!n)
		return 0;
	s = n->u.text;
	if (s[0] == '~' && (s[1] == '/' || s[1] == '\0')) {
		const char *home = getenv("HOME");
		if (!home || !*home)
			return fail_at(c, it->f, n->pos, PATH(it, key), BERTH_EINVALID,
				       "%s: cannot expand \"~\": HOME is not set", QUOTE(s));
		p = s[1] ? join(home, s + 2) : berth_strdup(home);
	} else if (s[0] == '/') {
		p = berth_strdup(s);
	} else {
		p = join(it->f->dir, s[0] == '.' && s[1] == '/' ? s + 2 : s);
	}
	if (!p)
		return nomem(c);
	free(*dst);
	*dst = p;
	return 0;
}

/* A base64 value (line breaks and blanks allowed), decoded and
 * NUL-terminated; left NULL when empty. */
static int get_base64(kctx *c, const kitem *it, const char *key, char **dst, size_t *len)
{
	const berth_node *n = get_str(c, it, key);
	size_t max, got = 0;
	unsigned char *bin;
	if (!n)
		return 0;
	max = n->len / 4 * 3 + 3;
	if (!(bin = berth_malloc(max + 1)))
		return nomem(c);
	if (sodium_base642bin(bin, max, n->u.text, n->len, "\n\r \t", &got, NULL,
			      sodium_base64_VARIANT_ORIGINAL) != 0) {
		free(bin);
		return fail_at(c, it->f, n->pos, PATH(it, key), BERTH_EINVALID,
			       "is not valid base64");
	}
	if (!got) {
		free(bin);
		return 0;
	}
	bin[got] = '\0';
	free(*dst);
	*dst = (char *)bin;
	*len = got;
	return 0;
}

/* true or false; the strings "true" and "false" too. */
static int get_bool(kctx *c, const kitem *it, const char *key, bool *dst)
{
	const berth_node *n = berth_node_get(it->body, key);
	if (!n || is_null(n))
		return 0;
	if (n->kind == BERTH_NODE_SCALAR &&
	    (n->type == BERTH_SCALAR_BOOL || n->type == BERTH_SCALAR_STR)) {
		if (strcasecmp(n->u.text, "true") == 0) {
			*dst = true;
			return 0;
		}
		if (strcasecmp(n->u.text, "false") == 0) {
			*dst = false;
			return 0;
		}
	}
	return fail_at(c, it->f, n->pos, PATH(it, key), BERTH_EINVALID,
		       "must be true or false, not %s",
		       n->kind == BERTH_NODE_SCALAR ? QUOTE(n->u.text) : berth_node_kind_name(n));
}

/* ---- the parts of a context ------------------------------------------------------ */

static void decode_cluster(kctx *c, const kitem *it, kube_config *out)
{
	const berth_node *n;
	if (want_body(c, it, 1) <= 0)
		return;

	n = berth_node_get(it->body, "server");
	if (!n || is_null(n) || (n->kind == BERTH_NODE_SCALAR && n->len == 0)) {
		fail_at(c, it->f, n ? n->pos : it->body->pos, PATH(it, "server"), BERTH_EMISSING,
			"is required");
	} else if ((n = get_str(c, it, "server"))) {
		const char *s = n->u.text;
		size_t skip = strncasecmp(s, "https://", 8) == 0  ? 8
			      : strncasecmp(s, "http://", 7) == 0 ? 7
								  : 0;
		if (!skip)
			fail_at(c, it->f, n->pos, PATH(it, "server"), BERTH_EINVALID,
				"%s must start with https:// or http://", QUOTE(s));
		else if (!s[skip] || s[skip] == '/')
			fail_at(c, it->f, n->pos, PATH(it, "server"), BERTH_EINVALID,
				"%s has no host", QUOTE(s));
		else if (set_str(c, &out->server, s) == 0 && out->server[n->len - 1] == '/')
			out->server[n->len - 1] = '\0';
	}

	if ((n = get_str(c, it, "tls-server-name")))
		set_str(c, &out->tls_server_name, n->u.text);
	get_bool(c, it, "insecure-skip-tls-verify", &out->insecure);
	get_base64(c, it, "certificate-authority-data", &out->ca_data, &out->ca_len);
	if (!out->ca_data)
		get_path(c, it, "certificate-authority", &out->ca_file);
	else
		get_str(c, it, "certificate-authority"); /* type checked, then overridden */
}

/* The key (not its value) of a key whose presence is refused, when it is
 * given a value that is not null or empty. */
static const berth_node *given(const kitem *it, const char *key)
{
	size_t kl = strlen(key);
	for (size_t i = 0; i < it->body->len; i++) {
		const berth_node_pair *p = &it->body->u.pairs[i];
		if (p->key->len != kl || memcmp(p->key->u.text, key, kl) != 0)
			continue;
		if (is_null(p->value) || p->value->len == 0)
			return NULL;
		return p->key;
	}
	return NULL;
}

static void decode_user(kctx *c, const kitem *it, kube_config *out)
{
	static const char *const plugins[] = {"exec", "auth-provider"};
	static const char *const basic[] = {"username", "password"};
	static const char *const imp[] = {"as", "as-uid", "as-groups", "as-user-extra"};
	const berth_node *n;

	if (want_body(c, it, 0) <= 0)
		return;
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(plugins); i++)
		if ((n = given(it, plugins[i])))
			fail_at(c, it->f, n->pos, PATH(it, plugins[i]), BERTH_EINVALID,
				"credential plugins are not supported by berth; " CREDENTIAL_HINT);
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(basic); i++)
		if ((n = given(it, basic[i]))) {
			fail_at(c, it->f, n->pos, PATH(it, basic[i]), BERTH_EINVALID,
				"basic authentication is not supported by berth; " CREDENTIAL_HINT);
			break;
		}
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(imp); i++)
		if ((n = given(it, imp[i]))) {
			fail_at(c, it->f, n->pos, PATH(it, imp[i]), BERTH_EINVALID,
				"impersonation is not supported by berth");
			break;
		}

	if ((n = get_str(c, it, "token")))
		set_str(c, &out->token, n->u.text);
	get_path(c, it, "tokenFile", &out->token_file);

	get_base64(c, it, "client-certificate-data", &out->cert_data, &out->cert_len);
	if (!out->cert_data)
		get_path(c, it, "client-certificate", &out->cert_file);
	else
		get_str(c, it, "client-certificate");
	get_base64(c, it, "client-key-data", &out->key_data, &out->key_len);
	if (!out->key_data)
		get_path(c, it, "client-key", &out->key_file);
	else
		get_str(c, it, "client-key");
	if (c->ret)
		return;
	if ((out->cert_data || out->cert_file) && !(out->key_data || out->key_file))
		fail_at(c, it->f, it->body->pos, PATH(it, "client-key"), BERTH_EMISSING,
			"a client certificate needs client-key or client-key-data");
	else if ((out->key_data || out->key_file) && !(out->cert_data || out->cert_file))
		fail_at(c, it->f, it->body->pos, PATH(it, "client-certificate"), BERTH_EMISSING,
			"a client key needs client-certificate or client-certificate-data");
}

/* ---- a context ------------------------------------------------------------------ */

/* The top-level checks of one file: kind, and the shape of the lists. */
static void check_file(kctx *c, const kfile *f)
{
	static const char *const lists[] = {"clusters", "users", "contexts"};
	const berth_node *n = berth_node_get(f->root, "kind");
	if (is_scalar_text(n) && strcmp(n->u.text, "Config") != 0)
		fail_at(c, f, n->pos, "kind", BERTH_EINVALID,
			"must be Config, not %s: this is not a kubeconfig", QUOTE(n->u.text));
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(lists); i++) {
		n = berth_node_get(f->root, lists[i]);
		if (n && !is_null(n) && n->kind != BERTH_NODE_SEQ)
			fail_at(c, f, n->pos, lists[i], BERTH_ETYPE, "must be a list, not %s",
				berth_node_kind_name(n));
	}
	n = berth_node_get(f->root, "current-context");
	if (n && n->kind != BERTH_NODE_SCALAR)
		fail_at(c, f, n->pos, "current-context", BERTH_ETYPE, "must be a string, not %s",
			berth_node_kind_name(n));
}

/* A reference from the context to a cluster or a user. */
static int find_ref(kctx *c, const kitem *ctx, const berth_node *ref, const char *section,
		    const char *inner, kitem *out)
{
	char *names;
	if (find_item(c, section, inner, ref->u.text, out))
		return 0;
	if (!(names = names_of(c, section)))
		return nomem(c);
	fail_at(c, ctx->f, ref->pos, PATH(ctx, inner), BERTH_EINVALID,
		"%s %s is not defined (%s: %s)", inner, QUOTE(ref->u.text), section, names);
	free(names);
	return c->ret;
}

/* Picks the context and fills out from it, its cluster and its user. */
static int resolve(kctx *c, const char *context, kube_config *out)
{
	const berth_node *cur = NULL, *n;
	kitem ctx, cluster, user;
	int has_user = 0;

	if (sodium_init() < 0)
		return berth_fail(c->err, BERTH_EINTERNAL, "libsodium cannot start");
	for (size_t i = 0; i < c->nfiles; i++)
		check_file(c, &c->files[i]);
	if (c->ret)
		return c->ret;

	if (!context) {
		for (size_t i = 0; i < c->nfiles && !cur; i++) {
			n = berth_node_get(c->files[i].root, "current-context");
			if (is_scalar_text(n)) {
				cur = n;
				if (!find_item(c, "contexts", "context", n->u.text, &ctx)) {
					char *names = names_of(c, "contexts");
					if (!names)
						return nomem(c);
					fail_at(c, &c->files[i], n->pos, "current-context",
						BERTH_EINVALID,
						"context %s is not defined; pass --context NAME "
						"(contexts: %s)",
						QUOTE(n->u.text), names);
					free(names);
					return c->ret;
				}
			}
		}
		if (!cur) {
			char *names = names_of(c, "contexts"), *label = files_label(c);
			if (names && label)
				berth_fail(c->err, BERTH_EMISSING,
					   "kubeconfig %s: no current-context; pass --context NAME "
					   "(contexts: %s)",
					   label, names);
			else
				nomem(c);
			free(names);
			free(label);
			return c->ret ? c->ret : -BERTH_EMISSING;
		}
		context = cur->u.text;
	} else if (!find_item(c, "contexts", "context", context, &ctx)) {
		char *names = names_of(c, "contexts"), *label = files_label(c);
		if (names && label)
			berth_fail(c->err, BERTH_EARG, "no context %s in kubeconfig %s (contexts: %s)",
				   QUOTE(context), label, names);
		else
			nomem(c);
		free(names);
		free(label);
		return c->ret ? c->ret : -BERTH_EARG;
	}
	if (set_str(c, &out->context, context) < 0)
		return c->ret;

	if (want_body(c, &ctx, 1) <= 0)
		return c->ret;
	n = get_str(c, &ctx, "cluster");
	if (!n && !c->ret)
		return fail_at(c, ctx.f, ctx.body->pos, PATH(&ctx, "cluster"), BERTH_EMISSING,
			       "is required");
	if (!n || find_ref(c, &ctx, n, "clusters", "cluster", &cluster) < 0)
		return c->ret;
	if ((n = get_str(c, &ctx, "user"))) {
		if (find_ref(c, &ctx, n, "users", "user", &user) < 0)
			return c->ret;
		has_user = 1;
	}
	n = get_str(c, &ctx, "namespace");
	/* it goes into API paths: a name, or the context is refused here */
	const char *why = n ? berth_check_dns_label(n->u.text) : NULL;
	if (why)
		return fail_at(c, ctx.f, n->pos, PATH(&ctx, "namespace"), BERTH_EINVALID,
			       "\"%.100s\" is not a namespace name: it %s", n->u.text, why);
	if (set_str(c, &out->namespace, n ? n->u.text : "default") < 0)
		return c->ret;

	decode_cluster(c, &cluster, out);
	if (has_user)
		decode_user(c, &user, out);
	return c->ret;
}

/* ---- files ------------------------------------------------------------------------ */

static void kfile_release(kfile *f)
{
	free(f->name);
	free(f->dir);
	berth_arena_free(f->arena);
	memset(f, 0, sizeof(*f));
}

/* Parses text into f; an empty document leaves f->root NULL. */
static int kfile_parse(kfile *f, const char *name, const char *text, size_t len, const char *dir,
		       berth_error **err)
{
	berth_yaml_doc *docs = NULL;
	size_t ndocs = 0;
	int ret;

	memset(f, 0, sizeof(*f));
	if (!(f->name = berth_strdup(name)) || !(f->dir = abs_dir(dir)) ||
	    !(f->arena = berth_arena_new())) {
		ret = berth_fail(err, BERTH_ENOMEM, "out of memory");
	} else if ((ret = berth_yaml_parse(f->arena, name, text, len, &docs, &ndocs, err)) < 0) {
		/* the problems are in *err */
	} else if (!ndocs || !docs[0].root || is_null(docs[0].root)) {
		return 0;
	} else if (docs[0].root->kind != BERTH_NODE_MAP) {
		berth_where w = {name, docs[0].root->pos.line, docs[0].root->pos.column, NULL};
		ret = berth_problem_add(err, BERTH_ETYPE, BERTH_ERROR, &w,
					"a kubeconfig must be a map, not %s",
					berth_node_kind_name(docs[0].root));
	} else {
		f->root = docs[0].root;
		return 0;
	}
	kfile_release(f);
	return ret;
}

static int kfile_empty(const char *name, berth_error **err)
{
	berth_where w = {name, 0, 0, NULL};
	return berth_problem_add(err, BERTH_EMISSING, BERTH_ERROR, &w, "the kubeconfig is empty");
}

/* Reads and parses path into f. With optional, a missing file is skipped:
 * returns 1. */
static int kfile_load(kfile *f, const char *path, int optional, berth_error **err)
{
	struct stat st;
	char *text = NULL, *dir;
	const char *slash;
	size_t len = 0;
	int ret;

	memset(f, 0, sizeof(*f));
	if (stat(path, &st) != 0) {
		if (optional && (errno == ENOENT || errno == ENOTDIR))
			return 1;
	} else if (S_ISDIR(st.st_mode)) {
		return berth_fail(err, BERTH_EIO, "kubeconfig \"%s\" is a directory", path);
	}
	if ((ret = berth_read_file(path, BERTH_YAML_MAX_BYTES, &text, &len, err)) < 0)
		return ret;
	slash = strrchr(path, '/');
	if (!slash)
		dir = berth_strdup(".");
	else
		dir = berth_strndup(path, slash == path ? 1 : (size_t)(slash - path));
	if (!dir) {
		free(text);
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	ret = kfile_parse(f, path, text, len, dir, err);
	free(dir);
	free(text);
	return ret;
}

static int in_pod(void)
{
	const char *h = getenv("KUBERNETES_SERVICE_HOST");
	return h && *h;
}

/* Loads the files of list (':'-separated, modified in place; NULL: the one
 * file home_cfg), skipping missing and empty ones; *first_empty receives
 * the name of the first empty one. */
static int load_files(kctx *c, char *list, const char *home_cfg, char **first_empty)
{
	char *p = list, *next;
	int ret;

	if (!list) {
		if (!home_cfg)
			return 0;
		p = (char *)home_cfg;
	}
	for (; p; p = next) {
		kfile *f = &c->files[c->nfiles];
		next = list ? strchr(p, ':') : NULL;
		if (next)
			*next++ = '\0';
		if (!*p)
			continue;
		if ((ret = kfile_load(f, p, 1, c->err)) < 0)
			return ret;
		if (ret == 1)
			continue;
		if (f->root) {
			c->nfiles++;
			continue;
		}
		/* an empty file adds nothing, as in kubectl */
		if (!*first_empty && !(*first_empty = berth_strdup(p)))
			return nomem(c);
		kfile_release(f);
	}
	return 0;
}

int kube_config_load(kube_config *out, const char *path, const char *context, berth_error **err)
{
	kctx c = {NULL, 0, err, 0};
	const char *env = getenv("KUBECONFIG");
	char *list = NULL, *home_cfg = NULL, *first_empty = NULL;
	size_t slots = 1;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	if (!path && env && strspn(env, ":") < strlen(env)) {
		for (const char *p = env; *p; p++)
			slots += *p == ':';
		if (!(list = berth_strdup(env)))
			return berth_fail(err, BERTH_ENOMEM, "out of memory");
	} else if (!path) {
		const char *home = getenv("HOME");
		if (home && *home && !(home_cfg = join(home, ".kube/config")))
			return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	if (!(c.files = berth_calloc(slots, sizeof(*c.files)))) {
		ret = berth_fail(err, BERTH_ENOMEM, "out of memory");
		goto done;
	}

	if (path) {
		if ((ret = kfile_load(&c.files[0], path, 0, err)) < 0)
			goto done;
		c.nfiles = 1;
		if (!c.files[0].root) {
			ret = kfile_empty(path, err);
			goto done;
		}
	} else {
		if ((ret = load_files(&c, list, home_cfg, &first_empty)) < 0)
			goto done;
		if (!c.nfiles) {
			if (in_pod())
				ret = kube_config_in_cluster(out, NULL, err);
			else if (first_empty)
				ret = kfile_empty(first_empty, err);
			else
				ret = berth_fail(err, BERTH_EMISSING,
						 "no kubeconfig: set KUBECONFIG, pass --kubeconfig, or "
						 "create ~/.kube/config (or run in a pod with a service "
						 "account)");
			goto done;
		}
	}
	ret = resolve(&c, context, out);
done:
	for (size_t i = 0; c.files && i < c.nfiles; i++)
		kfile_release(&c.files[i]);
	free(c.files);
	free(list);
	free(home_cfg);
	free(first_empty);
	if (ret < 0)
		kube_config_free(out);
	return ret;
}

int kube_config_parse(kube_config *out, const char *name, const char *text, size_t len,
		      const char *dir, const char *context, berth_error **err)
{
	kfile f;
	kctx c = {&f, 1, err, 0};
	int ret;

	memset(out, 0, sizeof(*out));
	if (!name)
		name = "kubeconfig";
	ret = kfile_parse(&f, name, text, len, dir, err);
	if (ret >= 0 && !f.root)
		ret = kfile_empty(name, err);
	if (ret >= 0)
		ret = resolve(&c, context, out);
	kfile_release(&f);
	if (ret < 0)
		kube_config_free(out);
	return ret;
}

/* ---- in a pod ------------------------------------------------------------------------- */

int kube_config_in_cluster(kube_config *out, const char *sa_dir, berth_error **err)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	berth_buf b = BERTH_BUF_INIT;
	char *dir = NULL, *ns_file = NULL;
	struct stat st;
	int ret = 0, fd;

	memset(out, 0, sizeof(*out));
	if (!host || !*host)
		return berth_fail(err, BERTH_EMISSING,
				  "not in a pod: KUBERNETES_SERVICE_HOST is not set");
	if (!port || !*port)
		port = "443";
	if (strspn(port, "0123456789") != strlen(port) || strlen(port) > 5 ||
	    strtol(port, NULL, 10) < 1 || strtol(port, NULL, 10) > 65535)
		return berth_fail(err, BERTH_EINVALID,
				  "KUBERNETES_SERVICE_PORT \"%s\" is not a port number", port);
	if (!sa_dir) {
		sa_dir = getenv("BERTH_SERVICEACCOUNT_DIR");
		if (!sa_dir || !*sa_dir)
			sa_dir = SA_DIR;
	}

	if (strchr(host, ':') && host[0] != '[')
		berth_buf_printf(&b, "https://[%s]:%s", host, port);
	else
		berth_buf_printf(&b, "https://%s:%s", host, port);
	if (!(out->server = berth_buf_detach(&b)) || !(dir = abs_dir(sa_dir)) ||
	    !(out->token_file = join(dir, "token")) || !(out->ca_file = join(dir, "ca.crt")) ||
	    !(ns_file = join(dir, "namespace")) || !(out->context = berth_strdup("in-cluster"))) {
		ret = berth_fail(err, BERTH_ENOMEM, "out of memory");
		goto done;
	}

	fd = open(out->token_file, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		int e = fd < 0 ? errno : EISDIR;
		ret = berth_fail(err, BERTH_EIO, "service account token \"%s\" cannot be read: %s",
				 out->token_file, strerror(e));
		if (fd >= 0)
			close(fd);
		goto done;
	}
	close(fd);

	if (stat(out->ca_file, &st) != 0 || !S_ISREG(st.st_mode)) {
		free(out->ca_file);
		out->ca_file = NULL;
	}

	/* as client-go: a namespace file that cannot be read means "default" */
	if (stat(ns_file, &st) == 0 && S_ISREG(st.st_mode)) {
		berth_error *nerr = NULL;
		char *text = NULL;
		size_t len = 0;
		if (berth_read_file(ns_file, 4096, &text, &len, &nerr) == 0) {
			size_t s = 0;
			while (s < len && text[s] && strchr(" \t\r\n", text[s]))
				s++;
			while (len > s && text[len - 1] && strchr(" \t\r\n", text[len - 1]))
				len--;
			if (len > s && !memchr(text + s, '\0', len - s) &&
			    !(out->namespace = berth_strndup(text + s, len - s)))
				ret = berth_fail(err, BERTH_ENOMEM, "out of memory");
		} else if (berth_error_code(nerr) == BERTH_ENOMEM) {
			ret = berth_fail(err, BERTH_ENOMEM, "out of memory");
		}
		free(text);
		berth_error_free(nerr);
		if (ret < 0)
			goto done;
	}
	if (!out->namespace && !(out->namespace = berth_strdup("default")))
		ret = berth_fail(err, BERTH_ENOMEM, "out of memory");
done:
	free(dir);
	free(ns_file);
	if (ret < 0)
		kube_config_free(out);
	return ret;
}

void kube_config_free(kube_config *c)
{
	if (!c)
		return;
	free(c->context);
	free(c->server);
	free(c->tls_server_name);
	if (c->ca_data)
		sodium_memzero(c->ca_data, c->ca_len);
	free(c->ca_data);
	free(c->ca_file);
	if (c->token)
		sodium_memzero(c->token, strlen(c->token));
	free(c->token);
	free(c->token_file);
	if (c->cert_data)
		sodium_memzero(c->cert_data, c->cert_len);
	free(c->cert_data);
	if (c->key_data)
		sodium_memzero(c->key_data, c->key_len);
	free(c->key_data);
	free(c->cert_file);
	free(c->key_file);
	free(c->namespace);
	memset(c, 0, sizeof(*c));
}
