/* The graphs of the encoder–decoder families: embeddings and positions, the encoder stack, the
 * decoder stack (self-attention, cross attention, MLP, each with its norm placed per family), the
 * head, and the caches of a decoding step. */
#include "models/arch/encdec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ir/builder.h"
#include "models/arch/encdec_internal.h"
#include "models/arch/nn_helpers.h"
#include "models/arch/relative_position.h"

#define NAME VKF_NAME
enum { ED_NAME_MAX = VKF_ARCH_NAME_MAX };


/* ---- computed tables ---- */

typedef enum table_kind { TABLE_POSITIONS, TABLE_REL_BIAS, TABLE_VALUE } table_kind;

typedef struct table_fill {
  const vkf_encdec_model *m;
  table_kind kind;
  int decoder;     /* which stack's positions or relative bias */
  int64_t rows;    /* positions: rows 0 .. rows-1; bias: queries */
  int64_t cols;    /* bias: keys */
  float value;     /* TABLE_VALUE */
  vkf_status status;
} table_fill;

/* Row p of the family's absolute position table into out[0 .. d). */
static void position_row(const vkf_encdec_model *m, int64_t p, const float *learned, float *out) {
  int64_t d = m->f.config.hidden_size;
  switch (m->fam->positions) {
    case POS_LEARNED_OFFSET2: /* BartLearnedPositionalEmbedding: row p + 2 */
      memcpy(out, learned + (p + 2) * d, (size_t)d * sizeof *out);
      break;
    case POS_SINUSOID_HALVES: { /* MarianSinusoidalPositionalEmbedding, numpy float64 */
      int64_t sentinel = d % 2 == 0 ? d / 2 : d / 2 + 1;
      for (int64_t j = 0; j < d; j++) {
        /* column j of the sine half is feature 2j, of the cosine half feature 2(j - s) + 1 */
        int64_t feature = j < sentinel ? 2 * j : 2 * (j - sentinel) + 1;
        double angle = (double)p / pow(10000.0, (double)(2 * (feature / 2)) / (double)d);
        out[j] = (float)(j < sentinel ? sin(angle) : cos(angle));
      }
      break;
    }
    case POS_SINUSOID_INTERLEAVED: /* D2L's PositionalEncoding, float32 arithmetic */
      for (int64_t j = 0; j + 1 < d + 1; j += 2) {
        float x = (float)p / powf(10000.0f, (float)j / (float)d);
        out[j] = sinf(x);
        if (j + 1 < d) out[j + 1] = cosf(x);
      }
      break;
    case POS_RELATIVE:
      break;
  }
}

static void fill_table(float *out, size_t count, const void *user) {
  table_fill *f = (table_fill *)user;
  const vkf_encdec_model *m = f->m;
  const vkf_hf_config *c = &m->f.config;
  for (size_t i = 0; i < count; i++) out[i] = 0.0f;
  if (f->kind == TABLE_VALUE) {
    for (size_t i = 0; i < count; i++) out[i] = f->value;
    return;
  }
  char name[ED_NAME_MAX];
  float *w = NULL;
  const char *tensor = NULL;
  if (f->kind == TABLE_POSITIONS && m->fam->positions == POS_LEARNED_OFFSET2)
    tensor = f->decoder ? m->fam->dec_positions : m->fam->enc_positions;
  if (f->kind == TABLE_REL_BIAS)
    tensor = NAME(name, m->fam->rel_bias_fmt, f->decoder ? "decoder" : "encoder");
  if (tensor) {
    char full[ED_NAME_MAX];
    f->status = vkf_weight_read_f32(m->f.ck, NAME(full, "%s%s", m->prefix, tensor), &w, NULL);
    if (f->status) return;
  }
  if (f->kind == TABLE_POSITIONS) {
    for (int64_t p = 0; p < f->rows; p++) position_row(m, p, w, out + p * c->hidden_size);
  } else {
    /* T5Attention.compute_bias: bias[h, i, j] = table[bucket(j - i)][h]. */
    int64_t heads = f->decoder ? c->decoder_heads : c->num_attention_heads;
    for (int64_t i = 0; i < f->rows; i++)
      for (int64_t j = 0; j < f->cols; j++) {
        int64_t bucket = vkf_t5_relative_bucket(j - i, !f->decoder, c->relative_buckets,
                                                c->relative_max_distance);
        for (int64_t h = 0; h < heads; h++)
          out[(h * f->rows + i) * f->cols + j] = w[bucket * heads + h];
      }
  }
  free(w);
}

