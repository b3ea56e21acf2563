/* bench_gpu.cu -- the GPU side of tools/bench/README.md for gpufeed: how well
   gpufeed keeps a (simulated) training step fed.

   Build (from the repository root; no GPU needed to build):
       nvcc -O2 -arch=sm_90 -I. tools/bench/bench_gpu.cu -o build/bench_gpu -lpthread
   add -DHAVE_RESIDENT when gpufeed.h has gpufeed_uploader_desc.resident_bytes
   (tools/bench/bench_gpu.py does: `grep -q resident_bytes gpufeed.h`).
   Usually run through `python3 tools/bench/bench_gpu.py`, which also writes the
   dataset and runs the PyTorch DataLoader reference on the same file.

   Run:
       build/bench_gpu [FILE|DIR|GLOB ...] [--batch 65536] [--steps-ms 0,1,5,20]
           [--epochs 2] [--workers N] [--cache DIR] [--columns a,b,c]
           [--configs decode,cache,resident] [--slots 3] [--copies 200]
           [--json OUT.json]
   FILE defaults to build/bench/gpu_2m_snappy.parquet; --workers defaults to
   the online cores - 1; --columns defaults to every numeric leaf (as f32);
   --cache defaults to build/bench/gpu-cache (the cache configuration only).

   What it measures, in one run:
   1. ceilings: the pinned cudaMemcpyAsync host-to-device bandwidth for one
      batch (batch rows x dense row bytes; pinned buffer, non-blocking
      stream, median of --copies copies each timed with events, after 20
      warm-up copies), and cudaDeviceProp::asyncEngineCount.
   2. the simulated training step: one kernel that checksums the whole batch
      (sum of its 32-bit words into a device counter: a batch that never
      arrived cannot look fast, and the sum over every step must equal
      epochs x the checksum of the dataset, computed once on the host with
      gpufeed_reader) and then spins on clock64() for a calibrated number
      of cycles. Calibration: events around the kernel at 0 and 2M cycles
      on a real batch give the cycles per ms; each target (0, 1, 5, 20 ms)
      is checked afterwards and the measured median is printed beside it.
   3. per configuration x step time (1 warm-up epoch, then --epochs measured
      epochs in the same stream):
        decode    gpufeed loader (N workers) + uploader (pinned slots, its own
                  copy stream); the trainer's stream waits on the batch's
                  event (gpufeed_device_batch_wait), runs the step, releases
                  the slot (gpufeed_uploader_release)
        cache     the same with the tensor cache in --cache DIR, built by a
                  warm-up epoch before the timed run (loader with desc.cache,
                  drained on the host)
        resident  the same with gpufeed_uploader_desc.resident_bytes = half the
                  free device memory (only with -DHAVE_RESIDENT)
      figures over the measured epochs:
        steps/s, samples/s over the event window (start of the first
        measured step kernel .. end of the last);
        busy = sum of step-kernel times / event window (cudaEvent timing
        around every step kernel);
        stall p50/p95 = host time inside gpufeed_uploader_next per step
        (includes waiting for a free slot, i.e. for the GPU, when the step
        is the bottleneck);
        gap p50/p95 = GPU idle time between consecutive step kernels (end of
        step i .. start of step i+1, from the events): the stall the GPU sees;
        feed GB/s = batch bytes delivered / event window, and its % of the
        pinned ceiling (meaningful as "H2D achieved" at step 0 ms, where the
        feed is the bottleneck; resident batches do not cross PCIe);
        CPU s/batch = getrusage(RUSAGE_SELF) user+sys (every thread) over
        the measured steps / measured steps.
   Prints the ceilings, the calibration and a markdown table; --json writes
   the same rows for tools/bench/bench_gpu.py. Without a usable GPU it prints
   "no GPU: nothing measured (<reason>)" and exits 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>

#define GPUFEED_IMPLEMENTATION
#include "gpufeed.h"

#define CK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
    fprintf(stderr, "bench_gpu: %s failed: %s (%s:%d)\n", #call, cudaGetErrorString(e_), __FILE__, __LINE__); exit(1); } } while (0)

#define MAX_PATHS 64
#define MAX_COLS 1024
#define MAX_STEPS_MS 16

/* ---- options ------------------------------------------------------------- */

struct opts {
    const char *paths[MAX_PATHS];
    int npaths;
    int64_t batch;
    double steps_ms[MAX_STEPS_MS];
    int nsteps_ms;
    int64_t epochs;
    int workers;
    int slots;
    int copies;
    const char *cache_dir;
    char *columns;                     /* comma list (owned) or NULL */
    int do_decode, do_cache, do_resident;
    const char *json;
};

