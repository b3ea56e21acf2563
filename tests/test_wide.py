#!/usr/bin/env python3
"""Wide tables: row groups cut into units by bytes (unit_bytes), decoded
column-parallel by the loader's workers, cell by cell against pyarrow.

    .venv/bin/python tests/test_wide.py [--bin build]

A 401-column file written by pyarrow (float64 with and without nulls,
float32 with few distinct values, int32 categories, int64 IDs; dictionary
and PLAIN chunks; SNAPPY, ZSTD and uncompressed columns; small data pages
so that units start inside pages and chunks span several pages; row groups
of 4,000, 4,000 and 1,000 rows plus a 0-row file beside it). With
unit_bytes of 256 KiB each row group is cut into units of about 80 rows.
Checks, through the Python binding (every feature as f64, nulls filled
with 0): the batches in file order equal pyarrow's matrix at 1 and 3
workers; shuffled epochs hold every row once, the same batches at 1, 2
and 4 workers (gpufeed-bench's batch hashes, and timing noise from
--jitter-us); a predicate (every worker evaluates it) keeps pyarrow's
rows; the tensor cache built by a column-parallel loader serves the next
epoch with the same rows; source bytes an epoch at most 1.05x the chunks'
compressed sizes (each page read once, not once a unit); a corrupt page
is an error naming the file and column at any worker count, never a hang;
a bad unit_bytes is refused by name; a narrow file keeps its units.
Prints PASS/FAIL lines and `N passed, N failed`.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import gpufeed  # noqa: E402

PASS = FAIL = 0
UB = 256 * 1024


def check(name, cond, detail=""):
    global PASS, FAIL
    if cond:
        PASS += 1
        print("PASS " + name)
    else:
        FAIL += 1
        print("FAIL " + name + (": " + str(detail)[:600] if detail else ""))


def write_wide(path, rows=9000, cols=400):
    rng = np.random.default_rng(41)
    arrays, names = [pa.array(np.arange(rows, dtype=np.int64) * 7 + 3)], ["id"]
    for j in range(cols):
        k = j % 5
        if k == 0:
            a = pa.array(rng.standard_normal(rows))
        elif k == 1:
            a = pa.array((rng.integers(0, 50, rows) / 4.0).astype(np.float32))
        elif k == 2:
            a = pa.array(rng.integers(-3000, 3000, rows, dtype=np.int32))
        elif k == 3:
            a = pa.array(rng.standard_normal(rows) * 100, mask=rng.random(rows) < 0.1)
        else:
            a = pa.array(rng.integers(0, 1 << 40, rows, dtype=np.int64))
        arrays.append(a)
        names.append("c%03d" % j)
    t = pa.table(arrays, names=names)
    comp = {n: ("zstd" if i % 3 == 0 else "snappy" if i % 3 == 1 else "none") for i, n in enumerate(names)}
    dict_cols = [n for i, n in enumerate(names) if i % 2 == 0]
    pq.write_table(t, path, row_group_size=4000, compression=comp, use_dictionary=dict_cols, data_page_size=16 * 1024)
    return t


def matrix(t, filt=None):
    if filt is not None:
        t = t.filter(filt)
    m = np.empty((t.num_rows, t.num_columns), dtype=np.float64)
    for j, c in enumerate(t.columns):
        m[:, j] = np.asarray(c.to_numpy(zero_copy_only=False), dtype=np.float64)
        m[:, j] = np.nan_to_num(np.where(c.is_null().to_numpy(zero_copy_only=False), 0.0, m[:, j]), nan=0.0)
    return m


def feats(t):
    return [gpufeed.Feature(n, dtype="f64") for n in t.column_names]


def collect(path, t, **kw):
    kw.setdefault("device", None)
    L = gpufeed.Loader(path, features=feats(t), **kw)
    parts = [np.from_dlpack(b).copy() for b in L]
    L.close()
    return np.concatenate(parts) if parts else np.empty((0, t.num_columns))


def bench(binary, path, *args):
    p = subprocess.run([binary, path, "--dtype", "f64"] + list(args), capture_output=True, text=True, timeout=300)
    hashes = [l.split()[3] for l in p.stdout.splitlines() if len(l.split()) == 4 and l.split()[0].isdigit()]
    return p, hashes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build"))
    a = ap.parse_args()
    gbench = os.path.join(a.bin, "gpufeed-bench")
    with tempfile.TemporaryDirectory() as td:
        path = os.path.join(td, "wide.parquet")
        t = write_wide(path)
        ref = matrix(t)
        n = t.num_rows

        # in file order: the matrix, at 1 and 3 workers
        for w in (1, 3):
            got = collect(path, t, batch_rows=1000, unit_bytes=UB, unit_shuffle=False, workers=w)
            check("file order, %d worker(s): %d x %d equal pyarrow's" % (w, n, t.num_columns),
                  got.shape == ref.shape and np.array_equal(got, ref),
                  "shape %s; first bad row %s" % (got.shape, np.argwhere((got != ref).any(axis=1))[:1].tolist() if got.shape == ref.shape else "-"))

        # shuffled: every row once; the same batches whatever the workers
        got = collect(path, t, batch_rows=512, unit_bytes=UB, workers=3, seed=5, shuffle_window=3)
        order = np.argsort(got[:, 0])
        check("shuffled, 3 workers: every row once, each equal to pyarrow's",
              got.shape == ref.shape and np.array_equal(got[order], ref))
        check("shuffled: the rows move across row groups (not file order)", got.shape == ref.shape and not np.array_equal(got, ref))
        args = ["--batch", "512", "--unit-bytes", str(UB), "--seed", "5", "--shuffle-window", "3", "--epochs", "2", "--print-batches",
                "--columns", ",".join(t.column_names)]
        runs = {w: bench(gbench, path, "--workers", str(w), *args) for w in (1, 2, 4)}
        jit = bench(gbench, path, "--workers", "4", "--jitter-us", "3000", *args)
        h1 = runs[1][1]
        check("gpufeed-bench: the same %d batch hashes at 1, 2 and 4 workers (and with timing noise)" % len(h1),
              len(h1) > 20 and runs[2][1] == h1 and runs[4][1] == h1 and jit[1] == h1,
              " ".join("%d:%d" % (w, len(r[1])) for w, r in runs.items()) + runs[1][0].stderr[-300:])
        m = re.search(r"rows \d+, batches \d+, .*source bytes read (\d+)", runs[2][0].stderr)
        md = pq.ParquetFile(path).metadata
        sel = sum(md.row_group(g).column(c).total_compressed_size for g in range(md.num_row_groups) for c in range(md.num_columns))
        per_epoch = int(m.group(1)) / 2 if m else -1
        check("source bytes an epoch %.3fx the chunks' compressed bytes (at most 1.05x: each page read once)" % (per_epoch / sel),
              m is not None and per_epoch <= 1.05 * sel, runs[2][0].stderr[-300:])
        units = re.search(r"units decoded (\d+)", runs[1][0].stderr)
        check("units of at most %d KiB of rows: %s decoded in 2 epochs" % (UB // 1024, units.group(1) if units else "?"),
              units is not None and int(units.group(1)) >= 2 * n * 8 * t.num_columns // UB)

        # ranks: each reads on through a contiguous block of the runs
        per, seen = [], []
        for r in range(3):
            p = subprocess.run([gbench, path, "--dtype", "f64", "--batch", "500", "--unit-bytes", str(UB), "--seed", "3", "--rank", str(r),
                                "--world", "3", "--workers", "2", "--even", "pad"], capture_output=True, text=True, timeout=300)
            m = re.search(r"rows \d+, batches \d+, .*source bytes read (\d+)", p.stderr)
            per.append(int(m.group(1)) if m else 1 << 60)
            got = collect(path, t, batch_rows=500, unit_bytes=UB, seed=3, rank=r, world=3, workers=2, even="pad")
            seen.append(got[:, 0])
        ids = np.concatenate(seen)
        # (every world-th unit would have each rank read every page: 3x; a block
        # reads on, but a row group shared by two ranks costs both its dictionaries)
        check("3 ranks: together every row (pad repeats a few); source bytes %.2fx the chunks' in all (under 2x; each rank's "
              "block reads on)" % (sum(per) / sel), set(ids.tolist()) == set(ref[:, 0].tolist()) and sum(per) <= 2 * sel, "per rank %s" % per)

        # a predicate: every worker evaluates it, the same rows kept
        got = collect(path, t, batch_rows=700, unit_bytes=UB, unit_shuffle=False, workers=3, where="c000 > 0.5 and c002 < 1000")
        want = matrix(t, pc.and_(pc.greater(t["c000"], 0.5), pc.less(t["c002"], 1000)))
        check("where 'c000 > 0.5 and c002 < 1000' at 3 workers: pyarrow's %d rows" % want.shape[0],
              got.shape == want.shape and np.array_equal(got, want), "got %s" % (got.shape,))

        # the cache: built by a column-parallel loader, it serves the next epoch
        cdir = os.path.join(td, "cache")
        L = gpufeed.Loader(path, features=feats(t), batch_rows=1000, unit_bytes=UB, workers=3, seed=2, shuffle_window=2, epochs=2,
                           cache_dir=cdir, device=None)
        ep = [[], []]
        for epoch in range(2):          # each iter() of the Loader is an epoch
            for b in L:
                ep[b.epoch].append(np.from_dlpack(b).copy())
        L.close()
        e0, e1 = (np.concatenate(x) for x in ep)
        check("cache built by 3 column-parallel workers: epoch 1 (served) holds pyarrow's rows",
              e1.shape == ref.shape and np.array_equal(e1[np.argsort(e1[:, 0])], ref) and np.array_equal(e0[np.argsort(e0[:, 0])], ref))
        again = collect(path, t, batch_rows=1000, unit_bytes=UB, workers=2, seed=2, shuffle_window=2, cache_dir=cdir)
        check("the cache read by another loader: epoch 0's batches as built", again.shape == e0.shape and np.array_equal(again, e0))

        # a corrupt page: an error naming the file and the column, at any worker count
        bad = os.path.join(td, "bad.parquet")
        raw = bytearray(open(path, "rb").read())
        cc = md.row_group(1).column(200)
        off = cc.data_page_offset + 40
        for i in range(off, off + 64):
            raw[i] ^= 0x5A
        open(bad, "wb").write(bytes(raw))
        for w in (1, 4):
            p, _ = bench(gbench, bad, "--workers", str(w), "--unit-bytes", str(UB), "--batch", "500", "--columns", ",".join(t.column_names))
            check("corrupt page, %d worker(s): exit 1 naming the file and column %s" % (w, cc.path_in_schema),
                  p.returncode == 1 and "bad.parquet" in p.stderr and cc.path_in_schema in p.stderr, "rc %d: %s" % (p.returncode, p.stderr[-400:]))

        # options
        p = subprocess.run([gbench, path, "--unit-bytes", "-5"], capture_output=True, text=True)
        check("--unit-bytes -5 refused by name", p.returncode == 2 and "--unit-bytes" in p.stderr, p.stderr[-300:])
        try:
            gpufeed.Loader(path, unit_bytes=-7, device=None)
            check("unit_bytes=-7 raises", False)
        except gpufeed.GpufeedError as e:
            check("unit_bytes=-7 raises naming unit_bytes", "unit_bytes" in str(e), str(e))
        narrow = os.path.join(td, "narrow.parquet")
        pq.write_table(t.select(["id", "c000", "c001"]), narrow, row_group_size=4000)
        p, _ = bench(gbench, narrow, "--batch", "500")
        u = re.search(r"units decoded (\d+)", p.stderr)
        check("a narrow file keeps a unit a row group (3 units, not cut by bytes)", u is not None and u.group(1) == "3", p.stderr[-300:])
    print("%d passed, %d failed" % (PASS, FAIL))
    return 1 if FAIL else 0


if __name__ == "__main__":
    sys.exit(main())
