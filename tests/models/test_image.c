/* models/image: decoding and HF-style preprocessing against goldens from
 * tools/goldens/make_image_golden.py (Pillow + transformers), plus bad-input and API-contract cases. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "models/image/image.h"
#include "tests/test_util.h"

#define GOLDEN_DIR "tests/models/golden/image/"

/* One manifest line, parsed. */
typedef struct golden_case {
  char kind[16];
  char name[96];
  char image[256];
  char values[128];
  vkf_image_preprocess_params params;
  uint32_t shape[3];
  uint32_t sampled;
  double sum[3];
  double max_steps, mean_steps;
} golden_case;

static void parse_triple(const char *text, double out[3]) {
  char *end = NULL;
  for (int i = 0; i < 3; i++) {
    out[i] = strtod(text, &end);
    text = *end == ',' ? end + 1 : end;
  }
}

static int parse_case(char *line, golden_case *c) {
  memset(c, 0, sizeof *c);
  for (char *tok = strtok(line, " \n"); tok; tok = strtok(NULL, " \n")) {
    char *eq = strchr(tok, '=');
    if (!eq) return 0;
    *eq = '\0';
    const char *key = tok, *val = eq + 1;
    vkf_image_preprocess_params *p = &c->params;
    if (!strcmp(key, "case"))
      snprintf(c->kind, sizeof c->kind, "%s", val);
    else if (!strcmp(key, "name"))
      snprintf(c->name, sizeof c->name, "%s", val);
    else if (!strcmp(key, "image"))
      snprintf(c->image, sizeof c->image, "%s", val);
    else if (!strcmp(key, "values"))
      snprintf(c->values, sizeof c->values, "%s", val);
    else if (!strcmp(key, "do_resize"))
      p->do_resize = atoi(val) != 0;
    else if (!strcmp(key, "height"))
      p->resize_height = (uint32_t)atoi(val);
    else if (!strcmp(key, "width"))
      p->resize_width = (uint32_t)atoi(val);
    else if (!strcmp(key, "shortest_edge"))
      p->shortest_edge = (uint32_t)atoi(val);
    else if (!strcmp(key, "longest_edge"))
      p->longest_edge = (uint32_t)atoi(val);
    else if (!strcmp(key, "resample"))
      p->resample = (vkf_image_resample)atoi(val);
    else if (!strcmp(key, "do_center_crop"))
      p->do_center_crop = atoi(val) != 0;
    else if (!strcmp(key, "crop_height"))
      p->crop_height = (uint32_t)atoi(val);
    else if (!strcmp(key, "crop_width"))
      p->crop_width = (uint32_t)atoi(val);
    else if (!strcmp(key, "do_rescale"))
      p->do_rescale = atoi(val) != 0;
    else if (!strcmp(key, "rescale_factor"))
      p->rescale_factor = strtod(val, NULL);
    else if (!strcmp(key, "do_normalize"))
      p->do_normalize = atoi(val) != 0;
    else if (!strcmp(key, "mean"))
      parse_triple(val, p->mean);
    else if (!strcmp(key, "std"))
      parse_triple(val, p->std);
    else if (!strcmp(key, "sum"))
      parse_triple(val, c->sum);
    else if (!strcmp(key, "sampled"))
      c->sampled = (uint32_t)atoi(val);
    else if (!strcmp(key, "max_steps"))
      c->max_steps = strtod(val, NULL);
    else if (!strcmp(key, "mean_steps"))
      c->mean_steps = strtod(val, NULL);
    else if (!strcmp(key, "shape")) {
      if (sscanf(val, "%u,%u,%u", &c->shape[0], &c->shape[1], &c->shape[2]) != 3) return 0;
    } else {
      return 0;
    }
  }
  return c->kind[0] && c->name[0] && c->image[0] && c->values[0];
}

