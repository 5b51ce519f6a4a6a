#!/usr/bin/env python3
"""How much `--quantize FORMAT` changes a model's outputs against the same model unquantised,
each format side by side in one run (docs/models.md quotes its tables).

Language models (an output "logits" [batch, seq, vocab]): the text is tokenized with the model's
tokenizer (or --tokenizer's), run once teacher-forced through `vkf forward`, and each format is
compared with the file's own weights on every position: perplexity of the text's next tokens,
top-1 agreement, mean KL(file || quantised) of the next-token distributions, max |logit diff|.
Sentence embeddings (--embed FILE: texts, one per line, through `vkf embed`) and other models
(--in NAME=FILE.npy inputs, --out OUTPUT): per row cosine similarity to the file's output (mean
and worst) and, for 2-D logits, top-1 agreement.

    python3 tools/dev/quantize_accuracy.py --model DIR_OR_GGUF [--tokenizer DIR_OR_GGUF]
        [--text FILE] [--formats q8_0,q4_0,q4_k] [--vkf build/tools/vkf]
    python3 tools/dev/quantize_accuracy.py --model DIR --in pixel_values=P.npy --out logits
    python3 tools/dev/quantize_accuracy.py --model MINILM_DIR --embed tests/models/embedding_sentences.txt
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

TEXT = (
    "The transformer replaces recurrence with attention: every position of a sequence looks at "
    "every other one, weighs them by the similarity of a query and a key, and mixes their values. "
    "Stacked with feed-forward layers, residual connections and normalisation, it learns to "
    "translate, summarise and answer questions. Language models built on it predict the next word "
    "of a text one token at a time, and run on anything from a data centre to a laptop once their "
    "weights are stored in four or eight bits instead of thirty-two. Quantisation keeps a scale "
    "for each small block of weights, so the error each weight carries is bounded by the block's "
    "largest value, and the model's predictions barely move."
)


def run(cmd):
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if res.returncode:
        sys.exit("%s failed: %s" % (" ".join(cmd), res.stderr.strip()))
    return res.stdout


def forward(vkf, model, fmt, ins, out, path):
    cmd = [vkf, "forward", "--model", model]
    if fmt:
        cmd += ["--quantize", fmt]
    for i in ins:
        cmd += ["--in", i]
    run(cmd + ["--out", "%s=%s" % (out, path)])
    return np.load(path).astype(np.float64)


def embed(vkf, model, fmt, texts, path):
    cmd = [vkf, "embed", "--model", model, "--file", texts, "--no-matrix", "--npy", path]
    run(cmd + (["--quantize", fmt] if fmt else []))
    return np.load(path).astype(np.float64)


def log_softmax(x):
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--tokenizer", help="where the tokenizer is (default: --model)")
    ap.add_argument("--text", help="a text file for a language model (default: a built-in paragraph)")
    ap.add_argument("--in", dest="ins", action="append", default=[], help="NAME=FILE.npy")
    ap.add_argument("--embed", help="texts, one per line, for `vkf embed`")
    ap.add_argument("--labels", help="int .npy of the true label per row: adds accuracy")
    ap.add_argument("--out", default="logits")
    ap.add_argument("--formats", default="q8_0,q5_1,q5_0,q4_1,q4_0,q4_k")
    ap.add_argument("--vkf", default="build/tools/vkf")
    a = ap.parse_args()
    formats = [f for f in a.formats.split(",") if f]
    with tempfile.TemporaryDirectory() as tmp:
        ins = list(a.ins)
        lm = not ins and not a.embed
        if lm:
            text = open(a.text).read() if a.text else TEXT
            doc = json.loads(run([a.vkf, "tokenize", "--json", "--model", a.tokenizer or a.model, text]))
            ids = np.array([doc["texts"][0]["ids"]], dtype=np.int32)
            np.save(os.path.join(tmp, "ids.npy"), ids)
            ins = ["input_ids=" + os.path.join(tmp, "ids.npy")]
        def outputs(fmt, name):
            path = os.path.join(tmp, name + ".npy")
            if a.embed:
                return embed(a.vkf, a.model, fmt, a.embed, path)
            return forward(a.vkf, a.model, fmt, ins, a.out, path)

        ref = outputs(None, "ref")
        print("%s, %s %s" % (a.model, "embeddings" if a.embed else a.out, list(ref.shape)))
        if lm:
            nxt = ids[0, 1:]
            lp_ref = log_softmax(ref[0, :-1])
            ppl_ref = float(np.exp(-lp_ref[np.arange(len(nxt)), nxt].mean()))
            print("\n%d tokens; unquantised perplexity %.3f\n" % (ids.shape[1], ppl_ref))
            print("| weights | perplexity | top-1 agreement | mean KL | max abs logit diff |")
            print("|---|---:|---:|---:|---:|")
            print("| file's | %.3f | 100 %% | 0 | 0 |" % ppl_ref)
        else:
            labels = np.load(a.labels).reshape(-1) if a.labels else None
            acc = lambda x: " %.2f %% |" % (100 * float((x.argmax(1) == labels).mean()))
            print("\n| weights | mean cosine | worst cosine | top-1 agreement |%s" %
                  (" accuracy |" if a.labels else ""))
            print("|---|---:|---:|---:|%s" % ("---:|" if a.labels else ""))
            if a.labels:
                print("| file's | 1 | 1 | 100 %% |%s" % acc(ref))
        for f in formats:
            got = outputs(f, f)
            if lm:
                lp = log_softmax(got[0, :-1])
                ppl = float(np.exp(-lp[np.arange(len(nxt)), nxt].mean()))
                agree = float((lp.argmax(-1) == lp_ref.argmax(-1)).mean())
                kl = float((np.exp(lp_ref) * (lp_ref - lp)).sum(-1).mean())
                print("| %s | %.3f | %.1f %% | %.4f | %.3f |" % (f, ppl, 100 * agree, kl,
                                                               float(np.abs(got - ref).max())))
            else:
                r, g = ref.reshape(ref.shape[0], -1), got.reshape(got.shape[0], -1)
                cos = (r * g).sum(1) / (np.linalg.norm(r, axis=1) * np.linalg.norm(g, axis=1))
                top = "-"
                if ref.ndim == 2 and a.out == "logits" and not a.embed:
                    top = "%.1f %%" % (100 * float((ref.argmax(1) == got.argmax(1)).mean()))
                print("| %s | %.6f | %.6f | %s |%s" % (f, float(cos.mean()), float(cos.min()), top,
                                                     acc(got) if a.labels else ""))


if __name__ == "__main__":
    main()
