"""gpufeed.py -- a thin Python binding of gpufeed.h (ctypes; no compiled
extension, no dependency beyond the standard library).

A Loader is a re-iterable dataset, as torch.utils.data.IterableDataset is:
each ``iter(loader)`` runs the next epoch and ``len(loader)`` is that
epoch's batches on this rank. Without ``label=`` it yields Batch objects
that speak DLPack (``__dlpack__(stream=...)``, ``__dlpack_device__()``);
with ``label=`` it yields ``(x, y)`` torch tensors::

    import torch, gpufeed
    loader = gpufeed.Loader("data/", features=["dep_delay", "distance"], label="arr_delay",
                            batch_rows=4096, workers=4, seed=0, shuffle_window=4)
    for epoch in range(3):
        for x, y in loader:                    # x [rows, 2], y [rows]: views of the batch, no copy
            ...
    state = loader.state_dict()                # resume exactly: Loader(...).load_state_dict(state)

``torch.from_dlpack(batch)``, ``cupy.from_dlpack``, ``jax.dlpack.from_dlpack``
and ``numpy.from_dlpack`` (CPU batches) take a Batch without a copy;
``batch.feature(j)`` and ``batch.mask(j)`` export one feature or its mask.

Lifetimes: a batch stays valid until the next-but-one ``next()`` (so one
batch fetched ahead, as Lightning and ``DataLoader(loader, batch_size=None)``
do, is fine). Tensors made from a batch keep its slot until they are
deleted: hold tensors of at most ``slots - 1`` batches (default slots 3) and
``.clone()`` the ones you keep longer; one more raises a GpufeedError that
says so.

Where batches live (``Loader(device=...)``):

- ``"auto"`` (the default): CUDA device 0 when it is usable -- the library
  loads the CUDA driver (``libcuda.so.1``, installed with every NVIDIA
  driver; no CUDA toolkit needed) and the driver reports the device -- else
  CPU batches, with one ``CPUFallbackWarning`` per process that says why
  ("no CUDA driver: libcuda.so.1 ...", "no CUDA device: ...").
- ``None`` or ``"cpu"``: CPU batches, no warning, nothing CUDA touched.
- ``0``, ``1``, ..., ``"cuda"``, ``"cuda:1"`` or a ``torch.device``: that
  CUDA device, or a ``GpufeedError`` saying why not (and that
  ``device=None`` gives CPU batches).

On a device, batches arrive in GPU memory through pinned slots and
asynchronous copies; the consumer's stream waits for the copy, and a slot
is refilled only after every tensor made from it is gone (its deleter
records an event on the consumer's stream). A CPU-only PyTorch cannot take
GPU batches: pass ``device=None`` there on a GPU machine.

``Feature(dtype=...)`` takes ``"float32"``, ``np.float32``,
``np.dtype("float32")``, ``torch.float32`` or the short names (``"f32"``):
float32, float64, float16, bfloat16, int32, int64, uint8.

The shared library is built from the header with one C compiler command,
once per header and build options (about 10 s), with a line on stderr while
it builds (GPUFEED_LIB names a library built already; CC another compiler)::

    cc -O2 -shared -fPIC -x c -DGPUFEED_IMPLEMENTATION -DGPUFEED_CURL gpufeed.h -o libgpufeed.so -lpthread -lm -ldl

into ``~/.cache/gpufeed/<key>/`` (GPUFEED_CACHE_DIR, or XDG_CACHE_HOME, to
move it), where the key is a digest of the header's bytes, the compiler and
the flags: a checkout, a pip install and a copy of gpufeed.py next to the
same header share one library, and processes starting together (torchrun's
ranks) build it once. The same library gives CPU and GPU batches: it loads
the CUDA driver at run time where there is one. Paths may be
``s3://bucket/prefix/`` (objects, prefixes, globs) and ``https://`` URLs: the
library loads libcurl (``libcurl.so.4``) at run time when it meets one, and
reads the standard ``AWS_*`` variables (gpufeed.h's >>remote section). The
ctypes mirrors of the C structs are checked against the library's own sizes
at load time (gpufeed_sizeof), so a header/binding mismatch is an error, not
memory corruption.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import re
import subprocess
import sys
import threading
import time
import warnings
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

try:
    import fcntl
except ImportError:  # not POSIX: no build lock (the library is Linux/POSIX anyway)
    fcntl = None

EPOCHS_ENDLESS = -1                # GPUFEED_EPOCHS_ENDLESS: the C loader's stream without an end
STATE_VERSION = 1                  # Loader.state_dict()["version"]
__version__ = "0.1.0"             # GPUFEED_VERSION_* of gpufeed.h (tests/test_python.py checks)
_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_HERE)   # a checkout: tools/gpufeed.py, gpufeed.h
ERROR_MAX = 512

DTYPES = {"f32": 0, "f64": 1, "f16": 2, "bf16": 3, "i32": 4, "i64": 5, "u8": 6}
_DTYPE_BYTES = {"f32": 4, "f64": 8, "f16": 2, "bf16": 2, "i32": 4, "i64": 8, "u8": 1}
# every name a dtype goes by (numpy's and torch's spelling, the short one)
_DTYPE_NAMES = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
                "int32": "i32", "int64": "i64", "uint8": "u8"}
_DTYPE_NAMES.update({k: k for k in DTYPES})

PathLike = Union[str, bytes, "os.PathLike[str]"]


class GpufeedError(RuntimeError):
    """An error reported by gpufeed.h, with its message (file, row group,
    column, page, offset where they apply), or by the binding (a closed or
    forked Loader, a released batch, a state of another dataset)."""


class CPUFallbackWarning(RuntimeWarning):
    """device="auto" found no usable CUDA device: batches stay on the CPU."""


# ---- C structs (mirrors of gpufeed.h; sizes checked at load) -----------------

class _Allocator(ctypes.Structure):
    _fields_ = [("alloc", ctypes.c_void_p), ("realloc", ctypes.c_void_p),
                ("free", ctypes.c_void_p), ("user", ctypes.c_void_p)]


class _Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("message", ctypes.c_char * ERROR_MAX)]


class _Feature(ctypes.Structure):
    _fields_ = [("column", ctypes.c_char_p), ("dtype", ctypes.c_int), ("null_policy", ctypes.c_int32),
                ("fill", ctypes.c_double), ("validity", ctypes.c_int32), ("cast", ctypes.c_int32),
                ("hash_buckets", ctypes.c_uint64), ("hash_seed", ctypes.c_uint64),
                ("width", ctypes.c_int32), ("list_policy", ctypes.c_int32), ("list_lengths", ctypes.c_int32),
                ("unit", ctypes.c_int32), ("missing", ctypes.c_int32), ("pack", ctypes.c_int32), ("positions", ctypes.c_int32),
                ("use_eos", ctypes.c_int32), ("eos", ctypes.c_int64)]


class _MixSource(ctypes.Structure):
    _fields_ = [("dataset", ctypes.c_void_p), ("weight", ctypes.c_double)]


class _MixtureDesc(ctypes.Structure):
    _fields_ = [("sources", ctypes.POINTER(_MixSource)), ("num_sources", ctypes.c_int32), ("until", ctypes.c_int32)]


_OPEN_SOURCE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p,
                                ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t)


class _DatasetDesc(ctypes.Structure):
    _fields_ = [("paths", ctypes.POINTER(ctypes.c_char_p)), ("num_paths", ctypes.c_int32),
                ("features", ctypes.POINTER(_Feature)), ("num_features", ctypes.c_int32),
                ("where", ctypes.c_void_p), ("num_where", ctypes.c_int32),
                ("unit_rows", ctypes.c_int64), ("unit_bytes", ctypes.c_int64), ("layout", ctypes.c_int32), ("flags", ctypes.c_uint32),
                ("allocator", _Allocator), ("open_source", ctypes.c_void_p), ("source_user", ctypes.c_void_p),
                ("manifest_dir", ctypes.c_char_p)]


class _CacheDesc(ctypes.Structure):
    _fields_ = [("dir", ctypes.c_char_p), ("max_bytes", ctypes.c_uint64), ("ram_bytes", ctypes.c_uint64),
                ("no_build", ctypes.c_int32), ("verify", ctypes.c_int32),
                ("log", ctypes.c_void_p), ("log_user", ctypes.c_void_p),
                ("dir_max_bytes", ctypes.c_uint64), ("no_wait", ctypes.c_int32),
                ("no_map", ctypes.c_int32)]


class _LoaderDesc(ctypes.Structure):
    _fields_ = [("batch_rows", ctypes.c_int64), ("workers", ctypes.c_int32), ("ring_depth", ctypes.c_int32),
                ("seed", ctypes.c_uint64), ("no_unit_shuffle", ctypes.c_int32), ("shuffle_window", ctypes.c_int32),
                ("rank", ctypes.c_int32), ("world", ctypes.c_int32), ("last_batch", ctypes.c_int32),
                ("even", ctypes.c_int32), ("start_epoch", ctypes.c_int64), ("start_batch", ctypes.c_int64),
                ("epochs", ctypes.c_int64), ("prefill", ctypes.c_int32), ("trace_path", ctypes.c_char_p),
                ("trace_max_events", ctypes.c_int32), ("debug_jitter_us", ctypes.c_int32),
                ("cache", ctypes.POINTER(_CacheDesc)), ("global_batch_rows", ctypes.c_int64), ("partitions", ctypes.c_int32)]


class _UploaderDesc(ctypes.Structure):
    _fields_ = [("device", ctypes.c_int32), ("slots", ctypes.c_int32), ("max_pinned_bytes", ctypes.c_uint64),
                ("host_fallback", ctypes.c_int32), ("resident_bytes", ctypes.c_uint64)]


class _Batch(ctypes.Structure):
    _fields_ = [("num_rows", ctypes.c_int64), ("index", ctypes.c_int64), ("data", ctypes.c_void_p),
                ("row_bytes", ctypes.c_int64), ("feature_offset", ctypes.POINTER(ctypes.c_int64)),
                ("features", ctypes.POINTER(ctypes.c_void_p)), ("valid", ctypes.POINTER(ctypes.c_void_p)),
                ("epoch", ctypes.c_int64), ("feature_info", ctypes.c_void_p), ("num_features", ctypes.c_int32),
                ("slice_start", ctypes.c_int64)]


class _DeviceBatch(ctypes.Structure):
    _fields_ = [("host", _Batch), ("data", ctypes.c_void_p), ("features", ctypes.POINTER(ctypes.c_void_p)),
                ("valid", ctypes.POINTER(ctypes.c_void_p)), ("ready", ctypes.c_void_p),
                ("slot", ctypes.c_int32), ("on_device", ctypes.c_int32), ("resident", ctypes.c_int32),
                ("serial", ctypes.c_uint64), ("uploader", ctypes.c_void_p)]




_PD = ctypes.POINTER(ctypes.c_double)


class _Stats(ctypes.Structure):
    _fields_ = [("wall_s", ctypes.c_double), ("trainer_wait_s", ctypes.c_double), ("copy_s", ctypes.c_double),
                ("workers", ctypes.c_int32), ("ring_depth", ctypes.c_int32), ("worker_busy_s", _PD),
                ("worker_backpressure_s", _PD), ("ring_full_s", ctypes.c_double), ("worker_assembly_s", _PD),
                ("read_s", ctypes.c_double), ("consumer_s", ctypes.c_double), ("life_s", ctypes.c_double),
                ("worker_busy", _PD), ("workers_busy", ctypes.c_double), ("bottleneck", ctypes.c_int),
                ("bytes_read", ctypes.c_uint64), ("units_decoded", ctypes.c_uint64), ("units_per_epoch", ctypes.c_int64),
                ("batches", ctypes.c_uint64), ("rows", ctypes.c_uint64), ("rows_dropped", ctypes.c_uint64),
                ("rows_repeated", ctypes.c_uint64), ("tokens_dropped", ctypes.c_uint64), ("cache_state", ctypes.c_int32),
                ("units_from_cache", ctypes.c_uint64),
                ("cache_bad_units", ctypes.c_uint64), ("verdict", ctypes.c_char * 384)]


_STAGES = {0: "none", 1: "read", 2: "decode", 3: "assembly", 4: "consumer"}   # gpufeed_stage
_CACHE_STATES = {0: "off", 1: "building", 2: "ready"}                          # GPUFEED_CACHE_*


# ---- the library ------------------------------------------------------------

_libs = {}
_lock = threading.Lock()
_BUILD_FLAGS = ["-O2", "-shared", "-fPIC", "-x", "c", "-DGPUFEED_IMPLEMENTATION", "-DGPUFEED_CURL"]
_BUILD_LIBS = ["-lpthread", "-lm", "-ldl"]


def _header() -> str:
    """gpufeed.h: in the checkout (tools/../gpufeed.h), next to this file, or
    installed with it (pip: _gpufeed/gpufeed.h)."""
    for p in (os.path.join(_ROOT, "gpufeed.h"), os.path.join(_HERE, "gpufeed.h"),
              os.path.join(_HERE, "_gpufeed", "gpufeed.h")):
        if os.path.isfile(p):
            return p
    raise GpufeedError("gpufeed.h not found next to %s (or in its parent directory); put it there, or set "
                       "GPUFEED_LIB to a library built from it" % __file__)


def _compiler() -> str:
    return os.environ.get("CC", "cc")


def _cache_base() -> str:
    return os.environ.get("GPUFEED_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "gpufeed")


def library_key(header: Optional[str] = None, cc: Optional[str] = None) -> str:
    """The library's cache key: a digest of the header's bytes, the compiler
    (CC) and the build flags. Equal headers share one library wherever
    gpufeed.py and the header live; any change of the three builds anew."""
    h = hashlib.sha256()
    with open(header or _header(), "rb") as f:
        h.update(f.read())
    h.update(b"\0" + "\0".join([cc or _compiler()] + _BUILD_FLAGS + _BUILD_LIBS).encode())
    return h.hexdigest()[:24]


def library_path() -> str:
    """Where the library for this header, compiler and flags lives (built or
    not): CACHE/<library_key()>/libgpufeed.so, CACHE being GPUFEED_CACHE_DIR,
    else $XDG_CACHE_HOME/gpufeed, else ~/.cache/gpufeed."""
    return os.path.join(_cache_base(), library_key(), "libgpufeed.so")


def build(out: Optional[str] = None) -> str:
    """Builds the shared library from gpufeed.h (one C compiler command; a
    line on stderr says so while it runs) into `out` (default:
    library_path()). Returns its path."""
    hdr = _header()
    out = out or library_path()
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    tmp = "%s.%d.tmp" % (out, os.getpid())     # a concurrent build never sees half a library
    cmd = [_compiler()] + _BUILD_FLAGS + [hdr, "-o", tmp] + _BUILD_LIBS
    sys.stderr.write("gpufeed: building %s from %s with %s (first use, once; about 10 s) ...\n"
                     % (out, hdr, os.path.basename(cmd[0])))
    sys.stderr.flush()
    t0 = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        raise GpufeedError("cannot run %s to build the gpufeed library: %s (set CC to a C compiler, or GPUFEED_LIB "
                           "to a library built already)" % (cmd[0], e))
    if r.returncode != 0:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise GpufeedError("building the gpufeed library failed (%s): %s" % (" ".join(cmd), (r.stderr or r.stdout)[-2000:]))
    os.replace(tmp, out)
    sys.stderr.write("gpufeed: built %s in %.1f s\n" % (out, time.time() - t0))
    return out


def _ensure_built(path: str) -> None:
    """Builds `path` unless it exists; processes that start together wait on
    a lock file beside it, so one of them builds and the others load."""
    if os.path.exists(path):
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".lock", "a") as lk:
        if fcntl is not None:
            fcntl.flock(lk.fileno(), fcntl.LOCK_EX)
        try:
            if not os.path.exists(path):
                build(path)
        finally:
            if fcntl is not None:
                fcntl.flock(lk.fileno(), fcntl.LOCK_UN)


def load() -> ctypes.CDLL:
    """The ctypes library (GPUFEED_LIB, else library_path(), built on first use)."""
    with _lock:
        if "lib" in _libs:
            return _libs["lib"]
        path = os.environ.get("GPUFEED_LIB")
        if not path:
            path = library_path()
            _ensure_built(path)
        lib = ctypes.CDLL(path)
        lib.gpufeed_sizeof.restype = ctypes.c_size_t
        lib.gpufeed_sizeof.argtypes = [ctypes.c_char_p]
        for name, st in (("gpufeed_feature", _Feature), ("gpufeed_dataset_desc", _DatasetDesc),
                         ("gpufeed_loader_desc", _LoaderDesc), ("gpufeed_cache_desc", _CacheDesc),
                         ("gpufeed_uploader_desc", _UploaderDesc), ("gpufeed_batch", _Batch),
                         ("gpufeed_device_batch", _DeviceBatch), ("gpufeed_error", _Error), ("gpufeed_stats", _Stats)):
            want = lib.gpufeed_sizeof(name.encode())
            if want != ctypes.sizeof(st):
                raise GpufeedError("gpufeed.py does not match %s: %s is %d bytes there, %d here "
                                   "(rebuild the library or update tools/gpufeed.py)" % (path, name, want, ctypes.sizeof(st)))
        P = ctypes.POINTER
        sigs = {
            "gpufeed_dataset_open": (ctypes.c_int, [P(ctypes.c_void_p), P(_DatasetDesc), P(_Error)]),
            "gpufeed_dataset_close": (None, [ctypes.c_void_p]),
            "gpufeed_dataset_feature": (P(_Feature), [ctypes.c_void_p, ctypes.c_int32]),
            "gpufeed_dataset_file_path": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_int32]),
            "gpufeed_dataset_unit": (ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_int64]),
            "gpufeed_loader_open": (ctypes.c_int, [P(ctypes.c_void_p), ctypes.c_void_p, P(_LoaderDesc), P(_Error)]),
            "gpufeed_loader_open_mixture": (ctypes.c_int, [P(ctypes.c_void_p), P(_MixtureDesc), P(_LoaderDesc), P(_Error)]),
            "gpufeed_loader_close": (None, [ctypes.c_void_p]),
            "gpufeed_loader_error": (ctypes.c_char_p, [ctypes.c_void_p]),
            "gpufeed_loader_epoch_batches": (ctypes.c_int64, [ctypes.c_void_p, ctypes.c_int64]),
            "gpufeed_loader_rows": (ctypes.c_int64, [ctypes.c_void_p]),
            "gpufeed_loader_stats": (None, [ctypes.c_void_p, P(_Stats)]),
            "gpufeed_uploader_open": (ctypes.c_int, [P(ctypes.c_void_p), ctypes.c_void_p, P(_UploaderDesc), P(_Error)]),
            "gpufeed_uploader_next": (ctypes.c_int, [ctypes.c_void_p, P(_DeviceBatch)]),
            "gpufeed_uploader_release": (ctypes.c_int, [ctypes.c_void_p, P(_DeviceBatch), ctypes.c_void_p]),
            "gpufeed_uploader_error": (ctypes.c_char_p, [ctypes.c_void_p]),
            "gpufeed_uploader_close": (None, [ctypes.c_void_p]),
            "gpufeed_batch_dlpack": (ctypes.c_int, [ctypes.c_void_p, P(_DeviceBatch), ctypes.c_int32, ctypes.c_int32,
                                                    ctypes.c_void_p, ctypes.c_int32, P(ctypes.c_void_p)]),
            "gpufeed_batch_hash": (ctypes.c_uint64, [ctypes.c_void_p, P(_Batch)]),
            "gpufeed_result_string": (ctypes.c_char_p, [ctypes.c_int]),
            "gpufeed_cuda_available": (ctypes.c_int, [ctypes.c_int32, ctypes.c_char_p, ctypes.c_size_t]),
            "gpufeed_where_parse": (ctypes.c_int, [P(ctypes.c_void_p), ctypes.c_char_p, P(_Error)]),
            "gpufeed_where_predicates": (ctypes.c_void_p, [ctypes.c_void_p, P(ctypes.c_int32)]),
            "gpufeed_where_free": (None, [ctypes.c_void_p]),
        }
        for name, (res, args) in sigs.items():
            fn = getattr(lib, name)
            fn.restype = res
            fn.argtypes = args
        _libs["lib"] = lib
        return lib


# ---- processes: a Loader belongs to the process that opened it ---------------

_forks = [0]


def _after_fork_in_child() -> None:
    _forks[0] += 1


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


# ---- devices ----------------------------------------------------------------

_warned_cpu = False


def _cuda_device(lib, device):
    """(True, "") when CUDA device `device` is usable through the driver the
    library loads, else (False, why)."""
    why = ctypes.create_string_buffer(256)
    if lib.gpufeed_cuda_available(device, why, 256):
        return True, ""
    return False, why.value.decode(errors="replace")


_DEVICE_FORMS = ("device='auto' (the default: CUDA device 0 when usable, else CPU batches with a warning), "
                 "None or 'cpu' (CPU batches), or a CUDA device: 0, 'cuda', 'cuda:1', torch.device('cuda', 1)")


def _device_request(device):
    """'auto', None (CPU) or a CUDA ordinal, from what the user passed."""
    if device is None:
        return None
    if isinstance(device, str):
        d = device.strip().lower()
        if d in ("auto", "cpu"):
            return None if d == "cpu" else "auto"
        if d == "cuda":
            return 0
        m = re.fullmatch(r"cuda:(\d+)", d)
        if m:
            return int(m.group(1))
    elif isinstance(device, int) and not isinstance(device, bool):
        if device >= 0:
            return device
    elif hasattr(device, "type") and hasattr(device, "index"):   # torch.device, without importing torch
        if device.type == "cpu":
            return None
        if device.type == "cuda":
            return device.index or 0
    raise ValueError("device=%r: use %s" % (device, _DEVICE_FORMS))


def _warn_cpu_once(why):
    global _warned_cpu
    if not _warned_cpu:
        _warned_cpu = True
        warnings.warn("gpufeed: no usable CUDA device (%s); batches stay on the CPU. device=None asks for CPU "
                      "batches without this warning" % why, CPUFallbackWarning, stacklevel=3)


def _python_message(msg):
    """A C message in the binding's own words (its arguments, not C fields)."""
    return msg.replace("(set host_fallback for host batches)", "(device=None gives CPU batches)")


