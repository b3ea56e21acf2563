/* test_uploader_host.c -- the uploader's host path (no GPU needed).

   Build and run from the repository root:
       cc -O2 -std=c99 -Wall -Wextra -Werror -pedantic -DGPUFEED_NO_CUDA -I. tests/test_uploader_host.c -o build/test_uploader_host -lpthread -lm
       build/test_uploader_host [PARQUET]      (default examples/data/flights.parquet)
   Also on the CUDA driver (a plain build: libcuda.so.1 loaded at run
   time) and with the CUDA runtime compiled in; on a machine without a
   usable device the uploader falls back the same way, with a device the
   checks that need "no device" are skipped:
       cc -std=c99 -Wall -Wextra -Werror -pedantic -I. tests/test_uploader_host.c -o build/test_uploader_host_drv -lpthread -lm -ldl
       cc -std=c99 -Wall -Wextra -Werror -pedantic -DGPUFEED_CUDA -I. -I$CUDA/include tests/test_uploader_host.c \
          -o build/test_uploader_host_cuda -L$CUDA/lib64 -lcudart -lpthread -lm
   GF_EXPECT_WHY=TEXT: the reason for "no device" must contain TEXT (the
   suite sets it where it knows what the machine lacks).

   Checks: with host_fallback = 1 the uploader's batches (host content) hash
   equal to a plain loader's stream for the same seed (both layouts,
   validity masks, 2 workers, shuffled, 3 epochs); host_fallback = 0 fails
   with GPUFEED_ERR_NO_DEVICE and a message; held batches are never
   overwritten; holding more than `slots` batches is an error; releasing a
   bad slot (out of range, not held, twice) is an error; slots 1 / 17 / -1
   are GPUFEED_ERR_INVALID_ARG; the loader gets its own buffers back at
   uploader close. Ends with "N passed, N failed". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GPUFEED_IMPLEMENTATION
#include "gpufeed.h"
#include "gf_test.h"

static const char *g_path = "examples/data/flights.parquet";
static int g_cuda;              /* a usable device: the fallback checks do not apply */
static char g_why[256];

#define NF 4
#define EPOCHS 3
#define BATCH 4096

typedef struct pipe { gpufeed_dataset *ds; gpufeed_loader *l; } pipe_t;

static int open_pipe(pipe_t *p, int layout, uint64_t seed, int64_t epochs)
{
    const char *paths[1];
    gpufeed_feature ft[NF];
    gpufeed_dataset_desc dd;
    gpufeed_loader_desc ld;
    gpufeed_error err;
    paths[0] = g_path;
    memset(ft, 0, sizeof ft);
    memset(&dd, 0, sizeof dd);
    memset(&ld, 0, sizeof ld);
    p->ds = NULL; p->l = NULL;
    ft[0].column = "dep_delay"; ft[0].dtype = GPUFEED_DT_F32; ft[0].validity = 1;
    ft[1].column = "distance"; ft[1].dtype = GPUFEED_DT_F64;
    ft[2].column = "carrier"; ft[2].dtype = GPUFEED_DT_I32; ft[2].hash_buckets = 97; ft[2].validity = 1;
    ft[3].column = "month"; ft[3].dtype = GPUFEED_DT_U8;
    dd.paths = paths; dd.num_paths = 1; dd.features = ft; dd.num_features = NF;
    dd.layout = layout; dd.unit_rows = 32768;
    if (gpufeed_dataset_open(&p->ds, &dd, &err)) { fprintf(stderr, "  dataset: %s\n", err.message); return -1; }
    ld.batch_rows = BATCH; ld.workers = 2; ld.seed = seed; ld.shuffle_window = 2; ld.epochs = epochs;
    if (gpufeed_loader_open(&p->l, p->ds, &ld, &err)) {
        fprintf(stderr, "  loader: %s\n", err.message);
        gpufeed_dataset_close(p->ds); p->ds = NULL; return -1;
    }
    return 0;
}

static void close_pipe(pipe_t *p)
{
    gpufeed_loader_close(p->l);
    gpufeed_dataset_close(p->ds);
    p->l = NULL; p->ds = NULL;
}

