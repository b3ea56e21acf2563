"""Wide tables: a feature table of 2,000 columns through gpufeed's loader and
its cache build, against pyarrow read_table -> NumPy, in one run.

    .venv/bin/python tools/bench/bench_wide.py [--cols 2000] [--rows 100000]
        [--rg 25000] [--workers 2 | --workers 1,15] [--window 4] [--batch 4096] [--epochs 2]
        [--runs 3] [--bin build] [--out build/bench]

The file (written once into --out, kept while its parameters hold): --cols
columns x --rows rows in row groups of --rg rows, pyarrow defaults (SNAPPY,
dictionary pages, 1 MiB data pages): a quarter float64 (normal), a quarter
float32 with 200 distinct values, a quarter int32 categories (5,000
distinct), a quarter float64 with 2% nulls. Every column read as f32.

Measured, each the median of --runs runs; peak RSS is each process's own
high-water mark (VmHWM: gpufeed-bench's and gpufeed-cache's "peak RSS",
the pyarrow child's from /proc/self/status). Not wait4's ru_maxrss: a
child Python starts with vfork carries the parent's high-water mark
(this script once wrote the file itself: 1.3 GiB for every child). The
file is written, and its column bytes summed, by child processes, so this
process stays small.
  loader      gpufeed-bench FILE --batch B --workers N --shuffle-window W
              --seed 1 --epochs E: wall time, peak RSS, source bytes read in
              an epoch against the selected column bytes (the sum of the
              chunks' compressed sizes)
  cache build gpufeed-cache build --cache DIR FILE --workers N: wall, peak RSS
  pyarrow     pq.read_table(FILE) then np.stack of every column as float32
              (fill_null 0): wall, peak RSS (a child process)
Prints one table with the targets and pyarrow's time over ours (an epoch of
the loader, the cache build) (loader and build within 600 MiB at 2
workers, source bytes at most 1.15x the selected bytes) and writes it to
build/bench/wide_report.md.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(cmd, env=None):
    """(wall seconds, peak RSS MiB, stdout+stderr) of one child; the peak
    is the one the child prints ("peak RSS N MiB": its VmHWM)"""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
    out = p.stdout.read().decode(errors="replace")
    status = p.wait()
    wall = time.perf_counter() - t0
    if status != 0:
        sys.exit("bench_wide.py: %s failed:\n%s" % (" ".join(cmd), out[-2000:]))
    m = re.search(r"peak RSS ([0-9.]+) MiB", out)
    if not m:
        sys.exit("bench_wide.py: %s printed no peak RSS:\n%s" % (" ".join(cmd), out[-2000:]))
    return wall, float(m.group(1)), out


def make_file(path, cols, rows, rg):
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    params = {"cols": cols, "rows": rows, "rg": rg, "v": 1, "pyarrow": pa.__version__}
    side = path + ".json"
    if os.path.exists(path) and os.path.exists(side) and json.load(open(side)) == params:
        return
    print(f"writing {os.path.relpath(path, ROOT)}: {cols} columns x {rows} rows, row groups of {rg} ...", flush=True)
    rng = np.random.default_rng(2000)
    arrays, names = [], []
    for j in range(cols):
        k = j % 4
        if k == 0:
            a = pa.array(rng.standard_normal(rows))
        elif k == 1:
            a = pa.array((rng.integers(0, 200, rows) / 8.0).astype(np.float32))
        elif k == 2:
            a = pa.array(rng.integers(0, 5000, rows, dtype=np.int32))
        else:
            a = pa.array(rng.standard_normal(rows) * 10, mask=rng.random(rows) < 0.02)
        arrays.append(a)
        names.append(f"f{j:04d}")
    tmp = path + ".tmp"
    pq.write_table(pa.table(arrays, names=names), tmp, row_group_size=rg)
    os.replace(tmp, path)
    json.dump(params, open(side, "w"))


def selected_bytes(path):
    import pyarrow.parquet as pq
    md = pq.ParquetFile(path).metadata
    return sum(md.row_group(g).column(c).total_compressed_size for g in range(md.num_row_groups) for c in range(md.num_columns))


PYARROW = r"""
import sys, numpy as np, pyarrow.parquet as pq, pyarrow.compute as pc
t = pq.read_table(sys.argv[1])
m = np.empty((t.num_rows, t.num_columns), dtype=np.float32)
for j, c in enumerate(t.columns):
    m[:, j] = pc.fill_null(c, 0).to_numpy()
print(m.shape, float(m[:, ::97].sum()))
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")]
print("peak RSS %.1f MiB" % (int(hwm[0].split()[1]) / 1024.0))
"""

# the file written and its bytes summed in child processes (the parent's
# high-water mark stays that of a small process)
CHILD = r"""
import sys
sys.path.insert(0, sys.argv[1])
import bench_wide
if sys.argv[2] == "make":
    bench_wide.make_file(sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]))
else:
    print(bench_wide.selected_bytes(sys.argv[3]))
