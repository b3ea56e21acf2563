"""Benchmark: shuffled epochs against sequential ones, the decode path and
the tensor cache, worker scaling, and gpufeed against the usual Python input
pipelines on the same file (part of `make bench-loader`).

    .venv/bin/python tools/bench/bench_peers.py [--runs 5] [--epochs 4]
        [--out build/bench] [--only shuffle,peers]

Data (made once in build/bench/, reused while the generator's parameters
and pyarrow's version match the .json beside it): peers_1m_rg64k.parquet,
1,000,000 rows x 32 numeric columns (8 each of float32, float64, int32,
int64; ~10% nulls in 8 of them), pyarrow defaults (SNAPPY, dictionary,
1 MiB pages) with row groups of 65,536 rows. Every system reads all 32
columns as float32 (nulls 0), batches of 4,096 rows, 2 workers where it has
workers, shuffle window 4 (rows of 4 row groups permuted together).

Figure 5, one run of interleaved commands (median of --runs runs, each the
median of its steady-state epochs: epochs 1.. of a run; epoch 0 pays the
process start, the first touch of memory and, from a cache, the checksums):
  - decode path: `gpufeed-bench --workers 2` sequential (--no-shuffle
    --shuffle-window 0) vs shuffled (--shuffle-window 4);
  - tensor cache (built before the runs): the same two, with --cache;
  - the shuffled cached epoch vs one core's memcpy of the same bytes in
    batch-sized chunks (tools/bench/bench_memcpy.c);
  - the machine's ceiling for shuffled / sequential cached epochs: one
    core copying the cache file (mapped, as the loader reads it) row by
    row in the window shuffle's order (random 128-byte rows within
    windows of 4 units), against the same row-by-row copy in order
    (bench_memcpy @FILE ... 128 WINDOW, and 128 0);
  - the same ceiling at 2 cores: two such copies at once, one a core, their
    GB/s added (random rows scale with cores, an in-order copy much less);
  - 2 workers vs 1 on the sequential decode path, and the machine's
    ceiling for it: two 1-worker runs at once as separate processes, their
    steady rates added, against one alone (what two cores give when nothing
    but the hardware is shared); and two independent 1-worker loaders in
    one process, one a thread (tools/bench/bench_threads.c): what two
    decoding threads of one process give when they share its address space
    but no queue.
Figure 6, the peers (same file, rows/s per steady-state epoch):
  gpufeed-bench (C) and tools/gpufeed.py (Python binding), decode path and
  cache; PyTorch DataLoader over pyarrow (num_workers 0 and 2, a Dataset of
  row groups, batches assembled to 4,096 rows); pyarrow iter_batches ->
  np.stack (no shuffle). Before the timed runs every system runs once with
  a check: each epoch's row count and the sum of every value (float64) must
  equal pyarrow's reading of the file, so nothing looks fast by dropping
  rows. Prints the tables with the commands, the hardware and the load.
"""
from __future__ import annotations

import argparse
import glob
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
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
CC = os.environ.get("CC", "cc")
PY = sys.executable
BENCH = "build/gpufeed-bench"
MEMCPY = "build/bench_memcpy"
THREADS = "build/bench_threads"
BATCH = 4096
ROWS = 1_000_000
GEN = dict(rows=ROWS, row_group=65536, seed=20261124, version=1)
EPOCH_RE = re.compile(r"^epoch (\d+): (\d+) rows, ([\d.]+) s(?:, [\d]+ rows/s)?(?:, sum (\S+))?$")


def shown(p):
    """a command word as the README shows it: the venv's python relative"""
    return os.path.relpath(p, ROOT) if os.path.abspath(p).startswith(ROOT + os.sep) else os.path.basename(p)


def sh(cmd, **kw):
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, **kw)


def build(own_bench=True):
    for cmd in ([CC, "-O2", "-std=c99", "-I.", "tools/gpufeed-bench.c", "-o", BENCH, "-lpthread", "-lm"] if own_bench else None,
                [CC, "-O2", "-std=c99", "tools/bench/bench_memcpy.c", "-o", MEMCPY],
                [CC, "-O2", "-std=c99", "-I.", "tools/bench/bench_threads.c", "-o", THREADS, "-lpthread", "-lm"]):
        if cmd is None:
            continue
        r = sh(cmd)
        if r.returncode:
            sys.exit("build failed: %s\n%s" % (" ".join(cmd), r.stderr))


