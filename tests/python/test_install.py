"""`pip install --no-deps --no-build-isolation --target DIR python/` works offline, and the
installed package (not the source tree's) imports, finds a library copied next to it, and runs."""

import os
import shutil
import subprocess
import sys

from conftest import ROOT


def test_pip_install_target(tmp_path):
    # Build from a copy: setuptools writes build/ and *.egg-info beside pyproject.toml.
    src = tmp_path / "src"
    shutil.copytree(os.path.join(ROOT, "python"), src, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info", "*.so*"))
    site = tmp_path / "site"
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
                        "--target", str(site), str(src)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=600)
    assert r.returncode == 0, r.stdout.decode()
    assert (site / "vkformer" / "__init__.py").is_file()
    dist = [d for d in os.listdir(site) if d.startswith("vkformer-") and d.endswith(".dist-info")]
    assert dist == ["vkformer-0.1.0.dist-info"], os.listdir(site)
    # The library next to the installed package; VKFORMER_LIBRARY unset, so that copy must be found.
    shutil.copy(os.environ["VKFORMER_LIBRARY"], site / "vkformer" / "libvkformer.so")
    env = dict(os.environ, PYTHONPATH=str(site))
    env.pop("VKFORMER_LIBRARY")
    code = """
import numpy as np, vkformer, sys
assert vkformer.__file__.startswith(sys.argv[1]), vkformer.__file__
assert vkformer.library_path().startswith(sys.argv[1]), vkformer.library_path()
with vkformer.Model.load(sys.argv[2]) as m:
    ids = np.load(sys.argv[3])
    out = m.forward(outputs="logits", input_ids=ids, attention_mask=np.load(sys.argv[4]),
                    token_type_ids=np.load(sys.argv[5]))["logits"]
    print(float(np.max(np.abs(out - np.load(sys.argv[6])))))
    assert m.device.validation_messages == 0
"""
    g = os.path.join(ROOT, "tests/models/golden/forward/bert_tiny_")
    r = subprocess.run([sys.executable, "-c", code, str(site), os.path.join(ROOT, "tests/models/data/bert_tiny"),
                        g + "input_ids.npy", g + "attention_mask.npy", g + "token_type_ids.npy", g + "logits.npy"],
                       env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    assert r.returncode == 0, r.stderr.decode()
    assert float(r.stdout.decode().split()[-1]) <= 1e-4, r.stdout
