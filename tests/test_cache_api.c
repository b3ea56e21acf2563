/* The tensor cache through its C API (gpufeed.h >>cache): integrity while a
   loader runs (a byte flipped on disk in a unit already served reaches no
   batch: caught in that run when units are read at every use, by the next
   run when the cache is held in memory; also a flip no signature of the
   file shows), units served while the cache is being built (no
   source bytes after the first epoch, whatever the thread timing),
   gpufeed_cache_build waiting for another builder (and no_wait), the
   directory's byte budget and the "never a file in use" rule, the
   directory API (gpufeed_cache_list / _prune) over hostile files, and
   older versions of a dataset's cache (kept while in use, pruned after).

     cc -std=c99 -I. tests/test_cache_api.c -o test_cache_api -lpthread -lm
     ./test_cache_api          (from the repository root; last line "N passed, N failed")

   Scratch files go to a fresh directory under /tmp (removed at the end). */
#define _POSIX_C_SOURCE 200809L
#define GPUFEED_IMPLEMENTATION
#include "../gpufeed.h"
#include "gf_test.h"
#include "pq_writer.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <pthread.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/file.h>

#define DATA "tests/data/ids.parquet"
static char g_root[64];

static void sleep_ms(int ms)
{
    struct timespec ts;
    ts.tv_sec = ms / 1000; ts.tv_nsec = (long)(ms % 1000) * 1000000l;
    nanosleep(&ts, NULL);
}

static void subdir(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", g_root, name);
    mkdir(out, 0777);
}

/* the log: counts messages holding `needle` */
typedef struct logbox { const char *needle; int hits, total; char last[600]; } logbox;
static void log_fn(void *user, const char *msg)
{
    logbox *lb = (logbox *)user;
    lb->total++;
    snprintf(lb->last, sizeof lb->last, "%s", msg);
    if (lb->needle && strstr(msg, lb->needle)) __atomic_add_fetch(&lb->hits, 1, __ATOMIC_SEQ_CST); /* read by another thread */
}

static gpufeed_dataset *open_ds(int64_t unit_rows, gpufeed_dtype dt)
{
    static const char *paths[] = { DATA };
    gpufeed_feature ft[3];
    gpufeed_dataset_desc d;
    gpufeed_dataset *ds = NULL;
    gpufeed_error err;
    memset(ft, 0, sizeof ft); memset(&d, 0, sizeof d);
    ft[0].column = "id"; ft[0].dtype = dt;
    ft[1].column = "x"; ft[1].dtype = dt;
    ft[2].column = "y"; ft[2].dtype = dt; ft[2].validity = 1;
    d.paths = paths; d.num_paths = 1; d.features = ft; d.num_features = 3; d.unit_rows = unit_rows;
    if (gpufeed_dataset_open(&ds, &d, &err)) { fprintf(stderr, "  dataset: %s\n", err.message); return NULL; }
    return ds;
}

static void loader_desc(gpufeed_loader_desc *ld, int workers, int epochs, int shuffle)
{
    memset(ld, 0, sizeof *ld);
    ld->batch_rows = 700; ld->workers = workers; ld->epochs = epochs; ld->seed = 11;
    ld->no_unit_shuffle = !shuffle; ld->shuffle_window = shuffle ? 2 : 0;
}

/* every batch's hash of a whole run (no cache when cd is NULL); -1 on error */
static int run_hashes(gpufeed_dataset *ds, gpufeed_loader_desc *ld, gpufeed_cache_desc *cd, uint64_t *h, int cap, gpufeed_stats *st)
{
    gpufeed_loader *l;
    gpufeed_batch b;
    gpufeed_error err;
    gpufeed_result r;
    int n = 0;
    ld->cache = cd;
    if (gpufeed_loader_open(&l, ds, ld, &err)) { fprintf(stderr, "  loader: %s\n", err.message); return -1; }
    while ((r = gpufeed_loader_next(l, &b)) == GPUFEED_OK) if (n < cap) h[n++] = gpufeed_batch_hash(ds, &b);
    if (r != GPUFEED_DONE) { fprintf(stderr, "  next: %s\n", gpufeed_loader_error(l)); n = -1; }
    if (st) gpufeed_loader_stats(l, st);
    gpufeed_loader_close(l);
    return n;
}

static int file_exists(const char *p) { struct stat st; return stat(p, &st) == 0; }

/* flips one byte of unit u's image in the cache file; keep_mtime: puts the
   modification time back (the change the file's signature cannot show) */
static int flip_unit_byte(const char *path, int64_t u, int keep_mtime)
{
    uint8_t e[32], b = 0;
    uint64_t off = 0, bytes = 0;
    struct stat st;
    int fd = open(path, O_RDWR), ok;
    if (fd < 0 || fstat(fd, &st) != 0) return -1;
    ok = pread(fd, e, 32, 4096 + 32 * u) == 32;
    memcpy(&off, e, 8); memcpy(&bytes, e + 16, 8);
    off += bytes / 2;
    ok = ok && pread(fd, &b, 1, (off_t)off) == 1;
    b ^= 0x5A;
    ok = ok && pwrite(fd, &b, 1, (off_t)off) == 1;
    if (keep_mtime) {
        struct timespec ts[2];
        ts[0].tv_sec = 0; ts[0].tv_nsec = UTIME_OMIT;
        ts[1] = st.st_mtim;
        ok = ok && futimens(fd, ts) == 0;
    }
    close(fd);
    return ok ? 0 : -1;
}

static int build_cache(gpufeed_dataset *ds, const char *dir, gpufeed_cache_info *info)
{
    gpufeed_cache_desc cd;
    gpufeed_error err;
    memset(&cd, 0, sizeof cd);
    cd.dir = dir;
    if (gpufeed_cache_build(ds, &cd, 2, NULL, NULL, &err)) { fprintf(stderr, "  build: %s\n", err.message); return -1; }
    if (info && gpufeed_cache_get_info(ds, &cd, info, &err)) return -1;
    return 0;
}

