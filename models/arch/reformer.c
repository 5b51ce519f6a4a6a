/* Reformer: loading with every tensor checked, and the graph (see reformer.h). */
#include "models/arch/reformer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ir/builder.h"
#include "models/arch/arch_weights.h"
#include "models/arch/reformer_internal.h"
#include "models/arch/reformer_lsh.h"
#include "models/arch/transformer_block.h"

#define NAME VKF_NAME

/* Hugging Face's float32 mask_value of LocalSelfAttention (torch.where(mask, dots, -1e9)). Added
 * to a score of magnitude below 32 it gives exactly -1e9 in f32, so a fully masked row is uniform
 * over its keys, as Hugging Face's. */
#define RF_MASK_VALUE 1e9f

static int64_t gcd64(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b, b = t;
  }
  return a;
}

/* _get_least_common_mult_chunk_len and _get_min_chunk_len over the kinds attn_layers uses. */
static void chunk_lengths(const vkf_reformer_config *rc, int64_t *lcm, int64_t *min) {
  int local = 0, lsh = 0;
  for (int64_t l = 0; l < rc->layer_count; l++)
    rc->attn[l] == VKF_REFORMER_LSH ? (lsh = 1) : (local = 1);
  int64_t a = rc->local.chunk_length, b = rc->lsh.chunk_length;
  if (local && lsh) {
    *lcm = a / gcd64(a, b) * b; /* both <= VKF_HF_MAX_POSITIONS = 2^24: no overflow */
    *min = a < b ? a : b;
  } else {
    *lcm = *min = local ? a : b;
  }
}

int64_t vkf_reformer_padded_len(const vkf_reformer *m, int64_t n) {
  int64_t lcm, min;
  chunk_lengths(&m->rc, &lcm, &min);
  return n % lcm != 0 && n > min ? n + lcm - n % lcm : n;
}

int64_t vkf_reformer_max_positions(const vkf_reformer *m) {
  int64_t cap = m->f.config.max_position_embeddings;
  if (m->rc.axial_pos_embds) {
    int64_t grid = m->rc.axial_pos_shape[0] * m->rc.axial_pos_shape[1];
    if (grid < cap) cap = grid;
  }
  return cap;
}

int64_t vkf_reformer_max_seq(const vkf_reformer *m) {
  int64_t cap = vkf_reformer_max_positions(m);
  int64_t n = cap;
  while (n > 0 && vkf_reformer_padded_len(m, n) > cap) n--;
  return n;
}

static vkf_status expect(const vkf_reformer *m, const char *name, int64_t d0, int64_t d1) {
  return vkf_arch_expect2(m->f.ck, m->prefix, name, d0, d1);
}

