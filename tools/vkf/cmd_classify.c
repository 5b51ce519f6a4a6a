/* vkf classify: top-K labels for images with a Hugging Face ViT/DeiT checkpoint, on the device
 * (all images in one batch); VKF_CHECK=1 compares every node with the interpreter. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/env.h"
#include "host/check.h"
#include "host/runner.h"
#include "models/vit.h"
#include "models/vit_classify.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/device_open.h"

/* The committed tiny checkpoint: no pretrained ViT weights can be installed by the set-up, so the
 * default model has seeded random weights and its labels say nothing about the image. */
#ifndef VKF_SOURCE_DIR
#define VKF_SOURCE_DIR "."
#endif
#define DEFAULT_MODEL_REL "tests/models/data/vit_tiny"

static void usage(FILE *f) {
  fprintf(f,
          "usage: vkf classify [--model DIR] [--top K] [--json] [--fp16] [--device N|NAME] "
          "IMAGE...\n"
          "  --model DIR  Hugging Face ViT/DeiT folder (config.json, model.safetensors,\n"
          "               preprocessor_config.json); default: the built-in tiny random-weight\n"
          "               ViT (%s), whose labels are not meaningful\n"
          "  --top K      labels per image (default 5)\n"
          "  --json       one JSON document on stdout\n"
          "  --fp16       f16 weights and activations\n"
          "VKF_CHECK=1 compares every node with the CPU interpreter.\n",
          DEFAULT_MODEL_REL);
}

static void json_string(const char *s) {
  putchar('"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      printf("\\%c", c);
    else if (c < 0x20)
      printf("\\u%04x", c);
    else
      putchar(c);
  }
  putchar('"');
}

static const char *default_model(void) {
  static char path[4096];
  FILE *f = fopen(DEFAULT_MODEL_REL "/config.json", "r");
  if (f) {
    fclose(f);
    return DEFAULT_MODEL_REL;
  }
  snprintf(path, sizeof path, "%s/%s", VKF_SOURCE_DIR, DEFAULT_MODEL_REL);
  return path;
}

static void print_results(const vkf_vit_model *m, char **images, int64_t count, const float *logits,
                          int64_t k, int json) {
  int64_t labels = vkf_vit_label_count(m);
  int64_t *ids = malloc((size_t)k * sizeof *ids);
  float *probs = malloc((size_t)k * sizeof *probs);
  if (json) printf("[");
  for (int64_t i = 0; i < count; i++) {
    vkf_vit_top_k(logits + i * labels, labels, k, ids, probs);
    if (json) {
      printf("%s\n  {\"image\": ", i ? "," : "");
      json_string(images[i]);
      printf(", \"top\": [");
      for (int64_t j = 0; j < k; j++) {
        printf("%s{\"id\": %lld, \"label\": ", j ? ", " : "", (long long)ids[j]);
        json_string(vkf_vit_label(m, ids[j]));
        printf(", \"probability\": %.6f}", probs[j]);
      }
      printf("]}");
    } else {
      printf("%s\n", images[i]);
      for (int64_t j = 0; j < k; j++)
        printf("  %6.2f%%  %s\n", 100.0 * probs[j], vkf_vit_label(m, ids[j]));
    }
  }
  if (json) printf("\n]\n");
  free(ids);
  free(probs);
}

int vkf_cli_classify(int argc, char **argv) {
  const char *model_dir = NULL, *device = NULL;
  int64_t k = 5;
  int json = 0;
  vkf_dtype dtype = VKF_F32;
  char **images = calloc((size_t)argc + 1, sizeof *images);
  int64_t count = 0;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    int has_value = i + 1 < argc;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      free(images);
      return 0;
    } else if (!strcmp(a, "--model") && has_value) {
      model_dir = argv[++i];
    } else if (!strcmp(a, "--device") && has_value) {
      device = argv[++i];
    } else if (!strcmp(a, "--top") && has_value) {
      char *end = NULL;
      k = strtoll(argv[++i], &end, 10);
      if (*end || k < 1) {
        fprintf(stderr, "vkf classify: --top needs a positive integer, got \"%s\"\n", argv[i]);
        free(images);
        return 2;
      }
    } else if (!strcmp(a, "--json")) {
      json = 1;
    } else if (!strcmp(a, "--fp16")) {
      dtype = VKF_F16;
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "vkf classify: unknown or incomplete option \"%s\" (try --help)\n", a);
      free(images);
      return 2;
    } else {
      images[count++] = argv[i];
    }
  }
  if (count == 0) {
    usage(stderr);
    free(images);
    return 2;
  }
  if (!model_dir) {
    model_dir = default_model();
    fprintf(stderr, "vkf classify: using the built-in tiny ViT with random weights (%s): its labels "
                    "are not meaningful; pass --model DIR for a real checkpoint\n", model_dir);
  }

  vkf_vit_model *m = NULL;
  vkf_vit_graph vg = {0};
  vkf_cli_device dev = {0};
  vkf_runner *r = NULL;
  float *pixels = NULL, *logits = NULL;
  const int check = vkf_env_get()->check;
  vkf_status st = vkf_vit_load(model_dir, &m);
  if (!st && vkf_vit_head_of(m) == VKF_VIT_HEAD_NONE)
    st = vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: %s has no classification head", model_dir,
                         vkf_vit_architecture(m));
  if (!st) {
    int64_t s = vkf_vit_image_size(m);
    pixels = malloc((size_t)(count * 3 * s * s) * sizeof *pixels);
    logits = malloc((size_t)(count * vkf_vit_label_count(m)) * sizeof *logits);
    st = pixels && logits ? VKF_OK : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%lld images",
                                                     (long long)count);
  }
  /* Images first: a bad file fails before any device work. */
  if (!st) st = vkf_vit_load_images(m, (const char *const *)images, (size_t)count, pixels);
  vkf_vit_build_options bo = {.batch = count, .dtype = dtype};
  if (!st) st = vkf_vit_build(m, &bo, &vg);
  if (!st && check) st = vkf_check_pin_all(vg.graph);
  if (!st) st = vkf_cli_device_open(device, &dev);
  if (!st) st = vkf_runner_create(dev.device, vg.graph, NULL, &r);
  const vkf_tensor *in = st ? NULL : vkf_graph_tensor(vg.graph, vg.pixel_values);
  if (!st) st = vkf_runner_set(r, vg.pixel_values, pixels, vkf_tensor_size(in));
  if (!st) st = vkf_runner_run(r);
  if (!st)
    st = vkf_runner_get(r, vg.logits, logits,
                        (size_t)(count * vkf_vit_label_count(m)) * sizeof *logits);
  if (!st && check) {
    vkf_check_report rep;
    st = vkf_check_run(r, vg.graph, NULL, &rep);
    if (!st)
      fprintf(stderr, "vkf classify: VKF_CHECK: %u nodes agree with the interpreter (closest to "
                      "the bound: \"%s\", max error %.3g, %.0f%% of tolerance)\n",
              rep.nodes_checked, rep.worst_node ? rep.worst_node : "-", rep.worst_error,
              100.0 * rep.worst_ratio);
  }
  if (!st) print_results(m, images, count, logits, k, json);
  vkf_runner_destroy(r);
  int validation = vkf_cli_device_close(&dev);
  vkf_graph_destroy(vg.graph);
  vkf_vit_destroy(m);
  free(pixels);
  free(logits);
  free(images);
  if (st) return vkf_cli_fail(st);
  return validation;
}
