/*
 * arena.c - bump allocator in growing chunks.
 */
#include <string.h>

#include "base/arena.h"
#include "base/internal.h"

struct chunk {
	struct chunk *next;
	size_t size, used;
	size_t seq; /* the arena's chunks are numbered as they are made */
	_Alignas(16) unsigned char data[];
};

struct berth_arena {
	struct berth_arena_window w; /* first: arena.h's inline allocation bumps it */
	struct chunk *head;
	size_t chunks; /* made so far: the next one's seq */
	/* the largest chunk berth_arena_release let go, kept for the next chunk
	 * it can hold: a stream's documents (and a render's runs) take and give
	 * back the same memory rather than a malloc and a free each */
	struct chunk *spare;
};

berth_arena *berth_arena_new(void)
{
	return berth_calloc(1, sizeof(berth_arena));
}

void berth_arena_free(berth_arena *a)
{
	if (!a)
		return;
	for (struct chunk *c = a->head, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	free(a->spare);
	free(a);
}

/* The window over the head chunk's free bytes; the head's used count is
 * the window's start (kept in the chunk only for chunks behind it). */
static void window_on(berth_arena *a, struct chunk *c)
{
	a->w.p = c ? c->data + c->used : NULL;
	a->w.end = c ? c->data + c->size : NULL;
}

static size_t head_used(const berth_arena *a)
{
	return a->head ? (size_t)(a->w.p - a->head->data) : 0;
}

/* A new chunk for n bytes (rounded), then those bytes: the slow path, kept
 * out of alloc_raw so that the common case is a few instructions. */
static __attribute__((noinline)) void *alloc_chunk(berth_arena *a, size_t n)
{
	struct chunk *c = a->head;
	size_t size = c ? c->size * 2 : 4096;
	if (size > 1 << 20)
		size = 1 << 20;
	if (size < n)
		size = n;
	if (size > SIZE_MAX - sizeof(*c))
		return NULL;
	struct chunk *nc = a->spare;
	if (nc && nc->size >= size) {
		a->spare = NULL;
		size = nc->size;
	} else if (!(nc = berth_malloc(sizeof(*nc) + size))) {
		return NULL;
	}
	nc->size = size;
	nc->used = n;
	nc->seq = a->chunks++;
	/* a big one-off allocation goes behind the current chunk */
	if (c && n > c->size) {
		nc->next = c->next;
		c->next = nc;
	} else {
		if (c)
			c->used = head_used(a);
		nc->next = c;
		a->head = nc;
		window_on(a, nc);
	}
	return nc->data;
}

/* n bytes (16-byte aligned), not zeroed */
static inline void *alloc_raw(berth_arena *a, size_t n)
{
	if (n > SIZE_MAX - 15)
		return NULL;
	n = n ? (n + 15) & ~(size_t)15 : 16;
	if ((uintptr_t)a->w.end - (uintptr_t)a->w.p < n)
		return alloc_chunk(a, n);
	void *p = a->w.p;
	a->w.p += n;
	return p;
}

/* berth_arena_alloc's slow path: what does not fit in the head chunk */
void *berth_arena_alloc_chunk(berth_arena *a, size_t n)
{
	void *p = alloc_raw(a, n);
	if (p)
		memset(p, 0, n);
	return p;
}

/* berth_arena_strndup's slow path: what does not fit in the head chunk */
char *berth_arena_strndup_chunk(berth_arena *a, const char *s, size_t n)
{
	/* every byte is written: no zeroing */
	char *d = n == SIZE_MAX ? NULL : alloc_raw(a, n + 1);
	if (!d)
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

berth_arena_mark berth_arena_save(const berth_arena *a)
{
	berth_arena_mark m = {a->chunks, head_used(a)};
	return m;
}

void berth_arena_release(berth_arena *a, berth_arena_mark m)
{
	/* the chunks made since (a big one-off sits behind the head) */
	for (struct chunk **pp = &a->head; *pp;) {
		struct chunk *c = *pp;
		if (c->seq >= m.seq) {
			*pp = c->next;
			if (a->spare && a->spare->size >= c->size) {
				free(c);
			} else {
				free(a->spare);
				a->spare = c;
			}
		} else {
			pp = &c->next;
		}
	}
	/* the head is the one of then: chunks made before are never put before it */
	if (a->head)
		a->head->used = m.used;
	window_on(a, a->head);
}

char *berth_arena_strdup(berth_arena *a, const char *s)
{
	return berth_arena_strndup(a, s, strlen(s));
}