/* the plain loader's stream: one hash per batch (at most cap) */
static int64_t reference_hashes(int layout, uint64_t seed, int64_t epochs, uint64_t *h, int64_t cap, int64_t *rows)
{
    pipe_t p;
    gpufeed_batch b;
    int64_t n = 0;
    gpufeed_result r;
    *rows = 0;
    if (open_pipe(&p, layout, seed, epochs)) return -1;
    while ((r = gpufeed_loader_next(p.l, &b)) == GPUFEED_OK) {
        if (n < cap) h[n] = gpufeed_batch_hash(p.ds, &b);
        n++; *rows += b.num_rows;
    }
    if (r != GPUFEED_DONE) { fprintf(stderr, "  reference loader: %s\n", gpufeed_loader_error(p.l)); n = -1; }
    close_pipe(&p);
    return n;
}

static gpufeed_uploader_desc fallback_desc(int32_t slots)
{
    gpufeed_uploader_desc d;
    memset(&d, 0, sizeof d);
    d.slots = slots; d.host_fallback = 1;
    return d;
}

/* host_fallback = 1 (or device GPUFEED_DEVICE_HOST): the same stream, batch
   for batch */
static int g_host_asked; /* check_stream asks for host batches (device -1): none on a device */

static void check_stream(int layout)
{
    enum { CAP = 1024 };
    static uint64_t ref[CAP];
    int64_t nref, rows_ref, n = 0, rows = 0;
    pipe_t p;
    gpufeed_uploader *u = NULL;
    gpufeed_uploader_desc d = fallback_desc(3);
    gpufeed_device_batch b;
    gpufeed_error err;
    gpufeed_result r;
    int mismatches = 0, bad_slot = 0, bad_dev = 0, nbuf = 0, i;
    if (g_host_asked) { d.device = GPUFEED_DEVICE_HOST; d.host_fallback = 0; }
    const void *seen[64];
    nref = reference_hashes(layout, 1234, EPOCHS, ref, CAP, &rows_ref);
    CHECK(nref > 0 && nref <= CAP);
    if (nref <= 0 || nref > CAP) return;
    CHECK(rows_ref == (int64_t)EPOCHS * 336776 || strcmp(g_path, "examples/data/flights.parquet") != 0);
    if (open_pipe(&p, layout, 1234, EPOCHS)) { CHECK(0); return; }
    r = gpufeed_uploader_open(&u, p.l, &d, &err);
    CHECK_MSG(r == GPUFEED_OK, "%s", err.message);
    if (r) { close_pipe(&p); return; }
    while ((r = gpufeed_uploader_next(u, &b)) == GPUFEED_OK) {
        if (n < nref && gpufeed_batch_hash(p.ds, &b.host) != ref[n]) mismatches++;
        if (b.slot != (int32_t)(n % 3)) bad_slot++;
        {   /* the host buffers batches arrive in */
            const void *hp = layout == GPUFEED_LAYOUT_ROW_MAJOR ? b.host.data : (b.host.features ? b.host.features[0] : NULL);
            for (i = 0; i < nbuf && seen[i] != hp; i++) {}
            if (i == nbuf && i < 64) seen[nbuf++] = hp;
        }
        if ((!g_cuda || g_host_asked) && (b.on_device || b.data || b.features || b.valid || b.ready)) bad_dev++;
        if (layout == GPUFEED_LAYOUT_ROW_MAJOR) CHECK(b.host.data != NULL);
        else CHECK(b.host.features != NULL && b.host.features[0] != NULL && b.host.data == NULL);
        CHECK(b.host.valid && b.host.valid[0] && b.host.valid[2] && !b.host.valid[1] && !b.host.valid[3]);
        CHECK(gpufeed_device_batch_wait(&b, NULL) == GPUFEED_OK || g_cuda);
        CHECK(gpufeed_uploader_release(u, &b, NULL) == GPUFEED_OK);
        rows += b.host.num_rows;
        n++;
    }
    CHECK_MSG(r == GPUFEED_DONE, "%d: %s", (int)r, gpufeed_uploader_error(u));
    CHECK_MSG(n == nref, "%lld batches, reference %lld", (long long)n, (long long)nref);
    CHECK(rows == rows_ref);
    CHECK_MSG(mismatches == 0, "%d of %lld batches differ from the loader's own stream", mismatches, (long long)n);
    CHECK(bad_slot == 0);
    CHECK(bad_dev == 0);
    /* no copy per batch: each slot trades its free buffer for the loader's
       batch slot's, so batches arrive in more buffers than the 3 slots */
    CHECK_MSG(nbuf > 3, "batches came in %d host buffers: copied into the slots, not exchanged", nbuf);
    CHECK(gpufeed_uploader_next(u, &b) == GPUFEED_DONE); /* stays done */
    gpufeed_uploader_close(u);
    close_pipe(&p);
}

