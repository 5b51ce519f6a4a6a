#!/usr/bin/env bash
# Every relative link and #anchor of every tracked Markdown file resolves, and every VKF_*
# variable the library reads is in docs/environment.md (tools/dev/check_docs.py).
set -u
cd "${VKF_SOURCE_DIR:-.}"
rc=0
python3 tools/dev/check_docs.py links . || rc=1
python3 tools/dev/check_docs.py env . || rc=1
exit $rc
