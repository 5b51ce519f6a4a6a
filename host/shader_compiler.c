/* Owns run-time shader compilation (shaderc), #include resolution from the embedded sources, the
 * lookup of build-time SPIR-V for fixed variants and the SPIR-V disk cache. */
#include "host/shader_compiler.h"

#include <errno.h>
#include <pthread.h>
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
#include "shaders/embedded_spirv.h"

/* The largest module accepted from the cache: ours are tens of KiB. */
#define MAX_SPIRV_BYTES ((size_t)64 << 20)

struct vkf_shader_compiler {
  shaderc_compiler_t shaderc; /* created on the first shaderc compile: most runs need none */
  char cache_dir[1024];       /* "" when caching is off */
  uint64_t version_hash;      /* compiler + embedded headers: part of every key */
  uint32_t embedded_hits, disk_hits, compiles;
  /* Kernels build on several threads (host/kernel_batch.c): this guards the lazy shaderc
   * handle and the counts; shaderc_compile_into_spv itself is thread-safe. */
  pthread_mutex_t lock;
};

static void count(vkf_shader_compiler *c, uint32_t *counter) {
  pthread_mutex_lock(&c->lock);
  (*counter)++;
  pthread_mutex_unlock(&c->lock);
}

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
  if (pthread_mutex_init(&c->lock, NULL)) {
    free(c);
    return vkf_status_make(VKF_STATUS_INTERNAL, "shader compiler: pthread_mutex_init failed");
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
  if (compiler->shaderc) shaderc_compiler_release(compiler->shaderc);
  pthread_mutex_destroy(&compiler->lock);
  free(compiler);
}

const char *vkf_shader_compiler_cache_dir(const vkf_shader_compiler *compiler) {
  return compiler->cache_dir[0] ? compiler->cache_dir : NULL;
}

void vkf_shader_compiler_counts(vkf_shader_compiler *compiler, uint32_t *out_embedded_hits,
                                uint32_t *out_disk_hits, uint32_t *out_compiles) {
  pthread_mutex_lock(&compiler->lock);
  *out_embedded_hits = compiler->embedded_hits;
  *out_disk_hits = compiler->disk_hits;
  *out_compiles = compiler->compiles;
  pthread_mutex_unlock(&compiler->lock);
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

/* The defines as shaders/CMakeLists.txt writes a variants.txt row's key: "NAME" or "NAME=VALUE"
 * (an empty value reads as none, as for glslc), sorted by strcmp, joined by single spaces. 0 when
 * the list does not fit `out`; such a variant is simply not in the table. */
static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int canonical_defines(const vkf_shader_define *defines, uint32_t count, char *out,
                             size_t size) {
  enum { MAX_DEFINES = 32, DEFINE_CHARS = 96 };
  if (count > MAX_DEFINES) return 0;
  char text[MAX_DEFINES][DEFINE_CHARS];
  const char *sorted[MAX_DEFINES];
  for (uint32_t i = 0; i < count; i++) {
    const char *v = defines[i].value ? defines[i].value : "";
    int n = snprintf(text[i], DEFINE_CHARS, "%s%s%s", defines[i].name, *v ? "=" : "", v);
    if (n < 0 || n >= DEFINE_CHARS) return 0;
    sorted[i] = text[i];
  }
  qsort(sorted, count, sizeof sorted[0], cmp_str);
  size_t used = 0;
  out[0] = 0;
  for (uint32_t i = 0; i < count; i++) {
    int n = snprintf(out + used, size - used, "%s%s", i ? " " : "", sorted[i]);
    if (n < 0 || (size_t)n >= size - used) return 0;
    used += (size_t)n;
  }
  return 1;
}

static void describe_defines(const vkf_shader_define *defines, uint32_t count, char *out,
                             size_t size) {
  out[0] = 0;
  for (uint32_t i = 0; i < count; i++) {
    size_t used = strlen(out);
    snprintf(out + used, size - used, "%s%s%s%s", i ? " " : "", defines[i].name,
             defines[i].value ? "=" : "", defines[i].value ? defines[i].value : "");
  }
}

vkf_status vkf_shader_compile_shaderc(vkf_shader_compiler *c, const char *name, const char *source,
                                      const vkf_shader_define *defines, uint32_t define_count,
                                      uint32_t **out_words, size_t *out_size) {
  *out_words = NULL;
  *out_size = 0;
  if (!source) source = vkf_embedded_shader_find(name);
  if (!source)
    return vkf_status_make(VKF_STATUS_NOT_FOUND, "no embedded shader named \"%s\"", name);
  pthread_mutex_lock(&c->lock);
  if (!c->shaderc) c->shaderc = shaderc_compiler_initialize();
  shaderc_compiler_t shaderc = c->shaderc;
  pthread_mutex_unlock(&c->lock);
  if (!shaderc) return vkf_status_make(VKF_STATUS_INTERNAL, "shaderc_compiler_initialize failed");
  /* Keep these options identical to the glslc flags of shaders/CMakeLists.txt
   * (--target-env=vulkan1.1 -O): the embedded table must hold what this would compile. */
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
      shaderc, source, strlen(source), shaderc_compute_shader, name, "main", opts);
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
    char defs[512];
    describe_defines(defines, define_count, defs, sizeof defs);
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
    }
  }
  shaderc_result_release(result);
  return status;
}

