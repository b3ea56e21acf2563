/* Tests of gpufeed's ZSTD decoder (gf__decompress with GPUFEED_CODEC_ZSTD).
   The system libzstd (-lzstd) only makes the compressed test data and
   cross-checks it; every frame is decoded by gpufeed and compared byte for
   byte. Hostile inputs must fail with a clear message, never crash.

       cc -O2 -std=c99 -I. tests/test_codec_zstd.c -o build/test_codec_zstd -lzstd
       build/test_codec_zstd

   Built with -DGPUFEED_USE_LIBZSTD, the same cases run through the libzstd
   path: valid data must decode the same, hostile data must still fail (its
   messages are libzstd's, so only the failure is checked). */
#define GPUFEED_IMPLEMENTATION
#include "../gpufeed.h"
#include "gf_test.h"
#include <zstd.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#ifdef GPUFEED_USE_LIBZSTD
#define OURS 0
#else
#define OURS 1
#endif

/* ---- data --------------------------------------------------------------- */

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
    return rng_state;
}

enum { K_RANDOM, K_TEXT, K_RUNS, K_ZERO, K_RECORDS, K_INT64, K_FLOAT64, K_MIXED, K_COUNT };
static const char *const kind_names[K_COUNT] = { "random", "text", "runs", "zero", "records", "int64", "float64", "mixed" };

static const char *const words[] = { "the", "of", "and", "to", "in", "is", "was", "for", "that", "on", "with", "as", "by", "at",
    "from", "his", "an", "were", "are", "which", "this", "be", "or", "has", "had", "one", "their", "not", "but", "new",
    "after", "first", "who", "also", "two", "its", "they", "been", "more", "other", "into", "time", "during", "city",
    "parquet", "column", "page", "zstd", "frame", "block", "literal", "sequence", "offset", "window" };

static void gen(int kind, uint8_t *a, size_t n)
{
    size_t i = 0;
    switch (kind) {
    case K_RANDOM: for (i = 0; i < n; i++) a[i] = (uint8_t)(rnd() >> 56); break;
    case K_TEXT:
        while (i < n) {
            uint64_t r = rnd();
            const char *w = words[(r % 54) * ((r >> 8) % 3 == 0) + ((r >> 16) % 9) * ((r >> 8) % 3 != 0)];
            while (*w && i < n) a[i++] = (uint8_t)*w++;
            if (i < n) a[i++] = (r >> 24) % 17 == 0 ? '\n' : ' ';
        }
        break;
    case K_RUNS:
        while (i < n) {
            size_t len = 1 + (size_t)(rnd() % 5000), k;
            uint8_t v = (uint8_t)rnd();
            for (k = 0; k < len && i < n; k++) a[i++] = v;
        }
        break;
    case K_ZERO: memset(a, 0, n); break;
    case K_RECORDS: { /* 24-byte records: three templates with small edits (repeat offsets, zero-literal matches) */
        static const char *const tpl[3] = { "id=000000;st=OK;v=1.000\n", "id=000000;st=NO;v=9.999\n", "id=000000;st=??;v=0.000\n" };
        uint32_t id = 0;
        while (i < n) {
            char rec[25];
            uint64_t r = rnd();
            memcpy(rec, tpl[r % 3], 24);
            if ((r >> 8) % 4 == 0) id++;
            rec[3] = (char)('0' + id / 100000 % 10); rec[4] = (char)('0' + id / 10000 % 10); rec[5] = (char)('0' + id / 1000 % 10);
            rec[6] = (char)('0' + id / 100 % 10); rec[7] = (char)('0' + id / 10 % 10); rec[8] = (char)('0' + id % 10);
            if ((r >> 16) % 5 == 0) rec[19] = (char)('0' + (r >> 24) % 10);
            memcpy(a + i, rec, n - i < 24 ? n - i : 24);
            i += n - i < 24 ? n - i : 24;
        }
        break;
    }
    case K_INT64: {
        int64_t v = 1000000;
        for (i = 0; i + 8 <= n; i += 8) { v += (int64_t)(rnd() % 16); memcpy(a + i, &v, 8); }
        for (; i < n; i++) a[i] = 0;
        break;
    }
    case K_FLOAT64: {
        double p = 100.0;
        for (i = 0; i + 8 <= n; i += 8) {
            double q;
            p += ((double)(rnd() % 201) - 100) / 100.0;
            if (p < 1) p = 1;
            q = (double)(int64_t)(p * 100) / 100;
            memcpy(a + i, &q, 8);
        }
        for (; i < n; i++) a[i] = 0;
        break;
    }
    default: { /* alternating stretches of random and text bytes */
        size_t k;
        while (i < n) {
            size_t len = 1 + (size_t)(rnd() % 40000);
            if (len > n - i) len = n - i;
            gen(rnd() % 2 ? K_RANDOM : K_TEXT, a + i, len);
            for (k = 0; k < len; k += 997) a[i + k] ^= 1;
            i += len;
        }
    }
    }
}

/* ---- compression (libzstd) ------------------------------------------------ */

