/* Transformer-XL: loading with every tensor checked, and the segment graph (see transfo_xl.h).
 *
 * The relative attention's four-term score (q+u)·k + (q+v)·R_{i-j} is the fused attention with
 * q+u as its queries and the position term as its additive bias: (q+v)·R for every distance is
 * one matmul against the sinusoids projected by r_net, and Hugging Face's _rel_shift (pad a zero
 * column, view [K+1, Q], drop the first row) is a reshape and a slice of that product, so the
 * bias is the [B, H, Q, K] tensor Hugging Face builds, rows shifted the same way. The causal and
 * same_length masks go into the bias as -1e30 (Hugging Face fills masked scores with the most
 * negative float: a row with every key masked is uniform in both). The adaptive softmax's
 * log-probabilities come from one log-softmax per cluster over its logits, the tail clusters
 * shifted by their head logit's log-probability, concatenated in vocabulary order. */
#include "models/arch/transfo_xl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ir/builder.h"
#include "models/arch/arch_weights.h"
#include "models/arch/nn_helpers.h"
#include "models/arch/transformer_block.h"

#define NAME VKF_NAME
enum { TXL_NAME_MAX = VKF_ARCH_NAME_MAX };

struct vkf_txl_model {
  vkf_arch_files f;
  vkf_txl_config c;
  const char *prefix; /* "transformer." (LM head checkpoint) or "" */
  int head;
};

const vkf_txl_config *vkf_txl_config_of(const vkf_txl_model *m) {
  return &m->c;
}
int vkf_txl_has_head(const vkf_txl_model *m) {
  return m->head;
}
static int64_t cluster_width(const vkf_txl_config *c, int64_t i) {
  int64_t w = c->d_embed;
  for (int64_t k = 0; k < i; k++) w /= c->div_val;
  return w;
}
static int64_t cluster_count(const vkf_txl_config *c) {
  return c->cutoff_count + 1;
}
static int64_t cluster_start(const vkf_txl_config *c, int64_t i) {
  return i ? c->cutoffs[i - 1] : 0;
}
static int64_t cluster_size(const vkf_txl_config *c, int64_t i) {
  return c->cutoffs[i] - cluster_start(c, i);
}

static vkf_status expect(const vkf_txl_model *m, const char *prefix, const char *name, int64_t d0,
                         int64_t d1) {
  return vkf_arch_expect2(m->f.ck, prefix, name, d0, d1);
}

/* The adaptive embedding's tables and projections (word_emb.*). */
static vkf_status check_embedding(const vkf_txl_model *m) {
  const vkf_txl_config *c = &m->c;
  char n[TXL_NAME_MAX];
  if (c->div_val == 1) {
    VKF_RETURN_IF_ERROR(
        expect(m, m->prefix, "word_emb.emb_layers.0.weight", c->vocab_size, c->d_embed));
    if (c->d_model != c->d_embed)
      VKF_RETURN_IF_ERROR(
          expect(m, m->prefix, "word_emb.emb_projs.0", c->d_model, c->d_embed));
    return VKF_OK;
  }
  for (int64_t i = 0; i < cluster_count(c); i++) {
    long long li = (long long)i;
    VKF_RETURN_IF_ERROR(expect(m, m->prefix, NAME(n, "word_emb.emb_layers.%lld.weight", li),
                               cluster_size(c, i), cluster_width(c, i)));
    VKF_RETURN_IF_ERROR(expect(m, m->prefix, NAME(n, "word_emb.emb_projs.%lld", li), c->d_model,
                               cluster_width(c, i)));
  }
  return VKF_OK;
}

