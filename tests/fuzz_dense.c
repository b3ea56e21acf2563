/* Fuzz target: the dense path (dataset -> batch reader or units), the one a
   loader's workers run, over the input bytes as a Parquet file read through
   a read_at source (so SNAPPY pages come in pieces, headers through small
   reads, as for remote storage and GPUFEED_OPEN_PREAD).

   Per input, a hash of it picks the variant: VERIFY_CRC, rows per unit,
   row-major or per-feature layout, rows per batch, the dtype (f32 for every
   numeric column, or the same columns as f64, i64 with unsafe casts, or f16
   with validity masks), 1 or 2 reader threads, the batch reader,
   gpufeed_dataset_decode_unit on each unit, or a loader (2 workers, 1 or 2
   epochs, shuffled or not), a predicate on the first column or none, and
   (1 input in 8) an allocation failing from the k-th on. It checks the API's promises
   (abort() on a violation):
     - every returned code is a known gpufeed_result and errors carry a message;
     - a batch holds 1..batch_rows rows, masks are 0/1, buffers are there;
     - a read that ends in GPUFEED_DONE delivered exactly the dataset's rows
       (a loader: once an epoch; nothing dropped or repeated silently; with a
       predicate, no more than them), a unit no more than planned;
     - the library's live allocations stay under a bound set by the input's
       size and the buffers asked for, and all are freed at the end;
     - the source is closed exactly once.

   libFuzzer:
     clang -g -O1 -fsanitize=fuzzer,address,undefined -I. tests/fuzz_dense.c -o build/fz_dense
     build/fz_dense -dict=tests/fuzz.dict -max_len=262144 -rss_limit_mb=2048 CORPUS
   Replay (no libFuzzer runtime; -DGFD_EVERY_VARIANT: each input in 64
   variants as well):
     cc -g -O1 -fsanitize=address,undefined -DGFD_EVERY_VARIANT -I. tests/fuzz_dense.c tests/fuzz_replay_main.c -o build/fz_dense_replay -lpthread -lm
     build/fz_dense_replay tests/data tests/fuzz tests/fuzz/dense */
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GPUFEED_STATIC
#define GPUFEED_IMPLEMENTATION
#include "gpufeed.h"

#define GFD_MEM_BASE ((uint64_t)256 << 20)
#define GFD_MEM_FACTOR 64
#define GFD_MAX_ROWS ((int64_t)1 << 20)       /* rows read per input, at most */
#define GFD_MAX_BUF ((uint64_t)32 << 20)      /* a batch's or unit's buffers, at most */

#define GFD_FAIL(...) do { fprintf(stderr, "fuzz_dense: "); fprintf(stderr, __VA_ARGS__); \
    fputc('\n', stderr); abort(); } while (0)

/* ---- counting allocator ------------------------------------------------ */

typedef struct gfd_mem {
    uint64_t live, peak, limit, nallocs, fail_at;
} gfd_mem;
#define GFD_HDR 16

