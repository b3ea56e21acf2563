/* cuda_emu.c -- an emulated CUDA runtime and driver on the host (see
   cuda_emu.h).

   The runtime: link it instead of -lcudart:
       cc -std=c99 -DGPUFEED_CUDA -I. -I$CUDA/include prog.c tests/cuda_emu.c -lpthread
   The driver: build it as a libcuda.so.1 that gpufeed's driver path
   loads (LD_LIBRARY_PATH, or a program linked with it); it exports the
   runtime too, over the same state, as a process with PyTorch beside
   gpufeed has both:
       cc -shared -fPIC -Wl,-soname,libcuda.so.1 -I$CUDA/include tests/cuda_emu.c \
          -o build/emu/libcuda.so.1 -lpthread
   Only the functions gpufeed.h, tests/test_cuda_streams.c and
   tests/test_python_emu.py call are here.
   One global lock guards all state; each stream has a thread that runs its
   queue in order; a stream wait blocks that thread until the event's
   record has run. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#endif
#include <cuda_runtime_api.h>
#include <cuda.h>
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic pop
#endif
#include "cuda_emu.h"

#define EMU_MAX_DEV 8
#define EMU_MAGIC_S 0x5354524du
#define EMU_MAGIC_E 0x45564e54u

enum { OP_COPY, OP_RECORD, OP_WAIT, OP_HOSTFN, OP_GATHER };

typedef struct emu_op {
    int kind;
    void *dst; const void *src; size_t n; void *staged;
    struct CUevent_st *ev; uint64_t gen;
    cudaHostFn_t fn; void *arg;
    long long rows, rb; const long long *idx; size_t src_len; /* OP_GATHER: dst row r = src row idx[r] */
    struct emu_op *next;
} emu_op;

struct CUstream_st {
    unsigned magic; int dead, dev, id;
    emu_op *head, *tail;
    int busy, quit;
    unsigned rng;
    pthread_t th;
    struct CUstream_st *all_next;
};

struct CUevent_st {
    unsigned magic; int dead, dev;
    uint64_t rec, done;                /* records queued, records run */
    struct CUevent_st *all_next;
};

typedef struct emu_mem { char *p; size_t n; int kind, dev, live; } emu_mem; /* kind: 0 device, 1 cudaHostAlloc, 2 registered */

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static struct {
    int init, ndev, ndev_set;
    unsigned delay_us;
    struct CUstream_st *streams, *defs[EMU_MAX_DEV];
    struct CUevent_st *events;
    emu_mem *mem; size_t nmem, capmem;
    emu_counts c;
    char misuse[256];
    struct { char fn[48]; int left; } fail[16];
    int nstreams;
} g;                                   /* zero at start */
#define MU (&g_mu)
#define CV (&g_cv)

static __thread int t_dev;
static __thread cudaError_t t_err;

static void emu_init_locked(void)
{
    const char *d;
    if (g.init) return;
    g.init = 1;
    g.delay_us = 200;
    d = getenv("GF_EMU_DELAY_US");
    if (d && *d) g.delay_us = (unsigned)strtoul(d, NULL, 10);
    if (!g.ndev_set) {
        d = getenv("GF_EMU_DEVICES");
        g.ndev = d && *d ? atoi(d) : 2;
        if (g.ndev < 0) g.ndev = 0;
        if (g.ndev > EMU_MAX_DEV) g.ndev = EMU_MAX_DEV;
    }
}

static void misuse_locked(const char *fn, const char *what)
{
    g.c.misuse++;
    snprintf(g.misuse, sizeof g.misuse, "%s: %s", fn, what);
    fprintf(stderr, "cuda_emu: misuse: %s: %s\n", fn, what);
}

static void misuse_unlocked(const char *fn, const char *what)
{
    pthread_mutex_lock(MU);
    misuse_locked(fn, what);
    pthread_mutex_unlock(MU);
}

/* an armed failure for fn fires now? */
static int fails_locked(const char *fn)
{
    int i;
    for (i = 0; i < 16; i++)
        if (g.fail[i].left > 0 && strcmp(g.fail[i].fn, fn) == 0) {
            if (--g.fail[i].left == 0) { g.fail[i].fn[0] = 0; return 1; }
            return 0;
        }
    return 0;
}

/* what an injected failure of fn returns */
static cudaError_t fail_code(const char *fn)
{
    if (strstr(fn, "Alloc") || strstr(fn, "Malloc") || strstr(fn, "Register") || strstr(fn, "Create")) return cudaErrorMemoryAllocation;
    if (strcmp(fn, "cudaGetDeviceCount") == 0) return cudaErrorNoDevice;
    return cudaErrorLaunchFailure;
}

static cudaError_t ret(cudaError_t e) { if (e != cudaSuccess) t_err = e; return e; }

/* the allocation holding [p, p+n), or NULL */
static emu_mem *find_locked(const void *p, size_t n, int kind_mask)
{
    size_t i;
    const char *q = (const char *)p;
    for (i = 0; i < g.nmem; i++) {
        emu_mem *m = &g.mem[i];
        if (!m->live || !((kind_mask >> m->kind) & 1)) continue;
        if (q >= m->p && q <= m->p + m->n && n <= (size_t)(m->p + m->n - q)) return m;
    }
    return NULL;
}