/* Reads the golden values into `gold` (full) or `index`/`gold` (sampled); returns the count. */
static size_t read_values(const golden_case *c, size_t total, uint32_t **out_index,
                          float **out_gold) {
  *out_index = NULL;
  *out_gold = NULL;
  char path[512];
  snprintf(path, sizeof path, GOLDEN_DIR "%s", c->values);
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "%s: %s\n", path, strerror(errno));
    return 0;
  }
  size_t n = c->sampled ? c->sampled : total;
  uint32_t *index = malloc(n * sizeof *index);
  float *gold = malloc(n * sizeof *gold);
  size_t got = 0;
  if (index && gold) {
    for (got = 0; got < n; got++) {
      uint32_t i = (uint32_t)got;
      if (c->sampled && fread(&i, 4, 1, f) != 1) break;
      if (fread(&gold[got], 4, 1, f) != 1) break;
      index[got] = i;
    }
  }
  CHECK_MSG(got == n && fgetc(f) == EOF, "%s: expected %zu values", path, n);
  fclose(f);
  *out_index = index;
  *out_gold = gold;
  return got == n ? n : 0;
}

/* Compares `ours` ([3, H, W] for preprocess, [H, W, 3] for decode) with the golden case. */
static void compare(const golden_case *c, const float *ours, size_t total) {
  uint32_t *index;
  float *gold;
  size_t n = read_values(c, total, &index, &gold);
  bool chw = !strcmp(c->kind, "preprocess");
  double step[3] = {1, 1, 1}; /* one uint8 level, in output units */
  for (int ch = 0; ch < 3 && chw; ch++) step[ch] = c->params.rescale_factor / c->params.std[ch];
  size_t plane = total / 3;
  double max_steps = 0, sum_steps = 0;
  size_t worst = 0;
  size_t out_of_range = 0;
  for (size_t k = 0; k < n; k++) {
    size_t i = index[k];
    if (i >= total) {
      out_of_range++;
      continue;
    }
    int ch = chw ? (int)(i / plane) : (int)(i % 3);
    double d = fabs((double)ours[i] - gold[k]) / step[ch];
    sum_steps += d;
    if (d > max_steps) max_steps = d, worst = i;
  }
  CHECK_MSG(out_of_range == 0, "%s: %zu golden indices out of range", c->name, out_of_range);
  /* max_steps == 0 means bit-exact: the uint8 stages are integer arithmetic and the float stage
   * is the same IEEE operations numpy performs, so there is no rounding slack to allow. */
  CHECK_MSG(c->max_steps == 0 ? max_steps == 0 : max_steps <= c->max_steps + 1e-4,
            "%s: max |diff| %.4g levels at flat index %zu, allowed %g", c->name, max_steps, worst,
            c->max_steps);
  double mean_steps = n ? sum_steps / n : 0;
  CHECK_MSG(mean_steps <= c->mean_steps, "%s: mean |diff| %.4g levels, allowed %g", c->name,
            mean_steps, c->mean_steps);
  /* Per-channel means over every value, so sampled cases still see the whole tensor. */
  for (int ch = 0; ch < 3; ch++) {
    double sum = 0;
    for (size_t i = 0; i < plane; i++) sum += chw ? ours[ch * plane + i] : ours[3 * i + ch];
    double diff = fabs(sum - c->sum[ch]) / plane / step[ch];
    /* 1e-6 of a level covers summation order (numpy sums pairwise, we sum in sequence). */
    CHECK_MSG(diff <= c->mean_steps + 1e-6, "%s: channel %d mean differs by %.4g levels", c->name,
              ch, diff);
  }
  fprintf(stderr, "%-32s %-9s max %.3g levels, mean %.3g levels over %zu values\n", c->name,
          c->sampled ? "sampled" : "full", max_steps, mean_steps, n);
  free(index);
  free(gold);
}

