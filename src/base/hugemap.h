/*
 * hugemap.h - anonymous memory on 2 MiB boundaries, asked for transparent
 * huge pages.
 *
 * Memory that a process fills once and keeps (render's held output, a
 * stream's thousands of warnings) costs the kernel a fault, a zeroed page
 * and a page-table entry for every 4 KiB; on a virtual machine that shadows
 * the guest's page tables that is 11 to 18 us a page (docs/performance.md).
 * A huge page is one of each for 2 MiB. Where the kernel has them off, the
 * pages are small and the rest is the same.
 */
#ifndef BERTH_BASE_HUGEMAP_H
#define BERTH_BASE_HUGEMAP_H

#include <stddef.h>

/* A huge page's size: what hugemap's sizes and places are multiples of. */
#define HUGEMAP_PAGE ((size_t)2 << 20)

/* n bytes (a multiple of HUGEMAP_PAGE, not 0: else MAP_FAILED) of
 * anonymous private memory at a multiple of HUGEMAP_PAGE, with prot
 * (PROT_NONE reserves the place, no memory charged, for mremap to move a
 * mapping onto); MAP_FAILED when there is none. Freed with munmap. */
void *hugemap(size_t n, int prot);

/* Asks the kernel for huge pages on [p, p + n) (a hint: nothing when they
 * are off). */
void hugemap_advise(void *p, size_t n);

#endif
