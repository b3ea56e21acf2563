/* Token packing and mixtures of datasets (gpufeed_feature.pack,
   gpufeed_loader_open_mixture) over tests/data/tokens (tests/make_token_data.py:
   list<int32> documents of distinct tokens, null and empty lists, null
   elements, pages that begin inside documents, three codecs, v1 and v2 pages,
   with and without dictionaries and a page index).

   The reference is the column read through gpufeed_column_read (levels and
   values, the lower level API), concatenated and cut every T tokens. Checked:
   the dataset's order equals it (both layouts, i32 and i64, eos); shuffled
   packing is the same for 1..8 workers and under random timing; every token
   comes once an epoch but for the reported tail; positions count from 0 at
   every document's start; resume at random (epoch, batch); ranks disjoint
   with equal batch counts; elastic worlds 1/2/4 the same global batches; the
   tensor cache the same batches as the source; a 3:1 mixture within a row of
   its target in every batch, deterministic, resumable, with ranks and elastic
   worlds, until=longest, with packing, on the threads it was given; bad
   input named.

   cc -O1 -g -fsanitize=address,undefined -I. tests/test_pack.c -o test_pack -lpthread -lm -ldl
   (tests/run.sh builds it under ASan+UBSan and TSan; it links the
   implementation when GPUFEED_IMPLEMENTATION_DONE is defined) */
#define _POSIX_C_SOURCE 200809L
#ifndef GPUFEED_IMPLEMENTATION_DONE
#define GPUFEED_IMPLEMENTATION
#endif
#include "gpufeed.h"
#include "tests/gf_test.h"
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <unistd.h>
#include <dirent.h>

#define DIR_ "tests/data/tokens/"
static const char *const A_FILES[] = { DIR_ "a_0.parquet", DIR_ "a_1.parquet", DIR_ "a_2.parquet" };
static const char *const B_FILES[] = { DIR_ "b_0.parquet" };
#define SRC_B_BASE ((int64_t)1 << 30)

/* ---- the reference: documents through the column reader ---- */

typedef struct ref {
    int64_t *tok;                      /* every document's tokens, in dataset order */
    int64_t *doc;                      /* [ndocs + 1] where each document starts */
    int64_t ntok, ndocs;
} ref;

static void ref_push(ref *r, int64_t t, int64_t *cap)
{
    if (r->ntok == *cap) {
        *cap = *cap ? *cap * 2 : 4096;
        r->tok = (int64_t *)realloc(r->tok, (size_t)*cap * sizeof(int64_t));
    }
    r->tok[r->ntok++] = t;
}

/* the files' documents (null elements read as 0, eos after a document of
   any token when use_eos) */
static void ref_load(ref *r, const char *const *files, int nfiles, int use_eos, int64_t eos)
{
    int64_t cap = 0, dcap = 1024;
    int fi;
    memset(r, 0, sizeof *r);
    r->doc = (int64_t *)malloc((size_t)dcap * sizeof(int64_t));
    r->doc[0] = 0;
    for (fi = 0; fi < nfiles; fi++) {
        gpufeed_file_desc fd;
        gpufeed_file *f;
        gpufeed_error err;
        int32_t col, rg;
        memset(&fd, 0, sizeof fd);
        fd.path = files[fi];
        if (gpufeed_file_open(&f, &fd, &err)) { CHECK_MSG(0, "%s", err.message); return; }
        col = gpufeed_file_find_column(f, "input_ids.list.element");
        CHECK(col >= 0 && gpufeed_file_metadata(f)->columns[col].max_def == 3);
        for (rg = 0; col >= 0 && rg < gpufeed_file_metadata(f)->num_row_groups; rg++) {
            gpufeed_column *c;
            gpufeed_column_batch b;
            gpufeed_result res;
            int64_t len = -1;
            if (gpufeed_column_open(&c, f, rg, col, NULL, &err)) { CHECK_MSG(0, "%s", err.message); break; }
            while ((res = gpufeed_column_read(c, &b)) == GPUFEED_OK) {
                int64_t i, v = 0;
                for (i = 0; i < b.num_levels; i++) {
                    int16_t rp = b.rep_levels[i], df = b.def_levels[i];
                    if (rp == 0) { /* a row: the one before ends */
                        if (len >= 0) {
                            if (use_eos && len > 0) ref_push(r, eos, &cap);
                            if (r->ndocs + 2 > dcap) { dcap *= 2; r->doc = (int64_t *)realloc(r->doc, (size_t)dcap * sizeof(int64_t)); }
                            r->doc[++r->ndocs] = r->ntok;
                        }
                        len = 0;
                    }
                    if (df == 3) { ref_push(r, ((const int32_t *)b.values)[v++], &cap); len++; }
                    else if (df == 2) { ref_push(r, 0, &cap); len++; }
                }
            }
            CHECK(res == GPUFEED_DONE);
            if (len >= 0) {
                if (use_eos && len > 0) ref_push(r, eos, &cap);
                if (r->ndocs + 2 > dcap) { dcap *= 2; r->doc = (int64_t *)realloc(r->doc, (size_t)dcap * sizeof(int64_t)); }
                r->doc[++r->ndocs] = r->ntok;
            }
            gpufeed_column_close(c);
        }
        gpufeed_file_close(f);
    }
}

static void ref_free(ref *r) { free(r->tok); free(r->doc); memset(r, 0, sizeof *r); }

/* ---- datasets and loaders ---- */

typedef struct popts {
    int32_t T, positions, use_eos, dtype_i64, per_feature;
    int64_t eos, unit_rows;
} popts;

static gpufeed_dataset *open_pack(const char *const *files, int n, const popts *o, gpufeed_error *err)
{
    gpufeed_feature ft[2];
    gpufeed_dataset_desc dd;
    gpufeed_dataset *ds = NULL;
    int k = 0;
    memset(ft, 0, sizeof ft);
    memset(&dd, 0, sizeof dd);
    ft[0].column = "input_ids"; ft[0].dtype = o->dtype_i64 ? GPUFEED_DT_I64 : GPUFEED_DT_I32;
    ft[0].pack = o->T; ft[0].use_eos = o->use_eos; ft[0].eos = o->eos;
    k = 1;
    if (o->positions) { ft[1] = ft[0]; ft[1].positions = 1; ft[1].dtype = GPUFEED_DT_I32; k = 2; }
    dd.paths = files; dd.num_paths = n; dd.features = ft; dd.num_features = k;
    dd.unit_rows = o->unit_rows;
    dd.layout = o->per_feature ? GPUFEED_LAYOUT_PER_FEATURE : GPUFEED_LAYOUT_ROW_MAJOR;
    if (gpufeed_dataset_open(&ds, &dd, err)) return NULL;
    return ds;
}

