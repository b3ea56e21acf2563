#!/usr/bin/env python3
"""Build the small committed test corpus in tests/data/.

Usage:
    .venv/bin/python tests/make_test_corpus.py [OUTDIR]     (default: tests/data
                                                           next to tools/)

Generates the fixture corpus with tests/gen_fixtures.py --small (fewer rows)
into a temporary directory, copies a dozen files covering every writer and the
interesting writer options into OUTDIR as NAME.parquet, and writes the oracle
output of tests/render_csv.py next to each as NAME.csv, so the C tests can
check real files without Python.  Also writes OUTDIR/MANIFEST.txt and
OUTDIR/.gitattributes (the CSVs contain \\r inside quoted fields and must stay
byte-exact).  Every file must stay <= 200 KB; the script fails otherwise.
Rerunning it writes the same bytes.  Files in OUTDIR that it did not write are
left alone.
"""

import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_fixtures  # noqa: E402
from render_csv import render  # noqa: E402

MAX_BYTES = 200 * 1024

# Corpus file -> why it is in the committed set.
SELECTION = [
    "pyarrow_default.parquet",         # every flat type, SNAPPY + dictionary, V1 pages
    "pyarrow_v2_snappy.parquet",       # V2 pages, compressed/uncompressed mix, empty values
    "pyarrow_int96_crc.parquet",       # INT96 timestamps, page CRCs, page index
    "pyarrow_tiny_pages.parquet",      # many pages per column chunk
    "pyarrow_dict_fallback.parquet",   # dictionary -> PLAIN fallback within a chunk
    "pyarrow_heavy_nulls.parquet",     # ~90% nulls
    "pyarrow_struct.parquet",          # struct columns, nested struct, required struct
    "pyarrow_empty.parquet",           # 0 rows
    "pandas_default.parquet",          # pandas frame with index, categorical, Int64
    "duckdb_default.parquet",          # DuckDB writer, many types
    "polars_snappy.parquet",           # Polars writer
    "fastparquet_snappy.parquet",      # fastparquet writer, 2 row groups
]

GITATTRIBUTES = "# Byte-exact fixtures: never convert line endings.\n* -text\n"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    outdir = argv[0] if argv else os.path.join(HERE, os.pardir, "tests", "data")
    outdir = os.path.normpath(outdir)
    os.makedirs(outdir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="gpufeed-corpus-")
    try:
        manifest = dict(gen_fixtures.generate(tmp, small=True))
        lines = ["# gpufeed committed test corpus, written by tests/make_test_corpus.py",
                 "# (tests/gen_fixtures.py --small); NAME.csv = tests/render_csv.py NAME.parquet"]
        too_big = []
        for name in SELECTION:
            src = os.path.join(tmp, name)
            dst = os.path.join(outdir, name)
            shutil.copyfile(src, dst)
            csv_bytes = render(dst).encode("utf-8", "surrogateescape")
            csv_path = dst[: -len(".parquet")] + ".csv"
            with open(csv_path, "wb") as f:
                f.write(csv_bytes)
            for p in (dst, csv_path):
                if os.path.getsize(p) > MAX_BYTES:
                    too_big.append("%s (%d bytes)" % (p, os.path.getsize(p)))
            lines.append("%-30s  %s" % (name, manifest[name]))
            print("%-30s %7d bytes, csv %7d bytes" % (name, os.path.getsize(dst), len(csv_bytes)))
        with open(os.path.join(outdir, "MANIFEST.txt"), "w", encoding="utf-8", newline="\n") as f:
            f.write("\n".join(lines) + "\n")
        with open(os.path.join(outdir, ".gitattributes"), "w", newline="\n") as f:
            f.write(GITATTRIBUTES)
        if too_big:
            print("files over %d bytes: %s" % (MAX_BYTES, ", ".join(too_big)), file=sys.stderr)
            return 1
    finally:
        shutil.rmtree(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