/* one run over the cache in dir (no_map: units read into the ring's slots
   at every use, else the cache held in the loader's memory); `flip` (when
   >= 0) flips a byte of unit `flip` on disk once epoch 0 was delivered,
   keep_mtime putting its modification time back. Fills the hashes, the
   stats, the warnings holding `needle` and the source bytes read. */
static int flip_run(gpufeed_dataset *ds, gpufeed_loader_desc *ld, const char *dir, int no_map, int verify, const char *path, int64_t flip,
                    int keep_mtime, int per_epoch, uint64_t *got, gpufeed_stats *st, logbox *lb, uint64_t *src_bytes)
{
    gpufeed_cache_desc cd;
    gpufeed_loader *l;
    gpufeed_batch b;
    gpufeed_error err;
    gpufeed_result r;
    uint64_t before = gpufeed_dataset_bytes_read(ds);
    int n = 0, flipped = 0;
    memset(&cd, 0, sizeof cd); cd.dir = dir; cd.no_map = no_map; cd.verify = verify; cd.log = log_fn; cd.log_user = lb;
    ld->cache = &cd;
    if (gpufeed_loader_open(&l, ds, ld, &err)) { fprintf(stderr, "  open: %s\n", err.message); return -1; }
    while ((r = gpufeed_loader_next(l, &b)) == GPUFEED_OK) {
        got[n++] = gpufeed_batch_hash(ds, &b);
        if (n == per_epoch && flip >= 0 && !flipped) { /* epoch 0 done: every unit served once; the last one is far ahead of the workers */
            if (flip_unit_byte(path, flip, keep_mtime) != 0) n = -1000;
            flipped = 1;
        }
        if (n == 256) break;
    }
    if (r != GPUFEED_DONE) n = -1;
    gpufeed_loader_stats(l, st);
    gpufeed_loader_close(l);
    *src_bytes = gpufeed_dataset_bytes_read(ds) - before;
    return n;
}

/* A byte flipped on disk in a unit the running loader already read and
   checked in epoch 0. Batches come only from memory the loader owns,
   checked there: held in memory (the default for a cache this small), the
   run serves what it checked (the reference, no source bytes) and the
   next run, reading the file again, finds the unit bad at its first use,
   decodes it from the source and removes the file; read into the ring's
   slots at every use (no_map), the run notices the change (one warning)
   and the flipped unit fails its check at its next use, in the same run. */
static void test_flip_mid_run(void)
{
    char dir[128];
    gpufeed_dataset *ds = open_ds(1000, GPUFEED_DT_F32);
    gpufeed_loader_desc ld;
    gpufeed_cache_info info;
    gpufeed_stats st;
    static uint64_t ref[256], got[256];
    int nref, n, per_epoch, no_map;
    uint64_t src;
    if (!ds) { CHECK(0); return; }
    loader_desc(&ld, 2, 3, 0);
    nref = run_hashes(ds, &ld, NULL, ref, 256, NULL);
    per_epoch = nref / 3;
    for (no_map = 0; no_map < 2; no_map++) {
        logbox lb;
        subdir(dir, sizeof dir, no_map ? "flip-slots" : "flip");
        CHECK(nref > 0 && build_cache(ds, dir, &info) == 0 && info.units == 20);
        sleep_ms(30); /* past the file system's timestamp granularity */
        memset(&lb, 0, sizeof lb); lb.needle = "changed on disk";
        n = flip_run(ds, &ld, dir, no_map, 0, info.path, 19, 0, per_epoch, got, &st, &lb, &src);
        CHECK_MSG(n == nref && memcmp(ref, got, (size_t)n * 8) == 0, "no_map %d: stream differs from the reference after the flip (%d of %d batches)",
                  no_map, n, nref);
        if (!no_map) {
            CHECK_MSG(st.cache_bad_units == 0 && src == 0 && file_exists(info.path), "in memory: bad units %llu, source bytes %llu",
                      (unsigned long long)st.cache_bad_units, (unsigned long long)src);
            memset(&lb, 0, sizeof lb); lb.needle = "fails its checksum";
            n = flip_run(ds, &ld, dir, 0, 0, info.path, -1, 0, per_epoch, got, &st, &lb, &src);
            CHECK_MSG(n == nref && memcmp(ref, got, (size_t)n * 8) == 0, "the next run: stream differs (%d of %d batches)", n, nref);
        } else CHECK_MSG(lb.hits == 1, "%d 'changed on disk' warnings (last: %s)", lb.hits, lb.last);
        CHECK_MSG(st.cache_bad_units >= 1, "no_map %d: bad units %llu", no_map, (unsigned long long)st.cache_bad_units);
        CHECK_MSG(src > 0, "no_map %d: the bad unit was not decoded from the source", no_map);
        CHECK_MSG(!file_exists(info.path), "no_map %d: the corrupt cache file is still there after close", no_map);
    }
    gpufeed_dataset_close(ds);
}

/* The flip with the modification time put back: size, time and inode are
   unchanged, so no signature of the file shows it. It reaches no batch all
   the same: read into the slots, the unit fails its check at its next
   read (whatever the verify mode); held in memory, the run goes on with
   what it checked (GPUFEED_CACHE_VERIFY_EVERY_USE hashes that copy again
   at every use) and the next run finds the unit bad. */
