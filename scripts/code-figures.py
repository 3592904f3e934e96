#!/usr/bin/env python3
"""Figures about the code's shape, for reviews and closing notes (not for CI).

    python3 scripts/code-figures.py [--sweep-bin target/release/sweep]

Prints:
- subject name literals outside the catalogue and outside tests: string literals that spell a
  filter, Redis or peer name (`"classic/..."`, `"sbbf/..."`, `"redis/..."`, `"peer/..."`,
  `"textbook-..."`, ...), in non-comment lines of `crates/*/src` and `benches/`, before a file's
  `#[cfg(test)] mod`; files named in CATALOGUE are the catalogue and are not counted;
- the longest non-test functions (lines from `fn` to its closing brace, by brace matching that
  skips strings, chars and comments);
- import cycles between the harness's files (each file a module; `crate::` and `super::`
  references; strongly connected components of more than one file);
- the size of `sweep --help` (lines and characters), when the binary is given or built.

Heuristics, stated so that before and after are counted the same way.
"""

import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The files that are the catalogue: names are defined there, once.
CATALOGUE = (
    "crates/filters/src/registry.rs",
    "crates/harness/src/subject/",
    # The sketches' own names (`hll/...`, `peer/hyperloglogplus/...`) are resolved here.
    "crates/sketches/src/cardinality.rs",
)

NAME_LITERAL = re.compile(
    r'"(?:(?:classic|blocked512|sbbf|counting4|counting8|scalable|redis|peer)/[A-Za-z0-9/+._-]+'
    r"|textbook-[a-z0-9-]+)\""
)


def rust_files():
    for top in ("crates", "benches"):
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
            dirnames[:] = [d for d in dirnames if d not in ("target", "tests")]
            for f in filenames:
                if f.endswith(".rs") and f != "build.rs":
                    path = os.path.join(dirpath, f)
                    rel = os.path.relpath(path, ROOT)
                    if rel.startswith("crates/") and "/src/" not in rel:
                        continue
                    yield rel


def non_test_text(rel):
    """The file's text before its first `#[cfg(test)]`; test-only files give nothing."""
    with open(os.path.join(ROOT, rel), encoding="utf-8") as fh:
        text = fh.read()
    base = os.path.basename(rel)
    if base in ("tests.rs", "testing.rs") or "/tests/" in rel:
        return ""
    cut = re.search(r"#\[cfg\(test\)\]\s*(?:pub(?:\((?:crate|super)\))?\s+)?mod\s", text)
    return text if cut is None else text[: cut.start()]


def name_literals():
    hits = []
    for rel in rust_files():
        if rel.startswith(CATALOGUE):
            continue
        for no, line in enumerate(non_test_text(rel).splitlines(), 1):
            code = line.strip()
            if code.startswith("//"):
                continue
            for m in NAME_LITERAL.finditer(line):
                hits.append((rel, no, m.group(0)))
    return hits


def strip_code(text):
    """The text with strings, chars and comments blanked (newlines kept), for brace matching."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r"r(#*)\"", text[i:]).group(1)
            end = '"' + hashes
            j = text.find(end, i + 2 + len(hashes))
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'":
            m = re.match(r"'(\\.|\\u\{[0-9a-fA-F]+\}|\\x[0-9a-fA-F]{2}|[^\\'])'", text[i:])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


FN = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")


def functions():
    found = []
    for rel in rust_files():
        code = strip_code(non_test_text(rel))
        for m in FN.finditer(code):
            # The body opens at the first `{` after the signature, unless a `;` comes first
            # (a trait method without a body).
            j = m.end()
            depth_paren = 0
            while j < len(code):
                ch = code[j]
                if ch in "([":
                    depth_paren += 1
                elif ch in ")]":
                    depth_paren -= 1
                elif ch == ";" and depth_paren == 0:
                    j = -1
                    break
                elif ch == "{" and depth_paren == 0:
                    break
                j += 1
            if j < 0 or j >= len(code):
                continue
            depth, k = 0, j
            while k < len(code):
                if code[k] == "{":
                    depth += 1
                elif code[k] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                k += 1
            start = code.count("\n", 0, m.start()) + 1
            end = code.count("\n", 0, k) + 1
            found.append((end - start + 1, rel, start, m.group(1)))
    found.sort(reverse=True)
    return found


def harness_cycles():
    """Import cycles between the harness's files: each file is a module (`a/b.rs` and
    `a/b/mod.rs` are `a::b`); `crate::a::b::item` and `super::item` point at the longest module
    path they name. Returns (module count, cycles as sorted lists)."""
    src = os.path.join(ROOT, "crates/harness/src")
    modules = {}
    for dirpath, _, filenames in os.walk(src):
        for f in filenames:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), src)[:-3].split(os.sep)
            if rel[-1] == "mod":
                rel = rel[:-1]
            if rel in (["lib"], ["tests"]) or rel[-1] == "tests":
                continue
            modules["::".join(rel)] = os.path.join(dirpath, f)

    def resolve(path):
        parts = path.split("::")
        for k in range(len(parts), 0, -1):
            cand = "::".join(parts[:k])
            if cand in modules:
                return cand
        return None

    edges = {m: set() for m in modules}
    for m, path in modules.items():
        code = strip_code(non_test_text(os.path.relpath(path, ROOT)))
        refs = re.findall(r"\bcrate::((?:[a-z_][a-z0-9_]*::)*[a-z_][a-z0-9_]*)", code)
        for group_prefix, group in re.findall(r"\bcrate::((?:[a-z_][a-z0-9_]*::)*)\{([^}]*)\}", code):
            for item in re.findall(r"([a-z_][a-z0-9_]*(?:::[a-z_][a-z0-9_]*)*)", group):
                refs.append(group_prefix + item)
        parent = m.rsplit("::", 1)[0] if "::" in m else ""
        for ref in re.findall(r"\bsuper::((?:[a-z_][a-z0-9_]*::)*[a-z_][a-z0-9_]*)", code):
            refs.append(f"{parent}::{ref}" if parent else ref)
        for ref in refs:
            target = resolve(ref)
            if target and target != m and not m.startswith(target + "::"):
                edges[m].add(target)
    # Tarjan's strongly connected components.
    index, low, on, stack, sccs = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
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
                sccs.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return len(modules), sccs


def sweep_help(binary):
    if binary is None:
        return None
    try:
        out = subprocess.run([binary, "--help"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        return f"could not run {binary}: {e}"
    flags = len(re.findall(r"(?m)^\s+(?:-[A-Za-z], )?--[a-z]", out))
    return f"{len(out.splitlines())} lines, {len(out)} characters, {flags} flags"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sweep-bin", help="a built sweep binary, for the size of its --help")
    ap.add_argument("--top", type=int, default=10, help="how many functions and literals to list")
    args = ap.parse_args()

    hits = name_literals()
    files = sorted({h[0] for h in hits})
    print(f"name literals outside the catalogue and tests: {len(hits)} in {len(files)} files")
    for rel, no, lit in hits[: args.top]:
        print(f"  {rel}:{no} {lit}")
    fns = functions()
    over = [f for f in fns if f[0] > 120]
    print(f"non-test functions over 120 lines: {len(over)}; longest:")
    for length, rel, start, name in fns[: args.top]:
        print(f"  {length:4} {rel}:{start} {name}")
    count, sccs = harness_cycles()
    print(f"harness: {count} files (modules), {len(sccs)} import cycles between them")
    for comp in sccs:
        print("  cycle: " + " <-> ".join(comp))
    h = sweep_help(args.sweep_bin)
    if h is not None:
        print(f"sweep --help: {h}")


if __name__ == "__main__":
    main()
