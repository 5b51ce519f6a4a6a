/* The default image model (assets/models/vit_fashion_mnist, trained by tools/goldens/train_default_vit.py)
 * on the committed held-out Fashion-MNIST test images: every image through our PNG decoder, the
 * checkpoint's processor and the device, top-1 equal to PyTorch's and logits within 1e-3, image
 * for image; prints both accuracies against the true labels. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/passes/passes.h"
#include "host/runner.h"
#include "models/arch/vit.h"
#include "models/arch/vit_classify.h"
#include "models/formats/npy.h"
#include "models/image/image.h"
#include "tests/gpu_util.h"

#define MODEL "assets/models/vit_fashion_mnist"
#define GOLDEN "tests/models/golden/fashion_mnist/"
#define TILE 28u          /* Fashion-MNIST images are 28x28 */
#define TILES_PER_ROW 50u /* tools/goldens/train_default_vit.py's layout of heldout.png */
#define CHUNK 250         /* images per device run: one graph, reused */
#define TOL_LOGITS 1e-3
/* The committed checkpoint reaches 0.82 on the whole test split; far below means a broken or
 * untrained checkpoint was committed, not a parity problem. */
#define MIN_ACCURACY 0.80

static const char *const LABELS[10] = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                       "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};

static int64_t argmax(const float *v, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; i++)
    if (v[i] > v[best]) best = i;
  return best;
}

/* Tile i of the sheet (row-major) through the checkpoint's own processor. */
static vkf_status preprocess_tile(const vkf_image *sheet, const vkf_image_preprocess_params *pp,
                                  int64_t i, float *out, size_t out_count) {
  vkf_image tile = {0};
  VKF_RETURN_IF_ERROR(vkf_image_create(TILE, TILE, &tile));
  uint32_t x0 = (uint32_t)(i % TILES_PER_ROW) * TILE, y0 = (uint32_t)(i / TILES_PER_ROW) * TILE;
  for (uint32_t y = 0; y < TILE; y++)
    memcpy(tile.pixels + (size_t)y * TILE * 3,
           sheet->pixels + ((size_t)(y0 + y) * sheet->width + x0) * 3, TILE * 3);
  vkf_status st = vkf_image_preprocess(&tile, pp, out, out_count);
  vkf_image_destroy(&tile);
  return st;
}

int main(void) {
  vkf_vit_model *m = NULL;
  vkf_npy_array labels = {0}, want = {0};
  vkf_image sheet = {0};
  CHECK_OK(vkf_vit_load(MODEL, &m));
  CHECK_OK(vkf_npy_load(GOLDEN "heldout_labels.npy", &labels));
  CHECK_OK(vkf_npy_load(GOLDEN "heldout_logits.npy", &want));
  CHECK_OK(vkf_image_load(GOLDEN "heldout.png", &sheet));
  if (!m || !labels.data || !want.data || !sheet.pixels) return test_report();

  /* The checkpoint is what docs/models.md says: 10 readable Fashion-MNIST labels, 28x28 input. */
  CHECK(vkf_vit_label_count(m) == 10 && vkf_vit_image_size(m) == TILE);
  for (int64_t i = 0; i < 10 && vkf_vit_label_count(m) == 10; i++)
    CHECK_MSG(strcmp(vkf_vit_label(m, i), LABELS[i]) == 0, "label %lld is \"%s\"", (long long)i,
              vkf_vit_label(m, i));
  const int64_t n = labels.shape[0], classes = vkf_vit_label_count(m), s = vkf_vit_image_size(m);
  CHECK(labels.dtype == VKF_NPY_I32 && labels.rank == 1 && n > 0 && n % CHUNK == 0);
  CHECK(want.dtype == VKF_NPY_F32 && want.rank == 2 && want.shape[0] == n &&
        want.shape[1] == classes);
  CHECK_MSG(
      sheet.width == TILES_PER_ROW * TILE && (int64_t)sheet.height * TILES_PER_ROW == n * TILE,
      "heldout.png is %ux%u for %lld images", sheet.width, sheet.height, (long long)n);
  if (test_checks_failed) return test_report();

  const size_t per_image = (size_t)(3 * s * s);
  float *pixels = malloc(CHUNK * per_image * sizeof *pixels);
  float *got = malloc((size_t)(n * classes) * sizeof *got);
  CHECK(pixels && got);
  gpu_test t = gpu_test_start();
  vkf_vit_build_options bo = {.batch = CHUNK, .dtype = VKF_F32};
  vkf_vit_graph vg = {0};
  vkf_runner *r = NULL;
  vkf_status st = pixels && got ? vkf_vit_build(m, &bo, &vg) : VKF_OK;
  if (!st && vg.graph) st = vkf_passes_run(vg.graph, NULL, NULL); /* as vkf classify runs it */
  if (!st && vg.graph) st = vkf_runner_create(t.device, vg.graph, NULL, &r);
  for (int64_t c = 0; !st && r && c < n; c += CHUNK) {
    for (int64_t i = 0; !st && i < CHUNK; i++)
      st = preprocess_tile(&sheet, vkf_vit_preprocess_params(m), c + i, pixels + i * per_image,
                           per_image);
    if (!st) st = vkf_runner_set(r, vg.pixel_values, pixels, CHUNK * per_image * sizeof *pixels);
    if (!st) st = vkf_runner_run(r);
    if (!st)
      st = vkf_runner_get(r, vg.logits, got + c * classes, (size_t)(CHUNK * classes) * sizeof *got);
  }
  CHECK_MSG(st == VKF_OK, "held-out run: %s", vkf_status_message(st));
  vkf_status_free(st);

  if (!st && r) {
    const float *ref = want.data;
    const int32_t *truth = labels.data;
    double max_err = 0;
    int64_t agree = 0, ours_right = 0, torch_right = 0;
    for (int64_t i = 0; i < n; i++) {
      for (int64_t j = 0; j < classes; j++) {
        double e = fabs((double)got[i * classes + j] - ref[i * classes + j]);
        if (!(e <= max_err)) max_err = e; /* a NaN sticks */
      }
      int64_t a = argmax(got + i * classes, classes), b = argmax(ref + i * classes, classes);
      CHECK_MSG(a == b, "image %lld: vkformer says %s, PyTorch %s", (long long)i, LABELS[a],
                LABELS[b]);
      agree += a == b;
      ours_right += a == truth[i];
      torch_right += b == truth[i];
    }
    CHECK_MSG(max_err <= TOL_LOGITS, "max |logit diff| %.3g > %g", max_err, TOL_LOGITS);
    double acc = (double)ours_right / (double)n;
    fprintf(stderr,
            "default ViT on %lld held-out Fashion-MNIST test images: top-1 equal to PyTorch's "
            "%lld/%lld, max |logit diff| %.3g; accuracy vkformer %.4f (%lld), PyTorch %.4f "
            "(%lld)\n",
            (long long)n, (long long)agree, (long long)n, max_err, acc, (long long)ours_right,
            (double)torch_right / (double)n, (long long)torch_right);
    CHECK_MSG(acc >= MIN_ACCURACY, "accuracy %.4f below %.2f", acc, MIN_ACCURACY);
  }
  vkf_runner_destroy(r);
  vkf_graph_destroy(vg.graph);
  free(pixels);
  free(got);
  vkf_image_destroy(&sheet);
  vkf_npy_array_release(&labels);
  vkf_npy_array_release(&want);
  vkf_vit_destroy(m);
  return gpu_test_finish(&t);
}
