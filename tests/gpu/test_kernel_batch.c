/* Kernels built on worker threads (host/kernel_batch.h): every distinct variant is built once and
 * lands in the device's cache, duplicates and cached ones are skipped, a failure names its shader
 * while the others still arrive, and a session created with finish_later runs correctly after
 * writes made while its kernels were still building. */
#include "host/kernel_batch.h"
#include "host/session.h"
#include "tests/gpu_util.h"

enum { VARIANTS = 12 };

static vkf_kernel_desc axpy(const uint32_t *local_size) {
  return (vkf_kernel_desc){.shader = "axpy.comp",
                           .spec_constants = local_size,
                           .spec_constant_count = 1,
                           .binding_count = 2,
                           .push_constant_size = 8};
}

static void many_variants(gpu_test *t) {
  /* Workgroup sizes 16..192: distinct variants, plus duplicates and one already cached. */
  static uint32_t sizes[VARIANTS];
  vkf_kernel_desc descs[VARIANTS + 4];
  for (int i = 0; i < VARIANTS; i++) {
    sizes[i] = 16u * (uint32_t)(i + 1);
    descs[i] = axpy(&sizes[i]);
  }
  descs[VARIANTS] = axpy(&sizes[0]);
  descs[VARIANTS + 1] = axpy(&sizes[5]);
  static const uint32_t cached_size = 512;
  descs[VARIANTS + 2] = axpy(&cached_size);
  descs[VARIANTS + 3] = axpy(&sizes[VARIANTS - 1]);
  vkf_kernel *cached = NULL;
  CHECK_OK(vkf_kernel_get(t->device, &descs[VARIANTS + 2], &cached));

  vkf_device_stats before = vkf_device_stats_get(t->device);
  vkf_kernel_batch *b = NULL;
  CHECK_OK(vkf_kernel_batch_start(t->device, descs, VARIANTS + 4, &b));
  CHECK_OK(vkf_kernel_batch_wait(b));
  vkf_device_stats built = vkf_device_stats_get(t->device);
  CHECK_MSG(built.kernels_created - before.kernels_created == VARIANTS, "%u built, %d expected",
            built.kernels_created - before.kernels_created, VARIANTS);
  /* Each variant is in the cache now: asking again builds nothing. */
  for (int i = 0; i < VARIANTS + 4; i++) {
    vkf_kernel *k = NULL;
    CHECK_OK(vkf_kernel_get(t->device, &descs[i], &k));
    CHECK(k && !strcmp(vkf_kernel_name(k), "axpy.comp") && vkf_kernel_binding_count(k) == 2);
    if (i == VARIANTS + 2) CHECK(k == cached);
  }
  vkf_device_stats after = vkf_device_stats_get(t->device);
  CHECK(after.kernels_created == built.kernels_created);
  CHECK(after.kernel_cache_hits - built.kernel_cache_hits == VARIANTS + 4);

  /* Nothing new to build: no threads, and waiting (also on NULL) is a no-op. */
  CHECK_OK(vkf_kernel_batch_start(t->device, descs, VARIANTS + 4, &b));
  CHECK_OK(vkf_kernel_batch_wait(b));
  CHECK_OK(vkf_kernel_batch_start(t->device, descs, 0, &b));
  CHECK_OK(vkf_kernel_batch_wait(b));
  CHECK_OK(vkf_kernel_batch_wait(NULL));
  CHECK(vkf_device_stats_get(t->device).kernels_created == built.kernels_created);
}

