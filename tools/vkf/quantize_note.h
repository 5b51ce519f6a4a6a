/* What --quantize made, said where a user looks: ggml's own rules pick another format for rows
 * that are not whole blocks of the one asked for (q4_k on 64-wide rows is q5_0), and a user who
 * asked for q4_k must hear that the accuracy is q5_0's, not find it in vkf dump. */
#ifndef VKF_TOOLS_QUANTIZE_NOTE_H
#define VKF_TOOLS_QUANTIZE_NOTE_H

#include <stddef.h>

#include "models/registry/model.h"

/* "q4_k 2, q5_0 12, float 1": the block formats the builds so far made and how many linear
 * weights each, then how many stayed float (empty when none). */
void vkf_cli_quantized_text(const vkf_model *model, char *buf, size_t size);
/* For --json: {"q4_k": 2, "q5_0": 12, "float": 1} on stdout ({} when none). */
void vkf_cli_quantized_json(const vkf_model *model);
/* After a run with --quantize `format` (NULL or "none": nothing): one stderr line for the weights
 * that became another format than `format` ("vkf generate: --quantize q4_k: 12 linear weights
 * whose rows are not a multiple of 256 use q5_0 instead") and one for those left float. */
void vkf_cli_quantize_note(const char *cmd, const vkf_model *model, const char *format);
/* The same from the counts (vkf_model_quantized's), for a command that holds no vkf_model
 * (vkf classify opens its ViT directly). */
void vkf_cli_quantize_note_counts(const char *cmd, const char *format,
                                  const uint32_t n[VKF_DTYPE_COUNT], uint32_t kept);

#endif