static int add_mem_locked(void *p, size_t n, int kind)
{
    if (g.nmem == g.capmem) {
        size_t cap = g.capmem ? 2 * g.capmem : 64;
        emu_mem *m = (emu_mem *)realloc(g.mem, cap * sizeof *m);
        if (!m) return -1;
        g.mem = m; g.capmem = cap;
    }
    g.mem[g.nmem].p = (char *)p; g.mem[g.nmem].n = n; g.mem[g.nmem].kind = kind;
    g.mem[g.nmem].dev = t_dev; g.mem[g.nmem].live = 1;
    g.nmem++;
    if (kind == 0) g.c.device_allocs++; else if (kind == 1) g.c.host_allocs++; else g.c.registrations++;
    return 0;
}

static void pause_us(unsigned *rng, unsigned max)
{
    struct timespec ts;
    unsigned us;
    if (!max) return;
    *rng = *rng * 1103515245u + 12345u;
    us = (*rng >> 8) % (max + 1);
    ts.tv_sec = 0; ts.tv_nsec = (long)us * 1000;
    nanosleep(&ts, NULL);
}

static void misuse_unlocked(const char *fn, const char *what);

/* the gather kernel of gpufeed's device-resident mode, as the PTX says:
   every index checked against the source allocation */
static void run_gather(const emu_op *op)
{
    long long r;
    for (r = 0; r < op->rows; r++) {
        long long y = op->idx[r];
        if (y < 0 || (size_t)(y + 1) * (size_t)op->rb > op->src_len) { misuse_unlocked("gf__gather", "row index outside the source"); return; }
        memcpy((char *)op->dst + (size_t)r * (size_t)op->rb, (const char *)op->src + (size_t)y * (size_t)op->rb, (size_t)op->rb);
    }
}

static void *stream_main(void *arg)
{
    struct CUstream_st *s = (struct CUstream_st *)arg;
    pthread_mutex_lock(MU);
    for (;;) {
        emu_op *op = s->head;
        if (!op) {
            if (s->quit) break;
            pthread_cond_wait(CV, MU);
            continue;
        }
        if (op->kind == OP_WAIT && op->ev->done < op->gen) { pthread_cond_wait(CV, MU); continue; }
        s->busy = 1;
        {
            unsigned d = g.delay_us;
            pthread_mutex_unlock(MU);
            pause_us(&s->rng, d);
            if (op->kind == OP_COPY) memcpy(op->dst, op->staged ? op->staged : op->src, op->n);
            else if (op->kind == OP_HOSTFN) op->fn(op->arg);
            else if (op->kind == OP_GATHER) run_gather(op);
            pthread_mutex_lock(MU);
        }
        if (op->kind == OP_RECORD && op->ev->done < op->gen) op->ev->done = op->gen;
        if (op->kind == OP_COPY) { if (op->staged) g.c.staged_copies++; else g.c.async_copies++; }
        if (op->kind == OP_GATHER) g.c.launches++;
        if (op->kind == OP_WAIT) g.c.waits++;
        s->head = op->next;
        if (!s->head) s->tail = NULL;
        s->busy = 0;
        free(op->staged);
        free(op);
        pthread_cond_broadcast(CV);
    }
    pthread_mutex_unlock(MU);
    return NULL;
}

static struct CUstream_st *new_stream_locked(int dev)
{
    struct CUstream_st *s = (struct CUstream_st *)calloc(1, sizeof *s);
    if (!s) return NULL;
    s->magic = EMU_MAGIC_S; s->dev = dev; s->id = ++g.nstreams;
    s->rng = 2654435761u * (unsigned)s->id;
    if (pthread_create(&s->th, NULL, stream_main, s) != 0) { free(s); return NULL; }
    pthread_detach(s->th);
    s->all_next = g.streams; g.streams = s;
    return s;
}

/* a stream handle to its queue (the legacy and per-thread default streams
   are one queue per device) */
static struct CUstream_st *stream_locked(cudaStream_t h, const char *fn, cudaError_t *e)
{
    struct CUstream_st *s;
    *e = cudaSuccess;
    if (h == NULL || h == cudaStreamLegacy || h == cudaStreamPerThread) {
        if (!g.defs[t_dev]) g.defs[t_dev] = new_stream_locked(t_dev);
        if (!g.defs[t_dev]) *e = cudaErrorMemoryAllocation;
        return g.defs[t_dev];
    }
    for (s = g.streams; s; s = s->all_next) if (s == h) break;
    if (!s || s->magic != EMU_MAGIC_S) { misuse_locked(fn, "not a stream"); *e = cudaErrorInvalidResourceHandle; return NULL; }
    if (s->dead) { misuse_locked(fn, "the stream was destroyed"); *e = cudaErrorInvalidResourceHandle; return NULL; }
    return s;
}

