#!/usr/bin/env python3
"""snippets.py <page.md> <out dir>: writes every fenced code block of a
Markdown page to <out dir>/<name>, where <name> comes from the HTML comment
`<!-- snippet: <name> -->` on the line before the fence (invisible when the
page is rendered). A fenced block without one fails: every snippet of the
page is run by a test, none is there unchecked. Prints the names written.
"""
import pathlib
import re
import sys

MARK = re.compile(r"^<!-- snippet: ([A-Za-z0-9._/-]+) -->$")
FENCE = re.compile(r"^(```+|~~~+)")


def extract(page: pathlib.Path) -> dict:
    lines = page.read_text("utf-8").splitlines()
    out = {}
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        mark = MARK.match(lines[i - 1]) if i > 0 else None
        if mark is None:
            sys.exit("%s:%d: a code block without <!-- snippet: name --> before it" % (page, i + 1))
        name = mark.group(1)
        if name in out or ".." in name.split("/"):
            sys.exit("%s:%d: snippet name %s used twice or leaves the folder" % (page, i + 1, name))
        body = []
        i += 1
        while i < len(lines) and not lines[i].startswith(fence.group(1)):
            body.append(lines[i])
            i += 1
        if i == len(lines):
            sys.exit("%s: snippet %s is not closed" % (page, name))
        out[name] = "\n".join(body) + "\n"
        i += 1
    return out


def main() -> None:
    page, dest = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    for name, text in extract(page).items():
        path = dest / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
        print(name)


if __name__ == "__main__":
    main()
