/* vkf version / vkf --version: vkformer's version (project(VERSION) in the top CMakeLists.txt),
 * the commit it was built from, and the versions of the Vulkan loader, headers, volk and shaderc
 * it runs on, for bug reports. */
#include <stdio.h>
#include <string.h>

#include "host/versions.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/cli_args.h"
#include "vkf_git_commit.h" /* generated at build time: VKF_GIT_COMMIT */

#ifndef VKF_VERSION
#define VKF_VERSION "unknown"
#endif

static void usage(FILE *f) {
  fprintf(f,
          "usage: vkf version (or vkf --version)\n"
          "  Prints vkformer's version, the git commit it was built from, and the versions of\n"
          "  the Vulkan loader, Vulkan headers, volk and shaderc it uses.\n");
}

int vkf_cli_version(int argc, char **argv) {
  for (int i = 0; i < argc; i++) {
    if (vkf_cli_is_help(argv[i])) return usage(stdout), 0;
    return vkf_cli_bad_arg("vkf version", usage, argc, argv, i);
  }
  vkf_host_versions v = vkf_host_versions_get();
  char loader[32] = "none found", headers[32];
  if (v.loader) vkf_host_version_text(v.loader, loader, sizeof loader);
  vkf_host_version_text(v.vulkan_headers, headers, sizeof headers);
  printf("vkf %s (commit %s)\n", VKF_VERSION, VKF_GIT_COMMIT);
  printf("Vulkan loader %s, headers %s, volk %u; shaderc SPIR-V 1.%u rev %u\n", loader, headers,
         v.volk, (v.spirv_version >> 8) & 0xff, v.spirv_revision);
  return 0;
}
