"""Benchmark: the parallel loader (worker scaling, RSS over epochs, the epoch
boundary, warm start, the memory bound).

    .venv/bin/python tools/bench/bench_loader.py [--runs 5] [--only 1,2,3,4]
        [--epochs-long 100] [--out build/bench]

Builds (every run: gpufeed.h changes)
    cc -O2 -std=c99 -I. tools/gpufeed-bench.c -o build/gpufeed-bench -lpthread -lm
    cc -O2 -std=c99 -I. tools/bench/bench_epoch_stall.c -o build/bench_epoch_stall -lpthread -lm

Writes (once, reused while the generator's parameters and pyarrow's version
match the .json beside each file) into build/bench/:
  loader_a_2m.parquet    2,097,152 rows x 16 numeric columns (8 float32,
                         4 float64, 2 int32, 2 int64), SNAPPY, pyarrow
                         defaults otherwise (dictionary, 1 MiB V1 pages);
                         32 row groups of 65,536 rows: with --unit-rows
                         65536 every unit is one row group, all the same size
  loader_b_2m.parquet    the same table in 8 row groups of 262,144 rows with
                         64 KiB pages: gpufeed splits each row group into
                         units at page boundaries (uneven units, and each unit
                         past the first re-reads the chunk's dictionary page)
  loader_s_192k.parquet  196,608 rows (3 row groups of 65,536), the table of
                         the RSS-over-epochs figure (A is 10.7x its size)

Figures (median of --runs runs after one warm-up; spread = min..max):
  1  worker scaling: gpufeed-bench --workers 1 vs 2 on A and B, one epoch,
     --batch 4096 --unit-rows 65536; rows/s and their ratio (target >= 1.8x
     at 2 workers on 2 cores). Also the CPU seconds the process used, the
     cores it got (CPU s / wall s) and the other load on the machine during
     the run (/proc/stat busy time minus ours, in cores): on a shared
     machine a low ratio with "cores used" well under 2 is contention, not
     the loader. 1b: per-thread on-CPU time and run-queue wait from
     bench_epoch_stall --sched, and the wall time the same CPU work would
     take with both cores free (a projection, labelled as such).
  2  peak RSS after 1, 2, 10 and --epochs-long epochs of S (2 workers), and
     vs the 10.7x larger A (target < 5% growth). With 3 units an epoch the
     workers' shared ring slots and each worker's dictionary buffers reach
     their sizes only once every worker has decoded every row group: S's
     peak rises until about epoch 10, then stays (measured 2026-11-27:
     47.1, 47.2, 47.2, 47.2 MiB at 10, 30, 100, 300 epochs), so the leak
     check and A are compared with S after 10 epochs.
  3  tools/bench/bench_epoch_stall (1 worker, 3 epochs, a simulated training step
     of 1.25x the calibrated decode time per batch, so neither side
     dominates): mean / p50 / p95 / max next() time, the first next() of
     epochs 1, 2 and 3 (target: epoch 2's first <= the mean), and on A
     (equal units) the mean of the other next() calls that open a unit,
     the fair comparison; the trainer thread's on-CPU time in next() tells
     waiting/preemption from work. A 1-worker run: the step spins, and a
     second worker would share the two cores with it. Then warm start:
     loader_open and the first next() with prefill 0 vs 1.
  4  the memory bound workers x ring_depth x unit bytes + batch bytes (unit
     bytes = the largest unit's rows x dense row bytes) next to the peak
     RSS measured in figures 1 and 2 and the RSS of a process that only
     opened the dataset.
Prints one table per figure with the commands, the hardware and the load;
~3-5 minutes on 2 cores (more when the machine is busy). See
tools/bench/README.md.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CC = os.environ.get("CC", "cc")
BENCH = "build/gpufeed-bench"
STALL = "build/bench_epoch_stall"
BUILDS = [
    [CC, "-O2", "-std=c99", "-I.", "tools/gpufeed-bench.c", "-o", BENCH, "-lpthread", "-lm"],
    [CC, "-O2", "-std=c99", "-I.", "tools/bench/bench_epoch_stall.c", "-o", STALL, "-lpthread", "-lm"],
]
GEN_VERSION = 1
UNIT_ROWS = 65536
BATCH = 4096
HZ = os.sysconf("SC_CLK_TCK")

DATASETS = {
    "A": dict(name="loader_a_2m.parquet", rows=1 << 21, row_group=1 << 16, page=None, seed=1),
    "B": dict(name="loader_b_2m.parquet", rows=1 << 21, row_group=1 << 18, page=65536, seed=1),
    "S": dict(name="loader_s_192k.parquet", rows=3 << 16, row_group=1 << 16, page=None, seed=2),
}


# ---- data -------------------------------------------------------------------

def make_table(rows, seed):
    rng = np.random.default_rng(seed)
    cols = {}
    for i in range(8):   # quantised features: a few thousand distinct values
        cols[f"f{i}"] = pa.array(np.round(rng.standard_normal(rows), 3).astype(np.float32))
    for i in range(4):   # wider: ~90k distinct values
        cols[f"d{i}"] = pa.array(np.round(rng.standard_normal(rows) * 100, 2))
    for i in range(2):   # categorical ids
        cols[f"i{i}"] = pa.array(rng.integers(0, 1000, rows, dtype=np.int32))
    for i in range(2):   # unique, increasing ids
        cols[f"l{i}"] = pa.array(np.arange(rows, dtype=np.int64) * 7919 + rng.integers(0, 7919, rows))
    return pa.table(cols)


def ensure_dataset(out_dir, key):
    d = DATASETS[key]
    path = os.path.join(out_dir, d["name"])
    meta = dict(d, gen_version=GEN_VERSION, pyarrow=pa.__version__)
    side = path + ".json"
    try:
        if os.path.exists(path) and json.load(open(side)) == meta:
            return path, False
    except (OSError, ValueError):
        pass
    kw = dict(row_group_size=d["row_group"], compression="snappy")
    if d["page"]:
        kw["data_page_size"] = d["page"]
    pq.write_table(make_table(d["rows"], d["seed"]), path, **kw)
    with open(side, "w") as f:
        json.dump(meta, f)
    return path, True


# ---- running and measuring ------------------------------------------------------

def proc_stat_busy():
    """Jiffies the whole machine was busy (steal included: time our vCPUs could not run)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = (v + [0] * 8)[:8]
    return user + nice + system + irq + softirq + steal


