#!/usr/bin/env bash
# Encoder-decoders (BART, Marian (F16), T5 v1, T5 v1.1 (BF16), D2L's Transformer) against
# transformers 4.38.2 and tools/goldens/seeds_transformer.py (goldens from tools/goldens/make_encdec_golden.py):
# vkf forward's encoder output and logits within 1e-3; vkf generate's greedy ids equal, every
# step's logits within 1e-3, a batch of two sources equal to each alone; beam search with 4 beams
# (three settings, and BART's own generation_config.json) the same sequences as generate(), scores
# within 1e-4; the mobile device profile; a tokenizer end to end; then bad input.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
D=tests/models/data
G=tests/models/golden

# case_dir MODEL NAME JSON: a copy of the checkpoint whose generation_config.json is JSON.
case_dir() {
  rm -rf "$tmp/$2" && cp -r "$D/$1" "$tmp/$2" && printf '%s' "$3" >"$tmp/$2/generation_config.json"
}
# The golden's source i as "--ids a,b,c".
src() { python3 -c 'import json,sys; print(",".join(map(str, json.load(open(sys.argv[1]))["sources"][int(sys.argv[2])])))' "$G/$1/golden.json" "$2"; }
# generation_common plus SETTINGS (a JSON object), without max_new_tokens (given as a flag).
gencfg() {
  python3 - "$G/$1/golden.json" "$2" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
c = {k: v for k, v in (g.get("generation_common") or {}).items() if k != "note"}
c.update({k: v for k, v in json.loads(sys.argv[2]).items() if k != "max_new_tokens"})
print(json.dumps(c))
PY
}

for m in bart_tiny marian_tiny t5_tiny t5v11_tiny d2l_tiny; do
  g=$G/$m
  # The whole forward pass: encoder output at real positions, logits everywhere.
  if "$VKF" forward --model "$D/$m" --in input_ids=$g/input_ids.npy \
    --in attention_mask=$g/attention_mask.npy --in decoder_input_ids=$g/decoder_input_ids.npy \
    --out logits=$tmp/logits.npy --out encoder_last_hidden_state=$tmp/enc.npy 2>"$tmp/err"; then
    python3 tests/cli/seq2seq_check.py forward "$g" "$tmp/enc.npy" "$tmp/logits.npy" && ok || bad "$m forward"
  else
    bad "$m forward: $(cat "$tmp/err")"
  fi
  # The encoder alone.
  "$VKF" forward --model "$D/$m" --in input_ids=$g/input_ids.npy --in attention_mask=$g/attention_mask.npy \
    --out encoder_last_hidden_state=$tmp/enc1.npy 2>"$tmp/err" &&
    cmp -s "$tmp/enc1.npy" "$tmp/enc.npy" &&
    ok || bad "$m encoder alone: $(cat "$tmp/err")"

  # Greedy: each source alone (ids and raw logits), then both as one batch.
  case_dir "$m" "$m.greedy" "$(gencfg "$m" '{}')"
  for i in 0 1; do
    if "$VKF" generate --model "$tmp/$m.greedy" --ids "$(src "$m" $i)" --max-new-tokens 16 --json \
      --save-logits "$tmp/g$i.npy" >"$tmp/g$i.json" 2>"$tmp/err"; then
      python3 tests/cli/seq2seq_check.py greedy "$g" $i "$tmp/g$i.json" "$tmp/g$i.npy" && ok || bad "$m greedy $i"
    else
      bad "$m greedy $i: $(cat "$tmp/err")"
    fi
  done
  "$VKF" generate --model "$tmp/$m.greedy" --ids "$(src "$m" 0)" --ids "$(src "$m" 1)" \
    --max-new-tokens 16 --json >"$tmp/gb.json" 2>"$tmp/err" &&
    python3 -c 'import json, sys; rows = json.load(open(sys.argv[1])); a = [json.load(open(f))["generated_ids"] for f in sys.argv[2:]]; assert [r["generated_ids"] for r in rows] == a, (rows, a)' \
      "$tmp/gb.json" "$tmp/g0.json" "$tmp/g1.json" && ok || bad "$m greedy batch: $(cat "$tmp/err")"
  VKF_DEVICE_PROFILE=mobile "$VKF" generate --model "$tmp/$m.greedy" --ids "$(src "$m" 0)" --ids "$(src "$m" 1)" \
    --max-new-tokens 16 --json >"$tmp/gm.json" 2>"$tmp/err" &&
    cmp -s "$tmp/gm.json" "$tmp/gb.json" && ok || bad "$m greedy, mobile profile: $(cat "$tmp/err")"

  # Beam search: every setting on the batch of two sources.
  n=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1])).get("beam", [])))' "$g/golden.json")
  for ((k = 0; k < n; k++)); do
    read -r name settings < <(python3 -c 'import json, sys; b = json.load(open(sys.argv[1]))["beam"][int(sys.argv[2])]; print(b["name"], json.dumps(b["settings"]))' "$g/golden.json" $k)
    if [ "$name" = gencfg ]; then # the checkpoint's own generation_config.json
      dir=$D/$m
      extra=()
    else
      case_dir "$m" "$m.$name" "$(gencfg "$m" "$settings")"
      dir=$tmp/$m.$name
      extra=(--max-new-tokens 16)
    fi
    profile=
    [ $k -eq 0 ] && profile=mobile
    if VKF_DEVICE_PROFILE=$profile "$VKF" generate --model "$dir" --ids "$(src "$m" 0)" --ids "$(src "$m" 1)" \
      "${extra[@]}" --json >"$tmp/b.json" 2>"$tmp/err"; then
      python3 tests/cli/seq2seq_check.py beam "$g" $k "$tmp/b.json" && ok || bad "$m $name"
    else
      bad "$m $name: $(cat "$tmp/err")"
    fi
  done
