/* Fuzz targets, one per decoder: the Thrift decoder, levels (RLE/bit-packed
   hybrid and deprecated BIT_PACKED), each value encoding inside a real page
   (PLAIN, RLE booleans, dictionary, DELTA_BINARY_PACKED,
   DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT), and the
   SNAPPY and LZ4 codecs. (GZIP and ZSTD have their own files,
   tests/fuzz_gzip.c and tests/fuzz_zstd.c; whole files: tests/fuzz_file.c.)

   One source, one target per build: -DGFF_TARGET=<name> with name one of
     thrift levels plain rle_bool dict delta_bp delta_lba delta_ba bss
     snappy lz4 nested
   (nested: pages of a list column - repetition and definition levels and
   the record assembly into whole rows - under a 3-level LIST, a list of
   lists, or a legacy repeated primitive, chosen by byte 0)
   e.g.
     clang -g -O1 -fsanitize=fuzzer,address,undefined -DGFF_TARGET=dict \
           -I. tests/fuzz_decoders.c -o build/fuzz_dict
     build/fuzz_dict -max_total_time=1800 build/fuzz-dict-corpus
   `make fuzz-all` builds them all; `make fuzz-seeds` writes seed corpora.

   Page targets: the input describes one column chunk, and the harness
   wraps it into a valid Parquet file (tests/pq_writer.h) around the page
   bytes, which come straight from the input:
     byte 0   physical type choice (taken among the types the encoding is
              defined for; bit 7 set: any type, to reach the type checks)
     byte 1   bit 0 v2 page, bit 1 optional column, bit 2 verify CRC
              (a correct CRC is written), bit 3 two data pages
     byte 2-3 num_values (little-endian, at most 4096)
     byte 4   FIXED_LEN_BYTE_ARRAY width (1..32), or v2 def-levels length
     byte 5-6 dictionary page length (dict target) / split point
     rest     page bodies
   Every value handed out is touched so ASan sees a bad pointer, and the
   API's promises are checked (abort() on a violation): a known result code
   with a message, num_rows within bounds, null slots zero, BOOLEAN 0/1,
   FLBA widths, DONE after exactly num_values rows. */
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GPUFEED_STATIC
#define GPUFEED_IMPLEMENTATION
#include "gpufeed.h"
#include "pq_writer.h"

#define GFF_STR2(x) #x
#define GFF_STR(x) GFF_STR2(x)
#define GFF_FAIL(...) do { fprintf(stderr, "fuzz_decoders (" GFF_STR(GFF_TARGET) "): "); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); abort(); } while (0)

#define GFF_thrift 1
#define GFF_levels 2
#define GFF_plain 3
#define GFF_rle_bool 4
#define GFF_dict 5
#define GFF_delta_bp 6
#define GFF_delta_lba 7
#define GFF_delta_ba 8
#define GFF_bss 9
#define GFF_snappy 10
#define GFF_lz4 11
#define GFF_nested 12
#define GFF_CAT2(a, b) a##b
#define GFF_CAT(a, b) GFF_CAT2(a, b)
#ifdef GFF_SEEDS
#define GFF_TARGET seeds
#endif
#define GFF_seeds 99
#ifndef GFF_TARGET
#error "define GFF_TARGET (thrift, levels, plain, rle_bool, dict, delta_bp, delta_lba, delta_ba, bss, snappy, lz4, nested)"
#endif
#define GFF_T GFF_CAT(GFF_, GFF_TARGET)

static volatile uint64_t gff_sink;

static uint64_t gff_touch(const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    uint64_t s = 0;
    size_t i;
    for (i = 0; i < n; i++) s = s * 31 + b[i];
    return s;
}

#if defined(__GNUC__)
__attribute__((unused))
#endif
static void gff_message(const char *msg, gpufeed_result r)
{
    const char *s = gpufeed_result_string(r);
    if (!s || strcmp(s, "unknown result") == 0) GFF_FAIL("unknown result %d", (int)r);
    if (r < 0 && (!msg || !msg[0])) GFF_FAIL("error %d without a message", (int)r);
    if (msg && strlen(msg) >= GPUFEED_ERROR_MAX) GFF_FAIL("message too long");
    if (msg) gff_sink += gff_touch(msg, strlen(msg));
}

