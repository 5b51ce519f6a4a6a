#include "tools/vkf/quantize_note.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

void vkf_cli_quantized_text(const vkf_model *model, char *buf, size_t size) {
  uint32_t n[VKF_DTYPE_COUNT];
  vkf_model_quantized(model, n);
  size_t used = 0;
  buf[0] = 0;
  for (int d = 0; d < VKF_DTYPE_COUNT && used < size; d++) {
    if (n[d])
      used += (size_t)snprintf(buf + used, size - used, "%s%s %u", used ? ", " : "",
                               vkf_dtype_name((vkf_dtype)d), n[d]);
  }
}

void vkf_cli_quantized_json(const vkf_model *model) {
  uint32_t n[VKF_DTYPE_COUNT];
  vkf_model_quantized(model, n);
  printf("{");
  for (int d = 0, first = 1; d < VKF_DTYPE_COUNT; d++) {
    if (n[d])
      printf("%s\"%s\": %u", first ? "" : ", ", vkf_dtype_name((vkf_dtype)d), n[d]),
          first = 0;
  }
  printf("}");
}

void vkf_cli_quantize_note(const char *cmd, const vkf_model *model, const char *format) {
  if (!format || !*format || !strcasecmp(format, "none")) return;
  uint32_t n[VKF_DTYPE_COUNT];
  vkf_model_quantized(model, n);
  uint32_t total = 0;
  for (int d = 0; d < VKF_DTYPE_COUNT; d++) total += n[d];
  if (!total) {
    fprintf(stderr,
            "%s: --quantize %s: no linear weight was quantised (none has rows that are whole "
            "blocks of it); the model ran with the file's weights\n",
            cmd, format);
    return;
  }
  for (int d = 0; d < VKF_DTYPE_COUNT; d++) {
    if (!n[d] || !strcasecmp(vkf_dtype_name((vkf_dtype)d), format)) continue;
    /* Only q4_k falls back (vkf_arch_linear_weight): its 256-element superblocks. */
    fprintf(stderr,
            "%s: --quantize %s: %u linear weight%s whose rows are not a multiple of 256 use%s %s "
            "instead\n",
            cmd, format, n[d], n[d] == 1 ? "" : "s", n[d] == 1 ? "s" : "", vkf_dtype_name((vkf_dtype)d));
  }
}
