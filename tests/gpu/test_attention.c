/* Fused attention (shaders/attention.comp, split-K + attention_merge.comp) against the CPU
 * interpreter: every mask kind, ragged and cross shapes, every head dim 32..256, fp32 and fp16,
 * fully masked rows, ±1e4 logits in fp16, strided (fused-QKV) inputs, grouped-query heads, and
 * every layout/staging variant forced through the chooser's test hook; the heads merge that writes
 * [B, Nq, H, Dv] directly against the interpreter on the graph before that pass; the adaptive
 * span's per-head ramp (spans shorter than the ramp, fractional, past the sequence; against a
 * cache with kv_len; split-K). */
#include <stdint.h>

#include "graph/ir/builder.h"
#include "graph/lower/lower_attention.h"
#include "graph/passes/memory_plan.h"
#include "graph/passes/passes.h"
#include "tests/op_harness.h"

/* Tolerances, |gpu - ref| <= atol + rtol |ref|. fp32: the kernel sums in fp32 with exp2 where the
 * reference sums in fp64; fp16: the output is rounded to binary16 (relative 2^-11). */
static const op_tol TOL[] = {[VKF_F32] = {2e-5, 1e-4}, [VKF_F16] = {1e-3, 2e-3}};

/* Shape fields in order: B, H, Hkv, Nq, Nk, D, Dv. */
#define SHAPE(B, H, HKV, NQ, NK, D, DV) \
  .b = (B), .h = (H), .hkv = (HKV), .nq = (NQ), .nk = (NK), .d = (D), .dv = (DV)

typedef struct att_case {
  const char *label;
  vkf_dtype dtype;
  int64_t b, h, hkv, nq, nk, d, dv;
  int causal, windowed, wl, wr;
  const int32_t *lens; /* kv_len per batch, NULL: none */
  int bias;            /* 0: none; 1: f32 [1, H, Nq, Nk]; 2: f16 [B, 1, 1, Nk] */
  float range;         /* inputs uniform in [-range, range) */
  float scale;         /* 0: 1/sqrt(D) */
  int qkv_view;        /* q, k, v are permuted slices of one fused [N, 3, H, D] input (B = 1) */
  int merged;          /* the output goes on through permute (0,2,1,3) + reshape to [B, Nq, H*Dv] */
  const float *ramp;   /* adaptive span [H, 2]: (R + z, 1 / R) per head; NULL: none */
  int pad4;            /* q, k, v are columns [4, D + 4) of [.., D + 4] inputs: rows 8-byte
                          aligned only (the tensor-core body's 2-byte staging path) */
} att_case;

typedef struct att_inputs {
  vkf_input_binding bind[6];
  size_t count;
  void *data[6];
} att_inputs;

static void *make_data(vkf_dtype dtype, size_t n, uint32_t seed, float range) {
  float *f = malloc(n * sizeof(float) + 16);
  op_fill_uniform(f, n, seed, -range, range);
  if (dtype == VKF_F32) return f;
  uint16_t *h = malloc(n * sizeof(uint16_t) + 16);
  op_to_half(f, h, n);
  free(f);
  return h;
}

static void add_input(vkf_graph *g, att_inputs *in, const char *name, vkf_dtype dtype,
                      uint32_t rank, const int64_t *shape, uint32_t seed, float range,
                      const void *values, vkf_value *out_value) {
  *out_value = vkf_graph_input(g, name, dtype, rank, shape);
  size_t n = 1;
  for (uint32_t i = 0; i < rank; i++) n *= (size_t)shape[i];
  void *data;
  if (values) { /* given i32 or f32 values */
    data = malloc(n * 4);
    memcpy(data, values, n * 4);
  } else {
    data = make_data(dtype, n, seed, range);
  }
  in->data[in->count] = data;
  in->bind[in->count] = (vkf_input_binding){*out_value, data, n * vkf_dtype_size(dtype)};
  in->count++;
}

