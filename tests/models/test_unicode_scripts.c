/* The UnicodeScripts pre-tokenizer over all of Unicode against tokenizers 0.15.2
 * (tools/goldens/make_unicode_scripts_golden.py): where its pieces start in one string of every
 * code point in order, and, with every code point between two "a"s and between two "中"s,
 * whether a piece starts at it (so each code point's script is checked as Latin, Han, of no
 * script or another one, against the library's own table). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/bpe_model.h"
#include "text/unicode.h"
#include "tests/test_util.h"

static char *slurp(const char *rel) {
  const char *root = getenv("VKF_SOURCE_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", root ? root : ".", rel);
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *d = malloc((size_t)n + 1);
  size_t got = d ? fread(d, 1, (size_t)n, f) : 0;
  if (d) d[got] = '\0';
  fclose(f);
  return d;
}

static int is_cp(uint32_t c) { return c >= 1 && c <= 0x10FFFF && !(c >= 0xD800 && c <= 0xDFFF); }

/* Every code point in order, each after `ref` (and `ref` at the end) when ref is not 0. */
static char *all_code_points(uint32_t ref, size_t *n) {
  char *s = malloc(9u << 20), buf[4];
  size_t k = 0, rl = ref ? vkf_utf8_encode(ref, buf) : 0;
  char rb[4];
  memcpy(rb, buf, rl);
  for (uint32_t c = 1; c <= 0x10FFFF; c++) {
    if (!is_cp(c)) continue;
    memcpy(s + k, rb, rl), k += rl;
    k += vkf_utf8_encode(c, s + k);
  }
  memcpy(s + k, rb, rl), k += rl;
  *n = k;
  return s;
}

static uint32_t first_cp(const vkf_bpe_words *w, size_t i) {
  uint32_t cp = 0;
  size_t start = vkf_bpe_word_start(w, i);
  vkf_utf8_decode((const uint8_t *)w->data + start, w->ends[i] - start, &cp);
  return cp;
}

static vkf_bpe_words split(const char *s, size_t n) {
  vkf_bpe_pre p;
  memset(&p, 0, sizeof p);
  p.kind = VKF_BPE_PRE_UNICODE_SCRIPTS;
  vkf_bpe_words w = {0};
  vkf_bpe_pre_split(&p, s, n, &w);
  CHECK(!w.failed);
  return w;
}

int main(void) {
  char *text = slurp("tests/models/golden/bpe/unicode_scripts_starts.json");
  cJSON *doc = text ? cJSON_Parse(text) : NULL;
  free(text);
  CHECK_MSG(doc != NULL, "cannot read unicode_scripts_starts.json");
  if (!doc) return test_report();
  const cJSON *starts = cJSON_GetObjectItemCaseSensitive(doc, "starts");
  const cJSON *classes = cJSON_GetObjectItemCaseSensitive(doc, "classes");

  size_t n;
  char *s = all_code_points(0, &n);
  vkf_bpe_words w = split(s, n);
  CHECK_MSG(w.count == (size_t)cJSON_GetArraySize(starts), "%zu pieces, want %d", w.count,
            cJSON_GetArraySize(starts));
  size_t i = 0, bad = 0;
  const cJSON *item;
  cJSON_ArrayForEach(item, starts) {
    if (i < w.count && first_cp(&w, i) != (uint32_t)item->valuedouble && bad++ < 5)
      fprintf(stderr, "piece %zu starts at U+%04X, want U+%04X\n", i, first_cp(&w, i),
              (uint32_t)item->valuedouble);
    i++;
  }
  CHECK_MSG(bad == 0, "%zu piece starts differ", bad);
  CHECK(w.size == n); /* U+0001 is Common: the pieces cover the whole text */
  vkf_bpe_words_free(&w);
  free(s);

  /* bit 0: a piece starts at the code point after "a"; bit 1: after "中" */
  uint8_t *bits = calloc(0x110000, 1);
  const uint32_t refs[2] = {'a', 0x4E2D};
  for (int b = 0; b < 2; b++) {
    s = all_code_points(refs[b], &n);
    w = split(s, n);
    for (size_t k = 0; k < w.count; k++) {
      uint32_t c = first_cp(&w, k);
      if (c != refs[b]) bits[c] |= (uint8_t)(1u << b);
    }
    vkf_bpe_words_free(&w);
    free(s);
  }
  bad = 0;
  int runs = cJSON_GetArraySize(classes);
  for (int r = 0; r < runs; r++) {
    const cJSON *run = cJSON_GetArrayItem(classes, r);
    uint32_t first = (uint32_t)cJSON_GetArrayItem(run, 0)->valuedouble;
    uint32_t end = r + 1 < runs
                       ? (uint32_t)cJSON_GetArrayItem(cJSON_GetArrayItem(classes, r + 1), 0)->valuedouble
                       : 0x110000;
    int want = (int)cJSON_GetArrayItem(run, 1)->valuedouble;
    for (uint32_t c = first; c < end; c++)
      if (is_cp(c) && bits[c] != want && bad++ < 5)
        fprintf(stderr, "U+%04X: class %d, want %d\n", c, bits[c], want);
  }
  CHECK_MSG(bad == 0, "%zu code points classified differently", bad);
  free(bits);
  cJSON_Delete(doc);
  return test_report();
}
