"""One Python input pipeline over a Parquet file, timed per epoch (a helper
of tools/bench/bench_peers.py; run in a fresh process per measurement).

    peers_py.py SYSTEM FILE --batch B --epochs E [--shuffle] [--workers N]
                [--cache DIR] [--check] [--window 4]

SYSTEM:
  gpufeed   tools/gpufeed.py (the Python binding): gpufeed.Loader over every
            numeric column as float32, CPU batches, read through numpy's
            DLPack import (no copy).
  torch     PyTorch DataLoader over a map-style Dataset of row groups (each
            item: one row group read with pyarrow, nulls filled with 0,
            np.stack'ed to float32 [rows, columns]); --workers N worker
            processes; the main process assembles batches of B rows (with
            --shuffle: row groups in a random order, rows permuted within
            windows of --window row groups, as gpufeed's shuffle_window).
  pyarrow   pyarrow.parquet.ParquetFile.iter_batches(batch_size=B), each
            record batch np.stack'ed to float32 (nulls 0); no shuffle.

Prints one line per epoch on stdout: `epoch E: R rows, S s` and, with
--check, `, sum V` (the sum of every value in float64: the same for every
system, whatever the order, so that nothing looks fast by dropping rows).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def numeric_columns(pf):
    import pyarrow as pa
    cols = []
    for f in pf.schema_arrow:
        t = f.type
        if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t):
            cols.append(f.name)
    return cols


def to_matrix(table, cols):
    return np.stack([table.column(c).fill_null(0).to_numpy().astype(np.float32, copy=False) for c in cols], axis=1)


def run_gpufeed(a):
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import gpufeed
    kw = dict(batch_rows=a.batch, workers=a.workers, seed=0, shuffle_window=a.window if a.shuffle else 0,
              epochs=a.epochs, device=None)
    if not a.shuffle:
        kw["unit_shuffle"] = False
    if a.cache:
        kw["cache_dir"] = a.cache
    loader = gpufeed.Loader(a.file, **kw)
    t0 = time.perf_counter()
    cur, rows, total = None, 0, 0.0
    for b in (b for _ in range(a.epochs) for b in loader):   # each iter() of the Loader is an epoch
        e = b.epoch
        if e != cur:
            if cur is not None:
                emit(cur, rows, last - t0, total, a.check)
                t0 = last
            cur, rows, total = e, 0, 0.0
        x = np.from_dlpack(b)
        rows += x.shape[0]
        if a.check:
            total += float(x.sum(dtype=np.float64))
        last = time.perf_counter()
    if cur is not None:
        emit(cur, rows, last - t0, total, a.check)
    loader.close()


def emit(e, rows, secs, total, check):
    line = f"epoch {e}: {rows} rows, {secs:.4f} s"
    if check:
        line += f", sum {total!r}"
    print(line, flush=True)


class RowGroups:
    """map-style Dataset: item i is row group i as a float32 matrix"""

    def __init__(self, path):
        self.path = path
        self.pf = None
        import pyarrow.parquet as pq
        pf = pq.ParquetFile(path)
        self.n = pf.num_row_groups
        self.cols = numeric_columns(pf)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        import pyarrow.parquet as pq
        import torch
        if self.pf is None:  # per worker process
            self.pf = pq.ParquetFile(self.path)
        return torch.from_numpy(to_matrix(self.pf.read_row_group(i, columns=self.cols), self.cols))


def batches_from(mats, batch, shuffle, window, rng):
    """rows of row-group matrices in windows of `window`, permuted when
    shuffling, cut into batches of `batch` rows (the tail of the epoch last)"""
    carry = None
    win = []
    def flush(win):
        m = np.concatenate(win) if len(win) > 1 else win[0]
        if shuffle:
            m = m[rng.permutation(m.shape[0])]
        return m
    for m in mats:
        win.append(m.numpy() if hasattr(m, "numpy") else m)
        if len(win) == (window if shuffle else 1):
            m = flush(win)
            win = []
            if carry is not None and carry.shape[0]:
                m = np.concatenate([carry, m])
            n = (m.shape[0] // batch) * batch
            for s in range(0, n, batch):
                yield m[s:s + batch]
            carry = m[n:]
    if win:
        m = flush(win)
        carry = m if carry is None else np.concatenate([carry, m])
    if carry is not None:
        for s in range(0, carry.shape[0], batch):
            yield carry[s:s + batch]


def run_torch(a):
    import torch
    from torch.utils.data import DataLoader
    torch.set_num_threads(1)
    ds = RowGroups(a.file)
    dl = DataLoader(ds, batch_size=None, shuffle=a.shuffle, num_workers=a.workers,
                    persistent_workers=a.workers > 0, generator=torch.Generator().manual_seed(0))
    rng = np.random.default_rng(0)
    for e in range(a.epochs):
        t0 = time.perf_counter()
        rows, total = 0, 0.0
        for x in batches_from(dl, a.batch, a.shuffle, a.window, rng):
            t = torch.from_numpy(x)
            rows += t.shape[0]
            if a.check:
                total += float(t.sum(dtype=torch.float64))
        emit(e, rows, time.perf_counter() - t0, total, a.check)


def run_pyarrow(a):
    import pyarrow.parquet as pq
    pf = pq.ParquetFile(a.file)
    cols = numeric_columns(pf)
    for e in range(a.epochs):
        t0 = time.perf_counter()
        rows, total = 0, 0.0
        for rb in pf.iter_batches(batch_size=a.batch, columns=cols):
            x = np.stack([rb.column(c).fill_null(0).to_numpy().astype(np.float32, copy=False) for c in cols], axis=1)
            rows += x.shape[0]
            if a.check:
                total += float(x.sum(dtype=np.float64))
        emit(e, rows, time.perf_counter() - t0, total, a.check)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("system", choices=["gpufeed", "torch", "pyarrow"])
    ap.add_argument("file")
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--shuffle", action="store_true")
    ap.add_argument("--window", type=int, default=4)
    ap.add_argument("--cache")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    {"gpufeed": run_gpufeed, "torch": run_torch, "pyarrow": run_pyarrow}[a.system](a)


if __name__ == "__main__":
    main()