static vkf_status check_layers(const vkf_txl_model *m) {
  const vkf_txl_config *c = &m->c;
  char n[TXL_NAME_MAX];
  int64_t hd = c->n_head * c->d_head, d = c->d_model;
  if (!c->untie_r) {
    VKF_RETURN_IF_ERROR(expect(m, m->prefix, "r_w_bias", c->n_head, c->d_head));
    VKF_RETURN_IF_ERROR(expect(m, m->prefix, "r_r_bias", c->n_head, c->d_head));
  }
  for (int64_t l = 0; l < c->n_layer; l++) {
    long long li = (long long)l;
    if (c->untie_r) {
      VKF_RETURN_IF_ERROR(expect(m, m->prefix, NAME(n, "layers.%lld.dec_attn.r_w_bias", li),
                                 c->n_head, c->d_head));
      VKF_RETURN_IF_ERROR(expect(m, m->prefix, NAME(n, "layers.%lld.dec_attn.r_r_bias", li),
                                 c->n_head, c->d_head));
    }
    VKF_RETURN_IF_ERROR(
        expect(m, m->prefix, NAME(n, "layers.%lld.dec_attn.qkv_net.weight", li), 3 * hd, d));
    VKF_RETURN_IF_ERROR(
        expect(m, m->prefix, NAME(n, "layers.%lld.dec_attn.r_net.weight", li), hd, d));
    VKF_RETURN_IF_ERROR(
        expect(m, m->prefix, NAME(n, "layers.%lld.dec_attn.o_net.weight", li), d, hd));
    VKF_RETURN_IF_ERROR(
        expect(m, m->prefix, NAME(n, "layers.%lld.dec_attn.layer_norm.weight", li), d, 0));
    VKF_RETURN_IF_ERROR(
        expect(m, m->prefix, NAME(n, "layers.%lld.dec_attn.layer_norm.bias", li), d, 0));
    VKF_RETURN_IF_ERROR(
        expect(m, m->prefix, NAME(n, "layers.%lld.pos_ff.CoreNet.0.weight", li), c->d_inner, d));
    VKF_RETURN_IF_ERROR(
        expect(m, m->prefix, NAME(n, "layers.%lld.pos_ff.CoreNet.0.bias", li), c->d_inner, 0));
    VKF_RETURN_IF_ERROR(
        expect(m, m->prefix, NAME(n, "layers.%lld.pos_ff.CoreNet.3.weight", li), d, c->d_inner));
    VKF_RETURN_IF_ERROR(
        expect(m, m->prefix, NAME(n, "layers.%lld.pos_ff.CoreNet.3.bias", li), d, 0));
    VKF_RETURN_IF_ERROR(
        expect(m, m->prefix, NAME(n, "layers.%lld.pos_ff.layer_norm.weight", li), d, 0));
    VKF_RETURN_IF_ERROR(
        expect(m, m->prefix, NAME(n, "layers.%lld.pos_ff.layer_norm.bias", li), d, 0));
  }
  return VKF_OK;
}

/* The name (full, prefix included) of cluster i's output weight [size_i (all of the vocabulary
 * for div_val 1), width_i]: the embedding's when tied (a saved file keeps only that one), else
 * crit.out_layers.i.weight. */
static const char *out_weight_name(const vkf_txl_model *m, int64_t i, char *buf, size_t size) {
  int64_t k = m->c.div_val == 1 ? 0 : i;
  snprintf(buf, size, "%sword_emb.emb_layers.%lld.weight", m->prefix, (long long)k);
  if (!m->c.tie_word_embeddings || !vkf_arch_has(m->f.ck, "", buf))
    snprintf(buf, size, "crit.out_layers.%lld.weight", (long long)k);
  return buf;
}

/* Cluster i's projection [d_model, width_i] as Hugging Face's tie_weights leaves it, or NULL when
 * there is none (div_val 1 with d_model == d_embed). */
static const char *out_proj_name(const vkf_txl_model *m, int64_t i, char *buf, size_t size) {
  const vkf_txl_config *c = &m->c;
  if (c->div_val == 1 && c->d_model == c->d_embed) return NULL;
  snprintf(buf, size, "%sword_emb.emb_projs.%lld", m->prefix,
           (long long)(c->div_val == 1 ? 0 : i));
  if (!c->tie_projs[i] || !vkf_arch_has(m->f.ck, "", buf))
    snprintf(buf, size, "crit.out_projs.%lld", (long long)i);
  return buf;
}

