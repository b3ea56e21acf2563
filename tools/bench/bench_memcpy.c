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

   With ROW_BYTES and WINDOW_BYTES it measures the ceiling of a shuffled
   cached epoch instead: the source is cut into windows of WINDOW_BYTES,
   each window's rows are copied in a random order (a fixed permutation,
   computed before the clock starts), CHUNK_BYTES of rows at a time, each
   row prefetched into L2 64 rows ahead (as the loader's gather does: on
   the x86-64 host we measure, 16 rows ahead with a non-temporal hint ran
   at half this speed). The same bytes as the plain copy, in the
   order a window shuffle reads them. WINDOW_BYTES 0: the same row-by-row
   copy with the rows in order (the in-order side of that comparison).

   @FILE instead of TOTAL_BYTES: the source is FILE mapped read-only (the
   page cache, as the loader reads a cache file; read once before timing),
   its size cut down to a multiple of the window in the shuffled mode.

   AHEAD and LOCALITY (after WINDOW_BYTES) change the prefetch: rows ahead
   (default 64, 0: none) and __builtin_prefetch's locality (default 2, into
   L2; 0 is prefetchnta on x86-64, the loader's first version with AHEAD 16).

   Usage: bench_memcpy TOTAL_BYTES|@FILE CHUNK_BYTES [EPOCHS (3)] [RUNS (7)] [ROW_BYTES WINDOW_BYTES [AHEAD LOCALITY]]
   Used by tools/bench/bench_cache.py (make bench-cache) and
   tools/bench/bench_peers.py. */
#define _DEFAULT_SOURCE            /* madvise, MAP_ANONYMOUS */
#define _POSIX_C_SOURCE 200112L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

/* the rows of one chunk in the shuffled order, each prefetched AHEAD rows
   before its copy with locality LOC (a constant, as the builtin needs) */
