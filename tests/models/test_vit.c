/* ViT / DeiT end to end against the goldens of tools/goldens/make_vit_golden.py (Hugging Face, fp32 eval):
 * the builder through the interpreter, the device path in fp32 and fp16 under the default and the
 * mobile caps profile, our image pipeline against the HF processor, and every bad input. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph/base/env.h"
#include "graph/base/half.h"
#include "graph/interp/interp.h"
#include "graph/passes/passes.h"
#include "host/check.h"
#include "host/runner.h"
#include "models/arch/vit.h"
#include "models/arch/vit_classify.h"
#include "models/formats/npy.h"
#include "models/formats/safetensors.h"
#include "tests/gpu_util.h"

/* Tolerances, all absolute on logits (which span about [-2.5, 2]) unless said otherwise. */
static const struct {
  double interp_f32;  /* our interpreter vs PyTorch fp32: same maths, different summation order */
  double device_f32;  /* the bound for the fp32 device path */
  double device_f16;  /* f16 weights + activations (fp32 accumulation / softmax state): 11-bit
                         mantissas through 2 layers; measured max 2.6e-3 on lavapipe */
  double pixels;      /* our decode + preprocess vs PIL + HF processor, per pixel_values element:
                         JPEG decoded by libjpeg-turbo as Pillow does, so equal (measured 0) */
  double pixels_mean; /* ... and on average */
  double own_pixels;  /* logits from our pixel_values vs the golden's (top-1 must agree too) */
  double f16_file;    /* checkpoint stored as F16 (weights rounded once), fp32 run: 2^-11 relative
                         weight error, measured 1.1e-3 */
  double bf16_file;   /* ... stored as BF16: 2^-8 relative, measured 1.7e-2 */
} TOL = {1e-4, 1e-3, 1e-2, 1e-6, 1e-7, 0.05, 5e-3, 5e-2};

#define GOLDEN "tests/models/golden/vit/"
#define MAX_IMAGES 8

typedef struct golden {
  const char *name;
  const char *dir;
  vkf_npy_array pixels; /* [B, 3, S, S] */
  vkf_npy_array logits; /* [B, L] */
} golden;

/* `pixels_of`: the model whose pixel_values golden this one shares (same processor). */
static void golden_load(golden *g, const char *name, const char *dir, const char *pixels_of) {
  char path[256];
  g->name = name;
  g->dir = dir;
  snprintf(path, sizeof path, GOLDEN "%s_pixel_values.npy", pixels_of);
  CHECK_OK(vkf_npy_load(path, &g->pixels));
  snprintf(path, sizeof path, GOLDEN "%s_logits.npy", name);
  CHECK_OK(vkf_npy_load(path, &g->logits));
}

static int64_t argmax(const float *x, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; i++)
    if (x[i] > x[best]) best = i;
  return best;
}

/* Max |got - golden| over the batch, and whether top-1 agrees for every image. */
static void compare_logits(const golden *g, const float *got, double tol, const char *what) {
  const float *want = g->logits.data;
  int64_t b = g->logits.shape[0], l = g->logits.shape[1];
  double max_err = 0;
  for (int64_t i = 0; i < b * l; i++) {
    double e = fabs((double)got[i] - want[i]);
    if (!(e <= max_err)) max_err = e;
  }
  CHECK_MSG(max_err <= tol, "%s %s: max |logit diff| %.3g > %g", g->name, what, max_err, tol);
  for (int64_t i = 0; i < b; i++)
    CHECK_MSG(argmax(got + i * l, l) == argmax(want + i * l, l),
              "%s %s: image %lld top-1 %lld, "
              "golden %lld",
              g->name, what, (long long)i, (long long)argmax(got + i * l, l),
              (long long)argmax(want + i * l, l));
  fprintf(stderr, "%s %s: max |logit diff| %.3g (tolerance %g)\n", g->name, what, max_err, tol);
}

static void build(vkf_vit_model *m, int64_t batch, vkf_dtype dt, vkf_vit_graph *out) {
  vkf_vit_build_options o = {.batch = batch, .dtype = dt};
  CHECK_OK(vkf_vit_build(m, &o, out));
}

