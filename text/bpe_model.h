/* Internal to text/: the loaded form of a tokenizer.json BPE tokenizer, shared by its loader
 * (bpe_load.c), encoder (bpe.c) and decoder (bpe_decode.c), with the lookups all three use. */
#ifndef VKF_MODELS_BPE_MODEL_H
#define VKF_MODELS_BPE_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text/bpe.h"
#include "text/charsmap.h"
#include "text/pretokenize.h"
#include "text/regex.h"

#define VKF_BPE_MAX_STEPS 8     /* normalizers, pre-tokenizers, decoders: Llama-2 uses 4 */
#define VKF_BPE_MAX_AFFIX 32     /* bytes of a continuing_subword_prefix or end_of_word_suffix */
#define VKF_BPE_MAX_TEMPLATE 16 /* pieces of a TemplateProcessing "single" template */

typedef enum {
  VKF_BPE_NORM_PREPEND,
  VKF_BPE_NORM_REPLACE,
  VKF_BPE_NORM_NFD, /* canonical decomposition + ordering */
  VKF_BPE_NORM_NFC, /* NFD, then canonical composition */
  VKF_BPE_NORM_NFKD, /* compatibility decomposition + ordering */
  VKF_BPE_NORM_NFKC, /* NFKD, then canonical composition */
  VKF_BPE_NORM_PRECOMPILED, /* SentencePiece's charsmap, per grapheme (charsmap.h) */
  VKF_BPE_NORM_STRIP,       /* White_Space off the left and/or right end */
  VKF_BPE_NORM_SPACE_RUNS,  /* Replace of the Regex " {2,}": each run of 2+ spaces becomes `to` */
  VKF_BPE_NORM_REPLACE_REGEX, /* Replace of any other Regex: every match (`re`) becomes `to` */
  VKF_BPE_NORM_BYTE_LEVEL,  /* every byte as its byte-level character (tokenizers >= 0.20) */
  VKF_BPE_NORM_NMT,         /* tokenizers' Nmt: drops ASCII controls, maps other spaces to ' ' */
  VKF_BPE_NORM_BERT,        /* BertNormalizer: the four flags below (bpe_norm.c) */
  VKF_BPE_NORM_LOWERCASE,   /* Rust's char::to_lowercase of each character */
  VKF_BPE_NORM_STRIP_ACCENTS, /* StripAccents: every general category M* character dropped */
} vkf_bpe_norm_kind;
typedef struct vkf_bpe_norm {
  vkf_bpe_norm_kind kind;
  char *from; /* Replace: the literal pattern; NULL for the others */
  char *to;   /* Prepend: the prefix; Replace: the content; NULL for NF(K)D, NF(K)C */
  vkf_charsmap map;       /* Precompiled */
  int strip_left, strip_right; /* Strip */
  uint8_t clean_text, chinese, strip_accents, lowercase; /* BertNormalizer */
  vkf_regex *re;          /* Replace with a Regex */
} vkf_bpe_norm;

