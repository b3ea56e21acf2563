"""Benchmark: Parquet -> dense float32 matrix, gpufeed-dense against pyarrow + numpy.

    .venv/bin/python tools/bench/bench_dense.py [--bin build/gpufeed-dense] [--runs 5]
        [--rows 1000000] [--big-factor 10] [--out build/bench]

Writes (once, reused when present) into build/bench/:
  dense_1m_snappy.parquet  ROWS x 32 columns (8 each of float32, float64,
                           int32, int64; ~10% nulls in 8 of them), pyarrow
                           defaults: SNAPPY, dictionary, V1 pages
  dense_1m_plain.parquet   the same table, use_dictionary=False, compression NONE
  dense_10m_snappy.parquet BIG_FACTOR x the rows, SNAPPY (peak-RSS growth only)

Then, in the same run, median of --runs timed runs after one warm-up:
  gpufeed   `gpufeed-dense -o /dev/null FILE` (all 32 columns as f32,
            single-threaded); its own `seconds` figure (dataset open through
            the last batch written), and the process wall time. The CLI can
            only stream batches to a file, so the output goes to /dev/null:
            gpufeed never holds the whole matrix, pyarrow does.
  pyarrow   pq.read_table(path, use_threads=False), then
            np.stack([col.fill_null(0).to_numpy().astype(float32)], axis=1),
            in this process.
  codec floor  cramjam.snappy.decompress_raw_into over every compressed page
            body of the SNAPPY file (pages located with `gpufeed-inspect
            --pages`: body = offset + header .. + compressed), into
            preallocated buffers: the time the codec alone needs; timed
            right after each 1-thread gpufeed run on that file, so the
            ratio compares runs on the same machine state.
  peak RSS  each tool in a fresh process (ru_maxrss of the child), on the
            1x and the BIG_FACTOR x SNAPPY file. Before any run, every file
            is evicted from the page cache and read back once, so all are
            cached alike (a mapped file's resident pages depend on the
            cache's folio sizes, which depend on how the file got there).
  page cache  a diagnostic last: the SNAPPY file evicted and read back with
            read() (large folios on kernels that have them for the file
            system), gpufeed-dense and the floor timed again in turn, with
            the faults it takes to map the file once in either state.
Prints the table, the hardware, the load average and the command. See tools/bench/README.md.
"""
from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from bench_peers import load_line  # the load average, printed the same way

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NCOLS = 32
CHUNK = 1_000_000


def make_chunk(rng, n, start):
    cols = {}
    for i in range(8):
        v = rng.standard_normal(n).astype(np.float32)
        cols[f"f32_{i}"] = v
    for i in range(8):
        v = rng.standard_normal(n) * 1000.0
        if i % 2:
            v = np.round(v, 2)
        cols[f"f64_{i}"] = v
    for i in range(8):
        hi = 1000 if i < 4 else 2_000_000_000      # low cardinality (dictionary) and wide
        cols[f"i32_{i}"] = rng.integers(-hi, hi, n, dtype=np.int32)
    for i in range(8):
        if i < 4:
            cols[f"i64_{i}"] = rng.integers(0, 50_000, n, dtype=np.int64)
        else:
            cols[f"i64_{i}"] = np.arange(start, start + n, dtype=np.int64) * 7919 + rng.integers(0, 7919, n)
    arrays = {}
    for j, (k, v) in enumerate(cols.items()):
        if j % 4 == 1:  # 8 columns with ~10% nulls
            mask = rng.random(n) < 0.10
            arrays[k] = pa.array(v, mask=mask)
        else:
            arrays[k] = pa.array(v)
    return pa.table(arrays)


def generate(path, rows, seed, **kw):
    if os.path.exists(path) and pq.ParquetFile(path).metadata.num_rows == rows:
        return False
    tmp = path + ".tmp"
    rng = np.random.default_rng(seed)
    w = None
    done = 0
    while done < rows:
        n = min(CHUNK, rows - done)
        t = make_chunk(rng, n, done)
        if w is None:
            w = pq.ParquetWriter(tmp, t.schema, **kw)
        w.write_table(t, row_group_size=CHUNK)
        done += n
    w.close()
    os.replace(tmp, path)
    return True


# ------------------------------------------------------------------ measurements