static vkf_status check_tensors(vkf_reformer *m) {
  const vkf_hf_config *c = &m->f.config;
  const vkf_reformer_config *rc = &m->rc;
  int64_t d = c->hidden_size, hd = c->num_attention_heads * c->head_dim, ff = c->intermediate_size;
  VKF_RETURN_IF_ERROR(expect(m, "embeddings.word_embeddings.weight", c->vocab_size, d));
  if (rc->axial_pos_embds) {
    int64_t w0[3] = {rc->axial_pos_shape[0], 1, rc->axial_pos_embds_dim[0]};
    int64_t w1[3] = {1, rc->axial_pos_shape[1], rc->axial_pos_embds_dim[1]};
    VKF_RETURN_IF_ERROR(
        vkf_arch_expect(m->f.ck, m->prefix, "embeddings.position_embeddings.weights.0", 3, w0));
    VKF_RETURN_IF_ERROR(
        vkf_arch_expect(m->f.ck, m->prefix, "embeddings.position_embeddings.weights.1", 3, w1));
  } else {
    VKF_RETURN_IF_ERROR(expect(m, "embeddings.position_embeddings.embedding.weight",
                               c->max_position_embeddings, d));
  }
  char n[RF_NAME_MAX];
  for (int64_t l = 0; l < c->num_hidden_layers; l++) {
    static const char *const local[] = {"query", "key", "value"}, *const lsh[] = {"query_key",
                                                                                  "value"};
    int is_lsh = m->rc.attn[l] == VKF_REFORMER_LSH;
    for (int i = 0; i < (is_lsh ? 2 : 3); i++)
      VKF_RETURN_IF_ERROR(expect(m,
                                 NAME(n, "encoder.layers.%lld.attention.self_attention.%s.weight",
                                      (long long)l, is_lsh ? lsh[i] : local[i]),
                                 hd, d));
    VKF_RETURN_IF_ERROR(
        expect(m, NAME(n, "encoder.layers.%lld.attention.output.dense.weight", (long long)l), d, hd));
    static const char *const norms[] = {"attention.layer_norm", "feed_forward.layer_norm"};
    for (int i = 0; i < 2; i++) {
      VKF_RETURN_IF_ERROR(
          expect(m, NAME(n, "encoder.layers.%lld.%s.weight", (long long)l, norms[i]), d, 0));
      VKF_RETURN_IF_ERROR(
          expect(m, NAME(n, "encoder.layers.%lld.%s.bias", (long long)l, norms[i]), d, 0));
    }
    VKF_RETURN_IF_ERROR(expect(
        m, NAME(n, "encoder.layers.%lld.feed_forward.dense.dense.weight", (long long)l), ff, d));
    VKF_RETURN_IF_ERROR(expect(
        m, NAME(n, "encoder.layers.%lld.feed_forward.dense.dense.bias", (long long)l), ff, 0));
    VKF_RETURN_IF_ERROR(expect(
        m, NAME(n, "encoder.layers.%lld.feed_forward.output.dense.weight", (long long)l), d, ff));
    VKF_RETURN_IF_ERROR(expect(
        m, NAME(n, "encoder.layers.%lld.feed_forward.output.dense.bias", (long long)l), d, 0));
  }
  VKF_RETURN_IF_ERROR(expect(m, "encoder.layer_norm.weight", 2 * d, 0));
  VKF_RETURN_IF_ERROR(expect(m, "encoder.layer_norm.bias", 2 * d, 0));
  if (m->lm_head) {
    /* The head's tensors carry no "reformer." prefix. */
    VKF_RETURN_IF_ERROR(
        vkf_arch_expect2(m->f.ck, "", "lm_head.decoder.weight", c->vocab_size, 2 * d));
    m->lm_bias = vkf_arch_has(m->f.ck, "", "lm_head.decoder.bias") ? "lm_head.decoder.bias"
                                                                   : "lm_head.bias";
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(m->f.ck, "", m->lm_bias, c->vocab_size, 0));
  }
  return VKF_OK;
}

/* What config.json asks that this builder cannot run or Hugging Face refuses. */
static vkf_status check_config(const vkf_reformer *m, const char *dir) {
  const vkf_hf_config *c = &m->f.config;
  const vkf_reformer_config *rc = &m->rc;
  int lsh = 0;
  for (int64_t l = 0; l < rc->layer_count; l++) lsh |= rc->attn[l] == VKF_REFORMER_LSH;
  if (lsh && !rc->has_hash_seed)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s/config.json: LSH layers without \"hash_seed\": Hugging Face draws "
                           "their random rotations from torch's global generator, so the output "
                           "is not reproducible; set hash_seed",
                           dir);
  if (lsh && !rc->bucket_factor_count)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s/config.json: LSH layers with \"num_buckets\" null: Hugging Face "
                           "picks it from the first input's length and keeps it; set num_buckets",
                           dir);
  if (rc->axial_pos_embds && rc->axial_pos_embds_dim[0] + rc->axial_pos_embds_dim[1] != c->hidden_size)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s/config.json: axial_pos_embds_dim %lld + %lld does not sum to "
                           "hidden_size %lld",
                           dir, (long long)rc->axial_pos_embds_dim[0],
                           (long long)rc->axial_pos_embds_dim[1], (long long)c->hidden_size);
  if (m->lm_head && !strcmp(m->arch, "ReformerModelWithLMHead") &&
      (!rc->is_decoder || rc->local.chunks_after != 0 || rc->lsh.chunks_after != 0))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s/config.json: ReformerModelWithLMHead needs is_decoder true and "
                           "local_num_chunks_after / lsh_num_chunks_after 0",
                           dir);
  if (m->lm_head && !strcmp(m->arch, "ReformerForMaskedLM") && rc->is_decoder)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s/config.json: ReformerForMaskedLM needs is_decoder false", dir);
  return VKF_OK;
}

static const char *head_class(const vkf_hf_config *c) {
  for (size_t i = 0; i < c->architecture_count; i++)
    if (!strcmp(c->architectures[i], "ReformerModelWithLMHead") ||
        !strcmp(c->architectures[i], "ReformerForMaskedLM"))
      return c->architectures[i];
  return NULL;
}

