/* Image decoding (JPEG through libjpeg-turbo as Pillow does it, jpeg_decode.c; PNG through
 * stb_image, stb_impl.c), centre crop, and the Hugging Face
 * preprocessing pipeline to CHW float. The Pillow-exact resize lives in image_resample.c. */
#include "models/image/image.h"
#include "models/image/jpeg_decode.h"
#include "models/image/stb_limit.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STBI_NO_STDIO
#include <stb/stb_image.h>

/* Files past this are not images we would decode anyway (the pixel limit is far lower). */
#define VKF_IMAGE_MAX_FILE_SIZE ((size_t)1 << 30)

/* Width and height from a PNG's signature and IHDR chunk (big-endian), or false if not a PNG. */
static bool png_header_size(const void *data, size_t size, uint32_t *out_w, uint32_t *out_h) {
  static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  const unsigned char *d = data;
  if (size < 24 || memcmp(d, sig, 8) != 0 || memcmp(d + 12, "IHDR", 4) != 0) return false;
  *out_w = (uint32_t)d[16] << 24 | (uint32_t)d[17] << 16 | (uint32_t)d[18] << 8 | d[19];
  *out_h = (uint32_t)d[20] << 24 | (uint32_t)d[21] << 16 | (uint32_t)d[22] << 8 | d[23];
  return true;
}

/* Every chunk's declared length fits in the file: stb_image grows its IDAT buffer to a chunk's
 * declared end before reading it, so a 100-byte file claiming a 2 GiB chunk would allocate 2 GiB
 * first (tests/fuzz/crashers/fuzz_image/png_chunk_past_end). */
static vkf_status png_check_chunks(const uint8_t *d, size_t size, const char *name) {
  size_t at = 8;
  /* Every chunk whose length and type are in the file, the last one too even when its data and
   * CRC are cut off: stb reads that header and grows its IDAT buffer to the length before it
   * finds the data missing (a 76-byte file asked for 2 GiB). */
  while (size - at >= 8) {
    uint32_t len = (uint32_t)d[at] << 24 | (uint32_t)d[at + 1] << 16 | (uint32_t)d[at + 2] << 8 |
                   d[at + 3];
    size_t after = size - at - 8;             /* bytes after the length and type */
    size_t left = after >= 4 ? after - 4 : 0; /* ... less the CRC */
    if (len > left)
      return vkf_status_make(VKF_STATUS_PARSE,
                             "%s: corrupt PNG (chunk \"%.4s\" at byte %zu declares %u bytes, the "
                             "file has %zu left)",
                             name, (const char *)d + at + 4, at, len, left);
    if (!memcmp(d + at + 4, "IEND", 4) || after < 4) break; /* after < 4: an empty last chunk */
    at += 12 + (size_t)len;
  }
  return VKF_OK;
}

/* A failed decode whose allocation stb_limit.h refused: its IDAT inflates past the declared size.
 * Clears the bound either way. */
static vkf_status png_limit_status(vkf_status st, const char *name, int width, int height) {
  int hit = vkf_stb_limit_hit();
  vkf_stb_limit_set(0);
  if (!st || !hit) return st;
  vkf_status_free(st);
  return vkf_status_make(VKF_STATUS_PARSE,
                         "%s: corrupt PNG (its image data inflates to more than the %dx%d image "
                         "its header declares can hold)",
                         name, width, height);
}

/* A 16-bit greyscale PNG as Pillow's "I;16" -> "RGB": min(value, 255), replicated. */
static vkf_status decode_png_grey16(const void *data, size_t data_size, const char *name,
                                    vkf_image *out_image) {
  int width = 0, height = 0, channels = 0;
  stbi_us *grey = stbi_load_16_from_memory(data, (int)data_size, &width, &height, &channels, 1);
  if (!grey) {
    return vkf_status_make(VKF_STATUS_PARSE, "%s: cannot decode image (%s)", name,
                           stbi_failure_reason());
  }
  vkf_status status = vkf_image_create((uint32_t)width, (uint32_t)height, out_image);
  for (size_t i = 0; status == VKF_OK && i < (size_t)width * (size_t)height; i++) {
    uint8_t v = grey[i] > 255 ? 255 : (uint8_t)grey[i];
    out_image->pixels[3 * i] = out_image->pixels[3 * i + 1] = out_image->pixels[3 * i + 2] = v;
  }
  free(grey);
  return status;
}

