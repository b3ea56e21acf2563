"""Writes examples/data/sequences.parquet: 4,000 documents of 8 to 120 tokens
(list<int32> `input_ids`, ids below 256), each an arithmetic sequence modulo
256 with its own start and step: a tiny causal language model learns to go
on a document from its first tokens, which only works when attention stays
inside the document (examples/pytorch_packed_lm.py); and
examples/data/sequences_b.parquet, 1,500 more (another seed, steps of 9 to
16), the second source of the README's mixture.

    .venv/bin/python tests/make_sequences.py examples/data
"""
import os
import sys
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def write(out, seed, n_docs, steps):
    rng = np.random.default_rng(seed)
    docs = []
    for _ in range(n_docs):
        n = int(rng.integers(8, 121))
        start, step = int(rng.integers(0, 256)), int(rng.integers(*steps))
        docs.append(((start + step * np.arange(n)) % 256).astype(np.int32).tolist())
    pq.write_table(pa.table({"input_ids": pa.array(docs, type=pa.list_(pa.int32()))}), out, row_group_size=1000)


def main(d):
    write(os.path.join(d, "sequences.parquet"), 2048, 4000, (1, 9))
    write(os.path.join(d, "sequences_b.parquet"), 2049, 1500, (9, 17))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "examples/data")
