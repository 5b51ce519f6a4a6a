/* GPT-2 and the Llama family as data over the block builder: per family a config mapping (in
 * models/formats/hf_config_decoder.c), a table of module and tensor names, and its own parts
 * (learned positions or rotary tables, how padding combines with the causal mask). */
#include "models/arch/decoder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ir/builder.h"
#include "models/arch/arch_weights.h"
#include "models/arch/nn_helpers.h"
#include "models/arch/rotary.h"
#include "models/arch/transformer_block.h"

enum { DEC_NAME_MAX = VKF_ARCH_NAME_MAX };


/* How transformers 4.38's eager attention combines padding with the causal mask: GPT-2 adds the
 * two (a padded key past the diagonal gets twice the mask value, i.e. weight 0 against keys
 * masked once), the Llama family masks a key once whichever rule masks it. The difference shows
 * only in rows whose every key is masked (the padded positions of a left-padded prompt). */
typedef enum mask_rule { MASK_SUM = 0, MASK_OR } mask_rule;

typedef struct family {
  const char *model_type;
  const char *lm_arch, *base_arch; /* class names with and without the LM head */
  const char *task_prefix;         /* tensor prefix of the task model ("transformer.", "model.") */
  const char *embed;               /* token embeddings [V, D] */
  const char *positions;           /* learned positions [P, D], NULL for rotary */
  const char *final_norm;          /* module of the final norm */
  const char *layer_fmt;           /* "h.%lld." */
  vkf_block_norm norm;
  vkf_block_mlp mlp;
  int linear_in_out;
  mask_rule mask;
  vkf_block_names names;
} family;

static const family k_gpt2 = {
    "gpt2",
    "GPT2LMHeadModel",
    "GPT2Model",
    "transformer.",
    "wte.weight",
    "wpe.weight",
    "ln_f",
    "h.%lld.",
    VKF_BLOCK_LAYERNORM,
    VKF_BLOCK_MLP_PLAIN,
    1,
    MASK_SUM,
    {
        .attn_norm = "ln_1",
        .attention = "attn",
        .attn_out = "attn.c_proj",
        .mlp_norm = "ln_2",
        .mlp_up = "mlp.c_fc",
        .mlp_down = "mlp.c_proj",
        .qkv_weight = "attn.c_attn.weight",
        .qkv_bias = "attn.c_attn.bias",
        .out_weight = "attn.c_proj.weight",
        .out_bias = "attn.c_proj.bias",
        .attn_norm_weight = "ln_1.weight",
        .attn_norm_bias = "ln_1.bias",
        .up_weight = "mlp.c_fc.weight",
        .up_bias = "mlp.c_fc.bias",
        .down_weight = "mlp.c_proj.weight",
        .down_bias = "mlp.c_proj.bias",
        .mlp_norm_weight = "ln_2.weight",
        .mlp_norm_bias = "ln_2.bias",
    },
};

/* LlamaDecoderLayer, MistralDecoderLayer and Qwen2DecoderLayer share every name. */
#define LLAMA_NAMES                                                                               \
  {                                                                                               \
    .attn_norm = "input_layernorm", .attention = "self_attn", .attn_out = "self_attn.o_proj",     \
    .mlp_norm = "post_attention_layernorm", .mlp_up = "mlp.up_proj", .mlp_gate = "mlp.gate_proj", \
    .mlp_down = "mlp.down_proj", .q_weight = "self_attn.q_proj.weight",                           \
    .k_weight = "self_attn.k_proj.weight", .v_weight = "self_attn.v_proj.weight",                 \
    .q_bias = "self_attn.q_proj.bias", .k_bias = "self_attn.k_proj.bias",                         \
    .v_bias = "self_attn.v_proj.bias", .out_weight = "self_attn.o_proj.weight",                   \
    .out_bias = "self_attn.o_proj.bias", .attn_norm_weight = "input_layernorm.weight",            \
    .up_weight = "mlp.up_proj.weight", .gate_weight = "mlp.gate_proj.weight",                     \
    .down_weight = "mlp.down_proj.weight", .mlp_norm_weight = "post_attention_layernorm.weight",  \
  }
#define LLAMA_FAMILY(type, lm, base)                                               \
  {                                                                                \
    type, lm, base, "model.", "embed_tokens.weight", NULL, "norm", "layers.%lld.", \
        VKF_BLOCK_RMSNORM, VKF_BLOCK_MLP_GATED, 0, MASK_OR, LLAMA_NAMES            \
  }
static const family k_llama_families[] = {
    LLAMA_FAMILY("llama", "LlamaForCausalLM", "LlamaModel"),
    LLAMA_FAMILY("mistral", "MistralForCausalLM", "MistralModel"),
    LLAMA_FAMILY("qwen2", "Qwen2ForCausalLM", "Qwen2Model"),
};

