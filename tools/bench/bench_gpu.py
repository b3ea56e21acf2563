"""GPU benchmark of gpufeed against a PyTorch DataLoader, the whole protocol of
tools/bench/README.md ("GPU side") in one command.

On the GPU machine run both, from the repository root:
    bash tests/gpu_check.sh          # correctness of the uploader first
    python3 tools/bench/bench_gpu.py       # then this (or .venv/bin/python tools/bench/bench_gpu.py)

    python3 tools/bench/bench_gpu.py [--rows 2097152] [--batch 65536]
        [--steps-ms 0,1,5,20] [--epochs 2] [--workers N] [--torch-workers 0,4,8,16]
        [--columns a,b,c] [--skip-torch] [--skip-gpufeed] [--out build/bench]
        [--variants runtime,driver,plain-stores] [--configs decode,cache,resident]

Uses only the standard library, numpy, pyarrow, torch and (when installed)
cupy: no venv needed. Steps:
  1. writes build/bench/gpu_2m_snappy.parquet if absent (or its generator
     parameters changed: see the .json beside it): --rows rows x 32 columns
     (8 float32, 8 float64, 8 int32, 8 int64; every 4th column 1% nulls),
     SNAPPY, row groups of 262,144 rows, pyarrow defaults otherwise;
  2. builds build/bench_gpu with nvcc (-arch=sm_90, or $GPU_ARCH), adding
     -DHAVE_RESIDENT when gpufeed.h has gpufeed_uploader_desc.resident_bytes,
     once per --variants entry (default runtime,driver: gpufeed's uploader on
     the CUDA runtime, and on the driver loaded at run time as a plain cc
     build has it; plain-stores: the runtime with GPUFEED_STREAM_STORES=0);
     each variant gives its own rows, labelled [variant];
  3. runs it: the pinned H2D ceiling for one batch and the copy-engine count,
     then gpufeed decode / cache / device-resident at each step time
     (see the top of tools/bench/bench_gpu.cu for every figure's definition);
  4. the PyTorch reference on the same file and batch size: a map-style
     Dataset whose item is one row group read with pyarrow
     (read_row_groups -> fill_null(0) -> numpy -> float32 [rows, 32]
     row-major, the same bytes gpufeed produces), cut into batches of
     --batch rows and returned as a tuple of tensors;
     DataLoader(batch_size=None, shuffle=True, persistent_workers) with
     num_workers in --torch-workers and pin_memory on/off; each batch goes
     to the GPU with .cuda(non_blocking=True) and into the same simulated
     step: a kernel that checksums the batch (sum of its 32-bit words) and
     spins clock64() for a calibrated time (a CuPy RawKernel on torch's
     current stream; without CuPy: an int64 sum + torch.cuda._sleep). pyarrow
     uses its own threads only with num_workers 0 (no oversubscription).
     Figures measured the same way: 1 warm-up epoch, then --epochs epochs;
     busy = sum of step-kernel times (torch.cuda.Event around each kernel) /
     event window; stall = host time from asking for the next batch until
     .cuda() returned; CPU s/batch = user+sys of this process and its live
     worker processes (/proc) plus RUSAGE_CHILDREN over the measured steps;
  5. prints one combined markdown table with the ratio of each gpufeed row to
     the best PyTorch configuration at the same step time, the tools/bench/README.md
     targets (busy >= 95% where PyTorch < 50%; H2D >= 90% of the ceiling at
     the smallest step time; >= 5x the best PyTorch samples/s at the smallest
     step time, gpufeed with cores-1 decode workers vs PyTorch with up to 16
     worker processes on the same 16 cores), and the GPU, driver, CUDA
     version, date and command. Also written to build/bench/gpu_report.md.
Without a GPU: builds bench_gpu (the build must succeed), prints
"no GPU: nothing measured (<reason>)" and exits 0.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GEN_VERSION = 1
NCOLS = 32
RG_ROWS = 262144


def sh(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=ROOT, text=True, capture_output=True, **kw)


def find_nvcc() -> str | None:
    p = shutil.which("nvcc")
    if p:
        return p
    for d in (os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"):
        if d and os.access(os.path.join(d, "bin", "nvcc"), os.X_OK):
            return os.path.join(d, "bin", "nvcc")
    return None


def gpu_present() -> tuple[bool, str]:
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False, "nvidia-smi not found"
    r = sh([smi, "-L"])
    if r.returncode != 0 or "GPU" not in r.stdout:
        msg = (r.stdout + r.stderr).strip()
        return False, "nvidia-smi -L: " + (msg.splitlines()[0] if msg else f"exit {r.returncode}")
    return True, r.stdout.strip().splitlines()[0]


# the builds of bench_gpu compared side by side (--variants): gpufeed's uploader on
# the CUDA runtime (nvcc's default), on the driver loaded at run time (what a plain
# cc build and the Python binding use), and on the runtime with plain stores into
# the batch slots (GPUFEED_STREAM_STORES=0)
VARIANTS = {"runtime": [], "driver": ["-DGPUFEED_CUDA_DRIVER"], "plain-stores": ["-DGPUFEED_STREAM_STORES=0"]}


def build(nvcc: str, variants: list[str]) -> tuple[dict, bool]:
    """Builds build/bench_gpu (the first variant) and build/bench_gpu_<variant>
    for the others, in parallel: {variant: (binary, command)}, resident."""
    with open(os.path.join(ROOT, "gpufeed.h"), encoding="utf-8", errors="replace") as f:
        resident = "resident_bytes" in f.read()
    arch = os.environ.get("GPU_ARCH", "sm_90")
    nv = "nvcc" if os.path.dirname(nvcc) in (os.path.dirname(shutil.which("nvcc") or ""),) else nvcc
    os.makedirs(os.path.join(ROOT, "build"), exist_ok=True)
    out, procs = {}, []
    for i, v in enumerate(variants):
        binary = "build/bench_gpu" if i == 0 else f"build/bench_gpu_{v}"
        cmd = [nv, "-O2", f"-arch={arch}", "-I."] + (["-DHAVE_RESIDENT"] if resident else []) + VARIANTS[v] + \
              ["tools/bench/bench_gpu.cu", "-o", binary, "-lpthread"]
        out[v] = (binary, cmd)
        procs.append((cmd, subprocess.Popen(cmd, cwd=ROOT, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)))
    for cmd, p in procs:
        text = p.communicate()[0]
        if p.returncode != 0:
            sys.stderr.write(text)
            sys.exit(f"bench_gpu.py: build failed: {' '.join(cmd)}")
    return out, resident


# ---- the dataset --------------------------------------------------------------

def gen_params(rows: int) -> dict:
    return {"version": GEN_VERSION, "rows": rows, "cols": NCOLS, "row_group": RG_ROWS, "codec": "snappy", "seed": 20240}


def ensure_dataset(path: str, rows: int) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    params = gen_params(rows)
    params["pyarrow"] = pa.__version__
    side = path + ".json"
    if os.path.exists(path) and os.path.exists(side):
        try:
            with open(side) as f:
                if json.load(f) == params:
                    return
        except (OSError, ValueError):
            pass
    print(f"writing {os.path.relpath(path, ROOT)} ({rows} rows x {NCOLS} columns, SNAPPY, row groups of {RG_ROWS}) ...", flush=True)
    rng = np.random.default_rng(params["seed"])
    arrays, names = [], []
    kinds = ["f32", "f64", "i32", "i64"]
    for j in range(NCOLS):
        k = kinds[j % 4]
        if k == "f32":
            v = rng.standard_normal(rows, dtype=np.float32) * np.float32(1 + j)
        elif k == "f64":
            v = rng.standard_normal(rows) * 100.0 + j
        elif k == "i32":
            v = rng.integers(-(1 << 20), 1 << 20, rows, dtype=np.int32)
        else:
            v = rng.integers(-(1 << 23), 1 << 23, rows, dtype=np.int64)   # exact in float32
        mask = (rng.random(rows) < 0.01) if j % 4 == 3 else None
        arrays.append(pa.array(v, mask=mask))
        names.append(f"c{j:02d}_{k}")
    t = pa.table(arrays, names=names)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    pq.write_table(t, tmp, compression="snappy", row_group_size=RG_ROWS)
    os.replace(tmp, path)
    with open(side, "w") as f:
        json.dump(params, f)


def table_to_matrix(tbl, cols):
    import numpy as np
    import pyarrow.compute as pc
    out = np.empty((tbl.num_rows, len(cols)), dtype=np.float32)
    for j, c in enumerate(cols):
        a = tbl.column(c)
        if a.null_count:
            a = pc.fill_null(a, 0)
        out[:, j] = a.to_numpy()
    return out


# ---- PyTorch reference ------------------------------------------------------------

STEP_SRC = r"""
extern "C" __global__ void k_step(const unsigned int *p, unsigned long long n, long long cycles, unsigned long long *sum)
{
    __shared__ unsigned long long s[32];
    unsigned long long acc = 0;
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x, stride = (unsigned long long)gridDim.x * blockDim.x;
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, o;
    for (; i < n; i += stride) acc += p[i];
    for (o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    if (lane == 0) s[w] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long t = 0;
        for (int k = 0; k < (int)(blockDim.x >> 5); k++) t += s[k];
        if (t) atomicAdd(sum, t);
        if (cycles > 0) { long long t0 = clock64(); while (clock64() - t0 < cycles) { } }
    }
}
"""


class Step:
    """The simulated step for torch tensors: checksum + calibrated spin."""

    def __init__(self, torch):
        self.torch = torch
        self.dev = torch.device("cuda", 0)
        try:
            import cupy
            self.cp = cupy
            self.kern = cupy.RawKernel(STEP_SRC, "k_step")
            self.sum = cupy.zeros(1, dtype=cupy.uint64)
            self.grid = torch.cuda.get_device_properties(0).multi_processor_count * 4
            self.kind = f"CuPy {cupy.__version__} RawKernel"
        except Exception as e:  # noqa: BLE001
            self.cp = None
            self.sum = torch.zeros(1, dtype=torch.int64, device=self.dev)
            self.kind = f"torch int64 sum + torch.cuda._sleep (no CuPy: {type(e).__name__})"
        self.cycles_per_ms = 1e6
        self.base_ms = 0.0

    def reset(self):
        if self.cp is not None:
            self.sum.fill(0)
        else:
            self.sum.zero_()

    def total(self) -> int:
        self.torch.cuda.synchronize()
        if self.cp is not None:
            return int(self.sum.get()[0])
        return int(self.sum.item()) % (1 << 64)

    def __call__(self, x, cycles: int):
        torch = self.torch
        if self.cp is not None:
            cp = self.cp
            with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
                a = cp.from_dlpack(x).view(cp.uint32).ravel()
                self.kern((self.grid,), (256,), (a, cp.uint64(a.size), cp.int64(cycles), self.sum))
        else:
            self.sum += (x.view(torch.int32).to(torch.int64) & 0xFFFFFFFF).sum()
            if cycles > 0:
                torch.cuda._sleep(int(cycles))

    def time_ms(self, x, cycles: int, reps: int) -> float:
        torch = self.torch
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        self(x, cycles)
        v = []
        for _ in range(reps):
            a.record()
            self(x, cycles)
            b.record()
            b.synchronize()
            v.append(a.elapsed_time(b))
        return statistics.median(v)

    def calibrate(self, x):
        c1, c2 = 2_000_000, 20_000_000
        self.base_ms = self.time_ms(x, 0, 21)
        t1 = self.time_ms(x, c1, 9)
        t2 = self.time_ms(x, c2, 5)
        self.cycles_per_ms = (c2 - c1) / (t2 - t1) if t2 > t1 else 1e6

    def cycles_for(self, ms: float) -> int:
        if ms <= 0:
            return 0
        return max(0, int((ms - self.base_ms) * self.cycles_per_ms))


def make_dataset_class(torch):
    import numpy as np
    import pyarrow.parquet as pq

    class RowGroupBatches(torch.utils.data.Dataset):
        """Item k: batches [k*m, (k+1)*m) (m = batches in the largest row group), read
        from the row groups they overlap."""

        def __init__(self, path, batch, cols, use_threads):
            self.path, self.B, self.cols, self.use_threads = path, batch, cols, use_threads
            md = pq.ParquetFile(path).metadata
            self.rg_rows = [md.row_group(i).num_rows for i in range(md.num_row_groups)]
            self.rg_start = list(np.cumsum([0] + self.rg_rows))
            self.n = int(self.rg_start[-1])
            self.nb = (self.n + batch - 1) // batch
            self.m = max(1, max(self.rg_rows) // batch)
            self._pf = None

        def __len__(self):
            return (self.nb + self.m - 1) // self.m

        def __getitem__(self, k):
            if self._pf is None:
                self._pf = pq.ParquetFile(self.path)
            b0, b1 = k * self.m, min(self.nb, (k + 1) * self.m)
            r0, r1 = b0 * self.B, min(self.n, b1 * self.B)
            groups = [g for g in range(len(self.rg_rows)) if self.rg_start[g] < r1 and self.rg_start[g + 1] > r0]
            tbl = self._pf.read_row_groups(groups, columns=self.cols, use_threads=self.use_threads)
            mat = table_to_matrix(tbl, self.cols)
            off = r0 - int(self.rg_start[groups[0]])
            return tuple(torch.from_numpy(mat[off + i - r0: off + min(i + self.B, r1) - r0]) for i in range(r0, r1, self.B))

    return RowGroupBatches


def proc_tree_cpu() -> float:
    """user+sys seconds of this process, its live descendants and its reaped children."""
    me = os.getpid()
    tck = os.sysconf("SC_CLK_TCK")
    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime
    parent, cpu = {}, {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                st = f.read()
        except OSError:
            continue
        rest = st[st.rfind(")") + 2:].split()
        parent[int(d)] = int(rest[1])
        cpu[int(d)] = (int(rest[11]) + int(rest[12])) / tck
    for pid in cpu:
        p, hops = parent.get(pid), 0
        while p and p != me and hops < 64:
            p, hops = parent.get(p), hops + 1
        if p == me and pid != me:
            total += cpu[pid]
    return total


def q(v, frac):
    """nearest-rank quantile"""
    if not v:
        return 0.0
    v = sorted(v)
    k = max(1, min(len(v), math.ceil(frac * len(v))))
    return v[k - 1]


def torch_reference(args, path, cols, ceiling, expected_epoch_sum, log):
    import torch
    Dset = make_dataset_class(torch)
    step = Step(torch)
    dev = torch.device("cuda", 0)
    torch.cuda.set_device(dev)
    probe = torch.ones((args.batch, len(cols)), dtype=torch.float32, device=dev)
    step.calibrate(probe)
    measured_ms = {ms: step.time_ms(probe, step.cycles_for(ms), 5 if ms >= 10 else 11) for ms in args.steps_ms}
    del probe
    log(f"PyTorch {torch.__version__} step: {step.kind}; checksum-only {step.base_ms:.3f} ms; {step.cycles_per_ms:.0f} cycles/ms; "
        + ", ".join(f"{k:g} -> {v:.3f} ms" for k, v in measured_ms.items()))
    rows = []
    for ms in args.steps_ms:
        cycles = step.cycles_for(ms)
        for nw in args.torch_workers:
            for pin in (True, False):
                ds = Dset(path, args.batch, cols, use_threads=(nw == 0))
                kw = dict(batch_size=None, shuffle=True, num_workers=nw, pin_memory=pin)
                if nw > 0:
                    kw.update(persistent_workers=True, prefetch_factor=2)
                loader = torch.utils.data.DataLoader(ds, **kw)
                total_epochs = 1 + args.epochs

                def batches():
                    for ep in range(total_epochs):
                        for item in loader:
                            for x in item:
                                yield ep, x

                gen = batches()
                step.reset()
                ev_a, ev_b, stall = [], [], []
                cpu0, nrows, first = None, 0, None
                while True:
                    t0 = time.perf_counter()
                    try:
                        ep, x = next(gen)
                    except StopIteration:
                        break
                    xd = x.cuda(non_blocking=True)
                    t1 = time.perf_counter()
                    meas = ep >= 1
                    if meas and cpu0 is None:
                        cpu0 = proc_tree_cpu()
                        first = len(ev_a)
                    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    a.record()
                    step(xd, cycles)
                    b.record()
                    ev_a.append(a)
                    ev_b.append(b)
                    if meas:
                        stall.append((t1 - t0) * 1e3)
                        nrows += x.shape[0]
                    del x, xd
                torch.cuda.synchronize()
                cpu1 = proc_tree_cpu()
                got = step.total()
                del gen, loader
                n = len(ev_a) - first
                busy_ms = [ev_a[i].elapsed_time(ev_b[i]) for i in range(first, len(ev_a))]
                gaps = [ev_b[i].elapsed_time(ev_a[i + 1]) for i in range(first, len(ev_a) - 1)]
                window = ev_a[first].elapsed_time(ev_b[-1]) / 1e3
                nbytes = nrows * len(cols) * 4
                r = {
                    "config": f"PyTorch nw={nw} pin={'on' if pin else 'off'}",
                    "torch": True, "step_ms": ms, "step_measured_ms": measured_ms[ms], "steps": n, "rows": nrows,
                    "window_s": window, "steps_per_s": n / window, "samples_per_s": nrows / window,
                    "busy": sum(busy_ms) / (window * 1e3), "stall_p50_ms": q(stall, 0.5), "stall_p95_ms": q(stall, 0.95),
                    "gap_p50_ms": q(gaps, 0.5), "gap_p95_ms": q(gaps, 0.95),
                    "h2d_gbs": nbytes / window / 1e9, "h2d_pct": 100 * nbytes / window / 1e9 / ceiling if ceiling else 0.0,
                    "cpu_per_batch_s": (cpu1 - cpu0) / n,
                    "checksum_ok": expected_epoch_sum is None or got == (expected_epoch_sum * total_epochs) % (1 << 64),
                    "note": "",
                }
                if not r["checksum_ok"]:
                    r["note"] = f"checksum {got} != {total_epochs} x {expected_epoch_sum}"
                log(f"{r['config']}, step {ms:g} ms: {r['samples_per_s']:.0f} samples/s, busy {100 * r['busy']:.1f}%")
                rows.append(r)
    return rows


# ---- report -------------------------------------------------------------------------

def machine_info(nvcc):
    info = {}
    r = sh(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,pcie.link.gen.current,pcie.link.width.current",
            "--format=csv,noheader"]) if shutil.which("nvidia-smi") else None
    info["gpu"] = r.stdout.strip().replace("\n", "; ") if r and r.returncode == 0 else "?"
    r = sh(["nvidia-smi"]) if shutil.which("nvidia-smi") else None
    cv = "?"
    if r and r.returncode == 0:
        for line in r.stdout.splitlines():
            if "CUDA Version" in line:
                cv = line.split("CUDA Version:")[1].split()[0]
    info["cuda_driver"] = cv
    r = sh([nvcc, "--version"]) if nvcc else None
    info["nvcc"] = r.stdout.strip().splitlines()[-1] if r and r.returncode == 0 else "?"
    info["cpu"] = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    info["cores"] = os.cpu_count()
    info["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return info


def fmt_row(r, best):
    ratio = f"{r['samples_per_s'] / best:.2f}x" if best else "-"
    return (f"| {r['config']} | {r['step_ms']:g} ({r['step_measured_ms']:.2f}) | {r['steps_per_s']:.1f} | {r['samples_per_s']:.0f} | "
            f"{100 * r['busy']:.1f}% | {r['stall_p50_ms']:.3f} / {r['stall_p95_ms']:.3f} | {r['gap_p50_ms']:.3f} / {r['gap_p95_ms']:.3f} | "
            f"{r['h2d_gbs']:.2f} ({r['h2d_pct']:.0f}%) | {r['cpu_per_batch_s']:.4f} | {ratio} | "
            f"{'ok' if r['checksum_ok'] else 'MISMATCH'}{'; ' + r['note'] if r.get('note') else ''} |")


def report(args, info, g, trows, cmdline, build_cmd, pyver):
    out = []
    p = out.append
    p("# gpufeed GPU benchmark (tools/bench/README.md, GPU side)\n")
    p(f"- date: {info['date']}")
    p(f"- GPU: {info['gpu']} (name, driver, memory, PCIe gen, width); CUDA (driver): {info['cuda_driver']}; nvcc: {info['nvcc']}")
    p(f"- CPU: {info['cpu']}, {info['cores']} cores; {pyver}")
    p(f"- command: `{cmdline}`; build: `{' '.join(build_cmd)}`")
    if g:
        p(f"- copy engines (asyncEngineCount): {g['copy_engines']}; H2D ceiling (pinned cudaMemcpyAsync, {g['batch_bytes'] / 2**20:.2f} MiB batch, "
          f"median): **{g['ceiling_gbs']:.2f} GB/s**")
        p(f"- dataset: {g['num_rows']} rows x {g['row_bytes'] // 4} f32 features, batch {g['batch_rows']} rows; gpufeed: {g['workers']} decode workers; "
          f"1 warm-up epoch + {g['epochs']} measured epochs per row")
    p("")
    p("| configuration | step ms (measured) | steps/s | samples/s | GPU busy | stall p50 / p95 ms | GPU gap p50 / p95 ms | "
      "H2D GB/s (% of ceiling) | CPU s/batch | vs best PyTorch | checksum |")
    p("|---|---|---|---|---|---|---|---|---|---|---|")
    allrows = (g["rows"] if g else []) + trows
    best = {}
    for ms in args.steps_ms:
        tr = [r for r in trows if r["step_ms"] == ms]
        best[ms] = max(tr, key=lambda r: r["samples_per_s"]) if tr else None
    for ms in args.steps_ms:
        b = best[ms]
        for r in [r for r in allrows if r["step_ms"] == ms]:
            p(fmt_row(r, b["samples_per_s"] if b else 0))
    p("")
    p("busy = sum of step-kernel times / event window (first step start .. last step end); stall = host time to get the next device "
      "batch (gpufeed_uploader_next; PyTorch: next() + .cuda(non_blocking=True)); GPU gap = idle time between step kernels; "
      "H2D GB/s = batch bytes delivered / event window (resident batches do not cross PCIe); CPU s/batch = user+sys of the "
      "process (PyTorch: + its worker processes) over the measured steps / steps.\n")
    if g and trows:
        p("## Targets\n")
        lo = min(args.steps_ms)
        for ms in args.steps_ms:
            b = best[ms]
            if not b:
                continue
            for r in g["rows"]:
                if r["step_ms"] != ms:
                    continue
                tb = max(t["busy"] for t in trows if t["step_ms"] == ms)
                if tb < 0.5:
                    v = "PASS" if r["busy"] >= 0.95 else "FAIL"
                    p(f"- step {ms:g} ms, {r['config']}: busy {100 * r['busy']:.1f}% (target >= 95%; best PyTorch busy {100 * tb:.1f}% < 50%): {v}")
                else:
                    p(f"- step {ms:g} ms, {r['config']}: busy {100 * r['busy']:.1f}% (busy target n/a: best PyTorch busy {100 * tb:.1f}% >= 50%)")
                if ms == lo:
                    ratio = r["samples_per_s"] / b["samples_per_s"]
                    p(f"- step {ms:g} ms, {r['config']}: {ratio:.2f}x the best PyTorch ({b['config']}) samples/s (target >= 5x): "
                      f"{'PASS' if ratio >= 5 else 'FAIL'}")
                    if "resident" not in r["config"]:
                        p(f"- step {ms:g} ms, {r['config']}: H2D {r['h2d_pct']:.0f}% of the ceiling (target >= 90%): "
                          f"{'PASS' if r['h2d_pct'] >= 90 else 'FAIL'}")
        p("")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=2097152)
    ap.add_argument("--batch", type=int, default=65536)
    ap.add_argument("--steps-ms", default="0,1,5,20")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) - 1), help="gpufeed decode workers")
    ap.add_argument("--torch-workers", default="0,4,8,16")
    ap.add_argument("--columns", default=None, help="comma list (default: all 32)")
    ap.add_argument("--skip-torch", action="store_true")
    ap.add_argument("--skip-gpufeed", action="store_true")
    ap.add_argument("--out", default="build/bench")
    ap.add_argument("--variants", default="runtime,driver",
                    help="builds of gpufeed to compare, each a row per configuration: " + ", ".join(VARIANTS))
    ap.add_argument("--configs", default="decode,cache,resident", help="bench_gpu's --configs")
    args = ap.parse_args()
    args.variants = [v for v in args.variants.split(",") if v]
    if not args.variants or any(v not in VARIANTS for v in args.variants):
        ap.error("--variants: a comma list of " + ", ".join(VARIANTS))
    args.steps_ms = [float(s) for s in args.steps_ms.split(",") if s]
    args.torch_workers = [int(s) for s in args.torch_workers.split(",") if s]
    cmdline = "python3 tools/bench/bench_gpu.py" + "".join(" " + shlex.quote(a) for a in sys.argv[1:])
    out_dir = os.path.join(ROOT, args.out)

    nvcc = find_nvcc()
    if not nvcc:
        print("no GPU: nothing measured (nvcc not found: bench_gpu not built)" if not gpu_present()[0]
              else "bench_gpu.py: nvcc not found (set CUDA_HOME)")
        sys.exit(0 if not gpu_present()[0] else 1)
    builds, resident = build(nvcc, args.variants)
    build_cmd = builds[args.variants[0]][1]
    ok, why = gpu_present()
    if ok:
        try:
            import torch
            if not torch.cuda.is_available():
                ok, why = False, "torch.cuda.is_available() is False"
        except ImportError:
            if not args.skip_torch:
                print("bench_gpu.py: torch is not installed: measuring gpufeed only (no PyTorch reference, no ratios)")
                args.skip_torch = True
    if not ok:
        r = sh(["build/bench_gpu", "--epochs", "1"])
        if r.returncode != 0 or "no GPU" not in r.stdout:
            sys.stderr.write(r.stdout + r.stderr)
        print(f"bench_gpu built: {', '.join(' '.join(c) for _, c in builds.values())}{'; with device-resident' if resident else ''}")
        print(f"no GPU: nothing measured ({why})")
        sys.exit(0)

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    path = os.path.join(out_dir, "gpu_2m_snappy.parquet")
    ensure_dataset(path, args.rows)
    cols = args.columns.split(",") if args.columns else [f.name for f in pq.read_schema(path)]
    info = machine_info(nvcc)

    def log(s):
        print(s, flush=True)

    g = None
    if not args.skip_gpufeed:
        for v in args.variants:   # the same cache serves every variant (built by the first)
            binary = builds[v][0]
            jpath = os.path.join(out_dir, f"gpu_gpufeed_{v}.json")
            cmd = [binary, os.path.relpath(path, ROOT), "--batch", str(args.batch), "--steps-ms",
                   ",".join(f"{s:g}" for s in args.steps_ms), "--epochs", str(args.epochs), "--workers", str(args.workers),
                   "--configs", args.configs,
                   "--cache", os.path.relpath(os.path.join(out_dir, "gpu-cache"), ROOT), "--json", os.path.relpath(jpath, ROOT)]
            if args.columns:
                cmd += ["--columns", args.columns]
            log("$ " + " ".join(cmd))
            r = subprocess.run(cmd, cwd=ROOT)
            if r.returncode != 0 or not os.path.exists(jpath):
                sys.exit(f"bench_gpu.py: {binary} failed (exit {r.returncode})")
            with open(jpath) as f:
                gv = json.load(f)
            for row in gv["rows"]:
                row["config"] += f" [{v}]"
            if g is None:
                g = gv
            else:
                g["rows"] += gv["rows"]

    # the checksum both sides must see: the dataset's f32 words, once per epoch
    tbl = pq.read_table(path, columns=cols)
    expected = int(table_to_matrix(tbl, cols).view(np.uint32).sum(dtype=np.uint64))
    del tbl
    if g is not None and g["epoch_checksum"] != expected:
        log(f"WARNING: gpufeed's epoch checksum {g['epoch_checksum']} != pyarrow/numpy's {expected}: the two sides do not see the same bytes")

    trows = []
    if not args.skip_torch:
        trows = torch_reference(args, path, cols, g["ceiling_gbs"] if g else 0.0, expected, log)

    try:
        import torch
        tv = torch.__version__
    except ImportError:
        tv = "-"
    try:
        import cupy
        cv = cupy.__version__
    except ImportError:
        cv = "-"
    pyver = f"Python {platform.python_version()}, numpy {np.__version__}, pyarrow {pa.__version__}, torch {tv}, cupy {cv}"
    text = report(args, info, g, trows, cmdline, build_cmd, pyver)
    print()
    print(text)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "gpu_report.md"), "w") as f:
        f.write(text + "\n")
    bad = [r["config"] for r in ((g["rows"] if g else []) + trows) if not r["checksum_ok"]]
    if bad:
        sys.exit("bench_gpu.py: checksum mismatch in " + ", ".join(bad))


if __name__ == "__main__":
    main()
