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
(its loss goes down); label= yields (x, y) views of the batch; the Loader is a
torch IterableDataset whose batches survive one fetch ahead
(DataLoader(batch_size=None)); DataLoader workers get a clear error and
the parent's epoch stays whole; the close race under an ASan+UBSan library.

On a machine without a GPU, with the defaults: device="auto" gives CPU
batches with exactly one CPUFallbackWarning, builds only the CPU library
(a line on stderr while it builds, nothing the second time) and never runs
nvcc (a fake nvcc on PATH would say); an explicit device is a GpufeedError
in Python's words (device=None), never a C field name; dtypes as numpy and
torch name them; verify_crc=True catches a page whose bytes changed (which
without it reads silently wrong); the README's Python snippet (taken from
README.md as written) and examples/pytorch_train.py run with their
defaults; `pip install` of the repository (offline, into a temporary
directory) gives a gpufeed that builds its library from the installed
header. Prints "N passed, N failed" last.
"""
import argparse
import gc
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings

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
    L = gpufeed.Loader(IDS, features=feats(), batch_rows=777, unit_shuffle=False, epochs=1, device=None)
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
    L = gpufeed.Loader(IDS, features=feats(), batch_rows=1000, workers=2, seed=3, shuffle_window=2, device=None)
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
                       batch_rows=500, workers=2, seed=11, epochs=2, shuffle_window=2, unit_rows=2500, device=None)
    got = ["%016x" % b.hash() for epoch in range(2) for b in L]     # each iter() an epoch
    L.close()
    check("batch hashes equal the C loader's (gpufeed-bench, %d batches over 2 epochs)" % len(want),
          len(want) > 0 and got == want, "first got %s want %s (%s)" % (got[:1], want[:1], out.stderr[-200:]))


def test_slots_and_errors():
    L = gpufeed.Loader(IDS, features=feats(), batch_rows=1000, slots=3, device=None)
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
    ok, msg = raises(lambda: gpufeed.Loader("/no/such/file.parquet", device=None), "/no/such/file.parquet")
    check("missing file: GpufeedError naming it", ok, msg)
    ok, msg = raises(lambda: gpufeed.Loader(IDS, features=[gpufeed.Feature("nope")], device=None), "nope")
    check("unknown column: GpufeedError naming it", ok, msg)
    try:
        gpufeed.Feature("x", dtype="f128")
        check("bad dtype: ValueError", False)
    except ValueError as e:
        check("bad dtype: ValueError (%s)" % str(e)[:50], True)
    L = gpufeed.Loader(IDS, features=[gpufeed.Feature("id", "i64"), gpufeed.Feature("y", "f64")], batch_rows=100, device=None)
    b = next(L)
    ok, msg = raises(lambda: torch.from_dlpack(b), "differ in dtype")
    t0 = torch.from_dlpack(b.feature(0))
    check("mixed dtypes as one matrix: a clear error; per feature works (%s)" % msg[:60],
          ok and t0.dtype == torch.int64 and t0.stride() == (2,), msg)
    L.close()
    L = gpufeed.Loader(IDS, features=[gpufeed.Feature("id", "i64"), gpufeed.Feature("x")], batch_rows=100, device=None)
    ok, msg = raises(lambda: torch.from_dlpack(next(L).feature(0)), "not aligned")
    check("an i64 feature in a 12-byte row: a clear error naming the per-feature layout", ok and "per-feature" in msg, msg)
    L.close()
    L = gpufeed.Loader(IDS, features=[gpufeed.Feature("id", "i64"), gpufeed.Feature("x")], batch_rows=100, layout="feature",
                       device=None)
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
                           unit_shuffle=False, device=None)
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
    cpu = [torch.from_dlpack(b).clone() for b in gpufeed.Loader(IDS, features=feats(), batch_rows=1000, seed=2, workers=2,
                                                                device=None)]
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


def child(code, env=None, cwd=None, timeout=300):
    """runs python code in a fresh interpreter: (returncode, stdout, stderr)"""
    e = dict(os.environ)
    for k in ("GPUFEED_LIB", "PYTHONWARNINGS"):
        e.pop(k, None)
    e.update(env or {})
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, cwd=cwd or ROOT, timeout=timeout)
    return r.returncode, r.stdout, r.stderr


DEFAULTS_CHILD = r"""
import json, sys, warnings
sys.path.insert(0, %(dir)r)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    import gpufeed
    L = gpufeed.Loader(%(ids)r, batch_rows=1000)
    b = next(L)
    out = {"on_device": b.on_device, "device": L.device, "rows": b.rows}
    L.close()
    L = gpufeed.Loader(%(ids)r, batch_rows=1000)
    next(L)
    L.close()