vkf_status vkf_image_decode(const void *data, size_t data_size, const char *name,
                            vkf_image *out_image) {
  memset(out_image, 0, sizeof *out_image);
  if (data_size == 0) {
    return vkf_status_make(VKF_STATUS_PARSE, "%s: empty file, not a PNG or JPEG image", name);
  }
  if (data_size > INT_MAX) {
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: %zu bytes is too large for an image file",
                           name, data_size);
  }
  /* Only what Pillow identifies: a JPEG starts with FF D8 FF (no fill bytes before the SOI, which
   * stb_image would skip), a PNG with its signature. JPEG never reaches stb (built PNG-only). */
  const uint8_t *d = data;
  if (data_size >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF) {
    return vkf_image_decode_jpeg(d, data_size, name, out_image);
  }
  /* The size limits apply before stb allocates anything for a hostile header. The size is read
   * from the IHDR here, since stb rejects an empty or huge one as "not an image". */
  uint32_t png_w = 0, png_h = 0;
  if (!png_header_size(data, data_size, &png_w, &png_h)) {
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: not a PNG or JPEG image (it starts with neither the PNG signature "
                           "nor FF D8 FF)",
                           name);
  }
  VKF_RETURN_IF_ERROR(vkf_image_check_decoded_size(name, png_w, png_h));
  VKF_RETURN_IF_ERROR(png_check_chunks(d, data_size, name));
  int width = 0, height = 0, channels = 0;
  if (!stbi_info_from_memory(data, (int)data_size, &width, &height, &channels)) {
    return vkf_status_make(VKF_STATUS_PARSE, "%s: corrupt PNG (%s)", name, stbi_failure_reason());
  }
  VKF_RETURN_IF_ERROR(vkf_image_check_decoded_size(name, (uint32_t)(width < 0 ? 0 : width),
                                                   (uint32_t)(height < 0 ? 0 : height)));
  /* Pillow opens 16-bit grey as "I;16", whose convert("RGB") clips each value to 255; every other
   * 16-bit layout it reads by the high byte, as stb does. IHDR: bit depth at 24, colour type 25. */
  /* No buffer of a decode needs more than the raw scanlines the header allows (at most 8 bytes a
   * pixel plus a filter byte a row, and Adam7's passes a filter byte per pass row) or the
   * converted pixels; inflate's doubling may take it to twice that. */
  size_t raw = ((size_t)width * 8 + 8) * (size_t)height;
  vkf_stb_limit_set(2 * raw + ((size_t)1 << 20));
  if (d[24] == 16 && d[25] == 0) {
    vkf_status st = decode_png_grey16(data, data_size, name, out_image);
    return png_limit_status(st, name, width, height);
  }
  /* Asking stb for 3 channels does Pillow's convert("RGB"): grey is replicated, alpha dropped. */
  unsigned char *pixels =
      stbi_load_from_memory(data, (int)data_size, &width, &height, &channels, 3);
  if (!pixels) {
    return png_limit_status(vkf_status_make(VKF_STATUS_PARSE, "%s: cannot decode image (%s)",
                                            name, stbi_failure_reason()),
                            name, width, height);
  }
  vkf_stb_limit_set(0);
  /* stb_impl.c pins stb's allocator to malloc, so the buffer is ours to free(). */
  out_image->width = (uint32_t)width;
  out_image->height = (uint32_t)height;
  out_image->pixels = pixels;
  return VKF_OK;
}

vkf_status vkf_image_load(const char *path, vkf_image *out_image) {
  memset(out_image, 0, sizeof *out_image);
  /* O_NONBLOCK: a FIFO named like the image must not hang the open (fstat then refuses it). */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  FILE *file = fd >= 0 ? fdopen(fd, "rb") : NULL;
  if (!file) {
    int err = errno;
    if (fd >= 0) close(fd);
    return vkf_status_make(err == ENOENT ? VKF_STATUS_NOT_FOUND : VKF_STATUS_IO,
                           "%s: cannot open image: %s", path, strerror(err));
  }
  vkf_status status = VKF_OK;
  uint8_t *data = NULL;
  struct stat st;
  if (fstat(fileno(file), &st) != 0) {
    status = vkf_status_make(VKF_STATUS_IO, "%s: cannot stat image: %s", path, strerror(errno));
  } else if (!S_ISREG(st.st_mode)) {
    status = vkf_status_make(VKF_STATUS_IO, "%s: not a regular file", path);
  } else if ((uint64_t)st.st_size > VKF_IMAGE_MAX_FILE_SIZE) {
    status = vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: %lld bytes is too large for an image",
                             path, (long long)st.st_size);
  } else {
    size_t size = (size_t)st.st_size;
    data = malloc(size ? size : 1);
    if (!data) {
      status = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: out of memory reading %zu bytes",
                               path, size);
    } else if (fread(data, 1, size, file) != size) {
      status = vkf_status_make(VKF_STATUS_IO, "%s: short read of image: %s", path,
                               ferror(file) ? strerror(errno) : "file shrank while reading");
    } else {
      status = vkf_image_decode(data, size, path, out_image);
    }
  }
  free(data);
  fclose(file);
  return status;
}

