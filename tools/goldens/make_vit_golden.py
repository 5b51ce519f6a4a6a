#!/usr/bin/env python3
"""Seeded random ViT / DeiT checkpoints in the real Hugging Face format, and reference logits for
the sample images, for tests/models/test_vit.c and the parity check in the issue note.

Default (CI, small, committed):
  tests/models/data/vit_tiny/   ViTForImageClassification (bilinear resize, no crop)
  tests/models/data/deit_tiny/  DeiTForImageClassificationWithTeacher (bicubic resize + centre crop)
  tests/models/data/deit_cls_tiny/  DeiTForImageClassification (1 layer, 5 labels)
  each: config.json, model.safetensors, preprocessor_config.json (save_pretrained, safetensors),
  tests/models/golden/vit/<name>_pixel_values.npy  float32 [B, 3, S, S]  (HF processor output)
  tests/models/golden/vit/<name>_logits.npy        float32 [B, num_labels] (fp32, eval mode)
  tests/models/golden/vit/images.txt               the B image paths, in batch order
  tests/models/data/vit_tiny_bare/  ViTModel (no head, with pooler): goldens
  vit_tiny_bare_last_hidden_state.npy [B, N, D] and vit_tiny_bare_pooler_output.npy [B, D]

--full DIR (not committed; hundreds of MB): the real configurations with seeded random weights:
  DIR/vit-base-patch16-224/, DIR/deit-tiny-distilled-patch16-224/, DIR/vit-base-patch32-384/
  each with golden_pixel_values.npy, golden_logits.npy and golden_images.txt beside the model.

Needs: torch, transformers (4.38 works with torch 1.13), safetensors, pillow, numpy.
Usage (from the repo root):  python3 tools/goldens/make_vit_golden.py [--full /tmp/vkf-vit]
"""
import argparse
import glob
import json
import os

import numpy as np
import torch
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join("tests", "models", "data")
GOLDEN = os.path.join("tests", "models", "golden", "vit")
IMAGES = sorted(glob.glob(os.path.join("assets", "images", "*.jpg")))

