#!/usr/bin/env bash
# The tensor cache (gpufeed.h >>cache), end to end through gpufeed-bench and
# gpufeed-cache: the cached stream equals the decoded one, no source bytes
# once built, SIGKILL during a build, corrupt bytes, changed sources,
# concurrent builders, a full disk, an unwritable directory, the CLI; the
# identity (path spellings, chmod, rename-over, cp -p, rsync -a), five
# content changes, a prebuild racing a loader, the demo, ls/prune/budget,
# files read with pread through the descriptor pool.
#
#   bash tests/test_cache.sh            (last line: "N passed, N failed, N skipped")
#
# Environment: GPUFEED_BENCH / GPUFEED_CACHE_TOOL: binaries to test (default:
# built here from the current gpufeed.h into build/cache-test/);
# CACHE_TEST_SEED: the random seed (kill points, flipped bytes; printed);
# CACHE_TEST_DIR: the scratch directory (default build/cache-test, wiped).
# Full disk uses a 2 MiB tmpfs mounted under build/cache-test (root), else a
# file size limit (ulimit -f); the log says which one ran.
set -u
cd "$(dirname "$0")/.."
T=${CACHE_TEST_DIR:-build/cache-test}
MNT=$T/mnt
cleanup() {
  for m in "$MNT" "$MNT-ro"; do mountpoint -q "$m" 2>/dev/null && umount "$m"; done
  return 0
}
trap cleanup EXIT
cleanup
rm -rf "$T"; mkdir -p "$T"
P=0; F=0; SK=0
ok()   { P=$((P + 1)); echo "PASS $1"; }
bad()  { F=$((F + 1)); echo "FAIL $1"; }
skip() { SK=$((SK + 1)); echo "SKIP $1"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }

BENCH=${GPUFEED_BENCH:-}
CTOOL=${GPUFEED_CACHE_TOOL:-}
if [ -z "$BENCH" ]; then
  BENCH=$T/gpufeed-bench
  cc -O2 -std=c99 -I. tools/gpufeed-bench.c -o "$BENCH" -lpthread -lm || { echo "FAIL build gpufeed-bench"; echo "0 passed, 1 failed"; exit 1; }
fi
if [ -z "$CTOOL" ]; then
  CTOOL=$T/gpufeed-cache
  cc -O2 -std=c99 -I. tools/gpufeed-cache.c -o "$CTOOL" -lpthread -lm || { echo "FAIL build gpufeed-cache"; echo "0 passed, 1 failed"; exit 1; }
fi
SEED=${CACHE_TEST_SEED:-$(( $(date +%s) % 100000 ))}
RANDOM=$SEED
echo "seed $SEED (CACHE_TEST_SEED=$SEED reproduces the random choices)"
rnd() { echo $(( (RANDOM << 15 | RANDOM) % $1 )); } # 0 .. N-1

FL=examples/data/flights.parquet
# The main dataset: a directory of copies of one file, so that it has many
# units whatever the unit plan (>= 2 x workers x (ring depth + 1) units make
# "epoch 2 of a first run reads 0 source bytes" hold for any thread timing:
# workers run at most ring depth + 1 units ahead of the consumer)
MD=$T/multi; mkdir -p $MD
if [ -f tests/data/ids.parquet ]; then
  for i in 1 2 3 4 5 6 7 8; do cp tests/data/ids.parquet $MD/part$i.parquet; done
else
  for i in 1 2 3 4; do cp $FL $MD/part$i.parquet; done
fi
DS=$MD                     # the dataset arguments of both tools
D="$DS --batch 4096"

