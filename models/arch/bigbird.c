/* BigBird checkpoints: loading (config, every tensor's presence and shape) and BigBirdModel's
 * graph: embeddings, post-norm blocks (transformer_block.h) whose attention is block-sparse
 * (bigbird_layout.h) or dense, the pooler. */
#include "models/arch/bigbird.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/base/log.h"
#include "graph/ir/builder.h"
#include "models/arch/arch_weights.h"
#include "models/arch/bigbird_layout.h"
#include "models/arch/nn_helpers.h"
#include "models/arch/transformer_block.h"
#include "models/formats/checkpoint.h"
#include "models/formats/weight_cache.h"

#define NAME VKF_NAME

/* BigBirdBlockSparseAttention's attn_mask_penalty: added to the scores of padded keys. */
#define BIGBIRD_MASK_PENALTY 10000.0f

/* The layout tables of one padded length: graph constants point into them. */
typedef struct layout_entry {
  struct layout_entry *next;
  uint32_t blocks;
  vkf_sparse_layout layout;
} layout_entry;

struct vkf_bigbird_model {
  vkf_arch_files f;
  const char *prefix; /* "bert." (task-head checkpoints) or "" (BigBirdModel) */
  int has_pooler;
  vkf_bigbird_head head;
  layout_entry *layouts;
};

/* BigBirdLayer: BERT's layout and names; Q/K/V biases only with use_bias. */
#define BIGBIRD_BLOCK_NAMES(QB, KB, VB)                                                            \
  {                                                                                                \
    .attn_norm = "attention.output.LayerNorm", .attention = "attention.self",                      \
    .attn_out = "attention.output", .mlp_norm = "output.LayerNorm", .mlp_up = "intermediate",      \
    .mlp_down = "output", .q_weight = "attention.self.query.weight",                               \
    .k_weight = "attention.self.key.weight", .v_weight = "attention.self.value.weight",            \
    .q_bias = QB, .k_bias = KB, .v_bias = VB, .out_weight = "attention.output.dense.weight",       \
    .out_bias = "attention.output.dense.bias",                                                     \
    .attn_norm_weight = "attention.output.LayerNorm.weight",                                       \
    .attn_norm_bias = "attention.output.LayerNorm.bias", .up_weight = "intermediate.dense.weight", \
    .up_bias = "intermediate.dense.bias", .down_weight = "output.dense.weight",                    \
    .down_bias = "output.dense.bias", .mlp_norm_weight = "output.LayerNorm.weight",                \
    .mlp_norm_bias = "output.LayerNorm.bias",                                                      \
  }
static const vkf_block_names names_bias = BIGBIRD_BLOCK_NAMES(
    "attention.self.query.bias", "attention.self.key.bias", "attention.self.value.bias");
static const vkf_block_names names_no_bias = BIGBIRD_BLOCK_NAMES(NULL, NULL, NULL);

static const vkf_block_names *block_names(const vkf_hf_config *c) {
  return c->qkv_bias ? &names_bias : &names_no_bias;
}

static vkf_block_config block_config(const vkf_hf_config *c) {
  return (vkf_block_config){
      .hidden = c->hidden_size,
      .heads = c->num_attention_heads,
      .head_dim = c->head_dim,
      .intermediate = c->intermediate_size,
      .norm = VKF_BLOCK_LAYERNORM,
      .order = VKF_BLOCK_POST_NORM,
      .norm_eps = (float)c->layer_norm_eps,
      .mlp = VKF_BLOCK_MLP_PLAIN,
      .act = vkf_block_activation(c->hidden_act),
  };
}

/* ---- loading ---- */

static vkf_status expect(const vkf_bigbird_model *m, const char *suffix, int64_t d0, int64_t d1) {
  return vkf_arch_expect2(m->f.ck, m->prefix, suffix, d0, d1);
}

