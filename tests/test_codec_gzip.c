/* Tests of the GZIP codec: gpufeed.h's own inflate, or with
   -DGPUFEED_USE_ZLIB the system zlib behind the same entry point. The
   system zlib only makes the compressed data and never checks our output:
   every decoded page is compared with the bytes that went in.

     cc -O2 -std=c99 -Wall -Wextra -Werror -pedantic -I. tests/test_codec_gzip.c -o build/test_codec_gzip -lz
     cc ... -DGPUFEED_USE_ZLIB ... (the same cases through zlib)

   Valid data: random, text-like, runs, zeros; 0 and 1 bytes, sizes around
   the 32 KiB window and 64 KiB, 1 MiB; levels 0-9 x the five strategies;
   gzip, zlib and multi-member gzip. Hostile data: truncation at every byte,
   random bit flips, checksum and size mismatches, hand-built deflate
   streams with broken Huffman codes, distances, block types and headers.
   Each hostile case expects an error code and a message naming the fault
   (through zlib: an error, with zlib's own words). Run from the repository
   root. */
#define GPUFEED_IMPLEMENTATION
#include "../gpufeed.h"
#include "gf_test.h"
#include "pq_writer.h"
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#ifdef GPUFEED_USE_ZLIB
#define OURS 0
#else
#define OURS 1
#endif

/* ---- helpers ------------------------------------------------------------- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
    return rng_state;
}

typedef pqw_buf buf;

static char last_msg[GPUFEED_ERROR_MAX];
static int last_mismatch;

/* Decodes src[0..n) into exactly dn bytes. Both buffers are copied to
   allocations of their exact size, so a sanitizer sees any byte read or
   written outside them. With want != NULL, an OK result must equal it. */
static gpufeed_result dec(const uint8_t *src, size_t n, size_t dn, const uint8_t *want)
{
    uint8_t *s = (uint8_t *)malloc(n ? n : 1), *d = (uint8_t *)malloc(dn ? dn : 1);
    gpufeed_result r;
    if (!s || !d) { fprintf(stderr, "out of memory\n"); exit(2); }
    if (n) memcpy(s, src, n);
    memset(d, 0xA5, dn ? dn : 1);
    last_msg[0] = 0;
    r = gf__decompress(GPUFEED_CODEC_GZIP, s, n, d, dn, last_msg, sizeof last_msg);
    last_mismatch = r == GPUFEED_OK && want && dn && memcmp(d, want, dn) != 0;
    free(s); free(d);
    return r;
}

/* zlib's deflate: wbits 15 zlib, 31 gzip, -15 raw deflate */
static void zdeflate(buf *out, const uint8_t *in, size_t n, int level, int strategy, int wbits)
{
    z_stream z;
    int ret;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, level, Z_DEFLATED, wbits, 8, strategy) != Z_OK) { fprintf(stderr, "deflateInit2 failed\n"); exit(2); }
    pqw_reserve(out, deflateBound(&z, (uLong)n) + 16);
    z.next_in = (Bytef *)(uintptr_t)in; z.avail_in = (uInt)n;
    z.next_out = out->p + out->n; z.avail_out = (uInt)(out->cap - out->n);
    ret = deflate(&z, Z_FINISH);
    if (ret != Z_STREAM_END) { fprintf(stderr, "deflate returned %d\n", ret); exit(2); }
    out->n += z.total_out;
    deflateEnd(&z);
}

static uint32_t zcrc(const uint8_t *p, size_t n) { return (uint32_t)crc32(0, p, (uInt)n); }

/* a gzip member around a raw deflate stream */
static void gzip_wrap(buf *out, const buf *raw, const uint8_t *data, size_t n)
{
    static const uint8_t hdr[10] = { 0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3 };
    pqw_put(out, hdr, 10);
    pqw_append(out, raw);
    pqw_le32(out, zcrc(data, n));
    pqw_le32(out, (uint32_t)n);
}
/* a zlib stream around a raw deflate stream */
static void zlib_wrap(buf *out, const buf *raw, const uint8_t *data, size_t n)
{
    uint32_t a = (uint32_t)adler32(1, data, (uInt)n);
    pqw_u8(out, 0x78); pqw_u8(out, 0x9C);
    pqw_append(out, raw);
    pqw_u8(out, a >> 24); pqw_u8(out, (a >> 16) & 0xFF); pqw_u8(out, (a >> 8) & 0xFF); pqw_u8(out, a & 0xFF);
}

/* the error code, and (our decoder) the fault named in the message; zlib's
   words differ, so through zlib only the error itself is required */
#define EXPECT_ERR(r, code, needle) do { \
    if (OURS) { \
        CHECK_MSG((r) == (code), "result %d (\"%s\"), expected %d", (int)(r), last_msg, (int)(code)); \
        CHECK_HAS(last_msg, needle); \
    } else { \
        CHECK_MSG((r) < 0, "result %d, expected an error", (int)(r)); \
        CHECK_HAS(last_msg, "gzip"); \
    } } while (0)
/* the same, where zlib is held to the code and the words too */
#define EXPECT_ERR_BOTH(r, code, needle, zneedle) do { \
    CHECK_MSG((r) == (code), "result %d (\"%s\"), expected %d", (int)(r), last_msg, (int)(code)); \
    CHECK_HAS(last_msg, OURS ? (needle) : (zneedle)); } while (0)
#define EXPECT_OK(r) CHECK_MSG((r) == GPUFEED_OK && !last_mismatch, "result %d (\"%s\")%s", (int)(r), last_msg, last_mismatch ? ", output differs" : "")

/* ---- test data ------------------------------------------------------------- */

enum { K_RANDOM, K_TEXT, K_RUNS, K_ZERO, K_KINDS };
static const char *const kind_name[K_KINDS] = { "random", "text", "runs", "zero" };

static void fill(uint8_t *p, size_t n, int kind)
{
    static const char *const words[] = { "the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "as",
        "was", "with", "be", "by", "on", "not", "parquet", "column", "page", "gzip", "deflate", "batch",
        "tensor", "gradient", "loader", "1998-03-14", "GPUFEED", "0.000125", "NULL" };
    size_t i = 0;
    switch (kind) {
    case K_RANDOM: for (i = 0; i < n; i++) p[i] = (uint8_t)(rnd() >> 24); break;
    case K_TEXT:
        while (i < n) {
            const char *w = words[(rnd() % 30) * (rnd() % 30) / 30];
            while (*w && i < n) p[i++] = (uint8_t)*w++;
            if (i < n) p[i++] = (rnd() % 9) ? ' ' : '\n';
        }
        break;
    case K_RUNS:
        while (i < n) {
            size_t len = 1 + rnd() % (rnd() % 8 ? 20 : 600);
            uint8_t v = (uint8_t)(rnd() % 5);
            while (len-- && i < n) p[i++] = v;
        }
        break;
    default: memset(p, 0, n); break;
    }
}

