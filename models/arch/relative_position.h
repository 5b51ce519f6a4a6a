/* T5's relative position buckets (T5Attention._relative_position_bucket of transformers 4.38). */
#ifndef VKF_MODELS_ARCH_RELATIVE_POSITION_H
#define VKF_MODELS_ARCH_RELATIVE_POSITION_H

#include <stdint.h>

/* The bucket of `relative` = key position - query position: bidirectional (encoder) splits the
 * buckets between the two directions; otherwise (decoder) every key after the query falls in
 * bucket 0. Within each half, the first half of the buckets are exact distances and the rest
 * grow logarithmically up to max_distance, computed in float32 as torch does. */
int64_t vkf_t5_relative_bucket(int64_t relative, int bidirectional, int64_t num_buckets,
                               int64_t max_distance);

#endif
