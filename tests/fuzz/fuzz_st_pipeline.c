/* The sentence-transformers files beside a BERT checkpoint, as vkf_bert_pipeline_load reads them
 * from a folder. Input parts (an empty part leaves the file out): modules.json,
 * 1_Pooling/config.json, sentence_bert_config.json, config.json. */
#include "models/arch/bert.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *const files[4] = {"modules.json", "1_Pooling/config.json",
                                       "sentence_bert_config.json", "config.json"};
  fuzz_part parts[4];
  fuzz_split(data, size, parts, 4);
  for (int i = 0; i < 4; i++) {
    if (parts[i].size)
      fuzz_write_file(files[i], parts[i].data, parts[i].size);
    else
      fuzz_remove_file(files[i]);
  }
  vkf_hf_config config = {0};
  config.max_position_embeddings = 512;
  vkf_bert_pipeline p;
  vkf_status s = vkf_bert_pipeline_load(fuzz_scratch_dir(), &config, &p);
  if (s) {
    fuzz_check_status(s);
    return 0;
  }
  FUZZ_ASSERT(p.pooling == VKF_BERT_POOL_MEAN || p.pooling == VKF_BERT_POOL_CLS);
  FUZZ_ASSERT(p.max_seq_length >= 2 && p.max_seq_length <= 512);
  return 0;
}