/* token j (0 .. T * rows) of a batch, and its position */
static int64_t tok_at(const gpufeed_batch *b, int64_t j, int32_t T)
{
    const gpufeed_feature *f = &b->feature_info[0];
    const size_t z = gpufeed_dtype_size(f->dtype);
    const uint8_t *p = b->data ? (const uint8_t *)b->data + (size_t)(j / T) * (size_t)b->row_bytes + (size_t)b->feature_offset[0] + (size_t)(j % T) * z
                               : (const uint8_t *)b->features[0] + (size_t)j * z;
    if (z == 4) { int32_t v; memcpy(&v, p, 4); return v; }
    { int64_t v; memcpy(&v, p, 8); return v; }
}
static int64_t pos_at(const gpufeed_batch *b, int64_t j, int32_t T)
{
    const uint8_t *p = b->data ? (const uint8_t *)b->data + (size_t)(j / T) * (size_t)b->row_bytes + (size_t)b->feature_offset[1] + (size_t)(j % T) * 4
                               : (const uint8_t *)b->features[1] + (size_t)j * 4;
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* every batch's hash, `max` at most: how many */
static int64_t run_hashes(gpufeed_loader *l, const gpufeed_dataset *ds, uint64_t *h, int64_t max, gpufeed_stats *st)
{
    gpufeed_batch b;
    gpufeed_result r;
    int64_t n = 0;
    while ((r = gpufeed_loader_next(l, &b)) == GPUFEED_OK) {
        if (n < max) h[n] = gpufeed_batch_hash(ds, &b) ^ ((uint64_t)b.epoch << 48) ^ ((uint64_t)b.index << 20);
        n++;
    }
    CHECK_MSG(r == GPUFEED_DONE, "%s", gpufeed_loader_error(l));
    if (st) gpufeed_loader_stats(l, st);
    return n;
}

static gpufeed_loader_desc ldesc(int64_t B, int32_t workers, uint64_t seed, int32_t window, int64_t epochs)
{
    gpufeed_loader_desc ld;
    memset(&ld, 0, sizeof ld);
    ld.batch_rows = B; ld.workers = workers; ld.seed = seed; ld.shuffle_window = window; ld.epochs = epochs;
    return ld;
}

/* ---- packing ---- */

/* dataset order: the reference cut every T, with positions; both layouts,
   i32 and i64 tokens, with and without eos, units cut inside row groups */
static void test_pack_order(void)
{
    static const popts cases[] = {
        { 64, 1, 0, 0, 0, 0, 0 }, { 64, 1, 0, 0, 0, 0, 150 }, { 37, 1, 1, 1, 1, 50257, 97 }, { 1, 0, 0, 0, 0, 0, 0 }, { 1000, 1, 1, 0, 0, 7, 0 },
    };
    size_t c;
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const popts *o = &cases[c];
        ref r;
        gpufeed_error err;
        gpufeed_dataset *ds;
        gpufeed_loader *l;
        gpufeed_loader_desc ld = ldesc(5, 2, 0, 0, 1);
        gpufeed_batch b;
        gpufeed_result res;
        gpufeed_stats st;
        int64_t at = 0, bad = 0, rows = 0;
        ref_load(&r, A_FILES, 3, o->use_eos, o->eos);
        ds = open_pack(A_FILES, 3, o, &err);
        CHECK_MSG(ds != NULL, "%s", err.message);
        if (!ds) { ref_free(&r); continue; }
        ld.no_unit_shuffle = 1;
        CHECK_MSG(gpufeed_loader_open(&l, ds, &ld, &err) == GPUFEED_OK, "%s", err.message);
        while ((res = gpufeed_loader_next(l, &b)) == GPUFEED_OK) {
            int64_t j, d = 0;
            for (j = 0; j < b.num_rows * o->T; j++, at++) {
                while (d < r.ndocs && r.doc[d + 1] <= at) d++;
                if (tok_at(&b, j, o->T) != r.tok[at]) bad++;
                if (o->positions && pos_at(&b, j, o->T) != at - r.doc[d]) bad++;
            }
            rows += b.num_rows;
        }
        CHECK_MSG(res == GPUFEED_DONE, "%s", gpufeed_loader_error(l));
        CHECK_MSG(bad == 0, "case %d: %lld tokens or positions differ from the reference", (int)c, (long long)bad);
        CHECK_MSG(rows == r.ntok / o->T, "case %d: %lld rows, want %lld", (int)c, (long long)rows, (long long)(r.ntok / o->T));
        gpufeed_loader_stats(l, &st);
        CHECK_MSG((int64_t)st.tokens_dropped == r.ntok % o->T, "case %d: tokens dropped %llu, the tail is %lld", (int)c,
                  (unsigned long long)st.tokens_dropped, (long long)(r.ntok % o->T));
        gpufeed_loader_close(l);
        gpufeed_dataset_close(ds);
        ref_free(&r);
    }
}

