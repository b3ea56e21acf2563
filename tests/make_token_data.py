"""Writes tests/data/tokens/: token sequences (list<int32> `input_ids`) for the
packing and mixture tests (tests/test_pack.c, tests/test_pack.py).

Source A (a_0..a_2.parquet, 3 files) and source B (b_0.parquet): documents of
0 to 120 tokens, some null or empty lists and a few null elements; a token is
its document's number x 1024 + its place in the document (source B's
documents are numbered from 100,000, its tokens plus 2^30, its ids from
100,000), so every token is distinct. Row groups of 400 rows, pages of 4 KiB
(a document runs over several pages, pages begin inside documents), one file
each with SNAPPY, ZSTD and no compression, one without dictionaries, one with
v2 pages, one with the page index. Each file also has `id` (int64) and
`nested` (list<list<int32>>), for the errors a packed column gets.

    .venv/bin/python tests/make_token_data.py tests/data/tokens
"""
import sys, os
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

def docs(rng, n, first, base):
    out = []
    for i in range(n):
        r = rng.random()
        if r < 0.03:
            out.append(None)
        elif r < 0.06:
            out.append([])
        else:
            k = int(rng.integers(1, 121))
            d = [base + (first + i) * 1024 + p for p in range(k)]
            if rng.random() < 0.02:
                d[int(rng.integers(0, k))] = None
            out.append(d)
    return out

def write(path, rng, n, first, base, **kw):
    d = docs(rng, n, first, base)
    nested = [[[1, 2], [3]] if i % 5 else None for i in range(n)]
    t = pa.table({
        "id": pa.array(np.arange(first, first + n, dtype=np.int64)),
        "input_ids": pa.array(d, type=pa.list_(pa.int32())),
        "nested": pa.array(nested, type=pa.list_(pa.list_(pa.int32()))),
    })
    pq.write_table(t, path, row_group_size=400, data_page_size=4096, **kw)

def main(out):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(48)
    write(os.path.join(out, "a_0.parquet"), rng, 900, 0, 0, compression="snappy")
    write(os.path.join(out, "a_1.parquet"), rng, 700, 900, 0, compression="zstd", use_dictionary=False, data_page_version="2.0")
    write(os.path.join(out, "a_2.parquet"), rng, 600, 1600, 0, compression="none", write_page_index=True)
    write(os.path.join(out, "b_0.parquet"), rng, 800, 100000, 1 << 30, compression="snappy")

if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/data/tokens")
