/* What an architecture gives the registry: how to recognise its checkpoints, load them, declare
 * their inputs and outputs, and build their graph. Private to models/registry/. */
#ifndef VKF_MODELS_REGISTRY_ARCH_ENTRY_H
#define VKF_MODELS_REGISTRY_ARCH_ENTRY_H

#include "models/registry/model.h"

typedef struct vkf_arch_entry {
  const char *family;               /* "vit" */
  const char *const *model_types;   /* NULL-terminated config.json model_type values */
  const char *const *architectures; /* NULL-terminated Hugging Face class names */
  vkf_status (*load)(const char *model_dir, void **out_impl);
  void (*destroy)(void *impl);
  const char *(*architecture)(const void *impl);
  /* Fills the declaration of this checkpoint's inputs and outputs; returns the counts. */
  void (*declare)(const void *impl, vkf_model_io *inputs, uint32_t *input_count,
                  vkf_model_io *outputs, uint32_t *output_count);
  /* Builds with the outputs flagged in want[i] (declaration order); fills out->inputs/outputs. */
  vkf_status (*build)(void *impl, const vkf_model_build_options *options, const int *want,
                      vkf_model_graph *out);
  /* Optional (NULL: nothing derived): vkf_model_derive for this architecture. */
  vkf_status (*derive)(const void *impl, const int32_t *const *inputs, int64_t batch,
                       int64_t seq_len, vkf_model_derived *out);
  /* Optional (NULL: none): layers whose attention probabilities build() outputs when
   * options->attentions is set (vkf_model_attention_layers). */
  int64_t (*attention_layers)(const void *impl);
  /* vkf_model_quantize for this architecture. */
  vkf_status (*quantize)(void *impl, const char *format);
  /* Optional (NULL: it has no quantisation): its checkpoint and the weights its builds made, for
   * vkf_model_quantized. */
  const struct vkf_arch_files *(*files)(const void *impl);
  /* ---- facets (model.h, vkf_model_tasks); 0 / NULL: the family has none ---- */
  int text; /* tokenize: its inputs are a text tokenizer's ids */
  int chat; /* chat: its generate facet runs a chat template's prompt */
  /* Fills the facet, or UNSUPPORTED naming what this checkpoint lacks (a language-model head). */
  vkf_status (*generate)(void *impl, vkf_model_generate *out);
  vkf_status (*embed)(void *impl, vkf_model_embed *out);
  /* Or, for an encoder without a pipeline of its own: its last_hidden_state pooled this way
   * (runtime/text_embed.h's vkf_rt_embed_pooled). */
  vkf_embed_pooling pooled_embed;
  vkf_status (*classify)(void *impl, vkf_model_classify *out);
  /* attention maps from the generation engine's additive attention (the Bahdanau decoder) */
  int additive_attention;
} vkf_arch_entry;

/* The model's entry and its architecture object, for the registry's own files (facets.c). */
const vkf_arch_entry *vkf_model_entry(const vkf_model *model);
void *vkf_model_impl(const vkf_model *model);

extern const vkf_arch_entry vkf_entry_vit;
extern const vkf_arch_entry vkf_entry_bert;
extern const vkf_arch_entry vkf_entry_decoder;
extern const vkf_arch_entry vkf_entry_encdec;
extern const vkf_arch_entry vkf_entry_nystromformer;
extern const vkf_arch_entry vkf_entry_bigbird;
extern const vkf_arch_entry vkf_entry_longformer;
extern const vkf_arch_entry vkf_entry_seq2seq_attention;
extern const vkf_arch_entry vkf_entry_transfo_xl;
extern const vkf_arch_entry vkf_entry_reformer;

#endif
