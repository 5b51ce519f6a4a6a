/* KV_WRITE without a GPU: shape errors name the node, the interpreter writes exactly the rows that
 * land in [0, C) (and never caller memory), dead-node elimination keeps the write, the memory plan
 * and the lowering put the output in the cache's storage, the plan has the dispatch and a barrier
 * before the reader, the verifier rejects stale reads of the overwritten cache, fusion does not
 * move a read past the write, and a cache beyond maxStorageBufferRange is written in slices. */
#include <stdlib.h>
#include <string.h>

#include "graph/base/half.h"
#include "graph/interp/interp.h"
#include "graph/ir/builder.h"
#include "graph/ir/placement.h"
#include "graph/ir/verify.h"
#include "graph/lower/lower.h"
#include "graph/passes/memory_plan.h"
#include "graph/passes/passes.h"
#include "tests/graph/desktop_caps.h"
#include "tests/test_util.h"

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})

static vkf_graph *new_graph(void) {
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create("kv", &g));
  return g;
}

/* The sticky error must be a shape error whose message is exactly `want`. */
static void expect_error(vkf_graph *g, const char *want) {
  vkf_status s = vkf_graph_status(g);
  CHECK_MSG(vkf_status_code_of(s) == VKF_STATUS_SHAPE, "code %s: %s",
            vkf_status_code_name(vkf_status_code_of(s)), s ? vkf_status_message(s) : "ok");
  CHECK_MSG(s && strcmp(vkf_status_message(s), want) == 0, "got \"%s\"\n want \"%s\"",
            s ? vkf_status_message(s) : "ok", want);
  vkf_status_free(s);
  vkf_graph_destroy(g);
}

static void test_shape_errors(void) {
  vkf_graph *g = new_graph();
  vkf_value c = vkf_graph_input(g, "cache", VKF_F32, 3, SHAPE(2, 16, 8));
  vkf_value r = vkf_graph_input(g, "rows", VKF_F32, 3, SHAPE(2, 4, 8));
  vkf_value s = vkf_graph_input(g, "start", VKF_I32, 1, SHAPE(2));
  vkf_kv_write(g, "kv.rank", c, r, s);
  expect_error(g,
               "kv_write \"kv.rank\": cache [2,16,8] and rows [2,4,8] must both be rank 4 "
               "[B, H, *, D]");

  g = new_graph();
  c = vkf_graph_input(g, "cache", VKF_F32, 4, SHAPE(1, 3, 16, 8));
  r = vkf_graph_input(g, "rows", VKF_F32, 4, SHAPE(1, 2, 3, 8));
  s = vkf_graph_input(g, "start", VKF_I32, 1, SHAPE(1));
  vkf_kv_write(g, "kv.heads", c, r, s);
  expect_error(g,
               "kv_write \"kv.heads\": rows [1,2,3,8] do not match cache [1,3,16,8] in B, H or D");

  g = new_graph();
  c = vkf_graph_input(g, "cache", VKF_F32, 4, SHAPE(1, 2, 16, 8));
  r = vkf_graph_input(g, "rows", VKF_F32, 4, SHAPE(1, 2, 3, 4));
  s = vkf_graph_input(g, "start", VKF_I32, 1, SHAPE(1));
  vkf_kv_write(g, "kv.dim", c, r, s);
  expect_error(g, "kv_write \"kv.dim\": rows [1,2,3,4] do not match cache [1,2,16,8] in B, H or D");

  g = new_graph();
  c = vkf_graph_input(g, "cache", VKF_F32, 4, SHAPE(1, 2, 8, 8));
  r = vkf_graph_input(g, "rows", VKF_F32, 4, SHAPE(1, 2, 9, 8));
  s = vkf_graph_input(g, "start", VKF_I32, 1, SHAPE(1));
  vkf_kv_write(g, "kv.cap", c, r, s);
  expect_error(g,
               "kv_write \"kv.cap\": rows [1,2,9,8] hold 9 positions, more than the cache "
               "[1,2,8,8] capacity");

  g = new_graph();
  c = vkf_graph_input(g, "cache", VKF_F32, 4, SHAPE(2, 2, 8, 8));
  r = vkf_graph_input(g, "rows", VKF_F32, 4, SHAPE(2, 2, 1, 8));
  s = vkf_graph_input(g, "start", VKF_F32, 1, SHAPE(2));
  vkf_kv_write(g, "kv.start_dtype", c, r, s);
  expect_error(g, "kv_write \"kv.start_dtype\": start \"start\" must be i32, got f32");

  g = new_graph();
  c = vkf_graph_input(g, "cache", VKF_F32, 4, SHAPE(2, 2, 8, 8));
  r = vkf_graph_input(g, "rows", VKF_F32, 4, SHAPE(2, 2, 1, 8));
  s = vkf_graph_input(g, "start", VKF_I32, 2, SHAPE(2, 1));
  vkf_kv_write(g, "kv.start_shape", c, r, s);
  expect_error(g, "kv_write \"kv.start_shape\": start [2,1], expected i32 [2] or contiguous [2, 2]");

  g = new_graph();
  c = vkf_graph_input(g, "cache", VKF_I32, 4, SHAPE(1, 2, 8, 8));
  r = vkf_graph_input(g, "rows", VKF_F32, 4, SHAPE(1, 2, 1, 8));
  s = vkf_graph_input(g, "start", VKF_I32, 1, SHAPE(1));
  vkf_kv_write(g, "kv.cache_dtype", c, r, s);
  expect_error(g, "kv_write \"kv.cache_dtype\": cache \"cache\" must be f32 or f16, got i32");

  g = new_graph();
  c = vkf_graph_input(g, "cache", VKF_F16, 4, SHAPE(1, 2, 8, 8));
  r = vkf_graph_input(g, "rows", VKF_I32, 4, SHAPE(1, 2, 1, 8));
  s = vkf_graph_input(g, "start", VKF_I32, 1, SHAPE(1));
  vkf_kv_write(g, "kv.rows_dtype", c, r, s);
  expect_error(g, "kv_write \"kv.rows_dtype\": rows \"rows\" must be f32 or f16, got i32");

  /* A strided (permuted) cache is rejected; strided rows are fine. */
  g = new_graph();
  c = vkf_graph_input(g, "cache", VKF_F32, 4, SHAPE(1, 8, 2, 4));
  r = vkf_graph_input(g, "rows", VKF_F32, 4, SHAPE(1, 2, 1, 4));
  s = vkf_graph_input(g, "start", VKF_I32, 1, SHAPE(1));
  vkf_value cp = vkf_permute(g, "cache_t", c, (const uint32_t[]){0, 2, 1, 3});
  vkf_kv_write(g, "kv.strided", cp, r, s);
  expect_error(g, "kv_write \"kv.strided\": cache [1,2,8,4] must be contiguous");
}