vkf_status vkf_image_center_crop(const vkf_image *image, uint32_t crop_width, uint32_t crop_height,
                                 vkf_image *out_image) {
  memset(out_image, 0, sizeof *out_image);
  VKF_RETURN_IF_ERROR(vkf_image_check_size(crop_width, crop_height, "center crop"));
  VKF_RETURN_IF_ERROR(vkf_image_create(crop_width, crop_height, out_image));
  /* Python's floor division: a crop wider than the image starts left of it, and the columns
   * outside stay zero, which is what HF's pad-then-crop amounts to. */
  int64_t dy = (int64_t)image->height - crop_height, dx = (int64_t)image->width - crop_width;
  int64_t top = dy >= 0 ? dy / 2 : -((-dy + 1) / 2);
  int64_t left = dx >= 0 ? dx / 2 : -((-dx + 1) / 2);
  for (uint32_t y = 0; y < crop_height; y++) {
    int64_t sy = top + y;
    if (sy < 0 || sy >= image->height) continue;
    int64_t x0 = left < 0 ? -left : 0; /* first output column inside the image */
    int64_t x1 = left + crop_width > image->width ? image->width - left : crop_width;
    if (x1 <= x0) continue;
    memcpy(out_image->pixels + ((size_t)y * crop_width + (size_t)x0) * 3,
           image->pixels + ((size_t)sy * image->width + (size_t)(left + x0)) * 3,
           (size_t)(x1 - x0) * 3);
  }
  return VKF_OK;
}

vkf_image_preprocess_params vkf_image_preprocess_params_vit(void) {
  return (vkf_image_preprocess_params){
      .do_resize = true,
      .resize_height = 224,
      .resize_width = 224,
      .resample = VKF_IMAGE_RESAMPLE_BILINEAR,
      .do_rescale = true,
      .rescale_factor = 1.0 / 255.0,
      .do_normalize = true,
      .mean = {0.5, 0.5, 0.5},
      .std = {0.5, 0.5, 0.5},
  };
}

vkf_image_preprocess_params vkf_image_preprocess_params_deit(void) {
  return (vkf_image_preprocess_params){
      .do_resize = true,
      .resize_height = 256,
      .resize_width = 256,
      .resample = VKF_IMAGE_RESAMPLE_BICUBIC,
      .do_center_crop = true,
      .crop_height = 224,
      .crop_width = 224,
      .do_rescale = true,
      .rescale_factor = 1.0 / 255.0,
      .do_normalize = true,
      .mean = {0.485, 0.456, 0.406},
      .std = {0.229, 0.224, 0.225},
  };
}

/* The size the resize step produces; HF's get_resize_output_image_size for shortest_edge. */
static vkf_status resized_size(const vkf_image_preprocess_params *p, uint32_t width,
                               uint32_t height, uint32_t *out_width, uint32_t *out_height) {
  *out_width = width;
  *out_height = height;
  if (!p->do_resize) return VKF_OK;
  if (p->shortest_edge == 0) {
    if (p->resize_width == 0 || p->resize_height == 0) {
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "preprocess: do_resize needs size height/width or shortest_edge "
                             "(got %ux%u)",
                             p->resize_width, p->resize_height);
    }
    *out_width = p->resize_width;
    *out_height = p->resize_height;
    return VKF_OK;
  }
  uint32_t shorter = width <= height ? width : height, longer = width <= height ? height : width;
  uint32_t new_short = p->shortest_edge;
  double new_long;
  if (p->longest_edge == 0) {
    /* get_resize_output_image_size: int(n * long / short); Python's true division of two ints
     * is one correctly rounded double division. */
    new_long = (double)((uint64_t)new_short * longer) / (double)shorter;
  } else {
    /* get_size_with_aspect_ratio, operation for operation: the short side shrinks (rounded half
     * to even, as Python's round) so that the long side fits longest_edge. */
    double raw = 0.0;
    if ((double)longer / (double)shorter * new_short > (double)p->longest_edge) {
      raw = (double)p->longest_edge * (double)shorter / (double)longer;
      new_short = (uint32_t)nearbyint(raw);
    }
    if (new_short == shorter) {
      new_long = longer;
    } else {
      new_long = raw != 0.0 ? raw * longer / shorter
                            : (double)((uint64_t)new_short * longer) / (double)shorter;
    }
  }
  if (new_short == 0 || new_long >= (double)VKF_IMAGE_MAX_SIDE + 1.0) {
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "preprocess: shortest_edge %u (longest_edge %u) on a %ux%u image gives "
                           "%ux%.0f, outside 1..%u",
                           p->shortest_edge, p->longest_edge, width, height, new_short, new_long,
                           VKF_IMAGE_MAX_SIDE);
  }
  *out_width = width <= height ? new_short : (uint32_t)new_long;
  *out_height = width <= height ? (uint32_t)new_long : new_short;
  return VKF_OK;
}

