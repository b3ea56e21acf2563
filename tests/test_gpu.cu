/* test_gpu.cu -- the CUDA uploader on a real device.

   Build and run from the repository root (H100 / H200: sm_90):
       nvcc -O2 -arch=sm_90 -I. tests/test_gpu.cu -o build/test_gpu -lpthread
       build/test_gpu [PARQUET]              (default examples/data/flights.parquet)
   tests/gpu_check.sh builds it and also runs it under compute-sanitizer
   (GPUFEED_TEST_NO_TIMING=1 there: the timing check only reports).

   Without a usable device every check prints "SKIP: no GPU (<reason>) ..."
   and the program ends with "0 passed, 0 failed" (exit 0).

   (a) device bytes == host path: every batch's device buffers, copied back
       on the trainer's stream after gpufeed_device_batch_wait, hash equal
       to a plain loader's stream (gpufeed_batch_hash) for 3 epochs, 2
       workers, shuffled, row-major and per-feature layouts, validity masks.
   (b) slot reuse: a trainer stream sleeps ~2 ms in a kernel, then
       checksums its batch on the device, then the batch is released; the
       host never synchronises and the loader is fast, 3 slots: every device
       checksum equals the one of the host slot at next(), so no slot was
       overwritten while the trainer still read it.
   (c) two uploaders on device 0 (interleaved, different seeds and layouts)
       are independent; with a second device, one uploader on each.
   (d) the host does not block in steady state: with a 1 ms step kernel and
       a trainer that synchronises each step, the time spent inside
       gpufeed_uploader_next over the wall time is reported (checked < 25%);
       with an asynchronous trainer the GPU busy fraction is reported. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>
#include <algorithm>
#include <sys/time.h>

#define GPUFEED_IMPLEMENTATION
#include "gpufeed.h"
#include "gf_test.h"

static const char *g_path = "examples/data/flights.parquet";
static int g_timing = 1;
static int g_ndev = 0;

#define CK(call) do { cudaError_t e_ = (call); CHECK_MSG(e_ == cudaSuccess, "%s: %s", #call, cudaGetErrorString(e_)); } while (0)

static double now_s(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

/* ---- kernels ------------------------------------------------------------- */

__device__ __forceinline__ unsigned long long gt_now(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* one thread sleeps `ns` nanoseconds (globaltimer, __nanosleep steps) */
__global__ void k_sleep(unsigned long long ns)
{
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        unsigned long long t0 = gt_now();
        while (gt_now() - t0 < ns) __nanosleep(2000);
    }
}

__host__ __device__ __forceinline__ unsigned long long ck_weight(unsigned long long i, unsigned long long salt)
{
    unsigned long long x = (i + 1) * 0x9E3779B97F4A7C15ull ^ (salt * 0xBF58476D1CE4E5B9ull);
    x ^= x >> 29;
    return x | 1;
}

/* position-weighted byte sum (mod 2^64): order of summation does not matter */
__global__ void k_cksum(const unsigned char *p, unsigned long long n, unsigned long long salt, unsigned long long *out)
{
    unsigned long long acc = 0, i;
    for (i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n; i += (unsigned long long)gridDim.x * blockDim.x)
        acc += (unsigned long long)(p[i] + 1u) * ck_weight(i, salt);
    atomicAdd(out, acc);
}

static unsigned long long host_cksum(const void *p, unsigned long long n, unsigned long long salt)
{
    const unsigned char *c = (const unsigned char *)p;
    unsigned long long acc = 0, i;
    for (i = 0; i < n; i++) acc += (unsigned long long)(c[i] + 1u) * ck_weight(i, salt);
    return acc;
}

/* ---- pipelines ----------------------------------------------------------- */

#define NF 4
struct pipe_t { gpufeed_dataset *ds; gpufeed_loader *l; };