static vkf_value table(vkf_encdec_model *m, vkf_graph *g, const char *key, table_fill tf,
                       vkf_dtype dt, uint32_t rank, const int64_t *shape) {
  vkf_arch_weights w = {m->f.ck, &m->f.owned, "", dt, m->f.quantize};
  tf.m = m;
  vkf_value v = vkf_arch_computed(&w, g, key, dt, rank, shape, fill_table, &tf);
  if (tf.status) vkf_graph_set_error(g, tf.status);
  return v;
}

static vkf_value constant(vkf_encdec_model *m, vkf_graph *g, const char *key, float value,
                          int64_t count) {
  table_fill tf = {.kind = TABLE_VALUE, .value = value};
  int64_t shape[1] = {count};
  return table(m, g, key, tf, VKF_F32, 1, shape);
}

/* ---- parts ---- */

/* The additive key mask [B, 1, 1, S] of a 0/1 attention_mask: (1 - mask) · -inf-ish, as
 * _prepare_4d_attention_mask. */
static vkf_value key_mask_bias(vkf_encdec_model *m, vkf_graph *g, vkf_value mask, int64_t batch,
                               int64_t s) {
  vkf_value one = constant(m, g, "mask.one", 1.0f, 1);
  vkf_value keep = vkf_cast(g, "attention_mask.f32", mask, VKF_F32);
  vkf_value pad = vkf_sub(g, "attention_mask.padding", one, keep);
  int64_t shape[4] = {batch, 1, 1, s};
  pad = vkf_reshape(g, "attention_mask.keys", pad, 4, shape);
  return vkf_scale(g, "attention_mask.bias", pad, -VKF_MASKED_SCORE);
}

/* Token embeddings (times the family's scale) plus absolute positions 0 .. n-1 (positions NO_VALUE)
 * or at run-time positions [B, n], then BART's layernorm_embedding. */
static vkf_value embed(vkf_encdec_model *m, vkf_graph *g, const vkf_arch_weights *aw, int decoder,
                       vkf_value ids, vkf_value positions, int64_t batch, int64_t n,
                       int64_t pos_rows) {
  const vkf_hf_config *c = &m->f.config;
  const char *stack = decoder ? "decoder" : "encoder";
  char nm[ED_NAME_MAX], key[ED_NAME_MAX];
  vkf_value table_v = vkf_arch_weight(aw, g, decoder ? m->dec_embed : m->enc_embed);
  vkf_value x = vkf_gather(g, NAME(nm, "%s%s.embed_tokens", m->prefix, stack), table_v, ids);
  if (m->embed_scale != 1.0f)
    x = vkf_scale(g, NAME(nm, "%s%s.embed_scale", m->prefix, stack), x, m->embed_scale);
  if (m->fam->positions != POS_RELATIVE) {
    int64_t d = c->hidden_size;
    /* Learned tables differ per stack; the sinusoids are the same for both. */
    int own = m->fam->positions == POS_LEARNED_OFFSET2 && decoder;
    table_fill tf = {.kind = TABLE_POSITIONS, .decoder = own};
    vkf_value p;
    if (!vkf_value_valid(positions)) {
      int64_t shape[2] = {n, d};
      tf.rows = n;
      p = table(m, g, NAME(key, "%spositions.%d.%lld", m->prefix, own, (long long)n), tf, aw->dtype,
                2, shape);
    } else {
      int64_t shape[2] = {pos_rows, d}, bnd[3] = {batch, n, d};
      tf.rows = pos_rows;
      vkf_value all = table(m, g, NAME(key, "%spositions.%d.%lld", m->prefix, own,
                                       (long long)pos_rows),
                            tf, aw->dtype, 2, shape);
      p = vkf_reshape(g, NAME(nm, "%s%s.positions", m->prefix, stack),
                      vkf_gather(g, NAME(key, "%s%s.position_rows", m->prefix, stack), all,
                                 positions),
                      3, bnd);
    }
    x = vkf_add(g, NAME(nm, "%s%s.embed_positions", m->prefix, stack), x, p);
  }
  const char *en = decoder ? m->fam->dec_embed_norm : m->fam->enc_embed_norm;
  if (en) {
    char gw[ED_NAME_MAX], gb[ED_NAME_MAX];
    vkf_norm_options no = {.eps = (float)c->layer_norm_eps,
                           .gamma = vkf_arch_weight(aw, g, NAME(gw, "%s.weight", en)),
                           .beta = vkf_arch_weight(aw, g, NAME(gb, "%s.bias", en))};
    x = vkf_layernorm(g, NAME(nm, "%s%s", m->prefix, en), x, &no);
  }
  return x;
}