static void test_verify_every_use(void)
{
    char dir[128];
    gpufeed_dataset *ds = open_ds(1000, GPUFEED_DT_F64);
    gpufeed_loader_desc ld;
    gpufeed_cache_info info;
    gpufeed_stats st;
    static uint64_t ref[256], got[256];
    int nref, n, per_epoch, no_map;
    uint64_t src;
    logbox lb;
    if (!ds) { CHECK(0); return; }
    loader_desc(&ld, 3, 3, 0);
    nref = run_hashes(ds, &ld, NULL, ref, 256, NULL);
    per_epoch = nref / 3;
    for (no_map = 0; no_map < 2; no_map++) {
        subdir(dir, sizeof dir, no_map ? "every-slots" : "every");
        CHECK(nref > 0 && build_cache(ds, dir, &info) == 0);
        memset(&lb, 0, sizeof lb);
        n = flip_run(ds, &ld, dir, no_map, no_map ? GPUFEED_CACHE_VERIFY_FIRST_USE : GPUFEED_CACHE_VERIFY_EVERY_USE, info.path, 18, 1, per_epoch, got,
                     &st, &lb, &src);
        CHECK_MSG(n == nref && memcmp(ref, got, (size_t)n * 8) == 0, "no_map %d: stream differs from the reference (%d of %d batches)", no_map, n, nref);
        if (!no_map) {
            CHECK_MSG(st.cache_bad_units == 0 && src == 0, "in memory: bad units %llu, source bytes %llu", (unsigned long long)st.cache_bad_units,
                      (unsigned long long)src);
            n = flip_run(ds, &ld, dir, 0, GPUFEED_CACHE_VERIFY_EVERY_USE, info.path, -1, 0, per_epoch, got, &st, &lb, &src);
            CHECK_MSG(n == nref && memcmp(ref, got, (size_t)n * 8) == 0, "the next run: stream differs (%d of %d batches)", n, nref);
        }
        CHECK_MSG(st.cache_bad_units >= 1 && src > 0, "no_map %d: bad units %llu, source bytes %llu", no_map, (unsigned long long)st.cache_bad_units,
                  (unsigned long long)src);
        CHECK(!file_exists(info.path));
    }
    gpufeed_dataset_close(ds);
}

/* A cache being built serves the units already stored; a unit that an
   earlier stream position decodes is waited for, never decoded twice:
   every epoch after the first reads 0 source bytes, for any worker count
   and thread timing (few units, many workers, jitter), and the stream is
   the reference. Resumed streams (a unit first met in the second epoch)
   and the RAM tier too. */
static void test_serve_while_building(void)
{
    char dir[128], sub[160];
    gpufeed_dataset *ds = open_ds(5000, GPUFEED_DT_F32); /* 4 units */
    gpufeed_loader_desc ld;
    gpufeed_cache_desc cd;
    gpufeed_stats st;
    gpufeed_loader *l;
    gpufeed_error err;
    static uint64_t ref[512], got[512];
    int nref, n, i, clean = 0, rounds = 0;
    if (!ds) { CHECK(0); return; }
    subdir(dir, sizeof dir, "serve");
    for (i = 0; i < 12; i++) {
        int workers = 2 + i % 4, resume = i % 3 == 2, ram = i % 4 == 3;
        int64_t e;
        loader_desc(&ld, workers, 4, 1);
        ld.debug_jitter_us = 3000;
        ld.ring_depth = 1 + i % 3;
        if (resume) { ld.start_epoch = 1; ld.start_batch = 20; }
        nref = run_hashes(ds, &ld, NULL, ref, 512, NULL);
        snprintf(sub, sizeof sub, "%s/%d", dir, i);
        memset(&cd, 0, sizeof cd);
        if (ram) cd.ram_bytes = 100000000; else cd.dir = sub;
        ld.cache = &cd;
        if (gpufeed_loader_open(&l, ds, &ld, &err)) { CHECK_MSG(0, "%s", err.message); continue; }
        {
            gpufeed_batch b;
            gpufeed_result r;
            n = 0;
            while ((r = gpufeed_loader_next(l, &b)) == GPUFEED_OK) if (n < 512) got[n++] = gpufeed_batch_hash(ds, &b);
            CHECK_MSG(r == GPUFEED_DONE, "round %d: %s", i, gpufeed_loader_error(l));
        }
        gpufeed_loader_stats(l, &st);
        CHECK_MSG(n == nref && memcmp(ref, got, (size_t)n * 8) == 0, "round %d (workers %d, ring %d%s%s): stream differs", i, workers, ld.ring_depth,
                  resume ? ", resumed" : "", ram ? ", RAM" : "");
        CHECK_MSG(st.cache_state == GPUFEED_CACHE_READY, "round %d: cache state %d", i, st.cache_state);
        rounds++;
        {
            int ok = 1;
            /* resumed at epoch 1 batch 20: the units before that batch are first met in epoch 2 */
            for (e = ld.start_epoch + 1 + resume; e < ld.start_epoch + 4; e++)
                if (gpufeed_loader_epoch_bytes(l, e) != 0) {
                    ok = 0;
                    fprintf(stderr, "  round %d (workers %d, ring %d%s%s): epoch %lld read %llu source bytes\n", i, workers, ld.ring_depth,
                            resume ? ", resumed" : "", ram ? ", RAM" : "", (long long)e, (unsigned long long)gpufeed_loader_epoch_bytes(l, e));
                }
            clean += ok;
        }
        gpufeed_loader_close(l);
    }
    CHECK_MSG(clean == rounds && rounds == 12, "%d of %d rounds read no source bytes after the first epoch", clean, rounds);
    gpufeed_dataset_close(ds);
}

/* gpufeed_cache_build while another process holds the build (the .tmp's
   lock, held here by hand): no_wait fails at once naming it; otherwise it
   waits (progress lines through the log) and builds once the lock goes.
   The lock goes only once the build has said it waits (no time limit
   decides: a loaded machine may start the thread late). */