# helpers over a run's stderr
ebytes() { sed -n "s/^epoch $2: source bytes read //p" "$1"; }           # ERR EPOCH
cstate() { sed -n 's/^cache: \([a-z]*\),.*/\1/p' "$1"; }                   # ERR
cfrom()  { sed -n 's/^cache: [a-z]*, units from cache \([0-9]*\),.*/\1/p' "$1"; }
cbad()   { sed -n 's/^cache: .*, bad units \([0-9]*\)$/\1/p' "$1"; }
ngfc()   { local n=0 f; for f in "$1"/*.gfc; do [ -e "$f" ] && n=$((n + 1)); done; echo $n; }
ntmp()   { local n=0 f; for f in "$1"/*.tmp; do [ -e "$f" ] && n=$((n + 1)); done; echo $n; }
gfc()    { local f; for f in "$1"/*.gfc; do [ -e "$f" ] && echo "$f"; done | head -1; }
all_zero() { # ERR FIRST LAST: every epoch's source bytes are 0
  local e; for ((e = $2; e <= $3; e++)); do [ "$(ebytes "$1" $e)" = 0 ] || return 1; done; return 0
}
# run NAME ARGS...: gpufeed-bench --print-batches into $T/NAME.out / .err
run() { local n=$1; shift; $BENCH "$@" --print-batches > "$T/$n.out" 2> "$T/$n.err"; }
same() { cmp -s "$T/$1.out" "$T/$2.out" && [ -s "$T/$1.out" ]; }
# wait_until CMD: polls CMD every 0.1 s until it holds, for up to 2 minutes (a loaded machine
# may start a process late: no check here depends on how soon)
wait_until() { local w; for w in $(seq 1 1200); do eval "$1" && return 0; sleep 0.1; done; return 1; }

# ---------------------------------------------------------------------------
echo "== 1. cached stream == decoded stream, source bytes 0 after the build  (t=${SECONDS}s)"
U=$($CTOOL info --cache $T/probe $DS | sed -n 's/^units: *//p')
NB=$($BENCH $D --epochs 1 --print-batches 2> $T/probe.err | wc -l)
NROWS=$(sed -n 's/^rows \([0-9]*\),.*/\1/p' $T/probe.err)
echo "dataset $DS ($(ls $MD | wc -l) files): $U units, $NB batches of 4096 per epoch"
# opt NAME DEFAULT ARGS...: the value of --NAME in ARGS
opt() { local n=$1 v=$2; shift 2; while [ $# -gt 0 ]; do [ "$1" = "--$n" ] && [ $# -gt 1 ] && v=$2; shift; done; echo "$v"; }
i=0
while IFS= read -r S; do
  i=$((i + 1))
  set -- $S
  nw=$(opt workers 1 "$@"); rd=$(opt ring-depth 2 "$@"); se=$(opt start-epoch 0 "$@"); sb=$(opt start-batch 0 "$@")
  clean=$(( se + (sb > 0 ? 3 : 2) ))   # the first epoch that must read 0 source bytes
  run ref$i $D "$@" || bad "setting $i ($S): reference run"
  run c$i $D --cache $T/eq$i "$@"; rc=$?
  check "setting $i ($S): first run (building) exits 0" test $rc -eq 0
  check "setting $i ($S): first run's stream equals the no-cache stream" same ref$i c$i
  last=$(( $(awk '{print $1}' $T/ref$i.out | sort -n | tail -1) ))
  check "setting $i ($S): cache ready after the first run" test "$(cstate $T/c$i.err)" = ready
  if [ "$U" -ge $(( 2 * nw * (rd + 1) )) ]; then
    check "setting $i ($S): epochs $clean..$last of the first run read 0 source bytes" all_zero $T/c$i.err $clean $last
  else
    echo "NOTE setting $i: $U units < 2 x $nw workers x ($rd + 1): epochs after the build may read the source (timing); bytes: $(sed -n 's/^epoch \([0-9]*\): source bytes read /\1:/p' $T/c$i.err | tr '\n' ' ')"
  fi
  check "setting $i ($S): one valid .gfc, no .tmp" test "$(ngfc $T/eq$i)" = 1 -a "$(ntmp $T/eq$i)" = 0
  run d$i $D --cache $T/eq$i "$@"; rc=$?
  check "setting $i ($S): second run exits 0" test $rc -eq 0
  check "setting $i ($S): second run's stream equals the no-cache stream" same ref$i d$i
  first=$(( $(awk '{print $1}' $T/ref$i.out | sort -n | head -1) ))
  check "setting $i ($S): second run read 0 source bytes in every epoch" all_zero $T/d$i.err $first $last
  check "setting $i ($S): second run: no bad units" test "$(cbad $T/d$i.err)" = 0
  # the cache of setting 1 (canonical unit order) serves every other setting
  if [ $i -gt 1 ]; then
    run s$i $D --cache $T/eq1 "$@"
    check "setting $i ($S): served by setting 1's cache: same stream, 0 source bytes" \
      eval 'same ref$i s$i && all_zero $T/s$i.err $first $last'
  fi
done <<EOF
--epochs 3 --workers 1 --shuffle-window 0
--epochs 3 --workers 2 --shuffle-window 3 --seed 7
--epochs 3 --workers 4 --shuffle-window 3 --seed 99
--epochs 3 --workers 4 --shuffle-window 0 --seed 5 --ring-depth 1
--epochs 3 --workers 2 --no-shuffle
--epochs 3 --workers 1 --no-shuffle --shuffle-window 3 --seed 4
--epochs 4 --workers 2 --shuffle-window 3 --seed 11 --start-epoch 1 --start-batch 10
--epochs 4 --workers 4 --shuffle-window 0 --seed 12 --start-epoch 2 --start-batch $((NB - 2))
--epochs 3 --workers 3 --seed 13 --start-epoch 5
--epochs 3 --workers 2 --seed 14 --drop-last --jitter-us 200
--epochs 3 --workers 1 --shuffle-window 5 --seed 15 --batch 1000
EOF
# one worker stores the last unit of epoch 0 before it decodes epoch 1
check "setting 1 (one worker): epoch 1 of the first run already read 0 source bytes" test "$(ebytes $T/c1.err 1)" = 0
# the units-from-cache count of a run served entirely from the cache
check "second run of setting 1: units from cache = 3 epochs x $U units" test "$(cfrom $T/d1.err)" = $((3 * U))
# f64 features and the RAM tier (with 2 workers, units of epoch 1 decoded
# ahead while the last unit of epoch 0 is stored come from the source:
# epoch 2 is the first clean one)
run ref64 $D --dtype f64 --epochs 3 --workers 2 --shuffle-window 3 --seed 21
run c64 $D --dtype f64 --epochs 3 --workers 2 --shuffle-window 3 --seed 21 --cache $T/eq64
check "f64: cached stream equals the decoded one" same ref64 c64
check "f64: epoch 2 read 0 source bytes" test "$(ebytes $T/c64.err 2)" = 0
run r64 $D --dtype f64 --epochs 3 --workers 2 --shuffle-window 3 --seed 21 --cache-ram 100000000
check "f64, --cache-ram: stream equals the decoded one" same ref64 r64
check "f64, --cache-ram: epoch 2 read 0 source bytes" test "$(ebytes $T/r64.err 2)" = 0

echo "== 2. data-parallel ranks (world > 1) over a cache built ahead  (t=${SECONDS}s)"
out=$($CTOOL build --cache $T/w $DS 2>$T/wbuild.err); rc=$?
check "gpufeed-cache build exits 0 and says built" eval '[ $rc -eq 0 ] && [[ "$out" == built* ]]'
check "gpufeed-cache verify passes on it" eval '$CTOOL verify --cache $T/w $DS > /dev/null'
for RW in "0 2" "1 2" "2 3 --even pad" "0 3 --even drop-any" "1 4 --shuffle-window 3 --seed 9"; do
  set -- $RW; r=$1; w=$2; shift 2
  run wref$r$w $D --epochs 2 --workers 2 --rank $r --world $w "$@"
  run wc$r$w $D --epochs 2 --workers 2 --rank $r --world $w --cache $T/w "$@"; rc=$?
  check "rank $r of $w $*: exit 0 and stream equals the no-cache stream" eval '[ $rc -eq 0 ] && same wref$r$w wc$r$w'
  check "rank $r of $w: every epoch from the cache (0 source bytes)" eval '[ "$(cstate $T/wc$r$w.err)" = ready ] && all_zero $T/wc$r$w.err 0 1'
  run wrs$r$w $D --epochs 2 --workers 1 --rank $r --world $w --start-epoch 1 --start-batch 3 "$@"
  run wrc$r$w $D --epochs 2 --workers 3 --rank $r --world $w --start-epoch 1 --start-batch 3 --cache $T/w "$@"
  check "rank $r of $w: resumed (epoch 1 batch 3) stream equals the no-cache one" same wrs$r$w wrc$r$w
done
run wnb $D --epochs 2 --workers 2 --rank 1 --world 2 --cache $T/wnone
check "world 2 without a cache: exit 0, reference stream" same wref12 wnb
check "world 2 without a cache: warns that no rank builds" grep -q "no rank builds the cache" $T/wnb.err
check "world 2 without a cache: no cache file made" test "$(ngfc $T/wnone)" = 0 -a "$(ntmp $T/wnone)" = 0

echo "== 3. SIGKILL during a build (20 random points)  (t=${SECONDS}s)"
# the dataset: copies of flights (f64), as many as make a build take ~1 s (at most 8)
K="--dtype f64"
KD=$T/kdata; mkdir -p $KD; cp $FL $KD/part1.parquet
btime() { local t0 t1; rm -rf $T/ktime; t0=$(date +%s%N); $CTOOL build --cache $T/ktime $K --workers 2 $KD > /dev/null 2>&1; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000000 )); }
t1ms=$(btime); [ "$t1ms" -lt 1 ] && t1ms=1
nk=$(( (1000 + t1ms - 1) / t1ms )); [ $nk -gt 8 ] && nk=8
for ((j = 2; j <= nk; j++)); do cp $FL $KD/part$j.parquet; done
BMS=$(btime); b2=$(btime); [ $b2 -lt $BMS ] && BMS=$b2; [ $BMS -lt 50 ] && BMS=50
rm -rf $T/ktime
run kref $KD $K --batch 4096 --epochs 2 --workers 2 --shuffle-window 3 --seed 3
echo "$nk copies of flights as f64: a build takes ${BMS} ms; killing at random points in [0, $((BMS * 9 / 10))] ms and (half of them) in [$((BMS * 7 / 10)), $((BMS * 21 / 20))] ms (finalize: fsync, rename)"
kill_ok=0; kill_bad=0; finals=0; tmps=0
for k in $(seq 1 20); do
  kd=$T/kill$k
  if [ $((k % 2)) -eq 0 ]; then ms=$(( BMS * 7 / 10 + $(rnd $((BMS * 7 / 20 + 1))) )); else ms=$(rnd $((BMS * 9 / 10 + 1))); fi
  # SIGKILL, then reap it: `wait` returns once the process is gone and the
  # kernel has dropped its build lock (it may sit in a write for a while)
  $CTOOL build --cache $kd $K --workers 2 $KD > /dev/null 2>&1 & kp=$!
  sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
  kill -KILL $kp 2> /dev/null; wait $kp 2> /dev/null
  good=1; why=""
  if [ "$(ngfc $kd)" != 0 ]; then
    finals=$((finals + 1))
    $CTOOL verify --cache $kd $K $KD > /dev/null 2>&1 || { good=0; why="final .gfc present but verify fails"; }
  fi
  [ "$(ntmp $kd)" != 0 ] && tmps=$((tmps + 1))
  run kc$k $KD $K --batch 4096 --epochs 2 --workers 2 --shuffle-window 3 --seed 3 --cache $kd || { good=0; why="$why; the next run failed"; }
  same kref kc$k || { good=0; why="$why; the next run's stream differs"; }
  [ "$(cstate $T/kc$k.err)" = ready ] || { good=0; why="$why; the next run did not end with a ready cache"; }
  $CTOOL verify --cache $kd $K $KD > /dev/null 2>&1 || { good=0; why="$why; verify after the next run fails"; }
  [ "$(ntmp $kd)" = 0 ] || { good=0; why="$why; a .tmp is left after the next run"; }
  if [ $good = 1 ]; then kill_ok=$((kill_ok + 1)); else kill_bad=$((kill_bad + 1)); echo "  kill at ${ms} ms: $why"; fi
  rm -rf "$kd"
done
echo "kills: $finals left a complete (verified) file, $tmps left a .tmp, $((20 - finals)) left no final file"
check "SIGKILL at 20 points: never a partial .gfc; the next run rebuilds and streams the reference ($kill_ok/20)" test $kill_bad -eq 0

echo "== 4. corrupt bytes (20 random flips in header, index, unit data)  (t=${SECONDS}s)"
CR="--workers 2 --shuffle-window 3 --seed 17 --epochs 2"
run cref $D $CR
run cbuild $D $CR --cache $T/cpristine
CF=$(gfc $T/cpristine)
NU=$(od -An -t u8 -j 32 -N 8 "$CF" | tr -d ' ')
check "the pristine cache verifies, header's unit count ($NU) = $U" eval '$CTOOL verify --cache $T/cpristine $DS >/dev/null && [ "$NU" = "$U" ]'
corr_ok=0; corr_bad=0
for k in $(seq 1 20); do
  cd2=$T/corrupt; rm -rf $cd2; mkdir -p $cd2; cp "$CF" $cd2/
  f=$cd2/$(basename "$CF")
  case $((k % 4)) in
    0) what=header; pos=$(rnd 4096) ;;
    1) what=index; pos=$((4096 + $(rnd $((32 * NU))))) ;;
    *) u=$(rnd $NU); set -- $(od -An -t u8 -j $((4096 + 32 * u)) -N 24 "$f")
       what="unit $u"; pos=$(( $1 + $(rnd $3) )) ;;
  esac
  b=$(od -An -t u1 -j $pos -N 1 "$f" | tr -d ' '); nb=$(( b ^ (1 + $(rnd 255)) ))
  printf "\\$(printf %03o $nb)" | dd of="$f" bs=1 seek=$pos conv=notrunc status=none
  good=1; why=""
  $CTOOL verify --cache $cd2 $DS > $T/cv.out 2> $T/cv.err; rc=$?
  [ $rc -eq 1 ] || { good=0; why="verify exit $rc, expected 1"; }
  if [ "$what" = header ] || [ "$what" = index ]; then
    $CTOOL info --cache $cd2 $DS > $T/ci.out 2>&1; rc=$?
    { [ $rc -eq 1 ] && grep -q '^valid:  no' $T/ci.out; } || { good=0; why="$why; info does not report invalid (exit $rc)"; }
  fi
  run cc$k $D $CR --cache $cd2 || { good=0; why="$why; loader run failed"; }
  same cref cc$k || { good=0; why="$why; stream differs from the reference"; }
  grep -q warning $T/cc$k.err || { good=0; why="$why; no warning"; }
  case "$what" in unit*) [ "$(cbad $T/cc$k.err)" -ge 1 ] 2>/dev/null || { good=0; why="$why; bad units $(cbad $T/cc$k.err)"; } ;; esac
  if [ "$(ngfc $cd2)" != 0 ]; then   # what is left must be sound (rebuilt), never the corrupt file
    $CTOOL verify --cache $cd2 $DS > /dev/null 2>&1 || { good=0; why="$why; a corrupt .gfc is left for the next run"; }
  fi
  [ "$(ntmp $cd2)" = 0 ] || { good=0; why="$why; .tmp left"; }
  if [ $good = 1 ]; then corr_ok=$((corr_ok + 1)); else corr_bad=$((corr_bad + 1)); echo "  flip at $pos ($what): $why"; fi
