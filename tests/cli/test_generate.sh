#!/usr/bin/env bash
# vkf generate end to end against transformers 4.38's greedy generate(use_cache=True)
# (tools/goldens/make_decoder_golden.py): every architecture's 32 new tokens and every step's logits, a batch
# of prompts of different lengths giving each its tokens alone, the fp16 cache, f16 activations,
# streaming text through a tokenizer, and bad input as one "vkf: ..." line.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
G=tests/models/golden/decoder
D=tests/models/data
P0=$(sed -n 1p $G/generate_prompts.txt)
P1=$(sed -n 2p $G/generate_prompts.txt)
P2=$(sed -n 3p $G/generate_prompts.txt)

# check NAME JSON LOGITS|- ATOL GOLDEN_PREFIX INDEX...: the JSON's generated ids (one object or a
# batch array) equal the goldens of the prompts INDEX..., and the saved logits are within ATOL.
check() {
  python3 - "$@" <<'PY' && ok || bad "$1"
import json, struct, sys
name, doc, logits, atol, prefix = sys.argv[1:6]
def npy(path):
    data = open(path, "rb").read()
    hlen = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + hlen].decode()
    fmt = {"<f4": "f", "<i8": "q"}[header.split("'descr': '")[1].split("'")[0]]
    count = (len(data) - 10 - hlen) // struct.calcsize(fmt)
    return struct.unpack("<%d%s" % (count, fmt), data[10 + hlen:])
rows = json.load(open(doc))
rows = rows if isinstance(rows, list) else [rows]
for row, i in zip(rows, sys.argv[6:]):
    want = list(npy("%s_generate_%s.npy" % (prefix, i)))[:len(row["generated_ids"])]
    if row["generated_ids"] != want:
        sys.exit("%s prompt %s: ids %s, want %s" % (name, i, row["generated_ids"], want))
if logits != "-":
    got, want = npy(logits), npy("%s_generate_%s_logits.npy" % (prefix, sys.argv[6]))
    want = want[:len(got)]  # a shorter run checks the first steps
    worst = max(abs(a - b) for a, b in zip(got, want))
    if len(got) != len(want) or worst > float(atol):
        sys.exit("%s: logits differ by %g" % (name, worst))
PY
}
gen() { # model out.json [args...]
  local m=$1 out=$2
  shift 2
  "$VKF" generate --model $D/$m --greedy --ignore-eos --max-new-tokens 32 --json "$@" >"$out" 2>"$tmp/err" ||
    { bad "$m generate $*: $(cat "$tmp/err")"; return 1; }
}
for m in gpt2_tiny llama_tiny llama_tied mistral_tiny qwen2_tiny; do
  gen $m "$tmp/$m.json" --ids "$P0" --save-logits "$tmp/$m.npy" && check "$m" "$tmp/$m.json" "$tmp/$m.npy" 1e-4 $G/$m 0
done
grep -q "generation .* tokens/s" "$tmp/err" && ok || bad "no speed line: $(cat "$tmp/err")"

# One batch of three prompts of different lengths: each row gets the tokens it gets alone.
for m in gpt2_tiny llama_tiny mistral_tiny; do
  gen $m "$tmp/batch.json" --ids "$P0" --ids "$P1" --ids "$P2" && check "$m batch" "$tmp/batch.json" - 0 $G/$m 0 1 2
done

# Chunked prefill: prompts longer than a chunk run in chunks against the cache (with the sliding
# window across chunk edges for Mistral); every row of a batch still gets its own tokens.
for m in llama_tiny mistral_tiny gpt2_tiny; do
  gen $m "$tmp/chunk.json" --ids "$P2" --chunk 3 --save-logits "$tmp/chunk.npy" && check "$m chunked" "$tmp/chunk.json" "$tmp/chunk.npy" 1e-4 $G/$m 2
done
gen qwen2_tiny "$tmp/cb.json" --ids "$P0" --ids "$P1" --ids "$P2" --chunk 4 && check "chunked batch" "$tmp/cb.json" - 0 $G/qwen2_tiny 0 1 2

