/* Owns lowering of GATHER (embedding lookup: table [V, D], ids i32 [...] -> [..., D]) onto
 * shaders/gather.comp. */
#include <string.h>

#include "graph/lower/lower_node.h"
#include "graph/lower/lower_layout.h"

static vkf_status gather_rows(const vkf_lower_ctx *ctx, const vkf_lower_node *node,
                              const vkf_plan_tensor *table, int64_t row0, int64_t total);

/* Chooser: one invocation per output element, 256 per workgroup clamped to the device limit;
 * rows are copied as bits (32-bit for f32/i32 tables, 16-bit for f16). A table whose binding
 * would exceed maxStorageBufferRange (GPT-2's 154 MB token table on lavapipe's 128 MiB) is bound
 * in row slices, one dispatch each; every dispatch writes the outputs whose ids fall in its rows.
 * A quantised table (ggml blocks) is decoded per element into an f32 output. */
vkf_status vkf_lower_gather(const vkf_lower_ctx *ctx, const vkf_lower_node *node) {
  const vkf_plan_tensor *table = &node->inputs[VKF_IN_GATHER_TABLE];
  uint64_t range = ctx->caps->max_storage_buffer_range, begin, end;
  int64_t vocab = table->rank == 2 ? table->shape[0] : 0;
  vkf_lower_binding_range(ctx, table, &begin, &end);
  if (!range || end - begin <= range || vocab < 2 || table->strides[0] <= 0)
    return gather_rows(ctx, node, table, 0, vocab);
  int quant = vkf_dtype_is_quant(table->dtype);
  uint64_t row_bytes = quant ? (uint64_t)table->shape[1] / vkf_dtype_block(table->dtype) *
                                   vkf_dtype_size(table->dtype)
                             : (uint64_t)table->strides[0] * vkf_dtype_size(table->dtype);
  /* Rows per slice: what fits after the alignment slack vkf_lower_bind may add in front. */
  int64_t per = (int64_t)((range - ctx->alignment - row_bytes) / row_bytes);
  if (per < 1)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "gather \"%s\": one table row of %llu bytes exceeds the device's "
                           "maxStorageBufferRange of %llu",
                           node->name, (unsigned long long)row_bytes, (unsigned long long)range);
  for (int64_t r0 = 0; r0 < vocab; r0 += per) {
    vkf_plan_tensor part = *table;
    part.offset += (uint64_t)r0 * row_bytes;
    part.shape[0] = r0 + per <= vocab ? per : vocab - r0;
    VKF_RETURN_IF_ERROR(gather_rows(ctx, node, &part, r0, vocab));
  }
  return VKF_OK;
}