static struct CUevent_st *event_locked(cudaEvent_t h, const char *fn, cudaError_t *e)
{
    struct CUevent_st *v;
    *e = cudaSuccess;
    for (v = g.events; v; v = v->all_next) if (v == h) break;
    if (!v || v->magic != EMU_MAGIC_E) { misuse_locked(fn, "not an event"); *e = cudaErrorInvalidResourceHandle; return NULL; }
    if (v->dead) { misuse_locked(fn, "the event was destroyed"); *e = cudaErrorInvalidResourceHandle; return NULL; }
    return v;
}

static emu_op *push_locked(struct CUstream_st *s, int kind)
{
    emu_op *op = (emu_op *)calloc(1, sizeof *op);
    if (!op) return NULL;
    op->kind = kind;
    if (s->tail) s->tail->next = op; else s->head = op;
    s->tail = op;
    pthread_cond_broadcast(CV);
    return op;
}

static void drain_locked(struct CUstream_st *s)
{
    while (s->head || s->busy) pthread_cond_wait(CV, MU);
}

static void drain_device_locked(int dev)
{
    struct CUstream_st *s;
    for (s = g.streams; s; s = s->all_next) if (s->dev == dev) drain_locked(s);
}

/* ---- the runtime API -------------------------------------------------- */

#define ENTER(fn) pthread_mutex_lock(MU); emu_init_locked(); \
    if (fails_locked(fn)) { pthread_mutex_unlock(MU); return ret(fail_code(fn)); }
#define LEAVE(e) do { cudaError_t e_ = (e); pthread_mutex_unlock(MU); return ret(e_); } while (0)

cudaError_t cudaGetDeviceCount(int *count)
{
    ENTER("cudaGetDeviceCount");
    if (!count) LEAVE(cudaErrorInvalidValue);
    *count = g.ndev;
    LEAVE(g.ndev ? cudaSuccess : cudaErrorNoDevice);
}

cudaError_t cudaGetDevice(int *device)
{
    if (!device) return ret(cudaErrorInvalidValue);
    *device = t_dev;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
    ENTER("cudaSetDevice");
    if (device < 0 || device >= g.ndev || device >= EMU_MAX_DEV) LEAVE(cudaErrorInvalidDevice);
    t_dev = device;
    LEAVE(cudaSuccess);
}

cudaError_t cudaGetLastError(void) { cudaError_t e = t_err; t_err = cudaSuccess; return e; }

const char *cudaGetErrorName(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    default: return "cudaError (emulated)";
    }
}

const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorLaunchFailure: return "unspecified launch failure (injected by cuda_emu)";
    default: return "unknown error (emulated)";
    }
}

cudaError_t cudaMalloc(void **p, size_t n)
{
    void *q;
    ENTER("cudaMalloc");
    if (!p) LEAVE(cudaErrorInvalidValue);
    *p = NULL;
    q = malloc(n ? n : 1);
    if (!q || add_mem_locked(q, n, 0)) { free(q); LEAVE(cudaErrorMemoryAllocation); }
    memset(q, 0xa5, n); /* device memory is not zeroed */
    *p = q;
    LEAVE(cudaSuccess);
}

cudaError_t cudaFree(void *p)
{
    emu_mem *m;
    ENTER("cudaFree");
    if (!p) LEAVE(cudaSuccess);
    m = find_locked(p, 0, 1);
    if (!m || m->p != (char *)p) { misuse_locked("cudaFree", "not the start of a live device allocation"); LEAVE(cudaErrorInvalidValue); }
    drain_device_locked(m->dev); /* cudaFree waits for the device */
    m->live = 0; g.c.device_allocs--;
    free(m->p);
    LEAVE(cudaSuccess);
}

cudaError_t cudaHostAlloc(void **p, size_t n, unsigned flags)
{
    void *q;
    (void)flags;
    ENTER("cudaHostAlloc");
    if (!p) LEAVE(cudaErrorInvalidValue);
    *p = NULL;
    q = malloc(n ? n : 1);
    if (!q || add_mem_locked(q, n, 1)) { free(q); LEAVE(cudaErrorMemoryAllocation); }
    *p = q;
    LEAVE(cudaSuccess);
}

cudaError_t cudaFreeHost(void *p)
{
    emu_mem *m;
    ENTER("cudaFreeHost");
    if (!p) LEAVE(cudaSuccess);
    m = find_locked(p, 0, 2);
    if (!m || m->p != (char *)p) { misuse_locked("cudaFreeHost", "not a cudaHostAlloc pointer"); LEAVE(cudaErrorInvalidValue); }
    drain_device_locked(m->dev);
    m->live = 0; g.c.host_allocs--;
    free(m->p);
    LEAVE(cudaSuccess);
}

cudaError_t cudaHostRegister(void *p, size_t n, unsigned flags)
{
    (void)flags;
    ENTER("cudaHostRegister");
    if (!p || !n) LEAVE(cudaErrorInvalidValue);
    if (find_locked(p, 1, 6)) { misuse_locked("cudaHostRegister", "already pinned"); LEAVE(cudaErrorHostMemoryAlreadyRegistered); }
    if (add_mem_locked(p, n, 2)) LEAVE(cudaErrorMemoryAllocation);
    LEAVE(cudaSuccess);
}

