#!/usr/bin/env bash
# gpufeed test runner.
#
#   bash tests/run.sh            the whole suite (`make test`, what CI runs)
#   bash tests/run.sh --quick    the quick suite (`make check`, the edit-test loop)
#
# Each suite prints "N passed, N failed" (and ", N skipped" when it skipped
# checks) as its last line. This script prints a line when a suite starts
# and one when it ends, adds them up and ends with
# "N passed, N failed, N skipped". A suite that cannot run here (no clang,
# no CUDA toolkit, no GPU; in --quick no .venv) is SKIPPED and counted as
# skipped, never as passed. Logs: build/logs/<suite>.log.
#
# --quick: the header's layout (tests/test_layout.py), the docs against
# what they describe (tests/test_docs.py), unit, remote (its pure parts),
# bad input, nested columns and lists, the loader (ASan+UBSan; TSan; not
# its timing checks: make test runs them), the committed corpus, the
# tensor cache (its API and
# the tool), the fault suite (a try or two of each case), the uploader's
# host fallback and the emulated CUDA driver, DLPack export, the tools,
# gpufeed-bench, the Makefile (help, install, demo), the Python binding's
# Loader with python3's standard library (tests/test_python_core.py), and a replay of the
# committed fuzz corpora (tests/fuzz, tests/fuzz/dec) through the replay
# drivers. Each thing is built once, in parallel, under build/quick/: the
# implementation once at -O1 under ASan+UBSan, linked by the programs that
# use only the public API; the -O2 tools by `make tools`; the rest at -O0
# (TSan: -O1). The suites run two or more at a time.
# No apt-get, no pip, no network, no .venv needed: what needs pyarrow is a
# counted SKIP without it; without a compiler that links
# -fsanitize=address the quick suites run unsanitized (one counted SKIP),
# without TSan the TSan suite is SKIPPED. No check of the quick suite
# depends on timing: it passes beside another make check. GF_SKIP_TIMING=1
# leaves the loader's timing checks out of make test (a counted SKIP).
# JOBS=N: builds and quick suites at a time (default: the online cores, at least 2).
# GF_FAIL_FAST=1: once a suite reports a failure, start no more suites, stop
# the ones still running and exit 1 (tests/mutation.py runs `make check` so);
# the default runs every suite.
set -uo pipefail
cd "$(dirname "$0")/.."
QUICK=0
case "${1:-}" in
  --quick) QUICK=1 ;;
  "") ;;
  *) echo "usage: bash tests/run.sh [--quick]" >&2; exit 2 ;;
esac
mkdir -p build/logs build/asan
PASS=0; FAIL=0; SKIP=0
T0=$SECONDS
CC=${CC:-cc}
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")")}
WARN="-std=c99 -Wall -Wextra -Werror -pedantic"
SAN="-g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
PY=.venv/bin/python
# the Python binding's library: built once per header into build/ (not ~/.cache) for every suite that loads it
export GPUFEED_CACHE_DIR=${GPUFEED_CACHE_DIR:-$PWD/build/gpufeed-lib}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
JOBS=${JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
[ "$JOBS" -ge 2 ] 2>/dev/null || JOBS=2
exec 3>&1   # the terminal: progress lines while a suite's output goes to its log
SUITES=()
rm -f build/logs/*.count
FAIL_FAST=${GF_FAIL_FAST:-0}
FF_MARK=build/logs/fail-fast.first
rm -f "$FF_MARK"

# ---- suites --------------------------------------------------------------

elapsed() { echo "t=$((SECONDS - T0))s"; }

# cpu_delta T0 T1: CPU seconds (user + system) of the children waited for
# between two `times > FILE` (the builtin, so that it reports this shell)
cpu_delta() {
  awk 'FNR == 2 { n = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); n += a[1] * 60 + a[2] } v[++k] = n }
       END { printf "%.0f", v[2] - v[1] }' "$1" "$2"
}
times > build/logs/.times.start

# waits until fewer than $1 background jobs run
wait_slot() {
  while [ "$(jobs -rp | wc -l)" -ge "$1" ]; do wait -n 2> /dev/null || true; ff_check; done
}

# kill_tree PID: PID and every process under it (children first)
kill_tree() {
  local c
  for c in $(pgrep -P "$1" 2> /dev/null); do kill_tree "$c"; done
  kill "$1" 2> /dev/null
}

# GF_FAIL_FAST=1: when a suite has failed, stop the running suites (each by
# its process id), add up the suites that ended and exit 1
ff_check() {
  [ "$FAIL_FAST" = 1 ] && [ -s "$FF_MARK" ] || return 0
  local j n c
  for j in $(jobs -p); do kill_tree "$j"; done
  wait 2> /dev/null
  echo "fail-fast (GF_FAIL_FAST=1): $(head -1 "$FF_MARK") failed; no more suites started, the running ones stopped"
  for n in "${SUITES[@]}"; do
    c=$(cat "build/logs/$n.count" 2> /dev/null) || { echo "$n stopped"; continue; }
    set -- $c
    PASS=$((PASS + $1)); FAIL=$((FAIL + $2)); SKIP=$((SKIP + $3))
  done
  times > build/logs/.times.end
  echo "($(elapsed) in all, cpu $(cpu_delta build/logs/.times.start build/logs/.times.end)s)"
  echo "$PASS passed, $FAIL failed, $SKIP skipped"
  exit 1
}

# run_suite NAME CMD...: CMD's output into build/logs/NAME.log; its counts
# into build/logs/NAME.count ("passed failed skipped"); one line on stdout
run_suite() {
  local name=$1; shift
  local log=build/logs/$name.log start=$SECONDS line p=0 f=0 s="" rc cpu
  times > "build/logs/$name.t0"
  "$@" > "$log" 2>&1
  rc=$?
  times > "build/logs/$name.t1"
  cpu=$(cpu_delta "build/logs/$name.t0" "build/logs/$name.t1")
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
  if [ -n "$line" ]; then
    p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
    f=$(echo "$line" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
    s=$(echo "$line" | sed -nE 's/.*, ([0-9]+) skipped.*/\1/p')
  fi
  # a suite that does not count its skips: its "SKIP ..." lines (no GPU, no CUDA toolkit)
  [ -z "$s" ] && s=$(grep -c '^SKIP' "$log")
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  if [ -z "$line" ] && [ "$rc" -eq 0 ]; then p=1; fi
  echo "$p $f $s" > "build/logs/$name.count"
  [ "$FAIL_FAST" = 1 ] && [ "$f" -ne 0 ] && echo "$name" >> "$FF_MARK"
  {
    printf '%-22s %5d passed, %3d failed, %3d skipped  (%ds, cpu %ss, %s)\n' "$name" "$p" "$f" "$s" $((SECONDS - start)) "$cpu" "$(elapsed)"
    if [ "$f" -ne 0 ]; then
      echo "---- $name: failures (from $log) ----"
      grep -E 'FAIL|check failed|ERROR|error|Sanitizer|runtime error' "$log" | head -40
      echo "----"
    fi
  } > "build/logs/$name.result"
  cat "build/logs/$name.result"
}

