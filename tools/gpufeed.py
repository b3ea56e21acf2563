"""gpufeed.py -- a thin Python binding of gpufeed.h (ctypes; no compiled
extension, no dependency beyond the standard library).

A loader is an iterator of batches; each batch speaks the DLPack protocol
(``__dlpack__(stream=...)`` and ``__dlpack_device__()``), so

    import torch, gpufeed
    loader = gpufeed.Loader(["data/"], features=[gpufeed.Feature("x"), gpufeed.Feature("y")],
                            batch_rows=4096, workers=4, seed=0, epochs=10)
    for batch in loader:
        x = torch.from_dlpack(batch)            # [rows, 2] float32, no copy
        y = torch.from_dlpack(batch.feature(1)) # one feature (a strided view)
        m = torch.from_dlpack(batch.mask(1))    # its validity mask (validity=True)

works the same with ``cupy.from_dlpack``, ``jax.dlpack.from_dlpack`` and
``numpy.from_dlpack`` (CPU batches).

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
records an event on the consumer's stream). Hold at most ``slots - 1``
batches' tensors at once (default slots 3): taking one more raises an error
that says so. A CPU-only PyTorch cannot take GPU batches: pass
``device=None`` there on a GPU machine.

``Feature(dtype=...)`` takes ``"float32"``, ``np.float32``,
``np.dtype("float32")``, ``torch.float32`` or the short names (``"f32"``):
float32, float64, float16, bfloat16, int32, int64, uint8.

The shared library is built from the header with one C compiler command,
once (about 10 s), with a line on stderr while it builds (GPUFEED_LIB names
a library built already; CC another compiler):

    cc -O2 -shared -fPIC -x c -DGPUFEED_IMPLEMENTATION -DGPUFEED_CURL gpufeed.h -o build/libgpufeed.so -lpthread -lm -ldl

The same library gives CPU and GPU batches: it loads the CUDA driver at run
time where there is one. Paths may be ``s3://bucket/prefix/`` (objects,
prefixes, globs) and ``https://`` URLs: the library loads libcurl
(``libcurl.so.4``) at run time when it meets one, and reads the standard
``AWS_*`` variables (gpufeed.h's >>remote section). From a checkout it goes to build/; when gpufeed.py
runs elsewhere (pip install, or gpufeed.py copied next to gpufeed.h), to
~/.cache/gpufeed/ (GPUFEED_CACHE_DIR, or XDG_CACHE_HOME, to move it), one
directory per version of the header. The ctypes mirrors of
the C structs are checked against the library's own sizes at load time
(gpufeed_sizeof), so a header/binding mismatch is an error, not memory
corruption.
"""
import ctypes
import hashlib
import os
import re
import subprocess
import sys
import threading
import time
import warnings

EPOCHS_ENDLESS = -1                # GPUFEED_EPOCHS_ENDLESS: Loader(epochs=None)
__version__ = "0.1.0"             # GPUFEED_VERSION_* of gpufeed.h (tests/test_python.py checks)
_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_HERE)   # a checkout: tools/gpufeed.py, gpufeed.h, build/
ERROR_MAX = 512

DTYPES = {"f32": 0, "f64": 1, "f16": 2, "bf16": 3, "i32": 4, "i64": 5, "u8": 6}
# every name a dtype goes by (numpy's and torch's spelling, the short one)
_DTYPE_NAMES = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
                "int32": "i32", "int64": "i64", "uint8": "u8"}
_DTYPE_NAMES.update({k: k for k in DTYPES})


class GpufeedError(RuntimeError):
    """An error reported by gpufeed.h, with its message (file, row group,
    column, page, offset where they apply)."""


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
                ("unit", ctypes.c_int32), ("missing", ctypes.c_int32)]


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


# ---- the library ------------------------------------------------------------

_libs = {}
_lock = threading.Lock()


def _header():
    """gpufeed.h: in the checkout (tools/../gpufeed.h), next to this file, or
    installed with it (pip: _gpufeed/gpufeed.h)."""
    for p in (os.path.join(_ROOT, "gpufeed.h"), os.path.join(_HERE, "gpufeed.h"),
              os.path.join(_HERE, "_gpufeed", "gpufeed.h")):
        if os.path.isfile(p):
            return p
    raise GpufeedError("gpufeed.h not found next to %s (or in its parent directory); put it there, or set "
                       "GPUFEED_LIB to a library built from it" % __file__)


