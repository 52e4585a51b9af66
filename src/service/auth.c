/*
 * auth.c - tokens and roles (berth/project.h).
 *
 * A token is "berth_" and 32 random bytes in base64url; the store keeps its
 * BLAKE2b hash (libsodium crypto_generichash), never the token, so a copy of
 * the database opens nothing. A token is found by its hash; its high entropy
 * makes a timing attack on the lookup pointless. The rules of who may do what
 * are the table below and berth_principal_may(): one place for the server.
 */
#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "backend/runtime.h"
#include "berth/project.h"
#include "base/internal.h"
#include "base/names.h"
#include "plan/policy_internal.h"
#include "render/emit.h"
#include "service/output.h"

#define TOKEN_PREFIX "berth_"
#define TOKEN_BYTES 32
#define TOKEN_USE_GRAIN_MS 60000 /* how close a token's last_used is kept */

static const char *const role_names[] = {"none", "viewer", "user", "admin"};

const char *berth_role_name(berth_role r)
{
	return (unsigned)r < BERTH_ARRAY_SIZE(role_names) ? role_names[r] : "none";
}

berth_role berth_role_parse(const char *name)
{
	for (size_t i = 1; name && i < BERTH_ARRAY_SIZE(role_names); i++)
		if (!strcmp(name, role_names[i]))
			return (berth_role)i;
	return BERTH_ROLE_NONE;
}

berth_role berth_policy_secret_writers(const berth_policy *policy)
{
	const char *w = policy ? policy->security.secret_writers.s : NULL;
	/* the load refused anything else; admin is what a missing or odd one means */
	return w && !strcmp(w, "user") ? BERTH_ROLE_USER : BERTH_ROLE_ADMIN;
}

void berth_principal_free(berth_principal *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nprojects; i++)
		free(p->projects[i]);
	free(p->projects);
	free(p->token_id);
	free(p);
}

int berth_principal_may(const berth_principal *p, const char *project, berth_role need,
			berth_error **err)
{
	const char *who = p->token_id ? "this token" : "an anonymous request";
	bool member = p->all;
	for (size_t i = 0; !member && project && i < p->nprojects; i++)
		member = !strcmp(p->projects[i], project);
	if (!member)
		return project ? berth_fail(err, BERTH_EFORBIDDEN, "%s has no access to project \"%s\"",
					    who, project)
			       : berth_fail(err, BERTH_EFORBIDDEN,
					    "%s is not for every project (\"*\"), which this needs", who);
	if (p->role < need)
		return berth_fail(err, BERTH_EFORBIDDEN, "%s is a %s%s%s%s; this needs the role %s", who,
				  berth_role_name(p->role), project ? " of project \"" : "",
				  project ? project : "", project ? "\"" : "", berth_role_name(need));
	return 0;
}

static void token_hash(const char *token, unsigned char out[STORE_TOKEN_HASH])
{
	crypto_generichash(out, STORE_TOKEN_HASH, (const unsigned char *)token, strlen(token), NULL,
			   0);
}