static void usage(void)
{
    fprintf(stderr,
            "usage: bench_gpu [FILE|DIR|GLOB ...] [--batch N] [--steps-ms 0,1,5,20] [--epochs E]\n"
            "                 [--workers N] [--cache DIR] [--columns a,b,c] [--configs decode,cache,resident]\n"
            "                 [--slots S] [--copies C] [--json OUT]\n");
}

static int parse_opts(int argc, char **argv, opts *o)
{
    int i;
    long nc = sysconf(_SC_NPROCESSORS_ONLN);
    memset(o, 0, sizeof *o);
    o->batch = 65536;
    o->steps_ms[0] = 0; o->steps_ms[1] = 1; o->steps_ms[2] = 5; o->steps_ms[3] = 20; o->nsteps_ms = 4;
    o->epochs = 2;
    o->workers = nc > 1 ? (int)nc - 1 : 1;
    o->slots = 3;
    o->copies = 200;
    o->cache_dir = "build/bench/gpu-cache";
    o->do_decode = o->do_cache = o->do_resident = 1;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (a[0] != '-' || a[1] != '-') {
            if (o->npaths >= MAX_PATHS) { fprintf(stderr, "bench_gpu: too many paths\n"); return -1; }
            o->paths[o->npaths++] = a;
            continue;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(); exit(0); }
        if (!strstr(" --batch --epochs --workers --slots --copies --cache --json --columns --steps-ms --configs ", a) || strchr(a, ' ')) {
            fprintf(stderr, "bench_gpu: unknown option %s\n", a); usage(); return -1;
        }
        if (!v) { fprintf(stderr, "bench_gpu: %s needs a value\n", a); usage(); return -1; }
        i++;
        if (!strcmp(a, "--batch")) o->batch = strtoll(v, NULL, 10);
        else if (!strcmp(a, "--epochs")) o->epochs = strtoll(v, NULL, 10);
        else if (!strcmp(a, "--workers")) o->workers = atoi(v);
        else if (!strcmp(a, "--slots")) o->slots = atoi(v);
        else if (!strcmp(a, "--copies")) o->copies = atoi(v);
        else if (!strcmp(a, "--cache")) o->cache_dir = v;
        else if (!strcmp(a, "--json")) o->json = v;
        else if (!strcmp(a, "--columns")) { free(o->columns); o->columns = strdup(v); }
        else if (!strcmp(a, "--steps-ms")) {
            const char *p = v;
            o->nsteps_ms = 0;
            while (*p && o->nsteps_ms < MAX_STEPS_MS) {
                char *end;
                double d = strtod(p, &end);
                if (end == p || d < 0) { fprintf(stderr, "bench_gpu: bad --steps-ms %s\n", v); return -1; }
                o->steps_ms[o->nsteps_ms++] = d;
                p = *end == ',' ? end + 1 : end;
                if (*end && *end != ',') { fprintf(stderr, "bench_gpu: bad --steps-ms %s\n", v); return -1; }
            }
        } else if (!strcmp(a, "--configs")) {
            o->do_decode = strstr(v, "decode") != NULL;
            o->do_cache = strstr(v, "cache") != NULL;
            o->do_resident = strstr(v, "resident") != NULL;
        } else { fprintf(stderr, "bench_gpu: unknown option %s\n", a); usage(); return -1; }
    }
    if (o->npaths == 0) o->paths[o->npaths++] = "build/bench/gpu_2m_snappy.parquet";
    if (o->batch < 1 || o->epochs < 1 || o->workers < 1 || o->slots < 2 || o->slots > 16 || o->copies < 1 || o->nsteps_ms < 1) {
        fprintf(stderr, "bench_gpu: bad option value (batch >= 1, epochs >= 1, workers >= 1, slots 2..16, copies >= 1)\n");
        return -1;
    }
    return 0;
}

/* ---- small helpers ------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* q-quantile (nearest rank) of v[0..n) (sorts v) */
static double quantile(double *v, size_t n, double q)
{
    size_t k;
    if (n == 0) return 0.0;
    qsort(v, n, sizeof *v, cmp_double);
    k = (size_t)ceil(q * (double)n);
    if (k < 1) k = 1;
    if (k > n) k = n;
    return v[k - 1];
}

/* ---- the simulated step -------------------------------------------------- */

/* Sums the batch's 32-bit words into *sum, then spins `cycles` SM clocks
   (thread 0 of every block, so the kernel lasts ~ checksum + spin). */