static vkf_status check_tensors(void *model) {
  vkf_bigbird_model *m = model;
  m->prefix = vkf_checkpoint_find(m->f.ck, "bert.embeddings.word_embeddings.weight") ? "bert." : "";
  const vkf_hf_config *c = &m->f.config;
  int64_t d = c->hidden_size;
  VKF_RETURN_IF_ERROR(expect(m, "embeddings.word_embeddings.weight", c->vocab_size, d));
  VKF_RETURN_IF_ERROR(
      expect(m, "embeddings.position_embeddings.weight", c->max_position_embeddings, d));
  VKF_RETURN_IF_ERROR(expect(m, "embeddings.token_type_embeddings.weight", c->type_vocab_size, d));
  VKF_RETURN_IF_ERROR(expect(m, "embeddings.LayerNorm.weight", d, 0));
  VKF_RETURN_IF_ERROR(expect(m, "embeddings.LayerNorm.bias", d, 0));
  vkf_block_config bc = block_config(c);
  for (int64_t l = 0; l < c->num_hidden_layers; l++) {
    char lp[VKF_ARCH_NAME_MAX];
    NAME(lp, "%sencoder.layer.%lld.", m->prefix, (long long)l);
    VKF_RETURN_IF_ERROR(vkf_block_expect(m->f.ck, lp, block_names(c), &bc));
  }
  m->has_pooler = vkf_arch_has(m->f.ck, m->prefix, "pooler.weight");
  if (m->has_pooler) {
    VKF_RETURN_IF_ERROR(expect(m, "pooler.weight", d, d));
    VKF_RETURN_IF_ERROR(expect(m, "pooler.bias", d, 0));
  }
  m->head = vkf_bigbird_head_find(m->f.ck);
  return vkf_bigbird_head_expect(m->f.ck, m->head, c);
}

static const char *const k_model_types[] = {"big_bird", NULL};

static void free_layouts(void *model) {
  vkf_bigbird_model *m = model;
  while (m->layouts) {
    layout_entry *e = m->layouts;
    m->layouts = e->next;
    vkf_sparse_layout_free(&e->layout);
    free(e);
  }
}

const vkf_arch_loader vkf_bigbird_loader = {.size = sizeof(vkf_bigbird_model),
                                            .files_at = offsetof(vkf_bigbird_model, f),
                                            .model_types = k_model_types,
                                            .refusal = "is not supported (big_bird)",
                                            .check = check_tensors,
                                            .release = free_layouts};

vkf_status vkf_bigbird_load(const char *model_dir, vkf_bigbird_model **out_model) {
  void *m = NULL;
  vkf_status s = vkf_arch_load(&vkf_bigbird_loader, model_dir, &m);
  *out_model = m;
  return s;
}

void vkf_bigbird_destroy(vkf_bigbird_model *m) {
  vkf_arch_unload(&vkf_bigbird_loader, m);
}

const vkf_hf_config *vkf_bigbird_config(const vkf_bigbird_model *m) {
  return &m->f.config;
}
int vkf_bigbird_has_pooler(const vkf_bigbird_model *m) {
  return m->has_pooler;
}
vkf_bigbird_head vkf_bigbird_head_of(const vkf_bigbird_model *m) {
  return m->head;
}
const char *vkf_bigbird_architecture(const vkf_bigbird_model *m) {
  return vkf_bigbird_head_architecture(m->head);
}

int vkf_bigbird_runs_sparse(const vkf_bigbird_model *m, int64_t seq_len) {
  const vkf_hf_config *c = &m->f.config;
  /* Both factors are bounded by the config parser, so the product fits. */
  return c->block_sparse && seq_len > (5 + 2 * c->num_random_blocks) * c->block_size;
}

/* ---- graph ---- */

static vkf_arch_weights weights_of(vkf_bigbird_model *m, int prefixed, vkf_dtype dt) {
  return (vkf_arch_weights){m->f.ck, &m->f.owned, prefixed ? m->prefix : "", dt, m->f.quantize};
}

static vkf_value weight(vkf_bigbird_model *m, vkf_graph *g, const char *suffix, vkf_dtype dt) {
  vkf_arch_weights w = weights_of(m, 1, dt);
  return vkf_arch_weight(&w, g, suffix);
}

/* A constant [rank, shape] of one value (cached under key). */
static vkf_value constant(vkf_bigbird_model *m, vkf_graph *g, const char *key, vkf_dtype dt,
                          uint32_t rank, const int64_t *shape, const float *value) {
  vkf_arch_weights w = weights_of(m, 0, dt);
  return vkf_nn_filled(&w, g, key, dt, rank, shape, *value);
}

typedef struct table_fill {
  const vkf_bigbird_model *m;
  vkf_status status;
} table_fill;

