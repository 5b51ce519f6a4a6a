/* The task heads of BigBirdForMaskedLM and BigBirdForSequenceClassification (transformers
 * 4.38.2) on top of BigBirdModel's last_hidden_state; their tensors sit outside the "bert."
 * prefix of the encoder. */
#ifndef VKF_MODELS_ARCH_BIGBIRD_HEADS_H
#define VKF_MODELS_ARCH_BIGBIRD_HEADS_H

#include "graph/ir/graph.h"
#include "models/arch/arch_weights.h"
#include "models/formats/checkpoint.h"
#include "models/formats/hf_config.h"

typedef enum vkf_bigbird_head {
  VKF_BIGBIRD_HEAD_NONE = 0,       /* BigBirdModel */
  VKF_BIGBIRD_HEAD_MASKED_LM,      /* cls.predictions.*: transform, then the tied word embeddings */
  VKF_BIGBIRD_HEAD_CLASSIFICATION, /* classifier.dense / out_proj on the first token */
} vkf_bigbird_head;

/* The head whose tensors the checkpoint holds. */
vkf_bigbird_head vkf_bigbird_head_find(const vkf_checkpoint *ck);
/* "BigBirdModel", "BigBirdForMaskedLM", "BigBirdForSequenceClassification". */
const char *vkf_bigbird_head_architecture(vkf_bigbird_head head);
/* Load-time check of the head's tensors (shape and dtype; NOT_FOUND / SHAPE naming the tensor). */
vkf_status vkf_bigbird_head_expect(const vkf_checkpoint *ck, vkf_bigbird_head head,
                                   const vkf_hf_config *config);
/* The head's logits: [B, T, vocab] (masked LM, the decoder weight is `word_embeddings` unless the
 * file has its own) or [B, num_labels] (classification). x [B, T, D] is the unpadded
 * last_hidden_state; `w` reads unprefixed names. */
vkf_value vkf_bigbird_head_build(const vkf_arch_weights *w, vkf_graph *g, vkf_bigbird_head head,
                                 const vkf_hf_config *config, vkf_value word_embeddings,
                                 vkf_value x);

#endif
