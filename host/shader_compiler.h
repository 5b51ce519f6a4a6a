/* GLSL -> SPIR-V at run time through libshaderc: #include resolved from the embedded table,
 * defines per variant, and a SPIR-V disk cache keyed by a hash of source + includes + defines +
 * compiler version. Not thread-safe. */
#ifndef VKF_HOST_SHADER_COMPILER_H
#define VKF_HOST_SHADER_COMPILER_H

#include <stddef.h>
#include <stdint.h>

#include "graph/base/status.h"
#include "host/cache_file.h" /* vkf_hash64, for cache keys elsewhere in host/ */

typedef struct vkf_shader_define {
  const char *name;
  const char *value; /* NULL: defined without a value */
} vkf_shader_define;

typedef struct vkf_shader_compiler vkf_shader_compiler;

/* The cache directory is VKF_CACHE_DIR, else $XDG_CACHE_HOME/vkformer, else ~/.cache/vkformer;
 * VKF_NO_CACHE=1 disables it. A directory that cannot be created only disables caching. Entries
 * carry a hash of their key and content (host/cache_file.h): a corrupt one is discarded with a
 * warning, compiled again and rewritten. */
vkf_status vkf_shader_compiler_create(vkf_shader_compiler **out_compiler);
void vkf_shader_compiler_destroy(vkf_shader_compiler *compiler);
/* NULL when disk caching is off. */
const char *vkf_shader_compiler_cache_dir(const vkf_shader_compiler *compiler);
void vkf_shader_compiler_counts(const vkf_shader_compiler *compiler, uint32_t *out_disk_hits,
                                uint32_t *out_compiles);

/* Compiles shader `name` to SPIR-V. `source` NULL: the embedded file `name`; otherwise generated
 * GLSL text (`name` is then only used in messages and the cache key). On success *out_words is a
 * malloc'ed SPIR-V module of *out_size bytes that the caller frees. Compile errors give a
 * VKF_STATUS_COMPILE status with the shader name, line and the compiler's message. */
vkf_status vkf_shader_compile(vkf_shader_compiler *compiler, const char *name, const char *source,
                              const vkf_shader_define *defines, uint32_t define_count,
                              uint32_t **out_words, size_t *out_size);

#endif