out["warnings"] = [(x.category.__name__, str(x.message)) for x in w]
out["imported"] = [m for m in ("torch", "numpy") if m in sys.modules]
out["file"] = gpufeed.__file__
out["header"] = gpufeed._header()
print(json.dumps(out))
"""


def test_cpu_defaults():
    ok, why = gpufeed.cuda_available(0)
    n_gpu = 1 if ok else 0
    with tempfile.TemporaryDirectory() as td:
        # gpufeed.py copied next to gpufeed.h, a fresh cache, and an nvcc that tells when it runs
        shutil.copy(os.path.join(ROOT, "tools", "gpufeed.py"), td)
        shutil.copy(os.path.join(ROOT, "gpufeed.h"), td)
        os.makedirs(os.path.join(td, "bin"))
        marker = os.path.join(td, "nvcc-ran")
        with open(os.path.join(td, "bin", "nvcc"), "w") as f:
            f.write("#!/bin/sh\ntouch %s\nexit 1\n" % marker)
        os.chmod(os.path.join(td, "bin", "nvcc"), 0o755)
        env = {"PATH": os.path.join(td, "bin") + os.pathsep + os.environ.get("PATH", ""),
               "GPUFEED_CACHE_DIR": os.path.join(td, "cache")}
        code = DEFAULTS_CHILD % {"dir": td, "ids": IDS}
        rc, out, err = child(code, env, cwd=td)
        if rc != 0:
            check("Loader() with the defaults runs (a copied gpufeed.py next to gpufeed.h)", False, err[-600:])
            return
        r = json.loads(out.splitlines()[-1])
        builds = [l for l in err.splitlines() if l.startswith("gpufeed: building ")]
        if n_gpu == 0:
            fallback = [m for c, m in r["warnings"] if c == "CPUFallbackWarning"]
            check("no GPU (%s): Loader() with the defaults gives CPU batches" % why,
                  r["on_device"] is False and r["device"] is None and r["rows"] == 1000, str(r))
            check("... with exactly one CPUFallbackWarning for two loaders, saying why and naming device=None",
                  len(fallback) == 1 and len(r["warnings"]) == 1 and why in fallback[0] and "device=None" in fallback[0],
                  str(r["warnings"]))
        else:
            check("a GPU (%d): Loader() with the defaults puts batches on device 0" % n_gpu,
                  r["device"] == 0 and r["on_device"] is True, str(r) + err[-300:])
        check("nvcc never ran (one library, built with the C compiler, for CPU and GPU batches)", not os.path.exists(marker))
        check("one line on stderr while the library builds, naming it and the time it takes (%s)" % (builds[:1] or [""])[0][:90],
              len(builds) == 1 and "libgpufeed.so" in builds[0] and " s)" in builds[0], err[-400:])
        built = [os.path.join(dp, f) for dp, _, fs in os.walk(os.path.join(td, "cache")) for f in fs]
        check("the library lands in GPUFEED_CACHE_DIR/<header digest>/, found from the header next to gpufeed.py",
              os.path.join(td, "cache") in " ".join(built) and any(b.endswith("libgpufeed.so") for b in built)
              and r["header"] == os.path.join(td, "gpufeed.h"), " ".join(built))
        check("importing gpufeed and making features imports neither torch nor numpy", r["imported"] == [], str(r["imported"]))
        rc, out, err = child(code, env, cwd=td)
        check("the second run builds nothing", rc == 0 and "gpufeed: building" not in err, err[-300:])

    # explicit devices: errors in Python's words
    bad_dev = 0 if n_gpu == 0 else n_gpu
    for dev in (bad_dev, "cuda:%d" % bad_dev, torch.device("cuda", bad_dev)):
        try:
            gpufeed.Loader(IDS, batch_rows=100, device=dev)
            check("device=%r without that device is an error" % (dev,), False, "no error")
        except gpufeed.GpufeedError as e:
            m = str(e)
            check("device=%r without that device: GpufeedError saying device=None, no C field names (%s)" % (dev, m[:80]),
                  "device=None" in m and "host_fallback" not in m and "device=" + repr(dev) in m, m)
    for dev in ("gpu", -1, True, 2.0):
        try:
            gpufeed.Loader(IDS, device=dev)
            check("device=%r is refused" % (dev,), False, "no error")
        except ValueError as e:
            check("device=%r: ValueError listing the accepted forms" % (dev,), "'auto'" in str(e) and "None" in str(e) and "cuda:1" in str(e), str(e))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ok = all(not next(iter(gpufeed.Loader(IDS, batch_rows=100, device=d))).on_device for d in (None, "cpu", torch.device("cpu")))
    check("device=None, 'cpu' and torch.device('cpu'): CPU batches, no warning", ok and not w, str([str(x.message) for x in w]))
    m = gpufeed._python_message("uploader: no CUDA device (cudaErrorNoDevice) (set host_fallback for host batches)")
    check("the C uploader's hint is put in the binding's words", "device=None" in m and "host_fallback" not in m, m)


EMU_CHILD = r"""
import ctypes, json, sys, warnings
sys.path.insert(0, %(tools)r)
import gpufeed
res = []
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    for devices in (2, 0):
        ctypes.CDLL("libcuda.so.1").emu_set_devices(devices)   # the emulated driver, on LD_LIBRARY_PATH
        L = gpufeed.Loader(%(ids)r, batch_rows=1000)
        b = next(L)
        res.append([b.on_device, L.device, list(b.__dlpack_device__())])
        b.release()
        L.close()
