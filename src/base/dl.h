/*
 * dl.h - a library's functions, loaded with dlopen into a table of
 * function pointers (curl_dl.c, server/mhd_dl.c say why they are not linked).
 */
#ifndef BERTH_DL_H
#define BERTH_DL_H

#include <stddef.h>

typedef struct dl_sym {
	const char *name; /* the symbol */
	size_t off;       /* where its pointer goes in the table */
} dl_sym;

/* Opens the first of sonames (NULL-terminated) that loads and fills table
 * (size bytes) with each symbol: 0, or -1 with the reason in why, the table
 * left untouched. */
int berth_dl_load(const char *const *sonames, const dl_sym *syms, size_t nsyms, void *table, size_t size,
	    char *why, size_t whylen);

#endif
