#!/usr/bin/env python3
"""gpufeed-cat and gpufeed-inspect against pyarrow (the parts that need it).

    .venv/bin/python tests/test_cli.py [--cat build/asan/gpufeed-cat] [--inspect build/asan/gpufeed-inspect]

tests/test_tools.sh runs it (and adds its counts). Checks: gpufeed-cat's
CSV (ISO-8601 and --raw) and JSON Lines equal tests/render_csv.py's byte
for byte on the committed corpus, with projections and limits; dates,
times and timestamps at the edges (every unit, UTC and local, INT96,
pre-1970, the int32 / int64 extremes) equal the oracle, fixed anchors
(pandas' and java.time's printed extremes) and Python's datetime where it
reaches; a TIME that is not a time of day is an error naming column and
row; --json is valid UTF-8 JSON for text that is not (U+FFFD as Python's
decoder makes it, over random bytes) and escapes odd column names;
directories and globs print like the files one after another;
`gpufeed-inspect schema` equals pyarrow's schema tree (translated to
parquet-mr's notation), `rowcount` pyarrow's row counts, and meta's
temporal statistics the oracle's text of pyarrow's raw statistics. Prints
"N passed, N failed" last.
"""
import argparse
import datetime
import decimal
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

import check_corpus  # noqa: E402
from render_csv import render, _iso_date, _iso_time, _iso_timestamp  # noqa: E402

PASS = FAIL = 0
DATA = os.path.join(ROOT, "tests", "data")
CORPUS = sorted(os.path.join(DATA, f) for f in os.listdir(DATA) if f.endswith(".parquet"))
I32 = (-2**31, 2**31 - 1)
I64 = (-2**63, 2**63 - 1)


def check(name, cond, detail=""):
    global PASS, FAIL
    if cond:
        PASS += 1
        print("PASS " + name)
    else:
        FAIL += 1
        print("FAIL " + name + ((": " + detail) if detail else ""))


def run(cmd):
    return subprocess.run(cmd, capture_output=True)


def oracle(path, **kw):
    return render(path, **kw).encode("utf-8", "surrogateescape")


def test_corpus(cat):
    """every committed file, each mode, equal to the oracle"""
    for flags, kw in (([], {}), (["--raw"], {"raw": True}), (["--json"], {"json_lines": True}),
                      (["--json", "--raw"], {"json_lines": True, "raw": True})):
        bad = [(p, why) for p in CORPUS
               for why in [check_corpus.check([cat] + flags, p, 120, raw=kw.get("raw", False),
                                              json_lines=kw.get("json_lines", False))] if why]
        check("gpufeed-cat %s equals the oracle on %d committed files" % (" ".join(flags) or "(CSV, ISO-8601)", len(CORPUS)),
              not bad, "; ".join("%s: %s" % (os.path.basename(p), w) for p, w in bad[:3]))
    p = os.path.join(DATA, "pyarrow_default.parquet")
    for flags in ([], ["--json"]):
        why = check_corpus.check([cat] + flags + ["--columns", "ts_ns,date32,s", "--limit", "7"], p, 60,
                                 columns=["ts_ns", "date32", "s"], limit=7, json_lines=bool(flags))
        check("%s --columns ts_ns,date32,s --limit 7 equals the oracle" % (" ".join(flags) or "CSV"), why is None, why or "")
    # every JSON line parses, as UTF-8
    bad = []
    for p in CORPUS:
        r = run([cat, "--json", p])
        try:
            rows = [json.loads(line.decode("utf-8")) for line in r.stdout.splitlines()]
            if len(rows) != pq.ParquetFile(p).metadata.num_rows:
                bad.append("%s: %d rows" % (p, len(rows)))
        except ValueError as e:
            bad.append("%s: %s" % (p, e))
    check("--json: every line of every committed file is a JSON object (json.loads, UTF-8), one per row", not bad, "; ".join(bad[:3]))
    rows = [json.loads(x) for x in run([cat, "--json", "-n", "2", os.path.join(DATA, "polars_snappy.parquet")]).stdout.splitlines()]
    check("--json: non-finite floats are the strings nan / inf / -inf",
          rows[0]["f32"] == "nan" and rows[0]["f64"] == "-inf" and rows[1]["f32"] == "inf", str(rows[:2])[:200])