def ensure_data(out):
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    from bench_dense import make_chunk
    path = os.path.join(out, "peers_1m_rg64k.parquet")
    meta = dict(GEN, pyarrow=pa.__version__)
    try:
        if os.path.exists(path) and json.load(open(path + ".json")) == meta:
            return path
    except (OSError, ValueError):
        pass
    t = make_chunk(np.random.default_rng(GEN["seed"]), ROWS, 0)
    pq.write_table(t, path, row_group_size=GEN["row_group"])
    json.dump(meta, open(path + ".json", "w"))
    return path


def reference(path):
    """rows and the float64 sum of every value as float32, nulls 0"""
    import numpy as np
    import pyarrow.parquet as pq
    from peers_py import numeric_columns
    pf = pq.ParquetFile(path)
    total = 0.0
    for c in numeric_columns(pf):
        total += float(pf.read(columns=[c]).column(0).fill_null(0).to_numpy().astype(np.float32).sum(dtype=np.float64))
    return pf.metadata.num_rows, total


def epochs_of(text):
    out = []
    for line in text.splitlines():
        m = EPOCH_RE.match(line.strip())
        if m:
            out.append((int(m.group(1)), int(m.group(2)), float(m.group(3)), float(m.group(4)) if m.group(4) else None))
    return out


def steady(eps):
    """rows/s of the steady-state epochs (1..): their median"""
    xs = [r / s for e, r, s, _ in eps if e >= 1 and s > 0]
    return statistics.median(xs) if xs else float("nan")


class System:
    def __init__(self, name, cmd, shuffle, cache):
        self.name, self.cmd, self.shuffle, self.cache = name, cmd, shuffle, cache
        self.rates = []


def c_cmd(path, shuffle, cache, workers, epochs, check=False):
    cmd = [BENCH, path, "--batch", str(BATCH), "--workers", str(workers), "--epochs", str(epochs)]
    cmd += ["--shuffle-window", "4"] if shuffle else ["--no-shuffle", "--shuffle-window", "0"]
    if cache:
        cmd += ["--cache", cache]
    if check:
        cmd += ["--sum"]
    return cmd


def py_cmd(system, path, shuffle, cache, workers, epochs, check=False):
    cmd = [PY, "tools/bench/peers_py.py", system, path, "--batch", str(BATCH), "--epochs", str(epochs), "--workers", str(workers)]
    if shuffle:
        cmd.append("--shuffle")
    if cache:
        cmd += ["--cache", cache]
    if check:
        cmd.append("--check")
    return cmd


def run_once(cmd, timeout=900):
    r = sh(cmd, timeout=timeout)
    if r.returncode:
        sys.exit("failed: %s\n%s%s" % (" ".join(cmd), r.stdout[-2000:], r.stderr[-2000:]))
    return epochs_of(r.stdout + "\n" + r.stderr)


def check(sysm, cmd, ref_rows, ref_sum):
    eps = run_once(cmd)
    bad = [e for e in eps if e[1] != ref_rows or e[3] is None or abs(e[3] - ref_sum) > 1e-9 * abs(ref_sum)]
    if not eps or bad:
        sys.exit("CHECK FAILED: %s: epochs %s, want %d rows and sum %r per epoch" % (sysm, eps, ref_rows, ref_sum))
    return "%d epochs x %d rows, sums equal" % (len(eps), ref_rows)


def load_line():
    try:
        return "load average %s" % " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return ""


def hardware():
    cpu = platform.processor() or ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return "%s, %d cores, %s %s" % (cpu, os.cpu_count() or 0, platform.system(), platform.release())


