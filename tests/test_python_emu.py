#!/usr/bin/env python3
"""tools/gpufeed.py's CUDA branch, on any machine, through the emulated CUDA
driver (tests/cuda_emu.c built as a libcuda.so.1).

    .venv/bin/python tests/test_python_emu.py

Builds the emulated driver into a temporary directory and runs itself again
with LD_LIBRARY_PATH there, so that the binding's one library (built with
cc, as a user's is) loads it as it would load the NVIDIA driver; the
consumer's own copies go through the emulator's runtime calls, over the
same state. It plays the consumer a framework would be: for
each device batch it reads the DLPack capsule (legacy and versioned),
checks kDLCUDA, shape, dtype and strides, copies the tensor back on the
consumer's stream and compares it with the CPU batches; it marks consumed
capsules "used_dltensor" and calls their deleter, and drops others
unconsumed (their destructor must free the slot). Also: every DLPack stream
form (None, 1, 2, a handle, an object with .cuda_stream), holding more
tensors than slots is a clear error, tensors outlive the loader, and at the
end nothing CUDA-side is left and the runtime saw no misuse. What it cannot
say: that PyTorch, CuPy or JAX accept these capsules on a real device; that
is test_python.py's CUDA check on a GPU machine. Prints "N passed, N failed".
"""
import ctypes
import gc
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
IDS = os.path.join(ROOT, "tests", "data", "ids.parquet")

PASS = FAIL = 0


def check(name, cond, detail=""):
    global PASS, FAIL
    if cond:
        PASS += 1
        print("PASS " + name)
    else:
        FAIL += 1
        print("FAIL " + name + ((": " + detail) if detail else ""))


def cuda_home():
    for d in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if d and os.path.exists(os.path.join(d, "include", "cuda_runtime_api.h")):
            return d
    try:
        nvcc = subprocess.run(["which", "nvcc"], capture_output=True, text=True).stdout.strip()
    except OSError:
        nvcc = ""
    if nvcc:
        d = os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
        if os.path.exists(os.path.join(d, "include", "cuda_runtime_api.h")):
            return d
    return None


def build_driver(directory):
    """tests/cuda_emu.c as DIRECTORY/libcuda.so.1: (ok, compiler messages)"""
    os.makedirs(directory, exist_ok=True)
    cmd = [os.environ.get("CC", "cc"), "-O1", "-g", "-shared", "-fPIC", "-std=c99", "-Wall", "-Wextra", "-Werror",
           "-Wl,-soname,libcuda.so.1", "-I" + os.path.join(cuda_home(), "include"),
           os.path.join(ROOT, "tests", "cuda_emu.c"), "-o", os.path.join(directory, "libcuda.so.1"), "-lpthread"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode == 0, r.stderr[-2000:]


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


class EmuCounts(ctypes.Structure):
    _fields_ = [(n, ctypes.c_long) for n in ("device_allocs", "host_allocs", "registrations", "streams", "events",
                                             "misuse", "async_copies", "staged_copies", "waits",
                                             "contexts", "modules", "ctx_pushed", "launches")]


capi = ctypes.pythonapi
capi.PyCapsule_IsValid.restype = ctypes.c_int
capi.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
capi.PyCapsule_GetPointer.restype = ctypes.c_void_p
capi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
capi.PyCapsule_SetName.restype = ctypes.c_int
capi.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]


class Consumer:
    """What a framework does with a capsule: take it, read it on its stream, free it."""

    def __init__(self, lib, stream):
        self.lib, self.stream = lib, stream

    def take(self, cap):
        versioned = bool(capi.PyCapsule_IsValid(cap, b"dltensor_versioned"))
        name = b"dltensor_versioned" if versioned else b"dltensor"
        if not capi.PyCapsule_IsValid(cap, name):
            raise ValueError("not a DLPack capsule")
        ptr = capi.PyCapsule_GetPointer(cap, name)
        m = (DLManagedTensorVersioned if versioned else DLManagedTensor).from_address(ptr)
        capi.PyCapsule_SetName(cap, b"used_dltensor_versioned" if versioned else b"used_dltensor")
        return versioned, ptr, m

    def read(self, t, nbytes, stream=None):
        """Copies the tensor back on `stream` (default: the consumer's own), the
        stream its capsule was asked for: only there is the upload ordered."""
        buf = ctypes.create_string_buffer(max(nbytes, 1))
        # cudaMemcpyDeviceToHost = 2, into pageable memory: the stream's turn, then synchronous
        e = self.lib.cudaMemcpyAsync(buf, ctypes.c_void_p(t.data + t.byte_offset), ctypes.c_size_t(nbytes), 2,
                                     ctypes.c_void_p(self.stream if stream is None else stream))
        if e != 0:
            raise RuntimeError("cudaMemcpyAsync: %d" % e)
        return buf.raw[:nbytes]

    @staticmethod
    def free(ptr, m):
        DELETER(m.deleter)(ptr)


