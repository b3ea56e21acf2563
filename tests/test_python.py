#!/usr/bin/env python3
"""The Python binding (tools/gpufeed.py) and DLPack into PyTorch and NumPy.

    .venv/bin/python tests/test_python.py [--gpufeed-dense build/gpufeed-dense]

Checks, on the CPU (and on a GPU when torch sees one and nvcc builds the
CUDA library): torch.from_dlpack(batch) is the batch's own memory (no copy)
and its values equal the C path (gpufeed-dense writes the same rows as one
matrix: with no shuffling, the concatenated batches must be byte-identical);
feature views and masks; both DLPack protocols (legacy and versioned
capsules); the batch hashes equal the C loader's (gpufeed-bench); tensors
outlive their batch and the loader; holding too many batches is a clear
error; bad input (missing file, unknown column, wrong dtype) raises
GpufeedError with a message naming it; examples/pytorch_train.py trains
(its loss goes down). Prints "N passed, N failed" last.
"""
import argparse
import gc
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import numpy as np  # noqa: E402

import gpufeed  # noqa: E402

try:
    import torch
except ImportError as e:  # the venv installs it; say so rather than skip silently
    print("FAIL import torch: %s (make venv installs it)" % e)
    print("0 passed, 1 failed")
    sys.exit(1)

PASS = FAIL = 0
IDS = os.path.join(ROOT, "tests", "data", "ids.parquet")
FLIGHTS = os.path.join(ROOT, "examples", "data", "flights.parquet")


def check(name, cond, detail=""):
    global PASS, FAIL
    if cond:
        PASS += 1
        print("PASS " + name)
    else:
        FAIL += 1
        print("FAIL " + name + ((": " + detail) if detail else ""))


def raises(fn, needle):
    try:
        fn()
    except gpufeed.GpufeedError as e:
        return needle in str(e), str(e)
    return False, "no error raised"


def feats():
    return [gpufeed.Feature("x"), gpufeed.Feature("k"), gpufeed.Feature("y", validity=True)]


def test_values_vs_c(dense_bin):
    # no shuffling, one worker: the batches concatenated are gpufeed-dense's matrix
    with tempfile.TemporaryDirectory() as td:
        out = os.path.join(td, "m.bin")
        subprocess.run([dense_bin, "--columns", "x,k,y", "--dtype", "f32", "-o", out, IDS],
                       check=True, capture_output=True)
        ref = np.fromfile(out, dtype=np.float32).reshape(-1, 3)
    L = gpufeed.Loader(IDS, features=feats(), batch_rows=777, unit_shuffle=False, epochs=1)
    parts, zero_copy, masks_ok = [], True, True
    for b in L:
        t = torch.from_dlpack(b)
        x = t.clone()
        parts.append(x)
        # zero copy: the tensor's memory is the batch slot's own bytes
        raw = np.ctypeslib.as_array(ctypes_ptr(b._db.host.data, b.rows * 3 * 4), shape=(b.rows * 3 * 4,))
        zero_copy &= t.data_ptr() == b._db.host.data and np.array_equal(raw.view(np.float32).reshape(-1, 3), t.numpy())
        m = torch.from_dlpack(b.mask(2))
        masks_ok &= m.dtype == torch.uint8 and m.shape == (b.rows,)
    L.close()
    got = torch.cat(parts).numpy()
    check("torch.from_dlpack: %d batches equal gpufeed-dense's %d x 3 float32 matrix byte for byte" % (len(parts), ref.shape[0]),
          got.shape == ref.shape and got.tobytes() == ref.tobytes())
    check("torch.from_dlpack is zero-copy (data_ptr is the batch slot)", zero_copy)
    check("masks come as uint8 [rows]", masks_ok)


def ctypes_ptr(addr, n):
    import ctypes
    return ctypes.cast(addr, ctypes.POINTER(ctypes.c_uint8 * n)).contents


