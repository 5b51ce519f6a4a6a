/* The declarations entries share (arch_entry.h): Hugging Face's text inputs and f32 outputs. */
#include "models/registry/arch_entry.h"

uint32_t vkf_declare_text_inputs(vkf_model_io *in, uint32_t count, int64_t max_seq, int64_t vocab,
                                 int64_t type_vocab) {
  const vkf_model_io ids = {.dtype = VKF_I32, .rank = 2, .shape = {-1, -1}, .max_seq = max_seq};
  in[0] = ids, in[0].name = "input_ids", in[0].required = 1, in[0].value_bound = vocab;
  in[1] = ids, in[1].name = "attention_mask", in[1].fill = 1, in[1].value_bound = 2;
  if (count > 2) in[2] = ids, in[2].name = "token_type_ids", in[2].value_bound = type_vocab;
  return count;
}

vkf_model_io vkf_declare_f32(const char *name, uint32_t rank, int64_t last) {
  vkf_model_io io = {.name = name, .dtype = VKF_F32, .rank = rank};
  for (uint32_t d = 0; d + 1 < rank; d++) io.shape[d] = -1;
  io.shape[rank - 1] = last;
  return io;
}

uint32_t vkf_declare_wanted(const uint32_t *bits, uint32_t count, const int *want) {
  uint32_t wanted = 0;
  for (uint32_t i = 0; i < count; i++)
    if (want[i]) wanted |= bits[i];
  return wanted;
}