static int open_pipe(pipe_t *p, int layout, uint64_t seed, int64_t epochs, int64_t batch_rows)
{
    const char *paths[1] = { g_path };
    gpufeed_feature ft[NF];
    gpufeed_dataset_desc dd;
    gpufeed_loader_desc ld;
    gpufeed_error err;
    memset(ft, 0, sizeof ft); memset(&dd, 0, sizeof dd); memset(&ld, 0, sizeof ld);
    p->ds = NULL; p->l = NULL;
    ft[0].column = "dep_delay"; ft[0].dtype = GPUFEED_DT_F32; ft[0].validity = 1;
    ft[1].column = "distance"; ft[1].dtype = GPUFEED_DT_F64;
    ft[2].column = "carrier"; ft[2].dtype = GPUFEED_DT_I32; ft[2].hash_buckets = 97; ft[2].validity = 1;
    ft[3].column = "month"; ft[3].dtype = GPUFEED_DT_U8;
    dd.paths = paths; dd.num_paths = 1; dd.features = ft; dd.num_features = NF;
    dd.layout = layout; dd.unit_rows = 32768;
    if (gpufeed_dataset_open(&p->ds, &dd, &err)) { fprintf(stderr, "  dataset: %s\n", err.message); return -1; }
    ld.batch_rows = batch_rows; ld.workers = 2; ld.seed = seed; ld.shuffle_window = 2; ld.epochs = epochs;
    if (gpufeed_loader_open(&p->l, p->ds, &ld, &err)) {
        fprintf(stderr, "  loader: %s\n", err.message);
        gpufeed_dataset_close(p->ds); p->ds = NULL; return -1;
    }
    return 0;
}

static void close_pipe(pipe_t *p)
{
    gpufeed_loader_close(p->l); gpufeed_dataset_close(p->ds);
    p->l = NULL; p->ds = NULL;
}

static std::vector<uint64_t> reference(int layout, uint64_t seed, int64_t epochs, int64_t batch_rows)
{
    std::vector<uint64_t> h;
    pipe_t p;
    gpufeed_batch b;
    gpufeed_result r;
    if (open_pipe(&p, layout, seed, epochs, batch_rows)) return h;
    while ((r = gpufeed_loader_next(p.l, &b)) == GPUFEED_OK) h.push_back(gpufeed_batch_hash(p.ds, &b));
    if (r != GPUFEED_DONE) { fprintf(stderr, "  reference: %s\n", gpufeed_loader_error(p.l)); h.clear(); }
    close_pipe(&p);
    return h;
}

static gpufeed_uploader *open_uploader(pipe_t *p, int32_t device, int32_t slots)
{
    gpufeed_uploader *u = NULL;
    gpufeed_uploader_desc d;
    gpufeed_error err;
    memset(&d, 0, sizeof d);
    d.device = device; d.slots = slots; d.host_fallback = 0;
    if (gpufeed_uploader_open(&u, p->l, &d, &err)) { CHECK_MSG(0, "uploader_open: %s", err.message); return NULL; }
    return u;
}

/* copies a device batch back on `st` (after waiting on its `ready` event)
   and hashes it as gpufeed_batch_hash hashes a host batch */
static uint64_t device_hash(const gpufeed_dataset *ds, int32_t device, const gpufeed_device_batch *b, cudaStream_t st)
{
    gpufeed_dataset_info info;
    std::vector<std::vector<uint8_t> > bufs;
    void *feat[NF] = { 0 };
    uint8_t *valid[NF] = { 0 };
    gpufeed_batch c;
    size_t rows = (size_t)b->host.num_rows;
    int32_t j;
    gpufeed_dataset_get_info(ds, &info);
    CK(cudaSetDevice(device));
    CHECK(b->on_device == 1 && b->ready != NULL);
    CHECK(gpufeed_device_batch_wait(b, st) == GPUFEED_OK);
    memset(&c, 0, sizeof c);
    c.num_rows = b->host.num_rows; c.row_bytes = b->host.row_bytes;
    bufs.resize(2 * NF + 1);
    if (info.layout == GPUFEED_LAYOUT_ROW_MAJOR) {
        bufs[0].resize(rows * (size_t)info.row_bytes + 1);
        CK(cudaMemcpyAsync(bufs[0].data(), b->data, rows * (size_t)info.row_bytes, cudaMemcpyDeviceToHost, st));
        c.data = bufs[0].data();
    } else {
        for (j = 0; j < info.num_features; j++) {
            size_t z = rows * gpufeed_dtype_size(gpufeed_dataset_feature(ds, j)->dtype);
            bufs[1 + j].resize(z + 1);
            CK(cudaMemcpyAsync(bufs[1 + j].data(), b->features[j], z, cudaMemcpyDeviceToHost, st));
            feat[j] = bufs[1 + j].data();
        }
        c.features = feat;
    }
    for (j = 0; j < info.num_features; j++) {
        CHECK((b->valid[j] != NULL) == (gpufeed_dataset_feature(ds, j)->validity != 0));
        if (!b->valid[j]) continue;
        bufs[1 + NF + j].resize(rows + 1);
        CK(cudaMemcpyAsync(bufs[1 + NF + j].data(), b->valid[j], rows, cudaMemcpyDeviceToHost, st));
        valid[j] = bufs[1 + NF + j].data();
    }
    c.valid = valid;
    CK(cudaStreamSynchronize(st));
    return gpufeed_batch_hash(ds, &c);
}

