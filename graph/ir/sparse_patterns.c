/* Owns the layout builders: patterns (window, dilated, strided, fixed, global, random) and dense
 * block tables -> CSR layouts with deduplicated token masks (contract in sparse_layout.h). Each
 * query block evaluates its candidate key blocks pair by pair, so the cost follows the listed
 * blocks (window, global, random) except for the strided and fixed patterns, whose keys spread
 * over every block. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ir/sparse_layout.h"

#define MAX_TOKENS (1u << 30)

typedef struct builder {
  const vkf_sparse_pattern *p;
  uint32_t nq, nk, nqb, nkb, words, off; /* off = Nk - Nq (as int: see vis) */
  int64_t diag;
  /* per head, growing: entries (block, mask id) and the rows */
  int32_t *cols;
  uint32_t count, cap;
  /* masks, growing, with their hashes for deduplication */
  int32_t *masks;
  uint64_t *hashes;
  uint32_t mask_count, mask_cap;
  int32_t *scratch;   /* one mask being built: [block_q][words] */
  uint8_t *candidate; /* [nkb] */
  uint8_t *listed;    /* [nkb] */
} builder;

static int is_global(const builder *b, int64_t t) {
  const vkf_sparse_pattern *p = b->p;
  return t >= 0 && (t < p->global_tokens || (p->global_flags && p->global_flags[t]));
}

static int64_t mod_abs(int64_t a, int64_t m) {
  int64_t r = a % m;
  return r < 0 ? -r : r;
}

/* The pattern's visibility of key j for query i (no causal cut, no padding). */
static int vis_long_short(const vkf_sparse_pattern *p, int64_t i, int64_t j) {
  if (j < p->ls_prefix)
    return !p->ls_segment || j / p->ls_rows < (i + 1) / p->ls_segment;
  int64_t w = p->ls_window, start = i / w * w, pos = j - p->ls_prefix;
  return pos >= start - w / 2 && pos < start + w + w / 2;
}

static int vis(const builder *b, int64_t i, int64_t j) {
  const vkf_sparse_pattern *p = b->p;
  if (p->ls_window) return vis_long_short(p, i, j);
  int64_t ia = i + b->diag, d = ia - j;
  if (p->window_left >= 0 || p->window_right >= 0) {
    int in = (p->window_left < 0 || d <= p->window_left) &&
             (p->window_right < 0 || -d <= p->window_right);
    if (in && (p->dilation <= 1 || mod_abs(d, p->dilation) == 0)) return 1;
  }
  if (p->stride && ((d < 0 ? -d : d) < (int64_t)p->stride || mod_abs(d, p->stride) == 0)) return 1;
  if (p->fixed_block) {
    int64_t l = p->fixed_block;
    if (ia >= 0 && ia / l == j / l) return 1;
    if (j % l >= l - (int64_t)p->fixed_summary) return 1;
  }
  if (p->global_tokens || p->global_flags)
    if ((i < b->nq && is_global(b, i)) || is_global(b, j)) return 1;
  return 0;
}

static uint64_t hash_words(const int32_t *w, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (uint32_t)w[i]) * 1099511628211ull;
  return h;
}

static vkf_status oom(void) {
  return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "sparse layout: out of memory");
}

static vkf_status push_entry(builder *b, uint32_t kb, int32_t mask) {
  if (b->count == b->cap) {
    uint32_t cap = b->cap ? 2 * b->cap : 256;
    int32_t *c = realloc(b->cols, (size_t)cap * 2 * sizeof(int32_t));
    if (!c) return oom();
    b->cols = c;
    b->cap = cap;
  }
  b->cols[2 * b->count] = (int32_t)kb;
  b->cols[2 * b->count + 1] = mask;
  b->count++;
  return VKF_OK;
}

