#!/usr/bin/env python3
"""tools/function_lengths.py against function_lengths/cases.cpp: every shape
the server code holds (extern "C", namespaces, nested classes, constructor
initialisers with braces, operators, lambda-valued variables, braces inside
literals and comments) found with its length, nothing else; and the limit
refused with exit 1.

usage: function_lengths_test.py <checker>"""
import os
import subprocess
import sys

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "function_lengths")
checker = os.path.abspath(sys.argv[1])


def run(*args):
    return subprocess.run([sys.executable, checker, *args], cwd=here, capture_output=True, text=True)


failures = []
listed = run("--all", "cases.cpp")
with open(os.path.join(here, "expected.txt"), encoding="utf-8") as f:
    expected = f.read()
if listed.returncode != 0 or listed.stdout != expected:
    failures.append(f"--all: exit {listed.returncode}, stdout:\n{listed.stdout}{listed.stderr}expected:\n{expected}")

over = run("--max", "6", "cases.cpp")
if over.returncode != 1 or over.stdout != "cases.cpp:33: Widget::body: 7 lines\n":
    failures.append(f"--max 6: exit {over.returncode}, stdout:\n{over.stdout}")

broken = run("--all", os.path.join(here, "unbalanced.cpp.txt"))
if broken.returncode != 2 or "unbalanced brace" not in broken.stderr:
    failures.append(f"an unbalanced file: exit {broken.returncode}, stderr:\n{broken.stderr}")

for f in failures:
    print("FAIL", f)
sys.exit(1 if failures else 0)