/* (1) The builder through the interpreter: proves the graph is HF's forward pass. */
static void test_interp(vkf_vit_model *m, const golden *g) {
  vkf_vit_graph vg;
  build(m, g->pixels.shape[0], VKF_F32, &vg);
  if (!vg.graph) return;
  float got[MAX_IMAGES * 16];
  vkf_input_binding in = {vg.pixel_values, g->pixels.data, g->pixels.data_size};
  vkf_output_binding out = {vg.logits, got, g->logits.data_size};
  CHECK_OK(vkf_interp_evaluate(vg.graph, &in, 1, &out, 1));
  compare_logits(g, got, TOL.interp_f32, "interpreter fp32");
  vkf_graph_destroy(vg.graph);
}

/* Our decoder + processor on the sample images vs the HF processor's pixel_values. */
static void test_pixels(vkf_vit_model *m, const golden *g) {
  char lines[MAX_IMAGES][256];
  const char *paths[MAX_IMAGES];
  size_t count = 0;
  FILE *f = fopen(GOLDEN "images.txt", "r");
  CHECK(f != NULL);
  while (f && count < MAX_IMAGES && fgets(lines[count], sizeof lines[count], f)) {
    lines[count][strcspn(lines[count], "\n")] = '\0';
    paths[count] = lines[count];
    count++;
  }
  if (f) fclose(f);
  CHECK((int64_t)count == g->pixels.shape[0]);
  float *px = malloc(g->pixels.data_size);
  CHECK_OK(vkf_vit_load_images(m, paths, count, px));
  const float *want = g->pixels.data;
  double max_err = 0, sum = 0;
  for (size_t i = 0; i < g->pixels.element_count; i++) {
    double e = fabs((double)px[i] - want[i]);
    sum += e;
    if (e > max_err) max_err = e;
  }
  double mean = sum / (double)g->pixels.element_count;
  CHECK_MSG(max_err <= TOL.pixels, "%s: max pixel diff %.3g", g->name, max_err);
  CHECK_MSG(mean <= TOL.pixels_mean, "%s: mean pixel diff %.3g", g->name, mean);
  fprintf(stderr, "%s pixels: max diff %.3g, mean %.3g\n", g->name, max_err, mean);
  /* The whole classify input path: our pixels through the model give the golden's answer. */
  vkf_vit_graph vg;
  build(m, g->pixels.shape[0], VKF_F32, &vg);
  if (vg.graph) {
    float got[MAX_IMAGES * 16];
    vkf_input_binding in = {vg.pixel_values, px, g->pixels.data_size};
    vkf_output_binding out = {vg.logits, got, g->logits.data_size};
    CHECK_OK(vkf_interp_evaluate(vg.graph, &in, 1, &out, 1));
    compare_logits(g, got, TOL.own_pixels, "interpreter fp32 on our pixel_values");
    vkf_graph_destroy(vg.graph);
  }
  free(px);
}

/* (2) The device path: memory plan -> lowering -> session, f32 and f16. */
static void test_device(gpu_test *t, vkf_vit_model *m, const golden *g, vkf_dtype dt,
                        const char *profile) {
  vkf_vit_graph vg;
  build(m, g->pixels.shape[0], dt, &vg);
  if (!vg.graph) return;
  char what[64];
  snprintf(what, sizeof what, "device %s%s%s", dt == VKF_F16 ? "fp16" : "fp32", profile ? " " : "",
           profile ? profile : "");
  vkf_runner *r = NULL;
  float got[MAX_IMAGES * 16];
  vkf_status st = vkf_passes_run(vg.graph, NULL, NULL); /* as classify runs it */
  if (!st) st = vkf_runner_create(t->device, vg.graph, NULL, &r);
  if (!st) st = vkf_runner_set(r, vg.pixel_values, g->pixels.data, g->pixels.data_size);
  if (!st) st = vkf_runner_run(r);
  if (!st) st = vkf_runner_get(r, vg.logits, got, g->logits.data_size);
  CHECK_MSG(st == VKF_OK, "%s %s: %s", g->name, what, vkf_status_message(st));
  if (!st) compare_logits(g, got, dt == VKF_F16 ? TOL.device_f16 : TOL.device_f32, what);
  vkf_status_free(st);
  vkf_runner_destroy(r);
  vkf_graph_destroy(vg.graph);
}

