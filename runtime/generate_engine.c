/* Owns the prefill and decode runners and the KV cache of one generation, and the per-step input
 * arrays (positions, cache offsets, kv lengths, logit rows). With a vkf_attention kind of the
 * linear family the "cache" holds each layer's state [B, H, F, Dh + 1] instead (its key buffers,
 * capacity F rows of Dh + 1): constant memory whatever the length, zeroed before each prefill. */
#include "runtime/generate_engine.h"

#include <stdlib.h>
#include <string.h>

#include "graph/lower/lower_matmul.h"
#include "graph/passes/passes.h"
#include "host/buffer.h"
#include "host/device.h"
#include "host/kv_cache.h"
#include "models/arch/efficient_attention.h"
#include "host/runner.h"

struct vkf_gen_engine {
  vkf_device *device;
  int linear_state; /* the cache's key buffers are linear-attention states */
  vkf_decoder_model *model;
  vkf_gen_engine_options o;
  int64_t vocab;
  vkf_kv_cache *cache;
  vkf_decoder_graph prefill_g, decode_g, small_g;
  vkf_runner *prefill, *decode, *small; /* small: options.small_chunk tokens a row (or NULL) */
  /* options.row_plans: decode plans of 1, 2, 4 ... rows (< batch) over the cache's first rows */
  int row_plan_count;
  vkf_decoder_graph row_g[8], small_row_g[8];
  int64_t row_b[8];
  vkf_runner *row[8], *small_row[8]; /* small_row: the small plan of row_b[i] rows too */
  /* options.ragged_rows: token-row plans of rag_b[i] rows (1, 2, 3, 4, 6, 8, 12 ... ragged_rows:
   * each a third or a half above the last, so a step's padding stays under a third), each with
   * logits for rag_l[i] rows (1, 4, 16 ... and min(rows, batch)): a head row costs about as
   * much as a body row on lavapipe (SmolLM2's 49152-id vocabulary), so a prompt step does not pay
   * for a logit row per slot. Ordered by rows, then logit rows. */
  int rag_count;
  vkf_decoder_graph rag_g[VKF_RAGGED_PLANS_MAX];
  int64_t rag_b[VKF_RAGGED_PLANS_MAX], rag_l[VKF_RAGGED_PLANS_MAX];
  vkf_runner *rag[VKF_RAGGED_PLANS_MAX];
  int64_t chunk;    /* tokens per prefill run; < prompt_len when the prompt runs in chunks */
  int chunked;      /* the prefill plan is a DECODE-mode plan of `chunk` tokens */
  int64_t rows_run; /* vkf_gen_engine_rows_run */
  int32_t *scratch; /* [batch · prompt_len]: positions and the other i32 inputs */
  float *logits;    /* [batch, vocab] */
};

/* Binds every layer's K and V cache inputs of `g` (the state alone with linear_state) to the
 * cache's buffers; *count gets the number of bindings. */
static vkf_runner_binding *cache_bindings(const vkf_gen_engine *e, const vkf_decoder_graph *g,
                                          uint32_t *count) {
  vkf_runner_binding *b = calloc((size_t)(2 * g->layers), sizeof *b);
  *count = 0;
  for (int64_t l = 0; b && l < g->layers; l++) {
    b[(*count)++] = (vkf_runner_binding){g->cache_k[l], vkf_kv_cache_keys(e->cache, l)};
    if (!e->linear_state)
      b[(*count)++] = (vkf_runner_binding){g->cache_v[l], vkf_kv_cache_values(e->cache, l)};
  }
  return b;
}