__global__ void k_step(const uint32_t *p, size_t n, long long cycles, unsigned long long *sum)
{
    __shared__ unsigned long long s[32];
    unsigned long long acc = 0;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x, stride = (size_t)gridDim.x * blockDim.x;
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, o;
    for (; i < n; i += stride) acc += p[i];
    for (o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    if (lane == 0) s[w] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long t = 0;
        int k;
        for (k = 0; k < (int)(blockDim.x >> 5); k++) t += s[k];
        if (t) atomicAdd(sum, t);
        if (cycles > 0) {
            long long t0 = clock64();
            while (clock64() - t0 < cycles) { }
        }
    }
}

struct stepper {
    unsigned grid, block;
    unsigned long long *d_sum;
    double cycles_per_ms;              /* calibrated */
    double base_ms;                    /* checksum-only kernel on a full batch */
};

static void launch_step(const stepper *sp, const void *data, size_t bytes, long long cycles, cudaStream_t st)
{
    k_step<<<sp->grid, sp->block, 0, st>>>((const uint32_t *)data, bytes / 4, cycles, sp->d_sum);
}

/* median kernel time (ms) at `cycles` on a device buffer of `bytes` */
static double time_step(const stepper *sp, const void *buf, size_t bytes, long long cycles, cudaStream_t st, int reps)
{
    cudaEvent_t a, b;
    double v[64];
    int i;
    if (reps > 64) reps = 64;
    CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    launch_step(sp, buf, bytes, cycles, st);     /* warm */
    for (i = 0; i < reps; i++) {
        float ms = 0;
        CK(cudaEventRecord(a, st));
        launch_step(sp, buf, bytes, cycles, st);
        CK(cudaEventRecord(b, st));
        CK(cudaEventSynchronize(b));
        CK(cudaEventElapsedTime(&ms, a, b));
        v[i] = ms;
    }
    CK(cudaGetLastError());
    CK(cudaEventDestroy(a)); CK(cudaEventDestroy(b));
    return quantile(v, (size_t)reps, 0.5);
}

static long long cycles_for(const stepper *sp, double ms)
{
    double c;
    if (ms <= 0) return 0;
    c = (ms - sp->base_ms) * sp->cycles_per_ms;
    return c > 0 ? (long long)c : 0;
}

static void calibrate(stepper *sp, const void *buf, size_t bytes, cudaStream_t st)
{
    const long long c1 = 2000000, c2 = 20000000;
    double t1, t2;
    sp->base_ms = time_step(sp, buf, bytes, 0, st, 21);
    t1 = time_step(sp, buf, bytes, c1, st, 9);
    t2 = time_step(sp, buf, bytes, c2, st, 5);
    sp->cycles_per_ms = t2 > t1 ? (double)(c2 - c1) / (t2 - t1) : 1e6;
}

/* ---- figures --------------------------------------------------------------- */

struct result {
    char config[32];
    double step_target_ms, step_measured_ms;
    int64_t steps, rows;
    double window_s, steps_per_s, samples_per_s, busy;
    double stall_p50_ms, stall_p95_ms, gap_p50_ms, gap_p95_ms;
    double feed_gbs, feed_pct;
    double cpu_per_batch_s;
    int checksum_ok;
    char note[160];
};