#if GFF_T == GFF_seeds
/* Seed writer: cut real pages out of Parquet files into each target's
   input format.  cc -DGFF_SEEDS -I. -Itests tests/fuzz_decoders.c -o build/fuzz_seeds
   build/fuzz_seeds OUTDIR FILE...   writes OUTDIR/<target>/<n> */
#include <sys/stat.h>
static int gff_nseed;
static void gff_put_seed(const char *outdir, const char *target, const pqw_buf *b)
{
    char path[1024];
    FILE *o;
    snprintf(path, sizeof path, "%s/%s", outdir, target);
    mkdir(path, 0777);
    snprintf(path, sizeof path, "%s/%s/seed%04d", outdir, target, gff_nseed++);
    o = fopen(path, "wb");
    if (!o) { perror(path); exit(1); }
    fwrite(b->p, 1, b->n, o);
    fclose(o);
}
static const char *gff_target_of(int32_t enc)
{
    switch (enc) {
    case GPUFEED_ENC_PLAIN: return "plain";
    case GPUFEED_ENC_RLE: return "rle_bool";
    case GPUFEED_ENC_PLAIN_DICTIONARY: case GPUFEED_ENC_RLE_DICTIONARY: return "dict";
    case GPUFEED_ENC_DELTA_BINARY_PACKED: return "delta_bp";
    case GPUFEED_ENC_DELTA_LENGTH_BYTE_ARRAY: return "delta_lba";
    case GPUFEED_ENC_DELTA_BYTE_ARRAY: return "delta_ba";
    case GPUFEED_ENC_BYTE_STREAM_SPLIT: return "bss";
    default: return NULL;
    }
}
int main(int argc, char **argv)
{
    int a;
    if (argc < 3) { fprintf(stderr, "usage: %s OUTDIR FILE...\n", argv[0]); return 2; }
    mkdir(argv[1], 0777);
    for (a = 2; a < argc; a++) {
        FILE *in = fopen(argv[a], "rb");
        uint8_t *buf; long sz; int32_t g, k; int64_t np, i;
        gpufeed_file_desc d; gpufeed_file *f = NULL; gpufeed_error err;
        const gpufeed_metadata *md;
        pqw_buf b = {0};
        size_t flen;
        const uint8_t *foot;
        if (!in) { perror(argv[a]); return 1; }
        fseek(in, 0, SEEK_END); sz = ftell(in); fseek(in, 0, SEEK_SET);
        buf = (uint8_t *)malloc((size_t)sz + 1);
        if (!buf || fread(buf, 1, (size_t)sz, in) != (size_t)sz) { fprintf(stderr, "%s: read failed\n", argv[a]); return 1; }
        fclose(in);
        memset(&d, 0, sizeof d); d.data = buf; d.data_size = (size_t)sz;
        if (gpufeed_file_open(&f, &d, &err) != GPUFEED_OK) { fprintf(stderr, "%s: %s\n", argv[a], err.message); free(buf); continue; }
        md = gpufeed_file_metadata(f);
        foot = gpufeed_file_footer(f, &flen);
        b.n = 0; pqw_put(&b, foot, flen); gff_put_seed(argv[1], "thrift", &b);
        for (g = 0; g < md->num_row_groups && g < 2; g++)
            for (k = 0; k < md->num_columns; k++) {
                const gpufeed_chunk_info *ch = &md->row_groups[g].chunks[k];
                const gpufeed_column_info *ci = &md->columns[k];
                gpufeed_page_info pi[64];
                int64_t dict_at = -1, dict_len = 0;
                int nested = 0;
                if (ci->max_rep > 0) {
                    /* a 3-level LIST of optional INT32 / BYTE_ARRAY elements: the nested target, form 0 */
                    if (ci->max_rep != 1 || ci->max_def != 3 || (ci->physical != GPUFEED_INT32 && ci->physical != GPUFEED_BYTE_ARRAY)) continue;
                    nested = 1;
                }
                if (gpufeed_chunk_pages(f, g, k, pi, 64, &np, &err) != GPUFEED_OK) continue;
                if (np > 64) np = 64;
                for (i = 0; i < np; i++) {
                    const uint8_t *body = buf + pi[i].offset + pi[i].header_size;
                    const char *tg;
                    if (pi[i].offset + pi[i].header_size + pi[i].compressed_size > sz) break;
                    if (ch->codec == GPUFEED_CODEC_SNAPPY || ch->codec == GPUFEED_CODEC_LZ4_RAW || ch->codec == GPUFEED_CODEC_LZ4) {
                        if (pi[i].type == 3) continue; /* v2: levels are outside the compressed part */
                        b.n = 0; pqw_le32(&b, (uint32_t)pi[i].uncompressed_size); pqw_put(&b, body, (size_t)pi[i].compressed_size);
                        gff_put_seed(argv[1], ch->codec == GPUFEED_CODEC_SNAPPY ? "snappy" : "lz4", &b);
                        continue;
                    }
                    if (ch->codec != GPUFEED_CODEC_UNCOMPRESSED) continue;
                    if (pi[i].type == 2) { dict_at = pi[i].offset + pi[i].header_size; dict_len = pi[i].compressed_size; continue; }
                    if ((pi[i].type != 0 && pi[i].type != 3) || pi[i].num_values > 4096) continue;
                    tg = nested ? (pi[i].encoding == GPUFEED_ENC_PLAIN ? "nested" : NULL) : gff_target_of(pi[i].encoding);
                    if (!tg) continue;
                    b.n = 0;
                    if (nested) {
                        pqw_u8(&b, ci->physical == GPUFEED_INT32 ? 0u : 1u);
                        pqw_u8(&b, pi[i].type == 3 ? 1u : 0u);
                        pqw_le16(&b, (uint32_t)pi[i].num_values);
                        pqw_u8(&b, 0); pqw_le16(&b, 0);
                        pqw_put(&b, body, (size_t)pi[i].compressed_size);
                        gff_put_seed(argv[1], tg, &b);
                        continue;
                    }
                    pqw_u8(&b, 0x80u | (unsigned)ci->physical);
                    pqw_u8(&b, (pi[i].type == 3 ? 1u : 0u) | (ci->max_def > 0 ? 2u : 0u));
                    pqw_le16(&b, (uint32_t)pi[i].num_values);
                    pqw_u8(&b, ci->physical == GPUFEED_FIXED_LEN_BYTE_ARRAY ? (unsigned)(ci->type_length - 1) : 0u);
                    if (strcmp(tg, "dict") == 0) {
                        if (dict_at < 0 || dict_len > 65535) continue;
                        pqw_le16(&b, (uint32_t)dict_len);
                        pqw_put(&b, buf + dict_at, (size_t)dict_len);
                    } else {
                        pqw_le16(&b, 0);
                    }
                    pqw_put(&b, body, (size_t)pi[i].compressed_size);
                    gff_put_seed(argv[1], tg, &b);
                    if (pi[i].type == 0 && ci->max_def > 0 && pi[i].compressed_size > 4) { /* levels */
                        uint32_t ll = (uint32_t)body[0] | ((uint32_t)body[1] << 8) | ((uint32_t)body[2] << 16) | ((uint32_t)body[3] << 24);
                        if (ll <= (uint32_t)pi[i].compressed_size - 4) {
                            b.n = 0;
                            pqw_u8(&b, (unsigned)gf__bit_width((uint32_t)ci->max_def));
                            pqw_le16(&b, (uint32_t)pi[i].num_values); pqw_u8(&b, 63);
                            pqw_put(&b, body + 4, ll);
                            gff_put_seed(argv[1], "levels", &b);
                        }
                    }
                }
            }
        pqw_free(&b);
        gpufeed_file_close(f);
        free(buf);
    }
    printf("%d seeds\n", gff_nseed);
    return 0;
}

