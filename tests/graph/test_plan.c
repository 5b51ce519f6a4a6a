/* Plan container and hazard analysis: barriers go exactly where a read-after-write,
 * write-after-write or write-after-read would race. No GPU. */
#include "graph/lower/plan.h"
#include "tests/test_util.h"

static void add(vkf_plan *p, const char *node, uint32_t buf, uint64_t r_off, uint64_t w_off) {
  vkf_plan_dispatch d = {.node = node, .shader = "axpy.comp", .groups = {1, 1, 1}};
  vkf_plan_dispatch_bind(&d, buf, r_off, 64, VKF_ACCESS_READ);
  vkf_plan_dispatch_bind(&d, buf, w_off, 64, VKF_ACCESS_WRITE);
  vkf_plan_dispatch_push_u32(&d, 16);
  CHECK_OK(vkf_plan_add_dispatch(p, &d));
}

int main(void) {
  vkf_plan *p = vkf_plan_create();
  uint32_t arena = vkf_plan_add_buffer(p, VKF_PLAN_BUFFER_ARENA, "arena", 1024);
  add(p, "a", arena, 0, 64);     /* reads [0,64) writes [64,128) */
  add(p, "b", arena, 256, 512);  /* independent: no barrier */
  add(p, "c", arena, 64, 128);   /* reads a's output: RAW -> barrier */
  add(p, "d", arena, 768, 0);    /* writes [0,64) which a read, but a barrier came after a: none */
  add(p, "e", arena, 896, 64);   /* writes what c read since the barrier: WAR -> barrier */
  vkf_plan_finalize(p);
  CHECK(vkf_plan_dispatch_get(p, 0)->barrier_before == 0);
  CHECK(vkf_plan_dispatch_get(p, 1)->barrier_before == 0);
  CHECK(vkf_plan_dispatch_get(p, 2)->barrier_before == 1);
  CHECK(vkf_plan_dispatch_get(p, 3)->barrier_before == 0);
  CHECK(vkf_plan_dispatch_get(p, 4)->barrier_before == 1);
  CHECK(vkf_plan_barrier_count(p) == 2);
  vkf_plan_dispatch bad = {.node = "oob", .shader = "axpy.comp"};
  vkf_plan_dispatch_bind(&bad, arena, 1000, 64, VKF_ACCESS_READ);
  CHECK_STATUS(vkf_plan_add_dispatch(p, &bad), VKF_STATUS_INTERNAL, "oob");
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  vkf_plan_dump_text(p, f);
  fclose(f);
  CHECK(strstr(text, "plan: 1 buffers, 5 dispatches, 2 barriers\n") == text);
  CHECK(strstr(text, "dispatch 2 \"c\" axpy.comp groups=1x1x1\n    binding 0: buffer 0 [64, +64) r\n") != NULL);
  free(text);
  vkf_plan_destroy(p);
  return test_report();
}