/* The id of the mask in b->scratch, added when new. */
static vkf_status mask_id(builder *b, int32_t *out) {
  size_t n = (size_t)b->p->block_q * b->words;
  uint64_t h = hash_words(b->scratch, n);
  for (uint32_t m = 0; m < b->mask_count; m++)
    if (b->hashes[m] == h && !memcmp(b->masks + m * n, b->scratch, n * sizeof(int32_t))) {
      *out = (int32_t)m;
      return VKF_OK;
    }
  if (b->mask_count == b->mask_cap) {
    uint32_t cap = b->mask_cap ? 2 * b->mask_cap : 16;
    if ((uint64_t)cap * n > (1u << 26))
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "sparse layout: the pattern needs more than %u distinct token masks",
                             b->mask_count);
    int32_t *m = realloc(b->masks, (size_t)cap * n * sizeof(int32_t));
    uint64_t *hs = m ? realloc(b->hashes, cap * sizeof(uint64_t)) : NULL;
    if (m) b->masks = m;
    if (!hs) return oom();
    b->hashes = hs;
    b->mask_cap = cap;
  }
  memcpy(b->masks + b->mask_count * n, b->scratch, n * sizeof(int32_t));
  b->hashes[b->mask_count] = h;
  *out = (int32_t)b->mask_count++;
  return VKF_OK;
}

/* Visibility of key block kb for query block qb: 0 none, 1 whole (mask -1), 2 partial (mask in
 * b->scratch). Pairs outside [0, Nq) x [0, Nk) count as visible (they do not exist). */
static int classify(builder *b, uint32_t qb, uint32_t kb) {
  const vkf_sparse_pattern *p = b->p;
  memset(b->scratch, 0, (size_t)p->block_q * b->words * sizeof(int32_t));
  uint64_t seen = 0, hidden = 0;
  for (uint32_t r = 0; r < p->block_q; r++) {
    int64_t i = (int64_t)qb * p->block_q + r;
    for (uint32_t c = 0; c < p->block_k; c++) {
      int64_t j = (int64_t)kb * p->block_k + c;
      int exists = i < b->nq && j < b->nk;
      if (!exists || vis(b, i, j)) {
        b->scratch[r * b->words + c / 32] |= (int32_t)(1u << (c % 32));
        seen += exists;
      } else {
        hidden++;
      }
    }
  }
  return !seen ? 0 : !hidden ? 1 : 2;
}

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Candidate key blocks of query block qb (a superset of those with a visible pair). */
static void candidates(builder *b, uint32_t qb) {
  const vkf_sparse_pattern *p = b->p;
  memset(b->candidate, 0, b->nkb);
  int64_t i0 = (int64_t)qb * p->block_q, i1 = i0 + p->block_q - 1;
  if (i1 >= b->nq) i1 = b->nq - 1;
  if (p->ls_window) {
    int64_t w = p->ls_window, pre = p->ls_prefix;
    int64_t lo = pre + i0 / w * w - w / 2, hi = pre + i1 / w * w + w + w / 2 - 1;
    if (lo < pre) lo = pre;
    if (hi >= b->nk) hi = (int64_t)b->nk - 1;
    for (int64_t j = 0; j < pre && j < b->nk; j += p->block_k) b->candidate[j / p->block_k] = 1;
    if (pre > 0 && pre <= b->nk) b->candidate[(pre - 1) / p->block_k] = 1;
    for (int64_t kb = lo / p->block_k; lo <= hi && kb <= hi / p->block_k; kb++)
      b->candidate[kb] = 1;
    return;
  }
  int all = p->stride || p->fixed_block;
  for (int64_t i = i0; i <= i1 && !all; i++) all = is_global(b, i);
  if (all) {
    memset(b->candidate, 1, b->nkb);
    return;
  }
  if (p->window_left >= 0 || p->window_right >= 0) {
    int64_t lo = p->window_left < 0 ? 0 : i0 + b->diag - p->window_left;
    int64_t hi = p->window_right < 0 ? (int64_t)b->nk - 1 : i1 + b->diag + p->window_right;
    if (lo < 0) lo = 0;
    if (hi >= b->nk) hi = (int64_t)b->nk - 1;
    for (int64_t kb = lo / p->block_k; lo <= hi && kb <= hi / p->block_k; kb++)
      b->candidate[kb] = 1;
  }
  uint32_t g_end = p->global_tokens < b->nk ? p->global_tokens : b->nk;
  for (uint32_t j = 0; j < g_end; j += p->block_k) b->candidate[j / p->block_k] = 1;
  if (p->global_flags)
    for (uint32_t j = 0; j < b->nk; j++)
      if (p->global_flags[j]) b->candidate[j / p->block_k] = 1;
}