print(json.dumps([res, [(x.category.__name__, str(x.message)) for x in w]]))
"""


def test_auto_emulated_gpu():
    """device='auto' where the driver reports devices: batches on the GPU;
    where it reports none: CPU with the warning (the emulated driver of
    tests/cuda_emu.c, found on LD_LIBRARY_PATH as libcuda.so.1, stands in
    for the NVIDIA driver; the library is the one CPU batches use)"""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import test_python_emu as emu
    if not emu.cuda_home():
        print("SKIP auto with an emulated GPU: no CUDA headers to build the emulated driver against")
        return
    with tempfile.TemporaryDirectory() as td:
        ok, err = emu.build_driver(td)
        check("the emulated driver builds", ok, err)
        if not ok:
            return
        rc, out, err = child(EMU_CHILD % {"tools": os.path.join(ROOT, "tools"), "ids": IDS},
                             {"LD_LIBRARY_PATH": td + os.pathsep + os.environ.get("LD_LIBRARY_PATH", "")})
        got = json.loads(out.splitlines()[-1]) if rc == 0 and out.strip() else None
        check("auto with a (emulated) device: batches on CUDA device 0, no warning",
              got is not None and got[0][0] == [True, 0, [2, 0]] and len(got[1]) == 1, str(got) + err[-300:])
        check("auto when the driver reports no device: CPU batches and one CPUFallbackWarning naming why",
              got is not None and got[0][1] == [False, None, [1, 0]] and got[1][0][0] == "CPUFallbackWarning"
              and "no CUDA device" in got[1][0][1], str(got))


def test_dtypes():
    import numpy as np
    forms = {"f32": ("float32", np.float32, np.dtype("float32"), torch.float32, torch.float, "torch.float32"),
             "f64": ("float64", np.float64, np.dtype("f8"), torch.float64, torch.double),
             "f16": ("float16", np.float16, torch.float16, torch.half),
             "bf16": ("bfloat16", torch.bfloat16),
             "i32": ("int32", np.int32, np.dtype("int32"), torch.int32),
             "i64": ("int64", np.int64, np.dtype("<i8"), torch.int64, torch.long),
             "u8": ("uint8", np.uint8, torch.uint8)}
    bad = [(short, f) for short, fs in forms.items() for f in fs + (short,) if gpufeed.Feature("x", f).dtype != short]
    check("dtypes as numpy and torch name them (%d forms) and the short names" % sum(len(v) + 1 for v in forms.values()),
          not bad, str(bad))
    want = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16, "bfloat16": torch.bfloat16,
            "int32": torch.int32, "int64": torch.int64, "uint8": torch.uint8}
    L = gpufeed.Loader(IDS, features=[gpufeed.Feature("k", d, cast="unsafe") for d in
                                      (np.float32, torch.float64, "float16", torch.bfloat16, np.dtype("int32"), "int64", np.uint8)],
                       batch_rows=100, layout="feature", device=None)
    b = next(L)
    got = [torch.from_dlpack(b.feature(i)).dtype for i in range(7)]
    L.close()
    check("... and the tensors come out in those dtypes", got == list(want.values()), str(got))
    for d in ("int16", torch.int8, np.bool_, "float", float, "f128"):
        try:
            gpufeed.Feature("x", d)
            check("dtype %r is refused" % (d,), False, "accepted")
        except ValueError as e:
            m = str(e)
            check("dtype %r: ValueError listing the accepted dtypes" % (d,),
                  ("float32, float64, float16, bfloat16, int32, int64 or uint8" in m) or ("ambiguous" in m and d is float), m)


def test_verify_crc():
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    vals = np.arange(1000, dtype=np.float64) / 7
    with tempfile.TemporaryDirectory() as td:
        good, bad = os.path.join(td, "good.parquet"), os.path.join(td, "bad.parquet")
        pq.write_table(pa.table({"v": vals}), good, compression="none", use_dictionary=False, write_page_checksum=True)
        cc = pq.ParquetFile(good).metadata.row_group(0).column(0)
        data = bytearray(open(good, "rb").read())
        data[cc.data_page_offset + cc.total_compressed_size - 2] ^= 0x10   # inside the last value of the page
        open(bad, "wb").write(data)

        def read(path, **kw):
            L = gpufeed.Loader(path, features=[gpufeed.Feature("v", "float64")], batch_rows=1000, unit_shuffle=False,
                               device=None, **kw)
            try:
                return np.concatenate([np.from_dlpack(b).reshape(-1).copy() for b in L])
            finally:
                L.close()

        check("verify_crc=True reads a file with correct page CRCs", np.array_equal(read(good, verify_crc=True), vals))
        silent = read(bad)
        check("without verify_crc the changed page reads silently wrong (the flipped byte is in a value)",
              not np.array_equal(silent, vals) and np.array_equal(silent[:-1], vals[:-1]))
        ok, msg = raises(lambda: read(bad, verify_crc=True), "CRC")
        check("verify_crc=True: GpufeedError naming the page CRC and the file (%s)" % msg[:100], ok and "bad.parquet" in msg, msg)


def test_readme_snippet():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    part = text.split("### From Python", 1)
    m = re.search(r"```python\n(.*?)```", part[1] if len(part) == 2 else "", re.S)
    if not m:
        check("README.md has a ```python snippet under 'From Python'", False)
        return
    rc, out, err = child(m.group(1), timeout=600)
    n_gpu = 1 if gpufeed.cuda_available(0)[0] else 0
    fallbacks = err.count("CPUFallbackWarning")
    check("README.md's Python snippet, as written, runs with its defaults here%s" % (" (one CPUFallbackWarning)" if n_gpu == 0 else ""),
          rc == 0 and fallbacks == (1 if n_gpu == 0 else 0),
          "exit %d: %s" % (rc, err.strip().splitlines()[-1] if err.strip() else ""))


def test_example_defaults():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "pytorch_train.py"), "--epochs", "2"],
                       capture_output=True, text=True, timeout=600)
    on = "cuda" if torch.cuda.is_available() else "cpu"
    losses = [l for l in r.stdout.splitlines() if l.startswith("epoch ")]
    check("examples/pytorch_train.py with its defaults (--epochs 2) trains on %s" % on,
          r.returncode == 0 and len(losses) == 2 and (" on %s" % on) in r.stdout, r.stderr[-300:])


def test_pip_install():
    hdr = open(os.path.join(ROOT, "gpufeed.h")).read()
    version = ".".join(re.search(r"#define GPUFEED_VERSION_%s (\d+)" % k, hdr).group(1) for k in ("MAJOR", "MINOR", "PATCH"))
    check("gpufeed.__version__ is the header's GPUFEED_VERSION (%s)" % version, gpufeed.__version__ == version, gpufeed.__version__)
    with tempfile.TemporaryDirectory() as td:
        src, site = os.path.join(td, "src"), os.path.join(td, "site")
        for f in ("pyproject.toml", "README.md", "LICENSE", "gpufeed.h", os.path.join("tools", "gpufeed.py")):
            os.makedirs(os.path.dirname(os.path.join(src, f)), exist_ok=True)
            shutil.copy(os.path.join(ROOT, f), os.path.join(src, f))
        r = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                            "--no-index", "--target", site, src], capture_output=True, text=True, timeout=300)
        check("pip install --no-build-isolation of the repository, offline", r.returncode == 0, (r.stderr or r.stdout)[-500:])
        if r.returncode != 0:
            return
        code = ("import sys, json, gpufeed\nL = gpufeed.Loader(%r, batch_rows=500, device=None)\n"
                "print(json.dumps([gpufeed.__file__, gpufeed._header(), next(L).rows]))\nL.close()\n" % IDS)
        rc, out, err = child(code, {"PYTHONPATH": site, "GPUFEED_CACHE_DIR": os.path.join(td, "cache")}, cwd=td)
        got = json.loads(out.splitlines()[-1]) if rc == 0 else None
        check("the installed gpufeed (its own copy of gpufeed.h) builds its library into the cache and loads batches",
              got is not None and got[0].startswith(site) and got[1] == os.path.join(site, "_gpufeed", "gpufeed.h")
              and got[2] == 500 and "gpufeed: building" in err, "%s %s" % (got, err[-400:]))
        test_pip_fresh_venv(td, src, code)


def test_pip_fresh_venv(td, src, code):
    """a fresh venv: the wheel (built offline by this venv's setuptools >=
    70.1, which needs no wheel package) installs with --no-index and loads
    batches; with the package index reachable, `pip install .` (the
    README's command: build isolation fetches setuptools >= 70.1) too"""
    wheels = os.path.join(td, "wheels")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--no-index", "-w", wheels, src],
                       capture_output=True, text=True, timeout=300)
    whl = [f for f in os.listdir(wheels) if f.endswith(".whl")] if r.returncode == 0 else []
    check("pip wheel of the repository, offline (setuptools >= 70.1: no bdist_wheel error)", len(whl) == 1, (r.stderr or r.stdout)[-500:])
    for kind in ("wheel", "pip install ."):
        venv = os.path.join(td, "fresh-" + kind.split()[0])
        r = subprocess.run([sys.executable, "-m", "venv", venv], capture_output=True, text=True, timeout=300)
        py = os.path.join(venv, "bin", "python")
        if r.returncode != 0 or not os.path.exists(py):
            check("a fresh venv (python -m venv) for the %s check" % kind, False, (r.stderr or r.stdout)[-300:])
            continue
        if kind == "wheel":
            cmd = [py, "-m", "pip", "install", "--quiet", "--no-index", os.path.join(wheels, whl[0])] if whl else None
        else:
            probe = subprocess.run([py, "-m", "pip", "download", "--quiet", "--no-deps", "-d", os.path.join(td, "probe"), "setuptools>=70.1"],
                                   capture_output=True, text=True, timeout=120)
            if probe.returncode != 0:
                print("SKIP pip install . in a fresh venv: the package index is not reachable (build isolation fetches setuptools >= 70.1)")
                continue
            cmd = [py, "-m", "pip", "install", "--quiet", src]
        if not cmd:
            continue
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        ok = r.returncode == 0
        if ok:
            run = subprocess.run([py, "-c", code], capture_output=True, text=True, timeout=600, cwd=td,
                                 env=dict(os.environ, GPUFEED_CACHE_DIR=os.path.join(td, "cache-" + kind.split()[0]), PYTHONPATH=""))
            got = json.loads(run.stdout.splitlines()[-1]) if run.returncode == 0 and run.stdout.strip() else None
            ok = got is not None and got[0].startswith(venv) and got[2] == 500
            detail = run.stderr[-400:]
        else:
            detail = (r.stderr or r.stdout)[-500:]
        check("a fresh venv: %s installs gpufeed, which loads batches from its own header" % kind, ok, detail)


