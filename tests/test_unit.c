/* Unit tests for gpufeed's internal pieces: Thrift compact decoding, the
   RLE/bit-packed hybrid, SNAPPY, PLAIN, helpers; the dense layer's null
   fill on the PLAIN path; and a proof that
   tests/pq_writer.h writes files gpufeed reads back exactly.
   Run from the repository root. */
#define GPUFEED_IMPLEMENTATION
#include "../gpufeed.h"
#include "gf_test.h"
#include "pq_writer.h"
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <math.h>

/* ---- small helpers ------------------------------------------------------ */

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
    return rng_state;
}

static void tc_on(gf__tc *t, const pqw_buf *b) { gf__tc_init(t, b->p, b->n, 0, "test"); }

/* ---- a generic column builder for the writer proof ---------------------- */

enum { N_RG0 = 100, N_RG1 = 37 };

typedef struct colspec {
    const char *name;
    int32_t type, rep, tlen;
    int dict;                          /* dictionary encoded */
    int v2;                            /* v2 data pages */
    int codec;                         /* per chunk */
    int npages;
    int logical;                       /* LogicalType member, 0 none */
} colspec;

static const colspec proof_cols[] = {
    { "i32", PQW_INT32, PQW_REQUIRED, 0, 0, 0, PQW_UNCOMPRESSED, 2, 0 },
    { "i64", PQW_INT64, PQW_OPTIONAL, 0, 0, 0, PQW_UNCOMPRESSED, 3, 0 },
    { "d", PQW_DOUBLE, PQW_REQUIRED, 0, 0, 0, PQW_SNAPPY, 1, 0 },
    { "s", PQW_BYTE_ARRAY, PQW_OPTIONAL, 0, 0, 0, PQW_UNCOMPRESSED, 2, 1 },
    { "b", PQW_BOOLEAN, PQW_REQUIRED, 0, 0, 0, PQW_UNCOMPRESSED, 3, 0 },
    { "color", PQW_BYTE_ARRAY, PQW_REQUIRED, 0, 1, 0, PQW_UNCOMPRESSED, 2, 1 },
    { "dict_i64", PQW_INT64, PQW_OPTIONAL, 0, 1, 0, PQW_SNAPPY, 2, 0 },
    { "v2", PQW_INT64, PQW_OPTIONAL, 0, 0, 1, PQW_SNAPPY, 2, 0 },
    { "v2_dict", PQW_BYTE_ARRAY, PQW_OPTIONAL, 0, 1, 1, PQW_UNCOMPRESSED, 1, 1 },
    { "f", PQW_FLOAT, PQW_REQUIRED, 0, 0, 0, PQW_UNCOMPRESSED, 1, 0 },
    { "t96", PQW_INT96, PQW_OPTIONAL, 0, 0, 0, PQW_UNCOMPRESSED, 1, 0 },
    { "fx", PQW_FLBA, PQW_REQUIRED, 4, 0, 0, PQW_UNCOMPRESSED, 2, 0 },
};
#define N_PROOF_COLS ((int)(sizeof proof_cols / sizeof proof_cols[0]))

static const char *const colors[] = { "red", "green", "blue", "cyan", "" };

/* expected value of column c at row r: returns validity; writes the PLAIN
   bytes of the value to plain (len in *plen) */
static int proof_value(int c, int64_t r, uint8_t *plain, size_t *plen)
{
    int64_t v;
    switch (c) {
    case 0: { int32_t x = (int32_t)(r * 7919 - 50000); memcpy(plain, &x, 4); *plen = 4; return 1; }
    case 1: if (r % 3 == 0) return 0; v = r * 1000000007LL * (r % 2 ? -1 : 1); memcpy(plain, &v, 8); *plen = 8; return 1;
    case 2: { double d = (double)r * 0.5 - 3.25; memcpy(plain, &d, 8); *plen = 8; return 1; }
    case 3: {
        char s[32];
        if (r % 5 == 1) return 0;
        if (r % 7 == 0) s[0] = 0; else sprintf(s, "s%lld", (long long)r);
        *plen = 4 + strlen(s);
        { uint32_t l = (uint32_t)strlen(s); memcpy(plain, &l, 4); memcpy(plain + 4, s, l); }
        return 1;
    }
    case 4: plain[0] = (uint8_t)((r * r) % 3 == 1); *plen = 1; return 1;
    case 5: {
        const char *s = colors[(r / 10 + r % 2) % 5];
        uint32_t l = (uint32_t)strlen(s);
        memcpy(plain, &l, 4); memcpy(plain + 4, s, l); *plen = 4 + l;
        return 1;
    }
    case 6: if (r % 4 == 2) return 0; v = (r / 8) * 1000 - 7; memcpy(plain, &v, 8); *plen = 8; return 1;
    case 7: if (r % 4 == 3) return 0; v = r * r - 100; memcpy(plain, &v, 8); *plen = 8; return 1;
    case 8: {
        const char *s;
        uint32_t l;
        if (r % 6 == 5) return 0;
        s = colors[(r / 3) % 5]; l = (uint32_t)strlen(s);
        memcpy(plain, &l, 4); memcpy(plain + 4, s, l); *plen = 4 + l;
        return 1;
    }
    case 9: { float f = (float)r / 4.0f - 1.0f; memcpy(plain, &f, 4); *plen = 4; return 1; }
    case 10: {
        uint64_t nanos = (uint64_t)r * 1000003u;
        uint32_t jd = (uint32_t)(2440588 - 50 + r);
        if (r % 9 == 4) return 0;
        memcpy(plain, &nanos, 8); memcpy(plain + 8, &jd, 4); *plen = 12;
        return 1;
    }
    case 11: plain[0] = (uint8_t)r; plain[1] = (uint8_t)(r + 1); plain[2] = (uint8_t)(r * 3); plain[3] = 0xAB; *plen = 4; return 1;
    }
    return 0;
}

/* compares a value as gpufeed returns it with the PLAIN bytes */
static int value_matches(int32_t type, const uint8_t *got, const uint8_t *plain, size_t plen)
{
    switch (type) {
    case PQW_BOOLEAN: return got[0] == plain[0];
    case PQW_INT96: return *(const int64_t *)(const void *)got == gpufeed_int96_to_ns(plain);
    case PQW_BYTE_ARRAY: {
        const gpufeed_bytes *b = (const gpufeed_bytes *)(const void *)got;
        return b->len == plen - 4 && (b->len == 0 || memcmp(b->ptr, plain + 4, b->len) == 0);
    }
    case PQW_FLBA: {
        const gpufeed_bytes *b = (const gpufeed_bytes *)(const void *)got;
        return b->len == plen && memcmp(b->ptr, plain, plen) == 0;
    }
    default: return memcmp(got, plain, plen) == 0;
    }
}

typedef struct built_chunk {
    pqw_buf bodies[8];
    pqw_page pages[8];
    int npages;
} built_chunk;

/* distinct PLAIN encodings of a chunk's values */
typedef struct dictb { uint8_t vals[256][40]; size_t lens[256]; int n; } dictb;
static int dict_index(dictb *d, const uint8_t *plain, size_t plen)
{
    int i;
    for (i = 0; i < d->n; i++) if (d->lens[i] == plen && memcmp(d->vals[i], plain, plen) == 0) return i;
    memcpy(d->vals[d->n], plain, plen); d->lens[d->n] = plen;
    return d->n++;
}

static void build_proof_chunk(int c, int64_t r0, int64_t nrows, built_chunk *bc, pqw_chunk *ch)
{
    const colspec *cs = &proof_cols[c];
    int p, np = cs->npages;
    int maxdef = cs->rep == PQW_OPTIONAL;
    dictb *d = (dictb *)calloc(1, sizeof *d);
    memset(bc, 0, sizeof *bc);
    memset(ch, 0, sizeof *ch);
    if (cs->dict) {   /* dictionary from all the chunk's values */
        int64_t r;
        uint8_t plain[64]; size_t plen;
        for (r = r0; r < r0 + nrows; r++)
            if (proof_value(c, r, plain, &plen)) dict_index(d, plain, plen);
        {
            pqw_buf raw = {0}; int i;
            for (i = 0; i < d->n; i++) pqw_put(&raw, d->vals[i], d->lens[i]);
            if (cs->codec == PQW_SNAPPY) pqw_snappy_compress(&bc->bodies[0], raw.p, raw.n);
            else pqw_append(&bc->bodies[0], &raw);
            bc->pages[0] = pqw_dict_page(&bc->bodies[0], d->n);
            bc->pages[0].raw_len = raw.n;
            pqw_free(&raw);
        }
        bc->npages = 1;
    }
    for (p = 0; p < np; p++) {
        int64_t a = r0 + nrows * p / np, b = r0 + nrows * (p + 1) / np, r;
        uint32_t n = (uint32_t)(b - a), nn = 0, i;
        uint32_t *lv = (uint32_t *)calloc(n + 1, sizeof *lv), *idx = (uint32_t *)calloc(n + 1, sizeof *idx);
        uint8_t *bools = (uint8_t *)calloc(n + 1, 1);
        pqw_buf levels = {0}, vals = {0}, body = {0};
        pqw_page *pg = &bc->pages[bc->npages];
        pqw_buf *out = &bc->bodies[bc->npages];
        for (r = a, i = 0; r < b; r++, i++) {
            uint8_t plain[64]; size_t plen;
            int valid = proof_value(c, r, plain, &plen);
            lv[i] = (uint32_t)valid;
            if (!valid) continue;
            if (cs->dict) idx[nn] = (uint32_t)dict_index(d, plain, plen);
            else if (cs->type == PQW_BOOLEAN) bools[nn] = plain[0];
            else pqw_put(&vals, plain, plen);
            nn++;
        }
        if (cs->dict) pqw_dict_indices(&vals, idx, nn, gf__bit_width((uint32_t)(d->n - 1)));
        else if (cs->type == PQW_BOOLEAN) pqw_plain_bool(&vals, bools, nn);
        if (!cs->v2) {
            if (maxdef) pqw_levels_v1(&body, lv, n, 1);
            pqw_append(&body, &vals);
            if (cs->codec == PQW_SNAPPY) pqw_snappy_compress(out, body.p, body.n);
            else pqw_append(out, &body);
            *pg = pqw_data_page(out, (int32_t)n, cs->dict ? PQW_RLE_DICTIONARY : PQW_PLAIN);
            pg->raw_len = body.n;
        } else {
            if (maxdef) pqw_hybrid(&levels, lv, n, 1);
            pqw_append(out, &levels);
            if (cs->codec == PQW_SNAPPY) pqw_snappy_compress(out, vals.p, vals.n);
            else pqw_append(out, &vals);
            *pg = pqw_v2_page(out, (int32_t)n, cs->dict ? PQW_RLE_DICTIONARY : PQW_PLAIN, (int32_t)(n - nn), (int32_t)levels.n, 0);
            pg->raw_len = levels.n + vals.n;
        }
        bc->npages++;
        pqw_free(&levels); pqw_free(&vals); pqw_free(&body);
        free(lv); free(idx); free(bools);
    }
    ch->pages = bc->pages; ch->npages = bc->npages;
    ch->physical = cs->type; ch->path = cs->name; ch->codec = cs->codec;
    free(d);
}

static void free_built(built_chunk *bc)
{
    int i;
    for (i = 0; i < 8; i++) pqw_free(&bc->bodies[i]);
}

typedef struct proof_file {
    pqw_schema sch[N_PROOF_COLS + 1];
    built_chunk bc[2][N_PROOF_COLS];
    pqw_chunk ch[2][N_PROOF_COLS];
    pqw_rowgroup rg[2];
    pqw_file f;
} proof_file;

/* builds the proof file; `tweak` may add hooks before serialization */
static void build_proof(proof_file *pf, pqw_buf *out, void (*tweak)(proof_file *))
{
    int c, g;
    memset(pf, 0, sizeof *pf);
    pf->sch[0] = pqw_root(N_PROOF_COLS);
    for (c = 0; c < N_PROOF_COLS; c++) {
        const colspec *cs = &proof_cols[c];
        pf->sch[c + 1] = pqw_leaf(cs->name, cs->type, cs->rep);
        if (cs->tlen) pf->sch[c + 1].type_length = pqw_set(cs->tlen);
        if (cs->logical) { pf->sch[c + 1].logical = cs->logical; pf->sch[c + 1].converted_type = pqw_set(0); }
    }
    for (g = 0; g < 2; g++) {
        int64_t r0 = g ? N_RG0 : 0, n = g ? N_RG1 : N_RG0;
        for (c = 0; c < N_PROOF_COLS; c++) build_proof_chunk(c, r0, n, &pf->bc[g][c], &pf->ch[g][c]);
        pf->rg[g].chunks = pf->ch[g]; pf->rg[g].nchunks = N_PROOF_COLS;
    }
    pf->f.schema = pf->sch; pf->f.nschema = N_PROOF_COLS + 1;
    pf->f.rgs = pf->rg; pf->f.nrgs = 2;
    pf->f.created_by = "pq_writer.h (gpufeed tests)";
    if (tweak) tweak(pf);
    pqw_build(&pf->f, out);
}
static void free_proof(proof_file *pf)
{
    int c, g;
    for (g = 0; g < 2; g++) for (c = 0; c < N_PROOF_COLS; c++) free_built(&pf->bc[g][c]);
}

/* reads every column of the proof file through the public API and checks
   every value; returns the number of mismatches (0 = all good) */
static int check_proof_file(const pqw_buf *file, int64_t max_rows)
{
    gpufeed_file *f = NULL;
    gpufeed_error err;
    gpufeed_file_desc d;
    const gpufeed_metadata *md;
    int bad = 0, g, c;
    memset(&d, 0, sizeof d);
    d.data = file->p; d.data_size = file->n; d.name = "proof.parquet";
    if (gpufeed_file_open(&f, &d, &err) != GPUFEED_OK) {
        fprintf(stderr, "  open failed: %s\n", err.message);
        return 1;
    }
    md = gpufeed_file_metadata(f);
    if (md->num_columns != N_PROOF_COLS || md->num_row_groups != 2 || md->num_rows != N_RG0 + N_RG1) {
        fprintf(stderr, "  metadata: %d columns, %d row groups, %lld rows\n", md->num_columns, md->num_row_groups, (long long)md->num_rows);
        bad++;
    }
    for (g = 0; g < md->num_row_groups && g < 2; g++) {
        for (c = 0; c < md->num_columns && c < N_PROOF_COLS; c++) {
            gpufeed_column *col = NULL;
            gpufeed_column_desc cd;
            gpufeed_column_batch b;
            gpufeed_result r;
            int64_t row = g ? N_RG0 : 0, end = g ? N_RG0 + N_RG1 : N_RG0;
            size_t esz = gf__elem_size((gpufeed_physical_type)proof_cols[c].type);
            memset(&cd, 0, sizeof cd);
            cd.max_rows = max_rows;
            if (gpufeed_column_open(&col, f, g, c, &cd, &err) != GPUFEED_OK) {
                fprintf(stderr, "  column_open %d/%d: %s\n", g, c, err.message);
                bad++;
                continue;
            }
            while ((r = gpufeed_column_read(col, &b)) == GPUFEED_OK) {
                int64_t i;
                if ((b.valid != NULL) != (proof_cols[c].rep == PQW_OPTIONAL)) bad++;
                for (i = 0; i < b.num_rows; i++, row++) {
                    uint8_t plain[64]; size_t plen;
                    int valid = row < end ? proof_value(c, row, plain, &plen) : -1;
                    int gv = b.valid ? b.valid[i] : 1;
                    if (valid != gv || (valid && !value_matches(proof_cols[c].type, (const uint8_t *)b.values + (size_t)i * esz, plain, plen))) {
                        if (bad < 10) fprintf(stderr, "  rg %d column %s row %lld: mismatch (valid %d, got %d)\n", g, proof_cols[c].name, (long long)row, valid, gv);
                        bad++;
                    }
                }
            }
            if (r != GPUFEED_DONE) { fprintf(stderr, "  rg %d column %s: %s\n", g, proof_cols[c].name, gpufeed_column_error(col)); bad++; }
            if (row != end) { fprintf(stderr, "  rg %d column %s: %lld rows\n", g, proof_cols[c].name, (long long)row); bad++; }
            gpufeed_column_close(col);
        }
    }
    gpufeed_file_close(f);
    return bad;
}

static void test_writer_roundtrip(void)
{
    proof_file *pf = (proof_file *)calloc(1, sizeof *pf);
    pqw_buf out = {0};
    const char *dump = getenv("PQW_DUMP");
    build_proof(pf, &out, NULL);
    if (dump) { FILE *fp = fopen(dump, "wb"); if (fp) { fwrite(out.p, 1, out.n, fp); fclose(fp); } }
    CHECK(check_proof_file(&out, 0) == 0);
    CHECK(check_proof_file(&out, 7) == 0);   /* batches that end mid-page */
    CHECK(check_proof_file(&out, 1) == 0);
    {   /* a few metadata facts */
        gpufeed_file *f; gpufeed_error err; gpufeed_file_desc d;
        memset(&d, 0, sizeof d); d.data = out.p; d.data_size = out.n;
        if (gpufeed_file_open(&f, &d, &err) == GPUFEED_OK) {
            const gpufeed_metadata *md = gpufeed_file_metadata(f);
            int32_t s = gpufeed_file_find_column(f, "s");
            CHECK(s == 3);
            CHECK(md->nodes[md->columns[s].node].logical == GPUFEED_LT_STRING);
            CHECK(md->columns[1].max_def == 1 && md->columns[0].max_def == 0);
            CHECK(md->row_groups[0].chunks[2].codec == GPUFEED_CODEC_SNAPPY);
            CHECK(md->row_groups[0].chunks[5].dictionary_page_offset == pf->ch[0][5].pages[0].at);
            CHECK(md->row_groups[1].num_rows == N_RG1);
            CHECK(md->created_by && strcmp(md->created_by, "pq_writer.h (gpufeed tests)") == 0);
            CHECK(strcmp(gpufeed_file_name(f), "<memory>") == 0);
            gpufeed_file_close(f);
        } else CHECK_MSG(0, "%s", err.message);
    }
    pqw_free(&out);
    free_proof(pf);
    free(pf);
}

/* ---- Thrift: varints, zigzag, field headers ----------------------------- */

static void test_tc_varints(void)
{
    int len;
    for (len = 1; len <= 10; len++) {
        /* the smallest and largest value of each encoded length */
        uint64_t lo = len == 1 ? 0 : 1ull << (7 * (len - 1));
        uint64_t hi = len == 10 ? UINT64_MAX : (1ull << (7 * len)) - 1;
        uint64_t vals[3];
        int k;
        vals[0] = lo; vals[1] = hi; vals[2] = lo + rnd() % (hi - lo + 1);
        for (k = 0; k < 3; k++) {
            pqw_buf b = {0}; gf__tc t;
            pqw_uvarint(&b, vals[k]);
            CHECK((int)b.n == len);
            tc_on(&t, &b);
            CHECK(gf__tc_uvar(&t) == vals[k]);
            CHECK(t.err == GPUFEED_OK && t.p == t.end);
            pqw_free(&b);
        }
    }
    {   /* max u64 is FF x9 01 */
        static const uint8_t m[10] = { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01 };
        gf__tc t; gf__tc_init(&t, m, 10, 0, "t");
        CHECK(gf__tc_uvar(&t) == UINT64_MAX && !t.err);
    }
}

static void test_tc_zigzag(void)
{
    static const int64_t v[] = { 0, -1, 1, -2, 2, 63, -64, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, INT64_MIN + 1 };
    size_t i;
    CHECK(pqw_zigzag(0) == 0 && pqw_zigzag(-1) == 1 && pqw_zigzag(1) == 2 && pqw_zigzag(-2) == 3);
    CHECK(pqw_zigzag(INT64_MAX) == UINT64_MAX - 1 && pqw_zigzag(INT64_MIN) == UINT64_MAX);
    for (i = 0; i < sizeof v / sizeof v[0]; i++) {
        pqw_buf b = {0}; gf__tc t;
        pqw_uvarint(&b, pqw_zigzag(v[i]));
        tc_on(&t, &b);
        CHECK_MSG(gf__tc_zz(&t) == v[i], "value %lld", (long long)v[i]);
        CHECK(!t.err && t.p == t.end);
        pqw_free(&b);
    }
}

static void test_tc_overlong(void)
{
    uint8_t b[16];
    gf__tc t;
    /* 11 bytes: 10 continuation bytes then 0 */
    memset(b, 0x80, 10); b[10] = 0;
    gf__tc_init(&t, b, 11, 1000, "t");
    (void)gf__tc_uvar(&t);
    CHECK(t.err == GPUFEED_ERR_THRIFT);
    CHECK_HAS(t.msg, "byte offset");
    /* 10th byte > 1 */
    memset(b, 0xFF, 9); b[9] = 0x02;
    gf__tc_init(&t, b, 10, 0, "t");
    (void)gf__tc_uvar(&t);
    CHECK(t.err == GPUFEED_ERR_THRIFT);
    memset(b, 0xFF, 9); b[9] = 0x7F;
    gf__tc_init(&t, b, 10, 0, "t");
    (void)gf__tc_uvar(&t);
    CHECK(t.err == GPUFEED_ERR_THRIFT);
    /* 10th byte 0x81 (continuation, low bit) */
    memset(b, 0xFF, 9); b[9] = 0x81; b[10] = 0x00;
    gf__tc_init(&t, b, 11, 0, "t");
    (void)gf__tc_uvar(&t);
    CHECK(t.err == GPUFEED_ERR_THRIFT);
    /* truncated */
    b[0] = 0x80; b[1] = 0x80;
    gf__tc_init(&t, b, 2, 0, "t");
    (void)gf__tc_uvar(&t);
    CHECK(t.err == GPUFEED_ERR_THRIFT);
    CHECK_HAS(t.msg, "truncated");
    /* errors stick: later reads return 0 */
    CHECK(gf__tc_uvar(&t) == 0);
    gf__tc_init(&t, b, 0, 0, "t");
    CHECK(gf__tc_zz(&t) == 0 && t.err == GPUFEED_ERR_THRIFT);
}

static void test_tc_field_headers(void)
{
    pqw_buf b = {0};
    pqw_tc w;
    gf__tc t;
    int id = 0, last = 0;
    pqw_tc_init(&w, &b);
    pqw_tc_begin(&w);
    pqw_tc_field(&w, 1, PQW_T_I32); pqw_tc_v_int(&w, 5);        /* short, delta 1 */
    pqw_tc_field(&w, 16, PQW_T_I64); pqw_tc_v_int(&w, -5);      /* short, delta 15 */
    pqw_tc_field(&w, 32, PQW_T_BINARY); pqw_tc_v_str(&w, "x");  /* long, delta 16 */
    pqw_tc_field(&w, 33, PQW_T_TRUE);                            /* short after long */
    pqw_tc_field(&w, 2, PQW_T_FALSE);                            /* negative delta: long */
    pqw_tc_field(&w, -7, PQW_T_I32); pqw_tc_v_int(&w, 1);       /* negative id */
    pqw_tc_field_long(&w, 32767, PQW_T_I8); pqw_u8(&b, 0x80);
    pqw_tc_field_long(&w, 40, PQW_T_DOUBLE); pqw_tc_v_double(&w, 1.5); /* long even for a small delta */
    pqw_tc_end(&w);
    CHECK(b.p[0] == 0x15 && b.p[2] == 0xF6 && b.p[4] == 0x08);
    tc_on(&t, &b);
    CHECK(gf__tc_field(&t, &id, &last) == GF__T_I32 && id == 1); CHECK(gf__tc_zz(&t) == 5);
    CHECK(gf__tc_field(&t, &id, &last) == GF__T_I64 && id == 16); CHECK(gf__tc_zz(&t) == -5);
    CHECK(gf__tc_field(&t, &id, &last) == GF__T_BINARY && id == 32); gf__tc_skip(&t, GF__T_BINARY, 0);
    CHECK(gf__tc_field(&t, &id, &last) == GF__T_TRUE && id == 33);
    CHECK(gf__tc_field(&t, &id, &last) == GF__T_FALSE && id == 2);
    CHECK(gf__tc_field(&t, &id, &last) == GF__T_I32 && id == -7); CHECK(gf__tc_zz(&t) == 1);
    CHECK(gf__tc_field(&t, &id, &last) == GF__T_I8 && id == 32767);
    CHECK(gf__tc_int(&t, id, GF__T_I8, -128, 127) == -128);
    CHECK(gf__tc_field(&t, &id, &last) == GF__T_DOUBLE && id == 40); gf__tc_skip(&t, GF__T_DOUBLE, 0);
    CHECK(gf__tc_field(&t, &id, &last) == 0);
    CHECK(!t.err && t.p == t.end);
    pqw_free(&b);
    {   /* invalid field type 13, 14, 15 */
        uint8_t x[3] = { 0x1D, 0, 0 };
        int ty;
        for (ty = 13; ty <= 15; ty++) {
            x[0] = (uint8_t)(0x10 | ty);
            gf__tc_init(&t, x, 3, 0, "t"); id = last = 0;
            CHECK(gf__tc_field(&t, &id, &last) == -1 && t.err == GPUFEED_ERR_THRIFT);
            CHECK_HAS(t.msg, "invalid field type");
        }
    }
    {   /* long-form id out of i16 range */
        pqw_buf c = {0};
        pqw_u8(&c, PQW_T_I32); pqw_uvarint(&c, pqw_zigzag(40000)); pqw_u8(&c, 0);
        tc_on(&t, &c); id = last = 0;
        CHECK(gf__tc_field(&t, &id, &last) == -1 && t.err == GPUFEED_ERR_THRIFT);
        pqw_free(&c);
    }
    {   /* no STOP */
        uint8_t x[1] = { 0x15 };
        gf__tc_init(&t, x, 0, 0, "t"); id = last = 0;
        CHECK(gf__tc_field(&t, &id, &last) == -1 && t.err == GPUFEED_ERR_THRIFT);
    }
}

/* ---- Thrift: skipping --------------------------------------------------- */

/* skips one value of `type` written by fn; expects the whole buffer used */
static int skip_ok(const pqw_buf *b, int type, int in_container)
{
    gf__tc t;
    tc_on(&t, b);
    gf__tc_skip(&t, type, in_container);
    if (t.err) fprintf(stderr, "  skip: %s\n", t.msg);
    return !t.err && t.p == t.end;
}

static void w_every_field(pqw_tc *w, void *ctx)
{
    int base = ctx ? *(const int *)ctx : 100;
    pqw_tc_bool(w, base, 1);
    pqw_tc_bool(w, base + 1, 0);
    pqw_tc_i8(w, base + 2, -5);
    pqw_tc_i16(w, base + 3, -300);
    pqw_tc_i32(w, base + 4, 123456);
    pqw_tc_i64(w, base + 5, -1234567890123LL);
    pqw_tc_double(w, base + 6, 3.5);
    pqw_tc_str(w, base + 7, "unknown field");
    pqw_tc_list(w, base + 8, PQW_T_I32, 3); pqw_tc_v_int(w, 1); pqw_tc_v_int(w, -2); pqw_tc_v_int(w, 3);
    pqw_tc_field(w, base + 9, PQW_T_SET); pqw_tc_list_hdr(w, PQW_T_BINARY, 2); pqw_tc_v_str(w, "a"); pqw_tc_v_str(w, "bc");
    pqw_tc_field(w, base + 10, PQW_T_MAP); pqw_tc_map_hdr(w, PQW_T_BINARY, PQW_T_I32, 2);
    pqw_tc_v_str(w, "k1"); pqw_tc_v_int(w, 1); pqw_tc_v_str(w, "k2"); pqw_tc_v_int(w, 2);
    pqw_tc_field(w, base + 11, PQW_T_MAP); pqw_tc_map_hdr(w, 0, 0, 0);       /* empty map */
    pqw_tc_struct(w, base + 12);                                              /* nested struct */
    pqw_tc_i32(w, 1, 7);
    pqw_tc_struct(w, 2);
    pqw_tc_str(w, 1, "deep");
    pqw_tc_list(w, 2, PQW_T_LIST, 2);                                         /* list of lists */
    pqw_tc_list_hdr(w, PQW_T_I32, 1); pqw_tc_v_int(w, 9);
    pqw_tc_list_hdr(w, PQW_T_I32, 0);
    pqw_tc_end(w);
    pqw_tc_end(w);
    pqw_tc_list(w, base + 13, PQW_T_STRUCT, 2);                               /* list of structs */
    pqw_tc_begin(w); pqw_tc_i32(w, 1, 1); pqw_tc_end(w);
    pqw_tc_begin(w); pqw_tc_end(w);
    pqw_tc_list(w, base + 14, PQW_T_TRUE, 3);                                 /* list of bools */
    pqw_tc_v_bool(w, 1); pqw_tc_v_bool(w, 0); pqw_tc_v_bool(w, 1);
    {   /* long list header form */
        int i;
        pqw_tc_list(w, base + 15, PQW_T_BINARY, 20);
        for (i = 0; i < 20; i++) pqw_tc_v_str(w, "e");
    }
    pqw_tc_list(w, base + 16, PQW_T_DOUBLE, 2); pqw_tc_v_double(w, 1.0); pqw_tc_v_double(w, 2.0);
    pqw_tc_field(w, base + 17, PQW_T_MAP); pqw_tc_map_hdr(w, PQW_T_I32, PQW_T_STRUCT, 1);
    pqw_tc_v_int(w, 4); pqw_tc_begin(w); pqw_tc_str(w, 1, "v"); pqw_tc_end(w);
    pqw_tc_list(w, base + 18, PQW_T_I8, 2); pqw_u8(w->b, 1); pqw_u8(w->b, 0xFF);
    pqw_tc_list(w, base + 19, PQW_T_I64, 0);                                  /* empty list */
    pqw_tc_field_long(w, -3, PQW_T_I32); pqw_tc_v_int(w, 1);                   /* negative id */
    pqw_tc_field_long(w, base + 20, PQW_T_BINARY); pqw_tc_v_str(w, "");
}

static void test_tc_skip_types(void)
{
    pqw_buf b = {0};
    pqw_tc w;
    /* one value of each type */
    pqw_u8(&b, 7); CHECK(skip_ok(&b, GF__T_I8, 0)); b.n = 0;
    pqw_tc_init(&w, &b);
    pqw_tc_v_int(&w, -300); CHECK(skip_ok(&b, GF__T_I16, 0)); b.n = 0;
    pqw_tc_v_int(&w, 1 << 30); CHECK(skip_ok(&b, GF__T_I32, 0)); b.n = 0;
    pqw_tc_v_int(&w, INT64_MIN); CHECK(skip_ok(&b, GF__T_I64, 0)); b.n = 0;
    pqw_tc_v_double(&w, 2.5); CHECK(skip_ok(&b, GF__T_DOUBLE, 0)); b.n = 0;
    pqw_tc_v_str(&w, "hello"); CHECK(skip_ok(&b, GF__T_BINARY, 0)); b.n = 0;
    pqw_tc_v_bin(&w, "", 0); CHECK(skip_ok(&b, GF__T_BINARY, 0)); b.n = 0;
    /* a bool field's value lives in its header: nothing to skip ... */
    CHECK(skip_ok(&b, GF__T_TRUE, 0) && skip_ok(&b, GF__T_FALSE, 0));
    /* ... but a bool element of a container is one byte */
    pqw_tc_v_bool(&w, 1); CHECK(skip_ok(&b, GF__T_TRUE, 1)); b.n = 0;
    pqw_tc_list_hdr(&w, PQW_T_I32, 2); pqw_tc_v_int(&w, 1); pqw_tc_v_int(&w, 1000); CHECK(skip_ok(&b, GF__T_LIST, 0)); b.n = 0;
    pqw_tc_list_hdr(&w, PQW_T_BINARY, 1); pqw_tc_v_str(&w, "s"); CHECK(skip_ok(&b, GF__T_SET, 0)); b.n = 0;
    pqw_tc_map_hdr(&w, 0, 0, 0); CHECK(skip_ok(&b, GF__T_MAP, 0)); b.n = 0;
    pqw_tc_map_hdr(&w, PQW_T_BINARY, PQW_T_LIST, 1); pqw_tc_v_str(&w, "k");
    pqw_tc_list_hdr(&w, PQW_T_DOUBLE, 1); pqw_tc_v_double(&w, 1); CHECK(skip_ok(&b, GF__T_MAP, 0)); b.n = 0;
    pqw_tc_map_hdr(&w, PQW_T_TRUE, PQW_T_FALSE, 2); pqw_tc_v_bool(&w, 1); pqw_tc_v_bool(&w, 0);
    pqw_tc_v_bool(&w, 0); pqw_tc_v_bool(&w, 1); CHECK(skip_ok(&b, GF__T_MAP, 0)); b.n = 0;
    {   /* list of lists, long header form */
        int i;
        pqw_tc_list_hdr(&w, PQW_T_LIST, 16);
        for (i = 0; i < 16; i++) { pqw_tc_list_hdr(&w, PQW_T_I16, 1); pqw_tc_v_int(&w, i); }
        CHECK(skip_ok(&b, GF__T_LIST, 0)); b.n = 0;
        pqw_tc_list_hdr(&w, PQW_T_I64, 300);
        for (i = 0; i < 300; i++) pqw_tc_v_int(&w, (int64_t)i << 40);
        CHECK(skip_ok(&b, GF__T_LIST, 0)); b.n = 0;
    }
    /* a struct holding every type, nested structs included */
    pqw_tc_begin(&w);
    w_every_field(&w, NULL);
    pqw_tc_end(&w);
    CHECK(skip_ok(&b, GF__T_STRUCT, 0));
    {   /* and cut short anywhere: an error, never a read past the end */
        size_t cut;
        for (cut = 0; cut < b.n; cut++) {
            gf__tc t;
            uint8_t *copy = (uint8_t *)malloc(cut ? cut : 1);
            memcpy(copy, b.p, cut);
            gf__tc_init(&t, copy, cut, 0, "t");
            gf__tc_skip(&t, GF__T_STRUCT, 0);
            CHECK_MSG(t.err != GPUFEED_OK, "cut at %u", (unsigned)cut);
            free(copy);
        }
    }
    b.n = 0;
    {   /* invalid type to skip; invalid list / map element types */
        gf__tc t;
        uint8_t x[4] = { 0x1D, 1, 0, 0 };
        gf__tc_init(&t, x, 4, 0, "t"); gf__tc_skip(&t, 13, 0); CHECK(t.err == GPUFEED_ERR_THRIFT);
        gf__tc_init(&t, x, 4, 0, "t"); gf__tc_skip(&t, GF__T_LIST, 0); CHECK(t.err == GPUFEED_ERR_THRIFT);
        x[0] = 0x10; /* one element of type 0 */
        gf__tc_init(&t, x, 4, 0, "t"); gf__tc_skip(&t, GF__T_LIST, 0); CHECK(t.err == GPUFEED_ERR_THRIFT);
        x[0] = 1; x[1] = 0xD5; /* map of one entry, key type 13 */
        gf__tc_init(&t, x, 4, 0, "t"); gf__tc_skip(&t, GF__T_MAP, 0); CHECK(t.err == GPUFEED_ERR_THRIFT);
        x[0] = 0x00; /* empty list with element type 0 (fastparquet writes this) */
        gf__tc_init(&t, x, 1, 0, "t"); gf__tc_skip(&t, GF__T_LIST, 0); CHECK(!t.err && t.p == t.end);
    }
    pqw_free(&b);
}

