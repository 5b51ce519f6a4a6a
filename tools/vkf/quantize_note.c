#include "tools/vkf/quantize_note.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

void vkf_cli_quantized_text(const vkf_model *model, char *buf, size_t size) {
  uint32_t n[VKF_DTYPE_COUNT], kept;
  vkf_model_quantized(model, n, &kept);
  size_t used = 0;
  buf[0] = 0;
  for (int d = 0; d < VKF_DTYPE_COUNT && used < size; d++)
    if (n[d])
      used += (size_t)snprintf(buf + used, size - used, "%s%s %u", used ? ", " : "",
                               vkf_dtype_name((vkf_dtype)d), n[d]);
  if (kept && used < size)
    snprintf(buf + used, size - used, "%sfloat %u", used ? ", " : "", kept);
}

void vkf_cli_quantized_json(const vkf_model *model) {
  uint32_t n[VKF_DTYPE_COUNT], kept;
  vkf_model_quantized(model, n, &kept);
  int first = 1;
  printf("{");
  for (int d = 0; d < VKF_DTYPE_COUNT; d++)
    if (n[d]) {
      printf("%s\"%s\": %u", first ? "" : ", ", vkf_dtype_name((vkf_dtype)d), n[d]);
      first = 0;
    }
  if (kept) printf("%s\"float\": %u", first ? "" : ", ", kept);
  printf("}");
}

void vkf_cli_quantize_note(const char *cmd, const vkf_model *model, const char *format) {
  uint32_t n[VKF_DTYPE_COUNT], kept;
  vkf_model_quantized(model, n, &kept);
  vkf_cli_quantize_note_counts(cmd, format, n, kept);
}

void vkf_cli_quantize_note_counts(const char *cmd, const char *format,
                                  const uint32_t n[VKF_DTYPE_COUNT], uint32_t kept) {
  if (!format || !*format || !strcasecmp(format, "none")) return;
  for (int d = 0; d < VKF_DTYPE_COUNT; d++) {
    if (!n[d] || !strcasecmp(vkf_dtype_name((vkf_dtype)d), format)) continue;
    /* Only q4_k falls back (vkf_arch_linear_weight): its 256-element superblocks. */
    fprintf(stderr,
            "%s: --quantize %s: %u linear weight%s whose rows are not a multiple of 256 use%s %s "
            "instead\n",
            cmd, format, n[d], n[d] == 1 ? "" : "s", n[d] == 1 ? "s" : "",
            vkf_dtype_name((vkf_dtype)d));
  }
  if (kept)
    fprintf(stderr,
            "%s: --quantize %s: %u linear weight%s whose rows are not a multiple of 32 stay%s "
            "float\n",
            cmd, format, kept, kept == 1 ? "" : "s", kept == 1 ? "s" : "");
}