static void run_case(const golden_case *c) {
  vkf_image image;
  vkf_status status = vkf_image_load(c->image, &image);
  CHECK_MSG(status == VKF_OK, "%s: %s", c->name, vkf_status_message(status));
  if (status != VKF_OK) {
    vkf_status_free(status);
    return;
  }
  size_t total = (size_t)c->shape[0] * c->shape[1] * c->shape[2];
  float *ours = malloc(total * sizeof *ours);
  if (!strcmp(c->kind, "decode")) {
    CHECK(image.height == c->shape[0] && image.width == c->shape[1] && c->shape[2] == 3);
    if (image.height == c->shape[0] && image.width == c->shape[1]) {
      for (size_t i = 0; i < total; i++) ours[i] = image.pixels[i];
      compare(c, ours, total);
    }
  } else {
    uint32_t h = 0, w = 0;
    CHECK_OK(vkf_image_preprocess_output_size(&c->params, image.width, image.height, &h, &w));
    CHECK_MSG(c->shape[0] == 3 && h == c->shape[1] && w == c->shape[2],
              "%s: output %ux%u, golden %ux%u", c->name, h, w, c->shape[1], c->shape[2]);
    status = vkf_image_preprocess(&image, &c->params, ours, total);
    CHECK_MSG(status == VKF_OK, "%s: %s", c->name, vkf_status_message(status));
    if (status == VKF_OK) compare(c, ours, total);
    vkf_status_free(status);
  }
  free(ours);
  vkf_image_destroy(&image);
}

static void test_goldens(void) {
  FILE *f = fopen(GOLDEN_DIR "manifest.txt", "r");
  CHECK_MSG(f != NULL, GOLDEN_DIR "manifest.txt: %s (run from the repo root)", strerror(errno));
  if (!f) return;
  char line[4096];
  int cases = 0, preprocess = 0, decode = 0;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#' || line[0] == '\n') continue;
    golden_case c;
    int ok = parse_case(line, &c);
    CHECK_MSG(ok, "unparsable manifest line %d", cases + 1);
    if (!ok) continue;
    run_case(&c);
    cases++;
    preprocess += !strcmp(c.kind, "preprocess");
    decode += !strcmp(c.kind, "decode");
  }
  fclose(f);
  /* A truncated manifest must not pass quietly. */
  CHECK_MSG(preprocess >= 30 && decode >= 4, "only %d preprocess and %d decode cases", preprocess,
            decode);
}

static uint8_t *read_file(const char *path, size_t *out_size) {
  *out_size = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *data = malloc((size_t)size);
  if (data && fread(data, 1, (size_t)size, f) == (size_t)size) *out_size = (size_t)size;
  fclose(f);
  return data;
}