vkf_status vkf_reformer_load(const char *model_dir, vkf_reformer **out) {
  *out = NULL;
  vkf_reformer *m = calloc(1, sizeof *m);
  if (!m) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "loading %s", model_dir);
  vkf_status s = vkf_arch_files_open(model_dir, &m->f);
  if (!s && strcmp(m->f.config.model_type, "reformer") != 0)
    s = vkf_status_make(VKF_STATUS_UNSUPPORTED,
                        "%s/config.json: model_type \"%s\" is not supported (reformer)", model_dir,
                        m->f.config.model_type);
  if (!s) {
    char path[4096];
    snprintf(path, sizeof path, "%s/config.json", model_dir);
    s = vkf_reformer_config_load(path, &m->rc);
  }
  if (!s) s = vkf_arch_files_open_weights(&m->f);
  if (!s) {
    m->prefix = vkf_checkpoint_find(m->f.ck, "reformer.embeddings.word_embeddings.weight")
                    ? "reformer."
                    : "";
    const char *head = head_class(&m->f.config);
    m->lm_head = head && vkf_checkpoint_find(m->f.ck, "lm_head.decoder.weight");
    m->arch = m->lm_head ? head : "ReformerModel";
    s = check_config(m, model_dir);
  }
  if (!s) s = check_tensors(m);
  if (s) {
    vkf_reformer_destroy(m);
    return s;
  }
  *out = m;
  return VKF_OK;
}

vkf_status vkf_reformer_quantize(vkf_reformer *m, const char *format) {
  return vkf_arch_files_quantize(&m->f, format);
}

const struct vkf_arch_files *vkf_reformer_files(const vkf_reformer *m) {
  return &m->f;
}

void vkf_reformer_destroy(vkf_reformer *m) {
  if (!m) return;
  vkf_arch_files_close(&m->f);
  free(m);
}

const vkf_hf_config *vkf_reformer_hf_config(const vkf_reformer *m) {
  return &m->f.config;
}
const vkf_reformer_config *vkf_reformer_config_of(const vkf_reformer *m) {
  return &m->rc;
}
const char *vkf_reformer_architecture(const vkf_reformer *m) {
  return m->arch;
}
int vkf_reformer_has_lm_head(const vkf_reformer *m) {
  return m->lm_head;
}

/* ---- graph ---- */

static void fill_value(float *out, size_t count, const void *user) {
  for (size_t i = 0; i < count; i++) out[i] = *(const float *)user;
}

/* An f32 constant filled with one value (cached per key). */
vkf_value vkf_reformer_constant(const vkf_arch_weights *w, vkf_graph *g, const char *key,
                                vkf_dtype dt, uint32_t rank, const int64_t *shape,
                                const float *value) {
  vkf_arch_weights wd = *w;
  wd.dtype = dt;
  wd.prefix = "";
  return vkf_arch_computed(&wd, g, key, dt, rank, shape, fill_value, value);
}

vkf_value vkf_reformer_layernorm(const vkf_arch_weights *w, vkf_graph *g, const char *module,
                                 vkf_value x, float eps) {
  char a[RF_NAME_MAX], b[RF_NAME_MAX], nm[RF_NAME_MAX];
  vkf_norm_options o = {.eps = eps,
                        .gamma = vkf_arch_weight(w, g, NAME(a, "%s.weight", module)),
                        .beta = vkf_arch_weight(w, g, NAME(b, "%s.bias", module))};
  return vkf_layernorm(g, NAME(nm, "%s%s", w->prefix, module), x, &o);
}

/* x·Wᵀ (+ bias) (+ residual), act applied before the residual. */
vkf_value vkf_reformer_linear(const vkf_arch_weights *w, vkf_graph *g, const char *module,
                              int bias, vkf_value x, vkf_value residual, vkf_activation act) {
  char a[RF_NAME_MAX], b[RF_NAME_MAX], nm[RF_NAME_MAX];
  vkf_matmul_options o = {.transpose_b = 1,
                          .bias = bias ? vkf_arch_weight(w, g, NAME(b, "%s.bias", module))
                                       : VKF_NO_VALUE,
                          .activation = act,
                          .residual = residual};
  return vkf_matmul(g, NAME(nm, "%s%s", w->prefix, module), x,
                    vkf_arch_matmul_weight(w, g, NAME(a, "%s.weight", module)), &o);
}

