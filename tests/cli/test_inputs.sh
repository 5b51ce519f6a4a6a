#!/usr/bin/env bash
# INPUTs from a file or stdin: `--file F` (one text or image path per line; blank lines and \r\n
# ends skipped) and `-` (as an INPUT or as F: stdin) give classify, embed, tokenize and generate
# exactly what the same inputs as arguments give (those paths are checked against Hugging Face by
# their own tests). embed's truncation to max_seq_length: the vectors of
# tests/cli/golden/embed_truncation.json (tools/goldens/make_truncation_golden.py: sentence-transformers'
# truncation, with PyTorch) and one warning naming the text and its untruncated token count.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
D=tests/models/data

# same NAME A B: files A and B are byte-identical.
same() { cmp -s "$2" "$3" && ok || bad "$1: $(diff "$2" "$3" | head -5)"; }
# run NAME OUT ARGS... (stdin from $STDIN if set): exit 0.
run() {
  local name=$1 out=$2
  shift 2
  "$VKF" "$@" <"${STDIN:-/dev/null}" >"$out" 2>"$tmp/err" && ok || bad "$name: exit $?: $(cat "$tmp/err")"
}

# tokenize: a file with a blank line and a \r\n end; stdin as '-' and as --file -; mixed order.
printf 'A man is eating food.\r\n\nHi there\n' >"$tmp/texts.txt"
run "tokenize args" "$tmp/t_args" tokenize --json "A man is eating food." "Hi there"
run "tokenize --file" "$tmp/t_file" tokenize --json --file "$tmp/texts.txt"
same "tokenize --file" "$tmp/t_args" "$tmp/t_file"
STDIN="$tmp/texts.txt" run "tokenize -" "$tmp/t_dash" tokenize --json -
same "tokenize -" "$tmp/t_args" "$tmp/t_dash"
STDIN="$tmp/texts.txt" run "tokenize --file -" "$tmp/t_fdash" tokenize --json --file -
same "tokenize --file -" "$tmp/t_args" "$tmp/t_fdash"
run "tokenize mixed" "$tmp/t_mixed1" tokenize --json first "A man is eating food." "Hi there" last
run "tokenize mixed" "$tmp/t_mixed2" tokenize --json first --file "$tmp/texts.txt" last
same "tokenize mixed order" "$tmp/t_mixed1" "$tmp/t_mixed2"

# embed: the same document from a file and from stdin.
run "embed args" "$tmp/e_args" embed --json "A man is eating food." "Hi there"
run "embed --file" "$tmp/e_file" embed --json --file "$tmp/texts.txt"
same "embed --file" "$tmp/e_args" "$tmp/e_file"
STDIN="$tmp/texts.txt" run "embed -" "$tmp/e_dash" embed --json -
same "embed -" "$tmp/e_args" "$tmp/e_dash"

# classify: image paths from a file and from stdin.
imgs=(tests/fuzz/seeds/image/rgba.png tests/fuzz/seeds/image/grey.png)
printf '%s\n' "${imgs[@]}" >"$tmp/images.txt"
run "classify args" "$tmp/c_args" classify --json "${imgs[@]}"
run "classify --file" "$tmp/c_file" classify --json --file "$tmp/images.txt"
same "classify --file" "$tmp/c_args" "$tmp/c_file"
STDIN="$tmp/images.txt" run "classify -" "$tmp/c_dash" classify --json -
same "classify -" "$tmp/c_args" "$tmp/c_dash"

# generate: prompts from a file and from --prompt - (a tokenizer.json turns text into ids).
cp -r $D/gpt2_tiny "$tmp/talk"
cp $D/gpt2/tokenizer.json "$tmp/talk/"
printf 'zq\nz q\n' >"$tmp/prompts.txt"
gen=(generate --model "$tmp/talk" --greedy --ignore-eos --max-new-tokens 4 --json)
run "generate args" "$tmp/g_args" "${gen[@]}" --prompt zq --prompt "z q"
run "generate --file" "$tmp/g_file" "${gen[@]}" --file "$tmp/prompts.txt"
same "generate --file" "$tmp/g_args" "$tmp/g_file"
STDIN="$tmp/prompts.txt" run "generate --prompt -" "$tmp/g_dash" "${gen[@]}" --prompt -
same "generate --prompt -" "$tmp/g_args" "$tmp/g_dash"

# Errors: a missing file, stdin twice: one "vkf: ..." line, exit 1.
expect_error tokenize "missing --file" "--file $tmp/nosuch.txt: cannot open" --file "$tmp/nosuch.txt"
expect_error tokenize "stdin twice" "stdin ('-') is given twice" - --file -

# Truncation: the long text is cut at max_seq_length as sentence-transformers cuts it, with one
# warning naming text 1 and its token count; the short text gets none.
G=tests/cli/golden/embed_truncation.json
mapfile -t gtexts < <(python3 -c "import json,sys; [print(t) for t in json.load(open(sys.argv[1]))['texts']]" $G)
if "$VKF" embed --json "${gtexts[@]}" >"$tmp/trunc.json" 2>"$tmp/err"; then ok; else bad "embed long: $(cat "$tmp/err")"; fi
want=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(\"vkf embed: warning: text 1 has %d tokens; truncated to the model's maximum of %d\" % (d['tokens_untruncated'][1], d['max_seq_length']))" $G)
[ "$(cat "$tmp/err")" = "$want" ] && ok || bad "truncation warning: '$(cat "$tmp/err")', want '$want'"
python3 - "$tmp/trunc.json" $G <<'PY' && ok || bad "truncated embeddings"
import json, math, sys
got, want = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
for i, (e, w) in enumerate(zip(got["embeddings"], want["embeddings"])):
    assert e["tokens"] == want["tokens_used"][i], (i, e["tokens"], want["tokens_used"][i])
    a, b = e["embedding"], w
    c = sum(x * y for x, y in zip(a, b)) / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))
    assert c >= 0.9999, (i, c)
PY
# tokenize does not truncate (as tokenizer(text) does not): the full count, no warning.
"$VKF" tokenize --json "${gtexts[1]}" >"$tmp/tok_long" 2>"$tmp/err"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); w=json.load(open(sys.argv[2])); assert len(d['texts'][0]['ids']) == w['tokens_untruncated'][1]" "$tmp/tok_long" $G &&
  [ ! -s "$tmp/err" ] && ok || bad "tokenize long text: $(cat "$tmp/err")"

vkf_summary
