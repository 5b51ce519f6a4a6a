/* Memory planner properties over hundreds of random graphs (fixed seed): tensors live at the same
 * time never share bytes, views sit inside their base, pinned tensors stay out of the arena, and
 * peak <= naive sum. Random graphs also go through the whole pass pipeline with the interpreter's
 * outputs unchanged. Finally a ViT-B/16-shaped graph reports its peak / naive ratio. */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "graph/interp/interp.h"
#include "graph/ir/builder.h"
#include "graph/ir/dump.h"
#include "graph/ir/verify.h"
#include "graph/passes/memory_plan.h"
#include "graph/passes/passes.h"
#include "tests/test_util.h"

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(uint32_t n) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng_state >> 33) % n;
}

enum { POOL = 1 << 16 };
static float pool[POOL]; /* constant data for every random weight */

/* Checks the plan against lifetimes recomputed here from the node list. */
static void check_plan(const vkf_graph *g, size_t alignment) {
  const vkf_memory_plan *mp = vkf_graph_memory_plan(g);
  CHECK(mp->valid && mp->alignment == alignment);
  uint32_t bound = vkf_graph_tensor_bound(g), nodes = vkf_graph_node_count(g);
  static uint32_t first[4096], last[4096];
  CHECK(bound <= 4096);
  for (uint32_t id = 1; id < bound; id++) {
    const vkf_tensor *t = vkf_graph_tensor(g, (vkf_value){id});
    first[id] = last[id] = t->producer;
  }
  for (uint32_t i = 0; i < nodes; i++) {
    const vkf_node *n = vkf_graph_node(g, i);
    for (uint32_t s = 0; s < n->input_count; s++) {
      if (!n->inputs[s].id) continue;
      uint32_t base = vkf_graph_tensor(g, n->inputs[s])->base.id;
      if (last[base] == VKF_NO_NODE || last[base] < i) last[base] = i;
    }
  }
  size_t naive = 0, peak = 0;
  int bad = 0;
  for (uint32_t a = 1; a < bound; a++) {
    const vkf_tensor *ta = vkf_graph_tensor(g, (vkf_value){a});
    const vkf_tensor_placement *pa = &mp->placements[a];
    if (ta->removed) continue;
    int pinned = ta->role != VKF_ROLE_INTERMEDIATE;
    const vkf_tensor *base = vkf_graph_tensor(g, ta->base);
    if (ta->base.id != a) { /* a view: inside its base's block */
      if (pa->in_arena != mp->placements[ta->base.id].in_arena) bad++;
      if (pa->in_arena && pa->offset != mp->placements[ta->base.id].offset +
                                            (size_t)ta->offset * vkf_dtype_size(ta->dtype))
        bad++;
      continue;
    }
    if (pinned || base->role != VKF_ROLE_INTERMEDIATE) {
      if (pa->in_arena) bad++;
      continue;
    }
    if (!pa->in_arena) {
      bad++;
      continue;
    }
    if (pa->offset % alignment || pa->size % alignment || pa->size < vkf_tensor_size(ta)) bad++;
    naive += pa->size;
    if (pa->offset + pa->size > peak) peak = pa->offset + pa->size;
    for (uint32_t b = a + 1; b < bound; b++) {
      const vkf_tensor *tb = vkf_graph_tensor(g, (vkf_value){b});
      const vkf_tensor_placement *pb = &mp->placements[b];
      if (tb->removed || tb->base.id != b || !pb->in_arena) continue;
      int live_together = first[a] <= last[b] && first[b] <= last[a];
      int bytes_overlap = pa->offset < pb->offset + pb->size && pb->offset < pa->offset + pa->size;
      if (live_together && bytes_overlap) {
        bad++;
        fprintf(stderr, "overlap: \"%s\" [%u,%u] @%zu+%zu and \"%s\" [%u,%u] @%zu+%zu\n", ta->name,
                first[a], last[a], pa->offset, pa->size, tb->name, first[b], last[b], pb->offset,
                pb->size);
      }
    }
  }
  CHECK(bad == 0);
  CHECK(naive == mp->naive_size && peak == mp->peak_size);
  CHECK(mp->peak_size <= mp->naive_size);
}

