/* `vkf attn` for D2L's Bahdanau encoder-decoder (models/arch/seq2seq_attention.h): the
 * decoder's additive-attention weights over the source at each greedy step, the heatmaps the
 * seeds draw after translating a sentence (D2L's predict_seq2seq with save_attention_weights). */
#ifndef VKF_TOOLS_ATTN_SEQ2SEQ_H
#define VKF_TOOLS_ATTN_SEQ2SEQ_H

#include <stdint.h>

#include "host/device.h"
#include "models/registry/model.h"

typedef struct vkf_attn_seq2seq_options {
  const char *ids;     /* the source: "5,9,3" */
  int index;           /* the input's number in the file names */
  int64_t max_steps;   /* decoder steps at most (>= 1) */
  const char *out_dir; /* attn_<index>_steps.png */
  const char *npy_dir; /* NULL, or attn_<index>.npy f32 [steps, S] and attn_<index>_ids.npy */
} vkf_attn_seq2seq_options;

/* Greedy decoding of one source from the generation config's decoder start token (its bos when
 * it has none), a step per token up to the first eos id (that step included, as D2L saves
 * it) or max_steps; one row of weights per step. Prints the PNG's path on stdout. */
vkf_status vkf_attn_seq2seq(vkf_model *model, vkf_device *device,
                            const vkf_attn_seq2seq_options *options);

#endif
