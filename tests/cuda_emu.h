/* cuda_emu.h -- controls of the emulated CUDA runtime and driver in
   tests/cuda_emu.c.

   cuda_emu.c implements on the host the part of the CUDA runtime API that
   gpufeed.h and its stream tests call (memory, streams, events, copies,
   host functions, devices, errors). A program built with -DGPUFEED_CUDA
   and linked with cuda_emu.c instead of -lcudart runs gpufeed's CUDA code
   paths on a machine without a GPU:

   - every stream is a queue run by its own thread, with a random delay
     before each operation, so work on different streams really overlaps
     and only the order that events and stream waits impose holds;
   - "device" memory is host memory the emulator tracks: copies are checked
     against the allocations (direction, bounds), copies from pinned memory
     happen when the stream reaches them (so a host buffer rewritten too
     early shows up as wrong data), copies from pageable memory are staged
     at the call, as the real runtime does;
   - misuse (a destroyed stream or event, an event recorded on another
     device's stream, a bad pointer) is counted with a message;
   - live allocations, registrations, streams and events are counted, and
     any call can be made to fail on its n-th use.

   The driver API (built as libcuda.so.1) runs on the same state: the
   calls gpufeed's driver path makes map onto the runtime's (an armed
   failure of "cudaMalloc" fails cuMemAlloc_v2 too). It also checks the
   call sequence a driver client must keep: cuInit first; a context
   current (pushed, and retained) for every call that needs one; every
   push popped and every retain released; a module loaded before its
   function is launched. The one kernel it knows is gpufeed's gather
   (gf__gather in the PTX it is given), run in stream order with each row
   index checked against its source.

   It checks ordering logic and resource handling. It is not a GPU: it says
   nothing about real kernels, DMA or driver behaviour. Test programs only:
   the emulator keeps its state in globals. */
#ifndef GF_CUDA_EMU_H
#define GF_CUDA_EMU_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct emu_counts {
    long device_allocs, host_allocs, registrations, streams, events; /* live now */
    long misuse;                       /* misuses seen since the start */
    long async_copies, staged_copies, waits; /* operations run since the start */
    long contexts, modules, ctx_pushed; /* driver: primary-context retains, modules
                                          loaded, contexts pushed and not popped (live now) */
    long launches;                     /* driver: gather kernels run since the start */
} emu_counts;

void emu_counts_get(emu_counts *c);
const char *emu_last_misuse(void);
/* devices the runtime reports (default 2; 0: cudaErrorNoDevice) */
void emu_set_devices(int n);
/* the n-th next call (1 = the next one) of the named runtime function
   fails; 0 clears. One armed failure per name, up to 16 names. */
void emu_fail(const char *fn, int nth);
/* the longest random delay before each stream operation, in microseconds */
void emu_set_delay_us(unsigned us);
/* device of a live device allocation containing p, or -1 */
int emu_device_of(const void *p);

#ifdef __cplusplus
}
#endif
#endif
