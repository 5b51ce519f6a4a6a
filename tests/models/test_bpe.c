/* BPE tokenizers vs Hugging Face tokenizers: every golden of tools/goldens/make_bpe_golden.py encoded,
 * decoded and stream-decoded; byte fallback; merges as [a, b] pairs; long words; WordPiece through
 * the same interface; malformed files, unknown patterns and bad ids rejected with their names; NFC
 * of code point sequences vs Python's unicodedata.normalize; NFC, NFD, NFKC, NFKD normalizers, also
 * in a Sequence. */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "text/text_tokenizer.h"
#include "text/wordpiece.h"
#include "text/unicode.h"
#include "tests/test_util.h"

/* make_bpe_golden.py's, then make_tokenizer_components_golden.py's (one per family of
 * normalizers, pre-tokenizers, post-processors, decoders and WordPiece/WordLevel models). The
 * first four must stay the byte-level and SentencePiece BPEs check_long_words() runs. */
static const char *const NAMES[] = {
    "gpt2", "llama3", "qwen2", "llama2", "qwen2_nfc", "smollm", "digits_nmt",
    "tokcomp_bert", "tokcomp_bert_cased", "tokcomp_bert_raw", "tokcomp_norms", "tokcomp_norms_nfc",
    "tokcomp_ctc", "tokcomp_punct_removed", "tokcomp_punct_isolated", "tokcomp_punct_prev",
    "tokcomp_punct_next", "tokcomp_punct_contiguous", "tokcomp_split_removed",
    "tokcomp_split_isolated_invert", "tokcomp_split_prev", "tokcomp_split_next_invert",
    "tokcomp_split_contiguous", "tokcomp_split_removed_invert", "tokcomp_chardelim",
    "tokcomp_bpe_prefix", "tokcomp_metaspace_first", "tokcomp_split_regex_isolated",
    "tokcomp_split_regex_removed", "tokcomp_split_regex_prev", "tokcomp_split_regex_next_invert",
    "tokcomp_split_regex_contiguous", "tokcomp_split_regex_empty", "tokcomp_split_regex_lookaround",
    "tokcomp_split_gpt2_removed_invert", "tokcomp_replace_regex", "tokcomp_unicode_scripts",
    "tokcomp_unicode_scripts_digits", "tokcomp_byte_level_norm"};

static char *path_of(const char *a, const char *b) {
  const char *root = getenv("VKF_SOURCE_DIR");
  size_t n = strlen(a) + strlen(b) + (root ? strlen(root) : 1) + 8;
  char *p = malloc(n);
  snprintf(p, n, "%s/%s%s", root ? root : ".", a, b);
  return p;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *d = malloc((size_t)n + 1);
  size_t got = fread(d, 1, (size_t)n, f);
  d[got] = '\0';
  fclose(f);
  return d;
}

static cJSON *load_json(const char *rel) {
  char *p = path_of(rel, ""), *text = slurp(p);
  cJSON *j = text ? cJSON_Parse(text) : NULL;
  if (!j) fprintf(stderr, "cannot read %s\n", p);
  free(p);
  free(text);
  return j;
}

static void write_file(const char *dir, const char *name, const char *text) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  VKF_ASSERT(f);
  fputs(text, f);
  fclose(f);
}

static size_t json_ids(const cJSON *arr, int32_t *out, size_t cap) {
  size_t n = 0;
  const cJSON *v;
  cJSON_ArrayForEach(v, arr) if (n < cap) out[n++] = (int32_t)v->valuedouble;
  return n;
}

static int valid_utf8(const char *s, size_t n) {
  for (size_t i = 0; i < n;) {
    uint32_t cp;
    size_t len = vkf_utf8_decode((const uint8_t *)s + i, n - i, &cp);
    if (!len) return 0;
    i += len;
  }
  return 1;
}