def dtype_name(dtype):
    """The short name ('f32' ...) of a dtype given as a name ('float32',
    'f32'), a numpy dtype or type, or a torch dtype; ValueError otherwise."""
    if isinstance(dtype, str):
        key = dtype.strip().lower()
        for prefix in ("torch.", "numpy.", "np."):
            if key.startswith(prefix):
                key = key[len(prefix):]
    elif type(dtype).__module__.split(".")[0] == "torch":     # torch.float32; torch is imported already
        key = str(dtype).rsplit(".", 1)[-1]
    elif any(dtype is t for t in (float, int, bool)):   # `in` would call np.dtype's ==
        raise ValueError("dtype %s is ambiguous (numpy reads float as float64, torch as float32); name the width, "
                         "e.g. 'float32' or 'int64'" % dtype.__name__)
    else:
        key = None
        np = sys.modules.get("numpy")    # np.float32, np.dtype("float32"), ml_dtypes.bfloat16
        if np is not None:
            try:
                key = np.dtype(dtype).name
            except TypeError:
                key = None
    if key in _DTYPE_NAMES:
        return _DTYPE_NAMES[key]
    raise ValueError("dtype %r is not one gpufeed makes; use float32, float64, float16, bfloat16, int32, int64 or uint8 "
                     "(a name such as 'float32' or 'f32', a numpy dtype, or a torch dtype)" % (dtype,))


