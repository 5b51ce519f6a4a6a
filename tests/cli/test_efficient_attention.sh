#!/usr/bin/env bash
# config.json's "vkf_attention" option (issue 16): tiny BERT (encoder, non-causal) and Llama
# (decoder, causal) checkpoints of tools/goldens/make_efficient_attention_golden.py with each kind against
# tools/goldens/efficient_attention_ref.py (the papers' equations patched into transformers 4.38.2):
# vkf forward within 1e-4 for a batch of two (row 1 right-padded) and for row 1 alone at its own
# length (held-out lengths 9 and 6), random features stored (vkf_omega) or drawn from the seed, the
# batch's row 1 equal to the row alone, the mobile device profile; vkf generate (greedy) with the
# linear state on the device in place of the KV cache against the reference's full forward per
# step (ids of a batch of two prompts of different lengths, one prompt's raw logits within 1e-4,
# chunked prefill, beam search, mobile, memory independent of --ctx); --fp16 within 5e-2; then bad configs,
# each a one-line error naming the key.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
D=tests/models/data
G=tests/models/golden/efficient
NPY=tests/cli/npy_tool.py
TOL=1e-4

# forward CASE PREFIX OUT [ENV...]: the case's output (last_hidden_state or logits) of PREFIX*.npy.
forward() {
  local m=$1 p=$2 out=$3 key=last_hidden_state types=()
  shift 3
  case $m in *llama*) key=logits ;; *) types=(--in token_type_ids=$G/$m/${p}token_type_ids.npy) ;; esac
  env "$@" "$VKF" forward --model "$D/$m" --in input_ids=$G/$m/${p}input_ids.npy \
    --in attention_mask=$G/$m/${p}attention_mask.npy "${types[@]}" --out $key="$out" 2>"$tmp/err"
}
golden() { case $1 in *llama*) echo "$G/$1/$2logits.npy" ;; *) echo "$G/$1/$2last_hidden_state.npy" ;; esac; }

for m in eff_bert_linear eff_bert_performer eff_bert_rfa eff_bert_linformer eff_bert_linformer_hw \
  eff_bert_linformer_kv eff_bert_linformer_lw eff_bert_nystrom eff_bert_nystrom_orig eff_llama_linear \
  eff_llama_performer eff_llama_rfa eff_llama_performer_drawn eff_bert_rfa_drawn; do
  if forward $m "" "$tmp/y.npy"; then
    python3 $NPY compare "$tmp/y.npy" "$(golden $m "")" $TOL && ok || bad "$m batch"
  else
    bad "$m batch: $(cat "$tmp/err")"
    continue
  fi
  if forward $m row1_ "$tmp/y1.npy"; then
    python3 $NPY compare "$tmp/y1.npy" "$(golden $m row1_)" $TOL && ok || bad "$m row 1 alone"
  else
    bad "$m row 1 alone: $(cat "$tmp/err")"
  fi
done

# The batch's row 1 (its 6 kept tokens) is the row alone: padding is left out, not attended (not
# so for Nystrom: HF's landmarks average the padded tokens too).
for m in eff_bert_performer eff_llama_rfa; do
  forward $m "" "$tmp/b.npy" && forward $m row1_ "$tmp/a.npy" &&
    python3 -c '
import sys
sys.path.insert(0, "tests/cli")
import npy_tool as t
shape_b, b = t.read(sys.argv[1])[:2]
shape_a, a = t.read(sys.argv[2])[:2]
n, w = shape_a[1], shape_b[2]
row = [b[(shape_b[1] + i) * w + j] for i in range(n) for j in range(w)]
sys.exit(0 if max(abs(x - y) for x, y in zip(row, a)) <= 1e-5 else 1)
' "$tmp/b.npy" "$tmp/a.npy" && ok || bad "$m batch row 1 vs alone"
done

# The option is what runs: without the key the same weights give softmax attention, far away.
rm -rf "$tmp/s" && cp -r "$D/eff_llama_linear" "$tmp/s" &&
  python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); del c["vkf_attention"]; json.dump(c, open(sys.argv[1], "w"))' "$tmp/s/config.json" &&
  "$VKF" forward --model "$tmp/s" --in input_ids=$G/eff_llama_linear/input_ids.npy --out logits="$tmp/soft.npy" 2>"$tmp/err" &&
  ! python3 $NPY compare "$tmp/soft.npy" "$(golden eff_llama_linear "")" 1e-2 >/dev/null && ok || bad "softmax differs: $(cat "$tmp/err")"

