/* vkf attn: attention maps of a text (BERT family) or image (ViT, DeiT) checkpoint as PNG heatmaps
 * with a colour scale, from the probabilities the model's own graph computes on the device
 * (vkf_model_build_options.attentions: each layer's attention built unfused); --npy writes them.
 * D2L's Bahdanau encoder-decoder gets its decoder's weights over the source per greedy step
 * (attn_seq2seq.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "graph/passes/passes.h"
#include "host/runner.h"
#include "models/arch/vit.h"
#include "models/arch/vit_classify.h"
#include "models/formats/npy.h"
#include "models/formats/task_defaults.h"
#include "models/registry/model.h"
#include "text/text_tokenizer.h"
#include "tools/vkf/attn_figure.h"
#include "tools/vkf/attn_seq2seq.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/cli_args.h"
#include "tools/vkf/device_open.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: vkf attn [--model DIR] [--layer L] [--head H | --mean] [--rollout] --out DIR\n"
          "                [--npy DIR] [--fp16] [--max-new-tokens N] [--device N|NAME] INPUT...\n"
          "  --model DIR  a BERT-family checkpoint (INPUT: texts, tokenized with its tokenizer)\n"
          "               or a ViT/DeiT one (INPUT: image files, through its processor);\n"
          "               or a d2l_seq2seq_attention one (INPUT: source ids, 5,9,3: the decoder's\n"
          "               weights over the source at each greedy step, attn_<i>_steps.png)\n"
          "               default: all-MiniLM-L6-v2 from the pip package, as vkf embed\n"
          "  --layer L    the layer to show, 0-based (default: the last)\n"
          "  --head H     one head (default: text, the mean over heads; images, every head\n"
          "               and their mean in one grid)\n"
          "  --mean       the mean over heads only\n"
          "  --rollout    images: also attention rollout (Abnar & Zuidema 2020) over the image\n"
          "  --out DIR    where the PNGs go: attn_<i>_layer<L>_<head<H>|mean|heads>.png and\n"
          "               attn_<i>_rollout.png for input i (created if missing)\n"
          "  --npy DIR    also write attn_<i>.npy, f32 [layers, heads, T, T] (every layer), and\n"
          "               with --rollout attn_<i>_rollout.npy, f32 [grid, grid]\n"
          "  --fp16       f16 weights and activations (the probabilities are written as f32)\n"
          "  --max-new-tokens N  d2l_seq2seq_attention: decoder steps at most (default 16; a\n"
          "               step choosing an eos id ends it); --npy writes attn_<i>.npy, f32\n"
          "               [steps, S], and attn_<i>_ids.npy, the ids chosen\n");
}

typedef struct attn_args {
  const char *model_dir, *out_dir, *npy_dir, *device;
  int64_t layer; /* -1: the last */
  int64_t head;  /* -1: none chosen */
  int mean, rollout;
  int64_t max_steps; /* d2l_seq2seq_attention */
  vkf_dtype dtype;
  char **inputs;
  int input_count;
} attn_args;

/* One run: the probabilities of every layer, f32 [layers, heads, t, t]. */
typedef struct attn_result {
  float *probs;
  int64_t layers, heads, t;
} attn_result;

static vkf_status make_dir(const char *dir) {
  struct stat sb;
  if (stat(dir, &sb) == 0)
    return S_ISDIR(sb.st_mode)
               ? VKF_OK
               : vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s: not a directory", dir);
  if (mkdir(dir, 0777) != 0) return vkf_status_make(VKF_STATUS_IO, "creating %s", dir);
  return VKF_OK;
}

/* Builds the model for one input of `seq_len` tokens (0: images) with every layer's probabilities
 * as outputs, runs it with the declared inputs `data` (NULL: the input's fill value) and reads the
 * probabilities. */
