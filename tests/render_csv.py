#!/usr/bin/env python3
"""Render a Parquet file as CSV: the reference output ("oracle") for gpufeed-cat.

Usage:
    .venv/bin/python tests/render_csv.py FILE [--columns a,b] [--limit N] [--raw] [--json]

or, from Python (with tools/ on sys.path):
    from render_csv import render
    text = render("f.parquet", columns=["a", "s.b"], limit=10)

The file is read with pyarrow and printed to stdout as CSV.  gpufeed-cat must
produce byte-identical output (given the same --raw / --json), so the format
is a strict contract:

* Line 1: the column names, each double-quoted ("a","b"), comma separated.
  Struct fields are flattened to their dotted leaf paths ("s.a","s.b") in
  schema (depth-first leaf) order.  A list/map column appears once, under its
  field name.
* One line per row, every line (the header too) ends in "\\n".  Fields are
  separated by ",".  A null is an empty, unquoted field.
* BOOLEAN: true / false.
* Integers of any width and signedness: plain decimal (uint64 as unsigned).
* DATE: ISO-8601 YYYY-MM-DD, proleptic Gregorian calendar.
* TIMESTAMP: YYYY-MM-DDThh:mm:ss.f with 3, 6 or 9 fraction digits for the
  unit the *Parquet column* stores (MILLIS/MICROS/NANOS), always all of
  them, then "Z" when the Parquet column is adjusted to UTC (isAdjustedToUTC;
  the legacy TIMESTAMP_* annotations are); no "Z" for local (wall-clock)
  timestamps.  The Arrow time zone is ignored: the value is the stored one.
  INT96: a NANOS timestamp without "Z".
* TIME: hh:mm:ss.f (3, 6 or 9 digits by unit), "Z" when adjusted to UTC; a
  value outside [0, 24 h) is an error (RenderError).
* Years 0000-9999 as four digits, others with a sign and at least four
  digits ("-0001", "+10000").
* raw=True (--raw): DATE as integer days since 1970-01-01; TIME / TIMESTAMP
  as the integer in the Parquet column's unit; INT96 as int64 nanoseconds
  since the Unix epoch.
* FLOAT: C's "%.9g"; DOUBLE: "%.17g"; FLOAT16: widened to float, "%.9g".
  Any NaN prints "nan" (never "-nan"), infinities "inf" / "-inf", -0.0 "-0".
* DECIMAL(p, s): exact decimal text from the unscaled integer: "-" if
  negative, the integer part (at least "0"), then for s > 0 a "." and exactly
  s digits.  Unquoted.
* BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY annotated STRING/UTF8, ENUM or JSON:
  double-quoted raw UTF-8 text, with '"' doubled (RFC 4180); commas and
  newlines are kept as they are inside the quotes.
* Any other BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY (no annotation, BSON, UUID,
  ...): double-quoted lowercase hex of the bytes; empty value -> "".
* --columns a,b prints only those columns, in the order given; a struct name
  stands for all its leaves ("s" -> "s.a","s.b").  --limit N: first N rows.
* Nested leaves (a leaf under a list, map or repeated field): one field per
  Parquet leaf column, named by its dotted Parquet path ("l.list.element",
  "m.key_value.key", "m.key_value.value", "s.list.element.x"), holding
  compact JSON (no spaces), double-quoted, '"' doubled for CSV.  Each
  repeated level of the path (each Arrow list / map level) adds an array
  level, "[]" when empty; a null at some depth (a null list, a null struct,
  a null element) is null there; a row that is null before any array opens
  (the list itself, or a struct above it) is the empty field.  Values:
  integers and decimals as above (bare JSON numbers); dates, times and
  timestamps as JSON strings of the text above (bare numbers with raw);
  FLOAT / FLOAT16 "%.9g", DOUBLE "%.17g", with NaN, inf, -inf as
  the JSON strings "nan", "inf", "-inf"; true / false; text as JSON strings
  escaping only '"', '\\\\', \\b \\f \\n \\r \\t and other bytes < 0x20 (as
  \\u00xx, lowercase hex), everything else (UTF-8 included) as it is; other
  binary as a JSON string of lowercase hex.
* json=True (--json): JSON Lines instead of CSV, one object per row,
  {"name":value,...}, the CSV header's names as keys in its order (no header
  line); values as inside the nested JSON (null for a null, a nested leaf's
  array unquoted), except that text (keys too) is always valid UTF-8:
  ill-formed bytes become U+FFFD as bytes.decode("utf-8", "replace") makes
  them.

String versus binary is decided by the Parquet column's logical / converted
type, not by the Arrow type pyarrow chooses.
"""