static vkf_status check_head(const vkf_txl_model *m) {
  const vkf_txl_config *c = &m->c;
  char n[TXL_NAME_MAX], p[TXL_NAME_MAX];
  int64_t clusters = cluster_count(c);
  if (clusters > 1) {
    VKF_RETURN_IF_ERROR(expect(m, "", "crit.cluster_weight", clusters - 1, c->d_embed));
    VKF_RETURN_IF_ERROR(expect(m, "", "crit.cluster_bias", clusters - 1, 0));
  }
  for (int64_t i = 0; i < (c->div_val == 1 ? 1 : clusters); i++) {
    int64_t rows = c->div_val == 1 ? c->vocab_size : cluster_size(c, i);
    VKF_RETURN_IF_ERROR(
        expect(m, "", out_weight_name(m, i, n, sizeof n), rows, cluster_width(c, i)));
    VKF_RETURN_IF_ERROR(
        expect(m, "", NAME(n, "crit.out_layers.%lld.bias", (long long)i), rows, 0));
  }
  for (int64_t i = 0; i < clusters; i++)
    if (out_proj_name(m, i, p, sizeof p))
      VKF_RETURN_IF_ERROR(expect(m, "", p, c->d_model, cluster_width(c, i)));
  return VKF_OK;
}

/* config.json is Transformer-XL's own (hf_config_transfo_xl.h), read instead of vkf_hf_config. */
static vkf_status open_files(void *model, const char *model_dir) {
  vkf_txl_model *m = model;
  if (!(m->f.dir = strdup(model_dir)))
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "loading %s", model_dir);
  char path[4096];
  snprintf(path, sizeof path, "%s/config.json", model_dir);
  VKF_RETURN_IF_ERROR(vkf_txl_config_load(path, &m->c));
  return vkf_checkpoint_open(model_dir, &m->f.ck);
}

static vkf_status check(void *model) {
  vkf_txl_model *m = model;
  m->head = vkf_arch_has(m->f.ck, "", "transformer.layers.0.dec_attn.qkv_net.weight") ||
            vkf_arch_has(m->f.ck, "", "crit.out_layers.0.bias");
  m->prefix = m->head ? "transformer." : "";
  VKF_RETURN_IF_ERROR(check_embedding(m));
  VKF_RETURN_IF_ERROR(check_layers(m));
  return m->head ? check_head(m) : VKF_OK;
}

const vkf_arch_loader vkf_txl_loader = {.size = sizeof(vkf_txl_model),
                                        .files_at = offsetof(vkf_txl_model, f),
                                        .open = open_files,
                                        .check = check,
                                        .f32_only = "Transformer-XL"};

int64_t vkf_txl_next_mem_len(const vkf_txl_model *m, int64_t mem_len, int64_t seq_len) {
  int64_t end = mem_len + seq_len;
  return end < m->c.mem_len ? end : m->c.mem_len;
}

/* ---- the segment graph ---- */

typedef struct txl_ctx {
  const vkf_txl_model *m;
  vkf_graph *g;
  vkf_arch_weights w, head; /* the transformer's tensors; the crit's (no prefix) */
  int64_t b, q, mlen, k;
} txl_ctx;

static vkf_value weight(txl_ctx *x, const char *fmt, long long l) {
  char n[TXL_NAME_MAX];
  snprintf(n, sizeof n, fmt, l);
  return vkf_arch_weight(&x->w, x->g, n);
}

/* A Linear without bias (torch's [out, in] weight). */
static vkf_value linear(txl_ctx *x, const char *node, vkf_value in, vkf_value w,
                        vkf_value bias, vkf_value residual) {
  vkf_matmul_options o = {.transpose_b = 1, .bias = bias, .residual = residual};
  return vkf_matmul(x->g, node, in, w, &o);
}

/* AdaptiveEmbedding: ids [B, Q] -> [B, Q, d_model], times sqrt(d_model). With div_val > 1 each
 * cluster's table is projected to d_model first (one matmul per cluster, the rows Hugging Face
 * projects token by token) and the projected tables stacked, so one gather serves every id. */