static void failures(gpu_test *t) {
  static const uint32_t good_size = 97;
  vkf_kernel_desc descs[2] = {axpy(&good_size), axpy(&good_size)};
  descs[0].shader = "no_such_shader.comp";
  vkf_device_stats before = vkf_device_stats_get(t->device);
  vkf_kernel_batch *b = NULL;
  CHECK_OK(vkf_kernel_batch_start(t->device, descs, 2, &b));
  CHECK_STATUS(vkf_kernel_batch_wait(b), VKF_STATUS_NOT_FOUND, "no_such_shader.comp");
  /* The good variant was still built and kept. */
  CHECK(vkf_device_stats_get(t->device).kernels_created == before.kernels_created + 1);

  /* A malformed descriptor is refused before any thread starts. */
  vkf_kernel_desc bad = axpy(&good_size);
  bad.binding_count = VKF_KERNEL_MAX_BINDINGS + 1;
  CHECK_STATUS(vkf_kernel_batch_start(t->device, &bad, 1, &b), VKF_STATUS_INVALID_ARGUMENT,
               "bad descriptor");
  CHECK(b == NULL);
}

enum { N = 1000 };

/* y = a·x + y over N floats in workgroups of `local_size`: plan buffers 0 (x) and 1 (y). */
static vkf_plan *axpy_plan(uint32_t local_size, float a) {
  vkf_plan *p = vkf_plan_create();
  uint32_t x = vkf_plan_add_buffer(p, VKF_PLAN_BUFFER_INPUT, "x", N * 4);
  uint32_t y = vkf_plan_add_buffer(p, VKF_PLAN_BUFFER_OUTPUT, "y", N * 4);
  vkf_plan_dispatch d = {.node = "axpy", .shader = "axpy.comp", .spec = {local_size},
                         .spec_count = 1, .groups = {(N + local_size - 1) / local_size, 1, 1}};
  vkf_plan_dispatch_bind(&d, x, 0, N * 4, VKF_ACCESS_READ);
  vkf_plan_dispatch_bind(&d, y, 0, N * 4, VKF_ACCESS_READ_WRITE);
  vkf_plan_dispatch_push_u32(&d, N);
  vkf_plan_dispatch_push_f32(&d, a);
  CHECK_OK(vkf_plan_add_dispatch(p, &d));
  vkf_plan_finalize(p);
  return p;
}

/* finish_later: the caller writes while the kernels build; the first run finishes the session. */
static void session_finish_later(gpu_test *t) {
  vkf_plan *p = axpy_plan(72, 3.0f);
  for (int explicit_finish = 0; explicit_finish < 2; explicit_finish++) {
    vkf_session *s = NULL;
    vkf_session_options opts = {.finish_later = 1};
    CHECK_OK(vkf_session_create(t->device, p, &opts, &s));
    float hx[N], hy[N], out[N];
    for (int i = 0; i < N; i++) hx[i] = (float)(i % 13), hy[i] = (float)i;
    CHECK_OK(vkf_session_write(s, 0, 0, hx, sizeof hx));
    CHECK_OK(vkf_session_write(s, 1, 0, hy, sizeof hy));
    if (explicit_finish) {
      CHECK_OK(vkf_session_finish(s));
      CHECK_OK(vkf_session_finish(s));
    }
    CHECK_OK(vkf_session_run(s));
    CHECK_OK(vkf_session_read(s, 1, 0, out, sizeof out));
    int bad = 0;
    for (int i = 0; i < N; i++) bad += out[i] != 3.0f * hx[i] + (float)i;
    CHECK_MSG(bad == 0, "finish %s: %d wrong", explicit_finish ? "explicit" : "by the run", bad);
    vkf_session_destroy(s);
  }
  vkf_plan_destroy(p);
  /* Destroyed while still building (a variant of its own: the one above is cached by now): the
   * workers are joined first, which ASan and validation would catch otherwise. */
  p = axpy_plan(80, 1.0f);
  vkf_session *s = NULL;
  vkf_session_options opts = {.finish_later = 1};
  CHECK_OK(vkf_session_create(t->device, p, &opts, &s));
  vkf_session_destroy(s);
  vkf_plan_destroy(p);
}

int main(void) {
  gpu_test t = gpu_test_start();
  many_variants(&t);
  failures(&t);
  session_finish_later(&t);
  return gpu_test_finish(&t);
}
