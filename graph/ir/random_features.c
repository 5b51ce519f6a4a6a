/* Owns the seeded random projections of graph/ir/random_features.h. */
#include "graph/ir/random_features.h"

#include <math.h>
#include <stdlib.h>

typedef struct rng {
  uint64_t state;
  int has_spare;
  double spare;
} rng;

static uint64_t splitmix64(rng *r) {
  uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Uniform in (0, 1): 53 random bits, never 0 (log below). */
static double uniform(rng *r) {
  return ((double)(splitmix64(r) >> 11) + 0.5) / 9007199254740992.0;
}

static double gaussian(rng *r) {
  if (r->has_spare) {
    r->has_spare = 0;
    return r->spare;
  }
  double u = uniform(r), v = uniform(r);
  double radius = sqrt(-2.0 * log(u)), angle = 6.283185307179586 * v;
  r->spare = radius * sin(angle);
  r->has_spare = 1;
  return radius * cos(angle);
}

/* Orthonormalises the d rows of a (d x d, row-major) in place by modified Gram-Schmidt; a row
 * that comes out (numerically) dependent is redrawn. */
static void orthonormal_rows(rng *r, double *a, uint32_t d) {
  for (uint32_t i = 0; i < d; i++) {
    double *row = a + (size_t)i * d;
    for (;;) {
      for (uint32_t j = 0; j < i; j++) {
        const double *prev = a + (size_t)j * d;
        double dot = 0;
        for (uint32_t k = 0; k < d; k++) dot += row[k] * prev[k];
        for (uint32_t k = 0; k < d; k++) row[k] -= dot * prev[k];
      }
      double norm = 0;
      for (uint32_t k = 0; k < d; k++) norm += row[k] * row[k];
      norm = sqrt(norm);
      if (norm > 1e-6) {
        for (uint32_t k = 0; k < d; k++) row[k] /= norm;
        break;
      }
      for (uint32_t k = 0; k < d; k++) row[k] = gaussian(r);
    }
  }
}

vkf_status vkf_random_features(uint64_t seed, uint32_t m, uint32_t d, int orthogonal, float *out) {
  if (m == 0 || d == 0 || (uint64_t)m * d > (1ull << 28))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "random features: %u x %u, expected 1..2^28 elements", m, d);
  rng r = {.state = seed};
  if (!orthogonal) {
    for (uint64_t i = 0; i < (uint64_t)m * d; i++) out[i] = (float)gaussian(&r);
    return VKF_OK;
  }
  double *block = malloc((size_t)d * d * sizeof *block);
  if (!block) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "random features: %u x %u", d, d);
  for (uint32_t row0 = 0; row0 < m; row0 += d) {
    for (size_t i = 0; i < (size_t)d * d; i++) block[i] = gaussian(&r);
    orthonormal_rows(&r, block, d);
    uint32_t rows = m - row0 < d ? m - row0 : d;
    for (uint32_t i = 0; i < rows; i++)
      for (uint32_t k = 0; k < d; k++)
        out[(size_t)(row0 + i) * d + k] = (float)block[(size_t)i * d + k];
  }
  free(block);
  for (uint32_t i = 0; i < m; i++) { /* scaling 0: each row gets a Gaussian vector's norm */
    double norm = 0;
    for (uint32_t k = 0; k < d; k++) {
      double gk = gaussian(&r);
      norm += gk * gk;
    }
    norm = sqrt(norm);
    for (uint32_t k = 0; k < d; k++)
      out[(size_t)i * d + k] = (float)(out[(size_t)i * d + k] * norm);
  }
  return VKF_OK;
}