typedef struct buf { uint8_t *p; size_t n, cap; } buf;
static void buf_put(buf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = (uint8_t *)realloc(b->p, b->cap);
        if (!b->p) { fprintf(stderr, "out of memory\n"); exit(2); }
    }
    if (n) memcpy(b->p + b->n, p, n);
    b->n += n;
}

enum { F_CHECKSUM = 1, F_NO_SIZE = 2, F_LONG = 4, F_WLOG17 = 8 };

/* appends one frame of src to out */
static void compress_into(buf *out, const uint8_t *src, size_t n, int level, int flags)
{
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    size_t bound = ZSTD_compressBound(n), got;
    uint8_t *tmp = (uint8_t *)malloc(bound ? bound : 1);
    if (!cc || !tmp) { fprintf(stderr, "out of memory\n"); exit(2); }
    ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, (flags & F_CHECKSUM) != 0);
    ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, (flags & F_NO_SIZE) == 0);
    if (flags & F_WLOG17) ZSTD_CCtx_setParameter(cc, ZSTD_c_windowLog, 17);
    if (flags & F_LONG) {
        ZSTD_CCtx_setParameter(cc, ZSTD_c_windowLog, 27);
        ZSTD_CCtx_setParameter(cc, ZSTD_c_enableLongDistanceMatching, 1);
    }
    got = ZSTD_compress2(cc, tmp, bound, src, n);
    if (ZSTD_isError(got)) { fprintf(stderr, "ZSTD_compress2: %s\n", ZSTD_getErrorName(got)); exit(2); }
    buf_put(out, tmp, got);
    free(tmp);
    ZSTD_freeCCtx(cc);
}

/* appends a skippable frame (magic 0x184D2A50 + k) of len bytes */
static void skippable_into(buf *out, unsigned k, size_t len)
{
    uint8_t h[8];
    size_t i;
    uint32_t m = 0x184D2A50u + (k & 15), l = (uint32_t)len;
    memcpy(h, &m, 4); memcpy(h + 4, &l, 4);
    buf_put(out, h, 8);
    for (i = 0; i < len; i++) { uint8_t v = (uint8_t)rnd(); buf_put(out, &v, 1); }
}

/* ---- decoding -------------------------------------------------------------- */

static char msg[GPUFEED_ERROR_MAX];

static gpufeed_result dec(const uint8_t *src, size_t n, uint8_t *dst, size_t dn)
{
    msg[0] = 0;
    return gf__decompress(GPUFEED_CODEC_ZSTD, src, n, dst, dn, msg, sizeof msg);
}

/* decodes src into exactly want_n bytes and compares; also checks libzstd
   agrees about the data */
static int roundtrip_check(const buf *c, const uint8_t *want, size_t want_n, const char *what)
{
    uint8_t *d = (uint8_t *)malloc(want_n + 1);
    gpufeed_result r;
    int ok;
    unsigned long long ref = ZSTD_decompress(d, want_n + 1, c->p, c->n);
    CHECK_MSG(!ZSTD_isError(ref) && ref == want_n, "%s: libzstd itself does not restore the data", what);
    memset(d, 0xA5, want_n + 1);
    r = dec(c->p, c->n, d, want_n);
    ok = r == GPUFEED_OK && (want_n == 0 || memcmp(d, want, want_n) == 0) && d[want_n] == 0xA5;
    CHECK_MSG(ok, "%s: %s%s", what, r ? msg : "output differs", r == GPUFEED_OK && d[want_n] != 0xA5 ? " (wrote past dst)" : "");
    free(d);
    return ok;
}

static int roundtrip(int kind, size_t n, int level, int flags)
{
    uint8_t *a = (uint8_t *)malloc(n ? n : 1);
    buf c = { 0, 0, 0 };
    char what[160];
    int ok;
    gen(kind, a, n);
    compress_into(&c, a, n, level, flags);
    snprintf(what, sizeof what, "%s, %lu bytes, level %d%s%s%s (%lu compressed)", kind_names[kind], (unsigned long)n, level,
             flags & F_CHECKSUM ? ", checksum" : "", flags & F_NO_SIZE ? ", no content size" : "", flags & F_LONG ? ", long window" : "",
             (unsigned long)c.n);
    ok = roundtrip_check(&c, a, n, what);
    free(a); free(c.p);
    return ok;
}

/* ---- valid data -------------------------------------------------------------- */

static const int levels[] = { -5, 1, 3, 9, 19, 22 };
#define N_LEVELS 6