# suite NAME CMD...: runs a suite (in the background with PARALLEL > 1)
PARALLEL=1
suite() {
  local name=$1
  ff_check
  SUITES+=("$name")
  [ "$PARALLEL" -gt 1 ] && wait_slot "$PARALLEL"
  printf '%-22s started (%s)\n' "$name" "$(elapsed)"
  if [ "$PARALLEL" -gt 1 ]; then run_suite "$@" &
  else run_suite "$@"; ff_check; fi
}

# skip_suite NAME WHY: a suite that cannot run here, counted as skipped
skip_suite() {
  SUITES+=("$1")
  echo "0 0 1" > "build/logs/$1.count"
  printf '%-22s SKIPPED: %s\n' "$1" "$2"
}

# suite_if FILE NAME CMD...: the suite when FILE (its program) exists, else skipped
suite_if() {
  local file=$1; shift
  if [ -e "$file" ]; then suite "$@"; else skip_suite "$1" "$file is not built here"; fi
}

# the sum of every suite's counts, and the last line
finish() {
  local n c
  if [ "$FAIL_FAST" = 1 ]; then
    while [ -n "$(jobs -rp)" ]; do wait -n 2> /dev/null || true; ff_check; done
    ff_check
  fi
  wait
  for n in "${SUITES[@]}"; do
    c=$(cat "build/logs/$n.count" 2> /dev/null || echo "0 1 0")
    set -- $c
    PASS=$((PASS + $1)); FAIL=$((FAIL + $2)); SKIP=$((SKIP + $3))
  done
  times > build/logs/.times.end
  echo "($(elapsed) in all, cpu $(cpu_delta build/logs/.times.start build/logs/.times.end)s)"
  echo "$PASS passed, $FAIL failed, $SKIP skipped"
  [ "$FAIL" -eq 0 ]
}

# ---- builds, in parallel -----------------------------------------------------

