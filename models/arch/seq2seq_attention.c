/* D2L's Bahdanau encoder-decoder: loading with every tensor checked, and the graphs (see
 * seq2seq_attention.h).
 *
 * The decoder is sequential by nature: step t's query is the state step t-1 left. A FULL build
 * therefore unrolls the T steps into one graph (each step: the query projection, the additive
 * attention, the concat with the embedded token, one GRU_SCAN of length 1 per layer from the
 * previous state), so teacher forcing is one submission whatever T is; the target length is
 * bounded (VKF_S2SA_MAX_TARGET) to keep the graph small. What does not depend on the step runs
 * once for all of them: the embeddings of every target token, the keys' projection W_k, and the
 * dense layer over the stacked outputs. Generation runs the STEP graph once per token instead. */
#include "models/arch/seq2seq_attention.h"

#include <stdlib.h>
#include <string.h>

#include "graph/ir/builder.h"
#include "models/arch/arch_weights.h"
#include "models/arch/nn_helpers.h"

#define NAME VKF_NAME
enum { S2SA_NAME_MAX = VKF_ARCH_NAME_MAX };

struct vkf_s2sa_model {
  vkf_arch_files f;
  /* Where each side's nn.GRU tensors live: "encoder.rnn.rnn." (d2l.GRU) or "encoder.rnn.", and
   * "decoder.rnn." (D2L's nn.GRU) or "decoder.rnn.rnn.". */
  char rnn[2][32];
};

static vkf_status expect(const vkf_s2sa_model *m, const char *name, int64_t d0, int64_t d1) {
  return vkf_arch_expect2(m->f.ck, "", name, d0, d1);
}

/* One side's GRU stack: layer 0 reads `in0` features, the others H. */
static vkf_status check_gru(vkf_s2sa_model *m, int side, int64_t in0) {
  const vkf_hf_config *c = &m->f.config;
  const char *who = side ? "decoder" : "encoder";
  const char *nested = side ? "decoder.rnn.rnn." : "encoder.rnn.rnn.";
  const char *flat = side ? "decoder.rnn." : "encoder.rnn.";
  char n[S2SA_NAME_MAX];
  int has_nested = vkf_checkpoint_find(m->f.ck, NAME(n, "%sweight_ih_l0", nested)) != NULL;
  snprintf(m->rnn[side], sizeof m->rnn[side], "%s", has_nested ? nested : flat);
  if (!has_nested && !vkf_checkpoint_find(m->f.ck, NAME(n, "%sweight_ih_l0", flat)))
    return vkf_status_make(VKF_STATUS_NOT_FOUND,
                           "%s: the %s's GRU is missing (no tensor %sweight_ih_l0 nor "
                           "%sweight_ih_l0)",
                           m->f.dir, who, nested, flat);
  int64_t h = c->hidden_size;
  for (int64_t l = 0; l < c->num_hidden_layers; l++) {
    const char *p = m->rnn[side];
    long long li = (long long)l;
    VKF_RETURN_IF_ERROR(expect(m, NAME(n, "%sweight_ih_l%lld", p, li), 3 * h, l ? h : in0));
    VKF_RETURN_IF_ERROR(expect(m, NAME(n, "%sweight_hh_l%lld", p, li), 3 * h, h));
    VKF_RETURN_IF_ERROR(expect(m, NAME(n, "%sbias_ih_l%lld", p, li), 3 * h, 0));
    VKF_RETURN_IF_ERROR(expect(m, NAME(n, "%sbias_hh_l%lld", p, li), 3 * h, 0));
  }
  /* A deeper GRU in the file than num_layers says is a config that does not match its weights. */
  if (vkf_checkpoint_find(m->f.ck, NAME(n, "%sweight_ih_l%lld", m->rnn[side],
                                        (long long)c->num_hidden_layers)))
    return vkf_status_make(VKF_STATUS_SHAPE,
                           "%s: the %s's GRU has more layers than num_layers %lld (%s is there)",
                           m->f.dir, who, (long long)c->num_hidden_layers, n);
  return VKF_OK;
}

static vkf_status check_tensors(void *model) {
  vkf_s2sa_model *m = model;
  const vkf_hf_config *c = &m->f.config;
  int64_t h = c->hidden_size, e = c->embed_size;
  VKF_RETURN_IF_ERROR(expect(m, "encoder.embedding.weight", c->src_vocab_size, e));
  VKF_RETURN_IF_ERROR(expect(m, "decoder.embedding.weight", c->vocab_size, e));
  VKF_RETURN_IF_ERROR(expect(m, "decoder.attention.W_q.weight", h, h));
  VKF_RETURN_IF_ERROR(expect(m, "decoder.attention.W_k.weight", h, h));
  VKF_RETURN_IF_ERROR(expect(m, "decoder.attention.w_v.weight", 1, h));
  VKF_RETURN_IF_ERROR(expect(m, "decoder.dense.weight", c->vocab_size, h));
  VKF_RETURN_IF_ERROR(expect(m, "decoder.dense.bias", c->vocab_size, 0));
  VKF_RETURN_IF_ERROR(check_gru(m, 0, e));
  return check_gru(m, 1, h + e); /* cat(context, embedded token) */
}

