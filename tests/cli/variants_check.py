"""Lists the fixed kernel variants that `vkf dump --stage plan` outputs request but that
shaders/variants.txt lacks (those would need shaderc at run time instead of the build-time
SPIR-V). Usage: variants_check.py VARIANTS_TXT PLAN_DUMP... ; prints each missing variant as a
variants.txt row and exits 1 when there is one."""
import re
import sys


def canonical(defines):
    # As shaders/CMakeLists.txt and host/shader_compiler.c key the table: an empty value is none.
    return " ".join(sorted(d[:-1] if d.endswith("=") else d for d in defines))


def main():
    listed = set()
    for line in open(sys.argv[1]):
        fields = line.split()
        if fields and not fields[0].startswith("#"):
            listed.add((fields[0], canonical(fields[1:])))
    missing = {}
    dispatch = re.compile(r'^dispatch \d+ ".*" (\S+\.comp)((?: -D\S+)*) spec=')
    for path in sys.argv[2:]:
        for line in open(path):
            m = dispatch.match(line)
            if not m:
                continue
            defines = [d[2:] for d in m.group(2).split()]
            key = (m.group(1), canonical(defines))
            if key not in listed:
                missing.setdefault(key, " ".join([m.group(1)] + defines))
    for row in sorted(missing.values()):
        print(row)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
