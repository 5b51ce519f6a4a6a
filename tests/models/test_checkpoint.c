/* models/checkpoint: single-file and sharded checkpoints written at test time into a temporary
 * folder (safetensors files built byte by byte, index files as text), values read back from the
 * right shard, and every rejection of a bad index, shard or folder with the file it names. */
#define _XOPEN_SOURCE 700 /* mkdtemp, nftw */
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph/base/half.h"
#include "models/formats/checkpoint.h"
#include "tests/test_util.h"

static char root[64];

/* Creates the folder root/name, writing its path into buf. */
static const char *make_dir(const char *name, char *buf, size_t buf_size) {
  snprintf(buf, buf_size, "%s/%s", root, name);
  VKF_ASSERT(mkdir(buf, 0700) == 0);
  return buf;
}

static void write_file(const char *dir, const char *name, const void *bytes, size_t size) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  VKF_ASSERT(f);
  if (size) VKF_ASSERT(fwrite(bytes, 1, size, f) == size);
  VKF_ASSERT(fclose(f) == 0);
}

static void write_text(const char *dir, const char *name, const char *text) {
  write_file(dir, name, text, strlen(text));
}

/* One tensor of a shard to write: dtype and shape as the header spells them. */
typedef struct tensor {
  const char *name;
  const char *dtype;
  const char *shape; /* "[2,3]" */
  const void *data;
  size_t size;
} tensor;

/* Writes a safetensors file: 8-byte little-endian header length, the JSON header (offsets laid
 * out in the order given), then the data. Returns the file size. */
static size_t write_shard(const char *dir, const char *name, const tensor *t, int n) {
  char header[4096];
  size_t used = (size_t)snprintf(header, sizeof header, "{\"__metadata__\":{\"format\":\"pt\"}");
  size_t offset = 0;
  for (int i = 0; i < n; i++) {
    used += (size_t)snprintf(header + used, sizeof header - used,
                             ",\"%s\":{\"dtype\":\"%s\",\"shape\":%s,\"data_offsets\":[%zu,%zu]}",
                             t[i].name, t[i].dtype, t[i].shape, offset, offset + t[i].size);
    VKF_ASSERT(used < sizeof header);
    offset += t[i].size;
  }
  used += (size_t)snprintf(header + used, sizeof header - used, "}");
  VKF_ASSERT(used < sizeof header);
  size_t size = 8 + used + offset;
  uint8_t *b = malloc(size);
  VKF_ASSERT(b);
  for (int i = 0; i < 8; i++) b[i] = (uint8_t)((uint64_t)used >> (8 * i));
  memcpy(b + 8, header, used);
  size_t at = 8 + used;
  for (int i = 0; i < n; i++) {
    memcpy(b + at, t[i].data, t[i].size);
    at += t[i].size;
  }
  write_file(dir, name, b, size);
  free(b);
  return size;
}

static int remove_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw) {
  (void)sb, (void)type, (void)ftw;
  return remove(path);
}

/* ---- the sharded model every positive test reads ---- */

#define SHARD1 "model-00001-of-00003.safetensors"
#define SHARD2 "model-00002-of-00003.safetensors"
#define SHARD3 "model-00003-of-00003.safetensors"

static const float embed_w[6] = {0.25f, -0.5f, 0.75f, -1.0f, 1.25f, -1.5f}; /* F32 [2,3] */
static uint16_t bias_f16[4];    /* F16 [4]: 0.5, -3, 1024, 2^-24 */
static uint16_t layer0_bf16[4]; /* BF16 [2,2]: 1, -2.5, 0.15625, 196608 */
static const float layer1_w[3] = {10.0f, 20.0f, 30.0f};
static const float head_w[2] = {-7.0f, 7.5f};
static const float extra_w[1] = {123.0f};

