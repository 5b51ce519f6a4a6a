/* The figure canvas: rectangles, bitmap text, viridis and PNG output (canvas.h). */
#include "models/image/canvas.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO /* the file is written here so IO errors carry errno */
#include <stb/stb_image_write.h>

vkf_status vkf_canvas_create(uint32_t width, uint32_t height, vkf_rgb bg, vkf_canvas *out) {
  memset(out, 0, sizeof *out);
  if (!width || !height || width > VKF_CANVAS_MAX_SIDE || height > VKF_CANVAS_MAX_SIDE)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "canvas of %ux%u pixels (sides 1..%d)",
                           width, height, VKF_CANVAS_MAX_SIDE);
  size_t n = (size_t)width * height;
  out->rgb = malloc(n * 3);
  if (!out->rgb)
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "canvas of %ux%u pixels", width, height);
  out->width = width;
  out->height = height;
  for (size_t i = 0; i < n; i++) {
    out->rgb[3 * i] = bg.r;
    out->rgb[3 * i + 1] = bg.g;
    out->rgb[3 * i + 2] = bg.b;
  }
  return VKF_OK;
}

void vkf_canvas_destroy(vkf_canvas *c) {
  if (!c) return;
  free(c->rgb);
  memset(c, 0, sizeof *c);
}

static int inside(const vkf_canvas *c, int64_t x, int64_t y) {
  return x >= 0 && y >= 0 && x < (int64_t)c->width && y < (int64_t)c->height;
}

void vkf_canvas_fill(vkf_canvas *c, int64_t x, int64_t y, int64_t w, int64_t h, vkf_rgb colour) {
  for (int64_t j = y; j < y + h; j++)
    for (int64_t i = x; i < x + w; i++) {
      if (!inside(c, i, j)) continue;
      uint8_t *p = c->rgb + 3 * ((size_t)j * c->width + (size_t)i);
      p[0] = colour.r, p[1] = colour.g, p[2] = colour.b;
    }
}

void vkf_canvas_blend(vkf_canvas *c, int64_t x, int64_t y, vkf_rgb colour, float alpha) {
  if (!inside(c, x, y)) return;
  uint8_t *p = c->rgb + 3 * ((size_t)y * c->width + (size_t)x);
  const uint8_t q[3] = {colour.r, colour.g, colour.b};
  for (int k = 0; k < 3; k++) p[k] = (uint8_t)lrintf((float)p[k] + alpha * ((float)q[k] - p[k]));
}

int64_t vkf_canvas_text_width(const char *text, int scale) {
  size_t n = strlen(text);
  return n ? ((int64_t)n * VKF_FONT_ADVANCE - 1) * scale : 0;
}

void vkf_canvas_text(vkf_canvas *c, int64_t x, int64_t y, const char *text, int scale,
                     vkf_rgb colour, int vertical) {
  for (size_t k = 0; text[k]; k++) {
    const uint8_t *g = vkf_font_glyph((unsigned char)text[k]);
    int64_t along = (int64_t)k * VKF_FONT_ADVANCE * scale;
    for (int col = 0; col < VKF_FONT_W; col++)
      for (int row = 0; row < VKF_FONT_H; row++) {
        if (!(g[col] >> row & 1)) continue;
        /* Horizontal: column right, row down. Vertical (rotated counter-clockwise): column up,
         * row right. */
        int64_t px = vertical ? x + (int64_t)row * scale : x + along + (int64_t)col * scale;
        int64_t py = vertical ? y - along - (int64_t)(col + 1) * scale : y + (int64_t)row * scale;
        vkf_canvas_fill(c, px, py, scale, scale, colour);
      }
  }
}

/* Viridis as a polynomial fit of matplotlib's table (max error under 1 %, below one 8-bit step in
 * most of the range): 6th degree per channel, evaluated by Horner's rule. */
vkf_rgb vkf_colormap_viridis(float t) {
  static const double c[7][3] = {
      {0.2777273272234177, 0.005407344544966578, 0.3340998053353061},
      {0.1050930431085774, 1.404613529898575, 1.384590162594685},
      {-0.3308618287255563, 0.214847559468213, 0.09509516302823659},
      {-4.634230498983486, -5.799100973351585, -19.33244095627987},
      {6.228269936347081, 14.17993336680509, 56.69055260068105},
      {4.776384997670288, -13.74514537774601, -65.35303263337234},
      {-5.435455855934631, 4.645852612178535, 26.3124352495832},
  };
  double x = t > 0 ? (t < 1 ? t : 1) : 0; /* NaN fails t > 0: 0 */
  uint8_t out[3];
  for (int k = 0; k < 3; k++) {
    double v = c[6][k];
    for (int d = 5; d >= 0; d--) v = v * x + c[d][k];
    v = v < 0 ? 0 : v > 1 ? 1 : v;
    out[k] = (uint8_t)lrint(v * 255.0);
  }
  return (vkf_rgb){out[0], out[1], out[2]};
}

typedef struct png_file {
  FILE *f;
  int failed;
} png_file;

static void write_chunk(void *user, void *data, int size) {
  png_file *p = user;
  if (!p->failed && fwrite(data, 1, (size_t)size, p->f) != (size_t)size) p->failed = 1;
}

vkf_status vkf_canvas_write_png(const vkf_canvas *c, const char *path) {
  png_file p = {fopen(path, "wb"), 0};
  if (!p.f) return vkf_status_make(VKF_STATUS_IO, "%s: %s", path, strerror(errno));
  int ok = stbi_write_png_to_func(write_chunk, &p, (int)c->width, (int)c->height, 3, c->rgb,
                                  (int)c->width * 3);
  int err = p.failed ? errno : 0;
  if (fclose(p.f) != 0 && !err) err = errno;
  if (!ok) return vkf_status_make(VKF_STATUS_IO, "%s: PNG encoding failed", path);
  if (err || p.failed)
    return vkf_status_make(VKF_STATUS_IO, "%s: %s", path, err ? strerror(err) : "write failed");
  return VKF_OK;
}