/* shuffled packing: the same batches for 1..8 workers and under random timing */
static void test_pack_workers(void)
{
    popts o = { 48, 1, 1, 0, 0, 3, 120 };
    gpufeed_error err;
    gpufeed_dataset *ds = open_pack(A_FILES, 3, &o, &err);
    uint64_t h0[4096], h[4096];
    int64_t n0 = 0;
    int32_t w;
    CHECK_MSG(ds != NULL, "%s", err.message);
    if (!ds) return;
    for (w = 1; w <= 8; w++) {
        int jit;
        for (jit = 0; jit < (w == 3 || w == 8 ? 2 : 1); jit++) {
            gpufeed_loader_desc ld = ldesc(4, w, 11, 2, 2);
            gpufeed_loader *l;
            int64_t n;
            ld.debug_jitter_us = jit ? 300 : 0;
            if (gpufeed_loader_open(&l, ds, &ld, &err)) { CHECK_MSG(0, "%s", err.message); continue; }
            n = run_hashes(l, ds, w == 1 ? h0 : h, 4096, NULL);
            gpufeed_loader_close(l);
            if (w == 1 && !jit) { n0 = n; continue; }
            CHECK_MSG(n == n0 && memcmp(h, h0, (size_t)(n < 4096 ? n : 4096) * 8) == 0, "workers %d jitter %d: other batches", w, jit);
        }
    }
    gpufeed_dataset_close(ds);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* a shuffled epoch delivers every token once but the reported tail, each
   document's tokens in order with positions from 0 */
static void test_pack_multiset(void)
{
    popts o = { 50, 1, 0, 0, 0, 0, 100 };
    ref r;
    gpufeed_error err;
    gpufeed_dataset *ds = open_pack(A_FILES, 3, &o, &err);
    gpufeed_loader *l;
    gpufeed_loader_desc ld = ldesc(3, 3, 5, 3, 2);
    gpufeed_batch b;
    gpufeed_result res;
    gpufeed_stats st;
    int64_t *got = NULL, n = 0, cap = 0, e = -1, bad_pos = 0, i, k, missing = 0;
    ref_load(&r, A_FILES, 3, 0, 0);
    CHECK_MSG(ds != NULL, "%s", err.message);
    if (!ds) { ref_free(&r); return; }
    CHECK(gpufeed_loader_open(&l, ds, &ld, &err) == GPUFEED_OK);
    for (;;) {
        res = gpufeed_loader_next(l, &b);
        if (res != GPUFEED_OK || b.epoch != e) { /* an epoch ended: compare */
            if (e >= 0) {
                int64_t *want = (int64_t *)malloc((size_t)r.ntok * sizeof(int64_t));
                memcpy(want, r.tok, (size_t)r.ntok * sizeof(int64_t));
                qsort(want, (size_t)r.ntok, sizeof(int64_t), cmp_i64);
                qsort(got, (size_t)n, sizeof(int64_t), cmp_i64);
                for (i = 0, k = 0; i < r.ntok; i++) { /* got is a sub-multiset of want */
                    if (k < n && got[k] == want[i]) k++;
                    else missing++;
                }
                CHECK_MSG(k == n, "epoch %lld: %lld delivered tokens are not the dataset's", (long long)e, (long long)(n - k));
                CHECK_MSG(missing == r.ntok % o.T && missing < o.T, "epoch %lld: %lld tokens missing, the tail is %lld", (long long)e, (long long)missing,
                          (long long)(r.ntok % o.T));
                free(want);
            }
            if (res != GPUFEED_OK) break;
            e = b.epoch; n = 0; missing = 0;
        }
        for (i = 0; i < b.num_rows * o.T; i++) {
            int64_t t = tok_at(&b, i, o.T), p = pos_at(&b, i, o.T);
            if (n == cap) { cap = cap ? cap * 2 : 65536; got = (int64_t *)realloc(got, (size_t)cap * sizeof(int64_t)); }
            got[n++] = t;
            if (t != 0 && (t & 1023) != p) bad_pos++; /* a token's place in its document (null elements are 0) */
            if (i % o.T > 0 && p != 0 && p != pos_at(&b, i - 1, o.T) + 1) bad_pos++;
        }
    }
    CHECK_MSG(res == GPUFEED_DONE, "%s", gpufeed_loader_error(l));
    CHECK_MSG(bad_pos == 0, "%lld positions wrong", (long long)bad_pos);
    gpufeed_loader_stats(l, &st);
    CHECK_MSG(st.tokens_dropped == 2 * (uint64_t)(r.ntok % o.T), "tokens dropped %llu", (unsigned long long)st.tokens_dropped);
    gpufeed_loader_close(l);
    gpufeed_dataset_close(ds);
    free(got);
    ref_free(&r);
}

/* resume at random (epoch, batch): the rest of the uninterrupted stream */
static void test_pack_resume(void)
{
    popts o = { 40, 1, 1, 0, 0, 9, 90 };
    gpufeed_error err;
    gpufeed_dataset *ds = open_pack(A_FILES, 3, &o, &err);
    static uint64_t full[8192], part[8192];
    int64_t n, t, per;
    uint64_t x = 12345;
    gpufeed_loader *l;
    gpufeed_loader_desc ld = ldesc(6, 2, 21, 2, 3);
    CHECK_MSG(ds != NULL, "%s", err.message);
    if (!ds) return;
    CHECK(gpufeed_loader_open(&l, ds, &ld, &err) == GPUFEED_OK);
    per = gpufeed_loader_epoch_batches(l, 1);
    n = run_hashes(l, ds, full, 8192, NULL);
    gpufeed_loader_close(l);
    CHECK(n > 3 * per - 3 && n <= 8192);
    for (t = 0; t < 12; t++) {
        gpufeed_loader_desc rd = ld;
        int64_t k, e, m, skip;
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        e = (int64_t)((x >> 33) % 3);
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        k = (int64_t)((x >> 33) % (uint64_t)(per + 1));
        rd.start_epoch = e; rd.start_batch = k; rd.epochs = 3 - e;
        rd.workers = 1 + (int32_t)(t % 4);
        if (gpufeed_loader_open(&l, ds, &rd, &err)) { CHECK_MSG(0, "(%lld, %lld): %s", (long long)e, (long long)k, err.message); continue; }
        m = run_hashes(l, ds, part, 8192, NULL);
        gpufeed_loader_close(l);
        skip = n - m; /* the resumed stream is the uninterrupted one's end */
        CHECK_MSG(m <= n && memcmp(part, full + skip, (size_t)m * 8) == 0, "resume at (%lld, %lld): other batches", (long long)rd.start_epoch,
                  (long long)rd.start_batch);
    }
    gpufeed_dataset_close(ds);
}

/* ranks: equal batch counts, disjoint tokens, none outside the dataset */
static void test_pack_ranks(void)
{
    popts o = { 32, 0, 0, 0, 0, 0, 60 };
    gpufeed_error err;
    gpufeed_dataset *ds = open_pack(A_FILES, 3, &o, &err);
    int32_t world;
    CHECK_MSG(ds != NULL, "%s", err.message);
    if (!ds) return;
    for (world = 2; world <= 4; world += 2) {
        int64_t *all = NULL, n = 0, cap = 0, nb0 = -1, i, dup = 0;
        int32_t rank;
        for (rank = 0; rank < world; rank++) {
            gpufeed_loader_desc ld = ldesc(4, 2, 3, 1, 1);
            gpufeed_loader *l;
            gpufeed_batch b;
            int64_t nb = 0;
            ld.world = world; ld.rank = rank;
            /* the shards differ by more than a batch of tokens: refused, naming the loss in tokens */
            CHECK(gpufeed_loader_open(&l, ds, &ld, &err) == GPUFEED_ERR_INVALID_ARG);
            CHECK_HAS(err.message, "tokens");
            ld.even = GPUFEED_EVEN_DROP_ANY;
            if (gpufeed_loader_open(&l, ds, &ld, &err)) { CHECK_MSG(0, "%s", err.message); continue; }
            while (gpufeed_loader_next(l, &b) == GPUFEED_OK) {
                for (i = 0; i < b.num_rows * o.T; i++) {
                    if (n == cap) { cap = cap ? cap * 2 : 65536; all = (int64_t *)realloc(all, (size_t)cap * sizeof(int64_t)); }
                    all[n++] = tok_at(&b, i, o.T);
                }
                nb++;
            }
            if (nb0 < 0) nb0 = nb;
            CHECK_MSG(nb == nb0, "world %d rank %d: %lld batches, rank 0 %lld", world, rank, (long long)nb, (long long)nb0);
            gpufeed_loader_close(l);
        }
        qsort(all, (size_t)n, sizeof(int64_t), cmp_i64);
        for (i = 1; i < n; i++) dup += all[i] != 0 && all[i] == all[i - 1];
        CHECK_MSG(dup == 0, "world %d: %lld tokens delivered twice", world, (long long)dup);
        free(all);
    }
    gpufeed_dataset_close(ds);
}

/* elastic mode: the same global batches (rows in order) for worlds 1, 2, 4 */
static void test_pack_elastic(void)
{
    popts o = { 24, 1, 0, 0, 0, 0, 80 };
    gpufeed_error err;
    gpufeed_dataset *ds = open_pack(A_FILES, 3, &o, &err);
    static uint64_t rows1[65536], rowsw[65536];
    int64_t n1 = 0;
    int32_t world;
    CHECK_MSG(ds != NULL, "%s", err.message);
    if (!ds) return;
    for (world = 1; world <= 4; world *= 2) {
        int32_t rank;
        int64_t nw = 0;
        for (rank = 0; rank < world; rank++) {
            gpufeed_loader_desc ld = ldesc(0, 2, 8, 2, 2);
            gpufeed_loader *l;
            gpufeed_batch b;
            ld.global_batch_rows = 8; ld.world = world; ld.rank = rank;
            if (gpufeed_loader_open(&l, ds, &ld, &err)) { CHECK_MSG(0, "%s", err.message); continue; }
            while (gpufeed_loader_next(l, &b) == GPUFEED_OK) {
                int64_t q;
                for (q = 0; q < b.num_rows; q++) { /* its place in the global stream */
                    int64_t at = (b.epoch * 100000 + b.index) * 8 + b.slice_start + q;
                    uint64_t hv = gpufeed_batch_row_hash(ds, &b, q);
                    if (world == 1 && n1 < 65536) { rows1[n1++] = hv ^ (uint64_t)at * 0x9E3779B97F4A7C15ull; }
                    else if (nw < 65536) rowsw[nw++] = hv ^ (uint64_t)at * 0x9E3779B97F4A7C15ull;
                }
            }
            gpufeed_loader_close(l);
        }
        if (world == 1) continue;
        qsort(rows1, (size_t)n1, 8, cmp_i64);
        qsort(rowsw, (size_t)nw, 8, cmp_i64);
        CHECK_MSG(nw == n1 && memcmp(rows1, rowsw, (size_t)n1 * 8) == 0, "world %d: other global batches", world);
    }
    gpufeed_dataset_close(ds);
}

/* the tensor cache: the same batches built, served from memory, read unit by unit */
static void test_pack_cache(void)
{
    popts o = { 56, 1, 1, 0, 0, 2, 130 };
    gpufeed_error err;
    gpufeed_dataset *ds = open_pack(A_FILES, 3, &o, &err);
    static uint64_t h0[4096], h1[4096];
    char dir[] = "/tmp/gpufeed-test-pack-XXXXXX";
    int64_t n0, n1;
    int round;
    gpufeed_cache_desc cd;
    gpufeed_stats st;
    gpufeed_loader *l;
    gpufeed_loader_desc ld = ldesc(5, 2, 4, 2, 2);
    CHECK_MSG(ds != NULL, "%s", err.message);
    if (!ds || !mkdtemp(dir)) { gpufeed_dataset_close(ds); return; }
    CHECK(gpufeed_loader_open(&l, ds, &ld, &err) == GPUFEED_OK);
    n0 = run_hashes(l, ds, h0, 4096, NULL);
    gpufeed_loader_close(l);
    memset(&cd, 0, sizeof cd);
    cd.dir = dir;
    for (round = 0; round < 3; round++) { /* built; served from memory; read at every use */
        gpufeed_loader_desc cl = ld;
        cd.no_map = round == 2;
        cl.cache = &cd;
        if (gpufeed_loader_open(&l, ds, &cl, &err)) { CHECK_MSG(0, "%s", err.message); continue; }
        n1 = run_hashes(l, ds, h1, 4096, &st);
        CHECK_MSG(n1 == n0 && memcmp(h0, h1, (size_t)(n0 < 4096 ? n0 : 4096) * 8) == 0, "round %d: other batches from the cache", round);
        if (round > 0)
            CHECK_MSG(gpufeed_loader_epoch_bytes(l, 0) + gpufeed_loader_epoch_bytes(l, 1) == 0 && st.units_from_cache > 0, "round %d: %llu source bytes read",
                      round, (unsigned long long)(gpufeed_loader_epoch_bytes(l, 0) + gpufeed_loader_epoch_bytes(l, 1)));
        gpufeed_loader_close(l);
    }
    { /* another T reads the same cache: packing happens after it */
        popts o2 = o;
        gpufeed_dataset *d2;
        gpufeed_loader_desc cl = ld;
        o2.T = 19; o2.positions = 0;
        d2 = open_pack(A_FILES, 3, &o2, &err);
        cl.cache = &cd; cd.no_map = 0;
        if (d2 && gpufeed_loader_open(&l, d2, &cl, &err) == GPUFEED_OK) {
            (void)run_hashes(l, d2, h1, 4096, &st);
            CHECK_MSG(gpufeed_loader_epoch_bytes(l, 0) == 0 && st.units_from_cache > 0, "pack 19: %llu source bytes read (the cache is T's own?)",
                      (unsigned long long)gpufeed_loader_epoch_bytes(l, 0));
            gpufeed_loader_close(l);
        } else CHECK_MSG(0, "%s", err.message);
        gpufeed_dataset_close(d2);
    }
    {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        CHECK(system(cmd) == 0);
    }
    gpufeed_dataset_close(ds);
}

/* ---- mixtures ---- */

static gpufeed_dataset *open_plain(const char *const *files, int n, gpufeed_error *err)
{
    gpufeed_feature ft[1];
    gpufeed_dataset_desc dd;
    gpufeed_dataset *ds = NULL;
    memset(ft, 0, sizeof ft);
    memset(&dd, 0, sizeof dd);
    ft[0].column = "id"; ft[0].dtype = GPUFEED_DT_I64;
    dd.paths = files; dd.num_paths = n; dd.features = ft; dd.num_features = 1;
    dd.unit_rows = 300;
    if (gpufeed_dataset_open(&ds, &dd, err)) return NULL;
    return ds;
}

static gpufeed_loader *open_mix(gpufeed_dataset *a, double wa, gpufeed_dataset *b, double wb, int32_t until, const gpufeed_loader_desc *ld,
                                gpufeed_error *err)
{
    gpufeed_mix_source src[2];
    gpufeed_mixture_desc md;
    gpufeed_loader *l = NULL;
    src[0].dataset = a; src[0].weight = wa;
    src[1].dataset = b; src[1].weight = wb;
    memset(&md, 0, sizeof md);
    md.sources = src; md.num_sources = 2; md.until = until;
    if (gpufeed_loader_open_mixture(&l, &md, ld, err)) return NULL;
    return l;
}

/* a row's source: B's ids and tokens are its own */
static int row_from_b(const gpufeed_batch *b, int64_t q, int packed, int32_t T)
{
    if (packed) return tok_at(b, q * T, T) >= SRC_B_BASE || tok_at(b, q * T + T - 1, T) >= SRC_B_BASE;
    {
        int64_t v;
        memcpy(&v, (const uint8_t *)b->data + (size_t)q * (size_t)b->row_bytes, 8);
        return v >= 100000;
    }
}

/* 3:1 (and 1:2.5) mixtures: every batch within a row of its target, the
   running total too; the same batches for any workers and timing */
static void test_mix_proportions(void)
{
    static const double w[][2] = { { 3, 1 }, { 1, 2.5 }, { 0.75, 0.25 } };
    static const int64_t Bs[] = { 8, 10, 7 };
    gpufeed_error err;
    gpufeed_dataset *a = open_plain(A_FILES, 3, &err), *b = open_plain(B_FILES, 1, &err);
    size_t c;
    CHECK_MSG(a && b, "%s", err.message);
    for (c = 0; a && b && c < sizeof w / sizeof w[0]; c++) {
        const double pb = w[c][1] / (w[c][0] + w[c][1]);
        static uint64_t h0[4096], h[4096];
        int64_t n0 = 0;
        int32_t workers;
        for (workers = 1; workers <= 5; workers += 2) {
            gpufeed_loader_desc ld = ldesc(Bs[c], workers, 17, 2, 2);
            gpufeed_loader *l;
            gpufeed_batch bt;
            int64_t nb = 0, k, cum = 0, cumrows = 0, e = -1, bad = 0, drift = 0;
            ld.debug_jitter_us = workers == 5 ? 200 : 0;
            l = open_mix(a, w[c][0], b, w[c][1], GPUFEED_UNTIL_FIRST, &ld, &err);
            if (!l) { CHECK_MSG(0, "%s", err.message); continue; }
            while (gpufeed_loader_next(l, &bt) == GPUFEED_OK) {
                int64_t nbr = 0, q;
                double target;
                if (bt.epoch != e) { e = bt.epoch; cum = 0; cumrows = 0; }
                for (q = 0; q < bt.num_rows; q++) nbr += row_from_b(&bt, q, 0, 0);
                target = (double)bt.num_rows * pb;
                if (fabs((double)nbr - target) > 1.0) bad++;
                cum += nbr; cumrows += bt.num_rows;
                if (fabs((double)cum - (double)cumrows * pb) > 1.0) drift++;
                if (nb < 4096) h[nb] = gpufeed_batch_hash(a, &bt);
                nb++;
            }
            CHECK_MSG(bad == 0 && drift == 0, "weights %g:%g: %lld batches off their target by more than a row, %lld running totals", w[c][0], w[c][1],
                      (long long)bad, (long long)drift);
            if (workers == 1) { n0 = nb; memcpy(h0, h, sizeof h0); }
            else {
                for (k = 0; k < nb && k < 4096 && h[k] == h0[k]; k++) {}
                CHECK_MSG(nb == n0 && (k == nb || k == 4096), "weights %g:%g, %d workers: other batches (from %lld)", w[c][0], w[c][1], workers, (long long)k);
            }
            gpufeed_loader_close(l);
        }
    }
    gpufeed_dataset_close(a);
    gpufeed_dataset_close(b);
}

/* until=first ends with the first source's end; until=longest goes on until
   every source gave all its rows, restarting the short one */
static void test_mix_until(void)
{
    gpufeed_error err;
    gpufeed_dataset *a = open_plain(A_FILES, 3, &err), *b = open_plain(B_FILES, 1, &err);
    int32_t u;
    int64_t nbf = 0;
    CHECK_MSG(a && b, "%s", err.message);
    for (u = 0; a && b && u < 2; u++) {
        gpufeed_loader_desc ld = ldesc(10, 2, 5, 1, 1);
        gpufeed_loader *l = open_mix(a, 1, b, 1, u, &ld, &err);
        gpufeed_batch bt;
        gpufeed_stats st;
        int64_t ra = 0, rb = 0, nb = 0, q, *seen = (int64_t *)calloc(900, sizeof(int64_t)), bdistinct = 0;
        if (!l) { CHECK_MSG(0, "%s", err.message); free(seen); continue; }
        while (gpufeed_loader_next(l, &bt) == GPUFEED_OK) {
            for (q = 0; q < bt.num_rows; q++) {
                int64_t v;
                memcpy(&v, (const uint8_t *)bt.data + (size_t)q * (size_t)bt.row_bytes, 8);
                if (v >= 100000) { rb++; if (v - 100000 < 900 && !seen[v - 100000]++) bdistinct++; }
                else ra++;
            }
            nb++;
        }
        gpufeed_loader_stats(l, &st);
        if (u == GPUFEED_UNTIL_FIRST) {
            nbf = nb;
            CHECK_MSG(rb <= 800 && rb >= 790 && st.rows_dropped > 0, "until=first: %lld rows of B (it has 800), rows dropped %llu", (long long)rb,
                      (unsigned long long)st.rows_dropped);
        } else {
            CHECK_MSG(nb > nbf && ra >= 2200 && bdistinct == 800 && rb > 800 && st.rows_repeated > 0,
                      "until=longest: %lld batches (first: %lld), %lld rows of A (it has 2200), %lld distinct of B, repeated %llu", (long long)nb,
                      (long long)nbf, (long long)ra, (long long)bdistinct, (unsigned long long)st.rows_repeated);
            CHECK(gpufeed_loader_epoch_batches(l, 0) == nb);
        }
        gpufeed_loader_close(l);
        free(seen);
    }
    gpufeed_dataset_close(a);
    gpufeed_dataset_close(b);
}

/* packing inside a mixture: proportions in tokens; resume at random points;
   ranks with equal batch counts; elastic worlds the same global batches */
static void test_mix_pack(void)
{
    popts o = { 32, 1, 0, 0, 0, 0, 120 };
    gpufeed_error err;
    gpufeed_dataset *a = open_pack(A_FILES, 3, &o, &err), *b = open_pack(B_FILES, 1, &o, &err);
    static uint64_t full[8192], part[8192];
    gpufeed_loader_desc ld = ldesc(8, 2, 9, 2, 2);
    gpufeed_loader *l;
    gpufeed_batch bt;
    int64_t n = 0, bad = 0, t, per;
    int32_t world;
    uint64_t x = 99;
    CHECK_MSG(a && b, "%s", err.message);
    if (!a || !b) { gpufeed_dataset_close(a); gpufeed_dataset_close(b); return; }
    l = open_mix(a, 3, b, 1, GPUFEED_UNTIL_LONGEST, &ld, &err);
    CHECK_MSG(l != NULL, "%s", err.message);
    if (!l) { gpufeed_dataset_close(a); gpufeed_dataset_close(b); return; }
    per = gpufeed_loader_epoch_batches(l, 0);
    while (gpufeed_loader_next(l, &bt) == GPUFEED_OK) {
        int64_t q, nbr = 0;
        for (q = 0; q < bt.num_rows; q++) nbr += row_from_b(&bt, q, 1, o.T);
        if (nbr != 2) bad++; /* 8 rows at 3:1: 2 from B, every batch */
        if (n < 8192) full[n] = gpufeed_batch_hash(a, &bt) ^ ((uint64_t)bt.epoch << 48) ^ ((uint64_t)bt.index << 20);
        n++;
    }
    CHECK_MSG(bad == 0, "%lld batches without 2 of their 8 rows from B", (long long)bad);
    gpufeed_loader_close(l);
    for (t = 0; t < 8; t++) { /* resume */
        gpufeed_loader_desc rd = ld;
        int64_t m;
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        rd.start_epoch = (int64_t)((x >> 33) % 2);
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        rd.start_batch = (int64_t)((x >> 33) % (uint64_t)(per + 1));
        rd.epochs = 2 - rd.start_epoch;
        rd.workers = 1 + (int32_t)(t % 3);
        l = open_mix(a, 3, b, 1, GPUFEED_UNTIL_LONGEST, &rd, &err);
        if (!l) { CHECK_MSG(0, "%s", err.message); continue; }
        m = run_hashes(l, a, part, 8192, NULL);
        gpufeed_loader_close(l);
        CHECK_MSG(m <= n && memcmp(part, full + (n - m), (size_t)m * 8) == 0, "resume at (%lld, %lld): other batches", (long long)rd.start_epoch,
                  (long long)rd.start_batch);
    }
    for (world = 2; world <= 4; world += 2) { /* ranks: equal batch counts */
        int32_t r;
        int64_t nb0 = -1;
        for (r = 0; r < world; r++) {
            gpufeed_loader_desc rd = ldesc(4, 1, 9, 2, 1);
            int64_t nb;
            rd.world = world; rd.rank = r;
            l = open_mix(a, 3, b, 1, GPUFEED_UNTIL_FIRST, &rd, &err);
            if (!l) { CHECK_MSG(0, "%s", err.message); continue; }
            nb = run_hashes(l, a, part, 8192, NULL);
            CHECK(nb == gpufeed_loader_epoch_batches(l, 0));
            if (nb0 < 0) nb0 = nb;
            CHECK_MSG(nb == nb0 && nb > 0, "world %d rank %d: %lld batches, rank 0 %lld", world, r, (long long)nb, (long long)nb0);
            gpufeed_loader_close(l);
        }
    }
    { /* elastic: the same global batches for worlds 1, 2 and 4 */
        static uint64_t rows1[32768], rowsw[32768];
        int64_t n1 = 0;
        for (world = 1; world <= 4; world *= 2) {
            int32_t r;
            int64_t nw = 0;
            for (r = 0; r < world; r++) {
                gpufeed_loader_desc rd = ldesc(0, 2, 9, 2, 1);
                rd.global_batch_rows = 8; rd.world = world; rd.rank = r;
                l = open_mix(a, 3, b, 1, GPUFEED_UNTIL_FIRST, &rd, &err);
                if (!l) { CHECK_MSG(0, "%s", err.message); continue; }
                while (gpufeed_loader_next(l, &bt) == GPUFEED_OK) {
                    int64_t q;
                    for (q = 0; q < bt.num_rows; q++) {
                        uint64_t hv = gpufeed_batch_row_hash(a, &bt, q) ^ (uint64_t)(bt.index * 8 + bt.slice_start + q) * 0x9E3779B97F4A7C15ull;
                        if (world == 1 && n1 < 32768) rows1[n1++] = hv;
                        else if (world > 1 && nw < 32768) rowsw[nw++] = hv;
                    }
                }
                gpufeed_loader_close(l);
            }
            if (world == 1) { qsort(rows1, (size_t)n1, 8, cmp_i64); continue; }
            qsort(rowsw, (size_t)nw, 8, cmp_i64);
            CHECK_MSG(nw == n1 && n1 > 0 && memcmp(rows1, rowsw, (size_t)n1 * 8) == 0, "elastic world %d: other global batches", world);
        }
    }
    gpufeed_dataset_close(a);
    gpufeed_dataset_close(b);
}

/* threads of this process (Linux: /proc/self/task) */
static int64_t threads_now(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int64_t n = 0;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL) if (e->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

/* A mixture runs on the workers it was given: its sources' loaders start
   no threads of their own (a 3:1 mixture of 2 workers shares out 2 + 1
   source workers, runs 2 threads, not 3, and its stats count 2), through
   every epoch's reopened sources; a loader closed mid-epoch stops them all */
static void test_mix_threads(void)
{
    gpufeed_error err;
    gpufeed_dataset *a = open_plain(A_FILES, 3, &err), *b = open_plain(B_FILES, 1, &err);
    int32_t workers;
    CHECK_MSG(a && b, "%s", err.message);
    for (workers = 1; a && b && workers <= 3; workers++) {
        gpufeed_loader_desc ld = ldesc(8, workers, 3, 2, 3);
        const int64_t t0 = threads_now();
        gpufeed_loader *l;
        gpufeed_batch bt;
        gpufeed_stats st;
        int64_t n = 0, t1 = -1, t2 = -1, t3;
        l = open_mix(a, 3, b, 1, GPUFEED_UNTIL_FIRST, &ld, &err);
        if (!l) { CHECK_MSG(0, "%s", err.message); continue; }
        while (gpufeed_loader_next(l, &bt) == GPUFEED_OK) {
            if (n == 3) t1 = threads_now();
            if (bt.epoch == 1 && t2 < 0) t2 = threads_now();
            if (bt.epoch == 2 && ++n > 40) break; /* closed inside epoch 2 */
            if (bt.epoch < 2) n++;
        }
        CHECK_MSG(t0 > 0 && t1 - t0 == workers && t2 - t0 == workers, "%d workers: %lld threads more in epoch 0, %lld in epoch 1", workers,
                  (long long)(t1 - t0), (long long)(t2 - t0));
        gpufeed_loader_stats(l, &st);
        CHECK_MSG(st.workers == workers && st.workers_busy >= 0 && st.workers_busy <= 1.0 + 1e-9, "%d workers: the stats count %d at %.3f busy",
                  workers, st.workers, st.workers_busy);
        gpufeed_loader_close(l);
        t3 = threads_now();
        CHECK_MSG(t3 == t0, "%d workers: %lld threads left after close", workers, (long long)(t3 - t0));
    }
    gpufeed_dataset_close(a);
    gpufeed_dataset_close(b);
}

/* ---- bad input ---- */

/* A damaged file under the page walk of a split row group (units of 100
   rows in row groups of 400; SNAPPY v1 pages, their levels alone inflated
   at open): 64 flipped bytes over the data, one at a time. Each open and
   epoch ends, and every error names the file; some are found. The same as
   a mixture's second source (its workers on the mixture's threads): each
   epoch ends, every error names the source and its file */
static void test_pack_damaged(void)
{
    FILE *fp = fopen(A_FILES[0], "rb");
    uint8_t *buf = NULL;
    long n = 0;
    int k, errors = 0, at_open = 0;
    int64_t lo[2] = { 0, 0 }, hi[2] = { 0, 0 };
    char path[] = "/tmp/gpufeed-pack-damaged-XXXXXX";
    int fd = mkstemp(path), mix_errors = 0;
    gpufeed_dataset *good = NULL;
    CHECK(fp != NULL && fd >= 0);
    {   /* the mixture's first source: A's other files, the same feature */
        gpufeed_feature gf[1];
        gpufeed_dataset_desc gd;
        gpufeed_error ge;
        memset(gf, 0, sizeof gf); memset(&gd, 0, sizeof gd);
        gf[0].column = "input_ids"; gf[0].dtype = GPUFEED_DT_I32; gf[0].pack = 16;
        gd.paths = A_FILES + 1; gd.num_paths = 2; gd.features = gf; gd.num_features = 1; gd.unit_rows = 100;
        CHECK_MSG(gpufeed_dataset_open(&good, &gd, &ge) == GPUFEED_OK, "%s", ge.message);
    }
    if (!fp || fd < 0) { if (fp) fclose(fp); gpufeed_dataset_close(good); return; }
    fseek(fp, 0, SEEK_END); n = ftell(fp); fseek(fp, 0, SEEK_SET);
    buf = (uint8_t *)malloc((size_t)n);
    CHECK(buf && fread(buf, 1, (size_t)n, fp) == (size_t)n);
    fclose(fp);
    {   /* the data pages of input_ids in the first two row groups (a flipped dictionary entry is another token: not damage found) */
        gpufeed_file *f = NULL;
        gpufeed_file_desc fdsc;
        gpufeed_error e;
        int32_t c, g;
        memset(&fdsc, 0, sizeof fdsc);
        fdsc.path = A_FILES[0];
        CHECK(gpufeed_file_open(&f, &fdsc, &e) == GPUFEED_OK);
        for (c = 0; f && c < gpufeed_file_metadata(f)->num_columns; c++) {
            if (strncmp(gpufeed_file_metadata(f)->columns[c].path, "input_ids", 9) != 0) continue;
            for (g = 0; g < 2 && g < gpufeed_file_metadata(f)->num_row_groups; g++) {
                const gpufeed_chunk_info *ch = &gpufeed_file_metadata(f)->row_groups[g].chunks[c];
                const int64_t start = ch->dictionary_page_offset > 0 && ch->dictionary_page_offset < ch->data_page_offset ? ch->dictionary_page_offset
                                                                                                                          : ch->data_page_offset;
                lo[g] = ch->data_page_offset;
                hi[g] = start + ch->total_compressed_size;
            }
        }
        gpufeed_file_close(f);
        CHECK_MSG(hi[0] > lo[0] && hi[1] > lo[1] && hi[1] <= n, "input_ids' data pages not found in %s", A_FILES[0]);
    }
    for (k = 0; k < 64 && buf && hi[1] > lo[1]; k++) {
        const int g = k & 1;
        const long at = (long)(lo[g] + (hi[g] - lo[g]) * (k / 2) / 32 + (k * 7919) % 13);
        const char *paths[1];
        gpufeed_feature ft[1];
        gpufeed_dataset_desc dd;
        gpufeed_dataset *ds = NULL;
        gpufeed_loader *l = NULL;
        gpufeed_loader_desc ld = ldesc(4, 2, 3, 2, 1);
        gpufeed_error err;
        gpufeed_batch b;
        gpufeed_result r;
        FILE *out;
        buf[at] ^= 0x5a;
        out = fopen(path, "wb");
        CHECK(out && fwrite(buf, 1, (size_t)n, out) == (size_t)n);
        if (out) fclose(out);
        buf[at] ^= 0x5a;
        paths[0] = path;
        memset(ft, 0, sizeof ft); memset(&dd, 0, sizeof dd);
        ft[0].column = "input_ids"; ft[0].dtype = GPUFEED_DT_I32; ft[0].pack = 16;
        dd.paths = paths; dd.num_paths = 1; dd.features = ft; dd.num_features = 1; dd.unit_rows = 100;
        r = gpufeed_dataset_open(&ds, &dd, &err);
        if (r) {
            errors++; at_open++;
            CHECK_MSG(strstr(err.message, path) != NULL, "byte %ld: the error names no file: %s", at, err.message);
            continue;
        }
        r = gpufeed_loader_open(&l, ds, &ld, &err);
        if (r) {
            errors++;
            CHECK_MSG(strstr(err.message, path) != NULL || strstr(err.message, "input_ids") != NULL, "byte %ld: %s", at, err.message);
        } else {
            while ((r = gpufeed_loader_next(l, &b)) == GPUFEED_OK) {}
            if (r != GPUFEED_DONE) {
                errors++;
                CHECK_MSG(strstr(gpufeed_loader_error(l), path) != NULL || strstr(gpufeed_loader_error(l), "input_ids") != NULL, "byte %ld: %s", at,
                          gpufeed_loader_error(l));
            }
            gpufeed_loader_close(l);
        }
        if (good) { /* the damaged copy as a mixture's second source, on the mixture's threads: it ends, its errors name it */
            l = open_mix(good, 1, ds, 1, GPUFEED_UNTIL_LONGEST, &ld, &err);
            if (!l) {
                mix_errors++;
                CHECK_MSG(strstr(err.message, path) != NULL, "byte %ld, mixture: %s", at, err.message);
            } else {
                while ((r = gpufeed_loader_next(l, &b)) == GPUFEED_OK) {}
                if (r != GPUFEED_DONE) {
                    mix_errors++;
                    CHECK_MSG(strstr(gpufeed_loader_error(l), path) != NULL && strstr(gpufeed_loader_error(l), "mixture source 1") != NULL,
                              "byte %ld, mixture: %s", at, gpufeed_loader_error(l));
                }
                gpufeed_loader_close(l);
            }
        }
        gpufeed_dataset_close(ds);
    }
    printf("  64 damaged copies of %s: %d errors (%d at open), the rest read to their end; as a mixture's source: %d errors\n", A_FILES[0], errors,
           at_open, mix_errors);
    CHECK_MSG(errors > 0 && at_open > 0, "%d errors, %d at open: no damage found", errors, at_open);
    CHECK_MSG(mix_errors > 0, "no damage found through a mixture (%d errors alone)", errors);
    gpufeed_dataset_close(good);
    free(buf);
    close(fd);
    unlink(path);
}

static void test_pack_errors(void)
{
    gpufeed_error err;
    gpufeed_feature ft[1];
    gpufeed_dataset_desc dd;
    gpufeed_dataset *ds = NULL, *a, *b;
    gpufeed_loader *l = NULL;
    gpufeed_loader_desc ld = ldesc(4, 1, 0, 0, 1);
    popts o = { 16, 0, 0, 0, 0, 0, 0 };
    static const int32_t bad_t[] = { -1, GPUFEED_MAX_PACK + 1 };
    size_t i;
    memset(&dd, 0, sizeof dd);
    dd.paths = A_FILES; dd.num_paths = 1; dd.features = ft; dd.num_features = 1;
    /* a scalar column */
    memset(ft, 0, sizeof ft);
    ft[0].column = "id"; ft[0].dtype = GPUFEED_DT_I64; ft[0].pack = 16;
    CHECK(gpufeed_dataset_open(&ds, &dd, &err) == GPUFEED_ERR_SCHEMA);
    CHECK_HAS(err.message, "a_0.parquet"); CHECK_HAS(err.message, "'id' is not a list");
    /* a list of lists */
    ft[0].column = "nested.list.element.list.element";
    CHECK(gpufeed_dataset_open(&ds, &dd, &err) == GPUFEED_ERR_SCHEMA);
    CHECK_HAS(err.message, "a_0.parquet"); CHECK_HAS(err.message, "2 repeated levels");
    /* T out of range; float tokens; a positions feature without tokens */
    ft[0].column = "input_ids";
    for (i = 0; i < 2; i++) {
        ft[0].pack = bad_t[i];
        CHECK(gpufeed_dataset_open(&ds, &dd, &err) == GPUFEED_ERR_INVALID_ARG);
        CHECK_HAS(err.message, "GPUFEED_MAX_PACK"); CHECK_HAS(err.message, "input_ids");
    }
    ft[0].pack = 16; ft[0].dtype = GPUFEED_DT_F32;
    CHECK(gpufeed_dataset_open(&ds, &dd, &err) == GPUFEED_ERR_INVALID_ARG);
    CHECK_HAS(err.message, "i32 or i64");
    ft[0].dtype = GPUFEED_DT_I32; ft[0].positions = 1;
    CHECK(gpufeed_dataset_open(&ds, &dd, &err) == GPUFEED_ERR_INVALID_ARG);
    CHECK_HAS(err.message, "positions");
    /* a packed dataset's rows come from a loader */
    ft[0].positions = 0;
    CHECK(gpufeed_dataset_open(&ds, &dd, &err) == GPUFEED_OK);
    if (ds) {
        gpufeed_reader *r;
        gpufeed_reader_desc rd;
        memset(&rd, 0, sizeof rd);
        rd.batch_rows = 4;
        CHECK(gpufeed_reader_open(&r, ds, &rd, &err) == GPUFEED_ERR_INVALID_ARG);
        CHECK_HAS(err.message, "loader");
        gpufeed_dataset_close(ds);
    }
    /* mixtures: weights, features, sources */
    a = open_pack(A_FILES, 3, &o, &err);
    b = open_pack(B_FILES, 1, &o, &err);
    if (a && b) {
        static const double bad_w[] = { 0, -1, NAN, INFINITY };
        gpufeed_dataset *c;
        popts o2 = o;
        for (i = 0; i < sizeof bad_w / sizeof bad_w[0]; i++) {
            l = open_mix(a, 1, b, bad_w[i], GPUFEED_UNTIL_FIRST, &ld, &err);
            CHECK(l == NULL && err.code == GPUFEED_ERR_INVALID_ARG);
            CHECK_HAS(err.message, "mixture source 1"); CHECK_HAS(err.message, "b_0.parquet"); CHECK_HAS(err.message, "weight");
            gpufeed_loader_close(l);
        }
        c = open_plain(B_FILES, 1, &err); /* other features */
        l = open_mix(a, 1, c, 1, GPUFEED_UNTIL_FIRST, &ld, &err);
        CHECK(l == NULL && err.code == GPUFEED_ERR_SCHEMA);
        CHECK_HAS(err.message, "mixture source 1"); CHECK_HAS(err.message, "same features");
        gpufeed_dataset_close(c);
        o2.T = 17; /* the same column, another T */
        c = open_pack(B_FILES, 1, &o2, &err);
        l = open_mix(a, 1, c, 1, GPUFEED_UNTIL_FIRST, &ld, &err);
        CHECK(l == NULL && err.code == GPUFEED_ERR_SCHEMA);
        CHECK_HAS(err.message, "mixture source 1");
        gpufeed_dataset_close(c);
        l = open_mix(a, 1, b, 1, 7, &ld, &err);
        CHECK(l == NULL); CHECK_HAS(err.message, "until");
        ld.partitions = 2; ld.global_batch_rows = 8; ld.batch_rows = 0;
        l = open_mix(a, 1, b, 1, GPUFEED_UNTIL_FIRST, &ld, &err);
        CHECK(l == NULL); CHECK_HAS(err.message, "partitions");
    } else CHECK_MSG(0, "%s", err.message);
    {   /* a source without the column: an error naming it */
        const char *flights[] = { "examples/data/flights.parquet" };
        memset(ft, 0, sizeof ft);
        ft[0].column = "input_ids"; ft[0].dtype = GPUFEED_DT_I32; ft[0].pack = 16;
        dd.paths = flights;
        CHECK(gpufeed_dataset_open(&ds, &dd, &err) == GPUFEED_ERR_SCHEMA);
        CHECK_HAS(err.message, "flights.parquet"); CHECK_HAS(err.message, "input_ids");
    }
    gpufeed_dataset_close(a);
    gpufeed_dataset_close(b);
}

int main(void)
{
    RUN(test_pack_order);
    RUN(test_pack_workers);
    RUN(test_pack_multiset);
    RUN(test_pack_resume);
    RUN(test_pack_ranks);
    RUN(test_pack_elastic);
    RUN(test_pack_cache);
    RUN(test_mix_proportions);
    RUN(test_mix_until);
    RUN(test_mix_pack);
    RUN(test_mix_threads);
    RUN(test_pack_errors);
    RUN(test_pack_damaged);
    return TEST_SUMMARY();
}