struct vkf_decoder_model {
  vkf_arch_files f;
  const family *fam;
  vkf_block_names names; /* the family's, without the biases this checkpoint lacks */
  const char *prefix;    /* family->task_prefix or "" */
  int lm_head;           /* 0 none (base model), 1 tied to the embeddings, 2 own lm_head.weight */
};

#define NAME VKF_NAME

static vkf_block_config block_config(const vkf_decoder_model *m) {
  const vkf_hf_config *c = &m->f.config;
  const family *fam = m->fam;
  int rotary = fam->positions == NULL;
  return (vkf_block_config){
      .hidden = c->hidden_size,
      .heads = c->num_attention_heads,
      .kv_heads = c->num_key_value_heads,
      .head_dim = c->head_dim,
      .intermediate = c->intermediate_size,
      .norm = fam->norm,
      .order = VKF_BLOCK_PRE_NORM,
      .norm_eps = (float)c->layer_norm_eps,
      .mlp = fam->mlp,
      .act = vkf_block_activation(c->hidden_act),
      .position = rotary ? VKF_BLOCK_POS_ROTARY : VKF_BLOCK_POS_NONE,
      .linear_in_out = fam->linear_in_out,
      .attention = &c->attention,
      .root_prefix = m->prefix,
      .positions = c->max_position_embeddings,
  };
}

/* ---- loading ---- */

static vkf_status check_tensors(void *model) {
  vkf_decoder_model *m = model;
  const vkf_hf_config *c = &m->f.config;
  const family *fam = m->fam;
  m->prefix = vkf_arch_has(m->f.ck, fam->task_prefix, fam->embed) ? fam->task_prefix : "";
  int64_t d = c->hidden_size;
  VKF_RETURN_IF_ERROR(vkf_arch_expect2(m->f.ck, m->prefix, fam->embed, c->vocab_size, d));
  if (fam->positions)
    VKF_RETURN_IF_ERROR(
        vkf_arch_expect2(m->f.ck, m->prefix, fam->positions, c->max_position_embeddings, d));
  m->names = fam->names;
  if (fam->names.q_bias && !c->attention_bias)
    m->names.q_bias = m->names.k_bias = m->names.v_bias = NULL;
  if (fam->names.q_weight && !c->o_proj_bias) m->names.out_bias = NULL;
  vkf_block_config bc = block_config(m);
  for (int64_t l = 0; l < c->num_hidden_layers; l++) {
    char lp[DEC_NAME_MAX], layer[64];
    snprintf(layer, sizeof layer, fam->layer_fmt, (long long)l);
    NAME(lp, "%s%s", m->prefix, layer);
    bc.layer = l;
    VKF_RETURN_IF_ERROR(vkf_block_expect(m->f.ck, lp, &m->names, &bc));
  }
  char norm[64];
  VKF_RETURN_IF_ERROR(
      vkf_arch_expect2(m->f.ck, m->prefix, NAME(norm, "%s.weight", fam->final_norm), d, 0));
  if (fam->norm == VKF_BLOCK_LAYERNORM)
    VKF_RETURN_IF_ERROR(
        vkf_arch_expect2(m->f.ck, m->prefix, NAME(norm, "%s.bias", fam->final_norm), d, 0));
  /* The head: tied configs use the embeddings (transformers ties them even when the file also
   * holds lm_head.weight); a task model without the head tensor is tied whatever it says. */
  int task = m->prefix[0] != '\0';
  if (task && !c->tie_word_embeddings && vkf_arch_has(m->f.ck, "", "lm_head.weight")) {
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(m->f.ck, "", "lm_head.weight", c->vocab_size, d));
    m->lm_head = 2;
  } else if (task && !c->tie_word_embeddings) {
    return vkf_status_make(VKF_STATUS_NOT_FOUND,
                           "tensor \"lm_head.weight\" not found in %s (tie_word_embeddings is "
                           "false)",
                           vkf_checkpoint_path(m->f.ck));
  } else {
    m->lm_head = task ? 1 : 0;
  }
  return VKF_OK;
}

/* Notes the family of config.json's model_type. */
static int pick_family(void *model) {
  vkf_decoder_model *m = model;
  const char *type = m->f.config.model_type;
  if (!strcmp(type, k_gpt2.model_type)) m->fam = &k_gpt2;
  for (size_t i = 0; i < sizeof k_llama_families / sizeof *k_llama_families; i++)
    if (!strcmp(type, k_llama_families[i].model_type)) m->fam = &k_llama_families[i];
  return m->fam != NULL;
}

