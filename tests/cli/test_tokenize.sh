#!/usr/bin/env bash
# vkf tokenize: --json equals, byte for byte, what Hugging Face's tokenizer gives for the same texts
# (tests/models/golden/forward/tokenize_*.json from tools/goldens/make_forward_golden.py; BPE tokenizers'
# tests/models/golden/bpe/*.json from tools/goldens/make_bpe_golden.py); the text form;
# bad input giving one "vkf: ..." line and exit status 1.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
G=tests/models/golden/forward

# check NAME GOLDEN [--model DIR]: run on the golden's texts; the output must equal the golden with
# its "model" field set to what the command printed (the default model's path differs per machine).
check() {
  local name=$1 golden=$2
  shift 2
  python3 - "$VKF" "$golden" "$@" <<'PY' && ok || bad "$name"
import json, subprocess, sys
vkf, golden = sys.argv[1], sys.argv[2]
want = open(golden, encoding="utf-8").read()
doc = json.loads(want)
texts = [t["text"] for t in doc["texts"]]
run = subprocess.run([vkf, "tokenize", "--json"] + sys.argv[3:] + ["--"] + texts, capture_output=True)
if run.returncode != 0:
    sys.exit("exit %d: %s" % (run.returncode, run.stderr.decode()))
got = run.stdout.decode("utf-8")
model = json.loads(got)["model"]
want = want.replace(json.dumps(doc["model"], ensure_ascii=False), json.dumps(model, ensure_ascii=False), 1)
if got != want:
    for a, b in zip(json.loads(got)["texts"], json.loads(want)["texts"]):
        if a != b:
            print("differs:\n  got  %s\n  want %s" % (a, b), file=sys.stderr)
    sys.exit(1)
PY
}
check "all-MiniLM-L6-v2 (default model)" $G/tokenize_minilm.json
check "bert_tiny" $G/tokenize_bert_tiny.json --model tests/models/data/bert_tiny
for name in gpt2 llama3 llama2 qwen2 qwen2_nfc smollm digits_nmt; do
  check "BPE $name" tests/models/golden/bpe/$name.json --model tests/models/data/$name
done
# tokenizer.json components, one family each (tools/goldens/make_tokenizer_components_golden.py)
for name in bert bert_cased bert_raw norms norms_nfc ctc punct_removed punct_isolated punct_prev \
  punct_next punct_contiguous split_removed split_isolated_invert split_prev split_next_invert \
  split_contiguous split_removed_invert chardelim bpe_prefix metaspace_first split_regex_isolated \
  split_regex_removed split_regex_prev split_regex_next_invert split_regex_contiguous \
  split_regex_empty split_regex_lookaround split_gpt2_removed_invert replace_regex unicode_scripts \
  unicode_scripts_digits byte_level_norm; do
  check "components $name" tests/models/golden/bpe/tokcomp_$name.json --model tests/models/data/tokcomp_$name
done
# Encoder-decoder tokenizers (tools/goldens/make_seq2seq_tokenizers.py): T5's Unigram tokenizer.json (as
# transformers 4.38 converts it, and in the Hub's older WhitespaceSplit form), Marian's
# SentencePiece models + vocab.json, BART's tokenizer.json and its vocab.json + merges.txt.
for name in tok_t5 tok_t5_hub tok_marian tok_bart tok_bart_slow tok_t5_spiece; do
  check "seq2seq $name" tests/models/golden/seq2seq/$name.json --model tests/models/data/$name
