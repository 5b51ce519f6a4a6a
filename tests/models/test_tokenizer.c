/* WordPiece tokenizer vs Hugging Face's BertTokenizer: every tokenizer_cases.txt case against the
 * committed golden ids, truncation, padded batches, invalid UTF-8, vocab/config errors, and the
 * site-packages search that finds the installed all-MiniLM-L6-v2. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph/base/env.h"
#include "models/formats/model_paths.h"
#include "text/wordpiece.h"
#include "text/unicode.h"
#include "tests/test_util.h"

#define MAX_CASES 1024
#define MAX_IDS 512
#define SHORT_MAX 16 /* the second column of the golden file: max_length=16 */

typedef struct golden_case {
  char *text;
  int32_t full[MAX_IDS];
  size_t full_count;
  int32_t short_ids[SHORT_MAX];
  size_t short_count;
  int line;
} golden_case;

static golden_case g_cases[MAX_CASES];
static size_t g_case_count;

static char *source_path(const char *rel) {
  const char *root = getenv("VKF_SOURCE_DIR");
  static char buf[4096];
  snprintf(buf, sizeof(buf), "%s/%s", root ? root : ".", rel);
  return buf;
}

static int hex_value(const char *s, int digits, uint32_t *out) {
  uint32_t v = 0;
  for (int i = 0; i < digits; i++) {
    char c = s[i];
    int d = (c >= '0' && c <= '9')   ? c - '0'
            : (c >= 'a' && c <= 'f') ? c - 'a' + 10
            : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                     : -1;
    if (d < 0) return 0;
    v = v * 16 + (uint32_t)d;
  }
  *out = v;
  return 1;
}

/* The escapes documented in tokenizer_cases.txt, decoded as tools/goldens/make_tokenizer_golden.py does. */
static char *unescape(const char *line, int lineno) {
  char *out = malloc(strlen(line) * 4 + 1);
  size_t n = 0;
  for (const char *p = line; *p;) {
    if (*p != '\\') {
      out[n++] = *p++;
      continue;
    }
    char e = p[1];
    uint32_t cp = 0;
    if (e == 'u' && hex_value(p + 2, 4, &cp)) {
      n += vkf_utf8_encode(cp, out + n);
      p += 6;
    } else if (e == 'U' && hex_value(p + 2, 8, &cp)) {
      n += vkf_utf8_encode(cp, out + n);
      p += 10;
    } else if (e == '\\' || e == '#' || e == 'n' || e == 't' || e == 'r' || e == 'z') {
      if (e != 'z') out[n++] = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
      p += 2;
    } else {
      fprintf(stderr, "tokenizer_cases.txt:%d: unknown escape\n", lineno);
      exit(1);
    }
  }
  out[n] = '\0';
  return out;
}

static size_t parse_ids(const char *s, int32_t *out, size_t cap) {
  size_t n = 0;
  char *end;
  for (;;) {
    long v = strtol(s, &end, 10);
    if (end == s) break;
    if (n < cap) out[n] = (int32_t)v;
    n++;
    s = end;
  }
  return n;
}

static int read_lines(const char *path, char ***out_lines, int **out_linenos) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    return -1;
  }
  char **lines = calloc(MAX_CASES, sizeof(*lines));
  int *linenos = calloc(MAX_CASES, sizeof(*linenos));
  static char buf[1 << 16];
  int count = 0, lineno = 0;
  while (fgets(buf, sizeof(buf), f)) {
    lineno++;
    size_t len = strlen(buf);
    if (len && buf[len - 1] == '\n') buf[--len] = '\0';
    if (len == 0 || buf[0] == '#') continue;
    if (count == MAX_CASES) break;
    linenos[count] = lineno;
    lines[count++] = strdup(buf);
  }
  fclose(f);
  *out_lines = lines;
  *out_linenos = linenos;
  return count;
}

