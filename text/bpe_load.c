/* Reading tokenizer.json into a vkf_bpe: vocabulary, merges, added tokens, and the normalizer,
 * pre-tokenizer, post-processor and decoder steps this code reproduces (others are UNSUPPORTED). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/formats/file_read.h"
#include "text/bpe_model.h"
#include "text/unicode.h"

#define MAX_TOKENS (1u << 24) /* ids past 16M are not a real vocabulary */
#define MAX_FILE_SIZE ((size_t)1 << 30)

static char *dup_string(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static int get_bool(const cJSON *obj, const char *key, int fallback) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsBool(v) ? cJSON_IsTrue(v) : fallback;
}

static const char *get_string(const cJSON *obj, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const char *type_of(const cJSON *obj) {
  const char *t = get_string(obj, "type");
  return t ? t : "(no type)";
}

/* A Replace pattern: {"String": s} into *out, or {"Regex": r} compiled into *re. */
static vkf_status replace_pattern(const vkf_bpe *b, const cJSON *obj, const char *where,
                                  const char **out, vkf_regex **re) {
  const cJSON *pattern = cJSON_GetObjectItemCaseSensitive(obj, "pattern");
  *out = get_string(pattern, "String");
  const char *regex = get_string(pattern, "Regex");
  if (!*out && regex) {
    char at[64];
    snprintf(at, sizeof at, "%s Replace", where);
    vkf_status st = vkf_regex_compile(regex, at, re);
    return st ? vkf_status_annotate(st, "%s: ", b->path) : VKF_OK;
  }
  if (!*out) return vkf_status_make(VKF_STATUS_PARSE, "%s: %s Replace: pattern is neither "
                                    "{\"String\": ...} nor {\"Regex\": ...}", b->path, where);
  if (!**out) return vkf_status_make(VKF_STATUS_PARSE, "%s: %s Replace: empty pattern", b->path,
                                     where);
  return VKF_OK;
}

static vkf_status add_norm(vkf_bpe *b, const cJSON *n) {
  const char *type = type_of(n);
  if (!strcmp(type, "Sequence")) {
    const cJSON *item;
    cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(n, "normalizers"))
        VKF_RETURN_IF_ERROR(add_norm(b, item));
    return VKF_OK;
  }
  if (b->norm_count == VKF_BPE_MAX_STEPS)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: normalizer: more than %d steps", b->path,
                           VKF_BPE_MAX_STEPS);
  vkf_bpe_norm *out = &b->norms[b->norm_count];
  const char *from = NULL, *to = NULL;
  static const struct {
    const char *name;
    vkf_bpe_norm_kind kind;
  } unicode_forms[] = {{"NFC", VKF_BPE_NORM_NFC},
                       {"NFD", VKF_BPE_NORM_NFD},
                       {"NFKC", VKF_BPE_NORM_NFKC},
                       {"NFKD", VKF_BPE_NORM_NFKD}};
  for (size_t i = 0; i < sizeof unicode_forms / sizeof unicode_forms[0]; i++) {
    if (strcmp(type, unicode_forms[i].name)) continue;
    out->kind = unicode_forms[i].kind;
    out->from = out->to = NULL;
    b->norm_count++;
    return VKF_OK;
  }
  const char *regex = get_string(cJSON_GetObjectItemCaseSensitive(n, "pattern"), "Regex");
  if (!strcmp(type, "Precompiled")) {
    const char *map = get_string(n, "precompiled_charsmap");
    if (!map || !*map) /* tokenizers cannot read an empty one either */
      return vkf_status_make(VKF_STATUS_PARSE, "%s: normalizer \"Precompiled\" lacks its "
                             "precompiled_charsmap", b->path);
    out->kind = VKF_BPE_NORM_PRECOMPILED;
    out->from = out->to = NULL;
    VKF_RETURN_IF_ERROR(vkf_charsmap_parse_base64(map, b->path, &out->map));
    b->norm_count++;
    return VKF_OK;
  }
  if (!strcmp(type, "BertNormalizer") || !strcmp(type, "Lowercase") || !strcmp(type, "StripAccents")) {
    out->kind = !strcmp(type, "Lowercase") ? VKF_BPE_NORM_LOWERCASE
                : !strcmp(type, "StripAccents") ? VKF_BPE_NORM_STRIP_ACCENTS : VKF_BPE_NORM_BERT;
    out->from = out->to = NULL;
    out->clean_text = (uint8_t)get_bool(n, "clean_text", 1);
    out->chinese = (uint8_t)get_bool(n, "handle_chinese_chars", 1);
    out->lowercase = (uint8_t)get_bool(n, "lowercase", 1);
    /* strip_accents: null follows lowercase */
    out->strip_accents = (uint8_t)get_bool(n, "strip_accents", out->lowercase);
    b->norm_count++;
    return VKF_OK;
  }
  if (!strcmp(type, "ByteLevel")) {
    out->kind = VKF_BPE_NORM_BYTE_LEVEL;
    out->from = out->to = NULL;
    b->norm_count++;
    return VKF_OK;
  }
  if (!strcmp(type, "Nmt")) {
    out->kind = VKF_BPE_NORM_NMT;
    out->from = out->to = NULL;
    b->norm_count++;
    return VKF_OK;
  }
  if (!strcmp(type, "Strip")) {
    out->kind = VKF_BPE_NORM_STRIP;
    out->from = out->to = NULL;
    out->strip_left = get_bool(n, "strip_left", 1);
    out->strip_right = get_bool(n, "strip_right", 1);
    b->norm_count++;
    return VKF_OK;
  }
  if (!strcmp(type, "Prepend")) {
    out->kind = VKF_BPE_NORM_PREPEND;
    to = get_string(n, "prepend");
  } else if (!strcmp(type, "Replace") && regex && !strcmp(regex, " {2,}")) {
    /* the one regex the SentencePiece converters write: runs of spaces */
    out->kind = VKF_BPE_NORM_SPACE_RUNS;
    to = get_string(n, "content");
  } else if (!strcmp(type, "Replace")) {
    out->kind = VKF_BPE_NORM_REPLACE;
    out->re = NULL;
    to = get_string(n, "content");
    if (!to) return vkf_status_make(VKF_STATUS_PARSE, "%s: normalizer %s lacks its string",
                                    b->path, type);
    VKF_RETURN_IF_ERROR(replace_pattern(b, n, "normalizer", &from, &out->re));
    if (out->re) out->kind = VKF_BPE_NORM_REPLACE_REGEX;
  } else {
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: normalizer type \"%s\" is not supported",
                           b->path, type);
  }
  if (!to) return vkf_status_make(VKF_STATUS_PARSE, "%s: normalizer %s lacks its string", b->path,
                                  type);
  out->from = from ? dup_string(from) : NULL;
  out->to = dup_string(to);
  b->norm_count++;
  if (!out->to || (from && !out->from)) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", b->path);
  return VKF_OK;
}

