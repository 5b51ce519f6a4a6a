#!/usr/bin/env python3
"""The layering of the source tree, checked on every #include and every call between files.

Layers are folders; each may include only itself and the layers listed for it (which sit below
it), and must not use the system headers forbidden for it. Separately, no two .c files may call
each other (a function defined in A called from B and one defined in B called from A): each pair
of files depends one way. Prints one line per violation and the closing "N passed, N failed".

    python3 tools/check_layering.py [SOURCE_DIR]
"""
import os
import re
import sys

GRAPH = ["graph/base", "graph/ir", "graph/interp", "graph/passes", "graph/lower"]
MODELS = ["models/formats", "models/text", "models/image", "models/arch", "models/generate",
          "models/registry"]
# folder -> (layers it may include besides itself, forbidden system headers)
LAYERS = {
    "graph/base": ([], r"^(vulkan|volk|shaderc|cjson|stb)"),
    "graph/ir": (["graph/base"], r"^(vulkan|volk|shaderc|cjson|stb)"),
    "graph/interp": (["graph/base", "graph/ir"], r"^(vulkan|volk|shaderc|cjson|stb)"),
    "graph/passes": (["graph/base", "graph/ir"], r"^(vulkan|volk|shaderc|cjson|stb)"),
    "graph/lower": (["graph/base", "graph/ir", "graph/passes"], r"^(vulkan|volk|shaderc|cjson|stb)"),
    "shaders": ([], r"^(vulkan|volk|shaderc)"),
    "host": (GRAPH + ["shaders"], r"^(cjson|stb)"),
    # models see the graph's IR (the builder API) and plumbing, never a device or the lowering
    "models/formats": (["graph/base", "graph/ir"], r"^(vulkan|volk|shaderc)"),
    "models/text": (["graph/base", "models/formats"], r"^(vulkan|volk|shaderc)"),
    "models/image": (["graph/base", "models/formats"], r"^(vulkan|volk|shaderc)"),
    "models/arch": (["graph/base", "graph/ir", "models/formats", "models/text", "models/image"],
                    r"^(vulkan|volk|shaderc)"),
    "models/registry": (["graph/base", "graph/ir", "models/formats", "models/text", "models/image",
                         "models/arch"], r"^(vulkan|volk|shaderc)"),
    # the decoding policy of `vkf generate`: plain host code over logits and generation configs
    "models/generate": (["graph/base", "graph/ir", "models/formats"], r"^(vulkan|volk|shaderc)"),
    # running models on a device (device choice, batched runs, generation), for the CLI and the API
    "runtime": (GRAPH + ["host"] + MODELS, r"^(cjson|stb)"),
    # the public C API: vkformer.h includes nothing of the project; its implementation sits on top
    "api": (GRAPH + ["host"] + MODELS + ["runtime"], r"^(cjson|stb)"),
}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
DEFINITION = re.compile(r"^(?!static\b)[A-Za-z_][\w \t\*]*?\b(vkf_\w+)\s*\([^;{]*\)\s*\{", re.M)
CALL = re.compile(r"\b(vkf_\w+)\s*\(")


def sources(root, folder):
    d = os.path.join(root, folder)
    return sorted(os.path.join(folder, f) for f in os.listdir(d) if f.endswith((".c", ".h")))


def check_includes(root):
    bad = []
    for folder, (below, forbidden) in LAYERS.items():
        if not os.path.isdir(os.path.join(root, folder)):
            bad.append(f"layering: folder {folder}/ is missing")
            continue
        allowed = [folder] + below
        for path in sources(root, folder):
            text = open(os.path.join(root, path), encoding="utf-8").read()
            for kind, inc in INCLUDE.findall(text):
                if kind == '"' and os.path.dirname(inc) not in allowed:
                    bad.append(f'layering: {path} includes "{inc}" (allowed: {", ".join(allowed)})')
                if kind == "<" and re.search(forbidden, inc):
                    bad.append(f"layering: {path} includes <{inc}>, which {folder}/ must not use")
    # every project folder holding sources must be a known layer
    for top in ("graph", "models"):
        for sub in sorted(os.listdir(os.path.join(root, top))):
            full = os.path.join(root, top, sub)
            if os.path.isfile(full) and sub.endswith((".c", ".h")):
                bad.append(f"layering: {top}/{sub} sits outside any layer folder of {top}/")
            if os.path.isdir(full) and f"{top}/{sub}" not in LAYERS:
                bad.append(f"layering: {top}/{sub}/ is not a known layer (add it to {__file__})")
    return bad


def strip_comments(text):
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)


def check_calls(root):
    defined, calls = {}, {}
    folders = list(LAYERS) + ["tools/vkf"]
    for folder in folders:
        if not os.path.isdir(os.path.join(root, folder)):
            continue
        for path in sources(root, folder):
            if not path.endswith(".c"):
                continue
            text = strip_comments(open(os.path.join(root, path), encoding="utf-8").read())
            own = set(DEFINITION.findall(text))
            for name in own:
                defined.setdefault(name, path)
            calls[path] = set(CALL.findall(text)) - own
    bad = []
    files = sorted(calls)
    deps = {f: {defined[c] for c in calls[f] if c in defined and defined[c] != f} for f in files}
    for a in files:
        for b in sorted(deps[a]):
            if a < b and a in deps.get(b, ()):
                bad.append(f"layering: {a} and {b} call each other")
    return bad


def check_public_header(root):
    """api/vkformer.h is installed alone: it includes only <stddef.h> and <stdint.h>, and no
    internal vkf_ / VKF_ name leaks into its declarations (comments may mention them)."""
    path = os.path.join(root, "api", "vkformer.h")
    if not os.path.isfile(path):
        return ["layering: api/vkformer.h is missing"]
    text = open(path, encoding="utf-8").read()
    bad = [f"layering: api/vkformer.h includes {inc}, not only <stddef.h> / <stdint.h>"
           for k, inc in INCLUDE.findall(text) if k == '"' or inc not in ("stddef.h", "stdint.h")]
    for name in sorted(set(re.findall(r"\b(?:vkf|VKF)_\w+", strip_comments(text)))):
        bad.append(f"layering: api/vkformer.h declares the internal name {name}")
    return bad


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("VKF_SOURCE_DIR", ".")
    bad = check_includes(root) + check_calls(root) + check_public_header(root)
    for line in bad:
        print(line)
    print("1 passed, 0 failed" if not bad else "0 passed, 1 failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
