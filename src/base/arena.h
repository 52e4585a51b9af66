/*
 * arena.h - a bump allocator: everything a parsed spec holds lives in one
 * arena and goes with it in one free.
 */
#ifndef BERTH_ARENA_H
#define BERTH_ARENA_H

#include <stddef.h>

typedef struct berth_arena berth_arena;

berth_arena *berth_arena_new(void);
void berth_arena_free(berth_arena *a);
/* 16-byte aligned, zeroed; NULL on allocation failure. */
void *berth_arena_alloc(berth_arena *a, size_t n);
char *berth_arena_strndup(berth_arena *a, const char *s, size_t n);
char *berth_arena_strdup(berth_arena *a, const char *s);

/* A point in an arena's life: berth_arena_release frees what was allocated
 * after it (a stream's document, once it has been used), so that the next
 * reuses the memory; what was allocated before stays. */
typedef struct berth_arena_mark {
	size_t seq, used, total;
} berth_arena_mark;
berth_arena_mark berth_arena_save(const berth_arena *a);
void berth_arena_release(berth_arena *a, berth_arena_mark m);

#endif
