/* The graph IR: tensors (typed values with shape, strides, role), nodes from the op table
 * (graph/ir/ops.def), and the graph that owns both. Builder calls live in graph/ir/builder.h; passes in
 * graph/passes/passes.h; the CPU reference in graph/interp/interp.h. No Vulkan here. */
#ifndef VKF_GRAPH_GRAPH_H
#define VKF_GRAPH_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "graph/base/arena.h"
#include "graph/base/status.h"

enum { VKF_MAX_DIMS = 4, VKF_MAX_NODE_INPUTS = 8 };
#define VKF_NO_NODE UINT32_MAX

typedef enum vkf_dtype {
  VKF_F32 = 0,
  VKF_F16, /* IEEE binary16; the interpreter computes in fp32 and rounds on store */
  VKF_I32,
  VKF_BF16, /* bfloat16 (the top half of an fp32), for weights only: the verifier lets a bf16
               tensor feed nothing but a matmul's B operand, whose kernels widen it exactly */
  /* ggml's quantised blocks (graph/base/quant.h), weights only and in the order of
   * vkf_quant_format: a matmul's B as [N, K] (transposed, K a multiple of the block) and a
   * gather's table read them; each row of the last dim is whole blocks, the tensor contiguous.
   * vkf_dtype_size is the bytes of one block, vkf_dtype_block its elements. */
  VKF_Q8_0,
  VKF_Q4_0,
  VKF_Q4_1,
  VKF_Q5_0,
  VKF_Q5_1,
  VKF_Q4_K,
  VKF_Q5_K,
  VKF_Q6_K,
  VKF_DTYPE_COUNT
} vkf_dtype;

typedef enum vkf_tensor_role {
  VKF_ROLE_INTERMEDIATE = 0, /* produced by a node; lives in the planned arena (views alias) */
  VKF_ROLE_INPUT,            /* bound by the caller at run time; pinned */
  VKF_ROLE_CONSTANT,         /* weights: caller-owned host data (e.g. an mmapped file); pinned */
  VKF_ROLE_OUTPUT,           /* produced by a node, read back by the caller; pinned */
} vkf_tensor_role;

/* Op ids, names and flags come from graph/ir/ops.def. */
typedef enum vkf_op {
#define VKF_OP(id, name, min_in, max_in, flags, shape_fn, ref_fn) VKF_OP_##id,
#include "graph/ir/ops.def"
#undef VKF_OP
  VKF_OP_COUNT
} vkf_op;

enum {
  VKF_OPF_ELEMENTWISE = 1, /* one output element from the same-index (broadcast) input elements */
  VKF_OPF_VIEW = 2,        /* output aliases the input's storage (reshape / permute / slice) */
  VKF_OPF_IN_PLACE = 4,    /* output aliases input 0's storage (same base, offset and strides) and
                              the node DOES dispatch: it writes that storage in place (kv_write).
                              Never removed by dead-node elimination; after it, the storage may
                              only be read through its output (the verifier checks). */
};