static vkf_value embed(txl_ctx *x, vkf_value ids) {
  const vkf_txl_config *c = &x->m->c;
  vkf_graph *g = x->g;
  char n[TXL_NAME_MAX];
  vkf_value e;
  if (c->div_val == 1) {
    e = vkf_gather(g, "word_emb", weight(x, "word_emb.emb_layers.%lld.weight", 0), ids);
    if (c->d_model != c->d_embed)
      e = linear(x, "word_emb.proj", e, weight(x, "word_emb.emb_projs.%lld", 0), VKF_NO_VALUE,
                 VKF_NO_VALUE);
  } else {
    vkf_value tables[VKF_TXL_MAX_CUTOFFS + 1];
    int64_t count = cluster_count(c);
    for (int64_t i = 0; i < count; i++)
      tables[i] = linear(x, NAME(n, "word_emb.table%lld", (long long)i),
                         weight(x, "word_emb.emb_layers.%lld.weight", (long long)i),
                         weight(x, "word_emb.emb_projs.%lld", (long long)i), VKF_NO_VALUE,
                         VKF_NO_VALUE);
    vkf_value table = vkf_nn_concat_many(g, "word_emb.tables", tables, count, 0);
    e = vkf_gather(g, "word_emb", table, ids);
  }
  return vkf_scale(g, "word_emb.scale", e, (float)sqrt((double)c->d_model));
}

typedef struct pos_fill {
  int64_t k, d, clamp;
} pos_fill;

/* Row 0 zeros (the rel shift's pad column, through r_net), then row 1 + p: the sinusoid of
 * distance K-1-p clamped to clamp_len, in float32 as PositionalEmbedding computes it. */
static void fill_positions(float *out, size_t count, const void *user) {
  const pos_fill *p = user;
  int64_t half = p->d / 2;
  memset(out, 0, count * sizeof *out);
  for (int64_t r = 0; r < p->k; r++) {
    float pos = (float)(p->k - 1 - r);
    if (p->clamp > 0 && pos > (float)p->clamp) pos = (float)p->clamp;
    float *row = out + (r + 1) * p->d;
    for (int64_t i = 0; i < half; i++) {
      float e = (float)(2 * i) / (float)p->d;
      float inv = 1.0f / powf(10000.0f, e);
      float arg = pos * inv;
      row[i] = (float)sin((double)arg);
      row[half + i] = (float)cos((double)arg);
    }
  }
}

typedef struct mask_fill {
  int64_t q, k, mlen, mem_len;
  int same_length;
} mask_fill;

/* dec_attn_mask as an additive [Q, K]: key j is masked for query i when j > i + mlen, and with
 * same_length also when j <= i - mask_shift_len. */
static void fill_mask(float *out, size_t count, const void *user) {
  const mask_fill *p = user;
  (void)count;
  int64_t mask_len = p->k - p->mem_len;
  int64_t shift = mask_len > 0 ? p->q - mask_len : p->q;
  for (int64_t i = 0; i < p->q; i++)
    for (int64_t j = 0; j < p->k; j++) {
      int masked = j > i + p->mlen || (p->same_length && j <= i - shift);
      out[i * p->k + j] = masked ? -VKF_MASKED_SCORE : 0.0f;
    }
}

typedef struct txl_shared {
  vkf_value pos; /* [K + 1, d_model] */
  vkf_value mask; /* [Q, K] */
} txl_shared;

vkf_value vkf_txl_relative_attention(vkf_graph *g, const char *prefix, vkf_value q, vkf_value k,
                                     vkf_value v, vkf_value u, vkf_value v_bias, vkf_value r,
                                     vkf_value mask) {
  const vkf_tensor *qt = vkf_graph_tensor(g, q), *kt = vkf_graph_tensor(g, k);
  if (!qt || !kt || qt->rank != 4 || kt->rank != 4) {
    vkf_graph_set_error(g, vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                                           "%s: relative attention needs q and k [B, H, N, Dh]",
                                           prefix));
    return VKF_NO_VALUE;
  }
  int64_t b = qt->shape[0], H = qt->shape[1], q_len = qt->shape[2], dh = qt->shape[3];
  int64_t k_len = kt->shape[2];
  char n[TXL_NAME_MAX];
  vkf_value rq = vkf_add(g, NAME(n, "%s.q_v", prefix), q, v_bias); /* [B, H, Q, Dh] */
  vkf_matmul_options tb = {.transpose_b = 1};
  vkf_value bd = vkf_matmul(g, NAME(n, "%s.bd", prefix), rq, r, &tb); /* [B, H, Q, K+1] */
  /* Hugging Face's _rel_shift: the [Q, K + 1] scores read flat from row 1 on, as [Q, K]. */
  int64_t flat[3] = {b, H, q_len * (k_len + 1)}, shifted[4] = {b, H, q_len, k_len};
  bd = vkf_reshape(g, NULL, bd, 3, flat);
  bd = vkf_slice(g, NULL, bd, 2, q_len, q_len * (k_len + 1));
  bd = vkf_reshape(g, NAME(n, "%s.bd_shift", prefix), bd, 4, shifted);
  float scale = (float)(1.0 / sqrt((double)dh));
  vkf_value bias = vkf_add(g, NAME(n, "%s.pos_bias", prefix), vkf_scale(g, NULL, bd, scale), mask);
  vkf_value qu = vkf_add(g, NAME(n, "%s.q_u", prefix), q, u);
  vkf_attention_options ao = {.scale = scale, .bias = bias};
  return vkf_attention(g, NAME(n, "%s.attn", prefix), qu, k, v, &ao);
}