/* Decodes ids one at a time: every piece is complete UTF-8 and all of them make decode()'s text. */
static void check_stream(const vkf_text_tokenizer *tok, const int32_t *ids, size_t count, int skip,
                         const char *want, const char *name) {
  vkf_text_decoder *dec;
  CHECK_OK(vkf_text_decoder_create(tok, skip, &dec));
  size_t cap = strlen(want) + 64, n = 0;
  char *got = calloc(cap * 4, 1);
  for (size_t i = 0; i < count; i++) {
    const char *piece;
    size_t size;
    CHECK_OK(vkf_text_decoder_push(dec, ids[i], &piece, &size));
    CHECK_MSG(valid_utf8(piece, size), "%s: stream piece %zu is not complete UTF-8", name, i);
    if (n + size < cap * 4) memcpy(got + n, piece, size), n += size;
  }
  const char *piece;
  size_t size;
  CHECK_OK(vkf_text_decoder_flush(dec, &piece, &size));
  if (n + size < cap * 4) memcpy(got + n, piece, size), n += size;
  CHECK_MSG(n == strlen(want) && !memcmp(got, want, n), "%s: stream \"%.*s\" want \"%s\"", name,
            (int)n, got, want);
  free(got);
  vkf_text_decoder_destroy(dec);
}

static void check_golden(const char *name) {
  char rel[256];
  snprintf(rel, sizeof rel, "tests/models/data/%s", name);
  char *dir = path_of(rel, "");
  vkf_text_tokenizer *tok = NULL;
  CHECK_OK(vkf_text_tokenizer_load(dir, &tok));
  free(dir);
  if (!tok) return;
  snprintf(rel, sizeof rel, "tests/models/data/%s/tokenizer.json", name);
  cJSON *doc = load_json(rel);
  const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "model"), "type"));
  CHECK_MSG(type && !strcmp(vkf_text_tokenizer_kind(tok), type), "%s: kind %s, model.type %s", name,
            vkf_text_tokenizer_kind(tok), type ? type : "?");
  cJSON_Delete(doc);
  snprintf(rel, sizeof rel, "tests/models/golden/bpe/%s.json", name);
  cJSON *g = load_json(rel);
  const cJSON *row;
  int32_t want[1024];
  int rows = 0;
  cJSON_ArrayForEach(row, cJSON_GetObjectItem(g, "texts")) {
    const char *text = cJSON_GetObjectItem(row, "text")->valuestring;
    size_t n = json_ids(cJSON_GetObjectItem(row, "ids"), want, 1024);
    int32_t *ids = NULL;
    size_t count = 0;
    CHECK_OK(vkf_text_tokenizer_encode(tok, text, 1, &ids, &count));
    CHECK_MSG(count == n && !memcmp(ids, want, n * sizeof *ids), "%s: ids of \"%s\" differ", name,
              text);
    size_t k = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(row, "tokens")) {
      const char *s = k < count ? vkf_text_tokenizer_id_to_token(tok, ids[k]) : NULL;
      CHECK_MSG(s && !strcmp(s, t->valuestring), "%s: token %zu of \"%s\"", name, k, text);
      k++;
    }
    free(ids);
    rows++;
  }
  CHECK_MSG(rows >= 20, "%s: %d golden texts", name, rows);
  cJSON_Delete(g);

  snprintf(rel, sizeof rel, "tests/models/golden/bpe/%s_decode.json", name);
  g = load_json(rel);
  int cases = 0;
  cJSON_ArrayForEach(row, cJSON_GetObjectItem(g, "cases")) {
    size_t n = json_ids(cJSON_GetObjectItem(row, "ids"), want, 1024);
    int skip = cJSON_IsTrue(cJSON_GetObjectItem(row, "skip_special"));
    const char *text = cJSON_GetObjectItem(row, "text")->valuestring;
    char *got = NULL;
    CHECK_OK(vkf_text_tokenizer_decode(tok, want, n, skip, &got));
    CHECK_MSG(got && !strcmp(got, text), "%s: decode (skip %d) \"%s\" want \"%s\"", name, skip,
              got ? got : "", text);
    free(got);
    check_stream(tok, want, n, skip, text, name);
    cases++;
  }
  CHECK_MSG(cases >= 40, "%s: %d decode cases", name, cases);
  cJSON_Delete(g);

  /* ids outside the vocabulary are errors naming the id */
  int32_t bad[] = {5, -1};
  char *text = NULL;
  CHECK_STATUS(vkf_text_tokenizer_decode(tok, bad, 2, 0, &text), VKF_STATUS_INVALID_ARGUMENT,
               "id -1");
  bad[1] = 1 << 30;
  CHECK_STATUS(vkf_text_tokenizer_decode(tok, bad, 2, 0, &text), VKF_STATUS_INVALID_ARGUMENT,
               "id 1073741824");
  vkf_text_decoder *dec;
  const char *piece;
  size_t size;
  CHECK_OK(vkf_text_decoder_create(tok, 0, &dec));
  CHECK_STATUS(vkf_text_decoder_push(dec, INT32_MAX, &piece, &size), VKF_STATUS_INVALID_ARGUMENT,
               "2147483647");
  vkf_text_decoder_destroy(dec);
  vkf_text_tokenizer_destroy(tok);
}

