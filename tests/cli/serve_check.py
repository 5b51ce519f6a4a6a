#!/usr/bin/env python3
"""Client side of tests/cli/test_serve.sh, standard library only. Each phase prints "ok NAME" or
"FAIL NAME: why" lines and exits 1 when any failed.

  serve_check.py exact URL KEY MODEL EMBEDDER DIR  answers equal to `vkf chat`, `vkf generate` and
                                                   `vkf embed` (their JSON in DIR); streams join
                                                   to the same text; n, stop strings, usage
  serve_check.py bad URL KEY MODEL EMBEDDER        40+ bad requests: status and OpenAI's error
                                                   JSON each, and the server still answers
  serve_check.py load URL KEY MODEL DIR PID [MB]   32 clients x 8 requests against DIR/expected
                                                   (some streamed, some dropped mid-stream): all
                                                   right, nothing leaked, RSS bounded
  serve_check.py slowloris URL                     idle and trickling connections are closed
                                                   after the timeout while others are served
  serve_check.py queue URL MODEL                   a full queue answers 429
  serve_check.py conn URL KEY                      hostile connections (server: --timeout 2
                                                   --request-timeout 3 --client-connections 24):
                                                   bad request lines, oversized URLs, headers and
                                                   bodies, chunked bodies, slow senders, one
                                                   client's connection limit, each answered at
                                                   once with OpenAI's error JSON or closed in time
  serve_check.py details URL KEY MODEL PADDED JSON NAME  empty prompt, step metrics, a padded
                                                   vocabulary (JSON: vkf generate's), folder names
  serve_check.py cancel URL KEY MODEL              clients that hang up (plain, streamed, queued)
                                                   stop their generations at the next step
  serve_check.py abuse URL KEY MODEL EMBEDDER PID [S]  load and abuse for S seconds, then SIGTERM
                                                   under load (server: --parallel 4, --grace 1)
"""
import http.client
import json
import math
import os
import random
import select
import socket
import sys
import threading
import time
import urllib.parse

failures = []
# the time bounds of the conn, cancel and abuse phases, multiplied (test_serve_tiny.sh sets 3 for
# the ASan build, whose device steps and requests run several times slower)
SLOW = float(os.environ.get("SERVE_CHECK_SLOW", "1"))


def check(name, cond, why=""):
    if cond:
        print("ok", name)
    else:
        print("FAIL %s: %s" % (name, why))
        failures.append(name)