# ---- DLPack capsules -----------------------------------------------------------

_capi = ctypes.pythonapi
_capi.PyCapsule_New.restype = ctypes.py_object
_capi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capi.PyCapsule_IsValid.restype = ctypes.c_int
_capi.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capi.PyCapsule_GetPointer.restype = ctypes.c_void_p
_capi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_NAME = b"dltensor"
_NAME_V = b"dltensor_versioned"
_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_DELETER_OFFSET = {False: 56, True: 16}   # DLManagedTensor.deleter / DLManagedTensorVersioned.deleter


def _call_deleter(ptr, versioned):
    fn = ctypes.cast(ctypes.c_void_p.from_address(ptr + _DELETER_OFFSET[versioned]).value, _DELETER)
    fn(ptr)


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule):
    # a capsule that no consumer renamed ("used_dltensor...") still owns its tensor
    obj = ctypes.cast(capsule, ctypes.py_object)
    for name, versioned in ((_NAME, False), (_NAME_V, True)):
        if _capi.PyCapsule_IsValid(obj, name):
            _call_deleter(_capi.PyCapsule_GetPointer(obj, name), versioned)
            return


def _stream_ptr(stream):
    # DLPack: None = the legacy default stream; 1 = legacy default; 2 = per-thread default
    if stream is None or stream == -1:
        return None
    if isinstance(stream, int):
        return stream  # 1 and 2 are cudaStreamLegacy / cudaStreamPerThread as handles
    if hasattr(stream, "cuda_stream"):
        return stream.cuda_stream
    if hasattr(stream, "ptr"):
        return stream.ptr
    raise TypeError("stream must be None or an integer CUDA stream handle")


class _View:
    """One tensor of a batch: the whole matrix, a feature, or a mask."""

    def __init__(self, batch, feature, mask):
        self._b, self._feature, self._mask = batch, feature, mask

    def __dlpack_device__(self):
        return self._b.__dlpack_device__()

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        return self._b._export(self._feature, self._mask, stream, max_version, dl_device, copy)



class Batch:
    """One batch from a Loader. DLPack-exportable (the whole row-major matrix:
    every feature must share one dtype), or ``feature(j)`` / ``mask(j)``.

    Valid until the next-but-one ``next()`` of the loader (or its close);
    tensors made from it stay valid after that, and keep its slot until
    they are deleted.

    Attributes: ``rows``, ``index`` (the batch's number in its epoch; the
    global batch in elastic mode), ``epoch``, ``slice_start`` (elastic mode:
    this rank's first row in global batch ``index``), ``on_device``."""

    def __init__(self, loader: "Loader", db: _DeviceBatch) -> None:
        self._l, self._db = loader, db
        self.rows: int = db.host.num_rows
        self.index: int = db.host.index
        self.epoch: int = db.host.epoch
        self.slice_start: int = db.host.slice_start
        self.on_device: bool = bool(db.on_device)
        self._held = True

    def __repr__(self) -> str:
        return "<gpufeed.Batch epoch %d index %d rows %d%s>" % (self.epoch, self.index, self.rows,
                                                               "" if self._held else " released")

    def __dlpack_device__(self) -> Tuple[int, int]:
        return (2, self._l.device) if self.on_device else (1, 0)

    def __dlpack__(self, stream: Any = None, max_version: Optional[Tuple[int, int]] = None,
                   dl_device: Optional[Tuple[int, int]] = None, copy: Optional[bool] = None) -> Any:
        return self._export(-1, 0, stream, max_version, dl_device, copy)

    def _released_error(self) -> GpufeedError:
        if self._l._closed or self._l._closing:
            return GpufeedError("batch %d of epoch %d was released when its Loader closed; tensors exported before "
                                "that stay valid" % (self.index, self.epoch))
        return GpufeedError("batch %d of epoch %d was released (a batch is valid until the next-but-one next() of its "
                            "loader, or until the loader closes): export its tensors before then, and .clone() the "
                            "tensors you keep" % (self.index, self.epoch))

    def _export(self, feature: int, mask: int, stream: Any, max_version: Any, dl_device: Any, copy: Any) -> Any:
        if copy:
            raise BufferError("gpufeed exports without copies (copy=True is not supported)")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError("the batch lives on %s, not %s" % (self.__dlpack_device__(), tuple(dl_device)))
        versioned = max_version is not None and tuple(max_version) >= (1, 0)
        out = ctypes.c_void_p()
        sp = _stream_ptr(stream) if self.on_device else None
        lo = self._l
        lo._check_process()
        with lo._mu:
            if not self._held:
                raise self._released_error()
            r = lo._lib.gpufeed_batch_dlpack(lo._u, ctypes.byref(self._db), feature, mask, sp,
                                             1 if versioned else 0, ctypes.byref(out))
            if r != 0:
                raise GpufeedError(lo._lib.gpufeed_uploader_error(lo._u).decode(errors="replace"))
        return _capi.PyCapsule_New(out, _NAME_V if versioned else _NAME,
                                   ctypes.cast(_capsule_destructor, ctypes.c_void_p))

    def feature(self, j: int) -> "_View":
        """Feature j as its own tensor (a strided view in the row layout)."""
        return _View(self, int(j), 0)

    def mask(self, j: int) -> "_View":
        """Feature j's validity mask (uint8 [rows]; the feature needs validity=True)."""
        return _View(self, int(j), 1)

    def hash(self) -> int:
        """Order-sensitive 64-bit hash of the batch bytes (gpufeed_batch_hash),
        equal to what the C tools print for the same batch."""
        lo = self._l
        lo._check_process()
        with lo._mu:
            if not self._held:
                raise self._released_error()
            return lo._lib.gpufeed_batch_hash(lo._ds, ctypes.byref(self._db.host))

    def release(self) -> None:
        """Gives the batch back before the loader would (its tensors keep
        their slot until deleted). Releasing twice does nothing."""
        lo = self._l
        if not self._held or lo._forked():
            return
        with lo._mu:
            lo._release_locked(self)