# pjob LABEL CMD...: one build in the background ($JOBS at a time); its
# output in build/logs/jobs/, "PASS build LABEL" or "FAIL build LABEL" on
# stdout, and a line on the terminal when it ends
pjob() {
  local label=$1; shift
  local slug; slug=$(printf '%s' "$label" | tr -c 'A-Za-z0-9_.-' '_')
  wait_slot "$JOBS"
  (
    s=$SECONDS
    times > "build/logs/jobs/$slug.t0"
    if "$@" > "build/logs/jobs/$slug.log" 2>&1; then r=PASS; else r=FAIL; fi
    times > "build/logs/jobs/$slug.t1"
    echo "$r" > "build/logs/jobs/$slug.res"
    echo "$r build $label"
    [ $r = FAIL ] && head -20 "build/logs/jobs/$slug.log"
    printf '  %s %s (%ds, cpu %ss, %s)\n' "$([ $r = PASS ] && echo built || echo 'FAILED to build')" "$label" $((SECONDS - s)) \
      "$(cpu_delta "build/logs/jobs/$slug.t0" "build/logs/jobs/$slug.t1")" "$(elapsed)" >&3
  ) &
}
pjobs_start() { rm -rf build/logs/jobs; mkdir -p build/logs/jobs; }
# waits for the builds; their count line
pjobs_end() {
  wait
  local ok bad
  ok=$(cat build/logs/jobs/*.res 2> /dev/null | grep -c PASS)
  bad=$(cat build/logs/jobs/*.res 2> /dev/null | grep -c FAIL)
  echo "$ok passed, $bad failed"
  [ "$bad" -eq 0 ]
}

# probe CC FLAGS...: CC links and runs a program with FLAGS
probe() {
  local d rc; d=$(mktemp -d)
  printf '#include <pthread.h>\nstatic void *f(void *p) { return p; }\nint main(void) { pthread_t t; pthread_create(&t, 0, f, 0); pthread_join(t, 0); return 0; }\n' > "$d/p.c"
  "$@" "$d/p.c" -o "$d/p" -lpthread > /dev/null 2>&1 && "$d/p" > /dev/null 2>&1
  rc=$?
  rm -rf "$d"
  return $rc
}

# the emulated CUDA driver (tests/cuda_emu.c as build/emu/libcuda.so.1, and a
# TSan build of it): test programs link it, and gpufeed's driver path loads it
# where LD_LIBRARY_PATH points there. Built before the parallel builds.
EMU_DIR=$PWD/build/emu
build_emu_driver() {
  [ -n "$CUDA_HOME" ] && [ -f "$CUDA_HOME/include/cuda.h" ] || { echo "SKIP the emulated driver: no CUDA headers"; return 0; }
  mkdir -p build/emu build/emu-tsan
  $CC -O1 -g $WARN -shared -fPIC -Wl,-soname,libcuda.so.1 -I"$CUDA_HOME/include" tests/cuda_emu.c -o build/emu/libcuda.so.1 -lpthread &&
    { [ "${1:-}" = quick ] || clang -O1 -g -fsanitize=thread $WARN -shared -fPIC -Wl,-soname,libcuda.so.1 -I"$CUDA_HOME/include" tests/cuda_emu.c \
        -o build/emu-tsan/libcuda.so.1 -lpthread; }
}

# ---- the whole suite's builds --------------------------------------------------

# build OUT SRC [extra flags]: a plain and a sanitizer variant of a program
build() {
  local out=$1 src=$2; shift 2
  pjob "$out" $CC -O2 -g $WARN -I. "$src" -o "build/$out" -lpthread -lm "$@"
  pjob "$out (ASan+UBSan)" clang $SAN $WARN -I. "$src" -o "build/asan/$out" -lpthread -lm "$@"
}
build_all() {
  local t n cu
  pjobs_start
  build_emu_driver || echo "FAIL build the emulated driver (build/emu/libcuda.so.1)"
  for t in tools/gpufeed-cat.c tools/gpufeed-inspect.c tools/gpufeed-dense.c tools/gpufeed-bench.c tools/gpufeed-cache.c \
           tests/test_unit.c tests/test_bad_input.c tests/test_nested.c tests/test_breadth.c tests/test_remote.c tests/test_dlpack.c tests/test_loader.c tests/test_resident_cpu.c tests/test_cache_api.c \
           tests/test_faults.c tests/test_pack.c; do
    [ -f "$t" ] || continue
    build "$(basename "$t" .c)" "$t"
  done
  if [ -f tests/test_codec_gzip.c ]; then  # links the system zlib to make test data; once more decoding through it
    build test_codec_gzip tests/test_codec_gzip.c -lz
    build test_codec_gzip_zlib tests/test_codec_gzip.c -DGPUFEED_USE_ZLIB -lz
  fi
  [ -f tests/fuzz_gzip.c ] && pjob "fuzz_gzip_replay" clang $SAN $WARN -DGF_FUZZ_MAIN -I. tests/fuzz_gzip.c -o build/asan/fuzz_gzip_replay
  if [ -f tests/test_codec_zstd.c ]; then  # libzstd makes the test frames; then the libzstd-backed build of the header
    build test_codec_zstd tests/test_codec_zstd.c -lzstd
    pjob "test_codec_zstd (GPUFEED_USE_LIBZSTD)" $CC -O2 -g $WARN -DGPUFEED_USE_LIBZSTD -I. tests/test_codec_zstd.c -o build/test_codec_zstd_libzstd -lpthread -lm -lzstd
  fi
  if [ -f tests/test_uploader_host.c ]; then  # the host fallback, the driver path, and the CUDA runtime build of it
    build test_uploader_host tests/test_uploader_host.c -DGPUFEED_NO_CUDA
    pjob "test_uploader_host (the driver path)" clang $SAN $WARN -I. tests/test_uploader_host.c -o build/asan/test_uploader_host_drv -lpthread -lm -ldl
    if [ -n "$CUDA_HOME" ] && [ -f "$CUDA_HOME/include/cuda_runtime.h" ]; then
      pjob "test_uploader_host (GPUFEED_CUDA, -lcudart)" $CC -O2 $WARN -DGPUFEED_CUDA -I. -I"$CUDA_HOME/include" tests/test_uploader_host.c -o build/test_uploader_host_cuda -L"$CUDA_HOME/lib64" -lcudart -lpthread -lm
    else echo "SKIP build test_uploader_host (GPUFEED_CUDA): no CUDA toolkit"; fi
  fi
  if [ -f tests/test_cuda_streams.c ]; then  # CUDA stream semantics: the emulated runtime here, the real one on a GPU
    if [ -n "$CUDA_HOME" ] && [ -f "$CUDA_HOME/include/cuda_runtime_api.h" ]; then
      local emu="-DGPUFEED_CUDA -DGF_CUDA_EMU -I$CUDA_HOME/include tests/test_cuda_streams.c tests/cuda_emu.c"
      # shellcheck disable=SC2086
      pjob "test_cuda_streams (emulated runtime, ASan)" clang $SAN $WARN -I. $emu -o build/asan/test_cuda_streams_emu -lpthread -lm
      # shellcheck disable=SC2086
      pjob "test_cuda_streams (emulated runtime, TSan)" clang -g -O1 -fsanitize=thread $WARN -I. $emu -o build/tsan_test_cuda_streams_emu -lpthread -lm
      pjob "test_cuda_streams (GPUFEED_CUDA, -lcudart)" $CC -O2 $WARN -DGPUFEED_CUDA -I. -I"$CUDA_HOME/include" tests/test_cuda_streams.c -o build/test_cuda_streams -L"$CUDA_HOME/lib64" -lcudart -lpthread -lm
      if [ -f build/emu/libcuda.so.1 ]; then  # gpufeed on the (emulated) driver; the consumer on its runtime
        local drv="-DGF_CUDA_EMU -I$CUDA_HOME/include tests/test_cuda_streams.c -lpthread -lm -ldl"
        # shellcheck disable=SC2086
        pjob "test_cuda_streams (emulated driver, ASan)" clang $SAN $WARN -I. $drv -o build/asan/test_cuda_streams_drv_emu -Lbuild/emu -l:libcuda.so.1 -Wl,-rpath,$EMU_DIR
        # shellcheck disable=SC2086
        [ -f build/emu-tsan/libcuda.so.1 ] && pjob "test_cuda_streams (emulated driver, TSan)" clang -g -O1 -fsanitize=thread $WARN -I. $drv \
          -o build/tsan_test_cuda_streams_drv_emu -Lbuild/emu-tsan -l:libcuda.so.1 -Wl,-rpath,$PWD/build/emu-tsan
        pjob "test_cudrv_abi" $CC -O1 $WARN -I. -I"$CUDA_HOME/include" tests/test_cudrv_abi.c -o build/test_cudrv_abi -Lbuild/emu -l:libcuda.so.1 -Wl,-rpath,$EMU_DIR -lpthread -lm -ldl
      fi
    else echo "SKIP build test_cuda_streams: no CUDA toolkit"; fi
  fi
  if command -v nvcc > /dev/null 2>&1; then  # CUDA code must compile here even without a GPU
    for cu in tests/test_gpu.cu examples/train_mlp.cu tools/bench/bench_gpu.cu; do
      [ -f "$cu" ] || continue
      n=$(basename "$cu" .cu)
      pjob "nvcc $n" nvcc -O2 -arch=sm_90 -Xcompiler -Wall,-Wextra,-Werror -I. "$cu" -o "build/$n" -lpthread
    done
  else echo "SKIP nvcc builds: nvcc not installed"; fi
  if [ -f tests/test_remote_unit.c ]; then  # the remote section's pure parts (GPUFEED_CURL; no curl headers)
    build test_remote_unit tests/test_remote_unit.c -ldl
    if [ -f /usr/include/curl/curl.h ] || [ -f /usr/include/x86_64-linux-gnu/curl/curl.h ] || [ -f /usr/include/aarch64-linux-gnu/curl/curl.h ]; then
      pjob "test_curl_abi (curl.h)" $CC -O1 $WARN -I. tests/test_curl_abi.c -o build/test_curl_abi -lcurl -lpthread -lm -ldl
    else echo "SKIP build test_curl_abi: no curl/curl.h (libcurl4-openssl-dev)"; fi
  fi
  [ -f examples/read_dense.c ] && pjob "read_dense (one command)" $CC -O2 $WARN examples/read_dense.c -o build/read_dense -lpthread -lm
  [ -f tests/test_pack.c ] && pjob "test_pack (TSan)" clang -g -O1 -fsanitize=thread $WARN -I. tests/test_pack.c -o build/tsan_test_pack -lpthread -lm
  if [ -f tests/test_loader.c ]; then
    pjob "test_loader (TSan)" clang -g -O1 -fsanitize=thread $WARN -I. tests/test_loader.c -o build/tsan_test_loader -lpthread -lm
    # the loader without threads: workers' steps run on the caller's thread
    pjob "test_loader (GPUFEED_NO_THREADS)" clang $SAN $WARN -DGPUFEED_NO_THREADS -I. tests/test_loader.c -o build/asan/test_loader_nothreads -lpthread -lm
    # the shuffled gather without its prefetch (GPUFEED_GATHER_AHEAD 0): the same streams
    pjob "test_loader (GPUFEED_GATHER_AHEAD=0)" gcc $SAN $WARN -DGPUFEED_GATHER_AHEAD=0 -I. tests/test_loader.c -o build/asan/test_loader_noahead -lpthread -lm
    # SNAPPY pages streamed through a 4 KiB window (GPUFEED_PAGE_WINDOW): every page but the smallest;
    # and a loader that keeps only 300,000 bytes of its files mapped (GPUFEED_KEEP_BYTES): a file and a half of tests/data/ids.parquet
    pjob "test_loader (GPUFEED_PAGE_WINDOW=4096)" clang $SAN $WARN -DGPUFEED_PAGE_WINDOW=4096 -DGPUFEED_KEEP_BYTES=300000 -I. tests/test_loader.c -o build/asan/test_loader_window -lpthread -lm
  fi
  pjob "test_unit (GPUFEED_PAGE_WINDOW=4096)" clang $SAN $WARN -DGPUFEED_PAGE_WINDOW=4096 -DGPUFEED_KEEP_BYTES=300000 -I. tests/test_unit.c -o build/asan/test_unit_window -lpthread -lm
  pjob "gpufeed-dense (GPUFEED_PAGE_WINDOW=4096)" clang $SAN $WARN -DGPUFEED_PAGE_WINDOW=4096 -I. tools/gpufeed-dense.c -o build/asan/gpufeed-dense-window -lpthread -lm
  # the fallbacks of the run-time AVX-512 kernels (SSE2 / NEON) and of all SIMD (scalar): the same bytes
  for v in NO_AVX512 NO_SIMD; do
    lc=$(echo $v | tr 'A-Z' 'a-z' | tr -d _)
    pjob "test_unit (GPUFEED_$v)" clang $SAN $WARN -DGPUFEED_$v -I. tests/test_unit.c -o build/asan/test_unit_$lc -lpthread -lm
    pjob "gpufeed-dense (GPUFEED_$v)" clang $SAN $WARN -DGPUFEED_$v -I. tools/gpufeed-dense.c -o build/asan/gpufeed-dense-$lc -lpthread -lm
  done
  [ -f tests/test_cache_api.c ] && pjob "test_cache_api (TSan)" clang -g -O1 -fsanitize=thread $WARN -I. tests/test_cache_api.c -o build/tsan_test_cache_api -lpthread -lm
  [ -f tests/test_faults.c ] && pjob "test_faults (TSan)" clang -g -O1 -fsanitize=thread $WARN -I. tests/test_faults.c -o build/tsan_test_faults -lpthread -lm
  # codecs against the system libraries, and the opt-in builds that use them
  if [ -f tests/test_codec_ref.c ]; then
    build test_codec_ref tests/test_codec_ref.c -Itests -lsnappy -llz4
    pjob "test_codec_ref (GPUFEED_USE_LIBSNAPPY, GPUFEED_USE_LIBLZ4, GPUFEED_USE_BROTLI)" $CC -O2 $WARN -DGPUFEED_USE_LIBSNAPPY -DGPUFEED_USE_LIBLZ4 -DGPUFEED_USE_BROTLI -I. -Itests tests/test_codec_ref.c -o build/test_codec_ref_syslib -lsnappy -llz4 -lbrotlienc -lbrotlidec -lpthread -lm
  fi
  pjob "gpufeed-cat (GPUFEED_USE_BROTLI, -lbrotlidec)" $CC -O2 $WARN -DGPUFEED_USE_BROTLI -I. tools/gpufeed-cat.c -o build/gpufeed-cat-brotli -lbrotlidec -lpthread -lm
  if [ -f tests/fuzz_decoders.c ]; then
    for t in thrift levels plain rle_bool dict delta_bp delta_lba delta_ba bss snappy lz4 nested; do
      pjob "fuzz target $t" clang -g -O1 -fsanitize=fuzzer,address,undefined $WARN -DGFF_TARGET=$t -I. -Itests tests/fuzz_decoders.c -o build/fz_$t
    done
    for t in gzip zstd; do  # the codecs' own targets
      [ -f tests/fuzz_$t.c ] || continue
      pjob "fuzz target $t" clang -g -O1 -fsanitize=fuzzer,address,undefined -I. tests/fuzz_$t.c -o build/fz_$t
    done
    pjob "fuzz seed writer" gcc -O1 $WARN -DGFF_SEEDS -I. -Itests tests/fuzz_decoders.c -o build/fuzz_seeds
  fi
  [ -f tests/fuzz_file.c ] && pjob "fuzz_replay" clang $SAN $WARN -DGF_FUZZ_MAIN -I. tests/fuzz_file.c -o build/asan/fuzz_replay
  [ -f tests/fuzz_dense.c ] && pjob "fz_dense (replay, every variant)" clang $SAN $WARN -DGFD_EVERY_VARIANT -I. tests/fuzz_dense.c tests/fuzz_replay_main.c -o build/asan/fz_dense_replay -lpthread -lm
  pjobs_end
}

# ---- the quick suite's builds ----------------------------------------------------

QB=build/quick
SANQ="-g -O0 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
DECODERS="thrift levels plain rle_bool dict delta_bp delta_lba delta_ba bss snappy lz4 nested"
quick_tools() {  # which compilers this machine has: SANCC (ASan+UBSan), TSANCC
  SANCC=""; TSANCC=""
  for c in clang gcc cc; do command -v $c > /dev/null 2>&1 && probe $c $SANQ && { SANCC=$c; break; }; done
  for c in clang gcc; do command -v $c > /dev/null 2>&1 && probe $c -g -O0 -fsanitize=thread && { TSANCC=$c; break; }; done
  if [ -z "$SANCC" ]; then SANCC=$CC; SANQ="-g -O0"; fi
}
# needs LABEL CMD...: CMD once the build LABEL (a pjob) has ended; fails when it failed
needs() {
  local res; res="build/logs/jobs/$(printf '%s' "$1" | tr -c 'A-Za-z0-9_.-' '_').res"; shift
  while [ ! -s "$res" ]; do sleep 0.2; done
  grep -q PASS "$res" && "$@"
}
# The quick suite's builds, in parallel, each thing compiled once: the
# implementation once under ASan+UBSan (-O0), linked by every program that
# uses only the public API (-DGPUFEED_IMPLEMENTATION_DONE leaves the
# implementation out of its own translation unit); the -O2 tools once, by
# `make tools` (build/obj/gpufeed.o: the demo's and make install's too);
# the programs that test private functions or other options on their own.
QIMPL="impl (ASan+UBSan)"
USE_IMPL="-DGPUFEED_IMPLEMENTATION_DONE -DGPUFEED_API=extern"
build_quick() {
  local t
  pjobs_start
  mkdir -p $QB/asan $QB/obj
  printf '#define GPUFEED_IMPLEMENTATION\n#include "gpufeed.h"\n' > $QB/obj/gpufeed.c
  # -O1 (not -O0) where most of the suites' time goes: the loader, cache and tools suites run 3-4x faster for ~35 s of compiling
  pjob "$QIMPL" $SANCC ${SANQ/-O0/-O1} $WARN -I. -c $QB/obj/gpufeed.c -o $QB/obj/gpufeed_asan.o
  pjob "tools (-O2: make tools build/read_dense)" make -s CC="$CC" tools build/read_dense
  build_emu_driver quick || echo "FAIL build the emulated driver (build/emu/libcuda.so.1)"
  if [ -f build/emu/libcuda.so.1 ]; then  # the uploader on the (emulated) CUDA driver
    pjob "test_cuda_streams (emulated driver)" $SANCC $SANQ $WARN -DGF_CUDA_EMU -I. -I"$CUDA_HOME/include" tests/test_cuda_streams.c \
      -o $QB/asan/test_cuda_streams_drv_emu -Lbuild/emu -l:libcuda.so.1 -Wl,-rpath,$EMU_DIR -lpthread -lm -ldl
  fi
  for t in test_unit test_bad_input test_faults; do
    pjob "$t" $SANCC $SANQ $WARN -I. tests/$t.c -o $QB/asan/$t -lpthread -lm
  done
  pjob "test_unit (GPUFEED_PAGE_WINDOW=4096)" $SANCC $SANQ $WARN -DGPUFEED_PAGE_WINDOW=4096 -DGPUFEED_KEEP_BYTES=300000 -I. tests/test_unit.c -o $QB/asan/test_unit_window -lpthread -lm
  pjob "test_remote_unit" $SANCC $SANQ $WARN -I. tests/test_remote_unit.c -o $QB/asan/test_remote_unit -lpthread -lm -ldl
  pjob "test_unit (GPUFEED_NO_AVX512)" $SANCC $SANQ $WARN -DGPUFEED_NO_AVX512 -I. tests/test_unit.c -o $QB/asan/test_unit_noavx512 -lpthread -lm
  pjob "test_uploader_host" $SANCC $SANQ $WARN -DGPUFEED_NO_CUDA -I. tests/test_uploader_host.c -o $QB/asan/test_uploader_host -lpthread -lm
  [ -n "$TSANCC" ] && pjob "test_loader (TSan)" $TSANCC -g -O1 -fsanitize=thread $WARN -I. tests/test_loader.c -o $QB/tsan_test_loader -lpthread -lm
  [ -n "$TSANCC" ] && pjob "test_pack (TSan)" $TSANCC -g -O1 -fsanitize=thread $WARN -I. tests/test_pack.c -o $QB/tsan_test_pack -lpthread -lm
  for t in $DECODERS; do  # libFuzzer targets, linked with the plain replay driver (no libFuzzer runtime needed)
    pjob "fz_$t (replay)" $SANCC $SANQ $WARN -DGFF_TARGET=$t -I. -Itests tests/fuzz_decoders.c tests/fuzz_replay_main.c -o $QB/asan/fz_$t
  done
  for t in gzip zstd; do
    pjob "fz_$t (replay)" $SANCC $SANQ $WARN -I. tests/fuzz_$t.c tests/fuzz_replay_main.c -o $QB/asan/fz_$t
  done
  # the programs of the public API: linked with the implementation built above
  for t in test_loader test_cache_api test_dlpack test_nested test_remote test_pack; do
    pjob "$t" needs "$QIMPL" $SANCC $SANQ $WARN $USE_IMPL -I. tests/$t.c $QB/obj/gpufeed_asan.o -o $QB/asan/$t -lpthread -lm -ldl
  done
  for t in cat inspect dense bench cache; do
    pjob "gpufeed-$t" needs "$QIMPL" $SANCC $SANQ $WARN $USE_IMPL -I. tools/gpufeed-$t.c $QB/obj/gpufeed_asan.o -o $QB/asan/gpufeed-$t -lpthread -lm -ldl
  done
  pjob "fuzz_replay (whole files)" needs "$QIMPL" $SANCC $SANQ $WARN $USE_IMPL -DGF_FUZZ_MAIN -I. tests/fuzz_file.c $QB/obj/gpufeed_asan.o -o $QB/asan/fuzz_replay \
    -lpthread -lm -ldl
  pjob "fz_dense (replay, every variant)" needs "$QIMPL" $SANCC $SANQ $WARN $USE_IMPL -DGFD_EVERY_VARIANT -I. tests/fuzz_dense.c tests/fuzz_replay_main.c \
    $QB/obj/gpufeed_asan.o -o $QB/asan/fz_dense -lpthread -lm -ldl
  pjobs_end
}

# every decoder's committed corpus (tests/fuzz/dec/<target>; the codecs' seeds in tests/fuzz/<codec>)
fuzz_committed_replay() {
  local ok=0 bad=0 t dirs
  for t in $DECODERS gzip zstd; do
    dirs=(); [ -d tests/fuzz/dec/$t ] && dirs+=(tests/fuzz/dec/$t); [ -d tests/fuzz/$t ] && dirs+=(tests/fuzz/$t)
    [ ${#dirs[@]} -eq 0 ] && continue
    if [ ! -x $QB/asan/fz_$t ]; then bad=$((bad + 1)); echo "FAIL $t: not built"; continue; fi
    if $QB/asan/fz_$t "${dirs[@]}" > build/logs/fzq_$t.log 2>&1; then
      ok=$((ok + 1)); echo "PASS $t: $(tail -1 build/logs/fzq_$t.log | sed 's/ passed.*//') inputs of ${dirs[*]}"
    else bad=$((bad + 1)); echo "FAIL $t: $(grep -E 'ERROR|SUMMARY|fuzz_decoders' build/logs/fzq_$t.log | head -3)"; fi
  done
  echo "$ok passed, $bad failed"
  [ $bad -eq 0 ]
}

# ---- corpora and fuzzing (the whole suite) ------------------------------------------

# the committed corpus: gpufeed-cat (sanitizer build) against expected CSV
committed_corpus() {
  local ok=0 bad=0 f
  for f in tests/data/*.parquet; do
    local exp=${f%.parquet}.csv
    [ -f "$exp" ] || continue
    if $CATBIN --verify-crc "$f" > build/logs/cat.out 2> build/logs/cat.err && cmp -s build/logs/cat.out "$exp"; then
      ok=$((ok + 1)); echo "PASS $f"
    else
      bad=$((bad + 1)); echo "FAIL $f: $(head -c 300 build/logs/cat.err)"
      diff <(head -c 200000 build/logs/cat.out) "$exp" | head -5
    fi
  done
  echo "$ok passed, $bad failed"
  [ $bad -eq 0 ]
}

# the generated corpus: every fixture written by the real writers, checked
# cell by cell against pyarrow's reading of it
generated_corpus() {
  rm -rf build/fixtures
  $PY tests/gen_fixtures.py build/fixtures || { echo "0 passed, 1 failed"; return 1; }
  # the legacy list / map forms crafted by tests/test_nested.c join the corpus
  if [ -x build/asan/test_nested ]; then
    build/asan/test_nested --write build/fixtures/nested/crafted > /dev/null || { echo "0 passed, 1 failed"; return 1; }
  fi
  $PY tests/check_corpus.py --cat "build/asan/gpufeed-cat --verify-crc" build/fixtures
}

# the extended corpus (every codec and encoding): files whose codecs exist
# (GZIP among them) must read identically to pyarrow; the others must fail
# with a clear "not supported yet" naming the codec
extended_corpus() {
  rm -rf build/fixtures-ext
  $PY tests/gen_fixtures.py build/fixtures-ext --extended > /dev/null || { echo "0 passed, 1 failed"; return 1; }
  local ok=0 bad=0 f
  for f in build/fixtures-ext/extended/*.parquet; do
    if build/asan/gpufeed-cat --verify-crc "$f" > /dev/null 2> build/logs/ext.err; then
      if $PY tests/check_corpus.py --cat "build/asan/gpufeed-cat --verify-crc" "$f" > build/logs/ext.out 2>&1; then ok=$((ok + 1)); echo "PASS $f"
      else bad=$((bad + 1)); echo "FAIL $f: $(tail -3 build/logs/ext.out)"; fi
    elif grep -qE "codec BROTLI needs the system libbrotlidec: compile with -DGPUFEED_USE_BROTLI" build/logs/ext.err; then
      ok=$((ok + 1)); echo "PASS $f (clear error naming GPUFEED_USE_BROTLI)"
      if $PY tests/check_corpus.py --cat build/gpufeed-cat-brotli "$f" > build/logs/ext.out 2>&1; then ok=$((ok + 1)); echo "PASS $f (GPUFEED_USE_BROTLI build)"
      else bad=$((bad + 1)); echo "FAIL $f (GPUFEED_USE_BROTLI build): $(tail -3 build/logs/ext.out)"; fi
    elif grep -qE "codec [A-Z0-9_]+ is not supported yet" build/logs/ext.err; then
      ok=$((ok + 1)); echo "PASS $f (clear error: $(grep -oE 'codec [A-Z]+ is not supported yet' build/logs/ext.err))"
    else
      bad=$((bad + 1)); echo "FAIL $f: $(head -c 300 build/logs/ext.err)"
    fi
  done
  # DuckDB's 64-bit INT32 deltas (pyarrow cannot read them): DuckDB's own
  # reading, rendered next to each file, is the oracle
  for f in build/fixtures-ext/extended/duckdb_delta64/*.parquet; do
    local cat=build/asan/gpufeed-cat
    case $f in *brotli*) cat=build/gpufeed-cat-brotli ;; esac
    if $cat --verify-crc "$f" 2> build/logs/ext.err | cmp -s - "${f%.parquet}.csv"; then ok=$((ok + 1)); echo "PASS $f (= DuckDB)"
    else bad=$((bad + 1)); echo "FAIL $f: differs from DuckDB's reading ${f%.parquet}.csv $(head -c 300 build/logs/ext.err)"; fi
  done
  echo "$ok passed, $bad failed"
  [ $bad -eq 0 ]
}

fuzz_replay() {
  local dirs=(tests/data)
  [ -d tests/fuzz ] && dirs+=(tests/fuzz)
  [ -d build/fixtures ] && dirs+=(build/fixtures)
  [ -d build/fixtures-ext ] && dirs+=(build/fixtures-ext)
  build/asan/fuzz_replay "${dirs[@]}"
}

# the dense path's target (tests/fuzz_dense.c) over every file in 64 variants:
# the committed files, its own findings (tests/fuzz/dense) and the fixtures
fuzz_dense_dirs() {
  local dirs=(tests/data tests/fuzz)
  [ -d tests/fuzz/dense ] && dirs+=(tests/fuzz/dense)
  [ "${1:-}" = all ] && [ -d build/fixtures ] && dirs+=(build/fixtures)
  [ "${1:-}" = all ] && [ -d build/fixtures-ext ] && dirs+=(build/fixtures-ext)
  echo "${dirs[@]}"
}
fuzz_dense_replay() {
  local bin=$1; shift
  # shellcheck disable=SC2046
  "$bin" $(fuzz_dense_dirs "$@")
}

# every per-decoder fuzz target replays its committed corpus
# (tests/fuzz/dec/<target>, minimized from the 30-minute runs) and seeds cut
# from real files (or the codec's own seeds), under ASan+UBSan
fuzz_decoders_replay() {
  local ok=0 bad=0 t
  rm -rf build/fuzz-seeds
  $PY tests/gen_fuzz_sources.py build/fuzz-sources > /dev/null &&
    build/fuzz_seeds build/fuzz-seeds build/fuzz-sources/*.parquet tests/data/*.parquet > /dev/null || { echo "0 passed, 1 failed"; return 1; }
  for t in thrift levels plain rle_bool dict delta_bp delta_lba delta_ba bss snappy lz4 nested gzip zstd; do
    [ -x build/fz_$t ] || continue
    local dirs=(); [ -d build/fuzz-seeds/$t ] && dirs+=(build/fuzz-seeds/$t); [ -d tests/fuzz/dec/$t ] && dirs+=(tests/fuzz/dec/$t)
    case $t in gzip|zstd) [ -d tests/fuzz/$t ] && dirs+=(tests/fuzz/$t) ;; esac
    if [ ${#dirs[@]} -eq 0 ]; then bad=$((bad + 1)); echo "FAIL $t: no corpus"; continue; fi
    if build/fz_$t -runs=0 -rss_limit_mb=2048 "${dirs[@]}" > build/logs/fz_$t.log 2>&1; then
      ok=$((ok + 1)); echo "PASS $t: $(grep -oE 'DONE +cov: [0-9]+' build/logs/fz_$t.log | tail -1) over $(find "${dirs[@]}" -type f | wc -l) inputs"
    else bad=$((bad + 1)); echo "FAIL $t: $(grep -E 'ERROR|SUMMARY' build/logs/fz_$t.log | head -3)"; fi
  done
  echo "$ok passed, $bad failed"
  [ $bad -eq 0 ]
}

fuzz_brief() {
  if ! clang -g -O1 -fsanitize=fuzzer,address,undefined -I. tests/fuzz_file.c -o build/fuzz_file 2>build/logs/fuzz_build.err; then
    echo "FAIL building the libFuzzer target: $(head -5 build/logs/fuzz_build.err)"; echo "0 passed, 1 failed"; return 1
  fi
  rm -rf build/fuzz-ci; mkdir -p build/fuzz-ci
  cp tests/data/*.parquet build/fuzz-ci/; [ -d tests/fuzz ] && cp tests/fuzz/* build/fuzz-ci/ 2>/dev/null
  local dict=(); [ -f tests/fuzz.dict ] && dict=(-dict=tests/fuzz.dict)
  if build/fuzz_file -max_total_time="$FUZZ_SECONDS" -max_len=262144 -rss_limit_mb=2048 -timeout=10 \
       "${dict[@]}" -artifact_prefix=build/ build/fuzz-ci 2>&1 | tail -5; then
    echo "PASS fuzzed ${FUZZ_SECONDS}s without a finding"; echo "1 passed, 0 failed"
  else
    echo "FAIL fuzzer found a crash (artifact under build/)"; echo "0 passed, 1 failed"; return 1
  fi
}


# the header's layout (tests/test_layout.py, stdlib Python): function length,
# statements a line, line width, anchors and table of contents, call order
layout_suite() {
  # GF_SKIP_LAYOUT=1 (make mutation): a mutant that only lengthens a line is
  # not a bug the layout suite should be credited with catching
  if [ "${GF_SKIP_LAYOUT:-0}" = 1 ]; then skip_suite layout "GF_SKIP_LAYOUT is set (mutation testing: the header's shape is not behaviour)"
  elif command -v python3 > /dev/null 2>&1; then suite layout python3 tests/test_layout.py
  else skip_suite layout "no python3 here"; fi
}

# the Python binding's Loader with the standard library only (tests/test_python_core.py; python3, no .venv)
python_core_suite() {
  if command -v python3 > /dev/null 2>&1; then
    suite python_core python3 tests/test_python_core.py --gpufeed-bench build/gpufeed-bench
  else skip_suite python_core "no python3 here"; fi
}

# ---- the quick suite -----------------------------------------------------------------

# the quick suite's short suites (seconds each)
quick_short() {
  suite_if $QB/asan/test_unit unit $QB/asan/test_unit
  suite_if $QB/asan/test_unit_window unit_window $QB/asan/test_unit_window
  suite_if $QB/asan/test_unit_noavx512 unit_noavx512 $QB/asan/test_unit_noavx512
  suite_if $QB/asan/test_bad_input bad_input $QB/asan/test_bad_input
  suite_if $QB/asan/test_nested nested $QB/asan/test_nested
  suite_if $QB/asan/test_cache_api cache_api $QB/asan/test_cache_api
  suite_if $QB/asan/test_faults faults $QB/asan/test_faults 2
  suite_if $QB/asan/test_faults faults_cli env TRIES=1 GPUFEED_BENCH=build/gpufeed-bench FAULTS_BIN=$QB/asan/test_faults bash tests/test_faults.sh
  suite_if $QB/asan/test_uploader_host uploader_host $QB/asan/test_uploader_host
  suite_if $QB/asan/test_cuda_streams_drv_emu cuda_streams_drv_emu $QB/asan/test_cuda_streams_drv_emu
  suite_if $QB/asan/test_dlpack dlpack $QB/asan/test_dlpack
  suite_if $QB/asan/test_remote remote $QB/asan/test_remote
  suite_if $QB/asan/test_remote_unit remote_unit $QB/asan/test_remote_unit
  suite committed_corpus committed_corpus
  suite_if $QB/asan/fuzz_replay fuzz_replay $QB/asan/fuzz_replay tests/data tests/fuzz/*.parquet
  suite_if $QB/asan/fz_dense fuzz_dense_replay fuzz_dense_replay $QB/asan/fz_dense
  suite fuzz_decoders_replay fuzz_committed_replay
}

if [ $QUICK = 1 ]; then
  echo "gpufeed quick tests (make check; JOBS=$JOBS; logs in build/logs/)"
  quick_tools
  echo "compilers: ASan+UBSan ${SANCC:-none}, TSan ${TSANCC:-none}; .venv: $([ -x "$PY" ] && echo yes || echo 'no (pyarrow checks are SKIPs)')"
  suite build build_quick
  [ "$SANQ" = "-g -O0" ] && skip_suite sanitizers "no compiler here links -fsanitize=address,undefined: the quick suites run unsanitized"
  CATBIN=$QB/asan/gpufeed-cat
  layout_suite
  # with GF_FAIL_FAST=1 the short suites go first (a failure shows sooner)
  if [ "$FAIL_FAST" = 1 ]; then PARALLEL=$JOBS; quick_short; wait_slot 1; PARALLEL=1; fi
  # the verdict's timing checks (test_verdict_names_bottleneck: a slow
  # stage must be named, which another job on the same cores can change)
  # run in make test only; every other loader test runs here, the ones
  # without threads only once (not again under TSan)
  TIMED=test_verdict_names_bottleneck
  # the rest $JOBS at a time, the longest first
  PARALLEL=$JOBS
  if [ -n "$TSANCC" ]; then
    suite_if $QB/tsan_test_loader loader_tsan env TSAN_OPTIONS=halt_on_error=1 GF_TEST_SKIP=$TIMED,test_rowmajor_transpose,test_batch_view $QB/tsan_test_loader
  else skip_suite loader_tsan "no compiler here has a working TSan runtime"; fi
  suite cache env GPUFEED_BENCH=build/gpufeed-bench GPUFEED_CACHE_TOOL=build/gpufeed-cache bash tests/test_cache.sh
  suite tools env BIN=$QB/asan README_OPT=-O0 bash tests/test_tools.sh
  suite_if $QB/asan/test_loader loader env GF_TEST_SKIP=$TIMED $QB/asan/test_loader
  suite_if $QB/asan/test_pack pack $QB/asan/test_pack
  if [ -n "$TSANCC" ]; then suite_if $QB/tsan_test_pack pack_tsan env TSAN_OPTIONS=halt_on_error=1 $QB/tsan_test_pack
  else skip_suite pack_tsan "no compiler here has a working TSan runtime"; fi
  [ "$FAIL_FAST" = 1 ] || quick_short
  suite bench_cli env BENCH=build/gpufeed-bench DENSE=build/gpufeed-dense IMPL_O=build/obj/gpufeed.o bash tests/test_bench.sh
  python_core_suite
  suite make bash tests/test_make.sh
  suite docs python3 tests/test_docs.py
  finish
  exit
fi

# ---- the whole suite ---------------------------------------------------------------------

CATBIN=build/asan/gpufeed-cat
echo "gpufeed tests (make test; JOBS=$JOBS builds at a time; logs in build/logs/)"
suite build              build_all
layout_suite
[ -f tests/compile_matrix.sh ] && suite compile_matrix bash tests/compile_matrix.sh
suite_if build/asan/test_unit unit build/asan/test_unit
suite_if build/test_unit unit_O2 build/test_unit
suite_if build/asan/test_unit_window unit_window build/asan/test_unit_window
suite_if build/asan/test_unit_noavx512 unit_noavx512 build/asan/test_unit_noavx512
suite_if build/asan/test_unit_nosimd unit_nosimd build/asan/test_unit_nosimd
suite_if build/asan/test_codec_zstd codec_zstd build/asan/test_codec_zstd
suite_if build/test_codec_zstd codec_zstd_O2 build/test_codec_zstd
suite_if build/test_codec_zstd_libzstd codec_zstd_libzstd build/test_codec_zstd_libzstd
suite_if build/asan/test_bad_input bad_input build/asan/test_bad_input
suite_if build/asan/test_nested nested build/asan/test_nested
suite_if build/asan/test_breadth breadth build/asan/test_breadth
suite_if build/asan/test_codec_ref codec_ref build/asan/test_codec_ref
suite_if build/test_codec_ref_syslib codec_ref_syslib build/test_codec_ref_syslib
suite_if build/asan/test_codec_gzip codec_gzip build/asan/test_codec_gzip
suite_if build/test_codec_gzip codec_gzip_O2 build/test_codec_gzip
suite_if build/asan/test_codec_gzip_zlib codec_gzip_zlib build/asan/test_codec_gzip_zlib
suite_if build/asan/fuzz_gzip_replay fuzz_gzip_replay bash -c 'build/asan/fuzz_gzip_replay tests/fuzz/gzip/*'
suite committed_corpus   committed_corpus
[ -f tests/test_tools.sh ] && suite tools bash tests/test_tools.sh
# the verdict's timing checks (test_verdict_names_bottleneck) run here only, with the suites one at a time
if [ "${GF_SKIP_TIMING:-0}" = 1 ]; then
  skip_suite loader_timing "GF_SKIP_TIMING is set (the verdict's timing checks depend on the machine's load)"
  suite_if build/asan/test_loader loader env GF_TEST_SKIP=test_verdict_names_bottleneck build/asan/test_loader
else suite_if build/asan/test_loader loader build/asan/test_loader; fi
suite_if build/tsan_test_loader loader_tsan env TSAN_OPTIONS=halt_on_error=1 GF_TEST_SKIP=test_verdict_names_bottleneck build/tsan_test_loader
suite_if build/asan/test_loader_nothreads loader_nothreads build/asan/test_loader_nothreads
suite_if build/asan/test_loader_noahead loader_noahead build/asan/test_loader_noahead
suite_if build/asan/test_loader_window loader_window build/asan/test_loader_window
suite_if build/asan/test_pack pack build/asan/test_pack
suite_if build/tsan_test_pack pack_tsan env TSAN_OPTIONS=halt_on_error=1 build/tsan_test_pack
[ -f tests/test_bench.sh ] && suite bench_cli bash tests/test_bench.sh
[ -f tests/test_cache.sh ] && suite cache bash tests/test_cache.sh
suite_if build/asan/test_cache_api cache_api build/asan/test_cache_api
suite_if build/tsan_test_cache_api cache_api_tsan env TSAN_OPTIONS=halt_on_error=1 build/tsan_test_cache_api
# faults while the loader and its cache run: 10 tries of each case (C API under ASan and TSan; the tools)
suite_if build/asan/test_faults faults build/asan/test_faults 10
suite_if build/tsan_test_faults faults_tsan env TSAN_OPTIONS=halt_on_error=1 build/tsan_test_faults 10
suite_if build/test_faults faults_cli env TRIES=10 GPUFEED_BENCH=build/gpufeed-bench FAULTS_BIN=build/test_faults bash tests/test_faults.sh
suite_if build/asan/test_remote remote build/asan/test_remote
suite_if build/asan/test_remote_unit remote_unit build/asan/test_remote_unit
suite_if build/test_curl_abi curl_abi build/test_curl_abi
suite_if build/asan/test_dlpack dlpack build/asan/test_dlpack
[ -f tests/test_mpi.sh ] && suite mpi bash tests/test_mpi.sh
[ -f tests/test_http.sh ] && suite http bash tests/test_http.sh
[ -f tests/test_s3.sh ] && suite s3 bash tests/test_s3.sh
[ -f tests/test_s3_auth.sh ] && suite s3_auth bash tests/test_s3_auth.sh
[ -f tests/test_aarch64.sh ] && suite aarch64 bash tests/test_aarch64.sh
suite_if build/asan/test_uploader_host uploader_host build/asan/test_uploader_host
suite_if build/asan/test_resident_cpu resident_plan build/asan/test_resident_cpu
suite_if build/test_uploader_host_cuda uploader_host_cuda build/test_uploader_host_cuda
suite_if build/asan/test_cuda_streams_emu cuda_streams_emu build/asan/test_cuda_streams_emu
suite_if build/tsan_test_cuda_streams_emu cuda_streams_emu_tsan env TSAN_OPTIONS=halt_on_error=1 build/tsan_test_cuda_streams_emu
suite_if build/test_cuda_streams cuda_streams build/test_cuda_streams
suite_if build/asan/test_cuda_streams_drv_emu cuda_streams_drv_emu build/asan/test_cuda_streams_drv_emu
suite_if build/tsan_test_cuda_streams_drv_emu cuda_streams_drv_emu_tsan env TSAN_OPTIONS=halt_on_error=1 build/tsan_test_cuda_streams_drv_emu
suite_if build/test_cudrv_abi cudrv_abi env GF_PTXAS="$(command -v ptxas || echo "$CUDA_HOME/bin/ptxas")" build/test_cudrv_abi
# the driver path where this machine has no driver (the reason names libcuda.so.1), then with the emulated one
if ldconfig -p 2> /dev/null | grep -q 'libcuda.so.1 '; then
  suite_if build/asan/test_uploader_host_drv uploader_host_drv build/asan/test_uploader_host_drv
else
  suite_if build/asan/test_uploader_host_drv uploader_host_drv env GF_EXPECT_WHY="no CUDA driver: libcuda.so.1" build/asan/test_uploader_host_drv
fi
suite_if build/emu/libcuda.so.1 uploader_host_drv_emu env LD_LIBRARY_PATH=$EMU_DIR build/asan/test_uploader_host_drv
suite_if build/test_gpu gpu build/test_gpu
suite_if build/read_dense example_read_dense build/read_dense
suite_if build/train_mlp example_train_mlp build/train_mlp
if [ -x "$PY" ]; then
  suite generated_corpus generated_corpus
  [ -f tests/test_dense.py ] && suite dense $PY tests/test_dense.py --bin build/asan/gpufeed-dense --fixtures build/fixtures
  # the same with SNAPPY pages streamed through a 4 KiB window: every writer's pages
  [ -f tests/test_dense.py ] && suite dense_window $PY tests/test_dense.py --bin build/asan/gpufeed-dense-window --fixtures build/fixtures
  # and with the SIMD fallbacks: no AVX-512 kernels, then no SIMD at all
  [ -f tests/test_dense.py ] && suite dense_noavx512 $PY tests/test_dense.py --bin build/asan/gpufeed-dense-noavx512 --fixtures build/fixtures
  [ -f tests/test_dense.py ] && suite dense_nosimd $PY tests/test_dense.py --bin build/asan/gpufeed-dense-nosimd --fixtures build/fixtures
  suite extended_corpus extended_corpus
  # Spark/Hive trees, evolving schemas, time units, IDs, partition keys against pyarrow.dataset
  [ -f tests/test_datasets.py ] && suite datasets $PY tests/test_datasets.py --bin build/asan/gpufeed-dense
  [ -f tests/test_pack.py ] && suite pack_writers $PY tests/test_pack.py --bin build/asan
  [ -f tests/test_wide.py ] && suite wide $PY tests/test_wide.py --bin build
  [ -f tests/test_python.py ] && suite python $PY tests/test_python.py --gpufeed-dense build/gpufeed-dense --gpufeed-bench build/gpufeed-bench
  [ -f tests/test_python_emu.py ] && suite python_cuda_emu $PY tests/test_python_emu.py
  # examples/lightning_train.py and examples/torchrun_ranks.py (torchrun --nproc_per_node=2) on the CPU
  [ -f tests/test_python_examples.py ] && suite python_examples $PY tests/test_python_examples.py
else
  # make test installs the venv: without it the corpus checks against pyarrow did not run
  SUITES+=(generated_corpus); echo "0 1 0" > build/logs/generated_corpus.count
  echo "generated_corpus       FAILED: no .venv (run make venv)"
fi
python_core_suite
suite_if build/asan/fuzz_replay fuzz_replay fuzz_replay
suite_if build/asan/fz_dense_replay fuzz_dense_replay fuzz_dense_replay build/asan/fz_dense_replay all
suite_if build/fuzz_seeds fuzz_decoders_replay fuzz_decoders_replay
[ -f tests/fuzz_file.c ] && suite fuzz_brief fuzz_brief
suite make bash tests/test_make.sh
suite docs python3 tests/test_docs.py
finish
