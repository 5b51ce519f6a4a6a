/* The WordPiece and WordLevel models of a tokenizer.json (tokenizers' models/wordpiece and
 * models/wordlevel): one pre-tokenized word to ids through the vocabulary alone. */
#include <stdlib.h>
#include <string.h>

#include "text/bpe_model.h"
#include "text/unicode.h"

/* WordPiece::tokenize: the longest vocabulary entry at the start of what is left (spelled with the
 * continuing_subword_prefix past the word's first piece), shortened a character at a time; a word
 * with a part no entry covers, or longer than max_input_chars_per_word characters, is unk alone. */
static size_t word_piece(const vkf_bpe *b, const char *w, size_t n, int32_t *out) {
  size_t chars = 0;
  for (size_t i = 0; i < n; i++) chars += ((uint8_t)w[i] & 0xC0) != 0x80;
  int bad = chars > b->max_input_chars;
  size_t prefix = strlen(b->prefix), count = 0;
  char *buf = bad ? NULL : malloc(prefix + n + 1); /* prefix + the rest of the word */
  if (!bad && !buf) return SIZE_MAX - 1;
  if (buf) memcpy(buf, b->prefix, prefix);
  for (size_t start = 0; !bad && start < n;) {
    int32_t id = -1;
    size_t end = n;
    while (end > start) {
      if (start == 0) id = vkf_bpe_find(b, w, end);
      else memcpy(buf + prefix, w + start, end - start), id = vkf_bpe_find(b, buf, prefix + end - start);
      if (id >= 0) break;
      end--; /* back one character */
      while (end > start && ((uint8_t)w[end] & 0xC0) == 0x80) end--;
    }
    if (id < 0) bad = 1;
    else out[count++] = id, start = end;
  }
  free(buf);
  if (!bad) return count;
  if (b->unk_id < 0) return SIZE_MAX;
  out[0] = b->unk_id;
  return 1;
}

size_t vkf_bpe_word_model_encode(const vkf_bpe *b, const char *w, size_t n, int32_t *out) {
  if (b->model == VKF_BPE_MODEL_WORD_PIECE) return word_piece(b, w, n, out);
  int32_t id = vkf_bpe_find(b, w, n);
  if (id < 0 && b->unk_id < 0) return SIZE_MAX;
  out[0] = id >= 0 ? id : b->unk_id;
  return 1;
}
