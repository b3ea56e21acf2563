/* test_cuda_streams.c -- the uploader's CUDA path and the DLPack device
   export against CUDA stream semantics, from C.

   gpufeed on the CUDA runtime (GPUFEED_CUDA) or on the driver (a plain
   build: libcuda.so.1 loaded at run time); the test's own consumer uses
   the runtime API either way, as a trainer beside PyTorch does. Four
   builds of the same checks:
     emulated runtime (any machine; what `make test` runs):
       cc -std=c99 -Wall -Wextra -Werror -pedantic -DGPUFEED_CUDA -DGF_CUDA_EMU -I. -I$CUDA/include \
          tests/test_cuda_streams.c tests/cuda_emu.c -o build/test_cuda_streams_emu -lpthread -lm
     emulated driver (any machine; `make test` too): tests/cuda_emu.c built
     as build/emu/libcuda.so.1 (see there), then
       cc -std=c99 -Wall -Wextra -Werror -pedantic -DGF_CUDA_EMU -I. -I$CUDA/include tests/test_cuda_streams.c \
          -o build/test_cuda_streams_drv_emu -Lbuild/emu -l:libcuda.so.1 -Wl,-rpath,$PWD/build/emu -lpthread -lm -ldl
     real runtime, real driver (a GPU machine; skips with a message where
     there is none): as the first two with -L$CUDA/lib64 -lcudart in place
     of the emulator.
   Run from the repository root: build/test_cuda_streams_emu [PARQUET]

   The trainer is played by a consumer stream: it waits for each batch the
   way a trainer must (gpufeed_device_batch_wait, or the wait inside
   gpufeed_batch_dlpack), sleeps a random 0..1.5 ms in a host function (a
   slow kernel), then copies the batch back to pinned host memory; the
   batch is released on that stream at once. The copies must equal the
   plain loader's stream batch for batch: a slot refilled before the
   consumer has read it, or read before its upload finished, shows up as
   a wrong hash. With the emulated runtime (tests/cuda_emu.c) every stream
   runs on its own thread with random delays, so only the ordering gpufeed
   sets up with events holds; the emulated runs also check that every
   allocation, registration, stream and event is given back, that no
   handle is used after it was destroyed, and that injected failures of
   cudaMalloc, cudaHostRegister, cudaHostAlloc, cudaMemcpyAsync,
   cudaEventRecord and cudaStreamWaitEvent give clear errors and no leak. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GPUFEED_IMPLEMENTATION
#include "gpufeed.h"
#include "gf_test.h"
#ifdef GF_CUDA_EMU
#include "cuda_emu.h"
#endif

#if !defined(GF__CUDA) && !defined(GF__CUDRV)
#error "build with -DGPUFEED_CUDA (the runtime) or without GPUFEED_NO_CUDA on Linux (the driver)"
#endif
#ifdef GF__CUDRV /* the consumer's runtime calls (gpufeed.h includes it only for GPUFEED_CUDA) */
GF__PEDANTIC_OFF
#include <cuda_runtime_api.h>
GF__PEDANTIC_ON
#endif

static const char *g_path = "examples/data/flights.parquet";
static int g_ndev;

#define NF 8
#define BATCH 4096
#define CAP 1024

/* ---- leak and misuse accounting (emulated runtime only) ----------------- */
typedef struct snap {
#ifdef GF_CUDA_EMU
    emu_counts c;
#else
    int unused;
#endif
} snap;

static void snap_take(snap *s)
{
#ifdef GF_CUDA_EMU
    emu_counts_get(&s->c);
#else
    s->unused = 0;
#endif
}

/* nothing CUDA-side is left over since `s`, and nothing was misused */
static void snap_check(const snap *s, const char *where)
{
#ifdef GF_CUDA_EMU
    emu_counts c;
    emu_counts_get(&c);
    CHECK_MSG(c.device_allocs == s->c.device_allocs && c.host_allocs == s->c.host_allocs && c.registrations == s->c.registrations &&
              c.streams == s->c.streams && c.events == s->c.events,
              "%s: left over: %ld device allocations, %ld pinned allocations, %ld registrations, %ld streams, %ld events", where,
              c.device_allocs - s->c.device_allocs, c.host_allocs - s->c.host_allocs, c.registrations - s->c.registrations,
              c.streams - s->c.streams, c.events - s->c.events);
    CHECK_MSG(c.contexts == s->c.contexts && c.modules == s->c.modules && c.ctx_pushed == s->c.ctx_pushed,
              "%s: left over: %ld context retains, %ld modules, %ld contexts pushed and not popped", where,
              c.contexts - s->c.contexts, c.modules - s->c.modules, c.ctx_pushed - s->c.ctx_pushed);
    CHECK_MSG(c.misuse == s->c.misuse, "%s: %ld runtime misuses, the last: %s", where, c.misuse - s->c.misuse, emu_last_misuse());
#else
    (void)s; (void)where;
#endif
}

#define CK(x) do { cudaError_t e_ = (x); CHECK_MSG(e_ == cudaSuccess, "%s: %s", #x, cudaGetErrorString(e_)); } while (0)

/* ---- the pipeline ------------------------------------------------------- */
typedef struct pipe_t { gpufeed_dataset *ds; gpufeed_loader *l; gpufeed_feature ft[NF]; int nf, layout; } pipe_t;

/* set 0: mixed dtypes with masks; set 1: all f32 (one row-major matrix);
   set 2: eight f64 (64-byte rows: shuffled into a device's slots with
   non-temporal stores) */
