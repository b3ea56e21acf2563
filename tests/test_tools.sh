#!/usr/bin/env bash
# Command-line behaviour of the tools (sanitizer builds from tests/run.sh:
# BIN=build/asan by default, tests/run.sh --quick gives its own).
set -u
cd "$(dirname "$0")/.."
BIN=${BIN:-build/asan}
CAT=$BIN/gpufeed-cat; INSPECT=$BIN/gpufeed-inspect
T=build/tools-test; rm -rf $T; mkdir -p $T
P=0; F=0; SK=0
ok()   { P=$((P + 1)); echo "PASS $1"; }
bad()  { F=$((F + 1)); echo "FAIL $1"; }
skip() { SK=$((SK + 1)); echo "SKIP $1"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }

D=tests/data/pyarrow_default.parquet
# --limit
$CAT --limit 3 $D > $T/l3.csv; check "limit 3 gives header + 3 rows" test "$(wc -l < $T/l3.csv)" -eq 4
check "limit rows equal the first rows" cmp -s $T/l3.csv <(head -4 tests/data/pyarrow_default.csv)
$CAT --limit 0 $D > $T/l0.csv; check "limit 0 gives the header only" test "$(wc -l < $T/l0.csv)" -eq 1
# --columns in the given order
hdr=$(head -1 tests/data/pyarrow_default.csv)
c1=$(echo "$hdr" | cut -d, -f1 | tr -d '"'); c2=$(echo "$hdr" | cut -d, -f2 | tr -d '"')
$CAT --columns "$c2,$c1" $D > $T/cols.csv
check "columns in the order given" test "$(head -1 $T/cols.csv)" = "\"$c2\",\"$c1\""
python3 - "$T/cols.csv" tests/data/pyarrow_default.csv "$c1" "$c2" <<'PY'; check "projected cells equal the full output's" test $? -eq 0
import csv, sys
got = list(csv.reader(open(sys.argv[1], newline='')))
full = list(csv.reader(open(sys.argv[2], newline='')))
i1, i2 = full[0].index(sys.argv[3]), full[0].index(sys.argv[4])
sys.exit(0 if [[r[i2], r[i1]] for r in full] == got else 1)
PY
# a struct name selects its leaves
S=tests/data/pyarrow_struct.parquet
if [ -f $S ]; then
  grp=$($INSPECT $S | sed -n 's/^    optional \([a-z_0-9]*\) (group.*/\1/p' | head -1)
  if [ -n "$grp" ]; then
    $CAT --columns "$grp" $S | head -1 > $T/grp.txt
    check "a group name selects its dotted leaves" grep -q "\"$grp\.[^\"]*\"" $T/grp.txt
  fi