static vkf_status one_char(const vkf_bpe *b, const char *s, const char *field, char out[8]) {
  uint32_t cp;
  size_t n = s ? strlen(s) : 0;
  if (!n || n > 4 || vkf_utf8_decode((const uint8_t *)s, n, &cp) != n)
    return vkf_status_make(VKF_STATUS_PARSE, "%s: %s must be one character", b->path, field);
  memcpy(out, s, n + 1);
  return VKF_OK;
}

/* A SplitDelimiterBehavior field; Punctuation's defaults to Isolated when absent. */
static vkf_status split_behavior(const vkf_bpe *b, const cJSON *obj, const char *where,
                                 vkf_bpe_behavior *out) {
  static const char *const names[] = {"Removed", "Isolated", "MergedWithPrevious", "MergedWithNext",
                                      "Contiguous"};
  const char *name = get_string(obj, "behavior");
  if (!name && !strcmp(where, "Punctuation")) name = "Isolated";
  for (size_t i = 0; name && i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(name, names[i])) {
      *out = (vkf_bpe_behavior)i;
      return VKF_OK;
    }
  return vkf_status_make(VKF_STATUS_PARSE, "%s: pre_tokenizer %s: behavior \"%s\" is not one of "
                         "Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous",
                         b->path, where, name ? name : "(none)");
}

/* Metaspace's prefix rule: prepend_scheme, or the older add_prefix_space boolean. */
static vkf_status prepend_scheme(const vkf_bpe *b, const cJSON *obj, vkf_bpe_prepend *out) {
  const char *scheme = get_string(obj, "prepend_scheme");
  *out = get_bool(obj, "add_prefix_space", 1) ? VKF_BPE_PREPEND_ALWAYS : VKF_BPE_PREPEND_NEVER;
  if (!scheme) return VKF_OK;
  if (!strcmp(scheme, "always")) *out = VKF_BPE_PREPEND_ALWAYS;
  else if (!strcmp(scheme, "first")) *out = VKF_BPE_PREPEND_FIRST;
  else if (!strcmp(scheme, "never")) *out = VKF_BPE_PREPEND_NEVER;
  else return vkf_status_make(VKF_STATUS_PARSE, "%s: Metaspace prepend_scheme \"%s\"", b->path, scheme);
  return VKF_OK;
}