# Readable labels so `vkf classify` on the tiny models prints words; the weights are random, so
# which word wins says nothing about the image.
TINY_LABELS = ["tabby cat", "coffee mug", "astronaut", "rocket", "teapot", "banana", "lighthouse"]
IMAGENET_STANDARD = [0.5, 0.5, 0.5]
IMAGENET_MEAN, IMAGENET_STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def randomize(model, seed, scale):
    """HF initialises biases to 0 and LayerNorm to (1, 0), which would hide a missing bias or
    gamma; draw every parameter instead. `scale` is the weight std (biases/beta get scale/2,
    LayerNorm gammas 1 +- scale): large enough that logits spread over a few units."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=g)
            if "layernorm" in name and name.endswith("weight"):
                p.copy_(1.0 + scale * noise)
            elif name.endswith("bias") or "layernorm" in name:
                p.copy_(0.5 * scale * noise)
            else:
                p.copy_(scale * noise)


def build(kind, cfg_kwargs, labels, seed, scale):
    from transformers import (DeiTConfig, DeiTForImageClassification,
                              DeiTForImageClassificationWithTeacher, ViTConfig,
                              ViTForImageClassification)

    id2label = {i: name for i, name in enumerate(labels)}
    common = dict(id2label=id2label, label2id={v: k for k, v in id2label.items()}, **cfg_kwargs)
    torch.manual_seed(seed)
    if kind == "vit":
        model = ViTForImageClassification(ViTConfig(**common))
    elif kind == "deit_cls":
        model = DeiTForImageClassification(DeiTConfig(**common))
    else:
        model = DeiTForImageClassificationWithTeacher(DeiTConfig(**common))
    if scale:
        randomize(model, seed, scale)
    return model.eval()


def processor(kind, image_size, resize):
    from transformers import DeiTImageProcessor, ViTImageProcessor

    if kind == "vit":  # "deit_cls" falls through to DeiT's processor
        return ViTImageProcessor(do_resize=True, size={"height": image_size, "width": image_size},
                                 resample=2, do_rescale=True, rescale_factor=1 / 255,
                                 do_normalize=True, image_mean=IMAGENET_STANDARD,
                                 image_std=IMAGENET_STANDARD)
    return DeiTImageProcessor(do_resize=True, size={"height": resize, "width": resize}, resample=3,
                              do_center_crop=True,
                              crop_size={"height": image_size, "width": image_size},
                              do_rescale=True, rescale_factor=1 / 255, do_normalize=True,
                              image_mean=IMAGENET_MEAN, image_std=IMAGENET_STD)


def make(kind, out_dir, cfg_kwargs, labels, seed, scale, resize, golden_prefix, save_pixels=True):
    model = build(kind, cfg_kwargs, labels, seed, scale)
    model.save_pretrained(out_dir, safe_serialization=True)
    proc = processor(kind, cfg_kwargs["image_size"], resize)
    proc.save_pretrained(out_dir)
    pil = [Image.open(p).convert("RGB") for p in IMAGES]
    pixels = proc(images=pil, return_tensors="pt")["pixel_values"]  # [B, 3, S, S]
    with torch.no_grad():
        logits = model(pixel_values=pixels).logits  # [B, L]
    pixels = pixels.numpy().astype("<f4")
    logits = logits.numpy().astype("<f4")
    if save_pixels:
        np.save(golden_prefix + "pixel_values.npy", pixels)
    np.save(golden_prefix + "logits.npy", logits)
    size = os.path.getsize(os.path.join(out_dir, "model.safetensors"))
    print(f"{out_dir}: {sum(p.numel() for p in model.parameters())} parameters, "
          f"{size} bytes; logits {logits.shape}, range [{logits.min():.3f}, {logits.max():.3f}], "
          f"top-1 {logits.argmax(1).tolist()}")


def make_bare(out_dir, cfg_kwargs, seed, scale, golden_prefix):
    """ViTModel with its pooler: the encoder alone (what feature extraction uses). Same processor
    as vit_tiny, so its pixel_values golden serves both."""
    from transformers import ViTConfig, ViTModel

    torch.manual_seed(seed)
    model = ViTModel(ViTConfig(**cfg_kwargs), add_pooling_layer=True)
    randomize(model, seed, scale)
    model.eval().save_pretrained(out_dir, safe_serialization=True)
    processor("vit", cfg_kwargs["image_size"], 0).save_pretrained(out_dir)
    pil = [Image.open(p).convert("RGB") for p in IMAGES]
    pixels = processor("vit", cfg_kwargs["image_size"], 0)(images=pil, return_tensors="pt")
    with torch.no_grad():
        out = model(pixel_values=pixels["pixel_values"])
    np.save(golden_prefix + "last_hidden_state.npy", out.last_hidden_state.numpy().astype("<f4"))
    np.save(golden_prefix + "pooler_output.npy", out.pooler_output.numpy().astype("<f4"))
    print(f"{out_dir}: last_hidden_state {tuple(out.last_hidden_state.shape)}")


def tiny():
    os.makedirs(GOLDEN, exist_ok=True)
    # Head dim 16 (a multiple of 8, as the attention kernel needs); 17 / 18 tokens so no tile
    # is full; 7 labels. Weight std 0.2 keeps activations O(1) over 2 layers.
    base = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                image_size=32, patch_size=8, num_channels=3, layer_norm_eps=1e-12)
    make("vit", os.path.join(DATA, "vit_tiny"), base, TINY_LABELS, 1234, 0.2, 0,
         os.path.join(GOLDEN, "vit_tiny_"))
    deit = dict(base, hidden_size=48, num_attention_heads=3, intermediate_size=96,
                layer_norm_eps=1e-6)
    make("deit", os.path.join(DATA, "deit_tiny"), deit, TINY_LABELS, 4321, 0.2, 36,
         os.path.join(GOLDEN, "deit_tiny_"))
    # DeiT without the teacher head: one classifier on the CLS token, distillation token unused.
    make("deit_cls", os.path.join(DATA, "deit_cls_tiny"), dict(deit, num_hidden_layers=1),
         TINY_LABELS[:5], 777, 0.2, 36, os.path.join(GOLDEN, "deit_cls_tiny_"),
         save_pixels=False)  # same processor as deit_tiny: its pixel_values serve both
    make_bare(os.path.join(DATA, "vit_tiny_bare"), dict(base, qkv_bias=False), 999, 0.2,
              os.path.join(GOLDEN, "vit_tiny_bare_"))
    with open(os.path.join(GOLDEN, "images.txt"), "w") as f:
        f.write("".join(p + "\n" for p in IMAGES))


def full(out):
    labels = [f"class_{i}" for i in range(1000)]
    # The published configurations (google/vit-base-patch16-224, facebook/deit-tiny-distilled-
    # patch16-224, google/vit-base-patch32-384) with HF's own random init (std 0.02) plus random
    # biases/LayerNorm (scale 0.02): realistic magnitudes over 12 layers.
    vit_b = dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                 intermediate_size=3072, patch_size=16, image_size=224, layer_norm_eps=1e-12)
    deit_t = dict(hidden_size=192, num_hidden_layers=12, num_attention_heads=3,
                  intermediate_size=768, patch_size=16, image_size=224, layer_norm_eps=1e-12)
    cases = [
        ("vit", "vit-base-patch16-224", vit_b, 0),
        ("deit", "deit-tiny-distilled-patch16-224", deit_t, 256),
        ("vit", "vit-base-patch32-384", dict(vit_b, patch_size=32, image_size=384), 0),
    ]
    for seed, (kind, name, cfg, resize) in enumerate(cases):
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        make(kind, d, cfg, labels, 100 + seed, 0.02, resize, os.path.join(d, "golden_"))
        with open(os.path.join(d, "golden_images.txt"), "w") as f:
            f.write("".join(os.path.join(ROOT, p) + "\n" for p in IMAGES))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--full", metavar="DIR", help="write the full-size checkpoints to DIR instead")
    args = ap.parse_args()
    os.chdir(ROOT)
    torch.set_num_threads(2)
    if args.full:
        full(os.path.abspath(args.full))
    else:
        tiny()


if __name__ == "__main__":
    main()