/* position_embeddings[0:n]. */
static void fill_positions(float *out, size_t count, const void *user) {
  table_fill *f = (table_fill *)user;
  char name[VKF_ARCH_NAME_MAX];
  float *pos = NULL;
  f->status = vkf_weight_read_f32(
      f->m->f.ck, NAME(name, "%sembeddings.position_embeddings.weight", f->m->prefix), &pos, NULL);
  for (size_t i = 0; i < count; i++) out[i] = f->status ? 0.0f : pos[i];
  free(pos);
}

/* What _pad_to_block_size appends before the positions: word_embeddings[pad_token_id] (rescaled
 * like every token) + token_type_embeddings[0], for each padded position. */
static void fill_pad_rows(float *out, size_t count, const void *user) {
  table_fill *f = (table_fill *)user;
  const vkf_hf_config *c = &f->m->f.config;
  size_t d = (size_t)c->hidden_size;
  char name[VKF_ARCH_NAME_MAX];
  float *word = NULL, *type = NULL;
  f->status = vkf_weight_read_f32(
      f->m->f.ck, NAME(name, "%sembeddings.word_embeddings.weight", f->m->prefix), &word, NULL);
  if (!f->status)
    f->status = vkf_weight_read_f32(
        f->m->f.ck, NAME(name, "%sembeddings.token_type_embeddings.weight", f->m->prefix), &type,
        NULL);
  float scale = c->rescale_embeddings ? (float)sqrt((double)c->hidden_size) : 1.0f;
  for (size_t i = 0; i < count; i++) {
    size_t k = i % d;
    out[i] = f->status ? 0.0f : word[(size_t)c->pad_token_id * d + k] * scale + type[k];
  }
  free(word);
  free(type);
}

static vkf_value computed(vkf_bigbird_model *m, vkf_graph *g, const char *key, vkf_dtype dt,
                          uint32_t rank, const int64_t *shape,
                          void (*fill)(float *, size_t, const void *)) {
  table_fill f = {m, VKF_OK};
  vkf_arch_weights w = weights_of(m, 0, dt);
  vkf_value v = vkf_arch_computed(&w, g, key, dt, rank, shape, fill, &f);
  if (f.status) vkf_graph_set_error(g, f.status);
  return v;
}

/* The layout of `blocks` query blocks, built once per padded length and kept by the model. */
static const vkf_sparse_layout *layout_for(vkf_bigbird_model *m, vkf_graph *g, uint32_t blocks) {
  for (layout_entry *e = m->layouts; e; e = e->next)
    if (e->blocks == blocks) return &e->layout;
  layout_entry *e = calloc(1, sizeof *e);
  if (!e) {
    vkf_graph_set_error(g, vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "BigBird layout"));
    return NULL;
  }
  const vkf_hf_config *c = &m->f.config;
  vkf_status s = vkf_bigbird_layout(blocks, (uint32_t)c->num_random_blocks, (uint32_t)c->block_size,
                                    &e->layout);
  if (s) {
    free(e);
    vkf_graph_set_error(g, s);
    return NULL;
  }
  e->blocks = blocks;
  e->next = m->layouts;
  m->layouts = e;
  return &e->layout;
}

/* What the block-sparse attention of every layer reads. */
typedef struct sparse_io {
  vkf_bigbird_model *m;
  vkf_value rows, cols; /* the layout as i32 constants */
  vkf_value key_bias;   /* f32 [B, n + r·bs]: -10000 at padded keys, copies of block 0 appended */
  vkf_value from_mask;  /* [B, 1, n, 1] in the run dtype */
} sparse_io;

/* x (sequence along `axis`) with r copies of its first block appended: the copies double up to
 * r (a concat takes at most VKF_MAX_NODE_INPUTS values), then join x. */
static vkf_value with_block0_copies(vkf_graph *g, const char *name, vkf_value x, int64_t r,
                                    int64_t bs, uint32_t axis) {
  if (r == 0) return x;
  char nm[VKF_ARCH_NAME_MAX + 32];
  vkf_value rep = vkf_slice(g, NAME(nm, "%s.block0", name), x, axis, 0, bs);
  for (int64_t have = 1; have < r;) {
    int64_t take = have < r - have ? have : r - have;
    vkf_value parts[2] = {rep, vkf_slice(g, NAME(nm, "%s.block0_x%lld", name, (long long)have), rep,
                                         axis, 0, take * bs)};
    have += take;
    rep = vkf_concat(g, NAME(nm, "%s.block0_copies%lld", name, (long long)have), parts, 2, axis);
  }
  vkf_value parts[2] = {x, rep};
  return vkf_concat(g, name, parts, 2, axis);
}

