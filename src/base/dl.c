/*
 * dl.c - loading a library's functions into a table (dl.h).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "base/dl.h"

int berth_dl_load(const char *const *sonames, const dl_sym *syms, size_t nsyms, void *table, size_t size,
	    char *why, size_t whylen)
{
	void *lib = NULL;
	for (size_t i = 0; !lib && sonames[i]; i++)
		lib = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		const char *e = dlerror();
		snprintf(why, whylen, "%s", e ? e : "not found");
		return -1;
	}
	char t[512];
	if (size > sizeof(t)) {
		snprintf(why, whylen, "a table of %zu bytes is too large", size);
		return -1;
	}
	for (size_t i = 0; i < nsyms; i++) {
		void *f = dlsym(lib, syms[i].name);
		if (!f) {
			snprintf(why, whylen, "%s has no %s (too old a version)", sonames[0], syms[i].name);
			return -1;
		}
		/* a data pointer to a function pointer: POSIX dlsym's documented use */
		memcpy(t + syms[i].off, &f, sizeof(f));
	}
	memcpy(table, t, size);
	return 0;
}
