/* config.json from memory, every model family (ViT/DeiT, BERT, GPT-2, Llama, Mistral, Qwen2):
 * types, bounds on every size, the cross-field checks, id2label; then the label lookups. The
 * same bytes go through ReformerConfig's own reader (hf_config_reformer.h) too. */
#include "models/formats/hf_config.h"
#include "models/formats/hf_config_reformer.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void reformer(const uint8_t *data, size_t size) {
  vkf_reformer_config rc;
  vkf_status s = vkf_reformer_config_parse((const char *)data, size, "config.json", &rc);
  if (s) {
    fuzz_check_status(s);
    return;
  }
  FUZZ_ASSERT(rc.layer_count >= 1 && rc.layer_count <= VKF_REFORMER_MAX_LAYERS);
  FUZZ_ASSERT(rc.local.chunk_length >= 1 && rc.lsh.chunk_length >= 1);
  FUZZ_ASSERT(rc.num_hashes >= 1 && rc.num_hashes <= VKF_REFORMER_MAX_HASHES);
  FUZZ_ASSERT(rc.bucket_factor_count >= 0 && rc.bucket_factor_count <= VKF_REFORMER_MAX_BUCKET_FACTORS);
  for (int i = 0; i < rc.bucket_factor_count; i++)
    FUZZ_ASSERT(rc.bucket_factors[i] >= 2 && rc.bucket_factors[i] % 2 == 0);
  FUZZ_ASSERT(rc.axial_pos_shape[0] >= 1 && rc.axial_pos_shape[1] >= 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  reformer(data, size);
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