/* One RelPartialLearnableDecoderLayer on h [B, Q, D] with memory mem ([B, M, D] or none);
 * *cat_out is [memory; h] [B, K, D] (the next memory's source). */
static vkf_value layer(txl_ctx *x, const txl_shared *sh, int64_t l, vkf_value h, vkf_value mem,
                       vkf_value *cat_out) {
  const vkf_txl_config *c = &x->m->c;
  vkf_graph *g = x->g;
  long long li = (long long)l;
  char n[TXL_NAME_MAX];
  int64_t H = c->n_head, dh = c->d_head, hd = H * dh, b = x->b, q = x->q, k = x->k;
  vkf_value cat = h;
  if (x->mlen) {
    vkf_value parts[2] = {mem, h};
    cat = vkf_concat(g, NAME(n, "layers.%lld.cat", li), parts, 2, 1);
  }
  *cat_out = cat;
  vkf_norm_options ln_a = {.eps = (float)c->layer_norm_epsilon,
                           .gamma = weight(x, "layers.%lld.dec_attn.layer_norm.weight", li),
                           .beta = weight(x, "layers.%lld.dec_attn.layer_norm.bias", li)};
  vkf_value in = c->pre_lnorm ? vkf_layernorm(g, NAME(n, "layers.%lld.ln_in", li), cat, &ln_a)
                              : cat;
  vkf_value qkv = linear(x, NAME(n, "layers.%lld.qkv", li), in,
                         weight(x, "layers.%lld.dec_attn.qkv_net.weight", li), VKF_NO_VALUE,
                         VKF_NO_VALUE); /* [B, K, 3·HD] */
  int64_t heads_q[4] = {b, q, H, dh}, heads_k[4] = {b, k, H, dh};
  static const uint32_t bhnd[4] = {0, 2, 1, 3};
  vkf_value qv = vkf_slice(g, NULL, vkf_slice(g, NULL, qkv, 2, 0, hd), 1, x->mlen, k);
  qv = vkf_permute(g, NULL, vkf_reshape(g, NAME(n, "layers.%lld.q", li), qv, 4, heads_q), bhnd);
  vkf_value kv = vkf_slice(g, NULL, qkv, 2, hd, 2 * hd);
  kv = vkf_permute(g, NULL, vkf_reshape(g, NAME(n, "layers.%lld.k", li), kv, 4, heads_k), bhnd);
  vkf_value vv = vkf_slice(g, NULL, qkv, 2, 2 * hd, 3 * hd);
  vv = vkf_permute(g, NULL, vkf_reshape(g, NAME(n, "layers.%lld.v", li), vv, 4, heads_k), bhnd);
  int64_t hb[3] = {H, 1, dh};
  vkf_value u = vkf_reshape(g, NULL,
                            c->untie_r ? weight(x, "layers.%lld.dec_attn.r_w_bias", li)
                                       : weight(x, "r_w_bias", 0),
                            3, hb);
  vkf_value v = vkf_reshape(g, NULL,
                            c->untie_r ? weight(x, "layers.%lld.dec_attn.r_r_bias", li)
                                       : weight(x, "r_r_bias", 0),
                            3, hb);
  /* Position term: (q + v) · r_net(R) for every distance, then shifted. */
  vkf_value r = linear(x, NAME(n, "layers.%lld.r", li), sh->pos,
                       weight(x, "layers.%lld.dec_attn.r_net.weight", li), VKF_NO_VALUE,
                       VKF_NO_VALUE); /* [K+1, HD] */
  int64_t r_heads[3] = {k + 1, H, dh};
  static const uint32_t hkd[3] = {1, 0, 2};
  r = vkf_copy(g, NAME(n, "layers.%lld.r_heads", li),
               vkf_permute(g, NULL, vkf_reshape(g, NULL, r, 3, r_heads), hkd)); /* [H, K+1, Dh] */
  vkf_value att = vkf_txl_relative_attention(g, NAME(n, "layers.%lld", li), qv, kv, vv, u, v, r,
                                             sh->mask);
  int64_t merged[3] = {b, q, hd};
  att = vkf_reshape(g, NULL, vkf_permute(g, NULL, att, bhnd), 3, merged);
  vkf_value o = linear(x, NAME(n, "layers.%lld.o", li), att,
                       weight(x, "layers.%lld.dec_attn.o_net.weight", li), VKF_NO_VALUE, h);
  if (!c->pre_lnorm) o = vkf_layernorm(g, NAME(n, "layers.%lld.ln_attn", li), o, &ln_a);
  vkf_norm_options ln_f = {.eps = (float)c->layer_norm_epsilon,
                           .gamma = weight(x, "layers.%lld.pos_ff.layer_norm.weight", li),
                           .beta = weight(x, "layers.%lld.pos_ff.layer_norm.bias", li)};
  vkf_value ff_in = c->pre_lnorm ? vkf_layernorm(g, NAME(n, "layers.%lld.ln_ff", li), o, &ln_f)
                                 : o;
  /* PositionwiseFF's CoreNet (Linear, ReLU, Linear) is the block builder's plain MLP. */
  static const vkf_block_names ff_names = {.mlp_up = "ff1", .mlp_down = "ff2"};
  const vkf_block_config ff_config = {.mlp = VKF_BLOCK_MLP_PLAIN, .act = VKF_ACT_RELU};
  vkf_block_weights ff_w = {0};
  ff_w.up.bias = weight(x, "layers.%lld.pos_ff.CoreNet.0.bias", li);
  ff_w.up.weight = weight(x, "layers.%lld.pos_ff.CoreNet.0.weight", li);
  ff_w.down.weight = weight(x, "layers.%lld.pos_ff.CoreNet.3.weight", li);
  ff_w.down.bias = weight(x, "layers.%lld.pos_ff.CoreNet.3.bias", li);
  char np[TXL_NAME_MAX];
  vkf_value ff = vkf_block_mlp_build(g, NAME(np, "layers.%lld.", li), &ff_names, &ff_config,
                                     &ff_w, ff_in, o);
  if (!c->pre_lnorm) ff = vkf_layernorm(g, NAME(n, "layers.%lld.ln_ff", li), ff, &ln_f);
  return ff;
}