/* cache [B=2, H=2, C=4, D=3] constant (borrowed f32 data), rows [2, 2, T=3, 3] a permuted view,
 * start {2, -1}: batch 0 writes positions 2, 3 (row 2 would be 4: skipped), batch 1 writes 0, 1
 * (row 0 would be -1: skipped). The constant's data must be left untouched. */
static void test_interp(void) {
  enum { B = 2, H = 2, C = 4, D = 3, T = 3 };
  static float cache_data[B * H * C * D];
  for (int i = 0; i < B * H * C * D; i++) cache_data[i] = (float)(1000 + i);
  float before[B * H * C * D];
  memcpy(before, cache_data, sizeof before);
  vkf_graph *g = new_graph();
  vkf_value cache = vkf_graph_constant(g, "cache", VKF_F32, 4, SHAPE(B, H, C, D), cache_data);
  vkf_value rows_in = vkf_graph_input(g, "rows_in", VKF_F32, 4, SHAPE(B, T, H, D)); /* [B,T,H,D] */
  vkf_value rows = vkf_permute(g, "rows", rows_in, (const uint32_t[]){0, 2, 1, 3});
  vkf_value start = vkf_graph_input(g, "start", VKF_I32, 1, SHAPE(B));
  vkf_value kv = vkf_kv_write(g, "kv", cache, rows, start);
  vkf_value out = vkf_graph_output(g, kv, "out");
  CHECK_OK(vkf_graph_status(g));
  CHECK(vkf_graph_tensor(g, kv)->base.id == cache.id);
  float rows_data[B * T * H * D];
  for (int i = 0; i < B * T * H * D; i++) rows_data[i] = (float)i;
  int32_t start_data[B] = {2, -1};
  vkf_input_binding in[2] = {{rows_in, rows_data, sizeof rows_data},
                             {start, start_data, sizeof start_data}};
  float got[B * H * C * D];
  vkf_output_binding o = {out, got, sizeof got};
  CHECK_OK(vkf_interp_evaluate(g, in, 2, &o, 1));
  int bad = 0;
  for (int b = 0; b < B; b++)
    for (int h = 0; h < H; h++)
      for (int p = 0; p < C; p++)
        for (int d = 0; d < D; d++) {
          int t = p - start_data[b];
          float want = t >= 0 && t < T ? rows_data[((b * T + t) * H + h) * D + d]
                                       : before[((b * H + h) * C + p) * D + d];
          if (got[((b * H + h) * C + p) * D + d] != want) bad++;
        }
  CHECK_MSG(bad == 0, "interpreter kv_write: %d wrong elements", bad);
  CHECK_MSG(memcmp(before, cache_data, sizeof before) == 0, "the constant's data was written");
  vkf_graph_destroy(g);

  /* f16 cache, f32 rows: values rounded to nearest even on the write. */
  g = new_graph();
  vkf_value c16 = vkf_graph_input(g, "cache", VKF_F16, 4, SHAPE(1, 1, 2, 2));
  vkf_value r32 = vkf_graph_input(g, "rows", VKF_F32, 4, SHAPE(1, 1, 1, 2));
  vkf_value st = vkf_graph_input(g, "start", VKF_I32, 1, SHAPE(1));
  out = vkf_graph_output(g, vkf_kv_write(g, "kv16", c16, r32, st), "out");
  uint16_t c16_data[4] = {0x3c00, 0x4000, 0x4200, 0x4400};
  float r32_data[2] = {1.0f + 0x1p-11f, 3.14159f}; /* a tie (rounds to even: 1.0), and pi */
  int32_t s1 = 1;
  vkf_input_binding in16[3] = {
      {c16, c16_data, sizeof c16_data}, {r32, r32_data, sizeof r32_data}, {st, &s1, sizeof s1}};
  uint16_t got16[4];
  vkf_output_binding o16 = {out, got16, sizeof got16};
  CHECK_OK(vkf_interp_evaluate(g, in16, 3, &o16, 1));
  CHECK(got16[0] == 0x3c00 && got16[1] == 0x4000);
  CHECK_MSG(got16[2] == 0x3c00 && got16[3] == vkf_float_to_half(3.14159f), "f16 row %04x %04x",
            got16[2], got16[3]);
  vkf_graph_destroy(g);
}