static vkf_status add_pre(vkf_bpe *b, const cJSON *p) {
  const char *type = type_of(p);
  if (!strcmp(type, "Sequence")) {
    const cJSON *item;
    cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(p, "pretokenizers"))
        VKF_RETURN_IF_ERROR(add_pre(b, item));
    return VKF_OK;
  }
  if (b->pre_count == VKF_BPE_MAX_STEPS)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: pre_tokenizer: more than %d steps", b->path,
                           VKF_BPE_MAX_STEPS);
  vkf_bpe_pre *out = &b->pres[b->pre_count];
  memset(out, 0, sizeof *out);
  const char *string_pattern = get_string(cJSON_GetObjectItemCaseSensitive(p, "pattern"), "String");
  if (!strcmp(type, "Split") && string_pattern) {
    out->kind = VKF_BPE_PRE_SPLIT_STRING;
    if (strlen(string_pattern) >= VKF_BPE_MAX_LITERAL)
      return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: pre_tokenizer Split: a String pattern of "
                             "%zu bytes is not supported (at most %d)", b->path,
                             strlen(string_pattern), VKF_BPE_MAX_LITERAL - 1);
    memcpy(out->literal, string_pattern, strlen(string_pattern) + 1);
    VKF_RETURN_IF_ERROR(split_behavior(b, p, "Split", &out->behavior));
    out->invert = get_bool(p, "invert", 0);
  } else if (!strcmp(type, "BertPreTokenizer")) {
    out->kind = VKF_BPE_PRE_BERT;
  } else if (!strcmp(type, "Whitespace")) {
    out->kind = VKF_BPE_PRE_WHITESPACE;
  } else if (!strcmp(type, "Punctuation")) {
    out->kind = VKF_BPE_PRE_PUNCTUATION;
    VKF_RETURN_IF_ERROR(split_behavior(b, p, "Punctuation", &out->behavior));
  } else if (!strcmp(type, "CharDelimiterSplit")) {
    out->kind = VKF_BPE_PRE_CHAR_DELIMITER;
    VKF_RETURN_IF_ERROR(one_char(b, get_string(p, "delimiter"), "pre_tokenizer CharDelimiterSplit "
                                 "delimiter", out->literal));
  } else if (!strcmp(type, "Split")) {
    const cJSON *pattern = cJSON_GetObjectItemCaseSensitive(p, "pattern");
    const char *regex = get_string(pattern, "Regex");
    const char *behavior = get_string(p, "behavior");
    if (!regex)
      return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: pre_tokenizer Split: only Regex patterns "
                             "are supported", b->path);
    (void)behavior;
    VKF_RETURN_IF_ERROR(split_behavior(b, p, "Split", &out->behavior));
    out->invert = get_bool(p, "invert", 0);
    /* GPT-2's, Llama-3's and Qwen2's patterns isolated run hand-written (pretokenize.c, tested
     * against tokenizers); any other pattern or behavior runs on Oniguruma, as tokenizers does */
    out->pattern = vkf_pretok_pattern_of(regex);
    if (out->pattern && out->behavior == VKF_BPE_ISOLATED && !out->invert) {
      out->kind = VKF_BPE_PRE_SPLIT;
    } else {
      out->pattern = VKF_PRETOK_NONE;
      out->kind = VKF_BPE_PRE_SPLIT_REGEX;
      vkf_status st = vkf_regex_compile(regex, "pre_tokenizer Split", &out->re);
      if (st) return vkf_status_annotate(st, "%s: ", b->path);
    }
  } else if (!strcmp(type, "ByteLevel")) {
    out->kind = VKF_BPE_PRE_BYTE_LEVEL;
    out->add_prefix_space = get_bool(p, "add_prefix_space", 1);
    out->pattern = get_bool(p, "use_regex", 1) ? VKF_PRETOK_GPT2 : VKF_PRETOK_NONE;
  } else if (!strcmp(type, "UnicodeScripts")) {
    out->kind = VKF_BPE_PRE_UNICODE_SCRIPTS;
  } else if (!strcmp(type, "WhitespaceSplit")) {
    out->kind = VKF_BPE_PRE_WHITESPACE_SPLIT;
  } else if (!strcmp(type, "Digits")) {
    out->kind = VKF_BPE_PRE_DIGITS;
    out->individual_digits = get_bool(p, "individual_digits", 0);
  } else if (!strcmp(type, "Metaspace")) {
    out->kind = VKF_BPE_PRE_METASPACE;
    VKF_RETURN_IF_ERROR(one_char(b, get_string(p, "replacement"), "Metaspace replacement",
                                 out->replacement));
    VKF_RETURN_IF_ERROR(prepend_scheme(b, p, &out->prepend));
    out->split = get_bool(p, "split", 1);
  } else {
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: pre_tokenizer type \"%s\" is not "
                           "supported", b->path, type);
  }
  b->pre_count++;
  return VKF_OK;
}