static void make_copy(const char *dir, const void *st, size_t size);

/* Writes DIR/model.safetensors with every tensor of the f32 vit_tiny stored as F16 or BF16 (the
 * same rounding as torch's .half() / .bfloat16()), plus its config files. */
static void write_16bit_copy(const char *dir, int bf16) {
  vkf_safetensors *st = NULL;
  CHECK_OK(vkf_safetensors_open("tests/models/data/vit_tiny/model.safetensors", &st));
  if (!st) return;
  size_t n = vkf_safetensors_count(st), total = 0, header_cap = 64 + n * 256;
  for (size_t i = 0; i < n; i++) total += (size_t)vkf_safetensors_at(st, i)->element_count * 2;
  char *header = malloc(header_cap);
  uint16_t *data = malloc(total + 2);
  size_t len = (size_t)snprintf(header, header_cap, "{"), off = 0;
  for (size_t i = 0; i < n; i++) {
    const vkf_safetensors_info *info = vkf_safetensors_at(st, i);
    float *v = malloc((size_t)info->element_count * sizeof *v);
    CHECK_OK(vkf_safetensors_read_f32(st, info, (size_t)info->element_count, v));
    for (int64_t e = 0; e < info->element_count; e++)
      data[off / 2 + (size_t)e] = bf16 ? vkf_float_to_bf16(v[e]) : vkf_float_to_half(v[e]);
    free(v);
    len +=
        (size_t)snprintf(header + len, header_cap - len, "%s\"%s\":{\"dtype\":\"%s\",\"shape\":[",
                         i ? "," : "", info->name, bf16 ? "BF16" : "F16");
    for (int d = 0; d < info->rank; d++)
      len += (size_t)snprintf(header + len, header_cap - len, "%s%lld", d ? "," : "",
                              (long long)info->shape[d]);
    size_t end = off + (size_t)info->element_count * 2;
    len +=
        (size_t)snprintf(header + len, header_cap - len, "],\"data_offsets\":[%zu,%zu]}", off, end);
    off = end;
  }
  len += (size_t)snprintf(header + len, header_cap - len, "}");
  while (len % 8) header[len++] = ' '; /* keeps the data 8-byte aligned, as HF's writer does */
  char *file = malloc(8 + len + total);
  uint64_t len64 = len;
  memcpy(file, &len64, 8);
  memcpy(file + 8, header, len);
  memcpy(file + 8 + len, data, total);
  make_copy(dir, file, 8 + len + total);
  free(file);
  free(data);
  free(header);
  vkf_safetensors_close(st);
}

static vkf_status interp_logits(vkf_vit_model *m, const golden *g, vkf_dtype dt, float *out) {
  vkf_vit_graph vg;
  vkf_vit_build_options o = {.batch = g->pixels.shape[0], .dtype = dt};
  VKF_RETURN_IF_ERROR(vkf_vit_build(m, &o, &vg));
  vkf_input_binding in = {vg.pixel_values, g->pixels.data, g->pixels.data_size};
  vkf_output_binding ob = {vg.logits, out, g->logits.data_size};
  vkf_status st = vkf_interp_evaluate(vg.graph, &in, 1, &ob, 1);
  vkf_graph_destroy(vg.graph);
  return st;
}

/* F16 / BF16 checkpoints: converted on load, close to the f32 golden; an F16 file run in fp16
 * gives exactly what the F32 file run in fp16 gives (both round each weight once). */