static vkf_status build_head(builder *b, uint32_t head, int32_t *rows) {
  const vkf_sparse_pattern *p = b->p;
  uint64_t rng = p->seed * 0x9E3779B97F4A7C15ull + head + 1;
  b->count = 0;
  for (uint32_t qb = 0; qb < b->nqb; qb++) {
    rows[qb] = (int32_t)b->count;
    candidates(b, qb);
    memset(b->listed, 0, b->nkb);
    uint32_t first = b->count, listed = 0;
    for (uint32_t kb = 0; kb < b->nkb; kb++) {
      if (!b->candidate[kb]) continue;
      int k = classify(b, qb, kb);
      if (!k) continue;
      int32_t m = -1;
      if (k == 2) VKF_RETURN_IF_ERROR(mask_id(b, &m));
      VKF_RETURN_IF_ERROR(push_entry(b, kb, m));
      b->listed[kb] = 1;
      listed++;
    }
    /* Random blocks among those not listed: a partial Fisher-Yates over the free blocks. */
    uint32_t want = p->random_blocks, free_count = b->nkb - listed;
    if (want > free_count) want = free_count;
    for (uint32_t n = 0; n < want; n++) {
      uint32_t pick = (uint32_t)(splitmix(&rng) % (free_count - n)), kb = 0;
      for (;; kb++)
        if (!b->listed[kb] && pick-- == 0) break;
      b->listed[kb] = 1;
      VKF_RETURN_IF_ERROR(push_entry(b, kb, -1));
    }
    /* Keep the row ascending: the window / global entries came in order, random ones after. */
    if (want) {
      b->count = first;
      for (uint32_t kb = 0; kb < b->nkb; kb++) {
        if (!b->listed[kb]) continue;
        int k = classify(b, qb, kb);
        int32_t m = -1;
        if (k == 2) VKF_RETURN_IF_ERROR(mask_id(b, &m));
        VKF_RETURN_IF_ERROR(push_entry(b, kb, k ? m : -1));
      }
    }
    if (p->require_rows && b->count == first)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "sparse layout: head %u, query block %u lists no key block (the "
                             "pattern gives its queries nothing to attend to)",
                             head, qb);
  }
  rows[b->nqb] = (int32_t)b->count;
  return VKF_OK;
}

