#!/usr/bin/env bash
# `--quantize FORMAT` (tools/goldens/make_quantize_goldens.py): a checkpoint run with its linear
# weights quantised at load gives the ids and logits of its twin, the same checkpoint whose
# weights the reference quantised and dequantised (the gguf package; ggml's C for Q4_K) and saved
# as F32. Which weights are quantised, in which format (Q4_K's Q5_0 fallback, rows of neither kept
# float, GPT-2's Conv1D transposed, cross attention's Q, K and V kept float) and their values are
# the twin's; the kernels read the blocks against the twin's F32. Every family once: Llama (F32 and
# F16 files), GPT-2, BERT, ViT, BART. Bad names are one "vkf: ..." line.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
D=tests/models/data
Q=$D/quantize
IDS=1,5,9,100,17,3,64

# compare NAME A.npy B.npy: equal up to the order of the sums (the quantised kernels scale each
# block's products once; the twin's GEMM multiplies every weight): 2e-5 of the largest |value|,
# at least 1e-5.
compare() {
  python3 - "$@" <<'PY'
import struct, sys
name, a, b = sys.argv[1:]
def npy(path):
    data = open(path, "rb").read()
    hlen = struct.unpack("<H", data[8:10])[0]
    return struct.unpack("<%df" % ((len(data) - 10 - hlen) // 4), data[10 + hlen:])
x, y = npy(a), npy(b)
scale = max(abs(v) for v in y)
worst = max(abs(p - q) for p, q in zip(x, y))
if len(x) != len(y) or worst > max(1e-5, 2e-5 * scale):
    sys.exit("%s: differ by %g (largest |value| %g)" % (name, worst, scale))
PY
}

gen_pair() { # MODEL FORMAT: generate with --quantize against the twin
  local m=$1 f=$2 name twin
  name="$(basename "$m") $f"
  twin=$Q/$(basename "$m")_${f}_twin
  "$VKF" generate --model "$m" --quantize "$f" --ids $IDS --greedy --ignore-eos \
    --max-new-tokens 12 --json --save-logits "$tmp/q.npy" >"$tmp/q.json" 2>"$tmp/qerr" ||
    { bad "$name: $(cat "$tmp/qerr")"; return; }
  "$VKF" generate --model "$twin" --ids $IDS --greedy --ignore-eos --max-new-tokens 12 --json \
    --save-logits "$tmp/t.npy" >"$tmp/t.json" 2>"$tmp/err" || { bad "$name twin: $(cat "$tmp/err")"; return; }
  if cmp -s "$tmp/q.json" "$tmp/t.json"; then ok; else bad "$name ids: $(cat "$tmp/q.json") twin $(cat "$tmp/t.json")"; fi
  if compare "$name logits" "$tmp/q.npy" "$tmp/t.npy"; then ok; else bad "$name logits"; fi
}

gen_pair $D/llama_tiny q8_0
gen_pair $D/llama_tiny q4_k # 64 wide: every weight falls back to Q5_0
# ... and the user is told, in one line, which format those weights got instead
grep -qx "vkf generate: --quantize q4_k: 9 linear weights whose rows are not a multiple of 256 use q5_0 instead" "$tmp/qerr" &&
  ok || bad "q4_k fallback not said: $(cat "$tmp/qerr")"
gen_pair $Q/llama_w256 q4_k # F16 file, 256 wide: real Q4_K
# (no fallback there: nothing to say)
grep -q "instead" "$tmp/qerr" && bad "llama_w256 q4_k: $(cat "$tmp/qerr")" || ok
gen_pair $D/gpt2_tiny q4_0
# its weights whose rows are not whole 32-blocks stay float, and that is said too
grep -qx "vkf generate: --quantize q4_0: 6 linear weights whose rows are not a multiple of 32 stay float" "$tmp/qerr" &&
  ok || bad "gpt2_tiny q4_0 kept float not said: $(cat "$tmp/qerr")"
gen_pair $Q/bart_w32 q8_0
gen_pair $Q/bart_w32 q5_0

fwd_pair() { # MODEL FORMAT OUTPUT IN...: forward with --quantize against the twin
  local m=$1 f=$2 out=$3 name twin
  shift 3
  name="$(basename "$m") $f"
  twin=$Q/$(basename "$m")_${f}_twin
  local ins=()
  for i in "$@"; do ins+=(--in "$i"); done
  "$VKF" forward --model "$m" --quantize "$f" "${ins[@]}" --out "$out=$tmp/q.npy" 2>"$tmp/err" ||
    { bad "$name: $(cat "$tmp/err")"; return; }
  "$VKF" forward --model "$twin" "${ins[@]}" --out "$out=$tmp/t.npy" 2>"$tmp/err" ||
    { bad "$name twin: $(cat "$tmp/err")"; return; }
  if compare "$name $out" "$tmp/q.npy" "$tmp/t.npy"; then ok; else bad "$name $out"; fi
}

F=tests/models/golden/forward
fwd_pair $D/bert_tiny q4_1 logits input_ids=$F/bert_tiny_input_ids.npy \
  attention_mask=$F/bert_tiny_attention_mask.npy token_type_ids=$F/bert_tiny_token_type_ids.npy
fwd_pair $D/vit_tiny q5_1 logits pixel_values=tests/models/golden/vit/vit_tiny_pixel_values.npy

# The plan keeps the blocks: a quantised weight is a constant of the format asked for; the token
# table is not quantised (it stays the file's F16)
"$VKF" dump --model $Q/llama_w256 --quantize Q4_K >"$tmp/dump" 2>"$tmp/err" || bad "dump: $(cat "$tmp/err")"
if grep -q '"model.layers.0.mlp.down_proj.weight" q4_k \[256,256\]' "$tmp/dump" &&
  grep -q '"model.embed_tokens.weight" f16' "$tmp/dump"; then ok; else bad "dump: $(grep weight "$tmp/dump" | head -3)"; fi

# The formats made, where the model is summed up: vkf bench generate's JSON and header line
"$VKF" bench generate --model $D/llama_tiny --quantize q4_k --prompt-len 4 --gen 2 --runs 1 --warmup 0 \
  --json >"$tmp/bench.json" 2>"$tmp/err" &&
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["quantize"] == "q4_k" and d["quantized"] == {"q5_0": 9}, d' \
    "$tmp/bench.json" && ok || bad "bench generate --json quantized: $(cat "$tmp/bench.json" "$tmp/err")"
"$VKF" bench generate --model $Q/llama_w256 --quantize q4_k --prompt-len 4 --gen 2 --runs 1 --warmup 0 \
  >"$tmp/bench.md" 2>"$tmp/err" && grep -q "linear ones q4_k (made: q4_k 5)" "$tmp/bench.md" &&
  ok || bad "bench generate header: $(head -2 "$tmp/bench.md") $(cat "$tmp/err")"

# ... and by vkf classify (which opens its ViT itself), after its results
"$VKF" classify --model $D/vit_tiny --quantize q4_k --top 1 \
  --pixel-values tests/models/golden/vit/vit_tiny_pixel_values.npy >/dev/null 2>"$tmp/err" &&
  grep -qx "vkf classify: --quantize q4_k: 8 linear weights whose rows are not a multiple of 256 use q5_0 instead" "$tmp/err" &&
  ok || bad "classify q4_k fallback: $(cat "$tmp/err")"
# ... and vkf serve's information line for the model
mkdir -p "$tmp/talk" && cp $D/gpt2_tiny/* $D/gpt2/tokenizer.json "$tmp/talk/"
"$VKF" serve --model "$tmp/talk" --port 0 --quantize q4_k >/dev/null 2>"$tmp/serve.err" &
spid=$!
for _ in $(seq 300); do grep -q "slots of" "$tmp/serve.err" && break; kill -0 $spid 2>/dev/null || break; sleep 0.2; done
kill -TERM $spid 2>/dev/null
wait $spid
grep -q "^talk on device 0: 4 slots of [0-9]* positions; --quantize q4_k made q5_0 2, float 6$" "$tmp/serve.err" &&
  ok || bad "serve --quantize line: $(cat "$tmp/serve.err")"

# A GGUF already quantised is refused: its blocks would run as they are (vkformer quantises float
# weights only), not in the format asked for; an F16 GGUF is quantised as any float file
expect_error generate "re-quantising a Q4_0 GGUF" \
  "--quantize q8_0: .*llama_tiny_q4_0.gguf is already quantised (16 tensors in ggml blocks, GGML_Q4_0 the first)" \
  --model $D/gguf/llama_tiny_q4_0.gguf --quantize q8_0 --ids 1,2 --max-new-tokens 2
"$VKF" generate --model $D/gguf/llama_tiny_f16.gguf --quantize q8_0 --ids 1,2 --max-new-tokens 2 \
  >/dev/null 2>"$tmp/err" && ok || bad "F16 GGUF --quantize q8_0: $(cat "$tmp/err")"
"$VKF" generate --model $D/gguf/llama_tiny_q4_0.gguf --quantize none --ids 1,2 --max-new-tokens 2 \
  >/dev/null 2>"$tmp/err" && ok || bad "Q4_0 GGUF --quantize none: $(cat "$tmp/err")"

# an unknown or empty format is a usage error (exit 2, as docs/cli.md says), before the model loads
for args in "generate --quantize q3_k" "forward --quantize f16" "generate --quantize ''" "embed --quantize q9"; do
  eval "\"\$VKF\" $args --model $tmp/no-model --ids 1,2" >/dev/null 2>"$tmp/err"
  rc=$?
  [ $rc -eq 2 ] && grep -q "invalid value .* for --quantize: want q8_0, q4_0, q4_1, q5_0, q5_1, q4_k or none" "$tmp/err" &&
    ok || bad "$args: exit $rc: $(cat "$tmp/err")"
done

vkf_summary
