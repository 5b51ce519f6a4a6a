/* vkf devices: every Vulkan device with its caps, as a table or JSON. */
#include <stdio.h>
#include <string.h>

#include "host/device.h"
#include "host/instance.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/cli_args.h"
#include "tools/vkf/json_out.h"

static void print_version(char *out, size_t size, uint32_t v) {
  snprintf(out, size, "%u.%u.%u", (v >> 22) & 0x7f, (v >> 12) & 0x3ff, v & 0xfff);
}

static void subgroup_ops_text(uint32_t ops, char *out, size_t size) {
  static const char *const names[] = {"basic",   "vote",    "arithmetic", "ballot",
                                      "shuffle", "shuffle_relative", "clustered", "quad"};
  out[0] = 0;
  for (int i = 0; i < 8; i++)
    if (ops & (1u << i)) {
      size_t used = strlen(out);
      snprintf(out + used, size - used, "%s%s", used ? "," : "", names[i]);
    }
  if (!out[0]) snprintf(out, size, "none");
}

/* VkComponentTypeKHR as text. */
static const char *component_name(uint32_t t) {
  static const char *const names[] = {"f16", "f32", "f64", "s8", "s16", "s32",
                                      "s64", "u8",  "u16", "u32", "u64"};
  if (t < sizeof names / sizeof names[0]) return names[t];
  if (t == 1000141000u) return "bf16";
  return "other";
}

/* How subgroup kernels get their size: required of each pipeline, the device's only size, or no
 * size guaranteed (and why). */
static const char *subgroup_control_text(const vkf_device_caps *c, char *buf, size_t size) {
  uint32_t fixed = vkf_caps_subgroup_fixed(c);
  if (c->subgroup_misreported)
    snprintf(buf, size, "%u measured (the device reports %u): no size guaranteed", c->subgroup_size,
             c->subgroup_misreported);
  else if (fixed && c->subgroup_size_control)
    snprintf(buf, size, "%u, required of each subgroup pipeline (sizes %u..%u%s)", fixed,
             c->min_subgroup_size, c->max_subgroup_size,
             c->full_subgroups ? ", full subgroups" : "");
  else if (fixed)
    snprintf(buf, size, "%u, the device's only size", fixed);
  else
    snprintf(buf, size, "any (no subgroup size control): size-independent bodies only");
  return buf;
}

/* "16x16x16 f16*f16+f32->f32 subgroup" */
static void coopmat_text(const vkf_coopmat_shape *s, char *buf, size_t size) {
  snprintf(buf, size, "%ux%ux%u %s*%s+%s->%s %s", s->m, s->n, s->k, component_name(s->a_type),
           component_name(s->b_type), component_name(s->c_type), component_name(s->result_type),
           s->scope == 3 ? "subgroup" : s->scope == 2 ? "workgroup" : "other scope");
}