static const int strategies[5] = { Z_DEFAULT_STRATEGY, Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE, Z_FIXED };
static const char *const strategy_name[5] = { "default", "filtered", "huffman_only", "rle", "fixed" };

/* one buffer at one level and strategy: as gzip, as zlib, and (when
   multi) as three gzip members one after another */
static int roundtrip(const uint8_t *data, size_t n, int level, int s, int multi, const char *what)
{
    buf c = {0};
    gpufeed_result r;
    int bad = 0;
    zdeflate(&c, data, n, level, strategies[s], 31);
    r = dec(c.p, c.n, n, data);
    if (r || last_mismatch) { bad++; fprintf(stderr, "  gzip %s n=%llu level %d %s: %d %s%s\n", what, (unsigned long long)n, level, strategy_name[s], (int)r, last_msg, last_mismatch ? " (output differs)" : ""); }
    c.n = 0;
    zdeflate(&c, data, n, level, strategies[s], 15);
    r = dec(c.p, c.n, n, data);
    if (r || last_mismatch) { bad++; fprintf(stderr, "  zlib %s n=%llu level %d %s: %d %s%s\n", what, (unsigned long long)n, level, strategy_name[s], (int)r, last_msg, last_mismatch ? " (output differs)" : ""); }
    if (multi) {
        size_t a = n / 3, b = n - n / 4;
        c.n = 0;
        zdeflate(&c, data, a, level, strategies[s], 31);
        zdeflate(&c, data + a, b - a, level, strategies[s], 31);
        zdeflate(&c, data + b, n - b, level, strategies[s], 31);
        r = dec(c.p, c.n, n, data);
        if (r || last_mismatch) { bad++; fprintf(stderr, "  3 members %s n=%llu level %d %s: %d %s%s\n", what, (unsigned long long)n, level, strategy_name[s], (int)r, last_msg, last_mismatch ? " (output differs)" : ""); }
    }
    pqw_free(&c);
    return bad;
}

/* ---- valid data ------------------------------------------------------------- */

static void test_levels_strategies_forms(void)
{
    static const size_t sizes[] = { 0, 1, 2, 3, 17, 258, 1000, 4099, 32767, 32768, 32769, 65535, 65536, 65537 };
    size_t si;
    int k, level, s, bad = 0, runs = 0;
    for (si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        uint8_t *data = (uint8_t *)malloc(n ? n : 1);
        for (k = 0; k < K_KINDS; k++) {
            fill(data, n, k);
            for (level = 0; level <= 9; level++)
                for (s = 0; s < 5; s++) {
                    /* the big ones as three members at a few levels only */
                    int multi = n < 32767 || level == 1 || level == 6 || level == 9;
                    bad += roundtrip(data, n, level, s, multi, kind_name[k]);
                    runs++;
                }
        }
        free(data);
    }
    CHECK_MSG(bad == 0, "%d of %d combinations failed", bad, runs);
}

static void test_one_mebibyte(void)
{
    size_t n = (size_t)1 << 20;
    uint8_t *data = (uint8_t *)malloc(n);
    static const int levels[] = { 0, 1, 6, 9 };
    int k, li, s, bad = 0;
    for (k = 0; k < K_KINDS; k++) {
        fill(data, n, k);
        for (li = 0; li < 4; li++)
            for (s = 0; s < 5; s++) {
                /* the slow levels on text and runs; zlib form and members at level 6 */
                if (levels[li] == 9 && (k == K_RANDOM || k == K_ZERO)) continue;
                bad += roundtrip(data, n, levels[li], s, levels[li] == 6 && s == 0, kind_name[k]);
            }
    }
    CHECK_MSG(bad == 0, "%d failed", bad);
    free(data);
}

/* matches that end exactly at, or near, the end of the page (the byte-exact
   copy path) and long runs at every distance 1..40 */
static void test_match_tails(void)
{
    uint8_t data[3000];
    int dist, tail, bad = 0;
    for (dist = 1; dist <= 40; dist++)
        for (tail = 0; tail < 24; tail++) {
            size_t n = (size_t)(dist + 258 + tail), i;
            for (i = 0; i < (size_t)dist; i++) data[i] = (uint8_t)(rnd() >> 40);
            for (; i < n; i++) data[i] = data[i - (size_t)dist];
            bad += roundtrip(data, n, 9, 0, 0, "tail");
            bad += roundtrip(data, n, 1, 3, 0, "tail");
        }
    CHECK_MSG(bad == 0, "%d failed", bad);
}

static void test_members_and_padding(void)
{
    static const uint8_t text[] = "one member, then another, then an empty one, then zeros";
    size_t n = sizeof text - 1;
    buf c = {0}, e = {0};
    gpufeed_result r;
    /* an empty member alone: an empty page */
    zdeflate(&e, text, 0, 6, 0, 31);
    r = dec(e.p, e.n, 0, NULL); EXPECT_OK(r);
    /* members with empty ones between them */
    pqw_append(&c, &e);
    zdeflate(&c, text, 10, 6, 0, 31);
    pqw_append(&c, &e);
    zdeflate(&c, text + 10, n - 10, 0, 0, 31);
    pqw_append(&c, &e);
    r = dec(c.p, c.n, n, text); EXPECT_OK(r);
    /* zero padding after the last member */
    pqw_fill(&c, 0, 1);
    r = dec(c.p, c.n, n, text); EXPECT_OK(r);
    pqw_fill(&c, 0, 300);
    r = dec(c.p, c.n, n, text); EXPECT_OK(r);
    /* but not other bytes */
    pqw_u8(&c, 7);
    r = dec(c.p, c.n, n, text);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "neither zero padding nor another gzip member");
    c.n -= 1;
    pqw_u8(&c, 0x1F);     /* half a magic */
    r = dec(c.p, c.n, n, text);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "neither zero padding nor another gzip member");
    /* a zlib stream with zero padding; and a second stream after it */
    c.n = 0;
    zdeflate(&c, text, n, 6, 0, 15);
    pqw_fill(&c, 0, 5);
    r = dec(c.p, c.n, n, text); EXPECT_OK(r);
    if (OURS) {
        zdeflate(&c, text, 0, 6, 0, 15);
        r = dec(c.p, c.n, n, text);
        EXPECT_ERR(r, GPUFEED_ERR_CODEC, "after the zlib stream");
    }
    /* the page ends inside the second member: output short of dn */
    c.n = 0;
    zdeflate(&c, text, 10, 6, 0, 31);
    {
        size_t first = c.n;
        zdeflate(&c, text + 10, n - 10, 6, 0, 31);
        r = dec(c.p, first, n, text);
        EXPECT_ERR(r, GPUFEED_ERR_CODEC, "produced 10 bytes, the page header says");
        r = dec(c.p, first + 5, n, text);
        EXPECT_ERR(r, GPUFEED_ERR_CODEC, "truncated");
    }
    pqw_free(&c); pqw_free(&e);
}