def test_epochs():
    """epochs= counts iter() passes: None (the default) without end, N then
    a clear error; one `for` is one epoch either way; 0 is refused"""
    L = gpufeed.Loader(IDS, features=feats(), batch_rows=1000, device=None)
    got = [b.epoch for b in L]
    eps = [sorted(set(b.epoch for b in L)) for _ in range(3)]
    L.close()
    check("Loader() without epochs=: a `for` is one epoch (%d batches), and iter() goes on (epochs %s)" % (len(got), eps),
          len(got) == 20 and set(got) == {0} and eps == [[1], [2], [3]], str(got[:5]))
    L = gpufeed.Loader(IDS, features=feats(), batch_rows=1000, epochs=2, device=None)
    n = [sum(1 for _ in L) for _ in range(2)]
    try:
        iter(L)
        msg = None
    except gpufeed.GpufeedError as e:
        msg = str(e)
    L.close()
    check("epochs=2: two passes of 20 batches, then iter() is a GpufeedError naming epochs=None", n == [20, 20] and msg and "epochs=None" in msg, str(n))
    for bad in (0, -1, 1.5, True):
        try:
            gpufeed.Loader(IDS, features=feats(), batch_rows=1000, epochs=bad, device=None).close()
            check("epochs=%r is refused" % (bad,), False, "accepted")
        except ValueError as e:
            check("epochs=%r: ValueError saying a count or None" % (bad,), "None" in str(e), str(e))


