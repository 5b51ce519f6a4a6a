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

VK_ICD_FILENAMES=/nonexistent VK_DRIVER_FILES=/nonexistent VKF_VALIDATE=0 "$VKF" devices >"$tmp/out" 2>"$tmp/err"; rc=$?
ok "no driver: non-zero exit" '[ $rc -ne 0 ]'
ok "no driver: one line on stderr" '[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "^vkf: no Vulkan" "$tmp/err"'
ok "no driver: nothing on stdout" '[ ! -s "$tmp/out" ]'

VKF_DEVICE_PROFILE=phone "$VKF" devices >"$tmp/out" 2>"$tmp/err"; rc=$?
ok "unknown profile: error naming it" '[ $rc -ne 0 ] && grep -q "unknown device profile \"phone\"" "$tmp/err"'
"$VKF" devices --device no-such-gpu >"$tmp/out" 2>"$tmp/err"; rc=$?
ok "unknown device: error listing devices" '[ $rc -ne 0 ] && grep -q "no device matches \"no-such-gpu\" (devices: 0: " "$tmp/err"'

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
