/*
 * samples.c - each worker's use over time (store.h): what a run's supervisor
 * samples of its cgroups and GPUs, kept to STORE_SAMPLES a worker by thinning
 * the older detail, read back as a series or as each worker's last sample.
 */
#include <stdlib.h>
#include <string.h>

#include "store/store_internal.h"

int store_sample_add(store *s, const char *run_id, const store_sample *x, berth_error **err)
{
	store_arg args[] = {STORE_S(run_id),	     STORE_I(x->rank),	   STORE_I(x->t),
			    STORE_I(x->cpu_milli),   STORE_I(x->mem),	   STORE_I(x->gpu_util),
			    STORE_I(x->gpu_mem)};
	int rc = store_exec_args(s,
				 "INSERT INTO samples (run_id, rank, t, cpu_milli, mem, gpu_util, gpu_mem)"
				 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
				 args, 7, err);
	if (rc < 0)
		return rc;
	int64_t n = 0;
	rc = store_select_int(s, "SELECT COUNT(*) FROM samples WHERE run_id = ?1 AND rank = ?2", args,
			      2, &n, err);
	if (rc < 0 || n <= STORE_SAMPLES)
		return rc < 0 ? rc : 0;
	/* every other one goes, the last kept: the series keeps its span and shape */
	rc = store_exec_args(s,
			     "DELETE FROM samples WHERE rowid IN (SELECT rowid FROM"
			     " (SELECT rowid, row_number() OVER (ORDER BY t DESC) AS k FROM samples"
			     " WHERE run_id = ?1 AND rank = ?2) AS numbered WHERE k % 2 = 0)",
			     args, 2, err);
	return rc < 0 ? rc : 1;
}

int store_sample_last(store *s, const char *run_id, int64_t *t, berth_error **err)
{
	store_arg args[] = {STORE_S(run_id)};
	return store_select_int(s, "SELECT MAX(t) FROM samples WHERE run_id = ?1", args, 1, t, err);
}

static void sample_read(db_stmt *st, int at, store_sample *x)
{
	x->rank = db_col_int(st, at);
	x->t = db_col_int(st, at + 1);
	x->cpu_milli = db_col_int(st, at + 2);
	x->mem = db_col_int(st, at + 3);
	x->gpu_util = db_col_int(st, at + 4);
	x->gpu_mem = db_col_int(st, at + 5);
}

int store_sample_list(store *s, const char *run_id, int64_t after, size_t max, store_sample **out,
		      size_t *n, berth_error **err)
{
	*out = NULL;
	*n = 0;
	db_stmt *st;
	/* one more than max: whether the last t of the page is whole */
	store_arg args[] = {STORE_S(run_id), STORE_I(after),
			    STORE_I(max ? (int64_t)max + 1 : STORE_NO_LIMIT)};
	int rc = store_prepare_args(s,
				    "SELECT rank, t, cpu_milli, mem, gpu_util, gpu_mem FROM samples"
				    " WHERE run_id = ?1 AND t > ?2 ORDER BY t, rank LIMIT ?3",
				    args, 3, &st, err);
	if (rc)
		return rc;
	size_t cap = 0;
	int step;
	while ((step = db_step(st)) == DB_ROW) {
		store_sample *grown = store_grow(*out, sizeof(**out), *n, &cap);
		if (!grown) {
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
			break;
		}
		*out = grown;
		sample_read(st, 0, &grown[(*n)++]);
	}
	if (!rc && step != DB_DONE)
		rc = store_db_fail(s, err, "reading samples");
	store_stmt_put(s, st);
	if (rc) {
		free(*out);
		*out = NULL;
		*n = 0;
	} else if (max && *n > max) {
		/* a full page: without its last t, which the one past it shares or
		 * may (one t holds one sample a worker, fewer than max) */
		int64_t last = (*out)[max].t;
		*n = max;
		while (*n > 0 && (*out)[*n - 1].t == last)
			--*n;
	}
	return rc;
}

int store_sample_latest(store *s, store_sample_of **out, size_t *n, berth_error **err)
{
	*out = NULL;
	*n = 0;
	db_stmt *st;
	store_arg args[] = {STORE_I(BERTH_STATE_RUNNING), STORE_I(BERTH_WORKERS_MAX)};
	/* the newest sample of each worker of the Running runs: runs_state, then
	 * one look into samples_worker for each worker (0 to workers - 1, and never
	 * past BERTH_WORKERS_MAX, whatever a record says), never a read of a run's
	 * whole series (720 samples a worker) */
	const char *sql =
		store_dialect(s) == DB_SQLITE
			? "WITH RECURSIVE w(id, project, rank, n) AS (SELECT id, project, 0,"
			  " MIN(MAX(COALESCE(workers, 1), 1), ?2) FROM runs WHERE state = ?1 UNION ALL"
			  " SELECT id, project, rank + 1, n FROM w WHERE rank + 1 < n)"
			  " SELECT w.id, w.project, x.rank, x.t, x.cpu_milli, x.mem, x.gpu_util, x.gpu_mem"
			  " FROM w JOIN samples x ON x.rowid = (SELECT y.rowid FROM samples y"
			  " WHERE y.run_id = w.id AND y.rank = w.rank ORDER BY y.t DESC LIMIT 1)"
			  " ORDER BY w.id, w.rank"
			: "WITH RECURSIVE w(id, project, rank, n) AS (SELECT id, project, 0::BIGINT,"
			  " LEAST(GREATEST(COALESCE(workers, 1), 1), ?2) FROM runs WHERE state = ?1 UNION ALL"
			  " SELECT id, project, rank + 1, n FROM w WHERE rank + 1 < n)"
			  " SELECT w.id, w.project, x.rank, x.t, x.cpu_milli, x.mem, x.gpu_util, x.gpu_mem"
			  " FROM w CROSS JOIN LATERAL (SELECT * FROM samples y WHERE y.run_id = w.id"
			  " AND y.rank = w.rank ORDER BY y.t DESC LIMIT 1) x ORDER BY w.id, w.rank";
	int rc = store_prepare_args(s, sql, args, 2, &st, err);
	if (rc)
		return rc;
	size_t cap = 0;
	int step;
	while ((step = db_step(st)) == DB_ROW) {
		store_sample_of *grown = store_grow(*out, sizeof(**out), *n, &cap);
		if (grown)
			*out = grown;
		store_sample_of *o = grown ? &grown[*n] : NULL;
		if (o) {
			memset(o, 0, sizeof(*o));
			sample_read(st, 2, &o->x);
		}
		if (!o || store_col_text(st, 0, &o->id) || store_col_text(st, 1, &o->project)) {
			if (o)
				(*n)++; /* what it holds is freed with the rest */
			rc = berth_fail(err, BERTH_ENOMEM, "out of memory");
			break;
		}
		(*n)++;
	}
	if (!rc && step != DB_DONE)
		rc = store_db_fail(s, err, "reading samples");
	store_stmt_put(s, st);
	if (rc) {
		store_sample_of_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

void store_sample_of_free(store_sample_of *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(list[i].id);
		free(list[i].project);
	}
	free(list);
}
