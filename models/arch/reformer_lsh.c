/* Reformer's LSH self-attention as graph ops (see reformer_lsh.h). Every mask is exact: positions
 * are small integers in f32, so equality and order become relu arithmetic with 0/1 results, and a
 * masked score is replaced (score·0 + fill), not shifted, as torch.where does. */
#include "models/arch/reformer_lsh.h"

#include <math.h>
#include <string.h>

#include "graph/ir/builder.h"
#include "models/arch/torch_rng.h"

enum { NM = VKF_ARCH_NAME_MAX };
#define NAME VKF_NAME

/* LSHSelfAttention's float32 buffers: a token against itself, and a masked key. */
#define LSH_SELF_MASK_VALUE 1e5f
#define LSH_MASK_VALUE 1e9f

vkf_value vkf_reformer_look_adjacent(vkf_graph *g, const char *name, vkf_value x, int64_t nc,
                                     int64_t before, int64_t after) {
  if (before == 0 && after == 0) return x;
  vkf_value parts[2 * 64 + 1];
  uint32_t count = 0;
  char nm[NM];
  for (int64_t i = -before; i <= after && count < sizeof parts / sizeof *parts; i++) {
    int64_t s = ((i % nc) + nc) % nc;
    if (s == 0) {
      parts[count++] = x;
      continue;
    }
    vkf_value two[2] = {vkf_slice(g, NAME(nm, "%s.%lld.tail", name, (long long)i), x, 1, s, nc),
                        vkf_slice(g, NAME(nm, "%s.%lld.head", name, (long long)i), x, 1, 0, s)};
    parts[count++] = vkf_concat(g, NAME(nm, "%s.%lld", name, (long long)i), two, 2, 1);
  }
  if (count == 1) return parts[0];
  /* concat takes at most 8 inputs: join in groups */
  while (count > 1) {
    uint32_t out = 0;
    for (uint32_t i = 0; i < count; i += 8) {
      uint32_t k = count - i < 8 ? count - i : 8;
      parts[out] = k == 1 ? parts[i]
                          : vkf_concat(g, NAME(nm, "%s.join%u.%u", name, count, i), parts + i, k, 2);
      out++;
    }
    count = out;
  }
  return parts[0];
}

static void fill_one(float *out, size_t count, const void *user) {
  for (size_t i = 0; i < count; i++) out[i] = *(const float *)user;
}
/* out[i] = i % mod */
static void fill_mod(float *out, size_t count, const void *user) {
  int64_t mod = *(const int64_t *)user;
  for (size_t i = 0; i < count; i++) out[i] = (float)((int64_t)i % mod);
}
/* out[i] = i · step */
static void fill_step(float *out, size_t count, const void *user) {
  int64_t step = *(const int64_t *)user;
  for (size_t i = 0; i < count; i++) out[i] = (float)((int64_t)i * step);
}
static void fill_rotations(float *out, size_t count, const void *user) {
  vkf_torch_rng rng;
  vkf_torch_rng_seed(&rng, *(const uint64_t *)user);
  vkf_torch_randn_f32(&rng, out, count);
}

vkf_value vkf_reformer_lsh_const(const vkf_arch_weights *w, vkf_graph *g, const char *key,
                                 uint32_t rank, const int64_t *shape,
                                 void (*fill)(float *, size_t, const void *), const void *user) {
  vkf_arch_weights wd = *w;
  wd.dtype = VKF_F32;
  wd.prefix = "";
  return vkf_arch_computed(&wd, g, key, VKF_F32, rank, shape, fill, user);
}

vkf_value vkf_reformer_lsh_scalar(const vkf_arch_weights *w, vkf_graph *g, float value) {
  char key[NM];
  int64_t one[1] = {1};
  return vkf_reformer_lsh_const(w, g, NAME(key, "reformer.lsh.scalar.%.9g", (double)value), 1, one, fill_one,
                   &value);
}

/* Natural log of x >= 1 (a softmax's sum of exp(s - max)) by Halley's iteration
 * y += 2 (x - e^y) / (x + e^y) from 0: each step adds at most 2 while far, then triples the
 * correct digits, so 14 steps reach f32 precision for x up to e^20. */
