/*
 * pq_dl.c - loads libpq on first use (pq_dl.h says why).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

#include "base/dl.h"
#include "base/internal.h"
#include "store/pq_dl.h"

pq_dl berth_pq;

static const dl_sym syms[] = {
#define S(f, field) {#f, offsetof(pq_dl, field)}
	S(PQconnectdb, connectdb),	     S(PQstatus, status),
	S(PQerrorMessage, error_message),    S(PQfinish, finish),
	S(PQprepare, prepare),		     S(PQexecPrepared, exec_prepared),
	S(PQexecParams, exec_params),	     S(PQexec, exec),
	S(PQresultStatus, result_status),    S(PQresultErrorField, result_error_field),
	S(PQresultErrorMessage, result_error_message), S(PQclear, clear),
	S(PQntuples, ntuples),		     S(PQgetvalue, getvalue),
	S(PQgetlength, getlength),	     S(PQgetisnull, getisnull),
	S(PQftype, ftype),		     S(PQcmdTuples, cmd_tuples),
	S(PQunescapeBytea, unescape_bytea),  S(PQfreemem, freemem),
	S(PQtransactionStatus, transaction_status), S(PQsetNoticeProcessor, set_notice_processor),
#undef S
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char why_not[512];

static void load(void)
{
	static const char *const sonames[] = {"libpq.so.5", "libpq.so", NULL};
	pq_dl t;
	if (!berth_dl_load(sonames, syms, BERTH_ARRAY_SIZE(syms), &t, sizeof(t), why_not,
			   sizeof(why_not)))
		berth_pq = t;
}

int berth_pq_load(char *why, size_t len)
{
	pthread_once(&once, load);
	if (berth_pq.connectdb)
		return 0;
	snprintf(why, len, "cannot load libpq (needed for a store on PostgreSQL): %s", why_not);
	return -1;
}