def temporal_table(rng):
    def pick(lo, hi, n):
        return [rng.randint(lo, hi) for _ in range(n)]
    edges64 = [I64[0], I64[0] + 1, -86400 * 10**9 - 1, -10**9 - 1, -1001, -1, 0, 1, 999, 1000, I64[1] - 1, I64[1]]
    n = len(edges64) + 300
    col64 = edges64 + pick(*I64, 300)
    leap = [(datetime.date(y, m, d) - datetime.date(1970, 1, 1)).days
            for y, m, d in ((2000, 2, 29), (1900, 3, 1), (1900, 2, 28), (1600, 2, 29), (1, 1, 1), (9999, 12, 31),
                            (1970, 1, 1), (1969, 12, 31), (2024, 12, 31))]
    dates = [I32[0], I32[1], -719528, -719529, -719163, 2932897, -1, 0] + leap
    dates += pick(*I32, n - len(dates))
    t32 = [0, 1, 86399999, 43200000] + pick(0, 86399999, n - 4)
    t64us = [0, 1, 86399999999] + pick(0, 86399999999, n - 3)
    t64ns = [0, 86399999999999] + pick(0, 86399999999999, n - 2)
    cols = {"d": pa.array(dates, pa.date32()), "t_ms": pa.array(t32, pa.time32("ms")),
            "t_us": pa.array(t64us, pa.time64("us")), "t_ns": pa.array(t64ns, pa.time64("ns"))}
    for unit in ("ms", "us", "ns"):
        cols["ts_" + unit] = pa.array(col64, pa.timestamp(unit))
        cols["tsz_" + unit] = pa.array(col64, pa.timestamp(unit, tz="UTC"))
    nulls = [None if i % 7 == 3 else v for i, v in enumerate(col64)]
    cols["ts_us_nulls"] = pa.array(nulls, pa.timestamp("us"))
    return pa.table(cols), col64, dates