static void test_16bit_checkpoints(vkf_vit_model *vit32, const golden *g) {
  char root[] = "/tmp/vkf_test_vit16_XXXXXX", dir[600];
  CHECK(mkdtemp(root) != NULL);
  for (int bf16 = 0; bf16 < 2; bf16++) {
    snprintf(dir, sizeof dir, "%s/%s", root, bf16 ? "bf16" : "f16");
    write_16bit_copy(dir, bf16);
    vkf_vit_model *m = NULL;
    CHECK_OK(vkf_vit_load(dir, &m));
    if (!m) continue;
    float got[MAX_IMAGES * 16], ref[MAX_IMAGES * 16];
    CHECK_OK(interp_logits(m, g, VKF_F32, got));
    compare_logits(g, got, bf16 ? TOL.bf16_file : TOL.f16_file,
                   bf16 ? "BF16 file, interpreter fp32" : "F16 file, interpreter fp32");
    if (!bf16) {
      CHECK_OK(interp_logits(m, g, VKF_F16, got));
      CHECK_OK(interp_logits(vit32, g, VKF_F16, ref));
      CHECK(memcmp(got, ref, g->logits.data_size) == 0);
    }
    vkf_vit_destroy(m);
  }
  snprintf(dir, sizeof dir, "rm -rf '%s'", root);
  CHECK(system(dir) == 0);
}

/* VKF_CHECK: every node agrees on a healthy run; a corrupted node output is the one named. */
static void test_check(gpu_test *t, vkf_vit_model *m, const golden *g, vkf_dtype dt) {
  vkf_vit_graph vg;
  build(m, g->pixels.shape[0], dt, &vg);
  if (!vg.graph) return;
  CHECK_OK(vkf_check_pin_all(vg.graph));
  vkf_runner *r = NULL;
  vkf_status st = vkf_runner_create(t->device, vg.graph, NULL, &r);
  if (!st) st = vkf_runner_set(r, vg.pixel_values, g->pixels.data, g->pixels.data_size);
  if (!st) st = vkf_runner_run(r);
  CHECK_MSG(st == VKF_OK, "%s", vkf_status_message(st));
  vkf_status_free(st);
  if (r) {
    vkf_check_report rep;
    CHECK_OK(vkf_check_run(r, vg.graph, NULL, &rep));
    CHECK(rep.nodes_checked >= 20 && rep.worst_ratio <= 1);
    const char *victim = "vit.encoder.layer.1.layernorm_after";
    const vkf_node *n = NULL;
    for (uint32_t i = 0; i < vkf_graph_node_count(vg.graph); i++)
      if (!strcmp(vkf_graph_node(vg.graph, i)->name, victim)) n = vkf_graph_node(vg.graph, i);
    CHECK(n != NULL);
    if (n) {
      const vkf_tensor *out = vkf_graph_tensor(vg.graph, n->output);
      size_t size = vkf_tensor_size(out);
      unsigned char *junk = calloc(1, size); /* zeros: a layernorm output never is */
      CHECK_OK(vkf_runner_set(r, n->output, junk, size));
      char needle[128];
      snprintf(needle, sizeof needle, "\"%s\"", victim);
      CHECK_STATUS(vkf_check_run(r, vg.graph, NULL, NULL), VKF_STATUS_MISMATCH, needle);
      free(junk);
    }
  }
  vkf_runner_destroy(r);
  vkf_graph_destroy(vg.graph);
}