static void init_values(void) {
  static const float h[4] = {0.5f, -3.0f, 1024.0f, 0x1p-24f};
  for (int i = 0; i < 4; i++) bias_f16[i] = vkf_float_to_half(h[i]);
  static const float bf[4] = {1.0f, -2.5f, 0.15625f, 196608.0f};
  for (int i = 0; i < 4; i++) {
    uint32_t bits;
    memcpy(&bits, &bf[i], sizeof bits);
    layer0_bf16[i] = (uint16_t)(bits >> 16);
  }
}

static const tensor shard1[] = {
    {"embed.weight", "F32", "[2,3]", embed_w, sizeof embed_w},
    {"layer.0.bias", "F16", "[4]", bias_f16, sizeof bias_f16},
};
static const tensor shard2[] = {
    {"layer.0.weight", "BF16", "[2,2]", layer0_bf16, sizeof layer0_bf16},
    {"layer.1.weight", "F32", "[3]", layer1_w, sizeof layer1_w},
};
/* "extra.unindexed" is in the shard but not in the index. */
static const tensor shard3[] = {
    {"lm_head.weight", "F32", "[2]", head_w, sizeof head_w},
    {"extra.unindexed", "F32", "[1]", extra_w, sizeof extra_w},
};

/* Listed out of shard order, so nothing may assume the index is sorted. */
static const char good_index[] =
    "{\"metadata\": {\"total_size\": 64},\n"
    " \"weight_map\": {\n"
    "  \"lm_head.weight\": \"model-00003-of-00003.safetensors\",\n"
    "  \"layer.1.weight\": \"model-00002-of-00003.safetensors\",\n"
    "  \"embed.weight\": \"model-00001-of-00003.safetensors\",\n"
    "  \"layer.0.weight\": \"model-00002-of-00003.safetensors\",\n"
    "  \"layer.0.bias\": \"model-00001-of-00003.safetensors\"\n"
    " }}\n";

static void write_sharded(const char *dir) {
  write_shard(dir, SHARD1, shard1, 2);
  write_shard(dir, SHARD2, shard2, 2);
  write_shard(dir, SHARD3, shard3, 2);
  write_text(dir, "model.safetensors.index.json", good_index);
}

/* The file `info` comes from ends with `file`. */
static int from_file(const vkf_checkpoint *ck, const vkf_safetensors_info *info, const char *file) {
  const vkf_safetensors *st = vkf_checkpoint_file_of(ck, info);
  if (!st) return 0;
  const char *p = vkf_safetensors_path(st);
  size_t a = strlen(p), b = strlen(file);
  return a >= b && strcmp(p + a - b, file) == 0 && (a == b || p[a - b - 1] == '/');
}

