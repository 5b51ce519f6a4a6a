/* config.json from memory, every model family (ViT/DeiT, BERT, GPT-2, Llama, Mistral, Qwen2):
 * types, bounds on every size, the cross-field checks, id2label; then the label lookups. */
#include "models/formats/hf_config.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vkf_hf_config c;
  vkf_status s = vkf_hf_config_parse((const char *)data, size, "config.json", &c);
  if (s) {
    fuzz_check_status(s);
    return 0;
  }
  FUZZ_ASSERT(c.num_labels >= 0 && c.num_labels <= VKF_HF_MAX_LABELS);
  FUZZ_ASSERT(vkf_hf_config_label(&c, -1) == NULL);
  FUZZ_ASSERT(vkf_hf_config_label(&c, c.num_labels) == NULL);
  for (int64_t id = 0; id < c.num_labels && id < 4096; id++) {
    const char *label = vkf_hf_config_label(&c, id);
    FUZZ_ASSERT(label != NULL);
    (void)strlen(label);
  }
  vkf_hf_config_release(&c);
  return 0;
}
