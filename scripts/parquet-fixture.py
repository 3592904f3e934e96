#!/usr/bin/env python3
"""Writes the Parquet fixtures of `bloomlab filter stat|check --file X.parquet` (issue 29), with
DuckDB, into crates/tool/tests/data/parquet/ (or the directory given as the only argument):

- bloom.parquet: two row groups of 8192 rows, one DuckDB Bloom filter per dictionary-encoded
  column chunk, and one column (a BOOLEAN, which DuckDB writes PLAIN) without a filter;
- nofilter.parquet: the same rows written with WRITE_BLOOM_FILTER false;
- FIXTURES.txt: the DuckDB version, the query, and each file's size and SHA-256.

    python3 scripts/parquet-fixture.py            # installs DuckDB if missing, then writes

The values are known by formula (row r = 0..16383, row group g = r // 8192); the test
crates/tool/tests/filter_parquet.rs computes the same formulas, so keep both in step:
  s    VARCHAR  'key-' || (g * 1024 + r % 1024) || '-é'   1024 distinct per row group, the two
                                                          row groups' sets disjoint (UTF-8 bytes)
  n    BIGINT   (r % 700) * 7919 - 100000                 700 distinct per row group (INT64)
  k    INTEGER  (r % 300) - 150                           300 distinct per row group (INT32)
  flag BOOLEAN  r % 3 = 0                                 no Bloom filter (DuckDB: PLAIN)
DuckDB (2.0.1 here) writes a Bloom filter only for a dictionary-encoded chunk, holding every distinct
value of the chunk, hashed per the Parquet spec (XXH64 seed 0 of the plain encoding), and encodes a
chunk with a dictionary only when it deems it worth it: 8192 rows with at most 1024 distinct values
are (2048 rows with 1024 were not). The script checks all of this on the file it wrote, and fails
rather than leave a fixture that does not match the formulas.

DuckDB comes from PyPI, pinned (DUCKDB_VERSION), installed with pip into a private directory
(BLOOMLAB_DUCKDB_DIR, default /tmp/bloomlab-duckdb-py) when the interpreter does not already import
that version. Outputs are written to a temporary file beside the target, fsynced, then renamed.
"""

import hashlib
import importlib
import os
import subprocess
import sys
import tempfile

DUCKDB_VERSION = "2.0.1"
ROWS_PER_GROUP = 8192
GROUPS = 2
QUERY = f"""SELECT 'key-' || ((r // {ROWS_PER_GROUP}) * 1024 + r % 1024)::VARCHAR || '-é' AS s,
       ((r % 700) * 7919 - 100000)::BIGINT AS n,
       ((r % 300) - 150)::INTEGER AS k,
       (r % 3 = 0) AS flag
FROM range(0, {GROUPS * ROWS_PER_GROUP}) t(r)"""


def duckdb_module():
    """The pinned DuckDB, installed with pip into a private directory if needed."""
    try:
        import duckdb

        if duckdb.__version__ == DUCKDB_VERSION:
            return duckdb
    except ImportError:
        pass
    target = os.environ.get("BLOOMLAB_DUCKDB_DIR", "/tmp/bloomlab-duckdb-py")
    if not os.path.isdir(os.path.join(target, "duckdb")):
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--target", target,
             f"duckdb=={DUCKDB_VERSION}"],
            check=True,
        )
    sys.path.insert(0, target)
    for name in [m for m in sys.modules if m == "duckdb" or m.startswith("duckdb.")]:
        del sys.modules[name]
    duckdb = importlib.import_module("duckdb")
    if duckdb.__version__ != DUCKDB_VERSION:
        sys.exit(f"parquet-fixture: DuckDB {duckdb.__version__} in {target}, want {DUCKDB_VERSION}")
    return duckdb


def expected(row):
    g = row // ROWS_PER_GROUP
    return (f"key-{g * 1024 + row % 1024}-é", (row % 700) * 7919 - 100000, (row % 300) - 150,
            row % 3 == 0)


def write_parquet(con, path, bloom):
    """COPY into a temporary file beside `path`, fsync, rename: whole or not at all."""
    fd, tmp = tempfile.mkstemp(prefix=".parquet-fixture-", suffix=".parquet",
                               dir=os.path.dirname(path))
    os.close(fd)
    try:
        opts = "" if bloom else ", WRITE_BLOOM_FILTER false"
        con.execute(f"COPY ({QUERY}) TO '{tmp}' (FORMAT parquet, ROW_GROUP_SIZE {ROWS_PER_GROUP}{opts})")
        verify(con, tmp, bloom)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def verify(con, path, bloom):
    rows = con.execute(
        f"SELECT file_row_number, s, n, k, flag FROM read_parquet('{path}', file_row_number = true)"
        " ORDER BY file_row_number"
    ).fetchall()
    assert len(rows) == GROUPS * ROWS_PER_GROUP, len(rows)
    for row in rows:
        assert row[1:] == expected(row[0]), row
    meta = con.execute(
        "SELECT row_group_id, row_group_num_rows, path_in_schema, encodings, bloom_filter_offset "
        f"FROM parquet_metadata('{path}') ORDER BY row_group_id, column_id"
    ).fetchall()
    assert len(meta) == GROUPS * 4, meta
    for rg, nrows, col, enc, bf in meta:
        assert nrows == ROWS_PER_GROUP, (rg, nrows)
        want_filter = bloom and col != "flag"
        assert (bf is not None) == want_filter, (rg, col, enc, bf)
    if bloom:
        # DuckDB's own probe finds a member of each row group and column.
        for g in range(GROUPS):
            s, n, k, _ = expected(g * ROWS_PER_GROUP + 5)
            for col, lit in [("s", f"'{s}'"), ("n", str(n)), ("k", str(k))]:
                res = con.execute(
                    f"SELECT row_group_id, bloom_filter_excludes FROM parquet_bloom_probe('{path}', '{col}', {lit})"
                ).fetchall()
                assert (g, False) in res, (col, lit, res)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        here, "..", "crates", "cli", "tests", "data", "parquet")
    os.makedirs(out_dir, exist_ok=True)
    duckdb = duckdb_module()
    con = duckdb.connect()
    # One thread keeps the rows in order, so row group g holds rows g*8192 .. g*8192+8191.
    con.execute("SET threads = 1")
    con.execute("SET preserve_insertion_order = true")
    lines = [
        "Parquet fixtures of crates/tool/tests/filter_parquet.rs, written by scripts/parquet-fixture.py",
        f"with DuckDB {duckdb.__version__} (Python package duckdb=={DUCKDB_VERSION}).",
        "Rows, the same in both files:",
        *("  " + line for line in QUERY.splitlines()),
        f"COPY ... (FORMAT parquet, ROW_GROUP_SIZE {ROWS_PER_GROUP}); nofilter.parquet adds WRITE_BLOOM_FILTER false.",
        "",
    ]
    for name, bloom in [("bloom.parquet", True), ("nofilter.parquet", False)]:
        path = os.path.join(out_dir, name)
        write_parquet(con, path, bloom)
        data = open(path, "rb").read()
        lines.append(f"{name}: {len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()}")
        print(f"parquet-fixture: wrote {path} ({len(data)} bytes)")
    manifest = os.path.join(out_dir, "FIXTURES.txt")
    fd, tmp = tempfile.mkstemp(prefix=".fixtures-", dir=out_dir)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.chmod(tmp, 0o644)
    os.replace(tmp, manifest)


if __name__ == "__main__":
    main()
