/* torch's CPU generator and randn (see torch_rng.h): at::mt19937, at::uniform_real_distribution,
 * normal_fill / normal_fill_16 and at::normal_distribution<double> of torch 1.13. */
#include "models/arch/torch_rng.h"

#include <math.h>

enum { MT_N = 624, MT_M = 397 };

void vkf_torch_rng_seed(vkf_torch_rng *r, uint64_t seed) {
  r->state[0] = (uint32_t)(seed & 0xffffffffu);
  for (uint32_t j = 1; j < MT_N; j++)
    r->state[j] = 1812433253u * (r->state[j - 1] ^ (r->state[j - 1] >> 30)) + j;
  r->next = MT_N;
  r->has_normal = 0;
  r->normal = 0.0;
}

static void twist(vkf_torch_rng *r) {
  for (int i = 0; i < MT_N; i++) {
    uint32_t y = (r->state[i] & 0x80000000u) | (r->state[(i + 1) % MT_N] & 0x7fffffffu);
    r->state[i] = r->state[(i + MT_M) % MT_N] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
  }
  r->next = 0;
}

uint32_t vkf_torch_rng_u32(vkf_torch_rng *r) {
  if (r->next >= MT_N) twist(r);
  uint32_t y = r->state[r->next++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

/* uniform_real_distribution<float>(0, 1): the low 24 bits over 2^24. */
static float uniform_f32(vkf_torch_rng *r) {
  return (float)(vkf_torch_rng_u32(r) & 0xffffffu) * (1.0f / 16777216.0f);
}

/* uniform_real_distribution<double>(0, 1): random64 (first draw high) to 53 bits over 2^53. */
static double uniform_f64(vkf_torch_rng *r) {
  uint64_t hi = vkf_torch_rng_u32(r), lo = vkf_torch_rng_u32(r);
  return (double)(((hi << 32) | lo) & ((UINT64_C(1) << 53) - 1)) * (1.0 / 9007199254740992.0);
}

/* normal_fill_16 with mean 0, std 1, in float as torch computes it. */
static void fill_16(float *d) {
  const float two_pi = (float)(2.0 * 3.14159265358979323846);
  for (int j = 0; j < 8; j++) {
    float u1 = 1.0f - d[j], u2 = d[j + 8];
    float radius = sqrtf(-2.0f * logf(u1));
    float theta = two_pi * u2;
    d[j] = radius * cosf(theta);
    d[j + 8] = radius * sinf(theta);
  }
}

/* at::normal_distribution<double>(0, 1) with its cached second sample. */
static double normal_f64(vkf_torch_rng *r) {
  if (r->has_normal) {
    r->has_normal = 0;
    return r->normal;
  }
  double u1 = uniform_f64(r), u2 = uniform_f64(r);
  double radius = sqrt(-2.0 * log1p(-u2));
  double theta = 2.0 * 3.14159265358979323846 * u1;
  r->has_normal = 1;
  r->normal = radius * sin(theta);
  return radius * cos(theta);
}

void vkf_torch_randn_f32(vkf_torch_rng *r, float *out, size_t count) {
  if (count < 16) {
    for (size_t i = 0; i < count; i++) out[i] = (float)normal_f64(r);
    return;
  }
  for (size_t i = 0; i < count; i++) out[i] = uniform_f32(r);
  for (size_t i = 0; i + 16 <= count; i += 16) fill_16(out + i);
  if (count % 16 != 0) {
    float *tail = out + count - 16;
    for (int i = 0; i < 16; i++) tail[i] = uniform_f32(r);
    fill_16(tail);
  }
}
