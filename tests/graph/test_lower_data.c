/* The elementwise and data-movement lowerings without a GPU: chooser decisions on desktop-GPU,
 * mobile-profile and CPU caps (workgroup sizes, variants, dispatch counts), generated kernel text
 * (push constants vs baked, identical text for identical programs), operand staging past the
 * binding limit, statuses for what a device cannot do, and the helpers (fast division, dimension
 * coalescing). */
#include <string.h>

#include "graph/ir/builder.h"
#include "graph/lower/lower.h"
#include "graph/lower/lower_layout.h"
#include "graph/passes/memory_plan.h"
#include "tests/test_util.h"

static vkf_device_caps desktop_caps(void) {
  vkf_device_caps c = {.kind = VKF_DEVICE_KIND_DISCRETE_GPU,
                       .max_shared_memory_size = 49152,
                       .subgroup_size = 32,
                       .min_subgroup_size = 32,
                       .max_subgroup_size = 32,
                       .max_workgroup_size = {1024, 1024, 64},
                       .max_workgroup_invocations = 1024,
                       .max_workgroup_count = {2147483647u, 65535, 65535},
                       .max_push_constants_size = 256,
                       .min_storage_buffer_offset_alignment = 64,
                       .max_storage_buffer_range = 0xffffffffu,
                       .fp16_arithmetic = 1,
                       .storage_16bit = 1};
  strcpy(c.name, "test GPU");
  return c;
}

/* Lowers `g` (output already marked) for `caps`; the caller frees *out. */
static vkf_status lower(vkf_graph *g, const vkf_device_caps *caps, vkf_lowered *out) {
  VKF_RETURN_IF_ERROR(vkf_graph_status(g));
  VKF_RETURN_IF_ERROR(vkf_memory_plan_build(g, NULL));
  return vkf_lower_graph(g, caps, NULL, out);
}

static uint32_t push_word(const vkf_plan_dispatch *d, uint32_t i) {
  uint32_t w;
  memcpy(&w, d->push + 4 * i, 4);
  return w;
}

static int has_define(const vkf_plan_dispatch *d, const char *define) {
  for (uint32_t i = 0; i < d->define_count; i++)
    if (strcmp(d->defines[i], define) == 0) return 1;
  return 0;
}

static void fastdiv(void) {
  static const uint32_t divisors[] = {1,   2,    3,     7,     12,      196,         197,
                                      768, 3072, 65535, 65536, 1000003, 0x40000001u, 0x7fffffffu};
  int bad = 0;
  for (size_t i = 0; i < sizeof divisors / sizeof divisors[0]; i++) {
    vkf_fastdiv f = vkf_fastdiv_make(divisors[i]);
    for (uint64_t n = 0; n < 0x80000000ull; n += n < 70000 ? 1 : 65521) {
      uint32_t q = f.magic ? (uint32_t)((n * f.magic) >> 32) >> f.shift : (uint32_t)n;
      bad += q != n / divisors[i];
    }
    uint64_t n = 0x7fffffff; /* the largest dividend the kernels may pass */
    bad += (f.magic ? (uint32_t)((n * f.magic) >> 32) >> f.shift : (uint32_t)n) != n / divisors[i];
  }
  for (uint32_t d = 1; d < 3000; d++) {
    vkf_fastdiv f = vkf_fastdiv_make(d);
    for (uint64_t n = 0x7fffffff; n > 0x7fffffff - 3000; n--)
      bad += (f.magic ? (uint32_t)((n * f.magic) >> 32) >> f.shift : (uint32_t)n) != n / d;
  }
  CHECK_MSG(bad == 0, "%d wrong quotients", bad);
}

