/*
 * rodata.h - whether a string is one of the program's own constants (its
 * read-only data): such a string never changes, so what was found of it can
 * be kept by its address.
 */
#ifndef BERTH_BASE_RODATA_H
#define BERTH_BASE_RODATA_H

#include <stdint.h>

/* The program's read-only data: its largest read-only, non-executable
 * loaded segment (.rodata), [lo, lo + size); size 0 when there is none.
 * Found once; safe from any thread. */
typedef struct rodata_range {
	uintptr_t lo, size;
} rodata_range;
const rodata_range *rodata(void);

/* p is in the program's read-only data. */
static inline int rodata_has(const rodata_range *r, const void *p)
{
	return (uintptr_t)p - r->lo < r->size;
}

#endif