def npy_rows(path):
    """A float32 [rows, cols] .npy as lists of rows."""
    import struct
    data = open(path, "rb").read()
    hlen = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + hlen].decode()
    shape = tuple(int(x) for x in header.split("'shape': (")[1].split(")")[0].split(",") if x.strip())
    vals = struct.unpack("<%df" % (len(data[10 + hlen:]) // 4), data[10 + hlen:])
    return [vals[r * shape[1]:(r + 1) * shape[1]] for r in range(shape[0])]


def conn(url, timeout=300):
    u = urllib.parse.urlparse(url)
    return http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)


def request(url, method, path, body=None, key=None, headers=None, raw=None):
    c = conn(url)
    h = {"Content-Type": "application/json"}
    if key:
        h["Authorization"] = "Bearer " + key
    h.update(headers or {})
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    c.request(method, path, body=data, headers=h)
    r = c.getresponse()
    text = r.read()
    c.close()
    return r.status, r.getheader("Content-Type") or "", text


def post(url, path, body, key):
    status, ctype, text = request(url, "POST", path, body, key)
    try:
        return status, json.loads(text)
    except ValueError:
        return status, {"_raw": text.decode("utf-8", "replace")}


def stream(url, path, body, key, stop_after=None):
    """The SSE events of a streamed request (stop_after: close after that many)."""
    c = conn(url)
    c.request("POST", path, body=json.dumps(body).encode(),
              headers={"Content-Type": "application/json", "Authorization": "Bearer " + key})
    r = c.getresponse()
    events, buf = [], b""
    if r.status != 200:
        return r.status, [json.loads(r.read())]
    while True:
        chunk = r.read1(65536) if hasattr(r, "read1") else r.read(1)
        if not chunk:
            break
        buf += chunk
        while b"\n\n" in buf:
            ev, buf = buf.split(b"\n\n", 1)
            if ev.startswith(b":"):  # an SSE comment (the server's keep-alive)
                continue
            assert ev.startswith(b"data: "), ev
            data = ev[6:].decode()
            events.append("[DONE]" if data == "[DONE]" else json.loads(data))
            if stop_after and len(events) >= stop_after:
                r.close()  # the answer says Connection: close: the response holds the socket
                c.close()
                return 200, events
    c.close()
    return r.status, events


def metrics(url):
    _, _, text = request(url, "GET", "/metrics")
    out = {}
    for line in text.decode().splitlines():
        if line and not line.startswith("#"):
            k, v = line.rsplit(" ", 1)
            out[k] = float(v)
    return out


def exact(url, key, model, embedder, d):
    chat = json.load(open(os.path.join(d, "chat.json")))
    messages = json.load(open(os.path.join(d, "messages.json")))
    body = {"model": model, "messages": messages, "temperature": 0, "max_tokens": 16}
    status, r = post(url, "/v1/chat/completions", body, key)
    got = r.get("choices", [{}])[0].get("message", {}).get("content") if status == 200 else None
    check("chat = vkf chat", got == chat["reply"], "%s %r vs %r" % (status, got, chat["reply"]))
    check("chat object", r.get("object") == "chat.completion" and r.get("model") == model and
          r["id"].startswith("chatcmpl-") and r["choices"][0]["finish_reason"] == chat["stop"] and
          r["usage"] == {"prompt_tokens": chat["prompt_tokens"], "completion_tokens": len(chat["ids"]),
                         "total_tokens": chat["prompt_tokens"] + len(chat["ids"])}, json.dumps(r)[:400])
    status, ev = stream(url, "/v1/chat/completions",
                        dict(body, stream=True, stream_options={"include_usage": True}), key)
    text = "".join(e["choices"][0]["delta"].get("content", "") for e in ev
                   if isinstance(e, dict) and e.get("choices"))
    check("chat stream joins to the same text", text == chat["reply"], repr(text))
    check("chat stream form", ev[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""} and
          ev[-1] == "[DONE]" and ev[-2]["choices"] == [] and ev[-2]["usage"]["completion_tokens"] == len(chat["ids"])
          and ev[-3]["choices"][0]["finish_reason"] == chat["stop"] and
          all(e["object"] == "chat.completion.chunk" for e in ev[:-1]), json.dumps(ev[:2] + ev[-3:])[:600])
    gen = json.load(open(os.path.join(d, "generate.json")))
    prompt = open(os.path.join(d, "prompt.txt")).read()
    body = {"model": model, "prompt": prompt, "temperature": 0, "max_tokens": 16}
    status, r = post(url, "/v1/completions", body, key)
    got = r.get("choices", [{}])[0].get("text") if status == 200 else None
    check("completion = vkf generate", got == gen["text"], "%s %r vs %r" % (status, got, gen["text"]))
    status, ev = stream(url, "/v1/completions", dict(body, stream=True), key)
    text = "".join(e["choices"][0]["text"] for e in ev if isinstance(e, dict))
    check("completion stream", text == gen["text"] and ev[-1] == "[DONE]" and
          ev[-2]["object"] == "text_completion", repr(text))
    # n: two greedy choices are the same text
    status, r = post(url, "/v1/completions", dict(body, n=2), key)
    check("n=2", status == 200 and [c["text"] for c in r["choices"]] == [gen["text"]] * 2 and
          [c["index"] for c in r["choices"]] == [0, 1] and r["usage"]["completion_tokens"] ==
          2 * len(gen["generated_ids"]), json.dumps(r)[:300])
    # a stop string: the text ends before it, never streamed past it
    if len(gen["text"]) > 6:
        cut = gen["text"][3:6]
        want = gen["text"][:gen["text"].index(cut)]
        status, r = post(url, "/v1/completions", dict(body, stop=[cut, "\u00ff\u00ff"]), key)
        check("stop string", status == 200 and r["choices"][0]["text"] == want and
              r["choices"][0]["finish_reason"] == "stop", json.dumps(r)[:300])
        status, ev = stream(url, "/v1/completions", dict(body, stop=cut, stream=True), key)
        text = "".join(e["choices"][0]["text"] for e in ev if isinstance(e, dict))
        check("stop string streamed", text == want, repr(text))
    # seeded sampling: the same seed gives the same text, twice
    sb = dict(body, temperature=0.9, seed=1234, max_tokens=8)
    a, b = post(url, "/v1/completions", sb, key), post(url, "/v1/completions", sb, key)
    check("seeded sampling repeats", a[0] == 200 and a[1]["choices"][0]["text"] == b[1]["choices"][0]["text"],
          "%r %r" % (a[1], b[1]))
    # logprobs: the model's log-softmax at each generated token, against vkf generate's logits
    status, r = post(url, "/v1/completions", dict(body, logprobs=3), key)
    lp = r["choices"][0]["logprobs"] if status == 200 else {}
    steps = npy_rows(os.path.join(d, "logits.npy"))
    worst = 0.0
    for k, tok in enumerate(gen["generated_ids"][:len(lp.get("token_logprobs", []))]):
        row = steps[k]
        m = max(row)
        lse = m + math.log(sum(math.exp(x - m) for x in row))
        worst = max(worst, abs(lp["token_logprobs"][k] - (row[tok] - lse)))
        best = max(lp["top_logprobs"][k].values())
        worst = max(worst, abs(best - (m - lse)))
    check("completion logprobs = log-softmax of vkf generate's logits (worst %.2g)" % worst,
          status == 200 and len(lp["tokens"]) == len(gen["generated_ids"]) and worst < 2e-4 and
          "".join(lp["tokens"]) == gen["text"] and all(len(t) <= 3 for t in lp["top_logprobs"]) and
          lp["text_offset"][0] == len(prompt), json.dumps(lp)[:300])
    status, r = post(url, "/v1/chat/completions", {"model": model, "messages": messages,
                                                   "temperature": 0, "max_tokens": 16,
                                                   "logprobs": True, "top_logprobs": 2}, key)
    content = r["choices"][0]["logprobs"]["content"] if status == 200 else []
    check("chat logprobs", status == 200 and "".join(e["token"] for e in content) == chat["reply"]
          and all(len(e["top_logprobs"]) == 2 and e["logprob"] <= 0 and
                  abs(e["top_logprobs"][0]["logprob"] - e["logprob"]) < 1e-6 and
                  e["top_logprobs"][0]["logprob"] >= e["top_logprobs"][1]["logprob"] and
                  bytes(e["bytes"]).decode() == e["token"] for e in content), json.dumps(r)[:300])
    status, ev = stream(url, "/v1/chat/completions", {"model": model, "messages": messages,
                                                      "temperature": 0, "max_tokens": 16,
                                                      "logprobs": True, "stream": True}, key)
    streamed = [e["token"] for x in ev if isinstance(x, dict) and x.get("choices") and
                x["choices"][0].get("logprobs") for e in x["choices"][0]["logprobs"]["content"]]
    check("chat logprobs streamed", [e["token"] for e in content] == streamed, repr(streamed))
    emb = json.load(open(os.path.join(d, "embed.json")))
    texts = [e["text"] for e in emb["embeddings"]]
    status, r = post(url, "/v1/embeddings", {"model": embedder, "input": texts}, key)
    ok = status == 200 and len(r["data"]) == len(texts)
    worst = 0.0
    for i, e in enumerate(emb["embeddings"]):
        if not ok:
            break
        got = r["data"][i]["embedding"]
        ok = r["data"][i]["index"] == i and len(got) == len(e["embedding"])
        worst = max([worst] + [abs(x - y) for x, y in zip(got, e["embedding"])])
    check("embeddings = vkf embed", ok and worst <= 1e-8 and
          r["usage"]["prompt_tokens"] == sum(e["tokens"] for e in emb["embeddings"]),
          "status %s worst %g" % (status, worst))
    status, r = post(url, "/v1/embeddings", {"model": embedder, "input": texts[0],
                                             "encoding_format": "base64"}, key)
    import base64
    import struct
    vec = struct.unpack("<%df" % len(emb["embeddings"][0]["embedding"]),
                        base64.b64decode(r["data"][0]["embedding"])) if status == 200 else []
    check("embeddings base64", status == 200 and
          max(abs(x - y) for x, y in zip(vec, emb["embeddings"][0]["embedding"])) <= 1e-8, str(status))
    status, r = post(url, "/v1/completions", {"model": model.rsplit(".gguf", 1)[0],
                                              "prompt": prompt, "temperature": 0, "max_tokens": 2}, key)
    check("a GGUF answers to its name without .gguf", status == 200, str(status))
    status, _, text = request(url, "GET", "/v1/models", key=key)
    ids = [m["id"] for m in json.loads(text)["data"]]
    check("models", status == 200 and model in ids and embedder in ids, text[:200])


BIG_BODY = b"x" * (5 << 20)


def oversized(url, path, key, length):
    """Headers announcing `length` bytes, then the answer, sending no body."""
    u = urllib.parse.urlparse(url)
    s = socket.create_connection((u.hostname, u.port), timeout=30)
    s.sendall(("POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
               "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" %
               (path, key, length)).encode())
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        clen = [int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")]
        if clen and len(rest) >= clen[0]:
            break
    s.close()
    head, _, rest = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1]) if head else None
    ctype = [l.split(b":", 1)[1].strip().decode() for l in head.split(b"\r\n")
             if l.lower().startswith(b"content-type:")]
    return status, ctype[0] if ctype else "", rest