static void print_json(const vkf_device_caps *c, uint32_t index, int chosen, int last) {
  char api[32], ops[128];
  print_version(api, sizeof api, c->api_version);
  subgroup_ops_text(c->subgroup_ops, ops, sizeof ops);
  printf("  {\"index\": %u, \"chosen\": %s, \"name\": ", index, chosen ? "true" : "false");
  vkf_cli_json_string(c->name);
  printf(", \"vendor\": ");
  vkf_cli_json_string(c->vendor);
  printf(", \"vendor_id\": %u, \"device_id\": %u, \"type\": \"%s\", \"driver\": ", c->vendor_id,
         c->device_id, vkf_device_kind_name(c->kind));
  vkf_cli_json_string(c->driver_name);
  printf(", \"driver_info\": ");
  vkf_cli_json_string(c->driver_info);
  printf(", \"vulkan\": \"%s\", \"max_shared_memory_size\": %u, \"subgroup_size\": %u, "
         "\"subgroup_ops\": \"%s\", \"max_workgroup_size\": [%u, %u, %u], "
         "\"max_workgroup_invocations\": %u, \"fp16_arithmetic\": %s, \"storage_16bit\": %s, "
         "\"storage_8bit\": %s, \"max_storage_buffer_range\": %llu, "
         "\"max_memory_allocation_size\": %llu, \"uma\": %s, \"timestamp_period_ns\": %g, "
         "\"cooperative_matrix\": %s, \"texel_rgba32f\": %s, \"texel_rgba16f\": %s, "
         "\"texel_rgba16ui\": %s, \"texel_r32ui\": %s, \"texel_rg32ui\": %s, "
         "\"max_texel_buffer_elements\": %u, \"profile\": ",
         api, c->max_shared_memory_size, c->subgroup_size, ops, c->max_workgroup_size[0],
         c->max_workgroup_size[1], c->max_workgroup_size[2], c->max_workgroup_invocations,
         c->fp16_arithmetic ? "true" : "false", c->storage_16bit ? "true" : "false",
         c->storage_8bit ? "true" : "false", (unsigned long long)c->max_storage_buffer_range,
         (unsigned long long)c->max_memory_allocation_size, c->uma ? "true" : "false",
         c->timestamp_period, c->cooperative_matrix ? "true" : "false",
         c->texel_rgba32f ? "true" : "false", c->texel_rgba16f ? "true" : "false",
         c->texel_rgba16ui ? "true" : "false", c->texel_r32ui ? "true" : "false",
         c->texel_rg32ui ? "true" : "false", c->max_texel_buffer_elements);
  if (c->profile[0]) vkf_cli_json_string(c->profile);
  else printf("null");
  printf(", \"coopmat_shapes\": [");
  for (uint32_t i = 0; i < c->coopmat_count; i++) {
    char text[96];
    coopmat_text(&c->coopmat[i], text, sizeof text);
    printf("%s", i ? ", " : "");
    vkf_cli_json_string(text);
  }
  printf("], \"coopmat_flexible\": %s, \"coopmat_gemm_tile\": %u, \"coopmat_tiles\": [%s%s%s]",
         c->coopmat_flexible ? "true" : "false", c->coopmat_gemm_tile,
         (c->coopmat_tiles & 8) ? "8" : "", (c->coopmat_tiles & 24) == 24 ? ", " : "",
         (c->coopmat_tiles & 16) ? "16" : "");
  printf(", \"subgroup_size_fixed\": %u, \"min_subgroup_size\": %u, \"max_subgroup_size\": %u, "
         "\"subgroup_size_control\": %s, \"subgroup_misreported\": %u, \"coopmat_reason\": ",
         vkf_caps_subgroup_fixed(c), c->min_subgroup_size, c->max_subgroup_size,
         c->subgroup_size_control ? "true" : "false", c->subgroup_misreported);
  vkf_cli_json_string(c->coopmat_reason);
  printf(", \"heaps\": [");
  for (uint32_t h = 0; h < c->heap_count; h++)
    printf("%s{\"size\": %llu, \"device_local\": %s}", h ? ", " : "",
           (unsigned long long)c->heap_size[h], c->heap_device_local[h] ? "true" : "false");
  printf("]}%s\n", last ? "" : ",");
}