done
# T5 without its tokenizer.json: spiece.model converted as transformers converts it (T5Converter)
# gives the fast tokenizer's own results; a SentencePiece model of another class is refused.
mkdir -p "$tmp/t5_spiece"
cp tests/models/data/tok_t5/{spiece.model,tokenizer_config.json,special_tokens_map.json} "$tmp/t5_spiece/"
check "tok_t5 from spiece.model alone" tests/models/golden/seq2seq/tok_t5.json --model "$tmp/t5_spiece"
sed 's/"T5Tokenizer"/"AlbertTokenizer"/' tests/models/data/tok_t5/tokenizer_config.json >"$tmp/t5_spiece/tokenizer_config.json"
expect_error tokenize "spiece.model of another class" 'tokenizer_class "AlbertTokenizer" is not converted (only T5' --model "$tmp/t5_spiece" hello
# A bad added_tokens_decoder entry, through both folder readers that copy it (spiece.model,
# vocab.json + merges.txt): one line naming the entry.
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["added_tokens_decoder"]={"x1": {"content": "<a>"}}; json.dump(c, open(sys.argv[2], "w"))' \
  tests/models/data/tok_t5/tokenizer_config.json "$tmp/t5_spiece/tokenizer_config.json"
expect_error tokenize "spiece.model, bad added token" 'added_tokens_decoder\["x1"\] is not an id with a content' --model "$tmp/t5_spiece" hello
cp -r tests/models/data/tok_bart_slow "$tmp/bart_slow"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["added_tokens_decoder"]={"7": {"content": 7}}; json.dump(c, open(sys.argv[1], "w"))' \
  "$tmp/bart_slow/tokenizer_config.json"