cudaError_t cudaHostUnregister(void *p)
{
    emu_mem *m;
    ENTER("cudaHostUnregister");
    m = find_locked(p, 0, 4);
    if (!m || m->p != (char *)p) { misuse_locked("cudaHostUnregister", "not registered"); LEAVE(cudaErrorHostMemoryNotRegistered); }
    drain_device_locked(m->dev);
    m->live = 0; g.c.registrations--;
    LEAVE(cudaSuccess);
}

/* checks a copy; 1: the host side is pinned (the copy may run later) */
static cudaError_t check_copy_locked(const char *fn, void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, int *pinned)
{
    const void *host = NULL;
    *pinned = 0;
    if (n == 0) return cudaSuccess;
    if (!dst || !src) { misuse_locked(fn, "NULL pointer"); return cudaErrorInvalidValue; }
    switch (kind) {
    case cudaMemcpyHostToDevice:
        if (!find_locked(dst, n, 1)) { misuse_locked(fn, "host-to-device copy whose destination is not inside a device allocation"); return cudaErrorInvalidValue; }
        if (find_locked(src, 1, 1)) { misuse_locked(fn, "host-to-device copy from device memory"); return cudaErrorInvalidValue; }
        host = src; break;
    case cudaMemcpyDeviceToHost:
        if (!find_locked(src, n, 1)) { misuse_locked(fn, "device-to-host copy whose source is not inside a device allocation"); return cudaErrorInvalidValue; }
        if (find_locked(dst, 1, 1)) { misuse_locked(fn, "device-to-host copy into device memory"); return cudaErrorInvalidValue; }
        host = dst; break;
    case cudaMemcpyDeviceToDevice:
        if (!find_locked(src, n, 1) || !find_locked(dst, n, 1)) { misuse_locked(fn, "device-to-device copy outside device allocations"); return cudaErrorInvalidValue; }
        *pinned = 1; return cudaSuccess;
    default:
        misuse_locked(fn, "copy kind not emulated"); return cudaErrorInvalidValue;
    }
    *pinned = find_locked(host, n, 6) != NULL;
    return cudaSuccess;
}

/* a copy queued on stream st; sync: the call returns once it ran (cudaMemcpy) */
static cudaError_t copy_on(const char *fn, void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t st, int sync)
{
    struct CUstream_st *s;
    cudaError_t e;
    int pinned;
    emu_op *op;
    ENTER(fn);
    s = stream_locked(st, fn, &e);
    if (!s) LEAVE(e);
    e = check_copy_locked(fn, dst, src, n, kind, &pinned);
    if (e != cudaSuccess || n == 0) LEAVE(e);
    op = push_locked(s, OP_COPY);
    if (!op) LEAVE(cudaErrorMemoryAllocation);
    op->dst = dst; op->src = src; op->n = n;
    if (!sync && !pinned && kind == cudaMemcpyHostToDevice) { /* pageable source: staged now */
        op->staged = malloc(n);
        if (!op->staged) LEAVE(cudaErrorMemoryAllocation); /* the op then copies from src */
        memcpy(op->staged, src, n);
    }
    if (sync || (!pinned && kind == cudaMemcpyDeviceToHost)) drain_locked(s); /* pageable destination: synchronous */
    LEAVE(cudaSuccess);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t st)
{
    return copy_on("cudaMemcpyAsync", dst, src, n, kind, st, 0);
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
    return copy_on("cudaMemcpy", dst, src, n, kind, NULL, 1);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *out, unsigned flags)
{
    struct CUstream_st *s;
    (void)flags;
    ENTER("cudaStreamCreateWithFlags");
    if (!out) LEAVE(cudaErrorInvalidValue);
    if (g.ndev == 0) LEAVE(cudaErrorNoDevice);
    s = new_stream_locked(t_dev);
    if (!s) LEAVE(cudaErrorMemoryAllocation);
    g.c.streams++;
    *out = s;
    LEAVE(cudaSuccess);
}

cudaError_t cudaStreamDestroy(cudaStream_t st)
{
    struct CUstream_st *s;
    cudaError_t e;
    ENTER("cudaStreamDestroy");
    if (st == NULL || st == cudaStreamLegacy || st == cudaStreamPerThread) { misuse_locked("cudaStreamDestroy", "a default stream"); LEAVE(cudaErrorInvalidResourceHandle); }
    s = stream_locked(st, "cudaStreamDestroy", &e);
    if (!s) LEAVE(e);
    s->dead = 1; s->quit = 1; /* queued work still runs, as in CUDA */
    g.c.streams--;
    pthread_cond_broadcast(CV);
    LEAVE(cudaSuccess);
}

cudaError_t cudaStreamSynchronize(cudaStream_t st)
{
    struct CUstream_st *s;
    cudaError_t e;
    ENTER("cudaStreamSynchronize");
    s = stream_locked(st, "cudaStreamSynchronize", &e);
    if (!s) LEAVE(e);
    drain_locked(s);
    LEAVE(cudaSuccess);
}

