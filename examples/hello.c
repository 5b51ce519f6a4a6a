/* hello: a small program over vkformer's public C API, and nothing else (vkformer.h).
 *
 * It opens the default Vulkan device, loads a Hugging Face checkpoint folder, lists the model's
 * named inputs and outputs, then runs it:
 *   - a text model (an input_ids input): tokenizes TEXT with the checkpoint's own tokenizer, runs
 *     the model on the ids and prints each output's shape, first values and mean |value|;
 *   - an image classifier (ViT / DeiT): classifies the IMAGE files and prints their top 3 labels.
 *
 * Build it against an installed vkformer and run it:
 *   cc hello.c $(pkg-config --cflags --libs vkformer) -o hello
 *   ./hello MODEL_DIR "The cat fell at the bank."
 *   ./hello MODEL_DIR cat.jpg
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vkformer/vkformer.h>

/* Prints the status's message and frees it; returns 1 when it was an error. */
static int failed(vkformer_status status, const char *what) {
  if (!status) return 0;
  fprintf(stderr, "hello: %s: %s\n", what, vkformer_status_message(status));
  vkformer_status_free(status);
  return 1;
}

static const char *dtype_name(int32_t dtype) {
  return dtype == VKFORMER_F32 ? "f32" : dtype == VKFORMER_I32 ? "i32" : "i64";
}

static void print_io(const vkformer_io_info *io) {
  printf("  %-20s %s [", io->name, dtype_name(io->dtype));
  for (uint32_t d = 0; d < io->rank; d++) printf("%s%lld", d ? ", " : "", (long long)io->shape[d]);
  printf("]%s\n", io->required ? " required" : "");
}

/* Lists the inputs and outputs; -1 marks a dim the caller chooses (batch, sequence). */
static int list_io(const vkformer_model *model) {
  vkformer_io_info io;
  printf("inputs:\n");
  for (uint32_t i = 0; i < vkformer_model_input_count(model); i++) {
    if (failed(vkformer_model_input_info(model, i, &io), "input info")) return 1;
    print_io(&io);
  }
  printf("outputs:\n");
  for (uint32_t i = 0; i < vkformer_model_output_count(model); i++) {
    if (failed(vkformer_model_output_info(model, i, &io), "output info")) return 1;
    print_io(&io);
  }
  return 0;
}

/* Top 3 labels of each image. */
static int classify(vkformer_model *model, char **images, int count) {
  size_t k = vkformer_model_label_count(model) < 3 ? (size_t)vkformer_model_label_count(model) : 3;
  vkformer_class *top = calloc((size_t)count * k, sizeof *top);
  if (!top) return 1;
  vkformer_status st = vkformer_classify(model, (const char *const *)images, (size_t)count, k, top);
  if (failed(st, "classify")) {
    free(top);
    return 1;
  }
  for (int i = 0; i < count; i++) {
    printf("%s\n", images[i]);
    for (size_t j = 0; j < k; j++)
      printf("  %lld %.6f %s\n", (long long)top[i * k + j].id, top[i * k + j].prob,
             top[i * k + j].label);
  }
  free(top);
  return 0;
}

/* Tokenizes `text`, runs the model on [1, T] ids and prints every output. */
static int run_text(vkformer_model *model, const char *text) {
  const vkformer_tokenizer *tokenizer = NULL;
  if (failed(vkformer_model_tokenizer(model, &tokenizer), "tokenizer")) return 1;
  vkformer_tokens tokens = {0};
  if (failed(vkformer_tokenize(tokenizer, text, 1, &tokens), "tokenize")) return 1;
  printf("tokens:");
  for (size_t i = 0; i < tokens.count; i++) printf(" %s", tokens.tokens[i]);
  printf("\nids:");
  for (size_t i = 0; i < tokens.count; i++) printf(" %lld", (long long)tokens.ids[i]);
  printf("\n");

  vkformer_tensor input = {.name = "input_ids",
                           .dtype = VKFORMER_I64,
                           .rank = 2,
                           .shape = {1, (int64_t)tokens.count},
                           .data = tokens.ids};
  uint32_t count = vkformer_model_output_count(model);
  vkformer_tensor *outputs = calloc(count, sizeof *outputs);
  int bad = !outputs;
  for (uint32_t i = 0; !bad && i < count; i++) {
    vkformer_io_info io;
    bad = failed(vkformer_model_output_info(model, i, &io), "output info");
    if (!bad) outputs[i].name = io.name; /* the library fills the rest */
  }
  if (!bad) bad = failed(vkformer_model_forward(model, &input, 1, outputs, count), "forward");
  for (uint32_t i = 0; !bad && i < count; i++) {
    const vkformer_tensor *t = &outputs[i];
    const float *v = t->data;
    size_t n = 1;
    printf("%s [", t->name);
    for (uint32_t d = 0; d < t->rank; d++) {
      printf("%s%lld", d ? ", " : "", (long long)t->shape[d]);
      n *= (size_t)t->shape[d];
    }
    double sum = 0;
    for (size_t j = 0; j < n; j++) sum += v[j] < 0 ? -(double)v[j] : v[j];
    printf("] mean|x| %.6f first", n ? sum / (double)n : 0.0);
    for (size_t j = 0; j < n && j < 8; j++) printf(" %.6f", v[j]);
    printf("\n");
  }
  for (uint32_t i = 0; outputs && i < count; i++) vkformer_tensor_release(&outputs[i]);
  free(outputs);
  vkformer_tokens_release(&tokens);
  return bad;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: hello MODEL_DIR TEXT | IMAGE...\n");
    return 2;
  }
  printf("vkformer %s\n", vkformer_version());
  /* Zero options: the default device (VKF_DEVICE, else the best one); validation per VKF_VALIDATE.
   */
  vkformer_device *device = NULL;
  if (failed(vkformer_device_open(NULL, &device), "device")) return 1;
  printf("device: %s\n", vkformer_device_get_name(device));

  vkformer_model *model = NULL;
  int bad = failed(vkformer_model_load(device, argv[1], NULL, &model), "load");
  if (!bad) {
    printf("model: %s (%s)\n", vkformer_model_architecture(model), vkformer_model_family(model));
    bad = list_io(model);
  }
  if (!bad) {
    vkformer_io_info first;
    bad = failed(vkformer_model_input_info(model, 0, &first), "input info");
    if (!bad)
      bad = strcmp(first.name, "pixel_values") == 0 ? classify(model, argv + 2, argc - 2)
                                                    : run_text(model, argv[2]);
  }
  vkformer_model_free(model);
  /* With VKF_VALIDATE=1, any validation-layer message makes this run a failure. */
  if (!bad && vkformer_device_validation_messages(device) > 0) {
    fprintf(stderr, "hello: %u validation messages\n", vkformer_device_validation_messages(device));
    bad = 1;
  }
  vkformer_device_close(device);
  return bad ? 1 : 0;
}
