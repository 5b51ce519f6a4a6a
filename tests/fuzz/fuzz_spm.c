/* A SentencePiece `.model` file (part 1: the protobuf that Marian's source.spm/target.spm and T5's
 * spiece.model are): read with vkf_spm_load, then a text (part 2, or a fixed mixed sentence, when
 * valid UTF-8) encoded into pieces and the pieces decoded back. */
#include "text/spm.h"
#include "text/unicode.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int valid_utf8(const char *s, size_t n) {
  for (size_t i = 0; i < n;) {
    uint32_t cp;
    size_t len = vkf_utf8_decode((const uint8_t *)s + i, n - i, &cp);
    if (!len) return 0;
    i += len;
  }
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_part parts[2];
  size_t n = fuzz_split(data, size, parts, 2);
  fuzz_write_file("x.model", parts[0].data, parts[0].size);
  char path[512];
  snprintf(path, sizeof path, "%s/x.model", fuzz_scratch_dir());
  vkf_spm *spm = NULL;
  vkf_status s = vkf_spm_load(path, &spm);
  if (s) {
    FUZZ_ASSERT(spm == NULL);
    fuzz_check_status(s);
    return 0;
  }
  size_t pieces = vkf_spm_piece_count(spm);
  FUZZ_ASSERT(vkf_spm_piece(spm, -1) == NULL && vkf_spm_piece(spm, (int32_t)pieces) == NULL);
  int32_t unk = vkf_spm_unk_id(spm);
  FUZZ_ASSERT(unk >= 0 && (size_t)unk < pieces);
  static const char fixed[] = "Hello world! Ünïcödé 你好 123  tabs\tand\nnewlines \xF0\x9F\x98\x80";
  const char *text = n > 1 ? (const char *)parts[1].data : fixed;
  size_t text_size = n > 1 ? parts[1].size : sizeof fixed - 1;
  if (valid_utf8(text, text_size)) {
    char *out = NULL;
    size_t *ends = NULL, count = 0;
    s = vkf_spm_encode(spm, text, text_size, &out, &ends, &count);
    if (!s) {
      const char **list = malloc((count ? count : 1) * sizeof *list);
      char **copies = malloc((count ? count : 1) * sizeof *copies);
      FUZZ_ASSERT(list && copies);
      for (size_t i = 0; i < count; i++) {
        size_t start = i ? ends[i - 1] : 0;
        FUZZ_ASSERT(start <= ends[i]);
        copies[i] = fuzz_strdup((fuzz_part){(const uint8_t *)out + start, ends[i] - start});
        list[i] = copies[i];
      }
      char *buf = NULL;
      size_t buf_size = 0, cap = 0;
      (void)vkf_spm_decode_pieces(spm, list, count, &buf, &buf_size, &cap);
      FUZZ_ASSERT(buf_size <= cap);
      free(buf);
      for (size_t i = 0; i < count; i++) free(copies[i]);
      free(copies);
      free(list);
    }
    fuzz_check_status(s);
    free(out);
    free(ends);
  }
  vkf_spm_destroy(spm);
  return 0;
}