static int load_cases(void) {
  char **texts, **ids;
  int *text_lines, *id_lines;
  int n_text = read_lines(source_path("tests/models/tokenizer_cases.txt"), &texts, &text_lines);
  int n_ids = read_lines(source_path("tests/models/golden/tokenizer_ids.txt"), &ids, &id_lines);
  CHECK_MSG(n_text == n_ids, "%d cases but %d golden lines", n_text, n_ids);
  if (n_text <= 0 || n_text != n_ids) return 0;
  for (int i = 0; i < n_text; i++) {
    golden_case *c = &g_cases[i];
    c->line = text_lines[i];
    c->text = unescape(texts[i], text_lines[i]);
    char *bar = strchr(ids[i], '|');
    CHECK(bar != NULL);
    if (!bar) return 0;
    *bar = '\0';
    c->full_count = parse_ids(ids[i], c->full, MAX_IDS);
    c->short_count = parse_ids(bar + 1, c->short_ids, SHORT_MAX);
    free(texts[i]);
    free(ids[i]);
  }
  free(texts);
  free(ids);
  free(text_lines);
  free(id_lines);
  g_case_count = (size_t)n_text;
  return 1;
}

static void print_ids(const vkf_wordpiece *tok, const char *label, const int32_t *ids, size_t n) {
  fprintf(stderr, "  %s:", label);
  for (size_t i = 0; i < n; i++) {
    const char *t = vkf_wordpiece_id_to_token(tok, ids[i]);
    fprintf(stderr, " %d(%s)", ids[i], t ? t : "?");
  }
  fputc('\n', stderr);
}

static int same_ids(const vkf_wordpiece *tok, const golden_case *c, const char *label,
                    const int32_t *want, size_t want_count, const int32_t *got, size_t got_count) {
  if (want_count == got_count && memcmp(want, got, got_count * sizeof(*got)) == 0) return 1;
  fprintf(stderr, "tokenizer_cases.txt:%d (%s) differs from Hugging Face: \"%s\"\n", c->line, label,
          c->text);
  print_ids(tok, "want", want, want_count);
  print_ids(tok, "got ", got, got_count);
  return 0;
}

static void test_golden_cases(const vkf_wordpiece *tok) {
  CHECK_MSG(g_case_count >= 200, "only %zu cases", g_case_count);
  static int32_t ids[MAX_IDS];
  size_t mismatches = 0, at_model_max = 0;
  for (size_t i = 0; i < g_case_count; i++) {
    const golden_case *c = &g_cases[i];
    size_t n = 0;
    vkf_status st = vkf_wordpiece_encode(tok, c->text, 0, ids, &n);
    CHECK_MSG(st == VKF_OK, "line %d: %s", c->line, vkf_status_message(st));
    vkf_status_free(st);
    int ok = same_ids(tok, c, "max_length=512", c->full, c->full_count, ids, n);
    st = vkf_wordpiece_encode(tok, c->text, SHORT_MAX, ids, &n);
    CHECK_MSG(st == VKF_OK, "line %d: %s", c->line, vkf_status_message(st));
    vkf_status_free(st);
    ok &= same_ids(tok, c, "max_length=16", c->short_ids, c->short_count, ids, n);
    mismatches += !ok;
    if (c->full_count == 512) at_model_max++;
  }
  CHECK_MSG(mismatches == 0, "%zu of %zu cases differ from Hugging Face", mismatches, g_case_count);
  /* The set must exercise truncation at the model's maximum, keeping [SEP] last. */
  CHECK(at_model_max >= 2);
}

static void test_truncation(const vkf_wordpiece *tok) {
  CHECK(vkf_wordpiece_max_length(tok) == 512);
  const golden_case *longest = &g_cases[0];
  for (size_t i = 0; i < g_case_count; i++) {
    if (g_cases[i].full_count > longest->full_count) longest = &g_cases[i];
  }
  static int32_t ids[MAX_IDS];
  size_t n = 0;
  /* Beyond the model's maximum the length is clamped: the model has no more positions. */
  CHECK_OK(vkf_wordpiece_encode(tok, longest->text, 100000, ids, &n));
  CHECK(n == 512 && memcmp(ids, longest->full, n * sizeof(*ids)) == 0);
  int32_t sep = vkf_wordpiece_token_to_id(tok, "[SEP]"),
          cls = vkf_wordpiece_token_to_id(tok, "[CLS]");
  CHECK(sep == 102 && cls == 101);
  for (size_t max_len = 2; max_len <= 130; max_len += 32) {
    CHECK_OK(vkf_wordpiece_encode(tok, longest->text, max_len, ids, &n));
    CHECK(n == max_len && ids[0] == cls && ids[n - 1] == sep);
    CHECK(memcmp(ids, longest->full, (n - 1) * sizeof(*ids)) == 0);
  }
  CHECK_STATUS(vkf_wordpiece_encode(tok, "hello", 1, ids, &n), VKF_STATUS_INVALID_ARGUMENT,
               "max_len 1");
}

