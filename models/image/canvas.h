/* A small RGB canvas for figures (attention heatmaps): filled rectangles, text in an embedded 5x7
 * bitmap font (ASCII; other bytes drawn as '?'), a perceptually uniform colour map, and PNG
 * output through stb_image_write. No dependency beyond stb. */
#ifndef VKF_MODELS_IMAGE_CANVAS_H
#define VKF_MODELS_IMAGE_CANVAS_H

#include <stdint.h>

#include "graph/base/status.h"
#include "models/image/font5x7.h"

typedef struct vkf_canvas {
  uint32_t width, height;
  uint8_t *rgb; /* width * height * 3, row-major */
} vkf_canvas;

typedef struct vkf_rgb {
  uint8_t r, g, b;
} vkf_rgb;

/* Sides up to VKF_CANVAS_MAX_SIDE; filled with `background`. *out is zeroed first. */
enum { VKF_CANVAS_MAX_SIDE = 16384 };
vkf_status vkf_canvas_create(uint32_t width, uint32_t height, vkf_rgb background, vkf_canvas *out);
void vkf_canvas_destroy(vkf_canvas *canvas);

/* Pixels outside the canvas are clipped (negative origins included). */
void vkf_canvas_fill(vkf_canvas *c, int64_t x, int64_t y, int64_t w, int64_t h, vkf_rgb colour);
/* Blends `colour` over one pixel: alpha 0 keeps the pixel, 1 replaces it. */
void vkf_canvas_blend(vkf_canvas *c, int64_t x, int64_t y, vkf_rgb colour, float alpha);

/* Width in pixels of `text` at `scale` (advance per byte, minus the trailing gap). */
int64_t vkf_canvas_text_width(const char *text, int scale);
/* Draws `text` with its top-left corner at (x, y); `vertical` rotates it 90° counter-clockwise,
 * reading bottom to top with (x, y) the bottom-left corner. */
void vkf_canvas_text(vkf_canvas *c, int64_t x, int64_t y, const char *text, int scale,
                     vkf_rgb colour, int vertical);

/* Viridis at t in [0, 1] (clamped; NaN is 0). */
vkf_rgb vkf_colormap_viridis(float t);

/* Writes the canvas as an 8-bit RGB PNG. Errors name the path (IO with errno's reason). */
vkf_status vkf_canvas_write_png(const vkf_canvas *c, const char *path);

#endif