static vkf_status add_dec(vkf_bpe *b, const cJSON *d) {
  const char *type = type_of(d);
  if (!strcmp(type, "Sequence")) {
    const cJSON *item;
    cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(d, "decoders"))
        VKF_RETURN_IF_ERROR(add_dec(b, item));
    return VKF_OK;
  }
  if (b->dec_count == VKF_BPE_MAX_STEPS)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: decoder: more than %d steps", b->path,
                           VKF_BPE_MAX_STEPS);
  vkf_bpe_dec *out = &b->decs[b->dec_count];
  memset(out, 0, sizeof *out);
  const char *from = NULL, *to = NULL;
  char rep[8]; /* Metaspace's replacement: `from` points here until it is copied below */
  if (!strcmp(type, "ByteLevel")) {
    out->kind = VKF_BPE_DEC_BYTE_LEVEL;
  } else if (!strcmp(type, "ByteFallback")) {
    out->kind = VKF_BPE_DEC_BYTE_FALLBACK;
  } else if (!strcmp(type, "Fuse")) {
    out->kind = VKF_BPE_DEC_FUSE;
  } else if (!strcmp(type, "Replace")) {
    out->kind = VKF_BPE_DEC_REPLACE;
    to = get_string(d, "content");
    if (!to) return vkf_status_make(VKF_STATUS_PARSE, "%s: decoder Replace lacks content", b->path);
    VKF_RETURN_IF_ERROR(replace_pattern(b, d, "decoder", &from, &out->re));
  } else if (!strcmp(type, "Strip")) {
    out->kind = VKF_BPE_DEC_STRIP;
    VKF_RETURN_IF_ERROR(one_char(b, get_string(d, "content"), "decoder Strip content", out->strip));
    const cJSON *start = cJSON_GetObjectItemCaseSensitive(d, "start");
    const cJSON *stop = cJSON_GetObjectItemCaseSensitive(d, "stop");
    if (!cJSON_IsNumber(start) || !cJSON_IsNumber(stop) || start->valuedouble < 0 ||
        stop->valuedouble < 0 || start->valuedouble > 1e6 || stop->valuedouble > 1e6)
      return vkf_status_make(VKF_STATUS_PARSE, "%s: decoder Strip start/stop", b->path);
    out->start = (size_t)start->valuedouble;
    out->stop = (size_t)stop->valuedouble;
  } else if (!strcmp(type, "WordPiece")) {
    out->kind = VKF_BPE_DEC_WORD_PIECE;
    from = get_string(d, "prefix");
    out->cleanup = get_bool(d, "cleanup", 1);
    if (!from) return vkf_status_make(VKF_STATUS_PARSE, "%s: decoder WordPiece lacks prefix", b->path);
  } else if (!strcmp(type, "BPEDecoder")) {
    out->kind = VKF_BPE_DEC_BPE;
    from = get_string(d, "suffix");
    if (!from || !*from) /* Rust's replace of "" would put a space between every character */
      return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: decoder BPEDecoder: an empty or missing "
                             "suffix is not supported", b->path);
  } else if (!strcmp(type, "CTC")) {
    out->kind = VKF_BPE_DEC_CTC;
    from = get_string(d, "pad_token");
    to = get_string(d, "word_delimiter_token");
    out->cleanup = get_bool(d, "cleanup", 1);
    if (!from || !to || (out->cleanup && !*to))
      return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: decoder CTC: pad_token and a non-empty "
                             "word_delimiter_token are needed", b->path);
  } else if (!strcmp(type, "Metaspace")) {
    out->kind = VKF_BPE_DEC_METASPACE;
    VKF_RETURN_IF_ERROR(one_char(b, get_string(d, "replacement"), "Metaspace replacement", rep));
    vkf_bpe_prepend scheme;
    VKF_RETURN_IF_ERROR(prepend_scheme(b, d, &scheme));
    out->add_prefix_space = scheme != VKF_BPE_PREPEND_NEVER;
    from = rep;
    to = " ";
  } else {
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: decoder type \"%s\" is not supported",
                           b->path, type);
  }
  out->from = from ? dup_string(from) : NULL;
  out->to = to ? dup_string(to) : NULL;
  b->dec_count++;
  if ((from && !out->from) || (to && !out->to))
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", b->path);
  return VKF_OK;
}

static vkf_status template_push(vkf_bpe *b, int32_t id) {
  if (b->template_count == VKF_BPE_MAX_TEMPLATE)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: post_processor: template longer than %d",
                           b->path, VKF_BPE_MAX_TEMPLATE);
  if (id < -1 || (id >= 0 && (size_t)id >= MAX_TOKENS))
    return vkf_status_make(VKF_STATUS_PARSE, "%s: post_processor: id %d out of range", b->path, id);
  b->template_ids[b->template_count++] = id;
  return VKF_OK;
}

/* A [token, id] pair of RobertaProcessing / BertProcessing. */
static vkf_status pair_id(const vkf_bpe *b, const cJSON *pair, int32_t *out) {
  const cJSON *id = cJSON_GetArrayItem(pair, 1);
  if (!cJSON_IsNumber(id))
    return vkf_status_make(VKF_STATUS_PARSE, "%s: post_processor cls/sep", b->path);
  *out = (int32_t)id->valuedouble;
  return VKF_OK;
}

static vkf_status add_post(vkf_bpe *b, const cJSON *p) {
  const char *type = type_of(p);
  if (!strcmp(type, "Sequence")) {
    const cJSON *item;
    cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(p, "processors"))
        VKF_RETURN_IF_ERROR(add_post(b, item));
    return VKF_OK;
  }
  if (!strcmp(type, "ByteLevel")) return VKF_OK; /* only offsets change */
  if (b->template_count)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: post_processor: two templates", b->path);
  if (!strcmp(type, "RobertaProcessing") || !strcmp(type, "BertProcessing")) {
    int32_t cls = -1, sep = -1;
    VKF_RETURN_IF_ERROR(pair_id(b, cJSON_GetObjectItemCaseSensitive(p, "cls"), &cls));
    VKF_RETURN_IF_ERROR(pair_id(b, cJSON_GetObjectItemCaseSensitive(p, "sep"), &sep));
    VKF_RETURN_IF_ERROR(template_push(b, cls));
    VKF_RETURN_IF_ERROR(template_push(b, -1));
    return template_push(b, sep);
  }
  if (strcmp(type, "TemplateProcessing"))
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: post_processor type \"%s\" is not "
                           "supported", b->path, type);
  const cJSON *specials = cJSON_GetObjectItemCaseSensitive(p, "special_tokens"), *piece;
  cJSON_ArrayForEach(piece, cJSON_GetObjectItemCaseSensitive(p, "single")) {
    const cJSON *special = cJSON_GetObjectItemCaseSensitive(piece, "SpecialToken");
    if (cJSON_GetObjectItemCaseSensitive(piece, "Sequence")) {
      VKF_RETURN_IF_ERROR(template_push(b, -1));
      continue;
    }
    const char *name = get_string(special, "id");
    const cJSON *ids = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(specials, name ? name : ""), "ids");
    if (!name || !cJSON_IsArray(ids))
      return vkf_status_make(VKF_STATUS_PARSE, "%s: post_processor: template token \"%s\" not in "
                             "special_tokens", b->path, name ? name : "");
    const cJSON *id;
    cJSON_ArrayForEach(id, ids) {
      if (!cJSON_IsNumber(id))
        return vkf_status_make(VKF_STATUS_PARSE, "%s: post_processor: ids of \"%s\"", b->path, name);
      VKF_RETURN_IF_ERROR(template_push(b, (int32_t)id->valuedouble));
    }
  }
  return VKF_OK;
}

