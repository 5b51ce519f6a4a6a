/* Owns the subgroup probe at device creation: a one-workgroup kernel (shaders/subgroup_probe.comp)
 * shows how many subgroups a workgroup of twice the planned size really has. Where that width is
 * not the planned one, the device misreports (its requiredSubgroupSize is not honoured either), so
 * caps take the width measured and mark the size as untrusted: choosers then pick bodies that
 * read the subgroup layout at run time (vkf_caps_subgroup_fixed). */
#include "host/subgroup_probe.h"

#include <stdio.h>

#include "graph/base/log.h"
#include "host/buffer.h"
#include "host/cmd.h"
#include "host/device_internal.h"
#include "host/kernel.h"

vkf_status vkf_subgroup_probe(vkf_device *device) {
  vkf_device_caps *caps = &device->caps;
  uint32_t planned = caps->subgroup_size;
  if (!planned || planned > caps->max_workgroup_invocations) return VKF_OK;
  uint32_t wg = 2 * planned <= caps->max_workgroup_invocations ? 2 * planned : planned;
  vkf_kernel_desc desc = {.shader = "subgroup_probe.comp", .spec_constants = &wg,
                          .spec_constant_count = 1, .binding_count = 1};
  vkf_kernel *k = NULL;
  vkf_buffer *b = NULL;
  vkf_cmd *cmd = NULL;
  uint32_t out[2] = {0, 0};
  vkf_status s = vkf_kernel_get(device, &desc, &k);
  if (!s) s = vkf_buffer_create(device, sizeof out, "subgroup probe", &b);
  if (!s) s = vkf_cmd_create(device, 0, &cmd);
  if (!s) s = vkf_cmd_begin(cmd);
  vkf_binding bind = {b, 0, 0};
  if (!s) s = vkf_cmd_dispatch(cmd, k, &bind, NULL, 1, 1, 1);
  if (!s) s = vkf_cmd_end(cmd);
  if (!s) s = vkf_cmd_submit_wait(cmd);
  if (!s) s = vkf_buffer_download(device, b, 0, out, sizeof out);
  vkf_cmd_destroy(cmd);
  vkf_buffer_destroy(b);
  if (s) return vkf_status_annotate(s, "probing the subgroup size: ");
  uint32_t width = out[1] ? (wg + out[1] - 1) / out[1] : 0;
  if (width && (width != planned || out[0] != planned)) {
    vkf_log(VKF_LOG_INFO,
            "device \"%s\": subgroups of %u reported, %u run (gl_SubgroupSize %u); planning "
            "without a fixed subgroup size",
            caps->name, planned, width, out[0]);
    caps->subgroup_misreported = planned;
    caps->subgroup_size = width;
    caps->subgroup_size_control = 0;
    /* The tensor-core kernels are tiles of exactly 4 subgroups. */
    if (caps->coopmat_gemm_tile) {
      caps->coopmat_gemm_tile = 0;
      caps->coopmat_tiles = 0;
      snprintf(caps->coopmat_reason, sizeof caps->coopmat_reason,
               "off: the subgroup size is not guaranteed (the kernels are 4-subgroup tiles)");
    }
  }
  return VKF_OK;
}