vkf_value vkf_reformer_embeddings(const vkf_reformer *m, const vkf_arch_weights *w, vkf_graph *g,
                                  vkf_value ids, int64_t start, int64_t n) {
  const vkf_reformer_config *rc = &m->rc;
  char nm[RF_NAME_MAX], key[RF_NAME_MAX];
  vkf_value x = vkf_gather(g, NAME(nm, "%sembeddings.word_embeddings", m->prefix),
                           vkf_arch_table_weight(w, g, "embeddings.word_embeddings.weight"), ids);
  vkf_value pos;
  if (rc->axial_pos_embds) {
    int64_t ax1 = rc->axial_pos_shape[1], rows = (start + n + ax1 - 1) / ax1;
    int64_t d0 = rc->axial_pos_embds_dim[0], d1 = rc->axial_pos_embds_dim[1];
    static const float zero = 0.0f;
    vkf_value w0 = vkf_slice(g, NAME(nm, "%sembeddings.position_embeddings.rows", m->prefix),
                             vkf_arch_weight(w, g, "embeddings.position_embeddings.weights.0"), 0,
                             0, rows); /* [rows, 1, d0] */
    vkf_value w1 = vkf_arch_weight(w, g, "embeddings.position_embeddings.weights.1"); /* [1, ax1, d1] */
    int64_t z0[3] = {1, ax1, d0}, z1[3] = {rows, 1, d1};
    w0 = vkf_add(g, NAME(nm, "%sembeddings.position_embeddings.grid0", m->prefix), w0,
                 vkf_reformer_constant(w, g, NAME(key, "reformer.zeros.1.%lld.%lld", (long long)ax1, (long long)d0),
                          w->dtype, 3, z0, &zero));
    w1 = vkf_add(g, NAME(nm, "%sembeddings.position_embeddings.grid1", m->prefix), w1,
                 vkf_reformer_constant(w, g, NAME(key, "reformer.zeros.%lld.1.%lld", (long long)rows, (long long)d1),
                          w->dtype, 3, z1, &zero));
    vkf_value both[2] = {w0, w1};
    pos = vkf_concat(g, NAME(nm, "%sembeddings.position_embeddings.grid", m->prefix), both, 2, 2);
    int64_t flat[2] = {rows * ax1, d0 + d1};
    pos = vkf_reshape(g, NAME(nm, "%sembeddings.position_embeddings.flat", m->prefix), pos, 2, flat);
    pos = vkf_slice(g, NAME(nm, "%sembeddings.position_embeddings", m->prefix), pos, 0, start,
                    start + n);
  } else {
    pos = vkf_slice(g, NAME(nm, "%sembeddings.position_embeddings", m->prefix),
                    vkf_arch_weight(w, g, "embeddings.position_embeddings.embedding.weight"), 0,
                    start, start + n);
  }
  return vkf_add(g, NAME(nm, "%sembeddings", m->prefix), x, pos);
}

typedef struct causal_table {
  int64_t nc, l, before, w; /* this build's chunks */
} causal_table;

/* [nc, L, W·L] over this build's windows, key ((c + i) mod nc)·L + j of query c·L + q: 1 where
 * the key is not after the query. */
static void fill_causal(float *out, size_t count, const void *user) {
  const causal_table *t = user;
  size_t k = 0;
  for (int64_t c = 0; c < t->nc; c++)
    for (int64_t q = 0; q < t->l; q++) {
      int64_t qp = c * t->l + q;
      for (int64_t i = 0; i < t->w; i++) {
        int64_t chunk = (((c + i - t->before) % t->nc) + t->nc) % t->nc;
        for (int64_t j = 0; j < t->l; j++, k++)
          if (k < count) out[k] = chunk * t->l + j <= qp ? 1.0f : 0.0f;
      }
    }
}

/* LocalSelfAttention + ReformerSelfOutput of layer `lp`, added to `residual`. x [B, N, D] (the
 * layer-normed X2), maskf f32 [B, N] of 0/1. Queries [B·nc, H, L, dh] are a view of the
 * projection; keys and values of the W chunks around each chunk are gathered by slices; the
 * attention mask and the causal rule become one additive bias [B·nc, 1, L, W·L]. */