static vkf_value rand_const(vkf_graph *g, uint32_t rank, const int64_t *shape) {
  int64_t n = 1;
  for (uint32_t i = 0; i < rank; i++) n *= shape[i];
  VKF_ASSERT(n <= POOL);
  return vkf_graph_constant(g, "w", VKF_F32, rank, shape, pool + rnd((uint32_t)(POOL - n + 1)));
}

/* Appends one random op reading from `vals`; returns the new value (or NO_VALUE if skipped). */
static vkf_value random_op(vkf_graph *g, const vkf_value *vals, uint32_t count) {
  vkf_value x = vals[rnd(count)];
  const vkf_tensor *t = vkf_graph_tensor(g, x);
  uint32_t r = t->rank;
  int64_t last = t->shape[r - 1];
  int64_t shape[4];
  memcpy(shape, t->shape, sizeof shape);
  switch (rnd(12)) {
    case 0:
      return vkf_gelu(g, NULL, x);
    case 1:
      return vkf_scale(g, NULL, x, 0.5f);
    case 2: { /* same-shape binary with another value if one matches, else a bias */
      for (uint32_t tries = 0; tries < 8; tries++) {
        vkf_value y = vals[rnd(count)];
        const vkf_tensor *ty = vkf_graph_tensor(g, y);
        if (ty->rank == r && memcmp(ty->shape, t->shape, r * sizeof shape[0]) == 0)
          return rnd(2) ? vkf_add(g, NULL, x, y) : vkf_mul(g, NULL, x, y);
      }
      return vkf_add(g, NULL, x, rand_const(g, 1, &last));
    }
    case 3: {
      int64_t out = 1 + rnd(12);
      vkf_value w = rand_const(g, 2, (const int64_t[]){last, out});
      vkf_matmul_options o = {0};
      if (rnd(4) == 0) { /* epilogue from the builder */
        o.bias = rand_const(g, 1, &out);
        o.activation = (vkf_activation)(rnd(5));
        return vkf_matmul(g, NULL, x, w, &o);
      }
      vkf_value y = vkf_matmul(g, NULL, x, w, &o); /* written unfused, for fuse_gemm */
      if (rnd(2)) y = vkf_add(g, NULL, y, rand_const(g, 1, &out));
      if (rnd(2)) y = vkf_activation_apply(g, NULL, y, (vkf_activation)(1 + rnd(4)));
      return y;
    }
    case 4:
      return vkf_layernorm(g, NULL, x, NULL);
    case 5:
      return vkf_softmax(g, NULL, x, &(vkf_softmax_options){.causal = (int)rnd(2)});
    case 6: { /* permute view of the last two axes (if any) */
      if (r < 2) return vkf_tanh(g, NULL, x);
      uint32_t axes[4] = {0, 1, 2, 3};
      axes[r - 2] = r - 1;
      axes[r - 1] = r - 2;
      return vkf_permute(g, NULL, x, axes);
    }
    case 7: { /* reshape (a view, or copy + view for strided inputs) */
      if (r >= 4) return vkf_silu(g, NULL, x);
      int64_t flat[4];
      memcpy(flat, shape, sizeof flat);
      flat[r] = 1;
      return vkf_reshape(g, NULL, x, r + 1, flat);
    }
    case 8: { /* slice view */
      if (last < 2) return vkf_relu(g, NULL, x);
      int64_t start = rnd((uint32_t)last - 1);
      return vkf_slice(g, NULL, x, r - 1, start, start + 1 + rnd((uint32_t)(last - start - 1)));
    }
    case 9:
      return vkf_concat(g, NULL, (const vkf_value[]){x, x}, 2, r - 1);
    case 10: { /* an unfused attention pattern on [B, N, D] values */
      if (r != 3) return vkf_exp(g, NULL, vkf_scale(g, NULL, x, 0.1f));
      vkf_value s = vkf_matmul(g, NULL, x, x, &(vkf_matmul_options){.transpose_b = 1});
      s = vkf_scale(g, NULL, s, 0.25f);
      s = vkf_softmax(g, NULL, s, NULL);
      return vkf_matmul(g, NULL, s, x, NULL);
    }
    default:
      return vkf_copy(g, NULL, x);
  }
}

