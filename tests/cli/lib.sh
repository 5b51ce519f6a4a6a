# Shared by the CLI tests that count checks: ok / bad, a temporary folder removed on exit, and
# expect_error for the one-line "vkf: ..." errors every subcommand gives on bad input.
# Source it after setting VKF; `vkf_summary` prints the closing line and sets the exit status.
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect_error SUBCOMMAND NAME NEEDLE ARGS...: exit status 1 and exactly one stderr line
# "vkf: ...NEEDLE..." (NEEDLE is a basic regular expression).
expect_error() {
  local cmd=$1 name=$2 needle=$3
  shift 3
  "$VKF" "$cmd" "$@" >/dev/null 2>"$tmp/err"
  local rc=$?
  local lines
  lines=$(wc -l <"$tmp/err")
  if [ "$rc" -eq 1 ] && [ "$lines" -eq 1 ] && grep -q "^vkf: .*$needle" "$tmp/err"; then
    ok
  else
    bad "$name: exit $rc, $lines line(s): $(cat "$tmp/err")"
  fi
}

vkf_summary() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
