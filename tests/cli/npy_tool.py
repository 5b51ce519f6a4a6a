#!/usr/bin/env python3
"""Writes and compares small little-endian float32 .npy files without numpy (CLI tests only).

  npy_tool.py write PATH SHAPE SEED   random values in [-1, 1) with shape "2,3,4"
  npy_tool.py ints PATH SHAPE VALUES  int32 values, comma separated
  npy_tool.py ints64 PATH SHAPE VALUES  the same as int64
  npy_tool.py halves PATH SHAPE SEED  like write, as float16
  npy_tool.py compare A B ATOL        exit 1 when any |a - b| > ATOL or shapes differ
  npy_tool.py zeros PATH START END    exit 1 unless flat elements [START, END) are all 0
  npy_tool.py rows IN FIRST COUNT OUT rows [FIRST, FIRST + COUNT) of dim 0 (any dtype above)
  npy_tool.py stack OUT IN...         the inputs concatenated along dim 0 (same dtype and dims)
"""
import random
import struct
import sys


def write(path, shape, values, descr, fmt):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d, " % d for d in shape))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))


def read(path):
    data = open(path, "rb").read()
    hlen = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + hlen].decode()
    shape = tuple(int(x) for x in header.split("(")[1].split(")")[0].split(",") if x.strip())
    descr = header.split("'descr': '")[1].split("'")[0]
    fmt = {"<f4": "f", "<f2": "e", "<i4": "i", "<i8": "q"}[descr]
    count = 1
    for d in shape:
        count *= d
    return shape, struct.unpack("<%d%s" % (count, fmt), data[10 + hlen:10 + hlen + count * struct.calcsize(fmt)])


FORMATS = {"<f4": "f", "<f2": "e", "<i4": "i", "<i8": "q"}


def descr_of(path):
    data = open(path, "rb").read(10 + 256)
    return data[10:].decode(errors="replace").split("'descr': '")[1].split("'")[0]


def main():
    cmd = sys.argv[1]
    if cmd == "write":
        shape = [int(x) for x in sys.argv[3].split(",")]
        rng = random.Random(int(sys.argv[4]))
        count = 1
        for d in shape:
            count *= d
        write(sys.argv[2], shape, [rng.uniform(-1, 1) for _ in range(count)], "<f4", "f")
    elif cmd == "ints":
        shape = [int(x) for x in sys.argv[3].split(",")]
        write(sys.argv[2], shape, [int(x) for x in sys.argv[4].split(",")], "<i4", "i")
    elif cmd == "ints64":
        shape = [int(x) for x in sys.argv[3].split(",")]
        write(sys.argv[2], shape, [int(x) for x in sys.argv[4].split(",")], "<i8", "q")
    elif cmd == "halves":
        shape = [int(x) for x in sys.argv[3].split(",")]
        rng = random.Random(int(sys.argv[4]))
        count = 1
        for d in shape:
            count *= d
        write(sys.argv[2], shape, [rng.uniform(-1, 1) for _ in range(count)], "<f2", "e")
    elif cmd == "compare":
        (sa, a), (sb, b) = read(sys.argv[2]), read(sys.argv[3])
        worst = max((abs(x - y) for x, y in zip(a, b)), default=0.0)
        if sa != sb or len(a) != len(b) or worst > float(sys.argv[4]):
            print("mismatch: shapes %s vs %s, max |diff| %g" % (sa, sb, worst))
            sys.exit(1)
    elif cmd == "zeros":
        _, values = read(sys.argv[2])
        part = values[int(sys.argv[3]):int(sys.argv[4])]
        if len(part) != int(sys.argv[4]) - int(sys.argv[3]) or any(v != 0 for v in part):
            sys.exit(1)
    elif cmd == "rows":
        shape, values = read(sys.argv[2])
        first, count = int(sys.argv[3]), int(sys.argv[4])
        row = len(values) // shape[0]
        descr = descr_of(sys.argv[2])
        write(sys.argv[5], (count,) + shape[1:], values[first * row:(first + count) * row], descr,
              FORMATS[descr])
    elif cmd == "stack":
        parts = [read(p) for p in sys.argv[3:]]
        descr = descr_of(sys.argv[3])
        rows = sum(shape[0] for shape, _ in parts)
        write(sys.argv[2], (rows,) + parts[0][0][1:], [v for _, vs in parts for v in vs], descr,
              FORMATS[descr])
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
