/* LSHSelfAttention's cached generation step as graph ops (see reformer_lsh.h). Hugging Face
 * finds the new token's keys by sorting the cached buckets with its own and taking the sorted
 * chunk around it; here the sort is vkf_argsort, the new token's sorted position is the count of
 * cached buckets not above its own (a stable sort puts it after its equals), and the chunk's start
 * and the wrap modulo n come from small constant tables, so the step needs no host round trip. */
#include <math.h>
#include <stdio.h>

#include "graph/ir/builder.h"
#include "models/arch/reformer_lsh.h"

enum { NM = VKF_ARCH_NAME_MAX };
#define NAME VKF_NAME

#define LSH_SELF_MASK_VALUE 1e5f

typedef struct table_fill {
  int64_t kind, a, b;
} table_fill;

enum { FILL_ONES, FILL_LAST, FILL_ARANGE, FILL_MOD };

/* FILL_ONES: 1. FILL_LAST: a at index b, else 0 (the self mask of the last key).
 * FILL_ARANGE: i·a + b. FILL_MOD: (i - a) mod b, Python's modulo (never negative). */
static void fill_table(float *out, size_t count, const void *user) {
  const table_fill *t = user;
  for (size_t i = 0; i < count; i++) {
    int64_t k = (int64_t)i, v = 0;
    switch (t->kind) {
      case FILL_ONES: v = 1; break;
      case FILL_LAST: v = k == t->b ? t->a : 0; break;
      case FILL_ARANGE: v = k * t->a + t->b; break;
      default: v = (((k - t->a) % t->b) + t->b) % t->b; break;
    }
    out[i] = (float)v;
  }
}

static vkf_value table(const vkf_arch_weights *w, vkf_graph *g, uint32_t rank,
                       const int64_t *shape, table_fill t) {
  char key[NM];
  int len = snprintf(key, sizeof key, "reformer.lsh_step.%lld.%lld.%lld", (long long)t.kind,
                     (long long)t.a, (long long)t.b);
  for (uint32_t i = 0; i < rank && len > 0 && (size_t)len < sizeof key; i++)
    len += snprintf(key + len, sizeof key - (size_t)len, "x%lld", (long long)shape[i]);
  return vkf_reformer_lsh_const(w, g, key, rank, shape, fill_table, &t);
}

/* One round's softmax over the last axis of s [..., 1, K] with values v [..., K, dh], as
 * _attend computes it: lg = logsumexp(s), out = exp(s - lg)·v. */
static vkf_value attend(vkf_graph *g, const char *name, vkf_value s, vkf_value v, vkf_value *lg) {
  char nm[2 * NM];
  vkf_value m = vkf_reduce(g, NAME(nm, "%s.max", name), s, VKF_REDUCE_MAX, 3);
  vkf_value e = vkf_exp(g, NAME(nm, "%s.exp", name), vkf_sub(g, NAME(nm, "%s.shifted", name), s, m));
  vkf_value l = vkf_reduce(g, NAME(nm, "%s.sum", name), e, VKF_REDUCE_SUM, 3);
  vkf_value u = vkf_matmul(g, NAME(nm, "%s.context", name), e, v, NULL);
  *lg = vkf_add(g, NAME(nm, "%s.logits", name), m, vkf_ln(g, NAME(nm, "%s.log_sum", name), l));
  return vkf_mul(g, NAME(nm, "%s.out", name), u,
                 vkf_exp(g, NAME(nm, "%s.scale", name),
                         vkf_sub(g, NAME(nm, "%s.scale_log", name), m, *lg)));
}

/* Scores with the keys equal to the new token replaced by -1e5: s·(1 - self) - 1e5·self. */
static vkf_value self_masked(const vkf_arch_weights *w, vkf_graph *g, const char *name,
                             vkf_value s, vkf_value self) {
  char nm[2 * NM];
  vkf_value keep = vkf_add(g, NAME(nm, "%s.keep", name), vkf_reformer_lsh_scalar(w, g, 1.0f),
                           vkf_scale(g, NAME(nm, "%s.keep.neg", name), self, -1.0f));
  return vkf_add(g, name, vkf_mul(g, NAME(nm, "%s.kept", name), s, keep),
                 vkf_scale(g, NAME(nm, "%s.fill", name), self, -LSH_SELF_MASK_VALUE));
}