static void test_sharded(void) {
  char dir[128];
  make_dir("sharded", dir, sizeof dir);
  write_sharded(dir);

  vkf_checkpoint *ck = NULL;
  CHECK_OK(vkf_checkpoint_open(dir, &ck));
  CHECK(ck != NULL);
  if (!ck) return;
  char want_path[512];
  snprintf(want_path, sizeof want_path, "%s/model.safetensors.index.json", dir);
  CHECK(strcmp(vkf_checkpoint_path(ck), want_path) == 0);
  CHECK(vkf_checkpoint_count(ck) == 6);
  CHECK(vkf_checkpoint_file_count(ck) == 3); /* five mappings, three files opened once each */

  /* at(): shard by shard in file-name order, each in offset order. */
  static const char *const order[] = {"embed.weight",   "layer.0.bias",   "layer.0.weight",
                                      "layer.1.weight", "lm_head.weight", "extra.unindexed"};
  for (size_t i = 0; i < 6 && i < vkf_checkpoint_count(ck); i++)
    CHECK_MSG(strcmp(vkf_checkpoint_at(ck, i)->name, order[i]) == 0, "at(%zu) is %s", i,
              vkf_checkpoint_at(ck, i)->name);
  static const char *const files[] = {SHARD1, SHARD2, SHARD3};
  for (size_t i = 0; i < 3 && i < vkf_checkpoint_file_count(ck); i++) {
    const char *p = vkf_safetensors_path(vkf_checkpoint_file_at(ck, i));
    CHECK_MSG(strstr(p, files[i]) != NULL, "file %zu is %s", i, p);
  }

  CHECK(vkf_checkpoint_find(ck, "nope") == NULL);
  CHECK(vkf_checkpoint_find(ck, "layer.0") == NULL);
  CHECK(vkf_checkpoint_find(ck, "__metadata__") == NULL);
  CHECK(vkf_checkpoint_file_of(ck, NULL) == NULL);

  /* Each tensor from its own shard, values exact. */
  const vkf_safetensors_info *t = vkf_checkpoint_find(ck, "embed.weight");
  CHECK(t && t->dtype == VKF_SAFETENSORS_F32 && t->rank == 2 && t->shape[0] == 2 &&
        t->shape[1] == 3);
  if (t) {
    CHECK(from_file(ck, t, SHARD1));
    float v[6];
    CHECK_OK(vkf_checkpoint_read_f32(ck, t, 6, v));
    CHECK(memcmp(v, embed_w, sizeof v) == 0);
  }
  t = vkf_checkpoint_find(ck, "layer.0.bias");
  CHECK(t && t->dtype == VKF_SAFETENSORS_F16 && t->element_count == 4);
  if (t) {
    CHECK(from_file(ck, t, SHARD1));
    float v[4];
    CHECK_OK(vkf_checkpoint_read_f32(ck, t, 4, v));
    CHECK(v[0] == 0.5f && v[1] == -3.0f && v[2] == 1024.0f && v[3] == 0x1p-24f);
    uint16_t h[4];
    CHECK_OK(vkf_checkpoint_read_f16(ck, t, 4, h));
    CHECK(memcmp(h, bias_f16, sizeof h) == 0);
  }
  t = vkf_checkpoint_find(ck, "layer.0.weight");
  CHECK(t && t->dtype == VKF_SAFETENSORS_BF16 && t->rank == 2);
  if (t) {
    CHECK(from_file(ck, t, SHARD2));
    float v[4];
    CHECK_OK(vkf_checkpoint_read_f32(ck, t, 4, v));
    CHECK(v[0] == 1.0f && v[1] == -2.5f && v[2] == 0.15625f && v[3] == 196608.0f);
    uint16_t h[4];
    CHECK_OK(vkf_checkpoint_read_f16(ck, t, 4, h));
    CHECK(h[0] == 0x3c00 && h[3] == 0x7c00); /* 196608 overflows half */
  }
  t = vkf_checkpoint_find(ck, "layer.1.weight");
  CHECK(t && t->element_count == 3);
  if (t) {
    CHECK(from_file(ck, t, SHARD2));
    float v[3];
    CHECK_OK(vkf_checkpoint_read_f32(ck, t, 3, v));
    CHECK(v[0] == 10.0f && v[1] == 20.0f && v[2] == 30.0f);
    float small[2];
    CHECK_STATUS(vkf_checkpoint_read_f32(ck, t, 2, small), VKF_STATUS_INVALID_ARGUMENT, SHARD2);
  }
  t = vkf_checkpoint_find(ck, "lm_head.weight");
  if (t) {
    CHECK(from_file(ck, t, SHARD3));
    float v[2];
    CHECK_OK(vkf_checkpoint_read_f32(ck, t, 2, v));
    CHECK(v[0] == -7.0f && v[1] == 7.5f);
  }
  CHECK(t != NULL);
  /* Not in the index, still found in its shard. */
  t = vkf_checkpoint_find(ck, "extra.unindexed");
  if (t) {
    CHECK(from_file(ck, t, SHARD3));
    float v[1];
    CHECK_OK(vkf_checkpoint_read_f32(ck, t, 1, v));
    CHECK(v[0] == 123.0f);
  }
  CHECK(t != NULL);

  /* expect(): found with the right shape; a wrong shape names the shard; absence the index. */
  const vkf_safetensors_info *info = NULL;
  CHECK_OK(vkf_checkpoint_expect(ck, "layer.1.weight", 1, (const int64_t[]){3}, &info));
  CHECK(info && info == vkf_checkpoint_find(ck, "layer.1.weight"));
  CHECK_OK(vkf_checkpoint_expect(ck, "embed.weight", 2, (const int64_t[]){-1, 3}, &info));
  CHECK(info && info == vkf_checkpoint_find(ck, "embed.weight"));
  info = (const vkf_safetensors_info *)1;
  CHECK_STATUS(vkf_checkpoint_expect(ck, "layer.0.weight", 2, (const int64_t[]){2, 3}, &info),
               VKF_STATUS_SHAPE, "has shape [2,2], expected [2,3] in ");
  CHECK(info == NULL);
  CHECK_STATUS(vkf_checkpoint_expect(ck, "layer.0.weight", 2, (const int64_t[]){2, 3}, &info),
               VKF_STATUS_SHAPE, SHARD2);
  CHECK_STATUS(vkf_checkpoint_expect(ck, "lm_head.weight", 1, (const int64_t[]){3}, &info),
               VKF_STATUS_SHAPE, SHARD3);
  CHECK_STATUS(vkf_checkpoint_expect(ck, "missing.w", 1, (const int64_t[]){3}, &info),
               VKF_STATUS_NOT_FOUND, "\"missing.w\" not found in ");
  CHECK_STATUS(vkf_checkpoint_expect(ck, "missing.w", 1, (const int64_t[]){3}, &info),
               VKF_STATUS_NOT_FOUND, want_path);

  /* An info of another handle is not this checkpoint's, even with the same name. */
  vkf_checkpoint *other = NULL;
  CHECK_OK(vkf_checkpoint_open(dir, &other));
  if (other) {
    const vkf_safetensors_info *o = vkf_checkpoint_find(other, "embed.weight");
    CHECK(o && vkf_checkpoint_file_of(ck, o) == NULL);
    CHECK(o && vkf_checkpoint_file_of(other, o) != NULL);
    vkf_checkpoint_close(other);
  }
  vkf_checkpoint_close(ck);
  vkf_checkpoint_close(NULL);
}

