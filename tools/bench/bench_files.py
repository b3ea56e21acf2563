"""Many small files read with pread: a dataset's cost against its number of
files, and the tensor cache over them.

    .venv/bin/python tools/bench/bench_files.py [--files 10000,20000,40000,100000]
        [--runs 3] [--bin build] [--baseline OLD_BUILD_DIR] [--out build/bench/files]

The files (written once into --out, kept while their parameters hold): N
copies of one 3-row Parquet file (an int64 and a float64 column, pyarrow,
uncompressed), 1,000 a directory. Files read with pread keep their
descriptors in a pool of GPUFEED_MAX_OPEN_FILES (64), opened again when a
read needs them; past the pool every file is opened twice (its footer,
then its rows).

Measured, each the median of --runs runs:
  pread      gpufeed-dense --pread --feature id:i64 -o /dev/null DIR: open
             (expand, footers, plan) and read every row, wall seconds
  mapped     the same without --pread (every file mapped): the reference;
             it fails past vm.max_map_count files (65,530 by default), each
             file holding its mapping, and the table says so
  cache      gpufeed-bench --pread --epochs 2 --cache DIR at the smallest N:
             epoch 1 must read no source byte
Prints one table: per N the seconds, microseconds a file, the ratio to the
mapped run, and the time per file against the smallest N's (1.0: linear).
With --baseline, the same pread runs of another build's gpufeed-dense
(e.g. a build from before the pool's LRU list) in further columns.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def one_file():
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    t = pa.table({"id": pa.array(np.arange(3, dtype=np.int64)), "x": pa.array(np.arange(3, dtype=np.float64))})
    sink = pa.BufferOutputStream()
    pq.write_table(t, sink, compression="none")
    return sink.getvalue().to_pybytes()


def make_tree(root, n, data):
    params = {"files": n, "bytes": len(data), "v": 1}
    side = root + ".json"
    if os.path.isdir(root) and os.path.exists(side) and json.load(open(side)) == params:
        return
    shutil.rmtree(root, ignore_errors=True)
    for k in range(n):
        d = os.path.join(root, "d%04d" % (k // 1000))
        if k % 1000 == 0:
            os.makedirs(d)
        with open(os.path.join(d, "p%06d.parquet" % k), "wb") as f:
            f.write(data)
    json.dump(params, open(side, "w"))


def timed(cmd, expect_rows=None, may_fail=False):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    if p.returncode != 0 and may_fail:
        return None, p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "exit %d" % p.returncode
    if p.returncode != 0:
        sys.exit("bench_files.py: %s failed:\n%s" % (" ".join(cmd), p.stderr[-2000:]))
    if expect_rows is not None and ("rows %d," % expect_rows) not in p.stderr:
        sys.exit("bench_files.py: %s: not %d rows:\n%s" % (" ".join(cmd), expect_rows, p.stderr[-800:]))
    return wall, p.stderr


def median_of(runs, cmd, rows, may_fail=False):
    """the median wall time, or (None, why) when a run may fail and did"""
    walls = []
    for _ in range(runs):
        w, err = timed(cmd, rows, may_fail)
        if w is None:
            return None, err
        walls.append(w)
    return statistics.median(walls), ""


def max_maps():
    try:
        return "%s mappings (vm.max_map_count)" % open("/proc/sys/vm/max_map_count").read().strip()
    except OSError:
        return "a bounded number of mappings"


def cache_check(bench, root, out):
    cdir = os.path.join(out, "cache")
    shutil.rmtree(cdir, ignore_errors=True)
    wall, err = timed([bench, root, "--pread", "--batch", "4096", "--workers", "2", "--epochs", "2", "--cache", cdir])
    ok = "epoch 1: source bytes read 0" in err and "cache not used" not in err
    shutil.rmtree(cdir, ignore_errors=True)
    return ok, wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", default="10000,20000,40000,100000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--bin", default="build")
    ap.add_argument("--baseline", default=None, help="another build directory with gpufeed-dense")
    ap.add_argument("--out", default="build/bench/files")
    a = ap.parse_args()
    sizes = [int(s) for s in a.files.split(",")]
    dense = os.path.join(a.bin, "gpufeed-dense")
    bench = os.path.join(a.bin, "gpufeed-bench")
    base = os.path.join(a.baseline, "gpufeed-dense") if a.baseline else None
    os.makedirs(a.out, exist_ok=True)
    data = one_file()
    rows, notes = [], []
    for n in sizes:
        root = os.path.join(a.out, "t%d" % n)
        make_tree(root, n, data)
        args = ["--feature", "id:i64", "-o", "/dev/null", root]
        pr = median_of(a.runs, [dense, "--pread", *args], 3 * n)[0]
        mp, why = median_of(a.runs, [dense, *args], 3 * n, may_fail=True)  # a mapping a file: vm.max_map_count bounds it
        if mp is None:
            notes.append("mapped, %d files: failed (%s): every file keeps its mapping, and the process may hold %s" % (n, why, max_maps()))
        bl = median_of(a.runs, [base, "--pread", *args], 3 * n)[0] if base else None
        rows.append((n, pr, mp, bl))
        print("  %d files: pread %.2f s, mapped %s%s" % (n, pr, "%.2f s" % mp if mp else "failed", ", baseline %.2f s" % bl if bl is not None else ""),
              flush=True)
    ok, cw = cache_check(bench, os.path.join(a.out, "t%d" % sizes[0]), a.out)
    n0, p0 = rows[0][0], rows[0][1]
    print()
    print("machine: %s, %d cores; %s; ulimit -n %s; median of %d runs" % (platform.processor() or platform.machine(), os.cpu_count(),
          time.strftime("%Y-%m-%d"), subprocess.run(["sh", "-c", "ulimit -n"], capture_output=True, text=True).stdout.strip(), a.runs))
    hdr = "| files | pread s | us a file | mapped s | pread / mapped | us a file / at %d |" % n0
    sep = "|---|---|---|---|---|---|"
    if a.baseline:
        hdr += " baseline pread s | baseline / this |"
        sep += "---|---|"
    print(hdr)
    print(sep)
    for n, pr, mp, bl in rows:
        line = "| %d | %.2f | %.1f | %s | %s | %.2f |" % (n, pr, pr / n * 1e6, "%.2f" % mp if mp else "-", "%.2f" % (pr / mp) if mp else "-",
                                                         (pr / n) / (p0 / n0))
        if a.baseline:
            line += " %.2f | %.1fx |" % (bl, bl / pr)
        print(line)
    for note in notes:
        print("- " + note)
    worst = max((pr / n) / (p0 / n0) for n, pr, _, _ in rows)
    print("\ntarget: at most linear (time a file at most 1.5x the smallest N's): %s (worst %.2f)" % ("met" if worst <= 1.5 else "NOT met", worst))
    print("cache over %d pooled files: %s (%.2f s, 2 epochs)" % (n0, "epoch 1 read no source byte" if ok else "NOT used", cw))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