/* Keys: q / sqrt(mean(q²) + 1e-6) / sqrt(dh) (_len_and_dim_norm). */
static vkf_value key_norm(vkf_graph *g, const char *name, vkf_value q, int64_t dh) {
  char nm[2 * NM];
  vkf_norm_options no = {.eps = 1e-6f};
  return vkf_scale(g, name, vkf_rmsnorm(g, NAME(nm, "%s.norm", name), q, &no),
                   (float)(1.0 / sqrt((double)dh)));
}

/* Nothing hashed yet: the new token against all n (do_standard_self_attention). */
static vkf_value plain_step(vkf_graph *g, const vkf_arch_weights *w, const char *name,
                            vkf_value qh, vkf_value vh, int64_t n, const vkf_reformer_lsh *p,
                            vkf_value *out_buckets) {
  char nm[NM];
  int64_t h = p->heads, dh = p->head_dim;
  vkf_value q = vkf_slice(g, NAME(nm, "%s.q", name), qh, 2, n - 1, n); /* [1, H, 1, dh] */
  vkf_matmul_options tb = {.transpose_b = 1};
  vkf_value s = vkf_matmul(g, NAME(nm, "%s.scores", name), q,
                           key_norm(g, NAME(nm, "%s.k", name), qh, dh), &tb); /* [1, H, 1, n] */
  int64_t ks[4] = {1, 1, 1, n};
  vkf_value self = table(w, g, 4, ks, (table_fill){FILL_LAST, 1, n - 1});
  s = self_masked(w, g, NAME(nm, "%s.scores.masked", name), s, self);
  vkf_value lg;
  vkf_value out = attend(g, NAME(nm, "%s.attend", name), s, vh, &lg); /* [1, H, 1, dh] */
  if (n >= p->chunk) {
    int64_t ms[2] = {1, n}, nb;
    *out_buckets = vkf_reformer_lsh_buckets(g, w, NAME(nm, "%s.hash", name), qh,
                                            table(w, g, 2, ms, (table_fill){FILL_ONES, 0, 0}),
                                            1, n, p, &nb);
  }
  int64_t merged[3] = {1, 1, h * dh};
  return vkf_reshape(g, NAME(nm, "%s.merged", name), out, 3, merged);
}