done
check "20 flipped bytes: always detected, never served ($corr_ok/20)" test $corr_bad -eq 0
# a rank of world 2 over a corrupt cache (it never builds): the reference, and the bad file gone
for what in header unit; do
  rm -rf $T/corrupt-w; mkdir -p $T/corrupt-w; cp "$CF" $T/corrupt-w/; f=$T/corrupt-w/$(basename "$CF")
  if [ $what = header ]; then pos=$(rnd 4096); else set -- $(od -An -t u8 -j $((4096 + 32 * 2)) -N 24 "$f"); pos=$(( $1 + $(rnd $3) )); fi
  b=$(od -An -t u1 -j $pos -N 1 "$f" | tr -d ' ')
  printf "\\$(printf %03o $(( b ^ 0x40 )))" | dd of="$f" bs=1 seek=$pos conv=notrunc status=none
  run cw$what $D --epochs 2 --workers 2 --rank 1 --world 2 --cache $T/corrupt-w
  check "rank 1 of 2 over a cache with a flipped $what byte: reference stream, a warning, no corrupt file left" \
    eval 'same wref12 cw$what && grep -q warning $T/cw$what.err && [ "$(ngfc $T/corrupt-w)" = 0 ]'
done
# the run after a unit-corrupt one rebuilds and is clean
run cnext $D $CR --cache $T/corrupt
check "the run after the corrupt one: reference stream, no bad units, cache ready" \
  eval 'same cref cnext && [ "$(cbad $T/cnext.err)" = 0 ] && [ "$(cstate $T/cnext.err)" = ready ]'