def test_views_and_protocols():
    L = gpufeed.Loader(IDS, features=feats(), batch_rows=1000, workers=2, seed=3, shuffle_window=2)
    b = next(L)
    t = torch.from_dlpack(b)
    f1 = torch.from_dlpack(b.feature(1))
    check("feature view: a strided column of the matrix", torch.equal(f1, t[:, 1]) and f1.stride() == (3,),
          "stride %s" % (f1.stride(),))
    cap = b.__dlpack__()
    check("legacy capsule is named dltensor", "dltensor" in repr(cap) and "versioned" not in repr(cap))
    tv = torch.from_dlpack(b.__dlpack__(max_version=(1, 0)))
    check("versioned capsule (DLPack 1.0) taken by torch", torch.equal(tv, t))
    del cap  # an unconsumed capsule runs our deleter (no leak: the slot comes back)
    n = np.from_dlpack(b)
    check("numpy.from_dlpack: same values", np.array_equal(n, t.numpy()))
    check("__dlpack_device__ is (kDLCPU, 0)", b.__dlpack_device__() == (1, 0))
    L.close()
    check("tensors outlive the loader", float(t[0, 0]) == float(n[0, 0]) and torch.equal(tv, t))
    del t, tv, n, f1
    gc.collect()


def test_hash_vs_c(bench_bin):
    out = subprocess.run([bench_bin, IDS, "--batch", "500", "--workers", "2", "--seed", "11", "--epochs", "2",
                          "--shuffle-window", "2", "--unit-rows", "2500", "--columns", "x,k,y", "--print-batches"],
                         capture_output=True, text=True)
    want = [l.split()[3] for l in out.stdout.splitlines()
            if len(l.split()) == 4 and len(l.split()[3]) == 16 and l.split()[0].isdigit()]
    L = gpufeed.Loader(IDS, features=[gpufeed.Feature("x"), gpufeed.Feature("k"), gpufeed.Feature("y")],
                       batch_rows=500, workers=2, seed=11, epochs=2, shuffle_window=2, unit_rows=2500)
    got = ["%016x" % b.hash() for b in L]
    L.close()
    check("batch hashes equal the C loader's (gpufeed-bench, %d batches over 2 epochs)" % len(want),
          len(want) > 0 and got == want, "first got %s want %s (%s)" % (got[:1], want[:1], out.stderr[-200:]))


def test_slots_and_errors():
    L = gpufeed.Loader(IDS, features=feats(), batch_rows=1000, slots=3)
    keep = [torch.from_dlpack(next(L)) for _ in range(3)]
    ok, msg = raises(lambda: next(L), "slots are held")
    check("holding every slot's tensors: a clear error (%s)" % msg[:90], ok, msg)
    first = keep[0].clone()
    del keep[0]
    gc.collect()
    b = next(L)
    check("dropping a tensor frees its slot", b.rows == 1000 and torch.equal(keep[0], keep[0]))
    L.close()
    del keep, first
    ok, msg = raises(lambda: gpufeed.Loader("/no/such/file.parquet"), "/no/such/file.parquet")
    check("missing file: GpufeedError naming it", ok, msg)
    ok, msg = raises(lambda: gpufeed.Loader(IDS, features=[gpufeed.Feature("nope")]), "nope")
    check("unknown column: GpufeedError naming it", ok, msg)
    try:
        gpufeed.Feature("x", dtype="f128")
        check("bad dtype: ValueError", False)
    except ValueError as e:
        check("bad dtype: ValueError (%s)" % str(e)[:50], True)
    L = gpufeed.Loader(IDS, features=[gpufeed.Feature("id", "i64"), gpufeed.Feature("y", "f64")], batch_rows=100)
    b = next(L)
    ok, msg = raises(lambda: torch.from_dlpack(b), "differ in dtype")
    t0 = torch.from_dlpack(b.feature(0))
    check("mixed dtypes as one matrix: a clear error; per feature works (%s)" % msg[:60],
          ok and t0.dtype == torch.int64 and t0.stride() == (2,), msg)
    L.close()
    L = gpufeed.Loader(IDS, features=[gpufeed.Feature("id", "i64"), gpufeed.Feature("x")], batch_rows=100)
    ok, msg = raises(lambda: torch.from_dlpack(next(L).feature(0)), "not aligned")
    check("an i64 feature in a 12-byte row: a clear error naming the per-feature layout", ok and "per-feature" in msg, msg)
    L.close()
    L = gpufeed.Loader(IDS, features=[gpufeed.Feature("id", "i64"), gpufeed.Feature("x")], batch_rows=100, layout="feature")
    b = next(L)
    check("per-feature layout: each feature is its own contiguous tensor",
          torch.from_dlpack(b.feature(0)).is_contiguous() and torch.from_dlpack(b.feature(1)).dtype == torch.float32)
    L.close()


