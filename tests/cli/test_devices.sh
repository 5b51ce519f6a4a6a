#!/usr/bin/env bash
# vkf devices: the table, --json, the mobile profile's clamped caps, and one clear line (non-zero
# exit) when no driver is reachable or a selector matches nothing.
set -u
pass=0 fail=0
ok() { if eval "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

"$VKF" devices >"$tmp/out" 2>"$tmp/err"; rc=$?
ok "devices exits 0" '[ $rc -eq 0 ]'
ok "table names the device" 'grep -q "device 0: " "$tmp/out"'
ok "table shows shared memory" 'grep -q "max shared memory" "$tmp/out"'
ok "no validation messages" '[ ! -s "$tmp/err" ]'

"$VKF" devices --json >"$tmp/json"; rc=$?
ok "--json exits 0" '[ $rc -eq 0 ]'
ok "--json parses" 'python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d[0][\"max_shared_memory_size\"] > 0" "$tmp/json"'

VKF_DEVICE_PROFILE=mobile "$VKF" devices --json >"$tmp/mobile"; rc=$?
ok "mobile profile exits 0" '[ $rc -eq 0 ]'
ok "mobile clamps caps" 'python3 -c "import json,sys; d=json.load(open(sys.argv[1]))[0]; assert d[\"max_shared_memory_size\"] <= 16384 and d[\"max_workgroup_invocations\"] <= 128 and not d[\"fp16_arithmetic\"] and \"arithmetic\" not in d[\"subgroup_ops\"] and d[\"profile\"] == \"mobile\"" "$tmp/mobile"'
VKF_DEVICE_PROFILE=mobile "$VKF" devices >"$tmp/mobile.txt"
ok "table shows the profile" 'grep -q "profile .*mobile" "$tmp/mobile.txt"'

# How subgroup kernels get their size: required of each pipeline where the device can; where
# Mesa 22.3's lavapipe reports 32-wide subgroups at 1024-bit vectors and runs 16, the measured
# width and no guarantee (the chosen device is opened and probed).
"$VKF" devices >"$tmp/sg.txt"
ok "table: kernels' subgroup size" 'grep -Eq "kernels run at +[0-9]+, (required of each subgroup pipeline|the device.s only size)" "$tmp/sg.txt"'
LP_NATIVE_VECTOR_WIDTH=1024 "$VKF" devices --json >"$tmp/sg1024.json"
ok "1024-bit lavapipe: measured 16, reported 32" 'python3 -c "import json,sys; d=[x for x in json.load(open(sys.argv[1])) if x[\"chosen\"]][0]; assert (d[\"subgroup_size\"], d[\"subgroup_misreported\"], d[\"subgroup_size_fixed\"]) == (16, 32, 0), d" "$tmp/sg1024.json"'

VK_ICD_FILENAMES=/nonexistent VK_DRIVER_FILES=/nonexistent VKF_VALIDATE=0 "$VKF" devices >"$tmp/out" 2>"$tmp/err"; rc=$?
ok "no driver: non-zero exit" '[ $rc -ne 0 ]'
ok "no driver: one line on stderr" '[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "^vkf: no Vulkan" "$tmp/err"'
ok "no driver: nothing on stdout" '[ ! -s "$tmp/out" ]'

VKF_DEVICE_PROFILE=phone "$VKF" devices >"$tmp/out" 2>"$tmp/err"; rc=$?
ok "unknown profile: error naming it" '[ $rc -ne 0 ] && grep -q "unknown device profile \"phone\"" "$tmp/err"'
"$VKF" devices --device no-such-gpu >"$tmp/out" 2>"$tmp/err"; rc=$?
ok "unknown device: error listing devices" '[ $rc -ne 0 ] && grep -q "no device matches \"no-such-gpu\" (devices: 0: " "$tmp/err"'

# Strict selectors: a negative index or an empty one is a clear error, never a wrapped index or
# a silent device 0.
"$VKF" devices --device -1 >"$tmp/out" 2>"$tmp/err"; rc=$?
ok "negative device index: one clear line" '[ $rc -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "^vkf: device index -1 is negative" "$tmp/err"'
"$VKF" devices --device '' >"$tmp/out" 2>"$tmp/err"; rc=$?
ok "empty device selector: error" '[ $rc -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "^vkf: empty device selector" "$tmp/err"'
"$VKF" devices --device 99999999999999999999 >"$tmp/out" 2>"$tmp/err"; rc=$?
ok "huge device index: out of range, as given" '[ $rc -eq 1 ] && grep -q "^vkf: device index 99999999999999999999 out of range (devices: 0: " "$tmp/err"'
"$VKF" devices --device +0 >"$tmp/out" 2>"$tmp/err"; rc=$?
ok "signed index is not an index" '[ $rc -eq 1 ] && grep -q "no device matches \"+0\"" "$tmp/err"'

# Invalid switch values: one warning line each on stderr naming the variable, the value and the
# accepted ones; nothing on stdout but the normal output.
VKF_LOG=x VKF_DUMP=foo VKF_NO_FUSE=attention,bogus VKF_VALIDATE=yes "$VKF" devices --json >"$tmp/out" 2>"$tmp/err"; rc=$?
ok "bad switches: still runs, JSON intact" '[ $rc -eq 0 ] && python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/out"'
ok "bad switches: four warnings" '[ "$(grep -c "^vkf: warning: VKF_" "$tmp/err")" -eq 4 ]'
ok "VKF_LOG warning" 'grep -q "^vkf: warning: VKF_LOG=\"x\" is not valid (accepted: 0 error" "$tmp/err"'
ok "VKF_DUMP warning" 'grep -q "^vkf: warning: VKF_DUMP=\"foo\" is not valid (accepted: passes" "$tmp/err"'
ok "VKF_NO_FUSE warning" 'grep -q "^vkf: warning: VKF_NO_FUSE=\"attention,bogus\" is not valid (accepted: .*gemm" "$tmp/err"'
ok "VKF_VALIDATE warning" 'grep -q "^vkf: warning: VKF_VALIDATE=\"yes\" is not valid (accepted: 0, 1, 2" "$tmp/err"'
VKF_LOG=3 VKF_NO_FUSE=attention,gemm VKF_DUMP=passes VKF_DUMP_DIR="$tmp" VKF_VALIDATE=0 "$VKF" devices >/dev/null 2>"$tmp/err"
ok "valid switches: no warning" '! grep -q "warning: VKF_" "$tmp/err"'

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