#define SHUFFLED_ROWS(LOC) \
    for (k = 0; k < n; k++) { \
        unsigned long long g = r0 + k, w0 = g / nrows * window; \
        if (ahead && k + ahead < n) { \
            unsigned long long h = g + ahead; \
            const unsigned char *q = src + h / nrows * window + (unsigned long long)perm[h % nrows] * row; \
            __builtin_prefetch(q, 0, LOC); \
            if (row > 64) __builtin_prefetch(q + row - 1, 0, LOC); \
        } \
        memcpy(dst + k * row, src + w0 + (unsigned long long)perm[g % nrows] * row, (size_t)row); \
    }

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
    unsigned long long row = 0, window = 0, nrows = 0, i;
    unsigned long long ahead = 64;     /* the loader's GPUFEED_GATHER_AHEAD */
    int locality = 2;
    int in_order = 0;
    unsigned int *perm = NULL;
    double *gbs;
    volatile unsigned char sink = 0;
    if (argc < 3) {
        fprintf(stderr, "usage: bench_memcpy TOTAL_BYTES CHUNK_BYTES [EPOCHS] [RUNS]\n");
        return 2;
    }
    const char *file = argv[1][0] == '@' ? argv[1] + 1 : NULL;
    int fd = -1;
    struct stat fst;
    if (file) {
        fd = open(file, O_RDONLY);
        if (fd < 0 || fstat(fd, &fst) != 0) { perror(file); return 1; }
        total = (unsigned long long)fst.st_size;
    } else total = strtoull(argv[1], NULL, 10);
    chunk = strtoull(argv[2], NULL, 10);
    if (argc > 3) epochs = atoi(argv[3]);
    if (argc > 4) runs = atoi(argv[4]);
    if (argc > 6) { row = strtoull(argv[5], NULL, 10); window = strtoull(argv[6], NULL, 10); }
    if (argc > 8) { ahead = strtoull(argv[7], NULL, 10); locality = atoi(argv[8]); }
    if (locality < 0 || locality > 3) {
        fprintf(stderr, "bench_memcpy: LOCALITY must be 0..3\n");
        return 2;
    }
    if (row && !window) { window = total - total % row; in_order = 1; } /* WINDOW_BYTES 0: the rows in order */
    if (file && row && window) total -= total % window;
    if (!total || !chunk || chunk > total || epochs < 1 || runs < 1) {
        fprintf(stderr, "bench_memcpy: need 0 < CHUNK <= TOTAL, EPOCHS >= 1, RUNS >= 1\n");
        return 2;
    }
    if (argc > 6 && (!row || window < row || window % row || chunk % row || total % window || window / row > 0xFFFFFFFFull)) {
        fprintf(stderr, "bench_memcpy: need ROW_BYTES dividing CHUNK_BYTES and WINDOW_BYTES, WINDOW_BYTES dividing TOTAL_BYTES\n");
        return 2;
    }
    if (file) {
        void *m = mmap(NULL, (size_t)total, PROT_READ, MAP_SHARED, fd, 0);
        src = m == MAP_FAILED ? NULL : (unsigned char *)m;
    } else {
        void *m = mmap(NULL, (size_t)total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        src = m == MAP_FAILED ? NULL : (unsigned char *)m;
#ifdef MADV_HUGEPAGE
        if (src && madvise(src, (size_t)total, MADV_HUGEPAGE) == 0) huge = 1;
#endif
    }
    dst = (unsigned char *)malloc((size_t)chunk);
    gbs = (double *)malloc((size_t)runs * sizeof *gbs);
    if (!src || !dst || !gbs) { fprintf(stderr, "bench_memcpy: out of memory\n"); return 1; }
    if (file) for (off = 0; off < total; off += 4096) sink ^= src[off]; /* mapped before the clock */
    else for (off = 0; off < total; off++) src[off] = (unsigned char)(off * 131u + 7u);
    memset(dst, 0, (size_t)chunk);
    if (row) { /* one random permutation of a window's rows (Fisher-Yates, a fixed xorshift) */
        unsigned long long x = 0x9E3779B97F4A7C15ull;
        nrows = window / row;
        perm = (unsigned int *)malloc((size_t)nrows * sizeof *perm);
        if (!perm) { fprintf(stderr, "bench_memcpy: out of memory\n"); return 1; }
        for (i = 0; i < nrows; i++) perm[i] = (unsigned int)i;
        for (i = nrows - 1; i > 0 && !in_order; i--) {
            unsigned long long j;
            unsigned int t;
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            j = x % (i + 1);
            t = perm[i]; perm[i] = perm[j]; perm[j] = t;
        }
    }
    for (r = -1; r < runs; r++) { /* run -1: warm-up */
        double t0 = now_s(), t;
        for (e = 0; e < epochs; e++)
            if (!row) for (off = 0; off < total; off += chunk) {
                unsigned long long n = total - off < chunk ? total - off : chunk;
                memcpy(dst, src + off, (size_t)n);
                sink ^= dst[n - 1];
            } else for (off = 0; off < total; off += chunk) { /* rows off/row .. of the shuffled order */
                unsigned long long k, n = (total - off < chunk ? total - off : chunk) / row, r0 = off / row;
                switch (locality) { /* the switch outside the loop: a prefetch per row stays one instruction */
                case 0: SHUFFLED_ROWS(0) break;
                case 1: SHUFFLED_ROWS(1) break;
                case 3: SHUFFLED_ROWS(3) break;
                default: SHUFFLED_ROWS(2) break;
                }
                sink ^= dst[n * row - 1];
            }
        t = now_s() - t0;
        if (r >= 0) {
            gbs[r] = (double)total * epochs / t / 1e9;
            printf("run %d: %.3f s, %.2f GB/s\n", r, t, gbs[r]);
        }
    }
    qsort(gbs, (size_t)runs, sizeof *gbs, cmp_d);
    printf("median %.3f GB/s, min %.3f, max %.3f (%llu bytes x %d epochs in %llu-byte chunks; source %s)",
           gbs[runs / 2], gbs[0], gbs[runs - 1], total, epochs, chunk, file ? file : huge ? "MADV_HUGEPAGE" : "4 KiB pages");
    if (row && in_order) printf("; %llu-byte rows copied one by one, in order", row);
    else if (row) printf("; %llu-byte rows in a random order within each %llu-byte window", row, window);
    printf("\n");
    munmap(src, (size_t)total); free(dst); free(gbs); free(perm);
    if (fd >= 0) close(fd);
    return (int)(sink & 0);
}