static void coalesce(void) {
  /* [2,3,4] dense + [4] broadcast: dims 0 and 1 merge (both operands walk them evenly). */
  vkf_layout l = {
      .rank = 3, .shape = {2, 3, 4}, .operand_count = 2, .strides = {{12, 4, 1}, {0, 0, 1}}};
  vkf_layout_coalesce(&l);
  CHECK(l.rank == 2 && l.shape[0] == 6 && l.shape[1] == 4);
  CHECK(l.strides[0][0] == 4 && l.strides[1][0] == 0 && l.strides[1][1] == 1);
  CHECK(vkf_layout_operand_dense(&l, 0) && !vkf_layout_operand_dense(&l, 1));
  /* Everything dense: rank 1. Size-1 dims vanish. */
  vkf_layout d = {.rank = 4,
                  .shape = {2, 1, 3, 5},
                  .operand_count = 2,
                  .strides = {{15, 99, 5, 1}, {15, 7, 5, 1}}};
  vkf_layout_coalesce(&d);
  CHECK(d.rank == 1 && d.shape[0] == 30 && d.strides[0][0] == 1);
  /* A transpose cannot merge. */
  vkf_layout t = {.rank = 2, .shape = {3, 5}, .operand_count = 2, .strides = {{1, 3}, {5, 1}}};
  vkf_layout_coalesce(&t);
  CHECK(t.rank == 2 && vkf_layout_operand_last(&t, 0) == 14);
  /* One element. */
  vkf_layout one = {.rank = 2, .shape = {1, 1}, .operand_count = 1, .strides = {{1, 1}}};
  vkf_layout_coalesce(&one);
  CHECK(one.rank == 1 && one.shape[0] == 1);
}