/* Builds the one-node graph of `c` into *out_graph with its inputs. */
static vkf_graph *build(const att_case *c, att_inputs *in) {
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create(c->label, &g));
  memset(in, 0, sizeof *in);
  vkf_value q, k, v;
  float range = c->range ? c->range : 1.0f;
  if (c->qkv_view) {
    /* [N, 3, H, D] -> slice s of axis 1 -> [N, 1, H, D] -> permute to [1, H, N, D] */
    int64_t shape[4] = {c->nq, 3, c->h, c->d};
    vkf_value qkv;
    add_input(g, in, "qkv", c->dtype, 4, shape, 7, range, NULL, &qkv);
    vkf_value *dst[3] = {&q, &k, &v};
    for (int s = 0; s < 3; s++) {
      vkf_value sl = vkf_slice(g, NULL, qkv, 1, s, s + 1);
      *dst[s] = vkf_permute(g, NULL, sl, (const uint32_t[]){1, 2, 0, 3});
    }
  } else {
    int64_t qs[4] = {c->b, c->h, c->nq, c->d}, ks[4] = {c->b, c->hkv, c->nk, c->d},
            vs[4] = {c->b, c->hkv, c->nk, c->dv};
    if (c->pad4) qs[3] += 4, ks[3] += 4, vs[3] += 4;
    add_input(g, in, "q", c->dtype, 4, qs, 11, range, NULL, &q);
    add_input(g, in, "k", c->dtype, 4, ks, 23, range, NULL, &k);
    add_input(g, in, "v", c->dtype, 4, vs, 37, 1.0f, NULL, &v);
    if (c->pad4) {
      q = vkf_slice(g, NULL, q, 3, 4, c->d + 4);
      k = vkf_slice(g, NULL, k, 3, 4, c->d + 4);
      v = vkf_slice(g, NULL, v, 3, 4, c->dv + 4);
    }
  }
  vkf_attention_options o = {.scale = c->scale,
                             .causal = c->causal,
                             .windowed = c->windowed,
                             .window_left = c->wl,
                             .window_right = c->wr};
  if (c->lens) add_input(g, in, "kv_len", VKF_I32, 1, (int64_t[]){c->b}, 0, 0, c->lens, &o.kv_len);
  if (c->bias == 1)
    add_input(g, in, "bias", VKF_F32, 4, (int64_t[]){1, c->h, c->nq, c->nk}, 41, 2.0f, NULL,
              &o.bias);
  if (c->bias == 2)
    add_input(g, in, "bias", VKF_F16, 4, (int64_t[]){c->b, 1, 1, c->nk}, 43, 3.0f, NULL, &o.bias);
  if (c->ramp)
    add_input(g, in, "ramp", VKF_F32, 2, (int64_t[]){c->h, 2}, 0, 0, c->ramp, &o.ramp);
  vkf_value y = vkf_attention(g, "attn", q, k, v, &o);
  if (c->merged) { /* the reshape of the permuted view adds the contiguous copy */
    y = vkf_permute(g, "merge", y, (const uint32_t[]){0, 2, 1, 3});
    y = vkf_reshape(g, "flat", y, 3, (const int64_t[]){c->b, c->nq, c->h * c->dv});
  }
  vkf_graph_output(g, y, "y");
  return g;
}

static void free_inputs(att_inputs *in) {
  for (size_t i = 0; i < in->count; i++) free(in->data[i]);
}

/* argv[1], when given, runs only the cases whose label or variant contains it (development). */
static const char *g_filter;

static int selected(const char *label, const char *variant) {
  return !g_filter || strstr(label, g_filter) || (variant && strstr(variant, g_filter));
}

/* Caps the cases lower for (NULL: the device's); the cooperative-matrix runs steer the tile. */
static const vkf_device_caps *g_caps;

static void run_case(gpu_test *t, const att_case *c, const vkf_attention_force *force,
                     const char *variant) {
  if (!selected(c->label, variant)) return;
  att_inputs in;
  vkf_graph *g = build(c, &in);
  char label[200];
  snprintf(label, sizeof label, "%s [%s]", c->label, variant);
  vkf_lower_attention_set_force(force);
  op_check_with(t, g, in.bind, in.count, g_caps, TOL[c->dtype], label);
  vkf_lower_attention_set_force(NULL);
  free_inputs(&in);
  vkf_graph_destroy(g);
}

/* Split-K must equal the unsplit kernel (and both the interpreter). */
static void check_split(gpu_test *t, const att_case *c) {
  if (!selected(c->label, "split")) return;
  att_inputs in;
  vkf_graph *g = build(c, &in);
  float *out[2] = {NULL, NULL};
  size_t count[2] = {0, 0};
  for (int i = 0; i < 2; i++) {
    vkf_attention_force f = {.splits = i ? 7 : 1};
    vkf_lower_attention_set_force(&f);
    CHECK_OK(op_run_device(t, g, in.bind, in.count, 0, &out[i], &count[i]));
    char label[200];
    snprintf(label, sizeof label, "%s [splits %u]", c->label, f.splits);
    op_check(t, g, in.bind, in.count, TOL[c->dtype], label);
  }
  vkf_lower_attention_set_force(NULL);
  int bad = 0;
  for (size_t i = 0; out[0] && out[1] && i < count[0]; i++)
    bad +=
        !(fabs(out[0][i] - out[1][i]) <= TOL[c->dtype].atol + TOL[c->dtype].rtol * fabs(out[0][i]));
  CHECK_MSG(out[0] && out[1] && count[0] == count[1] && bad == 0,
            "%s: split-K differs from unsplit in %d elements", c->label, bad);
  free(out[0]);
  free(out[1]);
  free_inputs(&in);
  vkf_graph_destroy(g);
}

/* The heads merge: the pass folds the output's permute + copy into the attention node (the kernel
 * writes [B, Nq, H, Dv]); the device result of the merged graph, unsplit and (when `split`) split
 * 7 ways, must match the interpreter on the graph as built (where the permute and copy still
 * run). */