done

# A tokenizer end to end: T5 with the Unigram tokenizer of tests/models/data/tok_t5.
cp -r "$D/t5_tiny" "$tmp/t5_text" && cp "$D"/tok_t5/* "$tmp/t5_text/"
"$VKF" tokenize --model "$tmp/t5_text" --json "translate: Grüße, 東京!" >"$tmp/tok.json" 2>"$tmp/err" &&
  "$VKF" generate --model "$tmp/t5_text" --prompt "translate: Grüße, 東京!" --max-new-tokens 6 --json >"$tmp/t.json" 2>"$tmp/err" &&
  python3 -c 'import json, sys; t = json.load(open(sys.argv[1]))["texts"][0]["ids"]; r = json.load(open(sys.argv[2])); assert r["prompt_ids"] == t and len(r["generated_ids"]) >= 1, (t, r)' "$tmp/tok.json" "$tmp/t.json" &&
  ok || bad "t5 with a tokenizer: $(cat "$tmp/err")"

# Bad input: one line, non-zero exit.
expect_error generate "no tokenizer" "tokenizer" --model "$D/t5_tiny" --prompt hello
expect_error generate "source past the positions" "more than the model's 64 positions" \
  --model "$D/bart_tiny" --ids "$(python3 -c 'print(",".join(["5"] * 65))')"
expect_error forward "logits without decoder_input_ids" "needs input decoder_input_ids" \
  --model "$D/bart_tiny" --in input_ids=$G/bart_tiny/input_ids.npy --out logits=$tmp/x.npy
cp -r "$D/t5v11_tiny" "$tmp/t5_badproj"
python3 - "$tmp/t5_badproj/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["feed_forward_proj"] = "gated-gelu-fast"; json.dump(c, open(sys.argv[1], "w"))
PY
expect_error forward "unknown feed_forward_proj" 'feed_forward_proj" value "gated-gelu-fast"' \
  --model "$tmp/t5_badproj" --list
mkdir -p "$tmp/marian_nospm" && cp "$D"/marian_tiny/* "$D"/tok_marian/* "$tmp/marian_nospm/" &&
  rm -f "$tmp/marian_nospm/tokenizer.json" &&
  rm -f "$tmp/marian_nospm/source.spm"
expect_error generate "missing source.spm" "source.spm" --model "$tmp/marian_nospm" --prompt hello

vkf_summary