static vkf_value stack_norm(vkf_encdec_model *m, vkf_graph *g, const vkf_arch_weights *aw,
                            const char *module, vkf_value x) {
  char nm[ED_NAME_MAX], gw[ED_NAME_MAX];
  vkf_norm_options no = {.eps = (float)m->f.config.layer_norm_eps,
                         .gamma = vkf_arch_weight(aw, g, NAME(gw, "%s.weight", module))};
  return vkf_rmsnorm(g, NAME(nm, "%s%s", m->prefix, module), x, &no);
}

/* T5's bias [1, H, rows, cols] for a whole sequence (the first layer's table, shared by all). */
static vkf_value relative_bias(vkf_encdec_model *m, vkf_graph *g, int decoder, int64_t rows,
                               int64_t cols) {
  const vkf_hf_config *c = &m->f.config;
  char key[ED_NAME_MAX];
  int64_t heads = decoder ? c->decoder_heads : c->num_attention_heads;
  int64_t shape[4] = {1, heads, rows, cols};
  table_fill tf = {.kind = TABLE_REL_BIAS, .decoder = decoder, .rows = rows, .cols = cols};
  return table(m, g,
               NAME(key, "%srelative_bias.%d.%lldx%lld", m->prefix, decoder, (long long)rows,
                    (long long)cols),
               tf, VKF_F32, 4, shape);
}

static vkf_value encoder(vkf_encdec_model *m, vkf_graph *g, const vkf_arch_weights *aw,
                         vkf_value ids, vkf_value mask_bias, int64_t batch, int64_t s) {
  const vkf_hf_config *c = &m->f.config;
  vkf_value x = embed(m, g, aw, 0, ids, VKF_NO_VALUE, batch, s, 0);
  vkf_block_io io = {.bias = mask_bias};
  if (m->fam->positions == POS_RELATIVE)
    io.bias = vkf_add(g, "encoder.position_bias", relative_bias(m, g, 0, s, s), mask_bias);
  vkf_block_config bc = vkf_encdec_block_config(m, 0);
  for (int64_t l = 0; l < c->num_hidden_layers; l++) {
    char tp[64], np[ED_NAME_MAX];
    snprintf(tp, sizeof tp, m->fam->enc_layer_fmt, (long long)l);
    NAME(np, "%s%s", m->prefix, tp);
    vkf_block_weights w;
    vkf_block_weights_get(aw, g, tp, &m->enc_names, &bc, &w);
    x = vkf_block_build(g, np, &m->enc_names, &bc, &w, &io, x);
  }
  if (m->fam->enc_final_norm) x = stack_norm(m, g, aw, m->fam->enc_final_norm, x);
  return x;
}

/* Per decoder layer: its caches (STEP) and which attention io it runs with. */
typedef struct layer_io {
  vkf_block_io self, cross;
  vkf_value self_k, self_v, positions; /* STEP: the self cache and the write position */
} layer_io;

