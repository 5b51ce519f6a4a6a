/* SentencePiece .model files: the bounded protobuf reader of ModelProto, sentencepiece's
 * normalizer (normalizer.cc), Unigram EncodeOptimized (float scores), BPE merge by score, the
 * processor's merging of unknown pieces, and decode_pieces. */
#include "text/spm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/formats/file_read.h"
#include "text/charsmap.h"
#include "text/unicode.h"

#define MAX_FILE_SIZE ((size_t)256 << 20)
#define MAX_PIECES (1u << 22)
#define MAX_PIECE_BYTES 4096
#define UNK_PENALTY 10.0f
#define SPACE "\xE2\x96\x81" /* U+2581, the escaped space */

typedef struct piece {
  char *text;
  uint32_t size;
  float score;
  int type;
} piece;

struct vkf_spm {
  char *path;
  piece *pieces;
  size_t count, cap;
  uint32_t *slots; /* string -> id + 1 over NORMAL, USER_DEFINED and UNUSED pieces; 0 = empty */
  size_t slot_mask;
  uint32_t *all_slots; /* string -> id + 1 over every piece (PieceToId) */
  size_t max_piece_bytes;
  int model_type;
  int32_t unk_id;
  int byte_fallback;
  float min_score, max_score;
  char *unk_surface;
  vkf_charsmap map;
  uint8_t *charsmap_bytes; /* normalizer_spec.precompiled_charsmap as stored */
  size_t charsmap_size;
  int add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces;
};

/* ---- protobuf wire format -------------------------------------------------------------------- */

typedef struct reader {
  const uint8_t *p, *end, *start;
} reader;

static int read_varint(reader *r, uint64_t *out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (r->p >= r->end) return 0;
    uint8_t b = *r->p++;
    v |= (uint64_t)(b & 0x7F) << shift;
    if (!(b & 0x80)) {
      *out = v;
      return 1;
    }
  }
  return 0;
}

/* The next field: its number, wire type, and for LEN fields the payload; varints in *value;
 * fixed32 bits in *value. 0 at the end, -1 on malformed input. */
static int next_field(reader *r, uint32_t *field, int *wire, uint64_t *value, reader *payload) {
  if (r->p == r->end) return 0;
  uint64_t key;
  if (!read_varint(r, &key) || key >> 3 == 0 || key >> 3 > 0x1FFFFFFF) return -1;
  *field = (uint32_t)(key >> 3);
  *wire = (int)(key & 7);
  switch (*wire) {
    case 0:
      return read_varint(r, value) ? 1 : -1;
    case 1:
      if (r->end - r->p < 8) return -1;
      r->p += 8;
      return 1;
    case 5:
      if (r->end - r->p < 4) return -1;
      *value = (uint64_t)r->p[0] | (uint64_t)r->p[1] << 8 | (uint64_t)r->p[2] << 16 |
               (uint64_t)r->p[3] << 24;
      r->p += 4;
      return 1;
    case 2: {
      uint64_t n;
      if (!read_varint(r, &n) || n > (uint64_t)(r->end - r->p)) return -1;
      *payload = (reader){r->p, r->p + n, r->start};
      r->p += n;
      return 1;
    }
    default:
      return -1; /* groups (3, 4) and undefined wire types */
  }
}

static vkf_status malformed(const vkf_spm *s, const reader *r, const char *what) {
  return vkf_status_make(VKF_STATUS_PARSE, "%s: not a SentencePiece model: %s at byte %zu", s->path,
                         what, (size_t)(r->p - r->start));
}

