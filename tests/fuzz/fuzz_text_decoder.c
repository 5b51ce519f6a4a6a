/* Arbitrary id sequences through the text decoders of the committed tokenizers: the first byte
 * picks the tokenizer and skip_special, each following pair of bytes is an id (a few of them past
 * either end of the vocabulary). Valid ids must decode, in one call and streamed, to the same
 * text; an invalid id must be refused by both, leaving the streaming decoder as it was. */
#include "text/text_tokenizer.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const dirs[] = {"tests/models/data/bert_tiny", "tests/models/data/gpt2",
                                   "tests/models/data/llama2",    "tests/models/data/llama3",
                                   "tests/models/data/qwen2",     "tests/models/data/qwen2_nfc"};
#define TOKENIZER_COUNT (sizeof dirs / sizeof dirs[0])
static vkf_text_tokenizer *tokenizers[TOKENIZER_COUNT];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!tokenizers[0]) {
    for (size_t i = 0; i < TOKENIZER_COUNT; i++) {
      vkf_status s = vkf_text_tokenizer_load(fuzz_source_path(dirs[i]), &tokenizers[i]);
      if (s) {
        fprintf(stderr, "fuzz_text_decoder: %s\n", vkf_status_message(s));
        abort();
      }
    }
  }
  if (size == 0) return 0;
  const vkf_text_tokenizer *tok = tokenizers[data[0] % TOKENIZER_COUNT];
  int skip_special = (data[0] / TOKENIZER_COUNT) & 1;
  size_t vocab = vkf_text_tokenizer_vocab_count(tok);
  size_t n = (size - 1) / 2;
  int32_t *ids = malloc((n ? n : 1) * sizeof *ids);
  FUZZ_ASSERT(ids);
  size_t valid = 0;
  vkf_text_decoder *dec = NULL;
  FUZZ_ASSERT(!vkf_text_decoder_create(tok, skip_special, &dec));
  char *streamed = malloc(1);
  size_t streamed_size = 0;
  FUZZ_ASSERT(streamed);
  for (size_t i = 0; i < n; i++) {
    /* ids cover [-2, vocab + 2): the edges are where range checks go wrong */
    int64_t id = (int64_t)((data[1 + 2 * i] | (size_t)data[2 + 2 * i] << 8) % (vocab + 4)) - 2;
    const char *piece = NULL;
    size_t piece_size = 0;
    vkf_status s = vkf_text_decoder_push(dec, (int32_t)id, &piece, &piece_size);
    if (id < 0 || (size_t)id >= vocab || !vkf_text_tokenizer_id_to_token(tok, (int32_t)id)) {
      FUZZ_ASSERT(s != VKF_OK);
      fuzz_check_status(s);
      continue;
    }
    FUZZ_ASSERT(!s);
    ids[valid++] = (int32_t)id;
    streamed = realloc(streamed, streamed_size + piece_size + 1);
    FUZZ_ASSERT(streamed);
    memcpy(streamed + streamed_size, piece, piece_size);
    streamed_size += piece_size;
  }
  const char *piece = NULL;
  size_t piece_size = 0;
  FUZZ_ASSERT(!vkf_text_decoder_flush(dec, &piece, &piece_size));
  streamed = realloc(streamed, streamed_size + piece_size + 1);
  FUZZ_ASSERT(streamed);
  memcpy(streamed + streamed_size, piece, piece_size);
  streamed_size += piece_size;
  char *whole = NULL;
  FUZZ_ASSERT(!vkf_text_tokenizer_decode(tok, ids, valid, skip_special, &whole));
  /* decode() gives a C string, so a decoded NUL byte ends it; compare up to there */
  size_t whole_len = strlen(whole);
  FUZZ_ASSERT(whole_len <= streamed_size && memcmp(whole, streamed, whole_len) == 0);
  FUZZ_ASSERT(whole_len == streamed_size || streamed[whole_len] == 0);
  free(whole);
  free(streamed);
  vkf_text_decoder_destroy(dec);
  free(ids);
  return 0;
}
