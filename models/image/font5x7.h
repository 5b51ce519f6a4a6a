/* The figure canvas's embedded 5x7 bitmap font (font5x7.c). */
#ifndef VKF_MODELS_IMAGE_FONT5X7_H
#define VKF_MODELS_IMAGE_FONT5X7_H

#include <stdint.h>

/* Glyph cell of the font at scale 1: 5 x 7 pixels drawn, 6 x 8 advanced. */
enum { VKF_FONT_W = 5, VKF_FONT_H = 7, VKF_FONT_ADVANCE = 6, VKF_FONT_LINE = 8 };
/* The 5 columns of a printable ASCII character (bit 0 the top row); '?' for anything else. */
const uint8_t *vkf_font_glyph(unsigned char ch);

#endif
