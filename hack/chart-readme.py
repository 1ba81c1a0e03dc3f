#!/usr/bin/env python3
"""Regenerate the values table of charts/etcd-operator/README.md from values.yaml.

    hack/chart-readme.py [--check]

Each value's description is the comment block right above it in values.yaml (a blank line
ends a block). The table sits between the markers <!-- values:start --> and
<!-- values:end --> of the README; the rest of the README is written by hand.
--check fails when the README's table differs from what values.yaml gives.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VALUES = os.path.join(ROOT, "charts/etcd-operator/values.yaml")
README = os.path.join(ROOT, "charts/etcd-operator/README.md")
START, END = "<!-- values:start -->", "<!-- values:end -->"
KEY = re.compile(r"^( *)([A-Za-z0-9_.-]+):(?: (.*))?$")


def rows(lines):
    """Yield (path, default or None for a section, description) in file order."""
    stack, comment, out = [], [], []
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped:
            comment = []
            continue
        if stripped.startswith("#"):
            comment.append(stripped.lstrip("#").strip())
            continue
        m = KEY.match(line)
        if not m:
            comment = []
            continue
        indent, key, value = len(m.group(1)), m.group(2), (m.group(3) or "").strip()
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = ".".join([k for _, k in stack] + [key])
        desc = " ".join(comment)
        comment = []
        if value == "":
            stack.append((indent, key))
            if desc:
                out.append((path, None, desc))
        else:
            out.append((path, value, desc))
    return out


def cell(text):
    return text.replace("|", "\\|")


def table(lines):
    out = ["| Key | Default | Description |", "|---|---|---|"]
    for path, default, desc in rows(lines):
        shown = "" if default is None else "`%s`" % cell(default)
        out.append("| `%s` | %s | %s |" % (path, shown, cell(desc)))
    return "\n".join(out)


def main():
    check = sys.argv[1:] == ["--check"]
    with open(VALUES) as f:
        new_table = table(f.read().splitlines())
    with open(README) as f:
        readme = f.read()
    if START not in readme or END not in readme:
        sys.exit("%s: markers %s / %s missing" % (README, START, END))
    head, rest = readme.split(START, 1)
    _, tail = rest.split(END, 1)
    updated = "%s%s\n%s\n%s%s" % (head, START, new_table, END, tail)
    if check:
        if updated != readme:
            sys.exit("charts/etcd-operator/README.md is stale: run hack/chart-readme.py")
        return
    if updated != readme:
        with open(README, "w") as f:
            f.write(updated)
        print("wrote charts/etcd-operator/README.md")


if __name__ == "__main__":
    main()