static void elementwise_choices(void) {
  vkf_device_caps desk = desktop_caps(), mobile = desktop_caps(), nof16 = desktop_caps();
  CHECK_OK(vkf_caps_apply_profile(&mobile, "mobile"));
  nof16.storage_16bit = 0;
  const vkf_device_caps *all[2] = {&desk, &mobile};
  char name0[128] = "";
  char *src0 = NULL;
  for (int k = 0; k < 2; k++) {
    vkf_graph *g;
    CHECK_OK(vkf_graph_create("ew", &g));
    int64_t sx[3] = {2, 9, 37}, sb[1] = {37};
    vkf_value x = vkf_graph_input(g, "x", VKF_F32, 3, sx);
    vkf_value b = vkf_graph_input(g, "b", VKF_F32, 1, sb);
    vkf_graph_output(g, vkf_add(g, "add", x, b), NULL);
    vkf_lowered low;
    vkf_status s = lower(g, all[k], &low);
    CHECK_OK(s);
    if (!s) {
      CHECK(vkf_plan_dispatch_count(low.plan) == 1);
      const vkf_plan_dispatch *d = vkf_plan_dispatch_get(low.plan, 0);
      CHECK(strncmp(d->shader, "ew_add_", 7) == 0 && d->source != NULL);
      CHECK_MSG(d->spec[0] == (k == 0 ? 256u : 128u), "workgroup %u", d->spec[0]);
      CHECK(push_word(d, 0) == 2 * 9 * 37); /* count */
      CHECK(push_word(d, 1) == 37);         /* coalesced [18, 37]: size of dim 1 */
      CHECK(d->binding_count == 3 && d->bindings[2].access == VKF_ACCESS_WRITE);
      CHECK(d->source && strstr(d->source, "layout(push_constant)") != NULL);
      /* The same program compiles to the same text on both device classes (only the spec
       * constant differs). */
      if (k == 0) {
        snprintf(name0, sizeof name0, "%s", d->shader);
        src0 = strdup(d->source);
      } else {
        CHECK(strcmp(name0, d->shader) == 0 && src0 && strcmp(src0, d->source) == 0);
      }
      vkf_lowered_free(&low);
    }
    vkf_graph_destroy(g);
  }
  free(src0);
  {
    /* Rows of 1000 fill a workgroup: the row-wise kernel, one grid row per tensor row. */
    vkf_graph *g;
    CHECK_OK(vkf_graph_create("rows", &g));
    int64_t sx[2] = {4, 1000}, sb[1] = {1000};
    vkf_value x = vkf_graph_input(g, "x", VKF_F32, 2, sx);
    vkf_graph_output(g, vkf_add(g, "add", x, vkf_graph_input(g, "b", VKF_F32, 1, sb)), NULL);
    vkf_lowered low;
    vkf_status s = lower(g, &desk, &low);
    CHECK_OK(s);
    if (!s) {
      const vkf_plan_dispatch *d = vkf_plan_dispatch_get(low.plan, 0);
      CHECK_MSG(d->groups[0] == 4 && d->groups[1] == 4, "groups %ux%u", d->groups[0], d->groups[1]);
      CHECK(d->source && strstr(d->source, "row += gl_NumWorkGroups.y") != NULL);
      vkf_lowered_free(&low);
    }
    /* On a CPU device the whole grid stays within 64 workgroups (rows strided). */
    vkf_device_caps cpu = desk;
    cpu.kind = VKF_DEVICE_KIND_CPU;
    s = lower(g, &cpu, &low);
    CHECK_OK(s);
    if (!s) {
      const vkf_plan_dispatch *d = vkf_plan_dispatch_get(low.plan, 0);
      CHECK_MSG(d->groups[0] == 4 && d->groups[1] == 4, "groups %ux%u", d->groups[0], d->groups[1]);
      vkf_lowered_free(&low);
    }
    vkf_graph_destroy(g);
  }
  {
    /* Many rows on a CPU device: 4 x 16 workgroups; a flat kernel: 64. */
    vkf_device_caps cpu = desk;
    cpu.kind = VKF_DEVICE_KIND_CPU;
    vkf_graph *g;
    CHECK_OK(vkf_graph_create("cpu_grid", &g));
    int64_t sx[2] = {5000, 1000}, sb[1] = {1000}, sf[1] = {1 << 20};
    vkf_value x = vkf_graph_input(g, "x", VKF_F32, 2, sx);
    vkf_graph_output(g, vkf_add(g, "add", x, vkf_graph_input(g, "b", VKF_F32, 1, sb)), NULL);
    vkf_graph_output(g, vkf_relu(g, "relu", vkf_graph_input(g, "f", VKF_F32, 1, sf)), NULL);
    vkf_lowered low;
    vkf_status s = lower(g, &cpu, &low);
    CHECK_OK(s);
    if (!s) {
      const vkf_plan_dispatch *a = vkf_plan_dispatch_get(low.plan, 0);
      const vkf_plan_dispatch *r = vkf_plan_dispatch_get(low.plan, 1);
      CHECK_MSG(a->groups[0] == 4 && a->groups[1] == 16, "groups %ux%u", a->groups[0],
                a->groups[1]);
      CHECK_MSG(r->groups[0] == 64 && r->groups[1] == 1, "groups %ux%u", r->groups[0],
                r->groups[1]);
      vkf_lowered_free(&low);
    }
    vkf_graph_destroy(g);
  }
  {
    /* f16 needs 16-bit storage: a status naming the node. */
    vkf_graph *g;
    CHECK_OK(vkf_graph_create("f16", &g));
    int64_t s1[1] = {8};
    vkf_value x = vkf_graph_input(g, "x", VKF_F16, 1, s1);
    vkf_graph_output(g, vkf_gelu(g, "my_gelu", x), NULL);
    vkf_lowered low;
    CHECK_STATUS(lower(g, &nof16, &low), VKF_STATUS_UNSUPPORTED, "\"my_gelu\"");
    vkf_graph_destroy(g);
  }
  {
    /* Five rank-4 strided operands need more index words than the push budget: baked. */
    vkf_graph *g;
    CHECK_OK(vkf_graph_create("baked", &g));
    int64_t s4[4] = {2, 3, 4, 5};
    uint32_t ax[4] = {3, 0, 2, 1};
    vkf_value in[5];
    for (int i = 0; i < 5; i++) {
      char n[8];
      snprintf(n, sizeof n, "x%d", i);
      in[i] = vkf_permute(g, NULL, vkf_graph_input(g, n, VKF_F32, 4, s4), ax); /* [5,2,4,3] */
    }
    vkf_ew_instr *prog = vkf_arena_alloc(vkf_graph_arena(g), 4 * sizeof *prog);
    for (uint32_t i = 0; i < 4; i++)
      prog[i] = (vkf_ew_instr){VKF_OP_ADD, i == 0 ? 0 : 4 + i, i + 1, 0};
    vkf_node_attrs attrs = {.fused = {.count = 4, .instrs = prog}};
    vkf_graph_output(g, vkf_graph_add_node(g, VKF_OP_FUSED_ELEMENTWISE, "f", in, 5, &attrs), NULL);
    vkf_device_caps small = desk;
    small.max_push_constants_size = 128;
    vkf_lowered low;
    vkf_status s = lower(g, &small, &low);
    CHECK_OK(s);
    if (!s) {
      const vkf_plan_dispatch *d = vkf_plan_dispatch_get(low.plan, 0);
      CHECK(d->push_size == 0 && d->source && strstr(d->source, "const uint count = 120u;"));
      vkf_lowered_free(&low);
    }
    vkf_graph_destroy(g);
  }
  {
    /* Eight inputs in eight buffers: two staged through one scratch buffer by copies. */
    vkf_graph *g;
    CHECK_OK(vkf_graph_create("eight", &g));
    int64_t s2[2] = {3, 7}, s1[1] = {7};
    vkf_value in[8];
    for (int i = 0; i < 8; i++) {
      char n[8];
      snprintf(n, sizeof n, "x%d", i);
      in[i] = vkf_graph_input(g, n, VKF_F32, i % 2 ? 1 : 2, i % 2 ? s1 : s2);
    }
    vkf_ew_instr *prog = vkf_arena_alloc(vkf_graph_arena(g), 7 * sizeof *prog);
    for (uint32_t i = 0; i < 7; i++)
      prog[i] = (vkf_ew_instr){VKF_OP_MUL, i == 0 ? 0 : 7 + i, i + 1, 0};
    vkf_node_attrs attrs = {.fused = {.count = 7, .instrs = prog}};
    vkf_graph_output(g, vkf_graph_add_node(g, VKF_OP_FUSED_ELEMENTWISE, "f8", in, 8, &attrs), NULL);
    vkf_lowered low;
    vkf_status s = lower(g, &desk, &low);
    CHECK_OK(s);
    if (!s) {
      uint32_t n = vkf_plan_dispatch_count(low.plan);
      CHECK_MSG(n == 3, "%u dispatches", n);
      CHECK(strcmp(vkf_plan_dispatch_get(low.plan, 0)->shader, "copy.comp") == 0);
      const vkf_plan_dispatch *d = vkf_plan_dispatch_get(low.plan, n - 1);
      CHECK(d->binding_count == 8 && d->barrier_before);
      int scratch = 0;
      for (uint32_t i = 0; i < vkf_plan_buffer_count(low.plan); i++)
        scratch += vkf_plan_buffer_get(low.plan, i)->kind == VKF_PLAN_BUFFER_SCRATCH;
      CHECK(scratch == 1);
      vkf_lowered_free(&low);
    }
    vkf_graph_destroy(g);
  }
}

