/* Heatmap figures and attention rollout for `vkf attn` (attn_figure.h). */
#include "tools/vkf/attn_figure.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/image/canvas.h"

enum {
  FONT_SCALE = 2,                         /* 10 x 14 pixel glyphs */
  CHAR_W = VKF_FONT_ADVANCE * FONT_SCALE, /* 12 */
  LINE_H = VKF_FONT_LINE * FONT_SCALE,    /* 16 */
  LABEL_CHARS = 12,                       /* longer token labels end in '~' */
  PAD = 12,
  BAR_W = 18,
  TICKS = 5,
};

static const vkf_rgb k_white = {255, 255, 255}, k_ink = {20, 20, 20}, k_grey = {110, 110, 110};

static float max_of(const float *v, size_t n) {
  float m = 0;
  for (size_t i = 0; i < n; i++)
    if (v[i] > m) m = v[i];
  return m > 0 ? m : 1;
}

/* A token label that fits LABEL_CHARS printable ASCII characters; bytes outside ASCII become '?'
 * (one per UTF-8 character, continuation bytes skipped). */
static void label_of(const char *token, char *out) {
  size_t n = 0;
  for (const unsigned char *p = (const unsigned char *)token; *p && n < LABEL_CHARS; p++) {
    if ((*p & 0xC0) == 0x80) continue;
    out[n++] = *p >= 0x20 && *p <= 0x7E ? (char)*p : '?';
  }
  if (n == LABEL_CHARS && strlen(token) > LABEL_CHARS) out[n - 1] = '~';
  out[n] = 0;
}

/* A vertical colour bar from vmax (top) to 0 (bottom) at (x, y), h tall, with TICKS scale values
 * to its right. */