echo "== 5. a changed source is never served from the old cache  (t=${SECONDS}s)"
PY=""
for p in .venv/bin/python python3; do
  if command -v $p > /dev/null 2>&1 && $p -c 'import pyarrow' > /dev/null 2>&1; then PY=$p; break; fi
done
if [ -z "$PY" ]; then
  skip "changed-source tests: no Python with pyarrow (make venv)"
else
  SD=$T/src; SC=$T/srccache; mkdir -p $SD
  X=$SD/x.parquet
  # uncompressed, plain, no statistics: an in-place change of one value keeps
  # the size and the footer, so only the file's identity tells it apart
  gen() { # FILE SCALE CODEC
    $PY - "$@" <<'PY'
import sys, numpy as np, pyarrow as pa, pyarrow.parquet as pq
path, scale, codec = sys.argv[1], float(sys.argv[2]), sys.argv[3]
n = 20000
v = np.arange(n, dtype=np.float64) * scale
v[12345] = 12345.678
t = pa.table({"id": np.arange(n, dtype=np.int64), "v": v, "k": (np.arange(n) % 7).astype(np.int32)})
pq.write_table(t, path, compression=codec, use_dictionary=False, write_statistics=False, row_group_size=5000)
PY
  }
  patch1() { # FILE OLD NEW: one float64 value, in place (same inode, same size)
    $PY - "$@" <<'PY'
import sys, struct
p, old, new = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
b = open(p, "rb").read()
pat = struct.pack("<d", old); i = b.find(pat)
assert i > 0 and b.find(pat, i + 1) < 0, "value not found once"
with open(p, "r+b") as f:
    f.seek(i); f.write(struct.pack("<d", new))
PY
  }
  SA="--batch 1000 --epochs 2 --workers 2 --shuffle-window 2 --seed 5"
  gen $X 0.5 NONE
  run sref0 $X $SA
  run sc0 $X $SA --cache $SC
  check "source v0: cached run = reference, one cache file" eval 'same sref0 sc0 && [ "$(ngfc $SC)" = 1 ]'
  run sd0 $X $SA --cache $SC
  check "source v0: second run from the cache (epoch 0: 0 source bytes)" test "$(ebytes $T/sd0.err 0)" = 0
  # expect_new NAME WHAT: the run after a change reads the source, builds a
  # new file (another name) and streams the new content; the old version's
  # file is removed once the new one is complete (no process uses it)
  expect_new() {
    local n=$1 what=$2 before
    before=$(gfc $SC)
    run sref$n $X $SA
    run sc$n $X $SA --cache $SC
    check "$what: stream equals the new content's reference" same sref$n sc$n
    check "$what: old cache not used (epoch 0 read the source, a new cache file built, the old one removed)" \
      eval '[ "$(ebytes $T/sc$n.err 0)" != 0 ] && [ "$(ngfc $SC)" = 1 ] && [ "$(gfc $SC)" != "$before" ] && [ "$(cstate $T/sc$n.err)" = ready ]'
  }
  m=$(stat -c %Y $X)
  touch -d "@$((m + 100))" $X
  expect_new 1 "touched (mtime +100 s, same bytes)"
  gen $SD/y.parquet 0.25 NONE; mv $SD/y.parquet $X
  expect_new 2 "rewritten with different content (new file, renamed over)"
  m=$(stat -c %Y $X)
  patch1 $X 12345.678 -1.0; touch -d "@$((m + 200))" $X
  expect_new 3 "one value changed in place (mtime +200 s)"
  m=$(stat -c %Y $X)
  run sd3 $X $SA --cache $SC   # served from the cache of version 3
  # a rewrite within the same second (a pipeline regenerating a file): same
  # size, inode, footer and st_mtime seconds; only the nanoseconds differ
  patch1 $X -1.0 -2.0; touch -d "@$m.500000000" $X
  expect_new 4 "one value changed in place within the same second (mtime differs in ns only)"
  gen $SD/z.parquet 0.5 NONE; cat $SD/z.parquet > $X; touch -d "@$((m + 300))" $X   # v0's bytes again, same inode
  expect_new 5 "rewritten in place (truncate + write) with other content (mtime +300 s)"
fi

echo "== 6. two concurrent builders  (t=${SECONDS}s)"
CB="--dtype f64 --batch 4096 --epochs 2 --workers 2 --shuffle-window 3 --seed 8"
run bref $KD $CB
for rnd_i in 1 2 3; do
  bd=$T/conc$rnd_i
  $BENCH $KD $CB --cache $bd --print-batches > $T/b1.out 2> $T/b1.err & p1=$!
  $BENCH $KD $CB --cache $bd --print-batches > $T/b2.out 2> $T/b2.err & p2=$!
  wait $p1; r1=$?; wait $p2; r2=$?
  check "round $rnd_i: both builders exit 0 and stream the reference" eval '[ $r1 -eq 0 ] && [ $r2 -eq 0 ] && same bref b1 && same bref b2'
  builders=0; msg=""
  for b in b1 b2; do
    if grep -q "another process is building" $T/$b.err; then msg="$msg $b:waited-on-other"
    elif [ "$(ebytes $T/$b.err 0)" = 0 ]; then msg="$msg $b:found-complete"
    else builders=$((builders + 1)); msg="$msg $b:built"; fi
  done
  echo "  round $rnd_i:$msg"
  check "round $rnd_i: at most one process built the cache ($builders)" test $builders -le 1
  check "round $rnd_i: exactly one valid .gfc, no .tmp" \
    eval '[ "$(ngfc $bd)" = 1 ] && [ "$(ntmp $bd)" = 0 ] && $CTOOL verify --cache $bd --dtype f64 $KD > /dev/null 2>&1'
