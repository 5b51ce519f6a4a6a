#!/usr/bin/env bash
# The installed vkformer used as a user would: `cmake --install` into a temporary prefix, which is
# then moved (the install is relocatable); no installed file names the source or build tree; the
# shared library's SONAME and exports; examples/hello.c built with pkg-config alone (shared and
# --static), and with find_package(vkformer) (both targets), each run with the validation layer on
# and checked against Hugging Face's values (tests/install/hello_golden.json); examples/custom_graph.c
# over the installed graph builder headers and libvkformer.a; the installed vkf
# run from another folder with its default model found under the prefix or through VKF_MODEL_PATH.
set -uo pipefail
source tests/cli/lib.sh
src=$(pwd -P)
build=$(cd "${VKF_BUILD_DIR:?set VKF_BUILD_DIR to the build tree}" && pwd -P)
golden=$src/tests/install/hello_golden.json
# Sanitizer builds: the example links the instrumented library, so it needs the same flags.
cflags=${VKF_TEST_CFLAGS:-}
export VKF_VALIDATE=1
unset VKF_MODEL_PATH PKG_CONFIG_PATH CMAKE_PREFIX_PATH LD_LIBRARY_PATH

# Install, then move the prefix: nothing may depend on where it was installed.
if cmake --install "$build" --prefix "$tmp/first" >"$tmp/install.log" 2>&1; then ok; else bad "cmake --install: $(tail -3 "$tmp/install.log")"; fi
mv "$tmp/first" "$tmp/prefix"
prefix=$tmp/prefix
pc=$(find "$prefix" -name vkformer.pc)
libdir=$(dirname "$(dirname "$pc")")
for f in "$libdir/libvkformer.a" "$libdir/libvkformer.so" "$libdir/pkgconfig/vkformer-static.pc" \
    "$libdir/cmake/vkformer/vkformerConfig.cmake" "$libdir/cmake/vkformer/vkformerConfigVersion.cmake" \
    "$prefix/include/vkformer/vkformer.h" "$prefix/include/vkformer/graph/ir/builder.h" \
    "$prefix/bin/vkf" "$prefix/share/vkformer/models/vit_tiny/config.json"; do
  [ -f "$f" ] && ok || bad "not installed: ${f#"$prefix"/}"
done

# No installed file names the source tree or the build tree (compiled-in paths, debug info,
# pkg-config or CMake files).
for tree in "$src" "$build"; do
  found=$(grep -rlF "$tree" "$prefix")
  [ -z "$found" ] && ok || bad "installed files naming $tree: $found"
done

# SONAME libvkformer.so.MAJOR, and the dynamic symbols are exactly the header's VKFORMER_API functions.
soname=$(readelf -d "$libdir/libvkformer.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[[ "$soname" =~ ^libvkformer\.so\.[0-9]+$ ]] && [ -e "$libdir/$soname" ] && ok || bad "SONAME \"$soname\""
nm -D --defined-only "$libdir/libvkformer.so" | awk '$2 != "A" {sub(/@.*/, "", $3); print $3}' | sort >"$tmp/exported"
sed -n 's/^VKFORMER_API.*\b\(vkformer_[a-z0-9_]*\)(.*/\1/p' "$prefix/include/vkformer/vkformer.h" |
  sort >"$tmp/declared"
if [ -s "$tmp/declared" ] && diff "$tmp/declared" "$tmp/exported" >"$tmp/symdiff"; then ok; else
  bad "exports differ from vkformer.h's VKFORMER_API functions (< declared, > exported): $(head -5 "$tmp/symdiff")"
fi

# run_hello NAME KIND ARGS...: runs ./NAME from $tmp/work and checks its output against the golden.
run_hello() {
  local exe=$1 kind=$2
  shift 2
  if (cd "$tmp/work" && "./$exe" "$@") >"$tmp/$exe.$kind.out" 2>"$tmp/$exe.$kind.err"; then ok; else
    bad "$exe $kind: exit $?: $(tail -3 "$tmp/$exe.$kind.err")"
    return
  fi
  grep -qx "vkformer $version" "$tmp/$exe.$kind.out" && ok || bad "$exe: vkformer_version() is not $version"
  python3 "$src/tests/install/check_hello.py" "$kind" "$tmp/$exe.$kind.out" "$golden" >/dev/null 2>"$tmp/check.err" &&
    ok || bad "$exe $kind: $(cat "$tmp/check.err")"
}
mkdir -p "$tmp/work"
text=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["text"]["text"])' "$golden")
bert=$src/tests/models/data/bert_tiny
vit=$src/tests/models/data/vit_tiny
cat_jpg=$src/assets/images/cat.jpg