typedef struct build_arg { gpufeed_dataset *ds; gpufeed_cache_desc cd; gpufeed_result r; gpufeed_error err; int done; } build_arg;
static void *build_thread(void *p)
{
    build_arg *a = (build_arg *)p;
    a->r = gpufeed_cache_build(a->ds, &a->cd, 2, NULL, NULL, &a->err);
    __atomic_store_n(&a->done, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

static void test_build_waits(void)
{
    char dir[128], tmp[1200];
    gpufeed_dataset *ds = open_ds(1000, GPUFEED_DT_F32);
    gpufeed_cache_desc cd;
    gpufeed_cache_info info;
    gpufeed_error err;
    build_arg ba;
    pthread_t th;
    logbox lb;
    int fd, waited_ms = 0;
    if (!ds) { CHECK(0); return; }
    subdir(dir, sizeof dir, "wait");
    memset(&cd, 0, sizeof cd); cd.dir = dir;
    CHECK(gpufeed_cache_get_info(ds, &cd, &info, &err) == GPUFEED_OK);
    snprintf(tmp, sizeof tmp, "%s.tmp", info.path);
    fd = open(tmp, O_RDWR | O_CREAT, 0666);
    CHECK(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0);
    cd.no_wait = 1;
    CHECK(gpufeed_cache_build(ds, &cd, 2, NULL, NULL, &err) == GPUFEED_ERR_IO);
    CHECK_HAS(err.message, "another process"); CHECK_HAS(err.message, "no_wait");
    memset(&ba, 0, sizeof ba);
    memset(&lb, 0, sizeof lb); lb.needle = "waiting for";
    ba.ds = ds; ba.cd = cd; ba.cd.no_wait = 0; ba.cd.log = log_fn; ba.cd.log_user = &lb;
    CHECK(pthread_create(&th, NULL, build_thread, &ba) == 0);
    while (!__atomic_load_n(&lb.hits, __ATOMIC_SEQ_CST) && !__atomic_load_n(&ba.done, __ATOMIC_SEQ_CST) && waited_ms < 300000) {
        sleep_ms(20);
        waited_ms += 20;
    }
    CHECK_MSG(!__atomic_load_n(&ba.done, __ATOMIC_SEQ_CST), "gpufeed_cache_build did not wait for the lock holder (%d, %s)", (int)ba.r, ba.err.message);
    CHECK_MSG(__atomic_load_n(&lb.hits, __ATOMIC_SEQ_CST) >= 1, "no progress line while waiting (log: %s)", lb.last);
    close(fd); /* the other "builder" dies: its lock goes, its .tmp stays */
    pthread_join(th, NULL);
    CHECK_MSG(ba.r == GPUFEED_OK, "%s", ba.err.message);
    CHECK(gpufeed_cache_verify(ds, &cd, NULL, &err) == GPUFEED_OK);
    CHECK(!file_exists(tmp));
    /* a second build finds it complete at once */
    cd.no_wait = 0;
    CHECK(gpufeed_cache_build(ds, &cd, 2, NULL, NULL, &err) == GPUFEED_OK);
    gpufeed_dataset_close(ds);
}

/* dir_max_bytes: a new cache makes room by removing the least recently
   used cache no process uses; with the older cache open in a loader, the
   new one is not built (warned) and the open one stays. */
static void test_dir_budget(void)
{
    char dir[128];
    gpufeed_dataset *a = open_ds(1000, GPUFEED_DT_F32), *b = open_ds(1000, GPUFEED_DT_F64);
    gpufeed_loader_desc ld;
    gpufeed_cache_desc cd;
    gpufeed_cache_info ia, ib;
    gpufeed_loader *la;
    gpufeed_error err;
    gpufeed_stats st;
    logbox lb;
    static uint64_t h[256];
    if (!a || !b) { CHECK(0); gpufeed_dataset_close(a); gpufeed_dataset_close(b); return; }
    subdir(dir, sizeof dir, "budget");
    memset(&cd, 0, sizeof cd); cd.dir = dir;
    CHECK(build_cache(a, dir, &ia) == 0);
    CHECK(gpufeed_cache_get_info(b, &cd, &ib, &err) == GPUFEED_OK);
    /* room for one of them (b's is the larger, f64), not both */
    memset(&lb, 0, sizeof lb); lb.needle = "dir_max_bytes";
    cd.dir_max_bytes = ia.bytes * 5 / 2; cd.log = log_fn; cd.log_user = &lb;
    loader_desc(&ld, 2, 1, 0);
    ld.cache = &cd;
    /* a holds its cache open: b cannot make room */
    CHECK(gpufeed_loader_open(&la, a, &ld, &err) == GPUFEED_OK);
    CHECK(run_hashes(b, &ld, &cd, h, 256, &st) > 0);
    CHECK_MSG(st.cache_state == GPUFEED_CACHE_OFF && lb.hits == 1, "state %d, warnings %d (%s)", st.cache_state, lb.hits, lb.last);
    CHECK(file_exists(ia.path) && !file_exists(ib.path));
    gpufeed_loader_close(la);
    /* a closed: b's build removes it (least recently used) */
    CHECK(run_hashes(b, &ld, &cd, h, 256, &st) > 0);
    CHECK_MSG(st.cache_state == GPUFEED_CACHE_READY, "state %d (%s)", st.cache_state, lb.last);
    CHECK(!file_exists(ia.path) && file_exists(ib.path));
    /* a cache larger than the whole budget: refused with a message */
    cd.dir_max_bytes = 4096; lb.hits = 0;
    CHECK(run_hashes(a, &ld, &cd, h, 256, &st) > 0);
    CHECK(st.cache_state == GPUFEED_CACHE_OFF && lb.hits == 1);
    CHECK_HAS(lb.last, "more than the directory's budget");
    gpufeed_dataset_close(a); gpufeed_dataset_close(b);
}

static void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f) { fwrite(p, 1, n, f); fclose(f); }
}

static const gpufeed_cache_entry *find_entry(const gpufeed_cache_entry *e, int64_t n, const char *suffix)
{
    int64_t i;
    for (i = 0; i < n; i++) {
        size_t l = strlen(e[i].path), k = strlen(suffix);
        if (l >= k && strcmp(e[i].path + l - k, suffix) == 0) return &e[i];
    }
    return NULL;
}

/* gpufeed_cache_list / gpufeed_cache_prune: states of every kind of file,
   hostile headers, a file in use left alone, bad arguments */