static vkf_graph *random_graph(vkf_value *out_input, int64_t *out_input_count) {
  vkf_graph *g;
  CHECK_OK(vkf_graph_create("random", &g));
  uint32_t rank = 2 + rnd(2);
  int64_t shape[3] = {1 + rnd(3), 1 + rnd(6), 1 + rnd(8)};
  vkf_value vals[256];
  uint32_t count = 0;
  vals[count++] = vkf_graph_input(g, "x", VKF_F32, rank, shape);
  *out_input = vals[0];
  *out_input_count = shape[0] * shape[1] * (rank == 3 ? shape[2] : 1);
  uint32_t ops = 5 + rnd(40);
  for (uint32_t i = 0; i < ops && count < 256; i++) {
    vkf_value v = random_op(g, vals, count);
    if (!v.id) break;
    const vkf_tensor *t = vkf_graph_tensor(g, v);
    if (vkf_tensor_element_count(t) > 4096) continue; /* keep the interpreter fast */
    vals[count++] = v;
  }
  uint32_t outputs = 1 + rnd(3);
  for (uint32_t i = 0; i < outputs; i++)
    vkf_graph_output(g, vals[count - 1 - rnd(count < 4 ? count : 4)], NULL);
  return g;
}

static void test_random_graphs(void) {
  for (uint32_t i = 0; i < POOL; i++) pool[i] = (float)((int)rnd(2001) - 1000) / 1000.0f;
  static float xin[4096], before[3][65536], after[3][65536];
  int checked_interp = 0;
  uint32_t rewrites[VKF_MAX_PASSES] = {0};
  for (int iter = 0; iter < 400; iter++) {
    vkf_value x;
    int64_t xcount;
    vkf_graph *g = random_graph(&x, &xcount);
    vkf_status st = vkf_graph_status(g);
    CHECK_MSG(st == VKF_OK, "iteration %d: %s", iter, vkf_status_message(st));
    vkf_status_free(st);
    if (!vkf_graph_output_count(g)) {
      vkf_graph_destroy(g);
      continue;
    }
    size_t alignment = (size_t)16 << rnd(5);
    /* Plan the raw graph (views, dead nodes and all) ... */
    CHECK_OK(vkf_memory_plan_build(g, &(vkf_memory_plan_options){.alignment = alignment}));
    check_plan(g, alignment);
    /* ... then run the whole pipeline on it, checking outputs before and after. */
    for (int64_t k = 0; k < xcount; k++) xin[k] = (float)((int)rnd(2001) - 1000) / 500.0f;
    uint32_t outs = vkf_graph_output_count(g);
    vkf_output_binding ob[3];
    int do_interp = iter % 4 == 0;
    for (uint32_t o = 0; o < outs && do_interp; o++) {
      vkf_value v = vkf_graph_output_at(g, o);
      ob[o] = (vkf_output_binding){v, before[o], vkf_tensor_size(vkf_graph_tensor(g, v))};
    }
    vkf_input_binding ib = {x, xin, (size_t)xcount * sizeof(float)};
    if (do_interp) CHECK_OK(vkf_interp_evaluate(g, &ib, 1, ob, outs));
    char *before_text = NULL; /* printed when the pipeline changes an output */
    size_t before_size = 0;
    FILE *mem = open_memstream(&before_text, &before_size);
    if (mem) {
      CHECK_OK(vkf_dump_text(g, mem));
      fclose(mem);
    }
    vkf_pass_report report;
    st = vkf_passes_run(g, &(vkf_pass_options){.alignment = alignment, .skip = "", .dump = ""},
                        &report);
    CHECK_MSG(st == VKF_OK, "iteration %d: %s", iter, vkf_status_message(st));
    vkf_status_free(st);
    check_plan(g, alignment);
    for (uint32_t p = 0; p < report.count; p++) rewrites[p] += report.passes[p].rewrites;
    if (do_interp) {
      for (uint32_t o = 0; o < outs; o++) ob[o].data = after[o];
      CHECK_OK(vkf_interp_evaluate(g, &ib, 1, ob, outs));
      for (uint32_t o = 0; o < outs; o++) {
        size_t n = ob[o].size / sizeof(float);
        double worst = 0;
        for (size_t k = 0; k < n; k++)
          worst = fmax(worst, fabs(after[o][k] - before[o][k]) / (1.0 + fabs(before[o][k])));
        CHECK_MSG(worst <= 1e-5, "iteration %d output %u: relative diff %g", iter, o, worst);
        if (worst > 1e-5) {
          fprintf(stderr, "before:\n%s\nafter:\n", before_text ? before_text : "");
          CHECK_OK(vkf_dump_text(g, stderr));
        }
      }
      checked_interp++;
    }
    free(before_text);
    vkf_graph_destroy(g);
  }
  CHECK(checked_interp >= 90);
  /* The random graphs must actually exercise every rewrite. */
  /* (fuse_norm and fuse_glu, 4 and 5, have no rmsnorm or stacked gate+up to fold here:
   * tests/graph/test_fuse_norm.c and test_fuse_glu.c cover them) */
  printf("random graphs: dce %u, fuse_attention %u, fuse_gemm %u, fuse_elementwise %u rewrites\n",
         rewrites[1], rewrites[2], rewrites[3], rewrites[6]);
  for (int p = 1; p <= 6; p++) CHECK(p == 4 || p == 5 || rewrites[p] >= 20);
}

