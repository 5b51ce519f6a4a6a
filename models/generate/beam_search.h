/* Beam search as transformers 4.38.2's generate(num_beams > 1, do_sample=False) runs it
 * (GenerationMixin.beam_search, BeamSearchScorer, BeamHypotheses), on the host: given each step's
 * logits of every beam it says which beams continue with which token, so the caller reorders its
 * KV cache rows and runs the next step. Model-agnostic: a decoder-only engine passes the prompts
 * (left-padded to one length, as Hugging Face batches them), an encoder-decoder one passes its
 * decoder start token as a prompt of length 1.
 *
 * Rows: row r = source b * num_beams + beam. Each step:
 *   scores = log_softmax(logits) (float32), then the logits processors in Hugging Face's order:
 *   RepetitionPenalty, NoRepeatNGram (each over the row's own ids, prompt and padding included),
 *   MinLength (min_length), MinNewTokensLength (min_new_tokens), ForcedBOSToken (at length 1),
 *   ForcedEOSToken (at length max_length - 1); plus the running beam score (float32; the beams
 *   other than the first of each source start at -1e9). Per source torch.topk of
 *   max(2, 1 + eos count) · num_beams candidates over num_beams · vocab scores (torch's tie order,
 *   see torch_topk.h); an EOS candidate among the first num_beams closes a hypothesis with score
 *   sum_logprobs / generated_len ** length_penalty, generated_len counting the tokens after the
 *   prompt, EOS included; the first num_beams other candidates continue. A source is done when
 *   BeamHypotheses.is_done says so (early_stopping true / false / "never"); its rows then carry
 *   pad_token_id from row 0 (Hugging Face's quirk) with score 0. Generation stops when every
 *   source is done or the rows reach max_length. */
#ifndef VKF_MODELS_BEAM_SEARCH_H
#define VKF_MODELS_BEAM_SEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/base/status.h"

typedef enum vkf_early_stopping {
  VKF_EARLY_STOPPING_FALSE = 0, /* heuristic: stop when no open beam can beat the worst kept */
  VKF_EARLY_STOPPING_TRUE,      /* stop once num_beams hypotheses are finished */
  VKF_EARLY_STOPPING_NEVER,     /* the exact bound ("never" in generation_config.json) */
} vkf_early_stopping;

typedef struct vkf_beam_options {
  int64_t batch;         /* sources, >= 1 */
  int64_t num_beams;     /* >= 2 (Hugging Face runs greedy search for 1) */
  int64_t vocab_size;    /* >= max(2, 1 + eos count) */
  int64_t prompt_len;    /* every row's length at the start (decoder_prompt_len), >= 1 */
  int64_t max_length;    /* rows stop growing here; > prompt_len */
  double length_penalty; /* GenerationConfig default 1.0 */
  vkf_early_stopping early_stopping;
  int64_t num_return_sequences; /* 1 .. num_beams; 0 reads as 1 */
  const int64_t *eos_ids;       /* borrowed; none: hypotheses only close at max_length */
  size_t eos_id_count;
  int64_t pad_token_id;          /* -1: none (an error once a source finishes early) */
  double repetition_penalty;     /* 0 or 1: off */
  int64_t no_repeat_ngram_size;  /* 0: off */
  /* bad_words_ids as vkf_sampling_options has them (eos ids are eos_ids below). Borrowed. */
  const int64_t *bad_words;
  const uint32_t *bad_word_lens;
  size_t bad_word_count;
  int64_t min_length;            /* 0: off (needs eos ids) */
  int64_t min_new_tokens;        /* 0: off (needs eos ids) */
  int64_t forced_bos_token_id;   /* -1: none */
  const int64_t *forced_eos_ids; /* borrowed; count 0: none */
  size_t forced_eos_id_count;
} vkf_beam_options;

typedef struct vkf_beam_search vkf_beam_search;

/* Checks the options (INVALID_ARGUMENT naming the field) and the prompts `prompt_ids`
 * [batch, prompt_len] (ids in [0, vocab)); each source's prompt is copied to its num_beams rows. */
vkf_status vkf_beam_search_create(const vkf_beam_options *options, const int64_t *prompt_ids,
                                  vkf_beam_search **out);
void vkf_beam_search_destroy(vkf_beam_search *search);

/* One step on the logits [batch · num_beams, vocab] of every row's last position. Afterwards
 * vkf_beam_search_next gives each new row's source row (global row index: new row r continues old
 * row beam_rows[r], so a KV cache is reordered by gathering rows beam_rows[0..rows)) and its new
 * token. *out_finished is true when generation is over (call finalize). INVALID_ARGUMENT when
 * called after that; INTERNAL, as Hugging Face raises, when a source has fewer than num_beams
 * non-EOS candidates or finishes without a pad_token_id. */
vkf_status vkf_beam_search_step(vkf_beam_search *search, const float *logits, bool *out_finished);
void vkf_beam_search_next(const vkf_beam_search *search, const int64_t **out_beam_rows,
                          const int64_t **out_tokens);

/* The rows as they stand: [batch · num_beams, *out_length]. */
const int64_t *vkf_beam_search_ids(const vkf_beam_search *search, int64_t *out_length);

/* BeamSearchScorer.finalize: the open beams of unfinished sources join their hypotheses, and each
 * source gives its num_return_sequences best, best first: sequences [batch · n, length] (prompt
 * included, the first eos id written after a hypothesis shorter than the longest when it fits
 * under max_length, pad_token_id after that), their scores (float32, as Hugging Face's
 * sequences_scores) and lengths (tokens before the padding, the written eos included). The arrays
 * belong to the search. */
typedef struct vkf_beam_result {
  int64_t count, length;
  const int64_t *sequences;
  const float *scores;
  const int64_t *lengths;
} vkf_beam_result;
vkf_status vkf_beam_search_finalize(vkf_beam_search *search, vkf_beam_result *out);

#endif