vkf_status vkf_image_preprocess_output_size(const vkf_image_preprocess_params *params,
                                            uint32_t image_width, uint32_t image_height,
                                            uint32_t *out_height, uint32_t *out_width) {
  *out_height = 0;
  *out_width = 0;
  const vkf_image_preprocess_params *p = params;
  VKF_RETURN_IF_ERROR(vkf_image_check_size(image_width, image_height, "preprocess input"));
  if (p->do_resize && (unsigned)p->resample >= VKF_IMAGE_RESAMPLE_COUNT) {
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "preprocess: resample %d is not a Pillow filter (0..7)",
                           (int)p->resample);
  }
  if (p->do_rescale && !isfinite(p->rescale_factor)) {
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "preprocess: rescale_factor is %g",
                           p->rescale_factor);
  }
  if (p->do_normalize) {
    for (int c = 0; c < 3; c++) {
      if (!isfinite(p->mean[c]) || !isfinite(p->std[c]) || (float)p->std[c] == 0.0f) {
        return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                               "preprocess: channel %d has image_mean %g, image_std %g (std must "
                               "be finite and non-zero)",
                               c, p->mean[c], p->std[c]);
      }
    }
  }
  uint32_t width, height;
  VKF_RETURN_IF_ERROR(resized_size(p, image_width, image_height, &width, &height));
  VKF_RETURN_IF_ERROR(vkf_image_check_size(width, height, "preprocess resize"));
  if (p->do_center_crop) {
    width = p->crop_width;
    height = p->crop_height;
    VKF_RETURN_IF_ERROR(vkf_image_check_size(width, height, "preprocess crop_size"));
  }
  *out_height = height;
  *out_width = width;
  return VKF_OK;
}

vkf_status vkf_image_preprocess(const vkf_image *image, const vkf_image_preprocess_params *params,
                                float *out_chw, size_t out_chw_count) {
  uint32_t out_h, out_w;
  VKF_RETURN_IF_ERROR(
      vkf_image_preprocess_output_size(params, image->width, image->height, &out_h, &out_w));
  if (out_chw_count != (size_t)3 * out_h * out_w) {
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "preprocess: output holds %zu floats, [3, %u, %u] needs %zu",
                           out_chw_count, out_h, out_w, (size_t)3 * out_h * out_w);
  }
  vkf_image resized = {0}, cropped = {0};
  const vkf_image *current = image;
  vkf_status status = VKF_OK;
  if (params->do_resize) {
    uint32_t w, h;
    status = resized_size(params, image->width, image->height, &w, &h);
    if (status == VKF_OK) status = vkf_image_resize(image, w, h, params->resample, &resized);
    current = &resized;
  }
  if (status == VKF_OK && params->do_center_crop) {
    status = vkf_image_center_crop(current, params->crop_width, params->crop_height, &cropped);
    current = &cropped;
  }
  if (status == VKF_OK) {
    /* A table per channel holds every value a uint8 can become. The arithmetic is numpy's:
     * rescale in float64 then cast to float32, normalise in float32 with float32 mean/std. */
    float table[3][256];
    for (int c = 0; c < 3; c++) {
      float mean = (float)params->mean[c], std = (float)params->std[c];
      for (int u = 0; u < 256; u++) {
        float v = params->do_rescale ? (float)((double)u * params->rescale_factor) : (float)u;
        table[c][u] = params->do_normalize ? (v - mean) / std : v;
      }
    }
    size_t plane = (size_t)out_h * out_w;
    const uint8_t *src = current->pixels; /* [H, W, 3] */
    for (size_t i = 0; i < plane; i++) {
      out_chw[i] = table[0][src[3 * i + 0]]; /* [3, H, W] */
      out_chw[plane + i] = table[1][src[3 * i + 1]];
      out_chw[2 * plane + i] = table[2][src[3 * i + 2]];
    }
  }
  vkf_image_destroy(&resized);
  vkf_image_destroy(&cropped);
  return status;
}