static vkf_status run_one(vkf_model *m, vkf_device *dev, const attn_args *a, int64_t seq_len,
                          const void *const *data, attn_result *out) {
  int64_t layers = vkf_model_attention_layers(m);
  vkf_value *att = calloc((size_t)layers, sizeof *att);
  if (!att) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "attention outputs");
  static const char *const no_outputs[1] = {NULL};
  vkf_model_build_options o = {.batch = 1,
                               .seq_len = seq_len,
                               .dtype = a->dtype,
                               .outputs = no_outputs,
                               .output_count = 0,
                               .attentions = att};
  vkf_model_graph mg = {0};
  vkf_runner *r = NULL;
  vkf_status st = vkf_model_build(m, &o, &mg);
  if (!st) st = vkf_passes_run(mg.graph, NULL, NULL);
  if (!st) st = vkf_runner_create(dev, mg.graph, NULL, &r);
  void *fill = NULL;
  for (uint32_t i = 0; !st && i < vkf_model_input_count(m); i++) {
    const vkf_model_io *io = vkf_model_input(m, i);
    const vkf_tensor *t = vkf_graph_tensor(mg.graph, mg.inputs[i]);
    size_t count = 1;
    for (uint32_t d = 0; d < t->rank; d++) count *= (size_t)t->shape[d];
    const void *src = data[i];
    if (!src) {
      int32_t *v = malloc(count * sizeof *v);
      if (!v) st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "input %s", io->name);
      for (size_t k = 0; v && k < count; k++) v[k] = io->fill;
      free(fill);
      src = fill = v;
    }
    if (!st) st = vkf_runner_set(r, mg.inputs[i], src, count * 4);
  }
  free(fill);
  if (!st) st = vkf_runner_run(r);
  if (!st) {
    const vkf_tensor *t = vkf_graph_tensor(mg.graph, att[0]);
    out->layers = layers, out->heads = t->shape[1], out->t = t->shape[2];
    size_t per = (size_t)(out->heads * out->t * out->t);
    out->probs = malloc((size_t)layers * per * sizeof *out->probs);
    if (!out->probs) st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "attention probabilities");
    for (int64_t l = 0; !st && l < layers; l++)
      st = vkf_runner_get(r, att[l], out->probs + (size_t)l * per, per * sizeof(float));
  }
  vkf_runner_destroy(r);
  if (mg.graph) vkf_graph_destroy(mg.graph);
  free(att);
  return st;
}

/* The [t, t] map of the chosen head (or the heads' mean) of layer l into `out`. */
static void head_map(const attn_result *r, int64_t l, int64_t head, float *out) {
  size_t tt = (size_t)(r->t * r->t);
  const float *base = r->probs + (size_t)l * (size_t)r->heads * tt;
  if (head >= 0) {
    memcpy(out, base + (size_t)head * tt, tt * sizeof *out);
    return;
  }
  for (size_t i = 0; i < tt; i++) {
    float s = 0;
    for (int64_t h = 0; h < r->heads; h++) s += base[(size_t)h * tt + i];
    out[i] = s / (float)r->heads;
  }
}

static vkf_status check_choice(const attn_args *a, const attn_result *r, int64_t *layer) {
  *layer = a->layer < 0 ? r->layers - 1 : a->layer;
  if (*layer >= r->layers)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "--layer %lld: %s has %lld layers (0..%lld)", (long long)a->layer,
                           a->model_dir, (long long)r->layers, (long long)r->layers - 1);
  if (a->head >= r->heads)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "--head %lld: %s has %lld heads (0..%lld)",
                           (long long)a->head, a->model_dir, (long long)r->heads,
                           (long long)r->heads - 1);
  return VKF_OK;
}

static vkf_status save_npy(const attn_args *a, int i, const attn_result *r) {
  if (!a->npy_dir) return VKF_OK;
  char path[4096];
  snprintf(path, sizeof path, "%s/attn_%d.npy", a->npy_dir, i);
  int64_t shape[4] = {r->layers, r->heads, r->t, r->t};
  return vkf_npy_save(path, VKF_NPY_F32, 4, shape, r->probs);
}

static const char *which(const attn_args *a, char *buf, size_t size) {
  if (a->head >= 0)
    snprintf(buf, size, "head%lld", (long long)a->head);
  else
    snprintf(buf, size, "%s", a->mean ? "mean" : "heads");
  return buf;
}

