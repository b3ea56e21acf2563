"""Token packing and mixtures through the tools and the Python binding,
against NumPy:

    .venv/bin/python tests/test_pack.py --bin build/asan

Documents (list<int32> and list<int64> `input_ids`, with null and empty lists
and null elements) written by pyarrow (default, v2 pages, ZSTD without
dictionaries, a page index, tiny pages and row groups), pandas, DuckDB and
Polars, over several files: `gpufeed-dense --feature input_ids:i32:pack=T`
(and `:positions`, `:eos=ID`, i64) in dataset order against the NumPy
concatenation of the documents cut every T, with each token's position in
its document. `gpufeed-bench` (`pack=T`, `--mix PATH=WEIGHT`, `--until`):
the same batches for any worker count, the packing line's tokens, and the
errors of bad input (a scalar or doubly nested column, T out of range, a
weight of 0 or NaN, a source without the column). The Python binding
(`gpufeed.Feature(..., pack=T, positions=True)`, `gpufeed.Loader({path:
weight})`) against the same references. Prints PASS/FAIL lines and `N
passed, N failed`.
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
import pyarrow.parquet as pq

PASS = FAIL = 0


def check(name, cond, detail=""):
    global PASS, FAIL
    if cond:
        PASS += 1
        print("PASS " + name)
    else:
        FAIL += 1
        print("FAIL " + name + (": " + str(detail)[:600] if detail else ""))


def documents(rng, n, base=0, nulls=True, null_elements=True):
    out = []
    for i in range(n):
        r = rng.random()
        if nulls and r < 0.04:
            out.append(None)
        elif nulls and r < 0.08:
            out.append([])
        else:
            k = int(rng.integers(1, 200))
            d = [base + i * 1000 + p for p in range(k)]
            if nulls and null_elements and rng.random() < 0.02:
                d[int(rng.integers(0, k))] = None
            out.append(d)
    return out


def reference(docs, T, eos=None, dtype=np.int32):
    """the documents concatenated, cut every T; positions from 0 at each start"""
    toks, pos = [], []
    for d in docs:
        if not d:
            continue
        d = [0 if x is None else x for x in d]
        if eos is not None:
            d = d + [eos]
        toks.extend(d)
        pos.extend(range(len(d)))
    n = len(toks) // T * T
    t = np.array(toks[:n], dtype=dtype).reshape(-1, T)
    p = np.array(pos[:n], dtype=np.int32).reshape(-1, T)
    return t, p, len(toks) - n


def write_files(tmp, name, docs_per_file, how, itype=pa.int32()):
    """writes each file's documents with writer `how`; returns the paths"""
    paths = []
    for k, docs in enumerate(docs_per_file):
        path = os.path.join(tmp, "%s_%d.parquet" % (name, k))
        arr = pa.array(docs, type=pa.list_(itype))
        t = pa.table({"id": pa.array(np.arange(len(docs), dtype=np.int64)), "input_ids": arr})
        if how == "pyarrow":
            pq.write_table(t, path, row_group_size=300)
        elif how == "pyarrow_v2_zstd":
            pq.write_table(t, path, row_group_size=250, data_page_version="2.0", compression="zstd", use_dictionary=False)
        elif how == "pyarrow_pageindex_tiny":
            pq.write_table(t, path, row_group_size=120, data_page_size=1024, write_page_index=True)
        elif how == "pandas":
            t.to_pandas().to_parquet(path, engine="pyarrow", index=False)
        elif how == "duckdb":
            import duckdb
            con = duckdb.connect()
            con.register("t_in", t)
            con.execute("COPY (SELECT * FROM t_in) TO '%s' (FORMAT PARQUET, ROW_GROUP_SIZE 200)" % path)
            con.close()
        elif how == "polars":
            import polars as pl
            pl.from_arrow(t).write_parquet(path, row_group_size=180)
        else:
            raise ValueError(how)
        paths.append(path)
    return paths


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, **kw)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def dense(bin_dir, tmp, spec, paths, extra=()):
    out = os.path.join(tmp, "out.bin")
    if os.path.exists(out):
        os.unlink(out)
    rc, _, err = run([os.path.join(bin_dir, "gpufeed-dense"), "--feature", spec, "-o", out, *extra, *paths])
    data = open(out, "rb").read() if rc == 0 and os.path.exists(out) else None
    return rc, err, data


