"""Writes examples/data/sequences.parquet: 4,000 documents of 8 to 120 tokens
(list<int32> `input_ids`, ids below 256), each an arithmetic sequence modulo
256 with its own start and step: a tiny causal language model learns to go
on a document from its first tokens, which only works when attention stays
inside the document (examples/pytorch_packed_lm.py).

    .venv/bin/python tests/make_sequences.py examples/data/sequences.parquet
"""
import sys
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def main(out):
    rng = np.random.default_rng(2048)
    docs = []
    for _ in range(4000):
        n = int(rng.integers(8, 121))
        start, step = int(rng.integers(0, 256)), int(rng.integers(1, 9))
        docs.append(((start + step * np.arange(n)) % 256).astype(np.int32).tolist())
    pq.write_table(pa.table({"input_ids": pa.array(docs, type=pa.list_(pa.int32()))}), out, row_group_size=1000)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "examples/data/sequences.parquet")
