#!/usr/bin/env python3
"""Compare a CSV dumper (gpufeed-cat) against the Python oracle on a corpus.

Usage:
    .venv/bin/python tests/check_corpus.py --cat build/gpufeed-cat DIR_OR_FILE...

For every *.parquet under the given directories (recursively; files may also
be named directly), runs `CMD FILE` (CMD is split with shlex, so it may carry
arguments) and compares its stdout byte for byte with
tests/render_csv.py's render(FILE).  Prints one line per file:

    PASS path
    FAIL path: reason

where the reason names the first differing line (physical line number and
CSV record number), the column and the expected vs received cell, or the
tool's exit status and stderr.  The last line is "N passed, N failed"; the
exit status is 1 if anything failed or no .parquet file was found (2 on
usage errors).

--columns COLS / --limit N / --raw / --json are passed on to CMD (before
FILE) and to the oracle, to compare projections, row limits, the integer
form of temporal values and JSON Lines too.

Sanity check of the oracle against itself:
    .venv/bin/python tests/check_corpus.py \\
        --cat ".venv/bin/python tests/render_csv.py" tests/data
"""

import argparse
import os
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from render_csv import render  # noqa: E402


def find_files(paths):
    out = []
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for f in sorted(files):
                    if f.endswith(".parquet"):
                        out.append(os.path.join(root, f))
        elif os.path.isfile(p):
            out.append(p)
        else:
            raise SystemExit("check_corpus: no such file or directory: %s" % p)
    return out


def split_records(data):
    """Split CSV bytes into records of raw fields, honouring quotes.

    Returns a list of (first physical line number, [field bytes...]).  Fields
    keep their quotes, so they can be shown exactly as written.  A trailing
    piece without a final newline is returned as a record too.
    """
    records = []
    fields = []
    start = 0  # start of the current field
    line = 1
    rec_line = 1
    inq = False
    i = 0
    n = len(data)
    while i < n:
        c = data[i]
        if c == 0x22:  # '"'
            inq = not inq
        elif c == 0x0A:  # '\n'
            if not inq:
                fields.append(data[start:i])
                records.append((rec_line, fields))
                fields = []
                start = i + 1
                rec_line = line + 1
            line += 1
        elif c == 0x2C and not inq:  # ','
            fields.append(data[start:i])
            start = i + 1
        i += 1
    if start < n or fields:
        fields.append(data[start:n])
        records.append((rec_line, fields))
    return records


def show(b, limit=80):
    s = repr(b)[1:]  # drop the b prefix, keep the quotes
    return s if len(s) <= limit else s[: limit - 3] + "..."


def describe_mismatch(expected, got):
    exp = split_records(expected)
    out = split_records(got)
    names = [f.decode("utf-8", "replace").strip('"') for f in exp[0][1]] if exp else []
    for r, (e, g) in enumerate(zip(exp, out)):
        if e[1] == g[1] and e[0] == g[0]:
            continue
        where = "line %d (%s)" % (e[0], "header" if r == 0 else "row %d" % (r - 1))
        ef, gf = e[1], g[1]
        for c in range(max(len(ef), len(gf))):
            ec = ef[c] if c < len(ef) else None
            gc = gf[c] if c < len(gf) else None
            if ec != gc:
                col = names[c] if c < len(names) else "#%d" % (c + 1)
                if ec is None:
                    return "%s: extra field %d %s" % (where, c + 1, show(gc))
                if gc is None:
                    return "%s: missing field %d (column %r, expected %s)" % (
                        where, c + 1, col, show(ec))
                return "%s, column %r: expected %s, got %s" % (where, col, show(ec), show(gc))
        return "%s differs" % where  # e.g. line numbering shifted by a newline
    if len(exp) != len(out):
        return "expected %d rows, got %d" % (len(exp) - 1, len(out) - 1)
    if expected.endswith(b"\n") != got.endswith(b"\n"):
        return "final newline differs"
    return "outputs differ"


def describe_line_mismatch(expected, got):
    """The first differing line of two JSON Lines outputs."""
    exp, out = expected.split(b"\n"), got.split(b"\n")
    for i, (e, g) in enumerate(zip(exp, out)):
        if e != g:
            k = next((j for j in range(min(len(e), len(g))) if e[j] != g[j]), min(len(e), len(g)))
            return "line %d (row %d), byte %d: expected %s, got %s" % (
                i + 1, i, k + 1, show(e[max(0, k - 20):k + 40]), show(g[max(0, k - 20):k + 40]))
    return "expected %d rows, got %d" % (len(exp) - 1, len(out) - 1)


def check(cmd, path, timeout, columns=None, limit=None, raw=False, json_lines=False):
    try:
        expected = render(path, columns=columns, limit=limit, raw=raw,
                          json_lines=json_lines).encode("utf-8", "surrogateescape")
    except Exception as e:  # the oracle itself failed
        return "oracle error: %s: %s" % (type(e).__name__, e)
    try:
        proc = subprocess.run(cmd + [path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timed out after %ss" % timeout
    except OSError as e:
        return "cannot run %s: %s" % (cmd[0], e)
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip()
        err = " | ".join(err.splitlines()[:5]) or "(no stderr)"
        return "exit status %d: %s" % (proc.returncode, err)
    if proc.stdout == expected:
        return None
    if json_lines:
        return describe_line_mismatch(expected, proc.stdout)
    return describe_mismatch(expected, proc.stdout)


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Compare CMD FILE output with render_csv.render(FILE) for a Parquet corpus.")
    ap.add_argument("--cat", required=True, help="command to run, e.g. build/gpufeed-cat")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per file (default 120)")
    ap.add_argument("--columns", help="also pass --columns COLS to CMD and the oracle")
    ap.add_argument("--limit", type=int, help="also pass --limit N to CMD and the oracle")
    ap.add_argument("--raw", action="store_true", help="also pass --raw to CMD and the oracle")
    ap.add_argument("--json", action="store_true", help="also pass --json to CMD and the oracle")
    ap.add_argument("paths", nargs="+", metavar="DIR", help="directories (searched recursively) "
                    "or .parquet files")
    args = ap.parse_args(argv)
    cmd = shlex.split(args.cat)
    if not cmd:
        ap.error("--cat is empty")
    columns = args.columns.split(",") if args.columns is not None else None
    if args.columns is not None:
        cmd += ["--columns", args.columns]
    if args.limit is not None:
        cmd += ["--limit", str(args.limit)]
    if args.raw:
        cmd += ["--raw"]
    if args.json:
        cmd += ["--json"]
    files = find_files(args.paths)
    passed = failed = 0
    for f in files:
        reason = check(cmd, f, args.timeout, columns, args.limit, args.raw, args.json)
        if reason is None:
            passed += 1
            print("PASS %s" % f, flush=True)
        else:
            failed += 1
            print("FAIL %s: %s" % (f, reason), flush=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or not files else 0


if __name__ == "__main__":
    sys.exit(main())