fi
# errors: non-zero exit and one line naming the file and the problem
$CAT --columns no_such_column $D > /dev/null 2> $T/e1; rc=$?
check "missing column: exit 1" test $rc -eq 1
check "missing column: message names file and column" grep -q "pyarrow_default.parquet: no column 'no_such_column'" $T/e1
$CAT $T/does-not-exist.parquet > /dev/null 2> $T/e2; rc=$?
check "missing file: exit 1 naming the path" bash -c "[ $rc -eq 1 ] && grep -q 'does-not-exist.parquet: cannot open' $T/e2"
$CAT README.md > /dev/null 2> $T/e3; rc=$?
check "not Parquet: exit 1, message says so" bash -c "[ $rc -eq 1 ] && grep -q 'PAR1' $T/e3"
check "errors are one line" test "$(wc -l < $T/e3)" -eq 1
head -c 30000 $D > $T/trunc.parquet
$CAT $T/trunc.parquet > /dev/null 2> $T/e4; rc=$?
check "truncated file: exit 1 with a message" bash -c "[ $rc -eq 1 ] && grep -q 'trunc.parquet' $T/e4"
$CAT --limit x $D > /dev/null 2>&1; rc=$?
check "bad --limit: usage error" test $rc -eq 2
$CAT > /dev/null 2>&1; rc=$?
check "no file: usage error" test $rc -eq 2
$CAT --verify-crc tests/data/pyarrow_int96_crc.parquet > $T/crc.csv 2> $T/e5
check "--verify-crc reads a file with page CRCs" cmp -s $T/crc.csv tests/data/pyarrow_int96_crc.csv
# page CRC mismatch is caught with --verify-crc: flip a byte inside the body of the first page
$INSPECT --pages tests/data/pyarrow_int96_crc.parquet > $T/crcpages.txt
python3 - "$T" <<'PY'
import re, sys
m = re.search(r'page 0: \S+ +offset (\d+), header (\d+), compressed (\d+)', open(sys.argv[1] + '/crcpages.txt').read())
off, hdr, size = map(int, m.groups())
d = bytearray(open('tests/data/pyarrow_int96_crc.parquet', 'rb').read())
d[off + hdr + size // 2] ^= 0x40
open(sys.argv[1] + '/crcbad.parquet', 'wb').write(d)
PY
$CAT --verify-crc $T/crcbad.parquet > /dev/null 2> $T/e6; rc=$?
check "flipped page byte: --verify-crc fails naming the page" bash -c "[ $rc -eq 1 ] && grep -q 'page 0 (byte offset .*page CRC is' $T/e6"
# inspect
for f in tests/data/*.parquet examples/data/flights.parquet; do
  if $INSPECT "$f" > $T/inspect.txt 2>&1 && grep -q '^schema:' $T/inspect.txt; then ok "inspect $f"; else bad "inspect $f"; fi
done
$INSPECT --pages $D > $T/pages.txt 2>&1
check "inspect --pages lists pages" grep -q 'page 0:' $T/pages.txt
$INSPECT README.md > /dev/null 2> $T/e7; rc=$?
check "inspect on a non-Parquet file fails with a message" bash -c "[ $rc -eq 1 ] && grep -q README.md $T/e7"
# ---- gpufeed-cat: commands, -n, ISO-8601 / --raw, --json, FILE|DIR|GLOB ----
$CAT cat $D > $T/catword.csv; check "the word cat may be given" cmp -s $T/catword.csv tests/data/pyarrow_default.csv
$CAT head $D > $T/h.csv; $CAT --limit 5 $D > $T/l5.csv
check "head: the first 5 rows (--limit 5)" bash -c "cmp -s $T/h.csv $T/l5.csv && python3 -c 'import csv,sys; sys.exit(len(list(csv.reader(open(\"$T/h.csv\", newline=\"\")))) != 6)'"
$CAT head -n 2 $D > $T/h2.csv; check "head -n 2" cmp -s $T/h2.csv <(head -3 tests/data/pyarrow_default.csv)
$CAT -n 3 $D > $T/n3.csv; check "-n is --limit" cmp -s $T/n3.csv $T/l3.csv
cat > $T/iso.want <<'EOF2'
"date32","time32_ms","ts_ms_utc","ts_ns"
1970-01-01,00:00:00.000,1970-01-01T00:00:00.000Z,1970-01-01T00:00:00.000000000
1969-12-31,23:59:59.999,1969-12-31T23:59:59.000Z,1969-12-31T23:59:59.000000000
1970-01-02,12:40:42.713,1970-01-01T00:00:01.000Z,1970-01-01T00:00:01.000000000
EOF2
cat > $T/raw.want <<'EOF2'
"date32","time32_ms","ts_ms_utc","ts_ns"
0,0,0,0
-1,86399999,-1000,-1000000000
1,45642713,1000,1000000000
EOF2
$CAT head -n 3 --columns date32,time32_ms,ts_ms_utc,ts_ns $D > $T/iso.csv
check "ISO-8601 by default: DATE, TIME (ms), TIMESTAMP with Z when UTC, pre-1970" cmp -s $T/iso.csv $T/iso.want
$CAT head -n 3 --raw --columns date32,time32_ms,ts_ms_utc,ts_ns $D > $T/raw.csv
check "--raw: the stored integers" cmp -s $T/raw.csv $T/raw.want
$CAT head -n 2 --columns ts_s tests/data/pyarrow_int96_crc.parquet > $T/i96.csv
check "INT96: nanoseconds, no Z" test "$(sed -n 3p $T/i96.csv)" = "1969-12-31T23:59:59.000000000"
$CAT --json $D > $T/all.jsonl; rc=$?
python3 - $T/all.jsonl tests/data/pyarrow_default.csv <<'PY'; check "--json: one JSON object per row, keys the CSV header in order, ISO strings, nulls null" test $? -eq 0
import csv, json, sys
rows = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
full = list(csv.reader(open(sys.argv[2], newline="", encoding="utf-8")))
ok = len(rows) == len(full) - 1 and all(list(r) == full[0] for r in rows)
ok = ok and rows[1]["date32"] == "1969-12-31" and rows[2]["ts_ms_utc"] == "1970-01-01T00:00:01.000Z"
ok = ok and any(v is None for r in rows for v in r.values())
sys.exit(0 if ok else 1)
PY
$CAT --json --raw -n 2 --columns date32,ts_ns $D > $T/raw.jsonl
check "--json --raw: integers" test "$(sed -n 2p $T/raw.jsonl)" = '{"date32":-1,"ts_ns":-1000000000}'
$CAT --json -n 0 $D > $T/none.jsonl; check "--json -n 0: nothing" test ! -s $T/none.jsonl
mkdir -p $T/dir $T/emptydir
cp tests/data/pyarrow_heavy_nulls.parquet $T/dir/a.parquet; cp $D $T/dir/b.parquet; cp tests/data/ids.parquet $T/dir/.hidden.parquet
echo "not parquet" > $T/dir/notes.txt; echo "not parquet" > $T/emptydir/notes.txt
{ cat tests/data/pyarrow_heavy_nulls.csv; tail -n +2 tests/data/pyarrow_default.csv; } > $T/dir.want
$CAT $T/dir > $T/dir.csv; check "a directory: its *.parquet, sorted, one header (hidden and other files skipped)" cmp -s $T/dir.csv $T/dir.want
$CAT "$T/dir/*.parquet" > $T/glob.csv; check "a glob: its matches, sorted" cmp -s $T/glob.csv $T/dir.want
$CAT $T/dir/a.parquet $T/dir/b.parquet > $T/two.csv; check "two files: one after the other" cmp -s $T/two.csv $T/dir.want
$CAT --json $T/dir > $T/dir.jsonl; { $CAT --json $T/dir/a.parquet; $CAT --json $T/dir/b.parquet; } > $T/two.jsonl
check "--json over a directory: the files' lines one after another" cmp -s $T/dir.jsonl $T/two.jsonl
cp tests/data/ids.parquet $T/dir/c.parquet
$CAT $T/dir > $T/o8 2> $T/e8; rc=$?
check "a file with other columns: exit 1, naming it and the first file" bash -c "[ $rc -eq 1 ] && grep -q 'c.parquet: .*columns, but .*a.parquet has' $T/e8 && [ \$(wc -l < $T/e8) -eq 1 ]"
check "a file with other columns: every schema checked before a row is printed (no output)" test ! -s $T/o8
$CAT --json $T/dir > $T/o8 2> /dev/null; rc=$?
check "... also with --json" bash -c "[ $rc -eq 1 ] && [ ! -s $T/o8 ]"
cp tests/data/pyarrow_v2_snappy.parquet $T/dir/c.parquet
$CAT --columns dec9_2 $T/dir > $T/o9 2> $T/e9; rc=$?
check "a column of another type: exit 1, naming file, column and both types" bash -c "[ $rc -eq 1 ] && grep -q \"c.parquet: column 'dec9_2' is INT32 DECIMAL here, FIXED_LEN_BYTE_ARRAY DECIMAL in\" $T/e9"
check "... before a row is printed" test ! -s $T/o9
rm $T/dir/c.parquet
# errors: usage (2) and input (1), one line naming the problem
err_case() { # NAME RC PATTERN CMD...: exit status and a one-line message matching PATTERN
  local name=$1 want=$2 pat=$3; shift 3
  "$@" > /dev/null 2> $T/err; local rc=$?
  if [ $rc -eq "$want" ] && grep -q -- "$pat" $T/err && [ "$(wc -l < $T/err)" -eq 1 ] && ! grep -q 'Sanitizer\|runtime error' $T/err; then ok "$name"
  else bad "$name (exit $rc: $(head -c 200 $T/err))"; fi
}
err_case "cat: -n x is a usage error naming -n" 2 "-n needs a non-negative integer, got 'x'" $CAT -n x $D
err_case "cat: -n -1 is a usage error" 2 "-n needs a non-negative integer, got '-1'" $CAT -n -1 $D
err_case "cat: --limit without a value" 2 "--limit needs a value" $CAT $D --limit
err_case "cat: --columns without a value" 2 "--columns needs a value" $CAT $D --columns
err_case "cat: unknown option, named" 2 "unknown option '--bogus'" $CAT --bogus $D
err_case "cat: no PATH" 2 "no PATH given" $CAT --json
err_case "cat: a directory without *.parquet" 1 "gpufeed-cat: directory '$T/emptydir' holds no Parquet file" $CAT $T/emptydir
err_case "cat: a glob matching nothing" 1 "gpufeed-cat: glob '$T/nomatch-\*.parquet' matches no file" $CAT "$T/nomatch-*.parquet"
err_case "cat: a missing file among several stops there" 1 "does-not-exist.parquet: cannot open" $CAT $D $T/does-not-exist.parquet
err_case "cat: 'schema' points to gpufeed-inspect" 2 "'schema' is a gpufeed-inspect command" $CAT schema $D
err_case "cat: --json with a column twice (duplicate keys)" 1 "--json: column 'i32' is selected twice" $CAT --json --columns i32,i32 $D
err_case "cat: a missing column in the second file names that file" 1 "b.parquet: no column 'c1x'" $CAT --columns c1x $T/dir/b.parquet
$CAT --help > $T/help.txt; rc=$?
check "cat --help: exit 0, a line for each flag and command" bash -c "[ $rc -eq 0 ] && for f in ' cat ' ' head ' '-n, --limit N' '--columns' '--json' '--raw' '--verify-crc' '-h, --help'; do grep -q -- \"\$f\" $T/help.txt || exit 1; done"
# ---- gpufeed-inspect: meta (default), schema, rowcount ----
$INSPECT $D > $T/meta1.txt; $INSPECT meta $D > $T/meta2.txt
check "inspect: meta is the default" cmp -s $T/meta1.txt $T/meta2.txt
check "inspect meta: ISO-8601 statistics" grep -q '^  date32 .* 0001-01-01 .. 9999-12-31$' $T/meta1.txt
$INSPECT --raw $D > $T/metaraw.txt
check "inspect meta --raw: integer statistics" grep -q '^  date32 .* -719162 .. 2932896$' $T/metaraw.txt
$INSPECT $T/dir > $T/metadir.txt
check "inspect meta of a directory: one report per file, in order" test "$(grep '^file:' $T/metadir.txt | tr -s ' ' | cut -d' ' -f2 | tr '\n' ' ')" = "$T/dir/a.parquet $T/dir/b.parquet "
cat > $T/schema.want <<'EOF2'
message schema {
  required int32 row;
  optional group s {
    optional int32 a;
    optional binary b (STRING);
  }
  optional group outer {
    optional int64 k;
    optional group inner {
      optional double x;
      optional boolean y;
    }
  }
  required group req {
    required int64 id;
    required binary tag (STRING);
  }
}
EOF2
$INSPECT schema $S > $T/schema.txt; check "inspect schema: the message type, nested groups" cmp -s $T/schema.txt $T/schema.want
$INSPECT schema $T/dir > $T/schema2.txt; $INSPECT schema $D > $T/schema1.txt
check "inspect schema over files with one schema: printed once" cmp -s $T/schema2.txt $T/schema1.txt
$INSPECT schema $D $S > $T/schema3.txt
check "inspect schema over different schemas: each under ==> PATH <==" bash -c "[ \$(grep -c '^==> ' $T/schema3.txt) -eq 2 ] && grep -q '^==> $S <==' $T/schema3.txt"
check "inspect rowcount of a file" test "$($INSPECT rowcount $D)" = 200
check "inspect rowcount of a directory and of a glob: the sum" test "$($INSPECT rowcount $T/dir) $($INSPECT rowcount "$T/dir/*.parquet")" = "400 400"
err_case "inspect: a glob matching nothing" 1 "gpufeed-inspect: glob '$T/nomatch-\*' matches no file" $INSPECT rowcount "$T/nomatch-*"
err_case "inspect: a directory without *.parquet" 1 "holds no Parquet file" $INSPECT schema $T/emptydir
err_case "inspect: a missing file" 1 "does-not-exist.parquet: cannot open" $INSPECT rowcount $D $T/does-not-exist.parquet
err_case "inspect: --pages outside meta" 2 "--pages applies to meta, not schema" $INSPECT schema --pages $D
err_case "inspect: unknown option" 2 "unknown option '-x'" $INSPECT -x $D
err_case "inspect: no PATH" 2 "no PATH given" $INSPECT rowcount
err_case "inspect: 'head' points to gpufeed-cat" 2 "'head' is a gpufeed-cat command" $INSPECT head $D
$INSPECT --help > $T/ihelp.txt; rc=$?
check "inspect --help: exit 0, a line for each command and flag" bash -c "[ $rc -eq 0 ] && for f in ' meta ' ' schema ' ' rowcount ' '--pages' '--raw' '--json' '-h, --help'; do grep -q -- \"\$f\" $T/ihelp.txt || exit 1; done"
# inspect --json: JSON Lines (a line a file) that say what the text report says
$INSPECT --json examples/data/flights.parquet tests/data/pyarrow_int96_crc.parquet > $T/meta.jsonl; rc1=$?
$INSPECT --json --pages --raw examples/data/flights.parquet > $T/meta_pages.jsonl; rc2=$?
$INSPECT rowcount --json examples/data/flights.parquet tests/data/pyarrow_int96_crc.parquet > $T/rc.json; rc3=$?
$INSPECT schema --json examples/data/flights.parquet > $T/schema.jsonl; rc4=$?
python3 - $T "$($INSPECT rowcount examples/data/flights.parquet tests/data/pyarrow_int96_crc.parquet)" <<'PY'; check "inspect --json (meta, --pages --raw, schema, rowcount): valid JSON Lines agreeing with the text report and the file" test $? -eq 0 -a $rc1 -eq 0 -a $rc2 -eq 0 -a $rc3 -eq 0 -a $rc4 -eq 0
import json, sys
T, rows_text = sys.argv[1], int(sys.argv[2])
ok = True
def want(c, what):
    global ok
    if not c:
        ok = False
        print("FAIL", what)
lines = [json.loads(l) for l in open(T + "/meta.jsonl")]
want(len(lines) == 2 and lines[0]["file"] == "examples/data/flights.parquet", "one object a file, in order")
fl = lines[0]
want(fl["num_rows"] == 336776 and fl["num_columns"] == 19 and len(fl["row_groups"]) == 6, "flights: rows, columns, row groups")
want(sum(g["num_rows"] for g in fl["row_groups"]) == fl["num_rows"], "row groups add up to the rows")
leaves = [n for n in fl["schema"] if n["physical"] is not None]
want([n["column"] for n in leaves] == list(range(19)), "schema leaves are columns 0..18")
for g in fl["row_groups"]:
    want([c["path"] for c in g["columns"]] == [n["name"] for n in leaves], "chunk paths follow the schema")
    dd = g["columns"][5]
    want(dd["path"] == "dep_delay" and isinstance(dd["min"], (int, float)) and dd["min"] <= dd["max"] and dd["values"] == g["num_rows"], "dep_delay's statistics are numbers")
    want(isinstance(g["columns"][9]["min"], str) and len(g["columns"][9]["min"]) == 2, "carrier's statistics are text")
    want(g["columns"][18]["min"].startswith("2013-") and g["columns"][18]["min"].endswith("Z"), "time_hour's statistics are ISO-8601 (UTC)")
want(min(g["columns"][5]["min"] for g in fl["row_groups"]) == -43 and max(g["columns"][5]["max"] for g in fl["row_groups"]) == 1301, "dep_delay -43 .. 1301")
pg = json.loads(open(T + "/meta_pages.jsonl").read())
for g in pg["row_groups"]:
    for c in g["columns"]:
        want(len(c["pages"]) == c["num_pages"], "--pages: num_pages pages (%s)" % c["path"])
        want(sum(p["values"] for p in c["pages"] if p["type"] != "DICTIONARY_PAGE") == c["values"], "the data pages' values add up (%s)" % c["path"])
want(isinstance(pg["row_groups"][0]["columns"][18]["min"], int), "--raw: time_hour's statistics as integers")
rc = json.loads(open(T + "/rc.json").read())
want(rc == {"rows": rows_text, "files": 2}, "rowcount --json equals rowcount")
sc = json.loads(open(T + "/schema.jsonl").read())
want(sc["schema"] == fl["schema"], "schema --json equals meta's schema")
sys.exit(0 if ok else 1)
PY
# the checks against pyarrow (ISO edges, JSON over ill-formed UTF-8, schema trees, rowcounts)
if [ -x .venv/bin/python ]; then
  .venv/bin/python tests/test_cli.py --cat $CAT --inspect $INSPECT > $T/cli.log 2>&1
  grep -E '^(PASS|FAIL) ' $T/cli.log
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' $T/cli.log | tail -1)
  if [ -n "$line" ]; then P=$((P + ${line%% passed*})); f=${line##*passed, }; F=$((F + ${f%% failed*})); else bad "tests/test_cli.py ended without a count"; tail -5 $T/cli.log; fi
else
  skip "tests/test_cli.py (the checks against pyarrow): no .venv (make venv)"
fi
# gpufeed-dense's `valid`: the masks of the features that ask for one, rows x those features, 1 a value, 0 a null
DENSE=$BIN/gpufeed-dense; FL=examples/data/flights.parquet
$DENSE -o $T/v.bin --feature arr_delay:f32:valid:fill=-7 --feature distance:f64 --feature dep_time:i32:valid $FL > /dev/null 2> $T/v.err; rc=$?
check "dense :valid: exit 0, the masks' file named (default OUT.bin.valid)" bash -c "[ $rc -eq 0 ] && grep -q 'validity masks of 2 features: $T/v.bin.valid' $T/v.err"
check "dense :valid: the masks' size is rows x 2 bytes" test "$(stat -c %s $T/v.bin.valid 2>/dev/null || echo 0)" -eq $((2 * $(stat -c %s $T/v.bin) / 16))
$DENSE -o $T/v2.bin --valid-out $T/masks --feature dep_time:i32:valid $FL > /dev/null 2>&1
check "dense --valid-out PATH: the same mask there" bash -c "cmp -s $T/masks <(python3 -c 'import sys; d = open(sys.argv[1], \"rb\").read(); sys.stdout.buffer.write(d[1::2])' $T/v.bin.valid)"
$DENSE -o - --feature dep_time:i32:valid $FL > /dev/null 2> $T/v3.err; rc=$?
check "dense -o - with valid and no --valid-out: a usage error naming --valid-out" bash -c "[ $rc -eq 2 ] && grep -q -- '--valid-out PATH' $T/v3.err"
$DENSE -o $T/v4.bin --valid-out $T/m4 --feature dep_time:i32 $FL > /dev/null 2> $T/v4.err; rc=$?
check "dense --valid-out without a valid feature: a usage error" bash -c "[ $rc -eq 2 ] && grep -q 'no feature has the .valid. option' $T/v4.err"
if [ -x .venv/bin/python ]; then
  .venv/bin/python - $T $FL <<'PY'; check "dense :valid masks and fills equal pyarrow's nulls (arr_delay, dep_time)" test $? -eq 0
import sys, numpy as np, pyarrow.parquet as pq
T, fl = sys.argv[1], sys.argv[2]
t = pq.read_table(fl, columns=["arr_delay", "dep_time", "distance"])
rows = np.fromfile(T + "/v.bin", dtype=np.uint8).reshape(-1, 16)
masks = np.fromfile(T + "/v.bin.valid", dtype=np.uint8).reshape(-1, 2)
arr = rows[:, 0:4].copy().view(np.float32)[:, 0]
dep = rows[:, 12:16].copy().view(np.int32)[:, 0]
ok = len(masks) == t.num_rows
for k, (name, got) in enumerate((("arr_delay", arr), ("dep_time", dep))):
    valid = np.asarray(t.column(name).is_valid())
    ok &= bool(np.array_equal(masks[:, k], valid.astype(np.uint8))) and 0 < valid.sum() < len(valid)
    ref = t.column(name).to_numpy(zero_copy_only=False)
    ok &= bool(np.array_equal(got[valid], ref[valid].astype(got.dtype)))
ok &= bool((arr[masks[:, 0] == 0] == -7).all() and (dep[masks[:, 1] == 0] == 0).all())
print("rows", t.num_rows, "nulls", int((masks == 0).sum(axis=0)[0]), int((masks == 0).sum(axis=0)[1]), "ok", ok)
sys.exit(0 if ok else 1)
PY
else
  skip "dense :valid against pyarrow's nulls: no .venv (make venv)"
fi
# the README's complete C programs (every ```c block with a main), extracted
# byte for byte and compiled as a user would: no line added
python3 - "$T" <<'PY'
import re, sys
s = open('README.md').read()
progs = [b for b in re.findall(r"```c\n(.*?)```", s, re.S) if "int main" in b]
for i, b in enumerate(progs):
    open('%s/readme_%d.c' % (sys.argv[1], i), 'w').write(b)
print(len(progs))
PY
check "README.md holds at least two complete C programs" bash -c "ls $T/readme_*.c | wc -l | grep -qE '^[2-9]'"
check "README.md is at most 300 lines" bash -c "[ \$(wc -l < README.md) -le 300 ]"
for src in $T/readme_*.c; do
  exe=${src%.c}
  # README_OPT: -O2 as the README says (the quick suite gives -O0: the -O2 build of the same code is make tools')
  if cc -std=c99 -Wall -Wextra -Werror -pedantic ${README_OPT:--O2} -I. "$src" -o "$exe" -lpthread -lm -ldl 2> "$exe.err"; then
    ok "README program $(basename "$src") compiles as written"
  else
    bad "README program $(basename "$src") compiles as written"; cat "$exe.err"; continue
  fi
  if grep -q "gpufeed_loader_open_mixture" "$src"; then
    # a 3:1 mixture of packed rows: sequences.parquet has 2,010 rows of 128 tokens, 12 of each 16-row batch: 167 batches
    check "README token program runs as written (167 batches of 16 rows)" \
      test "$("$exe")" = "2672 rows of 128 tokens, 5317 documents started, token sum 43519596"
  elif grep -q "gpufeed_uploader_next" "$src"; then
    # the trainer: 2 epochs of flights, sums independent of workers, of the cache and of the GPU
    want="673552 rows, dep_delay sum 8304400, carrier id sum 443879646"
    check "README trainer runs as written" test "$("$exe" 2> $T/trainer.err)" = "$want"
    if [ -z "$(ldconfig -p 2> /dev/null | grep 'libcuda.so.1 ')" ]; then
      check "README trainer without a CUDA driver: host batches (0 on the GPU)" grep -qx "0 batches on the GPU" $T/trainer.err
    fi
    # the same program where a driver is installed: the emulated one (tests/cuda_emu.c), found as libcuda.so.1
    if [ -f "${EMU_DRIVER_DIR:-build/emu}/libcuda.so.1" ]; then
      check "README trainer with a (emulated) CUDA driver: the same sums" \
        test "$(LD_LIBRARY_PATH=${EMU_DRIVER_DIR:-build/emu} "$exe" 2> $T/trainer_gpu.err)" = "$want"
      check "... every batch on the GPU (166)" grep -qx "166 batches on the GPU" $T/trainer_gpu.err
    else
      skip "README trainer with an emulated CUDA driver: ${EMU_DRIVER_DIR:-build/emu}/libcuda.so.1 is not built"
    fi
    rm -rf $T/readme_cache
    check "README trainer with a cache directory (builds it)" test "$("$exe" examples/data/flights.parquet $T/readme_cache)" = "$want"
    check "README trainer served from the cache: the same sums" test "$("$exe" examples/data/flights.parquet $T/readme_cache)" = "$want"
    # a decode error mid-epoch: the loop stops, the trainer prints the loader's error and exits 1
    # 64 bytes in the middle of row group 0's dep_delay data page (its place from gpufeed-inspect --pages)
    at=$($INSPECT --pages examples/data/flights.parquet | awk '/^  dep_delay / { c = 1; next } c && /DATA_PAGE/ {
      gsub(/,/, ""); for (i = 1; i <= NF; i++) { if ($i == "offset") o = $(i + 1); if ($i == "header") h = $(i + 1); if ($i == "compressed") z = $(i + 1) }
      print o + h + int(z / 2); exit }')
    python3 -c "
d = bytearray(open('examples/data/flights.parquet', 'rb').read())
d[$at:$at + 64] = b'\xff' * 64
open('$T/readme_bad.parquet', 'wb').write(d)"
    "$exe" $T/readme_bad.parquet > $T/readme_bad.out 2> $T/readme_bad.err; rc=$?
    check "README trainer on a damaged file: exit 1, the loader's error names file, column and page" \
      bash -c "[ $rc -eq 1 ] && grep -q \"^loader: .*readme_bad.parquet: row group 0, column 'dep_delay', page 1\" $T/readme_bad.err"
  else
    bad "README program $(basename "$src"): the test does not know what it should print"
  fi
done
# examples/read_column.c (the column reader, page by page): pyarrow.compute.sum(read_table(flights)['dep_delay']) == 4152200
if cc -std=c99 -Wall -Wextra -Werror -pedantic ${README_OPT:--O2} -I. examples/read_column.c -o $T/read_column -lpthread -lm 2> $T/read_column.err; then
  check "examples/read_column.c runs and matches pyarrow" test "$($T/read_column)" = "sum of dep_delay: 4152200"
else
  bad "examples/read_column.c compiles with its own command"; cat $T/read_column.err
fi
# positioned reads (gpufeed-dense --pread, GPUFEED_OPEN_PREAD) give the same bytes as the default mapping
for f in tests/data/pyarrow_default.parquet tests/data/pyarrow_v2_snappy.parquet tests/data/ids.parquet examples/data/flights.parquet; do
  $BIN/gpufeed-dense --pread --unsafe-cast -o $T/pread.bin "$f" 2> $T/pread.err; rc1=$?
  $BIN/gpufeed-dense --unsafe-cast -o $T/mmap.bin "$f" 2> $T/mmap.err; rc2=$?
  check "--pread equals the mapping: $f" bash -c "[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && cmp -s $T/pread.bin $T/mmap.bin"
done
# hostile files (the committed fuzz findings and seeds) through every tool's error paths: exit 0 or 1, never a
# sanitizer's report (a leak, as gpufeed-cat's abandoned row group once leaked its columns, ends LeakSanitizer's
# way: another exit status and a report on stderr)
hostile=0; hostile_bad=""
for f in tests/fuzz/*.parquet; do
  for c in "gpufeed-cat $f" "gpufeed-cat --json --limit 50 $f" "gpufeed-inspect --pages $f" "gpufeed-dense -o $T/h.bin $f" \
           "gpufeed-bench --batch 100 --epochs 2 --workers 2 $f" "gpufeed-bench --batch 100 --epochs 2 --cache $T/hcache $f" \
           "gpufeed-cache build --cache $T/hcache $f" "gpufeed-cache verify --cache $T/hcache $f"; do
    [ -x "$BIN/${c%% *}" ] || continue
    # shellcheck disable=SC2086
    $BIN/$c > /dev/null 2> $T/hostile.err; rc=$?
    hostile=$((hostile + 1))
    if [ $rc -gt 1 ] || grep -qE 'Sanitizer|runtime error' $T/hostile.err; then hostile_bad="$hostile_bad; $c: exit $rc $(grep -m1 -E 'Sanitizer|runtime error' $T/hostile.err)"; fi
  done
done
check "every tool over tests/fuzz/*.parquet ($hostile runs): exit 0 or 1, no leak or other sanitizer report$hostile_bad" test -z "$hostile_bad"
if [ -f tests/fuzz/seed_truncated_page.parquet ]; then
  $CAT tests/fuzz/seed_truncated_page.parquet > /dev/null 2> $T/trp.err; rc=$?
  check "gpufeed-cat on a file whose row group it abandons: exit 1 naming the file, its columns closed" \
    bash -c "[ $rc -eq 1 ] && grep -q seed_truncated_page.parquet $T/trp.err && ! grep -q Sanitizer $T/trp.err"
fi
# what the five tools share: --help, --version, errors naming flags, PATHs, -o -, progress, the workers warning
BIN=$BIN bash tests/test_tool_flags.sh > $T/flags.log 2>&1
grep -E '^(PASS|FAIL|SKIP) ' $T/flags.log
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' $T/flags.log | tail -1)
if [ -n "$line" ]; then
  P=$((P + $(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')))
  F=$((F + $(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')))
  sk=$(echo "$line" | sed -nE 's/.* ([0-9]+) skipped.*/\1/p'); SK=$((SK + ${sk:-0}))
else bad "tests/test_tool_flags.sh ended without a count"; tail -5 $T/flags.log; fi
echo "$P passed, $F failed, $SK skipped"
[ $F -eq 0 ]