static vkf_status make_runner(vkf_device *device, vkf_gen_engine *e, vkf_decoder_graph *g,
                              const vkf_runner *share, vkf_runner **out) {
  /* the prologue folds only where they pay on this device (graph/passes/passes.h) */
  vkf_pass_options po = vkf_gemm_pass_options(vkf_device_caps_get(device));
  VKF_RETURN_IF_ERROR(vkf_passes_run(g->graph, &po, NULL));
  uint32_t count;
  vkf_runner_binding *b = cache_bindings(e, g, &count);
  if (!b) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "cache bindings");
  vkf_runner_options ro = {.profile = e->o.profile,
                           .bindings = b,
                           .binding_count = count,
                           .share_constants_with = share};
  vkf_status s = vkf_runner_create(device, g->graph, &ro, out);
  free(b);
  return s;
}

/* The ragged plan after one of `rows`: 1, 2, 3, 4, 6, 8, 12, 16, 24 ... (2^k and 3 x 2^k). A
 * plan's padding rows cost as much as its tokens on a CPU device, and with powers of two alone a
 * step of 16 decoding rows could take a waiting prompt one token a step (a plan of 16) or pay 15
 * padding rows (32). */
static int64_t next_ragged_rows(int64_t rows) {
  if (rows < 2) return 2;
  return rows & (rows - 1) ? rows / 3 * 4 : rows / 2 * 3;
}