static void test_bad_files(void) {
  vkf_image image;
  CHECK_STATUS(vkf_image_load("tests/models/golden/image/no_such.png", &image),
               VKF_STATUS_NOT_FOUND, "no_such.png");
  CHECK(image.pixels == NULL && image.width == 0);
  CHECK_STATUS(vkf_image_load("CMakeLists.txt", &image), VKF_STATUS_PARSE,
               "CMakeLists.txt: not a PNG or JPEG image");
  CHECK_STATUS(vkf_image_load("tests/models/golden/image/manifest.txt", &image), VKF_STATUS_PARSE,
               "manifest.txt");
  CHECK_STATUS(vkf_image_load("tests/models", &image), VKF_STATUS_IO, "tests/models");
  /* A FIFO named like an image: refused at once (opening it must not wait for a writer). */
  char fifo[64];
  snprintf(fifo, sizeof fifo, "/tmp/vkf_test_image_%d.png", (int)getpid());
  unlink(fifo);
  CHECK(mkfifo(fifo, 0600) == 0);
  CHECK_STATUS(vkf_image_load(fifo, &image), VKF_STATUS_IO, "not a regular file");
  unlink(fifo);
  CHECK_STATUS(vkf_image_decode("", 0, "empty.png", &image), VKF_STATUS_PARSE, "empty.png");

  size_t size;
  uint8_t *png = read_file(GOLDEN_DIR "coffee_288x192.png", &size);
  CHECK(png != NULL && size > 1000);
  if (!png) return;
  /* Cut in the pixel data (its IDAT chunk now declares more than the file holds), just after the
   * header, and inside the signature. */
  CHECK_STATUS(vkf_image_decode(png, size / 2, "half.png", &image), VKF_STATUS_PARSE,
               "half.png: corrupt PNG (chunk \"IDAT\"");
  CHECK(image.pixels == NULL);
  CHECK_STATUS(vkf_image_decode(png, 40, "header.png", &image), VKF_STATUS_PARSE, "header.png");
  /* The last chunk's length and type are there but not its data (fuzz_image found stb growing
   * its IDAT buffer to 2 GiB for this): refused, naming the chunk. */
  static const uint8_t cut_idat[] = {
      0x89, 'P',  'N',  'G',  '\r', '\n', 0x1a, '\n', 0,    0,    0,    13,   'I',  'H',
      'D',  'R',  0,    0,    0,    15,   0,    0,    0,    31,   8,    0,    0,    0,
      0,    0,    0,    0,    0,    0x60, 0,    0,    0,    'I',  'D',  'A',  'T',  0x89};
  CHECK_STATUS(vkf_image_decode(cut_idat, sizeof cut_idat, "cut.png", &image), VKF_STATUS_PARSE,
               "cut.png: corrupt PNG (chunk \"IDAT\" at byte 33 declares 1610612736 bytes");
  CHECK_STATUS(vkf_image_decode(png, 5, "sig.png", &image), VKF_STATUS_PARSE, "sig.png");
  /* Flipped bytes in the compressed stream must fail or decode, never crash (ASan build). */
  png[size / 3] ^= 0x5a;
  png[size / 3 + 1] ^= 0xa5;
  vkf_status status = vkf_image_decode(png, size, "flipped.png", &image);
  CHECK(status != VKF_OK || (image.width == 288 && image.height == 192));
  vkf_status_free(status);
  vkf_image_destroy(&image);

  /* Headers claiming too many pixels are refused before anything is allocated. stb reads
   * IHDR without checking its CRC, so a zero CRC is enough here. 20000x10000 passes stb's own
   * limit (2^30 bytes) but not ours; 40000 wide breaks the per-side limit. */
  uint8_t hdr[] = {0x89, 'P', 'N',  'G',  '\r', '\n', 0x1a, '\n', 0,    0,
                   0,    13,  'I',  'H',  'D',  'R',  0,    0,    0x4e, 0x20, /* width 20000 */
                   0,    0,   0x27, 0x10,                                     /* height 10000 */
                   8,    2,   0,    0,    0,    0,    0,    0,    0};
  CHECK_STATUS(vkf_image_decode(hdr, sizeof hdr, "huge.png", &image), VKF_STATUS_UNSUPPORTED,
               "huge.png: image is 20000x10000");
  hdr[18] = 0x9c, hdr[19] = 0x40, hdr[22] = 0, hdr[23] = 100; /* 40000 x 100 */
  CHECK_STATUS(vkf_image_decode(hdr, sizeof hdr, "wide.png", &image), VKF_STATUS_UNSUPPORTED,
               "wide.png: image is 40000x100");
  CHECK(image.pixels == NULL);

  /* A truncated JPEG fails as in Pillow ("image file is truncated"), never a padded image; one
   * cut inside its headers fails too. */
  free(png);
  uint8_t *jpg = read_file("assets/images/rocket.jpg", &size);
  CHECK(jpg != NULL && size > 1000);
  if (!jpg) return;
  CHECK_STATUS(vkf_image_decode(jpg, size / 2, "half.jpg", &image), VKF_STATUS_PARSE,
               "half.jpg: image file is truncated");
  CHECK(image.pixels == NULL);
  CHECK_STATUS(vkf_image_decode(jpg, 100, "head.jpg", &image), VKF_STATUS_PARSE, "head.jpg");
  free(jpg);
}

/* Issue 18, item 2: stb_image 2.27 overran its tables on a Huffman table declaring more than 256
 * codes, and a guard that only looked at files starting with FF D8 let a JPEG with an extra 0xFF
 * in front through (stb skips fill bytes). JPEG now goes to libjpeg-turbo only, and like Pillow
 * only data starting with FF D8 FF is a JPEG. */
