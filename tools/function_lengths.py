#!/usr/bin/env python3
"""Lists every C++ function whose body is longer than a limit.

usage: function_lengths.py [--max N] [--all] PATH...

PATH is a .cpp/.hpp/.h/.cc file or a folder (searched recursively). A
function's length is the lines from its opening brace to its closing brace,
both included; a lambda or local class counts towards the function that
holds it. Prints "file:line: name: N lines" for each function over the limit
(every function with --all) and exits 1 if there is one, 2 on a file it
cannot read as balanced braces.

It is a brace matcher, not a compiler: comments, string and character
literals (raw strings too) and preprocessor lines are blanked first, then
namespace, extern "C", class, struct and union blocks are entered and every
other block at their level is classified by the text before it: a function
body (a parameter list before it, constructor initialisers allowed), or an
initialiser, enum or lambda-valued variable. That is what the server code
holds; tests/unit/tools/function_lengths_test.py pins the cases.
"""

import os
import re
import sys

SOURCE_SUFFIXES = (".cpp", ".hpp", ".h", ".cc")
NOT_A_NAME = {"__attribute__", "alignas", "decltype", "noexcept", "requires",
              "sizeof", "alignof", "throw", "static_assert", "__declspec"}


def blank(text):
    """Text of the same length and lines with comments, literals' contents
    and preprocessor lines replaced by spaces."""
    out = list(text)
    i, n = 0, len(text)
    line_start = True

    def wipe(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if line_start and c == "#":
            j = i
            while j < n:
                if text[j] == "\n" and text[j - 1] != "\\":
                    break
                j += 1
            wipe(i, j)
            i = j
            continue
        if c == "\n":
            line_start = True
            i += 1
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            wipe(i, j)
            i = j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            wipe(i, j)
            i = j
            continue
        raw = re.match(r'(?:u8|u|U|L)?R"([^ ()\\\t\n]{0,16})\(', text[i:i + 24])
        if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = text.find(")" + raw.group(1) + '"', i + raw.end())
            j = n if end < 0 else end + len(raw.group(1)) + 2
            wipe(i + raw.end() - 1, j - 1)
            i = j
            continue
        if c == '"' or c == "'":
            if c == "'" and i > 0 and text[i - 1].isalnum():
                # a digit separator (1'000) or the end of a prefix (u8'x')
                k = i - 1
                while k > 0 and (text[k - 1].isalnum() or text[k - 1] in "_."):
                    k -= 1
                if text[k].isdigit():
                    i += 1
                    continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            wipe(i + 1, j)
            i = j + 1
            continue
        i += 1
    return "".join(out)


def matching(text, i, open_c, close_c):
    """Index of the bracket that closes the one at i, or -1."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == open_c:
            depth += 1
        elif text[j] == close_c:
            depth -= 1
            if depth == 0:
                return j
    return -1


def paren_zero(header):
    """Yields (index, char) for the header's characters outside parentheses,
    each outermost '(' included."""
    depth = 0
    for k, c in enumerate(header):
        if c == "(":
            if depth == 0:
                yield k, c
            depth += 1
        elif c == ")":
            depth -= 1
        elif depth == 0:
            yield k, c


def function_name(header):
    """The qualified name before the header's parameter list, or None."""
    for k, c in paren_zero(header):
        if c != "(":
            continue
        before = header[:k].rstrip()
        m = re.search(r"(operator\s*(?:\(\s*\)|[^\s\w(]+|\w[\w\s:<>*&]*?)|~?[A-Za-z_]\w*"
                      r"(?:\s*<[^()]*?>)?)\s*$", before)
        if not m:
            continue
        word = re.match(r"~?\w+", m.group(1))
        if word and word.group(0) in NOT_A_NAME:
            continue
        if m.group(1) == "operator":  # operator()'s own parentheses: the list follows
            continue
        start = m.start(1)
        qual = re.search(r"((?:[A-Za-z_]\w*(?:\s*<[^()]*?>)?\s*::\s*)*)$", before[:start])
        name = (qual.group(1) if qual else "") + m.group(1)
        return re.sub(r"\s+", "", name) if not name.startswith("operator") else \
            re.sub(r"\s+", " ", name).replace("operator (", "operator(")
    return None


def has_assignment(header):
    """True when the header has an = outside parentheses (an initialiser)."""
    flat = "".join(c for _, c in paren_zero(header))
    return re.search(r"(?<![=!<>+\-*/%&|^])=(?!=)", flat) is not None


def classify(header):
    """What a '{' after header opens: 'scope', 'function', 'lambda',
    'initlist' (a constructor initialiser's brace) or 'other'."""
    h = re.sub(r"^((public|private|protected)\s*:(?!:)\s*)+", "", " ".join(header.split()))
    h_no_template = re.sub(r"^template\s*<.*?>\s*", "", h)
    if re.match(r"^(inline\s+)?namespace\b", h) or re.fullmatch(r'extern\s*"\s*"', h):
        return "scope"
    if re.match(r"^(enum)\b", h_no_template):
        return "other"
    if re.match(r"^((typedef|alignas\s*\(.*?\))\s+)?(class|struct|union)\b", h_no_template) \
            and not re.search(r"\)\s*(const\s*)?(noexcept)?\s*$", h):
        return "scope"
    if "operator" not in h and has_assignment(header):
        flat = "".join(c for _, c in paren_zero(header))
        after = flat[flat.rfind("=") + 1:].lstrip()
        return "lambda" if after.startswith("[") else "other"
    name = function_name(header)
    if name is None:
        return "other"
    # After the parameter list: a constructor's initialisers give ':' (not
    # '::'); a '{' right after a name there initialises a member.
    close = header.rfind(")")
    tail = header[close + 1:] if close >= 0 else ""
    if re.search(r"(?<!:):(?!:)", tail) and re.search(r"[\w>]\s*$", header):
        return "initlist"
    return "function"


def lambda_name(header):
    flat = "".join(c for _, c in paren_zero(header))
    m = re.search(r"([A-Za-z_]\w*)\s*=[^=]*$", flat)
    return (m.group(1) if m else "lambda") + " (lambda)"


def functions(path):
    """Yields (line, name, lines) for every function in the file, raising
    ValueError when its braces do not balance."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = blank(f.read())
    line_of = []
    line = 1
    for c in text:
        line_of.append(line)
        if c == "\n":
            line += 1

    def scan(begin, end, prefix):
        header_start = begin
        i = begin
        pending_initlist = None
        while i < end:
            c = text[i]
            if c in ";}" and pending_initlist is None:
                header_start = i + 1
            elif c == "(":
                j = matching(text, i, "(", ")")
                if j < 0 or j > end:
                    raise ValueError(f"{path}:{line_of[i]}: unbalanced parenthesis")
                i = j
            elif c == "{":
                j = matching(text, i, "{", "}")
                if j < 0 or j > end:
                    raise ValueError(f"{path}:{line_of[i]}: unbalanced brace")
                header = text[header_start:i]
                if pending_initlist is not None:
                    kind = "initlist" if re.search(r"[\w>]\s*$", header) else "function"
                else:
                    kind = classify(header)
                if kind == "scope":
                    m = re.search(r"(?:namespace|class|struct|union)\s+([A-Za-z_][\w:]*)", header)
                    inner = prefix
                    if m and not header.lstrip().startswith("namespace"):
                        inner = prefix + m.group(1) + "::"
                    yield from scan(i + 1, j, inner)
                    pending_initlist = None
                    header_start = j + 1
                elif kind == "initlist":
                    pending_initlist = header_start
                elif kind in ("function", "lambda"):
                    name = function_name(header) if kind == "function" else lambda_name(header)
                    if name and "::" not in name and prefix:
                        name = prefix + name
                    yield line_of[i], name, line_of[j] - line_of[i] + 1
                    pending_initlist = None
                    header_start = j + 1
                # else an initialiser or enum: the statement goes on to its ';'
                i = j
            i += 1

    yield from scan(0, len(text), "")


def sources(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for name in sorted(files):
                    if name.endswith(SOURCE_SUFFIXES):
                        yield os.path.join(root, name)
        else:
            yield p


def main(argv):
    limit, show_all, paths = 70, False, []
    args = iter(argv)
    for a in args:
        if a == "--max":
            limit = int(next(args))
        elif a == "--all":
            show_all = True
        else:
            paths.append(a)
    if not paths:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    over, broken = 0, 0
    for path in sources(paths):
        try:
            found = list(functions(path))
        except (ValueError, OSError) as e:
            print(f"error: {e}", file=sys.stderr)
            broken += 1
            continue
        for line, name, lines in found:
            if lines > limit:
                over += 1
            if show_all or lines > limit:
                print(f"{path}:{line}: {name}: {lines} lines")
    if broken:
        return 2
    if over:
        print(f"{over} function(s) over {limit} lines", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