"""


def in_child(*args):
    p = subprocess.run([sys.executable, "-c", CHILD, os.path.dirname(os.path.abspath(__file__)), *[str(a) for a in args]],
                       cwd=ROOT, stdout=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit("bench_wide.py: the child (%s) failed" % args[0])
    return p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cols", type=int, default=2000)
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--rg", type=int, default=25000)
    ap.add_argument("--workers", default="2", help="loader workers; a list (1,15) runs the loader at each and prints the scaling")
    ap.add_argument("--window", type=int, default=4)
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--bin", default="build")
    ap.add_argument("--out", default="build/bench")
    ap.add_argument("--skip-pyarrow", action="store_true")
    a = ap.parse_args()
    out = os.path.join(ROOT, a.out)
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, f"wide_{a.cols}x{a.rows}_rg{a.rg}.parquet")
    sys.stdout.write(in_child("make", path, a.cols, a.rows, a.rg))
    sel = int(in_child("bytes", path).split()[-1])
    bench, cache_tool = os.path.join(a.bin, "gpufeed-bench"), os.path.join(a.bin, "gpufeed-cache")
    rows = []

    def med(v):
        return statistics.median(v)

    workers = [int(x) for x in str(a.workers).split(",")]
    a.workers = max(workers)
    rates = []
    for nw in workers:
        lw, lr, lb, lrate = [], [], [], []
        for _ in range(a.runs):
            w, r, o = run([bench, path, "--batch", str(a.batch), "--workers", str(nw), "--shuffle-window", str(a.window),
                           "--seed", "1", "--epochs", str(a.epochs)])
            m = re.search(r"rows \d+, batches \d+, .*source bytes read (\d+)", o)
            rs = re.search(r"rows \d+, batches \d+, [0-9.]+ s, (\d+) rows/s", o)
            lw.append(w)
            lr.append(r)
            lb.append(int(m.group(1)) / a.epochs if m else -1)
            lrate.append(int(rs.group(1)) if rs else 0)
        rows.append(("loader: %d workers, window %d, batch %d, %d epochs" % (nw, a.window, a.batch, a.epochs), med(lw), med(lr), med(lb)))
        rates.append(med(lrate))
    cw, cr = [], []
    cdir = os.path.join(out, "wide-cache")
    for _ in range(a.runs):
        shutil.rmtree(cdir, ignore_errors=True)
        w, r, _ = run([cache_tool, "build", "--cache", cdir, "--workers", str(a.workers), path])
        cw.append(w)
        cr.append(r)
    shutil.rmtree(cdir, ignore_errors=True)
    rows.append(("cache build: %d workers" % a.workers, med(cw), med(cr), None))
    if not a.skip_pyarrow:
        pw, pr = [], []
        for _ in range(a.runs):
            w, r, _ = run([sys.executable, "-c", PYARROW, path])
            pw.append(w)
            pr.append(r)
        rows.append(("pyarrow read_table -> NumPy f32", med(pw), med(pr), None))

    lines = ["# Wide tables: %d columns x %d rows (row groups of %d)" % (a.cols, a.rows, a.rg), "",
             "- date: %s; %s, %d cores; load %s" % (time.strftime("%Y-%m-%d %H:%M"), platform.processor() or platform.machine(),
                                                   os.cpu_count(), " ".join("%.2f" % x for x in os.getloadavg())),
             "- command: `%s`" % " ".join(["python3", "tools/bench/bench_wide.py"] + sys.argv[1:]),
             "- selected column bytes (compressed, all %d columns): %.1f MB" % (a.cols, sel / 1e6), "",
             "| what | wall s | peak RSS MiB | source bytes an epoch / selected | pyarrow's time / this (an epoch, a build) | target |",
             "|---|---|---|---|---|---|"]
    pa_wall = rows[-1][1] if not a.skip_pyarrow else None
    for name, w, r, b in rows:
        ratio = "%.2fx" % (b / sel) if b else "-"
        per = w / a.epochs if name.startswith("loader") else w
        speed = "%.2fx" % (pa_wall / per) if pa_wall and not name.startswith("pyarrow") else "-"
        tgt = ("RSS <= 600: %s; bytes <= 1.15x: %s" % ("met" if r <= 600 else "NOT met", "met" if b and b <= 1.15 * sel else "NOT met")
               if name.startswith("loader") else "RSS <= 600: %s" % ("met" if r <= 600 else "NOT met") if name.startswith("cache") else "")
        lines.append("| %s | %.2f | %.0f | %s | %s | %s |" % (name, w, r, ratio, speed, tgt))
    if len(workers) > 1:
        lo, hi = rows[0], rows[len(workers) - 1]
        lines += ["", "- scaling: %d workers %.2fx the rows/s of %d (gpufeed-bench's own figure: %.0f against %.0f rows/s; wall, with the "
                  "process start and the dataset's open: %.2fx); target >= 8x at 15 workers, within 2 GiB: %.0f MiB"
                  % (workers[-1], rates[-1] / max(rates[0], 1), workers[0], rates[-1], rates[0], lo[1] / hi[1], hi[2])]
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(out, "wide_report.md"), "w") as f:
        f.write(text + "\n")


if __name__ == "__main__":
    main()
