#!/usr/bin/env bash
# The progress line: with stderr on a terminal (a pty from script(1)) and vkformer's kernel cache
# cold, classify shows "vkf: building kernels: N / M" updating in place, and clears it before the
# results, and generate --json counts its tokens; with stderr not a terminal (a file, as in every
# other test) nothing of it appears. The line only shows for a task that lasts over half a second,
# so a run whose kernels all build faster than that (embedded SPIR-V, a fast machine) may rightly
# show none.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
command -v script >/dev/null || { echo "script(1) missing (util-linux)"; exit 1; }
img=tests/fuzz/seeds/image/rgba.png

start=$(date +%s%N)
script -qec "VKF_CACHE_DIR='$tmp/cold1' '$VKF' classify '$img'" /dev/null >"$tmp/tty" 2>&1
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
[ "$rc" -eq 0 ] && ok || bad "classify on a pty: exit $rc: $(cat "$tmp/tty")"
grep -q "^ *[0-9.]*%  " "$tmp/tty" && ok || bad "no results on the pty: $(cat -A "$tmp/tty")"
python3 - "$tmp/tty" "$ms" <<'PY' && ok || bad "progress line: $(cat -A "$tmp/tty" | head -5)"
import re, sys
out, ms = open(sys.argv[1], "rb").read().decode(), int(sys.argv[2])
shown = re.findall(r"\r\x1b\[Kvkf: building kernels: (\d+) / (\d+)", out)
if not shown:
    # Over a few seconds of building with a cold cache, the line must have shown.
    assert ms < 1500, "a %d ms cold run showed no progress" % ms
    sys.exit(0)
for done, total in shown:
    assert 0 < int(done) < int(total), (done, total)
# cleared before the first result line, and nothing of it after
first = out.index("rgba.png")
assert out.rfind("\r\x1b[K", 0, first) > out.rfind("building kernels", 0, first), "not cleared"
assert "building kernels" not in out[first:], "progress after the results"
PY

# Not a terminal: stderr holds the usual lines and no progress.
VKF_CACHE_DIR="$tmp/cold2" "$VKF" classify "$img" >"$tmp/out" 2>"$tmp/err" && ok || bad "classify: $(cat "$tmp/err")"
grep -q "building kernels" "$tmp/err" && bad "progress on a non-terminal: $(cat "$tmp/err")" || ok
grep -q $'\r' "$tmp/err" && bad "a carriage return on a non-terminal" || ok

# generate --json (no text streamed): "generating tokens: N / 400" on the pty, cleared before the
# speed line; none on a non-terminal.
gen=(generate --model tests/models/data/llama_tiny --ids 1,2,3 --ids 4,5 --max-new-tokens 400 --ignore-eos --ctx 512 --json)
start=$(date +%s%N)
script -qec "'$VKF' ${gen[*]} >/dev/null" /dev/null >"$tmp/gtty" 2>&1 && ok || bad "generate on a pty: $(cat "$tmp/gtty")"
ms=$((($(date +%s%N) - start) / 1000000))
python3 - "$tmp/gtty" "$ms" <<'PY' && ok || bad "generation progress: $(cat -A "$tmp/gtty" | tail -3)"
import re, sys
out, ms = open(sys.argv[1], "rb").read().decode(), int(sys.argv[2])
shown = [int(d) for d in re.findall(r"\r\x1b\[Kvkf: generating tokens: (\d+) / 400", out)]
if not shown:
    assert ms < 1500, "a %d ms generation showed no progress" % ms
    sys.exit(0)
assert shown == sorted(shown) and 0 < shown[0] and shown[-1] < 400, shown
speed = out.index("vkf generate: prompt")
assert out.rfind("\r\x1b[K", 0, speed) > out.rfind("generating tokens", 0, speed), "not cleared"
PY
"$VKF" "${gen[@]}" >/dev/null 2>"$tmp/err" && ok || bad "generate: $(cat "$tmp/err")"
grep -q "generating tokens" "$tmp/err" && bad "generation progress on a non-terminal" || ok

vkf_summary
