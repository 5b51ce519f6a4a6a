#!/usr/bin/env python3
"""Writes the small reference files that tests/models/test_safetensors.c and test_npy.c read back:
a .safetensors file written by the `safetensors` package and .npy files written by NumPy, so the C
readers are checked against the reference writers rather than against themselves.

    pip install safetensors numpy
    python3 tools/goldens/make_reader_fixtures.py            # writes into tests/models/data/

The values are simple formulas (restated in the C tests) so the tests need no Python at run time.
"""
import os
import sys

import numpy as np
import safetensors

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "tests", "models", "data")


def bf16_bits(values):
    """Top 16 bits of float32: exact for the values below, which all fit in bfloat16."""
    f = np.asarray(values, dtype=np.float32)
    bits = f.view(np.uint32)
    assert np.all((bits & 0xFFFF) == 0), "value not exactly representable in bfloat16"
    return (bits >> 16).astype(np.uint16)


def write_safetensors(path):
    tensors = {
        # [1, 1, 8]: i * 0.5 - 2
        "vit.embeddings.cls_token": (np.arange(8, dtype=np.float32) * 0.5 - 2).reshape(1, 1, 8),
        # [3, 4]: (i - 5) * 0.375, then two special values the C test checks by bits
        "w.f16": ((np.arange(12, dtype=np.float32) - 5) * 0.375).astype(np.float16).reshape(3, 4),
        # [1, 2, 2, 3]: i
        "block.4d": np.arange(12, dtype=np.float16).reshape(1, 2, 2, 3),
        "ids": np.array([0, 1, -7, 123456, 2**40], dtype=np.int64),
        "mask": np.array([[1, 0], [-1, 2147483647]], dtype=np.int32),
        "scalar": np.array(42.5, dtype=np.float32),
        "empty": np.zeros((0, 4), dtype=np.float32),
    }
    tensors["w.f16"][2, 2] = np.float16(65504.0)  # largest finite half
    tensors["w.f16"][2, 3] = np.float16(2.0**-24)  # smallest subnormal half

    # safetensors.numpy.save_file cannot write bfloat16 (numpy has no such dtype), so every tensor
    # goes through the serializer that save_file itself calls, with BF16 given as raw bits.
    bf = bf16_bits([1.0, -2.5, 0.15625, 256.0, -0.0078125, 196608.0])
    specs = {}
    keep = []
    for name, arr in tensors.items():
        a = arr.copy(order="C")  # ascontiguousarray would turn the 0-d scalar into 1-d
        keep.append(a)
        specs[name] = safetensors.TensorSpec(dtype=a.dtype.name, shape=a.shape,
                                             data_ptr=a.ctypes.data, data_len=a.nbytes)
    specs["w.bf16"] = safetensors.TensorSpec(dtype="bfloat16", shape=(2, 3),
                                             data_ptr=bf.ctypes.data, data_len=bf.nbytes)
    # One metadata key only: the writer orders metadata keys by hash, so two would make the file
    # differ from run to run.
    safetensors.serialize_file(specs, path, metadata={"format": "pt"})


def write_npy(out):
    np.save(os.path.join(out, "readers_f32.npy"),
            (np.arange(24, dtype=np.float32) * 0.5 - 3).reshape(2, 3, 4))
    np.save(os.path.join(out, "readers_f16.npy"),
            np.array([1.0, -0.0, 65504.0, 2.0**-24, 0.333251953125], dtype=np.float16))
    np.save(os.path.join(out, "readers_i32.npy"),
            np.array([[1, -2], [2147483647, -2147483648], [0, 7]], dtype=np.int32))
    np.save(os.path.join(out, "readers_scalar.npy"), np.array(7.25, dtype=np.float32))
    with open(os.path.join(out, "readers_v2.npy"), "wb") as f:
        np.lib.format.write_array(f, np.arange(6, dtype=np.int32).reshape(1, 2, 3, 1),
                                  version=(2, 0))
    # Inputs the C tests must reject with UNSUPPORTED, made by the reference writer.
    np.save(os.path.join(out, "readers_f64.npy"), np.arange(3, dtype=np.float64))
    np.save(os.path.join(out, "readers_fortran.npy"),
            np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else OUT
    os.makedirs(out, exist_ok=True)
    write_safetensors(os.path.join(out, "readers.safetensors"))
    write_npy(out)


if __name__ == "__main__":
    main()
