/* Faults while the loader and its tensor cache run (gpufeed.h >>cache,
   >>loader): every case compares each batch's hash with a clean run of
   the same seed, with timing made random (the loader's debug_jitter_us
   and a fault thread that strikes after a random delay), TRIES times:

   - bytes flipped in a cache file while it is served (the cache held in
     the loader's memory, read into the ring's slots, and verify-every-use):
     0 wrong batches, the run ends well;
   - the cache file cut to half while it is served: no signal, 0 wrong;
   - a source rewritten in place (same size, same footer) while the cache
     is built from it, then put back with its old bytes and times: the
     runs after serve the original's batches (the build was discarded, or
     was complete before the change);
   - a source cut short during an epoch, read with GPUFEED_OPEN_PREAD: an
     error naming the file, no signal, every batch before it right;
   - two threads in gpufeed_loader_next on one loader: GPUFEED_ERR_USAGE
     for the one that comes second, every batch delivered once, no hang;
   - out-of-range desc fields (start_epoch 2^62, INT64_MAX ...) and a
     start_batch past the epoch's end: errors naming them, no hang;
   - a dataset closed before its loaders (at a random moment, also with a
     cache and partitions): the loaders go on and free it (ASan: no leak,
     no use after free);
   - running out of file descriptors: messages that say so;
   - file systems read with pread by default (statfs's magic numbers).

   A hang ends the program through alarm() naming the test.

     cc -std=c99 -I. tests/test_faults.c -o test_faults -lpthread -lm
     ./test_faults [TRIES [NAME]] (from the repository root; default 10
                                   tries; NAME: the tests whose name holds it;
                                   last line "N passed, N failed")
     ./test_faults --write-pair A B   two files of the same size and footer,
                                   other values (for tests/test_faults.sh)
     ./test_faults --flip FILE N SEED N bytes of FILE flipped in place

   Scratch files go to a fresh directory under /tmp (removed at the end). */
#define _POSIX_C_SOURCE 200809L
#define GPUFEED_IMPLEMENTATION
#include "../gpufeed.h"
#include "gf_test.h"
#include "pq_writer.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <fcntl.h>
#include <unistd.h>
#include <pthread.h>
#include <time.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/resource.h>

#define IDS "tests/data/ids.parquet"
#define MAXB 4096
static char g_root[64];
static int g_tries = 10;
static uint64_t g_rng = 0x5eed;

static uint64_t rnd(uint64_t n)
{
    g_rng += 0x9E3779B97F4A7C15ull;
    return n ? gf__mix64(g_rng) % n : 0;
}

static void sleep_us(uint64_t us)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(us / 1000000u); ts.tv_nsec = (long)(us % 1000000u) * 1000l;
    nanosleep(&ts, NULL);
}

/* a hang is a failure naming the test */
static void on_alarm(int sig)
{
    static const char msg[] = "FAIL: a test hung (alarm): ";
    (void)sig;
    if (write(2, msg, sizeof msg - 1) < 0 || write(2, gf_t_current, strlen(gf_t_current)) < 0 || write(2, "\n", 1) < 0) _exit(3);
    _exit(3);
}

typedef struct logbox { const char *needle; int hits, total; char last[600]; pthread_mutex_t mu; } logbox;
static void log_fn(void *user, const char *msg)
{
    logbox *lb = (logbox *)user;
    pthread_mutex_lock(&lb->mu);
    lb->total++;
    snprintf(lb->last, sizeof lb->last, "%s", msg);
    if (lb->needle && strstr(msg, lb->needle)) lb->hits++;
    pthread_mutex_unlock(&lb->mu);
}
static void log_init(logbox *lb, const char *needle)
{
    memset(lb, 0, sizeof *lb);
    lb->needle = needle;
    pthread_mutex_init(&lb->mu, NULL);
}

static gpufeed_dataset *open_ids(int64_t unit_rows, uint32_t flags)
{
    static const char *paths[] = { IDS };
    gpufeed_feature ft[3];
    gpufeed_dataset_desc d;
    gpufeed_dataset *ds = NULL;
    gpufeed_error err;
    memset(ft, 0, sizeof ft); memset(&d, 0, sizeof d);
    ft[0].column = "id"; ft[0].dtype = GPUFEED_DT_F64;
    ft[1].column = "x"; ft[1].dtype = GPUFEED_DT_F32;
    ft[2].column = "y"; ft[2].dtype = GPUFEED_DT_F32; ft[2].validity = 1;
    d.paths = paths; d.num_paths = 1; d.features = ft; d.num_features = 3; d.unit_rows = unit_rows; d.flags = flags;
    if (gpufeed_dataset_open(&ds, &d, &err)) { fprintf(stderr, "  dataset: %s\n", err.message); return NULL; }
    return ds;
}

/* the generated files: NRG row groups of RGROWS rows, two required DOUBLE
   columns, PLAIN, uncompressed, no statistics: any scale gives the same
   size and the same footer bytes */
