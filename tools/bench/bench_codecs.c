/* bench_codecs: gpufeed's own decompressors against the system libraries,
   on the same compressed buffers, in the same run.

   Build (needs libsnappy-dev liblz4-dev zlib1g-dev libdeflate-dev
   libzstd-dev; `make bench-codecs` installs them and runs this):
     cc -O2 -I. tools/bench/bench_codecs.c -o build/bench_codecs \
        -lsnappy -llz4 -lz -ldeflate -lzstd -lpthread -lm
   Usage: bench_codecs [--reps N] [--mib M] [FILE...]

   Buffers: page-sized (1 MiB by default, --mib) pieces of data shaped like
   Parquet column pages - int64 keys that grow with small steps, float64
   measurements, dictionary indices (RLE/bit-packed-like runs), short text -
   plus pieces of any FILE given (e.g. an uncompressed Parquet file). Each
   buffer is compressed once by the system library (snappy, LZ4 block,
   gzip via zlib level 6, zstd level 3 and 1), then decompressed by the
   system library and by gpufeed (gf__decompress, the function the page
   reader calls) in alternation: a warm-up, then --reps rounds (default 7);
   each round times all buffers of one codec. Prints the median throughput
   (uncompressed MB/s), the spread (min-max over the rounds) and the ratio
   ours / system, against the target from tools/bench/README.md. Every gpufeed output is
   compared with the original bytes first. */
#define _POSIX_C_SOURCE 200809L
#define GPUFEED_IMPLEMENTATION
#define GPUFEED_STATIC
#include "gpufeed.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <snappy-c.h>
#include <lz4.h>
#include <zlib.h>
#include <libdeflate.h>
#include <zstd.h>

typedef struct buf { uint8_t *p; size_t n; } buf;
typedef struct item { buf raw, comp; } item;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    return rng_state = x;
}
static double rnd_normal(void)
{
    double s = 0;
    int i;
    for (i = 0; i < 12; i++) s += (double)(rnd() >> 11) * (1.0 / 9007199254740992.0);
    return s - 6.0;
}

static buf make_buffer(int kind, size_t n)
{
    buf b;
    size_t i;
    b.n = n; b.p = (uint8_t *)malloc(n);
    if (!b.p) { fprintf(stderr, "bench_codecs: out of memory\n"); exit(1); }
    if (kind == 0) {           /* int64 keys, small positive steps */
        int64_t v = 1000000;
        for (i = 0; i + 8 <= n; i += 8) { v += (int64_t)(rnd() % 16); memcpy(b.p + i, &v, 8); }
    } else if (kind == 1) {    /* float64 measurements, 3 significant decimals */
        for (i = 0; i + 8 <= n; i += 8) {
            double d = (double)(int64_t)(rnd_normal() * 1000.0) / 1000.0 + 20.0;
            memcpy(b.p + i, &d, 8);
        }
    } else if (kind == 2) {    /* dictionary indices: runs and bit-packed groups */
        for (i = 0; i < n;) {
            size_t run = 1 + rnd() % 40, j;
            uint8_t v = (uint8_t)(rnd() % 24);
            for (j = 0; j < run && i < n; j++) b.p[i++] = (rnd() % 4) ? v : (uint8_t)(rnd() % 24);
        }
    } else {                   /* text: length-prefixed words, as PLAIN BYTE_ARRAY */
        static const char *w[] = { "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf",
                                   "hotel", "india", "juliet", "kilo", "lima", "mike", "november" };
        for (i = 0; i < n;) {
            const char *s = w[rnd() % 14];
            uint32_t len = (uint32_t)strlen(s) + (uint32_t)(rnd() % 3);
            size_t k;
            if (i + 4 + len > n) { memset(b.p + i, 0, n - i); break; }
            memcpy(b.p + i, &len, 4); i += 4;
            for (k = 0; k < len; k++) b.p[i + k] = k < strlen(s) ? (uint8_t)s[k] : (uint8_t)('0' + rnd() % 10);
            i += len;
        }
    }
    return b;
}

enum { C_SNAPPY, C_LZ4, C_GZIP, C_ZSTD1, C_ZSTD3, NC };
static const char *cname[NC] = { "SNAPPY", "LZ4_RAW", "GZIP (zlib -6)", "ZSTD -1", "ZSTD -3" };
static const char *refname[NC] = { "libsnappy", "liblz4", "zlib", "libzstd", "libzstd" };
static const double target[NC] = { 0.9, 0.9, 0.8, 0.7, 0.7 };
static const gpufeed_codec gcodec[NC] = { GPUFEED_CODEC_SNAPPY, GPUFEED_CODEC_LZ4_RAW, GPUFEED_CODEC_GZIP,
                                          GPUFEED_CODEC_ZSTD, GPUFEED_CODEC_ZSTD };