static vkf_status read_piece(vkf_spm *s, reader *r) {
  if (s->count == MAX_PIECES)
    return vkf_status_make(VKF_STATUS_PARSE, "%s: more than %u pieces", s->path, MAX_PIECES);
  if (s->count == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 256;
    piece *grown = realloc(s->pieces, cap * sizeof *grown);
    if (!grown) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", s->path);
    s->pieces = grown;
    s->cap = cap;
  }
  piece *p = &s->pieces[s->count];
  *p = (piece){NULL, 0, 0.0f, VKF_SPM_NORMAL};
  s->count++;
  uint32_t field;
  int wire, got;
  uint64_t value = 0;
  reader payload;
  while ((got = next_field(r, &field, &wire, &value, &payload)) > 0) {
    if (field == 1 && wire == 2) {
      size_t n = (size_t)(payload.end - payload.p);
      uint32_t cp;
      if (n > MAX_PIECE_BYTES)
        return vkf_status_make(VKF_STATUS_PARSE, "%s: piece %zu is %zu bytes long", s->path,
                               s->count - 1, n);
      for (size_t i = 0; i < n;) {
        size_t len = vkf_utf8_decode(payload.p + i, n - i, &cp);
        if (!len)
          return vkf_status_make(VKF_STATUS_PARSE, "%s: piece %zu is not valid UTF-8", s->path,
                                 s->count - 1);
        i += len;
      }
      free(p->text);
      if (!(p->text = malloc(n + 1)))
        return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", s->path);
      memcpy(p->text, payload.p, n);
      p->text[n] = '\0';
      p->size = (uint32_t)n;
    } else if (field == 2 && wire == 5) {
      uint32_t bits = (uint32_t)value;
      memcpy(&p->score, &bits, 4);
    } else if (field == 3 && wire == 0) {
      if (value < 1 || value > 6)
        return vkf_status_make(VKF_STATUS_PARSE, "%s: piece %zu has type %llu", s->path,
                               s->count - 1, (unsigned long long)value);
      p->type = (int)value;
    }
  }
  if (got < 0) return malformed(s, r, "a malformed piece");
  if (!p->text)
    return vkf_status_make(VKF_STATUS_PARSE, "%s: piece %zu has no string", s->path, s->count - 1);
  return VKF_OK;
}

static vkf_status read_trainer(vkf_spm *s, reader *r) {
  uint32_t field;
  int wire, got;
  uint64_t value = 0;
  reader payload;
  while ((got = next_field(r, &field, &wire, &value, &payload)) > 0) {
    if (wire == 0 && field == 3)
      s->model_type = (int)(value > 100 ? 100 : value);
    else if (wire == 0 && field == 35)
      s->byte_fallback = value != 0;
    else if (wire == 2 && field == 44) {
      size_t n = (size_t)(payload.end - payload.p);
      if (n > MAX_PIECE_BYTES) return malformed(s, r, "an oversized unk_surface");
      free(s->unk_surface);
      if (!(s->unk_surface = malloc(n + 1)))
        return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", s->path);
      memcpy(s->unk_surface, payload.p, n);
      s->unk_surface[n] = '\0';
    }
  }
  return got < 0 ? malformed(s, r, "a malformed trainer_spec") : VKF_OK;
}

static vkf_status read_normalizer(vkf_spm *s, reader *r) {
  uint32_t field;
  int wire, got;
  uint64_t value = 0;
  reader payload;
  while ((got = next_field(r, &field, &wire, &value, &payload)) > 0) {
    if (wire == 2 && field == 2) {
      vkf_charsmap_free(&s->map);
      size_t size = (size_t)(payload.end - payload.p);
      VKF_RETURN_IF_ERROR(vkf_charsmap_parse(payload.p, size, s->path, &s->map));
      free(s->charsmap_bytes);
      s->charsmap_bytes = malloc(size + 1);
      if (!s->charsmap_bytes) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", s->path);
      memcpy(s->charsmap_bytes, payload.p, size);
      s->charsmap_size = size;
    } else if (wire == 0 && field == 3) {
      s->add_dummy_prefix = value != 0;
    } else if (wire == 0 && field == 4) {
      s->remove_extra_whitespaces = value != 0;
    } else if (wire == 0 && field == 5) {
      s->escape_whitespaces = value != 0;
    }
  }
  return got < 0 ? malformed(s, r, "a malformed normalizer_spec") : VKF_OK;
}

static uint64_t hash(const char *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)p[i]) * 1099511628211ull;
  return h ^ (h >> 29);
}