vkf_status vkf_gen_engine_create(vkf_device *device, vkf_decoder_model *model,
                                 const vkf_gen_engine_options *options, vkf_gen_engine **out) {
  *out = NULL;
  const vkf_hf_config *c = vkf_decoder_config(model);
  vkf_gen_engine *e = calloc(1, sizeof *e);
  if (!e) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "generation");
  e->device = device;
  e->model = model;
  e->o = *options;
  int64_t features = vkf_efficient_state_features(&c->attention, c->head_dim);
  e->linear_state = features > 0;
  e->vocab = c->vocab_size;
  e->chunk = e->o.chunk > 0 ? e->o.chunk : 512;
  e->chunked = e->o.prompt_len > e->chunk || e->o.incremental;
  if (!e->chunked) e->chunk = e->o.prompt_len;
  int64_t bt = e->o.batch * e->chunk;
  e->scratch = malloc((size_t)bt * sizeof *e->scratch + 16);
  e->logits = malloc((size_t)(2 * e->o.batch * e->vocab) * sizeof *e->logits);
  vkf_status s =
      e->scratch && e->logits ? VKF_OK : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "generation");
  vkf_kv_cache_options co = {.batch = e->o.batch,
                             .layers = c->num_hidden_layers,
                             .kv_heads = c->num_key_value_heads,
                             .capacity = e->o.capacity,
                             .head_dim = c->head_dim,
                             .dtype = e->o.cache_dtype};
  if (e->linear_state) {
    co.kv_heads = c->num_attention_heads;
    co.capacity = features;
    co.head_dim = c->head_dim + 1;
    co.dtype = VKF_F32;
  }
  if (!s) s = vkf_kv_cache_create(device, &co, &e->cache);
  /* ragged plans only: the first holds the weights, the others share them */
  int rect = !(e->o.ragged_only && e->o.ragged_rows > 0 && e->o.incremental && !e->linear_state &&
               vkf_decoder_takes_ragged(model));
  vkf_decoder_build_options po = {.batch = e->o.batch,
                                  .seq_len = e->chunk,
                                  .dtype = e->o.dtype,
                                  .logits = 1,
                                  .mode = e->chunked ? VKF_DECODER_DECODE : VKF_DECODER_PREFILL,
                                  .capacity = e->o.capacity,
                                  .cache_dtype = e->o.cache_dtype};
  if (!s && rect) s = vkf_decoder_build(model, &po, &e->prefill_g);
  vkf_decoder_build_options dopt = po;
  dopt.seq_len = 1;
  dopt.mode = VKF_DECODER_DECODE;
  dopt.next_ids = e->o.next_ids;
  if (!s && rect) s = vkf_decoder_build(model, &dopt, &e->decode_g);
  vkf_decoder_build_options sopt = dopt;
  sopt.seq_len = e->o.small_chunk;
  sopt.next_ids = 0;
  int small = rect && e->o.incremental && e->o.small_chunk > 1 && e->o.small_chunk < e->chunk;
  if (!s && small) s = vkf_decoder_build(model, &sopt, &e->small_g);
  if (!s && rect) s = make_runner(device, e, &e->prefill_g, NULL, &e->prefill);
  if (!s && rect) s = make_runner(device, e, &e->decode_g, e->prefill, &e->decode);
  if (!s && small) s = make_runner(device, e, &e->small_g, e->prefill, &e->small);
  for (int64_t rows = 1; !s && rect && e->o.row_plans && !e->linear_state && rows < e->o.batch &&
                         e->row_plan_count < 8;
       rows *= 2) {
    vkf_decoder_build_options ro = dopt;
    ro.batch = rows;
    int i = e->row_plan_count;
    e->row_b[i] = rows;
    s = vkf_decoder_build(model, &ro, &e->row_g[i]);
    if (!s) e->row_plan_count++; /* released on destroy, even when its runner fails */
    if (!s) s = make_runner(device, e, &e->row_g[i], e->prefill, &e->row[i]);
    vkf_decoder_build_options so = sopt;
    so.batch = rows;
    if (!s && small) s = vkf_decoder_build(model, &so, &e->small_row_g[i]);
    if (!s && small) s = make_runner(device, e, &e->small_row_g[i], e->prefill, &e->small_row[i]);
  }
  /* Ragged plans: none when the model cannot take them */
  for (int64_t rows = 1; !s && e->o.ragged_rows > 0 && e->o.incremental && !e->linear_state &&
                         vkf_decoder_takes_ragged(model);
       rows = next_ragged_rows(rows) < e->o.ragged_rows ? next_ragged_rows(rows)
                                                        : e->o.ragged_rows) {
    int64_t most = rows < e->o.batch ? rows : e->o.batch;
    for (int64_t lr = 1; !s; lr = lr * 4 < most ? lr * 4 : most) {
      if (e->rag_count == VKF_RAGGED_PLANS_MAX) {
        s = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                            "ragged plans up to %lld rows for a batch of %lld: more than %d plans",
                            (long long)e->o.ragged_rows, (long long)e->o.batch,
                            VKF_RAGGED_PLANS_MAX);
        break;
      }
      vkf_decoder_build_options ro = dopt;
      ro.batch = rows;
      ro.next_ids = 0;
      ro.cache_batch = e->o.batch;
      ro.logit_rows = lr;
      int i = e->rag_count;
      s = vkf_decoder_build(model, &ro, &e->rag_g[i]);
      e->rag_b[i] = rows;
      e->rag_l[i] = lr;
      if (!s) e->rag_count++;
      if (!s) s = make_runner(device, e, &e->rag_g[i], rect ? e->prefill : e->rag[0], &e->rag[i]);
      if (lr == most) break;
    }
    if (rows == e->o.ragged_rows) break;
  }
  if (s) {
    vkf_gen_engine_destroy(e);
    return s;
  }
  *out = e;
  return VKF_OK;
}

void vkf_gen_engine_destroy(vkf_gen_engine *e) {
  if (!e) return;
  for (int i = e->rag_count - 1; i >= 0; i--) {
    /* before the prefill runner, whose weights they borrow (or the first ragged one's, which
     * goes last) */
    vkf_runner_destroy(e->rag[i]);
    vkf_decoder_graph_release(&e->rag_g[i]);
  }
  for (int i = 0; i < e->row_plan_count; i++) {
    vkf_runner_destroy(e->row[i]); /* before the prefill runner, as the decode one */
    vkf_runner_destroy(e->small_row[i]);
    vkf_decoder_graph_release(&e->row_g[i]);
    vkf_decoder_graph_release(&e->small_row_g[i]);
  }
  vkf_runner_destroy(e->decode); /* before the prefill runner, whose weight buffers it borrows */
  vkf_runner_destroy(e->small);
  vkf_runner_destroy(e->prefill);
  vkf_decoder_graph_release(&e->small_g);
  vkf_decoder_graph_release(&e->decode_g);
  vkf_decoder_graph_release(&e->prefill_g);
  vkf_kv_cache_destroy(e->cache);
  free(e->scratch);
  free(e->logits);
  free(e);
}