def test_temporal(cat, inspect, td):
    rng = random.Random(15)
    table, col64, dates = temporal_table(rng)
    path = os.path.join(td, "temporal.parquet")
    pq.write_table(table, path, row_group_size=100)
    for flags, kw in (([], {}), (["--json"], {"json_lines": True}), (["--raw"], {"raw": True})):
        why = check_corpus.check([cat] + flags, path, 60, raw=kw.get("raw", False), json_lines=kw.get("json_lines", False))
        check("dates/times/timestamps at the edges, every unit, UTC and local %s: equal to the oracle" % (" ".join(flags) or "(CSV)"),
              why is None, why or "")
    out = run([cat, "--json", path]).stdout.decode()
    rows = [json.loads(x) for x in out.splitlines()]
    # anchors printed by other systems for the extremes
    anchors = [(0, "ts_ms", "-292275055-05-16T16:47:04.192"), (11, "ts_ms", "+292278994-08-17T07:12:55.807"),
               (0, "tsz_ms", "-292275055-05-16T16:47:04.192Z"), (0, "ts_ns", "1677-09-21T00:12:43.145224192"),
               (11, "tsz_ns", "2262-04-11T23:47:16.854775807Z"), (0, "d", "-5877641-06-23"), (1, "d", "+5881580-07-11"),
               (2, "d", "0000-01-01"), (3, "d", "-0001-12-31"), (4, "d", "0000-12-31"), (5, "d", "+10000-01-01"),
               (6, "d", "1969-12-31"), (5, "ts_ns", "1969-12-31T23:59:59.999999999"), (4, "ts_ms", "1969-12-31T23:59:58.999"),
               (3, "tsz_ns", "1969-12-31T23:59:58.999999999Z"), (2, "t_ms", "23:59:59.999"), (2, "t_us", "23:59:59.999999"), (1, "t_ns", "23:59:59.999999999")]
    bad = ["row %d %s: %s, want %s" % (r, c, rows[r][c], want) for r, c, want in anchors if rows[r][c] != want]
    check("extremes print as pandas / java.time print them (-292275055-05-16T16:47:04.192, 1677-09-21T00:12:43.145224192, "
          "-5877641-06-23, +5881580-07-11), years before 0 and after 9999 signed", not bad, "; ".join(bad[:4]))
    # Python's datetime, where it reaches, agrees (a third implementation)
    epoch = datetime.datetime(1970, 1, 1)
    bad = []
    for r, v in enumerate(col64):
        try:
            want = (epoch + datetime.timedelta(microseconds=v)).isoformat(timespec="microseconds")
        except OverflowError:
            continue
        if rows[r]["ts_us"] != want or rows[r]["tsz_us"] != want + "Z":
            bad.append("%d: %s / %s, want %s" % (v, rows[r]["ts_us"], rows[r]["tsz_us"], want))
    for r, v in enumerate(dates):
        try:
            want = (datetime.date(1970, 1, 1) + datetime.timedelta(days=v)).isoformat()
        except OverflowError:
            continue
        if rows[r]["d"] != want:
            bad.append("day %d: %s, want %s" % (v, rows[r]["d"], want))
    check("timestamps and dates within datetime's years equal datetime.isoformat()", not bad, "; ".join(bad[:3]))
    nulls = [r for r in rows if r["ts_us_nulls"] is None]
    check("--json: nulls are null", len(nulls) == sum(1 for i in range(len(col64)) if i % 7 == 3))
    raw = [json.loads(x) for x in run([cat, "--json", "--raw", path]).stdout.splitlines()]
    check("--raw --json: the stored integers (days, unit)",
          [r["ts_ns"] for r in raw] == col64 and [r["d"] for r in raw] == dates and raw[2]["t_ms"] == 86399999)
    # INT96 (as Spark writes it): nanoseconds, no Z
    p96 = os.path.join(td, "int96.parquet")
    vals = [-2**62, -86400 * 10**9 - 1, -1, 0, 1, 10**18, 2**62] + [rng.randint(-2**62, 2**62) for _ in range(100)]
    pq.write_table(pa.table({"t": pa.array(vals, pa.timestamp("ns"))}), p96, use_deprecated_int96_timestamps=True)
    why = check_corpus.check([cat], p96, 60)
    out = run([cat, "--json", p96]).stdout.splitlines()
    check("INT96: nanosecond timestamps without Z, equal to the oracle", why is None and json.loads(out[2])["t"] == "1969-12-31T23:59:59.999999999",
          (why or "") + " " + (out[2].decode() if len(out) > 2 else ""))
    # meta's statistics: the oracle's text of pyarrow's raw min/max
    units = {"ts_ms": "ms", "ts_us": "us", "ts_ns": "ns", "tsz_ms": "ms", "tsz_us": "us", "tsz_ns": "ns"}
    md = pq.ParquetFile(path).metadata
    text = run([inspect, path]).stdout.decode()
    bad = []
    for rg in range(md.num_row_groups):
        block = text.split("\nrow group %d:" % rg)[1].split("\nrow group")[0]
        for i in range(md.num_columns):
            c = md.row_group(rg).column(i)
            name, st = c.path_in_schema, c.statistics
            if name == "d":
                want = "%s .. %s" % (_iso_date(st.min_raw), _iso_date(st.max_raw))
            elif name.startswith("t_"):
                u = name[2:]
                want = "%s .. %s" % (_iso_time(st.min_raw, u, False), _iso_time(st.max_raw, u, False))
            elif name in units:
                z = name.startswith("tsz")
                want = "%s .. %s" % (_iso_timestamp(st.min_raw, units[name], z), _iso_timestamp(st.max_raw, units[name], z))
            else:
                continue
            line = [ln for ln in block.splitlines() if ln.split()[:1] == [name]]
            if not line or not line[0].endswith("  " + want):
                bad.append("rg %d %s: %r, want %r" % (rg, name, line[0][-70:] if line else None, want))
    check("gpufeed-inspect meta: temporal min .. max equal the oracle's text of pyarrow's raw statistics", not bad, "; ".join(bad[:3]))
    text = run([inspect, "--raw", path]).stdout.decode()
    names = [md.schema.column(i).path for i in range(md.num_columns)]
    st = md.row_group(0).column(names.index("ts_ns")).statistics
    check("gpufeed-inspect meta --raw: the integers", ("%d .. %d" % (st.min_raw, st.max_raw)) in text)


def test_time_errors(cat, td):
    p = os.path.join(td, "badtime.parquet")
    pq.write_table(pa.table({"ok": pa.array([1, 2, 3], pa.int32()),
                             "t": pa.array([0, 86400000, 5], pa.time32("ms"))}), p)
    r = run([cat, p])
    err = r.stderr.decode()
    check("a TIME of 24:00:00 is an error naming file, column and row, exit 1 (%s)" % err.strip()[:100],
          r.returncode == 1 and "badtime.parquet" in err and "column 't', row 1" in err and "86400000" in err
          and "--raw" in err and err.count("\n") == 1, err)
    r = run([cat, "--raw", p])
    check("--raw prints that TIME as its integer", r.returncode == 0 and r.stdout.decode().splitlines()[2] == "2,86400000")
    p = os.path.join(td, "badtime_list.parquet")
    pq.write_table(pa.table({"l": pa.array([[0], [-1]], pa.list_(pa.time32("ms")))}), p)
    r = run([cat, "--json", p])
    check("the same inside a list: an error, exit 1", r.returncode == 1 and "column 'l.list.element', row 1" in r.stderr.decode(),
          r.stderr.decode())