static void test_list_and_prune(void)
{
    char dir[128], p[1300];
    gpufeed_dataset *ds = open_ds(1000, GPUFEED_DT_F32);
    gpufeed_cache_info info;
    gpufeed_cache_entry *e;
    gpufeed_cache_prune_info pi;
    gpufeed_error err;
    gpufeed_loader_desc ld;
    gpufeed_cache_desc cd;
    gpufeed_loader *l;
    int64_t n;
    int lockfd;
    uint8_t hdr[4096];
    const gpufeed_cache_entry *x;
    if (!ds) { CHECK(0); return; }
    subdir(dir, sizeof dir, "list");
    CHECK(build_cache(ds, dir, &info) == 0);
    /* hostile and stale files */
    snprintf(p, sizeof p, "%s/gpufeed-short.gfc", dir); write_file(p, "GPUFEEDC", 8);
    memset(hdr, 0, sizeof hdr); memcpy(hdr, "GPUFEEDC", 8); hdr[8] = 1;
    snprintf(p, sizeof p, "%s/gpufeed-v1.gfc", dir); write_file(p, hdr, sizeof hdr);
    hdr[8] = 2; hdr[200] = 7; /* version 2, checksum wrong */
    snprintf(p, sizeof p, "%s/gpufeed-badsum.gfc", dir); write_file(p, hdr, sizeof hdr);
    snprintf(p, sizeof p, "%s/gpufeed-dead.gfc.tmp", dir); write_file(p, "x", 1);
    snprintf(p, sizeof p, "%s/gpufeed-live.gfc.tmp", dir); write_file(p, "", 0);
    lockfd = open(p, O_RDWR);
    CHECK(lockfd >= 0 && flock(lockfd, LOCK_EX | LOCK_NB) == 0);
    snprintf(p, sizeof p, "%s/gpufeed-old.gfc.lock", dir); write_file(p, "", 0);
    snprintf(p, sizeof p, "%s/notes.txt", dir); write_file(p, "not ours", 8);
    snprintf(p, sizeof p, "%s/gpufeed-fifo.gfc", dir);
    CHECK(mkfifo(p, 0666) == 0); /* opening it for reading would block: never read, never listed */
    CHECK(gpufeed_cache_list(&e, &n, dir, &err) == GPUFEED_OK);
    CHECK_MSG(n == 7, "%lld entries", (long long)n);
    x = find_entry(e, n, info.path + strlen(dir));
    CHECK(x && x->state == GPUFEED_CACHE_ENTRY_READY && !x->in_use && x->units == 20 && x->rows == 20000 && x->bytes == info.bytes);
    if (x) {
        CHECK_HAS(x->features, "id:f32 x:f32 y:f32:valid");
        CHECK_HAS(x->dataset, "/tests/data/ids.parquet");
        CHECK(x->dataset[0] == '/'); /* canonical: absolute */
        CHECK_HAS(x->plan, "unit_rows=1000");
        CHECK(strlen(x->key) == 32 && strlen(x->dataset_id) == 32 && x->created > 0 && x->last_use > 0);
    }
    x = find_entry(e, n, "/gpufeed-short.gfc");
    CHECK(x && x->state == GPUFEED_CACHE_ENTRY_INVALID);
    if (x) CHECK_HAS(x->reason, "truncated header");
    x = find_entry(e, n, "/gpufeed-v1.gfc");
    CHECK(x && x->state == GPUFEED_CACHE_ENTRY_INVALID);
    if (x) CHECK_HAS(x->reason, "format version 1");
    x = find_entry(e, n, "/gpufeed-badsum.gfc");
    CHECK(x && x->state == GPUFEED_CACHE_ENTRY_INVALID);
    if (x) CHECK_HAS(x->reason, "header checksum");
    x = find_entry(e, n, "/gpufeed-dead.gfc.tmp");
    CHECK(x && x->state == GPUFEED_CACHE_ENTRY_ABANDONED);
    x = find_entry(e, n, "/gpufeed-live.gfc.tmp");
    CHECK(x && x->state == GPUFEED_CACHE_ENTRY_BUILDING && x->in_use);
    x = find_entry(e, n, "/gpufeed-old.gfc.lock");
    CHECK(x && x->state == GPUFEED_CACHE_ENTRY_LOCK && !x->in_use);
    gpufeed_cache_list_free(e);
    /* the cache open in a loader: in use; prune to 1 byte leaves it */
    memset(&cd, 0, sizeof cd); cd.dir = dir;
    loader_desc(&ld, 1, 1, 0); ld.cache = &cd;
    CHECK(gpufeed_loader_open(&l, ds, &ld, &err) == GPUFEED_OK);
    CHECK(gpufeed_cache_list(&e, &n, dir, &err) == GPUFEED_OK);
    x = find_entry(e, n, info.path + strlen(dir));
    CHECK(x && x->in_use);
    gpufeed_cache_list_free(e);
    CHECK(gpufeed_cache_prune(&pi, dir, 1, &err) == GPUFEED_ERR_LIMIT);
    CHECK_HAS(err.message, "in use");
    CHECK_MSG(pi.removed == 5 && pi.skipped_in_use == 1, "removed %lld, skipped %lld", (long long)pi.removed, (long long)pi.skipped_in_use);
    CHECK(file_exists(info.path));
    snprintf(p, sizeof p, "%s/gpufeed-live.gfc.tmp", dir);
    CHECK(file_exists(p)); /* being built: never touched */
    snprintf(p, sizeof p, "%s/notes.txt", dir);
    CHECK(file_exists(p)); /* not ours */
    snprintf(p, sizeof p, "%s/gpufeed-fifo.gfc", dir);
    CHECK(file_exists(p));
    gpufeed_loader_close(l);
    close(lockfd);
    CHECK(gpufeed_cache_prune(&pi, dir, 1, &err) == GPUFEED_OK);
    CHECK(pi.removed == 2 && !file_exists(info.path));
    CHECK(gpufeed_cache_list(&e, &n, dir, &err) == GPUFEED_OK && n == 0);
    gpufeed_cache_list_free(e);
    /* bad arguments and a missing directory */
    CHECK(gpufeed_cache_list(NULL, &n, dir, &err) == GPUFEED_ERR_INVALID_ARG);
    CHECK(gpufeed_cache_list(&e, &n, NULL, &err) == GPUFEED_ERR_INVALID_ARG);
    CHECK(gpufeed_cache_prune(&pi, "", 0, &err) == GPUFEED_ERR_INVALID_ARG);
    snprintf(p, sizeof p, "%s/no/such/dir", g_root);
    CHECK(gpufeed_cache_list(&e, &n, p, &err) == GPUFEED_ERR_IO && e == NULL && n == 0);
    CHECK_HAS(err.message, "no/such/dir");
    CHECK(gpufeed_cache_prune(NULL, p, 0, &err) == GPUFEED_ERR_IO);
    CHECK_HAS(err.message, "cannot read the cache directory");
    gpufeed_dataset_close(ds);
}

