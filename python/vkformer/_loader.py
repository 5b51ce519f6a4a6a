"""Finding and loading libvkformer.so.

The search order, first hit wins:
  1. the file named by the environment variable VKFORMER_LIBRARY (when set, nothing else is tried,
     so a wrong value is an error rather than a silent fall-back to another copy);
  2. a libvkformer.so* placed next to this package (a wheel or --target install that bundles it);
  3. the installed library: ctypes.util.find_library("vkformer") (the linker's search path), then
     the libdir pkg-config reports for vkformer.pc.
Loading is lazy (first use), so `import vkformer` always works and vkformer.Error is reachable.
"""

import ctypes
import ctypes.util
import glob
import os
import subprocess
import threading

_lock = threading.Lock()
_lib = None
_lib_path = None


def _candidates_next_to_package():
    here = os.path.dirname(os.path.abspath(__file__))
    # The unversioned link first, then the SONAME, then any fully versioned file.
    names = ["libvkformer.so", "libvkformer.so.0"]
    found = [os.path.join(here, n) for n in names]
    found += sorted(glob.glob(os.path.join(here, "libvkformer.so.*")))
    return [p for i, p in enumerate(found) if p not in found[:i]]


def _pkg_config_libdir():
    try:
        out = subprocess.run(
            ["pkg-config", "--variable=libdir", "vkformer"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    libdir = out.stdout.decode(errors="replace").strip()
    return libdir if out.returncode == 0 and libdir else None


def _try_files(paths, tried):
    """(library, path) of the first of `paths` that exists and loads, else None; every miss is
    noted in `tried`."""
    for path in paths:
        if not os.path.exists(path):
            tried.append("%s (absent)" % path)
            continue
        lib = _try(path, tried)
        if lib is not None:
            return lib, path
    return None


def _try(path, tried):
    """Loads `path` or records why not; returns the CDLL or None."""
    try:
        return ctypes.CDLL(path)
    except OSError as e:
        tried.append("%s (%s)" % (path, e))
        return None


def _search():
    tried = []
    env = os.environ.get("VKFORMER_LIBRARY")
    if env is not None:
        if not env:
            raise OSError("vkformer: VKFORMER_LIBRARY is set but empty; set it to the path of libvkformer.so")
        if not os.path.exists(env):
            raise OSError("vkformer: VKFORMER_LIBRARY=%s: no such file" % env)
        lib = _try(env, tried)
        if lib is None:
            raise OSError("vkformer: cannot load VKFORMER_LIBRARY=%s" % tried[0])
        return lib, env
    found = _try_files(_candidates_next_to_package(), tried)
    if found:
        return found
    name = ctypes.util.find_library("vkformer")
    if name:
        lib = _try(name, tried)
        if lib is not None:
            return lib, name
    else:
        tried.append('find_library("vkformer") (not on the linker\'s search path)')
    libdir = _pkg_config_libdir()
    if libdir:
        found = _try_files([os.path.join(libdir, n) for n in ("libvkformer.so", "libvkformer.so.0")],
                           tried)
        if found:
            return found
    else:
        tried.append("pkg-config vkformer (no vkformer.pc found)")
    raise OSError(
        "vkformer: cannot find libvkformer.so; looked at: "
        + "; ".join(tried)
        + ". Install vkformer (cmake --install) or set VKFORMER_LIBRARY to the library's path"
    )


def library():
    """The loaded library (a ctypes.CDLL with its prototypes declared); loads it on first call."""
    global _lib, _lib_path
    with _lock:
        if _lib is None:
            lib, path = _search()
            from . import _capi  # declares the prototypes; imported here to keep import cheap

            _capi.declare(lib)
            _lib, _lib_path = lib, path
        return _lib


def library_path():
    """Where the library was loaded from (loading it if needed)."""
    library()
    return _lib_path
