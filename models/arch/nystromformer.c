/* NystromformerModel: loading with every tensor checked, and the graph (see nystromformer.h). */
#include "models/arch/nystromformer.h"

#include <stdlib.h>
#include <string.h>

#include "graph/ir/builder.h"
#include "models/arch/arch_weights.h"
#include "models/arch/lowrank_attention.h"
#include "models/arch/nn_helpers.h"
#include "models/arch/transformer_block.h"

enum { NY_NAME_MAX = VKF_ARCH_NAME_MAX };
#define NAME VKF_NAME

struct vkf_nystromformer {
  vkf_arch_files f;
  vkf_nystrom_config ny;
  const char *prefix; /* "nystromformer." (task-head checkpoints) or "" */
};

static vkf_status expect(const vkf_nystromformer *m, const char *name, int64_t d0, int64_t d1) {
  return vkf_arch_expect2(m->f.ck, m->prefix, name, d0, d1);
}

static vkf_status check_tensors(void *model) {
  vkf_nystromformer *m = model;
  m->prefix = vkf_checkpoint_find(m->f.ck, "nystromformer.embeddings.word_embeddings.weight")
                  ? "nystromformer."
                  : "";
  const vkf_hf_config *c = &m->f.config;
  int64_t d = c->hidden_size, inter = c->intermediate_size;
  VKF_RETURN_IF_ERROR(expect(m, "embeddings.word_embeddings.weight", c->vocab_size, d));
  /* max_position_embeddings + 2 rows: positions start at 2. */
  VKF_RETURN_IF_ERROR(
      expect(m, "embeddings.position_embeddings.weight", c->max_position_embeddings + 2, d));
  VKF_RETURN_IF_ERROR(expect(m, "embeddings.token_type_embeddings.weight", c->type_vocab_size, d));
  VKF_RETURN_IF_ERROR(expect(m, "embeddings.LayerNorm.weight", d, 0));
  VKF_RETURN_IF_ERROR(expect(m, "embeddings.LayerNorm.bias", d, 0));
  static const char *const sq[] = {"attention.self.query", "attention.self.key",
                                   "attention.self.value", "attention.output.dense"};
  for (int64_t l = 0; l < c->num_hidden_layers; l++) {
    char n[NY_NAME_MAX];
    for (int i = 0; i < 4; i++) {
      VKF_RETURN_IF_ERROR(
          expect(m, NAME(n, "encoder.layer.%lld.%s.weight", (long long)l, sq[i]), d, d));
      VKF_RETURN_IF_ERROR(
          expect(m, NAME(n, "encoder.layer.%lld.%s.bias", (long long)l, sq[i]), d, 0));
    }
    static const char *const norms[] = {"attention.output.LayerNorm", "output.LayerNorm"};
    for (int i = 0; i < 2; i++) {
      VKF_RETURN_IF_ERROR(
          expect(m, NAME(n, "encoder.layer.%lld.%s.weight", (long long)l, norms[i]), d, 0));
      VKF_RETURN_IF_ERROR(
          expect(m, NAME(n, "encoder.layer.%lld.%s.bias", (long long)l, norms[i]), d, 0));
    }
    VKF_RETURN_IF_ERROR(
        expect(m, NAME(n, "encoder.layer.%lld.intermediate.dense.weight", (long long)l), inter, d));
    VKF_RETURN_IF_ERROR(
        expect(m, NAME(n, "encoder.layer.%lld.intermediate.dense.bias", (long long)l), inter, 0));
    VKF_RETURN_IF_ERROR(
        expect(m, NAME(n, "encoder.layer.%lld.output.dense.weight", (long long)l), d, inter));
    VKF_RETURN_IF_ERROR(
        expect(m, NAME(n, "encoder.layer.%lld.output.dense.bias", (long long)l), d, 0));
    if (m->ny.conv_kernel_size) {
      int64_t dims[4] = {c->num_attention_heads, 1, m->ny.conv_kernel_size, 1};
      VKF_RETURN_IF_ERROR(vkf_arch_expect(
          m->f.ck, m->prefix,
          NAME(n, "encoder.layer.%lld.attention.self.conv.weight", (long long)l), 4, dims));
    }
  }
  return VKF_OK;
}

static const char *const k_model_types[] = {"nystromformer", NULL};

static vkf_status read_nystrom(void *model, const char *model_dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/config.json", model_dir);
  return vkf_nystrom_config_load(path, &((vkf_nystromformer *)model)->ny);
}

