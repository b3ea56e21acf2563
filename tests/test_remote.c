/* Remote-source hooks of the dataset layer (>>source, >>dataset, >>unit, >>cache),
   without a network: gpufeed_dataset_desc.open_source hands out in-memory
   sources with a will_read hook, standing in for HTTP/S3 objects.
   Checks: the same batches as the local file; every read a unit makes
   falls inside the ranges its will_read announced; a failing open_source
   is a clear error naming the object; the cache keys on the source's
   identity (same identity: served from the cache, no source reads; another
   identity: a different cache).

   cc -O2 -I. tests/test_remote.c -o build/test_remote -lpthread -lm */
#define _POSIX_C_SOURCE 200809L
#define GPUFEED_IMPLEMENTATION
#define GPUFEED_STATIC
#include "gpufeed.h"
#include "gf_test.h"
#include <stdlib.h>
#include <unistd.h>

#define DATA "tests/data/ids.parquet"

typedef struct mem_obj {
    uint8_t *p; size_t n;
    uint64_t hint_off[256], hint_len[256]; int nhint, hinted; /* the last will_read */
    long reads, reads_outside, hints;
    struct world *w;
} mem_obj;

typedef struct world {
    const char *identity;              /* what open_source reports */
    int fail;                          /* open_source fails */
    int no_read_at;                    /* open_source forgets read_at */
    int garbage;                       /* the object is not Parquet */
    long opens, closes, reads_total, reads_at_open;
} world;

static int mem_read(void *ctx, uint64_t off, void *buf, size_t len)
{
    mem_obj *m = (mem_obj *)ctx;
    int i, inside = 0;
    if (off + len > m->n) return 1;
    memcpy(buf, m->p + off, len);
    m->reads++; m->w->reads_total++;
    if (m->hinted) {
        for (i = 0; i < m->nhint; i++)
            if (off >= m->hint_off[i] && off + len <= m->hint_off[i] + m->hint_len[i]) inside = 1;
        if (!inside) m->reads_outside++;
    }
    return 0;
}

static void mem_will_read(void *ctx, const uint64_t *off, const uint64_t *len, int32_t n)
{
    mem_obj *m = (mem_obj *)ctx;
    int32_t i;
    m->hints++; m->hinted = 1; m->nhint = 0;
    for (i = 0; i < n && i < 256; i++) {
        if (i > 0 && off[i] < off[i - 1] + len[i - 1]) m->reads_outside += 1000000; /* must be sorted, disjoint */
        m->hint_off[m->nhint] = off[i]; m->hint_len[m->nhint] = len[i]; m->nhint++;
    }
}

static void mem_close(void *ctx)
{
    mem_obj *m = (mem_obj *)ctx;
    m->w->closes++;
    free(m->p);
    free(m);
}

static mem_obj *last_obj;

static int mem_open(void *user, const char *path, gpufeed_source *src, char *identity, size_t icap, char *why, size_t wcap)
{
    world *w = (world *)user;
    FILE *f;
    mem_obj *m;
    long sz;
    w->opens++;
    if (w->fail) { snprintf(why, wcap, "HTTP 403 from the object store"); return 1; }
    f = fopen(path, "rb");
    if (!f) { snprintf(why, wcap, "no such object"); return 1; }
    fseek(f, 0, SEEK_END); sz = ftell(f); fseek(f, 0, SEEK_SET);
    m = (mem_obj *)calloc(1, sizeof *m);
    m->p = (uint8_t *)malloc((size_t)sz); m->n = (size_t)sz; m->w = w;
    if (fread(m->p, 1, (size_t)sz, f) != (size_t)sz) { fclose(f); snprintf(why, wcap, "short read"); return 1; }
    fclose(f);
    memset(src, 0, sizeof *src);
    if (w->garbage) memset(m->p, 0x5a, m->n);
    src->read_at = w->no_read_at ? NULL : mem_read;
    src->will_read = mem_will_read; src->close = mem_close; src->ctx = m; src->size = m->n;
    snprintf(identity, icap, "%s", w->identity);
    last_obj = m;
    return 0;
}