static vkf_value local_attention(const vkf_reformer *m, const vkf_arch_weights *w, vkf_graph *g,
                                 const char *lp, vkf_value x, vkf_value maskf, vkf_value residual,
                                 int64_t b, int64_t n) {
  const vkf_hf_config *c = &m->f.config;
  const vkf_reformer_config *rc = &m->rc;
  int64_t h = c->num_attention_heads, dh = c->head_dim, hd = h * dh;
  int64_t l = rc->local.chunk_length, before = rc->local.chunks_before, after = rc->local.chunks_after;
  if (n <= l) l = n, before = after = 0; /* do_standard_self_attention */
  int64_t nc = n / l, win = (before + 1 + after) * l;
  char nm[RF_NAME_MAX], mod[RF_NAME_MAX], key[RF_NAME_MAX];
  vkf_value qkv[3];
  static const char *const names[3] = {"query", "key", "value"};
  for (int i = 0; i < 3; i++)
    qkv[i] = vkf_reformer_linear(w, g, NAME(mod, "%sattention.self_attention.%s", lp, names[i]), 0, x,
                    VKF_NO_VALUE, VKF_ACT_NONE); /* [B, N, H·dh] */
  static const uint32_t ax[4] = {0, 2, 1, 3};
  int64_t qs[4] = {b * nc, l, h, dh};
  vkf_value q = vkf_permute(g, NAME(nm, "%s%sattention.q", w->prefix, lp),
                            vkf_reshape(g, NAME(nm, "%s%sattention.q.chunks", w->prefix, lp),
                                        qkv[0], 4, qs),
                            ax);
  vkf_value kv[2];
  for (int i = 0; i < 2; i++) {
    int64_t cs[4] = {b, nc, l, hd}, ws[4] = {b * nc, win, h, dh};
    vkf_value t = vkf_reshape(g, NAME(nm, "%s%sattention.%s.chunks", w->prefix, lp, names[i + 1]),
                              qkv[i + 1], 4, cs);
    t = vkf_reformer_look_adjacent(g, NAME(nm, "%s%sattention.%s.adjacent", w->prefix, lp, names[i + 1]), t, nc,
                      before, after);
    t = vkf_reshape(g, NAME(nm, "%s%sattention.%s.windows", w->prefix, lp, names[i + 1]), t, 4, ws);
    kv[i] = vkf_permute(g, NAME(nm, "%s%sattention.%s", w->prefix, lp, names[i + 1]), t, ax);
  }
  /* Which keys each chunk may see: the mask's chunks around it [B, nc, 1, W·L], times the causal
   * table [nc, L, W·L] for decoders; then (ok - 1)·1e9. */
  int64_t ms[3] = {b, nc, l}, mw[4] = {b, nc, 1, win};
  vkf_value ok = vkf_reshape(g, NAME(nm, "%s%sattention.mask.chunks", w->prefix, lp), maskf, 3, ms);
  ok = vkf_reformer_look_adjacent(g, NAME(nm, "%s%sattention.mask.adjacent", w->prefix, lp), ok, nc, before,
                     after);
  ok = vkf_reshape(g, NAME(nm, "%s%sattention.mask.keys", w->prefix, lp), ok, 4, mw);
  int64_t rows = 1;
  if (rc->is_decoder) {
    causal_table t = {.nc = nc, .l = l, .before = before, .w = before + 1 + after};
    int64_t cs[3] = {nc, l, win};
    vkf_arch_weights w32 = *w;
    w32.dtype = VKF_F32;
    w32.prefix = "";
    vkf_value causal = vkf_arch_computed(
        &w32, g,
        NAME(key, "reformer.causal.%lld.%lld.%lld.%lld", (long long)nc, (long long)l,
             (long long)before, (long long)after),
        VKF_F32, 3, cs, fill_causal, &t);
    ok = vkf_mul(g, NAME(nm, "%s%sattention.mask.causal", w->prefix, lp), ok, causal);
    rows = l;
  }
  static const float minus = -RF_MASK_VALUE, plus_one = 1.0f;
  int64_t one[1] = {1};
  vkf_value bias = vkf_scale(g, NAME(nm, "%s%sattention.mask.scaled", w->prefix, lp), ok,
                             RF_MASK_VALUE);
  bias = vkf_add(g, NAME(nm, "%s%sattention.mask.bias", w->prefix, lp), bias,
                 vkf_reformer_constant(w, g, "reformer.mask_value", VKF_F32, 1, one, &minus));
  int64_t bs[4] = {b * nc, 1, rows, win};
  bias = vkf_reshape(g, NAME(nm, "%s%sattention.mask.bias_rows", w->prefix, lp), bias, 4, bs);
  vkf_attention_options o = {.scale = (float)(1.0 / sqrt((double)dh)), .bias = bias};
  vkf_value ctx = vkf_attention(g, NAME(nm, "%s%sattention.self_attention", w->prefix, lp), q,
                                kv[0], kv[1], &o); /* [B·nc, H, L, dh] */
  /* A query whose keys are all masked: Hugging Face's logsumexp, -1e9 + log(W·L), rounds to -1e9
   * in f32, so every key gets probability 1 and the output is the keys' sum of values; the fused
   * kernel's uniform softmax gives their mean. Scale those rows by W·L. */
  vkf_value none = vkf_add(g, NAME(nm, "%s%sattention.mask.none", w->prefix, lp),
                           vkf_reformer_constant(w, g, "reformer.one", VKF_F32, 1, one, &plus_one),
                           vkf_scale(g, NAME(nm, "%s%sattention.mask.any", w->prefix, lp),
                                     vkf_reduce(g, NAME(nm, "%s%sattention.mask.max", w->prefix, lp),
                                                ok, VKF_REDUCE_MAX, 3),
                                     -1.0f)); /* [B, nc, rows, 1]: 1 when no key is visible */
  vkf_value factor = vkf_add(g, NAME(nm, "%s%sattention.mask.sum_factor", w->prefix, lp),
                             vkf_reformer_constant(w, g, "reformer.one", VKF_F32, 1, one, &plus_one),
                             vkf_scale(g, NAME(nm, "%s%sattention.mask.extra", w->prefix, lp), none,
                                       (float)(win - 1)));
  int64_t fs[4] = {b * nc, 1, rows, 1};
  factor = vkf_reshape(g, NAME(nm, "%s%sattention.mask.factor", w->prefix, lp), factor, 4, fs);
  if (w->dtype != VKF_F32)
    factor = vkf_cast(g, NAME(nm, "%s%sattention.mask.factor_cast", w->prefix, lp), factor, w->dtype);
  ctx = vkf_mul(g, NAME(nm, "%s%sattention.summed", w->prefix, lp), ctx, factor);
  int64_t merged[3] = {b, n, hd};
  ctx = vkf_permute(g, NAME(nm, "%s%sattention.merge", w->prefix, lp), ctx, ax);
  ctx = vkf_reshape(g, NAME(nm, "%s%sattention.merged", w->prefix, lp), ctx, 3, merged);
  return vkf_reformer_linear(w, g, NAME(mod, "%sattention.output.dense", lp), 0, ctx, residual, VKF_ACT_NONE);
}