/* A prefill-like graph: rows = permute(reshape(x @ w)) [B, H, T, D], written into the cache; the
 * attention reads the updated cache (when `read`), and a separate output keeps the graph alive. */
typedef struct kv_graph {
  vkf_graph *g;
  vkf_value cache, rows, start, kv, att, other;
} kv_graph;

static kv_graph build(int read, int cache_intermediate) {
  kv_graph k = {.g = new_graph()};
  vkf_graph *g = k.g;
  vkf_value x = vkf_graph_input(g, "x", VKF_F32, 3, SHAPE(1, 4, 16));
  vkf_value w = vkf_graph_input(g, "w", VKF_F32, 2, SHAPE(16, 16));
  vkf_value kin = vkf_matmul(g, "k_proj", x, w, NULL);
  vkf_value k4 = vkf_reshape(g, "k_split", kin, 4, SHAPE(1, 4, 2, 8));
  k.rows = vkf_permute(g, "k_heads", k4, (const uint32_t[]){0, 2, 1, 3});
  k.cache = vkf_graph_input(g, "cache", VKF_F32, 4, SHAPE(1, 2, 32, 8));
  if (cache_intermediate) k.cache = vkf_scale(g, "cache_copy", k.cache, 1.0f);
  k.start = vkf_graph_input(g, "start", VKF_I32, 1, SHAPE(1));
  k.kv = vkf_kv_write(g, "kv", k.cache, k.rows, k.start);
  k.other = vkf_graph_output(g, vkf_relu(g, "other", x), "other");
  if (read) {
    vkf_value q = vkf_graph_input(g, "q", VKF_F32, 4, SHAPE(1, 2, 4, 8));
    vkf_value len = vkf_graph_input(g, "kv_len", VKF_I32, 1, SHAPE(1));
    k.att = vkf_attention(g, "att", q, k.kv, k.kv, &(vkf_attention_options){.kv_len = len});
    k.att = vkf_graph_output(g, k.att, "att");
  }
  CHECK_OK(vkf_graph_status(g));
  CHECK_OK(vkf_passes_run(g, &(vkf_pass_options){0}, NULL));
  return k;
}

static int count_op(const vkf_graph *g, vkf_op op) {
  int n = 0;
  for (uint32_t i = 0; i < vkf_graph_node_count(g); i++) n += vkf_graph_node(g, i)->op == op;
  return n;
}

