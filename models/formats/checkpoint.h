/* A model's weights as Hugging Face saves them: one model.safetensors, or shards listed by
 * model.safetensors.index.json; one name lookup over every shard, and reads routed to the shard
 * that holds the tensor. */
#ifndef VKF_MODELS_CHECKPOINT_H
#define VKF_MODELS_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "graph/base/status.h"
#include "models/formats/safetensors.h"

/* Limits on what an index may ask for; beyond them open() fails (see there). Sizes in bytes. */
#define VKF_CHECKPOINT_MAX_INDEX_SIZE ((size_t)64 << 20) /* model.safetensors.index.json */
#define VKF_CHECKPOINT_MAX_SHARDS 4096                   /* distinct shard files */
#define VKF_CHECKPOINT_MAX_SHARD_NAME 255                /* one shard file name */

/* Immutable after open: concurrent lookups and reads on one handle are safe. Every info pointer
 * and shard handle it gives out is valid until vkf_checkpoint_close(). */
typedef struct vkf_checkpoint vkf_checkpoint;

/* Opens `model_dir`/model.safetensors, or, when that does not exist,
 * `model_dir`/model.safetensors.index.json and every shard file its "weight_map" names (each
 * opened once, through vkf_safetensors_open, so every shard is fully validated). A broken
 * model.safetensors is an error, never a reason to try the index. Errors, each a one-line message
 * naming the file (and tensor) at fault; *out_checkpoint is NULL on failure:
 *   NOT_FOUND  neither file exists (both named); a shard the index names is missing
 *   IO         a file that cannot be read, or is a directory or other non-regular file
 *   PARSE      the index is not JSON, not an object, has no "weight_map" object, or maps a tensor
 *              to a non-string, an empty name, a name with '/' or "..", or one longer than
 *              VKF_CHECKPOINT_MAX_SHARD_NAME; the weight_map is empty; a tensor the index maps to
 *              shard F is not in F; a tensor is in two shards
 *   UNSUPPORTED  the index is larger than VKF_CHECKPOINT_MAX_INDEX_SIZE or names more than
 *              VKF_CHECKPOINT_MAX_SHARDS shards
 *   and any error of vkf_safetensors_open on a shard (truncated, bad header, ...), prefixed with
 *   the index path. A tensor a shard holds but the index does not list is still found (loaders
 * read whole shards), but it too must not appear in another shard. */
vkf_status vkf_checkpoint_open(const char *model_dir, vkf_checkpoint **out_checkpoint);
/* Wraps one already-open file (tests, single-file callers). Takes ownership of `st`, also on
 * failure (OUT_OF_MEMORY), when it is closed. */
vkf_status vkf_checkpoint_from_file(vkf_safetensors *st, vkf_checkpoint **out_checkpoint);
/* Closes every shard and frees the handle. NULL is a no-op. */
void vkf_checkpoint_close(vkf_checkpoint *ck);

/* The model.safetensors or index path (the file's own path for from_file), for messages. */
const char *vkf_checkpoint_path(const vkf_checkpoint *ck);
/* Tensors over all shards ("__metadata__" entries do not count). */
size_t vkf_checkpoint_count(const vkf_checkpoint *ck);
/* Tensors shard by shard (shards in strcmp order of their file names), each shard's in the order
 * of their data offsets, as vkf_safetensors_at; index < count. */
const vkf_safetensors_info *vkf_checkpoint_at(const vkf_checkpoint *ck, size_t index);
/* NULL when absent; O(log n) over all shards. */
const vkf_safetensors_info *vkf_checkpoint_find(const vkf_checkpoint *ck, const char *name);
/* The shard that holds `info` (for vkf_safetensors_read_f32/f16), or NULL when `info` did not come
 * from this checkpoint. */
const vkf_safetensors *vkf_checkpoint_file_of(const vkf_checkpoint *ck,
                                              const vkf_safetensors_info *info);
/* Number of files (1 for a single file) and each of them, in the order vkf_checkpoint_at uses. */
size_t vkf_checkpoint_file_count(const vkf_checkpoint *ck);
const vkf_safetensors *vkf_checkpoint_file_at(const vkf_checkpoint *ck, size_t index);

/* As vkf_safetensors_expect: the tensor must exist and have exactly `rank` dims equal to `dims`
 * (a negative dim matches any size). NOT_FOUND names the checkpoint path; SHAPE names the shard:
 * tensor "a.b" has shape [1,1,192], expected [1,1,768] in DIR/model-00002-of-00003.safetensors. */
vkf_status vkf_checkpoint_expect(const vkf_checkpoint *ck, const char *name, int rank,
                                 const int64_t *dims, const vkf_safetensors_info **out_info);
/* vkf_safetensors_read_f32 / _f16 on the shard holding `info`, which must come from this
 * checkpoint (asserted). Messages name the shard file. */
vkf_status vkf_checkpoint_read_f32(const vkf_checkpoint *ck, const vkf_safetensors_info *info,
                                   size_t out_count, float *out_values);
vkf_status vkf_checkpoint_read_f16(const vkf_checkpoint *ck, const vkf_safetensors_info *info,
                                   size_t out_count, uint16_t *out_values);

#endif
