#!/usr/bin/env bash
# vkf generate with beam search against transformers 4.38.2's generate(num_beams > 1,
# use_cache=True) (tools/goldens/make_decoder_beam_golden.py) on the tiny GPT-2 and Llama checkpoints:
# length_penalty, early_stopping true / "never", no_repeat_ngram_size, repetition_penalty,
# min_new_tokens with two eos ids, batches of left-padded prompts; the settings come from a
# generation_config.json beside a copy of the checkpoint (num_beams once from --num-beams), and
# every source's sequence must equal Hugging Face's, its score within 1e-4. Then bad input.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
G=tests/models/golden/decoder_beam/cases.json
D=tests/models/data

count=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' $G)
for ((i = 0; i < count; i++)); do
  # The case's folder, generation_config.json and command line (num_beams through the flag for
  # the first case of each model, from the file for the others).
  args=$(python3 - "$G" "$i" "$tmp/case$i" "$D" <<'PY'
import json, os, shutil, sys
cases, i, folder, data = json.load(open(sys.argv[1])), int(sys.argv[2]), sys.argv[3], sys.argv[4]
c = cases[i]
shutil.copytree(os.path.join(data, c["model"]), folder)
config = dict(c["generation_config"])
flag = []
if c["name"].endswith("_beams4"):
    flag = ["--num-beams", str(config.pop("num_beams"))]
json.dump(config, open(os.path.join(folder, "generation_config.json"), "w"))
ids = sum([["--ids", ",".join(map(str, p))] for p in c["prompts"]], [])
print(" ".join(ids + flag + ["--max-new-tokens", str(c["max_new_tokens"])]))
PY
  )
  name=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[int(sys.argv[2])]["name"])' $G $i)
  # shellcheck disable=SC2086
  if ! "$VKF" generate --model "$tmp/case$i" $args --json >"$tmp/out$i.json" 2>"$tmp/err"; then
    bad "$name: $(cat "$tmp/err")"
    continue
  fi
  python3 - "$G" "$i" "$tmp/out$i.json" <<'PY' && ok || bad "$name"
import json, sys
c = json.load(open(sys.argv[1]))[int(sys.argv[2])]
rows = json.load(open(sys.argv[3]))
rows = rows if isinstance(rows, list) else [rows]
longest = max(len(p) for p in c["prompts"])
pad = c["generation_config"]["pad_token_id"]
assert len(rows) == len(c["prompts"]), rows
for k, (row, want, score) in enumerate(zip(rows, c["sequences"], c["scores"])):
    got = row["generated_ids"] + [pad] * (len(want) - longest - len(row["generated_ids"]))
    if row["prompt_ids"] != c["prompts"][k] or got != want[longest:]:
        sys.exit("%s prompt %d: %s, HF %s" % (c["name"], k, row["generated_ids"], want[longest:]))
    if abs(row["sequence_score"] - score) > 1e-4:
        sys.exit("%s prompt %d: score %g, HF %g" % (c["name"], k, row["sequence_score"], score))
PY
done
grep -q "beams, .* row-tokens/s" "$tmp/err" && ok || bad "no speed line: $(cat "$tmp/err")"

# The fp16 cache reorders f16 rows: the same sequence as f32 on the first case.
"$VKF" generate --model "$tmp/case1" --ids 1,17,200,45,99,3,250,7 --max-new-tokens 12 --cache-fp16 --json >"$tmp/c16.json" 2>"$tmp/err" &&
  python3 -c 'import json, sys; a, b = (json.load(open(f))["generated_ids"] for f in sys.argv[1:]); assert a == b, (a, b)' "$tmp/c16.json" "$tmp/out1.json" &&
  ok || bad "fp16 cache: $(cat "$tmp/err" "$tmp/c16.json")"

# Bad input.
P=1,17,200,45
cp -r $D/gpt2_tiny "$tmp/talk" && cp $D/gpt2/tokenizer.json "$tmp/talk/"
# A model computing NaN logits (a NaN final norm) stops with that said: no token 0, no bare nan.
python3 tests/cli/poison_checkpoint.py $D/llama_tiny "$tmp/nan_llama" model.norm.weight
expect_error generate "NaN logits, beams" "generation step 0: the model's logit for id 0 (row 0) is NaN" --model "$tmp/nan_llama" --ids $P --num-beams 2 --json
expect_error generate "NaN logits, greedy" "generation step 0: the model's logit for id 0 (row 0) is NaN" --model "$tmp/nan_llama" --ids $P --greedy --json
expect_error generate "beams with --stop" "\-\-stop does not combine with 4 beams" --model "$tmp/talk" --ids $P --num-beams 4 --stop x
expect_error generate "beams with sampling" "sampling (do_sample, --temperature, --top-k, --top-p) does not combine with 3 beams (--greedy turns it off)" --model $D/llama_tiny --ids $P --num-beams 3 --temperature 0.7
expect_error generate "beams with --save-logits" "save-logits does not combine" --model $D/llama_tiny --ids $P --num-beams 2 --save-logits "$tmp/x.npy"
mkdir -p "$tmp/nopad" && cp $D/llama_tiny/config.json $D/llama_tiny/model.safetensors "$tmp/nopad/" && echo '{"num_beams": 2}' >"$tmp/nopad/generation_config.json"
expect_error generate "batch without a pad id" "prompts of different lengths need a pad_token_id" --model "$tmp/nopad" --ids 1,2,3 --ids 1,2 --ignore-eos
echo '{"num_beams": 2, "early_stopping": "sometimes"}' >"$tmp/nopad/generation_config.json"
expect_error generate "bad early_stopping" "generation_config.json: field \"early_stopping\" must be true, false or \"never\"" --model "$tmp/nopad" --ids 1,2,3
"$VKF" generate --model $D/llama_tiny --ids $P --num-beams 0 >/dev/null 2>&1
[ $? -eq 2 ] && ok || bad "--num-beams 0: exit status"

vkf_summary
