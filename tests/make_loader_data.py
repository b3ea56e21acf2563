#!/usr/bin/env python3
"""Write tests/data/ids.parquet, the data set of the loader tests.

Usage:
    .venv/bin/python tests/make_loader_data.py [OUT]   (default: tests/data/
                                                     ids.parquet next to tools/)

20,000 rows whose `id` column is the row's identity, so a test can decode the
ids of every batch and tell exactly which rows a loader delivered, in which
order, how often:

    id  int64    0 .. 19999, PLAIN (no dictionary), required
    x   float32  id * 0.25 (exact in float32), required
    y   float64  (id % 1000) / 8, null when id % 10 == 3 (10% nulls)
    k   int32    (id * 7919) % 100: a scrambled 0..99 for predicates
                 (`k < 30` keeps 30% of the rows, spread over every unit)

Four row groups of 5,000 rows, SNAPPY, V1 data pages of ~4 KiB
(data_page_size=4096, write_batch_size=128: ~512 rows per page of `id`, so
every column chunk has several pages and a dataset with a small unit_rows
cuts each row group into several units). Rerunning writes the same bytes
with the pinned pyarrow. Also check it with gpufeed-cat and write the
oracle CSV:

    .venv/bin/python tests/render_csv.py tests/data/ids.parquet > tests/data/ids.csv
"""

import os
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
ROWS = 20000
ROW_GROUP = 5000
MAX_BYTES = 400 * 1024


def table():
    ids = np.arange(ROWS, dtype=np.int64)
    x = (ids.astype(np.float32) * np.float32(0.25)).astype(np.float32)
    y = (ids % 1000).astype(np.float64) / 8.0
    y_null = (ids % 10) == 3
    k = ((ids * 7919) % 100).astype(np.int32)
    schema = pa.schema([
        pa.field("id", pa.int64(), nullable=False),
        pa.field("x", pa.float32(), nullable=False),
        pa.field("y", pa.float64()),
        pa.field("k", pa.int32(), nullable=False),
    ])
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "x": pa.array(x, pa.float32()),
        "y": pa.array(y, pa.float64(), mask=y_null),
        "k": pa.array(k, pa.int32()),
    }, schema=schema)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "tests", "data", "ids.parquet")
    pq.write_table(table(), out,
                   row_group_size=ROW_GROUP,
                   compression="snappy",
                   use_dictionary=["y", "k"],   # never for id
                   data_page_size=4096,
                   write_batch_size=128,
                   data_page_version="1.0",
                   write_statistics=True)
    size = os.path.getsize(out)
    md = pq.ParquetFile(out).metadata
    assert md.num_rows == ROWS and md.num_row_groups == ROWS // ROW_GROUP, md
    if size > MAX_BYTES:
        raise SystemExit("make_loader_data: %s is %d bytes (limit %d)" % (out, size, MAX_BYTES))
    print("wrote %s: %d rows, %d row groups, %d bytes" % (out, md.num_rows, md.num_row_groups, size))


if __name__ == "__main__":
    main()