vkf_value vkf_reformer_lsh_step(vkf_graph *g, const vkf_arch_weights *w, const char *name,
                                vkf_value qk, vkf_value v, vkf_value q_new,
                                vkf_value past_buckets, int64_t offset_step, int64_t n,
                                const vkf_reformer_lsh *p, vkf_value *out_buckets) {
  char nm[NM];
  *out_buckets = VKF_NO_VALUE;
  int64_t h = p->heads, dh = p->head_dim, r = p->hashes, l = p->chunk;
  int64_t win = (p->before + 1 + p->after) * l;
  vkf_value qh = vkf_reformer_lsh_heads(g, NAME(nm, "%s.qk_heads", name), qk, 1, n, h, dh);
  vkf_value vh = vkf_reformer_lsh_heads(g, NAME(nm, "%s.v_heads", name), v, 1, n, h, dh);
  if (!vkf_value_valid(past_buckets)) return plain_step(g, w, name, qh, vh, n, p, out_buckets);

  /* The new token's buckets, with the rounds' offsets: [H, R, 1]. */
  vkf_value q = vkf_value_valid(q_new)
                    ? vkf_reformer_lsh_heads(g, NAME(nm, "%s.q", name), q_new, 1, 1, h, dh)
                    : vkf_slice(g, NAME(nm, "%s.q", name), qh, 2, n - 1, n); /* [1, H, 1, dh] */
  int64_t one[2] = {1, 1}, nb;
  vkf_value qb = vkf_reformer_lsh_buckets(g, w, NAME(nm, "%s.hash", name), q,
                                          table(w, g, 2, one, (table_fill){FILL_ONES, 0, 0}),
                                          1, 1, p, &nb); /* [1, H, 1, R] */
  *out_buckets = qb;
  int64_t hr1[3] = {h, r, 1}, r1[3] = {1, r, 1};
  vkf_value mine = vkf_add(g, NAME(nm, "%s.bucket", name),
                           vkf_reshape(g, NAME(nm, "%s.bucket.rounds", name), qb, 3, hr1),
                           table(w, g, 3, r1, (table_fill){FILL_ARANGE, offset_step, 0}));
  /* Each round's stable sort of the n buckets, and the new token's place in it: the cached
   * buckets not above its own. */
  vkf_value both[2] = {past_buckets, mine};
  vkf_value order = vkf_argsort(g, NAME(nm, "%s.sorted", name),
                                vkf_concat(g, NAME(nm, "%s.buckets", name), both, 2, 2));
  vkf_value place = vkf_reduce(
      g, NAME(nm, "%s.place", name),
      vkf_reformer_lsh_nonneg(w, g, NAME(nm, "%s.not_above", name),
                              vkf_sub(g, NAME(nm, "%s.diff", name), mine, past_buckets)),
      VKF_REDUCE_SUM, 2); /* [H, R, 1] */
  /* Its chunk, place // l, counted as the multiples of l in 1..place; the window's sorted
   * positions (chunk - before)·l + i modulo n, read from a table of (j - before·l) mod n. */
  int64_t kc = (n - 1) / l + 1, ks[3] = {1, 1, kc}, ws[3] = {1, 1, win};
  vkf_value chunk = vkf_reduce(
      g, NAME(nm, "%s.chunk", name),
      vkf_reformer_lsh_nonneg(w, g, NAME(nm, "%s.chunk.past", name),
                              vkf_sub(g, NAME(nm, "%s.chunk.diff", name), place,
                                      table(w, g, 3, ks, (table_fill){FILL_ARANGE, l, l}))),
      VKF_REDUCE_SUM, 2);
  int64_t off = p->before * l, span = off + n + (p->after + 2) * l, ts[2] = {span, 1};
  vkf_value at = vkf_add(g, NAME(nm, "%s.window", name),
                         vkf_scale(g, NAME(nm, "%s.window.start", name), chunk, (float)l),
                         table(w, g, 3, ws, (table_fill){FILL_ARANGE, 1, 0})); /* [H, R, W] */
  vkf_value wrapped = vkf_gather(g, NAME(nm, "%s.window.wrapped", name),
                                 table(w, g, 2, ts, (table_fill){FILL_MOD, off, n}),
                                 vkf_cast(g, NAME(nm, "%s.window.ids", name), at, VKF_I32));
  /* The window's tokens: rows (h·R + r)·n + position of the sorted order. */
  int64_t ot[2] = {h * r * n, 1}, hr[3] = {h, r, 1}, hw[3] = {h, r, win};
  vkf_value otab = vkf_reshape(g, NAME(nm, "%s.order.table", name),
                               vkf_cast(g, NAME(nm, "%s.order.f32", name), order, VKF_F32), 2, ot);
  vkf_value rows = vkf_add(g, NAME(nm, "%s.order.rows", name),
                           vkf_reshape(g, NAME(nm, "%s.window.flat", name), wrapped, 3, hw),
                           table(w, g, 3, hr, (table_fill){FILL_ARANGE, n, 0}));
  vkf_value tok = vkf_gather(g, NAME(nm, "%s.tokens", name), otab,
                             vkf_cast(g, NAME(nm, "%s.order.ids", name), rows, VKF_I32));
  /* Their query-key and value rows: table [H·n, 2·dh], row h·n + token. */
  int64_t kt[2] = {h * n, 2 * dh}, h1[3] = {h, 1, 1};
  vkf_value qv[2] = {qh, vh};
  vkf_value kvtab = vkf_reshape(g, NAME(nm, "%s.kv.table", name),
                                vkf_concat(g, NAME(nm, "%s.kv", name), qv, 2, 3), 2, kt);
  vkf_value krows = vkf_add(g, NAME(nm, "%s.kv.rows", name),
                            vkf_reshape(g, NAME(nm, "%s.tokens.flat", name), tok, 3, hw),
                            table(w, g, 3, h1, (table_fill){FILL_ARANGE, n, 0}));
  vkf_value kv = vkf_gather(g, NAME(nm, "%s.kv.gathered", name), kvtab,
                            vkf_cast(g, NAME(nm, "%s.kv.ids", name), krows, VKF_I32));
  /* [H, R, W, 2·dh] */
  vkf_value keys = key_norm(g, NAME(nm, "%s.k", name),
                            vkf_slice(g, NAME(nm, "%s.k.rows", name), kv, 3, 0, dh), dh);
  vkf_value vals = vkf_slice(g, NAME(nm, "%s.v.rows", name), kv, 3, dh, 2 * dh);
  int64_t q4[4] = {h, 1, 1, dh}, o4[4] = {1, r, 1, 1};
  vkf_value qr = vkf_mul(g, NAME(nm, "%s.q.rounds", name),
                         vkf_reshape(g, NAME(nm, "%s.q.heads", name), q, 4, q4),
                         table(w, g, 4, o4, (table_fill){FILL_ONES, 0, 0})); /* [H, R, 1, dh] */
  vkf_matmul_options tb = {.transpose_b = 1};
  vkf_value s = vkf_matmul(g, NAME(nm, "%s.scores", name), qr, keys, &tb); /* [H, R, 1, W] */
  /* The keys equal to the new token (the largest index, n - 1): 1 - |token - (n - 1)|, relu. */
  int64_t sw[4] = {h, r, 1, win};
  vkf_value self = vkf_relu(
      g, NAME(nm, "%s.self", name),
      vkf_add(g, NAME(nm, "%s.self.pre", name), vkf_reformer_lsh_scalar(w, g, 1.0f),
              vkf_scale(g, NAME(nm, "%s.self.neg", name),
                        vkf_reformer_lsh_abs(
                            g, NAME(nm, "%s.self.abs", name),
                            vkf_add(g, NAME(nm, "%s.self.d", name),
                                    vkf_reshape(g, NAME(nm, "%s.self.tokens", name), tok, 4, sw),
                                    vkf_reformer_lsh_scalar(w, g, -(float)(n - 1)))),
                        -1.0f)));
  s = self_masked(w, g, NAME(nm, "%s.scores.masked", name), s, self);
  vkf_value lg;
  vkf_value out = attend(g, NAME(nm, "%s.attend", name), s, vals, &lg); /* [H, R, 1, dh] */
  if (r > 1) {
    vkf_value mm = vkf_reduce(g, NAME(nm, "%s.rounds.max", name), lg, VKF_REDUCE_MAX, 1);
    vkf_value sum = vkf_reduce(
        g, NAME(nm, "%s.rounds.sum", name),
        vkf_exp(g, NAME(nm, "%s.rounds.exp", name), vkf_sub(g, NAME(nm, "%s.rounds.shift", name), lg, mm)),
        VKF_REDUCE_SUM, 1);
    vkf_value lse = vkf_add(g, NAME(nm, "%s.rounds.lse", name), mm,
                            vkf_ln(g, NAME(nm, "%s.rounds.log_sum", name), sum));
    vkf_value pr = vkf_exp(g, NAME(nm, "%s.rounds.prob", name),
                           vkf_sub(g, NAME(nm, "%s.rounds.logprob", name), lg, lse));
    out = vkf_reduce(g, NAME(nm, "%s.merged_rounds", name),
                     vkf_mul(g, NAME(nm, "%s.rounds.weighted", name), out, pr), VKF_REDUCE_SUM, 1);
  }
  int64_t merged[3] = {1, 1, h * dh};
  return vkf_reshape(g, NAME(nm, "%s.merged", name), out, 3, merged);
}