static vkf_status check_rotary(void *model, const char *model_dir) {
  vkf_decoder_model *m = model;
  if (m->fam->positions == NULL && m->f.config.head_dim % 2)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s/config.json: rotary needs an even head dim, "
                           "not %lld",
                           model_dir, (long long)m->f.config.head_dim);
  return VKF_OK;
}

const vkf_arch_loader vkf_decoder_loader = {
    .size = sizeof(vkf_decoder_model),
    .files_at = offsetof(vkf_decoder_model, f),
    .accepts = pick_family,
    .refusal = "is not a decoder (gpt2, llama, mistral, qwen2)",
    .configure = check_rotary,
    .check = check_tensors};

const vkf_hf_config *vkf_decoder_config(const vkf_decoder_model *m) {
  return &m->f.config;
}
const char *vkf_decoder_architecture(const vkf_decoder_model *m) {
  return m->lm_head ? m->fam->lm_arch : m->fam->base_arch;
}
int64_t vkf_decoder_max_positions(const vkf_decoder_model *m) {
  return m->fam->positions ? m->f.config.max_position_embeddings
                           : VKF_DECODER_MAX_ROTARY_POSITIONS;
}
int vkf_decoder_has_lm_head(const vkf_decoder_model *m) {
  return m->lm_head != 0;
}

int vkf_decoder_takes_ragged(const vkf_decoder_model *m) {
  vkf_hf_attn_kind k = m->f.config.attention.kind;
  return vkf_hf_attn_uses_kv(k) && vkf_hf_attn_is_softmax(k) && k != VKF_HF_ATTN_LONG_SHORT &&
         k != VKF_HF_ATTN_ADAPTIVE_SPAN && m->f.config.sliding_window <= 0;
}

/* ---- graph ---- */

enum table_kind { TABLE_COS, TABLE_SIN, TABLE_CAUSAL, TABLE_POSITIONS };

typedef struct table_fill {
  const vkf_decoder_model *m;
  int64_t n;
  enum table_kind kind;
  int per_row_seq; /* rotary rows p computed as a sequence of p + 1 tokens sees them (decoding) */
  vkf_status status;
} table_fill;

static void fill_table(float *out, size_t count, const void *user) {
  table_fill *f = (table_fill *)user;
  const vkf_hf_config *c = &f->m->f.config;
  int64_t n = f->n, dh = c->head_dim;
  if (f->kind == TABLE_COS || f->kind == TABLE_SIN) {
    float *other = malloc((size_t)dh * sizeof *other + 1);
    if (!other) {
      f->status = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "rotary tables");
      for (size_t i = 0; i < count; i++) out[i] = 0.0f;
      return;
    }
    /* Dynamic NTK scaling depends on the sequence length the model has seen: transformers
     * recomputes the base on every call from the largest position, so a prompt's rows share its
     * length and each decoded token sees its own. */
    for (int64_t p = 0; p < n; p++) {
      int64_t seq = f->per_row_seq ? p + 1 : n;
      float *row = out + p * dh;
      if (f->kind == TABLE_COS)
        vkf_rotary_tables(c, p, 1, seq, row, other);
      else
        vkf_rotary_tables(c, p, 1, seq, other, row);
    }
    free(other);
  } else if (f->kind == TABLE_CAUSAL) {
    /* 1 where query i may not see key j: the future, and keys sliding_window or more back. */
    int64_t w = c->sliding_window;
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) out[i * n + j] = j > i || (w > 0 && j <= i - w) ? 1.0f : 0.0f;
  } else {
    char name[DEC_NAME_MAX];
    float *pos = NULL;
    f->status = vkf_weight_read_f32(
        f->m->f.ck, NAME(name, "%s%s", f->m->prefix, f->m->fam->positions), &pos, NULL);
    for (size_t i = 0; i < count; i++) out[i] = f->status ? 0.0f : pos[i]; /* rows 0..n-1 */
    free(pos);
  }
}

/* A [rows, cols] table the model computes (cached per key and dtype). */
static vkf_value table(vkf_decoder_model *m, vkf_graph *g, const char *key, enum table_kind kind,
                       int per_row_seq, int64_t rows, int64_t cols, vkf_dtype dt) {
  vkf_arch_weights w = {m->f.ck, &m->f.owned, "", dt, m->f.quantize};
  table_fill tf = {m, rows, kind, per_row_seq, VKF_OK};
  int64_t shape[2] = {rows, cols};
  vkf_value v = vkf_arch_computed(&w, g, key, dt, 2, shape, fill_table, &tf);
  if (tf.status) vkf_graph_set_error(g, tf.status);
  return v;
}