/* ViTModel (no head): last_hidden_state and pooler_output, interpreter and device fp32. */
static void test_bare(gpu_test *t, const golden *pixels_of) {
  vkf_vit_model *m = NULL;
  CHECK_OK(vkf_vit_load("tests/models/data/vit_tiny_bare", &m));
  if (!m) return;
  CHECK(strcmp(vkf_vit_architecture(m), "ViTModel") == 0 && vkf_vit_label_count(m) == 0);
  vkf_npy_array want[2] = {{0}};
  CHECK_OK(vkf_npy_load(GOLDEN "vit_tiny_bare_last_hidden_state.npy", &want[0]));
  CHECK_OK(vkf_npy_load(GOLDEN "vit_tiny_bare_pooler_output.npy", &want[1]));
  vkf_vit_graph vg;
  build(m, pixels_of->pixels.shape[0], VKF_F32, &vg);
  if (vg.graph && want[0].data && want[1].data) {
    CHECK(!vkf_value_valid(vg.logits) && vkf_value_valid(vg.pooler_output));
    vkf_value outs[2] = {vg.last_hidden_state, vg.pooler_output};
    float *got[2][2]; /* [interpreter, device][output] */
    for (int o = 0; o < 2; o++)
      for (int w = 0; w < 2; w++) got[w][o] = calloc(want[o].element_count, sizeof(float));
    vkf_input_binding in = {vg.pixel_values, pixels_of->pixels.data, pixels_of->pixels.data_size};
    vkf_output_binding ob[2] = {{outs[0], got[0][0], want[0].data_size},
                                {outs[1], got[0][1], want[1].data_size}};
    CHECK_OK(vkf_interp_evaluate(vg.graph, &in, 1, ob, 2));
    vkf_runner *r = NULL;
    vkf_status st = vkf_runner_create(t->device, vg.graph, NULL, &r);
    if (!st) st = vkf_runner_set(r, vg.pixel_values, in.data, in.size);
    if (!st) st = vkf_runner_run(r);
    for (int o = 0; o < 2 && !st; o++)
      st = vkf_runner_get(r, outs[o], got[1][o], want[o].data_size);
    CHECK_MSG(st == VKF_OK, "bare device: %s", vkf_status_message(st));
    vkf_status_free(st);
    vkf_runner_destroy(r);
    static const char *const what[2][2] = {{"interpreter last_hidden_state", "interpreter pooler"},
                                           {"device last_hidden_state", "device pooler"}};
    for (int w = 0; w < 2; w++)
      for (int o = 0; o < 2; o++) {
        double max_err = 0;
        const float *ref = want[o].data;
        for (size_t i = 0; i < want[o].element_count; i++)
          if (!(fabs((double)got[w][o][i] - ref[i]) <= max_err))
            max_err = fabs((double)got[w][o][i] - ref[i]);
        double tol = w ? TOL.device_f32 : TOL.interp_f32;
        CHECK_MSG(max_err <= tol, "vit_tiny_bare %s: max diff %.3g > %g", what[w][o], max_err, tol);
        fprintf(stderr, "vit_tiny_bare %s: max diff %.3g (tolerance %g)\n", what[w][o], max_err,
                tol);
        free(got[w][o]);
      }
  }
  vkf_graph_destroy(vg.graph);
  vkf_npy_array_release(&want[0]);
  vkf_npy_array_release(&want[1]);
  vkf_vit_destroy(m);
}

static void test_model_api(vkf_vit_model *vit, vkf_vit_model *deit) {
  CHECK(strcmp(vkf_vit_architecture(vit), "ViTForImageClassification") == 0);
  CHECK(strcmp(vkf_vit_architecture(deit), "DeiTForImageClassificationWithTeacher") == 0);
  CHECK(vkf_vit_head_of(deit) == VKF_VIT_HEAD_TEACHER);
  CHECK(vkf_vit_label_count(vit) == 7);
  CHECK(strcmp(vkf_vit_label(vit, 1), "coffee mug") == 0);
  CHECK(vkf_vit_label(vit, 7) == NULL);
  const vkf_image_preprocess_params *p = vkf_vit_preprocess_params(deit);
  CHECK(p->do_center_crop && p->crop_height == 32 && p->resize_height == 36 &&
        p->resample == VKF_IMAGE_RESAMPLE_BICUBIC);
  float logits[4] = {0.5f, 2.0f, -1.0f, 2.0f};
  int64_t ids[3];
  float probs[3];
  vkf_vit_top_k(logits, 4, 3, ids, probs);
  CHECK(ids[0] == 1 && ids[1] == 3 && ids[2] == 0);
  double z = exp(0.5) + 2 * exp(2.0) + exp(-1.0);
  CHECK_NEAR(probs[0], exp(2.0) / z, 1e-6);
  CHECK_NEAR(probs[2], exp(0.5) / z, 1e-6);
  vkf_vit_graph vg;
  vkf_vit_build_options bad = {.dtype = VKF_I32};
  CHECK_STATUS(vkf_vit_build(vit, &bad, &vg), VKF_STATUS_INVALID_ARGUMENT, "dtype");
  CHECK(vg.graph == NULL);
}