#elif GFF_T == GFF_thrift
/* The footer decoder through gpufeed_file_open (PAR1 + input as the
   FileMetaData + length + PAR1), and the page-header decoder directly. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pqw_buf b = {0};
    gpufeed_file_desc d;
    gpufeed_file *f = NULL;
    gpufeed_error err;
    gpufeed_result r;
    gf__tc t;
    gf__ph h;
    pqw_put(&b, "PAR1", 4);
    pqw_put(&b, data, size);
    pqw_le32(&b, (uint32_t)size);
    pqw_put(&b, "PAR1", 4);
    memset(&d, 0, sizeof d);
    d.data = b.p; d.data_size = b.n;
    memset(&err, 0, sizeof err);
    r = gpufeed_file_open(&f, &d, &err);
    if (r == GPUFEED_OK) {
        const gpufeed_metadata *md = gpufeed_file_metadata(f);
        int32_t i;
        if (!md) GFF_FAIL("no metadata after a successful open");
        for (i = 0; i < md->num_columns; i++) gff_sink += gff_touch(md->columns[i].path, strlen(md->columns[i].path));
        gpufeed_file_close(f);
    } else {
        gff_message(err.message, r);
        if (f) GFF_FAIL("failed open left a file");
    }
    pqw_free(&b);
    memset(&h, 0, sizeof h);
    gf__tc_init(&t, data, size, 0, "PageHeader");
    gf__parse_page_header(&t, &h);
    gff_sink += (uint64_t)h.usize + (uint64_t)h.csize + (uint64_t)t.err;
    return 0;
}

#elif GFF_T == GFF_levels
/* RLE/bit-packed hybrid (byte 0 bit 7 clear) or deprecated BIT_PACKED
   (set) levels of width byte0 % 33, count from bytes 1-2, read in chunks
   whose sizes come from byte 3. Every value must fit the width. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gf__rle r;
    uint32_t out[512], count, got = 0, step;
    int bw, msb;
    if (size < 4) return 0;
    bw = data[0] % 33; msb = data[0] >> 7;
    count = (uint32_t)data[1] | ((uint32_t)data[2] << 8);
    step = (uint32_t)(data[3] % 200) + 1;
    if (msb) gf__rle_init_msb(&r, data + 4, data + size, bw, count);
    else gf__rle_init(&r, data + 4, data + size, bw);
    while (got < count) {
        uint32_t want = count - got < step ? count - got : step, k, i;
        k = gf__rle_get(&r, out, want);
        if (k > want) GFF_FAIL("%u values for %u asked", k, want);
        for (i = 0; i < k; i++)
            if (bw < 32 && (out[i] >> bw) != 0) GFF_FAIL("value %u wider than %d bits", out[i], bw);
        got += k;
        gff_sink += k ? out[k - 1] : 0;
        if (k < want) break;
    }
    return 0;
}

#elif GFF_T == GFF_snappy || GFF_T == GFF_lz4
/* The codec alone: bytes 0-3 the expected size (at most 4 MiB), the rest
   the compressed page. Either exactly dn bytes or an error. For LZ4, byte 0
   bit 7 picks the Hadoop-framed codec id over LZ4_RAW. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char msg[GPUFEED_ERROR_MAX];
    uint8_t *dst;
    size_t dn;
    gpufeed_codec codec;
    gpufeed_result r;
    if (size < 4) return 0;
    dn = (size_t)(((uint32_t)data[0] | ((uint32_t)data[1] << 8) | ((uint32_t)data[2] << 16) | ((uint32_t)data[3] << 24)) & 0x3FFFFF);
#if GFF_T == GFF_snappy
    codec = GPUFEED_CODEC_SNAPPY;
#else
    codec = (data[0] & 0x80) ? GPUFEED_CODEC_LZ4 : GPUFEED_CODEC_LZ4_RAW;
#endif
    if ((uint64_t)dn > gf__codec_max_expansion(codec, (uint64_t)(size - 4))) return 0; /* the reader rejects it first */
    dst = (uint8_t *)malloc(dn ? dn : 1);
    if (!dst) return 0;
    msg[0] = 0;
    r = gf__decompress(codec, data + 4, size - 4, dst, dn, msg, sizeof msg);
    if (r == GPUFEED_OK) gff_sink += gff_touch(dst, dn);
    else gff_message(msg, r);
    free(dst);
    return 0;
}