static void print_row(const result *r)
{
    printf("| %s | %g | %.2f | %.1f | %.0f | %.1f%% | %.3f / %.3f | %.3f / %.3f | %.2f (%.0f%%) | %.4f | %s%s%s |\n",
           r->config, r->step_target_ms, r->step_measured_ms, r->steps_per_s, r->samples_per_s, 100.0 * r->busy,
           r->stall_p50_ms, r->stall_p95_ms, r->gap_p50_ms, r->gap_p95_ms, r->feed_gbs, r->feed_pct, r->cpu_per_batch_s,
           r->checksum_ok ? "ok" : "MISMATCH", r->note[0] ? "; " : "", r->note);
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') { fputc('\\', f); fputc(*s, f); }
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", (unsigned)(unsigned char)*s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

/* ---- the runs -------------------------------------------------------------- */

struct ctx {
    const opts *o;
    gpufeed_dataset *ds;
    gpufeed_dataset_info info;
    stepper sp;
    cudaStream_t st;
    double ceiling_gbs;
    unsigned long long epoch_sum;      /* checksum of one epoch (host) */
    uint64_t free_mem;
};

static int open_dataset(const opts *o, gpufeed_dataset **ds, gpufeed_feature **fts_out)
{
    gpufeed_dataset_desc dd;
    gpufeed_error err;
    gpufeed_feature *ft = NULL;
    int nf = 0;
    memset(&dd, 0, sizeof dd);
    if (o->columns) {
        char *p = o->columns, *q;
        ft = (gpufeed_feature *)calloc(MAX_COLS, sizeof *ft);
        if (!ft) { fprintf(stderr, "bench_gpu: out of memory\n"); return -1; }
        while (p && *p && nf < MAX_COLS) {
            q = strchr(p, ',');
            if (q) *q++ = 0;
            if (*p) { ft[nf].column = p; ft[nf].dtype = GPUFEED_DT_F32; ft[nf].null_policy = GPUFEED_NULL_FILL; nf++; }
            p = q;
        }
        dd.features = ft; dd.num_features = nf;
    }
    dd.paths = o->paths; dd.num_paths = o->npaths;
    dd.layout = GPUFEED_LAYOUT_ROW_MAJOR;
    if (gpufeed_dataset_open(ds, &dd, &err)) { fprintf(stderr, "bench_gpu: %s\n", err.message); free(ft); return -1; }
    *fts_out = ft;
    return 0;
}

/* checksum of one epoch: sum of the 32-bit words of every dense row */
static int host_epoch_sum(ctx *c)
{
    gpufeed_reader *r;
    gpufeed_reader_desc rd;
    gpufeed_batch b;
    gpufeed_error err;
    gpufeed_result res;
    unsigned long long s = 0;
    memset(&rd, 0, sizeof rd);
    rd.batch_rows = c->o->batch;
    if (gpufeed_reader_open(&r, c->ds, &rd, &err)) { fprintf(stderr, "bench_gpu: %s\n", err.message); return -1; }
    while ((res = gpufeed_reader_next(r, &b)) == GPUFEED_OK) {
        const uint32_t *p = (const uint32_t *)b.data;
        size_t n = (size_t)(b.num_rows * b.row_bytes) / 4, i;
        for (i = 0; i < n; i++) s += p[i];
    }
    if (res != GPUFEED_DONE) { fprintf(stderr, "bench_gpu: %s\n", gpufeed_reader_error(r)); gpufeed_reader_close(r); return -1; }
    gpufeed_reader_close(r);
    c->epoch_sum = s;
    return 0;
}

/* pinned H2D ceiling for one batch: median of o->copies copies */
static double h2d_ceiling(ctx *c, size_t bytes, double *p95_gbs)
{
    void *h, *d;
    cudaStream_t st;
    cudaEvent_t a, b;
    double *v;
    int i, n = c->o->copies;
    CK(cudaHostAlloc(&h, bytes, cudaHostAllocDefault));
    CK(cudaMalloc(&d, bytes));
    memset(h, 0x5A, bytes);
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    v = (double *)malloc((size_t)n * sizeof *v);
    if (!v) { fprintf(stderr, "bench_gpu: out of memory\n"); exit(1); }
    for (i = 0; i < 20; i++) CK(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, st));
    CK(cudaStreamSynchronize(st));
    for (i = 0; i < n; i++) {
        float ms = 0;
        CK(cudaEventRecord(a, st));
        CK(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, st));
        CK(cudaEventRecord(b, st));
        CK(cudaEventSynchronize(b));
        CK(cudaEventElapsedTime(&ms, a, b));
        v[i] = (double)bytes / (ms * 1e-3) / 1e9;
    }
    {
        double med = quantile(v, (size_t)n, 0.5);
        *p95_gbs = quantile(v, (size_t)n, 0.05);   /* the slow 5% */
        free(v);
        CK(cudaEventDestroy(a)); CK(cudaEventDestroy(b));
        CK(cudaStreamDestroy(st));
        CK(cudaFree(d)); CK(cudaFreeHost(h));
        return med;
    }
}

static void cache_log(void *user, const char *msg) { (void)user; fprintf(stderr, "bench_gpu: cache: %s\n", msg); }

/* the cache configuration's warm-up: one epoch through a loader with the
   cache builds it; if it is still not valid after that, gpufeed_cache_build */
