/* Status, arena and env plumbing that every layer relies on. */
#include <stdlib.h>

#include "graph/base/arena.h"
#include "graph/base/env.h"
#include "graph/base/status.h"
#include "tests/test_util.h"

static vkf_status fails_with_shape(void) {
  return vkf_status_make(VKF_STATUS_SHAPE, "inner dims differ: [%d,%d]", 197, 768);
}

static vkf_status propagates(void) {
  VKF_RETURN_IF_ERROR(fails_with_shape());
  return VKF_OK;
}

int main(void) {
  vkf_status s = propagates();
  CHECK(vkf_status_code_of(s) == VKF_STATUS_SHAPE);
  s = vkf_status_annotate(s, "matmul \"%s\": ", "blocks.3.attn.qkv");
  CHECK(strcmp(vkf_status_message(s), "matmul \"blocks.3.attn.qkv\": inner dims differ: [197,768]") == 0);
  vkf_status_free(s);
  CHECK(vkf_status_code_of(VKF_OK) == VKF_STATUS_OK);
  CHECK(strcmp(vkf_status_message(VKF_OK), "") == 0);
  /* A quoted file field with control bytes still gives a one-line message (found by fuzzing). */
  s = vkf_status_make(VKF_STATUS_PARSE, "type \"%s\"", "a\nb\tc\x1b[2J\x7f");
  s = vkf_status_annotate(s, "f\r: ");
  CHECK(strcmp(vkf_status_message(s), "f\\r: type \"a\\nb\\tc\\x1b[2J\\x7f\"") == 0);
  vkf_status_free(s);

  vkf_arena *arena = vkf_arena_create();
  CHECK(arena != NULL);
  char *name = vkf_arena_printf(arena, "blocks.%d.mlp", 11);
  CHECK(strcmp(name, "blocks.11.mlp") == 0);
  for (int i = 0; i < 1000; i++) {
    unsigned char *p = vkf_arena_alloc(arena, 1000);
    CHECK(p != NULL && ((size_t)p % 16) == 0 && p[999] == 0);
  }
  CHECK(vkf_arena_used_size(arena) >= 1000 * 1000);
  vkf_arena_destroy(arena);

  setenv("VKF_NO_FUSE", "gemm,attention", 1);
  vkf_env_reload();
  CHECK(vkf_env_list_has(vkf_env_get()->no_fuse, "attention"));
  CHECK(!vkf_env_list_has(vkf_env_get()->no_fuse, "elementwise"));
  return test_report();
}