/* HF's tokenizer(texts, padding=True, truncation=True, max_length=24): rows cut like encode() and
 * padded to the longest row, mask 1 on tokens. */
static void test_batch(const vkf_wordpiece *tok) {
  enum { BATCH = 9, MAX_LEN = 24 };
  const char *texts[BATCH];
  const golden_case *cases[BATCH];
  size_t pick[BATCH] = {0, 3, 5, 40, 90, 101, 150, 200, g_case_count - 1};
  size_t want_len = 0;
  for (int b = 0; b < BATCH; b++) {
    cases[b] = &g_cases[pick[b] < g_case_count ? pick[b] : 0];
    texts[b] = cases[b]->text;
    size_t n = cases[b]->full_count < MAX_LEN ? cases[b]->full_count : MAX_LEN;
    if (n > want_len) want_len = n;
  }
  int32_t ids[BATCH * MAX_LEN], mask[BATCH * MAX_LEN];
  memset(ids, 0x7f, sizeof(ids));
  size_t len = 0;
  CHECK_OK(vkf_wordpiece_encode_batch(tok, texts, BATCH, MAX_LEN, ids, mask, &len));
  CHECK(len == want_len);
  int32_t pad = vkf_wordpiece_pad_id(tok);
  CHECK(pad == 0);
  int rows_ok = 1;
  for (int b = 0; b < BATCH && len == want_len; b++) {
    const golden_case *c = cases[b];
    int32_t want[MAX_LEN];
    size_t n = c->full_count;
    memcpy(want, c->full, (n < MAX_LEN ? n : MAX_LEN) * sizeof(*want));
    if (n > MAX_LEN) {
      n = MAX_LEN;
      want[n - 1] = vkf_wordpiece_token_to_id(tok, "[SEP]");
    }
    for (size_t t = 0; t < len; t++) {
      int32_t want_id = t < n ? want[t] : pad;
      int32_t want_mask = t < n ? 1 : 0;
      if (ids[b * len + t] != want_id || mask[b * len + t] != want_mask) {
        fprintf(stderr, "batch row %d col %zu: id %d mask %d, want %d %d\n", b, t, ids[b * len + t],
                mask[b * len + t], want_id, want_mask);
        rows_ok = 0;
      }
    }
  }
  CHECK(rows_ok);
  const char *bad[] = {"fine", "also fine", "bro\xC3ken"};
  CHECK_STATUS(vkf_wordpiece_encode_batch(tok, bad, 3, MAX_LEN, ids, mask, &len),
               VKF_STATUS_INVALID_ARGUMENT, "text 2 of 3");
  CHECK_OK(vkf_wordpiece_encode_batch(tok, texts, 0, MAX_LEN, ids, mask, &len));
  CHECK(len == 0);
}

static void test_invalid_utf8(const vkf_wordpiece *tok) {
  static const struct {
    const char *text, *needle;
  } cases[] = {
      {"abc\xFF", "byte 0xFF at byte offset 3"},
      {"\xC0\x80", "byte 0xC0 at byte offset 0"},             /* overlong NUL */
      {"ok \xE0\x80\xAF", "byte offset 3"},                   /* overlong '/' */
      {"ab\xED\xA0\x80", "byte 0xED at byte offset 2"},       /* surrogate U+D800 */
      {"\xF4\x90\x80\x80", "byte 0xF4 at byte offset 0"},     /* above U+10FFFF */
      {"caf\xC3\xA9 \xE2\x82", "byte 0xE2 at byte offset 6"}, /* truncated at the end */
      {"a\x80", "byte 0x80 at byte offset 1"},                /* stray continuation */
      {"\xE2\x28\xA1", "byte offset 0"},                      /* bad continuation */
  };
  int32_t ids[16];
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    size_t n = 99;
    CHECK_STATUS(vkf_wordpiece_encode(tok, cases[i].text, 16, ids, &n), VKF_STATUS_INVALID_ARGUMENT,
                 cases[i].needle);
    CHECK(n == 0);
  }
  /* Every scalar value round-trips through the encoder and strict decoder. */
  int roundtrip_ok = 1;
  for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    char buf[4];
    uint32_t back = 0;
    size_t len = vkf_utf8_encode(cp, buf);
    if (vkf_utf8_decode((const uint8_t *)buf, len, &back) != len || back != cp) roundtrip_ok = 0;
  }
  CHECK(roundtrip_ok);
}

