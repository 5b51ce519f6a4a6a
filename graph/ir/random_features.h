/* Random projection matrices for the random-feature maps of LINEAR_FEATURES (Performer's FAVOR+,
 * RFA's random Fourier features), drawn from a seed so that a model is reproducible. Redraw rule
 * at inference: one fixed seed per layer (e.g. the model's seed + the layer index), never redrawn
 * between calls, so the prefill, every decode step and every run see the same omega. */
#ifndef VKF_GRAPH_RANDOM_FEATURES_H
#define VKF_GRAPH_RANDOM_FEATURES_H

#include <stdint.h>

#include "graph/base/status.h"

/* omega [m, d] row-major into `out` (m * d floats). orthogonal != 0: Performer's
 * gaussian_orthogonal_random_matrix with scaling 0: blocks of d rows, each the orthonormal rows
 * of a Gaussian d x d matrix (Gram-Schmidt, i.e. the Q of its QR), the last block cut to m % d
 * rows; then row i is rescaled to the norm of an independent Gaussian d-vector (so each row is
 * distributed as a Gaussian vector while rows of a block stay exactly orthogonal).
 * orthogonal == 0: i.i.d. N(0, 1) entries. Gaussians come from a splitmix64 stream of `seed`
 * through Box-Muller in double. m, d >= 1 and m * d <= 2^28, else INVALID_ARGUMENT. */
vkf_status vkf_random_features(uint64_t seed, uint32_t m, uint32_t d, int orthogonal, float *out);

#endif