/* Input slots per op. Optional slots hold the invalid value (id 0). */
enum {
  VKF_IN_MATMUL_A = 0,        /* [..., M, K] */
  VKF_IN_MATMUL_B = 1,        /* [..., K, N], or [..., N, K] with transpose_b */
  VKF_IN_MATMUL_BIAS = 2,     /* optional [N], added before the activation */
  VKF_IN_MATMUL_RESIDUAL = 3, /* optional, the output's shape, added after the activation */
  VKF_IN_MATMUL_NORM_GAMMA = 4, /* optional [K]: with matmul.a_rmsnorm, RMSNorm's weight */
  VKF_IN_NORM_X = 0,
  VKF_IN_NORM_GAMMA = 1, /* optional [D] */
  VKF_IN_NORM_BETA = 2,  /* optional [D] (layernorm only) */
  VKF_IN_SOFTMAX_X = 0,
  VKF_IN_SOFTMAX_VALID_LENS = 1, /* optional i32 [B] (per batch) or [B, R] (per row), clamped to
                                    [0, N] */
  VKF_IN_SOFTMAX_BIAS = 2,       /* optional, broadcastable to x */
  VKF_IN_ATTENTION_Q = 0,        /* [B, H, Nq, D] (or [B, Nq, D]: one head) */
  VKF_IN_ATTENTION_K = 1,        /* [B, Hkv, Nk, D], H % Hkv == 0 */
  VKF_IN_ATTENTION_V = 2,        /* [B, Hkv, Nk, Dv] */
  VKF_IN_ATTENTION_KV_LEN = 3,   /* optional i32 [B]: keys at or past kv_len[b] are masked;
                                    clamped to [0, Nk]; or [2, B] (ragged rows): lengths, then
                                    the k/v batch each query batch reads (k and v: any batch) */
  VKF_IN_ATTENTION_BIAS = 4,     /* optional, broadcastable to [B, H, Nq, Nk] */
  VKF_IN_ATTENTION_RAMP = 5,     /* optional f32 [H, 2]: adaptive span (vkf_attention_options) */
  VKF_IN_GATHER_TABLE = 0,       /* [V, D] */
  VKF_IN_GATHER_IDS = 1,         /* i32 [...] */
  VKF_IN_PATCH_IMAGE = 0,        /* [B, C, H, W] */
  VKF_IN_PATCH_WEIGHT = 1,       /* [E, C, P, P] */
  VKF_IN_PATCH_BIAS = 2,         /* optional [E] */
  VKF_IN_POOL_X = 0,             /* [B, N, D] */
  VKF_IN_POOL_MASK = 1,          /* optional i32 [B, N]: 1 = token counts */
  VKF_IN_KV_WRITE_CACHE = 0,     /* [B, H, C, D] contiguous, written in place */
  VKF_IN_KV_WRITE_ROWS = 1,      /* [B, H, T, D], T <= C, may be strided */
  VKF_IN_KV_WRITE_START = 2,     /* i32 [B]: row t goes to cache position start[b] + t; or
                                    [2, B] (ragged rows, any cache batch): row t of b to position
                                    start[0][b] + t of cache batch start[1][b] */
  VKF_IN_LFEAT_X = 0,            /* [B, H, N, D] */
  VKF_IN_LFEAT_OMEGA = 1,        /* [M, D] random vectors (FAVOR+ / RFF only) */
  VKF_IN_LIN_Q = 0,              /* phi(q) [B, H, N, F] */
  VKF_IN_LIN_K = 1,              /* phi(k) [B, H, N, F] */
  VKF_IN_LIN_V = 2,              /* v [B, H, N, Dv] */
  VKF_IN_LIN_GATE = 3,           /* optional gate logits [B, H, N] (causal only): g = sigmoid */
  VKF_IN_LIN_STATE = 4,          /* optional [B, H, F, Dv + 1] state before token 0 (causal only) */
  VKF_IN_LSTATE_STATE = 0,       /* [B, H, F, Dv + 1] contiguous, written in place */
  VKF_IN_LSTATE_K = 1,           /* phi(k) [B, H, T, F] */
  VKF_IN_LSTATE_V = 2,           /* v [B, H, T, Dv] */
  VKF_IN_LSTATE_GATE = 3,        /* optional gate logits [B, H, T] */
  VKF_IN_CONV_X = 0,             /* [B, H, N, D], may be strided */
  VKF_IN_CONV_WEIGHT = 1,        /* [H, K], K odd: one filter along N per channel H */
  VKF_IN_ROTARY_X = 0,           /* [..., D], D even, may be strided */
  VKF_IN_ROTARY_COS = 1,         /* broadcastable to x, last dim D */
  VKF_IN_ROTARY_SIN = 2,         /* likewise */
  /* Block-sparse attention (graph/ir/sparse_layout.h describes the layout tables). */
  VKF_IN_SPARSE_Q = 0,        /* [B, H, Nq, D] (may be a strided view) */
  VKF_IN_SPARSE_K = 1,        /* [B, Hkv, Nk, D], H % Hkv == 0 */
  VKF_IN_SPARSE_V = 2,        /* [B, Hkv, Nk, Dv] */
  VKF_IN_SPARSE_ROWS = 3,     /* i32 [L, Nqb + 1]: CSR row offsets per layout head (L = 1 or H) */
  VKF_IN_SPARSE_COLS = 4,     /* i32 [L, E, 2]: (key block, mask id or -1) per entry */
  VKF_IN_SPARSE_MASKS = 5,    /* optional i32 [M, block_q, ceil(block_k / 32)] bit masks */
  VKF_IN_SPARSE_KV_LEN = 6,   /* optional i32 [B], clamped to [0, Nk] as for attention */
  VKF_IN_SPARSE_KEY_BIAS = 7, /* optional f32 [B, Nk], added to every score of key j */
  /* Additive attention (Bahdanau et al.; D2L's AdditiveAttention). */
  VKF_IN_ADDITIVE_Q = 0,          /* W_q q: [B, Nq, H] (may be strided) */
  VKF_IN_ADDITIVE_K = 1,          /* W_k k: [B, Nk, H] (may be strided) */
  VKF_IN_ADDITIVE_W = 2,          /* w_v: [H] */
  VKF_IN_ADDITIVE_V = 3,          /* values [B, Nk, Dv] (may be strided) */
  VKF_IN_ADDITIVE_VALID_LENS = 4, /* optional i32 [B] or [B, Nq], clamped to [0, Nk] */
  /* A GRU layer's recurrence (torch.nn.GRU's gate order r, z, n). */
  VKF_IN_GRU_GATES = 0, /* x W_ih^T + b_ih: [B, T, 3H] (may be strided) */
  VKF_IN_GRU_W_HH = 1,  /* [3H, H] */
  VKF_IN_GRU_B_HH = 2,  /* [3H] */
  VKF_IN_GRU_H0 = 3,    /* optional [B, H] (zeros when absent) */
};