static vkf_text_tokenizer *load_named(const char *name) {
  char rel[256];
  snprintf(rel, sizeof rel, "tests/models/data/%s", name);
  char *dir = path_of(rel, "");
  vkf_text_tokenizer *tok = NULL;
  CHECK_OK(vkf_text_tokenizer_load(dir, &tok));
  free(dir);
  return tok;
}

/* Llama-2 style: characters outside the vocabulary become <0xNN> tokens, and decode back. */
static void check_byte_fallback(void) {
  vkf_text_tokenizer *tok = load_named("llama2");
  if (!tok) return;
  int32_t *ids;
  size_t count;
  CHECK_OK(vkf_text_tokenizer_encode(tok, "\xe2\x98\x83", 0, &ids, &count)); /* ☃ */
  CHECK_MSG(count == 4, "%zu ids", count); /* ▁ then three bytes */
  const char *want[] = {"\xe2\x96\x81", "<0xE2>", "<0x98>", "<0x83>"};
  for (size_t i = 0; i < count && i < 4; i++)
    CHECK_MSG(!strcmp(vkf_text_tokenizer_id_to_token(tok, ids[i]), want[i]), "id %zu: %s", i,
              vkf_text_tokenizer_id_to_token(tok, ids[i]));
  char *text;
  CHECK_OK(vkf_text_tokenizer_decode(tok, ids, count, 0, &text));
  CHECK(!strcmp(text, "\xe2\x98\x83"));
  free(text);
  /* streaming holds a byte run until a token that is not a byte ends it ("a" here) */
  free(ids);
  CHECK_OK(vkf_text_tokenizer_encode(tok, "\xe2\x98\x83" "a", 0, &ids, &count));
  CHECK_MSG(count == 5, "%zu ids", count);
  vkf_text_decoder *dec;
  CHECK_OK(vkf_text_decoder_create(tok, 0, &dec));
  const char *piece;
  size_t size, sizes[5] = {0};
  for (size_t i = 0; i < count && i < 5; i++) {
    CHECK_OK(vkf_text_decoder_push(dec, ids[i], &piece, &size));
    sizes[i] = size;
  }
  CHECK_MSG(sizes[0] == 0 && sizes[1] == 0 && sizes[2] == 0 && sizes[3] == 0 && sizes[4] == 4 &&
                !memcmp(piece, "\xe2\x98\x83" "a", 4), "pieces %zu %zu %zu %zu %zu", sizes[0],
            sizes[1], sizes[2], sizes[3], sizes[4]);
  /* a character that never completes comes out of flush() as U+FFFD per byte, as decode() has it */
  vkf_text_decoder_destroy(dec);
  CHECK_OK(vkf_text_decoder_create(tok, 0, &dec));
  CHECK_OK(vkf_text_decoder_push(dec, ids[1], &piece, &size));
  CHECK(size == 0);
  CHECK_OK(vkf_text_decoder_flush(dec, &piece, &size));
  CHECK(size == 3 && !memcmp(piece, "\xef\xbf\xbd", 3));
  vkf_text_decoder_destroy(dec);
  free(ids);
  vkf_text_tokenizer_destroy(tok);
}

/* A 10k-character word must merge in well under a second (no quadratic pass), and byte-level
 * tokenizers give the text back exactly. */
static void check_long_words(void) {
  for (size_t k = 0; k < 4; k++) {
    vkf_text_tokenizer *tok = load_named(NAMES[k]);
    if (!tok) continue;
    size_t n = 20000;
    char *text = malloc(n + 1);
    for (size_t i = 0; i < n; i++) text[i] = k % 2 ? 'a' : "the quick"[i % 9] == ' ' ? 'x' : "the quick"[i % 9];
    text[n] = '\0';
    clock_t t0 = clock();
    int32_t *ids;
    size_t count;
    CHECK_OK(vkf_text_tokenizer_encode(tok, text, 0, &ids, &count));
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    CHECK_MSG(secs < 1.0, "%s: %zu characters took %.2f s", NAMES[k], n, secs);
    char *back;
    CHECK_OK(vkf_text_tokenizer_decode(tok, ids, count, 0, &back));
    /* (Llama-2's decoder strips the space its normalizer prepended) */
    CHECK_MSG(!strcmp(back, text), "%s: long text does not round-trip", NAMES[k]);
    free(back);
    free(ids);
    free(text);
    vkf_text_tokenizer_destroy(tok);
  }
}