def fig_shuffle(path, runs, epochs, out):
    cache = os.path.join(out, "peers-cache")
    shutil.rmtree(cache, ignore_errors=True)
    run_once(c_cmd(path, False, cache, 2, 1))                    # build the cache
    configs = {
        "decode sequential": c_cmd(path, False, None, 2, epochs),
        "decode shuffled": c_cmd(path, True, None, 2, epochs),
        "cache sequential": c_cmd(path, False, cache, 2, epochs + 4),
        "cache shuffled": c_cmd(path, True, cache, 2, epochs + 4),
        "decode sequential, 1 worker": c_cmd(path, False, None, 1, epochs),
    }
    memcpy_cmd = [MEMCPY, str(ROWS * 128), str(BATCH * 128), "1", "5"]
    # the machine's ceiling for shuffled / sequential cached epochs: one core
    # copying the cache file in order, and in the window shuffle's order
    # (random rows within windows of 4 units of 65,536 rows)
    gfc = sorted(glob.glob(os.path.join(cache, "*.gfc")))
    file_cmds = {}
    if gfc:
        file_cmds = {"in order": [MEMCPY, "@" + gfc[0], str(BATCH * 128), "1", "5", "128", "0"],
                     "shuffled": [MEMCPY, "@" + gfc[0], str(BATCH * 128), "1", "5", "128", str(4 * 65536 * 128)]}
    rates = {k: [] for k in configs}
    mc = []
    fc = {k: [] for k in file_cmds}

    def gbs(cmd):
        m = re.search(r"median ([\d.]+) GB/s", sh(cmd).stdout)
        return float(m.group(1)) if m else None

    def gbs2(cmd):
        # two copies at once, one a core: their GB/s added (what 2 workers could reach)
        ps = [subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) for _ in range(2)]
        ms = [re.search(r"median ([\d.]+) GB/s", p.communicate()[0]) for p in ps]
        return sum(float(m.group(1)) for m in ms) if all(ms) else None
    fc2 = {k: [] for k in file_cmds}

    def pair_rate(cmd):
        # two 1-worker decode runs at once, one a core, as separate processes:
        # their steady rates added is what two decoding cores of this machine
        # deliver with nothing shared but the hardware (caches, memory)
        ps = [subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for _ in range(2)]
        outs = [p.communicate()[0] for p in ps]
        if any(p.returncode for p in ps):
            sys.exit("failed: %s" % " ".join(cmd))
        return sum(steady(epochs_of(o)) for o in outs)
    def thread_rate():
        # two independent 1-worker loaders in one process, one a thread
        r = sh(threads_cmd)
        m = re.search(r"^total: ([\d.]+) rows/s", r.stdout, re.M)
        if r.returncode or not m:
            sys.exit("failed: %s\n%s%s" % (" ".join(threads_cmd), r.stdout[-2000:], r.stderr[-2000:]))
        return float(m.group(1))
    threads_cmd = [THREADS, path, "2", str(max(epochs, 2)), str(BATCH)]
    pair = []
    thr = []
    for _ in range(runs):
        for k, cmd in configs.items():
            rates[k].append(steady(run_once(cmd)))
        pair.append(pair_rate(configs["decode sequential, 1 worker"]))
        thr.append(thread_rate())
        g = gbs(memcpy_cmd)
        if g:
            mc.append(g * 1e9 / 128)                             # rows/s of 128-byte rows
        for k, cmd in file_cmds.items():
            g = gbs(cmd)
            if g:
                fc[k].append(g)
            g = gbs2(cmd)
            if g:
                fc2[k].append(g)
    med = {k: statistics.median(v) for k, v in rates.items()}
    spread = {k: "%.1f..%.1f" % (min(v) / 1e6, max(v) / 1e6) for k, v in rates.items()}
    memcpy = statistics.median(mc) if mc else float("nan")
    rows = [
        ("decode path: shuffled (window 4) / sequential", "decode shuffled", "decode sequential", 0.9),
        ("tensor cache: shuffled / sequential", "cache shuffled", "cache sequential", 0.5),
        ("2 workers / 1 worker (decode path, sequential)", "decode sequential", "decode sequential, 1 worker", 1.8),
    ]
    lines = ["| figure | gpufeed | reference (same run) | ratio | target |", "|---|---|---|---|---|"]
    for name, a, b, tgt in rows:
        r = med[a] / med[b]
        lines.append("| %s | %.1f M rows/s (%s) | %s: %.1f M rows/s (%s) | %.2f | >= %.1f %s |" % (
            name, med[a] / 1e6, spread[a], b, med[b] / 1e6, spread[b], r, tgt, "met" if r >= tgt else "NOT met"))
    def ceiling_row(what, rates):
        # a ceiling for 2 decoding cores: its rows/s (median) over one 1-worker run, and how much of it the loader gets
        one = med["decode sequential, 1 worker"]
        c = statistics.median(rates)
        got = med["decode sequential"] / one
        lines.append("| %s, rows/s added / one alone | %.1f M rows/s (%.1f..%.1f) | %.1f M rows/s | %.2f | (the 2-worker loader reaches %.0f%% of it) |" % (
            what, c / 1e6, min(rates) / 1e6, max(rates) / 1e6, one / 1e6, c / one, 100 * got * one / c))
    if pair:
        ceiling_row("the machine's ceiling for 2 decoding cores: two 1-worker runs at once (separate processes)", pair)
    if thr:
        ceiling_row("the ceiling in one process: two independent 1-worker loaders at once, one a thread", thr)
    r = med["cache shuffled"] / memcpy
    lines.append("| shuffled cached epoch / one core's memcpy of the same bytes | %.1f M rows/s (%.2f GB/s) | memcpy %.1f M rows/s (%.2f GB/s) | %.2f | >= 0.3 %s |" % (
        med["cache shuffled"] / 1e6, med["cache shuffled"] * 128 / 1e9, memcpy / 1e6, memcpy * 128 / 1e9, r, "met" if r >= 0.3 else "NOT met"))
    if all(fc.values()) and fc:
        g_in, g_sh = statistics.median(fc["in order"]), statistics.median(fc["shuffled"])
        ceil = g_sh / g_in
        got = med["cache shuffled"] / med["cache sequential"]
        lines.append("| the machine's ceiling: one core copying the cache file row by row in the window shuffle's order / in order | "
                     "%.2f GB/s | %.2f GB/s | %.2f | (the loader reaches %.0f%% of it) |" % (g_sh, g_in, ceil, 100 * got / ceil))
    if all(fc2.values()) and fc2:
        # random rows are bound by memory latency and scale with cores; an
        # in-order copy is bound by bandwidth and does not: the 2-worker
        # loader's ceiling is this one
        g_in, g_sh = statistics.median(fc2["in order"]), statistics.median(fc2["shuffled"])
        ceil = g_sh / g_in
        got = med["cache shuffled"] / med["cache sequential"]
        lines.append("| the ceiling at 2 cores: two such copies at once, their GB/s added, shuffled order / in order | "
                     "%.2f GB/s | %.2f GB/s | %.2f | (the loader reaches %.0f%% of it; shuffled alone: %.0f%% of the %.1f M rows/s two cores gather) |" % (
                         g_sh, g_in, ceil, 100 * got / ceil, 100 * med["cache shuffled"] * 128 / 1e9 / g_sh, g_sh * 1e9 / 128 / 1e6))
    cmds = ["    " + " ".join(c) for c in configs.values()] + ["    " + " ".join(memcpy_cmd), "    " + " ".join(threads_cmd)]
    cmds += ["    " + " ".join(c).replace(gfc[0], os.path.join(cache, "<the cache file>.gfc")) for c in file_cmds.values()]
    shutil.rmtree(cache, ignore_errors=True)
    return lines, cmds, med


