/*
 * arena.h - a bump allocator: everything a parsed spec holds lives in one
 * arena and goes with it in one free.
 */
#ifndef BERTH_ARENA_H
#define BERTH_ARENA_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct berth_arena berth_arena;

berth_arena *berth_arena_new(void);
void berth_arena_free(berth_arena *a);

/* The free bytes of the arena's current chunk, the first member of every
 * berth_arena (arena.c keeps it in step with the chunks): an allocation
 * that fits is a bump of p, inline, its zeroing a few stores where the size
 * is a constant (a spec's render makes hundreds of small objects). */
struct berth_arena_window {
	unsigned char *p, *end;
};
void *berth_arena_alloc_chunk(berth_arena *a, size_t n);

/* 16-byte aligned, zeroed; NULL on allocation failure. */
static inline void *berth_arena_alloc(berth_arena *a, size_t n)
{
	struct berth_arena_window *w = (struct berth_arena_window *)(void *)a;
	size_t r = n ? (n + 15) & ~(size_t)15 : 16;
	if (n <= SIZE_MAX - 15 && (uintptr_t)w->end - (uintptr_t)w->p >= r) {
		void *q = w->p;
		w->p += r;
		memset(q, 0, n);
		return q;
	}
	return berth_arena_alloc_chunk(a, n);
}
char *berth_arena_strndup_chunk(berth_arena *a, const char *s, size_t n);
char *berth_arena_strdup(berth_arena *a, const char *s);

/* s's first n bytes and a NUL; NULL on allocation failure. Inline where they
 * fit: the reader copies every scalar of a spec. */
static inline char *berth_arena_strndup(berth_arena *a, const char *s, size_t n)
{
	struct berth_arena_window *w = (struct berth_arena_window *)(void *)a;
	size_t r = (n + 16) & ~(size_t)15; /* n + 1 rounded up; n < SIZE_MAX - 15 */
	if (n < SIZE_MAX - 15 && (uintptr_t)w->end - (uintptr_t)w->p >= r) {
		char *d = (char *)w->p;
		w->p += r;
		memcpy(d, s, n);
		d[n] = '\0';
		return d;
	}
	return berth_arena_strndup_chunk(a, s, n);
}

/* A point in an arena's life: berth_arena_release frees what was allocated
 * after it (a stream's document, once it has been used), so that the next
 * reuses the memory; what was allocated before stays. */
typedef struct berth_arena_mark {
	size_t seq, used;
} berth_arena_mark;
berth_arena_mark berth_arena_save(const berth_arena *a);
void berth_arena_release(berth_arena *a, berth_arena_mark m);

#endif