static void data_choices(void) {
  vkf_device_caps desk = desktop_caps(), mobile = desktop_caps(), cpu = desktop_caps();
  CHECK_OK(vkf_caps_apply_profile(&mobile, "mobile"));
  cpu.kind = VKF_DEVICE_KIND_CPU;
  {
    /* Concat: one strided copy per input; a cast picks its conversion defines. */
    vkf_graph *g;
    CHECK_OK(vkf_graph_create("concat", &g));
    int64_t s[2] = {4, 3};
    vkf_value xs[3] = {vkf_graph_input(g, "a", VKF_F16, 2, s),
                       vkf_graph_input(g, "b", VKF_F16, 2, s),
                       vkf_graph_input(g, "c", VKF_F16, 2, s)};
    vkf_graph_output(g, vkf_cast(g, "cast", vkf_concat(g, "cat", xs, 3, 1), VKF_F32), NULL);
    vkf_lowered low;
    vkf_status st = lower(g, &mobile, &low);
    CHECK_OK(st);
    if (!st) {
      CHECK(vkf_plan_dispatch_count(low.plan) == 4);
      CHECK(has_define(vkf_plan_dispatch_get(low.plan, 0), "RAW=16"));
      CHECK(has_define(vkf_plan_dispatch_get(low.plan, 3), "SRC_F16"));
      CHECK(vkf_plan_dispatch_get(low.plan, 0)->spec[0] == 128);
      vkf_lowered_free(&low);
    }
    vkf_graph_destroy(g);
  }
  {
    /* Patch embedding: tiled on GPUs (tile by invocation limit), im2col + GEMM on CPUs. */
    const vkf_device_caps *caps[3] = {&desk, &mobile, &cpu};
    for (int k = 0; k < 3; k++) {
      vkf_graph *g;
      CHECK_OK(vkf_graph_create("patch", &g));
      int64_t si[4] = {1, 3, 32, 32}, sw[4] = {64, 3, 8, 8}, sb[1] = {64};
      vkf_value img = vkf_graph_input(g, "img", VKF_F32, 4, si);
      vkf_value w = vkf_graph_input(g, "w", VKF_F32, 4, sw);
      vkf_value b = vkf_graph_input(g, "b", VKF_F32, 1, sb);
      vkf_graph_output(g, vkf_patch_embed(g, "pe", img, w, b), NULL);
      vkf_lowered low;
      vkf_status st = lower(g, caps[k], &low);
      CHECK_OK(st);
      if (!st) {
        const vkf_plan_dispatch *d = vkf_plan_dispatch_get(low.plan, 0);
        if (k < 2) {
          CHECK(vkf_plan_dispatch_count(low.plan) == 1 && has_define(d, "HAS_BIAS"));
          CHECK_MSG(d->spec[5] == (k == 0 ? 256u : 128u), "workgroup %u", d->spec[5]);
          CHECK(d->groups[0] == 1 && d->groups[1] == 1); /* E 64, M 16 */
        } else {
          CHECK(vkf_plan_dispatch_count(low.plan) == 2 && has_define(d, "IM2COL"));
          CHECK(strcmp(vkf_plan_dispatch_get(low.plan, 1)->shader, "gemm.comp") == 0);
          CHECK(vkf_plan_dispatch_get(low.plan, 1)->barrier_before);
        }
        vkf_lowered_free(&low);
      }
      vkf_graph_destroy(g);
    }
  }
  {
    /* Gather and mean pool: one dispatch each, mask define only with a mask. */
    vkf_graph *g;
    CHECK_OK(vkf_graph_create("embed", &g));
    int64_t st[2] = {100, 16}, si[2] = {2, 5};
    vkf_value table = vkf_graph_input(g, "table", VKF_F16, 2, st);
    vkf_value ids = vkf_graph_input(g, "ids", VKF_I32, 2, si);
    vkf_value e = vkf_gather(g, "emb", table, ids);
    vkf_graph_output(g, vkf_mean_pool(g, "pool", e, VKF_NO_VALUE), NULL);
    vkf_lowered low;
    vkf_status s = lower(g, &desk, &low);
    CHECK_OK(s);
    if (!s) {
      CHECK(vkf_plan_dispatch_count(low.plan) == 2);
      CHECK(has_define(vkf_plan_dispatch_get(low.plan, 0), "ELEM16"));
      const vkf_plan_dispatch *pool = vkf_plan_dispatch_get(low.plan, 1);
      CHECK(has_define(pool, "IO_F16") && !has_define(pool, "HAS_MASK"));
      CHECK(pool->binding_count == 2 && pool->barrier_before);
      vkf_lowered_free(&low);
    }
    vkf_graph_destroy(g);
  }
}

int main(void) {
  fastdiv();
  coalesce();
  elementwise_choices();
  data_choices();
  return test_report();
}
