/* The cooperative-matrix allowlist (graph/base/coopmat_allowlist.c) against ggml-vulkan's rules:
 * AMD's own drivers only on RDNA3+, RADV as listed, Intel only on Xe2, others as listed, and
 * VKF_COOPMAT's override both ways; each verdict comes with a reason. */
#include <string.h>

#include "graph/base/coopmat_allowlist.h"
#include "tests/test_util.h"

typedef struct allow_case {
  const char *label;
  vkf_coopmat_device d;
  int force, expect;
  const char *reason; /* a substring of the reason */
} allow_case;

int main(void) {
  const uint32_t AMD = 0x1002, INTEL = 0x8086, NVIDIA = 0x10DE, MESA = 0x10005;
  const allow_case cases[] = {
      {"nvidia", {NVIDIA, 4, 32, 32, 1}, -1, 1, "trusted"},
      {"lavapipe 26", {MESA, 13, 8, 8, 0}, -1, 1, "trusted"},
      {"amd pro rdna2", {AMD, 1, 32, 64, 0}, -1, 0, "before RDNA3"},
      {"amdvlk gcn", {AMD, 2, 64, 64, 0}, -1, 0, "before RDNA3"},
      {"amd pro rdna3", {AMD, 1, 32, 64, 1}, -1, 1, "RDNA3"},
      {"radv rdna2", {AMD, 3, 32, 64, 0}, -1, 1, "trusted"},
      {"intel arc a770", {INTEL, 6, 8, 32, 1}, -1, 0, "before Xe2"},
      {"intel xe2", {INTEL, 6, 16, 32, 1}, -1, 1, "Xe2"},
      {"forced on", {INTEL, 6, 8, 32, 1}, 1, 1, "VKF_COOPMAT=1 overrides"},
      {"forced off", {NVIDIA, 4, 32, 32, 1}, 0, 0, "VKF_COOPMAT=0"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const allow_case *c = &cases[i];
    char reason[160];
    int got = vkf_coopmat_allowed(&c->d, c->force, reason, sizeof reason);
    CHECK_MSG(got == c->expect, "%s: allowed %d, expected %d (%s)", c->label, got, c->expect,
              reason);
    CHECK_MSG(strstr(reason, c->reason) != NULL, "%s: reason \"%s\" lacks \"%s\"", c->label,
              reason, c->reason);
    CHECK_MSG(strncmp(reason, got ? "on: " : "off: ", got ? 4 : 5) == 0, "%s: reason \"%s\"",
              c->label, reason);
  }
  return test_report();
}