static vkf_status set_i32(vkf_runner *r, vkf_value v, const int32_t *data, int64_t count) {
  return vkf_runner_set(r, v, data, (size_t)count * sizeof *data);
}

/* One prefill run over prompt columns [c0, c0 + chunk) (the whole prompt when not chunked) of
 * ids [batch, p], row r's column 0 at cache position bases[r] (NULL: 0; the extends set it). */
/* One run of plan (g, runner) of b rows and n tokens a row: rows 0 .. b-1 of the cache. */
static vkf_status run_chunk(vkf_gen_engine *e, const vkf_decoder_graph *g, vkf_runner *runner,
                            int64_t b, int64_t n, const int32_t *ids, const int64_t *lens,
                            int64_t p, const int64_t *bases, int64_t c0) {
  int64_t cap = e->o.capacity;
  /* Columns past the prompt (the last chunk's tail) repeat a valid id; their positions are
   * clamped below the capacity and their cache rows, written past every row's prompt, are
   * overwritten by the tokens generated there or never attended. */
  for (int64_t r = 0; r < b; r++)
    for (int64_t t = 0; t < n; t++) {
      int64_t col = c0 + t < p ? c0 + t : p - 1;
      e->scratch[r * n + t] = ids[r * p + col];
    }
  VKF_RETURN_IF_ERROR(set_i32(runner, g->input_ids, e->scratch, b * n));
#define BASE(r) (bases ? bases[r] : 0)
  for (int64_t i = 0; i < b * n; i++) {
    int64_t pos = BASE(i / n) + c0 + i % n;
    e->scratch[i] = (int32_t)(pos < cap ? pos : cap - 1);
  }
  VKF_RETURN_IF_ERROR(set_i32(runner, g->positions, e->scratch, b * n));
  for (int64_t r = 0; r < b; r++) e->scratch[r] = (int32_t)(BASE(r) + c0);
  if (vkf_value_valid(g->cache_start))
    VKF_RETURN_IF_ERROR(set_i32(runner, g->cache_start, e->scratch, b));
  if (e->linear_state) {
    /* Padding (past a row's prompt) leaves the state as it is. */
    for (int64_t r = 0; r < b; r++)
      for (int64_t t = 0; t < n; t++) e->scratch[r * n + t] = c0 + t < lens[r];
    VKF_RETURN_IF_ERROR(set_i32(runner, g->attention_mask, e->scratch, b * n));
  }
  if (e->chunked && vkf_value_valid(g->kv_len)) {
    for (int64_t r = 0; r < b; r++)
      e->scratch[r] = (int32_t)(BASE(r) + c0 + n < cap ? BASE(r) + c0 + n : cap);
#undef BASE
    VKF_RETURN_IF_ERROR(set_i32(runner, g->kv_len, e->scratch, b));
  }
  /* Each row's last prompt token, where it lies in this chunk (else any row: not read). */
  for (int64_t r = 0; r < b; r++) {
    int64_t last = lens[r] - 1 - c0;
    e->scratch[r] = (int32_t)(r * n + (last >= 0 && last < n ? last : 0));
  }
  VKF_RETURN_IF_ERROR(set_i32(runner, g->last_index, e->scratch, b));
  VKF_RETURN_IF_ERROR(vkf_runner_run(runner));
  float *chunk_logits = e->logits + b * e->vocab; /* the second half: this chunk's rows */
  VKF_RETURN_IF_ERROR(vkf_runner_get(runner, g->logits, chunk_logits,
                                     (size_t)(b * e->vocab) * sizeof *chunk_logits));
  for (int64_t r = 0; r < b; r++)
    if (lens[r] - 1 >= c0 && lens[r] - 1 < c0 + n)
      memcpy(e->logits + r * e->vocab, chunk_logits + r * e->vocab,
             (size_t)e->vocab * sizeof *e->logits);
  return VKF_OK;
}