LABEL_FEATS = ["dep_delay", "distance"]


def test_label():
    """label=: (x, y) tensors, views of the batch where the features share a dtype"""
    kw = dict(batch_rows=4096, workers=2, seed=0, shuffle_window=4, device=None)
    L = gpufeed.Loader(FLIGHTS, features=LABEL_FEATS, label="arr_delay", **kw)
    R = gpufeed.Loader(FLIGHTS, features=LABEL_FEATS + ["arr_delay"], **kw)
    same, views, n = True, True, 0
    for (x, y), b in zip(L, R):
        t = torch.from_dlpack(b)
        same &= torch.equal(x, t[:, :2]) and torch.equal(y, t[:, 2]) and x.dtype == torch.float32
        views &= x.stride() == (3, 1) and y.data_ptr() == x.data_ptr() + 8 and tuple(y.shape) == (x.shape[0],)
        n += 1
    check("label='arr_delay': %d (x, y) batches, x [rows, 2] and y [rows] equal to the batch's columns" % n, same and n == len(L) == 83)
    check("... views of the batch's one matrix (no copy)", views)
    L.close()
    R.close()
    # the label among the features, a dtype of its own, validity: (x, y, valid)
    L = gpufeed.Loader(FLIGHTS, features=["dep_delay", gpufeed.Feature("arr_delay", "float64", validity=True), "distance"],
                       label="arr_delay", **kw)
    R = gpufeed.Loader(FLIGHTS, features=LABEL_FEATS + [gpufeed.Feature("arr_delay", "float64", validity=True)],
                       layout="feature", **kw)
    ok = True
    for (x, y, valid), b in zip(L, R):
        ok &= (torch.equal(x, torch.stack([torch.from_dlpack(b.feature(0)), torch.from_dlpack(b.feature(1))], 1))
               and y.dtype == torch.float64 and torch.equal(y, torch.from_dlpack(b.feature(2)))
               and valid.dtype == torch.bool and torch.equal(valid, torch.from_dlpack(b.mask(2)).bool()))
    check("label of another dtype (float64) with validity=True: (x float32 [rows, 2], y float64, valid bool), the label "
          "moved last", ok and L.layout == "feature")
    L.close()
    R.close()
    L = gpufeed.Loader(FLIGHTS, features=None, label="arr_delay", **kw)
    x, y = next(iter(L))
    names = [f.column for f in L._features]
    check("features=None with label=: every other numeric column is x (%d), the label y" % x.shape[1],
          names[-1] == "arr_delay" and "arr_delay" not in names[:-1] and x.shape[1] == len(names) - 1 >= 10, str(names))
    del x, y
    L.close()
    try:
        gpufeed.Loader(FLIGHTS, features=["dep_delay", gpufeed.Feature("year", "int64")], label="arr_delay", **kw)
        check("x of two dtypes with label=: refused", False, "accepted")
    except ValueError as e:
        check("x of two dtypes with label=: ValueError naming them (%s)" % str(e)[:60], "year i64" in str(e))
    code = ("import sys\nsys.modules['torch'] = None\nsys.path.insert(0, %r)\nimport gpufeed\n"
            "try:\n    gpufeed.Loader(%r, features=['dep_delay'], label='arr_delay', device=None)\n"
            "except gpufeed.GpufeedError as e:\n    print('ERROR', e)\n" % (os.path.join(ROOT, "tools"), FLIGHTS))
    rc, out, err = child(code)
    check("label= without torch: a GpufeedError saying so, and what works without it", "ERROR label= yields torch tensors" in out, out + err[-300:])


