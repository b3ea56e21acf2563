/* test_cudrv_abi.c -- gpufeed's own declarations of the CUDA driver API
   (gf__cudrv in the >>gpu section, used where the driver is loaded at run
   time) against the toolkit's cuda.h.

   Compiling it checks each entry point's type: a field is assigned from
   the function cuda.h declares under the plain name (cuMemAlloc, which
   cuda.h maps to cuMemAlloc_v2), so a wrong parameter, result or count is
   a compile error under -Werror. Running it checks that the symbol
   gpufeed asks dlsym for, field by field, is the one cuda.h maps that name
   to (the _v2 versions). It links the emulated driver (tests/cuda_emu.c as
   build/emu/libcuda.so.1), which defines those symbols:
       cc -std=c99 -Wall -Wextra -Werror -pedantic -I. -I$CUDA/include tests/test_cudrv_abi.c \
          -o build/test_cudrv_abi -Lbuild/emu -l:libcuda.so.1 -Wl,-rpath,$PWD/build/emu -lpthread -lm -ldl
   It also checks the embedded PTX with ptxas when GF_PTXAS names it. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define GPUFEED_IMPLEMENTATION
#include "gpufeed.h"
#include "gf_test.h"
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#endif
#include <cuda.h>
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic pop
#endif

#ifndef GF__CUDRV
#error "build without GPUFEED_CUDA and GPUFEED_NO_CUDA (the driver path)"
#endif

/* every field from cuda.h's declaration of the same entry point */
static void fill_from_cuda_h(gf__cudrv *t)
{
    t->Init = cuInit;
    t->DeviceGetCount = cuDeviceGetCount;
    t->DeviceGet = cuDeviceGet;
    t->DevicePrimaryCtxRetain = cuDevicePrimaryCtxRetain;
    t->DevicePrimaryCtxRelease = cuDevicePrimaryCtxRelease;
    t->CtxPushCurrent = cuCtxPushCurrent;
    t->CtxPopCurrent = cuCtxPopCurrent;
    t->CtxGetCurrent = cuCtxGetCurrent;
    t->StreamCreate = cuStreamCreate;
    t->StreamDestroy = cuStreamDestroy;
    t->StreamSynchronize = cuStreamSynchronize;
    t->StreamWaitEvent = cuStreamWaitEvent;
    t->EventCreate = cuEventCreate;
    t->EventDestroy = cuEventDestroy;
    t->EventRecord = cuEventRecord;
    t->EventSynchronize = cuEventSynchronize;
    t->MemAlloc = cuMemAlloc;
    t->MemFree = cuMemFree;
    t->MemHostAlloc = cuMemHostAlloc;
    t->MemFreeHost = cuMemFreeHost;
    t->MemHostRegister = cuMemHostRegister;
    t->MemHostUnregister = cuMemHostUnregister;
    t->MemcpyHtoD = cuMemcpyHtoD;
    t->MemcpyHtoDAsync = cuMemcpyHtoDAsync;
    t->ModuleLoadData = cuModuleLoadData;
    t->ModuleUnload = cuModuleUnload;
    t->ModuleGetFunction = cuModuleGetFunction;
    t->LaunchKernel = cuLaunchKernel;
    t->GetErrorName = cuGetErrorName;
    t->GetErrorString = cuGetErrorString;
}

static void test_names_match_cuda_h(void)
{
    gf__cudrv t;
    size_t i, n = sizeof gf__cudrv_names / sizeof gf__cudrv_names[0];
    CHECK_MSG(n * sizeof(void (*)(void)) == sizeof t, "%zu names for %zu fields", n, sizeof t / sizeof(void (*)(void)));
    memset(&t, 0, sizeof t);
    fill_from_cuda_h(&t);
    for (i = 0; i < n && i * sizeof(void *) < sizeof t; i++) {
        void *want, *sym = dlsym(RTLD_DEFAULT, gf__cudrv_names[i]);
        memcpy(&want, (char *)&t + i * sizeof(void *), sizeof want);
        CHECK_MSG(sym && sym == want, "field %zu: gpufeed asks for %s, cuda.h's declaration is another symbol", i, gf__cudrv_names[i]);
    }
}

static void test_flags_match_cuda_h(void)
{
    CHECK(GF__CU_STREAM_NON_BLOCKING == (unsigned)CU_STREAM_NON_BLOCKING);
    CHECK(GF__CU_EVENT_DISABLE_TIMING == (unsigned)CU_EVENT_DISABLE_TIMING);
    CHECK(GF__CU_HOST_PORTABLE_MAPPED == (unsigned)(CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP));
    CHECK(GF__CU_HOST_PORTABLE_MAPPED == (unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
    CHECK(sizeof(gf__cuptr) == sizeof(CUdeviceptr));
    CHECK(sizeof(unsigned) == sizeof(CUresult));
}

/* ptxas (GF_PTXAS) accepts the embedded PTX (written for sm_50) for the
   oldest target a current toolkit knows and for Hopper */
static void test_ptx_assembles(void)
{
    const char *ptxas = getenv("GF_PTXAS");
    const char *archs[] = { "sm_75", "sm_90" }; /* the oldest a current ptxas knows, and Hopper */
    char cmd[1024];
    FILE *f;
    int i;
    if (!ptxas || !*ptxas) { printf("  no GF_PTXAS: the PTX is not assembled here\n"); CHECK(strstr(gf__gather_ptx, ".entry gf__gather(") != NULL); return; }
    f = fopen("build/gf_gather.ptx", "wb");
    CHECK(f != NULL);
    if (!f) return;
    fputs(gf__gather_ptx, f);
    fclose(f);
    for (i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "'%s' -arch=%s build/gf_gather.ptx -o build/gf_gather_%s.cubin", ptxas, archs[i], archs[i]);
        CHECK_MSG(system(cmd) == 0, "%s failed", cmd);
    }
}

int main(void)
{
    RUN(test_names_match_cuda_h);
    RUN(test_flags_match_cuda_h);
    RUN(test_ptx_assembles);
    return TEST_SUMMARY();
}
