/* Differential tests: gpufeed's own SNAPPY and LZ4 decoders against what the
   system libraries compress (libsnappy, liblz4; `make test` installs the
   -dev packages), on many buffer shapes and sizes, plus the opt-in builds
   that hand codecs to the system libraries (GPUFEED_USE_LIBSNAPPY,
   GPUFEED_USE_LIBLZ4, GPUFEED_USE_BROTLI): this file is compiled once plain
   and once with all three (add -lbrotlienc -lbrotlidec for that build).

   cc -O2 -I. tests/test_codec_ref.c -o build/test_codec_ref -lsnappy -llz4 -lpthread -lm */
#define GPUFEED_IMPLEMENTATION
#define GPUFEED_STATIC
#include "gpufeed.h"
#include "gf_test.h"
#include <stdlib.h>
#include <snappy-c.h>
#include <lz4.h>
#include <lz4hc.h>
#ifdef GPUFEED_USE_BROTLI
#include <brotli/encode.h>
#endif

static uint64_t rs = 88172645463325252ull;
static uint64_t rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return rs; }

/* shapes: 0 random, 1 runs of one byte, 2 short period patterns, 3 text-like,
   4 int64 sequences, 5 all zero, 6 mixed */
static void fill(uint8_t *p, size_t n, int shape)
{
    size_t i = 0;
    static const char *w[] = { "gpu", "feed", "parquet", "column", "page", "a", "zz" };
    while (i < n) {
        switch (shape) {
        case 0: p[i++] = (uint8_t)rnd(); break;
        case 1: { size_t r = 1 + rnd() % 300; uint8_t v = (uint8_t)rnd(); while (r-- && i < n) p[i++] = v; break; }
        case 2: {
            size_t per = 1 + rnd() % 9, r = rnd() % 200, k;
            uint8_t pat[9];
            for (k = 0; k < per; k++) pat[k] = (uint8_t)rnd();
            for (k = 0; k < r && i < n; k++) p[i++] = pat[k % per];
            break;
        }
        case 3: { const char *s = w[rnd() % 7]; while (*s && i < n) p[i++] = (uint8_t)*s++; if (i < n) p[i++] = ' '; break; }
        case 4: { uint64_t v = (uint64_t)i * 3 + (rnd() % 4); size_t k; for (k = 0; k < 8 && i < n; k++) p[i++] = (uint8_t)(v >> (8 * k)); break; }
        case 5: p[i++] = 0; break;
        default: fill(p + i, n - i < 64 ? n - i : 64, (int)(rnd() % 6)); i += n - i < 64 ? n - i : 64; break;
        }
    }
}

static const size_t sizes[] = { 0, 1, 2, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 255, 256, 1000, 4095, 4096,
                                65535, 65536, 65537, 300000, 1 << 20 };

