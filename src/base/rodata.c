/*
 * rodata.c - the program's read-only data (rodata.h), from its program
 * headers (dl_iterate_phdr: the main program comes first).
 */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include <link.h>
#include <pthread.h>

#include "base/rodata.h"

static rodata_range range;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int program(struct dl_phdr_info *info, size_t size, void *arg)
{
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		/* read-only and not code: .rodata (a segment that is written while
		 * relocating, RELRO, is loaded writable and is not taken); the one
		 * at offset 0 holds the ELF and program headers. The largest such
		 * segment, alone: a range over two could hold writable memory. */
		if (ph->p_type != PT_LOAD || ph->p_flags != PF_R || ph->p_offset == 0)
			continue;
		if (ph->p_memsz > range.size) {
			range.lo = info->dlpi_addr + ph->p_vaddr;
			range.size = ph->p_memsz;
		}
	}
	(void)size;
	(void)arg;
	return 1; /* the main program only */
}

static void find(void)
{
	dl_iterate_phdr(program, NULL);
}

const rodata_range *rodata(void)
{
	pthread_once(&once, find);
	return &range;
}
