#!/usr/bin/env bash
# The layering of the source tree (folders as layers, includes pointing down, no two files calling
# each other); the rules and the check are in tools/dev/check_layering.py.
set -u
cd "${VKF_SOURCE_DIR:-.}"
exec python3 tools/dev/check_layering.py .