static void test_snappy_vs_libsnappy(void)
{
    size_t si; int shape, bad = 0, runs = 0;
    char msg[GPUFEED_ERROR_MAX];
    for (si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (shape = 0; shape < 7; shape++) {
            size_t n = sizes[si], cn = snappy_max_compressed_length(n);
            uint8_t *raw = (uint8_t *)malloc(n + 1), *comp = (uint8_t *)malloc(cn), *out = (uint8_t *)malloc(n + 1);
            fill(raw, n, shape);
            CHECK(snappy_compress((const char *)raw, n, (char *)comp, &cn) == SNAPPY_OK);
            if (gf__decompress(GPUFEED_CODEC_SNAPPY, comp, cn, out, n, msg, sizeof msg) != GPUFEED_OK || memcmp(out, raw, n) != 0) {
                bad++; fprintf(stderr, "  snappy size %u shape %d: %s\n", (unsigned)n, shape, msg);
            }
            if (n > 0) CHECK(gf__decompress(GPUFEED_CODEC_SNAPPY, comp, cn, out, n - 1, msg, sizeof msg) != GPUFEED_OK);
            CHECK(gf__decompress(GPUFEED_CODEC_SNAPPY, comp, cn, out, n + 1, msg, sizeof msg) != GPUFEED_OK);
            runs++;
            free(raw); free(comp); free(out);
        }
    CHECK_MSG(bad == 0, "%d of %d buffers differ", bad, runs);
}

static void test_lz4_vs_liblz4(void)
{
    size_t si; int shape, level, bad = 0, runs = 0;
    char msg[GPUFEED_ERROR_MAX];
    for (si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (shape = 0; shape < 7; shape++)
            for (level = 0; level < 3; level++) { /* fast, fast acceleration 8, HC 9 */
                size_t n = sizes[si];
                int cap = LZ4_compressBound((int)n), cn;
                uint8_t *raw = (uint8_t *)malloc(n + 1), *comp = (uint8_t *)malloc((size_t)cap + 8), *out = (uint8_t *)malloc(n + 1);
                uint8_t *framed = (uint8_t *)malloc((size_t)cap + 16);
                fill(raw, n, shape);
                if (level == 0) cn = LZ4_compress_default((const char *)raw, (char *)comp, (int)n, cap);
                else if (level == 1) cn = LZ4_compress_fast((const char *)raw, (char *)comp, (int)n, cap, 8);
                else cn = LZ4_compress_HC((const char *)raw, (char *)comp, (int)n, cap, 9);
                CHECK(cn > 0);
                if (gf__decompress(GPUFEED_CODEC_LZ4_RAW, comp, (size_t)cn, out, n, msg, sizeof msg) != GPUFEED_OK || memcmp(out, raw, n) != 0) {
                    bad++; fprintf(stderr, "  lz4 size %u shape %d level %d: %s\n", (unsigned)n, shape, level, msg);
                }
                /* the legacy codec id: Hadoop framing around the same block */
                framed[0] = (uint8_t)(n >> 24); framed[1] = (uint8_t)(n >> 16); framed[2] = (uint8_t)(n >> 8); framed[3] = (uint8_t)n;
                framed[4] = (uint8_t)((unsigned)cn >> 24); framed[5] = (uint8_t)((unsigned)cn >> 16); framed[6] = (uint8_t)((unsigned)cn >> 8); framed[7] = (uint8_t)cn;
                memcpy(framed + 8, comp, (size_t)cn);
                if (gf__decompress(GPUFEED_CODEC_LZ4, framed, (size_t)cn + 8, out, n, msg, sizeof msg) != GPUFEED_OK || memcmp(out, raw, n) != 0) {
                    bad++; fprintf(stderr, "  lz4 hadoop size %u shape %d level %d: %s\n", (unsigned)n, shape, level, msg);
                }
                if (n > 0) CHECK(gf__decompress(GPUFEED_CODEC_LZ4_RAW, comp, (size_t)cn, out, n - 1, msg, sizeof msg) != GPUFEED_OK);
                CHECK(gf__decompress(GPUFEED_CODEC_LZ4_RAW, comp, (size_t)cn, out, n + 1, msg, sizeof msg) != GPUFEED_OK);
                runs++;
                free(raw); free(comp); free(out); free(framed);
            }
    CHECK_MSG(bad == 0, "%d of %d buffers differ", bad, runs);
}

/* every truncation of a compressed buffer is an error, never a crash */
static void test_truncations(void)
{
    uint8_t raw[3000], comp[4000], out[3000];
    char msg[GPUFEED_ERROR_MAX];
    size_t cn = sizeof comp, k;
    int lcn, ok = 1;
    fill(raw, sizeof raw, 6);
    CHECK(snappy_compress((const char *)raw, sizeof raw, (char *)comp, &cn) == SNAPPY_OK);
    for (k = 0; k < cn; k++)
        if (gf__decompress(GPUFEED_CODEC_SNAPPY, comp, k, out, sizeof raw, msg, sizeof msg) == GPUFEED_OK) ok = 0;
    CHECK_MSG(ok, "a truncated snappy buffer decoded");
    lcn = LZ4_compress_default((const char *)raw, (char *)comp, (int)sizeof raw, (int)sizeof comp);
    for (k = 0; k < (size_t)lcn; k++)
        if (gf__decompress(GPUFEED_CODEC_LZ4_RAW, comp, k, out, sizeof raw, msg, sizeof msg) == GPUFEED_OK) ok = 0;
    CHECK_MSG(ok, "a truncated lz4 block decoded");
    CHECK(msg[0] != 0);
}

#ifdef GPUFEED_USE_BROTLI
/* the opt-in BROTLI path: round trips, exact sizes, truncation, garbage */
static void test_brotli_syslib(void)
{
    size_t si; int shape, bad = 0;
    char msg[GPUFEED_ERROR_MAX];
    for (si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (shape = 0; shape < 7; shape += 3) {
            size_t n = sizes[si], cn = BrotliEncoderMaxCompressedSize(n) + 16, k;
            uint8_t *raw = (uint8_t *)malloc(n + 1), *comp = (uint8_t *)malloc(cn), *out = (uint8_t *)malloc(n + 1);
            fill(raw, n, shape);
            CHECK(BrotliEncoderCompress(5, 22, BROTLI_MODE_GENERIC, n, raw, &cn, comp));
            if (gf__decompress(GPUFEED_CODEC_BROTLI, comp, cn, out, n, msg, sizeof msg) != GPUFEED_OK || memcmp(out, raw, n) != 0) bad++;
            if (n > 0) CHECK(gf__decompress(GPUFEED_CODEC_BROTLI, comp, cn, out, n - 1, msg, sizeof msg) == GPUFEED_ERR_CODEC);
            CHECK(gf__decompress(GPUFEED_CODEC_BROTLI, comp, cn, out, n + 1, msg, sizeof msg) == GPUFEED_ERR_CODEC);
            if (n > 1000) {
                for (k = 0; k < cn; k += 1 + cn / 64)
                    CHECK(gf__decompress(GPUFEED_CODEC_BROTLI, comp, k, out, n, msg, sizeof msg) == GPUFEED_ERR_CODEC);
                CHECK_HAS(msg, "brotli");
            }
            free(raw); free(comp); free(out);
        }
    CHECK_MSG(bad == 0, "%d buffers differ", bad);
    {
        uint8_t junk[64], out[100];
        memset(junk, 0xA5, sizeof junk);
        CHECK(gf__decompress(GPUFEED_CODEC_BROTLI, junk, sizeof junk, out, sizeof out, msg, sizeof msg) == GPUFEED_ERR_CODEC);
        CHECK_HAS(msg, "brotli");
    }
}
#else
/* without the opt-in, BROTLI is a clear error naming the macro */
static void test_brotli_missing(void)
{
    uint8_t in[4] = { 1, 2, 3, 4 }, out[4];
    char msg[GPUFEED_ERROR_MAX];
    CHECK(!gf__codec_supported(GPUFEED_CODEC_BROTLI));
    CHECK(gf__decompress(GPUFEED_CODEC_BROTLI, in, 4, out, 4, msg, sizeof msg) == GPUFEED_ERR_UNSUPPORTED);
    CHECK_HAS(msg, "GPUFEED_USE_BROTLI");
    CHECK(gf__decompress(GPUFEED_CODEC_LZO, in, 4, out, 4, msg, sizeof msg) == GPUFEED_ERR_UNSUPPORTED);
    CHECK_HAS(msg, "LZO");
}
#endif

int main(void)
{
#if defined(GPUFEED_USE_LIBSNAPPY) || defined(GPUFEED_USE_LIBLZ4) || defined(GPUFEED_USE_BROTLI)
    printf("(system-library build: GPUFEED_USE_LIBSNAPPY / GPUFEED_USE_LIBLZ4 / GPUFEED_USE_BROTLI)\n");
#endif
    RUN(test_snappy_vs_libsnappy);
    RUN(test_lz4_vs_liblz4);
    RUN(test_truncations);
#ifdef GPUFEED_USE_BROTLI
    RUN(test_brotli_syslib);
#else
    RUN(test_brotli_missing);
#endif
    return TEST_SUMMARY();
}