static void test_dce_and_memory_plan(void) {
  /* Nothing reads the write: it and the projection feeding it survive DCE. */
  kv_graph k = build(0, 0);
  CHECK_MSG(count_op(k.g, VKF_OP_KV_WRITE) == 1, "dce removed the kv_write");
  CHECK_MSG(count_op(k.g, VKF_OP_MATMUL) == 1, "dce removed the rows' producer");
  vkf_graph_destroy(k.g);

  /* A cache in the arena: the output has the cache's placement, and the block stays live up to
   * the reader of the output. */
  k = build(1, 1);
  const vkf_memory_plan *mp = vkf_graph_memory_plan(k.g);
  CHECK(mp && mp->valid);
  const vkf_tensor *t = vkf_graph_tensor(k.g, k.kv);
  CHECK(t->base.id == k.cache.id);
  const vkf_tensor_placement *pc = &mp->placements[k.cache.id], *po = &mp->placements[k.kv.id];
  CHECK(pc->in_arena && po->in_arena && po->offset == pc->offset && po->size == pc->size);
  uint32_t att_node = vkf_graph_tensor(k.g, k.att)->producer;
  CHECK_MSG(pc->last_node >= att_node, "cache block dies at #%u before its reader #%u",
            pc->last_node, att_node);
  vkf_device_caps caps = desktop_caps();
  vkf_lowered low;
  CHECK_OK(vkf_lower_graph(k.g, &caps, NULL, &low));
  CHECK(low.tensors[k.kv.id].buffer == low.tensors[k.cache.id].buffer &&
        low.tensors[k.kv.id].offset == low.tensors[k.cache.id].offset);
  vkf_lowered_free(&low);
  vkf_graph_destroy(k.g);
}

/* The plan: the kv_write dispatch writes the cache's input buffer, and the attention that reads
 * it comes after a barrier. */
static void test_plan(void) {
  kv_graph k = build(1, 0);
  vkf_device_caps caps = desktop_caps();
  vkf_lowered low;
  CHECK_OK(vkf_lower_graph(k.g, &caps, NULL, &low));
  uint32_t cache_buf = low.tensors[k.cache.id].buffer;
  CHECK(low.tensors[k.kv.id].buffer == cache_buf);
  CHECK(vkf_plan_buffer_get(low.plan, cache_buf)->kind == VKF_PLAN_BUFFER_INPUT);
  int write_at = -1, read_at = -1;
  for (uint32_t i = 0; i < vkf_plan_dispatch_count(low.plan); i++) {
    const vkf_plan_dispatch *d = vkf_plan_dispatch_get(low.plan, i);
    for (uint32_t j = 0; j < d->binding_count; j++) {
      if (d->bindings[j].buffer != cache_buf) continue;
      if (!strcmp(d->node, "kv") && (d->bindings[j].access & VKF_ACCESS_WRITE)) write_at = (int)i;
      if (!strcmp(d->node, "att") && read_at < 0) read_at = (int)i;
    }
  }
  CHECK_MSG(write_at >= 0 && read_at > write_at, "write at %d, read at %d", write_at, read_at);
  int barrier = 0;
  for (int i = write_at + 1; i <= read_at && write_at >= 0; i++)
    barrier |= vkf_plan_dispatch_get(low.plan, (uint32_t)i)->barrier_before;
  CHECK_MSG(barrier, "no barrier between the kv_write and the attention that reads the cache");
  /* And the text dump shows both. */
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  vkf_plan_dump_text(low.plan, f);
  fclose(f);
  const char *w = strstr(text, "\"kv\" kv_write.comp");
  const char *r = w ? strstr(w, "\"att\" attention") : NULL;
  const char *b = w ? strstr(w, "  barrier\n") : NULL;
  CHECK_MSG(w && r && b && b < r, "plan dump:\n%s", text);
  free(text);
  vkf_lowered_free(&low);
  vkf_graph_destroy(k.g);
}

/* Reading the cache itself after the write (not through the write's output) is a stale read. */
static void test_verifier(void) {
  vkf_graph *g = new_graph();
  vkf_value c = vkf_graph_input(g, "cache", VKF_F32, 4, SHAPE(1, 2, 8, 4));
  vkf_value r = vkf_graph_input(g, "rows", VKF_F32, 4, SHAPE(1, 2, 1, 4));
  vkf_value s = vkf_graph_input(g, "start", VKF_I32, 1, SHAPE(1));
  vkf_value kv = vkf_kv_write(g, "kv", c, r, s);
  vkf_graph_output(g, vkf_relu(g, "fresh", kv), "fresh");
  CHECK_OK(vkf_graph_verify(g));
  vkf_graph_output(g, vkf_relu(g, "stale", vkf_slice(g, "old", c, 2, 0, 4)), "stale");
  CHECK_STATUS(vkf_graph_verify(g), VKF_STATUS_INVALID_GRAPH,
               "slice \"old\": input 0 \"cache\" reads storage that kv_write \"kv\" overwrote in "
               "place");
  vkf_graph_destroy(g);
}