def evict(path):
    """Drops the file's pages from the page cache."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def recache(binary, path):
    """Evicts the file from the page cache and reads it back once (through
    gpufeed-dense, mapped, as the measured runs read it)."""
    evict(path)
    run_gpufeed(binary, path)


def readback(path):
    """Evicts the file from the page cache and reads it back with read() in
    1 MiB pieces, as a copy or any other reader would: on kernels with large
    folios for the file system (Linux 6.18, ext4 here) the cache then holds
    it in large folios, where reading it in column-interleaved faults (as a
    mapped gpufeed-dense does) leaves small ones."""
    evict(path)
    fd = os.open(path, os.O_RDONLY)
    try:
        while os.read(fd, 1 << 20):
            pass
    finally:
        os.close(fd)


def map_faults(path):
    """Page faults this process takes to map every page of the file once
    (read-only mapping, one byte a page): how much of the file one fault
    maps, which depends on the page cache's folios."""
    import mmap
    import resource
    with open(path, "rb") as f:
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        r0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        s = 0
        for o in range(0, len(m), 4096):
            s += m[o]
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - r0, len(m)
    finally:
        m.close()


def run_gpufeed(binary, path, out="/dev/null", extra=()):
    t0 = time.perf_counter()
    p = subprocess.run([binary, *extra, "-o", out, path], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"gpufeed-dense failed: {p.stderr.strip()}")
    m = re.search(r"bytes read (\d+), seconds ([0-9.]+)", p.stderr)
    return float(m.group(2)), wall, int(m.group(1)), p.stderr.strip()


def pyarrow_dense(path, threads=False):
    t = pq.read_table(path, use_threads=threads)
    cols = [c.fill_null(0).to_numpy().astype(np.float32, copy=False) for c in t.columns]
    return np.stack(cols, axis=1)


def timed(fn, runs):
    fn()  # warm-up
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return ts


def snappy_pages(inspect, path):
    """[(body offset, compressed, uncompressed)] of every page of the file."""
    p = subprocess.run([inspect, "--pages", path], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"gpufeed-inspect failed: {p.stderr.strip()}")
    pages = []
    rx = re.compile(r"page \d+: (\w+)\s+offset (\d+), header (\d+), compressed (\d+), uncompressed (\d+)")
    for line in p.stdout.splitlines():
        m = rx.search(line)
        if m:
            kind, off, hdr, comp, unc = m.group(1), *map(int, m.groups()[1:])
            if kind not in ("DATA_PAGE", "DICTIONARY_PAGE"):
                raise SystemExit(f"unexpected page kind {kind} (V2 pages have uncompressed levels)")
            pages.append((off + hdr, comp, unc))
    return pages


def codec_floor(inspect, path):
    """The codec alone on every page of the file: (a function that
    decompresses them all once, pages, compressed bytes, uncompressed bytes)."""
    import cramjam
    pages = snappy_pages(inspect, path)
    data = open(path, "rb").read()
    bodies = [bytes(data[o:o + c]) for o, c, _ in pages]
    outs = [bytearray(u) for _, _, u in pages]
    # check: every body decompresses to its uncompressed size
    for b, o in zip(bodies, outs):
        n = cramjam.snappy.decompress_raw_into(b, o)
        if n != len(o):
            raise SystemExit(f"page decompressed to {n} bytes, header says {len(o)}")

    def go():
        for b, o in zip(bodies, outs):
            cramjam.snappy.decompress_raw_into(b, o)
    return go, len(pages), sum(c for _, c, _ in pages), sum(u for _, _, u in pages)


# Runs a command and prints its peak RSS. Measuring through this small
# launcher matters: a child forked straight from this (large) process would
# inherit its peak RSS across exec on Linux.
RSS_LAUNCHER = """
import resource, subprocess, sys
p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
sys.stderr.write(p.stderr.decode(errors="replace"))
print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.stdout.write(p.stdout.decode(errors="replace"))
"""


def child_maxrss(argv):
    """Peak RSS (bytes) of the command in a fresh process, and its stdout."""
    p = subprocess.run([sys.executable, "-S", "-c", RSS_LAUNCHER, *argv], capture_output=True, text=True)
    first, _, rest = p.stdout.partition("\n")
    rc, kb = map(int, first.split())
    if p.returncode != 0 or rc != 0:
        raise SystemExit(f"{argv[0]} failed: {p.stderr[-400:]}")
    return kb * 1024, rest