static int open_pipe(pipe_t *p, int layout, int set, uint64_t seed, int64_t epochs)
{
    const char *paths[1];
    gpufeed_dataset_desc dd;
    gpufeed_loader_desc ld;
    gpufeed_error err;
    paths[0] = g_path;
    memset(p, 0, sizeof *p);
    memset(&dd, 0, sizeof dd);
    memset(&ld, 0, sizeof ld);
    p->layout = layout;
    if (set == 0) {
        p->nf = 4;
        p->ft[0].column = "dep_delay"; p->ft[0].dtype = GPUFEED_DT_F32; p->ft[0].validity = 1;
        p->ft[1].column = "distance"; p->ft[1].dtype = GPUFEED_DT_F64;
        p->ft[2].column = "carrier"; p->ft[2].dtype = GPUFEED_DT_I32; p->ft[2].hash_buckets = 97; p->ft[2].validity = 1;
        p->ft[3].column = "month"; p->ft[3].dtype = GPUFEED_DT_U8;
    } else if (set == 1) {
        p->nf = 3;
        p->ft[0].column = "dep_delay"; p->ft[0].dtype = GPUFEED_DT_F32; p->ft[0].validity = 1;
        p->ft[1].column = "distance"; p->ft[1].dtype = GPUFEED_DT_F32;
        p->ft[2].column = "month"; p->ft[2].dtype = GPUFEED_DT_F32;
    } else {
        static const char *cols[8] = { "dep_delay", "distance", "month", "day", "hour", "minute", "air_time", "arr_delay" };
        int j;
        p->nf = 8;
        for (j = 0; j < 8; j++) { p->ft[j].column = cols[j]; p->ft[j].dtype = GPUFEED_DT_F64; }
    }
    dd.paths = paths; dd.num_paths = 1; dd.features = p->ft; dd.num_features = p->nf;
    dd.layout = layout; dd.unit_rows = 32768;
    if (gpufeed_dataset_open(&p->ds, &dd, &err)) { fprintf(stderr, "  dataset: %s\n", err.message); return -1; }
    ld.batch_rows = BATCH; ld.workers = 2; ld.seed = seed; ld.shuffle_window = 2; ld.epochs = epochs;
    if (gpufeed_loader_open(&p->l, p->ds, &ld, &err)) {
        fprintf(stderr, "  loader: %s\n", err.message);
        gpufeed_dataset_close(p->ds); p->ds = NULL; return -1;
    }
    return 0;
}

static void close_pipe(pipe_t *p)
{
    gpufeed_loader_close(p->l);
    gpufeed_dataset_close(p->ds);
    p->l = NULL; p->ds = NULL;
}

/* what the consumer checks, per batch of the plain loader's stream */
typedef struct ref_t {
    int64_t n;
    uint64_t batch[CAP];               /* gpufeed_batch_hash */
    uint64_t data[CAP];                /* row-major: the data alone */
    uint64_t col2[CAP], mask0[CAP];    /* per-feature: feature 2, mask 0 */
    int64_t rows[CAP];
} ref_t;

static int reference(int layout, int set, uint64_t seed, int64_t epochs, ref_t *r)
{
    pipe_t p;
    gpufeed_batch b;
    gpufeed_result rc;
    r->n = 0;
    if (open_pipe(&p, layout, set, seed, epochs)) return -1;
    while ((rc = gpufeed_loader_next(p.l, &b)) == GPUFEED_OK && r->n < CAP) {
        int64_t i = r->n++;
        r->batch[i] = gpufeed_batch_hash(p.ds, &b);
        r->rows[i] = b.num_rows;
        if (layout == GPUFEED_LAYOUT_ROW_MAJOR) r->data[i] = gpufeed_hash64(b.data, (size_t)(b.num_rows * b.row_bytes), 0);
        else r->col2[i] = gpufeed_hash64(b.features[2], (size_t)b.num_rows * gpufeed_feature_bytes(&p.ft[2]), 0);
        r->mask0[i] = b.valid[0] ? gpufeed_hash64(b.valid[0], (size_t)b.num_rows, 0) : 0;
    }
    close_pipe(&p);
    if (rc != GPUFEED_DONE) { fprintf(stderr, "  reference stream: %d\n", (int)rc); return -1; }
    return 0;
}

/* ---- the consumer ------------------------------------------------------- */
typedef struct slow_t { unsigned rng; unsigned max_us; } slow_t;

static void slow_kernel(void *arg) /* runs in stream order: a kernel that takes a while */
{
    slow_t *s = (slow_t *)arg;
    struct timespec ts;
    s->rng = s->rng * 1103515245u + 12345u;
    ts.tv_sec = 0; ts.tv_nsec = (long)((s->rng >> 8) % (s->max_us + 1)) * 1000;
    nanosleep(&ts, NULL);
}

/* a batch copied back from the device, in pinned memory */
typedef struct mirror {
    void *mem;
    void *data; void *feat[NF]; uint8_t *valid[NF];
    gpufeed_batch meta;
} mirror;

static int mirror_batch(cudaStream_t st, const pipe_t *p, const gpufeed_device_batch *b, mirror *m)
{
    size_t rows = (size_t)b->host.num_rows, total = 0, at = 0;
    int j;
    memset(m, 0, sizeof *m);
    m->meta = b->host;
    if (p->layout == GPUFEED_LAYOUT_ROW_MAJOR) total += rows * (size_t)b->host.row_bytes;
    else for (j = 0; j < p->nf; j++) total += rows * gpufeed_feature_bytes(&p->ft[j]);
    for (j = 0; j < p->nf; j++) if (p->ft[j].validity) total += rows;
    if (cudaHostAlloc(&m->mem, total + 1, cudaHostAllocDefault) != cudaSuccess) return -1;
    if (p->layout == GPUFEED_LAYOUT_ROW_MAJOR) {
        m->data = m->mem; at = rows * (size_t)b->host.row_bytes;
        if (rows && cudaMemcpyAsync(m->data, b->data, at, cudaMemcpyDeviceToHost, st) != cudaSuccess) return -1;
    } else {
        for (j = 0; j < p->nf; j++) {
            size_t n = rows * gpufeed_feature_bytes(&p->ft[j]);
            m->feat[j] = (char *)m->mem + at; at += n;
            if (n && cudaMemcpyAsync(m->feat[j], b->features[j], n, cudaMemcpyDeviceToHost, st) != cudaSuccess) return -1;
        }
    }
    for (j = 0; j < p->nf; j++) {
        if (!p->ft[j].validity) continue;
        m->valid[j] = (uint8_t *)m->mem + at; at += rows;
        if (rows && cudaMemcpyAsync(m->valid[j], b->valid[j], rows, cudaMemcpyDeviceToHost, st) != cudaSuccess) return -1;
    }
    m->meta.data = m->data; m->meta.features = m->feat; m->meta.valid = m->valid;
    return 0;
}

