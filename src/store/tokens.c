/*
 * tokens.c - the server's API tokens in the store (see store.h): each one's
 * hash, never the token, with its role and its projects.
 */
#include <string.h>

#include "store/store_internal.h"

/* A live token: not revoked, and not expired at `at` (the new token's creation). */
#define TOKEN_LIVE(at) "(revoked IS NULL OR revoked = 0) AND (expires IS NULL OR expires = 0 OR expires > " at ")"
/* A made token that counts against the caps at time at (ms): live, or made less
 * than a day before (one made and revoked at once still counts: no churn), as
 * text for SQL */
#define DAY_MS_TEXT "86400000"
#define TOKEN_COUNTED(at) "((" TOKEN_LIVE(at) ") OR created > " at " - " DAY_MS_TEXT ")"
/* How long a made token that ended (revoked, expired) is kept, so that its holder
 * is told so (401 "revoked at"), before it goes: 30 days */
#define ENDED_KEPT_MS_TEXT "2592000000"

/* One writer at a time for what counts or walks the tokens and then writes:
 * on PostgreSQL a statement does not see another's write that is not
 * committed yet (read committed), so two at once would each miss the other's;
 * store_begin's lock (SQLite's BEGIN IMMEDIATE) makes the second wait. A
 * caller's transaction is used as it is. */
static int writer_begin(store *s, bool *own, berth_error **err)
{
	*own = !s->db || !s->ops->in_transaction(s->db);
	return *own && store_begin(s, err) ? -BERTH_EIO : 0;
}

/* Ends what writer_begin began: committed when rc >= 0. rc, or the commit's error. */
static int writer_end(store *s, bool own, int rc, berth_error **err)
{
	if (own && rc >= 0) {
		int c = store_commit(s, err);
		if (!c)
			return rc;
		rc = c;
	}
	if (own)
		store_rollback(s);
	return rc;
}

/* Why made token t was not inserted: a cap it would pass (BERTH_ECONFLICT), or
 * its maker revoked or gone (BERTH_EAUTH). Each query binds only the values
 * it uses (PostgreSQL cannot type a parameter that a statement never names). */
static int token_refused(store *s, const store_token *t, int64_t made_max, int64_t live_max,
			 berth_error **err)
{
	store_arg args[] = {STORE_I(t->created), STORE_S(t->maker)};
	int64_t n = 0;
	int rc = made_max > 0 ? store_select_int(s, "SELECT count(*) FROM tokens WHERE maker = ?2 AND "
						    TOKEN_COUNTED("?1"), args, 2, &n, err)
			      : 0;
	if (rc)
		return rc;
	if (made_max > 0 && n >= made_max)
		return berth_fail(err, BERTH_ECONFLICT,
				  "token %s has made %lld tokens that are live or less than a day old, "
				  "the most one token may (a revoked one makes room a day after it was "
				  "made)",
				  t->maker, (long long)n);
	if (live_max > 0 && (rc = store_select_int(s, "SELECT count(*) FROM tokens WHERE maker IS NOT NULL"
						       " AND " TOKEN_COUNTED("?1"), args, 1, &n, err)))
		return rc;
	if (live_max > 0 && n >= live_max)
		return berth_fail(err, BERTH_ECONFLICT,
				  "the server holds %lld tokens made through its API that are live or "
				  "less than a day old, the most it keeps; revoke some, and make more a "
				  "day after they were made",
				  (long long)n);
	return berth_fail(err, BERTH_EAUTH, "token %s that makes it is revoked", t->maker);
}

int store_token_insert(store *s, const store_token *t, int64_t made_max, int64_t live_max,
		       berth_error **err)
{
	store_arg args[] = {STORE_S(t->id), STORE_B(t->hash, sizeof(t->hash)), STORE_I(t->role),
			    STORE_S(t->projects), STORE_S(t->description), STORE_I(t->created),
			    STORE_I(t->expires), STORE_S(t->maker), STORE_I(made_max), STORE_I(live_max)};
	if (!t->maker) {
		int rc = store_exec_args(s, "INSERT INTO tokens (id, hash, role, projects, description,"
					    " created, expires, maker) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
					 args, 8, err);
		return rc < 0 ? rc : 0;
	}
	/* a made token only while its maker stands (one revoked between its check and
	 * this insert would otherwise leave a token that its revocation did not take),
	 * and within the caps, counted in the same statement, by one writer at a time:
	 * requests at once cannot pass them together */
	bool own;
	if (writer_begin(s, &own, err))
		return -BERTH_EIO;
	/* made tokens that ended long ago go (their rows would grow without end); a
	 * command's own stay */
	store_arg now = STORE_I(t->created);
	int rc = store_exec_args(s,
				 "DELETE FROM tokens WHERE maker IS NOT NULL AND created < ?1 - "
				 ENDED_KEPT_MS_TEXT " AND ((revoked > 0 AND revoked < ?1 - " ENDED_KEPT_MS_TEXT
				 ") OR (expires > 0 AND expires < ?1 - " ENDED_KEPT_MS_TEXT "))",
				 &now, 1, err);
	if (rc >= 0)
		rc = store_exec_args(s,
				 "INSERT INTO tokens (id, hash, role, projects, description,"
				 " created, expires, maker) SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8"
				 " WHERE EXISTS (SELECT 1 FROM tokens WHERE id = ?8 AND"
				 " (revoked IS NULL OR revoked = 0))"
				 " AND (?9 <= 0 OR (SELECT count(*) FROM tokens WHERE maker = ?8"
				 " AND " TOKEN_COUNTED("?6") ") < ?9)"
				 " AND (?10 <= 0 OR (SELECT count(*) FROM tokens WHERE maker IS"
				 " NOT NULL AND " TOKEN_COUNTED("?6") ") < ?10)",
				 args, 10, err);
	/* not made: which condition held it back */
	if (rc == 0)
		rc = token_refused(s, t, made_max, live_max, err);
	rc = writer_end(s, own, rc, err);
	return rc < 0 ? rc : 0;
}

