/* Images for vision models: PNG/JPEG decoding to 8-bit RGB, Pillow-exact resizing, centre crop,
 * and Hugging Face's image-processor pipeline (resize, crop, rescale, normalise to CHW float). */
#ifndef VKF_MODELS_IMAGE_H
#define VKF_MODELS_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/base/status.h"
#include "models/image/image_buffer.h"
#include "models/image/image_resample.h"

/* Decodes a PNG or JPEG file to RGB the way Pillow 13's Image.open(path).convert("RGB") does:
 * grey is replicated into R=G=B, alpha is dropped (not composited), palettes are expanded.
 * JPEG (data starting FF D8 FF, as Pillow identifies it) is decoded by libjpeg-turbo with
 * Pillow's settings and Pillow's own header checks, pixel for pixel equal to Pillow's (CMYK and
 * YCCK included, read as Adobe-inverted); a JPEG that ends before its last scanline is an error,
 * as Pillow's "image file is truncated" (jpeg_decode.c). PNG goes through stb_image, built for
 * PNG only: 16-bit samples keep their high byte as in Pillow, except 16-bit grey, which Pillow
 * opens as "I;16" and clips to 255, and so do we (tests/models/test_jpeg.c checks the layouts
 * against Pillow: 16-bit, 1/2/4-bit grey and palette, tRNS, Adam7). EXIF orientation is ignored, as
 * Image.open and the image processors ignore it (Hugging Face's pipelines call exif_transpose in
 * load_image; the goldens here, like `vkf classify`, follow Image.open). Hostile files: sizes are
 * checked before decoding. Errors: NOT_FOUND (no such file), IO (unreadable), PARSE (not a
 * PNG/JPEG, corrupt, truncated), UNSUPPORTED (larger than VKF_IMAGE_MAX_*); the message starts with
 * `path`. */
vkf_status vkf_image_load(const char *path, vkf_image *out_image);
/* The same from memory; `name` is used in error messages only (a path or "<stdin>"). */
vkf_status vkf_image_decode(const void *data, size_t data_size, const char *name,
                            vkf_image *out_image);

/* Hugging Face's center_crop: the window starts at ((H - crop_h) // 2, (W - crop_w) // 2) with
 * floor division; where the crop is larger than the image the outside is zero (black), so the
 * result is always crop_width x crop_height. `*out_image` is zeroed first. */
vkf_status vkf_image_center_crop(const vkf_image *image, uint32_t crop_width, uint32_t crop_height,
                                 vkf_image *out_image);

/* The fields of a Hugging Face preprocessor_config.json that ViT-family image processors use
 * (ViTImageProcessor, DeiTImageProcessor, BeitImageProcessor, ...). A zero struct does nothing but
 * convert uint8 to float; models/formats/hf_config.h fills it from the JSON, starting from the
 * defaults below for keys the file leaves out. */
typedef struct vkf_image_preprocess_params {
  bool do_resize;
  /* "size": either {"height", "width"} (shortest_edge == 0) or {"shortest_edge": n}, which scales
   * the short side to n keeping the aspect ratio, long side = int(n * long / short). */
  uint32_t resize_height;
  uint32_t resize_width;
  uint32_t shortest_edge;
  /* With shortest_edge only: when nonzero, the long side is capped at this and the short side
   * shrinks to keep the aspect ratio (HF's get_size_with_aspect_ratio, size={"shortest_edge": n,
   * "longest_edge": m}). */
  uint32_t longest_edge;
  vkf_image_resample resample;
  bool do_center_crop;
  uint32_t crop_height; /* "crop_size" */
  uint32_t crop_width;
  bool do_rescale;
  double rescale_factor; /* usually 1/255 */
  bool do_normalize;
  double mean[3]; /* "image_mean", RGB; applied in float32, as numpy does */
  double std[3];  /* "image_std", RGB; must be non-zero */
} vkf_image_preprocess_params;

/* ViTImageProcessor's defaults: resize 224x224 bilinear, rescale 1/255, mean = std = 0.5. */
vkf_image_preprocess_params vkf_image_preprocess_params_vit(void);
/* What facebook/deit-*-224 checkpoints ship: resize 256x256 bicubic, centre crop 224, rescale
 * 1/255, ImageNet mean (0.485, 0.456, 0.406) and std (0.229, 0.224, 0.225). */
vkf_image_preprocess_params vkf_image_preprocess_params_deit(void);

/* Output height and width that vkf_image_preprocess produces for an image of the given size.
 * Errors: INVALID_ARGUMENT for parameters that cannot work (zero sizes, zero std, bad filter). */
vkf_status vkf_image_preprocess_output_size(const vkf_image_preprocess_params *params,
                                            uint32_t image_width, uint32_t image_height,
                                            uint32_t *out_height, uint32_t *out_width);

/* Runs the pipeline in Hugging Face's order (resize, centre crop, rescale, normalise) and writes
 * float32 [3, H, W] (channel-major, RGB) into `out_chw`, which must hold exactly
 * `out_chw_count` = 3 * H * W floats, H and W as vkf_image_preprocess_output_size gives. For a
 * batch [B, 3, H, W], call once per image with out_chw + b * 3 * H * W. Matches the processor's
 * pixel_values bit for bit on the same decoded pixels (rescale in float64 then cast to float32,
 * normalise in float32). Errors: INVALID_ARGUMENT (bad params, wrong out_chw_count),
 * OUT_OF_MEMORY. */
vkf_status vkf_image_preprocess(const vkf_image *image, const vkf_image_preprocess_params *params,
                                float *out_chw, size_t out_chw_count);

#endif