/* Feature maps of linear attention (LINEAR_FEATURES); x' = scale * x. */
typedef enum vkf_feature_map {
  VKF_FEATURE_ELU1 = 0, /* elu(x) + 1, F = D (Katharopoulos et al.); scale unused */
  VKF_FEATURE_FAVOR,    /* exp(omega_i . x' - |x'|^2 / 2) / sqrt(M), F = M (Performer FAVOR+) */
  VKF_FEATURE_RFF,      /* sqrt(1/M) [sin(omega_i . x'), cos(omega_i . x')], F = 2M (RFA) */
  VKF_FEATURE_COUNT
} vkf_feature_map;

typedef enum vkf_activation {
  VKF_ACT_NONE = 0,
  VKF_ACT_GELU_ERF, /* 0.5 x (1 + erf(x / sqrt 2)), as HF ViT/BERT */
  VKF_ACT_GELU_TANH,
  VKF_ACT_RELU,
  VKF_ACT_SILU,
  VKF_ACT_COUNT
} vkf_activation;

/* What REDUCE computes along its axis. */
typedef enum vkf_reduce_kind {
  VKF_REDUCE_SUM = 0,
  VKF_REDUCE_MAX,
  /* The index of the first maximum along the axis, an i32 output (greedy decoding's next id on the
   * device: a step reads back 4 bytes a row, not its logits). NaN counts as the largest, as in torch.argmax and the host's greedy choice. */
  VKF_REDUCE_ARGMAX,
  VKF_REDUCE_COUNT
} vkf_reduce_kind;

/* One instruction of a fused elementwise program. Registers 0..input_count-1 hold the node's
 * inputs (broadcast to the output shape); instruction i writes register input_count + i. `op` is
 * an elementwise op (VKF_OPF_ELEMENTWISE); `b` is used by binary ops, `scale` by VKF_OP_SCALE.
 * The last instruction's register is the node's output. Evaluated per output element in fp32. */
typedef struct vkf_ew_instr {
  vkf_op op;
  uint32_t a, b;
  float scale;
} vkf_ew_instr;

/* Per-op attributes; which member is live is given by the node's op. Everything a GPU lowering
 * needs that is not a tensor lives here. */
