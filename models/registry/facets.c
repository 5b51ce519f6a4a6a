/* What a model can do, from its registry entry's facets: the tasks it declares and, per task, what
 * the runtime needs to run it (models/registry/model.h). */
#include <string.h>

#include "models/registry/arch_entry.h"
#include "models/registry/model.h"

static vkf_status lacks(const vkf_model *m, const char *what) {
  return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: %s %s", vkf_model_dir(m),
                         vkf_model_architecture(m), what);
}

vkf_status vkf_model_generate_facet(const vkf_model *m, vkf_model_generate *out) {
  memset(out, 0, sizeof *out);
  const vkf_arch_entry *e = vkf_model_entry(m);
  if (!e->generate)
    return lacks(m,
                 "is not a language model (GPT-2, Llama, Mistral, Qwen2; BART, Marian, T5, "
                 "D2L's Transformer and Bahdanau encoder-decoder; ReformerModelWithLMHead, "
                 "TransfoXLLMHeadModel)");
  vkf_status s = e->generate(vkf_model_impl(m), out);
  if (s) {
    vkf_status named = lacks(m, vkf_status_message(s));
    vkf_status_free(s);
    return named;
  }
  return VKF_OK;
}

vkf_status vkf_model_chat_facet(const vkf_model *m, vkf_model_generate *out) {
  memset(out, 0, sizeof *out);
  if (!vkf_model_entry(m)->chat)
    return lacks(m,
                 "is not a decoder language model (chat runs GPT-2, Llama, Mistral and Qwen2 "
                 "checkpoints)");
  return vkf_model_generate_facet(m, out);
}

vkf_status vkf_model_embed_facet(const vkf_model *m, vkf_model_embed *out) {
  memset(out, 0, sizeof *out);
  const vkf_arch_entry *e = vkf_model_entry(m);
  if (e->embed) return e->embed(vkf_model_impl(m), out);
  int hidden = vkf_model_find_output(m, "last_hidden_state");
  if (!e->pooled_embed || hidden < 0)
    return lacks(m,
                 "is not a sentence embedder (BERT, BigBird, Longformer and Nystromformer "
                 "checkpoints)");
  *out = (vkf_model_embed){.pooling = e->pooled_embed,
                           .dims = vkf_model_output(m, (uint32_t)hidden)->shape[2]};
  return VKF_OK;
}

vkf_status vkf_model_classify_facet(const vkf_model *m, vkf_model_classify *out) {
  memset(out, 0, sizeof *out);
  const vkf_arch_entry *e = vkf_model_entry(m);
  vkf_status s = e->classify ? e->classify(vkf_model_impl(m), out) : VKF_OK;
  if (s) vkf_status_free(s);
  if (!e->classify || s) return lacks(m, "is not an image classifier");
  return VKF_OK;
}

vkf_status vkf_model_attention_maps_facet(const vkf_model *m, vkf_model_attention_maps *out) {
  memset(out, 0, sizeof *out);
  const vkf_arch_entry *e = vkf_model_entry(m);
  out->layers = vkf_model_attention_layers(m);
  if (vkf_model_find_input(m, "pixel_values") >= 0) out->image = vkf_model_impl(m);
  if (e->additive_attention) out->additive = vkf_model_impl(m);
  if (!out->layers && !out->additive)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s (%s) has no attention maps to draw (BERT-family, ViT/DeiT and "
                           "d2l_seq2seq_attention checkpoints)",
                           vkf_model_architecture(m), vkf_model_dir(m));
  return VKF_OK;
}

/* Whether a facet's fill succeeds (its status, when it fails, is dropped). */
static int fills(vkf_status s) {
  int ok = s == VKF_OK;
  vkf_status_free(s);
  return ok;
}

unsigned vkf_model_tasks(const vkf_model *m) {
  const vkf_arch_entry *e = vkf_model_entry(m);
  void *impl = vkf_model_impl(m);
  vkf_model_generate g;
  vkf_model_embed em;
  vkf_model_classify c;
  vkf_model_attention_maps a;
  unsigned t = VKF_TASK_FORWARD;
  if (e->text) t |= VKF_TASK_TOKENIZE;
  if (e->generate && fills(e->generate(impl, &g)))
    t |= VKF_TASK_GENERATE | (e->chat ? VKF_TASK_CHAT : 0);
  if (fills(vkf_model_embed_facet(m, &em))) t |= VKF_TASK_EMBED;
  if (fills(vkf_model_classify_facet(m, &c))) t |= VKF_TASK_CLASSIFY;
  if (fills(vkf_model_attention_maps_facet(m, &a))) t |= VKF_TASK_ATTENTIONS;
  return t;
}

const char *vkf_model_task_name(unsigned task) {
  static const char *const names[] = {"forward",  "tokenize", "embed",     "classify",
                                      "generate", "chat",     "attentions"};
  for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
    if (task == 1u << i) return names[i];
  return "?";
}