static void test_jpeg_not_stb(void) {
  vkf_image image;
  size_t size;
  uint8_t *jpg = read_file("assets/images/rocket.jpg", &size);
  CHECK(jpg != NULL && size > 1000);
  if (!jpg) return;
  size_t dht = 0;
  for (size_t i = 0; i + 1 < size && !dht; i++) dht = jpg[i] == 0xFF && jpg[i + 1] == 0xC4 ? i : 0;
  CHECK(dht > 0);
  uint8_t *bad = malloc(size + 1);
  bad[0] = 0xFF;
  memcpy(bad + 1, jpg, size);
  memset(bad + 1 + dht + 5, 0x20, 16); /* 16 code counts of 32: 512 codes */
  CHECK_STATUS(vkf_image_decode(bad + 1, size, "late.jpg", &image), VKF_STATUS_PARSE,
               "late.jpg: corrupt JPEG: Bogus Huffman table");
  CHECK_STATUS(vkf_image_decode(bad, size + 1, "ff_late.jpg", &image), VKF_STATUS_PARSE,
               "ff_late.jpg: not a PNG or JPEG image");
  /* Pillow refuses the intact file with a fill byte in front too ("cannot identify"). */
  memcpy(bad + 1, jpg, size);
  CHECK_STATUS(vkf_image_decode(bad, size + 1, "ff.jpg", &image), VKF_STATUS_PARSE,
               "ff.jpg: not a PNG or JPEG image");
  CHECK(image.pixels == NULL);
  /* Before the frame header, with no scan: SOI, then a DHT whose counts add up to 512. */
  uint8_t early[2 + 4 + 17] = {0xFF, 0xD8, 0xFF, 0xC4, 0x00, 0x13, 0x00};
  memset(early + 7, 0x20, 16);
  CHECK_STATUS(vkf_image_decode(early, sizeof early, "early.jpg", &image), VKF_STATUS_PARSE,
               "early.jpg: not a JPEG that Pillow opens");
  free(bad);

  /* The same bytes inside an APP2 payload (ICC profiles are arbitrary binary) are skipped by
   * length, as Pillow and libjpeg skip them, so the image still decodes, to the same pixels. */
  uint8_t app[4 + 2 + 17] = {0xFF, 0xE2, 0x00, 0x17, 0xFF, 0xC4, 0x00, 0x13, 0x00};
  memset(app + 9, 0x20, sizeof app - 9);
  uint8_t *with_app = malloc(size + sizeof app);
  memcpy(with_app, jpg, 2);
  memcpy(with_app + 2, app, sizeof app);
  memcpy(with_app + 2 + sizeof app, jpg + 2, size - 2);
  vkf_image plain;
  CHECK_OK(vkf_image_decode(jpg, size, "rocket.jpg", &plain));
  vkf_status status = vkf_image_decode(with_app, size + sizeof app, "app2.jpg", &image);
  CHECK_MSG(status == VKF_OK, "%s", vkf_status_message(status));
  vkf_status_free(status);
  CHECK(image.width == 384 && image.height == 256 && plain.width == 384);
  CHECK(image.pixels && plain.pixels && !memcmp(image.pixels, plain.pixels, 384 * 256 * 3));
  vkf_image_destroy(&image);
  vkf_image_destroy(&plain);
  free(with_app);
  free(jpg);
}

static void test_demo_images(void) {
  static const char *const paths[] = {"assets/images/cat.jpg", "assets/images/coffee.jpg",
                                      "assets/images/astronaut.jpg", "assets/images/rocket.jpg"};
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
    vkf_image image;
    vkf_status status = vkf_image_load(paths[i], &image);
    CHECK_MSG(status == VKF_OK, "%s", vkf_status_message(status));
    vkf_status_free(status);
    CHECK_MSG(image.height == 256 && image.width >= 256, "%s is %ux%u", paths[i], image.width,
              image.height);
    vkf_image_destroy(&image);
  }
}

/* A 4x3 image whose pixel (x, y) is (10x + y, 100 + x, 200 + y). */
static vkf_image make_ramp(void) {
  vkf_image image;
  CHECK_OK(vkf_image_create(4, 3, &image));
  for (uint32_t y = 0; y < 3; y++) {
    for (uint32_t x = 0; x < 4; x++) {
      uint8_t *p = image.pixels + (y * 4 + x) * 3;
      p[0] = (uint8_t)(10 * x + y);
      p[1] = (uint8_t)(100 + x);
      p[2] = (uint8_t)(200 + y);
    }
  }
  return image;
}