def test_dataloader():
    """torch.utils.data: an IterableDataset with len(); batch lifetimes for one-ahead fetching"""
    from torch.utils.data import DataLoader, IterableDataset
    kw = dict(features=LABEL_FEATS, label="arr_delay", batch_rows=4096, workers=2, seed=1, shuffle_window=4, device=None)
    L = gpufeed.Loader(FLIGHTS, **kw)
    R = gpufeed.Loader(FLIGHTS, **kw)
    dl = DataLoader(L, batch_size=None)
    check("a Loader is a torch IterableDataset; DataLoader(loader, batch_size=None) has its len (%d)" % len(dl),
          isinstance(L, IterableDataset) and len(dl) == len(L) == 83)
    got = [[(x.clone(), y.clone()) for x, y in dl] for epoch in range(3)]
    ref = [[(x.clone(), y.clone()) for x, y in R] for epoch in range(3)]
    check("for epoch in range(3): for x, y in DataLoader(loader): 3 full epochs (%s batches), the loader's own"
          % [len(g) for g in got], [len(g) for g in got] == [83] * 3 and all(
              torch.equal(a[0], b[0]) and torch.equal(a[1], b[1]) for ga, gb in zip(got, ref) for a, b in zip(ga, gb))
          and not torch.equal(got[0][0][0], got[1][0][0]))
    del got, ref
    L.close()
    R.close()
    # one batch ahead, as Lightning's fetcher: the batch before stays valid
    L = gpufeed.Loader(FLIGHTS, features=LABEL_FEATS, batch_rows=4096, device=None)
    it = iter(DataLoader(L, batch_size=None))
    b0 = next(it)
    b1 = next(it)                     # fetched ahead while b0 trains
    t0 = torch.from_dlpack(b0)
    check("one batch fetched ahead (DataLoader(batch_size=None)): the batch before still exports", t0.shape == (4096, 2))
    b2 = next(it)
    try:
        torch.from_dlpack(b0)
        msg = None
    except gpufeed.GpufeedError as e:
        msg = str(e)
    check("... two ahead: released, in Python's words (%s)" % (msg or "")[:60], msg and "next-but-one" in msg and "gpufeed_" not in msg, str(msg))
    del it, b0, b1, b2, t0
    L.close()
    # tensors of more batches than slots - 1: a clear error naming .clone()
    L = gpufeed.Loader(FLIGHTS, features=LABEL_FEATS, label="arr_delay", batch_rows=4096, slots=3, device=None)
    it = iter(L)
    keep = [next(it), next(it), next(it)]
    try:
        next(it)
        msg = None
    except gpufeed.GpufeedError as e:
        msg = str(e)
    check("holding the tensors of 3 batches (slots=3) and asking for a 4th: GpufeedError naming slots - 1 and .clone(), no C "
          "names (%s)" % (msg or "")[:80], msg and "slots are held" in msg and ".clone()" in msg and "slots - 1" in msg
          and "gpufeed_" not in msg, str(msg))
    keep = [(x.clone(), y.clone()) for x, y in keep]
    gc.collect()
    check("... .clone() them and the loader goes on", next(it)[0].shape == (4096, 2))
    L.close()