static void feats(gpufeed_feature *ft)
{
    memset(ft, 0, 2 * sizeof *ft);
    ft[0].column = "id"; ft[0].dtype = GPUFEED_DT_I64;
    ft[1].column = "y"; ft[1].dtype = GPUFEED_DT_F64; ft[1].validity = 1;
}

/* hashes of every batch of `epochs` epochs into out[]; returns the count */
static int run(world *w, const char *cache_dir, int epochs, uint64_t *out, int cap, gpufeed_stats *st)
{
    const char *paths[1] = { DATA };
    gpufeed_feature ft[2];
    gpufeed_dataset_desc dd;
    gpufeed_loader_desc ld;
    gpufeed_cache_desc cd;
    gpufeed_dataset *ds = NULL;
    gpufeed_loader *l = NULL;
    gpufeed_error err;
    gpufeed_batch b;
    int n = 0;
    feats(ft);
    memset(&dd, 0, sizeof dd);
    dd.paths = paths; dd.num_paths = 1; dd.features = ft; dd.num_features = 2; dd.unit_rows = 1500;
    if (w) { dd.open_source = mem_open; dd.source_user = w; }
    if (gpufeed_dataset_open(&ds, &dd, &err) != GPUFEED_OK) { fprintf(stderr, "  open: %s\n", err.message); return -1; }
    if (w) w->reads_at_open = w->reads_total;
    memset(&ld, 0, sizeof ld);
    ld.batch_rows = 512; ld.workers = 1; ld.seed = 5; ld.shuffle_window = 2; ld.epochs = epochs;
    memset(&cd, 0, sizeof cd);
    if (cache_dir) { cd.dir = cache_dir; ld.cache = &cd; }
    if (gpufeed_loader_open(&l, ds, &ld, &err) != GPUFEED_OK) { fprintf(stderr, "  loader: %s\n", err.message); gpufeed_dataset_close(ds); return -1; }
    while (gpufeed_loader_next(l, &b) == GPUFEED_OK && n < cap) out[n++] = gpufeed_batch_hash(ds, &b);
    if (st) gpufeed_loader_stats(l, st);
    gpufeed_loader_close(l);
    gpufeed_dataset_close(ds);
    return n;
}

static void test_same_batches_and_hints(void)
{
    static uint64_t a[512], b[512];
    world w;
    int na, nb;
    memset(&w, 0, sizeof w); w.identity = "v1";
    na = run(NULL, NULL, 2, a, 512, NULL);
    nb = run(&w, NULL, 2, b, 512, NULL);
    CHECK(na > 10 && na == nb && memcmp(a, b, (size_t)na * sizeof a[0]) == 0);
    CHECK(w.opens == 1);
}

static void test_reads_inside_hints(void)
{
    /* the reader API on one thread: every unit read is announced */
    const char *paths[1] = { DATA };
    gpufeed_feature ft[2];
    gpufeed_dataset_desc dd;
    gpufeed_reader_desc rd;
    gpufeed_dataset *ds = NULL;
    gpufeed_reader *r = NULL;
    gpufeed_error err;
    gpufeed_batch b;
    world w;
    mem_obj *m;
    long before;
    int nbat = 0;
    memset(&w, 0, sizeof w); w.identity = "v1";
    feats(ft);
    memset(&dd, 0, sizeof dd);
    dd.paths = paths; dd.num_paths = 1; dd.features = ft; dd.num_features = 2; dd.unit_rows = 1500;
    dd.open_source = mem_open; dd.source_user = &w;
    CHECK_MSG(gpufeed_dataset_open(&ds, &dd, &err) == GPUFEED_OK, "%s", err.message);
    if (!ds) return;
    m = last_obj;
    before = m->reads;
    m->hinted = 0; m->reads_outside = 0;
    memset(&rd, 0, sizeof rd); rd.batch_rows = 700;
    CHECK(gpufeed_reader_open(&r, ds, &rd, &err) == GPUFEED_OK);
    while (r && gpufeed_reader_next(r, &b) == GPUFEED_OK) nbat++;
    CHECK(nbat == (20000 + 699) / 700);
    CHECK_MSG(m->hints >= 4, "%ld will_read calls", m->hints);
    CHECK_MSG(m->reads > before, "no reads");
    CHECK_MSG(m->reads_outside == 0, "%ld of %ld reads outside the announced ranges", m->reads_outside, m->reads - before);
    gpufeed_reader_close(r);
    gpufeed_dataset_close(ds);
}