#define NRG 8
#define RGROWS 2000
static void write_plain(const char *path, double scale)
{
    pqw_schema sch[3];
    pqw_rowgroup rg[NRG];
    pqw_chunk ch[NRG][2];
    pqw_page pg[NRG][2];
    pqw_buf body[NRG][2], out;
    pqw_file f;
    int g, c, i;
    FILE *fp;
    memset(&f, 0, sizeof f); memset(rg, 0, sizeof rg); memset(ch, 0, sizeof ch); memset(body, 0, sizeof body); memset(&out, 0, sizeof out);
    sch[0] = pqw_root(2);
    sch[1] = pqw_leaf("x", PQW_DOUBLE, PQW_REQUIRED);
    sch[2] = pqw_leaf("y", PQW_DOUBLE, PQW_REQUIRED);
    for (g = 0; g < NRG; g++) {
        for (c = 0; c < 2; c++) {
            for (i = 0; i < RGROWS; i++) {
                double v = ((double)(g * RGROWS + i) + 0.5 * c) * scale;
                pqw_plain_double(&body[g][c], &v, 1);
            }
            pg[g][c] = pqw_data_page(&body[g][c], RGROWS, PQW_PLAIN);
            ch[g][c].pages = &pg[g][c]; ch[g][c].npages = 1;
            ch[g][c].physical = PQW_DOUBLE; ch[g][c].path = c ? "y" : "x"; ch[g][c].codec = PQW_UNCOMPRESSED;
        }
        rg[g].chunks = ch[g]; rg[g].nchunks = 2;
    }
    f.schema = sch; f.nschema = 3; f.rgs = rg; f.nrgs = NRG; f.created_by = "gpufeed tests";
    pqw_build(&f, &out);
    fp = fopen(path, "wb");
    if (!fp || fwrite(out.p, 1, out.n, fp) != out.n) { fprintf(stderr, "cannot write %s\n", path); exit(1); }
    fclose(fp);
    pqw_free(&out);
    for (g = 0; g < NRG; g++) { pqw_free(&body[g][0]); pqw_free(&body[g][1]); }
}

static gpufeed_dataset *open_plain(const char *path, uint32_t flags)
{
    const char *paths[1];
    gpufeed_feature ft[2];
    gpufeed_dataset_desc d;
    gpufeed_dataset *ds = NULL;
    gpufeed_error err;
    paths[0] = path;
    memset(ft, 0, sizeof ft); memset(&d, 0, sizeof d);
    ft[0].column = "x"; ft[0].dtype = GPUFEED_DT_F64;
    ft[1].column = "y"; ft[1].dtype = GPUFEED_DT_F64;
    d.paths = paths; d.num_paths = 1; d.features = ft; d.num_features = 2; d.unit_rows = RGROWS; d.flags = flags;
    if (gpufeed_dataset_open(&ds, &d, &err)) { fprintf(stderr, "  dataset %s: %s\n", path, err.message); return NULL; }
    return ds;
}

/* a run: every batch's (epoch, index, hash); the result that ended it */
typedef struct run_t {
    int n;
    int64_t epoch[MAXB], index[MAXB];
    uint64_t hash[MAXB];
    gpufeed_result end;
    char err[GPUFEED_ERROR_MAX];
    gpufeed_stats st;
} run_t;

static void run_loader(gpufeed_dataset *ds, const gpufeed_loader_desc *ld, run_t *r)
{
    gpufeed_loader *l;
    gpufeed_batch b;
    gpufeed_error err;
    memset(r, 0, sizeof *r);
    if (gpufeed_loader_open(&l, ds, ld, &err)) { r->end = err.code; snprintf(r->err, sizeof r->err, "%s", err.message); return; }
    while ((r->end = gpufeed_loader_next(l, &b)) == GPUFEED_OK && r->n < MAXB) {
        r->epoch[r->n] = b.epoch; r->index[r->n] = b.index; r->hash[r->n] = gpufeed_batch_hash(ds, &b);
        r->n++;
    }
    snprintf(r->err, sizeof r->err, "%s", gpufeed_loader_error(l));
    gpufeed_loader_stats(l, &r->st);
    gpufeed_loader_close(l);
}

/* batches of `got` that differ from `ref` (a batch missing counts) */
static int wrong_batches(const run_t *ref, const run_t *got)
{
    int i, bad = 0;
    for (i = 0; i < ref->n; i++) bad += i >= got->n || got->hash[i] != ref->hash[i] || got->epoch[i] != ref->epoch[i] || got->index[i] != ref->index[i];
    return bad + (got->n > ref->n ? got->n - ref->n : 0);
}

static int64_t file_size(const char *p) { struct stat st; return stat(p, &st) == 0 ? (int64_t)st.st_size : -1; }

/* the one .gfc in dir, into out; 0 when there is exactly one */
static int find_gfc(const char *dir, char *out, size_t cap)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL) {
        size_t k = strlen(e->d_name);
        if (k > 4 && strcmp(e->d_name + k - 4, ".gfc") == 0) { snprintf(out, cap, "%s/%s", dir, e->d_name); n++; }
    }
    closedir(d);
    return n == 1 ? 0 : -1;
}

static int build_cache(gpufeed_dataset *ds, const char *dir)
{
    gpufeed_cache_desc cd;
    gpufeed_error err;
    memset(&cd, 0, sizeof cd);
    cd.dir = dir;
    if (gpufeed_cache_build(ds, &cd, 2, NULL, NULL, &err)) { fprintf(stderr, "  build: %s\n", err.message); return -1; }
    return 0;
}

/* ---- a thread that strikes a file after a delay ---- */
enum { STRIKE_FLIP, STRIKE_TRUNCATE, STRIKE_REWRITE };
typedef struct strike {
    int kind;
    const char *path, *from;           /* REWRITE: from's bytes over path's, in place */
    uint64_t delay_us, seed;
    int nbytes;                        /* FLIP: bytes flipped */
    int done;
} strike;

