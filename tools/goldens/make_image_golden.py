#!/usr/bin/env python3
"""Goldens for models/image/image.c: what Hugging Face's image processors (ViTImageProcessor, and
DeiT's resize-256 + centre-crop-224 recipe) and Pillow's convert("RGB") produce, written to
tests/models/golden/image/ for tests/models/test_image.c. Also (re)makes the demo images in
assets/images/ from scikit-image's public-domain / CC0 samples with --assets.

Needs: pip install "pillow>=13" numpy "transformers>=5" scikit-image. No torch: the
processors run on their PIL/numpy backend and return numpy arrays. Pillow 13 because its resize
picks the pass order (vertical first for images shrunk mostly in height) and has the MKS filters
that models/image/image_resample.c follows; transformers 5 because its PIL-backed ViT processor also
takes size={"shortest_edge": n}. scikit-image supplies the source photos (CC0 / public domain).

Usage (from the repo root):  python3 tools/goldens/make_image_golden.py [--assets]
"""
import argparse
import os
import struct
import sys

import numpy as np
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join("tests", "models", "golden", "image")
ASSETS = os.path.join("assets", "images")

IMAGENET_STANDARD = ([0.5, 0.5, 0.5], [0.5, 0.5, 0.5])
IMAGENET_DEFAULT = ([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])

# Demo images: (file in skimage/data, our name, short side). Saved as JPEG q90 so each stays
# well under 60 KB. models/image decodes JPEG with libjpeg-turbo as Pillow does, so the demo
# JPEGs are exact cases too (tools/goldens/make_jpeg_golden.py covers the JPEG variants).
DEMO = [
    ("chelsea.png", "cat.jpg", 256),
    ("coffee.png", "coffee.jpg", 256),
    ("astronaut.png", "astronaut.jpg", 256),
    ("rocket.jpg", "rocket.jpg", 256),
]


def processor_class():
    """The PIL-backed ViT processor: transformers >= 5 names it ViTImageProcessorPil; before 5
    ViTImageProcessor itself was the PIL/numpy one. Same arithmetic either way."""
    try:
        from transformers import ViTImageProcessorPil

        return ViTImageProcessorPil
    except ImportError:
        from transformers import ViTImageProcessor

        return ViTImageProcessor


def make_assets():
    import skimage

    src = os.path.join(os.path.dirname(skimage.__file__), "data")
    os.makedirs(ASSETS, exist_ok=True)
    for name, out, short in DEMO:
        im = Image.open(os.path.join(src, name)).convert("RGB")
        w, h = im.size
        s = short / min(w, h)
        im = im.resize((round(w * s), round(h * s)), Image.Resampling.LANCZOS)
        path = os.path.join(ASSETS, out)
        im.save(path, quality=90, optimize=True)
        print(f"{path}: {im.size[0]}x{im.size[1]}, {os.path.getsize(path)} bytes")


def make_inputs():
    """Lossless inputs for the exact cases: a photo (coffee cup, CC0), a noise image, and small
    grey / grey+alpha / RGBA / palette PNGs for the colour conversions."""
    import skimage

    src = os.path.join(os.path.dirname(skimage.__file__), "data", "coffee.png")
    coffee = Image.open(src).convert("RGB").resize((288, 192), Image.Resampling.LANCZOS)
    coffee.save(os.path.join(GOLDEN, "coffee_288x192.png"), optimize=True)

    rng = np.random.default_rng(20261121)
    noise = rng.integers(0, 256, (41, 29, 3), dtype=np.uint8)  # [H, W, 3], portrait
    Image.fromarray(noise, "RGB").save(os.path.join(GOLDEN, "noise_29x41.png"))

    h, w = 12, 16
    yy, xx = np.mgrid[0:h, 0:w]
    grey = ((xx * 16 + yy * 5) % 256).astype(np.uint8)
    alpha = ((xx * 7 + yy * 23) % 256).astype(np.uint8)
    rgb = np.stack([grey, (255 - grey), ((xx ^ yy) * 17 % 256).astype(np.uint8)], -1)
    Image.fromarray(grey, "L").save(os.path.join(GOLDEN, "grey_16x12.png"))
    Image.fromarray(np.stack([grey, alpha], -1), "LA").save(os.path.join(GOLDEN, "greyalpha_16x12.png"))
    Image.fromarray(np.concatenate([rgb, alpha[..., None]], -1), "RGBA").save(
        os.path.join(GOLDEN, "rgba_16x12.png"))
    pal = Image.fromarray(rgb, "RGB").quantize(colors=16)
    pal.info["transparency"] = 3  # tRNS: stb expands to RGBA, convert("RGB") ignores it
    pal.save(os.path.join(GOLDEN, "palette_16x12.png"), transparency=3)