/* ---- (a) ----------------------------------------------------------------- */

static void check_device_bytes(int layout)
{
    const int64_t epochs = 3, B = 4096;
    std::vector<uint64_t> ref = reference(layout, 2024, epochs, B);
    pipe_t p;
    gpufeed_uploader *u;
    gpufeed_device_batch b;
    gpufeed_result r;
    cudaStream_t st;
    size_t n = 0;
    int mism = 0, host_mism = 0;
    CHECK(!ref.empty());
    if (ref.empty() || open_pipe(&p, layout, 2024, epochs, B)) { CHECK(0); return; }
    u = open_uploader(&p, 0, 3);
    if (!u) { close_pipe(&p); return; }
    CK(cudaSetDevice(0));
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    while ((r = gpufeed_uploader_next(u, &b)) == GPUFEED_OK) {
        uint64_t hh = gpufeed_batch_hash(p.ds, &b.host), dh = device_hash(p.ds, 0, &b, st);
        if (n >= ref.size() || dh != ref[n]) mism++;
        if (n >= ref.size() || hh != ref[n]) host_mism++;
        CHECK(gpufeed_uploader_release(u, &b, st) == GPUFEED_OK);
        n++;
    }
    CHECK_MSG(r == GPUFEED_DONE, "%d: %s", (int)r, gpufeed_uploader_error(u));
    CHECK_MSG(n == ref.size(), "%zu batches, reference %zu", n, ref.size());
    CHECK_MSG(mism == 0, "%d of %zu device batches differ from the host path", mism, n);
    CHECK_MSG(host_mism == 0, "%d of %zu host slots differ", host_mism, n);
    printf("  %s: %zu batches over %lld epochs, device bytes == host path\n",
           layout == GPUFEED_LAYOUT_ROW_MAJOR ? "row-major" : "per-feature", n, (long long)epochs);
    CK(cudaStreamSynchronize(st));
    gpufeed_uploader_close(u);
    CK(cudaStreamDestroy(st));
    close_pipe(&p);
}
static void test_a_device_bytes_row_major(void) { check_device_bytes(GPUFEED_LAYOUT_ROW_MAJOR); }

/* device-resident mode: the dataset uploaded once, batches gathered on the
   device: the same hashes as the host path, every epoch */