def _default_lib_path():
    """Where the library is built: build/ of a checkout, else a cache
    directory named after the header's contents."""
    hdr = _header()
    if hdr == os.path.join(_ROOT, "gpufeed.h") and os.path.basename(_HERE) == "tools":
        return os.path.join(_ROOT, "build", "libgpufeed.so")
    with open(hdr, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    base = os.environ.get("GPUFEED_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "gpufeed")
    return os.path.join(base, digest, "libgpufeed.so")


def build(out=None):
    """Builds the shared library from gpufeed.h (one C compiler command; a
    line on stderr says so while it runs). Returns its path."""
    hdr = _header()
    out = out or _default_lib_path()
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    tmp = "%s.%d.tmp" % (out, os.getpid())     # a concurrent build never sees half a library
    cmd = [os.environ.get("CC", "cc"), "-O2", "-shared", "-fPIC", "-x", "c", "-DGPUFEED_IMPLEMENTATION", "-DGPUFEED_CURL",
           hdr, "-o", tmp, "-lpthread", "-lm", "-ldl"]
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


def load():
    """The ctypes library (built on first use when missing or older than the header)."""
    with _lock:
        if "lib" in _libs:
            return _libs["lib"]
        path = os.environ.get("GPUFEED_LIB")
        if not path:
            path = _default_lib_path()
            hdr = _header()
            if not os.path.exists(path) or os.path.getmtime(hdr) > os.path.getmtime(path):
                build(path)
        lib = ctypes.CDLL(path)
        lib.gpufeed_sizeof.restype = ctypes.c_size_t
        lib.gpufeed_sizeof.argtypes = [ctypes.c_char_p]
        for name, st in (("gpufeed_feature", _Feature), ("gpufeed_dataset_desc", _DatasetDesc),
                         ("gpufeed_loader_desc", _LoaderDesc), ("gpufeed_cache_desc", _CacheDesc),
                         ("gpufeed_uploader_desc", _UploaderDesc), ("gpufeed_batch", _Batch),
                         ("gpufeed_device_batch", _DeviceBatch), ("gpufeed_error", _Error)):
            want = lib.gpufeed_sizeof(name.encode())
            if want != ctypes.sizeof(st):
                raise GpufeedError("gpufeed.py does not match %s: %s is %d bytes there, %d here "
                                   "(rebuild the library or update tools/gpufeed.py)" % (path, name, want, ctypes.sizeof(st)))
        P = ctypes.POINTER
        sigs = {
            "gpufeed_dataset_open": (ctypes.c_int, [P(ctypes.c_void_p), P(_DatasetDesc), P(_Error)]),
            "gpufeed_dataset_close": (None, [ctypes.c_void_p]),
            "gpufeed_loader_open": (ctypes.c_int, [P(ctypes.c_void_p), ctypes.c_void_p, P(_LoaderDesc), P(_Error)]),
            "gpufeed_loader_close": (None, [ctypes.c_void_p]),
            "gpufeed_loader_error": (ctypes.c_char_p, [ctypes.c_void_p]),
            "gpufeed_loader_epoch_batches": (ctypes.c_int64, [ctypes.c_void_p, ctypes.c_int64]),
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
    Tensors made from it stay valid after the batch is released; its slot is
    refilled once they are all gone."""

    def __init__(self, loader, db):
        self._l, self._db = loader, db
        self.rows = db.host.num_rows
        self.index = db.host.index
        self.epoch = db.host.epoch
        self.slice_start = db.host.slice_start   # elastic mode: the rank's first row in global batch `index`
        self.on_device = bool(db.on_device)
        self._held = True

    def __dlpack_device__(self):
        return (2, self._l.device) if self.on_device else (1, 0)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        return self._export(-1, 0, stream, max_version, dl_device, copy)

    def _export(self, feature, mask, stream, max_version, dl_device, copy):
        if not self._held:
            raise GpufeedError("batch %d was released; export its tensors before releasing it" % self.index)
        if copy:
            raise BufferError("gpufeed exports without copies (copy=True is not supported)")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError("the batch lives on %s, not %s" % (self.__dlpack_device__(), tuple(dl_device)))
        versioned = max_version is not None and tuple(max_version) >= (1, 0)
        out = ctypes.c_void_p()
        sp = _stream_ptr(stream) if self.on_device else None
        r = self._l._lib.gpufeed_batch_dlpack(self._l._u, ctypes.byref(self._db), feature, mask, sp,
                                              1 if versioned else 0, ctypes.byref(out))
        if r != 0:
            raise GpufeedError(self._l._lib.gpufeed_uploader_error(self._l._u).decode(errors="replace"))
        return _capi.PyCapsule_New(out, _NAME_V if versioned else _NAME,
                                   ctypes.cast(_capsule_destructor, ctypes.c_void_p))

    def feature(self, j):
        return _View(self, int(j), 0)

    def mask(self, j):
        return _View(self, int(j), 1)

    def hash(self):
        """Order-sensitive 64-bit hash of the batch bytes (gpufeed_batch_hash),
        equal to what the C tools print for the same batch."""
        return self._l._lib.gpufeed_batch_hash(self._l._ds, ctypes.byref(self._db.host))

    def release(self):
        """Gives the batch back (its tensors keep their slot until deleted)."""
        if self._held and self._l._u:
            self._held = False
            self._l._lib.gpufeed_uploader_release(self._l._u, ctypes.byref(self._db), None)

    def __del__(self):
        try:
            self.release()
        except Exception:
            pass


class Feature:
    """A dense feature: a leaf column converted to dtype (float32, float64,
    float16, bfloat16, int32, int64, uint8: a name, short name such as
    'f32', numpy dtype or torch dtype; kept as the short name); nulls filled
    with `fill` or an error; `validity` adds a uint8 mask; `hash_buckets`
    hashes strings, or integer IDs, into ids. A list column (one repeated
    level, e.g. embeddings) takes `width` values per row, other lengths per
    `ragged` ('error', 'pad', 'truncate'); `lengths=True` gives each row's
    list length instead. `unit` ('s', 'ms', 'us', 'ns'): the unit a
    TIMESTAMP/TIME/DATE column's values arrive in, whatever each file's
    (None: the first file's). `missing` ('error' or 'null'): a column some
    files lack is an error, or nulls there. A partition key (a key=value
    directory) is a feature by its key name."""

    UNITS = {None: 0, "ms": 1, "us": 2, "ns": 3, "s": 4}

    def __init__(self, column, dtype="f32", fill=0.0, null="fill", validity=False, cast="safe",
                 hash_buckets=0, hash_seed=0, width=0, ragged="error", lengths=False, unit=None, missing="error"):
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


class Loader:
    """The deterministic parallel loader as a Python iterator of Batch.

    paths: files, directories, globs; s3:// objects, prefixes and globs; https:// URLs.
    features: list of Feature or column names (None: every numeric/boolean column as float32). device: 'auto'
    (the default: CUDA device 0 when usable, else CPU batches with one
    CPUFallbackWarning), None or 'cpu', or a CUDA device (0, 'cuda:1', a
    torch.device); after opening, .device is the CUDA ordinal used, or None.
    where: predicates as text ("shard >= 4 and market in ('sf', 'ny')";
    gpufeed_where_parse's syntax): row groups and whole files (partition
    keys) pruned, rows filtered exactly.
    unit_bytes: dense bytes per unit at most (0: 16 MiB; -1: no bound): a
    wider table's row groups are cut into units this size, which the
    workers decode together, each its share of the columns.
    verify_crc: check the page CRCs the files have (a mismatch is a
    GpufeedError naming the page). manifest_dir: s3:// paths keep their
    objects' footers there, so a later open lists them and fetches no
    footer (default: cache_dir). Other arguments as in
    gpufeed_loader_desc / gpufeed_cache_desc (see the README's options
    table); ring_depth 0 is the library's default (2, 4 with more than 4
    workers). epochs: how many (default 1); None: until closed (C's
    GPUFEED_EPOCHS_ENDLESS)."""

    def __init__(self, paths, features=None, batch_rows=1024, workers=1, ring_depth=0, seed=0,
                 shuffle_window=0, unit_shuffle=True, epochs=1, rank=0, world=1, even="drop",
                 drop_last=False, start_epoch=0, start_batch=0, unit_rows=0, unit_bytes=0, layout="row",
                 cache_dir=None, device="auto", slots=3, verify_crc=False, global_batch_rows=0, partitions=0, where=None,
                 manifest_dir=None):
        self._ds = self._l = self._u = self._prev = self._where = None
        if isinstance(paths, (str, bytes, os.PathLike)):
            paths = [paths]
        if even not in ("drop", "pad"):
            raise ValueError("even=%r: 'drop' or 'pad'" % (even,))
        if layout not in ("row", "feature"):
            raise ValueError("layout=%r: 'row' or 'feature'" % (layout,))
        if epochs is not None and (isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1):
            raise ValueError("epochs=%r: a count of 1 or more, or None (until closed)" % (epochs,))
        features = [Feature(f) if isinstance(f, str) else f for f in (features or [])]
        want = _device_request(device)
        self.device = None
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
        self._keep = []
        err = _Error()
        cpaths = (ctypes.c_char_p * len(paths))(*[os.fsencode(p) for p in paths])
        dd = _DatasetDesc()
        dd.paths = cpaths
        dd.num_paths = len(paths)
        if features:
            fa = (_Feature * len(features))()
            for i, f in enumerate(features):
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
            dd.features = fa
            dd.num_features = len(features)
            self._keep.append(fa)
        dd.unit_rows = unit_rows
        dd.unit_bytes = unit_bytes
        dd.layout = {"row": 0, "feature": 1}[layout]
        dd.flags = 1 if verify_crc else 0          # GPUFEED_OPEN_VERIFY_CRC
        mdir = manifest_dir or cache_dir
        if mdir:
            dd.manifest_dir = os.fsencode(mdir)
        self._keep.append(cpaths)
        if where:
            w = ctypes.c_void_p()
            if self._lib.gpufeed_where_parse(ctypes.byref(w), str(where).encode(), ctypes.byref(err)) != 0:
                raise GpufeedError(err.message.decode(errors="replace"))
            self._where = w
            n = ctypes.c_int32()
            dd.where = self._lib.gpufeed_where_predicates(w, ctypes.byref(n))
            dd.num_where = n.value
        ds = ctypes.c_void_p()
        if self._lib.gpufeed_dataset_open(ctypes.byref(ds), ctypes.byref(dd), ctypes.byref(err)) != 0:
            raise GpufeedError(err.message.decode(errors="replace"))
        self._ds = ds
        ld = _LoaderDesc()
        ld.batch_rows, ld.workers, ld.ring_depth, ld.seed = batch_rows, workers, ring_depth, seed
        ld.no_unit_shuffle = 0 if unit_shuffle else 1
        ld.shuffle_window, ld.rank, ld.world = shuffle_window, rank, world
        ld.last_batch = 1 if drop_last else 0
        ld.even = {"drop": 0, "pad": 1}[even]
        ld.start_epoch, ld.start_batch = start_epoch, start_batch
        ld.epochs = EPOCHS_ENDLESS if epochs is None else epochs
        ld.global_batch_rows = global_batch_rows  # > 0: elastic mode (batch_rows may be 0)
        ld.partitions = partitions
        if cache_dir:
            self._cache = _CacheDesc()
            self._cache.dir = os.fsencode(cache_dir)
            ld.cache = ctypes.pointer(self._cache)
        lo = ctypes.c_void_p()
        if self._lib.gpufeed_loader_open(ctypes.byref(lo), ds, ctypes.byref(ld), ctypes.byref(err)) != 0:
            self.close()
            raise GpufeedError(err.message.decode(errors="replace"))
        self._l = lo
        dv = _UploaderDesc()
        dv.device = self.device if self.device is not None else -1    # GPUFEED_DEVICE_HOST: CPU batches
        dv.slots = slots
        dv.host_fallback = 0
        up = ctypes.c_void_p()
        if self._lib.gpufeed_uploader_open(ctypes.byref(up), lo, ctypes.byref(dv), ctypes.byref(err)) != 0:
            self.close()
            raise GpufeedError(_python_message(err.message.decode(errors="replace")))
        self._u = up
        self._prev = None

    def __iter__(self):
        return self

    def __next__(self):
        if not self._u:
            raise StopIteration
        if self._prev is not None:   # the previous batch's tensors keep its slot
            self._prev.release()
            self._prev = None
        db = _DeviceBatch()
        r = self._lib.gpufeed_uploader_next(self._u, ctypes.byref(db))
        if r == 1:
            raise StopIteration
        if r != 0:
            raise GpufeedError(self._lib.gpufeed_uploader_error(self._u).decode(errors="replace"))
        b = Batch(self, db)
        self._prev = b
        return b

    def epoch_batches(self, epoch=0):
        return self._lib.gpufeed_loader_epoch_batches(self._l, epoch)

    def close(self):
        """Closes the loader; tensors already made stay valid until deleted."""
        if self._prev is not None:
            self._prev.release()
            self._prev = None
        if self._u:
            self._lib.gpufeed_uploader_close(self._u)
            self._u = None
        if self._l:
            self._lib.gpufeed_loader_close(self._l)
            self._l = None
        if self._ds:
            # the dataset may be closed while tensors live: they point into
            # the uploader's slots, which outlive it until their deleters run
            self._lib.gpufeed_dataset_close(self._ds)
            self._ds = None
        if self._where:
            self._lib.gpufeed_where_free(self._where)
            self._where = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def cuda_available(device=0):
    """(True, '') when CUDA device `device` is usable for batches, else
    (False, why): the library loads the CUDA driver (libcuda.so.1) and asks
    it."""
    return _cuda_device(load(), device)
