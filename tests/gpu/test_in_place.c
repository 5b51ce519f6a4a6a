/* Constants bound in place from host memory (vkf_buffer_import_host) on lavapipe with validation:
 * a buffer over a read-only file mapping at an offset inside its page is read by a kernel and a
 * download exactly as a copy would be, refuses writes, and refuses data whose offset a descriptor
 * cannot take; a runner binds the large aligned constants of a graph in place, copies the rest
 * (small, padded, misaligned), and computes what the interpreter computes either way. */
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "graph/base/env.h"
#include "graph/ir/builder.h"
#include "host/device_internal.h"
#include "host/runner.h"
#include "tests/op_harness.h"

/* A read-only mapping of a file holding `bytes` of `data` after `offset` bytes of padding, as a
 * checkpoint's tensors sit after its header. */
static const unsigned char *map_file(const void *data, size_t offset, size_t bytes, size_t *len) {
  char path[] = "/tmp/vkf_in_place_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  unlink(path);
  unsigned char zero[64] = {0};
  CHECK(offset <= sizeof zero && write(fd, zero, offset) == (ssize_t)offset);
  CHECK(write(fd, data, bytes) == (ssize_t)bytes);
  *len = offset + bytes;
  void *m = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  CHECK(m != MAP_FAILED);
  return m;
}

static void test_buffer(gpu_test *t) {
  enum { N = 100000 };
  float *x = malloc(N * sizeof(float)), *y = malloc(N * sizeof(float));
  float *out = malloc(N * sizeof(float));
  for (int i = 0; i < N; i++) x[i] = (float)(i % 997) * 0.25f, y[i] = (float)(i % 5) - 2.0f;
  size_t len = 0;
  const unsigned char *m = map_file(x, 48, N * sizeof(float), &len);
  vkf_buffer *bx = NULL, *by = NULL;
  vkf_status st = vkf_buffer_import_host(t->device, m + 48, N * sizeof(float), "x", &bx);
  if (!t->device->host_import_alignment) {
    /* A device without the extension (or not UMA) says so and the caller copies. */
    CHECK_STATUS(st, VKF_STATUS_UNSUPPORTED, "in place");
    munmap((void *)m, len);
    free(x), free(y), free(out);
    return;
  }
  CHECK_OK(st);
  CHECK(vkf_buffer_is_imported(bx) && vkf_buffer_size(bx) == N * sizeof(float));
  CHECK_OK(vkf_buffer_create(t->device, N * sizeof(float), "y", &by));
  CHECK(!vkf_buffer_is_imported(by));
  CHECK_OK(vkf_buffer_upload(t->device, by, 0, y, N * sizeof(float)));
  /* y[256:] += 2 x[256:]: a binding offset on top of the data's offset in its page. */
  uint32_t wg = 256;
  vkf_kernel_desc desc = {.shader = "axpy.comp", .spec_constants = &wg, .spec_constant_count = 1,
                          .binding_count = 2, .push_constant_size = 8};
  vkf_kernel *k = NULL;
  CHECK_OK(vkf_kernel_get(t->device, &desc, &k));
  enum { SKIP = 256 };
  struct { uint32_t n; float a; } push = {N - SKIP, 2.0f};
  vkf_cmd *cmd = NULL;
  CHECK_OK(vkf_cmd_create(t->device, 0, &cmd));
  vkf_binding b[2] = {{bx, SKIP * sizeof(float), 0}, {by, SKIP * sizeof(float), 0}};
  CHECK_OK(vkf_cmd_begin(cmd));
  CHECK_OK(vkf_cmd_dispatch(cmd, k, b, &push, (N - SKIP + wg - 1) / wg, 1, 1));
  CHECK_OK(vkf_cmd_end(cmd));
  CHECK_OK(vkf_cmd_submit_wait(cmd));
  CHECK_OK(vkf_buffer_download(t->device, by, 0, out, N * sizeof(float)));
  int bad = 0;
  for (int i = 0; i < N; i++) bad += out[i] != (i < SKIP ? y[i] : 2.0f * x[i] + y[i]);
  CHECK_MSG(bad == 0, "%d of %d results differ reading the file in place", bad, N);
  /* Reads come back from the host bytes; writes are refused (the mapping is read-only). */
  CHECK_OK(vkf_buffer_download(t->device, bx, 4, out, 16));
  CHECK(memcmp(out, x + 1, 16) == 0);
  CHECK_STATUS(vkf_buffer_upload(t->device, bx, 0, y, 16), VKF_STATUS_INVALID_ARGUMENT, "read-only");
  CHECK_STATUS(vkf_buffer_zero(t->device, bx, 0, 16), VKF_STATUS_INVALID_ARGUMENT, "read-only");
  vkf_buffer *odd = NULL;
  /* 52 bytes into a page: no descriptor offset can start there. */
  CHECK_STATUS(vkf_buffer_import_host(t->device, m + 52, 1024, "odd", &odd),
               VKF_STATUS_UNSUPPORTED, "aligned");
  CHECK(odd == NULL);
  vkf_cmd_destroy(cmd);
  vkf_buffer_destroy(bx);
  vkf_buffer_destroy(by);
  munmap((void *)m, len);
  free(x), free(y), free(out);
}

