/* A sharded checkpoint: model.safetensors.index.json (part 1 of the input) over two shards in a
 * scratch folder, the second of which the input may replace (part 2). The index's validation, the
 * shard names it may use, the cross-shard table, and reads routed to the shards. */
#include "models/formats/checkpoint.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One F32 tensor `name` of two elements, as a whole safetensors file. */
static size_t tiny_shard(const char *name, uint8_t *out, size_t cap) {
  char header[128];
  int len = snprintf(header, sizeof header,
                     "{\"%s\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", name);
  FUZZ_ASSERT(len > 0 && (size_t)len + 16 <= cap);
  uint64_t n = (uint64_t)len;
  for (int i = 0; i < 8; i++) out[i] = (uint8_t)(n >> (8 * i));
  memcpy(out + 8, header, (size_t)len);
  static const float values[2] = {1.5f, -2.0f};
  memcpy(out + 8 + len, values, sizeof values);
  return (size_t)len + 16;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_part parts[2];
  fuzz_split(data, size, parts, 2);
  uint8_t shard[256];
  size_t shard_size = tiny_shard("a", shard, sizeof shard);
  fuzz_write_file("model-00001-of-00002.safetensors", shard, shard_size);
  if (parts[1].size) {
    fuzz_write_file("model-00002-of-00002.safetensors", parts[1].data, parts[1].size);
  } else {
    shard_size = tiny_shard("b", shard, sizeof shard);
    fuzz_write_file("model-00002-of-00002.safetensors", shard, shard_size);
  }
  fuzz_write_file("model.safetensors.index.json", parts[0].data, parts[0].size);

  vkf_checkpoint *ck = NULL;
  vkf_status s = vkf_checkpoint_open(fuzz_scratch_dir(), &ck);
  if (s) {
    FUZZ_ASSERT(ck == NULL);
    fuzz_check_status(s);
    return 0;
  }
  FUZZ_ASSERT(vkf_checkpoint_file_count(ck) >= 1 && vkf_checkpoint_file_count(ck) <= 2);
  const vkf_safetensors_info *got = NULL;
  for (size_t i = 0, n = vkf_checkpoint_count(ck); i < n; i++) {
    const vkf_safetensors_info *info = vkf_checkpoint_at(ck, i);
    FUZZ_ASSERT(vkf_checkpoint_find(ck, info->name) == info);
    FUZZ_ASSERT(vkf_checkpoint_file_of(ck, info) != NULL);
    fuzz_check_status(vkf_checkpoint_expect(ck, info->name, info->rank, info->shape, &got));
    FUZZ_ASSERT(got == info);
    if (info->element_count > (1 << 16)) continue;
    size_t count = (size_t)info->element_count;
    float *values = malloc((count ? count : 1) * sizeof *values);
    FUZZ_ASSERT(values);
    fuzz_check_status(vkf_checkpoint_read_f32(ck, info, count, values));
    free(values);
  }
  vkf_checkpoint_close(ck);
  return 0;
}
