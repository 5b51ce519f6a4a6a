/* T5's bucketing, step for step as the PyTorch code, including its float32 logarithm and the
 * truncation of .to(torch.long). */
#include "models/arch/relative_position.h"

#include <math.h>

int64_t vkf_t5_relative_bucket(int64_t relative, int bidirectional, int64_t num_buckets,
                               int64_t max_distance) {
  int64_t bucket = 0;
  if (bidirectional) {
    num_buckets /= 2;
    if (relative > 0) bucket += num_buckets;
    relative = relative < 0 ? -relative : relative;
  } else {
    relative = relative < 0 ? -relative : 0;
  }
  int64_t max_exact = num_buckets / 2;
  if (relative < max_exact) return bucket + relative;
  /* (log(rel / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)): the
   * tensor ops run in float32, the Python denominator is a double rounded to float32. */
  float ratio = (float)relative / (float)max_exact;
  float denom = (float)log((double)max_distance / (double)max_exact);
  float scaled = logf(ratio) / denom * (float)(num_buckets - max_exact);
  int64_t large = max_exact + (int64_t)scaled;
  if (large > num_buckets - 1) large = num_buckets - 1;
  return bucket + large;
}