const vkf_arch_loader vkf_nystromformer_loader = {.size = sizeof(vkf_nystromformer),
                                                  .files_at = offsetof(vkf_nystromformer, f),
                                                  .model_types = k_model_types,
                                                  .refusal = "is not supported (nystromformer)",
                                                  .configure = read_nystrom,
                                                  .check = check_tensors};

const vkf_hf_config *vkf_nystromformer_config(const vkf_nystromformer *m) {
  return &m->f.config;
}
const vkf_nystrom_config *vkf_nystromformer_nystrom_config(const vkf_nystromformer *m) {
  return &m->ny;
}

static vkf_value layernorm(const vkf_arch_weights *w, vkf_graph *g, const char *prefix,
                           const char *module, vkf_value x, float eps) {
  char a[NY_NAME_MAX], b[NY_NAME_MAX], nm[NY_NAME_MAX];
  vkf_norm_options o = {.eps = eps,
                        .gamma = vkf_arch_weight(w, g, NAME(a, "%s%s.weight", prefix, module)),
                        .beta = vkf_arch_weight(w, g, NAME(b, "%s%s.bias", prefix, module))};
  return vkf_layernorm(g, NAME(nm, "%s%s", prefix, module), x, &o);
}

/* NystromformerLayer is BERT's block (post-norm, plain MLP) with Nyström attention in place of
 * the softmax: the block builder runs it, and its io.attend hook the attention of q, k, v. */
static const vkf_block_names k_names = {
    .attn_norm = "attention.output.LayerNorm", .attention = "attention.self",
    .attn_out = "attention.output.dense", .mlp_norm = "output.LayerNorm",
    .mlp_up = "intermediate.dense", .mlp_down = "output.dense",
    .q_weight = "attention.self.query.weight", .k_weight = "attention.self.key.weight",
    .v_weight = "attention.self.value.weight", .q_bias = "attention.self.query.bias",
    .k_bias = "attention.self.key.bias", .v_bias = "attention.self.value.bias",
    .out_weight = "attention.output.dense.weight", .out_bias = "attention.output.dense.bias",
    .attn_norm_weight = "attention.output.LayerNorm.weight",
    .attn_norm_bias = "attention.output.LayerNorm.bias", .up_weight = "intermediate.dense.weight",
    .up_bias = "intermediate.dense.bias", .down_weight = "output.dense.weight",
    .down_bias = "output.dense.bias", .mlp_norm_weight = "output.LayerNorm.weight",
    .mlp_norm_bias = "output.LayerNorm.bias"};

/* What the attend hook needs: the options (the layer's conv weight set per layer) and where the
 * pseudo-inverse's constants are cached. */
typedef struct nystrom_io {
  vkf_nystrom_options o;
  vkf_arch_weights w;
} nystrom_io;

static vkf_value nystrom_attend(vkf_graph *g, const char *name, vkf_value q, vkf_value k,
                                vkf_value v, const vkf_attention_options *ao, void *user) {
  (void)ao; /* its own scale and padding (nystrom_io) */
  const nystrom_io *io = user;
  return vkf_nystrom_attention(g, &io->w, name, q, k, v, &io->o);
}

/* One NystromformerLayer on x [B, N, D]. */
static vkf_value layer(vkf_nystromformer *m, const vkf_arch_weights *w, vkf_graph *g, int64_t l,
                       vkf_value x, nystrom_io *nio) {
  const vkf_hf_config *c = &m->f.config;
  vkf_block_config bc = {.hidden = c->hidden_size,
                         .heads = c->num_attention_heads,
                         .head_dim = c->head_dim,
                         .intermediate = c->intermediate_size,
                         .norm = VKF_BLOCK_LAYERNORM,
                         .order = VKF_BLOCK_POST_NORM,
                         .norm_eps = (float)c->layer_norm_eps,
                         .mlp = VKF_BLOCK_MLP_PLAIN,
                         .act = vkf_block_activation(c->hidden_act)};
  char tp[64], np[NY_NAME_MAX], nm[NY_NAME_MAX], wn[NY_NAME_MAX];
  NAME(tp, "encoder.layer.%lld.", (long long)l);
  NAME(np, "%s%s", m->prefix, tp);
  nio->o.conv_weight = VKF_NO_VALUE;
  if (m->ny.conv_kernel_size) {
    /* Conv2d weight [H, 1, K, 1] read as [H, K]. */
    vkf_value cw = vkf_arch_weight(w, g, NAME(wn, "%sattention.self.conv.weight", tp));
    int64_t hk[2] = {c->num_attention_heads, m->ny.conv_kernel_size};
    nio->o.conv_weight = vkf_reshape(g, NAME(nm, "%sattention.self.conv.weight", tp), cw, 2, hk);
  }
  vkf_block_weights bw;
  vkf_block_weights_get(w, g, tp, &k_names, &bc, &bw);
  vkf_block_io io = {.attend = nystrom_attend, .attend_user = nio};
  return vkf_block_build(g, np, &k_names, &bc, &bw, &io, x);
}