static uint64_t g_resident_bytes; /* open_uploader's resident_bytes */

static gpufeed_uploader *open_uploader(pipe_t *p, int32_t device, int32_t slots, uint64_t max_pinned)
{
    gpufeed_uploader *u = NULL;
    gpufeed_uploader_desc d;
    gpufeed_error err;
    memset(&d, 0, sizeof d);
    d.device = device; d.slots = slots; d.max_pinned_bytes = max_pinned; d.resident_bytes = g_resident_bytes;
    if (gpufeed_uploader_open(&u, p->l, &d, &err) != GPUFEED_OK) { CHECK_MSG(0, "uploader: %s", err.message); return NULL; }
    return u;
}

/* The stream through a slow consumer, holding up to `hold` batches and
   releasing them in a scrambled order; every copy-back equals the plain
   loader's batch. Returns the batches checked. */
static int g_host_buffers; /* distinct host buffers run_stream's batches arrived in */
static int64_t g_resident_batches; /* run_stream's batches gathered on the device */
static int g_set;                  /* run_stream's feature set (open_pipe) */
static int g_stream_out;           /* its loader wrote batches with non-temporal stores */

static int64_t run_stream(int layout, int32_t slots, int32_t hold, uint64_t max_pinned, const char *what)
{
    static ref_t ref;
    static mirror mir[CAP];
    const void *seen[64];
    pipe_t p;
    gpufeed_uploader *u;
    gpufeed_device_batch held[16], b;
    int64_t held_n[16];
    int64_t host_bad = 0;
    cudaStream_t st;
    slow_t slow;
    int nheld = 0, i;
    int64_t n = 0, bad = 0, rows = 0;
    unsigned rng = 7;
    gpufeed_result r;
    if (reference(layout, g_set, 4321, 2, &ref)) { CHECK(0); return 0; }
    if (open_pipe(&p, layout, g_set, 4321, 2)) { CHECK(0); return 0; }
    u = open_uploader(&p, 0, slots, max_pinned);
    if (!u) { close_pipe(&p); return 0; }
    g_stream_out = p.l->stream_out;
    CK(cudaSetDevice(0));
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    slow.rng = 99; slow.max_us = 1500;
    g_host_buffers = 0;
    g_resident_batches = 0;
    while ((r = gpufeed_uploader_next(u, &b)) == GPUFEED_OK && n < CAP) {
        const void *hp = b.resident ? NULL : layout == GPUFEED_LAYOUT_ROW_MAJOR ? b.host.data : b.host.features[0];
        for (i = 0; i < g_host_buffers && seen[i] != hp; i++) {}
        if (i == g_host_buffers && i < 64 && hp) seen[g_host_buffers++] = hp;
        g_resident_batches += b.resident == 1;
        CHECK(b.on_device == 1 && b.ready != NULL && (layout == GPUFEED_LAYOUT_ROW_MAJOR ? b.data != NULL : b.data == NULL && b.features != NULL));
        CHECK(gpufeed_device_batch_wait(&b, st) == GPUFEED_OK);
        CK(cudaLaunchHostFunc(st, slow_kernel, &slow));
        CHECK(mirror_batch(st, &p, &b, &mir[n]) == 0);
        rows += b.host.num_rows;
        held_n[nheld] = n;
        n++;
        held[nheld++] = b;
        while (nheld >= hold) { /* release one of the held, not always the oldest */
            rng = rng * 1103515245u + 12345u;
            i = (int)((rng >> 8) % (unsigned)nheld);
            /* the host side of a held batch stays intact until its release */
            if (!held[i].resident && held_n[i] < ref.n && gpufeed_batch_hash(p.ds, &held[i].host) != ref.batch[held_n[i]]) host_bad++;
            CHECK_MSG(gpufeed_uploader_release(u, &held[i], st) == GPUFEED_OK, "%s", gpufeed_uploader_error(u));
            held[i] = held[--nheld];
            held_n[i] = held_n[nheld];
        }
    }
    CHECK_MSG(r == GPUFEED_DONE, "%d: %s", (int)r, gpufeed_uploader_error(u));
    while (nheld > 0) {
        nheld--;
        if (!held[nheld].resident && held_n[nheld] < ref.n && gpufeed_batch_hash(p.ds, &held[nheld].host) != ref.batch[held_n[nheld]]) host_bad++;
        CHECK(gpufeed_uploader_release(u, &held[nheld], st) == GPUFEED_OK);
    }
    CHECK_MSG(host_bad == 0, "%s: %lld held batches changed on the host before their release", what, (long long)host_bad);
    CK(cudaStreamSynchronize(st));
    CHECK_MSG(n == ref.n, "%lld batches, the plain loader gave %lld", (long long)n, (long long)ref.n);
    for (i = 0; i < n && i < ref.n; i++) if (gpufeed_batch_hash(p.ds, &mir[i].meta) != ref.batch[i]) bad++;
    CHECK_MSG(bad == 0, "%s: %lld of %lld batches read back from the device differ from the loader's stream", what, (long long)bad, (long long)n);
    for (i = 0; i < n; i++) CK(cudaFreeHost(mir[i].mem));
    gpufeed_uploader_close(u);
    CK(cudaStreamDestroy(st));
    close_pipe(&p);
    printf("  %s: %lld batches (%lld rows) through a slow consumer stream, equal to the loader's; %d host buffers\n", what, (long long)n, (long long)rows, g_host_buffers);
    return n;
}