typedef struct rotary_user {
  vkf_value cos, sin; /* [N, Dh] or [B, 1, N, Dh] */
} rotary_user;

static vkf_value rotate(vkf_graph *g, const char *name, vkf_value x, void *user) {
  const rotary_user *r = user;
  return vkf_rotary_apply(g, name, x, r->cos, r->sin);
}

/* Per layer: the cache inputs and the run-time rows of a prefill or decode step. */
typedef struct cache_user {
  vkf_value k_cache, v_cache, start;
  int read_cache; /* DECODE: attention reads the updated cache, not just the new rows */
  int ragged;     /* k, v [1, Hkv, R, Dh]: R token rows, each written at its own cache row */
} cache_user;

/* [1, H, R, D] <-> [R, H, 1, D] (a view: dims 0 and 2 swapped). */
static vkf_value swap_rows(vkf_graph *g, const char *name, vkf_value x) {
  static const uint32_t perm[4] = {2, 1, 0, 3};
  return vkf_permute(g, name, x, perm);
}

/* Ragged rows' attention: q [1, H, R, Dh] as R one-token rows, each reading its own sequence's
 * cache rows (the block's kv_len, [2, R]); k and v are the caches [S, Hkv, C, Dh]. The block's
 * options as they are: a ragged build has no bias, window or span (check_options). */
static vkf_value ragged_attend(vkf_graph *g, const char *name, vkf_value q, vkf_value k,
                               vkf_value v, const vkf_attention_options *ao, void *user) {
  (void)user;
  char nm[DEC_NAME_MAX + 16];
  vkf_value qr = swap_rows(g, (snprintf(nm, sizeof nm, "%s.q_rows", name), nm), q);
  vkf_value a = vkf_attention(g, (snprintf(nm, sizeof nm, "%s.rows", name), nm), qr, k, v, ao);
  return swap_rows(g, name, a);
}

static void write_cache(vkf_graph *g, const char *name, vkf_value *k, vkf_value *v, void *user) {
  const cache_user *c = user;
  char nm[DEC_NAME_MAX + 16];
  vkf_value kr = *k, vr = *v;
  if (c->ragged) {
    kr = swap_rows(g, (snprintf(nm, sizeof nm, "%s.k_rows", name), nm), kr);
    vr = swap_rows(g, (snprintf(nm, sizeof nm, "%s.v_rows", name), nm), vr);
  }
  vkf_value kc = vkf_kv_write(g, (snprintf(nm, sizeof nm, "%s.k_cache", name), nm), c->k_cache, kr,
                              c->start);
  vkf_value vc = vkf_kv_write(g, (snprintf(nm, sizeof nm, "%s.v_cache", name), nm), c->v_cache, vr,
                              c->start);
  if (c->read_cache) *k = kc, *v = vc;
}

/* The additive score mask [B, 1, N, N]: padding (mask 0) and the causal / window rule, combined as
 * the family's eager attention does. */
static vkf_value mask_bias(vkf_decoder_model *m, vkf_graph *g, vkf_value mask, int64_t batch,
                           int64_t n) {
  char key[64];
  vkf_value causal =
      table(m, g, NAME(key, "causal_mask.%lld", (long long)n), TABLE_CAUSAL, 0, n, n, VKF_F32);
  int64_t shape1[1] = {1};
  vkf_arch_weights w = {m->f.ck, &m->f.owned, "", VKF_F32, m->f.quantize};
  vkf_value ones = vkf_nn_filled(&w, g, "mask.one", VKF_F32, 1, shape1, 1.0f);
  vkf_value keep = vkf_cast(g, "attention_mask.f32", mask, VKF_F32);
  vkf_value pad = vkf_sub(g, "attention_mask.padding", ones, keep); /* 1 at padded keys [B, N] */
  int64_t rows[4] = {batch, 1, 1, n};
  pad = vkf_reshape(g, "attention_mask.padding_rows", pad, 4, rows);
  vkf_value masked = vkf_add(g, "attention_mask.masked", causal, pad); /* [B, 1, N, N] */
  if (m->fam->mask == MASK_OR)
    masked = vkf_sub(g, "attention_mask.masked_once", masked,
                     vkf_mul(g, "attention_mask.both", causal, pad));
  return vkf_scale(g, "attention_mask.bias", masked, -VKF_MASKED_SCORE);
}

static void fill_arange(float *out, size_t count, const void *user) {
  (void)user;
  for (size_t i = 0; i < count; i++) out[i] = (float)i;
}

