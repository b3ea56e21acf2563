#!/usr/bin/env bash
# What the five tools share (tools/gf_cli.h): -h/--help with a line per flag
# and exit 0, --version, FILE|DIR|GLOB arguments, -o - as stdout, errors that
# name the flag (a missing one, an unknown one, a bad value: exit 2), library
# messages in flag words, the progress line (one final line on a pipe, `\r`
# on a terminal) and the warning for more threads than 4 x the cores.
#
#   bash tests/test_tool_flags.sh      (BIN=build/asan by default; tests/run.sh
#                                       builds the tools there; run by test_tools.sh)
# Last line: "N passed, N failed, N skipped". No Python needed.
set -u
cd "$(dirname "$0")/.."
BIN=${BIN:-build/asan}
T=build/tool-flags-test; rm -rf $T; mkdir -p $T
P=0; F=0; S=0
ok()   { P=$((P + 1)); echo "PASS $1"; }
bad()  { F=$((F + 1)); echo "FAIL $1"; }
skip() { S=$((S + 1)); echo "SKIP $1"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }

TOOLS="gpufeed-cat gpufeed-inspect gpufeed-dense gpufeed-bench gpufeed-cache"
for t in $TOOLS; do
  if [ ! -x $BIN/$t ]; then echo "FAIL $BIN/$t is not built (tests/run.sh builds it)"; echo "0 passed, 1 failed, 0 skipped"; exit 1; fi
done
ver() { sed -n "s/^#define GPUFEED_VERSION_$1 \([0-9]*\)$/\1/p" gpufeed.h; }
VERSION="$(ver MAJOR).$(ver MINOR).$(ver PATCH)"
D=tests/data/pyarrow_default.parquet
IDS=tests/data/ids.parquet
# one_line NAME WANT_RC PATTERN CMD...: exit WANT_RC and one line on stderr matching PATTERN (grep -E)
one_line() {
  local name=$1 want=$2 pat=$3; shift 3
  "$@" > $T/out 2> $T/err; local rc=$?
  if [ $rc -eq "$want" ] && grep -qE -- "$pat" $T/err && [ "$(wc -l < $T/err)" -eq 1 ] && ! grep -q 'Sanitizer\|runtime error' $T/err; then ok "$name"
  else bad "$name (exit $rc: $(head -c 300 $T/err))"; fi
}

# ---- --help, -h, --version: every tool, exit 0, a line per flag ---------------
for t in $TOOLS; do
  $BIN/$t --help > $T/help.$t 2> $T/help.err; rc=$?
  check "$t --help: exit 0, usage on stdout, nothing on stderr" bash -c "[ $rc -eq 0 ] && head -1 $T/help.$t | grep -q '^usage: $t ' && [ ! -s $T/help.err ]"
  $BIN/$t -h > $T/h.$t 2>&1; rc=$?
  check "$t -h: exit 0, the same text as --help" bash -c "[ $rc -eq 0 ] && cmp -s $T/h.$t $T/help.$t"
  # every flag the tool declares (the table in tools/$t.c), -h and --version:
  # a line of its own that starts with it and says something
  missing=""
  for f in $(grep -oE '\.name = "-[^"]*"' tools/$t.c | sed 's/.*"\(.*\)"/\1/') -h --version; do
    # its line: "  [-x, ]FLAG [VALUE]  text", or the text on the next line, indented
    awk -v f="$f" '
      found && !done { if (match($0, /^ +[^ ]/) && RLENGTH > 20) desc = 1; done = 1 }
      !found && /^  -/ {
        l = $0; sub(/^ +/, "", l); a = l; sub(/^-[A-Za-z], /, "", a)
        split(a, w, " "); split(l, w0, /,? /)
        if (w[1] == f || w0[1] == f) { found = 1; if (l ~ /[^ ]   *[^ ]/) { desc = 1; done = 1 } }
      }
      END { exit !(found && desc) }' $T/help.$t || missing="$missing $f"
  done
  nflags=$(grep -cE '\.name = "-' tools/$t.c)
  check "$t --help: a line with a description for each of its $nflags flags, -h and --version${missing:+ (missing:$missing)}" test -z "$missing"
  $BIN/$t --version > $T/ver 2> $T/ver.err; rc=$?
  check "$t --version: '$t $VERSION' (gpufeed.h's version), exit 0" bash -c "[ $rc -eq 0 ] && [ \"\$(cat $T/ver)\" = '$t $VERSION' ] && [ ! -s $T/ver.err ]"
