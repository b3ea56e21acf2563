"""Benchmark: the tensor cache (gpufeed.h >>cache), through gpufeed-bench.

    .venv/bin/python tools/bench/bench_cache.py [--bin build/gpufeed-bench] [--runs 15]
        [--out build/bench] [--data FILE.parquet] [--baseline OTHER/gpufeed-bench]
                                                        (make bench-cache)

Data: a 1M rows x 32 columns pyarrow-default (SNAPPY) file in build/bench/:
dense_1m_snappy.parquet (made by tools/bench/bench_dense.py) or any build/bench/*.parquet
of that shape, else build/bench/cache_1m_snappy.parquet is generated (8 columns
each of float32, float64, int32, int64, ~10% nulls in 8; pyarrow defaults).
All 32 columns as f32, --batch 65536 --workers 2, shuffle window 0 (the
default). Caches live in build/bench/cache-bench/ (removed at the end).

Measured (each command's median of --runs runs, after one warm-up; the
commands are interleaved round-robin so a busy machine hurts all alike):
  (a) cached epochs: `gpufeed-bench --epochs 3 --cache DIR` on a built cache:
      its own rows/s and GB/s (dense bytes: rows x row bytes, over its own
      time: dataset open through the last batch, which includes checking
      every unit's checksum at first use and the first touch of the mapping);
      the steady-state epoch, (T(--epochs 33) - T(--epochs 3)) / 30 (against
      memcpy 30 times over), and the first cached epoch alone (--epochs 1).
      Against: single-core memcpy (tools/bench/bench_memcpy.c) of a buffer of the
      cache file's size, 3 times over, in chunks of one batch (65536 rows x
      row bytes) into one batch-sized buffer.  Target: ratio >= 0.8.
  (b) cached epoch rows/s against the decode path's (no cache, --epochs 1).
      Target: >= 10x.
  (c) building: `--epochs 1 --cache NEWDIR` (decodes, writes the cache,
      fsync, rename) against `--epochs 1` without a cache, process wall time.
      Target: <= 1.10.
  (d) cached epochs sequential (as in (a)) and shuffled (--shuffle-window 4),
      the steady-state epoch and the 3-epoch run, against the same commands
      of another build's gpufeed-bench (--baseline: the build before a change,
      on the same cache file), interleaved with them. Target: >= 0.8 (the
      cost of checking cached bytes where they are used, in memory the
      loader owns, instead of gathering from a mapping).
Prints one table with the command lines, the hardware and the load average
(a shared machine skews every figure), and writes it to build/bench/cache_report.md.
"""
from __future__ import annotations

import argparse
import glob
import os
import platform
import re
import resource
import shutil
import statistics
import struct
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROWS = 1_000_000
NCOLS = 32
BATCH = 65536
WORKERS = 2


# ------------------------------------------------------------------ data

def suitable(path):
    """1M rows, 32 columns, every column chunk SNAPPY."""
    try:
        import pyarrow.parquet as pq
        md = pq.ParquetFile(path).metadata
    except Exception:
        return False
    if md.num_rows != ROWS or md.num_columns != NCOLS:
        return False
    for g in range(md.num_row_groups):
        for c in range(md.num_columns):
            if md.row_group(g).column(c).compression != "SNAPPY":
                return False
    return True


def generate(path, seed=20260101):
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    rng = np.random.default_rng(seed)
    cols = {}
    for i in range(8):
        cols[f"f32_{i}"] = rng.standard_normal(ROWS).astype(np.float32)
    for i in range(8):
        v = rng.standard_normal(ROWS) * 1000.0
        cols[f"f64_{i}"] = np.round(v, 2) if i % 2 else v
    for i in range(8):
        hi = 1000 if i < 4 else 2_000_000_000
        cols[f"i32_{i}"] = rng.integers(-hi, hi, ROWS, dtype=np.int32)
    for i in range(8):
        cols[f"i64_{i}"] = (rng.integers(0, 50_000, ROWS, dtype=np.int64) if i < 4
                            else np.arange(ROWS, dtype=np.int64) * 7919 + rng.integers(0, 7919, ROWS))
    arrays = {}
    for j, (k, v) in enumerate(cols.items()):
        arrays[k] = pa.array(v, mask=rng.random(ROWS) < 0.10) if j % 4 == 1 else pa.array(v)
    tmp = path + ".tmp"
    pq.write_table(pa.table(arrays), tmp)          # pyarrow defaults: SNAPPY, dictionary
    os.replace(tmp, path)


def find_data(out, given):
    if given:
        return given, False
    cands = [os.path.join(out, "dense_1m_snappy.parquet")] + sorted(glob.glob(os.path.join(out, "*.parquet")))
    for p in cands:
        if os.path.exists(p) and suitable(p):
            return p, False
    p = os.path.join(out, "cache_1m_snappy.parquet")
    print(f"generating {p} ...", flush=True)
    generate(p)
    return p, True


