/* Rotary tables and rotation. The tables follow LlamaRotaryEmbedding and its scaled variants in
 * transformers 4.38 (fp32 inverse frequencies and angles, so cos/sin match to the last bits), and
 * the Llama-3 frequency scaling of later releases (_compute_llama3_parameters). */
#include "models/arch/rotary.h"

#include <math.h>

#include "graph/ir/builder.h"

/* inv_freq[i] for i < Dh/2, in fp32 like torch: 1 / base^(2i / Dh). */
static float inv_freq(const vkf_hf_config *c, double base, int64_t i) {
  float dim = (float)c->head_dim;
  float exponent = (float)(2 * i) / dim;
  float f = 1.0f / powf((float)base, exponent);
  if (c->rope_type != VKF_HF_ROPE_LLAMA3) return f;
  double old_len = (double)c->rope_original_max_positions;
  double low_wavelen = old_len / c->rope_low_freq_factor;
  double high_wavelen = old_len / c->rope_high_freq_factor;
  double wavelen = 2.0 * 3.14159265358979323846 / (double)f;
  if (wavelen < high_wavelen) return f;
  if (wavelen > low_wavelen) return (float)(f / c->rope_factor);
  double smooth = (old_len / wavelen - c->rope_low_freq_factor) /
                  (c->rope_high_freq_factor - c->rope_low_freq_factor);
  return (float)((1.0 - smooth) * f / c->rope_factor + smooth * f);
}

void vkf_rotary_tables(const vkf_hf_config *c, int64_t first, int64_t count, int64_t seq_len,
                       float *out_cos, float *out_sin) {
  int64_t dh = c->head_dim, half = dh / 2;
  double base = c->rope_theta;
  /* LlamaDynamicNTKScalingRotaryEmbedding: past max_position_embeddings the base grows. */
  if (c->rope_type == VKF_HF_ROPE_DYNAMIC && seq_len > c->max_position_embeddings)
    base = base * pow(c->rope_factor * (double)seq_len / (double)c->max_position_embeddings -
                          (c->rope_factor - 1.0),
                      (double)dh / (double)(dh - 2));
  for (int64_t p = 0; p < count; p++) {
    float pos = (float)(first + p);
    if (c->rope_type == VKF_HF_ROPE_LINEAR) pos = pos / (float)c->rope_factor;
    for (int64_t i = 0; i < half; i++) {
      float angle = pos * inv_freq(c, base, i);
      float cs = cosf(angle), sn = sinf(angle);
      out_cos[p * dh + i] = out_cos[p * dh + half + i] = cs;
      out_sin[p * dh + i] = out_sin[p * dh + half + i] = sn;
    }
  }
}

vkf_value vkf_rotary_apply(vkf_graph *g, const char *name, vkf_value x, vkf_value cos,
                           vkf_value sin) {
  return vkf_rotary(g, name, x, cos, sin);
}