static void test_single_file(void) {
  char dir[128];
  make_dir("single", dir, sizeof dir);
  const tensor all[] = {
      {"b", "F32", "[3]", layer1_w, sizeof layer1_w},
      {"a", "BF16", "[4]", layer0_bf16, sizeof layer0_bf16},
  };
  write_shard(dir, "model.safetensors", all, 2);
  /* model.safetensors wins: the broken index beside it is never read. */
  write_text(dir, "model.safetensors.index.json", "not json");

  vkf_checkpoint *ck = NULL;
  CHECK_OK(vkf_checkpoint_open(dir, &ck));
  if (!ck) return;
  char want[512];
  snprintf(want, sizeof want, "%s/model.safetensors", dir);
  CHECK(strcmp(vkf_checkpoint_path(ck), want) == 0);
  CHECK(vkf_checkpoint_count(ck) == 2 && vkf_checkpoint_file_count(ck) == 1);
  CHECK(strcmp(vkf_checkpoint_at(ck, 0)->name, "b") == 0);
  CHECK(strcmp(vkf_checkpoint_at(ck, 1)->name, "a") == 0);
  const vkf_safetensors_info *t = vkf_checkpoint_find(ck, "a");
  CHECK(t && vkf_checkpoint_file_of(ck, t) == vkf_checkpoint_file_at(ck, 0));
  if (t) {
    float v[4];
    CHECK_OK(vkf_checkpoint_read_f32(ck, t, 4, v));
    CHECK(v[0] == 1.0f && v[1] == -2.5f && v[2] == 0.15625f && v[3] == 196608.0f);
  }
  t = vkf_checkpoint_find(ck, "b");
  if (t) {
    float v[3];
    CHECK_OK(vkf_checkpoint_read_f32(ck, t, 3, v));
    CHECK(memcmp(v, layer1_w, sizeof v) == 0);
  }
  CHECK(t != NULL);
  CHECK_STATUS(vkf_checkpoint_expect(ck, "b", 1, (const int64_t[]){4}, &t), VKF_STATUS_SHAPE, want);
  vkf_checkpoint_close(ck);

  /* A trailing slash on the folder gives the same paths. */
  char slashed[256];
  snprintf(slashed, sizeof slashed, "%s/", dir);
  CHECK_OK(vkf_checkpoint_open(slashed, &ck));
  if (ck) CHECK(strcmp(vkf_checkpoint_path(ck), want) == 0);
  vkf_checkpoint_close(ck);

  /* from_file wraps an open handle and takes it over. */
  vkf_safetensors *st = NULL;
  CHECK_OK(vkf_safetensors_open(want, &st));
  ck = NULL;
  if (st) CHECK_OK(vkf_checkpoint_from_file(st, &ck));
  if (ck) {
    CHECK(vkf_checkpoint_file_at(ck, 0) == st);
    CHECK(strcmp(vkf_checkpoint_path(ck), want) == 0);
    CHECK(vkf_checkpoint_count(ck) == 2);
    CHECK(vkf_checkpoint_find(ck, "b") == vkf_safetensors_find(st, "b"));
  }
  vkf_checkpoint_close(ck);

  /* A broken model.safetensors is its own error: no falling back to an index. */
  char broken[128];
  make_dir("broken_single", broken, sizeof broken);
  write_shard(broken, SHARD1, shard1, 2);
  write_text(broken, "model.safetensors.index.json",
             "{\"weight_map\": {\"embed.weight\": \"" SHARD1 "\", \"layer.0.bias\": \"" SHARD1
             "\"}}");
  write_file(broken, "model.safetensors", "\x10\0\0\0\0\0\0\0{", 9); /* header cut short */
  ck = (vkf_checkpoint *)1;
  CHECK_STATUS(vkf_checkpoint_open(broken, &ck), VKF_STATUS_PARSE, "/model.safetensors: ");
  CHECK(ck == NULL);
}