# The fp16 cache (f32 activations), and f16 weights and activations: the same tokens and logits
# within the stated tolerances (fp16 keys and values round to 11 bits); with f16 activations
# greedy decoding drifts from the fp32 reference after about 25 tokens, so 16 are checked.
gen llama_tiny "$tmp/c16.json" --ids "$P2" --cache-fp16 --save-logits "$tmp/c16.npy" && check "fp16 cache" "$tmp/c16.json" "$tmp/c16.npy" 2e-2 $G/llama_tiny 2
gen qwen2_tiny "$tmp/f16.json" --ids "$P1" --fp16 --max-new-tokens 16 --save-logits "$tmp/f16.npy" && check "fp16" "$tmp/f16.json" "$tmp/f16.npy" 6e-2 $G/qwen2_tiny 1

# The variants a phone would run (small tiles, no subgroup arithmetic), every architecture (in
# the base run only: in_base_run).
in_base_run && for m in gpt2_tiny llama_tiny llama_tied mistral_tiny qwen2_tiny; do
  VKF_DEVICE_PROFILE=mobile gen $m "$tmp/mob.json" --ids "$P1" --save-logits "$tmp/mob.npy" && check "$m mobile" "$tmp/mob.json" "$tmp/mob.npy" 1e-4 $G/$m 1
done

# Text in, text streamed out, through a checkpoint's tokenizer.json.
cp -r $D/gpt2_tiny "$tmp/talk"
cp $D/gpt2/tokenizer.json "$tmp/talk/"
"$VKF" generate --model "$tmp/talk" --prompt "zq" --max-new-tokens 8 --ignore-eos >"$tmp/stream" 2>"$tmp/err" &&
  [ -s "$tmp/stream" ] && ok || bad "streamed text: $(cat "$tmp/err")"
"$VKF" generate --model "$tmp/talk" --prompt "zq" --max-new-tokens 8 --ignore-eos --json >"$tmp/text.json" 2>"$tmp/err" &&
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); s = open(sys.argv[2], encoding="utf-8").read(); assert len(d["generated_ids"]) == 8 and s == d["text"] + "\n", (d, s)' "$tmp/text.json" "$tmp/stream" &&
  ok || bad "json text: $(cat "$tmp/text.json" "$tmp/err")"
# On a terminal (script(1) gives it one) the speed line starts a line of its own, after the text's
# newline, rather than glued to the text
if command -v script >/dev/null; then
  script -qc "'$VKF' generate --model '$tmp/talk' --prompt zq --greedy --max-new-tokens 3" /dev/null >"$tmp/tty" 2>&1
  grep -q "^vkf generate: prompt" "$tmp/tty" && ok || bad "speed line glued to the text on a terminal: $(cat -A "$tmp/tty")"
fi

# Bad input.
expect_error generate "context too small" "plus 32 new tokens exceeds the context of 20" --model $D/llama_tiny --ids "$P0" --max-new-tokens 32 --ctx 20
expect_error generate "ctx past the positions" "ctx 128 is past the model's 64 positions" --model $D/gpt2_tiny --ids "$P0" --ctx 128
expect_error generate "id outside the vocabulary" "entry 1 is not an id in \[0, 256)" --model $D/llama_tiny --ids 1,256
expect_error generate "not a language model" "BertForMaskedLM is not a language model" --model $D/bert_tiny --ids 1,2
expect_error generate "prompt ids past the vocabulary" "the tokenizer gives id 265 (token 1), outside the model's vocabulary of 256" --model "$tmp/talk" --prompt "a b"
expect_error generate "prompt without a tokenizer" "tokenizer.json" --model $D/llama_tiny --prompt "hello"
expect_error generate "one prompt for --save-logits" "save-logits takes one prompt" --model $D/llama_tiny --ids 1,2 --ids 1,3 --save-logits "$tmp/x.npy"
"$VKF" generate --model $D/llama_tiny --ids 1,2 --greedy --top-k 5 >/dev/null 2>&1
[ $? -eq 2 ] && ok || bad "--greedy with --top-k: exit status"