/* A new version of a dataset's cache removes the older one when it is
   complete, unless a loader still has it open; gpufeed_cache_prune then
   removes the superseded version once nobody uses it. */
static void test_superseded_versions(void)
{
    char dir[128], data[160], cmd[400];
    const char *paths[1];
    gpufeed_feature ft;
    gpufeed_dataset_desc d;
    gpufeed_dataset *v1 = NULL, *v2 = NULL;
    gpufeed_cache_info i1, i2;
    gpufeed_cache_prune_info pi;
    gpufeed_loader_desc ld;
    gpufeed_cache_desc cd;
    gpufeed_loader *l;
    gpufeed_error err;
    struct timespec ts[2];
    subdir(dir, sizeof dir, "versions");
    snprintf(data, sizeof data, "%s/d.parquet", g_root);
    snprintf(cmd, sizeof cmd, "cp %s '%s'", DATA, data);
    CHECK(system(cmd) == 0);
    memset(&ft, 0, sizeof ft); memset(&d, 0, sizeof d);
    ft.column = "x"; ft.dtype = GPUFEED_DT_F32;
    paths[0] = data;
    d.paths = paths; d.num_paths = 1; d.features = &ft; d.num_features = 1; d.unit_rows = 1000;
    CHECK(gpufeed_dataset_open(&v1, &d, &err) == GPUFEED_OK);
    if (!v1) return;
    CHECK(build_cache(v1, dir, &i1) == 0);
    memset(&cd, 0, sizeof cd); cd.dir = dir;
    loader_desc(&ld, 1, 1, 0); ld.cache = &cd;
    CHECK(gpufeed_loader_open(&l, v1, &ld, &err) == GPUFEED_OK); /* holds version 1 open */
    ts[0].tv_sec = 0; ts[0].tv_nsec = UTIME_OMIT;
    ts[1].tv_sec = time(NULL) + 10; ts[1].tv_nsec = 0;
    CHECK(utimensat(AT_FDCWD, data, ts, 0) == 0); /* a new version of the file */
    CHECK(gpufeed_dataset_open(&v2, &d, &err) == GPUFEED_OK);
    if (v2) {
        CHECK(build_cache(v2, dir, &i2) == 0);
        CHECK(strcmp(i1.key, i2.key) != 0);
        CHECK_MSG(file_exists(i1.path) && file_exists(i2.path), "version 1 in use must stay while version 2 completes");
        gpufeed_loader_close(l);
        CHECK(gpufeed_cache_prune(&pi, dir, 0, &err) == GPUFEED_OK);
        CHECK_MSG(pi.removed == 1 && !file_exists(i1.path) && file_exists(i2.path), "prune removed %lld", (long long)pi.removed);
        gpufeed_dataset_close(v2);
    } else gpufeed_loader_close(l);
    gpufeed_dataset_close(v1);
}

/* The key covers every field of every feature that changes the tensors
   (issue 19): a dataset differing from the base in one of them has another
   key (and so never reads the base's cache); the same dataset opened again
   has the same key. */
static void test_key_fields(void)
{
    enum { NV = 9 };
    static const char *paths[] = { DATA };
    char dir[128], keys[NV][33];
    int v, w;
    subdir(dir, sizeof dir, "keys");
    for (v = 0; v < NV; v++) {
        gpufeed_feature ft[2];
        gpufeed_dataset_desc d;
        gpufeed_dataset *ds = NULL;
        gpufeed_cache_desc cd;
        gpufeed_cache_info info;
        gpufeed_error err;
        memset(ft, 0, sizeof ft); memset(&d, 0, sizeof d); memset(&cd, 0, sizeof cd);
        ft[0].column = "id"; ft[0].dtype = GPUFEED_DT_F32;
        ft[1].column = "y"; ft[1].dtype = GPUFEED_DT_F32; ft[1].validity = 1;
        d.paths = paths; d.num_paths = 1; d.features = ft; d.num_features = 2; d.unit_rows = 1000;
        switch (v) {
        case 1: ft[0].dtype = GPUFEED_DT_F64; break;          /* dtype */
        case 2: ft[1].fill = -1; break;                       /* fill */
        case 3: ft[1].validity = 0; break;                    /* mask */
        case 4: ft[1].null_policy = GPUFEED_NULL_ERROR; break; /* null policy */
        case 5: ft[0].dtype = GPUFEED_DT_I32; ft[0].cast = GPUFEED_CAST_UNSAFE; break;
        case 6: ft[0].dtype = GPUFEED_DT_I32; break;          /* the cast's base: i32, safe */
        case 7: d.unit_rows = 999; break;                     /* unit plan */
        case 8: ft[0].column = "k"; break;                    /* column */
        }
        memset(keys[v], 0, sizeof keys[v]);
        if (gpufeed_dataset_open(&ds, &d, &err)) { CHECK_MSG(0, "variant %d: %s", v, err.message); continue; }
        cd.dir = dir;
        if (gpufeed_cache_get_info(ds, &cd, &info, &err)) CHECK_MSG(0, "variant %d: %s", v, err.message);
        else memcpy(keys[v], info.key, sizeof keys[v]);
        if (v == 0) { /* the same dataset again: the same key */
            gpufeed_dataset *again = NULL;
            gpufeed_cache_info i2;
            CHECK(gpufeed_dataset_open(&again, &d, &err) == GPUFEED_OK);
            if (again) {
                CHECK(gpufeed_cache_get_info(again, &cd, &i2, &err) == GPUFEED_OK && strcmp(i2.key, info.key) == 0);
                gpufeed_dataset_close(again);
            }
        }
        gpufeed_dataset_close(ds);
    }
    for (v = 0; v < NV; v++)
        for (w = v + 1; w < NV; w++)
            CHECK_MSG(keys[v][0] && strcmp(keys[v], keys[w]) != 0, "variants %d and %d share the key %s", v, w, keys[v]);
}

