/* The device limits a lowered plan must stay within (plan_limits.c). */
#ifndef VKF_GRAPH_LOWER_PLAN_LIMITS_H
#define VKF_GRAPH_LOWER_PLAN_LIMITS_H

#include "graph/base/caps.h"
#include "graph/lower/plan.h"

/* OK when every binding, dispatch and buffer of `plan` is within the caps' limits
 * (maxStorageBufferRange, maxTexelBufferElements, maxComputeWorkGroupCount,
 * maxMemoryAllocationSize, the largest heap); otherwise OUT_OF_MEMORY naming the first node or
 * buffer past a limit, its size and the limit. Limits the caps leave at 0 are not checked. */
vkf_status vkf_plan_check_limits(const vkf_plan *plan, const vkf_device_caps *caps);

#endif
