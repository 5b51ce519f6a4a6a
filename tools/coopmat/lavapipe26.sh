#!/usr/bin/env bash
# The cooperative-matrix CI lane's device: Debian 13's trixie-backports Mesa 26 lavapipe, which
# exposes VK_KHR_cooperative_matrix (8x8x8, f16*f16->f32), with trixie's Vulkan loader and
# validation layer, unpacked into a private sysroot under DIR (nothing is installed into /; no
# root needed). It needs trixie's glibc, so it runs through that sysroot's dynamic loader: DIR/sr
# runs any program (a Debian 12 build too) on it, validation layer available as
# VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation. Quick when DIR/sr exists. Usage: lavapipe26.sh DIR
set -euo pipefail
D=$(mkdir -p "${1:?usage: $0 DIR}" && cd "$1" && pwd)
[ -x "$D/sr" ] && grep -q VK_IMPLICIT_LAYER_PATH "$D/sr" && exit 0
S=$D/sysroot
rm -rf "$S" "$D/debs" && mkdir -p "$D/lists/partial" "$D/cache" "$D/debs" "$S" "$D/layers"
cat > "$D/sources.list" <<'EOS'
deb http://deb.debian.org/debian trixie main
deb http://deb.debian.org/debian trixie-backports main
EOS
APT=(apt-get "-oDir::Etc::SourceList=$D/sources.list" -oDir::Etc::SourceParts=/dev/null
     "-oDir::State::Lists=$D/lists" -oDir::State::Status=/dev/null "-oDir::Cache=$D/cache"
     -oAPT::Architecture=amd64 -oDebug::NoLocking=1 -q)
"${APT[@]}" update >/dev/null
# The whole dependency closure against an empty dpkg status: trixie's libc6, libllvm, ... too.
PKGS=$("${APT[@]}" install -s --no-install-recommends mesa-vulkan-drivers/trixie-backports \
        libvulkan1 vulkan-validationlayers | awk '/^Inst/{print $2"="substr($3,2)}')
(cd "$D/debs" && "${APT[@]}" download $PKGS 2>&1 | grep -v unsandboxed | tail -1) || true
for f in "$D"/debs/*.deb; do dpkg -x "$f" "$S"; done
L=$S/usr/lib/x86_64-linux-gnu
[ -f "$L/libvulkan_lvp.so" ] || { echo "lavapipe26.sh: no libvulkan_lvp.so in the sysroot" >&2; exit 1; }
sed "s#\"library_path\": *\"[^\"]*\"#\"library_path\": \"$L/libvulkan_lvp.so\"#" \
  "$S/usr/share/vulkan/icd.d/lvp_icd.json" > "$D/lvp_icd.json"
sed "s#\"library_path\": *\"[^\"]*\"#\"library_path\": \"$L/libVkLayer_khronos_validation.so\"#" \
  "$S/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json" \
  > "$D/layers/VkLayer_khronos_validation.json"
# The host's implicit layers (Mesa's device select) are kept out by an empty implicit-layer path:
# disabling them by name instead makes the loader say so, which the validation counter would see.
mkdir -p "$D/no-implicit-layers"
cat > "$D/sr" <<EOW
#!/bin/sh
export VK_DRIVER_FILES=$D/lvp_icd.json VK_ICD_FILENAMES=$D/lvp_icd.json
export VK_IMPLICIT_LAYER_PATH=$D/no-implicit-layers VK_LAYER_PATH=$D/layers
exec $L/ld-linux-x86-64.so.2 --library-path $L:$S/lib/x86_64-linux-gnu "\$@"
EOW
chmod +x "$D/sr"
