/* TransfoXLConfig from memory (hf_config_transfo_xl.h): types, bounds, the cutoffs' order, div_val
 * and the widths it leaves, mem_len, attn_type. */
#include "models/formats/hf_config_transfo_xl.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vkf_txl_config c;
  vkf_status s = vkf_txl_config_parse((const char *)data, size, "config.json", &c);
  if (s) {
    fuzz_check_status(s);
    return 0;
  }
  FUZZ_ASSERT(c.div_val >= 1 && c.mem_len >= 0);
  FUZZ_ASSERT(c.cutoff_count >= 0 && c.cutoff_count <= VKF_TXL_MAX_CUTOFFS);
  FUZZ_ASSERT(c.cutoffs[c.cutoff_count] == c.vocab_size);
  int64_t prev = 0, width = c.d_embed;
  for (int64_t i = 0; i <= c.cutoff_count; i++) {
    FUZZ_ASSERT(c.cutoffs[i] > prev);
    prev = c.cutoffs[i];
    FUZZ_ASSERT(c.div_val == 1 || width >= 1);
    width /= c.div_val;
  }
  return 0;
}
