#!/usr/bin/env python3
"""Compares the statistics of two runs' outputs, ignoring what may differ between identical runs.

    python3 scripts/compare-stats.py BEFORE AFTER

BEFORE and AFTER are two directories or two CSV files. For directories, every `*.csv` and
`*.csv.gz` under BEFORE is read with its counterpart under AFTER (same relative path). Every column
is compared except timings (`*_ns`, `*_secs`, `*_per_sec_per_core`, `hashset_memory_bytes`,
`queries_per_s_core`, `seconds`, `elapsed_s`), the scale run's memory and command columns, and
`revision`. Prints one line per file compared and exits 0 when every file's statistics are
identical, 1 when a file is missing or differs, and 2 when there was nothing to compare (a path
that does not exist, or a directory without CSV files): an empty comparison is not a match. Used
to show that a change of shape (issue 26), a faster schedule or a re-run left every statistic as
it was.
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


def compare(before_file, after_file, label):
    """Prints the comparison of one pair of files; returns whether their statistics are equal."""
    if not os.path.exists(after_file):
        print(f"missing: {label}")
        return False
    a, b = rows(before_file), rows(after_file)
    cols = len(a[0]) if a else 0
    print(f"{'same' if a == b else 'DIFFERENT'}: {label} ({len(a)} rows, {cols} columns compared)")
    return a == b


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    before, after = sys.argv[1], sys.argv[2]
    results = []
    if os.path.isfile(before):
        results.append(compare(before, after, before))
    for d, _, files in sorted(os.walk(before)):
        for f in sorted(files):
            if f.endswith(".csv") or f.endswith(".csv.gz"):
                rel = os.path.relpath(os.path.join(d, f), before)
                results.append(compare(os.path.join(d, f), os.path.join(after, rel), rel))
    if not results:
        print(f"nothing compared: {before} is not a CSV file or a directory holding any")
        sys.exit(2)
    same = all(results)
    print("every statistic identical" if same else "statistics differ")
    sys.exit(0 if same else 1)

if __name__ == "__main__":
    main()
