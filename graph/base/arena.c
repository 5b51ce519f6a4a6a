/* Owns the chunked bump allocator behind graph metadata. */
#include "graph/base/arena.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct chunk {
  struct chunk *next;
  size_t size, used;
  _Alignas(16) unsigned char data[];
} chunk;

struct vkf_arena {
  chunk *head;
  size_t used_size;
};

enum { CHUNK_MIN_SIZE = 64 * 1024 };

vkf_arena *vkf_arena_create(void) { return calloc(1, sizeof(vkf_arena)); }

void vkf_arena_destroy(vkf_arena *arena) {
  if (!arena) return;
  for (chunk *c = arena->head; c;) {
    chunk *next = c->next;
    free(c);
    c = next;
  }
  free(arena);
}

void *vkf_arena_alloc(vkf_arena *arena, size_t size) {
  size = (size + 15) & ~(size_t)15;
  if (size == 0) size = 16;
  chunk *c = arena->head;
  if (!c || c->size - c->used < size) {
    size_t cap = size > CHUNK_MIN_SIZE ? size : CHUNK_MIN_SIZE;
    c = malloc(sizeof(chunk) + cap);
    if (!c) return NULL;
    c->size = cap;
    c->used = 0;
    c->next = arena->head;
    arena->head = c;
  }
  void *p = c->data + c->used;
  c->used += size;
  arena->used_size += size;
  memset(p, 0, size);
  return p;
}

char *vkf_arena_strdup(vkf_arena *arena, const char *s) {
  size_t n = strlen(s) + 1;
  char *p = vkf_arena_alloc(arena, n);
  if (p) memcpy(p, s, n);
  return p;
}

char *vkf_arena_printf(vkf_arena *arena, const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  char *p = n >= 0 ? vkf_arena_alloc(arena, (size_t)n + 1) : NULL;
  if (p) vsnprintf(p, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return p;
}

size_t vkf_arena_used_size(const vkf_arena *arena) { return arena->used_size; }