# pkg-config alone: the shared library (found at run time through LD_LIBRARY_PATH) ...
export PKG_CONFIG_PATH=$libdir/pkgconfig
version=$(sed -n 's/^project(vkformer VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] && [ "$(pkg-config --modversion vkformer)" = "$version" ] &&
  ok || bad "pkg-config --modversion: $(pkg-config --modversion vkformer 2>&1)"
# The header's version macros agree with the one version, project(... VERSION) in CMakeLists.txt.
header_version=$(for part in MAJOR MINOR PATCH; do
  sed -n "s/^#define VKFORMER_VERSION_$part \([0-9]*\)$/\1/p" "$prefix/include/vkformer/vkformer.h"
done | paste -sd.)
[ "$header_version" = "$version" ] && ok || bad "vkformer.h says version $header_version, CMakeLists.txt $version"
# shellcheck disable=SC2046,SC2086
if cc $cflags "$src/examples/hello.c" $(pkg-config --cflags --libs vkformer) -o "$tmp/work/hello" 2>"$tmp/cc.err"; then ok; else bad "cc hello (pkg-config vkformer): $(head -5 "$tmp/cc.err")"; fi
readelf -d "$tmp/work/hello" 2>/dev/null | grep -q "NEEDED.*\[$soname\]" && ok || bad "hello does not need $soname"
LD_LIBRARY_PATH=$libdir run_hello hello text "$bert" "$text"
LD_LIBRARY_PATH=$libdir run_hello hello image "$vit" "$cat_jpg"
# ... and the static archive (pkg-config --static): no libvkformer.so needed at run time.
# shellcheck disable=SC2046,SC2086
if cc $cflags "$src/examples/hello.c" $(pkg-config --static --cflags --libs vkformer-static) -o "$tmp/work/hello_static" 2>"$tmp/cc.err"; then ok; else bad "cc hello_static (pkg-config --static vkformer-static): $(head -5 "$tmp/cc.err")"; fi
readelf -d "$tmp/work/hello_static" 2>/dev/null | grep -q "libvkformer" && bad "hello_static needs libvkformer.so" || ok
run_hello hello_static text "$bert" "$text"
# A model of one's own: the graph builder headers installed under include/vkformer/, linked with
# the archive (libvkformer.so exports only vkformer_*), checked against plain C arithmetic.
# shellcheck disable=SC2046,SC2086
if cc $cflags "$src/examples/custom_graph.c" $(pkg-config --static --cflags --libs vkformer-static) -o "$tmp/work/custom_graph" 2>"$tmp/cc.err"; then ok; else bad "cc custom_graph: $(head -5 "$tmp/cc.err")"; fi
if (cd "$tmp/work" && ./custom_graph) >"$tmp/custom.out" 2>&1; then ok; else bad "custom_graph: $(tail -3 "$tmp/custom.out")"; fi
unset PKG_CONFIG_PATH

# find_package(vkformer): vkformer::vkformer and vkformer::vkformer_static.
mkdir -p "$tmp/cmake"
cat >"$tmp/cmake/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(hello_cmake C)
find_package(vkformer 0.1 REQUIRED)
add_executable(hello_cmake "$src/examples/hello.c")
target_link_libraries(hello_cmake PRIVATE vkformer::vkformer)
add_executable(hello_cmake_static "$src/examples/hello.c")
target_link_libraries(hello_cmake_static PRIVATE vkformer::vkformer_static)
CMAKE
if cmake -S "$tmp/cmake" -B "$tmp/cmake/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_FLAGS="$cflags" >"$tmp/cmake.log" 2>&1 &&
  cmake --build "$tmp/cmake/build" >>"$tmp/cmake.log" 2>&1; then ok; else bad "find_package project: $(tail -5 "$tmp/cmake.log")"; fi
cp "$tmp/cmake/build/hello_cmake" "$tmp/cmake/build/hello_cmake_static" "$tmp/work/" 2>/dev/null
LD_LIBRARY_PATH=$libdir run_hello hello_cmake image "$vit" "$cat_jpg"
run_hello hello_cmake_static text "$bert" "$text"

# The installed vkf from another folder: its default model comes from the prefix ...
cp "$cat_jpg" "$tmp/work/cat.jpg"
if (cd "$tmp/work" && "$prefix/bin/vkf" classify --top 1 cat.jpg) >"$tmp/vkf.out" 2>"$tmp/vkf.err"; then ok; else bad "installed vkf classify: $(cat "$tmp/vkf.err")"; fi
grep -qF "($prefix/share/vkformer/models/vit_tiny)" "$tmp/vkf.err" && ok || bad "default model not from the prefix: $(cat "$tmp/vkf.err")"
# ... or first from VKF_MODEL_PATH (here a folder whose vit_tiny is another checkpoint) ...
mkdir -p "$tmp/models"
ln -s "$src/tests/models/data/deit_cls_tiny" "$tmp/models/vit_tiny"
if (cd "$tmp/work" && VKF_MODEL_PATH="$tmp/nowhere:$tmp/models" "$prefix/bin/vkf" classify --top 1 cat.jpg) >/dev/null 2>"$tmp/vkf.err"; then ok; else bad "vkf with VKF_MODEL_PATH: $(cat "$tmp/vkf.err")"; fi
grep -qF "($tmp/models/vit_tiny)" "$tmp/vkf.err" && ok || bad "VKF_MODEL_PATH not searched first: $(cat "$tmp/vkf.err")"
# ... and a copy of vkf outside any prefix finds none: one line naming where it looked.
cp "$prefix/bin/vkf" "$tmp/work/vkf"
(cd "$tmp/work" && ./vkf classify cat.jpg) >/dev/null 2>"$tmp/vkf.err"
rc=$?
[ "$rc" -eq 1 ] && [ "$(wc -l <"$tmp/vkf.err")" -eq 1 ] && grep -q "vit_tiny/config.json not found.*VKF_MODEL_PATH" "$tmp/vkf.err" &&
  ok || bad "vkf without models: exit $rc: $(cat "$tmp/vkf.err")"
vkf_summary