static void test_fallback_stream_row_major(void) { check_stream(GPUFEED_LAYOUT_ROW_MAJOR); }
static void test_fallback_stream_per_feature(void) { check_stream(GPUFEED_LAYOUT_PER_FEATURE); }
/* device GPUFEED_DEVICE_HOST: host batches even where a GPU is usable, no
   host_fallback needed */
static void test_device_host_asked(void)
{
    g_host_asked = 1;
    check_stream(GPUFEED_LAYOUT_ROW_MAJOR);
    g_host_asked = 0;
}

/* held batches are never overwritten by later ones; the loader gets its own
   buffers back at close and goes on with the same stream */
static void test_held_batches_intact_and_loader_restored(void)
{
    enum { CAP = 1024 };
    static uint64_t ref[CAP];
    int64_t nref, rows_ref, n = 0;
    pipe_t p;
    gpufeed_uploader *u = NULL;
    gpufeed_uploader_desc d = fallback_desc(4);
    gpufeed_device_batch b[4];
    uint64_t h[4];
    gpufeed_batch lb;
    gpufeed_error err;
    gpufeed_result r;
    int i, round, mism = 0;
    nref = reference_hashes(GPUFEED_LAYOUT_PER_FEATURE, 99, 2, ref, CAP, &rows_ref);
    CHECK(nref > 12);
    if (nref <= 12 || nref > CAP) return;
    if (open_pipe(&p, GPUFEED_LAYOUT_PER_FEATURE, 99, 2)) { CHECK(0); return; }
    r = gpufeed_uploader_open(&u, p.l, &d, &err);
    CHECK_MSG(r == GPUFEED_OK, "%s", err.message);
    if (r) { close_pipe(&p); return; }
    for (round = 0; round < 2; round++) {
        for (i = 0; i < 4; i++) {
            CHECK(gpufeed_uploader_next(u, &b[i]) == GPUFEED_OK);
            h[i] = gpufeed_batch_hash(p.ds, &b[i].host);
            if (h[i] != ref[n]) mism++;
            n++;
        }
        /* all four still hold their own content */
        for (i = 0; i < 4; i++) CHECK_MSG(gpufeed_batch_hash(p.ds, &b[i].host) == h[i], "held batch %d changed", i);
        for (i = 0; i < 4; i++) CHECK(gpufeed_uploader_release(u, &b[i], NULL) == GPUFEED_OK);
    }
    CHECK(mism == 0);
    gpufeed_uploader_close(u);
    /* the loader continues on its own buffer, same stream */
    mism = 0;
    while ((r = gpufeed_loader_next(p.l, &lb)) == GPUFEED_OK) {
        if (n >= nref || gpufeed_batch_hash(p.ds, &lb) != ref[n]) mism++;
        n++;
    }
    CHECK(r == GPUFEED_DONE);
    CHECK(n == nref);
    CHECK_MSG(mism == 0, "%d batches after uploader close differ", mism);
    close_pipe(&p);
}