static void check_merged(gpu_test *t, const att_case *c, int split, vkf_attention_layout layout) {
  if (!selected(c->label, "merged")) return;
  att_inputs in;
  vkf_graph *g = build(c, &in);
  size_t count = (size_t)(c->b * c->nq * c->h * c->dv);
  float *ref = malloc(count * sizeof(float));
  CHECK_OK(op_run_interp(g, in.bind, in.count, 0, ref, count));
  uint32_t copies_before = 0, copies = 0, merged = 0, rewrites = 0;
  for (uint32_t i = 0; i < vkf_graph_node_count(g); i++)
    copies_before += vkf_graph_node(g, i)->op == VKF_OP_COPY;
  CHECK_OK(vkf_pass_fuse_attention(g, NULL, &rewrites));
  for (uint32_t i = 0; i < vkf_graph_node_count(g); i++) {
    const vkf_node *n = vkf_graph_node(g, i);
    copies += n->op == VKF_OP_COPY; /* the graph output's own copy of the reshape view stays */
    merged += n->op == VKF_OP_ATTENTION && n->attrs.attention.merge_heads;
  }
  CHECK_MSG(rewrites == 1 && copies + 1 == copies_before && merged == 1,
            "%s: %u rewrites, %u -> %u copies, %u merged", c->label, rewrites, copies_before,
            copies, merged);
  for (uint32_t splits = 1; splits <= (split ? 7u : 1u); splits += 6) {
    vkf_attention_force f = {.layout = layout, .splits = splits};
    vkf_lower_attention_set_force(&f);
    float *out = NULL;
    size_t n = 0;
    CHECK_OK(op_run_device(t, g, in.bind, in.count, 0, &out, &n));
    int bad = 0;
    for (size_t i = 0; out && i < count; i++)
      bad += !(fabs(out[i] - ref[i]) <= TOL[c->dtype].atol + TOL[c->dtype].rtol * fabs(ref[i]));
    CHECK_MSG(out && n == count && bad == 0, "%s [merged, splits %u]: %d elements differ",
              c->label, splits, bad);
    free(out);
  }
  vkf_lower_attention_set_force(NULL);
  free(ref);
  free_inputs(&in);
  vkf_graph_destroy(g);
}

/* The head-dim sweep's plan for `d` on `caps`, less what only sizes it by d: the body, its
 * block, staging, lanes and (broadcast body) the CPU_DMAX register bound; and the class of d that
 * the body's last partial block depends on (DV % 32 in the broadcast body's 32-dim output
 * blocks, DV % lanes on LANES, DV % 8 in the tiled body's 8-dim register tiles). */
static void sweep_plan(const vkf_device_caps *caps, int64_t d, uint32_t sig[12], uint32_t *cls) {
  vkf_attention_shape s = {.batch = 1, .heads = 2, .nq = 9, .nk = 13, .d = (uint32_t)d,
                           .dv = (uint32_t)d, .dtype = (d / 8) % 2 ? VKF_F16 : VKF_F32};
  vkf_attention_config c;
  vkf_attention_choose(caps, &s, NULL, &c);
  const char *dmax = c.cpu_bcast ? vkf_attention_cpu_dmax_define(s.d, s.dv) : "";
  uint32_t v[12] = {(uint32_t)c.layout, c.br, c.bc, c.lanes, c.rows, c.local_size,
                    (uint32_t)c.stage_kv, (uint32_t)c.subgroup_reduce, (uint32_t)c.cpu_bcast,
                    c.splits, c.coopmat_tile, dmax[0] ? (uint32_t)atoi(dmax + 9) : 0};
  memcpy(sig, v, sizeof v);
  uint32_t unit = c.cpu_bcast                               ? 32
                  : c.layout == VKF_ATTENTION_LAYOUT_LANES ? c.lanes
                  : c.layout == VKF_ATTENTION_LAYOUT_TILED ? 8
                                                           : 1;
  *cls = s.dv % unit;
}

/* The head dims the sweep runs (keep[(d - 32) / 8] for d = 32..256 in steps of 8): the dims fall
 * into runs of consecutive dims that plan alike but for d (sweep_plan); a run is covered by its
 * first and last dim and, between them, the first dim of each class of d and of each dtype that
 * no kept dim of the run shows. A dim dropped compiles the same body, block and staging as a kept
 * dim of its class and dtype, only at another size (each size was a pipeline of its own, and cold
 * lavapipe JIT of each was most of this test's time). */
#define SWEEP_DIMS 29
static void sweep_select(const vkf_device_caps *caps, int keep[SWEEP_DIMS]) {
  uint32_t sig[SWEEP_DIMS][12], cls[SWEEP_DIMS];
  for (int i = 0; i < SWEEP_DIMS; i++) sweep_plan(caps, 32 + 8 * i, sig[i], &cls[i]);
  for (int a = 0, b; a < SWEEP_DIMS; a = b + 1) {
    for (b = a; b + 1 < SWEEP_DIMS && !memcmp(sig[b + 1], sig[a], sizeof sig[a]); b++) {
    }
    uint64_t classes = 0; /* bit cls of the kept dims */
    int dtypes = 0;       /* bit 1: f16 kept, bit 0: f32 */
    for (int i = a; i <= b; i++) {
      int f16 = ((32 + 8 * i) / 8) % 2;
      keep[i] = i == a || i == b || !(classes >> cls[i] & 1) || !(dtypes >> f16 & 1);
      if (i == a) { /* the last dim is kept whatever comes between */
        classes |= 1ull << cls[b];
        dtypes |= 1 << (((32 + 8 * b) / 8) % 2);
      }
      if (keep[i]) classes |= 1ull << cls[i], dtypes |= 1 << f16;
    }
  }
}