class Feature:
    """A dense feature: a leaf column converted to a dtype.

    column: the leaf's dotted path (a partition key, from a key=value
    directory, by its key name). dtype: float32, float64, float16, bfloat16,
    int32, int64 or uint8 (a name, a short name such as 'f32', a numpy or a
    torch dtype; kept as the short name). fill / null: nulls become `fill`
    (null='fill') or an error (null='error'). validity: also a uint8 mask
    per row. cast: 'safe' (exact or an error) or 'unsafe' (truncate,
    saturate). hash_buckets / hash_seed: strings, or integer IDs, hashed
    into ids below hash_buckets. width: a list column (one repeated level,
    e.g. embeddings) gives `width` values per row, other lengths per
    `ragged` ('error', 'pad', 'truncate'); lengths=True gives each row's
    list length instead. unit ('s', 'ms', 'us', 'ns'): the unit a
    TIMESTAMP/TIME/DATE column's values arrive in, whatever each file's
    (None: the first file's). missing ('error' or 'null'): a column some
    files lack is an error, or nulls there.

    pack: T > 0 packs a list<int> column of token ids (`input_ids`; the
    list's own name will do): each row is a document, the documents are
    concatenated in the loader's order and cut into rows of T tokens, no
    padding (dtype int32 or int64). positions=True adds a second output, each
    token's position in its document (0 at each document's start): the
    input of document-masked attention. eos: a token id appended after every
    document. A packed loader yields Batch objects whose feature(0) is the
    [rows, T] tokens and feature(1) the positions."""

    UNITS = {None: 0, "ms": 1, "us": 2, "ns": 3, "s": 4}

    def __init__(self, column: str, dtype: Any = "f32", fill: float = 0.0, null: str = "fill", validity: bool = False,
                 cast: str = "safe", hash_buckets: int = 0, hash_seed: int = 0, width: int = 0, ragged: str = "error",
                 lengths: bool = False, unit: Optional[str] = None, missing: str = "error", pack: int = 0,
                 positions: bool = False, eos: Optional[int] = None) -> None:
        if not isinstance(column, str) or not column:
            raise TypeError("Feature(column=%r): a column name (a leaf's dotted path)" % (column,))
        dtype = dtype_name(dtype)
        if null not in ("fill", "error") or cast not in ("safe", "unsafe"):
            raise ValueError("null is 'fill' or 'error'; cast is 'safe' or 'unsafe'")
        if ragged not in ("error", "pad", "truncate"):
            raise ValueError("ragged is 'error', 'pad' or 'truncate'")
        if unit not in self.UNITS or missing not in ("error", "null"):
            raise ValueError("unit is None, 's', 'ms', 'us' or 'ns'; missing is 'error' or 'null'")
        self.column, self.dtype, self.fill, self.null = column, dtype, fill, null
        self.validity, self.cast, self.hash_buckets, self.hash_seed = validity, cast, hash_buckets, hash_seed
        self.width, self.ragged, self.lengths = int(width), ragged, bool(lengths)
        self.unit, self.missing = unit, missing
        if isinstance(pack, bool) or not isinstance(pack, int) or pack < 0:
            raise ValueError("pack=%r: tokens a packed row, an integer above 0 (0: no packing)" % (pack,))
        if (positions or eos is not None) and not pack:
            raise ValueError("positions and eos need pack=T (Feature(%r, pack=2048, positions=True))" % (column,))
        if pack and dtype not in ("i32", "i64"):
            raise ValueError("Feature(%r, pack=%d): packed tokens are int32 or int64, not %s" % (column, pack, dtype))
        self.pack, self.positions, self.eos = int(pack), bool(positions), eos

    def __repr__(self) -> str:
        return "Feature(%r, %r%s%s)" % (self.column, self.dtype, ", width=%d" % self.width if self.width else "",
                                         ", pack=%d%s" % (self.pack, ", positions=True" if self.positions else "") if self.pack else "")

    def _key(self) -> tuple:
        key = (self.column, self.dtype, float(self.fill), self.null, bool(self.validity), self.cast, int(self.hash_buckets),
               int(self.hash_seed), self.width, self.ragged, self.lengths, self.unit, self.missing)
        return key + (self.pack, self.positions, self.eos) if self.pack else key

    def _columns(self) -> int:
        """the feature's elements a row (its columns in the row-major matrix)"""
        if self.pack:
            return self.pack * (2 if self.positions else 1)
        return self.width if self.width > 0 and not self.lengths else 1


# ---- ranks --------------------------------------------------------------------

# (rank variable, world variable, launcher), in the order they are looked at
RANK_VARIABLES = (("RANK", "WORLD_SIZE", "torchrun"),
                  ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "Open MPI"),
                  ("PMI_RANK", "PMI_SIZE", "MPICH"),
                  ("SLURM_PROCID", "SLURM_NTASKS", "Slurm"))


def ranks_from_env(environ: Optional[Dict[str, str]] = None) -> Tuple[int, int, str]:
    """(rank, world, source) from the launcher's variables: RANK/WORLD_SIZE
    (torchrun), OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE (Open MPI),
    PMI_RANK/PMI_SIZE (MPICH), SLURM_PROCID/SLURM_NTASKS (Slurm), the first
    pair that is set; (0, 1, "default") when none is. A value that is no
    integer, or a rank outside [0, world), is a GpufeedError naming it."""
    env = os.environ if environ is None else environ
    for rv, wv, who in RANK_VARIABLES:
        if rv not in env or wv not in env:
            continue
        try:
            rank, world = int(env[rv]), int(env[wv])
        except ValueError:
            raise GpufeedError("%s=%r, %s=%r (%s): not integers" % (rv, env[rv], wv, env[wv], who))
        if world < 1 or not 0 <= rank < world:
            raise GpufeedError("%s=%d, %s=%d (%s): the rank must be in [0, world)" % (rv, rank, wv, world, who))
        return rank, world, "%s/%s" % (rv, wv)
    return 0, 1, "default"


# ---- the loader -------------------------------------------------------------------

_MIXTURE = ("paths=%r: a mixture is a dict {path: weight} or a list of (path, weight) pairs, each weight a number "
            "above 0 (a path may be a list of paths); for one dataset of several files pass a list of paths")


def _one_source(p: Any, whole: Any) -> List[Any]:
    """a mixture source's path(s) as a list"""
    ps = [p] if isinstance(p, (str, bytes, os.PathLike)) else list(p) if isinstance(p, (list, tuple)) else None
    if not ps or not all(isinstance(x, (str, bytes, os.PathLike)) for x in ps):
        raise TypeError(_MIXTURE % (whole,))
    return ps