/* y1 = x @ W1 (W1 [64, 512]: 128 KiB, aligned: in place), y2 = x @ W2 (W2 [64, 300] at a file
 * offset 4 bytes past a 16-byte boundary: copied), y3 = x[:, :7] @ W3 (W3 [7, 2341]: 65548
 * bytes, not a multiple of 16: copied), y4 = x @ W4 (W4 [64, 16]: 4 KiB, small: copied). */
static void test_runner(gpu_test *t, int copy_all) {
  enum { R = 5, K = 64 };
  size_t n1 = (size_t)K * 512, n2 = (size_t)K * 300, n3 = (size_t)7 * 2341, n4 = (size_t)K * 16;
  size_t o1 = 0, o2 = n1 + 1, o3 = o2 + n2 + 3, o4 = o3 + n3 + 1, total = o4 + n4;
  float *w = malloc(total * sizeof(float)), *x = malloc(R * K * sizeof(float));
  op_fill_uniform(w, total, 7, -1.0f, 1.0f);
  op_fill_uniform(x, R * K, 8, -1.0f, 1.0f);
  size_t len = 0;
  const unsigned char *m = map_file(w, 32, total * sizeof(float), &len);
  const float *mw = (const float *)(m + 32);
  vkf_graph *g = NULL;
  CHECK_OK(vkf_graph_create("in_place", &g));
  int64_t xs[2] = {R, K}, s1[2] = {K, 512}, s2[2] = {K, 300}, s3[2] = {7, 2341}, s4[2] = {K, 16};
  vkf_value vx = vkf_graph_input(g, "x", VKF_F32, 2, xs);
  vkf_value w1 = vkf_graph_constant(g, "w1", VKF_F32, 2, s1, mw + o1);
  vkf_value w2 = vkf_graph_constant(g, "w2", VKF_F32, 2, s2, mw + o2);
  vkf_value w3 = vkf_graph_constant(g, "w3", VKF_F32, 2, s3, mw + o3);
  vkf_value w4 = vkf_graph_constant(g, "w4", VKF_F32, 2, s4, mw + o4);
  vkf_graph_output(g, vkf_matmul(g, "y1", vx, w1, NULL), "y1");
  vkf_graph_output(g, vkf_matmul(g, "y2", vx, w2, NULL), "y2");
  vkf_value x7 = vkf_slice(g, "x7", vx, 1, 0, 7);
  vkf_graph_output(g, vkf_matmul(g, "y3", vkf_copy(g, "x7c", x7), w3, NULL), "y3");
  vkf_graph_output(g, vkf_matmul(g, "y4", vx, w4, NULL), "y4");
  CHECK_OK(vkf_graph_status(g));
  if (copy_all) setenv("VKF_COPY_WEIGHTS", "1", 1);
  vkf_env_reload();
  vkf_runner *r = NULL;
  CHECK_OK(vkf_runner_create(t->device, g, NULL, &r));
  unsetenv("VKF_COPY_WEIGHTS");
  vkf_env_reload();
  uint64_t want = copy_all || !t->device->host_import_alignment ? 0 : n1 * sizeof(float);
  CHECK_MSG(vkf_runner_in_place_bytes(r) == want, "%llu bytes in place, %llu expected",
            (unsigned long long)vkf_runner_in_place_bytes(r), (unsigned long long)want);
  CHECK_OK(vkf_runner_set(r, vx, x, R * K * sizeof(float)));
  CHECK_OK(vkf_runner_run(r));
  vkf_input_binding in = {vx, x, R * K * sizeof(float)};
  const size_t cols[4] = {512, 300, 2341, 16};
  for (uint32_t i = 0; i < 4; i++) {
    size_t count = R * cols[i];
    float *dev = malloc(count * sizeof(float)), *ref = malloc(count * sizeof(float));
    CHECK_OK(vkf_runner_get(r, vkf_graph_output_at(g, i), dev, count * sizeof(float)));
    CHECK_OK(op_run_interp(g, &in, 1, i, ref, count));
    int bad = 0;
    for (size_t j = 0; j < count; j++) bad += fabsf(dev[j] - ref[j]) > 1e-4f + 1e-4f * fabsf(ref[j]);
    CHECK_MSG(bad == 0, "output %u (%s): %d of %zu differ from the interpreter", i,
              copy_all ? "all copied" : "in place", bad, count);
    free(dev), free(ref);
  }
  vkf_runner_destroy(r);
  vkf_graph_destroy(g);
  munmap((void *)m, len);
  free(w), free(x);
}

int main(void) {
  gpu_test t = gpu_test_start();
  test_buffer(&t);
  test_runner(&t, 0);
  test_runner(&t, 1);
  return gpu_test_finish(&t);
}
