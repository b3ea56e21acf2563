#!/usr/bin/env python3
"""Write the gpufeed Parquet fixture corpus with real writers.

Usage:
    .venv/bin/python tests/gen_fixtures.py OUTDIR [--extended] [--small]

Writes flat Parquet files (no list/map columns; struct columns of scalars are
included) named <writer>_<variant>.parquet into OUTDIR, produced by pyarrow,
pandas, DuckDB, Polars and fastparquet with a range of writer options, plus
OUTDIR/MANIFEST.txt with a one-line description of each file.  All data comes
from fixed seeds, so a rerun writes the same bytes.

--extended  also writes files using codecs and encodings that are not in the
            base corpus (ZSTD, GZIP, LZ4, BROTLI, DELTA_*, BYTE_STREAM_SPLIT,
            DuckDB/Polars defaults using ZSTD) into OUTDIR/extended/.
--small     fewer rows per file (used by tests/make_test_corpus.py to keep the
            committed test files small).

Check any file against the oracle with tests/render_csv.py.
"""

import argparse
import datetime as dt
import os
import random
import sys
from decimal import Decimal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

# Filled by the writers: (path relative to OUT_ROOT, description).
MANIFEST = []
OUT_ROOT = "."

# Rows of the main "all types" table.  --small lowers it.
ROWS = {"types": 1000, "frame": 1000, "dict_fallback": 4000, "duckdb": 2000,
        "duckdb_rg": 150000}
SMALL_ROWS = {"types": 200, "frame": 300, "dict_fallback": 1500, "duckdb": 400,
              "duckdb_rg": 150000}

SPECIAL_STRINGS = [
    "",
    'he said "hi"',
    "a,b,c",
    "line1\nline2",
    "crlf\r\nend",
    '"',
    ",",
    "naïve café",
    "日本語テキスト",
    "emoji 😀",
    " leading and trailing ",
    "tab\there",
    "back\\slash",
    "NULL",
    "null",
]

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
         "india", "juliett", "kilo", "lima", "mike", "november", "oscar", "papa"]

INT_TYPES = [
    ("i8", pa.int8(), np.int8),
    ("i16", pa.int16(), np.int16),
    ("i32", pa.int32(), np.int32),
    ("i64", pa.int64(), np.int64),
    ("u8", pa.uint8(), np.uint8),
    ("u16", pa.uint16(), np.uint16),
    ("u32", pa.uint32(), np.uint32),
    ("u64", pa.uint64(), np.uint64),
]


# --------------------------------------------------------------------------
# Data builders
# --------------------------------------------------------------------------


def null_mask(rng, n, frac, keep=0):
    """Boolean mask, True = null; the first `keep` rows are never null."""
    m = rng.random(n) < frac
    m[: min(keep, n)] = False
    return m


def with_specials(values, specials):
    """Overwrite the first rows of `values` (list) with `specials`."""
    k = min(len(values), len(specials))
    values[:k] = specials[:k]
    return values


def rand_words(rng, n, lo=1, hi=4):
    out = []
    for _ in range(n):
        k = int(rng.integers(lo, hi + 1))
        out.append(" ".join(WORDS[int(j)] for j in rng.integers(0, len(WORDS), k)))
    return out


def decimal_array(rng, n, precision, scale, mask):
    lim = 10**precision - 1
    # Python's Random handles integers wider than int64; seed it from rng.
    prng = random.Random(int(rng.integers(0, 2**63)))
    # Mix magnitudes: uniform over [-lim, lim] is almost always full width.
    unscaled = [prng.randint(-(10 ** prng.randint(1, precision)) + 1,
                             10 ** prng.randint(1, precision) - 1) for _ in range(n)]
    unscaled = with_specials(unscaled, [lim, -lim, 0, -5, 5, 1, -1, 10**scale, -(10**scale) - 1])
    vals = [None if m else Decimal("%de-%d" % (u, scale)) for u, m in zip(unscaled, mask)]
    return pa.array(vals, pa.decimal128(precision, scale))