/* ---- vocabulary and merges ------------------------------------------------------------------ */

static vkf_status set_token(vkf_bpe *b, const char *s, double id_value, const char *what) {
  if (!(id_value >= 0 && id_value < MAX_TOKENS) || id_value != (double)(int32_t)id_value)
    return vkf_status_make(VKF_STATUS_PARSE, "%s: %s \"%s\": id %.0f out of range", b->path, what,
                           s, id_value);
  size_t id = (size_t)id_value;
  size_t n = strlen(s);
  if (b->tokens[id]) {
    if (b->token_sizes[id] == n && !memcmp(b->tokens[id], s, n))
      return VKF_OK; /* an added token repeating its vocabulary entry */
    /* Two strings for one id: one of them could never be encoded as itself or decoded. */
    return vkf_status_make(VKF_STATUS_PARSE, "%s: %s \"%s\" has id %zu, which \"%s\" already has",
                           b->path, what, s, id, b->tokens[id]);
  }
  if (!(b->tokens[id] = malloc(n + 1))) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "vocab");
  memcpy(b->tokens[id], s, n + 1);
  b->token_sizes[id] = (uint32_t)n;
  return VKF_OK;
}

static vkf_status index_vocab(vkf_bpe *b) {
  size_t slots = 16;
  while (slots < b->token_count * 2) slots *= 2;
  if (!(b->slots = calloc(slots, sizeof *b->slots)))
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "vocab index");
  b->slot_mask = slots - 1;
  for (size_t id = 0; id < b->token_count; id++) {
    if (!b->tokens[id]) continue;
    size_t i = vkf_bpe_hash(b->tokens[id], b->token_sizes[id]) & b->slot_mask;
    for (;; i = (i + 1) & b->slot_mask) {
      uint32_t s = b->slots[i];
      if (s == 0) {
        b->slots[i] = (uint32_t)id + 1;
        break;
      }
      if (b->token_sizes[s - 1] == b->token_sizes[id] &&
          !memcmp(b->tokens[s - 1], b->tokens[id], b->token_sizes[id]))
        break; /* a duplicate string keeps its first id */
    }
  }
  for (int v = 0; v < 256; v++) {
    char name[8];
    snprintf(name, sizeof name, "<0x%02X>", v);
    b->byte_ids[v] = vkf_bpe_find(b, name, 6);
  }
  return VKF_OK;
}

static vkf_status load_merges(vkf_bpe *b, const cJSON *merges) {
  size_t count = (size_t)cJSON_GetArraySize(merges), cap = 16;
  if (!count) return VKF_OK;
  while (cap < count * 2) cap *= 2;
  b->merge_keys = malloc(cap * sizeof *b->merge_keys);
  b->merge_ranks = malloc(cap * sizeof *b->merge_ranks);
  b->merge_ids = malloc(cap * sizeof *b->merge_ids);
  char *joined = malloc(1024);
  if (!b->merge_keys || !b->merge_ranks || !b->merge_ids || !joined) {
    free(joined);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "merges");
  }
  memset(b->merge_keys, 0xFF, cap * sizeof *b->merge_keys);
  b->merge_mask = cap - 1;
  const cJSON *m;
  uint32_t rank = 0;
  vkf_status st = VKF_OK;
  cJSON_ArrayForEach(m, merges) {
    /* "a b" (split at the one space) or ["a", "b"] */
    const char *left = NULL, *right = NULL;
    size_t left_size = 0, right_size = 0;
    if (cJSON_IsString(m)) {
      const char *space = strchr(m->valuestring, ' ');
      if (space && !strchr(space + 1, ' ')) {
        left = m->valuestring;
        left_size = (size_t)(space - left);
        right = space + 1;
        right_size = strlen(right);
      }
    } else if (cJSON_IsArray(m) && cJSON_GetArraySize(m) == 2 &&
               cJSON_IsString(cJSON_GetArrayItem(m, 0)) && cJSON_IsString(cJSON_GetArrayItem(m, 1))) {
      left = cJSON_GetArrayItem(m, 0)->valuestring;
      right = cJSON_GetArrayItem(m, 1)->valuestring;
      left_size = strlen(left);
      right_size = strlen(right);
    }
    if (!left || left_size + right_size >= 1024) {
      st = vkf_status_make(VKF_STATUS_PARSE, "%s: model.merges[%u] is not \"a b\" or [a, b]",
                           b->path, rank);
      break;
    }
    /* tokenizers joins a + b[len(prefix)..]: the right side's continuing_subword_prefix goes */
    size_t cut = b->prefix ? strlen(b->prefix) : 0;
    if (cut > right_size) {
      st = vkf_status_make(VKF_STATUS_PARSE, "%s: model.merges[%u]: \"%.*s\" is shorter than the "
                           "continuing_subword_prefix", b->path, rank, (int)right_size, right);
      break;
    }
    memcpy(joined, left, left_size);
    memcpy(joined + left_size, right + cut, right_size - cut);
    int32_t a = vkf_bpe_find(b, left, left_size), c = vkf_bpe_find(b, right, right_size);
    int32_t id = vkf_bpe_find(b, joined, left_size + right_size - cut);
    if (a < 0 || c < 0 || id < 0) {
      st = vkf_status_make(VKF_STATUS_PARSE, "%s: model.merges[%u]: \"%.*s\" + \"%.*s\": a token "
                           "is not in the vocabulary", b->path, rank, (int)left_size, left,
                           (int)right_size, right);
      break;
    }
    uint64_t key = vkf_bpe_pair_key(a, c);
    size_t i = vkf_bpe_pair_slot(key, b->merge_mask);
    while (b->merge_keys[i] != UINT64_MAX && b->merge_keys[i] != key) i = (i + 1) & b->merge_mask;
    /* a repeated merge takes its last rank: tokenizers collects the merges into a map in order */
    b->merge_keys[i] = key;
    b->merge_ranks[i] = rank;
    b->merge_ids[i] = id;
    rank++;
  }
  free(joined);
  return st;
}

