#!/bin/bash
# Where lavapipe spends its time inside our kernels. lavapipe JIT-compiles every pipeline with LLVM
# into anonymous executable memory, which perf cannot symbolise; this samples the program counter
# of every thread with gdb, dumps that memory from the same process, disassembles it and counts
# the samples per instruction.
#
#   tools/dev/jit_profile.sh [-n SAMPLES] [-w SECONDS] [-o DIR] -- COMMAND...
#   e.g. tools/dev/jit_profile.sh -o /tmp/prof -- ./build/tools/vkf bench attention \
#            --shape 1,12,1024,1024,64 --runs 1000 --no-unfused
#
# COMMAND must keep the device busy for a while (many --runs); it is killed after sampling.
# -w: seconds to wait before sampling (past the pipeline compiles; default 8), -n: samples
# (default 60; each stops the process for ~0.1 s). Writes DIR/jit.s (all JIT code), DIR/annotated.s
# (sample count in the first column) and prints the hottest instructions and the JIT code's
# instruction mix: multiplies, adds, FMAs, calls (out-of-line texel fetches), and stack traffic
# (spills). Needs gdb and objdump (binutils); Linux only.
set -eu

samples=60 wait_s=8 out=jit-profile
while [ $# -gt 0 ]; do
  case "$1" in
    -n) samples=$2; shift 2 ;;
    -w) wait_s=$2; shift 2 ;;
    -o) out=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "jit_profile: unexpected argument $1 (usage: see the top of $0)" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "jit_profile: no command after --" >&2; exit 2; }
for tool in gdb objdump; do
  command -v $tool >/dev/null || { echo "jit_profile: needs $tool (apt-get install gdb binutils)" >&2; exit 2; }
done
mkdir -p "$out"
rm -f "$out"/jit.s "$out"/annotated.s "$out"/pcs.txt "$out"/region.*.bin

"$@" >"$out/command.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
sleep "$wait_s"
kill -0 $pid 2>/dev/null || { echo "jit_profile: the command ended within $wait_s s (see $out/command.log)" >&2; exit 1; }

# Every thread's PC per sample; symbolised ones (<func+off>) are outside the JIT code.
total=0 outside=0
: >"$out/pcs.raw"
for _ in $(seq 1 "$samples"); do
  gdb -p $pid -batch -ex 'thread apply all p $pc' 2>/dev/null | grep '^\$' >>"$out/pcs.raw" || true
done
total=$(wc -l <"$out/pcs.raw")
outside=$(grep -c '<' "$out/pcs.raw" || true)
grep -v '<' "$out/pcs.raw" | awk '{print $NF}' | sed 's/^0x//' | sort | uniq -c >"$out/pcs.txt" || true

# The JIT code: anonymous executable mappings of the process, dumped while it still runs.
awk '$2 ~ /x/ && $6 == "" {print $1}' /proc/$pid/maps | while read -r range; do
  start=0x${range%-*} end=0x${range#*-}
  gdb -p $pid -batch -ex "dump binary memory $out/region.$start.bin $start $end" >/dev/null 2>&1
  objdump -D -b binary -m i386:x86-64 --adjust-vma="$start" "$out/region.$start.bin" |
    grep -P '^\s+[0-9a-f]+:' >>"$out/jit.s"
done
kill $pid 2>/dev/null || true

awk 'NR == FNR {n[$2] = $1; next}
     {a = $1; sub(":", "", a); printf "%5s %s\n", (a in n ? n[a] : ""), $0}' \
  "$out/pcs.txt" "$out/jit.s" >"$out/annotated.s"

in_jit=$(awk '{s += $1} END {print s + 0}' "$out/pcs.txt")
echo "samples: $total thread PCs; $in_jit in JIT code, $outside in named functions (mostly idle threads)"
echo "hottest JIT instructions (count, address, instruction):"
awk '$1 ~ /^[0-9]+$/' "$out/annotated.s" | sort -rn | head -15 |
  awk '{c = $1; a = $2; $1 = ""; $2 = ""; sub(/^ +([0-9a-f][0-9a-f] )+ */, ""); print "  " c, a, $0}'
# Functions = runs of code ending in ret: the shaders' main bodies are thousands of instructions,
# lavapipe's out-of-line texel-fetch functions a few dozen.
echo "JIT functions by samples (start, instructions, samples):"
awk '{ a = $1; c = 0; if (a !~ /:$/) { c = $1; a = $2 }
       if (start == "") start = a; n++; s += c
       if ($0 ~ /\tret *$/) { print s, start, n; start = ""; n = 0; s = 0 } }' "$out/annotated.s" |
  sort -rn | head -8 | awk '$1 > 0 {printf "  %s %6d instructions %4d samples\n", $2, $3, $1}'
echo "instruction mix of all JIT code:"
mnemonic() { awk -F'\t' 'NF >= 3 {split($3, w, " "); print w[1]}' "$out/jit.s"; }
mnemonic | sort | uniq -c | sort -rn >"$out/mix.txt"
for m in vmulps vaddps vfmadd213ps vfmadd231ps vfmadd132ps call; do
  printf '  %-12s %s\n' "$m" "$(awk -v m=$m '$2 == m {print $1}' "$out/mix.txt" | head -1)"
done
printf '  %-12s %s\n' "ymm spills" "$(grep -cP '%ymm\d+,-?0x[0-9a-f]+\(%rsp\)' "$out/jit.s" || true)"
printf '  %-12s %s\n' "rsp reads" "$(grep -cP '\(%rsp\),%ymm' "$out/jit.s" || true)"
echo "files: $out/annotated.s (samples per instruction), $out/jit.s, $out/mix.txt"