static void *strike_main(void *p)
{
    strike *s = (strike *)p;
    sleep_us(s->delay_us);
    if (s->kind == STRIKE_TRUNCATE) {
        int64_t n = file_size(s->path);
        if (n > 0 && truncate(s->path, (off_t)(n / 2)) != 0) perror("truncate");
    } else if (s->kind == STRIKE_FLIP) {
        int fd = open(s->path, O_RDWR);
        int64_t n = file_size(s->path);
        uint64_t x = s->seed;
        int i;
        for (i = 0; fd >= 0 && n > 0 && i < s->nbytes; i++) {
            uint8_t b;
            off_t at;
            x = gf__mix64(x + (uint64_t)i);
            at = (off_t)(x % (uint64_t)n);
            if (pread(fd, &b, 1, at) == 1) { b ^= (uint8_t)(1 + (x >> 40) % 255); if (pwrite(fd, &b, 1, at) != 1) break; }
        }
        if (fd >= 0) close(fd);
    } else { /* like dd conv=notrunc */
        FILE *in = fopen(s->from, "rb");
        int fd = open(s->path, O_WRONLY);
        char buf[65536];
        size_t k;
        off_t at = 0;
        while (in && fd >= 0 && (k = fread(buf, 1, sizeof buf, in)) > 0) {
            if (pwrite(fd, buf, k, at) != (ssize_t)k) break;
            at += (off_t)k;
        }
        if (in) fclose(in);
        if (fd >= 0) close(fd);
    }
    __atomic_store_n(&s->done, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

/* ---- the cache changed under a loader that serves it ---- */

/* one try: a loader over the cache in dir (mode 0 held in memory, 1 read
   into the slots, 2 held in memory with VERIFY_EVERY_USE), the file struck
   at a random moment. 0 wrong batches and DONE. */
static int cache_strike_try(gpufeed_dataset *ds, const run_t *ref, gpufeed_loader_desc *ld, const char *dir, int mode, int kind, uint64_t span_us,
                            const char *what)
{
    gpufeed_cache_desc cd;
    char path[512];
    strike s;
    pthread_t th;
    logbox lb;
    static run_t got;
    int bad;
    if (find_gfc(dir, path, sizeof path) != 0 && build_cache(ds, dir) != 0) return 0;
    if (find_gfc(dir, path, sizeof path) != 0) { fprintf(stderr, "  %s: no cache file\n", what); return 0; }
    log_init(&lb, NULL);
    memset(&cd, 0, sizeof cd);
    cd.dir = dir; cd.no_map = mode == 1; cd.verify = mode == 2 ? GPUFEED_CACHE_VERIFY_EVERY_USE : 0; cd.log = log_fn; cd.log_user = &lb;
    ld->cache = &cd;
    memset(&s, 0, sizeof s);
    s.kind = kind; s.path = path; s.delay_us = rnd(span_us); s.seed = rnd(UINT64_MAX); s.nbytes = 2000;
    if (pthread_create(&th, NULL, strike_main, &s) != 0) return 0;
    run_loader(ds, ld, &got);
    pthread_join(th, NULL);
    ld->cache = NULL;
    bad = wrong_batches(ref, &got);
    if (bad || got.end != GPUFEED_DONE)
        fprintf(stderr, "  %s (mode %d, struck after %llu us): %d wrong batches of %d, end %d (%s); last warning: %s\n", what, mode,
                (unsigned long long)s.delay_us, bad, ref->n, got.end, got.err, lb.last);
    pthread_mutex_destroy(&lb.mu);
    return bad == 0 && got.end == GPUFEED_DONE;
}

static void cache_strike(int kind, const char *name)
{
    gpufeed_dataset *ds = open_ids(1000, 0);
    gpufeed_loader_desc ld;
    static run_t ref;
    char dir[256];
    int mode, t, good = 0, n = 0;
    uint64_t t0, span;
    struct timespec a, b;
    if (!ds) { CHECK(0); return; }
    memset(&ld, 0, sizeof ld);
    ld.batch_rows = 700; ld.workers = 2; ld.epochs = 12; ld.shuffle_window = 2; ld.seed = 7; ld.debug_jitter_us = 3000;
    clock_gettime(CLOCK_MONOTONIC, &a);
    run_loader(ds, &ld, &ref);
    clock_gettime(CLOCK_MONOTONIC, &b);
    t0 = (uint64_t)(((int64_t)b.tv_sec - (int64_t)a.tv_sec) * 1000000 + ((int64_t)b.tv_nsec - (int64_t)a.tv_nsec) / 1000);
    span = t0 > 1000 ? t0 : 1000; /* strike anywhere in a run's length */
    CHECK_MSG(ref.end == GPUFEED_DONE && ref.n > 0, "reference: %s", ref.err);
    for (mode = 0; mode < 3; mode++)
        for (t = 0; t < g_tries; t++) {
            snprintf(dir, sizeof dir, "%s/%s-%d-%d", g_root, name, mode, t);
            mkdir(dir, 0777);
            n++;
            good += cache_strike_try(ds, &ref, &ld, dir, mode, kind, span, name);
        }
    CHECK_MSG(good == n, "%s: %d of %d tries with 0 wrong batches", name, good, n);
    printf("  %s: %d tries (3 serving modes), every one 0 wrong batches: %s\n", name, n, good == n ? "yes" : "NO");
    gpufeed_dataset_close(ds);
}

/* 2,000 bytes flipped in the cache file while it is served */
static void test_cache_flipped_while_served(void) { cache_strike(STRIKE_FLIP, "flip"); }
/* the cache file cut to half while it is served: no SIGBUS */
static void test_cache_truncated_while_served(void) { cache_strike(STRIKE_TRUNCATE, "truncate"); }

/* ---- a source changed while the cache is built from it ---- */

static void set_mtime(const char *path, const struct stat *st)
{
    struct timespec ts[2];
    ts[0] = st->st_atim; ts[1] = st->st_mtim;
    if (utimensat(AT_FDCWD, path, ts, 0) != 0) perror("utimensat");
}

static void copy_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    char buf[65536];
    size_t k;
    while (a && b && (k = fread(buf, 1, sizeof buf, a)) > 0) if (fwrite(buf, 1, k, b) != k) break;
    if (a) fclose(a);
    if (b) fclose(b);
}

/* The source S (A's bytes) is rewritten in place with B's (same size,
   same footer) at a random moment of the build; `restore_during`: put back
   during the build too, else after the run (cp -p: A's bytes, A's times).
   Every run after that serves A's batches. */
static void test_source_rewritten_during_build(void)
{
    char a[256], bpath[256], s[256], dir[256];
    static run_t ref, got;
    gpufeed_loader_desc ld;
    gpufeed_cache_desc cd;
    struct stat ast;
    int t, good = 0, discarded = 0, rd, ntries = 0;
    snprintf(a, sizeof a, "%s/a.parquet", g_root);
    snprintf(bpath, sizeof bpath, "%s/b.parquet", g_root);
    snprintf(s, sizeof s, "%s/s.parquet", g_root);
    write_plain(a, 1.0);
    write_plain(bpath, -3.0);
    CHECK(file_size(a) == file_size(bpath) && file_size(a) > 0);
    {
        gpufeed_dataset *da = open_plain(a, 0), *db = open_plain(bpath, 0);
        size_t la = 0, lb = 0;
        const uint8_t *fa = da ? gpufeed_file_footer(da->files[0], &la) : NULL, *fb = db ? gpufeed_file_footer(db->files[0], &lb) : NULL;
        CHECK_MSG(fa && fb && la == lb && memcmp(fa, fb, la) == 0, "the two files' footers differ: the case needs them equal");
        gpufeed_dataset_close(da); gpufeed_dataset_close(db);
    }
    stat(a, &ast);
    memset(&ld, 0, sizeof ld);
    ld.batch_rows = 1500; ld.workers = 2; ld.epochs = 2; ld.shuffle_window = 2; ld.seed = 3;
    {
        gpufeed_dataset *ds = open_plain(a, 0);
        if (!ds) { CHECK(0); return; }
        run_loader(ds, &ld, &ref);
        gpufeed_dataset_close(ds);
        CHECK(ref.end == GPUFEED_DONE && ref.n > 0);
    }
    /* random strike times, then (while none landed inside a build: a loaded
       machine stretches the timing) strikes 5 ms apart from 5 ms on, inside
       the ~80 ms build, so the case is met whatever the machine's speed */
    for (t = 0; t < 2 * g_tries || (discarded == 0 && t < 2 * g_tries + 16); t++) {
        gpufeed_dataset *ds;
        strike st1, st2;
        pthread_t t1, t2;
        logbox lbx;
        int restore_during = t % 2, ok = 1, k;
        copy_file(a, s);
        set_mtime(s, &ast);
        snprintf(dir, sizeof dir, "%s/rewrite-%d", g_root, t);
        ds = open_plain(s, 0);
        if (!ds) { CHECK(0); continue; }
        log_init(&lbx, "while the cache was built");
        memset(&cd, 0, sizeof cd);
        cd.dir = dir; cd.log = log_fn; cd.log_user = &lbx;
        ld.cache = &cd;
        ld.debug_jitter_us = 20000; /* a build of 8 units: ~80 ms */
        memset(&st1, 0, sizeof st1); memset(&st2, 0, sizeof st2);
        st1.kind = STRIKE_REWRITE; st1.path = s; st1.from = bpath;
        st1.delay_us = t < 2 * g_tries ? rnd(100000) : 5000 + 5000 * (uint64_t)(t - 2 * g_tries);
        st2.kind = STRIKE_REWRITE; st2.path = s; st2.from = a; st2.delay_us = st1.delay_us + rnd(60000);
        pthread_create(&t1, NULL, strike_main, &st1);
        run_loader(ds, &ld, &got); /* epoch 0 builds; mixed rows reach this run only as the source holds them */
        pthread_join(t1, NULL);
        if (restore_during) { /* the second strike waits for the first */
            pthread_create(&t2, NULL, strike_main, &st2);
            pthread_join(t2, NULL);
        }
        gpufeed_dataset_close(ds);
        discarded += lbx.hits > 0;
        copy_file(a, s); /* cp -p: A's bytes and times */
        set_mtime(s, &ast);
        ld.debug_jitter_us = (int32_t)rnd(2000);
        for (k = 0; k < 2; k++) { /* the runs after: served from whatever cache there is, or rebuilt */
            ds = open_plain(s, 0);
            if (!ds) { ok = 0; break; }
            run_loader(ds, &ld, &got);
            gpufeed_dataset_close(ds);
            if (got.end != GPUFEED_DONE || (rd = wrong_batches(&ref, &got)) != 0) {
                ok = 0;
                fprintf(stderr, "  try %d (rewrite after %llu us%s), run %d after: %d wrong batches, end %d %s\n", t, (unsigned long long)st1.delay_us,
                        restore_during ? ", put back during the build" : "", k, wrong_batches(&ref, &got), got.end, got.err);
            }
        }
        ld.cache = NULL;
        pthread_mutex_destroy(&lbx.mu);
        good += ok;
        ntries++;
    }
    CHECK_MSG(good == ntries, "%d of %d tries: the runs after served the original's batches", good, ntries);
    CHECK_MSG(discarded > 0, "no try of %d discarded a build (the rewrite never landed during one)", ntries);
    printf("  %d tries, builds discarded in %d, 0 wrong batches after: %s\n", ntries, discarded, good == ntries ? "yes" : "NO");
}

/* A source cut to half during an epoch, read with GPUFEED_OPEN_PREAD: an
   error naming the file (or, struck after the last read, a whole run),
   never a signal; every batch before the error is the reference's. */
static void test_source_truncated_pread(void)
{
    char a[256], s[256];
    static run_t ref, got;
    gpufeed_loader_desc ld;
    int t, good = 0, errs = 0;
    uint64_t span;
    snprintf(a, sizeof a, "%s/ta.parquet", g_root);
    snprintf(s, sizeof s, "%s/ts.parquet", g_root);
    write_plain(a, 2.0);
    memset(&ld, 0, sizeof ld);
    ld.batch_rows = 1000; ld.workers = 2; ld.epochs = 3; ld.shuffle_window = 2; ld.seed = 9;
    ld.debug_jitter_us = 5000;
    {
        struct timespec t0, t1;
        gpufeed_dataset *ds = open_plain(a, GPUFEED_OPEN_PREAD);
        if (!ds) { CHECK(0); return; }
        clock_gettime(CLOCK_MONOTONIC, &t0);
        run_loader(ds, &ld, &ref);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        gpufeed_dataset_close(ds);
        /* struck within the first half of a run as long as the reference's */
        span = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000) / 2;
        if (span < 1000) span = 1000;
        if (span > 60000) span = 60000;
    }
    for (t = 0; t < g_tries; t++) {
        gpufeed_dataset *ds;
        strike st;
        pthread_t th;
        int i, ok = 1;
        copy_file(a, s);
        ds = open_plain(s, GPUFEED_OPEN_PREAD);
        if (!ds) { CHECK(0); continue; }
        memset(&st, 0, sizeof st);
        st.kind = STRIKE_TRUNCATE; st.path = s; st.delay_us = rnd(span);
        pthread_create(&th, NULL, strike_main, &st);
        run_loader(ds, &ld, &got);
        pthread_join(th, NULL);
        gpufeed_dataset_close(ds);
        for (i = 0; i < got.n; i++) if (i >= ref.n || got.hash[i] != ref.hash[i]) ok = 0;
        if (got.end != GPUFEED_DONE) {
            errs++;
            if (got.end >= 0 || !strstr(got.err, "ts.parquet")) ok = 0;
        } else if (got.n != ref.n) ok = 0;
        if (!ok) fprintf(stderr, "  try %d (cut after %llu us): %d batches, end %d: %s\n", t, (unsigned long long)st.delay_us, got.n, got.end, got.err);
        good += ok;
    }
    CHECK_MSG(good == g_tries, "%d of %d tries right", good, g_tries);
    CHECK_MSG(errs > 0, "no try cut the file while it was read");
    printf("  %d tries, %d ended in an error naming the file, every batch before right: %s\n", g_tries, errs, good == g_tries ? "yes" : "NO");
}