static vkf_status text_input(vkf_model *m, vkf_device *dev, const vkf_text_tokenizer *tok,
                             const attn_args *a, int i) {
  int32_t *ids = NULL;
  size_t n = 0;
  vkf_status st = vkf_text_tokenizer_encode(tok, a->inputs[i], 1, &ids, &n);
  int64_t max = vkf_model_input(m, 0)->max_seq;
  if (!st && (n < 1 || (int64_t)n > max))
    st = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                         "%zu tokens, the model has positions for 1..%lld", n, (long long)max);
  int64_t vocab = vkf_model_input(m, 0)->value_bound;
  for (size_t k = 0; !st && k < n; k++)
    if (vocab && (ids[k] < 0 || ids[k] >= vocab))
      st = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "token id %d outside the model's %lld",
                           ids[k], (long long)vocab);
  const void *data[VKF_MODEL_MAX_IO] = {ids};
  attn_result r = {0};
  int64_t layer = 0;
  if (!st) st = run_one(m, dev, a, (int64_t)n, data, &r);
  if (!st) st = check_choice(a, &r, &layer);
  if (!st) st = save_npy(a, i, &r);
  const char **labels = st ? NULL : malloc(n * sizeof *labels);
  float *map = st ? NULL : malloc(n * n * sizeof *map);
  if (!st && (!labels || !map)) st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "figure");
  if (!st) {
    for (size_t k = 0; k < n; k++) labels[k] = vkf_text_tokenizer_id_to_token(tok, ids[k]);
    head_map(&r, layer, a->head, map);
    char title[512], path[4096], w[32];
    if (a->head >= 0)
      snprintf(title, sizeof title, "layer %lld, head %lld of %lld", (long long)layer,
               (long long)a->head, (long long)r.heads);
    else
      snprintf(title, sizeof title, "layer %lld, mean of %lld heads", (long long)layer,
               (long long)r.heads);
    /* Text shows one matrix: the chosen head, else the heads' mean. */
    if (a->head < 0)
      snprintf(w, sizeof w, "mean");
    else
      which(a, w, sizeof w);
    snprintf(path, sizeof path, "%s/attn_%d_layer%lld_%s.png", a->out_dir, i, (long long)layer, w);
    st = vkf_attn_text_figure(map, (int64_t)n, labels, title, path);
    if (!st) printf("%s\n", path);
  }
  free(labels);
  free(map);
  free(r.probs);
  free(ids);
  return st ? vkf_status_annotate(st, "text %d: ", i) : VKF_OK;
}

/* The processed image back in 8-bit RGB for display: pixel_values un-normalised. */
static void display_rgb(const vkf_image_preprocess_params *p, const float *chw, int64_t s,
                        uint8_t *rgb) {
  for (int64_t c = 0; c < 3; c++)
    for (int64_t k = 0; k < s * s; k++) {
      double v = chw[c * s * s + k];
      if (p->do_normalize) v = v * p->std[c] + p->mean[c];
      if (p->do_rescale && p->rescale_factor > 0) v /= p->rescale_factor;
      rgb[3 * k + c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v + 0.5);
    }
}

static vkf_status image_figures(const attn_args *a, int i, const attn_result *r, int64_t layer,
                                const uint8_t *rgb, int64_t s, int64_t grid, int64_t special) {
  int64_t np = grid * grid, t = r->t;
  int count = a->head >= 0 || a->mean ? 1 : (int)r->heads + 1;
  float *maps = malloc((size_t)(count + 1) * (size_t)np * sizeof *maps);
  float *full = malloc((size_t)(t * t) * sizeof *full);
  vkf_status st = maps && full ? VKF_OK : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "figure");
  const float *ptr[258];
  char names[258][32];
  const char *titles[258];
  for (int k = 0; !st && k < count; k++) {
    int64_t head = a->head >= 0 ? a->head : a->mean || k == count - 1 ? -1 : k;
    head_map(r, layer, head, full);
    memcpy(maps + (size_t)k * (size_t)np, full + special, (size_t)np * sizeof *maps);
    ptr[k] = maps + (size_t)k * (size_t)np;
    if (head >= 0)
      snprintf(names[k], sizeof names[k], "head %lld", (long long)head);
    else
      snprintf(names[k], sizeof names[k], "mean");
    titles[k] = names[k];
  }
  char title[256], path[4096], w[32];
  if (!st) {
    snprintf(title, sizeof title, "layer %lld: class token -> patches", (long long)layer);
    snprintf(path, sizeof path, "%s/attn_%d_layer%lld_%s.png", a->out_dir, i, (long long)layer,
             which(a, w, sizeof w));
    st = vkf_attn_image_figure(rgb, s, ptr, titles, count, grid, title, path);
    if (!st) printf("%s\n", path);
  }
  if (!st && a->rollout) {
    float *roll = maps + (size_t)count * (size_t)np;
    st = vkf_attn_rollout(r->probs, r->layers, r->heads, t, special, roll);
    const float *rp[1] = {roll};
    const char *rt[1] = {"rollout"};
    if (!st && a->npy_dir) {
      snprintf(path, sizeof path, "%s/attn_%d_rollout.npy", a->npy_dir, i);
      int64_t shape[2] = {grid, grid};
      st = vkf_npy_save(path, VKF_NPY_F32, 2, shape, roll);
    }
    if (!st) {
      snprintf(path, sizeof path, "%s/attn_%d_rollout.png", a->out_dir, i);
      snprintf(title, sizeof title, "attention rollout, %lld layers", (long long)r->layers);
      st = vkf_attn_image_figure(rgb, s, rp, rt, 1, grid, title, path);
      if (!st) printf("%s\n", path);
    }
  }
  free(maps);
  free(full);
  return st;
}