typedef enum {
  VKF_BPE_PRE_SPLIT,
  VKF_BPE_PRE_BYTE_LEVEL,
  VKF_BPE_PRE_METASPACE,
  VKF_BPE_PRE_WHITESPACE_SPLIT, /* words between White_Space runs (older T5 files) */
  VKF_BPE_PRE_DIGITS,           /* numeric characters (N*) apart: each alone or runs together */
  /* the ones below split in bpe_split.c, as NormalizedString::split with a behavior does */
  VKF_BPE_PRE_BERT,           /* White_Space removed, then punctuation isolated */
  VKF_BPE_PRE_WHITESPACE,     /* Whitespace: the regex \w+|[^\w\s]+ kept, the rest removed */
  VKF_BPE_PRE_PUNCTUATION,    /* each punctuation character a match, with `behavior` */
  VKF_BPE_PRE_CHAR_DELIMITER, /* CharDelimiterSplit: `literal` (one character) removed */
  VKF_BPE_PRE_SPLIT_STRING,   /* Split with a String pattern: `literal`, `behavior`, `invert` */
  VKF_BPE_PRE_SPLIT_REGEX,    /* Split with a Regex pattern (`re`), `behavior`, `invert` */
  VKF_BPE_PRE_UNICODE_SCRIPTS, /* UnicodeScripts: cut where the script changes */
} vkf_bpe_pre_kind;
/* tokenizers' SplitDelimiterBehavior: what becomes of the pieces a pattern matched. */
typedef enum {
  VKF_BPE_REMOVED,
  VKF_BPE_ISOLATED,
  VKF_BPE_MERGED_WITH_PREVIOUS,
  VKF_BPE_MERGED_WITH_NEXT,
  VKF_BPE_CONTIGUOUS,
} vkf_bpe_behavior;
#define VKF_BPE_MAX_LITERAL 64 /* bytes of a Split String pattern, NUL included */
typedef enum { VKF_BPE_PREPEND_ALWAYS, VKF_BPE_PREPEND_FIRST, VKF_BPE_PREPEND_NEVER } vkf_bpe_prepend;
typedef struct vkf_bpe_pre {
  vkf_bpe_pre_kind kind;
  vkf_pretok_pattern pattern; /* Split; ByteLevel with use_regex (GPT-2's); else NONE */
  int add_prefix_space;       /* ByteLevel */
  vkf_bpe_prepend prepend;    /* Metaspace */
  int split;                  /* Metaspace: split on the replacement */
  int individual_digits;      /* Digits: each digit its own word (else a run is one word) */
  char replacement[8];        /* Metaspace: UTF-8 of one character, usually U+2581 */
  vkf_bpe_behavior behavior;  /* Punctuation, Split String */
  int invert;                 /* Split String: the text between matches is what matched */
  char literal[VKF_BPE_MAX_LITERAL]; /* Split String's pattern; CharDelimiterSplit's delimiter */
  vkf_regex *re;                     /* Split Regex (other than the patterns pretokenize.h knows) */
} vkf_bpe_pre;

typedef enum {
  VKF_BPE_DEC_BYTE_LEVEL,
  VKF_BPE_DEC_REPLACE,
  VKF_BPE_DEC_BYTE_FALLBACK,
  VKF_BPE_DEC_FUSE,
  VKF_BPE_DEC_STRIP,
  VKF_BPE_DEC_METASPACE,
  VKF_BPE_DEC_WORD_PIECE, /* from = prefix glued to the previous token; others get a space */
  VKF_BPE_DEC_BPE,        /* BPEDecoder: from = suffix, a space (none after the last token) */
  VKF_BPE_DEC_CTC,        /* repeats fused, from = pad removed, to = word delimiter -> " " */
} vkf_bpe_dec_kind;
typedef struct vkf_bpe_dec {
  vkf_bpe_dec_kind kind;
  char *from, *to;     /* Replace; Metaspace: from = replacement, to = " " */
  char strip[8];       /* Strip: the character's UTF-8 */
  size_t start, stop;  /* Strip: how many to remove at each end */
  int add_prefix_space; /* Metaspace: drop the first token's leading space */
  int cleanup;          /* WordPiece, CTC: tokenizers' wordpiece::cleanup of each token */
  vkf_regex *re;        /* Replace with a Regex (from is NULL then) */
} vkf_bpe_dec;

typedef struct vkf_bpe_added {
  char *content;
  size_t size;
  int32_t id;
  uint8_t special, lstrip, rstrip, single_word, normalized;
} vkf_bpe_added;

/* model.type: how a pre-tokenized word becomes ids (Unigram: scores != NULL as well). */
typedef enum {
  VKF_BPE_MODEL_BPE,
  VKF_BPE_MODEL_UNIGRAM,
  VKF_BPE_MODEL_WORD_PIECE, /* greedy longest prefix, continuations spelled with `prefix` */
  VKF_BPE_MODEL_WORD_LEVEL, /* the whole word or unk */
} vkf_bpe_model_kind;

