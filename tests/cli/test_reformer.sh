#!/usr/bin/env bash
# Reformer (tiny checkpoints of tools/goldens/make_reformer_golden.py) against transformers 4.38.2:
# vkf forward's last_hidden_state (ReformerModel) or logits (ReformerModelWithLMHead,
# ReformerForMaskedLM) within 1e-3 for a batch of two (row 1 right-padded) and for row 0 alone, at
# lengths that fill the chunks, that Hugging Face pads to the chunk length inside the model, that
# are one chunk or less (plain attention), and with more neighbouring chunks than the input has
# (a chunk repeats); LSH layers mixed with local ones (2 hash rounds with num_buckets 4; one round
# with num_buckets [2, 4]; odd chunk lengths); the batch's row 0 equals the row alone; the mobile
# profile; --fp16;
# vkf generate's greedy and beam ids equal generate()'s (its cached local windows and LSH buckets,
# and its batched LSH step's row-0 keys); then
# bad input and bad config.json variants, each a one-line error.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
D=tests/models/data
G=tests/models/golden/reformer
NPY=tests/cli/npy_tool.py

# forward MODEL PREFIX OUTPUT OUT [ENV...]: OUTPUT of the golden's inputs PREFIX*.npy.
forward() {
  local m=$1 p=$2 o=$3 out=$4
  shift 4
  env "$@" "$VKF" forward --model "$D/$m" --in input_ids=$G/$m/${p}input_ids.npy \
    --in attention_mask=$G/$m/${p}attention_mask.npy --out $o="$out" 2>"$tmp/err"
}

check() {
  local m=$1 o=$2 s=$3
  if forward $m S${s}_ $o "$tmp/y.npy"; then
    python3 $NPY compare "$tmp/y.npy" $G/$m/S${s}_$o.npy 1e-3 && ok || bad "$m S=$s batch"
  else
    bad "$m S=$s batch: $(cat "$tmp/err")"
  fi
  if forward $m S${s}_row0_ $o "$tmp/y0.npy"; then
    python3 $NPY compare "$tmp/y0.npy" $G/$m/S${s}_row0_$o.npy 1e-3 && ok || bad "$m S=$s row 0 alone"
    python3 $NPY rows "$tmp/y.npy" 0 1 "$tmp/yb0.npy" &&
      python3 $NPY compare "$tmp/yb0.npy" "$tmp/y0.npy" 1e-5 && ok || bad "$m S=$s batch row 0 vs alone"
  else
    bad "$m S=$s row 0 alone: $(cat "$tmp/err")"
  fi
}

for s in 20 13 10 4; do check rf_local last_hidden_state $s; done
for s in 9 7 6 3; do check rf_lm logits $s; done
for s in 12 10; do check rf_mlm logits $s; done
for s in 15 11 30 3; do check rf_lsh last_hidden_state $s; done
for s in 16 10 4; do check rf_lsh_lm logits $s; done

forward rf_local S13_ last_hidden_state "$tmp/ym.npy" VKF_DEVICE_PROFILE=mobile &&
  python3 $NPY compare "$tmp/ym.npy" $G/rf_local/S13_last_hidden_state.npy 1e-3 && ok ||
  bad "rf_local mobile: $(cat "$tmp/err")"
"$VKF" forward --fp16 --model $D/rf_lm --in input_ids=$G/rf_lm/S7_input_ids.npy \
  --in attention_mask=$G/rf_lm/S7_attention_mask.npy --out logits="$tmp/y16.npy" 2>"$tmp/err" &&
  python3 $NPY compare "$tmp/y16.npy" $G/rf_lm/S7_logits.npy 1e-1 && ok || bad "rf_lm --fp16: $(cat "$tmp/err")"

