/* What the encoder–decoder loader (encdec_model.c) hands the graph builder (encdec.c): the
 * family's tensor names and parts and the loaded checkpoint. Private to these two files. */
#ifndef VKF_MODELS_ARCH_ENCDEC_INTERNAL_H
#define VKF_MODELS_ARCH_ENCDEC_INTERNAL_H

#include "models/arch/arch_weights.h"
#include "models/arch/encdec.h"
#include "models/arch/transformer_block.h"

typedef enum encdec_kind { ENCDEC_BART = 0, ENCDEC_MARIAN, ENCDEC_T5, ENCDEC_D2L } encdec_kind;

/* How positions enter: learned rows offset by 2 (BART), Marian's sinusoids (sines in the first
 * half, cosines in the second, computed in float64), D2L's interleaved float32 sinusoids, or
 * T5's relative buckets added to the scores. */
typedef enum encdec_positions {
  POS_LEARNED_OFFSET2 = 0,
  POS_SINUSOID_HALVES,
  POS_SINUSOID_INTERLEAVED,
  POS_RELATIVE,
} encdec_positions;

typedef struct encdec_family {
  const char *model_type;
  encdec_kind kind;
  const char *lm_arch, *base_arch; /* class names with and without the head */
  const char *task_prefix;         /* "model." for BART and Marian task models, else "" */
  const char *enc_layer_fmt, *dec_layer_fmt; /* "encoder.layers.%lld." */
  encdec_positions positions;
  vkf_block_norm norm;
  vkf_block_order order;
  vkf_block_names enc_names, dec_self_names; /* encoder layer; decoder self-attention + MLP */
  vkf_block_names dec_cross_names; /* decoder cross-attention (attention, out, norm only) */
  const char *enc_final_norm, *dec_final_norm; /* pre-norm stacks' final norms (T5), or NULL */
  const char *enc_embed_norm, *dec_embed_norm; /* BART's layernorm_embedding, or NULL */
  const char *enc_positions, *dec_positions;   /* learned position tables, or NULL */
  const char *rel_bias_fmt;                    /* T5: "%s.block.0.layer.0.SelfAttention..." */
} encdec_family;

struct vkf_encdec_model {
  vkf_arch_files f;
  const encdec_family *fam;
  const char *prefix; /* fam->task_prefix or "" */
  vkf_block_names enc_names, dec_self_names, dec_cross_names; /* with this file's MLP names */
  char enc_embed[96], dec_embed[96]; /* token tables (shared or per stack) */
  int lm_head;          /* 0 none, 1 tied to the decoder's token table, 2 own lm_head.weight */
  int final_logits_bias; /* BART, Marian: the buffer is in the file */
  float embed_scale;
};

vkf_block_config vkf_encdec_block_config(const vkf_encdec_model *m, int decoder);

#endif