done

echo "== 7. a full disk  (t=${SECONDS}s)"
FA="--batch 4096 --epochs 2 --workers 1 --shuffle-window 0 --unit-rows 20000"
run fref $FL $FA
run fref1 $FL $FA --columns dep_delay
mkdir -p $MNT
if mount -t tmpfs -o size=2m tmpfs $MNT 2> /dev/null; then
  echo "full disk: tmpfs of 2 MiB mounted at $MNT"
  # (a) a cache larger than the disk: refused up front
  run fa $FL $FA --cache $MNT/c
  check "tmpfs 2 MiB, 19 MB cache: exit 0, reference stream" same fref fa
  check "tmpfs 2 MiB, 19 MB cache: warns" grep -q warning $T/fa.err
  check "tmpfs 2 MiB, 19 MB cache: no .tmp, no .gfc left" eval '[ "$(ntmp $MNT/c)" = 0 ] && [ "$(ngfc $MNT/c)" = 0 ]'
  # (b) a cache that fits when the build starts; the disk fills up under it
  $BENCH $FL $FA --columns dep_delay --jitter-us 100000 --cache $MNT/c --print-batches > $T/fb.out 2> $T/fb.err & pb=$!
  wait_until '[ "$(ntmp $MNT/c)" != 0 ]'
  sawtmp=$(ntmp $MNT/c)
  dd if=/dev/zero of=$MNT/filler bs=64k > /dev/null 2>&1
  wait $pb; rb=$?
  check "disk filled during the build: the build had started (a .tmp existed)" test "$sawtmp" = 1
  check "disk filled during the build: exit 0, reference stream" eval '[ $rb -eq 0 ] && same fref1 fb'
  check "disk filled during the build: warns that writing the cache failed" grep -q "writing the cache failed" $T/fb.err
  check "disk filled during the build: no .tmp, no .gfc left" eval '[ "$(ntmp $MNT/c)" = 0 ] && [ "$(ngfc $MNT/c)" = 0 ]'
  check "disk filled during the build: cache off at the end" test "$(cstate $T/fb.err)" = off
  rm -f $MNT/filler
  run fc $FL $FA --columns dep_delay --cache $MNT/c
  check "space again: the next run builds it (reference stream, ready, verifies)" \
    eval 'same fref1 fc && [ "$(cstate $T/fc.err)" = ready ] && $CTOOL verify --cache $MNT/c --unit-rows 20000 --columns dep_delay $FL > /dev/null 2>&1'
  out=$($CTOOL build --cache $MNT/c2 --unit-rows 20000 $FL 2>&1); rc=$?
  check "gpufeed-cache build on a full disk: exit 1 with a message" eval '[ $rc -eq 1 ] && [ -n "$out" ] && [ "$(ntmp $MNT/c2)" = 0 ]'
  umount $MNT
  # a read-only file system: the lock cannot be created
  mkdir -p $MNT-ro
  if mount -t tmpfs -o ro,size=4m tmpfs $MNT-ro 2> /dev/null; then
    run fro $FL $FA --columns dep_delay --cache $MNT-ro
    check "read-only file system: exit 0, reference stream, warns" eval 'same fref1 fro && grep -q warning $T/fro.err'
    umount $MNT-ro
  fi
else
  echo "full disk: mount not permitted; using a file size limit (ulimit -f 2048 = 2 MiB, SIGXFSZ ignored)"
  ( trap '' XFSZ; ulimit -f 2048; $BENCH $FL $FA --cache $T/ulim --print-batches > $T/fa.out 2> $T/fa.err )
  check "ulimit -f 2 MiB, 19 MB cache: reference stream" same fref fa
  check "ulimit -f 2 MiB, 19 MB cache: warns" grep -q warning $T/fa.err
  check "ulimit -f 2 MiB, 19 MB cache: no .tmp, no .gfc left" eval '[ "$(ntmp $T/ulim)" = 0 ] && [ "$(ngfc $T/ulim)" = 0 ]'
fi

echo "== 8. a cache directory that cannot be written  (t=${SECONDS}s)"
echo x > $T/afile
run nw $FL $FA --cache $T/afile/sub; rc=$?
check "dir under a regular file: exit 0" test $rc -eq 0
check "dir under a regular file: reference stream" same fref nw
check "dir under a regular file: warns" grep -q "warning: cache directory" $T/nw.err
$CTOOL build --cache $T/afile/sub $DS > /dev/null 2> $T/nwb.err; rc=$?
check "gpufeed-cache build into it: exit 1 with a message" eval '[ $rc -eq 1 ] && [ -s $T/nwb.err ]'

echo "== 9. gpufeed-cache: rm, info, verify, bad arguments  (t=${SECONDS}s)"
RD=$T/rmtest
$CTOOL build --cache $RD $DS > /dev/null 2>&1
$CTOOL info --cache $RD $DS > $T/info.out; rc=$?
check "info on a built cache: exit 0, valid, $U units, $NROWS rows" \
  eval '[ $rc -eq 0 ] && grep -q "^valid:  yes" $T/info.out && grep -q "^units:  $U\$" $T/info.out && grep -q "^rows:   $NROWS\$" $T/info.out'
check "info names the file that exists" eval '[ -f "$(sed -n "s/^path: *//p" $T/info.out)" ]'
$CTOOL rm --cache $RD $DS > /dev/null; rc=$?
check "rm: exit 0, removes the file" eval '[ $rc -eq 0 ] && [ "$(ngfc $RD)" = 0 ] && [ "$(ntmp $RD)" = 0 ]'
$CTOOL info --cache $RD $DS > $T/info2.out 2>&1; rc=$?
check "info on a missing cache: exit 1, exists no" eval '[ $rc -eq 1 ] && grep -q "^exists: no" $T/info2.out'
$CTOOL verify --cache $RD $DS > /dev/null 2>&1; rc=$?
check "verify on a missing cache: exit 1" test $rc -eq 1
$CTOOL rm --cache $RD $DS > /dev/null 2>&1; rc=$?
check "rm on a missing cache: exit 0" test $rc -eq 0
$CTOOL info --cache $RD tests/data/no_such_file.parquet > /dev/null 2>&1; rc=$?
check "a missing source file: exit 1" test $rc -eq 1
for args in "" "frobnicate --cache $RD $FL" "build" "build $FL" "build --cache $RD" "info --cache $RD --bogus $FL" \
            "build --cache $RD --unit-rows 0 $FL" "build --cache $RD --unit-rows -5 $FL" "build --cache $RD --dtype f33 $FL" \
            "build --cache $RD --workers 0 $FL" "verify --cache"; do
  $CTOOL $args > /dev/null 2>&1; rc=$?
  check "bad arguments ($args): exit 2" test $rc -eq 2
