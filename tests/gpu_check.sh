#!/usr/bin/env bash
# gpu_check.sh -- the GPU checks of gpufeed's uploader, in one command, on a
# machine with an NVIDIA GPU (H100 / H200), nvcc and a C compiler. No network.
#
#   bash tests/gpu_check.sh            (from anywhere; logs in build/gpu-check/)
#
# Steps, on both of gpufeed's CUDA paths (the runtime compiled in, and the
# driver loaded at run time, which plain cc builds and the Python binding
# use): build (in parallel) and run tests/test_gpu.cu twice (nvcc, then nvcc
# with -DGPUFEED_CUDA_DRIVER); run the runtime build under compute-sanitizer
# --tool memcheck and --tool racecheck and the driver build under memcheck
# (when installed); tests/test_uploader_host.c and tests/test_cuda_streams.c
# with the runtime (-DGPUFEED_CUDA -lcudart) and on the driver (plain cc);
# the README's trainer extracted verbatim and built with
# `cc -O2 -I. trainer.c -o trainer -lpthread -lm -ldl` and no CUDA on the
# compiler's paths: its batches must reach the GPU; the Python binding
# installed from a wheel into a fresh venv with nvcc off PATH: device
# batches through DLPack equal to the CPU batches; examples/train_mlp.cu for
# 2 epochs. Then a summary with the GPU, driver, CUDA version and date. Each
# step is PASS, FAIL or SKIP; exit status 1 when a step failed. Without a
# GPU the programs still build (for sm_90) and say SKIP: the script
# degrades, it does not fail.
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

# ---- builds and runs -----------------------------------------------------------
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

# every program, built in parallel (background jobs; each logs to $LOG)
declare -A BUILT=()
pbuild() { # NAME LOGFILE CMD...
    local name=$1 log=$2
    shift 2
    ( "$@" > "$log" 2>&1; echo $? > "$log.rc" ) &
    BUILT[$name]=$log
}
pbuilt() { # NAME: PASS/FAIL recorded; 0 when it built
    local log=${BUILT[$1]}
    if [ "$(cat "$log.rc" 2> /dev/null)" = 0 ]; then record "build $1" PASS; return 0; fi
    record "build $1" FAIL "see $log"
    sed -e 's/^/    /' "$log" | head -n 30
    return 1
}
HAVE_RT=0
if [ -n "$NVCC" ] && [ -f "$CUDA_HOME/include/cuda_runtime.h" ] && have "$CC"; then HAVE_RT=1; fi
if [ -n "$NVCC" ]; then
    pbuild test_gpu "$LOG/build_test_gpu.log" "$NVCC" -O2 -lineinfo -arch="$ARCH" -I. -Xcompiler -Wall,-Wextra tests/test_gpu.cu -o build/test_gpu -lpthread
    pbuild "test_gpu (driver)" "$LOG/build_test_gpu_driver.log" "$NVCC" -O2 -lineinfo -arch="$ARCH" -DGPUFEED_CUDA_DRIVER -I. -Xcompiler -Wall,-Wextra tests/test_gpu.cu -o build/test_gpu_driver -lpthread
    pbuild train_mlp "$LOG/build_train_mlp.log" "$NVCC" -O2 -arch="$ARCH" -Xcompiler -Wall,-Wextra examples/train_mlp.cu -o build/train_mlp
fi
W="-O2 -std=c99 -Wall -Wextra -pedantic"
if [ $HAVE_RT = 1 ]; then
    for t in test_uploader_host test_cuda_streams; do
        # shellcheck disable=SC2086
        pbuild "$t (runtime)" "$LOG/build_${t}_runtime.log" "$CC" $W -DGPUFEED_CUDA -I. -I"$CUDA_HOME/include" "tests/$t.c" \
            -o "build/${t}_cuda" -L"$CUDA_HOME/lib64" -Wl,-rpath,"$CUDA_HOME/lib64" -lcudart -lpthread -lm
    done
    # the driver path; the stream test's own consumer uses the runtime
    # shellcheck disable=SC2086
    pbuild "test_cuda_streams (driver)" "$LOG/build_test_cuda_streams_driver.log" "$CC" $W -I. -I"$CUDA_HOME/include" tests/test_cuda_streams.c \
        -o build/test_cuda_streams_driver -L"$CUDA_HOME/lib64" -Wl,-rpath,"$CUDA_HOME/lib64" -lcudart -lpthread -lm -ldl
