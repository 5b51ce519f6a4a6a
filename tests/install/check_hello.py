#!/usr/bin/env python3
"""Checks what examples/hello.c printed against tests/install/hello_golden.json (Hugging Face's
values, tools/goldens/make_hello_golden.py): tokens and ids equal; every output the golden has, and only
those, with the same shape, values within 1e-4 and mean |value| within 1e-4 relative; for images the same
top-3 ids and labels, probabilities within 1e-4. One line naming the first difference on failure.

    check_hello.py text|image HELLO_STDOUT GOLDEN_JSON
"""
import json
import sys

TOL = 1e-4


def fail(msg):
    sys.exit(f"check_hello: {msg}")


def check_text(lines, g):
    fields = {}
    outputs = {}
    for line in lines:
        head, _, rest = line.partition(" ")
        if head in ("tokens:", "ids:"):
            fields[head[:-1]] = rest.split()
        elif " mean|x| " in line and " first" in line:
            shape = [int(x) for x in rest[rest.index("[") + 1:rest.index("]")].split(",")]
            mean_abs = float(rest.split(" mean|x| ")[1].split()[0])
            first = [float(x) for x in rest.split(" first")[1].split()]
            outputs[head] = (shape, mean_abs, first)
    if fields.get("tokens") != g["tokens"]:
        fail(f"tokens {fields.get('tokens')} != Hugging Face's {g['tokens']}")
    if fields.get("ids") != [str(i) for i in g["ids"]]:
        fail(f"ids {fields.get('ids')} != Hugging Face's {g['ids']}")
    if sorted(outputs) != sorted(g["outputs"]):
        fail(f"outputs {sorted(outputs)} != the golden's {sorted(g['outputs'])}")
    for name, want in g["outputs"].items():
        shape, mean_abs, first = outputs[name]
        if shape != want["shape"]:
            fail(f"{name}: shape {shape} != {want['shape']}")
        if abs(mean_abs - want["mean_abs"]) > TOL * max(1.0, want["mean_abs"]):
            fail(f"{name}: mean |x| {mean_abs} != {want['mean_abs']}")
        if len(first) != len(want["first"]):
            fail(f"{name}: {len(first)} first values, want {len(want['first'])}")
        for i, (a, b) in enumerate(zip(first, want["first"])):
            if abs(a - b) > TOL:
                fail(f"{name}[{i}]: {a} != {b} (|diff| {abs(a - b):.3g} > {TOL})")
    return len(outputs)


def check_image(lines, g):
    i = next((k for k, line in enumerate(lines) if line.endswith(g["image"].split("/")[-1])), None)
    if i is None:
        fail(f"no line naming {g['image']}")
    rows = [line.split(None, 2) for line in lines[i + 1:i + 1 + len(g["top"])]]
    for row, (wid, wprob, wlabel) in zip(rows, g["top"]):
        if len(row) != 3 or int(row[0]) != wid or row[2] != wlabel:
            fail(f"top row {row} != Hugging Face's {[wid, wprob, wlabel]}")
        if abs(float(row[1]) - wprob) > TOL:
            fail(f"{wlabel}: probability {row[1]} != {wprob}")
    if len(rows) != len(g["top"]):
        fail(f"{len(rows)} top rows, want {len(g['top'])}")
    return len(rows)


if __name__ == "__main__":
    kind, out_path, golden_path = sys.argv[1:4]
    lines = open(out_path).read().splitlines()
    golden = json.load(open(golden_path))[kind]
    n = check_text(lines, golden) if kind == "text" else check_image(lines, golden)
    print(f"check_hello: {kind}: {n} checked against Hugging Face")
