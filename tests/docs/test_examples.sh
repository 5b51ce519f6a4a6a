#!/usr/bin/env bash
# Runs every example of README.md and docs/*.md as written (sh, python and c blocks), from the
# source root against the build tree, with the validation layer on (tools/dev/check_docs.py
# examples). Examples write only under /tmp.
set -u
: "${VKF_BUILD_DIR:?set VKF_BUILD_DIR to the build folder}"
cd "${VKF_SOURCE_DIR:-.}"
exec python3 tools/dev/check_docs.py examples --build "$VKF_BUILD_DIR" .
