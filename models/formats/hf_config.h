/* Hugging Face config.json (ViT, DeiT, BERT-family encoders) and preprocessor_config.json
 * (ViT/DeiT image processors): parsed into plain structs with Hugging Face's defaults filled in. */
#ifndef VKF_MODELS_HF_CONFIG_H
#define VKF_MODELS_HF_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/base/arena.h"
#include "graph/base/status.h"
#include "models/formats/hf_act.h"
#include "models/formats/hf_config_attention.h"

/* Which defaults apply, chosen by model_type: "vit", "deit" -> VISION; "bert", "roberta",
 * "xlm-roberta", "big_bird", "longformer" -> TEXT; "gpt2", "llama", "mistral", "qwen2" -> DECODER;
 * "bart", "marian", "t5", "mt5", "d2l_transformer", "d2l_seq2seq_attention" -> SEQ2SEQ. */
typedef enum vkf_hf_family {
  VKF_HF_FAMILY_VISION = 0,
  VKF_HF_FAMILY_TEXT,
  VKF_HF_FAMILY_DECODER,
  VKF_HF_FAMILY_SEQ2SEQ,
} vkf_hf_family;

/* rope_scaling's "type" / "rope_type". */
typedef enum vkf_hf_rope_type {
  VKF_HF_ROPE_DEFAULT = 0, /* no rope_scaling */
  VKF_HF_ROPE_LINEAR,      /* positions divided by factor */
  VKF_HF_ROPE_DYNAMIC,     /* NTK: the base grows once the sequence passes max_position_embeddings */
  VKF_HF_ROPE_LLAMA3,      /* Llama 3.1: wavelength-dependent scaling of the frequencies */
} vkf_hf_rope_type;

/* Every string and array below lives in `arena` and dies with vkf_hf_config_release(). */
typedef struct vkf_hf_config {
  vkf_arena *arena;
  const char *model_type; /* required in the file */
  vkf_hf_family family;
  const char **architectures; /* e.g. "ViTForImageClassification"; may be empty */
  size_t architecture_count;

  int64_t hidden_size; /* D; divisible by num_attention_heads */
  int64_t num_hidden_layers;
  int64_t num_attention_heads; /* H */
  int64_t head_dim;            /* derived: hidden_size / num_attention_heads */
  int64_t intermediate_size;   /* MLP width */
  vkf_hf_act hidden_act;
  double layer_norm_eps;
  bool qkv_bias; /* vision only ("qkv_bias"); text models always have biases */

  /* VISION family (0 for TEXT). image_size is divisible by patch_size. */
  int64_t image_size;
  int64_t patch_size;
  int64_t num_channels;
  int64_t num_patches; /* derived: (image_size / patch_size)^2 */

  /* TEXT family (0 for VISION, pad_token_id -1). pad_token_id is -1 when null/absent-by-default. */
  int64_t vocab_size;
  int64_t max_position_embeddings;
  int64_t type_vocab_size;
  int64_t pad_token_id;

  /* DECODER family (causal language models; 0 / false for the others). GPT-2's own names (n_embd,
   * n_layer, n_head, n_positions, n_inner, activation_function, layer_norm_epsilon) and Llama's
   * rms_norm_eps land in the shared fields above. */
  int64_t num_key_value_heads; /* Hkv (grouped-query attention); num_attention_heads when absent */
  double rope_theta;           /* rotary base; 0 for learned positions (gpt2) */
  vkf_hf_rope_type rope_type;
  double rope_factor, rope_low_freq_factor, rope_high_freq_factor;
  int64_t rope_original_max_positions; /* llama3: original_max_position_embeddings */
  bool tie_word_embeddings;            /* lm_head shares the token embedding table */
  bool attention_bias;                 /* q, k, v (and o, for llama) projections have biases */
  bool o_proj_bias;                    /* the output projection has a bias */
  int64_t sliding_window;              /* keys within this many positions (0: unbounded) */
  int64_t bos_token_id, eos_token_id;  /* -1 when absent (generation_config.json may list more) */

  /* SEQ2SEQ family (encoder–decoders: BartConfig, MarianConfig, T5Config and D2L's
   * Transformer, models/formats/hf_config_seq2seq.c). hidden_size is d_model; num_hidden_layers,
   * num_attention_heads, intermediate_size and head_dim describe the encoder, the decoder_* fields
   * the decoder (head_dim is shared: T5's d_kv, else d_model / heads). vocab_size is the target
   * vocabulary, max_position_embeddings 0 for relative positions (T5). */
  int64_t decoder_layers, decoder_heads, decoder_intermediate;
  int64_t src_vocab_size;         /* the encoder's vocabulary (differs for d2l_transformer) */
  /* d2l_seq2seq_attention (D2L's Bahdanau GRU encoder-decoder): its token embeddings' width
   * (hidden_size is num_hiddens, num_hidden_layers and decoder_layers num_layers; 0 for others). */
  int64_t embed_size;
  int64_t decoder_start_token_id; /* -1 when absent */
  bool scale_embedding;           /* token embeddings times sqrt(d_model) */
  bool gated_mlp;                 /* T5 "gated-*" feed_forward_proj */
  int64_t relative_buckets, relative_max_distance; /* T5 relative position buckets */

  /* BigBird (model_type "big_bird", TEXT family, models/formats/hf_config_bigbird.c); qkv_bias
   * holds its use_bias. */
  bool block_sparse;         /* attention_type "block_sparse" (else "original_full") */
  int64_t block_size;        /* tokens per block, in [1, max_position_embeddings] */
  int64_t num_random_blocks; /* in [0, VKF_HF_MAX_RANDOM_BLOCKS] */
  bool rescale_embeddings;   /* word embeddings times sqrt(hidden_size) */

  /* Longformer ("longformer", TEXT family): each layer's local attention window, even and
   * positive ([num_hidden_layers], models/formats/hf_config_longformer.c); NULL for others. */
  const int64_t *attention_window;
  /* Its sep_token_id (LongformerConfig's default 2; -1 when null): LongformerForQuestionAnswering
   * makes the tokens before the first one global when no global_attention_mask is given. */
  int64_t sep_token_id;

  /* Classifier labels: from "id2label" (keys "0".."n-1", each once), else "num_labels" generic
   * names "LABEL_i", else Hugging Face's default of 2 ("LABEL_0", "LABEL_1"). */
  int64_t num_labels;
  const char **id2label; /* [num_labels] */

  /* vkformer's extra key "vkf_attention" (bert, llama): the attention kind of every block. */
  vkf_hf_attention attention;
} vkf_hf_config;