static void test_stream_row_major_2_slots(void)
{
    snap s; snap_take(&s);
    CHECK(run_stream(GPUFEED_LAYOUT_ROW_MAJOR, 2, 1, 0, "row-major, 2 slots") > 100);
    /* every buffer pinned: the slots trade memory with the loader's batch
       slots, so batches arrive in more buffers than there are slots */
    CHECK_MSG(g_host_buffers > 2, "batches came in %d host buffers: copied into the slots, not exchanged", g_host_buffers);
    snap_check(&s, "row-major, 2 slots");
}

static void test_stream_per_feature_held(void)
{
    snap s; snap_take(&s);
    CHECK(run_stream(GPUFEED_LAYOUT_PER_FEATURE, 4, 3, 0, "per-feature, 4 slots, 3 held") > 100);
    CHECK_MSG(g_host_buffers > 4, "batches came in %d host buffers: copied into the slots, not exchanged", g_host_buffers);
    snap_check(&s, "per-feature, 4 slots, 3 held");
}

/* slots past max_pinned_bytes stay pageable: their copies are staged, the
   stream is the same */
static void test_stream_partly_pageable(void)
{
    snap s; snap_take(&s);
    CHECK(run_stream(GPUFEED_LAYOUT_ROW_MAJOR, 3, 2, 200000, "row-major, 3 slots, 1 pinned") > 100);
    /* a pageable slot: each batch is copied into its slot (no exchange) */
    CHECK_MSG(g_host_buffers == 3, "batches came in %d host buffers, want the 3 slots'", g_host_buffers);
    snap_check(&s, "partly pageable");
#ifdef GF_CUDA_EMU
    {
        emu_counts c;
        emu_counts_get(&c);
        CHECK_MSG(c.staged_copies > s.c.staged_copies, "no staged copy: every slot was pinned");
    }
#endif
}

/* 64-byte rows, shuffled by the workers straight into pinned batch slots
   with non-temporal stores (x86-64): the same stream */
static void test_stream_wide_rows(void)
{
    snap s; snap_take(&s);
    g_set = 2;
    CHECK(run_stream(GPUFEED_LAYOUT_ROW_MAJOR, 3, 2, 0, "row-major, 8 x f64, 3 slots, 2 held") > 100);
    g_set = 0;
    CHECK_MSG(g_stream_out == GPUFEED_STREAM_STORES, "stream_out %d, GPUFEED_STREAM_STORES %d", g_stream_out, GPUFEED_STREAM_STORES);
    snap_check(&s, "wide rows");
}

/* device-resident mode: the rows uploaded once, each batch gathered on the
   device by the gather kernel (the driver loads it from PTX; nvcc builds
   it), in stream order after its ids' upload; the same stream (a runtime
   build by a host compiler has no gather kernel, so no such test) */
#if !defined(GF__CUDA) || defined(__CUDACC__)
static void test_stream_resident(void)
{
    snap s; snap_take(&s);
    g_resident_bytes = (uint64_t)1 << 30;
    CHECK(run_stream(GPUFEED_LAYOUT_ROW_MAJOR, 3, 2, 0, "row-major, resident, 3 slots, 2 held") > 100);
    g_resident_bytes = 0;
    CHECK_MSG(g_resident_batches > 100, "%lld batches were gathered on the device", (long long)g_resident_batches);
    snap_check(&s, "resident");
#ifdef GF_CUDA_EMU
    {
        emu_counts c;
        emu_counts_get(&c);
        CHECK_MSG(c.launches > s.c.launches, "no gather kernel ran");
    }
#endif
}
#endif

/* one batch held while the loader goes round its batch slots many times:
   its host memory and its device copy stay the batch's own (the slot's
   memory passed to the uploader, the loader took another buffer) */
static void test_held_across_the_ring(void)
{
    static ref_t ref;
    static mirror m0;
    pipe_t p;
    gpufeed_uploader *u;
    gpufeed_device_batch b0, b;
    cudaStream_t st;
    int64_t n = 1;
    int ok0;
    snap s; snap_take(&s);
    if (reference(GPUFEED_LAYOUT_ROW_MAJOR, 0, 4321, 2, &ref)) { CHECK(0); return; }
    if (open_pipe(&p, GPUFEED_LAYOUT_ROW_MAJOR, 0, 4321, 2)) { CHECK(0); return; }
    u = open_uploader(&p, 0, 3, 0);
    if (!u) { close_pipe(&p); return; }
    CK(cudaSetDevice(0));
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    ok0 = gpufeed_uploader_next(u, &b0) == GPUFEED_OK;
    CHECK_MSG(ok0, "%s", gpufeed_uploader_error(u));
    if (ok0) {
        while (n < 60 && gpufeed_uploader_next(u, &b) == GPUFEED_OK) { /* the other two slots, round and round */
            CHECK(gpufeed_device_batch_wait(&b, st) == GPUFEED_OK);
            CHECK(gpufeed_uploader_release(u, &b, st) == GPUFEED_OK);
            n++;
        }
        CHECK_MSG(n == 60 && ref.n >= 60, "%lld batches (the loader's stream has %lld)", (long long)n, (long long)ref.n);
        CHECK_MSG(gpufeed_batch_hash(p.ds, &b0.host) == ref.batch[0], "the held batch changed on the host while the loader took %lld more", (long long)(n - 1));
        CHECK(gpufeed_device_batch_wait(&b0, st) == GPUFEED_OK);
        CHECK(mirror_batch(st, &p, &b0, &m0) == 0);
        CK(cudaStreamSynchronize(st));
        CHECK_MSG(gpufeed_batch_hash(p.ds, &m0.meta) == ref.batch[0], "the held batch read back from the device differs");
        CK(cudaFreeHost(m0.mem));
        CHECK(gpufeed_uploader_release(u, &b0, st) == GPUFEED_OK);
    }
    CK(cudaStreamSynchronize(st));
    gpufeed_uploader_close(u);
    CK(cudaStreamDestroy(st));
    close_pipe(&p);
    snap_check(&s, "held across the ring");
    printf("  one batch held while %lld more went through the other slots: intact on the host and the device\n", (long long)(n - 1));
}