/* ---- bad inputs: a copy of vit_tiny, corrupted one way per case ---- */

static char *read_file(const char *path, size_t *out_size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) n = 0;
  fclose(f);
  buf[n] = '\0';
  *out_size = (size_t)n;
  return buf;
}

static void write_file(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (!f) return;
  CHECK(fwrite(data, 1, size, f) == size);
  fclose(f);
}

/* A fresh copy of the tiny ViT in `dir` whose model.safetensors is `st` (size bytes). */
static void make_copy(const char *dir, const void *st, size_t size) {
  static const char *files[] = {"config.json", "preprocessor_config.json"};
  mkdir(dir, 0700);
  char src[512], dst[512];
  for (int i = 0; i < 2; i++) {
    size_t n = 0;
    snprintf(src, sizeof src, "tests/models/data/vit_tiny/%s", files[i]);
    snprintf(dst, sizeof dst, "%s/%s", dir, files[i]);
    char *text = read_file(src, &n);
    CHECK(text != NULL);
    if (text) write_file(dst, text, n);
    free(text);
  }
  snprintf(dst, sizeof dst, "%s/model.safetensors", dir);
  write_file(dst, st, size);
}

/* Rebuilds a safetensors file from `orig` with its JSON header replaced by `header`. */
static char *with_header(const char *orig, const char *header, size_t *io_size) {
  uint64_t old_len = 0;
  memcpy(&old_len, orig, 8);
  size_t data = *io_size - 8 - (size_t)old_len, len = strlen(header);
  char *out = malloc(8 + len + data);
  uint64_t len64 = len;
  memcpy(out, &len64, 8);
  memcpy(out + 8, header, len);
  memcpy(out + 8 + len, orig + 8 + old_len, data);
  *io_size = 8 + len + data;
  return out;
}

/* Replaces the first occurrence of `from` after `anchor` in the header text (a new string). */
static char *replace_after(const char *text, const char *anchor, const char *from, const char *to) {
  const char *a = strstr(text, anchor);
  const char *p = a ? strstr(a, from) : NULL;
  if (!p) return NULL;
  size_t head = (size_t)(p - text), n = strlen(text) - strlen(from) + strlen(to);
  char *out = malloc(n + 1);
  memcpy(out, text, head);
  strcpy(out + head, to);
  strcat(out, p + strlen(from));
  return out;
}

/* The "[begin,end]" of tensor `name` in the header text. */
static void offsets_of(const char *header, const char *name, char *out, size_t out_size) {
  char key[256];
  snprintf(key, sizeof key, "\"%s\"", name);
  const char *p = strstr(header, key);
  p = p ? strstr(p, "\"data_offsets\":") : NULL;
  out[0] = '\0';
  if (!p) return;
  p = strchr(p, '[');
  size_t n = strcspn(p, "]") + 1;
  snprintf(out, out_size, "%.*s", (int)n, p);
}

static void expect_load_error(const char *dir, vkf_status_code code, const char *needle,
                              const char *what) {
  vkf_vit_model *m = NULL;
  vkf_status st = vkf_vit_load(dir, &m);
  CHECK_MSG(vkf_status_code_of(st) == code, "%s: got %s: %s", what,
            vkf_status_code_name(vkf_status_code_of(st)), vkf_status_message(st));
  CHECK_MSG(strstr(vkf_status_message(st), needle) != NULL, "%s: \"%s\" lacks \"%s\"", what,
            vkf_status_message(st), needle);
  CHECK_MSG(strchr(vkf_status_message(st), '\n') == NULL, "%s: message is not one line", what);
  CHECK(m == NULL);
  fprintf(stderr, "  %-22s -> %s\n", what, vkf_status_message(st));
  vkf_status_free(st);
}

