#!/usr/bin/env python3
"""Checks that gpufeed.h keeps reading in data-flow order (stdlib only).

    python3 tests/test_layout.py [HEADER]          the checks; "N passed, N failed" last
    python3 tests/test_layout.py --stats [HEADER]  the figures only (longest functions,
                                                   dense lines, long lines, blank lines)

Checks:
  functions    no function is longer than MAX_FUNC lines (from the line of
               its signature to its closing brace)
  statements   at most MAX_DENSE_PCT % of the lines outside >>codecs carry
               three or more statements (';' outside comments, string and
               character literals and for (...) headers)
  width        no line is longer than MAX_WIDTH characters
  anchors      the '/* >>name' anchors appear in the order of the table of
               contents at the top of the header, and the table lists
               exactly the anchors present
  order        no function calls a gf__ / gpufeed_ function that is first
               defined in a later section (a rough call graph by regex),
               except the calls listed in ALLOWED_FORWARD
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
HEADER = os.path.join(HERE, "..", "gpufeed.h")

MAX_FUNC = 150
MAX_DENSE_PCT = 0.5
MAX_WIDTH = 160
DENSE_EXEMPT = {"codecs"}  # unrolled codec loops may stay dense
# (caller, callee): forward calls that are allowed (the loader-driven cache
# build sits after the loader it drives; the cache's core sits before it)
ALLOWED_FORWARD = set()
ALLOWED_FORWARD_CALLEES = {"gpufeed_cache_build"}

ANCHOR_RE = re.compile(r"^/\* >>([a-z0-9_]+)( \(API\))?")
TOC_RE = re.compile(r"^\s+>>([a-z0-9_]+)( \(API\))?\s")
DEF_START_RE = re.compile(r"^(?!typedef\b|struct\b|union\b|enum\b|#)[A-Za-z_][A-Za-z0-9_ \*]*?\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
CALL_RE = re.compile(r"\b((?:gf__|gpufeed_)[A-Za-z0-9_]*)\s*\(")


def strip_code(lines):
    """Each line with comments and string/char literals blanked out."""
    out = []
    in_comment = False
    for line in lines:
        res = []
        i, n = 0, len(line)
        while i < n:
            if in_comment:
                j = line.find("*/", i)
                if j < 0:
                    i = n
                else:
                    in_comment = False
                    i = j + 2
                continue
            c = line[i]
            if line.startswith("/*", i):
                in_comment = True
                i += 2
                continue
            if line.startswith("//", i):
                break
            if c == '"' or c == "'":
                q = c
                i += 1
                while i < n and line[i] != q:
                    i += 2 if line[i] == "\\" else 1
                i += 1
                res.append(q + q)
                continue
            res.append(c)
            i += 1
        out.append("".join(res))
    return out


def count_statements(code):
    """';' in a line of code, those inside for (...) headers left out."""
    s = code
    # blank out for (...) headers (on this line; balanced parentheses)
    while True:
        m = re.search(r"\bfor\s*\(", s)
        if not m:
            break
        depth, j = 0, m.end() - 1
        while j < len(s):
            if s[j] == "(":
                depth += 1
            elif s[j] == ")":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        s = s[: m.start()] + "F" + " " * (j - m.start()) + s[j + 1:]
    return s.count(";")


def load():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    with open(args[0] if args else HEADER, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def anchors(lines):
    """[(line index, key)] of the anchors, key 'name' or 'name (API)'."""
    res = []
    for i, l in enumerate(lines):
        m = ANCHOR_RE.match(l)
        if m:
            res.append((i, m.group(1) + (m.group(2) or "")))
    return res


def section_of(anch, i):
    """The anchor key a line belongs to ('' before the first)."""
    key = ""
    for j, k in anch:
        if j > i:
            break
        key = k
    return key


def functions(lines, code):
    """[(name, first line index, last line index)]: definitions at column 0
    whose body opens with '{' at column 0 and closes with '}' at column 0."""
    res = []
    i, n = 0, len(lines)
    while i < n:
        m = DEF_START_RE.match(code[i])
        if not m or code[i].rstrip().endswith(";"):
            i += 1
            continue
        # the signature runs to a line that is '{' (or ends with '{'), with no ';' before
        j = i
        ok = False
        while j < n and j < i + 12:
            c = code[j].rstrip()
            if c == "{" or (c.endswith("{") and j >= i and ")" in c):
                ok = True
                break
            if c.endswith(";") or (j > i and c[:1] not in ("", " ", "\t", "{")):
                break
            j += 1
        if not ok:
            i += 1
            continue
        k = j + 1 if code[j].rstrip() == "{" else j
        if code[j].rstrip() != "{":
            # '{' at the end of the signature: a one-liner or the body to '}' at column 0
            if code[j].rstrip().endswith("}"):
                res.append((m.group(1), i, j))
                i = j + 1
                continue
        while k < n and not code[k].startswith("}"):
            k += 1
        res.append((m.group(1), i, k))
        i = k + 1
    return res


def stats(lines, code, anch):
    funcs = functions(lines, code)
    lengths = sorted(((e - s + 1, name, s + 1) for name, s, e in funcs), reverse=True)
    dense, counted = [], 0
    for i, c in enumerate(code):
        if section_of(anch, i) in DENSE_EXEMPT:
            continue
        counted += 1
        if count_statements(c) >= 3:
            dense.append(i)
    wide = [i for i, l in enumerate(lines) if len(l) > MAX_WIDTH]
    blank = sum(1 for l in lines if not l.strip())
    return funcs, lengths, dense, counted, wide, blank


def toc(lines):
    """The anchors the table of contents lists, in its order."""
    res, on = [], False
    for l in lines:
        if l.startswith("   Table of contents"):
            on = True
            continue
        if on:
            if l.strip().startswith("Options") or l.startswith("*/"):
                break
            m = TOC_RE.match(l)
            if m:
                res.append(m.group(1) + (m.group(2) or ""))
    return res


def main():
    lines = load()
    code = strip_code(lines)
    anch = anchors(lines)
    funcs, lengths, dense, counted, wide, blank = stats(lines, code, anch)
    if "--stats" in sys.argv:
        print("lines %d, functions %d" % (len(lines), len(funcs)))
        print("longest functions:")
        for ln, name, at in lengths[:15]:
            print("  %5d  %s (line %d)" % (ln, name, at))
        print("lines with 3+ statements outside codecs: %d of %d (%.2f%%)" % (len(dense), counted, 100.0 * len(dense) / max(counted, 1)))
        print("lines > %d chars: %d" % (MAX_WIDTH, len(wide)))
        print("blank lines: %d (%.1f%%)" % (blank, 100.0 * blank / len(lines)))
        print("anchors: " + " ".join(k for _, k in anch))
        return 0

    passed = failed = 0

    def check(name, problems):
        nonlocal passed, failed
        if problems:
            failed += 1
            print("FAIL %s" % name)
            for p in problems[:40]:
                print("    " + p)
            if len(problems) > 40:
                print("    ... and %d more" % (len(problems) - 40))
        else:
            passed += 1
            print("PASS %s" % name)

    check("functions: none longer than %d lines" % MAX_FUNC,
          ["%s (line %d) is %d lines" % (name, at, ln) for ln, name, at in lengths if ln > MAX_FUNC])

    pct = 100.0 * len(dense) / max(counted, 1)
    check("statements: at most %.1f%% of non-codec lines carry 3+ statements (%d of %d, %.2f%%)"
          % (MAX_DENSE_PCT, len(dense), counted, pct),
          [] if pct <= MAX_DENSE_PCT else
          ["line %d (%s): %s" % (i + 1, section_of(anch, i), lines[i].strip()[:100]) for i in dense])

    check("width: no line longer than %d characters" % MAX_WIDTH,
          ["line %d is %d characters: %s" % (i + 1, len(lines[i]), lines[i].strip()[:80]) for i in wide])

    keys = [k for _, k in anch]
    t = toc(lines)
    probs = []
    if len(set(keys)) != len(keys):
        probs.append("an anchor appears twice: %s" % sorted(k for k in set(keys) if keys.count(k) > 1))
    for k in keys:
        if k not in t:
            probs.append("anchor >>%s is not in the table of contents" % k)
    for k in t:
        if k not in keys:
            probs.append("the table of contents lists >>%s, which is not in the file" % k)
    if not probs and keys != t:
        for a, b in zip(keys, t):
            if a != b:
                probs.append("the file has >>%s where the table of contents says >>%s" % (a, b))
                break
    check("anchors: in the order of the table of contents, which lists exactly them", probs)

    # call order: a function's calls to functions first defined in a later section
    sec_index = {}
    for idx, (_, k) in enumerate(anch):
        sec_index.setdefault(k, idx)
    first = {}
    for name, s, e in funcs:
        if name not in first:
            first[name] = (s, sec_index.get(section_of(anch, s), -1))
    probs = []
    for name, s, e in funcs:
        my = sec_index.get(section_of(anch, s), -1)
        for i in range(s, e + 1):
            body = code[i]
            if i == s:
                body = body[body.find("(") + 1:]
            for m in CALL_RE.finditer(body):
                callee = m.group(1)
                if callee == name or callee not in first:
                    continue
                cs, csec = first[callee]
                if csec > my and callee not in ALLOWED_FORWARD_CALLEES and (name, callee) not in ALLOWED_FORWARD:
                    probs.append("%s (line %d, >>%s) calls %s, first defined in the later section >>%s (line %d)"
                                 % (name, i + 1, section_of(anch, s), callee, section_of(anch, cs), cs + 1))
    check("order: no section calls a function first defined in a later one", probs)

    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