static void test_a_resident_equals_host(void)
{
    const int64_t epochs = 3, B = 4096;
    std::vector<uint64_t> ref = reference(GPUFEED_LAYOUT_ROW_MAJOR, 2024, epochs, B);
    pipe_t p;
    gpufeed_uploader *u = NULL;
    gpufeed_uploader_desc d;
    gpufeed_device_batch b;
    gpufeed_error err;
    gpufeed_result r;
    cudaStream_t st;
    size_t n = 0;
    int mism = 0, resident = 1;
    if (ref.empty() || open_pipe(&p, GPUFEED_LAYOUT_ROW_MAJOR, 2024, epochs, B)) { CHECK(0); return; }
    memset(&d, 0, sizeof d);
    d.device = 0; d.slots = 3; d.resident_bytes = (uint64_t)1 << 33;
    if (gpufeed_uploader_open(&u, p.l, &d, &err)) { CHECK_MSG(0, "uploader_open: %s", err.message); close_pipe(&p); return; }
    CK(cudaSetDevice(0));
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    while ((r = gpufeed_uploader_next(u, &b)) == GPUFEED_OK) {
        uint64_t dh = device_hash(p.ds, 0, &b, st);
        resident &= b.resident == 1 && b.host.data == NULL;
        if (n >= ref.size() || dh != ref[n]) mism++;
        CHECK(gpufeed_uploader_release(u, &b, st) == GPUFEED_OK);
        n++;
    }
    CHECK_MSG(r == GPUFEED_DONE, "%d: %s", (int)r, gpufeed_uploader_error(u));
    CHECK_MSG(resident, "batches did not come from the resident copy");
    CHECK_MSG(n == ref.size(), "%zu batches, reference %zu", n, ref.size());
    CHECK_MSG(mism == 0, "%d of %zu resident batches differ from the host path", mism, n);
    printf("  resident: %zu batches over %lld epochs, gathered on the device == host path\n", n, (long long)epochs);
    CK(cudaStreamSynchronize(st));
    gpufeed_uploader_close(u);
    CK(cudaStreamDestroy(st));
    close_pipe(&p);
}
static void test_a_device_bytes_per_feature(void) { check_device_bytes(GPUFEED_LAYOUT_PER_FEATURE); }

/* ---- (b) ----------------------------------------------------------------- */

static void test_b_slot_reuse_under_slow_trainer(void)
{
    const int64_t B = 1024;
    pipe_t p;
    gpufeed_uploader *u;
    gpufeed_device_batch b;
    gpufeed_dataset_info info;
    gpufeed_result r = GPUFEED_OK;
    cudaStream_t st;
    unsigned long long *d_out = NULL;
    std::vector<unsigned long long> expect, got;
    const size_t cap = 4096;
    size_t n = 0, i;
    int bad = 0, j;
    double t0, t1;
    if (open_pipe(&p, GPUFEED_LAYOUT_ROW_MAJOR, 77, 1, B)) { CHECK(0); return; }
    gpufeed_dataset_get_info(p.ds, &info);
    u = open_uploader(&p, 0, 3);
    if (!u) { close_pipe(&p); return; }
    CK(cudaSetDevice(0));
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CK(cudaMalloc(&d_out, cap * sizeof *d_out));
    CK(cudaMemset(d_out, 0, cap * sizeof *d_out));
    CK(cudaDeviceSynchronize());
    t0 = now_s();
    while (n < cap && (r = gpufeed_uploader_next(u, &b)) == GPUFEED_OK) {
        unsigned long long e = host_cksum(b.host.data, (unsigned long long)(b.host.num_rows * info.row_bytes), 0);
        for (j = 0; j < NF; j++) if (b.host.valid[j]) e += host_cksum(b.host.valid[j], (unsigned long long)b.host.num_rows, (unsigned long long)j + 1);
        expect.push_back(e);
        CHECK(gpufeed_device_batch_wait(&b, st) == GPUFEED_OK);
        k_sleep<<<1, 1, 0, st>>>(2000000ull);
        k_cksum<<<64, 256, 0, st>>>((const unsigned char *)b.data, (unsigned long long)(b.host.num_rows * info.row_bytes), 0, d_out + n);
        for (j = 0; j < NF; j++) if (b.valid[j])
            k_cksum<<<16, 256, 0, st>>>(b.valid[j], (unsigned long long)b.host.num_rows, (unsigned long long)j + 1, d_out + n);
        CK(cudaGetLastError());
        CHECK(gpufeed_uploader_release(u, &b, st) == GPUFEED_OK);
        n++;
    }
    CHECK_MSG(r == GPUFEED_OK || r == GPUFEED_DONE, "%s", gpufeed_uploader_error(u));
    CK(cudaStreamSynchronize(st));
    t1 = now_s();
    got.resize(n);
    CK(cudaMemcpy(got.data(), d_out, n * sizeof *d_out, cudaMemcpyDeviceToHost));
    for (i = 0; i < n; i++) if (got[i] != expect[i]) { if (bad < 5) fprintf(stderr, "  batch %zu: device checksum %016llx, host %016llx\n", i, got[i], expect[i]); bad++; }
    CHECK(n > 100);
    CHECK_MSG(bad == 0, "%d of %zu batches were overwritten while the trainer read them", bad, n);
    printf("  %zu batches, 3 slots, ~2 ms trainer per batch: %.3f s (%.2f ms/batch), %d checksum mismatches\n",
           n, t1 - t0, (t1 - t0) * 1e3 / (double)(n ? n : 1), bad);
    gpufeed_uploader_close(u);
    CK(cudaFree(d_out));
    CK(cudaStreamDestroy(st));
    close_pipe(&p);
}

