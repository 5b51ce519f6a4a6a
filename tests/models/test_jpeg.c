/* models/image decoding against Pillow 13: every case of tests/models/golden/jpeg/manifest.txt
 * (tools/goldens/make_jpeg_golden.py; JPEGs, and PNGs in the layouts where decoders differ) either
 * decodes to exactly Pillow's Image.open().convert("RGB") pixels, or fails where Pillow raises,
 * with a one-line error naming the file. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/arch/vit.h"
#include "models/arch/vit_classify.h"
#include "models/formats/npy.h"
#include "models/image/image.h"
#include "tests/test_util.h"

#define GOLDEN_DIR "tests/models/golden/jpeg/"

/* A uint8 [H, W, 3] .npy as numpy.save writes it (format 1.0, C order); NULL if it is not one. */
static uint8_t *load_u8_npy(const char *path, uint32_t *out_h, uint32_t *out_w) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  uint8_t head[10];
  char dict[256] = {0};
  uint8_t *pixels = NULL;
  unsigned h = 0, w = 0, c = 0;
  if (fread(head, 1, 10, f) == 10 && !memcmp(head, "\x93NUMPY\x01\x00", 8)) {
    size_t len = (size_t)head[8] | (size_t)head[9] << 8;
    const char *shape = NULL;
    if (len < sizeof dict && fread(dict, 1, len, f) == len && strstr(dict, "'descr': '|u1'") &&
        strstr(dict, "'fortran_order': False") && (shape = strstr(dict, "'shape': (")) &&
        sscanf(shape, "'shape': (%u, %u, %u)", &h, &w, &c) == 3 && c == 3 && h && w && h <= 4096 &&
        w <= 4096) {
      size_t n = (size_t)h * w * 3;
      pixels = malloc(n + 1);
      if (pixels && (fread(pixels, 1, n + 1, f) != n)) { /* exactly n bytes, nothing after */
        free(pixels);
        pixels = NULL;
      }
    }
  }
  fclose(f);
  *out_h = h;
  *out_w = w;
  return pixels;
}

static void run_ok_case(const char *name, const char *path, uint32_t want_w, uint32_t want_h) {
  char npy[512];
  snprintf(npy, sizeof npy, GOLDEN_DIR "%s.npy", name);
  uint32_t h = 0, w = 0;
  uint8_t *gold = load_u8_npy(npy, &h, &w);
  CHECK_MSG(gold && w == want_w && h == want_h, "%s: cannot read a %ux%u uint8 golden", npy, want_w,
            want_h);
  vkf_image image;
  vkf_status status = vkf_image_load(path, &image);
  CHECK_MSG(status == VKF_OK, "%s: %s", name, vkf_status_message(status));
  vkf_status_free(status);
  if (gold && image.pixels) {
    CHECK_MSG(image.width == w && image.height == h, "%s: decoded %ux%u, Pillow %ux%u", name,
              image.width, image.height, w, h);
    if (image.width == w && image.height == h) {
      size_t n = (size_t)w * h * 3, differ = 0, first = 0;
      int worst = 0;
      for (size_t i = 0; i < n; i++) {
        int d = abs((int)image.pixels[i] - (int)gold[i]);
        if (d && !differ++) first = i;
        worst = d > worst ? d : worst;
      }
      CHECK_MSG(differ == 0,
                "%s: %zu of %zu values differ from Pillow (max %d levels; first at y %zu x %zu "
                "channel %zu)",
                name, differ, n, worst, first / 3 / w, first / 3 % w, first % 3);
      if (differ == 0) fprintf(stderr, "%-32s %ux%u equal to Pillow\n", name, w, h);
    }
  }
  vkf_image_destroy(&image);
  free(gold);
}

static void run_error_case(const char *name, const char *path, const char *pillow) {
  vkf_image image;
  vkf_status status = vkf_image_load(path, &image);
  const char *msg = vkf_status_message(status);
  CHECK_MSG(status != VKF_OK, "%s: decoded %ux%u where Pillow raises %s", name, image.width,
            image.height, pillow);
  CHECK_MSG(status == VKF_OK || (strstr(msg, path) == msg && !strchr(msg, '\n')),
            "%s: the error does not start with the file's name on one line: %s", name, msg);
  CHECK(image.pixels == NULL && image.width == 0 && image.height == 0);
  fprintf(stderr, "%-32s %s\n%-32s (Pillow: %s)\n", name, msg, "", pillow);
  vkf_status_free(status);
  vkf_image_destroy(&image);
}

