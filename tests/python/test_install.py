"""`pip install --no-deps --no-build-isolation --target DIR python/` works offline, and the
installed package (not the source tree's) imports, finds a library copied next to it, and runs;
the package finds an installed library through pkg-config."""

import ctypes.util
import os
import shutil
import subprocess
import sys

import pytest

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


def build_dir():
    d = os.environ.get("VKF_BUILD_DIR") or os.path.dirname(os.path.dirname(os.path.realpath(os.environ["VKFORMER_LIBRARY"])))
    assert os.path.isfile(os.path.join(d, "CMakeCache.txt")), "set VKF_BUILD_DIR to the build folder (%s is none)" % d
    return d


def test_installed_library_through_pkg_config(tmp_path):
    """cmake --install into a prefix; the package, with no library beside it and no
    VKFORMER_LIBRARY, finds the prefix's libvkformer.so through pkg-config's libdir and runs the
    default ViT the install ships."""
    if ctypes.util.find_library("vkformer"):
        pytest.skip("a libvkformer is installed on the linker's search path here, which comes first")
    prefix = tmp_path / "prefix"
    r = subprocess.run([shutil.which("cmake") or "cmake", "--install", build_dir(), "--prefix", str(prefix)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    assert r.returncode == 0, r.stdout.decode()
    shutil.copytree(os.path.join(ROOT, "python/vkformer"), tmp_path / "site" / "vkformer",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so*"))
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "site"), PKG_CONFIG_PATH=str(prefix / "lib/pkgconfig"))
    env.pop("VKFORMER_LIBRARY")
    code = """
import sys, vkformer
print(vkformer.library_path())
with vkformer.Model.load(sys.argv[1] + "/share/vkformer/models/vit_fashion_mnist") as m:
    top = m.classify([sys.argv[2]], top_k=2)[0]
    assert len(top) == 2 and top[0].prob >= top[1].prob > 0, top
    assert top[0].label == "Trouser", top  # the sample is a test-split trouser the model gets right
    assert m.device.validation_messages == 0
"""
    r = subprocess.run([sys.executable, "-c", code, str(prefix), os.path.join(ROOT, "assets/images/fashion-mnist/0002_trouser.png")],
                       env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    assert r.returncode == 0, r.stderr.decode()
    assert os.path.realpath(r.stdout.decode().split()[0]).startswith(str(prefix / "lib")), r.stdout