static vkf_value sparse_attend(vkf_graph *g, const char *name, vkf_value q, vkf_value k,
                               vkf_value v, const vkf_attention_options *ao, void *user) {
  (void)ao; /* its own scale, block mask and padding (sparse_io) */
  sparse_io *io = user;
  const vkf_hf_config *c = &io->m->f.config;
  char nm[VKF_ARCH_NAME_MAX + 32];
  k = with_block0_copies(g, NAME(nm, "%s.k_random", name), k, c->num_random_blocks, c->block_size,
                         2);
  v = with_block0_copies(g, NAME(nm, "%s.v_random", name), v, c->num_random_blocks, c->block_size,
                         2);
  vkf_sparse_attention_options o = {
      .scale = 1.0f / sqrtf((float)c->head_dim),
      .block_q = (uint32_t)c->block_size,
      .block_k = (uint32_t)c->block_size,
      .key_bias = io->key_bias,
  };
  vkf_value a = vkf_sparse_attention(g, NAME(nm, "%s.sparse", name), q, k, v, io->rows, io->cols,
                                     &o); /* [B, H, n, Dh] */
  /* context_layer * from_mask: masked queries give zeros, as in HF. */
  return vkf_mul(g, name, a, io->from_mask);
}

/* The layout constants, the key bias and the query mask of a block-sparse build over n tokens.
 * mask_f f32 [B, n] (padding included). */
static void sparse_setup(vkf_bigbird_model *m, vkf_graph *g, vkf_value mask_f, int64_t batch,
                         int64_t n, vkf_dtype dt, sparse_io *io) {
  const vkf_hf_config *c = &m->f.config;
  io->m = m;
  const vkf_sparse_layout *l = layout_for(m, g, (uint32_t)(n / c->block_size));
  if (!l) return;
  int64_t rs[2] = {1, (int64_t)l->q_blocks + 1}, cs[3] = {1, l->entries, 2};
  io->rows = vkf_graph_constant(g, "bigbird.layout.rows", VKF_I32, 2, rs, l->rows);
  io->cols = vkf_graph_constant(g, "bigbird.layout.cols", VKF_I32, 3, cs, l->cols);
  /* (1 - mask) · -10000, as mask · 10000 - 10000: 0 kept, -10000 padded. */
  const float minus = -BIGBIRD_MASK_PENALTY;
  int64_t one[1] = {1};
  vkf_value lowest = constant(m, g, "bigbird.mask_penalty", VKF_F32, 1, one, &minus);
  vkf_value bias = vkf_scale(g, "attention_mask.scaled", mask_f, BIGBIRD_MASK_PENALTY);
  bias = vkf_add(g, "attention_mask.key_bias", bias, lowest);
  io->key_bias = with_block0_copies(g, "attention_mask.key_bias_random", bias, c->num_random_blocks,
                                    c->block_size, 1);
  int64_t fs[4] = {batch, 1, n, 1};
  vkf_value from = vkf_reshape(g, "attention_mask.from_mask", mask_f, 4, fs);
  io->from_mask = dt == VKF_F32 ? from : vkf_cast(g, "attention_mask.from_mask_cast", from, dt);
}

