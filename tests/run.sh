#!/usr/bin/env bash
# gpufeed test runner (what `make test` runs). Each suite prints
# "N passed, N failed" as its last line; this script adds them up and ends
# with the total on its last line. Logs: build/logs/<suite>.log
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p build/logs build/asan
PASS=0; FAIL=0
CC=${CC:-cc}
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")")}
WARN="-std=c99 -Wall -Wextra -Werror -pedantic"
SAN="-g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
PY=.venv/bin/python
FUZZ_SECONDS=${FUZZ_SECONDS:-60}

# suite NAME CMD...: runs CMD, adds its "N passed, N failed" line
suite() {
  local name=$1; shift
  local log=build/logs/$name.log
  local start=$SECONDS
  "$@" >"$log" 2>&1
  local rc=$?
  local line
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
  local p=0 f=0
  if [ -n "$line" ]; then
    p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
    f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
  fi
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  if [ -z "$line" ] && [ "$rc" -eq 0 ]; then p=1; fi
  PASS=$((PASS + p)); FAIL=$((FAIL + f))
  printf '%-22s %5d passed, %3d failed  (%ds)\n' "$name" "$p" "$f" $((SECONDS - start))
  if [ "$f" -ne 0 ]; then
    echo "---- $name: failures (from $log) ----"
    grep -E 'FAIL|check failed|ERROR|error|Sanitizer|runtime error' "$log" | head -40
    echo "----"
  fi
}