/* ---- headers ---------------------------------------------------------------- */

static void member_with_header(buf *out, unsigned flg, int good_hcrc, const uint8_t *data, size_t n)
{
    buf raw = {0};
    size_t start = out->n;
    uint8_t h[10] = { 0x1F, 0x8B, 8, 0, 0x5E, 0x11, 0x70, 0x66, 0, 255 };
    h[3] = (uint8_t)flg;
    pqw_put(out, h, 10);
    if (flg & 4) { pqw_le16(out, 7); pqw_put(out, "AB\3\0xyz", 7); }
    if (flg & 8) pqw_put(out, "page-0007.bin", 14);
    if (flg & 16) pqw_put(out, "a comment", 10);
    if (flg & 2) {
        uint32_t c = zcrc(out->p + start, out->n - start) & 0xFFFF;
        pqw_le16(out, good_hcrc ? c : c ^ 0x0100);
    }
    zdeflate(&raw, data, n, 6, 0, -15);
    pqw_append(out, &raw);
    pqw_le32(out, zcrc(data, n));
    pqw_le32(out, (uint32_t)n);
    pqw_free(&raw);
}

static void test_header_fields(void)
{
    static const uint8_t text[] = "header fields: FTEXT FHCRC FEXTRA FNAME FCOMMENT, and the deflate data after them";
    size_t n = sizeof text - 1;
    unsigned flg;
    buf c = {0};
    gpufeed_result r;
    for (flg = 0; flg < 32; flg++) {
        c.n = 0;
        member_with_header(&c, flg, 1, text, n);
        r = dec(c.p, c.n, n, text);
        CHECK_MSG(r == GPUFEED_OK && !last_mismatch, "FLG 0x%02x: %d %s", flg, (int)r, last_msg);
    }
    /* a wrong header CRC16 */
    c.n = 0;
    member_with_header(&c, 2 | 8, 0, text, n);
    r = dec(c.p, c.n, n, text);
    EXPECT_ERR_BOTH(r, GPUFEED_ERR_CHECKSUM, "header CRC16", "header crc mismatch");
    /* reserved flags */
    for (flg = 0x20; flg <= 0x80; flg <<= 1) {
        c.n = 0;
        member_with_header(&c, flg | 8, 1, text, n);
        r = dec(c.p, c.n, n, text);
        EXPECT_ERR(r, GPUFEED_ERR_CODEC, "reserved header flag bits");
    }
    /* the second member's flags too */
    c.n = 0;
    member_with_header(&c, 0, 1, text, n);
    member_with_header(&c, 0x40, 1, text, n);
    r = dec(c.p, c.n, 2 * n, NULL);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "member 2");
    /* compression method 7 */
    c.n = 0;
    member_with_header(&c, 0, 1, text, n);
    c.p[2] = 7;
    r = dec(c.p, c.n, n, text);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "compression method 7");
    /* no terminator for FNAME, FEXTRA longer than the page */
    c.n = 0;
    pqw_put(&c, "\x1F\x8B\x08\x08\0\0\0\0\0\x03page", 14);
    r = dec(c.p, c.n, 1, NULL);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "truncated");
    c.n = 0;
    pqw_put(&c, "\x1F\x8B\x08\x04\0\0\0\0\0\x03\xFF\xFF" "abc", 15);
    r = dec(c.p, c.n, 1, NULL);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "truncated");
    /* neither gzip nor zlib */
    c.n = 0;
    pqw_put(&c, "PAR1 not compressed at all", 26);
    r = dec(c.p, c.n, 26, NULL);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "neither a gzip member nor a zlib stream");
    r = dec(c.p, 1, 26, NULL);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "neither a gzip member nor a zlib stream");
    r = dec(c.p, 0, 26, NULL);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "empty page body");
    pqw_free(&c);
}

static void test_zlib_header(void)
{
    static const uint8_t text[] = "a zlib stream under the GZIP codec id";
    size_t n = sizeof text - 1;
    buf c = {0}, raw = {0};
    gpufeed_result r;
    unsigned lvl;
    zdeflate(&raw, text, n, 6, 0, -15);
    /* every FLEVEL and window size zlib can say */
    for (lvl = 0; lvl < 4; lvl++) {
        unsigned cinfo;
        for (cinfo = 0; cinfo <= 7; cinfo++) {
            unsigned cmf = (cinfo << 4) | 8, fl = lvl << 6;
            fl += 31 - (cmf * 256 + fl) % 31;
            c.n = 0;
            pqw_u8(&c, cmf); pqw_u8(&c, fl);
            pqw_append(&c, &raw);
            { uint32_t a = (uint32_t)adler32(1, text, (uInt)n); pqw_u8(&c, a >> 24); pqw_u8(&c, (a >> 16) & 0xFF); pqw_u8(&c, (a >> 8) & 0xFF); pqw_u8(&c, a & 0xFF); }
            r = dec(c.p, c.n, n, text);
            CHECK_MSG(r == GPUFEED_OK && !last_mismatch, "CMF 0x%02x FLG 0x%02x: %d %s", cmf, fl, (int)r, last_msg);
        }
    }
    /* FDICT: a preset dictionary no page can supply (FCHECK still right) */
    c.p[0] = 0x78; c.p[1] = 0x20; c.p[1] = (uint8_t)(c.p[1] + 31 - (0x78 * 256 + c.p[1]) % 31);
    r = dec(c.p, c.n, n, text);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "preset dictionary");
    if (!OURS) CHECK_HAS(last_msg, "preset dictionary");
    /* FCHECK wrong */
    c.p[0] = 0x78; c.p[1] = 0x9D;
    r = dec(c.p, c.n, n, text);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "neither a gzip member nor a zlib stream");
    /* window size 2^16: CINFO 8 */
    c.p[0] = 0x88; c.p[1] = 0; c.p[1] = (uint8_t)(31 - (0x88 * 256) % 31);
    r = dec(c.p, c.n, n, text);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "neither a gzip member nor a zlib stream");
    pqw_free(&c); pqw_free(&raw);
}

/* ---- checksums and sizes --------------------------------------------------------- */

