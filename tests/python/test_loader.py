"""Loading libvkformer.so, the version, devices and the status codes."""

import ctypes.util
import os
import re
import shutil
import subprocess
import sys

import pytest

import vkformer
from vkformer import _capi
from vkformer._loader import library

from conftest import ROOT


def run_python(code, env_update, cwd):
    """Runs `code` in a fresh interpreter (the loader caches its library per process)."""
    env = dict(os.environ)
    for k, v in env_update.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=300)


def test_versions_agree():
    cmake = open(os.path.join(ROOT, "CMakeLists.txt")).read()
    project = re.search(r"project\(vkformer VERSION (\d+\.\d+\.\d+)", cmake).group(1)
    header = open(os.path.join(ROOT, "api/vkformer.h")).read()
    macros = ".".join(re.search(r"#define VKFORMER_VERSION_%s (\d+)" % p, header).group(1)
                      for p in ("MAJOR", "MINOR", "PATCH"))
    assert vkformer.__version__ == project == macros == vkformer.library_version()


def test_status_codes_match_the_library():
    # The values are checked against the header in test_abi; here the library knows exactly as
    # many codes as the mirror ("invalid argument", "not found", ..., then "unknown").
    lib = library()
    names = [lib.vkformer_code_name(code).decode() for code in range(len(_capi.CODE_NAMES) + 1)]
    assert names[0] == "ok" and names[1] == "invalid argument" and names[-1] == "unknown"
    assert "unknown" not in names[:-1] and len(set(names)) == len(names)


def test_library_from_env():
    assert os.path.samefile(vkformer.library_path(), os.environ["VKFORMER_LIBRARY"])


def test_env_naming_a_missing_file(tmp_path):
    r = run_python("import vkformer; vkformer.library_path()",
                   {"VKFORMER_LIBRARY": str(tmp_path / "nope.so")}, str(tmp_path))
    assert r.returncode != 0
    assert re.search(r"OSError: vkformer: VKFORMER_LIBRARY=.*nope.so: no such file", r.stderr.decode()), r.stderr


def test_env_naming_a_file_that_is_no_library(tmp_path):
    bad = tmp_path / "libvkformer.so"
    bad.write_text("not an ELF file")
    r = run_python("import vkformer; vkformer.library_path()", {"VKFORMER_LIBRARY": str(bad)}, str(tmp_path))
    assert r.returncode != 0 and "cannot load VKFORMER_LIBRARY=" in r.stderr.decode(), r.stderr


def copy_package(dest):
    shutil.copytree(os.path.join(ROOT, "python/vkformer"), dest / "vkformer",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so*"))


def test_copy_next_to_the_package(tmp_path):
    copy_package(tmp_path)
    shutil.copy(os.environ["VKFORMER_LIBRARY"], tmp_path / "vkformer" / "libvkformer.so")
    r = run_python("import vkformer; print(vkformer.library_path()); print(vkformer.library_version())",
                   {"VKFORMER_LIBRARY": None, "PYTHONPATH": str(tmp_path)}, str(tmp_path))
    assert r.returncode == 0, r.stderr
    path, version = r.stdout.decode().split()
    assert path == str(tmp_path / "vkformer" / "libvkformer.so") and version == vkformer.__version__


def test_nothing_found_says_where_it_looked(tmp_path):
    if ctypes.util.find_library("vkformer"):
        pytest.skip("a libvkformer is installed on the linker's search path here")
    copy_package(tmp_path)
    r = run_python("import vkformer; vkformer.Error; vkformer.library_path()",
                   {"VKFORMER_LIBRARY": None, "PYTHONPATH": str(tmp_path), "PKG_CONFIG_PATH": str(tmp_path),
                    "PKG_CONFIG_LIBDIR": str(tmp_path)}, str(tmp_path))
    err = r.stderr.decode()
    assert r.returncode != 0 and "cannot find libvkformer.so; looked at: " in err, err
    assert str(tmp_path / "vkformer" / "libvkformer.so") + " (absent)" in err and "VKFORMER_LIBRARY" in err, err


def test_devices(device):
    names = vkformer.device_names()
    assert names and device.name in names
    assert repr(device).startswith("<vkformer.Device ")


def test_device_by_index_and_name(device):
    with vkformer.Device(selector=0, validate=True) as d:
        assert d.name == vkformer.device_names()[0]
    with vkformer.Device(selector=device.name[:4].lower(), validate=True) as d:
        assert d.name.lower().startswith(device.name[:4].lower())
    assert repr(d) == "<vkformer.Device closed>"
    with pytest.raises(ValueError, match="closed"):
        d.name


def test_unknown_device_selector():
    with pytest.raises(vkformer.Error, match="no-such-gpu") as e:
        vkformer.Device(selector="no-such-gpu")
    assert isinstance(e.value, vkformer.NotFoundError) and e.value.code == 2


def test_listing_devices_while_a_validated_device_is_open():
    # vkformer_device_count / _name create unvalidated instances, which reload volk's global entry
    # points; closing the validated device afterwards once called a NULL
    # vkDestroyDebugUtilsMessengerEXT (a segfault). host/instance.c keeps the instance's own.
    d = vkformer.Device(validate=True)
    assert d.name in vkformer.device_names()
    d.close()
    with vkformer.Device(validate=True) as d:
        vkformer.device_names()
        with vkformer.Device(validate=False) as e:
            assert e.name == d.name
