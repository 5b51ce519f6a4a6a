/* Internal to models/text: Unigram segmentation (Viterbi over the vocabulary's log-probabilities)
 * of one pre-tokenized word, as Hugging Face tokenizers' Unigram::encode_optimized does it. */
#ifndef VKF_MODELS_TEXT_UNIGRAM_H
#define VKF_MODELS_TEXT_UNIGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "models/text/bpe_model.h"

/* Writes the ids of valid UTF-8 w[0..n) to out (room for n ids) and returns their count, or
 * SIZE_MAX when memory ran out. Ties keep the first path found (shorter pieces first); a
 * character starting no piece of its own length is an unknown node scored min_score - 10; runs of
 * unknown nodes fuse into one string, which becomes its <0xNN> bytes with byte_fallback, else the
 * unk id (no unk id: the run is dropped). */
size_t vkf_unigram_encode(const vkf_bpe *b, const char *w, size_t n, int32_t *out);

#endif
