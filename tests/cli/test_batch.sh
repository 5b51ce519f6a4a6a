#!/usr/bin/env bash
# Any batch on any device (issue #18 item 8): under VKF_DEVICE_PROFILE=tiny-buffers (64 KiB
# storage bindings and allocations) the tiny checkpoints' batches need several runs; classify,
# embed and forward (bert_tiny, vit_tiny, gpt2_tiny) must give every row what it gets when run
# alone (within 1e-6) and what the whole batch gets in one run on the real caps; the split shows
# in `vkf dump --stage plan` and in the info log; a row that alone exceeds a limit is a one-line
# error naming the node and the limit. The validation layer is on (VKF_VALIDATE=1 from ctest).
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
npy="python3 tests/cli/npy_tool.py"
D=tests/models/data
small() { VKF_DEVICE_PROFILE=tiny-buffers VKF_LOG=2 "$VKF" "$@"; }

# compare NAME GOT WANT ATOL
compare() {
  if out=$($npy compare "$2" "$3" "$4"); then ok; else bad "$1: $out"; fi
}
# split_shown NAME: the info log of the last small run says the batch ran as several runs.
split_shown() {
  if grep -q "info: .*: batch [0-9]*: [0-9]* runs of [0-9]* rows.*; the whole batch exceeds: .*over the device's" "$tmp/err"; then
    ok
  else bad "$1: no split in the log: $(cat "$tmp/err")"; fi
}

# forward_case NAME MODEL INPUT ROWS OUTPUT ARGS...: the batch in $tmp/NAME_in.npy run split
# (tiny-buffers), whole (real caps) and row by row (real caps); output OUTPUT compared.
forward_case() {
  local name=$1 model=$2 input=$3 rows=$4 output=$5
  local in="$tmp/${name}_in.npy"
  if small forward --model "$model" --in "$input=$in" --out "$output=$tmp/${name}_split.npy" 2>"$tmp/err"; then
    ok
    split_shown "$name"
  else bad "$name split forward: $(cat "$tmp/err")"; return; fi
  if "$VKF" forward --model "$model" --in "$input=$in" --out "$output=$tmp/${name}_whole.npy" 2>"$tmp/err"; then
    compare "$name split vs one run" "$tmp/${name}_split.npy" "$tmp/${name}_whole.npy" 1e-6
  else bad "$name whole forward: $(cat "$tmp/err")"; fi
  local alone=()
  for ((i = 0; i < rows; i++)); do
    $npy rows "$in" $i 1 "$tmp/${name}_row$i.npy"
    if ! "$VKF" forward --model "$model" --in "$input=$tmp/${name}_row$i.npy" \
      --out "$output=$tmp/${name}_alone$i.npy" 2>"$tmp/err"; then
      bad "$name row $i alone: $(cat "$tmp/err")"
      return
    fi
    alone+=("$tmp/${name}_alone$i.npy")
  done
  $npy stack "$tmp/${name}_alone.npy" "${alone[@]}"
  compare "$name split vs each row alone" "$tmp/${name}_split.npy" "$tmp/${name}_alone.npy" 1e-6
}

# Token ids: 6 rows of 32, every row different (bert_tiny: 219 ids; gpt2_tiny: 256). Big nodes
# are sliced; the arena (20 KiB per row in bert_tiny, 40 KiB in gpt2_tiny) and vit_tiny's 12 KiB
# of pixels per row outgrow 64 KiB allocations, so each batch runs as 2 to 6 runs.
ids() { # VOCAB OUT
  local v=() r t
  for ((r = 0; r < 6; r++)); do for ((t = 0; t < 32; t++)); do v+=($(((r * 37 + t * 11 + 5) % $1))); done; done
  $npy ints "$2" 6,32 "$(IFS=,; echo "${v[*]}")"
}
ids 219 "$tmp/bert_in.npy"
forward_case bert "$D/bert_tiny" input_ids 6 logits
ids 256 "$tmp/gpt2_in.npy"
forward_case gpt2 "$D/gpt2_tiny" input_ids 6 logits
$npy write "$tmp/vit_in.npy" 6,3,32,32 7
forward_case vit "$D/vit_tiny" pixel_values 6 logits

