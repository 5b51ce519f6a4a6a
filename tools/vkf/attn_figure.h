/* The figures of `vkf attn`: a token x token heatmap with the tokens as axis labels, panels of
 * class-token attention over an image's patch grid overlaid on the image, each with a colour bar
 * and its scale values; and attention rollout (Abnar & Zuidema 2020). PNG through
 * models/image/canvas.h. */
#ifndef VKF_TOOLS_ATTN_FIGURE_H
#define VKF_TOOLS_ATTN_FIGURE_H

#include <stdint.h>

#include "graph/base/status.h"

/* m [rows, cols] (rows: queries, columns: keys) with row_labels[rows] down the left side and
 * col_labels[cols] along the bottom, the axes named row_axis and col_axis, `title` above. */
vkf_status vkf_attn_matrix_figure(const float *m, int64_t rows, int64_t cols,
                                  const char *const *row_labels, const char *const *col_labels,
                                  const char *title, const char *row_axis, const char *col_axis,
                                  const char *path);

/* m [t, t] (rows: queries, columns: keys) with labels[t] on both axes, `title` above. */
vkf_status vkf_attn_text_figure(const float *m, int64_t t, const char *const *labels,
                                const char *title, const char *path);

/* `count` maps of grid x grid patches (maps[i], row-major) each blended over the image (rgb,
 * side x side, 8-bit) in its own panel titled titles[i]; one colour scale for all, from 0 to the
 * largest value. */
vkf_status vkf_attn_image_figure(const uint8_t *rgb, int64_t side, const float *const *maps,
                                 const char *const *titles, int count, int64_t grid,
                                 const char *title, const char *path);

/* Attention rollout: att [layers, heads, n, n] (each row a distribution); per layer the heads'
 * mean plus the identity with its rows renormalised, multiplied through the layers; out [n -
 * special] is the class token's row over the tokens after the `special` leading ones. */
vkf_status vkf_attn_rollout(const float *att, int64_t layers, int64_t heads, int64_t n,
                            int64_t special, float *out);

#endif