cudaError_t cudaStreamWaitEvent(cudaStream_t st, cudaEvent_t ev, unsigned flags)
{
    struct CUstream_st *s;
    struct CUevent_st *v;
    cudaError_t e;
    emu_op *op;
    (void)flags;
    ENTER("cudaStreamWaitEvent");
    s = stream_locked(st, "cudaStreamWaitEvent", &e);
    if (!s) LEAVE(e);
    v = event_locked(ev, "cudaStreamWaitEvent", &e);
    if (!v) LEAVE(e);
    if (v->rec == 0) LEAVE(cudaSuccess); /* never recorded: nothing to wait for */
    op = push_locked(s, OP_WAIT);
    if (!op) LEAVE(cudaErrorMemoryAllocation);
    op->ev = v; op->gen = v->rec;
    LEAVE(cudaSuccess);
}

cudaError_t cudaLaunchHostFunc(cudaStream_t st, cudaHostFn_t fn, void *arg)
{
    struct CUstream_st *s;
    cudaError_t e;
    emu_op *op;
    ENTER("cudaLaunchHostFunc");
    s = stream_locked(st, "cudaLaunchHostFunc", &e);
    if (!s) LEAVE(e);
    if (!fn) LEAVE(cudaErrorInvalidValue);
    op = push_locked(s, OP_HOSTFN);
    if (!op) LEAVE(cudaErrorMemoryAllocation);
    op->fn = fn; op->arg = arg;
    LEAVE(cudaSuccess);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *out, unsigned flags)
{
    struct CUevent_st *v;
    (void)flags;
    ENTER("cudaEventCreateWithFlags");
    if (!out) LEAVE(cudaErrorInvalidValue);
    v = (struct CUevent_st *)calloc(1, sizeof *v);
    if (!v) LEAVE(cudaErrorMemoryAllocation);
    v->magic = EMU_MAGIC_E; v->dev = t_dev;
    v->all_next = g.events; g.events = v;
    g.c.events++;
    *out = v;
    LEAVE(cudaSuccess);
}

cudaError_t cudaEventDestroy(cudaEvent_t ev)
{
    struct CUevent_st *v;
    cudaError_t e;
    ENTER("cudaEventDestroy");
    v = event_locked(ev, "cudaEventDestroy", &e);
    if (!v) LEAVE(e);
    v->dead = 1; g.c.events--; /* kept, so that a later use is seen */
    LEAVE(cudaSuccess);
}

cudaError_t cudaEventRecord(cudaEvent_t ev, cudaStream_t st)
{
    struct CUstream_st *s;
    struct CUevent_st *v;
    cudaError_t e;
    emu_op *op;
    ENTER("cudaEventRecord");
    s = stream_locked(st, "cudaEventRecord", &e);
    if (!s) LEAVE(e);
    v = event_locked(ev, "cudaEventRecord", &e);
    if (!v) LEAVE(e);
    if (v->dev != s->dev) { misuse_locked("cudaEventRecord", "the event and the stream belong to different devices"); LEAVE(cudaErrorInvalidResourceHandle); }
    op = push_locked(s, OP_RECORD);
    if (!op) LEAVE(cudaErrorMemoryAllocation);
    op->ev = v; op->gen = ++v->rec;
    LEAVE(cudaSuccess);
}

cudaError_t cudaEventSynchronize(cudaEvent_t ev)
{
    struct CUevent_st *v;
    cudaError_t e;
    uint64_t want;
    ENTER("cudaEventSynchronize");
    v = event_locked(ev, "cudaEventSynchronize", &e);
    if (!v) LEAVE(e);
    want = v->rec;
    while (v->done < want) pthread_cond_wait(CV, MU);
    LEAVE(cudaSuccess);
}

/* ---- controls ---------------------------------------------------------- */

void emu_counts_get(emu_counts *c)
{
    pthread_mutex_lock(MU);
    *c = g.c;
    pthread_mutex_unlock(MU);
}

const char *emu_last_misuse(void) { return g.misuse; }

void emu_set_devices(int n)
{
    pthread_mutex_lock(MU);
    emu_init_locked();
    g.ndev_set = 1;
    g.ndev = n < 0 ? 0 : n > EMU_MAX_DEV ? EMU_MAX_DEV : n;
    if (t_dev >= g.ndev) t_dev = 0;
    pthread_mutex_unlock(MU);
}

void emu_fail(const char *fn, int nth)
{
    int i, free_at = -1;
    pthread_mutex_lock(MU);
    for (i = 0; i < 16; i++) {
        if (strcmp(g.fail[i].fn, fn) == 0 && g.fail[i].left > 0) { free_at = i; break; }
        if (free_at < 0 && g.fail[i].left <= 0) free_at = i;
    }
    if (free_at >= 0) {
        snprintf(g.fail[free_at].fn, sizeof g.fail[free_at].fn, "%s", fn);
        g.fail[free_at].left = nth;
        if (nth <= 0) g.fail[free_at].fn[0] = 0;
    }
    pthread_mutex_unlock(MU);
}