/* Opens `dir` expecting failure with `code` and every needle in the message. */
static void expect_open_fails(const char *dir, vkf_status_code code, const char *needle1,
                              const char *needle2) {
  vkf_checkpoint *ck = (vkf_checkpoint *)1;
  vkf_status s = vkf_checkpoint_open(dir, &ck);
  const char *msg = vkf_status_message(s);
  CHECK_MSG(vkf_status_code_of(s) == code, "%s: got %s: %s", dir,
            vkf_status_code_name(vkf_status_code_of(s)), msg);
  CHECK_MSG(strstr(msg, needle1) != NULL, "message \"%s\" lacks \"%s\"", msg, needle1);
  if (needle2) CHECK_MSG(strstr(msg, needle2) != NULL, "message \"%s\" lacks \"%s\"", msg, needle2);
  CHECK(strchr(msg, '\n') == NULL);
  CHECK(ck == NULL);
  if (!s) vkf_checkpoint_close(ck);
  vkf_status_free(s);
}

static void test_missing_files(void) {
  char dir[128], path1[512], path2[512];
  make_dir("empty", dir, sizeof dir);
  snprintf(path1, sizeof path1, "%s/model.safetensors ", dir);
  snprintf(path2, sizeof path2, "%s/model.safetensors.index.json", dir);
  expect_open_fails(dir, VKF_STATUS_NOT_FOUND, path1, path2);

  char gone[128];
  snprintf(gone, sizeof gone, "%s/no_such_folder", root);
  expect_open_fails(gone, VKF_STATUS_NOT_FOUND, "no_such_folder/model.safetensors ",
                    "no_such_folder/model.safetensors.index.json");

  /* The index names three shards; the second is missing. */
  make_dir("missing_shard", dir, sizeof dir);
  write_shard(dir, SHARD1, shard1, 2);
  write_shard(dir, SHARD3, shard3, 2);
  write_text(dir, "model.safetensors.index.json", good_index);
  snprintf(path1, sizeof path1, "%s/" SHARD2, dir);
  expect_open_fails(dir, VKF_STATUS_NOT_FOUND, path1, "model.safetensors.index.json: ");
}

