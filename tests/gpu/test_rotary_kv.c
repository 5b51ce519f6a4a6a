/* The rotary + KV-cache lowering rule (graph/lower/lower_rotary_kv.c, shaders/rotary_kv.comp)
 * against the interpreter: q and k rotated and k, v written into their caches as a decode step
 * builds them (views of one qkv projection, cos and sin [T, D]), exactly as the separate kernels
 * do: a decode step (T = 1) and three rows a batch, grouped-query heads, f32 and f16 caches,
 * starts at 0, in the middle, past the end (skipped) and before 0 (skipped). The plan must be one
 * dispatch where the rule applies, and the separate kernels where k's rotation has another
 * reader (still right). Ragged rows (start and kv_len [2, B]: each row's cache batch after its
 * position): B = 3 token rows into a cache of 2 sequences, two rows in one sequence, then an
 * attention over the written caches that reads each row's own sequence, fused and not; and as
 * the decoder's ragged build lays them out (models/arch/decoder.c): the B rows one sequence of B
 * tokens [1, H, B, D], each written and attended through a view swapping dims 0 and 2. */
#include <string.h>

#include "tests/op_case.h"

/* Data movement and the rotary's fp32 products in the same order as the reference's. */
static const op_tol TOL = {1e-6, 1e-6};

enum { B = 3, C = 12 };
static const int32_t k_starts[B] = {4, 11, -1};

typedef struct rcase {
  int64_t t, hq, hkv;
  int64_t d; /* head dim; 0: 8. The kernel's workgroup is D/2 rounded up to 32, at most 256 */
  vkf_dtype cache;
  int k_read_twice; /* k's rotation is also a graph output: the rule must not apply */
  int ragged;       /* ragged rows into a cache of CB sequences, then attention over them */
  int swapped;      /* ragged rows as one sequence of B tokens, each a row through a swap view */
} rcase;

enum { CB = 2 };
/* ragged: rows 0 and 2 to sequence 1 at positions 4 and 5, row 1 to sequence 0 at 11 */
static const int32_t k_ragged_starts[2 * B] = {4, 11, 5, 1, 0, 1};
static const int32_t k_ragged_lens[2 * B] = {5, 12, 6, 1, 0, 1};
static const op_tol ATT_TOL = {2e-5, 1e-4};

static int dispatches_of(const vkf_graph *g, const vkf_device_caps *caps, const char *shader) {
  char *text = op_plan_text(g, caps);
  int n = 0;
  for (const char *p = text; p && (p = strstr(p, shader)); p += strlen(shader)) n++;
  free(text);
  return n;
}

