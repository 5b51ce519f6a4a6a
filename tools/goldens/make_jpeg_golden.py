#!/usr/bin/env python3
"""JPEG (and PNG) decoding goldens for models/image/jpeg_decode.c (tests/models/test_jpeg.c): small JPEGs
written with Pillow 13 (libjpeg-turbo) and what Pillow 13 makes of each, Image.open(path)
.convert("RGB") as a uint8 [H, W, 3] .npy, or the exception it raises. Every case is whatever
Pillow does, good or bad: subsamplings 4:4:4 / 4:2:2 / 4:2:0, progressive, greyscale, RGB
(Adobe transform 0), CMYK and YCCK (Adobe, inverted), restart markers, odd sizes, and broken
files: truncated at several places, bit flips in the entropy-coded data (libjpeg warns and
Pillow keeps the pixels), an extra 0xFF before the SOI, an unknown marker, trailing bytes. And
PNGs (stb_image's side) in the layouts where a decoder could differ from Pillow: 16-bit, 1/2/4-bit
grey and palette, tRNS, Adam7.

Also pixel_values_{vit_tiny,deit_tiny}.npy: the Hugging Face processor of those checkpoints
(transformers 4.38.2) on the demo JPEGs and three of the above, which `vkf classify` must match.

Needs Pillow 13 (its wheel bundles libjpeg-turbo 3.x; the C side links Debian's 2.1, whose
decoded pixels are the same), numpy, transformers. Development time only; CI reads the
committed files.

    /usr/bin/python3 -m pip install --target /tmp/pil13 pillow==13.0.0
    PYTHONPATH=/tmp/pil13 /usr/bin/python3 tools/goldens/make_jpeg_golden.py     (from the repo root)
"""
import io
import os
import struct
import zlib

import numpy as np
import PIL
from PIL import Image

OUT = os.path.join("tests", "models", "golden", "jpeg")


def photo(w, h, x0=40, y0=60):
    """A crop of a committed photo: natural content for the IDCT and the upsampling."""
    im = Image.open(os.path.join("assets", "images", "astronaut.jpg")).convert("RGB")
    return np.asarray(im)[y0 : y0 + h, x0 : x0 + w].copy()