static void test_checksums_and_sizes(void)
{
    uint8_t data[5000];
    buf c = {0};
    gpufeed_result r;
    size_t n = sizeof data;
    fill(data, n, K_TEXT);
    zdeflate(&c, data, n, 6, 0, 31);
    r = dec(c.p, c.n, n, data); EXPECT_OK(r);
    c.p[c.n - 8] ^= 1;                            /* CRC-32 */
    r = dec(c.p, c.n, n, data);
    EXPECT_ERR_BOTH(r, GPUFEED_ERR_CHECKSUM, "CRC-32", "incorrect data check");
    c.p[c.n - 8] ^= 1;
    c.p[c.n - 4] ^= 1;                            /* ISIZE */
    r = dec(c.p, c.n, n, data);
    EXPECT_ERR_BOTH(r, GPUFEED_ERR_CHECKSUM, "ISIZE", "incorrect length check");
    c.p[c.n - 4] ^= 1;
    c.p[c.n - 1] ^= 0x80;                         /* ISIZE, high byte */
    r = dec(c.p, c.n, n, data);
    EXPECT_ERR_BOTH(r, GPUFEED_ERR_CHECKSUM, "ISIZE", "incorrect length check");
    c.p[c.n - 1] ^= 0x80;
    /* the page header's size one less, one more, zero, far more */
    r = dec(c.p, c.n, n - 1, NULL);
    EXPECT_ERR_BOTH(r, GPUFEED_ERR_CODEC, "more than the 4999 bytes the page header says", "more than the 4999 bytes");
    r = dec(c.p, c.n, n + 1, NULL);
    EXPECT_ERR_BOTH(r, GPUFEED_ERR_CODEC, "produced 5000 bytes, the page header says 5001", "produced 5000 bytes, the page header says 5001");
    r = dec(c.p, c.n, 0, NULL);
    EXPECT_ERR_BOTH(r, GPUFEED_ERR_CODEC, "more than the 0 bytes", "more than the 0 bytes");
    r = dec(c.p, c.n, 3 * n, NULL);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "produced 5000 bytes");
    /* the same for a stored (level 0) and a fixed-code stream */
    c.n = 0;
    zdeflate(&c, data, n, 0, 0, 31);
    r = dec(c.p, c.n, n - 1, NULL);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "more than the 4999 bytes");
    c.n = 0;
    zdeflate(&c, data, n, 6, Z_FIXED, 31);
    r = dec(c.p, c.n, n - 1, NULL);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "more than the 4999 bytes");
    /* Adler-32 of a zlib stream */
    c.n = 0;
    zdeflate(&c, data, n, 6, 0, 15);
    c.p[c.n - 1] ^= 4;
    r = dec(c.p, c.n, n, data);
    EXPECT_ERR_BOTH(r, GPUFEED_ERR_CHECKSUM, "Adler-32", "incorrect data check");
    /* one member's CRC wrong among three */
    c.n = 0;
    zdeflate(&c, data, 100, 6, 0, 31);
    zdeflate(&c, data + 100, 100, 6, 0, 31);
    c.p[c.n - 6] ^= 0x40;
    zdeflate(&c, data + 200, n - 200, 6, 0, 31);
    r = dec(c.p, c.n, n, data);
    EXPECT_ERR_BOTH(r, GPUFEED_ERR_CHECKSUM, "member 2", "member 2");
    pqw_free(&c);
}

/* ---- truncation and bit flips --------------------------------------------------- */

static void truncate_all(const buf *c, size_t n, const char *what)
{
    size_t k;
    int bad = 0;
    for (k = 0; k < c->n; k++) {
        gpufeed_result r = dec(c->p, k, n, NULL);
        const char *want = k ? "truncated" : "empty page body";
        if (r != GPUFEED_ERR_CODEC || !strstr(last_msg, want)) {
            if (bad++ < 5) fprintf(stderr, "  %s cut at %llu of %llu: %d \"%s\"\n", what, (unsigned long long)k, (unsigned long long)c->n, (int)r, last_msg);
        }
    }
    CHECK_MSG(bad == 0, "%s: %d cuts without a truncation error", what, bad);
}

static void test_truncation(void)
{
    uint8_t data[6000];
    buf c = {0};
    size_t n = sizeof data;
    fill(data, n, K_TEXT);
    memset(data + 3000, 'x', 700);                /* a long run: 258-byte matches */
    zdeflate(&c, data, n, 6, 0, 31);              /* dynamic blocks */
    truncate_all(&c, n, "gzip dynamic");
    c.n = 0; zdeflate(&c, data, n, 6, Z_FIXED, 31);
    truncate_all(&c, n, "gzip fixed");
    c.n = 0; zdeflate(&c, data, n, 0, 0, 31);     /* stored */
    truncate_all(&c, n, "gzip stored");
    c.n = 0; zdeflate(&c, data, n, 9, 0, 15);
    truncate_all(&c, n, "zlib dynamic");
    c.n = 0; zdeflate(&c, data, 0, 6, 0, 31);
    truncate_all(&c, 0, "gzip empty");
    c.n = 0; member_with_header(&c, 2 | 4 | 8 | 16, 1, data, 300);
    truncate_all(&c, 300, "gzip all header fields");
    pqw_free(&c);
}

/* flips 1-4 random bits: an error, or (the checksums still matching) the
   right bytes */