/* ---- two threads in one loader's next ---- */

typedef struct nextarg {
    gpufeed_loader *l;
    pthread_mutex_t *mu;
    run_t *rec;                        /* (epoch, index) of each batch either thread got */
    int usage, other;
} nextarg;

static void *next_main(void *p)
{
    nextarg *a = (nextarg *)p;
    gpufeed_batch b;
    gpufeed_result r;
    while ((r = gpufeed_loader_next(a->l, &b)) != GPUFEED_DONE) {
        if (r == GPUFEED_ERR_USAGE) { a->usage++; sleep_us(gf__mix64((uint64_t)a->usage) % 50); continue; }
        if (r != GPUFEED_OK) { a->other++; break; }
        pthread_mutex_lock(a->mu);
        if (a->rec->n < MAXB) { a->rec->epoch[a->rec->n] = b.epoch; a->rec->index[a->rec->n] = b.index; a->rec->n++; }
        pthread_mutex_unlock(a->mu);
    }
    return NULL;
}

static int cmp_batch(const void *x, const void *y)
{
    const int64_t *a = (const int64_t *)x, *b = (const int64_t *)y;
    return a[0] != b[0] ? (a[0] < b[0] ? -1 : 1) : a[1] != b[1] ? (a[1] < b[1] ? -1 : 1) : 0;
}