def measure(argv):
    """Runs argv in ROOT; returns (stdout, stderr, wall s, child CPU s, other load in cores).

    Through `sh -c '"$@"; exit $?'`: Linux carries a process's peak RSS
    across fork and exec, so a child started straight from this (large,
    pyarrow-importing) process would report this process's peak as its own
    ru_maxrss. sh must fork for the command (a command follows it), and the
    grandchild starts from sh's small peak."""
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    b0 = proc_stat_busy()
    t0 = time.perf_counter()
    p = subprocess.run(["/bin/sh", "-c", '"$@"; exit $?', "sh"] + argv, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    b1 = proc_stat_busy()
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"failed ({p.returncode}): {' '.join(argv)}\n{p.stderr}")
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    other = max(0.0, (b1 - b0) / HZ - cpu) / wall if wall > 0 else 0.0
    return p.stdout, p.stderr, wall, cpu, other


RE_BENCH = {
    "rows_s": re.compile(r"s, (\d+) rows/s"),
    "secs": re.compile(r"batches \d+, ([\d.]+) s,"),
    "gbs": re.compile(r"([\d.]+) GB/s dense"),
    "bytes_read": re.compile(r"source bytes read (\d+)"),
    "wait": re.compile(r"trainer waited ([\d.]+) s of ([\d.]+) s"),
    "assembly": re.compile(r"batch assembly ([\d.]+) s"),
    "units": re.compile(r"units decoded (\d+)"),
    "rss": re.compile(r"peak RSS ([\d.]+) MiB"),
}


def gpufeed_bench(path, workers, epochs):
    argv = [BENCH, os.path.relpath(path, ROOT), "--batch", str(BATCH), "--epochs", str(epochs),
            "--unit-rows", str(UNIT_ROWS), "--workers", str(workers)]
    _, err, wall, cpu, other = measure(argv)
    r = {"wall": wall, "cpu": cpu, "other": other, "cores": cpu / wall if wall else 0}
    for k, rx in RE_BENCH.items():
        m = rx.search(err)
        if not m:
            raise SystemExit(f"cannot parse '{k}' from gpufeed-bench output:\n{err}")
        r[k] = float(m.group(1))
        if k == "wait":
            r["wait_pct"] = 100 * float(m.group(1)) / float(m.group(2)) if float(m.group(2)) else 0
    r["busy"] = [float(x) for x in re.findall(r"worker \d+: decode ([\d.]+) s", err)]
    return r, " ".join(argv)