static void test_tc_depth(void)
{
    int depth;
    /* exactly GPUFEED_MAX_THRIFT_DEPTH nested structs are fine, one more is not */
    for (depth = GPUFEED_MAX_THRIFT_DEPTH - 1; depth <= GPUFEED_MAX_THRIFT_DEPTH + 1; depth++) {
        pqw_buf b = {0}; pqw_tc w; gf__tc t; int i;
        pqw_tc_init(&w, &b);
        for (i = 0; i < depth - 1; i++) pqw_tc_struct(&w, 1);
        for (i = 0; i < depth; i++) pqw_tc_stop(&w);
        tc_on(&t, &b);
        gf__tc_skip(&t, GF__T_STRUCT, 0);
        if (depth <= GPUFEED_MAX_THRIFT_DEPTH) CHECK_MSG(!t.err && t.p == t.end, "depth %d: %s", depth, t.msg);
        else { CHECK(t.err == GPUFEED_ERR_LIMIT); CHECK_HAS(t.msg, "GPUFEED_MAX_THRIFT_DEPTH"); }
        pqw_free(&b);
        /* lists of lists */
        pqw_tc_init(&w, &b);
        for (i = 0; i < depth - 1; i++) pqw_tc_list_hdr(&w, PQW_T_LIST, 1);
        pqw_tc_list_hdr(&w, PQW_T_I32, 0);
        tc_on(&t, &b);
        gf__tc_skip(&t, GF__T_LIST, 0);
        if (depth <= GPUFEED_MAX_THRIFT_DEPTH) CHECK_MSG(!t.err && t.p == t.end, "list depth %d: %s", depth, t.msg);
        else CHECK(t.err == GPUFEED_ERR_LIMIT);
        pqw_free(&b);
        /* maps of maps */
        pqw_tc_init(&w, &b);
        for (i = 0; i < depth - 1; i++) { pqw_tc_map_hdr(&w, PQW_T_I32, PQW_T_MAP, 1); pqw_tc_v_int(&w, i); }
        pqw_tc_map_hdr(&w, 0, 0, 0);
        tc_on(&t, &b);
        gf__tc_skip(&t, GF__T_MAP, 0);
        if (depth <= GPUFEED_MAX_THRIFT_DEPTH) CHECK_MSG(!t.err && t.p == t.end, "map depth %d: %s", depth, t.msg);
        else CHECK(t.err == GPUFEED_ERR_LIMIT);
        pqw_free(&b);
    }
    {   /* 100k bytes of nesting: a limit, no stack overflow */
        size_t n = 100000;
        uint8_t *x = (uint8_t *)malloc(n);
        gf__tc t;
        memset(x, 0x1C, n);             /* field delta 1, struct */
        gf__tc_init(&t, x, n, 0, "t");
        gf__tc_skip(&t, GF__T_STRUCT, 0);
        CHECK(t.err == GPUFEED_ERR_LIMIT);
        memset(x, 0x19, n);             /* list of one list of one list ... */
        gf__tc_init(&t, x, n, 0, "t");
        gf__tc_skip(&t, GF__T_LIST, 0);
        CHECK(t.err == GPUFEED_ERR_LIMIT);
        {   /* and through the FileMetaData parser */
            gf__arena ar; gpufeed_metadata md; gf__fmd d;
            memset(&ar, 0, sizeof ar); memset(&md, 0, sizeof md); memset(&d, 0, sizeof d);
            memset(x, 0x1C, n); x[0] = 0x0C; x[1] = 0xC8; x[2] = 0x01; /* field 100 (long form), struct */
            gf__tc_init(&t, x, n, 0, "FileMetaData");
            gf__parse_file_metadata(&t, &ar, &md, &d);
            CHECK(t.err == GPUFEED_ERR_LIMIT);
            gf__arena_free(&ar);
        }
        free(x);
    }
}

static void test_tc_list_sizes(void)
{
    pqw_buf b = {0};
    pqw_tc w;
    gf__tc t;
    uint32_t n;
    int et;
    pqw_tc_init(&w, &b);
    /* more elements than bytes left */
    pqw_tc_list_hdr(&w, PQW_T_I32, 1000); pqw_fill(&b, 1, 10);
    tc_on(&t, &b); gf__tc_list_hdr(&t, &et, &n);
    CHECK(t.err == GPUFEED_ERR_THRIFT && n == 0);
    CHECK_HAS(t.msg, "cannot fit");
    tc_on(&t, &b); gf__tc_skip(&t, GF__T_LIST, 0);
    CHECK(t.err == GPUFEED_ERR_THRIFT);
    b.n = 0;
    /* more than GPUFEED_MAX_LIST_LENGTH */
    pqw_tc_list_hdr(&w, PQW_T_I32, (uint64_t)GPUFEED_MAX_LIST_LENGTH + 1); pqw_fill(&b, 1, 10);
    tc_on(&t, &b); gf__tc_list_hdr(&t, &et, &n);
    CHECK(t.err == GPUFEED_ERR_LIMIT && n == 0);
    CHECK_HAS(t.msg, "GPUFEED_MAX_LIST_LENGTH");
    b.n = 0;
    /* a 64-bit count */
    pqw_tc_list_hdr(&w, PQW_T_STRUCT, UINT64_MAX); pqw_fill(&b, 0, 10);
    tc_on(&t, &b); gf__tc_list_hdr(&t, &et, &n);
    CHECK(t.err == GPUFEED_ERR_LIMIT && n == 0);
    b.n = 0;
    /* exactly the bytes left is fine */
    pqw_tc_list_hdr(&w, PQW_T_I32, 20); pqw_fill(&b, 2, 20);
    tc_on(&t, &b); gf__tc_list_hdr(&t, &et, &n);
    CHECK(!t.err && n == 20 && et == GF__T_I32);
    b.n = 0;
    /* absurd maps */
    pqw_tc_map_hdr(&w, PQW_T_I32, PQW_T_I32, 1u << 30); pqw_fill(&b, 2, 10);
    tc_on(&t, &b); gf__tc_skip(&t, GF__T_MAP, 0);
    CHECK(t.err == GPUFEED_ERR_THRIFT);
    b.n = 0;
    pqw_tc_map_hdr(&w, PQW_T_I32, PQW_T_I32, UINT64_MAX); pqw_fill(&b, 2, 10);
    tc_on(&t, &b); gf__tc_skip(&t, GF__T_MAP, 0);
    CHECK(t.err != GPUFEED_OK);
    b.n = 0;
    /* binary longer than the input */
    pqw_uvarint(&b, 1000); pqw_fill(&b, 'a', 10);
    tc_on(&t, &b); gf__tc_skip(&t, GF__T_BINARY, 0);
    CHECK(t.err == GPUFEED_ERR_THRIFT);
    CHECK_HAS(t.msg, "runs past the end");
    b.n = 0;
    pqw_uvarint(&b, UINT64_MAX); pqw_fill(&b, 'a', 10);
    tc_on(&t, &b); gf__tc_skip(&t, GF__T_BINARY, 0);
    CHECK(t.err == GPUFEED_ERR_THRIFT);
    pqw_free(&b);
}

/* parses a FileMetaData blob; returns the error (message in msg) */
static gpufeed_result parse_fmd(const pqw_buf *b, char *msg, size_t cap)
{
    gf__tc t; gf__arena ar; gpufeed_metadata md; gf__fmd d;
    memset(&ar, 0, sizeof ar); memset(&md, 0, sizeof md); memset(&d, 0, sizeof d);
    gf__tc_init(&t, b->p, b->n, 0, "FileMetaData");
    gf__parse_file_metadata(&t, &ar, &md, &d);
    if (msg) snprintf(msg, cap, "%s", t.msg);
    gf__arena_free(&ar);
    return t.err;
}

static void test_tc_wrong_types(void)
{
    pqw_buf b = {0};
    pqw_tc w;
    char msg[GPUFEED_ERROR_MAX];
    /* SchemaElement name (4) as an i32 */
    pqw_tc_init(&w, &b);
    pqw_tc_begin(&w);
    pqw_tc_list(&w, 2, PQW_T_STRUCT, 1);
    pqw_tc_begin(&w); pqw_tc_i32(&w, 4, 77); pqw_tc_end(&w);
    pqw_tc_i64(&w, 3, 0);
    pqw_tc_list(&w, 4, PQW_T_STRUCT, 0);
    pqw_tc_end(&w);
    CHECK(parse_fmd(&b, msg, sizeof msg) == GPUFEED_ERR_THRIFT);
    CHECK_HAS(msg, "field 4"); CHECK_HAS(msg, "SchemaElement"); CHECK_HAS(msg, "binary");
    b.n = 0;
    /* FileMetaData.num_rows (3) as a string */
    pqw_tc_init(&w, &b);
    pqw_tc_begin(&w); pqw_tc_str(&w, 3, "many"); pqw_tc_end(&w);
    CHECK(parse_fmd(&b, msg, sizeof msg) == GPUFEED_ERR_THRIFT);
    CHECK_HAS(msg, "field 3"); CHECK_HAS(msg, "FileMetaData");
    b.n = 0;
    /* schema (2) as an i32 rather than a list */
    pqw_tc_init(&w, &b);
    pqw_tc_begin(&w); pqw_tc_i32(&w, 2, 1); pqw_tc_end(&w);
    CHECK(parse_fmd(&b, msg, sizeof msg) == GPUFEED_ERR_THRIFT);
    CHECK_HAS(msg, "field 2"); CHECK_HAS(msg, "list");
    b.n = 0;
    /* schema as a list of i32 */
    pqw_tc_init(&w, &b);
    pqw_tc_begin(&w); pqw_tc_list(&w, 2, PQW_T_I32, 1); pqw_tc_v_int(&w, 1); pqw_tc_end(&w);
    CHECK(parse_fmd(&b, msg, sizeof msg) == GPUFEED_ERR_THRIFT);
    CHECK_HAS(msg, "field 2");
    b.n = 0;
    /* i32 field out of range (version = 2^40) */
    pqw_tc_init(&w, &b);
    pqw_tc_begin(&w); pqw_tc_i32(&w, 1, 1ll << 40); pqw_tc_end(&w);
    CHECK(parse_fmd(&b, msg, sizeof msg) == GPUFEED_ERR_THRIFT);
    CHECK_HAS(msg, "field 1");
    b.n = 0;
    /* ColumnMetaData.encodings (2) as a list of binary */
    pqw_tc_init(&w, &b);
    pqw_tc_begin(&w);
    pqw_tc_list(&w, 4, PQW_T_STRUCT, 1);
    pqw_tc_begin(&w);
    pqw_tc_list(&w, 1, PQW_T_STRUCT, 1);
    pqw_tc_begin(&w); pqw_tc_struct(&w, 3);
    pqw_tc_i32(&w, 1, 1); pqw_tc_list(&w, 2, PQW_T_BINARY, 1); pqw_tc_v_str(&w, "PLAIN");
    pqw_tc_end(&w); pqw_tc_end(&w);
    pqw_tc_end(&w);
    pqw_tc_end(&w);
    CHECK(parse_fmd(&b, msg, sizeof msg) == GPUFEED_ERR_THRIFT);
    CHECK_HAS(msg, "field 2"); CHECK_HAS(msg, "ColumnMetaData");
    b.n = 0;
    /* a bool where an optional struct is expected (ColumnChunk.meta_data):
       skipped like an unknown field (Thrift's generated readers do the
       same); the error is then the row group's missing num_rows */
    pqw_tc_init(&w, &b);
    pqw_tc_begin(&w);
    pqw_tc_list(&w, 4, PQW_T_STRUCT, 1);
    pqw_tc_begin(&w);
    pqw_tc_list(&w, 1, PQW_T_STRUCT, 1);
    pqw_tc_begin(&w); pqw_tc_bool(&w, 3, 1); pqw_tc_end(&w);
    pqw_tc_end(&w);
    pqw_tc_end(&w);
    CHECK(parse_fmd(&b, msg, sizeof msg) == GPUFEED_ERR_THRIFT);
    CHECK_HAS(msg, "RowGroup misses columns or num_rows");
    b.n = 0;
    /* a bool where a required struct is expected (TimestampType.unit) */
    pqw_tc_init(&w, &b);
    pqw_tc_begin(&w);
    pqw_tc_list(&w, 2, PQW_T_STRUCT, 1);
    pqw_tc_begin(&w); pqw_tc_str(&w, 4, "ts");
    pqw_tc_struct(&w, 10); pqw_tc_struct(&w, 8); pqw_tc_bool(&w, 1, 1); pqw_tc_bool(&w, 2, 1); pqw_tc_end(&w); pqw_tc_end(&w);
    pqw_tc_end(&w);
    pqw_tc_end(&w);
    CHECK(parse_fmd(&b, msg, sizeof msg) == GPUFEED_ERR_THRIFT);
    CHECK_HAS(msg, "field 2"); CHECK_HAS(msg, "struct");
    b.n = 0;
    /* a required field of another type: RowGroup.num_rows (3) as a string */
    pqw_tc_init(&w, &b);
    pqw_tc_begin(&w);
    pqw_tc_list(&w, 4, PQW_T_STRUCT, 1);
    pqw_tc_begin(&w); pqw_tc_list(&w, 1, PQW_T_STRUCT, 0); pqw_tc_str(&w, 3, "ten"); pqw_tc_end(&w);
    pqw_tc_end(&w);
    CHECK(parse_fmd(&b, msg, sizeof msg) == GPUFEED_ERR_THRIFT);
    CHECK_HAS(msg, "thrift RowGroup: field 3 has type binary, expected an integer");
    b.n = 0;
    /* ColumnMetaData.path_in_schema (3, required) as a list of i32 */
    pqw_tc_init(&w, &b);
    pqw_tc_begin(&w);
    pqw_tc_list(&w, 4, PQW_T_STRUCT, 1);
    pqw_tc_begin(&w);
    pqw_tc_list(&w, 1, PQW_T_STRUCT, 1);
    pqw_tc_begin(&w); pqw_tc_struct(&w, 3);
    pqw_tc_i32(&w, 1, 1); pqw_tc_list(&w, 3, PQW_T_I32, 1); pqw_tc_v_int(&w, 5);
    pqw_tc_end(&w); pqw_tc_end(&w);
    pqw_tc_end(&w);
    pqw_tc_end(&w);
    CHECK(parse_fmd(&b, msg, sizeof msg) == GPUFEED_ERR_THRIFT);
    CHECK_HAS(msg, "field 3 is a list of i32, expected binary"); CHECK_HAS(msg, "ColumnMetaData");
    b.n = 0;
    /* a required field missing: FileMetaData without row groups */
    pqw_tc_init(&w, &b);
    pqw_tc_begin(&w); pqw_tc_list(&w, 2, PQW_T_STRUCT, 0); pqw_tc_i64(&w, 3, 0); pqw_tc_end(&w);
    CHECK(parse_fmd(&b, msg, sizeof msg) == GPUFEED_ERR_THRIFT);
    CHECK_HAS(msg, "misses");
    pqw_free(&b);
}

static void test_tc_truncated_footer(void)
{
    proof_file *pf = (proof_file *)calloc(1, sizeof *pf);
    pqw_buf out = {0}, footer = {0};
    size_t cut;
    build_proof(pf, &out, NULL);
    pqw_put(&footer, out.p + pf->f.footer_at, (size_t)pf->f.footer_size);
    CHECK(parse_fmd(&footer, NULL, 0) == GPUFEED_OK);
    for (cut = 0; cut < footer.n; cut++) {
        pqw_buf part = {0};
        pqw_put(&part, footer.p, cut);     /* a fresh allocation: ASan sees overreads */
        CHECK_MSG(parse_fmd(&part, NULL, 0) != GPUFEED_OK, "prefix of %u bytes parsed", (unsigned)cut);
        pqw_free(&part);
    }
    pqw_free(&footer); pqw_free(&out);
    free_proof(pf); free(pf);
}

/* unknown fields of every type everywhere: the file still reads */
static int base_fmd = 100, base_se = 50, base_rg = 30, base_cc = 20, base_cm = 40, base_ph = 20, base_dph = 20, base_lt = 5;
static void w_logical_99(pqw_tc *w, void *ctx) { (void)ctx; w_every_field(w, &base_lt); }
static void tweak_unknown(proof_file *pf)
{
    int c, g, p;
    pf->f.extra.fn = w_every_field; pf->f.extra.ctx = &base_fmd;
    for (c = 0; c <= N_PROOF_COLS; c++) { pf->sch[c].extra.fn = w_every_field; pf->sch[c].extra.ctx = &base_se; }
    /* an unknown LogicalType member (99) on column fx */
    pf->sch[12].logical = 99;
    pf->sch[12].logical_body.fn = w_logical_99;
    for (g = 0; g < 2; g++) {
        pf->rg[g].extra.fn = w_every_field; pf->rg[g].extra.ctx = &base_rg;
        for (c = 0; c < N_PROOF_COLS; c++) {
            pqw_chunk *ch = &pf->ch[g][c];
            ch->extra_chunk.fn = w_every_field; ch->extra_chunk.ctx = &base_cc;
            ch->extra_meta.fn = w_every_field; ch->extra_meta.ctx = &base_cm;
            for (p = 0; p < ch->npages; p++) {
                ch->pages[p].extra.fn = w_every_field; ch->pages[p].extra.ctx = &base_ph;
                ch->pages[p].extra_sub.fn = w_every_field; ch->pages[p].extra_sub.ctx = &base_dph;
            }
        }
    }
}

/* optional fields of a type their struct does not declare, everywhere:
   skipped (the field-15-as-a-list case of an older writer first) */
static void w_mismatch_meta(pqw_tc *w, void *ctx)
{
    (void)ctx;
    pqw_tc_list(w, 15, PQW_T_I32, 3); pqw_tc_v_int(w, 1); pqw_tc_v_int(w, 2); pqw_tc_v_int(w, 3);
    pqw_tc_field_long(w, 14, PQW_T_BINARY); pqw_tc_v_str(w, "not an offset");
    pqw_tc_field_long(w, 11, PQW_T_LIST); pqw_tc_list_hdr(w, PQW_T_BINARY, 1); pqw_tc_v_str(w, "x");
    pqw_tc_field_long(w, 12, PQW_T_I32); pqw_tc_v_int(w, 7);
}
static void w_mismatch_chunk(pqw_tc *w, void *ctx) { (void)ctx; pqw_tc_double(w, 5, 2.5); pqw_tc_field_long(w, 4, PQW_T_TRUE); }
static void w_mismatch_schema(pqw_tc *w, void *ctx) { (void)ctx; pqw_tc_str(w, 9, "id"); pqw_tc_field_long(w, 6, PQW_T_DOUBLE); pqw_tc_v_double(w, 1.0); }
static void w_mismatch_fmd(pqw_tc *w, void *ctx) { (void)ctx; pqw_tc_field_long(w, 6, PQW_T_I32); pqw_tc_v_int(w, 3); pqw_tc_i32(w, 8, 1); }
static void w_mismatch_rg(pqw_tc *w, void *ctx) { (void)ctx; pqw_tc_str(w, 7, "first"); }
static void w_mismatch_page(pqw_tc *w, void *ctx) { (void)ctx; pqw_tc_field_long(w, 4, PQW_T_BINARY); pqw_tc_v_str(w, "crc"); }
static void tweak_mismatch(proof_file *pf)
{
    int c, g, p;
    pf->f.extra.fn = w_mismatch_fmd;
    for (c = 0; c <= N_PROOF_COLS; c++) pf->sch[c].extra.fn = w_mismatch_schema;
    for (g = 0; g < 2; g++) {
        pf->rg[g].extra.fn = w_mismatch_rg;
        for (c = 0; c < N_PROOF_COLS; c++) {
            pqw_chunk *ch = &pf->ch[g][c];
            ch->extra_meta.fn = w_mismatch_meta;
            ch->extra_chunk.fn = w_mismatch_chunk;
            for (p = 0; p < ch->npages; p++) ch->pages[p].extra.fn = w_mismatch_page;
        }
    }
}

static void test_tc_mismatched_optional(void)
{
    proof_file *pf = (proof_file *)calloc(1, sizeof *pf);
    pqw_buf out = {0};
    build_proof(pf, &out, tweak_mismatch);
    CHECK(check_proof_file(&out, 0) == 0);
    {
        gpufeed_file *f; gpufeed_error err; gpufeed_file_desc d;
        memset(&d, 0, sizeof d); d.data = out.p; d.data_size = out.n;
        if (gpufeed_file_open(&f, &d, &err) == GPUFEED_OK) {
            const gpufeed_metadata *md = gpufeed_file_metadata(f);
            const gpufeed_chunk_info *ch = &md->row_groups[0].chunks[0];
            CHECK(ch->bloom_filter_length == 0 && ch->bloom_filter_offset == -1); /* 15 and 14 skipped */
            CHECK(ch->dictionary_page_offset == -1 || ch->dictionary_page_offset > 0); /* 11 (a list) skipped */
            CHECK(ch->offset_index_length == 0); /* ColumnChunk 5 (a double) skipped */
            CHECK(!md->nodes[md->columns[0].node].has_field_id); /* SchemaElement 9 (a string) skipped */
            CHECK(md->created_by != NULL); /* the i32 repeat of field 6 skipped, the string kept */
            CHECK(md->row_groups[0].ordinal == -1);
            gpufeed_file_close(f);
        } else CHECK_MSG(0, "%s", err.message);
    }
    pqw_free(&out);
    free_proof(pf); free(pf);
}

static void test_tc_unknown_fields(void)
{
    proof_file *pf = (proof_file *)calloc(1, sizeof *pf);
    pqw_buf out = {0};
    build_proof(pf, &out, tweak_unknown);
    CHECK(check_proof_file(&out, 0) == 0);
    {
        gpufeed_file *f; gpufeed_error err; gpufeed_file_desc d;
        memset(&d, 0, sizeof d); d.data = out.p; d.data_size = out.n;
        if (gpufeed_file_open(&f, &d, &err) == GPUFEED_OK) {
            const gpufeed_metadata *md = gpufeed_file_metadata(f);
            int32_t fx = gpufeed_file_find_column(f, "fx");
            CHECK(fx == 11 && md->nodes[md->columns[fx].node].logical == GPUFEED_LT_OTHER);
            CHECK(md->nodes[md->columns[3].node].logical == GPUFEED_LT_STRING);
            gpufeed_file_close(f);
        } else CHECK_MSG(0, "%s", err.message);
    }
    pqw_free(&out);
    free_proof(pf); free(pf);
}

/* ---- RLE / bit-packed hybrid -------------------------------------------- */