/* Merges written as [a, b] pairs (newer tokenizers) give the same ids as "a b" strings. */
static void check_pair_merges(const char *tmp) {
  cJSON *doc = load_json("tests/models/data/gpt2/tokenizer.json");
  cJSON *merges = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "model"), "merges");
  cJSON *pairs = cJSON_CreateArray();
  const cJSON *m;
  cJSON_ArrayForEach(m, merges) {
    char *s = m->valuestring, *space = strchr(s, ' ');
    *space = '\0';
    cJSON *pair = cJSON_CreateArray();
    cJSON_AddItemToArray(pair, cJSON_CreateString(s));
    cJSON_AddItemToArray(pair, cJSON_CreateString(space + 1));
    cJSON_AddItemToArray(pairs, pair);
  }
  cJSON_ReplaceItemInObject(cJSON_GetObjectItem(doc, "model"), "merges", pairs);
  char *text = cJSON_PrintUnformatted(doc);
  write_file(tmp, "tokenizer.json", text);
  free(text);
  cJSON_Delete(doc);
  vkf_text_tokenizer *a = load_named("gpt2"), *b = NULL;
  CHECK_OK(vkf_text_tokenizer_load(tmp, &b));
  if (!a || !b) return;
  const char *probe = "The quick brown fox: it's 2023, we'll see!";
  int32_t *ia, *ib;
  size_t na, nb;
  CHECK_OK(vkf_text_tokenizer_encode(a, probe, 1, &ia, &na));
  CHECK_OK(vkf_text_tokenizer_encode(b, probe, 1, &ib, &nb));
  CHECK(na == nb && !memcmp(ia, ib, na * sizeof *ia) && na < strlen(probe) - 10);
  free(ia);
  free(ib);
  vkf_text_tokenizer_destroy(a);
  vkf_text_tokenizer_destroy(b);
}

