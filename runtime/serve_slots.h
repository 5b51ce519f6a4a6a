/* Continuous batching for `vkf serve`: up to `slots` generations of one decoder model share each
 * device step. A request takes a free slot (a row of one incremental engine's KV cache; the slot
 * whose cached tokens share the longest prefix with its prompt, whose positions are then reused),
 * its prompt runs in pieces in the same runs as the other slots' next tokens (a run's rows are
 * the tokens present, each with its slot and position: a prompt costs its own tokens, and a long
 * one holds the others back by one small piece at most), it samples with its own options and stops on its
 * own end ids, stop strings and length, and leaves between steps. Single-threaded: the caller
 * submits and steps; events come back through the request's callbacks during vkf_slots_step. */
#ifndef VKF_RUNTIME_SERVE_SLOTS_H
#define VKF_RUNTIME_SERVE_SLOTS_H

#include <stddef.h>
#include <stdint.h>

#include "host/device.h"
#include "models/arch/decoder.h"
#include "models/generate/sampling.h"
#include "text/text_tokenizer.h"

enum { VKF_SLOTS_MAX_STOPS = 4, VKF_SLOTS_MAX_END_IDS = 16 };

typedef enum vkf_slot_finish {
  VKF_SLOT_STOP = 0,   /* an end id or a stop string */
  VKF_SLOT_LENGTH,     /* max_new tokens, or the slot's context is full */
  VKF_SLOT_CANCELLED,  /* on_text returned non-zero */
  VKF_SLOT_ERROR,      /* see the status passed to on_done */
} vkf_slot_finish;

enum { VKF_SLOTS_MAX_TOP_LOGPROBS = 20 };

/* One generated token's log-probability under the model (log-softmax of its raw logits, before
 * any sampling processor) and the `top_count` most likely tokens' (descending). */
typedef struct vkf_slot_logprob {
  int32_t token;
  float logprob;
  int top_count;
  int32_t top[VKF_SLOTS_MAX_TOP_LOGPROBS];
  float top_logprob[VKF_SLOTS_MAX_TOP_LOGPROBS];
} vkf_slot_logprob;

typedef struct vkf_slot_request {
  const int32_t *prompt; /* copied at submit; ids of the model's vocabulary */
  size_t prompt_len;
  vkf_sampling_options sampling; /* eos ids, bad words and forced ids are ignored here */
  uint64_t seed;
  int64_t max_new;                /* 0: until the context is full */
  const int64_t *end_ids;         /* stop after generating one of these (copied; at most 16) */
  size_t end_id_count;
  const char *const *stops;       /* stop strings (copied; at most 4, non-empty): the text ends
                                     before the first occurrence, which is never emitted */
  size_t stop_count;
  /* Polled at every step while the request is queued or in a slot (NULL: never): non-zero
   * cancels it (a client that went away). */
  int (*is_cancelled)(void *user);
  /* Text as it becomes final (stop strings held back until they can no longer match; whole UTF-8
   * characters); non-zero cancels the request at this step. */
  int (*on_text)(void *user, const char *text, size_t size);
  /* With logprobs set, per generated token (not an end id), before its text: its log-probability
   * and top_logprobs (0 .. 20) alternatives. */
  int logprobs, top_logprobs;
  void (*on_logprob)(void *user, const vkf_slot_logprob *lp);
  /* Once, when the request leaves (also on cancel and error; `error` is borrowed, NULL but for
   * VKF_SLOT_ERROR). */
  void (*on_done)(void *user, vkf_slot_finish finish, int64_t prompt_tokens,
                  int64_t completion_tokens, vkf_status error);
  void *user;
} vkf_slot_request;

typedef struct vkf_slots vkf_slots;

typedef struct vkf_slots_options {
  int64_t slots;     /* parallel sequences, >= 1 */
  int64_t ctx;       /* positions per sequence (prompt + generated); the cache holds ctx + chunk */
  int64_t chunk;     /* prompt tokens per run and slot; 0: min(128, ctx) */
  vkf_dtype dtype;   /* f32 or f16 weights and activations (the cache too) */
} vkf_slots_options;

/* A "decoder" model with a language-model head and softmax attention (borrowed, as the tokenizer;
 * they outlive the scheduler). */
vkf_status vkf_slots_create(vkf_device *device, vkf_decoder_model *model,
                            const vkf_text_tokenizer *tok, const vkf_slots_options *options,
                            vkf_slots **out);
void vkf_slots_destroy(vkf_slots *slots);

/* Queues a request (prompt copied). INVALID_ARGUMENT when the prompt is empty, has an id outside
 * the vocabulary or leaves no room in the context (the message says how many tokens it has and
 * the context), or an option is out of range; nothing is queued then and no callback runs. */
vkf_status vkf_slots_submit(vkf_slots *slots, const vkf_slot_request *request);

/* One device run: queued requests join free slots, then every busy slot advances (a prompt chunk,
 * or one token). Returns 0 with *out_busy 0 when there was nothing to do. A device error ends
 * every request in a slot with VKF_SLOT_ERROR and is returned. */
vkf_status vkf_slots_step(vkf_slots *slots, int *out_busy);

/* Since creation: the tokens the steps ran (prompt tokens and decoded ones) and the rows their
 * plans computed (those tokens, and the padding of the plan that held them). */
void vkf_slots_rows(const vkf_slots *slots, int64_t *out_tokens, int64_t *out_rows);

/* Requests queued (not yet in a slot), busy slots, and the positions each slot may hold. */
int64_t vkf_slots_queued(const vkf_slots *slots);
int64_t vkf_slots_busy(const vkf_slots *slots);
int64_t vkf_slots_context(const vkf_slots *slots);
/* Device bytes of the engine (weights, cache, plans). */
uint64_t vkf_slots_device_bytes(const vkf_slots *slots);

#endif