# generation_config.json's bad_words_ids (NoBadWordsLogitsProcessor), greedy and with beams: the
# first greedy token banned alone never comes; banned after the prompt's last id it cannot come
# first but may later. Fields whose processors vkformer lacks are refused, not ignored.
gen_with() { # DIR JSON-FIELDS: llama_tiny with generation_config.json fields added
  cp -r $D/llama_tiny "$1"
  python3 - "$1/generation_config.json" "$2" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c.update(json.loads(sys.argv[2])); json.dump(c, open(sys.argv[1], "w"))
PY
}
ids_of() { python3 -c 'import json, sys; print(" ".join(map(str, json.load(sys.stdin)["generated_ids"])))'; }
for beams in 1 3; do
  base=$("$VKF" generate --model $D/llama_tiny --ids "$P0" --greedy --ignore-eos --max-new-tokens 8 --num-beams $beams --json 2>/dev/null | ids_of)
  t0=${base%% *}
  last=${P0##*,}
  rm -rf "$tmp/bw1" "$tmp/bw2"
  gen_with "$tmp/bw1" "{\"bad_words_ids\": [[$t0]]}"
  gen_with "$tmp/bw2" "{\"bad_words_ids\": [[$last, $t0]]}"
  one=$("$VKF" generate --model "$tmp/bw1" --ids "$P0" --greedy --ignore-eos --max-new-tokens 8 --num-beams $beams --json 2>"$tmp/err" | ids_of)
  two=$("$VKF" generate --model "$tmp/bw2" --ids "$P0" --greedy --ignore-eos --max-new-tokens 8 --num-beams $beams --json 2>>"$tmp/err" | ids_of)
  [ -n "$base" ] && [ -n "$one" ] && [[ " $one " != *" $t0 "* ]] && [ "${two%% *}" != "$t0" ] && ok ||
    bad "bad_words_ids, $beams beam(s): base '$base', [[${t0}]] gave '$one', [[${last}, ${t0}]] gave '$two' $(cat "$tmp/err")"
done
# Without a tokenizer the generated ids are the output (not an empty line), one line per prompt.
"$VKF" generate --model $D/llama_tiny --ids "$P0" --greedy --ignore-eos --max-new-tokens 6 >"$tmp/plain" 2>/dev/null
g6=$("$VKF" generate --model $D/llama_tiny --ids "$P0" --greedy --ignore-eos --max-new-tokens 6 --json 2>/dev/null | ids_of)
[ -n "$g6" ] && [ "$(cat "$tmp/plain")" = "$g6" ] && ok || bad "ids without a tokenizer: '$(cat "$tmp/plain")' vs '$g6'"
"$VKF" generate --model $D/llama_tiny --ids "$P0" --ids "$P1" --greedy --ignore-eos --max-new-tokens 2 >"$tmp/plain2" 2>/dev/null
grep -q "^\[0\] [0-9]* [0-9]*$" "$tmp/plain2" && grep -q "^\[1\] [0-9]* [0-9]*$" "$tmp/plain2" && ok || bad "two prompts' ids: $(cat "$tmp/plain2")"
# --greedy is num_beams 1 whatever generation_config.json says; without it the config's beams run.
rm -rf "$tmp/beams3"
gen_with "$tmp/beams3" '{"num_beams": 3}'
g1=$("$VKF" generate --model $D/llama_tiny --ids "$P0" --greedy --ignore-eos --max-new-tokens 6 --json 2>/dev/null | ids_of)
g3=$("$VKF" generate --model "$tmp/beams3" --ids "$P0" --greedy --ignore-eos --max-new-tokens 6 --json 2>/dev/null | ids_of)
"$VKF" generate --model "$tmp/beams3" --ids "$P0" --ignore-eos --max-new-tokens 6 --json >"$tmp/b3.json" 2>/dev/null
[ -n "$g1" ] && [ "$g1" = "$g3" ] && grep -q '"sequence_score"' "$tmp/b3.json" && ! "$VKF" generate --model "$tmp/beams3" --ids "$P0" --greedy --max-new-tokens 2 --json 2>/dev/null | grep -q sequence_score && ok ||
  bad "--greedy over a num_beams 3 config: '$g3' vs greedy '$g1'; without --greedy: $(head -c 200 "$tmp/b3.json")"
rm -rf "$tmp/sup"
gen_with "$tmp/sup" '{"suppress_tokens": [5, 6]}'
expect_error generate "suppress_tokens" 'field "suppress_tokens" is \[5,6\], which vkformer.s generate does not implement' --model "$tmp/sup" --ids 1,2

vkf_summary