static const char *const k_model_types[] = {"d2l_seq2seq_attention", NULL};

const vkf_arch_loader vkf_s2sa_loader = {.size = sizeof(vkf_s2sa_model),
                                         .files_at = offsetof(vkf_s2sa_model, f),
                                         .model_types = k_model_types,
                                         .refusal = "is not d2l_seq2seq_attention",
                                         .check = check_tensors,
                                         .f32_only = "the Bahdanau encoder-decoder"};

const vkf_hf_config *vkf_s2sa_config(const vkf_s2sa_model *m) {
  return &m->f.config;
}

/* ---- graphs ---- */

typedef struct s2sa_ctx {
  const vkf_s2sa_model *m;
  vkf_graph *g;
  vkf_arch_weights w;
  int64_t b, h, layers;
} s2sa_ctx;

static vkf_value weight(s2sa_ctx *x, const char *name) {
  return vkf_arch_weight(&x->w, x->g, name);
}

/* One GRU layer of one side over x [B, T, in] from h0 ([B, H] or VKF_NO_VALUE: zeros) -> every
 * step's state [B, T, H]. The input gates of all T steps are one GEMM. */
static vkf_value gru_layer(s2sa_ctx *x, int side, int64_t l, vkf_value in, vkf_value h0,
                           const char *tag) {
  char n[S2SA_NAME_MAX], node[S2SA_NAME_MAX];
  const char *p = x->m->rnn[side];
  long long li = (long long)l;
  vkf_matmul_options mo = {.transpose_b = 1,
                           .bias = weight(x, NAME(n, "%sbias_ih_l%lld", p, li))};
  vkf_value gates =
      vkf_matmul(x->g, NAME(node, "%s.gates%lld", tag, li), in,
                 weight(x, NAME(n, "%sweight_ih_l%lld", p, li)), &mo);
  vkf_value w_hh = weight(x, NAME(n, "%sweight_hh_l%lld", p, li));
  vkf_value b_hh = weight(x, NAME(n, "%sbias_hh_l%lld", p, li));
  return vkf_gru_scan(x->g, NAME(node, "%s.gru%lld", tag, li), gates, w_hh, b_hh, h0);
}

/* The encoder over ids [B, S]: outputs [B, S, H] (batch first) and each layer's last state in
 * state[l] [B, H]. */
static vkf_value encode(s2sa_ctx *x, vkf_value ids, int64_t s, vkf_value *state) {
  vkf_graph *g = x->g;
  vkf_value v = vkf_gather(g, "encoder.embedding", weight(x, "encoder.embedding.weight"), ids);
  char node[S2SA_NAME_MAX];
  for (int64_t l = 0; l < x->layers; l++) {
    v = gru_layer(x, 0, l, v, VKF_NO_VALUE, "encoder");
    int64_t shape[2] = {x->b, x->h};
    vkf_value last = vkf_slice(g, NULL, v, 1, s - 1, s);
    state[l] = vkf_reshape(g, NAME(node, "encoder.state%lld", (long long)l), last, 2, shape);
  }
  return v;
}

/* What every decoder step reads: the encoder's outputs (the values), their projection W_k (the
 * keys), w_v as [H], W_q, the source's valid lengths. */
typedef struct s2sa_memory {
  vkf_value enc, kp, w_v, w_q, valid_lens;
} s2sa_memory;

static s2sa_memory memory(s2sa_ctx *x, vkf_value enc, vkf_value valid_lens) {
  s2sa_memory mem = {.enc = enc, .valid_lens = valid_lens};
  vkf_matmul_options t = {.transpose_b = 1};
  mem.kp = vkf_matmul(x->g, "decoder.attention.keys", enc,
                      weight(x, "decoder.attention.W_k.weight"), &t);
  int64_t hv = x->h;
  mem.w_v = vkf_reshape(x->g, "decoder.attention.w_v", weight(x, "decoder.attention.w_v.weight"),
                        1, &hv);
  mem.w_q = weight(x, "decoder.attention.W_q.weight");
  return mem;
}