import argparse
import datetime
import io
import json
import math
import os
import sys

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

__all__ = ["render", "render_to", "column_names", "RenderError"]

BATCH_ROWS = 65536

_UNIT_PER_SECOND = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}
_JSON_UNIT = {"milliseconds": "ms", "microseconds": "us", "nanoseconds": "ns"}
_CONVERTED_UNIT = {
    "TIMESTAMP_MILLIS": "ms",
    "TIMESTAMP_MICROS": "us",
    "TIME_MILLIS": "ms",
    "TIME_MICROS": "us",
}
_TEXT_LOGICAL = {"STRING", "ENUM", "JSON"}
_TEXT_CONVERTED = {"UTF8", "ENUM", "JSON"}


class RenderError(Exception):
    pass


# --------------------------------------------------------------------------
# Parquet-side facts about a leaf column
# --------------------------------------------------------------------------


def _parquet_unit(col):
    """Stored time unit ('ms'/'us'/'ns') of a Parquet leaf, or None."""
    if col is None:
        return None
    if col.physical_type == "INT96":
        return "ns"
    lt = col.logical_type
    if lt.type in ("TIMESTAMP", "TIME"):
        unit = json.loads(lt.to_json()).get("timeUnit")
        if unit in _JSON_UNIT:
            return _JSON_UNIT[unit]
    return _CONVERTED_UNIT.get(col.converted_type)


def _parquet_utc(col):
    """isAdjustedToUTC of a TIME / TIMESTAMP leaf (False for INT96 and
    anything else)."""
    if col is None or col.physical_type == "INT96":
        return False
    if col.logical_type.type in ("TIMESTAMP", "TIME"):
        return bool(json.loads(col.logical_type.to_json()).get("isAdjustedToUTC"))
    return col.converted_type in _CONVERTED_UNIT  # legacy annotations are UTC


def _parquet_is_text(col):
    if col is None:
        return None
    if col.logical_type.type in _TEXT_LOGICAL:
        return True
    if col.converted_type in _TEXT_CONVERTED:
        return True
    return False


# --------------------------------------------------------------------------
# Cell formatting
# --------------------------------------------------------------------------


def _quote(s):
    return '"' + s.replace('"', '""') + '"'


def _fmt_float(x, fmt, json_mode):
    if x != x:
        return '"nan"' if json_mode else "nan"
    if json_mode and math.isinf(x):
        return '"inf"' if x > 0 else '"-inf"'
    return fmt % x


_JSON_ESC = {0x22: b'\\"', 0x5C: b"\\\\", 0x08: b"\\b", 0x0C: b"\\f", 0x0A: b"\\n",
             0x0D: b"\\r", 0x09: b"\\t"}


def _json_text(raw, strict=False):
    """JSON string of raw bytes: the escapes of the contract, other bytes
    kept; strict: ill-formed UTF-8 replaced by U+FFFD (JSON Lines)."""
    if strict:
        out = ['"']
        for ch in raw.decode("utf-8", "replace"):
            c = ord(ch)
            e = _JSON_ESC.get(c)
            out.append(e.decode() if e is not None else "\\u%04x" % c if c < 0x20 else ch)
        out.append('"')
        return "".join(out)
    out = bytearray(b'"')
    for c in raw:
        e = _JSON_ESC.get(c)
        if e is not None:
            out += e
        elif c < 0x20:
            out += b"\\u%04x" % c
        else:
            out.append(c)
    out += b'"'
    return out.decode("utf-8", "surrogateescape")