static void test_small_sizes(void)
{
    static const size_t sizes[] = { 0, 1, 2, 3, 7, 8, 15, 16, 17, 31, 100, 255, 256, 1000, 1023, 1024, 4095, 10000 };
    size_t s;
    int k, l, f, fails = 0;
    for (s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (k = 0; k < K_COUNT; k++)
            for (l = 0; l < N_LEVELS; l++)
                for (f = 0; f < 4 && fails < 10; f++) fails += !roundtrip(k, sizes[s], levels[l], f);
}

static void test_block_edges(void)
{
    /* around the 128 KiB block maximum */
    static const size_t sizes[] = { 65536, 131071, 131072, 131073, 131072 * 2 + 17, 131072 * 3 - 1 };
    size_t s;
    int k, l, fails = 0;
    for (s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (k = 0; k < K_COUNT; k++)
            for (l = 0; l < N_LEVELS && fails < 10; l++) {
                if (levels[l] >= 19 && sizes[s] > 131073) continue; /* slow to compress; covered below */
                fails += !roundtrip(k, sizes[s], levels[l], (int)((s + (size_t)k + (size_t)l) % 4));
            }
}

static void test_large(void)
{
    static const size_t sizes[] = { 1u << 20, (1u << 20) + 12345, (4u << 20) - 3 };
    size_t s;
    int k, fails = 0;
    for (s = 0; s < 3; s++)
        for (k = 0; k < K_COUNT && fails < 5; k++) {
            fails += !roundtrip(k, sizes[s], 1, (int)(s + (size_t)k) % 4);
            fails += !roundtrip(k, sizes[s], 3, (int)(s + (size_t)k + 1) % 4);
            if (s == 0) fails += !roundtrip(k, sizes[s], -5, (int)(k % 4));
            if (s == 0 && (k == K_TEXT || k == K_RECORDS || k == K_FLOAT64)) fails += !roundtrip(k, sizes[s], 9, F_CHECKSUM);
        }
    /* the strongest levels use repeat modes, treeless literals and long matches */
    roundtrip(K_TEXT, 1u << 20, 19, F_CHECKSUM);
    roundtrip(K_RECORDS, 600000, 22, 0);
    roundtrip(K_MIXED, 400000, 22, F_CHECKSUM | F_NO_SIZE);
}

/* data repeated from far back: offsets beyond 128 KiB and a long window */
static void test_long_window(void)
{
    size_t n = (6u << 20) + 7, chunk = 1u << 20, i;
    uint8_t *a = (uint8_t *)malloc(n);
    buf c = { 0, 0, 0 };
    gen(K_RANDOM, a, chunk);
    gen(K_TEXT, a + chunk, 2 * chunk);
    memcpy(a + 3 * chunk, a, chunk);                 /* 3 MiB back */
    for (i = 4 * chunk; i < n; i++) a[i] = a[i - 4 * chunk + 5];
    compress_into(&c, a, n, 3, F_LONG);
    CHECK(c.n < n / 2); /* the repeats were found */
    roundtrip_check(&c, a, n, "long window, content size");
    c.n = 0;
    compress_into(&c, a, n, 1, F_LONG | F_NO_SIZE | F_CHECKSUM); /* window descriptor of 128 MiB */
    roundtrip_check(&c, a, n, "long window, no content size");
    c.n = 0;
    compress_into(&c, a, n, 19, F_LONG);
    roundtrip_check(&c, a, n, "long window, level 19");
    free(a); free(c.p);
}

/* several frames of different kinds, with skippable frames between */
static void test_multi_frame(void)
{
    static const size_t sizes[] = { 0, 1, 500, 131072, 200000, 70000, 3 };
    uint8_t *a = (uint8_t *)malloc(1u << 20);
    buf c = { 0, 0, 0 }, plain = { 0, 0, 0 };
    size_t i;
    skippable_into(&c, 0, 0);
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        gen((int)(i % K_COUNT), a, sizes[i]);
        compress_into(&c, a, sizes[i], levels[i % N_LEVELS], (int)(i % 4));
        buf_put(&plain, a, sizes[i]);
        if (i % 2) skippable_into(&c, (unsigned)i, 10 * i);
    }
    skippable_into(&c, 15, 33);
    roundtrip_check(&c, plain.p, plain.n, "7 frames and 5 skippable frames");
    /* skippable frames only: zero bytes */
    c.n = 0;
    skippable_into(&c, 3, 12); skippable_into(&c, 4, 0);
    roundtrip_check(&c, plain.p, 0, "skippable frames only");
    /* no input at all is no frames: zero bytes */
    CHECK(dec(NULL, 0, NULL, 0) == GPUFEED_OK);
    CHECK(dec(a, 0, a, 0) == GPUFEED_OK);
    free(a); free(c.p); free(plain.p);
}

/* streaming compression with flushes: many small blocks, raw and RLE
   blocks, tables repeated from the previous block */
static void test_streamed_blocks(void)
{
    size_t n = 900000, pos = 0;
    uint8_t *a = (uint8_t *)malloc(n), *tmp = (uint8_t *)malloc(ZSTD_CStreamOutSize());
    buf c = { 0, 0, 0 };
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    int k;
    for (k = 0; k < 18; k++) gen(k % K_COUNT, a + k * 50000, 50000);
    ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 6);
    ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
    while (pos < n) {
        size_t step = 1 + (size_t)(rnd() % 30000), left;
        ZSTD_inBuffer in;
        if (step > n - pos) step = n - pos;
        in.src = a + pos; in.size = step; in.pos = 0;
        do {
            ZSTD_outBuffer out;
            out.dst = tmp; out.size = ZSTD_CStreamOutSize(); out.pos = 0;
            left = ZSTD_compressStream2(cc, &out, &in, pos + step == n ? ZSTD_e_end : (rnd() % 3 ? ZSTD_e_flush : ZSTD_e_continue));
            if (ZSTD_isError(left)) { CHECK_MSG(0, "%s", ZSTD_getErrorName(left)); goto done; }
            buf_put(&c, tmp, out.pos);
        } while (in.pos < in.size || left != 0);
        pos += step;
    }
    roundtrip_check(&c, a, n, "streamed with flushes");
done:
    ZSTD_freeCCtx(cc); free(a); free(tmp); free(c.p);
}

