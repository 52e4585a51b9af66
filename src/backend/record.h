/*
 * record.h - a run's record as every kind keeps it (berth_run_info, stored
 * as a store_run): made from a planned run, inserted with its first event,
 * read back, and written as YAML or JSON. Below every kind; the states and
 * their names are here too (berth/backend.h).
 */
#ifndef BERTH_BACKEND_RECORD_H
#define BERTH_BACKEND_RECORD_H

#include "berth/backend.h"
#include "base/internal.h"
#include "store/store.h"

/* The record of a new run of kind (r zeroed before): Pending, with what it
 * asks (plan_demand_of), what it counts against its project's quota
 * (berth_usage_add) and its effective spec (berth_explain). */
int record_new(const berth_policy *policy, const berth_run *run, const char *spec_text,
	       const char *kind, store_run *r, berth_error **err);
/* Inserts it with its Submitted event, in one transaction. */
int record_insert(store *st, const store_run *r, berth_error **err);
/* The run's record as stored. */
int record_get(store *st, const char *id, berth_run_info **out, berth_error **err);
/* Copies the public part of a stored run out (the store_run is emptied of it);
 * NULL when out of memory. */
berth_run_info *record_info_take(store_run *r);

/* A record as bytes, for one berth process to hand to another (a supervisor
 * to the process that waits for its run): every field, each string with its
 * length before it, so no text a spec gave can change where a field ends.
 * record_pack appends them to out (out->failed when out of memory);
 * record_unpack makes the record again: 0, or -1 when data is not exactly
 * one record so packed (or no memory). */
void record_pack(const berth_run_info *i, berth_buf *out);
int record_unpack(const char *data, size_t len, berth_run_info **out);
#ifdef BERTH_FAULT_INJECTION
/* tests: 0 when i is the record the store holds for run i->id, field by field */
int record_same_as_stored(store *st, const berth_run_info *i, berth_error **err);
#endif

#endif