def _decimal_text(unscaled, scale):
    sign = "-" if unscaled < 0 else ""
    a = -unscaled if unscaled < 0 else unscaled
    if scale <= 0:
        return sign + str(a * 10 ** (-scale))
    q, r = divmod(a, 10**scale)
    return "%s%d.%0*d" % (sign, q, scale, r)


def _decimal_unscaled(arr):
    """Unscaled integers (or None) of a decimal array, read from its buffer."""
    width = arr.type.byte_width
    buf = arr.buffers()[1]
    data = memoryview(buf)[arr.offset * width : (arr.offset + len(arr)) * width]
    valid = arr.is_valid().to_pylist() if arr.null_count else None
    out = []
    frm = int.from_bytes
    for i in range(len(arr)):
        if valid is not None and not valid[i]:
            out.append(None)
        else:
            out.append(frm(data[i * width : (i + 1) * width], "little", signed=True))
    return out


def _int_strings(arr):
    """Decimal text of an integer array via Arrow's cast (fast); None for null."""
    return pc.cast(arr, pa.string()).to_pylist()


def _temporal_ints(arr):
    """Raw integer values (or None) of a date/time/timestamp array."""
    t = arr.type
    width = pa.int32() if t.bit_width == 32 else pa.int64()
    return arr.view(width).to_pylist()


_DAYS_1970_TO_2000 = 10957
_DAYS_PER_400_YEARS = 146097  # the Gregorian calendar repeats every 400 years
_EPOCH = datetime.date(1970, 1, 1)


def _iso_date(days):
    """ISO-8601 date of `days` since 1970-01-01, any year: shifted by whole
    400-year cycles into datetime's range, the cycles added to the year."""
    cycles, rest = divmod(days - _DAYS_1970_TO_2000, _DAYS_PER_400_YEARS)
    d = _EPOCH + datetime.timedelta(days=_DAYS_1970_TO_2000 + rest)
    y = d.year + 400 * cycles
    year = "%04d" % y if 0 <= y <= 9999 else "%s%04d" % ("-" if y < 0 else "+", abs(y))
    return "%s-%02d-%02d" % (year, d.month, d.day)


