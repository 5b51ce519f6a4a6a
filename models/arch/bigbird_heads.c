/* BigBird's task heads: BigBirdOnlyMLMHead and BigBirdClassificationHead. */
#include "models/arch/bigbird_heads.h"

#include "graph/ir/builder.h"
#include "models/arch/nn_helpers.h"
#include "models/arch/transformer_block.h"

vkf_bigbird_head vkf_bigbird_head_find(const vkf_checkpoint *ck) {
  return vkf_arch_has(ck, "", "cls.predictions.bias")         ? VKF_BIGBIRD_HEAD_MASKED_LM
         : vkf_arch_has(ck, "", "classifier.out_proj.weight") ? VKF_BIGBIRD_HEAD_CLASSIFICATION
                                                              : VKF_BIGBIRD_HEAD_NONE;
}

const char *vkf_bigbird_head_architecture(vkf_bigbird_head head) {
  return head == VKF_BIGBIRD_HEAD_MASKED_LM        ? "BigBirdForMaskedLM"
         : head == VKF_BIGBIRD_HEAD_CLASSIFICATION ? "BigBirdForSequenceClassification"
                                                   : "BigBirdModel";
}

vkf_status vkf_bigbird_head_expect(const vkf_checkpoint *ck, vkf_bigbird_head head,
                                   const vkf_hf_config *c) {
  int64_t d = c->hidden_size;
  if (head == VKF_BIGBIRD_HEAD_MASKED_LM) {
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(ck, "", "cls.predictions.transform.dense.weight", d, d));
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(ck, "", "cls.predictions.transform.dense.bias", d, 0));
    VKF_RETURN_IF_ERROR(
        vkf_arch_expect2(ck, "", "cls.predictions.transform.LayerNorm.weight", d, 0));
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(ck, "", "cls.predictions.transform.LayerNorm.bias", d, 0));
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(ck, "", "cls.predictions.bias", c->vocab_size, 0));
    if (vkf_arch_has(ck, "", "cls.predictions.decoder.weight"))
      VKF_RETURN_IF_ERROR(
          vkf_arch_expect2(ck, "", "cls.predictions.decoder.weight", c->vocab_size, d));
  } else if (head == VKF_BIGBIRD_HEAD_CLASSIFICATION) {
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(ck, "", "classifier.dense.weight", d, d));
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(ck, "", "classifier.dense.bias", d, 0));
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(ck, "", "classifier.out_proj.weight", c->num_labels, d));
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(ck, "", "classifier.out_proj.bias", c->num_labels, 0));
  }
  return VKF_OK;
}

vkf_value vkf_bigbird_head_build(const vkf_arch_weights *w, vkf_graph *g, vkf_bigbird_head head,
                                 const vkf_hf_config *c, vkf_value word_embeddings, vkf_value x) {
  vkf_activation act = vkf_block_activation(c->hidden_act);
  if (head == VKF_BIGBIRD_HEAD_MASKED_LM) {
    vkf_value h = vkf_nn_linear(w, g, "cls.predictions.transform.dense", x, act);
    h = vkf_nn_layernorm(w, g, "cls.predictions.transform.LayerNorm", h, (float)c->layer_norm_eps);
    vkf_value dec = vkf_arch_has(w->ck, "", "cls.predictions.decoder.weight")
                        ? vkf_arch_weight(w, g, "cls.predictions.decoder.weight")
                        : word_embeddings;
    vkf_matmul_options o = {.transpose_b = 1,
                            .bias = vkf_arch_weight(w, g, "cls.predictions.bias")};
    return vkf_matmul(g, "cls.predictions.decoder", h, dec, &o); /* [B, T, V] */
  }
  /* features[:, 0, :] -> dense -> hidden_act -> out_proj. */
  const vkf_tensor *t = vkf_value_valid(x) ? vkf_graph_tensor(g, x) : NULL;
  vkf_value first = vkf_nn_first_token(g, "classifier", x, t ? t->shape[0] : 1, c->hidden_size);
  vkf_value h = vkf_nn_linear(w, g, "classifier.dense", first, act);
  return vkf_nn_linear(w, g, "classifier.out_proj", h, VKF_ACT_NONE); /* [B, labels] */
}
