#!/usr/bin/env bash
# Command-line behaviour of gpufeed-bench, the loader's CLI: --print-batches
# is the determinism contract (`epoch index rows hash` per batch, the same
# for any --workers, --ring-depth, --prefill or timing), resume, shards,
# traces and errors. Uses $BENCH (default build/gpufeed-bench, built here
# when missing or older than its sources) and $DENSE (default
# build/gpufeed-dense, the same). Run from anywhere.
set -u
cd "$(dirname "$0")/.."
BENCH=${BENCH:-build/gpufeed-bench}
T=build/bench-test; rm -rf $T; mkdir -p $T
P=0; F=0
ok()   { P=$((P + 1)); echo "PASS $1"; }
bad()  { F=$((F + 1)); echo "FAIL $1"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
PYTHON=python3; [ -x .venv/bin/python ] && PYTHON=.venv/bin/python

if [ ! -x "$BENCH" ] || [ "$BENCH" -ot gpufeed.h ] || [ "$BENCH" -ot tools/gpufeed-bench.c ] || [ "$BENCH" -ot tools/gf_cli.h ]; then
  mkdir -p "$(dirname "$BENCH")"
  if ! ${CC:-cc} -O2 -I. tools/gpufeed-bench.c -o "$BENCH" -lpthread -lm; then
    echo "FAIL building $BENCH"; echo "0 passed, 1 failed"; exit 1
  fi
fi

DENSE=${DENSE:-build/gpufeed-dense}
if [ ! -x "$DENSE" ] || [ "$DENSE" -ot gpufeed.h ] || [ "$DENSE" -ot tools/gpufeed-dense.c ] || [ "$DENSE" -ot tools/gf_cli.h ]; then
  mkdir -p "$(dirname "$DENSE")"
  if ! ${CC:-cc} -O2 -I. tools/gpufeed-dense.c -o "$DENSE" -lpthread -lm; then
    echo "FAIL building $DENSE"; echo "0 passed, 1 failed"; exit 1
  fi
fi

IDS=tests/data/ids.parquet           # 20,000 rows, unit count at --unit-rows 700 read from gpufeed-dense
FL=examples/data/flights.parquet     # 336,776 rows, 6 row groups of 65,536 rows (the last
                                     # 9,096), one data page per column chunk
# run NAME ARGS...: stdout to $T/NAME.out, stderr to $T/NAME.err, exit code to $T/NAME.rc
run() { local n=$1; shift; "$BENCH" "$@" > "$T/$n.out" 2> "$T/$n.err"; echo $? > "$T/$n.rc"; }
rc_is() { test "$(cat "$T/$1.rc")" -eq "$2"; }
same() { cmp -s "$T/$1.out" "$T/$2.out"; }
lines() { wc -l < "$T/$1.out"; }
# the batches of NAME from the line "E K " on
tail_from() { awk -v e="$2" -v k="$3" 'f || ($1 == e && $2 == k) { f = 1; print }' "$T/$1.out"; }
# a value from the summary on stderr: "rows N," / "rows dropped N" / "repeated N"
stat_of() { sed -n "s/.*$2 \([0-9][0-9]*\).*/\1/p" "$T/$1.err" | head -1; }

# ---- ids.parquet: determinism across workers, ring depth, timing --------------
A=(--unit-rows 700 --batch 512 --seed 11 --shuffle-window 3 --epochs 3 --print-batches)
run w1 $IDS "${A[@]}" --workers 1
check "ids: workers 1 exits 0" rc_is w1 0
check "ids: 3 epochs of 40 batches" test "$(lines w1)" -eq 120
check "ids: lines are 'epoch index rows hash'" test "$(grep -cE '^[0-9]+ [0-9]+ [0-9]+ [0-9a-f]{16}$' $T/w1.out)" -eq 120
check "ids: last batch of each epoch has 20000 mod 512 rows" test "$(grep -c '^[0-9] 39 32 ' $T/w1.out)" -eq 3
check "ids: summary on stderr" grep -q '^rows 60000, batches 120' $T/w1.err
check "ids: verdict on stderr" grep -q '^verdict: .' $T/w1.err
for v in "--workers 2" "--workers 4" "--workers 4 --jitter-us 300" "--workers 3 --ring-depth 1" "--workers 2 --ring-depth 5 --prefill" "--workers 8 --jitter-us 100"; do
  n=v$(echo "$v" | tr -dc 'a-z0-9'); run $n $IDS "${A[@]}" $v
  check "ids: $v prints the same batches as --workers 1" same $n w1
done
run rerun $IDS "${A[@]}" --workers 4 --jitter-us 200
check "ids: a rerun prints the same batches" same rerun w1
run seed12 $IDS "${A[@]/11/12}" --workers 2
check "ids: another seed, other batches" bash -c "! cmp -s $T/seed12.out $T/w1.out"
check "ids: epochs differ" bash -c "[ \"\$(grep '^0 ' $T/w1.out | cut -d' ' -f4)\" != \"\$(grep '^1 ' $T/w1.out | cut -d' ' -f4)\" ]"
run ds $IDS --unit-rows 700 --batch 512 --no-shuffle --shuffle-window 0 --epochs 2 --print-batches
check "ids: --no-shuffle --shuffle-window 0: both epochs alike" bash -c "[ \"\$(grep '^0 ' $T/ds.out | cut -d' ' -f2-)\" = \"\$(grep '^1 ' $T/ds.out | cut -d' ' -f2-)\" ]"
run ds4 $IDS --unit-rows 700 --batch 512 --no-shuffle --shuffle-window 0 --epochs 2 --print-batches --workers 4 --jitter-us 100
check "ids: dataset order, workers 4 with jitter" same ds4 ds
run dl $IDS --unit-rows 700 --batch 512 --seed 11 --epochs 2 --drop-last --print-batches --workers 2
check "ids: --drop-last: 39 full batches per epoch" bash -c "[ $(lines dl) -eq 78 ] && [ \$(grep -c ' 512 ' $T/dl.out) -eq 78 ]"
check "ids: --drop-last counts the dropped rows" test "$(stat_of dl 'rows dropped')" = 64

# ---- resume --------------------------------------------------------------------
run r17 $IDS "${A[@]}" --workers 2 --start-epoch 1 --start-batch 7 --epochs 2
check "resume at epoch 1 batch 7 = the tail of the full run" cmp -s $T/r17.out <(tail_from w1 1 7)
run r0m $IDS "${A[@]}" --workers 3 --start-epoch 0 --start-batch 23 --epochs 3
check "resume at epoch 0 batch 23 = the tail" cmp -s $T/r0m.out <(tail_from w1 0 23)
run r0l $IDS "${A[@]}" --workers 1 --start-epoch 0 --start-batch 39 --epochs 3 --jitter-us 100
check "resume at the last batch of epoch 0" cmp -s $T/r0l.out <(tail_from w1 0 39)
run r0e $IDS "${A[@]}" --workers 4 --start-epoch 0 --start-batch 40 --epochs 3
check "resume one past the last batch goes on with epoch 1 batch 0" cmp -s $T/r0e.out <(tail_from w1 1 0)
run r20 $IDS "${A[@]}" --workers 2 --start-epoch 2 --start-batch 0 --epochs 1
check "resume at epoch 2 batch 0" cmp -s $T/r20.out <(tail_from w1 2 0)
run r1m $IDS "${A[@]}" --workers 2 --start-epoch 0 --start-batch 20 --epochs 1
run r1f $IDS "${A[@]}" --workers 2 --epochs 1
u_mid=$(sed -n 's/.*units decoded \([0-9]*\).*/\1/p' $T/r1m.err); u_full=$(sed -n 's/.*units decoded \([0-9]*\).*/\1/p' $T/r1f.err)
check "resume mid-epoch skips the units before the batch ($u_mid < $u_full)" test "${u_mid:-99}" -lt "${u_full:-0}"

# ---- shards ------------------------------------------------------------------------
S=(--unit-rows 700 --batch 512 --seed 3 --shuffle-window 2 --epochs 2 --print-batches)
shards() { # TAG WORLD EVEN
  local tag=$1 world=$2 even=$3 r counts="" rows=0 extra=0
  for ((r = 0; r < world; r++)); do
    run $tag.$r $IDS "${S[@]}" --rank $r --world $world --even $even --workers $((1 + r % 3))
    counts="$counts $(lines $tag.$r)"
    rows=$((rows + $(stat_of $tag.$r 'rows'))); extra=$((extra + $(stat_of $tag.$r "$([ $even != pad ] && echo 'rows dropped' || echo repeated)")))
  done
  check "$tag: every rank exits 0" bash -c "for r in \$(seq 0 $((world - 1))); do [ \$(cat $T/$tag.\$r.rc) -eq 0 ] || exit 1; done"
  check "$tag: every rank has the same batch count ($counts)" test "$(echo $counts | tr ' ' '\n' | sort -u | wc -l)" -eq 1
  check "$tag: every batch has 512 rows" bash -c "! cat $T/$tag.*.out | awk '\$3 != 512' | grep -q ."
  check "$tag: ranks differ" bash -c "! cmp -s $T/$tag.0.out $T/$tag.1.out"
  if [ $even != pad ]; then
    check "$tag: rows + rows dropped = 2 x 20000 ($rows + $extra)" test $((rows + extra)) -eq 40000
  else
    check "$tag: rows - rows repeated = 2 x 20000 ($rows - $extra)" test $((rows - extra)) -eq 40000
  fi
  run $tag.again $IDS "${S[@]}" --rank 1 --world $world --even $even --workers 4 --jitter-us 100
  check "$tag: rank 1 again with other workers and jitter" same $tag.again $tag.1
}
shards drop2 2 drop-any   # these units leave the ranks more than a batch apart: --even drop refuses them (below)
shards drop3 3 drop-any
shards pad4 4 pad
shards pad2 2 pad
run rs1 $IDS "${S[@]}" --rank 1 --world 4 --even pad --start-epoch 1 --start-batch 2 --epochs 1 --workers 2
check "shard resume: rank 1 of 4 at epoch 1 batch 2 = its tail" cmp -s $T/rs1.out <(tail_from pad4.1 1 2)
run w1shard $IDS "${S[@]}" --rank 0 --world 1
run noshard $IDS "${S[@]}"
check "--rank 0 --world 1 is the unsharded stream" same w1shard noshard

# ---- flights.parquet -------------------------------------------------------------------
FA=(--columns dep_delay,distance,air_time --unit-rows 20000 --batch 4096 --seed 7 --shuffle-window 2 --epochs 2 --print-batches)
run f1 $FL "${FA[@]}" --workers 1
check "flights: exits 0" rc_is f1 0
check "flights: 2 x ceil(336776 / 4096) batches" test "$(lines f1)" -eq 166
check "flights: last batch has 336776 mod 4096 rows" test "$(grep -c '^[01] 82 904 ' $T/f1.out)" -eq 2
run f4 $FL "${FA[@]}" --workers 4 --jitter-us 500
check "flights: workers 4 with jitter prints the same batches" same f4 f1
run f2 $FL "${FA[@]}" --workers 2 --ring-depth 1 --prefill
check "flights: workers 2 ring depth 1 prefill prints the same batches" same f2 f1
run fr $FL "${FA[@]}" --workers 3 --start-epoch 1 --start-batch 41 --epochs 1
check "flights: resume at epoch 1 batch 41 = the tail" cmp -s $T/fr.out <(tail_from f1 1 41)
run f64 $FL "${FA[@]}" --workers 2 --dtype f64
check "flights: --dtype f64: same batch sizes, other bytes" bash -c "cmp -s <(cut -d' ' -f1-3 $T/f64.out) <(cut -d' ' -f1-3 $T/f1.out) && ! cmp -s $T/f64.out $T/f1.out"
# per-world ranks never drop more than a batch a rank unseen: flights in its 6 row groups (5 x 65,536 + 9,096 rows)
# over 2 ranks leaves one rank 56,440 rows short every epoch
FD=(--columns dep_delay,distance --batch 4096 --seed 7 --epochs 2 --world 2)
run fdrop $FL "${FD[@]}" --rank 0
check "flights, 6 units over 2 ranks, --even drop: exit 1 naming the loss (rows and share) and the fixes" \
  bash -c "[ \$(cat $T/fdrop.rc) -eq 1 ] && grep -q 'would drop 58248 of 336776 rows (17.3%) in epoch 0' $T/fdrop.err &&
           grep -q -- '--unit-rows [0-9]* or less' $T/fdrop.err && grep -q -- '--even pad' $T/fdrop.err && grep -q -- '--even drop-any' $T/fdrop.err &&
           grep -q -- '--global-batch' $T/fdrop.err && [ \$(wc -l < $T/fdrop.err) -eq 1 ]"
run fany0 $FL "${FD[@]}" --rank 0 --even drop-any
run fany1 $FL "${FD[@]}" --rank 1 --even drop-any
fsum=$(( $(stat_of fany0 'rows') + $(stat_of fany1 'rows') + $(stat_of fany0 'rows dropped') + $(stat_of fany1 'rows dropped') ))
check "... --even drop-any: both ranks run, rows + rows dropped = 2 epochs x 336776 ($fsum)" \
  bash -c "[ \$(cat $T/fany0.rc) -eq 0 ] && [ \$(cat $T/fany1.rc) -eq 0 ] && [ $fsum -eq 673552 ]"
run fw $FL "${FA[@]}" --rank 1 --world 2 --even pad --workers 3
run fw2 $FL "${FA[@]}" --rank 1 --world 2 --even pad --workers 1
check "flights: a shard is deterministic" bash -c "[ \$(cat $T/fw.rc) -eq 0 ] && cmp -s $T/fw.out $T/fw2.out"

# ---- the demo (make demo's loader line, as the Makefile has it) -----------------------------
DEMO=$(sed -n 's/^\tbuild\/gpufeed-bench \(examples\/data\/flights.parquet .*\)$/\1/p' Makefile | sed "s|build/demo-cache|$T/demo-cache|")
check "the demo: the Makefile has its gpufeed-bench line" test -n "$DEMO"
rm -rf $T/demo-cache
# shellcheck disable=SC2086
run demo $DEMO
check "the demo: exits 0" rc_is demo 0
U=$(sed -n 's/.*units decoded [0-9]* (\([0-9]*\) an epoch).*/\1/p' $T/demo.err); D=$(stat_of demo "units decoded")
C=$(sed -n 's/^cache: [a-z]*, units from cache \([0-9]*\),.*/\1/p' $T/demo.err); W=$(grep -c '^worker [0-9]*:' $T/demo.err)
check "the demo: every worker has a unit to take (units an epoch >= workers)" bash -c "[ -n '$U' ] && [ $W -ge 2 ] && [ '$U' -ge $W ]"
check "the demo: units decoded + units from the cache = 3 epochs x units an epoch ($D + $C, $U an epoch)" bash -c "[ -n '$C' ] && [ \$(($D + $C)) -eq \$((3 * $U)) ] && [ $D -ge $U ]"
check "the demo: the cache's effect in one line (epochs 1-2 served, no source byte)" grep -qE '^cache effect: epochs 1-2 from the cache at [0-9.]+ M rows/s, no source byte read: [0-9.]+x the epoch that decoded' $T/demo.err
check "the demo: the verdict names a consumer that does no work" grep -q '^verdict: .*does no work between batches' $T/demo.err
check "the demo: no ring advice for a ring of cached units" bash -c "! grep -q '^verdict: the ring ran full' $T/demo.err"
# the summary's "workers N% busy" is the mean of the per-worker lines (each rounded: within 1)
wb=$(sed -n 's/^worker [0-9]*:.*(\([0-9]*\)% busy)$/\1/p' $T/demo.err | tr '\n' ' '); vb=$(sed -n 's/^verdict: .*workers \([0-9]*\)% busy.*/\1/p' $T/demo.err)
check "the demo: per-worker lines and the verdict's busy share agree (workers $wb; verdict $vb)" \
  awk -v v="$vb" -v w="$wb" 'BEGIN { n = split(w, a, " "); for (i = 1; i <= n; i++) s += a[i]; exit !(n > 0 && v != "" && s / n - v <= 1 && v - s / n <= 1) }'
run few $FL --batch 4096 --workers 8 --epochs 1
check "fewer units than workers: the verdict says so first (6 units an epoch for 8 workers: lower --unit-rows)" \
  grep -q '^verdict: 6 units an epoch for 8 workers: lower --unit-rows' $T/few.err

# ---- trace -------------------------------------------------------------------------------
run tr $IDS --unit-rows 700 --batch 512 --epochs 1 --workers 2 --jitter-us 300 --trace $T/trace.json
check "--trace: exits 0" rc_is tr 0
check "--trace: starts with {\"traceEvents\": [" bash -c "head -c 17 $T/trace.json | grep -qF '{\"traceEvents\": ['"
NUNITS=$($DENSE --unit-rows 700 -o /dev/null $IDS 2>&1 | sed -n 's/.*units \([0-9]*\).*/\1/p')
$PYTHON - "$T/trace.json" "$NUNITS" <<'PY'; check "--trace: valid JSON with decode events on worker threads" test $? -eq 0
import json, sys
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"]
x = [e for e in ev if e.get("ph") == "X"]
assert x, "no complete events"
assert all(isinstance(e["ts"], int) and isinstance(e["dur"], int) for e in x)
tids = {e["tid"] for e in x}
assert {1, 2} <= tids, tids
assert sum(1 for e in x if e["name"] == "decode unit") == int(sys.argv[2]), len(x)
names = {e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "thread_name"}
assert {"consumer", "worker 0", "worker 1"} <= names, names
PY

# ---- errors ----------------------------------------------------------------------------------
bad_flag() { # NAME ARGS...: exit 2 and a message on stderr
  local n=$1; shift
  "$BENCH" "$@" > /dev/null 2> $T/flag.err; local rc=$?
  check "bad flags ($n): exit 2 with a message" bash -c "[ $rc -eq 2 ] && [ -s $T/flag.err ]"
}
bad_flag "no arguments"
bad_flag "no --batch" $IDS
bad_flag "no file" --batch 5
bad_flag "--batch 0" $IDS --batch 0
bad_flag "--batch x" $IDS --batch x
bad_flag "--batch -3" $IDS --batch -3
bad_flag "--batch without a value" $IDS --batch
bad_flag "--workers 0" $IDS --batch 5 --workers 0
bad_flag "--workers 2x" $IDS --batch 5 --workers 2x
bad_flag "--world 0" $IDS --batch 5 --world 0
bad_flag "--rank -1" $IDS --batch 5 --rank -1
bad_flag "--epochs 0" $IDS --batch 5 --epochs 0
bad_flag "--even sideways" $IDS --batch 5 --even sideways
bad_flag "--dtype f99" $IDS --batch 5 --dtype f99
bad_flag "unknown option" $IDS --batch 5 --frobnicate
"$BENCH" -h > $T/help.out 2> $T/help.err; rc=$?
check "-h: exit 0 with usage on stdout (as every tool)" bash -c "[ $rc -eq 0 ] && grep -q '^usage: gpufeed-bench' $T/help.out && [ ! -s $T/help.err ]"
run missing $T/does-not-exist.parquet --batch 5
check "missing file: exit 1 naming the path" bash -c "[ \$(cat $T/missing.rc) -eq 1 ] && grep -q 'does-not-exist.parquet: cannot open' $T/missing.err"
check "missing file: one line" test "$(wc -l < $T/missing.err)" -eq 1
run notpq README.md --batch 5
check "not Parquet: exit 1 with a message" bash -c "[ \$(cat $T/notpq.rc) -eq 1 ] && grep -q 'README.md' $T/notpq.err"
run nocol $IDS --batch 5 --columns id,nope
check "missing column: exit 1 naming it" bash -c "[ \$(cat $T/nocol.rc) -eq 1 ] && grep -q 'nope' $T/nocol.err"
run rankw $IDS --batch 5 --unit-rows 700 --rank 3 --world 3
check "--rank 3 --world 3: exit 1, rank not in world" bash -c "[ \$(cat $T/rankw.rc) -eq 1 ] && grep -q 'rank 3 is not in world 3' $T/rankw.err"
run toowide $IDS --batch 5 --unit-rows 700 --world $((NUNITS + 1))
check "--world (units + 1): exit 1, cannot be shared" bash -c "[ \$(cat $T/toowide.rc) -eq 1 ] && grep -q 'units cannot be shared by $((NUNITS + 1)) ranks' $T/toowide.err"

# bench_memcpy (the benchmarks' copy ceilings): its row modes, and bad arguments
MC=$T/bench_memcpy
if ${CC:-cc} -O2 -std=c99 tools/bench/bench_memcpy.c -o $MC; then
  $MC 1048576 65536 1 1 128 262144 > $T/mc1.out 2>&1; rc=$?
  check "bench_memcpy: rows in a shuffled order" bash -c "[ $rc -eq 0 ] && grep -q 'random order within each 262144-byte window' $T/mc1.out"
  $MC 1048576 65536 1 1 128 0 > $T/mc2.out 2>&1; rc=$?
  check "bench_memcpy: rows in order" bash -c "[ $rc -eq 0 ] && grep -q 'copied one by one, in order' $T/mc2.out"
  $MC @$IDS 4096 1 1 > $T/mc3.out 2>&1; rc=$?
  check "bench_memcpy: a mapped file as the source" bash -c "[ $rc -eq 0 ] && grep -q 'source $IDS' $T/mc3.out"
  $MC 1048576 65536 1 1 100 262144 > $T/mc4.out 2>&1; rc=$?
  check "bench_memcpy: a row size not dividing the chunk: exit 2 saying why" bash -c "[ $rc -eq 2 ] && grep -q 'ROW_BYTES dividing' $T/mc4.out"
  $MC @$T/does-not-exist 4096 > $T/mc5.out 2>&1; rc=$?
  check "bench_memcpy: a missing file: exit 1 naming it" bash -c "[ $rc -eq 1 ] && grep -q 'does-not-exist' $T/mc5.out"
else
  bad "building bench_memcpy"
fi

# bench_threads (the ceiling of one process's decoding threads): rows checked,
# the total the sum of its loaders, bad arguments, a missing or a cut file
BT=$T/bench_threads
# (linked with the implementation make tools built when IMPL_O names it: compiled once)
if [ -n "${IMPL_O:-}" ] && [ -f "$IMPL_O" ]; then BT_SRC=(-DGPUFEED_IMPLEMENTATION_DONE -DGPUFEED_API=extern tools/bench/bench_threads.c "$IMPL_O" -ldl)
else BT_SRC=(tools/bench/bench_threads.c); fi
if ${CC:-cc} -O2 -std=c99 -Wall -Wextra -Werror -pedantic -I. "${BT_SRC[@]}" -o $BT -lpthread -lm; then
  $BT $IDS 2 3 512 > $T/bt1.out 2>&1; rc=$?
  check "bench_threads: two loaders, every epoch's 20,000 rows" bash -c "[ $rc -eq 0 ] && [ \$(grep -c '^loader [01]: [0-9]* rows/s$' $T/bt1.out) -eq 2 ] && grep -q '^total: [0-9]* rows/s (2 loaders of 1 worker, one process, 3 epochs of 20000 rows each)$' $T/bt1.out"
  check "bench_threads: the total is its loaders' rates added" bash -c "awk '/^loader/ { s += \$3 } /^total/ { t = \$2 } END { d = s - t; exit !(t > 0 && d < 2 && d > -2) }' $T/bt1.out"
  $BT $IDS 0 > $T/bt2.out 2>&1; rc=$?
  check "bench_threads: 0 loaders: exit 2 with the usage" bash -c "[ $rc -eq 2 ] && grep -q 'usage: bench_threads FILE LOADERS' $T/bt2.out"
  $BT $IDS 1 1 > $T/bt3.out 2>&1; rc=$?
  check "bench_threads: 1 epoch (no steady epoch): exit 2" bash -c "[ $rc -eq 2 ] && grep -q 'EPOCHS (2..' $T/bt3.out"
  $BT $T/does-not-exist.parquet 2 > $T/bt4.out 2>&1; rc=$?
  check "bench_threads: a missing file: exit 1 naming it, for each loader" bash -c "[ $rc -eq 1 ] && [ \$(grep -c 'loader [01]: .*does-not-exist.parquet' $T/bt4.out) -eq 2 ]"
  head -c 3000 $IDS > $T/cut.parquet
  $BT $T/cut.parquet 1 > $T/bt5.out 2>&1; rc=$?
  check "bench_threads: a cut file: exit 1 naming it" bash -c "[ $rc -eq 1 ] && grep -q 'loader 0: .*cut.parquet' $T/bt5.out"
else
  bad "building bench_threads"
fi

echo "$P passed, $F failed"
[ $F -eq 0 ]