static void run_case(gpu_test *t, const rcase *r) {
  char label[96];
  snprintf(label, sizeof label, "t%lld hq%lld hkv%lld d%lld %s cache%s%s%s", (long long)r->t,
           (long long)r->hq, (long long)r->hkv, (long long)(r->d ? r->d : 8),
           vkf_dtype_name(r->cache), r->k_read_twice ? ", k rotation read twice" : "",
           r->ragged ? ", ragged" : "", r->swapped ? " rows swapped" : "");
  op_case c = op_case_begin("rotary_kv");
  int64_t heads = r->hq + 2 * r->hkv, D = r->d ? r->d : 8;
  int64_t qkv_shape[4] = {B, r->t, heads, D}, cs_shape[2] = {r->t, D}, ss[1] = {B};
  if (r->swapped) qkv_shape[0] = 1, qkv_shape[1] = cs_shape[0] = B;
  int64_t cache_shape[4] = {r->ragged ? CB : B, r->hkv, C, D}, s2[2] = {2, B};
  vkf_value qkv = op_case_input(&c, "qkv", VKF_F32, 4, qkv_shape, -2.0f, 2.0f);
  vkf_value cs = op_case_input(&c, "cos", VKF_F32, 2, cs_shape, -1.0f, 1.0f);
  vkf_value sn = op_case_input(&c, "sin", VKF_F32, 2, cs_shape, -1.0f, 1.0f);
  vkf_value kc = op_case_input(&c, "k_cache", r->cache, 4, cache_shape, -3.0f, 3.0f);
  vkf_value vc = op_case_input(&c, "v_cache", r->cache, 4, cache_shape, -3.0f, 3.0f);
  vkf_value start = r->ragged ? op_case_input_i32(&c, "start", 2, s2, k_ragged_starts, 2 * B)
                              : op_case_input_i32(&c, "start", 1, ss, k_starts, B);
  vkf_value lens =
      r->ragged ? op_case_input_i32(&c, "kv_len", 2, s2, k_ragged_lens, 2 * B) : VKF_NO_VALUE;
  static const uint32_t to_bhtd[4] = {0, 2, 1, 3};
  vkf_graph *g = c.g;
  vkf_value q = vkf_permute(g, "q", vkf_slice(g, "q.s", qkv, 2, 0, r->hq), to_bhtd);
  vkf_value k = vkf_permute(g, "k", vkf_slice(g, "k.s", qkv, 2, r->hq, r->hq + r->hkv), to_bhtd);
  vkf_value v = vkf_permute(g, "v", vkf_slice(g, "v.s", qkv, 2, r->hq + r->hkv, heads), to_bhtd);
  vkf_value qr = vkf_rotary(g, "q_rotary", q, cs, sn);
  vkf_value kr = vkf_rotary(g, "k_rotary", k, cs, sn);
  static const uint32_t swap_rows[4] = {2, 1, 0, 3};
  vkf_value kw = vkf_kv_write(g, "k_cache_write", kc,
                              r->swapped ? vkf_permute(g, "k_rows", kr, swap_rows) : kr, start);
  vkf_value vw = vkf_kv_write(g, "v_cache_write", vc,
                              r->swapped ? vkf_permute(g, "v_rows", v, swap_rows) : v, start);
  vkf_graph_output(g, qr, NULL);
  vkf_graph_output(g, kw, NULL);
  vkf_graph_output(g, vw, NULL);
  if (r->k_read_twice) vkf_graph_output(g, kr, NULL);
  /* each row attends to its own sequence's first kv_len[0][b] positions (an f32 query needs an
   * f32 cache) */
  if (r->ragged && r->cache == VKF_F32) {
    vkf_attention_options ao = {.kv_len = lens};
    vkf_value qa = r->swapped ? vkf_permute(g, "q_rows", qr, swap_rows) : qr;
    vkf_graph_output(g, vkf_attention(g, "attention", qa, kw, vw, &ao), NULL);
  }
  CHECK_OK(vkf_graph_status(g));
  if (r->cache == VKF_F16 && !vkf_device_caps_get(t->device)->storage_16bit) {
    for (size_t i = 0; i < c.n; i++) free(c.data[i]);
    vkf_graph_destroy(g);
    return;
  }
  CHECK_OK(vkf_memory_plan_build(g, NULL));
  const vkf_device_caps *caps = vkf_device_caps_get(t->device);
  int fused = dispatches_of(g, caps, "rotary_kv.comp");
  int alone = dispatches_of(g, caps, " rotary.comp") + dispatches_of(g, caps, "kv_write.comp");
  CHECK_MSG(r->k_read_twice ? fused == 0 && alone == 4 : fused == 1 && alone == 0,
            "%s: %d rotary_kv and %d separate dispatches", label, fused, alone);
  op_check(t, g, c.in, c.n, r->ragged ? ATT_TOL : TOL, label);
  for (size_t i = 0; i < c.n; i++) free(c.data[i]);
  vkf_graph_destroy(g);
}

int main(void) {
  gpu_test t = gpu_test_start();
  run_case(&t, &(rcase){.t = 1, .hq = 6, .hkv = 2, .cache = VKF_F32});
  run_case(&t, &(rcase){.t = 3, .hq = 4, .hkv = 4, .cache = VKF_F32});
  /* 108 rows, more than a CPU device's 64 workgroups; a pair per invocation of 40 (D/2 = 40 of
   * 64) and two pairs for some (D/2 = 300 of 256) */
  run_case(&t, &(rcase){.t = 3, .hq = 4, .hkv = 4, .d = 80, .cache = VKF_F32});
  run_case(&t, &(rcase){.t = 1, .hq = 2, .hkv = 1, .d = 600, .cache = VKF_F16});
  run_case(
      &t,
      &(rcase){.t = 1, .hq = 6, .hkv = 2, .d = 80, .cache = VKF_F16, .ragged = 1, .swapped = 1});
  run_case(&t, &(rcase){.t = 1, .hq = 3, .hkv = 1, .cache = VKF_F16});
  run_case(&t, &(rcase){.t = 2, .hq = 2, .hkv = 1, .cache = VKF_F32, .k_read_twice = 1});
  run_case(&t, &(rcase){.t = 1, .hq = 6, .hkv = 2, .cache = VKF_F32, .ragged = 1});
  run_case(&t,
           &(rcase){.t = 1, .hq = 4, .hkv = 2, .cache = VKF_F32, .ragged = 1, .k_read_twice = 1});
  run_case(&t, &(rcase){.t = 1, .hq = 6, .hkv = 2, .cache = VKF_F32, .ragged = 1, .swapped = 1});
  run_case(&t, &(rcase){.t = 1, .hq = 3, .hkv = 1, .cache = VKF_F16, .ragged = 1, .swapped = 1});
  run_case(&t, &(rcase){.t = 1,
                        .hq = 4,
                        .hkv = 2,
                        .cache = VKF_F32,
                        .ragged = 1,
                        .swapped = 1,
                        .k_read_twice = 1});
  return gpu_test_finish(&t);
}