/* ---- hand-made frames ---------------------------------------------------------- */

/* a frame around one compressed block: a 1 KiB window, no content size */
static size_t frame1(uint8_t *f, const uint8_t *block, size_t bn)
{
    static const uint8_t head[6] = { 0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x00 };
    uint32_t bh = (uint32_t)(bn << 3) | (2u << 1) | 1u;
    memcpy(f, head, 6);
    f[6] = (uint8_t)bh; f[7] = (uint8_t)(bh >> 8); f[8] = (uint8_t)(bh >> 16);
    memcpy(f + 9, block, bn);
    return 9 + bn;
}

/* "abcd" as raw literals, then one sequence with RLE tables: literal
   length 4, match length code mlc, offset code ofc; the bitstream is the
   1 or 2 bytes of `bits` */
static size_t seq_block(uint8_t *b, unsigned modes, unsigned ofc, unsigned mlc, unsigned bits)
{
    b[0] = 4 << 3; memcpy(b + 1, "abcd", 4);
    b[5] = 1; b[6] = (uint8_t)modes; b[7] = 4; b[8] = (uint8_t)ofc; b[9] = (uint8_t)mlc;
    b[10] = (uint8_t)bits;
    if (bits < 256) return 11;
    b[11] = (uint8_t)(bits >> 8);
    return 12;
}

/* a frame around one compressed block, window 2^wlog, no content size */
static size_t frame_w(uint8_t *f, unsigned wlog, const uint8_t *block, size_t bn)
{
    size_t n = frame1(f, block, bn);
    f[5] = (uint8_t)((wlog - 10) << 3);
    return n;
}

/* literals "abababab" Huffman-coded in 4 streams of one byte each (a
   direct-weight tree: 'a' and 'b' of one bit each), no sequences; s2 is
   the second stream's byte */
static size_t huf4_block(uint8_t *b, uint8_t s2)
{
    uint32_t v = 2u | (1u << 2) | (8u << 4) | (60u << 14);
    size_t k = 0;
    b[k++] = (uint8_t)v; b[k++] = (uint8_t)(v >> 8); b[k++] = (uint8_t)(v >> 16);
    b[k++] = 127 + 98;                  /* 98 weights of 4 bits: symbols 0..97 */
    memset(b + k, 0, 49); b[k + 48] = 0x01; k += 49;  /* weight 1 for 'a' (97); 'b' (98) is implied */
    b[k++] = 1; b[k++] = 0; b[k++] = 1; b[k++] = 0; b[k++] = 1; b[k++] = 0;  /* jump table */
    b[k++] = 0x05; b[k++] = s2; b[k++] = 0x05; b[k++] = 0x05;  /* "ab": bits 0, 1 under the end mark */
    b[k++] = 0;                         /* no sequences */
    return k;
}

#define HOSTILE(r, code, needle) do { \
    CHECK_MSG((r) != GPUFEED_OK, "accepted hostile input (expected %s)", needle); \
    if (OURS) { CHECK_MSG((r) == (code), "result %d (%s), expected %d; message: %s", (int)(r), gpufeed_result_string(r), (int)(code), msg); \
                CHECK_HAS(msg, needle); } \
    else CHECK_MSG(msg[0] != 0, "no message for %s", needle); } while (0)

static void test_handmade_ok(void)
{
    uint8_t f[64], blk[32], out[16];
    size_t n = frame1(f, blk, seq_block(blk, 0x54, 2, 1, 0x07)); /* offset value 4 + 3 = 7: offset 4; match length 4 */
    CHECK_MSG(dec(f, n, out, 8) == GPUFEED_OK && memcmp(out, "abcdabcd", 8) == 0, "%s", msg);
    /* dictionary id 0 means no dictionary */
    {
        static const uint8_t raw[] = { 0x28, 0xB5, 0x2F, 0xFD, 0x21, 0, 5, 0x29, 0, 0, 'h', 'e', 'l', 'l', 'o' };
        CHECK_MSG(dec(raw, sizeof raw, out, 5) == GPUFEED_OK && memcmp(out, "hello", 5) == 0, "%s", msg);
    }
}

/* more than 0x7F00 sequences in a block (the 3-byte count): 32513 times
   one literal and a 3-byte match at offset 1 */
