#!/usr/bin/env bash
# gpu_check.sh -- the GPU checks of gpufeed's uploader, in one command, on a
# machine with an NVIDIA GPU (H100 / H200), nvcc and a C compiler. No network.
#
#   bash tests/gpu_check.sh            (from anywhere; logs in build/gpu-check/)
#
# Steps: build and run tests/test_gpu.cu; run it again under
# compute-sanitizer --tool memcheck and --tool racecheck (when installed);
# build and run tests/test_uploader_host.c and tests/test_cuda_streams.c with
# CUDA compiled in; build and run examples/train_mlp.cu for 2 epochs. Then a summary with the GPU, driver,
# CUDA version and date. Each step is PASS, FAIL or SKIP; exit status 1 when
# a step failed. Without a GPU the programs still build (for sm_90) and say
# SKIP: the script degrades, it does not fail.
#
# Environment: GPU_ARCH (default: native with a GPU, else sm_90),
# CC (default cc), CUDA_HOME (default: the directory above nvcc's bin/),
# SANITIZER_TIMEOUT (seconds per sanitizer run, default 1200).
set -u
cd "$(dirname "$0")/.." || exit 2

LOG=build/gpu-check
mkdir -p "$LOG"
CC=${CC:-cc}
have() { command -v "$1" > /dev/null 2>&1; }

declare -a NAMES=() RESULTS=() NOTES=()
record() { NAMES+=("$1"); RESULTS+=("$2"); NOTES+=("${3:-}"); echo "== $2 $1${3:+ ($3)}"; }

# ---- the machine ---------------------------------------------------------------
GPU_OK=0
GPU_DESC="none"
DRIVER="none"
SMI_CUDA=""
if have nvidia-smi && nvidia-smi -L > /dev/null 2>&1; then
    GPU_OK=1
    GPU_DESC=$(nvidia-smi --query-gpu=index,name,memory.total,compute_cap --format=csv,noheader 2> /dev/null | paste -sd ';' -)
    DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2> /dev/null | head -n 1)
    SMI_CUDA=$(nvidia-smi 2> /dev/null | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -n 1)
elif have nvidia-smi; then
    GPU_DESC="none (nvidia-smi: $(nvidia-smi -L 2>&1 | head -n 1))"
else
    GPU_DESC="none (nvidia-smi not found)"
fi

