/* The host-side decoding policy of `vkf generate`: Hugging Face's logits processors and warpers
 * (transformers 4.38.2, num_beams 1) on one fp32 logits row, greedy and seeded sampling picks, and
 * the stop conditions (EOS ids, max new tokens, stop strings). */
#ifndef VKF_MODELS_SAMPLING_H
#define VKF_MODELS_SAMPLING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/base/status.h"

/* What runs on the logits, in Hugging Face's order: RepetitionPenaltyLogitsProcessor,
 * NoRepeatNGramLogitsProcessor (greedy and sampling alike), then, only when do_sample, the warpers
 * TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper. Zero means "off" everywhere, which
 * is also what Hugging Face does with 1.0 for the three ratios and with 0 for the two sizes:
 *   repetition_penalty  0 or 1.0: off; else > 0. Each distinct id seen so far: score < 0 ?
 *                       score * p : score / p (float32 arithmetic, as torch does).
 *   no_repeat_ngram_size 0: off; n > 0 bans each token that would repeat an n-gram of the ids.
 *   temperature         0 or 1.0: off; else > 0, scores / t.
 *   top_k               0: off; keeps every score >= the k-th largest (ties at the cut stay), k
 *                       clamped to V.
 *   top_p               0 or >= 1.0: off; else in (0, 1): sorts ascending in torch.sort's order
 *                       (libstdc++'s std::sort, so ties fall as in Hugging Face), removes tokens
 *                       whose cumulative probability is <= 1 - top_p, keeps at least the largest.
 *                       A top_p of exactly 0 (legal in Hugging Face: keep only the top token) is
 *                       written as VKF_SAMPLING_TOP_P_ZERO.
 * Filtered scores become -INFINITY. */
typedef struct vkf_sampling_options {
  bool do_sample;
  double repetition_penalty;
  int64_t no_repeat_ngram_size;
  /* Length processors, after the n-gram ban (generate()'s order): MinLengthLogitsProcessor
   * (while id_count < min_length every eos id gets -inf), MinNewTokensLengthLogitsProcessor (while
   * id_count - prompt_len < min_new_tokens), ForcedBOSTokenLogitsProcessor (at id_count 1 every
   * token but forced_bos_token_id gets -inf, that one 0), ForcedEOSTokenLogitsProcessor (at
   * id_count == max_length - 1 the same for the forced eos ids). Zero / false: off. Borrowed. */
  int64_t min_length, min_new_tokens;
  size_t prompt_len;
  const int64_t *eos_ids;
  size_t eos_id_count;
  bool forced_bos;
  int64_t forced_bos_token_id;
  const int64_t *forced_eos_ids;
  size_t forced_eos_id_count;
  int64_t max_length;
  /* NoBadWordsLogitsProcessor, after the n-gram ban: bad_word_count sequences of bad_word_lens[i]
   * ids, concatenated in bad_words; the last id of each gets -inf when the ids so far end with
   * the others (always, for one id) and are at least as many as the sequence. A one-id sequence
   * equal to an eos id is skipped, as transformers 4.38 does. Borrowed. */
  const int64_t *bad_words;
  const uint32_t *bad_word_lens;
  size_t bad_word_count;
  double temperature;
  int64_t top_k;
  double top_p;
} vkf_sampling_options;

/* top_p = 0 keeps one token; any positive value below 2^-25 gives the same float32 threshold
 * (1 - top_p rounds to 1.0f), so this stands for it while 0 keeps meaning "off". */
#define VKF_SAMPLING_TOP_P_ZERO 1e-30

/* Applies the processors (and, with do_sample, the warpers) to `scores` [vocab_size] in place.
 * `ids` [id_count] are all ids so far (prompt + generated); each in [0, vocab_size), else
 * INVALID_ARGUMENT naming the position. Options out of range (negative sizes, a non-positive
 * ratio other than 0, top_p > 1) are INVALID_ARGUMENT naming the option. Scratch memory is
 * allocated per call (O(vocab_size)); OUT_OF_MEMORY when it cannot be. */
