#!/usr/bin/env python3
"""Throughput of a running `vkf serve` under 1, 4 and 16 concurrent clients, side by side in one
run: each level sends the same requests (completions, temperature 0, fixed prompts and max_tokens)
and reports requests/s, completion tokens/s and the ratio to one client at a time. Continuous
batching shows as tokens/s rising with the clients (up to the server's --parallel).

    python3 tools/dev/serve_bench.py URL MODEL [--requests 32] [--max-tokens 32] [--levels 1,4,16]
        [--prompts "a|b|c"]   (e.g. byte-only prompts for a 256-token vocabulary: "zq|Hi!|xz")
        [--ttft N]            (also: time to the first streamed token, median of N requests sent
                               one at a time on an idle server; run it against servers started
                               with --parallel 1 and 4 to compare; --levels "" for it alone)
        [--json]              (one JSON document instead of the table: tools/dev/gpu_report.sh)

Each level is first run once with as many short requests as clients, so the step plans it uses
have run before it is timed. Where /metrics answers, each level also gives the device steps it
took and their mean batch (sequences a step): near the client count when batching works.
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


def metrics(url, key):
    """vkf serve's counters of steps and the sequences they advanced, or None."""
    req = urllib.request.Request(url + "/metrics",
                                 headers={"Authorization": "Bearer " + key} if key else {})
    try:
        text = urllib.request.urlopen(req, timeout=60).read().decode()
    except OSError:
        return None
    found = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            found[name] = float(value)
    if "vkf_decode_steps_total" not in found or "vkf_step_sequences_total" not in found:
        return None
    return found["vkf_decode_steps_total"], found["vkf_step_sequences_total"]


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


def measured_level(url, model, clients, requests, max_tokens, key):
    level(url, model, clients, clients, min(max_tokens, 4), key)  # warm-up at this level
    before = metrics(url, key)
    rps, tps = level(url, model, clients, requests, max_tokens, key)
    after = metrics(url, key)
    row = {"clients": clients, "requests_per_s": rps, "tokens_per_s": tps,
           "steps": None, "mean_batch": None}
    if before and after and after[0] > before[0]:
        row["steps"] = int(after[0] - before[0])
        row["mean_batch"] = (after[1] - before[1]) / (after[0] - before[0])
    return row


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
    ap.add_argument("--json", action="store_true", help="one JSON document instead of the table")
    a = ap.parse_args()
    if a.prompts:
        PROMPTS[:] = a.prompts.split("|")
    one(a.url, a.model, PROMPTS[0], 2, a.key)  # warm-up: kernels built, caches touched
    doc = {"model": a.model, "requests": a.requests, "max_tokens": a.max_tokens, "ttft": None,
           "levels": []}
    if a.ttft:
        t = sorted(ttft(a.url, a.model, PROMPTS[i % len(PROMPTS)], a.key) for i in range(a.ttft))
        doc["ttft"] = {"requests": a.ttft, "median_s": t[len(t) // 2], "min_s": t[0],
                       "max_s": t[-1]}
    for c in [int(x) for x in a.levels.split(",") if x.strip()]:
        doc["levels"].append(measured_level(a.url, a.model, c, a.requests, a.max_tokens, a.key))
    rows = doc["levels"]
    for r in rows:
        r["vs_one_client"] = r["tokens_per_s"] / rows[0]["tokens_per_s"]
    if a.json:
        print(json.dumps(doc, indent=1))
        return
    if doc["ttft"]:
        t = doc["ttft"]
        print("TTFT (streamed, idle server, %d requests): median %.3f s, min %.3f s, max %.3f s\n"
              % (t["requests"], t["median_s"], t["min_s"], t["max_s"]))
    if not rows:
        return
    print("%s, %d requests of %d tokens per level\n" % (a.model, a.requests, a.max_tokens))
    print("| clients | requests/s | tokens/s | tokens/s vs 1 client | steps | mean batch |")
    print("|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print("| %d | %.2f | %.1f | %.2fx | %s | %s |" % (
            r["clients"], r["requests_per_s"], r["tokens_per_s"], r["vs_one_client"],
            "-" if r["steps"] is None else r["steps"],
            "-" if r["mean_batch"] is None else "%.2f" % r["mean_batch"]))


if __name__ == "__main__":
    main()