PYARROW_CHILD = """
import sys, resource, numpy as np, pyarrow.parquet as pq
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = pq.read_table(sys.argv[1], use_threads=False)
m = np.stack([c.fill_null(0).to_numpy().astype(np.float32, copy=False) for c in t.columns], axis=1)
print(base * 1024, m.shape[0])
"""


def fmt_s(x):
    return f"{x * 1000:.1f} ms" if x < 10 else f"{x:.2f} s"


def spread(ts):
    return f"{fmt_s(min(ts))}..{fmt_s(max(ts))}"


def mib(b):
    return f"{b / 2**20:.0f} MiB"


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "gpufeed-dense"))
    ap.add_argument("--inspect", default=os.path.join(ROOT, "build", "gpufeed-inspect"))
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench"))
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--big-factor", type=int, default=10, help="rows multiple of the RSS file (0: skip)")
    a = ap.parse_args()
    if a.runs < 1:
        raise SystemExit("--runs must be >= 1")
    for b in (a.bin, a.inspect):
        if not os.access(b, os.X_OK):
            raise SystemExit(f"{b} not built (make tools build/gpufeed-dense)")
    os.makedirs(a.out, exist_ok=True)
    t_start = time.time()
    tag = f"{a.rows // 1_000_000}m" if a.rows % 1_000_000 == 0 else str(a.rows)
    f_snappy = os.path.join(a.out, f"dense_{tag}_snappy.parquet")
    f_plain = os.path.join(a.out, f"dense_{tag}_plain.parquet")
    made = generate(f_snappy, a.rows, 1)
    made |= generate(f_plain, a.rows, 1, use_dictionary=False, compression="NONE")
    big_rows = a.rows * a.big_factor
    f_big = None
    if a.big_factor > 1:
        need = os.path.getsize(f_snappy) * a.big_factor * 1.2
        st = os.statvfs(a.out)
        if st.f_bavail * st.f_frsize > need + 2**30:
            btag = f"{big_rows // 1_000_000}m" if big_rows % 1_000_000 == 0 else str(big_rows)
            f_big = os.path.join(a.out, f"dense_{btag}_snappy.parquet")
            made |= generate(f_big, big_rows, 2)
        else:
            print(f"# not enough disk for the {a.big_factor}x file; RSS growth skipped")
    t_gen = time.time() - t_start
    # the same page cache for every file, however it was written: a mapped
    # file's resident pages depend on the size of the cache's folios, and a
    # file just written by pyarrow in 1M-row pieces is cached in other
    # pieces than one read back from disk (peak RSS of the same 10M-row
    # data: +13% written, +3% read back, against the 1M file read back)
    for path in (f_snappy, f_plain, f_big):
        if path:
            recache(a.bin, path)

    print("# gpufeed-dense vs pyarrow + numpy: Parquet -> dense float32 matrix")
    exe = os.path.relpath(sys.executable, ROOT) if sys.executable.startswith(ROOT) else "python3"
    print(f"# command: {exe} tools/bench/bench_dense.py {' '.join(sys.argv[1:])}".rstrip())
    print(f"# hardware: {hardware()}; {load_line()} at the start")
    print(f"# versions: pyarrow {pa.__version__}, numpy {np.__version__}, cramjam {__import__('cramjam').__version__}, "
          f"python {platform.python_version()}")
    print(f"# data: {a.rows} rows x {NCOLS} columns (8 x float32/float64/int32/int64, ~10% nulls in 8), "
          f"{'generated' if made else 'reused'} in {os.path.relpath(a.out, ROOT)}/ ({t_gen:.1f} s)")
    print(f"# median of {a.runs} runs after a warm-up; one thread, then all cores, on both sides; "
          f"gpufeed writes to /dev/null (the CLI streams batches), pyarrow builds the matrix in memory")

    # correctness sanity check (outside the timings): gpufeed's matrix == pyarrow's
    for path in (f_snappy, f_plain):
        out = os.path.join(a.out, "check.bin")
        run_gpufeed(a.bin, path, out)
        got = np.fromfile(out, np.float32)
        os.unlink(out)
        ref = pyarrow_dense(path)
        if got.size != ref.size or not np.array_equal(got.reshape(ref.shape), ref, equal_nan=True):
            raise SystemExit(f"gpufeed-dense output differs from pyarrow's matrix on {path}")

    rows = []
    res = {}
    ncpu = os.cpu_count() or 1
    # the codec floor is timed right after each 1-thread gpufeed run on the
    # SNAPPY file, so both see the same machine (a shared one drifts)
    floor_go, npages, comp, unc = codec_floor(a.inspect, f_snappy)
    floor_go()
    floor_ts, pair_ratios = [], []
    for label, path, tgt in (("SNAPPY + dictionary (pyarrow defaults)", f_snappy, 2.5), ("PLAIN, uncompressed", f_plain, 3.0)):
        for threads in (1, ncpu):
            gf_inner, gf_wall = [], []
            extra = ("--threads", str(threads)) if threads > 1 else ()
            run_gpufeed(a.bin, path, extra=extra)  # warm-up
            pa_ts = []
            pyarrow_dense(path, threads > 1)
            for _ in range(a.runs):  # interleaved: a busy machine hurts both alike
                s, w, nbytes, _ = run_gpufeed(a.bin, path, extra=extra)
                gf_inner.append(s)
                gf_wall.append(w)
                if path == f_snappy and threads == 1:
                    t0 = time.perf_counter()
                    floor_go()
                    floor_ts.append(time.perf_counter() - t0)
                    pair_ratios.append(s / floor_ts[-1])
                t0 = time.perf_counter()
                pyarrow_dense(path, threads > 1)
                pa_ts.append(time.perf_counter() - t0)
            g, gw, p = statistics.median(gf_inner), statistics.median(gf_wall), statistics.median(pa_ts)
            if threads == 1:
                res[path] = (g, gw, p, nbytes)
            out_b = a.rows * NCOLS * 4
            who = "1 thread each (gpufeed-dense, pyarrow use_threads=False)" if threads == 1 else \
                f"{threads} threads (gpufeed-dense --threads {threads}, pyarrow use_threads=True)"
            rows.append((f"{label}: Parquet -> f32 [{a.rows} x {NCOLS}], {who}",
                         f"{fmt_s(g)} ({spread(gf_inner)}; process {fmt_s(gw)}); {out_b / g / 1e9:.2f} GB/s out, "
                         f"{a.rows / g / 1e6:.1f} M rows/s",
                         f"{fmt_s(p)} ({spread(pa_ts)})",
                         f"{p / g:.2f}x faster (process wall: {p / gw:.2f}x)",
                         f">= {tgt:g}x faster: {'met' if p / g >= tgt else 'NOT met'}"))

    # diagnostic: one unit per row group (no unit boundary inside a page)
    rg_rows = pq.ParquetFile(f_snappy).metadata.row_group(0).num_rows
    extra = ("--unit-rows", str(rg_rows))
    run_gpufeed(a.bin, f_snappy, extra=extra)
    ur = [run_gpufeed(a.bin, f_snappy, extra=extra) for _ in range(a.runs)]
    ur_s = [x[0] for x in ur]
    g0, gbytes0 = res[f_snappy][0], res[f_snappy][3]
    rows.append((f"SNAPPY file, gpufeed --unit-rows {rg_rows} (1 unit per row group) vs default units",
                 f"{fmt_s(statistics.median(ur_s))} ({spread(ur_s)}); bytes read {ur[0][2] / 2**20:.0f} MiB",
                 f"default --unit-rows: {fmt_s(g0)}; bytes read {gbytes0 / 2**20:.0f} MiB "
                 f"(file {os.path.getsize(f_snappy) / 2**20:.0f} MiB)",
                 f"{g0 / statistics.median(ur_s):.2f}x", ""))

    fl = statistics.median(floor_ts)
    g = res[f_snappy][0]
    rows.append((f"SNAPPY file: decode vs codec floor ({npages} pages, {mib(comp)} -> {mib(unc)})",
                 f"{fmt_s(g)} (whole decode to f32)",
                 f"cramjam snappy alone {fmt_s(fl)} ({spread(floor_ts)}; {unc / fl / 1e9:.2f} GB/s)",
                 f"{g / fl:.2f}x the floor (run by run: {min(pair_ratios):.2f}..{max(pair_ratios):.2f}, median "
                 f"{statistics.median(pair_ratios):.2f})", f"<= 2x: {'met' if g / fl <= 2 else 'NOT met'}"))
    p_plain = res[f_plain][0]
    rows.append(("SNAPPY vs PLAIN file, gpufeed", f"{fmt_s(g)} vs {fmt_s(p_plain)}",
                 f"pyarrow {fmt_s(res[f_snappy][2])} vs {fmt_s(res[f_plain][2])}",
                 f"decompression + dictionary cost {fmt_s(g - p_plain)}", ""))

    # peak RSS, fresh processes
    py = [sys.executable, "-c", PYARROW_CHILD]
    gf_rss1, _ = child_maxrss([a.bin, "-o", "/dev/null", f_snappy])
    pa_rss1, out = child_maxrss(py + [f_snappy])
    pa_base = int(out.split()[0])
    big_note = ""
    if f_big:
        gf_rss2, _ = child_maxrss([a.bin, "-o", "/dev/null", f_big])
        avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        if pa_rss1 * a.big_factor * 1.3 < avail:
            pa_rss2, _ = child_maxrss(py + [f_big])
            pa_big = f"{mib(pa_rss2)} ({(pa_rss2 / pa_rss1 - 1) * 100:+.0f}%)"
        else:
            pa_big = "skipped (memory)"
        rows.append((f"peak RSS, {a.rows} rows (1x)", mib(gf_rss1),
                     f"{mib(pa_rss1)} (python + pyarrow import alone: {mib(pa_base)})",
                     f"{pa_rss1 / gf_rss1:.1f}x less", ""))
        rows.append((f"peak RSS, {big_rows} rows ({a.big_factor}x)",
                     f"{mib(gf_rss2)} ({(gf_rss2 / gf_rss1 - 1) * 100:+.1f}%)", pa_big,
                     f"growth {(gf_rss2 / gf_rss1 - 1) * 100:+.1f}%", "< 5% growth"))
    else:
        rows.append((f"peak RSS, {a.rows} rows", mib(gf_rss1), mib(pa_rss1), f"{pa_rss1 / gf_rss1:.1f}x less", ""))
        big_note = " (no larger file)"

    # diagnostic: the same SNAPPY file with the page cache as read() leaves
    # it (large folios on this kernel): the kernel maps the file in larger
    # pieces, and a fault maps a whole folio, so more of it stays resident
    nf0, flen = map_faults(f_snappy)
    readback(f_snappy)
    nf1, _ = map_faults(f_snappy)
    run_gpufeed(a.bin, f_snappy)  # warm-up
    lf_ts, lf_floor, lf_pairs = [], [], []
    for _ in range(a.runs):
        s = run_gpufeed(a.bin, f_snappy)[0]
        t0 = time.perf_counter()
        floor_go()
        lf_floor.append(time.perf_counter() - t0)
        lf_ts.append(s)
        lf_pairs.append(s / lf_floor[-1])
    lf_rss, _ = child_maxrss([a.bin, "-o", "/dev/null", f_snappy])
    recache(a.bin, f_snappy)  # back as the rows above measured it
    lg, lfl = statistics.median(lf_ts), statistics.median(lf_floor)
    rows.append(("SNAPPY file, page cache as read() leaves it (evicted, read back in 1 MiB pieces) instead of as "
                 "gpufeed-dense's own first read does: gpufeed-dense, 1 thread",
                 f"{fmt_s(lg)} ({spread(lf_ts)}); peak RSS {mib(lf_rss)}; faults to map the file once "
                 f"{nf1} ({flen / 1024 / max(nf1, 1):.0f} KiB each) against {nf0} ({flen / 1024 / max(nf0, 1):.0f} KiB) above",
                 f"cramjam snappy alone {fmt_s(lfl)} ({spread(lf_floor)})",
                 f"{lg / lfl:.2f}x the floor (run by run: {min(lf_pairs):.2f}..{max(lf_pairs):.2f}, median "
                 f"{statistics.median(lf_pairs):.2f}); {g / lg:.2f}x faster than above",
                 f"<= 2x: {'met' if lg / lfl <= 2 else 'NOT met'} (diagnostic)"))

    print()
    print("| figure | gpufeed | reference (same run) | ratio | target |")
    print("|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print()
    print(f"# {load_line()} at the end; total benchmark time {time.time() - t_start:.0f} s{big_note}")


if __name__ == "__main__":
    main()
