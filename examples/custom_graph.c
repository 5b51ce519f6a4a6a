/* custom_graph: a model of your own with the graph builder API (the vkf_ headers installed under
 * include/vkformer/; no stability promise across minor versions, unlike vkformer.h). It builds
 * y = relu(x·W + b) + x for x [4, 8], W [8, 8], runs it on the default device and checks it
 * against the same arithmetic in plain C. The builder's functions are in libvkformer.a only:
 *
 *   cc custom_graph.c $(pkg-config --static --cflags --libs vkformer-static) -o custom_graph
 */
#include <stdio.h>

#include <graph/ir/builder.h>
#include <host/runner.h>

enum { M = 4, K = 8 };

static int failed(vkf_status status, const char *what) {
  if (!status) return 0;
  fprintf(stderr, "custom_graph: %s: %s\n", what, vkf_status_message(status));
  vkf_status_free(status);
  return 1;
}

int main(void) {
  static float x[M * K], w[K * K], b[K], y[M * K];
  for (int i = 0; i < M * K; i++) x[i] = (float)((i * 7) % 11) / 11.0f - 0.5f;
  for (int i = 0; i < K * K; i++) w[i] = (float)((i * 5) % 13) / 13.0f - 0.5f;
  for (int i = 0; i < K; i++) b[i] = 0.1f * (float)i - 0.3f;

  /* The graph: an input, two constants (borrowed host data), one matmul with its epilogue. */
  vkf_graph *g = NULL;
  if (failed(vkf_graph_create("custom", &g), "graph")) return 1;
  vkf_value in = vkf_graph_input(g, "x", VKF_F32, 2, (int64_t[]){M, K});
  vkf_value weight = vkf_graph_constant(g, "w", VKF_F32, 2, (int64_t[]){K, K}, w);
  vkf_value bias = vkf_graph_constant(g, "b", VKF_F32, 1, (int64_t[]){K}, b);
  vkf_matmul_options mo = {.bias = bias, .activation = VKF_ACT_RELU, .residual = in};
  vkf_value out = vkf_graph_output(g, vkf_matmul(g, "linear", in, weight, &mo), "y");
  int bad = failed(vkf_graph_status(g), "build");

  /* The device: an instance (validation per VKF_VALIDATE), the best device, a runner. */
  vkf_instance *instance = NULL;
  vkf_device *device = NULL;
  vkf_runner *runner = NULL;
  uint32_t index = 0;
  if (!bad) bad = failed(vkf_instance_create(NULL, &instance), "instance");
  if (!bad) bad = failed(vkf_instance_choose_device(instance, NULL, &index), "device");
  if (!bad) bad = failed(vkf_device_create(instance, index, &device), "device");
  if (!bad) bad = failed(vkf_runner_create(device, g, NULL, &runner), "runner");
  if (!bad) bad = failed(vkf_runner_set(runner, in, x, sizeof x), "set x");
  if (!bad) bad = failed(vkf_runner_run(runner), "run");
  if (!bad) bad = failed(vkf_runner_get(runner, out, y, sizeof y), "get y");

  /* The reference, and the largest difference. */
  float worst = 0;
  for (int i = 0; !bad && i < M; i++) {
    for (int j = 0; j < K; j++) {
      float acc = b[j];
      for (int k = 0; k < K; k++) acc += x[i * K + k] * w[k * K + j];
      float want = (acc > 0 ? acc : 0) + x[i * K + j];
      float diff = y[i * K + j] > want ? y[i * K + j] - want : want - y[i * K + j];
      if (diff > worst) worst = diff;
    }
  }
  if (!bad) {
    printf("y[0] = %.6f %.6f %.6f ... max |y - reference| = %.3g\n", y[0], y[1], y[2], worst);
    bad = worst > 1e-5f;
  }
  if (instance && vkf_instance_validation_message_count(instance) > 0) {
    fprintf(stderr, "custom_graph: %u validation messages\n",
            vkf_instance_validation_message_count(instance));
    bad = 1;
  }
  vkf_runner_destroy(runner);
  vkf_device_destroy(device);
  vkf_instance_destroy(instance);
  vkf_graph_destroy(g);
  return bad ? 1 : 0;
}
