/* What reformer.c (loading, the forward graph) shares with reformer_step.c (the cached generation
 * step): the model and its graph pieces. Private to models/arch/reformer*.c. */
#ifndef VKF_MODELS_ARCH_REFORMER_INTERNAL_H
#define VKF_MODELS_ARCH_REFORMER_INTERNAL_H

#include "graph/ir/builder.h"
#include "models/arch/arch_weights.h"
#include "models/arch/reformer.h"
#include "models/arch/reformer_lsh.h"
#include "models/arch/transformer_block.h"

enum { RF_NAME_MAX = VKF_ARCH_NAME_MAX };

struct vkf_reformer {
  vkf_arch_files f;
  vkf_reformer_config rc;
  const char *prefix; /* "reformer." (head checkpoints) or "" */
  const char *arch;
  int lm_head;
  const char *lm_bias; /* "lm_head.decoder.bias" or "lm_head.bias" */
};

/* n padded as _pad_to_mult_of_chunk_length pads it (unchanged when no padding applies). */
int64_t vkf_reformer_padded_len(const vkf_reformer *m, int64_t n);
/* A constant of dtype dt filled with one value (cached per key). */
vkf_value vkf_reformer_constant(const vkf_arch_weights *w, vkf_graph *g, const char *key,
                                vkf_dtype dt, uint32_t rank, const int64_t *shape,
                                const float *value);
vkf_value vkf_reformer_layernorm(const vkf_arch_weights *w, vkf_graph *g, const char *module,
                                 vkf_value x, float eps);
/* x·Wᵀ (+ bias) (+ residual), act applied before the residual. */
vkf_value vkf_reformer_linear(const vkf_arch_weights *w, vkf_graph *g, const char *module,
                              int bias, vkf_value x, vkf_value residual, vkf_activation act);
/* Word embeddings of ids [B, n] plus positions start .. start + n - 1: axial ones are
 * concat(w0[p / ax1], w1[p % ax1]), the two factor tables broadcast over the grid (adding zeros)
 * and flattened; else rows of the table. */
vkf_value vkf_reformer_embeddings(const vkf_reformer *m, const vkf_arch_weights *w, vkf_graph *g,
                                  vkf_value ids, int64_t start, int64_t n);
/* ChunkReformerFeedForward added to h: h + FeedForward(LN(a)) (chunking does not change values). */
vkf_value vkf_reformer_feed_forward(const vkf_reformer *m, const vkf_arch_weights *w, vkf_graph *g,
                                    const char *lp, vkf_value a, vkf_value h);
/* The final layer norm of concat(a, h), cut to `cut` positions when not 0, and the head's f32
 * output: *logits (LM heads) or *last_hidden_state (ReformerModel). */
vkf_status vkf_reformer_head(const vkf_reformer *m, const vkf_arch_weights *w, vkf_graph *g,
                             vkf_value a, vkf_value h, int64_t cut, vkf_value *logits,
                             vkf_value *last_hidden_state);
/* The layer's LSH parameters from the config. */
void vkf_reformer_lsh_params(const vkf_reformer *m, vkf_reformer_lsh *out);

#endif
