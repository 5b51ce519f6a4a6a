#!/usr/bin/env bash
# vkf chat with the default model (SmolLM2-135M-Instruct, its GGUF's ChatML template) against
# tools/goldens/make_smollm2_golden.py: a system + multi-turn conversation's greedy reply equals
# transformers' greedy generate up to EOS on the jinja2-rendered prompt; a two-turn session on
# stdin (the KV cache kept across turns) replies as a fresh run on the whole conversation does;
# bad input is one "vkf: ..." line.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
G=tests/models/golden/smollm2

python3 -c 'import json,sys; json.dump(json.load(open(sys.argv[1]))["messages"], open(sys.argv[2], "w"))' \
  $G/chat.json "$tmp/m.json"
"$VKF" chat --messages "$tmp/m.json" --greedy --json >"$tmp/r.json" 2>"$tmp/err" || bad "chat --messages: $(cat "$tmp/err")"
python3 - "$tmp/r.json" $G/chat.json <<'PY' && ok || bad "reply vs transformers"
import json, sys
got, want = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
if got["ids"] != want["reply_ids"] or got["stop"] != "end":
    sys.exit("ids %s (%s)\nwant %s" % (got["ids"], got["stop"], want["reply_ids"]))
if got["prompt_tokens"] != len(want["prompt_ids"]):
    sys.exit("prompt of %d tokens, want %d" % (got["prompt_tokens"], len(want["prompt_ids"])))
PY

# Two turns on stdin: the second reply reuses the cache of the first and must equal a fresh run;
# then /reset forgets the conversation (the system prompt stays): the first question asked again
# gets the first turn's answer; /exit stops reading. (One session for both: the model loads once.)
printf 'Which planet is known as the Red Planet?\nWhy is it red?\n/reset\nWhich planet is known as the Red Planet?\n/exit\nnot read\n' |
  "$VKF" chat --greedy --system "You are a terse assistant. Answer in one sentence." \
    --max-new-tokens 40 >"$tmp/two.txt" 2>"$tmp/err" || bad "two turns: $(cat "$tmp/err")"
python3 - "$tmp/two.txt" "$tmp/m2.json" <<'PY' && ok || bad "two turns: $(cat "$tmp/two.txt")"
import json, sys
lines = open(sys.argv[1]).read().split("\n")
if len(lines) != 4 or not lines[0] or not lines[1]:
    sys.exit("want three reply lines")
json.dump([{"role": "system", "content": "You are a terse assistant. Answer in one sentence."},
           {"role": "user", "content": "Which planet is known as the Red Planet?"},
           {"role": "assistant", "content": lines[0]},
           {"role": "user", "content": "Why is it red?"}], open(sys.argv[2], "w"))
PY
"$VKF" chat --messages "$tmp/m2.json" --greedy --max-new-tokens 40 >"$tmp/fresh.txt" 2>"$tmp/err" ||
  bad "fresh run: $(cat "$tmp/err")"
[ "$(sed -n 2p "$tmp/two.txt")" == "$(head -1 "$tmp/fresh.txt")" ] && ok ||
  bad "second turn '$(sed -n 2p "$tmp/two.txt")' vs fresh '$(head -1 "$tmp/fresh.txt")'"
[ "$(wc -l <"$tmp/two.txt")" -eq 3 ] && [ "$(sed -n 1p "$tmp/two.txt")" == "$(sed -n 3p "$tmp/two.txt")" ] &&
  ok || bad "reset: $(cat "$tmp/two.txt")"

# --json with stdin lines: a JSON object per reply, as --messages prints its one
printf 'hi\nhello\n' | "$VKF" chat --greedy --max-new-tokens 4 --json >"$tmp/lines.json" 2>"$tmp/err" &&
  python3 -c 'import json, sys; r = [json.loads(l) for l in open(sys.argv[1])]; assert len(r) == 2 and all(x["reply"] and x["ids"] for x in r), r' \
    "$tmp/lines.json" && ok || bad "chat --json on stdin lines: $(cat "$tmp/lines.json" "$tmp/err")"

# Bad input.
echo '{"role": "user"}' >"$tmp/bad.json"
expect_error chat "messages not a list" "not a JSON list" --messages "$tmp/bad.json"
echo '[{"role": "user", "content": 5}]' >"$tmp/bad.json"
expect_error chat "content not a string" "message 0 is not an object with string" --messages "$tmp/bad.json"
echo '[]' >"$tmp/bad.json"
expect_error chat "no messages" "no messages" --messages "$tmp/bad.json"
# --messages is read and checked before the model loads (a missing model is not what is said);
# a JSON error names its line and byte; a \u0000 is refused by name, never cut there
printf '[{"role": "user",\n  "content": "hi"' >"$tmp/bad.json"
expect_error chat "truncated JSON, before the model" "bad.json: not valid JSON (line 2, byte" \
  --model "$tmp/no-model" --messages "$tmp/bad.json"
echo '[{"role": "user", "content": "a\u0000b c d"}]' >"$tmp/bad.json"
expect_error chat "NUL in a message" "messages\[0\].content holds a NUL character" \
  --model "$tmp/no-model" --messages "$tmp/bad.json"
echo '[{"role": "user", "content": "hi"}]' >"$tmp/ok.json"
mkdir -p "$tmp/gpt2"
cp tests/models/data/gpt2_tiny/* tests/models/data/gpt2/tokenizer.json "$tmp/gpt2/"
expect_error chat "model without a chat template" "gpt2/tokenizer_config.json\|no chat template" \
  --model "$tmp/gpt2" --messages "$tmp/ok.json"
echo '{"chat_template": "{% for m in messages %}{{ m.content | nosuchfilter }}{% endfor %}"}' \
  >"$tmp/gpt2/tokenizer_config.json"
expect_error chat "template outside the subset" "chat_template: .*nosuchfilter" \
  --model "$tmp/gpt2" --messages "$tmp/ok.json"
echo '{"chat_template": "{% for m in messages %}{% if m.role == \"system\" %}{{ m.content }}{% endif %}{% endfor %}"}' \
  >"$tmp/gpt2/tokenizer_config.json"
expect_error chat "a template that renders nothing" "renders this conversation to no tokens" \
  --model "$tmp/gpt2" --messages "$tmp/ok.json"
expect_error chat "context too small" "the conversation is .* tokens; the context holds 8" \
  --messages "$tmp/m.json" --ctx 8
# a NUL byte in a stdin line: refused, never the message cut at it
printf 'a\0b c d\n' | "$VKF" chat --greedy --max-new-tokens 4 >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "a line of stdin holds a NUL byte" "$tmp/err" && ok || bad "NUL in a stdin line: $(cat "$tmp/err")"
"$VKF" chat --bogus 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "unknown option '--bogus'" "$tmp/err" && ok || bad "bad flag: $(cat "$tmp/err")"
vkf_summary