/* log_softmax over the last axis of cluster i's logits x [N, C]. */
static vkf_value log_softmax(vkf_graph *g, int64_t i, vkf_value x) {
  char n[TXL_NAME_MAX];
  long long li = (long long)i;
  vkf_value mx = vkf_reduce(g, NAME(n, "crit.logprob%lld.max", li), x, VKF_REDUCE_MAX, 1);
  vkf_value sh = vkf_sub(g, NAME(n, "crit.logprob%lld.shifted", li), x, mx);
  vkf_value sum =
      vkf_reduce(g, NAME(n, "crit.logprob%lld.sum", li), vkf_exp(g, NULL, sh), VKF_REDUCE_SUM, 1);
  vkf_value log_sum = vkf_ln(g, NAME(n, "crit.logprob%lld.log", li), sum);
  return vkf_sub(g, NAME(n, "crit.logprob%lld", li), sh, log_sum);
}

/* Rows [start, start + rows) of a constant [*, C] checkpoint tensor of the head. */
static vkf_value head_rows(txl_ctx *x, const char *name, int64_t start, int64_t rows,
                           int64_t total) {
  vkf_value t = vkf_arch_weight(&x->head, x->g, name);
  return rows == total ? t : vkf_slice(x->g, NULL, t, 0, start, start + rows);
}

