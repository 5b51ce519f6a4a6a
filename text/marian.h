/* MarianTokenizer (transformers 4.38, a slow tokenizer over sentencepiece): source.spm pieces
 * mapped through vocab.json, a leading ">>xx<<" language code kept as a token, </s> appended;
 * decoding through target.spm. */
#ifndef VKF_MODELS_TEXT_MARIAN_H
#define VKF_MODELS_TEXT_MARIAN_H

#include <stddef.h>
#include <stdint.h>

#include "graph/base/status.h"

typedef struct vkf_marian vkf_marian;

/* Loads `dir`/source.spm, target.spm, vocab.json and the optional tokenizer_config.json (special
 * tokens, separate_vocabs with target_vocab_file). Errors: NOT_FOUND naming a missing file; the
 * spm reader's errors; PARSE naming vocab.json for a malformed vocabulary or a missing unk/pad
 * token. */
vkf_status vkf_marian_load(const char *dir, vkf_marian **out);
void vkf_marian_destroy(vkf_marian *m);

size_t vkf_marian_vocab_count(const vkf_marian *m); /* largest id + 1 of the decoding vocabulary */
const char *vkf_marian_id_to_token(const vkf_marian *m, int32_t id); /* NULL: no such id */
int32_t vkf_marian_eos_id(const vkf_marian *m);

/* tokenizer(text, add_special_tokens)["input_ids"]. Errors: INVALID_ARGUMENT for invalid UTF-8. */
vkf_status vkf_marian_encode(const vkf_marian *m, const char *text, size_t n, int add_special,
                             int32_t **out_ids, size_t *out_count);
/* decode(ids, skip_special_tokens) before clean-up: target.spm's decode_pieces between special
 * tokens (kept as text followed by a space), "▁" as space, stripped. With `hold`, trailing white
 * space is left out and *out_held_from is the text's size then. Errors: INVALID_ARGUMENT naming an
 * id outside the vocabulary. */
vkf_status vkf_marian_decode(const vkf_marian *m, const int32_t *ids, size_t count,
                             int skip_special, int hold, char **out_text, size_t *out_size,
                             size_t *out_held_from);

#endif