void emu_set_delay_us(unsigned us)
{
    pthread_mutex_lock(MU);
    emu_init_locked();
    g.delay_us = us;
    pthread_mutex_unlock(MU);
}

int emu_device_of(const void *p)
{
    emu_mem *m;
    int d;
    pthread_mutex_lock(MU);
    m = find_locked(p, 1, 1);
    d = m ? m->dev : -1;
    pthread_mutex_unlock(MU);
    return d;
}

/* ---- the driver API (what gpufeed's driver path calls) ----------------- */
/* Each call maps onto the runtime's above, with the device of the calling
   thread's current context, and returns the same code (the two APIs share
   these values). */

#define EMU_MAGIC_C 0x43545854u
#define EMU_MAGIC_M 0x4d4f444cu
#define EMU_CTX_DEPTH 16

struct CUctx_st { unsigned magic; int dev; long refs; };
struct CUmod_st { unsigned magic; int dead; struct CUfunc_st *fn; struct CUmod_st *all_next; };
struct CUfunc_st { unsigned magic; struct CUmod_st *mod; };

static struct CUctx_st g_primary[EMU_MAX_DEV];   /* one primary context a device */
static struct CUmod_st *g_mods;                  /* every module, unloaded ones kept (a later use is seen) */
static int g_drv_init;
static __thread struct CUctx_st *t_ctx[EMU_CTX_DEPTH];
static __thread int t_depth;

/* the calling thread's current context, checked; NULL (and a misuse) if
   there is none usable */
static struct CUctx_st *drv_current(const char *fn)
{
    struct CUctx_st *c;
    pthread_mutex_lock(MU);
    emu_init_locked();
    if (!g_drv_init) { misuse_locked(fn, "called before cuInit"); pthread_mutex_unlock(MU); return NULL; }
    c = t_depth > 0 ? t_ctx[t_depth - 1] : NULL;
    if (!c) misuse_locked(fn, "no current context (push the primary context first)");
    else if (c->refs <= 0) { misuse_locked(fn, "the current context was released"); c = NULL; }
    pthread_mutex_unlock(MU);
    return c;
}

/* runs a runtime call as the current context's device */
#define DRV_CALL(fn, call) do { \
        struct CUctx_st *c_ = drv_current(fn); \
        int saved_ = t_dev; \
        cudaError_t e_; \
        if (!c_) return CUDA_ERROR_INVALID_CONTEXT; \
        t_dev = c_->dev; \
        e_ = (call); \
        t_dev = saved_; \
        return (CUresult)e_; \
    } while (0)

CUresult cuInit(unsigned flags)
{
    CUresult r;
    pthread_mutex_lock(MU);
    emu_init_locked();
    if (flags != 0) { misuse_locked("cuInit", "flags must be 0"); pthread_mutex_unlock(MU); return CUDA_ERROR_INVALID_VALUE; }
    g_drv_init = 1;
    r = g.ndev ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
    pthread_mutex_unlock(MU);
    return r;
}

CUresult cuDeviceGetCount(int *count)
{
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(MU);
    emu_init_locked();
    if (!g_drv_init) misuse_locked("cuDeviceGetCount", "called before cuInit");
    *count = g.ndev;
    pthread_mutex_unlock(MU);
    return g_drv_init ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(MU);
    emu_init_locked();
    if (!g_drv_init) { misuse_locked("cuDeviceGet", "called before cuInit"); r = CUDA_ERROR_NOT_INITIALIZED; }
    else if (!dev || ordinal < 0 || ordinal >= g.ndev) r = CUDA_ERROR_INVALID_DEVICE;
    else *dev = ordinal;
    pthread_mutex_unlock(MU);
    return r;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *out, CUdevice dev)
{
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(MU);
    emu_init_locked();
    if (fails_locked("cuDevicePrimaryCtxRetain")) r = CUDA_ERROR_OUT_OF_MEMORY;
    else if (!g_drv_init) { misuse_locked("cuDevicePrimaryCtxRetain", "called before cuInit"); r = CUDA_ERROR_NOT_INITIALIZED; }
    else if (!out || dev < 0 || dev >= g.ndev) r = CUDA_ERROR_INVALID_DEVICE;
    else {
        struct CUctx_st *c = &g_primary[dev];
        c->magic = EMU_MAGIC_C; c->dev = dev; c->refs++;
        g.c.contexts++;
        *out = c;
    }
    pthread_mutex_unlock(MU);
    return r;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(MU);
    if (dev < 0 || dev >= EMU_MAX_DEV || g_primary[dev].refs <= 0) {
        misuse_locked("cuDevicePrimaryCtxRelease", "released more often than retained");
        r = CUDA_ERROR_INVALID_CONTEXT;
    } else {
        g_primary[dev].refs--;
        g.c.contexts--;
    }
    pthread_mutex_unlock(MU);
    return r;
}

CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(MU);
    if (!ctx || ctx->magic != EMU_MAGIC_C || ctx->refs <= 0) { misuse_locked("cuCtxPushCurrent", "not a retained context"); r = CUDA_ERROR_INVALID_CONTEXT; }
    else if (t_depth == EMU_CTX_DEPTH) { misuse_locked("cuCtxPushCurrent", "context stack overflow (pushes not popped)"); r = CUDA_ERROR_INVALID_VALUE; }
    else { t_ctx[t_depth++] = ctx; g.c.ctx_pushed++; }
    pthread_mutex_unlock(MU);
    return r;
}

CUresult cuCtxPopCurrent_v2(CUcontext *out)
{
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(MU);
    if (t_depth == 0) { misuse_locked("cuCtxPopCurrent", "no context to pop"); r = CUDA_ERROR_INVALID_CONTEXT; }
    else {
        struct CUctx_st *c = t_ctx[--t_depth];
        g.c.ctx_pushed--;
        if (out) *out = c;
    }
    pthread_mutex_unlock(MU);
    return r;
}

CUresult cuCtxGetCurrent(CUcontext *out)
{
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    *out = t_depth > 0 ? t_ctx[t_depth - 1] : NULL;
    return CUDA_SUCCESS;
}

CUresult cuStreamCreate(CUstream *out, unsigned flags)
{
    if (flags != CU_STREAM_NON_BLOCKING && flags != CU_STREAM_DEFAULT) return CUDA_ERROR_INVALID_VALUE;
    DRV_CALL("cuStreamCreate", cudaStreamCreateWithFlags(out, flags));
}
CUresult cuStreamDestroy_v2(CUstream s) { DRV_CALL("cuStreamDestroy", cudaStreamDestroy(s)); }
CUresult cuStreamSynchronize(CUstream s) { DRV_CALL("cuStreamSynchronize", cudaStreamSynchronize(s)); }
CUresult cuStreamWaitEvent(CUstream s, CUevent v, unsigned flags) { DRV_CALL("cuStreamWaitEvent", cudaStreamWaitEvent(s, v, flags)); }
CUresult cuEventCreate(CUevent *out, unsigned flags) { DRV_CALL("cuEventCreate", cudaEventCreateWithFlags(out, flags)); }
CUresult cuEventDestroy_v2(CUevent v) { DRV_CALL("cuEventDestroy", cudaEventDestroy(v)); }
CUresult cuEventRecord(CUevent v, CUstream s) { DRV_CALL("cuEventRecord", cudaEventRecord(v, s)); }
CUresult cuEventSynchronize(CUevent v) { DRV_CALL("cuEventSynchronize", cudaEventSynchronize(v)); }
CUresult cuMemFree_v2(CUdeviceptr p) { DRV_CALL("cuMemFree", cudaFree((void *)(uintptr_t)p)); }
CUresult cuMemHostAlloc(void **p, size_t n, unsigned flags) { DRV_CALL("cuMemHostAlloc", cudaHostAlloc(p, n, flags)); }
CUresult cuMemFreeHost(void *p) { DRV_CALL("cuMemFreeHost", cudaFreeHost(p)); }
CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned flags) { DRV_CALL("cuMemHostRegister", cudaHostRegister(p, n, flags)); }
CUresult cuMemHostUnregister(void *p) { DRV_CALL("cuMemHostUnregister", cudaHostUnregister(p)); }

CUresult cuMemAlloc_v2(CUdeviceptr *out, size_t n)
{
    void *p = NULL;
    struct CUctx_st *c = drv_current("cuMemAlloc");
    int saved = t_dev;
    cudaError_t e;
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    t_dev = c->dev;
    e = cudaMalloc(&p, n);
    t_dev = saved;
    *out = (CUdeviceptr)(uintptr_t)p;
    return (CUresult)e;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
    DRV_CALL("cuMemcpyHtoD", cudaMemcpy((void *)(uintptr_t)dst, src, n, cudaMemcpyHostToDevice));
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    DRV_CALL("cuMemcpyHtoDAsync", cudaMemcpyAsync((void *)(uintptr_t)dst, src, n, cudaMemcpyHostToDevice, s));
}