def types_table(n, seed, null_frac=0.1, keep_specials=True, extra_null_cols=False):
    """A table with one column of every flat type the corpus covers.

    The first rows of each column hold the edge values (integer min/max, NaN,
    +-inf, -0.0, odd strings...); the rest is random with ~null_frac nulls.
    """
    rng = np.random.default_rng(seed)
    keep = 16 if keep_specials else 0

    def mask():
        return null_mask(rng, n, null_frac, keep)

    cols = {}
    cols["bool"] = pa.array(
        with_specials([bool(b) for b in rng.integers(0, 2, n)], [True, False]), mask=mask()
    )
    for name, atype, npt in INT_TYPES:
        info = np.iinfo(npt)
        vals = [int(v) for v in rng.integers(info.min, info.max, n, dtype=npt, endpoint=True)]
        specials = [info.min, info.max, 0, 1] + ([-1] if info.min < 0 else [info.max - 1])
        cols[name] = pa.array(with_specials(vals, specials), atype, mask=mask())

    f32_specials = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0,
                    float(np.finfo(np.float32).max), float(np.float32(1e-45)),
                    float(np.float32(0.1)), float(np.float32(1.0 / 3.0)), -1.5,
                    float(np.finfo(np.float32).tiny), 16777217.0, -float("nan")]
    v = rng.standard_normal(n).astype(np.float32) * np.float32(1000)
    cols["f32"] = pa.array(
        with_specials([float(x) for x in v], f32_specials), pa.float32(), mask=mask()
    )
    f64_specials = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0,
                    float(np.finfo(np.float64).max), 5e-324, 0.1, 1.0 / 3.0, -1.5,
                    2.2250738585072014e-308, 1e300, 123456789012345678.0, -1e-300,
                    -float("nan")]  # NaN with the sign bit set: printf gives "-nan"
    v = rng.standard_normal(n) * 1e6
    cols["f64"] = pa.array(with_specials([float(x) for x in v], f64_specials), pa.float64(),
                           mask=mask())
    f16_specials = [np.nan, np.inf, -np.inf, -0.0, 0.0, 65504.0, 2.0**-24, 0.1, -1.5, 2.0**-14,
                    -np.nan]
    v = (rng.standard_normal(n) * 100).astype(np.float16)
    v[: min(n, len(f16_specials))] = np.array(f16_specials, np.float16)[: min(n, len(f16_specials))]
    cols["f16"] = pa.array(v, pa.float16(), mask=mask())

    cols["str"] = pa.array(with_specials(rand_words(rng, n), SPECIAL_STRINGS), pa.string(),
                           mask=mask())
    cols["large_str"] = pa.array(
        with_specials(rand_words(rng, n, 0, 3), list(reversed(SPECIAL_STRINGS))),
        pa.large_string(), mask=mask(),
    )
    bins = [bytes(rng.integers(0, 256, int(k), dtype=np.uint8)) for k in rng.integers(0, 9, n)]
    cols["bin"] = pa.array(with_specials(bins, [b"", b"\x00", b"\xff\x00\"", b'"quoted"']),
                           pa.binary(), mask=mask())
    fsb = [bytes(rng.integers(0, 256, 4, dtype=np.uint8)) for _ in range(n)]
    cols["fsb4"] = pa.array(with_specials(fsb, [b"\x00\x00\x00\x00", b"\xff\xff\xff\xff"]),
                            pa.binary(4), mask=mask())

    days = [int(d) for d in rng.integers(-40000, 40000, n)]
    cols["date32"] = pa.array(with_specials(days, [0, -1, 1, -719162, 2932896]), pa.date32(),
                              mask=mask())
    ms = [int(x) for x in rng.integers(0, 86_400_000, n)]
    cols["time32_ms"] = pa.array(with_specials(ms, [0, 86_399_999]), pa.time32("ms"), mask=mask())
    us = [int(x) for x in rng.integers(0, 86_400_000_000, n)]
    cols["time64_us"] = pa.array(with_specials(us, [0, 86_399_999_999]), pa.time64("us"),
                                 mask=mask())
    ns = [int(x) for x in rng.integers(0, 86_400_000_000_000, n)]
    cols["time64_ns"] = pa.array(with_specials(ns, [0, 86_399_999_999_999]), pa.time64("ns"),
                                 mask=mask())

    # Timestamps stay within 1875..2065 so every unit fits int64 nanoseconds
    # (needed for the INT96 variant, which pyarrow reads back as ns).
    secs = rng.integers(-3_000_000_000, 3_000_000_000, n)
    sub = rng.integers(0, 1_000_000_000, n)
    ts_specials_s = [0, -1, 1, 951782400, -2208988800]  # 2000-02-29, 1900-01-01

    def ts(unit, tz=None):
        per = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}[unit]
        vals = [int(s) * per + int(f) // (1_000_000_000 // per) for s, f in zip(secs, sub)]
        vals = with_specials(vals, [x * per for x in ts_specials_s] + [per - 1, -per + 1])
        return pa.array(vals, pa.timestamp(unit, tz=tz), mask=mask())

    cols["ts_s"] = ts("s")
    cols["ts_ms"] = ts("ms")
    cols["ts_us"] = ts("us")
    cols["ts_ns"] = ts("ns")
    cols["ts_ms_utc"] = ts("ms", "UTC")
    cols["ts_us_utc"] = ts("us", "UTC")
    cols["ts_ns_ny"] = ts("ns", "America/New_York")

    cols["dec5_0"] = decimal_array(rng, n, 5, 0, mask())
    cols["dec9_2"] = decimal_array(rng, n, 9, 2, mask())
    cols["dec18_4"] = decimal_array(rng, n, 18, 4, mask())
    cols["dec38_10"] = decimal_array(rng, n, 38, 10, mask())

    idx = rng.integers(0, 5, n).astype(np.int32)
    dmask = null_mask(rng, n, null_frac, keep)
    cols["dict_str"] = pa.DictionaryArray.from_arrays(
        pa.array(idx, pa.int32(), mask=dmask),
        pa.array(["red", "green", "blue", "", "dark \"grey\", mostly"]),
    )

    a = pa.array([int(x) for x in rng.integers(-1000, 1000, n)], pa.int32(), mask=mask())
    b = pa.array(rand_words(rng, n, 0, 2), pa.string(), mask=mask())
    smask = null_mask(rng, n, null_frac, 0)
    cols["s"] = pa.StructArray.from_arrays([a, b], names=["a", "b"], mask=pa.array(smask))

    if extra_null_cols:
        cols["all_null_i32"] = pa.nulls(n, pa.int32())
        cols["all_null_str"] = pa.nulls(n, pa.string())
        cols["all_null_f64"] = pa.nulls(n, pa.float64())
    return pa.table(cols)


def nested_struct_table(n, seed):
    """Struct-heavy table: optional struct, nested struct, required struct."""
    rng = np.random.default_rng(seed)
    mask = lambda f=0.15: null_mask(rng, n, f)  # noqa: E731
    a = pa.array([int(x) for x in rng.integers(-10**6, 10**6, n)], pa.int32(), mask=mask())
    b = pa.array(with_specials(rand_words(rng, n, 0, 2), SPECIAL_STRINGS), pa.string(),
                 mask=mask())
    s = pa.StructArray.from_arrays([a, b], names=["a", "b"], mask=pa.array(mask(0.2)))
    x = pa.array(rng.standard_normal(n), pa.float64(), mask=mask())
    y = pa.array([bool(v) for v in rng.integers(0, 2, n)], pa.bool_(), mask=mask())
    inner = pa.StructArray.from_arrays([x, y], names=["x", "y"], mask=pa.array(mask(0.2)))
    k = pa.array([int(v) for v in rng.integers(0, 10**12, n)], pa.int64(), mask=mask())
    outer = pa.StructArray.from_arrays([k, inner], names=["k", "inner"], mask=pa.array(mask(0.1)))
    # A struct field declared non-nullable with non-nullable children.
    rid = pa.array(np.arange(n, dtype=np.int64))
    rtag = pa.array([WORDS[i % len(WORDS)] for i in range(n)])
    req = pa.StructArray.from_arrays([rid, rtag], fields=[pa.field("id", pa.int64(), False),
                                                          pa.field("tag", pa.string(), False)])
    schema = pa.schema([
        pa.field("row", pa.int32(), nullable=False),
        pa.field("s", s.type),
        pa.field("outer", outer.type),
        pa.field("req", req.type, nullable=False),
    ])
    return pa.table([pa.array(np.arange(n, dtype=np.int32)), s, outer, req], schema=schema)


def dict_fallback_table(n, seed):
    rng = np.random.default_rng(seed)
    hi = ["key-%08d-%s" % (int(v), WORDS[int(v) % 16]) for v in rng.permutation(n * 3)[:n]]
    lo = [WORDS[int(v)] for v in rng.integers(0, 4, n)]
    return pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "high_card": pa.array(hi, mask=null_mask(rng, n, 0.05)),
        "low_card": pa.array(lo, mask=null_mask(rng, n, 0.05)),
        "high_card_i64": pa.array([int(v) for v in rng.integers(-2**62, 2**62, n)],
                                  pa.int64()),
    })


def frame(n, seed):
    """A typical pandas DataFrame."""
    rng = np.random.default_rng(seed)
    base = np.datetime64("2023-01-01T00:00:00", "ns")
    when = base + rng.integers(0, 365 * 86400 * 10**9, n).astype("timedelta64[ns]")
    when[rng.random(n) < 0.1] = np.datetime64("NaT")
    count = pd.array([int(v) for v in rng.integers(-10**9, 10**9, n)], dtype="Int64")
    count[rng.random(n) < 0.2] = pd.NA
    score = rng.standard_normal(n) * 100
    score[rng.random(n) < 0.1] = np.nan
    names = with_specials(rand_words(rng, n), SPECIAL_STRINGS)
    names = [None if m else s for s, m in zip(names, null_mask(rng, n, 0.1, keep=16))]
    cat = pd.Categorical([WORDS[int(i)] for i in rng.integers(0, 6, n)])
    df = pd.DataFrame({
        "row_id": np.arange(1000, 1000 + n, dtype=np.int64),
        "when": when,
        "when_utc": pd.to_datetime(when).tz_localize("UTC"),
        "category": cat,
        "count": count,
        "name": pd.Series(names, dtype=object),
        "score": score,
        "flag": rng.integers(0, 2, n).astype(bool),
        "small": rng.integers(-100, 100, n).astype(np.int8),
        "ratio": rng.random(n).astype(np.float32),
    })
    return df.set_index("row_id")


# --------------------------------------------------------------------------
# Writers
# --------------------------------------------------------------------------


def add(outdir, name, desc):
    MANIFEST.append((os.path.relpath(os.path.join(outdir, name), OUT_ROOT), desc))


