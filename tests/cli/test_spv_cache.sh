#!/usr/bin/env bash
# The build's SPIR-V cache (shaders/spv_cached.sh, what `make` gives every build tree): a miss
# compiles and stores, a second tree's identical row gets the same module and a depfile naming its
# own target, an edited include is a miss, a failing compile fails and stores nothing, and bad
# usage is refused.
set -uo pipefail
VKF=${VKF:-unused}
source tests/cli/lib.sh
command -v glslc >/dev/null || { echo "skipped: no glslc"; exit 77; }
S=$PWD/shaders
cache=$tmp/cache
row() { # SHADER_DIR OUT: copy.comp's SRC_I32 DST_F16 row through the cache, as CMake runs it
  sh "$S/spv_cached.sh" "$cache" "$1" "$2" "$2.d" -- glslc --target-env=vulkan1.1 -O -I "$1" \
    -DSRC_I32 -DDST_F16 "$1/copy.comp" -o "$2" -MD -MF "$2.d"
}
entries() { find "$cache" -name '*.spv' 2>/dev/null | wc -l; }
mkdir -p "$tmp/a" "$tmp/b"
glslc --target-env=vulkan1.1 -O -I "$S" -DSRC_I32 -DDST_F16 "$S/copy.comp" -o "$tmp/direct.spv"

# A miss: compiled, and stored once.
if row "$S" "$tmp/a/copy.spv" && cmp -s "$tmp/a/copy.spv" "$tmp/direct.spv" && [ "$(entries)" = 1 ]
then ok; else bad "a miss: not compiled as glslc does, or not stored ($(entries) entries)"; fi
# A hit from another tree: the same module, the depfile naming the new target, nothing added.
if row "$S" "$tmp/b/copy.spv" && cmp -s "$tmp/b/copy.spv" "$tmp/direct.spv" &&
  [ "$(entries)" = 1 ] && grep -q "^$tmp/b/copy.spv: .*/copy.comp" "$tmp/b/copy.spv.d" &&
  [ "$(cut -d: -f2- "$tmp/a/copy.spv.d")" = "$(cut -d: -f2- "$tmp/b/copy.spv.d")" ]
then ok; else bad "a hit: module, depfile or entry count differ: $(cat "$tmp/b/copy.spv.d")"; fi
# An edited include (a copy of the shader folder with a comment added to common.glsl): a miss.
cp -r "$S" "$tmp/shaders"
echo "// edited" >>"$tmp/shaders/common.glsl"
if row "$tmp/shaders" "$tmp/b/edited.spv" && [ "$(entries)" = 2 ]; then ok; else
  bad "an edited include was not a miss ($(entries) entries)"
fi
# A failing compile: its status, and nothing stored.
if sh "$S/spv_cached.sh" "$cache" "$S" "$tmp/b/bad.spv" "$tmp/b/bad.spv.d" -- glslc \
  --target-env=vulkan1.1 "$S/no_such.comp" -o "$tmp/b/bad.spv" -MD -MF "$tmp/b/bad.spv.d" \
  2>/dev/null; then bad "a failing compile succeeded"
elif [ "$(entries)" = 2 ]; then ok; else bad "a failing compile stored an entry"; fi
# Bad usage.
sh "$S/spv_cached.sh" "$cache" "$S" 2>"$tmp/err"
if [ $? -eq 2 ] && grep -q "usage" "$tmp/err"; then ok; else bad "bad usage: $(cat "$tmp/err")"; fi

vkf_summary