# Greedy generation: the new ids of generate() with Hugging Face's cache (12 new tokens, 20 for
# rf_lsh_lm2): local layers' cached windows, and LSH layers' cached buckets (hashed in a padded or
# unpadded prefill, or at the step that reaches the chunk length).
for m in rf_lm rf_lsh_lm rf_lsh_lm2; do
  for i in 0 1 2 3 4; do
    [ -f $G/$m/greedy_${i}_prompt.txt ] || continue
    n=$(tr ',' '\n' <$G/$m/greedy_${i}_ids.txt | wc -l)
    if "$VKF" generate --model $D/$m --ids "$(cat $G/$m/greedy_${i}_prompt.txt)" --greedy \
      --max-new-tokens "$n" --json >"$tmp/g.json" 2>"$tmp/err"; then
      python3 -c 'import json, sys; got = json.load(open(sys.argv[1]))["generated_ids"]; want = [int(x) for x in open(sys.argv[2]).read().split(",")]; assert got == want, (got, want)' \
        "$tmp/g.json" $G/$m/greedy_${i}_ids.txt && ok || bad "$m greedy $i: $(cat "$tmp/g.json")"
    else
      bad "$m greedy $i: $(cat "$tmp/err")"
    fi
  done
done
# A beam search, and a batch of two prompts of one length, as generate() runs them: with LSH
# layers Hugging Face's batched step takes row 0's states as every row's keys, which the engine
# copies (the second row differs from the prompt alone). Hugging Face pads a row after its eos.
for m in rf_lm rf_lsh_lm rf_lsh_lm2; do
  if "$VKF" generate --model $D/$m --ids "$(cat $G/$m/beam_prompt.txt)" --num-beams 3 \
    --max-new-tokens 10 --json >"$tmp/b.json" 2>"$tmp/err" &&
    "$VKF" generate --model $D/$m --ids "$(cat $G/$m/pair_0_prompt.txt)" \
      --ids "$(cat $G/$m/pair_1_prompt.txt)" --greedy --max-new-tokens 10 --json \
      >"$tmp/p.json" 2>>"$tmp/err"; then
    python3 -c '
import json, sys
def want(path):
    ids = [int(x) for x in open(path).read().split(",")]
    return ids[:ids.index(2) + 1] if 2 in ids else ids
beam, pair = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert beam["generated_ids"] == want(sys.argv[3]), ("beam", beam, want(sys.argv[3]))
got = [r["generated_ids"] for r in pair]
assert got == [want(sys.argv[4]), want(sys.argv[5])], ("pair", got)' \
      "$tmp/b.json" "$tmp/p.json" $G/$m/beam_ids.txt $G/$m/pair_0_ids.txt $G/$m/pair_1_ids.txt &&
      ok || bad "$m beams / pair: $(cat "$tmp/b.json" "$tmp/p.json")"
  else
    bad "$m beams / pair: $(cat "$tmp/err")"
  fi
done
# Prompts of different lengths (no Hugging Face batch runs them unpadded): each row as alone.
if "$VKF" generate --model $D/rf_lsh_lm2 --ids "$(cat $G/rf_lsh_lm2/greedy_2_prompt.txt)" \
  --ids "$(cat $G/rf_lsh_lm2/greedy_1_prompt.txt)" --greedy --max-new-tokens 20 --json \
  >"$tmp/g2.json" 2>"$tmp/err"; then
  python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))
want = [[int(x) for x in open(p).read().split(",")] for p in sys.argv[2:]]
assert [r["generated_ids"] for r in rows] == want, (rows, want)' \
    "$tmp/g2.json" $G/rf_lsh_lm2/greedy_2_ids.txt $G/rf_lsh_lm2/greedy_1_ids.txt && ok ||
    bad "rf_lsh_lm2 two prompts: $(cat "$tmp/g2.json")"
else
  bad "rf_lsh_lm2 two prompts: $(cat "$tmp/err")"
fi
# --fp16 runs the same steps in f16 (ids may differ where logits are close: only the count).
"$VKF" generate --model $D/rf_lsh_lm2 --ids 4,8,15,16,23,42 --greedy --max-new-tokens 8 --fp16 \
  --ignore-eos --json >"$tmp/g16.json" 2>"$tmp/err" &&
  python3 -c 'import json, sys; assert len(json.load(open(sys.argv[1]))["generated_ids"]) == 8' "$tmp/g16.json" &&
  ok || bad "rf_lsh_lm2 --fp16: $(cat "$tmp/err")"