CUresult cuModuleLoadData(CUmodule *out, const void *image)
{
    struct CUmod_st *m;
    const char *ptx = (const char *)image;
    if (!drv_current("cuModuleLoadData")) return CUDA_ERROR_INVALID_CONTEXT;
    if (!out || !ptx) return CUDA_ERROR_INVALID_VALUE;
    if (strncmp(ptx, ".version ", 9) != 0 || !strstr(ptx, ".target sm_") || !strstr(ptx, "\nret;\n}\n")) {
        misuse_unlocked("cuModuleLoadData", "not PTX text (.version, .target, an entry that returns)");
        return CUDA_ERROR_INVALID_PTX;
    }
    m = (struct CUmod_st *)calloc(1, sizeof *m);
    if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
    m->magic = EMU_MAGIC_M;
    if (strstr(ptx, ".visible .entry gf__gather(.param .u64 src, .param .u64 idx, .param .u64 n, .param .u64 rb, .param .u64 dst)")) {
        m->fn = (struct CUfunc_st *)calloc(1, sizeof *m->fn);
        if (!m->fn) { free(m); return CUDA_ERROR_OUT_OF_MEMORY; }
        m->fn->magic = EMU_MAGIC_M; m->fn->mod = m;
    }
    pthread_mutex_lock(MU);
    g.c.modules++;
    m->all_next = g_mods;
    g_mods = m;
    pthread_mutex_unlock(MU);
    *out = m;
    return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule m)
{
    if (!drv_current("cuModuleUnload")) return CUDA_ERROR_INVALID_CONTEXT;
    if (!m || m->magic != EMU_MAGIC_M || m->dead) { misuse_unlocked("cuModuleUnload", "not a loaded module"); return CUDA_ERROR_INVALID_HANDLE; }
    m->dead = 1; /* kept, so that a later launch is seen */
    pthread_mutex_lock(MU);
    g.c.modules--;
    pthread_mutex_unlock(MU);
    return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *out, CUmodule m, const char *name)
{
    if (!drv_current("cuModuleGetFunction")) return CUDA_ERROR_INVALID_CONTEXT;
    if (!out || !name || !m || m->magic != EMU_MAGIC_M || m->dead) return CUDA_ERROR_INVALID_HANDLE;
    if (strcmp(name, "gf__gather") != 0 || !m->fn) return CUDA_ERROR_NOT_FOUND;
    *out = m->fn;
    return CUDA_SUCCESS;
}

/* gf__gather(src, idx, n, rb, dst) queued on the stream: the arguments are
   taken now, as the driver does */
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                        CUstream st, void **params, void **extra)
{
    struct CUctx_st *c = drv_current("cuLaunchKernel");
    struct CUstream_st *s;
    emu_mem *src, *dst, *idx;
    emu_op *op;
    cudaError_t e;
    CUdeviceptr a, i, d;
    long long n, rb;
    int saved = t_dev;
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    if (!f || f->magic != EMU_MAGIC_M || f->mod->dead) { misuse_unlocked("cuLaunchKernel", "not a function of a loaded module"); return CUDA_ERROR_INVALID_HANDLE; }
    if (!params || extra || gx == 0 || gy != 1 || gz != 1 || bx == 0 || bx > 1024 || by != 1 || bz != 1 || shmem) return CUDA_ERROR_INVALID_VALUE;
    memcpy(&a, params[0], 8); memcpy(&i, params[1], 8); memcpy(&n, params[2], 8); memcpy(&rb, params[3], 8); memcpy(&d, params[4], 8);
    pthread_mutex_lock(MU);
    t_dev = c->dev;
    s = stream_locked(st, "cuLaunchKernel", &e);
    t_dev = saved;
    if (!s) { pthread_mutex_unlock(MU); return (CUresult)e; }
    src = find_locked((void *)(uintptr_t)a, 1, 1);
    idx = find_locked((void *)(uintptr_t)i, (size_t)n * 8, 1);
    dst = find_locked((void *)(uintptr_t)d, (size_t)n * (size_t)rb, 1);
    if (n < 0 || rb <= 0 || (n > 0 && (!src || !idx || !dst))) {
        misuse_locked("cuLaunchKernel", "gf__gather's arguments are not inside device allocations");
        pthread_mutex_unlock(MU);
        return CUDA_ERROR_INVALID_VALUE;
    }
    op = push_locked(s, OP_GATHER);
    if (!op) { pthread_mutex_unlock(MU); return CUDA_ERROR_OUT_OF_MEMORY; }
    op->src = (const void *)(uintptr_t)a; op->idx = (const long long *)(uintptr_t)i; op->dst = (void *)(uintptr_t)d;
    op->rows = n; op->rb = rb;
    op->src_len = src ? (size_t)(src->p + src->n - (const char *)op->src) : 0;
    pthread_mutex_unlock(MU);
    return CUDA_SUCCESS;
}

/* the name and text of a driver error code; 0 if unknown */
static int drv_error(CUresult e, const char **name, const char **text)
{
    static const struct { CUresult e; const char *name, *text; } t[] = {
        { CUDA_SUCCESS, "CUDA_SUCCESS", "no error" },
        { CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
        { CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
        { CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error" },
        { CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected" },
        { CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
        { CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context" },
        { CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed" },
        { CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
        { CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
        { CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure (injected by cuda_emu)" },
        { CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", "part or all of the requested memory range is already mapped" },
        { CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", "pointer does not correspond to a registered memory region" },
    };
    size_t k;
    for (k = 0; k < sizeof t / sizeof t[0]; k++)
        if (t[k].e == e) { *name = t[k].name; *text = t[k].text; return 1; }
    return 0;
}

CUresult cuGetErrorName(CUresult e, const char **out)
{
    const char *text;
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    *out = NULL;
    return drv_error(e, out, &text) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult e, const char **out)
{
    const char *name;
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    *out = NULL;
    return drv_error(e, &name, out) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