static void test_center_crop(void) {
  vkf_image ramp = make_ramp(), out;
  /* Inside: top = (3 - 1) // 2 = 1, left = (4 - 3) // 2 = 0. */
  CHECK_OK(vkf_image_center_crop(&ramp, 3, 1, &out));
  CHECK(out.width == 3 && out.height == 1);
  CHECK(out.pixels[0] == 1 && out.pixels[3] == 11 && out.pixels[6] == 21 && out.pixels[8] == 201);
  vkf_image_destroy(&out);
  /* Larger than the image: top = (3 - 6) // 2 = -2, left = (4 - 5) // 2 = -1; zeros outside. */
  CHECK_OK(vkf_image_center_crop(&ramp, 5, 6, &out));
  CHECK(out.width == 5 && out.height == 6);
  int ok = 1;
  for (int y = 0; y < 6; y++) {
    for (int x = 0; x < 5; x++) {
      int sy = y - 2, sx = x - 1;
      int inside = sy >= 0 && sy < 3 && sx >= 0 && sx < 4;
      const uint8_t *p = out.pixels + (y * 5 + x) * 3;
      ok &= p[0] == (inside ? 10 * sx + sy : 0) && p[1] == (inside ? 100 + sx : 0) &&
            p[2] == (inside ? 200 + sy : 0);
    }
  }
  CHECK(ok);
  vkf_image_destroy(&out);
  CHECK_STATUS(vkf_image_center_crop(&ramp, 0, 3, &out), VKF_STATUS_INVALID_ARGUMENT, "0x3");
  vkf_image_destroy(&ramp);
}

static void test_resize_properties(void) {
  vkf_image ramp = make_ramp(), out, flat;
  CHECK_OK(vkf_image_resize(&ramp, 4, 3, VKF_IMAGE_RESAMPLE_BICUBIC, &out));
  CHECK(memcmp(out.pixels, ramp.pixels, 4 * 3 * 3) == 0); /* same size: a copy */
  vkf_image_destroy(&out);
  /* Normalised weights keep a flat image flat under every filter, both ways. */
  CHECK_OK(vkf_image_create(7, 5, &flat));
  memset(flat.pixels, 137, 7 * 5 * 3);
  for (int r = 0; r < VKF_IMAGE_RESAMPLE_COUNT; r++) {
    CHECK(vkf_image_resample_name((vkf_image_resample)r) != NULL);
    for (int big = 0; big < 2; big++) {
      uint32_t w = big ? 19 : 3, h = big ? 2 : 11;
      CHECK_OK(vkf_image_resize(&flat, w, h, (vkf_image_resample)r, &out));
      int all = 1;
      for (size_t i = 0; i < (size_t)w * h * 3; i++) all &= out.pixels[i] == 137;
      CHECK_MSG(all, "%s to %ux%u is not flat", vkf_image_resample_name((vkf_image_resample)r), w,
                h);
      vkf_image_destroy(&out);
    }
  }
  CHECK(vkf_image_resample_name(VKF_IMAGE_RESAMPLE_COUNT) == NULL);
  CHECK_STATUS(vkf_image_resize(&flat, 3, 3, (vkf_image_resample)9, &out),
               VKF_STATUS_INVALID_ARGUMENT, "resample 9");
  CHECK_STATUS(vkf_image_resize(&flat, 0, 3, VKF_IMAGE_RESAMPLE_BILINEAR, &out),
               VKF_STATUS_INVALID_ARGUMENT, "0x3");
  CHECK_STATUS(vkf_image_resize(&flat, 70000, 3, VKF_IMAGE_RESAMPLE_BILINEAR, &out),
               VKF_STATUS_INVALID_ARGUMENT, "70000x3");
  CHECK(out.pixels == NULL);
  vkf_image_destroy(&flat);
  vkf_image_destroy(&ramp);
}

