#!/usr/bin/env bash
# GGUF files as models (tools/goldens/make_gguf_goldens.py): a tiny Llama converted as llama.cpp
# converts it (Q/K rows permuted) in Q8_0, Q4_1, Q5_0, Q4_0, Q5_1 and F16, and a tiny Qwen2 (QKV
# biases, tied embeddings, rows as they are) in Q8_0, and a tiny GPT-2 (Conv1D weights transposed
# by the converter, Q8_0 and F16 mixed), each generates the ids and logits of its
# Hugging Face twin (the gguf package's dequantised values, un-permuted by transformers'
# reverse_permute_weights), the quantised weights read as blocks by the kernels against the twin's
# F32; Llamas 256 wide of random Q4_K (Q6_K head), Q5_K and Q6_K (Q4_K head) blocks generate as
# the same files dequantised at load (VKF_DEQUANTIZE=1); tokenizer.ggml.* tokenizers give Hugging Face's ids for the texts of the
# BPE goldens, and a SentencePiece vocabulary those of transformers' GGUFLlamaConverter; bad files
# and paths are one "vkf: ..." line.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
D=tests/models/data/gguf
IDS=1,5,9,200,17,3,64

for t in llama_tiny_q8_0 llama_tiny_q4_1 llama_tiny_q5_0 llama_tiny_q4_0 llama_tiny_q5_1 \
  llama_tiny_f16 qwen2_tiny_q8_0 gpt2_tiny_mixed llama_kq_q4_k llama_kq_q5_k llama_kq_q6_k; do
  "$VKF" generate --model $D/$t.gguf --ids $IDS --greedy --ignore-eos --max-new-tokens 16 \
    --json --save-logits "$tmp/g.npy" >"$tmp/g.json" 2>"$tmp/err" || bad "$t gguf: $(cat "$tmp/err")"
  if [ -d $D/${t}_twin ]; then
    "$VKF" generate --model $D/${t}_twin --ids $IDS --greedy --ignore-eos \
      --max-new-tokens 16 --json --save-logits "$tmp/t.npy" >"$tmp/t.json" 2>"$tmp/err" ||
      bad "$t twin: $(cat "$tmp/err")"
  else
    VKF_DEQUANTIZE=1 "$VKF" generate --model $D/$t.gguf --ids $IDS --greedy --ignore-eos \
      --max-new-tokens 16 --json --save-logits "$tmp/t.npy" >"$tmp/t.json" 2>"$tmp/err" ||
      bad "$t dequantised: $(cat "$tmp/err")"
  fi
  # The GGUF's weights hold exactly the twin's values: the same ids, and logits equal up to the
  # order of the sums (the quantised kernels scale each group of products once).
  python3 - "$t" "$tmp/g.json" "$tmp/t.json" "$tmp/g.npy" "$tmp/t.npy" <<'PY' && ok || bad "$t vs twin"