static void test_rle_runs(void)
{
    pqw_buf b = {0};
    gf__rle r;
    uint32_t out[64], i;
    pqw_rle_run(&b, 7, 20, 3);
    gf__rle_init(&r, b.p, b.p + b.n, 3);
    CHECK(gf__rle_get(&r, out, 20) == 20 && !r.err);
    for (i = 0; i < 20; i++) CHECK(out[i] == 7);
    CHECK(gf__rle_get(&r, out, 1) == 0 && !r.err);     /* clean end of data */
    b.n = 0;
    {
        uint32_t v[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
        pqw_bp_run(&b, v, 1, 3);
        CHECK(b.n == 1 + 3);
        gf__rle_init(&r, b.p, b.p + b.n, 3);
        CHECK(gf__rle_get(&r, out, 8) == 8 && !r.err);
        for (i = 0; i < 8; i++) CHECK(out[i] == i);
    }
    b.n = 0;
    /* RLE values wider than one byte */
    pqw_rle_run(&b, 0x12345, 5, 17);
    pqw_rle_run(&b, 0xFFFFFFFFu, 3, 32);
    gf__rle_init(&r, b.p, b.p + 5, 17);   /* header 1 + 3 value bytes */
    CHECK(gf__rle_get(&r, out, 5) == 5 && out[4] == 0x12345);
    gf__rle_init(&r, b.p + 4, b.p + b.n, 32);
    CHECK(gf__rle_get(&r, out, 3) == 3 && out[2] == 0xFFFFFFFFu);
    pqw_free(&b);
}

static void test_rle_boundaries(void)
{
    /* a stream mixing runs: RLE 13 x 5, bit-packed 2 groups, RLE 1 x 2,
       bit-packed 1 group, RLE 1000 x 0, bit-packed 3 groups */
    pqw_buf b = {0};
    uint32_t expect[2000], n = 0, i, k;
    static const unsigned chunks[] = { 1, 3, 7, 8, 1000 };
    uint32_t bp[24];
    for (i = 0; i < 24; i++) bp[i] = (i * 5 + 1) % 16;
    pqw_rle_run(&b, 5, 13, 4); for (i = 0; i < 13; i++) expect[n++] = 5;
    pqw_bp_run(&b, bp, 2, 4); for (i = 0; i < 16; i++) expect[n++] = bp[i];
    pqw_rle_run(&b, 2, 1, 4); expect[n++] = 2;
    pqw_bp_run(&b, bp + 3, 1, 4); for (i = 0; i < 8; i++) expect[n++] = bp[3 + i];
    pqw_rle_run(&b, 0, 1000, 4); for (i = 0; i < 1000; i++) expect[n++] = 0;
    pqw_bp_run(&b, bp, 3, 4); for (i = 0; i < 24; i++) expect[n++] = bp[i];
    for (k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        gf__rle r;
        uint32_t got[2000], total = 0;
        gf__rle_init(&r, b.p, b.p + b.n, 4);
        while (total < n) {
            uint32_t want = chunks[k] < n - total ? chunks[k] : n - total;
            uint32_t g = gf__rle_get(&r, got + total, want);
            CHECK(g == want);
            if (g != want) break;
            total += g;
        }
        CHECK(total == n && !r.err && memcmp(got, expect, n * sizeof(uint32_t)) == 0);
        CHECK(gf__rle_get(&r, got, 5) == 0);
    }
    pqw_free(&b);
}

static void test_rle_all_widths(void)
{
    int bw;
    for (bw = 0; bw <= 32; bw++) {
        enum { N = 1500 };
        uint32_t *v = (uint32_t *)malloc(N * sizeof *v), *got = (uint32_t *)malloc(N * sizeof *got);
        uint64_t mask = bw == 32 ? 0xFFFFFFFFull : ((1ull << bw) - 1);
        pqw_buf b = {0};
        gf__rle r;
        uint32_t i, total = 0;
        for (i = 0; i < N; i++) {
            /* stretches of random values and of repeats */
            if ((i / 50) % 3 == 1) v[i] = i ? v[i - 1] : 0;
            else v[i] = (uint32_t)(rnd() & mask);
        }
        v[N - 1] = (uint32_t)mask;
        pqw_hybrid(&b, v, N, bw);
        gf__rle_init(&r, b.p, b.p + b.n, bw);
        while (total < N) {
            uint32_t want = (uint32_t)(rnd() % 97) + 1, g;
            if (want > N - total) want = N - total;
            g = gf__rle_get(&r, got + total, want);
            if (g != want) break;
            total += g;
        }
        CHECK_MSG(total == N && !r.err, "bit width %d: %u values", bw, total);
        CHECK_MSG(memcmp(got, v, N * sizeof(uint32_t)) == 0, "bit width %d", bw);
        /* MSB-first BIT_PACKED of the same values */
        b.n = 0;
        pqw_pack_msb(&b, v, N, bw);
        gf__rle_init_msb(&r, b.p, b.p + b.n, bw, N);
        CHECK_MSG(gf__rle_get(&r, got, N) == N && !r.err, "msb bit width %d", bw);
        CHECK_MSG(memcmp(got, v, N * sizeof(uint32_t)) == 0, "msb bit width %d", bw);
        pqw_free(&b);
        free(v); free(got);
    }
}

/* definition levels of max 1 straight to 0/1 bytes (gf__rle_get01): a
   byte of bit-packed levels becomes 8 rows at once, the rows before a
   byte boundary one at a time; random reads must give the levels and the
   count of ones exactly */
static void test_rle_levels01(void)
{
    enum { N = 3000 };
    uint32_t v[N], i;
    uint8_t got[N + 8];
    int round;
    for (round = 0; round < 6; round++) {
        pqw_buf b = {0};
        gf__rle r;
        uint32_t total = 0, ones = 0, want_ones = 0;
        for (i = 0; i < N; i++) {
            if ((i / 40) % 4 == 3) v[i] = i ? v[i - 1] : 1;      /* runs: RLE */
            else v[i] = (uint32_t)(rnd() % 10 != 0);             /* ~10% nulls */
            want_ones += v[i];
        }
        pqw_hybrid(&b, v, N, 1);
        gf__rle_init(&r, b.p, b.p + b.n, 1);
        memset(got, 7, sizeof got);
        while (total < N) {
            uint32_t want = round == 0 ? 1 : round == 1 ? 8 : (uint32_t)(rnd() % 97) + 1, g;
            if (want > N - total) want = N - total;
            g = gf__rle_get01(&r, got + total, want, &ones);
            if (g != want) break;
            total += g;
        }
        CHECK_MSG(total == N && !r.err, "round %d: %u levels", round, total);
        for (i = 0; i < total && got[i] == v[i]; i++) {}
        CHECK_MSG(i == N, "round %d: level %u is %u, want %u", round, i, i < N ? got[i] : 0u, i < N ? v[i] : 0u);
        CHECK_MSG(ones == want_ones, "round %d: %u ones, want %u", round, ones, want_ones);
        CHECK(got[N] == 7);  /* nothing written past the rows asked for */
        pqw_free(&b);
    }
}

static void test_rle_truncated(void)
{
    pqw_buf b = {0};
    gf__rle r;
    uint32_t out[64], i, vals[32];
    for (i = 0; i < 32; i++) vals[i] = i % 8;
    /* a bit-packed run of 4 groups (12 bytes at bw 3), only 6 bytes present */
    pqw_uvarint(&b, (4 << 1) | 1);
    pqw_pack_lsb(&b, vals, 16, 3);
    CHECK(b.n == 1 + 6);
    gf__rle_init(&r, b.p, b.p + b.n, 3);
    CHECK(gf__rle_get(&r, out, 16) == 16 && !r.err);
    for (i = 0; i < 16; i++) CHECK(out[i] == vals[i]);
    CHECK(gf__rle_get(&r, out, 1) == 0 && r.err);
    /* asking for more at once returns what is there and flags it */
    gf__rle_init(&r, b.p, b.p + b.n, 3);
    CHECK(gf__rle_get(&r, out, 20) == 16 && r.err);
    /* a partial value at the cut is not returned: 5 bytes hold 13 values */
    gf__rle_init(&r, b.p, b.p + 1 + 5, 3);
    CHECK(gf__rle_get(&r, out, 32) == 13 && r.err);
    b.n = 0;
    /* RLE value >= 2^bw */
    pqw_uvarint(&b, 10 << 1); pqw_u8(&b, 9);
    gf__rle_init(&r, b.p, b.p + b.n, 3);
    CHECK(gf__rle_get(&r, out, 10) == 0 && r.err);
    b.n = 0;
    /* RLE value missing its bytes */
    pqw_uvarint(&b, 10 << 1); pqw_u8(&b, 1);
    gf__rle_init(&r, b.p, b.p + b.n, 9);       /* needs 2 value bytes */
    CHECK(gf__rle_get(&r, out, 10) == 0 && r.err);
    b.n = 0;
    /* an endless run header */
    pqw_fill(&b, 0xFF, 12);
    gf__rle_init(&r, b.p, b.p + b.n, 1);
    CHECK(gf__rle_get(&r, out, 10) == 0 && r.err);
    b.n = 0;
    /* a run header claiming 2^40 groups */
    pqw_uvarint(&b, (1ull << 41) | 1); pqw_fill(&b, 0, 8);
    gf__rle_init(&r, b.p, b.p + b.n, 1);
    CHECK(gf__rle_get(&r, out, 64) < 64 && r.err);
    b.n = 0;
    /* MSB-first: count larger than the bytes */
    pqw_pack_msb(&b, vals, 8, 3);          /* 3 bytes */
    gf__rle_init_msb(&r, b.p, b.p + b.n, 3, 20);
    CHECK(gf__rle_get(&r, out, 20) == 8 && r.err);
    for (i = 0; i < 8; i++) CHECK(out[i] == vals[i]);
    /* empty input */
    gf__rle_init(&r, b.p, b.p, 2);
    CHECK(gf__rle_get(&r, out, 3) == 0);
    pqw_free(&b);
}

static void test_rle_msb_known(void)
{
    /* BIT_PACKED example from the Parquet spec: 0..7 at bw 3 =
       00000101 00111001 01110111 */
    static const uint8_t x[3] = { 0x05, 0x39, 0x77 };
    gf__rle r;
    uint32_t out[8], i;
    gf__rle_init_msb(&r, x, x + 3, 3, 8);
    CHECK(gf__rle_get(&r, out, 8) == 8 && !r.err);
    for (i = 0; i < 8; i++) CHECK(out[i] == i);
    /* the hybrid form of the same values: 10001000 11000110 11111010 */
    {
        static const uint8_t y[4] = { 0x03, 0x88, 0xC6, 0xFA };
        gf__rle_init(&r, y, y + 4, 3);
        CHECK(gf__rle_get(&r, out, 8) == 8 && !r.err);
        for (i = 0; i < 8; i++) CHECK(out[i] == i);
    }
}

/* ---- SNAPPY ------------------------------------------------------------- */

/* guard bytes after a decoder's output: it must never write past dn */
#define GUARD 64
static uint8_t *guarded(size_t dn)
{
    uint8_t *d = (uint8_t *)malloc(dn + GUARD);
    memset(d, 0xA5, dn + GUARD);
    return d;
}
static int guard_intact(const uint8_t *d, size_t dn)
{
    size_t i;
    for (i = 0; i < GUARD; i++) if (d[dn + i] != 0xA5) { fprintf(stderr, "  snappy wrote past its output\n"); return 0; }
    return 1;
}

/* decodes src expecting `want`; returns 1 when exactly that came out */
static int snappy_is(const uint8_t *src, size_t n, const void *want, size_t wn)
{
    uint8_t *dst = guarded(wn);
    char msg[256];
    gpufeed_result r = gf__snappy(src, n, dst, wn, msg, sizeof msg);
    int ok = r == GPUFEED_OK && (wn == 0 || memcmp(dst, want, wn) == 0) && guard_intact(dst, wn);
    if (r) fprintf(stderr, "  snappy: %s\n", msg);
    free(dst);
    return ok;
}
/* expects a codec error; dn is the output size given to the decoder */
static int snappy_fails(const uint8_t *src, size_t n, size_t dn)
{
    uint8_t *dst = guarded(dn);
    uint8_t *copy = (uint8_t *)malloc(n ? n : 1);
    char msg[256];
    gpufeed_result r;
    int intact;
    msg[0] = 0;
    if (n) memcpy(copy, src, n);        /* exact-size allocation for ASan */
    r = gf__snappy(copy, n, dst, dn, msg, sizeof msg);
    intact = guard_intact(dst, dn);
    free(dst); free(copy);
    if (r != GPUFEED_ERR_CODEC) fprintf(stderr, "  snappy: expected an error, got %d\n", r);
    else if (!strstr(msg, "snappy")) fprintf(stderr, "  snappy: message \"%s\"\n", msg);
    return r == GPUFEED_ERR_CODEC && strstr(msg, "snappy") != NULL && intact;
}

static void test_snappy_vectors(void)
{
    {   /* literal only */
        static const uint8_t s[] = { 5, 4 << 2, 'h', 'e', 'l', 'l', 'o' };
        CHECK(snappy_is(s, sizeof s, "hello", 5));
    }
    {   /* empty */
        static const uint8_t s[] = { 0 };
        CHECK(snappy_is(s, 1, "", 0));
    }
    {   /* copy with a 1-byte offset: "abcd" + copy(off 4, len 8) */
        static const uint8_t s[] = { 12, 3 << 2, 'a', 'b', 'c', 'd', 1 | (4 << 2), 4 };
        CHECK(snappy_is(s, sizeof s, "abcdabcdabcd", 12));
    }
    {   /* 1-byte offset form with offset bits in the tag: offset 0x104 */
        pqw_buf b = {0}, want = {0};
        size_t i;
        for (i = 0; i < 260; i++) pqw_u8(&want, (unsigned)(i * 7));
        for (i = 0; i < 11; i++) pqw_u8(&want, want.p[i]);
        pqw_uvarint(&b, want.n);
        pqw_snappy_lit(&b, want.p, 260);
        pqw_u8(&b, 1 | (7 << 2) | (1 << 5)); pqw_u8(&b, 4);  /* len 11, off 260 */
        CHECK(snappy_is(b.p, b.n, want.p, want.n));
        pqw_free(&b); pqw_free(&want);
    }
    {   /* 2-byte offset: copy(off 4, len 8) */
        static const uint8_t s[] = { 12, 3 << 2, 'a', 'b', 'c', 'd', 2 | (7 << 2), 4, 0 };
        CHECK(snappy_is(s, sizeof s, "abcdabcdabcd", 12));
    }
    {   /* 4-byte offset: copy(off 4, len 8) */
        static const uint8_t s[] = { 12, 3 << 2, 'a', 'b', 'c', 'd', 3 | (7 << 2), 4, 0, 0, 0 };
        CHECK(snappy_is(s, sizeof s, "abcdabcdabcd", 12));
    }
    {   /* overlapping copies: offset 1 is a run */
        static const uint8_t s[] = { 21, 0 << 2, 'a', 2 | (19 << 2), 1, 0 };
        CHECK(snappy_is(s, sizeof s, "aaaaaaaaaaaaaaaaaaaaa", 21));
        {
            static const uint8_t s2[] = { 64, 1 << 2, 'x', 'y', 2 | (61 << 2), 2, 0 };
            char want[64]; int i;
            for (i = 0; i < 64; i++) want[i] = i % 2 ? 'y' : 'x';
            CHECK(snappy_is(s2, sizeof s2, want, 64));
        }
        {   /* offset 7 with a long length (not a multiple of 7) */
            static const uint8_t s3[] = { 50, 6 << 2, '0', '1', '2', '3', '4', '5', '6', 2 | (42 << 2), 7, 0 };
            char want[50]; int i;
            for (i = 0; i < 50; i++) want[i] = (char)('0' + i % 7);
            CHECK(snappy_is(s3, sizeof s3, want, 50));
        }
    }
    {   /* long literals: 1, 2, 3 and 4 extra length bytes */
        static const size_t lens[4] = { 61, 300, 70000, 70001 };
        int k;
        for (k = 0; k < 4; k++) {
            pqw_buf b = {0}, want = {0};
            size_t i, len = lens[k], m = len - 1;
            int nb = k + 1;
            for (i = 0; i < len; i++) pqw_u8(&want, (unsigned)(rnd() & 0xFF));
            pqw_uvarint(&b, len);
            pqw_u8(&b, (unsigned)((59 + nb) << 2));
            for (i = 0; i < (size_t)nb; i++) pqw_u8(&b, (unsigned)((m >> (8 * i)) & 0xFF));
            pqw_append(&b, &want);
            CHECK_MSG(snappy_is(b.p, b.n, want.p, want.n), "literal with %d length bytes", nb);
            pqw_free(&b); pqw_free(&want);
        }
    }
}

static void test_snappy_roundtrip(void)
{
    size_t sizes[] = { 1, 5, 17, 4096, 5000, 70000, 140000 };
    size_t k;
    for (k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        pqw_buf src = {0}, z = {0};
        size_t i, n = sizes[k];
        int forms[4] = { 0, 0, 0, 0 };
        for (i = 0; i < n; i++) {
            /* text-like with repeats near and far */
            if (i < 3000) pqw_u8(&src, (unsigned)(rnd() & 0xFF));
            else if (i >= 66000 && i < 66000 + 3000) pqw_u8(&src, src.p[i - 66000]);
            else if (i % 100 < 40) pqw_u8(&src, (unsigned)("the quick brown fox "[i % 20]));
            else pqw_u8(&src, (unsigned)(rnd() % 7 + 'a'));
        }
        pqw_snappy_compress(&z, src.p, src.n);
        CHECK_MSG(snappy_is(z.p, z.n, src.p, src.n), "round trip of %u bytes", (unsigned)n);
        if (n >= 70000) CHECK(z.n < src.n);
        {   /* which tag forms the encoder used */
            size_t hdr = 0; uint64_t ul = 0; const uint8_t *p, *e = z.p + z.n;
            CHECK(gf__snappy_length(z.p, z.n, &ul, &hdr) && ul == n);
            for (p = z.p + hdr; p < e;) {
                unsigned tag = *p++;
                forms[tag & 3]++;
                if ((tag & 3) == 0) {
                    size_t len = (tag >> 2) + 1;
                    if (len > 60) { size_t nb = len - 60, j; len = 0; for (j = 0; j < nb; j++) len |= (size_t)p[j] << (8 * j); len++; p += nb; }
                    p += len;
                } else p += (tag & 3) == 1 ? 1 : (tag & 3) == 2 ? 2 : 4;
            }
        }
        if (n >= 140000) CHECK(forms[1] > 0 && forms[2] > 0 && forms[3] > 0);
        pqw_free(&src); pqw_free(&z);
    }
}

/* A SNAPPY stream of random elements, long enough for the fast loop:
   literals of 1-80 bytes (some with length bytes), copies of every form
   with lengths 1-64 from 1 byte back to far back (many from 1-20 and
   exactly 8 or 16 back: the near-copy paths), overlapping ones among them.
   The expected output is built element by element, byte by byte. With
   bad_at >= 0, element bad_at becomes a copy from past the start of the
   output or from offset 0; *bad_in gets the input offset the error names
   (after its tag and offset bytes). */
static void snappy_elements(pqw_buf *z, pqw_buf *want, size_t target, long bad_at, size_t *bad_in)
{
    pqw_buf body = {0};
    long e = 0;
    pqw_free(want);
    while (want->n < target) {
        unsigned kind = (unsigned)(rnd() % 8);
        if (want->n == 0 || (kind < 3 && e != bad_at)) { /* a literal */
            size_t len = 1 + (size_t)(rnd() % (kind == 0 ? 80 : 3)), i;
            if (len <= 60) pqw_u8(&body, (unsigned)((len - 1) << 2));
            else { pqw_u8(&body, 60 << 2); pqw_u8(&body, (unsigned)(len - 1)); }
            for (i = 0; i < len; i++) { unsigned b = (unsigned)(rnd() & 0xFF); pqw_u8(&body, b); pqw_u8(want, b); }
        } else {
            size_t len, off, i, form = (size_t)(rnd() % 3);
            unsigned r = (unsigned)(rnd() % 6);
            off = r == 0 ? 8 : r == 1 ? 16 : r == 2 ? 1 + (size_t)(rnd() % 20) : 1 + (size_t)(rnd() % want->n);
            if (off > want->n) off = want->n;
            if (e == bad_at) off = rnd() % 4 ? want->n + 1 + (size_t)(rnd() % 3) : 0; /* past the start, or 0 */
            if (form == 0 && off >= 2048) form = 1;  /* copy-1 reaches 2047 back, copy-2 65535 */
            if (form == 1 && off > 65535) form = 2;
            if (form == 0) len = 4 + (size_t)(rnd() % 8);
            else len = 1 + (size_t)(rnd() % (rnd() % 2 ? 12 : 64));
            if (form == 0) { pqw_u8(&body, (unsigned)(1 | ((len - 4) << 2) | ((off >> 8) << 5))); pqw_u8(&body, (unsigned)(off & 0xFF)); }
            else if (form == 1) { pqw_u8(&body, (unsigned)(2 | ((len - 1) << 2))); pqw_u8(&body, (unsigned)(off & 0xFF)); pqw_u8(&body, (unsigned)(off >> 8)); }
            else { pqw_u8(&body, (unsigned)(3 | ((len - 1) << 2))); pqw_le32(&body, (uint32_t)off); }
            if (e == bad_at) { *bad_in = body.n; for (i = 0; i < len; i++) pqw_u8(want, 0); }
            else for (i = 0; i < len; i++) pqw_u8(want, want->p[want->n - off]);
        }
        e++;
    }
    pqw_free(z);
    pqw_uvarint(z, want->n);
    *bad_in += z->n;
    pqw_append(z, &body);
    pqw_free(&body);
}

/* the fast loop against the element-by-element expectation: every copy
   path, the slack at both ends, and a bad offset inside the fast loop's
   reach named exactly as the careful step names it */
static void test_snappy_elements(void)
{
    static const size_t sizes[] = { 30, 100, 1000, 70000 };
    size_t k;
    int rep;
    for (k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        for (rep = 0; rep < 20; rep++) {
            pqw_buf z = {0}, want = {0};
            size_t bad_in = 0;
            snappy_elements(&z, &want, sizes[k], -1, &bad_in);
            CHECK_MSG(snappy_is(z.p, z.n, want.p, want.n), "%u bytes of random elements, round %d", (unsigned)want.n, rep);
            pqw_free(&z); pqw_free(&want);
        }
    }
    for (rep = 0; rep < 40; rep++) {
        pqw_buf z = {0}, want = {0};
        size_t bad_in = 0, produced;
        long at = 1 + (long)(rnd() % (rep < 30 ? 400 : 8));
        uint8_t *dst;
        char msg[256], expect[64];
        gpufeed_result r;
        msg[0] = 0;
        snappy_elements(&z, &want, 20000, at, &bad_in);
        dst = guarded(want.n);
        r = gf__snappy(z.p, z.n, dst, want.n, msg, sizeof msg);
        CHECK_MSG(r == GPUFEED_ERR_CODEC, "a bad offset at element %ld decoded", at);
        produced = 0;
        {   /* the output before the bad element: every byte but the zeros it stands for */
            size_t hdr = 0; uint64_t ul = 0; const uint8_t *p;
            long e = 0;
            gf__snappy_length(z.p, z.n, &ul, &hdr);
            for (p = z.p + hdr; e < at; e++) {
                unsigned tag = *p++;
                if ((tag & 3) == 0) {
                    size_t len = (tag >> 2) + 1;
                    if (len > 60) { len = (size_t)*p + 1; p++; }
                    p += len; produced += len;
                } else {
                    produced += (tag & 3) == 1 ? ((tag >> 2) & 7) + 4 : (tag >> 2) + 1;
                    p += (tag & 3) == 1 ? 1 : (tag & 3) == 2 ? 2 : 4;
                }
            }
        }
        snprintf(expect, sizeof expect, "bytes produced (input byte %u)", (unsigned)bad_in);
        CHECK_HAS(msg, expect);
        snprintf(expect, sizeof expect, "outside the %u bytes", (unsigned)produced);
        CHECK_HAS(msg, expect);
        CHECK(memcmp(dst, want.p, produced) == 0);
        CHECK(guard_intact(dst, want.n));
        free(dst);
        pqw_free(&z); pqw_free(&want);
    }
}

/* dictionary gathers: every entry size, lengths around the four-at-a-time
   loop, the largest index allowed and the first one past it at each
   position (entry 0 read instead, reported), against a plain loop */
static void test_gather_dense(void)
{
    static const size_t sizes[4] = { 1, 2, 4, 8 };
    uint8_t dict[8 * 300 + 8], dst[8 * 40], want[8 * 40];
    uint32_t idx[41], n, k, i, pos;
    size_t si;
    for (i = 0; i < sizeof dict; i++) dict[i] = (uint8_t)(rnd() & 0xFF);
    for (si = 0; si < 4; si++) {
        const size_t z = sizes[si];
        for (n = 0; n <= 40; n++) {
            for (k = 0; k < n; k++) idx[k] = (uint32_t)(rnd() % 300);
            if (n) idx[rnd() % n] = 299; /* the last entry: in range */
            for (pos = 0; pos <= n; pos++) { /* pos == n: all in range */
                uint32_t save = pos < n ? idx[pos] : 0, bad;
                static const uint32_t past[3] = { 300, 0x80000000u, 0xFFFFFFFFu }; /* past the end, and far past (signs) */
                if (pos < n) idx[pos] = past[rnd() % 3];
                for (k = 0; k < n; k++) memcpy(want + k * z, dict + (idx[k] < 300 ? idx[k] : 0) * z, z);
                memset(dst, 0xEE, sizeof dst);
                bad = gf__gather_dense(dst, z, dict, idx, n, 300, z);
                CHECK_MSG((bad != 0) == (pos < n), "size %u, %u indices, bad at %u: result %u", (unsigned)z, n, pos, bad);
                CHECK_MSG(memcmp(dst, want, n * z) == 0, "size %u, %u indices, bad at %u: entries differ", (unsigned)z, n, pos);
                CHECK(n == 40 || dst[n * z] == 0xEE);
                if (pos < n) idx[pos] = save;
            }
        }
        /* rows stride apart: the bytes between them untouched */
        for (k = 0; k < 10; k++) idx[k] = (uint32_t)(rnd() % 300);
        memset(dst, 0xEE, sizeof dst);
        CHECK(gf__gather_dense(dst, 3 * z, dict, idx, 10, 300, z) == 0);
        for (k = 0; k < 10; k++) CHECK(memcmp(dst + k * 3 * z, dict + idx[k] * z, z) == 0 && dst[k * 3 * z + z] == 0xEE);
    }
    CHECK(gf__idx_below(idx, 0, 0) == 1);
    idx[0] = 0;
    CHECK(gf__idx_below(idx, 1, 0) == 0); /* no entries: no index is in range */
}

/* null spreads (gf__scatter): every value size, lengths around the
   16- and 8-row AVX-512 steps and the scalar tail, no / all / random
   nulls, consecutive rows and rows stride apart, against a plain loop;
   the same test runs in the GPUFEED_NO_AVX512 and GPUFEED_NO_SIMD builds */
static void test_scatter_nulls(void)
{
    static const size_t sizes[4] = { 1, 2, 4, 8 };
    static uint8_t src[8 * (GF__TILE + 1)], dst[3 * 8 * GF__TILE + 8], want[3 * 8 * GF__TILE + 8], valid[GF__TILE];
    static const uint32_t lens[] = { 0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, GF__TILE };
    uint8_t fill[8];
    size_t si, li, k;
    int pat;
    for (k = 0; k < sizeof src; k++) src[k] = (uint8_t)(rnd() & 0xFF);
    for (k = 0; k < 8; k++) fill[k] = (uint8_t)(0xA0 + k);
    for (si = 0; si < 4; si++) {
        const size_t z = sizes[si];
        for (li = 0; li < sizeof lens / sizeof lens[0]; li++) {
            const uint32_t n = lens[li];
            for (pat = 0; pat < 4; pat++) { /* none missing, all missing, 10% and 50% missing */
                size_t stride;
                for (k = 0; k < n; k++) valid[k] = (uint8_t)(pat == 0 ? 1 : pat == 1 ? 0 : pat == 2 ? (rnd() % 10 != 0) : (rnd() & 1));
                for (stride = z; stride <= 3 * z; stride += 2 * z) {
                    uint32_t j = 0, i;
                    memset(dst, 0xEE, sizeof dst);
                    memset(want, 0xEE, sizeof want);
                    for (i = 0; i < n; i++) {
                        memcpy(want + i * stride, valid[i] ? src + (size_t)j * z : fill, z);
                        j += valid[i];
                    }
                    gf__scatter(dst, stride, src, valid, n, fill, z);
                    CHECK_MSG(memcmp(dst, want, sizeof dst) == 0, "size %u, %u rows, pattern %d, stride %u: rows differ", (unsigned)z, n, pat,
                              (unsigned)stride);
                }
            }
        }
    }
}

static void test_snappy_malformed(void)
{
    {   /* offset 0 */
        static const uint8_t s[] = { 8, 3 << 2, 'a', 'b', 'c', 'd', 2 | (3 << 2), 0, 0 };
        CHECK(snappy_fails(s, sizeof s, 8));
    }
    {   /* offset beyond the output so far */
        static const uint8_t s[] = { 8, 3 << 2, 'a', 'b', 'c', 'd', 2 | (3 << 2), 5, 0 };
        CHECK(snappy_fails(s, sizeof s, 8));
        {
            static const uint8_t s2[] = { 8, 2 | (7 << 2), 1, 0 };      /* a copy before any output */
            CHECK(snappy_fails(s2, sizeof s2, 8));
        }
        {
            static const uint8_t s3[] = { 8, 3 << 2, 'a', 'b', 'c', 'd', 3 | (3 << 2), 0xFF, 0xFF, 0xFF, 0xFF };
            CHECK(snappy_fails(s3, sizeof s3, 8));
        }
    }
    {   /* a copy overrunning the output */
        static const uint8_t s[] = { 8, 3 << 2, 'a', 'b', 'c', 'd', 2 | (9 << 2), 4, 0 };
        CHECK(snappy_fails(s, sizeof s, 8));
    }
    {   /* literal overrunning the input */
        static const uint8_t s[] = { 10, 9 << 2, 'a', 'b', 'c' };
        CHECK(snappy_fails(s, sizeof s, 10));
    }
    {   /* literal overrunning the output */
        static const uint8_t s[] = { 3, 4 << 2, 'a', 'b', 'c', 'd', 'e' };
        CHECK(snappy_fails(s, sizeof s, 3));
    }
    {   /* a long literal whose 4-byte length is 2^32-1 */
        static const uint8_t s[] = { 3, 63 << 2, 0xFF, 0xFF, 0xFF, 0xFF, 'a', 'b', 'c' };
        CHECK(snappy_fails(s, sizeof s, 3));
    }
    {   /* length header bigger than what the stream produces */
        static const uint8_t s[] = { 9, 4 << 2, 'h', 'e', 'l', 'l', 'o' };
        CHECK(snappy_fails(s, sizeof s, 9));
    }
    {   /* length header smaller than what the stream produces */
        static const uint8_t s[] = { 3, 4 << 2, 'h', 'e', 'l', 'l', 'o' };
        CHECK(snappy_fails(s, sizeof s, 3));
        {
            static const uint8_t s2[] = { 4, 0 << 2, 'a', 2 | (9 << 2), 1, 0 };
            CHECK(snappy_fails(s2, sizeof s2, 4));
        }
    }
    {   /* header disagrees with the size the caller expects */
        static const uint8_t s[] = { 5, 4 << 2, 'h', 'e', 'l', 'l', 'o' };
        CHECK(snappy_fails(s, sizeof s, 6));
        CHECK(snappy_fails(s, sizeof s, 4));
    }
    {   /* truncated tags */
        static const uint8_t a[] = { 8, 3 << 2, 'a', 'b', 'c', 'd', 1 | (0 << 2) };
        static const uint8_t b[] = { 8, 3 << 2, 'a', 'b', 'c', 'd', 2 | (3 << 2), 4 };
        static const uint8_t c[] = { 8, 3 << 2, 'a', 'b', 'c', 'd', 3 | (3 << 2), 4, 0, 0 };
        static const uint8_t d[] = { 100, 61 << 2, 99 };
        static const uint8_t e[] = { 100, 63 << 2, 99, 0, 0 };
        CHECK(snappy_fails(a, sizeof a, 8));
        CHECK(snappy_fails(b, sizeof b, 8));
        CHECK(snappy_fails(c, sizeof c, 8));
        CHECK(snappy_fails(d, sizeof d, 100));
        CHECK(snappy_fails(e, sizeof e, 100));
    }
    {   /* bad varint headers */
        static const uint8_t a[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 };
        static const uint8_t b[] = { 0xFF, 0xFF, 0xFF, 0xFF, 0x7F };   /* 2^35 - 1 */
        static const uint8_t c[] = { 0x80 };
        CHECK(snappy_fails(a, sizeof a, 16));
        CHECK(snappy_fails(b, sizeof b, 16));
        CHECK(snappy_fails(c, sizeof c, 16));
        CHECK(snappy_fails(c, 0, 0));
    }
    {   /* every truncation and every single-byte corruption of a real stream:
           an error or the right size, never a crash */
        pqw_buf src = {0}, z = {0};
        size_t i, cut;
        for (i = 0; i < 3000; i++) pqw_u8(&src, (unsigned)("abcabcabd0123"[i % 13] + (i / 500)));
        pqw_snappy_compress(&z, src.p, src.n);
        for (cut = 0; cut < z.n; cut++) CHECK_MSG(snappy_fails(z.p, cut, src.n), "cut at %u", (unsigned)cut);
        for (i = 0; i < 2000; i++) {
            uint8_t *cp = (uint8_t *)malloc(z.n), *dst = guarded(src.n);
            char msg[256];
            gpufeed_result r;
            memcpy(cp, z.p, z.n);
            cp[rnd() % z.n] ^= (uint8_t)(1u << (rnd() % 8));
            r = gf__snappy(cp, z.n, dst, src.n, msg, sizeof msg);
            CHECK(r == GPUFEED_OK || r == GPUFEED_ERR_CODEC);
            CHECK(guard_intact(dst, src.n));
            free(cp); free(dst);
        }
        pqw_free(&src); pqw_free(&z);
    }
}

/* ---- PLAIN -------------------------------------------------------------- */

static void test_plain_fixed(void)
{
    pqw_buf b = {0};
    const uint8_t *p;
    uint32_t bit = 0;
    {
        int32_t v[3] = { -1, 0, INT32_MAX }, o[4];
        pqw_plain_i32(&b, v, 3);
        p = b.p;
        CHECK(gf__plain_decode(GPUFEED_INT32, 0, &p, b.p + b.n, &bit, o, 3) == 0);
        CHECK(memcmp(o, v, sizeof v) == 0 && p == b.p + 12);
        p = b.p;
        CHECK(gf__plain_decode(GPUFEED_INT32, 0, &p, b.p + b.n, &bit, o, 4) == 1 && p == b.p);
        b.n = 0;
    }
    {
        int64_t v[2] = { INT64_MIN, 42 }, o[3];
        pqw_plain_i64(&b, v, 2);
        p = b.p;
        CHECK(gf__plain_decode(GPUFEED_INT64, 0, &p, b.p + b.n, &bit, o, 2) == 0 && memcmp(o, v, sizeof v) == 0);
        p = b.p;
        CHECK(gf__plain_decode(GPUFEED_INT64, 0, &p, b.p + b.n - 1, &bit, o, 2) == 1);
        b.n = 0;
    }
    {
        float v[2] = { 1.5f, -0.0f }, o[2];
        pqw_plain_float(&b, v, 2);
        p = b.p;
        CHECK(gf__plain_decode(GPUFEED_FLOAT, 0, &p, b.p + b.n, &bit, o, 2) == 0 && memcmp(o, v, sizeof v) == 0);
        b.n = 0;
    }
    {
        double v[2] = { 1e300, -2.5 }, o[3];
        pqw_plain_double(&b, v, 2);
        p = b.p;
        CHECK(gf__plain_decode(GPUFEED_DOUBLE, 0, &p, b.p + b.n, &bit, o, 2) == 0 && memcmp(o, v, sizeof v) == 0);
        p = b.p;
        CHECK(gf__plain_decode(GPUFEED_DOUBLE, 0, &p, b.p + b.n, &bit, o, 3) == 1);
        b.n = 0;
    }
    {   /* INT96 */
        int64_t o[4];
        pqw_plain_int96(&b, 0, 2440588);
        pqw_plain_int96(&b, 0, 2451545);                   /* 2000-01-01 */
        pqw_plain_int96(&b, 1500000000ull, 2440587);       /* 1969-12-31T00:00:01.5 */
        p = b.p;
        CHECK(gf__plain_decode(GPUFEED_INT96, 0, &p, b.p + b.n, &bit, o, 3) == 0);
        CHECK(o[0] == 0 && o[1] == 946684800000000000LL && o[2] == -86400000000000LL + 1500000000LL);
        CHECK(gpufeed_int96_to_ns(b.p) == 0);
        CHECK(gpufeed_int96_to_ns(b.p + 12) == 946684800000000000LL);
        p = b.p;
        CHECK(gf__plain_decode(GPUFEED_INT96, 0, &p, b.p + 35, &bit, o, 3) == 1);
        b.n = 0;
    }
    {   /* FIXED_LEN_BYTE_ARRAY */
        gpufeed_bytes o[4];
        pqw_plain_flba(&b, "abcdefghi", 3, 3);
        p = b.p;
        CHECK(gf__plain_decode(GPUFEED_FIXED_LEN_BYTE_ARRAY, 3, &p, b.p + b.n, &bit, o, 3) == 0);
        CHECK(o[0].len == 3 && memcmp(o[2].ptr, "ghi", 3) == 0 && p == b.p + 9);
        p = b.p;
        CHECK(gf__plain_decode(GPUFEED_FIXED_LEN_BYTE_ARRAY, 3, &p, b.p + 8, &bit, o, 3) == 1);
        b.n = 0;
    }
    pqw_free(&b);
}

static void test_plain_boolean(void)
{
    pqw_buf b = {0};
    uint8_t v[20], o[20];
    const uint8_t *p;
    uint32_t bit = 0, i;
    for (i = 0; i < 20; i++) v[i] = (uint8_t)((i * 7 + 3) % 5 < 2);
    pqw_plain_bool(&b, v, 20);
    CHECK(b.n == 3);
    p = b.p;
    CHECK(gf__plain_decode(GPUFEED_BOOLEAN, 0, &p, b.p + b.n, &bit, o, 3) == 0);
    CHECK(p == b.p && bit == 3);
    CHECK(gf__plain_decode(GPUFEED_BOOLEAN, 0, &p, b.p + b.n, &bit, o + 3, 5) == 0);
    CHECK(p == b.p + 1 && bit == 0);
    CHECK(gf__plain_decode(GPUFEED_BOOLEAN, 0, &p, b.p + b.n, &bit, o + 8, 10) == 0);
    CHECK(p == b.p + 2 && bit == 2);
    CHECK(gf__plain_decode(GPUFEED_BOOLEAN, 0, &p, b.p + b.n, &bit, o + 18, 2) == 0);
    CHECK(memcmp(o, v, 20) == 0);
    /* 4 bits left in the last byte: 5 more is too many */
    CHECK(gf__plain_decode(GPUFEED_BOOLEAN, 0, &p, b.p + b.n, &bit, o, 5) == 1);
    CHECK(gf__plain_decode(GPUFEED_BOOLEAN, 0, &p, b.p + b.n, &bit, o, 4) == 0);
    CHECK(gf__plain_decode(GPUFEED_BOOLEAN, 0, &p, b.p + b.n, &bit, o, 1) == 1);
    pqw_free(&b);
}

static void test_plain_byte_array(void)
{
    static const char *const s[3] = { "alpha", "", "gamma ray" };
    pqw_buf b = {0};
    gpufeed_bytes o[4];
    const uint8_t *p;
    uint32_t bit = 0;
    pqw_plain_str(&b, s, 3);
    p = b.p;
    CHECK(gf__plain_decode(GPUFEED_BYTE_ARRAY, 0, &p, b.p + b.n, &bit, o, 3) == 0);
    CHECK(p == b.p + b.n);
    CHECK(o[0].len == 5 && memcmp(o[0].ptr, "alpha", 5) == 0 && o[1].len == 0 && o[2].len == 9 && memcmp(o[2].ptr, "gamma ray", 9) == 0);
    /* truncated length prefix */
    p = b.p;
    CHECK(gf__plain_decode(GPUFEED_BYTE_ARRAY, 0, &p, b.p + 4 + 5 + 4 + 2, &bit, o, 3) == 1);
    /* truncated bytes */
    p = b.p;
    CHECK(gf__plain_decode(GPUFEED_BYTE_ARRAY, 0, &p, b.p + b.n - 1, &bit, o, 3) == 1);
    /* a length of 2^32-1 */
    b.n = 0;
    pqw_le32(&b, 0xFFFFFFFFu); pqw_fill(&b, 'x', 8);
    p = b.p;
    CHECK(gf__plain_decode(GPUFEED_BYTE_ARRAY, 0, &p, b.p + b.n, &bit, o, 1) == 1);
    /* more values than present */
    b.n = 0;
    pqw_plain_str(&b, s, 2);
    p = b.p;
    CHECK(gf__plain_decode(GPUFEED_BYTE_ARRAY, 0, &p, b.p + b.n, &bit, o, 3) == 1);
    pqw_free(&b);
}

/* ---- helpers: half floats, CRC, result strings ------------------------- */

static void test_half_to_float(void)
{
    float z = gpufeed_half_to_float(0x0000), nz = gpufeed_half_to_float(0x8000);
    CHECK(z == 0.0f && !signbit(z));
    CHECK(nz == 0.0f && signbit(nz));
    CHECK(gpufeed_half_to_float(0x3C00) == 1.0f);
    CHECK(gpufeed_half_to_float(0xC000) == -2.0f);
    CHECK(gpufeed_half_to_float(0x7BFF) == 65504.0f);
    CHECK(gpufeed_half_to_float(0x0001) == ldexpf(1.0f, -24));
    CHECK(gpufeed_half_to_float(0x03FF) == ldexpf(1023.0f, -24));   /* largest subnormal */
    CHECK(gpufeed_half_to_float(0x0400) == ldexpf(1.0f, -14));      /* smallest normal */
    CHECK(gpufeed_half_to_float(0x3555) == 0x1.554p-2f);
    CHECK(isinf(gpufeed_half_to_float(0x7C00)) && gpufeed_half_to_float(0x7C00) > 0);
    CHECK(isinf(gpufeed_half_to_float(0xFC00)) && gpufeed_half_to_float(0xFC00) < 0);
    CHECK(isnan(gpufeed_half_to_float(0x7E00)));
    CHECK(isnan(gpufeed_half_to_float(0x7C01)));
}

static void test_crc32(void)
{
    gf__crc_tab *tab = (gf__crc_tab *)malloc(sizeof *tab);
    uint8_t *buf = (uint8_t *)malloc(5000);
    size_t n, i;
    CHECK(gpufeed_crc32(0, "123456789", 9) == 0xCBF43926u);
    CHECK(gpufeed_crc32(0, "", 0) == 0);
    CHECK(pqw_crc32("123456789", 9) == 0xCBF43926u);
    /* incremental */
    CHECK(gpufeed_crc32(gpufeed_crc32(0, "12345", 5), "6789", 4) == 0xCBF43926u);
    gf__crc_init(tab);
    CHECK(gf__crc_run(tab, 0, (const uint8_t *)"123456789", 9) == 0xCBF43926u);
    for (i = 0; i < 5000; i++) buf[i] = (uint8_t)rnd();
    for (n = 0; n < 300; n++) {
        size_t off = (size_t)(rnd() % 16);
        CHECK_MSG(gf__crc_run(tab, 0, buf + off, n) == gpufeed_crc32(0, buf + off, n), "length %u", (unsigned)n);
    }
    for (n = 300; n < 5000; n += 97)
        CHECK(gf__crc_run(tab, 0, buf, n) == gpufeed_crc32(0, buf, n));
    CHECK(gf__crc_run(tab, gf__crc_run(tab, 0, buf, 1001), buf + 1001, 3000) == gpufeed_crc32(0, buf, 4001));
    free(buf); free(tab);
}

static void test_result_strings(void)
{
    static const gpufeed_result all[] = {
        GPUFEED_OK, GPUFEED_DONE, GPUFEED_ERR_INVALID_ARG, GPUFEED_ERR_OUT_OF_MEMORY, GPUFEED_ERR_LIMIT,
        GPUFEED_ERR_UNSUPPORTED, GPUFEED_ERR_PLATFORM, GPUFEED_ERR_IO, GPUFEED_ERR_TRUNCATED,
        GPUFEED_ERR_NOT_PARQUET, GPUFEED_ERR_FOOTER, GPUFEED_ERR_THRIFT, GPUFEED_ERR_SCHEMA,
        GPUFEED_ERR_ENCRYPTED, GPUFEED_ERR_PAGE, GPUFEED_ERR_CHECKSUM, GPUFEED_ERR_CODEC,
        GPUFEED_ERR_ENCODING, GPUFEED_ERR_CORRUPT, GPUFEED_ERR_DICTIONARY
    };
    size_t n = sizeof all / sizeof all[0], i, j;
    const char *unknown = gpufeed_result_string((gpufeed_result)-999);
    CHECK(unknown && unknown[0]);
    for (i = 0; i < n; i++) {
        const char *s = gpufeed_result_string(all[i]);
        CHECK_MSG(s && s[0], "code %d", all[i]);
        CHECK_MSG(strcmp(s, unknown) != 0, "code %d", all[i]);
        for (j = 0; j < i; j++) CHECK_MSG(strcmp(s, gpufeed_result_string(all[j])) != 0, "codes %d and %d", all[i], all[j]);
    }
    /* names used in messages */
    CHECK(strcmp(gpufeed_physical_type_name(GPUFEED_FIXED_LEN_BYTE_ARRAY), "FIXED_LEN_BYTE_ARRAY") == 0);
    CHECK(strcmp(gpufeed_codec_name((gpufeed_codec)99), "UNKNOWN") == 0);
    CHECK(strcmp(gpufeed_encoding_name(GPUFEED_ENC_RLE_DICTIONARY), "RLE_DICTIONARY") == 0);
    CHECK(strcmp(gpufeed_logical_type_name((gpufeed_logical_type)1000), "OTHER") == 0);
}


/* DELTA_BINARY_PACKED: the specification's shape with hand-made vectors */
static void test_delta_binary_packed(void)
{
    static const uint8_t inc[] = { 0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 0, 0, 0, 0 };          /* 1 2 3 4 5 */
    static const uint8_t mix[] = { 0x80, 0x01, 0x04, 0x08, 0x0E, 0x03, 2, 0, 0, 0,
                                   0xC0, 0x3F, 0, 0, 0, 0, 0, 0 };                             /* 7 5 3 1 2 3 4 5 */
    int32_t out[16];
    int64_t o64[16];
    const uint8_t *used = NULL;
    char msg[256];
    int64_t n;
    n = gf__delta_bp(inc, inc + sizeof inc, 4, (uint8_t *)out, 16, &used, msg, sizeof msg);
    CHECK(n == 5 && out[0] == 1 && out[4] == 5 && used == inc + sizeof inc);
    n = gf__delta_bp(mix, mix + sizeof mix, 4, (uint8_t *)out, 16, &used, msg, sizeof msg);
    CHECK(n == 8 && out[0] == 7 && out[1] == 5 && out[3] == 1 && out[4] == 2 && out[7] == 5);
    n = gf__delta_bp(mix, mix + sizeof mix, 8, (uint8_t *)o64, 16, &used, msg, sizeof msg);
    CHECK(n == 8 && o64[3] == 1 && o64[7] == 5);
    /* truncated miniblock, too many values for the room, bad block size */
    CHECK(gf__delta_bp(mix, mix + sizeof mix - 3, 4, (uint8_t *)out, 16, &used, msg, sizeof msg) < 0);
    CHECK(gf__delta_bp(mix, mix + sizeof mix, 4, (uint8_t *)out, 4, &used, msg, sizeof msg) < 0);
    {
        uint8_t bad[sizeof inc];
        memcpy(bad, inc, sizeof inc); bad[0] = 0x05; bad[1] = 0x04; /* block of 5 values */
        CHECK(gf__delta_bp(bad, bad + sizeof bad, 4, (uint8_t *)out, 16, &used, msg, sizeof msg) < 0);
    }
}

/* A DELTA_BINARY_PACKED stream of 64-bit deltas (as DuckDB writes INT32
   columns): blocks of 128 values in 4 miniblocks, each miniblock as wide as
   its largest delta needs. Returns the bytes written. */
static void dbp_uvar(uint8_t *o, size_t *k, uint64_t v)
{
    while (v >= 0x80) { o[(*k)++] = (uint8_t)(v | 0x80); v >>= 7; }
    o[(*k)++] = (uint8_t)v;
}
static uint64_t dbp_zz(uint64_t v) { return (v << 1) ^ (0 - (v >> 63)); }
static size_t dbp_encode64(const int64_t *v, int n, uint8_t *o)
{
    size_t k = 0;
    int i, j, mb;
    dbp_uvar(o, &k, 128); dbp_uvar(o, &k, 4); dbp_uvar(o, &k, (uint64_t)n); dbp_uvar(o, &k, dbp_zz((uint64_t)v[0]));
    for (i = 1; i < n; i += 128) {
        uint64_t d[128], mind = 0;
        int cnt = n - i < 128 ? n - i : 128, width[4];
        for (j = 0; j < cnt; j++) {
            d[j] = (uint64_t)v[i + j] - (uint64_t)v[i + j - 1];
            if (j == 0 || (int64_t)d[j] < (int64_t)mind) mind = d[j];
        }
        dbp_uvar(o, &k, dbp_zz(mind));
        for (mb = 0; mb < 4; mb++) {
            uint64_t mx = 0;
            width[mb] = 0;
            for (j = mb * 32; j < mb * 32 + 32 && j < cnt; j++) if (d[j] - mind > mx) mx = d[j] - mind;
            while (width[mb] < 64 && (mx >> width[mb])) width[mb]++;
            o[k++] = (uint8_t)width[mb];
        }
        for (mb = 0; mb < 4 && mb * 32 < cnt; mb++) {
            uint64_t bit = 0;
            memset(o + k, 0, (size_t)(32 * width[mb] / 8));
            for (j = 0; j < 32; j++) {
                uint64_t x = mb * 32 + j < cnt ? d[mb * 32 + j] - mind : 0;
                int b;
                for (b = 0; b < width[mb]; b++, bit++) if ((x >> b) & 1) o[k + bit / 8] |= (uint8_t)(1u << (bit % 8));
            }
            k += (size_t)(32 * width[mb] / 8);
        }
    }
    return k;
}

/* INT32 columns from a writer that subtracts in 64 bits (DuckDB): miniblocks
   of 33..64 bits decode exactly; every INT32 value is the low 32 bits of its
   sum (modulo 2^32, as DuckDB reads them: a UINT32 column's values above
   INT32_MAX come out as their bit patterns); narrow blocks wrap the same way */
static void test_delta_wide_int32(void)
{
    static int64_t v[300];
    static int32_t out[300];
    static int64_t o64[300];
    static uint8_t buf[8192];
    const uint8_t *used = NULL;
    char msg[256];
    size_t len;
    int i, ok = 1, maxw = 0;
    uint64_t x = 0x243F6A8885A308D3ull;
    for (i = 0; i < 300; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        v[i] = i % 3 == 0 ? (i % 2 ? INT32_MAX : INT32_MIN) : (int64_t)(int32_t)(uint32_t)x;
    }
    len = dbp_encode64(v, 300, buf);
    {   /* find the widths of the first block: after 4 header varints and the min delta */
        const uint8_t *q = buf;
        uint64_t t;
        for (i = 0; i < 5; i++) CHECK(gf__uvarint(&q, buf + len, &t));
        for (i = 0; i < 4; i++) if (q[i] > maxw) maxw = q[i];
    }
    CHECK_MSG(maxw >= 33, "widest miniblock %d bits", maxw);
    CHECK_MSG(gf__delta_bp(buf, buf + len, 4, (uint8_t *)out, 300, &used, msg, sizeof msg) == 300, "%s", msg);
    for (i = 0; i < 300; i++) if (out[i] != v[i]) ok = 0;
    CHECK(ok && used == buf + len);
    /* the same values as INT64 */
    CHECK(gf__delta_bp(buf, buf + len, 8, (uint8_t *)o64, 300, &used, msg, sizeof msg) == 300);
    for (i = 0, ok = 1; i < 300; i++) if (o64[i] != v[i]) ok = 0;
    CHECK(ok);
    /* 64-bit miniblocks: INT64 extremes */
    v[0] = INT64_MIN; v[1] = INT64_MAX; v[2] = 0; v[3] = INT64_MIN; v[4] = -1;
    len = dbp_encode64(v, 5, buf);
    CHECK(gf__delta_bp(buf, buf + len, 8, (uint8_t *)o64, 5, &used, msg, sizeof msg) == 5);
    CHECK(o64[0] == INT64_MIN && o64[1] == INT64_MAX && o64[2] == 0 && o64[3] == INT64_MIN && o64[4] == -1);
    /* wide blocks whose sums leave int32: modulo 2^32 (a UINT32 column's
       2853936494 and 4294967295, then 2^32 + 5 -> 5, 2^40 + 7 -> 7) */
    v[0] = 2853936494ll; v[1] = 4294967295ll; v[2] = ((int64_t)1 << 32) + 5; v[3] = ((int64_t)1 << 40) + 7; v[4] = -3;
    len = dbp_encode64(v, 5, buf);
    CHECK_MSG(gf__delta_bp(buf, buf + len, 4, (uint8_t *)out, 5, &used, msg, sizeof msg) == 5, "%s", msg);
    CHECK((uint32_t)out[0] == 2853936494u && (uint32_t)out[1] == 4294967295u && out[2] == 5 && out[3] == 7 && out[4] == -3);
    /* a first value beyond int32: its low 32 bits */
    v[0] = ((int64_t)1 << 40) + 9; v[1] = 0;
    len = dbp_encode64(v, 2, buf);
    CHECK(gf__delta_bp(buf, buf + len, 4, (uint8_t *)out, 2, &used, msg, sizeof msg) == 2);
    CHECK(out[0] == 9 && out[1] == 0);
    /* a narrow block wraps in 32 bits: INT32_MAX then delta +1 is INT32_MIN */
    {
        static const uint8_t wrap[] = { 0x80, 0x01, 0x04, 0x02, 0xFE, 0xFF, 0xFF, 0xFF, 0x0F, 0x02, 0, 0, 0, 0 };
        CHECK(gf__delta_bp(wrap, wrap + sizeof wrap, 4, (uint8_t *)out, 2, &used, msg, sizeof msg) == 2);
        CHECK(out[0] == INT32_MAX && out[1] == INT32_MIN);
    }
    /* a bit width beyond 64 */
    v[0] = 1; v[1] = 2;
    len = dbp_encode64(v, 2, buf);
    {   /* the first miniblock's width byte */
        const uint8_t *q = buf;
        uint64_t t;
        for (i = 0; i < 5; i++) (void)gf__uvarint(&q, buf + len, &t);
        buf[q - buf] = 65;
    }
    CHECK(gf__delta_bp(buf, buf + sizeof buf, 4, (uint8_t *)out, 2, &used, msg, sizeof msg) < 0);
    CHECK_HAS(msg, "bit width 65");
}

/* LZ4: a raw block, the Hadoop framing around it, and malformed input */
static void test_lz4(void)
{
    static const uint8_t blk[] = { 0x35, 'a', 'b', 'c', 0x03, 0x00 };   /* "abc" + match(3, 9) */
    static const uint8_t framed[] = { 0, 0, 0, 12, 0, 0, 0, 6, 0x35, 'a', 'b', 'c', 0x03, 0x00,
                                      0, 0, 0, 12, 0, 0, 0, 6, 0x35, 'a', 'b', 'c', 0x03, 0x00 };
    static const uint8_t zero_off[] = { 0x35, 'a', 'b', 'c', 0x00, 0x00 };
    static const uint8_t far_off[] = { 0x35, 'a', 'b', 'c', 0x09, 0x00 };
    uint8_t out[32];
    char msg[256];
    CHECK(gf__lz4_raw(blk, sizeof blk, out, 12, msg, sizeof msg) == GPUFEED_OK && memcmp(out, "abcabcabcabc", 12) == 0);
    CHECK(gf__lz4_hadoop(framed, sizeof framed, out, 24, msg, sizeof msg) == GPUFEED_OK && memcmp(out + 12, "abcabcabcabc", 12) == 0);
    CHECK(gf__lz4_hadoop(blk, sizeof blk, out, 12, msg, sizeof msg) == GPUFEED_OK); /* no framing: a raw block */
    CHECK(gf__lz4_raw(blk, sizeof blk, out, 11, msg, sizeof msg) == GPUFEED_ERR_CODEC);  /* overruns the output */
    CHECK(gf__lz4_raw(blk, sizeof blk, out, 13, msg, sizeof msg) == GPUFEED_ERR_CODEC);  /* lies about the length */
    CHECK(gf__lz4_raw(zero_off, sizeof zero_off, out, 12, msg, sizeof msg) == GPUFEED_ERR_CODEC);
    CHECK(gf__lz4_raw(far_off, sizeof far_off, out, 12, msg, sizeof msg) == GPUFEED_ERR_CODEC);
    CHECK(gf__lz4_raw(blk, 5, out, 12, msg, sizeof msg) == GPUFEED_ERR_CODEC);           /* truncated offset */
}

/* ---- the dense layer: the null fill on the PLAIN path --------------------- */

/* Nullable PLAIN columns (no dictionary), read as dense features whose fill
   is not 0: every null row holds the fill's exact bits (NaN included), every
   other row its value, and the validity mask says which is which. Pages:
   a null every third row, all null, none null, then 2,500 rows (over two
   decode tiles) with every other row null; dataset units of 1,000 target rows,
   and the whole file one unit.
   The values of the file are never 0 or a fill. */
enum { FN_PAGES = 4, FN_ROWS = 100 + 37 + 50 + 2500, FN_FEATS = 13 };
static const int fn_page_rows[FN_PAGES] = { 100, 37, 50, 2500 };
static int fn_null(int64_t r)
{
    if (r < 100) return r % 3 == 2;
    if (r < 137) return 1;
    if (r < 187) return 0;
    return r % 2 == 1;
}
static int32_t fn_ival(int64_t r) { return (int32_t)(10 + r % 200); }  /* 10..209: exact in u8, f16, bf16 */

typedef struct fn_file { pqw_schema sch[6]; pqw_page pg[5][FN_PAGES]; pqw_buf body[5][FN_PAGES]; pqw_chunk ch[5]; pqw_rowgroup rg; pqw_file f; pqw_buf out; } fn_file;

static void fn_build(fn_file *m)
{
    static const char *const names[5] = { "i", "l", "f", "d", "b" };
    static const int32_t types[5] = { PQW_INT32, PQW_INT64, PQW_FLOAT, PQW_DOUBLE, PQW_BOOLEAN };
    int c, p, k;
    int64_t r0 = 0;
    memset(m, 0, sizeof *m);
    m->sch[0] = pqw_root(5);
    for (c = 0; c < 5; c++) m->sch[c + 1] = pqw_leaf(names[c], types[c], PQW_OPTIONAL);
    for (p = 0; p < FN_PAGES; p++) {
        int n = fn_page_rows[p];
        uint32_t lv[2500];
        for (k = 0; k < n; k++) lv[k] = !fn_null(r0 + k);
        for (c = 0; c < 5; c++) {
            pqw_buf *b = &m->body[c][p];
            uint8_t bools[2500];
            size_t nb = 0;
            pqw_levels_v1(b, lv, (size_t)n, 1);
            for (k = 0; k < n; k++) {
                int64_t r = r0 + k;
                int32_t iv = fn_ival(r);
                if (fn_null(r)) continue;
                switch (c) {
                case 0: pqw_plain_i32(b, &iv, 1); break;
                case 1: { int64_t v = (int64_t)iv * 1000000007; pqw_plain_i64(b, &v, 1); break; }
                case 2: { float v = (float)iv + 0.25f; pqw_plain_float(b, &v, 1); break; }
                case 3: { double v = iv + 0.5; pqw_plain_double(b, &v, 1); break; }
                default: bools[nb++] = (uint8_t)(r % 5 < 2); break; /* bit-packed: the page's at once */
                }
            }
            if (c == 4) pqw_plain_bool(b, bools, nb);
            m->pg[c][p] = pqw_data_page(b, n, PQW_PLAIN);
        }
        r0 += n;
    }
    for (c = 0; c < 5; c++) {
        m->ch[c].pages = m->pg[c]; m->ch[c].npages = FN_PAGES; m->ch[c].physical = types[c]; m->ch[c].path = names[c];
    }
    m->rg.chunks = m->ch; m->rg.nchunks = 5;
    m->f.schema = m->sch; m->f.nschema = 6; m->f.rgs = &m->rg; m->f.nrgs = 1;
    pqw_build(&m->f, &m->out);
}
static void fn_free(fn_file *m)
{
    int c, p;
    for (c = 0; c < 5; c++) for (p = 0; p < FN_PAGES; p++) pqw_free(&m->body[c][p]);
    pqw_free(&m->out);
}

/* the file from memory, through open_source */
static int fn_read_at(void *ctx, uint64_t off, void *buf, size_t len)
{
    const pqw_buf *b = (const pqw_buf *)ctx;
    if (off > b->n || len > b->n - off) return -1;
    memcpy(buf, b->p + off, len);
    return 0;
}
static int fn_open_source(void *user, const char *path, gpufeed_source *src, char *identity, size_t identity_cap, char *why, size_t why_cap)
{
    (void)why; (void)why_cap;
    memset(src, 0, sizeof *src);
    src->read_at = fn_read_at; src->ctx = user; src->size = ((const pqw_buf *)user)->n;
    snprintf(identity, identity_cap, "memory:%s", path);
    return 0;
}

typedef struct fn_feat { const char *col; gpufeed_dtype dt; double fill; uint64_t fill_bits; } fn_feat;

/* the value of row r of feature ff as the dtype's bytes */
static void fn_expect(const fn_feat *ff, int64_t r, uint8_t out[8])
{
    double v;
    int32_t iv = fn_ival(r);
    if (!strcmp(ff->col, "i")) v = iv;
    else if (!strcmp(ff->col, "l")) v = (double)((int64_t)iv * 1000000007);
    else if (!strcmp(ff->col, "f")) v = iv + 0.25;
    else if (!strcmp(ff->col, "d")) v = iv + 0.5;
    else v = r % 5 < 2;
    memset(out, 0, 8);
    switch (ff->dt) {
    case GPUFEED_DT_F32: { float x = (float)v; memcpy(out, &x, 4); break; }
    case GPUFEED_DT_F64: memcpy(out, &v, 8); break;
    case GPUFEED_DT_F16: { uint16_t x = gpufeed_double_to_half(v); memcpy(out, &x, 2); break; }
    case GPUFEED_DT_BF16: { uint16_t x = gpufeed_double_to_bf16(v); memcpy(out, &x, 2); break; }
    case GPUFEED_DT_I32: { int32_t x = (int32_t)v; memcpy(out, &x, 4); break; }
    case GPUFEED_DT_I64: { int64_t x = !strcmp(ff->col, "l") ? (int64_t)iv * 1000000007 : (int64_t)v; memcpy(out, &x, 8); break; }
    default: out[0] = (uint8_t)v; break;
    }
}

static void test_dense_plain_null_fill(void)
{
    static const fn_feat ff[FN_FEATS] = {
        { "d", GPUFEED_DT_F64, 0, 0x7FF8000000000000ull },    /* NaN */
        { "d", GPUFEED_DT_F32, 0, 0x7FC00000u },               /* NaN */
        { "f", GPUFEED_DT_F32, -1.0, 0xBF800000u },
        { "f", GPUFEED_DT_F64, -1.5, 0xBFF8000000000000ull },
        { "i", GPUFEED_DT_I32, -1.0, 0xFFFFFFFFu },
        { "l", GPUFEED_DT_I64, -1.0, 0xFFFFFFFFFFFFFFFFull },
        { "i", GPUFEED_DT_F16, 0, 0x7E00u },                   /* NaN */
        { "i", GPUFEED_DT_BF16, -1.0, 0xBF80u },
        { "i", GPUFEED_DT_U8, 7.0, 0x07u },
        { "i", GPUFEED_DT_I64, -1.0, 0xFFFFFFFFFFFFFFFFull },
        { "b", GPUFEED_DT_U8, 7.0, 0x07u },
        { "b", GPUFEED_DT_F32, 0, 0x7FC00000u },               /* NaN */
        { "f", GPUFEED_DT_F16, -1.0, 0xBC00u }
    };
    /* every feature at once; and features of one size only (a row-major
       batch of uniform 4- or 8-byte features may be decoded apart and
       transposed into rows) */
    static const int sets[3][FN_FEATS + 1] = {
        { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, -1 },
        { 1, 2, 4, 11, -1 },
        { 0, 3, 5, 9, -1 }
    };
    /* the third: the whole file one unit (the default target) read in
       batches larger than a decode tile, so a pass of the staging tile
       covers more rows than GF__TILE and crosses every page boundary */
    static const int64_t brows[3] = { 64, 1000, 4096 };
    fn_file *m = (fn_file *)calloc(1, sizeof *m);
    gpufeed_feature feats[FN_FEATS];
    const fn_feat *fs[FN_FEATS];
    int set, nf, layout, bi, j;
    const char *path = "fill.parquet";
    fn_build(m);
    for (set = 0; set < 3; set++) {
        memset(feats, 0, sizeof feats);
        for (nf = 0; sets[set][nf] >= 0; nf++) {
            const fn_feat *f = fs[nf] = &ff[sets[set][nf]];
            feats[nf].column = f->col; feats[nf].dtype = f->dt; feats[nf].validity = 1;
            feats[nf].fill = f->fill_bits == 0x7FF8000000000000ull || f->fill_bits == 0x7FC00000u || f->fill_bits == 0x7E00u ? (double)NAN : f->fill;
        }
        for (layout = GPUFEED_LAYOUT_ROW_MAJOR; layout <= GPUFEED_LAYOUT_PER_FEATURE; layout++)
            for (bi = 0; bi < 3; bi++) {
                gpufeed_dataset_desc dd;
                gpufeed_dataset *ds = NULL;
                gpufeed_reader *rd = NULL;
                gpufeed_reader_desc rdd;
                gpufeed_error err;
                gpufeed_batch b;
                gpufeed_result r;
                int64_t row = 0, bad_fill = 0, bad_value = 0, bad_valid = 0, nulls = 0;
                char what[64];
                snprintf(what, sizeof what, "set %d layout %d B=%lld", set, layout, (long long)brows[bi]);
                memset(&dd, 0, sizeof dd);
                dd.paths = &path; dd.num_paths = 1; dd.features = feats; dd.num_features = nf;
                dd.unit_rows = bi < 2 ? 1000 : 0; dd.layout = layout;
                dd.open_source = fn_open_source; dd.source_user = &m->out;
                if (gpufeed_dataset_open(&ds, &dd, &err)) { CHECK_MSG(0, "%s: dataset: %s", what, err.message); continue; }
                memset(&rdd, 0, sizeof rdd); rdd.batch_rows = brows[bi];
                if (gpufeed_reader_open(&rd, ds, &rdd, &err)) { CHECK_MSG(0, "%s: reader: %s", what, err.message); gpufeed_dataset_close(ds); continue; }
                while ((r = gpufeed_reader_next(rd, &b)) == GPUFEED_OK) {
                    int64_t i;
                    for (i = 0; i < b.num_rows; i++, row++) {
                        int isnull = fn_null(row);
                        nulls += isnull;
                        for (j = 0; j < nf; j++) {
                            size_t z = gpufeed_dtype_size(fs[j]->dt);
                            const uint8_t *got = layout == GPUFEED_LAYOUT_ROW_MAJOR
                                ? (const uint8_t *)b.data + i * b.row_bytes + b.feature_offset[j]
                                : (const uint8_t *)b.features[j] + (size_t)i * z;
                            uint8_t want[8];
                            if (isnull) memcpy(want, &fs[j]->fill_bits, 8); /* little-endian: the low bytes */
                            else fn_expect(fs[j], row, want);
                            if (b.valid[j][i] != !isnull && bad_valid++ < 3)
                                CHECK_MSG(0, "%s feature %d (%s as %s): row %lld valid %d", what, j,
                                          fs[j]->col, gpufeed_dtype_name(fs[j]->dt), (long long)row, b.valid[j][i]);
                            if (memcmp(got, want, z) != 0) {
                                uint64_t g = 0, w = 0;
                                memcpy(&g, got, z); memcpy(&w, want, z);
                                if ((isnull ? bad_fill++ : bad_value++) < 3)
                                    CHECK_MSG(0, "%s feature %d (%s as %s): %s row %lld holds 0x%llx, want 0x%llx", what, j,
                                              fs[j]->col, gpufeed_dtype_name(fs[j]->dt), isnull ? "null" : "valid", (long long)row,
                                              (unsigned long long)g, (unsigned long long)w);
                            }
                        }
                    }
                }
                CHECK_MSG(r == GPUFEED_DONE, "%s: %s", what, gpufeed_reader_error(rd));
                CHECK_MSG(row == FN_ROWS, "%s: %lld rows", what, (long long)row);
                CHECK_MSG(bad_fill == 0 && bad_value == 0 && bad_valid == 0, "%s: %lld null cells without the fill, %lld wrong values, %lld wrong masks (%lld null rows x %d features)",
                          what, (long long)bad_fill, (long long)bad_value, (long long)bad_valid, (long long)nulls, nf);
                CHECK(nulls == 33 + 37 + 1250);
                gpufeed_reader_close(rd);
                gpufeed_dataset_close(ds);
            }
    }
    fn_free(m);
    free(m);
}

/* A scratch's pass over the features: scalar features of one width in a
   row-major batch are staged and read GF__STAGE_BYTES of rows a pass (more
   than a tile), anything else a tile a pass; a whole unit decoded either way
   holds the same cells as the per-feature layout (no staging). */
static void test_scratch_step(void)
{
    fn_file *m = (fn_file *)calloc(1, sizeof *m);
    const char *path = "fill.parquet";
    static const char *const cols[3] = { "f", "i", "d" };
    int variant;
    fn_build(m);
    for (variant = 0; variant < 3; variant++) { /* 0: f32 features, 1: and a predicate, 2: widths 4, 4, 8 */
        gpufeed_feature feats[3];
        gpufeed_predicate p;
        gpufeed_dataset_desc dd;
        gpufeed_dataset *ds[2] = { NULL, NULL };
        gpufeed_scratch *sc[2] = { NULL, NULL };
        gpufeed_error err;
        int lay, j, nf = 3;
        size_t off[3] = { 0, 4, 8 }, wz[3] = { 4, 4, 4 }, rb;
        int64_t rows[2] = { 0, 0 }, i, bad = 0;
        uint8_t *rm = NULL, *pf[3] = { NULL, NULL, NULL }, *vm[3] = { NULL, NULL, NULL };
        memset(feats, 0, sizeof feats); memset(&p, 0, sizeof p);
        for (j = 0; j < 3; j++) { feats[j].column = cols[j]; feats[j].dtype = GPUFEED_DT_F32; feats[j].fill = -1.0; }
        if (variant == 2) { feats[2].dtype = GPUFEED_DT_F64; wz[2] = 8; }
        rb = off[2] + wz[2];
        p.column = "i"; p.op = GPUFEED_OP_GE; p.a.kind = GPUFEED_VAL_INT; p.a.i = 0; /* keeps the rows where i is not null */
        for (lay = 0; lay < 2; lay++) {
            memset(&dd, 0, sizeof dd);
            dd.paths = &path; dd.num_paths = 1; dd.features = feats; dd.num_features = nf;
            dd.layout = lay ? GPUFEED_LAYOUT_PER_FEATURE : GPUFEED_LAYOUT_ROW_MAJOR;
            dd.open_source = fn_open_source; dd.source_user = &m->out;
            if (variant == 1) { dd.where = &p; dd.num_where = 1; }
            if (gpufeed_dataset_open(&ds[lay], &dd, &err) || gpufeed_scratch_open(&sc[lay], ds[lay], &err)) {
                CHECK_MSG(0, "variant %d layout %d: %s", variant, lay, err.message);
                goto next;
            }
        }
        if (variant == 0) CHECK_MSG(sc[0]->stage && sc[0]->step > GF__TILE && sc[0]->step % GF__TILE == 0 && (size_t)sc[0]->step * 12 <= GF__STAGE_BYTES,
                                    "uniform scalar features: a pass of %lld rows (tile %d)", (long long)sc[0]->step, GF__TILE);
        else CHECK_MSG(sc[0]->step == GF__TILE, "variant %d: a pass of %lld rows, want a tile", variant, (long long)sc[0]->step);
        CHECK(sc[1]->step == GF__TILE && !sc[1]->stage);
        rm = (uint8_t *)calloc(FN_ROWS, rb);
        for (j = 0; j < 3; j++) { pf[j] = (uint8_t *)calloc(FN_ROWS, wz[j]); vm[j] = (uint8_t *)calloc(FN_ROWS, 1); }
        CHECK(gpufeed_dataset_decode_unit(ds[0], sc[0], 0, rm, NULL, NULL, &rows[0]) == GPUFEED_OK);
        CHECK(gpufeed_dataset_decode_unit(ds[1], sc[1], 0, NULL, (void *const *)pf, vm, &rows[1]) == GPUFEED_OK);
        CHECK_MSG(rows[0] == rows[1] && rows[0] > (variant == 1 ? GF__TILE : 2 * GF__TILE), "variant %d: %lld and %lld rows", variant, (long long)rows[0], (long long)rows[1]);
        for (i = 0; i < rows[0] && i < rows[1]; i++)
            for (j = 0; j < nf; j++) bad += memcmp(rm + (size_t)i * rb + off[j], pf[j] + wz[j] * (size_t)i, wz[j]) != 0;
        CHECK_MSG(bad == 0, "variant %d: %lld cells differ between the staged rows and the per-feature layout", variant, (long long)bad);
    next:
        free(rm);
        for (j = 0; j < 3; j++) { free(pf[j]); free(vm[j]); }
        for (lay = 0; lay < 2; lay++) { if (sc[lay]) gpufeed_scratch_close(sc[lay]); if (ds[lay]) gpufeed_dataset_close(ds[lay]); }
    }
    fn_free(m);
    free(m);
}

/* What a loader keeps mapped: the first files' first bytes, in the
   dataset's order, GPUFEED_KEEP_BYTES in all (none by default), a partly
   kept file in whole pages (the suite also builds this with a budget of
   1.5 files). */
static void test_keep_budget(void)
{
    static const char *paths[] = { "tests/data/ids.parquet", "tests/data/ids.parquet", "tests/data/ids.parquet" };
    gpufeed_feature ft;
    gpufeed_dataset_desc d;
    gpufeed_dataset *ds = NULL;
    gpufeed_error err;
    uint64_t left = (uint64_t)GPUFEED_KEEP_BYTES, sum = 0;
    int32_t i;
    memset(&ft, 0, sizeof ft); memset(&d, 0, sizeof d);
    ft.column = "x"; ft.dtype = GPUFEED_DT_F32;
    d.paths = paths; d.num_paths = 3; d.features = &ft; d.num_features = 1;
    if (gpufeed_dataset_open(&ds, &d, &err)) { CHECK_MSG(0, "dataset: %s", err.message); return; }
    CHECK(ds->nfiles == 3);
    for (i = 0; i < ds->nfiles; i++) {
        const gpufeed_file *f = ds->files[i];
        uint64_t want = f->map_len < left ? f->map_len : left;
        if (want < f->map_len) want = want / f->map_page * f->map_page;
        CHECK_MSG(f->map && f->keep_to == want, "file %d: keep_to %llu, want %llu (file %llu bytes, budget left %llu)", (int)i,
                  (unsigned long long)f->keep_to, (unsigned long long)want, (unsigned long long)f->map_len, (unsigned long long)left);
        left -= want;
        sum += f->keep_to;
    }
    CHECK(sum <= (uint64_t)GPUFEED_KEEP_BYTES);
    gpufeed_dataset_close(ds);
}

/* Huge pages for the files a dataset reads most of (GPUFEED_MAP_HUGE 1, the
   default): the mapping starts one page past a 2 MiB boundary (so the
   kernel maps it a page table entry at a time and bytes let go leave the
   RSS), and it carries the huge-page advice (VmFlags "hg" in
   /proc/self/smaps) when the dataset's columns hold at least half of the
   file's column bytes: all four columns of a file, not one column of 34. */
static int smaps_flags(const void *addr, char *flags, size_t cap) /* 1: found */
{
    FILE *fp = fopen("/proc/self/smaps", "r");
    char line[512];
    int in = 0;
    if (!fp) return -1;
    while (fgets(line, sizeof line, fp)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) { in = (uintptr_t)addr == (uintptr_t)lo; continue; }
        if (in && strncmp(line, "VmFlags:", 8) == 0) {
            size_t n = strlen(line + 8);
            if (n >= cap) n = cap - 1;
            memcpy(flags, line + 8, n);
            flags[n] = 0;
            fclose(fp);
            return 1;
        }
    }
    fclose(fp);
    return 0;
}
static void test_map_huge(void)
{
    static const char *paths[2] = { "tests/data/ids.parquet", "tests/data/pyarrow_default.parquet" };
    static const char *cols[2][4] = { { "id", "x", "y", "k" }, { "i32" } };
    static const int32_t ncols[2] = { 4, 1 };
    int v, have_thp = 0;
#if GPUFEED_MAP_HUGE != 1 || !defined(__linux__) || !defined(GF__MADV_HUGEPAGE)
    printf("  test_map_huge: skipped (GPUFEED_MAP_HUGE is not 1 or not Linux)\n");
    return;
#else
    { /* does this system keep the advice at all? (qemu-user, or a kernel
         without transparent huge pages, accept and drop it) */
        int fd = open(paths[0], O_RDONLY);
        void *m = fd >= 0 ? mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
        char fl[256];
        if (m != MAP_FAILED) {
            have_thp = madvise(m, 4096, GF__MADV_HUGEPAGE) == 0 && smaps_flags(m, fl, sizeof fl) == 1 && strstr(fl, " hg") != NULL;
            munmap(m, 4096);
        }
        if (fd >= 0) close(fd);
    }
#endif
    for (v = 0; v < 2; v++) {
        gpufeed_feature ft[4];
        gpufeed_dataset_desc d;
        gpufeed_dataset *ds = NULL;
        gpufeed_error err;
        const gpufeed_file *f;
        char flags[256];
        int found, j;
        memset(ft, 0, sizeof ft); memset(&d, 0, sizeof d);
        for (j = 0; j < ncols[v]; j++) { ft[j].column = cols[v][j]; ft[j].dtype = GPUFEED_DT_F32; ft[j].cast = GPUFEED_CAST_UNSAFE; }
        d.paths = &paths[v]; d.num_paths = 1; d.features = ft; d.num_features = ncols[v];
        if (gpufeed_dataset_open(&ds, &d, &err)) { CHECK_MSG(0, "%s: %s", paths[v], err.message); continue; }
        f = ds->files[0];
        CHECK_MSG(f->map != NULL, "%s: not mapped", paths[v]);
        if (f->map) {
            CHECK_MSG(((uintptr_t)f->map & ((2u << 20) - 1)) == f->map_page, "%s: mapped at %p, want one page (%llu) past a 2 MiB boundary", paths[v],
                      (const void *)f->map, (unsigned long long)f->map_page);
            found = smaps_flags(f->map, flags, sizeof flags);
            if (found < 0) printf("  test_map_huge: /proc/self/smaps unreadable: the advice not checked\n");
            else {
                CHECK_MSG(found == 1, "%s: the mapping at %p not in /proc/self/smaps", paths[v], (const void *)f->map);
                if (found == 1 && have_thp) CHECK_MSG((strstr(flags, " hg") != NULL) == (v == 0), "%s, column %s: VmFlags%s (huge-page advice %s)", paths[v], cols[v][0],
                                                      flags, v == 0 ? "wanted" : "not wanted");
                else if (found == 1) printf("  test_map_huge: this system drops huge-page advice (no transparent huge pages, or an emulator): the advice not checked\n");
            }
        }
        gpufeed_dataset_close(ds);
    }
}

