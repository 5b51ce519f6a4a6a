/* vkf classify: top-K labels for images with a Hugging Face ViT/DeiT checkpoint, on the device
 * (all images in one batch, split into runs that fit the device: runtime/model_batch.h);
 * VKF_CHECK=1 compares every node with the interpreter. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/arch/arch_weights.h"
#include "models/arch/vit.h"
#include "models/arch/vit_classify.h"
#include "models/formats/task_defaults.h"
#include "models/formats/npy.h"
#include "runtime/model_batch.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/cli_args.h"
#include "tools/vkf/cli_inputs.h"
#include "tools/vkf/device_open.h"
#include "tools/vkf/json_out.h"
#include "tools/vkf/quantize_note.h"

/* The committed default model (models/formats/task_defaults.h): no pretrained ViT weights can be
 * installed by the set-up, so the default is a small ViT trained on Fashion-MNIST
 * (tools/goldens/train_default_vit.py): 10 kinds of clothing in 28x28 greyscale images; other
 * images get one of those 10 labels all the same. */
#define DEFAULT_MODEL_REL "vit_fashion_mnist"

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: vkf classify [--model DIR] [--top K] [--json] [--fp16] [--quantize FORMAT]\n"
      "                    [--device N|NAME]\n"
      "                    (IMAGE... | --file F | --pixel-values NPY)\n"
      "  IMAGE        PNG or JPEG file; '-' reads image paths from stdin, one per line\n"
      "  --file F     image paths, one per line ('-': stdin)\n"
      "  --model DIR  Hugging Face ViT/DeiT folder (config.json, model.safetensors,\n"
      "               preprocessor_config.json); default: the built-in ViT trained on\n"
      "               Fashion-MNIST (%s): 10 kinds of clothing, 28x28 greyscale\n"
      "  --top K      labels per image (default 5; at most the checkpoint's label count)\n"
      "  --json       one JSON document on stdout\n"
      "  --fp16       f16 weights and activations\n"
      "  --quantize F the linear weights quantised at load into ggml's blocks as llama-quantize\n"
      "               does: q8_0, q4_0, q4_1, q5_0, q5_1 or q4_k (docs/models.md)\n"
      "  --device N|NAME  Vulkan device by index or name (default: VKF_DEVICE, else the best)\n"
      "  --pixel-values NPY  run on f32 [B,3,S,S] pixel values instead of IMAGE files\n"
      "  --save-logits NPY   write the logits, f32 [B, labels]\n"
      "  --compare-logits NPY  check against reference logits (e.g. from\n"
      "               tools/goldens/make_vit_golden.py --full): report max |logit diff| and\n"
      "               top-1/top-5 agreement; exit 1 when the max |diff| exceeds the tolerance\n"
      "               or a top-1 label differs\n"
      "  --tolerance X  max |logit diff| allowed by --compare-logits (default 1e-3)\n"
      "VKF_CHECK=1 compares every node with the CPU interpreter.\n",
      DEFAULT_MODEL_REL);
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
      vkf_cli_json_string(images[i]);
      printf(", \"top\": [");
      for (int64_t j = 0; j < k; j++) {
        printf("%s{\"id\": %lld, \"label\": ", j ? ", " : "", (long long)ids[j]);
        vkf_cli_json_string(vkf_vit_label(m, ids[j]));
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

/* Parity check against reference logits: max |diff|, top-1 and top-5 set agreement, reported on
 * stderr; MISMATCH when the max |diff| exceeds `tolerance` or any image's top-1 disagrees. */
static vkf_status compare_logits(const char *path, const float *logits, int64_t count,
                                 int64_t labels, double tolerance) {
  vkf_npy_array ref = {0};
  VKF_RETURN_IF_ERROR(vkf_npy_load(path, &ref));
  vkf_status st = VKF_OK;
  if (ref.dtype != VKF_NPY_F32 || ref.rank != 2 || ref.shape[0] != count || ref.shape[1] != labels)
    st = vkf_status_make(VKF_STATUS_SHAPE, "%s: expected f32 [%lld, %lld] logits", path,
                         (long long)count, (long long)labels);
  const float *want = ref.data;
  double max_err = 0;
  int64_t top1 = 0, top5 = 0, k = labels < 5 ? labels : 5;
  int64_t a[5], b[5];
  float pa[5], pb[5];
  for (int64_t i = 0; i < count && !st; i++) {
    for (int64_t j = 0; j < labels; j++) {
      double e = fabs((double)logits[i * labels + j] - want[i * labels + j]);
      if (!(e <= max_err)) max_err = e;
    }
    vkf_vit_top_k(logits + i * labels, labels, k, a, pa);
    vkf_vit_top_k(want + i * labels, labels, k, b, pb);
    top1 += a[0] == b[0];
    int same = 1;
    for (int64_t x = 0; x < k; x++) {
      int found = 0;
      for (int64_t y = 0; y < k; y++) found |= a[x] == b[y];
      same &= found;
    }
    top5 += same;
  }
  /* !(max_err <= tolerance) also catches a NaN difference */
  if (!st && (!(max_err <= tolerance) || top1 != count))
    st = vkf_status_make(VKF_STATUS_MISMATCH,
                         "logits differ from %s: max |logit diff| %.3g (tolerance %.3g); "
                         "top-1 agrees %lld/%lld",
                         path, max_err, tolerance, (long long)top1, (long long)count);
  else if (!st)
    fprintf(stderr,
            "vkf classify: vs %s: max |logit diff| %.3g (tolerance %.3g); top-1 agrees %lld/%lld; "
            "top-%lld set agrees %lld/%lld\n",
            path, max_err, tolerance, (long long)top1, (long long)count, (long long)k,
            (long long)top5, (long long)count);
  vkf_npy_array_release(&ref);
  return st;
}

/* Pixel values from a .npy instead of image files (parity checks feed the HF processor's). */
static vkf_status load_pixel_npy(const char *path, int64_t s, float **out, int64_t *out_count) {
  vkf_npy_array a = {0};
  VKF_RETURN_IF_ERROR(vkf_npy_load(path, &a));
  if (a.dtype != VKF_NPY_F32 || a.rank != 4 || a.shape[1] != 3 || a.shape[2] != s ||
      a.shape[3] != s) {
    vkf_npy_array_release(&a);
    return vkf_status_make(VKF_STATUS_SHAPE, "%s: expected f32 [B, 3, %lld, %lld] pixel values",
                           path, (long long)s, (long long)s);
  }
  *out = a.data; /* ownership moves to the caller (malloc'd) */
  *out_count = a.shape[0];
  return VKF_OK;
}

typedef struct vit_build {
  vkf_vit_model *model;
  vkf_dtype dtype;
} vit_build;

/* Slots: input 0 pixel_values [rows, 3, S, S], output 0 logits [rows, labels]. */
static vkf_status build_rows(void *user, int64_t rows, vkf_batch_graph *out) {
  const vit_build *b = user;
  vkf_vit_build_options bo = {.batch = rows, .dtype = b->dtype};
  vkf_vit_graph vg;
  *out = (vkf_batch_graph){0};
  VKF_RETURN_IF_ERROR(vkf_vit_build(b->model, &bo, &vg));
  *out = (vkf_batch_graph){.graph = vg.graph,
                           .input_count = 1,
                           .output_count = 1,
                           .inputs = {vg.pixel_values},
                           .outputs = {vg.logits}};
  return VKF_OK;
}

/* The graph built once and dropped while the device opens: what makes building it take time
 * (the fused QKV weights) stays in the model's weight cache for the builds of the run. */
typedef struct prebuild {
  vit_build *build;
  int64_t rows;
} prebuild;

static vkf_status prebuild_graph(void *user) {
  const prebuild *p = user;
  vkf_batch_graph bg;
  VKF_RETURN_IF_ERROR(build_rows(p->build, p->rows, &bg));
  vkf_graph_destroy(bg.graph);
  return VKF_OK;
}

int vkf_cli_classify(int argc, char **argv) {
  const char *model_dir = NULL, *device = NULL, *pixel_npy = NULL, *save = NULL, *compare = NULL;
  const char *quantize = NULL;
  int64_t k = 5;
  double tolerance = 1e-3;
  int json = 0;
  vkf_dtype dtype = VKF_F32;
  vkf_cli_inputs given = {0};
  vkf_status st = VKF_OK;
  for (int i = 0; i < argc && !st; i++) {
    const char *a = argv[i];
    int has_value = i + 1 < argc;
    if (vkf_cli_is_help(a)) {
      usage(stdout);
      vkf_cli_inputs_free(&given);
      return 0;
    } else if (!strcmp(a, "--model") && has_value) {
      model_dir = argv[++i];
    } else if (!strcmp(a, "--file") && has_value) {
      st = vkf_cli_inputs_add_file(&given, argv[++i]);
    } else if (!strcmp(a, "--pixel-values") && has_value) {
      pixel_npy = argv[++i];
    } else if (!strcmp(a, "--save-logits") && has_value) {
      save = argv[++i];
    } else if (!strcmp(a, "--compare-logits") && has_value) {
      compare = argv[++i];
    } else if (!strcmp(a, "--device") && has_value) {
      device = argv[++i];
    } else if (!strcmp(a, "--quantize") && has_value && vkf_cli_quantize_ok(argv[i + 1])) {
      quantize = argv[++i];
    } else if (!strcmp(a, "--top") && has_value) {
      char *end = NULL;
      k = strtoll(argv[++i], &end, 10);
      if (*end || k < 1) {
        fprintf(stderr, "vkf classify: --top needs a positive integer, got \"%s\"\n", argv[i]);
        vkf_cli_inputs_free(&given);
        return 2;
      }
    } else if (!strcmp(a, "--tolerance") && has_value) {
      char *end = NULL;
      tolerance = strtod(argv[++i], &end);
      if (end == argv[i] || *end || !(tolerance >= 0) || isinf(tolerance)) {
        fprintf(stderr, "vkf classify: --tolerance needs a finite number >= 0, got \"%s\"\n",
                argv[i]);
        vkf_cli_inputs_free(&given);
        return 2;
      }
    } else if (!strcmp(a, "--json")) {
      json = 1;
    } else if (!strcmp(a, "--fp16")) {
      dtype = VKF_F16;
    } else if (a[0] == '-' && a[1]) {
      vkf_cli_inputs_free(&given);
      return vkf_cli_bad_arg("vkf classify", usage, argc, argv, i);
    } else {
      st = vkf_cli_inputs_add(&given, a);
    }
  }
  if (st) {
    vkf_cli_inputs_free(&given);
    return vkf_cli_fail(st);
  }
  char **images = given.items; /* ownership moves here (freed at the end) */
  int64_t count = (int64_t)given.count;
  if ((count == 0) == !pixel_npy) {
    for (int64_t i = 0; i < count; i++) free(images[i]);
    free(images);
    return vkf_cli_usage_error("vkf classify",
                               pixel_npy ? "give IMAGE files or --pixel-values, not both"
                                         : "give IMAGE files, --file F or --pixel-values");
  }
  const int builtin = !model_dir;
  char *found = NULL;

  vkf_vit_model *m = NULL;
  vkf_cli_device dev = {0};
  float *pixels = NULL, *logits = NULL;
  st = builtin ? vkf_task_default_model("classify", &found) : VKF_OK;
  if (found) model_dir = found;
  if (!st) st = vkf_vit_load(model_dir, &m);
  if (!st && quantize) st = vkf_vit_quantize(m, quantize);
  if (!st && vkf_vit_head_of(m) == VKF_VIT_HEAD_NONE)
    st = vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: %s has no classification head", model_dir,
                         vkf_vit_architecture(m));
  char(*names)[48] = NULL;
  if (!st && pixel_npy) {
    st = load_pixel_npy(pixel_npy, vkf_vit_image_size(m), &pixels, &count);
    names = st ? NULL : calloc((size_t)count, sizeof *names);
    free(images); /* empty: IMAGE files and --pixel-values exclude each other */
    images = st ? NULL : calloc((size_t)count, sizeof *images);
    for (int64_t i = 0; !st && i < count; i++) {
      snprintf(names[i], sizeof names[i], "pixel_values[%lld]", (long long)i);
      images[i] = names[i];
    }
  }
  /* The one place --top is capped: every caller below fills and prints exactly k rows. */
  if (!st && k > vkf_vit_label_count(m)) k = vkf_vit_label_count(m);
  size_t pixels_size = 0, logits_size = 0;
  if (!st) {
    int64_t s = vkf_vit_image_size(m);
    pixels_size = (size_t)(count * 3 * s * s) * sizeof *pixels;
    logits_size = (size_t)(count * vkf_vit_label_count(m)) * sizeof *logits;
    if (!pixels) pixels = malloc(pixels_size);
    logits = malloc(logits_size);
    st = pixels && logits
             ? VKF_OK
             : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%lld images", (long long)count);
  }
  /* Images first: a bad file fails before any device work. */
  if (!st && !pixel_npy)
    st = vkf_vit_load_images(m, (const char *const *)images, (size_t)count, pixels);
  vit_build vb = {.model = m, .dtype = dtype};
  vkf_batch_input in = {pixels, pixels_size};
  vkf_batch_output out = {logits, logits_size};
  prebuild pb = {&vb, count};
  if (!st) st = vkf_cli_device_open_beside(device, &dev, prebuild_graph, &pb);
  if (!st) st = vkf_rt_batch_run("vkf classify", dev.device, count, build_rows, &vb, &in, &out);
  int64_t shape[2] = {count, m ? vkf_vit_label_count(m) : 0};
  if (!st && save) st = vkf_npy_save(save, VKF_NPY_F32, 2, shape, logits);
  if (!st && compare) st = compare_logits(compare, logits, count, shape[1], tolerance);
  if (!st) st = vkf_cli_check_finite(logits, count, shape[1], "the logits of image", "label");
  if (!st) print_results(m, images, count, logits, k, json);
  fflush(stdout);
  if (!st && quantize) {
    uint32_t made[VKF_DTYPE_COUNT], kept;
    vkf_arch_files_quantized(vkf_vit_files(m), made, &kept);
    vkf_cli_quantize_note_counts("vkf classify", quantize, made, kept);
  }
  if (!st && builtin)
    fprintf(stderr,
            "vkf classify: used the built-in Fashion-MNIST ViT (%s): it knows 10 kinds of "
            "clothing in 28x28 greyscale images; pass --model DIR for another checkpoint\n",
            model_dir);
  int validation = vkf_cli_device_close(&dev);
  vkf_vit_destroy(m);
  free(pixels);
  free(logits);
  for (int64_t i = 0; images && !pixel_npy && i < count; i++) free(images[i]);
  free(images);
  free(names);
  free(found);
  if (st) return vkf_cli_fail(st);
  return validation;
}