static void test_two_threads_next(void)
{
    gpufeed_dataset *ds = open_ids(1000, 0);
    gpufeed_loader_desc ld;
    static run_t ref, rec;
    static int64_t pairs[MAXB][2];
    int t, good = 0, usage = 0;
    pthread_mutex_t mu;
    if (!ds) { CHECK(0); return; }
    pthread_mutex_init(&mu, NULL);
    memset(&ld, 0, sizeof ld);
    ld.batch_rows = 500; ld.workers = 2; ld.epochs = 3; ld.shuffle_window = 2; ld.seed = 5;
    run_loader(ds, &ld, &ref);
    for (t = 0; t < g_tries; t++) {
        gpufeed_loader *l;
        gpufeed_error err;
        nextarg x, y;
        pthread_t tx, ty;
        int i, ok = 1;
        ld.debug_jitter_us = (int32_t)(1 + rnd(2000));
        if (gpufeed_loader_open(&l, ds, &ld, &err)) { CHECK_MSG(0, "%s", err.message); continue; }
        memset(&rec, 0, sizeof rec);
        memset(&x, 0, sizeof x); x.l = l; x.mu = &mu; x.rec = &rec;
        y = x;
        pthread_create(&tx, NULL, next_main, &x);
        pthread_create(&ty, NULL, next_main, &y);
        pthread_join(tx, NULL);
        pthread_join(ty, NULL);
        gpufeed_loader_close(l);
        for (i = 0; i < rec.n; i++) { pairs[i][0] = rec.epoch[i]; pairs[i][1] = rec.index[i]; }
        qsort(pairs, (size_t)rec.n, sizeof pairs[0], cmp_batch);
        if (rec.n != ref.n || x.other || y.other) ok = 0;
        for (i = 0; ok && i < rec.n; i++) if (pairs[i][0] != ref.epoch[i] || pairs[i][1] != ref.index[i]) ok = 0;
        if (!ok) fprintf(stderr, "  try %d: %d batches of %d, errors %d/%d\n", t, rec.n, ref.n, x.other, y.other);
        usage += x.usage + y.usage;
        good += ok;
    }
    pthread_mutex_destroy(&mu);
    CHECK_MSG(good == g_tries, "%d of %d tries delivered every batch once", good, g_tries);
    CHECK_MSG(usage > 0, "no call met the other thread inside next");
    printf("  %d tries: every batch once, %d calls refused with GPUFEED_ERR_USAGE, no hang\n", g_tries, usage);
    gpufeed_dataset_close(ds);
}