def test_json_text(cat, td):
    rng = random.Random(7)
    pieces = [b"\xc3\xa9", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80", b"\xed\xa0\x80", b"\xc0\xaf", b"\xe0\x80\x80", b"\xf4\x90\x80\x80",
              b"\xf0\x9f\x98", b"\xe2\x82", b"\x80", b"\xbf", b"\xff", b"\xfe", b"\xc2", b"a", b'"', b"\\", b"\n", b"\x01", b"\x7f"]
    vals = [b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 8))) for _ in range(3000)]
    vals += [bytes(rng.randint(0, 255) for _ in range(rng.randint(0, 12))) for _ in range(3000)]
    names = ['a"b', "back\\slash", "new\nline", "caf\u00e9", "tab\there"]
    text = pa.array(vals, pa.binary()).view(pa.string())   # no UTF-8 check on the way
    cols = {names[0]: text}
    cols.update({n: pa.array(list(range(len(vals))), pa.int32()) for n in names[1:]})
    cols["l"] = pa.ListArray.from_arrays(pa.array(range(len(vals) + 1), pa.int32()), text)  # text inside a list too
    table = pa.table(cols)
    p = os.path.join(td, "bytes.parquet")
    pq.write_table(table, p)
    why = check_corpus.check([cat, "--json"], p, 60, json_lines=True)
    check("--json over %d random byte strings (ill-formed UTF-8 included) and odd column names: equal to the oracle "
          "(U+FFFD as Python's decoder puts it)" % len(vals), why is None, why or "")
    r = run([cat, "--json", p])
    ok = True
    try:
        rows = [json.loads(x.decode("utf-8", "strict")) for x in r.stdout.splitlines()]
        ok = len(rows) == len(vals) and all(row[names[0]] == v.decode("utf-8", "replace") and row["l.list.element"] == [v.decode("utf-8", "replace")]
                                            for row, v in zip(rows, vals)) and list(rows[0]) == names + ["l.list.element"]
    except ValueError as e:
        ok = False
        print("  %s" % e)
    check("--json output is strict UTF-8 and JSON; values decode to bytes.decode('utf-8', 'replace'); keys escaped", ok)
    why = check_corpus.check([cat], p, 60)
    check("CSV keeps the bytes as stored (the contract), equal to the oracle", why is None, why or "")


def test_files(cat, td):
    d = os.path.join(td, "dir")
    os.makedirs(d)
    a, b = os.path.join(DATA, "pyarrow_heavy_nulls.parquet"), os.path.join(DATA, "pyarrow_default.parquet")
    shutil.copy(a, os.path.join(d, "part-0.parquet"))
    shutil.copy(b, os.path.join(d, "part-1.parquet"))
    shutil.copy(os.path.join(DATA, "ids.parquet"), os.path.join(d, ".hidden.parquet"))
    open(os.path.join(d, "notes.txt"), "w").write("not parquet\n")
    for flags, kw in (([], {}), (["--json"], {"json_lines": True})):
        want = oracle(a, **kw) + (oracle(b, **kw).split(b"\n", 1)[1] if not flags else oracle(b, **kw))
        for arg in (d, os.path.join(d, "part-*.parquet")):
            r = run([cat] + flags + [arg])
            check("%s %s: the files one after another%s (hidden files and others skipped)" % (
                " ".join(flags) or "CSV", "a directory" if arg == d else "a glob", "" if flags else ", one header"),
                r.returncode == 0 and r.stdout == want, r.stderr.decode()[:200])
    want = oracle(b) + oracle(a).split(b"\n", 1)[1]
    r = run([cat, os.path.join(d, "part-1.parquet"), os.path.join(d, "part-0.parquet")])
    check("several paths print in the order given", r.stdout == want)
    r = run([cat, "-n", "250", "--columns", "i32,ts_us", d])
    want = oracle(a, columns=["i32", "ts_us"]) + oracle(b, columns=["i32", "ts_us"], limit=50).split(b"\n", 1)[1]
    check("-n counts rows over all the files", r.stdout == want and r.stdout.count(b"\n") == 251)