/* BigBirdEmbeddings before the LayerNorm, padded to n tokens: (word · scale + type) + position. */
static vkf_value embeddings(vkf_bigbird_model *m, vkf_graph *g, vkf_value ids, vkf_value types,
                            int64_t batch, int64_t t, int64_t n, vkf_dtype dt) {
  const vkf_hf_config *c = &m->f.config;
  char nm[VKF_ARCH_NAME_MAX], key[VKF_ARCH_NAME_MAX];
  vkf_value x = vkf_gather(g, NAME(nm, "%sembeddings.word_embeddings", m->prefix),
                           weight(m, g, "embeddings.word_embeddings.weight", dt), ids);
  if (c->rescale_embeddings)
    x = vkf_scale(g, NAME(nm, "%sembeddings.rescale", m->prefix), x,
                  (float)sqrt((double)c->hidden_size));
  x = vkf_add(g, NAME(nm, "%sembeddings.token_type", m->prefix), x,
              vkf_gather(g, NAME(nm, "%sembeddings.token_type_embeddings", m->prefix),
                         weight(m, g, "embeddings.token_type_embeddings.weight", dt), types));
  if (n > t) {
    int64_t ps[3] = {batch, n - t, c->hidden_size};
    vkf_value parts[2] = {x, computed(m, g,
                                      NAME(key, "%sembeddings.pad_rows.%lld.%lld", m->prefix,
                                           (long long)batch, (long long)(n - t)),
                                      dt, 3, ps, fill_pad_rows)};
    x = vkf_concat(g, NAME(nm, "%sembeddings.padded", m->prefix), parts, 2, 1);
  }
  int64_t pshape[2] = {n, c->hidden_size};
  vkf_value pos = computed(m, g, NAME(key, "%sembeddings.positions.%lld", m->prefix, (long long)n),
                           dt, 2, pshape, fill_positions);
  return vkf_add(g, NAME(nm, "%sembeddings", m->prefix), x, pos);
}

/* pooler: tanh(Linear(first token)). x [B, n, D] -> [B, D]. */
static vkf_value pooler(vkf_bigbird_model *m, vkf_graph *g, vkf_value x, int64_t batch,
                        vkf_dtype dt) {
  char nm[VKF_ARCH_NAME_MAX];
  vkf_value cls =
      vkf_nn_first_token(g, NAME(nm, "%spooler", m->prefix), x, batch, m->f.config.hidden_size);
  vkf_matmul_options o = {.transpose_b = 1, .bias = weight(m, g, "pooler.bias", dt)};
  vkf_value p = vkf_matmul(g, NAME(nm, "%spooler.dense", m->prefix), cls,
                           weight(m, g, "pooler.weight", dt), &o);
  return vkf_tanh(g, NAME(nm, "%spooler", m->prefix), p);
}