WORKERS_CHILD = r"""
import json, sys
sys.path.insert(0, %(tools)r)
import torch, gpufeed
from torch.utils.data import DataLoader
kw = dict(features=["dep_delay", "distance"], label="arr_delay", batch_rows=4096, workers=2, seed=2, device=None)
L = gpufeed.Loader(%(path)r, **kw)
err = None
n = 0
try:
    for x, y in DataLoader(L, batch_size=None, num_workers=2):
        n += 1
except gpufeed.GpufeedError as e:
    err = str(e)
mine = [y.clone() for x, y in L]
ref = [y.clone() for x, y in gpufeed.Loader(%(path)r, **kw)]
print(json.dumps({"err": err, "n": n, "same": len(mine) == len(ref) == 83 and all(torch.equal(a, b) for a, b in zip(mine, ref))}))
"""


def test_close_race_asan():
    """tests/test_python_core.py's close race with the library built under ASan+UBSan (preloaded into python)"""
    cc = shutil.which("gcc") or shutil.which("cc")
    asan = subprocess.run([cc, "-print-file-name=libasan.so"], capture_output=True, text=True).stdout.strip() if cc else ""
    ubsan = subprocess.run([cc, "-print-file-name=libubsan.so"], capture_output=True, text=True).stdout.strip() if cc else ""
    if not (asan and os.path.isabs(asan) and os.path.isabs(ubsan)):
        print("SKIP the close race under ASan: no libasan here")
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import test_python_core as core
    with tempfile.TemporaryDirectory() as td:
        lib = os.path.join(td, "libgpufeed_asan.so")
        r = subprocess.run([cc, "-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer",
                            "-shared", "-fPIC", "-x", "c", "-DGPUFEED_IMPLEMENTATION", "-DGPUFEED_CURL", os.path.join(ROOT, "gpufeed.h"),
                            "-o", lib, "-lpthread", "-lm", "-ldl"], capture_output=True, text=True)
        check("the library builds under ASan+UBSan", r.returncode == 0, r.stderr[-400:])
        if r.returncode != 0:
            return
        before = core.PASS, core.FAIL
        core.test_close_race({"GPUFEED_LIB": lib, "LD_PRELOAD": asan + " " + ubsan,
                              "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1", "UBSAN_OPTIONS": "halt_on_error=1"}, 20,
                             " (the library under ASan+UBSan)")
        check("the close race under ASan+UBSan passed (the line above)", core.FAIL == before[1] and core.PASS == before[0] + 1)


