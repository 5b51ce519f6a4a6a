/* Minimal test harness shared by the C test programs: CHECK macros that count instead of abort,
 * and a closing "N passed, N failed" line. Header-only so each test is one file. */
#ifndef VKF_TESTS_TEST_UTIL_H
#define VKF_TESTS_TEST_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/base/status.h"

static int test_checks_passed;
static int test_checks_failed;

#define CHECK(cond)                                                                              \
  do {                                                                                           \
    if (cond) {                                                                                  \
      test_checks_passed++;                                                                      \
    } else {                                                                                     \
      test_checks_failed++;                                                                      \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);                  \
    }                                                                                            \
  } while (0)

#define CHECK_MSG(cond, ...)                                                                     \
  do {                                                                                           \
    if (cond) {                                                                                  \
      test_checks_passed++;                                                                      \
    } else {                                                                                     \
      test_checks_failed++;                                                                      \
      fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);                  \
      fprintf(stderr, __VA_ARGS__);                                                              \
      fputc('\n', stderr);                                                                       \
    }                                                                                            \
  } while (0)

/* Checks that a status is OK; on failure prints its message and frees it. */
#define CHECK_OK(expr)                                                                           \
  do {                                                                                           \
    vkf_status check_status_ = (expr);                                                           \
    CHECK_MSG(check_status_ == VKF_OK, "%s", vkf_status_message(check_status_));                 \
    vkf_status_free(check_status_);                                                              \
  } while (0)

/* Checks that a status has `code` and that its message contains `needle`. */
#define CHECK_STATUS(expr, code, needle)                                                         \
  do {                                                                                           \
    vkf_status check_status_ = (expr);                                                           \
    CHECK_MSG(vkf_status_code_of(check_status_) == (code), "got %s: %s",                        \
              vkf_status_code_name(vkf_status_code_of(check_status_)),                           \
              vkf_status_message(check_status_));                                                \
    CHECK_MSG(strstr(vkf_status_message(check_status_), (needle)) != NULL,                       \
              "message \"%s\" lacks \"%s\"", vkf_status_message(check_status_), (needle));       \
    vkf_status_free(check_status_);                                                              \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                                                    \
  do {                                                                                           \
    double check_a_ = (a), check_b_ = (b);                                                       \
    CHECK_MSG(fabs(check_a_ - check_b_) <= (tol), "%s = %.9g, %s = %.9g, tol %g", #a, check_a_, \
              #b, check_b_, (double)(tol));                                                      \
  } while (0)

/* Prints the summary line and returns the process exit code. */
static inline int test_report(void) {
  printf("%d passed, %d failed\n", test_checks_passed, test_checks_failed);
  return test_checks_failed ? 1 : 0;
}

#endif
