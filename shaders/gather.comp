#version 450
// Embedding lookup: out[k, c] = table[ids[k], c] for every id k (ids of rank <= 3, possibly a
// strided view, walked in row-major order) and column c < D. The reference rejects ids outside
// [0, V) at run time; a kernel cannot report that, so such rows are written as zeros and the table
// is never read out of bounds.
// Defines: ELEM16: 16-bit elements (f16 tables); otherwise 32-bit (f32 and i32 tables alike:
//          rows are copied as bits).
//          TABLE_QUANT=<f>: the table is ggml blocks of vkf_quant_format f (quant_decode.glsl),
//          out is f32; table_off and table_row_st are then bytes (a row's first byte from the
//          binding's start, bytes per row).
// Bindings: 0 table (read), 1 ids (int, read), 2 out (write, dense [..., D]).
// Push constants: count (ids * D), (d, magic, shift) for D, vocab (V), table_off, table_row_st,
//                 table_col_st, ids_off, (size, magic, shift) for ids dims 1 and 2, ids_st0..2
//                 (ids as a rank-3 index space, leading dims padded), out_off, row0 and total
//                 (the rows of this dispatch are [row0, row0 + vocab) of total: a table bigger
//                 than maxStorageBufferRange is gathered in row slices). Divisors carry
//                 vkf_fastdiv magic numbers (graph/lower/lower_layout.h).
// Specialization constants: 0 workgroup size (default 256).
#extension GL_GOOGLE_include_directive : require
#ifdef ELEM16
#extension GL_EXT_shader_16bit_storage : require
#define ELEM_T uint16_t
#define ELEM_ZERO uint16_t(0)
#else
#define ELEM_T uint
#define ELEM_ZERO 0u
#endif

#include "common.glsl"

layout(local_size_x_id = 0) in;

#ifdef TABLE_QUANT
layout(std430, binding = 0) readonly buffer Table { uint table_words[]; };
#define QWORD(i) table_words[i]
#define QUANT_FMT TABLE_QUANT
#include "quant_decode.glsl"
layout(std430, binding = 2) writeonly buffer Out { float dst[]; };
#undef ELEM_ZERO
#define ELEM_ZERO 0.0
#else
layout(std430, binding = 0) readonly buffer Table { ELEM_T table[]; };
layout(std430, binding = 2) writeonly buffer Out { ELEM_T dst[]; };
#endif
layout(std430, binding = 1) readonly buffer Ids { int ids[]; };
layout(push_constant) uniform Params {
  uint count, d, d_magic, d_shift, vocab;
  uint table_off, table_row_st, table_col_st;
  uint ids_off, ids_size1, ids_magic1, ids_shift1, ids_size2, ids_magic2, ids_shift2;
  uint ids_st0, ids_st1, ids_st2;
  uint out_off;
  uint row0, total;
} p;

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.count; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    uint k = vkf_fastdiv(i, p.d_magic, p.d_shift), c = i - k * p.d;
    uint rest = vkf_fastdiv(k, p.ids_magic2, p.ids_shift2), k2 = k - rest * p.ids_size2;
    uint k0 = vkf_fastdiv(rest, p.ids_magic1, p.ids_shift1), k1 = rest - k0 * p.ids_size1;
    int id = ids[p.ids_off + k0 * p.ids_st0 + k1 * p.ids_st1 + k2 * p.ids_st2];
    // This dispatch holds table rows [row0, row0 + vocab) of `total`; ids of other slices are left
    // to their dispatch, ids outside [0, total) are written as zeros by the first slice.
    int local = id - int(p.row0);
    if (local >= 0 && uint(local) < p.vocab)
#ifdef TABLE_QUANT
      dst[p.out_off + i] = q_dequant1(p.table_off + uint(local) * p.table_row_st + (c / QK) * QB, c % QK);
#else
      dst[p.out_off + i] = table[p.table_off + uint(local) * p.table_row_st + c * p.table_col_st];
#endif
    else if (p.row0 == 0u && (id < 0 || uint(id) >= p.total))
      dst[p.out_off + i] = ELEM_ZERO;
  }
}
