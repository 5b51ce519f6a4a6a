/* KV_WRITE on the device (shaders/kv_write.comp) against the interpreter, exactly: f32 and f16
 * caches, f32 and f16 rows, rows as a strided permute view, per-batch starts at 0, in the middle,
 * near the end (rows past C skipped) and negative (rows before 0 skipped), a cache written in
 * slices (clamped maxStorageBufferRange), and an attention reading the updated caches with
 * kv_len = start + T. Few pipelines: two kv_write variants, two copies, one attention. */
#include "tests/op_case.h"

/* Data movement with an exact f32 -> f16 rounding on both sides: everything matches exactly. */
static const op_tol TOL_EXACT = {0.0, 0.0};
/* The attention kernel against the fp64-accumulating reference on small values. */
static const op_tol TOL_ATTN = {2e-6, 1e-5};

enum { B = 4, H = 2, C = 16, T = 5, D = 8 };
/* Batch 0 at the start, 1 in the middle, 2 near the end (rows 3, 4 land at 16, 17: skipped),
 * 3 before the start (rows 0, 1 land at -2, -1: skipped). */
static const int32_t k_starts[B] = {0, 6, 13, -2};

/* cache [B, H, C, D] in `cache_dt`; rows a permute of a [B, T, H, D] input in `rows_dt`. */
static vkf_value kv_case(op_case *c, vkf_dtype cache_dt, vkf_dtype rows_dt, int ints) {
  int64_t cs[4] = {B, H, C, D}, rs[4] = {B, T, H, D}, ss[1] = {B};
  vkf_value cache = op_case_input_ex(c, "cache", cache_dt, 4, cs, -50, 50, 1);
  vkf_value rows_in = op_case_input_ex(c, "rows_in", rows_dt, 4, rs, -60, 60, ints);
  vkf_value rows = vkf_permute(c->g, "rows", rows_in, (const uint32_t[]){0, 2, 1, 3});
  vkf_value start = op_case_input_i32(c, "start", 1, ss, k_starts, B);
  return vkf_kv_write(c->g, "kv", cache, rows, start);
}

static void writes(gpu_test *t) {
  {
    op_case c = op_case_begin("kv_f32");
    op_case_run(t, &c, kv_case(&c, VKF_F32, VKF_F32, 0), TOL_EXACT,
                "f32 cache, strided f32 rows, starts 0/6/13/-2");
  }
  {
    /* Non-integer f32 rows into an f16 cache: the write rounds to nearest even, as CAST does. */
    op_case c = op_case_begin("kv_f16");
    op_case_run(t, &c, kv_case(&c, VKF_F16, VKF_F32, 0), TOL_EXACT,
                "f16 cache, strided f32 rows (rounded)");
  }
  {
    /* Contiguous rows, T = 1 (a decode step), every batch at a different position. */
    op_case c = op_case_begin("kv_decode");
    int64_t cs[4] = {B, H, C, D}, rs[4] = {B, H, 1, D}, ss[1] = {B};
    static const int32_t pos[B] = {15, 0, 7, 16}; /* the last one is past the end: skipped */
    vkf_value cache = op_case_input_ex(&c, "cache", VKF_F32, 4, cs, -9, 9, 1);
    vkf_value rows = op_case_input_ex(&c, "rows", VKF_F32, 4, rs, 10, 30, 1);
    vkf_value start = op_case_input_i32(&c, "start", 1, ss, pos, B);
    op_case_run(t, &c, vkf_kv_write(c.g, "kv", cache, rows, start), TOL_EXACT,
                "f32 decode step, starts 15/0/7/16");
  }
  {
    /* Sliced: with maxStorageBufferRange clamped to one head's slab the write is B*H dispatches. */
    op_case c = op_case_begin("kv_sliced");
    vkf_value kv = kv_case(&c, VKF_F32, VKF_F32, 1);
    vkf_graph_output(c.g, kv, NULL);
    vkf_device_caps caps = *vkf_device_caps_get(t->device);
    caps.max_storage_buffer_range = C * D * 4;
    CHECK_OK(vkf_graph_status(c.g));
    op_check_with(t, c.g, c.in, c.n, &caps, TOL_EXACT, "f32 cache written in B*H slices");
    for (size_t i = 0; i < c.n; i++) free(c.data[i]);
    vkf_graph_destroy(c.g);
  }
}

/* Prefill chunk against a cache: k and v rows written at start[b], then attention of the chunk's
 * queries over the updated caches with kv_len = start + T (starts within capacity here). */
static void attention_after_write(gpu_test *t) {
  static const int32_t starts[B] = {0, 6, 11, 3};
  int32_t lens[B];
  for (int b = 0; b < B; b++) lens[b] = starts[b] + T;
  op_case c = op_case_begin("kv_attention");
  int64_t cs[4] = {B, H, C, D}, rs[4] = {B, T, H, D}, qs[4] = {B, H, T, D}, ss[1] = {B};
  vkf_value kc = op_case_input(&c, "k_cache", VKF_F32, 4, cs, -1, 1);
  vkf_value vc = op_case_input(&c, "v_cache", VKF_F32, 4, cs, -1, 1);
  vkf_value kr = op_case_input(&c, "k_rows", VKF_F32, 4, rs, -1, 1);
  vkf_value vr = op_case_input(&c, "v_rows", VKF_F32, 4, rs, -1, 1);
  vkf_value q = op_case_input(&c, "q", VKF_F32, 4, qs, -1, 1);
  vkf_value start = op_case_input_i32(&c, "start", 1, ss, starts, B);
  vkf_value len = op_case_input_i32(&c, "kv_len", 1, ss, lens, B);
  const uint32_t heads[4] = {0, 2, 1, 3};
  vkf_value k = vkf_kv_write(c.g, "k_write", kc, vkf_permute(c.g, "k_heads", kr, heads), start);
  vkf_value v = vkf_kv_write(c.g, "v_write", vc, vkf_permute(c.g, "v_heads", vr, heads), start);
  vkf_value o = vkf_attention(c.g, "att", q, k, v, &(vkf_attention_options){.kv_len = len});
  op_case_run(t, &c, o, TOL_ATTN, "attention over caches updated by kv_write, kv_len = start+T");
}

int main(void) {
  gpu_test t = gpu_test_start();
  writes(&t);
  attention_after_write(&t);
  return gpu_test_finish(&t);
}