static int32_t find_in(const vkf_spm *s, const uint32_t *slots, const char *p, size_t n) {
  for (size_t i = hash(p, n) & s->slot_mask;; i = (i + 1) & s->slot_mask) {
    uint32_t v = slots[i];
    if (!v) return -1;
    if (s->pieces[v - 1].size == n && !memcmp(s->pieces[v - 1].text, p, n)) return (int32_t)v - 1;
  }
}

/* A repeated string keeps its last id, as sentencepiece's piece map does. */
static void insert(vkf_spm *s, uint32_t *slots, size_t id) {
  const piece *p = &s->pieces[id];
  for (size_t i = hash(p->text, p->size) & s->slot_mask;; i = (i + 1) & s->slot_mask) {
    uint32_t v = slots[i];
    if (!v ||
        (s->pieces[v - 1].size == p->size && !memcmp(s->pieces[v - 1].text, p->text, p->size))) {
      slots[i] = (uint32_t)id + 1;
      return;
    }
  }
}

static vkf_status index_pieces(vkf_spm *s) {
  size_t n = 16;
  while (n < s->count * 2) n *= 2;
  s->slots = calloc(n, sizeof *s->slots);
  s->all_slots = calloc(n, sizeof *s->all_slots);
  if (!s->slots || !s->all_slots) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", s->path);
  s->slot_mask = n - 1;
  s->unk_id = -1;
  s->min_score = 1e30f;
  s->max_score = -1e30f;
  for (size_t i = 0; i < s->count; i++) {
    const piece *p = &s->pieces[i];
    insert(s, s->all_slots, i);
    if (p->type == VKF_SPM_NORMAL || p->type == VKF_SPM_USER_DEFINED || p->type == VKF_SPM_UNUSED) {
      insert(s, s->slots, i);
      if (p->size > s->max_piece_bytes) s->max_piece_bytes = p->size;
    }
    if (p->type == VKF_SPM_NORMAL) {
      if (p->score < s->min_score) s->min_score = p->score;
      if (p->score > s->max_score) s->max_score = p->score;
    }
    if (p->type == VKF_SPM_UNKNOWN) s->unk_id = (int32_t)i;
  }
  if (s->unk_id < 0)
    return vkf_status_make(VKF_STATUS_PARSE, "%s: no piece of type UNKNOWN (the unk piece)",
                           s->path);
  return VKF_OK;
}

vkf_status vkf_spm_load(const char *path, vkf_spm **out_spm) {
  *out_spm = NULL;
  char *data = NULL;
  size_t size = 0;
  VKF_RETURN_IF_ERROR(
      vkf_file_read_bounded(path, MAX_FILE_SIZE, "a SentencePiece model", &data, &size));
  vkf_spm *s = calloc(1, sizeof *s);
  size_t path_size = strlen(path) + 1;
  if (!s || !(s->path = malloc(path_size))) {
    free(data), free(s);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", path);
  }
  memcpy(s->path, path, path_size);
  s->model_type = VKF_SPM_UNIGRAM;
  s->add_dummy_prefix = s->remove_extra_whitespaces = s->escape_whitespaces = 1;
  reader r = {(const uint8_t *)data, (const uint8_t *)data + size, (const uint8_t *)data};
  uint32_t field;
  int wire, got;
  uint64_t value = 0;
  reader payload;
  vkf_status st = VKF_OK;
  int seen_trainer = 0;
  while (!st && (got = next_field(&r, &field, &wire, &value, &payload)) != 0) {
    if (got < 0)
      st = malformed(s, &r, "a malformed or truncated field");
    else if (field == 1 && wire == 2)
      st = read_piece(s, &payload);
    else if (field == 2 && wire == 2)
      st = read_trainer(s, &payload), seen_trainer = 1;
    else if (field == 3 && wire == 2)
      st = read_normalizer(s, &payload);
  }
  free(data);
  if (!st && (!s->count || !seen_trainer))
    st = vkf_status_make(VKF_STATUS_PARSE, "%s: not a SentencePiece model: %s", path,
                         s->count ? "no trainer_spec" : "no pieces");
  if (!st && s->model_type != VKF_SPM_UNIGRAM && s->model_type != VKF_SPM_BPE)
    st = vkf_status_make(VKF_STATUS_UNSUPPORTED,
                         "%s: model_type %d is not supported (only "
                         "UNIGRAM = 1 and BPE = 2)",
                         path, s->model_type);
  if (!st) st = index_pieces(s);
  if (st) {
    vkf_spm_destroy(s);
    return st;
  }
  *out_spm = s;
  return VKF_OK;
}