def _sources(paths: Any) -> Tuple[List[Any], Optional[List[Tuple[List[Any], float]]]]:
    """(paths, mixture): a path or a list of them, mixture None; or a mixture,
    a dict {path: weight} or (path, weight) pairs, as [(paths, weight)] (its
    first source's paths first). A dict is always a mixture: never read as
    a list of paths."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        return [paths], None
    if isinstance(paths, dict):
        items = list(paths.items())
    else:
        try:
            items = list(paths)
        except TypeError:
            raise TypeError("paths=%r: a path (file, directory, glob, s3:// or https://), a list of them, or a mixture "
                            "({path: weight})" % (paths,))
        if not items:
            raise ValueError("paths is empty: give a file, a directory, a glob or a list of them")
        if not any(isinstance(p, (tuple, list, dict)) for p in items):
            for p in items:
                if not isinstance(p, (str, bytes, os.PathLike)):
                    raise TypeError("paths: %r is not a path" % (p,))
            return items, None
        if not all(isinstance(p, (tuple, list)) and len(p) == 2 for p in items):
            raise TypeError(_MIXTURE % (paths,))
    if not items:
        raise ValueError("the mixture has no source")
    mix = []
    for p, w in items:
        if isinstance(w, bool) or not isinstance(w, (int, float)):
            raise TypeError("mixture source %r: weight %r is not a number" % (p, w))
        if not (w > 0) or w == float("inf"):
            raise ValueError("mixture source %r: weight %r: a weight is a finite number above 0" % (p, w))
        mix.append((_one_source(p, paths), float(w)))
    return mix[0][0], mix


class _EpochIterator:
    """The iterator one ``iter(loader)`` returns: the batches of one epoch
    (the epoch's rest after load_state_dict). A newer ``iter()`` on the same
    loader replaces it."""

    def __init__(self, loader: "Loader", gen: int, epoch: int) -> None:
        self._loader, self._gen, self.epoch = loader, gen, epoch
        self._done = False

    def __iter__(self) -> "_EpochIterator":
        return self

    def __next__(self) -> Any:
        return self._loader._next_of(self)


class Loader:
    """The deterministic parallel loader as a re-iterable dataset.

    ``iter(loader)`` runs the next epoch (a torch IterableDataset does the
    same: ``for epoch in range(3): for x, y in loader:`` is three epochs);
    an epoch left before its end is skipped by the next ``iter()``
    (``stats()["batches_skipped"]``), except after ``load_state_dict``,
    which continues the saved epoch where it stopped. ``len(loader)``: the
    epoch's batches on this rank. ``next(loader)`` takes the next batch of
    the epoch the last ``iter()`` started (starting one when none runs).

    Arguments:
      paths: a file, directory (walked recursively), glob, s3:// object,
        prefix or glob, https:// URL, or a list of them. A dict or (path,
        weight) pairs (mixtures) is a TypeError.
      features: Feature objects or column names (None: every numeric and
        boolean column of the first file as float32).
      label: a column name (or a list of them): the loader then yields
        ``(x, y)`` torch tensors, y the label(s), x the other features
        (``(x, y, valid)`` when a label feature has validity=True: a bool
        [rows] mask). A label not among `features` is added as float32.
        Zero-copy views when every feature has one dtype; else x (and y)
        are put together with one copy.
      batch_rows: rows a batch on this rank (default 1024; elastic mode:
        global_batch_rows / world, the default there).
      workers, ring_depth: decoding threads and units held each (0: 2, 4
        with more than 4 workers).
      seed, shuffle_window, unit_shuffle: the order (a pure function of the
        seed, the epoch, rank and world; never of workers or timing).
      epochs: None (the default): iter() runs epochs without end; N: the
        run has epochs 0 .. N-1 (counted from the stream's start, so a
        Loader resumed at epoch 1 runs epochs 1 .. N-1), and an iter()
        after the last one is a GpufeedError.
      rank, world: this process's data-parallel rank. None (both): from
        RANK/WORLD_SIZE (torchrun), OMPI_COMM_WORLD_RANK/_SIZE, PMI_RANK/
        PMI_SIZE or SLURM_PROCID/SLURM_NTASKS, else 0 of 1
        (``ranks_from_env``). Per-world mode: each rank reads a disjoint
        shard, all with the same batch count (even: 'drop' the rows past
        the smallest shard's batches, or 'pad' by repeating rows); a split
        that would drop more than one batch of rows per rank an epoch cuts
        the units finer (unit_rows not given) or is a GpufeedError naming
        the loss. drop_last: world 1, the last partial batch left out.
      global_batch_rows, partitions: elastic mode (the global batch the
        same rows for any world dividing it; see the README).
      start_epoch, start_batch: where the stream starts (a C-style resume
        point; load_state_dict is the Python one).
      unit_rows: target rows a unit (0: the library's 65536, or finer where
        ranks need it); unit_bytes: dense bytes a unit at most (0: 16 MiB, 4 MiB of
        packed tokens; -1: no bound).
      layout: 'row' (one [rows, width] matrix) or 'feature' (a buffer per
        feature); None: 'row', or 'feature' when label= features mix dtypes.
      cache_dir: the tensor cache's directory (epoch 0 writes it, every
        later epoch and run reads it).
      device: 'auto' (CUDA device 0 when usable, else CPU batches and one
        CPUFallbackWarning), None or 'cpu', or a CUDA device (0, 'cuda:1',
        torch.device); after opening, .device is the ordinal used or None.
      slots: batches in flight (2..16): tensors of at most slots - 1
        batches may be alive at once.
      verify_crc: check the page CRCs the files have.
      where: predicates as text ("shard >= 4 and market in ('sf', 'ny')"):
        row groups and files pruned, rows filtered exactly.
      manifest_dir: s3:// paths keep their objects' footers there, so a
        later open lists them and fetches no footer (default: cache_dir).

    Threads and processes: one thread iterates at a time; ``close()`` from
    another thread waits for a ``next()`` in flight, which then raises a
    GpufeedError. A forked child (a DataLoader worker) cannot use the
    parent's Loader (a GpufeedError says to open one in the worker, or to
    use num_workers=0), and a Loader cannot be pickled."""

    def __init__(self, paths: Union[PathLike, Sequence[PathLike]], features: Optional[Sequence[Union[Feature, str]]] = None,
                 batch_rows: Optional[int] = None, workers: int = 1, ring_depth: int = 0, seed: int = 0, shuffle_window: int = 0,
                 unit_shuffle: bool = True, epochs: Optional[int] = None, rank: Optional[int] = None,
                 world: Optional[int] = None, even: str = "drop", drop_last: bool = False, start_epoch: int = 0,
                 start_batch: int = 0, unit_rows: int = 0, unit_bytes: int = 0, layout: Optional[str] = None,
                 cache_dir: Optional[PathLike] = None, device: Any = "auto", slots: int = 3, verify_crc: bool = False,
                 global_batch_rows: int = 0, partitions: int = 0, where: Optional[str] = None,
                 label: Optional[Union[str, Sequence[str]]] = None, until: str = "first",
                 manifest_dir: Optional[PathLike] = None) -> None:
        self._mu = threading.RLock()
        self._fork_mark = _forks[0]
        self._pid = os.getpid()
        self._ds = self._l = self._u = self._where = None
        self._closed = self._closing = False
        self._held: List[Batch] = []       # batches the loader keeps valid: the last one returned
        self._gen = 0
        self._implicit: Optional[_EpochIterator] = None
        self._keep: List[Any] = []
        self._acc = {}                     # counters of the C loaders closed so far
        self._skipped = 0
        _register_torch()
        self._paths, self._mix = _sources(paths)
        if until not in ("first", "longest"):
            raise ValueError("until=%r: 'first' (a mixture's epoch ends with its first source's) or 'longest'" % (until,))
        self.until = until
        self.manifest_dir = manifest_dir
        self._dss: List[Any] = []
        self._args(batch_rows, workers, ring_depth, seed, shuffle_window, unit_shuffle, epochs, even, drop_last,
                   start_epoch, start_batch, unit_rows, unit_bytes, layout, slots, global_batch_rows, partitions, where,
                   cache_dir, verify_crc)
        self._features = [Feature(f) if isinstance(f, str) else f for f in (features or [])]
        for f in self._features:
            if not isinstance(f, Feature):
                raise TypeError("features: %r is neither a Feature nor a column name" % (f,))
        self._label = self._label_names(label)
        if rank is None and world is None:
            self.rank, self.world, self.rank_source = ranks_from_env()
        elif rank is None or world is None:
            raise ValueError("give rank and world together, or neither (then they come from RANK/WORLD_SIZE, "
                             "OMPI_COMM_WORLD_RANK/_SIZE, PMI_RANK/PMI_SIZE or SLURM_PROCID/SLURM_NTASKS)")
        else:
            self.rank, self.world, self.rank_source = int(rank), int(world), "argument"
            if self.world < 1 or not 0 <= self.rank < self.world:
                raise ValueError("rank=%r, world=%r: the rank must be in [0, world)" % (rank, world))
        self.device: Optional[int] = None
        want = _device_request(device)
        self._lib = load()
        if want is not None:
            ok, why = _cuda_device(self._lib, 0 if want == "auto" else want)
            if ok:
                self.device = 0 if want == "auto" else want
            elif want == "auto":
                _warn_cpu_once(why)
            else:
                raise GpufeedError("device=%r: %s. device=None gives CPU batches (device='auto' falls back to them)"
                                   % (device, why))
        self._epoch, self._batch, self._fresh = self._start_epoch, self._start_batch, True
        self._c_pos: Optional[Tuple[int, int]] = None     # (epoch, batch) the C loader delivers next
        try:
            self._open()
        except BaseException:
            self._close_handles()
            raise

    # ---- arguments ----

    def _args(self, batch_rows, workers, ring_depth, seed, shuffle_window, unit_shuffle, epochs, even, drop_last,
              start_epoch, start_batch, unit_rows, unit_bytes, layout, slots, global_batch_rows, partitions, where,
              cache_dir, verify_crc) -> None:
        if even not in ("drop", "pad", "drop_any"):
            raise ValueError("even=%r: 'drop', 'pad' or 'drop_any' (drop, whatever the loss)" % (even,))
        if layout not in (None, "row", "feature"):
            raise ValueError("layout=%r: 'row' or 'feature'" % (layout,))
        if epochs is not None and (isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1):
            raise ValueError("epochs=%r: a count of 1 or more, or None (iter() runs epochs without end)" % (epochs,))
        if start_epoch < 0 or start_batch < 0:
            raise ValueError("start_epoch and start_batch are 0 or more")
        if epochs is not None and start_epoch >= epochs:
            raise ValueError("start_epoch=%d with epochs=%d: the run's epochs are 0 .. %d" % (start_epoch, epochs, epochs - 1))
        if batch_rows is None:             # elastic mode: the rank's share of the global batch
            batch_rows = 1024 if global_batch_rows <= 0 else 0
        self.batch_rows, self.workers, self.ring_depth, self.seed = int(batch_rows), int(workers), int(ring_depth), int(seed)
        self.shuffle_window, self.unit_shuffle, self.epochs, self.even = int(shuffle_window), bool(unit_shuffle), epochs, even
        self.drop_last, self._start_epoch, self._start_batch = bool(drop_last), int(start_epoch), int(start_batch)
        self._unit_rows_arg, self.unit_rows, self.unit_bytes = int(unit_rows), int(unit_rows), int(unit_bytes)
        self._layout_arg, self.slots = layout, int(slots)
        self.global_batch_rows, self.partitions, self.where = int(global_batch_rows), int(partitions), where
        self.cache_dir, self.verify_crc = cache_dir, bool(verify_crc)

    @staticmethod
    def _label_names(label: Any) -> List[str]:
        if label is None:
            return []
        names = [label] if isinstance(label, str) else list(label)
        if not names or not all(isinstance(n, str) and n for n in names):
            raise TypeError("label=%r: a column name or a list of them" % (label,))
        if len(set(names)) != len(names):
            raise ValueError("label=%r names a column twice" % (label,))
        return names

    # ---- opening: the dataset, then the stream ----

    def _open(self) -> None:
        if self.global_batch_rows > 0 and self.batch_rows == 0 and self.global_batch_rows % self.world == 0:
            self.batch_rows = self.global_batch_rows // self.world
        if self._label and any(f.pack for f in self._features):
            raise ValueError("label= does not apply to packed features: a packed row is several documents (a causal LM's "
                             "targets are its tokens shifted by one; positions=True marks where documents start)")
        if self._label:
            self._torch = _import_torch()
            if not self._features:          # every numeric column: ask the dataset which, then put the labels last
                self._open_dataset(self.unit_rows)
                self._features = self._dataset_features()
                self._close_dataset()
            self._order_label()
        self.layout = self._layout_arg or ("feature" if self._label and len(set(f.dtype for f in self._features)) > 1 else "row")
        self._open_dataset(self.unit_rows)
        self._open_split()
        if self._batch > 0 and self._batch == self._epoch_batches(self._epoch):   # start_batch at the epoch's end
            self._epoch, self._batch = self._epoch + 1, 0
            self._c_pos = (self._epoch, 0)
        self._fingerprint()

    def _order_label(self) -> None:
        """features: x first, the labels last (in label= order)"""
        by = {f.column: f for f in self._features if not f.lengths}
        ys = [by.get(n) or Feature(n) for n in self._label]
        xs = [f for f in self._features if all(f is not y for y in ys)]
        if not xs:
            raise ValueError("label=%r leaves no features for x" % (self._label,))
        self._features = xs + ys
        self._nx = len(xs)
        dts = set(f.dtype for f in self._features)
        self._xy_matrix = len(dts) == 1 and self._layout_arg in (None, "row")
        self._xcols = sum(f._columns() for f in xs)
        self._y_vector = len(ys) == 1 and ys[0]._columns() == 1
        self._y_valid = [self._nx + i for i, y in enumerate(ys) if y.validity]
        if len(set(f.dtype for f in xs)) > 1:
            raise ValueError("label=: x is one tensor, so its features need one dtype; they have %s (%s). Give them one "
                             "dtype, or iterate without label= (Batch objects, a tensor per feature)"
                             % (", ".join(sorted(set(f.dtype for f in xs))), ", ".join("%s %s" % (f.column, f.dtype) for f in xs)))

    def _open_dataset(self, unit_rows: int) -> None:
        """the dataset (a mixture: one a source, self._ds the first's)"""
        for paths in ([m[0] for m in self._mix] if self._mix else [self._paths]):
            try:
                self._dss.append(self._open_one(paths, unit_rows))
            except GpufeedError as e:
                if self._mix:
                    raise GpufeedError("mixture source %s: %s" % (", ".join(map(str, paths)), e))
                raise
        self._ds = self._dss[0]
        self.unit_rows = unit_rows

    def _c_features(self) -> List[Tuple[Feature, int]]:
        """the C features: (feature, positions) each; a packed feature with
        positions=True is two (its tokens, then their positions)"""
        out = []
        for f in self._features:
            out.append((f, 0))
            if f.pack and f.positions:
                out.append((f, 1))
        return out

    def _open_one(self, paths: List[Any], unit_rows: int) -> Any:
        err = _Error()
        cpaths = (ctypes.c_char_p * len(paths))(*[os.fsencode(p) for p in paths])
        dd = _DatasetDesc()
        dd.paths = cpaths
        dd.num_paths = len(paths)
        keep = [cpaths]
        if self._features:
            cf = self._c_features()
            fa = (_Feature * len(cf))()
            for i, (f, pos) in enumerate(cf):
                fa[i].column = f.column.encode()
                fa[i].dtype = DTYPES[f.dtype]
                fa[i].null_policy = 1 if f.null == "error" else 0
                fa[i].fill = float(f.fill)
                fa[i].validity = 1 if f.validity else 0
                fa[i].cast = 1 if f.cast == "unsafe" else 0
                fa[i].hash_buckets = int(f.hash_buckets)
                fa[i].hash_seed = int(f.hash_seed)
                fa[i].width = f.width
                fa[i].list_policy = {"error": 0, "pad": 1, "truncate": 2}[f.ragged]
                fa[i].list_lengths = 1 if f.lengths else 0
                fa[i].unit = Feature.UNITS[f.unit]
                fa[i].missing = 1 if f.missing == "null" else 0
                fa[i].pack, fa[i].positions = f.pack, pos
                fa[i].use_eos, fa[i].eos = (0, 0) if f.eos is None else (1, int(f.eos))
            dd.features = fa
            dd.num_features = len(cf)
            keep.append(fa)
        dd.unit_rows = unit_rows
        dd.unit_bytes = self.unit_bytes
        dd.layout = {"row": 0, "feature": 1}[getattr(self, "layout", None) or "row"]
        dd.flags = 1 if self.verify_crc else 0          # GPUFEED_OPEN_VERIFY_CRC
        mdir = self.manifest_dir or self.cache_dir
        if mdir:
            dd.manifest_dir = os.fsencode(mdir)
        if self.where and not self._where:
            w = ctypes.c_void_p()
            if self._lib.gpufeed_where_parse(ctypes.byref(w), str(self.where).encode(), ctypes.byref(err)) != 0:
                raise GpufeedError(err.message.decode(errors="replace"))
            self._where = w
        if self._where:
            n = ctypes.c_int32()
            dd.where = self._lib.gpufeed_where_predicates(self._where, ctypes.byref(n))
            dd.num_where = n.value
        ds = ctypes.c_void_p()
        if self._lib.gpufeed_dataset_open(ctypes.byref(ds), ctypes.byref(dd), ctypes.byref(err)) != 0:
            raise GpufeedError(err.message.decode(errors="replace"))
        self._keep.extend(keep)
        return ds

    def _dataset_features(self) -> List[Feature]:
        """the dataset's features as it opened them (features=None: its choice)"""
        out = []
        dt = dict((v, k) for k, v in DTYPES.items())
        i = 0
        while True:
            p = self._lib.gpufeed_dataset_feature(self._ds, i)
            if not p:
                return out
            f = p.contents
            out.append(Feature(f.column.decode(), dt[f.dtype], fill=f.fill, null="error" if f.null_policy else "fill",
                               validity=bool(f.validity), cast="unsafe" if f.cast else "safe", hash_buckets=f.hash_buckets,
                               hash_seed=f.hash_seed, width=f.width, ragged={0: "error", 1: "pad", 2: "truncate"}[f.list_policy],
                               lengths=bool(f.list_lengths), unit=dict((v, k) for k, v in Feature.UNITS.items())[f.unit],
                               missing="null" if f.missing else "error"))
            i += 1

    def _close_dataset(self) -> None:
        for ds in self._dss:
            self._lib.gpufeed_dataset_close(ds)
        self._dss = []
        self._ds = None
        self._keep = []

    def _open_stream(self, epoch: int, batch: int) -> None:
        """the C loader and its uploader, delivering (epoch, batch) first"""
        ld = _LoaderDesc()
        ld.batch_rows, ld.workers, ld.ring_depth, ld.seed = self.batch_rows, self.workers, self.ring_depth, self.seed
        ld.no_unit_shuffle = 0 if self.unit_shuffle else 1
        ld.shuffle_window, ld.rank, ld.world = self.shuffle_window, self.rank, self.world
        ld.last_batch = 1 if self.drop_last else 0
        ld.even = {"drop": 0, "pad": 1, "drop_any": 2}[self.even]
        if self.even == "drop" and self.world > 1 and self.global_batch_rows <= 0 and not self._mix:
            ld.even = 2  # the loss is checked here (_open_split: finer units tried, the refusal in Python's terms)
        ld.start_epoch, ld.start_batch = epoch, batch
        ld.epochs = EPOCHS_ENDLESS if self.epochs is None else self.epochs - epoch
        ld.global_batch_rows = self.global_batch_rows  # > 0: elastic mode (batch_rows may be 0)
        ld.partitions = self.partitions
        if self.cache_dir:
            self._cache = _CacheDesc()
            self._cache.dir = os.fsencode(self.cache_dir)
            ld.cache = ctypes.pointer(self._cache)
        err = _Error()
        lo = ctypes.c_void_p()
        if self._mix:
            src = (_MixSource * len(self._mix))()
            for i, (ds, (_, w)) in enumerate(zip(self._dss, self._mix)):
                src[i].dataset, src[i].weight = ds, w
            md = _MixtureDesc(src, len(self._mix), 1 if self.until == "longest" else 0)
            self._mix_keep = (src, md)
            r = self._lib.gpufeed_loader_open_mixture(ctypes.byref(lo), ctypes.byref(md), ctypes.byref(ld), ctypes.byref(err))
        else:
            r = self._lib.gpufeed_loader_open(ctypes.byref(lo), self._ds, ctypes.byref(ld), ctypes.byref(err))
        if r != 0:
            raise GpufeedError(err.message.decode(errors="replace"))
        self._l = lo
        dv = _UploaderDesc()
        dv.device = self.device if self.device is not None else -1    # GPUFEED_DEVICE_HOST: CPU batches
        dv.slots = self.slots
        dv.host_fallback = 0
        up = ctypes.c_void_p()
        if self._lib.gpufeed_uploader_open(ctypes.byref(up), lo, ctypes.byref(dv), ctypes.byref(err)) != 0:
            raise GpufeedError(_python_message(err.message.decode(errors="replace")))
        self._u = up
        self._c_pos = (epoch, batch)

    def _close_stream(self) -> None:
        """the C loader and uploader closed, their counters kept; the batches
        held become invalid (their tensors stay valid)"""
        for b in self._held:
            b._held = False
        self._held = []
        if self._l:
            st = _Stats()
            self._lib.gpufeed_loader_stats(self._l, ctypes.byref(st))
            for k in _COUNTERS:
                self._acc[k] = self._acc.get(k, 0) + getattr(st, k)
        if self._u:
            self._lib.gpufeed_uploader_close(self._u)
            self._u = None
        if self._l:
            self._lib.gpufeed_loader_close(self._l)
            self._l = None
        self._c_pos = None

    # ---- ranks: the split's loss ----

    def _split_loss(self) -> Optional[Tuple[int, int, int]]:
        """(rows lost, epoch, rows an epoch) for the worst of the first epochs
        this run delivers, when per-world ranks drop more than one batch of
        rows per rank; else None"""
        if self.world <= 1 or self.global_batch_rows > 0 or self.even != "drop" or self._mix:
            return None
        rows = self._lib.gpufeed_loader_rows(self._l)
        last = self._epoch + 16 if self.epochs is None else min(self.epochs, self._epoch + 16)
        worst = None
        for e in range(self._epoch, last):
            lost = rows - self.world * self.batch_rows * self._lib.gpufeed_loader_epoch_batches(self._l, e)
            if lost > self.world * self.batch_rows and (worst is None or lost > worst[0]):
                worst = (lost, e, rows)
        return worst

    def _open_split(self) -> None:
        """the stream, with units fine enough for the ranks: per-world ranks
        never drop more than one batch of rows per rank an epoch. Where
        unit_rows was not given, finer units are tried (batch_rows, a
        quarter, a sixteenth) when the split loses more, or when there are
        fewer units than ranks; else, or when none helps, an error"""
        tries = [self.unit_rows]
        if not self._unit_rows_arg and self.world > 1 and self.global_batch_rows <= 0 and self.batch_rows > 0 and not self._mix:
            tries += [u for u in (self.batch_rows, self.batch_rows // 4, self.batch_rows // 16) if 64 <= u < 65536]
        for i, u in enumerate(tries):
            if i:
                self._close_stream()
                self._close_dataset()
                self._open_dataset(u)
            try:
                self._open_stream(self._epoch, self._batch)
            except GpufeedError:
                if i + 1 < len(tries):
                    continue
                raise
            loss = self._split_loss()
            if not loss:
                return
        lost, e, rows = loss
        raise GpufeedError(
            "the rank split would drop %d of the %d rows of epoch %d (%.1f%%; world %d, batch_rows %d: more than "
            "one batch of rows per rank): the shards differ in size because the units are coarse (unit_rows %s "
            "tried). Pass a smaller unit_rows, use elastic mode (global_batch_rows=%d), or even='pad' (rows "
            "repeated instead of dropped)"
            % (lost, rows, e, 100.0 * lost / max(rows, 1), self.world, self.batch_rows,
               ", ".join(str(u or 65536) for u in tries), self.batch_rows * self.world))

    # ---- state ----

    def _fingerprint(self) -> None:
        """digests of the dataset, the features and the order, for state_dict"""
        files = []
        for ds in self._dss:
            i = 0
            while True:
                p = self._lib.gpufeed_dataset_file_path(ds, i)
                if p is None:
                    break
                files.append(p.decode(errors="replace"))
                i += 1
        common = os.path.dirname(os.path.commonprefix(files)) if len(files) > 1 else os.path.dirname(files[0]) if files else ""
        names = [f[len(common):] for f in files]      # the data may move: names below the common directory
        units = sum(_count(lambda k, ds=ds: self._lib.gpufeed_dataset_unit(ds, k)) for ds in self._dss)
        rows = self._lib.gpufeed_loader_rows(self._l)
        feats = [f._key() for f in (self._features or self._dataset_features())]

        def digest(obj: Any) -> str:
            return hashlib.sha256(repr(obj).encode()).hexdigest()[:16]
        mix = [w for _, w in self._mix] + [self.until] if self._mix else None
        self._fp = {"dataset": digest((names, units, rows) + ((mix,) if mix else ())), "features": digest((feats, self._label)),
                    "order": digest((self.batch_rows if self.global_batch_rows <= 0 else 0, self.shuffle_window, self.unit_shuffle, self.even, self.drop_last,
                                     self.global_batch_rows, self.partitions, self.where, self.unit_rows, self.unit_bytes,
                                     self.world if self.global_batch_rows <= 0 else 0))}
        self._fp_info = {"files": len(files), "units": units, "rows": rows}

    def state_dict(self) -> Dict[str, Any]:
        """The position as a small dict (the same size for any dataset):
        {"format": "gpufeed.Loader", "version": 1, "epoch", "batch" (the
        next batch to deliver), "seed", "batch_rows", "world",
        "global_batch_rows", and digests of the dataset, the features and
        the order}. load_state_dict() on a Loader opened with the same
        arguments continues exactly there (torchdata's StatefulDataLoader
        and Lightning call these two)."""
        self._check_process()
        with self._mu:
            return {"format": "gpufeed.Loader", "version": STATE_VERSION, "epoch": self._epoch, "batch": self._batch,
                    "seed": self.seed, "batch_rows": self.batch_rows, "world": self.world,
                    "global_batch_rows": self.global_batch_rows, "dataset": self._fp["dataset"],
                    "features": self._fp["features"], "order": self._fp["order"]}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """Continues at the position of `state` (from state_dict()): the next
        iter() delivers the rest of the saved epoch, then iter() runs the
        epochs after it up to `epochs`. A state of another version, dataset,
        feature set, seed or order is a GpufeedError saying which."""
        self._check_process()
        if not isinstance(state, dict):
            raise TypeError("load_state_dict: a dict from Loader.state_dict(), not %s" % type(state).__name__)
        if state.get("format") != "gpufeed.Loader":
            raise GpufeedError("load_state_dict: not a gpufeed Loader state (its keys: %s)" % ", ".join(sorted(map(str, state))))
        if state.get("version") != STATE_VERSION:
            raise GpufeedError("load_state_dict: state version %r; this gpufeed (%s) reads version %d"
                               % (state.get("version"), __version__, STATE_VERSION))
        elastic = self.global_batch_rows > 0
        for key, mine, what in (("seed", self.seed, "seed"), ("batch_rows", self.batch_rows, "batch_rows"),
                                ("global_batch_rows", self.global_batch_rows, "global_batch_rows"),
                                ("world", None if elastic else self.world, "world (per-world mode: the order depends on it)"),
                                ("dataset", self._fp["dataset"], "dataset (its files, units or rows differ)"),
                                ("features", self._fp["features"], "feature set (columns, dtypes, options or label)"),
                                ("order", self._fp["order"], "order options (shuffle_window, unit_shuffle, even, "
                                                             "drop_last, partitions, where, unit_rows or unit_bytes)")):
            if mine is not None and state.get(key) != mine and not (elastic and key == "batch_rows"):
                raise GpufeedError("load_state_dict: the state is of another %s (the state's %r, this Loader's %r)"
                                   % (what, state.get(key), mine))
        e, k = state.get("epoch"), state.get("batch")
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (e, k)):
            raise GpufeedError("load_state_dict: epoch %r and batch %r are not positions" % (e, k))
        with self._mu:
            self._check_open()
            nb = self._epoch_batches(e)
            if k > nb:
                raise GpufeedError("load_state_dict: batch %d is past epoch %d's %d batches" % (k, e, nb))
            if k == nb:
                e, k = e + 1, 0
            self._gen += 1                  # iterators of before are replaced
            self._implicit = None
            self._epoch, self._batch, self._fresh = e, k, True

    # ---- iteration ----

    @property
    def epoch(self) -> int:
        """The epoch the running iterator reads, or the next iter() starts."""
        return self._epoch

    def __iter__(self) -> _EpochIterator:
        self._check_process()
        with self._mu:
            self._check_open()
            if self._batch > 0 and not self._fresh:      # an epoch left before its end: skipped
                self._skipped += self._epoch_batches(self._epoch) - self._batch
                self._epoch, self._batch = self._epoch + 1, 0
            if self.epochs is not None and self._epoch >= self.epochs:
                raise GpufeedError("the Loader's %d epochs (epochs=%d) have all run; epochs=None lets iter() run epochs "
                                   "without end" % (self.epochs, self.epochs))
            self._fresh = True
            self._gen += 1
            return _EpochIterator(self, self._gen, self._epoch)

    def __next__(self) -> Any:
        it = self._implicit
        if it is None or it._gen != self._gen:
            it = self._implicit = self.__iter__()
        try:
            return next(it)
        except StopIteration:
            self._implicit = None
            raise

    def __len__(self) -> int:
        """Batches of the epoch the running iterator reads, or the next
        iter() starts, on this rank."""
        self._check_process()
        with self._mu:
            self._check_open()
            return self._epoch_batches(self._epoch)

    def epoch_batches(self, epoch: int = 0) -> int:
        """Batches of epoch `epoch` on this rank (after the even-batches rule)."""
        self._check_process()
        with self._mu:
            self._check_open()
            return self._epoch_batches(epoch)

    def _epoch_batches(self, epoch: int) -> int:
        return self._lib.gpufeed_loader_epoch_batches(self._l, epoch)

    def _next_of(self, it: _EpochIterator) -> Any:
        self._check_process()
        with self._mu:
            self._check_open()
            if it._gen != self._gen:
                raise GpufeedError("this iterator was replaced by a newer iter() of its Loader (each iter() runs the next "
                                   "epoch); iterate the newest one")
            if it._done:
                raise StopIteration
            nb = self._epoch_batches(self._epoch)
            if self._batch >= nb:           # an epoch without batches
                it._done = True
                self._epoch, self._batch = self._epoch + 1, 0
                raise StopIteration
            b = self._fetch()
            self._fresh = False
            self._batch += 1
            if self._batch == nb:
                it._done = True
                self._epoch, self._batch = self._epoch + 1, 0
            return self._output(b)

    def _fetch(self) -> Batch:
        """the batch at (self._epoch, self._batch), the batch before last released"""
        want = (self._epoch, self._batch)
        if self._c_pos != want:
            self._close_stream()
            self._open_stream(*want)
        while len(self._held) > 1:
            self._release_locked(self._held[0])
        db = _DeviceBatch()
        r = self._lib.gpufeed_uploader_next(self._u, ctypes.byref(db))
        if r == 0 and self._closing:
            self._lib.gpufeed_uploader_release(self._u, ctypes.byref(db), None)
            raise GpufeedError("the Loader was closed (close() from another thread) while this thread iterated it")
        if r != 0:
            self._c_pos = None if r == 1 else self._c_pos
            msg = "the stream ended before epoch %d batch %d" % want if r == 1 else \
                self._lib.gpufeed_uploader_error(self._u).decode(errors="replace")
            if "slots are held" in msg:
                msg = ("all %d slots are held: tensors of earlier batches are still alive. A batch's tensors keep its slot "
                       "until they are deleted, and the loader keeps the last batch valid until the next-but-one next(): "
                       "hold tensors of at most %d batches (slots - 1) at once. .clone() a tensor you keep longer, or "
                       "give Loader(slots=...) more slots" % (self.slots, self.slots - 1))
            raise GpufeedError(msg)
        if (db.host.epoch, db.host.index) != want:
            self._lib.gpufeed_uploader_release(self._u, ctypes.byref(db), None)
            self._c_pos = None
            raise GpufeedError("internal: the loader delivered epoch %d batch %d where epoch %d batch %d was due"
                               % (db.host.epoch, db.host.index, want[0], want[1]))
        nb = self._epoch_batches(want[0])
        self._c_pos = (want[0], want[1] + 1) if want[1] + 1 < nb else (want[0] + 1, 0)
        b = Batch(self, db)
        self._held.append(b)
        return b

    def _release_locked(self, b: Batch) -> None:
        if b._held:
            b._held = False
            if self._u:
                self._lib.gpufeed_uploader_release(self._u, ctypes.byref(b._db), None)
        if b in self._held:
            self._held.remove(b)

    def _output(self, b: Batch) -> Any:
        """what the iterator yields: the Batch, or (x, y[, valid]) with label="""
        if not self._label:
            return b
        torch = self._torch
        if self._xy_matrix:
            t = torch.from_dlpack(b)
            x = t[:, :self._xcols]
            y = t[:, self._xcols] if self._y_vector else t[:, self._xcols:]
        else:
            def part(j):
                v = torch.from_dlpack(b.feature(j))
                return v.reshape(v.shape[0], -1)
            xs = [part(j) for j in range(self._nx)]
            x = xs[0] if len(xs) == 1 else torch.cat(xs, 1)
            ys = [part(j) for j in range(self._nx, len(self._features))]
            y = ys[0][:, 0] if self._y_vector else (ys[0] if len(ys) == 1 else torch.cat(ys, 1))
        if not self._y_valid:
            return x, y
        ms = [torch.from_dlpack(b.mask(j)).bool() for j in self._y_valid]
        return x, y, (ms[0] if len(ms) == 1 else torch.stack(ms, 1))

    # ---- telemetry ----

    def stats(self) -> Dict[str, Any]:
        """The loader's telemetry as a dict: the position (epoch, batch,
        batches_per_epoch), the split (rank, world, rank_source, unit_rows,
        rows_per_epoch: all ranks' rows an epoch; epoch_rows_dropped /
        epoch_rows_repeated: rows of the current epoch that no rank
        delivers / that ranks deliver twice), counters since open
        (batches, rows, rows_dropped, rows_repeated: this rank's; tokens_dropped:
        packing's partial last rows;
        batches_skipped: left by an iter() before their epoch's end;
        bytes_read, units_decoded, units_from_cache, cache_bad_units) and the
        running stream's timing (wall_s, trainer_wait_s, copy_s, read_s,
        consumer_s, worker_busy, workers_busy, bottleneck, verdict,
        cache_state)."""
        self._check_process()
        with self._mu:
            self._check_open()
            st = _Stats()
            self._lib.gpufeed_loader_stats(self._l, ctypes.byref(st))
            rows = self._lib.gpufeed_loader_rows(self._l)
            nb = self._epoch_batches(self._epoch)
            out = dict((k, self._acc.get(k, 0) + getattr(st, k)) for k in _COUNTERS)
            if self.global_batch_rows > 0:
                delivered = nb * self.global_batch_rows
            elif self.world == 1 and not self.drop_last:
                delivered = rows
            else:
                delivered = nb * self.batch_rows * self.world
            out.update(epoch=self._epoch, batch=self._batch, batches_per_epoch=nb, rank=self.rank, world=self.world,
                       rank_source=self.rank_source, unit_rows=self.unit_rows or 65536, rows_per_epoch=rows,
                       epoch_rows_dropped=max(0, rows - delivered), epoch_rows_repeated=max(0, delivered - rows),
                       batches_skipped=self._skipped, wall_s=st.wall_s, trainer_wait_s=st.trainer_wait_s, copy_s=st.copy_s,
                       read_s=st.read_s, consumer_s=st.consumer_s, workers=st.workers, ring_depth=st.ring_depth,
                       worker_busy=[st.worker_busy[i] for i in range(st.workers)] if st.worker_busy else [],
                       workers_busy=st.workers_busy, bottleneck=_STAGES.get(st.bottleneck, str(st.bottleneck)),
                       units_per_epoch=st.units_per_epoch, cache_state=_CACHE_STATES.get(st.cache_state, str(st.cache_state)),
                       verdict=st.verdict.decode(errors="replace"))
            return out

    # ---- processes, threads, closing ----

    def _forked(self) -> bool:
        return self._fork_mark != _forks[0]

    def _check_process(self) -> None:
        if self._forked():
            raise GpufeedError(
                "this Loader was opened in process %d and is used in process %d, a fork of it (a torch DataLoader "
                "worker?): its decoding threads did not survive the fork. Open the Loader in the process that "
                "iterates it (in a DataLoader worker: in the dataset's __iter__ or worker_init_fn), or iterate it in "
                "the parent: DataLoader(loader, batch_size=None, num_workers=0) -- gpufeed decodes in its own threads "
                "(workers=)" % (self._pid, os.getpid()))

    def _check_open(self) -> None:
        if self._closed or self._closing or not self._u:
            raise GpufeedError("the Loader is closed")

    def close(self) -> None:
        """Closes the loader; tensors already made stay valid until deleted.
        From another thread: waits for a next() in flight, which then raises
        a GpufeedError. In a forked child it only lets go of the handles."""
        if self._forked():
            self._ds = self._l = self._u = self._where = None
            self._dss = []
            self._closed = True
            return
        self._closing = True
        with self._mu:
            self._close_handles()

    def _close_handles(self) -> None:
        self._closed = True
        if not hasattr(self, "_lib"):
            return
        self._close_stream()
        # the dataset may be closed while tensors live: they point into the
        # uploader's slots, which outlive it until their deleters run
        self._close_dataset()
        if self._where:
            self._lib.gpufeed_where_free(self._where)
            self._where = None

    def __enter__(self) -> "Loader":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __reduce__(self) -> Any:
        raise TypeError("a gpufeed Loader cannot be pickled or sent to another process (it holds decoding threads "
                        "and C handles): open it in the process that iterates it; with a torch DataLoader use "
                        "num_workers=0 (gpufeed decodes in its own threads)")


_COUNTERS = ("batches", "rows", "rows_dropped", "rows_repeated", "tokens_dropped", "bytes_read", "units_decoded", "units_from_cache",
             "cache_bad_units")


def _count(at: Any) -> int:
    """how many i >= 0 have at(i) set (a prefix): exponential, then binary search"""
    if not at(0):
        return 0
    hi = 1
    while at(hi):
        hi *= 2
    lo = hi // 2            # at(lo) set, at(hi) not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if at(mid):
            lo = mid
        else:
            hi = mid
    return hi


def _import_torch() -> Any:
    try:
        import torch
    except ImportError as e:
        raise GpufeedError("label= yields torch tensors, and torch does not import here (%s); without label= the "
                           "Loader yields Batch objects (DLPack: numpy.from_dlpack, cupy.from_dlpack ...)" % e)
    return torch


_torch_registered = [False]


def _register_torch() -> None:
    """Loader as a torch.utils.data.IterableDataset (a virtual subclass; torch
    is never imported here: only when the program imported it already)."""
    if _torch_registered[0]:
        return
    tud = sys.modules.get("torch.utils.data")
    if tud is not None and hasattr(tud, "IterableDataset"):
        tud.IterableDataset.register(Loader)
        _torch_registered[0] = True


def cuda_available(device: int = 0) -> Tuple[bool, str]:
    """(True, '') when CUDA device `device` is usable for batches, else
    (False, why): the library loads the CUDA driver (libcuda.so.1) and asks
    it."""
    return _cuda_device(load(), device)


_register_torch()