def test_writers(bin_dir, tmp):
    rng = np.random.default_rng(480)
    for how in ("pyarrow", "pyarrow_v2_zstd", "pyarrow_pageindex_tiny", "pandas", "duckdb", "polars"):
        # pandas keeps token lists as integer arrays only without null elements (else floats, which packing refuses)
        files = [documents(rng, n, null_elements=how != "pandas") for n in (700, 450, 600)]
        paths = write_files(tmp, how, files, how)
        docs = [d for f in files for d in f]
        for T, eos in ((64, None), (37, 50257), (1, None)):
            spec = "input_ids:i32:pack=%d:positions" % T + (":eos=%d" % eos if eos is not None else "")
            t, p, tail = reference(docs, T, eos)
            for extra in ((), ("--threads", "2", "--unit-rows", "97")):
                rc, err, data = dense(bin_dir, tmp, spec, paths, extra)
                ok = rc == 0 and data is not None
                if ok:
                    got = np.frombuffer(data, dtype=np.int32).reshape(-1, 2 * T)
                    ok = got.shape[0] == t.shape[0] and np.array_equal(got[:, :T], t) and np.array_equal(got[:, T:], p)
                check("%s pack=%d eos=%s %s: the documents cut every %d, with positions" % (how, T, eos, " ".join(extra) or "defaults", T), ok,
                      err if rc else "shapes %s / %s" % (None if data is None else len(data), t.shape))
    # int64 tokens beyond 2^31 into i64; refused as i32 (the safe cast)
    docs = [[(1 << 40) + i * 1000 + p for p in range(1 + i % 50)] for i in range(400)]
    paths = write_files(tmp, "big", [docs], "pyarrow", pa.int64())
    t, p, _ = reference(docs, 32, None, np.int64)
    rc, err, data = dense(bin_dir, tmp, "input_ids:i64:pack=32", paths)
    check("int64 tokens beyond 2^31 packed as i64", rc == 0 and np.array_equal(np.frombuffer(data, dtype=np.int64).reshape(-1, 32), t), err)
    rc, err, _ = dense(bin_dir, tmp, "input_ids:i32:pack=32", paths)
    check("int64 tokens beyond 2^31 as i32: an error naming the value and the file", rc == 1 and "does not convert to i32" in err and "big_0" in err, err)