/* ---- desc fields out of range ---- */

static void bad_desc(gpufeed_dataset *ds, const gpufeed_loader_desc *ld, const char *needle, const char *what)
{
    gpufeed_loader *l = NULL;
    gpufeed_error err;
    gpufeed_result r = gpufeed_loader_open(&l, ds, ld, &err);
    CHECK_MSG(r == GPUFEED_ERR_INVALID_ARG && l == NULL, "%s: result %d", what, r);
    if (r) CHECK_HAS(err.message, needle);
    if (l) gpufeed_loader_close(l);
}

static void test_desc_ranges(void)
{
    gpufeed_dataset *ds = open_ids(1000, 0);
    gpufeed_loader_desc ld, base;
    gpufeed_loader *l;
    gpufeed_error err;
    static run_t full, tail;
    int64_t nb;
    if (!ds) { CHECK(0); return; }
    memset(&base, 0, sizeof base);
    base.batch_rows = 700; base.workers = 2; base.epochs = 2; base.seed = 1;
    ld = base; ld.start_epoch = (int64_t)1 << 62; bad_desc(ds, &ld, "start_epoch 4611686018427387904", "start_epoch 2^62");
    ld = base; ld.start_epoch = INT64_MAX; bad_desc(ds, &ld, "start_epoch", "start_epoch INT64_MAX");
    ld = base; ld.start_epoch = INT64_MAX; ld.epochs = 0; bad_desc(ds, &ld, "start_epoch", "start_epoch INT64_MAX, endless");
    ld = base; ld.epochs = INT64_MAX; bad_desc(ds, &ld, "epochs", "epochs INT64_MAX");
    ld = base; ld.start_epoch = INT64_MAX / 2; ld.epochs = INT64_MAX / 2 + 2; bad_desc(ds, &ld, "epochs", "start_epoch + epochs overflowing");
    ld = base; ld.start_batch = INT64_MAX; bad_desc(ds, &ld, "start_batch", "start_batch INT64_MAX");
    ld = base; ld.batch_rows = INT64_MAX; bad_desc(ds, &ld, "too large", "batch_rows INT64_MAX");
    ld = base; ld.batch_rows = 0; ld.global_batch_rows = INT64_MAX; bad_desc(ds, &ld, "too large", "global_batch_rows INT64_MAX");
    ld = base; ld.start_epoch = -1; bad_desc(ds, &ld, "negative", "start_epoch -1");
    ld = base; ld.debug_jitter_us = -5; bad_desc(ds, &ld, "debug_jitter_us", "debug_jitter_us -5");
    ld = base; ld.trace_max_events = -1; bad_desc(ds, &ld, "trace_max_events", "trace_max_events -1");
    {
        gpufeed_cache_desc cd;
        memset(&cd, 0, sizeof cd); cd.ram_bytes = 1 << 20; cd.verify = 7;
        ld = base; ld.cache = &cd; bad_desc(ds, &ld, "verify mode 7", "cache verify 7");
    }
    /* the largest start_epoch allowed opens and delivers */
    ld = base; ld.start_epoch = (INT64_MAX / 4) / (gpufeed_dataset_unit(ds, 0) ? 21 : 1) - 2; ld.epochs = 1;
    run_loader(ds, &ld, &tail);
    CHECK_MSG(tail.end == GPUFEED_DONE && tail.n > 0 && tail.epoch[0] == ld.start_epoch, "start_epoch %lld: end %d, %d batches: %s",
              (long long)ld.start_epoch, tail.end, tail.n, tail.err);
    /* start_batch: the epoch's count is the next epoch's start; past it, an error naming the count */
    ld = base;
    if (gpufeed_loader_open(&l, ds, &ld, &err) == GPUFEED_OK) { nb = gpufeed_loader_epoch_batches(l, 0); gpufeed_loader_close(l); }
    else nb = -1;
    CHECK(nb > 0);
    run_loader(ds, &ld, &full);
    ld.start_batch = nb;
    run_loader(ds, &ld, &tail);
    CHECK_MSG(tail.end == GPUFEED_DONE && tail.n == full.n - nb && tail.n > 0 && tail.epoch[0] == 1 && tail.index[0] == 0 &&
              tail.hash[0] == full.hash[nb], "start_batch = the batch count (%lld): %d batches", (long long)nb, tail.n);
    {
        char needle[64];
        snprintf(needle, sizeof needle, "which has %lld batches", (long long)nb);
        ld.start_batch = nb + 1; bad_desc(ds, &ld, needle, "start_batch one past the count");
        ld.start_batch = nb + 1000; bad_desc(ds, &ld, "past the end of epoch 0", "start_batch far past the end");
    }
    gpufeed_dataset_close(ds);
}

/* ---- a dataset closed before its loaders ---- */

typedef struct closer { gpufeed_dataset *ds; uint64_t delay_us; } closer;
static void *closer_main(void *p)
{
    closer *c = (closer *)p;
    sleep_us(c->delay_us);
    gpufeed_dataset_close(c->ds);
    return NULL;
}

