/* cc -O2 -std=c99 -I. tools/bench/bench_threads.c -o build/bench_threads -lpthread -lm */
/* The ceiling of one process's decoding threads: K independent loaders,
   each with one worker and its own dataset, run at once in K threads of
   one process, every epoch in dataset order (no shuffle). Nothing is
   shared between them but the process (its address space, its allocator)
   and the hardware, so their steady rates added say what K decoding
   threads of this process can deliver; a K-worker loader, which also
   hands units between its workers in order, is measured against it. Run
   it next to K separate processes (the machine's ceiling without the
   shared address space) and one alone.

   Prints one line per loader: `loader i: R rows/s` (the median of its
   epochs 1.. ; epoch 0 maps the file), then `total: R rows/s` (their
   sum). Every epoch of every loader must deliver the dataset's rows in
   full, or it exits 1 naming the loader and epoch (so nothing can look
   fast by dropping rows).

   Usage: bench_threads FILE LOADERS [EPOCHS (4)] [BATCH (4096)]
   exit 0, 1 (an open or a loader failed: why on stderr), 2 (bad arguments). */
#define _POSIX_C_SOURCE 200809L
#define GPUFEED_IMPLEMENTATION
#define GPUFEED_STATIC
#include "gpufeed.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_LOADERS 64
#define MAX_EPOCHS 256

typedef struct job {
    const char *path;
    int id;
    int64_t epochs, batch;
    double secs[MAX_EPOCHS];           /* each epoch's wall time */
    int64_t rows[MAX_EPOCHS];          /* each epoch's rows */
    int64_t want;                      /* the dataset's rows */
    int failed;
    char why[GPUFEED_ERROR_MAX + 64];
} job;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *run(void *arg)
{
    job *j = (job *)arg;
    gpufeed_dataset *ds = NULL;
    gpufeed_loader *l = NULL;
    gpufeed_error err;
    gpufeed_dataset_desc dd;
    gpufeed_loader_desc ld;
    gpufeed_dataset_info info;
    gpufeed_batch b;
    gpufeed_result r;
    int64_t e = -1;
    double t = 0;
    memset(&dd, 0, sizeof dd);
    memset(&ld, 0, sizeof ld);
    dd.paths = &j->path;
    dd.num_paths = 1;
    if (gpufeed_dataset_open(&ds, &dd, &err)) {
        snprintf(j->why, sizeof j->why, "%s", err.message);
        j->failed = 1;
        return NULL;
    }
    gpufeed_dataset_get_info(ds, &info);
    j->want = info.num_rows;
    ld.batch_rows = j->batch;
    ld.workers = 1;
    ld.no_unit_shuffle = 1;
    ld.shuffle_window = 0;
    ld.epochs = j->epochs;
    if (gpufeed_loader_open(&l, ds, &ld, &err)) {
        snprintf(j->why, sizeof j->why, "%s", err.message);
        j->failed = 1;
        gpufeed_dataset_close(ds);
        return NULL;
    }
    while ((r = gpufeed_loader_next(l, &b)) == GPUFEED_OK) {
        if (b.epoch != e) {
            double t2 = now_s();
            if (e >= 0) j->secs[e] = t2 - t;
            t = t2;
            e = b.epoch;
            if (e < 0 || e >= j->epochs) break;
        }
        j->rows[e] += b.num_rows;
    }
    if (e >= 0 && e < j->epochs) j->secs[e] = now_s() - t;
    if (r != GPUFEED_DONE && r != GPUFEED_OK) {
        snprintf(j->why, sizeof j->why, "%s", gpufeed_loader_error(l));
        j->failed = 1;
    }
    gpufeed_loader_close(l);
    gpufeed_dataset_close(ds);
    return NULL;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int arg_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || v < lo || v > hi) return 1;
    *out = (int64_t)v;
    return 0;
}

int main(int argc, char **argv)
{
    static job jobs[MAX_LOADERS];
    pthread_t th[MAX_LOADERS];
    int64_t k = 0, epochs = 4, batch = 4096, i, e;
    double total = 0;
    int bad = 0;
    if (argc < 3 || argc > 5 || arg_int(argv[2], 1, MAX_LOADERS, &k) ||
        (argc > 3 && arg_int(argv[3], 2, MAX_EPOCHS, &epochs)) ||
        (argc > 4 && arg_int(argv[4], 1, (int64_t)1 << 24, &batch))) {
        fprintf(stderr, "usage: bench_threads FILE LOADERS (1..%d) [EPOCHS (2..%d, default 4)] [BATCH (default 4096)]\n",
                MAX_LOADERS, MAX_EPOCHS);
        return 2;
    }
    for (i = 0; i < k; i++) {
        jobs[i].path = argv[1];
        jobs[i].id = (int)i;
        jobs[i].epochs = epochs;
        jobs[i].batch = batch;
        if (pthread_create(&th[i], NULL, run, &jobs[i])) {
            fprintf(stderr, "bench_threads: could not start thread %lld\n", (long long)i);
            while (i-- > 0) pthread_join(th[i], NULL);
            return 1;
        }
    }
    for (i = 0; i < k; i++) pthread_join(th[i], NULL);
    for (i = 0; i < k; i++) {
        job *j = &jobs[i];
        double v[MAX_EPOCHS], rate;
        if (j->failed) {
            fprintf(stderr, "bench_threads: loader %lld: %s\n", (long long)i, j->why);
            bad = 1;
            continue;
        }
        for (e = 0; e < epochs; e++)
            if (j->rows[e] != j->want) {
                fprintf(stderr, "bench_threads: loader %lld, epoch %lld: %lld rows, the dataset has %lld\n",
                        (long long)i, (long long)e, (long long)j->rows[e], (long long)j->want);
                bad = 1;
            }
        for (e = 1; e < epochs; e++) v[e - 1] = j->secs[e];
        qsort(v, (size_t)(epochs - 1), sizeof v[0], cmp_d);
        rate = v[(epochs - 1) / 2] > 0 ? (double)j->want / v[(epochs - 1) / 2] : 0;
        printf("loader %lld: %.0f rows/s\n", (long long)i, rate);
        total += rate;
    }
    if (bad) return 1;
    printf("total: %.0f rows/s (%lld loader%s of 1 worker, one process, %lld epochs of %lld rows each)\n", total, (long long)k, k == 1 ? "" : "s",
           (long long)epochs, (long long)jobs[0].want);
    return 0;
}