typedef struct vkf_node_attrs {
  union {
    struct {
      int transpose_b;           /* B is [..., N, K] */
      vkf_activation activation; /* epilogue: act(A·B + bias) + residual */
      /* Prologue (graph/passes/fuse_norm.c): A's rows are RMSNorm'd first, A' = A / sqrt(
       * mean(A^2) + a_norm_eps) * gamma (gamma the optional NORM_GAMMA input), as the RMSNORM
       * node it replaces computed them. */
      int a_rmsnorm;
      float a_norm_eps;
      /* Prologue (graph/passes/fuse_glu.c): A is [..., M, 2K], gate then up, and the product
       * reads a_glu(A[..., :K]) * A[..., K:] (VKF_ACT_NONE: A as it is). */
      vkf_activation a_glu;
      /* Epilogue (graph/passes/fuse_glu.c): B holds 2N rows (columns of the product), gate then
       * up, and the output [..., N] is c_glu(C[..., :N]) * C[..., N:] of C = A·B, as the slices,
       * activation and MUL it replaces computed it (VKF_ACT_NONE: the product itself). No bias,
       * residual or activation with it. */
      vkf_activation c_glu;
    } matmul;
    struct {
      float value;
    } scale;
    struct {
      float eps;
    } norm; /* layernorm, rmsnorm, l2_normalize */
    struct {
      float scale; /* x·scale + bias, then masks, then softmax over the last axis */
      int causal;  /* row i of R may see column j iff j <= i + (N - R) */
    } softmax;
    struct {
      float scale;          /* applied to q·k before the bias */
      int causal;           /* query i of Nq sees key j iff j <= i + (Nk - Nq) */
      int32_t window_left;  /* keys at most this far left of the aligned diagonal; -1: unbounded */
      int32_t window_right; /* ... and right of it; -1: unbounded */
      int merge_heads;      /* rank 4 only: the output is [B, Nq, H, Dv], heads side by side as
                               the output projection reads them, instead of [B, H, Nq, Dv] */
    } attention;
    struct {
      float scale;               /* applied to q·k before the key bias */
      uint32_t block_q, block_k; /* tokens per query / key block, >= 1 */
      int causal;                /* query i of Nq sees key j iff j <= i + (Nk - Nq) */
      int merge_heads;           /* output [B, Nq, H, Dv] instead of [B, H, Nq, Dv] */
    } sparse_attention;
    struct {
      vkf_feature_map kind;
      float scale; /* x' = scale * x; the builder turns 0 into D^-1/4 (Performer's normaliser) */
    } linear_features;
    struct {
      int causal;     /* token t sees tokens <= t (plus the state); else every token */
      float eps;      /* added to the normaliser phi(q) . z; the builder turns 0 into 1e-6 */
      uint32_t chunk; /* tokens per chunk of the causal scan (>= 1; the builder turns 0 into 64) */
    } linear_attention;
    struct {
      uint32_t rank;
      int64_t shape[VKF_MAX_DIMS]; /* the target shape, -1 already resolved */
    } reshape;
    struct {
      uint32_t axes[VKF_MAX_DIMS]; /* output dim i is input dim axes[i] */
    } permute;
    struct {
      vkf_dtype dtype;
    } cast;
    struct {
      uint32_t axis;
      int64_t start, end; /* [start, end), step 1 */
    } slice;
    struct {
      uint32_t axis;
    } concat;
    struct {
      uint32_t count;
      const vkf_ew_instr *instrs; /* arena-owned */
    } fused;
    struct {
      vkf_reduce_kind kind;
      uint32_t axis; /* reduced to size 1 (kept, as torch's keepdim=True) */
    } reduce;
    struct {
      int weights; /* output the attention weights [B, Nq, Nk] instead of the context */
    } additive_attention;
  };
} vkf_node_attrs;

/* A typed index into the graph's tensors; id 0 is "no value". */
typedef struct {
  uint32_t id;
} vkf_value;
#define VKF_NO_VALUE ((vkf_value){0})
static inline int vkf_value_valid(vkf_value v) {
  return v.id != 0;
}

