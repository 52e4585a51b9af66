/*
 * selector.h - label selectors as kubectl's equality-based ones (the syntax
 * of berth_run_filter in berth/backend.h), read into the terms the store
 * matches against a run's labels ("key=value,key=value").
 */
#ifndef BERTH_SELECTOR_H
#define BERTH_SELECTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "berth/error.h"

#define SELECTOR_TEXT_MAX 1024
#define SELECTOR_TERMS_MAX 32

/* One term, as what a run's labels, between commas (",k=v,w=x,"), must
 * hold or not: ",key=value," for a value, ",key=" for the key alone. */
typedef struct selector_term {
	char *needle;
	bool negate; /* the labels must not hold it */
} selector_term;

typedef struct selector {
	selector_term terms[SELECTOR_TERMS_MAX];
	size_t n;
} label_selector;

/* Reads text (NULL or "": no term) into *out (release it with
 * selector_release, also after a failure); BERTH_EARG with what is wrong. */
int selector_parse(const char *text, label_selector *out, berth_error **err);
void selector_release(label_selector *s);

#endif
