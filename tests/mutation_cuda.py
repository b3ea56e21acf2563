#!/usr/bin/env python3
"""Do the emulated-CUDA stream checks catch ordering and cleanup bugs?

    python3 tests/mutation_cuda.py            (from the repository root; CUDA headers needed)

Builds tests/test_cuda_streams.c against tests/cuda_emu.c once per mutation
of gpufeed.h's uploader (each removes one wait, record, cleanup or device
restore) and runs it; then runs tests/test_python_emu.py (with .venv's
Python) on a copy of tools/gpufeed.py that passes every DLPack stream as
None. Every mutation must make some check fail. Prints a table and exits 1
when a mutation survives. Not part of `make test` (a few minutes)."""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CUDA = os.environ.get("CUDA_HOME", "/usr/local/cuda")

MUTATIONS = [
    ("the copy stream does not wait for the slot's release event",
     "if (s->release_recorded) e = cudaStreamWaitEvent(u->copy, s->released, 0); /* the trainer is done with it */",
     "if (0) e = cudaStreamWaitEvent(u->copy, s->released, 0);"),
    ("a pinned slot is refilled before its last copy finished",
     "if (s->used) cudaEventSynchronize(s->copied); /* its host slab",
     "if (0) cudaEventSynchronize(s->copied); /* its host slab"),
    ("gpufeed_device_batch_wait does not make the stream wait",
     "return cudaStreamWaitEvent((cudaStream_t)stream, (cudaEvent_t)b->ready, 0) == cudaSuccess ? GPUFEED_OK : GPUFEED_ERR_CUDA;",
     "return (void)stream, GPUFEED_OK;"),
    ("the DLPack export does not make the consumer's stream wait",
     "cudaError_t e = cudaStreamWaitEvent((cudaStream_t)consumer_stream, (cudaEvent_t)b->ready, 0);",
     "cudaError_t e = cudaSuccess; (void)consumer_stream;"),
    ("a DLPack deleter records no release",
     "(void)gf__slot_record_release(u, s, k->stream);", ";"),
    ("the uploader does not destroy its events",
     "if (s->copied) cudaEventDestroy(s->copied);", ";"),
    ("the loader's batch slot keeps the traded batch's memory",
     "    bs->mem = mem;\n    gf__batch_layout(", "    mem = old;\n    gf__batch_layout("),
    ("the uploader's slot is not laid out on the buffer it traded for",
     "        gf__batch_layout(l->ds, l->B, s->host, &hd, s->hfeat, s->hvalid);\n        s->hdata = hd;\n        b->host.data",
     "        hd = s->hdata;\n        s->hdata = hd;\n        b->host.data"),
    ("the loader's batch slots stay pinned after the uploader closes",
     "for (i = 0; i < u->l->S; i++) cudaHostUnregister(u->l->bs[i].mem);", ";"),
    ("the caller's current device is not restored",
     "static void gf__dev_leave(int32_t dev, int prev) { if (prev != dev) cudaSetDevice(prev); }",
     "static void gf__dev_leave(int32_t dev, int prev) { (void)dev; (void)prev; }"),
]


def python_mutation(tmp):
    """The binding ignores the consumer's stream: a copy of the files the
    Python test needs, with the mutation, laid out as in the repository."""
    name = "gpufeed.py passes every DLPack stream as None"
    a = "    if stream is None or stream == -1:\n        return None"
    b = "    if True:\n        return None"
    py = os.path.join(ROOT, ".venv", "bin", "python")
    src = open(os.path.join(ROOT, "tools", "gpufeed.py")).read()
    if src.count(a) != 1 or not os.path.exists(py):
        print("| %s | not applicable: %s |" % (name, "the code it mutates changed" if os.path.exists(py) else "no .venv (make venv)"))
        return 1
    root = os.path.join(tmp, "py")
    for rel in ("gpufeed.h", "tests/test_python_emu.py", "tests/cuda_emu.c", "tests/cuda_emu.h", "tests/data/ids.parquet"):
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        shutil.copy(os.path.join(ROOT, rel), os.path.join(root, rel))
    os.makedirs(os.path.join(root, "tools"), exist_ok=True)
    with open(os.path.join(root, "tools", "gpufeed.py"), "w") as f:
        f.write(src.replace(a, b))
    r = subprocess.run([py, os.path.join(root, "tests", "test_python_emu.py")], capture_output=True, text=True, timeout=900)
    fails = [l[5:] for l in r.stdout.splitlines() if l.startswith("FAIL ")]
    print("| %s | %s |" % (name, "caught by test_python_emu.py: " + "; ".join(fails) if fails else "SURVIVED"))
    return 0 if fails else 1


def main():
    src = open(os.path.join(ROOT, "gpufeed.h")).read()
    tmp = tempfile.mkdtemp(prefix="gpufeed_mut_")
    survived = 0
    print("| mutation | result |\n|---|---|")
    try:
        for name, a, b in MUTATIONS:
            if src.count(a) != 1:
                print("| %s | not applicable: the code it mutates changed |" % name)
                survived += 1
                continue
            with open(os.path.join(tmp, "gpufeed.h"), "w") as f:
                f.write(src.replace(a, b))
            exe = os.path.join(tmp, "t")
            cmd = ["cc", "-O2", "-std=c99", "-DGPUFEED_CUDA", "-DGF_CUDA_EMU", "-I" + tmp, "-I" + os.path.join(ROOT, "tests"),
                   "-I" + os.path.join(CUDA, "include"), os.path.join(ROOT, "tests", "test_cuda_streams.c"),
                   os.path.join(ROOT, "tests", "cuda_emu.c"), "-o", exe, "-lpthread", "-lm"]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                print("| %s | build failed: %s |" % (name, r.stderr[-200:].replace("\n", " ")))
                survived += 1
                continue
            r = subprocess.run([exe], capture_output=True, text=True, cwd=ROOT, timeout=600)
            fails = [l[5:] for l in r.stdout.splitlines() if l.startswith("FAIL ")]
            if not fails and r.returncode != 0:  # a crash or an abort is a catch too
                fails = ["a crash of the test program (exit %d, after %s)" % (r.returncode, ([l[5:] for l in r.stdout.splitlines() if l.startswith("PASS ")] or ["no test"])[-1])]
            print("| %s | %s |" % (name, "caught by " + ", ".join(fails) if fails else "SURVIVED"))
            survived += not fails
        survived += python_mutation(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    total = len(MUTATIONS) + 1
    print("%d of %d mutations caught" % (total - survived, total))
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
