/* cuda_emu.c -- an emulated CUDA runtime on the host (see cuda_emu.h).

   Link it instead of -lcudart:
       cc -std=c99 -DGPUFEED_CUDA -I. -I$CUDA/include prog.c tests/cuda_emu.c -lpthread
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
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic pop
#endif
#include "cuda_emu.h"

#define EMU_MAX_DEV 8
#define EMU_MAGIC_S 0x5354524du
#define EMU_MAGIC_E 0x45564e54u

enum { OP_COPY, OP_RECORD, OP_WAIT, OP_HOSTFN };

typedef struct emu_op {
    int kind;
    void *dst; const void *src; size_t n; void *staged;
    struct CUevent_st *ev; uint64_t gen;
    cudaHostFn_t fn; void *arg;
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
            pthread_mutex_lock(MU);
        }
        if (op->kind == OP_RECORD && op->ev->done < op->gen) op->ev->done = op->gen;
        if (op->kind == OP_COPY) { if (op->staged) g.c.staged_copies++; else g.c.async_copies++; }
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