static void write_cache(vkf_graph *g, const char *name, vkf_value *k, vkf_value *v, void *user) {
  const layer_io *l = user;
  char nm[ED_NAME_MAX + 16];
  *k = vkf_kv_write(g, (snprintf(nm, sizeof nm, "%s.k_cache", name), nm), l->self_k, *k,
                    l->positions);
  *v = vkf_kv_write(g, (snprintf(nm, sizeof nm, "%s.v_cache", name), nm), l->self_v, *v,
                    l->positions);
}

/* One decoder layer: self-attention, cross attention over `memory` (or the io's cross cache), MLP;
 * each sublayer's norm before it (T5) or after its residual add (BART, Marian, D2L). */
static vkf_value decoder_layer(vkf_encdec_model *m, vkf_graph *g, const vkf_arch_weights *aw,
                               int64_t l, layer_io *lio, vkf_value x, vkf_value memory,
                               int causal) {
  char tp[64], np[ED_NAME_MAX];
  snprintf(tp, sizeof tp, m->fam->dec_layer_fmt, (long long)l);
  NAME(np, "%s%s", m->prefix, tp);
  vkf_block_config bc = vkf_encdec_block_config(m, 1), cc = bc;
  cc.mlp = VKF_BLOCK_MLP_PLAIN;
  cc.cross = 1;
  bc.causal = causal;
  vkf_block_weights ws, wc;
  vkf_block_weights_get(aw, g, tp, &m->dec_self_names, &bc, &ws);
  vkf_block_weights_get(aw, g, tp, &m->dec_cross_names, &cc, &wc);
  const vkf_block_names *sn = &m->dec_self_names, *cn = &m->dec_cross_names;
  char an[ED_NAME_MAX], cnn[ED_NAME_MAX], mn[ED_NAME_MAX];
  NAME(an, "%s%s", np, sn->attn_norm);
  NAME(cnn, "%s%s", np, cn->attn_norm);
  NAME(mn, "%s%s", np, sn->mlp_norm);
  vkf_value mem = vkf_value_valid(lio->cross.cross_k) ? lio->cross.cross_k : memory;
  if (bc.order == VKF_BLOCK_PRE_NORM) {
    vkf_value h = vkf_nn_block_norm(g, an, &bc, x, ws.attn_norm_gamma, ws.attn_norm_beta);
    x = vkf_block_attention(g, np, sn, &bc, &ws, &lio->self, h, VKF_NO_VALUE, x);
    h = vkf_nn_block_norm(g, cnn, &cc, x, wc.attn_norm_gamma, wc.attn_norm_beta);
    x = vkf_block_attention(g, np, cn, &cc, &wc, &lio->cross, h, mem, x);
    h = vkf_nn_block_norm(g, mn, &bc, x, ws.mlp_norm_gamma, ws.mlp_norm_beta);
    return vkf_block_mlp_build(g, np, sn, &bc, &ws, h, x);
  }
  x = vkf_block_attention(g, np, sn, &bc, &ws, &lio->self, x, VKF_NO_VALUE, x);
  x = vkf_nn_block_norm(g, an, &bc, x, ws.attn_norm_gamma, ws.attn_norm_beta);
  x = vkf_block_attention(g, np, cn, &cc, &wc, &lio->cross, x, mem, x);
  x = vkf_nn_block_norm(g, cnn, &cc, x, wc.attn_norm_gamma, wc.attn_norm_beta);
  x = vkf_block_mlp_build(g, np, sn, &bc, &ws, x, x);
  return vkf_nn_block_norm(g, mn, &bc, x, ws.mlp_norm_gamma, ws.mlp_norm_beta);
}

