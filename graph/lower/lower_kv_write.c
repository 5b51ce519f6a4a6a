/* Owns lowering of KV_WRITE (in-place write of new rows into a KV cache) onto
 * shaders/kv_write.comp. The output is the cache itself: the dispatch binds the cache's range for
 * write, and the plan's hazard analysis orders it against earlier and later users of that range. A
 * cache whose binding would exceed maxStorageBufferRange is written in slices chosen here (whole
 * batches, or heads of one batch), since the generic slicer (lower_slice.c) cannot index `start`
 * per batch; a single [C, D] head slab that still does not fit is an error naming the node. */
#include <inttypes.h>
#include <string.h>

#include "graph/lower/lower_node.h"
#include "graph/lower/lower_layout.h"

static uint64_t span(const vkf_lower_ctx *ctx, const vkf_plan_tensor *t) {
  uint64_t begin, end;
  vkf_lower_binding_range(ctx, t, &begin, &end);
  return end - begin;
}

/* Restricts [B, H, ...] tensor t to batches [b, b + nb) and heads [h, h + nh). */
static vkf_plan_tensor sub(const vkf_plan_tensor *t, int64_t b, int64_t nb, int64_t h, int64_t nh) {
  vkf_plan_tensor s = *t;
  s.offset += (uint64_t)(b * t->strides[0] + h * t->strides[1]) * vkf_dtype_size(t->dtype);
  s.shape[0] = nb;
  s.shape[1] = nh;
  return s;
}

static int fits(const vkf_lower_ctx *ctx, const vkf_lower_node *n, int64_t nb, int64_t nh) {
  uint64_t range = ctx->caps->max_storage_buffer_range;
  if (!range) return 1;
  /* Slices at offset 0 bind the most (alignment rounding only ever shrinks later ones' start
   * by less than one alignment unit), so check the worst slice of each size. */
  for (int64_t b = 0; b + nb <= n->output.shape[0]; b += nb)
    for (int64_t h = 0; h + nh <= n->output.shape[1]; h += nh) {
      vkf_plan_tensor c = sub(&n->inputs[VKF_IN_KV_WRITE_CACHE], b, nb, h, nh);
      vkf_plan_tensor r = sub(&n->inputs[VKF_IN_KV_WRITE_ROWS], b, nb, h, nh);
      if (span(ctx, &c) > range || span(ctx, &r) > range) return 0;
    }
  return 1;
}

static vkf_status dispatch(const vkf_lower_ctx *ctx, const vkf_lower_node *n, int64_t b, int64_t nb,
                           int64_t h, int64_t nh) {
  char sbuf[64];
  vkf_plan_tensor rows = sub(&n->inputs[VKF_IN_KV_WRITE_ROWS], b, nb, h, nh);
  const vkf_plan_tensor *start = &n->inputs[VKF_IN_KV_WRITE_START];
  /* ragged rows (start [2, B]) reach any batch of the cache: it is bound whole */
  vkf_plan_tensor cache = sub(&n->inputs[VKF_IN_KV_WRITE_CACHE], b,
                              start->rank == 2 ? n->inputs[VKF_IN_KV_WRITE_CACHE].shape[0] : nb,
                              h, nh);
  int64_t count = vkf_plan_tensor_count(&rows);
  vkf_plan_dispatch d = {.node = n->name, .shader = "kv_write.comp"};
  /* Chooser: one define per f16 side; f32 otherwise (f16 -> f16 converts exactly through f32). */
  if (cache.dtype == VKF_F16) vkf_plan_dispatch_define(&d, "CACHE_F16");
  if (rows.dtype == VKF_F16) vkf_plan_dispatch_define(&d, "ROWS_F16");
  uint32_t rows_off = vkf_lower_bind(ctx, &d, &rows, VKF_ACCESS_READ);
  uint32_t start_off = vkf_lower_bind(ctx, &d, start, VKF_ACCESS_READ);
  uint32_t cache_off = vkf_lower_bind(ctx, &d, &cache, VKF_ACCESS_WRITE);
  int64_t cache_last = 0, rows_last = 0;
  for (uint32_t i = 0; i < 4; i++) {
    cache_last += (cache.shape[i] - 1) * cache.strides[i];
    rows_last += (rows.shape[i] - 1) * rows.strides[i];
  }
  if ((uint64_t)count > INT32_MAX || cache.shape[2] > INT32_MAX ||
      (uint64_t)cache_last + cache_off > UINT32_MAX || (uint64_t)rows_last + rows_off > UINT32_MAX)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "kv_write \"%s\": cache %s needs indices beyond "
                           "32 bits",
                           n->name, vkf_shape_format(cache.rank, cache.shape, sbuf, sizeof sbuf));
  vkf_plan_dispatch_push_u32(&d, (uint32_t)count);
  for (uint32_t i = 1; i < 4; i++) vkf_plan_dispatch_push_fastdiv(&d, (uint32_t)rows.shape[i]);
  vkf_plan_dispatch_push_u32(&d, rows_off);
  for (uint32_t i = 0; i < 4; i++) vkf_plan_dispatch_push_u32(&d, (uint32_t)rows.strides[i]);
  vkf_plan_dispatch_push_u32(&d, cache_off);
  for (uint32_t i = 0; i < 4; i++) vkf_plan_dispatch_push_u32(&d, (uint32_t)cache.strides[i]);
  vkf_plan_dispatch_push_u32(&d, start_off);
  vkf_plan_dispatch_push_u32(&d, (uint32_t)b);
  vkf_plan_dispatch_push_u32(&d, (uint32_t)cache.shape[2]);
  /* start [2, B] (ragged rows): the cache batch of each row follows the B positions */
  vkf_plan_dispatch_push_u32(&d, start->rank == 2 ? (uint32_t)rows.shape[0] : 0u);
  uint32_t wg = vkf_lower_workgroup_1d(ctx, 256);
  d.spec[0] = wg;
  d.spec_count = 1;
  d.groups[0] = vkf_lower_groups_1d(ctx, (uint64_t)count, wg);
  d.groups[1] = d.groups[2] = 1;
  return vkf_plan_add_dispatch(ctx->plan, &d);
}

