/* vkf_image_resize: Pillow's Image.resize reimplemented from its algorithm (libImaging/Resample.c
 * for the convolution filters, the affine scale path for NEAREST) so that preprocessing matches
 * Hugging Face image processors, which resize through Pillow, bit for bit. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "models/image/image_resample.h"

/* Pillow's fixed point: 32 bits minus 8 for the pixel value minus 2 of headroom for the
 * negative lobes and for weights a little above 1. */
#define PRECISION_BITS (32 - 8 - 2)

static const double pi = 3.14159265358979323846;

typedef struct filter {
  double (*weight)(double x);
  double support; /* half-width in source pixels at scale 1 */
} filter;

static double box_weight(double x) {
  return x > -0.5 && x <= 0.5 ? 1.0 : 0.0;
}

static double bilinear_weight(double x) {
  x = fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

/* Keys' cubic with a = -0.5 (Pillow's choice; OpenCV uses -0.75, so it differs there). */
static double bicubic_weight(double x) {
  const double a = -0.5;
  x = fabs(x);
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}

static double hamming_weight(double x) {
  x = fabs(x);
  if (x == 0.0) return 1.0;
  if (x >= 1.0) return 0.0;
  x = x * pi;
  /* Pillow writes the window's constants as float literals; keep them so weights agree. */
  return sin(x) / x * (0.54f + 0.46f * cos(x));
}

static double sinc(double x) {
  if (x == 0.0) return 1.0;
  x = x * pi;
  return sin(x) / x;
}

static double lanczos_weight(double x) {
  return -3.0 <= x && x < 3.0 ? sinc(x) * sinc(x / 3) : 0.0;
}

/* Magic Kernel Sharp 2013 and 2021 (Costella), added in Pillow 13. */
static double mks2013_weight(double x) {
  x = fabs(x);
  if (x < 0.5) return 17.0 / 16.0 - 7.0 / 4.0 * x * x;
  if (x < 1.5) return (1.0 - x) * (7.0 / 4.0 - x);
  if (x < 2.5) return -1.0 / 8.0 * (x - 5.0 / 2.0) * (x - 5.0 / 2.0);
  return 0.0;
}

static double mks2021_weight(double x) {
  x = fabs(x);
  if (x < 0.5) return 577.0 / 576.0 - 239.0 / 144.0 * x * x;
  if (x < 1.5) return 35.0 / 36.0 * (x - 1.0) * (x - 239.0 / 140.0);
  if (x < 2.5) return 1.0 / 6.0 * (x - 2.0) * (65.0 / 24.0 - x);
  if (x < 3.5) return 1.0 / 36.0 * (x - 3.0) * (x - 15.0 / 4.0);
  if (x < 4.5) return -1.0 / 288.0 * (x - 9.0 / 2.0) * (x - 9.0 / 2.0);
  return 0.0;
}

static const filter filters[VKF_IMAGE_RESAMPLE_COUNT] = {
    [VKF_IMAGE_RESAMPLE_NEAREST] = {NULL, 0.0},
    [VKF_IMAGE_RESAMPLE_LANCZOS] = {lanczos_weight, 3.0},
    [VKF_IMAGE_RESAMPLE_BILINEAR] = {bilinear_weight, 1.0},
    [VKF_IMAGE_RESAMPLE_BICUBIC] = {bicubic_weight, 2.0},
    [VKF_IMAGE_RESAMPLE_BOX] = {box_weight, 0.5},
    [VKF_IMAGE_RESAMPLE_HAMMING] = {hamming_weight, 1.0},
    [VKF_IMAGE_RESAMPLE_MKS2013] = {mks2013_weight, 2.5},
    [VKF_IMAGE_RESAMPLE_MKS2021] = {mks2021_weight, 4.5},
};

const char *vkf_image_resample_name(vkf_image_resample resample) {
  static const char *const names[VKF_IMAGE_RESAMPLE_COUNT] = {
      "nearest", "lanczos", "bilinear", "bicubic", "box", "hamming", "mks2013", "mks2021",
  };
  return (unsigned)resample < VKF_IMAGE_RESAMPLE_COUNT ? names[resample] : NULL;
}

/* The taps of one pass: for output index i, `count[i]` weights starting at source index
 * `first[i]`, stored at weights[i * ksize]. */
typedef struct taps {
  int ksize;
  int *first;       /* [out_size] */
  int *count;       /* [out_size] */
  int32_t *weights; /* [out_size, ksize], fixed point with PRECISION_BITS fraction bits */
} taps;

static void taps_free(taps *t) {
  free(t->first);
  free(t->count);
  free(t->weights);
  memset(t, 0, sizeof *t);
}

static vkf_status taps_make(uint32_t in_size, uint32_t out_size, const filter *f, taps *out) {
  memset(out, 0, sizeof *out);
  /* When shrinking, the filter is stretched by the scale so every source pixel contributes
   * (antialiasing); when enlarging it keeps its natural width. */
  double scale = (double)in_size / out_size;
  double filterscale = scale < 1.0 ? 1.0 : scale;
  double support = f->support * filterscale;
  out->ksize = (int)ceil(support) * 2 + 1;
  out->first = malloc(out_size * sizeof(int));
  out->count = malloc(out_size * sizeof(int));
  out->weights = calloc((size_t)out_size * (size_t)out->ksize, sizeof(int32_t));
  double *k = malloc((size_t)out->ksize * sizeof(double));
  if (!out->first || !out->count || !out->weights || !k) {
    free(k);
    taps_free(out);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "resize %u -> %u: out of memory", in_size,
                           out_size);
  }
  for (uint32_t i = 0; i < out_size; i++) {
    double center = (i + 0.5) * scale;
    double inv = 1.0 / filterscale;
    /* Pillow rounds the window ends by truncating x + 0.5 toward zero, then clamps. */
    int lo = (int)(center - support + 0.5);
    if (lo < 0) lo = 0;
    int hi = (int)(center + support + 0.5);
    if (hi > (int)in_size) hi = (int)in_size;
    int n = hi - lo;
    double sum = 0.0;
    for (int j = 0; j < n; j++) {
      k[j] = f->weight((j + lo - center + 0.5) * inv);
      sum += k[j];
    }
    for (int j = 0; j < n; j++) {
      double w = sum != 0.0 ? k[j] / sum : k[j];
      /* Round half away from zero into fixed point, as Pillow's normalize_coeffs_8bpc. */
      out->weights[(size_t)i * out->ksize + j] =
          (int32_t)(w < 0 ? -0.5 + w * (1 << PRECISION_BITS) : 0.5 + w * (1 << PRECISION_BITS));
    }
    out->first[i] = lo;
    out->count[i] = n;
  }
  free(k);
  return VKF_OK;
}