# classify: 12 images in 3 runs of 4 rows, each image's logits as alone.
images=(assets/images/*.jpg)
batch=("${images[@]}" "${images[@]}" "${images[@]}")
if small classify --model "$D/vit_tiny" --save-logits "$tmp/cls_split.npy" "${batch[@]}" >"$tmp/cls_split.txt" 2>"$tmp/err"; then
  ok
  split_shown classify
  grep -q "batch 12: 3 runs of 4 rows" "$tmp/err" && ok || bad "classify split: $(cat "$tmp/err")"
  alone=()
  for img in "${batch[@]}"; do
    n=$(basename "$img" .jpg)
    [ -f "$tmp/cls_$n.npy" ] || "$VKF" classify --model "$D/vit_tiny" --save-logits "$tmp/cls_$n.npy" "$img" >/dev/null 2>&1 ||
      bad "classify $img alone"
    alone+=("$tmp/cls_$n.npy")
  done
  $npy stack "$tmp/cls_alone.npy" "${alone[@]}"
  compare "classify split vs each image alone" "$tmp/cls_split.npy" "$tmp/cls_alone.npy" 1e-6
  "$VKF" classify --model "$D/vit_tiny" "${batch[@]}" >"$tmp/cls_whole.txt" 2>/dev/null
  cmp -s "$tmp/cls_split.txt" "$tmp/cls_whole.txt" && ok || bad "classify split and whole print differently"
else bad "classify split: $(cat "$tmp/err")"; fi

# embed (bert_tiny, mean pooling over the mask): 10 texts of different lengths, padded together.
texts=()
for ((i = 0; i < 10; i++)); do
  words=""
  for ((w = 0; w <= i % 7; w++)); do words+=" the cat $((i * 3 + w)) sat"; done
  texts+=("text $i:$words.")
done
if small embed --model "$D/bert_tiny" --json "${texts[@]}" >"$tmp/emb_split.json" 2>"$tmp/err"; then
  ok
  split_shown embed
  for ((i = 0; i < 10; i++)); do
    "$VKF" embed --model "$D/bert_tiny" --json "${texts[$i]}" >"$tmp/emb_alone$i.json" 2>"$tmp/err" ||
      bad "embed text $i alone: $(cat "$tmp/err")"
  done
  if out=$(python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
split = json.load(open(tmp + "/emb_split.json"))["embeddings"]
worst = 0.0
for i, e in enumerate(split):
    alone = json.load(open("%s/emb_alone%d.json" % (tmp, i)))["embeddings"][0]
    assert alone["text"] == e["text"] and alone["tokens"] == e["tokens"], i
    worst = max([worst] + [abs(a - b) for a, b in zip(e["embedding"], alone["embedding"])])
if worst > 1e-6:
    sys.exit("max |diff| %g" % worst)
PY
  ); then ok; else bad "embed split vs each text alone: $out"; fi
else bad "embed split: $(cat "$tmp/err")"; fi

# dump --stage plan shows the split the runs use (and one run on the real caps).
VKF_DEVICE_PROFILE=tiny-buffers "$VKF" dump --model "$D/vit_tiny" --stage plan --batch 12 >"$tmp/plan.txt" 2>"$tmp/err"
grep -q "^batch split: batch 12: 3 runs of 4 rows; the whole batch exceeds: .* [0-9]* bytes, over the device's max[A-Za-z]* (65536 bytes)$" "$tmp/plan.txt" &&
  grep -Eq "^plan: [0-9]+ buffers, [0-9]+ dispatches, [0-9]+ barriers$" "$tmp/plan.txt" && ok ||
  bad "dump split: $(head -3 "$tmp/plan.txt") $(cat "$tmp/err")"
"$VKF" dump --model "$D/vit_tiny" --stage plan --batch 12 >"$tmp/plan1.txt" 2>"$tmp/err"
grep -q "^batch split: batch 12: 1 run" "$tmp/plan1.txt" && ok || bad "dump one run: $(head -1 "$tmp/plan1.txt")"

# One row that alone exceeds a limit: llama_tiny (rotary positions, any length) at 300 tokens,
# whose embedded row is 75 KiB (a gather of one sequence is not sliced), and bert_tiny at 128
# tokens, whose arena is 80 KiB: errors naming the node or buffer and the limit.
v=()
for ((t = 0; t < 300; t++)); do v+=($(((t * 7 + 3) % 256))); done
$npy ints "$tmp/long.npy" 2,300 "$(IFS=,; echo "${v[*]},${v[*]}")"
export VKF_DEVICE_PROFILE=tiny-buffers
expect_error forward "one row too big" "even one batch row exceeds the device's limits: node \".*\" (.*): binding [0-9] spans [0-9]* bytes, over the device's maxStorageBufferRange (65536 bytes)" \
  --model "$D/llama_tiny" --in input_ids="$tmp/long.npy" --out logits="$tmp/long_out.npy"
v=()
for ((t = 0; t < 128; t++)); do v+=($(((t * 7 + 3) % 219))); done
$npy ints "$tmp/long_bert.npy" 1,128 "$(IFS=,; echo "${v[*]}")"
expect_error forward "one row's arena too big" "even one batch row exceeds the device's limits: plan buffer \"arena\": [0-9]* bytes, over the device's maxMemoryAllocationSize (65536 bytes)" \
  --model "$D/bert_tiny" --in input_ids="$tmp/long_bert.npy" --out logits="$tmp/long_out.npy"
# generate does not split its prompts: 12 prompts that do not fit are one clear line too.
prompts=()
for ((i = 0; i < 12; i++)); do prompts+=(--ids "$(seq -s, 3 40)"); done
expect_error generate "prefill of many prompts" "over\|exceed.* the device's max[A-Za-z]*" \
  --model "$D/gpt2_tiny" "${prompts[@]}" --max-new-tokens 2 --greedy
unset VKF_DEVICE_PROFILE

# Batches of 10^8 rows split (or fail) in moments and within bounded memory: the split is probed
# from below, and a bench allocates its inputs only once the plan fits. Peak RSS of the children
# through getrusage (no timing: the 60 s bound only turns a hang into a failure).
python3 - "$VKF" <<'PY' && ok || bad "huge batches: see above"
import resource, subprocess, sys
vkf = sys.argv[1]
def run(args, want_rc, needle):
    p = subprocess.run([vkf] + args, capture_output=True, text=True, timeout=60)
    assert p.returncode == want_rc and needle in p.stdout + p.stderr, (args, p.returncode, p.stderr[-400:])
run(["dump", "--model", "tests/models/data/bert_tiny", "--stage", "plan", "--batch", "100000000"], 0,
    "batch split: batch 100000000: ")
run(["dump", "--model", "tests/models/data/vit_tiny", "--stage", "plan", "--batch", "100000000"], 0,
    "rows exceed: ")
run(["bench", "model", "--model", "tests/models/data/vit_tiny", "--batch", "1000000", "--runs", "1"], 1,
    "over the device's")
rss_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
assert rss_kib < 1 << 20, "a child peaked at %d MiB" % (rss_kib >> 10)
PY

vkf_summary