static void colour_bar(vkf_canvas *c, int64_t x, int64_t y, int64_t h, float vmax) {
  for (int64_t j = 0; j < h; j++)
    vkf_canvas_fill(c, x, y + j, BAR_W, 1, vkf_colormap_viridis(1.0f - (float)j / (float)(h - 1)));
  for (int k = 0; k < TICKS; k++) {
    float f = (float)k / (TICKS - 1);
    int64_t ty = y + (int64_t)lrintf((1.0f - f) * (float)(h - 1));
    char v[32];
    snprintf(v, sizeof v, "%.3g", (double)(f * vmax));
    vkf_canvas_fill(c, x + BAR_W, ty, 3, 1, k_ink);
    vkf_canvas_text(c, x + BAR_W + 10, ty - LINE_H / 2 + 1, v, FONT_SCALE, k_ink, 0);
  }
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

/* Labels of n tokens cut to LABEL_CHARS; the widest one's width at scale ls into *width. */
static vkf_status labels_of(const char *const *labels, int64_t n, int ls,
                            char (**out)[LABEL_CHARS + 1], int64_t *width) {
  *out = malloc((size_t)n * sizeof **out);
  if (!*out) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%lld labels", (long long)n);
  *width = 0;
  for (int64_t i = 0; i < n; i++) {
    label_of(labels[i], (*out)[i]);
    int64_t w = vkf_canvas_text_width((*out)[i], ls);
    if (w > *width) *width = w;
  }
  return VKF_OK;
}

vkf_status vkf_attn_matrix_figure(const float *m, int64_t rows, int64_t cols,
                                  const char *const *row_labels, const char *const *col_labels,
                                  const char *title, const char *row_axis, const char *col_axis,
                                  const char *path) {
  if (rows < 1 || rows > 4096 || cols < 1 || cols > 4096)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: a %lld x %lld map to draw (1..4096 each way)", path,
                           (long long)rows, (long long)cols);
  /* Long sequences get smaller cells; labels then drop to the scale-1 font and, when even that
   * is taller than a cell, label every stride-th token so they never overlap. */
  int64_t longest = rows > cols ? rows : cols;
  int64_t cell = clamp64(520 / longest, 4, 40);
  int ls = cell >= VKF_FONT_LINE * FONT_SCALE ? FONT_SCALE : 1;
  int64_t stride = (VKF_FONT_LINE * ls + cell - 1) / cell;
  char(*rlab)[LABEL_CHARS + 1] = NULL, (*clab)[LABEL_CHARS + 1] = NULL;
  int64_t rw = 0, cw = 0;
  vkf_status st = labels_of(row_labels, rows, ls, &rlab, &rw);
  if (!st) st = labels_of(col_labels, cols, ls, &clab, &cw);
  int64_t w_side = cell * cols, h_side = cell * rows;
  int64_t left = PAD + LINE_H + 6 + rw + 8, top = PAD + LINE_H + PAD;
  int64_t width = left + w_side + 16 + BAR_W + 10 + 6 * CHAR_W + PAD;
  int64_t title_w = PAD + vkf_canvas_text_width(title, FONT_SCALE) + PAD;
  if (width < title_w) width = title_w;
  /* The row axis' name is written upwards beside the map and the colour bar keeps room for its
   * scale values: a map of few rows leaves space under it for both. */
  int64_t axis_h = vkf_canvas_text_width(row_axis, FONT_SCALE);
  int64_t bar_h = h_side > TICKS * LINE_H ? h_side : TICKS * LINE_H;
  int64_t body = bar_h > axis_h ? bar_h : axis_h;
  int64_t height = top + body + 8 + cw + 8 + LINE_H + PAD;
  vkf_canvas c = {0};
  if (!st) st = vkf_canvas_create((uint32_t)width, (uint32_t)height, k_white, &c);
  if (st) {
    free(rlab), free(clab);
    return vkf_status_annotate(st, "%s: ", path);
  }
  float vmax = max_of(m, (size_t)(rows * cols));
  vkf_canvas_text(&c, PAD, PAD, title, FONT_SCALE, k_ink, 0);
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++)
      vkf_canvas_fill(&c, left + j * cell, top + i * cell, cell, cell,
                      vkf_colormap_viridis(m[i * cols + j] / vmax));
  for (int64_t i = 0; i < rows; i += stride) {
    int64_t w = vkf_canvas_text_width(rlab[i], ls);
    int64_t mid = top + i * cell + cell / 2;
    vkf_canvas_text(&c, left - 8 - w, mid - (VKF_FONT_H * ls) / 2, rlab[i], ls, k_ink, 0);
  }
  for (int64_t j = 0; j < cols; j += stride) {
    int64_t w = vkf_canvas_text_width(clab[j], ls);
    int64_t cx = left + j * cell + cell / 2 - (VKF_FONT_H * ls) / 2;
    vkf_canvas_text(&c, cx, top + h_side + 8 + w, clab[j], ls, k_ink, 1);
  }
  vkf_canvas_text(&c, left + w_side / 2 - vkf_canvas_text_width(col_axis, FONT_SCALE) / 2,
                  top + h_side + 8 + cw + 8, col_axis, FONT_SCALE, k_grey, 0);
  vkf_canvas_text(&c, PAD, top + body / 2 + axis_h / 2, row_axis, FONT_SCALE, k_grey, 1);
  colour_bar(&c, left + w_side + 16, top, bar_h, vmax);
  st = vkf_canvas_write_png(&c, path);
  vkf_canvas_destroy(&c);
  free(rlab), free(clab);
  return st;
}

vkf_status vkf_attn_text_figure(const float *m, int64_t t, const char *const *labels,
                                const char *title, const char *path) {
  return vkf_attn_matrix_figure(m, t, t, labels, labels, title, "query", "key", path);
}