static void test_open_source_failure(void)
{
    const char *paths[1] = { "s3://bucket/part-0001.parquet" };
    gpufeed_dataset_desc dd;
    gpufeed_dataset *ds = NULL;
    gpufeed_error err;
    world w;
    memset(&w, 0, sizeof w); w.identity = "x"; w.fail = 1;
    memset(&dd, 0, sizeof dd);
    dd.paths = paths; dd.num_paths = 1; dd.open_source = mem_open; dd.source_user = &w;
    CHECK(gpufeed_dataset_open(&ds, &dd, &err) == GPUFEED_ERR_IO && ds == NULL);
    CHECK_HAS(err.message, "s3://bucket/part-0001.parquet");
    CHECK_HAS(err.message, "HTTP 403");
    /* names are taken as given: no globbing of '*' in a URL */
    paths[0] = "https://host/data/*.parquet";
    w.fail = 0;
    CHECK(gpufeed_dataset_open(&ds, &dd, &err) == GPUFEED_ERR_IO);
    CHECK_HAS(err.message, "https://host/data/*.parquet");
    CHECK_HAS(err.message, "no such object");
}

/* a callback bug (success without read_at), a NULL name and an object that
   is not Parquet: each a clear error naming the object, and every source
   handed out is closed exactly once */
static void test_open_source_misuse(void)
{
    const char *paths[2] = { DATA, DATA };
    gpufeed_dataset_desc dd;
    gpufeed_dataset *ds = NULL;
    gpufeed_error err;
    world w;
    memset(&w, 0, sizeof w); w.identity = "x"; w.no_read_at = 1;
    memset(&dd, 0, sizeof dd);
    dd.paths = paths; dd.num_paths = 2; dd.open_source = mem_open; dd.source_user = &w;
    CHECK(gpufeed_dataset_open(&ds, &dd, &err) == GPUFEED_ERR_INVALID_ARG && ds == NULL);
    CHECK_HAS(err.message, DATA);
    CHECK_HAS(err.message, "without read_at");
    CHECK_MSG(w.opens == 1 && w.closes == 1, "%ld opens, %ld closes", w.opens, w.closes);

    memset(&w, 0, sizeof w); w.identity = "x";
    paths[1] = NULL;
    CHECK(gpufeed_dataset_open(&ds, &dd, &err) == GPUFEED_ERR_INVALID_ARG && ds == NULL);
    CHECK_HAS(err.message, "path 1 is NULL");
    CHECK_MSG(w.opens == 0, "open_source called %ld times before the names were checked", w.opens);

    memset(&w, 0, sizeof w); w.identity = "x"; w.garbage = 1;
    paths[1] = DATA;
    CHECK(gpufeed_dataset_open(&ds, &dd, &err) != GPUFEED_OK && ds == NULL);
    CHECK_HAS(err.message, DATA);
    CHECK_MSG(w.opens == 1 && w.closes == 1, "%ld opens, %ld closes", w.opens, w.closes);

    /* the second object fails: the first, already open, is closed too */
    memset(&w, 0, sizeof w); w.identity = "x";
    paths[1] = "s3://bucket/missing.parquet";
    CHECK(gpufeed_dataset_open(&ds, &dd, &err) == GPUFEED_ERR_IO && ds == NULL);
    CHECK_HAS(err.message, "s3://bucket/missing.parquet");
    CHECK_MSG(w.opens == 2 && w.closes == 1, "%ld opens, %ld closes", w.opens, w.closes);

    /* a dataset that opens closes each source once, at dataset close */
    memset(&w, 0, sizeof w); w.identity = "x";
    paths[1] = DATA;
    CHECK(gpufeed_dataset_open(&ds, &dd, &err) == GPUFEED_OK);
    CHECK(w.closes == 0);
    gpufeed_dataset_close(ds);
    CHECK_MSG(w.opens == 2 && w.closes == 2, "%ld opens, %ld closes", w.opens, w.closes);
}