# ------------------------------------------------------------------ runs

RX = re.compile(r"rows (\d+), batches (\d+), ([0-9.]+) s, ([0-9.]+) rows/s, ([0-9.]+) GB/s dense, source bytes read (\d+)")


class Run:
    def __init__(self, argv, wall, cpu, stdout, stderr):
        self.argv, self.wall, self.cpu, self.stdout, self.stderr = argv, wall, cpu, stdout, stderr
        m = RX.search(stderr)
        if m:
            self.rows, self.secs, self.gbs, self.src = int(m.group(1)), float(m.group(3)), float(m.group(5)), int(m.group(6))
        cm = re.search(r"^cache: (\w+), units from cache (\d+), bad units (\d+)", stderr, re.M)
        self.cache = cm.group(1) if cm else None
        self.epoch_bytes = [int(x) for x in re.findall(r"^epoch \d+: source bytes read (\d+)", stderr, re.M)]


def run(argv, pre=None):
    if pre:
        pre()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"failed ({p.returncode}): {' '.join(argv)}\n{p.stderr[-800:]}")
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return Run(argv, wall, cpu, p.stdout, p.stderr)


def med(xs):
    return statistics.median(xs)


def spread(xs, fmt):
    return f"{fmt(min(xs))} .. {fmt(max(xs))}"


def hardware():
    model = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 2**20:.0f} GiB"
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, {mem} RAM, {platform.system()} {platform.release()}"


def fstype(path):
    try:
        p = subprocess.run(["df", "-T", path], capture_output=True, text=True)
        return p.stdout.splitlines()[1].split()[1]
    except Exception:
        return "?"