/* added_tokens: each into the vocabulary (an entry repeating a vocabulary string keeps it) and
 * into the list matched before the model. */
static vkf_status load_added(vkf_bpe *b, const cJSON *added) {
  const cJSON *item;
  cJSON_ArrayForEach(item, added) {
    const char *content = get_string(item, "content");
    double id = cJSON_GetObjectItemCaseSensitive(item, "id")->valuedouble;
    VKF_RETURN_IF_ERROR(set_token(b, content, id, "added_tokens"));
    if (!*content) continue;
    vkf_bpe_added *a = &b->added[b->added_count++];
    a->id = (int32_t)id;
    a->content = b->tokens[a->id];
    a->size = b->token_sizes[a->id];
    a->special = (uint8_t)get_bool(item, "special", 0);
    a->lstrip = (uint8_t)get_bool(item, "lstrip", 0);
    a->rstrip = (uint8_t)get_bool(item, "rstrip", 0);
    a->single_word = (uint8_t)get_bool(item, "single_word", 0);
    a->normalized = (uint8_t)get_bool(item, "normalized", !a->special);
    b->special[a->id] |= a->special;
  }
  return VKF_OK;
}

/* BPE's continuing_subword_prefix and end_of_word_suffix (null: none); WordPiece's prefix and
 * max_input_chars_per_word, which tokenizers defaults to "##" and 100. */
static vkf_status load_affixes(vkf_bpe *b, const cJSON *model) {
  const char *prefix = get_string(model, "continuing_subword_prefix");
  const char *suffix = b->model == VKF_BPE_MODEL_BPE ? get_string(model, "end_of_word_suffix") : NULL;
  if (b->model == VKF_BPE_MODEL_WORD_PIECE) {
    const cJSON *max = cJSON_GetObjectItemCaseSensitive(model, "max_input_chars_per_word");
    if (!prefix) prefix = "##";
    b->max_input_chars = 100;
    if (cJSON_IsNumber(max))
      b->max_input_chars = max->valuedouble <= 0 ? 0 : max->valuedouble >= 1e15 ? (size_t)1e15
                                                                                   : (size_t)max->valuedouble;
  }
  if (b->model == VKF_BPE_MODEL_WORD_LEVEL) prefix = NULL;
  if ((prefix && strlen(prefix) > VKF_BPE_MAX_AFFIX) || (suffix && strlen(suffix) > VKF_BPE_MAX_AFFIX))
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: model: a continuing_subword_prefix or "
                           "end_of_word_suffix longer than %d bytes is not supported", b->path,
                           VKF_BPE_MAX_AFFIX);
  if (prefix && !(b->prefix = dup_string(prefix)))
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", b->path);
  if (suffix && !(b->suffix = dup_string(suffix)))
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", b->path);
  return VKF_OK;
}