/* Tokens against the cache (DECODE mode, N >= 1 per row): token i of row b sits at position
 * start[b] + i and may not see cache rows j > start[b] + i (the later tokens of its own chunk) nor,
 * with a sliding window W, rows j < start[b] + i - (W - 1), as transformers 4.38's mask with a
 * past masks them. The kernel's causal diagonal and window are aligned to the capacity, not to
 * the run-time start, so this is an additive bias [B, 1, N, C]. Each indicator of an integer
 * t >= 1 is relu(t) - relu(t - 1), exact on these integers. NO_VALUE when nothing is masked
 * beyond kv_len (one token, no window). */
static vkf_value step_bias(vkf_decoder_model *m, vkf_graph *g, vkf_value start, int64_t batch,
                           int64_t n, int64_t cap) {
  int64_t w = m->f.config.sliding_window;
  if (n == 1 && w <= 0) return VKF_NO_VALUE;
  char key[64];
  vkf_arch_weights aw = {m->f.ck, &m->f.owned, "", VKF_F32, m->f.quantize};
  int64_t jshape[4] = {1, 1, 1, cap}, ishape[4] = {1, 1, n, 1}, one[1] = {1};
  int64_t rows[4] = {batch, 1, 1, 1};
  vkf_value j = vkf_arch_computed(&aw, g, VKF_NAME(key, "mask.key_index.%lld", (long long)cap),
                                  VKF_F32, 4, jshape, fill_arange, NULL);
  vkf_value i = vkf_arch_computed(&aw, g, VKF_NAME(key, "mask.query_index.%lld", (long long)n),
                                  VKF_F32, 4, ishape, fill_arange, NULL);
  vkf_value m1 = vkf_nn_filled(&aw, g, "mask.minus_one", VKF_F32, 1, one, -1.0f);
  vkf_value s0 = vkf_reshape(g, "mask.start_rows", vkf_cast(g, "mask.start", start, VKF_F32), 4,
                             rows);
  vkf_value pos = vkf_add(g, "mask.query_position", s0, i); /* [B, 1, N, 1] */
  vkf_value masked = VKF_NO_VALUE;
  if (n > 1) { /* t = j - pos: the future of each token */
    vkf_value t = vkf_sub(g, "mask.future_t", j, pos);
    masked = vkf_sub(g, "mask.future", vkf_relu(g, "mask.future_relu", t),
                     vkf_relu(g, "mask.future_relu1", vkf_add(g, "mask.future_t1", t, m1)));
  }
  if (w > 0) { /* t = pos - (W - 1) - j: keys before the window */
    vkf_value mw = vkf_nn_filled(&aw, g, VKF_NAME(key, "mask.minus_w1.%lld", (long long)w), VKF_F32,
                                 1, one, -(float)(w - 1));
    vkf_value t = vkf_sub(g, "mask.window_t", vkf_add(g, "mask.window_first", pos, mw), j);
    vkf_value before = vkf_sub(g, "mask.before_window", vkf_relu(g, "mask.window_relu", t),
                               vkf_relu(g, "mask.window_relu1", vkf_add(g, "mask.window_t1", t, m1)));
    /* The two rules mask disjoint keys, so their sum is their union. */
    masked = vkf_value_valid(masked) ? vkf_add(g, "mask.either", masked, before) : before;
  }
  return vkf_scale(g, "mask.bias", masked, -VKF_MASKED_SCORE);
}

/* Rows of `table` [R, C] at run-time positions [B, N], as [B, 1, N, C] (broadcast over heads). */
static vkf_value rows_at(vkf_graph *g, const char *name, vkf_value table_v, vkf_value positions,
                         int64_t batch, int64_t n, int64_t cols) {
  char nm[DEC_NAME_MAX];
  vkf_value r = vkf_gather(g, (snprintf(nm, sizeof nm, "%s.rows", name), nm), table_v, positions);
  int64_t shape[4] = {batch, 1, n, cols};
  return vkf_reshape(g, name, r, 4, shape);
}

void vkf_decoder_graph_release(vkf_decoder_graph *out) {
  vkf_graph_destroy(out->graph);
  free(out->cache_k);
  free(out->cache_v);
  memset(out, 0, sizeof *out);
}