static void test_preprocess_api(void) {
  vkf_image_preprocess_params vit = vkf_image_preprocess_params_vit();
  vkf_image_preprocess_params deit = vkf_image_preprocess_params_deit();
  uint32_t h, w;
  CHECK_OK(vkf_image_preprocess_output_size(&vit, 385, 256, &h, &w));
  CHECK(h == 224 && w == 224);
  CHECK_OK(vkf_image_preprocess_output_size(&deit, 100, 900, &h, &w));
  CHECK(h == 224 && w == 224);
  /* shortest_edge: long side is int(n * long / short). */
  vkf_image_preprocess_params se = {.do_resize = true, .shortest_edge = 224};
  CHECK_OK(vkf_image_preprocess_output_size(&se, 385, 256, &h, &w));
  CHECK(h == 224 && w == 336); /* 224 * 385 / 256 = 336.875 */
  CHECK_OK(vkf_image_preprocess_output_size(&se, 256, 385, &h, &w));
  CHECK(h == 336 && w == 224);
  /* A zero struct converts to float and nothing else: [3, H, W] of the raw levels. */
  vkf_image ramp = make_ramp();
  vkf_image_preprocess_params none = {0};
  float raw[3 * 3 * 4];
  CHECK_OK(vkf_image_preprocess(&ramp, &none, raw, 36));
  CHECK(raw[0] == 0.0f && raw[1 * 4 + 2] == 21.0f && raw[12 + 3] == 103.0f &&
        raw[24 + 8] == 202.0f);

  float small[10];
  CHECK_STATUS(vkf_image_preprocess(&ramp, &vit, small, 10), VKF_STATUS_INVALID_ARGUMENT,
               "[3, 224, 224]");
  vkf_image_preprocess_params bad = vit;
  bad.std[1] = 0.0;
  CHECK_STATUS(vkf_image_preprocess_output_size(&bad, 4, 3, &h, &w), VKF_STATUS_INVALID_ARGUMENT,
               "channel 1");
  bad = vit;
  bad.resample = (vkf_image_resample)42;
  CHECK_STATUS(vkf_image_preprocess_output_size(&bad, 4, 3, &h, &w), VKF_STATUS_INVALID_ARGUMENT,
               "resample 42");
  CHECK(h == 0 && w == 0);
  bad = vit;
  bad.resize_width = 0;
  CHECK_STATUS(vkf_image_preprocess_output_size(&bad, 4, 3, &h, &w), VKF_STATUS_INVALID_ARGUMENT,
               "do_resize");
  se.shortest_edge = 30000;
  CHECK_STATUS(vkf_image_preprocess_output_size(&se, 10, 100, &h, &w), VKF_STATUS_INVALID_ARGUMENT,
               "shortest_edge 30000");

  /* Batching: image b goes to out + b * 3 * H * W and equals a run on its own. */
  size_t one = (size_t)3 * 224 * 224;
  float *batch = malloc(2 * one * sizeof *batch), *single = malloc(one * sizeof *single);
  vkf_image cat;
  CHECK_OK(vkf_image_load("assets/images/cat.jpg", &cat));
  CHECK_OK(vkf_image_preprocess(&ramp, &vit, batch, one));
  CHECK_OK(vkf_image_preprocess(&cat, &vit, batch + one, one));
  CHECK_OK(vkf_image_preprocess(&cat, &vit, single, one));
  CHECK(memcmp(batch + one, single, one * sizeof *single) == 0);
  /* ViT normalisation maps [0, 255] onto [-1, 1]. */
  float lo = 1e9f, hi = -1e9f;
  for (size_t i = 0; i < 2 * one; i++)
    lo = batch[i] < lo ? batch[i] : lo, hi = batch[i] > hi ? batch[i] : hi;
  CHECK(lo >= -1.0f && hi <= 1.0f && hi > lo);
  free(batch);
  free(single);
  vkf_image_destroy(&cat);
  vkf_image_destroy(&ramp);
}

int main(void) {
  union {
    uint32_t u;
    uint8_t b[4];
  } endian = {1};
  CHECK_MSG(endian.b[0] == 1, "the golden .f32 files are little-endian");
  test_goldens();
  test_bad_files();
  test_jpeg_not_stb();
  test_demo_images();
  test_center_crop();
  test_resize_properties();
  test_preprocess_api();
  return test_report();
}