def pyarrow_schema_as_message(path):
    """pyarrow's schema tree in parquet-mr's notation"""
    def annotation(a):
        simple = {"String": "STRING", "Enum": "ENUM", "JSON": "JSON", "BSON": "BSON", "UUID": "UUID", "Date": "DATE",
                  "Interval": "INTERVAL", "List": "LIST", "Map": "MAP", "Float16": "FLOAT16", "Null": "UNKNOWN"}
        if a in simple:
            return simple[a]
        kv = dict(x.split("=") for x in re.findall(r"\w+=\w+", a))
        unit = {"milliseconds": "MILLIS", "microseconds": "MICROS", "nanoseconds": "NANOS"}.get(kv.get("timeUnit"))
        if a.startswith("Int("):
            return "INTEGER(%s,%s)" % (kv["bitWidth"], kv["isSigned"])
        if a.startswith("Decimal("):
            return "DECIMAL(%s,%s)" % (kv["precision"], kv["scale"])
        if a.startswith("Time("):
            return "TIME(%s,%s)" % (unit, kv["isAdjustedToUTC"])
        if a.startswith("Timestamp("):
            return "TIMESTAMP(%s,%s)" % (unit, kv["isAdjustedToUTC"])
        raise ValueError("no translation for pyarrow's annotation %r" % a)

    out = []
    lines = str(pq.ParquetFile(path).schema).splitlines()[1:]
    for i, line in enumerate(lines):
        if i == 0:
            out.append("message %s {" % re.match(r"required group field_id=-?\d+ (.*) \{$", line).group(1))
            continue
        if line.strip() == "}":
            out.append(line)
            continue
        m = re.match(r"^(\s*)(\w+) (\S+) field_id=(-?\d+) (.+?)( \((.*)\))?(;| \{)$", line)
        if not m:
            raise ValueError("cannot read pyarrow's line %r" % line)
        ind, rep, phys, fid, name, _, ann, end = m.groups()
        s = "%s%s %s %s" % (ind, rep, phys, name)
        if ann:
            s += " (%s)" % annotation(ann)
        if fid != "-1":
            s += " = %s" % fid
        out.append(s + end)
    return "\n".join(out) + "\n"


def test_inspect(inspect, td):
    nested = os.path.join(td, "nested.parquet")
    ids = {b"PARQUET:field_id": b"7"}
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False, metadata=ids),
                        pa.field("l", pa.list_(pa.int32())), pa.field("m", pa.map_(pa.string(), pa.float64())),
                        pa.field("s", pa.struct([pa.field("x", pa.list_(pa.list_(pa.string()))), pa.field("u", pa.uint16())])),
                        pa.field("f16", pa.float16()), pa.field("fx", pa.binary(3)), pa.field("dec", pa.decimal128(20, 4))])
    rows = {"id": [1, 2], "l": [[1], None], "m": [[("a", 1.0)], []], "s": [{"x": [["p"]], "u": 3}, None],
            "f16": pa.array(np.array([1, 2], dtype=np.float16)), "fx": [b"abc", None],
            "dec": [decimal.Decimal("1.5"), None]}
    pq.write_table(pa.Table.from_pydict(rows, schema=schema), nested)
    files = CORPUS + [nested, os.path.join(td, "temporal.parquet")]
    bad = []
    for p in files:
        got = run([inspect, "schema", p])
        try:
            want = pyarrow_schema_as_message(p)
        except ValueError as e:
            bad.append("%s: %s" % (os.path.basename(p), e))
            continue
        if got.returncode != 0 or got.stdout.decode() != want:
            g, w = got.stdout.decode().splitlines(), want.splitlines()
            diff = [(x, y) for x, y in zip(g, w) if x != y][:1] or [(len(g), len(w))]
            bad.append("%s: got %r, want %r" % (os.path.basename(p), diff[0][0], diff[0][1]))
    check("gpufeed-inspect schema equals pyarrow's schema tree on %d files (lists, maps, field ids, every annotation)" % len(files),
          not bad, "; ".join(bad[:3]))
    bad = [p for p in files if run([inspect, "rowcount", p]).stdout != b"%d\n" % pq.ParquetFile(p).metadata.num_rows]
    check("gpufeed-inspect rowcount equals pyarrow's num_rows for each file", not bad, ", ".join(bad[:3]))
    tree = [os.path.join(d, f) for d, _, fs in os.walk(DATA) for f in fs if f.endswith(".parquet")]   # walked recursively
    total = sum(pq.ParquetFile(p).metadata.num_rows for p in tree)
    r = run([inspect, "rowcount", DATA])
    check("rowcount of a directory: the sum over the files of its tree (%d)" % total, r.stdout == b"%d\n" % total, r.stdout.decode())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cat", default=os.path.join(ROOT, "build", "asan", "gpufeed-cat"))
    ap.add_argument("--inspect", default=os.path.join(ROOT, "build", "asan", "gpufeed-inspect"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as td:
        for t in (lambda: test_corpus(a.cat), lambda: test_temporal(a.cat, a.inspect, td), lambda: test_time_errors(a.cat, td),
                  lambda: test_json_text(a.cat, td), lambda: test_files(a.cat, td), lambda: test_inspect(a.inspect, td)):
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