static vkf_status load_model(vkf_bpe *b, const cJSON *root) {
  const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
  const cJSON *vocab = cJSON_GetObjectItemCaseSensitive(model, "vocab");
  const cJSON *added = cJSON_GetObjectItemCaseSensitive(root, "added_tokens"), *item;
  if (!cJSON_IsObject(vocab))
    return vkf_status_make(VKF_STATUS_PARSE, "%s: model.vocab is not an object", b->path);
  const cJSON *dropout = cJSON_GetObjectItemCaseSensitive(model, "dropout");
  if (cJSON_IsNumber(dropout) && dropout->valuedouble > 0)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: model.dropout %g: BPE-dropout skips merges at random on every "
                           "encoding (a training-time regulariser, so no two runs agree); set it "
                           "to null to tokenize",
                           b->path, dropout->valuedouble);
  VKF_RETURN_IF_ERROR(load_affixes(b, model));
  double max_id = -1;
  cJSON_ArrayForEach(item, vocab) {
    if (!cJSON_IsNumber(item))
      return vkf_status_make(VKF_STATUS_PARSE, "%s: model.vocab[\"%s\"] is not a number", b->path,
                             item->string);
    if (item->valuedouble > max_id) max_id = item->valuedouble;
  }
  cJSON_ArrayForEach(item, added) {
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(item, "id");
    if (!cJSON_IsNumber(id) || !get_string(item, "content"))
      return vkf_status_make(VKF_STATUS_PARSE, "%s: added_tokens: entry without id or content",
                             b->path);
    if (id->valuedouble > max_id) max_id = id->valuedouble;
  }
  if (max_id >= MAX_TOKENS)
    return vkf_status_make(VKF_STATUS_PARSE, "%s: token id %.0f out of range", b->path, max_id);
  b->token_count = (size_t)(max_id + 1);
  b->tokens = calloc(b->token_count + 1, sizeof *b->tokens);
  b->token_sizes = calloc(b->token_count + 1, sizeof *b->token_sizes);
  b->special = calloc(b->token_count + 1, 1);
  size_t added_count = (size_t)cJSON_GetArraySize(added);
  b->added = calloc(added_count + 1, sizeof *b->added);
  if (!b->tokens || !b->token_sizes || !b->special || !b->added)
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: vocab", b->path);
  cJSON_ArrayForEach(item, vocab) VKF_RETURN_IF_ERROR(set_token(b, item->string, item->valuedouble,
                                                                "model.vocab"));
  VKF_RETURN_IF_ERROR(load_added(b, added));
  VKF_RETURN_IF_ERROR(index_vocab(b));
  const char *unk = get_string(model, "unk_token");
  if (!unk && b->model == VKF_BPE_MODEL_WORD_PIECE) unk = "[UNK]"; /* tokenizers' defaults */
  if (!unk && b->model == VKF_BPE_MODEL_WORD_LEVEL) unk = "<unk>";
  b->unk_id = unk ? vkf_bpe_find(b, unk, strlen(unk)) : -1;
  /* WordPiece and WordLevel fail only when a word needs the missing unk token */
  if (b->model != VKF_BPE_MODEL_BPE) return VKF_OK;
  if (unk && b->unk_id < 0)
    return vkf_status_make(VKF_STATUS_PARSE, "%s: model.unk_token \"%s\" is not in the vocabulary",
                           b->path, unk);
  b->byte_fallback = get_bool(model, "byte_fallback", 0);
  b->fuse_unk = get_bool(model, "fuse_unk", 0);
  b->ignore_merges = get_bool(model, "ignore_merges", 0);
  const cJSON *merges = cJSON_GetObjectItemCaseSensitive(model, "merges");
  if (merges && !cJSON_IsArray(merges))
    return vkf_status_make(VKF_STATUS_PARSE, "%s: model.merges is not an array", b->path);
  return load_merges(b, merges);
}

/* model.vocab of a Unigram model: [[piece, score], ...], the id being the position. */
static vkf_status load_unigram(vkf_bpe *b, const cJSON *root) {
  const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
  const cJSON *vocab = cJSON_GetObjectItemCaseSensitive(model, "vocab");
  const cJSON *added = cJSON_GetObjectItemCaseSensitive(root, "added_tokens"), *item;
  if (!cJSON_IsArray(vocab))
    return vkf_status_make(VKF_STATUS_PARSE, "%s: model.vocab of a Unigram model is not an array",
                           b->path);
  size_t count = (size_t)cJSON_GetArraySize(vocab);
  if (!count || count >= MAX_TOKENS)
    return vkf_status_make(VKF_STATUS_PARSE, "%s: model.vocab: %zu pieces", b->path, count);
  double max_id = (double)count - 1;
  cJSON_ArrayForEach(item, added) {
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(item, "id");
    if (!cJSON_IsNumber(id) || !get_string(item, "content"))
      return vkf_status_make(VKF_STATUS_PARSE, "%s: added_tokens: entry without id or content",
                             b->path);
    if (id->valuedouble > max_id) max_id = id->valuedouble;
  }
  if (max_id >= MAX_TOKENS)
    return vkf_status_make(VKF_STATUS_PARSE, "%s: token id %.0f out of range", b->path, max_id);
  b->token_count = (size_t)(max_id + 1);
  b->piece_count = count;
  b->tokens = calloc(b->token_count + 1, sizeof *b->tokens);
  b->token_sizes = calloc(b->token_count + 1, sizeof *b->token_sizes);
  b->special = calloc(b->token_count + 1, 1);
  b->scores = calloc(b->token_count + 1, sizeof *b->scores);
  b->added = calloc((size_t)cJSON_GetArraySize(added) + 1, sizeof *b->added);
  if (!b->tokens || !b->token_sizes || !b->special || !b->scores || !b->added)
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: vocab", b->path);
  size_t id = 0;
  b->min_score = 1e300;
  cJSON_ArrayForEach(item, vocab) {
    const cJSON *piece = cJSON_GetArrayItem(item, 0), *score = cJSON_GetArrayItem(item, 1);
    if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != 2 || !cJSON_IsString(piece) ||
        !cJSON_IsNumber(score))
      return vkf_status_make(VKF_STATUS_PARSE, "%s: model.vocab[%zu] is not [piece, score]",
                             b->path, id);
    VKF_RETURN_IF_ERROR(set_token(b, piece->valuestring, (double)id, "model.vocab"));
    b->scores[id] = score->valuedouble;
    if (score->valuedouble < b->min_score) b->min_score = score->valuedouble;
    if (b->token_sizes[id] > b->max_token_bytes) b->max_token_bytes = b->token_sizes[id];
    id++;
  }
  VKF_RETURN_IF_ERROR(load_added(b, added));
  VKF_RETURN_IF_ERROR(index_vocab(b));
  const cJSON *unk = cJSON_GetObjectItemCaseSensitive(model, "unk_id");
  b->unk_id = -1;
  if (cJSON_IsNumber(unk)) {
    if (!(unk->valuedouble >= 0 && unk->valuedouble < (double)count))
      return vkf_status_make(VKF_STATUS_PARSE, "%s: model.unk_id %.0f is not in the vocabulary of "
                             "%zu pieces", b->path, unk->valuedouble, count);
    b->unk_id = (int32_t)unk->valuedouble;
  } else if (unk && !cJSON_IsNull(unk)) {
    return vkf_status_make(VKF_STATUS_PARSE, "%s: model.unk_id is not a number", b->path);
  }
  b->byte_fallback = get_bool(model, "byte_fallback", 0);
  b->fuse_unk = 1;
  return VKF_OK;
}

