# Shared by the CLI tests that count checks: ok / bad, a temporary folder removed on exit,
# expect_error for the one-line "vkf: ..." errors every subcommand gives on bad input, and
# edit_checkpoint for the bad-configuration variants of a checkpoint.
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

# edit_checkpoint SRC DST PYTHON-EDIT [TENSOR]: DST becomes a copy of the checkpoint folder SRC
# whose config.json went through PYTHON-EDIT (statements on `c`, the config dict) and, with
# TENSOR, whose model.safetensors no longer has that tensor (renamed TENSOR.gone).
edit_checkpoint() {
  rm -rf "$2" && cp -r "$1" "$2"
  python3 - "$2" "$3" "${4:-}" <<'PY'
import json, os, struct, sys
d, edit, drop = sys.argv[1], sys.argv[2], sys.argv[3]
c = json.load(open(os.path.join(d, "config.json")))
exec(edit)
json.dump(c, open(os.path.join(d, "config.json"), "w"))
if drop:
    p = os.path.join(d, "model.safetensors")
    raw = open(p, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    head = json.loads(raw[8:8 + n])
    head[drop + ".gone"] = head.pop(drop)
    h = json.dumps(head).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    open(p, "wb").write(struct.pack("<Q", len(h)) + h + raw[8 + n:])
PY
}

# profile_caps PROFILE: the chosen device's caps (vkf devices --json) under a device profile,
# without the profile's name, on one line (tests/cli/gpu_class.sh compares two).
profile_caps() {
  VKF_DEVICE_PROFILE=$1 "$VKF" devices --json | python3 -c '
import json, sys
for d in json.load(sys.stdin):
    if d["chosen"]:
        d.pop("profile")
        print(json.dumps(d, sort_keys=True))'
}

# in_base_run: false in ctest's gpu-class reruns (tests/cli/gpu_class.sh sets
# VKF_GPU_CLASS_RERUN), which leave out the parts that set VKF_DEVICE_PROFILE themselves (mobile):
# those override the rerun's profile and repeat the base run's work exactly. A script run by hand
# or by another lane under a profile keeps them.
in_base_run() { [ -z "${VKF_GPU_CLASS_RERUN:-}" ]; }

vkf_summary() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
