#!/usr/bin/env python3
"""The Python examples, run on the CPU as a user runs them.

    .venv/bin/python tests/test_python_examples.py

  lightning   examples/lightning_train.py: Lightning's fit over the Loader
              as it is (an IterableDataset with len): 3 epochs of all
              336,776 rows (83 batches), the loader's epochs 0, 1, 2, the
              loss going down; a checkpoint after 2 epochs and --resume to 3
              trains the loader's epoch 2 with the uninterrupted run's loss
  torchrun    examples/torchrun_ranks.py under `torchrun --standalone
              --nproc_per_node=2`: ranks from RANK/WORLD_SIZE, equal batch
              counts, its own check of disjoint and complete shards; then
              on a file of unique ids in row groups of three sizes, each
              rank's dumped ids: disjoint, the same count each epoch, and
              with fewer than a global batch left out, every id
  packed_lm   examples/pytorch_packed_lm.py: a tiny causal LM on packed
              rows with document-masked attention learns (its loss falls
              below 0.6 x the first epoch's; its own check), every epoch
              the same batches, the tokens left over printed
Prints "N passed, N failed" last.
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = sys.executable
PASS = FAIL = 0


def check(name, cond, detail=""):
    global PASS, FAIL
    if cond:
        PASS += 1
        print("PASS " + name)
    else:
        FAIL += 1
        print("FAIL " + name + ((": " + detail) if detail else ""))


def run(args, timeout=600):
    env = dict(os.environ)
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(k, None)
    r = subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)
    return r.returncode, r.stdout, r.stderr


EPOCH = re.compile(r"^epoch (\d+): loss ([0-9.]+) over (\d+) rows, (\d+) batches \(the loader's epoch (\d+)\)$")


def lightning_epochs(out):
    return [(int(m.group(1)), float(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)))
            for m in (EPOCH.match(l) for l in out.splitlines()) if m]


def test_lightning():
    ex = os.path.join(ROOT, "examples", "lightning_train.py")
    rc, out, err = run([PY, ex, "--epochs", "3", "--cpu"])
    eps = lightning_epochs(out)
    check("examples/lightning_train.py --epochs 3: 3 epochs of 336776 rows in 83 batches, the loader's epochs 0-2, "
          "loss %s" % " -> ".join("%.3f" % e[1] for e in eps),
          rc == 0 and [e[0] for e in eps] == [0, 1, 2] and [e[4] for e in eps] == [0, 1, 2]
          and all(e[2] == 336776 and e[3] == 83 for e in eps) and eps[2][1] < eps[0][1], err[-500:])
    with tempfile.TemporaryDirectory() as td:
        ck = os.path.join(td, "two.ckpt")
        rc2, out2, err2 = run([PY, ex, "--epochs", "2", "--cpu", "--checkpoint", ck])
        rc3, out3, err3 = run([PY, ex, "--epochs", "3", "--cpu", "--resume", ck])
    first, resumed = lightning_epochs(out2), lightning_epochs(out3)
    check("a checkpoint after 2 epochs, --resume to 3: the loader's epoch 2 only, with the uninterrupted run's loss (%s)"
          % (resumed[:1] and "%.6f" % resumed[0][1]),
          rc2 == rc3 == 0 and first == eps[:2] and len(resumed) == 1 and resumed[0][0] == 2 and resumed[0][4] == 2
          and resumed[0][1] == eps[2][1], (err2 + err3)[-500:])


def torchrun(args, timeout=600):
    return run([PY, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
                os.path.join(ROOT, "examples", "torchrun_ranks.py"), "--cpu"] + args, timeout)


def test_packed_lm():
    rc, out, err = run([PY, os.path.join(ROOT, "examples", "pytorch_packed_lm.py")])
    epochs = re.findall(r"epoch (\d+): loss ([0-9.]+), (\d+) batches of 16 x 64 tokens, (\d+) tokens left over", out)
    check("pytorch_packed_lm.py: 2 epochs of packed rows, the same batch count, the loss falling (%s)" % (out.strip().splitlines() or [""])[-1],
          rc == 0 and len(epochs) == 2 and epochs[0][2] == epochs[1][2] and "learned" in out, out[-400:] + err[-400:])


def test_torchrun():
    rc, out, err = torchrun([])
    # two processes share the pipe: a line may be cut by the other's output, so the lines are found anywhere
    counts = dict(((int(m.group(1)), int(m.group(2))), int(m.group(3))) for m in
                  re.finditer(r"rank (\d) of 2 \(RANK/WORLD_SIZE\): epoch (\d+), (\d+) batches", out))
    ok_line = [l for l in out.splitlines() if l.startswith("ranks: ")]
    if len(counts) < 4:  # a rank's line cut inside by the other's: rank 0's gathered counts ([rank][epoch])
        m = re.search(r"ranks: batches an epoch \[\[(\d+), (\d+)\], \[(\d+), (\d+)\]\]", out)
        if m:
            counts = {(0, 0): int(m.group(1)), (0, 1): int(m.group(2)), (1, 0): int(m.group(3)), (1, 1): int(m.group(4))}
    check("torchrun --nproc_per_node=2 examples/torchrun_ranks.py: ranks 0 and 1 of 2 from RANK/WORLD_SIZE, equal batch "
          "counts each epoch (%s)" % sorted(counts.items()), rc == 0 and len(counts) == 4
          and counts[(0, 0)] == counts[(1, 0)] == counts[(0, 1)] == counts[(1, 1)] > 0, (out + err)[-600:])
    check("... its own check: epoch 0's rows from both ranks none twice, the rest left out is the last partial global batch "
          "(%s)" % (ok_line[:1] or [""])[0][:120], ok_line and ok_line[0].endswith(": ok"), (out + err)[-600:])

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    n, G = 87000, 4000
    with tempfile.TemporaryDirectory() as td:
        path, dump = os.path.join(td, "ids.parquet"), os.path.join(td, "dump")
        w = pq.ParquetWriter(path, pa.schema([("id", pa.float32()), ("v", pa.float32()), ("w", pa.float32())]))
        start = 0
        for size in (50000, 30000, 7000):          # row groups of three sizes
            ids = np.arange(start, start + size, dtype=np.float32)
            w.write_table(pa.table({"id": ids, "v": ids * 0.5, "w": ids * 0.25}))
            start += size
        w.close()
        rc, out, err = torchrun([path, "--features", "id,v", "--label", "w", "--global-batch", str(G), "--epochs", "2",
                                 "--dump", dump])
        ranks = []
        for r in range(2):
            try:
                with open(os.path.join(dump, "rank%d.txt" % r)) as f:
                    ranks.append([[int(float(v)) for v in l.split()] for l in f])
            except OSError:
                ranks.append([])
    good = rc == 0 and all(len(r) == 2 for r in ranks)
    detail = (out + err)[-600:]
    for e in range(2):
        if not good:
            break
        a, b = ranks[0][e], ranks[1][e]
        left = n - len(a) - len(b)
        check("epoch %d of %d unique ids in row groups of 50000, 30000 and 7000 rows: ranks' ids disjoint, the same count "
              "(%d), every id but %d (< a global batch of %d)" % (e, n, len(a), left, G),
              len(a) == len(b) and not (set(a) & set(b)) and len(set(a)) == len(a) and set(a) | set(b) <= set(range(n))
              and 0 <= left < G, "counts %d %d" % (len(a), len(b)))
    if not good:
        check("torchrun over the ids file ran and dumped both ranks", False, detail)


def main():
    for t in (test_lightning, test_torchrun, test_packed_lm):
        try:
            t()
        except Exception as e:  # a crash in one test is a failure, not the end
            import traceback
            traceback.print_exc()
            check("test raised %s" % type(e).__name__, False, str(e))
    print("%d passed, %d failed" % (PASS, FAIL))
    return 1 if FAIL else 0


if __name__ == "__main__":
    sys.exit(main())