static void test_no_fallback_is_no_device(void)
{
    pipe_t p;
    gpufeed_uploader *u = (gpufeed_uploader *)&p; /* must be reset to NULL */
    gpufeed_uploader_desc d;
    gpufeed_error err;
    gpufeed_result r;
    char why[256];
    const char *want = getenv("GF_EXPECT_WHY");
    CHECK(gpufeed_cuda_available(0, why, sizeof why) == 0);
    CHECK(why[0] != 0);
    if (want && *want) CHECK_HAS(why, want); /* the run says what this machine lacks */
    if (open_pipe(&p, GPUFEED_LAYOUT_ROW_MAJOR, 1, 1)) { CHECK(0); return; }
    memset(&d, 0, sizeof d);
    d.host_fallback = 0;
    r = gpufeed_uploader_open(&u, p.l, &d, &err);
    CHECK(r == GPUFEED_ERR_NO_DEVICE);
    CHECK(err.code == GPUFEED_ERR_NO_DEVICE);
    CHECK(u == NULL);
    CHECK(err.message[0] != 0);
    CHECK_HAS(err.message, "host_fallback");
    CHECK_HAS(err.message, why);
    /* the loader is untouched and still works on its own */
    {
        gpufeed_batch b;
        CHECK(gpufeed_loader_next(p.l, &b) == GPUFEED_OK);
        CHECK(b.num_rows == BATCH);
    }
    close_pipe(&p);
}

static void test_more_than_slots_held(void)
{
    pipe_t p;
    gpufeed_uploader *u = NULL;
    gpufeed_uploader_desc d = fallback_desc(2);
    gpufeed_device_batch b[3];
    gpufeed_error err;
    gpufeed_result r;
    if (open_pipe(&p, GPUFEED_LAYOUT_ROW_MAJOR, 5, 1)) { CHECK(0); return; }
    r = gpufeed_uploader_open(&u, p.l, &d, &err);
    CHECK_MSG(r == GPUFEED_OK, "%s", err.message);
    if (r) { close_pipe(&p); return; }
    CHECK(gpufeed_uploader_next(u, &b[0]) == GPUFEED_OK);
    CHECK(gpufeed_uploader_next(u, &b[1]) == GPUFEED_OK);
    r = gpufeed_uploader_next(u, &b[2]);
    CHECK(r != GPUFEED_OK && r != GPUFEED_DONE);
    CHECK(r == GPUFEED_ERR_INVALID_ARG);
    CHECK_HAS(gpufeed_uploader_error(u), "held");
    /* the refused call consumed nothing: after a release the stream goes on */
    CHECK(gpufeed_uploader_release(u, &b[0], NULL) == GPUFEED_OK);
    CHECK(gpufeed_uploader_next(u, &b[2]) == GPUFEED_OK);
    CHECK(b[2].host.index == 2);
    CHECK(b[2].slot == b[0].slot);
    /* a stale copy of b[0] names the slot b[2] now holds: refused, b[2] stays held */
    CHECK(gpufeed_uploader_release(u, &b[0], NULL) == GPUFEED_ERR_INVALID_ARG);
    CHECK_HAS(gpufeed_uploader_error(u), "newer batch");
    CHECK(gpufeed_uploader_next(u, &b[0]) == GPUFEED_ERR_INVALID_ARG);
    CHECK(gpufeed_uploader_release(u, &b[1], NULL) == GPUFEED_OK);
    CHECK(gpufeed_uploader_release(u, &b[2], NULL) == GPUFEED_OK);
    gpufeed_uploader_close(u);
    close_pipe(&p);
}

static void test_bad_release(void)
{
    pipe_t p;
    gpufeed_uploader *u = NULL;
    gpufeed_uploader_desc d = fallback_desc(3);
    gpufeed_device_batch b, bad;
    gpufeed_error err;
    gpufeed_result r;
    if (open_pipe(&p, GPUFEED_LAYOUT_ROW_MAJOR, 6, 1)) { CHECK(0); return; }
    r = gpufeed_uploader_open(&u, p.l, &d, &err);
    CHECK_MSG(r == GPUFEED_OK, "%s", err.message);
    if (r) { close_pipe(&p); return; }
    CHECK(gpufeed_uploader_next(u, &b) == GPUFEED_OK);
    bad = b; bad.slot = -1;
    CHECK(gpufeed_uploader_release(u, &bad, NULL) == GPUFEED_ERR_INVALID_ARG);
    bad.slot = 3;
    CHECK(gpufeed_uploader_release(u, &bad, NULL) == GPUFEED_ERR_INVALID_ARG);
    bad.slot = 1000000;
    CHECK(gpufeed_uploader_release(u, &bad, NULL) == GPUFEED_ERR_INVALID_ARG);
    bad.slot = 1; /* in range, not held */
    CHECK(gpufeed_uploader_release(u, &bad, NULL) == GPUFEED_ERR_INVALID_ARG);
    CHECK(gpufeed_uploader_release(u, NULL, NULL) == GPUFEED_ERR_INVALID_ARG);
    CHECK(gpufeed_uploader_release(NULL, &b, NULL) == GPUFEED_ERR_INVALID_ARG);
    CHECK(gpufeed_uploader_release(u, &b, NULL) == GPUFEED_OK);
    CHECK(gpufeed_uploader_release(u, &b, NULL) == GPUFEED_ERR_INVALID_ARG); /* twice */
    CHECK(gpufeed_uploader_next(NULL, &b) == GPUFEED_ERR_INVALID_ARG);
    CHECK(gpufeed_uploader_next(u, NULL) == GPUFEED_ERR_INVALID_ARG);
    CHECK(gpufeed_device_batch_wait(NULL, NULL) == GPUFEED_ERR_INVALID_ARG);
    gpufeed_uploader_close(u);
    gpufeed_uploader_close(NULL);
    close_pipe(&p);
}