static int build_cache(ctx *c, const gpufeed_cache_desc *cd)
{
    gpufeed_loader *l;
    gpufeed_loader_desc ld;
    gpufeed_batch b;
    gpufeed_error err;
    gpufeed_cache_info ci;
    gpufeed_result r;
    double t0 = now_s();
    mkdir(cd->dir, 0777);
    memset(&ci, 0, sizeof ci);
    if (gpufeed_cache_get_info(c->ds, cd, &ci, &err) == GPUFEED_OK && ci.exists && ci.valid) {
        printf("cache: %s already built (%llu bytes)\n", ci.path, (unsigned long long)ci.bytes);
        return 0;
    }
    memset(&ld, 0, sizeof ld);
    ld.batch_rows = c->o->batch; ld.workers = c->o->workers; ld.epochs = 1; ld.cache = cd;
    if (gpufeed_loader_open(&l, c->ds, &ld, &err)) { fprintf(stderr, "bench_gpu: cache warm-up: %s\n", err.message); return -1; }
    while ((r = gpufeed_loader_next(l, &b)) == GPUFEED_OK) { }
    if (r != GPUFEED_DONE) { fprintf(stderr, "bench_gpu: cache warm-up: %s\n", gpufeed_loader_error(l)); gpufeed_loader_close(l); return -1; }
    gpufeed_loader_close(l);
    memset(&ci, 0, sizeof ci);
    if (gpufeed_cache_get_info(c->ds, cd, &ci, &err) != GPUFEED_OK || !ci.exists || !ci.valid) {
        printf("cache: not valid after the warm-up epoch (%s): gpufeed_cache_build\n", ci.reason[0] ? ci.reason : err.message);
        if (gpufeed_cache_build(c->ds, cd, c->o->workers, NULL, NULL, &err)) { fprintf(stderr, "bench_gpu: cache build: %s\n", err.message); return -1; }
        gpufeed_cache_get_info(c->ds, cd, &ci, &err);
    }
    printf("cache: %s built in %.2f s (warm-up epoch, %d workers), %llu bytes\n", ci.path, now_s() - t0, c->o->workers,
           (unsigned long long)ci.bytes);
    return 0;
}

