/* JPEG decoding with libjpeg-turbo exactly as Pillow 13 does it (src/libImaging/JpegDecode.c
 * and JpegImagePlugin.py), so that pixels match what Hugging Face's processors see. */
#include "models/image/jpeg_decode.h"

#include <setjmp.h>
#include <stdio.h> /* jpeglib.h needs FILE and size_t declared first */
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "models/image/jpeg_header.h"

/* How a decode left through longjmp. */
enum { JUMP_ERROR = 1, JUMP_TRUNCATED, JUMP_END_AFTER_IMAGE, JUMP_TOO_MANY_SCANS };

/* A progressive JPEG may hold any number of scans, each a pass over the whole coefficient buffer,
 * so a small crafted file can take minutes (libjpeg-turbo's own tools cap them the same way).
 * Encoders write about 10; Pillow has no cap, so past this we differ from it, by design. */
#define VKF_JPEG_MAX_SCANS 1000

/* Heap-allocated, so that nothing changed between setjmp and longjmp is a local variable. */
typedef struct jpeg_job {
  struct jpeg_decompress_struct cinfo;
  struct jpeg_error_mgr err;
  struct jpeg_source_mgr src;
  struct jpeg_progress_mgr progress;
  jmp_buf jump;
  bool finishing; /* every scanline is out; only jpeg_finish_decompress is left */
  char message[JMSG_LENGTH_MAX];
  vkf_status status; /* errors found outside libjpeg (sizes, memory) */
  vkf_image image;
} jpeg_job;

static jpeg_job *job_of(j_common_ptr cinfo) {
  return (jpeg_job *)((char *)cinfo - offsetof(jpeg_job, cinfo));
}

/* Pillow's error_exit longjmps; its output_message prints nothing, so warnings (corrupt entropy
 * data, extraneous bytes) only count and the decode goes on. */
static void on_error(j_common_ptr cinfo) {
  jpeg_job *job = job_of(cinfo);
  (*cinfo->err->format_message)(cinfo, job->message);
  longjmp(job->jump, JUMP_ERROR);
}

static void on_message(j_common_ptr cinfo) {
  (void)cinfo;
}

static void on_progress(j_common_ptr cinfo) {
  if (((j_decompress_ptr)cinfo)->input_scan_number > VKF_JPEG_MAX_SCANS)
    longjmp(job_of(cinfo)->jump, JUMP_TOO_MANY_SCANS);
}

static void src_noop(j_decompress_ptr cinfo) {
  (void)cinfo;
}

/* The whole file is in the buffer, so libjpeg asking for more means the data ended. Pillow's
 * suspending source returns to Python, which finds no more bytes and raises "image file is
 * truncated" -- unless every scanline was already out (jpeg_finish_decompress looking for the
 * EOI), where Pillow keeps the image. */
static boolean src_fill(j_decompress_ptr cinfo) {
  jpeg_job *job = job_of((j_common_ptr)cinfo);
  longjmp(job->jump, job->finishing ? JUMP_END_AFTER_IMAGE : JUMP_TRUNCATED);
}

static void src_skip(j_decompress_ptr cinfo, long num_bytes) {
  struct jpeg_source_mgr *src = cinfo->src;
  if (num_bytes <= 0) return;
  if ((unsigned long)num_bytes > src->bytes_in_buffer) { /* past the end: the next read fails */
    src->next_input_byte += src->bytes_in_buffer;
    src->bytes_in_buffer = 0;
  } else {
    src->next_input_byte += num_bytes;
    src->bytes_in_buffer -= (size_t)num_bytes;
  }
}

/* Pillow's MULDIV255 (libImaging/ImagingUtils.h): a * b / 255 rounded, in integers. */
static int muldiv255(int a, int b) {
  int tmp = a * b + 128;
  return ((tmp >> 8) + tmp) >> 8;
}

/* One output row into RGB: "L" replicated; "CMYK;I" (Pillow assumes Adobe's inverted CMYK)
 * inverted on unpacking, then Pillow's cmyk2rgb: nk - c * nk / 255 with nk = 255 - k. */
