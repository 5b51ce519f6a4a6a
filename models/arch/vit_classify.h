/* Classification glue for ViT checkpoints: image files -> pixel_values batch, logits -> top-K.
 * No device here: the caller runs the graph (host/runner.h) or the interpreter. */
#ifndef VKF_MODELS_VIT_CLASSIFY_H
#define VKF_MODELS_VIT_CLASSIFY_H

#include <stddef.h>
#include <stdint.h>

#include "models/arch/vit.h"

/* Decodes and preprocesses `count` image files with the checkpoint's processor into
 * out_pixels, f32 [count, 3, S, S] (S = vkf_vit_image_size). Errors name the file: NOT_FOUND,
 * PARSE for a file that is not a PNG/JPEG image, UNSUPPORTED for one too large. */
vkf_status vkf_vit_load_images(const vkf_vit_model *model, const char *const *paths, size_t count,
                               float *out_pixels);

/* The k most likely classes of one image (k <= label_count: the caller caps it, and out_ids /
 * out_probs hold k entries): ids in decreasing logit order and their softmax probabilities over
 * all labels. */
void vkf_vit_top_k(const float *logits, int64_t label_count, int64_t k, int64_t *out_ids,
                   float *out_probs);

#endif