/* ProjectedAdaptiveLogSoftmax over hidden [N, d_model] -> log-probabilities [N, vocab]. */
static vkf_value adaptive_log_softmax(txl_ctx *x, vkf_value hid) {
  const vkf_txl_config *c = &x->m->c;
  vkf_graph *g = x->g;
  char n[TXL_NAME_MAX], wn[TXL_NAME_MAX], pn[TXL_NAME_MAX];
  int64_t clusters = cluster_count(c);
  vkf_value parts[VKF_TXL_MAX_CUTOFFS + 1], head_lp = VKF_NO_VALUE;
  for (int64_t i = 0; i < clusters; i++) {
    long long li = (long long)i;
    int64_t start = cluster_start(c, i), size = cluster_size(c, i);
    int64_t k = c->div_val == 1 ? 0 : i, total = c->div_val == 1 ? c->vocab_size : size;
    int64_t off = c->div_val == 1 ? start : 0;
    vkf_value w = head_rows(x, out_weight_name(x->m, k, wn, sizeof wn), off, size, total);
    vkf_value bias = head_rows(x, NAME(n, "crit.out_layers.%lld.bias", (long long)k), off, size,
                               total);
    if (i == 0 && clusters > 1) {
      vkf_value ws[2] = {w, vkf_arch_weight(&x->head, g, "crit.cluster_weight")};
      vkf_value bs[2] = {bias, vkf_arch_weight(&x->head, g, "crit.cluster_bias")};
      w = vkf_concat(g, "crit.head_weight", ws, 2, 0);
      bias = vkf_concat(g, "crit.head_bias", bs, 2, 0);
    }
    vkf_value in = hid;
    if (out_proj_name(x->m, i, pn, sizeof pn)) {
      vkf_matmul_options plain = {0};
      in = vkf_matmul(g, NAME(n, "crit.proj%lld", li), hid, vkf_arch_weight(&x->head, g, pn),
                      &plain); /* hidden · proj: [N, width_i] */
    }
    vkf_value logit = linear(x, NAME(n, "crit.logit%lld", li), in, w, bias, VKF_NO_VALUE);
    vkf_value lp = log_softmax(g, i, logit);
    if (i == 0) {
      head_lp = lp;
      parts[0] = clusters > 1 ? vkf_slice(g, NULL, lp, 1, 0, c->cutoffs[0]) : lp;
    } else {
      int64_t col = c->cutoffs[0] + i - 1;
      parts[i] = vkf_add(g, NAME(n, "crit.cluster%lld", li), lp,
                         vkf_slice(g, NULL, head_lp, 1, col, col + 1));
    }
  }
  vkf_value out = vkf_nn_concat_many(g, "crit.logprobs", parts, clusters, 1);
  return out;
}

