/* models/arch/torch_rng: torch.randn after torch.manual_seed (torch 1.13's CPU generator) against
 * the values torch itself drew (tests/models/golden/reformer/randn_<seed>_<count>.npy from
 * tools/goldens/make_reformer_golden.py): the serial path (< 16 values), whole blocks of 16, a
 * last block redrawn (counts not a multiple of 16), a seed past 32 bits; and mt19937's
 * reference output (the 10000th draw of the default seed 5489 is 4123659995). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "models/arch/torch_rng.h"
#include "models/formats/npy.h"
#include "tests/test_util.h"

#define GOLDEN "tests/models/golden/reformer"

static void check_randn(uint64_t seed, size_t count) {
  char path[256];
  snprintf(path, sizeof path, GOLDEN "/randn_%llu_%zu.npy", (unsigned long long)seed, count);
  vkf_npy_array want = {0};
  vkf_status s = vkf_npy_load(path, &want);
  CHECK_MSG(s == VKF_OK, "%s", vkf_status_message(s));
  vkf_status_free(s);
  if (s) return;
  CHECK_MSG(want.dtype == VKF_NPY_F32 && want.element_count == count, "%s: dtype or size", path);
  float *got = malloc(count * sizeof *got);
  VKF_ASSERT(got);
  vkf_torch_rng rng;
  vkf_torch_rng_seed(&rng, seed);
  vkf_torch_randn_f32(&rng, got, count);
  const float *w = want.data;
  int bad = 0;
  for (size_t i = 0; i < count && want.element_count == count; i++)
    if (!(fabsf(got[i] - w[i]) <= 1e-6f * fmaxf(1.0f, fabsf(w[i]))) && bad++ < 3)
      fprintf(stderr, "%s[%zu]: got %.9g, torch %.9g\n", path, i, (double)got[i], (double)w[i]);
  CHECK_MSG(bad == 0, "%s: %d values differ", path, bad);
  free(got);
  vkf_npy_array_release(&want);
}

int main(void) {
  vkf_torch_rng rng;
  vkf_torch_rng_seed(&rng, 5489);
  uint32_t v = 0;
  for (int i = 0; i < 10000; i++) v = vkf_torch_rng_u32(&rng);
  CHECK_MSG(v == 4123659995u, "mt19937 draw 10000: %u", v);
  static const struct {
    uint64_t seed;
    size_t count;
  } cases[] = {{0, 1}, {3, 5}, {3, 15}, {3, 16}, {7, 37}, {11, 64}, {123, 100},
               {((uint64_t)1 << 40) + 5, 33}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_randn(cases[i].seed, cases[i].count);
  return test_report();
}