static void check_errors(const char *tmp) {
  vkf_text_tokenizer *tok = NULL;
  CHECK_STATUS(vkf_text_tokenizer_load(tmp, &tok), VKF_STATUS_NOT_FOUND, "none of tokenizer.json, vocab.txt");
  write_file(tmp, "tokenizer.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0");
  CHECK_STATUS(vkf_text_tokenizer_load(tmp, &tok), VKF_STATUS_PARSE, "not valid JSON");
  write_file(tmp, "tokenizer.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1},"
                                    " \"merges\": [\"a c\"]}}");
  CHECK_STATUS(vkf_text_tokenizer_load(tmp, &tok), VKF_STATUS_PARSE, "model.merges[0]");
  write_file(tmp, "tokenizer.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": -3}}}");
  CHECK_STATUS(vkf_text_tokenizer_load(tmp, &tok), VKF_STATUS_PARSE, "out of range");
  write_file(tmp, "tokenizer.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}},"
             "\"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"Regex\": \"a(b\"},"
             " \"behavior\": \"Isolated\", \"invert\": false}}");
  CHECK_STATUS(vkf_text_tokenizer_load(tmp, &tok), VKF_STATUS_PARSE,
               "pre_tokenizer Split: regex \"a(b\" does not compile: end pattern with unmatched "
               "parenthesis");
  /* Catastrophic backtracking ends at Oniguruma's retry limit, as in tokenizers (which panics:
   * "retry-limit-in-match over"): an error naming the cause, in well under a second. */
  write_file(tmp, "tokenizer.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, "
             "\"merges\": []}, \"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": "
             "{\"Regex\": \"(a|a)*[^a]\"}, \"behavior\": \"Isolated\", \"invert\": false}}");
  CHECK_OK(vkf_text_tokenizer_load(tmp, &tok));
  if (tok) {
    int32_t *ids = NULL;
    size_t count = 0;
    CHECK_OK(vkf_text_tokenizer_encode(tok, "aaaaaaaaaaaaaaaaaaaa", 0, &ids, &count));
    CHECK(count == 20);
    free(ids);
    CHECK_STATUS(vkf_text_tokenizer_encode(tok, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 0, &ids,
                                           &count),
                 VKF_STATUS_INVALID_ARGUMENT, "backtracks past its limit");
    vkf_text_tokenizer_destroy(tok);
    tok = NULL;
  }
  write_file(tmp, "tokenizer.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}},"
             "\"decoder\": {\"type\": \"Replace\", \"pattern\": {\"Regex\": \"[z-a]\"},"
             " \"content\": \"\"}}");
  CHECK_STATUS(vkf_text_tokenizer_load(tmp, &tok), VKF_STATUS_PARSE,
               "decoder Replace: regex \"[z-a]\" does not compile: empty range in char class");
  write_file(tmp, "tokenizer.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}},"
             "\"normalizer\": {\"type\": \"Precompiled\", \"precompiled_charsmap\": \"\"}}");
  CHECK_STATUS(vkf_text_tokenizer_load(tmp, &tok), VKF_STATUS_PARSE, "\"Precompiled\" lacks");
  write_file(tmp, "tokenizer.json", "{\"model\": {\"type\": \"BPE\", \"dropout\": 0.1, "
             "\"vocab\": {\"a\": 0}, \"merges\": []}}");
  CHECK_STATUS(vkf_text_tokenizer_load(tmp, &tok), VKF_STATUS_UNSUPPORTED,
               "model.dropout 0.1: BPE-dropout skips merges at random");
  /* components read but with values these files refuse, each named with its field */
  write_file(tmp, "tokenizer.json", "{\"model\": {\"type\": \"WordLevel\", \"vocab\": {\"a\": 0}},"
             "\"pre_tokenizer\": {\"type\": \"Punctuation\", \"behavior\": \"Sideways\"}}");
  CHECK_STATUS(vkf_text_tokenizer_load(tmp, &tok), VKF_STATUS_PARSE, "Punctuation: behavior \"Sideways\"");
  write_file(tmp, "tokenizer.json", "{\"model\": {\"type\": \"WordLevel\", \"vocab\": {\"a\": 0}},"
             "\"decoder\": {\"type\": \"BPEDecoder\", \"suffix\": \"\"}}");
  CHECK_STATUS(vkf_text_tokenizer_load(tmp, &tok), VKF_STATUS_UNSUPPORTED, "BPEDecoder: an empty");
  write_file(tmp, "tokenizer.json", "{\"model\": {\"type\": \"WordLevel\", \"vocab\": {\"a\": 0}},"
             "\"decoder\": {\"type\": \"CTC\", \"pad_token\": \"<pad>\", \"word_delimiter_token\": \"\","
             " \"cleanup\": true}}");
  CHECK_STATUS(vkf_text_tokenizer_load(tmp, &tok), VKF_STATUS_UNSUPPORTED, "CTC: pad_token");
  write_file(tmp, "tokenizer.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0},"
             " \"continuing_subword_prefix\": \"0123456789012345678901234567890123456789\"}}");
  CHECK_STATUS(vkf_text_tokenizer_load(tmp, &tok), VKF_STATUS_UNSUPPORTED, "continuing_subword_prefix");
  /* WordLevel without its unk token fails only on a word outside the vocabulary, as tokenizers */
  write_file(tmp, "tokenizer.json", "{\"model\": {\"type\": \"WordLevel\", \"vocab\": {\"a\": 0},"
             " \"unk_token\": \"<unk>\"}, \"pre_tokenizer\": {\"type\": \"WhitespaceSplit\"}}");
  CHECK_OK(vkf_text_tokenizer_load(tmp, &tok));
  if (tok) {
    int32_t *ids = NULL;
    size_t count = 0;
    CHECK_OK(vkf_text_tokenizer_encode(tok, "a a", 0, &ids, &count));
    CHECK(count == 2 && ids[0] == 0 && ids[1] == 0);
    free(ids);
    CHECK_STATUS(vkf_text_tokenizer_encode(tok, "a b", 0, &ids, &count), VKF_STATUS_INVALID_ARGUMENT,
                 "model.unk_token");
    vkf_text_tokenizer_destroy(tok);
    tok = NULL;
  }
  write_file(tmp, "tokenizer.json", "{\"model\": {\"type\": \"WordLevelX\", \"vocab\": {}}}");
  CHECK_STATUS(vkf_text_tokenizer_load(tmp, &tok), VKF_STATUS_UNSUPPORTED, "\"WordLevelX\"");
  write_file(tmp, "tokenizer.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1},"
             " \"merges\": [\"a b\"]}}");
  CHECK_STATUS(vkf_text_tokenizer_load(tmp, &tok), VKF_STATUS_PARSE, "\"a\" + \"b\"");
  /* Two strings with one id ("hello" lost both l's to "e" holding id 1 before) */
  write_file(tmp, "tokenizer.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"h\": 0, \"e\": 1,"
             " \"l\": 1, \"o\": 2}, \"merges\": []}}");
  CHECK_STATUS(vkf_text_tokenizer_load(tmp, &tok), VKF_STATUS_PARSE,
               "model.vocab \"l\" has id 1, which \"e\" already has");
  write_file(tmp, "tokenizer.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1},"
             " \"merges\": []}, \"added_tokens\": [{\"id\": 1, \"content\": \"<s>\"}]}");
  CHECK_STATUS(vkf_text_tokenizer_load(tmp, &tok), VKF_STATUS_PARSE,
               "added_tokens \"<s>\" has id 1, which \"b\" already has");
  char path[4096];
  snprintf(path, sizeof path, "%s/tokenizer.json", tmp);
  unlink(path);
  /* A directory named tokenizer.json is reported, not skipped for a missing-tokenizer error. */
  VKF_ASSERT(mkdir(path, 0700) == 0);
  CHECK_STATUS(vkf_text_tokenizer_load(tmp, &tok), VKF_STATUS_IO,
               "tokenizer.json: is a directory, not a file");
  rmdir(path);
}