/* ---- (c) ----------------------------------------------------------------- */

static void two_uploaders(int32_t dev_a, int32_t dev_b)
{
    const int64_t B = 4096;
    std::vector<uint64_t> ra = reference(GPUFEED_LAYOUT_ROW_MAJOR, 11, 1, B), rb = reference(GPUFEED_LAYOUT_PER_FEATURE, 12, 1, B);
    pipe_t pa, pb;
    gpufeed_uploader *ua, *ub;
    gpufeed_device_batch ba, bb;
    gpufeed_result r1 = GPUFEED_OK, r2 = GPUFEED_OK;
    cudaStream_t sa, sb;
    size_t na = 0, nb = 0;
    int ma = 0, mb = 0, dev_moved = 0, cur = -1;
    if (ra.empty() || rb.empty()) { CHECK(0); return; }
    if (open_pipe(&pa, GPUFEED_LAYOUT_ROW_MAJOR, 11, 1, B)) { CHECK(0); return; }
    if (open_pipe(&pb, GPUFEED_LAYOUT_PER_FEATURE, 12, 1, B)) { CHECK(0); close_pipe(&pa); return; }
    ua = open_uploader(&pa, dev_a, 3);
    ub = open_uploader(&pb, dev_b, 2);
    if (!ua || !ub) { gpufeed_uploader_close(ua); gpufeed_uploader_close(ub); close_pipe(&pa); close_pipe(&pb); return; }
    CK(cudaSetDevice(dev_a)); CK(cudaStreamCreateWithFlags(&sa, cudaStreamNonBlocking));
    CK(cudaSetDevice(dev_b)); CK(cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking));
    while (r1 == GPUFEED_OK || r2 == GPUFEED_OK) {
        if (r1 == GPUFEED_OK) {
            CK(cudaSetDevice(dev_b));
            r1 = gpufeed_uploader_next(ua, &ba);
            CK(cudaGetDevice(&cur));
            if (r1 == GPUFEED_OK) {
                cudaPointerAttributes at;
                if (cur != dev_b) dev_moved++;
                CK(cudaPointerGetAttributes(&at, ba.data));
                CHECK(at.device == dev_a);
                if (na >= ra.size() || device_hash(pa.ds, dev_a, &ba, sa) != ra[na]) ma++;
                CK(cudaSetDevice(dev_a));
                CHECK(gpufeed_uploader_release(ua, &ba, sa) == GPUFEED_OK);
                na++;
            }
        }
        if (r2 == GPUFEED_OK) {
            r2 = gpufeed_uploader_next(ub, &bb);
            if (r2 == GPUFEED_OK) {
                if (nb >= rb.size() || device_hash(pb.ds, dev_b, &bb, sb) != rb[nb]) mb++;
                CK(cudaSetDevice(dev_b));
                CHECK(gpufeed_uploader_release(ub, &bb, sb) == GPUFEED_OK);
                nb++;
            }
        }
    }
    CHECK_MSG(r1 == GPUFEED_DONE, "A: %s", gpufeed_uploader_error(ua));
    CHECK_MSG(r2 == GPUFEED_DONE, "B: %s", gpufeed_uploader_error(ub));
    CHECK(na == ra.size() && nb == rb.size());
    CHECK_MSG(ma == 0 && mb == 0, "mismatches: A %d of %zu, B %d of %zu", ma, na, mb, nb);
    printf("  device %d (row-major, 3 slots): %zu batches; device %d (per-feature, 2 slots): %zu batches; all equal to the host path\n",
           dev_a, na, dev_b, nb);
    if (dev_a != dev_b)
        printf("  NOTE: gpufeed_uploader_next changed the caller's current device in %d of %zu calls (it calls cudaSetDevice and does not restore it)\n",
               dev_moved, na);
    CK(cudaSetDevice(dev_a)); CK(cudaStreamSynchronize(sa)); CK(cudaStreamDestroy(sa));
    CK(cudaSetDevice(dev_b)); CK(cudaStreamSynchronize(sb)); CK(cudaStreamDestroy(sb));
    gpufeed_uploader_close(ua); gpufeed_uploader_close(ub);
    close_pipe(&pa); close_pipe(&pb);
    CK(cudaSetDevice(0));
}
static void test_c_two_uploaders_one_device(void) { two_uploaders(0, 0); }
static void test_c_two_devices(void)
{
    two_uploaders(0, 1);
}