static void test_handmade_many_sequences(void)
{
    enum { NSEQ = 32513 };
    uint8_t *blk = (uint8_t *)malloc(NSEQ + 64), *want = (uint8_t *)malloc(NSEQ * 4);
    buf c = { 0, 0, 0 };
    size_t k = 0, i;
    uint32_t v = 0u | (3u << 2) | ((uint32_t)NSEQ << 4);  /* raw literals, 20-bit size */
    blk[k++] = (uint8_t)v; blk[k++] = (uint8_t)(v >> 8); blk[k++] = (uint8_t)(v >> 16);
    for (i = 0; i < NSEQ; i++) {
        uint8_t lit = (uint8_t)('a' + i % 26);
        blk[k++] = lit;
        memset(want + 4 * i, lit, 4);
    }
    blk[k++] = 0xFF; blk[k++] = (uint8_t)(NSEQ - 0x7F00); blk[k++] = (uint8_t)((NSEQ - 0x7F00) >> 8);
    blk[k++] = 0x54; blk[k++] = 1; blk[k++] = 0; blk[k++] = 0;  /* RLE: literal length 1, repeat offset 1, match length 3 */
    blk[k++] = 0x01;                                            /* no bits at all */
    c.p = (uint8_t *)malloc(k + 9); c.cap = k + 9;
    c.n = frame_w(c.p, 17, blk, k);
    roundtrip_check(&c, want, NSEQ * 4, "32513 sequences in one block");
    free(blk); free(want); free(c.p);
}

static void test_handmade_huffman(void)
{
    uint8_t f[128], blk[96], out[16];
    size_t n = frame1(f, blk, huf4_block(blk, 0x05));
    gpufeed_result r = dec(f, n, out, 8);
    CHECK_MSG(r == GPUFEED_OK && memcmp(out, "abababab", 8) == 0, "%s", msg);
    n = frame1(f, blk, huf4_block(blk, 0x00));
    r = dec(f, n, out, 8); HOSTILE(r, GPUFEED_ERR_CODEC, "a Huffman stream lacks its end mark");
    n = frame1(f, blk, huf4_block(blk, 0x0D)); /* one bit too many */
    r = dec(f, n, out, 8); HOSTILE(r, GPUFEED_ERR_CODEC, "corrupt Huffman streams");
    n = frame1(f, blk, huf4_block(blk, 0x02)); /* one bit too few */
    r = dec(f, n, out, 8); HOSTILE(r, GPUFEED_ERR_CODEC, "corrupt Huffman streams");
    /* a treeless block after it reuses the tree */
    {
        uint8_t two[256];
        size_t k = huf4_block(blk, 0x05), m;
        uint32_t bh;
        m = frame1(two, blk, k);
        bh = (uint32_t)(k << 3) | (2u << 1);  /* not the last block */
        two[6] = (uint8_t)bh; two[7] = (uint8_t)(bh >> 8); two[8] = (uint8_t)(bh >> 16);
        /* second block: treeless, 4 streams: header, jump table, streams, no sequences */
        {
            uint8_t *q = two + m;
            uint32_t v = 3u | (1u << 2) | (8u << 4) | (10u << 14);
            uint32_t bh2 = (14u << 3) | (2u << 1) | 1u;
            q[0] = (uint8_t)bh2; q[1] = (uint8_t)(bh2 >> 8); q[2] = (uint8_t)(bh2 >> 16);
            q[3] = (uint8_t)v; q[4] = (uint8_t)(v >> 8); q[5] = (uint8_t)(v >> 16);
            q[6] = 1; q[7] = 0; q[8] = 1; q[9] = 0; q[10] = 1; q[11] = 0;
            q[12] = 0x06; q[13] = 0x06; q[14] = 0x06; q[15] = 0x06;  /* "ba" */
            q[16] = 0;
            m += 17;
        }
        {
            uint8_t o2[16];
            r = dec(two, m, o2, 16);
            CHECK_MSG(r == GPUFEED_OK && memcmp(o2, "abababab", 8) == 0 && memcmp(o2 + 8, "babababa", 8) == 0, "%s", msg);
        }
    }
}