done

# ---- usage errors: exit 2, one line naming the flag ---------------------------
for t in $TOOLS; do
  args=(); [ $t = gpufeed-cache ] && args=(info --cache $T/c)
  one_line "$t: an unknown flag is named (exit 2)" 2 "^$t: unknown option '--frobnicate'" $BIN/$t "${args[@]}" --frobnicate $D
done
one_line "gpufeed-bench: a flag one typo away is suggested" 2 "unknown option '--wrokers' \(did you mean --workers\?" $BIN/gpufeed-bench $IDS --batch 5 --wrokers 2
one_line "gpufeed-bench: a missing --batch is named (exit 2)" 2 "^gpufeed-bench: --batch is required" $BIN/gpufeed-bench $IDS
one_line "gpufeed-dense: a missing -o is named (exit 2)" 2 "^gpufeed-dense: -o is required" $BIN/gpufeed-dense $D
one_line "gpufeed-cache build: a missing --cache is named (exit 2)" 2 "^gpufeed-cache: --cache is required" $BIN/gpufeed-cache build $D
one_line "gpufeed-cache: no command (exit 2)" 2 "^gpufeed-cache: no command given" $BIN/gpufeed-cache
for t in gpufeed-cat gpufeed-inspect gpufeed-dense gpufeed-bench; do
  args=(); case $t in gpufeed-dense) args=(-o $T/x.bin) ;; gpufeed-bench) args=(--batch 5) ;; esac
  one_line "$t: no PATH is named (exit 2)" 2 "^$t: no PATH given" $BIN/$t "${args[@]}"