/* A loader's workers share converted dictionaries only for row groups cut
   into several units: with whole row groups as units the dataset's cache
   stays empty (it would grow with the dataset and measured no faster);
   cut into 1,000-row units, the chunks' dictionaries are shared. The rows
   are right either way. */
static void test_dict_share(void)
{
    static const char *path = "tests/data/ids.parquet";
    static const int64_t unit_rows[2] = { 0, 1000 };
    int v;
    for (v = 0; v < 2; v++) {
        gpufeed_feature ft[2];
        gpufeed_dataset_desc d;
        gpufeed_dataset *ds = NULL;
        gpufeed_loader_desc ld;
        gpufeed_loader *l = NULL;
        gpufeed_error err;
        gpufeed_batch b;
        int64_t rows = 0;
        int32_t i, entries = 0;
        memset(ft, 0, sizeof ft); memset(&d, 0, sizeof d); memset(&ld, 0, sizeof ld);
        ft[0].column = "y"; ft[0].dtype = GPUFEED_DT_F64;
        ft[1].column = "k"; ft[1].dtype = GPUFEED_DT_F64;
        d.paths = &path; d.num_paths = 1; d.features = ft; d.num_features = 2; d.unit_rows = unit_rows[v];
        if (gpufeed_dataset_open(&ds, &d, &err)) { CHECK_MSG(0, "dataset: %s", err.message); return; }
        ld.batch_rows = 1000; ld.workers = 2; ld.epochs = 2; ld.seed = 3; ld.shuffle_window = 2;
        if (gpufeed_loader_open(&l, ds, &ld, &err)) { CHECK_MSG(0, "loader: %s", err.message); gpufeed_dataset_close(ds); return; }
        while (gpufeed_loader_next(l, &b) == GPUFEED_OK) rows += b.num_rows;
        CHECK_MSG(rows == 2 * 20000, "unit_rows %lld: %lld rows", (long long)unit_rows[v], (long long)rows);
        gpufeed_loader_close(l);
        if (ds->dcache) for (i = 0; i < ds->dcache->used; i++) entries += ds->dcache->e[i].conv != NULL;
        if (v == 0) CHECK_MSG(entries == 0, "whole row groups as units: %d dictionaries kept in the shared cache", (int)entries);
        else CHECK_MSG(entries > 0, "row groups cut into units: no dictionary shared");
        gpufeed_dataset_close(ds);
    }
}

/* ---- issue 19: exact boundaries of the Thrift decoder's checks ----------- */

/* The bytes in an allocation of exactly n bytes (ASan sees a read past
   them), decoded by one gf__tc call chosen by `op`; the decoder's state
   after it in *t. */
enum { TB_UVAR, TB_FIELD, TB_BIN, TB_LIST, TB_SKIP_STRUCT, TB_SKIP_MAP, TB_INT };
typedef struct tb_out { uint64_t u; int type, id; uint32_t n; int64_t v; size_t left; gpufeed_result err; char msg[GPUFEED_ERROR_MAX]; } tb_out;
static tb_out tb_run(int op, const uint8_t *bytes, size_t n, int last)
{
    uint8_t *buf = (uint8_t *)malloc(n ? n : 1);
    gf__tc t;
    tb_out o;
    memset(&o, 0, sizeof o);
    if (n) memcpy(buf, bytes, n);
    gf__tc_init(&t, buf, n, 0, "T");
    switch (op) {
    case TB_UVAR: o.u = gf__tc_uvar(&t); break;
    case TB_FIELD: o.type = gf__tc_field(&t, &o.id, &last); break;
    case TB_BIN: { const uint8_t *p; gf__tc_bin(&t, 1, GF__T_BINARY, &p, &o.n); break; }
    case TB_LIST: gf__tc_list_hdr(&t, &o.type, &o.n); break;
    case TB_SKIP_STRUCT: gf__tc_skip(&t, GF__T_STRUCT, 0); break;
    case TB_SKIP_MAP: gf__tc_skip(&t, GF__T_MAP, 0); break;
    case TB_INT: o.v = gf__tc_int(&t, 1, GF__T_I32, 0, 5); break;
    }
    o.left = (size_t)(t.end - t.p);
    o.err = t.err;
    memcpy(o.msg, t.msg, sizeof o.msg);
    free(buf);
    return o;
}
#define TB_OK(o) CHECK_MSG((o).err == GPUFEED_OK, "unexpected error: %s", (o).msg)
#define TB_FAILS(o, code, needle) do { CHECK((o).err == (code)); CHECK_HAS((o).msg, needle); } while (0)