def edges(w, h):
    """Saturated primaries with hard edges and noise: IDCT overshoot, the range limit after the
    upsampling and the colour conversion's clamping."""
    rng = np.random.default_rng(18)
    y, x = np.mgrid[0:h, 0:w]
    a = np.zeros((h, w, 3), np.int32)
    a[..., 0] = np.where((x // 3 + y // 2) % 2, 255, 0)
    a[..., 1] = np.where((x // 5) % 2, 0, 255)
    a[..., 2] = np.where((y // 3) % 2, 255, 10)
    a += rng.integers(-30, 31, a.shape)
    return np.clip(a, 0, 255).astype(np.uint8)


def save(arr_or_im, **kw):
    im = arr_or_im if isinstance(arr_or_im, Image.Image) else Image.fromarray(arr_or_im)
    b = io.BytesIO()
    im.save(b, "JPEG", **kw)
    return b.getvalue()


def cmyk_image(w, h):
    """Real CMYK content with a non-trivial K channel (Pillow's RGB->CMYK leaves K = 0)."""
    rgb = photo(w, h, 120, 30).astype(np.int32)
    k = 255 - rgb.max(axis=2)
    cmy = 255 - rgb - k[..., None]
    return Image.fromarray(np.dstack([cmy, k]).astype(np.uint8), "CMYK")


def with_adobe_transform(data, transform):
    """The same CMYK file with the Adobe APP14 transform byte changed: 2 declares YCCK, so the
    decoder converts the first three components from YCbCr (a valid YCCK file)."""
    at = data.find(b"\xff\xee\x00\x0eAdobe")
    assert at > 0, "Pillow wrote no Adobe marker for CMYK"
    b = bytearray(data)
    b[at + 4 + 11] = transform  # FF EE, length, "Adobe", version (2), flags0 (2), flags1 (2)
    return bytes(b)


def scan_start(data):
    """Offset of the first byte after the first SOS header."""
    i = data.index(b"\xff\xda")
    return i + 2 + (data[i + 2] << 8 | data[i + 3])


def flip(data, offsets):
    b = bytearray(data)
    for o in offsets:
        b[o] ^= 0x5A
    return bytes(b)


def insert_before_sos(data, segment):
    i = data.index(b"\xff\xda")
    return data[:i] + segment + data[i:]


def cases():
    s420 = save(photo(37, 23), quality=90, subsampling=2)
    prog = save(photo(41, 29), quality=85, subsampling=2, progressive=True)
    cmyk = save(cmyk_image(37, 23), quality=90)
    ss = scan_start(s420)
    ps = scan_start(prog)
    yield "s444_37x23", save(photo(37, 23), quality=90, subsampling=0)
    yield "s422_37x23", save(photo(37, 23), quality=90, subsampling=1)
    yield "s420_37x23", s420
    yield "s420_q40_61x47", save(photo(61, 47, 10, 10), quality=40, subsampling=2)
    yield "s420_optimize_50x34", save(photo(50, 34, 90, 5), quality=75, optimize=True)
    yield "edges_s420_33x17", save(edges(33, 17), quality=95, subsampling=2)
    yield "edges_s422_35x18", save(edges(35, 18), quality=70, subsampling=1)
    yield "edges_s444_16x16", save(edges(16, 16), quality=100, subsampling=0)
    yield "progressive_s420_41x29", prog
    yield "progressive_s444_37x23", save(photo(37, 23), quality=90, subsampling=0, progressive=True)
    yield "grey_37x23", save(Image.fromarray(photo(37, 23)).convert("L"), quality=90)
    yield "grey_progressive_29x19", save(
        Image.fromarray(photo(29, 19, 5, 90)).convert("L"), quality=80, progressive=True)
    yield "rgb_adobe_37x23", save(photo(37, 23), quality=90, keep_rgb=True)
    yield "cmyk_37x23", cmyk
    yield "ycck_37x23", with_adobe_transform(cmyk, 2)
    yield "restart_blocks_s420_64x40", save(photo(64, 40), quality=90, restart_marker_blocks=1)
    yield "restart_rows_s444_45x33", save(photo(45, 33), quality=90, subsampling=0,
                                          restart_marker_rows=1)
    yield "large_s420_160x120", save(photo(160, 120, 0, 0), quality=92, subsampling=2)
    # Broken files: whatever Pillow does with them is the golden.
    yield "extra_ff_before_soi", b"\xff" + s420
    yield "truncated_header", s420[: ss - 20]
    yield "truncated_scan_start", s420[: ss + 10]
    yield "truncated_scan_half", s420[: (ss + len(s420)) // 2]
    yield "truncated_no_eoi", s420[:-2]
    yield "truncated_progressive", prog[: (ps + len(prog)) // 2]
    yield "truncated_progressive_no_eoi", prog[:-2]
    yield "corrupt_entropy_s420", flip(s420, [ss + 20, ss + 21, (ss + len(s420)) // 2])
    yield "corrupt_entropy_progressive", flip(prog, [ps + 10, ps + 11])
    rst = save(photo(64, 40), quality=90, restart_marker_blocks=1)
    yield "corrupt_entropy_restart", flip(rst, [scan_start(rst) + 30, scan_start(rst) + 31])
    last = prog.rindex(b"\xff\xda")  # the last scan (a refinement), repeated: libjpeg warns
    yield "repeated_last_scan", prog[:-2] + prog[last:-2] * 5 + b"\xff\xd9"
    yield "trailing_garbage", s420 + b"\x00garbage after EOI\xff\xd8\xff"
    yield "unknown_marker_tem", insert_before_sos(s420, b"\xff\x01")
    yield "two_components", s420.replace(b"\xff\xc0\x00\x11\x08\x00\x17\x00\x25\x03",
                                         b"\xff\xc0\x00\x11\x08\x00\x17\x00\x25\x02", 1)
    yield "bad_huffman_counts", bad_dht(s420)
    yield "zero_width", s420.replace(b"\xff\xc0\x00\x11\x08\x00\x17\x00\x25",
                                     b"\xff\xc0\x00\x11\x08\x00\x17\x00\x00", 1)
    yield "soi_only", b"\xff\xd8\xff\xd9"


def png_chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png_bytes(samples, bit_depth, color_type, interlace=False, plte=None, trns=None):
    """A PNG written by hand, for what Pillow cannot write: 16-bit RGB(A) and grey+alpha,
    1/2/4-bit grey and palette, Adam7 interlacing. samples: [H, W, channels] integers."""
    h, w, _ = samples.shape

    def raw_rows(px):
        out = b""
        for row in px:
            flat = row.reshape(-1)
            if bit_depth == 16:
                out += b"\0" + flat.astype(">u2").tobytes()
            elif bit_depth == 8:
                out += b"\0" + flat.astype(np.uint8).tobytes()
            else:  # pack several samples per byte, most significant first
                per = 8 // bit_depth
                flat = np.concatenate([flat, np.zeros((-len(flat)) % per, flat.dtype)])
                packed = np.zeros(len(flat) // per, np.int64)
                for k in range(per):
                    packed = packed << bit_depth | flat[k::per]
                out += b"\0" + packed.astype(np.uint8).tobytes()
        return out

    if interlace:  # Adam7: seven sub-images, each filtered on its own; empty passes omitted
        passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4),
                  (1, 0, 2, 2), (0, 1, 1, 2)]
        raw = b"".join(raw_rows(samples[y0::dy, x0::dx]) for x0, y0, dx, dy in passes
                       if samples[y0::dy, x0::dx].size)
    else:
        raw = raw_rows(samples)
    ihdr = struct.pack(">IIBBBBB", w, h, bit_depth, color_type, 0, 0, 1 if interlace else 0)
    data = b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr)
    if plte is not None:
        data += png_chunk(b"PLTE", bytes(plte))
    if trns is not None:
        data += png_chunk(b"tRNS", trns)
    return data + png_chunk(b"IDAT", zlib.compress(raw, 9)) + png_chunk(b"IEND", b"")


def png_cases():
    """PNG goes through stb_image: the layouts where it could differ from Pillow."""
    rng = np.random.default_rng(1018)
    rgb16 = rng.integers(0, 65536, (11, 13, 3))
    yield "rgb16_13x11.png", png_bytes(rgb16, 16, 2)
    yield "rgba16_13x11.png", png_bytes(rng.integers(0, 65536, (11, 13, 4)), 16, 6)
    yield "greyalpha16_13x11.png", png_bytes(rng.integers(0, 65536, (11, 13, 2)), 16, 4)
    # Pillow opens 16-bit grey as "I;16" and convert("RGB") clips values to 255.
    grey16 = rng.integers(0, 65536, (11, 13, 1))
    grey16[0, :8, 0] = [0, 1, 254, 255, 256, 300, 65535, 1000]
    yield "grey16_13x11.png", png_bytes(grey16, 16, 0)
    yield "grey16_trns_13x11.png", png_bytes(grey16, 16, 0, trns=struct.pack(">H", 255))
    yield "rgb16_adam7_13x11.png", png_bytes(rgb16, 16, 2, interlace=True)
    yield "rgb8_adam7_13x11.png", png_bytes(rng.integers(0, 256, (11, 13, 3)), 8, 2,
                                            interlace=True)
    for depth in (1, 2, 4):
        yield f"grey{depth}_13x11.png", png_bytes(rng.integers(0, 1 << depth, (11, 13, 1)),
                                                  depth, 0)
        colours = rng.integers(0, 256, (1 << depth) * 3)
        yield f"palette{depth}_13x11.png", png_bytes(
            rng.integers(0, 1 << depth, (11, 13, 1)), depth, 3, plte=colours,
            trns=bytes([0, 128]))
    yield "grey8_trns_13x11.png", png_bytes(rng.integers(0, 256, (11, 13, 1)), 8, 0,
                                            trns=struct.pack(">H", 7))
    yield "grey4_adam7_13x11.png", png_bytes(rng.integers(0, 16, (11, 13, 1)), 4, 0,
                                             interlace=True)


def bad_dht(data):
    """A Huffman table whose code counts add up to 512 (stb_image 2.27 overran its arrays)."""
    i = data.index(b"\xff\xc4")
    b = bytearray(data)
    b[i + 5 : i + 21] = b"\x20" * 16
    return bytes(b)


# The whole classify input path: these images through the tiny checkpoints' processors.
PROCESSOR_IMAGES = [os.path.join("assets", "images", f) for f in
                    ("astronaut.jpg", "cat.jpg", "coffee.jpg", "rocket.jpg")] + [
                    os.path.join(OUT, f + ".jpg") for f in
                    ("grey_37x23", "cmyk_37x23", "progressive_s420_41x29")]
PROCESSOR_MODELS = ("vit_tiny", "deit_tiny")


def processor_goldens():
    """pixel_values of Hugging Face's image processor (transformers 4.38.2, the checkpoint's own
    preprocessor_config.json) on Pillow 13's Image.open().convert("RGB") of each image."""
    import transformers
    from transformers import AutoImageProcessor

    images = [Image.open(p).convert("RGB") for p in PROCESSOR_IMAGES]
    for model in PROCESSOR_MODELS:
        proc = AutoImageProcessor.from_pretrained(os.path.join("tests", "models", "data", model))
        px = proc(images=images, return_tensors="np")["pixel_values"].astype("<f4")
        np.save(os.path.join(OUT, f"pixel_values_{model}.npy"), px)
        print(f"pixel_values_{model}: {type(proc).__name__} (transformers "
              f"{transformers.__version__}) {px.shape}")
    with open(os.path.join(OUT, "pixel_values_images.txt"), "w") as f:
        f.write("\n".join(PROCESSOR_IMAGES) + "\n")


def main():
    assert PIL.__version__.split(".")[0] == "13", f"need Pillow 13, have {PIL.__version__}"
    os.makedirs(OUT, exist_ok=True)
    lines = [
        "# Goldens for tests/models/test_jpeg.c, written by tools/goldens/make_jpeg_golden.py; do not edit.",
        f"# Pillow {PIL.__version__}: Image.open(FILE).convert('RGB') -> FILE's stem + .npy (uint8",
        "# [H, W, 3]), or 'error' with what Pillow raised.",
    ]
    files = [(n + ".jpg", d) for n, d in cases()] + list(png_cases())
    for file, data in files:
        name = os.path.splitext(file)[0]
        path = os.path.join(OUT, file)
        with open(path, "wb") as f:
            f.write(data)
        try:
            with Image.open(path) as im:
                mode = im.mode
                rgb = np.asarray(im.convert("RGB"), dtype=np.uint8)
        except Exception as e:  # noqa: BLE001 -- any failure is the golden
            msg = f"{type(e).__name__}: {e}".replace("\n", " ")
            lines.append(f"{file} error {msg}")
            print(f"{name}: {len(data)} bytes, error {msg}")
            continue
        np.save(os.path.join(OUT, name + ".npy"), rgb)
        lines.append(f"{file} ok {rgb.shape[1]}x{rgb.shape[0]} {mode}")
        print(f"{name}: {len(data)} bytes, {mode} {rgb.shape[1]}x{rgb.shape[0]}")
    with open(os.path.join(OUT, "manifest.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    processor_goldens()


if __name__ == "__main__":
    main()