static void test_hostile_handmade(void)
{
    uint8_t f[64], blk[32], out[300];
    size_t n;
    gpufeed_result r;
    /* offset 5 with only 4 bytes produced */
    n = frame1(f, blk, seq_block(blk, 0x54, 3, 1, 0x08));
    r = dec(f, n, out, 8); HOSTILE(r, GPUFEED_ERR_CODEC, "offset 5 beyond the 4 bytes produced");
    /* reserved bits of the symbol compression modes */
    n = frame1(f, blk, seq_block(blk, 0x55, 2, 1, 0x07));
    r = dec(f, n, out, 8);
    if (OURS) HOSTILE(r, GPUFEED_ERR_CODEC, "reserved bits set in the symbol compression modes");
    else CHECK(r == GPUFEED_OK); /* libzstd ignores them */
    /* repeat mode in the first block */
    n = frame1(f, blk, seq_block(blk, 0xFC, 2, 1, 0x07));
    r = dec(f, n, out, 8); HOSTILE(r, GPUFEED_ERR_CODEC, "repeated, but none was defined");
    /* RLE code out of range */
    n = frame1(f, blk, seq_block(blk, 0x54, 40, 1, 0x07));
    r = dec(f, n, out, 8); HOSTILE(r, GPUFEED_ERR_CODEC, "offset code 40 out of range");
    /* the bitstream holds a bit more than the sequence reads */
    n = frame1(f, blk, seq_block(blk, 0x54, 2, 1, 0x0F));
    r = dec(f, n, out, 8); HOSTILE(r, GPUFEED_ERR_CODEC, "not consumed exactly");
    /* treeless literals with no Huffman table before */
    { uint32_t v = 3u | (16u << 4) | (8u << 14); blk[0] = (uint8_t)v; blk[1] = (uint8_t)(v >> 8); blk[2] = (uint8_t)(v >> 16); } /* 1 stream, 16 literals in 8 bytes */
    memset(blk + 3, 0x11, 8);
    n = frame1(f, blk, 11);
    r = dec(f, n, out, 16); HOSTILE(r, GPUFEED_ERR_CODEC, "treeless literals");
    /* a match past the end of the page */
    n = frame1(f, blk, seq_block(blk, 0x54, 2, 1, 0x07));
    r = dec(f, n, out, 7); HOSTILE(r, GPUFEED_ERR_CODEC, "output exceeds the 7-byte page");
    /* a match of 1027 bytes: more than the 1 KiB window allows one block */
    n = frame1(f, blk, seq_block(blk, 0x54, 2, 46, 0x1C00));
    {
        uint8_t *o = (uint8_t *)malloc(2000);
        r = dec(f, n, o, 1031);
        if (OURS) HOSTILE(r, GPUFEED_ERR_CODEC, "the block's output exceeds its maximum of 1024 bytes");
        else CHECK(r == GPUFEED_OK); /* libzstd lets a block outgrow a small window */
        r = dec(f, n, o, 2000); HOSTILE(r, GPUFEED_ERR_CODEC, OURS ? "exceeds its maximum of 1024 bytes" : "");
        free(o);
    }
    /* literals beyond the page, and beyond a 1 KiB window's block */
    {
        uint8_t lb[8];
        uint32_t v = 1u | (1u << 2) | (100u << 4);                    /* RLE literals, 12-bit size */
        lb[0] = (uint8_t)v; lb[1] = (uint8_t)(v >> 8); lb[2] = 'z'; lb[3] = 0;
        n = frame1(f, lb, 4);
        r = dec(f, n, out, 50); HOSTILE(r, GPUFEED_ERR_CODEC, "100 literals: output exceeds the 50-byte page");
        r = dec(f, n, out, 100); CHECK_MSG(r == GPUFEED_OK && out[99] == 'z', "%s", msg);
        v = 1u | (3u << 2) | (2000u << 4);                            /* 20-bit size */
        lb[0] = (uint8_t)v; lb[1] = (uint8_t)(v >> 8); lb[2] = (uint8_t)(v >> 16); lb[3] = 'z'; lb[4] = 0;
        n = frame1(f, lb, 5);
        {
            uint8_t *o = (uint8_t *)malloc(4000);
            r = dec(f, n, o, 4000);
            if (OURS) HOSTILE(r, GPUFEED_ERR_CODEC, "2000 literals exceed the block maximum of 1024 bytes");
            else CHECK(r != GPUFEED_OK);
            free(o);
        }
    }
    /* a truncated skippable frame header */
    {
        static const uint8_t sk[] = { 0x50, 0x2A, 0x4D, 0x18, 0, 0 };
        r = dec(sk, sizeof sk, out, 0); HOSTILE(r, GPUFEED_ERR_CODEC, OURS ? "skippable frame header truncated" : "");
    }
    /* reserved block type */
    {
        static const uint8_t raw[] = { 0x28, 0xB5, 0x2F, 0xFD, 0x20, 5, 0x2F, 0, 0, 'h', 'e', 'l', 'l', 'o' };
        r = dec(raw, sizeof raw, out, 5); HOSTILE(r, GPUFEED_ERR_CODEC, "reserved block type");
    }
    /* dictionary id */
    {
        static const uint8_t raw[] = { 0x28, 0xB5, 0x2F, 0xFD, 0x21, 7, 5, 0x29, 0, 0, 'h', 'e', 'l', 'l', 'o' };
        static const uint8_t raw4[] = { 0x28, 0xB5, 0x2F, 0xFD, 0x23, 0x78, 0x56, 0x34, 0x12, 5, 0x29, 0, 0, 'h', 'e', 'l', 'l', 'o' };
        r = dec(raw, sizeof raw, out, 5); HOSTILE(r, GPUFEED_ERR_UNSUPPORTED, "ZSTD dictionaries are not supported");
        r = dec(raw4, sizeof raw4, out, 5); HOSTILE(r, GPUFEED_ERR_UNSUPPORTED, "dictionary 305419896");
    }
    /* reserved bit of the frame header descriptor */
    {
        static const uint8_t raw[] = { 0x28, 0xB5, 0x2F, 0xFD, 0x28, 5, 0x29, 0, 0, 'h', 'e', 'l', 'l', 'o' };
        r = dec(raw, sizeof raw, out, 5); HOSTILE(r, GPUFEED_ERR_CODEC, "reserved bit set in the frame header descriptor");
    }
    /* window over the limit: windowLog 41 */
    {
        static const uint8_t raw[] = { 0x28, 0xB5, 0x2F, 0xFD, 0x00, 31 << 3, 0x29, 0, 0, 'h', 'e', 'l', 'l', 'o' };
        r = dec(raw, sizeof raw, out, 5); HOSTILE(r, GPUFEED_ERR_LIMIT, "exceeds GPUFEED_MAX_ZSTD_WINDOW");
    }
    /* a 1 KiB window allows no 2000-byte block */
    {
        uint8_t raw[2020];
        uint32_t bh = (2000u << 3) | 1u;
        static const uint8_t head[6] = { 0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x00 };
        memcpy(raw, head, 6); raw[6] = (uint8_t)bh; raw[7] = (uint8_t)(bh >> 8); raw[8] = (uint8_t)(bh >> 16);
        memset(raw + 9, 'x', 2000);
        {
            uint8_t *o = (uint8_t *)malloc(2000);
            r = dec(raw, 2009, o, 2000);
            if (OURS) HOSTILE(r, GPUFEED_ERR_CODEC, "exceeds the frame's block maximum of 1024 bytes");
            else CHECK(r == GPUFEED_OK); /* libzstd does not hold blocks to the window */
            free(o);
        }
    }
    /* trailing bytes that are no frame; a truncated skippable frame */
    {
        static const uint8_t raw[] = { 0x28, 0xB5, 0x2F, 0xFD, 0x20, 5, 0x29, 0, 0, 'h', 'e', 'l', 'l', 'o', 0x12, 0x34 };
        static const uint8_t skip[] = { 0x5A, 0x2A, 0x4D, 0x18, 100, 0, 0, 0, 1, 2, 3 };
        r = dec(raw, sizeof raw, out, 5); HOSTILE(r, GPUFEED_ERR_CODEC, "input byte 14: not a zstd frame");
        r = dec(raw, 12, out, 5); HOSTILE(r, GPUFEED_ERR_CODEC, "truncated");
        r = dec(skip, sizeof skip, out, 0); HOSTILE(r, GPUFEED_ERR_CODEC, "skippable frame of 100 bytes runs past the input");
        r = dec(raw, 3, out, 5); HOSTILE(r, GPUFEED_ERR_CODEC, "not a zstd frame");
        r = dec(raw, 0, out, 5); HOSTILE(r, GPUFEED_ERR_CODEC, "frames produced 0 bytes, page header says 5");
    }
}

