/* The WordPiece tokenizer and its files: input parts vocab.txt, tokenizer_config.json (left out
 * when empty) and a text, loaded from a folder as the CLI does, then encoded every way the API
 * offers and decoded back through the common text interface. */
#include "text/text_tokenizer.h"
#include "text/wordpiece.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_ids(const vkf_wordpiece *tok, const int32_t *ids, size_t count) {
  for (size_t i = 0; i < count; i++) {
    FUZZ_ASSERT(ids[i] >= 0 && (size_t)ids[i] < vkf_wordpiece_vocab_count(tok));
    FUZZ_ASSERT(vkf_wordpiece_id_to_token(tok, ids[i]) != NULL);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_part parts[3];
  fuzz_split(data, size, parts, 3);
  fuzz_write_file("vocab.txt", parts[0].data, parts[0].size);
  if (parts[1].size)
    fuzz_write_file("tokenizer_config.json", parts[1].data, parts[1].size);
  else
    fuzz_remove_file("tokenizer_config.json");
  vkf_wordpiece *tok = NULL;
  vkf_status s = vkf_wordpiece_load(fuzz_scratch_dir(), &tok);
  if (s) {
    FUZZ_ASSERT(tok == NULL);
    fuzz_check_status(s);
    return 0;
  }
  char *text = fuzz_strdup(parts[2]);
  int32_t *ids = NULL;
  size_t count = 0;
  s = vkf_wordpiece_encode_all(tok, text, &ids, &count);
  if (!s) {
    FUZZ_ASSERT(count >= 2);
    check_ids(tok, ids, count);
    int32_t cut[8];
    size_t cut_count = 0;
    fuzz_check_status(vkf_wordpiece_encode(tok, text, 8, cut, &cut_count));
    FUZZ_ASSERT(cut_count <= 8 && cut_count <= count);
    check_ids(tok, cut, cut_count);
    const char *texts[2] = {text, "a b"};
    int32_t batch_ids[16], mask[16];
    size_t len = 0;
    fuzz_check_status(vkf_wordpiece_encode_batch(tok, texts, 2, 8, batch_ids, mask, &len));
    FUZZ_ASSERT(len <= 8);
  }
  fuzz_check_status(s);

  vkf_text_tokenizer *tt = NULL;
  s = vkf_text_tokenizer_load(fuzz_scratch_dir(), &tt);
  FUZZ_ASSERT(!s); /* the same files loaded a moment ago */
  if (ids) {
    char *decoded = NULL;
    fuzz_check_status(vkf_text_tokenizer_decode(tt, ids, count, 1, &decoded));
    free(decoded);
  }
  vkf_text_tokenizer_destroy(tt);
  free(ids);
  free(text);
  vkf_wordpiece_destroy(tok);
  return 0;
}