/* Reads and validates `path`. Errors are one line naming the file and the field: NOT_FOUND for a
 * missing file or a missing required field (model_type), PARSE for invalid JSON or a field of the
 * wrong type, UNSUPPORTED for an unknown model_type or hidden_act (naming the value),
 * INVALID_ARGUMENT for non-positive sizes and contradictions (hidden_size % heads, image_size %
 * patch_size, pad_token_id outside the vocabulary). *out_config is zeroed on failure. */
vkf_status vkf_hf_config_load(const char *path, vkf_hf_config *out_config);
/* Same over JSON text (not necessarily NUL-terminated); `name` is used in messages. */
vkf_status vkf_hf_config_parse(const char *json, size_t size, const char *name,
                               vkf_hf_config *out_config);
/* Frees the arena and zeroes the struct; safe on a zeroed struct. */
void vkf_hf_config_release(vkf_hf_config *config);
/* The label of class `id`, NULL when out of range. */
const char *vkf_hf_config_label(const vkf_hf_config *config, int64_t id);

/* PIL's Image.Resampling numbering, as the files store it. */
typedef enum vkf_hf_resample {
  VKF_HF_RESAMPLE_NEAREST = 0,
  VKF_HF_RESAMPLE_LANCZOS = 1,
  VKF_HF_RESAMPLE_BILINEAR = 2,
  VKF_HF_RESAMPLE_BICUBIC = 3,
  VKF_HF_RESAMPLE_BOX = 4,
  VKF_HF_RESAMPLE_HAMMING = 5,
} vkf_hf_resample;

typedef enum vkf_hf_size_mode {
  VKF_HF_SIZE_HEIGHT_WIDTH = 0, /* resize to exactly size_height x size_width */
  VKF_HF_SIZE_SHORTEST_EDGE,    /* scale so the short side is shortest_edge (aspect kept) */
} vkf_hf_size_mode;

#define VKF_HF_MAX_CHANNELS 4

/* Upper bounds on the sizes config.json and preprocessor_config.json may give: far above any real
 * model, low enough that nothing derived from them (label tables, patch counts, products of two
 * sizes) can overflow int64 or exhaust memory before a checkpoint is even read. */
#define VKF_HF_MAX_LABELS ((int64_t)1 << 20)
#define VKF_HF_MAX_HIDDEN ((int64_t)1 << 16)       /* hidden_size, num_attention_heads, kv heads */
#define VKF_HF_MAX_INTERMEDIATE ((int64_t)1 << 18) /* intermediate_size / n_inner */
#define VKF_HF_MAX_LAYERS ((int64_t)1 << 12)
#define VKF_HF_MAX_VOCAB ((int64_t)1 << 24)     /* vocab_size, type_vocab_size */
#define VKF_HF_MAX_POSITIONS ((int64_t)1 << 24) /* max_position_embeddings, num_patches + 1 */
#define VKF_HF_MAX_IMAGE_SIZE ((int64_t)1 << 16) /* image_size, patch_size, preprocessor sizes */
#define VKF_HF_MAX_RANDOM_BLOCKS 1024 /* BigBird's num_random_blocks */

/* What the image processor does, in order: resize, center crop, rescale, normalize. */
typedef struct vkf_hf_preprocessor {
  char processor_type[64]; /* image_processor_type / feature_extractor_type, or "" */
  bool do_resize;
  vkf_hf_size_mode size_mode;
  int64_t size_height, size_width; /* HEIGHT_WIDTH mode */
  int64_t shortest_edge;           /* SHORTEST_EDGE mode */
  int64_t longest_edge;            /* SHORTEST_EDGE mode: cap on the long side, 0 = none */
  vkf_hf_resample resample;
  bool do_center_crop;
  int64_t crop_height, crop_width;
  bool do_rescale;
  double rescale_factor; /* pixel * factor, 1/255 by default */
  bool do_normalize;
  int channel_count; /* entries of image_mean / image_std (a number counts as 3) */
  float image_mean[VKF_HF_MAX_CHANNELS];
  float image_std[VKF_HF_MAX_CHANNELS]; /* each > 0 */
} vkf_hf_preprocessor;

/* Reads preprocessor_config.json. Defaults are ViTImageProcessor's (resize to 224x224 bilinear,
 * no crop, rescale 1/255, normalize with mean = std = 0.5) unless the type names DeiT
 * (DeiTImageProcessor: resize 256x256 bicubic, center crop 224x224). `size` and `crop_size` take
 * {"height","width"}, {"shortest_edge"[,"longest_edge"]} (size only) or an int (square). Errors
 * name the file and field, with the same codes as the config loader. */
vkf_status vkf_hf_preprocessor_load(const char *path, vkf_hf_preprocessor *out_pre);
vkf_status vkf_hf_preprocessor_parse(const char *json, size_t size, const char *name,
                                     vkf_hf_preprocessor *out_pre);

#endif