/* ---- hostile variants of real frames ------------------------------------------------ */

static void make_frame(buf *c, uint8_t **plain, size_t n, int kind, int level, int flags)
{
    *plain = (uint8_t *)malloc(n ? n : 1);
    gen(kind, *plain, n);
    c->n = 0;
    compress_into(c, *plain, n, level, flags);
}

static void test_truncation(void)
{
    buf c = { 0, 0, 0 };
    uint8_t *a, *d = (uint8_t *)malloc(3000);
    size_t cut;
    int bad = 0, f;
    for (f = 0; f < 2; f++) {
        make_frame(&c, &a, 3000, K_TEXT, 3, f ? F_CHECKSUM | F_NO_SIZE : 0);
        for (cut = 0; cut < c.n && bad < 5; cut++) {
            gpufeed_result r = dec(c.p, cut, d, 3000);
            if (r != GPUFEED_ERR_CODEC || (OURS && !strstr(msg, "zstd: "))) {
                bad++;
                CHECK_MSG(0, "prefix of %lu of %lu bytes: result %d, message %s", (unsigned long)cut, (unsigned long)c.n, (int)r, msg);
            }
        }
        free(a);
    }
    free(d); free(c.p);
}

/* single bit flips and random bytes: an error or, where the checksum
   vouches for the frame, the right data; never a crash */
static void test_bit_flips(void)
{
    static const int kinds[] = { K_TEXT, K_RECORDS, K_FLOAT64, K_MIXED };
    buf c = { 0, 0, 0 };
    uint8_t *a, *d;
    size_t n = 20000;
    int k, t, wrong = 0, errors = 0, oks = 0;
    d = (uint8_t *)malloc(n);
    for (k = 0; k < 4; k++) {
        make_frame(&c, &a, n, kinds[k], k == 3 ? 19 : 3, F_CHECKSUM);
        for (t = 0; t < 1500; t++) {
            size_t pos = 4 + (size_t)(rnd() % (c.n - 4)); /* the magic number aside */
            uint8_t save = c.p[pos];
            gpufeed_result r;
            if (t % 3) c.p[pos] ^= (uint8_t)(1u << (rnd() % 8));
            else c.p[pos] = (uint8_t)rnd();
            r = dec(c.p, c.n, d, n);
            if (r == GPUFEED_OK) { oks++; if (memcmp(a, d, n) != 0) wrong++; }
            else { errors++; CHECK_MSG(msg[0] != 0 && (r == GPUFEED_ERR_CODEC || r == GPUFEED_ERR_CHECKSUM || r == GPUFEED_ERR_LIMIT || r == GPUFEED_ERR_UNSUPPORTED), "result %d: %s", (int)r, msg); }
            c.p[pos] = save;
        }
        free(a);
    }
    CHECK_MSG(wrong == 0, "%d corrupted frames decoded to wrong data with a good checksum", wrong);
    CHECK(errors > 0);
    printf("  bit flips: %d errors, %d harmless\n", errors, oks);
    free(d); free(c.p);
}

