#!/usr/bin/env bash
# The registry walk: one committed tiny checkpoint of every registered family, its tasks as
# `vkf forward --list` prints them (models/registry/model.h's facets; a declaration that changes
# fails here), then every declared task run through the CLI: forward on generated inputs, tokenize
# and a text-prompted generation with a stop string (a WordPiece vocab.txt written beside a copy of
# the checkpoint: the tiny checkpoints ship no tokenizer), embed (BERT's pipeline; the other
# encoders' hidden states pooled), classify, chat (a chat template
# beside the copy), attention maps. tests/api/test_registry_walk.c walks the same checkpoints
# through the C API.
set -u
VKF=${VKF:-build/tools/vkf}
D=tests/models/data
source tests/cli/lib.sh
npy="python3 tests/cli/npy_tool.py"
export VKF_CACHE_DIR=${VKF_CACHE_DIR:-$tmp/cache}

# name checkpoint tasks (the facets each family declares for this checkpoint)
walk=(
  "vit_tiny forward,classify,attentions"
  "bert_tiny forward,tokenize,embed,attentions"
  "gpt2_tiny forward,tokenize,generate,chat"
  "bart_tiny forward,tokenize,generate"
  "nys_full forward,tokenize,embed"
  "bigbird_tiny forward,tokenize,embed"
  "longformer_tiny forward,tokenize,embed"
  "d2l_attn_tiny forward,tokenize,generate,attentions"
  "txl_plain forward,tokenize,generate"
  "rf_lm forward,tokenize,generate"
)

# A WordPiece vocabulary of 512 entries (every tiny vocabulary fits): "a b c" are ids 5..7.
vocab() {
  printf '[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\nb\nc\nd\ne\n' >"$1/vocab.txt"
  for i in $(seq 10 511); do echo "w$i"; done >>"$1/vocab.txt"
}

# The required (and decoder) inputs of a `vkf forward --list` as .npy files: batch 1, 4 tokens (a fixed length
# when the checkpoint fixes one), ids 1, floats random; prints the --in arguments.
inputs() {
  python3 - "$1" "$2" <<'PY'
import re, subprocess, sys
listing, out = sys.argv[1], sys.argv[2]
for line in open(listing):
    # required inputs, and an encoder-decoder's decoder inputs (without them the encoder runs alone)
    m = re.match(r"input\s+(\S+)\s+(int|float32)\s+\[([^\]]*)\]\s+(required|optional \(absent: the encoder)", line)
    if not m:
        continue
    name, kind, dims = m.group(1), m.group(2), [d.strip() for d in m.group(3).split(",")]
    shape = []
    for d in dims:
        if d == "batch":
            shape.append(1)
        elif d.startswith(("seq=", "target=")):
            shape.append(int(d.split("=")[1]))
        elif d.startswith(("seq", "target")):
            shape.append(4)
        elif d == "memory":
            shape.append(0)
        else:
            shape.append(int(d))
    path = "%s/%s.npy" % (out, name)
    dims_arg = ",".join(map(str, shape))
    n = 1
    for d in shape:
        n *= d
    if kind == "int":
        subprocess.check_call(["python3", "tests/cli/npy_tool.py", "ints", path, dims_arg,
                               ",".join(["1"] * n)])
    else:
        subprocess.check_call(["python3", "tests/cli/npy_tool.py", "write", path, dims_arg, "1"])
    print("--in %s=%s" % (name, path), end=" ")
PY
}