/* gpufeed_file_open owns a source from the call on: it closes it on every
   failure, argument errors included */
static void test_file_open_closes_source(void)
{
    gpufeed_file_desc od;
    gpufeed_source src;
    gpufeed_file *f = NULL;
    gpufeed_error err;
    world w;
    char why[64], ident[64];
    memset(&w, 0, sizeof w); w.identity = "x";
    CHECK(mem_open(&w, DATA, &src, ident, sizeof ident, why, sizeof why) == 0);
    memset(&od, 0, sizeof od);
    od.source = &src; od.path = DATA;             /* two sources: refused */
    CHECK(gpufeed_file_open(&f, &od, &err) == GPUFEED_ERR_INVALID_ARG && f == NULL);
    CHECK_HAS(err.message, "exactly one");
    CHECK(w.closes == 1);

    CHECK(mem_open(&w, DATA, &src, ident, sizeof ident, why, sizeof why) == 0);
    src.read_at = NULL; od.path = NULL; od.name = "gs://b/o.parquet";
    CHECK(gpufeed_file_open(&f, &od, &err) == GPUFEED_ERR_INVALID_ARG && f == NULL);
    CHECK_HAS(err.message, "gs://b/o.parquet: source without read_at");
    CHECK(w.closes == 2);

    CHECK(mem_open(&w, DATA, &src, ident, sizeof ident, why, sizeof why) == 0);
    CHECK(gpufeed_file_open(NULL, &od, &err) == GPUFEED_ERR_INVALID_ARG);
    CHECK(w.closes == 3);

    w.garbage = 1;
    CHECK(mem_open(&w, DATA, &src, ident, sizeof ident, why, sizeof why) == 0);
    CHECK(gpufeed_file_open(&f, &od, &err) != GPUFEED_OK && f == NULL);
    CHECK_HAS(err.message, "gs://b/o.parquet");
    CHECK(w.closes == 4);

    w.garbage = 0;
    CHECK(mem_open(&w, DATA, &src, ident, sizeof ident, why, sizeof why) == 0);
    CHECK(gpufeed_file_open(&f, &od, &err) == GPUFEED_OK && f != NULL);
    CHECK(w.closes == 4);
    gpufeed_file_close(f);
    CHECK(w.closes == 5 && w.opens == 5);
}

/* an allocator that fails its n-th allocation of at least min_size bytes
   (that one only: a failure the library swallows would show as success) */
typedef struct failing_alloc { long calls, fail_at; size_t min_size; } failing_alloc;
static int fa_fails(failing_alloc *a, size_t n) { return n >= a->min_size && ++a->calls == a->fail_at; }
static void *fa_alloc(void *u, size_t n) { return fa_fails((failing_alloc *)u, n) ? NULL : malloc(n); }
static void *fa_realloc(void *u, void *p, size_t n) { return fa_fails((failing_alloc *)u, n) ? NULL : realloc(p, n); }
static void fa_free(void *u, void *p) { (void)u; free(p); }

/* out of memory at every allocation of a dataset opened through
   open_source (the names, the identities, the files, the features): an
   error that says so, and every source handed out closed exactly once.
   Once with every allocation, once with the large ones (the arena blocks)
   of 70 objects whose 1000-byte identities fill more than one block. */