done
check "bad arguments made no cache" test "$(ngfc $RD)" = 0
$BENCH $FL --batch 4096 --cache > /dev/null 2>&1; rc=$?
check "gpufeed-bench --cache without a DIR: exit 2" test $rc -eq 2

echo "== 10. one cache however the path is spelled, and through chmod, rename-over, cp -p, rsync -a  (t=${SECONDS}s)"
ID=$T/ident; IC=$T/identcache; mkdir -p $ID/data $ID/elsewhere
cp tests/data/ids.parquet $ID/data/d.parquet
ln -s data $ID/link
IA="--batch 1000 --epochs 2 --workers 2 --shuffle-window 2 --seed 3"
keyof() { $CTOOL info --cache $IC "$@" 2>/dev/null | sed -n 's/^key: *//p'; }
k_rel=$(keyof $ID/data/d.parquet); k_abs=$(keyof "$(pwd)/$ID/data/d.parquet")
k_sym=$(keyof $ID/link/d.parquet); k_dot=$(keyof $ID/link/../data/./d.parquet); k_dir=$(keyof $ID/link/)
check "relative, absolute, symlinked-directory, dotted and directory spellings give one key ($k_rel)" \
  eval '[ -n "$k_rel" ] && [ "$k_rel" = "$k_abs" ] && [ "$k_rel" = "$k_sym" ] && [ "$k_rel" = "$k_dot" ] && [ "$k_rel" = "$k_dir" ]'
run iref $ID/data/d.parquet $IA
run ib0 $ID/data/d.parquet $IA --cache $IC
check "relative path: builds the cache, reference stream" eval 'same iref ib0 && [ "$(cstate $T/ib0.err)" = ready ]'
# served_by NAME WHAT PATH: a run over PATH reads 0 source bytes (epoch 0 too), streams the reference, one cache file
served_by() {
  local n=$1 ok=0
  run $n $3 $IA --cache $IC
  same iref $n && all_zero $T/$n.err 0 1 && [ "$(ngfc $IC)" = 1 ] && [ "$(keyof $ID/data/d.parquet)" = "$k_rel" ] && ok=1
  check "$2: served from the same cache (0 source bytes), reference stream, one cache file" test $ok = 1
}
served_by ib1 "absolute path" "$(pwd)/$ID/data/d.parquet"
served_by ib2 "through a symlinked directory" $ID/link/d.parquet
chmod 600 $ID/data/d.parquet
served_by ib3 "after chmod 600" $ID/data/d.parquet
ino0=$(stat -c %i $ID/data/d.parquet)
cp -p $ID/data/d.parquet $ID/data/d.new && mv $ID/data/d.new $ID/data/d.parquet
served_by ib4 "after a copy with the same bytes and times renamed over it (inode $ino0 -> $(stat -c %i $ID/data/d.parquet))" $ID/data/d.parquet
cp -p $ID/data/d.parquet $ID/elsewhere/d.parquet && rm $ID/data/d.parquet && cp -p $ID/elsewhere/d.parquet $ID/data/d.parquet
served_by ib5 "after cp -p back from a copy (new inode, times kept)" $ID/data/d.parquet
if command -v rsync > /dev/null 2>&1; then
  rm $ID/data/d.parquet && rsync -a $ID/elsewhere/d.parquet $ID/data/d.parquet
  served_by ib6 "after rsync -a back from a copy" $ID/data/d.parquet
else
  skip "rsync -a: rsync is not installed (cp -p above keeps the same attributes)"
fi
touch -d "@$(( $(stat -c %Y $ID/data/d.parquet) + 5 ))" $ID/data/d.parquet
check "the one thing that changes the key: the modification time (touched +5 s)" eval '[ -n "$(keyof $ID/data/d.parquet)" ] && [ "$(keyof $ID/data/d.parquet)" != "$k_rel" ]'

echo "== 11. five content changes: at most 2 cache files, never a stale batch  (t=${SECONDS}s)"
if [ -z "$PY" ]; then
  skip "content changes: no Python with pyarrow (make venv)"
else
  FD=$T/five; FC=$T/fivecache; mkdir -p $FD
  FA="--batch 1000 --epochs 2 --workers 2 --shuffle-window 2 --seed 9"
  newver() { gen $FD/.x.tmp "$1" SNAPPY && mv $FD/.x.tmp $FD/x.parquet; }   # a new inode: an open reader keeps the old one
  newver 1
  run fv0 $FD/x.parquet $FA --cache $FC
  most=$(ngfc $FC)
  for v in 2 3 4 5 6; do
    newver $v
    if [ $v = 4 ]; then
      # a long run on version 4's cache holds it open while version 5 completes
      run fv4 $FD/x.parquet $FA --cache $FC
      # its batch lines go to a reader that reads nothing until told: once the pipe is
      # full the run blocks, holding version 4's cache open however fast the machine
      rm -f $T/fvslow.go
      { $BENCH $FD/x.parquet $FA --epochs 1000 --cache $FC --print-batches 2> $T/fvslow.err; echo $? > $T/fvslow.rc; } |
        $PY -c 'import os, sys, time
while not os.path.exists(sys.argv[1]): time.sleep(0.05)
sys.stdout.write(sys.stdin.read())' $T/fvslow.go > $T/fvslow.out & slow=$!
      # until it holds version 4's cache file open (a loaded machine may take a while to start it)
      wait_until 'ls -l /proc/[0-9]*/fd 2> /dev/null | grep -q "$FC/.*\.gfc\$"'
      continue
    fi
    run fref$v $FD/x.parquet $FA
    run fv$v $FD/x.parquet $FA --cache $FC
    check "content change $((v - 1)) (scale $v): stream equals the new content's reference, read from the source" \
      eval 'same fref$v fv$v && [ "$(ebytes $T/fv$v.err 0)" != 0 ] && [ "$(cstate $T/fv$v.err)" = ready ]'
    n=$(ngfc $FC); [ "$n" -gt "$most" ] && most=$n
    if [ $v = 5 ]; then
      check "version 4's cache in use by a running loader: kept (2 files) while version 5's is complete" test "$n" = 2
      touch $T/fvslow.go; wait $slow; rs=$(cat $T/fvslow.rc 2> /dev/null || echo missing)
      check "the long run on version 4 ends well (its cache was never removed under it)" eval '[ "$rs" = 0 ] && all_zero $T/fvslow.err 0 39 && [ "$(wc -l < $T/fvslow.out)" -gt 1000 ]'
    fi
  done
  check "five content changes: at most 2 cache files at any time ($most), 1 at the end" eval '[ "$most" -le 2 ] && [ "$(ngfc $FC)" = 1 ]'
  check "no .tmp and no lock files left" eval '[ "$(ntmp $FC)" = 0 ] && ! ls $FC | grep -q lock'