vkf_status vkf_sparse_layout_from_pattern(const vkf_sparse_pattern *p, uint32_t heads, uint32_t nq,
                                          uint32_t nk, vkf_sparse_layout *out) {
  memset(out, 0, sizeof *out);
  if (p->block_q < 1 || p->block_k < 1 || heads < 1 || nq < 1 || nk < 1 || nq > MAX_TOKENS ||
      nk > MAX_TOKENS)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "sparse pattern: blocks %ux%u, %u heads, %u queries, %u keys (each "
                           "must be >= 1, sequences at most 2^30)",
                           p->block_q, p->block_k, heads, nq, nk);
  if (p->window_left < -1 || p->window_right < -1 || p->window_left > (int32_t)MAX_TOKENS ||
      p->window_right > (int32_t)MAX_TOKENS)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "sparse pattern: window %d/%d out of range",
                           p->window_left, p->window_right);
  if (p->forbid_wide_window && ((int64_t)p->window_left > nk || (int64_t)p->window_right > nk))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "sparse pattern: window %d/%d tokens is wider than the sequence (%u "
                           "keys)",
                           p->window_left, p->window_right, nk);
  if (p->ls_window && (p->ls_prefix > nk || (p->ls_segment && !p->ls_rows)))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "sparse pattern: long-short prefix of %u rows (%u per segment) for %u "
                           "keys",
                           p->ls_prefix, p->ls_rows, nk);
  if (p->fixed_block && p->fixed_summary > p->fixed_block)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "sparse pattern: fixed pattern with %u summary tokens per block of %u",
                           p->fixed_summary, p->fixed_block);
  builder b = {.p = p, .nq = nq, .nk = nk, .diag = (int64_t)nk - nq};
  b.nqb = (nq + p->block_q - 1) / p->block_q;
  b.nkb = (nk + p->block_k - 1) / p->block_k;
  b.words = vkf_sparse_mask_words(p->block_k);
  b.scratch = malloc((size_t)p->block_q * b.words * sizeof(int32_t));
  b.candidate = malloc(b.nkb);
  b.listed = malloc(b.nkb);
  int32_t **head_cols = calloc(heads, sizeof *head_cols);
  uint32_t *head_count = calloc(heads, sizeof *head_count);
  int32_t *rows = malloc((size_t)heads * (b.nqb + 1) * sizeof(int32_t));
  vkf_status st = VKF_OK;
  if (!b.scratch || !b.candidate || !b.listed || !head_cols || !head_count || !rows) st = oom();
  uint32_t entries = 0;
  for (uint32_t h = 0; h < heads && !st; h++) {
    /* Heads differ by their random blocks only: build one when nothing is random. */
    if (h > 0 && !p->random_blocks) {
      memcpy(rows + (size_t)h * (b.nqb + 1), rows, (b.nqb + 1) * sizeof(int32_t));
      head_count[h] = head_count[0];
      continue;
    }
    st = build_head(&b, h, rows + (size_t)h * (b.nqb + 1));
    if (st) break;
    head_count[h] = b.count;
    head_cols[h] = malloc((size_t)b.count * 2 * sizeof(int32_t) + 8);
    if (!head_cols[h])
      st = oom();
    else
      memcpy(head_cols[h], b.cols, (size_t)b.count * 2 * sizeof(int32_t));
    if (b.count > entries) entries = b.count;
  }
  if (!st)
    st = vkf_sparse_layout_alloc(out, heads, nq, nk, p->block_q, p->block_k, entries, b.mask_count);
  if (!st) {
    memcpy(out->rows, rows, (size_t)heads * (b.nqb + 1) * sizeof(int32_t));
    for (uint32_t h = 0; h < heads; h++) {
      const int32_t *src = head_cols[h] ? head_cols[h] : head_cols[0];
      memcpy(out->cols + (size_t)h * entries * 2, src, (size_t)head_count[h] * 2 * sizeof(int32_t));
    }
    if (b.mask_count)
      memcpy(out->masks, b.masks, (size_t)b.mask_count * p->block_q * b.words * sizeof(int32_t));
    st = vkf_sparse_layout_check(out, nq, nk);
    if (st) vkf_sparse_layout_free(out);
  }
  for (uint32_t h = 0; head_cols && h < heads; h++) free(head_cols[h]);
  free(head_cols);
  free(head_count);
  free(rows);
  free(b.cols);
  free(b.masks);
  free(b.hashes);
  free(b.scratch);
  free(b.candidate);
  free(b.listed);
  return st;
}