/* berth_token_create, the token made by the token maker (NULL: by a command). */
static int token_create(berth_backend *b, const berth_token_new *nt, const char *maker,
			char **token, char **id, berth_error **err)
{
	*token = NULL;
	if (id)
		*id = NULL;
	if (nt->role == BERTH_ROLE_NONE || nt->role > BERTH_ROLE_ADMIN)
		return berth_fail(err, BERTH_EARG, "a token needs a role: viewer, user or admin");
	if (!nt->nprojects)
		return berth_fail(err, BERTH_EARG, "a token needs at least one project (\"*\": all)");
	if (nt->nprojects > BERTH_TOKEN_PROJECTS_MAX)
		return berth_fail(err, BERTH_EARG, "a token has %d projects at most, not %zu",
				  BERTH_TOKEN_PROJECTS_MAX, nt->nprojects);
	if (nt->description && strlen(nt->description) > BERTH_TOKEN_DESCRIPTION_MAX)
		return berth_fail(err, BERTH_EARG, "a token's description is %d bytes at most",
				  BERTH_TOKEN_DESCRIPTION_MAX);
	/* shown by berth token list and the UI: no escape sequence reaches a terminal */
	if (nt->description && berth_check_printable(nt->description))
		return berth_fail(err, BERTH_EARG, "a token's description %s",
				  berth_check_printable(nt->description));
	if (nt->expires < 0)
		return berth_fail(err, BERTH_EARG, "a token's expiry is a time after 1970");
	if (sodium_init() < 0)
		return berth_fail(err, BERTH_EINTERNAL, "libsodium cannot start");
	size_t n = nt->nprojects;
	const char *const *projects = nt->projects;
	berth_buf list = BERTH_BUF_INIT;
	for (size_t i = 0; i < n; i++) {
		const char *why = strcmp(projects[i], "*") ? berth_check_dns_label(projects[i]) : NULL;
		if (why) {
			berth_buf_release(&list);
			return berth_fail(err, BERTH_EINVALID, "project name \"%s\" %s", projects[i], why);
		}
		berth_buf_printf(&list, "%s%s", i ? "," : "", projects[i]);
	}
	unsigned char raw[TOKEN_BYTES];
	char text[sizeof(TOKEN_PREFIX) + 64], tid[16];
	store_token t = {.id = tid, .role = nt->role, .projects = list.data,
			 .description = (char *)nt->description, .created = store_now_ms(),
			 .expires = nt->expires, .maker = (char *)maker};
	randombytes_buf(raw, sizeof(raw));
	memcpy(text, TOKEN_PREFIX, sizeof(TOKEN_PREFIX) - 1);
	sodium_bin2base64(text + sizeof(TOKEN_PREFIX) - 1, sizeof(text) - sizeof(TOKEN_PREFIX) + 1,
			  raw, sizeof(raw), sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	sodium_memzero(raw, sizeof(raw));
	token_hash(text, t.hash);
	int rc = berth_run_id_new(tid, sizeof(tid)) < 0
			 ? berth_fail(err, BERTH_EIO, "cannot make a token id")
			 : 0;
	if (!rc && list.failed)
		rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
	int64_t made_max = BERTH_TOKENS_MADE_MAX, live_max = BERTH_TOKENS_LIVE_MAX;
#ifdef BERTH_FAULT_INJECTION
	/* tests: lower caps, reached with a few requests */
	const char *cap = getenv("BERTH_TEST_TOKENS_MADE_MAX");
	made_max = cap ? strtoll(cap, NULL, 10) : made_max;
	cap = getenv("BERTH_TEST_TOKENS_LIVE_MAX");
	live_max = cap ? strtoll(cap, NULL, 10) : live_max;
#endif
	if (!rc)
		rc = store_token_insert(b->st, &t, made_max, live_max, err);
	for (size_t i = 0; rc >= 0 && i < n; i++)
		if (strcmp(projects[i], "*"))
			store_project_add(b->st, projects[i], NULL);
	berth_buf_release(&list);
	if (rc < 0) {
		sodium_memzero(text, sizeof(text));
		return rc;
	}
	*token = berth_strdup(text);
	sodium_memzero(text, sizeof(text));
	if (!*token || (id && !(*id = berth_strdup(tid)))) {
		free(*token);
		*token = NULL;
		return berth_fail(err, BERTH_ENOMEM, "out of memory");
	}
	return 0;
}

int berth_token_create(berth_backend *b, const berth_token_new *nt, char **token, char **id,
		       berth_error **err)
{
	return token_create(b, nt, NULL, token, id, err);
}

int berth_token_create_for(berth_backend *b, const berth_principal *who, const berth_token_new *t,
			   char **token, char **id, berth_error **err)
{
	*token = NULL;
	if (id)
		*id = NULL;
	/* an admin grants only what it holds: its own projects; a "*" token and an
	 * admin token (which could grant more in turn) only an admin of every project */
	bool all_admin = !berth_principal_may(who, NULL, BERTH_ROLE_ADMIN, NULL);
	int rc;
	for (size_t i = 0; i < t->nprojects; i++)
		if (!strcmp(t->projects[i], "*") && !all_admin)
			return berth_fail(err, BERTH_EFORBIDDEN,
					  "a token for every project (\"*\") is made by an admin of every "
					  "project only");
		else if ((rc = berth_principal_may(who, t->projects[i], BERTH_ROLE_ADMIN, err)))
			return rc;
	if (t->role == BERTH_ROLE_ADMIN && !all_admin)
		return berth_fail(err, BERTH_EFORBIDDEN, "an admin token is made by an admin of every "
							 "project (\"*\") only; this token may make "
							 "user and viewer tokens of its projects");
	/* and it outlives none of them: a token lent for a day makes none for a year */
	if (who->expires && (!t->expires || t->expires > who->expires)) {
		char when[40];
		berth_format_time(when, sizeof(when), who->expires);
		return berth_fail(err, BERTH_EARG, "this token expires at %s: the tokens it makes "
						   "expire by then (give an expiry)", when);
	}
	/* and it goes with its maker: revoking who revokes it too */
	return token_create(b, t, who->token_id, token, id, err);
}

int berth_token_expiry(const char *expires_in, const char *expires, int64_t now_ms, int64_t *out,
		       berth_error **err)
{
	*out = 0;
	if (expires_in && expires)
		return berth_fail(err, BERTH_EARG, "a token's expiry is expires_in or expires, not both");
	if (expires_in) {
		int64_t ms;
		int rc = berth_duration_parse(expires_in, &ms, err);
		if (rc)
			return rc;
		if (!ms)
			return berth_fail(err, BERTH_EARG, "expires_in \"%s\" is no time: a token "
							   "that never expires has none", expires_in);
		*out = now_ms + ms;
		return 0;
	}
	if (expires) {
		size_t used = 0;
		int64_t ms;
		if (berth_time_parse(expires, strlen(expires), &ms, &used) || expires[used])
			return berth_fail(err, BERTH_EARG, "expires \"%s\" is not an RFC 3339 time "
							   "(2027-01-31T00:00:00Z)", expires);
		if (ms <= now_ms)
			return berth_fail(err, BERTH_EARG, "expires \"%s\" is past", expires);
		*out = ms;
	}
	return 0;
}

/* Splits "a,b,c" into p's projects ("*": all). */
static int set_projects(berth_principal *p, const char *list)
{
	for (const char *s = list; s && *s;) {
		const char *comma = strchr(s, ',');
		size_t len = comma ? (size_t)(comma - s) : strlen(s);
		if (len == 1 && *s == '*')
			p->all = true;
		else {
			char **grown = berth_realloc(p->projects, (p->nprojects + 1) * sizeof(char *));
			if (!grown)
				return -1;
			p->projects = grown;
			if (!(p->projects[p->nprojects] = berth_malloc(len + 1)))
				return -1;
			memcpy(p->projects[p->nprojects], s, len);
			p->projects[p->nprojects++][len] = 0;
		}
		s = comma ? comma + 1 : NULL;
	}
	return 0;
}

int berth_token_check(berth_backend *b, const char *token, berth_principal **out,
		      berth_error **err)
{
	*out = NULL;
	if (!token || strncmp(token, TOKEN_PREFIX, sizeof(TOKEN_PREFIX) - 1) || strlen(token) > 200)
		return berth_fail(err, BERTH_EAUTH, "not a berth token");
	unsigned char hash[STORE_TOKEN_HASH];
	token_hash(token, hash);
	store_token *t = NULL;
	int rc = store_token_find(b->st, hash, &t, err);
	int64_t now = store_now_ms();
	char when[40];
	/* only the holder of the token itself (its hash matched) learns why it is refused */
	if (!rc && !t)
		rc = berth_fail(err, BERTH_EAUTH, "unknown or revoked token");
	else if (!rc && t->revoked) {
		berth_format_time(when, sizeof(when), t->revoked);
		rc = berth_fail(err, BERTH_EAUTH, "token %s revoked at %s", t->id, when);
	} else if (!rc && t->expires && t->expires <= now) {
		berth_format_time(when, sizeof(when), t->expires);
		rc = berth_fail(err, BERTH_EAUTH, "token %s expired at %s", t->id, when);
	}
	/* its last use, to a minute: one write a minute per token, not one a request */
	if (!rc && now - t->last_used >= TOKEN_USE_GRAIN_MS)
		store_token_touch(b->st, t->id, now, NULL);
	berth_principal *p = NULL;
	if (!rc && (!(p = berth_calloc(1, sizeof(*p))) || !(p->token_id = berth_strdup(t->id)) ||
		    set_projects(p, t->projects)))
		rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
	if (!rc) {
		p->role = (berth_role)t->role;
		p->expires = t->expires;
	}
	store_token_free(t);
	if (rc) {
		berth_principal_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

/* Whether every project of list ("a,b"; "*": all) is one of who's. */
static bool projects_within(const char *list, const berth_principal *who)
{
	if (who->all)
		return true;
	for (const char *s = list; s && *s;) {
		size_t len = strcspn(s, ",");
		bool found = false;
		for (size_t i = 0; !found && i < who->nprojects; i++)
			found = strlen(who->projects[i]) == len && !strncmp(who->projects[i], s, len);
		if (!found)
			return false; /* "*" too: it is no project's name */
		s += len + (s[len] == ',');
	}
	return true;
}

int berth_token_list(berth_backend *b, berth_format fmt, char **out, size_t *len,
		     berth_error **err)
{
	return berth_token_list_for(b, NULL, fmt, out, len, err);
}

int berth_token_list_for(berth_backend *b, const berth_principal *who, berth_format fmt,
			 char **out, size_t *len, berth_error **err)
{
	*out = NULL;
	*len = 0;
	store_token *list;
	size_t n;
	int rc = store_token_list(b->st, &list, &n, err);
	if (rc)
		return rc;
	obuild ob = {.arena = berth_arena_new()};
	onode *seq = ob.arena ? o_root(&ob, O_SEQ) : NULL;
	for (size_t i = 0; seq && i < n; i++) {
		const store_token *t = &list[i];
		if (who && !projects_within(t->projects, who))
			continue;
		onode *m = o_map(&ob, seq, NULL);
		o_str(&ob, m, "id", t->id);
		/* a role this berth does not know is left out */
		if (t->role > BERTH_ROLE_NONE && t->role <= BERTH_ROLE_ADMIN)
			o_str(&ob, m, "role", berth_role_name((berth_role)t->role));
		o_str(&ob, m, "projects", t->projects);
		if (t->description)
			o_str(&ob, m, "description", t->description);
		o_time(&ob, m, "created", t->created);
		if (t->expires)
			o_time(&ob, m, "expires", t->expires);
		if (t->revoked)
			o_time(&ob, m, "revoked", t->revoked);
		if (t->last_used)
			o_time(&ob, m, "last_used", t->last_used);
		if (t->maker)
			o_str(&ob, m, "made_by", t->maker);
	}
	rc = service_output(&ob, seq, fmt, out, len, err);
	berth_arena_free(ob.arena);
	store_token_list_free(list, n);
	return rc;
}

int berth_token_revoke(berth_backend *b, const char *id, berth_error **err)
{
	return berth_token_revoke_for(b, NULL, id, err);
}

int berth_token_revoke_for(berth_backend *b, const berth_principal *who, const char *id,
			   berth_error **err)
{
	store_token *t = NULL;
	int rc = store_token_get(b->st, id, &t, err);
	if (rc)
		return rc;
	/* one who may not see it is told what an unknown id is told */
	if (!t || (who && (who->role < BERTH_ROLE_ADMIN || !projects_within(t->projects, who))))
		rc = berth_fail(err, BERTH_ENOTFOUND, "no token \"%s\"", id);
	if (!rc && t->revoked)
		rc = berth_fail(err, BERTH_ECONFLICT, "token \"%s\" is revoked already", id);
	store_token_free(t);
	if (!rc && (rc = store_token_revoke(b->st, id, store_now_ms(), err)) >= 0)
		rc = 0; /* (0: revoked meanwhile by another) */
	return rc;
}