fi

echo "== 12. a prebuild racing a loader (10 rounds)  (t=${SECONDS}s)"
RC=$T/race
race_ok=0; waited=0
for r in $(seq 1 10); do
  rm -rf $RC
  $BENCH $KD $K --batch 4096 --epochs 2 --workers 2 --shuffle-window 3 --seed 3 --cache $RC --print-batches > $T/race_l.out 2> $T/race_l.err & lp=$!
  ms=$(( 30 + $(rnd 300) ))
  sleep "$(printf '0.%03d' $ms)"
  $CTOOL build --cache $RC $K --workers 2 $KD > $T/race_b.out 2> $T/race_b.err; rb=$?
  wait $lp; rl=$?
  cp $T/race_l.out $T/racel.out
  good=1; why=""
  [ $rb = 0 ] && grep -q '^built .*verified$' $T/race_b.out || { good=0; why="prebuild exit $rb: $(tail -2 $T/race_b.err)"; }
  [ $rl = 0 ] && same kref racel || { good=0; why="$why; loader exit $rl or its stream differs"; }
  [ "$(ngfc $RC)" = 1 ] && [ "$(ntmp $RC)" = 0 ] || { good=0; why="$why; $(ngfc $RC) .gfc, $(ntmp $RC) .tmp"; }
  $CTOOL verify --cache $RC $K $KD > /dev/null 2>&1 || { good=0; why="$why; verify fails"; }
  grep -q 'waiting for' $T/race_b.err && waited=$((waited + 1))
  if [ $good = 1 ]; then race_ok=$((race_ok + 1)); else echo "  round $r (prebuild after ${ms} ms): $why"; fi
done
echo "  the prebuild waited for the loader's build in $waited of 10 rounds"
check "a prebuild racing a loader succeeds 10 times out of 10 ($race_ok/10)" test $race_ok = 10
# building DIR PID: waits until the cache's listing names PID as its builder (its header written)
building() { wait_until "$CTOOL ls '$1' 2> /dev/null | grep -q 'building (process $2, '"; }
# a prebuild started once a loader is known to build (its listing says so; no sleep decides): it waits, then verifies
RP=$T/racewait; rm -rf $RP
$BENCH $KD $K --batch 4096 --epochs 2 --workers 2 --shuffle-window 3 --seed 3 --jitter-us 50000 --cache $RP --print-batches > $T/rw_l.out 2> $T/rw_l.err & lp=$!
building $RP $lp; bw=$?
$CTOOL build --cache $RP $K --workers 2 $KD > $T/rw_b.out 2> $T/rw_b.err; rb=$?
wait $lp; rl=$?
cp $T/rw_l.out $T/rwl.out
check "a prebuild while a loader builds: it waits (progress lines), then finds the cache built and verified; the loader's stream as without it" \
  eval '[ $bw = 0 ] && [ $rb = 0 ] && grep -q "waiting for" $T/rw_b.err && grep -q "^built .*verified$" $T/rw_b.out && [ $rl = 0 ] && same kref rwl'
# --no-wait, the listing of a build in progress, a build whose process died
RW=$T/racenw; rm -rf $RW
$BENCH $KD $K --batch 4096 --epochs 1 --workers 1 --jitter-us 300000 --cache $RW > /dev/null 2>&1 & lp=$!
building $RW $lp
$CTOOL build --cache $RW $K --no-wait $KD > /dev/null 2> $T/nw.err; rc=$?
check "build --no-wait while a loader builds: exit 1 naming the other process" eval '[ $rc = 1 ] && grep -q "another process (pid $lp) is building" $T/nw.err'
$CTOOL ls $RW > $T/ls_building.out
check "ls shows the build in progress and its process" grep -q "building (process $lp, " $T/ls_building.out
kill -KILL $lp 2> /dev/null; wait $lp 2> /dev/null
$CTOOL ls $RW > $T/ls_dead.out
check "ls shows the dead process's build as abandoned" grep -q "abandoned build" $T/ls_dead.out
out=$($CTOOL build --cache $RW $K --no-wait $KD 2>&1); rc=$?
check "build after the builder died: exit 0 (the dead one's lock is gone)" eval '[ $rc = 0 ] && [ "$(ngfc $RW)" = 1 ] && [ "$(ntmp $RW)" = 0 ]'

echo "== 13. make demo: epochs 1 and 2 read 0 source bytes  (t=${SECONDS}s)"
demo_ok=0
for r in 1 2 3 4 5; do
  rm -rf $T/demo-cache
  $BENCH examples/data/flights.parquet --batch 4096 --workers 2 --seed 1 --epochs 3 --shuffle-window 2 --cache $T/demo-cache > /dev/null 2> $T/demo.err
  if [ "$(ebytes $T/demo.err 0)" != 0 ] && all_zero $T/demo.err 1 2 && [ "$(cstate $T/demo.err)" = ready ]; then demo_ok=$((demo_ok + 1))
  else echo "  run $r: $(grep -E '^epoch|^cache' $T/demo.err | tr '\n' ' ')"; fi
done
check "the demo's command: epoch 0 builds, epochs 1 and 2 read 0 source bytes (5 of 5 runs: $demo_ok)" test $demo_ok = 5

