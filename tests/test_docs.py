#!/usr/bin/env python3
"""The docs against what they describe (standard library only).

    python3 tests/test_docs.py          "N passed, N failed" last

Checks:
  options    every macro gpufeed.h tests (#if / #ifdef / #ifndef / defined)
             is in the header's own options list (its top comment) and in
             tools/README.md's compile-time options table, and neither
             names a macro the header does not have
  epochs     the options tables give gpufeed_loader_desc.epochs and its
             endless value, GPUFEED_EPOCHS_ENDLESS, as the header has it
  mutants    the mutant counts README.md and tests/README.md state (all,
             declared equivalent, per section) are tests/mutation.py's
  sizes      README.md <= 300 lines, tools/bench/README.md <= 400
  reference  the READMEs carry no history: no commit id of this repository,
             no "the build before", no sessions; CHANGELOG.md is dated
             lines, one an entry, newest first
  timings    README.md states what make check and make demo take, measured
             on a dated machine
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PASS = FAIL = 0
INTERNAL = {"GPUFEED_H", "GPUFEED_IMPLEMENTATION_DONE"}  # guards, not options
DOCS = ["README.md", "tools/README.md", "tests/README.md", "tools/bench/README.md", "examples/data/README.md"]


def check(name, cond, detail=""):
    global PASS, FAIL
    if cond:
        PASS += 1
        print("PASS " + name)
    else:
        FAIL += 1
        print("FAIL " + name + ((": " + detail) if detail else ""))


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def header_macros(h):
    found = set()
    for line in h.splitlines():
        if re.match(r"\s*#\s*(if|ifdef|ifndef|elif)\b", line):
            found |= set(re.findall(r"\b(GPUFEED_[A-Z0-9_]+)", line))
    return found - INTERNAL


def test_options():
    h = read("gpufeed.h")
    have = header_macros(h)
    top = h[:h.index("#ifndef GPUFEED_H")]
    listed = set(re.findall(r"\b(GPUFEED_[A-Z0-9_]+)", top[top.index("Options (define before"):]))
    t = read("tools/README.md")
    table = t[t.index("### Compile-time options"):t.index("### Run-time options")]
    rows = set()
    for cell in re.findall(r"^\| ([^|]*)\|", table, re.M):  # the macros of each row's first cell
        rows |= set(re.findall(r"`(GPUFEED_[A-Z0-9_]+)", cell))
    check("the header's options list has every macro it tests (%d)" % len(have), have <= listed, "missing: %s" % sorted(have - listed))
    check("the header's options list names no macro it lacks", listed <= have, "extra: %s" % sorted(listed - have))
    check("tools/README.md's options table has a row for every macro the header tests", have <= rows, "missing: %s" % sorted(have - rows))
    check("tools/README.md's options table names no macro the header lacks", rows <= have, "extra: %s" % sorted(rows - have))
    r = read("README.md")
    named = set(re.findall(r"`(GPUFEED_[A-Z0-9_]+)`", r[r.index("## Options"):r.index("## Performance")]))
    check("README.md's options section names only macros and values the header has",
          all(m in have or re.search(r"#define %s\b" % m, h) for m in named), sorted(m for m in named if m not in have))


def test_epochs():
    h = read("gpufeed.h")
    m = re.search(r"#define GPUFEED_EPOCHS_ENDLESS \((-?\d+)\)", h)
    check("gpufeed.h defines GPUFEED_EPOCHS_ENDLESS", m is not None)
    r = read("README.md")
    row = [l for l in r.splitlines() if l.startswith("| `gpufeed_loader_desc.epochs`")]
    check("README.md's options table has a row for gpufeed_loader_desc.epochs: default 1, GPUFEED_EPOCHS_ENDLESS",
          len(row) == 1 and "| 1 |" in row[0] and "GPUFEED_EPOCHS_ENDLESS" in row[0], str(row))
    t = read("tools/README.md")
    check("tools/README.md gives epochs' default (one) and GPUFEED_EPOCHS_ENDLESS",
          re.search(r"`epochs` \(1; `GPUFEED_EPOCHS_ENDLESS`", t) is not None)


def mutants():
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import mutation
    ms = mutation.MUTATIONS
    by = {}
    for m in ms:
        s = m["section"].split(":")[0]
        by[s] = by.get(s, 0) + 1
    return len(ms), sum(1 for m in ms if m["equivalent"]), by


def test_mutants():
    n, eq, by = mutants()
    for doc in ("README.md", "tests/README.md"):
        text = " ".join(read(doc).split())
        ns = [int(x) for x in re.findall(r"(\d+) one-token mutants", text)]
        eqs = [int(x) for x in re.findall(r"(\d+) (?:of them )?declared equivalent", text)]
        check("%s states the mutant count tests/mutation.py has (%d)" % (doc, n), ns and all(x == n for x in ns), str(ns))
        check("%s states how many are declared equivalent (%d)" % (doc, eq), eqs and all(x == eq for x in eqs), str(eqs))
        for got_n, caught in re.findall(r"(\d+) caught of (\d+)", text):
            check("%s: a score's mutant count is the current one (%s caught of %s)" % (doc, got_n, caught), int(caught) == n)
    text = " ".join(read("tests/README.md").split())
    m = re.search(r"by section: ((?:[a-z]+ \d+, )*[a-z]+ \d+)", text)
    stated = dict((k, int(v)) for k, v in re.findall(r"([a-z]+) (\d+)", m.group(1))) if m else {}
    check("tests/README.md's mutants by section are tests/mutation.py's", stated == by, "%s against %s" % (stated, by))


def test_sizes():
    for doc, cap in (("README.md", 300), ("tools/bench/README.md", 400)):
        n = read(doc).count("\n")
        check("%s is at most %d lines (%d)" % (doc, cap, n), n <= cap)


def commit_ids(words):
    """the words that name a commit of this repository (none without git)"""
    try:
        subprocess.run(["git", "rev-parse", "--git-dir"], cwd=ROOT, check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        return []
    hits = []
    for w in sorted(words):
        r = subprocess.run(["git", "rev-parse", "--verify", "--quiet", w + "^{commit}"], cwd=ROOT, capture_output=True)
        if r.returncode == 0:
            hits.append(w)
    return hits


def test_reference():
    for doc in DOCS:
        text = read(doc)
        words = set(w for w in re.findall(r"(?<![0-9a-fA-Fx])[0-9a-f]{7,40}(?![0-9a-fA-F])", text) if re.search(r"[a-f]", w) and re.search(r"\d", w))
        ids = commit_ids(words)
        check("%s names no commit (history is in CHANGELOG.md and git)" % doc, not ids, str(ids))
        low = " ".join(text.lower().split()).replace("aws_session_token", "")  # a credential's name, not history
        bad = [p for p in ("the build before", "session", "before the change", "after the change") if p in low]
        check("%s reads as reference, not a diary (%s)" % (doc, ", ".join(bad) or "no history words"), not bad)
    lines = read("CHANGELOG.md").splitlines()
    entries = [l for l in lines if l.startswith("- ")]
    dated = [re.match(r"- (\d{4}-\d{2}-\d{2}): \S", l) for l in entries]
    check("CHANGELOG.md: every entry is one line '- YYYY-MM-DD: ...' (%d)" % len(entries), entries and all(dated))
    dates = [d.group(1) for d in dated if d]
    check("CHANGELOG.md: newest first", dates == sorted(dates, reverse=True))
    other = [l for l in lines if l.strip() and not l.startswith(("- ", "#")) and "One line an entry" not in l]
    check("CHANGELOG.md: nothing but its title, one line of intro and the entries", not other, str(other[:3]))


def test_timings():
    text = " ".join(read("README.md").split())
    m = re.search(r"make check[^.]*?(\d+ min(?: \d+ s)?)[^.]*?(\d{4}-\d{2}-\d{2})", text)
    check("README.md states make check's measured time with its date", m is not None)
    d = re.search(r"make demo[^.]*?(\d+ s)", text)
    check("README.md states what make demo takes", d is not None)


def main():
    for t in (test_options, test_epochs, test_mutants, test_sizes, test_reference, test_timings):
        try:
            t()
        except Exception as e:  # a crash in one check is a failure, not the end
            check("%s raised %s" % (t.__name__, type(e).__name__), False, str(e))
    print("%d passed, %d failed" % (PASS, FAIL))
    return 1 if FAIL else 0


if __name__ == "__main__":
    sys.exit(main())