/* What read_tokens reads, in its order: the hash last */
#define TOKEN_COLUMNS \
	"id, role, projects, description, created, expires, revoked, last_used, maker, hash"

/* The tokens of a statement (TOKEN_COLUMNS; the hash when with_hash), in its order. */
static int read_tokens(store *s, db_stmt *st, bool with_hash, store_token **out, size_t *n,
		       berth_error **err)
{
	store_token *list = NULL;
	size_t cnt = 0, cap = 0;
	int rc = 0, step;
	while ((step = db_step(st)) == DB_ROW) {
		store_token *grown = store_grow(list, sizeof(*list), cnt, &cap);
		if (!grown) {
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
			break;
		}
		list = grown;
		store_token *t = &list[cnt++];
		*t = (store_token){.role = db_col_int(st, 1),
				   .created = db_col_int(st, 4),
				   .expires = db_col_int(st, 5),
				   .revoked = db_col_int(st, 6),
				   .last_used = db_col_int(st, 7)};
		size_t len = 0;
		const void *hash = with_hash ? db_col_blob(st, 9, &len) : NULL;
		if (hash && len == sizeof(t->hash))
			memcpy(t->hash, hash, sizeof(t->hash));
		if (store_col_text(st, 0, &t->id) || store_col_text(st, 2, &t->projects) ||
		    store_col_text(st, 3, &t->description) || store_col_text(st, 8, &t->maker)) {
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
			break;
		}
	}
	if (!rc && step != DB_DONE)
		rc = store_db_fail(s, err, "reading tokens");
	store_stmt_put(s, st);
	if (rc) {
		store_token_list_free(list, cnt);
		return rc;
	}
	*out = list;
	*n = cnt;
	return 0;
}

/* The one token the statement st (its ?1 bound) finds, or *out NULL. */
static int read_one(store *s, db_stmt *st, store_token **out, berth_error **err)
{
	store_token *list;
	size_t n;
	int rc = read_tokens(s, st, true, &list, &n, err);
	if (rc)
		return rc;
	if (n)
		*out = list; /* the only one: ids and hashes are unique */
	else
		free(list);
	return 0;
}

int store_token_find(store *s, const unsigned char hash[STORE_TOKEN_HASH], store_token **out,
		     berth_error **err)
{
	*out = NULL;
	db_stmt *st;
	if (!(st = store_stmt_get(s, "SELECT " TOKEN_COLUMNS " FROM tokens WHERE hash = ?1")))
		return store_db_fail(s, err, "preparing a statement");
	db_bind_blob(st, 1, hash, STORE_TOKEN_HASH);
	return read_one(s, st, out, err);
}

int store_token_get(store *s, const char *id, store_token **out, berth_error **err)
{
	*out = NULL;
	db_stmt *st;
	if (!(st = store_stmt_get(s, "SELECT " TOKEN_COLUMNS " FROM tokens WHERE id = ?1")))
		return store_db_fail(s, err, "preparing a statement");
	db_bind_text(st, 1, id);
	return read_one(s, st, out, err);
}

int store_token_list(store *s, store_token **out, size_t *n, berth_error **err)
{
	*out = NULL;
	*n = 0;
	db_stmt *st;
	if (!(st = store_stmt_get(s, "SELECT " TOKEN_COLUMNS " FROM tokens ORDER BY created, id")))
		return store_db_fail(s, err, "preparing a statement");
	return read_tokens(s, st, false, out, n, err);
}

int store_token_revoke(store *s, const char *id, int64_t now, berth_error **err)
{
	/* the token and those it made, and theirs (a made token is never older than
	 * its maker: the walk ends; UNION drops an id seen twice all the same) */
	/* (by one writer at a time: a token made while this walks is seen by it, or
	 * sees its maker revoked) */
	store_arg args[] = {STORE_S(id), STORE_I(now)};
	bool own;
	if (writer_begin(s, &own, err))
		return -BERTH_EIO;
	int rc = store_exec_args(s, "WITH RECURSIVE made(id) AS (SELECT id FROM tokens WHERE id = ?1"
				    " UNION SELECT tokens.id FROM tokens JOIN made ON tokens.maker = made.id)"
				    " UPDATE tokens SET revoked = ?2 WHERE id IN (SELECT id FROM made) AND"
				    " (revoked IS NULL OR revoked = 0)", args, 2, err);
	rc = writer_end(s, own, rc, err);
	return rc < 0 ? rc : rc > 0;
}

int store_token_touch(store *s, const char *id, int64_t now, berth_error **err)
{
	store_arg args[] = {STORE_S(id), STORE_I(now)};
	int rc = store_exec_args(s, "UPDATE tokens SET last_used = ?2 WHERE id = ?1", args, 2, err);
	return rc < 0 ? rc : 0;
}

void store_token_free(store_token *t)
{
	store_token_list_free(t, t ? 1 : 0);
}

void store_token_list_free(store_token *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(list[i].id);
		free(list[i].projects);
		free(list[i].description);
		free(list[i].maker);
	}
	free(list);
}