vkf_status vkf_bigbird_build(vkf_bigbird_model *m, const vkf_bigbird_build_options *options,
                             vkf_bigbird_graph *out) {
  memset(out, 0, sizeof *out);
  vkf_bigbird_build_options o = options ? *options : (vkf_bigbird_build_options){0};
  const vkf_hf_config *c = &m->f.config;
  int64_t batch = o.batch ? o.batch : 1, t = o.seq_len;
  uint32_t want = o.outputs ? o.outputs : VKF_BIGBIRD_OUT_LAST_HIDDEN_STATE;
  vkf_dtype dt = o.dtype;
  if (batch < 0 || t < 1 || t > c->max_position_embeddings || (dt != VKF_F32 && dt != VKF_F16))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: batch %lld, seq_len %lld (max %lld), dtype %s not supported",
                           m->f.dir, (long long)batch, (long long)t,
                           (long long)c->max_position_embeddings, vkf_dtype_name(dt));
  if ((want & VKF_BIGBIRD_OUT_POOLER_OUTPUT) && !m->has_pooler)
    return vkf_status_make(VKF_STATUS_NOT_FOUND, "%s: the checkpoint has no pooler (pooler_output)",
                           m->f.dir);
  if ((want & VKF_BIGBIRD_OUT_LOGITS) && m->head == VKF_BIGBIRD_HEAD_NONE)
    return vkf_status_make(VKF_STATUS_NOT_FOUND, "%s: the checkpoint has no task head (logits)",
                           m->f.dir);
  int sparse = vkf_bigbird_runs_sparse(m, t);
  /* Hugging Face warns here; at info level, since every build (batch-split probes included) would
   * repeat it. */
  if (c->block_sparse && !sparse)
    vkf_log(VKF_LOG_INFO,
            "%s: attention type 'block_sparse' is not possible for %lld tokens <= %lld "
            "((5 + 2 * num_random_blocks) * block_size); running 'original_full'",
            m->f.dir, (long long)t, (long long)((5 + 2 * c->num_random_blocks) * c->block_size));
  int64_t bs = c->block_size, n = sparse ? (t + bs - 1) / bs * bs : t;
  if (n > c->max_position_embeddings)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: %lld tokens padded to %lld (a multiple of block_size %lld) exceed "
                           "max_position_embeddings %lld",
                           m->f.dir, (long long)t, (long long)n, (long long)bs,
                           (long long)c->max_position_embeddings);
  if (n > t && c->pad_token_id < 0)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: %lld tokens must be padded to a multiple of block_size %lld, but "
                           "config.json has no pad_token_id",
                           m->f.dir, (long long)t, (long long)bs);
  vkf_graph *g = NULL;
  VKF_RETURN_IF_ERROR(vkf_graph_create(vkf_bigbird_architecture(m), &g));
  char nm[VKF_ARCH_NAME_MAX];

  int64_t bt[2] = {batch, t};
  vkf_value ids = vkf_graph_input(g, "input_ids", VKF_I32, 2, bt);
  vkf_value mask = vkf_graph_input(g, "attention_mask", VKF_I32, 2, bt);
  vkf_value types = vkf_graph_input(g, "token_type_ids", VKF_I32, 2, bt);
  vkf_value mask_f = vkf_cast(g, "attention_mask.f32", mask, VKF_F32);
  if (n > t) { /* _pad_to_block_size: the padding is masked */
    const float zero = 0.0f;
    int64_t zs[2] = {batch, n - t};
    vkf_value parts[2] = {mask_f, constant(m, g,
                                           NAME(nm, "attention_mask.padding.%lld.%lld",
                                                (long long)batch, (long long)(n - t)),
                                           VKF_F32, 2, zs, &zero)};
    mask_f = vkf_concat(g, "attention_mask.padded", parts, 2, 1);
  }
  vkf_block_io io = {0};
  sparse_io sio = {0};
  if (sparse) {
    sparse_setup(m, g, mask_f, batch, n, dt, &sio);
    io.attend = sparse_attend;
    io.attend_user = &sio;
  } else { /* original_full's extended mask */
    vkf_arch_weights w32 = weights_of(m, 0, VKF_F32);
    io.bias = vkf_nn_mask_bias(&w32, g, mask_f, batch, n);
  }

  vkf_value x = embeddings(m, g, ids, types, batch, t, n, dt);
  vkf_arch_weights pw = weights_of(m, 1, dt);
  x = vkf_nn_layernorm(&pw, g, "embeddings.LayerNorm", x, (float)c->layer_norm_eps);
  vkf_block_config bc = block_config(c);
  vkf_arch_weights aw = weights_of(m, 1, dt);
  for (int64_t l = 0; l < c->num_hidden_layers; l++) {
    char tp[64], np[VKF_ARCH_NAME_MAX];
    NAME(tp, "encoder.layer.%lld.", (long long)l);
    NAME(np, "%s%s", m->prefix, tp);
    vkf_block_weights w;
    vkf_block_weights_get(&aw, g, tp, block_names(c), &bc, &w);
    x = vkf_block_build(g, np, block_names(c), &bc, &w, &io, x);
  }

  vkf_value h = n > t ? vkf_slice(g, "last_hidden_state.unpadded", x, 1, 0, t) : x;
  if (want & VKF_BIGBIRD_OUT_LAST_HIDDEN_STATE)
    out->last_hidden_state = vkf_arch_f32_output(g, h, "last_hidden_state");
  if (want & VKF_BIGBIRD_OUT_LOGITS) {
    vkf_arch_weights hw = weights_of(m, 0, dt);
    vkf_value logits = vkf_bigbird_head_build(
        &hw, g, m->head, c, weight(m, g, "embeddings.word_embeddings.weight", dt), h);
    out->logits = vkf_arch_f32_output(g, logits, "logits");
  }
  if (want & VKF_BIGBIRD_OUT_POOLER_OUTPUT)
    out->pooler_output = vkf_arch_f32_output(g, pooler(m, g, x, batch, dt), "pooler_output");
  vkf_status st = vkf_graph_status(g);
  if (st) {
    vkf_graph_destroy(g);
    memset(out, 0, sizeof *out);
    return vkf_status_annotate(st, "building BigBird from %s: ", m->f.dir);
  }
  out->graph = g;
  out->input_ids = ids;
  out->attention_mask = mask;
  out->token_type_ids = types;
  return VKF_OK;
}