def stall_tool(args):
    argv = [STALL] + args
    out, _, wall, cpu, other = measure(argv)
    kv, warm = {}, []
    kv["_threads"] = []
    for line in out.splitlines():
        f = line.split()
        if not f:
            continue
        if f[0] == "thread":
            kv["_threads"].append((f[1], float(f[3]), float(f[5]), int(f[7])))
        elif f[0] == "warm":
            warm.append((int(f[2]), float(f[4]), float(f[6])))
        elif f[0] == "around_boundary_us":
            kv[f[0]] = " ".join(f[1:])
        elif len(f) == 2:
            kv[f[0]] = float(f[1])
    kv["_wall"], kv["_cpu"], kv["_other"] = wall, cpu, other
    return kv, warm, " ".join(argv)


# ---- formatting -----------------------------------------------------------------

def med(xs):
    return statistics.median(xs)


def spread(xs, fmt="{:.0f}"):
    return f"{fmt.format(min(xs))}..{fmt.format(max(xs))}"


def rel_spread(xs):
    m = med(xs)
    return f"±{100 * (max(xs) - min(xs)) / 2 / m:.0f}%" if m else "-"


def table(head, rows):
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" for _ in head) + "|")
    for r in rows:
        print("| " + " | ".join(str(c) for c in r) + " |")
    print()


def mrows(x):
    return f"{x / 1e6:.2f} M"


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
    cc = subprocess.run([CC, "--version"], capture_output=True, text=True).stdout.splitlines()
    return (f"{model}, {os.cpu_count()} cores, {mem} RAM, {platform.system()} {platform.release()}, "
            f"{cc[0] if cc else CC}")


def loadavg():
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "?"


def verdict(ok):
    return "PASS" if ok else "FAIL"


# ---- figures --------------------------------------------------------------------

def fig_scaling(files, runs, res):
    print("## 1. Worker scaling: rows/s at --workers 1 vs 2 (target >= 1.8x on 2 cores)")
    print()
    print(f"    {BENCH} FILE --batch {BATCH} --epochs 1 --unit-rows {UNIT_ROWS} --workers N")
    print("    (runs interleaved 1, 2, 1, 2, ...; with 1 worker the consumer thread also runs:"
          " it assembles batches and otherwise sleeps on the ring)")
    print()
    rows = []
    for key in ("A", "B"):
        path = files[key]
        gpufeed_bench(path, 1, 1)  # warm-up (page cache, CPU frequency)
        gpufeed_bench(path, 2, 1)
        got = {1: [], 2: []}
        for _ in range(runs):
            for w in (1, 2):
                got[w].append(gpufeed_bench(path, w, 1)[0])
        res[("scaling", key)] = got
        for w in (1, 2):
            g = got[w]
            rs = [x["rows_s"] for x in g]
            busy = [sum(x["busy"]) / len(x["busy"]) for x in g]
            rows.append((f"{key} ({DATASETS[key]['name']})", w, mrows(med(rs)), f"{spread([x / 1e6 for x in rs], '{:.2f}')} ({rel_spread(rs)})",
                         f"{med([x['secs'] for x in g]):.3f}", f"{med([x['cpu'] for x in g]):.2f}",
                         f"{med([x['cores'] for x in g]):.2f}", f"{med([x['other'] for x in g]):.2f}",
                         f"{med([x['wait_pct'] for x in g]):.0f}%", f"{med([x['assembly'] for x in g]) * 1000:.0f} ms",
                         f"{med(busy):.3f}", f"{med([x['bytes_read'] for x in g]) / 2**20:.0f}",
                         f"{med([x['rss'] for x in g]):.1f}"))
    table(["dataset", "workers", "rows/s", "spread (M rows/s)", "wall s", "CPU s", "cores used",
           "other load (cores)", "trainer wait", "assembly", "decode s / worker", "MiB read", "peak RSS MiB"], rows)
    rows = []
    for key in ("A", "B"):
        got = res[("scaling", key)]
        m1 = med([x["rows_s"] for x in got[1]])
        m2 = med([x["rows_s"] for x in got[2]])
        pairs = [b["rows_s"] / a["rows_s"] for a, b in zip(got[1], got[2])]
        cpu_ratio = med([x["cpu"] for x in got[2]]) / med([x["cpu"] for x in got[1]])
        cores2 = med([x["cores"] for x in got[2]])
        rows.append((key, f"{m2 / m1:.2f}x", spread(pairs, "{:.2f}"), f"{cpu_ratio:.2f}x", f"{cores2:.2f}",
                     f"{verdict(m2 / m1 >= 1.8)}" + ("" if cores2 > 1.6 else " (the 2-worker runs got "
                                                     f"{cores2:.2f} cores: machine contended)")))
    table(["dataset", "ratio of medians (2 / 1 workers)", "ratio per run pair", "CPU s ratio (2 / 1)",
           "cores used at 2 workers", "target >= 1.8x"], rows)