# builds: a plain and a sanitizer variant of each program
build() { # OUT SRC [extra flags]
  local out=$1 src=$2; shift 2
  $CC -O2 -g $WARN -I. "$src" -o "build/$out" -lpthread -lm "$@" &&
  clang $SAN $WARN -I. "$src" -o "build/asan/$out" -lpthread -lm "$@"
}
build_all() {
  local ok=0 bad=0 t
  for t in tools/gpufeed-cat.c tools/gpufeed-inspect.c tools/gpufeed-dense.c tools/gpufeed-bench.c tools/gpufeed-cache.c \
           tests/test_unit.c tests/test_bad_input.c tests/test_nested.c tests/test_breadth.c tests/test_remote.c tests/test_dlpack.c tests/test_loader.c tests/test_resident_cpu.c tests/test_cache_api.c; do
    [ -f "$t" ] || continue
    local n; n=$(basename "$t" .c)
    if build "$n" "$t"; then ok=$((ok + 1)); echo "PASS build $n"; else bad=$((bad + 1)); echo "FAIL build $n"; fi
  done
  if [ -f tests/test_codec_gzip.c ]; then  # links the system zlib to make test data; once more decoding through it
    if build test_codec_gzip tests/test_codec_gzip.c -lz; then ok=$((ok + 1)); echo "PASS build test_codec_gzip"; else bad=$((bad + 1)); echo "FAIL build test_codec_gzip"; fi
    if build test_codec_gzip_zlib tests/test_codec_gzip.c -DGPUFEED_USE_ZLIB -lz; then ok=$((ok + 1)); echo "PASS build test_codec_gzip (GPUFEED_USE_ZLIB)"; else bad=$((bad + 1)); echo "FAIL build test_codec_gzip (GPUFEED_USE_ZLIB)"; fi
  fi
  if [ -f tests/fuzz_gzip.c ]; then
    if clang $SAN $WARN -DGF_FUZZ_MAIN -I. tests/fuzz_gzip.c -o build/asan/fuzz_gzip_replay; then ok=$((ok + 1)); echo "PASS build fuzz_gzip_replay"; else bad=$((bad + 1)); echo "FAIL build fuzz_gzip_replay"; fi
  fi
  if [ -f tests/test_codec_zstd.c ]; then  # libzstd makes the test frames; then the libzstd-backed build of the header
    if build test_codec_zstd tests/test_codec_zstd.c -lzstd; then ok=$((ok + 1)); echo "PASS build test_codec_zstd"; else bad=$((bad + 1)); echo "FAIL build test_codec_zstd"; fi
    if $CC -O2 -g $WARN -DGPUFEED_USE_LIBZSTD -I. tests/test_codec_zstd.c -o build/test_codec_zstd_libzstd -lpthread -lm -lzstd; then ok=$((ok + 1)); echo "PASS build test_codec_zstd (GPUFEED_USE_LIBZSTD)"; else bad=$((bad + 1)); echo "FAIL build test_codec_zstd (GPUFEED_USE_LIBZSTD)"; fi
  fi
  if [ -f tests/test_upload_host.c ]; then  # the host fallback, and the CUDA build of it
    if build test_upload_host tests/test_upload_host.c -DGPUFEED_NO_CUDA; then ok=$((ok + 1)); echo "PASS build test_upload_host"; else bad=$((bad + 1)); echo "FAIL build test_upload_host"; fi
    if [ -n "$CUDA_HOME" ] && [ -f "$CUDA_HOME/include/cuda_runtime.h" ]; then
      if $CC -O2 $WARN -DGPUFEED_CUDA -I. -I"$CUDA_HOME/include" tests/test_upload_host.c -o build/test_upload_host_cuda -L"$CUDA_HOME/lib64" -lcudart -lpthread -lm; then ok=$((ok + 1)); echo "PASS build test_upload_host (GPUFEED_CUDA, -lcudart)"; else bad=$((bad + 1)); echo "FAIL build test_upload_host (GPUFEED_CUDA)"; fi
    else echo "SKIP build test_upload_host (GPUFEED_CUDA): no CUDA toolkit"; fi
  fi
  if [ -f tests/test_cuda_streams.c ]; then  # CUDA stream semantics: the emulated runtime here, the real one on a GPU
    if [ -n "$CUDA_HOME" ] && [ -f "$CUDA_HOME/include/cuda_runtime_api.h" ]; then
      local emu="-DGPUFEED_CUDA -DGF_CUDA_EMU -I$CUDA_HOME/include tests/test_cuda_streams.c tests/cuda_emu.c"
      # shellcheck disable=SC2086
      if clang $SAN $WARN -I. $emu -o build/asan/test_cuda_streams_emu -lpthread -lm &&
         clang -g -O1 -fsanitize=thread $WARN -I. $emu -o build/tsan_test_cuda_streams_emu -lpthread -lm; then
        ok=$((ok + 1)); echo "PASS build test_cuda_streams (emulated runtime, ASan and TSan)"
      else bad=$((bad + 1)); echo "FAIL build test_cuda_streams (emulated runtime)"; fi
      if $CC -O2 $WARN -DGPUFEED_CUDA -I. -I"$CUDA_HOME/include" tests/test_cuda_streams.c -o build/test_cuda_streams -L"$CUDA_HOME/lib64" -lcudart -lpthread -lm; then
        ok=$((ok + 1)); echo "PASS build test_cuda_streams (GPUFEED_CUDA, -lcudart)"
      else bad=$((bad + 1)); echo "FAIL build test_cuda_streams (GPUFEED_CUDA)"; fi
    else echo "SKIP build test_cuda_streams: no CUDA toolkit"; fi
  fi
  if command -v nvcc >/dev/null 2>&1; then  # CUDA code must compile here even without a GPU
    for cu in tests/test_gpu.cu examples/train_mlp.cu tools/bench/bench_gpu.cu; do
      [ -f "$cu" ] || continue
      n=$(basename "$cu" .cu)
      if nvcc -O2 -arch=sm_90 -Xcompiler -Wall,-Wextra,-Werror -I. "$cu" -o "build/$n" -lpthread 2>build/logs/nvcc_$n.err; then ok=$((ok + 1)); echo "PASS nvcc $n"; else bad=$((bad + 1)); echo "FAIL nvcc $n"; cat build/logs/nvcc_$n.err; fi
    done
  else echo "SKIP nvcc builds: nvcc not installed"; fi
  if [ -f examples/read_dense.c ]; then
    if $CC -O2 $WARN examples/read_dense.c -o build/read_dense -lpthread -lm; then ok=$((ok + 1)); echo "PASS build read_dense (one command)"; else bad=$((bad + 1)); echo "FAIL build read_dense"; fi
  fi
  if [ -f tests/test_loader.c ]; then
    if clang -g -O1 -fsanitize=thread $WARN -I. tests/test_loader.c -o build/tsan_test_loader -lpthread -lm; then ok=$((ok + 1)); echo "PASS build tsan test_loader"; else bad=$((bad + 1)); echo "FAIL build tsan test_loader"; fi
    # the loader without threads: workers' steps run on the caller's thread
    if clang $SAN $WARN -DGPUFEED_NO_THREADS -I. tests/test_loader.c -o build/asan/test_loader_nothreads -lpthread -lm; then ok=$((ok + 1)); echo "PASS build test_loader (GPUFEED_NO_THREADS)"; else bad=$((bad + 1)); echo "FAIL build test_loader (GPUFEED_NO_THREADS)"; fi
  fi
  if [ -f tests/test_cache_api.c ]; then
    if clang -g -O1 -fsanitize=thread $WARN -I. tests/test_cache_api.c -o build/tsan_test_cache_api -lpthread -lm; then ok=$((ok + 1)); echo "PASS build tsan test_cache_api"; else bad=$((bad + 1)); echo "FAIL build tsan test_cache_api"; fi
  fi
  # codecs against the system libraries, and the opt-in builds that use them
  if [ -f tests/test_codec_ref.c ]; then
    if build test_codec_ref tests/test_codec_ref.c -Itests -lsnappy -llz4; then ok=$((ok + 1)); echo "PASS build test_codec_ref"; else bad=$((bad + 1)); echo "FAIL build test_codec_ref"; fi
    if $CC -O2 $WARN -DGPUFEED_USE_LIBSNAPPY -DGPUFEED_USE_LIBLZ4 -DGPUFEED_USE_BROTLI -I. -Itests tests/test_codec_ref.c -o build/test_codec_ref_syslib -lsnappy -llz4 -lbrotlienc -lbrotlidec -lpthread -lm; then ok=$((ok + 1)); echo "PASS build test_codec_ref (GPUFEED_USE_LIBSNAPPY, GPUFEED_USE_LIBLZ4, GPUFEED_USE_BROTLI)"; else bad=$((bad + 1)); echo "FAIL build test_codec_ref (system libraries)"; fi
  fi
  if $CC -O2 $WARN -DGPUFEED_USE_BROTLI -I. tools/gpufeed-cat.c -o build/gpufeed-cat-brotli -lbrotlidec -lpthread -lm; then ok=$((ok + 1)); echo "PASS build gpufeed-cat (GPUFEED_USE_BROTLI, -lbrotlidec)"; else bad=$((bad + 1)); echo "FAIL build gpufeed-cat (GPUFEED_USE_BROTLI)"; fi
  if [ -f tests/fuzz_decoders.c ]; then
    local t
    for t in thrift levels plain rle_bool dict delta_bp delta_lba delta_ba bss snappy lz4 nested; do
      if clang -g -O1 -fsanitize=fuzzer,address,undefined $WARN -DGFF_TARGET=$t -I. -Itests tests/fuzz_decoders.c -o build/fz_$t 2>build/logs/fz_$t.err; then ok=$((ok + 1)); echo "PASS build fuzz target $t"; else bad=$((bad + 1)); echo "FAIL build fuzz target $t: $(head -3 build/logs/fz_$t.err)"; fi
    done
    for t in gzip zstd; do  # the codecs' own targets
      [ -f tests/fuzz_$t.c ] || continue
      if clang -g -O1 -fsanitize=fuzzer,address,undefined -I. tests/fuzz_$t.c -o build/fz_$t 2>build/logs/fz_$t.err; then ok=$((ok + 1)); echo "PASS build fuzz target $t"; else bad=$((bad + 1)); echo "FAIL build fuzz target $t: $(head -3 build/logs/fz_$t.err)"; fi
    done
    if gcc -O1 $WARN -DGFF_SEEDS -I. -Itests tests/fuzz_decoders.c -o build/fuzz_seeds; then ok=$((ok + 1)); echo "PASS build fuzz seed writer"; else bad=$((bad + 1)); echo "FAIL build fuzz seed writer"; fi
  fi
  if [ -f tests/fuzz_file.c ]; then
    if clang $SAN $WARN -DGF_FUZZ_MAIN -I. tests/fuzz_file.c -o build/asan/fuzz_replay; then ok=$((ok + 1)); echo "PASS build fuzz_replay"; else bad=$((bad + 1)); echo "FAIL build fuzz_replay"; fi
  fi
  echo "$ok passed, $bad failed"
  [ $bad -eq 0 ]
}