def test_dataloader_workers():
    """DataLoader(num_workers=2) over a Loader: the forked workers cannot use it (a clear error, no hang, no batch
    twice); the parent's Loader goes on"""
    rc, out, err = child(WORKERS_CHILD % {"tools": os.path.join(ROOT, "tools"), "path": FLIGHTS}, timeout=180)
    got = json.loads(out.strip().splitlines()[-1]) if rc == 0 and out.strip() else None
    check("DataLoader(loader, num_workers=2): a GpufeedError from the worker naming the fork and num_workers=0, no batch, no hang",
          got is not None and got["n"] == 0 and got["err"] and "fork" in got["err"] and "num_workers=0" in got["err"],
          str(got) + err[-300:])
    check("... the Loader then runs its epoch in the parent, whole (83 batches as a fresh Loader's)", got is not None and got["same"])


def test_elastic(bench_bin):
    """elastic mode through the binding: the slices of worlds 1, 2 and 4,
    put together by (epoch, global batch, position), are the same rows; the
    C tool's --print-rows agrees row for row"""
    def rows(world, partitions):
        got = {}
        for r in range(world):
            L = gpufeed.Loader(IDS, features=[gpufeed.Feature("x"), gpufeed.Feature("k"), gpufeed.Feature("y")],
                               batch_rows=0, global_batch_rows=1024, partitions=partitions, world=world, rank=r,
                               workers=2, seed=5, epochs=2, shuffle_window=3, unit_rows=1000, device=None)
            for b in (b for epoch in range(2) for b in L):
                x = np.from_dlpack(b)
                for i in range(x.shape[0]):
                    got[(b.epoch, b.index, b.slice_start + i)] = x[i].tobytes()
            L.close()
        return got
    for p in (0, 4):
        w1, w2, w4 = rows(1, p), rows(2, p), rows(4, p)
        check("elastic (partitions %d) from Python: worlds 1, 2 and 4 give the same %d rows of the global batches" % (p, len(w1)),
              len(w1) > 30000 and w1 == w2 == w4)
    out = subprocess.run([bench_bin, IDS, "--global-batch", "1024", "--world", "2", "--rank", "1", "--workers", "2", "--seed", "5",
                          "--epochs", "2", "--shuffle-window", "3", "--unit-rows", "1000", "--columns", "x,k,y", "--print-rows"],
                         capture_output=True, text=True)
    keys = [tuple(int(v) for v in l.split()[:3]) for l in out.stdout.splitlines() if len(l.split()) == 4]
    w1 = rows(1, 0)
    check("gpufeed-bench --print-rows (rank 1 of 2) names %d rows of the same global batches" % len(keys),
          len(keys) > 15000 and all(k in w1 for k in keys) and all(k[2] >= 512 for k in keys), out.stderr[-300:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpufeed-dense", default=os.path.join(ROOT, "build", "gpufeed-dense"))
    ap.add_argument("--gpufeed-bench", default=os.path.join(ROOT, "build", "gpufeed-bench"))
    a = ap.parse_args()
    print("torch %s, numpy %s" % (torch.__version__, np.__version__))
    for t in (lambda: test_values_vs_c(a.gpufeed_dense), test_views_and_protocols,
              lambda: test_hash_vs_c(a.gpufeed_bench), lambda: test_elastic(a.gpufeed_bench), test_slots_and_errors, test_list_feature, test_cuda, test_example,
              test_cpu_defaults, test_auto_emulated_gpu, test_dtypes, test_verify_crc, test_readme_snippet, test_example_defaults, test_epochs,
              test_label, test_dataloader, test_dataloader_workers, test_close_race_asan,
              test_pip_install):
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