def write_pyarrow(outdir, rows):
    n = rows["types"]

    def w(name, desc, table, **kw):
        pq.write_table(table, os.path.join(outdir, name), **kw)
        add(outdir, name, desc)

    t = types_table(n, seed=1)
    w("pyarrow_default.parquet",
      "all flat types, pq.write_table defaults (SNAPPY, dictionary, V1 pages, decimals as FLBA)", t)
    w("pyarrow_nodict.parquet",
      "all types, use_dictionary=False (PLAIN only), decimals as INT32/INT64/FLBA",
      t, use_dictionary=False, store_decimal_as_integer=True)
    w("pyarrow_uncompressed.parquet", "all types, compression='NONE'", t, compression="NONE")
    w("pyarrow_v1_legacy.parquet",
      "all types, version='1.0' (legacy converted types; uint32->INT64, ns->us timestamps)",
      t, version="1.0", coerce_timestamps="us", allow_truncated_timestamps=True)
    w("pyarrow_no_store_schema.parquet",
      "all types, store_schema=False (no ARROW:schema; Arrow types inferred from Parquet)",
      t, store_schema=False)
    w("pyarrow_int96_crc.parquet",
      "all types, INT96 timestamps + page CRC32 + page index (Spark-like)",
      t, use_deprecated_int96_timestamps=True, write_page_checksum=True, write_page_index=True)
    w("pyarrow_tiny_pages.parquet",
      "all types, data_page_size=64, write_batch_size=10: ~10 rows/page, many pages per chunk",
      t, data_page_size=64, write_batch_size=10)
    w("pyarrow_many_rowgroups.parquet",
      "all types, row_group_size=97 (%d row groups)" % -(-n // 97), t, row_group_size=97)

    tv2 = types_table(n, seed=2, extra_null_cols=True)
    leaves = [c for c in tv2.column_names if c != "s"] + ["s.a", "s.b"]
    # Dictionary-encoded (RLE_DICTIONARY) pages of random indices do not
    # shrink, so pyarrow stores those V2 pages with is_compressed=false; the
    # PLAIN string/int columns do get compressed pages.  PLAIN all-null
    # columns give V2 pages whose value section is empty.
    w("pyarrow_v2_snappy.parquet",
      "all types + all-null columns, data_page_version='2.0', SNAPPY, decimals as integers; "
      "dictionary for half the columns, PLAIN for the rest (mix of is_compressed true/false)",
      tv2, data_page_version="2.0", store_decimal_as_integer=True,
      use_dictionary=leaves[::2])
    w("pyarrow_v2_uncompressed.parquet",
      "all types + all-null columns, data_page_version='2.0', compression='NONE', "
      "dictionary except for the all-null columns (empty V2 value sections)",
      tv2, data_page_version="2.0", compression="NONE",
      use_dictionary=[c for c in leaves if not c.startswith("all_null")])
    w("pyarrow_v2_tiny_pages.parquet",
      "all types + all-null columns, V2 pages, data_page_size=64, write_batch_size=10, no dictionary",
      tv2, data_page_version="2.0", data_page_size=64, write_batch_size=10, use_dictionary=False)

    w("pyarrow_heavy_nulls.parquet", "all types, ~90% nulls in every column",
      types_table(n, seed=3, null_frac=0.9, keep_specials=False))
    w("pyarrow_no_nulls.parquet", "all types, no nulls (definition levels all 1)",
      types_table(n, seed=4, null_frac=0.0))
    w("pyarrow_struct.parquet",
      "struct<a:int32,b:string>, nested struct<k,inner:struct<x,y>>, non-nullable struct",
      nested_struct_table(n, seed=5))
    w("pyarrow_dict_fallback.parquet",
      "high-cardinality string/int64 columns; dictionary_pagesize_limit=2048 so later pages "
      "fall back to PLAIN", dict_fallback_table(rows["dict_fallback"], seed=6),
      dictionary_pagesize_limit=2048)
    w("pyarrow_empty.parquet", "all types, 0 rows", types_table(0, seed=7))
    w("pyarrow_single_row.parquet", "all types, 1 row (edge values)", types_table(1, seed=8))


def write_pandas(outdir, rows):
    df = frame(rows["frame"], seed=10)
    name = "pandas_default.parquet"
    df.to_parquet(os.path.join(outdir, name), engine="pyarrow")
    add(outdir, name,
        "pandas to_parquet: named int64 index, datetime64[ns], tz-aware, categorical, "
        "nullable Int64, object strings, float NaN, bool, int8, float32")


def write_duckdb(outdir, rows):
    import duckdb

    con = duckdb.connect()
    con.execute("SET threads TO 1")
    con.execute("CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')")

    def nul(expr, k):  # NULL on every k-th row, never on the edge-value rows 0 and 1
        return "CASE WHEN i %% %d = %d THEN NULL ELSE %s END" % (k, k - 1, expr)

    def edge(t, lo, hi, expr):
        return "CASE i WHEN 0 THEN CAST(%s AS %s) WHEN 1 THEN CAST(%s AS %s) ELSE %s END" % (
            lo, t, hi, t, expr)

    n = rows["duckdb"]
    cols = [
        nul(edge("TINYINT", -128, 127, "((i * 37) % 256 - 128)::TINYINT"), 7) + " AS i8",
        nul(edge("SMALLINT", -32768, 32767, "((i * 7919) % 65536 - 32768)::SMALLINT"), 11) + " AS i16",
        nul(edge("INTEGER", -2147483648, 2147483647, "(i * 104729 - 100000000)::INTEGER"), 5) + " AS i32",
        nul(edge("BIGINT", -9223372036854775808, 9223372036854775807,
                 "(i * 1000000007 * 1000 - 5000000000000)::BIGINT"), 13) + " AS i64",
        nul(edge("HUGEINT", "-170141183460469231731687303715884105728",
                 "170141183460469231731687303715884105727", "(i * 12345678901)::HUGEINT"), 9) + " AS huge",
        nul(edge("UTINYINT", 0, 255, "(i % 256)::UTINYINT"), 6) + " AS u8",
        nul(edge("USMALLINT", 0, 65535, "((i * 31) % 65536)::USMALLINT"), 8) + " AS u16",
        nul(edge("UINTEGER", 0, 4294967295, "(i * 2654435761 % 4294967296)::UINTEGER"), 10) + " AS u32",
        nul(edge("UBIGINT", 0, 18446744073709551615, "(i * 11400714819323198485 % 18446744073709551616)::UBIGINT"), 12) + " AS u64",
        nul("(i / 7.0 - 100)::FLOAT", 4) + " AS f32",
        nul("CASE i WHEN 2 THEN 'nan'::DOUBLE WHEN 3 THEN 'inf'::DOUBLE WHEN 4 THEN '-inf'::DOUBLE"
            " WHEN 5 THEN -0.0::DOUBLE ELSE i / 3.0 - 300 END", 4) + " AS f64",
        nul("CASE WHEN i < 15 THEN ['', 'he said \"hi\"', 'a,b', chr(10), 'naïve café', '日本語', "
            "'emoji 😀', ' x ', 'tab' || chr(9), 'back\\slash', 'NULL', 'z', 'y', 'x', 'w'][i + 1]"
            " ELSE 'row ' || i::VARCHAR END", 9) + " AS str",
        nul("(DATE '1970-01-01' + ((i * 37) % 40000 - 20000)::INTEGER)", 6) + " AS d",
        nul("(TIME '00:00:00' + to_microseconds((i * 43200007) % 86400000000))", 5) + " AS t",
        nul("(TIMESTAMP '1970-01-01' + to_microseconds(i * 1500000000007 - 1000000000000000))", 7) + " AS ts",
        nul("(TIMESTAMPTZ '2000-01-01 00:00:00+00' + to_microseconds(i * 98765432101))", 8) + " AS ts_tz",
        nul("(TIMESTAMP_MS '2020-01-01 00:00:00' + to_milliseconds(i * 123457))::TIMESTAMP_MS", 9) + " AS ts_ms",
        nul("make_timestamp_ns(i * 987654321012345 - 100000000000000000)", 10) + " AS ts_ns",
        nul("(((i * 12347) % 19999 - 9999)::DECIMAL(18,0) * 0.1)::DECIMAL(4,1)", 5) + " AS dec4_1",
        nul("(((i * 1234567) % 1999999999 - 999999999)::DECIMAL(18,0) * 0.01)::DECIMAL(9,2)", 6) + " AS dec9_2",
        nul(edge("DECIMAL(18,3)", "-999999999999999.999", "999999999999999.999",
                 "(((i * 123456789012347) % 1999999999999999999 - 999999999999999999)::DECIMAL(38,0) * 0.001)::DECIMAL(18,3)"), 7)
        + " AS dec18_3",
        nul(edge("DECIMAL(30,5)", "-9999999999999999999999999.99999", "9999999999999999999999999.99999",
                 "(((i::HUGEINT * 12345678901234567891) % 1999999999999999999999999999999"
                 " - 999999999999999999999999999999)::DECIMAL(38,0) * 0.00001)::DECIMAL(30,5)"), 8) + " AS dec30_5",
        nul("(i % 3 = 0)", 5) + " AS b",
        nul("CASE WHEN i % 13 = 2 THEN ''::BLOB"
            " ELSE unhex(lpad(to_hex(i * 2654435761 % 4294967296), 8, '0')) END", 6) + " AS blob",
        nul("md5(i::VARCHAR)::UUID", 7) + " AS uuid",
        nul("(['sad', 'ok', 'happy'][i % 3 + 1])::mood", 8) + " AS mood",
        nul("json_object('i', i, 's', 'x' || i::VARCHAR)", 9) + " AS js",
        nul("to_days((i % 400)::INTEGER) + to_microseconds(i * 1000)", 10) + " AS iv",
        nul("{'a': i::INTEGER, 'b': " + nul("'v' || i::VARCHAR", 4) + "}", 11) + " AS st",
    ]
    path = os.path.join(outdir, "duckdb_default.parquet")
    sql = "COPY (SELECT %s FROM range(%d) t(i) ORDER BY i) TO '%s' (FORMAT parquet)" % (
        ", ".join(cols), n, path.replace("'", "''"))
    con.execute(sql)
    add(outdir, "duckdb_default.parquet",
        "DuckDB COPY defaults (SNAPPY): signed/unsigned ints, HUGEINT (->DOUBLE), FLOAT/DOUBLE "
        "incl nan/inf, VARCHAR, DATE, TIME, TIMESTAMP us/ms/ns/tz, DECIMAL 4/9/18/30, BOOLEAN, "
        "BLOB, UUID, ENUM, JSON, INTERVAL, STRUCT; NULLs")

    m = rows["duckdb_rg"]
    path = os.path.join(outdir, "duckdb_two_rowgroups.parquet")
    con.execute(
        "COPY (SELECT i::BIGINT AS id, "
        "CASE WHEN i %% 10 = 3 THEN NULL ELSE (i %% 1000) / 8.0 END::DOUBLE AS v, "
        "CASE WHEN i %% 17 = 0 THEN NULL ELSE ['ewr', 'jfk', 'lga'][i %% 3 + 1] END AS tag "
        "FROM range(%d) t(i) ORDER BY i) TO '%s' (FORMAT parquet)" % (m, path.replace("'", "''")))
    add(outdir, "duckdb_two_rowgroups.parquet",
        "DuckDB COPY defaults, %d rows -> 2 row groups (122880 + rest); BIGINT, DOUBLE, VARCHAR" % m)
    con.close()


def polars_frame(n, seed):
    import polars as pl

    rng = np.random.default_rng(seed)

    def m(vals, frac=0.1, keep=8):
        mask = null_mask(rng, n, frac, keep)
        return [None if k else v for v, k in zip(vals, mask)]

    data = {}
    dtypes = {"i8": pl.Int8, "i16": pl.Int16, "i32": pl.Int32, "i64": pl.Int64,
              "u8": pl.UInt8, "u16": pl.UInt16, "u32": pl.UInt32, "u64": pl.UInt64}
    for name, _, npt in INT_TYPES:
        info = np.iinfo(npt)
        vals = [int(v) for v in rng.integers(info.min, info.max, n, dtype=npt, endpoint=True)]
        data[name] = pl.Series(name, m(with_specials(vals, [info.min, info.max, 0])), dtype=dtypes[name])
    f = [float(x) for x in rng.standard_normal(n) * 1e3]
    data["f32"] = pl.Series("f32", m(with_specials(list(f), [float("nan"), float("inf"), -0.0, 0.1])),
                            dtype=pl.Float32)
    data["f64"] = pl.Series("f64", m(with_specials(list(f), [float("-inf"), float("nan"), 0.1, -0.0])),
                            dtype=pl.Float64)
    data["str"] = pl.Series("str", m(with_specials(rand_words(rng, n), SPECIAL_STRINGS), keep=16),
                            dtype=pl.String)
    data["bool"] = pl.Series("bool", m([bool(v) for v in rng.integers(0, 2, n)]), dtype=pl.Boolean)
    data["date"] = pl.Series("date", m([dt.date(1970, 1, 1) + dt.timedelta(days=int(d))
                                        for d in rng.integers(-30000, 30000, n)]), dtype=pl.Date)
    base = dt.datetime(1970, 1, 1)
    secs = rng.integers(-2 * 10**9, 2 * 10**9, n)
    us = rng.integers(0, 10**6, n)
    stamps = [base + dt.timedelta(seconds=int(s), microseconds=int(u)) for s, u in zip(secs, us)]
    data["ts_us"] = pl.Series("ts_us", m(stamps), dtype=pl.Datetime("us"))
    data["ts_ns"] = pl.Series("ts_ns", m(stamps), dtype=pl.Datetime("ns"))
    data["ts_ms_utc"] = pl.Series("ts_ms_utc", m(stamps), dtype=pl.Datetime("us")).dt.cast_time_unit(
        "ms").dt.replace_time_zone("UTC")
    data["time"] = pl.Series("time", m([dt.time(int(h), int(mi), int(s), int(u)) for h, mi, s, u in zip(
        rng.integers(0, 24, n), rng.integers(0, 60, n), rng.integers(0, 60, n), us)]), dtype=pl.Time)
    data["dur"] = pl.Series("dur", m([dt.timedelta(microseconds=int(x)) for x in secs]),
                            dtype=pl.Duration("us"))
    data["cat"] = pl.Series("cat", m([WORDS[int(i)] for i in rng.integers(0, 5, n)]), dtype=pl.Categorical)
    data["dec10_2"] = pl.Series("dec10_2", m([Decimal("%de-2" % int(v)) for v in
                                              rng.integers(-10**10 + 1, 10**10, n)]), dtype=pl.Decimal(10, 2))
    data["dec30_4"] = pl.Series("dec30_4", m([Decimal("%de-4" % (int(v) * 10**12 + 7)) for v in
                                              rng.integers(-10**14, 10**14, n)]), dtype=pl.Decimal(30, 4))
    data["bin"] = pl.Series("bin", m([bytes(rng.integers(0, 256, int(k), dtype=np.uint8))
                                      for k in rng.integers(0, 6, n)]), dtype=pl.Binary)
    sa = m([int(v) for v in rng.integers(-1000, 1000, n)])
    sb = m(rand_words(rng, n, 0, 2))
    data["st"] = pl.Series("st", m([{"a": a, "b": b} for a, b in zip(sa, sb)], frac=0.15),
                           dtype=pl.Struct({"a": pl.Int32, "b": pl.String}))
    return pl.DataFrame(list(data.values()))


def write_polars(outdir, rows, extended_dir=None):
    df = polars_frame(rows["frame"], seed=20)
    for comp in ("snappy", "uncompressed"):
        name = "polars_%s.parquet" % comp
        df.write_parquet(os.path.join(outdir, name), compression=comp)
        add(outdir, name, "Polars write_parquet(compression='%s'): ints, floats, String, Boolean, "
            "Date, Datetime us/ns/ms+UTC, Time(ns), Duration, Categorical, Decimal, Binary, Struct" % comp)
    if extended_dir:
        name = "polars_zstd_default.parquet"
        df.write_parquet(os.path.join(extended_dir, name))
        add(extended_dir, name, "Polars write_parquet() defaults (ZSTD)")
        name = "polars_no_stats_lz4.parquet"
        df.write_parquet(os.path.join(extended_dir, name), compression="lz4", statistics=False)
        add(extended_dir, name, "Polars write_parquet(compression='lz4', statistics=False)")


def write_fastparquet(outdir, rows):
    import fastparquet

    n = rows["frame"]
    rng = np.random.default_rng(30)
    when = np.datetime64("2001-01-01T00:00:00", "ns") + rng.integers(
        -10**18, 10**18, n).astype("timedelta64[ns]")
    when[rng.random(n) < 0.1] = np.datetime64("NaT")
    names = with_specials(rand_words(rng, n), SPECIAL_STRINGS)
    names = [None if k else s for s, k in zip(names, null_mask(rng, n, 0.1, keep=16))]
    ints = pd.array([int(v) for v in rng.integers(-2**40, 2**40, n)], dtype="Int64")
    ints[rng.random(n) < 0.15] = pd.NA
    f = rng.standard_normal(n) * 1e4
    f[rng.random(n) < 0.1] = np.nan
    df = pd.DataFrame({
        "id": np.arange(n, dtype=np.int64),
        "i32": rng.integers(-2**31, 2**31, n).astype(np.int32),
        "maybe_int": ints,
        "f64": f,
        "f32": (rng.standard_normal(n) * 10).astype(np.float32),
        "name": pd.Series(names, dtype=object),
        "flag": rng.integers(0, 2, n).astype(bool),
        "when": when,
        "cat": pd.Categorical([WORDS[int(i)] for i in rng.integers(0, 4, n)]),
        "payload": pd.Series([None if k else bytes(rng.integers(0, 256, int(k2), dtype=np.uint8))
                              for k, k2 in zip(null_mask(rng, n, 0.1, 4),
                                               rng.integers(0, 7, n))], dtype=object),
        "meta": pd.Series([None if k else {"k": int(v), "s": WORDS[int(v) % 16]}
                           for k, v in zip(null_mask(rng, n, 0.1, 4), rng.integers(0, 99, n))],
                          dtype=object),
    })
    enc = {"name": "utf8", "cat": "utf8", "payload": "bytes", "meta": "json"}
    variants = [
        ("fastparquet_default.parquet", {}, "fastparquet write() defaults (UNCOMPRESSED)"),
        ("fastparquet_snappy.parquet", {"compression": "SNAPPY", "row_group_offsets": [0, n // 3]},
         "fastparquet write(compression='SNAPPY'), 2 row groups"),
        ("fastparquet_int96.parquet", {"times": "int96"},
         "fastparquet write(times='int96'): INT96 timestamps"),
    ]
    for name, kw, desc in variants:
        fastparquet.write(os.path.join(outdir, name), df, object_encoding=enc, **kw)
        add(outdir, name, desc + "; int64/int32/nullable Int64/float/utf8 str/bool/datetime64/"
            "categorical/bytes/JSON with nulls")


def write_extended(ext, rows):
    """Codecs/encodings that are not in the base corpus (bonus)."""
    n = rows["types"]
    t = types_table(n, seed=40)

    def w(name, desc, table, **kw):
        pq.write_table(table, os.path.join(ext, name), **kw)
        add(ext, name, desc)

    for codec in ("zstd", "gzip", "lz4", "brotli"):
        w("pyarrow_%s.parquet" % codec, "all types, compression='%s'" % codec, t, compression=codec)
    w("pyarrow_v2_zstd.parquet", "all types, V2 pages, ZSTD", t, compression="zstd",
      data_page_version="2.0")
    for codec in ("gzip", "lz4", "brotli"):
        w("pyarrow_v2_%s.parquet" % codec, "all types, V2 pages, compression='%s'" % codec, t,
          compression=codec, data_page_version="2.0")
    for level in (1, 19):
        w("pyarrow_zstd_level%d.parquet" % level, "all types, ZSTD compression_level=%d, "
          "write_page_checksum=True" % level, t, compression="zstd", compression_level=level,
          write_page_checksum=True)
    w("pyarrow_gzip_level9_tiny_pages.parquet", "all types, GZIP level 9, data_page_size=512, "
      "write_batch_size=64 (many small deflate members)", t, compression="gzip",
      compression_level=9, data_page_size=512, write_batch_size=64)
    w("pyarrow_bss_all_floats.parquet", "use_byte_stream_split=[f32, f64, f16] (the float columns), "
      "use_dictionary=False, ZSTD", t, use_byte_stream_split=["f32", "f64", "f16"], use_dictionary=False,
      compression="zstd")
    delta_cols = {"i32": "DELTA_BINARY_PACKED", "i64": "DELTA_BINARY_PACKED",
                  "u64": "DELTA_BINARY_PACKED", "date32": "DELTA_BINARY_PACKED",
                  "ts_us": "DELTA_BINARY_PACKED",
                  "str": "DELTA_LENGTH_BYTE_ARRAY", "large_str": "DELTA_BYTE_ARRAY",
                  "bin": "DELTA_BYTE_ARRAY", "fsb4": "DELTA_BYTE_ARRAY",
                  "f32": "BYTE_STREAM_SPLIT", "f64": "BYTE_STREAM_SPLIT",
                  "f16": "BYTE_STREAM_SPLIT", "i16": "BYTE_STREAM_SPLIT"}
    w("pyarrow_delta_bss.parquet",
      "all types, no dictionary; DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY, "
      "BYTE_STREAM_SPLIT column encodings", t, use_dictionary=False, column_encoding=delta_cols)
    w("pyarrow_delta_v2.parquet", "same encodings as pyarrow_delta_bss, V2 pages, SNAPPY", t,
      use_dictionary=False, column_encoding=delta_cols, data_page_version="2.0")
    bss_flba = dict(delta_cols, fsb4="BYTE_STREAM_SPLIT", i32="BYTE_STREAM_SPLIT",
                    i64="BYTE_STREAM_SPLIT", dec9_2="BYTE_STREAM_SPLIT", dec18_4="BYTE_STREAM_SPLIT",
                    dec38_10="BYTE_STREAM_SPLIT")
    w("pyarrow_bss_flba_ints.parquet", "BYTE_STREAM_SPLIT on FIXED_LEN_BYTE_ARRAY (fsb4, "
      "decimal(38,10)), INT32, INT64 and decimals; GZIP, V2 pages", t, use_dictionary=False,
      column_encoding=bss_flba, compression="gzip", data_page_version="2.0")
    w("pyarrow_delta_tiny_pages.parquet", "DELTA/BYTE_STREAM_SPLIT encodings, data_page_size=256, "
      "write_batch_size=50, ZSTD, page checksums", t, use_dictionary=False,
      column_encoding=delta_cols, compression="zstd", data_page_size=256, write_batch_size=50,
      write_page_checksum=True)
    w("pyarrow_delta_v2_gzip.parquet", "DELTA/BYTE_STREAM_SPLIT encodings, V2 pages, GZIP", t,
      use_dictionary=False, column_encoding=delta_cols, data_page_version="2.0",
      compression="gzip")

    import duckdb

    con = duckdb.connect()
    con.execute("SET threads TO 1")
    duck = [
        ("duckdb_zstd.parquet", "FORMAT parquet, COMPRESSION zstd", "DuckDB COPY, ZSTD"),
        ("duckdb_v2.parquet", "FORMAT parquet, PARQUET_VERSION v2",
         "DuckDB COPY, PARQUET_VERSION v2 (DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, BYTE_STREAM_SPLIT; V1 data pages)"),
    ]
    for comp in ("uncompressed", "snappy", "gzip", "zstd", "brotli", "lz4", "lz4_raw"):
        duck.append(("duckdb_v2_%s.parquet" % comp,
                     "FORMAT parquet, PARQUET_VERSION v2, COMPRESSION %s" % comp,
                     "DuckDB COPY, PARQUET_VERSION v2, COMPRESSION %s (delta encodings in V1 pages)" % comp))
    for name, opts, desc in duck:
        path = os.path.join(ext, name)
        con.execute(
            "COPY (SELECT i::INTEGER AS i32, (i * 1000003)::BIGINT AS i64, i / 7.0 AS f64, "
            "CASE WHEN i %% 5 = 0 THEN NULL ELSE 'row ' || i::VARCHAR END AS s, "
            "DATE '2000-01-01' + (i %% 1000)::INTEGER AS d FROM range(3000) t(i) ORDER BY i) "
            "TO '%s' (%s)" % (path.replace("'", "''"), opts))
        add(ext, name, desc)
    con.close()

    import fastparquet

    df = pd.DataFrame({"i": np.arange(1000, dtype=np.int64),
                       "s": ["v%d" % i if i % 7 else None for i in range(1000)]})
    name = "fastparquet_gzip.parquet"
    fastparquet.write(os.path.join(ext, name), df, compression="GZIP")
    add(ext, name, "fastparquet write(compression='GZIP')")


def write_nested(outdir, rows):
    """Nested columns into OUTDIR/nested/: lists, large and fixed-size lists,
    lists of lists, structs with lists, lists of structs, maps (with null
    values), empty / null lists, null elements; pyarrow (v1 / v2 pages,
    SNAPPY or none, dictionary on / off, legacy `.list.item` naming, tiny
    pages so rows span pages, page index, many row groups), Polars and
    DuckDB.  fastparquet writes no Parquet lists (its object columns become
    JSON/BSON bytes), so it has no file here."""
    nd = os.path.join(outdir, "nested")
    os.makedirs(nd, exist_ok=True)
    n = rows["types"]
    rng = np.random.default_rng(50)

    def lists(make, lo=0, hi=6, null_list=0.1, null_elem=0.1, keep=4):
        """n lists of make(k) elements; the first `keep` rows: [], None,
        [None], one full list"""
        out = []
        for i in range(n):
            if rng.random() < null_list:
                out.append(None)
                continue
            k = int(rng.integers(lo, hi + 1))
            vals = make(k)
            out.append([None if rng.random() < null_elem else v for v in vals])
        edge = [[], None, [None], make(3)]
        out[: min(keep, n)] = edge[: min(keep, n)]
        return out

    def ints(k, lo=-1000, hi=1000):
        return [int(v) for v in rng.integers(lo, hi, k)]

    def floats(k):
        v = [float(x) for x in (rng.standard_normal(k) * 100).astype(np.float32)]
        for j in range(k):
            r = rng.random()
            if r < 0.03:
                v[j] = float("nan")
            elif r < 0.05:
                v[j] = float("inf") if r < 0.04 else float("-inf")
        return v

    def strs(k):
        pool = SPECIAL_STRINGS + WORDS + ["ctl\x01\x1f", "x\u007fy"]
        return [pool[int(j)] for j in rng.integers(0, len(pool), k)]

    emb = np.round(rng.standard_normal((n, 8)), 4).astype(np.float32)
    ragged = [None if rng.random() < 0.05 else
              [float(x) for x in np.round(rng.standard_normal(int(rng.integers(0, 13))), 3).astype(np.float32)]
              for _ in range(n)]
    lstruct = lists(lambda k: [{"x": (None if rng.random() < 0.1 else int(rng.integers(-50, 50))),
                                "y": float(rng.standard_normal())} for _ in range(k)])
    maps = [None if rng.random() < 0.1 else
            [(WORDS[int(j)] + str(t), int(rng.integers(-10**12, 10**12))) for t, j in enumerate(rng.integers(0, 16, int(rng.integers(0, 5))))]
            for _ in range(n)]
    maps_null = [None if m is None else [(k, None if rng.random() < 0.3 else v) for k, v in m] for m in maps]
    st = [None if rng.random() < 0.1 else
          {"a": None if rng.random() < 0.1 else int(rng.integers(-99, 99)),
           "b": None if rng.random() < 0.1 else strs(int(rng.integers(0, 4)))} for _ in range(n)]
    ll = [None if rng.random() < 0.1 else
          [None if rng.random() < 0.1 else ints(int(rng.integers(0, 4))) for _ in range(int(rng.integers(0, 4)))]
          for _ in range(n)]
    dec = lists(lambda k: [Decimal("%de-2" % int(v)) for v in rng.integers(-10**8, 10**8, k)])
    when = lists(lambda k: [int(v) for v in rng.integers(-2**50, 2**50, k)])
    days = lists(lambda k: [int(v) for v in rng.integers(-20000, 20000, k)])
    blobs = lists(lambda k: [bytes(rng.integers(0, 256, int(rng.integers(0, 6)), dtype=np.uint8)) for _ in range(k)])
    table = pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "li32": pa.array(lists(ints), pa.list_(pa.int32())),
        "lf32": pa.array(lists(floats), pa.list_(pa.float32())),
        "lf64": pa.array(lists(floats), pa.list_(pa.float64())),
        "lstr": pa.array(lists(strs), pa.list_(pa.string())),
        "lbool": pa.array(lists(lambda k: [bool(v) for v in rng.integers(0, 2, k)]), pa.list_(pa.bool_())),
        "lbin": pa.array(blobs, pa.list_(pa.binary())),
        "ldec": pa.array(dec, pa.list_(pa.decimal128(10, 2))),
        "lts": pa.array(when, pa.list_(pa.timestamp("us"))),
        "ldate": pa.array(days, pa.list_(pa.date32())),
        "large": pa.array(lists(lambda k: ints(k, -2**62, 2**62)), pa.large_list(pa.int64())),
        "emb": pa.FixedSizeListArray.from_arrays(pa.array(emb.reshape(-1)), 8),
        "emb_list": pa.array([list(map(float, r)) for r in emb], pa.list_(pa.float32())),
        "ragged": pa.array(ragged, pa.list_(pa.float32())),
        "ll": pa.array(ll, pa.list_(pa.list_(pa.int64()))),
        "st": pa.array(st, pa.struct([("a", pa.int32()), ("b", pa.list_(pa.string()))])),
        "lst": pa.array(lstruct, pa.list_(pa.struct([("x", pa.int32()), ("y", pa.float64())]))),
        "m": pa.array(maps, pa.map_(pa.string(), pa.int64())),
        "mnull": pa.array(maps_null, pa.map_(pa.string(), pa.int64())),
        "req": pa.array([ints(int(rng.integers(0, 4))) for _ in range(n)],
                        pa.list_(pa.field("element", pa.int32(), nullable=False))),
    })
    table = table.cast(table.schema.set(table.schema.get_field_index("req"),
                                        pa.field("req", table.schema.field("req").type, nullable=False)))

    def w(name, desc, t=table, **kw):
        pq.write_table(t, os.path.join(nd, name), **kw)
        add(nd, name, desc)

    what = ("list<int32/float/double/string/bool/binary/decimal/timestamp/date>, large_list, "
            "fixed_size_list<float32,8>, list<list<int64>>, struct<a,b:list<string>>, "
            "list<struct<x,y>>, map<string,int64> (one with null values), a non-null list of non-null "
            "elements; null / empty lists, null elements")
    w("pyarrow_nested_default.parquet", "pq.write_table defaults (SNAPPY, dictionary, V1 pages): " + what)
    w("pyarrow_nested_plain.parquet", "use_dictionary=False, compression='NONE': " + what,
      use_dictionary=False, compression="NONE")
    w("pyarrow_nested_v2.parquet", "data_page_version='2.0', SNAPPY, dictionary: " + what,
      data_page_version="2.0")
    w("pyarrow_nested_v2_plain.parquet", "data_page_version='2.0', no dictionary, no compression: " + what,
      data_page_version="2.0", use_dictionary=False, compression="NONE")
    w("pyarrow_nested_legacy.parquet", "use_compliant_nested_type=False (.list.item naming): " + what,
      use_compliant_nested_type=False)
    w("pyarrow_nested_tiny_pages.parquet",
      "data_page_size=64, write_batch_size=3: many pages, rows spanning V1 pages: " + what,
      data_page_size=64, write_batch_size=3)
    w("pyarrow_nested_tiny_pages_v2.parquet",
      "V2 pages, data_page_size=64, write_batch_size=3, no dictionary: " + what,
      data_page_version="2.0", data_page_size=64, write_batch_size=3, use_dictionary=False)
    w("pyarrow_nested_page_index.parquet", "page index, data_page_size=256, row_group_size=400: " + what,
      write_page_index=True, data_page_size=256, row_group_size=400)
    w("pyarrow_nested_many_rowgroups.parquet", "row_group_size=97: " + what, row_group_size=97)
    w("pyarrow_nested_empty.parquet", "0 rows: " + what, table.slice(0, 0))
    # the newer encodings on nested leaves, LZ4_RAW pages
    sch = pq.ParquetFile(os.path.join(nd, "pyarrow_nested_default.parquet")).schema
    enc, nba = {}, 0
    for i in range(len(sch)):
        c = sch.column(i)
        if c.path == "id":
            continue
        if c.physical_type in ("INT32", "INT64"):
            enc[c.path] = "DELTA_BINARY_PACKED"
        elif c.physical_type in ("FLOAT", "DOUBLE"):
            enc[c.path] = "BYTE_STREAM_SPLIT"
        elif c.physical_type == "BYTE_ARRAY":
            enc[c.path] = ("DELTA_BYTE_ARRAY", "DELTA_LENGTH_BYTE_ARRAY")[nba % 2]
            nba += 1
    w("pyarrow_nested_delta_bss.parquet", "DELTA_BINARY_PACKED, DELTA_(LENGTH_)BYTE_ARRAY, BYTE_STREAM_SPLIT on "
      "nested leaves, compression='lz4' (LZ4_RAW), V1 pages: " + what,
      use_dictionary=False, column_encoding=enc, compression="lz4")
    w("pyarrow_nested_delta_bss_v2.parquet", "as pyarrow_nested_delta_bss, V2 pages, data_page_size=512: " + what,
      use_dictionary=False, column_encoding=enc, compression="lz4", data_page_version="2.0", data_page_size=512)

    # long lists spanning many pages: rows longer than a page
    m = max(n // 10, 20)
    long_t = pa.table({
        "id": pa.array(np.arange(m, dtype=np.int64)),
        "long": pa.array([[int(v) for v in rng.integers(-10**9, 10**9, int(rng.integers(0, 3000)))]
                          if i % 7 else None for i in range(m)], pa.list_(pa.int64())),
        "lstr": pa.array([strs(int(rng.integers(0, 500))) for i in range(m)], pa.list_(pa.string())),
    })
    w("pyarrow_nested_long_lists.parquet",
      "lists of up to 3000 int64 / 500 strings, data_page_size=1024: rows spanning many V1 pages", long_t,
      data_page_size=1024, write_batch_size=7)
    w("pyarrow_nested_long_lists_dict.parquet", "as pyarrow_nested_long_lists, dictionary pages, write_batch_size=1000",
      long_t, data_page_size=1024, write_batch_size=1000)

    import polars as pl
    pdf = pl.from_arrow(table.select(["id", "li32", "lf64", "lstr", "ll", "st", "lst", "emb", "ragged"]))
    for comp in ("snappy", "uncompressed"):
        name = "polars_nested_%s.parquet" % comp
        pdf.write_parquet(os.path.join(nd, name), compression=comp)
        add(nd, name, "Polars write_parquet(compression='%s'): List(Int32/Float64/String), List(List(Int64)), "
            "Struct with a list, List(Struct), Array(Float32, 8), nulls" % comp)

    import duckdb
    con = duckdb.connect()
    con.execute("SET threads TO 1")
    path = os.path.join(nd, "duckdb_nested.parquet")
    k = rows["duckdb"]
    con.execute(
        "COPY (SELECT i::BIGINT AS id, "
        "CASE WHEN i %% 9 = 4 THEN NULL WHEN i %% 9 = 5 THEN []::INTEGER[] "
        "ELSE [i::INTEGER, CASE WHEN i %% 3 = 0 THEN NULL ELSE -i::INTEGER END, (i * 7)::INTEGER][1:(i %% 4)] END AS li, "
        "CASE WHEN i %% 11 = 3 THEN NULL ELSE ['a' || i::VARCHAR, CASE WHEN i %% 5 = 0 THEN NULL ELSE 'q\"' || i::VARCHAR END] END AS ls, "
        "CASE WHEN i %% 13 = 1 THEN NULL ELSE [[i, i + 1], [], CASE WHEN i %% 2 = 0 THEN NULL ELSE [i * 3] END] END AS lll, "
        "CASE WHEN i %% 8 = 2 THEN NULL ELSE {'k': i::INTEGER, 'tags': ['t' || (i %% 5)::VARCHAR, 'u']} END AS st, "
        "CASE WHEN i %% 10 = 6 THEN NULL ELSE [{'x': i::INTEGER, 'y': i / 4.0}, {'x': NULL, 'y': -i / 8.0}] END AS lst, "
        "CASE WHEN i %% 7 = 0 THEN NULL ELSE MAP {'a': i, 'b' || (i %% 3)::VARCHAR: CASE WHEN i %% 4 = 0 THEN NULL ELSE i * 2 END} END AS mp, "
        "[i / 3.0, i / 7.0]::DOUBLE[2] AS arr "
        "FROM range(%d) t(i) ORDER BY i) TO '%s' (FORMAT parquet)" % (k, path.replace("'", "''")))
    add(nd, "duckdb_nested.parquet",
        "DuckDB COPY defaults (SNAPPY): INTEGER[], VARCHAR[], BIGINT[][], STRUCT with a list, STRUCT[], "
        "MAP(VARCHAR, BIGINT) with null values, DOUBLE[2]; null and empty lists, null elements")
    con.close()


# --------------------------------------------------------------------------
# Thrift Compact Protocol, just enough to edit a footer byte by byte
# --------------------------------------------------------------------------
# A struct is a list of [field id, wire type, value]; a list value is
# (element type, [values]); a map (key type, value type, [(k, v)]).
T_TRUE, T_FALSE, T_I8, T_I16, T_I32, T_I64, T_DOUBLE, T_BINARY, T_LIST, T_SET, T_MAP, T_STRUCT = range(1, 13)


class _TReader:
    def __init__(self, data):
        self.b, self.i = data, 0

    def byte(self):
        self.i += 1
        return self.b[self.i - 1]

    def uvar(self):
        v = shift = 0
        while True:
            c = self.byte()
            v |= (c & 0x7F) << shift
            shift += 7
            if not c & 0x80:
                return v

    def zz(self):
        u = self.uvar()
        return (u >> 1) ^ -(u & 1)

    def value(self, t, in_list=False):
        if t in (T_TRUE, T_FALSE):
            return (self.byte() == 1) if in_list else (t == T_TRUE)
        if t == T_I8:
            return self.byte()
        if t in (T_I16, T_I32, T_I64):
            return self.zz()
        if t == T_DOUBLE:
            self.i += 8
            return self.b[self.i - 8:self.i]
        if t == T_BINARY:
            n = self.uvar()
            self.i += n
            return self.b[self.i - n:self.i]
        if t in (T_LIST, T_SET):
            h = self.byte()
            n, et = h >> 4, h & 0x0F
            if n == 15:
                n = self.uvar()
            return (et, [self.value(et, True) for _ in range(n)])
        if t == T_MAP:
            n = self.uvar()
            if n == 0:
                return (0, 0, [])
            h = self.byte()
            return (h >> 4, h & 0x0F, [(self.value(h >> 4, True), self.value(h & 0x0F, True)) for _ in range(n)])
        if t == T_STRUCT:
            return self.struct()
        raise ValueError("thrift type %d" % t)

    def struct(self):
        fields, last = [], 0
        while True:
            h = self.byte()
            if h == 0:
                return fields
            t = h & 0x0F
            fid = last + (h >> 4) if h >> 4 else self.zz()
            last = fid
            fields.append([fid, t, self.value(t)])


def _t_uvar(out, v):
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)


def _t_value(out, t, v, in_list=False):
    if t in (T_TRUE, T_FALSE):
        if in_list:
            out.append(1 if v else 2)
    elif t == T_I8:
        out.append(v & 0xFF)
    elif t in (T_I16, T_I32, T_I64):
        _t_uvar(out, ((v << 1) ^ (v >> 63)) & 0xFFFFFFFFFFFFFFFF)
    elif t == T_DOUBLE:
        out += v
    elif t == T_BINARY:
        _t_uvar(out, len(v))
        out += v
    elif t in (T_LIST, T_SET):
        et, vals = v
        if len(vals) < 15:
            out.append((len(vals) << 4) | et)
        else:
            out.append(0xF0 | et)
            _t_uvar(out, len(vals))
        for x in vals:
            _t_value(out, et, x, True)
    elif t == T_MAP:
        kt, vt, items = v
        _t_uvar(out, len(items))
        if items:
            out.append((kt << 4) | vt)
            for k, x in items:
                _t_value(out, kt, k, True)
                _t_value(out, vt, x, True)
    elif t == T_STRUCT:
        _t_struct(out, v)


def _t_struct(out, fields):
    last = 0
    for fid, t, v in fields:
        d = fid - last
        if 0 < d <= 15:
            out.append((d << 4) | t)
        else:
            out.append(t)
            _t_uvar(out, ((fid << 1) ^ (fid >> 63)) & 0xFFFFFFFFFFFFFFFF)
        last = fid
        _t_value(out, t, v)
    out.append(0)


def _t_field(fields, fid):
    for f in fields:
        if f[0] == fid:
            return f
    return None


def rewrite_footer(src, dst, edit):
    """Copies a Parquet file with its FileMetaData decoded, edited by
    edit(fields) and encoded again (the data pages stay where they are)."""
    data = open(src, "rb").read()
    flen = int.from_bytes(data[-8:-4], "little")
    start = len(data) - 8 - flen
    fmd = _TReader(data[start:len(data) - 8]).struct()
    edit(fmd)
    out = bytearray()
    _t_struct(out, fmd)
    with open(dst, "wb") as f:
        f.write(data[:start] + bytes(out) + len(out).to_bytes(4, "little") + b"PAR1")


def write_crafted(outdir, rows):
    """Footers other writers produce that gpufeed must read as pyarrow does."""
    n = rows["frame"]
    t = pa.table({"id": pa.array(np.arange(n, dtype=np.int64)),
                  "x": pa.array(np.linspace(-1, 1, n)),
                  "s": pa.array(["k%d" % (i % 17) if i % 9 else None for i in range(n)])})
    tmp = os.path.join(outdir, ".crafted_src.parquet")
    pq.write_table(t, tmp, row_group_size=max(1, n // 3))

    def field15_list(fmd):
        # every ColumnMetaData gets field 15 as a list<i32> (an older writer's
        # use of the id that is now bloom_filter_length, an i32)
        for rg in _t_field(fmd, 4)[2][1]:
            for cc in _t_field(rg, 1)[2][1]:
                meta = _t_field(cc, 3)[2]
                meta[:] = [f for f in meta if f[0] != 15]
                meta.append([15, T_LIST, (T_I32, [3, 1, 4, 1, 5])])
                meta.sort(key=lambda f: f[0])
    name = "crafted_colmeta_field15_list.parquet"
    rewrite_footer(tmp, os.path.join(outdir, name), field15_list)
    os.remove(tmp)
    got = pq.read_table(os.path.join(outdir, name))
    assert got.equals(t), "pyarrow no longer reads the field-15 file as written"
    add(outdir, name, "pyarrow file whose footer was rewritten byte by byte: ColumnMetaData field 15 "
        "(bloom_filter_length, i32) as a list<i32>; Thrift readers skip it")


def _first_delta_widths(path, col):
    """The miniblock bit widths of the first DELTA_BINARY_PACKED block of an
    uncompressed, V1-paged, optional column: proves a fixture is wide."""
    data = open(path, "rb").read()
    cc = pq.ParquetFile(path).metadata.row_group(0).column(col)
    r = _TReader(data)
    r.i = cc.data_page_offset
    ph = r.struct()
    assert _t_field(ph, 1)[2] == 0, "not a V1 data page"
    p = r.i
    p += 4 + int.from_bytes(data[p:p + 4], "little")  # definition levels (RLE, length-prefixed)
    r.i = p
    r.uvar()  # block size
    nmb = r.uvar()
    r.uvar()  # total values
    r.uvar()  # first value
    r.uvar()  # the block's min delta
    return list(data[r.i:r.i + nmb])


def write_duckdb_delta64(ext):
    """DuckDB with PARQUET_VERSION v2 subtracts INT32 values in 64 bits:
    miniblocks of 33 bits and min deltas beyond int32, a UINT32 column's
    values beyond INT32_MAX among them (modulo 2^32). Every codec; each file
    comes with DuckDB's own reading of it as CSV (render_csv's format), the
    oracle (pyarrow fails on these files)."""
    import duckdb

    dd = os.path.join(ext, "duckdb_delta64")
    os.makedirs(dd, exist_ok=True)
    con = duckdb.connect()
    con.execute("SET threads TO 1")
    query = (
        "SELECT CASE WHEN i %% 3 = 0 THEN (CASE WHEN i %% 2 = 0 THEN -2147483648 ELSE 2147483647 END) "
        "ELSE ((hash(i) %% 4294967296)::BIGINT - 2147483648) END::INTEGER AS i32, "
        "CASE WHEN i %% 11 = 5 THEN NULL ELSE ((hash(i * 7) %% 4294967296)::BIGINT - 2147483648)::INTEGER END AS i32n, "
        "(i * 1000)::INTEGER AS seq, "
        "CASE WHEN i %% 5 = 0 THEN 4294967295 ELSE (hash(i * 3) %% 4294967296) END::UINTEGER AS u32, "
        "CASE WHEN i %% 7 = 0 THEN -9223372036854775808 WHEN i %% 7 = 1 THEN 9223372036854775807 "
        "ELSE (hash(i) %% 9223372036854775807)::BIGINT END AS i64, "
        "CASE WHEN i %% 13 = 0 THEN NULL ELSE 'v' || (hash(i) %% 100000)::VARCHAR END AS s "
        "FROM range(%d) t(i) ORDER BY i")
    for comp in ("uncompressed", "snappy", "gzip", "zstd", "brotli", "lz4", "lz4_raw"):
        name = "duckdb_v2_int32_wide_%s.parquet" % comp
        path = os.path.join(dd, name)
        con.execute("COPY (%s) TO '%s' (FORMAT parquet, PARQUET_VERSION v2, COMPRESSION %s)" % (
            query % 5000, path.replace("'", "''"), comp))
        rows = con.execute("SELECT * FROM read_parquet('%s')" % path.replace("'", "''")).fetchall()
        cols = [d[0] for d in con.description]
        with open(path[:-len(".parquet")] + ".csv", "w", encoding="utf-8", newline="\n") as f:
            f.write(",".join('"%s"' % c for c in cols) + "\n")
            for row in rows:
                f.write(",".join("" if v is None else ('"%s"' % v.replace('"', '""')) if isinstance(v, str)
                                 else str(v) for v in row) + "\n")
        add(dd, name, "DuckDB COPY, PARQUET_VERSION v2, COMPRESSION %s: INT32 deltas in 64 bits "
            "(33-bit miniblocks); %s is DuckDB's reading of it" % (comp, name[:-8] + ".csv"))
    con.close()
    widths = _first_delta_widths(os.path.join(dd, "duckdb_v2_int32_wide_uncompressed.parquet"), 0)
    assert max(widths) > 32, "DuckDB no longer writes wide INT32 miniblocks: %r" % widths


def generate(outdir, extended=False, small=False):
    """Write the corpus into outdir; returns the manifest entries."""
    global OUT_ROOT
    OUT_ROOT = outdir
    MANIFEST.clear()
    rows = SMALL_ROWS if small else ROWS
    os.makedirs(outdir, exist_ok=True)
    write_pyarrow(outdir, rows)
    write_pandas(outdir, rows)
    write_duckdb(outdir, rows)
    ext = None
    if extended:
        ext = os.path.join(outdir, "extended")
        os.makedirs(ext, exist_ok=True)
    write_polars(outdir, rows, ext)
    write_fastparquet(outdir, rows)
    if extended:
        write_extended(ext, rows)
        write_duckdb_delta64(ext)
    write_crafted(outdir, rows)
    write_nested(outdir, rows)
    with open(os.path.join(outdir, "MANIFEST.txt"), "w", encoding="utf-8", newline="\n") as f:
        f.write("# gpufeed fixture corpus, written by tests/gen_fixtures.py%s%s\n" % (
            " --extended" if extended else "", " --small" if small else ""))
        f.write("# pyarrow %s, pandas %s, numpy %s\n" % (pa.__version__, pd.__version__,
                                                      np.__version__))
        width = max(len(p) for p, _ in MANIFEST)
        # Base corpus first, extended/ after it; writing order otherwise.
        for path, desc in sorted(MANIFEST, key=lambda e: os.path.dirname(e[0]) != ""):
            f.write("%-*s  %s\n" % (width, path.replace(os.sep, "/"), desc))
    return list(MANIFEST)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--extended", action="store_true",
                    help="also write ZSTD/GZIP/LZ4/BROTLI/DELTA/BYTE_STREAM_SPLIT files "
                         "into OUTDIR/extended/")
    ap.add_argument("--small", action="store_true", help="fewer rows per file")
    args = ap.parse_args(argv)
    entries = generate(args.outdir, extended=args.extended, small=args.small)
    print("wrote %d files to %s" % (len(entries), args.outdir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
