/* tokenizer.json's regular expressions on Oniguruma (regex.h). libonig.so also defines the POSIX
 * regcomp/regexec/regfree: linked normally, those would replace the C library's for the whole
 * process (Mesa's driconf calls them while a Vulkan instance is created; under ASan's regexec
 * interceptor the two halves no longer match and it deadlocks). So it is opened with
 * RTLD_LOCAL, once, and only the onig_* functions it needs are looked up. */
#include "text/regex.h"

#include <dlfcn.h>
#include <oniguruma.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ONIG_SONAME "libonig.so.5"

/* The functions and objects used, from the privately opened library. */
static struct {
  int (*initialize)(OnigEncoding *, int);
  int (*new_regex)(OnigRegex *, const OnigUChar *, const OnigUChar *, OnigOptionType,
                   OnigEncoding, OnigSyntaxType *, OnigErrorInfo *);
  void (*free_regex)(OnigRegex);
  int (*error_code_to_str)(OnigUChar *, int, ...);
  OnigRegion *(*region_new)(void);
  void (*region_free)(OnigRegion *, int);
  void (*region_clear)(OnigRegion *);
  OnigMatchParam *(*new_match_param)(void);
  void (*free_match_param)(OnigMatchParam *);
  int (*set_retry_in_match)(OnigMatchParam *, unsigned long);
  int (*set_retry_in_search)(OnigMatchParam *, unsigned long);
  int (*search)(OnigRegex, const OnigUChar *, const OnigUChar *, const OnigUChar *,
                const OnigUChar *, OnigRegion *, OnigOptionType, OnigMatchParam *);
  OnigEncoding utf8;
  OnigSyntaxType *syntax;
} onig;
static char g_load_error[256];

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

#define LOOKUP(field, name)                                                                       \
  do {                                                                                            \
    *(void **)&onig.field = dlsym(lib, name);                                                     \
    if (!onig.field) {                                                                            \
      snprintf(g_load_error, sizeof g_load_error, "%s lacks %s", ONIG_SONAME, name);             \
      return;                                                                                     \
    }                                                                                             \
  } while (0)

static void init_onig(void) {
  g_init_status = -1;
  void *lib = dlopen(ONIG_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(g_load_error, sizeof g_load_error, "cannot load %s (Debian's libonig5): %s",
             ONIG_SONAME, dlerror());
    return;
  }
  LOOKUP(initialize, "onig_initialize");
  LOOKUP(new_regex, "onig_new");
  LOOKUP(free_regex, "onig_free");
  LOOKUP(error_code_to_str, "onig_error_code_to_str");
  LOOKUP(region_new, "onig_region_new");
  LOOKUP(region_free, "onig_region_free");
  LOOKUP(region_clear, "onig_region_clear");
  LOOKUP(new_match_param, "onig_new_match_param");
  LOOKUP(free_match_param, "onig_free_match_param");
  LOOKUP(set_retry_in_match, "onig_set_retry_limit_in_match_of_match_param");
  LOOKUP(set_retry_in_search, "onig_set_retry_limit_in_search_of_match_param");
  LOOKUP(search, "onig_search_with_param");
  LOOKUP(utf8, "OnigEncodingUTF8");
  OnigSyntaxType **syntax = dlsym(lib, "OnigDefaultSyntax");
  if (!syntax || !*syntax) {
    snprintf(g_load_error, sizeof g_load_error, "%s lacks OnigDefaultSyntax", ONIG_SONAME);
    return;
  }
  onig.syntax = *syntax;
  OnigEncoding enc[1] = {onig.utf8};
  g_init_status = onig.initialize(enc, 1);
  if (g_init_status != ONIG_NORMAL)
    snprintf(g_load_error, sizeof g_load_error, "onig_initialize failed (%d)", g_init_status);
  /* the library stays loaded: compiled patterns live as long as the tokenizers */
}

vkf_status vkf_regex_compile(const char *pattern, const char *where, vkf_regex **out) {
  *out = NULL;
  pthread_once(&g_once, init_onig);
  if (g_init_status != ONIG_NORMAL)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: the regex engine is unavailable (%s), so regex \"%s\" cannot run",
                           where, g_load_error, pattern);
  vkf_regex *r = calloc(1, sizeof *r);
  if (!r || !(r->pattern = strdup(pattern))) {
    vkf_regex_free(r);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: compiling a regex", where);
  }
  OnigErrorInfo info;
  const OnigUChar *p = (const OnigUChar *)pattern;
  int rc = onig.new_regex(&r->re, p, p + strlen(pattern), ONIG_OPTION_NONE, onig.utf8, onig.syntax,
                          &info);
  if (rc != ONIG_NORMAL) {
    OnigUChar msg[ONIG_MAX_ERROR_MESSAGE_LEN];
    onig.error_code_to_str(msg, rc, &info);
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
  if (re->re) onig.free_regex(re->re);
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
  OnigRegion *region = onig.region_new();
  OnigMatchParam *mp = onig.new_match_param();
  if (!*out || !region || !mp) {
    free(*out);
    *out = NULL;
    if (region) onig.region_free(region, 1);
    if (mp) onig.free_match_param(mp);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "regex \"%s\": matching %zu bytes",
                           re->pattern, n);
  }
  onig.set_retry_in_match(mp, RETRY_LIMIT_IN_MATCH);
  onig.set_retry_in_search(mp, RETRY_LIMIT_IN_SEARCH);
  vkf_regex_piece *ps = *out;
  size_t k = 0;
  if (!n) {
    ps[k++] = (vkf_regex_piece){0, 0, 0};
    *count = k;
    onig.region_free(region, 1);
    onig.free_match_param(mp);
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
    onig.region_clear(region);
    int rc = onig.search(re->re, base, end, base + last_end, end, region,
                                    ONIG_OPTION_NONE, mp);
    if (rc == ONIG_MISMATCH) break;
    if (rc < 0) {
      OnigUChar msg[ONIG_MAX_ERROR_MESSAGE_LEN];
      onig.error_code_to_str(msg, rc);
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
  onig.region_free(region, 1);
  onig.free_match_param(mp);
  if (st) {
    free(*out);
    *out = NULL;
    return st;
  }
  if (prev != n) ps[k++] = (vkf_regex_piece){prev, n, 0};
  *count = k;
  return VKF_OK;
}