vkf_status vkf_lower_kv_write(const vkf_lower_ctx *ctx, const vkf_lower_node *n) {
  char sbuf[64];
  const vkf_plan_tensor *cache = &n->inputs[VKF_IN_KV_WRITE_CACHE];
  const vkf_plan_tensor *rows = &n->inputs[VKF_IN_KV_WRITE_ROWS];
  if (n->op != VKF_OP_KV_WRITE || cache->rank != 4 || rows->rank != 4)
    return vkf_status_make(VKF_STATUS_INTERNAL, "%s \"%s\" is not a rank-4 kv_write",
                           vkf_op_name(n->op), n->name);
  if (n->output.buffer != cache->buffer || n->output.offset != cache->offset)
    return vkf_status_make(VKF_STATUS_INTERNAL,
                           "kv_write \"%s\": output is not the cache's storage", n->name);
  if ((cache->dtype == VKF_F16 || rows->dtype == VKF_F16) && !ctx->caps->storage_16bit)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "kv_write \"%s\": f16 cache or rows %s need 16-bit storage, which the "
                           "device lacks",
                           n->name, vkf_shape_format(rows->rank, rows->shape, sbuf, sizeof sbuf));
  int64_t bsz = cache->shape[0], heads = cache->shape[1];
  if (n->inputs[VKF_IN_KV_WRITE_START].rank == 2) { /* ragged rows: one dispatch, no slicing */
    uint64_t range = ctx->caps->max_storage_buffer_range;
    if (range && (span(ctx, cache) > range || span(ctx, rows) > range))
      return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                             "kv_write \"%s\": a ragged write needs the whole cache %s in one "
                             "binding",
                             n->name, vkf_shape_format(cache->rank, cache->shape, sbuf, sizeof sbuf));
    return dispatch(ctx, n, 0, rows->shape[0], 0, heads);
  }
  /* Slicing: the whole cache, else as many whole batches as fit, else heads of one batch. */
  int64_t nb = bsz, nh = heads;
  while (nb > 1 && !fits(ctx, n, nb, heads)) nb = (nb + 1) / 2;
  if (nb == 1 && !fits(ctx, n, 1, heads)) {
    while (nh > 1 && !fits(ctx, n, 1, nh)) nh = (nh + 1) / 2;
    if (!fits(ctx, n, 1, nh))
      return vkf_status_make(
          VKF_STATUS_UNSUPPORTED,
          "kv_write \"%s\": one head of cache %s (%" PRId64 " positions x %" PRId64
          ") exceeds the device's maxStorageBufferRange of %" PRIu64 " bytes",
          n->name, vkf_shape_format(cache->rank, cache->shape, sbuf, sizeof sbuf), cache->shape[2],
          cache->shape[3], (uint64_t)ctx->caps->max_storage_buffer_range);
  }
  for (int64_t b = 0; b < bsz; b += nb)
    for (int64_t h = 0; h < heads; h += nh)
      VKF_RETURN_IF_ERROR(
          dispatch(ctx, n, b, b + nb <= bsz ? nb : bsz - b, h, h + nh <= heads ? nh : heads - h));
  return VKF_OK;
}