def write_values(name, tensor, sampled):
    """Full tensor: raw float32 little-endian. Sampled: `sampled` (uint32 index, float32 value)
    pairs at fixed pseudo-random flat indices, sorted, so the file stays small."""
    flat = np.ascontiguousarray(tensor, dtype="<f4").reshape(-1)
    path = os.path.join(GOLDEN, name + ".f32")
    with open(path, "wb") as f:
        if sampled:
            idx = np.sort(np.random.default_rng(len(flat)).choice(len(flat), sampled, replace=False))
            for i in idx:
                f.write(struct.pack("<If", int(i), float(flat[i])))
        else:
            f.write(flat.tobytes())
    return os.path.basename(path)


def fmt(values):
    return ",".join(repr(float(v)) for v in values)


def preprocess_case(name, image, params, sampled=0, max_steps=0.0, mean_steps=0.0):
    cls = processor_class()
    kwargs = dict(
        do_resize=params.get("do_resize", True),
        resample=params.get("resample", 2),
        do_center_crop=params.get("do_center_crop", False),
        do_rescale=True,
        rescale_factor=1 / 255,
        do_normalize=True,
        image_mean=params["mean"],
        image_std=params["std"],
    )
    if "shortest_edge" in params:
        kwargs["size"] = {"shortest_edge": params["shortest_edge"]}
        if params.get("longest_edge"):
            kwargs["size"]["longest_edge"] = params["longest_edge"]
    else:
        kwargs["size"] = {"height": params["height"], "width": params["width"]}
    if kwargs["do_center_crop"]:
        kwargs["crop_size"] = {"height": params["crop_height"], "width": params["crop_width"]}
    proc = cls(**kwargs)
    pil = Image.open(os.path.join(ROOT, image)).convert("RGB")
    out = proc(images=pil, return_tensors="np")["pixel_values"][0]  # [3, H, W] float32
    assert out.dtype == np.float32 and out.shape[0] == 3, out.shape
    values = write_values(name, out, sampled)
    sums = out.astype(np.float64).reshape(3, -1).sum(1)
    fields = [
        "case=preprocess", f"name={name}", f"image={image}",
        f"do_resize={int(kwargs['do_resize'])}",
        f"height={params.get('height', 0)}", f"width={params.get('width', 0)}",
        f"shortest_edge={params.get('shortest_edge', 0)}",
        f"longest_edge={params.get('longest_edge', 0)}", f"resample={kwargs['resample']}",
        f"do_center_crop={int(kwargs['do_center_crop'])}",
        f"crop_height={params.get('crop_height', 0)}", f"crop_width={params.get('crop_width', 0)}",
        "do_rescale=1", f"rescale_factor={1 / 255!r}", "do_normalize=1",
        f"mean={fmt(params['mean'])}", f"std={fmt(params['std'])}",
        "shape=" + ",".join(str(d) for d in out.shape), f"values={values}", f"sampled={sampled}",
        f"sum={fmt(sums)}", f"max_steps={max_steps!r}", f"mean_steps={mean_steps!r}",
    ]
    return " ".join(fields)


def decode_case(name, image):
    """Pillow's Image.open(...).convert("RGB") as [H, W, 3] values, compared exactly."""
    rgb = np.asarray(Image.open(os.path.join(ROOT, image)).convert("RGB"), dtype=np.float32)
    values = write_values(name, rgb, 0)
    sums = rgb.astype(np.float64).reshape(-1, 3).sum(0)
    return " ".join([
        "case=decode", f"name={name}", f"image={image}",
        "shape=" + ",".join(str(d) for d in rgb.shape), f"values={values}", "sampled=0",
        f"sum={fmt(sums)}", "max_steps=0.0", "mean_steps=0.0",
    ])