/* One decoder step: emb [B, 1, E] the embedded token, state[l] [B, H] updated in place; returns
 * the top layer's output [B, 1, H] and, when `weights` is non-NULL, the attention weights
 * [B, 1, S] in *weights. */
static vkf_value decode_step(s2sa_ctx *x, const s2sa_memory *mem, vkf_value emb, vkf_value *state,
                             vkf_value *weights, int64_t t) {
  vkf_graph *g = x->g;
  char tag[64], node[S2SA_NAME_MAX];
  NAME(tag, "decoder.step%lld", (long long)t);
  int64_t q_shape[3] = {x->b, 1, x->h};
  vkf_value q = vkf_reshape(g, NAME(node, "%s.query", tag), state[x->layers - 1], 3, q_shape);
  vkf_matmul_options tb = {.transpose_b = 1};
  vkf_value qp = vkf_matmul(g, NAME(node, "%s.W_q", tag), q, mem->w_q, &tb);
  vkf_value ctx = vkf_additive_attention(g, NAME(node, "%s.context", tag), qp, mem->kp, mem->w_v,
                                         mem->enc, mem->valid_lens, 0);
  if (weights)
    *weights = vkf_additive_attention(g, NAME(node, "%s.weights", tag), qp, mem->kp, mem->w_v,
                                      mem->enc, mem->valid_lens, 1);
  vkf_value parts[2] = {ctx, emb};
  vkf_value v = vkf_concat(g, NAME(node, "%s.input", tag), parts, 2, 2);
  int64_t s_shape[2] = {x->b, x->h};
  for (int64_t l = 0; l < x->layers; l++) {
    v = gru_layer(x, 1, l, v, state[l], tag);
    state[l] = vkf_reshape(g, NAME(node, "%s.state%lld", tag, (long long)l), v, 2, s_shape);
  }
  return v;
}

/* The per-layer states [B, H] stacked as [L, B, H]. */
static vkf_value stack_state(s2sa_ctx *x, const vkf_value *state, const char *name) {
  vkf_value *rows = malloc((size_t)x->layers * sizeof *rows);
  if (!rows) {
    vkf_graph_set_error(x->g, vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", name));
    return VKF_NO_VALUE;
  }
  int64_t shape[3] = {1, x->b, x->h};
  for (int64_t l = 0; l < x->layers; l++) rows[l] = vkf_reshape(x->g, NULL, state[l], 3, shape);
  vkf_value v = vkf_nn_concat_many(x->g, name, rows, x->layers, 0);
  free(rows);
  return v;
}

static vkf_value dense(s2sa_ctx *x, vkf_value v) {
  vkf_matmul_options mo = {.transpose_b = 1, .bias = weight(x, "decoder.dense.bias")};
  return vkf_matmul(x->g, "decoder.dense", v, weight(x, "decoder.dense.weight"), &mo);
}

/* FULL: the teacher-forced decoder over ids [B, T]. */
static void build_full(s2sa_ctx *x, const vkf_s2sa_build_options *o, vkf_s2sa_graph *out,
                       vkf_value enc, vkf_value *state) {
  vkf_graph *g = x->g;
  int64_t t_len = o->tgt_len;
  out->decoder_input_ids = vkf_graph_input(g, "decoder_input_ids", VKF_I32, 2,
                                           (int64_t[]){x->b, t_len});
  if (!o->logits && !o->attention_weights) return;
  s2sa_memory mem = memory(x, enc, out->valid_lens);
  vkf_value emb = vkf_gather(g, "decoder.embedding", weight(x, "decoder.embedding.weight"),
                             out->decoder_input_ids);
  vkf_value *outs = malloc((size_t)t_len * sizeof *outs);
  vkf_value *weights = malloc((size_t)t_len * sizeof *weights);
  if (!outs || !weights) {
    vkf_graph_set_error(g, vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "decoder steps"));
  } else {
    for (int64_t t = 0; t < t_len; t++) {
      vkf_value emb_t = vkf_slice(g, NULL, emb, 1, t, t + 1);
      outs[t] = decode_step(x, &mem, emb_t, state, o->attention_weights ? &weights[t] : NULL, t);
    }
    if (o->logits)
      out->logits = vkf_graph_output(
          g, dense(x, vkf_nn_concat_many(g, "decoder.outputs", outs, t_len, 1)), "logits");
    if (o->attention_weights)
      out->attention_weights =
          vkf_graph_output(g, vkf_nn_concat_many(g, "decoder.attention_weights", weights, t_len, 1),
                           "attention_weights");
  }
  free(outs);
  free(weights);
}