/* ---- synthetic tokenizer folders ------------------------------------------------------------ */

static void write_file(const char *dir, const char *name, const char *text) {
  char path[512];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  VKF_ASSERT(f);
  fputs(text, f);
  fclose(f);
}

static void remove_file(const char *dir, const char *name) {
  char path[512];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  unlink(path);
}

static void test_load_errors(void) {
  char dir[] = "/tmp/vkf_tok_XXXXXX";
  VKF_ASSERT(mkdtemp(dir));
  vkf_wordpiece *tok = (vkf_wordpiece *)1;
  char vocab_path[600];
  snprintf(vocab_path, sizeof(vocab_path), "%s/vocab.txt", dir);
  CHECK_STATUS(vkf_wordpiece_load(dir, &tok), VKF_STATUS_NOT_FOUND, vocab_path);
  CHECK(tok == NULL);
  /* A directory in a file's place is named as one (fopen + fread gave "reading ... failed"). */
  char needle[700];
  VKF_ASSERT(mkdir(vocab_path, 0700) == 0);
  snprintf(needle, sizeof needle, "%s: is a directory, not a file", vocab_path);
  CHECK_STATUS(vkf_wordpiece_load(dir, &tok), VKF_STATUS_IO, needle);
  rmdir(vocab_path);
  char config_path[600];
  snprintf(config_path, sizeof config_path, "%s/tokenizer_config.json", dir);
  VKF_ASSERT(mkdir(config_path, 0700) == 0);
  snprintf(needle, sizeof needle, "%s: is a directory, not a file", config_path);
  CHECK_STATUS(vkf_wordpiece_load(dir, &tok), VKF_STATUS_IO, needle);
  rmdir(config_path);

  /* CRLF line ends, a duplicate (the later id wins, as in Python's dict), no tokenizer_config. */
  write_file(dir, "vocab.txt",
             "[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\n[MASK]\r\nun\r\n##aff\r\n##able\r\nun\r\n,\r\n");
  CHECK_OK(vkf_wordpiece_load(dir, &tok));
  if (tok) {
    CHECK(vkf_wordpiece_vocab_count(tok) == 10);
    CHECK(vkf_wordpiece_max_length(tok) == 512);
    CHECK(vkf_wordpiece_token_to_id(tok, "un") == 8);
    CHECK(vkf_wordpiece_token_to_id(tok, "##able") == 7);
    CHECK(vkf_wordpiece_token_to_id(tok, "missing") == -1);
    CHECK(vkf_wordpiece_id_to_token(tok, 10) == NULL);
    int32_t ids[16];
    size_t n = 0;
    CHECK_OK(vkf_wordpiece_encode(tok, "UnAffable,unaff xyz", 0, ids, &n));
    int32_t want[] = {2, 8, 6, 7, 9, 8, 6, 1, 3};
    CHECK(n == 9 && memcmp(ids, want, sizeof(want)) == 0);
    vkf_wordpiece_destroy(tok);
  }

  write_file(dir, "tokenizer_config.json", "{\"do_lower_case\": false}");
  CHECK_STATUS(vkf_wordpiece_load(dir, &tok), VKF_STATUS_UNSUPPORTED, "do_lower_case is false");
  write_file(dir, "tokenizer_config.json", "{\"model_max_length\": 8, \"mask_token\": \"<mask>\"}");
  CHECK_STATUS(vkf_wordpiece_load(dir, &tok), VKF_STATUS_PARSE, "no mask_token \"<mask>\"");
  /* A special token of another shape is still split out of the raw text and kept whole. */
  write_file(dir, "vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\nun\n<mask>\n");
  write_file(dir, "tokenizer_config.json", "{\"mask_token\": \"<mask>\"}");
  CHECK_OK(vkf_wordpiece_load(dir, &tok));
  if (tok) {
    int32_t ids[16];
    size_t n = 0;
    /* As BertTokenizerFast(vocab, mask_token="<mask>") gives: only the raw text's "<mask>" is the
     * token; "<MASK>" lower-cases to "<mask>" after the split and is cut at its punctuation. */
    CHECK_OK(vkf_wordpiece_encode(tok, "UN<mask>un <MASK> <mask> <M\xC3\x81SK>", 0, ids, &n));
    int32_t want[] = {2, 4, 5, 4, 1, 1, 1, 5, 1, 1, 1, 3};
    CHECK(n == 12 && memcmp(ids, want, sizeof(want)) == 0);
    vkf_wordpiece_destroy(tok);
  }
  write_file(dir, "vocab.txt",
             "[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\n[MASK]\r\nun\r\n##aff\r\n##able\r\nun\r\n,\r\n");
  write_file(dir, "tokenizer_config.json", "{\"model_max_length\": 8, \"unk_token\": 5}");
  CHECK_STATUS(vkf_wordpiece_load(dir, &tok), VKF_STATUS_PARSE, "unk_token is not a token string");
  write_file(dir, "tokenizer_config.json", "{not json");
  CHECK_STATUS(vkf_wordpiece_load(dir, &tok), VKF_STATUS_PARSE, "tokenizer_config.json");
  write_file(dir, "tokenizer_config.json",
             "{\"model_max_length\": 4, \"unk_token\": {\"content\": \"[UNK]\"}}");
  CHECK_OK(vkf_wordpiece_load(dir, &tok));
  if (tok) {
    CHECK(vkf_wordpiece_max_length(tok) == 4);
    int32_t ids[4];
    size_t n = 0;
    CHECK_OK(vkf_wordpiece_encode(tok, "un un un", 0, ids, &n));
    int32_t want[] = {2, 8, 8, 3};
    CHECK(n == 4 && memcmp(ids, want, sizeof(want)) == 0);
    vkf_wordpiece_destroy(tok);
  }
  remove_file(dir, "tokenizer_config.json");
  remove_file(dir, "vocab.txt");
  rmdir(dir);
}

