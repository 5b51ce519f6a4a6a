/* GLSL -> SPIR-V: a fixed variant (an embedded template with a define set listed in
 * shaders/variants.txt) comes from the SPIR-V glslc compiled at build time; anything else
 * (generated kernels, unlisted define sets) is compiled at run time through libshaderc, #include
 * resolved from the embedded table, with a SPIR-V disk cache keyed by a hash of source + includes +
 * defines + compiler version. Compiles may run on several threads at once (kernel_batch.c). */
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
/* Modules served from the build-time table, from the disk cache, and compiled by shaderc. */
void vkf_shader_compiler_counts(vkf_shader_compiler *compiler, uint32_t *out_embedded_hits,
                                uint32_t *out_disk_hits, uint32_t *out_compiles);

/* Compiles shader `name` to SPIR-V. `source` NULL: the embedded file `name` (its build-time
 * SPIR-V when the define set is a variants.txt row, in any order); otherwise generated GLSL text
 * (`name` is then only used in messages and the cache key). On success *out_words is a malloc'ed
 * SPIR-V module of *out_size bytes that the caller frees. Compile errors give a VKF_STATUS_COMPILE
 * status with the shader name, line and the compiler's message. Each shaderc run is logged at
 * VKF_LOG=2 ("shaderc: compiling ..."). */
vkf_status vkf_shader_compile(vkf_shader_compiler *compiler, const char *name, const char *source,
                              const vkf_shader_define *defines, uint32_t define_count,
                              uint32_t **out_words, size_t *out_size);
/* The same through shaderc alone: no build-time table, no disk cache, not counted (tests compare
 * it with the embedded SPIR-V). */
vkf_status vkf_shader_compile_shaderc(vkf_shader_compiler *compiler, const char *name,
                                      const char *source, const vkf_shader_define *defines,
                                      uint32_t define_count, uint32_t **out_words,
                                      size_t *out_size);

#endif