vkf_status vkf_sampling_process(const vkf_sampling_options *options, const int64_t *ids,
                                size_t id_count, size_t vocab_size, float *scores);

/* INVALID_ARGUMENT naming the first NaN or infinite value of the model's raw logits [rows,
 * vocab_size] at generation step `step` (0: the prompt's): a model computing non-finite logits
 * (NaN weights, an overflow) must stop with that said, not pick token 0 or print `nan`. */
vkf_status vkf_sampling_check_logits(const float *logits, size_t rows, size_t vocab_size,
                                     int64_t step);

/* torch.argmax over `scores` [vocab_size]: the first maximal index (a NaN counts as maximal, as
 * in torch). vocab_size >= 1. */
int64_t vkf_sampling_argmax(const float *scores, size_t vocab_size);

/* xoshiro256** (Blackman and Vigna), its state seeded from one 64-bit seed by splitmix64: the
 * same seed gives the same stream on every machine. Not thread-safe; one per generation. */
typedef struct vkf_rng {
  uint64_t s[4];
} vkf_rng;

void vkf_rng_seed(vkf_rng *rng, uint64_t seed);
uint64_t vkf_rng_next(vkf_rng *rng);
/* Uniform in [0, 1): the top 53 bits of the next output times 2^-53. */
double vkf_rng_uniform(vkf_rng *rng);

/* The probabilities softmax(scores) [vocab_size] in double (max subtracted first); -inf scores
 * get 0. INVALID_ARGUMENT when every score is -inf or one is NaN. */
vkf_status vkf_sampling_softmax(const float *scores, size_t vocab_size, double *out_probs);

/* One token drawn from softmax(scores) [vocab_size] (scores already processed): u =
 * vkf_rng_uniform(), the first index whose running sum of probabilities exceeds u (a token of
 * probability 0 is never drawn). Errors as vkf_sampling_softmax. */
vkf_status vkf_sampling_draw(const float *scores, size_t vocab_size, vkf_rng *rng,
                             int64_t *out_token);

/* One decoding step on the logits of the last position: processes `logits` [vocab_size] in place
 * (afterwards they hold the processed scores, as Hugging Face's `scores` output) and picks the
 * next token: with do_sample a draw from `rng` (required then), else the argmax. */
vkf_status vkf_sampling_next(const vkf_sampling_options *options, const int64_t *ids,
                             size_t id_count, size_t vocab_size, float *logits, vkf_rng *rng,
                             int64_t *out_token);

/* ---- stop conditions ---- */

typedef enum vkf_stop_reason {
  VKF_STOP_NONE = 0,
  VKF_STOP_EOS,            /* the last generated token is one of eos_ids */
  VKF_STOP_MAX_NEW_TOKENS, /* generated_count reached max_new_tokens */
  VKF_STOP_STRING,         /* a stop string occurs in the generated text */
} vkf_stop_reason;

/* Borrowed arrays; zero counts mean "none". max_new_tokens 0: no length limit here. */
typedef struct vkf_stop_criteria {
  const int64_t *eos_ids;
  size_t eos_id_count;
  size_t max_new_tokens;
  const char *const *stop_strings; /* NUL-terminated, non-empty */
  size_t stop_string_count;
} vkf_stop_criteria;

/* Checks the state after a token was appended: `generated` [generated_count] are the new tokens
 * only (not the prompt) and `generated_text` [text_size] their decoded text (may be NULL when
 * there are no stop strings). EOS is checked first, then the length, then the strings (loosely
 * as Hugging Face's StopStringCriteria: any occurrence anywhere in the generated text, not only
 * at its end). *out_text_end is the byte length of text to keep: the start of the earliest stop
 * string match for VKF_STOP_STRING, else text_size. Returns the reason, VKF_STOP_NONE to go on. */
vkf_stop_reason vkf_stop_check(const vkf_stop_criteria *criteria, const int64_t *generated,
                               size_t generated_count, const char *generated_text, size_t text_size,
                               size_t *out_text_end);

#endif