/* ---- DLPack ------------------------------------------------------------- */
typedef struct later_t { void *t[2]; int versioned[2]; pthread_t th; int started; } later_t;

static void *delete_later(void *arg) /* a framework dropping its tensors on another thread */
{
    later_t *k = (later_t *)arg;
    struct timespec ts;
    int i;
    ts.tv_sec = 0; ts.tv_nsec = 300000;
    nanosleep(&ts, NULL);
    for (i = 0; i < 2; i++) {
        if (!k->t[i]) continue;
        if (k->versioned[i]) { gpufeed_dl_managed_versioned *v = (gpufeed_dl_managed_versioned *)k->t[i]; v->deleter(v); }
        else { gpufeed_dl_managed *m = (gpufeed_dl_managed *)k->t[i]; m->deleter(m); }
    }
    return NULL;
}

static gpufeed_dl_tensor *tensor_of(void *t, int versioned)
{
    return versioned ? &((gpufeed_dl_managed_versioned *)t)->dl_tensor : &((gpufeed_dl_managed *)t)->dl_tensor;
}

/* per-feature layout: feature 2 and mask 0 as kDLCUDA tensors on the
   consumer stream; the batch is released at once, the tensors dropped
   later on other threads: the copies read through the tensors still equal
   the loader's columns */
static void test_dlpack_tensors_outlive_release(void)
{
    static ref_t ref;
    static later_t later[CAP];
    static void *back[CAP];
    pipe_t p;
    gpufeed_uploader *u;
    gpufeed_device_batch b;
    cudaStream_t st;
    slow_t slow;
    snap s;
    int64_t n = 0, bad = 0, i, joined = 0;
    const int32_t slots = 3;
    gpufeed_result r;
    snap_take(&s);
    if (reference(GPUFEED_LAYOUT_PER_FEATURE, 0, 55, 1, &ref)) { CHECK(0); return; }
    if (open_pipe(&p, GPUFEED_LAYOUT_PER_FEATURE, 0, 55, 1)) { CHECK(0); return; }
    u = open_uploader(&p, 0, slots, 0);
    if (!u) { close_pipe(&p); return; }
    CK(cudaSetDevice(0));
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    slow.rng = 5; slow.max_us = 1000;
    for (;;) {
        gpufeed_dl_tensor *tc, *tm;
        size_t rows;
        /* a slot comes back once its tensors are gone: drop old ones first */
        while (joined + slots - 1 <= n && joined < n) { pthread_join(later[joined].th, NULL); joined++; }
        r = gpufeed_uploader_next(u, &b);
        if (r != GPUFEED_OK || n >= CAP) break;
        later[n].versioned[0] = (int)(n & 1); later[n].versioned[1] = !(n & 1);
        CHECK(gpufeed_batch_dlpack(u, &b, 2, 0, st, later[n].versioned[0], &later[n].t[0]) == GPUFEED_OK);
        CHECK(gpufeed_batch_dlpack(u, &b, 0, 1, st, later[n].versioned[1], &later[n].t[1]) == GPUFEED_OK);
        if (!later[n].t[0] || !later[n].t[1]) break;
        tc = tensor_of(later[n].t[0], later[n].versioned[0]);
        tm = tensor_of(later[n].t[1], later[n].versioned[1]);
        rows = (size_t)b.host.num_rows;
        CHECK(tc->device.device_type == GPUFEED_DL_CUDA && tc->device.device_id == 0 && tm->device.device_type == GPUFEED_DL_CUDA);
        CHECK(tc->ndim == 1 && tc->shape[0] == (int64_t)rows && tc->dtype.code == GPUFEED_DL_INT && tc->dtype.bits == 32);
        CHECK(tm->ndim == 1 && tm->shape[0] == (int64_t)rows && tm->dtype.code == GPUFEED_DL_UINT && tm->dtype.bits == 8);
        CHECK(tc->data == b.features[2] && tm->data == b.valid[0] && tc->byte_offset == 0);
#ifdef GF_CUDA_EMU
        CHECK(emu_device_of(tc->data) == 0);
#endif
        /* the trainer is done with the batch handle; the tensors live on */
        CHECK(gpufeed_uploader_release(u, &b, st) == GPUFEED_OK);
        CK(cudaLaunchHostFunc(st, slow_kernel, &slow));
        CK(cudaHostAlloc(&back[n], rows * 5 + 1, cudaHostAllocDefault));
        if (rows) CK(cudaMemcpyAsync(back[n], tc->data, rows * 4, cudaMemcpyDeviceToHost, st));
        if (rows) CK(cudaMemcpyAsync((char *)back[n] + rows * 4, tm->data, rows, cudaMemcpyDeviceToHost, st));
        CHECK(pthread_create(&later[n].th, NULL, delete_later, &later[n]) == 0);
        ref.rows[n] = (int64_t)rows == ref.rows[n] ? ref.rows[n] : -1;
        n++;
    }
    CHECK_MSG(r == GPUFEED_DONE, "%d: %s", (int)r, gpufeed_uploader_error(u));
    while (joined < n) { pthread_join(later[joined].th, NULL); joined++; }
    CK(cudaStreamSynchronize(st));
    CHECK(n == ref.n);
    for (i = 0; i < n && i < ref.n; i++) {
        size_t rows = (size_t)ref.rows[i];
        if (ref.rows[i] < 0 || gpufeed_hash64(back[i], rows * 4, 0) != ref.col2[i] || gpufeed_hash64((char *)back[i] + rows * 4, rows, 0) != ref.mask0[i]) bad++;
    }
    CHECK_MSG(bad == 0, "%lld of %lld batches read through DLPack tensors differ from the loader's", (long long)bad, (long long)n);
    for (i = 0; i < n; i++) CK(cudaFreeHost(back[i]));
    gpufeed_uploader_close(u);
    CK(cudaStreamDestroy(st));
    close_pipe(&p);
    snap_check(&s, "DLPack tensors");
    printf("  %lld batches: a column and a mask per batch as kDLCUDA tensors, released at once, dropped later on other threads\n", (long long)n);
}