static void test_index_mapping(void) {
  char dir[128];
  /* layer.1.weight mapped to shard 1, which lacks it (it is in shard 2). */
  make_dir("wrong_shard", dir, sizeof dir);
  write_shard(dir, SHARD1, shard1, 2);
  write_shard(dir, SHARD2, shard2, 2);
  write_text(dir, "model.safetensors.index.json",
             "{\"weight_map\": {\"embed.weight\": \"" SHARD1 "\", \"layer.1.weight\": \"" SHARD1
             "\", \"layer.0.weight\": \"" SHARD2 "\"}}");
  expect_open_fails(dir, VKF_STATUS_PARSE,
                    "tensor \"layer.1.weight\": the index maps it to " SHARD1 " but " SHARD1
                    " lacks it",
                    "model.safetensors.index.json: ");

  /* A tensor mapped to a shard that holds no such name anywhere. */
  make_dir("unknown_tensor", dir, sizeof dir);
  write_shard(dir, SHARD1, shard1, 2);
  write_text(dir, "model.safetensors.index.json", "{\"weight_map\": {\"ghost\": \"" SHARD1 "\"}}");
  expect_open_fails(dir, VKF_STATUS_PARSE, "tensor \"ghost\"", SHARD1 " lacks it");

  /* The same tensor in two shards (the index maps it to one of them). */
  make_dir("duplicate", dir, sizeof dir);
  const tensor a[] = {{"dup.w", "F32", "[3]", layer1_w, sizeof layer1_w}};
  const tensor b[] = {{"other", "F32", "[2]", head_w, sizeof head_w},
                      {"dup.w", "F32", "[2]", head_w, sizeof head_w}};
  write_shard(dir, SHARD1, a, 1);
  write_shard(dir, SHARD2, b, 2);
  write_text(dir, "model.safetensors.index.json",
             "{\"weight_map\": {\"dup.w\": \"" SHARD1 "\", \"other\": \"" SHARD2 "\"}}");
  char both[1024];
  snprintf(both, sizeof both, "tensor \"dup.w\" is in both %s/" SHARD1 " and %s/" SHARD2, dir, dir);
  expect_open_fails(dir, VKF_STATUS_PARSE, both, "model.safetensors.index.json: ");

  /* Also when the index lists it in neither shard. */
  make_dir("duplicate_unindexed", dir, sizeof dir);
  const tensor c[] = {{"x", "F32", "[1]", extra_w, sizeof extra_w},
                      {"dup.w", "F32", "[3]", layer1_w, sizeof layer1_w}};
  write_shard(dir, SHARD1, c, 2);
  write_shard(dir, SHARD2, b, 2);
  write_text(dir, "model.safetensors.index.json",
             "{\"weight_map\": {\"x\": \"" SHARD1 "\", \"other\": \"" SHARD2 "\"}}");
  expect_open_fails(dir, VKF_STATUS_PARSE, "tensor \"dup.w\" is in both ", SHARD2);
}

/* A folder holding shard 1 and `index` as its index; opening must fail with `code` and `needle`
 * (and always the index path). */
static void bad_index(const char *name, const char *index, vkf_status_code code,
                      const char *needle) {
  char dir[128];
  make_dir(name, dir, sizeof dir);
  write_shard(dir, SHARD1, shard1, 2);
  write_text(dir, "model.safetensors.index.json", index);
  char path[512];
  snprintf(path, sizeof path, "%s/model.safetensors.index.json: ", dir);
  expect_open_fails(dir, code, path, needle);
}