/* The batch's prefill and decode plans exist (not a ragged-only engine). */
static vkf_status need_rect(const vkf_gen_engine *e) {
  return e->prefill ? VKF_OK
                    : vkf_status_make(VKF_STATUS_UNSUPPORTED,
                                      "this generation engine has only ragged plans "
                                      "(vkf_gen_engine_ragged)");
}

/* A run of the full prefill plan (chunk tokens a row). */
static vkf_status prefill_chunk(vkf_gen_engine *e, const int32_t *ids, const int64_t *lens,
                                int64_t p, const int64_t *bases, int64_t c0) {
  return run_chunk(e, &e->prefill_g, e->prefill, e->o.batch, e->chunk, ids, lens, p, bases, c0);
}

vkf_status vkf_gen_engine_prefill(vkf_gen_engine *e, const int32_t *ids, const int64_t *lens,
                                  const float **out_logits) {
  VKF_RETURN_IF_ERROR(need_rect(e));
  int64_t b = e->o.batch, p = e->o.prompt_len;
  for (int64_t r = 0; r < b; r++)
    if (lens[r] < 1 || lens[r] > p)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "prompt %lld has %lld tokens (1..%lld)",
                             (long long)r, (long long)lens[r], (long long)p);
  if (e->linear_state) /* a new generation starts from the empty state */
    for (int64_t l = 0; l < vkf_kv_cache_options_of(e->cache)->layers; l++) {
      vkf_buffer *k = vkf_kv_cache_keys(e->cache, l);
      VKF_RETURN_IF_ERROR(vkf_buffer_zero(e->device, k, 0, vkf_buffer_size(k)));
    }
  for (int64_t c0 = 0; c0 < p; c0 += e->chunk)
    VKF_RETURN_IF_ERROR(prefill_chunk(e, ids, lens, p, NULL, c0));
  *out_logits = e->logits;
  return VKF_OK;
}

vkf_status vkf_gen_engine_extend(vkf_gen_engine *e, const int32_t *ids, int64_t count,
                                 int64_t start, const float **out_logits) {
  VKF_RETURN_IF_ERROR(need_rect(e));
  if (e->o.batch != 1 || !e->chunked || e->linear_state)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "extending the cache needs an incremental engine of one row over a "
                           "softmax-attention cache");
  if (count < 1 || start < 0 || start + count >= e->o.capacity)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%lld tokens after %lld cached ones do not fit the context of %lld "
                           "(one position stays free for the next token)",
                           (long long)count, (long long)start, (long long)e->o.capacity);
  for (int64_t c0 = 0; c0 < count; c0 += e->chunk)
    VKF_RETURN_IF_ERROR(prefill_chunk(e, ids, &count, count, &start, c0));
  *out_logits = e->logits;
  return VKF_OK;
}

int64_t vkf_gen_engine_chunk(const vkf_gen_engine *e) {
  return e->chunk;
}