def _iso_clock(seconds, frac, unit, utc):
    h, rem = divmod(seconds, 3600)
    return "%02d:%02d:%02d.%0*d%s" % (h, rem // 60, rem % 60, _DIGITS[unit], frac, "Z" if utc else "")


_DIGITS = {"ms": 3, "us": 6, "ns": 9}


def _iso_timestamp(v, unit, utc):
    seconds, frac = divmod(v, _UNIT_PER_SECOND[unit])
    days, sod = divmod(seconds, 86400)
    return _iso_date(days) + "T" + _iso_clock(sod, frac, unit, utc)


def _iso_time(v, unit, utc):
    seconds, frac = divmod(v, _UNIT_PER_SECOND[unit])
    if not 0 <= seconds < 86400:
        raise RenderError("TIME value %d (%s) is not a time of day" % (v, unit))
    return _iso_clock(seconds, frac, unit, utc)


class _Leaf:
    """One output column: name, how to reach it in a batch, how to format."""

    def __init__(self, name, top_name, path, fmt):
        self.name = name  # dotted output name
        self.top_name = top_name  # top-level Arrow field name
        self.path = path  # child indices below the top-level field
        self.fmt = fmt  # Array -> list[str]


def _make_formatter(atype, pq_cols, json_mode=False, raw=False, strict=False):
    """Return a function Array -> list of cell strings for a primitive type.

    pq_cols: iterator over the Parquet leaf ColumnSchemas (the one belonging
    to this Arrow type is consumed).  json_mode: the element rules of
    nested leaves ("null" for a null).  raw: temporal values as integers.
    strict: JSON text as valid UTF-8 (JSON Lines).
    """
    null_cell = "null" if json_mode else ""

    if pa.types.is_dictionary(atype):
        inner = _make_formatter(atype.value_type, pq_cols, json_mode, raw, strict)
        return lambda arr: inner(arr.dictionary_decode())

    if isinstance(atype, pa.BaseExtensionType):
        inner = _make_formatter(atype.storage_type, pq_cols, json_mode, raw, strict)
        return lambda arr: inner(arr.storage)

    # ---- primitive leaf: consumes exactly one Parquet column ----
    col = next(pq_cols, None)

    def nulls_to(vals, f):
        return [null_cell if v is None else f(v) for v in vals]

    if pa.types.is_null(atype):
        return lambda arr: [null_cell] * len(arr)

    if pa.types.is_boolean(atype):
        return lambda arr: nulls_to(arr.to_pylist(), lambda v: "true" if v else "false")

    if pa.types.is_integer(atype):
        return lambda arr: nulls_to(_int_strings(arr), lambda v: v)

    if pa.types.is_floating(atype):
        fmt = "%.17g" if pa.types.is_float64(atype) else "%.9g"
        return lambda arr: nulls_to(
            arr.to_pylist(), lambda v: _fmt_float(float(v), fmt, json_mode)
        )

    if pa.types.is_decimal(atype):
        scale = atype.scale
        if col is not None and col.scale is not None and col.scale >= 0:
            if col.logical_type.type == "DECIMAL" or col.converted_type == "DECIMAL":
                scale = col.scale
        if scale != atype.scale:
            raise RenderError(
                "decimal scale mismatch: parquet %d vs arrow %d" % (scale, atype.scale)
            )
        return lambda arr: nulls_to(
            _decimal_unscaled(arr), lambda v: _decimal_text(v, scale)
        )

    def text(f):  # ISO text: a JSON string inside JSON
        return (lambda v: '"' + f(v) + '"') if json_mode else f

    if pa.types.is_date32(atype):
        return lambda arr: nulls_to(_temporal_ints(arr), str if raw else text(_iso_date))

    if pa.types.is_date64(atype):
        day = lambda v: v // 86400000
        f = (lambda v: str(day(v))) if raw else text(lambda v: _iso_date(day(v)))
        return lambda arr: nulls_to(_temporal_ints(arr), f)

    if pa.types.is_timestamp(atype) or pa.types.is_time(atype):
        src = _UNIT_PER_SECOND[atype.unit]
        dst = _UNIT_PER_SECOND[_parquet_unit(col) or atype.unit]
        if dst >= src:
            mul = dst // src
            conv = (lambda v: str(v * mul)) if mul != 1 else str
        else:
            div = src // dst

            def conv(v):
                q, r = divmod(v, div)
                if r:
                    raise RenderError("timestamp %d not exact in parquet unit" % v)
                return str(q)

        if not raw:
            unit = _parquet_unit(col) or atype.unit
            utc = _parquet_utc(col)
            iso = _iso_timestamp if pa.types.is_timestamp(atype) else _iso_time
            as_int = conv
            conv = text(lambda v: iso(int(as_int(v)), unit, utc))
        return lambda arr: nulls_to(_temporal_ints(arr), conv)

    if pa.types.is_duration(atype):  # not a Parquet type; best effort
        return lambda arr: nulls_to(_temporal_ints(arr), str)

    is_arrow_text = (
        pa.types.is_string(atype)
        or pa.types.is_large_string(atype)
        or getattr(pa.types, "is_string_view", lambda t: False)(atype)
    )
    is_arrow_bin = (
        pa.types.is_binary(atype)
        or pa.types.is_large_binary(atype)
        or pa.types.is_fixed_size_binary(atype)
        or getattr(pa.types, "is_binary_view", lambda t: False)(atype)
    )
    if is_arrow_text or is_arrow_bin:
        text = _parquet_is_text(col)
        if text is None:
            text = is_arrow_text

        def as_bytes(v):
            return v.encode("utf-8") if isinstance(v, str) else bytes(v)

        if is_arrow_text:  # the bytes as stored: to_pylist() would insist on UTF-8
            inner_type = {pa.string(): pa.binary(), pa.large_string(): pa.large_binary()}.get(atype, None)
            if inner_type is None and hasattr(pa, "binary_view"):
                inner_type = pa.binary_view()
            bytes_of = lambda arr: arr.view(inner_type)
        else:
            bytes_of = lambda arr: arr
        if text:
            if json_mode:
                f = lambda v: _json_text(as_bytes(v), strict)
            else:
                f = lambda v: _quote(
                    v if isinstance(v, str) else bytes(v).decode("utf-8", "surrogateescape")
                )
        else:
            # hex never contains '"', so no doubling is needed in CSV mode
            f = lambda v: '"' + as_bytes(v).hex() + '"'
        return lambda arr: nulls_to(bytes_of(arr).to_pylist(), f)

    raise RenderError("unsupported Arrow type %s" % atype)


def _is_list_like(atype):
    return (
        pa.types.is_list(atype)
        or pa.types.is_large_list(atype)
        or pa.types.is_fixed_size_list(atype)
        or getattr(pa.types, "is_list_view", lambda t: False)(atype)
        or getattr(pa.types, "is_large_list_view", lambda t: False)(atype)
    )


def _nested_leaves(atype, steps=()):
    """(primitive Arrow type, steps) of each leaf inside a nested type, in
    depth-first order (the order of the Parquet leaf columns).  A step is
    ("list",), ("struct", i), ("keys",), ("items",) or ("ext",)."""
    if isinstance(atype, pa.BaseExtensionType):
        yield from _nested_leaves(atype.storage_type, steps + (("ext",),))
    elif pa.types.is_struct(atype):
        for i in range(atype.num_fields):
            yield from _nested_leaves(atype.field(i).type, steps + (("struct", i),))
    elif pa.types.is_map(atype):
        yield from _nested_leaves(atype.key_type, steps + (("keys",),))
        yield from _nested_leaves(atype.item_type, steps + (("items",),))
    elif _is_list_like(atype):
        yield from _nested_leaves(atype.value_type, steps + (("list",),))
    else:
        yield atype, steps


def _spans(arr):
    """Per row: (start, end) into the child values, or None for a null row."""
    valid = arr.is_valid().to_pylist()
    if pa.types.is_fixed_size_list(arr.type):
        n = arr.type.list_size
        base = arr.offset * n
        return [(base + i * n, base + (i + 1) * n) if valid[i] else None for i in range(len(arr))]
    if hasattr(arr, "sizes"):  # list views
        o = arr.offsets.to_pylist()
        z = arr.sizes.to_pylist()
        return [(o[i], o[i] + z[i]) if valid[i] else None for i in range(len(arr))]
    o = arr.offsets.to_pylist()
    return [(o[i], o[i + 1]) if valid[i] else None for i in range(len(arr))]


def _nested_formatter(steps, leaf_fmt, json_lines=False):
    """Array of the top-level (or flattened struct) field -> CSV cells of one
    nested leaf: each list/map level an array, nulls as null, a row null
    before any array the empty field (json_lines: the JSON itself, null for
    such a row)."""

    def go(arr, k):
        """-> per row a JSON text, or None for a null"""
        if k == len(steps):
            return leaf_fmt(arr)
        st = steps[k]
        if st[0] == "ext":
            return go(arr.storage, k + 1)
        if st[0] == "struct":
            kids = go(arr.field(st[1]), k + 1)
            valid = arr.is_valid().to_pylist()
            return [kids[r] if valid[r] else None for r in range(len(arr))]
        if st[0] in ("keys", "items"):
            vals = go(arr.keys if st[0] == "keys" else arr.items, k + 1)
        else:
            vals = go(arr.values, k + 1)
        out = []
        for sp in _spans(arr):
            if sp is None:
                out.append(None)
            else:
                out.append("[" + ",".join("null" if v is None else v for v in vals[sp[0]:sp[1]]) + "]")
        return out

    def fmt(arr):
        return ["" if c is None else _quote(c) for c in go(arr, 0)]

    def fmt_json(arr):
        return ["null" if c is None else c for c in go(arr, 0)]

    return fmt_json if json_lines else fmt


def _count_leaves(atype):
    if pa.types.is_dictionary(atype):
        return _count_leaves(atype.value_type)
    if isinstance(atype, pa.BaseExtensionType):
        return _count_leaves(atype.storage_type)
    if pa.types.is_struct(atype):
        return sum(_count_leaves(atype.field(i).type) for i in range(atype.num_fields))
    if pa.types.is_map(atype):
        return _count_leaves(atype.key_type) + _count_leaves(atype.item_type)
    if hasattr(atype, "value_type") and not pa.types.is_dictionary(atype):
        return _count_leaves(atype.value_type)
    return 1


def _is_nested(atype):
    if pa.types.is_dictionary(atype):
        return False
    if isinstance(atype, pa.BaseExtensionType):
        return _is_nested(atype.storage_type)
    return pa.types.is_nested(atype)


def _build_leaves(pf, raw=False, json_lines=False):
    """Map the Arrow schema onto the Parquet leaf columns -> list of _Leaf."""
    pq_schema = pf.schema
    pq_leaves = [pq_schema.column(i) for i in range(len(pq_schema))]
    leaves = []
    pos = 0

    def walk(field, top_name, path, prefix):
        nonlocal pos
        atype = field.type
        name = prefix + field.name
        if pa.types.is_struct(atype):
            for i in range(atype.num_fields):
                walk(atype.field(i), top_name, path + (i,), name + ".")
            return
        n = _count_leaves(atype)
        mine = pq_leaves[pos : pos + n]
        if len(mine) != n:
            raise RenderError("Arrow schema has more leaves than the Parquet schema")
        nested = _count_leaves(atype) != 1 or _is_nested(atype)
        pos += n
        if not nested:
            if mine[0].path != name:
                raise RenderError(
                    "leaf order mismatch: arrow %r vs parquet %r" % (name, mine[0].path)
                )
            fmt = _make_formatter(atype, iter(mine), json_lines, raw, json_lines)
            leaves.append(_Leaf(name, top_name, path, fmt))
            return
        # one output column per Parquet leaf, named by its Parquet path
        inner = list(_nested_leaves(atype))
        if len(inner) != n:
            raise RenderError("nested field %r: %d Arrow leaves, %d Parquet leaves" % (name, len(inner), n))
        for (ltype, steps), col in zip(inner, mine):
            if not col.path.startswith(name + ".") and col.path != name:
                raise RenderError("leaf order mismatch: arrow %r vs parquet %r" % (name, col.path))
            efmt = _make_formatter(ltype, iter([col]), True, raw, json_lines)
            leaves.append(_Leaf(col.path, top_name, path, _nested_formatter(steps, efmt, json_lines)))

    for field in pf.schema_arrow:
        walk(field, field.name, (), "")
    if pos != len(pq_leaves):
        raise RenderError("Parquet schema has leaves not covered by the Arrow schema")
    return leaves


def _leaf_array(batch, leaf):
    arr = batch.column(batch.schema.get_field_index(leaf.top_name))
    for i in leaf.path:
        # StructArray.flatten() merges the parent's validity into the children.
        arr = arr.flatten()[i]
    return arr


def _open(path):
    # INT96 timestamps come back as timestamp[ns] (pyarrow's default, made
    # explicit so that a stored Arrow schema cannot change it).
    return pq.ParquetFile(path, coerce_int96_timestamp_unit="ns")


def column_names(path):
    """The output column names of a Parquet file, in output order."""
    return [leaf.name for leaf in _build_leaves(_open(path))]


def render_to(out, path, columns=None, limit=None, raw=False, json_lines=False):
    """Write the CSV (or JSON Lines) rendering of `path` to the text stream
    `out`."""
    pf = _open(path)
    leaves = _build_leaves(pf, raw, json_lines)
    if columns is not None:
        by_name = {}
        for leaf in leaves:
            by_name.setdefault(leaf.name, leaf)
        chosen, missing = [], []
        for c in columns:
            if c in by_name:
                chosen.append(by_name[c])
                continue
            # A struct (group) name selects all its leaves, in schema order.
            group = [leaf for leaf in leaves if leaf.name.startswith(c + ".")]
            if group:
                chosen.extend(group)
            else:
                missing.append(c)
        if missing:
            raise RenderError("no such column: %s" % ", ".join(missing))
        leaves = chosen
    if limit is not None and limit < 0:
        raise RenderError("limit must be >= 0")

    if json_lines:
        keys = [_json_text(leaf.name.encode("utf-8", "surrogateescape"), True) + ":" for leaf in leaves]
    else:
        out.write(",".join(_quote(leaf.name) for leaf in leaves) + "\n")
    if not leaves:
        return
    remaining = pf.metadata.num_rows if limit is None else limit
    if remaining == 0:
        return

    tops = []
    for leaf in leaves:
        if leaf.top_name not in tops:
            tops.append(leaf.top_name)
    top_names = [f.name for f in pf.schema_arrow]
    read_cols = None
    if len(set(top_names)) == len(top_names):
        read_cols = [n for n in top_names if n in tops]

    for batch in pf.iter_batches(batch_size=BATCH_ROWS, columns=read_cols):
        if remaining <= 0:
            break
        if batch.num_rows > remaining:
            batch = batch.slice(0, remaining)
        remaining -= batch.num_rows
        cols = [leaf.fmt(_leaf_array(batch, leaf)) for leaf in leaves]
        if json_lines:
            out.write("".join("{" + ",".join(k + c for k, c in zip(keys, row)) + "}\n" for row in zip(*cols)))
        else:
            out.write("".join(",".join(row) + "\n" for row in zip(*cols)))


def render(path, columns=None, limit=None, raw=False, json_lines=False):
    """Return the CSV (or JSON Lines) rendering of the Parquet file `path`
    as a str.

    Strings that are not valid UTF-8 are carried as surrogate escapes; encode
    the result with .encode("utf-8", "surrogateescape") to get the bytes.
    """
    buf = io.StringIO()
    render_to(buf, path, columns=columns, limit=limit, raw=raw, json_lines=json_lines)
    return buf.getvalue()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--columns", help="comma separated leaf columns (dotted names); a struct "
                    "name selects all its leaves")
    ap.add_argument("--limit", type=int, help="print only the first N rows")
    ap.add_argument("--raw", action="store_true", help="DATE, TIME, TIMESTAMP and INT96 as stored integers")
    ap.add_argument("--json", action="store_true", help="JSON Lines (one object per row) instead of CSV")
    args = ap.parse_args(argv)
    columns = args.columns.split(",") if args.columns is not None else None
    out = io.TextIOWrapper(
        sys.stdout.buffer, encoding="utf-8", errors="surrogateescape", newline="\n"
    )
    try:
        render_to(out, args.file, columns=columns, limit=args.limit, raw=args.raw, json_lines=args.json)
        out.flush()
    except RenderError as e:
        out.flush()
        print("render_csv: %s: %s" % (args.file, e), file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. piped into head
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    finally:
        try:
            out.detach()  # leave sys.stdout usable (and unclosed)
        except (ValueError, OSError):
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