fi
if have "$CC"; then
    # shellcheck disable=SC2086
    pbuild "test_uploader_host (driver)" "$LOG/build_test_uploader_host_driver.log" "$CC" $W -I. tests/test_uploader_host.c \
        -o build/test_uploader_host_driver -lpthread -lm -ldl
    # the README's trainer, byte for byte, with the command the README gives, and
    # neither CUDA headers nor CUDA libraries on the compiler's paths
    mkdir -p build/readme-trainer
    python3 - << 'PY'
import re
s = open("README.md").read()
progs = [b for b in re.findall(r"```c\n(.*?)```", s, re.S) if "gpufeed_uploader_next" in b and "int main" in b]
open("build/readme-trainer/trainer.c", "w").write(progs[0] if progs else "")
PY
    cp gpufeed.h build/readme-trainer/
    pbuild "README trainer (cc, no CUDA toolkit)" "$LOG/build_readme_trainer.log" env -u CPATH -u C_INCLUDE_PATH -u LIBRARY_PATH \
        bash -c "cd build/readme-trainer && $CC -O2 -I. trainer.c -o trainer -lpthread -lm -ldl"
fi
wait

if [ -z "$NVCC" ]; then
    record "build test_gpu" SKIP "nvcc not found"
    record "build train_mlp" SKIP "nvcc not found"
else
    for v in "" " (driver)"; do
        bin=build/test_gpu; [ -n "$v" ] && bin=build/test_gpu_driver
        if pbuilt "test_gpu$v"; then
            echo "-- run test_gpu$v"
            run "test_gpu$v" "$LOG/test_gpu${v:+_driver}.log" "$bin"
            tools="memcheck racecheck"; [ -n "$v" ] && tools=memcheck
            for tool in $tools; do
                if [ $GPU_OK = 0 ]; then record "test_gpu$v under compute-sanitizer $tool" SKIP "no GPU"; continue; fi
                if [ -z "$SANITIZER" ]; then record "test_gpu$v under compute-sanitizer $tool" SKIP "compute-sanitizer not found"; continue; fi
                echo "-- run test_gpu$v under compute-sanitizer --tool $tool (timings not checked)"
                run "test_gpu$v under compute-sanitizer $tool" "$LOG/test_gpu${v:+_driver}_$tool.log" \
                    env GPUFEED_TEST_NO_TIMING=1 timeout "${SANITIZER_TIMEOUT:-1200}" \
                    "$SANITIZER" --tool "$tool" --error-exitcode 3 "$bin"
            done
        fi
    done
    if pbuilt train_mlp; then
        echo "-- run train_mlp (2 epochs)"
        run "train_mlp 2 epochs" "$LOG/train_mlp.log" build/train_mlp examples/data/flights.parquet 2
    fi
fi

# the host-compiler tests, with the real runtime and on the real driver (on a
# GPU the uploader runs on the device; test_cuda_streams drives consumer
# streams, DLPack device tensors and deleters on other threads)
if [ $HAVE_RT = 1 ]; then
    for t in test_uploader_host test_cuda_streams; do
        pbuilt "$t (runtime)" && run "$t (runtime)" "$LOG/${t}_runtime.log" "build/${t}_cuda"
    done
    pbuilt "test_cuda_streams (driver)" && run "test_cuda_streams (driver)" "$LOG/test_cuda_streams_driver.log" build/test_cuda_streams_driver
else
    record "test_uploader_host, test_cuda_streams (runtime)" SKIP "no CUDA headers or no $CC"