expect_error tokenize "merges.txt, bad added token" 'added_tokens_decoder\["7"\] is not an id with a content' --model "$tmp/bart_slow" hello
mkdir -p "$tmp/marian"
cp tests/models/data/tok_marian/* "$tmp/marian/"
rm "$tmp/marian/target.spm"
expect_error tokenize "Marian without target.spm" "marian/target.spm" --model "$tmp/marian" hello
cp tests/models/data/tok_marian/target.spm "$tmp/marian/"
head -c 300 tests/models/data/tok_marian/source.spm >"$tmp/marian/source.spm"
expect_error tokenize "truncated source.spm" "marian/source.spm: not a SentencePiece model" --model "$tmp/marian" hello
echo "not a model" >"$tmp/plain.txt"
expect_error tokenize "a file that is no GGUF" "model .*plain.txt: neither a directory nor a GGUF file" --model "$tmp/plain.txt" hello
printf 'garbage, not a protobuf\n' >"$tmp/marian/source.spm"
expect_error tokenize "garbage source.spm" "marian/source.spm: not a SentencePiece model" --model "$tmp/marian" hello
cp tests/models/data/tok_marian/source.spm "$tmp/marian/"
rm "$tmp/marian/vocab.json"
expect_error tokenize "Marian without vocab.json" "marian/vocab.json" --model "$tmp/marian" hello
mkdir -p "$tmp/badunigram"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); d["model"]["vocab"][5] = ["x"]; json.dump(d, open(sys.argv[2], "w"))' \
  tests/models/data/tok_t5/tokenizer.json "$tmp/badunigram/tokenizer.json"
expect_error tokenize "malformed Unigram vocab" 'badunigram/tokenizer.json: model.vocab\[5\] is not \[piece, score\]' --model "$tmp/badunigram" hello

# Text form: one block per text with its ids and tokens.
"$VKF" tokenize --model tests/models/data/bert_tiny "A man is eating food." >"$tmp/out" 2>&1 && ok || bad "text: $(cat "$tmp/out")"
grep -q '^"A man is eating food.": 8 tokens$' "$tmp/out" && grep -q "^  tokens: \[CLS\] a man is eating food . \[SEP\]$" "$tmp/out" &&
  ok || bad "text form: $(cat "$tmp/out")"

# No truncation, as tokenizer(text): 200 words give 202 ids past the model's 128.
long=$(python3 -c 'print(" ".join(["man"] * 200))')
"$VKF" tokenize --model tests/models/data/bert_tiny --json "$long" >"$tmp/long" 2>&1 &&
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert len(d["texts"][0]["ids"]) == 202' "$tmp/long" &&
  ok || bad "long text: $(head -c 300 "$tmp/long")"

expect_error tokenize "no tokenizer files" "vocab.txt, source.spm" --model tests/models/data/vit_tiny hello
expect_error tokenize "invalid UTF-8" "text 1: text is not valid UTF-8: byte 0xFF" --model tests/models/data/bert_tiny ok "$(printf 'a\xffb')"
expect_error tokenize "missing folder" "no-such-model" --model "$tmp/no-such-model" hello
mkdir -p "$tmp/badpattern"
# The hand-written GPT-2, Llama-3 and Qwen2 patterns against Oniguruma: each pattern wrapped in
# (?:...) is unknown to pretokenize.c, so it runs on the regex engine, and must give the goldens.
for name in gpt2 llama3 qwen2; do
  mkdir -p "$tmp/onig_$name"
  python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
def wrap(p):
    if p.get("type") == "Sequence":
        for q in p["pretokenizers"]: wrap(q)
    elif p.get("type") == "Split" and "Regex" in p["pattern"]:
        p["pattern"]["Regex"] = "(?:" + p["pattern"]["Regex"] + ")"
    elif p.get("type") == "ByteLevel" and p.get("use_regex", True):
        # GPT-2: ByteLevel'"'"'s own regex, moved into a Split before a regex-less ByteLevel
        p["use_regex"] = False
        t["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "(?:'"'"'s|'"'"'t|'"'"'re|'"'"'ve|'"'"'m|'"'"'ll|'"'"'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+)"}, "behavior": "Isolated", "invert": False}, dict(p)]}
wrap(t["pre_tokenizer"])
json.dump(t, open(sys.argv[2], "w"), ensure_ascii=False)
' tests/models/data/$name/tokenizer.json "$tmp/onig_$name/tokenizer.json"
  for f in tests/models/data/$name/*; do [ "$(basename "$f")" = tokenizer.json ] || cp "$f" "$tmp/onig_$name/"; done
  check "BPE $name on Oniguruma" tests/models/golden/bpe/$name.json --model "$tmp/onig_$name"
done

# A pattern of no known tokenizer runs on Oniguruma (the 4-digit runs: one word, one token each
# here); one that does not compile is refused naming it.
sed 's/p{N}{1,3}/p{N}{1,4}/' tests/models/data/llama3/tokenizer.json >"$tmp/badpattern/tokenizer.json"
"$VKF" tokenize --model "$tmp/badpattern" "in 2024 or 12345" >"$tmp/out" 2>"$tmp/err" &&
  grep -q '"in 2024 or 12345": ' "$tmp/out" && ok || bad "other pre-tokenizer pattern: $(cat "$tmp/err")"
sed 's/p{N}{1,3}/p{Nope}/' tests/models/data/llama3/tokenizer.json >"$tmp/badpattern/tokenizer.json"
expect_error tokenize "bad pre-tokenizer pattern" 'regex .*p{Nope}.* does not compile: invalid character property name' --model "$tmp/badpattern" hello
"$VKF" tokenize --model tests/models/data/bert_tiny >/dev/null 2>&1
[ $? -eq 2 ] && ok || bad "no text: exit status"
# A normalizer chain that multiplies the text (8 x Replace "a" -> 10 a's: 53 bytes to 5 GB) is
# refused at once, with the reason, not after minutes and gigabytes.
mkdir -p "$tmp/blowup"
python3 - "$tmp/blowup/tokenizer.json" <<'PY'
import json, sys
rep = {"type": "Replace", "pattern": {"String": "a"}, "content": "a" * 10}
json.dump({"model": {"type": "BPE", "vocab": {c: i for i, c in enumerate("abcdefghijklmnopqrstuvwxyz ")},
                     "merges": []},
           "normalizer": {"type": "Sequence", "normalizers": [rep] * 8}}, open(sys.argv[1], "w"))
PY
expect_error tokenize "normalizer blow-up" "the normalizer makes more than 64 times a piece of the 53 bytes of text plus 1 MiB" --model "$tmp/blowup" "a banana and a papaya and an avocado are all fruits o"

vkf_summary
