/* Unigram Viterbi: best_path[i] is the best-scoring segmentation of w[0..i); each character
 * boundary extends every vocabulary piece starting there (found by hashing each prefix up to the
 * longest piece, the hash extended byte by byte: O(n·L) for n bytes and pieces of up to L, not
 * O(n·L²)), strictly better scores replacing earlier ones, as tokenizers 0.15 does. */
#include "text/unigram.h"

#include <stdlib.h>

#include "text/unicode.h"

#define UNK_PENALTY 10.0

typedef struct node {
  double score;
  size_t start; /* SIZE_MAX: not reached */
  int32_t id;
} node;

size_t vkf_unigram_encode(const vkf_bpe *b, const char *w, size_t n, int32_t *out) {
  if (!n) return 0;
  node *best = malloc((n + 1) * sizeof *best);
  if (!best) return SIZE_MAX;
  for (size_t i = 0; i <= n; i++) best[i] = (node){0.0, SIZE_MAX, -1};
  best[0].start = 0;
  double unk_score = b->min_score - UNK_PENALTY;
  for (size_t at = 0; at < n;) {
    uint32_t cp;
    size_t mblen = vkf_utf8_decode((const uint8_t *)w + at, n - at, &cp);
    if (!mblen) mblen = 1;
    double here = best[at].score;
    int single = 0;
    uint64_t h = VKF_BPE_HASH_INIT;
    for (size_t end = at + 1; end <= n && end - at <= b->max_token_bytes; end++) {
      h = vkf_bpe_hash_step(h, (uint8_t)w[end - 1]);
      if (end < n && ((uint8_t)w[end] & 0xC0) == 0x80) continue; /* not a character boundary */
      int32_t id = vkf_bpe_find_hashed(b, w + at, end - at, h ^ (h >> 29));
      if (id < 0 || (size_t)id >= b->piece_count) continue;
      double score = here + b->scores[id];
      if (best[end].start == SIZE_MAX || score > best[end].score) best[end] = (node){score, at, id};
      if (end - at == mblen) single = 1;
    }
    if (!single) {
      double score = here + unk_score;
      node *t = &best[at + mblen];
      if (t->start == SIZE_MAX || score > t->score) {
        if (b->unk_id < 0) { /* tokenizers' MissingUnkId: only when the unknown node would win */
          free(best);
          return VKF_UNIGRAM_NO_UNK;
        }
        *t = (node){score, at, b->unk_id};
      }
    }
    at += mblen;
  }
  /* Back-track into (start, end) pieces, fusing unknown runs; pieces come out reversed. */
  size_t *starts = malloc((n + 1) * sizeof *starts), count = 0;
  int32_t *ids = malloc((n + 1) * sizeof *ids);
  if (!starts || !ids) {
    free(best), free(starts), free(ids);
    return SIZE_MAX;
  }
  for (size_t end = n; end > 0;) {
    node *nd = &best[end];
    int unk = b->unk_id >= 0 && nd->id == b->unk_id;
    if (unk && count && ids[count - 1] == -2) {
      starts[count - 1] = nd->start; /* extends the run being fused */
    } else {
      starts[count] = nd->start;
      ids[count++] = unk ? -2 : nd->id; /* -2: a fused unknown run */
    }
    end = nd->start;
  }
  size_t written = 0;
  for (size_t k = count; k-- > 0;) {
    size_t start = starts[k], end = k ? starts[k - 1] : n;
    if (ids[k] != -2) {
      out[written++] = ids[k];
      continue;
    }
    int32_t whole = vkf_bpe_find(b, w + start, end - start); /* a fused run can be a piece */
    if (whole >= 0 && (size_t)whole < b->piece_count) {
      out[written++] = whole;
      continue;
    }
    int bytes = b->byte_fallback;
    for (size_t i = start; bytes && i < end; i++) bytes = b->byte_ids[(uint8_t)w[i]] >= 0;
    if (bytes) {
      for (size_t i = start; i < end; i++) out[written++] = b->byte_ids[(uint8_t)w[i]];
    } else if (b->unk_id >= 0) {
      out[written++] = b->unk_id;
    }
  }
  free(best), free(starts), free(ids);
  return written;
}
