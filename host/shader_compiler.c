/* Owns run-time shader compilation (shaderc), #include resolution from the embedded sources and
 * the SPIR-V disk cache. */
#include "host/shader_compiler.h"

#include <errno.h>
#include <shaderc/shaderc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph/base/env.h"
#include "graph/base/log.h"
#include "host/cache_file.h"
#include "shaders/embedded.h"

/* The largest module accepted from the cache: ours are tens of KiB. */
#define MAX_SPIRV_BYTES ((size_t)64 << 20)

struct vkf_shader_compiler {
  shaderc_compiler_t shaderc;
  char cache_dir[1024];  /* "" when caching is off */
  uint64_t version_hash; /* compiler + embedded headers: part of every key */
  uint32_t disk_hits, compiles;
};

static int mkdir_p(const char *path) {
  char tmp[1024];
  snprintf(tmp, sizeof tmp, "%s", path);
  for (char *p = tmp + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return -1;
      *p = '/';
    }
  return (mkdir(tmp, 0755) == 0 || errno == EEXIST) ? 0 : -1;
}

static void choose_cache_dir(vkf_shader_compiler *c) {
  const vkf_env *env = vkf_env_get();
  c->cache_dir[0] = 0;
  if (env->no_cache) return;
  if (env->cache_dir)
    snprintf(c->cache_dir, sizeof c->cache_dir, "%s", env->cache_dir);
  else if (env->xdg_cache_home)
    snprintf(c->cache_dir, sizeof c->cache_dir, "%s/vkformer", env->xdg_cache_home);
  else if (env->home)
    snprintf(c->cache_dir, sizeof c->cache_dir, "%s/.cache/vkformer", env->home);
  if (c->cache_dir[0] && mkdir_p(c->cache_dir) != 0) {
    vkf_log(VKF_LOG_WARN, "cannot create cache directory %s; shader caching is off", c->cache_dir);
    c->cache_dir[0] = 0;
  }
}

vkf_status vkf_shader_compiler_create(vkf_shader_compiler **out_compiler) {
  *out_compiler = NULL;
  vkf_shader_compiler *c = calloc(1, sizeof *c);
  if (!c) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
  c->shaderc = shaderc_compiler_initialize();
  if (!c->shaderc) {
    free(c);
    return vkf_status_make(VKF_STATUS_INTERNAL, "shaderc_compiler_initialize failed");
  }
  unsigned version = 0, revision = 0;
  shaderc_get_spv_version(&version, &revision);
  char tag[64];
  snprintf(tag, sizeof tag, "shaderc spv %u.%u vkf-key-2", version, revision);
  uint64_t h = vkf_hash64(0, tag, strlen(tag));
  /* Any embedded header may be #included, so all of them are part of every key. */
  for (unsigned i = 0; i < vkf_embedded_shader_count; i++) {
    const char *n = vkf_embedded_shaders[i].name;
    size_t len = strlen(n);
    if (len > 5 && strcmp(n + len - 5, ".glsl") == 0)
      h = vkf_hash64(h, vkf_embedded_shaders[i].source, strlen(vkf_embedded_shaders[i].source));
  }
  c->version_hash = h;
  choose_cache_dir(c);
  *out_compiler = c;
  return VKF_OK;
}

void vkf_shader_compiler_destroy(vkf_shader_compiler *compiler) {
  if (!compiler) return;
  shaderc_compiler_release(compiler->shaderc);
  free(compiler);
}

const char *vkf_shader_compiler_cache_dir(const vkf_shader_compiler *compiler) {
  return compiler->cache_dir[0] ? compiler->cache_dir : NULL;
}

void vkf_shader_compiler_counts(const vkf_shader_compiler *compiler, uint32_t *out_disk_hits,
                                uint32_t *out_compiles) {
  *out_disk_hits = compiler->disk_hits;
  *out_compiles = compiler->compiles;
}

static shaderc_include_result *resolve_include(void *user, const char *requested, int type,
                                               const char *requesting, size_t depth) {
  (void)user, (void)type, (void)depth;
  shaderc_include_result *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  const char *src = vkf_embedded_shader_find(requested);
  if (src) {
    r->source_name = requested;
    r->source_name_length = strlen(requested);
    r->content = src;
    r->content_length = strlen(src);
  } else {
    /* shaderc reports an include failure as: empty source name + the message in content. */
    char *msg = malloc(256);
    if (msg) snprintf(msg, 256, "%s: no embedded shader named \"%s\"", requesting, requested);
    r->content = msg ? msg : "include not found";
    r->content_length = strlen(r->content);
    r->user_data = msg;
  }
  return r;
}

static void release_include(void *user, shaderc_include_result *r) {
  (void)user;
  if (r) free(r->user_data);
  free(r);
}

