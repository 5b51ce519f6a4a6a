/* The device side of `vkf generate`: a KV cache, a prefill plan and a decode plan of one decoder
 * model sharing its weights and the cache, each recorded once; a step writes its small inputs and
 * re-submits the recorded command list. */
#ifndef VKF_RUNTIME_GENERATE_ENGINE_H
#define VKF_RUNTIME_GENERATE_ENGINE_H

#include <stdint.h>

#include "host/device.h"
#include "models/arch/decoder.h"

/* The most ragged plans an engine holds (sizes and their logit-row variants). */
#define VKF_RAGGED_PLANS_MAX 96

typedef struct vkf_gen_engine vkf_gen_engine;

typedef struct vkf_gen_engine_options {
  int64_t batch;         /* rows, >= 1 */
  int64_t prompt_len;    /* the longest prompt: prefill processes every row padded to it */
  int64_t capacity;      /* cache positions; prompt_len + new tokens must fit */
  vkf_dtype dtype;       /* weights and activations */
  vkf_dtype cache_dtype; /* of the KV cache */
  int profile;           /* timestamps per dispatch (vkf bench generate) */
  int64_t chunk;         /* prompts longer than this run in chunks of it against the cache
                            (0: 512), so no plan is sized by the longest prompt */
  int incremental;       /* the prefill plan runs against the cache even for short prompts, so
                            vkf_gen_engine_extend can append tokens to a cached sequence (chat) */
  int row_plans;         /* decode plans of 1, 2, 4 ... rows too, for vkf_gen_engine_step_rows */
  int64_t small_chunk;   /* incremental engines: a second plan of this many tokens a row (< chunk;
                            0: none), which vkf_gen_engine_extend_rows runs when every row's
                            tokens fit it */
  int next_ids;          /* the decode plans also take greedy decoding's argmax on the device, for
                            vkf_gen_engine_step_ids (one more small dispatch a step) */
  int64_t ragged_rows;   /* incremental engines (softmax attention, no sliding window): plans of
                            1, 2, 3, 4, 6, 8, 12 ... and this many token rows for
                            vkf_gen_engine_ragged (0: none; a model that cannot take them leaves
                            them out: see vkf_gen_engine_ragged_rows), with their logit-row
                            variants at most VKF_RAGGED_PLANS_MAX plans */
  int ragged_only;       /* with ragged_rows, where the model takes them: only the ragged plans
                            (serve's slots), none of the batch's prefill and decode plans; the
                            calls that run those return VKF_STATUS_UNSUPPORTED */
} vkf_gen_engine_options;

vkf_status vkf_gen_engine_create(vkf_device *device, vkf_decoder_model *model,
                                 const vkf_gen_engine_options *options, vkf_gen_engine **out);
void vkf_gen_engine_destroy(vkf_gen_engine *engine);

/* Runs the prompts: ids [batch, prompt_len] row-major (right-padded: row b's tokens are the first
 * lens[b], the rest any valid id), lens[b] in [1, prompt_len]. Writes the cache rows 0 .. lens[b]-1
 * (padding rows too, which later steps overwrite and kv_len hides) and returns in *out_logits the
 * logits [batch, vocab] of each row's last prompt token (owned by the engine, valid until the next
 * call). */
vkf_status vkf_gen_engine_prefill(vkf_gen_engine *engine, const int32_t *ids, const int64_t *lens,
                                  const float **out_logits);
/* Appends ids[0..count) at cache positions start .. start + count - 1 of the one row of an
 * incremental engine (options.incremental, batch 1): positions 0 .. start - 1 must hold the
 * sequence's earlier tokens (later ones are overwritten or never attended). start + count must
 * leave a position free. *out_logits: the logits [1, vocab] of the last token. */
vkf_status vkf_gen_engine_extend(vkf_gen_engine *engine, const int32_t *ids, int64_t count,
                                 int64_t start, const float **out_logits);
/* The tokens a prefill or extend run computes per row. */
int64_t vkf_gen_engine_chunk(const vkf_gen_engine *engine);
/* Continuous batching (vkf serve): appends counts[r] <= chunk tokens ids[r * chunk ..] of each row
 * r at cache positions starts[r] .. starts[r] + counts[r] - 1, all rows in one run of an
 * incremental engine of any batch; row r's positions before starts[r] must hold its sequence. A
 * row with counts[r] == 0 takes no part: its run writes into the cache's last `chunk` positions,
 * which callers keep free (starts[r] + counts[r] <= capacity - chunk, else INVALID_ARGUMENT).
 * *out_logits: [batch, vocab], row r's at its last appended token (rows taking no part: any). */