/* Each check sits on both sides of a limit: the largest value a check
   allows decodes, one more fails with the check's own message (another
   check failing later would name something else); input that ends early
   fails without a read past the bytes. */
static void test_thrift_boundaries(void)
{
    static const uint8_t v10[10] = { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01 };
    static const uint8_t v10_over[10] = { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02 };
    static const uint8_t v11[11] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00 };
    static const uint8_t cont[1] = { 0x80 };
    uint8_t b[200];
    tb_out o;
    int k;
    /* varints: 10 bytes reach bit 63; a 10th byte above 1 overflows; 11 are overlong */
    o = tb_run(TB_UVAR, v10, 10, 0); TB_OK(o); CHECK(o.u == UINT64_MAX && o.left == 0);
    o = tb_run(TB_UVAR, v10_over, 10, 0); TB_FAILS(o, GPUFEED_ERR_THRIFT, "varint overflows 64 bits");
    o = tb_run(TB_UVAR, v11, 11, 0); TB_FAILS(o, GPUFEED_ERR_THRIFT, "overlong varint");
    o = tb_run(TB_UVAR, cont, 1, 0); TB_FAILS(o, GPUFEED_ERR_THRIFT, "truncated varint");
    o = tb_run(TB_UVAR, cont, 0, 0); TB_FAILS(o, GPUFEED_ERR_THRIFT, "truncated varint");
    /* field headers: ids up to 32767 by delta and in full, types 1..12 */
    b[0] = 0x15;                                         /* delta 1, i32 */
    o = tb_run(TB_FIELD, b, 1, 32766); TB_OK(o); CHECK(o.type == GF__T_I32 && o.id == 32767);
    o = tb_run(TB_FIELD, b, 1, 32767); TB_FAILS(o, GPUFEED_ERR_THRIFT, "field id beyond 32767");
    b[0] = 0x05; b[1] = 0xFE; b[2] = 0xFF; b[3] = 0x03; /* id in full: zigzag(32767) */
    o = tb_run(TB_FIELD, b, 4, 0); TB_OK(o); CHECK(o.type == GF__T_I32 && o.id == 32767);
    b[1] = 0xFF;                                         /* zigzag(-32768) */
    o = tb_run(TB_FIELD, b, 4, 0); TB_OK(o); CHECK(o.id == -32768);
    b[1] = 0x80; b[2] = 0x80; b[3] = 0x04;              /* zigzag(32768) */
    o = tb_run(TB_FIELD, b, 4, 0); TB_FAILS(o, GPUFEED_ERR_THRIFT, "field id 32768 out of range");
    b[0] = 0x1C; o = tb_run(TB_FIELD, b, 1, 0); TB_OK(o); CHECK(o.type == GF__T_STRUCT && o.id == 1);
    b[0] = 0x1D; o = tb_run(TB_FIELD, b, 1, 0); TB_FAILS(o, GPUFEED_ERR_THRIFT, "invalid field type 13");
    o = tb_run(TB_FIELD, b, 0, 0); TB_FAILS(o, GPUFEED_ERR_THRIFT, "truncated struct (no STOP)");
    /* a binary's length: exactly the bytes left, or one more */
    b[0] = 3; b[1] = 'a'; b[2] = 'b'; b[3] = 'c';
    o = tb_run(TB_BIN, b, 4, 0); TB_OK(o); CHECK(o.n == 3 && o.left == 0);
    b[0] = 4; o = tb_run(TB_BIN, b, 4, 0); TB_FAILS(o, GPUFEED_ERR_THRIFT, "length 4 runs past the end");
    /* list headers: a count equal to the bytes left, element types 1..12 */
    b[0] = 0x33; b[1] = 1; b[2] = 2; b[3] = 3;           /* 3 x i8 */
    o = tb_run(TB_LIST, b, 4, 0); TB_OK(o); CHECK(o.n == 3 && o.type == GF__T_I8);
    o = tb_run(TB_LIST, b, 3, 0); TB_FAILS(o, GPUFEED_ERR_THRIFT, "list of 3 elements cannot fit in the 2 bytes left");
    b[0] = 0x1C; b[1] = 0;
    o = tb_run(TB_LIST, b, 2, 0); TB_OK(o); CHECK(o.n == 1 && o.type == GF__T_STRUCT);
    b[0] = 0x1D; o = tb_run(TB_LIST, b, 2, 0); TB_FAILS(o, GPUFEED_ERR_THRIFT, "invalid list element type 13");
    o = tb_run(TB_LIST, b, 0, 0); TB_FAILS(o, GPUFEED_ERR_THRIFT, "truncated list header");
    /* structs skipped: nesting of exactly GPUFEED_MAX_THRIFT_DEPTH, and one deeper */
    for (k = 0; k < 2; k++) {
        int inner = GPUFEED_MAX_THRIFT_DEPTH - 1 + k, i, n = 0;
        for (i = 0; i < inner; i++) b[n++] = 0x1C;       /* field 1: a struct */
        for (i = 0; i <= inner; i++) b[n++] = 0x00;      /* the STOPs */
        o = tb_run(TB_SKIP_STRUCT, b, (size_t)n, 0);
        if (k == 0) { TB_OK(o); CHECK(o.left == 0); }
        else TB_FAILS(o, GPUFEED_ERR_LIMIT, "nesting deeper than GPUFEED_MAX_THRIFT_DEPTH");
    }
    /* maps skipped: one i8 -> i8 entry in exactly 3 bytes (the count check
       refuses fewer than 2); key and value types 1..12 */
    b[0] = 1; b[1] = 0x33; b[2] = 7; b[3] = 8;
    o = tb_run(TB_SKIP_MAP, b, 4, 0); TB_OK(o); CHECK(o.left == 0);
    o = tb_run(TB_SKIP_MAP, b, 2, 0); TB_FAILS(o, GPUFEED_ERR_THRIFT, "map of 1 entries cannot fit");
    b[1] = 0x3C; o = tb_run(TB_SKIP_MAP, b, 4, 0); CHECK(o.err == GPUFEED_ERR_THRIFT); /* a struct value of byte 8: no STOP */
    b[1] = 0x3D; o = tb_run(TB_SKIP_MAP, b, 4, 0); TB_FAILS(o, GPUFEED_ERR_THRIFT, "invalid map types 3/13");
    b[1] = 0xD3; o = tb_run(TB_SKIP_MAP, b, 4, 0); TB_FAILS(o, GPUFEED_ERR_THRIFT, "invalid map types 13/3");
    /* integers in [lo, hi]: hi decodes, hi + 1 fails */
    b[0] = 10; o = tb_run(TB_INT, b, 1, 0); TB_OK(o); CHECK(o.v == 5);
    b[0] = 12; o = tb_run(TB_INT, b, 1, 0); TB_FAILS(o, GPUFEED_ERR_THRIFT, "field 1 value 6 out of range");
    b[0] = 0; o = tb_run(TB_INT, b, 1, 0); TB_OK(o); CHECK(o.v == 0);
    b[0] = 1; o = tb_run(TB_INT, b, 1, 0); TB_FAILS(o, GPUFEED_ERR_THRIFT, "field 1 value -1 out of range");
}

/* The memory source reads [off, off + len) of its bytes and nothing else:
   the last byte, an empty read at the end, one byte past it refused. */
static void test_mem_source_bounds(void)
{
    uint8_t *data = (uint8_t *)malloc(10), out[8];
    gf__memsrc m;
    int i;
    for (i = 0; i < 10; i++) data[i] = (uint8_t)(i + 1);
    m.data = data; m.size = 10;
    CHECK(gf__mem_read(&m, 6, out, 4) == 0 && out[0] == 7 && out[3] == 10);
    CHECK(gf__mem_read(&m, 7, out, 4) == -1);
    CHECK(gf__mem_read(&m, 0, out, 8) == 0 && out[7] == 8);
    CHECK(gf__mem_read(&m, 10, out, 0) == 0);
    CHECK(gf__mem_read(&m, 11, out, 0) == -1);
    CHECK(gf__mem_read(&m, 9, out, 2) == -1);
    CHECK(gf__mem_read(&m, UINT64_MAX, out, 1) == -1);
    free(data);
}

/* gpufeed_hash64 is XXH64 (the hashing trick and the cache's checksums
   depend on its values staying the same): the reference values of the
   xxhash package */
static void test_hash64_is_xxh64(void)
{
    static const char long_s[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    CHECK(gpufeed_hash64("", 0, 0) == 0xEF46DB3751D8E999ull);
    CHECK(gpufeed_hash64("a", 1, 0) == 0xD24EC4F1A98C6E5Bull);
    CHECK(gpufeed_hash64("abc", 3, 0) == 0x44BC2CF5AD770999ull);
    CHECK(gpufeed_hash64(long_s, sizeof long_s - 1, 0) == 0x7639D419DE614EEDull);
    CHECK(gpufeed_hash64("gpufeed", 7, 42) == 0x1B77F28B20834D5Bull);
}

/* Row-group pruning by statistics at each comparison's exact boundary
   (issue 19): tests/data/ids.parquet has 4 row groups of 5,000 rows whose
   ids run 0..4999, 5000..9999, 10000..14999, 15000..19999. A constant equal
   to a group's min or max decides whether that group can match. */
static void test_prune_boundaries(void)
{
    static const struct { gpufeed_op op; int64_t a, b; int pruned; } cases[] = {
        { GPUFEED_OP_LT, 5000, 0, 3 }, { GPUFEED_OP_LT, 5001, 0, 2 },
        { GPUFEED_OP_LE, 4999, 0, 3 }, { GPUFEED_OP_LE, 5000, 0, 2 },
        { GPUFEED_OP_GT, 14999, 0, 3 }, { GPUFEED_OP_GT, 14998, 0, 2 },
        { GPUFEED_OP_GE, 15000, 0, 3 }, { GPUFEED_OP_GE, 14999, 0, 2 },
        { GPUFEED_OP_EQ, 5000, 0, 3 }, { GPUFEED_OP_EQ, 4999, 0, 3 }, { GPUFEED_OP_EQ, 20000, 0, 4 },
        { GPUFEED_OP_BETWEEN, 4999, 5000, 2 }, { GPUFEED_OP_BETWEEN, 5000, 9999, 3 }, { GPUFEED_OP_BETWEEN, 20000, 30000, 4 },
    };
    size_t k;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        static const char *paths[] = { "tests/data/ids.parquet" };
        gpufeed_feature ft;
        gpufeed_predicate p;
        gpufeed_dataset_desc d;
        gpufeed_dataset *ds = NULL;
        gpufeed_dataset_info info;
        gpufeed_error err;
        memset(&ft, 0, sizeof ft); memset(&p, 0, sizeof p); memset(&d, 0, sizeof d);
        ft.column = "x"; ft.dtype = GPUFEED_DT_F32;
        p.column = "id"; p.op = cases[k].op;
        p.a.kind = GPUFEED_VAL_INT; p.a.i = cases[k].a;
        p.b.kind = GPUFEED_VAL_INT; p.b.i = cases[k].b;
        d.paths = paths; d.num_paths = 1; d.features = &ft; d.num_features = 1; d.where = &p; d.num_where = 1;
        if (gpufeed_dataset_open(&ds, &d, &err)) { CHECK_MSG(0, "case %d: %s", (int)k, err.message); continue; }
        gpufeed_dataset_get_info(ds, &info);
        CHECK_MSG(info.row_groups == 4 && info.row_groups_pruned == cases[k].pruned && info.num_rows == 5000 * (4 - cases[k].pruned),
                  "case %d (op %d, %lld, %lld): %d of %d row groups pruned, %lld rows; want %d pruned", (int)k, (int)cases[k].op,
                  (long long)cases[k].a, (long long)cases[k].b, (int)info.row_groups_pruned, (int)info.row_groups, (long long)info.num_rows, cases[k].pruned);
        gpufeed_dataset_close(ds);
    }
}

/* Conversions to integer dtypes at the edges of each range (issue 19):
   doubles 2^63 and -2^63 - 2^11 (the neighbours of int64's range), -2^63
   itself, 255 / 256 to u8, INT32_MAX / + 1 to i32: the SAFE cast returns
   the index of the first value that does not fit, UNSAFE clamps. */
static void test_convert_int_edges(void)
{
    gf__conv cv;
    uint64_t in[2];
    int64_t o64[2];
    int32_t o32[2];
    uint8_t o8[2];
    double d;
    memset(&cv, 0, sizeof cv);
    cv.ck = GF__CK_F64; cv.dt = GPUFEED_DT_I64;
    d = -9223372036854775808.0; memcpy(&in[0], &d, 8);
    d = 9223372036854775808.0; memcpy(&in[1], &d, 8);   /* 2^63: one past INT64_MAX */
    CHECK(gf__convert(&cv, in, o64, 1) == -1 && o64[0] == INT64_MIN);
    CHECK(gf__convert(&cv, in, o64, 2) == 1);
    cv.unsafe_cast = 1;
    CHECK(gf__convert(&cv, in, o64, 2) == -1 && o64[0] == INT64_MIN && o64[1] == INT64_MAX);
    d = -9223372036854777856.0; memcpy(&in[1], &d, 8);  /* the double below -2^63 */
    cv.unsafe_cast = 0;
    CHECK(gf__convert(&cv, in, o64, 2) == 1);
    cv.ck = GF__CK_I64; cv.dt = GPUFEED_DT_U8;
    in[0] = 255; in[1] = 256;
    CHECK(gf__convert(&cv, in, o8, 1) == -1 && o8[0] == 255);
    CHECK(gf__convert(&cv, in, o8, 2) == 1);
    in[0] = 0; in[1] = (uint64_t)(int64_t)-1;
    CHECK(gf__convert(&cv, in, o8, 2) == 1);
    cv.dt = GPUFEED_DT_I32;
    in[0] = (uint64_t)(int64_t)INT32_MAX; in[1] = (uint64_t)((int64_t)INT32_MAX + 1);
    CHECK(gf__convert(&cv, in, o32, 1) == -1 && o32[0] == INT32_MAX);
    CHECK(gf__convert(&cv, in, o32, 2) == 1);
}

/* Codec limits at their bounds (issue 19). ZSTD: a frame declaring a window
   of exactly GPUFEED_MAX_ZSTD_WINDOW is accepted, one byte more (a single-
   segment frame's content size) or the next descriptor step is a LIMIT
   error. GZIP: a stored block whose NLEN is LEN's complement inflates, one
   whose NLEN is off by one is refused. */
static void test_codec_limits(void)
{
    static const uint8_t gz[] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff,
                                  0x01, 0x05, 0x00, 0xfa, 0xff, 'h', 'e', 'l', 'l', 'o',
                                  0x86, 0xa6, 0x10, 0x36, 5, 0, 0, 0 };
    uint8_t f[16], out[8], bad[sizeof gz];
    char msg[GPUFEED_ERROR_MAX];
    gf__zhdr h;
    uint64_t fcs;
    int k;
    f[0] = 0x28; f[1] = 0xb5; f[2] = 0x2f; f[3] = 0xfd;
    for (k = 0; k < 2; k++) {                  /* single segment, 8-byte content size */
        f[4] = 0xE0;
        fcs = (uint64_t)GPUFEED_MAX_ZSTD_WINDOW + (uint64_t)k;
        memcpy(f + 5, &fcs, 8);
        memset(&h, 0, sizeof h); msg[0] = 0;
        if (k == 0) CHECK_MSG(gf__zstd_header(f, 13, &h, 0, 0, msg, sizeof msg) == GPUFEED_OK && h.window == fcs, "%s", msg);
        else { CHECK(gf__zstd_header(f, 13, &h, 0, 0, msg, sizeof msg) == GPUFEED_ERR_LIMIT); CHECK_HAS(msg, "exceeds GPUFEED_MAX_ZSTD_WINDOW"); }
    }
    for (k = 0; k < 2; k++) {                  /* a window descriptor: 2^31, then 2^31 + 2^28 */
        f[4] = 0x00; f[5] = (uint8_t)(((31 - 10) << 3) | k);
        memset(&h, 0, sizeof h); msg[0] = 0;
        if (k == 0) CHECK_MSG(gf__zstd_header(f, 6, &h, 0, 0, msg, sizeof msg) == GPUFEED_OK && h.window == (1ull << 31), "%s", msg);
        else CHECK(gf__zstd_header(f, 6, &h, 0, 0, msg, sizeof msg) == GPUFEED_ERR_LIMIT);
    }
#ifndef GPUFEED_USE_ZLIB
    msg[0] = 0;
    CHECK_MSG(gf__gzip(gz, sizeof gz, out, 5, msg, sizeof msg) == GPUFEED_OK && memcmp(out, "hello", 5) == 0, "%s", msg);
    memcpy(bad, gz, sizeof gz);
    bad[13] = 0xfb;                            /* NLEN = ~4 */
    CHECK(gf__gzip(bad, sizeof bad, out, 5, msg, sizeof msg) == GPUFEED_ERR_CODEC);
    CHECK_HAS(msg, "stored block length 5 does not match its complement");
#else
    (void)gz; (void)out; (void)bad;
#endif
}

/* An RLE run's value must fit the bit width (issue 19): 2^bw - 1 decodes,
   2^bw is corrupt (bit widths 1, 3, 12, 20) */
static void test_rle_value_fits_width(void)
{
    static const int bws[] = { 1, 3, 12, 20 };   /* 2^bw fits the run's ceil(bw / 8) bytes */
    size_t k;
    int over;
    for (k = 0; k < sizeof bws / sizeof bws[0]; k++) {
        for (over = 0; over < 2; over++) {
            int bw = bws[k], nb = (bw + 7) / 8, i;
            uint32_t v = over ? (1u << bw) : (1u << bw) - 1, out[8];
            uint8_t buf[8];
            gf__rle r;
            buf[0] = 8 << 1;                   /* an RLE run of 8 */
            for (i = 0; i < nb; i++) buf[1 + i] = (uint8_t)(v >> (8 * i));
            gf__rle_init(&r, buf, buf + 1 + nb, bw);
            if (!over) CHECK_MSG(gf__rle_get(&r, out, 8) == 8 && !r.err && out[7] == v, "bw %d value %u", bw, v);
            else CHECK_MSG(gf__rle_get(&r, out, 8) == 0 && r.err, "bw %d: value %u accepted", bw, v);
        }
    }
}

/* LZ4 block bounds at their exact limits (issue 19), input and output in
   allocations of exactly their size: a match offset equal to the bytes
   produced decodes, one more is an error (never a read before the output);
   literals exactly filling the input decode, one more than the input holds
   is "truncated" (never a read past the input). */
static void test_lz4_bounds(void)
{
    static const uint8_t ok_off[] = { 0x10, 'a', 0x01, 0x00, 0x50, 'b', 'c', 'd', 'e', 'f' };
    char msg[GPUFEED_ERROR_MAX];
    uint8_t *src, *dst;
    size_t produced = 0;
    int k;
    for (k = 0; k < 2; k++) {   /* 'a', a match of 4 at offset 1 (+ k), then 5 literals */
        src = (uint8_t *)malloc(sizeof ok_off); dst = (uint8_t *)malloc(10);
        memcpy(src, ok_off, sizeof ok_off);
        src[2] = (uint8_t)(1 + k);
        msg[0] = 0;
        if (k == 0) CHECK_MSG(gf__lz4_block(src, sizeof ok_off, dst, 10, &produced, msg, sizeof msg) == GPUFEED_OK &&
                              produced == 10 && memcmp(dst, "aaaaabcdef", 10) == 0, "%s", msg);
        else { CHECK(gf__lz4_block(src, sizeof ok_off, dst, 10, &produced, msg, sizeof msg) == GPUFEED_ERR_CODEC);
               CHECK_HAS(msg, "match offset 2 outside the 1 bytes produced"); }
        free(src); free(dst);
    }
    for (k = 0; k < 2; k++) {   /* one sequence of literals only: 5 of them, the token claiming 5 (+ k) */
        static const uint8_t lits[] = { 0x50, 'v', 'w', 'x', 'y', 'z' };
        src = (uint8_t *)malloc(sizeof lits); dst = (uint8_t *)malloc(6);
        memcpy(src, lits, sizeof lits);
        src[0] = (uint8_t)((5 + k) << 4);
        msg[0] = 0;
        if (k == 0) CHECK_MSG(gf__lz4_block(src, sizeof lits, dst, 6, &produced, msg, sizeof msg) == GPUFEED_OK &&
                              produced == 5 && memcmp(dst, "vwxyz", 5) == 0, "%s", msg);
        else { CHECK(gf__lz4_block(src, sizeof lits, dst, 6, &produced, msg, sizeof msg) == GPUFEED_ERR_CODEC);
               CHECK_HAS(msg, "lz4: block truncated at input byte 1"); }
        free(src); free(dst);
    }
}

/* A file of one INT32 column "v" (OPTIONAL when opt) in memory: row groups
   of rg_rows[g] rows, pages of page_rows rows (the values their row
   numbers); null_rg: a row group whose every value is null, with
   statistics null_count = its rows (the others: null_count 0, min, max). */
typedef struct u19_file { pqw_schema sch[2]; pqw_page pg[4][16]; pqw_buf body[4][16]; pqw_chunk ch[4]; pqw_rowgroup rg[4];
                          pqw_stats st[4]; int32_t mn[4], mx[4]; pqw_file f; pqw_buf out; } u19_file;
static void u19_build(u19_file *m, const int64_t *rg_rows, int nrg, int page_rows, int opt, int null_rg)
{
    int g;
    int64_t r0 = 0;
    memset(m, 0, sizeof *m);
    m->sch[0] = pqw_root(1);
    m->sch[1] = pqw_leaf("v", PQW_INT32, opt ? PQW_OPTIONAL : PQW_REQUIRED);
    for (g = 0; g < nrg; g++) {
        int np = 0;
        int64_t done = 0;
        while (done < rg_rows[g]) {
            int n = (int)(rg_rows[g] - done < page_rows ? rg_rows[g] - done : page_rows), k;
            pqw_buf *b = &m->body[g][np];
            uint32_t lv[4096];
            for (k = 0; k < n; k++) lv[k] = g != null_rg;
            if (opt) pqw_levels_v1(b, lv, (size_t)n, 1);
            if (g != null_rg) for (k = 0; k < n; k++) { int32_t v = (int32_t)(r0 + done + k); pqw_plain_i32(b, &v, 1); }
            m->pg[g][np] = pqw_data_page(b, n, PQW_PLAIN);
            done += n; np++;
        }
        m->mn[g] = (int32_t)r0; m->mx[g] = (int32_t)(r0 + rg_rows[g] - 1);
        memset(&m->st[g], 0, sizeof m->st[g]);
        m->st[g].null_count = pqw_set(g == null_rg ? rg_rows[g] : 0);
        if (g != null_rg) { m->st[g].min = &m->mn[g]; m->st[g].max = &m->mx[g]; m->st[g].min_len = m->st[g].max_len = 4; m->st[g].has_min = m->st[g].has_max = 1; }
        m->ch[g].pages = m->pg[g]; m->ch[g].npages = np; m->ch[g].physical = PQW_INT32; m->ch[g].path = "v"; m->ch[g].stats = &m->st[g];
        m->rg[g].chunks = &m->ch[g]; m->rg[g].nchunks = 1;
        r0 += rg_rows[g];
    }
    m->f.schema = m->sch; m->f.nschema = 2; m->f.rgs = m->rg; m->f.nrgs = nrg;
    pqw_build(&m->f, &m->out);
}
static void u19_free(u19_file *m)
{
    int g, p;
    for (g = 0; g < 4; g++) for (p = 0; p < 16; p++) pqw_free(&m->body[g][p]);
    pqw_free(&m->out);
}
static gpufeed_dataset *u19_open(u19_file *m, int64_t unit_rows, const gpufeed_predicate *where)
{
    static const char *path = "u19.parquet";
    gpufeed_feature ft;
    gpufeed_dataset_desc d;
    gpufeed_dataset *ds = NULL;
    gpufeed_error err;
    memset(&ft, 0, sizeof ft); memset(&d, 0, sizeof d);
    ft.column = "v"; ft.dtype = GPUFEED_DT_I32;
    d.paths = &path; d.num_paths = 1; d.features = &ft; d.num_features = 1; d.unit_rows = unit_rows;
    d.where = where; d.num_where = where ? 1 : 0;
    d.open_source = fn_open_source; d.source_user = &m->out;
    if (gpufeed_dataset_open(&ds, &d, &err)) { CHECK_MSG(0, "dataset: %s", err.message); return NULL; }
    return ds;
}

/* Dictionaries whose entries are already the dtype (FLOAT as f32, DOUBLE
   as f64) are used in place: the inflated page buffer becomes the
   converted dictionary, and the loader's shared cache takes that buffer
   instead of a copy; a converted dictionary's raw page buffer goes back to
   the scratch for the next column. Two scratches decode the same units in
   turn, move to the other file's chunk and back; then a 2-worker shuffled
   loader (units of one chunk come back to either worker, the shared cache
   hands them out) runs 4 epochs. Every row must equal the column reader's
   value bits, nulls as +0.0. */
typedef struct dict_row { uint64_t a, b; } dict_row;
static int dict_row_cmp(const void *x, const void *y)
{
    const dict_row *p = (const dict_row *)x, *q = (const dict_row *)y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    return p->b < q->b ? -1 : p->b > q->b;
}
/* the value bits of column col (f32 when !is_f64) of row group 0, 0 for a null */
static int64_t dict_expect(const char *path, int32_t col, int is_f64, uint64_t *out, int64_t cap)
{
    gpufeed_file *f = NULL;
    gpufeed_file_desc fd;
    gpufeed_column *c = NULL;
    gpufeed_column_desc cd;
    gpufeed_column_batch b;
    gpufeed_error err;
    int64_t n = 0, i;
    memset(&fd, 0, sizeof fd); memset(&cd, 0, sizeof cd);
    fd.path = path;
    if (gpufeed_file_open(&f, &fd, &err)) return -1;
    if (gpufeed_column_open(&c, f, 0, col, &cd, &err)) { gpufeed_file_close(f); return -1; }
    while (gpufeed_column_read(c, &b) == GPUFEED_OK)
        for (i = 0; i < b.num_rows && n < cap; i++, n++) {
            uint32_t u = 0;
            out[n] = 0;
            if (b.valid && !b.valid[i]) continue;
            if (is_f64) memcpy(&out[n], (const double *)b.values + i, 8);
            else { memcpy(&u, (const float *)b.values + i, 4); out[n] = u; }
        }
    gpufeed_column_close(c);
    gpufeed_file_close(f);
    return n;
}
static dict_row dict_row_at(const uint8_t *row)
{
    dict_row r;
    uint32_t u;
    memcpy(&u, row, 4); r.a = u;
    memcpy(&r.b, row + 4, 8);
    return r;
}
static void test_dict_in_place_shared(void)
{
    static const char *paths[] = { "tests/data/pyarrow_default.parquet", "tests/data/pyarrow_v2_snappy.parquet" };
    static const int order[][2] = { { 0, 0 }, { 1, 0 }, { 0, 1 }, { 1, 1 }, { 0, 0 }, { 1, 0 }, { 0, 1 } };
    gpufeed_feature ft[2];
    gpufeed_dataset_desc d;
    gpufeed_dataset *ds = NULL;
    gpufeed_dataset_info info;
    gpufeed_scratch *sc[2] = { NULL, NULL };
    gpufeed_loader_desc ld;
    gpufeed_loader *l = NULL;
    gpufeed_batch bt;
    gpufeed_error err;
    dict_row *want[2] = { NULL, NULL }, *all = NULL, *got = NULL;
    int64_t nwant[2] = { 0, 0 }, ngot = 0, e, i;
    int k, f;
    memset(ft, 0, sizeof ft); memset(&d, 0, sizeof d);
    ft[0].column = "f32"; ft[0].dtype = GPUFEED_DT_F32;
    ft[1].column = "f64"; ft[1].dtype = GPUFEED_DT_F64;
    d.paths = paths; d.num_paths = 2; d.features = ft; d.num_features = 2;
    if (gpufeed_dataset_open(&ds, &d, &err)) { CHECK_MSG(0, "dataset: %s", err.message); return; }
    gpufeed_dataset_get_info(ds, &info);
    CHECK(info.num_units == 2 && info.row_bytes == 12);
    for (f = 0; f < 2; f++) {
        gpufeed_file *fl = NULL;
        gpufeed_file_desc fd;
        const gpufeed_metadata *md;
        int32_t c32, c64;
        uint64_t *x, *y;
        memset(&fd, 0, sizeof fd);
        fd.path = paths[f];
        if (gpufeed_file_open(&fl, &fd, &err)) { CHECK_MSG(0, "%s: %s", paths[f], err.message); continue; }
        md = gpufeed_file_metadata(fl);
        c32 = gpufeed_file_find_column(fl, "f32"); c64 = gpufeed_file_find_column(fl, "f64");
        /* the case under test: f64 dictionary-encoded in both files, f32 in the first */
        CHECK(md->num_row_groups == 1 && c32 >= 0 && c64 >= 0 && md->row_groups[0].chunks[c64].dictionary_page_offset > 0 &&
              (f == 1 || md->row_groups[0].chunks[c32].dictionary_page_offset > 0));
        nwant[f] = md->num_rows;
        gpufeed_file_close(fl);
        x = (uint64_t *)calloc((size_t)nwant[f] + 1, 8); y = (uint64_t *)calloc((size_t)nwant[f] + 1, 8);
        want[f] = (dict_row *)calloc((size_t)nwant[f] + 1, sizeof(dict_row));
        CHECK(x && y && want[f] && dict_expect(paths[f], c32, 0, x, nwant[f]) == nwant[f] && dict_expect(paths[f], c64, 1, y, nwant[f]) == nwant[f]);
        for (i = 0; x && y && want[f] && i < nwant[f]; i++) { want[f][i].a = x[i]; want[f][i].b = y[i]; }
        free(x); free(y);
    }
    if (!want[0] || !want[1]) goto done;

    /* scratches, in turn */
    CHECK(gpufeed_scratch_open(&sc[0], ds, &err) == GPUFEED_OK && gpufeed_scratch_open(&sc[1], ds, &err) == GPUFEED_OK);
    for (k = 0; k < (int)(sizeof order / sizeof order[0]) && sc[0] && sc[1]; k++) {
        int s = order[k][0], u = order[k][1], bad = 0;
        int64_t n = -1;
        uint8_t *rows = (uint8_t *)calloc((size_t)nwant[u], 12);
        if (!rows) { CHECK(0); break; }
        CHECK_MSG(gpufeed_dataset_decode_unit(ds, sc[s], u, rows, NULL, NULL, &n) == GPUFEED_OK, "pass %d: %s", k, gpufeed_scratch_error(sc[s]));
        CHECK(n == nwant[u]);
        for (i = 0; i < nwant[u] && n == nwant[u]; i++) {
            dict_row r = dict_row_at(rows + (size_t)i * 12);
            bad += r.a != want[u][i].a || r.b != want[u][i].b;
        }
        CHECK_MSG(bad == 0, "pass %d (scratch %d, unit %d): %d rows differ from the column reader", k, s, u, bad);
        free(rows);
    }

    /* the loader: each epoch delivers every row once, whichever worker decoded it */
    all = (dict_row *)calloc((size_t)(nwant[0] + nwant[1]), sizeof(dict_row));
    got = (dict_row *)calloc((size_t)(nwant[0] + nwant[1]), sizeof(dict_row));
    if (!all || !got) { CHECK(0); goto done; }
    memcpy(all, want[0], (size_t)nwant[0] * sizeof(dict_row));
    memcpy(all + nwant[0], want[1], (size_t)nwant[1] * sizeof(dict_row));
    qsort(all, (size_t)(nwant[0] + nwant[1]), sizeof(dict_row), dict_row_cmp);
    memset(&ld, 0, sizeof ld);
    ld.batch_rows = 40; ld.workers = 2; ld.seed = 7; ld.shuffle_window = 2; ld.epochs = 4;
    if (gpufeed_loader_open(&l, ds, &ld, &err)) { CHECK_MSG(0, "loader: %s", err.message); goto done; }
    for (e = 0; e < 4; e++) {
        ngot = 0;
        while (ngot < nwant[0] + nwant[1]) {
            gpufeed_result r = gpufeed_loader_next(l, &bt);
            if (r != GPUFEED_OK) { CHECK_MSG(0, "epoch %lld: result %d", (long long)e, (int)r); goto done; }
            CHECK(bt.epoch == e && bt.row_bytes == 12);
            for (i = 0; i < bt.num_rows && ngot < nwant[0] + nwant[1]; i++) got[ngot++] = dict_row_at((const uint8_t *)bt.data + (size_t)i * 12);
        }
        qsort(got, (size_t)ngot, sizeof(dict_row), dict_row_cmp);
        CHECK_MSG(memcmp(got, all, (size_t)ngot * sizeof(dict_row)) == 0, "epoch %lld: the rows differ from the column reader's", (long long)e);
    }
    CHECK(gpufeed_loader_next(l, &bt) == GPUFEED_DONE);
done:
    gpufeed_loader_close(l);
    gpufeed_scratch_close(sc[0]); gpufeed_scratch_close(sc[1]);
    gpufeed_dataset_close(ds);
    free(want[0]); free(want[1]); free(all); free(got);
}

/* ---- streamed SNAPPY pages (gf__col_z_*) --------------------------------- */

/* A file whose large SNAPPY pages a dense reader streams through its
   window (GPUFEED_PAGE_WINDOW; the suite also runs with a 4 KiB window,
   where every page but the smallest is streamed):
     l  INT64 required, PLAIN, pages of 60000, 60000 and 30000 rows:
        r * 7919 + r % 13 (a short literal, a copy from 8 bytes back)
     d  DOUBLE optional (null when r % 13 == 5), PLAIN, two pages
     f  FLOAT required, PLAIN, one page of hashed bits (long literals)
     k  INT32 optional (~10% null), RLE_DICTIONARY over 40000 entries,
        one page of 16-bit indices
     x  DOUBLE required, PLAIN, one page repeating every 100000 bytes,
        compressed with copies from that far back (past a window's
        history: the page is decoded again whole)
   l, d, f and k compress in 64 KiB blocks as writers do. corrupt: page 1
   of l (rows 60000..119999) gets 1 a copy offset of 0 past its 300000th
   byte, 2 forty 1-byte literals after its last element, 3 its last
   element cut; 4: k's page ends in 100 bytes after its indices, the last
   copy of them with offset 0 (no index needs those bytes: the error must
   come from the decoding ahead that the indices' runs ask for). */