typedef struct vkf_tensor {
  const char *name; /* arena-owned; for node outputs, the node's name */
  vkf_dtype dtype;
  vkf_tensor_role role;
  uint32_t rank;
  int64_t shape[VKF_MAX_DIMS];
  int64_t strides[VKF_MAX_DIMS]; /* in elements; row-major contiguous unless this is a view */
  int64_t offset;                /* in elements, from the start of base's storage */
  vkf_value base;                /* the tensor owning the storage: itself unless a view */
  uint32_t producer;             /* node index, or VKF_NO_NODE for inputs and constants */
  const void *data;              /* constants: caller-owned contiguous data in `dtype` */
  int removed;                   /* its producer was removed by a pass */
} vkf_tensor;

typedef struct vkf_node {
  vkf_op op;
  const char *name; /* arena-owned, never NULL */
  uint32_t input_count;
  vkf_value inputs[VKF_MAX_NODE_INPUTS]; /* slots; see VKF_IN_* */
  vkf_value output;                      /* every node has exactly one output tensor */
  vkf_node_attrs attrs;
  int dead; /* marked by passes; vkf_graph_compact removes it */
} vkf_node;

/* A graph is not thread-safe: one thread builds and rewrites it; readers (interpreter, lowering)
 * may share it once it no longer changes. */
typedef struct vkf_graph vkf_graph;

/* ---- op table ---- */
const char *vkf_op_name(vkf_op op);
uint32_t vkf_op_flags(vkf_op op);
uint32_t vkf_op_min_inputs(vkf_op op);
uint32_t vkf_op_max_inputs(vkf_op op);
const char *vkf_dtype_name(vkf_dtype dtype);
/* Bytes of one element, or of one block for a quantised dtype. */
size_t vkf_dtype_size(vkf_dtype dtype);
/* Elements per block: 1, or 32 / 256 for the quantised dtypes. */
uint32_t vkf_dtype_block(vkf_dtype dtype);
int vkf_dtype_is_quant(vkf_dtype dtype);
const char *vkf_activation_name(vkf_activation act);
const char *vkf_role_name(vkf_tensor_role role);
/* "elu1", "favor", "rff"; "?" out of range. */
const char *vkf_feature_map_name(vkf_feature_map kind);

/* ---- graph lifetime ---- */
/* The graph owns all metadata (names, shapes, attributes) in one arena, freed by destroy. */
vkf_status vkf_graph_create(const char *name, vkf_graph **out_graph);
void vkf_graph_destroy(vkf_graph *graph);
const char *vkf_graph_name(const vkf_graph *graph);
vkf_arena *vkf_graph_arena(vkf_graph *graph);

/* The first error recorded by a builder call (sticky: once set, builder calls return
 * VKF_NO_VALUE and do nothing). Returns a new status the caller frees, or VKF_OK. */
vkf_status vkf_graph_status(const vkf_graph *graph);
/* Records `status` as the sticky error if none is set yet (takes ownership). */
void vkf_graph_set_error(vkf_graph *graph, vkf_status status);

/* ---- values ---- */
/* Graph inputs, bound at run time. Contiguous. Returns VKF_NO_VALUE on a sticky error. */
vkf_value vkf_graph_input(vkf_graph *graph, const char *name, vkf_dtype dtype, uint32_t rank,
                          const int64_t *shape);
/* Weights: `data` (contiguous, in `dtype`) is borrowed and must outlive every use of the graph
 * (an mmapped file, a static array); NULL data means "bound at run time like an input". */
vkf_value vkf_graph_constant(vkf_graph *graph, const char *name, vkf_dtype dtype, uint32_t rank,
                             const int64_t *shape, const void *data);
/* Marks a value as a graph output and returns the value that carries it: the value itself when it
 * is a node's own (non-view) output (its tensor is renamed `name` when given; the node keeps its
 * name), otherwise a new contiguous copy node named `name` (or the value's name + ".out").
 * Outputs are pinned by the memory planner. */
vkf_value vkf_graph_output(vkf_graph *graph, vkf_value value, const char *name);

uint32_t vkf_graph_output_count(const vkf_graph *graph);
vkf_value vkf_graph_output_at(const vkf_graph *graph, uint32_t index);