/* ViT-B/16 at 224x224: 12 blocks, 197 tokens, hidden 768, 12 heads, MLP 3072, written unfused
 * the way a model builder might (the passes fuse it). Weights have no data: planning only. */
static vkf_graph *vit_b16(void) {
  enum { E = 768, T = 197, HEADS = 12, HD = 64, M = 3072, BLOCKS = 12 };
  vkf_graph *g;
  CHECK_OK(vkf_graph_create("vit-b16", &g));
#define CONST(name, ...) vkf_graph_constant(g, name, VKF_F32, __VA_ARGS__, NULL)
  vkf_value img = vkf_graph_input(g, "pixel_values", VKF_F32, 4, SHAPE(1, 3, 224, 224));
  vkf_value x =
      vkf_patch_embed(g, "embeddings.patch", img, CONST("patch.w", 4, SHAPE(E, 3, 16, 16)),
                      CONST("patch.b", 1, SHAPE(E)));
  x = vkf_concat(g, "embeddings.cls", (const vkf_value[]){CONST("cls", 3, SHAPE(1, 1, E)), x}, 2,
                 1);
  x = vkf_add(g, "embeddings.pos", x, CONST("pos", 3, SHAPE(1, T, E)));
  for (int l = 0; l < BLOCKS; l++) {
    char nm[64];
#define NM(s) (snprintf(nm, sizeof nm, "blocks.%d.%s", l, s), nm)
    vkf_value ln_g = CONST(NM("ln.g"), 1, SHAPE(E)), ln_b = CONST(NM("ln.b"), 1, SHAPE(E));
    vkf_value h = vkf_layernorm(g, NM("ln1"), x, &(vkf_norm_options){.gamma = ln_g, .beta = ln_b});
    vkf_value qkv = vkf_matmul(g, NM("attn.qkv"), h, CONST(NM("qkv.w"), 2, SHAPE(E, 3 * E)), NULL);
    qkv = vkf_add(g, NM("attn.qkv.bias"), qkv, CONST(NM("qkv.b"), 1, SHAPE(3 * E)));
    qkv = vkf_reshape(g, NM("attn.split"), qkv, 4, SHAPE(1, T, 3 * HEADS, HD));
    vkf_value qkvs[3];
    for (int i = 0; i < 3; i++) {
      vkf_value s = vkf_slice(g, NULL, qkv, 2, i * HEADS, (i + 1) * HEADS);
      qkvs[i] = vkf_permute(g, NULL, s, (const uint32_t[]){0, 2, 1, 3});
    }
    vkf_value s =
        vkf_matmul(g, NM("attn.scores"), qkvs[0], qkvs[1], &(vkf_matmul_options){.transpose_b = 1});
    s = vkf_scale(g, NM("attn.scale"), s, 0.125f);
    s = vkf_softmax(g, NM("attn.softmax"), s, NULL);
    vkf_value o = vkf_matmul(g, NM("attn.context"), s, qkvs[2], NULL);
    o = vkf_permute(g, NM("attn.merge"), o, (const uint32_t[]){0, 2, 1, 3});
    o = vkf_reshape(g, NM("attn.flat"), o, 3, SHAPE(1, T, E));
    o = vkf_matmul(g, NM("attn.proj"), o, CONST(NM("proj.w"), 2, SHAPE(E, E)), NULL);
    o = vkf_add(g, NM("attn.proj.bias"), o, CONST(NM("proj.b"), 1, SHAPE(E)));
    x = vkf_add(g, NM("residual1"), o, x);
    h = vkf_layernorm(g, NM("ln2"), x, &(vkf_norm_options){.gamma = ln_g, .beta = ln_b});
    h = vkf_matmul(g, NM("mlp.fc1"), h, CONST(NM("fc1.w"), 2, SHAPE(E, M)), NULL);
    h = vkf_add(g, NM("mlp.fc1.bias"), h, CONST(NM("fc1.b"), 1, SHAPE(M)));
    h = vkf_gelu(g, NM("mlp.act"), h);
    h = vkf_matmul(g, NM("mlp.fc2"), h, CONST(NM("fc2.w"), 2, SHAPE(M, E)), NULL);
    h = vkf_add(g, NM("mlp.fc2.bias"), h, CONST(NM("fc2.b"), 1, SHAPE(E)));
    x = vkf_add(g, NM("residual2"), h, x);
#undef NM
  }
  x = vkf_layernorm(g, "final_ln", x, NULL);
  vkf_value cls = vkf_slice(g, "cls_token", x, 1, 0, 1);
  cls = vkf_reshape(g, "cls_flat", cls, 2, SHAPE(1, E));
  vkf_value logits = vkf_matmul(g, "head", cls, CONST("head.w", 2, SHAPE(E, 1000)),
                                &(vkf_matmul_options){.bias = CONST("head.b", 1, SHAPE(1000))});
#undef CONST
  vkf_graph_output(g, logits, "logits");
  CHECK_OK(vkf_graph_status(g));
  return g;
}