#else
/* ---- page targets -------------------------------------------------------- */

static int32_t gff_encoding(void)
{
#if GFF_T == GFF_plain
    return GPUFEED_ENC_PLAIN;
#elif GFF_T == GFF_rle_bool
    return GPUFEED_ENC_RLE;
#elif GFF_T == GFF_dict
    return GPUFEED_ENC_RLE_DICTIONARY;
#elif GFF_T == GFF_delta_bp
    return GPUFEED_ENC_DELTA_BINARY_PACKED;
#elif GFF_T == GFF_delta_lba
    return GPUFEED_ENC_DELTA_LENGTH_BYTE_ARRAY;
#elif GFF_T == GFF_delta_ba
    return GPUFEED_ENC_DELTA_BYTE_ARRAY;
#elif GFF_T == GFF_nested
    return GPUFEED_ENC_PLAIN;
#else
    return GPUFEED_ENC_BYTE_STREAM_SPLIT;
#endif
}

/* the physical types the encoding is defined for */
static int32_t gff_type(unsigned b)
{
#if GFF_T == GFF_plain
    static const int32_t t[] = { 0, 1, 2, 3, 4, 5, 6, 7 };
#elif GFF_T == GFF_rle_bool
    static const int32_t t[] = { 0 };
#elif GFF_T == GFF_dict
    static const int32_t t[] = { 1, 2, 3, 4, 5, 6, 7 };
#elif GFF_T == GFF_delta_bp
    static const int32_t t[] = { 1, 2 };
#elif GFF_T == GFF_delta_lba
    static const int32_t t[] = { 6 };
#elif GFF_T == GFF_delta_ba
    static const int32_t t[] = { 6, 7 };
#elif GFF_T == GFF_nested
    static const int32_t t[] = { 1, 6 };
#else
    static const int32_t t[] = { 1, 2, 4, 5, 7 };
#endif
    if (b & 0x80) return (int32_t)(b % 8);
    return t[b % (sizeof t / sizeof t[0])];
}