/* ignore_merges (Llama-3): a word found whole in the vocabulary is one token even when the merges
 * would not reach it ("b c" outranks "a b", so merging gives a + bc). */
static void check_ignore_merges(const char *tmp) {
  const char *json = "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"c\": 2,"
                     " \"ab\": 3, \"bc\": 4, \"abc\": 5}, \"merges\": [\"b c\", \"a b\", \"ab c\"]"
                     "%s}}";
  for (int ignore = 0; ignore < 2; ignore++) {
    char text[512];
    snprintf(text, sizeof text, json, ignore ? ", \"ignore_merges\": true" : "");
    write_file(tmp, "tokenizer.json", text);
    vkf_text_tokenizer *tok = NULL;
    CHECK_OK(vkf_text_tokenizer_load(tmp, &tok));
    if (!tok) continue;
    int32_t *ids;
    size_t count;
    CHECK_OK(vkf_text_tokenizer_encode(tok, "abc", 1, &ids, &count));
    if (ignore) CHECK_MSG(count == 1 && ids[0] == 5, "ignore_merges: %zu ids", count);
    else CHECK_MSG(count == 2 && ids[0] == 0 && ids[1] == 4, "merges: %zu ids", count);
    free(ids);
    vkf_text_tokenizer_destroy(tok);
  }
}

/* NFC of short sequences as unicode.h's parts make it (decompose, order, compose), vs
 * unicodedata.normalize("NFC", ...) of Python 3.11 (Unicode 14): composition, Hangul, reordering,
 * singletons, composition exclusions, blocking, leading non-starters. */
