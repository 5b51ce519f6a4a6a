#!/usr/bin/env python3
"""Writes tests/models/data/gguf/quantize.gguf, the reference for vkformer's quantisers
(graph/base/quant.c, vkf_quant_quantize; `--quantize` at load time):

  "x"        F32 [ROWS, 512]: rows that stress a quantiser (gaussian, uniform, outliers, all zero,
             constant, one sign only, integers and halves that land on rounding ties, tiny and
             large magnitudes, a row of one value and zeros)
  "q.TYPE"   x quantised to TYPE: Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 by the `gguf` package
             (gguf.quants.quantize, llama.cpp's numpy port of ggml's reference quantisers), Q4_K
             by ggml's own C reference, quantize_row_q4_K_ref, compiled here from a ggml source
             tree (the package has no K-quantiser) with -ffp-contract=off, as vkformer's file is

    git clone https://github.com/ggml-org/ggml /tmp/ggml   # any recent tree
    python3 -m venv /tmp/gvenv && /tmp/gvenv/bin/pip install gguf numpy
    /tmp/gvenv/bin/python tools/goldens/make_quantize_goldens.py --ggml-src /tmp/ggml [--root .]
"""
import argparse
import os
import subprocess
import tempfile

import numpy as np
import gguf
from gguf import GGMLQuantizationType as T
from gguf import quants

COLS = 512
LEGACY = [T.Q8_0, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1]

DRIVER = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
void quantize_row_q4_K_ref(const float *, void *, int64_t);
/* ggml-quants.c refers to these on paths the reference quantiser never takes */
void ggml_abort(const char *f, int l, const char *fmt, ...) { fprintf(stderr, "abort %s:%d\n", f, l); exit(1); }
size_t ggml_row_size(int t, int64_t n) { (void)t; (void)n; abort(); }
size_t ggml_type_size(int t) { (void)t; abort(); }
const char *ggml_type_name(int t) { (void)t; abort(); }
int main(void) {
  static float x[256];
  static unsigned char y[144];
  while (fread(x, sizeof x, 1, stdin) == 1) {
    quantize_row_q4_K_ref(x, y, 256);
    fwrite(y, sizeof y, 1, stdout);
  }
  return 0;
}
"""


def rows():
    rng = np.random.default_rng(20261127)
    out = [
        rng.standard_normal(COLS),
        rng.standard_normal(COLS) * 0.02,  # a typical linear weight
        rng.uniform(-1, 1, COLS),
        rng.uniform(0, 3, COLS),  # one sign only
        -rng.uniform(0, 3, COLS),
        np.zeros(COLS),
        np.full(COLS, 0.75),
        np.full(COLS, -2.5),
        rng.integers(-8, 8, COLS).astype(np.float64),  # ties after scaling
        rng.integers(-32, 32, COLS) / 2.0,
        rng.standard_normal(COLS) * 1e-4,
        rng.standard_normal(COLS) * 300.0,
        rng.standard_t(2, COLS),  # heavy tails
    ]
    spiky = rng.standard_normal(COLS) * 0.05
    spiky[rng.integers(0, COLS, 12)] = rng.choice([-4.0, 6.0], 12)
    out.append(spiky)
    lone = np.zeros(COLS)
    lone[::37] = 1.5
    out.append(lone)
    mixed = rng.standard_normal(COLS)
    mixed[:64] = 0.0  # a zero sub-block beside non-zero ones
    mixed[256:288] = 5.0
    out.append(mixed)
    return np.stack(out).astype(np.float32)


def q4_k_reference(x, ggml_src):
    with tempfile.TemporaryDirectory() as tmp:
        drv = os.path.join(tmp, "drv.c")
        exe = os.path.join(tmp, "drv")
        open(drv, "w").write(DRIVER)
        inc = [f"-I{os.path.join(ggml_src, d)}" for d in ("include", "src", "src/ggml-cpu")]
        subprocess.run(["gcc", "-O2", "-ffp-contract=off", *inc, drv,
                        os.path.join(ggml_src, "src/ggml-quants.c"), "-lm", "-o", exe],
                       check=True)
        res = subprocess.run([exe], input=x.tobytes(), stdout=subprocess.PIPE, check=True)
    return np.frombuffer(res.stdout, dtype=np.uint8).reshape(x.shape[0], -1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=".")
    ap.add_argument("--ggml-src", required=True, help="a ggml source tree (src/ggml-quants.c)")
    a = ap.parse_args()
    x = rows()
    w = gguf.GGUFWriter(os.path.join(a.root, "tests/models/data/gguf/quantize.gguf"), "vkf-test")
    w.add_tensor("x", x)
    for t in LEGACY:
        w.add_tensor("q." + t.name, quants.quantize(x, t), raw_dtype=t)
    w.add_tensor("q.Q4_K", q4_k_reference(x, a.ggml_src), raw_dtype=T.Q4_K)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()