def test_bench(bin_dir, tmp):
    rng = np.random.default_rng(7)
    a = write_files(tmp, "mixa", [documents(rng, 900), documents(rng, 800)], "pyarrow")
    b = write_files(tmp, "mixb", [documents(rng, 700, base=1 << 28)], "pyarrow")
    bench = os.path.join(bin_dir, "gpufeed-bench")
    common = ["--feature", "input_ids:i32:pack=48:positions", "--batch", "6", "--seed", "3", "--shuffle-window", "2", "--epochs", "2",
              "--print-batches", "--unit-rows", "150"]
    outs = set()
    for w in ("1", "2", "4"):
        rc, out, err = run([bench, *common, "--workers", w, *a])
        outs.add(out if rc == 0 else err)
    check("gpufeed-bench pack=48: the same batches for 1, 2, 4 workers", len(outs) == 1, outs)
    rc, _, err = run([bench, "--feature", "input_ids:i32:pack=48", "--batch", "6", *a])
    docs = [d for p in a for d in pq.read_table(p).column("input_ids").to_pylist()]
    ntok = sum(len(d) for d in docs if d)
    check("gpufeed-bench's packing line: every token but the tail", ("%d tokens" % (ntok // 48 * 48)) in err and ("tokens dropped %d" % (ntok % 48)) in err,
          err[-600:])
    mix = ["--mix", "%s=3" % a[0], "--mix", "%s=1" % b[0]]
    outs = set()
    for w in ("1", "3"):
        rc, out, err = run([bench, *common, "--workers", w, *mix])
        outs.add(out if rc == 0 else err)
    check("gpufeed-bench --mix A=3 --mix B=1: the same batches for 1 and 3 workers", len(outs) == 1 and rc == 0, outs)
    rc_l, out_l, err_l = run([bench, *common, "--until", "longest", *mix])
    check("--until longest: more batches than until=first", rc_l == 0 and out_l.count(b"\n") > out.count(b"\n"), err_l[-300:])
    for bad, want in ((["--mix", "%s=0" % a[0], "--mix", "%s=1" % b[0]], "weight above 0"),
                      (["--mix", "%s=nan" % a[0], "--mix", "%s=1" % b[0]], "weight above 0"),
                      (["--mix", a[0], "--mix", "%s=1" % b[0]], "PATH=WEIGHT"),
                      (["--mix", "%s=1" % a[0], a[1]], "no PATH"),
                      (["--until", "longest", a[0]], "--until needs --mix")):
        rc, _, err = run([bench, "--feature", "input_ids:i32:pack=48", "--batch", "6", *bad])
        check("gpufeed-bench %s: exit 2 naming it" % " ".join(x.replace(tmp, "") for x in bad), rc == 2 and want in err, err)
    flights = os.path.join(os.path.dirname(__file__), "..", "examples", "data", "flights.parquet")
    rc, _, err = run([bench, "--feature", "input_ids:i32:pack=48", "--batch", "6", "--mix", "%s=1" % a[0], "--mix", "%s=1" % flights])
    check("a mixture source without the column: an error naming the source", rc == 1 and "flights.parquet" in err and "input_ids" in err, err)
    for spec, want in (("id:i32:pack=16", "is not a list"), ("input_ids:i32:pack=0", "pack=0"), ("input_ids:i32:pack=2000000", "GPUFEED_MAX_PACK"),
                       ("input_ids:f32:pack=16", "i32 or i64"), ("input_ids:i32:positions", "needs pack")):
        rc, _, err = run([bench, "--feature", spec, "--batch", "6", a[0]])
        check("--feature %s: refused, naming it" % spec, rc in (1, 2) and want in err, err)
    nested = os.path.join(tmp, "nested.parquet")
    pq.write_table(pa.table({"x": pa.array([[[1, 2], [3]], [[4]]], type=pa.list_(pa.list_(pa.int32())))}), nested)
    rc, _, err = run([bench, "--feature", "x.list.element.list.element:i32:pack=4", "--batch", "1", nested])
    check("a list of lists packed: an error naming the file and the levels", rc == 1 and "nested.parquet" in err and "2 repeated levels" in err, err)


def test_python(tmp):
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools"))
    import gpufeed
    rng = np.random.default_rng(11)
    files = [documents(rng, n) for n in (500, 400)]
    paths = write_files(tmp, "py", files, "pyarrow")
    docs = [d for f in files for d in f]
    t, p, tail = reference(docs, 40)
    feats = [gpufeed.Feature("input_ids", dtype="int32", pack=40, positions=True)]
    loader = gpufeed.Loader(paths, features=feats, batch_rows=7, workers=2, unit_shuffle=False, device=None)
    toks, poss = [], []
    for batch in loader:
        x, pos = gpufeed_batch_arrays(batch)
        toks.append(x.copy())
        poss.append(pos.copy())
    got_t = np.concatenate(toks)
    got_p = np.concatenate(poss)
    check("Python Feature(pack=40, positions=True) in dataset order: the NumPy reference",
          np.array_equal(got_t, t) and np.array_equal(got_p, p), (got_t.shape, t.shape))
    # a mixture from a dict: 3:1, every batch
    other = write_files(tmp, "pyb", [documents(rng, 600, base=1 << 28)], "pyarrow")
    mixl = gpufeed.Loader({paths[0]: 0.75, other[0]: 0.25}, features=[gpufeed.Feature("input_ids", dtype="int32", pack=40)], batch_rows=8,
                          workers=2, seed=1, device=None)
    bad = 0
    n = 0
    for batch in mixl:
        x = gpufeed_batch_arrays(batch)[0]
        fromb = int(((x >= (1 << 28)).any(axis=1)).sum())
        bad += fromb != 2
        n += 1
    check("Python Loader({a: 0.75, b: 0.25}): 2 of every 8 rows from b (%d batches)" % n, n > 0 and bad == 0, bad)
    try:
        gpufeed.Loader({paths[0]: 0, other[0]: 1}, features=[gpufeed.Feature("input_ids", dtype="int32", pack=40)], batch_rows=8, device=None)
        check("Python mixture weight 0: an error", False)
    except (ValueError, RuntimeError) as e:
        check("Python mixture weight 0: an error naming the weight", "weight" in str(e), e)


def test_readme_snippet():
    """the README's Python loop under 'Token sequences and mixtures', as written"""
    import re
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    text = open(os.path.join(root, "README.md"), encoding="utf-8").read()
    part = text.split("### Token sequences and mixtures", 1)
    m = re.search(r"```python\n(.*?)```", part[1] if len(part) == 2 else "", re.S)
    if not m:
        check("README.md has a ```python loop under 'Token sequences and mixtures'", False)
        return
    code = m.group(1) + "\nprint('batches', batch.index + 1, tuple(ids.shape))\n"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=600)
    check("README.md's token loop, as written, runs: 167 batches of [16, 128]", p.returncode == 0 and "batches 167 (16, 128)" in p.stdout,
          (p.stdout + p.stderr)[-400:])


def gpufeed_batch_arrays(batch):
    """a host batch's features as NumPy arrays (DLPack, no copy)"""
    a = np.from_dlpack(batch)
    if a.ndim == 2 and a.shape[1] % 2 == 0 and a.dtype == np.int32:
        T = a.shape[1] // 2
        return a[:, :T], a[:, T:]
    return (a,)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/asan")
    ap.add_argument("--no-python", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="gpufeed-pack-")
    try:
        test_writers(args.bin, tmp)
        test_bench(args.bin, tmp)
        if not args.no_python:
            test_python(tmp)
            test_readme_snippet()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (PASS, FAIL))
    sys.exit(1 if FAIL else 0)


if __name__ == "__main__":
    main()
