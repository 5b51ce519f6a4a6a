/* D2L's Bahdanau attention encoder-decoder (model_type "d2l_seq2seq_attention"; the PyTorch
 * reference is tools/goldens/seeds_seq2seq_attention.py): D2L 1.0's Seq2SeqEncoder (Embedding ->
 * GRU of num_layers over every source position) and Seq2SeqAttentionDecoder (at each step the
 * top layer's state queries an additive attention over the encoder's outputs masked by the
 * source's valid lengths; cat(context, embedded token) -> GRU step -> dense). Built from the
 * gather, GEMM, GRU_SCAN and ADDITIVE_ATTENTION ops, in f32. */
#ifndef VKF_MODELS_ARCH_SEQ2SEQ_ATTENTION_H
#define VKF_MODELS_ARCH_SEQ2SEQ_ATTENTION_H

#include <stdint.h>

#include "graph/ir/graph.h"
#include "models/arch/arch_loader.h"
#include "models/formats/hf_config.h"

/* Longest source (the encoder's scan has no positions; this bounds the graphs) and longest
 * teacher-forced target: a FULL build unrolls one decoder step per target token. */
#define VKF_S2SA_MAX_SOURCE ((int64_t)1 << 16)
#define VKF_S2SA_MAX_TARGET ((int64_t)512)

typedef struct vkf_s2sa_model vkf_s2sa_model;

/* Reads DIR/config.json and the weights with D2L 1.0's names (encoder.rnn.rnn.* for d2l.GRU's
 * nn.GRU, decoder.rnn.* for D2L's decoder's own nn.GRU; either nesting accepted on either
 * side) and checks every tensor's shape. One-line errors name the directory, file and tensor. */
extern const vkf_arch_loader vkf_s2sa_loader;
const vkf_hf_config *vkf_s2sa_config(const vkf_s2sa_model *model);

/* What a build computes.
 *  ENCODE: the encoder over input_ids [B, S]: encoder_outputs batch first [B, S, H] and the final
 *          state [L, B, H].
 *  FULL:   the teacher-forced forward over decoder_input_ids [B, T] from the encoder's state:
 *          logits [B, T, V], every step's attention weights [B, T, S], encoder outputs [B, S, H].
 *  STEP:   one decoder token per row (tokens [B, 1]) from `state` [L, B, H] against
 *          `enc_outputs` [B, S, H]: logits [B, V], next_state [L, B, H], the step's attention
 *          weights [B, S]. */
typedef enum vkf_s2sa_mode {
  VKF_S2SA_ENCODE = 0,
  VKF_S2SA_FULL,
  VKF_S2SA_STEP,
} vkf_s2sa_mode;

typedef struct vkf_s2sa_build_options {
  vkf_s2sa_mode mode;
  int64_t batch;   /* 0: 1 */
  int64_t src_len; /* S, 1 .. VKF_S2SA_MAX_SOURCE */
  int64_t tgt_len; /* FULL: T, 1 .. VKF_S2SA_MAX_TARGET */
  vkf_dtype dtype; /* VKF_F32 only (the GRU scan is f32); anything else is UNSUPPORTED */
  int encoder_outputs, logits, attention_weights; /* outputs wanted (FULL; ENCODE: both always) */
} vkf_s2sa_build_options;

/* Absent values are VKF_NO_VALUE. */
typedef struct vkf_s2sa_graph {
  vkf_graph *graph;            /* owned by the caller: vkf_graph_destroy */
  vkf_value input_ids;         /* ENCODE, FULL: i32 [B, S] */
  vkf_value valid_lens;        /* FULL, STEP: i32 [B] */
  vkf_value decoder_input_ids; /* FULL: i32 [B, T]; STEP: i32 [B, 1] */
  vkf_value state;             /* STEP: f32 [L, B, H] */
  vkf_value enc_outputs;       /* STEP: f32 [B, S, H] */
  vkf_value encoder_outputs;   /* ENCODE, FULL: f32 [B, S, H] */
  vkf_value final_state;       /* ENCODE: [L, B, H]; STEP: the next state */
  vkf_value logits;            /* FULL: [B, T, V]; STEP: [B, V] */
  vkf_value attention_weights; /* FULL: [B, T, S]; STEP: [B, S] */
} vkf_s2sa_graph;

vkf_status vkf_s2sa_build(vkf_s2sa_model *model, const vkf_s2sa_build_options *options,
                          vkf_s2sa_graph *out);

#endif