vkf_status vkf_gen_engine_extend_rows(vkf_gen_engine *e, const int32_t *ids,
                                      const int64_t *counts, const int64_t *starts,
                                      const float **out_logits) {
  VKF_RETURN_IF_ERROR(need_rect(e));
  int64_t b = e->o.batch, n = e->chunk, cap = e->o.capacity;
  if (!e->o.incremental || e->linear_state || cap < 2 * n)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "extending rows needs an incremental engine over a softmax-attention "
                           "cache of at least twice its chunk (%lld positions)", (long long)n);
  int32_t *rows = malloc((size_t)(b * n) * sizeof *rows + 1);
  int64_t *lens = malloc((size_t)b * sizeof *lens + 1), *bases = malloc((size_t)b * sizeof *bases + 1);
  vkf_status st = rows && lens && bases ? VKF_OK
                                        : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "extending rows");
  int64_t most = 0, used = 0;
  for (int64_t r = 0; !st && r < b; r++) {
    int64_t c = counts[r];
    if (c < 0 || c > n || (c && (starts[r] < 0 || starts[r] + c > cap - n)))
      st = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "row %lld: %lld tokens at position %lld (at most %lld, below %lld)",
                           (long long)r, (long long)c, (long long)(c ? starts[r] : 0),
                           (long long)n, (long long)(cap - n));
    /* a row taking no part writes its chunk into the reserved tail, which no sequence reaches */
    bases[r] = c ? starts[r] : cap - n;
    lens[r] = c ? c : 1;
    if (c > most) most = c;
    if (c) used = r + 1;
  }
  /* the small plan when every row's tokens fit it: a few new prompt tokens cost a few */
  int64_t m = e->small && most <= e->o.small_chunk ? e->o.small_chunk : n;
  for (int64_t r = 0; !st && r < b; r++)
    for (int64_t t = 0; t < m; t++) {
      int64_t c = counts[r];
      rows[r * m + t] = c ? ids[r * n + (t < c ? t : c - 1)] : 0; /* parked rows: any valid id */
    }
  /* and, with the row plans, the fewest rows holding every row taking part */
  const vkf_decoder_graph *sg = &e->small_g;
  vkf_runner *sr = e->small;
  int64_t sb = b;
  for (int i = 0; m < n && i < e->row_plan_count; i++)
    if (e->small_row[i] && e->row_b[i] >= used) {
      sg = &e->small_row_g[i], sr = e->small_row[i], sb = e->row_b[i];
      break;
    }
  if (!st)
    st = m < n ? run_chunk(e, sg, sr, sb, m, rows, lens, m, bases, 0)
               : prefill_chunk(e, rows, lens, n, bases, 0);
  free(rows);
  free(lens);
  free(bases);
  if (!st) *out_logits = e->logits;
  if (!st) e->rows_run = m < n ? sb * m : b * n;
  return st;
}

/* Sets a decode step's inputs and runs it on the smallest decode plan holding `rows` rows; *g,
 * *runner and *b: that plan and its rows. */
static vkf_status run_step(vkf_gen_engine *e, int64_t rows, const int32_t *tokens,
                           const int64_t *positions, const vkf_decoder_graph **out_g,
                           vkf_runner **out_runner, int64_t *out_b) {
  VKF_RETURN_IF_ERROR(need_rect(e));
  if (rows < 1 || rows > e->o.batch)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%lld rows of an engine of %lld",
                           (long long)rows, (long long)e->o.batch);
  /* the smallest plan with that many rows: the rows past them are not computed */
  int64_t b = e->o.batch;
  const vkf_decoder_graph *g = &e->decode_g;
  vkf_runner *runner = e->decode;
  for (int i = 0; i < e->row_plan_count; i++)
    if (e->row_b[i] >= rows) {
      g = &e->row_g[i];
      runner = e->row[i];
      b = e->row_b[i];
      break;
    }
  for (int64_t r = 0; r < b; r++)
    if (positions[r] < 0 || positions[r] >= e->o.capacity)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "row %lld: position %lld is outside the context of %lld tokens",
                             (long long)r, (long long)positions[r], (long long)e->o.capacity);
  VKF_RETURN_IF_ERROR(set_i32(runner, g->input_ids, tokens, b));
  for (int64_t r = 0; r < b; r++) e->scratch[r] = (int32_t)positions[r];
  VKF_RETURN_IF_ERROR(set_i32(runner, g->positions, e->scratch, b));
  if (e->linear_state) {
    for (int64_t r = 0; r < b; r++) e->scratch[r] = 1;
    VKF_RETURN_IF_ERROR(set_i32(runner, g->attention_mask, e->scratch, b));
  } else {
    VKF_RETURN_IF_ERROR(set_i32(runner, g->cache_start, e->scratch, b));
    for (int64_t r = 0; r < b; r++) e->scratch[r] = (int32_t)positions[r] + 1;
    VKF_RETURN_IF_ERROR(set_i32(runner, g->kv_len, e->scratch, b));
  }
  for (int64_t r = 0; r < b; r++) e->scratch[r] = (int32_t)r;
  VKF_RETURN_IF_ERROR(set_i32(runner, g->last_index, e->scratch, b));
  VKF_RETURN_IF_ERROR(vkf_runner_run(runner));
  *out_g = g;
  *out_runner = runner;
  *out_b = b;
  e->rows_run = b;
  return VKF_OK;
}