# Without vkf_omega in the file the features are drawn from seed + layer: another seed, another
# draw (the *_drawn goldens above match the reference's port of vkf_random_features).
rm -rf "$tmp/s" && cp -r "$D/eff_llama_performer_drawn" "$tmp/s" &&
  python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["vkf_attention"]["seed"] = 12; json.dump(c, open(sys.argv[1], "w"))' "$tmp/s/config.json" &&
  "$VKF" forward --model "$tmp/s" --in input_ids=$G/eff_llama_performer_drawn/input_ids.npy --out logits="$tmp/seed.npy" 2>"$tmp/err" &&
  ! python3 $NPY compare "$tmp/seed.npy" "$(golden eff_llama_performer_drawn "")" 1e-3 >/dev/null && ok ||
  bad "another seed, another omega: $(cat "$tmp/err")"

# The mobile device profile (small workgroups and bindings).
for m in eff_bert_rfa eff_bert_linformer eff_bert_nystrom eff_llama_rfa; do
  forward $m "" "$tmp/ym.npy" VKF_DEVICE_PROFILE=mobile &&
    python3 $NPY compare "$tmp/ym.npy" "$(golden $m "")" $TOL && ok ||
    bad "$m mobile: $(cat "$tmp/err")"
done

# --fp16 weights and activations (the linear family still runs its ops in f32).
for m in eff_bert_performer eff_bert_linformer eff_bert_nystrom eff_llama_rfa; do
  key=last_hidden_state types=(--in token_type_ids=$G/$m/token_type_ids.npy)
  case $m in *llama*) key=logits types=() ;; esac
  "$VKF" forward --fp16 --model "$D/$m" --in input_ids=$G/$m/input_ids.npy \
    --in attention_mask=$G/$m/attention_mask.npy "${types[@]}" --out $key="$tmp/y16.npy" 2>"$tmp/err" &&
    python3 $NPY compare "$tmp/y16.npy" "$(golden $m "")" 5e-2 && ok || bad "$m --fp16: $(cat "$tmp/err")"
done

# Generation: the recurrent state (prefill by the chunked scan, then one token per step) against
# the reference's quadratic form over the whole sequence at every step.
P0=5,9,3,17,2,8,11
P1=4,4,21
same_ids() { # JSON CASE: rows 0 and 1 generated the golden ids
  python3 -c '
import json, sys
sys.path.insert(0, "tests/cli")
import npy_tool as t
rows = json.load(open(sys.argv[1]))
for i, row in enumerate(rows):
    want = list(t.read("%s/generate_%d.npy" % (sys.argv[2], i))[1])
    if row["generated_ids"] != want:
        sys.exit("row %d: %s, want %s" % (i, row["generated_ids"], want))
' "$1" "$G/$2"
}
for m in eff_llama_linear eff_llama_performer eff_llama_rfa; do
  gen=("$VKF" generate --model "$D/$m" --greedy --ignore-eos --max-new-tokens 12 --json)
  "${gen[@]}" --ids $P0 --save-logits "$tmp/gl.npy" >"$tmp/g0.json" 2>"$tmp/err" &&
    python3 $NPY compare "$tmp/gl.npy" $G/$m/generate_0_logits.npy $TOL && ok ||
    bad "$m generate logits: $(cat "$tmp/err")"
  "${gen[@]}" --ids $P0 --ids $P1 >"$tmp/g.json" 2>"$tmp/err" && same_ids "$tmp/g.json" $m && ok ||
    bad "$m generate batch: $(cat "$tmp/err")"
  "${gen[@]}" --ids $P0 --ids $P1 --chunk 4 >"$tmp/g.json" 2>"$tmp/err" && same_ids "$tmp/g.json" $m && ok ||
    bad "$m generate chunked prefill: $(cat "$tmp/err")"
done
# Beam search reorders the states' rows between steps, as it reorders a KV cache.
"$VKF" generate --model $D/eff_llama_rfa --num-beams 3 --ignore-eos --max-new-tokens 8 --json --ids $P0 \
  >"$tmp/beam.json" 2>"$tmp/err" &&
  python3 -c '
import json, sys
sys.path.insert(0, "tests/cli")
import npy_tool as t
out = json.load(open(sys.argv[1]))
row = out[0] if isinstance(out, list) else out
got, want = row["generated_ids"], list(t.read(sys.argv[2])[1])
sys.exit(0 if got == want else "beams %s, want %s" % (got, want))
' "$tmp/beam.json" $G/eff_llama_rfa/beam_0.npy && ok || bad "eff_llama_rfa beam search: $(cat "$tmp/err")"
VKF_DEVICE_PROFILE=mobile "$VKF" generate --model $D/eff_llama_rfa --greedy --ignore-eos --max-new-tokens 12 \
  --json --ids $P0 --ids $P1 >"$tmp/g.json" 2>"$tmp/err" && same_ids "$tmp/g.json" eff_llama_rfa && ok ||
  bad "eff_llama_rfa generate mobile: $(cat "$tmp/err")"