done
one_line "gpufeed-cache build: no PATH is named (exit 2)" 2 "^gpufeed-cache: no PATH given" $BIN/gpufeed-cache build --cache $T/c
one_line "gpufeed-bench: a bad value names the flag (--batch x)" 2 "^gpufeed-bench: --batch needs a positive integer, got 'x'$" $BIN/gpufeed-bench $IDS --batch x
one_line "gpufeed-bench: --batch=0 (the = form) names the flag" 2 "^gpufeed-bench: --batch needs a positive integer, got '0'$" $BIN/gpufeed-bench $IDS --batch=0
one_line "gpufeed-bench: --workers beyond the limit names the range" 2 "^gpufeed-bench: --workers needs an integer in \[1, [0-9]+\], got '100000'$" $BIN/gpufeed-bench $IDS --batch 5 --workers 100000
one_line "gpufeed-bench: --even names its words" 2 "^gpufeed-bench: --even needs drop, pad or drop-any, got 'up'$" $BIN/gpufeed-bench $IDS --batch 5 --even up
one_line "gpufeed-bench: a value missing at the end" 2 "^gpufeed-bench: --seed needs a value" $BIN/gpufeed-bench $IDS --batch 5 --seed
one_line "gpufeed-dense: a bad value names the flag (--hash x)" 2 "^gpufeed-dense: --hash needs a positive integer, got 'x'$" $BIN/gpufeed-dense --hash x -o $T/x.bin $D
one_line "gpufeed-dense: --ragged names its words" 2 "^gpufeed-dense: --ragged needs error, pad or truncate, got 'x'$" $BIN/gpufeed-dense --ragged x -o $T/x.bin $D
one_line "gpufeed-dense: --dtype names the dtypes" 2 "^gpufeed-dense: --dtype needs f32, f64, f16, bf16, i32, i64 or u8 \(or float32, float64, float16, bfloat16, int32, int64, uint8\), got 'f8'$" $BIN/gpufeed-dense --dtype f8 -o $T/x.bin $D
# numpy dtype names, in --dtype and in --feature: the same bytes as the short names
FL=examples/data/flights.parquet
for pair in f32:float32 f64:float64 f16:float16 bf16:bfloat16 i32:int32 i64:int64 u8:uint8; do
  s=${pair%%:*}; n=${pair#*:}
  $BIN/gpufeed-dense --columns month,day --dtype $s -o $T/short.bin $FL 2> /dev/null; r1=$?
  $BIN/gpufeed-dense --columns month,day --dtype $n -o $T/numpy.bin $FL 2> /dev/null; r2=$?
  $BIN/gpufeed-dense --feature month:$n --feature day:$n -o $T/feat.bin $FL 2> /dev/null; r3=$?
  check "--dtype $n and --feature COL:$n equal --dtype $s" bash -c "[ $r1 -eq 0 ] && [ $r2 -eq 0 ] && [ $r3 -eq 0 ] && [ -s $T/short.bin ] && cmp -s $T/short.bin $T/numpy.bin && cmp -s $T/short.bin $T/feat.bin"
done
one_line "--feature a:float32 is column 'a' with dtype f32 (not a column named 'a:float32')" 1 "no column 'nosuch'|'nosuch'" $BIN/gpufeed-dense --feature nosuch:float32 -o $T/x.bin $FL
one_line "--feature COL:float31 names the dtypes it takes" 2 "'float31' is neither a dtype \(f32, .*float32" $BIN/gpufeed-dense --feature month:float31:valid -o $T/x.bin $FL
one_line "gpufeed-dense: a flag without a value takes none (--pread=1)" 2 "^gpufeed-dense: --pread takes no value$" $BIN/gpufeed-dense --pread=1 -o $T/x.bin $D
one_line "gpufeed-cache: a bad value names the flag (--workers 0)" 2 "^gpufeed-cache: --workers needs an integer in \[1, [0-9]+\], got '0'$" $BIN/gpufeed-cache build --cache $T/c --workers 0 $D
one_line "gpufeed-cache: a bad size names the flag (--max-bytes 12Q)" 2 "^gpufeed-cache: --max-bytes needs a positive size" $BIN/gpufeed-cache prune $T --max-bytes 12Q
one_line "gpufeed-cache: a flag that does not apply to the command" 2 "^gpufeed-cache: --feature does not apply to ls$" $BIN/gpufeed-cache ls $T --feature x:f32
one_line "gpufeed-cat: a bad value names the flag as typed (-n x)" 2 "^gpufeed-cat: -n needs a non-negative integer, got 'x'$" $BIN/gpufeed-cat -n x $D
$BIN/gpufeed-cat -n2 $D > $T/n2.csv; $BIN/gpufeed-cat --limit=2 $D > $T/l2.csv; $BIN/gpufeed-cat -n 2 $D > $T/n_2.csv
check "gpufeed-cat: -n2, --limit=2 and -n 2 are one thing" bash -c "cmp -s $T/n2.csv $T/n_2.csv && cmp -s $T/l2.csv $T/n_2.csv && [ \$(wc -l < $T/n2.csv) -eq 3 ]"
mkdir -p $T/dash; cp $IDS $T/dash/-x.parquet
$BIN/gpufeed-inspect rowcount -- $T/dash/-x.parquet > $T/dd.out 2>&1
check "--: what follows is a PATH, even with a leading -" test "$(cat $T/dd.out)" = 20000

# ---- library messages in flag words (exit 1: the data) ------------------------
one_line "gpufeed-dense: a string column without hashing names --hash, not hash_buckets" 1 "feature 'str': .*give --hash N" $BIN/gpufeed-dense --columns str -o $T/x.bin $D
check "gpufeed-dense: ... and no C field names" bash -c "! grep -qE 'hash_buckets|batch_rows|unit_rows' $T/err"
one_line "gpufeed-bench: with --feature the hint is hash=N" 1 "hash it with --feature COLUMN:i32:hash=N" $BIN/gpufeed-bench $D --batch 5 --feature str:f32
one_line "gpufeed-bench: too many ranks for the units: use a smaller --unit-rows" 1 "cannot be shared by 9999 ranks \(use smaller --unit-rows\)$" $BIN/gpufeed-bench $IDS --batch 5 --world 9999
$BIN/gpufeed-bench $IDS --batch 512 --workers 2 --epochs 2 > /dev/null 2> $T/verdict.err
check "gpufeed-bench: no C field names in the summary and the verdict" bash -c "grep -q '^verdict: ' $T/verdict.err && ! grep -qE 'ring_depth|shuffle_window|batch_rows|unit_rows|GPUFEED_' $T/verdict.err"
$BIN/gpufeed-bench $IDS --batch 512 --workers 6 --unit-rows 700 --jitter-us 300 --epochs 2 > /dev/null 2>> $T/verdict.err
check "gpufeed-bench: no busy or wait figure above 100% (two runs' summaries)" bash -c "[ \$(grep -c '^verdict: ' $T/verdict.err) -eq 2 ] && ! grep -oE '[0-9.]+%' $T/verdict.err | tr -d % | awk '\$1 > 100 { bad = 1 } END { exit !bad }'"

# ---- FILE|DIR|GLOB everywhere, and the same no-match errors ---------------------
mkdir -p $T/dir $T/empty; cp $IDS $T/dir/a.parquet; cp $IDS $T/dir/b.parquet; echo x > $T/empty/notes.txt
$BIN/gpufeed-dense -o $T/files.bin $T/dir/a.parquet $T/dir/b.parquet 2> /dev/null
$BIN/gpufeed-dense -o $T/dirarg.bin $T/dir 2> /dev/null
$BIN/gpufeed-dense -o $T/glob.bin "$T/dir/*.parquet" 2> /dev/null
check "gpufeed-dense: a DIR and a GLOB give the bytes of the files they name" bash -c "[ -s $T/files.bin ] && cmp -s $T/files.bin $T/dirarg.bin && cmp -s $T/files.bin $T/glob.bin"
$BIN/gpufeed-bench $T/dir/a.parquet $T/dir/b.parquet --batch 1000 --seed 3 --shuffle-window 2 --print-batches > $T/bench.files 2> /dev/null
$BIN/gpufeed-bench $T/dir --batch 1000 --seed 3 --shuffle-window 2 --print-batches > $T/bench.dir 2> /dev/null
$BIN/gpufeed-bench "$T/dir/*.parquet" --batch 1000 --seed 3 --shuffle-window 2 --print-batches > $T/bench.glob 2> /dev/null
check "gpufeed-bench: a DIR and a GLOB give the batches of the files" bash -c "[ \$(wc -l < $T/bench.files) -eq 40 ] && cmp -s $T/bench.files $T/bench.dir && cmp -s $T/bench.files $T/bench.glob"
k1=$($BIN/gpufeed-cache info --cache $T/c $T/dir/a.parquet $T/dir/b.parquet 2>/dev/null | sed -n 's/^key: *//p')
k2=$($BIN/gpufeed-cache info --cache $T/c $T/dir 2>/dev/null | sed -n 's/^key: *//p')
k3=$($BIN/gpufeed-cache info --cache $T/c "$T/dir/*.parquet" 2>/dev/null | sed -n 's/^key: *//p')
check "gpufeed-cache: the files, their DIR and a GLOB are one dataset (one cache key)" bash -c "[ -n '$k1' ] && [ '$k1' = '$k2' ] && [ '$k1' = '$k3' ]"
for t in gpufeed-cat gpufeed-inspect gpufeed-dense gpufeed-bench gpufeed-cache; do
  args=(); case $t in gpufeed-dense) args=(-o $T/x.bin) ;; gpufeed-bench) args=(--batch 5) ;; gpufeed-cache) args=(info --cache $T/c) ;; esac
  one_line "$t: a glob matching nothing: exit 1, the message cat gives" 1 "^$t: glob '$T/nomatch-\*\.parquet' matches no file$" $BIN/$t "${args[@]}" "$T/nomatch-*.parquet"
  one_line "$t: a directory without *.parquet: exit 1" 1 "^$t: directory '$T/empty' holds no Parquet file" $BIN/$t "${args[@]}" $T/empty
  one_line "$t: a missing file: exit 1 naming it" 1 "does-not-exist\.parquet: cannot open" $BIN/$t "${args[@]}" $T/does-not-exist.parquet
