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
	struct chunk *head;
	size_t total;
	size_t chunks; /* made so far: the next one's seq */
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
	free(a);
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
	struct chunk *nc = berth_malloc(sizeof(*nc) + size);
	if (!nc)
		return NULL;
	nc->size = size;
	nc->used = 0;
	nc->seq = a->chunks++;
	/* a big one-off allocation goes behind the current chunk */
	if (c && n > c->size) {
		nc->next = c->next;
		c->next = nc;
	} else {
		nc->next = c;
		a->head = nc;
	}
	void *p = nc->data;
	nc->used = n;
	a->total += n;
	return p;
}

/* n bytes (16-byte aligned), not zeroed */
static inline void *alloc_raw(berth_arena *a, size_t n)
{
	struct chunk *c = a->head;
	if (n > SIZE_MAX - 15)
		return NULL;
	n = n ? (n + 15) & ~(size_t)15 : 16;
	if (!c || c->size - c->used < n)
		return alloc_chunk(a, n);
	void *p = c->data + c->used;
	c->used += n;
	a->total += n;
	return p;
}

void *berth_arena_alloc(berth_arena *a, size_t n)
{
	void *p = alloc_raw(a, n);
	if (p)
		memset(p, 0, n);
	return p;
}

char *berth_arena_strndup(berth_arena *a, const char *s, size_t n)
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
	berth_arena_mark m = {a->chunks, a->head ? a->head->used : 0, a->total};
	return m;
}

void berth_arena_release(berth_arena *a, berth_arena_mark m)
{
	/* the chunks made since (a big one-off sits behind the head) */
	for (struct chunk **pp = &a->head; *pp;) {
		struct chunk *c = *pp;
		if (c->seq >= m.seq) {
			*pp = c->next;
			free(c);
		} else {
			pp = &c->next;
		}
	}
	/* the head is the one of then: chunks made before are never put before it */
	if (a->head)
		a->head->used = m.used;
	a->total = m.total;
}

char *berth_arena_strdup(berth_arena *a, const char *s)
{
	return berth_arena_strndup(a, s, strlen(s));
}