def main():
    if os.environ.get("GF_EMU_DRIVER_DIR"):
        return run()
    if not cuda_home():
        print("FAIL no CUDA headers (cuda.h): the emulated driver needs them")
        print("0 passed, 1 failed")
        return 1
    tmp = tempfile.mkdtemp(prefix="gpufeed_emu_")
    ok, err = build_driver(tmp)
    check("the emulated driver (tests/cuda_emu.c as libcuda.so.1) builds warning-free", ok, err)
    if not ok:
        print("%d passed, %d failed" % (PASS, FAIL))
        return 1
    env = dict(os.environ, GF_EMU_DRIVER_DIR=tmp, LD_LIBRARY_PATH=tmp + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""))
    env.pop("GPUFEED_LIB", None)
    r = subprocess.run([sys.executable, os.path.abspath(__file__)], env=env, capture_output=True, text=True, timeout=600)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    last = r.stdout.strip().splitlines()[-1:] or [""]
    m = re.match(r"(\d+) passed, (\d+) failed", last[0])
    if not m or r.returncode != 0:
        print("FAIL the run with the emulated driver ended with exit %d" % r.returncode)
    p, f = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    f += 0 if m and r.returncode == 0 else 1
    print("%d passed, %d failed" % (PASS + p, f))
    return 1 if f else 0


