"""Reference for gpufeed-dense: the dense matrix pyarrow + numpy say a set of
Parquet files should give, computed independently of gpufeed.

    from dense_reference import reference
    mat, err = reference(paths, columns=None, dtype='f32', fill=0.0,
                         where=None, hash_buckets=None, unsafe=False)

`mat` is a 2-D numpy array (rows x features; bf16 as uint16 bit patterns)
whose `tobytes()` is what `gpufeed-dense -o OUT` must write; `err` is None,
or a message when gpufeed must refuse (a SAFE cast that cannot be done, a
--fill that does not fit an integer dtype, a string column without --hash,
a missing column, a predicate that does not fit its column, ...). When
`err` is set `mat` is None.

Rules (the same as gpufeed's, see gpufeed.h >>dataset (API)):
  * default columns: every non-repeated leaf of the FIRST file that is
    BOOLEAN, FLOAT, DOUBLE, FLBA FLOAT16, or INT32/INT64 with no logical type
    or an INTEGER one, in schema order;
  * paths: files in the order given; a directory gives its *.parquet sorted
    by name; a glob its matches sorted by name;
  * nulls (also below a null struct) -> fill; the fill must fit an integer
    dtype exactly;
  * int -> float: SAFE refuses an integer the float dtype cannot hold
    exactly; UNSAFE rounds to nearest even from the exact integer; floats ->
    f32/f64/f16 like numpy's astype (f16 from f64 directly); bf16: the exact
    source value rounded to nearest even at 8 significant bits (subnormals
    below 2^-126, inf on overflow, NaN stays NaN); decimals -> floats: the
    exact value unscaled/10^scale rounded once to the dtype (scale 0: an
    integer, refused by SAFE as above when the dtype cannot hold it);
  * to an integer dtype: SAFE (default) refuses a value out of range, a
    fractional one, NaN/inf, a decimal with a fractional part; UNSAFE
    truncates toward zero and saturates (NaN -> 0);
  * bool -> 0/1; DATE/TIME/TIMESTAMP/duration -> their raw integers in the
    file's unit; INT96 -> int64 ns;
  * STRING/BINARY/FLBA (not decimal/float16) need hash_buckets:
    xxh64(bytes, seed 0) % N (the xxhash package), then an integer;
  * where: conditions ANDed (same grammar as `gpufeed-dense --where`);
    null never matches a comparison, NaN never matches; `is null`,
    `is not null`; a string constant needs a string column and vice versa.

Command line (prints the reference as gpufeed-dense would write it):
    python tests/dense_reference.py [--columns a,b] [--dtype D] [--fill V]
        [--where EXPR] [--hash N] [--unsafe-cast] -o OUT FILE|DIR|GLOB...
"""
from __future__ import annotations

import glob as _glob
import math
import os
import re
import sys
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

DTYPES = ("f32", "f64", "f16", "bf16", "i32", "i64", "u8")
FLOAT_DTYPES = ("f32", "f64", "f16", "bf16")
INT_RANGE = {"i32": (-(1 << 31), (1 << 31) - 1), "i64": (-(1 << 63), (1 << 63) - 1), "u8": (0, 255)}
NP_DTYPE = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.uint16,
            "i32": np.int32, "i64": np.int64, "u8": np.uint8}
# significand bits (with the hidden one), smallest normal exponent, largest exponent
FLOAT_FMT = {"f64": (53, -1022, 1023), "f32": (24, -126, 127), "f16": (11, -14, 15), "bf16": (8, -126, 127)}


class RefError(Exception):
    pass


# ---------------------------------------------------------------- paths

