#!/usr/bin/env bash
# Faults while gpufeed-bench runs the loader and its tensor cache, as a user
# makes them from a shell (the C-level cases, with their own threads: 
# tests/test_faults.c). Each case compares every batch's line of
# --print-batches (epoch index rows hash) with a clean run of the same seed,
# with random timing (--jitter-us, and the fault struck after a random
# delay), TRIES times:
#   1. a source rewritten in place (dd conv=notrunc: same size, same footer,
#      other values) while the cache is built, then put back (after the
#      build with cp -p, or during it in place and touch -r: its old bytes
#      and times): the runs after stream the original;
#   2. 2,000 bytes flipped in the cache file while it is served (shuffled
#      epochs; the cache held in memory, --cache-no-ram, --cache-verify every):
#      exit 0, the reference stream;
#   3. the cache file cut to half while it is served: the same, no signal;
#   4. a source cut to half during an epoch, read with --pread: exit 1 naming
#      the file, no signal, the batches before it the reference's;
#   5. out of file descriptors: a message that says so (mapped files need
#      none once mapped);
#   6. desc fields out of range (start epoch 2^62, INT64_MAX, a start batch
#      past the epoch's end): exit 1 naming them, no hang;
#   7. a source on FUSE (tests/fuse_mirror.c, mounted here; root and
#      /dev/fuse, else SKIP): read with pread by default (never in the
#      process's maps), mapped with --mmap; cut short under a running loader:
#      exit 1 naming it or (pages the kernel kept) the reference, no signal.
# A run that ends by a signal, or outlives its time limit, is a failure.
#
#   bash tests/test_faults.sh           (last line: "N passed, N failed")
#
# Environment: TRIES (default 10); GPUFEED_BENCH, FAULTS_BIN (tests/test_faults.c
# built; default: built here into build/faults-test/); FAULTS_TEST_SEED.
set -u
cd "$(dirname "$0")/.."
T=${FAULTS_TEST_DIR:-build/faults-test}
MNT=$T/fuse
fuse_down() { mountpoint -q "$MNT" 2> /dev/null && umount -l "$MNT"; return 0; }
trap fuse_down EXIT
fuse_down
rm -rf "$T"; mkdir -p "$T"
TRIES=${TRIES:-10}
P=0; F=0; SK=0
ok()  { P=$((P + 1)); echo "PASS $1"; }
bad() { F=$((F + 1)); echo "FAIL $1"; }
skip() { SK=$((SK + 1)); echo "SKIP $1"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }

BENCH=${GPUFEED_BENCH:-}
FB=${FAULTS_BIN:-}
if [ -z "$BENCH" ]; then
  BENCH=$T/gpufeed-bench
  cc -O2 -std=c99 -I. tools/gpufeed-bench.c -o "$BENCH" -lpthread -lm || { echo "FAIL build gpufeed-bench"; echo "0 passed, 1 failed"; exit 1; }
fi
if [ -z "$FB" ]; then
  FB=$T/test_faults
  cc -O1 -std=c99 -I. tests/test_faults.c -o "$FB" -lpthread -lm || { echo "FAIL build test_faults"; echo "0 passed, 1 failed"; exit 1; }