static void test_bad_inputs(void) {
  char root[] = "/tmp/vkf_test_vit_XXXXXX";
  CHECK(mkdtemp(root) != NULL);
  char dir[512], path[600];
  size_t size = 0;
  char *orig = read_file("tests/models/data/vit_tiny/model.safetensors", &size);
  CHECK(orig != NULL && size > 1000);
  if (!orig) return;
  uint64_t hlen = 0;
  memcpy(&hlen, orig, 8);
  char *header = malloc((size_t)hlen + 1);
  memcpy(header, orig + 8, (size_t)hlen);
  header[hlen] = '\0';

  snprintf(dir, sizeof dir, "%s/empty", root);
  mkdir(dir, 0700);
  expect_load_error(dir, VKF_STATUS_NOT_FOUND, "config.json", "empty folder");
  snprintf(dir, sizeof dir, "%s/absent", root);
  expect_load_error(dir, VKF_STATUS_NOT_FOUND, "absent", "missing folder");

  snprintf(dir, sizeof dir, "%s/truncated", root);
  make_copy(dir, orig, size - 100);
  expect_load_error(dir, VKF_STATUS_PARSE, "model.safetensors", "truncated safetensors");

  snprintf(dir, sizeof dir, "%s/header_past_eof", root);
  char *bad = malloc(size);
  memcpy(bad, orig, size);
  uint64_t huge = size + 1000;
  memcpy(bad, &huge, 8);
  make_copy(dir, bad, size);
  expect_load_error(dir, VKF_STATUS_PARSE, "model.safetensors", "header past EOF");
  free(bad);

  /* key.bias given query.bias's bytes: same size, so only the overlap is wrong. */
  char q[64], k[64], r[96];
  offsets_of(header, "vit.encoder.layer.0.attention.attention.query.bias", q, sizeof q);
  offsets_of(header, "vit.encoder.layer.0.attention.attention.key.bias", k, sizeof k);
  CHECK(q[0] && k[0]);
  char *h = replace_after(header, "\"vit.encoder.layer.0.attention.attention.key.bias\"", k, q);
  CHECK(h != NULL);
  if (h) {
    size_t n = size;
    char *file = with_header(orig, h, &n);
    snprintf(dir, sizeof dir, "%s/overlap", root);
    make_copy(dir, file, n);
    expect_load_error(dir, VKF_STATUS_PARSE, "overlap", "overlapping offsets");
    free(file);
    free(h);
  }
  /* classifier.bias moved past the end of the data section */
  char c[64];
  offsets_of(header, "classifier.bias", c, sizeof c);
  size_t data_size = size - 8 - (size_t)hlen;
  snprintf(r, sizeof r, "[%zu,%zu]", data_size, data_size + 28);
  h = replace_after(header, "\"classifier.bias\"", c, r);
  CHECK(h != NULL);
  if (h) {
    size_t n = size;
    char *file = with_header(orig, h, &n);
    snprintf(dir, sizeof dir, "%s/out_of_range", root);
    make_copy(dir, file, n);
    expect_load_error(dir, VKF_STATUS_PARSE, "classifier.bias", "out-of-range offsets");
    free(file);
    free(h);
  }
  h = replace_after(header, "\"vit.layernorm.weight\"", "vit.layernorm.weight",
                    "vit.layernorm.gamma");
  CHECK(h != NULL);
  if (h) {
    size_t n = size;
    char *file = with_header(orig, h, &n);
    snprintf(dir, sizeof dir, "%s/missing_tensor", root);
    make_copy(dir, file, n);
    expect_load_error(dir, VKF_STATUS_NOT_FOUND, "\"vit.layernorm.weight\" not found",
                      "missing tensor");
    free(file);
    free(h);
  }
  h = replace_after(header, "\"classifier.bias\"", "\"shape\":[7]", "\"shape\":[7,1]");
  CHECK(h != NULL);
  if (h) {
    size_t n = size;
    char *file = with_header(orig, h, &n);
    snprintf(dir, sizeof dir, "%s/wrong_shape", root);
    make_copy(dir, file, n);
    expect_load_error(dir, VKF_STATUS_SHAPE, "\"classifier.bias\" has shape [7,1], expected [7]",
                      "wrong shape");
    free(file);
    free(h);
  }
  /* A file that is not an image, through the classification input path. */
  vkf_vit_model *m = NULL;
  CHECK_OK(vkf_vit_load("tests/models/data/vit_tiny", &m));
  if (m) {
    const char *paths[1] = {"tests/models/data/vit_tiny/config.json"};
    float *px = malloc(3 * 32 * 32 * sizeof(float));
    vkf_status st = vkf_vit_load_images(m, paths, 1, px);
    CHECK_MSG(vkf_status_code_of(st) == VKF_STATUS_PARSE, "non-image: %s", vkf_status_message(st));
    CHECK(strstr(vkf_status_message(st), "config.json") != NULL);
    CHECK(strchr(vkf_status_message(st), '\n') == NULL);
    fprintf(stderr, "  %-22s -> %s\n", "non-image file", vkf_status_message(st));
    vkf_status_free(st);
    free(px);
  }
  vkf_vit_destroy(m);
  free(header);
  free(orig);
  snprintf(path, sizeof path, "rm -rf '%s'", root);
  CHECK(system(path) == 0);
}

