/* vkformer's own extra key of config.json, "vkf_attention": swaps the softmax attention of a BERT-
 * or Llama-architecture checkpoint for a kernelised or low-rank one (issue 16), or gives a
 * decoder's softmax attention an adaptive span (issue 33). The keys, their defaults and the
 * tensors each kind reads are documented in docs/efficient-attention.md. Hugging Face ignores the
 * key; vkformer parses it strictly. */
#ifndef VKF_MODELS_HF_CONFIG_ATTENTION_H
#define VKF_MODELS_HF_CONFIG_ATTENTION_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "graph/base/arena.h"
#include "graph/base/status.h"

typedef enum vkf_hf_attn_kind {
  VKF_HF_ATTN_SOFTMAX = 0, /* no "vkf_attention": the architecture's own attention */
  VKF_HF_ATTN_LINEAR,      /* elu(x) + 1 features (Katharopoulos et al.) */
  VKF_HF_ATTN_PERFORMER,   /* FAVOR+ positive random features (Choromanski et al.) */
  VKF_HF_ATTN_RFA,         /* random Fourier features, optional gate (Peng et al.) */
  VKF_HF_ATTN_LINFORMER,   /* learned projections of K and V along the sequence (Wang et al.) */
  VKF_HF_ATTN_NYSTROM,     /* landmarks and a pseudo-inverse, as HF's NystromformerSelfAttention */
  VKF_HF_ATTN_ADAPTIVE_SPAN, /* softmax with a soft span per layer and head (Sukhbaatar et al.) */
  VKF_HF_ATTN_LONG_SHORT,    /* a segment-wise window plus dynamic projections (Zhu et al. 2021) */
} vkf_hf_attn_kind;

/* Softmax attention over keys and values (a KV cache when decoding): the architecture's own, or
 * with an adaptive span. The other kinds replace it (efficient_attention.h). */
static inline bool vkf_hf_attn_is_softmax(vkf_hf_attn_kind kind) {
  return kind == VKF_HF_ATTN_SOFTMAX || kind == VKF_HF_ATTN_ADAPTIVE_SPAN;
}

/* Kinds that attend over the keys and values themselves, so a decoder keeps a KV cache: the
 * softmax ones and long-short (its compressed segments are recomputed from the cache). */
static inline bool vkf_hf_attn_uses_kv(vkf_hf_attn_kind kind) {
  return vkf_hf_attn_is_softmax(kind) || kind == VKF_HF_ATTN_LONG_SHORT;
}

/* Linformer's parameter sharing (Wang et al. 2020, section 4). */
typedef enum vkf_hf_linformer_share {
  VKF_HF_SHARE_NONE = 0,  /* E, F per layer and head: [H, k, P] */
  VKF_HF_SHARE_HEADWISE,  /* E, F per layer, shared by the heads: [k, P] */
  VKF_HF_SHARE_KEY_VALUE, /* one E per layer for keys and values: [k, P] */
  VKF_HF_SHARE_LAYERWISE, /* one E for every layer, head, keys and values: [k, P] */
} vkf_hf_linformer_share;

#define VKF_HF_MAX_FEATURES ((int64_t)1 << 14) /* random features M, Linformer k */
#define VKF_HF_MAX_SPAN 16777216.0              /* adaptive span z and ramp R, in tokens (2^24) */
#define VKF_HF_MAX_LONG_SHORT ((int64_t)1 << 20) /* long_short window and segment, in tokens */

typedef struct vkf_hf_attention {
  vkf_hf_attn_kind kind;
  int64_t features; /* M (performer, rfa): omega is [M, head_dim]; default 64 */
  uint64_t seed;    /* omega drawn from seed + layer index when the checkpoint has none */
  bool orthogonal;  /* orthogonal random blocks (default: performer true, rfa false) */
  bool gate;        /* rfa, causal models only: S_t = g S_{t-1} + (1 - g) phi(k) v^T */
  double scale;     /* performer, rfa: x' = scale x before the features; 0: head_dim^-1/4 */
  double eps;       /* linear family: added to the normaliser; default 1e-6 */
  int64_t k;        /* linformer: projected length */
  vkf_hf_linformer_share sharing;
  int64_t landmarks;        /* nystrom: m; N must be a multiple of m (or m itself: softmax) */
  bool inv_per_head;        /* nystrom: "inv_init" "per_head" (HF's inv_coeff_init_option) */
  int64_t conv_kernel_size; /* nystrom: the depthwise conv skip on V, 0: none */
  double ramp;              /* adaptive_span: R (default 32, the paper's), > 0 */
  const double *spans;      /* adaptive_span: z >= 0 [layers, heads], in the config's arena */
  int64_t window;           /* long_short: segment w of the sliding window (w + 2 floor(w/2) keys) */
  int64_t rank;             /* long_short: r rows of each dynamic projection */
  int64_t segment;          /* long_short, causal: l positions per projected segment (default w) */
  bool dual_ln;             /* long_short: DualLN (default true) */
} vkf_hf_attention;

/* "linear", "performer", ... ("softmax" for the default). */
const char *vkf_hf_attn_kind_name(vkf_hf_attn_kind kind);

/* Reads root's "vkf_attention" (absent or null: SOFTMAX) for a checkpoint of `model_type` with
 * `layers` blocks of `heads` heads; arrays go into `arena`. Strict: an unknown kind or key, a key
 * of another kind, a wrong type or an out-of-range value is one error naming `file` and the key;
 * only "bert" and "llama" checkpoints accept the key (adaptive_span: the decoders, "gpt2",
 * "llama", "mistral", "qwen2"; long_short: those and "bert"). */
vkf_status vkf_hf_attention_parse(const char *file, const cJSON *root, const char *model_type,
                                  int64_t layers, int64_t heads, vkf_arena *arena,
                                  vkf_hf_attention *out);

#endif
