/*
 * registry.c - the kinds of backend berth has, in one table: the only place
 * where their names meet. The first is the default.
 */
#include <string.h>

#include "backend/runtime.h"

extern const backend_ops local_backend_ops;
extern const backend_ops kube_backend_ops;

static const backend_ops *kinds[BACKEND_KINDS_MAX] = {&local_backend_ops, &kube_backend_ops};

const backend_ops *backend_kind_at(size_t i)
{
	return i < BACKEND_KINDS_MAX ? kinds[i] : NULL;
}

const char *berth_backend_kind_name(size_t i)
{
	const backend_ops *k = backend_kind_at(i);
	return k ? k->kind : NULL;
}

const backend_ops *backend_kind(const char *name)
{
	for (size_t i = 0; name && i < BACKEND_KINDS_MAX && kinds[i]; i++)
		if (!strcmp(kinds[i]->kind, name))
			return kinds[i];
	return NULL;
}

int backend_kind_register(const backend_ops *kind)
{
	for (size_t i = 0; i < BACKEND_KINDS_MAX; i++) {
		if (kinds[i] == kind)
			return 0;
		if (!kinds[i]) {
			kinds[i] = kind;
			return 0;
		}
	}
	return -1;
}