/* one configuration at one step time */
static int run_config(ctx *c, const char *name, double step_ms, double step_measured, const gpufeed_cache_desc *cd,
                      int resident, result *res)
{
    const opts *o = c->o;
    const int64_t warm_epochs = 1;
    gpufeed_loader *l;
    gpufeed_uploader *u;
    gpufeed_loader_desc ld;
    gpufeed_uploader_desc dd;
    gpufeed_device_batch b;
    gpufeed_error err;
    gpufeed_result r;
    gpufeed_stats gst;
    int64_t per_epoch, max_steps, k = 0, measured = 0, first_measured = -1, rows = 0;
    cudaEvent_t *ev_a, *ev_b;
    double *stall, *gap, *busy_ms, cpu0 = 0, cpu1, sum_ms = 0, window_ms = 0;
    long long cycles = cycles_for(&c->sp, step_ms);
    unsigned long long dsum = 0, zero = 0;
    uint64_t bytes = 0;
    int64_t n_resident = 0;

    memset(res, 0, sizeof *res);
    snprintf(res->config, sizeof res->config, "%s", name);
    res->step_target_ms = step_ms;
    res->step_measured_ms = step_measured;

    memset(&ld, 0, sizeof ld);
    ld.batch_rows = o->batch; ld.workers = o->workers; ld.seed = 1234; ld.epochs = warm_epochs + o->epochs;
    ld.cache = cd;
    if (gpufeed_loader_open(&l, c->ds, &ld, &err)) { fprintf(stderr, "bench_gpu: %s: %s\n", name, err.message); return -1; }
    memset(&dd, 0, sizeof dd);
    dd.device = 0; dd.slots = o->slots; dd.host_fallback = 0;
#ifdef HAVE_RESIDENT
    if (resident) dd.resident_bytes = c->free_mem / 2;
#else
    (void)resident;
#endif
    if (gpufeed_uploader_open(&u, l, &dd, &err)) {
        fprintf(stderr, "bench_gpu: %s: %s\n", name, err.message);
        gpufeed_loader_close(l);
        return -1;
    }
    per_epoch = gpufeed_loader_epoch_batches(l, 0);
    max_steps = per_epoch * (warm_epochs + o->epochs) + 8;
    ev_a = (cudaEvent_t *)calloc((size_t)max_steps, sizeof *ev_a);
    ev_b = (cudaEvent_t *)calloc((size_t)max_steps, sizeof *ev_b);
    stall = (double *)calloc((size_t)max_steps, sizeof *stall);
    gap = (double *)calloc((size_t)max_steps, sizeof *gap);
    busy_ms = (double *)calloc((size_t)max_steps, sizeof *busy_ms);
    if (!ev_a || !ev_b || !stall || !gap || !busy_ms) { fprintf(stderr, "bench_gpu: out of memory\n"); exit(1); }
    CK(cudaMemcpy(c->sp.d_sum, &zero, sizeof zero, cudaMemcpyHostToDevice));

    for (;;) {
        double t0 = now_s(), t1;
        int is_measured;
        r = gpufeed_uploader_next(u, &b);
        t1 = now_s();
        if (r == GPUFEED_DONE) break;
        if (r != GPUFEED_OK) { fprintf(stderr, "bench_gpu: %s: %s\n", name, gpufeed_uploader_error(u)); return -1; }
        if (k >= max_steps) { fprintf(stderr, "bench_gpu: %s: more batches than expected\n", name); return -1; }
        if (!b.on_device) { fprintf(stderr, "bench_gpu: %s: the uploader handed out a host batch\n", name); return -1; }
        is_measured = b.host.epoch >= warm_epochs;
        if (is_measured && first_measured < 0) {
            /* first measured batch: CPU clock starts here (before its next()
               would be better, but this batch's next() is counted as stall) */
            first_measured = k;
            cpu0 = cpu_s();
        }
        if (is_measured) {
            stall[measured] = (t1 - t0) * 1e3;
            rows += b.host.num_rows;
            bytes += (uint64_t)(b.host.num_rows * c->info.row_bytes);
#ifdef HAVE_RESIDENT
            if (b.resident) n_resident++;
#endif
        }
        CK(cudaEventCreate(&ev_a[k])); CK(cudaEventCreate(&ev_b[k]));
        if (gpufeed_device_batch_wait(&b, c->st)) { fprintf(stderr, "bench_gpu: %s: batch wait failed\n", name); return -1; }
        CK(cudaEventRecord(ev_a[k], c->st));
        launch_step(&c->sp, b.data, (size_t)(b.host.num_rows * c->info.row_bytes), cycles, c->st);
        CK(cudaEventRecord(ev_b[k], c->st));
        if (gpufeed_uploader_release(u, &b, c->st)) { fprintf(stderr, "bench_gpu: %s: release: %s\n", name, gpufeed_uploader_error(u)); return -1; }
        if (is_measured) measured++;
        k++;
    }
    CK(cudaStreamSynchronize(c->st));
    CK(cudaGetLastError());
    cpu1 = cpu_s();
    gpufeed_loader_stats(l, &gst);
    CK(cudaMemcpy(&dsum, c->sp.d_sum, sizeof dsum, cudaMemcpyDeviceToHost));

    if (measured > 0) {
        int64_t i, last = first_measured + measured - 1;
        float ms;
        for (i = first_measured; i <= last; i++) {
            CK(cudaEventElapsedTime(&ms, ev_a[i], ev_b[i]));
            busy_ms[i - first_measured] = ms;
            sum_ms += ms;
            if (i < last) { CK(cudaEventElapsedTime(&ms, ev_b[i], ev_a[i + 1])); gap[i - first_measured] = ms; }
        }
        CK(cudaEventElapsedTime(&ms, ev_a[first_measured], ev_b[last]));
        window_ms = ms;
    }
    res->steps = measured;
    res->rows = rows;
    res->window_s = window_ms * 1e-3;
    res->busy = window_ms > 0 ? sum_ms / window_ms : 0.0;
    res->steps_per_s = res->window_s > 0 ? (double)measured / res->window_s : 0.0;
    res->samples_per_s = res->window_s > 0 ? (double)rows / res->window_s : 0.0;
    res->stall_p50_ms = quantile(stall, (size_t)measured, 0.5);
    res->stall_p95_ms = quantile(stall, (size_t)measured, 0.95);
    res->gap_p50_ms = quantile(gap, measured > 1 ? (size_t)(measured - 1) : 0, 0.5);
    res->gap_p95_ms = quantile(gap, measured > 1 ? (size_t)(measured - 1) : 0, 0.95);
    res->feed_gbs = res->window_s > 0 ? (double)bytes / res->window_s / 1e9 : 0.0;
    res->feed_pct = c->ceiling_gbs > 0 ? 100.0 * res->feed_gbs / c->ceiling_gbs : 0.0;
    res->cpu_per_batch_s = measured > 0 ? (cpu1 - cpu0) / (double)measured : 0.0;
    res->checksum_ok = dsum == c->epoch_sum * (unsigned long long)(warm_epochs + o->epochs);
    if (cd) snprintf(res->note, sizeof res->note, "cache %s, %llu units from it",
                     gst.cache_state == GPUFEED_CACHE_READY ? "ready" : gst.cache_state == GPUFEED_CACHE_BUILDING ? "building" : "off",
                     (unsigned long long)gst.units_from_cache);
    if (resident) snprintf(res->note, sizeof res->note, "resident_bytes %.1f GiB, %lld of %lld measured batches gathered on the device (no PCIe)",
                           (double)(c->free_mem / 2) / (1u << 30), (long long)n_resident, (long long)measured);
    if (!res->checksum_ok)
        fprintf(stderr, "bench_gpu: %s at %g ms: device checksum %llu != %lld epochs x %llu: batches did not arrive intact\n", name,
                step_ms, dsum, (long long)(warm_epochs + o->epochs), c->epoch_sum);

    for (k = 0; k < max_steps; k++) {
        if (ev_a[k]) cudaEventDestroy(ev_a[k]);
        if (ev_b[k]) cudaEventDestroy(ev_b[k]);
    }
    free(ev_a); free(ev_b); free(stall); free(gap); free(busy_ms);
    gpufeed_uploader_close(u);
    gpufeed_loader_close(l);
    return 0;
}