for row in "${walk[@]}"; do
  read -r name want <<<"$row"
  m=$D/$name
  if ! "$VKF" forward --model "$m" --list >"$tmp/$name.list" 2>&1; then
    bad "$name --list: $(cat "$tmp/$name.list")"
    continue
  fi
  got=$(sed -n 's/^tasks   //p' "$tmp/$name.list" | tr -d ' ')
  [ "$got" = "$want" ] && ok || bad "$name: tasks '$got', declared '$want'"
  mkdir -p "$tmp/$name.in" && cp -r "$m" "$tmp/$name.text"
  [ -e "$m/vocab.txt" ] || vocab "$tmp/$name.text"
  for task in ${want//,/ }; do
    case $task in
    forward)
      args=$(inputs "$tmp/$name.list" "$tmp/$name.in")
      first=$(sed -n 's/^output  \([^ ]*\).*/\1/p' "$tmp/$name.list" | head -1)
      # shellcheck disable=SC2086
      "$VKF" forward --model "$m" $args --out "$first=$tmp/$name.out.npy" >/dev/null 2>"$tmp/err" &&
        [ -s "$tmp/$name.out.npy" ] ;;
    tokenize)
      "$VKF" tokenize --model "$tmp/$name.text" --json "a b c" >"$tmp/out" 2>"$tmp/err" &&
        { [ -e "$m/vocab.txt" ] || grep -q '"ids": \[2, 5, 6, 7, 3\]' "$tmp/out"; } &&
        grep -q '"ids": \[' "$tmp/out" ;;
    generate)
      "$VKF" generate --model "$tmp/$name.text" --prompt "a b c" --greedy --max-new-tokens 3 \
        --stop "never here" --json >"$tmp/out" 2>"$tmp/err" &&
        python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["generated_ids"] and "text" in r, r' "$tmp/out" ;;
    embed)
      "$VKF" embed --model "$tmp/$name.text" --json "a b" "c d e" >"$tmp/out" 2>"$tmp/err" &&
        python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert len(r["embeddings"]) == 2 and len(r["embeddings"][0]["embedding"]) == r["dim"] > 0, r' "$tmp/out" &&
        if [ ! -e "$m/vocab.txt" ]; then
          # a pooled embedding is the mean of the forward pass's last_hidden_state over the
          # text's tokens ("a b" is [CLS] a b [SEP]; alone, as padding moves Nystrom landmarks)
          "$VKF" embed --model "$tmp/$name.text" --json "a b" >"$tmp/out" 2>"$tmp/err" &&
            $npy ints "$tmp/ab.npy" 1,4 2,5,6,3 &&
            "$VKF" forward --model "$m" --in input_ids="$tmp/ab.npy" \
              --out last_hidden_state="$tmp/ab_h.npy" 2>"$tmp/err" >/dev/null &&
            python3 - "$tmp/out" "$tmp/ab_h.npy" 2>"$tmp/err" <<'PY'
import json, struct, sys
e = json.load(open(sys.argv[1]))["embeddings"][0]["embedding"]
raw = open(sys.argv[2], "rb").read()
n = struct.unpack("<H", raw[8:10])[0]
h = struct.unpack("<%df" % ((len(raw) - 10 - n) // 4), raw[10 + n:])
d = len(e)
mean = [sum(h[t * d + k] for t in range(4)) / 4 for k in range(d)]
assert max(abs(a - b) for a, b in zip(e, mean)) < 1e-4, (e[:4], mean[:4])
PY
        fi ;;
    classify)
      "$VKF" classify --model "$m" --top 1 --json assets/images/fashion-mnist/0000_ankle-boot.png \
        >"$tmp/out" 2>"$tmp/err" && grep -q '"label"' "$tmp/out" ;;
    chat)
      printf '{"chat_template": "{%% for m in messages %%}{{ m.content }} {%% endfor %%}"}\n' \
        >"$tmp/$name.text/tokenizer_config.json"
      echo '[{"role": "user", "content": "a b"}]' >"$tmp/messages.json"
      "$VKF" chat --model "$tmp/$name.text" --messages "$tmp/messages.json" --greedy \
        --max-new-tokens 2 >"$tmp/out" 2>"$tmp/err" ;;
    attentions)
      mkdir -p "$tmp/$name.attn"
      case $name in
      vit_*) input=assets/images/fashion-mnist/0000_ankle-boot.png ;;
      d2l_*) input=5,6,7 ;;
      *) input="a b c" ;;
      esac
      "$VKF" attn --model "$m" --out "$tmp/$name.attn" "$input" >"$tmp/out" 2>"$tmp/err" &&
        ls "$tmp/$name.attn"/*.png >/dev/null 2>&1 ;;
    *) false ;;
    esac
    [ $? -eq 0 ] && ok || bad "$name $task: $(cat "$tmp/err")"
  done
done
vkf_summary