def test_list_feature():
    import pyarrow as pa
    import pyarrow.parquet as pq
    rng = np.random.default_rng(4)
    emb = rng.standard_normal((1000, 8)).astype(np.float32)
    with tempfile.TemporaryDirectory() as td:
        path = os.path.join(td, "emb.parquet")
        pq.write_table(pa.table({"id": np.arange(1000, dtype=np.int64),
                                 "emb": pa.array(list(emb), type=pa.list_(pa.float32()))}), path,
                       row_group_size=300)
        L = gpufeed.Loader(path, features=[gpufeed.Feature("emb.list.element", width=8)], batch_rows=128,
                           unit_shuffle=False)
        got = torch.cat([torch.from_dlpack(b).clone() for b in L])
        L.close()
    check("a list<float32> feature of width 8 arrives as [rows, 8] equal to np.stack of the lists",
          tuple(got.shape) == (1000, 8) and np.array_equal(got.numpy(), emb), str(tuple(got.shape)))


def test_cuda():
    if not torch.cuda.is_available():
        print("SKIP cuda: torch sees no GPU (the CUDA checks run on a GPU machine)")
        return
    ok, why = gpufeed.cuda_available(0)
    check("CUDA library builds and sees the device (%s)" % why, ok, why)
    if not ok:
        return
    cpu = [torch.from_dlpack(b).clone() for b in gpufeed.Loader(IDS, features=feats(), batch_rows=1000, seed=2, workers=2)]
    L = gpufeed.Loader(IDS, features=feats(), batch_rows=1000, seed=2, workers=2, device=0)
    gpu = []
    for b in L:
        t = torch.from_dlpack(b)
        gpu.append((t.device.type, t.clone().cpu()))
    L.close()
    check("CUDA batches: on the device, equal to the CPU batches",
          len(gpu) == len(cpu) and all(d == "cuda" and torch.equal(g, c) for (d, g), c in zip(gpu, cpu)))


def test_example():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "pytorch_train.py"), "--epochs", "3", "--cpu"],
                       capture_output=True, text=True, timeout=600)
    losses = [float(l.split("loss ")[1].split()[0]) for l in r.stdout.splitlines() if l.startswith("epoch ")]
    check("examples/pytorch_train.py trains: loss %s" % " -> ".join("%.3f" % v for v in losses),
          r.returncode == 0 and len(losses) == 3 and losses[-1] < losses[0], r.stderr[-300:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpufeed-dense", default=os.path.join(ROOT, "build", "gpufeed-dense"))
    ap.add_argument("--gpufeed-bench", default=os.path.join(ROOT, "build", "gpufeed-bench"))
    a = ap.parse_args()
    print("torch %s, numpy %s" % (torch.__version__, np.__version__))
    for t in (lambda: test_values_vs_c(a.gpufeed_dense), test_views_and_protocols,
              lambda: test_hash_vs_c(a.gpufeed_bench), test_slots_and_errors, test_list_feature, test_cuda, test_example):
        try:
            t()
        except Exception as e:  # a crash in one test is a failure, not the end
            import traceback
            traceback.print_exc()
            check("test raised %s" % type(e).__name__, False, str(e))
    print("%d passed, %d failed" % (PASS, FAIL))
    return 1 if FAIL else 0


if __name__ == "__main__":
    sys.exit(main())