static void test_goldens(void) {
  FILE *f = fopen(GOLDEN_DIR "manifest.txt", "r");
  CHECK_MSG(f != NULL, GOLDEN_DIR "manifest.txt: %s (run from the repo root)", strerror(errno));
  if (!f) return;
  char line[1024];
  int ok = 0, bad = 0, pngs = 0, modes[3] = {0};
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#' || line[0] == '\n') continue;
    line[strcspn(line, "\n")] = '\0';
    char file[128], kind[16], path[300], name[128];
    int used = 0;
    if (sscanf(line, "%127s %15s %n", file, kind, &used) != 2 || !strchr(file, '.')) {
      CHECK_MSG(0, "unparsable manifest line: %s", line);
      continue;
    }
    snprintf(path, sizeof path, GOLDEN_DIR "%s", file);
    snprintf(name, sizeof name, "%.*s", (int)(strchr(file, '.') - file), file);
    bool png = strstr(file, ".png") != NULL;
    unsigned w = 0, h = 0;
    char mode[8] = "";
    if (!strcmp(kind, "ok") && sscanf(line + used, "%ux%u %7s", &w, &h, mode) == 3) {
      run_ok_case(name, path, w, h);
      ok++;
      pngs += png;
      modes[0] += !strcmp(mode, "L");
      modes[1] += !strcmp(mode, "RGB");
      modes[2] += !strcmp(mode, "CMYK");
    } else if (!strcmp(kind, "error")) {
      run_error_case(name, path, line + used);
      bad++;
    } else {
      CHECK_MSG(0, "unparsable manifest line: %s", line);
    }
  }
  fclose(f);
  /* A truncated manifest must not pass quietly: every mode Pillow reads, and the broken files. */
  CHECK_MSG(ok >= 20 && bad >= 10 && modes[0] >= 2 && modes[1] >= 15 && modes[2] >= 2,
            "only %d decoded (%d L, %d RGB, %d CMYK) and %d failing cases", ok, modes[0], modes[1],
            modes[2], bad);
}

static uint8_t *read_file(const char *path, size_t *out_size) {
  *out_size = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *data = malloc((size_t)size + 1);
  if (data && fread(data, 1, (size_t)size, f) == (size_t)size) *out_size = (size_t)size;
  fclose(f);
  return data;
}

/* Every prefix of a JPEG, and every single-byte change in its headers, fails cleanly or decodes
 * to the declared size: no crash, no partial image (run under ASan by `make test-asan`). */
static void test_prefixes_and_flips(void) {
  size_t size;
  uint8_t *jpg = read_file(GOLDEN_DIR "progressive_s420_41x29.jpg", &size);
  CHECK(jpg && size > 500);
  if (!jpg) return;
  int decoded = 0;
  for (size_t n = 0; n < size - 2; n++) { /* Pillow: progressive needs all scans and the EOI */
    vkf_image image;
    vkf_status status = vkf_image_decode(jpg, n, "cut.jpg", &image);
    decoded += status == VKF_OK;
    CHECK_MSG(status != VKF_OK, "a %zu-byte prefix of %zu decoded", n, size);
    CHECK(image.pixels == NULL);
    vkf_status_free(status);
  }
  CHECK(decoded == 0);
  for (size_t i = 2; i < size && i < 700; i++) {
    for (int bit = 0; bit < 8; bit += 3) {
      jpg[i] ^= (uint8_t)(1u << bit);
      vkf_image image;
      vkf_status status = vkf_image_decode(jpg, size, "flip.jpg", &image);
      CHECK(status != VKF_OK || (image.pixels && image.width && image.height));
      vkf_status_free(status);
      vkf_image_destroy(&image);
      jpg[i] ^= (uint8_t)(1u << bit);
    }
  }
  free(jpg);
}

/* What `vkf classify` feeds the model (vkf_vit_load_images: decode + the checkpoint's processor)
 * against Hugging Face's processor on Pillow 13's pixels, for the demo JPEGs and grey, CMYK and
 * progressive ones: within 1e-6 (measured: equal). */