/* called from the reader's threads too: atomic counts */
static void gfd_count(gfd_mem *m, uint64_t add, size_t want)
{
    uint64_t live = __atomic_add_fetch(&m->live, add, __ATOMIC_RELAXED), peak = __atomic_load_n(&m->peak, __ATOMIC_RELAXED);
    while (live > peak && !__atomic_compare_exchange_n(&m->peak, &peak, live, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
    if (live > m->limit)
        GFD_FAIL("live allocation %llu bytes (request %llu) exceeds the limit %llu", (unsigned long long)live,
                 (unsigned long long)want, (unsigned long long)m->limit);
}
static int gfd_inject(gfd_mem *m)
{
    uint64_t n = __atomic_add_fetch(&m->nallocs, 1, __ATOMIC_RELAXED);
    return m->fail_at && n >= m->fail_at;
}
static void gfd_uncount(gfd_mem *m, uint64_t old)
{
    uint64_t live = __atomic_load_n(&m->live, __ATOMIC_RELAXED);
    do {
        if (old > live) GFD_FAIL("free of %llu bytes with only %llu live", (unsigned long long)old, (unsigned long long)live);
    } while (!__atomic_compare_exchange_n(&m->live, &live, live - old, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}
static void *gfd_alloc(void *user, size_t size)
{
    gfd_mem *m = (gfd_mem *)user;
    unsigned char *p;
    if (gfd_inject(m)) return NULL;
    if (size > m->limit) gfd_count(m, size, size); /* fails before malloc */
    p = (unsigned char *)malloc(size + GFD_HDR);
    if (!p) return NULL;
    memcpy(p, &size, sizeof size);
    gfd_count(m, size, size);
    return p + GFD_HDR;
}
static void *gfd_realloc(void *user, void *ptr, size_t size)
{
    gfd_mem *m = (gfd_mem *)user;
    unsigned char *p, *q;
    size_t old;
    if (!ptr) return gfd_alloc(user, size);
    if (gfd_inject(m)) return NULL;
    p = (unsigned char *)ptr - GFD_HDR;
    memcpy(&old, p, sizeof old);
    if (size > old && size - old > m->limit) gfd_count(m, size, size);
    q = (unsigned char *)realloc(p, size + GFD_HDR);
    if (!q) return NULL;
    memcpy(q, &size, sizeof size);
    gfd_uncount(m, old);
    gfd_count(m, size, size);
    return q + GFD_HDR;
}
static void gfd_free(void *user, void *ptr)
{
    gfd_mem *m = (gfd_mem *)user;
    unsigned char *p;
    size_t old;
    if (!ptr) return;
    p = (unsigned char *)ptr - GFD_HDR;
    memcpy(&old, p, sizeof old);
    gfd_uncount(m, old);
    free(p);
}

/* ---- the source ------------------------------------------------------------- */

typedef struct gfd_src { const uint8_t *data; size_t size; int opened, closed; } gfd_src;

static int gfd_read_at(void *ctx, uint64_t off, void *buf, size_t len)
{
    gfd_src *s = (gfd_src *)ctx;
    if (off > s->size || len > s->size - off) return -1;
    if (len) memcpy(buf, s->data + off, len);
    return 0;
}
static void gfd_close(void *ctx) { ((gfd_src *)ctx)->closed++; }
static int gfd_open_source(void *user, const char *path, gpufeed_source *src, char *identity, size_t icap, char *why, size_t wcap)
{
    gfd_src *s = (gfd_src *)user;
    (void)path; (void)why; (void)wcap;
    memset(src, 0, sizeof *src);
    src->read_at = gfd_read_at; src->close = gfd_close; src->ctx = s; src->size = s->size;
    snprintf(identity, icap, "fuzz-%llu", (unsigned long long)s->size);
    s->opened++;
    return 0;
}

/* ---- checks --------------------------------------------------------------------- */

static volatile uint64_t gfd_sink;

static void gfd_result(gpufeed_result r, const char *msg, const char *what)
{
    const char *name = gpufeed_result_string(r);
    if (!name || strcmp(name, "unknown result") == 0) GFD_FAIL("%s: unknown result %d", what, (int)r);
    if (r != GPUFEED_OK && r != GPUFEED_DONE && (!msg || !msg[0])) GFD_FAIL("%s: error %s without a message", what, name);
}

static void gfd_masks(uint8_t *const *valid, int32_t nfeat, int64_t rows)
{
    int32_t f;
    int64_t i;
    if (!valid) return;
    for (f = 0; f < nfeat; f++) {
        if (!valid[f]) continue;
        for (i = 0; i < rows; i++)
            if (valid[f][i] > 1) GFD_FAIL("feature %d row %lld: mask byte %u", f, (long long)i, valid[f][i]);
    }
}

/* the batch reader to its end (or the row budget) */
static void gfd_reader(gpufeed_dataset *ds, const gpufeed_dataset_info *info, int64_t batch, int32_t threads, int exact)
{
    gpufeed_reader *rd = NULL;
    gpufeed_reader_desc rdd;
    gpufeed_error err;
    gpufeed_batch b;
    gpufeed_result r;
    int64_t rows = 0;
    memset(&rdd, 0, sizeof rdd);
    rdd.batch_rows = batch; rdd.threads = threads;
    r = gpufeed_reader_open(&rd, ds, &rdd, &err);
    gfd_result(r, err.message, "gpufeed_reader_open");
    if (r) { if (rd) GFD_FAIL("reader_open failed but set *out"); return; }
    while ((r = gpufeed_reader_next(rd, &b)) == GPUFEED_OK) {
        if (b.num_rows <= 0 || b.num_rows > batch) GFD_FAIL("a batch of %lld rows (batch size %lld)", (long long)b.num_rows, (long long)batch);
        if (info->layout == GPUFEED_LAYOUT_ROW_MAJOR) {
            if (!b.data) GFD_FAIL("row-major batch without data");
            if (b.row_bytes > 0) gfd_sink += ((const uint8_t *)b.data)[b.num_rows * b.row_bytes - 1];
        } else if (b.num_features > 0 && (!b.features || !b.features[0])) GFD_FAIL("per-feature batch without buffers");
        gfd_masks(b.valid, b.num_features, b.num_rows);
        rows += b.num_rows;
        if (rows >= GFD_MAX_ROWS) break;
    }
    if (r != GPUFEED_OK) {
        gfd_result(r, gpufeed_reader_error(rd), "gpufeed_reader_next");
        if (r == GPUFEED_DONE && (exact ? rows != info->num_rows : rows > info->num_rows))
            GFD_FAIL("the reader delivered %lld rows of the dataset's %lld", (long long)rows, (long long)info->num_rows);
    }
    gpufeed_reader_close(rd);
}

/* each unit through a scratch, the loader workers' call */
static void gfd_units(gpufeed_dataset *ds, const gpufeed_dataset_info *info)
{
    gpufeed_scratch *s = NULL;
    gpufeed_error err;
    gpufeed_result r;
    int64_t u, rows = 0;
    r = gpufeed_scratch_open(&s, ds, &err);
    gfd_result(r, err.message, "gpufeed_scratch_open");
    if (r) return;
    for (u = 0; u < info->num_units && rows < GFD_MAX_ROWS; u++) {
        const gpufeed_unit *un = gpufeed_dataset_unit(ds, u);
        int64_t planned = un->num_rows, got = -1;
        int32_t f, nf = info->num_features;
        void **feats = NULL;
        uint8_t **valid = NULL;
        void *data = NULL;
        int ok = 1;
        if (planned < 0) GFD_FAIL("unit %lld plans %lld rows", (long long)u, (long long)planned);
        if ((uint64_t)planned * (uint64_t)(info->row_bytes + nf) > GFD_MAX_BUF) continue;
        feats = (void **)calloc((size_t)nf + 1, sizeof *feats);
        valid = (uint8_t **)calloc((size_t)nf + 1, sizeof *valid);
        if (info->layout == GPUFEED_LAYOUT_ROW_MAJOR) ok = (data = malloc((size_t)(planned * info->row_bytes) + 1)) != NULL;
        for (f = 0; f < nf && ok; f++) {
            const gpufeed_feature *ft = gpufeed_dataset_feature(ds, f);
            if (info->layout == GPUFEED_LAYOUT_PER_FEATURE) ok = (feats[f] = malloc((size_t)planned * gpufeed_feature_bytes(ft) + 1)) != NULL;
            if (ok && ft->validity) ok = (valid[f] = (uint8_t *)malloc((size_t)planned + 1)) != NULL;
        }
        if (ok) {
            r = gpufeed_dataset_decode_unit(ds, s, u, data, feats, valid, &got);
            gfd_result(r, gpufeed_scratch_error(s), "gpufeed_dataset_decode_unit");
            if (r == GPUFEED_OK) {
                if (got < 0 || got > planned) GFD_FAIL("unit %lld: %lld rows of %lld planned", (long long)u, (long long)got, (long long)planned);
                gfd_masks(valid, nf, got);
                rows += got;
            }
        }
        for (f = 0; f < nf; f++) { free(feats[f]); free(valid[f]); }
        free(feats); free(valid); free(data);
    }
    gpufeed_scratch_close(s);
}

/* a loader with 2 workers (shuffled or not), 1 or 2 epochs, to its end or
   the row budget (then closed mid-epoch) */
static void gfd_loader(gpufeed_dataset *ds, const gpufeed_dataset_info *info, int64_t batch, uint32_t h, gfd_mem *mem, int exact)
{
    gpufeed_loader *l = NULL;
    gpufeed_loader_desc ld;
    gpufeed_error err;
    gpufeed_batch b;
    gpufeed_result r;
    int64_t u, maxu = 0, rows = 0;
    uint64_t need;
    for (u = 0; u < info->num_units; u++) {
        const gpufeed_unit *un = gpufeed_dataset_unit(ds, u);
        if (un->num_rows > maxu) maxu = un->num_rows;
    }
    need = (uint64_t)(maxu + batch) * (uint64_t)(info->row_bytes + info->num_features + 64);
    if (need > GFD_MAX_BUF / 4) return;
    mem->limit += 16 * need; /* the unit slots of 2 workers x their rings, the batch slots */
    memset(&ld, 0, sizeof ld);
    ld.batch_rows = batch; ld.workers = 2; ld.epochs = 1 + ((h >> 20) & 1);
    ld.seed = h; ld.shuffle_window = (h >> 21) & 1 ? 2 : 0;
    r = gpufeed_loader_open(&l, ds, &ld, &err);
    gfd_result(r, err.message, "gpufeed_loader_open");
    if (r) { if (l) GFD_FAIL("loader_open failed but set *out"); return; }
    while ((r = gpufeed_loader_next(l, &b)) == GPUFEED_OK) {
        if (b.num_rows <= 0 || b.num_rows > batch) GFD_FAIL("a loader batch of %lld rows (batch size %lld)", (long long)b.num_rows, (long long)batch);
        gfd_masks(b.valid, b.num_features, b.num_rows);
        rows += b.num_rows;
        if (rows >= GFD_MAX_ROWS) break;
    }
    if (r != GPUFEED_OK) {
        gfd_result(r, gpufeed_loader_error(l), "gpufeed_loader_next");
        if (r == GPUFEED_DONE && (exact ? rows != ld.epochs * info->num_rows : rows > ld.epochs * info->num_rows))
            GFD_FAIL("the loader delivered %lld rows for %lld epochs of %lld", (long long)rows, (long long)ld.epochs, (long long)info->num_rows);
    }
    gpufeed_loader_close(l);
}

/* ---- the target ------------------------------------------------------------------- */

static uint32_t gfd_hash(const uint8_t *p, size_t n)
{
    uint32_t h = 2166136261u;
    size_t i;
    for (i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
    return h ^ (uint32_t)n;
}

static void gfd_run(const uint8_t *data, size_t size, uint32_t h)
{
    static const int64_t unit_rows[4] = { 0, 1, 100, 4096 };
    static const int64_t batch_rows[4] = { 1, 7, 1000, 65536 };
    static const char *const path = "fuzz.parquet";
    gfd_mem mem;
    gfd_src src;
    gpufeed_dataset_desc dd;
    gpufeed_dataset *ds = NULL;
    gpufeed_dataset_info info;
    gpufeed_feature *feats = NULL;
    gpufeed_error err;
    gpufeed_result r;
    int32_t dtype = (int32_t)((h >> 14) & 3), pred = (int32_t)((h >> 22) & 3), k;
    gpufeed_predicate where;
    int64_t batch = batch_rows[(h >> 12) & 3];

    memset(&mem, 0, sizeof mem);
    mem.limit = GFD_MEM_BASE + (uint64_t)GFD_MEM_FACTOR * (uint64_t)size;
    if (((h >> 4) & 7) == 0) mem.fail_at = 1 + ((h >> 8) % 64);
    memset(&src, 0, sizeof src);
    src.data = data; src.size = size;
    memset(&dd, 0, sizeof dd);
    dd.paths = &path; dd.num_paths = 1;
    dd.unit_rows = unit_rows[(h >> 1) & 3];
    dd.layout = (h >> 3) & 1 ? GPUFEED_LAYOUT_PER_FEATURE : GPUFEED_LAYOUT_ROW_MAJOR;
    dd.flags = h & 1 ? GPUFEED_OPEN_VERIFY_CRC : 0;
    dd.open_source = gfd_open_source; dd.source_user = &src;
    dd.allocator.alloc = gfd_alloc; dd.allocator.realloc = gfd_realloc; dd.allocator.free = gfd_free; dd.allocator.user = &mem;

    r = gpufeed_dataset_open(&ds, &dd, &err);
    gfd_result(r, err.message, "gpufeed_dataset_open");
    if (r == GPUFEED_OK && (dtype || pred)) { /* the same columns again, as another dtype, or with a predicate */
        static const gpufeed_dtype dts[4] = { GPUFEED_DT_F32, GPUFEED_DT_F64, GPUFEED_DT_I64, GPUFEED_DT_F16 };
        gpufeed_dataset_get_info(ds, &info);
        feats = (gpufeed_feature *)calloc((size_t)info.num_features + 1, sizeof *feats);
        if (!feats) GFD_FAIL("out of memory");
        for (k = 0; k < info.num_features; k++) {
            const gpufeed_feature *f = gpufeed_dataset_feature(ds, k);
            feats[k].column = f->column; /* stays valid: ds is closed after the second open */
            feats[k].dtype = dts[dtype];
            feats[k].cast = dtype == 2 ? GPUFEED_CAST_UNSAFE : GPUFEED_CAST_SAFE;
            feats[k].validity = dtype == 3;
        }
        dd.features = feats; dd.num_features = info.num_features;
        memset(&where, 0, sizeof where);
        if (pred && info.num_features > 0) { /* on the first column: rows and row groups skipped by statistics */
            where.column = feats[0].column;
            where.op = pred == 1 ? GPUFEED_OP_LT : pred == 2 ? GPUFEED_OP_BETWEEN : GPUFEED_OP_IS_NOT_NULL;
            where.a.kind = pred == 1 ? GPUFEED_VAL_DOUBLE : GPUFEED_VAL_INT;
            where.a.d = 0.5; where.a.i = -5;
            where.b.kind = GPUFEED_VAL_INT; where.b.i = 100;
            dd.where = &where; dd.num_where = 1;
        }
        {
            gpufeed_dataset *ds2 = NULL;
            r = gpufeed_dataset_open(&ds2, &dd, &err);
            gfd_result(r, err.message, "gpufeed_dataset_open (features)");
            gpufeed_dataset_close(ds);
            ds = ds2;
        }
    }
    if (r == GPUFEED_OK) {
        uint64_t need;
        if (!ds) GFD_FAIL("dataset_open succeeded without a dataset");
        gpufeed_dataset_get_info(ds, &info);
        if (info.num_rows < 0 || info.row_bytes < 0) GFD_FAIL("dataset info: %lld rows, %lld bytes a row", (long long)info.num_rows, (long long)info.row_bytes);
        while (batch > 1 && (uint64_t)batch * (uint64_t)(info.row_bytes + info.num_features) > GFD_MAX_BUF) batch /= 8;
        need = (uint64_t)batch * (uint64_t)(info.row_bytes + info.num_features) + 4096 * (uint64_t)info.num_features;
        mem.limit += 2 * need; /* the reader's own batch buffers */
        if ((h >> 19) & 1) gfd_loader(ds, &info, batch, h, &mem, !pred);
        else if ((h >> 18) & 1) gfd_units(ds, &info);
        else gfd_reader(ds, &info, batch, (h >> 17) & 1 ? 2 : 1, !pred);
        gpufeed_dataset_close(ds);
    } else if (ds) GFD_FAIL("dataset_open failed but set *out");
    free(feats);
    if (src.closed != src.opened) GFD_FAIL("source opened %d times, closed %d", src.opened, src.closed);
    if (mem.live) GFD_FAIL("%llu bytes still allocated after every close", (unsigned long long)mem.live);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#ifdef GFD_EVERY_VARIANT
    /* the replay: every input in 64 variants (each choice above at least
       16 times, mixed), besides the one its hash picks */
    uint32_t v;
    for (v = 0; v < 64; v++) {
        uint32_t h = (v & 1) | ((v >> 1) & 3) << 1 | ((v >> 3) & 1) << 3 | 1u << 4 | ((v >> 4) & 3) << 12 | ((v >> 2) & 3) << 14
                     | ((v >> 5) & 1) << 17 | (((v >> 4) ^ v) & 1) << 18 | (((v >> 1) ^ (v >> 5)) & 1) << 19
                     | ((v >> 3) & 1) << 20 | ((v >> 2) & 1) << 21 | ((v + (v >> 3)) & 3) << 22;
        gfd_run(data, size, h);
    }
#endif
    gfd_run(data, size, gfd_hash(data, size));
    return 0;
}