static void test_malformed_index(void) {
  bad_index("not_json", "{\"weight_map\": {\"embed.weight\": ", VKF_STATUS_PARSE, "not valid JSON");
  bad_index("trailing", "{\"weight_map\": {}} x", VKF_STATUS_PARSE, "not valid JSON");
  bad_index("empty_file", "", VKF_STATUS_PARSE, "not valid JSON");
  bad_index("not_object", "[\"" SHARD1 "\"]", VKF_STATUS_PARSE, "not a JSON object");
  bad_index("no_map", "{\"metadata\": {\"total_size\": 1}}", VKF_STATUS_PARSE, "no \"weight_map\"");
  bad_index("map_array", "{\"weight_map\": [\"" SHARD1 "\"]}", VKF_STATUS_PARSE,
            "\"weight_map\" is not an object");
  bad_index("map_empty", "{\"weight_map\": {}}", VKF_STATUS_PARSE, "\"weight_map\" is empty");
  bad_index("non_string", "{\"weight_map\": {\"embed.weight\": \"" SHARD1 "\", \"w.q\": 3}}",
            VKF_STATUS_PARSE, "weight_map[\"w.q\"] is not a string");
  bad_index("null_value", "{\"weight_map\": {\"w.k\": null}}", VKF_STATUS_PARSE,
            "weight_map[\"w.k\"] is not a string");
  bad_index("dotdot", "{\"weight_map\": {\"w.v\": \"../x\"}}", VKF_STATUS_PARSE,
            "weight_map[\"w.v\"] is \"../x\"");
  bad_index("dotdot_only", "{\"weight_map\": {\"w.v\": \"..\"}}", VKF_STATUS_PARSE,
            "weight_map[\"w.v\"] is \"..\"");
  bad_index("slash", "{\"weight_map\": {\"w.o\": \"/etc/passwd\"}}", VKF_STATUS_PARSE,
            "is \"/etc/passwd\"");
  bad_index("empty_name", "{\"weight_map\": {\"w.e\": \"\"}}", VKF_STATUS_PARSE,
            "weight_map[\"w.e\"] is an empty shard name");

  char long_index[600];
  char long_name[300];
  memset(long_name, 'a', 299);
  long_name[299] = '\0';
  snprintf(long_index, sizeof long_index, "{\"weight_map\": {\"w.long\": \"%s\"}}", long_name);
  bad_index("long_name", long_index, VKF_STATUS_PARSE,
            "weight_map[\"w.long\"] is a shard name of 299 bytes");

  /* 4097 distinct shard names: refused before any is opened. */
  size_t cap = 4097 * 64 + 64, used = 0;
  char *many = malloc(cap);
  VKF_ASSERT(many);
  used += (size_t)snprintf(many, cap, "{\"weight_map\": {");
  for (int i = 0; i < 4097; i++)
    used += (size_t)snprintf(many + used, cap - used, "%s\"t%d\": \"s%05d.safetensors\"",
                             i ? ", " : "", i, i);
  snprintf(many + used, cap - used, "}}");
  bad_index("many_shards", many, VKF_STATUS_UNSUPPORTED, "names 4097 shard files, more than 4096");
  free(many);
}

