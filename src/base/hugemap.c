/*
 * hugemap.c - anonymous memory on 2 MiB boundaries, asked for transparent
 * huge pages (hugemap.h).
 */
#define _GNU_SOURCE /* MADV_HUGEPAGE */
#include <stdint.h>
#include <sys/mman.h>

#include "base/hugemap.h"
#include "base/internal.h"

void *hugemap(size_t n, int prot)
{
	if (!n || n % HUGEMAP_PAGE || n > SIZE_MAX - HUGEMAP_PAGE || berth_injected_failure())
		return MAP_FAILED;
	char *q = mmap(NULL, n + HUGEMAP_PAGE, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (q == MAP_FAILED)
		return q;
	char *p = (char *)(((uintptr_t)q + HUGEMAP_PAGE - 1) & ~(uintptr_t)(HUGEMAP_PAGE - 1));
	if (p > q)
		munmap(q, (size_t)(p - q));
	munmap(p + n, (size_t)(q + HUGEMAP_PAGE - p)); /* what is left past p + n */
	if (prot != PROT_NONE)
		hugemap_advise(p, n);
	return p;
}

void hugemap_advise(void *p, size_t n)
{
	madvise(p, n, MADV_HUGEPAGE);
}