static void test_vit_b16(void) {
  const char *skips[2] = {"all", ""};
  const char *labels[2] = {"unfused", "fused"};
  for (int i = 0; i < 2; i++) {
    vkf_graph *g = vit_b16();
    vkf_pass_report report;
    CHECK_OK(vkf_passes_run(g, &(vkf_pass_options){.skip = skips[i], .dump = ""}, &report));
    check_plan(g, 256);
    double ratio = (double)report.peak_size / (double)report.naive_size;
    printf(
        "ViT-B/16 (%s, %u nodes): planner peak %zu bytes (%.2f MiB), naive sum %zu bytes "
        "(%.2f MiB), ratio %.4f\n",
        labels[i], vkf_graph_node_count(g), report.peak_size, report.peak_size / 1048576.0,
        report.naive_size, report.naive_size / 1048576.0, ratio);
    CHECK(ratio < 0.1); /* 12 blocks reuse the same few buffers */
    if (i == 1) {
      uint32_t attn = 0;
      for (uint32_t n = 0; n < vkf_graph_node_count(g); n++)
        attn += vkf_graph_node(g, n)->op == VKF_OP_ATTENTION;
      CHECK(attn == 12);
    }
    vkf_graph_destroy(g);
  }
}

int main(void) {
  test_random_graphs();
  test_vit_b16();
  return test_report();
}
