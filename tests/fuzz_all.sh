#!/usr/bin/env bash
# Builds every libFuzzer target (one per decoder, whole files through the
# column reader, whole files through the dense path), writes
# seed corpora from real files, and runs each target for SECONDS (default
# 1800), JOBS at a time (default 2). Prints one line per target:
#   target  seconds  executions  result
# Usage: tests/fuzz_all.sh [SECONDS] [JOBS] [TARGET...]
# Corpora grow under build/fuzz-corpora/<target>; findings land in
# build/fuzz-findings/. Needs clang with libFuzzer and .venv (make venv).
set -uo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-1800}; JOBS=${2:-2}; shift 2 2>/dev/null || shift $#
DEC="thrift levels plain rle_bool dict delta_bp delta_lba delta_ba bss snappy lz4 nested"
ALL="$DEC gzip zstd file dense"
TARGETS=${*:-$ALL}
mkdir -p build/fz build/fuzz-corpora build/fuzz-findings build/fuzz-logs
FZ="clang -g -O1 -fsanitize=fuzzer,address,undefined -I. -Itests"
for t in $TARGETS; do
  case $t in
    gzip|zstd) [ -f tests/fuzz_$t.c ] && $FZ tests/fuzz_$t.c -o build/fz/fuzz_$t ;;
    file) $FZ tests/fuzz_file.c -o build/fz/fuzz_file ;;
    dense) $FZ tests/fuzz_dense.c -o build/fz/fuzz_dense ;;
    *) $FZ -DGFF_TARGET=$t tests/fuzz_decoders.c -o build/fz/fuzz_$t ;;
  esac || { echo "FAIL building fuzz_$t"; exit 1; }
done
# seeds: real pages cut out of small files with every encoding and codec
if [ ! -d build/fuzz-seeds ]; then
  gcc -O1 -DGFF_SEEDS -I. -Itests tests/fuzz_decoders.c -o build/fuzz_seeds &&
  .venv/bin/python tests/gen_fuzz_sources.py build/fuzz-sources > /dev/null &&
  build/fuzz_seeds build/fuzz-seeds build/fuzz-sources/*.parquet tests/data/*.parquet > /dev/null || exit 1
fi
run_one() {
  local t=$1 c=build/fuzz-corpora/$1 dict=()
  mkdir -p "$c"
  case $t in
    file|dense) cp -n tests/data/*.parquet tests/fuzz/*.parquet "$c"/ 2>/dev/null; dict=(-dict=tests/fuzz.dict) ;;
    thrift) cp -n build/fuzz-seeds/thrift/* "$c"/ 2>/dev/null; dict=(-dict=tests/fuzz.dict) ;;
    gzip|zstd) cp -n tests/fuzz/$t/* "$c"/ 2>/dev/null ;;
    *) cp -n build/fuzz-seeds/$t/* "$c"/ 2>/dev/null ;;
  esac
  build/fz/fuzz_$t -max_total_time="$SECS" -max_len=262144 -rss_limit_mb=2048 -timeout=20 \
    "${dict[@]}" -artifact_prefix=build/fuzz-findings/$t- "$c" > build/fuzz-logs/$t.log 2>&1
  local rc=$? execs
  execs=$(grep -oE '^#[0-9]+' build/fuzz-logs/$t.log | tail -1 | tr -d '#')
  printf '%-10s %6ss %12s execs  %s\n' "$t" "$SECS" "${execs:-0}" "$([ $rc -eq 0 ] && echo 'no finding' || echo "FINDING (rc $rc, see build/fuzz-logs/$t.log)")"
}
running=0
for t in $TARGETS; do
  run_one "$t" &
  running=$((running + 1))
  if [ $running -ge "$JOBS" ]; then wait -n; running=$((running - 1)); fi
done
wait