int main(int argc, char **argv) {
  g_filter = argc > 1 ? argv[1] : NULL;
  gpu_test t = gpu_test_start();
  const vkf_device_caps *caps = vkf_device_caps_get(t.device);
  static const int32_t lens2[] = {20, 0}; /* batch 1 is fully masked: zeros */
  static const int32_t lens3[] = {1, 77, 40};
  /* Adaptive spans, (R + z, 1 / R): R 8 with z 0, 13.5 and 100 (past the sequence); R 16 with z
   * 2.5 (shorter than the ramp) and 0.25. */
  static const float ramp3[] = {8.0f, 0.125f, 21.5f, 0.125f, 108.0f, 0.125f};
  static const float ramp2[] = {18.5f, 0.0625f, 16.25f, 0.0625f};

  /* Masks, shapes and dtypes, each under every variant. */
  const att_case cases[] = {
      {.label = "plain cross", .dtype = VKF_F32, SHAPE(2, 3, 3, 37, 45, 64, 64)},
      {.label = "N=1", .dtype = VKF_F32, SHAPE(1, 2, 2, 1, 1, 32, 32)},
      {.label = "kv_len", .dtype = VKF_F32, SHAPE(2, 2, 2, 19, 33, 32, 32), .lens = lens2},
      {.label = "causal square", .dtype = VKF_F32, SHAPE(1, 2, 2, 70, 70, 32, 32), .causal = 1},
      {.label = "causal Nq<Nk (cache)",
       .dtype = VKF_F16,
       SHAPE(3, 2, 2, 5, 77, 48, 48),
       .causal = 1,
       .lens = lens3},
      {.label = "causal Nq>Nk (masked rows)",
       .dtype = VKF_F32,
       SHAPE(1, 1, 1, 20, 10, 32, 32),
       .causal = 1},
      {.label = "window 7/3",
       .dtype = VKF_F32,
       SHAPE(1, 2, 2, 66, 66, 32, 32),
       .windowed = 1,
       .wl = 7,
       .wr = 3},
      {.label = "causal + window left 9",
       .dtype = VKF_F16,
       SHAPE(1, 2, 2, 50, 90, 32, 32),
       .causal = 1,
       .windowed = 1,
       .wl = 9,
       .wr = -1},
      {.label = "bias [1,H,Nq,Nk]", .dtype = VKF_F32, SHAPE(2, 3, 3, 17, 29, 40, 40), .bias = 1},
      {.label = "bias f16 [B,1,1,Nk] + kv_len",
       .dtype = VKF_F16,
       SHAPE(2, 2, 2, 9, 33, 32, 32),
       .lens = lens2,
       .bias = 2},
      {.label = "grouped-query 4/2, Dv != D", .dtype = VKF_F32, SHAPE(1, 4, 2, 21, 30, 64, 32)},
      {.label = "fused QKV view", .dtype = VKF_F32, SHAPE(1, 3, 3, 45, 45, 32, 32), .qkv_view = 1},
      {.label = "ramp causal",
       .dtype = VKF_F32,
       SHAPE(1, 3, 3, 70, 70, 32, 32),
       .causal = 1,
       .ramp = ramp3},
      {.label = "ramp cache kv_len + bias, fp16",
       .dtype = VKF_F16,
       SHAPE(3, 2, 2, 5, 77, 48, 48),
       .lens = lens3,
       .bias = 2,
       .ramp = ramp2},
      {.label = "ramp grouped-query 4/2 + window",
       .dtype = VKF_F32,
       SHAPE(2, 4, 2, 33, 40, 64, 64),
       .causal = 1,
       .windowed = 1,
       .wl = 20,
       .wr = -1,
       .ramp = (const float[]){3.0f, 1.0f, 1.5f, 0.5f, 60.0f, 0.1f, 11.0f, 0.25f}},
      {.label = "fp16 logits +-1e4",
       .dtype = VKF_F16,
       SHAPE(1, 2, 2, 13, 21, 32, 32),
       .range = 60.0f,
       .scale = 1.0f},
  };
  const struct {
    const char *name;
    vkf_attention_force force;
  } variants[] = {
      {"chooser", {.layout = VKF_ATTENTION_LAYOUT_AUTO}},
      {"row plain staged", {.layout = VKF_ATTENTION_LAYOUT_ROW, .stage_kv = 1}},
      {"row plain in place", {.layout = VKF_ATTENTION_LAYOUT_ROW, .stage_kv = -1}},
      {"lanes staged", {.layout = VKF_ATTENTION_LAYOUT_LANES, .stage_kv = 1}},
      {"lanes in place", {.layout = VKF_ATTENTION_LAYOUT_LANES, .stage_kv = -1}},
      {"tiled", {.layout = VKF_ATTENTION_LAYOUT_TILED}},
      {"chooser, storage buffers", {.layout = VKF_ATTENTION_LAYOUT_AUTO, .no_texel = 1}},
  };
  for (size_t vi = 0; vi < sizeof variants / sizeof variants[0]; vi++)
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
      run_case(&t, &cases[ci], &variants[vi].force, variants[vi].name);
  /* Tensor cores where the device has them (lavapipe 26 in the cooperative-matrix lane): every
   * f16 case whose head dims are whole tiles; the others fall back to the chooser's body. */
  for (uint32_t tile = 8; tile <= 16; tile *= 2) {
    if (!(caps->coopmat_tiles & tile)) continue;
    vkf_device_caps steered = *caps;
    steered.coopmat_gemm_tile = tile; /* each tile the device allows (16 on lavapipe 26 through
                                         VK_NV_cooperative_matrix2's flexible dimensions) */
    g_caps = &steered;
    vkf_attention_force cm = {.layout = VKF_ATTENTION_LAYOUT_COOPMAT};
    char name[32];
    snprintf(name, sizeof name, "coopmat %u", tile);
    /* a tile the device only emulates (16 on lavapipe's 8-lane subgroups: each pipeline takes
     * LLVM minutes) runs head dims 64 and 128 on a smaller shape, with a causal mask and grouped
     * heads; the native tile every f16 case and head dims 32..128: 32, 48, 64, 80 and 128 (the
     * body runs D / CM whole tiles up to its 128 bound: 96 and 112 were only more trips of the
     * loops 80 and 128 take, at LLVM minutes each) */
    int native = tile == caps->coopmat_gemm_tile;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0] && native; ci++)
      if (cases[ci].dtype == VKF_F16) run_case(&t, &cases[ci], &cm, name);
    for (int64_t d = 32; d <= 128; d += 16) {
      if (d % tile || (!native && d % 64) || d == 96 || d == 112) continue;
      char label[64];
      snprintf(label, sizeof label, "coopmat head dim %lld", (long long)d);
      att_case c = {.label = label, .dtype = VKF_F16, SHAPE(2, 4, 2, 70, 83, d, d),
                    .causal = d % 32 == 0};
      if (!native) c.b = 1, c.h = 2, c.hkv = 1, c.nq = 40, c.nk = 45;
      run_case(&t, &c, &cm, name);
    }
    /* The one-pass body's per-tile rescale of O (logits +-1e4 over several key tiles: a row's
     * max jumps by thousands) and its 2-byte staging (rows not 16-byte aligned); head dim 64, the
     * pipeline above. */
    const att_case extra[] = {
        {.label = "coopmat rescale, logits +-1e4 over 3 key tiles", .dtype = VKF_F16,
         SHAPE(1, 2, 2, 37, 83, 64, 64), .range = 60.0f, .scale = 1.0f},
        {.label = "coopmat unaligned rows", .dtype = VKF_F16, SHAPE(1, 2, 1, 37, 45, 64, 64),
         .pad4 = 1},
    };
    for (size_t ci = 0; ci < sizeof extra / sizeof extra[0]; ci++)
      run_case(&t, &extra[ci], &cm, name);
    g_caps = NULL;
  }

  /* Head dims 32..256 (multiples of 8), small ragged N, fp32 and fp16 alternating: every dim
   * where this device's choice changes (sweep_select), not the dims between that plan alike. */
  int keep[SWEEP_DIMS], kept = 0;
  sweep_select(caps, keep);
  for (int64_t d = 32; d <= 256; d += 8) {
    if (!keep[(d - 32) / 8]) continue;
    kept++;
    char label[64];
    snprintf(label, sizeof label, "head dim %lld", (long long)d);
    att_case c = {.label = label,
                  .dtype = (d / 8) % 2 ? VKF_F16 : VKF_F32,
                  SHAPE(1, 2, 2, 9, 13, d, d),
                  .causal = d % 3 == 0};
    run_case(&t, &c, NULL, "chooser");
  }
  printf("head dim sweep: %d of %d dims run:", kept, SWEEP_DIMS);
  for (int i = 0; i < SWEEP_DIMS; i++)
    if (keep[i]) printf(" %d", 32 + 8 * i);
  printf(" (each other dim plans as a kept one of its class does)\n");
  /* The other layout on a few head dims, including the largest (in place on small devices). */
  for (int64_t d = 32; d <= 256; d += 112) {
    att_case c = {.label = "head dim, other layout", .dtype = VKF_F32, SHAPE(1, 2, 2, 9, 13, d, d)};
    vkf_attention_force f = {.layout = caps->kind == VKF_DEVICE_KIND_CPU
                                           ? VKF_ATTENTION_LAYOUT_LANES
                                           : VKF_ATTENTION_LAYOUT_ROW};
    run_case(&t, &c, &f, "other layout");
  }
  /* The register-tiled body at every block the chooser picks from (the head dims and shared
   * memory set it: 64x32 up to Dv 128 at 48 KiB, smaller past that or on a phone's 16 KiB) and on
   * ragged shapes: rows not filling a block, keys not filling a tile, Dv not a multiple of 8. */
  {
    static const int64_t dims[][2] = {{32, 32}, {40, 24}, {64, 64}, {72, 72}, {96, 96},
                                      {128, 128}, {128, 100}, {160, 160}};
    vkf_attention_force tl = {.layout = VKF_ATTENTION_LAYOUT_TILED};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
      char label[64];
      snprintf(label, sizeof label, "tiled D %lld Dv %lld", (long long)dims[i][0],
               (long long)dims[i][1]);
      att_case c = {.label = label,
                    .dtype = i % 2 ? VKF_F16 : VKF_F32,
                    SHAPE(2, 4, 2, 83, 71, dims[i][0], dims[i][1]),
                    .causal = i % 3 == 0,
                    .lens = i % 3 == 1 ? (const int32_t[]){71, 38} : NULL};
      run_case(&t, &c, &tl, "tiled");
    }
    vkf_device_caps phone = *caps;
    phone.kind = VKF_DEVICE_KIND_INTEGRATED_GPU;
    phone.max_shared_memory_size = 16384;
    g_caps = &phone;
    run_case(&t,
             &(att_case){.label = "tiled 16 KiB", .dtype = VKF_F32, SHAPE(1, 2, 2, 50, 45, 64, 64),
                         .causal = 1},
             &tl, "tiled");
    g_caps = NULL;
  }

  /* A longer sequence crossing many tiles, fp16. */
  run_case(&t,
           &(att_case){.label = "N=300 fp16", .dtype = VKF_F16, SHAPE(1, 2, 2, 300, 300, 64, 64)},
           NULL, "chooser");

  /* Split-K (decoding against a long cache): forced 7 splits vs 1, with masks. */
  static const int32_t lens_dec[] = {2900, 1700};
  check_split(
      &t, &(att_case){.label = "decode Nq=1", .dtype = VKF_F32, SHAPE(1, 2, 2, 1, 3000, 64, 64)});
  check_split(&t, &(att_case){.label = "decode Nq=1 ramp kv_len",
                              .dtype = VKF_F32,
                              SHAPE(2, 2, 2, 1, 3000, 64, 64),
                              .lens = lens_dec,
                              .ramp = (const float[]){520.0f, 1.0f / 64, 1000.5f, 1.0f / 300}});
  check_split(&t, &(att_case){.label = "decode Nq=4 causal kv_len fp16",
                              .dtype = VKF_F16,
                              SHAPE(2, 2, 1, 4, 3000, 64, 64),
                              .causal = 1,
                              .lens = lens_dec});
  /* Decoding on the LANES body in blocks of 1 and 2 rows against 4100 keys, one split asked
   * for: one workgroup's loops would pass lavapipe's loop-iteration limit (caps.h; ~2000 keys at
   * one row staged, ~4000 at 16 rows, and it then silently dropped the rest of the keys), so the
   * chooser splits the keys anyway. */
  for (int64_t nq = 1; nq <= 2; nq++) {
    att_case c = {.label = nq == 1 ? "lanes decode Nq=1 Nk=4100" : "lanes decode Nq=2 Nk=4100",
                  .dtype = VKF_F32,
                  SHAPE(1, 1, 1, nq, 4100, 64, 64)};
    vkf_attention_force f = {
        .layout = VKF_ATTENTION_LAYOUT_LANES, .stage_kv = nq == 1 ? 1 : -1, .splits = 1};
    vkf_attention_shape s = {
        .batch = 1, .heads = 1, .nq = (uint32_t)nq, .nk = 4100, .d = 64, .dv = 64, .dtype = VKF_F32};
    vkf_attention_config cfg;
    vkf_attention_choose(caps, &s, &f, &cfg);
    CHECK_MSG(cfg.layout != VKF_ATTENTION_LAYOUT_LANES || cfg.br == (uint32_t)nq,
              "LANES decode of %lld rows: blocks of %u rows", (long long)nq, cfg.br);
    run_case(&t, &c, &f, "lanes long");
  }
  /* Heads merged into the output layout: a cross shape with padding, and fp16 decoding with
   * grouped-query heads (the split-K merge kernel writes the merged layout too). Shapes and
   * dtypes as in cases above, so these compile no pipeline of their own (the layout is a
   * push-constant flag). */
  static const int32_t lens_m[] = {40, 9};
  check_merged(&t, &(att_case){.label = "merged heads cross kv_len",
                               .dtype = VKF_F32,
                               SHAPE(2, 3, 3, 37, 45, 64, 64),
                               .lens = lens_m,
                               .merged = 1},
               0, VKF_ATTENTION_LAYOUT_AUTO);
  check_merged(&t, &(att_case){.label = "merged heads decode fp16",
                               .dtype = VKF_F16,
                               SHAPE(2, 2, 1, 4, 700, 64, 64),
                               .causal = 1,
                               .merged = 1},
               1, VKF_ATTENTION_LAYOUT_AUTO);
  /* Grouped-query decoding on the LANES body: the query heads of one kv head are the rows of one
   * workgroup (GQA_ROWS), against the same body one head per workgroup; groups of 3 (SmolLM2's
   * 9/3, a row count no power of two) and 4, 1 and 3 queries, masks, an f16 bias, kv_len, staged
   * and in place, split 5 ways and not. */
  {
    static const int32_t lens_g[] = {300, 171};
    const att_case gq[] = {
        {.label = "gqa decode 9/3 Nq=1 causal kv_len", .dtype = VKF_F32,
         SHAPE(2, 9, 3, 1, 300, 64, 64), .causal = 1, .lens = lens_g},
        {.label = "gqa decode 8/2 Nq=3 window bias f16", .dtype = VKF_F16,
         SHAPE(1, 8, 2, 3, 150, 32, 48), .causal = 1, .windowed = 1, .wl = 100, .wr = -1,
         .bias = 2},
    };
    for (size_t ci = 0; ci < sizeof gq / sizeof gq[0]; ci++)
      for (int staged = -1; staged <= 1; staged += 2)
        for (int gqa = -1; gqa <= 0; gqa++)
          for (uint32_t splits = 1; splits <= 5; splits += 4) {
            vkf_attention_force f = {.layout = VKF_ATTENTION_LAYOUT_LANES, .stage_kv = staged,
                                     .splits = splits, .gqa = gqa};
            const att_case *c = &gq[ci];
            vkf_attention_shape s = {.batch = (uint32_t)c->b, .heads = (uint32_t)c->h,
                                     .nq = (uint32_t)c->nq, .nk = (uint32_t)c->nk,
                                     .d = (uint32_t)c->d, .dv = (uint32_t)c->dv,
                                     .dtype = c->dtype, .group = (uint32_t)(c->h / c->hkv)};
            vkf_attention_config cfg;
            vkf_attention_choose(caps, &s, &f, &cfg);
            CHECK_MSG(gqa < 0 ? cfg.gqa_group == 0 : cfg.gqa_group == s.group,
                      "%s: gqa %d gives a group of %u", c->label, gqa, cfg.gqa_group);
            char variant[64];
            snprintf(variant, sizeof variant, "lanes %s, %s, %u splits",
                     staged > 0 ? "staged" : "in place", gqa < 0 ? "a head per workgroup" : "gqa rows",
                     splits);
            run_case(&t, c, &f, variant);
          }
    /* the heads merged into the output layout from grouped rows, split and not (2 queries: with
     * one the permuted output is already contiguous and nothing merges) */
    check_merged(&t, &(att_case){.label = "merged heads gqa decode 9/3", .dtype = VKF_F32,
                                 SHAPE(2, 9, 3, 2, 300, 64, 64), .causal = 1, .lens = lens_g,
                                 .merged = 1},
                 1, VKF_ATTENTION_LAYOUT_LANES);
  }
  /* A GPU-class device runs prefill on the tiled body (64 rows x 32 keys at 48 KiB) and decode
   * steps on split-K; head dims whose tiles fit nowhere fall back to the LANES body. */
  {
    vkf_device_caps gpu = *caps;
    gpu.kind = VKF_DEVICE_KIND_DISCRETE_GPU;
    gpu.max_shared_memory_size = 49152;
    gpu.max_workgroup_invocations = 1024;
    gpu.max_workgroup_size[0] = 1024;
    gpu.coopmat_gemm_tile = 0;
    vkf_attention_config cfg;
    vkf_attention_shape s = {
        .batch = 1, .heads = 12, .nq = 197, .nk = 197, .d = 64, .dv = 64, .dtype = VKF_F32};
    vkf_attention_choose(&gpu, &s, NULL, &cfg);
    CHECK_MSG(cfg.layout == VKF_ATTENTION_LAYOUT_TILED && cfg.br == 64 && cfg.bc == 32,
              "GPU prefill D 64: layout %d, %ux%u", (int)cfg.layout, cfg.br, cfg.bc);
    s.nq = 1, s.nk = 32768;
    vkf_attention_choose(&gpu, &s, NULL, &cfg);
    CHECK_MSG(cfg.layout == VKF_ATTENTION_LAYOUT_LANES && cfg.splits > 1,
              "GPU decode: layout %d, %u splits", (int)cfg.layout, cfg.splits);
    s.nq = s.nk = 300, s.d = s.dv = 256;
    vkf_attention_choose(&gpu, &s, NULL, &cfg);
    CHECK_MSG(cfg.layout == VKF_ATTENTION_LAYOUT_LANES, "GPU D 256: layout %d", (int)cfg.layout);
  }
  /* Tensor cores: K/V tiles double-buffered (attention_coopmat.glsl's CM_STAGES 2) where both
   * stages fit beside the scores and probabilities, else staged once a tile. */
  {
    vkf_device_caps gpu = {.kind = VKF_DEVICE_KIND_DISCRETE_GPU,
                           .subgroup_size = 32,
                           .min_subgroup_size = 32,
                           .max_subgroup_size = 32,
                           .max_workgroup_invocations = 1024,
                           .max_workgroup_size = {1024, 1024, 64},
                           .max_shared_memory_size = 49152,
                           .coopmat_gemm_tile = 16,
                           .subgroup_ops = VKF_SUBGROUP_BASIC | VKF_SUBGROUP_SHUFFLE,
                           .max_workgroup_count = {65535, 65535, 65535}};
    static const struct {
      uint32_t tile, shared, d, stages;
    } want[] = {{16, 49152, 128, 2}, {16, 49152, 64, 2}, {16, 32768, 64, 2}, {16, 32768, 128, 1},
                {8, 32768, 88, 2},   {8, 32768, 96, 1},  {8, 32768, 128, 1}, {8, 49152, 128, 2}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
      gpu.coopmat_gemm_tile = want[i].tile;
      gpu.max_shared_memory_size = want[i].shared;
      vkf_attention_shape s = {.batch = 1,
                               .heads = 12,
                               .nq = 197,
                               .nk = 197,
                               .d = want[i].d,
                               .dv = want[i].d,
                               .dtype = VKF_F16};
      vkf_attention_config cfg;
      vkf_attention_choose(&gpu, &s, NULL, &cfg);
      CHECK_MSG(cfg.layout == VKF_ATTENTION_LAYOUT_COOPMAT && cfg.kv_stages == want[i].stages &&
                    cfg.shared_size <= want[i].shared,
                "coopmat tile %u, %u bytes, D %u: layout %d, %u K/V stages (want %u), %u bytes",
                want[i].tile, want[i].shared, want[i].d, (int)cfg.layout, cfg.kv_stages,
                want[i].stages, cfg.shared_size);
    }
  }
  /* The chooser splits on its own for Nq=1 against a long KV. */
  {
    vkf_attention_shape s = {
        .batch = 1, .heads = 12, .nq = 1, .nk = 32768, .d = 64, .dv = 64, .dtype = VKF_F32};
    vkf_attention_config cfg;
    vkf_attention_choose(caps, &s, NULL, &cfg);
    CHECK_MSG(cfg.splits > 1, "Nq=1, Nk=32768: %u splits", cfg.splits);
    CHECK(cfg.shared_size <= caps->max_shared_memory_size);
    CHECK(cfg.local_size <= caps->max_workgroup_invocations);
  }
  /* Chooser invariants on this device and on a GPU-class device clamped like a phone: tiles are
   * whole multiples of 8 and of the lanes per row, shared memory and workgroups fit. */
  {
    vkf_device_caps phone = *caps;
    phone.kind = VKF_DEVICE_KIND_INTEGRATED_GPU;
    phone.max_shared_memory_size = 16384;
    phone.subgroup_ops = VKF_SUBGROUP_BASIC;
    phone.max_workgroup_invocations = 128;
    const vkf_device_caps *all[2] = {caps, &phone};
    static const uint32_t nks[] = {1, 45, 77, 3000, 32768}, ds[] = {32, 40, 64, 128, 136, 256};
    int bad = 0;
    for (int ci = 0; ci < 2; ci++)
      for (size_t a = 0; a < sizeof nks / sizeof nks[0]; a++)
        for (size_t e = 0; e < sizeof ds / sizeof ds[0]; e++) {
          vkf_attention_shape s = {.batch = 1,
                                   .heads = 4,
                                   .nq = nks[a] < 100 ? nks[a] : 1,
                                   .nk = nks[a],
                                   .d = ds[e],
                                   .dv = ds[e],
                                   .dtype = VKF_F32};
          vkf_attention_config cfg;
          vkf_attention_choose(all[ci], &s, NULL, &cfg);
          bad += cfg.bc % 8 != 0 || cfg.bc % cfg.lanes != 0 ||
                 (cfg.layout == VKF_ATTENTION_LAYOUT_LANES && cfg.bc / cfg.lanes > 8) ||
                 cfg.shared_size > all[ci]->max_shared_memory_size ||
                 cfg.local_size > all[ci]->max_workgroup_invocations || cfg.splits < 1 ||
                 (uint64_t)cfg.chunk * cfg.splits < s.nk || cfg.chunk % cfg.bc != 0;
        }
    CHECK_MSG(bad == 0, "%d chooser results break an invariant", bad);
  }
  /* N = 4096, 12 heads: the plan holds q, k, v and the output and nothing that grows with N²
   * (the unfused path needs 12·4096² scores), only split-K partials (N rows) where the body
   * would pass the device's loop-iteration limit (lavapipe's LANES body at subgroups other than
   * 8). Lowering only, no run. */
  {
    vkf_graph *g = NULL;
    CHECK_OK(vkf_graph_create("n4096", &g));
    int64_t shape[4] = {1, 12, 4096, 64};
    vkf_value q = vkf_graph_input(g, "q", VKF_F32, 4, shape);
    vkf_value k = vkf_graph_input(g, "k", VKF_F32, 4, shape);
    vkf_value v = vkf_graph_input(g, "v", VKF_F32, 4, shape);
    vkf_graph_output(g, vkf_attention(g, "attn", q, k, v, NULL), "y");
    CHECK_OK(vkf_memory_plan_build(g, NULL));
    vkf_lowered low;
    vkf_status st = vkf_lower_graph(g, caps, NULL, &low);
    CHECK_OK(st);
    if (!st) {
      uint64_t total = 0;
      for (uint32_t i = 0; i < vkf_plan_buffer_count(low.plan); i++)
        total += vkf_plan_buffer_get(low.plan, i)->size;
      vkf_attention_shape s = {
          .batch = 1, .heads = 12, .nq = 4096, .nk = 4096, .d = 64, .dv = 64, .dtype = VKF_F32};
      vkf_attention_config cfg;
      vkf_attention_choose(caps, &s, NULL, &cfg);
      uint64_t partials = cfg.splits > 1 ? 12ull * 4096 * cfg.splits * (64 + 2) * 4 : 0;
      CHECK_MSG(total == 4ull * 12 * 4096 * 64 * 4 + partials,
                "N=4096 plan holds %llu bytes (%u splits)", (unsigned long long)total, cfg.splits);
      vkf_lowered_free(&low);
    }
    vkf_graph_destroy(g);
  }
  return gpu_test_finish(&t);
}
