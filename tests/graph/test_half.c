/* graph/half: exhaustive half round trip, round-to-nearest-even at every tie between adjacent
 * halves, overflow / underflow / NaN edges, bf16, and (where the compiler has _Float16) a sweep
 * against the compiler's own conversion. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "graph/base/half.h"
#include "tests/test_util.h"

static float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static uint32_t to_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static int half_is_nan(uint16_t h) {
  return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu);
}

static void test_round_trip_all_halves(void) {
  int mismatches = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    uint16_t back = vkf_float_to_half(vkf_half_to_float((uint16_t)h));
    if (back != h) mismatches++;
  }
  CHECK_MSG(mismatches == 0, "%d halves did not round-trip", mismatches);
}

static void test_known_values(void) {
  CHECK(vkf_half_to_float(0x3c00) == 1.0f);
  CHECK(vkf_half_to_float(0xc000) == -2.0f);
  CHECK(vkf_half_to_float(0x7bff) == 65504.0f);
  CHECK(vkf_half_to_float(0x0001) == 0x1p-24f);
  CHECK(vkf_half_to_float(0x03ff) == 1023 * 0x1p-24f);
  CHECK(vkf_half_to_float(0x0400) == 0x1p-14f);
  CHECK(vkf_half_to_float(0x3555) == 0.333251953125f);
  CHECK(to_bits(vkf_half_to_float(0x8000)) == 0x80000000u);
  CHECK(isinf(vkf_half_to_float(0x7c00)) && vkf_half_to_float(0x7c00) > 0);
  CHECK(isinf(vkf_half_to_float(0xfc00)) && vkf_half_to_float(0xfc00) < 0);
  CHECK(isnan(vkf_half_to_float(0x7e00)));
  CHECK(vkf_float_to_half(1.0f) == 0x3c00);
  CHECK(vkf_float_to_half(-0.0f) == 0x8000);
  CHECK(vkf_float_to_half(1e10f) == 0x7c00);
  CHECK(vkf_float_to_half(-FLT_MAX) == 0xfc00);
  CHECK(vkf_float_to_half(INFINITY) == 0x7c00);
  CHECK(vkf_float_to_half(65519.99f) == 0x7bff);
  CHECK(vkf_float_to_half(65520.0f) == 0x7c00); /* tie with an odd 0x7bff: rounds up to inf */
  CHECK(vkf_float_to_half(0x1p-25f) == 0x0000); /* tie with zero: even wins */
  CHECK(vkf_float_to_half(0x1.8p-25f) == 0x0001);
  CHECK(vkf_float_to_half(0x1p-26f) == 0x0000);
  CHECK(vkf_float_to_half(FLT_MIN) == 0x0000);
  CHECK(vkf_float_to_half(-0x1p-30f) == 0x8000);
  CHECK(half_is_nan(vkf_float_to_half(NAN)));
  CHECK(half_is_nan(vkf_float_to_half(from_bits(0x7f800001u)))); /* payload only in low bits */
  CHECK(half_is_nan(vkf_float_to_half(from_bits(0xffc00000u))));
}

/* For every pair of adjacent halves (including the last finite one and infinity) the float
 * midpoint must go to the even one and the floats just beside it to the nearer one. */
static void test_ties_between_adjacent_halves(void) {
  int bad = 0;
  for (uint32_t sign = 0; sign <= 0x8000u; sign += 0x8000u) {
    for (uint32_t h = 0; h < 0x7c00u; h++) {
      uint16_t lo = (uint16_t)(sign | h), hi = (uint16_t)(sign | (h + 1));
      double a = vkf_half_to_float(lo);
      double b = h + 1 == 0x7c00u ? (sign ? -65536.0 : 65536.0) : vkf_half_to_float(hi);
      float mid = (float)((a + b) / 2); /* exact: 11-bit values, 24-bit float */
      uint16_t even = (lo & 1u) ? hi : lo;
      if (vkf_float_to_half(mid) != even) bad++;
      float toward_lo = nextafterf(mid, (float)a), toward_hi = nextafterf(mid, (float)b);
      if (vkf_float_to_half(toward_lo) != lo) bad++;
      if (vkf_float_to_half(toward_hi) != hi) bad++;
    }
  }
  CHECK_MSG(bad == 0, "%d rounding errors at or beside half midpoints", bad);
}

#ifdef __FLT16_MAX__
/* Independent oracle: the compiler's float -> _Float16 conversion (round to nearest even). */
static void test_against_compiler(void) {
  int bad = 0;
  for (uint64_t i = 0; i <= UINT32_MAX; i += 0x1233u) { /* ~940k floats over every exponent */
    float f = from_bits((uint32_t)i);
    _Float16 c = (_Float16)f;
    uint16_t cb;
    memcpy(&cb, &c, sizeof cb);
    uint16_t ours = vkf_float_to_half(f);
    if (isnan(f) ? !half_is_nan(ours) : ours != cb) bad++;
  }
  CHECK_MSG(bad == 0, "%d floats convert differently from the compiler's _Float16", bad);
}
#endif

static void test_bf16(void) {
  int bad = 0;
  for (uint32_t b = 0; b < 65536; b++) {
    float f = vkf_bf16_to_float((uint16_t)b);
    if (to_bits(f) != b << 16) bad++;
    uint16_t back = vkf_float_to_bf16(f);
    if (isnan(f) ? !isnan(vkf_bf16_to_float(back)) : back != b) bad++;
  }
  CHECK_MSG(bad == 0, "%d bf16 values failed to round-trip", bad);
  CHECK(vkf_float_to_bf16(1.0f + 0x1p-8f) == 0x3f80);       /* tie -> even (down) */
  CHECK(vkf_float_to_bf16(1.0078125f + 0x1p-8f) == 0x3f82); /* tie -> even (up) */
  CHECK(vkf_float_to_bf16(nextafterf(1.0f + 0x1p-8f, 2.0f)) == 0x3f81);
  CHECK(vkf_float_to_bf16(FLT_MAX) == 0x7f80); /* rounds up to inf */
  CHECK(isnan(vkf_bf16_to_float(vkf_float_to_bf16(from_bits(0x7f800001u)))));
}

int main(void) {
  test_round_trip_all_halves();
  test_known_values();
  test_ties_between_adjacent_halves();
#ifdef __FLT16_MAX__
  test_against_compiler();
#endif
  test_bf16();
  return test_report();
}
