/* The one bounded whole-file read every model file reader uses (JSON configs, vocab.txt,
 * tokenizer.json, .npy): the kind and size come from fstat before anything is allocated. */
#ifndef VKF_MODELS_FILE_READ_H
#define VKF_MODELS_FILE_READ_H

#include <stddef.h>

#include "graph/base/status.h"

/* Reads the regular file `path` of at most `max_size` bytes into a NUL-terminated buffer (caller
 * frees; *out_size excludes the NUL). `what` names the kind of file in the oversize message ("a
 * JSON file", "a .npy file"). NOT_FOUND for a missing file; IO naming the path for a directory
 * ("is a directory, not a file"), FIFO, device or unreadable file (the open never blocks);
 * UNSUPPORTED past `max_size`; OUT_OF_MEMORY. A path "<file>.gguf/<name>" whose folder part is a
 * GGUF file reads the JSON file `name` made from its metadata (config.json, tokenizer.json,
 * tokenizer_config.json; NOT_FOUND for others), so every reader takes a GGUF as a model folder. */
vkf_status vkf_file_read_bounded(const char *path, size_t max_size, const char *what,
                                 char **out_data, size_t *out_size);

#endif