def run():
    """The checks, in a process whose LD_LIBRARY_PATH finds the emulated driver."""
    import gpufeed
    import numpy as np

    gpufeed.load()
    lib = ctypes.CDLL("libcuda.so.1")   # the emulator, which gpufeed's library loaded too
    check("the driver gpufeed loads is the emulator", hasattr(lib, "emu_counts_get"))
    lib.cudaMemcpyAsync.restype = ctypes.c_int
    lib.cudaMemcpyAsync.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
    lib.cudaStreamCreateWithFlags.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint]
    lib.cudaStreamDestroy.argtypes = [ctypes.c_void_p]
    lib.cudaStreamSynchronize.argtypes = [ctypes.c_void_p]
    lib.emu_last_misuse.restype = ctypes.c_char_p

    def counts():
        c = EmuCounts()
        lib.emu_counts_get(ctypes.byref(c))
        return c

    ok, why = gpufeed.cuda_available(0)
    check("gpufeed.cuda_available(0) with the emulated driver", ok, why)
    for dev, needle in ((5, "no CUDA device 5 (2 present)"),):
        try:
            gpufeed.Loader(IDS, batch_rows=100, device=dev)
            check("Loader(device=%d) on a machine with 2 devices is an error" % dev, False, "no error")
        except gpufeed.GpufeedError as e:
            check("Loader(device=%d) on a machine with 2 devices: GpufeedError naming it" % dev, needle in str(e), str(e))
    lib.emu_set_devices(0)
    try:
        gpufeed.Loader(IDS, batch_rows=100, device=0)
        check("Loader(device=0) without a device is an error", False, "no error")
    except gpufeed.GpufeedError as e:
        check("Loader(device=0) without a device: GpufeedError saying so", "no CUDA device" in str(e), str(e))
    lib.emu_set_devices(2)
    L = gpufeed.Loader(IDS, batch_rows=1000, device=None)
    b = next(L)
    check("Loader(device=None) with a usable device: CPU batches", not b.on_device and b.__dlpack_device__() == (1, 0),
          str(b.__dlpack_device__()))
    L.close()
    feats = [gpufeed.Feature("x"), gpufeed.Feature("k"), gpufeed.Feature("y", validity=True)]
    cpu = [np.from_dlpack(b).copy() for b in
           gpufeed.Loader(IDS, features=feats, batch_rows=1000, seed=2, workers=2, shuffle_window=2, device=None)]
    base = counts()

    st = ctypes.c_void_p()
    check("a consumer stream", lib.cudaStreamCreateWithFlags(ctypes.byref(st), 1) == 0)
    consumer = Consumer(lib, st.value)

    class TorchLikeStream:           # what torch.cuda.Stream offers
        cuda_stream = st.value

    # the whole stream: capsules of both kinds, read on the consumer's stream
    L = gpufeed.Loader(IDS, features=feats, batch_rows=1000, seed=2, workers=2, shuffle_window=2, device=0, slots=3)
    n = bad = badmeta = 0
    forms = [st.value, None, 1, 2, TorchLikeStream()]
    for b in L:
        if b.__dlpack_device__() != (2, 0):
            badmeta += 1
        stream = forms[n % len(forms)]
        cap = b.__dlpack__(stream=stream, max_version=(1, 0) if n % 2 else None)
        if n % 7 == 3:               # dropped unconsumed: the capsule's destructor frees it
            del cap
            n += 1
            continue
        versioned, ptr, m = consumer.take(cap)
        t = m.dl_tensor
        if versioned != bool(n % 2) or t.device.device_type != 2 or t.device.device_id != 0 or t.ndim != 2:
            badmeta += 1
        shape = (t.shape[0], t.shape[1])
        if shape != cpu[n].shape or (t.dtype.code, t.dtype.bits, t.dtype.lanes) != (2, 32, 1) or t.strides[0] != 3 or t.strides[1] != 1:
            badmeta += 1
        if stream is None:
            handle = 0                # the legacy default stream
        elif isinstance(stream, int):
            handle = stream
        else:
            handle = stream.cuda_stream
        got = np.frombuffer(consumer.read(t, shape[0] * shape[1] * 4, handle), dtype=np.float32).reshape(shape)
        if not np.array_equal(got, cpu[n]):
            bad += 1
        consumer.free(ptr, m)
        n += 1
    L.close()
    check("device batches: %d, one per CPU batch" % n, n == len(cpu) and n > 5, "%d vs %d" % (n, len(cpu)))
    check("capsules: kDLCUDA device 0, [rows, 3] float32, row strides, the kind asked for", badmeta == 0, "%d bad" % badmeta)
    check("every tensor read back on the consumer's stream equals the CPU batch", bad == 0, "%d of %d differ" % (bad, n))
    lib.cudaStreamSynchronize(st)

    # more live tensors than slots: a clear error, not a hang or an overwrite
    L = gpufeed.Loader(IDS, features=feats, batch_rows=1000, seed=2, workers=2, shuffle_window=2, device=0, slots=2)
    it = iter(L)
    keep = [next(it).__dlpack__(stream=st.value), next(it).__dlpack__(stream=st.value)]
    try:
        next(it)
        check("a third batch while two tensors hold both slots is an error", False, "no error")
    except gpufeed.GpufeedError as e:
        check("a third batch while two tensors hold both slots is an error", "slots are held" in str(e), str(e))
    # tensors outlive the loader
    L.close()
    versioned, ptr, m = consumer.take(keep[0])
    got = np.frombuffer(consumer.read(m.dl_tensor, cpu[0].size * 4), dtype=np.float32).reshape(cpu[0].shape)
    check("a tensor read after the loader closed still holds its batch", np.array_equal(got, cpu[0]))
    mid = counts()
    check("the device memory lives while tensors do", mid.device_allocs > base.device_allocs)
    consumer.free(ptr, m)
    del keep
    gc.collect()
    lib.cudaStreamSynchronize(st)
    check("cudaStreamDestroy", lib.cudaStreamDestroy(st) == 0)

    end = counts()
    left = [(f, getattr(end, f) - getattr(base, f)) for f in ("device_allocs", "host_allocs", "registrations", "streams", "events",
                                                               "contexts", "modules", "ctx_pushed")]
    check("nothing left on the (emulated) device: %s" % ", ".join("%s %+d" % kv for kv in left), all(v == 0 for _, v in left))
    check("no misuse (destroyed handles, bad copies, cross-device events, calls without a current context)",
          end.misuse == base.misuse,
          (lib.emu_last_misuse() or b"").decode())
    print("%d passed, %d failed" % (PASS, FAIL))
    return 1 if FAIL else 0


if __name__ == "__main__":
    sys.exit(main())
