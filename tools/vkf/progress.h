/* The terminal progress line of vkf: the device's slow set-up tasks (kernel builds on a cold
 * cache, weight uploads) as one updating line on stderr. Nothing at all unless stderr is a
 * terminal, and nothing for a task that ends within half a second (a warm start stays silent). */
#ifndef VKF_TOOLS_VKF_PROGRESS_H
#define VKF_TOOLS_VKF_PROGRESS_H

#include "host/device.h"

/* Installs the progress callback on `device` when stderr is a terminal. */
void vkf_cli_progress_install(vkf_device *device);

#endif
