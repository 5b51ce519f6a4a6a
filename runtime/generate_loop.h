/* The generation loop of `vkf generate` and vkformer_generate: the prompts (texts through the
 * tokenizer, or ids), the checkpoint's generation defaults with the caller's overrides, then the
 * greedy / sampling loop (each row's next token from its logits, streaming text, stop checks) or
 * beam search (generate_beam.h) over the device engines (gen_backend.h). Prints nothing: text
 * pieces go to a callback, speeds to the result's timings. */
#ifndef VKF_RUNTIME_GENERATE_LOOP_H
#define VKF_RUNTIME_GENERATE_LOOP_H

#include <stddef.h>
#include <stdint.h>

#include "host/device.h"
#include "models/generate/generation_config.h"
#include "models/generate/sampling.h"
#include "models/registry/model.h"
#include "text/text_tokenizer.h"
#include "runtime/gen_backend.h"

enum { VKF_RT_GEN_MAX_PROMPTS = 16, VKF_RT_GEN_DEFAULT_CTX = 4096 };

/* Called with each piece of row `row`'s text as tokens complete it (`token` -1: the bytes flushed
 * at the end). Non-zero stops the row (the greedy / sampling loop) or its remaining pieces (beam
 * search, whose tokens come at the end). */
typedef int (*vkf_rt_gen_piece_fn)(void *user, int64_t row, int64_t token, const char *piece,
                                   size_t size);

/* What to generate. Zero fields take the checkpoint's generation_config.json (else config.json)
 * value, as generate() reads it. Rows are the texts, then the id lists. */
typedef struct vkf_rt_gen_request {
  vkf_model *model; /* a model with a generate facet (vkf_model_generate_facet) */
  const vkf_text_tokenizer *tok; /* NULL: no text (ids in, ids out); prompts need one */
  const char *const *prompts;
  int64_t prompt_count;
  const int64_t *const *ids; /* unchecked: each id is checked against the vocabulary here */
  const size_t *id_counts;
  int64_t ids_count;
  const char *const *stops;
  size_t stop_count;
  int64_t max_new;   /* 0: the config's */
  int64_t ctx;       /* KV cache positions; 0: min(the config's maximum, 4096) */
  int64_t chunk;     /* prefill chunk; 0: the engine's */
  int64_t num_beams; /* 0: the config's */
  int decoding;      /* 0: the config's do_sample; 1: greedy; 2: sampling */
  double temperature, top_p, repetition_penalty; /* 0: the config's */
  int64_t top_k;                                 /* 0: the config's; -1: off (top_k 0) */
  uint64_t seed;
  int ignore_eos, fp16, cache_fp16;
  int keep_logits; /* keep every step's logits of the one row (vkf generate --save-logits) */
  /* report each step to the device's progress callback (vkf_device_report_progress) */
  int report_progress;
  vkf_rt_gen_piece_fn on_piece;
  void *user;
} vkf_rt_gen_request;

/* One sequence being generated. */
typedef struct vkf_rt_gen_row {
  int64_t *ids; /* prompt (an encoder-decoder's: its decoder start token) then generated,
                   capacity ctx */
  int64_t *src; /* encoder-decoders: the source ids */
  int64_t src_len;
  int64_t prompt_len, len;
  int done, stopped; /* stopped: the piece callback asked to stop */
  char *text;        /* decoded generated text */
  size_t text_size, text_cap;
  vkf_text_decoder *dec;
  float score; /* beam search: the sequence's score (sum of log-probabilities / length^penalty) */
} vkf_rt_gen_row;

/* The whole state; zero it before vkf_rt_gen_prepare, release with vkf_rt_gen_release. */
typedef struct vkf_rt_gen {
  vkf_rt_gen_request q;
  vkf_model_generate gm; /* the model's generate facet: its engine, vocabulary, limits, ids */
  int64_t start_id;      /* encoder-decoders: the decoder start token */
  vkf_generation_config gc;
  vkf_sampling_options so;
  vkf_stop_criteria stop;
  int64_t vocab, batch, ctx, longest, max_new, num_beams;
  vkf_rt_gen_row rows[VKF_RT_GEN_MAX_PROMPTS];
  float *saved; /* keep_logits: [max_new, vocab] */
  size_t saved_steps;
  /* timings for the speed lines */
  double prefill_s, decode_s, encode_s;
  int64_t decoded_tokens, beam_steps;
  /* greedy / sampling on an engine that measures them (the decoder-only one) */
  int has_memory;
  uint64_t mem_prefill_plan, mem_decode_plan, mem_cache;
} vkf_rt_gen;

/* Checks the model and request, reads the generation config, tokenizes and checks every prompt
 * against the context. Errors are one line naming the prompt, id or setting at fault. */
vkf_status vkf_rt_gen_prepare(vkf_rt_gen *g, const vkf_rt_gen_request *request);
/* Generates every row on `device`. */
vkf_status vkf_rt_gen_run(vkf_rt_gen *g, vkf_device *device);
void vkf_rt_gen_release(vkf_rt_gen *g);

#endif
