"""Benchmark: source bytes each rank reads in elastic mode (issue 18).

    .venv/bin/python tools/bench/bench_elastic.py [--out build/bench]

Data: build/bench/peers_1m_rg64k.parquet (made by bench_peers.py: 1M rows x
32 columns, SNAPPY + dictionary, 16 row groups of 65,536 rows; one unit per
row group). For worlds 1, 2, 4 and 8 and shuffle windows 0 and 4, one epoch
of every rank (gpufeed-bench --world W --rank r, 2 workers, a global batch
of 16,384 rows): the source bytes each rank read, in three modes:
  per-world   --batch 16384/W: each rank its own shard (the order depends on W)
  elastic     --global-batch 16384: every rank plans the whole stream
  elastic P=8 --global-batch 16384 --partitions 8: a rank decodes its partitions'
Prints the largest and the mean rank's bytes as a share of one rank's
bytes at world 1 (ideal: 1/W), and the commands.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = "build/gpufeed-bench"
G = 16384


def bytes_of(cmd):
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if r.returncode:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), r.stderr[-1500:]))
    m = re.search(r"source bytes read (\d+)", r.stderr)
    return int(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench"))
    a = ap.parse_args()
    path = os.path.relpath(os.path.join(a.out, "peers_1m_rg64k.parquet"), ROOT)
    if not os.path.exists(os.path.join(ROOT, path)):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from bench_peers import ensure_data
        ensure_data(a.out)
    subprocess.run(["make", "-s", "tools"], cwd=ROOT, check=True, capture_output=True)
    print("# source bytes read per rank, one epoch (%s, global batch %d, 2 workers a rank)" % (path, G))
    print("# command: .venv/bin/python tools/bench/bench_elastic.py\n")
    print("| mode | shuffle window | world | largest rank / world 1 | mean rank / world 1 | ideal |")
    print("|---|---|---|---|---|---|")
    example = None
    for window in (0, 4):
        base = None
        for mode in ("per-world", "elastic", "elastic P=8"):
            for w in (1, 2, 4, 8):
                per = []
                for r in range(w):
                    cmd = [BENCH, path, "--workers", "2", "--epochs", "1", "--seed", "3", "--shuffle-window", str(window),
                           "--world", str(w), "--rank", str(r)]
                    if mode == "per-world":
                        cmd += ["--batch", str(G // w)]
                    else:
                        cmd += ["--global-batch", str(G)]
                        if mode == "elastic P=8":
                            cmd += ["--partitions", "8"]
                    per.append(bytes_of(cmd))
                    example = example or cmd
                if w == 1 and base is None:
                    base = per[0]
                print("| %s | %d | %d | %.2f | %.2f | %.2f |" % (mode, window, w, max(per) / base, sum(per) / len(per) / base, 1 / w))
    print("\nexample command: " + " ".join(example))


if __name__ == "__main__":
    main()
