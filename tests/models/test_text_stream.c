/* The streaming decoder's contract (text_tokenizer.h): pushed pieces plus flush equal decode() of
 * the same ids, and decode() equals Hugging Face's. Cases that broke it: clean-up patterns that a
 * later token completes across text already returned (BertTokenizerFast: "do n ' t" -> "don't",
 * decodes of a vocabulary made for this test, from transformers 4.38.2), and the window cut after
 * 64 ids: kept ids that decode to nothing (skipped specials) and the valid end of an invalid
 * byte-fallback run (Llama 2) (both found by fuzz_tokenize / fuzz_text_decoder). */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "text/text_tokenizer.h"
#include "tests/test_util.h"

static char *source_path(const char *rel) {
  const char *root = getenv("VKF_SOURCE_DIR");
  size_t n = strlen(rel) + (root ? strlen(root) : 1) + 2;
  char *p = malloc(n);
  snprintf(p, n, "%s/%s", root ? root : ".", rel);
  return p;
}

/* Pushes ids one by one; every piece must continue decode()'s text, which must equal `want`. */
static void check_stream(const vkf_text_tokenizer *tok, const int32_t *ids, size_t count, int skip,
                         const char *want, const char *name) {
  char *whole = NULL;
  CHECK_OK(vkf_text_tokenizer_decode(tok, ids, count, skip, &whole));
  if (!whole) return;
  CHECK_MSG(!strcmp(whole, want), "%s: decode \"%s\", want \"%s\"", name, whole, want);
  vkf_text_decoder *dec = NULL;
  CHECK_OK(vkf_text_decoder_create(tok, skip, &dec));
  size_t at = 0, len = strlen(whole);
  for (size_t i = 0; i <= count; i++) {
    const char *piece = "";
    size_t size = 0;
    CHECK_OK(i < count ? vkf_text_decoder_push(dec, ids[i], &piece, &size)
                       : vkf_text_decoder_flush(dec, &piece, &size));
    int fits = at + size <= len && !memcmp(whole + at, piece, size);
    CHECK_MSG(fits, "%s: after id %zu the stream gives \"%.*s\" where decode() has \"%s\"", name, i,
              (int)size, piece, whole + at);
    if (!fits) break;
    at += size;
  }
  CHECK_MSG(at == len, "%s: the stream gave %zu of %zu bytes", name, at, len);
  vkf_text_decoder_destroy(dec);
  free(whole);
}

static void test_wordpiece_clean_up(void) {
  char dir[] = "/tmp/vkf_text_stream_XXXXXX";
  VKF_ASSERT(mkdtemp(dir));
  char path[64];
  snprintf(path, sizeof path, "%s/vocab.txt", dir);
  FILE *f = fopen(path, "w");
  VKF_ASSERT(f);
  fputs(
      "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\ni\ndo\nn\n'\nt\nknow\n,\nhe\nsaid\n."
      "\nwe\nre\nhere\ns\nm\n"
      "ve\n##s\n",
      f);
  fclose(f);
  vkf_text_tokenizer *tok = NULL;
  CHECK_OK(vkf_text_tokenizer_load(dir, &tok));
  if (tok) {
    const int32_t a[] = {5, 1, 8, 9, 10, 11, 12, 13, 14};
    check_stream(tok, a, 9, 0, "i [UNK]'t know, he said.", "I don't know, he said.");
    const int32_t b[] = {15, 8, 16, 17, 14, 6, 7, 8, 9, 8, 18};
    check_stream(tok, b, 11, 0, "we're here. don't's", "we ' re here . do n ' t ' s");
    const int32_t c[] = {5, 8, 19, 6, 8, 20, 8, 16};
    check_stream(tok, c, 8, 0, "i'm do've're", "i ' m do ' ve ' re");
    const int32_t d[] = {6, 7, 8, 9, 14};
    check_stream(tok, d, 5, 0, "don't.", "do n ' t .");
    /* 70 skipped [SEP]s: the window is cut while the kept ids decode to nothing */
    int32_t e[80];
    const int32_t words[] = {15, 16, 6, 7, 8, 9};
    for (size_t i = 0; i < 3; i++) e[i] = words[i];
    for (size_t i = 3; i < 73; i++) e[i] = 3;
    for (size_t i = 73; i < 76; i++) e[i] = words[i - 70];
    check_stream(tok, e, 76, 1, "we re don't", "words around 70 skipped specials");
    e[73] = 17; /* "here": no clean-up, only the space after the skipped run */
    check_stream(tok, e, 74, 1, "we re do here", "a word after 70 skipped specials");
    vkf_text_tokenizer_destroy(tok);
  }
  remove(path);
  rmdir(dir);
}

/* Llama 2: one invalid byte, then more valid bytes than the window keeps: decode() turns the whole
 * run into U+FFFDs, so must the stream. */
static void test_byte_run_across_cut(void) {
  char *dir = source_path("tests/models/data/llama2");
  vkf_text_tokenizer *tok = NULL;
  CHECK_OK(vkf_text_tokenizer_load(dir, &tok));
  free(dir);
  if (!tok) return;
  int32_t ff = -1, amp = -1;
  for (size_t i = 0; i < vkf_text_tokenizer_vocab_count(tok); i++) {
    const char *t = vkf_text_tokenizer_id_to_token(tok, (int32_t)i);
    if (t && !strcmp(t, "<0xFF>")) ff = (int32_t)i;
    if (t && !strcmp(t, "<0x26>")) amp = (int32_t)i;
  }
  CHECK(ff >= 0 && amp >= 0);
  if (ff >= 0 && amp >= 0) {
    enum { RUN = 70 };
    int32_t ids[RUN + 1];
    ids[0] = ff;
    for (size_t i = 1; i <= RUN; i++) ids[i] = amp;
    char want[3 * (RUN + 1) + 1];
    for (size_t i = 0; i <= RUN; i++) memcpy(want + 3 * i, "\xEF\xBF\xBD", 3);
    want[3 * (RUN + 1)] = '\0';
    check_stream(tok, ids, RUN + 1, 0, want, "<0xFF> then 70 <0x26>");
  }
  vkf_text_tokenizer_destroy(tok);
}

int main(void) {
  test_wordpiece_clean_up();
  test_byte_run_across_cut();
  return test_report();
}