vkf_status vkf_gen_engine_extend_rows(vkf_gen_engine *engine, const int32_t *ids,
                                      const int64_t *counts, const int64_t *starts,
                                      const float **out_logits);
/* One token per row at cache position positions[b] (< capacity; the row's previous tokens fill
 * 0 .. positions[b]-1): writes its key and value there, attends to positions 0 .. positions[b],
 * and returns the next logits [batch, vocab]. */
vkf_status vkf_gen_engine_step(vkf_gen_engine *engine, const int32_t *tokens,
                               const int64_t *positions, const float **out_logits);

/* vkf_gen_engine_step over rows 0 .. rows - 1 only (tokens and positions have `rows` entries;
 * *out_logits [rows, vocab]): the smallest of the decode plans (options.row_plans) holding them
 * runs, so a server with few busy slots does not compute the idle ones. */
vkf_status vkf_gen_engine_step_rows(vkf_gen_engine *engine, int64_t rows, const int32_t *tokens,
                                    const int64_t *positions, const float **out_logits);

/* vkf_gen_engine_step_rows for greedy decoding (options.next_ids): out_ids[r] gets the index of
 * the first maximum of row r's logits, taken on the device, so the step reads back 4 bytes a row
 * instead of its logits. */
vkf_status vkf_gen_engine_step_ids(vkf_gen_engine *engine, int64_t rows, const int32_t *tokens,
                                   const int64_t *positions, int32_t *out_ids);
/* Continuous batching over tokens (options.ragged_rows): row r of `rows` is token ids[r] of the
 * sequence in cache row seqs[r] at its position positions[r] (< capacity - 1): it writes its key
 * and value there and attends to that sequence's positions 0 .. positions[r], so the earlier
 * tokens of one sequence's prompt chunk must come as earlier rows of the same run (every row's
 * cache write precedes every row's attention). One run of the smallest ragged plan holding `rows`
 * and then of the fewest logit rows (1, 4, 16 ... or min(its rows, batch)) holding logit_count
 * (the padding rows write cache row 0's last position, which callers keep free). *out_logits: [logit_count, vocab], the logits of rows logit_rows[0 .. logit_count)
 * (logit_count <= min(rows, batch)). */
vkf_status vkf_gen_engine_ragged(vkf_gen_engine *engine, int64_t rows, const int32_t *ids,
                                 const int64_t *seqs, const int64_t *positions,
                                 int64_t logit_count, const int64_t *logit_rows,
                                 const float **out_logits);
/* The token rows the last successful step, extend or ragged run computed: its plan's rows
 * (batch x chunk for a prefill chunk), padding included. */
int64_t vkf_gen_engine_rows_run(const vkf_gen_engine *engine);
/* The most rows a vkf_gen_engine_ragged run takes (0: the engine has no ragged plans). */
int64_t vkf_gen_engine_ragged_rows(const vkf_gen_engine *engine);

/* The rows of the smallest ragged plan of at least `rows` rows (up), or of the largest of at most
 * `rows` (!up); 0 where there is none. */
int64_t vkf_gen_engine_ragged_fit(const vkf_gen_engine *engine, int64_t rows, int up);

/* Ragged plan i (0 .. vkf_gen_engine_ragged_plans - 1, by rows, then logit rows)'s runner. */
int vkf_gen_engine_ragged_plans(const vkf_gen_engine *engine);
struct vkf_runner *vkf_gen_engine_ragged_runner(const vkf_gen_engine *engine, int i);

/* The KV cache both plans bind (beam search reorders its rows between steps, kv_reorder.h). */
struct vkf_kv_cache *vkf_gen_engine_cache(const vkf_gen_engine *engine);

/* The decode plan's runner and graph (per-dispatch profiles; the runner's session holds the
 * timestamps of the last step when profiling). */
struct vkf_runner *vkf_gen_engine_decode_runner(const vkf_gen_engine *engine);
const vkf_graph *vkf_gen_engine_decode_graph(const vkf_gen_engine *engine);

/* Device bytes: the weights (held once, by the prefill plan), the cache, and both plans' own
 * buffers (arenas, inputs, outputs). A ragged-only engine: prefill_plan is its first ragged plan
 * (which holds the weights), decode_plan the other ragged plans together. */
typedef struct vkf_gen_engine_memory {
  uint64_t prefill_plan, decode_plan, cache;
} vkf_gen_engine_memory;
vkf_gen_engine_memory vkf_gen_engine_memory_of(const vkf_gen_engine *engine);

#endif