done

# ---- -o - is stdout -----------------------------------------------------------------
for f in $D $IDS examples/data/flights.parquet; do
  $BIN/gpufeed-dense --unsafe-cast -o $T/file.bin "$f" 2> /dev/null; rc1=$?
  $BIN/gpufeed-dense --unsafe-cast -o - "$f" > $T/stdout.bin 2> $T/stdout.err; rc2=$?
  check "gpufeed-dense -o - writes to stdout what -o FILE writes: $f" bash -c "[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ -s $T/file.bin ] && cmp -s $T/file.bin $T/stdout.bin && [ ! -e ./- ]"
done
check "gpufeed-dense -o -: the summary still goes to stderr (two lines)" test "$(wc -l < $T/stdout.err)" -eq 2
$BIN/gpufeed-dense -o - $D 2> $T/pipe.err | head -c 100 > /dev/null
$BIN/gpufeed-dense -o - --columns i32 $D 2> /dev/null | cmp -s - <($BIN/gpufeed-dense -o /dev/stdout --columns i32 $D 2> /dev/null)
check "gpufeed-dense -o - into a pipe equals -o /dev/stdout" test $? -eq 0

# ---- progress: one final line on a pipe, a live line (\r) on a terminal ------------
FL=examples/data/flights.parquet
$BIN/gpufeed-bench $FL --batch 4096 --epochs 2 --workers 2 > /dev/null 2> $T/bench.pipe
check "gpufeed-bench on a pipe: no \\r, the summary's rows line once" bash -c "! grep -q \$'\\r' $T/bench.pipe && [ \$(grep -c '^rows ' $T/bench.pipe) -eq 1 ]"
$BIN/gpufeed-dense -o $T/fl.bin $FL 2> $T/dense.pipe
check "gpufeed-dense on a pipe: no \\r, the two summary lines only" bash -c "! grep -q \$'\\r' $T/dense.pipe && [ \$(wc -l < $T/dense.pipe) -eq 2 ]"
rm -rf $T/pc; $BIN/gpufeed-cache build --cache $T/pc --dtype f64 $FL $FL > $T/cache.out 2> $T/cache.pipe
check "gpufeed-cache build on a pipe: no \\r, exactly one progress line (units N/N, rows, MB/s, seconds, peak RSS)" bash -c "! grep -q \$'\\r' $T/cache.pipe && [ \$(wc -l < $T/cache.pipe) -eq 1 ] && grep -qE '^units ([0-9]+)/\\1, rows [0-9]+, [0-9.]+ MB/s, [0-9.]+ s, peak RSS [0-9.]+ MiB$' $T/cache.pipe && grep -q '^built ' $T/cache.out"
$BIN/gpufeed-cache build --cache $T/pc --dtype f64 $FL $FL > /dev/null 2> $T/cache2.pipe
check "gpufeed-cache build of a built cache: one line saying so" bash -c "[ \$(wc -l < $T/cache2.pipe) -eq 1 ] && grep -q 'already built' $T/cache2.pipe"
if command -v script > /dev/null 2>&1 && script -qec true /dev/null > /dev/null 2>&1; then
  # on a terminal (a pty from script): stderr carries a line rewritten in place
  # (a \r followed by text, not the pty's \r\n)
  tty_run() { script -qec "$1" /dev/null > $2 2>&1 < /dev/null; }
  tty_run "$BIN/gpufeed-bench $FL --batch 4096 --epochs 2 --workers 2" $T/bench.tty; rc=$?
  check "gpufeed-bench on a terminal: a live line (\\repoch ...), then the summary" bash -c "[ $rc -eq 0 ] && grep -qaP '\\repoch \\d+/2, batch \\d+/\\d+, ' $T/bench.tty && grep -qaP '(^|\\r)rows 673552, batches 166' $T/bench.tty"
  tty_run "$BIN/gpufeed-dense -o $T/fltty.bin $FL" $T/dense.tty; rc=$?
  check "gpufeed-dense on a terminal: a live line (\\r... rows written), then the summary" bash -c "[ $rc -eq 0 ] && grep -qaP '\\r\\d+ of 336776 rows written' $T/dense.tty && grep -qaP '(^|\\r)rows 336776, ' $T/dense.tty && cmp -s $T/fl.bin $T/fltty.bin"
  rm -rf $T/pt; tty_run "$BIN/gpufeed-cache build --cache $T/pt --dtype f64 $FL $FL" $T/cache.tty; rc=$?
  check "gpufeed-cache build on a terminal: a live bar (\\r[###...), then the final line" bash -c "[ $rc -eq 0 ] && grep -qaP '\\r\\[[#.]{30}\\] +\\d+%' $T/cache.tty && grep -qaP '(^|\\r)units (\\d+)/\\2, rows 673552, ' $T/cache.tty"
  tty_run "$BIN/gpufeed-dense -o - $D" $T/dense.ttyout; rc=$?
  check "gpufeed-dense -o - to a terminal: refused (exit 2)" bash -c "[ $rc -eq 2 ] && grep -qa 'stdout, which is a terminal' $T/dense.ttyout"