int main(void) {
  vkf_vit_model *vit = NULL, *deit = NULL, *deit_cls = NULL;
  CHECK_OK(vkf_vit_load("tests/models/data/vit_tiny", &vit));
  CHECK_OK(vkf_vit_load("tests/models/data/deit_tiny", &deit));
  CHECK_OK(vkf_vit_load("tests/models/data/deit_cls_tiny", &deit_cls));
  if (!vit || !deit || !deit_cls) return test_report();
  CHECK(strcmp(vkf_vit_architecture(deit_cls), "DeiTForImageClassification") == 0);
  golden gv = {0}, gd = {0}, gc = {0};
  golden_load(&gv, "vit_tiny", "tests/models/data/vit_tiny", "vit_tiny");
  golden_load(&gd, "deit_tiny", "tests/models/data/deit_tiny", "deit_tiny");
  golden_load(&gc, "deit_cls_tiny", "tests/models/data/deit_cls_tiny", "deit_tiny");
  enum { MODELS = 3 };
  golden *goldens[MODELS] = {&gv, &gd, &gc};
  vkf_vit_model *models[MODELS] = {vit, deit, deit_cls};

  test_model_api(vit, deit);
  for (int i = 0; i < MODELS; i++) {
    test_interp(models[i], goldens[i]);
    test_pixels(models[i], goldens[i]);
  }
  test_bad_inputs();
  test_16bit_checkpoints(vit, &gv);

  /* Device: default caps, then the mobile profile (a second device picks up the clamp). */
  static const char *profiles[2] = {NULL, "mobile"};
  for (int p = 0; p < 2; p++) {
    if (profiles[p]) setenv("VKF_DEVICE_PROFILE", profiles[p], 1);
    vkf_env_reload();
    gpu_test t = gpu_test_start();
    for (int i = 0; i < MODELS; i++) {
      test_device(&t, models[i], goldens[i], VKF_F32, profiles[p]);
      test_device(&t, models[i], goldens[i], VKF_F16, profiles[p]);
    }
    if (p == 0) {
      test_bare(&t, &gv);
      test_check(&t, vit, &gv, VKF_F32);
      test_check(&t, vit, &gv, VKF_F16);
    }
    int last = p == 1;
    if (!last) {
      vkf_device_destroy(t.device);
      uint32_t messages = vkf_instance_validation_message_count(t.instance);
      CHECK_MSG(messages == 0, "%u validation messages", messages);
      vkf_instance_destroy(t.instance);
    } else {
      for (int i = 0; i < MODELS; i++) {
        vkf_npy_array_release(&goldens[i]->pixels);
        vkf_npy_array_release(&goldens[i]->logits);
        vkf_vit_destroy(models[i]);
      }
      return gpu_test_finish(&t);
    }
  }
  return test_report();
}
