/* generation_config.json from memory, then the sampling options and stop criteria derived from
 * what the reader accepts. */
#include "models/generate/generation_config.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const int64_t vocab = 1000;
  vkf_generation_config c;
  vkf_status s =
      vkf_generation_config_parse((const char *)data, size, "generation_config.json", vocab, &c);
  if (s) {
    fuzz_check_status(s);
    return 0;
  }
  FUZZ_ASSERT(c.eos_token_id_count <= VKF_GENERATION_MAX_EOS);
  for (size_t i = 0; i < c.eos_token_id_count; i++)
    FUZZ_ASSERT(c.eos_token_ids[i] >= 0 && c.eos_token_ids[i] < vocab);
  FUZZ_ASSERT(c.max_length >= 1 && (c.max_new_tokens == -1 || c.max_new_tokens >= 1));
  FUZZ_ASSERT(c.top_k >= 0 && c.top_p >= 0 && c.top_p <= 1 && c.repetition_penalty > 0);
  vkf_sampling_options options;
  vkf_generation_config_sampling(&c, &options);
  vkf_stop_criteria stop;
  vkf_generation_config_stop_criteria(&c, 3, &stop);
  FUZZ_ASSERT(vkf_generation_config_new_token_limit(&c, 3) >= 1);
  FUZZ_ASSERT(vkf_generation_config_new_token_limit(&c, SIZE_MAX / 2) >= 1);
  return 0;
}
