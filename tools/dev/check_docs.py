#!/usr/bin/env python3
"""Keeps the documentation true: README.md and docs/*.md are checked against the code they
describe. Each check prints one line per problem and the closing "N passed, N failed".

    python3 tools/dev/check_docs.py links [ROOT]
        every relative link and image of every tracked Markdown file points at a file or folder
        that exists, and every #anchor at a heading of the file it names
    python3 tools/dev/check_docs.py env [ROOT]
        every VKF_* variable graph/base/env.c reads has a row in docs/environment.md
    python3 tools/dev/check_docs.py cli --vkf BUILD/tools/vkf [--write] [ROOT]
        docs/cli.md holds, after each `<!-- vkf-help: ARGS -->` marker, a text block that is
        byte for byte what `vkf ARGS` prints; every command of `vkf --help` and every benchmark
        of `vkf bench --help` has one. --write regenerates the blocks instead of comparing.
    python3 tools/dev/check_docs.py examples --build BUILD [ROOT] [FILE...]
        runs every example of README.md and docs/*.md (or of the FILEs) from ROOT, with the
        validation layer on: ```sh blocks with bash (-e, -o pipefail; `./build/` means BUILD),
        ```python blocks with Debian's python3 (VKF_PYTHON; also the `python3` of the sh blocks)
        over BUILD's libvkformer.so, ```c blocks compiled
        against api/vkformer.h and linked with BUILD's libvkformer.so. An example fails on a
        non-zero exit or a validation message. ```text blocks (usage synopses, outputs, recipes
        that need PyTorch or run for many minutes) are not run.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile
import time

FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.M | re.S)
HELP_MARK = re.compile(r"<!-- vkf-help: (.*?) -->\n```text\n(.*?)```\n", re.S)
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def summary(bad, total=1):
    """Prints the problems and the closing line; `total` checks of which len(bad) failed (a
    check of the whole tree counts as one)."""
    for line in bad:
        print(line)
    failed = min(len(bad), total) if total > 1 else (1 if bad else 0)
    print(f"{total - failed} passed, {failed} failed")
    return 1 if bad else 0


def tracked_markdown(root):
    try:
        out = subprocess.run(["git", "ls-files", "*.md"], cwd=root, capture_output=True, text=True,
                             check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        out = []
    files = set(out) | {os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "*.md"))}
    files.add("README.md")
    return sorted(f for f in files if os.path.isfile(os.path.join(root, f)))


def without_code(text, inline=True):
    """Fenced blocks and (unless inline is False) inline code spans blanked out: links there are
    not links, and lines there are not headings. A heading keeps its inline code, since GitHub's
    anchor keeps that text."""
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return re.sub(r"`[^`\n]*`", "``", text) if inline else text


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    s = re.sub(r"`|\*\*|\*|_(?=\W)|(?<=\W)_", "", heading.strip()).lower()
    s = re.sub(r"[^\w\- ]", "", s, flags=re.U)
    return s.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        text = without_code(open(path, encoding="utf-8").read(), inline=False)
        seen, out = {}, set()
        for m in re.finditer(r"^#{1,6}\s+(.*?)\s*#*\s*$", text, re.M):
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
        cache[path] = out
    return cache[path]


def check_links(root):
    bad = []
    for rel in tracked_markdown(root):
        path = os.path.join(root, rel)
        text = without_code(open(path, encoding="utf-8").read())
        for m in LINK.finditer(text):
            target = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                continue  # http:, https:, mailto: ...
            line = text.count("\n", 0, m.start()) + 1
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            if not os.path.exists(dest):
                bad.append(f"docs: {rel}:{line}: link to {target}: {file_part} does not exist")
                continue
            if not os.path.realpath(dest).startswith(os.path.realpath(root) + os.sep) and file_part:
                bad.append(f"docs: {rel}:{line}: link to {target} leaves the repository")
            if anchor and dest.endswith(".md") and anchor not in anchors(dest):
                bad.append(f"docs: {rel}:{line}: link to {target}: no heading #{anchor} in "
                           f"{os.path.relpath(dest, root)}")
    return bad


def check_env(root):
    names = set(re.findall(r'"(VKF_[A-Z0-9_]+)"',
                           open(os.path.join(root, "graph/base/env.c"), encoding="utf-8").read()))
    doc = open(os.path.join(root, "docs/environment.md"), encoding="utf-8").read()
    return [f"docs: graph/base/env.c reads {n}, which docs/environment.md does not list"
            for n in sorted(names) if not re.search(r"`" + n + r"[=`]", doc)]


def run_vkf(vkf, args):
    r = subprocess.run([vkf] + args.split(), capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, VKF_VALIDATE="0"))
    if r.returncode != 0 or r.stderr:
        raise RuntimeError(f"vkf {args}: exit {r.returncode}: {r.stderr.strip()[:300]}")
    return r.stdout


def listed(help_text):
    return re.findall(r"^  ([a-z][a-z0-9-]*) +\S", help_text, re.M)


def check_cli(root, vkf, write):
    path = os.path.join(root, "docs", "cli.md")
    text = open(path, encoding="utf-8").read()
    bad = []
    marks = HELP_MARK.findall(text)
    have = {args for args, _ in marks}
    want = ["--help", "bench --help"] + [f"{c} --help" for c in listed(run_vkf(vkf, "--help"))]
    want += [f"bench {b} --help" for b in listed(run_vkf(vkf, "bench --help"))]
    for args in want:
        if args not in have:
            bad.append(f"docs: docs/cli.md has no `<!-- vkf-help: {args} -->` block (vkf {args} "
                       "lists it); add the marker and run check_docs.py cli --write")

    def fill(m):
        args, block = m.group(1), m.group(2)
        try:
            out = run_vkf(vkf, args)
        except RuntimeError as e:
            bad.append(f"docs: docs/cli.md: {e}")
            return m.group(0)
        if out != block and not write:
            got, exp = block.splitlines(), out.splitlines()
            i = next((k for k in range(min(len(got), len(exp))) if got[k] != exp[k]),
                     min(len(got), len(exp)))
            bad.append(f"docs: docs/cli.md: the block of `vkf {args}` differs from its output at "
                       f"line {i + 1}: doc {got[i] if i < len(got) else '(end)'!r}, vkf "
                       f"{exp[i] if i < len(exp) else '(end)'!r} (regenerate: python3 "
                       "tools/dev/check_docs.py cli --write --vkf BUILD/tools/vkf)")
        return f"<!-- vkf-help: {args} -->\n```text\n{out}```\n"

    new = HELP_MARK.sub(fill, text)
    if write and new != text:
        open(path, "w", encoding="utf-8").write(new)
    return bad


def examples_of(path):
    text = open(path, encoding="utf-8").read()
    for m in FENCE.finditer(text):
        lang = m.group(1).strip()
        if lang in ("sh", "python", "c"):
            yield lang, text.count("\n", 0, m.start()) + 1, m.group(2)


def run_example(root, build, lang, code, tmp):
    python = os.environ.get("VKF_PYTHON", "/usr/bin/python3")
    # `python3` in a shell example is the one the set-up gave numpy to (Debian's, on a fresh
    # machine), whatever else PATH holds.
    env = dict(os.environ, VKF_VALIDATE="1", PYTHONPATH=os.path.join(root, "python"),
               VKFORMER_LIBRARY=os.path.join(build, "lib", "libvkformer.so"),
               PATH=os.path.dirname(python) + os.pathsep + os.environ.get("PATH", ""))
    if lang == "sh":
        if os.path.realpath(build) != os.path.realpath(os.path.join(root, "build")):
            code = re.sub(r"(?<![\w/.-])(\./)?build/", build.rstrip("/") + "/", code)
        cmd = ["bash", "-euo", "pipefail", "-c", code]
    elif lang == "python":
        src = os.path.join(tmp, "example.py")
        open(src, "w", encoding="utf-8").write(code)
        cmd = [python, src]
    else:
        inc = os.path.join(tmp, "include", "vkformer")
        os.makedirs(inc, exist_ok=True)
        link = os.path.join(inc, "vkformer.h")
        if not os.path.exists(link):
            os.symlink(os.path.join(root, "api", "vkformer.h"), link)
        src, exe = os.path.join(tmp, "example.c"), os.path.join(tmp, "example")
        open(src, "w", encoding="utf-8").write(code)
        lib = os.path.join(build, "lib")
        cc = subprocess.run([os.environ.get("CC", "cc"), "-std=c11", "-Wall", "-Wextra", "-Werror",
                             "-I" + os.path.join(tmp, "include"), src, "-o", exe, "-L" + lib,
                             "-lvkformer", "-Wl,-rpath," + lib], capture_output=True, text=True)
        if cc.returncode != 0:
            return f"does not compile: {cc.stderr.strip()[:600]}"
        cmd = [exe]
    try:
        r = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return "ran past 600 s"
    if r.returncode != 0:
        return f"exit {r.returncode}: {(r.stderr or r.stdout).strip()[-800:]}"
    if re.search(r"validation", r.stderr, re.I):
        return f"validation messages: {r.stderr.strip()[-800:]}"
    return None


def check_examples(root, build, files):
    files = files or ["README.md"] + sorted(os.path.relpath(p, root)
                                            for p in glob.glob(os.path.join(root, "docs", "*.md")))
    bad, count = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for rel in files:
            for lang, line, code in examples_of(os.path.join(root, rel)):
                count += 1
                start = time.monotonic()
                why = run_example(root, build, lang, code, tmp)
                print(f"{'ok ' if why is None else 'FAIL'} {rel}:{line} ({lang}, "
                      f"{time.monotonic() - start:.1f} s)", flush=True)
                if why:
                    bad.append(f"docs: the example at {rel}:{line} ({lang}) {why}")
    if count == 0:
        bad.append("docs: no example found to run")
    return bad, max(count, 1)


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) >= 2 else 2
    what, rest = argv[1], argv[2:]
    opts, pos = {}, []
    i = 0
    while i < len(rest):
        if rest[i] in ("--vkf", "--build"):
            opts[rest[i]] = os.path.abspath(rest[i + 1])
            i += 2
        elif rest[i] == "--write":
            opts["--write"] = True
            i += 1
        else:
            pos.append(rest[i])
            i += 1
    root = os.path.abspath(pos[0] if pos and os.path.isdir(pos[0]) else
                           os.environ.get("VKF_SOURCE_DIR", "."))
    if pos and os.path.isdir(pos[0]):
        pos = pos[1:]
    if what == "links":
        return summary(check_links(root))
    if what == "env":
        return summary(check_env(root))
    if what == "cli" and "--vkf" in opts:
        return summary(check_cli(root, opts["--vkf"], opts.get("--write", False)))
    if what == "examples" and "--build" in opts:
        return summary(*check_examples(root, opts["--build"], pos))
    print(f"check_docs.py: unknown check or missing option: {' '.join(argv[1:])} (see --help)",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
