#!/usr/bin/env python3
"""torchrun_ranks.py -- data-parallel training (DDP) fed by gpufeed's ranks.

    torchrun --nproc_per_node=2 examples/torchrun_ranks.py [PATH] [--epochs N] [--global-batch G]
             [--features A,B,...] [--label C] [--cpu] [--dump DIR]

Every process opens the same Loader; gpufeed reads RANK and WORLD_SIZE
(torchrun sets them; SLURM_PROCID/SLURM_NTASKS and Open MPI's variables
work too), so nothing rank-specific is passed. Elastic mode
(global_batch_rows=G): global batch k of an epoch is the same G rows in
the same order for any world that divides G, each rank gets its G / world
of them, every rank has the same number of batches, and only the epoch's
last partial global batch (fewer than G rows) is left out. Per-world mode
(the default without global_batch_rows) splits by units instead; on this
file (row groups of 65,536 and 9,096 rows) two ranks' shards would differ
by 17% of the rows, which the Loader refuses with a message naming the
loss rather than drop them.

At the end the ranks compare notes (all_gather over gloo, or NCCL on
GPUs): the same batch count each epoch, and rows that are disjoint and,
with the left-out ones, the whole file (epoch 0, against the rows one
process reads alone). --dump DIR writes each rank's first feature, row by
row, an epoch a line (tests/test_python_examples.py checks them).
"""
import argparse
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

import gpufeed  # noqa: E402


def row_keys(x, y):
    """each row's bytes (features, then label), sorted: a multiset of rows"""
    m = torch.cat([x, y.reshape(-1, 1)], 1).contiguous().cpu().numpy()
    return sorted(m[i].tobytes() for i in range(m.shape[0]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", nargs="?", default=os.path.join(HERE, "data", "flights.parquet"))
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--global-batch", type=int, default=8192, help="rows of a global batch (all ranks together)")
    ap.add_argument("--features", default="dep_delay,distance,air_time,hour,month")
    ap.add_argument("--label", default="arr_delay")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--cpu", action="store_true", help="CPU batches and gloo even when GPUs are there")
    ap.add_argument("--dump", help="write each rank's first feature here (rank<r>.txt, an epoch a line)")
    args = ap.parse_args()

    gpu = not args.cpu and torch.cuda.is_available()
    local = int(os.environ.get("LOCAL_RANK", "0"))
    dist.init_process_group("nccl" if gpu else "gloo")
    dev = torch.device("cuda", local) if gpu else torch.device("cpu")
    if gpu:
        torch.cuda.set_device(dev)
    names = args.features.split(",")
    features = [gpufeed.Feature(c, "float32") for c in names] + [gpufeed.Feature(args.label, "float32")]
    loader = gpufeed.Loader(args.path, features=features, label=args.label, global_batch_rows=args.global_batch,
                            workers=args.workers, seed=0, shuffle_window=4, device=local if gpu else None)
    rank, world = loader.rank, loader.world     # from RANK / WORLD_SIZE
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(
        torch.nn.Sequential(torch.nn.Linear(len(names), 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)).to(dev))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    counts, dumped, keys = [], [], []
    for epoch in range(args.epochs):
        total = n = 0
        firsts = []
        for x, y in loader:
            if epoch == 0:
                keys.extend(row_keys(x, y))
            firsts.append(x[:, 0].clone().cpu())
            pred = model(x / 100.0).squeeze(1)
            loss = ((pred - y / 100.0) ** 2).mean()
            opt.zero_grad()
            loss.backward()            # DDP averages the gradients over the ranks
            opt.step()
            total += loss.item()
            n += 1
        counts.append(n)
        dumped.append(torch.cat(firsts) if firsts else torch.empty(0))
        print("rank %d of %d (%s): epoch %d, %d batches of %d rows, loss %.4f"
              % (rank, world, loader.rank_source, epoch, n, loader.batch_rows, total / max(n, 1)), flush=True)
    stats = loader.stats()
    loader.close()

    # the ranks' notes: batch counts, and epoch 0's rows against one process's reading
    every = [None] * world
    dist.all_gather_object(every, (counts, keys))
    if rank == 0:
        same = all(c == every[0][0] for c, _ in every)
        alone = gpufeed.Loader(args.path, features=features, label=args.label, batch_rows=4096, rank=0, world=1,
                               device=None)
        ref = []
        for x, y in alone:
            ref.extend(row_keys(x, y))
        alone.close()
        got = sorted(k for _, ks in every for k in ks)
        left = len(ref) - len(got)
        from collections import Counter
        extra = Counter(got) - Counter(ref)
        ok = same and not extra and left == stats["epoch_rows_dropped"] and 0 <= left < args.global_batch
        print("ranks: batches an epoch %s; epoch 0: %d rows from %d ranks, none twice, %d left out (the last partial "
              "global batch; stats()['epoch_rows_dropped'] %d): %s" % ([c for c, _ in every], len(got), world, left,
                                                                      stats["epoch_rows_dropped"], "ok" if ok else "NOT OK"),
              flush=True)
    if args.dump:
        os.makedirs(args.dump, exist_ok=True)
        with open(os.path.join(args.dump, "rank%d.txt" % rank), "w") as f:
            for d in dumped:
                f.write(" ".join("%.17g" % v for v in d.tolist()) + "\n")
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0 and not ok:
        sys.exit(1)


if __name__ == "__main__":
    warnings.filterwarnings("ignore", category=UserWarning, module="torch.distributed")
    main()
