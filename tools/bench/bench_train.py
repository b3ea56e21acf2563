"""A PyTorch training loop fed by gpufeed, by PyTorch's DataLoader, and by data
already on the GPU (the floor): how much of the GPU's own speed each input
pipeline leaves the trainer.

    python3 tools/bench/bench_train.py [--rows 2097152] [--batches 16384,2048]
        [--epochs 3] [--hidden 2048] [--workers N] [--torch-workers N]
        [--configs floor,cache,decode,dataloader] [--out build/bench] [--cpu]

Needs a GPU, torch, numpy and pyarrow (no CuPy, no nvcc: gpufeed comes in
through its Python binding, tools/gpufeed.py, whose library is built with the
C compiler and loads the CUDA driver). Without a GPU it prints "no GPU:
nothing measured (<why>)" and exits 0; --cpu runs the same loops on the CPU
(CPU batches; a check of the script, not a figure).

The data: tools/bench/bench_gpu.py's file (build/bench/gpu_2m_snappy.parquet,
--rows x 32 columns of four types, SNAPPY, row groups of 262,144 rows), every
column read as float32 (nulls as 0), written first if absent.

The model: a bf16 MLP, 32 -> hidden -> hidden -> 1 (ReLU), SGD with momentum,
on a regression target that is a fixed linear function of the standardized
inputs (so the loss falls); each step standardizes the batch, runs forward,
backward and the optimizer step on torch's current stream.

Per batch size, each configuration runs 1 warm-up epoch and then --epochs
measured epochs, shuffled:
  floor       the whole matrix on the GPU; each epoch one shuffled copy of
              it (torch.randperm, one gather), then a slice per batch (no
              input pipeline at all)
  cache       gpufeed.Loader(..., cache_dir, shuffle_window=4, device=0):
              the warm-up epoch decodes and writes the tensor cache, the
              measured ones read it; torch.from_dlpack(batch) per step
  decode      the same without a cache: every epoch decodes Parquet
  dataloader  torch.utils.data.DataLoader over a map-style Dataset whose
              item is one row group read with pyarrow (read_row_groups ->
              fill_null(0) -> numpy float32), cut into batches;
              shuffle=True, --torch-workers worker processes, pin_memory,
              .cuda(non_blocking=True) per batch
Figures: samples/s over the measured epochs (torch.cuda.synchronize() at
both ends), and that rate as a share of the floor's: the floor does only
the GPU's work, so the share is how busy the GPU stays against it.
Prints one table with the GPU, driver, versions, date and command; writes it
to build/bench/train_report.md.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools"))


def gpu_info():
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                           capture_output=True, text=True)
        return r.stdout.strip().splitlines()[0] if r.returncode == 0 and r.stdout.strip() else "?"
    except OSError:
        return "?"


class Trainer:
    """The bf16 MLP and its step; the same for every configuration."""

    def __init__(self, torch, dev, ncols, hidden, mean, std, seed=0):
        self.torch = torch
        g = torch.Generator(device="cpu").manual_seed(seed)
        self.w_true = (torch.randn(ncols, 1, generator=g) / ncols ** 0.5).to(dev)
        self.mean, self.std = mean, std
        nn = torch.nn
        self.model = nn.Sequential(nn.Linear(ncols, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                   nn.Linear(hidden, 1)).to(dev, dtype=torch.bfloat16)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=1e-3, momentum=0.9)
        self.loss_sum = torch.zeros((), device=dev, dtype=torch.float32)
        self.steps = 0

    def step(self, x):
        torch = self.torch
        z = (x - self.mean) / self.std
        y = z @ self.w_true
        out = self.model(z.to(torch.bfloat16))
        loss = torch.nn.functional.mse_loss(out.float(), y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self.loss_sum += loss.detach()
        self.steps += 1

    def mean_loss(self):
        v = float(self.loss_sum) / max(1, self.steps)
        self.loss_sum.zero_()
        self.steps = 0
        return v


def timed_epochs(sync, epochs_iter, trainer, epochs):
    """Runs the warm-up epoch, then times `epochs` epochs: (samples/s, losses)."""
    it = iter(epochs_iter)
    for x in next(it):
        trainer.step(x)
    warm_loss = trainer.mean_loss()
    sync()
    t0 = time.perf_counter()
    n = 0
    for _ in range(epochs):
        for x in next(it):
            trainer.step(x)
            n += x.shape[0]
    sync()
    dt = time.perf_counter() - t0
    return n / dt, (warm_loss, trainer.mean_loss()), n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=2097152)
    ap.add_argument("--batches", default="16384,2048")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) - 1), help="gpufeed decode workers")
    ap.add_argument("--torch-workers", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    ap.add_argument("--configs", default="floor,cache,decode,dataloader")
    ap.add_argument("--out", default="build/bench")
    ap.add_argument("--cpu", action="store_true", help="run on the CPU: checks the script, measures nothing")
    args = ap.parse_args()
    configs = [c for c in args.configs.split(",") if c]
    cmdline = "python3 tools/bench/bench_train.py" + "".join(" " + shlex.quote(a) for a in sys.argv[1:])
    try:
        import torch
    except ImportError:
        print("no GPU: nothing measured (torch is not installed)")
        return 0
    if not torch.cuda.is_available() and not args.cpu:
        print("no GPU: nothing measured (torch.cuda.is_available() is False)")
        return 0
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    import bench_gpu
    import gpufeed

    out_dir = os.path.join(ROOT, args.out)
    path = os.path.join(out_dir, "gpu_2m_snappy.parquet")
    bench_gpu.ensure_dataset(path, args.rows)
    cols = [f.name for f in pq.read_schema(path)]
    mat = bench_gpu.table_to_matrix(pq.read_table(path, columns=cols), cols)
    dev = torch.device("cpu") if args.cpu else torch.device("cuda", 0)
    sync = (lambda: None) if args.cpu else torch.cuda.synchronize
    full = torch.from_numpy(mat).to(dev)
    mean, std = full.mean(0), full.std(0) + 1e-6
    N = full.shape[0]
    ok, why = gpufeed.cuda_available(0)
    ok = ok and not args.cpu
    print(f"gpufeed: {'GPU batches through the CUDA driver' if ok else 'no GPU batches: ' + why}", flush=True)

    results = []
    for B in [int(b) for b in args.batches.split(",") if b]:
        for cfg in configs:
            trainer = Trainer(torch, dev, len(cols), args.hidden, mean, std)
            note = ""
            if cfg == "floor":
                def epochs_gen():
                    while True:   # one shuffle of the whole matrix an epoch, then slices: the least GPU work there is
                        shuffled = full[torch.randperm(N, device=dev)]
                        yield (shuffled[k:k + B] for k in range(0, N, B))
                rate, losses, n = timed_epochs(sync, epochs_gen(), trainer, args.epochs)
            elif cfg in ("cache", "decode"):
                cache = os.path.join(out_dir, f"train-cache-{B}") if cfg == "cache" else None
                feats = [gpufeed.Feature(c, "float32") for c in cols]
                L = gpufeed.Loader(path, features=feats, batch_rows=B, workers=args.workers, seed=1, shuffle_window=4,
                                   epochs=1 + args.epochs, cache_dir=cache, device=0 if ok else None)

                def epochs_gen(L=L):
                    while True:   # each iter() of the Loader is an epoch
                        yield (torch.from_dlpack(b).to(dev, non_blocking=True) for b in L)
                rate, losses, n = timed_epochs(sync, epochs_gen(), trainer, args.epochs)
                L.close()
                note = "on the GPU" if ok else "CPU batches + .cuda()"
            else:
                DS = bench_gpu.make_dataset_class(torch)
                ds = DS(path, B, cols, False)
                dl = torch.utils.data.DataLoader(ds, batch_size=None, shuffle=True, num_workers=args.torch_workers,
                                                 pin_memory=not args.cpu, persistent_workers=True, prefetch_factor=4)

                def epochs_gen(dl=dl):
                    while True:
                        yield (t.to(dev, non_blocking=True) for item in dl for t in item)
                rate, losses, n = timed_epochs(sync, epochs_gen(), trainer, args.epochs)
                del dl
                note = f"{args.torch_workers} workers, pinned"
            results.append({"batch": B, "config": cfg, "rate": rate, "loss": losses, "note": note})
            print(f"batch {B}, {cfg}: {rate / 1e6:.2f} M samples/s, loss {losses[0]:.4f} -> {losses[1]:.4f}", flush=True)

    lines = ["# gpufeed in a PyTorch training loop (bf16 MLP)", "",
             f"- date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
             f"- GPU: {gpu_info()}; torch {torch.__version__} (CUDA {torch.version.cuda}), numpy {np.__version__}, "
             f"pyarrow {pa.__version__}, Python {platform.python_version()}, {os.cpu_count()} cores",
             f"- command: `{cmdline}`",
             f"- model: 32 -> {args.hidden} -> {args.hidden} -> 1, bf16, SGD; {N} rows, {args.epochs} measured epochs "
             f"after 1 warm-up; gpufeed {args.workers} workers", "",
             "| batch | input | samples/s | of the floor (GPU busy) | loss, warm-up -> measured | note |",
             "|---|---|---|---|---|---|"]
    for r in results:
        floor = next((f["rate"] for f in results if f["batch"] == r["batch"] and f["config"] == "floor"), 0)
        share = f"{100 * r['rate'] / floor:.1f}%" if floor else "-"
        lines.append(f"| {r['batch']} | {r['config']} | {r['rate'] / 1e6:.2f} M | {share} | {r['loss'][0]:.4f} -> {r['loss'][1]:.4f} | "
                     f"{r['note']} |")
    text = "\n".join(lines)
    print()
    print(text)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "train_report.md"), "w") as f:
        f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