def main():
    major = int(Image.__version__.split(".")[0])
    if major < 13:
        sys.exit(f"Pillow {Image.__version__}: need >= 13 (resize pass order, MKS filters)")
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--assets", action="store_true", help="also remake assets/images/*.jpg")
    args = ap.parse_args()
    os.chdir(ROOT)
    os.makedirs(GOLDEN, exist_ok=True)
    if args.assets:
        make_assets()
    make_inputs()

    g = lambda f: os.path.join(GOLDEN, f)  # noqa: E731
    coffee, noise = g("coffee_288x192.png"), g("noise_29x41.png")
    vit = dict(height=224, width=224, resample=2, mean=IMAGENET_STANDARD[0], std=IMAGENET_STANDARD[1])
    deit = dict(height=256, width=256, resample=3, do_center_crop=True, crop_height=224,
                crop_width=224, mean=IMAGENET_DEFAULT[0], std=IMAGENET_DEFAULT[1])
    lines = [
        "# Goldens for tests/models/test_image.c, written by tools/goldens/make_image_golden.py; do not edit.",
        "# One case per line. preprocess: HF ViT-family image processor pixel_values [3, H, W];",
        "# decode: Pillow's Image.open().convert('RGB') [H, W, 3]. values: float32 file, full when",
        "# sampled=0, else (uint32 flat index, float32 value) pairs. sum: per-channel sums.",
        "# max_steps/mean_steps: allowed max/mean |difference| in uint8 levels (0 = exact).",
        "# " + f"pillow {Image.__version__}, numpy {np.__version__}, "
        f"transformers {__import__('transformers').__version__}, processor {processor_class().__name__}",
    ]
    # The two recipes the demo models use, at full size, exact on a lossless photo.
    lines.append(preprocess_case("vit224_coffee", coffee, vit, sampled=4096))
    lines.append(preprocess_case("deit224_coffee", coffee, deit, sampled=4096))
    # Every Pillow filter, shrinking (antialiased) and enlarging, as full tensors.
    for r, rname in enumerate(["nearest", "lanczos", "bilinear", "bicubic", "box", "hamming",
                               "mks2013", "mks2021"]):
        down = dict(vit, height=27, width=40, resample=r)
        lines.append(preprocess_case(f"down_{rname}_coffee", coffee, down))
        up = dict(vit, height=45, width=31, resample=r)
        lines.append(preprocess_case(f"up_{rname}_noise", noise, up))
    # Height shrinks by more than twice the width: Pillow 13 runs the vertical pass first.
    for r in (2, 3):
        tall = dict(vit, height=9, width=25, resample=r)
        lines.append(preprocess_case(f"vfirst_{r}_noise", noise, tall))
    # shortest_edge + a crop taller than the resized image (HF pads with zeros before normalising).
    se = dict(shortest_edge=32, resample=3, do_center_crop=True, crop_height=40, crop_width=36,
              mean=IMAGENET_DEFAULT[0], std=IMAGENET_DEFAULT[1])
    lines.append(preprocess_case("shortest_edge_crop_pad_coffee", coffee, se))
    se_portrait = dict(se, shortest_edge=20, crop_height=24, crop_width=24)
    lines.append(preprocess_case("shortest_edge_portrait_noise", noise, se_portrait))
    # shortest_edge + longest_edge (HF's get_size_with_aspect_ratio): the cap binds in the first
    # two (short side rounded half to even, long side truncated), not in the third.
    capped = dict(vit, do_center_crop=False, shortest_edge=48, longest_edge=64, resample=2)
    del capped["height"], capped["width"]
    lines.append(preprocess_case("longest_edge_capped_coffee", coffee, capped))
    lines.append(preprocess_case("longest_edge_capped_noise", noise,
                                 dict(capped, shortest_edge=20, longest_edge=25, resample=3)))
    lines.append(preprocess_case("longest_edge_loose_coffee", coffee,
                                 dict(capped, shortest_edge=32, longest_edge=100)))
    # The demo JPEGs end to end, exact: libjpeg-turbo with Pillow's settings on both sides.
    for _, out, _ in DEMO:
        path = os.path.join(ASSETS, out)
        stem = os.path.splitext(out)[0]
        lines.append(preprocess_case(f"vit224_{stem}_jpeg", path, vit, sampled=2048))
        lines.append(preprocess_case(f"deit224_{stem}_jpeg", path, deit, sampled=2048))
    for stem in ("grey_16x12", "greyalpha_16x12", "rgba_16x12", "palette_16x12"):
        lines.append(decode_case(f"decode_{stem}", g(stem + ".png")))

    with open(os.path.join(GOLDEN, "manifest.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    total = sum(os.path.getsize(os.path.join(GOLDEN, n)) for n in os.listdir(GOLDEN))
    print(f"{GOLDEN}: {len(lines) - 6} cases, {total} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