/* The head on the decoder's output: T5's tied rescale, the projection, the final_logits_bias. */
static vkf_value head(vkf_encdec_model *m, vkf_graph *g, vkf_dtype dt, vkf_value x) {
  const vkf_hf_config *c = &m->f.config;
  vkf_arch_weights top = {m->f.ck, &m->f.owned, "", dt, m->f.quantize};
  vkf_arch_weights aw = {m->f.ck, &m->f.owned, m->prefix, dt, m->f.quantize};
  if (m->fam->kind == ENCDEC_T5 && m->lm_head == 1)
    x = vkf_scale(g, "lm_head.rescale", x, (float)(1.0 / sqrt((double)c->hidden_size)));
  vkf_matmul_options ho = {.transpose_b = 1};
  if (m->fam->kind == ENCDEC_D2L) {
    ho.bias = vkf_arch_weight(&top, g, "decoder.dense.bias");
    return vkf_matmul(g, "decoder.dense", x, vkf_arch_weight(&top, g, "decoder.dense.weight"), &ho);
  }
  vkf_value w = m->lm_head == 2 ? vkf_arch_weight(&top, g, "lm_head.weight")
                                : vkf_arch_weight(&aw, g, m->dec_embed);
  if (m->final_logits_bias) {
    /* [1, V] in the file; the GEMM's epilogue takes it as [V]. */
    int64_t v1[1] = {c->vocab_size};
    ho.bias = vkf_reshape(g, "final_logits_bias.rows",
                          vkf_arch_weight(&top, g, "final_logits_bias"), 1, v1);
  }
  return vkf_matmul(g, "lm_head", x, w, &ho);
}

/* ---- builds ---- */

void vkf_encdec_graph_release(vkf_encdec_graph *out) {
  vkf_graph_destroy(out->graph);
  free(out->self_k);
  free(out->self_v);
  free(out->cross_k);
  free(out->cross_v);
  memset(out, 0, sizeof *out);
}

static vkf_status check_options(const vkf_encdec_model *m, const vkf_encdec_build_options *o) {
  int64_t max = vkf_encdec_max_positions(m);
  const char *dir = m->f.dir;
  if (o->batch < 1 || o->src_len < 1 || (o->dtype != VKF_F32 && o->dtype != VKF_F16) ||
      (o->cache_dtype != VKF_F32 && o->cache_dtype != VKF_F16))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: batch %lld, source %lld, dtype %s, cache dtype %s not supported",
                           dir, (long long)o->batch, (long long)o->src_len,
                           vkf_dtype_name(o->dtype), vkf_dtype_name(o->cache_dtype));
  if (o->src_len > max)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: a source of %lld tokens is longer than the model's %lld positions",
                           dir, (long long)o->src_len, (long long)max);
  if (o->mode == VKF_ENCDEC_FULL && (o->tgt_len < 1 || o->tgt_len > max))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: a target of %lld tokens is outside the model's 1..%lld positions",
                           dir, (long long)o->tgt_len, (long long)max);
  if (o->mode == VKF_ENCDEC_STEP && (o->capacity < 1 || o->capacity > max))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: a decoder cache of %lld positions is outside the model's 1..%lld",
                           dir, (long long)o->capacity, (long long)max);
  if (o->logits && !m->lm_head)
    return vkf_status_make(VKF_STATUS_NOT_FOUND, "%s: %s has no language-model head (logits)", dir,
                           vkf_encdec_architecture(m));
  return VKF_OK;
}

/* Allocates the per-layer cache value arrays. */
static int alloc_caches(vkf_encdec_graph *out, int64_t layers, int self) {
  out->layers = layers;
  out->cross_k = calloc((size_t)layers, sizeof *out->cross_k);
  out->cross_v = calloc((size_t)layers, sizeof *out->cross_v);
  if (self) {
    out->self_k = calloc((size_t)layers, sizeof *out->self_k);
    out->self_v = calloc((size_t)layers, sizeof *out->self_v);
  }
  return out->cross_k && out->cross_v && (!self || (out->self_k && out->self_v));
}