def fig_threads(files, runs, res):
    print("### 1b. Where the time goes: per-thread on-CPU time and run-queue wait (dataset A, 2 epochs, no step)")
    print()
    print(f"    {STALL} {os.path.relpath(files['A'], ROOT)} --unit-rows {UNIT_ROWS} --batch {BATCH} --epochs 2 --workers N --sched")
    print("    (/proc/self/task/TID/schedstat read after the last batch, workers still alive; run-queue wait = runnable"
          " but not running, i.e. waiting for a core)")
    print()
    args = lambda w: [os.path.relpath(files["A"], ROOT), "--unit-rows", str(UNIT_ROWS), "--batch", str(BATCH),
                      "--epochs", "2", "--workers", str(w), "--sched"]
    stall_tool(args(1))  # warm-up
    stall_tool(args(2))
    got = {1: [], 2: []}
    for _ in range(runs):
        for w in (1, 2):
            got[w].append(stall_tool(args(w))[0])
    rows, proj = [], {}
    for w in (1, 2):
        walls, tr_cpu, wk_cpu, wk_max, wk_rq, tr_rq, per_unit, ideal = [], [], [], [], [], [], [], []
        for g in got[w]:
            th = g["_threads"]
            tr = [t for t in th if t[0] == "trainer"]
            wk = [t for t in th if t[0] == "worker"]
            walls.append(g["wall_us"] / 1e6)
            tr_cpu.append(sum(t[1] for t in tr))
            tr_rq.append(sum(t[2] for t in tr))
            wk_cpu.append(sum(t[1] for t in wk))
            wk_max.append(max(t[1] for t in wk) if wk else 0)
            wk_rq.append(sum(t[2] for t in wk) / max(1, len(wk)))
            per_unit.append(1000 * sum(t[1] for t in wk) / max(1, g["units_decoded"]))
            # wall if every thread had a core of the 2: the busiest worker, or all CPU over 2 cores
            ideal.append(max(max(t[1] for t in wk) if wk else 0, (sum(t[1] for t in th)) / min(2, os.cpu_count() or 2)))
        proj[w] = med(ideal)
        rows.append((w, f"{med(walls):.3f} ({spread(walls, '{:.2f}')})", f"{med(tr_cpu):.3f}", f"{med(wk_cpu):.3f}",
                     f"{med(per_unit):.2f}", f"{med(tr_rq):.3f}", f"{med(wk_rq):.3f}",
                     f"{100 * med(tr_cpu) / (med(tr_cpu) + med(wk_cpu)):.1f}%", f"{med(ideal):.3f}"))
    table(["workers", "wall s", "trainer on-CPU s", "workers on-CPU s (sum)", "worker CPU ms / unit",
           "trainer run-queue s", "run-queue s per worker", "trainer share of CPU", "wall with free cores s (projected)"], rows)
    r = proj[1] / proj[2] if proj[2] else 0
    print(f"projected scaling with 2 free cores (CPU accounting, not a measurement): {r:.2f}x "
          f"(-> {verdict(r >= 1.8)} against 1.8x); measured above: the rows/s ratio")
    print()
    res["threads"] = got


