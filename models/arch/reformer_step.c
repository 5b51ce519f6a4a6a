/* Reformer's cached generation step (see reformer.h): one token through every layer against the
 * states and buckets the engine keeps per layer. */
#include <math.h>
#include <string.h>

#include "models/arch/reformer_internal.h"
#include "models/arch/reformer_lsh.h"

#define NAME VKF_NAME

/* LocalSelfAttention's cached step: the query of the new token x [1, 1, D] against the keys and
 * values of states [1, k, D] (the cached slice and x), no mask; added to `residual`. */
static vkf_value local_step(const vkf_reformer *m, const vkf_arch_weights *w, vkf_graph *g,
                            const char *lp, vkf_value x, vkf_value states, int64_t k,
                            vkf_value residual) {
  const vkf_hf_config *c = &m->f.config;
  int64_t h = c->num_attention_heads, dh = c->head_dim;
  char nm[RF_NAME_MAX], mod[RF_NAME_MAX];
  static const uint32_t ax[4] = {0, 2, 1, 3};
  static const char *const names[3] = {"query", "key", "value"};
  vkf_value qkv[3];
  for (int i = 0; i < 3; i++) {
    vkf_value t = vkf_reformer_linear(w, g, NAME(mod, "%sattention.self_attention.%s", lp, names[i]),
                                      0, i ? states : x, VKF_NO_VALUE, VKF_ACT_NONE);
    int64_t s[4] = {1, i ? k : 1, h, dh};
    qkv[i] = vkf_permute(g, NAME(nm, "%s%sattention.%s", w->prefix, lp, names[i]),
                         vkf_reshape(g, NAME(nm, "%s%sattention.%s.heads", w->prefix, lp, names[i]),
                                     t, 4, s),
                         ax); /* [1, H, n, dh] */
  }
  vkf_attention_options o = {.scale = (float)(1.0 / sqrt((double)dh))};
  vkf_value ctx = vkf_attention(g, NAME(nm, "%s%sattention.self_attention", w->prefix, lp), qkv[0],
                                qkv[1], qkv[2], &o); /* [1, H, 1, dh] */
  int64_t merged[3] = {1, 1, h * dh};
  ctx = vkf_reshape(g, NAME(nm, "%s%sattention.merged", w->prefix, lp),
                    vkf_permute(g, NAME(nm, "%s%sattention.merge", w->prefix, lp), ctx, ax), 3,
                    merged);
  return vkf_reformer_linear(w, g, NAME(mod, "%sattention.output.dense", lp), 0, ctx, residual,
                             VKF_ACT_NONE);
}

/* LSHSelfAttention's cached step over states [1, n, D] (the cache and the new token x, last; or
 * another row's n states, x then only querying). */
static vkf_value lsh_step(const vkf_reformer *m, const vkf_arch_weights *w, vkf_graph *g,
                          const char *lp, vkf_value states, vkf_value x, int own, int64_t n,
                          vkf_value past_buckets, int64_t offset_step, vkf_value residual,
                          vkf_value *buckets) {
  char nm[RF_NAME_MAX], mod[RF_NAME_MAX];
  vkf_value qk = vkf_reformer_linear(w, g, NAME(mod, "%sattention.self_attention.query_key", lp),
                                     0, states, VKF_NO_VALUE, VKF_ACT_NONE);
  vkf_value v = vkf_reformer_linear(w, g, NAME(mod, "%sattention.self_attention.value", lp), 0,
                                    states, VKF_NO_VALUE, VKF_ACT_NONE);
  vkf_value q = own ? VKF_NO_VALUE
                    : vkf_reformer_linear(w, g, NAME(mod, "%sattention.self_attention.query_key", lp),
                                          0, x, VKF_NO_VALUE, VKF_ACT_NONE);
  if (w->dtype != VKF_F32) {
    qk = vkf_cast(g, NAME(nm, "%s%sattention.qk.f32", w->prefix, lp), qk, VKF_F32);
    v = vkf_cast(g, NAME(nm, "%s%sattention.v.f32", w->prefix, lp), v, VKF_F32);
    if (!own) q = vkf_cast(g, NAME(nm, "%s%sattention.q.f32", w->prefix, lp), q, VKF_F32);
  }
  vkf_reformer_lsh p;
  vkf_reformer_lsh_params(m, &p);
  vkf_value ctx = vkf_reformer_lsh_step(g, w, NAME(nm, "%s%sattention.self_attention", w->prefix, lp),
                                        qk, v, q, past_buckets, offset_step, n, &p, buckets);
  if (w->dtype != VKF_F32) ctx = vkf_cast(g, NAME(nm, "%s%sattention.ctx", w->prefix, lp), ctx, w->dtype);
  return vkf_reformer_linear(w, g, NAME(mod, "%sattention.output.dense", lp), 0, ctx, residual,
                             VKF_ACT_NONE);
}