static buf compress_with(int c, const buf *raw)
{
    buf o;
    size_t cap;
    o.n = 0;
    switch (c) {
    case C_SNAPPY:
        cap = snappy_max_compressed_length(raw->n); o.p = (uint8_t *)malloc(cap); o.n = cap;
        if (snappy_compress((const char *)raw->p, raw->n, (char *)o.p, &o.n) != SNAPPY_OK) o.n = 0;
        break;
    case C_LZ4:
        cap = (size_t)LZ4_compressBound((int)raw->n); o.p = (uint8_t *)malloc(cap);
        o.n = (size_t)LZ4_compress_default((const char *)raw->p, (char *)o.p, (int)raw->n, (int)cap);
        break;
    case C_GZIP: {
        z_stream z;
        cap = raw->n + raw->n / 100 + 1024; o.p = (uint8_t *)malloc(cap);
        memset(&z, 0, sizeof z);
        if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) break;
        z.next_in = raw->p; z.avail_in = (uInt)raw->n; z.next_out = o.p; z.avail_out = (uInt)cap;
        if (deflate(&z, Z_FINISH) == Z_STREAM_END) o.n = z.total_out;
        deflateEnd(&z);
        break;
    }
    default:
        cap = ZSTD_compressBound(raw->n); o.p = (uint8_t *)malloc(cap);
        o.n = ZSTD_compress(o.p, cap, raw->p, raw->n, c == C_ZSTD1 ? 1 : 3);
        if (ZSTD_isError(o.n)) o.n = 0;
        break;
    }
    if (!o.n) { fprintf(stderr, "bench_codecs: %s compression failed\n", cname[c]); exit(1); }
    return o;
}