def fig_rss(files, runs, epochs_long, res):
    print(f"## 2. Peak RSS: 1 epoch vs {epochs_long} epochs, and vs a 10.7x larger dataset (target < 5% growth)")
    print()
    print(f"    {BENCH} {os.path.relpath(files['S'], ROOT)} --batch {BATCH} --epochs E --unit-rows {UNIT_ROWS} --workers 2")
    print()
    gpufeed_bench(files["S"], 2, 1)  # warm-up
    eps = (1, 2, 10, epochs_long)
    got = {e: [] for e in eps}
    for _ in range(runs):
        for e in eps:
            got[e].append(gpufeed_bench(files["S"], 2, e)[0])
    res["rss"] = got
    base = med([x["rss"] for x in got[1]])
    rows = []
    for e in eps:
        g = got[e]
        r = [x["rss"] for x in g]
        rows.append((f"S, {DATASETS['S']['rows']} rows", e, f"{med(r):.1f}", spread(r, "{:.1f}"),
                     f"{(med(r) / base - 1) * 100:+.1f}%", f"{med([x['units'] for x in g]):.0f}",
                     f"{med([x['secs'] for x in g]):.2f}", mrows(med([x['rows_s'] for x in g]))))
    big = res.get(("scaling", "A"))
    if big:
        r = [x["rss"] for x in big[2]]
        rows.append((f"A, {DATASETS['A']['rows']} rows (figure 1, 2 workers)", 1, f"{med(r):.1f}", spread(r, "{:.1f}"),
                     f"{(med(r) / base - 1) * 100:+.1f}%", f"{med([x['units'] for x in big[2]]):.0f}",
                     f"{med([x['secs'] for x in big[2]]):.2f}", mrows(med([x['rows_s'] for x in big[2]]))))
    table(["dataset", "epochs", "peak RSS MiB", "spread", "growth vs 1 epoch of S", "units decoded", "wall s", "rows/s"], rows)
    r1, r2, r10, rl = (med([x["rss"] for x in got[e]]) for e in eps)
    print(f"1 -> {epochs_long} epochs: {(rl / r1 - 1) * 100:+.1f}% (the slots and buffers filling, see the docstring); "
          f"10 -> {epochs_long} epochs (steady state, the leak check): {(rl / r10 - 1) * 100:+.1f}% -> {verdict(rl / r10 - 1 < 0.05)}")
    if r2 - r1 > 0.05 * r1:
        print(f"  (1 -> 2 epochs adds {r2 - r1:.1f} MiB: S has {med([x['units'] for x in got[1]]):.0f} units per epoch, so in a"
              " 1-epoch run a worker decodes fewer units than its ring has slots and the untouched slot is never resident;"
              " unit slot = one unit of dense rows, see figure 4)")
    if big:
        rb = med([x["rss"] for x in big[2]])
        print(f"10.7x larger dataset (A, 1 epoch: 32 units, past the filling) vs S after 10 epochs: {(rb / r10 - 1) * 100:+.1f}% -> "
              f"{verdict(rb / r10 - 1 < 0.05)} ({(rb / r1 - 1) * 100:+.1f}% vs 1 epoch of S)")
    print()