void vkf_reformer_lsh_params(const vkf_reformer *m, vkf_reformer_lsh *p) {
  const vkf_hf_config *c = &m->f.config;
  const vkf_reformer_config *rc = &m->rc;
  *p = (vkf_reformer_lsh){.heads = c->num_attention_heads,
                          .head_dim = c->head_dim,
                          .chunk = rc->lsh.chunk_length,
                          .before = rc->lsh.chunks_before,
                          .after = rc->lsh.chunks_after,
                          .hashes = rc->num_hashes,
                          .factor_count = rc->bucket_factor_count,
                          .factors = rc->bucket_factors,
                          .seed = (uint64_t)rc->hash_seed,
                          .causal = rc->is_decoder};
}

/* LSHSelfAttention + ReformerSelfOutput of layer `lp` (reformer_lsh.h), added to `residual`; the
 * hashing, sorting and masks run in f32 whatever the build's dtype. *buckets: the layer's buckets
 * (reformer_lsh.h). */
static vkf_value lsh_attention(const vkf_reformer *m, const vkf_arch_weights *w, vkf_graph *g,
                               const char *lp, vkf_value x, vkf_value maskf, vkf_value residual,
                               int64_t b, int64_t n, vkf_value *buckets) {
  char nm[RF_NAME_MAX], mod[RF_NAME_MAX];
  vkf_value qk = vkf_reformer_linear(w, g, NAME(mod, "%sattention.self_attention.query_key", lp),
                                     0, x, VKF_NO_VALUE, VKF_ACT_NONE);
  vkf_value v = vkf_reformer_linear(w, g, NAME(mod, "%sattention.self_attention.value", lp), 0, x,
                                    VKF_NO_VALUE, VKF_ACT_NONE);
  if (w->dtype != VKF_F32) {
    qk = vkf_cast(g, NAME(nm, "%s%sattention.qk.f32", w->prefix, lp), qk, VKF_F32);
    v = vkf_cast(g, NAME(nm, "%s%sattention.v.f32", w->prefix, lp), v, VKF_F32);
  }
  vkf_reformer_lsh p;
  vkf_reformer_lsh_params(m, &p);
  vkf_value ctx = vkf_reformer_lsh_attention(
      g, w, NAME(nm, "%s%sattention.self_attention", w->prefix, lp), qk, v, maskf, b, n, &p,
      buckets);
  if (w->dtype != VKF_F32) ctx = vkf_cast(g, NAME(nm, "%s%sattention.ctx", w->prefix, lp), ctx, w->dtype);
  return vkf_reformer_linear(w, g, NAME(mod, "%sattention.output.dense", lp), 0, ctx, residual,
                             VKF_ACT_NONE);
}