/* A cache file of another format version whose header is otherwise intact
   (its checksum recomputed, its key this dataset's): refused, naming the
   version, and rebuilt by a loader rather than read (issue 19). */
static void test_format_version(void)
{
    char dir[128];
    gpufeed_dataset *ds = open_ds(1000, GPUFEED_DT_F32);
    gpufeed_cache_info info;
    gpufeed_cache_desc cd;
    gpufeed_error err;
    uint8_t hdr[4096];
    uint32_t ver;
    uint64_t sum;
    int fd, k;
    if (!ds) { CHECK(0); return; }
    subdir(dir, sizeof dir, "version");
    CHECK(build_cache(ds, dir, &info) == 0 && info.valid);
    memset(&cd, 0, sizeof cd); cd.dir = dir;
    for (k = 0; k < 2; k++) {
        uint32_t want = k == 0 ? 1u : 3u;   /* older, newer */
        fd = open(info.path, O_RDWR);
        CHECK(fd >= 0 && pread(fd, hdr, sizeof hdr, 0) == (ssize_t)sizeof hdr);
        memcpy(&ver, hdr + 8, 4);
        CHECK(k > 0 || ver == 2);
        memcpy(hdr + 8, &want, 4);
        sum = gpufeed_hash64(hdr, sizeof hdr - 8, 0);
        memcpy(hdr + sizeof hdr - 8, &sum, 8);
        CHECK(fd >= 0 && pwrite(fd, hdr, sizeof hdr, 0) == (ssize_t)sizeof hdr);
        if (fd >= 0) close(fd);
        {
            gpufeed_cache_info i2;
            char msg[64];
            CHECK(gpufeed_cache_get_info(ds, &cd, &i2, &err) == GPUFEED_OK);
            snprintf(msg, sizeof msg, "format version %u", (unsigned)want);
            CHECK_MSG(i2.exists && !i2.valid, "version %u: exists %d valid %d", (unsigned)want, i2.exists, i2.valid);
            CHECK_HAS(i2.reason, msg);
        }
    }
    gpufeed_dataset_close(ds);
}

/* no_map: units are read into the slots by pread and checked at every
   read. A good cache serves the reference stream (shuffled) with 0 source
   bytes; a byte flipped in a unit (modification
   time put back) is caught at its first read, decoded from the source, and
   the stream stays the reference. */
static void test_no_map(void)
{
    char dir[128];
    gpufeed_dataset *ds = open_ds(1000, GPUFEED_DT_F32);
    gpufeed_loader_desc ld;
    gpufeed_cache_desc cd;
    gpufeed_cache_info info;
    gpufeed_stats st;
    static uint64_t ref[256], got[256];
    int nref, n, flip;
    uint64_t before, read;
    if (!ds) { CHECK(0); return; }
    subdir(dir, sizeof dir, "nomap");
    loader_desc(&ld, 2, 2, 1);
    nref = run_hashes(ds, &ld, NULL, ref, 256, NULL);
    CHECK(nref > 0 && build_cache(ds, dir, &info) == 0 && info.units == 20);
    for (flip = 0; flip < 2; flip++) {
        if (flip) CHECK(flip_unit_byte(info.path, 7, 1) == 0);
        memset(&cd, 0, sizeof cd); cd.dir = dir; cd.no_map = 1; cd.log = log_fn;
        {
            logbox lb;
            memset(&lb, 0, sizeof lb); lb.needle = "fails its checksum";
            cd.log_user = &lb;
            memset(&st, 0, sizeof st);
            before = gpufeed_dataset_bytes_read(ds);
            n = run_hashes(ds, &ld, &cd, got, 256, &st);
            read = gpufeed_dataset_bytes_read(ds) - before;
            CHECK_MSG(n == nref && memcmp(ref, got, (size_t)n * 8) == 0, "flip %d: stream differs from the reference (%d of %d batches)", flip, n, nref);
            if (!flip) CHECK_MSG(read == 0 && st.cache_bad_units == 0, "source bytes read %llu, bad units %llu",
                                 (unsigned long long)read, (unsigned long long)st.cache_bad_units);
            else {
                CHECK_MSG(st.cache_bad_units >= 1 && lb.hits >= 1, "bad units %llu, warnings %d", (unsigned long long)st.cache_bad_units, lb.hits);
                CHECK_MSG(read > 0, "the bad unit was not decoded from the source");
                CHECK_MSG(!file_exists(info.path), "the corrupt cache file is still there after close");
            }
        }
    }
    gpufeed_dataset_close(ds);
}

/* A source rewritten within the same second (issue 49: a mutant hashing
   the modification time's seconds twice, not seconds and nanoseconds,
   served 245 of 245 batches stale): a file of one INT64 column, PLAIN and
   uncompressed without statistics, so that its new values leave its size
   and footer as they were; its mtime 0.1 s into a second, then 0.7 s. The
   loader after the rewrite gives the new values, from a new cache, never
   the old one's. */
