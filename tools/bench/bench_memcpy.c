/* cc -O2 -std=c99 tools/bench/bench_memcpy.c -o build/bench_memcpy */
/* Single-core memcpy bandwidth, the ceiling of a cached epoch: copies a
   TOTAL-byte source buffer (touched first, so no page faults are timed)
   into one CHUNK-byte destination (the batch buffer, malloc'ed like the
   loader's), chunk after chunk, EPOCHS times per run; prints each run's
   GB/s (1e9 bytes/s) and the median. The source is anonymous memory advised
   MADV_HUGEPAGE where the system has it: a page-cache mapping (what a
   cached epoch reads) is backed by large folios on current kernels, and
   copies from 4 KiB anonymous pages run ~20% slower, which would flatter
   the loader.

   Usage: bench_memcpy TOTAL_BYTES CHUNK_BYTES [EPOCHS (3)] [RUNS (7)]
   Used by tools/bench/bench_cache.py (make bench-cache). */
#define _DEFAULT_SOURCE            /* madvise, MAP_ANONYMOUS */
#define _POSIX_C_SOURCE 200112L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    unsigned long long total, chunk, off;
    int epochs = 3, runs = 7, r, e, huge = 0;
    unsigned char *src, *dst;
    double *gbs;
    volatile unsigned char sink = 0;
    if (argc < 3) {
        fprintf(stderr, "usage: bench_memcpy TOTAL_BYTES CHUNK_BYTES [EPOCHS] [RUNS]\n");
        return 2;
    }
    total = strtoull(argv[1], NULL, 10);
    chunk = strtoull(argv[2], NULL, 10);
    if (argc > 3) epochs = atoi(argv[3]);
    if (argc > 4) runs = atoi(argv[4]);
    if (!total || !chunk || chunk > total || epochs < 1 || runs < 1) {
        fprintf(stderr, "bench_memcpy: need 0 < CHUNK <= TOTAL, EPOCHS >= 1, RUNS >= 1\n");
        return 2;
    }
    {
        void *m = mmap(NULL, (size_t)total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        src = m == MAP_FAILED ? NULL : (unsigned char *)m;
#ifdef MADV_HUGEPAGE
        if (src && madvise(src, (size_t)total, MADV_HUGEPAGE) == 0) huge = 1;
#endif
    }
    dst = (unsigned char *)malloc((size_t)chunk);
    gbs = (double *)malloc((size_t)runs * sizeof *gbs);
    if (!src || !dst || !gbs) { fprintf(stderr, "bench_memcpy: out of memory\n"); return 1; }
    for (off = 0; off < total; off++) src[off] = (unsigned char)(off * 131u + 7u);
    memset(dst, 0, (size_t)chunk);
    for (r = -1; r < runs; r++) { /* run -1: warm-up */
        double t0 = now_s(), t;
        for (e = 0; e < epochs; e++)
            for (off = 0; off < total; off += chunk) {
                unsigned long long n = total - off < chunk ? total - off : chunk;
                memcpy(dst, src + off, (size_t)n);
                sink ^= dst[n - 1];
            }
        t = now_s() - t0;
        if (r >= 0) {
            gbs[r] = (double)total * epochs / t / 1e9;
            printf("run %d: %.3f s, %.2f GB/s\n", r, t, gbs[r]);
        }
    }
    qsort(gbs, (size_t)runs, sizeof *gbs, cmp_d);
    printf("median %.3f GB/s, min %.3f, max %.3f (%llu bytes x %d epochs in %llu-byte chunks; source %s)\n",
           gbs[runs / 2], gbs[0], gbs[runs - 1], total, epochs, chunk, huge ? "MADV_HUGEPAGE" : "4 KiB pages");
    munmap(src, (size_t)total); free(dst); free(gbs);
    return (int)(sink & 0);
}