vkf_value vkf_reformer_feed_forward(const vkf_reformer *m, const vkf_arch_weights *w, vkf_graph *g,
                                    const char *lp, vkf_value a, vkf_value h) {
  const vkf_hf_config *c = &m->f.config;
  char mod[RF_NAME_MAX];
  vkf_value y = vkf_reformer_layernorm(w, g, NAME(mod, "%sfeed_forward.layer_norm", lp), a,
                                       (float)c->layer_norm_eps);
  /* The feed-forward (dense, act, output) is the block builder's plain MLP, on the residual h. */
  static const vkf_block_names names = {.mlp_up = "feed_forward.dense.dense",
                                        .mlp_down = "feed_forward.output.dense"};
  const vkf_block_config bc = {.mlp = VKF_BLOCK_MLP_PLAIN,
                               .act = vkf_block_activation(c->hidden_act)};
  char t[RF_NAME_MAX], np[RF_NAME_MAX];
  vkf_block_weights fw = {0};
  fw.up.bias = vkf_arch_weight(w, g, NAME(t, "%sfeed_forward.dense.dense.bias", lp));
  fw.up.weight = vkf_arch_matmul_weight(w, g, NAME(t, "%sfeed_forward.dense.dense.weight", lp));
  fw.down.bias = vkf_arch_weight(w, g, NAME(t, "%sfeed_forward.output.dense.bias", lp));
  fw.down.weight = vkf_arch_matmul_weight(w, g, NAME(t, "%sfeed_forward.output.dense.weight", lp));
  return vkf_block_mlp_build(g, NAME(np, "%s%s", w->prefix, lp), &names, &bc, &fw, y, h);
}

vkf_status vkf_reformer_head(const vkf_reformer *m, const vkf_arch_weights *w, vkf_graph *g,
                             vkf_value a, vkf_value h, int64_t cut, vkf_value *logits,
                             vkf_value *last_hidden_state) {
  char key[RF_NAME_MAX];
  vkf_value halves[2] = {a, h};
  vkf_value y = vkf_concat(g, NAME(key, "%sencoder.halves", m->prefix), halves, 2, 2);
  y = vkf_reformer_layernorm(w, g, "encoder.layer_norm", y, (float)m->f.config.layer_norm_eps);
  if (cut) y = vkf_slice(g, NAME(key, "%sencoder.unpadded", m->prefix), y, 1, 0, cut);
  if (m->lm_head) {
    vkf_arch_weights hw = *w;
    hw.prefix = "";
    vkf_matmul_options o = {.transpose_b = 1, .bias = vkf_arch_weight(&hw, g, m->lm_bias)};
    vkf_value l = vkf_matmul(g, "lm_head.decoder", y,
                             vkf_arch_matmul_weight(&hw, g, "lm_head.decoder.weight"), &o);
    *logits = vkf_arch_f32_output(g, l, "logits");
  } else {
    *last_hidden_state = vkf_arch_f32_output(g, y, "last_hidden_state");
  }
  return vkf_graph_status(g);
}