/* ---- (d) ----------------------------------------------------------------- */

static void steady_state(int sync_each_step, double *frac_next, double *gpu_busy, double *p50_us, double *p99_us, size_t *steps)
{
    const int64_t B = 4096;
    const size_t warm = 10;
    pipe_t p;
    gpufeed_uploader *u;
    gpufeed_device_batch b;
    gpufeed_result r = GPUFEED_OK;
    cudaStream_t st;
    std::vector<double> tn;
    double t_in = 0, t0 = 0, t1, a, z;
    size_t n = 0;
    *frac_next = *gpu_busy = *p50_us = *p99_us = 0; *steps = 0;
    if (open_pipe(&p, GPUFEED_LAYOUT_ROW_MAJOR, 5, 3, B)) { CHECK(0); return; }
    u = open_uploader(&p, 0, 3);
    if (!u) { close_pipe(&p); return; }
    CK(cudaSetDevice(0));
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    for (;;) {
        if (n == warm) { CK(cudaStreamSynchronize(st)); t0 = now_s(); t_in = 0; }
        a = now_s();
        r = gpufeed_uploader_next(u, &b);
        z = now_s();
        if (r != GPUFEED_OK) break;
        if (n >= warm) { t_in += z - a; tn.push_back((z - a) * 1e6); }
        CHECK(gpufeed_device_batch_wait(&b, st) == GPUFEED_OK);
        k_sleep<<<1, 1, 0, st>>>(1000000ull);
        CHECK(gpufeed_uploader_release(u, &b, st) == GPUFEED_OK);
        if (sync_each_step) CK(cudaStreamSynchronize(st));
        n++;
    }
    CHECK_MSG(r == GPUFEED_DONE, "%s", gpufeed_uploader_error(u));
    CK(cudaStreamSynchronize(st));
    t1 = now_s();
    if (n > warm && t1 > t0) {
        *steps = n - warm;
        *frac_next = t_in / (t1 - t0);
        *gpu_busy = (double)(n - warm) * 1e-3 / (t1 - t0);
        std::sort(tn.begin(), tn.end());
        *p50_us = tn[tn.size() / 2];
        *p99_us = tn[(tn.size() * 99) / 100];
    }
    {
        gpufeed_stats s;
        gpufeed_loader_stats(p.l, &s);
        printf("  loader verdict: %s\n", s.verdict);
    }
    gpufeed_uploader_close(u);
    CK(cudaStreamDestroy(st));
    close_pipe(&p);
}

/* (e) DLPack on the device. Per-feature layout: every feature and every
   validity mask exported as a kDLCUDA tensor that points at the device slot;
   the consumer stream waits for the copy, and the bytes read on that stream
   equal the host batch; the slot stays held until the last deleter, which
   runs after the release. Row-major layout with mixed dtypes (a 17-byte
   row): a feature view that cannot be expressed in elements and the whole
   batch as one tensor are refused with a message saying why, while the
   masks (separate arrays) still export. */
static size_t dl_bytes(const gpufeed_dl_tensor *t)
{
    size_t n = (size_t)t->dtype.bits / 8;
    int32_t i;
    for (i = 0; i < t->ndim; i++) n *= (size_t)t->shape[i];
    return n;
}

