#!/usr/bin/env bash
# docs/cli.md holds exactly what `vkf ... --help` prints, and a block for every command and
# benchmark (tools/dev/check_docs.py cli; --write regenerates the blocks).
set -u
VKF=${VKF:?set VKF to the vkf binary}
cd "${VKF_SOURCE_DIR:-.}"
exec python3 tools/dev/check_docs.py cli --vkf "$VKF" .