/* One dispatch over table rows [row0, row0 + table->shape[0]) of `total`. */
static vkf_status gather_rows(const vkf_lower_ctx *ctx, const vkf_lower_node *node,
                              const vkf_plan_tensor *table, int64_t row0, int64_t total) {
  char sa[64], sb[64];
  /* table: [V, D] (rows row0 .. row0 + V - 1 of the whole table) */
  const vkf_plan_tensor *ids = &node->inputs[VKF_IN_GATHER_IDS];     /* i32 [...] */
  const vkf_plan_tensor *y = &node->output;                          /* [..., D] */
  int quant = vkf_dtype_is_quant(table->dtype);
  if (table->rank != 2 || ids->dtype != VKF_I32 || ids->rank > 3 ||
      y->dtype != (quant ? VKF_F32 : table->dtype))
    return vkf_status_make(
        VKF_STATUS_UNSUPPORTED, "gather \"%s\": table %s %s, ids %s %s", node->name,
        vkf_dtype_name(table->dtype), vkf_shape_format(table->rank, table->shape, sa, sizeof sa),
        vkf_dtype_name(ids->dtype), vkf_shape_format(ids->rank, ids->shape, sb, sizeof sb));
  if (table->dtype == VKF_F16 && !ctx->caps->storage_16bit)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "gather \"%s\": f16 table %s needs 16-bit storage, which the device "
                           "lacks",
                           node->name, vkf_shape_format(table->rank, table->shape, sa, sizeof sa));
  if (!vkf_plan_tensor_is_contiguous(y))
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "gather \"%s\": output %s is not dense",
                           node->name, vkf_shape_format(y->rank, y->shape, sa, sizeof sa));
  int64_t count = vkf_plan_tensor_count(y), vocab = table->shape[0], dim = table->shape[1];
  if (count == 0) return VKF_OK;

  /* The ids as a row-major index space of rank <= 3 (size-1 and contiguous dims merged). */
  vkf_layout l = {.rank = ids->rank, .operand_count = 1};
  memcpy(l.shape, ids->shape, sizeof l.shape);
  memcpy(l.strides[0], ids->strides, sizeof l.strides[0]);
  vkf_layout_coalesce(&l);
  uint32_t size[3] = {1, 1, 1}, st[3] = {0, 0, 0};
  for (uint32_t i = 0; i < l.rank; i++) {
    size[3 - l.rank + i] = (uint32_t)l.shape[i];
    st[3 - l.rank + i] = (uint32_t)l.strides[0][i];
  }

  vkf_plan_dispatch disp = {.node = node->name, .shader = "gather.comp"};
  if (table->dtype == VKF_F16) vkf_plan_dispatch_define(&disp, "ELEM16");
  static const char *const quant_define[VKF_DTYPE_COUNT - VKF_Q8_0] = {
      "TABLE_QUANT=0", "TABLE_QUANT=1", "TABLE_QUANT=2", "TABLE_QUANT=3",
      "TABLE_QUANT=4", "TABLE_QUANT=5", "TABLE_QUANT=6", "TABLE_QUANT=7"};
  if (quant) vkf_plan_dispatch_define(&disp, quant_define[table->dtype - VKF_Q8_0]);
  uint32_t table_off = vkf_lower_bind(ctx, &disp, table, VKF_ACCESS_READ);
  uint64_t table_row_st = (uint64_t)table->strides[0], table_col_st = (uint64_t)table->strides[1];
  if (quant) {
    /* Blocks are addressed in bytes (a row slice may start mid-word): the row's first byte from
     * the binding's start, and the bytes of a row. */
    uint64_t begin, end;
    vkf_lower_binding_range(ctx, table, &begin, &end);
    table_off = (uint32_t)(table->offset - begin);
    table_row_st = (uint64_t)dim / vkf_dtype_block(table->dtype) * vkf_dtype_size(table->dtype);
    table_col_st = 1;
    if ((uint64_t)vocab * table_row_st + table_off > UINT32_MAX)
      return vkf_status_make(VKF_STATUS_UNSUPPORTED, "gather \"%s\": table %s exceeds 4 GiB",
                             node->name,
                             vkf_shape_format(table->rank, table->shape, sa, sizeof sa));
  }
  uint32_t ids_off = vkf_lower_bind(ctx, &disp, ids, VKF_ACCESS_READ);
  uint32_t out_off = vkf_lower_bind(ctx, &disp, y, VKF_ACCESS_WRITE);
  if ((uint64_t)count + out_off > INT32_MAX ||
      (uint64_t)(vocab - 1) * (uint64_t)table->strides[0] +
              (uint64_t)(dim - 1) * table->strides[1] + table_off >
          UINT32_MAX ||
      (uint64_t)vocab > INT32_MAX || (uint64_t)total > INT32_MAX)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "gather \"%s\": table %s or output %s needs "
                           "indices beyond 32 bits",
                           node->name, vkf_shape_format(table->rank, table->shape, sa, sizeof sa),
                           vkf_shape_format(y->rank, y->shape, sb, sizeof sb));
  vkf_plan_dispatch_push_u32(&disp, (uint32_t)count);
  vkf_plan_dispatch_push_fastdiv(&disp, (uint32_t)dim);
  vkf_plan_dispatch_push_u32(&disp, (uint32_t)vocab);
  vkf_plan_dispatch_push_u32(&disp, table_off);
  vkf_plan_dispatch_push_u32(&disp, (uint32_t)table_row_st);
  vkf_plan_dispatch_push_u32(&disp, (uint32_t)table_col_st);
  vkf_plan_dispatch_push_u32(&disp, ids_off);
  vkf_plan_dispatch_push_fastdiv(&disp, size[1]);
  vkf_plan_dispatch_push_fastdiv(&disp, size[2]);
  for (uint32_t i = 0; i < 3; i++) vkf_plan_dispatch_push_u32(&disp, st[i]);
  vkf_plan_dispatch_push_u32(&disp, out_off);
  vkf_plan_dispatch_push_u32(&disp, (uint32_t)row0);
  vkf_plan_dispatch_push_u32(&disp, (uint32_t)total);
  uint32_t wg = vkf_lower_workgroup_1d(ctx, 256);
  disp.spec[0] = wg;
  disp.spec_count = 1;
  disp.groups[0] = vkf_lower_groups_1d(ctx, (uint64_t)count, wg);
  disp.groups[1] = disp.groups[2] = 1;
  return vkf_plan_add_dispatch(ctx->plan, &disp);
}
