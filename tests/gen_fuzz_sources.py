#!/usr/bin/env python3
"""Small uncompressed (and SNAPPY / LZ4) Parquet files with every value
encoding, v1 and v2 pages, required and optional columns: the raw material
that tests/fuzz_decoders.c's seed writer cuts into per-decoder seeds.

    .venv/bin/python tests/gen_fuzz_sources.py OUTDIR
"""
import os
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def table(n, seed):
    rng = np.random.default_rng(seed)
    mask = rng.random(n) < 0.2
    words = ["w%d" % (i % 37) + "x" * int(i % 5) for i in range(n)]
    return pa.table({
        "b": pa.array(rng.random(n) < 0.5),
        "i32": pa.array(np.cumsum(rng.integers(-50, 60, n)).astype(np.int32)),
        "i32n": pa.array(rng.integers(-1000, 1000, n).astype(np.int32), mask=mask),
        "i64": pa.array(np.cumsum(rng.integers(-(1 << 40), 1 << 40, n)).astype(np.int64)),
        "f32": pa.array(rng.standard_normal(n).astype(np.float32)),
        "f64n": pa.array(rng.standard_normal(n), mask=mask),
        "f16": pa.array(rng.standard_normal(n).astype(np.float16)),
        "s": pa.array(words),
        "sn": pa.array(words, mask=mask),
        "fsb": pa.array([bytes([i % 251, (i * 7) % 256, 3]) for i in range(n)], pa.binary(3)),
        "li": pa.array([None if i % 11 == 0 else [None if (i + j) % 7 == 0 else i * j for j in range(i % 5)]
                        for i in range(n)], pa.list_(pa.int32())),
        "ls": pa.array([None if i % 13 == 0 else ["s%d" % (i + j) for j in range(i % 4)] for i in range(n)],
                       pa.list_(pa.string())),
    })


def main(out):
    os.makedirs(out, exist_ok=True)
    t = table(300, 1)
    for v in ("1.0", "2.0"):
        tag = "v1" if v == "1.0" else "v2"
        pq.write_table(t, os.path.join(out, "plain_%s.parquet" % tag), compression="NONE",
                       use_dictionary=False, data_page_version=v, data_page_size=512)
        pq.write_table(t.select(["li", "ls"]), os.path.join(out, "lists_%s.parquet" % tag), compression="NONE",
                       use_dictionary=False, data_page_version=v, data_page_size=256)
        pq.write_table(t, os.path.join(out, "dict_%s.parquet" % tag), compression="NONE",
                       data_page_version=v, data_page_size=512)
        enc = {"i32": "DELTA_BINARY_PACKED", "i32n": "DELTA_BINARY_PACKED",
               "i64": "DELTA_BINARY_PACKED", "s": "DELTA_LENGTH_BYTE_ARRAY",
               "sn": "DELTA_BYTE_ARRAY", "fsb": "DELTA_BYTE_ARRAY",
               "f32": "BYTE_STREAM_SPLIT", "f64n": "BYTE_STREAM_SPLIT", "f16": "BYTE_STREAM_SPLIT"}
        pq.write_table(t, os.path.join(out, "delta_%s.parquet" % tag), compression="NONE",
                       use_dictionary=False, column_encoding=enc, data_page_version=v,
                       data_page_size=512)
        enc2 = dict(enc, fsb="BYTE_STREAM_SPLIT", i32="BYTE_STREAM_SPLIT", i64="BYTE_STREAM_SPLIT",
                    s="DELTA_BYTE_ARRAY")
        pq.write_table(t, os.path.join(out, "bss_%s.parquet" % tag), compression="NONE",
                       use_dictionary=False, column_encoding=enc2, data_page_version=v,
                       data_page_size=512)
    for codec in ("snappy", "lz4"):
        pq.write_table(t, os.path.join(out, "%s.parquet" % codec), compression=codec,
                       data_page_size=1024)
    print("wrote fuzz source files to %s" % out)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build/fuzz-sources")