def fig_epoch(files, runs, res):
    print("## 3. Epoch boundary: per-call next() times, 1 worker, 3 epochs, simulated step (target: epoch 2's first <= mean)")
    print()
    print(f"    {STALL} FILE --unit-rows {UNIT_ROWS} --batch {BATCH} --workers 1 --epochs 3 --step-us S")
    print("    (S: the warm-up run calibrates it, 1.25 x the mean next() time of an epoch without a step;"
          " the step checksums the batch, then spins; times in microseconds)")
    print()
    rows, checks = [], []
    for key in ("A", "B"):
        rel = os.path.relpath(files[key], ROOT)
        common = [rel, "--unit-rows", str(UNIT_ROWS), "--batch", str(BATCH), "--workers", "1", "--epochs", "3"]
        cal, _, _ = stall_tool(common)  # warm-up + calibration
        step = int(round(cal["step_us"]))
        got = [stall_tool(common + ["--step-us", str(step)])[0] for _ in range(runs)]
        res[("epoch", key)] = got
        f = lambda k: med([g[k] for g in got])
        s = lambda k: spread([g[k] for g in got])
        uo = "unit_open_mean_us" in got[0]
        rows.append((f"{key}: {int(cal['units'])} units of {int(cal['unit_rows_min'])}..{int(cal['unit_rows_max'])} rows",
                     f"{step} (decode {cal['calibration_mean_next_us']:.0f}/batch)",
                     f"{f('mean_next_us'):.0f} ({s('mean_next_us')})", f"{f('mean_next_excl_first_us'):.0f}",
                     f"{f('p50_next_us'):.0f}", f"{f('p95_next_us'):.0f} ({s('p95_next_us')})", f"{f('max_next_us'):.0f}",
                     f"{f('first_next_epoch1_us'):.0f} ({s('first_next_epoch1_us')})",
                     f"{f('first_next_epoch2_us'):.0f} ({s('first_next_epoch2_us')})",
                     f"{f('first_next_epoch3_us'):.0f} ({s('first_next_epoch3_us')})",
                     f"{f('unit_open_mean_us'):.0f} ({s('unit_open_mean_us')})" if uo else "n/a (uneven units)",
                     f"{f('mean_next_cpu_us'):.0f} / {f('first_next_epoch2_cpu_us'):.0f}"
                     + (f" / {f('unit_open_cpu_mean_us'):.0f}" if uo else ""),
                     f"{f('trainer_wait_s') * 1000:.0f} ms", f"{f('_other'):.2f}"))
        e2 = [g["first_next_epoch2_us"] for g in got]
        mean = [g["mean_next_us"] for g in got]
        n_ok = sum(x <= y for x, y in zip(e2, mean))
        line = (f"{key}: epoch 2's first next() {med(e2):.0f} us vs mean {med(mean):.0f} us -> "
                f"{verdict(med(e2) <= med(mean))} ({n_ok}/{len(got)} runs within their own mean)")
        if uo:
            line += f"; vs the other unit-opening next() calls {f('unit_open_mean_us'):.0f} us"
        checks.append(line)
    table(["dataset", "step us", "mean next()", "mean w/o 1st", "p50", "p95", "max", "1st of epoch 1",
           "1st of epoch 2", "1st of epoch 3", "other unit-opening next()", "on-CPU us: mean / 1st of ep. 2 / unit-opening",
           "trainer wait (3 epochs)", "other load (cores)"], rows)
    for c in checks:
        print(c)
    for key in ("A", "B"):
        print(f"{key}, last 3 and first 4 next() times around the boundary (epoch:batch:us), one run: "
              f"{res[('epoch', key)][len(res[('epoch', key)]) // 2]['around_boundary_us']}")
    print("(on-CPU: the trainer thread's CPU time inside next(); wall minus on-CPU minus the loader's own trainer-wait"
          " figure is time the thread was runnable but preempted -- on a contended machine, not the loader's doing)")
    print()

    print("### 3b. Warm start: loader_open and the first next(), prefill 0 vs 1 (dataset A, 1 epoch)")
    print()
    print(f"    {STALL} {os.path.relpath(files['A'], ROOT)} --unit-rows {UNIT_ROWS} --batch {BATCH} --workers N --warm-start-runs {runs}")
    print()
    rows = []
    for w in (1, 2):
        args = [os.path.relpath(files["A"], ROOT), "--unit-rows", str(UNIT_ROWS), "--batch", str(BATCH),
                "--workers", str(w)]
        stall_tool(args + ["--warm-start-runs", "1"])  # warm-up
        _, warm, _ = stall_tool(args + ["--warm-start-runs", str(runs)])
        for p in (0, 1):
            o = [x[1] for x in warm if x[0] == p]
            n = [x[2] for x in warm if x[0] == p]
            rows.append((w, p, f"{med(o) / 1000:.2f} ({spread([x / 1000 for x in o], '{:.2f}')})",
                         f"{med(n):.0f} ({spread(n)})"))
    table(["workers", "prefill", "loader_open ms", "first next() us"], rows)


