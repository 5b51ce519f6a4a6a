/* Texts through the committed tokenizers (BERT's WordPiece; GPT-2, Llama 2, Llama 3, Qwen2 and
 * Qwen2-NFC BPE), loaded once: the first input byte picks one, the rest is the text. Every id must
 * be in the vocabulary, and the ids must decode, in one call and through the streaming decoder,
 * to the same text (the streaming decoder's contract). */
#include "text/text_tokenizer.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const dirs[] = {"tests/models/data/bert_tiny", "tests/models/data/gpt2",
                                   "tests/models/data/llama2",    "tests/models/data/llama3",
                                   "tests/models/data/qwen2",     "tests/models/data/qwen2_nfc"};
#define TOKENIZER_COUNT (sizeof dirs / sizeof dirs[0])
static vkf_text_tokenizer *tokenizers[TOKENIZER_COUNT];

static void load_all(void) {
  for (size_t i = 0; i < TOKENIZER_COUNT; i++) {
    vkf_status s = vkf_text_tokenizer_load(fuzz_source_path(dirs[i]), &tokenizers[i]);
    if (s) {
      fprintf(stderr, "fuzz_tokenize: %s\n", vkf_status_message(s));
      abort();
    }
  }
}

/* decode(ids) must equal the concatenated streaming output plus flush. */
static void check_decode(const vkf_text_tokenizer *tok, const int32_t *ids, size_t count,
                         int skip_special) {
  char *whole = NULL;
  vkf_status s = vkf_text_tokenizer_decode(tok, ids, count, skip_special, &whole);
  FUZZ_ASSERT(!s);
  vkf_text_decoder *dec = NULL;
  FUZZ_ASSERT(!vkf_text_decoder_create(tok, skip_special, &dec));
  size_t whole_len = strlen(whole), at = 0;
  for (size_t i = 0; i <= count; i++) {
    const char *piece = NULL;
    size_t piece_size = 0;
    s = i < count ? vkf_text_decoder_push(dec, ids[i], &piece, &piece_size)
                  : vkf_text_decoder_flush(dec, &piece, &piece_size);
    FUZZ_ASSERT(!s);
    FUZZ_ASSERT(at + piece_size <= whole_len && memcmp(whole + at, piece, piece_size) == 0);
    at += piece_size;
  }
  FUZZ_ASSERT(at == whole_len);
  vkf_text_decoder_destroy(dec);
  free(whole);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!tokenizers[0]) load_all();
  if (size == 0) return 0;
  const vkf_text_tokenizer *tok = tokenizers[data[0] % TOKENIZER_COUNT];
  char *text = fuzz_strdup((fuzz_part){data + 1, size - 1});
  for (int special = 0; special < 2; special++) {
    int32_t *ids = NULL;
    size_t count = 0;
    vkf_status s = vkf_text_tokenizer_encode(tok, text, special, &ids, &count);
    if (s) {
      fuzz_check_status(s);
      break;
    }
    for (size_t i = 0; i < count; i++) {
      FUZZ_ASSERT(ids[i] >= 0 && (size_t)ids[i] < vkf_text_tokenizer_vocab_count(tok));
      FUZZ_ASSERT(vkf_text_tokenizer_id_to_token(tok, ids[i]) != NULL);
    }
    check_decode(tok, ids, count, special);
    free(ids);
  }
  free(text);
  return 0;
}
