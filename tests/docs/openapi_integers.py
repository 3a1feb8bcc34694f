#!/usr/bin/env python3
"""openapi_integers.py <openapi.yaml>

Every integer schema of docs/openapi.yaml (parameters, headers, components,
the webhooks section) names its `format`, so code generators pick the width
the values need instead of a 32-bit default: `int32` only where the schema
itself bounds the value within 2^31-1 (`maximum` or `const`), `int64`
everywhere else. Amounts, points, pools, cursors and sequences are
additionally held to int64 by name, the values issue reports name.
Debian's python3-yaml.
"""
import sys

import yaml

INT32_MAX = 2**31 - 1
# Properties and schemas whose values pass 2^31-1 (10^12 minor units,
# epoch milliseconds, points and pools of a large club).
WIDE = ("amountMinor", "AmountMinor", "cashValueMinor", "before", "Before", "nextBefore", "NextBefore",
        "memberSequence", "availablePointsPool", "replayed")


def is_integer(node):
    t = node.get("type")
    return t == "integer" or (isinstance(t, list) and "integer" in t)


def walk(node, path, found):
    if isinstance(node, dict):
        if is_integer(node):
            found.append((path, node))
        for key, value in node.items():
            walk(value, path + [str(key)], found)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            walk(value, path + [str(i)], found)


def wide_by_name(path):
    last = path[-1] if path[-1] not in ("schema", "items") else path[-2]
    return last in WIDE or last.startswith("points") or (last.endswith("Points") and not last.endswith("BasisPoints"))


def main():
    doc = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))
    found = []
    walk(doc, [], found)
    problems = []
    widths = {"int32": 0, "int64": 0}
    for path, node in found:
        where = "/".join(path)
        fmt = node.get("format")
        if fmt not in widths:
            problems.append(f"{where}: integer without format int32 or int64 (has {fmt!r})")
            continue
        widths[fmt] += 1
        if fmt == "int32":
            bound = node.get("const", node.get("maximum"))
            if not isinstance(bound, int) or bound > INT32_MAX:
                problems.append(f"{where}: int32 without a maximum (or const) within 2^31-1")
            if wide_by_name(path):
                problems.append(f"{where}: amounts, points, pools, cursors and sequences are int64")
    for p in problems:
        print(f"openapi_integers: {p}")
    print(f"openapi_integers: {len(found)} integer schemas ({widths['int64']} int64, {widths['int32']} int32), "
          f"{len(problems)} problems")
    # A spec without integers would pass trivially: it has dozens.
    sys.exit(1 if problems or len(found) < 30 else 0)


if __name__ == "__main__":
    main()