static size_t gff_value_size(int32_t type)
{
    switch (type) {
    case 0: return 1;
    case 1: case 4: return 4;
    case 2: case 3: case 5: return 8;
    default: return sizeof(gpufeed_bytes);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pqw_file pf; pqw_schema sch[2]; pqw_rowgroup rg; pqw_chunk ch; pqw_page pg[3];
#if GFF_T == GFF_nested
    pqw_schema nsch[6]; int nn = 0;
#endif
    pqw_buf file = {0}, b0 = {0}, b1 = {0}, b2 = {0};
    gpufeed_file_desc d;
    gpufeed_file *f = NULL;
    gpufeed_column *c = NULL;
    gpufeed_column_desc cd;
    gpufeed_column_batch bt;
    gpufeed_error err;
    gpufeed_result r;
    int32_t type, n, width = 0, npg = 0, enc = gff_encoding();
    unsigned fl;
    int v2, opt, crc, two;
    size_t rest, split;
#if GFF_T == GFF_dict
    size_t dictlen;
#endif
    const uint8_t *body;
    int64_t rows = 0, total;
    if (size < 7) return 0;
    type = gff_type(data[0]);
    fl = data[1]; v2 = fl & 1; opt = (fl >> 1) & 1; crc = (fl >> 2) & 1; two = (fl >> 3) & 1;
    n = (int32_t)(((uint32_t)data[2] | ((uint32_t)data[3] << 8)) % 4097);
    if (type == 7) width = (int32_t)(data[4] % 32) + 1;
    split = (size_t)data[5] | ((size_t)data[6] << 8);
    body = data + 7; rest = size - 7;
#if GFF_T == GFF_dict
    dictlen = split < rest ? split : rest;
    pqw_put(&b0, body, dictlen);
    body += dictlen; rest -= dictlen;
#endif
    if (two) { /* two data pages: n values each */
        size_t s = split % (rest + 1);
        pqw_put(&b1, body, s); pqw_put(&b2, body + s, rest - s);
    } else {
        pqw_put(&b1, body, rest);
    }
    memset(pg, 0, sizeof pg);
#if GFF_T == GFF_dict
    pg[npg] = pqw_dict_page(&b0, (int32_t)(data[4] % 64) * 3 + (int32_t)(dictlen % 7));
    pg[npg].crc_auto = crc;
    npg++;
#endif
    {
        pqw_buf *bb[2]; int k;
        bb[0] = &b1; bb[1] = &b2;
        for (k = 0; k < 1 + two; k++) {
            if (v2) {
                int32_t dl = opt ? (int32_t)(data[4] % (bb[k]->n + 1)) : 0, rl = 0;
#if GFF_T == GFF_nested
                rl = (int32_t)(data[5] % (bb[k]->n + 1));
                dl = (int32_t)(data[4] % (bb[k]->n - (size_t)rl + 1));
#endif
                pg[npg] = pqw_v2_page(bb[k], n, enc, 0, dl, rl);
            } else {
                pg[npg] = pqw_data_page(bb[k], n, enc);
            }
            pg[npg].crc_auto = crc;
            npg++;
        }
    }
#if GFF_T == GFF_nested
    {   /* byte 0 bits 4-5: 0 3-level LIST of optional elements, 1 a list of
           lists, 2 a legacy repeated primitive, 3 a required list of required */
        int form = (data[0] >> 4) & 3;
        memset(&pf, 0, sizeof pf); memset(&rg, 0, sizeof rg); memset(&ch, 0, sizeof ch);
        nsch[0] = pqw_root(1);
        if (form == 2) {
            nsch[1] = pqw_leaf("r", type, PQW_REPEATED); nn = 2; ch.path = "r";
        } else if (form == 1) {
            nsch[1] = pqw_group("ll", 1, PQW_OPTIONAL); nsch[1].converted_type = pqw_set(3);
            nsch[2] = pqw_group("list", 1, PQW_REPEATED);
            nsch[3] = pqw_group("element", 1, PQW_OPTIONAL); nsch[3].converted_type = pqw_set(3);
            nsch[4] = pqw_group("list", 1, PQW_REPEATED);
            nsch[5] = pqw_leaf("element", type, PQW_OPTIONAL); nn = 6; ch.path = "ll.list.element.list.element";
        } else {
            nsch[1] = pqw_group("l", 1, form == 3 ? PQW_REQUIRED : PQW_OPTIONAL); nsch[1].converted_type = pqw_set(3);
            nsch[2] = pqw_group("list", 1, PQW_REPEATED);
            nsch[3] = pqw_leaf("element", type, form == 3 ? PQW_REQUIRED : PQW_OPTIONAL); nn = 4; ch.path = "l.list.element";
        }
        ch.pages = pg; ch.npages = npg; ch.physical = type;
        rg.chunks = &ch; rg.nchunks = 1;
        pf.schema = nsch; pf.nschema = nn; pf.rgs = &rg; pf.nrgs = 1;
        (void)sch;
    }
#else
    pqw_simple(&pf, sch, &rg, &ch, "x", type, opt ? PQW_OPTIONAL : PQW_REQUIRED, pg, npg);
    if (type == 7) sch[1].type_length = pqw_set(width);
#endif
    pqw_build(&pf, &file);

    memset(&d, 0, sizeof d);
    d.data = file.p; d.data_size = file.n;
    if (crc) d.flags = GPUFEED_OPEN_VERIFY_CRC;
    memset(&err, 0, sizeof err);
    r = gpufeed_file_open(&f, &d, &err);
    if (r != GPUFEED_OK) { gff_message(err.message, r); goto done; }
    memset(&cd, 0, sizeof cd);
    cd.max_rows = 1 + (int64_t)(split % 700);
    r = gpufeed_column_open(&c, f, 0, 0, &cd, &err);
    if (r != GPUFEED_OK) { gff_message(err.message, r); goto done; }
    total = (int64_t)n * (1 + two);
#if GFF_T == GFF_nested
    {   /* whole rows, levels within their maxima, values packed */
        const gpufeed_column_info *ci = &gpufeed_file_metadata(f)->columns[0];
        int64_t levels = 0;
        for (;;) {
            int64_t i, nv = 0;
            r = gpufeed_column_read(c, &bt);
            if (r == GPUFEED_DONE) break;
            if (r != GPUFEED_OK) { gff_message(gpufeed_column_error(c), r); break; }
            if (bt.num_rows <= 0 || !bt.rep_levels || !bt.def_levels || bt.num_levels < bt.num_rows)
                GFF_FAIL("nested batch: %lld rows, %lld levels", (long long)bt.num_rows, (long long)bt.num_levels);
            if (bt.rep_levels[0] != 0) GFF_FAIL("a batch starts inside a row");
            for (i = 0; i < bt.num_levels; i++) {
                if (bt.rep_levels[i] < 0 || bt.rep_levels[i] > ci->max_rep) GFF_FAIL("rep level %d", bt.rep_levels[i]);
                if (bt.def_levels[i] < 0 || bt.def_levels[i] > ci->max_def) GFF_FAIL("def level %d", bt.def_levels[i]);
                if (bt.def_levels[i] == ci->max_def) nv++;
            }
            if (nv != bt.num_values) GFF_FAIL("%lld values for %lld defined levels", (long long)bt.num_values, (long long)nv);
            for (i = 0; i < bt.num_values; i++) {
                if (type == 6) {
                    gpufeed_bytes by;
                    memcpy(&by, (const uint8_t *)bt.values + (size_t)i * sizeof by, sizeof by);
                    if (by.len) gff_sink += gff_touch(by.ptr, by.len);
                } else gff_sink += gff_touch((const uint8_t *)bt.values + (size_t)i * 4, 4);
            }
            levels += bt.num_levels;
            rows += bt.num_rows;
            if (levels > total) GFF_FAIL("%lld level entries of %lld", (long long)levels, (long long)total);
        }
        goto done;
    }
#endif
    for (;;) {
        int64_t i, nulls = 0;
        size_t vs = gff_value_size(type);
        r = gpufeed_column_read(c, &bt);
        if (r == GPUFEED_DONE) {
            if (rows != total) GFF_FAIL("DONE after %lld of %lld rows", (long long)rows, (long long)total);
            break;
        }
        if (r != GPUFEED_OK) { gff_message(gpufeed_column_error(c), r); break; }
        if (bt.num_rows <= 0 || bt.num_rows > cd.max_rows) GFF_FAIL("batch of %lld rows", (long long)bt.num_rows);
        if (bt.first_row != rows) GFF_FAIL("batch starts at %lld, expected %lld", (long long)bt.first_row, (long long)rows);
        if (!opt && bt.valid) GFF_FAIL("valid[] on a required column");
        for (i = 0; i < bt.num_rows; i++) {
            const uint8_t *v = (const uint8_t *)bt.values + (size_t)i * vs;
            int ok = !bt.valid || bt.valid[i];
            if (bt.valid && bt.valid[i] > 1) GFF_FAIL("valid[%lld] = %u", (long long)i, bt.valid[i]);
            if (!ok) {
                size_t j;
                nulls++;
                for (j = 0; j < vs; j++) if (v[j]) GFF_FAIL("null slot %lld not zero", (long long)i);
                continue;
            }
            if (type == 0 && v[0] > 1) GFF_FAIL("BOOLEAN value %u", v[0]);
            if (type >= 6) {
                gpufeed_bytes by;
                memcpy(&by, v, sizeof by);
                if (type == 7 && by.len != (uint32_t)width) GFF_FAIL("FLBA of %u bytes, width %d", by.len, width);
                if (by.len) gff_sink += gff_touch(by.ptr, by.len);
            } else {
                gff_sink += gff_touch(v, vs);
            }
        }
        if (nulls != bt.null_count) GFF_FAIL("null_count %lld, counted %lld", (long long)bt.null_count, (long long)nulls);
        rows += bt.num_rows;
        if (rows > total) GFF_FAIL("%lld rows of %lld", (long long)rows, (long long)total);
    }
done:
    if (c) gpufeed_column_close(c);
    if (f) gpufeed_file_close(f);
    pqw_free(&file); pqw_free(&b0); pqw_free(&b1); pqw_free(&b2);
    return 0;
}
#endif
