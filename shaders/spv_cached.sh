#!/bin/sh
# One build-time shader compile through a cache of SPIR-V modules, so that a second build tree of
# the same sources (`make test` builds the suite's tree and then the ASan one) copies the first
# tree's modules instead of optimising them again: spirv-opt takes 15-30 s on one attention.comp
# row, and the rows take most of a clean build's time.
#
#   spv_cached.sh CACHE SHADER_DIR SPV DEPFILE -- COMPILE...
#
# COMPILE is the compiler's whole command line; it writes SPV and DEPFILE itself. The key is that
# command line (with SPV and DEPFILE as placeholders, so it is the same in every tree), the
# compiler binary's path, size and time, and the content of every shader source and include
# (SHADER_DIR/*.comp and *.glsl: an edited include changes every key, never a stale module). A hit
# copies the module and the depfile, the depfile's target renamed. Entries are grouped by shader
# state; the groups of other states older than a day are removed when a new one starts.
set -eu
[ $# -ge 6 ] && [ "$5" = "--" ] || {
  echo "spv_cached.sh: usage: CACHE SHADER_DIR SPV DEPFILE -- COMPILE..." >&2
  exit 2
}
cache=$1 shaders=$2 spv=$3 dep=$4
shift 5

state=$(cat "$shaders"/*.comp "$shaders"/*.glsl | sha1sum | cut -c1-16)
compiler=$(command -v "$1" || echo "$1")
key=$({
  ls -lL --time-style=+%s "$compiler" 2>/dev/null || echo "$compiler"
  for a in "$@"; do
    if [ "$a" = "$spv" ]; then echo "@SPV"; elif [ "$a" = "$dep" ]; then echo "@DEP"; else printf '%s\n' "$a"; fi
  done
} | sha1sum | cut -c1-24)
dir=$cache/$state
if [ -f "$dir/$key.spv" ] && [ -f "$dir/$key.d" ]; then
  cp "$dir/$key.spv" "$spv"
  sed "1s|^[^:]*:|$spv:|" "$dir/$key.d" >"$dep"
  exit 0
fi

"$@"
# From here on the module is built: a cache that cannot be written only goes unused.
if [ ! -d "$dir" ]; then
  mkdir -p "$dir" 2>/dev/null || exit 0
  find "$cache" -mindepth 1 -maxdepth 1 -type d ! -name "$state" -mmin +1440 \
    -exec rm -rf {} + 2>/dev/null || true
fi
# A private name, then a rename: rows compile in parallel, and a half-written entry is never read.
tmp=$dir/.$key.$$
{ cp "$spv" "$tmp.spv" && cp "$dep" "$tmp.d" && mv -f "$tmp.d" "$dir/$key.d" &&
  mv -f "$tmp.spv" "$dir/$key.spv"; } 2>/dev/null || rm -f "$tmp.spv" "$tmp.d"
