#!/usr/bin/env bash
# Command-line behaviour of the tools (sanitizer builds from tests/run.sh).
set -u
cd "$(dirname "$0")/.."
CAT=build/asan/gpufeed-cat; INSPECT=build/asan/gpufeed-inspect
T=build/tools-test; rm -rf $T; mkdir -p $T
P=0; F=0
ok()   { P=$((P + 1)); echo "PASS $1"; }
bad()  { F=$((F + 1)); echo "FAIL $1"; }
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
# the README's drop-in example compiles as written and gives pyarrow's answer
# (pyarrow.compute.sum(read_table(flights)['dep_delay']) == 4152200)
python3 - <<'PY' > $T/readme_example.c
import re
s = open('README.md').read()
print('#define GPUFEED_IMPLEMENTATION')
print([b for b in re.findall(r"```c\n(.*?)```", s, re.S) if "int main" in b][0])
PY
if cc -std=c99 -Wall -Wextra -Werror -pedantic -O2 -I. $T/readme_example.c -o $T/readme_example 2> $T/readme.err; then
  check "README example runs and matches pyarrow" test "$($T/readme_example)" = "sum of dep_delay: 4152200"
else
  bad "README example compiles"; cat $T/readme.err
fi
# GPUFEED_OPEN_MMAP (gpufeed-dense --mmap) reads the same bytes as positioned reads
for f in tests/data/pyarrow_default.parquet tests/data/pyarrow_v2_snappy.parquet tests/data/ids.parquet examples/data/flights.parquet; do
  build/asan/gpufeed-dense -o $T/pread.bin "$f" 2> $T/pread.err; rc1=$?
  build/asan/gpufeed-dense --mmap -o $T/mmap.bin "$f" 2> $T/mmap.err; rc2=$?
  check "--mmap equals positioned reads: $f" bash -c "[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && cmp -s $T/pread.bin $T/mmap.bin"
done
echo "$P passed, $F failed"
[ $F -eq 0 ]