static void test_dataset_closed_first(void)
{
    static run_t ref, refp, got;
    gpufeed_loader_desc ld, lp;
    int t, good = 0;
    gpufeed_dataset *hds = open_ids(1000, 0); /* hashes batches: a closed dataset's handle is not used */
    if (!hds) { CHECK(0); return; }
    {
        gpufeed_dataset *ds = open_ids(1000, 0);
        if (!ds) { CHECK(0); return; }
        memset(&ld, 0, sizeof ld);
        ld.batch_rows = 600; ld.workers = 2; ld.epochs = 2; ld.shuffle_window = 2; ld.seed = 4;
        lp = ld; lp.batch_rows = 0; lp.global_batch_rows = 800; lp.partitions = 2;
        run_loader(ds, &ld, &ref);
        run_loader(ds, &lp, &refp);
        gpufeed_dataset_close(ds);
    }
    for (t = 0; t < g_tries; t++) {
        gpufeed_dataset *ds = open_ids(1000, 0);
        gpufeed_loader *l1, *l2;
        gpufeed_error err;
        gpufeed_batch b;
        gpufeed_result r;
        gpufeed_cache_desc cd;
        char dir[256];
        closer c;
        pthread_t th;
        int n = 0, ok = 1, cached = t % 2;
        if (!ds) { CHECK(0); continue; }
        snprintf(dir, sizeof dir, "%s/closed-%d", g_root, t);
        memset(&cd, 0, sizeof cd); cd.dir = dir;
        ld.cache = cached ? &cd : NULL;
        ld.debug_jitter_us = 2000;
        lp.debug_jitter_us = 1000;
        if (gpufeed_loader_open(&l1, ds, &ld, &err) || gpufeed_loader_open(&l2, ds, &lp, &err)) { CHECK_MSG(0, "%s", err.message); continue; }
        c.ds = ds; c.delay_us = rnd(30000);
        pthread_create(&th, NULL, closer_main, &c); /* the dataset closed while both loaders run */
        while ((r = gpufeed_loader_next(l1, &b)) == GPUFEED_OK) { if (n >= ref.n || b.index != ref.index[n] || gpufeed_batch_hash(hds, &b) != ref.hash[n]) ok = 0; n++; }
        if (r != GPUFEED_DONE || n != ref.n) ok = 0;
        pthread_join(th, NULL);
        if (t % 3 == 0) gpufeed_loader_close(l1); /* either loader may close first */
        n = 0;
        while ((r = gpufeed_loader_next(l2, &b)) == GPUFEED_OK) { if (n >= refp.n || gpufeed_batch_hash(hds, &b) != refp.hash[n]) ok = 0; n++; }
        if (r != GPUFEED_DONE || n != refp.n) ok = 0;
        gpufeed_loader_close(l2);
        if (t % 3 != 0) gpufeed_loader_close(l1);
        if (!ok) fprintf(stderr, "  try %d (closed after %llu us%s): a stream differs\n", t, (unsigned long long)c.delay_us, cached ? ", cache" : "");
        good += ok;
    }
    ld.cache = NULL;
    CHECK_MSG(good == g_tries, "%d of %d tries", good, g_tries);
    /* closed before the first batch, no thread: the same */
    {
        gpufeed_dataset *ds = open_ids(1000, 0);
        gpufeed_loader *l;
        gpufeed_error err;
        if (ds && gpufeed_loader_open(&l, ds, &ld, &err) == GPUFEED_OK) {
            gpufeed_dataset_close(ds);
            {
                gpufeed_batch b;
                int n = 0, ok = 1;
                while (gpufeed_loader_next(l, &b) == GPUFEED_OK) { if (n >= ref.n || b.index != ref.index[n]) ok = 0; n++; }
                CHECK_MSG(ok && n == ref.n, "closed before the first batch: %d batches of %d", n, ref.n);
            }
            gpufeed_loader_close(l);
        } else CHECK(0);
    }
    printf("  %d tries: both loaders' streams right after the dataset closed under them\n", g_tries);
    gpufeed_dataset_close(hds);
    (void)got;
}

/* ---- out of file descriptors ---- */

static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int n = 0;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL) if (e->d_name[0] != '.') n++;
    closedir(d);
    return n - 1; /* the directory's own */
}

static void test_descriptors(void)
{
    char dir[256], p[300], cdir[256];
    const char *paths[1];
    gpufeed_feature ft[1];
    gpufeed_dataset_desc d;
    gpufeed_dataset *ds = NULL;
    gpufeed_error err;
    struct rlimit old, lim;
    int i, base = open_fds();
    gpufeed_result r;
    if (base < 0 || getrlimit(RLIMIT_NOFILE, &old) != 0) { printf("SKIP no /proc/self/fd or getrlimit\n"); return; }
    snprintf(dir, sizeof dir, "%s/many", g_root);
    mkdir(dir, 0777);
    for (i = 0; i < 12; i++) { snprintf(p, sizeof p, "%s/p%02d.parquet", dir, i); copy_file(IDS, p); }
    memset(ft, 0, sizeof ft); memset(&d, 0, sizeof d);
    ft[0].column = "x"; ft[0].dtype = GPUFEED_DT_F32;
    paths[0] = dir;
    d.paths = paths; d.num_paths = 1; d.features = ft; d.num_features = 1;
    lim = old; lim.rlim_cur = (rlim_t)(base + 6);
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0) { printf("SKIP setrlimit\n"); return; }
    r = gpufeed_dataset_open(&ds, &d, &err); /* each file's descriptor closed once it is mapped */
    CHECK_MSG(r == GPUFEED_OK && ds, "12 files under a limit of %d more descriptors: %s", 6, err.message);
    if (ds) gpufeed_dataset_close(ds);
    ds = NULL;
    {
        int fill[64], nf = 0;
        while (nf < 64 && (fill[nf] = open("/dev/null", O_RDONLY)) >= 0) nf++; /* every descriptor below the limit taken */
        r = gpufeed_dataset_open(&ds, &d, &err);
        while (nf > 0) close(fill[--nf]);
    }
    setrlimit(RLIMIT_NOFILE, &old);
    CHECK_MSG(r == GPUFEED_ERR_IO && !ds, "no descriptor left: result %d", r);
    if (r) { CHECK_HAS(err.message, "out of file descriptors"); CHECK_HAS(err.message, "ulimit -n"); CHECK_HAS(err.message, "many"); }
    if (ds) gpufeed_dataset_close(ds);
    /* the dataset opens; the cache file cannot: a warning that says why, the stream from the source */
    ds = NULL;
    paths[0] = IDS;
    if (gpufeed_dataset_open(&ds, &d, &err) == GPUFEED_OK) {
        gpufeed_loader_desc ld;
        gpufeed_cache_desc cd;
        static run_t ref, got;
        logbox lb;
        memset(&ld, 0, sizeof ld);
        ld.batch_rows = 1000; ld.epochs = 2;
        run_loader(ds, &ld, &ref);
        snprintf(cdir, sizeof cdir, "%s/fdcache", g_root);
        mkdir(cdir, 0777);
        log_init(&lb, "out of file descriptors");
        memset(&cd, 0, sizeof cd); cd.dir = cdir; cd.log = log_fn; cd.log_user = &lb;
        ld.cache = &cd;
        lim = old; lim.rlim_cur = (rlim_t)(open_fds() + 8);
        if (setrlimit(RLIMIT_NOFILE, &lim) == 0) {
            int fill[64], nf = 0;
            while (nf < 64 && (fill[nf] = open("/dev/null", O_RDONLY)) >= 0) nf++; /* every descriptor below the limit taken */
            run_loader(ds, &ld, &got);
            while (nf > 0) close(fill[--nf]);
            setrlimit(RLIMIT_NOFILE, &old);
            CHECK_MSG(got.end == GPUFEED_DONE && wrong_batches(&ref, &got) == 0, "no descriptor for the cache: the stream differs (%s)", got.err);
            CHECK_MSG(lb.hits >= 1, "no warning naming the descriptors (last: %s)", lb.last);
        } else CHECK(0);
        pthread_mutex_destroy(&lb.mu);
        gpufeed_dataset_close(ds);
    } else CHECK_MSG(0, "%s", err.message);
}

