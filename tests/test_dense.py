"""gpufeed-dense against the pyarrow + numpy reference (tests/dense_reference.py).

    .venv/bin/python tests/test_dense.py --bin build/asan/gpufeed-dense --fixtures build/fixtures

Prints `PASS name` / `FAIL name: reason` per check and `N passed, N failed`;
exits 1 when a check fails. Needs the fixture corpus (tests/gen_fixtures.py)
and examples/data/flights.parquet; writes its own files (sorted / wide /
multi-file datasets) into a temporary directory.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))
from dense_reference import NP_DTYPE, reference  # noqa: E402

DTYPES = ("f32", "f64", "i32", "i64", "f16", "bf16", "u8")
STAT_RE = re.compile(r"rows (\d+), features (\d+), dtype row bytes (\d+), files (\d+), units (\d+), "
                     r"row groups (\d+) \(pruned (\d+)\)")
BYTES_RE = re.compile(r"bytes read (\d+), seconds")


class Fail(Exception):
    pass


class Runner:
    def __init__(self, binary, tmp):
        self.bin, self.tmp, self.n = binary, tmp, 0

    def run(self, args):
        """-> (rc, stderr, output bytes or None, stats dict)."""
        self.n += 1
        out = os.path.join(self.tmp, "out.bin")
        if os.path.exists(out):
            os.unlink(out)
        p = subprocess.run([self.bin, *args, "-o", out], capture_output=True, text=True, timeout=300)
        data = open(out, "rb").read() if (p.returncode == 0 and os.path.exists(out)) else None
        st = {}
        m = STAT_RE.search(p.stderr)
        if m:
            st = dict(zip(("rows", "features", "row_bytes", "files", "units", "row_groups", "pruned"),
                          map(int, m.groups())))
        m = BYTES_RE.search(p.stderr)
        if m:
            st["bytes_read"] = int(m.group(1))
        return p.returncode, p.stderr.strip(), data, st


def cmd_line(args):
    return "gpufeed-dense " + " ".join(a if re.fullmatch(r"[\w./,=+-]+", a) else repr(a) for a in args)


def first_diff(got, exp, dtype):
    g = np.frombuffer(got, NP_DTYPE[dtype])
    if g.size != exp.size:
        return f"{len(got)} bytes written, reference has {exp.nbytes} ({exp.shape[0]} rows x {exp.shape[1]})"
    g = g.reshape(exp.shape)
    bad = np.argwhere(g.view(f"u{g.itemsize}") != exp.view(f"u{exp.itemsize}"))
    r, c = bad[0]
    return (f"{len(bad)} elements differ, first at row {r} feature {c}: got {g[r, c]!r} "
            f"(0x{int(g.view(f'u{g.itemsize}')[r, c]):x}), reference {exp[r, c]!r} "
            f"(0x{int(exp.view(f'u{exp.itemsize}')[r, c]):x})")


def expect_same(R, args, paths, dtype="f32", columns=None, fill=0.0, where=None, hash_buckets=None,
                unsafe=False, null_error=False, ulp=0):
    """Runs gpufeed-dense and the reference; equal bytes, or both refuse.
    Returns the stats of gpufeed's run."""
    exp, err = reference(paths, columns=columns, dtype=dtype, fill=fill, where=where,
                         hash_buckets=hash_buckets, unsafe=unsafe, null_error=null_error)
    rc, msg, data, st = R.run(args)
    if err is not None:
        if rc != 1:
            raise Fail(f"{cmd_line(args)}: the reference refuses ({err}) but gpufeed exited {rc}")
        m = re.search(r"feature '([^']+)'", msg)
        if not m:
            raise Fail(f"{cmd_line(args)}: refused without naming a feature: {msg}")
        # the feature gpufeed names must fail on its own in the reference too
        _, err1 = reference(paths, columns=[m.group(1)], dtype=dtype, fill=fill, where=where,
                            hash_buckets=hash_buckets, unsafe=unsafe, null_error=null_error)
        if err1 is None:
            raise Fail(f"{cmd_line(args)}: gpufeed blames feature '{m.group(1)}', which converts fine "
                       f"in the reference (reference: {err}); gpufeed: {msg}")
        if "\n" in msg or not msg.startswith("gpufeed-dense: "):
            raise Fail(f"{cmd_line(args)}: error is not one 'gpufeed-dense: ...' line: {msg!r}")
        return {"refused": msg}
    if rc != 0:
        raise Fail(f"{cmd_line(args)}: exit {rc}: {msg}")
    exp_b = np.ascontiguousarray(exp).tobytes()
    if data != exp_b:
        ok = False
        if ulp and dtype in ("f32", "f64") and len(data) == len(exp_b):
            # decimals wider than 64 bits: documented to be within one ulp
            it = "i4" if dtype == "f32" else "i8"
            g = np.frombuffer(data, it).astype(np.int64)
            e = np.frombuffer(exp_b, it).astype(np.int64)
            ok = bool(np.all(np.abs(g - e) <= ulp))
        if not ok:
            raise Fail(f"{cmd_line(args)}: {first_diff(data, exp, dtype)}")
    if st.get("rows") != exp.shape[0] or st.get("features") != exp.shape[1]:
        raise Fail(f"{cmd_line(args)}: stats line says {st}, reference shape {exp.shape}")
    if len(msg.splitlines()) != 2 or "bytes_read" not in st:
        raise Fail(f"{cmd_line(args)}: stderr is not the two stats lines: {msg!r}")
    return st


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "asan", "gpufeed-dense"))
    ap.add_argument("--fixtures", default=os.path.join(ROOT, "build", "fixtures"))
    ap.add_argument("-k", help="only checks whose name contains this")
    ap.add_argument("--times", action="store_true", help="print each check's seconds")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="gpufeed_dense_")
    try:
        return run_all(a, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_all(a, tmp):
    fx = a.fixtures
    flights = os.path.join(ROOT, "examples", "data", "flights.parquet")
    # run a private copy: a rebuild of --bin while the checks run cannot break them
    binary = os.path.join(tmp, "gpufeed-dense")
    try:
        shutil.copy2(a.bin, binary)
    except OSError as e:
        print(f"FAIL setup: cannot copy {a.bin}: {e}")
        print("0 passed, 1 failed")
        return 1
    R = Runner(binary, tmp)
    passed = failed = 0
    t_start = time.time()

    def check(name, fn):
        nonlocal passed, failed
        if a.k and a.k not in name:
            return
        t0 = time.time()
        try:
            note = fn()
            if a.times:
                note = f"{note or ''} [{time.time() - t0:.1f} s]"
            passed += 1
            print(f"PASS {name}" + (f" ({note})" if isinstance(note, str) and note else ""), flush=True)
        except Exception as e:  # Fail, or a bug in the check itself: a failure too
            failed += 1
            why = str(e) if isinstance(e, Fail) else f"{type(e).__name__}: {e}"
            why = why.replace("\n", " | ")
            print(f"FAIL {name}: {why[:3000]}", flush=True)

    def F(name):
        return os.path.join(fx, name)

    corpus = sorted(n for n in os.listdir(fx) if n.endswith(".parquet")) if os.path.isdir(fx) else []
    if not corpus:
        print(f"FAIL setup: no fixtures in {fx}")
        print("0 passed, 1 failed")
        return 1

    # ---- 1. every corpus file x dtype: default columns (SAFE), --unsafe-cast,
    # --unsafe-cast --fill -1 (u8: also --fill 7)
    for name in corpus:
        path = F(name)
        empty = pq.ParquetFile(path).metadata.num_rows == 0
        for dt in DTYPES:
            def corpus_check(path=path, dt=dt, empty=empty):
                if empty:
                    rc, msg, _, _ = R.run(["--dtype", dt, path])
                    if rc != 1 or os.path.basename(path) not in msg:
                        raise Fail(f"empty file: exit {rc}, {msg!r}")
                    return "empty file refused"
                notes = []
                st = expect_same(R, ["--dtype", dt, path], [path], dtype=dt)
                notes.append("safe: refused" if "refused" in st else "safe: equal")
                expect_same(R, ["--dtype", dt, "--unsafe-cast", path], [path], dtype=dt, unsafe=True)
                st = expect_same(R, ["--dtype", dt, "--fill", "-1", "--unsafe-cast", path], [path], dtype=dt,
                                 fill=-1.0, unsafe=True)
                notes.append("fill -1: refused" if "refused" in st else "fill -1: equal")
                if dt == "u8":
                    expect_same(R, ["--dtype", dt, "--fill", "7", "--unsafe-cast", path], [path], dtype=dt,
                                fill=7.0, unsafe=True)
                return ", ".join(notes)
            check(f"corpus {name} --dtype {dt}", corpus_check)

    # ---- 2. unit sizes and batch sizes do not change the output. Units below a
    # page's row count are kept to files where that stays cheap (see the
    # re-read check below).
    multi = [(F("pyarrow_tiny_pages.parquet"), (100, 1000, 65536)),
             (F("pyarrow_v2_tiny_pages.parquet"), (7, 100, 65536)),
             (F("pyarrow_many_rowgroups.parquet"), (10, 100, 65536)),
             (F("fastparquet_snappy.parquet"), (100, 1000, 65536)),
             (F("duckdb_two_rowgroups.parquet"), (1000, 65536, 1 << 20)),
             (flights, (20000, 65536, 1 << 20))]
    for path, sizes in multi:
        def unit_check(path=path, sizes=sizes):
            exp, err = reference([path], unsafe=True)  # integers past 2^24 round to f32
            if err:
                raise Fail(f"reference: {err}")
            units = {}
            for ur in sizes:
                for batch in ((65536, 777) if ur == sizes[1] else (65536,)):
                    args = ["--unit-rows", str(ur), "--batch", str(batch), "--unsafe-cast", path]
                    rc, msg, data, st = R.run(args)
                    if rc != 0:
                        raise Fail(f"{cmd_line(args)}: exit {rc}: {msg}")
                    if data != exp.tobytes():
                        raise Fail(f"{cmd_line(args)}: {first_diff(data, exp, 'f32')}")
                    units[ur] = st["units"]
            if units[sizes[0]] < units[sizes[-1]]:
                raise Fail(f"more rows per unit gave more units: {units}")
            return f"units {units}"
        check(f"unit-rows {os.path.basename(path)}", unit_check)

    def unit_reread():
        # duckdb_two_rowgroups: 2 row groups of 122880 + 27120 rows, one data
        # page per column chunk. Units smaller than a page must not make each
        # unit read (and decompress) the whole page again.
        path = F("duckdb_two_rowgroups.parquet")
        _, msg0, _, st0 = R.run(["--unit-rows", "65536", path])
        _, msg1, _, st1 = R.run(["--unit-rows", "1000", path])
        if "bytes_read" not in st0 or "bytes_read" not in st1:
            raise Fail(f"no stats: {msg0!r} / {msg1!r}")
        if st1["bytes_read"] > 2 * st0["bytes_read"]:
            raise Fail(f"--unit-rows 1000: {st1['units']} units read {st1['bytes_read']} bytes; "
                       f"--unit-rows 65536: {st0['units']} units read {st0['bytes_read']} bytes "
                       f"(file {os.path.getsize(path)} bytes)")
        return f"{st1['bytes_read']} vs {st0['bytes_read']} bytes"
    check("unit-rows below the page size does not re-read pages", unit_reread)

    # ---- 3. explicit columns
    explicit = [
        ("struct leaves and a column twice", "pyarrow_struct.parquet",
         "row,s.a,outer.k,outer.inner.x,outer.inner.y,req.id,s.a", ("f32", "f64", "i64")),
        ("column twice", "pyarrow_default.parquet", "f64,i32,f64,u16,s.a", ("f64",)),
        ("pyarrow temporal", "pyarrow_default.parquet",
         "date32,time32_ms,time64_us,time64_ns,ts_s,ts_ms,ts_us,ts_ns,ts_ms_utc,ts_us_utc,ts_ns_ny", ("f64", "i64", "f32")),
        ("legacy temporal", "pyarrow_v1_legacy.parquet", "u32,date32,time32_ms,time64_us,ts_s,ts_ns,ts_ns_ny",
         ("f64", "i64")),
        ("no_store_schema temporal", "pyarrow_no_store_schema.parquet", "date32,time32_ms,ts_s,ts_ns_ny,u32",
         ("f64", "i64")),
        ("duckdb temporal", "duckdb_default.parquet", "d,t,ts,ts_tz,ts_ms,ts_ns,huge,st.a", ("f64", "i64", "f32")),
        ("polars temporal", "polars_snappy.parquet", "date,ts_us,ts_ns,ts_ms_utc,time,dur,st.a", ("f64", "i64")),
        ("pandas timestamps", "pandas_default.parquet", "when,when_utc,count,row_id", ("f64", "i64")),
        ("fastparquet timestamps", "fastparquet_default.parquet", "when,maybe_int,id", ("f64", "i64")),
        ("INT96 fastparquet", "fastparquet_int96.parquet", "when,id", ("i64", "f64")),
        ("INT96 pyarrow", "pyarrow_int96_crc.parquet", "ts_s,ts_ms,ts_us,ts_ns,ts_ms_utc,ts_us_utc,ts_ns_ny",
         ("i64", "f64")),
        ("edge values", "pyarrow_single_row.parquet", "i64,u64,ts_ns,f16,dec5_0,dec9_2", ("f64", "i64", "f32", "bf16")),
        # decimals: value / 10^scale rounded once (|unscaled| <= 2^53 and 10^scale <= 10^22 is one exact division)
        ("small decimals", "pyarrow_default.parquet", "dec5_0,dec9_2", ("f64", "f32", "i64", "f16", "bf16")),
        ("small int decimals", "duckdb_default.parquet", "dec4_1,dec9_2", ("f64", "f32", "i64")),
        ("v2 int decimals and all-null columns", "pyarrow_v2_snappy.parquet", "dec5_0,dec9_2,all_null_i32,all_null_f64",
         ("f64", "i64")),
        # 18-digit decimals: |unscaled| above 2^53, the exact quotient needs more than one double division
        ("18-digit decimal FLBA", "pyarrow_default.parquet", "dec18_4", ("f64", "f32", "i64")),
        ("18-digit decimal INT64", "pyarrow_nodict.parquet", "dec18_4", ("f64", "f32", "i64")),
        ("18-digit decimal no_store_schema", "pyarrow_no_store_schema.parquet", "dec18_4", ("f64",)),
        ("18-digit decimal duckdb", "duckdb_default.parquet", "dec18_3", ("f64", "i64")),
        ("18-digit decimal polars", "polars_snappy.parquet", "dec10_2", ("f64", "i64")),
        # wider than 64 bits (FLBA 13..16 bytes)
        ("38-digit decimal", "pyarrow_default.parquet", "dec38_10", ("f64", "f32", "i64")),
        ("38-digit decimal v1", "pyarrow_v1_legacy.parquet", "dec38_10", ("f64",)),
        ("30-digit decimal duckdb", "duckdb_default.parquet", "dec30_5", ("f64", "i64")),
        ("30-digit decimal polars", "polars_snappy.parquet", "dec30_4", ("f64",)),
    ]
    for label, fname, cols, dts in explicit:
        for dt in dts:
            def col_check(fname=fname, cols=cols, dt=dt):
                path = F(fname)
                notes = []
                for unsafe in (False, True):
                    args = ["--columns", cols, "--dtype", dt, *(["--unsafe-cast"] if unsafe else []), path]
                    st = expect_same(R, args, [path], dtype=dt, columns=cols.split(","), unsafe=unsafe,
                                     ulp=1 if ("38-digit" in label or "30-digit" in label) else 0)
                    notes.append(("unsafe" if unsafe else "safe") + (": refused" if "refused" in st else ": equal"))
                return ", ".join(notes)
            check(f"columns {label} ({fname} {cols}) --dtype {dt}", col_check)

    hashed = [
        ("pyarrow_default.parquet", "str,large_str,bin,dict_str,fsb4,s.b,i32"),
        ("pyarrow_heavy_nulls.parquet", "str,bin,dict_str,fsb4,s.b"),
        ("duckdb_default.parquet", "str,blob,uuid,mood,js,st.b"),
        ("polars_snappy.parquet", "str,cat,bin,st.b"),
        ("pandas_default.parquet", "category,name"),
        ("fastparquet_snappy.parquet", "name,cat,payload,meta"),
        ("pyarrow_dict_fallback.parquet", "high_card,low_card,id"),
        ("pyarrow_struct.parquet", "s.b,req.tag"),
    ]
    for fname, cols in hashed:
        for dt in ("i64", "f32"):
            def hash_check(fname=fname, cols=cols, dt=dt):
                path = F(fname)
                expect_same(R, ["--columns", cols, "--hash", "1000", "--dtype", dt, path], [path], dtype=dt,
                            columns=cols.split(","), hash_buckets=1000)
                expect_same(R, ["--columns", cols, "--hash", "7", "--dtype", dt, "--fill", "-1", path], [path],
                            dtype=dt, columns=cols.split(","), hash_buckets=7, fill=-1.0)
            check(f"hash {fname} {cols} --dtype {dt} vs xxhash", hash_check)

    # ---- 3b. rounding edge cases: ties, double-rounding traps, overflow to inf,
    # subnormals, integer boundaries; one column at a time, SAFE and UNSAFE
    edge_path = os.path.join(tmp, "edges.parquet")
    t2, t53, t63 = 2.0 ** -8, 2 ** 53, 2 ** 63
    f64_edges = [
        0.0, -0.0, float("nan"), float("inf"), float("-inf"), 0.5, -0.5, 1.5, 2.5, -2.5, 255.9, 256.0, -1.0,
        1 + t2, 1 + 3 * t2, 1 + t2 + 2.0 ** -30, 1 - 2.0 ** -9,          # bf16 ties / above a tie
        (2 - 2.0 ** -8) * 2.0 ** 127, (2 - 2.0 ** -8 - 2.0 ** -20) * 2.0 ** 127, 3.0e38, 1e300, -1e300,
        2.0 ** -130, 2.0 ** -133, 2.0 ** -134, 3 * 2.0 ** -134, 2.0 ** -126 * (1 - 2.0 ** -9), 5e-324,
        2049.0, 2051.0, 2049 + 2.0 ** -20, 65504.0, 65519.0, 65519.99, 65520.0, 2.0 ** -24, 2.0 ** -25,
        3 * 2.0 ** -25, 2.0 ** -14 * (1 - 2.0 ** -12),                   # f16 ties, overflow, subnormals
        1 + 2.0 ** -24, 1 + 3 * 2.0 ** -24, 2.0 ** 128 - 2.0 ** 103, 2.0 ** 128 - 2.0 ** 104, 1.0e-45,
        2.0 ** 31 - 0.5, 2.0 ** 31, -(2.0 ** 31), -(2.0 ** 31) - 1, 2.0 ** 63, -(2.0 ** 63), 9.3e18, 127.0, 1e9,
    ]
    i64_edges = [0, 1, -1, 255, 256, -128, 257, 259, 2049, 2051, 65504, 65519, 65520, 2 ** 24 + 1, 2 ** 24 + 3,
                 2 ** 31 - 1, 2 ** 31, -(2 ** 31), -(2 ** 31) - 1, t53 + 1, t53 + 3, t63 - 1, -t63, -t63 + 1,
                 2 ** 62 + 2 ** 54 + 1, 2 ** 62 + 2 ** 38 + 1, -(2 ** 62 + 2 ** 54 + 1), 2 ** 62 + 2 ** 54]
    u64_edges = [0, 1, 255, 256, 2 ** 64 - 1, t63, t63 + 1, t63 + 2 ** 39 + 1, t63 + 2 ** 55 + 1, 2 ** 64 - 2 ** 39,
                 2 ** 32, t53 + 1]
    i32_edges = [0, -1, 1, 255, 256, 2 ** 24 + 1, 2 ** 24 + 3, 2 ** 31 - 1, -(2 ** 31), 257, 2049, 65520, -65520]
    f16_edges = [0.0, -0.0, 65504.0, -65504.0, 2.0 ** -24, 2.0 ** -14, 1.0009765625, 255.0, 256.0, -1.5, 0.5,
                 float("nan"), float("inf"), 2049.0 - 1]
    n_e = max(map(len, (f64_edges, i64_edges, u64_edges, i32_edges, f16_edges))) + 1

    def pad(v):
        return v + [None] * (n_e - len(v))
    pq.write_table(pa.table({
        "f64": pa.array(pad(f64_edges), pa.float64()),
        "f32": pa.array(pad([float(np.float32(x)) if abs(x) < 3.4e38 or x != x else x for x in f64_edges]),
                        pa.float32()),
        "i64": pa.array(pad(i64_edges), pa.int64()),
        "u64": pa.array(pad(u64_edges), pa.uint64()),
        "i32": pa.array(pad(i32_edges), pa.int32()),
        "f16": pa.array(pad([None if x is None else np.float16(x) for x in f16_edges]), pa.float16()),
    }), edge_path)
    for col in ("f64", "f32", "i64", "u64", "i32", "f16"):
        def edge_check(col=col):
            notes = []
            for dt in DTYPES:
                for unsafe in (False, True):
                    args = ["--columns", col, "--dtype", dt, *(["--unsafe-cast"] if unsafe else []), edge_path]
                    st = expect_same(R, args, [edge_path], dtype=dt, columns=[col], unsafe=unsafe)
                    if not unsafe:
                        notes.append(f"{dt}:{'refused' if 'refused' in st else 'equal'}")
            return "safe " + " ".join(notes)
        check(f"rounding edge cases, column {col}, every dtype, safe and unsafe", edge_check)

    # ---- 4. multi-file datasets: list, directory, glob
    ddir = os.path.join(tmp, "ds")
    os.makedirs(ddir)
    same = ["pyarrow_uncompressed.parquet", "pyarrow_default.parquet", "pyarrow_nodict.parquet",
            "pyarrow_many_rowgroups.parquet"]
    # names chosen so that sorted order differs from the order of `same`
    copies = []
    for i, n in enumerate(same):
        dst = os.path.join(ddir, f"part-{(7 * i) % 5}-{n}")
        shutil.copy(F(n), dst)
        copies.append(dst)
    open(os.path.join(ddir, "_SUCCESS"), "w").close()
    open(os.path.join(ddir, "notes.txt"), "w").write("not parquet")
    by_name = sorted(copies)

    def multi_list():
        paths = [F("pyarrow_nodict.parquet"), F("pyarrow_default.parquet")]
        st = expect_same(R, ["--unsafe-cast", *paths], paths, unsafe=True)
        if st["files"] != 2:
            raise Fail(f"files {st['files']}")
        paths3 = [F("fastparquet_snappy.parquet"), F("fastparquet_default.parquet"), F("fastparquet_int96.parquet")]
        expect_same(R, ["--dtype", "f64", "--unsafe-cast", *paths3], paths3, dtype="f64", unsafe=True)
    check("multi-file list of files (order as given)", multi_list)

    def multi_dir():
        st = expect_same(R, ["--dtype", "f64", "--unsafe-cast", ddir], by_name, dtype="f64", unsafe=True)
        if st["files"] != len(copies):
            raise Fail(f"files {st['files']}, expected {len(copies)}")
        exp, _ = reference(by_name, unsafe=True)
        rc, msg, data, _ = R.run(["--unsafe-cast", ddir])
        if data != exp.tobytes():
            raise Fail("directory: f32 output differs from the concatenation by name")
    check("multi-file directory (sorted *.parquet, other files ignored)", multi_dir)

    def multi_glob():
        pat = os.path.join(ddir, "part-*.parquet")
        st = expect_same(R, ["--dtype", "f64", "--unsafe-cast", pat], by_name, dtype="f64", unsafe=True)
        if st["files"] != len(copies):
            raise Fail(f"files {st['files']}")
        pat2 = os.path.join(ddir, "part-[0-2]-*.parquet")
        sub = [p for p in by_name if re.search(r"part-[0-2]-", os.path.basename(p))]
        expect_same(R, ["--columns", "i32,f64,str", "--hash", "100", pat2, F("pyarrow_default.parquet")],
                    sub + [F("pyarrow_default.parquet")], columns=["i32", "f64", "str"], hash_buckets=100)
    check("multi-file glob (sorted matches) and glob + file", multi_glob)

    def multi_where():
        expect_same(R, ["--dtype", "f64", "--where", "i32 > 0 and str is not null", ddir], by_name, dtype="f64",
                    where="i32 > 0 and str is not null")
    check("multi-file directory with --where", multi_where)

    # ---- 5. --where vs the reference filter
    # equality constants taken from the data, so that they match rows
    tv = pq.read_table(F("pyarrow_default.parquet"), columns=["i16", "i32", "f32", "f64"])

    def some(col, k=5):
        v = [x for x in tv.column(col).to_pylist() if x is not None and x == x and abs(x) not in (float("inf"),)]
        return v[k]
    v16, v32, vf32, vf64 = some("i16"), some("i32"), some("f32", 7), some("f64", 9)
    wheres = [
        ("pyarrow_default.parquet", "i32,f64,u16,s.a", [
            "i32 < 0", "i32 <= -5", f"i16 == {v16}", f"i16 = {v16}", f"i32 == {v32}.0", f"f32 == {vf32!r}",
            f"f64 == {vf64!r}", f"f64 in (1.5, {vf64!r})", f"i32 in ({v32}, 12345)", "f64 >= 0.5", "u16 > 1000", "i32 between -100000 and 100000000",
            "i8 in (1, 2, 3, -128, 127)", "str is null", "str is not null", "str == 'a,b,c'", "str < 'm'",
            "str >= 'm' and str <= 'zzz'", "dict_str in ('blue', 'green', 'nope')", "str between 'c' and 'k'",
            "f32 > 0 and str is not null and i64 < 0", "f64 < 1e300", "f64 > -1e300",
            "ts_us > 0", "date32 between 0 and 20000", "s.a > 0", "s.a is null", "u64 > 9000000000000000000",
            "i64 >= 0 && i32 < 0", "i32 < 2.5", "i32 >= -2.5", "f32 > 1", "u8 in (0, 255)",
            "large_str is not null and bin is null", "bool == 1", "f16 < 0.5", "i64 < 1e19", "u32 > 3000000000",
            "fsb4 > 'a'", "bin == ''",
            # unsigned 64-bit values above 2^63 against a double / a constant above INT64_MAX
            "u64 > 1e19", "u64 >= 18446744073709551615",
            # decimals compare by value (FLBA decimals here)
            "dec9_2 > 0", "dec18_4 <= 100.5", "dec5_0 in (0, 99999)", "dec38_10 > 0",
        ]),
        ("pyarrow_nodict.parquet", "i32,dec9_2", ["dec9_2 > 0", "dec18_4 < 0", "dec9_2 between -10 and 10.5"]),
        ("pyarrow_many_rowgroups.parquet", "i32,f64,u8", [
            "i32 > 0", "f64 between -1 and 1", "str in ('a,b,c', '')", "i64 is null", "u8 < 10 and i16 > 0",
        ]),
        ("duckdb_default.parquet", "i32,f64,huge", ["f64 >= 0", "f32 < 0", "str is null", "ts > 0", "dec9_2 > 0"]),
        ("pyarrow_struct.parquet", "row,s.a,outer.inner.x", ["s.a >= 0", "outer.inner.x > 0", "outer.k is null",
                                                              "req.tag >= 'm'", "s.b == ''"]),
        (flights, "dep_delay,arr_delay,distance", [
            "dep_delay > 60 and origin == 'JFK'", "carrier in ('AA', 'UA')", "arr_delay is null",
            "month between 3 and 4 and day == 1", "tailnum is null", "time_hour > 0",
        ]),
    ]
    for fname, cols, conds in wheres:
        path = fname if os.path.isabs(fname) else F(fname)
        for cond in conds:
            def where_check(path=path, cols=cols, cond=cond):
                st = expect_same(R, ["--columns", cols, "--where", cond, path], [path], columns=cols.split(","),
                                 where=cond)
                return f"{st.get('rows')} rows"
            check(f"where {os.path.basename(path)} {cond!r}", where_check)

    # ---- pruning on a file sorted by `key`, 20 row groups with statistics
    sorted_path = os.path.join(tmp, "sorted.parquet")
    n = 200_000
    rng = np.random.default_rng(7)
    pq.write_table(pa.table({
        "key": np.arange(n, dtype=np.int64),
        "x": rng.standard_normal(n),
        "y": rng.integers(-1000, 1000, n).astype(np.int32),
        "name": pa.array([f"k{i:08d}" for i in range(n)]),
    }), sorted_path, row_group_size=10_000, write_statistics=True)
    rc, msg, _, base = R.run(["--columns", "key,x,y", sorted_path])
    for cond, min_pruned in [("key between 50000 and 59999", 19), ("key < 1000", 19), ("name == 'k00012345'", 19),
                             ("key in (5, 150000)", 18), ("key >= 199990 and y > 0", 19), ("x > 100", 0),
                             ("key > 105000 and key <= 115000", 18)]:
        def prune_check(cond=cond, min_pruned=min_pruned):
            if rc != 0:
                raise Fail(f"without predicate: exit {rc}: {msg}")
            st = expect_same(R, ["--columns", "key,x,y", "--where", cond, sorted_path], [sorted_path],
                             columns=["key", "x", "y"], where=cond)
            if st["pruned"] < max(min_pruned, 1) and min_pruned:
                raise Fail(f"pruned {st['pruned']} of {st['row_groups']} row groups, expected >= {min_pruned}")
            if st["bytes_read"] >= base["bytes_read"] and min_pruned:
                raise Fail(f"bytes read {st['bytes_read']} not below {base['bytes_read']} without the predicate")
            return f"pruned {st['pruned']}/{st['row_groups']}, bytes read {st['bytes_read']} vs {base['bytes_read']}"
        check(f"pruning {cond!r}", prune_check)

    # ---- projection: one column of a wide file reads about that column's chunks
    wide_path = os.path.join(tmp, "wide.parquet")
    pq.write_table(pa.table({f"c{i}": rng.standard_normal(20_000) for i in range(48)}), wide_path,
                   row_group_size=5_000)

    def projection():
        md = pq.ParquetFile(wide_path).metadata
        ci = md.schema.to_arrow_schema().get_field_index("c17")
        chunk = sum(md.row_group(r).column(ci).total_compressed_size for r in range(md.num_row_groups))
        size = os.path.getsize(wide_path)
        st1 = expect_same(R, ["--columns", "c17", wide_path], [wide_path], columns=["c17"])
        stall = expect_same(R, [wide_path], [wide_path])
        b1, ball = st1["bytes_read"], stall["bytes_read"]
        if not (chunk <= b1 <= chunk + md.serialized_size + 8 + 4096):
            raise Fail(f"one column read {b1} bytes, its chunks are {chunk} (footer {md.serialized_size})")
        if not (b1 * 10 < size and b1 * 10 < ball):
            raise Fail(f"one column read {b1} bytes of a {size}-byte file (all columns: {ball})")
        return f"c17: {b1} bytes read, chunks {chunk}, all 48 columns {ball}, file {size}"
    check("projection: one column of 48 reads its chunks only", projection)

    # ---- 6. bad input
    def refuse(args, must_name=(), rc_want=1):
        rc, msg, _, _ = R.run(args)
        if rc != rc_want:
            raise Fail(f"{cmd_line(args)}: exit {rc} (want {rc_want}): {msg!r}")
        if "\n" in msg:
            raise Fail(f"{cmd_line(args)}: message is not one line: {msg!r}")
        if not msg.startswith("gpufeed-dense: "):
            raise Fail(f"{cmd_line(args)}: message does not start with 'gpufeed-dense: ': {msg!r}")
        for w in must_name:
            if w not in msg:
                raise Fail(f"{cmd_line(args)}: message does not name {w!r}: {msg!r}")
        return msg

    pd_ = F("pyarrow_default.parquet")
    emptydir = os.path.join(tmp, "nothing_here")
    os.makedirs(emptydir)
    open(os.path.join(emptydir, "readme.txt"), "w").write("x")
    seconddir = os.path.join(tmp, "schemas")
    os.makedirs(seconddir)
    shutil.copy(F("pyarrow_default.parquet"), os.path.join(seconddir, "a.parquet"))
    shutil.copy(F("pandas_default.parquet"), os.path.join(seconddir, "b.parquet"))
    bad = [
        ("missing column", ["--columns", "i32,nope", pd_], ("nope", "pyarrow_default.parquet")),
        ("string column without --hash", ["--columns", "str", pd_], ("str",)),
        ("binary column without --hash", ["--columns", "i32,bin", pd_], ("bin",)),
        ("schemas differ (column missing in the 2nd file)", ["--columns", "i32", pd_, F("pandas_default.parquet")],
         ("i32", "pandas_default.parquet")),
        ("schemas differ, default columns", [pd_, F("pyarrow_struct.parquet")], ("pyarrow_struct.parquet",)),
        ("schemas differ in a directory", [seconddir], ("b.parquet",)),
        ("predicate on a missing column", ["--where", "nope < 3", pd_], ("nope",)),
        ("string constant against a numeric column", ["--where", "i32 < 'a'", pd_], ("i32",)),
        ("numeric constant against a string column", ["--columns", "i32", "--where", "str == 3", pd_], ("str",)),
        ("empty dataset (0 rows)", [F("pyarrow_empty.parquet")], ("pyarrow_empty.parquet",)),
        ("glob matching nothing", [os.path.join(tmp, "nomatch-*.parquet")], ("nomatch-*.parquet",)),
        ("directory without parquet files", [emptydir], ("nothing_here",)),
        ("missing file", [os.path.join(tmp, "missing.parquet")], ("missing.parquet",)),
        ("not a parquet file", [os.path.join(emptydir, "readme.txt")], ("readme.txt",)),
        ("--fill -1 with --dtype u8", ["--dtype", "u8", "--fill", "-1", "--columns", "u8", pd_], ("u8",)),
        ("--fill 0.5 with --dtype i32", ["--dtype", "i32", "--fill", "0.5", "--columns", "i32", pd_], ("i32",)),
        ("--fill 300 with --dtype u8", ["--dtype", "u8", "--fill", "300", "--columns", "u8", pd_], ("u8",)),
        ("--fill nan with --dtype i64", ["--dtype", "i64", "--fill", "nan", "--columns", "i64", pd_], ("i64",)),
        ("safe cast: int64 out of i32 range", ["--dtype", "i32", "--columns", "i64", pd_], ("i64",)),
        ("safe cast: NaN to i64", ["--dtype", "i64", "--columns", "f64", pd_], ("f64",)),
        ("safe cast: fractional decimal to i64", ["--dtype", "i64", "--columns", "dec9_2", pd_], ("dec9_2",)),
    ]
    for label, args, names in bad:
        check(f"bad input: {label}", lambda args=args, names=names: refuse(args, names))

    def null_error_names_row():
        cols = ["f32", "i32"]
        t = pq.read_table(pd_, columns=cols)
        first = {c: int(np.argmax(~np.asarray(t.column(c).is_valid()))) for c in cols}
        msg = refuse(["--null-error", "--columns", ",".join(cols), pd_])
        m = re.search(r"feature '([^']+)'", msg)
        if not m or m.group(1) not in first:
            raise Fail(f"message names no feature of {cols}: {msg!r}")
        if f"row {first[m.group(1)]}" not in msg:
            raise Fail(f"feature {m.group(1)}'s first null is row {first[m.group(1)]}, message: {msg!r}")
        return msg
    check("bad input: --null-error on columns with nulls names the feature and row", null_error_names_row)

    # The null policy and SAFE casts apply to the rows the predicates select
    # (pyarrow: filter, then cast): a dropped row cannot make the load fail.
    def null_error_ok():
        expect_same(R, ["--null-error", "--columns", "i32", "--where", "i32 is not null", pd_], [pd_], columns=["i32"],
                    where="i32 is not null", null_error=True)
    check("--null-error with 'col is not null' loads the selected rows", null_error_ok)

    def safe_cast_selected():
        expect_same(R, ["--dtype", "u8", "--columns", "i32", "--where", "i32 >= 0 and i32 <= 255", pd_], [pd_],
                    dtype="u8", columns=["i32"], where="i32 >= 0 and i32 <= 255")
        expect_same(R, ["--dtype", "i64", "--columns", "f64", "--where", "f64 == 0", pd_], [pd_],
                    dtype="i64", columns=["f64"], where="f64 == 0")
    check("SAFE cast checks only the selected rows", safe_cast_selected)

    usage = [
        ("unknown dtype", ["--dtype", "f8", pd_], ("f8",)),
        ("unknown option", ["--frobnicate", pd_], ("--frobnicate",)),
        ("--fill not a number", ["--fill", "abc", pd_], ("abc",)),
        ("--hash 0", ["--hash", "0", pd_], ("--hash",)),
        ("bad --where syntax", ["--where", "i32 <", pd_], ("--where",)),
    ]
    for label, args, names in usage:
        def usage_check(args=args, names=names):
            rc, msg, _, _ = R.run(args)
            if rc != 2:
                raise Fail(f"{cmd_line(args)}: exit {rc}, want 2: {msg!r}")
            for w in names:
                if w not in msg:
                    raise Fail(f"{cmd_line(args)}: message does not name {w!r}: {msg!r}")
        check(f"usage error: {label} (exit 2)", usage_check)

    def no_output_arg():
        p = subprocess.run([binary, pd_], capture_output=True, text=True)
        if p.returncode != 2:
            raise Fail(f"no -o: exit {p.returncode}")
    check("usage error: no -o (exit 2)", no_output_arg)

    # ---- 7. list features (a leaf with one repeated level): W slots per row
    nested = os.path.join(fx, "nested")
    if not os.path.isdir(nested):
        check("list features: fixtures", lambda: (_ for _ in ()).throw(Fail(f"no {nested} (tests/gen_fixtures.py)")))
    else:
        def NF(name):
            return os.path.join(nested, name)

        def leaf_of(path, top):
            """the Parquet leaf path under top-level column `top` (naming differs by writer)"""
            sch = pq.ParquetFile(path).schema
            names = [sch.column(i).path for i in range(len(sch)) if sch.column(i).path.split(".")[0] == top]
            if len(names) != 1:
                raise Fail(f"{path}: {top} has leaves {names}")
            return names[0]

        def lists_of(path, top, part=None):
            col = pq.read_table(path, columns=[top]).column(top).combine_chunks()
            if part == "keys":
                return [None if m is None else [k for k, _ in m] for m in col.to_pylist()]
            if part == "items":
                return [None if m is None else [v for _, v in m] for m in col.to_pylist()]
            return col.to_pylist()

        def list_ref(lists, width, dtype, fill, policy="error", null_error=False, hash_buckets=None):
            """rows x width in the dtype, or the (row, length) / null row gpufeed must refuse"""
            n = len(lists)
            vals = [[fill] * width for _ in range(n)]
            for i, li in enumerate(lists):
                if li is None:
                    if null_error:
                        return None, ("null list", i)
                    continue
                k = len(li)
                if (k != width and policy == "error") or (k > width and policy == "pad"):
                    return None, ("length", i, k)
                for j, v in enumerate(li[:width]):
                    if v is None:
                        if null_error:
                            return None, ("null element", i, j)
                        continue
                    if hash_buckets:
                        import xxhash
                        v = xxhash.xxh64_intdigest(v.encode("utf-8") if isinstance(v, str) else v, seed=0) % hash_buckets
                    vals[i][j] = v
            if dtype in ("f32", "f64", "f16"):
                return np.array(vals, np.float64).reshape(n, width).astype(NP_DTYPE[dtype]), None
            return np.array(vals, object).reshape(n, width).astype(NP_DTYPE[dtype]), None

        def same_bytes(args, exp, dtype):
            rc, msg, data, st = R.run(args)
            if rc != 0:
                raise Fail(f"{cmd_line(args)}: exit {rc}: {msg}")
            e = np.ascontiguousarray(exp).tobytes()
            if data != e:
                raise Fail(f"{cmd_line(args)}: {first_diff(data, exp, dtype)}")
            return st

        # embeddings: fixed_size_list<float32, 8> and list<float32> of 8, every writer variant
        emb_files = ["pyarrow_nested_default.parquet", "pyarrow_nested_plain.parquet", "pyarrow_nested_v2.parquet",
                     "pyarrow_nested_v2_plain.parquet", "pyarrow_nested_legacy.parquet",
                     "pyarrow_nested_tiny_pages.parquet", "pyarrow_nested_tiny_pages_v2.parquet",
                     "pyarrow_nested_page_index.parquet", "pyarrow_nested_many_rowgroups.parquet",
                     "pyarrow_nested_delta_bss.parquet", "pyarrow_nested_delta_bss_v2.parquet",
                     "polars_nested_snappy.parquet"]
        for fname in emb_files:
            for top in ("emb", "emb_list"):
                if top == "emb_list" and fname.startswith("polars"):
                    continue
                def emb_check(fname=fname, top=top):
                    path = NF(fname)
                    leaf = leaf_of(path, top)
                    lists = lists_of(path, top)
                    stacked = np.stack([np.asarray(li, np.float32) for li in lists])
                    for dt in ("f32", "f64", "f16"):
                        exp = stacked.astype(NP_DTYPE[dt])
                        same_bytes(["--columns", leaf, "--list-width", "8", "--dtype", dt, path], exp, dt)
                    # with a scalar column, small units (seeks where the page index allows) and odd batches
                    ids = pq.read_table(path, columns=["id"]).column("id").to_numpy().astype(np.float32)
                    exp = np.concatenate([ids[:, None], stacked, ids[:, None]], axis=1)
                    for ur, batch in ((37, 777), (1000000, 65536)):
                        same_bytes(["--columns", f"id,{leaf},id", "--list-width", "8", "--unit-rows", str(ur),
                                    "--batch", str(batch), path], exp, "f32")
                    return f"{leaf}: f32/f64/f16 equal np.stack"
                check(f"list feature: embeddings {top} width 8 ({fname})", emb_check)

        def duckdb_array():
            path = NF("duckdb_nested.parquet")
            leaf = leaf_of(path, "arr")
            exp = np.array(lists_of(path, "arr"), np.float64)
            same_bytes(["--columns", leaf, "--list-width", "2", "--dtype", "f64", path], exp, "f64")
            return leaf
        check("list feature: DuckDB DOUBLE[2] width 2", duckdb_array)

        # ragged lists: pad, truncate, error; lengths; null lists; null elements
        ragged_files = ["pyarrow_nested_default.parquet", "pyarrow_nested_tiny_pages.parquet",
                        "pyarrow_nested_tiny_pages_v2.parquet", "pyarrow_nested_page_index.parquet",
                        "pyarrow_nested_delta_bss_v2.parquet"]
        for fname in ragged_files:
            def ragged_check(fname=fname):
                path = NF(fname)
                leaf = leaf_of(path, "ragged")
                lists = lists_of(path, "ragged")
                n = len(lists)
                # truncate to 4, lengths (null list -> fill)
                exp, _ = list_ref(lists, 4, "f32", -1.0, "truncate")
                lens = np.array([-1 if li is None else len(li) for li in lists], np.float32)
                ids = pq.read_table(path, columns=["id"]).column("id").to_numpy().astype(np.float32)
                full = np.concatenate([ids[:, None], exp, lens[:, None]], axis=1)
                for ur in (50, 1000000):
                    same_bytes(["--columns", f"id,{leaf}", "--list-width", "4", "--ragged", "truncate", "--lengths", leaf,
                                "--fill", "-1", "--unit-rows", str(ur), path], full, "f32")
                # pad to the longest list
                wmax = max(len(li) for li in lists if li is not None)
                exp, err = list_ref(lists, wmax, "f64", 0.0, "pad")
                if err:
                    raise Fail(f"reference refuses: {err}")
                same_bytes(["--columns", leaf, "--list-width", str(wmax), "--ragged", "pad", "--dtype", "f64", path], exp, "f64")
                # error / pad-with-longer: the first offending row and its length
                for policy, w in (("error", 4), ("pad", 4)):
                    _, err = list_ref(lists, w, "f32", 0.0, policy)
                    args = ["--columns", leaf, "--list-width", str(w), "--ragged", policy, path]
                    msg = refuse(args, (leaf, os.path.basename(path), "row group", f"row {err[1]} has {err[2]} elements",
                                        f"width is {w}", f"list policy: {policy}"))
                # null lists with --null-error
                _, err = list_ref(lists, 4, "f32", 0.0, "truncate", null_error=True)
                refuse(["--columns", leaf, "--list-width", "4", "--ragged", "truncate", "--null-error", path],
                       (leaf, f"null list at row {err[1]}"))
                # lengths alone, as i32 (a null list: --fill)
                lens = np.array([-5 if li is None else len(li) for li in lists], np.int32)
                same_bytes(["--columns", "id", "--lengths", leaf, "--dtype", "i32", "--fill", "-5", path],
                           np.concatenate([ids.astype(np.int32)[:, None], lens[:, None]], axis=1), "i32")
                return f"{n} rows, widths 4 / {wmax}"
            check(f"list feature: ragged pad/truncate/error, lengths, null lists ({fname})", ragged_check)

        def null_elements():
            path = NF("pyarrow_nested_v2.parquet")
            leaf = leaf_of(path, "li32")
            lists = lists_of(path, "li32")
            exp, err = list_ref(lists, 6, "i64", -7, "pad")
            if err:
                raise Fail(f"reference refuses: {err}")
            same_bytes(["--columns", leaf, "--list-width", "6", "--ragged", "pad", "--dtype", "i64", "--fill", "-7", path], exp, "i64")
            _, err = list_ref([li if li is None else li for li in lists], 6, "i64", -7, "pad", null_error=True)
            refuse(["--columns", leaf, "--list-width", "6", "--ragged", "pad", "--dtype", "i64", "--null-error", path],
                   (leaf, "null list" if err[0] == "null list" else f"null element {err[2]} of the list at row {err[1]}"))
            return "fill -7"
        check("list feature: null elements take the fill (list<int32> -> i64)", null_elements)

        def map_values():
            path = NF("pyarrow_nested_plain.parquet")
            out = []
            for part in ("keys", "items"):
                top = "mnull"
                sch = pq.ParquetFile(path).schema
                leaf = [sch.column(i).path for i in range(len(sch)) if sch.column(i).path.startswith(top + ".")][0 if part == "keys" else 1]
                lists = lists_of(path, top, part)
                if part == "items":
                    exp, err = list_ref(lists, 4, "f64", -1.0, "pad")
                    same_bytes(["--columns", leaf, "--list-width", "4", "--ragged", "pad", "--dtype", "f64", "--fill", "-1", path], exp, "f64")
                else:
                    exp, err = list_ref(lists, 4, "i64", 0, "pad", hash_buckets=1000)
                    same_bytes(["--columns", leaf, "--list-width", "4", "--ragged", "pad", "--dtype", "i64", "--hash", "1000", path], exp, "i64")
                out.append(leaf)
            return ", ".join(out)
        check("list feature: a map's keys (hashed) and values (with nulls)", map_values)

        lp = NF("pyarrow_nested_default.parquet")
        bad_lists = [
            ("no --list-width", ["--columns", "li32.list.element", lp], ("li32.list.element", "--list-width")),
            ("a list of lists", ["--columns", "ll.list.element.list.element", "--list-width", "2", lp], ("repeated levels",)),
            ("a predicate on a list column", ["--columns", "id", "--where", "li32.list.element > 3", lp],
             ("li32.list.element", "predicates on list columns")),
            ("--list-width on a scalar column only", ["--columns", "id", "--lengths", "id", lp], ("'id' is not a list",)),
        ]
        for label, args, names in bad_lists:
            check(f"bad input: list features: {label}", lambda args=args, names=names: refuse(args, names))
        usage_lists = [
            ("--list-width 0", ["--columns", "id", "--list-width", "0", lp], ("--list-width",)),
            ("--ragged maybe", ["--columns", "id", "--ragged", "maybe", lp], ("--ragged",)),
            ("--lengths without --columns", ["--lengths", "li32.list.element", lp], ("--lengths",)),
        ]
        for label, args, names in usage_lists:
            def usage_check2(args=args, names=names):
                rc, msg, _, _ = R.run(args)
                if rc != 2:
                    raise Fail(f"{cmd_line(args)}: exit {rc}, want 2: {msg!r}")
                for w in names:
                    if w not in msg:
                        raise Fail(f"{cmd_line(args)}: message does not name {w!r}: {msg!r}")
            check(f"usage error: {label} (exit 2)", usage_check2)

    print(f"# {R.n} gpufeed-dense runs, {time.time() - t_start:.1f} s")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