def expand_paths(paths):
    """Files in gpufeed's order: as listed; dirs -> sorted *.parquet; globs sorted."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out = []
    for p in paths:
        p = os.fspath(p)
        if os.path.isdir(p):
            names = sorted(n for n in os.listdir(p) if n.endswith(".parquet") and os.path.isfile(os.path.join(p, n)))
            if not names:
                raise RefError(f"directory '{p}' holds no *.parquet files")
            out += [os.path.join(p, n) for n in names]
        elif any(ch in p for ch in "*?["):
            m = sorted(_glob.glob(p))
            if not m:
                raise RefError(f"glob '{p}' matches no files")
            out += m
        else:
            if not os.path.exists(p):
                raise RefError(f"cannot open '{p}'")
            out.append(p)
    return out


# ---------------------------------------------------------------- schema

def _leaf(pf, name):
    s = pf.schema
    for i in range(len(s)):
        c = s.column(i)
        if c.path == name:
            return c
    return None


def _logical(c):
    lt = c.logical_type
    return "NONE" if lt is None else lt.type


def is_default_column(c):
    if c.max_repetition_level != 0:
        return False
    phys, lt = c.physical_type, _logical(c)
    if phys in ("BOOLEAN", "FLOAT", "DOUBLE"):
        return True
    if phys in ("INT32", "INT64"):
        return lt in ("NONE", "INT")
    if phys == "FIXED_LEN_BYTE_ARRAY":
        return lt == "FLOAT16"
    return False


def default_columns(path):
    pf = pq.ParquetFile(path)
    s = pf.schema
    return [s.column(i).path for i in range(len(s)) if is_default_column(s.column(i))]


# ---------------------------------------------------------------- reading one leaf

class Src:
    """One leaf column of one file: kind in int/float/bool/decimal/bytes."""

    def __init__(self, kind, values, valid, scale=0):
        self.kind, self.values, self.valid, self.scale = kind, values, valid, scale


_UNIT = {"SECONDS": 1, "MILLIS": 1000, "MICROS": 10 ** 6, "NANOS": 10 ** 9,
         "s": 1, "ms": 1000, "us": 10 ** 6, "ns": 10 ** 9}


def _parquet_unit(c):
    m = re.search(r"timeUnit=(\w+)", str(c.logical_type))
    if m:
        return {"milliseconds": "ms", "microseconds": "us", "nanoseconds": "ns"}[m.group(1)]
    ct = c.converted_type
    return {"TIMESTAMP_MILLIS": "ms", "TIMESTAMP_MICROS": "us", "TIME_MILLIS": "ms", "TIME_MICROS": "us"}.get(ct)


def _rescale(ints, have, want):
    fh, fw = _UNIT[have], _UNIT[want]
    if fh == fw:
        return ints
    if fw > fh:
        return ints * np.int64(fw // fh)
    return ints // np.int64(fh // fw)


def _read_leaf_array(path, name, cache):
    """The arrow array of leaf `name` (dotted) with parent-struct nulls merged."""
    parts = name.split(".")
    key = (path, parts[0])
    if key not in cache:
        t = pq.read_table(path, columns=[parts[0]], coerce_int96_timestamp_unit="ns")
        cache[key] = t.column(0).combine_chunks() if t.num_rows else pa.array([], t.column(0).type)
    arr = cache[key]
    for p in parts[1:]:
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        st = arr.type
        idx = st.get_field_index(p)
        arr = arr.flatten()[idx]  # flatten() merges the struct's validity
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if isinstance(arr, pa.ExtensionArray):
        arr = arr.storage
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    return arr


def read_leaf(path, name, cache):
    if ("src", name) in cache:
        return cache[("src", name)]
    src = _read_leaf(path, name, cache)
    cache[("src", name)] = src
    return src


def _read_leaf(path, name, cache):
    if ("pf", path) not in cache:
        cache[("pf", path)] = pq.ParquetFile(path)
    pf = cache[("pf", path)]
    c = _leaf(pf, name)
    if c is None:
        raise RefError(f"column '{name}' not found in '{path}'")
    if c.max_repetition_level != 0:
        raise RefError(f"column '{name}' is repeated")
    arr = _read_leaf_array(path, name, cache)
    n = len(arr)
    valid = np.ones(n, bool) if arr.null_count == 0 else np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), bool)
    phys, lt = c.physical_type, _logical(c)
    t = arr.type
    if phys == "BOOLEAN":
        v = np.asarray(arr.fill_null(False).to_numpy(zero_copy_only=False), bool)
        return Src("bool", v.astype(np.int64), valid)
    if lt == "DECIMAL":
        scale = t.scale
        vals = [0 if d is None else int(d.scaleb(scale)) for d in arr.to_pylist()]
        return Src("decimal", vals, valid, scale)
    if phys == "FLOAT" or phys == "DOUBLE" or lt == "FLOAT16":
        v = arr.to_numpy(zero_copy_only=False)
        if arr.null_count:
            v = np.where(valid, v, 0).astype(v.dtype)
        return Src("float", np.asarray(v), valid)
    if phys in ("BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"):
        return Src("bytes", arr.to_pylist(), valid)
    # integers and temporal types: raw integers in the file's unit
    if phys == "INT96":
        ints = arr.cast(pa.timestamp(t.unit)).view(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
        ints = _rescale(np.asarray(ints, np.int64), t.unit, "ns")
        return Src("int", ints, valid)
    if pa.types.is_timestamp(t) or pa.types.is_time(t) or pa.types.is_duration(t):
        raw = arr.view(pa.int64() if t.bit_width == 64 else pa.int32()).fill_null(0)
        ints = np.asarray(raw.to_numpy(zero_copy_only=False), np.int64)
        pu = _parquet_unit(c) if (lt in ("TIMESTAMP", "TIME") or c.converted_type != "NONE") else None
        if pu is not None and t.unit != pu:
            ints = _rescale(ints, t.unit, pu)
        return Src("int", ints, valid)
    if pa.types.is_date(t):
        if pa.types.is_date64(t):
            arr = arr.cast(pa.date32())
        ints = np.asarray(arr.view(pa.int32()).fill_null(0).to_numpy(zero_copy_only=False), np.int64)
        return Src("int", ints, valid)
    if pa.types.is_integer(t):
        v = np.asarray(arr.fill_null(0).to_numpy(zero_copy_only=False))
        return Src("int", v, valid)  # int64 or uint64 keep exactness
    raise RefError(f"column '{name}': unsupported type {t}")


# ---------------------------------------------------------------- exact rounding

def _bitlen_u64(mag):
    """bit length of each uint64 (0 for 0)."""
    mag = mag.astype(np.uint64)
    bl = np.zeros(mag.shape, np.int64)
    for s in (32, 16, 8, 4, 2, 1):
        m = (mag >> np.uint64(s)) != 0
        mag = np.where(m, mag >> np.uint64(s), mag)
        bl += np.where(m, s, 0)
    return bl + (mag != 0)


def round_ints(vals, dtype):
    """Integers (int64 or uint64 array) -> float dtype, RNE from the exact value.
    Returns the numpy array of that dtype (bf16 as uint16 bits)."""
    vals = np.asarray(vals)
    p = FLOAT_FMT[dtype][0]
    if vals.dtype == np.uint64:
        neg = np.zeros(vals.shape, bool)
        mag = vals.copy()
    else:
        v = vals.astype(np.int64)
        neg = v < 0
        mag = np.where(neg, (~v.view(np.uint64)) + np.uint64(1), v.view(np.uint64))
    bl = _bitlen_u64(mag)
    shift = np.maximum(bl - p, 0).astype(np.uint64)
    q = mag >> shift
    one = np.uint64(1)
    rem = mag & ((one << shift) - one)
    half = np.where(shift > 0, one << (shift - np.minimum(shift, one)), np.uint64(0))
    up = (shift > 0) & ((rem > half) | ((rem == half) & ((q & one) == one)))
    q = q + up.astype(np.uint64)
    r = np.ldexp(q.astype(np.float64), shift.astype(np.int64))  # exact: q <= 2^p, p <= 53
    r = np.where(neg, -r, r)
    return to_float_dtype_exact(r, dtype)


def to_float_dtype_exact(r, dtype):
    """r (float64) already representable in dtype (or beyond its range -> inf)."""
    if dtype == "bf16":
        return f64_to_bf16(r)
    with np.errstate(over="ignore"):
        return r.astype(NP_DTYPE[dtype])


def f64_to_bf16(x):
    """float64 -> bfloat16 bits, RNE from the exact float64 value."""
    x = np.asarray(x, np.float64)
    out = np.zeros(x.shape, np.float64)
    fin = np.isfinite(x) & (x != 0)
    ax = np.abs(np.where(fin, x, 1.0))
    _, e = np.frexp(ax)             # ax = m * 2^e, m in [0.5, 1): floor(log2 ax) = e - 1
    e = np.maximum(e - 1, -126)     # subnormal quantum fixed below 2^-126
    quantum_exp = e - 7
    with np.errstate(over="ignore"):   # near DBL_MAX the rounding overflows: inf, as it should
        r = np.ldexp(np.rint(np.ldexp(ax, -quantum_exp)), quantum_exp)  # rint: half to even
    r = np.where(r >= 2.0 ** 128, np.inf, r)
    out = np.where(fin, np.copysign(r, x), x)   # 0, +-0, inf, nan pass through
    f32 = out.astype(np.float32)                # exact: r has <= 8 significant bits
    bits = f32.view(np.uint32)
    nan = np.isnan(out)
    res = (bits >> np.uint32(16)).astype(np.uint16)
    # NaN stays NaN: keep a quiet NaN with the sign
    res = np.where(nan, ((bits >> np.uint32(16)) | np.uint32(0x0040)).astype(np.uint16), res)
    return res


def round_fraction(fr, dtype):
    """Exact rational -> nearest-even value of dtype, as a Python float."""
    if dtype == "f64":
        return float(fr)
    p, emin, emax = FLOAT_FMT[dtype]
    if fr == 0:
        return 0.0
    neg = fr < 0
    n, d = abs(fr.numerator), fr.denominator
    e = n.bit_length() - d.bit_length()
    if Fraction(n, d) < Fraction(2) ** e:
        e -= 1
    e = max(e, emin)
    k = e - (p - 1)
    if k >= 0:
        num, den = n, d << k
    else:
        num, den = n << -k, d
    q, r = divmod(num, den)
    if 2 * r > den or (2 * r == den and q & 1):
        q += 1
    v = math.ldexp(q, k) if q else 0.0
    if v >= 2.0 ** (emax + 1):
        v = math.inf
    return -v if neg else v


# ---------------------------------------------------------------- conversion

def fill_value(fill, dtype):
    if dtype in FLOAT_DTYPES:
        if dtype == "bf16":
            return f64_to_bf16(np.array([fill], np.float64))[0]
        return np.array([fill], np.float64).astype(NP_DTYPE[dtype])[0]
    lo, hi = INT_RANGE[dtype]
    if not (math.isfinite(fill) and fill == int(fill) and lo <= int(fill) <= hi):
        raise RefError(f"--fill {fill!r} does not fit {dtype}")
    return NP_DTYPE[dtype](int(fill))


def _xxh(b, n):
    import xxhash
    return xxhash.xxh64_intdigest(b, seed=0) % n


FLOAT_BITS = {"f32": 24, "f64": 53, "f16": 11, "bf16": 8}


def check_ints_exact(vals, valid, dtype, name):
    """SAFE casts of integers to floats: every present value held exactly
    (significant bits within the dtype's; f16 below 65536)."""
    bits = FLOAT_BITS[dtype]
    v = np.asarray(vals)
    big = np.abs(v.astype(np.float64)) > float(1 << bits)   # all smaller ones are exact
    for i in np.nonzero(big & np.asarray(valid, bool))[0]:
        m = abs(int(v[i]))
        sig = m.bit_length() - ((m & -m).bit_length() - 1)
        if sig > bits or (dtype == "f16" and m >= 65536):
            raise RefError(f"feature '{name}': value {int(v[i])} at row {i} does not convert to {dtype} exactly")


def convert(src, dtype, unsafe, name, hash_buckets):
    """-> numpy array of dtype (values under nulls arbitrary)."""
    n = len(src.valid)
    kind = src.kind
    vals = src.values
    if kind == "bytes":
        if not hash_buckets:
            raise RefError(f"feature '{name}': a string/binary column needs --hash")
        hv = [0 if (b is None or not ok) else _xxh(b if isinstance(b, bytes) else b.encode("utf-8"), hash_buckets)
              for b, ok in zip(vals, src.valid)]
        vals = np.array(hv, np.uint64)
        kind = "int"
    if kind == "bool":
        vals = np.asarray(vals, np.int64)
        kind = "int"
    if dtype in FLOAT_DTYPES:
        if kind == "int":
            if not unsafe:
                check_ints_exact(vals, src.valid, dtype, name)
            return round_ints(vals, dtype)
        if kind == "float":
            v64 = np.asarray(vals).astype(np.float64)
            if dtype == "bf16":
                return f64_to_bf16(v64)
            if dtype == "f16" or dtype == "f32":
                with np.errstate(over="ignore"):
                    return np.asarray(vals).astype(NP_DTYPE[dtype])  # numpy RNE, f64->f16 directly
            return v64
        if kind == "decimal":
            if src.scale == 0 and not unsafe:  # a decimal without a fraction is an integer
                check_ints_exact(np.array([v if ok else 0 for v, ok in zip(vals, src.valid)], dtype=object), src.valid, dtype, name)
            out = [round_fraction(Fraction(u, 10 ** src.scale), dtype) if ok else 0.0
                   for u, ok in zip(vals, src.valid)]
            return to_float_dtype_exact(np.array(out, np.float64), dtype)
    lo, hi = INT_RANGE[dtype]
    if kind == "int":
        v = np.asarray(vals)
        if v.dtype == np.uint64:
            over = v > np.uint64(hi)
            under = np.zeros(n, bool)
            res = np.where(over, np.uint64(hi), v).astype(np.int64)   # <= hi: fits int64
        else:
            v = v.astype(np.int64)
            over, under = v > hi, v < lo
            res = np.clip(v, lo, hi)
        bad = (over | under) & src.valid
        if bad.any() and not unsafe:
            i = int(np.argmax(bad))
            raise RefError(f"feature '{name}': value {vals[i]} at row {i} out of range for {dtype}")
        return res.astype(NP_DTYPE[dtype])
    if kind == "float":
        v = np.asarray(vals).astype(np.float64)
        with np.errstate(invalid="ignore"):
            t = np.trunc(v)
            nan = np.isnan(v)
            over = ~nan & (t >= float(hi + 1))   # 2^31, 2^63, 256: exact doubles
            under = ~nan & (t < float(lo))
            frac = ~nan & np.isfinite(v) & (t != v)
        if not unsafe:
            bad = (nan | over | under | frac) & src.valid
            if bad.any():
                i = int(np.argmax(bad))
                raise RefError(f"feature '{name}': value {v[i]!r} at row {i} cannot be cast to {dtype} safely")
        res = np.where(nan | over | under, 0.0, t).astype(np.int64)
        res = np.where(over, np.int64(hi), np.where(under, np.int64(lo), res))
        return res.astype(NP_DTYPE[dtype])
    if kind == "decimal":
        sc = 10 ** src.scale
        out = np.zeros(n, NP_DTYPE[dtype])
        for i, (u, ok) in enumerate(zip(vals, src.valid)):
            if not ok:
                continue
            q = abs(u) // sc
            q = -q if u < 0 else q
            if not unsafe and (u % sc != 0 or q < lo or q > hi):
                raise RefError(f"feature '{name}': decimal {Fraction(u, sc)} at row {i} cannot be cast to {dtype} safely")
            out[i] = min(max(q, lo), hi)
        return out
    raise RefError(f"feature '{name}': cannot convert {kind}")


# ---------------------------------------------------------------- predicates

_TOK = re.compile(r"""\s*(?:(?P<str>'[^']*'|"[^"]*")|(?P<sym><=|>=|==|!=|[<>=(),])|(?P<word>[^\s<>=!(),'"]+))""")


def parse_where(expr):
    """Same grammar as gpufeed-dense --where -> list of (col, op, args)."""
    toks = []
    pos = 0
    expr = expr.strip()
    while pos < len(expr):
        m = _TOK.match(expr, pos)
        if not m or m.end() == pos:
            raise RefError(f"--where: cannot parse at '{expr[pos:]}'")
        pos = m.end()
        if m.group("str") is not None:
            toks.append(("str", m.group("str")[1:-1]))
        elif m.group("sym") is not None:
            toks.append(("sym", m.group("sym")))
        elif m.group("word") is not None:
            toks.append(("word", m.group("word")))
    toks.append(("end", ""))
    i = 0

    def val():
        nonlocal i
        k, t = toks[i]
        i += 1
        if k == "str":
            return t.encode("utf-8")
        if k == "word":
            try:
                return int(t)
            except ValueError:
                return float(t)
        raise RefError(f"--where: expected a value at '{t}'")

    out = []
    while True:
        k, col = toks[i]
        i += 1
        k2, t2 = toks[i]
        i += 1
        if k2 == "sym" and t2 in ("<", "<=", "==", "=", ">=", ">"):
            out.append((col, "==" if t2 == "=" else t2, (val(),)))
        elif k2 == "word" and t2.lower() == "between":
            a = val()
            assert toks[i][1].lower() == "and"
            i += 1
            out.append((col, "between", (a, val())))
        elif k2 == "word" and t2.lower() == "in":
            assert toks[i][1] == "("
            i += 1
            s = [val()]
            while toks[i][1] == ",":
                i += 1
                s.append(val())
            assert toks[i][1] == ")"
            i += 1
            out.append((col, "in", tuple(s)))
        elif k2 == "word" and t2.lower() == "is":
            if toks[i][1].lower() == "not":
                i += 1
                op = "is not null"
            else:
                op = "is null"
            assert toks[i][1].lower() == "null"
            i += 1
            out.append((col, op, ()))
        else:
            raise RefError(f"--where: expected an operator after '{col}'")
        k, t = toks[i]
        if k == "end":
            return out
        if t.lower() in ("and", "&&"):
            i += 1
            continue
        raise RefError(f"--where: unexpected '{t}'")


def _cmp_int(v, op, c):
    """exact comparison of int array v with an int or float constant."""
    if isinstance(c, float):
        if math.isnan(c):
            return np.zeros(len(v), bool)
        if math.isinf(c):
            big = c > 0
            if op in ("<", "<="):
                return np.full(len(v), big)
            if op in (">", ">="):
                return np.full(len(v), not big)
            return np.zeros(len(v), bool)
        fl, ce = math.floor(c), math.ceil(c)
        if op == "<":
            return _cmp_int(v, "<", ce)
        if op == "<=":
            return _cmp_int(v, "<=", fl)
        if op == ">":
            return _cmp_int(v, ">", fl)
        if op == ">=":
            return _cmp_int(v, ">=", ce)
        if op == "==":
            return _cmp_int(v, "==", fl) if fl == c else np.zeros(len(v), bool)
    lo, hi = (0, (1 << 64) - 1) if v.dtype == np.uint64 else (-(1 << 63), (1 << 63) - 1)
    if c < lo:
        return np.full(len(v), op in (">", ">="))
    if c > hi:
        return np.full(len(v), op in ("<", "<="))
    cc = np.array(c, v.dtype)
    return {"<": v < cc, "<=": v <= cc, "==": v == cc, ">=": v >= cc, ">": v > cc}[op]


def _cmp(src, op, c, col):
    if src.kind == "bytes":
        if not isinstance(c, bytes):
            raise RefError(f"--where: column '{col}' holds strings, the constant is a number")
        vals = [b if isinstance(b, bytes) or b is None else b.encode("utf-8") for b in src.values]
        f = {"<": lambda x: x < c, "<=": lambda x: x <= c, "==": lambda x: x == c,
             ">=": lambda x: x >= c, ">": lambda x: x > c}[op]
        return np.array([x is not None and f(x) for x in vals], bool)
    if isinstance(c, bytes):
        raise RefError(f"--where: column '{col}' is numeric, the constant is a string")
    if src.kind in ("int", "bool"):
        return _cmp_int(np.asarray(src.values), op, c)
    if src.kind == "float":
        v = np.asarray(src.values).astype(np.float64)
        cc = float(c)
        with np.errstate(invalid="ignore"):
            return {"<": v < cc, "<=": v <= cc, "==": v == cc, ">=": v >= cc, ">": v > cc}[op]
    if src.kind == "decimal":
        fr = [Fraction(u, 10 ** src.scale) for u in src.values]
        cf = Fraction(c) if not isinstance(c, float) or math.isfinite(c) else None
        if cf is None:
            return _cmp_int(np.zeros(len(fr), np.int64), op, c)
        f = {"<": lambda x: x < cf, "<=": lambda x: x <= cf, "==": lambda x: x == cf,
             ">=": lambda x: x >= cf, ">": lambda x: x > cf}[op]
        return np.array([f(x) for x in fr], bool)
    raise RefError(f"--where: cannot compare column '{col}'")


def eval_pred(src, op, args, col):
    n = len(src.valid)
    if op == "is null":
        return ~src.valid
    if op == "is not null":
        return src.valid.copy()
    if op == "between":
        m = _cmp(src, ">=", args[0], col) & _cmp(src, "<=", args[1], col)
    elif op == "in":
        m = np.zeros(n, bool)
        for a in args:
            m |= _cmp(src, "==", a, col)
    else:
        m = _cmp(src, op, args[0], col)
    return m & src.valid


# ---------------------------------------------------------------- the reference

def reference(paths, columns=None, dtype="f32", fill=0.0, where=None, hash_buckets=None, unsafe=False,
              null_error=False):
    """-> (matrix, None) or (None, error message)."""
    try:
        return _reference(paths, columns, dtype, fill, where, hash_buckets, unsafe, null_error), None
    except RefError as e:
        return None, str(e)


_CACHE = {}


def _nrows(path):
    c = _file_cache(path)
    if ("pf", path) not in c:
        c[("pf", path)] = pq.ParquetFile(path)
    return c[("pf", path)].metadata.num_rows


def _file_cache(path):
    """Per-file cache of decoded leaves, valid while the file is unchanged."""
    st = os.stat(path)
    key = (os.path.realpath(path), st.st_mtime_ns, st.st_size)
    if key not in _CACHE:
        if len(_CACHE) > 64:
            _CACHE.clear()
        _CACHE[key] = {}
    return _CACHE[key]


def _reference(paths, columns, dtype, fill, where, hash_buckets, unsafe, null_error):
    if dtype not in DTYPES:
        raise RefError(f"unknown dtype '{dtype}'")
    files = expand_paths(paths)
    if not files:
        raise RefError("no files")
    if columns is None:
        columns = default_columns(files[0])
    elif isinstance(columns, str):
        columns = columns.split(",")
    fv = fill_value(float(fill), dtype)
    preds = parse_where(where) if isinstance(where, str) else list(where or [])
    total = sum(_nrows(f) for f in files)
    if total == 0:
        raise RefError("the dataset holds no rows")
    parts = []
    for f in files:
        cache = _file_cache(f)
        nrows = _nrows(f)
        keep = np.ones(nrows, bool)
        for col, op, args in preds:
            keep &= eval_pred(read_leaf(f, col, cache), op, args, col)
        cols = []
        for name in columns:
            src = read_leaf(f, name, cache)
            if null_error and not src.valid.all():
                bad = ~src.valid & keep
                if bad.any():
                    raise RefError(f"feature '{name}': null at row {int(np.argmax(bad))}")
            sub = Src(src.kind, src.values, src.valid & keep, src.scale)
            a = convert(sub, dtype, unsafe, name, hash_buckets)
            a = np.where(src.valid, a, fv).astype(NP_DTYPE[dtype])
            cols.append(a[keep])
        if cols:
            parts.append(np.stack(cols, axis=1))
        else:
            parts.append(np.zeros((int(keep.sum()), 0), NP_DTYPE[dtype]))
    return np.concatenate(parts, axis=0)


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description="reference dense matrix for gpufeed-dense")
    ap.add_argument("--columns")
    ap.add_argument("--dtype", default="f32")
    ap.add_argument("--fill", type=float, default=0.0)
    ap.add_argument("--where")
    ap.add_argument("--hash", type=int)
    ap.add_argument("--unsafe-cast", action="store_true")
    ap.add_argument("--null-error", action="store_true")
    ap.add_argument("-o", required=True)
    ap.add_argument("paths", nargs="+")
    a = ap.parse_args(argv)
    m, err = reference(a.paths, a.columns, a.dtype, a.fill, a.where, a.hash, a.unsafe_cast, a.null_error)
    if err:
        print(f"dense_reference: {err}", file=sys.stderr)
        return 1
    with open(a.o, "wb") as fh:
        fh.write(np.ascontiguousarray(m).tobytes())
    print(f"rows {m.shape[0]}, features {m.shape[1]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