else
  skip "progress on a terminal: no 'script' (util-linux) to make a pty"
fi

# ---- more threads than 4 x the cores: one warning line, the run goes on -------------
CORES=$(getconf _NPROCESSORS_ONLN 2> /dev/null || nproc)
MANY=$((4 * CORES + 1))
if [ $MANY -le 256 ]; then
  $BIN/gpufeed-bench $IDS --batch 5000 --workers $MANY > /dev/null 2> $T/w.err; rc=$?
  check "gpufeed-bench --workers $MANY on $CORES cores: exit 0, one warning line naming --workers" \
    bash -c "[ $rc -eq 0 ] && [ \$(grep -c 'warning' $T/w.err) -eq 1 ] && grep -q \"^gpufeed-bench: warning: --workers $MANY is more than 4 x the $CORES online cores\" $T/w.err && grep -q '^rows 20000,' $T/w.err"
  $BIN/gpufeed-bench $IDS --batch 5000 --workers $((4 * CORES)) > /dev/null 2> $T/w4.err
  check "gpufeed-bench --workers $((4 * CORES)) (4 x the cores): no warning" bash -c "! grep -q warning $T/w4.err"
  rm -rf $T/wc; $BIN/gpufeed-cache build --cache $T/wc --workers $MANY $IDS > /dev/null 2> $T/wc.err; rc=$?
  check "gpufeed-cache build --workers $MANY: exit 0, the warning" bash -c "[ $rc -eq 0 ] && [ \$(grep -c \"warning: --workers $MANY is more than\" $T/wc.err) -eq 1 ]"
  $BIN/gpufeed-dense --threads $MANY -o $T/th.bin $IDS > /dev/null 2> $T/th.err; rc=$?
  check "gpufeed-dense --threads $MANY: exit 0, the warning" bash -c "[ $rc -eq 0 ] && [ \$(grep -c \"warning: --threads $MANY is more than\" $T/th.err) -eq 1 ]"
else
  skip "the workers warning: 4 x $CORES cores is beyond the 256-worker limit"
fi

echo "$P passed, $F failed, $S skipped"
[ $F -eq 0 ]
