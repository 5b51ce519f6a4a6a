/* tokenizer.json (part 1 of the input): the model, vocab, merges, added tokens, normalizer,
 * pre-tokenizer, decoder and post-processor sections; then a text (part 2, or a fixed mixed
 * sentence) encoded and decoded through what was loaded, and ids past the vocabulary refused. */
#include "text/bpe.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_part parts[2];
  size_t n = fuzz_split(data, size, parts, 2);
  fuzz_write_file("tokenizer.json", parts[0].data, parts[0].size);
  char path[512];
  snprintf(path, sizeof path, "%s/tokenizer.json", fuzz_scratch_dir());
  vkf_bpe *bpe = NULL;
  char type[32];
  vkf_status s = vkf_bpe_load(path, &bpe, type);
  if (s) {
    FUZZ_ASSERT(bpe == NULL);
    fuzz_check_status(s);
    return 0;
  }
  if (!bpe) {
    FUZZ_ASSERT(memchr(type, 0, sizeof type) != NULL);
    return 0;
  }
  static const char fixed[] =
      "Hello world! Ünïcödé 你好 <s> 123  tabs\tand\nnewlines \xF0\x9F\x98\x80";
  const char *text = n > 1 ? (const char *)parts[1].data : fixed;
  size_t text_size = n > 1 ? parts[1].size : sizeof fixed - 1;
  size_t vocab = vkf_bpe_vocab_count(bpe);
  for (int special = 0; special < 2; special++) {
    int32_t *ids = NULL;
    size_t count = 0;
    s = vkf_bpe_encode(bpe, text, text_size, special, &ids, &count);
    if (s) {
      fuzz_check_status(s);
      continue;
    }
    /* In range, but not necessarily a token: a post-processor template emits the ids its file
     * gives, as Hugging Face's TemplateProcessing does without checking them (decode then names
     * such an id in a clear error). */
    for (size_t i = 0; i < count; i++) FUZZ_ASSERT(ids[i] >= 0 && (size_t)ids[i] < vocab);
    for (int hold = 0; hold < 2; hold++) {
      char *out = NULL;
      size_t out_size = 0, held = 0;
      s = vkf_bpe_decode(bpe, ids, count, special, hold, &out, &out_size, &held);
      if (!s) FUZZ_ASSERT(out && out[out_size] == 0 && held <= out_size);
      fuzz_check_status(s);
      free(out);
    }
    free(ids);
  }
  const int32_t bad[2] = {-1, vocab > INT32_MAX ? INT32_MAX : (int32_t)vocab};
  for (int i = 0; i < 2; i++) {
    char *out = NULL;
    size_t out_size = 0, held = 0;
    s = vkf_bpe_decode(bpe, &bad[i], 1, 0, 0, &out, &out_size, &held);
    FUZZ_ASSERT(s != VKF_OK);
    fuzz_check_status(s);
  }
  vkf_bpe_destroy(bpe);
  return 0;
}