def fig_peers(path, runs, epochs, out, ref_rows, ref_sum):
    cache_c = os.path.join(out, "peers-cache-c")
    cache_py = os.path.join(out, "peers-cache-py")
    for d in (cache_c, cache_py):
        shutil.rmtree(d, ignore_errors=True)
    systems = []
    for shuffle in (False, True):
        s = "shuffled" if shuffle else "sequential"
        systems.append(System("gpufeed C, decode", c_cmd(path, shuffle, None, 2, epochs), shuffle, False))
        systems.append(System("gpufeed C, cache", c_cmd(path, shuffle, cache_c, 2, epochs + 2), shuffle, True))
        systems.append(System("gpufeed Python, decode", py_cmd("gpufeed", path, shuffle, None, 2, epochs), shuffle, False))
        systems.append(System("gpufeed Python, cache", py_cmd("gpufeed", path, shuffle, cache_py, 2, epochs + 2), shuffle, True))
        systems.append(System("PyTorch DataLoader, 0 workers", py_cmd("torch", path, shuffle, None, 0, epochs), shuffle, False))
        systems.append(System("PyTorch DataLoader, 2 workers", py_cmd("torch", path, shuffle, None, 2, epochs), shuffle, False))
        if not shuffle:
            systems.append(System("pyarrow iter_batches -> np.stack", py_cmd("pyarrow", path, False, None, 2, epochs), False, False))
        del s
    checks = {}
    # the checks (and the caches built, so the timed cache runs read no source)
    for sysm in systems:
        key = (sysm.name, sysm.shuffle)
        cmd = list(sysm.cmd)
        if cmd[0] == BENCH:
            cmd = c_cmd(path, sysm.shuffle, cache_c if sysm.cache else None, 2, 2, check=True)
        else:
            cmd = cmd + ["--check"]
            cmd[cmd.index("--epochs") + 1] = "2"
        checks[key] = check(sysm.name, cmd, ref_rows, ref_sum)
    for _ in range(runs):
        for sysm in systems:
            sysm.rates.append(steady(run_once(sysm.cmd)))
    def rate(name, shuffle):
        for sysm in systems:
            if sysm.name == name and sysm.shuffle == shuffle:
                return statistics.median(sysm.rates)
        return float("nan")
    lines = ["| system | sequential, M rows/s | shuffled (window 4), M rows/s | shuffled: gpufeed C (cache) / this | check |",
             "|---|---|---|---|---|"]
    names = []
    for sysm in systems:
        if sysm.name not in names:
            names.append(sysm.name)
    g_cache = rate("gpufeed C, cache", True)
    for n in names:
        a, b = rate(n, False), rate(n, True)
        ratio = "%.1fx" % (g_cache / b) if b == b else "-"
        lines.append("| %s | %s | %s | %s | %s |" % (n, "%.2f" % (a / 1e6) if a == a else "-", "%.2f" % (b / 1e6) if b == b else "- (no shuffle)",
                                                  ratio, checks.get((n, True), checks.get((n, False), ""))))
    t_dec = rate("PyTorch DataLoader, 2 workers", True)
    targets = [
        ("gpufeed shuffled from the cache / PyTorch DataLoader (2 workers) shuffled", g_cache / t_dec, 3.0),
        ("gpufeed shuffled on the decode path / PyTorch DataLoader (2 workers) shuffled", rate("gpufeed C, decode", True) / t_dec, 1.5),
    ]
    tl = ["| target | ratio | target |", "|---|---|---|"]
    for name, r, tgt in targets:
        tl.append("| %s | %.2f | >= %.1f %s |" % (name, r, tgt, "met" if r >= tgt else "NOT met"))
    cmds = ["    " + " ".join([shown(s.cmd[0])] + s.cmd[1:]) for s in systems]
    for d in (cache_c, cache_py):
        shutil.rmtree(d, ignore_errors=True)
    return lines, tl, cmds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench"))
    ap.add_argument("--only", default="shuffle,peers")
    ap.add_argument("--bin", default=None, help="another gpufeed-bench (e.g. the build before a change) instead of one built here")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    t0 = time.time()
    if a.bin:
        global BENCH
        BENCH = os.path.relpath(os.path.abspath(a.bin), ROOT)
    build(own_bench=not a.bin)
    path = ensure_data(a.out)
    rel = os.path.relpath(path, ROOT)
    print("# gpufeed: shuffled epochs, the tensor cache and its peers")
    print("# command: %s tools/bench/bench_peers.py %s" % (shown(PY), " ".join(sys.argv[1:])))
    print("# hardware: %s; %s at the start" % (hardware(), load_line()))
    print("# data: %s, %d rows x 32 columns as float32, row groups of 65,536, SNAPPY + dictionary (pyarrow defaults)" % (rel, ROWS))
    print("# every figure: the median over %d runs of each run's median steady-state epoch (epochs 1..)" % a.runs)
    if "shuffle" in a.only:
        lines, cmds, _ = fig_shuffle(rel, a.runs, a.epochs, os.path.relpath(a.out, ROOT))
        print("\n## Figure 5: shuffled against sequential epochs, worker scaling\n")
        print("\n".join(lines))
        print("\ncommands (interleaved, one run each per round):\n" + "\n".join(cmds))
    if "peers" in a.only:
        ref_rows, ref_sum = reference(path)
        lines, tl, cmds = fig_peers(rel, a.runs, a.epochs, os.path.relpath(a.out, ROOT), ref_rows, ref_sum)
        print("\n## Figure 6: the peers, same file, same batches (4,096 rows x 32 float32)\n")
        print("\n".join(lines))
        print()
        print("\n".join(tl))
        print("\ncommands:\n" + "\n".join(cmds))
    print("\n# %s at the end; total %.0f s" % (load_line(), time.time() - t0))


if __name__ == "__main__":
    main()