void vkf_spm_destroy(vkf_spm *s) {
  if (!s) return;
  for (size_t i = 0; i < s->count; i++) free(s->pieces[i].text);
  free(s->pieces);
  free(s->slots);
  free(s->all_slots);
  free(s->unk_surface);
  free(s->path);
  vkf_charsmap_free(&s->map);
  free(s->charsmap_bytes);
  free(s);
}

size_t vkf_spm_piece_count(const vkf_spm *s) {
  return s->count;
}
const char *vkf_spm_piece(const vkf_spm *s, int32_t id) {
  return id >= 0 && (size_t)id < s->count ? s->pieces[id].text : NULL;
}
int vkf_spm_piece_type(const vkf_spm *s, int32_t id) {
  return id >= 0 && (size_t)id < s->count ? s->pieces[id].type : 0;
}
int32_t vkf_spm_piece_id(const vkf_spm *s, const char *p, size_t n) {
  return find_in(s, s->all_slots, p, n);
}
float vkf_spm_piece_score(const vkf_spm *s, int32_t id) {
  return id >= 0 && (size_t)id < s->count ? s->pieces[id].score : 0.0f;
}
int vkf_spm_model_type(const vkf_spm *s) {
  return s->model_type;
}
const uint8_t *vkf_spm_charsmap_bytes(const vkf_spm *s, size_t *size) {
  *size = s->charsmap_size;
  return s->charsmap_bytes;
}
int32_t vkf_spm_unk_id(const vkf_spm *s) {
  return s->unk_id;
}

/* ---- growable byte buffer -------------------------------------------------------------------- */

typedef struct buf {
  char *data;
  size_t size, cap;
  int failed;
} buf;

static void put(buf *b, const char *p, size_t n) {
  if (b->failed) return;
  if (b->size + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->size + n + 1) cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d) {
      b->failed = 1;
      return;
    }
    b->data = d;
    b->cap = cap;
  }
  memcpy(b->data + b->size, p, n);
  b->size += n;
  b->data[b->size] = '\0';
}

/* ---- normalizer.cc --------------------------------------------------------------------------- */

/* NormalizePrefix: the longest charsmap key at s, else the one character (U+FFFD for a byte that
 * starts no valid character). */
static size_t normalize_prefix(const vkf_spm *s, const char *p, size_t n, const char **out,
                               size_t *out_size) {
  size_t len;
  const char *repl;
  if (vkf_charsmap_match(&s->map, p, n, 1, &len, &repl)) {
    *out = repl;
    *out_size = strlen(repl);
    return len;
  }
  uint32_t cp;
  len = vkf_utf8_decode((const uint8_t *)p, n, &cp);
  if (!len) {
    *out = "\xEF\xBF\xBD";
    *out_size = 3;
    return 1;
  }
  *out = p;
  *out_size = len;
  return len;
}

static void normalize(const vkf_spm *s, const char *p, size_t n, buf *out) {
  const char *sp;
  size_t sp_size;
  if (s->remove_extra_whitespaces) { /* heading spaces */
    while (n) {
      size_t used = normalize_prefix(s, p, n, &sp, &sp_size);
      if (sp_size != 1 || sp[0] != ' ') break;
      p += used, n -= used;
    }
  }
  if (!n) return;
  const char *space = s->escape_whitespaces ? SPACE : " ";
  size_t space_size = strlen(space);
  if (s->add_dummy_prefix) put(out, space, space_size);
  int prev_space = s->remove_extra_whitespaces;
  while (n) {
    size_t used = normalize_prefix(s, p, n, &sp, &sp_size);
    if (prev_space)
      while (sp_size && sp[0] == ' ') sp++, sp_size--;
    if (sp_size) {
      for (size_t i = 0; i < sp_size; i++) {
        if (s->escape_whitespaces && sp[i] == ' ')
          put(out, SPACE, 3);
        else
          put(out, sp + i, 1);
      }
      prev_space = sp[sp_size - 1] == ' ';
    }
    p += used, n -= used;
    prev_space = prev_space && s->remove_extra_whitespaces;
  }
  if (s->remove_extra_whitespaces)
    while (out->size >= space_size &&
           !memcmp(out->data + out->size - space_size, space, space_size))
      out->size -= space_size;
}