static vkf_status image_input(vkf_model *m, vkf_device *dev, const attn_args *a, int i) {
  vkf_model_attention_maps maps;
  VKF_RETURN_IF_ERROR(vkf_model_attention_maps_facet(m, &maps));
  const vkf_vit_model *vit = maps.image;
  int64_t s = vkf_vit_image_size(vit);
  const vkf_hf_config *c = vkf_vit_config(vit);
  int64_t grid = c->patch_size > 0 ? s / c->patch_size : 0;
  int64_t special = vkf_vit_token_count(vit) - grid * grid;
  float *pixels = malloc((size_t)(3 * s * s) * sizeof *pixels);
  uint8_t *rgb = malloc((size_t)(3 * s * s));
  vkf_status st = pixels && rgb ? VKF_OK : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "image");
  const char *path = a->inputs[i];
  if (!st) st = vkf_vit_load_images(vit, &path, 1, pixels);
  attn_result r = {0};
  int64_t layer = 0;
  const void *data[VKF_MODEL_MAX_IO] = {pixels};
  if (!st) st = run_one(m, dev, a, 0, data, &r);
  if (!st) st = check_choice(a, &r, &layer);
  if (!st) st = save_npy(a, i, &r);
  if (!st) display_rgb(vkf_vit_preprocess_params(vit), pixels, s, rgb);
  if (!st) st = image_figures(a, i, &r, layer, rgb, s, grid, special);
  free(r.probs);
  free(pixels);
  free(rgb);
  return st ? vkf_status_annotate(st, "image %s: ", path) : VKF_OK;
}

/* The Bahdanau encoder-decoder: no layers or heads to choose, f32 only. */
static vkf_status run_seq2seq(vkf_model *m, const attn_args *a) {
  vkf_status st = VKF_OK;
  if (a->layer >= 0 || a->head >= 0 || a->mean || a->rollout || a->dtype != VKF_F32)
    st = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                         "%s: a d2l_seq2seq_attention decoder has one additive attention and "
                         "runs in f32; --layer, --head, --mean, --rollout and --fp16 do not apply",
                         a->model_dir);
  if (!st) st = make_dir(a->out_dir);
  if (!st && a->npy_dir) st = make_dir(a->npy_dir);
  vkf_cli_device dev = {0};
  if (!st) st = vkf_cli_device_open(a->device, &dev);
  for (int i = 0; !st && i < a->input_count; i++) {
    vkf_attn_seq2seq_options o = {.ids = a->inputs[i],
                                  .index = i,
                                  .max_steps = a->max_steps,
                                  .out_dir = a->out_dir,
                                  .npy_dir = a->npy_dir};
    st = vkf_attn_seq2seq(m, dev.device, &o);
  }
  int validation = dev.device ? vkf_cli_device_close(&dev) : 0;
  if (!st && validation)
    st = vkf_status_make(VKF_STATUS_INTERNAL, "the validation layer reported messages");
  return st;
}