# the committed corpus: gpufeed-cat (sanitizer build) against expected CSV
committed_corpus() {
  local ok=0 bad=0 f
  for f in tests/data/*.parquet; do
    local exp=${f%.parquet}.csv
    [ -f "$exp" ] || continue
    if build/asan/gpufeed-cat --verify-crc "$f" > build/logs/cat.out 2> build/logs/cat.err && cmp -s build/logs/cat.out "$exp"; then
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

echo "gpufeed tests"
suite build              build_all
[ -f tests/compile_matrix.sh ] && suite compile_matrix bash tests/compile_matrix.sh
[ -x build/asan/test_unit ] && suite unit build/asan/test_unit
[ -x build/test_unit ] && suite unit_O2 build/test_unit
[ -x build/asan/test_codec_zstd ] && suite codec_zstd build/asan/test_codec_zstd
[ -x build/test_codec_zstd ] && suite codec_zstd_O2 build/test_codec_zstd
[ -x build/test_codec_zstd_libzstd ] && suite codec_zstd_libzstd build/test_codec_zstd_libzstd
[ -x build/asan/test_bad_input ] && suite bad_input build/asan/test_bad_input
[ -x build/asan/test_nested ] && suite nested build/asan/test_nested
[ -x build/asan/test_breadth ] && suite breadth build/asan/test_breadth
[ -x build/asan/test_codec_ref ] && suite codec_ref build/asan/test_codec_ref
[ -x build/test_codec_ref_syslib ] && suite codec_ref_syslib build/test_codec_ref_syslib
[ -x build/asan/test_codec_gzip ] && suite codec_gzip build/asan/test_codec_gzip
[ -x build/test_codec_gzip ] && suite codec_gzip_O2 build/test_codec_gzip
[ -x build/asan/test_codec_gzip_zlib ] && suite codec_gzip_zlib build/asan/test_codec_gzip_zlib
[ -x build/asan/fuzz_gzip_replay ] && suite fuzz_gzip_replay bash -c 'build/asan/fuzz_gzip_replay tests/fuzz/gzip/*'
suite committed_corpus   committed_corpus
[ -f tests/test_tools.sh ] && suite tools bash tests/test_tools.sh
[ -x build/asan/test_loader ] && suite loader build/asan/test_loader
[ -x build/tsan_test_loader ] && suite loader_tsan env TSAN_OPTIONS=halt_on_error=1 build/tsan_test_loader
[ -x build/asan/test_loader_nothreads ] && suite loader_nothreads build/asan/test_loader_nothreads
[ -f tests/test_bench.sh ] && suite bench_cli bash tests/test_bench.sh
[ -f tests/test_cache.sh ] && suite cache bash tests/test_cache.sh
[ -x build/asan/test_cache_api ] && suite cache_api build/asan/test_cache_api
[ -x build/tsan_test_cache_api ] && suite cache_api_tsan env TSAN_OPTIONS=halt_on_error=1 build/tsan_test_cache_api
[ -x build/asan/test_remote ] && suite remote build/asan/test_remote
[ -x build/asan/test_dlpack ] && suite dlpack build/asan/test_dlpack
[ -f tests/test_mpi.sh ] && suite mpi bash tests/test_mpi.sh
[ -f tests/test_http.sh ] && suite http bash tests/test_http.sh
[ -f tests/test_aarch64.sh ] && suite aarch64 bash tests/test_aarch64.sh
[ -x build/asan/test_upload_host ] && suite upload_host build/asan/test_upload_host
[ -x build/asan/test_resident_cpu ] && suite resident_plan build/asan/test_resident_cpu
[ -x build/test_upload_host_cuda ] && suite upload_host_cuda build/test_upload_host_cuda
[ -x build/asan/test_cuda_streams_emu ] && suite cuda_streams_emu build/asan/test_cuda_streams_emu
[ -x build/tsan_test_cuda_streams_emu ] && suite cuda_streams_emu_tsan env TSAN_OPTIONS=halt_on_error=1 build/tsan_test_cuda_streams_emu
[ -x build/test_cuda_streams ] && suite cuda_streams build/test_cuda_streams
[ -x build/test_gpu ] && suite gpu build/test_gpu
[ -x build/read_dense ] && suite example_read_dense build/read_dense
[ -x build/train_mlp ] && suite example_train_mlp build/train_mlp
if [ -x "$PY" ]; then
  suite generated_corpus generated_corpus
  [ -f tests/test_dense.py ] && suite dense $PY tests/test_dense.py --bin build/asan/gpufeed-dense --fixtures build/fixtures
  suite extended_corpus extended_corpus
  [ -f tests/test_python.py ] && suite python $PY tests/test_python.py --gpufeed-dense build/gpufeed-dense --gpufeed-bench build/gpufeed-bench
  [ -f tests/test_python_emu.py ] && suite python_cuda_emu $PY tests/test_python_emu.py
else
  echo "generated_corpus: no .venv (run make venv)"; FAIL=$((FAIL + 1))
fi
[ -x build/asan/fuzz_replay ] && suite fuzz_replay fuzz_replay
[ -x build/fuzz_seeds ] && suite fuzz_decoders_replay fuzz_decoders_replay
[ -f tests/fuzz_file.c ] && suite fuzz_brief fuzz_brief
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