/* Entries are self-checking files (host/cache_file.h), named by the 128-bit key. */
static void cache_path(const vkf_shader_compiler *c, uint64_t key1, uint64_t key2, char *out,
                       size_t size) {
  snprintf(out, size, "%s/%016llx%016llx.spv.vkfc", c->cache_dir, (unsigned long long)key1,
           (unsigned long long)key2);
}

/* A verified entry must still be a SPIR-V module: the magic and a whole number of words. */
static int read_cached(const char *path, uint64_t key1, uint64_t key2, uint32_t **out_words,
                       size_t *out_size) {
  void *data = NULL;
  size_t size = 0;
  if (!vkf_cache_file_load("SPIR-V", path, key1, key2, MAX_SPIRV_BYTES, &data, &size)) return 0;
  if (size < 20 || size % 4 != 0 || ((const uint32_t *)data)[0] != 0x07230203u) {
    vkf_log(VKF_LOG_WARN, "SPIR-V cache entry %s holds no SPIR-V module (%zu bytes), rebuilding it",
            path, size);
    free(data);
    return 0;
  }
  *out_words = data;
  *out_size = size;
  return 1;
}

vkf_status vkf_shader_compile(vkf_shader_compiler *c, const char *name, const char *source,
                              const vkf_shader_define *defines, uint32_t define_count,
                              uint32_t **out_words, size_t *out_size) {
  *out_words = NULL;
  *out_size = 0;
  if (!source) source = vkf_embedded_shader_find(name);
  if (!source)
    return vkf_status_make(VKF_STATUS_NOT_FOUND, "no embedded shader named \"%s\"", name);

  uint64_t key1 = vkf_hash64(c->version_hash, source, strlen(source));
  for (uint32_t i = 0; i < define_count; i++) {
    key1 = vkf_hash64(key1, defines[i].name, strlen(defines[i].name) + 1);
    const char *v = defines[i].value ? defines[i].value : "";
    key1 = vkf_hash64(key1, v, strlen(v) + 1);
  }
  /* A second, differently seeded pass makes a 128-bit key: collisions would be silent bugs. */
  uint64_t key2 = vkf_hash64(key1 ^ 0x9e3779b97f4a7c15ull, source, strlen(source));
  char path[1200];
  if (c->cache_dir[0]) {
    cache_path(c, key1, key2, path, sizeof path);
    if (read_cached(path, key1, key2, out_words, out_size)) {
      c->disk_hits++;
      return VKF_OK;
    }
  }

  shaderc_compile_options_t opts = shaderc_compile_options_initialize();
  if (!opts) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "shaderc options");
  shaderc_compile_options_set_target_env(opts, shaderc_target_env_vulkan,
                                         shaderc_env_version_vulkan_1_1);
  shaderc_compile_options_set_optimization_level(opts, shaderc_optimization_level_performance);
  shaderc_compile_options_set_include_callbacks(opts, resolve_include, release_include, NULL);
  for (uint32_t i = 0; i < define_count; i++) {
    const char *v = defines[i].value ? defines[i].value : "";
    shaderc_compile_options_add_macro_definition(opts, defines[i].name, strlen(defines[i].name), v,
                                                 strlen(v));
  }
  shaderc_compilation_result_t result = shaderc_compile_into_spv(
      c->shaderc, source, strlen(source), shaderc_compute_shader, name, "main", opts);
  shaderc_compile_options_release(opts);
  vkf_status status = VKF_OK;
  if (!result) {
    status = vkf_status_make(VKF_STATUS_INTERNAL, "shader %s: shaderc returned no result", name);
  } else if (shaderc_result_get_compilation_status(result) != shaderc_compilation_status_success) {
    /* shaderc's message already reads "<name>:<line>: error: ..."; keep it whole, one line. */
    char msg[2048];
    snprintf(msg, sizeof msg, "%s", shaderc_result_get_error_message(result));
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' ')) msg[--n] = 0;
    for (char *p = msg; *p; p++)
      if (*p == '\n') *p = ';';
    char defs[512] = "";
    for (uint32_t i = 0; i < define_count; i++) {
      size_t used = strlen(defs);
      snprintf(defs + used, sizeof defs - used, "%s%s%s%s", i ? " " : "", defines[i].name,
               defines[i].value ? "=" : "", defines[i].value ? defines[i].value : "");
    }
    status = vkf_status_make(VKF_STATUS_COMPILE, "shader %s failed to compile [%s]: %s", name, defs,
                             msg);
  } else {
    size_t size = shaderc_result_get_length(result);
    uint32_t *words = malloc(size);
    if (!words) {
      status = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
    } else {
      memcpy(words, shaderc_result_get_bytes(result), size);
      *out_words = words;
      *out_size = size;
      c->compiles++;
      if (c->cache_dir[0]) vkf_cache_file_write(path, key1, key2, words, size);
    }
  }
  shaderc_result_release(result);
  return status;
}
