"""gpufeed-dense against the pyarrow + numpy reference (tools/dense_reference.py).

    .venv/bin/python tests/test_dense.py --bin build/asan/gpufeed-dense --fixtures build/fixtures

Prints `PASS name` / `FAIL name: reason` per check and `N passed, N failed`;
exits 1 when a check fails. Needs the fixture corpus (tools/gen_fixtures.py)
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
sys.path.insert(0, os.path.join(ROOT, "tools"))
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
                unsafe=False, null_error=False):
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
        raise Fail(f"{cmd_line(args)}: {first_diff(data, exp, dtype)}")
    if st.get("rows") != exp.shape[0] or st.get("features") != exp.shape[1]:
        raise Fail(f"{cmd_line(args)}: stats line says {st}, reference shape {exp.shape}")
    return st


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "asan", "gpufeed-dense"))
    ap.add_argument("--fixtures", default=os.path.join(ROOT, "build", "fixtures"))
    ap.add_argument("-k", help="only checks whose name contains this")
    ap.add_argument("--times", action="store_true", help="print each check's seconds")
    a = ap.parse_args()
    fx = a.fixtures
    flights = os.path.join(ROOT, "examples", "data", "flights.parquet")
    tmp = tempfile.mkdtemp(prefix="gpufeed_dense_")
    R = Runner(a.bin, tmp)
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
        except Fail as e:
            failed += 1
            print(f"FAIL {name}: {e}", flush=True)
        except Exception as e:  # a bug in the check itself counts as a failure too
            failed += 1
            print(f"FAIL {name}: {type(e).__name__}: {e}", flush=True)

    def F(name):
        return os.path.join(fx, name)

    corpus = sorted(n for n in os.listdir(fx) if n.endswith(".parquet"))
    if not corpus:
        print(f"FAIL setup: no fixtures in {fx}")
        print("0 passed, 1 failed")
        return 1

    # ---- 1. every corpus file x dtype: default columns, unsafe casts, --fill -1
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
                return ", ".join(notes)
            check(f"corpus {name} --dtype {dt}", corpus_check)

    # ---- 2. unit sizes and batch sizes do not change the output
    multi = [F("pyarrow_tiny_pages.parquet"), F("pyarrow_v2_tiny_pages.parquet"), F("pyarrow_many_rowgroups.parquet"),
             F("duckdb_two_rowgroups.parquet"), F("fastparquet_snappy.parquet"), flights]
    for path in multi:
        def unit_check(path=path):
            exp, err = reference([path])
            if err:
                raise Fail(f"reference: {err}")
            units = {}
            for ur in (100, 1000, 65536):
                for batch in ((65536, 777) if ur == 1000 else (65536,)):
                    args = ["--unit-rows", str(ur), "--batch", str(batch), path]
                    rc, msg, data, st = R.run(args)
                    if rc != 0:
                        raise Fail(f"{cmd_line(args)}: exit {rc}: {msg}")
                    if data != exp.tobytes():
                        raise Fail(f"{cmd_line(args)}: {first_diff(data, exp, 'f32')}")
                    units[ur] = st["units"]
            if units[100] < units[65536]:
                raise Fail(f"more rows per unit gave more units: {units}")
            return f"units {units}"
        check(f"unit-rows {os.path.basename(path)}", unit_check)

    # ---- 3. explicit columns
    explicit = [
        ("struct leaves and a column twice", "pyarrow_struct.parquet",
         "row,s.a,outer.k,outer.inner.x,outer.inner.y,req.id,s.a", ("f32", "f64", "i64")),
        ("column twice", "pyarrow_default.parquet", "f64,i32,f64,u16,s.a", ("f64",)),
        ("pyarrow temporal", "pyarrow_default.parquet",
         "date32,time32_ms,time64_us,time64_ns,ts_s,ts_ms,ts_us,ts_ns,ts_ms_utc,ts_us_utc,ts_ns_ny", ("f64", "i64", "f32")),
        ("pyarrow decimals", "pyarrow_default.parquet", "dec5_0,dec9_2,dec18_4,dec38_10", ("f64", "f32", "i64", "f16", "bf16")),
        ("pyarrow int decimals", "pyarrow_nodict.parquet", "dec5_0,dec9_2,dec18_4,dec38_10", ("f64", "f32", "i64")),
        ("pyarrow v2 decimals", "pyarrow_v2_snappy.parquet", "dec5_0,dec9_2,dec18_4,dec38_10,all_null_i32,all_null_f64",
         ("f64", "i64")),
        ("legacy temporal", "pyarrow_v1_legacy.parquet",
         "u32,date32,time32_ms,time64_us,ts_s,ts_ns,ts_ns_ny,dec9_2,dec38_10", ("f64", "i64")),
        ("no_store_schema temporal", "pyarrow_no_store_schema.parquet",
         "date32,time32_ms,ts_s,ts_ns_ny,dec18_4,u32", ("f64", "i64")),
        ("edge values", "pyarrow_single_row.parquet",
         "i64,u64,ts_ns,dec5_0,dec9_2,dec18_4,dec38_10,f16", ("f64", "i64", "f32", "bf16")),
        ("duckdb temporal/decimal", "duckdb_default.parquet",
         "d,t,ts,ts_tz,ts_ms,ts_ns,dec4_1,dec9_2,dec18_3,dec30_5,huge,st.a", ("f64", "i64", "f32")),
        ("polars temporal/decimal", "polars_snappy.parquet",
         "date,ts_us,ts_ns,ts_ms_utc,time,dur,dec10_2,dec30_4,st.a", ("f64", "i64")),
        ("pandas timestamps", "pandas_default.parquet", "when,when_utc,count,row_id", ("f64", "i64")),
        ("fastparquet timestamps", "fastparquet_default.parquet", "when,maybe_int,id", ("f64", "i64")),
        ("INT96 fastparquet", "fastparquet_int96.parquet", "when,id", ("i64", "f64")),
        ("INT96 pyarrow", "pyarrow_int96_crc.parquet", "ts_s,ts_ms,ts_us,ts_ns,ts_ms_utc,ts_us_utc,ts_ns_ny",
         ("i64", "f64")),
    ]
    for label, fname, cols, dts in explicit:
        for dt in dts:
            def col_check(fname=fname, cols=cols, dt=dt):
                path = F(fname)
                notes = []
                for unsafe in (False, True):
                    args = ["--columns", cols, "--dtype", dt, *(["--unsafe-cast"] if unsafe else []), path]
                    st = expect_same(R, args, [path], dtype=dt, columns=cols.split(","), unsafe=unsafe)
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
        st = expect_same(R, paths, paths)
        if st["files"] != 2:
            raise Fail(f"files {st['files']}")
        paths3 = [F("fastparquet_snappy.parquet"), F("fastparquet_default.parquet"), F("fastparquet_int96.parquet")]
        expect_same(R, ["--dtype", "f64", *paths3], paths3, dtype="f64")
    check("multi-file list of files (order as given)", multi_list)

    def multi_dir():
        st = expect_same(R, ["--dtype", "f64", ddir], by_name, dtype="f64")
        if st["files"] != len(copies):
            raise Fail(f"files {st['files']}, expected {len(copies)}")
        exp, _ = reference(by_name)
        rc, msg, data, _ = R.run([ddir])
        if data != exp.tobytes():
            raise Fail("directory: f32 output differs from the concatenation by name")
    check("multi-file directory (sorted *.parquet, other files ignored)", multi_dir)

    def multi_glob():
        pat = os.path.join(ddir, "part-*.parquet")
        st = expect_same(R, ["--dtype", "f64", pat], by_name, dtype="f64")
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
    wheres = [
        ("pyarrow_default.parquet", "i32,f64,u16,s.a", [
            "i32 < 0", "i32 <= -5", "i16 == 7", "i16 = 7", "f64 >= 0.5", "u16 > 1000", "i32 between -100000 and 100000000",
            "i8 in (1, 2, 3, -128, 127)", "str is null", "str is not null", "str == 'a,b,c'", "str < 'm'",
            "str >= 'm' and str <= 'zzz'", "dict_str in ('blue', 'green', 'nope')", "str between 'c' and 'k'",
            "f32 > 0 and str is not null and i64 < 0", "f64 < 1e300", "f64 > -1e300", "f64 == 0.5",
            "ts_us > 0", "date32 between 0 and 20000", "s.a > 0", "s.a is null", "u64 > 9000000000000000000",
            "i64 >= 0 && i32 < 0", "i32 < 2.5", "i32 >= -2.5", "i32 == 3.0", "f32 > 1", "u8 in (0, 255)",
            "large_str is not null and bin is null",
        ]),
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
    nullrow = int(np.argmax(~np.asarray(pq.read_table(pd_, columns=["i32"]).column(0).is_valid())))
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
        ("--null-error on a column with nulls", ["--null-error", "--columns", "f32,i32", pd_],
         ("i32", f"row {nullrow}")),
        ("safe cast: int64 out of i32 range", ["--dtype", "i32", "--columns", "i64", pd_], ("i64",)),
        ("safe cast: NaN to i64", ["--dtype", "i64", "--columns", "f64", pd_], ("f64",)),
        ("safe cast: fractional decimal to i64", ["--dtype", "i64", "--columns", "dec9_2", pd_], ("dec9_2",)),
    ]
    for label, args, names in bad:
        check(f"bad input: {label}", lambda args=args, names=names: refuse(args, names))

    def null_error_ok():
        # no nulls selected: --null-error passes and equals the reference
        expect_same(R, ["--null-error", "--columns", "i32", "--where", "i32 is not null", pd_], [pd_], columns=["i32"],
                    where="i32 is not null", null_error=True)
    check("--null-error passes when no selected row is null", null_error_ok)

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
        p = subprocess.run([a.bin, pd_], capture_output=True, text=True)
        if p.returncode != 2:
            raise Fail(f"no -o: exit {p.returncode}")
    check("usage error: no -o (exit 2)", no_output_arg)

    shutil.rmtree(tmp, ignore_errors=True)
    print(f"# {R.n} gpufeed-dense runs, {time.time() - t_start:.1f} s")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