vkf_status vkf_gen_engine_step_rows(vkf_gen_engine *e, int64_t rows, const int32_t *tokens,
                                    const int64_t *positions, const float **out_logits) {
  const vkf_decoder_graph *g;
  vkf_runner *runner;
  int64_t b;
  VKF_RETURN_IF_ERROR(run_step(e, rows, tokens, positions, &g, &runner, &b));
  VKF_RETURN_IF_ERROR(vkf_runner_get(runner, g->logits, e->logits,
                                     (size_t)(b * e->vocab) * sizeof *e->logits));
  *out_logits = e->logits;
  return VKF_OK;
}

vkf_status vkf_gen_engine_step(vkf_gen_engine *e, const int32_t *tokens, const int64_t *positions,
                               const float **out_logits) {
  return vkf_gen_engine_step_rows(e, e->o.batch, tokens, positions, out_logits);
}

vkf_status vkf_gen_engine_step_ids(vkf_gen_engine *e, int64_t rows, const int32_t *tokens,
                                   const int64_t *positions, int32_t *out_ids) {
  if (!e->o.next_ids)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "the engine was created without next_ids: read the logits instead");
  const vkf_decoder_graph *g;
  vkf_runner *runner;
  int64_t b;
  VKF_RETURN_IF_ERROR(run_step(e, rows, tokens, positions, &g, &runner, &b));
  /* 4 bytes a row of the plan; the caller gets its first `rows` */
  VKF_RETURN_IF_ERROR(
      vkf_runner_get(runner, g->next_ids, e->scratch, (size_t)b * sizeof *e->scratch));
  memcpy(out_ids, e->scratch, (size_t)rows * sizeof *out_ids);
  return VKF_OK;
}

int64_t vkf_gen_engine_rows_run(const vkf_gen_engine *e) {
  return e->rows_run;
}

int64_t vkf_gen_engine_ragged_rows(const vkf_gen_engine *e) {
  return e->rag_count ? e->rag_b[e->rag_count - 1] : 0;
}

int64_t vkf_gen_engine_ragged_fit(const vkf_gen_engine *e, int64_t rows, int up) {
  int64_t best = 0;
  for (int i = 0; i < e->rag_count; i++) {
    int64_t b = e->rag_b[i];
    if (up ? b >= rows && (!best || b < best) : b <= rows && b > best) best = b;
  }
  return best;
}

int vkf_gen_engine_ragged_plans(const vkf_gen_engine *e) {
  return e->rag_count;
}

vkf_runner *vkf_gen_engine_ragged_runner(const vkf_gen_engine *e, int i) {
  return i >= 0 && i < e->rag_count ? e->rag[i] : NULL;
}