vkf_status vkf_nystromformer_build(vkf_nystromformer *m, int64_t batch, int64_t n, vkf_dtype dt,
                                   vkf_nystromformer_graph *out) {
  memset(out, 0, sizeof *out);
  const vkf_hf_config *c = &m->f.config;
  int64_t b = batch ? batch : 1;
  if (b < 1 || n < 1 || n > c->max_position_embeddings || (dt != VKF_F32 && dt != VKF_F16))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: batch %lld, seq_len %lld (max %lld), dtype %s not supported",
                           m->f.dir, (long long)b, (long long)n,
                           (long long)c->max_position_embeddings, vkf_dtype_name(dt));
  if (m->ny.num_landmarks != m->ny.segment_means_seq_len && n != m->ny.segment_means_seq_len)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: %lld tokens per row, but this Nystromformer's landmarks are means "
                           "of segments of exactly segment_means_seq_len = %lld tokens (pad the "
                           "input to that length, masking the padding)",
                           m->f.dir, (long long)n, (long long)m->ny.segment_means_seq_len);
  vkf_graph *g = NULL;
  VKF_RETURN_IF_ERROR(vkf_graph_create("NystromformerModel", &g));
  vkf_arch_weights w = {m->f.ck, &m->f.owned, m->prefix, dt, m->f.quantize};
  int64_t bn[2] = {b, n};
  vkf_value ids = vkf_graph_input(g, "input_ids", VKF_I32, 2, bn);
  vkf_value mask = vkf_graph_input(g, "attention_mask", VKF_I32, 2, bn);
  vkf_value types = vkf_graph_input(g, "token_type_ids", VKF_I32, 2, bn);
  /* HF's get_extended_attention_mask: (1 - mask) · min, as [B, 1, 1, N]. */
  vkf_value bias = vkf_nn_mask_bias(&w, g, vkf_cast(g, "attention_mask.f32", mask, VKF_F32), b, n);
  char nm[NY_NAME_MAX];
  vkf_value x = vkf_gather(g, NAME(nm, "%sembeddings.word_embeddings", m->prefix),
                           vkf_arch_weight(&w, g, "embeddings.word_embeddings.weight"), ids);
  x = vkf_add(g, NAME(nm, "%sembeddings.token_type", m->prefix), x,
              vkf_gather(g, NAME(nm, "%sembeddings.token_type_embeddings", m->prefix),
                         vkf_arch_weight(&w, g, "embeddings.token_type_embeddings.weight"), types));
  /* position_ids = arange(N) + 2: rows [2, N + 2) of the table. */
  vkf_value pos =
      vkf_slice(g, NAME(nm, "%sembeddings.position_embeddings", m->prefix),
                vkf_arch_weight(&w, g, "embeddings.position_embeddings.weight"), 0, 2, n + 2);
  x = vkf_add(g, NAME(nm, "%sembeddings", m->prefix), x, pos);
  x = layernorm(&w, g, "", "embeddings.LayerNorm", x, (float)c->layer_norm_eps);
  nystrom_io nio = {
      .o = {.landmarks = m->ny.num_landmarks,
            .segment_len = m->ny.segment_means_seq_len,
            .inv_init = m->ny.inv_coeff_init_option ? VKF_NYSTROM_INV_PER_HEAD
                                                    : VKF_NYSTROM_INV_ORIGINAL,
            .mask_bias = bias},
      .w = w};
  nio.w.prefix = "";
  for (int64_t l = 0; l < c->num_hidden_layers; l++) x = layer(m, &w, g, l, x, &nio);
  out->last_hidden_state = vkf_arch_f32_output(g, x, "last_hidden_state");
  vkf_status st = vkf_graph_status(g);
  if (st) {
    vkf_graph_destroy(g);
    memset(out, 0, sizeof *out);
    return vkf_status_annotate(st, "building NystromformerModel from %s: ", m->f.dir);
  }
  out->graph = g;
  out->input_ids = ids;
  out->attention_mask = mask;
  out->token_type_ids = types;
  return VKF_OK;
}
