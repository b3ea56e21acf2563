"""Packed token sequences and mixtures: gpufeed against Hugging Face datasets
and litdata, the same data, one run, a table with the ratios.

    .venv/bin/python tools/bench/bench_tokens.py [--docs 100000] [--runs 3]

The data: --docs documents of --min to --max tokens (uniform; `--lengths
webtext`: log-normal with a mean about 400, capped at --max), token ids below
50,257, as list<int32> `input_ids` in 4 Parquet files written by pyarrow with
its defaults (SNAPPY, dictionaries, v1 pages), under build/bench-tokens/; a
second dataset of the same shape (another seed) for the mixture.

Every figure is one shuffled epoch of rows of T tokens (default 2048) packed
without padding, into host batches of --batch rows, 2 workers, timed from
the dataset's open to the epoch's end (nothing cached between runs: a
one-pass epoch), in tokens/s:
  - gpufeed: the Python binding, Feature(pack=T), shuffle_window 4, each
    batch's tokens taken as a torch tensor (torch.from_dlpack); and the C
    tool gpufeed-bench on the same files;
  - Hugging Face datasets: load_dataset("parquet") (its Arrow cache build
    reported on its own line), a batched map that concatenates the
    documents and cuts them every T (num_proc 2), shuffle, a torch
    DataLoader with 2 workers; the figure counts the map and the epoch;
  - litdata: optimize() with its TokensLoader (reported on its own line),
    then StreamingDataset(item_loader=TokensLoader(block_size=T),
    shuffle=True) through a StreamingDataLoader with 2 workers;
  - the floor: one core's memcpy of the same bytes (tools/bench/bench_memcpy.c);
  - a 3:1 mixture of the two datasets (gpufeed.Loader({a: 0.75, b: 0.25}))
    against the first alone, the same run; and in C (gpufeed-bench
    --mix a=0.75 --mix b=0.25 against gpufeed-bench a: the C tool's
    "packing:" rate: tokens over the time from the datasets' open on).
The peers run in their own venv (build/bench-tokens-venv, made on first use
from tools/bench/requirements-tokens.txt: datasets needs a newer pyarrow
than the test venv pins). --skip-peers leaves them out.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "build", "bench-tokens")
PEER_VENV = os.path.join(ROOT, "build", "bench-tokens-venv")
MEMCPY = os.path.join(ROOT, "build", "bench_memcpy")


def make_data(name, docs, lo, hi, lengths, seed):
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    d = os.path.join(DATA, "%s-%d-%d-%d-%s" % (name, docs, lo, hi, lengths))
    if os.path.exists(os.path.join(d, ".done")):
        return d
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(seed)
    if lengths == "webtext":
        n = np.clip(rng.lognormal(mean=5.5, sigma=0.9, size=docs), lo, hi).astype(np.int64)
    else:
        n = rng.integers(lo, hi + 1, docs)
    per = (docs + 3) // 4
    for k in range(4):
        ln = n[k * per:(k + 1) * per]
        offs = np.zeros(len(ln) + 1, dtype=np.int32)
        np.cumsum(ln, out=offs[1:])
        vals = rng.integers(0, 50257, int(offs[-1])).astype(np.int32)
        t = pa.table({"input_ids": pa.ListArray.from_arrays(pa.array(offs), pa.array(vals))})
        pq.write_table(t, os.path.join(d, "part-%d.parquet" % k))
    open(os.path.join(d, ".done"), "w").close()
    return d


def files(d):
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".parquet"))


# ---- gpufeed ------------------------------------------------------------------

GPUFEED_RUN = r"""
import sys, time, json
sys.path.insert(0, sys.argv[1])
import torch, gpufeed
paths, T, B, mix = json.loads(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "mix"
feats = [gpufeed.Feature("input_ids", dtype="int32", pack=T)]
gpufeed.load()          # the library (built on first use): not timed
t0 = time.perf_counter()
src = {paths[0]: 0.75, paths[1]: 0.25} if mix else paths[0]
lo = gpufeed.Loader(src, features=feats, batch_rows=B, workers=2, seed=1, shuffle_window=4, device=None)
tok = 0
chk = 0
for batch in lo:
    x = torch.from_dlpack(batch.feature(0))
    tok += x.numel()
    chk ^= int(x[0, 0])
dt = time.perf_counter() - t0
lo.close()
print(json.dumps({"tokens": tok, "seconds": dt}))
"""


def gpufeed_run(paths, T, B, mix=False):
    out = subprocess.run([sys.executable, "-c", GPUFEED_RUN, os.path.join(ROOT, "tools"), json.dumps(paths), str(T), str(B),
                          "mix" if mix else "one"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def gpufeed_bench(d, T, B, mix=None):
    bench = os.path.join(ROOT, "build", "gpufeed-bench")
    src = ["--mix", "%s=0.75" % d, "--mix", "%s=0.25" % mix] if mix else [d]
    p = subprocess.run([bench, "--feature", "input_ids:i32:pack=%d" % T, "--batch", str(B), "--workers", "2", "--seed", "1",
                        "--shuffle-window", "4"] + src, capture_output=True, text=True, check=True)
    for line in p.stderr.splitlines():
        if line.startswith("packing:"):
            parts = line.split(",")
            tokens = int(parts[1].split()[0])
            rate = float(parts[2].split()[0])
            return {"tokens": tokens, "seconds": tokens / rate}
    raise RuntimeError(p.stderr)


def memcpy_floor(nbytes, batch_bytes):
    if not os.path.exists(MEMCPY):
        subprocess.run(["cc", "-O2", "-std=c99", os.path.join(ROOT, "tools", "bench", "bench_memcpy.c"), "-o", MEMCPY], check=True)
    out = subprocess.run([MEMCPY, str(nbytes), str(batch_bytes), "1", "5"], capture_output=True, text=True, check=True).stdout
    return float(out.strip().splitlines()[-1].split()[1]) * 1e9      # "median X GB/s"


# ---- peers (their own venv) -------------------------------------------------------

HF_RUN = r"""
import sys, time, json, os
files, T, B, cache = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
os.environ["HF_DATASETS_CACHE"] = cache
import datasets, torch
datasets.disable_progress_bars()
t0 = time.perf_counter()
ds = datasets.load_dataset("parquet", data_files=files, split="train", cache_dir=cache)
t1 = time.perf_counter()
def group(batch):
    ids = [t for d in batch["input_ids"] if d for t in d]
    n = len(ids) // T * T
    return {"input_ids": [ids[i:i + T] for i in range(0, n, T)]}
packed = ds.map(group, batched=True, batch_size=1000, num_proc=2, remove_columns=ds.column_names)
packed = packed.shuffle(seed=1).with_format("torch")
t2 = time.perf_counter()
dl = torch.utils.data.DataLoader(packed, batch_size=B, num_workers=2)
tok = 0
for b in dl:
    tok += b["input_ids"].numel()
t3 = time.perf_counter()
print(json.dumps({"cache_build": t1 - t0, "map": t2 - t1, "epoch": t3 - t2, "tokens": tok}))
"""

LITDATA_RUN = r"""
import sys, time, json, os
files, T, B, out = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
import numpy as np, pyarrow.parquet as pq, torch
from litdata import optimize, StreamingDataset, StreamingDataLoader
from litdata.streaming.item_loader import TokensLoader

def docs(path):
    for d in pq.read_table(path).column("input_ids").to_pylist():
        if d:
            yield torch.tensor(d, dtype=torch.int32)

if __name__ == "__main__":
    t0 = time.perf_counter()
    optimize(fn=docs, inputs=files, output_dir=out, chunk_bytes="64MB", item_loader=TokensLoader(), num_workers=2, verbose=False)
    t1 = time.perf_counter()
    ds = StreamingDataset(out, item_loader=TokensLoader(block_size=T), shuffle=True, seed=1)
    dl = StreamingDataLoader(ds, batch_size=B, num_workers=2)
    tok = 0
    for b in dl:
        tok += b.numel()
    t2 = time.perf_counter()
    print(json.dumps({"optimize": t1 - t0, "epoch": t2 - t1, "tokens": tok}))
"""


def peer_python():
    py = os.path.join(PEER_VENV, "bin", "python")
    if not os.path.exists(py):
        print("making %s (the peers' venv, tools/bench/requirements-tokens.txt): minutes, once" % PEER_VENV, file=sys.stderr)
        subprocess.run(["python3", "-m", "venv", PEER_VENV], check=True)
        subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", "-r",
                        os.path.join(ROOT, "tools", "bench", "requirements-tokens.txt")], check=True)
    return py


def peer(script, args):
    with tempfile.TemporaryDirectory(prefix="gpufeed-bench-tokens-") as tmp:
        path = os.path.join(tmp, "run.py")
        with open(path, "w") as f:
            f.write(script)
        out = subprocess.run([peer_python(), path] + args + [os.path.join(tmp, "out")], capture_output=True, text=True, cwd=tmp)
        if out.returncode:
            raise RuntimeError(out.stderr[-2000:])
        return json.loads(out.stdout.strip().splitlines()[-1])


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=100000)
    ap.add_argument("--min", type=int, default=10)
    ap.add_argument("--max", type=int, default=2000)
    ap.add_argument("--lengths", choices=("uniform", "webtext"), default="uniform")
    ap.add_argument("--T", type=int, default=2048)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--skip-peers", action="store_true")
    args = ap.parse_args()
    a = make_data("a", args.docs, args.min, args.max, args.lengths, 1)
    b = make_data("b", args.docs, args.min, args.max, args.lengths, 2)
    T, B = args.T, args.batch
    tokens = None

    def med(fn):
        rs = [fn() for _ in range(args.runs)]
        rates = [r["tokens"] / r["seconds"] for r in rs]
        return statistics.median(rates), min(rates), max(rates), rs[0]["tokens"]

    g, glo, ghi, tokens = med(lambda: gpufeed_run([a, b], T, B))
    c, clo, chi, _ = med(lambda: gpufeed_bench(a, T, B))
    cm, cmlo, cmhi, _ = med(lambda: gpufeed_bench(a, T, B, mix=b))
    m, mlo, mhi, _ = med(lambda: gpufeed_run([a, b], T, B, mix=True))
    floor = memcpy_floor(tokens * 4, B * T * 4) / 4
    rows = []
    rows.append(("gpufeed (Python, torch tensors): shuffled packed epoch", "%.1f M tokens/s (%.1f-%.1f)" % (g / 1e6, glo / 1e6, ghi / 1e6)))
    rows.append(("gpufeed-bench (C): the same epoch", "%.1f M tokens/s (%.1f-%.1f)" % (c / 1e6, clo / 1e6, chi / 1e6)))
    peers = {}
    if not args.skip_peers:
        for name, fn in (("datasets", lambda: peer(HF_RUN, [json.dumps(files(a)), str(T), str(B)])),
                         ("litdata", lambda: peer(LITDATA_RUN, [json.dumps(files(a)), str(T), str(B)]))):
            try:
                peers[name] = fn()
            except Exception as e:   # a peer that cannot run is said so, not faked
                peers[name] = {"error": str(e).strip().splitlines()[-1] if str(e).strip() else repr(e)}
    print()
    print("## packed tokens: %d documents of %d-%d tokens (%s), T=%d, batches of %d rows, 2 workers, %d runs" %
          (args.docs, args.min, args.max, args.lengths, T, B, args.runs))
    print("%s, %d cores, %s, %s" % (cpu_name(), os.cpu_count() or 0, platform.system() + " " + platform.release(), time.strftime("%Y-%m-%d")))
    print()
    print("| figure | gpufeed | reference | ratio |")
    print("|---|---|---|---|")
    best = 0.0
    for name, r in peers.items():
        if "error" in r:
            print("| shuffled packed epoch vs %s | %.1f M tokens/s | could not run: %s | - |" % (name, g / 1e6, r["error"][:120]))
            continue
        secs = r["epoch"] + r.get("map", 0.0)
        rate = r["tokens"] / secs
        best = max(best, rate)
        what = "map + epoch" if "map" in r else "epoch"
        print("| shuffled packed epoch vs %s (%s) | %.1f M tokens/s | %.2f M tokens/s | **%.1fx** |" % (name, what, g / 1e6, rate / 1e6, g / rate))
    if best:
        print("| ... vs the best peer | %.1f M tokens/s | %.2f M tokens/s | **%.1fx** (target >= 5) |" % (g / 1e6, best / 1e6, g / best))
    print("| gpufeed-bench (C) vs one core's memcpy of the same bytes | %.1f M tokens/s | %.1f M tokens/s (%.2f GB/s) | **%.2f** (target >= 0.3) |"
          % (c / 1e6, floor / 1e6, floor * 4 / 1e9, c / floor))
    print("| gpufeed (Python) vs memcpy | %.1f M tokens/s | %.1f M tokens/s | **%.2f** |" % (g / 1e6, floor / 1e6, g / floor))
    print("| a 3:1 mixture vs the first dataset alone | %.1f M tokens/s (%.1f-%.1f) | %.1f M tokens/s | **%.2f** (target >= 0.9) |"
          % (m / 1e6, mlo / 1e6, mhi / 1e6, g / 1e6, m / g))
    print("| the same in C (gpufeed-bench --mix) | %.1f M tokens/s (%.1f-%.1f) | %.1f M tokens/s | **%.2f** |"
          % (cm / 1e6, cmlo / 1e6, cmhi / 1e6, c / 1e6, cm / c))
    for name, r in peers.items():
        if "error" in r:
            continue
        if "cache_build" in r:
            print("\n%s: load_dataset's Arrow cache build %.1f s, the packing map %.1f s, the epoch %.1f s (%d tokens)" %
                  (name, r["cache_build"], r["map"], r["epoch"], r["tokens"]))
        if "optimize" in r:
            print("%s: optimize() %.1f s, the epoch %.1f s (%d tokens)" % (name, r["optimize"], r["epoch"], r["tokens"]))
    print("\ntokens an epoch: gpufeed %d (each epoch's last partial row left out)" % tokens)


if __name__ == "__main__":
    main()
