/*
 * db_pg.c - the store's PostgreSQL driver (db.h): a database that several
 * berth servers (replicas) and their supervisors share, named by a URL
 * (postgresql://user:password@host:port/dbname?...).
 *
 * The store's SQL is written for both databases; this driver writes, once
 * per statement text, its parameters ?N as $N and the word rowid as seq (the
 * column that PostgreSQL's tables have for it, schema_pg.c). A statement
 * kept for many uses is prepared on the server under a name of its own; any
 * other is sent with its text at each use. Parameters go as text, blobs as
 * binary (BYTEA); results come as text, BYTEA unescaped.
 *
 * The URL may hold a password: nothing here prints it (libpq's messages name
 * the host and port, never the password).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/internal.h"
#include "store/db.h"
#include "store/pq_dl.h"

#define PQ berth_pq

/* type oids of pg_type */
#define OID_BOOL 16
#define OID_BYTEA 17
#define OID_TEXT 25

/* The writers' transaction (store_begin) holds this advisory lock until it
 * ends: one at a time, as SQLite's BEGIN IMMEDIATE ("berth" in ASCII). */
#define WRITERS_LOCK "431604565352"
/* The lead of the servers' single work (reconciling): a session's lock, held
 * until its connection ends, a server killed included ("berthL") */
#define LEAD_LOCK "110490688497740"

typedef struct pg {
	db base;
	PGconn *conn;
	int64_t changes;
	unsigned names;    /* statements named so far */
	bool leading;      /* this connection holds LEAD_LOCK */
	char state[6];     /* the last failure's SQLSTATE ("" none) */
	char msg[512];     /* its message */
} pg;

typedef struct pg_stmt {
	db_stmt base;
	pg *d;
	char name[24];     /* prepared on the server under this name; "" not prepared */
	char *sql;         /* the text, written for PostgreSQL */
	int nparams;       /* the highest $N */
	Oid *types;        /* 0: PostgreSQL infers it; TEXT for a parameter the SQL leaves out */
	const char **vals;
	int *lens, *fmts;
	char (*nums)[24];  /* integers bound, as text */
	PGresult *res;
	int row, nrows;
	unsigned char **bytea; /* unescaped BYTEA of the current row, per column */
	size_t *bytea_len;
	int nbytea;
} pg_stmt;

#define D(x) ((pg *)(x))
#define ST(x) ((pg_stmt *)(x))