enum { SP_ROWS = 150000, SP_COLS = 5 };
typedef struct sp_file { pqw_schema sch[SP_COLS + 1]; pqw_page pg[SP_COLS][4]; pqw_buf body[SP_COLS][4]; pqw_chunk ch[SP_COLS]; pqw_rowgroup rg; pqw_file f; pqw_buf out; } sp_file;
static uint32_t sp_hash(int64_t r) { uint64_t x = (uint64_t)r * 0x9E3779B97F4A7C15ull; x ^= x >> 29; x *= 0xBF58476D1CE4E5B9ull; return (uint32_t)(x >> 32); }
static int sp_null(int c, int64_t r) { return c == 1 ? r % 13 == 5 : c == 3 ? sp_hash(r) % 10 == 0 : 0; }
static double sp_value(int c, int64_t r)
{
    switch (c) {
    case 0: return (double)(r * 7919 + r % 13);
    case 1: return (double)((r * 31) % 100003) / 8.0;
    case 2: { uint32_t b = (sp_hash(r) & 0x3FFFFFFFu) | 0x10000000u; float f; memcpy(&f, &b, 4); return f; } /* finite */
    case 3: return 1000.0 + 7.0 * (double)(sp_hash(r + 1) % 40000);
    default: return (double)(r % 12500) * 1.5;
    }
}
/* the byte offset of the first element of snappy stream z at or after `from`, and of its last element */
static size_t sp_element_at(const pqw_buf *z, size_t from, int want_copy, size_t *last)
{
    size_t hdr = 0, at = 0, found = 0;
    uint64_t ul = 0;
    const uint8_t *p, *e = z->p + z->n;
    gf__snappy_length(z->p, z->n, &ul, &hdr);
    for (p = z->p + hdr; p < e;) {
        unsigned tag = *p;
        at = (size_t)(p - z->p);
        if (!found && at >= from && (!want_copy || (tag & 3) != 0)) found = at;
        p++;
        if ((tag & 3) == 0) {
            size_t len = (tag >> 2) + 1;
            if (len > 60) { size_t nb = len - 60, j; len = 0; for (j = 0; j < nb; j++) len |= (size_t)p[j] << (8 * j); len++; p += nb; }
            p += len;
        } else p += (tag & 3) == 1 ? 1 : (tag & 3) == 2 ? 2 : 4;
    }
    *last = at;
    return found;
}
static void sp_build(sp_file *m, int corrupt)
{
    static const char *const names[SP_COLS] = { "l", "d", "f", "k", "x" };
    static const int32_t types[SP_COLS] = { PQW_INT64, PQW_DOUBLE, PQW_FLOAT, PQW_INT32, PQW_DOUBLE };
    static const int32_t rows[SP_COLS][4] = { { 60000, 60000, 30000, 0 }, { 75000, 75000, 0, 0 }, { SP_ROWS, 0, 0, 0 }, { SP_ROWS, 0, 0, 0 }, { SP_ROWS, 0, 0, 0 } };
    int c, p;
    memset(m, 0, sizeof *m);
    m->sch[0] = pqw_root(SP_COLS);
    for (c = 0; c < SP_COLS; c++) {
        int64_t r0 = 0;
        int np = 0;
        m->sch[c + 1] = pqw_leaf(names[c], types[c], c == 1 || c == 3 ? PQW_OPTIONAL : PQW_REQUIRED);
        if (c == 3) { /* the dictionary page */
            pqw_buf raw = {0};
            int32_t i;
            for (i = 0; i < 40000; i++) { int32_t v = 1000 + 7 * i; pqw_plain_i32(&raw, &v, 1); }
            pqw_snappy_compress_blocks(&m->body[c][0], raw.p, raw.n);
            m->pg[c][0] = pqw_dict_page(&m->body[c][0], 40000);
            m->pg[c][0].raw_len = raw.n;
            pqw_free(&raw);
            np = 1;
        }
        for (p = 0; p < 3 && rows[c][p]; p++, np++) {
            const int32_t n = rows[c][p];
            uint32_t *lv = (uint32_t *)calloc((size_t)n, sizeof *lv), *idx = (uint32_t *)calloc((size_t)n, sizeof *idx);
            pqw_buf raw = {0};
            uint32_t nn = 0;
            int32_t i;
            for (i = 0; i < n; i++) {
                int64_t r = r0 + i;
                double v = sp_value(c, r);
                lv[i] = (uint32_t)!sp_null(c, r);
                if (!lv[i]) continue;
                if (c == 3) { idx[nn++] = (uint32_t)((v - 1000.0) / 7.0); continue; }
                if (types[c] == PQW_INT64) { int64_t x = (int64_t)v; pqw_plain_i64(&raw, &x, 1); }
                else if (types[c] == PQW_FLOAT) { float x = (float)v; pqw_plain_float(&raw, &x, 1); }
                else pqw_plain_double(&raw, &v, 1);
            }
            {
                pqw_buf body = {0};
                if (c == 1 || c == 3) pqw_levels_v1(&body, lv, (size_t)n, 1);
                if (c == 3) pqw_dict_indices(&body, idx, nn, 16);
                if (c == 3 && corrupt == 4) pqw_fill(&body, 0, 100); /* bytes after the indices (as some writers leave) */
                pqw_append(&body, &raw);
                if (c == 4) pqw_snappy_compress(&m->body[c][np], body.p, body.n);
                else pqw_snappy_compress_blocks(&m->body[c][np], body.p, body.n);
                if (c == 3 && corrupt == 4) { /* the padding's last copy: offset 0 */
                    pqw_buf *z = &m->body[c][np];
                    size_t last, at = sp_element_at(z, z->n - 12, 1, &last);
                    if (at && (z->p[at] & 3) == 1) { z->p[at] &= 0x1F; z->p[at + 1] = 0; }
                    else if (at) memset(z->p + at + 1, 0, (z->p[at] & 3) == 2 ? 2 : 4);
                }
                if (c == 0 && p == 1 && corrupt && corrupt < 4) {
                    pqw_buf *z = &m->body[c][np];
                    size_t last, at = sp_element_at(z, 300000, corrupt == 1, &last);
                    if (corrupt == 1) { /* the copy's offset: 0 */
                        if ((z->p[at] & 3) == 1) { z->p[at] &= 0x1F; z->p[at + 1] = 0; }
                        else memset(z->p + at + 1, 0, (z->p[at] & 3) == 2 ? 2 : 4);
                    } else if (corrupt == 2) { /* 1-byte literals after the end: past where the fast loop stops */
                        int j;
                        for (j = 0; j < 40; j++) { pqw_u8(z, 0); pqw_u8(z, (unsigned)('A' + j % 26)); }
                    }
                    else z->n = last;
                }
                m->pg[c][np] = pqw_data_page(&m->body[c][np], n, c == 3 ? PQW_RLE_DICTIONARY : PQW_PLAIN);
                m->pg[c][np].raw_len = body.n;
                pqw_free(&body);
            }
            pqw_free(&raw);
            free(lv); free(idx);
            r0 += n;
        }
        m->ch[c].pages = m->pg[c]; m->ch[c].npages = np; m->ch[c].physical = types[c]; m->ch[c].path = names[c];
        m->ch[c].codec = PQW_SNAPPY;
    }
    m->rg.chunks = m->ch; m->rg.nchunks = SP_COLS;
    m->f.schema = m->sch; m->f.nschema = SP_COLS + 1; m->f.rgs = &m->rg; m->f.nrgs = 1;
    pqw_build(&m->f, &m->out);
}
static void sp_free(sp_file *m)
{
    int c, p;
    for (c = 0; c < SP_COLS; c++) for (p = 0; p < 4; p++) pqw_free(&m->body[c][p]);
    pqw_free(&m->out);
}
static gpufeed_dataset *sp_open_from(int (*open_source)(void *, const char *, gpufeed_source *, char *, size_t, char *, size_t), void *user,
                                     int64_t unit_rows)
{
    static const char *path = "stream.parquet";
    static const char *const names[SP_COLS] = { "l", "d", "f", "k", "x" };
    gpufeed_feature ft[SP_COLS];
    gpufeed_dataset_desc dd;
    gpufeed_dataset *ds = NULL;
    gpufeed_error err;
    int c;
    memset(ft, 0, sizeof ft);
    for (c = 0; c < SP_COLS; c++) { ft[c].column = names[c]; ft[c].dtype = GPUFEED_DT_F64; ft[c].validity = 1; }
    memset(&dd, 0, sizeof dd);
    dd.paths = &path; dd.num_paths = 1; dd.features = ft; dd.num_features = SP_COLS;
    dd.unit_rows = unit_rows;
    dd.open_source = open_source; dd.source_user = user;
    if (gpufeed_dataset_open(&ds, &dd, &err)) { CHECK_MSG(0, "dataset: %s", err.message); return NULL; }
    return ds;
}
/* the file from memory, through fn_open_source */
static gpufeed_dataset *sp_open(sp_file *m, int64_t unit_rows) { return sp_open_from(fn_open_source, &m->out, unit_rows); }
/* rows [r0, r0 + n) of a row-major batch (5 x f64) and its masks against the expected values */
static int64_t sp_check_rows(const uint8_t *data, uint8_t *const *valid, int64_t r0, int64_t n, const char *what)
{
    int64_t i, bad = 0;
    int c;
    for (i = 0; i < n; i++)
        for (c = 0; c < SP_COLS; c++) {
            double got;
            int isnull = sp_null(c, r0 + i);
            memcpy(&got, data + (size_t)i * 8 * SP_COLS + (size_t)c * 8, 8);
            if (valid[c][i] != !isnull || (!isnull && got != sp_value(c, r0 + i))) {
                if (bad++ < 3) CHECK_MSG(0, "%s: row %lld column %d: %g (valid %d), want %g (valid %d)", what, (long long)(r0 + i), c, got, valid[c][i],
                                         sp_value(c, r0 + i), !isnull);
            }
        }
    return bad;
}
static void test_streamed_pages(void)
{
    sp_file *m = (sp_file *)calloc(1, sizeof *m);
    gpufeed_dataset *ds;
    gpufeed_error err;
    if (!m) { CHECK(0); return; }
    sp_build(m, 0);

    /* the batch reader: pages streamed as its tiles reach them */
    if ((ds = sp_open(m, 0)) != NULL) {
        gpufeed_reader *rd = NULL;
        gpufeed_reader_desc rdd;
        gpufeed_batch b;
        gpufeed_result r;
        int64_t rows = 0, bad = 0;
        memset(&rdd, 0, sizeof rdd); rdd.batch_rows = 4096;
        if (gpufeed_reader_open(&rd, ds, &rdd, &err) == GPUFEED_OK) {
            while ((r = gpufeed_reader_next(rd, &b)) == GPUFEED_OK) {
                bad += sp_check_rows((const uint8_t *)b.data, b.valid, rows, b.num_rows, "reader");
                rows += b.num_rows;
            }
            CHECK_MSG(r == GPUFEED_DONE, "reader: %s", gpufeed_reader_error(rd));
            CHECK(rows == SP_ROWS && bad == 0);
            gpufeed_reader_close(rd);
        } else CHECK_MSG(0, "reader: %s", err.message);
        gpufeed_dataset_close(ds);
    }

    /* units out of order (cut at some column's page boundary, so inside
       the others' pages: skipped to, then streamed on), one scratch */
    if ((ds = sp_open(m, 7777)) != NULL) {
        gpufeed_scratch *sc = NULL;
        gpufeed_dataset_info info;
        uint8_t *rows = (uint8_t *)malloc((size_t)SP_ROWS * 8 * SP_COLS), *vbuf = (uint8_t *)malloc((size_t)SP_ROWS * SP_COLS);
        uint8_t *vm[SP_COLS];
        int64_t k, bad = 0, seen = 0;
        int c;
        gpufeed_dataset_get_info(ds, &info);
        for (c = 0; c < SP_COLS; c++) vm[c] = vbuf + (size_t)c * SP_ROWS;
        CHECK(info.num_units >= 3);
        if (rows && vbuf && gpufeed_scratch_open(&sc, ds, &err) == GPUFEED_OK) {
            for (k = 0; k < info.num_units; k++) {
                int64_t u = (k * 7) % info.num_units, n = 0;
                const gpufeed_unit *un = gpufeed_dataset_unit(ds, u);
                if (gpufeed_dataset_decode_unit(ds, sc, u, rows, NULL, vm, &n)) { CHECK_MSG(0, "unit %lld: %s", (long long)u, gpufeed_scratch_error(sc)); break; }
                CHECK(n == un->num_rows);
                bad += sp_check_rows(rows, vm, un->first_row, n, "unit");
                seen += n;
            }
            CHECK(seen == SP_ROWS && bad == 0);
            gpufeed_scratch_close(sc);
        } else CHECK(0);
        free(rows); free(vbuf);
        gpufeed_dataset_close(ds);
    }
    sp_free(m);

    /* a corrupt stream: the dense reader stops with the codec's message for
       the same page and input byte as the whole-page column reader */
    {
        int corrupt;
        for (corrupt = 1; corrupt <= 4; corrupt++) {
            const int32_t col = corrupt == 4 ? 3 : 0; /* 4: the dictionary indices' page of k */
            gpufeed_file_desc fd;
            gpufeed_file *f = NULL;
            gpufeed_column *colr = NULL;
            gpufeed_column_batch cb;
            gpufeed_result r = GPUFEED_OK;
            char whole[GPUFEED_ERROR_MAX] = "", streamed[GPUFEED_ERROR_MAX] = "";
            sp_build(m, corrupt);
            memset(&fd, 0, sizeof fd);
            fd.data = m->out.p; fd.data_size = m->out.n; fd.name = "stream.parquet";
            if (gpufeed_file_open(&f, &fd, &err) == GPUFEED_OK && gpufeed_column_open(&colr, f, 0, col, NULL, &err) == GPUFEED_OK) {
                while ((r = gpufeed_column_read(colr, &cb)) == GPUFEED_OK) {}
                snprintf(whole, sizeof whole, "%s", gpufeed_column_error(colr));
            }
            CHECK_MSG(r < 0, "corruption %d: the column reader read the page", corrupt);
            gpufeed_column_close(colr);
            gpufeed_file_close(f);
            if ((ds = sp_open(m, 0)) != NULL) {
                gpufeed_reader *rd = NULL;
                gpufeed_reader_desc rdd;
                gpufeed_batch b;
                memset(&rdd, 0, sizeof rdd); rdd.batch_rows = 4096;
                if (gpufeed_reader_open(&rd, ds, &rdd, &err) == GPUFEED_OK) {
                    while ((r = gpufeed_reader_next(rd, &b)) == GPUFEED_OK) {}
                    snprintf(streamed, sizeof streamed, "%s", gpufeed_reader_error(rd));
                    gpufeed_reader_close(rd);
                }
                gpufeed_dataset_close(ds);
            }
            CHECK_MSG(r < 0, "corruption %d: the dense reader read the page", corrupt);
            CHECK_MSG(strstr(whole, "snappy: ") && strstr(streamed, strstr(whole, "snappy: ")) &&
                      strstr(streamed, corrupt == 4 ? "column 'k', page 1" : "column 'l', page 1"),
                      "corruption %d: whole page \"%s\", streamed \"%s\"", corrupt, whole, streamed);
            sp_free(m);
        }
    }
    free(m);
}

/* A file read through read_at (not mapped): a dense reader reads a
   streamed page's compressed bytes, and a SNAPPY dictionary page's, a
   piece at a time as it decodes them (gf__col_z_input), never the whole
   page at once. The source counts the bytes and the reads larger than a
   piece and a header's read, and can fail every read past fail_at. */
typedef struct sp_src { const pqw_buf *b; uint64_t total, fail_at; int big; } sp_src;
static int sp_read_at(void *ctx, uint64_t off, void *buf, size_t len)
{
    sp_src *s = (sp_src *)ctx;
    if (off > s->b->n || len > s->b->n - off || (s->fail_at && off + len > s->fail_at)) return -1;
    memcpy(buf, s->b->p + off, len);
    s->total += len;
    s->big += len > 65536 + 4096;
    return 0;
}
static int sp_open_source(void *user, const char *path, gpufeed_source *src, char *identity, size_t identity_cap, char *why, size_t why_cap)
{
    (void)why; (void)why_cap;
    memset(src, 0, sizeof *src);
    src->read_at = sp_read_at; src->ctx = user; src->size = ((sp_src *)user)->b->n;
    snprintf(identity, identity_cap, "counted:%s", path);
    return 0;
}
static void test_streamed_pieces(void)
{
    sp_file *m = (sp_file *)calloc(1, sizeof *m);
    int fail;
    if (!m) { CHECK(0); return; }
    sp_build(m, 0);
    for (fail = 0; fail < 2; fail++) {
        sp_src src;
        gpufeed_dataset *ds;
        gpufeed_reader *rd = NULL;
        gpufeed_reader_desc rdd;
        gpufeed_batch b;
        gpufeed_error err;
        gpufeed_result r = GPUFEED_OK;
        int64_t rows = 0, bad = 0;
        memset(&src, 0, sizeof src);
        src.b = &m->out;
        if ((ds = sp_open_from(sp_open_source, &src, 0)) == NULL) break;
        src.total = 0;
        src.big = 0;
        if (fail) src.fail_at = m->out.n / 2; /* inside some column's page: a piece's read fails */
        memset(&rdd, 0, sizeof rdd); rdd.batch_rows = 4096;
        if (gpufeed_reader_open(&rd, ds, &rdd, &err) == GPUFEED_OK) {
            while ((r = gpufeed_reader_next(rd, &b)) == GPUFEED_OK) {
                bad += sp_check_rows((const uint8_t *)b.data, b.valid, rows, b.num_rows, "pieces");
                rows += b.num_rows;
            }
            if (!fail) {
                CHECK_MSG(r == GPUFEED_DONE, "pieces: %s", gpufeed_reader_error(rd));
                CHECK(rows == SP_ROWS && bad == 0);
                /* every byte read once (a page's first bytes came with its header's read), but x's
                   first piece: its far copies decode the page again whole (the one large read).
                   A window smaller than a SNAPPY block keeps less history, and more pages go whole. */
                CHECK_MSG(src.big == 1 || GPUFEED_PAGE_WINDOW < 2 * 65536, "%d reads larger than a piece", src.big);
                CHECK_MSG((src.total <= m->out.n + 65536 || GPUFEED_PAGE_WINDOW < 2 * 65536) && src.total >= m->out.n - 4096,
                          "%llu bytes read of a %llu-byte file (x's page %llu)", (unsigned long long)src.total, (unsigned long long)m->out.n,
                          (unsigned long long)m->body[4][0].n);
            } else {
                CHECK_MSG(r == GPUFEED_ERR_IO && strstr(gpufeed_reader_error(rd), "read of ") && strstr(gpufeed_reader_error(rd), "failed"),
                          "a failing read: %d \"%s\"", (int)r, gpufeed_reader_error(rd));
                CHECK(bad == 0 && rows < SP_ROWS);
            }
            gpufeed_reader_close(rd);
        } else CHECK_MSG(0, "reader: %s", err.message);
        gpufeed_dataset_close(ds);
    }
    sp_free(m);
    free(m);
}

/* A unit that starts inside a dictionary-encoded page skips the page's
   first rows: their indices are checked, not gathered (issue 13). Column
   v: one page of 2,000 indices into 10 entries; column w: PLAIN pages of
   1,000 rows, so units of 1,000 rows are cut at w's page boundary, inside
   v's page. An index of 12 at row 5, which unit 1 skips, is the same
   clear error as when unit 0 reads it; without it unit 1 holds rows
   1,000..1,999. */
/* A file of one row group with two required leaves (sch[1], sch[2], from
   pqw_leaf) whose pages are pg0[n0] and pg1[n1], built into *out and
   opened through fn_open_source as a dataset of both columns as dt. */
static gpufeed_result pqw2_dataset(pqw_schema *sch, pqw_page *pg0, int n0, pqw_page *pg1, int n1, pqw_chunk *ch, pqw_rowgroup *rg,
                                   pqw_file *f, pqw_buf *out, const char **path, gpufeed_dtype dt, int64_t unit_rows,
                                   gpufeed_dataset **ds, gpufeed_error *err)
{
    gpufeed_feature ft[2];
    gpufeed_dataset_desc d;
    int k;
    ch[0].pages = pg0; ch[0].npages = n0;
    ch[1].pages = pg1; ch[1].npages = n1;
    for (k = 0; k < 2; k++) { ch[k].physical = (int32_t)sch[k + 1].type.v; ch[k].path = sch[k + 1].name; }
    rg->chunks = ch; rg->nchunks = 2;
    f->schema = sch; f->nschema = 3; f->rgs = rg; f->nrgs = 1;
    pqw_build(f, out);
    memset(ft, 0, sizeof ft); memset(&d, 0, sizeof d);
    for (k = 0; k < 2; k++) { ft[k].column = sch[k + 1].name; ft[k].dtype = dt; }
    d.paths = path; d.num_paths = 1; d.features = ft; d.num_features = 2; d.unit_rows = unit_rows;
    d.open_source = fn_open_source; d.source_user = out;
    return gpufeed_dataset_open(ds, &d, err);
}

typedef struct dskip_file { pqw_schema sch[3]; pqw_page pg[2][2]; pqw_buf body[2][2]; pqw_chunk ch[2]; pqw_rowgroup rg[1]; pqw_file f; pqw_buf out; } dskip_file;
static void dskip_free(dskip_file *m)
{
    int c, p;
    for (c = 0; c < 2; c++) for (p = 0; p < 2; p++) pqw_free(&m->body[c][p]);
    pqw_free(&m->out);
}
static void test_dict_skip_bad_index(void)
{
    static const char *path = "dskip.parquet";
    dskip_file *m = (dskip_file *)calloc(1, sizeof *m);
    uint32_t *idx = (uint32_t *)calloc(2000, sizeof(uint32_t));
    int32_t *buf = (int32_t *)calloc(2 * 2000, sizeof(int32_t)), *wv = (int32_t *)calloc(1000, sizeof(int32_t));
    int32_t dv[10];
    int bad, u, i, p;
    if (!m || !idx || !buf || !wv) { CHECK(0); free(m); free(idx); free(buf); free(wv); return; }
    for (i = 0; i < 10; i++) dv[i] = 100 + i;
    for (bad = 0; bad < 2; bad++) {
        gpufeed_dataset *ds = NULL;
        gpufeed_dataset_info info;
        gpufeed_error err;
        memset(m, 0, sizeof *m);
        m->sch[0] = pqw_root(2);
        m->sch[1] = pqw_leaf("v", PQW_INT32, PQW_REQUIRED);
        m->sch[2] = pqw_leaf("w", PQW_INT32, PQW_REQUIRED);
        pqw_plain_i32(&m->body[0][0], dv, 10);
        m->pg[0][0] = pqw_dict_page(&m->body[0][0], 10);
        for (i = 0; i < 2000; i++) idx[i] = (uint32_t)(i % 10);
        if (bad) idx[5] = 12;
        pqw_dict_indices(&m->body[0][1], idx, 2000, 4);
        m->pg[0][1] = pqw_data_page(&m->body[0][1], 2000, PQW_RLE_DICTIONARY);
        for (p = 0; p < 2; p++) {
            for (i = 0; i < 1000; i++) wv[i] = 1000 * p + i;
            pqw_plain_i32(&m->body[1][p], wv, 1000);
            m->pg[1][p] = pqw_data_page(&m->body[1][p], 1000, PQW_PLAIN);
        }
        if (pqw2_dataset(m->sch, m->pg[0], 2, m->pg[1], 2, m->ch, m->rg, &m->f, &m->out, &path, GPUFEED_DT_I32, 1000, &ds, &err)) { CHECK_MSG(0, "dataset: %s", err.message); dskip_free(m); break; }
        gpufeed_dataset_get_info(ds, &info);
        CHECK_MSG(info.num_units == 2, "%lld units, want 2 (cut inside v's page)", (long long)info.num_units);
        for (u = 1; u >= 0 && info.num_units == 2; u--) { /* unit 1 first: a fresh scratch skips v's rows 0..999 */
            gpufeed_scratch *sc = NULL;
            gpufeed_result r;
            int64_t n = 0;
            if (gpufeed_scratch_open(&sc, ds, &err)) { CHECK_MSG(0, "scratch: %s", err.message); break; }
            r = gpufeed_dataset_decode_unit(ds, sc, u, buf, NULL, NULL, &n);
            if (bad) {
                CHECK_MSG(r == GPUFEED_ERR_DICTIONARY, "unit %d: result %d (%s), want a dictionary error", u, (int)r, gpufeed_scratch_error(sc));
                CHECK_HAS(gpufeed_scratch_error(sc), "dictionary index 12 out of range");
            } else {
                int wrong = 0;
                CHECK_MSG(r == GPUFEED_OK && n == 1000, "unit %d: result %d, %lld rows: %s", u, (int)r, (long long)n, gpufeed_scratch_error(sc));
                for (i = 0; i < 1000 && r == GPUFEED_OK; i++)
                    wrong += buf[2 * i] != 100 + (1000 * u + i) % 10 || buf[2 * i + 1] != 1000 * u + i;
                CHECK_MSG(wrong == 0, "unit %d: %d rows wrong", u, wrong);
            }
            gpufeed_scratch_close(sc);
        }
        {   /* a loader's worker (dictionaries shared): unit 1 after unit 0
               takes v's converted dictionary from the dataset's cache, for
               the rows it skips too, so it reads the dictionary page no more;
               the skipped indices are still checked against its size */
            gpufeed_scratch *s0 = NULL, *s1 = NULL;
            uint64_t b0, shared_bytes, own_bytes;
            int64_t n = 0;
            gpufeed_result r;
            if (gpufeed_scratch_open(&s0, ds, &err) || gpufeed_scratch_open(&s1, ds, &err)) CHECK_MSG(0, "scratch: %s", err.message);
            else {
                gf__scratch_share(s0); gf__scratch_share(s1);
                (void)gpufeed_dataset_decode_unit(ds, s0, 0, buf, NULL, NULL, &n);
                b0 = gpufeed_dataset_bytes_read(ds);
                r = gpufeed_dataset_decode_unit(ds, s1, 1, buf, NULL, NULL, &n);
                shared_bytes = gpufeed_dataset_bytes_read(ds) - b0;
                if (bad) {
                    CHECK_MSG(r == GPUFEED_ERR_DICTIONARY, "shared: result %d (%s), want a dictionary error", (int)r, gpufeed_scratch_error(s1));
                    CHECK_HAS(gpufeed_scratch_error(s1), "dictionary index 12 out of range (dictionary has 10 entries)");
                } else {
                    int wrong = 0;
                    CHECK_MSG(r == GPUFEED_OK && n == 1000, "shared: result %d, %lld rows: %s", (int)r, (long long)n, gpufeed_scratch_error(s1));
                    for (i = 0; i < 1000 && r == GPUFEED_OK; i++) wrong += buf[2 * i] != 100 + (1000 + i) % 10 || buf[2 * i + 1] != 1000 + i;
                    CHECK_MSG(wrong == 0, "shared: %d rows wrong", wrong);
                    gpufeed_scratch_close(s1); s1 = NULL;
                    if (gpufeed_scratch_open(&s1, ds, &err)) CHECK_MSG(0, "scratch: %s", err.message);
                    else {
                        b0 = gpufeed_dataset_bytes_read(ds);
                        r = gpufeed_dataset_decode_unit(ds, s1, 1, buf, NULL, NULL, &n); /* not shared: reads the dictionary page */
                        own_bytes = gpufeed_dataset_bytes_read(ds) - b0;
                        CHECK(r == GPUFEED_OK && n == 1000);
                        CHECK_MSG(shared_bytes + m->pg[0][0].body_len <= own_bytes, "unit 1 read %llu bytes with the shared dictionary, %llu without",
                                  (unsigned long long)shared_bytes, (unsigned long long)own_bytes);
                    }
                }
            }
            gpufeed_scratch_close(s0); gpufeed_scratch_close(s1);
        }
        gpufeed_dataset_close(ds);
        dskip_free(m);
    }
    free(m); free(idx); free(buf); free(wv);
}

/* Units are not cut through large pages (issue 13: every page a cut
   straddles is read and decompressed up to the cut by two units; on a
   file of 1 MiB pages in 262,144-row row groups that cost a third of an
   epoch). One row group of 20,000 rows, unit_rows 5,000; column b: pages
   of 1,000 rows (a candidate cut every 1,000), column a (INT64) in pages
   of `apages` rows. a in one 160 KB page: every cut near 5,000 goes
   through it, so the row group stays one unit (within 4 unit_rows); a in
   pages of 15,000 + 5,000: the cut goes to a's boundary at 15,000; a in
   pages of 5,000: cuts every 5,000 as before. And no short last unit:
   unit_rows 8,000, a in pages of 9,000 + 10,000 + 1,000: after the cut
   at 9,000 the free cut at 19,000 would leave 1,000 rows alone, every
   other one goes through a's 80 KB page, so [9,000, 20,000) is one unit.
   Every unit decodes its rows, each by a fresh scratch. */
typedef struct bigpg_file { pqw_schema sch[3]; pqw_page pg[2][20]; pqw_buf body[2][20]; pqw_chunk ch[2]; pqw_rowgroup rg[1]; pqw_file f; pqw_buf out; } bigpg_file;
static void test_plan_big_pages(void)
{
    static const char *path = "bigpages.parquet";
    static const int32_t apages[4][5] = { { 20000 }, { 15000, 5000 }, { 5000, 5000, 5000, 5000 }, { 9000, 10000, 1000 } };
    static const int64_t want_first[4][5] = { { 0 }, { 0, 15000 }, { 0, 5000, 10000, 15000 }, { 0, 9000 } };
    static const int64_t want_n[4] = { 1, 2, 4, 2 };
    bigpg_file *m = (bigpg_file *)calloc(1, sizeof *m);
    int64_t *av = (int64_t *)calloc(20000, sizeof(int64_t)), *buf = (int64_t *)calloc(20000, 2 * sizeof(int64_t));
    int32_t bv[1000];
    int k, p, i;
    if (!m || !av || !buf) { CHECK(0); free(m); free(av); free(buf); return; }
    for (i = 0; i < 20000; i++) av[i] = 3 * (int64_t)i;
    for (k = 0; k < 4; k++) {
        gpufeed_dataset *ds = NULL;
        gpufeed_dataset_info info;
        gpufeed_error err;
        int32_t na = 0, at = 0;
        int64_t u;
        memset(m, 0, sizeof *m);
        m->sch[0] = pqw_root(2);
        m->sch[1] = pqw_leaf("a", PQW_INT64, PQW_REQUIRED);
        m->sch[2] = pqw_leaf("b", PQW_INT32, PQW_REQUIRED);
        for (p = 0; p < 5 && apages[k][p]; p++) {
            pqw_plain_i64(&m->body[0][p], av + at, (size_t)apages[k][p]);
            m->pg[0][p] = pqw_data_page(&m->body[0][p], apages[k][p], PQW_PLAIN);
            at += apages[k][p];
            na++;
        }
        for (p = 0; p < 20; p++) {
            for (i = 0; i < 1000; i++) bv[i] = 1000 * p + i;
            pqw_plain_i32(&m->body[1][p], bv, 1000);
            m->pg[1][p] = pqw_data_page(&m->body[1][p], 1000, PQW_PLAIN);
        }
        if (pqw2_dataset(m->sch, m->pg[0], na, m->pg[1], 20, m->ch, m->rg, &m->f, &m->out, &path, GPUFEED_DT_I64, k == 3 ? 8000 : 5000, &ds, &err)) CHECK_MSG(0, "case %d: dataset: %s", k, err.message);
        else {
            gpufeed_dataset_get_info(ds, &info);
            CHECK_MSG(info.num_units == want_n[k], "case %d: %lld units, want %lld", k, (long long)info.num_units, (long long)want_n[k]);
            for (u = 0; u < info.num_units && info.num_units == want_n[k]; u++) {
                const gpufeed_unit *un = gpufeed_dataset_unit(ds, u);
                gpufeed_scratch *sc = NULL;
                int64_t n = 0, r0 = un->first_row, wrong = 0;
                gpufeed_result r;
                CHECK_MSG(r0 == want_first[k][u], "case %d unit %lld: first row %lld, want %lld", k, (long long)u, (long long)r0, (long long)want_first[k][u]);
                if (gpufeed_scratch_open(&sc, ds, &err)) { CHECK_MSG(0, "scratch: %s", err.message); break; }
                r = gpufeed_dataset_decode_unit(ds, sc, u, buf, NULL, NULL, &n);
                CHECK_MSG(r == GPUFEED_OK && n == un->num_rows, "case %d unit %lld: result %d, %lld rows: %s", k, (long long)u, (int)r, (long long)n,
                          gpufeed_scratch_error(sc));
                for (i = 0; r == GPUFEED_OK && i < n; i++) wrong += buf[2 * i] != 3 * (r0 + i) || buf[2 * i + 1] != r0 + i;
                CHECK_MSG(wrong == 0, "case %d unit %lld: %lld rows wrong", k, (long long)u, (long long)wrong);
                gpufeed_scratch_close(sc);
            }
            gpufeed_dataset_close(ds);
        }
        for (p = 0; p < 20; p++) { pqw_free(&m->body[0][p]); pqw_free(&m->body[1][p]); }
        pqw_free(&m->out);
    }
    free(m); free(av); free(buf);
}

/* A scratch lets go of mapped file bytes in batches (issue 13: a call per
   column and unit made the kernel flush the other workers' TLBs about a
   thousand times an epoch). The queue itself, on an anonymous private
   mapping standing in for the file: MADV_DONTNEED zeroes such pages, so
   which pages went shows exactly what a flush let go. */
#ifndef MAP_ANONYMOUS
#define MAP_ANONYMOUS 0x20 /* hidden by strict C99 headers; Linux's value on x86-64 and aarch64 */
#endif
static int rel_zero(const uint8_t *p, uint64_t ps, int64_t page) { return p[(size_t)page * ps] == 0 && p[(size_t)(page + 1) * ps - 1] == 0; }
static int64_t rel_runs(const struct gf__relq *q, uint64_t *lo, uint64_t *hi) /* runs of touching ranges, and their hull */
{
    int64_t runs = 0, i, j;
    *lo = UINT64_MAX; *hi = 0;
    for (i = 0; i < q->n; i++) {
        if (q->r[i].lo < *lo) *lo = q->r[i].lo;
        if (q->r[i].hi > *hi) *hi = q->r[i].hi;
    }
    /* count ranges whose start no other range reaches: each begins a run */
    for (i = 0; i < q->n; i++) {
        int reached = 0;
        for (j = 0; j < q->n && !reached; j++)
            reached = j != i && q->r[j].f == q->r[i].f && q->r[j].lo < q->r[i].lo && q->r[j].hi >= q->r[i].lo;
        runs += !reached;
    }
    return runs;
}
/* The window's unit table (gf__wtable / gf__wunit, the shuffled gather's
   look-up of the unit holding a row) against a linear search: even units,
   a short last unit, a short unit inside, one unit; the cases it must turn
   down (an empty unit, more buckets than GF__WT_MAX) leave the table as it
   was, so the caller falls back to the binary search. */
/* The ring of unit slots and the workers' claims (gf__slot_of,
   gf__decode_step's claim): any RS consecutive stream positions use RS
   different slots, position g + RS the slot of g, each slot one of a
   worker's D; a worker claims the next position only while its slot is
   free (below dtail + RS), never past the stream's end, and a claim moves
   dnext on by one. */
