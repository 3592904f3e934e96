#!/usr/bin/env python3
"""Compares the statistics of two runs' outputs, ignoring what may differ between identical runs.

    python3 scripts/compare-stats.py BEFORE_DIR AFTER_DIR

Every `*.csv` and `*.csv.gz` under BEFORE_DIR is read with its counterpart under AFTER_DIR (same
relative path), and every column is compared except timings (`*_ns`, `*_secs`, `*_per_sec_per_core`,
`hashset_memory_bytes`, `queries_per_s_core`, seconds), the scale run's memory and command
columns, and `revision`. Prints one line per file and exits 1 when a file is
missing or differs, 0 when every file's statistics are identical. Used to show that a change of
shape (issue 26) left every statistic as it was.
"""

import csv
import gzip
import os
import sys

TIMING = {
    "hashset_memory_bytes", "queries_per_s_core", "revision", "seconds", "elapsed_s",
    # The scale run's: what ran, when, and the machine's memory while it ran.
    "command", "finished", "peak_rss_bytes", "huge_page_bytes",
}


def kept(column):
    return column not in TIMING and not column.endswith(("_ns", "_secs", "_per_sec_per_core"))


def rows(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", newline="") as f:
        return [{k: v for k, v in r.items() if kept(k)} for r in csv.DictReader(f)]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    before, after = sys.argv[1], sys.argv[2]
    same = True
    for d, _, files in sorted(os.walk(before)):
        for f in sorted(files):
            if not (f.endswith(".csv") or f.endswith(".csv.gz")):
                continue
            rel = os.path.relpath(os.path.join(d, f), before)
            other = os.path.join(after, rel)
            if not os.path.exists(other):
                print(f"missing: {rel}")
                same = False
                continue
            a, b = rows(os.path.join(d, f)), rows(other)
            ok = a == b
            same &= ok
            cols = len(a[0]) if a else 0
            print(f"{'same' if ok else 'DIFFERENT'}: {rel} ({len(a)} rows, {cols} columns compared)")
    print("every statistic identical" if same else "statistics differ")
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
