#!/usr/bin/env bash
# test_aarch64.sh -- gpufeed on aarch64 (Grace Hopper hosts), from an x86-64
# machine: the C tests cross-compiled with Debian's aarch64-linux-gnu-gcc
# (static, -Wall -Wextra -Werror -pedantic) and run under qemu-aarch64.
#
#   bash tests/test_aarch64.sh        (from the repository root; `make test` runs it)
#
# Installs gcc-aarch64-linux-gnu and qemu-user with apt-get when missing. On
# an aarch64 machine it runs the same programs natively. Checks:
#   - the unit, hostile-input, nested, loader, remote-source, DLPack and
#     uploader (host fallback) tests pass on aarch64;
#   - the CUDA stream checks against the emulated runtime (when the CUDA
#     headers are here);
#   - every committed fuzz input replays cleanly: the whole-file target and
#     each per-decoder target (SNAPPY, LZ4, GZIP, ZSTD, DELTA, ...);
#   - gpufeed-cat prints every committed Parquet file exactly as expected;
#   - the same loader settings give the same batches, byte for byte (batch
#     hashes), on aarch64 and on the x86-64 build: a job mixing the two
#     architectures sees one stream; a tensor cache built on x86-64 is
#     served on aarch64 without reading the source.
# Ends with "N passed, N failed". Logs: build/logs/aarch64/.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=build/arm64
LOG=build/logs/aarch64
mkdir -p "$OUT" "$LOG"
WARN="-std=c99 -Wall -Wextra -Werror -pedantic"
PASS=0; FAIL=0
ok() { PASS=$((PASS + 1)); echo "PASS $*"; }
bad() { FAIL=$((FAIL + 1)); echo "FAIL $*"; }

if [ "$(uname -m)" = aarch64 ]; then
  XCC=${CC:-cc}; XCXX=${CXX:-c++}; RUN=()
else
  XCC=aarch64-linux-gnu-gcc; XCXX=aarch64-linux-gnu-g++; RUN=(qemu-aarch64)
  if ! command -v "$XCC" > /dev/null 2>&1 || ! command -v "$XCXX" > /dev/null 2>&1 || ! command -v qemu-aarch64 > /dev/null 2>&1; then
    SUDO=; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    echo "installing gcc-aarch64-linux-gnu, g++-aarch64-linux-gnu and qemu-user (apt-get)"
    { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user; } > "$LOG/apt.log" 2>&1 ||
      { bad "install the aarch64 cross compilers and qemu-user: $(tail -3 "$LOG/apt.log")"; echo "$PASS passed, $FAIL failed"; exit 1; }
  fi
fi
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")")}

# xbuild NAME OPT SRC... [flags]: a static aarch64 program
xbuild() {
  local name=$1 opt=$2; shift 2
  # shellcheck disable=SC2086
  if $XCC $opt -static $WARN -I. -Itests "$@" -o "$OUT/$name" -lpthread -lm > "$LOG/build_$name.log" 2>&1; then return 0; fi
  bad "build $name for aarch64: $(head -5 "$LOG/build_$name.log")"
  return 1
}