/* Fixed point back to uint8: floor, then clip (Pillow's clip8 table does the same). */
static inline uint8_t clip8(int64_t acc) {
  if (acc < 0) return 0;
  acc >>= PRECISION_BITS;
  return acc > 255 ? 255 : (uint8_t)acc;
}

/* Rows [row0, row0 + rows) of `src` (width src_w) resampled along x into `dst` (width dst_w). */
static void pass_horizontal(const uint8_t *src, uint32_t src_w, uint32_t row0, uint32_t rows,
                            const taps *t, uint8_t *dst, uint32_t dst_w) {
  for (uint32_t y = 0; y < rows; y++) {
    const uint8_t *in = src + (size_t)(row0 + y) * src_w * 3; /* [src_w, 3] */
    uint8_t *out = dst + (size_t)y * dst_w * 3;               /* [dst_w, 3] */
    for (uint32_t x = 0; x < dst_w; x++) {
      const int32_t *w = t->weights + (size_t)x * t->ksize;
      const uint8_t *p = in + (size_t)t->first[x] * 3;
      int64_t r = 1 << (PRECISION_BITS - 1), g = r, b = r; /* + 0.5 so the floor rounds */
      for (int j = 0; j < t->count[x]; j++) {
        r += (int64_t)p[3 * j + 0] * w[j];
        g += (int64_t)p[3 * j + 1] * w[j];
        b += (int64_t)p[3 * j + 2] * w[j];
      }
      out[3 * x + 0] = clip8(r);
      out[3 * x + 1] = clip8(g);
      out[3 * x + 2] = clip8(b);
    }
  }
}

/* `src` (width w) resampled along y into dst_h rows; tap rows are relative to `src`'s row 0. */
static void pass_vertical(const uint8_t *src, uint32_t w, const taps *t, int row_shift,
                          uint8_t *dst, uint32_t dst_h) {
  size_t stride = (size_t)w * 3;
  for (uint32_t y = 0; y < dst_h; y++) {
    const int32_t *wt = t->weights + (size_t)y * t->ksize;
    const uint8_t *col0 = src + (size_t)(t->first[y] - row_shift) * stride;
    uint8_t *out = dst + (size_t)y * stride;
    for (size_t x = 0; x < stride; x++) {
      int64_t acc = 1 << (PRECISION_BITS - 1);
      for (int j = 0; j < t->count[y]; j++) acc += (int64_t)col0[(size_t)j * stride + x] * wt[j];
      out[x] = clip8(acc);
    }
  }
}

