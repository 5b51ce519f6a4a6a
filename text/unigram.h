/* Internal to text/: Unigram segmentation (Viterbi over the vocabulary's log-probabilities)
 * of one pre-tokenized word, as Hugging Face tokenizers' Unigram::encode_optimized does it. */
#ifndef VKF_MODELS_TEXT_UNIGRAM_H
#define VKF_MODELS_TEXT_UNIGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "text/bpe_model.h"

/* Returned when a character needs an unknown node and the model has no unk id: tokenizers fails
 * the encoding then ("Encountered an unknown token but `unk_id` is missing"). */
#define VKF_UNIGRAM_NO_UNK (SIZE_MAX - 1)

/* Writes the ids of valid UTF-8 w[0..n) to out (room for n ids) and returns their count, SIZE_MAX
 * when memory ran out, or VKF_UNIGRAM_NO_UNK. Ties keep the first path found (shorter pieces
 * first); a character starting no piece of its own length is an unknown node scored
 * min_score - 10 (an error without an unk id, where that node would be on a best path so far);
 * runs of unknown nodes fuse into one string, which becomes its <0xNN> bytes with byte_fallback,
 * else the unk id. */
size_t vkf_unigram_encode(const vkf_bpe *b, const char *w, size_t n, int32_t *out);

#endif