/* A fixed variant (an embedded template, no generated source) whose row is in variants.txt. */
static int find_embedded(const char *name, const vkf_shader_define *defines, uint32_t count,
                         uint32_t **out_words, size_t *out_size) {
  char key[2048];
  if (!canonical_defines(defines, count, key, sizeof key)) return 0;
  const vkf_embedded_spirv *e = vkf_embedded_spirv_find(name, key);
  if (!e) return 0;
  uint32_t *words = malloc(e->size);
  if (!words) return 0;
  memcpy(words, e->code, e->size);
  *out_words = words;
  *out_size = e->size;
  return 1;
}

vkf_status vkf_shader_compile(vkf_shader_compiler *c, const char *name, const char *source,
                              const vkf_shader_define *defines, uint32_t define_count,
                              uint32_t **out_words, size_t *out_size) {
  *out_words = NULL;
  *out_size = 0;
  if (!source && find_embedded(name, defines, define_count, out_words, out_size)) {
    count(c, &c->embedded_hits);
    return VKF_OK;
  }
  const char *text = source ? source : vkf_embedded_shader_find(name);
  if (!text) return vkf_status_make(VKF_STATUS_NOT_FOUND, "no embedded shader named \"%s\"", name);

  uint64_t key1 = vkf_hash64(c->version_hash, text, strlen(text));
  for (uint32_t i = 0; i < define_count; i++) {
    key1 = vkf_hash64(key1, defines[i].name, strlen(defines[i].name) + 1);
    const char *v = defines[i].value ? defines[i].value : "";
    key1 = vkf_hash64(key1, v, strlen(v) + 1);
  }
  /* A second, differently seeded pass makes a 128-bit key: collisions would be silent bugs. */
  uint64_t key2 = vkf_hash64(key1 ^ 0x9e3779b97f4a7c15ull, text, strlen(text));
  char path[1200];
  if (c->cache_dir[0]) {
    cache_path(c, key1, key2, path, sizeof path);
    if (read_cached(path, key1, key2, out_words, out_size)) {
      count(c, &c->disk_hits);
      return VKF_OK;
    }
  }
  /* One line per shaderc run, so a fixed variant missing from variants.txt shows (tests grep
   * "fixed variant"). */
  char defs[512];
  describe_defines(defines, define_count, defs, sizeof defs);
  vkf_log(VKF_LOG_INFO, "shaderc: compiling %s %s [%s]",
          source ? "generated kernel" : "fixed variant not in shaders/variants.txt:", name, defs);
  VKF_RETURN_IF_ERROR(
      vkf_shader_compile_shaderc(c, name, source, defines, define_count, out_words, out_size));
  count(c, &c->compiles);
  if (c->cache_dir[0]) vkf_cache_file_write(path, key1, key2, *out_words, *out_size);
  return VKF_OK;
}