static void flips(const buf *c, const uint8_t *data, size_t n, int trials, const char *what)
{
    uint8_t *m = (uint8_t *)malloc(c->n);
    int t, ok = 0, err = 0, bad = 0;
    for (t = 0; t < trials; t++) {
        int k, nflip = 1 + (int)(rnd() % 4);
        gpufeed_result r;
        memcpy(m, c->p, c->n);
        for (k = 0; k < nflip; k++) {
            size_t bit = (size_t)(rnd() % (c->n * 8));
            m[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        }
        r = dec(m, c->n, n, data);
        if (r == GPUFEED_OK && !last_mismatch) ok++;
        else if ((r == GPUFEED_ERR_CODEC || r == GPUFEED_ERR_CHECKSUM) && !strncmp(last_msg, "gzip: ", 6)) err++;
        else if (bad++ < 5) fprintf(stderr, "  %s trial %d: %d \"%s\"%s\n", what, t, (int)r, last_msg, last_mismatch ? " (wrong bytes)" : "");
    }
    CHECK_MSG(bad == 0, "%s: %d bad outcomes", what, bad);
    CHECK_MSG(err > trials / 2, "%s: only %d of %d flips found", what, err, trials);
    (void)ok;
    free(m);
}

static void test_bit_flips(void)
{
    uint8_t data[4000];
    buf c = {0};
    size_t n = sizeof data;
    fill(data, n, K_TEXT);
    zdeflate(&c, data, n, 6, 0, 31);
    flips(&c, data, n, 3000, "gzip dynamic");
    c.n = 0; zdeflate(&c, data, n, 6, Z_FIXED, 31);
    flips(&c, data, n, 1500, "gzip fixed");
    c.n = 0; zdeflate(&c, data, n, 6, Z_RLE, 15);
    flips(&c, data, n, 1500, "zlib rle");
    c.n = 0; zdeflate(&c, data, 1000, 6, 0, 31); zdeflate(&c, data + 1000, n - 1000, 1, 0, 31);
    flips(&c, data, n, 1500, "two members");
    pqw_free(&c);
}

/* random bytes after a valid gzip header: deflate data that is garbage */
static void test_garbage_deflate(void)
{
    uint8_t in[600];
    int t, bad = 0;
    for (t = 0; t < 4000; t++) {
        size_t n = 10 + (size_t)(rnd() % 590), i, dn = (size_t)(rnd() % 5000);
        gpufeed_result r;
        memcpy(in, "\x1F\x8B\x08\0\0\0\0\0\0\x03", 10);
        for (i = 10; i < n; i++) in[i] = (uint8_t)(rnd() >> 32);
        if (t & 1) in[10] = (uint8_t)((in[10] & ~6u) | 4u);   /* a dynamic block */
        r = dec(in, n, dn, NULL);
        if (r != GPUFEED_OK && (r != GPUFEED_ERR_CODEC && r != GPUFEED_ERR_CHECKSUM)) bad++;
        if (r != GPUFEED_OK && strncmp(last_msg, "gzip: ", 6)) bad++;
    }
    CHECK_MSG(bad == 0, "%d garbage inputs gave an unexpected result", bad);
}

/* ---- hand-built deflate streams ------------------------------------------------- */

typedef struct bits { buf b; uint64_t acc; unsigned n; } bits;
static void put(bits *w, uint32_t v, unsigned n)
{
    w->acc |= (uint64_t)v << w->n; w->n += n;
    while (w->n >= 8) { pqw_u8(&w->b, (unsigned)(w->acc & 0xFF)); w->acc >>= 8; w->n -= 8; }
}
static void flush(bits *w) { if (w->n) put(w, 0, 8 - w->n); }
/* a Huffman code: its bits go out most significant first */
static void put_code(bits *w, uint32_t code, unsigned len)
{
    uint32_t r = 0;
    unsigned i;
    for (i = 0; i < len; i++) r |= ((code >> i) & 1u) << (len - 1 - i);
    put(w, r, len);
}
/* canonical codes from lengths (RFC 1951 3.2.2) */
static void canon(const uint8_t *lens, unsigned n, uint32_t *codes)
{
    unsigned count[16] = {0}, next[16], i, code = 0, b;
    for (i = 0; i < n; i++) count[lens[i]]++;
    count[0] = 0;
    for (b = 1; b < 16; b++) { code = (code + count[b - 1]) << 1; next[b] = code; }
    for (i = 0; i < n; i++) codes[i] = lens[i] ? next[lens[i]]++ : 0;
}
static const uint8_t clorder[19] = { 16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15 };

/* a dynamic block header: the code-length code gives 0-12 four bits and
   13-18 five (complete); every length is written as itself */
typedef struct dyn { uint8_t lens[320]; uint32_t lcodes[288], dcodes[32]; unsigned hlit, hdist; uint8_t cl[19]; uint32_t clc[19]; } dyn;
static void dyn_header(bits *w, dyn *d, int final)
{
    unsigned i;
    for (i = 0; i < 19; i++) d->cl[i] = i <= 12 ? 4 : 5;
    canon(d->cl, 19, d->clc);
    put(w, (unsigned)final, 1); put(w, 2, 2);
    put(w, d->hlit - 257, 5); put(w, d->hdist - 1, 5); put(w, 19 - 4, 4);
    for (i = 0; i < 19; i++) put(w, d->cl[clorder[i]], 3);
    for (i = 0; i < d->hlit + d->hdist; i++) put_code(w, d->clc[d->lens[i]], d->cl[d->lens[i]]);
    canon(d->lens, d->hlit, d->lcodes);
    canon(d->lens + d->hlit, d->hdist, d->dcodes);
}
static void lit(bits *w, const dyn *d, unsigned sym) { put_code(w, d->lcodes[sym], d->lens[sym]); }
static void dist0(bits *w, const dyn *d, unsigned sym) { put_code(w, d->dcodes[sym], d->lens[d->hlit + sym]); }
static void dyn_init(dyn *d, unsigned hlit, unsigned hdist) { memset(d, 0, sizeof *d); d->hlit = hlit; d->hdist = hdist; }

/* the bits as one gzip member whose trailer matches `data`; as a zlib
   stream they must give the same result */
static gpufeed_result dec_member(bits *w, const uint8_t *data, size_t n, size_t dn)
{
    buf g = {0};
    gpufeed_result r, rz;
    flush(w);
    zlib_wrap(&g, &w->b, data, n);
    rz = dec(g.p, g.n, dn, data);
    CHECK_MSG(rz == GPUFEED_OK ? !last_mismatch : 1, "zlib form: output differs");
    g.n = 0;
    gzip_wrap(&g, &w->b, data, n);
    r = dec(g.p, g.n, dn, data);
    CHECK_MSG(r == rz, "gzip form %d, zlib form %d (\"%s\")", (int)r, (int)rz, last_msg);
    pqw_free(&g);
    pqw_free(&w->b); memset(w, 0, sizeof *w);
    return r;
}

static void test_huffman_code_sets(void)
{
    bits w;
    dyn d;
    gpufeed_result r;
    unsigned i;
    memset(&w, 0, sizeof w);
    /* code-length code over-subscribed: all 19 of length 1 */
    put(&w, 1, 1); put(&w, 2, 2); put(&w, 0, 5); put(&w, 0, 5); put(&w, 15, 4);
    for (i = 0; i < 19; i++) put(&w, 1, 3);
    put(&w, 0, 32);
    r = dec_member(&w, NULL, 0, 0);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "code-length code is over-subscribed");
    /* code-length code incomplete: two lengths of 2 */
    put(&w, 1, 1); put(&w, 2, 2); put(&w, 0, 5); put(&w, 0, 5); put(&w, 15, 4);
    for (i = 0; i < 19; i++) put(&w, clorder[i] == 1 || clorder[i] == 8 ? 2 : 0, 3);
    put(&w, 0, 32);
    r = dec_member(&w, NULL, 0, 0);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "code-length code is incomplete");
    /* ... one length of 1 */
    put(&w, 1, 1); put(&w, 2, 2); put(&w, 0, 5); put(&w, 0, 5); put(&w, 15, 4);
    for (i = 0; i < 19; i++) put(&w, clorder[i] == 8 ? 1 : 0, 3);
    put(&w, 0, 32);
    r = dec_member(&w, NULL, 0, 0);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "code-length code is incomplete");
    /* ... none at all */
    put(&w, 1, 1); put(&w, 2, 2); put(&w, 0, 5); put(&w, 0, 5); put(&w, 15, 4);
    put(&w, 0, 19 * 3);
    put(&w, 0, 32);
    r = dec_member(&w, NULL, 0, 0);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "code-length code is empty");

    /* literal/length code over-subscribed: 257 codes of 8 bits */
    dyn_init(&d, 257, 1);
    memset(d.lens, 8, 257); d.lens[257] = 1;
    dyn_header(&w, &d, 1);
    put(&w, 0, 32);
    r = dec_member(&w, NULL, 0, 0);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "literal/length code is over-subscribed");
    /* incomplete: end-of-block 1 bit, 'a' 2 bits */
    dyn_init(&d, 257, 1);
    d.lens['a'] = 2; d.lens[256] = 1; d.lens[257] = 1;
    dyn_header(&w, &d, 1);
    put(&w, 0, 32);
    r = dec_member(&w, NULL, 0, 0);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "literal/length code is incomplete");
    /* no end-of-block code */
    dyn_init(&d, 257, 1);
    d.lens['a'] = 1; d.lens['b'] = 1; d.lens[257] = 1;
    dyn_header(&w, &d, 1);
    put(&w, 0, 32);
    r = dec_member(&w, NULL, 0, 0);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "no end-of-block code");
    /* distance code over-subscribed: three of 1 bit */
    dyn_init(&d, 258, 3);
    d.lens['a'] = 1; d.lens[256] = 2; d.lens[257] = 2;
    d.lens[258] = d.lens[259] = d.lens[260] = 1;
    dyn_header(&w, &d, 1);
    put(&w, 0, 32);
    r = dec_member(&w, NULL, 0, 0);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "distance code is over-subscribed");
    /* distance code incomplete: lengths 1 and 2 */
    dyn_init(&d, 258, 2);
    d.lens['a'] = 1; d.lens[256] = 2; d.lens[257] = 2;
    d.lens[258] = 1; d.lens[259] = 2;
    dyn_header(&w, &d, 1);
    put(&w, 0, 32);
    r = dec_member(&w, NULL, 0, 0);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "distance code is incomplete");
    /* ... or one code of 2 bits */
    dyn_init(&d, 258, 2);
    d.lens['a'] = 1; d.lens[256] = 2; d.lens[257] = 2;
    d.lens[259] = 2;
    dyn_header(&w, &d, 1);
    put(&w, 0, 32);
    r = dec_member(&w, NULL, 0, 0);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "distance code is incomplete");
}