vkf_status vkf_reformer_build_step(vkf_reformer *m, int64_t past, vkf_dtype dt,
                                   const int64_t *offset_step, int row0_keys,
                                   vkf_reformer_step_graph *out) {
  memset(out, 0, sizeof *out);
  const vkf_hf_config *c = &m->f.config;
  const vkf_reformer_config *rc = &m->rc;
  int64_t max = vkf_reformer_max_positions(m), d = c->hidden_size;
  int64_t h = c->num_attention_heads, r = rc->num_hashes, n = past + 1;
  if (!m->lm_head || !rc->is_decoder || past < 1 || n > max || (dt != VKF_F32 && dt != VKF_F16))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: a generation step after %lld tokens (the model has %lld positions) "
                           "in %s needs a causal LM head (%s)",
                           m->f.dir, (long long)past, (long long)max, vkf_dtype_name(dt), m->arch);
  vkf_graph *g = NULL;
  VKF_RETURN_IF_ERROR(vkf_graph_create(m->arch, &g));
  vkf_arch_weights w = {m->f.ck, &m->f.owned, m->prefix, dt, m->f.quantize};
  int64_t one[2] = {1, 1};
  out->input_ids = vkf_graph_input(g, "input_ids", VKF_I32, 2, one);
  vkf_value a = vkf_reformer_embeddings(m, &w, g, out->input_ids, past, 1), h2 = a;
  for (int64_t l = 0; l < c->num_hidden_layers; l++) {
    char lp[64], nm[RF_NAME_MAX];
    NAME(lp, "encoder.layers.%lld.", (long long)l);
    vkf_value x = vkf_reformer_layernorm(&w, g, NAME(nm, "%sattention.layer_norm", lp), h2,
                                         (float)c->layer_norm_eps);
    out->states[l] = vkf_arch_f32_output(g, x, NAME(nm, "cache.%lld.state", (long long)l));
    int64_t first = 0;
    if (rc->attn[l] != VKF_REFORMER_LSH) {
      /* _retrieve_relevant_hidden_states: past_states[start:], Python's slice. */
      int64_t start = (past / rc->local.chunk_length - rc->local.chunks_before) *
                      rc->local.chunk_length;
      first = start >= 0 ? (start < past ? start : past) : (past + start > 0 ? past + start : 0);
    }
    vkf_value cached = VKF_NO_VALUE;
    if (first < past) {
      int64_t ps[3] = {1, past, d};
      out->past_states[l] = vkf_graph_input(g, NAME(nm, "cache.%lld.past_states", (long long)l),
                                            VKF_F32, 3, ps);
      cached = out->past_states[l];
      if (first) cached = vkf_slice(g, NAME(nm, "%scache.window", lp), cached, 1, first, past);
    }
    vkf_value states = x;
    if (vkf_value_valid(cached)) {
      if (dt != VKF_F32) cached = vkf_cast(g, NAME(nm, "%scache.cast", lp), cached, dt);
      vkf_value two[2] = {cached, x};
      states = vkf_concat(g, NAME(nm, "%scache.with_new", lp), two, 2, 1);
    }
    if (rc->attn[l] == VKF_REFORMER_LSH) {
      if (offset_step[l]) {
        int64_t bs[3] = {h, r, past};
        out->past_buckets[l] = vkf_graph_input(
            g, NAME(nm, "cache.%lld.past_buckets", (long long)l), VKF_F32, 3, bs);
      }
      vkf_value buckets = VKF_NO_VALUE, keys = states;
      if (row0_keys && offset_step[l]) {
        int64_t ks[3] = {1, n, d};
        out->key_states[l] = vkf_graph_input(g, NAME(nm, "cache.%lld.key_states", (long long)l),
                                             VKF_F32, 3, ks);
        keys = dt == VKF_F32 ? out->key_states[l]
                             : vkf_cast(g, NAME(nm, "%scache.keys.cast", lp), out->key_states[l], dt);
      }
      a = lsh_step(m, &w, g, lp, keys, x, !vkf_value_valid(out->key_states[l]), n,
                   out->past_buckets[l], offset_step[l], a, &buckets);
      if (vkf_value_valid(buckets))
        out->buckets[l] = vkf_graph_output(g, buckets, NAME(nm, "cache.%lld.buckets", (long long)l));
    } else {
      a = local_step(m, &w, g, lp, x, states, past - first + 1, a);
    }
    h2 = vkf_reformer_feed_forward(m, &w, g, lp, a, h2);
  }
  vkf_value unused = VKF_NO_VALUE;
  vkf_status st = vkf_reformer_head(m, &w, g, a, h2, 0, &out->logits, &unused);
  if (st) {
    vkf_graph_destroy(g);
    memset(out, 0, sizeof *out);
    return vkf_status_annotate(st, "building %s's generation step from %s: ", m->arch, m->f.dir);
  }
  out->graph = g;
  return VKF_OK;
}
