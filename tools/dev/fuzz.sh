#!/usr/bin/env bash
# Builds and runs the libFuzzer targets of tests/fuzz (clang, ASan + UBSan) over every reader of
# untrusted input. For each target: first its committed crashers (tests/fuzz/crashers/TARGET/) and
# its seed corpus (tools/dev/fuzz_seeds.py, from the test data) as plain inputs, then fuzzing for
# --seconds (default 30) from the seeds plus the corpus earlier runs grew (BUILD/fuzz/corpus/TARGET,
# kept between runs, never committed). Prints each target's executions, exec/s and coverage
# (libFuzzer's cov/ft) and fails when any target crashes, leaks, hangs or breaks an invariant; the
# failing input is kept in BUILD/fuzz/artifacts/TARGET/ (commit it to tests/fuzz/crashers/TARGET/
# with the fix).
#
#   tools/dev/fuzz.sh                       # the CI smoke: every target for 30 s, two at a time
#   tools/dev/fuzz.sh --seconds 900         # the long run (the issue's 15 minutes per target)
#   tools/dev/fuzz.sh fuzz_npy fuzz_image   # some targets only
#   tools/dev/fuzz.sh --regression-only     # crashers and seeds only, no fuzzing
# Options: --build DIR (default build-fuzz), --jobs N (targets run at once, default 2),
# --no-build (use what DIR holds).
set -euo pipefail
cd "$(dirname "$0")/../.."

SECONDS_PER_TARGET=30
JOBS=2
BUILD=build-fuzz
BUILD_IT=1
FUZZ=1
TARGETS=()
while (($#)); do
  case "$1" in
    --seconds) SECONDS_PER_TARGET="$2"; shift 2 ;;
    --jobs) JOBS="$2"; shift 2 ;;
    --build) BUILD="$2"; shift 2 ;;
    --no-build) BUILD_IT=0; shift ;;
    --regression-only) FUZZ=0; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) TARGETS+=("$1"); shift ;;
  esac
done
[[ "$SECONDS_PER_TARGET" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: --seconds wants a positive integer" >&2; exit 2; }
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: --jobs wants a positive integer" >&2; exit 2; }

if ((BUILD_IT)); then
  command -v clang >/dev/null || { echo "fuzz.sh: clang is missing (tools/dev/setup.sh installs it)" >&2; exit 1; }
  CC=clang cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVKF_FUZZ=ON \
    -DVKF_WITH_VULKAN=OFF ${CI:+-DVKF_WERROR=ON} >/dev/null
  cmake --build "$BUILD" -j"$JOBS" --target fuzz_targets >/dev/null
fi
BUILD=$(cd "$BUILD" && pwd)
if ((${#TARGETS[@]} == 0)); then
  for src in tests/fuzz/fuzz_*.c; do TARGETS+=("$(basename "$src" .c)"); done
fi
OUT="$BUILD/fuzz"
mkdir -p "$OUT/logs"
python3 tools/dev/fuzz_seeds.py "$OUT/seeds" . >/dev/null
export VKF_SOURCE_DIR="$PWD"
# halt_on_error: a UBSan report is a finding, as a crash is. Leaks are findings too.
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=0"

# Replays crashers and seeds as plain inputs (no mutation); fails on the first bad one.
regression() {
  local t=$1 bin="$BUILD/tests/fuzz/$1" log="$OUT/logs/$1.regression.log"
  local inputs=()
  [ -d "tests/fuzz/crashers/$t" ] && inputs+=(tests/fuzz/crashers/"$t"/*)
  [ -d "$OUT/seeds/$t" ] && inputs+=("$OUT/seeds/$t"/*)
  ((${#inputs[@]})) || return 0
  if ! "$bin" -timeout=30 "${inputs[@]}" >"$log" 2>&1; then
    echo "FAIL $t: a crasher or seed fails again; see $log" >&2
    tail -n 30 "$log" >&2
    return 1
  fi
}

# Fuzzes one target for SECONDS_PER_TARGET; prints one summary line.
fuzz_one() {
  local t=$1 bin="$BUILD/tests/fuzz/$1" log="$OUT/logs/$1.log"
  mkdir -p "$OUT/corpus/$t" "$OUT/artifacts/$t"
  local dirs=("$OUT/corpus/$t" "$OUT/seeds/$t")
  [ -d "tests/fuzz/crashers/$t" ] && dirs+=("tests/fuzz/crashers/$t")
  local rc=0
  # FUZZ_SEED (set by `make test`) fixes libFuzzer's random seed, so a CI smoke explores the same
  # way each time; without it every run explores anew (the long runs).
  "$bin" -max_total_time="$SECONDS_PER_TARGET" -timeout=20 -rss_limit_mb=2048 \
    ${FUZZ_SEED:+-seed="$FUZZ_SEED"} -print_final_stats=1 -artifact_prefix="$OUT/artifacts/$t/" "${dirs[@]}" >"$log" 2>&1 || rc=$?
  local execs rate cov ft
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n1 | cut -d' ' -f2)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -n1 | cut -d' ' -f2)
  if ((rc)); then
    printf 'FAIL %-24s exit %d after %s execs; input in %s; log %s\n' "$t" "$rc" "${execs:-?}" \
      "$OUT/artifacts/$t/" "$log"
    grep -m3 -E 'ERROR|runtime error|fuzz invariant|SUMMARY' "$log" | sed 's/^/     /'
    return 1
  fi
  printf 'ok   %-24s %10s execs %7s exec/s  cov %5s  ft %6s  (%ss)\n' "$t" "${execs:-?}" \
    "${rate:-?}" "${cov:-?}" "${ft:-?}" "$SECONDS_PER_TARGET"
}

failed=0
for t in "${TARGETS[@]}"; do
  [ -x "$BUILD/tests/fuzz/$t" ] || { echo "fuzz.sh: no target $t in $BUILD/tests/fuzz" >&2; exit 2; }
  regression "$t" || failed=1
done
if ((FUZZ && !failed)); then
  echo "fuzz: ${#TARGETS[@]} targets, ${SECONDS_PER_TARGET}s each, $JOBS at a time"
  running=0
  for t in "${TARGETS[@]}"; do
    fuzz_one "$t" >"$OUT/logs/$t.summary" &
    running=$((running + 1))
    if ((running >= JOBS)); then wait -n || failed=1; running=$((running - 1)); fi
  done
  while ((running)); do wait -n || failed=1; running=$((running - 1)); done
  for t in "${TARGETS[@]}"; do cat "$OUT/logs/$t.summary"; done
fi
((failed == 0)) || { echo "fuzz: FAILED" >&2; exit 1; }
echo "fuzz: ${#TARGETS[@]} targets passed"