vkf_status vkf_gen_engine_ragged(vkf_gen_engine *e, int64_t rows, const int32_t *ids,
                                 const int64_t *seqs, const int64_t *positions,
                                 int64_t logit_count, const int64_t *logit_rows,
                                 const float **out_logits) {
  int64_t cap = e->o.capacity, nb = e->o.batch;
  int i = 0;
  while (i < e->rag_count && (e->rag_b[i] < rows || e->rag_l[i] < logit_count)) i++;
  if (rows < 1 || i == e->rag_count || logit_count < 0 || logit_count > rows ||
      logit_count > nb)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "a ragged run of %lld rows and %lld logit rows (at most %lld rows, "
                           "%lld logit rows)",
                           (long long)rows, (long long)logit_count,
                           (long long)vkf_gen_engine_ragged_rows(e), (long long)nb);
  for (int64_t r = 0; r < rows; r++)
    if (seqs[r] < 0 || seqs[r] >= nb || positions[r] < 0 || positions[r] >= cap - 1)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "row %lld: sequence %lld of %lld, position %lld (below %lld)",
                             (long long)r, (long long)seqs[r], (long long)nb,
                             (long long)positions[r], (long long)(cap - 1));
  for (int64_t l = 0; l < logit_count; l++)
    if (logit_rows[l] < 0 || logit_rows[l] >= rows)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "logit row %lld is %lld of %lld rows",
                             (long long)l, (long long)logit_rows[l], (long long)rows);
  const vkf_decoder_graph *g = &e->rag_g[i];
  vkf_runner *runner = e->rag[i];
  int64_t b = e->rag_b[i], lr = e->rag_l[i];
  /* padding rows: token 0 at cache row 0's last position (kept free), attending to key 0 */
  int32_t *x = e->scratch; /* [batch · chunk]: room for 2 b entries, else its own */
  int32_t *own = NULL;
  if (2 * b > nb * e->chunk) {
    own = malloc((size_t)(2 * b) * sizeof *own);
    if (!own) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "ragged inputs");
    x = own;
  }
  vkf_status st = VKF_OK;
  for (int64_t r = 0; r < b; r++) x[r] = r < rows ? ids[r] : 0;
  st = set_i32(runner, g->input_ids, x, b);
  for (int64_t r = 0; r < b; r++) x[r] = (int32_t)(r < rows ? positions[r] : cap - 1);
  if (!st) st = set_i32(runner, g->positions, x, b);
  for (int64_t r = 0; r < b; r++) x[b + r] = (int32_t)(r < rows ? seqs[r] : 0);
  if (!st) st = set_i32(runner, g->cache_start, x, 2 * b);
  for (int64_t r = 0; r < b; r++) x[r] = (int32_t)(r < rows ? positions[r] + 1 : 1);
  if (!st) st = set_i32(runner, g->kv_len, x, 2 * b);
  for (int64_t l = 0; l < lr; l++) x[l] = (int32_t)(l < logit_count ? logit_rows[l] : 0);
  if (!st) st = set_i32(runner, g->last_index, x, lr);
  free(own);
  if (!st) st = vkf_runner_run(runner);
  if (!st)
    st = vkf_runner_get(runner, g->logits, e->logits, (size_t)(lr * e->vocab) * sizeof *e->logits);
  if (st) return st;
  *out_logits = e->logits;
  e->rows_run = b;
  return VKF_OK;
}

struct vkf_kv_cache *vkf_gen_engine_cache(const vkf_gen_engine *e) {
  return e->cache;
}

struct vkf_runner *vkf_gen_engine_decode_runner(const vkf_gen_engine *e) {
  return e->decode;
}
const vkf_graph *vkf_gen_engine_decode_graph(const vkf_gen_engine *e) {
  return e->decode_g.graph;
}

vkf_gen_engine_memory vkf_gen_engine_memory_of(const vkf_gen_engine *e) {
  if (!e->prefill) { /* ragged plans only: the first holds the weights, the others are summed */
    uint64_t rest = 0;
    for (int i = 1; i < e->rag_count; i++) rest += vkf_runner_device_bytes(e->rag[i]);
    return (vkf_gen_engine_memory){e->rag_count ? vkf_runner_device_bytes(e->rag[0]) : 0, rest,
                                   vkf_kv_cache_bytes(e->cache)};
  }
  return (vkf_gen_engine_memory){vkf_runner_device_bytes(e->prefill),
                                 vkf_runner_device_bytes(e->decode), vkf_kv_cache_bytes(e->cache)};
}