struct vkf_bpe {
  char *path; /* tokenizer.json, for messages */
  vkf_bpe_model_kind model;
  char *prefix, *suffix; /* BPE, WordPiece: continuing_subword_prefix; BPE: end_of_word_suffix */
  size_t max_input_chars; /* WordPiece: longer words are unk */
  /* vocabulary by id; holes (ids no entry names) are NULL */
  char **tokens;
  uint32_t *token_sizes;
  uint8_t *special; /* by id: an added token marked special (skipped by skip_special decoding) */
  size_t token_count;
  uint32_t *slots; /* open addressing: token string -> id + 1, 0 = empty */
  size_t slot_mask;
  /* merges: (left id, right id) -> rank and merged id; key UINT64_MAX = empty */
  uint64_t *merge_keys;
  uint32_t *merge_ranks;
  int32_t *merge_ids;
  size_t merge_mask;
  int32_t unk_id; /* -1: none */
  /* Unigram (scores != NULL): log-probability of each id, Viterbi instead of merges */
  double *scores;
  double min_score;       /* over the whole vocabulary, as tokenizers computes it */
  size_t max_token_bytes; /* longest vocabulary string: bounds the prefix search */
  size_t piece_count;     /* ids of the model's vocabulary; added tokens past it are not pieces */
  int byte_fallback, fuse_unk, ignore_merges;
  int32_t byte_ids[256]; /* <0xNN> ids, -1 where absent */
  vkf_bpe_norm norms[VKF_BPE_MAX_STEPS];
  size_t norm_count;
  vkf_bpe_pre pres[VKF_BPE_MAX_STEPS];
  size_t pre_count;
  vkf_bpe_dec decs[VKF_BPE_MAX_STEPS];
  size_t dec_count;
  vkf_bpe_added *added;
  size_t added_count;
  /* post-processing of one sequence: ids of the template, -1 standing for the sequence */
  int32_t template_ids[VKF_BPE_MAX_TEMPLATE];
  size_t template_count; /* 0: nothing added */
  int32_t bos_id, eos_id;
};

/* FNV-1a, byte by byte (so a caller extending a string hashes only the new bytes), then mixed. */
#define VKF_BPE_HASH_INIT 1469598103934665603ull
static inline uint64_t vkf_bpe_hash_step(uint64_t h, uint8_t byte) {
  return (h ^ byte) * 1099511628211ull;
}
static inline uint64_t vkf_bpe_hash(const char *s, size_t size) {
  uint64_t h = VKF_BPE_HASH_INIT;
  for (size_t i = 0; i < size; i++) h = vkf_bpe_hash_step(h, (uint8_t)s[i]);
  return h ^ (h >> 29);
}

/* Id of the vocabulary entry s[0..size) whose vkf_bpe_hash is `hash`, or -1. */
static inline int32_t vkf_bpe_find_hashed(const vkf_bpe *b, const char *s, size_t size,
                                          uint64_t hash) {
  for (size_t i = hash & b->slot_mask;; i = (i + 1) & b->slot_mask) {
    uint32_t slot = b->slots[i];
    if (slot == 0) return -1;
    if (b->token_sizes[slot - 1] == size && memcmp(b->tokens[slot - 1], s, size) == 0)
      return (int32_t)(slot - 1);
  }
}

/* Id of the vocabulary entry s[0..size), or -1. */
static inline int32_t vkf_bpe_find(const vkf_bpe *b, const char *s, size_t size) {
  return vkf_bpe_find_hashed(b, s, size, vkf_bpe_hash(s, size));
}

static inline uint64_t vkf_bpe_pair_key(int32_t a, int32_t b) {
  return ((uint64_t)(uint32_t)a << 32) | (uint32_t)b;
}

static inline size_t vkf_bpe_pair_slot(uint64_t key, size_t mask) {
  key *= 0x9E3779B97F4A7C15ull;
  return (size_t)(key >> 17) & mask;
}

/* Rank of the merge (a, b) and the id it makes, or 0 when there is none. */
static inline int vkf_bpe_merge_find(const vkf_bpe *b, int32_t left, int32_t right,
                                     uint32_t *out_rank, int32_t *out_id) {
  if (!b->merge_keys) return 0;
  uint64_t key = vkf_bpe_pair_key(left, right);
  for (size_t i = vkf_bpe_pair_slot(key, b->merge_mask);; i = (i + 1) & b->merge_mask) {
    if (b->merge_keys[i] == UINT64_MAX) return 0;
    if (b->merge_keys[i] == key) {
      *out_rank = b->merge_ranks[i];
      *out_id = b->merge_ids[i];
      return 1;
    }
  }
}