/* ---- segmentation ---------------------------------------------------------------------------- */

typedef struct seg {
  size_t start, end;
  int32_t id;
} seg;

static size_t char_len(const char *p, size_t n) {
  uint32_t cp;
  size_t len = vkf_utf8_decode((const uint8_t *)p, n, &cp);
  return len ? len : 1;
}

/* unigram_model.cc EncodeOptimized, float scores as there. Returns the pieces in order. */
static seg *unigram(const vkf_spm *s, const char *w, size_t n, size_t *out_count) {
  typedef struct node {
    float score;
    long start;
    int32_t id;
  } node;
  node *best = malloc((n + 1) * sizeof *best);
  seg *segs = malloc((n + 1) * sizeof *segs);
  if (!best || !segs) {
    free(best), free(segs);
    return NULL;
  }
  for (size_t i = 0; i <= n; i++) best[i] = (node){0.0f, -1, -1};
  float unk_score = s->min_score - UNK_PENALTY;
  for (size_t at = 0; at < n;) {
    size_t mblen = char_len(w + at, n - at);
    float here = best[at].score;
    int single = 0;
    for (size_t end = at + 1; end <= n && end - at <= s->max_piece_bytes; end++) {
      int32_t id = find_in(s, s->slots, w + at, end - at);
      if (id < 0 || s->pieces[id].type == VKF_SPM_UNUSED) continue;
      float score = s->pieces[id].type == VKF_SPM_USER_DEFINED
                        ? (float)(end - at) * s->max_score - 0.1f
                        : s->pieces[id].score;
      score += here;
      if (best[end].start < 0 || score > best[end].score) best[end] = (node){score, (long)at, id};
      if (end - at == mblen) single = 1;
    }
    if (!single) {
      float score = here + unk_score;
      node *t = &best[at + mblen];
      if (t->start < 0 || score > t->score) *t = (node){score, (long)at, s->unk_id};
    }
    at += mblen;
  }
  size_t count = 0;
  for (size_t end = n; end > 0; end = (size_t)best[end].start)
    segs[count++] = (seg){(size_t)best[end].start, end, best[end].id};
  for (size_t i = 0; i < count / 2; i++) {
    seg t = segs[i];
    segs[i] = segs[count - 1 - i];
    segs[count - 1 - i] = t;
  }
  free(best);
  *out_count = count;
  return segs;
}

/* bpe_model.cc: characters, then the adjacent pair whose concatenation is a piece with the highest
 * score merged (ties: the leftmost) until none is left. A heap of candidate pairs, stale ones
 * skipped when popped, keeps it O(n log n) on a text that is one long symbol sequence. */
typedef struct pair {
  float score;
  uint32_t left, right; /* symbol indexes */
  uint32_t size;        /* bytes of the merged piece when queued: a changed symbol makes it stale */
  int32_t id;
} pair;

static int pair_before(const pair *a, const pair *b) {
  return a->score > b->score || (a->score == b->score && a->left < b->left);
}

