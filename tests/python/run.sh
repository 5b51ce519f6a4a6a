#!/usr/bin/env bash
# Runs the Python binding tests (tests/python) with Debian's python3, which has numpy and pytest
# (tools/dev/setup.sh installs python3-numpy and python3-pytest), as tests/cli/test_linear_op.sh uses
# it for numpy. Needs VKFORMER_LIBRARY (the built libvkformer.so); ctest python/pytest sets it and
# PYTHONPATH=python. Arguments go to pytest instead of the default tests/python (e.g.
# tests/python/test_forward.py -k vit).
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${VKF_PYTHON:-/usr/bin/python3}
if ! "$PY" -c 'import numpy, pytest' 2>/dev/null; then
  echo "tests/python: $PY lacks numpy or pytest (tools/dev/setup.sh installs python3-numpy and python3-pytest)" >&2
  exit 1
fi
: "${VKFORMER_LIBRARY:?set VKFORMER_LIBRARY to the built libvkformer.so}"
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
[ $# -gt 0 ] || set -- tests/python
exec "$PY" -m pytest -q -p no:cacheprovider "$@"