vkf_status vkf_reformer_build(vkf_reformer *m, int64_t batch, int64_t n, vkf_dtype dt,
                              int with_cache, vkf_reformer_graph *out) {
  memset(out, 0, sizeof *out);
  const vkf_hf_config *c = &m->f.config;
  int64_t b = batch ? batch : 1, max = vkf_reformer_max_seq(m);
  if (n < 1 || n > max)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: a sequence of %lld tokens is outside [1, %lld] (padded to the chunk "
                           "lengths' common multiple it must fit max_position_embeddings and "
                           "axial_pos_shape)",
                           m->f.dir, (long long)n, (long long)max);
  if (b < 1 || (dt != VKF_F32 && dt != VKF_F16) || (with_cache && b != 1))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: batch %lld in %s%s is not supported (f32 or f16)", m->f.dir,
                           (long long)b, vkf_dtype_name(dt), with_cache ? " with the cache (batch 1)" : "");
  int64_t np = vkf_reformer_padded_len(m, n), pad = np - n;
  vkf_graph *g = NULL;
  VKF_RETURN_IF_ERROR(vkf_graph_create(m->arch, &g));
  vkf_arch_weights w = {m->f.ck, &m->f.owned, m->prefix, dt, m->f.quantize};
  int64_t bn[2] = {b, n};
  vkf_value ids = vkf_graph_input(g, "input_ids", VKF_I32, 2, bn);
  vkf_value mask = vkf_graph_input(g, "attention_mask", VKF_I32, 2, bn);
  vkf_value ids_p = ids, maskf = vkf_cast(g, "attention_mask.f32", mask, VKF_F32);
  char key[RF_NAME_MAX];
  if (pad) {
    /* _pad_to_mult_of_chunk_length: pad_token_id ids, masked. */
    int64_t bp[2] = {b, pad};
    float pad_id = (float)(c->pad_token_id < 0 ? 0 : c->pad_token_id);
    static const float zero = 0.0f;
    vkf_value pads = vkf_cast(
        g, "input_ids.padding",
        vkf_reformer_constant(&w, g, NAME(key, "reformer.pad_ids.%lld.%lld", (long long)b, (long long)pad),
                 VKF_F32, 2, bp, &pad_id),
        VKF_I32);
    vkf_value two[2] = {ids, pads};
    ids_p = vkf_concat(g, "input_ids.padded", two, 2, 1);
    vkf_value mtwo[2] = {maskf,
                         vkf_reformer_constant(&w, g,
                                  NAME(key, "reformer.pad_mask.%lld.%lld", (long long)b,
                                       (long long)pad),
                                  VKF_F32, 2, bp, &zero)};
    maskf = vkf_concat(g, "attention_mask.padded", mtwo, 2, 1);
  }
  vkf_value x = vkf_reformer_embeddings(m, &w, g, ids_p, 0, np);
  vkf_value a = x, h = x; /* the reversible halves: X1 = X2 = embeddings */
  /* ReformerLayer: a = a + Attention(LN(h)); h = h + FeedForward(LN(a)). */
  for (int64_t l = 0; l < c->num_hidden_layers; l++) {
    char lp[64], mod[RF_NAME_MAX];
    NAME(lp, "encoder.layers.%lld.", (long long)l);
    vkf_value xl = vkf_reformer_layernorm(&w, g, NAME(mod, "%sattention.layer_norm", lp), h,
                                          (float)c->layer_norm_eps);
    vkf_value buckets = VKF_NO_VALUE;
    if (m->rc.attn[l] == VKF_REFORMER_LSH)
      a = lsh_attention(m, &w, g, lp, xl, maskf, a, b, np, &buckets);
    else
      a = local_attention(m, &w, g, lp, xl, maskf, a, b, np);
    if (with_cache) {
      /* What Hugging Face's generation caches: the layer-normed states and the LSH buckets. */
      out->cache_states[l] = vkf_arch_f32_output(g, xl, NAME(mod, "cache.%lld.states", (long long)l));
      if (vkf_value_valid(buckets))
        out->cache_buckets[l] = vkf_graph_output(g, buckets, NAME(mod, "cache.%lld.buckets", (long long)l));
    }
    h = vkf_reformer_feed_forward(m, &w, g, lp, a, h);
  }
  vkf_status st = vkf_reformer_head(m, &w, g, a, h, pad ? n : 0, &out->logits,
                                    &out->last_hidden_state);
  if (st) {
    vkf_graph_destroy(g);
    memset(out, 0, sizeof *out);
    return vkf_status_annotate(st, "building %s from %s: ", m->arch, m->f.dir);
  }
  out->graph = g;
  out->input_ids = ids;
  out->attention_mask = mask;
  out->padded_len = np;
  return VKF_OK;
}