static void build_encode(vkf_encdec_model *m, vkf_graph *g, const vkf_encdec_build_options *o,
                         vkf_encdec_graph *out, vkf_value enc) {
  const vkf_hf_config *c = &m->f.config;
  char nm[ED_NAME_MAX];
  vkf_arch_weights aw = {m->f.ck, &m->f.owned, m->prefix, o->dtype, m->f.quantize};
  int64_t cs[4] = {o->batch, c->decoder_heads, o->src_len, c->head_dim};
  vkf_value start = vkf_cast(g, "cross_cache.start",
                             constant(m, g, NAME(nm, "zeros.%lld", (long long)o->batch), 0.0f,
                                      o->batch),
                             VKF_I32);
  vkf_block_config cc = vkf_encdec_block_config(m, 1);
  cc.cross = 1;
  cc.mlp = VKF_BLOCK_MLP_PLAIN;
  for (int64_t l = 0; l < c->decoder_layers; l++) {
    char tp[64], np[ED_NAME_MAX];
    snprintf(tp, sizeof tp, m->fam->dec_layer_fmt, (long long)l);
    NAME(np, "%s%s", m->prefix, tp);
    out->cross_k[l] = vkf_graph_input(
        g, NAME(nm, "past_key_values.%lld.cross_key", (long long)l), o->cache_dtype, 4, cs);
    out->cross_v[l] = vkf_graph_input(
        g, NAME(nm, "past_key_values.%lld.cross_value", (long long)l), o->cache_dtype, 4, cs);
    vkf_block_weights wc;
    vkf_block_weights_get(&aw, g, tp, &m->dec_cross_names, &cc, &wc);
    vkf_value k, v;
    vkf_block_cross_kv(g, np, &m->dec_cross_names, &cc, &wc, enc, &k, &v);
    char kn[ED_NAME_MAX + 16];
    vkf_kv_write(g, NAME(kn, "%s%s.k_cache", np, m->dec_cross_names.attention), out->cross_k[l], k,
                 start);
    vkf_kv_write(g, NAME(kn, "%s%s.v_cache", np, m->dec_cross_names.attention), out->cross_v[l], v,
                 start);
  }
}

