"""The ctypes mirror (python/vkformer/_capi.py) against the header: every struct's size and every
field's offset as the C compiler lays them out from api/vkformer.h, and the enum values."""

import ctypes
import os
import shutil
import subprocess

import pytest

from vkformer import _capi
from vkformer.model import TASKS

from conftest import ROOT

STRUCTS = {
    "vkformer_device_options": _capi.DeviceOptions,
    "vkformer_model_options": _capi.ModelOptions,
    "vkformer_io_info": _capi.IoInfo,
    "vkformer_tensor": _capi.Tensor,
    "vkformer_tokens": _capi.Tokens,
    "vkformer_class": _capi.Class,
    "vkformer_generate_options": _capi.GenerateOptions,
    "vkformer_generation": _capi.Generation,
}
ENUMS = {"VKFORMER_F32": _capi.F32, "VKFORMER_I32": _capi.I32, "VKFORMER_I64": _capi.I64,
         "VKFORMER_MAX_RANK": _capi.MAX_RANK, "VKFORMER_DECODING_DEFAULT": _capi.DECODING_DEFAULT,
         "VKFORMER_DECODING_GREEDY": _capi.DECODING_GREEDY, "VKFORMER_DECODING_SAMPLE": _capi.DECODING_SAMPLE}
ENUMS.update({"VKFORMER_" + n: i for i, n in enumerate(_capi.CODE_NAMES)})
ENUMS.update({"VKFORMER_TASK_" + n.upper(): 1 << i for i, n in enumerate(TASKS)})


def test_layouts_match_the_header(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.fail("no C compiler to lay out api/vkformer.h (build-essential)")
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "vkformer.h"', "int main(void) {"]
    for c_name, py in STRUCTS.items():
        lines.append('printf("%s %%zu\\n", sizeof(%s));' % (c_name, c_name))
        for field, _ in py._fields_:
            lines.append('printf("%s.%s %%zu\\n", offsetof(%s, %s));' % (c_name, field, c_name, field))
    for name in ENUMS:
        lines.append('printf("%s %%d\\n", (int)%s);' % (name, name))
    lines.append("return 0; }")
    src = tmp_path / "layout.c"
    src.write_text("\n".join(lines) + "\n")
    exe = tmp_path / "layout"
    subprocess.run([cc, "-std=c11", "-I", os.path.join(ROOT, "api"), str(src), "-o", str(exe)], check=True)
    got = dict(line.split() for line in subprocess.run([str(exe)], check=True, stdout=subprocess.PIPE).stdout.decode().splitlines())
    for c_name, py in STRUCTS.items():
        assert int(got[c_name]) == ctypes.sizeof(py), c_name
        for field, _ in py._fields_:
            assert int(got[c_name + "." + field]) == getattr(py, field).offset, (c_name, field)
    for name, value in ENUMS.items():
        assert int(got[name]) == value, name
    # every field of the header's structs is mirrored: same count of "name;" declarations
    header = open(os.path.join(ROOT, "api/vkformer.h")).read()
    for c_name, py in STRUCTS.items():
        body = header.split("typedef struct %s {" % c_name)[1].split("}")[0]
        decls = [d for d in (line.split("/*")[0].strip() for line in body.splitlines()) if d.endswith(";")]
        assert len(decls) == len(py._fields_), (c_name, decls)