NVCC=""
if have nvcc; then NVCC=$(command -v nvcc)
elif [ -n "${CUDA_HOME:-}" ] && [ -x "$CUDA_HOME/bin/nvcc" ]; then NVCC=$CUDA_HOME/bin/nvcc
elif [ -x /usr/local/cuda/bin/nvcc ]; then NVCC=/usr/local/cuda/bin/nvcc
fi
if [ -n "$NVCC" ]; then
    CUDA_HOME=${CUDA_HOME:-$(cd "$(dirname "$NVCC")/.." && pwd)}
    NVCC_VER=$("$NVCC" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p' | head -n 1)
else
    NVCC_VER="none"
fi

if [ -n "${GPU_ARCH:-}" ]; then ARCH=$GPU_ARCH
elif [ $GPU_OK = 1 ]; then ARCH=native
else ARCH=sm_90
fi

SANITIZER=""
if have compute-sanitizer; then SANITIZER=$(command -v compute-sanitizer)
elif [ -n "${CUDA_HOME:-}" ] && [ -x "$CUDA_HOME/bin/compute-sanitizer" ]; then SANITIZER=$CUDA_HOME/bin/compute-sanitizer
elif [ -n "${CUDA_HOME:-}" ] && [ -x "$CUDA_HOME/compute-sanitizer/compute-sanitizer" ]; then SANITIZER=$CUDA_HOME/compute-sanitizer/compute-sanitizer
fi

echo "gpufeed GPU check: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "GPU: $GPU_DESC"
echo "driver: $DRIVER${SMI_CUDA:+ (CUDA $SMI_CUDA)}; nvcc: $NVCC_VER; arch: $ARCH"
echo

# ---- builds --------------------------------------------------------------------
build() { # NAME LOGFILE CMD...
    local name=$1 log=$2
    shift 2
    if "$@" > "$log" 2>&1; then return 0; fi
    record "$name" FAIL "build failed: see $log"
    sed -e 's/^/    /' "$log" | head -n 30
    return 1
}

# run NAME LOGFILE CMD...: PASS when the program exits 0 and its output does
# not say SKIP for lack of a GPU (then SKIP); FAIL otherwise
run() {
    local name=$1 log=$2 rc
    shift 2
    "$@" > "$log" 2>&1
    rc=$?
    sed -e 's/^/    /' "$log" | tail -n 40
    if [ $rc -ne 0 ]; then record "$name" FAIL "exit $rc: see $log"
    elif grep -q 'SKIP: no GPU\|no usable GPU' "$log"; then record "$name" SKIP "no GPU"
    else record "$name" PASS "$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)"
    fi
}

if [ -z "$NVCC" ]; then
    record "build test_gpu" SKIP "nvcc not found"
    record "build train_mlp" SKIP "nvcc not found"
else
    echo "-- build test_gpu ($ARCH)"
    if build "build test_gpu" "$LOG/build_test_gpu.log" \
        "$NVCC" -O2 -lineinfo -arch="$ARCH" -I. -Xcompiler -Wall,-Wextra tests/test_gpu.cu -o build/test_gpu -lpthread; then
        record "build test_gpu" PASS
        echo "-- run test_gpu"
        run "test_gpu" "$LOG/test_gpu.log" build/test_gpu
        for tool in memcheck racecheck; do
            if [ $GPU_OK = 0 ]; then record "test_gpu under compute-sanitizer $tool" SKIP "no GPU"; continue; fi
            if [ -z "$SANITIZER" ]; then record "test_gpu under compute-sanitizer $tool" SKIP "compute-sanitizer not found"; continue; fi
            echo "-- run test_gpu under compute-sanitizer --tool $tool (timings not checked)"
            run "test_gpu under compute-sanitizer $tool" "$LOG/test_gpu_$tool.log" \
                env GPUFEED_TEST_NO_TIMING=1 timeout "${SANITIZER_TIMEOUT:-1200}" \
                "$SANITIZER" --tool "$tool" --error-exitcode 3 build/test_gpu
        done
    fi

    echo "-- build train_mlp ($ARCH)"
    if build "build train_mlp" "$LOG/build_train_mlp.log" \
        "$NVCC" -O2 -arch="$ARCH" -Xcompiler -Wall,-Wextra examples/train_mlp.cu -o build/train_mlp; then
        record "build train_mlp" PASS
        echo "-- run train_mlp (2 epochs)"
        run "train_mlp 2 epochs" "$LOG/train_mlp.log" build/train_mlp examples/data/flights.parquet 2
    fi
fi

# the host-compiler tests with CUDA compiled in, linked with the real runtime
# (on a GPU the uploader runs on the device; test_cuda_streams drives consumer
# streams, DLPack device tensors and deleters on other threads)
host_cuda_test() { # NAME
    local name=$1
    echo "-- build $name with -DGPUFEED_CUDA"
    if build "build $name (CUDA)" "$LOG/build_$name.log" \
        "$CC" -O2 -std=c99 -Wall -Wextra -pedantic -DGPUFEED_CUDA -I. -I"$CUDA_HOME/include" "tests/$name.c" \
        -o "build/${name}_cuda" -L"$CUDA_HOME/lib64" -Wl,-rpath,"$CUDA_HOME/lib64" -lcudart -lpthread -lm; then
        record "build $name (CUDA)" PASS
        echo "-- run $name (CUDA)"
        run "$name (CUDA)" "$LOG/$name.log" "build/${name}_cuda"
    fi
}
if [ -n "$NVCC" ] && [ -f "$CUDA_HOME/include/cuda_runtime.h" ] && have "$CC"; then
    host_cuda_test test_uploader_host
    host_cuda_test test_cuda_streams
else
    record "test_uploader_host, test_cuda_streams (CUDA)" SKIP "no CUDA headers or no $CC"
fi

# ---- summary -------------------------------------------------------------------
echo
echo "================ gpufeed GPU check summary ================"
echo "date:    $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "host:    $(uname -srm)"
echo "GPU:     $GPU_DESC"
echo "driver:  $DRIVER${SMI_CUDA:+ (driver CUDA $SMI_CUDA)}"
echo "nvcc:    $NVCC_VER${NVCC:+ ($NVCC)}, arch $ARCH"
echo "sanitizer: ${SANITIZER:-not found}"
fails=0
for i in "${!NAMES[@]}"; do
    printf '  %-4s  %s%s\n' "${RESULTS[$i]}" "${NAMES[$i]}" "${NOTES[$i]:+  -- ${NOTES[$i]}}"
    [ "${RESULTS[$i]}" = FAIL ] && fails=$((fails + 1))
done
if [ -f "$LOG/test_gpu.log" ]; then
    grep -E 'time in gpufeed_uploader_next|GPU busy|NOTE' "$LOG/test_gpu.log" | sed -e 's/^ */  test_gpu: /'
fi
if [ -f "$LOG/train_mlp.log" ]; then
    grep -E '^epoch|samples/s|stall|verdict' "$LOG/train_mlp.log" | sed -e 's/^/  train_mlp: /'
fi
echo "logs:    $LOG/"
if [ $fails -gt 0 ]; then echo "RESULT: $fails step(s) failed"; exit 1; fi
if [ $GPU_OK = 0 ]; then echo "RESULT: no GPU here: built, GPU checks skipped"; else echo "RESULT: all passed"; fi
exit 0