static vkf_status check_options(const vkf_decoder_model *m, const vkf_decoder_build_options *o) {
  int64_t max = vkf_decoder_max_positions(m);
  int cached = o->mode != VKF_DECODER_FULL;
  if (o->batch < 0 || o->seq_len < 1 || o->seq_len > max ||
      (o->dtype != VKF_F32 && o->dtype != VKF_F16) ||
      (cached && (o->capacity < o->seq_len || o->capacity > max ||
                  (o->cache_dtype != VKF_F32 && o->cache_dtype != VKF_F16))) ||
      0)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: batch %lld, seq_len %lld, capacity %lld (max %lld), dtype %s, "
                           "cache dtype %s not supported in this mode",
                           m->f.dir, (long long)o->batch, (long long)o->seq_len,
                           (long long)o->capacity, (long long)max, vkf_dtype_name(o->dtype),
                           vkf_dtype_name(o->cache_dtype));
  if (o->cache_batch && (o->mode != VKF_DECODER_DECODE || o->seq_len != 1 || o->cache_batch < 0 ||
                         !vkf_decoder_takes_ragged(m)))
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: ragged rows (a cache of %lld rows) need a one-token DECODE build of "
                           "softmax attention without a sliding window",
                           m->f.dir, (long long)o->cache_batch);
  if (o->logit_rows < 0 || (o->logit_rows && o->mode == VKF_DECODER_FULL))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s: %lld logit rows", m->f.dir,
                           (long long)o->logit_rows);
  if (o->logits && !m->lm_head)
    return vkf_status_make(VKF_STATUS_NOT_FOUND, "%s: %s has no language-model head (logits)",
                           m->f.dir, vkf_decoder_architecture(m));
  return VKF_OK;
}