static vkf_status load_steps(vkf_bpe *b, const cJSON *root) {
  const cJSON *n = cJSON_GetObjectItemCaseSensitive(root, "normalizer");
  const cJSON *p = cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer");
  const cJSON *post = cJSON_GetObjectItemCaseSensitive(root, "post_processor");
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "decoder");
  if (cJSON_IsObject(n)) VKF_RETURN_IF_ERROR(add_norm(b, n));
  if (cJSON_IsObject(p)) VKF_RETURN_IF_ERROR(add_pre(b, p));
  if (cJSON_IsObject(post)) VKF_RETURN_IF_ERROR(add_post(b, post));
  if (cJSON_IsObject(d)) VKF_RETURN_IF_ERROR(add_dec(b, d));
  /* BOS: a special token opening the template; EOS: one closing it */
  b->bos_id = b->eos_id = -1;
  if (b->template_count > 1 && b->template_ids[0] >= 0) b->bos_id = b->template_ids[0];
  if (b->template_count > 1 && b->template_ids[b->template_count - 1] >= 0)
    b->eos_id = b->template_ids[b->template_count - 1];
  for (size_t i = 0; i < b->template_count; i++)
    if (b->template_ids[i] >= 0 && (size_t)b->template_ids[i] >= b->token_count)
      return vkf_status_make(VKF_STATUS_PARSE, "%s: post_processor: id %d is not in the vocabulary",
                             b->path, b->template_ids[i]);
  return VKF_OK;
}

vkf_status vkf_bpe_load(const char *path, vkf_bpe **out_bpe, char out_model_type[32]) {
  *out_bpe = NULL;
  out_model_type[0] = '\0';
  char *text = NULL;
  size_t text_size = 0;
  VKF_RETURN_IF_ERROR(
      vkf_file_read_bounded(path, MAX_FILE_SIZE, "a tokenizer.json", &text, &text_size));
  cJSON *root = cJSON_ParseWithLength(text, text_size);
  free(text);
  if (!root) return vkf_status_make(VKF_STATUS_PARSE, "%s: not valid JSON", path);
  vkf_status st = vkf_bpe_from_json(root, path, out_bpe, out_model_type);
  cJSON_Delete(root);
  return st;
}

vkf_status vkf_bpe_from_json(const cJSON *root, const char *path, vkf_bpe **out_bpe,
                             char out_model_type[32]) {
  *out_bpe = NULL;
  out_model_type[0] = '\0';
  const char *type = get_string(cJSON_GetObjectItemCaseSensitive(root, "model"), "type");
  if (!type) return vkf_status_make(VKF_STATUS_PARSE, "%s: model.type is missing", path);
  snprintf(out_model_type, 32, "%s", type);
  static const char *const models[] = {"BPE", "Unigram", "WordPiece", "WordLevel"}; /* by kind */
  size_t kind = 0;
  while (kind < 4 && strcmp(type, models[kind])) kind++;
  if (kind == 4) return VKF_OK;
  int unigram = kind == VKF_BPE_MODEL_UNIGRAM;
  vkf_bpe *b = calloc(1, sizeof *b);
  if (b) b->model = (vkf_bpe_model_kind)kind;
  vkf_status st = b && (b->path = dup_string(path)) ? VKF_OK
                                                    : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", path);
  if (!st) st = unigram ? load_unigram(b, root) : load_model(b, root);
  if (!st) st = load_steps(b, root);
  if (st) {
    vkf_bpe_destroy(b);
    return st;
  }
  *out_bpe = b;
  return VKF_OK;
}

void vkf_bpe_destroy(vkf_bpe *b) {
  if (!b) return;
  for (size_t i = 0; b->tokens && i < b->token_count; i++) free(b->tokens[i]);
  for (size_t i = 0; i < b->norm_count; i++) {
    free(b->norms[i].from), free(b->norms[i].to);
    vkf_charsmap_free(&b->norms[i].map);
    vkf_regex_free(b->norms[i].re);
  }
  for (size_t i = 0; i < b->dec_count; i++) {
    free(b->decs[i].from), free(b->decs[i].to);
    vkf_regex_free(b->decs[i].re);
  }
  /* a step that failed half-way may hold a compiled regex past the count */
  for (size_t i = 0; i < VKF_BPE_MAX_STEPS; i++) vkf_regex_free(b->pres[i].re);
  free(b->tokens);
  free(b->token_sizes);
  free(b->special);
  free(b->scores);
  free(b->slots);
  free(b->merge_keys);
  free(b->merge_ranks);
  free(b->merge_ids);
  free(b->added);
  free(b->prefix);
  free(b->suffix);
  free(b->path);
  free(b);
}