static long oom_points(int nobj, const char *identity, size_t min_size, int *bad)
{
    static const char *paths[70];
    gpufeed_dataset_desc dd;
    gpufeed_dataset *ds;
    gpufeed_error err;
    failing_alloc fa;
    gpufeed_feature ft[2];
    world w;
    long k;
    int i, opened = 0;
    for (i = 0; i < nobj; i++) paths[i] = DATA;
    feats(ft);
    for (k = 1; k < 100000 && !opened; k++) {
        gpufeed_result r;
        memset(&w, 0, sizeof w); w.identity = identity;
        memset(&fa, 0, sizeof fa); fa.fail_at = k; fa.min_size = min_size;
        memset(&dd, 0, sizeof dd);
        dd.paths = paths; dd.num_paths = nobj; dd.features = ft; dd.num_features = 2;
        dd.open_source = mem_open; dd.source_user = &w;
        dd.allocator.alloc = fa_alloc; dd.allocator.realloc = fa_realloc; dd.allocator.free = fa_free; dd.allocator.user = &fa;
        ds = NULL;
        r = gpufeed_dataset_open(&ds, &dd, &err);
        if (r == GPUFEED_OK) { /* only when no allocation failed: none may be swallowed */
            opened = 1;
            gpufeed_dataset_close(ds);
            if (fa.calls >= fa.fail_at && (*bad)++ < 3) fprintf(stderr, "  allocation %ld failed, yet the dataset opened\n", k);
        }
        else if (r != GPUFEED_ERR_OUT_OF_MEMORY || ds != NULL || !strstr(err.message, "out of memory")) {
            if ((*bad)++ < 3) fprintf(stderr, "  allocation %ld failing: result %d, \"%s\"\n", k, (int)r, err.message);
        }
        if (w.closes != w.opens) {
            if ((*bad)++ < 3) fprintf(stderr, "  allocation %ld failing: %ld sources opened, %ld closed\n", k, w.opens, w.closes);
        }
    }
    return opened ? k - 1 : -1;
}

static void test_open_source_out_of_memory(void)
{
    static char longid[1001];
    long n1, n2;
    int bad = 0;
    n1 = oom_points(2, "etag=\"abc\"", 0, &bad);
    memset(longid, 'e', 1000);
    n2 = oom_points(70, longid, 65536, &bad);
    CHECK_MSG(n1 > 0 && n2 > 0, "the dataset never opened (%ld, %ld)", n1, n2);
    CHECK_MSG(bad == 0, "%d failing allocations without a clean out-of-memory error", bad);
    printf("  %ld allocation points (2 objects) and %ld large ones (70 objects, long identities) failed one by one:"
           " each an out-of-memory error, every source closed\n", n1, n2);
}

static void test_cache_keys_on_identity(void)
{
    static uint64_t a[512], b[512], c[512];
    char dir[] = "/tmp/gpufeed_remote_cacheXXXXXX";
    gpufeed_stats st;
    world w;
    int na, nb, nc;
    if (!mkdtemp(dir)) { CHECK(0); return; }
    memset(&w, 0, sizeof w); w.identity = "size=196181 etag=\"abc\"";
    na = run(&w, dir, 1, a, 512, &st);             /* builds */
    CHECK(na > 0 && st.cache_state == GPUFEED_CACHE_READY);
    w.reads_total = 0;
    nb = run(&w, dir, 2, b, 512, &st);             /* served from the cache */
    CHECK_MSG(w.reads_total == w.reads_at_open, "%ld source reads after opening a cached dataset", w.reads_total - w.reads_at_open);
    CHECK(nb == 2 * na && memcmp(a, b, (size_t)na * sizeof a[0]) == 0);
    CHECK(st.units_from_cache > 0 && st.bytes_read == 0);
    CHECK_MSG(st.bytes_read == 0, "%llu source bytes with a ready cache", (unsigned long long)st.bytes_read);
    w.identity = "size=196181 etag=\"def\"";      /* the object changed: another key */
    nc = run(&w, dir, 1, c, 512, &st);
    CHECK(nc == na && memcmp(a, c, (size_t)na * sizeof a[0]) == 0);
    CHECK_MSG(st.units_from_cache == 0 && st.bytes_read > 0, "a new identity was served from the old cache");
    {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        CHECK(system(cmd) == 0);
    }
}

int main(void)
{
    RUN(test_same_batches_and_hints);
    RUN(test_reads_inside_hints);
    RUN(test_open_source_failure);
    RUN(test_open_source_misuse);
    RUN(test_file_open_closes_source);
    RUN(test_open_source_out_of_memory);
    RUN(test_cache_keys_on_identity);
    return TEST_SUMMARY();
}