static void no_notices(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/* The failure of res (or of the connection, res NULL), kept for fault and errmsg. */
static void failed(pg *d, const PGresult *res)
{
	const char *state = res ? PQ.result_error_field(res, PG_DIAG_SQLSTATE) : NULL;
	snprintf(d->state, sizeof(d->state), "%s", state ? state : "");
	const char *m = res ? PQ.result_error_message(res) : PQ.error_message(d->conn);
	snprintf(d->msg, sizeof(d->msg), "%s", m && *m ? m : "PostgreSQL failed");
	size_t n = strlen(d->msg);
	while (n && (d->msg[n - 1] == '\n' || d->msg[n - 1] == ' '))
		d->msg[--n] = 0;
}

static void pg_close(db *d)
{
	if (!d)
		return;
	if (D(d)->conn)
		PQ.finish(D(d)->conn);
	free(d);
}

static int pg_open(db **out, const char *url, char *msg, size_t len)
{
	*out = NULL;
	if (berth_pq_load(msg, len))
		return -1;
	pg *d = berth_calloc(1, sizeof(*d));
	if (!d) {
		snprintf(msg, len, "out of memory");
		return -1;
	}
	d->base.ops = &db_pg_ops;
	d->conn = PQ.connectdb(url);
	if (!d->conn || PQ.status(d->conn) != CONNECTION_OK) {
		failed(d, NULL);
		snprintf(msg, len, "%s", d->conn ? d->msg : "out of memory");
		pg_close(&d->base);
		return -1;
	}
	PQ.set_notice_processor(d->conn, no_notices, NULL);
	*out = &d->base;
	return 0;
}

static bool word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* sql with ?N as $N and rowid as seq, outside quotes; *nparams the highest N,
 * used[N - 1] set for each N it names (used: nparams entries, the caller's). */
static char *translate(const char *sql, int *nparams, bool **used)
{
	*nparams = 0;
	*used = NULL;
	for (const char *p = sql; *p; p++)
		if (*p == '?') {
			long n = strtol(p + 1, NULL, 10);
			if (n > *nparams && n < 65536)
				*nparams = (int)n;
		}
	if (*nparams && !(*used = berth_calloc((size_t)*nparams, sizeof(**used))))
		return NULL;
	berth_buf b = BERTH_BUF_INIT;
	char quote = 0;
	for (const char *p = sql; *p; p++) {
		if (quote) {
			if (*p == quote)
				quote = 0;
			berth_buf_append(&b, p, 1);
		} else if (*p == '\'' || *p == '"') {
			quote = *p;
			berth_buf_append(&b, p, 1);
		} else if (*p == '?') {
			char *end;
			long n = strtol(p + 1, &end, 10);
			if (n >= 1 && n <= *nparams)
				(*used)[n - 1] = true;
			berth_buf_printf(&b, "$%ld", n);
			p = end - 1;
		} else if (!strncmp(p, "rowid", 5) && (p == sql || !word_char(p[-1])) &&
			   !word_char(p[5])) {
			berth_buf_puts(&b, "seq");
			p += 4;
		} else {
			berth_buf_append(&b, p, 1);
		}
	}
	if (b.failed) {
		berth_buf_release(&b);
		free(*used);
		*used = NULL;
		return NULL;
	}
	return berth_buf_detach(&b);
}

static void clear_row(pg_stmt *s)
{
	for (int i = 0; i < s->nbytea; i++) {
		if (s->bytea[i])
			PQ.freemem(s->bytea[i]);
		s->bytea[i] = NULL;
	}
}

static void pg_reset(db_stmt *st)
{
	pg_stmt *s = ST(st);
	clear_row(s);
	if (s->res)
		PQ.clear(s->res);
	s->res = NULL;
	s->row = s->nrows = 0;
	for (int i = 0; s->vals && s->lens && s->fmts && i < s->nparams; i++) {
		s->vals[i] = NULL;
		s->lens[i] = 0;
		s->fmts[i] = 0;
	}
}

static void pg_finalize(db_stmt *st)
{
	if (!st)
		return;
	pg_stmt *s = ST(st);
	pg_reset(st);
	if (s->name[0] && s->d->conn) {
		char sql[64];
		snprintf(sql, sizeof(sql), "DEALLOCATE %s", s->name);
		PGresult *r = PQ.exec(s->d->conn, sql);
		if (r)
			PQ.clear(r);
	}
	free(s->bytea);
	free(s->bytea_len);
	free(s->sql);
	free(s->types);
	free(s->vals);
	free(s->lens);
	free(s->fmts);
	free(s->nums);
	free(s);
}

static int pg_prepare(db *dd, const char *sql, bool keep, db_stmt **out)
{
	pg *d = D(dd);
	*out = NULL;
	pg_stmt *s = berth_calloc(1, sizeof(*s));
	bool *used = NULL;
	if (!s || !(s->sql = translate(sql, &s->nparams, &used)))
		goto nomem;
	s->base.ops = &db_pg_ops;
	s->d = d;
	size_t n = s->nparams ? (size_t)s->nparams : 1;
	if (!(s->types = berth_calloc(n, sizeof(*s->types))) ||
	    !(s->vals = berth_calloc(n, sizeof(*s->vals))) ||
	    !(s->lens = berth_calloc(n, sizeof(*s->lens))) ||
	    !(s->fmts = berth_calloc(n, sizeof(*s->fmts))) ||
	    !(s->nums = berth_calloc(n, sizeof(*s->nums))))
		goto nomem;
	for (int i = 0; i < s->nparams; i++)
		s->types[i] = used[i] ? 0 : OID_TEXT;
	free(used);
	used = NULL;
	if (keep) {
		snprintf(s->name, sizeof(s->name), "berth_%u", ++d->names);
		PGresult *r = PQ.prepare(d->conn, s->name, s->sql, s->nparams, s->types);
		if (!r || PQ.result_status(r) != PGRES_COMMAND_OK) {
			failed(d, r);
			if (r)
				PQ.clear(r);
			s->name[0] = 0;
			pg_finalize(&s->base);
			return DB_ERROR;
		}
		PQ.clear(r);
	}
	*out = &s->base;
	return 0;
nomem:
	free(used);
	if (s)
		pg_finalize(&s->base);
	return DB_NOMEM;
}

/* a parameter the statement does not name is left out, as SQLite binds it to nothing */
static bool param(pg_stmt *s, int i)
{
	return i >= 1 && i <= s->nparams;
}

static int pg_bind_int(db_stmt *st, int i, int64_t v)
{
	pg_stmt *s = ST(st);
	if (!param(s, i))
		return 0;
	snprintf(s->nums[i - 1], sizeof(s->nums[i - 1]), "%lld", (long long)v);
	s->vals[i - 1] = s->nums[i - 1];
	s->fmts[i - 1] = 0;
	return 0;
}

static int pg_bind_text(db_stmt *st, int i, const char *v)
{
	pg_stmt *s = ST(st);
	if (!param(s, i))
		return 0;
	s->vals[i - 1] = v;
	s->fmts[i - 1] = 0;
	return 0;
}

static int pg_bind_blob(db_stmt *st, int i, const void *v, size_t len)
{
	pg_stmt *s = ST(st);
	if (!param(s, i))
		return 0;
	if (len > INT32_MAX)
		return -1;
	s->vals[i - 1] = v;
	s->lens[i - 1] = (int)len;
	s->fmts[i - 1] = 1;
	return 0;
}

static int pg_step(db_stmt *st)
{
	pg_stmt *s = ST(st);
	if (!s->res) {
		pg *d = s->d;
		s->res = s->name[0] ? PQ.exec_prepared(d->conn, s->name, s->nparams, s->vals, s->lens,
							  s->fmts, 0)
				    : PQ.exec_params(d->conn, s->sql, s->nparams, s->types, s->vals,
						     s->lens, s->fmts, 0);
		ExecStatusType rs = s->res ? PQ.result_status(s->res) : PGRES_FATAL_ERROR;
		if (rs != PGRES_TUPLES_OK && rs != PGRES_COMMAND_OK) {
			failed(d, s->res);
			return DB_ERROR;
		}
		if (rs == PGRES_COMMAND_OK) { /* what it wrote; a SELECT leaves the count as it was */
			const char *n = PQ.cmd_tuples(s->res);
			d->changes = n && *n ? strtoll(n, NULL, 10) : 0;
		}
		s->nrows = rs == PGRES_TUPLES_OK ? PQ.ntuples(s->res) : 0;
		s->row = -1;
	}
	clear_row(s);
	if (s->row + 1 >= s->nrows) {
		s->row = s->nrows;
		return DB_DONE;
	}
	s->row++;
	return DB_ROW;
}

static bool on_row(pg_stmt *s)
{
	return s->res && s->row >= 0 && s->row < s->nrows;
}

static bool pg_col_null(db_stmt *st, int i)
{
	pg_stmt *s = ST(st);
	return !on_row(s) || PQ.getisnull(s->res, s->row, i);
}

static int64_t pg_col_int(db_stmt *st, int i)
{
	pg_stmt *s = ST(st);
	if (pg_col_null(st, i))
		return 0;
	const char *v = PQ.getvalue(s->res, s->row, i);
	if (PQ.ftype(s->res, i) == OID_BOOL)
		return v[0] == 't';
	return strtoll(v, NULL, 10);
}

static const char *pg_col_text(db_stmt *st, int i)
{
	pg_stmt *s = ST(st);
	return pg_col_null(st, i) ? NULL : PQ.getvalue(s->res, s->row, i);
}

static const void *pg_col_blob(db_stmt *st, int i, size_t *len)
{
	pg_stmt *s = ST(st);
	*len = 0;
	if (pg_col_null(st, i))
		return NULL;
	const char *v = PQ.getvalue(s->res, s->row, i);
	if (PQ.ftype(s->res, i) != OID_BYTEA) {
		*len = (size_t)PQ.getlength(s->res, s->row, i);
		return v;
	}
	if (i >= s->nbytea) {
		int n = i + 1;
		unsigned char **b = berth_realloc(s->bytea, (size_t)n * sizeof(*b));
		if (b)
			s->bytea = b;
		size_t *l = b ? berth_realloc(s->bytea_len, (size_t)n * sizeof(*l)) : NULL;
		if (!l)
			return NULL;
		s->bytea_len = l;
		for (int k = s->nbytea; k < n; k++)
			s->bytea[k] = NULL;
		s->nbytea = n;
	}
	if (!s->bytea[i])
		s->bytea[i] = PQ.unescape_bytea((const unsigned char *)v, &s->bytea_len[i]);
	*len = s->bytea[i] ? s->bytea_len[i] : 0;
	/* an empty blob is not NULL */
	return s->bytea[i] ? (const void *)s->bytea[i] : NULL;
}

static int64_t pg_changes(db *d)
{
	return D(d)->changes;
}

static int pg_exec(db *dd, const char *sql)
{
	pg *d = D(dd);
	PGresult *r = PQ.exec(d->conn, sql);
	ExecStatusType rs = r ? PQ.result_status(r) : PGRES_FATAL_ERROR;
	int rc = 0;
	if (rs != PGRES_COMMAND_OK && rs != PGRES_TUPLES_OK) {
		failed(d, r);
		rc = -1;
	}
	if (r)
		PQ.clear(r);
	return rc;
}

static db_fault pg_fault(db *dd)
{
	const char *s = D(dd)->state;
	if (!strcmp(s, "23505"))
		return DB_F_UNIQUE;
	if (!strncmp(s, "23", 2))
		return DB_F_CONSTRAINT;
	return !strcmp(s, "53100") ? DB_F_FULL : DB_F_OTHER;
}

static const char *pg_errmsg(db *d)
{
	return D(d)->msg[0] ? D(d)->msg : "PostgreSQL failed";
}

static bool pg_in_transaction(db *d)
{
	PGTransactionStatusType t = PQ.transaction_status(D(d)->conn);
	return t == PQTRANS_INTRANS || t == PQTRANS_INERROR || t == PQTRANS_ACTIVE;
}

static bool pg_broken(db *d)
{
	return PQ.status(D(d)->conn) != CONNECTION_OK;
}

static int pg_begin(db *d)
{
	return pg_exec(d, "BEGIN; SELECT pg_advisory_xact_lock(" WRITERS_LOCK ")");
}

/* The first column of the first row of sql (no parameters), 0 when none. */
static int pg_value(db *dd, const char *sql, int64_t *v)
{
	pg *d = D(dd);
	*v = 0;
	PGresult *r = PQ.exec(d->conn, sql);
	int rc = 0;
	if (!r || PQ.result_status(r) != PGRES_TUPLES_OK) {
		failed(d, r);
		rc = -1;
	} else if (PQ.ntuples(r) > 0 && !PQ.getisnull(r, 0, 0)) {
		*v = strtoll(PQ.getvalue(r, 0, 0), NULL, 10);
	}
	if (r)
		PQ.clear(r);
	return rc;
}

static int pg_schema_version(db *d, int64_t *v)
{
	int64_t exists = 0;
	int rc = pg_value(d, "SELECT CASE WHEN to_regclass('berth_schema') IS NULL THEN 0 ELSE 1 END",
			  &exists);
	if (rc || !exists) {
		*v = 0;
		return rc;
	}
	return pg_value(d, "SELECT version FROM berth_schema", v);
}

static int pg_set_schema_version(db *d, int64_t v)
{
	char sql[64];
	snprintf(sql, sizeof(sql), "UPDATE berth_schema SET version = %lld", (long long)v);
	return pg_exec(d, sql);
}

/* rv grows at every change to a run: the changes the scheduler waits for */
static int pg_data_version(db *d, int64_t *v)
{
	return pg_value(d, "SELECT v FROM rv", v);
}

/* pg_try_advisory_lock counts each success: taken once, then checked (its
 * connection still up, which a lost one is not: the caller opens another) */
static int pg_try_lead(db *dd)
{
	pg *d = D(dd);
	int64_t held = 0;
	if (d->leading)
		return pg_value(dd, "SELECT 1", &held) ? -1 : 1;
	if (pg_value(dd, "SELECT CASE WHEN pg_try_advisory_lock(" LEAD_LOCK ") THEN 1 ELSE 0 END", &held))
		return -1;
	d->leading = held != 0;
	return d->leading;
}

static int pg_compound_limit(db *d)
{
	return 500; /* as SQLite's: the store's parts are the same on both */
}

static void pg_commit_hook(db *d, db_commit_hook hook, void *ctx)
{
}

static int pg_checkpoint(db *d)
{
	return 0; /* PostgreSQL's own */
}

const db_ops db_pg_ops = {
	.dialect = DB_PG,
	.open = pg_open,
	.close = pg_close,
	.prepare = pg_prepare,
	.bind_int = pg_bind_int,
	.bind_text = pg_bind_text,
	.bind_blob = pg_bind_blob,
	.step = pg_step,
	.reset = pg_reset,
	.finalize = pg_finalize,
	.col_null = pg_col_null,
	.col_int = pg_col_int,
	.col_text = pg_col_text,
	.col_blob = pg_col_blob,
	.changes = pg_changes,
	.exec = pg_exec,
	.fault = pg_fault,
	.errmsg = pg_errmsg,
	.in_transaction = pg_in_transaction,
	.broken = pg_broken,
	.begin = pg_begin,
	.schema_version = pg_schema_version,
	.set_schema_version = pg_set_schema_version,
	.data_version = pg_data_version,
	.compound_limit = pg_compound_limit,
	.commit_hook = pg_commit_hook,
	.try_lead = pg_try_lead,
	.checkpoint = pg_checkpoint,
};