static void check_nfc(void) {
  static const struct {
    uint32_t in[4];
    size_t in_count;
    uint32_t want[4];
    size_t want_count;
  } cases[] = {
      {{0x65, 0x301}, 2, {0xE9}, 1},
      {{0x41, 0x30A}, 2, {0xC5}, 1},
      {{0x1100, 0x1161, 0x11A8}, 3, {0xAC01}, 1},
      {{0x71, 0x307, 0x323}, 3, {0x71, 0x323, 0x307}, 3},
      {{0x2126}, 1, {0x3A9}, 1},
      {{0x958}, 1, {0x915, 0x93C}, 2},
      {{0x344}, 1, {0x308, 0x301}, 2},
      {{0x61, 0x315, 0x301}, 3, {0xE1, 0x315}, 2},
      {{0x61, 0x5B0, 0x301}, 3, {0xE1, 0x5B0}, 2},
      {{0x301, 0x61}, 2, {0x301, 0x61}, 2},
      {{0xAC00, 0x11A8}, 2, {0xAC01}, 1},
      {{0xAC01, 0x11A8}, 2, {0xAC01, 0x11A8}, 2},
      {{0x1100, 0x1161, 0x11A7}, 3, {0xAC00, 0x11A7}, 2},
      {{0xB47, 0xB3E}, 2, {0xB4B}, 1},
      {{0x1E0B, 0x323}, 2, {0x1E0D, 0x307}, 2},
      {{0x110A5, 0x110BA}, 2, {0x110AB}, 1},
      {{0x1D15F, 0x1D165}, 2, {0x1D158, 0x1D165, 0x1D165}, 3},
      {{0xF71, 0xF72}, 2, {0xF71, 0xF72}, 2},
      {{0x61, 0x301, 0x301}, 3, {0xE1, 0x301}, 2},
      {{0x5D1, 0x5BC}, 2, {0x5D1, 0x5BC}, 2},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    uint32_t cps[16];
    size_t n = 0;
    for (size_t i = 0; i < cases[k].in_count; i++)
      n += vkf_unicode_decompose_cp(cases[k].in[i], cps + n);
    vkf_unicode_canonical_order(cps, n);
    n = vkf_unicode_compose(cps, n);
    CHECK_MSG(n == cases[k].want_count && !memcmp(cps, cases[k].want, n * sizeof *cps),
              "NFC case %zu (U+%04X...): %zu code points, first U+%04X", k,
              (unsigned)cases[k].in[0], n, (unsigned)cps[0]);
  }
  CHECK(vkf_unicode_compose_pair(0x65, 0x301) == 0xE9);
  CHECK(vkf_unicode_compose_pair(0x915, 0x93C) == 0); /* U+0958 is a composition exclusion */
  CHECK(vkf_unicode_compose_pair(0x3A9, 0x301) == 0x38F);
}

/* NFC, NFD, NFKC, NFKD as tokenizer.json normalizers, alone and in a Sequence with a Replace
 * between: ids as Hugging Face tokenizers 0.15 gives them (no merges: a token a character). */
static void check_unicode_normalizers(const char *tmp) {
  static const char text[] = "\u00e9e\u0301\ufb01\u00b2\uff45\u0301";
  static const struct {
    const char *normalizer;
    int32_t want[9];
    size_t want_count;
  } cases[] = {
      {"{\"type\": \"NFC\"}", {4, 4, 8, 9, 10, 3}, 6},
      {"{\"type\": \"NFD\"}", {1, 3, 1, 3, 8, 9, 10, 3}, 8},
      {"{\"type\": \"NFKC\"}", {4, 4, 5, 6, 7, 4}, 6},
      {"{\"type\": \"NFKD\"}", {1, 3, 1, 3, 5, 6, 7, 1, 3}, 9},
      {"{\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"NFD\"}, {\"type\": \"Replace\", "
       "\"pattern\": {\"String\": \"\u0301\"}, \"content\": \"\u0300\"}, {\"type\": \"NFC\"}]}",
       {0, 0, 8, 9, 10, 2},
       6},
      {"{\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"NFKD\"}, {\"type\": \"Replace\", "
       "\"pattern\": {\"String\": \"\u0301\"}, \"content\": \"\u0300\"}, {\"type\": \"NFKC\"}]}",
       {0, 0, 5, 6, 7, 0},
       6},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    char json[1024];
    snprintf(json, sizeof json,
             "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"\u00e8\": 0, \"e\": 1, \"\u0300\": 2, "
             "\"\u0301\": 3, \"\u00e9\": 4, \"f\": 5, \"i\": 6, \"2\": 7, \"\ufb01\": 8, "
             "\"\u00b2\": 9, \"\uff45\": 10}, \"merges\": []}, \"normalizer\": %s}",
             cases[k].normalizer);
    write_file(tmp, "tokenizer.json", json);
    vkf_text_tokenizer *tok = NULL;
    CHECK_OK(vkf_text_tokenizer_load(tmp, &tok));
    if (!tok) continue;
    int32_t *ids;
    size_t count;
    CHECK_OK(vkf_text_tokenizer_encode(tok, text, 1, &ids, &count));
    CHECK_MSG(count == cases[k].want_count && !memcmp(ids, cases[k].want, count * sizeof *ids),
              "normalizer %s: %zu ids", cases[k].normalizer, count);
    free(ids);
    vkf_text_tokenizer_destroy(tok);
  }
  /* the longest compatibility decomposition, and one that NFKC composes differently from NFC */
  static const uint32_t fdfa[] = {0x635, 0x644, 0x649, 0x20,  0x627, 0x644, 0x644, 0x647, 0x20,
                                  0x639, 0x644, 0x64A, 0x647, 0x20,  0x648, 0x633, 0x644, 0x645};
  uint32_t cps[VKF_UNICODE_MAX_DECOMP + 4];
  size_t n = vkf_unicode_decompose_compat_cp(0xFDFA, cps);
  CHECK_MSG(n == 18 && !memcmp(cps, fdfa, sizeof fdfa), "NFKD U+FDFA: %zu code points", n);
  n = vkf_unicode_decompose_compat_cp(0x1E9B, cps);
  n += vkf_unicode_decompose_compat_cp(0x323, cps + n);
  vkf_unicode_canonical_order(cps, n);
  CHECK_MSG(n == 3 && cps[0] == 0x73 && cps[1] == 0x323 && cps[2] == 0x307, "NFKD U+1E9B U+0323");
  n = vkf_unicode_compose(cps, n);
  CHECK_MSG(n == 1 && cps[0] == 0x1E69, "NFKC U+1E9B U+0323: %zu, U+%04X", n, (unsigned)cps[0]);
}