vkf_status vkf_encdec_build(vkf_encdec_model *m, const vkf_encdec_build_options *options,
                            vkf_encdec_graph *out) {
  memset(out, 0, sizeof *out);
  vkf_encdec_build_options o = options ? *options : (vkf_encdec_build_options){0};
  if (!o.batch) o.batch = 1;
  VKF_RETURN_IF_ERROR(check_options(m, &o));
  const vkf_hf_config *c = &m->f.config;
  int64_t b = o.batch, s = o.src_len, layers = c->decoder_layers;
  vkf_graph *g = NULL;
  VKF_RETURN_IF_ERROR(vkf_graph_create(vkf_encdec_architecture(m), &g));
  out->graph = g;
  if (!alloc_caches(out, layers, o.mode == VKF_ENCDEC_STEP)) {
    vkf_encdec_graph_release(out);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: cache inputs", m->f.dir);
  }
  char nm[ED_NAME_MAX];
  vkf_arch_weights aw = {m->f.ck, &m->f.owned, m->prefix, o.dtype, m->f.quantize};
  int64_t bs[2] = {b, s};
  out->attention_mask = vkf_graph_input(g, "attention_mask", VKF_I32, 2, bs);
  vkf_value mask = key_mask_bias(m, g, out->attention_mask, b, s);
  vkf_value enc = VKF_NO_VALUE;
  if (o.mode != VKF_ENCDEC_STEP) {
    out->input_ids = vkf_graph_input(g, "input_ids", VKF_I32, 2, bs);
    enc = encoder(m, g, &aw, out->input_ids, mask, b, s);
    if (o.encoder_output)
      out->encoder_last_hidden_state = vkf_arch_f32_output(g, enc, "encoder_last_hidden_state");
  }
  if (o.mode == VKF_ENCDEC_ENCODE) {
    if (o.cross_cache) build_encode(m, g, &o, out, enc);
  } else {
    int step = o.mode == VKF_ENCDEC_STEP;
    int64_t t = step ? 1 : o.tgt_len, cap = o.capacity;
    int64_t bt[2] = {b, t}, b1[1] = {b};
    out->decoder_input_ids = vkf_graph_input(g, "decoder_input_ids", VKF_I32, 2, bt);
    layer_io lio = {0};
    lio.cross.bias = mask;
    vkf_value positions = VKF_NO_VALUE;
    if (step) {
      out->positions = vkf_graph_input(g, "position_ids", VKF_I32, 1, b1);
      out->kv_len = vkf_graph_input(g, "kv_len", VKF_I32, 1, b1);
      lio.self.kv_len = out->kv_len;
      lio.self.kv = write_cache;
      lio.self.kv_user = &lio;
      lio.positions = out->positions;
      positions = vkf_reshape(g, "position_ids.rows", out->positions, 2, bt);
      if (m->fam->positions == POS_RELATIVE) {
        /* bias[b, h, 0, j] = table[buckets[b, 0, j]][h], gathered per step from the weight. */
        int64_t b1c[3] = {b, 1, cap}, bhc[4] = {b, c->decoder_heads, 1, cap};
        static const uint32_t to_bh1c[4] = {0, 3, 1, 2};
        out->buckets = vkf_graph_input(g, "relative_buckets", VKF_I32, 3, b1c);
        vkf_arch_weights top = {m->f.ck, &m->f.owned, m->prefix, VKF_F32, m->f.quantize};
        vkf_value tab = vkf_arch_weight_as(
            &top, g, NAME(nm, m->fam->rel_bias_fmt, "decoder"), VKF_F32); /* [buckets, H] */
        vkf_value rows = vkf_gather(g, "decoder.position_bias.rows", tab, out->buckets);
        rows = vkf_permute(g, "decoder.position_bias.heads", rows, to_bh1c); /* [B, H, 1, C] */
        lio.self.bias = vkf_reshape(g, "decoder.position_bias", rows, 4, bhc);
      }
    } else if (m->fam->positions == POS_RELATIVE) {
      lio.self.bias = relative_bias(m, g, 1, t, t); /* causal buckets; the kernel masks j > i */
    }
    int64_t cs[4] = {b, c->decoder_heads, step ? cap : 0, c->head_dim};
    int64_t xs[4] = {b, c->decoder_heads, s, c->head_dim};
    vkf_value x = embed(m, g, &aw, 1, out->decoder_input_ids, positions, b, t,
                        step ? cap : 0);
    for (int64_t l = 0; l < layers; l++) {
      if (step) {
        out->self_k[l] = vkf_graph_input(g, NAME(nm, "past_key_values.%lld.key", (long long)l),
                                         o.cache_dtype, 4, cs);
        out->self_v[l] = vkf_graph_input(g, NAME(nm, "past_key_values.%lld.value", (long long)l),
                                         o.cache_dtype, 4, cs);
        out->cross_k[l] = vkf_graph_input(
            g, NAME(nm, "past_key_values.%lld.cross_key", (long long)l), o.cache_dtype, 4, xs);
        out->cross_v[l] = vkf_graph_input(
            g, NAME(nm, "past_key_values.%lld.cross_value", (long long)l), o.cache_dtype, 4, xs);
        lio.self_k = out->self_k[l];
        lio.self_v = out->self_v[l];
        lio.cross.cross_k = out->cross_k[l];
        lio.cross.cross_v = out->cross_v[l];
      }
      x = decoder_layer(m, g, &aw, l, &lio, x, enc, !step);
    }
    if (m->fam->dec_final_norm) x = stack_norm(m, g, &aw, m->fam->dec_final_norm, x);
    if (o.last_hidden_state) out->last_hidden_state = vkf_arch_f32_output(g, x, "last_hidden_state");
    if (o.logits) out->logits = vkf_arch_f32_output(g, head(m, g, o.dtype, x), "logits");
  }
  vkf_status st = vkf_graph_status(g);
  if (st) {
    vkf_encdec_graph_release(out);
    return vkf_status_annotate(st, "building %s from %s: ", vkf_encdec_architecture(m), m->f.dir);
  }
  return VKF_OK;
}

void vkf_encdec_step_buckets(const vkf_encdec_model *m, int64_t position, int64_t capacity,
                             int32_t *out) {
  const vkf_hf_config *c = &m->f.config;
  if (m->fam->positions != POS_RELATIVE) return;
  for (int64_t j = 0; j < capacity; j++)
    out[j] = (int32_t)vkf_t5_relative_bucket(j - position, 0, c->relative_buckets,
                                             c->relative_max_distance);
}
