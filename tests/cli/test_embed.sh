#!/usr/bin/env bash
# vkf embed end to end on the installed all-MiniLM-L6-v2: text output, --json vectors against the
# committed sentence-transformers goldens (cosine >= 0.9999) and their cosine matrix, VKF_CHECK=1,
# the BERT branch of `vkf bench model`, and bad inputs giving one "vkf: ..." line and exit 1.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
# Sentences 0, 1 and 9 of tests/models/embedding_sentences.txt (rows of the golden).
s0="A man is eating food."
s1="A man is eating a piece of bread."
s9="Hi"

if "$VKF" embed "$s0" "$s1" >"$tmp/out" 2>"$tmp/err"; then ok; else bad "embed exit $?: $(cat "$tmp/err")"; fi
grep -q "384 dims, mean pooling, L2-normalised" "$tmp/out" && ok || bad "header: $(cat "$tmp/out")"
grep -q "norm 1.0000" "$tmp/out" && ok || bad "norm line: $(cat "$tmp/out")"
grep -q "^cosine similarity:" "$tmp/out" && ok || bad "no similarity matrix: $(cat "$tmp/out")"

# --json: full vectors within cosine 0.9999 of the golden rows; the matrix matches the vectors.
if "$VKF" embed --json "$s0" "$s1" "$s9" >"$tmp/json" 2>"$tmp/err"; then ok; else bad "json exit: $(cat "$tmp/err")"; fi
python3 - "$tmp/json" tests/models/golden/bert/minilm_embeddings.npy <<'EOF' && ok || bad "json content: $(head -c 400 "$tmp/json")"
import array, ast, json, math, sys
doc = json.load(open(sys.argv[1]))
with open(sys.argv[2], "rb") as f:  # .npy v1: magic, header length, header dict, f32 data
    assert f.read(6) == b"\x93NUMPY"
    f.read(2)
    n = int.from_bytes(f.read(2), "little")
    header = ast.literal_eval(f.read(n).decode())
    golden = array.array("f", f.read())
rows, dim = header["shape"]
assert doc["dim"] == dim == 384 and doc["pooling"] == "mean" and doc["normalized"] is True, doc["dim"]
def cos(a, b):
    return sum(x * y for x, y in zip(a, b)) / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))
for i, row in enumerate([0, 1, 9]):
    e = doc["embeddings"][i]["embedding"]
    c = cos(e, golden[row * dim:(row + 1) * dim])
    assert c >= 0.9999, (i, c)
sim = doc["similarity"]
for i in range(3):
    for j in range(3):
        want = cos(doc["embeddings"][i]["embedding"], doc["embeddings"][j]["embedding"])
        assert abs(sim[i][j] - want) < 1e-5 and abs(sim[i][j] - sim[j][i]) < 1e-6, (i, j)
assert [x["tokens"] for x in doc["embeddings"]] == [8, 11, 3]
EOF

if VKF_CHECK=1 "$VKF" embed "$s0" "$s9" >/dev/null 2>"$tmp/err"; then ok; else bad "VKF_CHECK run: $(cat "$tmp/err")"; fi
grep -q "nodes agree with the interpreter" "$tmp/err" && ok || bad "no VKF_CHECK report: $(cat "$tmp/err")"

# bench model on a BERT checkpoint (no --model: the installed all-MiniLM-L6-v2), small sizes.
if "$VKF" bench model --batch 1 --batch 2 --seq-len 16 --runs 2 --warmup 1 >"$tmp/bench" 2>&1; then ok; else bad "bench model: $(cat "$tmp/bench")"; fi
grep -q "^| 2 | .* ± .* |" "$tmp/bench" && grep -q "^| matmul |" "$tmp/bench" && ok || bad "bench output: $(cat "$tmp/bench")"

# --npy writes the vectors the JSON holds; --no-matrix drops the similarity matrix (text and JSON).
"$VKF" embed --npy "$tmp/e.npy" --no-matrix --json "$s0" "$s1" "$s9" >"$tmp/nm.json" 2>"$tmp/err" &&
  "$VKF" embed --no-matrix "$s0" "$s1" >"$tmp/nm.txt" 2>>"$tmp/err" &&
  python3 - "$tmp/e.npy" "$tmp/nm.json" "$tmp/json" <<'PY' && ! grep -q "cosine similarity" "$tmp/nm.txt" && ok || bad "--npy / --no-matrix: $(cat "$tmp/err")"
import json, struct, sys
raw = open(sys.argv[1], "rb").read()
hlen = struct.unpack("<H", raw[8:10])[0]
assert "'shape': (3, 384)" in raw[10:10 + hlen].decode()
vals = struct.unpack("<%df" % (3 * 384), raw[10 + hlen:])
doc, full = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
assert "similarity" not in doc and "similarity" in full
for i in range(3):
    emb = doc["embeddings"][i]["embedding"]
    assert all(abs(a - b) <= 1e-6 * max(1, abs(b)) for a, b in zip(vals[i * 384:(i + 1) * 384], emb))
PY
mkdir "$tmp/empty"
expect_error embed "empty folder" "config.json" --model "$tmp/empty" "$s0"
expect_error embed "missing folder" "no-such-model" --model "$tmp/no-such-model" "$s0"
expect_error embed "a ViT checkpoint" "ViTForImageClassification is not a sentence embedder" --model tests/models/data/vit_tiny "$s0"
expect_error embed "invalid UTF-8" "UTF-8" $'caf\xe9'
# A model computing NaN (a NaN LayerNorm weight) is an error, not `nan` in JSON or zero cosines.
mdir=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["model"])' "$tmp/json")
python3 tests/cli/poison_checkpoint.py "$mdir" "$tmp/nan_model" "LayerNorm.weight"
expect_error embed "NaN weights, --json" "the embedding of text 0 holds NaN at dimension 0" --model "$tmp/nan_model" --json "$s0" "$s1"
expect_error embed "NaN weights" "the embedding of text 0 holds NaN" --model "$tmp/nan_model" "$s0" "$s1"
"$VKF" embed >/dev/null 2>&1
[ $? -eq 2 ] && ok || bad "no text: usage exit 2 expected"

vkf_summary