expect_error generate "generate on ReformerModel" "not a causal language model" --model $D/rf_local --ids 5,6
expect_error generate "a prompt past the padded length" "a sequence of 31 tokens is outside \[1, 30\]" \
  --model $D/rf_lsh_lm2 --ids "$(python3 -c 'print(",".join(["5"] * 31))')" --max-new-tokens 1

# Bad input.
python3 $NPY ints64 "$tmp/oov.npy" 1,4 5,6,7,61
expect_error forward "id outside the vocabulary" "input_ids: value 61" \
  --model $D/rf_local --in input_ids="$tmp/oov.npy" --out last_hidden_state="$tmp/x.npy"
python3 $NPY ints64 "$tmp/long.npy" 1,33 $(python3 -c 'print(",".join(["5"] * 33))')
expect_error forward "longer than the axial grid" "input_ids" \
  --model $D/rf_local --in input_ids="$tmp/long.npy" --out last_hidden_state="$tmp/x.npy"
# config.json variants on a copy of the checkpoint.
m=$D/rf_local
variant() {
  rm -rf "$tmp/v" && cp -r $m "$tmp/v" &&
    python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c.update(json.loads(sys.argv[2])); json.dump(c, open(sys.argv[1], "w"))' \
      "$tmp/v/config.json" "$1"
}
run_v() { expect_error forward "$1" "$2" --model "$tmp/v" --in input_ids=$G/rf_local/S4_row0_input_ids.npy --out last_hidden_state="$tmp/x.npy"; }
variant '{"attn_layers": ["local", "lsh"], "num_buckets": 4}'
run_v "an LSH layer without its weights" 'self_attention.query_key.weight'
variant '{"attn_layers": ["local", "lsh"], "num_buckets": 4, "hash_seed": null}'
run_v "LSH without hash_seed" 'LSH layers without "hash_seed"'
variant '{"attn_layers": ["local", "lsh"], "num_buckets": null}'
run_v "LSH with num_buckets null" '"num_buckets" null'
variant '{"attn_layers": ["local", "global"]}'
run_v "an unknown layer kind" '"attn_layers" entry 1 is not "local" or "lsh"'
variant '{"attn_layers": []}'
run_v "no layers" '"attn_layers" has 0 entries'
variant '{"axial_pos_embds_dim": [6, 11]}'
run_v "axial dims not summing to hidden_size" 'does not sum to hidden_size 16'
variant '{"axial_pos_shape": [4, 8, 2]}'
run_v "three axial dims" '"axial_pos_shape" must be a list of two integers'
variant '{"local_attn_chunk_length": 0}'
run_v "chunk length 0" 'local_attn_chunk_length'
variant '{"local_num_chunks_before": -1}'
run_v "negative chunks before" '"local_num_chunks_before" -1 is not in'
variant '{"num_buckets": 5}'
run_v "odd num_buckets" '"num_buckets" entry 0 is not an even integer'
variant '{"num_buckets": [4, 3]}'
run_v "odd bucket factor" '"num_buckets" entry 1 is not an even integer'
variant '{"num_hashes": 0}'
run_v "no hash rounds" '"num_hashes" 0 is not in'
variant '{"hash_seed": -3}'
run_v "negative hash_seed" '"hash_seed" is not a non-negative integer'
variant '{"attention_head_size": 7}'
run_v "head size of other weights" 'self_attention.query.weight'
m=$D/rf_lm
variant '{"local_num_chunks_after": 1}'
expect_error forward "a causal LM looking ahead" 'needs is_decoder true and' \
  --model "$tmp/v" --in input_ids=$G/rf_lm/S3_row0_input_ids.npy --out logits="$tmp/x.npy"
vkf_summary