vkf_status vkf_decoder_build(vkf_decoder_model *m, const vkf_decoder_build_options *options,
                             vkf_decoder_graph *out) {
  memset(out, 0, sizeof *out);
  vkf_decoder_build_options o = options ? *options : (vkf_decoder_build_options){0};
  if (!o.batch) o.batch = 1;
  VKF_RETURN_IF_ERROR(check_options(m, &o));
  const vkf_hf_config *c = &m->f.config;
  int64_t batch = o.batch, n = o.seq_len, cap = o.capacity, layers = c->num_hidden_layers;
  /* Ragged rows run through the embeddings, projections and MLPs as one sequence of token_rows
   * tokens (a GEMM of that many rows, not that many GEMVs); only the cache writes and the attention see them
   * as rows of their own (ragged_attend, write_cache). */
  int64_t token_rows = batch;
  if (o.cache_batch) n = token_rows, batch = 1;
  int cached = o.mode != VKF_DECODER_FULL, decode = o.mode == VKF_DECODER_DECODE;
  int efficient = cached && !vkf_hf_attn_uses_kv(m->f.config.attention.kind);
  vkf_dtype dt = o.dtype;
  const family *fam = m->fam;
  vkf_graph *g = NULL;
  VKF_RETURN_IF_ERROR(vkf_graph_create(vkf_decoder_architecture(m), &g));
  out->graph = g;
  char nm[DEC_NAME_MAX], key[DEC_NAME_MAX];
  vkf_arch_weights aw = {m->f.ck, &m->f.owned, m->prefix, dt, m->f.quantize};

  int64_t bn[2] = {batch, n}, b1[1] = {batch};
  int64_t logit_rows = o.logit_rows ? o.logit_rows : token_rows, l1[1] = {logit_rows};
  vkf_value ids = vkf_graph_input(g, "input_ids", VKF_I32, 2, bn);
  vkf_block_io io = {0};
  cache_user *cu = NULL;
  if (!cached) {
    out->attention_mask = vkf_graph_input(g, "attention_mask", VKF_I32, 2, bn);
    /* The vkf_attention kinds read the keep mask instead: no [N, N] table for them. */
    if (vkf_hf_attn_is_softmax(c->attention.kind))
      io.bias = mask_bias(m, g, out->attention_mask, batch, n);
  } else if (efficient) {
    /* The linear family's recurrent form: per layer a state [B, H, F, Dh + 1] bound where the KV
     * cache would be (cache_k; no cache_v, cache_start or kv_len), and the keep mask of the
     * right-padded prompt rows (padding leaves the state as it is). */
    out->positions = vkf_graph_input(g, "position_ids", VKF_I32, 2, bn);
    out->last_index = vkf_graph_input(g, "last_index", VKF_I32, 1, l1);
    out->attention_mask = vkf_graph_input(g, "attention_mask", VKF_I32, 2, bn);
    io.keep = vkf_cast(g, "attention_mask.keep", out->attention_mask, VKF_F32);
    out->layers = layers;
    out->cache_k = calloc((size_t)layers, sizeof *out->cache_k);
    out->cache_v = calloc((size_t)layers, sizeof *out->cache_v);
    if (!out->cache_k || !out->cache_v) {
      vkf_decoder_graph_release(out);
      return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: state inputs", m->f.dir);
    }
    int64_t ss[4] = {batch, c->num_attention_heads,
                     vkf_efficient_state_features(&c->attention, c->head_dim), c->head_dim + 1};
    for (int64_t l = 0; l < layers; l++)
      out->cache_k[l] =
          vkf_graph_input(g, NAME(nm, "linear_state.%lld", (long long)l), VKF_F32, 4, ss);
  } else {
    out->positions = vkf_graph_input(g, "position_ids", VKF_I32, 2, bn);
    /* ragged rows: [2, B], each row's cache row after the B positions and lengths */
    int64_t b2[2] = {2, token_rows};
    out->cache_start = o.cache_batch ? vkf_graph_input(g, "cache_start", VKF_I32, 2, b2)
                                     : vkf_graph_input(g, "cache_start", VKF_I32, 1, b1);
    out->last_index = vkf_graph_input(g, "last_index", VKF_I32, 1, l1);
    if (decode)
      io.kv_len = out->kv_len = o.cache_batch ? vkf_graph_input(g, "kv_len", VKF_I32, 2, b2)
                                              : vkf_graph_input(g, "kv_len", VKF_I32, 1, b1);
    if (decode && c->attention.kind == VKF_HF_ATTN_LONG_SHORT)
      io.cache_start = out->cache_start; /* its own masks, from the positions */
    else if (decode && !o.cache_batch)
      io.bias = step_bias(m, g, out->cache_start, batch, n, cap);
    out->layers = layers;
    out->cache_k = calloc((size_t)layers, sizeof *out->cache_k);
    out->cache_v = calloc((size_t)layers, sizeof *out->cache_v);
    cu = calloc((size_t)layers, sizeof *cu);
    if (!out->cache_k || !out->cache_v || !cu) {
      free(cu);
      vkf_decoder_graph_release(out);
      return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: cache inputs", m->f.dir);
    }
    int64_t cs[4] = {o.cache_batch ? o.cache_batch : batch, c->num_key_value_heads, cap,
                     c->head_dim};
    for (int64_t l = 0; l < layers; l++) {
      out->cache_k[l] = vkf_graph_input(g, NAME(nm, "past_key_values.%lld.key", (long long)l),
                                        o.cache_dtype, 4, cs);
      out->cache_v[l] = vkf_graph_input(g, NAME(nm, "past_key_values.%lld.value", (long long)l),
                                        o.cache_dtype, 4, cs);
      cu[l] = (cache_user){out->cache_k[l], out->cache_v[l], out->cache_start, decode,
                           o.cache_batch != 0};
    }
    io.kv = write_cache;
  }

  /* One constant for the token table, so a tied head binds the same device buffer. */
  vkf_value embed = vkf_arch_tied_table_weight(&aw, g, fam->embed); /* [V, D] */
  vkf_value x = vkf_gather(g, NAME(nm, "%s%s", m->prefix, fam->embed), embed, ids); /* [B, N, D] */
  /* a quantised table's rows come out f32, an f16 table's f16; the blocks run in the model's
   * dtype */
  if (vkf_value_valid(x) && vkf_graph_tensor(g, x)->dtype != dt)
    x = vkf_cast(g, NAME(nm, "%s%s.cast", m->prefix, fam->embed), x, dt);
  rotary_user ru = {0};
  if (fam->positions && !cached) {
    x = vkf_add(g, NAME(nm, "%s%s", m->prefix, fam->positions), x,
                table(m, g, NAME(key, "%spositions.%lld", m->prefix, (long long)n),
                      TABLE_POSITIONS, 0, n, c->hidden_size, dt));
  } else if (fam->positions) {
    x = vkf_add(g, NAME(nm, "%s%s", m->prefix, fam->positions), x,
                vkf_gather(g, NAME(key, "%s%s.rows", m->prefix, fam->positions),
                           vkf_arch_weight(&aw, g, fam->positions), out->positions));
  } else if (!cached) {
    ru.cos = table(m, g, NAME(key, "rotary.cos.%lld", (long long)n), TABLE_COS, 0, n, c->head_dim,
                   dt);
    ru.sin = table(m, g, NAME(key, "rotary.sin.%lld", (long long)n), TABLE_SIN, 0, n, c->head_dim,
                   dt);
  } else {
    /* A prompt's rows share its length; a decoded token's row is computed for its own. */
    int64_t rows = decode ? cap : n;
    vkf_value ct = table(m, g, NAME(key, "rotary.cos.%s%lld", decode ? "step." : "", (long long)rows),
                         TABLE_COS, decode, rows, c->head_dim, dt);
    vkf_value st = table(m, g, NAME(key, "rotary.sin.%s%lld", decode ? "step." : "", (long long)rows),
                         TABLE_SIN, decode, rows, c->head_dim, dt);
    ru.cos = rows_at(g, "rotary.cos", ct, out->positions, batch, n, c->head_dim);
    ru.sin = rows_at(g, "rotary.sin", st, out->positions, batch, n, c->head_dim);
  }
  if (!fam->positions) {
    io.rotate = rotate;
    io.rotate_user = &ru;
  }
  vkf_block_config bc = block_config(m);
  bc.causal = o.mode == VKF_DECODER_PREFILL; /* FULL: in the bias; DECODE: kv_len */
  if (o.cache_batch) io.attend = ragged_attend;
  if (!vkf_hf_attn_is_softmax(c->attention.kind)) {
    /* The efficient kinds read neither the bias nor kv_len: causality is the op's, padding the
     * keep mask's. */
    bc.causal = 1;
    if (!cached) io.keep = vkf_cast(g, "attention_mask.keep", out->attention_mask, VKF_F32);
    /* Cached modes read the keep mask made with the state inputs above. */
  }
  if (o.mode == VKF_DECODER_PREFILL && c->sliding_window > 0) {
    bc.windowed = 1; /* keys i - (W - 1) .. i, as the FULL mode's mask table */
    bc.window_left = (int32_t)(c->sliding_window - 1);
    bc.window_right = -1;
  }
  for (int64_t l = 0; l < layers; l++) {
    char tp[64], np[DEC_NAME_MAX];
    snprintf(tp, sizeof tp, fam->layer_fmt, (long long)l);
    NAME(np, "%s%s", m->prefix, tp);
    vkf_block_weights w;
    bc.layer = l;
    vkf_block_weights_get(&aw, g, tp, &m->names, &bc, &w);
    if (cu) io.kv_user = &cu[l];
    if (efficient) io.state = out->cache_k[l];
    x = vkf_block_build(g, np, &m->names, &bc, &w, &io, x);
  }
  free(cu);
  char a[DEC_NAME_MAX], b[DEC_NAME_MAX];
  /* The final norm and the head run in f32 under --fp16 too: the last hidden state is cast once
   * (one row a sequence when cached), so the head's GEMM writes the f32 logits itself (no cast
   * dispatch after it, no f16 rounding of the logits) and, with an f32 gamma, fuse_norm folds the
   * norm into the head's A prologue as in f32 runs. */
  vkf_arch_weights fw = aw;
  fw.dtype = VKF_F32;
  vkf_norm_options no = {
      .eps = (float)c->layer_norm_eps,
      .gamma = vkf_arch_weight(&fw, g, NAME(a, "%s.weight", fam->final_norm)),
      .beta = fam->norm == VKF_BLOCK_LAYERNORM
                  ? vkf_arch_weight(&fw, g, NAME(b, "%s.bias", fam->final_norm))
                  : VKF_NO_VALUE,
  };
  if (cached) {
    /* Only the rows whose logits are wanted go through the final norm and the head. */
    int64_t flat[2] = {batch * n, c->hidden_size}, one[3] = {logit_rows, 1, c->hidden_size};
    x = vkf_reshape(g, "last_rows.flat", x, 2, flat);
    x = vkf_reshape(g, "last_rows", vkf_gather(g, "last_rows.gather", x, out->last_index), 3, one);
  }
  NAME(nm, "%s%s", m->prefix, fam->final_norm);
  if (vkf_value_valid(x) && vkf_graph_tensor(g, x)->dtype != VKF_F32)
    x = vkf_cast(g, "final_hidden.f32", x, VKF_F32);
  x = fam->norm == VKF_BLOCK_RMSNORM ? vkf_rmsnorm(g, nm, x, &no) : vkf_layernorm(g, nm, x, &no);
  if (o.last_hidden_state && !cached)
    out->last_hidden_state = vkf_arch_f32_output(g, x, "last_hidden_state");
  if (o.logits) {
    vkf_arch_weights head = {m->f.ck, &m->f.owned, "", dt, m->f.quantize};
    vkf_value w = m->lm_head == 2 ? vkf_arch_matmul_weight(&head, g, "lm_head.weight") : embed;
    vkf_matmul_options ho = {.transpose_b = 1};
    out->logits = vkf_arch_f32_output(g, vkf_matmul(g, "lm_head", x, w, &ho), "logits");
    if (o.next_ids && cached)
      out->next_ids = vkf_graph_output(
          g, vkf_reduce(g, "next_ids", out->logits, VKF_REDUCE_ARGMAX, 2), "next_ids");
  }
  vkf_status st = vkf_graph_status(g);
  if (st) {
    vkf_decoder_graph_release(out);
    return vkf_status_annotate(st, "building %s from %s: ", vkf_decoder_architecture(m), m->f.dir);
  }
  out->input_ids = ids;
  return VKF_OK;
}
