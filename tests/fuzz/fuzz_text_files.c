/* Tokenizer folders without a tokenizer.json, through vkf_text_tokenizer_load as `vkf tokenize`
 * reads them. Input parts (an empty part leaves the file out): Marian's source.spm, target.spm,
 * vocab.json; BART's merges.txt (with vocab.json); tokenizer_config.json; a text; T5's
 * spiece.model (converted to a tokenizer.json document, spm_t5.h). The text is encoded
 * with and without special tokens, every id in the vocabulary, decoded in one call and streamed
 * to the same text, and ids past the vocabulary refused. */
#include "text/text_tokenizer.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const files[7] = {"source.spm", "target.spm", "vocab.json", "merges.txt",
                                     "tokenizer_config.json", NULL, "spiece.model"};

static void check_stream(const vkf_text_tokenizer *tok, const int32_t *ids, size_t count,
                         int skip, const char *whole) {
  vkf_text_decoder *dec = NULL;
  FUZZ_ASSERT(!vkf_text_decoder_create(tok, skip, &dec));
  size_t len = strlen(whole), at = 0;
  for (size_t i = 0; i <= count; i++) {
    const char *piece = NULL;
    size_t piece_size = 0;
    vkf_status s = i < count ? vkf_text_decoder_push(dec, ids[i], &piece, &piece_size)
                             : vkf_text_decoder_flush(dec, &piece, &piece_size);
    FUZZ_ASSERT(!s);
    FUZZ_ASSERT(at + piece_size <= len && memcmp(whole + at, piece, piece_size) == 0);
    at += piece_size;
  }
  FUZZ_ASSERT(at == len);
  vkf_text_decoder_destroy(dec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_part parts[7];
  fuzz_split(data, size, parts, 7);
  for (size_t i = 0; i < 7; i++) {
    if (!files[i]) continue; /* the text */
    if (parts[i].size) fuzz_write_file(files[i], parts[i].data, parts[i].size);
    else fuzz_remove_file(files[i]);
  }
  vkf_text_tokenizer *tok = NULL;
  vkf_status s = vkf_text_tokenizer_load(fuzz_scratch_dir(), &tok);
  if (s) {
    FUZZ_ASSERT(tok == NULL);
    fuzz_check_status(s);
    return 0;
  }
  char *text = fuzz_strdup(parts[5]);
  size_t vocab = vkf_text_tokenizer_vocab_count(tok);
  for (int special = 0; special < 2; special++) {
    int32_t *ids = NULL;
    size_t count = 0;
    s = vkf_text_tokenizer_encode(tok, text, special, &ids, &count);
    if (s) {
      fuzz_check_status(s);
      continue;
    }
    for (size_t i = 0; i < count; i++) FUZZ_ASSERT(ids[i] >= 0 && (size_t)ids[i] < vocab);
    char *whole = NULL;
    s = vkf_text_tokenizer_decode(tok, ids, count, special, &whole);
    if (!s) check_stream(tok, ids, count, special, whole);
    fuzz_check_status(s);
    free(whole);
    free(ids);
  }
  const int32_t bad[2] = {-1, vocab > INT32_MAX ? INT32_MAX : (int32_t)vocab};
  for (int i = 0; i < 2; i++) {
    char *out = NULL;
    s = vkf_text_tokenizer_decode(tok, &bad[i], 1, 0, &out);
    FUZZ_ASSERT(s != VKF_OK);
    fuzz_check_status(s);
  }
  free(text);
  vkf_text_tokenizer_destroy(tok);
  return 0;
}