vkf_status vkf_txl_build(vkf_txl_model *m, const vkf_txl_build_options *o, vkf_txl_graph *out) {
  memset(out, 0, sizeof *out);
  const vkf_txl_config *c = &m->c;
  int64_t b = o->batch ? o->batch : 1;
  if (o->dtype != VKF_F32)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: Transformer-XL runs in f32 only, not %s",
                           m->f.dir, vkf_dtype_name(o->dtype));
  if (b < 1)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s: batch %lld, expected >= 1", m->f.dir,
                           (long long)b);
  /* The batch is not named here: callers build a probe of one row and split a batch into parts,
   * so `b` is rarely the caller's batch, and these limits do not depend on it. */
  if (o->seq_len < 1 || o->seq_len > VKF_TXL_MAX_SEGMENT || o->mem_len < 0 ||
      o->mem_len + o->seq_len > VKF_TXL_MAX_KEYS)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: a segment of %lld tokens on %lld memory rows (mems dim 1): "
                           "expected 1 .. %lld tokens and at most %lld memory rows + tokens",
                           m->f.dir, (long long)o->seq_len, (long long)o->mem_len,
                           (long long)VKF_TXL_MAX_SEGMENT, (long long)VKF_TXL_MAX_KEYS);
  if (o->prediction_scores && !m->head)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: prediction_scores needs a TransfoXLLMHeadModel checkpoint (crit.*)",
                           m->f.dir);
  out->new_mem_len = vkf_txl_next_mem_len(m, o->mem_len, o->seq_len);
  if (o->mems && out->new_mem_len == 0)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: output mems has no rows (config mem_len is 0)", m->f.dir);
  VKF_RETURN_IF_ERROR(vkf_graph_create("transfo_xl", &out->graph));
  vkf_graph *g = out->graph;
  txl_ctx x = {.m = m,
               .g = g,
               .w = {.ck = m->f.ck, .cache = &m->f.owned, .prefix = m->prefix, .dtype = VKF_F32},
               .head = {.ck = m->f.ck, .cache = &m->f.owned, .prefix = "", .dtype = VKF_F32},
               .b = b,
               .q = o->seq_len,
               .mlen = o->mem_len,
               .k = o->mem_len + o->seq_len};
  int64_t d = c->d_model, L = c->n_layer;
  out->input_ids = vkf_graph_input(g, "input_ids", VKF_I32, 2, (int64_t[]){b, x.q});
  if (x.mlen)
    out->mems = vkf_graph_input(g, "mems", VKF_F32, 4, (int64_t[]){b, L, x.mlen, d});
  char key[TXL_NAME_MAX];
  pos_fill pf = {x.k, d, c->clamp_len};
  mask_fill mf = {x.q, x.k, x.mlen, c->mem_len, c->same_length};
  txl_shared sh = {
      .pos = vkf_arch_computed(&x.w, g,
                               NAME(key, "txl.pos.%lld.%lld", (long long)x.k,
                                    (long long)c->clamp_len),
                               VKF_F32, 2, (int64_t[]){x.k + 1, d}, fill_positions, &pf),
      .mask = vkf_arch_computed(&x.w, g,
                                NAME(key, "txl.mask.%lld.%lld", (long long)x.q,
                                     (long long)x.mlen),
                                VKF_F32, 2, (int64_t[]){x.q, x.k}, fill_mask, &mf)};
  vkf_value h = embed(&x, out->input_ids);
  vkf_value *parts = calloc((size_t)L, sizeof *parts);
  if (!parts) {
    vkf_graph_destroy(g);
    memset(out, 0, sizeof *out);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: new memory", m->f.dir);
  }
  int64_t keep = out->new_mem_len, beg = x.k - keep;
  int64_t row_shape[4] = {b, 1, keep, d};
  for (int64_t l = 0; l < L; l++) {
    char n[TXL_NAME_MAX];
    vkf_value mem = VKF_NO_VALUE, cat;
    if (x.mlen) {
      vkf_value ml = vkf_slice(g, NULL, out->mems, 1, l, l + 1);
      mem = vkf_reshape(g, NAME(n, "mems.%lld", (long long)l), ml, 3,
                        (int64_t[]){b, x.mlen, d});
    }
    h = layer(&x, &sh, l, h, mem, &cat);
    /* The next memory: the last `keep` rows of [memory; this layer's input]. */
    if (o->mems)
      parts[l] = vkf_reshape(g, NAME(n, "new_mems.%lld", (long long)l),
                             vkf_slice(g, NULL, cat, 1, beg, x.k), 4, row_shape);
  }
  vkf_value mem_out = o->mems ? vkf_nn_concat_many(g, "new_mems", parts, L, 1) : VKF_NO_VALUE;
  free(parts);
  if (o->last_hidden_state) out->last_hidden_state = vkf_graph_output(g, h, "last_hidden_state");
  if (o->prediction_scores) {
    vkf_value hid = vkf_reshape(g, NULL, h, 2, (int64_t[]){b * x.q, d});
    vkf_value lp = adaptive_log_softmax(&x, hid);
    out->prediction_scores = vkf_graph_output(
        g, vkf_reshape(g, NULL, lp, 3, (int64_t[]){b, x.q, c->vocab_size}), "prediction_scores");
  }
  if (o->mems) out->new_mems = vkf_graph_output(g, mem_out, "mems");
  vkf_status s = vkf_graph_status(g);
  if (s) {
    vkf_graph_destroy(g);
    memset(out, 0, sizeof *out);
  }
  return s;
}