echo "== 14. gpufeed-cache: the loader's features, ls, prune, the directory budget  (t=${SECONDS}s)"
FT="--feature dep_delay:f32 --feature distance:f32 --feature carrier:i32:hash=1000"
LC=$T/lscache; rm -rf $LC
out=$($CTOOL build --cache $LC $FT --verify-crc $FL 2> $T/ft.err); rc=$?
p1000=$(echo "$out" | sed -n 's/^built \(.*\.gfc\): .*/\1/p')
check "build with the README trainer's features (--feature, hash=1000): exit 0, verified" eval '[ $rc = 0 ] && [[ "$out" == built*verified ]]'
run ftl $FL --batch 4096 --epochs 1 $FT --cache $LC
check "gpufeed-bench with the same --feature options is served by it (0 source bytes)" eval 'all_zero $T/ftl.err 0 0 && [ "$(cfrom $T/ftl.err)" -ge 1 ]'
run ftl2 $FL --batch 4096 --epochs 1 --feature dep_delay:f32 --feature distance:f32 --feature carrier:i32:hash=999 --cache $LC
check "another hash bucket count is another cache (read the source)" eval '[ "$(ebytes $T/ftl2.err 0)" != 0 ] && [ "$(ngfc $LC)" = 2 ]'
$CTOOL ls $LC > $T/ls.out; rc=$?
check "ls: exit 0, both caches with their features, sizes and last use" \
  eval '[ $rc = 0 ] && grep -q "features: dep_delay:f32 distance:f32 carrier:i32:hash=1000$" $T/ls.out && grep -q "carrier:i32:hash=999" $T/ls.out && grep -q "^2 files, " $T/ls.out && [ "$(grep -c " ready .* last use " $T/ls.out)" = 2 ]'
check "ls names the dataset by its canonical path" grep -q "dataset:  $(pwd)/examples/data/flights.parquet$" $T/ls.out
sz=$(stat -c %s "$(ls -tr $LC/*.gfc | tail -1)")
echo junk > $LC/gpufeed-0123.gfc; : > $LC/gpufeed-0123.gfc.lock; : > $LC/gpufeed-0123.gfc.tmp
out=$($CTOOL prune $LC); rc=$?
check "prune: removes the invalid file, the old lock file and the dead .tmp, keeps both caches" \
  eval '[ $rc = 0 ] && [[ "$out" == "removed 3 files"* ]] && [ "$(ngfc $LC)" = 2 ] && [ "$(ntmp $LC)" = 0 ] && ! ls $LC | grep -q lock'
old=$(ls $LC/*.gfc | grep -v "$p1000")
touch -a -d '-1 hour' "$old"   # the hash=999 cache: least recently used
out=$($CTOOL prune $LC --max-bytes $((sz + 100))); rc=$?
check "prune --max-bytes: the least recently used cache goes, the other stays" eval '[ $rc = 0 ] && [ ! -e "$old" ] && [ -e "$p1000" ] && [ "$(ngfc $LC)" = 1 ]'
out=$($CTOOL build --cache $LC --max-bytes $((sz + 100)) --feature dep_delay:f32 --feature distance:f32 --feature carrier:i32:hash=998 $FL 2>&1); rc=$?
check "build --max-bytes (the directory budget): the new cache replaces the one no process uses" eval '[ $rc = 0 ] && [ "$(ngfc $LC)" = 1 ] && [ ! -e "$p1000" ]'
$CTOOL prune $LC --max-bytes 1 > /dev/null; rc=$?
check "prune --max-bytes 1 with nothing in use: everything goes" eval '[ $rc = 0 ] && [ "$(ngfc $LC)" = 0 ]'
for args in "ls" "ls $LC extra" "prune" "prune $LC --max-bytes 0" "prune $LC --max-bytes 12Q" "build --cache $LC --feature dep_delay:f33:hash=5 $FL" \
            "build --cache $LC --feature dep_delay:f32:width=0 $FL" "build --cache $LC --feature dep_delay:f32 --columns distance $FL" \
            "build --cache $LC --hash 1000 $FL" "build --cache $LC --feature :f32 $FL"; do
  $CTOOL $args > /dev/null 2> $T/badarg.err; rc=$?
  check "bad arguments ($args): exit 2 with a message" eval '[ $rc = 2 ] && [ -s $T/badarg.err ]'
done
$CTOOL ls $T/no/such/dir > /dev/null 2> $T/lsmissing.err; rc=$?
check "ls of a missing directory: exit 1 naming it" eval '[ $rc = 1 ] && grep -q "no/such/dir" $T/lsmissing.err'
$BENCH $FL --batch 4096 --feature dep_delay:f32 --columns distance > /dev/null 2>&1; rc=$?
check "gpufeed-bench --feature with --columns: exit 2" test $rc = 2
# files read with pread beyond the descriptor pool's bound (a quarter of ulimit -n: 10 here, 24 files): the cache is
# built and served as for mapped files (it was never used past the bound: a pooled file's closed descriptor read as
# "it cannot be read since the dataset was opened")
PD=$T/pooled; mkdir -p $PD
for i in $(seq -w 1 24); do cp tests/data/ids.parquet $PD/p$i.parquet; done
pooled() { (ulimit -n 40; "$@"); }
pooled $BENCH $PD --batch 4096 --workers 2 --epochs 2 --seed 3 --shuffle-window 2 --pread --print-batches > $T/pool_ref.out 2> $T/pool_ref.err
pooled $BENCH $PD --batch 4096 --workers 2 --epochs 2 --seed 3 --shuffle-window 2 --pread --cache $T/pc --print-batches > $T/pool_b.out 2> $T/pool_b.err
check "pooled pread files: the decoded stream and the one building the cache are equal, epoch 1 from the cache" \
  eval '[ -s $T/pool_ref.out ] && cmp -s $T/pool_ref.out $T/pool_b.out && [ "$(ebytes $T/pool_b.err 1)" = 0 ] && ! grep -q "cache not used" $T/pool_b.err'
pooled $BENCH $PD --batch 4096 --workers 2 --epochs 2 --seed 3 --shuffle-window 2 --pread --cache $T/pc --print-batches > $T/pool_s.out 2> $T/pool_s.err
check "pooled pread files: a second run serves every unit from the cache (no source byte), the same stream" \
  eval 'cmp -s $T/pool_ref.out $T/pool_s.out && all_zero $T/pool_s.err 0 1 && [ "$(cstate $T/pool_s.err)" = ready ]'
rm -rf $T/pc
out=$(pooled $CTOOL build --pread --cache $T/pc $PD 2>&1); rc=$?
pooled $BENCH $PD --batch 4096 --workers 2 --epochs 2 --seed 3 --shuffle-window 2 --pread --cache $T/pc --print-batches > $T/pool_c.out 2> $T/pool_c.err
check "pooled pread files: gpufeed-cache build --pread, then the loader serves it (the same stream)" \
  eval '[ $rc = 0 ] && cmp -s $T/pool_ref.out $T/pool_c.out && all_zero $T/pool_c.err 0 1'
nl=$(find $T -name '*.lock' | wc -l)
check "no lock file anywhere under the test directory after all these runs ($nl)" test "$nl" = 0

echo "$P passed, $F failed, $SK skipped"
[ $F -eq 0 ]