/* old = cache * 2 is computed before the write; fusing it into the add after the write would read
 * the new cache. The passes must keep it separate (the verifier runs after each pass). */
static void test_fusion_keeps_order(void) {
  vkf_graph *g = new_graph();
  vkf_value c = vkf_graph_input(g, "cache", VKF_F32, 4, SHAPE(1, 1, 2, 1));
  vkf_value r = vkf_graph_input(g, "rows", VKF_F32, 4, SHAPE(1, 1, 1, 1));
  vkf_value s = vkf_graph_input(g, "start", VKF_I32, 1, SHAPE(1));
  vkf_value old = vkf_scale(g, "old", c, 2.0f);
  vkf_value kv = vkf_kv_write(g, "kv", c, r, s);
  vkf_value out = vkf_graph_output(g, vkf_add(g, "sum", old, kv), "sum");
  CHECK_OK(vkf_passes_run(g, &(vkf_pass_options){0}, NULL));
  float cache_data[2] = {1, 10}, rows_data[1] = {100}, got[2];
  int32_t start = 1;
  vkf_input_binding in[3] = {{c, cache_data, sizeof cache_data},
                             {r, rows_data, sizeof rows_data},
                             {s, &start, sizeof start}};
  vkf_output_binding o = {out, got, sizeof got};
  CHECK_OK(vkf_interp_evaluate(g, in, 3, &o, 1));
  CHECK_MSG(got[0] == 3 && got[1] == 120, "got %g %g, want 3 120", got[0], got[1]);
  vkf_graph_destroy(g);
}

/* A cache beyond maxStorageBufferRange is written in slices (whole batches, then heads); a head
 * that alone does not fit is an error naming the node. */
static void test_slices(void) {
  vkf_graph *g = new_graph();
  vkf_value c = vkf_graph_input(g, "cache", VKF_F32, 4, SHAPE(2, 4, 64, 16)); /* 4 KiB per head */
  vkf_value r = vkf_graph_input(g, "rows", VKF_F32, 4, SHAPE(2, 4, 3, 16));
  vkf_value s = vkf_graph_input(g, "start", VKF_I32, 1, SHAPE(2));
  vkf_value kv = vkf_kv_write(g, "kv", c, r, s);
  (void)kv;
  CHECK_OK(vkf_passes_run(g, &(vkf_pass_options){0}, NULL));
  static const struct {
    uint32_t range;
    uint32_t dispatches;
  } cases[] = {{1u << 30, 1}, {16384, 2}, {8192, 4}, {4096, 8}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    vkf_device_caps caps = desktop_caps();
    caps.max_storage_buffer_range = cases[i].range;
    vkf_lowered low;
    CHECK_OK(vkf_lower_graph(g, &caps, NULL, &low));
    CHECK_MSG(vkf_plan_dispatch_count(low.plan) == cases[i].dispatches,
              "range %u: %u dispatches, want %u", cases[i].range, vkf_plan_dispatch_count(low.plan),
              cases[i].dispatches);
    uint64_t covered = 0;
    for (uint32_t j = 0; j < vkf_plan_dispatch_count(low.plan); j++) {
      const vkf_plan_dispatch *d = vkf_plan_dispatch_get(low.plan, j);
      CHECK(d->bindings[2].size <= cases[i].range && d->bindings[2].access == VKF_ACCESS_WRITE);
      covered += d->bindings[2].size;
    }
    CHECK(covered == 2 * 4 * 64 * 16 * 4);
    vkf_lowered_free(&low);
  }
  vkf_device_caps caps = desktop_caps();
  caps.max_storage_buffer_range = 2048;
  vkf_lowered low;
  CHECK_STATUS(vkf_lower_graph(g, &caps, NULL, &low), VKF_STATUS_UNSUPPORTED,
               "kv_write \"kv\": one head of cache [2,4,64,16]");
  vkf_graph_destroy(g);
}

int main(void) {
  test_shape_errors();
  test_interp();
  test_dce_and_memory_plan();
  test_plan();
  test_verifier();
  test_fusion_keeps_order();
  test_slices();
  return test_report();
}
