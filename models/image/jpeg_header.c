/* Pillow's JPEG header walk (JpegImagePlugin.JpegImageFile._open, Pillow 13), byte for byte:
 * Pillow reads the markers up to the first SOS in Python before libjpeg sees the file, and
 * refuses some files that libjpeg alone would decode (an unknown marker such as FF 01, a short
 * JFIF or Adobe segment, 2 components). The mode it picks from the last SOF decides libjpeg's
 * output colour space. */
#include "models/image/jpeg_header.h"

#include <stdio.h>
#include <string.h>

typedef struct walker {
  const uint8_t *data;
  size_t size;
  size_t pos;
  char *why;
  size_t why_size;
} walker;

static bool fail(walker *w, const char *what, unsigned marker) {
  snprintf(w->why, w->why_size, "%s (marker FF %02X before byte %zu)", what, marker & 0xFF, w->pos);
  return false;
}

/* n = i16(fp.read(2)) - 2; s = _safe_read(fp, n): a short length is struct.error, a payload past
 * the end "Truncated File Read"; a length under 2 reads nothing. */
static bool read_segment(walker *w, unsigned marker, const uint8_t **out, size_t *out_len) {
  if (w->size - w->pos < 2) return fail(w, "segment length past the end of the file", marker);
  long n = (long)(w->data[w->pos] << 8 | w->data[w->pos + 1]) - 2;
  w->pos += 2;
  *out = w->data + w->pos;
  *out_len = 0;
  if (n <= 0) return true;
  if ((size_t)n > w->size - w->pos) return fail(w, "segment runs past the end of the file", marker);
  *out_len = (size_t)n;
  w->pos += (size_t)n;
  return true;
}

static bool starts_with(const uint8_t *s, size_t len, const char *prefix) {
  size_t n = strlen(prefix);
  return len >= n && memcmp(s, prefix, n) == 0;
}

bool vkf_jpeg_pillow_header(const uint8_t *data, size_t size, vkf_jpeg_pillow_info *info, char *why,
                            size_t why_size) {
  memset(info, 0, sizeof *info);
  walker w = {data, size, 3, why, why_size};
  if (size < 3 || data[0] != 0xFF || data[1] != 0xD8 || data[2] != 0xFF) {
    snprintf(why, why_size, "does not start with FF D8 FF");
    return false;
  }
  int pending = 0xFF; /* Python's `s`: one byte read, or -1 at the end of the file */
  while (pending >= 0) {
    if (pending != 0xFF) { /* non-0xFF junk */
      pending = w.pos < size ? data[w.pos++] : -1;
      continue;
    }
    if (w.pos >= size) break;
    unsigned marker = 0xFF00u | data[w.pos++];
    if (marker >= 0xFFC0 && marker <= 0xFFFE) {
      const uint8_t *s = NULL;
      size_t len = 0;
      bool sof = (marker >= 0xFFC0 && marker <= 0xFFCF && marker != 0xFFC4 && marker != 0xFFC8 &&
                  marker != 0xFFCC) ||
                 marker == 0xFFDE;
      bool no_handler = marker == 0xFFC8 || (marker >= 0xFFD0 && marker <= 0xFFD9) ||
                        (marker >= 0xFFF0 && marker <= 0xFFFD);
      if (!no_handler && !read_segment(&w, marker, &s, &len)) return false;
      if (sof) {
        if (len < 6) return fail(&w, "frame header too short", marker);
        if (s[0] != 8) {
          snprintf(why, why_size, "cannot handle %u-bit samples (Pillow reads 8-bit JPEGs)", s[0]);
          return false;
        }
        if (s[5] != 1 && s[5] != 3 && s[5] != 4) {
          snprintf(why, why_size, "cannot handle %u-component images (Pillow reads 1, 3 or 4)",
                   s[5]);
          return false;
        }
        info->height = (uint32_t)(s[1] << 8 | s[2]);
        info->width = (uint32_t)(s[3] << 8 | s[4]);
        info->components = s[5];
      } else if (marker == 0xFFDB) { /* DQT: each table must be complete */
        while (len > 0) {
          size_t table = 1 + (s[0] >> 4 == 0 ? 64 : 128);
          if (len < table) return fail(&w, "bad quantization table", marker);
          s += table;
          len -= table;
        }
      } else if ((marker == 0xFFE0 && starts_with(s, len, "JFIF")) ||
                 (marker == 0xFFEE && starts_with(s, len, "Adobe"))) {
        if (len < 7) return fail(&w, "JFIF or Adobe segment too short", marker);
      }
      if (marker == 0xFFDA) {
        if (info->components == 0 || info->width == 0 || info->height == 0) {
          snprintf(why, why_size, "no frame header with a size before the first scan");
          return false;
        }
        return true;
      }
      pending = w.pos < size ? data[w.pos++] : -1;
    } else if (marker == 0xFFFF) {
      pending = 0xFF; /* fill byte */
    } else if (marker == 0xFF00) {
      pending = w.pos < size ? data[w.pos++] : -1;
    } else {
      return fail(&w, "not a JPEG marker", marker);
    }
  }
  snprintf(why, why_size, "no start of scan (SOS) marker before the end of the file");
  return false;
}