static void print_table(const vkf_device_caps *c, uint32_t index, int chosen) {
  char api[32], ops[128], sg_text[160];
  print_version(api, sizeof api, c->api_version);
  subgroup_ops_text(c->subgroup_ops, ops, sizeof ops);
  printf("%s device %u: %s%s\n", chosen ? "*" : " ", index, c->name,
         chosen ? "   (chosen)" : "");
  printf("    %-28s %s (0x%04x), %s\n", "vendor, type", c->vendor, c->vendor_id,
         vkf_device_kind_name(c->kind));
  printf("    %-28s %s %s\n", "driver", c->driver_name, c->driver_info);
  printf("    %-28s %s\n", "Vulkan", api);
  if (c->profile[0]) printf("    %-28s %s (caps clamped)\n", "profile", c->profile);
  printf("    %-28s %u bytes\n", "max shared memory", c->max_shared_memory_size);
  printf("    %-28s %u (%s)\n", "subgroup size (ops)", c->subgroup_size, ops);
  printf("    %-28s %s\n", "  kernels run at", subgroup_control_text(c, sg_text, sizeof sg_text));
  if (c->loop_iteration_limit)
    printf("    %-28s %u a SIMD group of a workgroup, all loops together (kernels planned within it)\n",
           "loop iterations", c->loop_iteration_limit);
  printf("    %-28s %u x %u x %u, %u invocations\n", "max workgroup", c->max_workgroup_size[0],
         c->max_workgroup_size[1], c->max_workgroup_size[2], c->max_workgroup_invocations);
  printf("    %-28s fp16 math %s, 16-bit storage %s, 8-bit storage %s\n", "numerics",
         c->fp16_arithmetic ? "yes" : "no", c->storage_16bit ? "yes" : "no",
         c->storage_8bit ? "yes" : "no");
  printf("    %-28s %llu bytes\n", "maxStorageBufferRange",
         (unsigned long long)c->max_storage_buffer_range);
  printf("    %-28s RGBA32F %s, RGBA16F %s, RGBA16UI %s, R32UI %s, RG32UI %s, %u texels, "
         "offsets %% %u\n",
         "uniform texel buffers", c->texel_rgba32f ? "yes" : "no", c->texel_rgba16f ? "yes" : "no",
         c->texel_rgba16ui ? "yes" : "no", c->texel_r32ui ? "yes" : "no",
         c->texel_rg32ui ? "yes" : "no", c->max_texel_buffer_elements,
         c->min_texel_buffer_offset_alignment);
  printf("    %-28s %llu bytes\n", "maxMemoryAllocationSize",
         (unsigned long long)c->max_memory_allocation_size);
  for (uint32_t h = 0; h < c->heap_count; h++)
    printf("    %-28s %.1f MiB%s\n", h == 0 ? "memory heaps" : "",
           c->heap_size[h] / 1048576.0, c->heap_device_local[h] ? " (device-local)" : "");
  printf("    %-28s %s\n", "UMA", c->uma ? "yes" : "no");
  printf("    %-28s %s, %g ns/tick\n", "timestamps", c->timestamps ? "yes" : "no",
         c->timestamp_period);
  printf("    %-28s %s\n", "cooperative matrix", c->cooperative_matrix ? "yes" : "no");
  for (uint32_t i = 0; i < c->coopmat_count; i++) {
    char text[96];
    coopmat_text(&c->coopmat[i], text, sizeof text);
    printf("    %-28s %s\n", i == 0 ? "  shapes (M x N x K)" : "", text);
  }
  if (c->coopmat_flexible) printf("    %-28s %s\n", "  flexible dimensions", "yes (VK_NV_cooperative_matrix2)");
  if (c->coopmat_gemm_tile)
    printf("    %-28s %ux%ux%u f16 tiles%s\n", "  GEMM kernels", c->coopmat_gemm_tile,
           c->coopmat_gemm_tile, c->coopmat_gemm_tile,
           (c->coopmat_tiles & ~c->coopmat_gemm_tile & 24) == 0 ? ""
           : c->coopmat_gemm_tile == 8 ? "; 16x16x16 for tests (flexible dimensions)"
                                       : "; 8x8x8 too");
  if (c->coopmat_reason[0]) printf("    %-28s %s\n", "  allowlist", c->coopmat_reason);
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: vkf devices [--json] [--device N|NAME]\n"
          "  Lists the Vulkan devices with the caps the lowering reads; '*' marks the one\n"
          "  commands use (VKF_DEVICE, else the best).\n"
          "  --json           one JSON array on stdout\n"
          "  --device N|NAME  mark this device as chosen instead (checks that it exists)\n");
}

int vkf_cli_devices(int argc, char **argv) {
  int json = 0;
  const char *selector = NULL;
  for (int i = 0; i < argc; i++) {
    if (vkf_cli_is_help(argv[i])) return usage(stdout), 0;
    if (strcmp(argv[i], "--json") == 0) json = 1;
    else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) selector = argv[++i];
    else return vkf_cli_bad_arg("vkf devices", usage, argc, argv, i);
  }
  vkf_instance *instance = NULL;
  vkf_status status = vkf_instance_create(NULL, &instance);
  if (status) return vkf_cli_fail(status);
  uint32_t chosen = 0;
  status = vkf_instance_choose_device(instance, selector, &chosen);
  if (status) {
    vkf_instance_destroy(instance);
    return vkf_cli_fail(status);
  }
  /* The chosen device is opened: its caps then carry what device creation measures (the subgroup
   * width its kernels really run at), as commands see them. */
  vkf_device *device = NULL;
  status = vkf_device_create(instance, chosen, &device);
  if (status) {
    vkf_instance_destroy(instance);
    return vkf_cli_fail(status);
  }
  uint32_t n = vkf_instance_device_count(instance);
  if (json) printf("[\n");
  for (uint32_t i = 0; i < n; i++) {
    const vkf_device_caps *c =
        i == chosen ? vkf_device_caps_get(device) : vkf_instance_device_caps(instance, i);
    if (json) print_json(c, i, i == chosen, i + 1 == n);
    else print_table(c, i, i == chosen);
  }
  vkf_device_destroy(device);
  if (json) printf("]\n");
  uint32_t messages = vkf_instance_validation_message_count(instance);
  vkf_instance_destroy(instance);
  return messages ? 1 : 0;
}