static void test_bad_files(void) {
  char dir[128], path[512];
  /* A truncated shard: the reader's error, prefixed with the index path. */
  make_dir("truncated", dir, sizeof dir);
  write_sharded(dir);
  snprintf(path, sizeof path, "%s/" SHARD2, dir);
  struct stat sb;
  VKF_ASSERT(stat(path, &sb) == 0);
  VKF_ASSERT(truncate(path, sb.st_size - 5) == 0);
  char prefix[1024];
  snprintf(prefix, sizeof prefix, "%s/model.safetensors.index.json: %s: ", dir, path);
  expect_open_fails(dir, VKF_STATUS_PARSE, prefix, "past the end of the data section");

  /* A shard cut inside its 8-byte length. */
  make_dir("truncated_short", dir, sizeof dir);
  write_sharded(dir);
  snprintf(path, sizeof path, "%s/" SHARD3, dir);
  VKF_ASSERT(truncate(path, 3) == 0);
  expect_open_fails(dir, VKF_STATUS_PARSE, path, "truncated");

  /* A folder where the index should be: a clear error, not an allocation of its "size". */
  make_dir("index_is_dir", dir, sizeof dir);
  snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
  VKF_ASSERT(mkdir(path, 0700) == 0);
  char msg[1024];
  snprintf(msg, sizeof msg, "%s: is a directory", path);
  expect_open_fails(dir, VKF_STATUS_IO, msg, NULL);

  /* A folder named like a shard. */
  make_dir("shard_is_dir", dir, sizeof dir);
  write_shard(dir, SHARD1, shard1, 2);
  write_shard(dir, SHARD3, shard3, 2);
  write_text(dir, "model.safetensors.index.json", good_index);
  snprintf(path, sizeof path, "%s/" SHARD2, dir);
  VKF_ASSERT(mkdir(path, 0700) == 0);
  expect_open_fails(dir, VKF_STATUS_IO, path, "not a regular file");

  /* A folder named model.safetensors is that file's error, not a reason to try the index. */
  make_dir("single_is_dir", dir, sizeof dir);
  write_sharded(dir);
  snprintf(path, sizeof path, "%s/model.safetensors", dir);
  VKF_ASSERT(mkdir(path, 0700) == 0);
  expect_open_fails(dir, VKF_STATUS_IO, path, "not a regular file");

  /* A FIFO as the single file and as a shard: refused at once, as the index below. */
  make_dir("single_is_fifo", dir, sizeof dir);
  snprintf(path, sizeof path, "%s/model.safetensors", dir);
  VKF_ASSERT(mkfifo(path, 0600) == 0);
  expect_open_fails(dir, VKF_STATUS_IO, path, "not a regular file");
  make_dir("shard_is_fifo", dir, sizeof dir);
  write_shard(dir, SHARD1, shard1, 2);
  write_shard(dir, SHARD3, shard3, 2);
  write_text(dir, "model.safetensors.index.json", good_index);
  snprintf(path, sizeof path, "%s/" SHARD2, dir);
  VKF_ASSERT(mkfifo(path, 0600) == 0);
  expect_open_fails(dir, VKF_STATUS_IO, path, "not a regular file");

  /* A FIFO as the index: refused at once (opening it must not wait for a writer). */
  make_dir("index_is_fifo", dir, sizeof dir);
  snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
  VKF_ASSERT(mkfifo(path, 0600) == 0);
  expect_open_fails(dir, VKF_STATUS_IO, path, "not a regular file");

  /* An index above the size bound (a sparse file: nothing is written). */
  make_dir("index_huge", dir, sizeof dir);
  snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  VKF_ASSERT(fd >= 0);
  VKF_ASSERT(ftruncate(fd, (off_t)VKF_CHECKPOINT_MAX_INDEX_SIZE + 1) == 0);
  close(fd);
  expect_open_fails(dir, VKF_STATUS_UNSUPPORTED, path, "67108865 bytes, more than an index may have");
}

int main(void) {
  alarm(120); /* a hang (say, opening a FIFO that waits for a writer) fails instead of stalling */
  snprintf(root, sizeof root, "/tmp/vkf_checkpoint_XXXXXX");
  VKF_ASSERT(mkdtemp(root));
  init_values();
  test_sharded();
  test_single_file();
  test_missing_files();
  test_index_mapping();
  test_malformed_index();
  test_bad_files();
  VKF_ASSERT(nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0);
  return test_report();
}