/* Tensor ids run 1..vkf_graph_tensor_bound()-1. Pointers stay valid until the next tensor is
 * added (the table may grow). */
uint32_t vkf_graph_tensor_bound(const vkf_graph *graph);
const vkf_tensor *vkf_graph_tensor(const vkf_graph *graph, vkf_value value);
vkf_tensor *vkf_graph_tensor_mut(vkf_graph *graph, vkf_value value);
/* Element count and contiguous byte size of a tensor's logical shape. */
int64_t vkf_tensor_element_count(const vkf_tensor *tensor);
size_t vkf_tensor_size(const vkf_tensor *tensor);
int vkf_tensor_is_view(const vkf_tensor *tensor, vkf_value self);
/* Row-major strides and dense layout check. */
int vkf_tensor_is_contiguous(const vkf_tensor *tensor);
void vkf_contiguous_strides(uint32_t rank, const int64_t *shape, int64_t *out_strides);
/* Writes "[197,768]" into buf (always NUL-terminated); returns buf. */
char *vkf_shape_format(uint32_t rank, const int64_t *shape, char *buf, size_t buf_size);

/* ---- nodes ---- */
/* Nodes are kept in a valid execution order (every input is produced by an earlier node).
 * A lowering walks nodes 0..count-1, reads `op`, `inputs` (slots per VKF_IN_*), `attrs` and the
 * output tensor; dead nodes never appear after a pass (passes compact). */
uint32_t vkf_graph_node_count(const vkf_graph *graph);
const vkf_node *vkf_graph_node(const vkf_graph *graph, uint32_t index);
vkf_node *vkf_graph_node_mut(vkf_graph *graph, uint32_t index);

/* The low-level node constructor behind every builder call: checks arity, infers the output's
 * shape and dtype with the op's shape function and appends the node. On failure it records a
 * sticky error "<op> \"<name>\": <reason>" and returns VKF_NO_VALUE. `name` NULL: "<op>_<index>".
 */
vkf_value vkf_graph_add_node(vkf_graph *graph, vkf_op op, const char *name, const vkf_value *inputs,
                             uint32_t input_count, const vkf_node_attrs *attrs);

/* Re-runs the node's shape function into `out_desc` (rank, shape, dtype; strides/offset for views).
 * Used by the verifier and by passes that rewrite a node. The message names the node and op. */
vkf_status vkf_graph_infer_node(const vkf_graph *graph, const vkf_node *node, vkf_tensor *out_desc);

/* Removes dead nodes, renumbers producers, and flags tensors of removed nodes as `removed`. */
void vkf_graph_compact(vkf_graph *graph);

/* True when a live node with index in (after, before) writes in place (VKF_OPF_IN_PLACE) the
 * storage of `value`'s base: a read of `value` moved from node `after` to node `before` would see
 * different data. Passes that move reads later check it. */
int vkf_graph_in_place_between(const vkf_graph *graph, vkf_value value, uint32_t after,
                               uint32_t before);

/* Number of live-node input slots that read each tensor (array indexed by tensor id, size
 * vkf_graph_tensor_bound; caller frees). Graph outputs count as one extra use. NULL on OOM. */
uint32_t *vkf_graph_use_counts(const vkf_graph *graph);

/* The live node after node `after` that reads `value` when it is the only reader (`uses` from
 * vkf_graph_use_counts) and value is an intermediate (no output); else -1. Fusion passes fold a
 * producer into its sole consumer this way. */
int32_t vkf_graph_sole_consumer(const vkf_graph *graph, const uint32_t *uses, vkf_value value,
                                uint32_t after);

/* The rows of a tensor as a matrix over its last dim: the product of every other dim (1 for a
 * rank-1 tensor). */
int64_t vkf_tensor_rows(const vkf_tensor *tensor);

/* The epilogue/prologue activation an element-wise op node is (GELU erf/tanh, ReLU, SiLU), or
 * VKF_ACT_NONE. */
vkf_activation vkf_graph_activation_of(vkf_op op);

#endif