vkf_status vkf_sparse_layout_from_blocks(const int32_t *blocks, uint32_t heads, uint32_t nq,
                                         uint32_t nk, uint32_t block_q, uint32_t block_k,
                                         vkf_sparse_layout *out) {
  memset(out, 0, sizeof *out);
  if (block_q < 1 || block_k < 1 || heads < 1)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "sparse layout: blocks %ux%u and %u heads must be >= 1", block_q,
                           block_k, heads);
  uint64_t nqb = ((uint64_t)nq + block_q - 1) / block_q,
           nkb = ((uint64_t)nk + block_k - 1) / block_k;
  uint64_t entries = 0;
  for (uint32_t h = 0; h < heads; h++) {
    uint64_t n = 0;
    for (uint64_t i = 0; i < nqb * nkb; i++) n += blocks[h * nqb * nkb + i] != 0;
    if (n > entries) entries = n;
  }
  if (entries > INT32_MAX)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "sparse layout: %llu entries",
                           (unsigned long long)entries);
  VKF_RETURN_IF_ERROR(
      vkf_sparse_layout_alloc(out, heads, nq, nk, block_q, block_k, (uint32_t)entries, 0));
  for (uint32_t h = 0; h < heads; h++) {
    int32_t *rows = out->rows + h * (nqb + 1), *cols = out->cols + h * entries * 2;
    int32_t e = 0;
    for (uint64_t qb = 0; qb < nqb; qb++) {
      rows[qb] = e;
      for (uint64_t kb = 0; kb < nkb; kb++)
        if (blocks[(h * nqb + qb) * nkb + kb]) {
          cols[2 * e] = (int32_t)kb;
          cols[2 * e + 1] = -1;
          e++;
        }
    }
    rows[nqb] = e;
  }
  return VKF_OK;
}

/* ---- pattern text ---- */

static int parse_u32(const char *s, const char **end, uint32_t *out) {
  if (*s < '0' || *s > '9') return 0;
  errno = 0;
  char *e;
  unsigned long long v = strtoull(s, &e, 10);
  if (errno || v > MAX_TOKENS) return 0;
  *out = (uint32_t)v;
  *end = e;
  return 1;
}

vkf_status vkf_sparse_pattern_parse(const char *text, vkf_sparse_pattern *out) {
  const char *s = text;
  while (*s) {
    const char *item = s, *colon = strchr(s, ':'), *comma = strchr(s, ',');
    size_t len = comma ? (size_t)(comma - s) : strlen(s);
    uint32_t a = 0, b = 0, nargs = 0;
    const char *at = colon && (!comma || colon < comma) ? colon : NULL;
    size_t name_len = at ? (size_t)(at - s) : len;
    int ok = at != NULL;
    while (ok && *at == ':' && nargs < 2) {
      ok = parse_u32(at + 1, &at, nargs ? &b : &a);
      nargs += ok;
    }
    ok = ok && at == item + len;
#define IS(name) (name_len == strlen(name) && !strncmp(item, name, name_len))
    if (ok && IS("window") && nargs <= 2) {
      out->window_left = (int32_t)(nargs == 2 ? a : a / 2);
      out->window_right = (int32_t)(nargs == 2 ? b : a / 2);
    } else if (ok && IS("dilated") && nargs == 2 && b >= 1) {
      out->window_left = out->window_right = (int32_t)(a / 2);
      out->dilation = b;
    } else if (ok && IS("strided") && nargs == 1 && a >= 1) {
      out->stride = a;
    } else if (ok && IS("fixed") && nargs == 2 && a >= 1 && b <= a) {
      out->fixed_block = a;
      out->fixed_summary = b;
    } else if (ok && IS("global") && nargs == 1) {
      out->global_tokens = a;
    } else if (ok && IS("random") && nargs == 1) {
      out->random_blocks = a;
    } else if (ok && IS("seed") && nargs == 1) {
      out->seed = a;
    } else {
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "sparse pattern \"%s\": bad item \"%.*s\" (expected window:W, "
                             "window:L:R, dilated:W:D, strided:L, fixed:L:C, global:G, random:R, "
                             "seed:S)",
                             text, (int)len, item);
    }
#undef IS
    s = item + len + (comma ? 1 : 0);
    if (comma && !*s)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "sparse pattern \"%s\": ends with a comma", text);
  }
  return VKF_OK;
}