# The state's size does not grow with the context (a KV cache of 4096 positions would be 1.1 MiB).
mem() { "$VKF" generate --model $D/eff_llama_linear --greedy --ignore-eos --max-new-tokens 4 --ids $P0 --ctx "$1" 2>&1 >/dev/null | grep -o "KV cache [0-9.]* MiB"; }
[ "$(mem 16)" = "KV cache 0.0 MiB" ] && [ "$(mem 4096)" = "KV cache 0.0 MiB" ] && ok || bad "state memory: $(mem 16) vs $(mem 4096)"

# Bad configs on a copy of a checkpoint: each a one-line error naming the key.
variant() {
  rm -rf "$tmp/v" && cp -r "$D/$1" "$tmp/v" &&
    python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["vkf_attention"]=json.loads(sys.argv[2]); json.dump(c, open(sys.argv[1], "w"))' \
      "$tmp/v/config.json" "$2"
}
bad_config() { # CASE JSON NEEDLE
  variant "$1" "$2"
  local key=last_hidden_state
  case $1 in *llama*) key=logits ;; esac
  expect_error forward "$1 $2" "$3" --model "$tmp/v" --in input_ids=$G/$1/row1_input_ids.npy \
    --out $key="$tmp/x.npy"
}
bad_config eff_bert_linear '{"kind": "cosformer"}' 'vkf_attention.kind" value "cosformer" is not known'
bad_config eff_bert_linear '{"features": 8}' 'vkf_attention.kind" is missing'
bad_config eff_bert_linear '{"kind": "linear", "features": 8}' 'vkf_attention.features" does not apply to kind linear'
bad_config eff_bert_performer '{"kind": "performer", "feature": 8}' 'vkf_attention.feature" does not apply to kind performer'
bad_config eff_bert_performer '{"kind": "performer", "features": 0}' 'features'
bad_config eff_bert_performer '{"kind": "performer", "features": 12, "seed": 3}' 'vkf_omega'
bad_config eff_bert_performer '{"kind": "performer", "orthogonal": "yes"}' 'orthogonal'
bad_config eff_bert_rfa '{"kind": "rfa", "gate": true}' 'vkf_attention.gate" needs a causal model'
bad_config eff_bert_linformer '{"kind": "linformer"}' 'vkf_attention.k" (the projected length) is missing'
bad_config eff_bert_linformer '{"kind": "linformer", "k": 4, "sharing": "rowwise"}' '"rowwise" is not known'
bad_config eff_bert_linformer '{"kind": "linformer", "k": 4, "sharing": "headwise"}' 'vkf_linformer_e'
bad_config eff_bert_linformer '{"kind": "linformer", "k": 4, "sharing": "layerwise"}' 'vkf_linformer_e'
bad_config eff_llama_linear '{"kind": "linformer", "k": 4}' 'linformer mixes every position'
bad_config eff_bert_nystrom '{"kind": "nystrom"}' 'vkf_attention.landmarks" is missing'
bad_config eff_bert_nystrom '{"kind": "nystrom", "landmarks": 4}' 'multiple of its 4 landmarks (segment means), not 6 tokens'
bad_config eff_bert_nystrom '{"kind": "nystrom", "landmarks": 3, "conv_kernel_size": 4}' 'conv_kernel_size" 4 is even'
bad_config eff_bert_nystrom '{"kind": "nystrom", "landmarks": 3, "conv_kernel_size": 5}' 'vkf_nystrom_conv.weight'
bad_config eff_bert_nystrom '{"kind": "nystrom", "landmarks": 3, "inv_init": "exact"}' 'inv_init" value "exact" is not known'
bad_config eff_llama_linear '{"kind": "nystrom", "landmarks": 3}' 'nystrom mixes every position'
variant eff_llama_linear '{"kind": "linear"}' &&
  python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["num_key_value_heads"] = 1; json.dump(c, open(sys.argv[1], "w"))' "$tmp/v/config.json"
expect_error forward "grouped-query heads" 'needs as many key-value heads as heads (3, not 1)' --model "$tmp/v" \
  --in input_ids=$G/eff_llama_linear/row1_input_ids.npy --out logits="$tmp/x.npy"
bad_config eff_llama_linear '"linear"' 'vkf_attention" must be an object'
# Extra keys are only ours: a key Hugging Face ignores but not this parser.
bad_config eff_llama_rfa '{"kind": "rfa", "features": 16, "gate": true, "eps": -1}' 'eps'
vkf_summary