/* GPT-2's byte-to-character map: printable Latin-1 bytes stand for themselves, the other 68 bytes
 * for U+0100.. in byte order, so every byte is a visible character. */
static inline int vkf_bpe_byte_is_printable(uint32_t b) {
  return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
}
static inline uint32_t vkf_bpe_byte_to_cp(uint8_t byte) {
  if (vkf_bpe_byte_is_printable(byte)) return byte;
  uint32_t n = 0;
  for (uint32_t b = 0; b < byte; b++) n += !vkf_bpe_byte_is_printable(b);
  return 256 + n;
}
/* The byte a character stands for, or -1 when it is not in the map. */
static inline int vkf_bpe_cp_to_byte(uint32_t cp) {
  if (cp < 256) return vkf_bpe_byte_is_printable(cp) ? (int)cp : -1;
  if (cp >= 256 + 68) return -1;
  uint32_t n = 0;
  for (uint32_t b = 0; b < 256; b++)
    if (!vkf_bpe_byte_is_printable(b) && n++ == cp - 256) return (int)b;
  return -1;
}

/* vkf_bpe_words.failed bit: a regex search passed its retry limit (regex.h). */
#define VKF_BPE_FAILED_REGEX 16

/* Words as one byte buffer plus the end offset of each word; vkf_bpe_put() extends the open word. */
typedef struct vkf_bpe_words {
  char *data;
  size_t size, cap;
  size_t *ends;
  size_t count, ends_cap;
  int failed;
} vkf_bpe_words;

static inline void vkf_bpe_put(vkf_bpe_words *w, const void *bytes, size_t n) {
  if (w->size + n > w->cap) {
    size_t cap = w->cap ? w->cap : 256;
    while (cap < w->size + n) cap *= 2;
    char *d = realloc(w->data, cap);
    if (!d) {
      w->failed = 1;
      return;
    }
    w->data = d;
    w->cap = cap;
  }
  if (n) memcpy(w->data + w->size, bytes, n);
  w->size += n;
}

static inline void vkf_bpe_end_word(vkf_bpe_words *w) {
  size_t start = w->count ? w->ends[w->count - 1] : 0;
  if (w->size == start) return;
  if (w->count == w->ends_cap) {
    size_t cap = w->ends_cap ? w->ends_cap * 2 : 64;
    size_t *e = realloc(w->ends, cap * sizeof *e);
    if (!e) {
      w->failed = 1;
      return;
    }
    w->ends = e;
    w->ends_cap = cap;
  }
  w->ends[w->count++] = w->size;
}

static inline size_t vkf_bpe_word_start(const vkf_bpe_words *w, size_t i) { return i ? w->ends[i - 1] : 0; }

static inline void vkf_bpe_words_free(vkf_bpe_words *w) {
  free(w->data);
  free(w->ends);
}

/* bpe_norm.c: BertNormalizer, Lowercase or StripAccents of the valid UTF-8 s[0..n), appended to
 * *out (at most 12 times n bytes: a CJK character padded by spaces, a lower-cased İ). */
void vkf_bpe_norm_chars(const vkf_bpe_norm *nm, const char *s, size_t n, vkf_bpe_words *out);
/* bpe_split.c: the words pre-tokenizer p (BERT .. SPLIT_STRING kinds) makes of the valid UTF-8
 * s[0..n), appended to *out. */
void vkf_bpe_pre_split(const vkf_bpe_pre *p, const char *s, size_t n, vkf_bpe_words *out);
/* bpe_word_models.c: the ids of one word by a WordPiece or WordLevel model, written to out (room
 * for n ids); returns their count, SIZE_MAX when the word needs the unk token and there is none, or
 * SIZE_MAX - 1 when memory ran out. */
size_t vkf_bpe_word_model_encode(const vkf_bpe *b, const char *w, size_t n, int32_t *out);

#endif
