/* tokenizer.json's regular expressions on Oniguruma (regex.h). */
#include "models/text/regex.h"

#include <oniguruma.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Oniguruma's own default for one match attempt, and a bound on one search (every start
 * position): a few seconds of backtracking at most, where a real pattern needs a few steps per
 * byte. */
#define RETRY_LIMIT_IN_MATCH 10000000UL
#define RETRY_LIMIT_IN_SEARCH 100000000UL

/* The compiled pattern is only read by a search, so threads share it; each call makes its own
 * match parameters (a search counts into them). */
struct vkf_regex {
  regex_t *re;
  char *pattern; /* for errors */
};

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_init_status;

static void init_onig(void) {
  OnigEncoding enc[1] = {ONIG_ENCODING_UTF8};
  g_init_status = onig_initialize(enc, 1);
}

vkf_status vkf_regex_compile(const char *pattern, const char *where, vkf_regex **out) {
  *out = NULL;
  pthread_once(&g_once, init_onig);
  if (g_init_status != ONIG_NORMAL)
    return vkf_status_make(VKF_STATUS_INTERNAL, "%s: Oniguruma failed to initialise (%d)", where,
                           g_init_status);
  vkf_regex *r = calloc(1, sizeof *r);
  if (!r || !(r->pattern = strdup(pattern))) {
    vkf_regex_free(r);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: compiling a regex", where);
  }
  OnigErrorInfo info;
  const OnigUChar *p = (const OnigUChar *)pattern;
  int rc = onig_new(&r->re, p, p + strlen(pattern), ONIG_OPTION_NONE, ONIG_ENCODING_UTF8,
                    ONIG_SYNTAX_DEFAULT, &info);
  if (rc != ONIG_NORMAL) {
    OnigUChar msg[ONIG_MAX_ERROR_MESSAGE_LEN];
    onig_error_code_to_str(msg, rc, &info);
    r->re = NULL;
    vkf_regex_free(r);
    return vkf_status_make(VKF_STATUS_PARSE, "%s: regex \"%s\" does not compile: %s", where,
                           pattern, (const char *)msg);
  }
  *out = r;
  return VKF_OK;
}

void vkf_regex_free(vkf_regex *re) {
  if (!re) return;
  if (re->re) onig_free(re->re);
  free(re->pattern);
  free(re);
}

/* Bytes of the UTF-8 character at s[i] (1 past the end, as the crate's unwrap_or(1)). */
static size_t char_len(const char *s, size_t n, size_t i) {
  if (i >= n) return 1;
  uint8_t c = (uint8_t)s[i];
  size_t len = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
  return i + len <= n ? len : n - i;
}

vkf_status vkf_regex_find_matches(const vkf_regex *re, const char *s, size_t n,
                                  vkf_regex_piece **out, size_t *count) {
  *count = 0;
  *out = malloc((2 * n + 2) * sizeof **out);
  OnigRegion *region = onig_region_new();
  OnigMatchParam *mp = onig_new_match_param();
  if (!*out || !region || !mp) {
    free(*out);
    *out = NULL;
    if (region) onig_region_free(region, 1);
    if (mp) onig_free_match_param(mp);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "regex \"%s\": matching %zu bytes",
                           re->pattern, n);
  }
  onig_initialize_match_param(mp);
  onig_set_retry_limit_in_match_of_match_param(mp, RETRY_LIMIT_IN_MATCH);
  onig_set_retry_limit_in_search_of_match_param(mp, RETRY_LIMIT_IN_SEARCH);
  vkf_regex_piece *ps = *out;
  size_t k = 0;
  if (!n) {
    ps[k++] = (vkf_regex_piece){0, 0, 0};
    *count = k;
    onig_region_free(region, 1);
    onig_free_match_param(mp);
    return VKF_OK;
  }
  const OnigUChar *base = (const OnigUChar *)s, *end = base + n;
  /* onig::FindMatches: search from last_end; an empty match right where the previous match ended
   * is skipped by stepping one character on. */
  size_t last_end = 0, prev = 0;
  int have_last = 0;
  size_t last_match_end = 0;
  vkf_status st = VKF_OK;
  while (last_end <= n) {
    onig_region_clear(region);
    int rc = onig_search_with_param(re->re, base, end, base + last_end, end, region,
                                    ONIG_OPTION_NONE, mp);
    if (rc == ONIG_MISMATCH) break;
    if (rc < 0) {
      OnigUChar msg[ONIG_MAX_ERROR_MESSAGE_LEN];
      onig_error_code_to_str(msg, rc);
      st = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "regex \"%s\": searching %zu bytes of text failed: %s", re->pattern, n,
                           (const char *)msg);
      break;
    }
    size_t ms = (size_t)region->beg[0], me = (size_t)region->end[0];
    if (ms == me && have_last && last_match_end == me) {
      last_end += char_len(s, n, last_end);
      continue;
    }
    last_end = me;
    last_match_end = me;
    have_last = 1;
    if (prev != ms) ps[k++] = (vkf_regex_piece){prev, ms, 0};
    ps[k++] = (vkf_regex_piece){ms, me, 1};
    prev = me;
  }
  onig_region_free(region, 1);
  onig_free_match_param(mp);
  if (st) {
    free(*out);
    *out = NULL;
    return st;
  }
  if (prev != n) ps[k++] = (vkf_regex_piece){prev, n, 0};
  *count = k;
  return VKF_OK;
}
