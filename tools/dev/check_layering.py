#!/usr/bin/env python3
"""The layering of the source tree, checked on every #include and every call between files.

Layers are folders; each may include only itself and the layers listed for it (which sit below
it), and must not use the system headers forbidden for it. Separately, the files depend one way:
a .c file depends on the files defining the functions it calls and on the .c file of each header
it includes (x.h belongs to x.c), and no chain of such dependencies comes back to where it
started (two files calling each other, or a longer circle such as walker -> slicer -> binder ->
the walker's header). Prints one line per violation and the closing "N passed, N failed".

    python3 tools/dev/check_layering.py [SOURCE_DIR]
"""
import os
import re
import sys

GRAPH = ["graph/base", "graph/ir", "graph/interp", "graph/passes", "graph/lower"]
MODELS = ["models/formats", "text", "models/image", "models/arch", "models/generate",
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
    # tokenizers, normalisers, chat templates, Unicode tables: text in, ids out (and back), below
    # the models that read text; files come through models/formats' readers
    "text": (["graph/base", "models/formats"], r"^(vulkan|volk|shaderc)"),
    "models/image": (["graph/base", "models/formats"], r"^(vulkan|volk|shaderc)"),
    "models/arch": (["graph/base", "graph/ir", "models/formats", "text", "models/image"],
                    r"^(vulkan|volk|shaderc)"),
    "models/registry": (["graph/base", "graph/ir", "models/formats", "text", "models/image",
                         "models/arch"], r"^(vulkan|volk|shaderc)"),
    # the decoding policy of `vkf generate`: plain host code over logits and generation configs
    "models/generate": (["graph/base", "graph/ir", "models/formats"], r"^(vulkan|volk|shaderc)"),
    # running models on a device (device choice, batched runs, generation), for the CLI and the API
    "runtime": (GRAPH + ["host"] + MODELS, r"^(cjson|stb)"),
    # `vkf serve`: HTTP (libmicrohttpd) and OpenAI's JSON over the runtime's continuous batching
    "serve": (GRAPH + ["host"] + MODELS + ["runtime"], r"^(stb)"),
    # the public C API: vkformer.h includes nothing of the project; its implementation sits on top
    "api": (GRAPH + ["host"] + MODELS + ["runtime"], r"^(cjson|stb)"),
}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
# A function definition at the start of a line, of any name (vkf_, ct_, ...): static ones are the
# file's own, the others are what other files call. A call is any name followed by "(".
DEFINITION = re.compile(r"^(static\s+)?(?:[A-Za-z_][\w \t\*]*?\b)?([A-Za-z_]\w*)\s*\([^;{()]*(?:\([^;{()]*\)[^;{()]*)*\)\s*(?:__attribute__\s*\(\(.*?\)\)\s*)?\{", re.M)
CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "do", "else", "case", "defined",
            "_Alignof", "_Static_assert", "__attribute__", "_Generic"}


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
    defined, calls, includes = {}, {}, {}
    folders = list(LAYERS) + ["tools/vkf"]
    for folder in folders:
        if not os.path.isdir(os.path.join(root, folder)):
            continue
        for path in sources(root, folder):
            if not path.endswith(".c"):
                continue
            raw = open(os.path.join(root, path), encoding="utf-8").read()
            text = strip_comments(raw)
            found = [(st, name) for st, name in DEFINITION.findall(text) if name not in KEYWORDS]
            own = {name for _, name in found}
            for st, name in found:
                if not st and name != "main":
                    defined.setdefault(name, path)
            calls[path] = set(CALL.findall(text)) - own
            includes[path] = {inc for kind, inc in INCLUDE.findall(text) if kind == '"'}
    files = sorted(calls)
    deps = {}
    for f in files:
        d = {defined[c] for c in calls[f] if c in defined}
        d |= {inc[:-2] + ".c" for inc in includes[f] if inc.endswith(".h")}
        deps[f] = sorted(x for x in d if x != f and x in calls)
    return [f"layering: files depend on each other in a circle: {' -> '.join(c + [c[0]])}"
            for c in circles(files, deps)]


def circles(files, deps):
    """One circle per strongly connected component of more than one file (Tarjan), as the shortest
    way round from its first file, so the message names the files and the order they depend in."""
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in deps[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for f in files:
        if f not in index:
            visit(f)
    out = []
    for comp in comps:
        members, start = set(comp), comp[0]
        prev, queue = {start: None}, [start]
        path = None
        while queue and path is None:  # breadth first back to start within the component
            v = queue.pop(0)
            for w in deps[v]:
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    path.reverse()
                    break
                if w in members and w not in prev:
                    prev[w] = v
                    queue.append(w)
        out.append(path)
    return out


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


# What a model can do is its registry facets (models/registry/model.h): above models/ nothing
# compares family names or takes the architecture object out of a model and casts it.
FACET_FOLDERS = ["api", "runtime", "serve", "tools/vkf", "python/vkformer"]
FAMILY_REPORT = {"api/model.c"}  # vkformer_model_family: the name, handed out for listings
ARCH_TYPE = r"vkf_(?:vit|bert|decoder|encdec|s2sa|txl|nystromformer|bigbird|longformer)_model|vkf_reformer"
FACET_RULES = [
    (re.compile(r"\bvkf_model_impl\s*\("), "takes the architecture object out of a model (ask a facet)"),
    (re.compile(r"\(\s*(?:const\s+)?(?:" + ARCH_TYPE + r")\s*\*\s*\)"),
     "casts to an architecture's type (a facet hands the object over)"),
    (re.compile(r"strcmp\s*\([^;]*\bfamily\b|\bfamily\b[^;]*strcmp"),
     "compares a family name (ask the registry's facets)"),
    (re.compile(r"\bfamily(?:\(\))?\s*(?:==|!=|\bin\b)|(?:==|!=)\s*\w*\.?family\b"),
     "compares a family name (ask the registry's facets)"),
]


def check_facets(root):
    bad = []
    for folder in FACET_FOLDERS:
        d = os.path.join(root, folder)
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            path = os.path.join(folder, f)
            if not f.endswith((".c", ".h", ".py")):
                continue
            text = open(os.path.join(root, path), encoding="utf-8").read()
            if f.endswith((".c", ".h")):  # comments out, their newlines kept for the line numbers
                text = re.sub(r"/\*.*?\*/|//[^\n]*", lambda m: "\n" * m.group().count("\n"), text,
                              flags=re.S)
            else:
                text = re.sub(r"#[^\n]*", " ", text)
            for n, line in enumerate(text.split("\n"), 1):
                if "vkf_model_family" in line and path not in FAMILY_REPORT:
                    bad.append(f"facets: {path}:{n} reads the family name (ask the registry's facets)")
                    continue
                for rule, what in FACET_RULES:
                    if rule.search(line):
                        bad.append(f"facets: {path}:{n} {what}")
                        break
    return bad


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("VKF_SOURCE_DIR", ".")
    bad = check_includes(root) + check_calls(root) + check_public_header(root) + check_facets(root)
    for line in bad:
        print(line)
    print("1 passed, 0 failed" if not bad else "0 passed, 1 failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
