/* Linformer attention (models/arch/lowrank_attention.h) on the device against the float64
 * PyTorch module written from the paper's equations (tools/goldens/linformer_reference.py, whose held-out
 * cases are committed in tests/models/golden/linformer): E and F shared by the heads or one per
 * head, separate or shared between keys and values, k below and above Dh and N not a multiple of
 * anything; within 1e-4 (fp32), on the device's own caps and under the mobile profile. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "graph/base/caps.h"
#include "models/arch/lowrank_attention.h"
#include "models/formats/npy.h"
#include "tests/op_harness.h"

#define DIR "tests/models/golden/linformer/"

static const char *const k_cases[] = {"headwise", "per_head", "kv_shared", "per_head_shared"};
static const char *const k_names[] = {"q", "k", "v", "e", "f"};

static int load(const char *c, const char *what, vkf_npy_array *a) {
  char path[256];
  snprintf(path, sizeof path, DIR "%s/%s.npy", c, what);
  vkf_status s = vkf_npy_load(path, a);
  CHECK_MSG(!s && a->dtype == VKF_NPY_F32, "%s: %s", path, s ? vkf_status_message(s) : "not f32");
  vkf_status_free(s);
  return a->dtype == VKF_NPY_F32 && a->data;
}

static void run_case(gpu_test *t, const char *c, const vkf_device_caps *caps, const char *label) {
  vkf_npy_array in[5] = {0}, want = {0};
  int okay = load(c, "out", &want);
  for (int i = 0; i < 5; i++) okay &= load(c, k_names[i], &in[i]);
  vkf_graph *g = NULL;
  if (okay && !vkf_graph_create("linformer", &g)) {
    vkf_value v[5];
    vkf_input_binding b[5];
    for (int i = 0; i < 5; i++) {
      v[i] = vkf_graph_input(g, k_names[i], VKF_F32, (uint32_t)in[i].rank, in[i].shape);
      b[i] = (vkf_input_binding){.value = v[i], .data = in[i].data, .size = in[i].data_size};
    }
    /* The same array for E and F when the case shares them: one graph input read twice. */
    int shared =
        in[3].data_size == in[4].data_size && !memcmp(in[3].data, in[4].data, in[3].data_size);
    vkf_value out =
        vkf_linformer_attention(g, "linformer", v[0], v[1], v[2], v[3], shared ? v[3] : v[4], 0);
    vkf_graph_output(g, out, "out");
    float *got = NULL;
    size_t count = 0;
    vkf_status s = op_run_device_with(t, g, b, shared ? 4 : 5, caps, 0, &got, &count);
    CHECK_MSG(!s, "%s %s: %s", c, label, s ? vkf_status_message(s) : "");
    vkf_status_free(s);
    if (got) {
      CHECK_MSG(count == want.element_count, "%s: %zu values, expected %zu", c, count,
                want.element_count);
      double worst = 0;
      const float *w = want.data;
      for (size_t i = 0; i < count && i < want.element_count; i++) {
        double d = fabs((double)got[i] - w[i]);
        worst = d > worst || isnan(d) ? d : worst;
      }
      CHECK_MSG(worst <= 1e-4, "%s %s: max |diff| %g", c, label, worst);
      printf("%s %s: max |diff| %.2e\n", c, label, worst);
    }
    free(got);
  }
  vkf_graph_destroy(g);
  for (int i = 0; i < 5; i++) vkf_npy_array_release(&in[i]);
  vkf_npy_array_release(&want);
}

int main(void) {
  gpu_test t = gpu_test_start();
  vkf_device_caps mobile = *vkf_device_caps_get(t.device);
  vkf_status s = vkf_caps_apply_profile(&mobile, "mobile");
  CHECK_MSG(!s, "mobile profile: %s", s ? vkf_status_message(s) : "");
  vkf_status_free(s);
  for (size_t i = 0; i < sizeof k_cases / sizeof *k_cases; i++) {
    run_case(&t, k_cases[i], NULL, "device caps");
    run_case(&t, k_cases[i], &mobile, "mobile profile");
  }
  return gpu_test_finish(&t);
}
