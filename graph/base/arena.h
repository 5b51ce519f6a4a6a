/* Bump allocator for metadata (graph nodes, names, shapes): everything is freed in one call. */
#ifndef VKF_GRAPH_ARENA_H
#define VKF_GRAPH_ARENA_H

#include <stddef.h>

typedef struct vkf_arena vkf_arena;

/* Returns NULL when out of memory. Not thread-safe: one arena per owner. */
vkf_arena *vkf_arena_create(void);
void vkf_arena_destroy(vkf_arena *arena);
/* Zeroed, 16-byte aligned; NULL when out of memory. Lives until vkf_arena_destroy. */
void *vkf_arena_alloc(vkf_arena *arena, size_t size);
char *vkf_arena_strdup(vkf_arena *arena, const char *s);
char *vkf_arena_printf(vkf_arena *arena, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Bytes handed out so far (for tests and dumps). */
size_t vkf_arena_used_size(const vkf_arena *arena);

#endif
