/* Scheduler on lavapipe: a plan runs through a session, barriers land where the plan says,
 * re-running records nothing new, and profiling yields per-dispatch times. */
#include "host/session.h"
#include "tests/gpu_util.h"

int main(void) {
  gpu_test t = gpu_test_start();
  enum { N = 4096 };
  vkf_plan *p = vkf_plan_create();
  uint32_t x = vkf_plan_add_buffer(p, VKF_PLAN_BUFFER_INPUT, "x", N * 4);
  uint32_t y = vkf_plan_add_buffer(p, VKF_PLAN_BUFFER_OUTPUT, "y", N * 4);
  /* y = 2x + y, then y = 3y... expressed as axpy(a=2, x, y) twice on dependent data. */
  for (int i = 0; i < 2; i++) {
    vkf_plan_dispatch d = {.node = i ? "second" : "first", .shader = "axpy.comp",
                           .spec = {256}, .spec_count = 1, .groups = {N / 256, 1, 1}};
    vkf_plan_dispatch_bind(&d, x, 0, N * 4, VKF_ACCESS_READ);
    vkf_plan_dispatch_bind(&d, y, 0, N * 4, VKF_ACCESS_READ_WRITE);
    vkf_plan_dispatch_push_u32(&d, N);
    vkf_plan_dispatch_push_f32(&d, 2.0f);
    CHECK_OK(vkf_plan_add_dispatch(p, &d));
  }
  vkf_plan_finalize(p);
  CHECK(vkf_plan_barrier_count(p) == 1);
  vkf_session *s = NULL;
  vkf_session_options opts = {.profile = 1};
  CHECK_OK(vkf_session_create(t.device, p, &opts, &s));
  float hx[N], hy[N], out[N];
  for (int i = 0; i < N; i++) hx[i] = (float)(i % 17), hy[i] = 1.0f;
  vkf_device_stats before = vkf_device_stats_get(t.device);
  for (int run = 0; run < 3; run++) {
    CHECK_OK(vkf_session_write(s, x, 0, hx, sizeof hx));
    CHECK_OK(vkf_session_write(s, y, 0, hy, sizeof hy));
    CHECK_OK(vkf_session_run(s));
    CHECK_OK(vkf_session_read(s, y, 0, out, sizeof out));
    int bad = 0;
    for (int i = 0; i < N; i++) bad += out[i] != 4.0f * hx[i] + 1.0f;
    CHECK_MSG(bad == 0, "run %d: %d wrong", run, bad);
  }
  vkf_device_stats after = vkf_device_stats_get(t.device);
  CHECK(after.kernels_created == before.kernels_created); /* runs compile and record nothing */
  double times[2];
  CHECK_OK(vkf_session_dispatch_times(s, times));
  CHECK(times[0] > 0 && times[1] > 0 && vkf_session_total_ns(s) >= times[0] + times[1] - 1);
  CHECK(vkf_session_device_bytes(s) == 2 * N * 4);
  CHECK_STATUS(vkf_session_write(s, 7, 0, hx, 4), VKF_STATUS_INVALID_ARGUMENT, "plan buffer 7");
  vkf_session_destroy(s);
  vkf_plan_destroy(p);
  return gpu_test_finish(&t);
}