/* row-major, all f32: the whole matrix [rows, 3] and a strided column */
static void test_dlpack_row_major_matrix(void)
{
    static ref_t ref;
    pipe_t p;
    gpufeed_uploader *u;
    gpufeed_device_batch b;
    cudaStream_t st;
    snap s;
    int64_t n = 0, bad = 0, badcol = 0;
    void *back = NULL;
    gpufeed_result r;
    snap_take(&s);
    if (reference(GPUFEED_LAYOUT_ROW_MAJOR, 1, 8, 1, &ref)) { CHECK(0); return; }
    if (open_pipe(&p, GPUFEED_LAYOUT_ROW_MAJOR, 1, 8, 1)) { CHECK(0); return; }
    u = open_uploader(&p, 0, 2, 0);
    if (!u) { close_pipe(&p); return; }
    CK(cudaSetDevice(0));
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CK(cudaHostAlloc(&back, (size_t)BATCH * 12 + 1, cudaHostAllocDefault));
    while ((r = gpufeed_uploader_next(u, &b)) == GPUFEED_OK && n < CAP) {
        gpufeed_dl_managed_versioned *all = NULL, *col = NULL;
        size_t rows = (size_t)b.host.num_rows, i;
        CHECK(gpufeed_batch_dlpack(u, &b, GPUFEED_DL_ALL, 0, st, 1, (void **)&all) == GPUFEED_OK);
        CHECK(gpufeed_batch_dlpack(u, &b, 1, 0, st, 1, (void **)&col) == GPUFEED_OK);
        if (!all || !col) break;
        CHECK(all->dl_tensor.ndim == 2 && all->dl_tensor.shape[0] == (int64_t)rows && all->dl_tensor.shape[1] == 3);
        CHECK(all->dl_tensor.strides[0] == 3 && all->dl_tensor.strides[1] == 1 && all->dl_tensor.dtype.bits == 32);
        CHECK(col->dl_tensor.ndim == 1 && col->dl_tensor.byte_offset == 4 && col->dl_tensor.strides[0] == 3);
        if (rows) CK(cudaMemcpyAsync(back, all->dl_tensor.data, rows * 12, cudaMemcpyDeviceToHost, st));
        CK(cudaStreamSynchronize(st));
        if (gpufeed_hash64(back, rows * 12, 0) != ref.data[n]) bad++;
        for (i = 0; i < rows; i++) { /* the strided view picks each row's second float */
            float v, w;
            memcpy(&v, (char *)back + i * 12 + col->dl_tensor.byte_offset, 4);
            memcpy(&w, (char *)back + i * 12 + 4, 4);
            if (memcmp(&v, &w, 4) != 0) { badcol++; break; }
        }
        CHECK(gpufeed_uploader_release(u, &b, st) == GPUFEED_OK);
        all->deleter(all); col->deleter(col);
        n++;
    }
    CHECK_MSG(r == GPUFEED_DONE, "%d: %s", (int)r, gpufeed_uploader_error(u));
    CHECK(n == ref.n);
    CHECK_MSG(bad == 0, "%lld of %lld matrices read through DLPack differ from the loader's", (long long)bad, (long long)n);
    CHECK(badcol == 0);
    CK(cudaFreeHost(back));
    gpufeed_uploader_close(u);
    CK(cudaStreamDestroy(st));
    close_pipe(&p);
    snap_check(&s, "row-major DLPack");
}

/* tensors outlive the uploader: close defers, the last deleter (another
   thread) frees everything */
static void test_dlpack_deleter_after_close(void)
{
    pipe_t p;
    gpufeed_uploader *u;
    gpufeed_device_batch b;
    cudaStream_t st;
    later_t k;
    snap s;
    snap_take(&s);
    if (open_pipe(&p, GPUFEED_LAYOUT_PER_FEATURE, 0, 3, 1)) { CHECK(0); return; }
    u = open_uploader(&p, 0, 2, 0);
    if (!u) { close_pipe(&p); return; }
    CK(cudaSetDevice(0));
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    memset(&k, 0, sizeof k);
    CHECK(gpufeed_uploader_next(u, &b) == GPUFEED_OK);
    k.versioned[0] = 1; k.versioned[1] = 0;
    CHECK(gpufeed_batch_dlpack(u, &b, 1, 0, st, 1, &k.t[0]) == GPUFEED_OK);
    CHECK(gpufeed_batch_dlpack(u, &b, 3, 0, st, 0, &k.t[1]) == GPUFEED_OK);
    CHECK(gpufeed_uploader_release(u, &b, st) == GPUFEED_OK);
    gpufeed_uploader_close(u);           /* two tensors alive: deferred */
    gpufeed_loader_close(p.l); p.l = NULL; /* the loader may go first too */
#ifdef GF_CUDA_EMU
    {
        emu_counts c;
        emu_counts_get(&c);
        CHECK_MSG(c.device_allocs > s.c.device_allocs, "the device memory was freed under live tensors");
    }
#endif
    CHECK(pthread_create(&k.th, NULL, delete_later, &k) == 0);
    pthread_join(k.th, NULL);
    CK(cudaStreamSynchronize(st));
    CK(cudaStreamDestroy(st));
    gpufeed_dataset_close(p.ds);
    snap_check(&s, "deleter after close");
}