fi
if have "$CC"; then
    pbuilt "test_uploader_host (driver)" && run "test_uploader_host (driver)" "$LOG/test_uploader_host_driver.log" build/test_uploader_host_driver
    if pbuilt "README trainer (cc, no CUDA toolkit)"; then
        echo "-- run the README trainer"
        build/readme-trainer/trainer > "$LOG/readme_trainer.log" 2>&1
        rc=$?
        sed -e 's/^/    /' "$LOG/readme_trainer.log"
        if [ $rc -ne 0 ]; then record "README trainer" FAIL "exit $rc"
        elif ! grep -qx "673552 rows, dep_delay sum 8304400, carrier id sum 443879646" "$LOG/readme_trainer.log"; then record "README trainer" FAIL "other sums"
        elif [ $GPU_OK = 0 ]; then record "README trainer" SKIP "no GPU (host batches, the same sums)"
        elif grep -qx "166 batches on the GPU" "$LOG/readme_trainer.log"; then record "README trainer" PASS "every batch on the GPU, the same sums"
        else record "README trainer" FAIL "batches not on the GPU"
        fi
    fi
fi

# the Python binding as pip installs it (from a wheel: pip install of the
# checkout builds the same one), with every directory that holds nvcc taken
# off PATH: GPU batches through the driver, equal to the CPU batches
PY3=$(command -v python3 || true)
if [ $GPU_OK = 1 ] && [ -n "$PY3" ] && "$PY3" -c "import torch" > /dev/null 2>&1; then
    echo "-- the Python binding from a wheel, no nvcc"
    rm -rf build/gpu-site build/gpu-libcache build/gpufeed-*.whl
    NONVCC=$(echo "$PATH" | tr ':' '\n' | while read -r d; do [ -n "$d" ] && [ ! -x "$d/nvcc" ] && printf '%s:' "$d"; done)
    {
        { ls dist/gpufeed-*.whl > /dev/null 2>&1 && cp dist/gpufeed-*.whl build/ ||
          "$PY3" -m pip wheel -q --no-deps --no-build-isolation -w build . ; } &&
        "$PY3" -m pip install -q --no-index --no-deps --target build/gpu-site build/gpufeed-*.whl &&
        env PATH="${NONVCC%:}" CUDA_HOME=/nonexistent PYTHONPATH="$PWD/build/gpu-site" GPUFEED_CACHE_DIR="$PWD/build/gpu-libcache" "$PY3" -c '
import torch, gpufeed, shutil
assert shutil.which("nvcc") is None, "nvcc is on PATH"
assert "gpu-site" in gpufeed.__file__, gpufeed.__file__
f = [gpufeed.Feature("dep_delay"), gpufeed.Feature("distance")]
cpu = [torch.from_dlpack(b).clone() for b in gpufeed.Loader("examples/data/flights.parquet", features=f, batch_rows=4096, seed=3, shuffle_window=2, device=None)]
L = gpufeed.Loader("examples/data/flights.parquet", features=f, batch_rows=4096, seed=3, shuffle_window=2)
gpu = [torch.from_dlpack(b).clone() for b in L]
print("device", L.device, "batches", len(gpu), "on", {str(g.device) for g in gpu})
assert L.device == 0 and all(g.device.type == "cuda" for g in gpu), "not on the GPU"
assert len(gpu) == len(cpu) and all(torch.equal(g.cpu(), c) for g, c in zip(gpu, cpu)), "GPU batches differ from CPU batches"
print("python: GPU batches equal to CPU batches, no nvcc")'
    } > "$LOG/python_wheel.log" 2>&1
    rc=$?
    sed -e 's/^/    /' "$LOG/python_wheel.log" | tail -n 12
    if [ $rc -eq 0 ]; then record "Python binding from a wheel, no nvcc" PASS; else record "Python binding from a wheel, no nvcc" FAIL "see $LOG/python_wheel.log"; fi
else
    record "Python binding from a wheel, no nvcc" SKIP "no GPU or no torch"
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
