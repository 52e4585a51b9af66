/*
 * pq_dl.h - libpq, loaded when a store on PostgreSQL is first opened
 * (dlopen), not linked: it brings OpenSSL, Kerberos and LDAP with it, whose
 * loading every berth process on SQLite (render, run, each run's supervisor)
 * would pay for at start (src/base/curl_dl.h says the same of libcurl).
 *
 * Include this instead of <libpq-fe.h>; call berth_pq_load() first.
 */
#ifndef BERTH_PQ_DL_H
#define BERTH_PQ_DL_H

#include <libpq-fe.h>

typedef struct pq_dl {
	PGconn *(*connectdb)(const char *conninfo);
	ConnStatusType (*status)(const PGconn *conn);
	char *(*error_message)(const PGconn *conn);
	void (*finish)(PGconn *conn);
	PGresult *(*prepare)(PGconn *conn, const char *name, const char *query, int nparams,
			     const Oid *types);
	PGresult *(*exec_prepared)(PGconn *conn, const char *name, int nparams,
				   const char *const *values, const int *lengths, const int *formats,
				   int result_format);
	PGresult *(*exec_params)(PGconn *conn, const char *command, int nparams, const Oid *types,
				 const char *const *values, const int *lengths, const int *formats,
				 int result_format);
	PGresult *(*exec)(PGconn *conn, const char *query);
	ExecStatusType (*result_status)(const PGresult *res);
	char *(*result_error_field)(const PGresult *res, int code);
	char *(*result_error_message)(const PGresult *res);
	void (*clear)(PGresult *res);
	int (*ntuples)(const PGresult *res);
	char *(*getvalue)(const PGresult *res, int row, int col);
	int (*getlength)(const PGresult *res, int row, int col);
	int (*getisnull)(const PGresult *res, int row, int col);
	Oid (*ftype)(const PGresult *res, int col);
	char *(*cmd_tuples)(PGresult *res);
	unsigned char *(*unescape_bytea)(const unsigned char *from, size_t *len);
	void (*freemem)(void *p);
	PGTransactionStatusType (*transaction_status)(const PGconn *conn);
	PQnoticeProcessor (*set_notice_processor)(PGconn *conn, PQnoticeProcessor proc, void *arg);
} pq_dl;

/* The functions, once berth_pq_load has succeeded. */
extern pq_dl berth_pq;

/* Loads libpq (libpq.so.5) and its functions, once; thread-safe. -1 with
 * dlerror's words in why when it cannot. */
int berth_pq_load(char *why, size_t len);

#endif