/* the caller's current device is left alone; the uploader works on its own */
static void test_caller_device_kept(void)
{
    pipe_t p;
    gpufeed_uploader *u;
    gpufeed_device_batch b;
    cudaStream_t st;
    void *t = NULL;
    int dev = -1, k;
    snap s;
    if (g_ndev < 2) { printf("SKIP: one device: the caller's device cannot differ from the uploader's\n"); return; }
    snap_take(&s);
    if (open_pipe(&p, GPUFEED_LAYOUT_ROW_MAJOR, 1, 1, 1)) { CHECK(0); return; }
    CK(cudaSetDevice(0));
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking)); /* the consumer, on device 0 */
    CK(cudaSetDevice(1));
    u = open_uploader(&p, 0, 2, 0);
    if (!u) { close_pipe(&p); CK(cudaStreamDestroy(st)); return; }
    CK(cudaGetDevice(&dev)); CHECK_MSG(dev == 1, "open left device %d current", dev);
    for (k = 0; k < 5; k++) {
        CHECK(gpufeed_uploader_next(u, &b) == GPUFEED_OK);
        CK(cudaGetDevice(&dev)); CHECK_MSG(dev == 1, "next left device %d current", dev);
#ifdef GF_CUDA_EMU
        CHECK_MSG(emu_device_of(b.data) == 0, "batch memory on device %d", emu_device_of(b.data));
#endif
        CHECK(gpufeed_batch_dlpack(u, &b, 0, 0, st, 1, &t) == GPUFEED_OK);
        CK(cudaGetDevice(&dev)); CHECK_MSG(dev == 1, "dlpack left device %d current", dev);
        CHECK(gpufeed_uploader_release(u, &b, st) == GPUFEED_OK);
        CK(cudaGetDevice(&dev)); CHECK_MSG(dev == 1, "release left device %d current", dev);
        if (t) ((gpufeed_dl_managed_versioned *)t)->deleter((gpufeed_dl_managed_versioned *)t);
        CK(cudaGetDevice(&dev)); CHECK_MSG(dev == 1, "the deleter left device %d current", dev);
    }
    gpufeed_uploader_close(u);
    CK(cudaGetDevice(&dev)); CHECK_MSG(dev == 1, "close left device %d current", dev);
    CK(cudaSetDevice(0));
    CK(cudaStreamSynchronize(st));
    CK(cudaStreamDestroy(st));
    close_pipe(&p);
    snap_check(&s, "caller's device");
}

#ifdef GF_CUDA_EMU
/* ---- failures the emulator injects -------------------------------------- */
static void test_fail_device_alloc(void)
{
    pipe_t p;
    gpufeed_uploader *u = NULL;
    gpufeed_uploader_desc d;
    gpufeed_error err;
    snap s;
    snap_take(&s);
    if (open_pipe(&p, GPUFEED_LAYOUT_ROW_MAJOR, 0, 1, 1)) { CHECK(0); return; }
    memset(&d, 0, sizeof d); d.slots = 3;
    emu_fail("cudaMalloc", 2);
    CHECK(gpufeed_uploader_open(&u, p.l, &d, &err) == GPUFEED_ERR_CUDA && u == NULL);
    CHECK_HAS(err.message, "slot 1");
    CHECK_HAS(err.message, "out of memory");
    emu_fail("cudaEventCreateWithFlags", 3);
    CHECK(gpufeed_uploader_open(&u, p.l, &d, &err) == GPUFEED_ERR_CUDA && u == NULL);
    CHECK_HAS(err.message, "device 0");
    emu_fail("cudaStreamCreateWithFlags", 1);
    CHECK(gpufeed_uploader_open(&u, p.l, &d, &err) == GPUFEED_ERR_CUDA && u == NULL);
    CHECK_HAS(err.message, "device 0");
    close_pipe(&p);
    snap_check(&s, "failed opens");
}

/* pinning fails: cudaHostAlloc instead; both fail: pageable, same stream */
static void test_fail_pinning(void)
{
    snap s;
    snap_take(&s);
    emu_fail("cudaHostRegister", 1);
    CHECK(run_stream(GPUFEED_LAYOUT_ROW_MAJOR, 3, 1, 0, "registration failed for one slot") > 100);
    emu_fail("cudaHostRegister", 2);
    emu_fail("cudaHostAlloc", 1);
    CHECK(run_stream(GPUFEED_LAYOUT_PER_FEATURE, 3, 2, 0, "no pinned memory for one slot") > 100);
    CHECK_MSG(g_host_buffers == 3, "a slot in cudaHostAlloc memory: batches came in %d host buffers, want the 3 slots'", g_host_buffers);
    /* the slots pinned, the loader's second batch slot not: the uploader
       copies into its slots and unpins the batch slot it had pinned */
    emu_fail("cudaHostRegister", 5);
    CHECK(run_stream(GPUFEED_LAYOUT_ROW_MAJOR, 3, 1, 0, "a loader batch slot not pinned") > 100);
    CHECK_MSG(g_host_buffers == 3, "batches came in %d host buffers, want the 3 slots'", g_host_buffers);
    snap_check(&s, "failed pinning");
}