static vkf_status run(const attn_args *a) {
  vkf_model *m = NULL;
  VKF_RETURN_IF_ERROR(vkf_model_open(a->model_dir, &m));
  vkf_model_attention_maps maps;
  vkf_status st = vkf_model_attention_maps_facet(m, &maps);
  if (!st && maps.additive) {
    st = run_seq2seq(m, a);
    vkf_model_close(m);
    return st;
  }
  int image = maps.image != NULL;
  int64_t layers = maps.layers;
  if (!st && a->layer >= layers)
    st = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "--layer %lld: %s has %lld layers (0..%lld)",
                         (long long)a->layer, a->model_dir, (long long)layers,
                         (long long)layers - 1);
  if (!st && a->rollout && !image)
    st = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                         "--rollout: %s is a text model; rollout is drawn over an image's patches",
                         a->model_dir);
  vkf_text_tokenizer *tok = NULL;
  if (!st && !image) st = vkf_text_tokenizer_load(a->model_dir, &tok);
  if (!st) st = make_dir(a->out_dir);
  if (!st && a->npy_dir) st = make_dir(a->npy_dir);
  vkf_cli_device dev = {0};
  if (!st) st = vkf_cli_device_open(a->device, &dev);
  for (int i = 0; !st && i < a->input_count; i++)
    st = image ? image_input(m, dev.device, a, i) : text_input(m, dev.device, tok, a, i);
  int validation = dev.device ? vkf_cli_device_close(&dev) : 0;
  vkf_text_tokenizer_destroy(tok);
  vkf_model_close(m);
  if (!st && validation)
    st = vkf_status_make(VKF_STATUS_INTERNAL, "the validation layer reported messages");
  return st;
}

/* A non-negative integer option value, or -1 (the caller reports it). */
static int64_t parse_index(const char *s) {
  char *end = NULL;
  long long v = strtoll(s, &end, 10);
  return end && end != s && !*end && v >= 0 && v < (1LL << 30) ? (int64_t)v : -1;
}

int vkf_cli_attn(int argc, char **argv) {
  attn_args a = {.layer = -1, .head = -1, .max_steps = 16, .dtype = VKF_F32};
  a.inputs = calloc((size_t)argc + 1, sizeof *a.inputs);
  if (!a.inputs) return vkf_cli_fail(vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "arguments"));
  int rc = -1;
  for (int i = 0; i < argc && rc < 0; i++) {
    const char *s = argv[i];
    int has_value = i + 1 < argc;
    if (vkf_cli_is_help(s)) {
      usage(stdout);
      rc = 0;
    } else if (!strcmp(s, "--model") && has_value) {
      a.model_dir = argv[++i];
    } else if (!strcmp(s, "--out") && has_value) {
      a.out_dir = argv[++i];
    } else if (!strcmp(s, "--npy") && has_value) {
      a.npy_dir = argv[++i];
    } else if (!strcmp(s, "--device") && has_value) {
      a.device = argv[++i];
    } else if ((!strcmp(s, "--layer") || !strcmp(s, "--head")) && has_value) {
      int64_t v = parse_index(argv[++i]);
      if (v < 0) {
        fprintf(stderr, "vkf attn: %s takes a non-negative integer, got \"%s\"\n", s, argv[i]);
        rc = 2;
      }
      *(!strcmp(s, "--layer") ? &a.layer : &a.head) = v;
    } else if (!strcmp(s, "--max-new-tokens") && has_value) {
      if (!vkf_cli_parse_i64(argv[++i], 1, 4096, &a.max_steps))
        rc = vkf_cli_bad_arg("vkf attn", usage, argc, argv, i - 1);
    } else if (!strcmp(s, "--mean")) {
      a.mean = 1;
    } else if (!strcmp(s, "--rollout")) {
      a.rollout = 1;
    } else if (!strcmp(s, "--fp16")) {
      a.dtype = VKF_F16;
    } else if (!strcmp(s, "--")) {
      while (++i < argc) a.inputs[a.input_count++] = argv[i];
    } else if (!strncmp(s, "--", 2)) {
      rc = vkf_cli_bad_arg("vkf attn", usage, argc, argv, i);
    } else {
      a.inputs[a.input_count++] = argv[i];
    }
  }
  if (rc < 0 && (!a.out_dir || !a.input_count || (a.mean && a.head >= 0)))
    rc = vkf_cli_usage_error("vkf attn", "%s",
                             !a.out_dir       ? "--out DIR is required"
                             : !a.input_count ? "give at least one INPUT (a text or an image file)"
                                              : "--head and --mean exclude each other");
  char *found = NULL; /* the default model's folder (embed's: texts are the common input) */
  if (rc < 0) {
    vkf_status st = a.model_dir ? VKF_OK : vkf_task_default_model("embed", &found);
    if (!st && !a.model_dir) a.model_dir = found;
    if (!st) st = run(&a);
    rc = st ? vkf_cli_fail(st) : 0;
  }
  free(found);
  free(a.inputs);
  return rc;
}