vkf_status vkf_attn_image_figure(const uint8_t *rgb, int64_t side, const float *const *maps,
                                 const char *const *titles, int count, int64_t grid,
                                 const char *title, const char *path) {
  if (side < 1 || side > 4096 || grid < 1 || grid > side || count < 1 || count > 256)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: %d maps of %lld x %lld patches over a %lld-pixel image", path,
                           count, (long long)grid, (long long)grid, (long long)side);
  int64_t zoom = side < 192 ? (192 + side - 1) / side : 1; /* small inputs shown enlarged */
  int64_t p = side * zoom;
  int cols = count < 4 ? count : 4, rows = (count + cols - 1) / cols;
  int64_t cell_w = p + PAD, cell_h = LINE_H + 4 + p + PAD;
  int64_t top = PAD + LINE_H + PAD;
  int64_t width = PAD + cols * cell_w + 8 + BAR_W + 10 + 6 * CHAR_W + PAD;
  int64_t title_w = PAD + vkf_canvas_text_width(title, FONT_SCALE) + PAD;
  if (width < title_w) width = title_w;
  int64_t height = top + rows * cell_h;
  vkf_canvas c;
  VKF_RETURN_IF_ERROR(vkf_canvas_create((uint32_t)width, (uint32_t)height, k_white, &c));
  float vmax = 0;
  for (int k = 0; k < count; k++) {
    float m = max_of(maps[k], (size_t)(grid * grid));
    if (m > vmax) vmax = m;
  }
  vkf_canvas_text(&c, PAD, PAD, title, FONT_SCALE, k_ink, 0);
  for (int k = 0; k < count; k++) {
    int64_t x0 = PAD + (k % cols) * cell_w, y0 = top + (k / cols) * cell_h;
    vkf_canvas_text(&c, x0, y0, titles[k], FONT_SCALE, k_ink, 0);
    y0 += LINE_H + 4;
    for (int64_t y = 0; y < p; y++)
      for (int64_t x = 0; x < p; x++) {
        const uint8_t *px = rgb + 3 * ((y / zoom) * side + x / zoom);
        float v = maps[k][(y * grid / p) * grid + x * grid / p];
        vkf_canvas_fill(&c, x0 + x, y0 + y, 1, 1, (vkf_rgb){px[0], px[1], px[2]});
        vkf_canvas_blend(&c, x0 + x, y0 + y, vkf_colormap_viridis(v / vmax), 0.6f);
      }
  }
  colour_bar(&c, PAD + cols * cell_w + 8, top + LINE_H + 4, p, vmax);
  vkf_status st = vkf_canvas_write_png(&c, path);
  vkf_canvas_destroy(&c);
  if (st) return st;
  return VKF_OK;
}

vkf_status vkf_attn_rollout(const float *att, int64_t layers, int64_t heads, int64_t n,
                            int64_t special, float *out) {
  if (layers < 1 || heads < 1 || n < 2 || special < 1 || special >= n || n > 65536)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "rollout of %lld layers, %lld heads, %lld tokens", (long long)layers,
                           (long long)heads, (long long)n);
  /* Only the class token's row of R = A'_L ... A'_1 is wanted: r = e_0ᵀ A'_L ... A'_1, a vector
   * times each layer's matrix from the last layer down (n² per layer instead of n³). */
  size_t nn = (size_t)n;
  double *r = calloc(nn, sizeof *r), *next = calloc(nn, sizeof *next);
  double *a = malloc(nn * nn * sizeof *a);
  if (!r || !next || !a) {
    free(r), free(next), free(a);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "rollout of %lld tokens", (long long)n);
  }
  r[0] = 1;
  for (int64_t l = layers - 1; l >= 0; l--) {
    memset(a, 0, nn * nn * sizeof *a);
    for (int64_t h = 0; h < heads; h++) {
      const float *m = att + ((size_t)l * (size_t)heads + (size_t)h) * nn * nn;
      for (size_t i = 0; i < nn * nn; i++) a[i] += m[i] / (double)heads;
    }
    for (size_t i = 0; i < nn; i++) {
      a[i * nn + i] += 1.0;
      double s = 0;
      for (size_t j = 0; j < nn; j++) s += a[i * nn + j];
      for (size_t j = 0; j < nn; j++) a[i * nn + j] /= s;
    }
    memset(next, 0, nn * sizeof *next);
    for (size_t i = 0; i < nn; i++)
      for (size_t j = 0; j < nn; j++) next[j] += r[i] * a[i * nn + j];
    double *tmp = r;
    r = next, next = tmp;
  }
  for (int64_t j = special; j < n; j++) out[j - special] = (float)r[j];
  free(r), free(next), free(a);
  return VKF_OK;
}