/* ---- which files are read with pread by default ---- */

static void test_network_fs(void)
{
    static const uint32_t net[] = { 0x6969u, 0x0BD00BD0u, 0x65735546u, 0xFF534D42u, 0xFE534D42u, 0x517Bu, 0x00C36400u };
    static const uint32_t local[] = { 0xEF53u /* ext4 */, 0x58465342u /* xfs */, 0x01021994u /* tmpfs */, 0x9123683Eu /* btrfs */ };
    size_t i;
    gf__fdsrc fd;
    int open_ = 0;
    uint64_t size = 0, mlen = 0, mpage = 0;
    const uint8_t *map = NULL;
    for (i = 0; i < sizeof net / sizeof net[0]; i++) CHECK_MSG(gf__fs_is_network(net[i]), "magic %08x: not taken for a network file system", net[i]);
    for (i = 0; i < sizeof local / sizeof local[0]; i++) CHECK_MSG(!gf__fs_is_network(local[i]), "magic %08x taken for a network one", local[i]);
    /* a local file: mapped by default, not with GPUFEED_OPEN_PREAD */
    CHECK(gf__path_open(IDS, 0, &fd, &open_, &size, &map, &mlen, &mpage) == 0 && map != NULL && size > 0);
    if (map) munmap((void *)map, (size_t)mlen);
    if (open_) close(fd.fd);
    map = NULL; open_ = 0;
    CHECK(gf__path_open(IDS, GPUFEED_OPEN_PREAD, &fd, &open_, &size, &map, &mlen, &mpage) == 0 && map == NULL);
    if (open_) close(fd.fd);
    if (gf__fd_on_network(0) == 0) printf("  local files mapped, network file systems (%d magic numbers) read with pread\n", (int)(sizeof net / sizeof net[0]));
}

int main(int argc, char **argv)
{
    char cmd[128];
    const char *only = NULL;           /* a part of a test's name: that test only */
    if (argc == 4 && strcmp(argv[1], "--write-pair") == 0) { /* for tests/test_faults.sh */
        write_plain(argv[2], 1.0);
        write_plain(argv[3], -3.0);
        return 0;
    }
    if (argc == 5 && strcmp(argv[1], "--flip") == 0) { /* --flip FILE N SEED: N bytes flipped at random places */
        strike st;
        memset(&st, 0, sizeof st);
        st.kind = STRIKE_FLIP; st.path = argv[2]; st.nbytes = atoi(argv[3]); st.seed = (uint64_t)strtoull(argv[4], NULL, 10);
        strike_main(&st);
        return 0;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 1) g_tries = atoi(argv[1]);
    if (argc > 2) only = argv[2];
    if (g_tries < 1) g_tries = 1;
    g_rng = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
    printf("tries %d, seed %llu\n", g_tries, (unsigned long long)g_rng);
    signal(SIGALRM, on_alarm);
    snprintf(g_root, sizeof g_root, "/tmp/gpufeed_faultsXXXXXX");
    if (!mkdtemp(g_root)) { perror("mkdtemp"); return 1; }
#define FRUN(fn, secs) do { if (!only || strstr(#fn, only)) { alarm(secs); RUN(fn); } } while (0)
    FRUN(test_cache_flipped_while_served, 300 + 60 * (unsigned)g_tries);
    FRUN(test_cache_truncated_while_served, 300 + 60 * (unsigned)g_tries);
    FRUN(test_source_rewritten_during_build, 300 + 60 * (unsigned)g_tries);
    FRUN(test_source_truncated_pread, 300 + 30 * (unsigned)g_tries);
    FRUN(test_two_threads_next, 300 + 30 * (unsigned)g_tries);
    FRUN(test_desc_ranges, 300);
    FRUN(test_dataset_closed_first, 300 + 30 * (unsigned)g_tries);
    FRUN(test_descriptors, 300);
    FRUN(test_network_fs, 60);
    alarm(0);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_root);
    return TEST_SUMMARY();
}
