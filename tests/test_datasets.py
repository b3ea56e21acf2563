"""Production dataset shapes through gpufeed-dense, cell by cell against
pyarrow.dataset (hive partitioning, a unified schema):

    .venv/bin/python tests/test_datasets.py --bin build/asan/gpufeed-dense

A Spark-layout tree written by pyarrow: key=value directories (a string
key, an integer key, a null partition, %XX escapes), part-*.snappy.parquet
files beside _SUCCESS, _committed_*, _common_metadata, .crc files, a
_temporary directory and empty (0-row) parts; schemas that change between
files (a column added later, int32 widened to int64); timestamps in INT96
(Spark), microseconds (pyarrow), milliseconds (older writers) and
nanoseconds; int64 IDs around 2^62. Checks: the directory walk (recursive,
sorted, hidden and bookkeeping names skipped) and "**" globs read the
files pyarrow.dataset reads; partition keys as features (an integer key as
f64, a string key hashed) and as predicates (files pruned before their
footers: a file that is not Parquet under a pruned directory is never
opened); missing=null with fill and validity against pyarrow's nulls;
timestamps in one unit whatever each file's (unit=us against pyarrow's
cast to timestamp[us]), a safe cast that would lose digits refused, the
unsafe one truncating as pyarrow's does; predicates on times compare
instants; IDs exact as i64, refused as f32 under the safe cast, hashed as
integers (XXH64 of the int64's 8 bytes, modulo the buckets) the same from
INT32 and INT64 files; errors that name the file, the limit, the leaves of
a list or struct; 10,000 files read under `ulimit -n 256`; a tree with
empty values (`city=`: the empty string, as pyarrow reads it) beside the
default partition (null). Prints PASS/FAIL lines and `N passed, N failed`.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pds
import pyarrow.parquet as pq
import xxhash

PASS = FAIL = 0


def check(name, cond, detail=""):
    global PASS, FAIL
    if cond:
        PASS += 1
        print("PASS " + name)
    else:
        FAIL += 1
        print("FAIL " + name + (": " + str(detail)[:600] if detail else ""))


class Dense:
    def __init__(self, binary, tmp):
        self.bin, self.tmp = binary, tmp

    def run(self, *args):
        """(rc, stderr, output bytes or None)"""
        out = os.path.join(self.tmp, "out.bin")
        if os.path.exists(out):
            os.unlink(out)
        p = subprocess.run([self.bin, *args, "-o", out], capture_output=True, text=True, timeout=300)
        data = open(out, "rb").read() if p.returncode == 0 and os.path.exists(out) else None
        return p.returncode, p.stderr.strip(), data

    def matrix(self, dtype, ncols, *args):
        rc, err, data = self.run(*args)
        if rc != 0 or data is None:
            return None, err
        return np.frombuffer(data, dtype=dtype).reshape(-1, ncols), err


# ---- the tree ------------------------------------------------------------------

T0 = 1_760_000_000  # seconds: 2025-10-09


def write_tree(root):
    """A Spark-layout tree; returns the number of rows written."""
    rng = np.random.default_rng(41)
    rid = 0
    parts = [("sf", 1), ("sf", 3), ("ny", 3), ("ny", 4), ("la%2Fx", 5), ("__HIVE_DEFAULT_PARTITION__", 6)]
    for n, (market, shard) in enumerate(parts):
        d = os.path.join(root, f"market={market}", f"shard={shard}")
        os.makedirs(d)
        for k in range(2):
            rows = 0 if (n, k) == (2, 1) else int(rng.integers(50, 120))   # one empty part
            ids = rng.integers(1 << 62, (1 << 62) + (1 << 40), rows, dtype=np.int64)
            cols = {
                "rid": pa.array(np.arange(rid, rid + rows, dtype=np.int64)),
                "v": pa.array(rng.standard_normal(rows)),
                "uid": pa.array(ids),
                "small": pa.array(rng.integers(0, 1000, rows, dtype=np.int64 if n >= 3 else np.int32)),  # widened later
            }
            # whole microseconds, so every unit holds them exactly as us
            us = (T0 + rng.integers(0, 86400 * 30, rows)) * 1_000_000 + rng.integers(0, 1000, rows) * 1000
            kind = ("int96", "us", "ms", "ns", "us", "ms")[n]
            if kind == "ms":
                us = us // 1000 * 1000
                cols["ts"] = pa.array(us // 1000, type=pa.timestamp("ms"))
            elif kind == "ns":
                cols["ts"] = pa.array(us * 1000, type=pa.timestamp("ns"))
            else:
                cols["ts"] = pa.array(us, type=pa.timestamp("us"))
            if n >= 2:  # a column later files add
                cols["z"] = pa.array(rng.standard_normal(rows), mask=rng.random(rows) < 0.1)
            t = pa.table(cols)
            name = os.path.join(d, f"part-{n:05d}-{k}-4f2a-9c1e.c000.snappy.parquet")
            pq.write_table(t, name, compression="snappy", use_deprecated_int96_timestamps=kind == "int96",
                           coerce_timestamps=None if kind in ("int96", "ns", "ms") else "us", allow_truncated_timestamps=False)
            rid += rows
            with open(os.path.join(d, f".part-{n:05d}-{k}.c000.snappy.parquet.crc"), "wb") as f:
                f.write(b"crc-of-nothing")
        with open(os.path.join(d, "_SUCCESS"), "w"):
            pass
    for junk in ("_SUCCESS", "_committed_5121", "_common_metadata", ".hive-staging"):
        with open(os.path.join(root, junk), "wb") as f:
            f.write(b"not parquet")
    os.makedirs(os.path.join(root, "_temporary", "0"))
    with open(os.path.join(root, "_temporary", "0", "part-x.parquet"), "wb") as f:
        f.write(b"half written")
    return rid


def expected(root, columns, schema_fields=None, filt=None):
    """pyarrow.dataset's reading: hive partitions, the schema unified (the
    given fields override it), sorted by rid"""
    base = pds.dataset(root, format="parquet", partitioning="hive")
    schemas = [f.physical_schema for f in base.get_fragments()]
    uni = pa.unify_schemas(schemas, promote_options="permissive")
    fields = {f.name: f for f in uni}
    for f in base.partitioning.schema if base.partitioning else []:
        fields[f.name] = f
    for name, typ in (schema_fields or {}).items():
        fields[name] = pa.field(name, typ)
    d = pds.dataset(root, format="parquet", partitioning=pds.partitioning(
        pa.schema([fields["market"], fields["shard"]]), flavor="hive"), schema=pa.schema(list(fields.values())))
    t = d.to_table(columns=sorted(set(columns) | {"rid"}), filter=filt)
    return t.sort_by("rid")


def f64(col):
    return pc.fill_null(col, 0).to_numpy(zero_copy_only=False).astype(np.float64)


def run_all(binary, tmp):
    dn = Dense(binary, tmp)
    root = os.path.join(tmp, "table")
    total = write_tree(root)

    # the walk: every part file, sorted, nothing hidden or bookkeeping
    m, err = dn.matrix(np.float64, 2, "--feature", "rid:f64", "--feature", "v:f64", root)
    exp = expected(root, ["rid", "v"])
    check("a Spark tree read whole: the rows pyarrow.dataset reads (%d)" % total,
          m is not None and m.shape[0] == exp.num_rows == total, err)
    if m is not None:
        files = sorted(pds.dataset(root, format="parquet", partitioning="hive").files)
        walk = np.concatenate([pq.ParquetFile(f).read(columns=["rid"])["rid"].to_numpy() for f in files]).astype(np.float64)
        check("... in the order of the sorted paths, file by file (%d files, the empty part among them)" % len(files),
              np.array_equal(m[:, 0], walk))
        order = np.argsort(m[:, 0], kind="stable")
        check("... every value equal to pyarrow's", np.array_equal(m[order, 1], f64(exp["v"])))
    m2, err2 = dn.matrix(np.float64, 2, "--feature", "rid:f64", "--feature", "v:f64", root + "/**/*.parquet")
    check("'**' in a glob: the same rows as the directory", m is not None and m2 is not None and np.array_equal(m, m2), err2)
    m3, err3 = dn.matrix(np.float64, 2, "--feature", "rid:f64", "--feature", "v:f64", root + "/market=ny")
    check("a subtree: only its partition's rows", m3 is not None and m3.shape[0] == expected(root, ["rid"], filt=pc.field("market") == "ny").num_rows,
          err3)

    # partition keys as features: an integer key, a string key hashed (XXH64 of the value's bytes)
    m, err = dn.matrix(np.float64, 3, "--feature", "rid:f64", "--feature", "shard:f64", "--feature", "market:f64:hash=1000:valid", root)
    exp = expected(root, ["rid", "shard", "market"])
    if m is None:
        check("partition keys as features", False, err)
    else:
        m = m[np.argsort(m[:, 0], kind="stable")]
        want_market = [float(xxhash.xxh64(s.encode(), seed=0).intdigest() % 1000) if s is not None else 0.0
                       for s in exp["market"].to_pylist()]
        check("an integer partition key as an f64 feature: pyarrow's values", np.array_equal(m[:, 1], f64(exp["shard"])))
        check("a string key hashed (la%2Fx decoded to la/x; the default partition null, its fill 0)",
              np.array_equal(m[:, 2], np.array(want_market)) and "la/x" in exp["market"].to_pylist())
    rc, err, _ = dn.run("--feature", "market:f64", root)
    check("a string key without hash=N: an error saying to hash it", rc == 1 and "market" in err and "hash" in err, err)

    # predicates on partition keys prune whole files before their footers are read
    bad_dir = os.path.join(root, "shard=9")
    os.makedirs(bad_dir)
    with open(os.path.join(bad_dir, "part-99999.snappy.parquet"), "wb") as f:
        f.write(b"PAR1 this is not parquet at all")
    shutil.move(bad_dir, os.path.join(root, "market=sf", "shard=0"))
    m, err = dn.matrix(np.float64, 2, "--feature", "rid:f64", "--feature", "shard:f64", "--where", "shard >= 4", root)
    good = pds.dataset(root, format="parquet", partitioning="hive", exclude_invalid_files=True)
    n_exp = good.to_table(filter=pc.field("shard") >= 4, columns=["rid"]).num_rows
    check("--where 'shard >= 4': pyarrow's rows (%d), the broken file under shard=0 never opened" % n_exp,
          m is not None and m.shape[0] == n_exp and (m[:, 1] >= 4).all(), err)
    rc, err, _ = dn.run("--feature", "rid:f64", root)
    check("... without the predicate that file is read and named", rc == 1 and "shard=0" in err, err)
    shutil.rmtree(os.path.join(root, "market=sf", "shard=0"))
    rc, err, _ = dn.run("--feature", "rid:f64", "--where", "shard >= 'x'", root)
    check("a string constant against an integer key: an error naming the key", rc != 0 and "shard" in err, err)

    # schema evolution: a column later files add
    rc, err, _ = dn.run("--feature", "z:f64", root)
    check("a column some files lack: an error naming the first such file and missing=null",
          rc == 1 and "market=sf" in err and "missing=null" in err, err)
    m, err = dn.matrix(np.float64, 2, "--feature", "rid:f64", "--feature", "z:f64:missing=null:fill=7", root)
    exp = expected(root, ["rid", "z"])
    if m is None:
        check("missing=null", False, err)
    else:
        m = m[np.argsort(m[:, 0], kind="stable")]
        check("missing=null:fill=7: 7 where pyarrow has nulls, its values elsewhere",
              np.array_equal(m[:, 1], pc.fill_null(exp["z"], 7.0).to_numpy(zero_copy_only=False)))
    rc, err, data = dn.run("--feature", "rid:i64", "--feature", "z:f64:missing=null:valid", root)
    check("... with a validity mask", rc == 0, err)
    # widened int32 -> int64 keeps values; IDs hashed alike from INT32 and INT64 files
    m, err = dn.matrix(np.int64, 3, "--feature", "rid:i64", "--feature", "small:i64", "--feature", "small:i64:hash=97", root)
    exp = expected(root, ["rid", "small"])
    if m is None:
        check("int32 widened to int64", False, err)
    else:
        m = m[np.argsort(m[:, 0], kind="stable")]
        vals = exp["small"].to_numpy()
        check("an int32 column widened to int64 in later files: exact", np.array_equal(m[:, 1], vals))
        want = np.array([xxhash.xxh64(int(v).to_bytes(8, "little", signed=True), seed=0).intdigest() % 97 for v in vals])
        check("hash=97 on an integer column: XXH64 of the int64's bytes, the same from INT32 and INT64 files", np.array_equal(m[:, 2], want))

    # int64 IDs around 2^62
    rc, err, _ = dn.run("--feature", "uid:f32", root)
    check("IDs near 2^62 into f32 under the safe cast: an error saying why", rc == 1 and "does not convert to f32 exactly" in err and "i64" in err, err)
    m, err = dn.matrix(np.int64, 2, "--feature", "rid:i64", "--feature", "uid:i64", root)
    exp = expected(root, ["rid", "uid"])
    check("IDs as i64: exact", m is not None and np.array_equal(m[np.argsort(m[:, 0]), 1], exp["uid"].to_numpy()), err)
    m, err = dn.matrix(np.float32, 2, "--feature", "rid:f32:cast=unsafe", "--feature", "uid:f32:cast=unsafe", root)
    check("... into f32 with cast=unsafe: rounded as numpy rounds",
          m is not None and np.array_equal(np.sort(m[:, 1]), np.sort(exp["uid"].to_numpy().astype(np.float32))), err)
    m, err = dn.matrix(np.int32, 2, "--feature", "rid:i32", "--feature", "uid:i32:hash=1000", root)
    if m is not None:
        m = m[np.argsort(m[:, 0], kind="stable")]
        want = np.array([xxhash.xxh64(int(v).to_bytes(8, "little", signed=True), seed=0).intdigest() % 1000 for v in exp["uid"].to_numpy()])
    check("uid:i32:hash=1000: ids from the int64 values", m is not None and np.array_equal(m[:, 1], want), err)

    # timestamps in one unit whatever each file's
    m, err = dn.matrix(np.int64, 2, "--feature", "rid:i64", "--feature", "ts:i64:unit=us", root)
    exp = expected(root, ["rid", "ts"], {"ts": pa.timestamp("us")})
    if m is None:
        check("ts:i64:unit=us", False, err)
    else:
        m = m[np.argsort(m[:, 0], kind="stable")]
        check("ts:i64:unit=us over INT96, us, ms and ns files: pyarrow's cast to timestamp[us]",
              np.array_equal(m[:, 1], exp["ts"].cast(pa.int64()).to_numpy()))
    m, err = dn.matrix(np.int64, 2, "--feature", "rid:i64", "--feature", "ts:i64:unit=ns", root)
    check("... unit=ns: every value x 1000", m is not None and
          np.array_equal(np.sort(m[:, 1]), np.sort(exp["ts"].cast(pa.int64()).to_numpy() * 1000)), err)
    rc, err, _ = dn.run("--feature", "ts:i64:unit=s", root)
    check("unit=s with sub-second values: a safe cast that loses digits is an error naming the units",
          rc == 1 and "does not convert to i64 exactly" in err and "(in the feature's s)" in err, err)
    m, err = dn.matrix(np.int64, 2, "--feature", "rid:i64", "--feature", "ts:i64:unit=s:cast=unsafe", root)
    exp_s = expected(root, ["rid", "ts"], {"ts": pa.timestamp("us")})
    if m is not None:
        m = m[np.argsort(m[:, 0], kind="stable")]
    check("... cast=unsafe truncates to whole seconds (as pyarrow's unsafe cast)",
          m is not None and np.array_equal(m[:, 1], exp_s["ts"].cast(pa.timestamp("s"), safe=False).cast(pa.int64()).to_numpy()), err)
    first_unit = pq.read_schema(sorted(pds.dataset(root, format="parquet", partitioning="hive").files)[0]).field("ts").type
    m, err = dn.matrix(np.int64, 2, "--feature", "rid:i64", "--feature", "ts:i64", root)
    check("ts:i64 without a unit: the first file's unit (%s) for every file" % first_unit, m is not None and
          np.array_equal(np.sort(m[:, 1]), np.sort(expected(root, ["ts"], {"ts": first_unit})["ts"].cast(pa.int64()).to_numpy())), err)
    # a predicate on times: instants, in the first file's unit
    exp_all = expected(root, ["rid", "ts"], {"ts": pa.timestamp("us")})
    mid = int(np.median(exp_all["ts"].cast(pa.int64()).to_numpy()))
    unit_mul = {"s": 1_000_000, "ms": 1000, "us": 1, "ns": 0.001}[first_unit.unit]
    const = int(mid // unit_mul) if unit_mul >= 1 else mid * 1000
    m, err = dn.matrix(np.int64, 2, "--feature", "rid:i64", "--feature", "ts:i64:unit=us", "--where", f"ts >= {const}", root)
    n_exp = int((exp_all["ts"].cast(pa.int64()).to_numpy() >= (const * unit_mul if unit_mul >= 1 else const // 1000)).sum())
    check("--where 'ts >= X' (X in the first file's unit): the instants pyarrow counts (%d rows)" % n_exp,
          m is not None and m.shape[0] == n_exp, err)

    # names
    lt = os.path.join(tmp, "lists.parquet")
    pq.write_table(pa.table({"emb": pa.array([[1.0, 2.0]] * 4, type=pa.list_(pa.float32())),
                             "st": pa.array([{"a": 1, "b": 2.0}] * 4)}), lt)
    rc, err, _ = dn.run("--feature", "emb:f32", lt)
    check("a list named by its top-level name: the error names its leaf", rc == 1 and "emb.list.element" in err, err)
    rc, err, _ = dn.run("--feature", "st:f32", lt)
    check("a struct named by its top-level name: the error names its leaves", rc == 1 and "st.a" in err and "st.b" in err, err)

    # no silent limits
    wide = os.path.join(tmp, "wide.parquet")
    pq.write_table(pa.table({f"c{i}": pa.array(np.arange(3, dtype=np.float64)) for i in range(2000)}), wide)
    rc, err, data = dn.run("--dtype", "f64", wide)
    check("2,000 default features: all of them (no 1,000 cap)", rc == 0 and data is not None and len(data) == 3 * 2000 * 8, err)
    rc, err, data = dn.run("--columns", ",".join(f"c{i}" for i in range(1500)), "--dtype", "f64", wide)
    check("1,500 named columns: all of them", rc == 0 and data is not None and len(data) == 3 * 1500 * 8, err)
    many = ["--feature" if k % 2 == 0 else "c%d:f64" % (k // 2 % 2000) for k in range(2 * 17000)]
    rc, err, _ = dn.run(*many, wide)
    check("17,000 features: an error naming GPUFEED_MAX_FEATURES and its value", rc != 0 and "GPUFEED_MAX_FEATURES" in err and "16384" in err,
          err)

    many_files(dn, tmp)
    empty_partitions(dn, tmp)


def empty_partitions(dn, tmp):
    """`key=` is the empty string (pyarrow, DuckDB and Polars read ""),
    __HIVE_DEFAULT_PARTITION__ null; a key with an empty value among
    integers holds strings (pyarrow infers string)"""
    root = os.path.join(tmp, "empty_parts")
    rid = 0
    for city in ("", "__HIVE_DEFAULT_PARTITION__", "sf"):
        for n in ("", "7"):
            d = os.path.join(root, "city=" + city, "n=" + n)
            os.makedirs(d)
            pq.write_table(pa.table({"rid": pa.array(np.arange(rid, rid + 5, dtype=np.int64))}), os.path.join(d, "part-0.parquet"))
            rid += 5
    exp = pds.dataset(root, format="parquet", partitioning="hive").to_table().sort_by("rid")
    check("empty partition values: pyarrow reads '' for city= and n=, null for the default partition, n as strings",
          "" in exp["city"].to_pylist() and None in exp["city"].to_pylist() and "" in exp["n"].to_pylist() and
          pa.types.is_string(exp.schema.field("n").type), str(exp.schema))
    masks = os.path.join(tmp, "masks.bin")
    m, err = dn.matrix(np.float64, 3, "--feature", "rid:f64", "--feature", "city:f64:hash=1000:valid:fill=-1",
                       "--feature", "n:f64:hash=1000:valid:fill=-1", "--valid-out", masks, root)
    if m is None:
        check("empty partition values", False, err)
        return
    valid = np.fromfile(masks, dtype=np.uint8).reshape(-1, 2)
    m, valid = m[np.argsort(m[:, 0], kind="stable")], valid[np.argsort(m[:, 0], kind="stable")]
    want, want_valid = [], []
    for c, n in zip(exp["city"].to_pylist(), exp["n"].to_pylist()):
        want.append([-1.0 if c is None else float(xxhash.xxh64(c.encode(), seed=0).intdigest() % 1000),
                     -1.0 if n is None else float(xxhash.xxh64(n.encode(), seed=0).intdigest() % 1000)])
        want_valid.append([c is not None, n is not None])
    check("... gpufeed: '' hashed as the empty string and valid, the default partition null (its fill, mask 0): %d rows" % rid,
          m.shape[0] == rid and np.array_equal(m[:, 1:3], np.array(want)) and np.array_equal(valid, np.array(want_valid, dtype=np.uint8)),
          err)
    m2, err2 = dn.matrix(np.float64, 1, "--feature", "rid:f64", "--where", "city == ''", root)
    n_exp = exp.filter(pc.field("city") == "").num_rows
    check("--where \"city == ''\": pyarrow's %d rows" % n_exp,
          m2 is not None and np.array_equal(np.sort(m2[:, 0]), exp.filter(pc.field("city") == "")["rid"].to_numpy().astype(np.float64)), err2)
    m3, err3 = dn.matrix(np.float64, 1, "--feature", "rid:f64", "--where", "city is null", root)
    n_null = exp.filter(pc.field("city").is_null()).num_rows
    check("--where 'city is null': the default partition only (%d rows)" % n_null, m3 is not None and m3.shape[0] == n_null, err3)
    shutil.rmtree(root, ignore_errors=True)


def many_files(dn, tmp):
    """10,000 files under `ulimit -n 256`: the dataset keeps few descriptors
    open (mapped files close theirs, pread files share a bounded pool)"""
    import resource
    root = os.path.join(tmp, "many")
    t = pa.table({"id": pa.array(np.arange(3, dtype=np.int64))})
    sink = pa.BufferOutputStream()
    pq.write_table(t, sink, compression="none")
    one = sink.getvalue().to_pybytes()
    # the same bytes in each file but for one value: a cheap distinct file
    pos = one.index(np.int64(2).tobytes())
    want = []
    for d in range(100):
        os.makedirs(os.path.join(root, "d%03d" % d))
        for k in range(100):
            v = d * 100 + k + 2
            with open(os.path.join(root, "d%03d" % d, "p%03d.parquet" % k), "wb") as f:
                f.write(one[:pos] + np.int64(v).tobytes() + one[pos + 8:])
            want += [0, 1, v]
    want = np.array(want, dtype=np.int64)

    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))

    for mode in ([], ["--pread"]):
        out = os.path.join(tmp, "many.bin")
        p = subprocess.run([dn.bin, *mode, "--feature", "id:i64", root, "-o", out], capture_output=True, text=True,
                           timeout=600, preexec_fn=limit)
        got = np.fromfile(out, dtype=np.int64) if p.returncode == 0 else None
        check("10,000 files under ulimit -n 256%s: every row, in order" % (" (pread)" if mode else " (mapped)"),
              got is not None and np.array_equal(got, want), p.stderr.strip()[-400:])
    shutil.rmtree(root, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/gpufeed-dense")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="gf_datasets_")
    try:
        run_all(a.bin, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (PASS, FAIL))
    return 1 if FAIL else 0


if __name__ == "__main__":
    sys.exit(main())