def rel(p):
    return os.path.relpath(p, ROOT) if os.path.isabs(p) else p


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="build/gpufeed-bench")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--out", default="build/bench")
    ap.add_argument("--data", default=None)
    ap.add_argument("--keep", action="store_true", help="keep the caches in OUT/cache-bench")
    ap.add_argument("--baseline", default=None, help="another build's gpufeed-bench: its cached epochs against this build's (d)")
    a = ap.parse_args()
    if a.runs < 5:
        raise SystemExit("--runs must be >= 5")
    os.chdir(ROOT)
    t_start = time.perf_counter()
    os.makedirs(a.out, exist_ok=True)
    if a.bin == "build/gpufeed-bench":      # rebuild when gpufeed.h changed (the Makefile rule)
        subprocess.run(["make", "-s", "build/gpufeed-bench"], check=True)
    memcpy_bin = "build/bench_memcpy"
    cc = ["cc", "-O2", "-std=c99", "tools/bench/bench_memcpy.c", "-o", memcpy_bin]   # its first line
    subprocess.run(cc, check=True)
    data, generated = find_data(a.out, a.data)
    load0 = os.getloadavg()

    cdir = os.path.join(a.out, "cache-bench")
    warm, fresh = os.path.join(cdir, "warm"), os.path.join(cdir, "build")
    shutil.rmtree(cdir, ignore_errors=True)
    base = [a.bin, data, "--batch", str(BATCH), "--workers", str(WORKERS)]
    cmd = {
        "decode": base + ["--epochs", "1"],
        "build": base + ["--epochs", "1", "--cache", fresh],
        "cached1": base + ["--epochs", "1", "--cache", warm],
        "cached3": base + ["--epochs", "3", "--cache", warm],
        "cached33": base + ["--epochs", "33", "--cache", warm],
        "cached3s": base + ["--epochs", "3", "--shuffle-window", "4", "--cache", warm],
        "cached33s": base + ["--epochs", "33", "--shuffle-window", "4", "--cache", warm],
    }
    if a.baseline:
        for k in ("cached3", "cached33", "cached3s", "cached33s"):
            cmd["b_" + k] = [a.baseline] + cmd[k][1:]
    pre = {"build": lambda: shutil.rmtree(fresh, ignore_errors=True)}

    # build the warm cache; learn its size and bytes per row from its header
    r = run(cmd["cached3"])
    if r.cache != "ready" or not r.epoch_bytes or r.epoch_bytes[0] == 0:
        raise SystemExit(f"the first cached run did not build the cache:\n{r.stderr}")
    gfc = glob.glob(os.path.join(warm, "*.gfc"))
    if len(gfc) != 1:
        raise SystemExit(f"expected one cache file in {warm}, found {gfc}")
    cache_bytes = os.path.getsize(gfc[0])
    with open(gfc[0], "rb") as f:
        hdr = f.read(72)
    units, img_row = struct.unpack_from("<QQ", hdr, 32)
    batch_bytes = BATCH * img_row
    cmd["memcpy"] = [memcpy_bin, str(cache_bytes), str(batch_bytes), "3", "1"]
    cmd["memcpy30"] = [memcpy_bin, str(cache_bytes), str(batch_bytes), "30", "1"]

    order = ["decode", "build", "cached1", "cached3", "cached33", "cached3s", "cached33s", "memcpy", "memcpy30"]
    if a.baseline:
        order += ["b_cached3", "b_cached33", "b_cached3s", "b_cached33s"]
    res = {k: [] for k in order}
    print(f"data {rel(data)}{' (generated)' if generated else ''}; cache {cache_bytes} bytes, {units} units, "
          f"{img_row} bytes/row; warm-up + {a.runs} runs of each, interleaved ...", flush=True)
    for i in range(a.runs + 1):
        rot = order[i % len(order):] + order[:i % len(order)]
        for k in rot:
            rr = run(cmd[k], pre.get(k))
            if i > 0:
                res[k].append(rr)

    # sanity: what each run was meant to be
    for rr in sum((res[k] for k in order if "cached" in k), []):
        if rr.cache != "ready" or rr.src != 0:
            raise SystemExit(f"a cached run read the source or found no cache:\n{rr.stderr}")
    for rr in res["build"]:
        if rr.cache != "ready" or rr.epoch_bytes[0] == 0:
            raise SystemExit(f"a build run did not build:\n{rr.stderr}")
    for rr in res["decode"]:
        if rr.rows != ROWS:
            raise SystemExit(f"decode run: {rr.rows} rows")

    def memcpy_gbs(rr):
        m = re.search(r"run 0: ([0-9.]+) s, ([0-9.]+) GB/s", rr.stdout)
        return float(m.group(2))

    mem_g = [memcpy_gbs(rr) for rr in res["memcpy"]]
    mem30_g = [memcpy_gbs(rr) for rr in res["memcpy30"]]
    c1_s = [rr.secs for rr in res["cached1"]]
    c3_s = [rr.secs for rr in res["cached3"]]
    c33_s = [rr.secs for rr in res["cached33"]]
    c3_g = [rr.gbs for rr in res["cached3"]]
    c3_r = [rr.rows / rr.secs for rr in res["cached3"]]
    dec_s = [rr.secs for rr in res["decode"]]
    dec_r = [ROWS / s for s in dec_s]
    dec_w = [rr.wall for rr in res["decode"]]
    bld_w = [rr.wall for rr in res["build"]]
    bld_s = [rr.secs for rr in res["build"]]
    epoch_dense = ROWS * img_row          # dense bytes per epoch (the rows x row bytes gpufeed-bench counts)
    steady_s = (med(c33_s) - med(c3_s)) / 30
    steady_g = epoch_dense / steady_s / 1e9 if steady_s > 0 else float("nan")
    steady_r = ROWS / steady_s if steady_s > 0 else float("nan")

    def g(x):
        return f"{x:.2f} GB/s"

    def rs(x):
        return f"{x / 1e6:.2f} M rows/s"

    def ms(x):
        return f"{x * 1000:.0f} ms"

    def ok(v, target, ge=True):
        good = v >= target if ge else v <= target
        return "met" if good else "MISSED"

    ra = med(c3_g) / med(mem_g)
    ra_best = max(c3_g) / max(mem_g)
    rc_best = min(bld_w) / min(dec_w)
    ra2 = steady_g / med(mem30_g)
    rb = med(c3_r) / med(dec_r)
    rb2 = steady_r / med(dec_r)
    rc = med(bld_w) / med(dec_w)
    rc2 = med(bld_s) / med(dec_s)
    sh = lambda k: " ".join(rel(x) if os.path.sep in x else x for x in cmd[k])   # noqa: E731

    def epoch_s(pre, sfx):
        return (med([rr.secs for rr in res[pre + "cached33" + sfx]]) - med([rr.secs for rr in res[pre + "cached3" + sfx]])) / 30

    base_rows = []
    if a.baseline:
        for sfx, what in (("", "sequential"), ("s", "shuffled (window 4)")):
            new_e, old_e = epoch_s("", sfx), epoch_s("b_", sfx)
            r_e = old_e / new_e if new_e > 0 else float("nan")
            new3 = med([rr.rows / rr.secs for rr in res["cached3" + sfx]])
            old3 = med([rr.rows / rr.secs for rr in res["b_cached3" + sfx]])
            base_rows.append(f"| (d) cached epoch, {what}, steady state: this build / the baseline | {rs(ROWS / new_e)} ({new_e * 1000:.1f} ms) | "
                             f"| baseline {rs(ROWS / old_e)} ({old_e * 1000:.1f} ms) | {r_e:.2f} | >= 0.8: {ok(r_e, 0.8)} |")
            base_rows.append(f"| (d) the same, 3-epoch run (open, first reads and checks included) | {rs(new3)} | "
                             f"{spread([rr.rows / rr.secs for rr in res['cached3' + sfx]], rs)} | baseline {rs(old3)} | {new3 / old3:.2f} | >= 0.8: {ok(new3 / old3, 0.8)} |")
    load1 = os.getloadavg()
    lines = [
        "# gpufeed tensor cache benchmark (tools/bench/bench_cache.py)",
        "",
        f"data: {rel(data)} ({ROWS} rows x {NCOLS} columns, SNAPPY, {os.path.getsize(data)} bytes); "
        f"cache: {cache_bytes} bytes, {units} units, {img_row} bytes/row (all columns f32)",
        f"median of {a.runs} runs after a warm-up (spread: min .. max), commands interleaved round-robin",
        "",
        "| measure | median | spread | against | ratio | target |",
        "|---|---|---|---|---|---|",
        f"| (a) cached, 3 epochs in one run (incl. open, first-use checksums, mapping faults) | {g(med(c3_g))}, {rs(med(c3_r))} | {spread(c3_g, g)} | memcpy {g(med(mem_g))} | {ra:.2f} | >= 0.8: {ok(ra, 0.8)} |",
        f"| (a) the same, best run of each | {g(max(c3_g))} | | memcpy {g(max(mem_g))} | {ra_best:.2f} | |",
        f"| (a') cached, steady-state epoch = (T33 - T3) / 30 | {g(steady_g)}, {rs(steady_r)} ({steady_s * 1000:.1f} ms/epoch) | T3 {spread(c3_s, ms)}, T33 {spread(c33_s, ms)} | memcpy x30 {g(med(mem30_g))} | {ra2:.2f} | >= 0.8: {ok(ra2, 0.8)} |",
        f"| (a'') first cached epoch alone, `--epochs 1` (open, first-use checksums, mapping faults) | {ms(med(c1_s))} | {spread(c1_s, ms)} | steady epoch {ms(steady_s)} | | |",
        f"| single-core memcpy, cache-sized buffer x 3 in {batch_bytes}-byte chunks | {g(med(mem_g))} | {spread(mem_g, g)} | | | |",
        f"| single-core memcpy, the same x 30 | {g(med(mem30_g))} | {spread(mem30_g, g)} | | | |",
        f"| (b) cached epoch rows/s (3-epoch run) vs decode path | {rs(med(c3_r))} | {spread(c3_r, rs)} | decode {rs(med(dec_r))} ({spread(dec_r, rs)}) | {rb:.1f}x | >= 10x: {ok(rb, 10)} |",
        f"| (b') steady-state cached epoch vs decode path | {rs(steady_r)} | | decode {rs(med(dec_r))} | {rb2:.1f}x | >= 10x: {ok(rb2, 10)} |",
        f"| (c) epoch 0 building the cache vs without, process wall | {ms(med(bld_w))} | {spread(bld_w, ms)} | no cache {ms(med(dec_w))} ({spread(dec_w, ms)}) | {rc:.3f} | <= 1.10: {ok(rc, 1.10, ge=False)} |",
        f"| (c) the same, best run of each | {ms(min(bld_w))} | | no cache {ms(min(dec_w))} | {rc_best:.3f} | |",
        f"| (c') the same, gpufeed-bench's own time (open .. last batch) | {ms(med(bld_s))} | {spread(bld_s, ms)} | no cache {ms(med(dec_s))} | {rc2:.3f} | <= 1.10: {ok(rc2, 1.10, ge=False)} |",
        *base_rows,
        "",
        "CPU seconds (user+sys, median): "
        + ", ".join(f"{k} {med([rr.cpu for rr in res[k]]):.3f}" for k in order),
        "",
        "commands:",
        f"- (a) `{sh('cached3')}` (cache built beforehand by the same command)",
        f"- (a') also `{sh('cached33')}`",
        f"- memcpy `{' '.join(cmd['memcpy'])}` and `{' '.join(cmd['memcpy30'])}` (built with `{' '.join(cc)}`)",
        f"- (b), (c) decode path `{sh('decode')}`",
        f"- (c) building `{sh('build')}` (directory removed before each run)",
        f"- (d) shuffled `{sh('cached3s')}` and `{sh('cached33s')}`" + (f"; the baseline: the same commands with `{rel(a.baseline)}`" if a.baseline else ""),
        "",
        f"hardware: {hardware()}; cache on {fstype(a.out)}; load average {load0[0]:.2f} at the start, {load1[0]:.2f} at the end"
        + (" (other processes were running: the figures are noisy)" if max(load0[0], load1[0]) > 0.5 * (os.cpu_count() or 1) else ""),
        f"bench time {time.perf_counter() - t_start:.0f} s",
    ]
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(a.out, "cache_report.md"), "w") as f:
        f.write(text + "\n")
    if not a.keep:
        shutil.rmtree(cdir, ignore_errors=True)


if __name__ == "__main__":
    main()