/* STEP: one token per row from the given state against the given encoder outputs. */
static void build_step(s2sa_ctx *x, const vkf_s2sa_build_options *o, vkf_s2sa_graph *out,
                       vkf_value *state) {
  vkf_graph *g = x->g;
  int64_t s = o->src_len, v = x->m->f.config.vocab_size;
  out->decoder_input_ids =
      vkf_graph_input(g, "decoder_input_ids", VKF_I32, 2, (int64_t[]){x->b, 1});
  out->state = vkf_graph_input(g, "state", VKF_F32, 3, (int64_t[]){x->layers, x->b, x->h});
  out->enc_outputs = vkf_graph_input(g, "enc_outputs", VKF_F32, 3, (int64_t[]){x->b, s, x->h});
  for (int64_t l = 0; l < x->layers; l++) {
    vkf_value row = vkf_slice(g, NULL, out->state, 0, l, l + 1);
    state[l] = vkf_reshape(g, NULL, row, 2, (int64_t[]){x->b, x->h});
  }
  s2sa_memory mem = memory(x, out->enc_outputs, out->valid_lens);
  vkf_value emb = vkf_gather(g, "decoder.embedding", weight(x, "decoder.embedding.weight"),
                             out->decoder_input_ids);
  vkf_value w = VKF_NO_VALUE;
  vkf_value top = decode_step(x, &mem, emb, state, &w, 0);
  out->logits = vkf_graph_output(
      g, vkf_reshape(g, NULL, dense(x, top), 2, (int64_t[]){x->b, v}), "logits");
  out->attention_weights =
      vkf_graph_output(g, vkf_reshape(g, NULL, w, 2, (int64_t[]){x->b, s}), "attention_weights");
  out->final_state = vkf_graph_output(g, stack_state(x, state, "decoder.next_state"), "next_state");
}

vkf_status vkf_s2sa_build(vkf_s2sa_model *m, const vkf_s2sa_build_options *o,
                          vkf_s2sa_graph *out) {
  memset(out, 0, sizeof *out);
  const vkf_hf_config *c = &m->f.config;
  int64_t b = o->batch ? o->batch : 1;
  if (o->dtype != VKF_F32)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: the Bahdanau encoder-decoder runs in f32 only (its GRU scan is "
                           "f32), not %s",
                           m->f.dir, vkf_dtype_name(o->dtype));
  if (b < 1 || o->src_len < 1 || o->src_len > VKF_S2SA_MAX_SOURCE)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "batch %lld, source of %lld tokens: expected a batch >= 1 and 1 .. %lld "
                           "tokens",
                           (long long)b, (long long)o->src_len, (long long)VKF_S2SA_MAX_SOURCE);
  if (o->mode == VKF_S2SA_FULL && (o->tgt_len < 1 || o->tgt_len > VKF_S2SA_MAX_TARGET))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "target of %lld tokens: the teacher-forced decoder takes 1 .. %lld",
                           (long long)o->tgt_len, (long long)VKF_S2SA_MAX_TARGET);
  VKF_RETURN_IF_ERROR(vkf_graph_create("d2l_seq2seq_attention", &out->graph));
  s2sa_ctx x = {.m = m,
                .g = out->graph,
                .w = {.ck = m->f.ck, .cache = &m->f.owned, .prefix = "", .dtype = VKF_F32},
                .b = b,
                .h = c->hidden_size,
                .layers = c->num_hidden_layers};
  vkf_value *state = calloc((size_t)x.layers, sizeof *state);
  if (!state) {
    vkf_graph_destroy(out->graph);
    memset(out, 0, sizeof *out);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "decoder state");
  }
  vkf_graph *g = out->graph;
  if (o->mode != VKF_S2SA_ENCODE)
    out->valid_lens = vkf_graph_input(g, "valid_lens", VKF_I32, 1, &b);
  if (o->mode == VKF_S2SA_STEP) {
    build_step(&x, o, out, state);
  } else {
    out->input_ids = vkf_graph_input(g, "input_ids", VKF_I32, 2, (int64_t[]){b, o->src_len});
    vkf_value enc = encode(&x, out->input_ids, o->src_len, state);
    if (o->mode == VKF_S2SA_ENCODE || o->encoder_outputs)
      out->encoder_outputs = vkf_graph_output(g, enc, "encoder_outputs");
    if (o->mode == VKF_S2SA_ENCODE)
      out->final_state = vkf_graph_output(g, stack_state(&x, state, "encoder.state"), "state");
    else
      build_full(&x, o, out, enc, state);
  }
  free(state);
  vkf_status s = vkf_graph_status(g);
  if (s) {
    vkf_graph_destroy(g);
    memset(out, 0, sizeof *out);
  }
  return s;
}