static void pair_push(pair *h, size_t *n, pair p) {
  size_t i = (*n)++;
  while (i && pair_before(&p, &h[(i - 1) / 2])) {
    h[i] = h[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h[i] = p;
}

static pair pair_pop(pair *h, size_t *n) {
  pair top = h[0], last = h[--*n];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= *n) break;
    if (c + 1 < *n && pair_before(&h[c + 1], &h[c])) c++;
    if (!pair_before(&h[c], &last)) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = last;
  return top;
}

static void maybe_pair(const vkf_spm *s, const char *w, const seg *segs, const uint32_t *next,
                       uint32_t left, pair *heap, size_t *heap_n) {
  uint32_t right = next[left];
  if (right == UINT32_MAX) return;
  size_t len = segs[right].end - segs[left].start;
  if (len > s->max_piece_bytes) return;
  int32_t id = find_in(s, s->slots, w + segs[left].start, len);
  if (id < 0 || s->pieces[id].type == VKF_SPM_UNUSED) return;
  pair_push(heap, heap_n, (pair){s->pieces[id].score, left, right, (uint32_t)len, id});
}

static seg *bpe(const vkf_spm *s, const char *w, size_t n, size_t *out_count) {
  seg *segs = malloc((n + 1) * sizeof *segs);
  uint32_t *next = malloc((n + 1) * sizeof *next), *prev = malloc((n + 1) * sizeof *prev);
  pair *heap = malloc((3 * n + 1) * sizeof *heap); /* n - 1 initial pairs, two per merge */
  if (!segs || !next || !prev || !heap) {
    free(segs), free(next), free(prev), free(heap);
    return NULL;
  }
  size_t count = 0, heap_n = 0;
  for (size_t i = 0; i < n;) {
    size_t len = char_len(w + i, n - i);
    segs[count++] = (seg){i, i + len, -1};
    i += len;
  }
  for (size_t i = 0; i < count; i++) {
    prev[i] = i ? (uint32_t)i - 1 : UINT32_MAX;
    next[i] = i + 1 < count ? (uint32_t)i + 1 : UINT32_MAX;
  }
  for (size_t i = 0; i + 1 < count; i++) maybe_pair(s, w, segs, next, (uint32_t)i, heap, &heap_n);
  while (heap_n) {
    pair p = pair_pop(heap, &heap_n);
    /* stale: either symbol was merged away or grew since the pair was queued */
    if (segs[p.left].end == segs[p.left].start || segs[p.right].end == segs[p.right].start ||
        next[p.left] != p.right || segs[p.right].end - segs[p.left].start != p.size)
      continue;
    segs[p.left].end = segs[p.right].end;
    segs[p.right].end = segs[p.right].start; /* emptied */
    next[p.left] = next[p.right];
    if (next[p.right] != UINT32_MAX) prev[next[p.right]] = p.left;
    if (prev[p.left] != UINT32_MAX) maybe_pair(s, w, segs, next, prev[p.left], heap, &heap_n);
    maybe_pair(s, w, segs, next, p.left, heap, &heap_n);
  }
  size_t k = 0;
  for (uint32_t i = count ? 0 : UINT32_MAX; i != UINT32_MAX; i = next[i]) {
    int32_t id = find_in(s, s->slots, w + segs[i].start, segs[i].end - segs[i].start);
    segs[k++] = (seg){segs[i].start, segs[i].end, id < 0 ? s->unk_id : id};
  }
  free(next), free(prev), free(heap);
  *out_count = k;
  return segs;
}

vkf_status vkf_spm_encode(const vkf_spm *s, const char *text, size_t n, char **out_text,
                          size_t **out_ends, size_t *out_count) {
  *out_text = NULL;
  *out_ends = NULL;
  *out_count = 0;
  buf norm = {0}, pieces = {0};
  normalize(s, text, n, &norm);
  size_t count = 0;
  seg *segs = NULL;
  if (!norm.failed && norm.size)
    segs = s->model_type == VKF_SPM_BPE ? bpe(s, norm.data, norm.size, &count)
                                        : unigram(s, norm.data, norm.size, &count);
  size_t *ends = malloc((4 * norm.size + 1) * sizeof *ends), k = 0;
  int failed = norm.failed || !ends || (norm.size && !segs);
  for (size_t i = 0; !failed && i < count; i++) {
    const char *p = norm.data + segs[i].start;
    size_t len = segs[i].end - segs[i].start;
    int unk = segs[i].id == s->unk_id;
    if (unk && s->byte_fallback) { /* each byte as its <0xNN> piece when the model has it */
      int all = 1;
      char name[8];
      for (size_t b = 0; b < len && all; b++) {
        snprintf(name, sizeof name, "<0x%02X>", (uint8_t)p[b]);
        all = vkf_spm_piece_id(s, name, 6) >= 0;
      }
      for (size_t b = 0; all && b < len; b++) {
        snprintf(name, sizeof name, "<0x%02X>", (uint8_t)p[b]);
        put(&pieces, name, 6);
        ends[k++] = pieces.size;
      }
      if (all) continue;
    }
    put(&pieces, p, len);
    if (unk && i && segs[i - 1].id == s->unk_id && k)
      ends[k - 1] = pieces.size; /* merged */
    else
      ends[k++] = pieces.size;
  }
  free(segs);
  free(norm.data);
  if (failed || pieces.failed) {
    free(ends), free(pieces.data);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: encoding %zu bytes", s->path, n);
  }
  if (!pieces.data && !(pieces.data = calloc(1, 1))) {
    free(ends);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: encoding", s->path);
  }
  *out_text = pieces.data;
  *out_ends = ends;
  *out_count = k;
  return VKF_OK;
}

/* The byte of a "<0xNN>" piece, or -1. */
static int byte_of(const char *p, size_t n) {
  if (n != 6 || memcmp(p, "<0x", 3) || p[5] != '>') return -1;
  int v = 0;
  for (int i = 3; i < 5; i++) {
    char c = p[i];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

/* A run of byte pieces as text: each valid UTF-8 character, U+FFFD for each byte of none. */
static void put_bytes(buf *out, const uint8_t *bytes, size_t n) {
  for (size_t i = 0; i < n;) {
    uint32_t cp;
    size_t len = vkf_utf8_decode(bytes + i, n - i, &cp);
    if (len)
      put(out, (const char *)bytes + i, len), i += len;
    else
      put(out, "\xEF\xBF\xBD", 3), i++;
  }
}

int vkf_spm_decode_pieces(const vkf_spm *s, const char *const *pieces, size_t count, char **data,
                          size_t *size, size_t *cap) {
  buf out = {*data, *size, *cap, 0};
  int bos_ws = 1; /* still at the beginning: only empty surfaces so far */
  uint8_t *bytes = malloc(count + 1);
  size_t byte_count = 0;
  if (!bytes) out.failed = 1;
  for (size_t i = 0; i < count && bytes; i++) {
    const char *p = pieces[i];
    size_t n = strlen(p), before = out.size;
    int32_t id = vkf_spm_piece_id(s, p, n);
    int type = id < 0 ? VKF_SPM_UNKNOWN : s->pieces[id].type;
    if (type == VKF_SPM_BYTE && byte_of(p, n) >= 0) { /* decoded with the run it belongs to */
      bytes[byte_count++] = (uint8_t)byte_of(p, n);
      continue;
    }
    put_bytes(&out, bytes, byte_count);
    byte_count = 0;
    if (out.size > before) bos_ws = 0;
    before = out.size;
    if (type == VKF_SPM_CONTROL) {
      /* invisible */
    } else if (type == VKF_SPM_UNKNOWN) {
      if (id >= 0) {
        const char *surface = s->unk_surface ? s->unk_surface : " \xE2\x81\x87 ";
        put(&out, surface, strlen(surface));
      } else {
        put(&out, p, n); /* a string the model does not know is its own surface */
      }
    } else {
      if (bos_ws && (s->add_dummy_prefix || s->remove_extra_whitespaces) && n >= 3 &&
          !memcmp(p, SPACE, 3))
        p += 3, n -= 3;
      for (size_t k = 0; k < n;) {
        if (k + 3 <= n && !memcmp(p + k, SPACE, 3))
          put(&out, " ", 1), k += 3;
        else
          put(&out, p + k, 1), k++;
      }
    }
    if (out.size > before) bos_ws = 0;
  }
  if (bytes) put_bytes(&out, bytes, byte_count);
  free(bytes);
  *data = out.data;
  *size = out.size;
  *cap = out.cap;
  return !out.failed;
}