static void test_e_dlpack_device(void)
{
    static const int has_mask[NF] = { 1, 0, 1, 0 };
    pipe_t p;
    gpufeed_uploader *u;
    gpufeed_device_batch b;
    cudaStream_t st;
    gpufeed_result r;
    int n = 0, ntensors = 0, bad = 0;
    if (open_pipe(&p, GPUFEED_LAYOUT_PER_FEATURE, 77, 1, 4096)) { CHECK(0); return; }
    u = open_uploader(&p, 0, 3);
    if (!u) { close_pipe(&p); return; }
    CK(cudaSetDevice(0));
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    while ((r = gpufeed_uploader_next(u, &b)) == GPUFEED_OK) {
        std::vector<gpufeed_dl_managed_versioned *> held;
        std::vector<uint8_t> back;
        int j, m;
        for (j = 0; j < NF; j++)
            for (m = 0; m <= has_mask[j]; m++) {
                gpufeed_dl_managed_versioned *t = NULL;
                const void *host = m ? (const void *)b.host.valid[j] : (const void *)b.host.features[j];
                const void *dev = m ? (const void *)b.valid[j] : (const void *)b.features[j];
                size_t bytes;
                gpufeed_result e = gpufeed_batch_dlpack(u, &b, j, m, st, 1, (void **)&t);
                CHECK_MSG(e == GPUFEED_OK && t, "batch %d, feature %d%s: %s", n, j, m ? " mask" : "", gpufeed_uploader_error(u));
                if (e != GPUFEED_OK || !t) { bad++; continue; }
                held.push_back(t);
                CHECK(t->dl_tensor.device.device_type == GPUFEED_DL_CUDA && t->dl_tensor.device.device_id == 0);
                CHECK(t->dl_tensor.data == dev && t->dl_tensor.byte_offset == 0);
                CHECK(t->dl_tensor.shape[0] == b.host.num_rows);
                bytes = dl_bytes(&t->dl_tensor);
                back.assign(bytes + 1, 0xEE);
                CK(cudaMemcpyAsync(back.data(), t->dl_tensor.data, bytes, cudaMemcpyDeviceToHost, st));
                CK(cudaStreamSynchronize(st));
                if (memcmp(back.data(), host, bytes) != 0) bad++;
                ntensors++;
            }
        CHECK(gpufeed_uploader_release(u, &b, st) == GPUFEED_OK);
        for (size_t i = 0; i < held.size(); i++) held[i]->deleter(held[i]); /* record the slot's release on st */
        n++;
    }
    CHECK_MSG(r == GPUFEED_DONE, "uploader: %s", gpufeed_uploader_error(u));
    CHECK(n > 0);
    CHECK_MSG(bad == 0, "%d of %d tensors missing or differ when read through DLPack", bad, ntensors);
    printf("  per-feature: %d batches, %d kDLCUDA tensors (features and masks), bytes equal the host slots\n", n, ntensors);
    gpufeed_uploader_close(u);
    close_pipe(&p);

    if (open_pipe(&p, GPUFEED_LAYOUT_ROW_MAJOR, 77, 1, 4096)) { CHECK(0); CK(cudaStreamDestroy(st)); return; }
    u = open_uploader(&p, 0, 3);
    if (!u) { close_pipe(&p); CK(cudaStreamDestroy(st)); return; }
    if ((r = gpufeed_uploader_next(u, &b)) == GPUFEED_OK) {
        gpufeed_dl_managed_versioned *t = NULL;
        std::vector<uint8_t> back;
        CHECK(gpufeed_batch_dlpack(u, &b, 0, 0, st, 1, (void **)&t) == GPUFEED_ERR_INVALID_ARG && !t);
        CHECK_MSG(strstr(gpufeed_uploader_error(u), "not aligned") != NULL, "%s", gpufeed_uploader_error(u));
        CHECK(gpufeed_batch_dlpack(u, &b, GPUFEED_DL_ALL, 0, st, 1, (void **)&t) == GPUFEED_ERR_INVALID_ARG && !t);
        CHECK_MSG(strstr(gpufeed_uploader_error(u), "differ in dtype") != NULL, "%s", gpufeed_uploader_error(u));
        CHECK_MSG(gpufeed_batch_dlpack(u, &b, 2, 1, st, 1, (void **)&t) == GPUFEED_OK && t, "%s", gpufeed_uploader_error(u));
        if (t) {
            size_t bytes = dl_bytes(&t->dl_tensor);
            CHECK(bytes == (size_t)b.host.num_rows && t->dl_tensor.data == (void *)b.valid[2]);
            back.assign(bytes, 0xEE);
            CK(cudaMemcpyAsync(back.data(), t->dl_tensor.data, bytes, cudaMemcpyDeviceToHost, st));
            CK(cudaStreamSynchronize(st));
            CHECK(memcmp(back.data(), b.host.valid[2], bytes) == 0);
        }
        CHECK(gpufeed_uploader_release(u, &b, st) == GPUFEED_OK);
        if (t) t->deleter(t);
        printf("  row-major 17-byte rows: feature views and the whole batch refused with a reason, masks exported\n");
    }
    CHECK_MSG(r == GPUFEED_OK, "uploader: %s", gpufeed_uploader_error(u));
    gpufeed_uploader_close(u);
    CK(cudaStreamDestroy(st));
    close_pipe(&p);
}