def bad_cases(model, embedder):
    """(name, method, path, body or raw bytes, headers, status, error type, param)."""
    m = model
    chat = "/v1/chat/completions"
    comp = "/v1/completions"
    emb = "/v1/embeddings"
    msgs = [{"role": "user", "content": "hi"}]
    J = lambda **kw: dict({"model": m, "messages": msgs}, **kw)
    P = lambda **kw: dict({"model": m, "prompt": "hi"}, **kw)
    return [
        ("malformed JSON", "POST", chat, b'{"model": ', None, 400, "invalid_request_error", None),
        ("not an object", "POST", chat, b'[1, 2]', None, 400, "invalid_request_error", None),
        ("empty body", "POST", chat, b'', None, 400, "invalid_request_error", None),
        ("invalid UTF-8", "POST", chat, b'{"model": "\xff\xfe", "messages": []}', None, 400, "invalid_request_error", None),
        ("overlong UTF-8", "POST", chat, b'{"model": "\xc0\xaf"}', None, 400, "invalid_request_error", None),
        ("trailing garbage", "POST", chat, json.dumps(J()).encode() + b' x', None, 400, "invalid_request_error", None),
        ("no model", "POST", chat, {"messages": msgs}, None, 400, "invalid_request_error", "model"),
        ("model not a string", "POST", chat, J(model=5), None, 400, "invalid_request_error", "model"),
        ("unknown model", "POST", chat, J(model="nope"), None, 404, "invalid_request_error", "model"),
        ("unknown model (completions)", "POST", comp, P(model="gpt-4"), None, 404, "invalid_request_error", "model"),
        ("unknown model (embeddings)", "POST", emb, {"model": "x", "input": "a"}, None, 404, "invalid_request_error", "model"),
        ("messages missing", "POST", chat, {"model": m}, None, 400, "invalid_request_error", "messages"),
        ("messages empty", "POST", chat, J(messages=[]), None, 400, "invalid_request_error", "messages"),
        ("messages not a list", "POST", chat, J(messages="hi"), None, 400, "invalid_request_error", "messages"),
        ("message not an object", "POST", chat, J(messages=["hi"]), None, 400, "invalid_request_error", "messages"),
        ("role unknown", "POST", chat, J(messages=[{"role": "wizard", "content": "x"}]), None, 400, "invalid_request_error", "messages"),
        ("content a number", "POST", chat, J(messages=[{"role": "user", "content": 5}]), None, 400, "invalid_request_error", "messages"),
        ("image content", "POST", chat, J(messages=[{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]), None, 400, "invalid_request_error", "messages"),
        ("temperature a string", "POST", chat, J(temperature="hot"), None, 400, "invalid_request_error", "temperature"),
        ("temperature negative", "POST", chat, J(temperature=-1), None, 400, "invalid_request_error", "temperature"),
        ("temperature huge", "POST", chat, J(temperature=1e300), None, 400, "invalid_request_error", "temperature"),
        ("top_p zero", "POST", chat, J(top_p=0), None, 400, "invalid_request_error", "top_p"),
        ("top_p above 1", "POST", chat, J(top_p=1.5), None, 400, "invalid_request_error", "top_p"),
        ("max_tokens zero", "POST", chat, J(max_tokens=0), None, 400, "invalid_request_error", "max_tokens"),
        ("max_tokens negative", "POST", chat, J(max_tokens=-5), None, 400, "invalid_request_error", "max_tokens"),
        ("max_tokens fractional", "POST", chat, J(max_tokens=2.5), None, 400, "invalid_request_error", "max_tokens"),
        ("max_tokens a string", "POST", comp, P(max_tokens="10"), None, 400, "invalid_request_error", "max_tokens"),
        ("max_tokens past the context", "POST", comp, P(max_tokens=10 ** 8), None, 400, "invalid_request_error", "max_tokens"),
        ("n zero", "POST", chat, J(n=0), None, 400, "invalid_request_error", "n"),
        ("n huge", "POST", chat, J(n=1000), None, 400, "invalid_request_error", "n"),
        ("seed a string", "POST", chat, J(seed="x"), None, 400, "invalid_request_error", "seed"),
        ("seed fractional", "POST", chat, J(seed=1.5), None, 400, "invalid_request_error", "seed"),
        ("stop a number", "POST", chat, J(stop=5), None, 400, "invalid_request_error", "stop"),
        ("stop empty", "POST", chat, J(stop=""), None, 400, "invalid_request_error", "stop"),
        ("five stops", "POST", chat, J(stop=["a", "b", "c", "d", "e"]), None, 400, "invalid_request_error", "stop"),
        ("stream a string", "POST", chat, J(stream="yes"), None, 400, "invalid_request_error", "stream"),
        ("stream_options without stream", "POST", chat, J(stream_options={"include_usage": True}), None, 400, "invalid_request_error", "stream_options"),
        ("frequency_penalty", "POST", chat, J(frequency_penalty=0.5), None, 400, "invalid_request_error", "frequency_penalty"),
        ("logprobs a string", "POST", chat, J(logprobs="yes"), None, 400, "invalid_request_error", "logprobs"),
        ("top_logprobs without logprobs", "POST", chat, J(top_logprobs=2), None, 400, "invalid_request_error", "top_logprobs"),
        ("top_logprobs 21", "POST", chat, J(logprobs=True, top_logprobs=21), None, 400, "invalid_request_error", "top_logprobs"),
        ("completion logprobs 6", "POST", comp, P(logprobs=6), None, 400, "invalid_request_error", "logprobs"),
        ("tools", "POST", chat, J(tools=[{"type": "function"}]), None, 400, "invalid_request_error", "tools"),
        ("prompt missing", "POST", comp, {"model": m}, None, 400, "invalid_request_error", "prompt"),
        ("prompt token ids", "POST", comp, P(prompt=[1, 2, 3]), None, 400, "invalid_request_error", "prompt"),
        ("prompt too long", "POST", comp, P(prompt="word " * 5000, max_tokens=1), None, 400, "invalid_request_error", "prompt"),
        ("completion on the embedder", "POST", comp, P(model=embedder), None, 400, "invalid_request_error", "model"),
        ("embeddings on the decoder", "POST", emb, {"model": m, "input": "a"}, None, 400, "invalid_request_error", "model"),
        ("input missing", "POST", emb, {"model": embedder}, None, 400, "invalid_request_error", "input"),
        ("input token ids", "POST", emb, {"model": embedder, "input": [[1, 2]]}, None, 400, "invalid_request_error", "input"),
        ("input empty list", "POST", emb, {"model": embedder, "input": []}, None, 400, "invalid_request_error", "input"),
        ("encoding_format unknown", "POST", emb, {"model": embedder, "input": "a", "encoding_format": "hex"}, None, 400, "invalid_request_error", "encoding_format"),
        ("too many inputs", "POST", emb, {"model": embedder, "input": ["a"] * 3000}, None, 400, "invalid_request_error", "input"),
        ("NUL in the prompt", "POST", comp, P(prompt="a\u0000b c d e f g"), None, 400, "invalid_request_error", "prompt"),
        ("NUL in a message", "POST", chat, J(messages=[{"role": "user", "content": "a\u0000b c"}]), None, 400, "invalid_request_error", "messages"),
        ("NUL in an input", "POST", emb, {"model": embedder, "input": ["ok", "a\u0000 long sentence"]}, None, 400, "invalid_request_error", "input"),
        ("NUL in a stop string", "POST", comp, P(stop=["x\u0000"]), None, 400, "invalid_request_error", "stop"),
        ("NUL in the model name", "POST", comp, P(model=m + "\u0000x"), None, 400, "invalid_request_error", "model"),
        ("empty prompt", "POST", comp, P(prompt=""), None, 400, "invalid_request_error", "prompt"),
        ("body too large", "POST", chat, BIG_BODY, None, 413, "invalid_request_error", None),
        ("unknown path", "GET", "/v2/nothing", None, None, 404, "invalid_request_error", None),
        ("wrong method", "GET", chat, None, None, 405, "invalid_request_error", None),
        ("POST to models", "POST", "/v1/models", {}, None, 405, "invalid_request_error", None),
        ("no API key", "POST", chat, J(), {"Authorization": ""}, 401, "invalid_request_error", None),
        ("wrong API key", "POST", chat, J(), {"Authorization": "Bearer nope"}, 401, "invalid_request_error", None),
        ("not Bearer", "GET", "/v1/models", None, {"Authorization": "Basic eDp5"}, 401, "invalid_request_error", None),
    ]


def bad(url, key, model, embedder):
    cases = bad_cases(model, embedder)
    for name, method, path, body, headers, status, etype, param in cases:
        raw = body if isinstance(body, bytes) else None
        if raw is BIG_BODY:  # announced by Content-Length: refused before the body is sent
            got, ctype, text = oversized(url, path, key, len(raw))
        else:
          try:
            got, ctype, text = request(url, method, path, None if raw is not None else body, key,
                                       headers, raw)
          except (ConnectionError, socket.error) as e:
            got, ctype, text = None, "", str(e).encode()
        try:
            err = json.loads(text)["error"]
            shape = isinstance(err["message"], str) and err["message"] and err["type"] == etype and \
                err["param"] == param and "code" in err and "\n" not in err["message"]
        except (ValueError, KeyError, TypeError):
            shape = False
        check("bad request: " + name, got == status and shape and ctype.startswith("application/json"),
              "status %s, body %s" % (got, text[:200]))
    status, _, text = request(url, "GET", "/health")
    check("still serving after %d bad requests" % len(cases), status == 200 and b"ok" in text, str(status))


def load(url, key, model, d, pid, rss_mb="64"):
    cases = json.load(open(os.path.join(d, "expected.json")))  # [{"prompt", "max_tokens", "text"}]
    errors = []
    lock = threading.Lock()
    stats = {"done": 0, "dropped": 0}

    def client(k):
        rnd = random.Random(k)
        for i in range(8):
            case = cases[rnd.randrange(len(cases))]
            body = {"model": model, "prompt": case["prompt"], "temperature": 0,
                    "max_tokens": case["max_tokens"]}
            mode = rnd.choice(["plain", "plain", "stream", "drop"])
            try:
                if mode == "plain":
                    status, r = post(url, "/v1/completions", body, key)
                    text = r["choices"][0]["text"] if status == 200 else None
                elif mode == "stream":
                    status, ev = stream(url, "/v1/completions", dict(body, stream=True), key)
                    text = "".join(e["choices"][0]["text"] for e in ev if isinstance(e, dict))
                else:
                    status, ev = stream(url, "/v1/completions", dict(body, stream=True), key, stop_after=2)
                    with lock:
                        stats["dropped"] += 1
                    continue
                if status != 200 or text != case["text"]:
                    with lock:
                        errors.append("client %d request %d (%s): %s %r, expected %r" %
                                      (k, i, mode, status, text, case["text"]))
                with lock:
                    stats["done"] += 1
            except Exception as e:  # noqa: BLE001 - any failure is a lost request
                with lock:
                    errors.append("client %d request %d: %r" % (k, i, e))

    def rss():
        for line in open("/proc/%s/status" % pid):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        return 0

    rounds = []
    for rnd in range(2):
        t0 = time.time()
        threads = [threading.Thread(target=client, args=(k + 100 * rnd,)) for k in range(32)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        rounds.append((time.time() - t0, rss()))
    check("load: every response right, none lost (%d answered, %d dropped mid-stream)" %
          (stats["done"], stats["dropped"]), not errors, "; ".join(errors[:5]))
    idle = False
    for _ in range(100):  # the dropped streams leave at their next step
        m = metrics(url)
        if m.get("vkf_requests_running") == 0 and m.get("vkf_requests_queued") == 0 and \
                m.get("vkf_requests_in_flight") == 0:
            idle = True
            break
        time.sleep(0.1)
    check("load: no slot leaked (metrics back to idle)", idle, json.dumps(m))
    grew = (rounds[1][1] - rounds[0][1]) / 1e6
    if float(rss_mb) > 0:
        check("load: RSS bounded (round 2 grew %.1f MB)" % grew, grew < float(rss_mb), str(rounds))
    else:
        print("load: round 2 grew the RSS by %.1f MB (not checked in this build)" % grew)
    print("load: rounds of 256 requests took %.1f s and %.1f s" % (rounds[0][0], rounds[1][0]))


def queue(url, model):
    """A server of one slot and a queue of one: of 8 requests at once, the ones past the slot and
    the queue get 429 with OpenAI's error JSON, the others complete."""
    results = []
    lock = threading.Lock()

    def one(k):
        body = {"model": model, "prompt": "zq", "max_tokens": 30, "temperature": 0}
        status, r = post(url, "/v1/completions", body, None)
        with lock:
            results.append((status, r))

    threads = [threading.Thread(target=one, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    codes = sorted(s for s, _ in results)
    busy = [r for s, r in results if s == 429]
    check("queue full: 429s beside answers (%s)" % codes, busy and codes.count(200) >= 2 and
          set(codes) <= {200, 429} and all(r["error"]["type"] == "rate_limit_error" and
                                           r["error"]["code"] == "queue_full" for r in busy),
          json.dumps(results)[:400])


def slowloris(url):
    u = urllib.parse.urlparse(url)
    idle = socket.create_connection((u.hostname, u.port))
    trickle = socket.create_connection((u.hostname, u.port))
    trickle.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
    status, _, _ = request(url, "GET", "/health")
    check("serves beside half-open connections", status == 200, str(status))
    time.sleep(3.5)  # the server runs with --timeout 2
    closed = []
    for s in (idle, trickle):
        s.settimeout(2)
        try:
            closed.append(s.recv(1) == b"")
        except (ConnectionResetError, socket.timeout):
            closed.append(not isinstance(sys.exc_info()[1], socket.timeout))
        s.close()
    check("idle and trickling connections closed after the timeout", all(closed), str(closed))


def raw(url, data, timeout=10, pace=None):
    """Sends `data` (a list of pieces `pace` seconds apart when pace is set), then reads the
    answer until the server closes: (status or None, content type, body, seconds to the close)."""
    u = urllib.parse.urlparse(url)
    s = socket.create_connection((u.hostname, u.port), timeout=timeout)
    t0 = time.time()
    got = b""
    try:
        for i, piece in enumerate(data if pace else [data]):
            if pace and i and select.select([s], [], [], pace)[0]:
                break  # answered (or closed) before the client was done: read what came
            s.sendall(piece)
    except (BrokenPipeError, ConnectionResetError):
        pass
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
    except (socket.timeout, ConnectionResetError):
        pass
    s.close()
    head, _, body = got.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split(b" ")[1]) if lines[0].startswith(b"HTTP/") else None
    ctype = [l.split(b":", 1)[1].strip().decode() for l in lines[1:] if l.lower().startswith(b"content-type:")]
    return status, ctype[0] if ctype else "", body, time.time() - t0


def openai_error(status, ctype, body, want):
    """An OpenAI error body with HTTP status `want`."""
    try:
        err = json.loads(body)["error"]
        return status == want and ctype.startswith("application/json") and \
            isinstance(err["message"], str) and err["message"] and "type" in err and "code" in err
    except (ValueError, KeyError, TypeError):
        return False


def conn_phase(url, key):
    host = b"Host: x\r\n"
    cases = [
        ("a garbage request line", b"GARBAGE\r\n\r\n", 400),
        ("a request line without a version", b"GET /health\r\n\r\n", 400),
        ("an unknown HTTP version", b"GET /health HTTP/2.5\r\n" + host + b"\r\n", 505),
        ("HTTP/1.1 without Host", b"GET /health HTTP/1.1\r\n\r\n", 400),
        ("a header line without a colon", b"GET /health HTTP/1.1\r\n" + host + b"nonsense\r\n\r\n", 400),
        ("a negative Content-Length", b"POST /v1/completions HTTP/1.1\r\n" + host +
         b"Content-Length: -5\r\n\r\n", 400),
        ("a 100 KB URL", b"GET /" + b"a" * 100000 + b" HTTP/1.1\r\n" + host + b"\r\n", 414),
        ("a 200 KB header", b"GET /health HTTP/1.1\r\n" + host + b"X-Big: " + b"b" * 200000 +
         b"\r\n\r\n", 431),
        ("a chunked body", b"POST /v1/completions HTTP/1.1\r\n" + host +
         b"Transfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n5\r\n{\"a\":\r\n", 411),
    ]
    for name, data, want in cases:
        status, ctype, body, took = raw(url, data, timeout=5)
        check("connection: %s gets %d with OpenAI's error JSON at once (%.1f s)" % (name, want, took),
              openai_error(status, ctype, body, want) and took < 2 * SLOW, "%s %s %r" % (status, ctype, body[:200]))
    status, _, text = request(url, "GET", "/v1/models", headers={"Authorization": "bearer " + key})
    check("connection: the Bearer scheme is case-insensitive", status == 200, "%s %r" % (status, text[:200]))
    # slow senders: a head trickled a line every 0.5 s and a body a byte every 0.5 s are never idle
    # for --timeout 2, yet --request-timeout 3 ends them (the head with a 408)
    results = {}

    def slow_head():
        lines = [b"GET /health HTTP/1.1\r\n"] + [b"X-%d: y\r\n" % i for i in range(40)]
        results["head"] = raw(url, lines, timeout=20, pace=0.5)

    def slow_body():
        head = (b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                key.encode() + b"\r\nContent-Type: application/json\r\nContent-Length: 60\r\n\r\n")
        results["body"] = raw(url, [head] + [b" "] * 59, timeout=20, pace=0.5)

    threads = [threading.Thread(target=f) for f in (slow_head, slow_body)]
    for t in threads:
        t.start()
    # beside them, 20 connections trickling their heads: /health still answers at once
    u = urllib.parse.urlparse(url)
    held = []
    for _ in range(20):
        h = socket.create_connection((u.hostname, u.port))
        h.sendall(b"GET /health HTTP/1.1\r\n")
        held.append(h)
    t0 = time.time()
    status, _, _ = request(url, "GET", "/health")
    took = time.time() - t0
    check("connection: /health answers in %.2f s beside 22 slow senders" % took, status == 200 and took < SLOW,
          "%s in %.2f s" % (status, took))
    # one client's limit (--client-connections 24): 22 held and 2 more make 24; the next passes it
    extra = [socket.create_connection((u.hostname, u.port)) for _ in range(2)]
    status, ctype, body, took = raw(url, b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n", timeout=5)
    check("connection: past --client-connections, 429 with OpenAI's error JSON",
          openai_error(status, ctype, body, 429) and took < 2 * SLOW, "%s %r" % (status, body[:200]))
    for h in held + extra:
        h.close()
    for t in threads:
        t.join()
    status, ctype, body, took = results["head"]
    check("connection: a head trickled past --request-timeout gets 408 (%.1f s)" % took,
          openai_error(status, ctype, body, 408) and took < 5 * SLOW, "%s %r in %.1f s" % (status, body[:200], took))
    status, ctype, body, took = results["body"]
    check("connection: a body trickled past twice --request-timeout is closed (%.1f s)" % took,
          took < 9 * SLOW, "%s %r in %.1f s" % (status, body[:200], took))
    status, _, _ = request(url, "GET", "/health")
    check("connection: still serving after the hostile connections", status == 200, str(status))


def details(url, key, model, padded, expected, folder_name):
    """The smaller promises: an empty prompt is no context overflow; the step metrics count a
    sequence that ends within its first step (mean batch >= 1); a model whose vocabulary is padded
    past its tokenizer answers `vkf generate`'s text (a padding id is ""); a pip folder "model"
    is named by its parent."""
    status, r = post(url, "/v1/completions", {"model": model, "prompt": ""}, key)
    check("details: an empty prompt is refused as empty, not as too long",
          status == 400 and r["error"]["code"] != "context_length_exceeded" and "empty" in r["error"]["message"],
          json.dumps(r))
    m0 = metrics(url)
    for _ in range(3):
        post(url, "/v1/completions", {"model": model, "prompt": "zq", "max_tokens": 1, "temperature": 0}, key)
    m1 = metrics(url)
    steps = m1["vkf_decode_steps_total"] - m0["vkf_decode_steps_total"]
    rows = m1["vkf_step_sequences_total"] - m0["vkf_step_sequences_total"]
    check("details: sequences ending within a step are counted (%d steps ran %d sequences)" % (steps, rows),
          steps > 0 and rows >= steps, "%s %s" % (steps, rows))
    want = json.load(open(expected))
    status, r = post(url, "/v1/completions", {"model": padded, "prompt": "zq", "max_tokens": 5,
                                              "temperature": 0}, key)
    check("details: a vocabulary padded past the tokenizer answers vkf generate's text",
          status == 200 and r["choices"][0]["text"] == want["text"], "%s %s" % (status, json.dumps(r)[:300]))
    status, _, text = request(url, "GET", "/v1/models", key=key)
    names = [d["id"] for d in json.loads(text)["data"]]
    check("details: a folder named model is listed by its parent's name", folder_name in names, str(names))


def cancel_phase(url, key, model):
    """12 requests of 2000 tokens at once on a model of long contexts (some running, the rest
    queued), half streamed, every client hanging up after 0.3 s: the server is idle again within
    2 s and made far fewer than the 24000 tokens asked for (a quarter: the 6 plain requests alone
    would make half if they ran on)."""
    body = {"model": model, "prompt": "zq", "max_tokens": 2000, "temperature": 0}
    # a first request builds the device's pipelines (seconds on a CPU device), which the
    # hang-ups below must not wait for
    post(url, "/v1/completions", dict(body, max_tokens=2), key)
    before = metrics(url).get("vkf_completion_tokens_total", 0)
    socks = []
    u = urllib.parse.urlparse(url)
    for k in range(12):
        b = dict(body, stream=bool(k % 2))
        data = json.dumps(b).encode()
        s = socket.create_connection((u.hostname, u.port))
        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                  b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" %
                  (key.encode(), len(data), data))
        socks.append(s)
    time.sleep(0.3)
    t0 = time.time()
    for s in socks:
        s.close()
    idle = False
    while time.time() - t0 < 2 * SLOW:
        m = metrics(url)
        if m.get("vkf_requests_running") == 0 and m.get("vkf_requests_queued") == 0 and \
                m.get("vkf_requests_in_flight") == 0:
            idle = True
            break
        time.sleep(0.05)
    made = metrics(url).get("vkf_completion_tokens_total", 0) - before
    check("cancel: 12 clients gone, the server idle %.2f s later, %d tokens made of 24000" %
          (time.time() - t0, made), idle and made < 6000, json.dumps(m)[-400:])


def abuse(url, key, model, embedder, pid, seconds="8"):
    """Load and abuse together for `seconds`: 4 streaming clients (the longest gap between their
    events is measured), clients hanging up mid-stream and mid-wait, an embeddings client sending
    2000 texts a request, 10 slow senders, and /health polled throughout (each answer within a
    second). Then idle again (nothing leaked), then SIGTERM under load (--grace 1): /health and
    new requests get 503 JSON at once, the streams in flight end with an error event and [DONE],
    the queued requests get 503 JSON."""
    seconds = float(seconds)
    # first requests build the device's pipelines (seconds on a CPU device): not what is measured
    # (2000 copies of one long text: every batch of them is one shape, built once here)
    text = "one of many texts, long enough that 2000 of them take seconds at once. " * 5
    post(url, "/v1/embeddings", {"model": embedder, "input": [text] * 16}, key)
    post(url, "/v1/completions", {"model": model, "prompt": "zq", "max_tokens": 2}, key)
    end = time.time() + seconds
    lock = threading.Lock()
    st = {"gaps": [], "health": [], "errors": [], "streams": 0, "embeds": 0, "hangups": 0}
    u = urllib.parse.urlparse(url)
    body = {"model": model, "prompt": "zq", "max_tokens": 60, "temperature": 0, "stream": True}

    def streamer():  # with logprobs every token is an event (text may wait for a whole character)
        while time.time() < end:
            c = conn(url, timeout=60)
            c.request("POST", "/v1/completions", body=json.dumps(dict(body, logprobs=0)).encode(),
                      headers={"Content-Type": "application/json", "Authorization": "Bearer " + key})
            r = c.getresponse()
            last, gap, buf = None, 0.0, b""
            while True:  # the gaps between events (the wait for a free slot before is a queue's)
                chunk = r.read1(65536)
                if not chunk:
                    break
                now = time.time()
                gap, last = max(gap, now - last if last else 0.0), now
                buf += chunk
            c.close()
            with lock:
                st["gaps"].append(gap)
                st["streams"] += 1
                if r.status != 200 or not buf.endswith(b"data: [DONE]\n\n"):
                    st["errors"].append("stream: %s %r" % (r.status, buf[-120:]))

    def hangup():
        k = 0
        while time.time() < end:
            k += 1
            data = json.dumps(dict(body, stream=bool(k % 2), max_tokens=300)).encode()
            s = socket.create_connection((u.hostname, u.port))
            s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                      b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" %
                      (key.encode(), len(data), data))
            time.sleep(0.3)
            s.close()
            with lock:
                st["hangups"] += 1

    def embedder_client():
        while time.time() < end:
            # base64: a small answer, parsed quickly (a 2000 x 32 float JSON would hold this
            # process's GIL long enough to show as a gap in the streams measured beside it)
            status, r = post(url, "/v1/embeddings", {"model": embedder, "encoding_format": "base64",
                                                     "input": [text] * 2000}, key)
            with lock:
                st["embeds"] += 1
                if status != 200 or len(r.get("data", [])) != 2000:
                    st["errors"].append("embeddings: %s %s" % (status, str(r)[:120]))

    def slow():
        while time.time() < end:
            raw(url, [b"GET /health HTTP/1.1\r\n"] + [b"X-%d: y\r\n" % i for i in range(20)],
                timeout=10, pace=0.5)

    def health():
        while time.time() < end:
            t0 = time.time()
            try:
                status, _, _ = request(url, "GET", "/health")
            except Exception as e:  # noqa: BLE001
                status = repr(e)
            with lock:
                st["health"].append(time.time() - t0)
                if status != 200:
                    st["errors"].append("health: %s" % status)
            time.sleep(0.2)

    threads = [threading.Thread(target=f) for f in
               [streamer] * 4 + [hangup] * 2 + [embedder_client] + [slow] * 10 + [health]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check("abuse: %d streams, %d embeddings requests of 2000 texts, %d hang-ups, no error" %
          (st["streams"], st["embeds"], st["hangups"]), not st["errors"] and st["streams"] and st["embeds"],
          "; ".join(st["errors"][:4]))
    worst = max(st["health"] or [99])
    check("abuse: /health answered %d times, the slowest in %.2f s" % (len(st["health"]), worst),
          worst < SLOW, str(sorted(st["health"])[-5:]))
    gap = max(st["gaps"] or [99])
    check("abuse: the longest wait between a stream's events was %.2f s beside the embeddings" % gap,
          gap < 1.5 * SLOW, str(sorted(st["gaps"])[-5:]))
    idle, m = False, {}
    for _ in range(60):
        m = metrics(url)
        if m.get("vkf_requests_running") == 0 and m.get("vkf_requests_queued") == 0 and \
                m.get("vkf_requests_in_flight") == 0:
            idle = True
            break
        time.sleep(0.1)
    check("abuse: idle again afterwards (nothing leaked)", idle, json.dumps(m)[:300])

    # SIGTERM under load: 4 long streams fill the slots, 2 plain requests wait in the queue
    res = {}

    def long_stream(k):
        res[k] = stream(url, "/v1/completions", dict(body, max_tokens=2000), key)

    def queued(k):
        res[k] = post(url, "/v1/completions", dict(body, stream=False, max_tokens=2000), key)

    threads = [threading.Thread(target=long_stream, args=(k,)) for k in range(4)]
    threads += [threading.Thread(target=queued, args=(k,)) for k in range(4, 6)]
    for t in threads:
        t.start()
        time.sleep(0.05)
    for _ in range(100):
        m = metrics(url)
        if m.get("vkf_requests_running") == 4 and m.get("vkf_requests_queued") == 2:
            break
        time.sleep(0.05)
    print("sigterm: sent with %s running and %s queued" % (m.get("vkf_requests_running"),
                                                          m.get("vkf_requests_queued")))
    os.kill(int(pid), 15)
    time.sleep(0.2)
    t0 = time.time()
    status, ctype, text = request(url, "GET", "/health")
    took = time.time() - t0
    check("sigterm: /health answers 503 JSON in %.2f s while stopping" % took,
          status == 503 and ctype.startswith("application/json") and took < SLOW, "%s %r" % (status, text[:100]))
    status, r = post(url, "/v1/completions", dict(body, stream=False), key)
    check("sigterm: a new request gets 503 with OpenAI's error JSON", status == 503 and "error" in r, str(r)[:200])
    for t in threads:
        t.join()
    ended = [res.get(k) for k in range(4)]
    good = all(e and e[0] == 200 and e[1] and e[1][-1] == "[DONE]" and isinstance(e[1][-2], dict) and
               "error" in e[1][-2] for e in ended)
    check("sigterm: the 4 streams in flight end with an error event and [DONE] at the grace limit",
          good, str([(e[0], e[1][-2:]) if e else None for e in ended])[:400])
    q = [res.get(k) for k in (4, 5)]
    check("sigterm: the 2 queued requests get 503 with OpenAI's error JSON",
          all(e and e[0] == 503 and "error" in e[1] for e in q), str(q)[:300])


def main():
    phase = sys.argv[1]
    if phase == "exact":
        exact(*sys.argv[2:7])
    elif phase == "bad":
        bad(*sys.argv[2:6])
    elif phase == "load":
        load(*sys.argv[2:8])
    elif phase == "slowloris":
        slowloris(sys.argv[2])
    elif phase == "queue":
        queue(sys.argv[2], sys.argv[3])
    elif phase == "conn":
        conn_phase(sys.argv[2], sys.argv[3])
    elif phase == "abuse":
        abuse(*sys.argv[2:8])
    elif phase == "details":
        details(*sys.argv[2:8])
    elif phase == "cancel":
        cancel_phase(sys.argv[2], sys.argv[3], sys.argv[4])
    print("%d failed" % len(failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