static void test_unit_ring(void)
{
    static const int32_t cases[][2] = { {1, 2}, {2, 2}, {3, 2}, {2, 5}, {4, 3}, {8, 1} }; /* workers N, slots each D */
    size_t c;
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int32_t N = cases[c][0], D = cases[c][1];
        gpufeed_loader *l = (gpufeed_loader *)calloc(1, sizeof *l);
        gf__uslot **seen;
        int64_t g, h, RS = (int64_t)N * D;
        int32_t j, bad = 0;
        if (!l || !(l->w = (gf__worker *)calloc((size_t)N, sizeof(gf__worker))) || !(seen = (gf__uslot **)calloc((size_t)RS, sizeof *seen))) { CHECK(0); return; }
        l->N = N; l->D = D; l->RS = RS;
        for (j = 0; j < N; j++) {
            l->w[j].ring.depth = D;
            l->w[j].ring.slot = (gf__uslot *)calloc((size_t)D, sizeof(gf__uslot));
            l->w[j].l = l;
            l->w[j].gd = -1;
            if (!l->w[j].ring.slot) { CHECK(0); return; }
        }
        for (g = 0; g < 5 * RS + 3 && !bad; g++) {
            gf__uslot *s = gf__slot_of(l, g);
            int in = 0;
            for (j = 0; j < N; j++) in |= s >= l->w[j].ring.slot && s < l->w[j].ring.slot + D;
            if (!in) bad = 1;
            else if (s != gf__slot_of(l, g + RS)) bad = 2;
            for (h = g + 1; h < g + RS && !bad; h++) if (gf__slot_of(l, h) == s) bad = 3;
            if (g < RS) seen[g] = s;
        }
        CHECK_MSG(!bad, "case %d: %s", (int)c, bad == 1 ? "a slot outside the workers' rings" : bad == 2 ? "position g + RS not in g's slot" : "two positions within RS share a slot");
        /* publication: a slot marks the position it holds, not one RS earlier */
        seen[0]->pub = 0;
        CHECK(!gf__published(l, 0));
        seen[0]->pub = 1;
        CHECK(gf__published(l, 0) && !gf__published(l, RS));
        /* claims: in stream order, RS of them while none is released, one
           more per position released, none past the stream's end */
        l->total = 2 * RS + 1;
        l->dnext = 0; l->dtail = 0;
        for (g = 0; g < RS && !bad; g++) if (gf__claim_pos(l, &h) != 1 || h != g) bad = 4;
        CHECK_MSG(!bad, "case %d: the first RS claims not 0, 1, ... in order", (int)c);
        h = -7;
        CHECK_MSG(gf__claim_pos(l, &h) == 0 && h == -7 && l->dnext == RS, "case %d: a claim while every slot holds an unreleased position", (int)c);
        l->dtail = 1;
        CHECK_MSG(gf__claim_pos(l, &h) == 1 && h == RS && gf__slot_of(l, h) == seen[0], "case %d: position RS once position 0 is released, in its slot", (int)c);
        CHECK(gf__claim_pos(l, &h) == 0);
        l->dtail = RS + 1;
        for (g = RS + 1; g <= 2 * RS && !bad; g++) if (gf__claim_pos(l, &h) != 1 || h != g) bad = 5;
        CHECK_MSG(!bad, "case %d: claims after a release", (int)c);
        l->dtail = 5 * RS;
        CHECK_MSG(gf__claim_pos(l, &h) == 0 && l->dnext == l->total, "case %d: a claim past the stream's end", (int)c);
        l->total = -1; /* unbounded: only the ring stops it */
        CHECK(gf__claim_pos(l, &h) == 1 && h == 2 * RS + 1);
        for (j = 0; j < N; j++) free(l->w[j].ring.slot);
        free(l->w); free(l); free(seen);
    }
}

static void test_window_table(void)
{
    static const int64_t cases[][8] = {
        /* number of units, then their rows */
        {4, 65536, 65536, 65536, 65536},
        {4, 65536, 65536, 65536, 16960},
        {4, 65536, 16960, 65536, 65536},
        {5, 512, 512, 392, 512, 1},
        {3, 700, 100, 700},
        {1, 5},
        {2, 1, 1},
        {3, 1000, 1, 1000},
    };
    gf__worker *w = (gf__worker *)calloc(1, sizeof *w);
    int64_t woff[9];
    size_t c;
    int g, r;
    if (!w) { CHECK(0); return; }
    w->woff = woff;
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int64_t nu = cases[c][0], j, y, bad = -1, bad_want = 0;
        woff[0] = 0;
        for (j = 0; j < nu; j++) woff[j + 1] = woff[j] + cases[c][j + 1];
        g = -1;
        r = gf__wtable(w, nu, &g);
        if (c == sizeof cases / sizeof cases[0] - 1) { /* 2001 rows in buckets of 1: more than GF__WT_MAX */
            CHECK_MSG(r == 0 && g == -1, "case %d: table of %lld buckets accepted", (int)c, (long long)woff[nu]);
            continue;
        }
        CHECK_MSG(r == 1 && g >= 0, "case %d: no table", (int)c);
        if (r != 1) continue;
        for (y = 0; y < woff[nu] && bad < 0; y++) {
            int64_t want = 0;
            while (woff[want + 1] <= y) want++;
            if (gf__wunit(w, g, y) != want) { bad = y; bad_want = want; }
        }
        CHECK_MSG(bad < 0, "case %d: row %lld in unit %lld, table says %lld", (int)c, (long long)bad,
                  (long long)bad_want, (long long)(bad < 0 ? 0 : gf__wunit(w, g, bad)));
    }
    /* an empty unit: turned down (a bucket could hold two unit starts) */
    woff[0] = 0; woff[1] = 10; woff[2] = 10; woff[3] = 20;
    g = -1;
    CHECK(gf__wtable(w, 3, &g) == 0 && g == -1);
    /* GF__WT_MAX buckets exactly: accepted; one more: not */
    woff[0] = 0; woff[1] = 1; woff[2] = GF__WT_MAX;
    CHECK(gf__wtable(w, 2, &g) == 1 && g == 0 && gf__wunit(w, g, GF__WT_MAX - 1) == 1 && gf__wunit(w, g, 0) == 0);
    woff[2] = GF__WT_MAX + 1;
    g = -1;
    CHECK(gf__wtable(w, 2, &g) == 0 && g == -1);
    free(w);
}

/* tests/data/ids.parquet (4 row groups of 5,000 rows), every column a
   float64 feature, and the bytes of row groups [g0, g1): the first
   chunk's start to the last chunk's limit */
static gpufeed_dataset *ids_f64(int64_t unit_rows, gpufeed_error *err)
{
    static const char *path = "tests/data/ids.parquet";
    static const char *cols[] = { "id", "x", "y", "k" };
    gpufeed_feature ft[4];
    gpufeed_dataset_desc d;
    gpufeed_dataset *ds = NULL;
    int k;
    memset(ft, 0, sizeof ft); memset(&d, 0, sizeof d);
    for (k = 0; k < 4; k++) { ft[k].column = cols[k]; ft[k].dtype = GPUFEED_DT_F64; }
    d.paths = &path; d.num_paths = 1; d.features = ft; d.num_features = 4; d.unit_rows = unit_rows;
    return gpufeed_dataset_open(&ds, &d, err) ? NULL : ds;
}
static void ids_span(const gpufeed_file *fl, int32_t g0, int32_t g1, uint64_t *first, uint64_t *end)
{
    const gpufeed_metadata *md = &fl->md;
    int32_t g, c;
    *first = UINT64_MAX; *end = 0;
    for (g = g0; g < g1; g++)
        for (c = 0; c < md->num_columns; c++) {
            uint64_t st = gf__chunk_start(&md->row_groups[g].chunks[c]), lim = fl->chunk_limit[(size_t)g * (size_t)md->num_columns + (size_t)c];
            if (st < *first) *first = st;
            if (lim > *end) *end = lim;
        }
}

static void test_release_batched(void)
{
    const uint64_t ps = 4096;
    const int64_t np = 300;
    uint8_t *m[2];
    gpufeed_file f[2];
    struct gf__relq *q = (struct gf__relq *)calloc(1, sizeof *q);
    int64_t p;
    int k, bad = 0;
    for (k = 0; k < 2; k++) {
        m[k] = (uint8_t *)mmap(NULL, (size_t)(np * ps), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m[k] == (uint8_t *)MAP_FAILED) { CHECK_MSG(0, "mmap failed"); return; }
        memset(m[k], 0xAA, (size_t)(np * ps));
        memset(&f[k], 0, sizeof f[k]);
        f[k].map = m[k]; f[k].map_len = (uint64_t)np * ps; f[k].map_page = ps;
    }
    if (!q) { CHECK(0); return; }
    /* adjacent pushes coalesce at once; the rest wait for the flush */
    gf__relq_push(q, &f[0], 3 * ps + 100, 5 * ps + 10);
    gf__relq_push(q, &f[0], 5 * ps + 10, 6 * ps);
    CHECK(q->n == 1 && q->bytes == 3 * ps - 100);
    gf__relq_push(q, &f[0], 15 * ps + 7, 21 * ps - 1); /* touched by the one after next: one run, page 15 in it */
    gf__relq_push(q, &f[1], 10 * ps, 12 * ps);         /* another file: its own run */
    gf__relq_push(q, &f[0], 10 * ps + 5, 15 * ps + 7);
    gf__relq_push(q, &f[0], 40 * ps + 1, 40 * ps + 2); /* a few bytes: no whole page, no call */
    CHECK(q->n == 5);
    for (p = 0; p < np; p++) bad += rel_zero(m[0], ps, p);
    CHECK_MSG(bad == 0, "%d pages let go before the flush", bad);
    k = gf__relq_flush(q);
    CHECK_MSG(k == 3, "%d calls, want 3: [4, 6) and [11, 20) of the first file's pages, [10, 12) of the second", k);
    CHECK(q->n == 0 && q->bytes == 0);
    for (p = 0, bad = 0; p < np; p++) {
        int want0 = (p >= 4 && p < 6) || (p >= 11 && p < 20), want1 = p >= 10 && p < 12;
        bad += rel_zero(m[0], ps, p) != want0 || rel_zero(m[1], ps, p) != want1;
        if (!rel_zero(m[0], ps, p) && (m[0][(size_t)p * ps] != 0xAA || m[0][(size_t)(p + 1) * ps - 1] != 0xAA)) bad++;
    }
    CHECK_MSG(bad == 0, "%d pages let go wrongly (want the whole pages inside the runs: 4-5 and 11-19 of the first file, 10-11 of the second)", bad);

    /* a full queue flushes itself before it takes another range */
    memset(m[0], 0xAA, (size_t)(np * ps));
    for (p = 0; p < GF__RELQ_N + 1; p++) gf__relq_push(q, &f[0], (uint64_t)(2 * p) * ps, (uint64_t)(2 * p + 1) * ps);
    CHECK(q->n == 1);
    for (p = 0, bad = 0; p < 2 * (GF__RELQ_N + 1); p++) bad += rel_zero(m[0], ps, p) != (p % 2 == 0 && p < 2 * GF__RELQ_N);
    CHECK_MSG(bad == 0, "%d pages wrong after the queue filled", bad);
    CHECK(gf__relq_flush(q) == 1 && rel_zero(m[0], ps, 2 * GF__RELQ_N));

    /* a full queue of two columns' pieces, pushed in turn (so no push
       extends the one before): it merges each column's pieces instead of
       letting them go, and the flush makes a call per column */
    memset(m[0], 0xAA, (size_t)(np * ps));
    for (p = 0; p < GF__RELQ_N + 8; p++) gf__relq_push(q, &f[0], (uint64_t)(p / 2 + (p % 2) * 150) * ps, (uint64_t)(p / 2 + 1 + (p % 2) * 150) * ps);
    CHECK_MSG(q->n <= 10, "%d ranges queued, want the two columns' merged pieces and the few pushed after", (int)q->n);
    for (p = 0, bad = 0; p < np; p++) bad += rel_zero(m[0], ps, p);
    CHECK_MSG(bad == 0, "%d pages let go when the queue filled with pieces that merge", bad);
    k = gf__relq_flush(q);
    CHECK_MSG(k == 2, "%d calls, want one a column", k);
    for (p = 0, bad = 0; p < np; p++) bad += rel_zero(m[0], ps, p) != ((p >= 0 && p < GF__RELQ_N / 2 + 4) || (p >= 150 && p < 150 + GF__RELQ_N / 2 + 4));
    CHECK_MSG(bad == 0, "%d pages wrong after the merged flush", bad);

    /* at a unit's end the queue goes once `at` bytes are queued; within a
       unit as soon as they are (a one-pass reader's scratch), or only at
       4x (a loader's worker: hold 4) */
    memset(m[0], 0xAA, (size_t)(np * ps));
    q->at = 8 * ps;
    gf__relq_push(q, &f[0], 0, 4 * ps);
    CHECK(q->n == 1 && q->bytes == 4 * ps && !rel_zero(m[0], ps, 0)); /* under `at`: kept */
    gf__relq_push(q, &f[0], 10 * ps, 14 * ps);
    CHECK_MSG(q->n == 0 && q->bytes == 0 && rel_zero(m[0], ps, 0) && rel_zero(m[0], ps, 13), "hold 1: `at` reached within a unit, the queue kept");
    memset(m[0], 0xAA, (size_t)(np * ps));
    q->hold = 4;
    gf__relq_push(q, &f[0], 0, 4 * ps);
    gf__relq_unit_end(q);
    CHECK(q->n == 1 && q->bytes == 4 * ps && !rel_zero(m[0], ps, 0)); /* under `at`: kept */
    gf__relq_push(q, &f[0], 10 * ps, 14 * ps);
    CHECK(q->n == 2 && q->bytes == 8 * ps && !rel_zero(m[0], ps, 10)); /* at `at` in a unit: kept */
    gf__relq_unit_end(q);
    CHECK(q->n == 0 && q->bytes == 0 && rel_zero(m[0], ps, 0) && rel_zero(m[0], ps, 13) && !rel_zero(m[0], ps, 14));
    for (p = 0; p < 32; p += 2) gf__relq_push(q, &f[0], (uint64_t)(20 + p) * ps, (uint64_t)(21 + p) * ps); /* 16 pages: within a unit, not yet */
    CHECK(q->n == 16 && !rel_zero(m[0], ps, 20));
    gf__relq_push(q, &f[0], 60 * ps, 76 * ps); /* 32 pages = 4x: the bound within a unit */
    CHECK(q->n == 0 && q->bytes == 0 && rel_zero(m[0], ps, 20) && rel_zero(m[0], ps, 75) && !rel_zero(m[0], ps, 21));
    q->at = 0; q->hold = 0;

    /* a loader's worker keeps each file's bytes below keep_to mapped (they
       are read again next epoch); the rest of a range goes */
    memset(m[0], 0xAA, (size_t)(np * ps));
    memset(m[1], 0xAA, (size_t)(np * ps));
    f[0].keep_to = 50 * ps; f[1].keep_to = 0;
    q->keep = 1;
    gf__relq_push(q, &f[0], 10 * ps, 80 * ps);
    gf__relq_push(q, &f[1], 10 * ps, 20 * ps);
    k = gf__relq_flush(q);
    CHECK_MSG(k == 2, "%d calls with keep, want 2 (the first file's bytes past keep_to, the second's)", k);
    for (p = 0, bad = 0; p < np; p++) bad += rel_zero(m[0], ps, p) != (p >= 50 && p < 80) || rel_zero(m[1], ps, p) != (p >= 10 && p < 20);
    CHECK_MSG(bad == 0, "%d pages wrong with keep_to at page 50", bad);
    gf__relq_push(q, &f[0], 20 * ps, 40 * ps); /* all of it kept: no call */
    CHECK(gf__relq_flush(q) == 0 && !rel_zero(m[0], ps, 20) && !rel_zero(m[0], ps, 39));
    q->keep = 0; /* a plain scratch lets go below keep_to too */
    gf__relq_push(q, &f[0], 20 * ps, 40 * ps);
    CHECK(gf__relq_flush(q) == 1 && rel_zero(m[0], ps, 20) && rel_zero(m[0], ps, 39));
    f[0].keep_to = 0;
    for (k = 0; k < 2; k++) munmap(m[k], (size_t)(np * ps));
    free(q);

    /* A real scratch: once a chunk is read to its end all of it is queued,
       so the four row groups of tests/data/ids.parquet (every column a
       feature) come out as one run from the first chunk to the last chunk's
       end, whether units are whole row groups or pieces of them. */
    {
        static const int64_t unit_rows[] = { 0, 1000 };
        int v;
        for (v = 0; v < 2; v++) {
            gpufeed_dataset *ds;
            gpufeed_dataset_info info;
            gpufeed_scratch *s = NULL;
            gpufeed_error err;
            uint64_t lo, hi, first, end;
            int64_t u, runs, rows = 0;
            double *buf = (double *)calloc(5000 * 4, sizeof(double));
            gpufeed_file *fl;
            ds = ids_f64(unit_rows[v], &err);
            if (!buf || !ds) { CHECK_MSG(0, "dataset: %s", err.message); free(buf); return; }
            gpufeed_dataset_get_info(ds, &info);
            CHECK(gpufeed_scratch_open(&s, ds, &err) == GPUFEED_OK);
            fl = ds->files[0];
            CHECK(fl->map != NULL);
            ids_span(fl, 0, fl->md.num_row_groups, &first, &end);
            uint64_t umin = UINT64_MAX, umax = 0;
            for (u = 0; s && u < info.num_units; u++) {
                int64_t n = 0;
                uint64_t b0 = s->relq.bytes;
                CHECK_MSG(gpufeed_dataset_decode_unit(ds, s, u, buf, NULL, NULL, &n) == GPUFEED_OK, "unit %lld: %s", (long long)u, gpufeed_scratch_error(s));
                rows += n;
                if (s->relq.bytes - b0 < umin) umin = s->relq.bytes - b0;
                if (s->relq.bytes - b0 > umax) umax = s->relq.bytes - b0;
            }
            CHECK(rows == 20000 && info.num_units == (v ? 20 : 4));
            if (s && v == 0) { /* the same units with a flush size of the smallest unit's bytes: no unit reaches 4x
                                  (the bound within a unit), and each unit's end lets its bytes go */
                gpufeed_scratch *s2 = NULL;
                CHECK_MSG(umin > 0 && umax < 4 * umin, "units queued %llu to %llu bytes", (unsigned long long)umin, (unsigned long long)umax);
                CHECK(gpufeed_scratch_open(&s2, ds, &err) == GPUFEED_OK);
                if (s2) {
                    int nonempty = 0;
                    s2->relq.at = umin;
                    s2->relq.hold = 4; /* as a loader's worker */
                    for (u = 0; u < info.num_units; u++) {
                        int64_t n = 0;
                        CHECK(gpufeed_dataset_decode_unit(ds, s2, u, buf, NULL, NULL, &n) == GPUFEED_OK && n == 5000);
                        nonempty += s2->relq.n != 0 || s2->relq.bytes != 0;
                    }
                    CHECK_MSG(nonempty == 0, "%d of 4 units left bytes queued at their end (flush size %llu bytes)", nonempty, (unsigned long long)umin);
                    gpufeed_scratch_close(s2);
                }
                { /* the loader's workers wait within a unit (hold 4) and keep
                     the files' first GPUFEED_KEEP_BYTES mapped (without a tensor
                     cache); a plain scratch does neither */
                    gpufeed_loader *l = NULL;
                    gpufeed_loader_desc ld;
                    gpufeed_cache_desc cd;
                    int32_t i, withc;
                    CHECK_MSG(fl->keep_to == (fl->map_len <= (uint64_t)GPUFEED_KEEP_BYTES ? fl->map_len : (uint64_t)GPUFEED_KEEP_BYTES / fl->map_page * fl->map_page),
                              "keep_to %llu of a %llu-byte file (budget %llu)", (unsigned long long)fl->keep_to, (unsigned long long)fl->map_len,
                              (unsigned long long)GPUFEED_KEEP_BYTES);
                    CHECK(s->relq.hold <= 1 && !s->relq.keep);
                    for (withc = 0; withc < 2; withc++) {
                        memset(&ld, 0, sizeof ld); memset(&cd, 0, sizeof cd);
                        ld.batch_rows = 1000; ld.workers = 2; ld.epochs = 1;
                        if (withc) { cd.dir = "build/test_unit_keep_cache"; ld.cache = &cd; }
                        CHECK(gpufeed_loader_open(&l, ds, &ld, &err) == GPUFEED_OK);
                        for (i = 0; l && i < l->N; i++)
                            CHECK_MSG(l->w[i].s && l->w[i].s->relq.hold == 4 && l->w[i].s->relq.keep == !withc, "worker %d (cache %d): hold %d, keep %d", (int)i, withc,
                                      l->w[i].s ? (int)l->w[i].s->relq.hold : -1, l->w[i].s ? (int)l->w[i].s->relq.keep : -1);
                        if (l) gpufeed_loader_close(l);
                        l = NULL;
                    }
                }
            }
            if (s) {
                CHECK(s->relq.bytes < GPUFEED_RELEASE_BYTES); /* a small file: nothing flushed yet */
                runs = rel_runs(&s->relq, &lo, &hi);
                /* through the page the last chunk ends in (within the file) */
                end = (end + fl->map_page - 1) / fl->map_page * fl->map_page;
                if (end > fl->map_len) end = fl->map_len;
                CHECK_MSG(runs == 1 && lo == first && hi == end, "unit_rows %lld: %lld runs queued over [%llu, %llu), want 1 over [%llu, %llu)",
                          (long long)unit_rows[v], (long long)runs, (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)first,
                          (unsigned long long)end);
            }
            gpufeed_scratch_close(s);
            gpufeed_dataset_close(ds);
            free(buf);
        }
    }
}

/* A split row group's mapped bytes go in one call, by the last of its
   units to end (gf__scratch_rg_end): on 15 workers a call per column and
   unit flushed every core's TLB tens of times a unit. tests/data/ids.parquet
   at unit_rows 1000: four row groups of five units. A unit that ends while
   another of its row group is being decoded (busy forced to 1) leaves
   nothing of the row group queued, its seek included (before, a seek queued
   the other units' bytes before its pages); the last one out queues the
   whole row group as one range, at once when its columns are done with
   the row group, else at the start of a unit that does not read on; a
   loader's epoch leaves no unit counted as busy. */
static gf__rgplan *rg_plan_of(gpufeed_dataset *ds, int32_t rg)
{
    int32_t p;
    for (p = 0; p < ds->nplans; p++) if (ds->plans[p].file == 0 && ds->plans[p].rg == rg) return &ds->plans[p];
    return NULL;
}
static int rg_queued_inside(const gpufeed_scratch *s, const gf__rgplan *pl, uint64_t ps) /* ranges queued within the row group's pages */
{
    int32_t i, n = 0;
    uint64_t lo = pl->lo / ps * ps, hi = (pl->hi + ps - 1) / ps * ps;
    for (i = 0; i < s->relq.n; i++) n += s->relq.r[i].lo < hi && s->relq.r[i].hi > lo;
    return n;
}
static int rg_queued_whole(const gpufeed_scratch *s, const gf__rgplan *pl, uint64_t ps, uint64_t map_len) /* one range covers it */
{
    int32_t i;
    uint64_t hi = (pl->hi + ps - 1) / ps * ps;
    if (hi > map_len) hi = map_len;
    for (i = 0; i < s->relq.n; i++) if (s->relq.r[i].lo <= pl->lo && s->relq.r[i].hi >= hi) return 1;
    return 0;
}
static void test_release_row_group(void)
{
    gpufeed_dataset *ds;
    gpufeed_dataset_info info;
    gpufeed_scratch *s = NULL;
    gpufeed_error err;
    double *buf = (double *)calloc(5000 * 4, sizeof(double));
    gf__rgplan *p0, *p1;
    gpufeed_file *fl;
    uint64_t ps, first, end;
    int64_t n = 0;
    int32_t k, p;
    ds = ids_f64(1000, &err);
    if (!buf || !ds) { CHECK_MSG(0, "dataset: %s", err.message); free(buf); return; }
    gpufeed_dataset_get_info(ds, &info);
    fl = ds->files[0];
    ps = fl->map_page;
    p0 = rg_plan_of(ds, 0); p1 = rg_plan_of(ds, 1);
    CHECK_MSG(info.num_units == 20 && ds->nplans == 4 && p0 && p1 && fl->map, "%lld units, %d split row groups", (long long)info.num_units, (int)ds->nplans);
    if (info.num_units != 20 || !p0 || !p1 || !fl->map) { gpufeed_dataset_close(ds); free(buf); return; }
    ids_span(fl, 0, 1, &first, &end);
    CHECK_MSG(p0->lo == first && p0->hi == end, "row group 0 spans [%llu, %llu), want [%llu, %llu)", (unsigned long long)p0->lo,
              (unsigned long long)p0->hi, (unsigned long long)first, (unsigned long long)end);

    /* another unit of the row group in flight: units 1 and 3 (3 seeks) leave it all */
    CHECK(gpufeed_scratch_open(&s, ds, &err) == GPUFEED_OK);
    p0->busy = 1;
    for (k = 1; s && k <= 3; k += 2) {
        const gpufeed_unit *un = gpufeed_dataset_unit(ds, k);
        CHECK(gpufeed_dataset_decode_unit(ds, s, k, buf, NULL, NULL, &n) == GPUFEED_OK && n == un->num_rows);
        CHECK_MSG(rg_queued_inside(s, p0, ps) == 0 && s->pend == NULL && p0->busy == 1, "unit %d: %d ranges of row group 0 queued, pending %d, busy %d",
                  (int)k, rg_queued_inside(s, p0, ps), s->pend != NULL, (int)p0->busy);
        for (p = 0; p < n; p++) if (buf[4 * p] != (double)(un->first_row + p)) break; /* id: the row's number */
        CHECK_MSG(p == n && n > 0, "unit %d: row %d wrong", (int)k, (int)p);
    }
    gpufeed_scratch_close(s); s = NULL;

    /* half way through unit 3 after its seek: nothing before its pages queued */
    CHECK(gpufeed_scratch_open(&s, ds, &err) == GPUFEED_OK);
    if (s) {
        int64_t kept = 0;
        p0->busy = 1;
        s->rgmode = 1;
        CHECK(gf__scratch_begin(s, 3) == GPUFEED_OK && gf__scratch_rows(s, 512, buf, NULL, NULL, 0, &kept) == GPUFEED_OK && kept == 512);
        { /* only its own pages (those inflated whole go at once): each range starts at or after the current page of its column's chunk */
            int32_t i, j, bad = 0;
            for (i = 0; i < s->relq.n; i++) {
                int own = 0;
                for (j = 0; j < 4; j++) own |= s->relq.r[i].lo >= s->dc[j].c.page_off && s->relq.r[i].lo < s->dc[j].c.region_end;
                bad += !own;
            }
            CHECK_MSG(bad == 0, "unit 3's seek queued %d ranges of the other units' bytes", (int)bad);
        }
        s->rgmode = 0;
        s->unit = -1;
        p0->busy = 0;
    }
    gpufeed_scratch_close(s); s = NULL;

    /* the last one out, its columns still inside the row group: pending;
       the next unit reads on (still pending); one of row group 1 lets row
       group 0 go as one range, and leaves row group 1 pending */
    p0->busy = 0;
    CHECK(gpufeed_scratch_open(&s, ds, &err) == GPUFEED_OK);
    if (s) {
        CHECK(gpufeed_dataset_decode_unit(ds, s, 2, buf, NULL, NULL, &n) == GPUFEED_OK && n == gpufeed_dataset_unit(ds, 2)->num_rows);
        CHECK_MSG(s->pend == p0 && rg_queued_inside(s, p0, ps) == 0, "unit 2: pending %d, %d ranges queued", s->pend == p0, rg_queued_inside(s, p0, ps));
        CHECK(gpufeed_dataset_decode_unit(ds, s, 3, buf, NULL, NULL, &n) == GPUFEED_OK && n == gpufeed_dataset_unit(ds, 3)->num_rows);
        CHECK_MSG(s->pend == p0 && rg_queued_inside(s, p0, ps) == 0, "unit 3 (reads on): pending %d, %d ranges queued", s->pend == p0, rg_queued_inside(s, p0, ps));
        CHECK(gpufeed_dataset_decode_unit(ds, s, 5, buf, NULL, NULL, &n) == GPUFEED_OK && n == gpufeed_dataset_unit(ds, 5)->num_rows);
        CHECK_MSG(s->pend == p1 && rg_queued_whole(s, p0, ps, fl->map_len) && rg_queued_inside(s, p1, ps) <= 1,
                  "unit 5: pending row group 1 %d, row group 0 queued whole %d", s->pend == p1, rg_queued_whole(s, p0, ps, fl->map_len));
        CHECK(p0->busy == 0 && p1->busy == 0);
    }
    gpufeed_scratch_close(s); s = NULL;

    /* the last unit of the row group, alone: queued whole at its end */
    CHECK(gpufeed_scratch_open(&s, ds, &err) == GPUFEED_OK);
    if (s) {
        CHECK(gpufeed_dataset_decode_unit(ds, s, 4, buf, NULL, NULL, &n) == GPUFEED_OK && n == gpufeed_dataset_unit(ds, 4)->num_rows);
        CHECK_MSG(s->pend == NULL && rg_queued_whole(s, p0, ps, fl->map_len), "unit 4: pending %d, queued whole %d", s->pend != NULL,
                  rg_queued_whole(s, p0, ps, fl->map_len));
    }
    gpufeed_scratch_close(s); s = NULL;

    /* a row group left pending goes at the start of a unit of another
       row group, flushed before that unit maps its pages (hold keeps the
       queue's own bound out of it) */
    CHECK(gpufeed_scratch_open(&s, ds, &err) == GPUFEED_OK);
    if (s) {
        s->relq.at = 1;
        s->relq.hold = 1 << 30;
        s->pend = p0;
        gf__scratch_rg_pending(s, p0);
        CHECK_MSG(s->pend == p0 && s->relq.n == 0, "the same row group next: pending %d, %d ranges queued", s->pend == p0, (int)s->relq.n);
        gf__scratch_rg_pending(s, p1);
        CHECK_MSG(s->pend == NULL && s->relq.n == 0 && s->relq.bytes == 0, "another row group next: pending %d, %d ranges (%llu bytes) still queued",
                  s->pend != NULL, (int)s->relq.n, (unsigned long long)s->relq.bytes);
    }
    gpufeed_scratch_close(s); s = NULL;

#if !defined(GPUFEED_NO_THREADS)
    { /* a loader's worker whose ring is full lets its pending row group go
         before it sleeps: units in order, 1 worker, 2 slots, prefilled,
         batches of 300 rows: it stops after unit 2, its columns inside
         row group 0 */
        gpufeed_loader *l = NULL;
        gpufeed_loader_desc ld;
        int tries;
        struct gf__rgplan *pend = p0;
        memset(&ld, 0, sizeof ld);
        ld.batch_rows = 300; ld.workers = 1; ld.ring_depth = 2; ld.epochs = 1; ld.no_unit_shuffle = 1; ld.prefill = 1;
        CHECK(gpufeed_loader_open(&l, ds, &ld, &err) == GPUFEED_OK);
        for (tries = 0; l && tries < 500; tries++) { /* asleep (no position claimed for 10 ms) with none pending; up to 5 s */
            int64_t dn = __atomic_load_n(&l->dnext, __ATOMIC_ACQUIRE);
            gf__sleep_ms(10);
            pend = __atomic_load_n(&l->w[0].s->pend, __ATOMIC_ACQUIRE);
            if (__atomic_load_n(&l->dnext, __ATOMIC_ACQUIRE) == dn && !pend) break;
        }
        CHECK_MSG(l && pend == NULL, "a full ring's worker still holds row group %d pending", pend ? (int)pend->rg : -1);
        if (l) gpufeed_loader_close(l);
    }
#endif

    { /* a loader's epochs, shuffled, 3 workers: every unit's count undone */
        gpufeed_loader *l = NULL;
        gpufeed_loader_desc ld;
        gpufeed_batch b;
        int64_t rows = 0;
        memset(&ld, 0, sizeof ld);
        ld.batch_rows = 700; ld.workers = 3; ld.epochs = 2; ld.shuffle_window = 2; ld.seed = 5; ld.debug_jitter_us = 300;
        CHECK(gpufeed_loader_open(&l, ds, &ld, &err) == GPUFEED_OK);
        while (l && gpufeed_loader_next(l, &b) == GPUFEED_OK && b.num_rows > 0) rows += b.num_rows;
        CHECK_MSG(rows == 40000, "%lld rows over 2 epochs", (long long)rows);
        if (l) gpufeed_loader_close(l);
        for (p = 0; p < ds->nplans; p++) CHECK_MSG(ds->plans[p].busy == 0, "row group %d: %d units still counted busy", (int)ds->plans[p].rg, (int)ds->plans[p].busy);
    }
    gpufeed_dataset_close(ds);
    free(buf);
}

/* Units at the split rule's boundary (issue 19): a row group is cut while
   more than unit_rows rows are left, so a remainder of exactly unit_rows
   is one unit even where page boundaries would allow another cut (2,000
   rows, pages of 250, unit_rows 1,000: two units of 1,000); 2,001 rows are
   cut once more. */
static void test_units_exact_remainder(void)
{
    u19_file *m = (u19_file *)calloc(1, sizeof *m);
    int k;
    for (k = 0; k < 2; k++) {
        int64_t rows = 2000 + k, i, covered = 0;
        gpufeed_dataset *ds;
        gpufeed_dataset_info info;
        u19_build(m, &rows, 1, 250, 0, -1);
        ds = u19_open(m, 1000, NULL);
        if (ds) {
            gpufeed_dataset_get_info(ds, &info);
            if (k == 0) {
                CHECK_MSG(info.num_units == 2, "%lld units", (long long)info.num_units);
                for (i = 0; i < info.num_units && i < 2; i++) {
                    const gpufeed_unit *u = gpufeed_dataset_unit(ds, i);
                    CHECK_MSG(u->first_row == 1000 * i && u->num_rows == 1000, "unit %lld: rows %lld + %lld", (long long)i, (long long)u->first_row, (long long)u->num_rows);
                }
            } else CHECK_MSG(info.num_units == 3, "%lld units for 2001 rows", (long long)info.num_units);
            for (i = 0; i < info.num_units; i++) {
                const gpufeed_unit *u = gpufeed_dataset_unit(ds, i);
                CHECK(u->first_row == covered && u->num_rows > 0 && u->num_rows <= 2000);
                covered += u->num_rows;
            }
            CHECK(covered == rows);
            gpufeed_dataset_close(ds);
        }
        u19_free(m);
    }
    free(m);
}

/* A row group whose column is all null (statistics: null_count = rows, no
   min or max) cannot match a comparison: pruned; the row group with
   values is kept (issue 19) */
static void test_prune_all_null(void)
{
    static const int64_t rows[2] = { 10, 10 };
    u19_file *m = (u19_file *)calloc(1, sizeof *m);
    static const gpufeed_op ops[4] = { GPUFEED_OP_GT, GPUFEED_OP_LT, GPUFEED_OP_EQ, GPUFEED_OP_IS_NOT_NULL };
    int k;
    u19_build(m, rows, 2, 10, 1, 0);
    for (k = 0; k < 4; k++) {
        gpufeed_predicate p;
        gpufeed_dataset *ds;
        gpufeed_dataset_info info;
        memset(&p, 0, sizeof p);
        p.column = "v"; p.op = ops[k]; p.a.kind = GPUFEED_VAL_INT; p.a.i = ops[k] == GPUFEED_OP_EQ ? 15 : ops[k] == GPUFEED_OP_LT ? 100 : -100;
        ds = u19_open(m, 1000, &p);
        if (!ds) continue;
        gpufeed_dataset_get_info(ds, &info);
        CHECK_MSG(info.row_groups == 2 && info.row_groups_pruned == 1 && info.num_rows == 10,
                  "op %d: %d of %d row groups pruned, %lld rows", (int)ops[k], (int)info.row_groups_pruned, (int)info.row_groups, (long long)info.num_rows);
        gpufeed_dataset_close(ds);
    }
    u19_free(m);
    free(m);
}