/* BERT's WordPiece through the same interface: the ids of vkf_wordpiece_encode_all. */
static void check_wordpiece(void) {
  vkf_text_tokenizer *tok = load_named("bert_tiny");
  char *dir = path_of("tests/models/data/bert_tiny", "");
  vkf_wordpiece *wp = NULL;
  CHECK_OK(vkf_wordpiece_load(dir, &wp));
  free(dir);
  if (!tok || !wp) return;
  CHECK(!strcmp(vkf_text_tokenizer_kind(tok), "WordPiece"));
  int32_t *a, *b;
  size_t na, nb;
  CHECK_OK(vkf_text_tokenizer_encode(tok, "A man is eating food.", 1, &a, &na));
  CHECK_OK(vkf_wordpiece_encode_all(wp, "A man is eating food.", &b, &nb));
  CHECK(na == nb && na == 8 && !memcmp(a, b, na * sizeof *a));
  char *text;
  CHECK_OK(vkf_text_tokenizer_decode(tok, a, na, 1, &text));
  CHECK_MSG(!strcmp(text, "a man is eating food."), "\"%s\"", text);
  free(text);
  free(a);
  free(b);
  vkf_wordpiece_destroy(wp);
  vkf_text_tokenizer_destroy(tok);
}

/* A merge listed twice ranks where it appears last, as tokenizers' merge map (a HashMap filled
 * in order) keeps it: with "b c", "a b", "b c", "abc" is "ab" + "c" (tokenizers 0.15.2). */
static void check_repeated_merge(const char *tmp) {
  write_file(tmp, "tokenizer.json",
             "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"c\": 2, "
             "\"ab\": 3, \"bc\": 4}, \"merges\": [\"b c\", \"a b\", \"b c\"]}}");
  vkf_text_tokenizer *t = NULL;
  CHECK_OK(vkf_text_tokenizer_load(tmp, &t));
  if (!t) return;
  int32_t *ids = NULL;
  size_t n = 0;
  CHECK_OK(vkf_text_tokenizer_encode(t, "abc", 0, &ids, &n));
  CHECK_MSG(n == 2 && ids[0] == 3 && ids[1] == 2, "abc: %zu ids, first %d", n, n ? ids[0] : -1);
  free(ids);
  vkf_text_tokenizer_destroy(t);
}

int main(void) {
  char tmp[] = "/tmp/vkf_test_bpe_XXXXXX";
  VKF_ASSERT(mkdtemp(tmp));
  for (size_t k = 0; k < sizeof NAMES / sizeof NAMES[0]; k++) check_golden(NAMES[k]);
  check_byte_fallback();
  check_long_words();
  check_errors(tmp);
  check_pair_merges(tmp);
  check_repeated_merge(tmp);
  check_ignore_merges(tmp);
  check_unicode_normalizers(tmp);
  char path[4096];
  snprintf(path, sizeof path, "%s/tokenizer.json", tmp);
  unlink(path);
  rmdir(tmp);
  check_wordpiece();
  check_nfc();
  return test_report();
}