static void test_checksum_mismatch(void)
{
    buf c = { 0, 0, 0 };
    uint8_t *a, *d = (uint8_t *)malloc(50000);
    gpufeed_result r;
    make_frame(&c, &a, 50000, K_RECORDS, 3, F_CHECKSUM);
    c.p[c.n - 2] ^= 0x40;
    r = dec(c.p, c.n, d, 50000);
    HOSTILE(r, GPUFEED_ERR_CHECKSUM, "content checksum mismatch");
    CHECK(r == GPUFEED_ERR_CHECKSUM);
    r = dec(c.p, c.n - 1, d, 50000);
    HOSTILE(r, GPUFEED_ERR_CODEC, "content checksum truncated");
    free(a); free(d); free(c.p);
}

static void test_wrong_size(void)
{
    buf c = { 0, 0, 0 };
    uint8_t *a, *d = (uint8_t *)malloc(300001);
    gpufeed_result r;
    int f;
    for (f = 0; f < 2; f++) {
        make_frame(&c, &a, 300000, K_TEXT, 1, f ? F_NO_SIZE : 0);
        r = dec(c.p, c.n, d, 299999);
        HOSTILE(r, GPUFEED_ERR_CODEC, f ? "output exceeds the 299999-byte page" : "content size 300000 exceeds the 299999 bytes left");
        r = dec(c.p, c.n, d, 300001);
        HOSTILE(r, GPUFEED_ERR_CODEC, "frames produced 300000 bytes, page header says 300001");
        free(a);
    }
    /* raw and RLE blocks past the end of the page */
    make_frame(&c, &a, 300000, K_RANDOM, 1, F_NO_SIZE);
    r = dec(c.p, c.n, d, 299999);
    HOSTILE(r, GPUFEED_ERR_CODEC, "raw block of");
    free(a);
    make_frame(&c, &a, 300000, K_ZERO, 1, F_NO_SIZE);
    r = dec(c.p, c.n, d, 299999);
    HOSTILE(r, GPUFEED_ERR_CODEC, "exceeds the 299999-byte page");
    free(a); free(d); free(c.p);
}

static void test_content_size_mismatch(void)
{
    buf c = { 0, 0, 0 };
    uint8_t *a, *d = (uint8_t *)malloc(70000);
    gpufeed_result r;
    make_frame(&c, &a, 70000, K_TEXT, 3, 0);
    /* single segment with a 4-byte content size after the descriptor */
    CHECK((c.p[4] >> 6) == 2 && (c.p[4] & 0x20));
    c.p[5] ^= 1; /* 69999 or 70001 */
    r = dec(c.p, c.n, d, 70000);
    HOSTILE(r, GPUFEED_ERR_CODEC, c.p[5] & 1 ? "exceeds the 70000 bytes left" : "frame content size says 69999 bytes, its blocks produced 70000");
    c.p[5] ^= 1;
    if (c.p[5] & 1) c.p[5] ^= 1; else c.p[5] -= 1; /* smaller than the blocks' output, whichever it was */
    r = dec(c.p, c.n, d, 70000);
    /* a single-segment frame's window is its content size, so the last block outgrows it */
    HOSTILE(r, GPUFEED_ERR_CODEC, "exceeds its maximum of 69999 bytes");
    free(a);
    /* a 128 KiB window and a content size of 300000: the sizes are compared at the end */
    d = (uint8_t *)realloc(d, 300000);
    make_frame(&c, &a, 300000, K_RECORDS, 3, F_WLOG17);
    CHECK((c.p[4] >> 6) == 2 && !(c.p[4] & 0x20));
    c.p[6] -= 1; /* the content size's low byte, after the window descriptor */
    r = dec(c.p, c.n, d, 300000);
    HOSTILE(r, GPUFEED_ERR_CODEC, "frame content size says 299999 bytes, its blocks produced 300000");
    free(a); free(d); free(c.p);
}

/* the page header's claim is checked against the codec's largest expansion */
static void test_max_expansion(void)
{
    buf c = { 0, 0, 0 };
    uint8_t *a;
    size_t n = 8u << 20;
    make_frame(&c, &a, n, K_ZERO, 19, F_NO_SIZE);
    CHECK_MSG((uint64_t)n <= gf__codec_max_expansion(GPUFEED_CODEC_ZSTD, c.n), "%lu bytes from %lu compressed", (unsigned long)n, (unsigned long)c.n);
    CHECK(gf__codec_max_expansion(GPUFEED_CODEC_ZSTD, 4) == 131072);
    CHECK(gf__codec_supported(GPUFEED_CODEC_ZSTD));
    roundtrip_check(&c, a, n, "8 MiB of zeros");
    free(a); free(c.p);
}

int main(void)
{
    printf("gpufeed ZSTD decoder (%s) against libzstd %s\n", OURS ? "ours" : "GPUFEED_USE_LIBZSTD", ZSTD_versionString());
    RUN(test_small_sizes);
    RUN(test_block_edges);
    RUN(test_large);
    RUN(test_long_window);
    RUN(test_multi_frame);
    RUN(test_streamed_blocks);
    RUN(test_handmade_ok);
    RUN(test_handmade_many_sequences);
    RUN(test_handmade_huffman);
    RUN(test_hostile_handmade);
    RUN(test_truncation);
    RUN(test_bit_flips);
    RUN(test_checksum_mismatch);
    RUN(test_wrong_size);
    RUN(test_content_size_mismatch);
    RUN(test_max_expansion);
    return TEST_SUMMARY();
}