static void row_to_rgb(const uint8_t *in, int components, uint32_t width, uint8_t *out) {
  for (uint32_t x = 0; x < width; x++, out += 3) {
    if (components == 1) {
      out[0] = out[1] = out[2] = in[x];
    } else if (components == 3) {
      memcpy(out, in + 3 * (size_t)x, 3);
    } else {
      const uint8_t *p = in + 4 * (size_t)x;
      int nk = 255 - (uint8_t)~p[3]; /* Pillow's k is the inverted sample, nk = 255 - k */
      for (int c = 0; c < 3; c++) {
        int v = nk - muldiv255((uint8_t)~p[c], nk);
        out[c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
      }
    }
  }
}

/* The decode proper; longjmps out on any libjpeg error or the end of the data. */
static void decode(jpeg_job *job, const uint8_t *data, size_t size, int components,
                   const char *name) {
  vkf_status *status = &job->status;
  struct jpeg_decompress_struct *cinfo = &job->cinfo;
  job->src.next_input_byte = data;
  job->src.bytes_in_buffer = size;
  job->src.init_source = src_noop;
  job->src.fill_input_buffer = src_fill;
  job->src.skip_input_data = src_skip;
  job->src.resync_to_restart = jpeg_resync_to_restart;
  job->src.term_source = src_noop;
  cinfo->src = &job->src;
  job->progress.progress_monitor = on_progress;
  cinfo->progress = &job->progress;
  /* Pillow skips tables-only datastreams (an EOI before any scan) and reads the next one. */
  while (jpeg_read_header(cinfo, FALSE) == JPEG_HEADER_TABLES_ONLY) {
  }
  if (cinfo->num_components != components) {
    *status = vkf_status_make(VKF_STATUS_PARSE,
                              "%s: corrupt JPEG (the frame libjpeg decodes has %d components, "
                              "the last frame header %d)",
                              name, cinfo->num_components, components);
    return;
  }
  *status = vkf_image_check_decoded_size(name, cinfo->image_width, cinfo->image_height);
  if (*status) return;
  /* Pillow sets only the output colour space (from its mode); the IDCT (islow), fancy
   * upsampling and the rest stay at libjpeg's defaults. */
  cinfo->out_color_space = components == 1 ? JCS_GRAYSCALE : components == 3 ? JCS_RGB : JCS_CMYK;
  jpeg_start_decompress(cinfo);
  if (cinfo->output_components != components || cinfo->output_width != cinfo->image_width ||
      cinfo->output_height != cinfo->image_height) {
    *status =
        vkf_status_make(VKF_STATUS_INTERNAL, "%s: libjpeg output is %ux%ux%d, not %ux%ux%d", name,
                        cinfo->output_width, cinfo->output_height, cinfo->output_components,
                        cinfo->image_width, cinfo->image_height, components);
    return;
  }
  *status = vkf_image_create(cinfo->output_width, cinfo->output_height, &job->image);
  if (*status) return;
  JSAMPARRAY row = (*cinfo->mem->alloc_sarray)((j_common_ptr)cinfo, JPOOL_IMAGE,
                                               cinfo->output_width * (JDIMENSION)components, 1);
  uint32_t width = job->image.width;
  while (cinfo->output_scanline < cinfo->output_height) {
    size_t y = cinfo->output_scanline;
    if (jpeg_read_scanlines(cinfo, row, 1) != 1) { /* only a suspending source returns 0 */
      *status =
          vkf_status_make(VKF_STATUS_INTERNAL, "%s: libjpeg returned no scanline %zu", name, y);
      return;
    }
    row_to_rgb(row[0], components, width, job->image.pixels + y * width * 3);
  }
  job->finishing = true;
  jpeg_finish_decompress(cinfo);
}

vkf_status vkf_image_decode_jpeg(const uint8_t *data, size_t size, const char *name,
                                 vkf_image *out_image) {
  memset(out_image, 0, sizeof *out_image);
  vkf_jpeg_pillow_info info;
  char why[160];
  if (!vkf_jpeg_pillow_header(data, size, &info, why, sizeof why)) {
    return vkf_status_make(VKF_STATUS_PARSE, "%s: not a JPEG that Pillow opens: %s", name, why);
  }
  VKF_RETURN_IF_ERROR(vkf_image_check_decoded_size(name, info.width, info.height));
  jpeg_job *job = calloc(1, sizeof *job);
  if (!job) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: out of memory", name);
  job->cinfo.err = jpeg_std_error(&job->err);
  job->err.error_exit = on_error;
  job->err.output_message = on_message;
  vkf_status status = VKF_OK; /* assigned only after the jump, so setjmp cannot clobber it */
  int jumped = setjmp(job->jump);
  if (jumped == 0) {
    jpeg_create_decompress(&job->cinfo);
    decode(job, data, size, info.components, name);
    status = job->status;
  } else if (jumped == JUMP_ERROR) {
    status = vkf_status_make(VKF_STATUS_PARSE, "%s: corrupt JPEG: %s", name, job->message);
  } else if (jumped == JUMP_TRUNCATED) {
    status = vkf_status_make(VKF_STATUS_PARSE,
                             "%s: image file is truncated (the JPEG data ends before the image "
                             "does)",
                             name);
  } else if (jumped == JUMP_TOO_MANY_SCANS) {
    status = vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: JPEG has more than %d scans", name,
                             VKF_JPEG_MAX_SCANS);
  } /* JUMP_END_AFTER_IMAGE: every row is decoded; Pillow keeps the image without an EOI */
  jpeg_destroy_decompress(&job->cinfo);
  if (status == VKF_OK) {
    *out_image = job->image;
  } else {
    vkf_image_destroy(&job->image);
  }
  free(job);
  return status;
}
