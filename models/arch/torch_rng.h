/* torch's CPU generator (torch 1.13, at::CPUGeneratorImpl): mt19937 seeded as torch.manual_seed
 * seeds it, and torch.randn's float32 values as its CPU normal_ kernel draws them. Reformer's LSH
 * layers draw their random rotations this way after torch.manual_seed(hash_seed), so the rotations
 * computed here equal Hugging Face's (to the last bits of libm's log / sin / cos, which torch's
 * AVX2 path replaces by its own approximations). No device; not thread-safe per generator. */
#ifndef VKF_MODELS_ARCH_TORCH_RNG_H
#define VKF_MODELS_ARCH_TORCH_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct vkf_torch_rng {
  uint32_t state[624];
  int next; /* index of the next word; 624: twist first */
  int has_normal; /* the cached second value of the serial Box-Muller (normal_distribution) */
  double normal;
} vkf_torch_rng;

/* torch.manual_seed(seed): mt19937 initialised with the low 32 bits, the normal cache cleared. */
void vkf_torch_rng_seed(vkf_torch_rng *rng, uint64_t seed);
/* One 32-bit draw (CPUGeneratorImpl::random). */
uint32_t vkf_torch_rng_u32(vkf_torch_rng *rng);
/* torch.randn(count) in float32 (contiguous): at least 16 values: `count` uniforms (24-bit
 * mantissas) then Box-Muller on blocks of 16 (the first 8 as u1, the next 8 as u2), the last block
 * redrawn over the final 16 values when count is not a multiple of 16; fewer than 16: the serial
 * double-precision Box-Muller with its cached second value. */
void vkf_torch_randn_f32(vkf_torch_rng *rng, float *out, size_t count);

#endif