/* Pillow's NEAREST goes through its affine scale path: the source coordinate of output pixel i
 * is accumulated as scale/2 + i * scale by repeated addition, then truncated; a coordinate that
 * rounding pushes past the edge leaves the pixel black (`out` is zero-filled). */
static void resize_nearest(const vkf_image *in, vkf_image *out, int *xmap) {
  double sx = (double)in->width / out->width, sy = (double)in->height / out->height;
  double xo = sx * 0.5;
  for (uint32_t x = 0; x < out->width; x++, xo += sx) {
    int xi = (int)xo;
    xmap[x] = xi < (int)in->width ? xi : -1;
  }
  double yo = sy * 0.5;
  for (uint32_t y = 0; y < out->height; y++, yo += sy) {
    int yi = (int)yo;
    if (yi >= (int)in->height) continue;
    const uint8_t *row = in->pixels + (size_t)yi * in->width * 3;
    uint8_t *dst = out->pixels + (size_t)y * out->width * 3;
    for (uint32_t x = 0; x < out->width; x++) {
      if (xmap[x] >= 0) memcpy(dst + 3 * x, row + 3 * (size_t)xmap[x], 3);
    }
  }
}

vkf_status vkf_image_resize(const vkf_image *image, uint32_t width, uint32_t height,
                            vkf_image_resample resample, vkf_image *out_image) {
  memset(out_image, 0, sizeof *out_image);
  if ((unsigned)resample >= VKF_IMAGE_RESAMPLE_COUNT) {
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "resize: resample %d is not a Pillow filter (0..7)", (int)resample);
  }
  VKF_RETURN_IF_ERROR(vkf_image_create(width, height, out_image));
  if (width == image->width && height == image->height) {
    memcpy(out_image->pixels, image->pixels, (size_t)width * height * 3);
    return VKF_OK;
  }
  if (resample == VKF_IMAGE_RESAMPLE_NEAREST) {
    int *xmap = malloc(width * sizeof(int));
    if (!xmap) {
      vkf_image_destroy(out_image);
      return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "resize to %ux%u: out of memory", width,
                             height);
    }
    resize_nearest(image, out_image, xmap);
    free(xmap);
    return VKF_OK;
  }

  const filter *f = &filters[resample];
  bool need_h = width != image->width, need_v = height != image->height;
  /* Pillow 13 (PR #9549) runs the vertical pass first when the height shrinks by more than twice
   * as many pixels as the width; before 13 it always went horizontal first. The order changes
   * the intermediate rounding, so we follow the Pillow that generated our goldens. */
  int64_t dh = (int64_t)image->height - height, dw = (int64_t)image->width - width;
  bool horizontal_first = !(dh > 0 && dh > dw * 2);
  taps th = {0}, tv = {0};
  uint8_t *tmp = NULL;
  vkf_status status = VKF_OK;
  if (need_h) status = taps_make(image->width, width, f, &th);
  if (status == VKF_OK && need_v) status = taps_make(image->height, height, f, &tv);
  if (status != VKF_OK) goto done;
  if (need_h && need_v) {
    /* Horizontal first reads only the source rows the vertical taps reach. */
    size_t tmp_size =
        horizontal_first
            ? (size_t)(tv.first[height - 1] + tv.count[height - 1] - tv.first[0]) * width * 3
            : (size_t)image->width * height * 3;
    tmp = malloc(tmp_size);
    if (!tmp) {
      status = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "resize to %ux%u: out of memory", width,
                               height);
      goto done;
    }
  }
  if (need_h && need_v && horizontal_first) {
    uint32_t row0 = (uint32_t)tv.first[0];
    uint32_t rows = (uint32_t)(tv.first[height - 1] + tv.count[height - 1]) - row0;
    pass_horizontal(image->pixels, image->width, row0, rows, &th, tmp, width);
    pass_vertical(tmp, width, &tv, (int)row0, out_image->pixels, height);
  } else if (need_h && need_v) {
    pass_vertical(image->pixels, image->width, &tv, 0, tmp, height);
    pass_horizontal(tmp, image->width, 0, height, &th, out_image->pixels, width);
  } else if (need_h) {
    pass_horizontal(image->pixels, image->width, 0, height, &th, out_image->pixels, width);
  } else {
    pass_vertical(image->pixels, width, &tv, 0, out_image->pixels, height);
  }

done:
  free(tmp);
  taps_free(&th);
  taps_free(&tv);
  if (status != VKF_OK) vkf_image_destroy(out_image);
  return status;
}