static void test_allowed_odd_codes(void)
{
    static const uint8_t aaaa[] = "aaaa", ab[] = "abba";
    bits w;
    dyn d;
    gpufeed_result r;
    memset(&w, 0, sizeof w);
    /* one distance code, of 1 bit (RFC 1951 3.2.7): "a", then 3 at distance 1 */
    dyn_init(&d, 258, 1);
    d.lens['a'] = 1; d.lens[256] = 2; d.lens[257] = 2;
    d.lens[258] = 1;
    dyn_header(&w, &d, 1);
    lit(&w, &d, 'a'); lit(&w, &d, 257); dist0(&w, &d, 0); lit(&w, &d, 256);
    r = dec_member(&w, aaaa, 4, 4); EXPECT_OK(r);
    /* no distance codes at all: literals only */
    dyn_init(&d, 257, 1);
    d.lens['a'] = 1; d.lens['b'] = 2; d.lens[256] = 2;
    dyn_header(&w, &d, 1);
    lit(&w, &d, 'a'); lit(&w, &d, 'b'); lit(&w, &d, 'b'); lit(&w, &d, 'a'); lit(&w, &d, 256);
    r = dec_member(&w, ab, 4, 4); EXPECT_OK(r);
    /* ... then a length code anyway */
    dyn_init(&d, 258, 1);
    d.lens['a'] = 1; d.lens[256] = 2; d.lens[257] = 2;
    dyn_header(&w, &d, 1);
    lit(&w, &d, 'a'); lit(&w, &d, 257); put(&w, 0, 8); lit(&w, &d, 256);
    r = dec_member(&w, aaaa, 4, 4);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "invalid distance code");
    /* a literal/length code of end-of-block alone, 1 bit: an empty block */
    dyn_init(&d, 257, 1);
    d.lens[256] = 1;
    dyn_header(&w, &d, 0);
    lit(&w, &d, 256);
    put(&w, 1, 1); put(&w, 1, 2);   /* a final fixed block: "a", end */
    put_code(&w, 0x30 + 'a', 8); put_code(&w, 0, 7);
    r = dec_member(&w, aaaa, 1, 1); EXPECT_OK(r);
    /* ... whose unused other half is an error */
    dyn_init(&d, 257, 1);
    d.lens[256] = 1;
    dyn_header(&w, &d, 1);
    put(&w, 1, 1);
    r = dec_member(&w, aaaa, 1, 1);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "invalid literal/length code");
}

static void test_code_length_sequences(void)
{
    bits w;
    dyn d;
    gpufeed_result r;
    unsigned i;
    memset(&w, 0, sizeof w);
    /* HLIT 287 and 288, HDIST 31 and 32 */
    for (i = 0; i < 4; i++) {
        put(&w, 1, 1); put(&w, 2, 2);
        put(&w, i < 2 ? 30 + i : 0, 5); put(&w, i < 2 ? 0 : 30 + (i - 2), 5); put(&w, 15, 4);
        put(&w, 0, 32); put(&w, 0, 32);
        r = dec_member(&w, NULL, 0, 0);
        EXPECT_ERR(r, GPUFEED_ERR_CODEC, i < 2 ? "literal/length codes, at most 286" : "distance codes, at most 30");
    }
    /* code 16 (repeat the previous length) first */
    dyn_init(&d, 257, 1);
    dyn_header(&w, &d, 1);         /* writes the header; the lengths are rewritten below */
    pqw_free(&w.b); memset(&w, 0, sizeof w);
    put(&w, 1, 1); put(&w, 2, 2); put(&w, 0, 5); put(&w, 0, 5); put(&w, 15, 4);
    for (i = 0; i < 19; i++) put(&w, d.cl[clorder[i]], 3);
    put_code(&w, d.clc[16], d.cl[16]); put(&w, 0, 2);
    put(&w, 0, 32);
    r = dec_member(&w, NULL, 0, 0);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "no previous length");
    /* code 18 (zeros) running past HLIT + HDIST: 138 + 138 > 258 */
    put(&w, 1, 1); put(&w, 2, 2); put(&w, 0, 5); put(&w, 0, 5); put(&w, 15, 4);
    for (i = 0; i < 19; i++) put(&w, d.cl[clorder[i]], 3);
    put_code(&w, d.clc[18], d.cl[18]); put(&w, 127, 7);
    put_code(&w, d.clc[18], d.cl[18]); put(&w, 127, 7);
    put(&w, 0, 32);
    r = dec_member(&w, NULL, 0, 0);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "runs past the 258 lengths");
    /* code 16 running past the end */
    put(&w, 1, 1); put(&w, 2, 2); put(&w, 0, 5); put(&w, 0, 5); put(&w, 15, 4);
    for (i = 0; i < 19; i++) put(&w, d.cl[clorder[i]], 3);
    for (i = 0; i < 256; i++) put_code(&w, d.clc[8], d.cl[8]);
    put_code(&w, d.clc[16], d.cl[16]); put(&w, 0, 2);
    put(&w, 0, 32);
    r = dec_member(&w, NULL, 0, 0);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "runs past the 258 lengths");
    /* a valid header built from repeats, 16, 17 and 18 all used: 'l' 1 bit,
       255-258 3 bits, one distance code; then "llll", 0xFF, 4 x 0xFF */
    {
        static const uint8_t want[9] = { 'l', 'l', 'l', 'l', 0xFF, 0xFF, 0xFF, 0xFF, 0xFF };
        put(&w, 1, 1); put(&w, 2, 2); put(&w, 259 - 257, 5); put(&w, 0, 5); put(&w, 15, 4);
        for (i = 0; i < 19; i++) put(&w, d.cl[clorder[i]], 3);
        put_code(&w, d.clc[0], d.cl[0]);                          /* 0 */
        put_code(&w, d.clc[17], d.cl[17]); put(&w, 7, 3);          /* 1-10 */
        put_code(&w, d.clc[18], d.cl[18]); put(&w, 86, 7);         /* 11-107 */
        put_code(&w, d.clc[1], d.cl[1]);                          /* 108 'l': 1 */
        put_code(&w, d.clc[18], d.cl[18]); put(&w, 127, 7);        /* 109-246 */
        put_code(&w, d.clc[17], d.cl[17]); put(&w, 5, 3);          /* 247-254 */
        put_code(&w, d.clc[3], d.cl[3]);                          /* 255: 3 */
        put_code(&w, d.clc[16], d.cl[16]); put(&w, 0, 2);          /* 256-258: 3 */
        put_code(&w, d.clc[1], d.cl[1]);                          /* distance 0: 1 */
        dyn_init(&d, 259, 1);
        d.lens['l'] = 1; d.lens[255] = d.lens[256] = d.lens[257] = d.lens[258] = 3; d.lens[259] = 1;
        canon(d.lens, 259, d.lcodes); canon(d.lens + 259, 1, d.dcodes);
        lit(&w, &d, 'l'); lit(&w, &d, 257); dist0(&w, &d, 0);
        lit(&w, &d, 255); lit(&w, &d, 258); dist0(&w, &d, 0);
        lit(&w, &d, 256);
        r = dec_member(&w, want, 9, 9);
        EXPECT_OK(r);
    }
}