int main(int argc, char **argv)
{
    opts o;
    ctx c;
    char why[256];
    cudaDeviceProp prop;
    gpufeed_feature *ft = NULL;
    gpufeed_cache_desc cd;
    result *res;
    int nres = 0, i, j, ok = 1;
    size_t batch_bytes;
    double measured_ms[MAX_STEPS_MS], ceil_p5 = 0;
    void *dbuf;
    int have_resident =
#ifdef HAVE_RESIDENT
        1;
#else
        0;
#endif

    if (parse_opts(argc, argv, &o)) return 2;
    if (!gpufeed_cuda_available(0, why, sizeof why)) {
        printf("no GPU: nothing measured (%s)\n", why);
        return 0;
    }
    memset(&c, 0, sizeof c);
    c.o = &o;
    CK(cudaSetDevice(0));
    CK(cudaGetDeviceProperties(&prop, 0));
    {
        size_t fr = 0, tot = 0;
        CK(cudaMemGetInfo(&fr, &tot));
        c.free_mem = fr;
    }
    if (open_dataset(&o, &c.ds, &ft)) return 1;
    gpufeed_dataset_get_info(c.ds, &c.info);
    if (c.info.row_bytes % 4) { fprintf(stderr, "bench_gpu: dense rows of %lld bytes: the checksum needs whole 32-bit words (f32 columns)\n", (long long)c.info.row_bytes); return 1; }
    batch_bytes = (size_t)(o.batch * c.info.row_bytes);

    printf("# bench_gpu\n\n");
    printf("device 0: %s (sm_%d%d, %d SMs, %.1f GiB), copy engines (asyncEngineCount): %d\n", prop.name, prop.major, prop.minor,
           prop.multiProcessorCount, (double)prop.totalGlobalMem / (1u << 30), prop.asyncEngineCount);
    printf("dataset: %d file(s), %lld rows, %d features, %lld bytes per dense row, %lld units; batch %lld rows = %.2f MiB\n",
           c.info.num_files, (long long)c.info.num_rows, c.info.num_features, (long long)c.info.row_bytes,
           (long long)c.info.num_units, (long long)o.batch, (double)batch_bytes / (1 << 20));
    printf("loader: %d workers, %d uploader slots; 1 warm-up epoch + %lld measured epochs per row\n", o.workers, o.slots,
           (long long)o.epochs);

    if (host_epoch_sum(&c)) return 1;
    c.ceiling_gbs = h2d_ceiling(&c, batch_bytes, &ceil_p5);
    printf("H2D ceiling (pinned cudaMemcpyAsync, %.2f MiB, non-blocking stream, median of %d): %.2f GB/s (5th percentile %.2f GB/s)\n",
           (double)batch_bytes / (1 << 20), o.copies, c.ceiling_gbs, ceil_p5);

    /* the step kernel, calibrated on a device batch of real size */
    CK(cudaStreamCreateWithFlags(&c.st, cudaStreamNonBlocking));
    CK(cudaMalloc(&c.sp.d_sum, sizeof(unsigned long long)));
    c.sp.block = 256;
    c.sp.grid = (unsigned)prop.multiProcessorCount * 4;
    CK(cudaMalloc(&dbuf, batch_bytes));
    CK(cudaMemset(dbuf, 1, batch_bytes));
    calibrate(&c.sp, dbuf, batch_bytes, c.st);
    printf("step kernel: checksum-only %.3f ms on one batch; %.0f clock64 cycles per ms\n", c.sp.base_ms, c.sp.cycles_per_ms);
    printf("step calibration (target -> measured median):");
    for (i = 0; i < o.nsteps_ms; i++) {
        measured_ms[i] = time_step(&c.sp, dbuf, batch_bytes, cycles_for(&c.sp, o.steps_ms[i]), c.st, o.steps_ms[i] >= 10 ? 5 : 11);
        printf(" %g -> %.3f ms%s", o.steps_ms[i], measured_ms[i], i + 1 < o.nsteps_ms ? "," : "\n");
    }
    CK(cudaFree(dbuf));
    if (o.do_resident && !have_resident)
        printf("device-resident: skipped (built without -DHAVE_RESIDENT: gpufeed.h has no gpufeed_uploader_desc.resident_bytes)\n");

    memset(&cd, 0, sizeof cd);
    cd.dir = o.cache_dir;
    cd.log = cache_log;
    if (o.do_cache && build_cache(&c, &cd)) return 1;

    res = (result *)calloc((size_t)o.nsteps_ms * 3, sizeof *res);
    if (!res) { fprintf(stderr, "bench_gpu: out of memory\n"); return 1; }
    for (i = 0; i < o.nsteps_ms; i++) {
        for (j = 0; j < 3; j++) {
            const char *names[3] = { "gpufeed decode", "gpufeed cache", "gpufeed resident" };
            if (j == 0 && !o.do_decode) continue;
            if (j == 1 && !o.do_cache) continue;
            if (j == 2 && (!o.do_resident || !have_resident)) continue;
            if (run_config(&c, names[j], o.steps_ms[i], measured_ms[i], j == 1 ? &cd : NULL, j == 2, &res[nres])) return 1;
            fprintf(stderr, "bench_gpu: %s, step %g ms: %.0f samples/s, busy %.1f%%\n", names[j], o.steps_ms[i],
                    res[nres].samples_per_s, 100 * res[nres].busy);
            if (!res[nres].checksum_ok) ok = 0;
            nres++;
        }
    }

    printf("\n| configuration | step ms | step ms measured | steps/s | samples/s | GPU busy | stall p50 / p95 ms | GPU gap p50 / p95 ms | feed GB/s (%% of H2D ceiling %.1f) | CPU s/batch | checksum |\n",
           c.ceiling_gbs);
    printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (i = 0; i < nres; i++) print_row(&res[i]);
    printf("\nbusy = sum of step-kernel times / event window; stall = host time in gpufeed_uploader_next; GPU gap = idle time between step kernels; "
           "CPU s/batch = process user+sys over the measured steps.\n");

    if (o.json) {
        FILE *f = fopen(o.json, "w");
        if (!f) { fprintf(stderr, "bench_gpu: cannot write %s\n", o.json); return 1; }
        fprintf(f, "{\"device\": ");
        json_str(f, prop.name);
        fprintf(f, ", \"copy_engines\": %d, \"ceiling_gbs\": %.6f, \"batch_rows\": %lld, \"batch_bytes\": %llu, \"row_bytes\": %lld, "
                   "\"num_rows\": %lld, \"workers\": %d, \"epochs\": %lld, \"epoch_checksum\": %llu, \"resident_built\": %d, \"rows\": [",
                prop.asyncEngineCount, c.ceiling_gbs, (long long)o.batch, (unsigned long long)batch_bytes, (long long)c.info.row_bytes,
                (long long)c.info.num_rows, o.workers, (long long)o.epochs, c.epoch_sum, have_resident);
        for (i = 0; i < nres; i++) {
            const result *r = &res[i];
            fprintf(f, "%s\n  {\"config\": ", i ? "," : "");
            json_str(f, r->config);
            fprintf(f, ", \"step_ms\": %g, \"step_measured_ms\": %.6f, \"steps\": %lld, \"rows\": %lld, \"window_s\": %.6f, "
                       "\"steps_per_s\": %.6f, \"samples_per_s\": %.3f, \"busy\": %.6f, \"stall_p50_ms\": %.6f, \"stall_p95_ms\": %.6f, "
                       "\"gap_p50_ms\": %.6f, \"gap_p95_ms\": %.6f, \"h2d_gbs\": %.6f, \"h2d_pct\": %.3f, \"cpu_per_batch_s\": %.6f, "
                       "\"checksum_ok\": %s, \"note\": ",
                    r->step_target_ms, r->step_measured_ms, (long long)r->steps, (long long)r->rows, r->window_s, r->steps_per_s,
                    r->samples_per_s, r->busy, r->stall_p50_ms, r->stall_p95_ms, r->gap_p50_ms, r->gap_p95_ms, r->feed_gbs,
                    r->feed_pct, r->cpu_per_batch_s, r->checksum_ok ? "true" : "false");
            json_str(f, r->note);
            fputc('}', f);
        }
        fprintf(f, "\n]}\n");
        fclose(f);
    }

    free(res);
    CK(cudaFree(c.sp.d_sum));
    CK(cudaStreamDestroy(c.st));
    gpufeed_dataset_close(c.ds);
    free(ft);
    free(o.columns);
    if (!ok) { fprintf(stderr, "bench_gpu: checksum mismatch (see above)\n"); return 1; }
    return 0;
}
