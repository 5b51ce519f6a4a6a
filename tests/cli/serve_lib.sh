# Shared by tests/cli/test_serve.sh and test_serve_tiny.sh (after tests/cli/lib.sh): servers
# started in the background and stopped by SIGTERM, and tests/cli/serve_check.py phases counted
# into ok / bad.
CHECK="python3 tests/cli/serve_check.py"
KEY=sekret-key
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT

# start NAME ARGS...: a server in the background; sets URL and PID (its stdout's first line).
start() {
  local name=$1
  shift
  "$VKF" serve --port 0 --quiet "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
  PID=$!
  pids+=("$PID")
  URL=
  for _ in $(seq 600); do
    URL=$(head -1 "$tmp/$name.out" 2>/dev/null)
    [ -n "$URL" ] && return 0
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.2
  done
  bad "$name did not start: $(cat "$tmp/$name.err")"
  return 1
}

# stop NAME PID: SIGTERM, then exit status 0 (1 would mean validation messages)
# why_exit NAME: the end of a server's stderr, led by a sanitizer's report where there is one
why_exit() {
  grep -m1 -A4 'ERROR: AddressSanitizer\|runtime error:\|ERROR: LeakSanitizer' "$tmp/$1.err"
  tail -3 "$tmp/$1.err"
}

stop() {
  kill -TERM "$2"
  wait "$2"
  local rc=$?
  if [ $rc -eq 0 ]; then ok; else bad "$1 exited $rc: $(why_exit "$1")"; fi
}

phase() { # NAME ARGS...: one serve_check.py phase; its ok/FAIL lines count
  local out
  out=$($CHECK "$@" 2>&1)
  passed=$((passed + $(grep -c '^ok ' <<<"$out")))
  failed=$((failed + $(grep -c '^FAIL ' <<<"$out")))
  grep '^FAIL \|Traceback\|Error' <<<"$out" >&2
  grep -q '^[0-9]* failed$' <<<"$out" || bad "serve_check.py $1 did not finish: $(tail -5 <<<"$out")"
}