def fig_memory(files, res):
    print("## 4. Memory bound: workers x ring_depth x unit bytes + batch bytes, next to the measured peak RSS")
    print()
    print(f"    {STALL} FILE --unit-rows {UNIT_ROWS} --batch {BATCH} --workers N --info   (dataset facts and the"
          " RSS of a process that opened the dataset only)")
    print()
    cases = [("A", 1, ("scaling", "A"), 1), ("A", 2, ("scaling", "A"), 2), ("B", 1, ("scaling", "B"), 1),
             ("B", 2, ("scaling", "B"), 2), ("S", 2, "rss", 1)]
    rows = []
    per_worker = {}
    for key, w, rkey, sel in cases:
        info, _, _ = stall_tool([os.path.relpath(files[key], ROOT), "--unit-rows", str(UNIT_ROWS), "--batch", str(BATCH),
                                 "--workers", str(w), "--info"])
        got = res.get(rkey)
        if not got:
            continue
        rss = med([x["rss"] for x in got[sel]])
        bound = info["bound_bytes"] / 2**20
        unit_b = info["unit_rows_max"] * info["row_bytes"] / 2**20
        base = info["rss_after_dataset_open_mib"]
        rest = rss - base - bound
        per_worker.setdefault(key, {})[w] = (rss, bound)
        rows.append((key, w, int(info["ring_depth"]), f"{int(info['unit_rows_max'])} x {int(info['row_bytes'])} B = {unit_b:.2f} MiB",
                     f"{BATCH * info['row_bytes'] / 2**20:.2f} MiB", f"{bound:.1f}", f"{rss:.1f}", f"{base:.1f}",
                     f"{rest:.1f} ({rest / w:.1f} per worker)"))
    table(["dataset", "workers", "ring depth", "largest unit", "batch", "bound MiB", "peak RSS MiB",
           "RSS after dataset open MiB", "peak - open - bound MiB"], rows)
    for key, d in per_worker.items():
        if 1 in d and 2 in d:
            print(f"{key}: the second worker adds {d[2][0] - d[1][0]:.1f} MiB of peak RSS; the bound adds {d[2][1] - d[1][1]:.1f} MiB")
    print()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", default="1,2,3,4", help="figures to run, e.g. 1,4")
    ap.add_argument("--epochs-long", type=int, default=100)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench"))
    a = ap.parse_args()
    if a.runs < 1:
        raise SystemExit("--runs must be >= 1")
    only = {int(x) for x in a.only.split(",") if x}
    t_start = time.time()
    for cmd in BUILDS:
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if p.returncode:
            raise SystemExit(f"build failed: {' '.join(cmd)}\n{p.stderr}")
    os.makedirs(a.out, exist_ok=True)
    files, made = {}, []
    for key in DATASETS:
        files[key], m = ensure_dataset(a.out, key)
        if m:
            made.append(key)
    t_gen = time.time() - t_start

    print("# gpufeed loader benchmarks")
    exe = os.path.relpath(sys.executable, ROOT) if sys.executable.startswith(ROOT) else "python3"
    print(f"# command: {exe} tools/bench/bench_loader.py {' '.join(sys.argv[1:])}".rstrip())
    print(f"# hardware: {hardware()}")
    print(f"# versions: pyarrow {pa.__version__}, numpy {np.__version__}, python {platform.python_version()}")
    print(f"# builds: {'; '.join(' '.join(c) for c in BUILDS)}")
    print(f"# data in {os.path.relpath(a.out, ROOT)}/ ({'generated ' + ','.join(made) if made else 'reused'}, {t_gen:.1f} s incl. builds): "
          + "; ".join(f"{k} = {d['name']}: {d['rows']} rows x 16 cols, row groups of {d['row_group']}"
                      + (f", {d['page'] // 1024} KiB pages" if d['page'] else "") for k, d in DATASETS.items()))
    print(f"# median of {a.runs} runs after one warm-up; spread = min..max; load average at start {loadavg()}")
    print()
    res = {}
    if 1 in only or 4 in only:
        fig_scaling(files, a.runs, res)
    if 1 in only:
        fig_threads(files, a.runs, res)
    if 2 in only or 4 in only:
        fig_rss(files, a.runs, a.epochs_long, res)
    if 3 in only:
        fig_epoch(files, a.runs, res)
    if 4 in only:
        fig_memory(files, res)
    print(f"# total {time.time() - t_start:.0f} s; load average at end {loadavg()}")


if __name__ == "__main__":
    main()
