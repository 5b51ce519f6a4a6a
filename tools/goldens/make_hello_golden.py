#!/usr/bin/env python3
"""Writes tests/install/hello_golden.json: what examples/hello.c must print, computed with Hugging
Face transformers 4.38.2 (PyTorch, CPU) on two committed checkpoints:

- text: tests/models/data/bert_tiny (BertForMaskedLM, seeded random weights) on one sentence: the
  tokenizer's tokens and ids, then each output the model declares (last_hidden_state, logits, and
  sentence_embedding, which the checkpoint's sentence-transformers modules.json makes the [CLS]
  row: 1_Pooling has pooling_mode_cls_token and no Normalize module) as its shape, mean absolute value and
  first 8 values;
- image: tests/models/data/vit_tiny (ViTForImageClassification) on assets/images/cat.jpg through
  ViTImageProcessor: the top 3 ids, softmax probabilities and labels.

    /usr/bin/python3 tools/goldens/make_hello_golden.py
"""
import json
import os

import torch
from PIL import Image
from transformers import AutoTokenizer, BertForMaskedLM, ViTForImageClassification, ViTImageProcessor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEXT_MODEL = "tests/models/data/bert_tiny"
TEXT = "The cat fell at the bank."
IMAGE_MODEL = "tests/models/data/vit_tiny"
IMAGE = "assets/images/cat.jpg"


def summary(t):
    flat = t.reshape(-1).double()
    return {"shape": list(t.shape), "mean_abs": flat.abs().mean().item(), "first": flat[:8].tolist()}


def text_golden():
    path = os.path.join(ROOT, TEXT_MODEL)
    tok = AutoTokenizer.from_pretrained(path)
    ids = tok(TEXT)["input_ids"]
    pooling = json.load(open(os.path.join(path, "1_Pooling", "config.json")))
    assert pooling["pooling_mode_cls_token"] and not pooling["pooling_mode_mean_tokens"]
    model = BertForMaskedLM.from_pretrained(path).eval()
    with torch.no_grad():
        out = model(torch.tensor([ids]), output_hidden_states=True)
    hidden = out.hidden_states[-1]
    return {"model": TEXT_MODEL, "text": TEXT, "tokens": tok.convert_ids_to_tokens(ids), "ids": ids,
            "outputs": {"last_hidden_state": summary(hidden), "logits": summary(out.logits),
                        "sentence_embedding": summary(hidden[:, 0])}}


def image_golden():
    path = os.path.join(ROOT, IMAGE_MODEL)
    processor = ViTImageProcessor.from_pretrained(path)
    model = ViTForImageClassification.from_pretrained(path).eval()
    pixels = processor(images=Image.open(os.path.join(ROOT, IMAGE)), return_tensors="pt")["pixel_values"]
    with torch.no_grad():
        probs = model(pixels).logits.softmax(-1)[0]
    top = torch.topk(probs, 3)
    return {"model": IMAGE_MODEL, "image": IMAGE,
            "top": [[i, p, model.config.id2label[i]] for p, i in zip(top.values.tolist(), top.indices.tolist())]}


if __name__ == "__main__":
    torch.manual_seed(0)
    golden = {"transformers": __import__("transformers").__version__, "text": text_golden(),
              "image": image_golden()}
    with open(os.path.join(ROOT, "tests", "install", "hello_golden.json"), "w") as f:
        json.dump(golden, f, indent=1)
        f.write("\n")