static void test_processor_pixel_values(void) {
  static const char *const models[] = {"vit_tiny", "deit_tiny"};
  char lines[16][256];
  const char *paths[16];
  size_t count = 0;
  FILE *f = fopen(GOLDEN_DIR "pixel_values_images.txt", "r");
  CHECK(f != NULL);
  while (f && count < 16 && fgets(lines[count], sizeof lines[count], f)) {
    lines[count][strcspn(lines[count], "\n")] = '\0';
    paths[count] = lines[count];
    count++;
  }
  if (f) fclose(f);
  CHECK(count >= 7);
  for (size_t k = 0; k < sizeof models / sizeof models[0]; k++) {
    char dir[128], npy[256];
    snprintf(dir, sizeof dir, "tests/models/data/%s", models[k]);
    snprintf(npy, sizeof npy, GOLDEN_DIR "pixel_values_%s.npy", models[k]);
    vkf_vit_model *m = NULL;
    vkf_npy_array want = {0};
    CHECK_OK(vkf_vit_load(dir, &m));
    CHECK_OK(vkf_npy_load(npy, &want));
    if (!m || !want.data) {
      vkf_vit_destroy(m);
      vkf_npy_array_release(&want);
      continue;
    }
    int64_t s = vkf_vit_image_size(m);
    CHECK(want.dtype == VKF_NPY_F32 && want.rank == 4 && want.shape[0] == (int64_t)count &&
          want.shape[1] == 3 && want.shape[2] == s && want.shape[3] == s);
    float *got = malloc(want.data_size);
    CHECK_OK(vkf_vit_load_images(m, paths, count, got));
    const float *ref = want.data;
    double max_err = 0;
    for (size_t i = 0; i < want.element_count; i++) {
      double e = fabs((double)got[i] - ref[i]);
      max_err = e > max_err ? e : max_err;
    }
    CHECK_MSG(max_err <= 1e-6, "%s: pixel_values differ from Hugging Face's by up to %.3g",
              models[k], max_err);
    fprintf(stderr, "%s pixel_values of %zu images: max |diff| %.3g from Hugging Face's\n",
            models[k], count, max_err);
    free(got);
    vkf_npy_array_release(&want);
    vkf_vit_destroy(m);
  }
}

/* A progressive JPEG's scans each pass over the whole image, so their number is capped (1000,
 * far above the ~10 encoders write; Pillow has no cap). Repeating the last scan of a real file
 * keeps it decodable (golden case repeated_last_scan, equal to Pillow with 5 repeats). */
static void test_scan_cap(void) {
  size_t size;
  uint8_t *jpg = read_file(GOLDEN_DIR "progressive_s420_41x29.jpg", &size);
  CHECK(jpg && size > 500);
  if (!jpg) return;
  size_t last = 0;
  for (size_t i = 0; i + 1 < size; i++) last = jpg[i] == 0xFF && jpg[i + 1] == 0xDA ? i : last;
  size_t scan = size - 2 - last; /* the last SOS up to the EOI */
  for (int repeats = 990; repeats <= 1000; repeats += 10) {
    size_t n = size + (size_t)repeats * scan;
    uint8_t *many = malloc(n);
    memcpy(many, jpg, size - 2);
    for (int r = 0; r < repeats; r++) memcpy(many + size - 2 + (size_t)r * scan, jpg + last, scan);
    memcpy(many + n - 2, "\xff\xd9", 2);
    vkf_image image;
    vkf_status status = vkf_image_decode(many, n, "scans.jpg", &image);
    int scans = 0; /* the file's own scans plus the repeats */
    for (size_t i = 0; i + 1 < size; i++) scans += jpg[i] == 0xFF && jpg[i + 1] == 0xDA;
    if (scans + repeats > 1000) {
      CHECK_STATUS(status, VKF_STATUS_UNSUPPORTED, "scans.jpg: JPEG has more than 1000 scans");
    } else {
      CHECK_MSG(status == VKF_OK, "%d scans: %s", scans + repeats, vkf_status_message(status));
      vkf_status_free(status);
    }
    vkf_image_destroy(&image);
    free(many);
  }
  free(jpg);
}

int main(void) {
  test_goldens();
  test_processor_pixel_values();
  test_prefixes_and_flips();
  test_scan_cap();
  return test_report();
}