static void test_block_faults(void)
{
    static const uint8_t a4[] = "aaaa";
    bits w;
    gpufeed_result r;
    memset(&w, 0, sizeof w);
    /* reserved block type 3 */
    put(&w, 1, 1); put(&w, 3, 2); put(&w, 0, 16);
    r = dec_member(&w, NULL, 0, 0);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "reserved block type 3");
    /* ... after a good block */
    put(&w, 0, 1); put(&w, 1, 2); put_code(&w, 0x30 + 'a', 8); put_code(&w, 0, 7);
    put(&w, 1, 1); put(&w, 3, 2); put(&w, 0, 16);
    r = dec_member(&w, a4, 1, 1);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "reserved block type 3");
    /* fixed code: literal/length 286 and 287 (8 bits from 0xC6), distance 30 and 31 */
    put(&w, 1, 1); put(&w, 1, 2); put_code(&w, 0xC0 + 286 - 280, 8); put(&w, 0, 16);
    r = dec_member(&w, NULL, 0, 0);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "invalid literal/length code");
    put(&w, 1, 1); put(&w, 1, 2); put_code(&w, 0xC0 + 287 - 280, 8); put(&w, 0, 16);
    r = dec_member(&w, NULL, 0, 0);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "invalid literal/length code");
    put(&w, 1, 1); put(&w, 1, 2); put_code(&w, 0x30 + 'a', 8); put_code(&w, 1, 7); put_code(&w, 30, 5); put(&w, 0, 16);
    r = dec_member(&w, a4, 4, 4);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "invalid distance code");
    put(&w, 1, 1); put(&w, 1, 2); put_code(&w, 0x30 + 'a', 8); put_code(&w, 1, 7); put_code(&w, 31, 5); put(&w, 0, 16);
    r = dec_member(&w, a4, 4, 4);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "invalid distance code");
    /* a distance beyond the output: "a" then length 3 at distance 2 */
    put(&w, 1, 1); put(&w, 1, 2); put_code(&w, 0x30 + 'a', 8); put_code(&w, 1, 7); put_code(&w, 1, 5); put_code(&w, 0, 7);
    r = dec_member(&w, a4, 4, 4);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "distance 2 reaches back before the member's first byte");
    /* ... at distance 32768 after 32767 bytes (a stored block, then fixed) */
    {
        uint8_t *big = (uint8_t *)malloc(32767 + 3);
        memset(big, 'q', 32767 + 3);
        put(&w, 0, 1); put(&w, 0, 2); flush(&w);
        pqw_le16(&w.b, 32767); pqw_le16(&w.b, 32767 ^ 0xFFFF); pqw_put(&w.b, big, 32767);
        put(&w, 1, 1); put(&w, 1, 2); put_code(&w, 1, 7); put_code(&w, 29, 5); put(&w, 8191, 13); put_code(&w, 0, 7);
        r = dec_member(&w, big, 32767 + 3, 32767 + 3);
        EXPECT_ERR(r, GPUFEED_ERR_CODEC, "distance 32768 reaches back");
        /* and 32767 is fine */
        put(&w, 0, 1); put(&w, 0, 2); flush(&w);
        pqw_le16(&w.b, 32767); pqw_le16(&w.b, 32767 ^ 0xFFFF); pqw_put(&w.b, big, 32767);
        put(&w, 1, 1); put(&w, 1, 2); put_code(&w, 1, 7); put_code(&w, 29, 5); put(&w, 8190, 13); put_code(&w, 0, 7);
        r = dec_member(&w, big, 32767 + 3, 32767 + 3);
        EXPECT_OK(r);
        free(big);
    }
    /* stored block: NLEN not the complement of LEN */
    put(&w, 1, 1); put(&w, 0, 2); flush(&w);
    pqw_le16(&w.b, 4); pqw_le16(&w.b, 4); pqw_put(&w.b, "aaaa", 4);
    r = dec_member(&w, a4, 4, 4);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "does not match its complement");
    /* stored block longer than the page body */
    put(&w, 1, 1); put(&w, 0, 2); flush(&w);
    pqw_le16(&w.b, 400); pqw_le16(&w.b, 400 ^ 0xFFFF); pqw_put(&w.b, "aaaa", 4);
    r = dec_member(&w, a4, 4, 4);
    EXPECT_ERR(r, GPUFEED_ERR_CODEC, "truncated");
    /* the next member cannot reach back into the previous one */
    {
        static const uint8_t abcd[] = "abcabc";
        buf g = {0};
        put(&w, 1, 1); put(&w, 1, 2);
        put_code(&w, 0x30 + 'a', 8); put_code(&w, 0x30 + 'b', 8); put_code(&w, 0x30 + 'c', 8); put_code(&w, 0, 7);
        flush(&w); gzip_wrap(&g, &w.b, abcd, 3);
        pqw_free(&w.b); memset(&w, 0, sizeof w);
        put(&w, 1, 1); put(&w, 1, 2); put_code(&w, 1, 7); put_code(&w, 2, 5); put_code(&w, 0, 7);
        flush(&w); gzip_wrap(&g, &w.b, abcd + 3, 3);
        pqw_free(&w.b); memset(&w, 0, sizeof w);
        r = dec(g.p, g.n, 6, abcd);
        EXPECT_ERR(r, GPUFEED_ERR_CODEC, "distance 3 reaches back before the member's first byte (0 bytes written) (member 2");
        pqw_free(&g);
    }
}