static int write_version(const char *path, int64_t base)
{
    int64_t vals[2000];
    pqw_schema sch[2];
    pqw_page pg;
    pqw_buf body, file;
    pqw_chunk ch;
    pqw_rowgroup rg;
    pqw_file f;
    FILE *fp;
    int i, ok;
    memset(&body, 0, sizeof body); memset(&file, 0, sizeof file); memset(&ch, 0, sizeof ch); memset(&rg, 0, sizeof rg); memset(&f, 0, sizeof f);
    for (i = 0; i < 2000; i++) vals[i] = base + i;
    sch[0] = pqw_root(1);
    sch[1] = pqw_leaf("v", PQW_INT64, PQW_REQUIRED);
    pqw_plain_i64(&body, vals, 2000);
    pg = pqw_data_page(&body, 2000, PQW_PLAIN);
    ch.pages = &pg; ch.npages = 1; ch.physical = PQW_INT64; ch.path = "v";
    rg.chunks = &ch; rg.nchunks = 1;
    f.schema = sch; f.nschema = 2; f.rgs = &rg; f.nrgs = 1;
    pqw_build(&f, &file);
    fp = fopen(path, "r+b");
    if (!fp) fp = fopen(path, "wb");
    ok = fp && fwrite(file.p, 1, file.n, fp) == file.n;
    if (fp) ok &= fclose(fp) == 0;
    pqw_free(&body); pqw_free(&file);
    return ok ? 0 : -1;
}
static int set_mtime(const char *path, time_t s, long ns)
{
    struct timespec ts[2];
    ts[0].tv_sec = s; ts[0].tv_nsec = ns;
    ts[1].tv_sec = s; ts[1].tv_nsec = ns;
    return utimensat(AT_FDCWD, path, ts, 0);
}
static gpufeed_dataset *open_one(const char *path)
{
    const char *paths[1];
    gpufeed_feature ft;
    gpufeed_dataset_desc d;
    gpufeed_dataset *ds = NULL;
    gpufeed_error err;
    paths[0] = path;
    memset(&ft, 0, sizeof ft); memset(&d, 0, sizeof d);
    ft.column = "v"; ft.dtype = GPUFEED_DT_I64;
    d.paths = paths; d.num_paths = 1; d.features = &ft; d.num_features = 1; d.unit_rows = 500;
    if (gpufeed_dataset_open(&ds, &d, &err)) { fprintf(stderr, "  dataset: %s\n", err.message); return NULL; }
    return ds;
}
static void test_key_subsecond_rewrite(void)
{
    char dir[128], src[256], cdir[160];
    gpufeed_dataset *ds;
    gpufeed_loader_desc ld;
    gpufeed_cache_desc cd;
    gpufeed_stats st;
    struct stat a, b;
    static uint64_t old[64], ref[64], got[64];
    int nold, nref, ngot;
    const time_t t = 1700000000;
    subdir(dir, sizeof dir, "subsecond");
    snprintf(src, sizeof src, "%s/s.parquet", dir);
    snprintf(cdir, sizeof cdir, "%s/cache", dir);
    CHECK(write_version(src, 0) == 0 && set_mtime(src, t, 100000000) == 0 && stat(src, &a) == 0);
    memset(&cd, 0, sizeof cd); cd.dir = cdir;
    loader_desc(&ld, 2, 2, 1);
    ds = open_one(src);
    if (!ds) { CHECK(0); return; }
    nold = run_hashes(ds, &ld, &cd, old, 64, &st);   /* builds the cache */
    CHECK(nold > 0 && run_hashes(ds, &ld, &cd, got, 64, &st) == nold && st.cache_state == GPUFEED_CACHE_READY && st.units_from_cache > 0);
    gpufeed_dataset_close(ds);
    CHECK(write_version(src, 1000000) == 0 && set_mtime(src, t, 700000000) == 0 && stat(src, &b) == 0);
    CHECK_MSG(a.st_size == b.st_size && a.st_mtime == b.st_mtime && a.st_mtim.tv_nsec != b.st_mtim.tv_nsec,
              "the rewrite: size %lld -> %lld, mtime %lld.%09ld -> %lld.%09ld", (long long)a.st_size, (long long)b.st_size, (long long)a.st_mtime,
              a.st_mtim.tv_nsec, (long long)b.st_mtime, b.st_mtim.tv_nsec);
    ds = open_one(src);
    if (!ds) { CHECK(0); return; }
    nref = run_hashes(ds, &ld, NULL, ref, 64, NULL);   /* the new values, decoded */
    ngot = run_hashes(ds, &ld, &cd, got, 64, &st);
    CHECK_MSG(nref == nold && nref > 0 && memcmp(ref, old, (size_t)nref * 8) != 0, "the rewrite changed no batch (%d, %d)", nref, nold);
    {
        int k, diff = 0;
        for (k = 0; k < ngot && k < nref; k++) diff += got[k] != ref[k];
        CHECK_MSG(ngot == nref && diff == 0, "after a rewrite 0.6 s later in the same second: %d of %d batches differ from the new file's "
                  "(%d batches)", diff, nref, ngot);
    }
    ngot = run_hashes(ds, &ld, &cd, got, 64, &st);     /* the new cache, served */
    CHECK(ngot == nref && memcmp(got, ref, (size_t)nref * 8) == 0 && st.units_from_cache > 0);
    gpufeed_dataset_close(ds);
}

int main(void)
{
    char cmd[128];
    snprintf(g_root, sizeof g_root, "/tmp/gpufeed_cache_apiXXXXXX");
    if (!mkdtemp(g_root)) { perror("mkdtemp"); return 1; }
    RUN(test_flip_mid_run);
    RUN(test_verify_every_use);
    RUN(test_no_map);
    RUN(test_serve_while_building);
    RUN(test_build_waits);
    RUN(test_dir_budget);
    RUN(test_list_and_prune);
    RUN(test_superseded_versions);
    RUN(test_key_fields);
    RUN(test_key_subsecond_rewrite);
    RUN(test_format_version);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_root);
    return TEST_SUMMARY();
}
