/* What an architecture gives the registry: how to recognise its checkpoints, load them, declare
 * their inputs and outputs, and build their graph. Private to models/registry/. */
#ifndef VKF_MODELS_REGISTRY_ARCH_ENTRY_H
#define VKF_MODELS_REGISTRY_ARCH_ENTRY_H

#include "models/arch/arch_loader.h"
#include "models/registry/model.h"

typedef struct vkf_arch_entry {
  const char *family;               /* "vit" */
  const char *const *model_types;   /* NULL-terminated config.json model_type values */
  const char *const *architectures; /* NULL-terminated Hugging Face class names */
  /* How its checkpoints load, unload and quantise (models/arch/arch_loader.h). */
  const vkf_arch_loader *loader;
  /* The checkpoint's Hugging Face class; NULL: the family has one, architectures[0]. */
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

/* The first `count` (2 or 3) of Hugging Face's text inputs, [batch, seq] up to max_seq: input_ids
 * (required, ids below `vocab`), attention_mask (ones when absent), token_type_ids (ids below
 * type_vocab, zeros when absent). Returns count. */
uint32_t vkf_declare_text_inputs(vkf_model_io *in, uint32_t count, int64_t max_seq, int64_t vocab,
                                 int64_t type_vocab);
/* An f32 output of `rank` dims, the batch-first ones the build's (-1), the last `last`. */
vkf_model_io vkf_declare_f32(const char *name, uint32_t rank, int64_t last);
/* The union of bits[i] over the declared outputs the caller wants (want[i]). */
uint32_t vkf_declare_wanted(const uint32_t *bits, uint32_t count, const int *want);

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