/* the longest expansion DEFLATE allows, 258 bytes per 2 bits, stays within
   what gf__codec_max_expansion says: a page claiming more is refused early */
static void test_max_expansion(void)
{
    size_t pairs = 40000, i, n = 1 + pairs * 258;
    uint8_t *data = (uint8_t *)malloc(n);
    bits w;
    dyn d;
    buf g = {0};
    gpufeed_result r;
    memset(&w, 0, sizeof w);
    memset(data, 'a', n);
    dyn_init(&d, 286, 1);
    d.lens['a'] = 2; d.lens[256] = 2; d.lens[285] = 1;
    d.lens[286] = 1;
    dyn_header(&w, &d, 1);
    lit(&w, &d, 'a');
    for (i = 0; i < pairs; i++) { lit(&w, &d, 285); dist0(&w, &d, 0); }
    lit(&w, &d, 256);
    flush(&w);
    gzip_wrap(&g, &w.b, data, n);
    r = dec(g.p, g.n, n, data); EXPECT_OK(r);
    CHECK_MSG(gf__codec_max_expansion(GPUFEED_CODEC_GZIP, g.n) >= n, "%llu bytes from %llu: the bound says %llu",
              (unsigned long long)n, (unsigned long long)g.n, (unsigned long long)gf__codec_max_expansion(GPUFEED_CODEC_GZIP, g.n));
    CHECK(n > 1000 * g.n);
    CHECK(gf__codec_max_expansion(GPUFEED_CODEC_GZIP, UINT64_MAX / 1000) == UINT64_MAX);
    CHECK(gf__codec_max_expansion(GPUFEED_CODEC_GZIP, 0) >= 1);
    CHECK(gf__codec_supported(GPUFEED_CODEC_GZIP));
    pqw_free(&g); pqw_free(&w.b);
    free(data);
}

/* ---- through a Parquet file ---------------------------------------------------- */

/* an INT64 column of two GZIP pages: the first one member, the second two
   members with zero padding; read back through the column reader */
static void test_parquet_pages(void)
{
    enum { N = 3000 };
    int64_t v[N];
    pqw_buf plain1 = {0}, plain2 = {0}, body1 = {0}, body2 = {0}, out = {0};
    pqw_schema sch[2];
    pqw_rowgroup rg;
    pqw_chunk ch;
    pqw_file f;
    pqw_page pg[2];
    gpufeed_file_desc od;
    gpufeed_file *file = NULL;
    gpufeed_column *col = NULL;
    gpufeed_column_batch b;
    gpufeed_error err;
    gpufeed_result r;
    int64_t row = 0, bad = 0, i;
    for (i = 0; i < N; i++) v[i] = 1000000 + i * 3 + (int64_t)(rnd() % 3);
    pqw_plain_i64(&plain1, v, 2000);
    pqw_plain_i64(&plain2, v + 2000, N - 2000);
    zdeflate(&body1, plain1.p, plain1.n, 6, 0, 31);
    zdeflate(&body2, plain2.p, 3000, 1, 0, 31);
    zdeflate(&body2, plain2.p + 3000, plain2.n - 3000, 9, 0, 31);
    pqw_fill(&body2, 0, 8);
    pg[0] = pqw_data_page(&body1, 2000, PQW_PLAIN); pg[0].raw_len = plain1.n;
    pg[1] = pqw_data_page(&body2, N - 2000, PQW_PLAIN); pg[1].raw_len = plain2.n;
    pqw_simple(&f, sch, &rg, &ch, "x", PQW_INT64, PQW_REQUIRED, pg, 2);
    ch.codec = PQW_GZIP;
    pqw_build(&f, &out);
    memset(&od, 0, sizeof od);
    od.data = out.p; od.data_size = out.n;
    r = gpufeed_file_open(&file, &od, &err);
    CHECK_MSG(r == GPUFEED_OK, "open: %s", err.message);
    if (r == GPUFEED_OK) {
        r = gpufeed_column_open(&col, file, 0, 0, NULL, &err);
        CHECK_MSG(r == GPUFEED_OK, "column: %s", err.message);
        if (r == GPUFEED_OK) {
            while ((r = gpufeed_column_read(col, &b)) == GPUFEED_OK)
                for (i = 0; i < b.num_rows; i++, row++)
                    if (row >= N || ((const int64_t *)b.values)[i] != v[row]) bad++;
            CHECK_MSG(r == GPUFEED_DONE, "read: %s", gpufeed_column_error(col));
            CHECK(row == N);
            CHECK(bad == 0);
            gpufeed_column_close(col);
        }
        gpufeed_file_close(file);
    }
    /* the second page's stream one byte short: the column names the fault */
    out.n = 0;
    body2.n -= 9;
    pg[1].body_len = body2.n;
    pqw_build(&f, &out);
    od.data = out.p; od.data_size = out.n;
    r = gpufeed_file_open(&file, &od, &err);
    CHECK(r == GPUFEED_OK);
    if (r == GPUFEED_OK) {
        if (gpufeed_column_open(&col, file, 0, 0, NULL, &err) == GPUFEED_OK) {
            while ((r = gpufeed_column_read(col, &b)) == GPUFEED_OK) {}
            CHECK_MSG(r == GPUFEED_ERR_CODEC, "read gave %d: %s", (int)r, gpufeed_column_error(col));
            CHECK_HAS(gpufeed_column_error(col), "truncated");
            CHECK_HAS(gpufeed_column_error(col), "column 'x'");
            gpufeed_column_close(col);
        }
        gpufeed_file_close(file);
    }
    pqw_free(&plain1); pqw_free(&plain2); pqw_free(&body1); pqw_free(&body2); pqw_free(&out);
}

int main(void)
{
    printf("GZIP codec tests (%s)\n", OURS ? "gpufeed's inflate" : "GPUFEED_USE_ZLIB: the system zlib");
    RUN(test_levels_strategies_forms);
    RUN(test_one_mebibyte);
    RUN(test_match_tails);
    RUN(test_members_and_padding);
    RUN(test_header_fields);
    RUN(test_zlib_header);
    RUN(test_checksums_and_sizes);
    RUN(test_truncation);
    RUN(test_bit_flips);
    RUN(test_garbage_deflate);
    RUN(test_huffman_code_sets);
    RUN(test_allowed_odd_codes);
    RUN(test_code_length_sequences);
    RUN(test_block_faults);
    RUN(test_max_expansion);
    RUN(test_parquet_pages);
    return TEST_SUMMARY();
}