static vkf_value ln(vkf_graph *g, const vkf_arch_weights *w, const char *name, vkf_value x) {
  char a[2 * NM], b2[2 * NM], c[2 * NM], d[2 * NM];
  vkf_value y = VKF_NO_VALUE;
  for (int i = 0; i < 14; i++) {
    vkf_value ey = i ? vkf_exp(g, NAME(a, "%s.%d.exp", name, i), y) : vkf_reformer_lsh_scalar(w, g, 1.0f);
    vkf_value step = vkf_div(g, NAME(b2, "%s.%d.step", name, i),
                             vkf_sub(g, NAME(c, "%s.%d.num", name, i), x, ey),
                             vkf_add(g, NAME(d, "%s.%d.den", name, i), x, ey));
    step = vkf_scale(g, NAME(a, "%s.%d.step2", name, i), step, 2.0f);
    y = i ? vkf_add(g, NAME(b2, "%s.%d", name, i), y, step) : step;
  }
  return y;
}

/* |x| = relu(x) + relu(-x) */
vkf_value vkf_reformer_lsh_abs(vkf_graph *g, const char *name, vkf_value x) {
  char a[2 * NM], b[2 * NM], c[2 * NM];
  return vkf_add(g, name, vkf_relu(g, NAME(a, "%s.pos", name), x),
                 vkf_relu(g, NAME(b, "%s.neg", name), vkf_scale(g, NAME(c, "%s.minus", name), x, -1.0f)));
}

/* x >= 0 for integers: relu(x + 1) - relu(x) */
vkf_value vkf_reformer_lsh_nonneg(const vkf_arch_weights *w, vkf_graph *g, const char *name,
                                  vkf_value x) {
  char a[2 * NM], b[2 * NM], c[2 * NM];
  return vkf_sub(g, name,
                 vkf_relu(g, NAME(a, "%s.up", name),
                          vkf_add(g, NAME(b, "%s.shift", name), x, vkf_reformer_lsh_scalar(w, g, 1.0f))),
                 vkf_relu(g, NAME(c, "%s.x", name), x));
}

vkf_value vkf_reformer_lsh_heads(vkf_graph *g, const char *name, vkf_value x, int64_t b, int64_t n,
                                 int64_t h, int64_t dh) {
  char nm[NM];
  int64_t s[4] = {b, n, h, dh};
  static const uint32_t ax[4] = {0, 2, 1, 3};
  vkf_value t = vkf_permute(g, NAME(nm, "%s.perm", name),
                            vkf_reshape(g, NAME(nm, "%s.split", name), x, 4, s), ax);
  return vkf_copy(g, name, t);
}

/* Bucket of every (b, h, n, round), f32 [B, H, N, R]: argmax over [r, -r] per factor of the
 * rotated vectors (as the first index of a stable ascending sort of -[r, -r]), combined with the
 * factors' running product; padding tokens (maskf 0) in the extra bucket nb. */
vkf_value vkf_reformer_lsh_buckets(vkf_graph *g, const vkf_arch_weights *w, const char *name,
                                   vkf_value qh, vkf_value maskf, int64_t b, int64_t n,
                                   const vkf_reformer_lsh *p, int64_t *out_nb) {
  char nm[NM], key[NM];
  int64_t h = p->heads, dh = p->head_dim, r = p->hashes, half = 0;
  for (int f = 0; f < p->factor_count; f++) half += p->factors[f] / 2;
  int64_t rs[3] = {h, dh, r * half};
  uint64_t seed = p->seed;
  vkf_value rot = vkf_reformer_lsh_const(w, g,
                            NAME(key, "reformer.lsh.rotations.%llu.%lld.%lld.%lld.%lld",
                                 (unsigned long long)seed, (long long)h, (long long)dh,
                                 (long long)r, (long long)half),
                            3, rs, fill_rotations, &seed);
  /* torch.einsum("bmtd,mdhr->bmhtr"): [B, H, N, dh] x [H, dh, R·half] */
  vkf_value rotated = vkf_matmul(g, NAME(nm, "%s.rotate", name), qh, rot, NULL);
  int64_t s3[3] = {b * h * n, r, half};
  rotated = vkf_reshape(g, NAME(nm, "%s.rotated", name), rotated, 3, s3);
  vkf_value bucket = VKF_NO_VALUE;
  int64_t cur = 0, prod = 1;
  for (int f = 0; f < p->factor_count; f++) {
    int64_t hf = p->factors[f] / 2;
    vkf_value x = vkf_slice(g, NAME(nm, "%s.factor%d", name, f), rotated, 2, cur, cur + hf);
    vkf_value two[2] = {vkf_scale(g, NAME(nm, "%s.factor%d.neg", name, f), x, -1.0f), x};
    vkf_value keys = vkf_concat(g, NAME(nm, "%s.factor%d.keys", name, f), two, 2, 2);
    vkf_value order = vkf_argsort(g, NAME(nm, "%s.factor%d.order", name, f), keys);
    vkf_value first = vkf_cast(g, NAME(nm, "%s.factor%d.argmax", name, f),
                               vkf_slice(g, NAME(nm, "%s.factor%d.first", name, f), order, 2, 0, 1),
                               VKF_F32); /* [B·H·N, R, 1] */
    if (prod != 1) first = vkf_scale(g, NAME(nm, "%s.factor%d.scaled", name, f), first, (float)prod);
    bucket = f ? vkf_add(g, NAME(nm, "%s.factor%d.sum", name, f), bucket, first) : first;
    cur += hf;
    prod *= p->factors[f];
  }
  int64_t s4[4] = {b, h, n, r}, ms[4] = {b, 1, n, 1};
  bucket = vkf_reshape(g, NAME(nm, "%s.bucket", name), bucket, 4, s4);
  /* (bucket - nb)·mask + nb */
  vkf_value m = vkf_reshape(g, NAME(nm, "%s.mask", name), maskf, 4, ms);
  bucket = vkf_add(g, NAME(nm, "%s.bucket.padded", name),
                   vkf_mul(g, NAME(nm, "%s.bucket.masked", name),
                           vkf_add(g, NAME(nm, "%s.bucket.shifted", name), bucket,
                                   vkf_reformer_lsh_scalar(w, g, -(float)prod)),
                           m),
                   vkf_reformer_lsh_scalar(w, g, (float)prod));
  *out_nb = prod;
  return bucket;
}