/* The batch reader's batch sizes (issue 19): over tests/data/ids.parquet
   (20,000 rows, units of 2,500), every batch but the last holds exactly B
   rows, the last the rest (none with DROP_LAST), the ids in file order,
   with one thread and with two. */
static void test_reader_batch_sizes(void)
{
    static const int64_t bs[] = { 1, 7, 64, 2500, 2501, 4999, 20000, 30000 };
    static const char *paths[] = { "tests/data/ids.parquet" };
    size_t k;
    int th, drop;
    for (k = 0; k < sizeof bs / sizeof bs[0]; k++)
        for (th = 1; th <= 2; th++)
            for (drop = 0; drop < 2; drop++) {
                gpufeed_feature ft[2];
                gpufeed_dataset_desc d;
                gpufeed_reader_desc rd;
                gpufeed_dataset *ds = NULL;
                gpufeed_reader *r = NULL;
                gpufeed_error err;
                gpufeed_batch b;
                gpufeed_result res;
                int64_t B = bs[k], rows = 0, nb = 0, bad = 0, i, want_rows;
                memset(ft, 0, sizeof ft); memset(&d, 0, sizeof d); memset(&rd, 0, sizeof rd);
                ft[0].column = "id"; ft[0].dtype = GPUFEED_DT_I64;
                ft[1].column = "x"; ft[1].dtype = GPUFEED_DT_F32;
                d.paths = paths; d.num_paths = 1; d.features = ft; d.num_features = 2; d.unit_rows = 2500;
                d.layout = GPUFEED_LAYOUT_PER_FEATURE;
                rd.batch_rows = B; rd.threads = th; rd.last_batch = drop ? GPUFEED_DROP_LAST : GPUFEED_KEEP_LAST;
                if (gpufeed_dataset_open(&ds, &d, &err) || gpufeed_reader_open(&r, ds, &rd, &err)) {
                    CHECK_MSG(0, "B %lld: %s", (long long)B, err.message);
                    if (ds) gpufeed_dataset_close(ds);
                    continue;
                }
                want_rows = drop ? 20000 / B * B : 20000;
                while ((res = gpufeed_reader_next(r, &b)) == GPUFEED_OK) {
                    const int64_t *id = (const int64_t *)b.features[0];
                    int64_t want = rows + B <= want_rows ? B : want_rows - rows;
                    if (b.num_rows != want) bad++;
                    for (i = 0; i < b.num_rows; i++) if (id[i] != rows + i) { bad++; break; }
                    rows += b.num_rows; nb++;
                    if (nb > 20001) break;
                }
                CHECK_MSG(res == GPUFEED_DONE && bad == 0 && rows == want_rows && nb == (want_rows + B - 1) / B,
                          "B %lld threads %d drop %d: %lld rows in %lld batches, %lld bad", (long long)B, th, drop, (long long)rows, (long long)nb, (long long)bad);
                gpufeed_reader_close(r);
                gpufeed_dataset_close(ds);
            }
}

/* Integer constants past int64 and uint64 compare exactly (issue 49):
   -9223372036854775809 is below every int64 (not -2^63, as a double would
   round it), -1000000000000000000000000000000 above the double -1e30.
   A file of two row groups of three rows with statistics: i64 {INT64_MIN,
   INT64_MIN + 1, -5 | 0, 7, INT64_MAX}, f64 {-1e30, -2^63 - 2048, -2^63 |
   0.5, 2^64, 1e300}, u64 (UINT_64) {0, 1, 2 | 2^63, 2^64 - 2, 2^64 - 1},
   i32 {INT32_MIN, -1, 0 | 1, 2, INT32_MAX}. Each condition's rows (read
   through the batch reader) and row groups pruned against the exact
   answer. */
typedef struct big_file { pqw_schema sch[5]; pqw_page pg[2][4]; pqw_buf body[2][4]; pqw_chunk ch[2][4]; pqw_rowgroup rg[2];
                          pqw_stats st[2][4]; uint64_t mn[2][4], mx[2][4]; pqw_file f; pqw_buf out; } big_file;
static void big_build(big_file *m)
{
    static const int64_t i64[6] = { INT64_MIN, INT64_MIN + 1, -5, 0, 7, INT64_MAX };
    static const double f64[6] = { -1e30, -9223372036854777856.0, -9223372036854775808.0, 0.5, 18446744073709551616.0, 1e300 };
    static const uint64_t u64[6] = { 0, 1, 2, 9223372036854775808ull, UINT64_MAX - 1, UINT64_MAX };
    static const int32_t i32[6] = { INT32_MIN, -1, 0, 1, 2, INT32_MAX };
    static const char *names[4] = { "i64", "f64", "u64", "i32" };
    int g, c;
    memset(m, 0, sizeof *m);
    m->sch[0] = pqw_root(4);
    m->sch[1] = pqw_leaf("i64", PQW_INT64, PQW_REQUIRED);
    m->sch[2] = pqw_leaf("f64", PQW_DOUBLE, PQW_REQUIRED);
    m->sch[3] = pqw_leaf("u64", PQW_INT64, PQW_REQUIRED);
    m->sch[3].converted_type = pqw_set(14); /* UINT_64 */
    m->sch[4] = pqw_leaf("i32", PQW_INT32, PQW_REQUIRED);
    for (g = 0; g < 2; g++) {
        for (c = 0; c < 4; c++) {
            pqw_buf *b = &m->body[g][c];
            size_t w = c == 3 ? 4 : 8;
            if (c == 0) pqw_plain_i64(b, i64 + 3 * g, 3);
            if (c == 1) pqw_plain_double(b, f64 + 3 * g, 3);
            if (c == 2) pqw_plain_i64(b, (const int64_t *)(const void *)(u64 + 3 * g), 3);
            if (c == 3) pqw_plain_i32(b, i32 + 3 * g, 3);
            memcpy(&m->mn[g][c], b->p, w);            /* each column's three values ascend */
            memcpy(&m->mx[g][c], b->p + 2 * w, w);
            m->pg[g][c] = pqw_data_page(b, 3, PQW_PLAIN);
            m->st[g][c].min = &m->mn[g][c]; m->st[g][c].max = &m->mx[g][c];
            m->st[g][c].min_len = m->st[g][c].max_len = w;
            m->st[g][c].has_min = m->st[g][c].has_max = 1;
            m->st[g][c].null_count = pqw_set(0);
            m->ch[g][c].pages = &m->pg[g][c]; m->ch[g][c].npages = 1; m->ch[g][c].path = names[c]; m->ch[g][c].stats = &m->st[g][c];
            m->ch[g][c].physical = c == 1 ? PQW_DOUBLE : c == 3 ? PQW_INT32 : PQW_INT64;
        }
        m->rg[g].chunks = m->ch[g]; m->rg[g].nchunks = 4;
    }
    m->f.schema = m->sch; m->f.nschema = 5; m->f.rgs = m->rg; m->f.nrgs = 2;
    pqw_build(&m->f, &m->out);
}
static void test_where_big_ints(void)
{
    static const struct { const char *where; int rows, pruned; } cases[] = {
        { "i64 > -9223372036854775809", 6, 0 }, { "i64 >= -9223372036854775809", 6, 0 },
        { "i64 <= -9223372036854775809", 0, 2 }, { "i64 == -9223372036854775809", 0, 2 },
        { "i64 < -9223372036854775809", 0, 2 }, { "i64 >= -1000000000000000000000000000000", 6, 0 },
        { "i64 between -9223372036854775809 and -5", 3, 1 }, { "i64 in (-9223372036854775809, 0)", 1, 1 },
        { "i64 > 18446744073709551616", 0, 2 }, { "i64 < 18446744073709551617", 6, 0 },
        { "i64 >= -9223372036854775808", 6, 0 }, { "i64 <= -9223372036854775808", 1, 1 },
        { "f64 > -9223372036854775809", 4, 0 }, { "f64 >= -9223372036854776832", 4, 0 },
        { "f64 <= -9223372036854776833", 2, 1 }, { "f64 == -9223372036854777856", 1, 1 },
        { "f64 < -1000000000000000000000000000000", 1, 1 }, { "f64 == -1000000000000000000000000000000", 0, 1 },
        { "f64 < 18446744073709551617", 5, 0 }, { "f64 == 18446744073709551616", 1, 1 },
        { "f64 > 18446744073709551615", 2, 1 }, { "f64 < 9223372036854775807", 4, 0 },
        { "u64 > -9223372036854775809", 6, 0 }, { "u64 <= -9223372036854775809", 0, 2 },
        { "u64 < 18446744073709551617", 6, 0 }, { "u64 >= 18446744073709551616", 0, 2 },
        { "i32 > -9223372036854775809", 6, 0 }, { "i32 < -1000000000000000000000000000000", 0, 2 },
    };
    static const char *paths[] = { "big.parquet" };
    big_file *m = (big_file *)calloc(1, sizeof *m);
    size_t k;
    if (!m) { CHECK(0); return; }
    big_build(m);
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        gpufeed_where *w = NULL;
        gpufeed_feature ft;
        gpufeed_dataset_desc d;
        gpufeed_dataset *ds = NULL;
        gpufeed_dataset_info info;
        gpufeed_reader *rd = NULL;
        gpufeed_reader_desc rdd;
        gpufeed_batch b;
        gpufeed_error err;
        int32_t np = 0;
        int64_t rows = 0;
        if (gpufeed_where_parse(&w, cases[k].where, &err)) { CHECK_MSG(0, "%s: %s", cases[k].where, err.message); continue; }
        memset(&ft, 0, sizeof ft); memset(&d, 0, sizeof d); memset(&rdd, 0, sizeof rdd);
        ft.column = "i32"; ft.dtype = GPUFEED_DT_I32;
        d.paths = paths; d.num_paths = 1; d.features = &ft; d.num_features = 1;
        d.where = gpufeed_where_predicates(w, &np); d.num_where = np;
        d.open_source = fn_open_source; d.source_user = &m->out;
        rdd.batch_rows = 4;
        if (gpufeed_dataset_open(&ds, &d, &err) || gpufeed_reader_open(&rd, ds, &rdd, &err)) {
            CHECK_MSG(0, "%s: %s", cases[k].where, err.message);
            if (ds) gpufeed_dataset_close(ds);
            gpufeed_where_free(w);
            continue;
        }
        gpufeed_dataset_get_info(ds, &info);
        while (gpufeed_reader_next(rd, &b) == GPUFEED_OK) rows += b.num_rows;
        CHECK_MSG(rows == cases[k].rows && info.row_groups_pruned == cases[k].pruned, "%s: %lld rows, %d row groups pruned; want %d, %d",
                  cases[k].where, (long long)rows, (int)info.row_groups_pruned, cases[k].rows, cases[k].pruned);
        gpufeed_reader_close(rd);
        gpufeed_dataset_close(ds);
        gpufeed_where_free(w);
    }
    pqw_free(&m->out);
    for (k = 0; k < 8; k++) pqw_free(&m->body[k / 4][k % 4]);
    free(m);
}

/* ---- path expansion: what cannot be read is an error (issue 49) ---- */

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <errno.h>
extern int symlink(const char *, const char *);
extern char *mkdtemp(char *);
extern int setgroups(size_t, const gid_t *);

typedef struct walk_list { int n; char first[512]; char all[4096]; } walk_list;
static void walk_add(void *u, const char *f)
{
    walk_list *l = (walk_list *)u;
    if (!l->n) snprintf(l->first, sizeof l->first, "%s", f);
    if (strlen(l->all) + strlen(f) + 2 < sizeof l->all) { strcat(l->all, f); strcat(l->all, " "); }
    l->n++;
}
/* the files `path` expands to (their count in l), or the error */
static gpufeed_result walk_expand(const char *path, walk_list *l, gpufeed_error *err)
{
    const char *paths[1];
    paths[0] = path;
    memset(l, 0, sizeof *l);
    return gpufeed_expand_paths(paths, 1, walk_add, l, err);
}
/* a 3-row file of one INT32 column "v" at path */
static int walk_file(const char *path)
{
    static const int64_t rows[1] = { 3 };
    u19_file *m = (u19_file *)calloc(1, sizeof *m);
    FILE *fp = fopen(path, "wb");
    int ok;
    if (!m || !fp) { free(m); if (fp) fclose(fp); return -1; }
    u19_build(m, rows, 1, 3, 0, -1);
    ok = fwrite(m->out.p, 1, m->out.n, fp) == m->out.n;
    ok &= fclose(fp) == 0;
    u19_free(m);
    free(m);
    return ok ? 0 : -1;
}
static const char *walk_tmp(char *buf, size_t cap)
{
    const char *t = getenv("TMPDIR");
    snprintf(buf, cap, "%s/gf-walk-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(buf)) return NULL;
    chmod(buf, 0755);
    return buf;
}
static void walk_rm(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", dir, dir);
    if (system(cmd) != 0) fprintf(stderr, "  (could not remove %s)\n", dir);
}
#define WALK_P(buf, ...) snprintf(buf, sizeof buf, __VA_ARGS__)

/* Symbolic links: a link back up the tree is a loop, told by device and
   inode (a long-named loop no longer reads a file once per level until
   the path is too long); a link to a sibling directory is followed; a
   dangling link and a link to itself are errors naming them. */
static void test_walk_links(void)
{
    char root[256], p[512], q[512], longname[241];
    walk_list l;
    gpufeed_error err;
    gpufeed_result r;
    if (!walk_tmp(root, sizeof root)) { CHECK_MSG(0, "mkdtemp: %s", strerror(errno)); return; }
    WALK_P(p, "%s/a", root); CHECK(mkdir(p, 0755) == 0);
    WALK_P(p, "%s/a/x.parquet", root); CHECK(walk_file(p) == 0);
    WALK_P(p, "%s/b", root); CHECK(symlink("a", p) == 0);                     /* a sibling: followed */
    r = walk_expand(root, &l, &err);
    CHECK_MSG(r == GPUFEED_OK && l.n == 2, "a link to a sibling directory: %d files (%s) %s", l.n, l.all, r ? err.message : "");

    memset(longname, 'n', sizeof longname - 1); longname[sizeof longname - 1] = 0;
    WALK_P(p, "%s/a/%s", root, longname); CHECK(symlink(".", p) == 0);       /* back to a, under a long name */
    r = walk_expand(root, &l, &err);
    CHECK_MSG(r == GPUFEED_ERR_IO && l.n == 0, "a long-named loop: %d, %d files (%s)", (int)r, l.n, l.all);
    WALK_P(q, "/a/%s' is the directory", longname);
    CHECK_HAS(err.message, q);
    CHECK_HAS(err.message, "(a symbolic link loop)");
    WALK_P(q, "%s/**/*.parquet", root);
    r = walk_expand(q, &l, &err);
    CHECK_MSG(r == GPUFEED_ERR_IO && strstr(err.message, "symbolic link loop"), "'**' over the loop: %d %s", (int)r, err.message);
    CHECK(unlink(p) == 0);
    WALK_P(p, "%s/a/up", root); CHECK(symlink("..", p) == 0);                /* back to the root */
    r = walk_expand(root, &l, &err);
    CHECK_MSG(r == GPUFEED_ERR_IO && strstr(err.message, "/a/up' is the directory"), "a link to the root: %d %s", (int)r, err.message);
    CHECK(unlink(p) == 0);

    WALK_P(p, "%s/a/gone.parquet", root); CHECK(symlink("nowhere.parquet", p) == 0);
    r = walk_expand(root, &l, &err);
    CHECK_MSG(r == GPUFEED_ERR_IO && l.n == 0, "a dangling link: %d, %d files", (int)r, l.n);
    CHECK_HAS(err.message, "a/gone.parquet' is a symbolic link to nothing");
    CHECK(unlink(p) == 0);
    WALK_P(p, "%s/a/self.parquet", root); CHECK(symlink("self.parquet", p) == 0);
    r = walk_expand(root, &l, &err);
    CHECK_MSG(r == GPUFEED_ERR_IO && strstr(err.message, "cannot stat") && strstr(err.message, "a/self.parquet"),
              "a link to itself: %d %s", (int)r, err.message);
    WALK_P(q, "%s/*/*.parquet", root);
    r = walk_expand(q, &l, &err);
    CHECK_MSG(r != GPUFEED_OK && strstr(err.message, "a/self.parquet"), "a glob over it: %d %s", (int)r, err.message);
    CHECK(unlink(p) == 0);
    r = walk_expand(q, &l, &err);
    CHECK_MSG(r == GPUFEED_OK && l.n == 2, "the glob without it: %d, %d files (%s) %s", (int)r, l.n, l.all, r ? err.message : "");
    walk_rm(root);
}

/* run in a child as uid/gid 65534 when this process is root (whose reads
   no permission stops); *skip: why it could not */
static int walk_unprivileged(const char *what, void (*fn)(const char *root, int out), const char *root, char *res, size_t cap, const char **skip)
{
    int fd[2], st = 0;
    pid_t pid;
    ssize_t n, got = 0;
    *skip = NULL;
    if (geteuid() != 0) {
        if (pipe(fd) != 0) return -1;
        fn(root, fd[1]);
        close(fd[1]);
    } else {
        if (pipe(fd) != 0) return -1;
        fflush(NULL);
        pid = fork();
        if (pid < 0) { close(fd[0]); close(fd[1]); return -1; }
        if (pid == 0) {
            close(fd[0]);
            if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0) _exit(77);
            fn(root, fd[1]);
            _exit(0);
        }
        close(fd[1]);
        fd[1] = -1;
        while ((n = read(fd[0], res + got, cap - 1 - (size_t)got)) > 0) got += n;
        waitpid(pid, &st, 0);
        close(fd[0]);
        res[got] = 0;
        if (WIFEXITED(st) && WEXITSTATUS(st) == 77) { *skip = "cannot drop root to uid 65534 here (setuid refused)"; return 0; }
        (void)what;
        return 0;
    }
    while ((n = read(fd[0], res + got, cap - 1 - (size_t)got)) > 0) got += n;
    close(fd[0]);
    res[got] = 0;
    return 0;
}
/* the child's part: "rc files|message" for each spelling, one a line;
   "noperm" first when the unreadable directory reads after all */
static void walk_denied_child(const char *root, int out)
{
    static const char *const forms[5] = { "%s", "%s/**/*.parquet", "%s/*/*.parquet", "%s/*", "%s/s/*.parquet" };
    char p[512], line[4200];
    walk_list l;
    gpufeed_error err;
    int k;
    WALK_P(p, "%s/c", root);
    if (access(p, R_OK | X_OK) == 0) { WALK_P(line, "noperm\n"); if (write(out, line, strlen(line)) < 0) return; }
    for (k = 0; k < 5; k++) {
        gpufeed_result r;
        WALK_P(p, forms[k], root);
        r = walk_expand(p, &l, &err);
        WALK_P(line, "%d %d|%s\n", (int)r, l.n, r ? err.message : l.all);
        if (write(out, line, strlen(line)) < 0) return;
    }
}

/* A directory that cannot be read (mode 000), or read but not searched
   (0444), loses no file silently: every spelling of the tree (the
   directory, '**', a glob through it, a glob matching it) is an error
   naming it or its entry, as pyarrow raises EACCES. Run as uid 65534 when
   the test runs as root. */
static void test_walk_denied(void)
{
    char root[256], p[512], res[8192];
    const char *skip = NULL;
    int mode;
    if (!walk_tmp(root, sizeof root)) { CHECK_MSG(0, "mkdtemp: %s", strerror(errno)); return; }
    WALK_P(p, "%s/a", root); CHECK(mkdir(p, 0755) == 0);
    WALK_P(p, "%s/a/x.parquet", root); CHECK(walk_file(p) == 0);
    WALK_P(p, "%s/c", root); CHECK(mkdir(p, 0755) == 0);
    WALK_P(p, "%s/c/y.parquet", root); CHECK(walk_file(p) == 0);
    WALK_P(p, "%s/s", root); CHECK(mkdir(p, 0755) == 0);
    WALK_P(p, "%s/s/z.parquet", root); CHECK(walk_file(p) == 0);
    for (mode = 0; mode < 2; mode++) {
        char *line, *nl;
        int k = 0;
        WALK_P(p, "%s/c", root);
        CHECK(chmod(p, mode ? 0444 : 0) == 0);
        if (walk_unprivileged("denied", walk_denied_child, root, res, sizeof res, &skip) != 0) { CHECK_MSG(0, "pipe/fork: %s", strerror(errno)); break; }
        if (skip) { printf("SKIP test_walk_denied: %s\n", skip); break; }
        if (!strncmp(res, "noperm", 6)) { printf("SKIP test_walk_denied: a mode-000 directory reads here even as uid 65534\n"); break; }
        for (line = res; *line && (nl = strchr(line, '\n')) != NULL; line = nl + 1, k++) {
            int rc = atoi(line);
            const char *msg = strchr(line, '|') ? strchr(line, '|') + 1 : "";
            *nl = 0;
            if (k < 4) /* the directory, '**', '*' / '*' through c, '*' matching c: an error naming c */
                CHECK_MSG(rc == GPUFEED_ERR_IO && strstr(msg, "/c") && strstr(msg, "Permission denied"),
                          "mode %s, spelling %d: %s", mode ? "0444" : "000", k, line);
            else /* a glob beside it: its file */
                CHECK_MSG(rc == 0 && strstr(msg, "/s/z.parquet"), "mode %s, the glob beside it: %s", mode ? "0444" : "000", line);
        }
        CHECK_MSG(k == 5, "%d results from the child", k);
    }
    WALK_P(p, "%s/c", root);
    chmod(p, 0755);
    walk_rm(root);
}

/* Hive partitions (issue 49): `city=` is the empty string, as pyarrow,
   DuckDB and Polars read it (hashed as "", valid), and makes its key a
   string key; __HIVE_DEFAULT_PARTITION__ stays null (validity 0, the
   fill). A predicate city == '' keeps only that file. */
static void test_partition_empty_value(void)
{
    static const char *const vals[3] = { "", "__HIVE_DEFAULT_PARTITION__", "sf" };
    char root[256], p[512];
    const char *paths[1];
    gpufeed_feature ft[2];
    gpufeed_dataset_desc d;
    gpufeed_dataset *ds = NULL;
    gpufeed_reader *rd = NULL;
    gpufeed_reader_desc rdd;
    gpufeed_batch b;
    gpufeed_error err;
    gpufeed_where *w = NULL;
    int k, pass;
    if (!walk_tmp(root, sizeof root)) { CHECK_MSG(0, "mkdtemp: %s", strerror(errno)); return; }
    for (k = 0; k < 3; k++) {
        WALK_P(p, "%s/city=%s", root, vals[k]); CHECK(mkdir(p, 0755) == 0);
        WALK_P(p, "%s/city=%s/part-0.parquet", root, vals[k]); CHECK(walk_file(p) == 0);
    }
    paths[0] = root;
    for (pass = 0; pass < 2; pass++) {
        int64_t rows = 0;
        int32_t np = 0;
        memset(ft, 0, sizeof ft); memset(&d, 0, sizeof d); memset(&rdd, 0, sizeof rdd);
        ft[0].column = "city"; ft[0].dtype = GPUFEED_DT_I64; ft[0].hash_buckets = 1000000; ft[0].validity = 1; ft[0].fill = -1;
        ft[1].column = "v"; ft[1].dtype = GPUFEED_DT_I32;
        d.paths = paths; d.num_paths = 1; d.features = ft; d.num_features = 2;
        if (pass == 1) {
            if (gpufeed_where_parse(&w, "city == ''", &err)) { CHECK_MSG(0, "%s", err.message); break; }
            d.where = gpufeed_where_predicates(w, &np); d.num_where = np;
        }
        rdd.batch_rows = 16;
        if (gpufeed_dataset_open(&ds, &d, &err) || gpufeed_reader_open(&rd, ds, &rdd, &err)) {
            CHECK_MSG(0, "pass %d: %s", pass, err.message);
            if (ds) gpufeed_dataset_close(ds);
            ds = NULL;
            break;
        }
        while (gpufeed_reader_next(rd, &b) == GPUFEED_OK) {
            int64_t i;
            for (i = 0; i < b.num_rows; i++, rows++) {
                int64_t city;
                int file = pass ? 0 : (int)(rows / 3); /* sorted: "city=", "city=__HIVE...", "city=sf" */
                memcpy(&city, (const uint8_t *)b.data + i * b.row_bytes + b.feature_offset[0], 8);
                if (file == 1) CHECK_MSG(city == -1 && b.valid[0][i] == 0, "the default partition, row %lld: %lld, valid %d", (long long)rows,
                                         (long long)city, b.valid[0][i]);
                else CHECK_MSG(city == (int64_t)(gpufeed_hash64(vals[file], strlen(vals[file]), 0) % 1000000) && b.valid[0][i] == 1,
                               "'%s', row %lld: %lld, valid %d", vals[file], (long long)rows, (long long)city, b.valid[0][i]);
            }
        }
        CHECK_MSG(rows == (pass ? 3 : 9), "pass %d: %lld rows", pass, (long long)rows);
        gpufeed_reader_close(rd);
        gpufeed_dataset_close(ds);
        ds = NULL;
    }
    if (w) gpufeed_where_free(w);
    walk_rm(root);
}

/* The SAFE cast of integers to floats at the edge of each float's exact
   integers (issue 49: a mutant turning gf__int_exact's `>=` into `>` let
   16777217 become 16777216.0f): 2^24 and 2^24 + 2 are exact in f32,
   2^24 + 1 and -(2^24 + 1) are not (their index returned); 2^53 + 1 in
   f64, 2049 in f16; the UNSAFE cast rounds them. Then through a dataset:
   an INT64 column holding 16777217 read as f32 is an error naming the value. */
static void test_safe_cast_float_edges(void)
{
    static const struct { gpufeed_dtype dt; int64_t ok, bad; } cases[] = {
        { GPUFEED_DT_F32, 16777216, 16777217 }, { GPUFEED_DT_F32, 16777218, -16777217 },
        { GPUFEED_DT_F64, 9007199254740992ll, 9007199254740993ll }, { GPUFEED_DT_F16, 2048, 2049 },
        { GPUFEED_DT_BF16, 256, 257 },
    };
    gf__conv cv;
    uint64_t in[3];
    uint8_t out[3 * 8];
    size_t k;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        memset(&cv, 0, sizeof cv);
        cv.ck = GF__CK_I64; cv.dt = cases[k].dt;
        in[0] = (uint64_t)cases[k].ok; in[1] = (uint64_t)cases[k].ok; in[2] = (uint64_t)cases[k].bad;
        CHECK_MSG(gf__convert(&cv, in, out, 2) == -1, "case %d: %lld is exact", (int)k, (long long)cases[k].ok);
        CHECK_MSG(gf__convert(&cv, in, out, 3) == 2, "case %d: %lld is not exact", (int)k, (long long)cases[k].bad);
        cv.unsafe_cast = 1;
        CHECK_MSG(gf__convert(&cv, in, out, 3) == -1, "case %d: the unsafe cast rounds %lld", (int)k, (long long)cases[k].bad);
    }
    {   /* f32 of 16777217 rounds to 16777216 unsafe */
        float f;
        memset(&cv, 0, sizeof cv);
        cv.ck = GF__CK_I64; cv.dt = GPUFEED_DT_F32; cv.unsafe_cast = 1;
        in[0] = 16777217;
        CHECK(gf__convert(&cv, in, &f, 1) == -1 && f == 16777216.0f);
    }
    {   /* the same value in a file: the SAFE cast is an error naming it */
        static const char *paths[] = { "cast.parquet" };
        static const int64_t vals[4] = { 1, 16777216, 16777217, 5 };
        pqw_schema sch[2];
        pqw_page pg;
        pqw_buf body, file;
        pqw_chunk ch;
        pqw_rowgroup rg;
        pqw_file f;
        gpufeed_feature ft;
        gpufeed_dataset_desc d;
        gpufeed_dataset *ds = NULL;
        gpufeed_reader *rd = NULL;
        gpufeed_reader_desc rdd;
        gpufeed_batch b;
        gpufeed_error err;
        gpufeed_result r = GPUFEED_OK;
        memset(&body, 0, sizeof body); memset(&file, 0, sizeof file); memset(&ch, 0, sizeof ch); memset(&rg, 0, sizeof rg); memset(&f, 0, sizeof f);
        sch[0] = pqw_root(1);
        sch[1] = pqw_leaf("v", PQW_INT64, PQW_REQUIRED);
        pqw_plain_i64(&body, vals, 4);
        pg = pqw_data_page(&body, 4, PQW_PLAIN);
        ch.pages = &pg; ch.npages = 1; ch.physical = PQW_INT64; ch.path = "v";
        rg.chunks = &ch; rg.nchunks = 1;
        f.schema = sch; f.nschema = 2; f.rgs = &rg; f.nrgs = 1;
        pqw_build(&f, &file);
        memset(&ft, 0, sizeof ft); memset(&d, 0, sizeof d); memset(&rdd, 0, sizeof rdd);
        ft.column = "v"; ft.dtype = GPUFEED_DT_F32;
        d.paths = paths; d.num_paths = 1; d.features = &ft; d.num_features = 1;
        d.open_source = fn_open_source; d.source_user = &file;
        rdd.batch_rows = 4;
        if (gpufeed_dataset_open(&ds, &d, &err) || gpufeed_reader_open(&rd, ds, &rdd, &err)) CHECK_MSG(0, "%s", err.message);
        else {
            while ((r = gpufeed_reader_next(rd, &b)) == GPUFEED_OK) {}
            CHECK_MSG(r == GPUFEED_ERR_CORRUPT || r == GPUFEED_ERR_INVALID_ARG || r < 0, "16777217 as f32: %d", (int)r);
            CHECK_HAS(gpufeed_reader_error(rd), "16777217");
            CHECK_HAS(gpufeed_reader_error(rd), "f32");
        }
        gpufeed_reader_close(rd);
        gpufeed_dataset_close(ds);
        pqw_free(&body); pqw_free(&file);
    }
}

/* Partition predicates at each comparison's boundary (issue 49: a mutant
   turning the partition match's `<` into `<=` kept twice the rows): a tree
   n=1..4 (a 3-row file each) and city=la|ny|sf; each condition keeps the
   files pyarrow keeps, and no other file is opened. */
static void test_partition_predicates(void)
{
    static const struct { const char *where; int files; } cases[] = {
        { "n < 3", 2 }, { "n <= 3", 3 }, { "n > 2", 2 }, { "n >= 2", 3 }, { "n == 2", 1 }, { "n between 2 and 3", 2 },
        { "n in (1, 4)", 2 }, { "n < 1", 0 }, { "n > 4", 0 }, { "city < 'ny'", 1 }, { "city <= 'ny'", 3 }, { "city > 'ny'", 1 },
        { "city >= 'ny'", 3 }, { "n < 3 and city < 'ny'", 1 }, { "n <= 9223372036854775807", 4 }, { "n > -9223372036854775809", 4 },
    };
    static const char *const cities[4] = { "la", "ny", "sf", "ny" };
    char root[256], p[512];
    const char *paths[1];
    size_t k;
    int n;
    if (!walk_tmp(root, sizeof root)) { CHECK_MSG(0, "mkdtemp: %s", strerror(errno)); return; }
    for (n = 1; n <= 4; n++) {
        WALK_P(p, "%s/n=%d", root, n); CHECK(mkdir(p, 0755) == 0);
        WALK_P(p, "%s/n=%d/city=%s", root, n, cities[n - 1]); CHECK(mkdir(p, 0755) == 0);
        WALK_P(p, "%s/n=%d/city=%s/part-0.parquet", root, n, cities[n - 1]); CHECK(walk_file(p) == 0);
    }
    paths[0] = root;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        gpufeed_where *w = NULL;
        gpufeed_feature ft;
        gpufeed_dataset_desc d;
        gpufeed_dataset *ds = NULL;
        gpufeed_dataset_info info;
        gpufeed_error err;
        int32_t np = 0;
        if (gpufeed_where_parse(&w, cases[k].where, &err)) { CHECK_MSG(0, "%s: %s", cases[k].where, err.message); continue; }
        memset(&ft, 0, sizeof ft); memset(&d, 0, sizeof d);
        ft.column = "v"; ft.dtype = GPUFEED_DT_I32;
        d.paths = paths; d.num_paths = 1; d.features = &ft; d.num_features = 1;
        d.where = gpufeed_where_predicates(w, &np); d.num_where = np;
        if (gpufeed_dataset_open(&ds, &d, &err)) CHECK_MSG(0, "%s: %s", cases[k].where, err.message);
        else {
            gpufeed_dataset_get_info(ds, &info);
            CHECK_MSG(info.num_rows == 3 * cases[k].files, "%s: %lld rows, want %d (%d files)", cases[k].where, (long long)info.num_rows,
                      3 * cases[k].files, cases[k].files);
        }
        gpufeed_dataset_close(ds);
        gpufeed_where_free(w);
    }
    walk_rm(root);
}

int main(void)
{
    RUN(test_writer_roundtrip);
    RUN(test_tc_varints);
    RUN(test_tc_zigzag);
    RUN(test_tc_overlong);
    RUN(test_tc_field_headers);
    RUN(test_tc_skip_types);
    RUN(test_tc_depth);
    RUN(test_tc_list_sizes);
    RUN(test_tc_wrong_types);
    RUN(test_tc_truncated_footer);
    RUN(test_tc_unknown_fields);
    RUN(test_tc_mismatched_optional);
    RUN(test_rle_runs);
    RUN(test_rle_boundaries);
    RUN(test_rle_all_widths);
    RUN(test_rle_levels01);
    RUN(test_rle_truncated);
    RUN(test_rle_msb_known);
    RUN(test_snappy_vectors);
    RUN(test_snappy_roundtrip);
    RUN(test_snappy_elements);
    RUN(test_gather_dense);
    RUN(test_scatter_nulls);
    RUN(test_snappy_malformed);
    RUN(test_plain_fixed);
    RUN(test_plain_boolean);
    RUN(test_plain_byte_array);
    RUN(test_half_to_float);
    RUN(test_crc32);
    RUN(test_result_strings);
    RUN(test_delta_binary_packed);
    RUN(test_delta_wide_int32);
    RUN(test_lz4);
    RUN(test_dense_plain_null_fill);
    RUN(test_scratch_step);
    RUN(test_keep_budget);
    RUN(test_map_huge);
    RUN(test_dict_share);
    RUN(test_thrift_boundaries);
    RUN(test_mem_source_bounds);
    RUN(test_hash64_is_xxh64);
    RUN(test_prune_boundaries);
    RUN(test_convert_int_edges);
    RUN(test_codec_limits);
    RUN(test_rle_value_fits_width);
    RUN(test_lz4_bounds);
    RUN(test_units_exact_remainder);
    RUN(test_dict_in_place_shared);
    RUN(test_dict_skip_bad_index);
    RUN(test_plan_big_pages);
    RUN(test_streamed_pages);
    RUN(test_streamed_pieces);
    RUN(test_release_batched);
    RUN(test_release_row_group);
    RUN(test_window_table);
    RUN(test_unit_ring);
    RUN(test_prune_all_null);
    RUN(test_reader_batch_sizes);
    RUN(test_where_big_ints);
    RUN(test_walk_links);
    RUN(test_walk_denied);
    RUN(test_partition_empty_value);
    RUN(test_safe_cast_float_edges);
    RUN(test_partition_predicates);
    return TEST_SUMMARY();
}
