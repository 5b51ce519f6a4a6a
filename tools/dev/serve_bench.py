#!/usr/bin/env python3
"""Throughput of a running `vkf serve` under 1, 4 and 16 concurrent clients, side by side in one
run: each level sends the same requests (completions, temperature 0, fixed prompts and max_tokens)
and reports requests/s, completion tokens/s and the ratio to one client at a time. Continuous
batching shows as tokens/s rising with the clients (up to the server's --parallel).

    python3 tools/dev/serve_bench.py URL MODEL [--requests 32] [--max-tokens 32] [--levels 1,4,16]
        [--prompts "a|b|c"]   (e.g. byte-only prompts for a 256-token vocabulary: "zq|Hi!|xz")
        [--ttft N]            (also: time to the first streamed token, median of N requests sent
                               one at a time on an idle server; run it against servers started
                               with --parallel 1 and 4 to compare)
"""
import argparse
import json
import threading
import time
import urllib.request

PROMPTS = ["Once upon a time", "The capital of France is", "def fibonacci(n):",
           "Water boils at", "List three colours:", "In 1969,", "The best way to learn is",
           "Dear diary,"]


def one(url, model, prompt, max_tokens, key):
    body = {"model": model, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0,
            "stop": None}
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = "Bearer " + key
    req = urllib.request.Request(url + "/v1/completions", data=json.dumps(body).encode(),
                                 headers=headers)
    r = json.load(urllib.request.urlopen(req, timeout=3600))
    return r["usage"]["completion_tokens"]


def ttft(url, model, prompt, key):
    """Seconds from sending a streamed completion to its first content event."""
    body = {"model": model, "prompt": prompt, "max_tokens": 8, "temperature": 0, "stream": True}
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = "Bearer " + key
    req = urllib.request.Request(url + "/v1/completions", data=json.dumps(body).encode(),
                                 headers=headers)
    t0 = time.time()
    with urllib.request.urlopen(req, timeout=3600) as r:
        for line in r:
            if line.startswith(b"data: ") and not line.startswith(b"data: [DONE]"):
                first = time.time() - t0
                for _ in r:  # drain, so the next request finds the server idle
                    pass
                return first
    raise RuntimeError("no event")


def level(url, model, clients, requests, max_tokens, key):
    todo = list(range(requests))
    lock = threading.Lock()
    tokens = [0]

    def worker():
        while True:
            with lock:
                if not todo:
                    return
                i = todo.pop()
            n = one(url, model, PROMPTS[i % len(PROMPTS)], max_tokens, key)
            with lock:
                tokens[0] += n

    t0 = time.time()
    threads = [threading.Thread(target=worker) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    dt = time.time() - t0
    return requests / dt, tokens[0] / dt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("model")
    ap.add_argument("--requests", type=int, default=32)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--levels", default="1,4,16")
    ap.add_argument("--key")
    ap.add_argument("--prompts", help="prompts separated by |")
    ap.add_argument("--ttft", type=int, default=0, help="TTFT requests (0: none)")
    a = ap.parse_args()
    if a.prompts:
        PROMPTS[:] = a.prompts.split("|")
    one(a.url, a.model, PROMPTS[0], 2, a.key)  # warm-up: kernels built, caches touched
    if a.ttft:
        t = sorted(ttft(a.url, a.model, PROMPTS[i % len(PROMPTS)], a.key) for i in range(a.ttft))
        print("TTFT (streamed, idle server, %d requests): median %.3f s, min %.3f s, max %.3f s\n"
              % (a.ttft, t[len(t) // 2], t[0], t[-1]))
    rows = []
    for c in [int(x) for x in a.levels.split(",")]:
        rows.append((c,) + level(a.url, a.model, c, a.requests, a.max_tokens, a.key))
    print("%s, %d requests of %d tokens per level\n" % (a.model, a.requests, a.max_tokens))
    print("| clients | requests/s | tokens/s | tokens/s vs 1 client |")
    print("|---:|---:|---:|---:|")
    for c, rps, tps in rows:
        print("| %d | %.2f | %.1f | %.2fx |" % (c, rps, tps, tps / rows[0][2]))


if __name__ == "__main__":
    main()