import json, struct, sys
t, gj, tj, gn, tn = sys.argv[1:]
def npy(path):  # float32 .npy as a flat tuple
    data = open(path, "rb").read()
    hlen = struct.unpack("<H", data[8:10])[0]
    return struct.unpack("<%df" % ((len(data) - 10 - hlen) // 4), data[10 + hlen:])
a, b = json.load(open(gj)), json.load(open(tj))
if a["generated_ids"] != b["generated_ids"] or len(a["generated_ids"]) != 16:
    sys.exit("%s: ids %s, twin %s" % (t, a["generated_ids"], b["generated_ids"]))
x, y = npy(gn), npy(tn)
worst = max(abs(p - q) for p, q in zip(x, y))
# 1e-5 absolute for the tiny twins (logits ~5; worst seen 9.3e-6), 2e-6 of the largest logit for
# the random K-quant Llamas, whose logits reach thousands (worst seen 5e-7 of it)
scale = max(abs(q) for q in y)
if len(x) != len(y) or worst > max(1e-5, 2e-6 * scale):
    sys.exit("%s: logits differ by %g (largest |logit| %g)" % (t, worst, scale))
PY
done
# the converted model differs from the BF16 original only by its quantisation: Q8_0 keeps the ids
"$VKF" generate --model $D/llama_tiny_q8_0.gguf --ids $IDS --greedy --ignore-eos --max-new-tokens 4 \
  --json >"$tmp/q.json" 2>/dev/null && "$VKF" generate --model tests/models/data/llama_tiny --ids $IDS \
  --greedy --ignore-eos --max-new-tokens 4 --json >"$tmp/o.json" 2>/dev/null &&
  python3 -c 'import json,sys; a,b=(json.load(open(f))["generated_ids"] for f in sys.argv[1:]); sys.exit(a!=b)' \
    "$tmp/q.json" "$tmp/o.json" && ok || bad "q8_0 vs the original: $(cat "$tmp/q.json" "$tmp/o.json")"

# Tokenizers from tokenizer.ggml.*: the BPE goldens' texts, except those holding an added token
# with lstrip/rstrip (GGUF token types cannot say it; llama.cpp drops it too).
for name in gpt2 llama3 qwen2 smollm; do
  python3 - "$VKF" "$name" <<'PY' && ok || bad "tokenizer $name"
import json, subprocess, sys
vkf, name = sys.argv[1:]
doc = json.load(open("tests/models/golden/bpe/%s.json" % name, encoding="utf-8"))
src = json.load(open("tests/models/data/%s/tokenizer.json" % name, encoding="utf-8"))
strip = [a["content"] for a in src.get("added_tokens", []) if a["lstrip"] or a["rstrip"]]
cases = [c for c in doc["texts"] if not any(s in c["text"] for s in strip)]
run = subprocess.run([vkf, "tokenize", "--json", "--model", "tests/models/data/gguf/tok_%s.gguf" % name,
                      "--"] + [c["text"] for c in cases], capture_output=True)
if run.returncode:
    sys.exit(run.stderr.decode())
got = json.loads(run.stdout)["texts"]
bad = [(a, b) for a, b in zip(got, cases) if a != b]
if len(got) != len(cases) or bad or len(cases) < 20:
    sys.exit("%d of %d differ: %s" % (len(bad), len(cases), bad[:2]))
PY
done

# A SentencePiece ("llama") vocabulary: transformers' GGUFLlamaConverter's ids (merges made from
# the scores, byte fallback, the Llama normalizer, BOS added, <s> </s> <unk> special).
python3 - "$VKF" <<'PY' && ok || bad "SentencePiece GGUF tokenizer"
import json, subprocess, sys
vkf = sys.argv[1]
cases = json.load(open("tests/models/golden/gguf/tok_spm.json", encoding="utf-8"))["texts"]
run = subprocess.run([vkf, "tokenize", "--json", "--model", "tests/models/data/gguf/tok_spm.gguf", "--"]
                     + [c["text"] for c in cases], capture_output=True)
if run.returncode:
    sys.exit(run.stderr.decode())
got = json.loads(run.stdout)["texts"]
bad = [(a["text"], a["ids"], c["ids"]) for a, c in zip(got, cases) if a["ids"] != c["ids"]]
if bad or len(got) != len(cases):
    sys.exit("differ: %s" % bad[:2])
PY

# Bad files and paths.
expect_error generate "missing .gguf" "no.gguf" --model "$tmp/no.gguf" --ids 1
printf 'GGUF\3\0\0\0' >"$tmp/short.gguf"
# patch_kv SRC DST KEY VALUE: DST is SRC with the scalar metadata KEY set to VALUE in its own type.
patch_kv() {
  python3 - "$@" <<'PY' || bad "patch_kv $3"
import struct, sys
src, dst, key, value = sys.argv[1:]
d = bytearray(open(src, "rb").read())
k = struct.pack("<Q", len(key)) + key.encode()
i = d.find(k) + len(k)
fmt = {4: "<I", 5: "<i", 6: "<f", 10: "<Q", 11: "<q", 12: "<d"}[struct.unpack("<I", d[i:i + 4])[0]]
v = float(value) if fmt in ("<f", "<d") else int(value)
d[i + 4:i + 4 + struct.calcsize(fmt)] = struct.pack(fmt, v)
open(dst, "wb").write(d)
PY
}
# A NaN rms epsilon (JSON cannot carry one: it must not turn into "the default"), a zero or
# negative one, and a zero width (it was reported as a rope dimension that "differs from the head
# size 0"): each refused by its key with what is allowed.
gguf_case() { # NAME KEY VALUE NEEDLE [SRC]
  patch_kv "${5:-tests/models/data/gguf/llama_tiny_f16.gguf}" "$tmp/patched.gguf" "$2" "$3"
  expect_error generate "$1" "patched.gguf: metadata \"$2\" is $4" --model "$tmp/patched.gguf" --ids 1,2
}
gguf_case "NaN rms epsilon" llama.attention.layer_norm_rms_epsilon nan "nan, not a positive finite number"
gguf_case "rms epsilon 0" llama.attention.layer_norm_rms_epsilon 0 "0, not a positive finite number"
gguf_case "rms epsilon -1e-5" llama.attention.layer_norm_rms_epsilon -1e-5 "-1e-05, not a positive finite number"
gguf_case "embedding_length 0" llama.embedding_length 0 "0; 1 to 2147483647 allowed"
gguf_case "head_count 0" llama.attention.head_count 0 "0; 1 to 2147483647 allowed"
gguf_case "gpt2 epsilon 0" gpt2.attention.layer_norm_epsilon 0 "0, not a positive finite number" \
  tests/models/data/gguf/gpt2_tiny_mixed.gguf
gguf_case "gpt2 embedding_length 0" gpt2.embedding_length 0 "0; 1 to 2147483647 allowed" \
  tests/models/data/gguf/gpt2_tiny_mixed.gguf
rm -f "$tmp/patched.gguf"
expect_error generate "truncated header" "short.gguf: truncated at byte 8" --model "$tmp/short.gguf" --ids 1
head -c 5000 $D/llama_tiny_q8_0.gguf >"$tmp/cut.gguf"
expect_error generate "truncated tensors" "cut.gguf: .*runs past the end" --model "$tmp/cut.gguf" --ids 1
expect_error tokenize "no tokenizer in the GGUF" "tokenizer.ggml.model\" is missing" \
  --model $D/llama_tiny_q8_0.gguf hello
cp $D/tok_smollm.gguf "$tmp/tok.gguf"
expect_error generate "tokenizer-only GGUF" "general.architecture\|hidden_size\|embedding_length" \
  --model "$tmp/tok.gguf" --ids 1
vkf_summary