/* a failed copy, release or consumer wait: a clear error, then a clean close */
static void test_fail_mid_stream(void)
{
    pipe_t p;
    gpufeed_uploader *u;
    gpufeed_device_batch b, b2;
    cudaStream_t st;
    void *t = (void *)&p;
    gpufeed_result r;
    int k;
    snap s;
    snap_take(&s);
    if (open_pipe(&p, GPUFEED_LAYOUT_PER_FEATURE, 0, 1, 1)) { CHECK(0); return; }
    u = open_uploader(&p, 0, 3, 0);
    if (!u) { close_pipe(&p); return; }
    CK(cudaSetDevice(0));
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    emu_fail("cudaMemcpyAsync", 15);     /* in the third batch's copies (6 pieces a batch) */
    for (k = 0; k < 3; k++) {
        r = gpufeed_uploader_next(u, &b);
        if (k < 2) { CHECK(r == GPUFEED_OK); CHECK(gpufeed_uploader_release(u, &b, st) == GPUFEED_OK); }
    }
    CHECK(r == GPUFEED_ERR_CUDA);
    CHECK_HAS(gpufeed_uploader_error(u), "copy of batch 2");
    CHECK_HAS(gpufeed_uploader_error(u), "injected");
    gpufeed_uploader_close(u);
    close_pipe(&p);

    if (open_pipe(&p, GPUFEED_LAYOUT_PER_FEATURE, 0, 1, 1)) { CHECK(0); return; }
    u = open_uploader(&p, 0, 3, 0);
    if (!u) { close_pipe(&p); return; }
    CHECK(gpufeed_uploader_next(u, &b) == GPUFEED_OK);
    emu_fail("cudaEventRecord", 1);
    CHECK(gpufeed_uploader_release(u, &b, st) == GPUFEED_ERR_CUDA);
    CHECK_HAS(gpufeed_uploader_error(u), "release");
    CHECK(gpufeed_uploader_release(u, &b, st) == GPUFEED_OK); /* still held: a retry works */
    CHECK(gpufeed_uploader_next(u, &b2) == GPUFEED_OK);
    emu_fail("cudaStreamWaitEvent", 1);
    CHECK(gpufeed_batch_dlpack(u, &b2, 0, 0, st, 1, &t) == GPUFEED_ERR_CUDA && t == NULL);
    CHECK_HAS(gpufeed_uploader_error(u), "consumer stream cannot wait");
    CHECK(gpufeed_uploader_release(u, &b2, st) == GPUFEED_OK);
    gpufeed_uploader_close(u);           /* no tensor alive: freed now */
    close_pipe(&p);
    CK(cudaStreamSynchronize(st));
    CK(cudaStreamDestroy(st));
    snap_check(&s, "failures mid-stream");
}

static void test_no_device(void)
{
    pipe_t p;
    gpufeed_uploader *u = NULL;
    gpufeed_uploader_desc d;
    gpufeed_device_batch b;
    gpufeed_error err;
    snap s;
    snap_take(&s);
    emu_set_devices(0);
    if (open_pipe(&p, GPUFEED_LAYOUT_ROW_MAJOR, 0, 1, 1)) { CHECK(0); emu_set_devices(2); return; }
    memset(&d, 0, sizeof d); d.slots = 2;
    CHECK(gpufeed_uploader_open(&u, p.l, &d, &err) == GPUFEED_ERR_NO_DEVICE && u == NULL);
    CHECK_HAS(err.message, "no CUDA device");
    CHECK_HAS(err.message, "host_fallback");
    d.host_fallback = 1;
    CHECK(gpufeed_uploader_open(&u, p.l, &d, &err) == GPUFEED_OK && u != NULL);
    if (u) {
        CHECK(gpufeed_uploader_next(u, &b) == GPUFEED_OK && b.on_device == 0 && b.data == NULL && b.host.data != NULL);
        CHECK(gpufeed_uploader_release(u, &b, NULL) == GPUFEED_OK);
        gpufeed_uploader_close(u);
    }
    close_pipe(&p);
    emu_set_devices(2);
    d.host_fallback = 0; d.device = 5;
    if (open_pipe(&p, GPUFEED_LAYOUT_ROW_MAJOR, 0, 1, 1)) { CHECK(0); return; }
    CHECK(gpufeed_uploader_open(&u, p.l, &d, &err) == GPUFEED_ERR_NO_DEVICE);
    CHECK_HAS(err.message, "no CUDA device 5 (2 present)");
    close_pipe(&p);
    snap_check(&s, "no device");
}
#endif

int main(int argc, char **argv)
{
    char why[256];
    FILE *f;
    if (argc > 1) g_path = argv[1];
    f = fopen(g_path, "rb");
    if (!f) { fprintf(stderr, "test_cuda_streams: cannot open %s (run from the repository root)\n", g_path); return 2; }
    fclose(f);
    if (!gpufeed_cuda_available(0, why, sizeof why)) {
        printf("SKIP: no GPU (%s): the stream checks need one, or the emulated runtime build\n", why);
        printf("0 passed, 0 failed\n");
        return 0;
    }
    if (cudaGetDeviceCount(&g_ndev) != cudaSuccess) g_ndev = 0;
#ifdef GF__CUDRV
    printf("gpufeed on the CUDA driver (libcuda.so.1 loaded at run time)\n");
#else
    printf("gpufeed on the CUDA runtime\n");
#endif
#ifdef GF_CUDA_EMU
    printf("runtime and driver: emulated (tests/cuda_emu.c), %d devices\n", g_ndev);
#else
    printf("runtime: CUDA, %d device(s)\n", g_ndev);
#endif
    RUN(test_held_across_the_ring);
    RUN(test_stream_row_major_2_slots);
    RUN(test_stream_per_feature_held);
    RUN(test_stream_partly_pageable);
    RUN(test_stream_wide_rows);
#if defined(GF__CUDA) && !defined(__CUDACC__)
    printf("SKIP: test_stream_resident: a runtime build by a host compiler has no gather kernel\n");
#else
    RUN(test_stream_resident);
#endif
    RUN(test_dlpack_tensors_outlive_release);
    RUN(test_dlpack_row_major_matrix);
    RUN(test_dlpack_deleter_after_close);
    RUN(test_caller_device_kept);
#ifdef GF_CUDA_EMU
    RUN(test_fail_device_alloc);
    RUN(test_fail_pinning);
    RUN(test_fail_mid_stream);
    RUN(test_no_device);
#else
    printf("SKIP: injected failures need the emulated runtime (build with tests/cuda_emu.c)\n");
#endif
    return TEST_SUMMARY();
}