fi
SEED=${FAULTS_TEST_SEED:-$(( $(date +%s) % 100000 ))}
RANDOM=$SEED
echo "seed $SEED (FAULTS_TEST_SEED=$SEED reproduces the random choices), $TRIES tries a case"
rnd() { echo $(( (RANDOM << 15 | RANDOM) % $1 )); }   # 0 .. N-1
ms_sleep() { sleep "$(printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)))"; }
# run NAME LIMIT ARGS...: gpufeed-bench --print-batches into $T/NAME.out/.err, its exit status in $T/NAME.rc
run() { local n=$1 lim=$2; shift 2; timeout -s KILL "$lim" "$BENCH" "$@" --print-batches > "$T/$n.out" 2> "$T/$n.err"; echo $? > "$T/$n.rc"; }
rc() { cat "$T/$1.rc"; }
same() { cmp -s "$T/$1.out" "$T/$2.out" && [ -s "$T/$1.out" ]; }
# the lines of NAME are the first lines of REF
prefix() { local n; n=$(wc -l < "$T/$1.out"); cmp -s "$T/$1.out" <(head -n "$n" "$T/$2.out"); }
gfc() { local f; for f in "$1"/*.gfc; do [ -e "$f" ] && echo "$f"; done | head -1; }
# building DIR PID: waits (up to 2 minutes, while PID lives) until DIR holds a build's .tmp: a loaded machine may start a
# process late, and no check here depends on how soon
building() { local w f; for w in $(seq 1 6000); do for f in "$1"/*.tmp; do [ -e "$f" ] && return 0; done; kill -0 "$2" 2> /dev/null || return 1; sleep 0.02; done; return 1; }

echo "== 1. a source rewritten in place while the cache is built, then put back (cp -p)  (t=${SECONDS}s)"
A=$T/a.parquet; B=$T/b.parquet; S=$T/s.parquet
"$FB" --write-pair $A $B
touch -d '2026-01-02 03:04:05.123456789' $A
check "the two files: same size, other bytes" eval '[ "$(stat -c %s $A)" = "$(stat -c %s $B)" ] && ! cmp -s $A $B'
J1=$(( TRIES > 3 ? 150000 : 40000 ))   # per unit (8 units, one worker): the build takes ~8 x J1 / 2
cp -p $A $S
run ref1 60 $S --batch 3000 --epochs 2 --seed 1 --shuffle-window 2
good=0; disc=0
for t in $(seq 1 $((2 * TRIES))); do
  C=$T/c1-$t; cp -p $A $S
  if [ $t = 1 ]; then
    # the first try lands in the build for sure: a slow build (8 units of 0.2-0.4 s), stopped once its .tmp is there
    # (still building), the source rewritten, then let go on
    timeout -s KILL 120 "$BENCH" $S --batch 3000 --workers 1 --jitter-us 400000 --cache $C > /dev/null 2> $T/b1.err & bp=$!
    building $C $bp
    kp=$(pgrep -P $bp)   # gpufeed-bench, the child of timeout
    kill -STOP $kp
    check "the first try's build was still running when the source was rewritten" eval 'for f in $C/*.tmp; do [ -e "$f" ]; done'
    dd if=$B of=$S conv=notrunc status=none
    kill -CONT $kp
  else
    # the others at a random moment: racing the build's reads, its end or its rename
    timeout -s KILL 120 "$BENCH" $S --batch 3000 --workers 1 --jitter-us $J1 --cache $C > /dev/null 2> $T/b1.err & bp=$!
    ms_sleep $(rnd $(( 8 * J1 / 2000 + 1 )))
    dd if=$B of=$S conv=notrunc status=none
  fi
  # half of the tries put it back during the build: its bytes in place and its times (touch -r), no truncation
  # (cp truncates first: a mapped source cut short raises SIGBUS, the documented limit; --pread avoids it)
  [ $((t % 2)) = 0 ] && { ms_sleep $(rnd $(( 4 * J1 / 2000 + 1 ))); dd if=$A of=$S conv=notrunc status=none; touch -r $A $S; }
  wait $bp; brc=$?
  grep -q "while the cache was built" $T/b1.err && disc=$((disc + 1))
  cp -p $A $S
  run after1 60 $S --batch 3000 --epochs 2 --seed 1 --shuffle-window 2 --cache $C
  run after2 60 $S --batch 3000 --epochs 2 --seed 1 --shuffle-window 2 --cache $C
  if [ $brc -lt 128 ] && [ "$(rc after1)" = 0 ] && [ "$(rc after2)" = 0 ] && same ref1 after1 && same ref1 after2; then good=$((good + 1))
  else echo "  try $t: build exit $brc, runs after exit $(rc after1)/$(rc after2), $(diff $T/ref1.out $T/after2.out | grep -c '^>') differing lines"; fi
done
echo "  builds discarded (the rewrite landed in them): $disc of $((2 * TRIES))"
check "rewritten during the build, put back: the runs after stream the original ($good of $((2 * TRIES)) tries)" test $good = $((2 * TRIES))
check "the rewrite landed in a build at least once (the first try's, by construction) and was discarded" test $disc -ge 1

# the cache struck while it is served: flights.parquet, 21 units, 2 workers, shuffled
FL=examples/data/flights.parquet
EP=$(( TRIES > 3 ? 30 : 8 ))
CA="--batch 4096 --workers 2 --epochs $EP --shuffle-window 2 --seed 11 --unit-rows 16384 --dtype f64"
run ref2 120 $FL $CA
check "reference run over flights ($EP epochs): exit 0" test "$(rc ref2)" = 0
"$BENCH" $FL $CA --epochs 1 --cache $T/timing > /dev/null 2>&1
t0=$(date +%s%N); "$BENCH" $FL $CA --jitter-us 5000 --cache $T/timing > /dev/null 2>&1; RUNMS=$(( ($(date +%s%N) - t0) / 1000000 + 1 ))
echo "a served run takes ${RUNMS} ms: the faults strike at a random moment of it"
# strike NAME KIND: TRIES tries in each serving mode; the fault after a random delay
strike() {
  local name=$1 kind=$2 mode t good=0 n=0 C f
  for mode in ram slots every; do
    local extra=""
    case $mode in slots) extra="--cache-no-ram" ;; every) extra="--cache-verify every" ;; esac
    for t in $(seq 1 $TRIES); do
      C=$T/$name-$mode-$t; n=$((n + 1))
      "$BENCH" $FL $CA --epochs 1 --cache $C > /dev/null 2>&1
      f=$(gfc $C)
      [ -n "$f" ] || { echo "  $mode try $t: no cache built"; continue; }
      timeout -s KILL 300 "$BENCH" $FL $CA --jitter-us 5000 --cache $C $extra --print-batches > $T/s.out 2> $T/s.err & sp=$!
      ms_sleep $(rnd $RUNMS)
      if [ $kind = flip ]; then "$FB" --flip "$f" 2000 $RANDOM; else truncate -s $(( $(stat -c %s "$f") / 2 )) "$f"; fi
      wait $sp; src=$?
      if [ $src = 0 ] && cmp -s $T/s.out $T/ref2.out; then good=$((good + 1))
      else echo "  $mode try $t: exit $src, $(diff $T/ref2.out $T/s.out | grep -c '^[<>]') differing lines; $(grep warning $T/s.err | tail -1)"; fi
      rm -rf $C
    done
  done
  check "$name while served ($EP shuffled epochs, jitter; held in memory, --cache-no-ram, --cache-verify every): exit 0, 0 wrong batches ($good of $n)" test $good = $n
}
echo "== 2. 2,000 bytes flipped in the cache file while it is served  (t=${SECONDS}s)"
strike flip flip
echo "== 3. the cache file cut to half while it is served  (t=${SECONDS}s)"
strike truncate truncate

echo "== 4. a source cut to half during an epoch, read with --pread  (t=${SECONDS}s)"
cp $A $T/p.parquet
run ref4 60 $T/p.parquet --batch 1000 --epochs 3 --seed 2 --shuffle-window 2 --workers 2 --pread
good=0; errs=0
for t in $(seq 1 $TRIES); do
  cp $A $T/p.parquet
  timeout -s KILL 60 "$BENCH" $T/p.parquet --batch 1000 --epochs 3 --seed 2 --shuffle-window 2 --workers 2 --pread --jitter-us 20000 \
    --print-batches > $T/p4.out 2> $T/p4.err & pp=$!
  ms_sleep $(( t == 1 ? $(rnd 40) : $(rnd 150) ))   # the run takes ~120 ms
  truncate -s $(( $(stat -c %s $T/p.parquet) / 2 )) $T/p.parquet
  wait $pp; prc=$?
  if [ $prc = 1 ] && grep -q "p.parquet" $T/p4.err && prefix p4 ref4; then good=$((good + 1)); errs=$((errs + 1))
  elif [ $prc = 0 ] && same p4 ref4; then good=$((good + 1))   # cut after the last read
  else echo "  try $t: exit $prc; $(tail -1 $T/p4.err)"; fi
done
check "cut during an epoch with --pread: exit 1 naming the file (or a whole run), never a signal, the batches before it right ($good of $TRIES)" test $good = $TRIES
check "the cut landed during a run at least once ($errs)" test $errs -ge 1

echo "== 5. out of file descriptors  (t=${SECONDS}s)"
mkdir -p $T/many; for i in $(seq -w 1 40); do cp tests/data/ids.parquet $T/many/p$i.parquet; done
# two descriptors to spare: too few for the pool of files read with pread
( ulimit -n 5; exec "$BENCH" $T/many --batch 1000 --pread ) > /dev/null 2> $T/fd.err; frc=$?
check "ulimit -n 5 with --pread: exit 1, the message says the process is out of file descriptors" eval '[ $frc = 1 ] && grep -q "out of file descriptors" $T/fd.err'
# mapped files close their descriptors once mapped; pread files share a pool of a quarter of the limit
for m in "" --pread; do
  ( ulimit -n 24; exec "$BENCH" $T/many --batch 1000 $m ) > /dev/null 2> $T/fd2.err; frc=$?
  check "40 files under ulimit -n 24 ${m:-(mapped)}: every batch" eval '[ $frc = 0 ]'
done

echo "== 6. desc fields out of range  (t=${SECONDS}s)"
IDS=tests/data/ids.parquet
for v in 4611686018427387904 9223372036854775807; do
  timeout -s KILL 20 "$BENCH" $IDS --batch 700 --start-epoch $v > /dev/null 2> $T/r6.err; r=$?
  check "--start-epoch $v: exit 1 naming it, no hang, no signal" eval '[ $r = 1 ] && grep -q -e "start-epoch $v" -e "start_epoch $v" $T/r6.err'
done
NB=$("$BENCH" $IDS --batch 700 --print-batches 2> /dev/null | wc -l)
timeout -s KILL 20 "$BENCH" $IDS --batch 700 --start-batch $((NB + 1)) > /dev/null 2> $T/r6.err; r=$?
check "--start-batch $((NB + 1)) (the epoch has $NB): exit 1 naming the epoch's batch count" eval '[ $r = 1 ] && grep -q "which has $NB batches" $T/r6.err'
run r6e 20 $IDS --batch 700 --start-batch $NB --epochs 2
check "--start-batch $NB (the count): epoch 1 from its first batch" eval '[ "$(rc r6e)" = 0 ] && [ "$(head -1 $T/r6e.out | cut -d" " -f1-2)" = "1 0" ]'

echo "== 7. a source on a FUSE file system  (t=${SECONDS}s)"
FS=$T/fusesrc; mkdir -p $MNT $FS
if ! cc -O1 -std=c99 tests/fuse_mirror.c -o $T/fuse_mirror 2> $T/fusebuild.err; then skip "FUSE: tests/fuse_mirror.c does not build here ($(head -1 $T/fusebuild.err))"
else
  cp $A $FS/f.parquet
  $T/fuse_mirror $FS $MNT 2> $T/fuse.err & fp=$!
  for w in $(seq 1 50); do [ -e $MNT/f.parquet ] && break; kill -0 $fp 2> /dev/null || break; sleep 0.1; done
  if [ ! -e $MNT/f.parquet ]; then skip "FUSE: cannot mount here (root and /dev/fuse needed): $(head -1 $T/fuse.err)"
  else
    # maps_of FLAGS: 1 when a running loader over the FUSE file has it mapped
    maps_of() {
      local bp m=0 w
      "$BENCH" $MNT/f.parquet --batch 1000 --epochs 2 --jitter-us 50000 "$@" > /dev/null 2>&1 & bp=$!
      for w in $(seq 1 20); do grep -q "$MNT/f.parquet" /proc/$bp/maps 2> /dev/null && m=1; sleep 0.05; done
      wait $bp; echo $m
    }
    check "FUSE: statfs says FUSE ($(stat -f -c %T $MNT))" eval '[ "$(stat -f -c %t $MNT)" = 65735546 ]'
    check "FUSE: a running loader reads the file with pread (it is not in the process's maps)" test "$(maps_of)" = 0
    check "FUSE: with --mmap it is mapped (what the default avoids)" test "$(maps_of --mmap)" = 1
    cp $A $T/fref.parquet
    run ref7 60 $T/fref.parquet --batch 1000 --epochs 3 --seed 2 --shuffle-window 2 --workers 2
    run f7 60 $MNT/f.parquet --batch 1000 --epochs 3 --seed 2 --shuffle-window 2 --workers 2
    check "FUSE: the stream equals the local file's" same f7 ref7
    good=0; errs=0
    for t in $(seq 1 $TRIES); do
      cp $A $FS/f.parquet
      timeout -s KILL 60 "$BENCH" $MNT/f.parquet --batch 1000 --epochs 3 --seed 2 --shuffle-window 2 --workers 2 --jitter-us 20000 \
        --print-batches > $T/f7.out 2> $T/f7.err & pp=$!
      ms_sleep $(( t == 1 ? $(rnd 40) : $(rnd 150) ))
      truncate -s $(( $(stat -c %s $FS/f.parquet) / 2 )) $FS/f.parquet
      wait $pp; prc=$?
      if [ $prc = 1 ] && grep -q "f.parquet" $T/f7.err && prefix f7 ref7; then good=$((good + 1)); errs=$((errs + 1))
      elif [ $prc = 0 ] && same f7 ref7; then good=$((good + 1))
      else echo "  try $t: exit $prc; $(tail -1 $T/f7.err)"; fi
    done
    check "FUSE: cut short under a running loader: exit 1 naming it or the reference, never a signal ($good of $TRIES; $errs errors)" test $good = $TRIES
  fi
  kill -TERM $fp 2> /dev/null; wait $fp 2> /dev/null
  fuse_down
fi

echo "$P passed, $F failed, $SK skipped"
[ $F -eq 0 ]