static void test_model_paths(void) {
  char site[] = "/tmp/vkf_site_XXXXXX";
  VKF_ASSERT(mkdtemp(site));
  char path[600];
  snprintf(path, sizeof(path), "%s/fake_pkg", site);
  mkdir(path, 0700);
  snprintf(path, sizeof(path), "%s/fake_pkg/model", site);
  mkdir(path, 0700);
  write_file(path, "config.json", "{}");
  const char *saved = getenv("VKF_PYTHON_SITE");
  char *saved_copy = saved ? strdup(saved) : NULL;
  char env_value[700];
  snprintf(env_value, sizeof(env_value), "/nonexistent:%s", site);
  setenv("VKF_PYTHON_SITE", env_value, 1);
  vkf_env_reload();
  char *found = NULL;
  CHECK_OK(vkf_model_paths_find("fake_pkg/model", &found));
  CHECK(found && strcmp(found, path) == 0);
  free(found);
  CHECK_STATUS(vkf_model_paths_find("no_such_pkg/model", &found), VKF_STATUS_NOT_FOUND,
               "VKF_PYTHON_SITE");
  CHECK(found == NULL);
  if (saved_copy) {
    setenv("VKF_PYTHON_SITE", saved_copy, 1);
  } else {
    unsetenv("VKF_PYTHON_SITE");
  }
  free(saved_copy);
  vkf_env_reload();
  remove_file(path, "config.json");
  rmdir(path);
  snprintf(path, sizeof(path), "%s/fake_pkg", site);
  rmdir(path);
  rmdir(site);
}

int main(void) {
  test_load_errors();
  test_model_paths();
  char *model_dir = NULL;
  vkf_status st = vkf_model_paths_find(VKF_MODEL_PACKAGE_MINILM, &model_dir);
  CHECK_MSG(st == VKF_OK, "%s", vkf_status_message(st));
  vkf_status_free(st);
  vkf_wordpiece *tok = NULL;
  if (model_dir) {
    fprintf(stderr, "all-MiniLM-L6-v2 found at %s\n", model_dir);
    CHECK_OK(vkf_wordpiece_load(model_dir, &tok));
  }
  if (tok && load_cases()) {
    CHECK(vkf_wordpiece_vocab_count(tok) == 30522);
    test_golden_cases(tok);
    test_truncation(tok);
    test_batch(tok);
    test_invalid_utf8(tok);
  }
  vkf_wordpiece_destroy(tok);
  free(model_dir);
  for (size_t i = 0; i < g_case_count; i++) free(g_cases[i].text);
  return test_report();
}