vkf_value vkf_reformer_lsh_attention(vkf_graph *g, const vkf_arch_weights *w, const char *name,
                                     vkf_value qk, vkf_value v, vkf_value maskf, int64_t b,
                                     int64_t n, const vkf_reformer_lsh *p,
                                     vkf_value *out_buckets) {
  char nm[NM], key[NM];
  int64_t h = p->heads, dh = p->head_dim, bh = b * h;
  if (out_buckets) *out_buckets = VKF_NO_VALUE;
  vkf_value qh = vkf_reformer_lsh_heads(g, NAME(nm, "%s.qk_heads", name), qk, b, n, h, dh); /* [B, H, N, dh] */
  vkf_value vh = vkf_reformer_lsh_heads(g, NAME(nm, "%s.v_heads", name), v, b, n, h, dh);
  int plain = n <= p->chunk; /* do_standard_self_attention */
  int64_t r = plain ? 1 : p->hashes, l = plain ? n : p->chunk;
  int64_t before = plain ? 0 : p->before, after = plain ? 0 : p->after;
  int64_t rn = r * n, t = rn / l, win = (before + 1 + after) * l;
  vkf_value qs, vs, posq, posk, keymask, undo = VKF_NO_VALUE, rowoff = VKF_NO_VALUE;
  if (plain) {
    int64_t s[4] = {bh, 1, n, dh}, ps[4] = {1, 1, n, 1}, pk[4] = {1, 1, 1, n}, nn = n;
    qs = vkf_reshape(g, NAME(nm, "%s.q", name), qh, 4, s);
    vs = vkf_reshape(g, NAME(nm, "%s.v", name), vh, 4, s);
    vkf_value pos = vkf_reformer_lsh_const(w, g, NAME(key, "reformer.lsh.positions.%lld", (long long)n), 4, ps,
                              fill_mod, &nn);
    posq = pos;
    posk = vkf_reshape(g, NAME(nm, "%s.key_positions", name), pos, 4, pk);
    /* the mask of each row's keys for every head: [B, 1, 1, N] · ones [1, H, 1, 1] */
    int64_t m4[4] = {b, 1, 1, n}, hs[4] = {1, h, 1, 1}, mk[4] = {bh, 1, 1, n};
    static const float one = 1.0f;
    vkf_value ones = vkf_reformer_lsh_const(w, g, NAME(key, "reformer.lsh.ones.%lld", (long long)h), 4, hs,
                               fill_one, &one);
    keymask = vkf_mul(g, NAME(nm, "%s.key_mask.heads", name),
                      vkf_reshape(g, NAME(nm, "%s.key_mask.rows", name), maskf, 4, m4), ones);
    keymask = vkf_reshape(g, NAME(nm, "%s.key_mask", name), keymask, 4, mk);
  } else {
    int64_t nb;
    vkf_value bucket = vkf_reformer_lsh_buckets(g, w, name, qh, maskf, b, n, p, &nb); /* [B, H, N, R] */
    if (out_buckets) *out_buckets = bucket;
    /* Sort keys, round-major: bucket + round·(nb + 1) over [B, H, R·N]. */
    static const uint32_t swap[4] = {0, 1, 3, 2};
    int64_t os[4] = {1, 1, r, 1}, step = nb + 1, ks[3] = {b, h, rn};
    vkf_value offsets = vkf_reformer_lsh_const(w, g,
                                  NAME(key, "reformer.lsh.round_offsets.%lld.%lld", (long long)r,
                                       (long long)step),
                                  4, os, fill_step, &step);
    vkf_value keys = vkf_add(g, NAME(nm, "%s.sort_keys.rounds", name),
                             vkf_permute(g, NAME(nm, "%s.sort_keys.by_round", name), bucket, swap),
                             offsets);
    keys = vkf_reshape(g, NAME(nm, "%s.sort_keys", name), keys, 3, ks);
    vkf_value sorted = vkf_argsort(g, NAME(nm, "%s.sorted", name), keys); /* i32 [B, H, R·N] */
    undo = vkf_argsort(g, NAME(nm, "%s.undo", name),
                       vkf_cast(g, NAME(nm, "%s.sorted.f32", name), sorted, VKF_F32));
    /* Positions of the sorted tokens, sorted % N: rows of a table [R·N, 1] of i % N. */
    int64_t ts[2] = {rn, 1}, nn = n;
    vkf_value pos = vkf_gather(g, NAME(nm, "%s.sorted_positions", name),
                               vkf_reformer_lsh_const(w, g,
                                         NAME(key, "reformer.lsh.mod.%lld.%lld", (long long)rn,
                                              (long long)n),
                                         2, ts, fill_mod, &nn),
                               sorted); /* [B, H, R·N, 1] */
    /* Rows of the [B·H·N, ...] tables: pos + (b·H + h)·N; of the [B·N, 1] mask: pos + b·N. */
    int64_t ro[4] = {b, h, 1, 1}, bo[4] = {b, 1, 1, 1}, ids3[3] = {b, h, rn};
    int64_t step_n = n;
    vkf_value row_ids = vkf_cast(
        g, NAME(nm, "%s.row_ids", name),
        vkf_add(g, NAME(nm, "%s.row_ids.f32", name), pos,
                vkf_reformer_lsh_const(w, g, NAME(key, "reformer.lsh.row_offsets.%lld.%lld.%lld", (long long)b,
                                     (long long)h, (long long)n),
                          4, ro, fill_step, &step_n)),
        VKF_I32);
    row_ids = vkf_reshape(g, NAME(nm, "%s.row_ids.flat", name), row_ids, 3, ids3);
    vkf_value mask_ids = vkf_cast(
        g, NAME(nm, "%s.mask_ids", name),
        vkf_add(g, NAME(nm, "%s.mask_ids.f32", name), pos,
                vkf_reformer_lsh_const(w, g, NAME(key, "reformer.lsh.batch_offsets.%lld.%lld", (long long)b,
                                     (long long)n),
                          4, bo, fill_step, &step_n)),
        VKF_I32);
    mask_ids = vkf_reshape(g, NAME(nm, "%s.mask_ids.flat", name), mask_ids, 3, ids3);
    vkf_value both[2] = {qh, vh};
    int64_t tab[2] = {bh * n, 2 * dh};
    vkf_value table = vkf_reshape(g, NAME(nm, "%s.table", name),
                                  vkf_concat(g, NAME(nm, "%s.qkv", name), both, 2, 3), 2, tab);
    vkf_value rows = vkf_gather(g, NAME(nm, "%s.sorted_rows", name), table, row_ids);
    int64_t cs[4] = {bh, t, l, dh}, c1[4] = {bh, t, l, 1}, k1[4] = {bh, t, 1, win};
    qs = vkf_reshape(g, NAME(nm, "%s.q", name), vkf_slice(g, NAME(nm, "%s.q.rows", name), rows, 3, 0, dh), 4, cs);
    vs = vkf_reshape(g, NAME(nm, "%s.v", name), vkf_slice(g, NAME(nm, "%s.v.rows", name), rows, 3, dh, 2 * dh), 4, cs);
    int64_t mtab[2] = {b * n, 1};
    vkf_value km = vkf_gather(g, NAME(nm, "%s.sorted_mask", name),
                              vkf_reshape(g, NAME(nm, "%s.mask_table", name), maskf, 2, mtab),
                              mask_ids); /* [B, H, R·N, 1] */
    posq = vkf_reshape(g, NAME(nm, "%s.query_positions", name), pos, 4, c1);
    posk = vkf_reshape(g, NAME(nm, "%s.key_positions", name),
                       vkf_reformer_look_adjacent(g, NAME(nm, "%s.key_positions.adjacent", name),
                                                  posq, t, before, after),
                       4, k1);
    keymask = vkf_reshape(g, NAME(nm, "%s.key_mask", name),
                          vkf_reformer_look_adjacent(
                              g, NAME(nm, "%s.key_mask.adjacent", name),
                              vkf_reshape(g, NAME(nm, "%s.key_mask.chunks", name), km, 4, c1), t,
                              before, after),
                          4, k1);
    int64_t uo[4] = {b, h, 1, 1}, step_rn = rn;
    rowoff = vkf_reformer_lsh_const(w, g,
                       NAME(key, "reformer.lsh.undo_offsets.%lld.%lld.%lld", (long long)b,
                            (long long)h, (long long)rn),
                       4, uo, fill_step, &step_rn);
  }
  /* _len_and_dim_norm: keys q / sqrt(mean(q²) + 1e-6) / sqrt(dh); queries stay q. */
  vkf_norm_options no = {.eps = 1e-6f};
  vkf_value ks = vkf_scale(g, NAME(nm, "%s.k", name), vkf_rmsnorm(g, NAME(nm, "%s.k.norm", name), qs, &no),
                           (float)(1.0 / sqrt((double)dh)));
  vkf_value kadj = vkf_reformer_look_adjacent(g, NAME(nm, "%s.k.adjacent", name), ks, t, before, after);
  vkf_value vadj = vkf_reformer_look_adjacent(g, NAME(nm, "%s.v.adjacent", name), vs, t, before, after);
  vkf_matmul_options tb = {.transpose_b = 1};
  vkf_value s = vkf_matmul(g, NAME(nm, "%s.scores", name), qs, kadj, &tb); /* [B·H, T, L, W·L] */
  /* d = query position - key position (integers); self: d == 0; causal: d >= 0. */
  vkf_value d = vkf_sub(g, NAME(nm, "%s.distance", name), posq, posk);
  vkf_value self = vkf_relu(g, NAME(nm, "%s.self", name),
                            vkf_add(g, NAME(nm, "%s.self.pre", name), vkf_reformer_lsh_scalar(w, g, 1.0f),
                                    vkf_scale(g, NAME(nm, "%s.self.neg", name),
                                              vkf_reformer_lsh_abs(g, NAME(nm, "%s.self.abs", name), d), -1.0f)));
  vkf_value ok = keymask;
  if (p->causal) {
    vkf_value ge = vkf_reformer_lsh_nonneg(w, g, NAME(nm, "%s.causal", name), d);
    ok = vkf_mul(g, NAME(nm, "%s.visible", name), ok, ge);
  }
  vkf_value other = vkf_add(g, NAME(nm, "%s.other", name), vkf_reformer_lsh_scalar(w, g, 1.0f),
                            vkf_scale(g, NAME(nm, "%s.other.neg", name), self, -1.0f));
  vkf_value masked = vkf_add(g, NAME(nm, "%s.masked", name), vkf_reformer_lsh_scalar(w, g, 1.0f),
                             vkf_scale(g, NAME(nm, "%s.masked.neg", name), ok, -1.0f));
  vkf_value keep = vkf_mul(g, NAME(nm, "%s.keep", name), ok, other);
  vkf_value fill = vkf_add(
      g, NAME(nm, "%s.fill", name),
      vkf_scale(g, NAME(nm, "%s.fill.masked", name),
                vkf_mul(g, NAME(nm, "%s.fill.masked.other", name), masked, other), -LSH_MASK_VALUE),
      vkf_scale(g, NAME(nm, "%s.fill.self", name), self, -LSH_SELF_MASK_VALUE));
  s = vkf_add(g, NAME(nm, "%s.scores.masked", name),
              vkf_mul(g, NAME(nm, "%s.scores.kept", name), s, keep), fill);
  /* torch.logsumexp per query, lg = m + log(l) rounded in f32 as torch rounds it (a token that
   * sees only itself has m = -1e5, where the rounding of log(l) and of the rounds' normaliser
   * shows in Hugging Face's outputs), and each round's output exp(s - lg)·v = u·exp(m - lg). */
  vkf_value m = vkf_reduce(g, NAME(nm, "%s.max", name), s, VKF_REDUCE_MAX, 3);
  vkf_value e = vkf_exp(g, NAME(nm, "%s.exp", name), vkf_sub(g, NAME(nm, "%s.shifted", name), s, m));
  vkf_value lsum = vkf_reduce(g, NAME(nm, "%s.sum", name), e, VKF_REDUCE_SUM, 3);
  vkf_value u = vkf_matmul(g, NAME(nm, "%s.context", name), e, vadj, NULL); /* [B·H, T, L, dh] */
  vkf_value lg = vkf_add(g, NAME(nm, "%s.logits", name), m,
                         ln(g, w, NAME(nm, "%s.log_sum", name), lsum));
  vkf_value o = vkf_mul(g, NAME(nm, "%s.round_out", name), u,
                        vkf_exp(g, NAME(nm, "%s.round_scale", name),
                                vkf_sub(g, NAME(nm, "%s.round_shift", name), m, lg)));
  vkf_value out;
  static const uint32_t ax[4] = {0, 2, 1, 3};
  int64_t bhnd[4] = {b, h, n, dh}, merged[3] = {b, n, h * dh};
  if (plain) {
    out = o;
  } else {
    /* Back to each round's token order, then the rounds weighted by exp(lg_r - logsumexp_r lg). */
    vkf_value parts[2] = {o, lg};
    int64_t pt[2] = {bh * rn, dh + 1}, ids3[3] = {b, h, rn}, i4[4] = {b, h, rn, 1};
    vkf_value packed = vkf_reshape(g, NAME(nm, "%s.packed", name),
                                   vkf_concat(g, NAME(nm, "%s.state", name), parts, 2, 3), 2, pt);
    vkf_value uf = vkf_reshape(g, NAME(nm, "%s.undo.rows", name),
                               vkf_cast(g, NAME(nm, "%s.undo.f32", name), undo, VKF_F32), 4, i4);
    vkf_value uids = vkf_cast(g, NAME(nm, "%s.undo_ids", name),
                              vkf_add(g, NAME(nm, "%s.undo_ids.f32", name), uf, rowoff), VKF_I32);
    uids = vkf_reshape(g, NAME(nm, "%s.undo_ids.flat", name), uids, 3, ids3);
    int64_t bs[4] = {bh, r, n, dh + 1};
    vkf_value back = vkf_reshape(g, NAME(nm, "%s.unsorted", name),
                                 vkf_gather(g, NAME(nm, "%s.unsort", name), packed, uids), 4, bs);
    vkf_value ob = vkf_slice(g, NAME(nm, "%s.round_o", name), back, 3, 0, dh);
    vkf_value lb = vkf_slice(g, NAME(nm, "%s.round_lg", name), back, 3, dh, dh + 1);
    vkf_value mm = vkf_reduce(g, NAME(nm, "%s.rounds.max", name), lb, VKF_REDUCE_MAX, 1);
    vkf_value ssum = vkf_reduce(
        g, NAME(nm, "%s.rounds.sum", name),
        vkf_exp(g, NAME(nm, "%s.rounds.exp", name), vkf_sub(g, NAME(nm, "%s.rounds.shift", name), lb, mm)),
        VKF_REDUCE_SUM, 1);
    vkf_value lse = vkf_add(g, NAME(nm, "%s.rounds.lse", name), mm,
                            ln(g, w, NAME(nm, "%s.rounds.log_sum", name), ssum));
    vkf_value pr = vkf_exp(g, NAME(nm, "%s.rounds.prob", name),
                           vkf_sub(g, NAME(nm, "%s.rounds.logprob", name), lb, lse));
    out = vkf_reduce(g, NAME(nm, "%s.merged_rounds", name),
                     vkf_mul(g, NAME(nm, "%s.rounds.weighted", name), ob, pr), VKF_REDUCE_SUM,
                     1); /* [B·H, 1, N, dh] */
  }
  out = vkf_reshape(g, NAME(nm, "%s.out", name), out, 4, bhnd);
  out = vkf_permute(g, NAME(nm, "%s.merge", name), out, ax);
  return vkf_reshape(g, NAME(nm, "%s.merged", name), out, 3, merged);
}