# xrun NAME ARGS...: runs an aarch64 program; its "N passed, N failed" line counts
xrun() {
  local name=$1; shift
  local log=$LOG/$name.log line p f rc
  "${RUN[@]}" "$OUT/$name" "$@" > "$log" 2>&1
  rc=$?
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
  p=${line%% passed*}; f=${line#*passed, }; f=${f%% failed*}
  if [ -n "$line" ] && [ "$rc" -eq 0 ] && [ "$f" = 0 ]; then ok "$name on aarch64: $line"
  else bad "$name on aarch64 (exit $rc): ${line:-no summary}; $(grep -E 'FAIL|check failed|Abort|fault' "$log" | head -5)"; fi
}

echo "compiler: $($XCC --version | head -1); runner: ${RUN[*]:-native}"

for t in test_unit test_bad_input test_nested test_remote test_dlpack test_loader; do
  xbuild "$t" -O2 "tests/$t.c" && xrun "$t"
done
# the scalar fallbacks of the NEON code (GPUFEED_NO_SIMD): the same results
for t in test_unit test_loader; do
  xbuild "${t}_nosimd" -O2 -DGPUFEED_NO_SIMD "tests/$t.c" && xrun "${t}_nosimd"
done
xbuild test_uploader_host -O2 -DGPUFEED_NO_CUDA tests/test_uploader_host.c && xrun test_uploader_host
if [ -f "$CUDA_HOME/include/cuda_runtime_api.h" ]; then
  xbuild test_cuda_streams_emu -O2 -DGPUFEED_CUDA -DGF_CUDA_EMU -I"$CUDA_HOME/include" tests/test_cuda_streams.c tests/cuda_emu.c &&
    xrun test_cuda_streams_emu
else
  echo "SKIP test_cuda_streams_emu: no CUDA headers"
fi

# C++11: the loader test with the implementation compiled as C++
if $XCXX -O2 -static -std=c++11 -Wall -Wextra -Werror -pedantic -x c++ -I. tests/test_loader.c -o "$OUT/test_loader_cxx" -lpthread -lm > "$LOG/build_test_loader_cxx.log" 2>&1; then
  xrun test_loader_cxx
else bad "build test_loader as C++11 for aarch64: $(head -5 "$LOG/build_test_loader_cxx.log")"; fi
# clang for aarch64 too (syntax and code generation, -Werror)
if command -v clang > /dev/null 2>&1 && [ -d /usr/aarch64-linux-gnu/include ]; then
  if clang --target=aarch64-linux-gnu -O2 -c $WARN -I. tools/gpufeed-cat.c -o "$OUT/cat_clang.o" > "$LOG/build_clang.log" 2>&1; then ok "clang --target=aarch64-linux-gnu compiles gpufeed.h warning-free"
  else bad "clang for aarch64: $(head -5 "$LOG/build_clang.log")"; fi
fi

# every committed fuzz input: the whole-file replay, then each decoder target
xbuild fuzz_replay -O2 -DGF_FUZZ_MAIN tests/fuzz_file.c && xrun fuzz_replay tests/data tests/fuzz
for t in thrift levels plain rle_bool dict delta_bp delta_lba delta_ba bss snappy lz4 nested; do
  [ -d "tests/fuzz/dec/$t" ] || continue
  xbuild "fz_$t" -O1 -DGFF_TARGET=$t tests/fuzz_decoders.c tests/fuzz_replay_main.c && xrun "fz_$t" "tests/fuzz/dec/$t"
done
dirs=(); for d in tests/fuzz/dec/gzip tests/fuzz/gzip; do [ -d "$d" ] && dirs+=("$d"); done
[ ${#dirs[@]} -gt 0 ] && xbuild fz_gzip -O1 tests/fuzz_gzip.c tests/fuzz_replay_main.c && xrun fz_gzip "${dirs[@]}"
dirs=(); for d in tests/fuzz/dec/zstd tests/fuzz/zstd; do [ -d "$d" ] && dirs+=("$d"); done
[ ${#dirs[@]} -gt 0 ] && xbuild fz_zstd -O1 tests/fuzz_zstd.c tests/fuzz_replay_main.c && xrun fz_zstd "${dirs[@]}"

# the committed corpus through gpufeed-cat
if xbuild gpufeed-cat -O2 tools/gpufeed-cat.c; then
  n=0; m=0
  for f in tests/data/*.parquet; do
    exp=${f%.parquet}.csv
    [ -f "$exp" ] || continue
    n=$((n + 1))
    if "${RUN[@]}" "$OUT/gpufeed-cat" --verify-crc "$f" > "$LOG/cat.out" 2> "$LOG/cat.err" && cmp -s "$LOG/cat.out" "$exp"; then m=$((m + 1))
    else echo "  differs: $f $(head -c 200 "$LOG/cat.err")"; fi
  done
  if [ "$n" -gt 0 ] && [ "$m" -eq "$n" ]; then ok "gpufeed-cat on aarch64 prints all $n committed files as expected"
  else bad "gpufeed-cat on aarch64: $m of $n committed files as expected"; fi
fi

# one stream on both architectures: batch hashes of shuffled, sharded,
# multi-worker runs equal the x86-64 build's; a cache built on one serves the other
if xbuild gpufeed-bench -O2 tools/gpufeed-bench.c; then
  host_bench=build/gpufeed-bench-host
  if cc -O2 $WARN -I. tools/gpufeed-bench.c -o "$host_bench" -lpthread -lm > "$LOG/build_host_bench.log" 2>&1; then
    same=0; total=0
    for args in "--workers 4 --seed 7 --shuffle-window 3 --epochs 2" "--workers 2 --seed 1 --rank 1 --world 3 --even pad --unit-rows 20000" \
                "--workers 3 --seed 5 --dtype f64 --unit-rows 10000 --drop-last"; do
      total=$((total + 1))
      # shellcheck disable=SC2086
      "$host_bench" examples/data/flights.parquet --batch 4096 $args --print-batches 2> /dev/null  > "$LOG/bench_x86.txt"
      # shellcheck disable=SC2086
      "${RUN[@]}" "$OUT/gpufeed-bench" examples/data/flights.parquet --batch 4096 $args --print-batches 2> /dev/null  > "$LOG/bench_arm.txt"
      if [ -s "$LOG/bench_x86.txt" ] && cmp -s "$LOG/bench_x86.txt" "$LOG/bench_arm.txt"; then same=$((same + 1))
      else echo "  differs: $args ($(wc -l < "$LOG/bench_x86.txt") vs $(wc -l < "$LOG/bench_arm.txt") batches)"; diff "$LOG/bench_x86.txt" "$LOG/bench_arm.txt" | head -4; fi
    done
    nb=$(wc -l < "$LOG/bench_x86.txt")
    if [ "$same" -eq "$total" ]; then ok "gpufeed-bench: $total loader configurations give the same batch hashes on aarch64 and x86-64 (last: $nb batches)"
    else bad "gpufeed-bench: $same of $total configurations agree between aarch64 and x86-64"; fi
    # a tensor cache built on x86-64 serves aarch64 (shared storage): same batches, no source bytes
    cdir=$(mktemp -d)
    "$host_bench" examples/data/flights.parquet --batch 4096 --workers 2 --seed 3 --cache "$cdir" --print-batches > "$LOG/cache_x86.txt" 2> "$LOG/cache_x86.err"
    "${RUN[@]}" "$OUT/gpufeed-bench" examples/data/flights.parquet --batch 4096 --workers 2 --seed 3 --cache "$cdir" --print-batches > "$LOG/cache_arm.txt" 2> "$LOG/cache_arm.err"
    if [ -s "$LOG/cache_x86.txt" ] && cmp -s "$LOG/cache_x86.txt" "$LOG/cache_arm.txt" && grep -q 'source bytes read 0$' "$LOG/cache_arm.err"; then
      ok "a cache built on x86-64 serves aarch64: same batches, 0 source bytes read"
    else bad "a cache built on x86-64 and read on aarch64: $(grep 'source bytes read' "$LOG/cache_arm.err" | head -1)"; fi
    rm -rf "$cdir"
  else
    bad "build the x86-64 gpufeed-bench: $(head -3 "$LOG/build_host_bench.log")"
  fi
fi

echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
