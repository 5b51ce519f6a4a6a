#!/usr/bin/env bash
# vkf bench generate's decode-step anatomy on the tiny Llama (batch 1 and 2): the dispatches and
# barriers of the plan, and per step the submits, host waits, bytes written and read back, which
# the device counts as they happen: one submit and one wait a step (the small inputs are written
# into mapped memory, never a submission of their own) and greedy's ids taken on the device, 4
# bytes read back a row (the bench's warm-up checks them against the host's argmax of the
# logits); --profile adds the step's GPU time from timestamps, and without it none is taken.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
model=tests/models/data/llama_tiny
# field FILE NAME: a number of the one-line JSON
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }
for b in 1 2; do
  for prof in "" --profile; do
    out=$tmp/b$b$prof.json
    if "$VKF" bench generate --model $model --prompt-len 8 --gen 4 --runs 1 --batch $b $prof --json \
      >"$out" 2>"$tmp/err"; then ok; else bad "batch $b $prof: $(cat "$tmp/err")"; continue; fi
    python3 - "$out" "$b" "$prof" <<'PY' && ok || bad "batch $b $prof: $(cat "$out")"
import json, sys
r, b, prof = json.load(open(sys.argv[1])), int(sys.argv[2]), sys.argv[3]
assert r["layers"] == 2 and r["step_barriers"] > 0, r
# a layer: QKV (its RMSNorm in the GEMM's prologue), q and k rotary with both cache writes as one
# dispatch, attention, o_proj, gate+up as one GEMM (its RMSNorm in the prologue), down (silu(gate)
# ·up in its prologue): 6, each after a barrier; the gathers, last rows, final norm, head and
# argmax around them. Two rows on a CPU device run the two norms and silu(gate)·up as dispatches
# of their own (the prologues fold only at one row there: graph/passes/passes.h), 9 a layer;
# GPU-class devices fold up to 8 rows
assert r["step_dispatches"] <= (18 if b == 1 else 25), r
assert r["step_barriers"] <= (15 if b == 1 else 22), r
assert r["step_submits"] == 1 and r["step_host_waits"] == 1, r
# the step's small inputs: ids, positions, cache_start, kv_len, last_index (4 bytes each a row)
assert r["step_bytes_written"] == 20 * b, r
assert r["step_bytes_read_back"] == 4 * b, r
assert (r["step_gpu_ms"] > 0) == (prof == "--profile"), r
PY
  done
done
# --ragged: vkf serve's steps, 3 sequences as 3 token rows of one ragged plan; on a CPU device the
# three rows' norms and silu(gate)·up are dispatches of their own (9 a layer, + gathers, final
# norm, head); a model the ragged plans do not take, and --profile with it, are refused
if "$VKF" bench generate --model $model --prompt-len 8 --gen 4 --runs 1 --batch 3 --ragged --json \
  >"$tmp/rag.json" 2>"$tmp/err"; then
  python3 - "$tmp/rag.json" <<'PY' && ok || bad "--ragged: $(cat "$tmp/rag.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["ragged_rows"] == 3 and r["decode_tokens_per_s"] > 0 and r["prefill_tokens_per_s"] > 0, r
assert 0 < r["step_dispatches"] <= 25 and r["step_barriers"] <= r["step_dispatches"], r
PY
else bad "--ragged: $(cat "$tmp/err")"; fi
"$VKF" bench generate --model tests/models/data/mistral_tiny --gen 4 --runs 1 --ragged \
  >/dev/null 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && grep -q "takes no ragged rows" "$tmp/err" && ok || bad "--ragged, mistral: rc $rc: $(cat "$tmp/err")"
"$VKF" bench generate --model $model --ragged --profile >/dev/null 2>"$tmp/err"
rc=$?
[ $rc = 2 ] && grep -q "leave one out" "$tmp/err" && ok || bad "--ragged --profile: rc $rc: $(cat "$tmp/err")"
"$VKF" bench generate --model $model --prompt-len 8 --gen 4 --runs 1 >"$tmp/md" 2>"$tmp/err" &&
  grep -q "1.00 submits and 1.00 host waits; it writes 20 bytes of inputs and reads back 4 bytes" "$tmp/md" &&
  ! grep -q "GPU time per op kind" "$tmp/md" && ok || bad "markdown: $(cat "$tmp/md" "$tmp/err")"
# --fp16: the final norm and the head run in f32 (the last hidden state cast once), so the head's
# GEMM writes the f32 logits itself, with the norm in its prologue: no cast dispatch after the head
# (32 dispatches a step before, 31 now: + the cast, - the norm, - the logits' cast)
if "$VKF" bench generate --model $model --prompt-len 8 --gen 4 --runs 1 --fp16 --json >"$tmp/f16.json" \
  2>"$tmp/err"; then
  python3 - "$tmp/f16.json" <<'PY' && ok || bad "--fp16: $(cat "$tmp/f16.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["step_dispatches"] <= 31 and r["step_submits"] == 1, r
PY
else bad "--fp16: $(cat "$tmp/err")"; fi
"$VKF" dump --model $model --stage plan --fp16 --seq-len 1 >"$tmp/plan16" 2>"$tmp/err" ||
  bad "dump --fp16: $(cat "$tmp/err")"
grep -q '"lm_head" gemm.comp' "$tmp/plan16" && ! grep -q '"logits" copy.comp' "$tmp/plan16" &&
  ! grep '"lm_head" gemm.comp' "$tmp/plan16" | grep -q C_F16 && ok ||
  bad "--fp16 head: $(grep -E 'lm_head|logits' "$tmp/plan16")"
# the gated MLP's gate and up weights are one GEMM
"$VKF" dump --model $model --stage plan >"$tmp/plan" 2>"$tmp/err" || bad "dump: $(cat "$tmp/err")"
[ "$(grep -c 'mlp.up_proj.gate_up" gemm.comp' "$tmp/plan")" -eq 2 ] &&
  ! grep -q 'mlp.gate_proj" gemm.comp' "$tmp/plan" && ok || bad "gate+up: $(grep mlp "$tmp/plan")"
vkf_summary
