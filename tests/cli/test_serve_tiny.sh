#!/usr/bin/env bash
# vkf serve with tiny models (so the sanitizer lane runs it too): gpt2_tiny with the GPT-2
# tokenizer ("talk") and bert_tiny ("minibert"), behind an API key:
#  - 57 bad requests, each with its status and OpenAI's error JSON, and the server still serves;
#  - idle and trickling connections closed after --timeout while others are served; hostile
#    connections (bad request lines, huge URLs and headers, chunked bodies, slow senders past
#    --request-timeout, one client's connections past --client-connections) answered at once with
#    OpenAI's error JSON or closed in time;
#  - 8 slots under 32 clients x 8 requests, twice (some streamed, some dropped mid-stream): every
#    answer equal to `vkf generate`'s, none lost, no slot leaked, RSS bounded;
#  - SIGTERM with a stream in flight: it completes, the server exits 0 (1 on validation messages);
#  - on a copy of gpt2_tiny with 1024 positions (long generations): clients hanging up stop their
#    work at the next step; ~8 s of load and abuse together (streams, hang-ups, 2000-text
#    embeddings, slow senders; /health within a second, stream gaps bounded, nothing leaked),
#    then SIGTERM under load (--grace 1): 503s, streams ended with an error event and [DONE];
#  - one slot and a queue of one: the requests past them get 429;
#  - two servers behind nginx (Debian's nginx-light) as docs/serve/nginx.conf has them, the second
#    with --device all.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
source tests/cli/serve_lib.sh
# ASan runs the device steps and requests several times slower: the phases' time bounds stretch
grep -q __asan_init "$VKF" && export SERVE_CHECK_SLOW=3

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
# a vocabulary padded past the tokenizer (as Qwen2's and Phi-3's are): gpt2_tiny's 256 ids over a
# tokenizer of 128; the ids past it it samples decode as "" (transformers), never an error
PD=$tmp/padded
mkdir -p "$PD" "$tmp/minipkg"
cp tests/models/data/gpt2_tiny/* "$PD/"
python3 - tests/models/data/gpt2/tokenizer.json "$PD/tokenizer.json" 128 <<'PY' || bad "padded tokenizer"
import json, sys
t, k = json.load(open(sys.argv[1])), int(sys.argv[3])
v = {s: i for s, i in t["model"]["vocab"].items() if i < k}
t["model"]["vocab"] = v
split = lambda m: m.split(" ") if isinstance(m, str) else m
t["model"]["merges"] = [m for m in t["model"]["merges"] if all(p in v for p in split(m)) and "".join(split(m)) in v]
t["added_tokens"] = [a for a in t["added_tokens"] if a["id"] < k]
json.dump(t, open(sys.argv[2], "w"))
PY
"$VKF" generate --model "$PD" --prompt zq --greedy --max-new-tokens 5 --json >"$tmp/padded.json" 2>"$tmp/err" &&
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert max(d["generated_ids"]) >= 128, d' "$tmp/padded.json" &&
  ok || bad "vkf generate on a padded vocabulary (sampling ids past the tokenizer): $(cat "$tmp/err")"
cp -r tests/models/data/bert_tiny "$tmp/minipkg/model" # a pip package's folder: named minipkg
# --host is checked before any model loads: the error names it, not the missing model
"$VKF" serve --host 999.1.1.1 --model "$tmp/nothing" >/dev/null 2>"$tmp/err"
[ $? -ne 0 ] && grep -q -- "--host 999.1.1.1" "$tmp/err" && ok || bad "--host checked late: $(cat "$tmp/err")"
if start a --model "talk=$T" --model "minibert=tests/models/data/bert_tiny" --api-key "$KEY" \
  --model "padded=$PD" --model "$tmp/minipkg/model" --timeout 2 --request-timeout 3 \
  --client-connections 24; then
  phase bad "$URL" "$KEY" talk minibert
  phase slowloris "$URL"
  phase conn "$URL" "$KEY"
  phase details "$URL" "$KEY" talk padded "$tmp/padded.json" minipkg
  stop a "$PID"
  # --quiet: errors only (the model and slot lines are information)
  grep -q "slots of" "$tmp/a.err" && bad "--quiet printed: $(cat "$tmp/a.err")" || ok
fi

# ---- long generations: hang-ups, load and abuse, SIGTERM under load ----
L=$tmp/long
python3 tests/cli/serve_long_model.py "$T" "$L" 4096 || bad "serve_long_model.py"
if start l --model "talk=$L" --model "minibert=tests/models/data/bert_tiny" --api-key "$KEY" \
  --parallel 4 --max-queue 16 --grace 1 --timeout 5 --request-timeout 3; then
  phase cancel "$URL" "$KEY" talk
  phase abuse "$URL" "$KEY" talk minibert "$PID" 8 # sends the SIGTERM itself
  wait "$PID"
  rc=$?
  if [ $rc -eq 0 ]; then ok; else bad "l exited $rc after SIGTERM under load: $(why_exit l)"; fi
fi

if start b --model "talk=$T" --api-key "$KEY" --parallel 8 --max-queue 512; then
  # under ASan, llvmpipe's aligned per-workgroup allocations grow in ASan's allocator (LeakSanitizer
  # at exit still checks ours): the RSS bound is for the real build
  rss_mb=64
  grep -q __asan_init "$VKF" && rss_mb=0
  phase load "$URL" "$KEY" talk "$T" "$PID" "$rss_mb"
  # SIGTERM while a reply streams: it still completes, then the server exits 0
  python3 - "$URL" "$KEY" "$tmp/streaming" >"$tmp/inflight" 2>&1 <<'PY' &
import json, sys, urllib.request
url, key = sys.argv[1:3]
req = urllib.request.Request(url + "/v1/completions", method="POST", headers={
    "Content-Type": "application/json", "Authorization": "Bearer " + key},
    data=json.dumps({"model": "talk", "prompt": "zq", "max_tokens": 40, "temperature": 0,
                     "stream": True}).encode())
resp = urllib.request.urlopen(req)
first = resp.read(64)  # the stream has begun: the shell sends SIGTERM now
open(sys.argv[-1], "w").close()
events = [l for l in (first + resp.read()).decode().split("\n\n") if l and l[0] != ":"]
print("complete" if events[-1] == "data: [DONE]" else "cut: %r" % events[-2:])
PY
  client=$!
  for _ in $(seq 600); do [ -e "$tmp/streaming" ] || ! kill -0 $client 2>/dev/null && break; sleep 0.1; done
  stop b "$PID"
  wait $client
  grep -q '^complete$' "$tmp/inflight" && ok || bad "the request in flight at SIGTERM: $(cat "$tmp/inflight")"
fi


# ---- a queue of one behind one slot: 429 past it ----
if start q --model "talk=$T" --parallel 1 --max-queue 1; then
  phase queue "$URL" talk
  stop q "$PID"
fi

# ---- two servers behind nginx (the second with --device all: a replica on every device) ----
if command -v nginx >/dev/null && start c1 --model "talk=$T" --parallel 4; then
  U1=$URL P1=$PID
  if start c2 --model "talk=$T" --parallel 4 --device all; then
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