/* the system library decompressing one buffer; returns 0 on success */
static int ref_decompress(int c, const buf *in, uint8_t *out, size_t on, struct libdeflate_decompressor *ld, int use_deflate)
{
    switch (c) {
    case C_SNAPPY: { size_t n = on; return snappy_uncompress((const char *)in->p, in->n, (char *)out, &n) != SNAPPY_OK || n != on; }
    case C_LZ4: return LZ4_decompress_safe((const char *)in->p, (char *)out, (int)in->n, (int)on) != (int)on;
    case C_GZIP:
        if (use_deflate) {
            size_t got = 0;
            return libdeflate_gzip_decompress(ld, in->p, in->n, out, on, &got) != LIBDEFLATE_SUCCESS || got != on;
        } else {
            z_stream z;
            int r;
            memset(&z, 0, sizeof z);
            if (inflateInit2(&z, 15 + 32) != Z_OK) return 1;
            z.next_in = in->p; z.avail_in = (uInt)in->n; z.next_out = out; z.avail_out = (uInt)on;
            r = inflate(&z, Z_FINISH);
            inflateEnd(&z);
            return r != Z_STREAM_END || z.total_out != on;
        }
    default: { size_t r = ZSTD_decompress(out, on, in->p, in->n); return ZSTD_isError(r) || r != on; }
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int reps = 7, i, c, r, nitems = 0, a;
    size_t mib = 1, k, total_raw = 0;
    item items[64];
    uint8_t *out;
    struct libdeflate_decompressor *ld = libdeflate_alloc_decompressor();
    char msg[GPUFEED_ERROR_MAX];
    for (a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--reps") && a + 1 < argc) reps = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--mib") && a + 1 < argc) mib = (size_t)atoi(argv[++a]);
        else if (argv[a][0] == '-') { fprintf(stderr, "usage: bench_codecs [--reps N] [--mib M] [FILE...]\n"); return 2; }
    }
    if (reps < 5) reps = 5;
    if (mib < 1) mib = 1;
    for (i = 0; i < 4; i++)
        for (k = 0; k < 4; k++) items[nitems++].raw = make_buffer(i, mib << 20);
    for (a = 1; a < argc; a++) {
        FILE *f;
        if (argv[a][0] == '-') { a++; continue; }
        f = fopen(argv[a], "rb");
        if (!f) { perror(argv[a]); return 1; }
        while (nitems < 64) {
            buf b;
            b.p = (uint8_t *)malloc(mib << 20);
            b.n = fread(b.p, 1, mib << 20, f);
            if (b.n < 4096) { free(b.p); break; }
            items[nitems++].raw = b;
        }
        fclose(f);
    }
    for (i = 0; i < nitems; i++) total_raw += items[i].raw.n;
    out = (uint8_t *)malloc(mib << 20);
    {
        char model[256] = "unknown CPU", line[512];
        FILE *ci = fopen("/proc/cpuinfo", "r");
        while (ci && fgets(line, sizeof line, ci)) {
            char *c = strchr(line, ':');
            if (c && (!strncmp(line, "model name", 10) || !strncmp(line, "Model", 5))) {
                size_t k;
                snprintf(model, sizeof model, "%s", c + 2);
                k = strlen(model);
                while (k && (model[k - 1] == '\n' || model[k - 1] == ' ')) model[--k] = 0;
                break;
            }
        }
        if (ci) fclose(ci);
        printf("bench_codecs: %d buffers, %.1f MiB uncompressed; median of %d rounds after a warm-up; one thread on %s\n"
               "system libraries: zlib %s, libzstd %s, liblz4 %s, libdeflate %s\n\n",
               nitems, (double)total_raw / 1048576.0, reps, model, zlibVersion(), ZSTD_versionString(), LZ4_versionString(),
               LIBDEFLATE_VERSION_STRING);
    }
    printf("| codec | ratio | gpufeed MB/s | system | system MB/s | ours / system | target |\n");
    printf("|---|---|---|---|---|---|---|\n");
    for (c = 0; c < NC; c++) {
        int variants = c == C_GZIP ? 2 : 1, v;
        size_t total_comp = 0;
        for (i = 0; i < nitems; i++) { items[i].comp = compress_with(c, &items[i].raw); total_comp += items[i].comp.n; }
        if (!gf__codec_supported(gcodec[c])) {
            printf("| %s | %.2f | (compiled out) | %s | | | ≥ %.1f× |\n", cname[c], (double)total_raw / (double)total_comp, refname[c], target[c]);
            goto next;
        }
        for (i = 0; i < nitems; i++) { /* correctness first */
            gpufeed_result res = gf__decompress(gcodec[c], items[i].comp.p, items[i].comp.n, out, items[i].raw.n, msg, sizeof msg);
            if (res != GPUFEED_OK || memcmp(out, items[i].raw.p, items[i].raw.n) != 0) {
                fprintf(stderr, "bench_codecs: gpufeed %s output differs on buffer %d: %s\n", cname[c], i, res ? msg : "wrong bytes");
                return 1;
            }
        }
        for (v = 0; v < variants; v++) {
            double t_ours[64], t_ref[64], mo, mr;
            for (r = -1; r < reps; r++) {
                double t0 = now(), t1;
                for (i = 0; i < nitems; i++)
                    if (gf__decompress(gcodec[c], items[i].comp.p, items[i].comp.n, out, items[i].raw.n, msg, sizeof msg)) return 1;
                t1 = now();
                for (i = 0; i < nitems; i++)
                    if (ref_decompress(c, &items[i].comp, out, items[i].raw.n, ld, v)) { fprintf(stderr, "bench_codecs: %s failed\n", refname[c]); return 1; }
                if (r >= 0) { t_ours[r] = t1 - t0; t_ref[r] = now() - t1; }
            }
            qsort(t_ours, (size_t)reps, sizeof(double), cmp_double);
            qsort(t_ref, (size_t)reps, sizeof(double), cmp_double);
            mo = t_ours[reps / 2]; mr = t_ref[reps / 2];
            char tgt[32];
            if (v) snprintf(tgt, sizeof tgt, "(for reference)");
            else snprintf(tgt, sizeof tgt, "≥ %.1f× %s", target[c], mr / mo >= target[c] ? "met" : "**not met**");
            printf("| %s | %.2f | %.0f (%.0f–%.0f) | %s | %.0f (%.0f–%.0f) | **%.2f×** | %s |\n",
                   cname[c], (double)total_raw / (double)total_comp,
                   (double)total_raw / mo / 1e6, (double)total_raw / t_ours[reps - 1] / 1e6, (double)total_raw / t_ours[0] / 1e6,
                   v ? "libdeflate" : refname[c],
                   (double)total_raw / mr / 1e6, (double)total_raw / t_ref[reps - 1] / 1e6, (double)total_raw / t_ref[0] / 1e6,
                   mr / mo, tgt);
        }
    next:
        for (i = 0; i < nitems; i++) free(items[i].comp.p);
    }
    printf("\nthroughput = uncompressed bytes / time; (min–max) over the rounds; ratio = system time / gpufeed time\n");
    for (i = 0; i < nitems; i++) free(items[i].raw.p);
    free(out);
    libdeflate_free_decompressor(ld);
    return 0;
}