static void test_slot_counts(void)
{
    static const int32_t bad[] = { 1, 17, -1, 1000 };
    static const int32_t good[] = { 0, 2, 3, 16 };
    pipe_t p;
    gpufeed_uploader *u;
    gpufeed_uploader_desc d;
    gpufeed_error err;
    gpufeed_result r;
    size_t i;
    if (open_pipe(&p, GPUFEED_LAYOUT_ROW_MAJOR, 7, 1)) { CHECK(0); return; }
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        d = fallback_desc(bad[i]);
        u = (gpufeed_uploader *)&p;
        r = gpufeed_uploader_open(&u, p.l, &d, &err);
        CHECK_MSG(r == GPUFEED_ERR_INVALID_ARG, "slots %d gave %d", bad[i], (int)r);
        CHECK(u == NULL);
        CHECK_HAS(err.message, "slots");
    }
    for (i = 0; i < sizeof good / sizeof good[0]; i++) {
        gpufeed_device_batch b;
        int32_t k, n = good[i] ? good[i] : 3;
        d = fallback_desc(good[i]);
        u = NULL;
        r = gpufeed_uploader_open(&u, p.l, &d, &err);
        CHECK_MSG(r == GPUFEED_OK, "slots %d: %s", good[i], err.message);
        if (r) continue;
        /* exactly n batches can be held */
        for (k = 0; k < n; k++) CHECK(gpufeed_uploader_next(u, &b) == GPUFEED_OK);
        CHECK(gpufeed_uploader_next(u, &b) == GPUFEED_ERR_INVALID_ARG);
        gpufeed_uploader_close(u);
    }
    CHECK(gpufeed_uploader_open(NULL, p.l, &d, &err) == GPUFEED_ERR_INVALID_ARG);
    u = (gpufeed_uploader *)&p;
    CHECK(gpufeed_uploader_open(&u, NULL, &d, &err) == GPUFEED_ERR_INVALID_ARG && u == NULL);
    u = (gpufeed_uploader *)&p;
    CHECK(gpufeed_uploader_open(&u, p.l, NULL, &err) == GPUFEED_ERR_INVALID_ARG && u == NULL);
    close_pipe(&p);
}

int main(int argc, char **argv)
{
    FILE *f;
    if (argc > 1) g_path = argv[1];
    f = fopen(g_path, "rb");
    if (!f) { fprintf(stderr, "test_uploader_host: cannot open %s (run from the repository root)\n", g_path); return 2; }
    fclose(f);
    g_cuda = gpufeed_cuda_available(0, g_why, sizeof g_why);
    printf("CUDA: %s\n", g_cuda ? "a device is usable (fallback-only checks are skipped)" : g_why);
    RUN(test_fallback_stream_row_major);
    RUN(test_fallback_stream_per_feature);
    RUN(test_device_host_asked);
    RUN(test_held_batches_intact_and_loader_restored);
    if (g_cuda) printf("SKIP: test_no_fallback_is_no_device: a CUDA device is usable\n");
    else RUN(test_no_fallback_is_no_device);
    RUN(test_more_than_slots_held);
    RUN(test_bad_release);
    RUN(test_slot_counts);
    return TEST_SUMMARY();
}