static void test_d_host_does_not_block(void)
{
    double f, g, p50, p99;
    size_t n;
    steady_state(1, &f, &g, &p50, &p99, &n);
    printf("  synchronous trainer (1 ms step, sync each step): %zu steps, time in gpufeed_uploader_next %.1f%% of wall, next() p50 %.0f us p99 %.0f us\n",
           n, 100 * f, p50, p99);
    CHECK(n > 100);
    if (g_timing) CHECK_MSG(f < 0.25, "the host spent %.1f%% of the time inside gpufeed_uploader_next", 100 * f);
    steady_state(0, &f, &g, &p50, &p99, &n);
    printf("  asynchronous trainer (1 ms step, no sync): %zu steps, GPU busy %.1f%% of wall, time in next %.1f%% (the host runs ahead by the slots and waits there)\n",
           n, 100 * g, 100 * f);
    if (g_timing) CHECK_MSG(g > 0.7, "GPU busy only %.1f%% of the time", 100 * g);
    if (!g_timing) printf("  (GPUFEED_TEST_NO_TIMING: timings reported, not checked)\n");
}

int main(int argc, char **argv)
{
    static const char *const names[] = {
        "test_a_device_bytes_row_major", "test_a_device_bytes_per_feature", "test_a_resident_equals_host", "test_b_slot_reuse_under_slow_trainer",
        "test_c_two_uploaders_one_device", "test_c_two_devices", "test_d_host_does_not_block", "test_e_dlpack_device"
    };
    char why[256];
    FILE *f;
    const char *nt = getenv("GPUFEED_TEST_NO_TIMING");
    size_t i;
    if (argc > 1) g_path = argv[1];
    if (nt && *nt && strcmp(nt, "0") != 0) g_timing = 0;
    if (!gpufeed_cuda_available(0, why, sizeof why)) {
        for (i = 0; i < sizeof names / sizeof names[0]; i++) printf("SKIP: no GPU (%s) -- %s\n", why, names[i]);
        printf("0 passed, 0 failed\n");
        return 0;
    }
    f = fopen(g_path, "rb");
    if (!f) { fprintf(stderr, "test_gpu: cannot open %s (run from the repository root)\n", g_path); return 2; }
    fclose(f);
    if (cudaGetDeviceCount(&g_ndev) != cudaSuccess) g_ndev = 0;
    {
        cudaDeviceProp pr;
        if (cudaGetDeviceProperties(&pr, 0) == cudaSuccess)
            printf("device 0: %s (sm_%d%d), %d device(s)\n", pr.name, pr.major, pr.minor, g_ndev);
    }
    RUN(test_a_device_bytes_row_major);
    RUN(test_a_device_bytes_per_feature);
    RUN(test_a_resident_equals_host);
    RUN(test_b_slot_reuse_under_slow_trainer);
    RUN(test_c_two_uploaders_one_device);
    if (g_ndev >= 2) RUN(test_c_two_devices);
    else printf("SKIP test_c_two_devices (one device: needs two)\n");
    RUN(test_d_host_does_not_block);
    RUN(test_e_dlpack_device);
    return TEST_SUMMARY();
}
