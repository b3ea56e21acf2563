/* bench_epoch_stall: per-batch wait times of the gpufeed loader around the
   epoch boundary, warm start with prefill, and the memory bound.

   Build:  cc -O2 -std=c99 -I. tools/bench/bench_epoch_stall.c -o build/bench_epoch_stall -lpthread -lm
   Usage:  bench_epoch_stall FILE... [--batch B] [--unit-rows N] [--workers N]
             [--ring-depth D] [--epochs E] [--step-us S | --step-factor F]
             [--prefill] [--warm-start-runs R] [--info] [--sched]

   Driven by tools/bench/bench_loader.py (make bench-loader), which prints the
   tables. Modes:

   default   runs the loader for E epochs (default 3) with a simulated
             training step after each batch: the step checksums the batch
             (so it is really read) and busy-waits until S microseconds
             have passed since it began. Every gpufeed_loader_next() call
             is timed, wall and the calling thread's CPU time. When all
             units have the same rows, the next() calls that open a unit
             (other than epoch 1's and epoch 2's first) are summarised
             apart: where a trainer that outruns decoding waits, the fair
             comparison for epoch 2's first. With --step-us absent,
             S = F x the mean next() time of a calibration epoch without a
             step (F default 1.25: the step is a little longer than
             decoding one batch's worth, so a well-overlapped loader keeps
             the trainer from waiting).
   --warm-start-runs R
             opens the loader R times with prefill 0 and R times with
             prefill 1 (alternating) and times loader_open and the first
             next() of each.
   --sched   runs E epochs without a step (the loader unbounded, stopped
             after E epochs of batches, so that the workers are still
             alive) and prints, before closing the loader, the units
             decoded so far and each thread's on-CPU time, run-queue wait
             (runnable but not running: the machine's other load) and time
             slices from /proc/self/task/TID/schedstat (Linux).
   --info    prints the dataset's units, row bytes and the memory bound
             workers x ring_depth x unit bytes + batch bytes, then exits.

   Output: `key value...` lines on stdout (one fact per line), for the
   driver to parse; times in microseconds. */
#define _POSIX_C_SOURCE 200809L
#define GPUFEED_IMPLEMENTATION
#include "../../gpufeed.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/time.h>
#include <sys/resource.h>
#include <dirent.h>
#include <unistd.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* resident set now (Linux /proc/self/statm), MiB; -1 elsewhere */
/* CPU time of the calling thread: next() wall time minus this is time the
   trainer thread was off the CPU (waiting for a unit, or preempted) */
static double thread_cpu_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static double rss_now_mib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages_total = 0, pages_res = 0;
    double mib = -1;
    if (!f) return -1;
    if (fscanf(f, "%ld %ld", &pages_total, &pages_res) == 2) mib = (double)pages_res * 4096.0 / (1024.0 * 1024.0);
    fclose(f);
    return mib;
}
static double rss_peak_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

/* --sched: every thread's on-CPU time, run-queue wait and time slices
   (Linux /proc/self/task/TID/schedstat, ns) while the loader's workers are
   still alive; the main thread is the trainer (the consumer) */
static void print_sched(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    long me = (long)getpid();
    if (!d) { printf("sched unavailable\n"); return; }
    while ((e = readdir(d)) != NULL) {
        char path[300];
        unsigned long long run = 0, wait = 0, slices = 0;
        FILE *f;
        long tid;
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        tid = strtol(e->d_name, NULL, 10);
        sprintf(path, "/proc/self/task/%.200s/schedstat", e->d_name);
        f = fopen(path, "r");
        if (!f) continue;
        if (fscanf(f, "%llu %llu %llu", &run, &wait, &slices) == 3)
            printf("thread %s cpu_s %.6f runqueue_s %.6f slices %llu\n", tid == me ? "trainer" : "worker",
                   (double)run * 1e-9, (double)wait * 1e-9, slices);
        fclose(f);
    }
    closedir(d);
}

static long long arg_ll(const char *opt, const char *v, long long min)
{
    char *e;
    long long x = strtoll(v, &e, 10);
    if (*e || x < min) { fprintf(stderr, "bench_epoch_stall: %s needs an integer >= %lld, got '%.100s'\n", opt, min, v); exit(2); }
    return x;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static volatile uint64_t g_sink;

/* the simulated training step: read the batch, then spin until step_us */
static void train_step(const gpufeed_batch *b, double step_us)
{
    double t0 = now_us();
    const uint64_t *p = (const uint64_t *)b->data;
    size_t n = (size_t)(b->num_rows * b->row_bytes) / 8, i;
    uint64_t acc = 0;
    for (i = 0; i < n; i++) acc += p[i];
    g_sink += acc;
    while (now_us() - t0 < step_us) { }
}

typedef struct run_result {
    double *next_us;                   /* per batch */
    double *cpu_us;                    /* the trainer thread's CPU time in that call */
    int64_t *epoch, *index;
    int64_t n;
    double wall_us;
    gpufeed_stats st;
} run_result;

static int g_sched;

/* runs the loader to its end, or (stop_after > 0) for that many batches */
static int run_loader(gpufeed_dataset *ds, const gpufeed_loader_desc *ld, double step_us, int64_t stop_after, run_result *rr)
{
    gpufeed_loader *l = NULL;
    gpufeed_error err;
    gpufeed_batch b;
    gpufeed_result r;
    int64_t cap = 1024;
    double t0, t1, c0, c1, tstart;
    memset(rr, 0, sizeof *rr);
    rr->next_us = (double *)malloc((size_t)cap * sizeof(double));
    rr->epoch = (int64_t *)malloc((size_t)cap * sizeof(int64_t));
    rr->index = (int64_t *)malloc((size_t)cap * sizeof(int64_t));
    rr->cpu_us = (double *)malloc((size_t)cap * sizeof(double));
    if (!rr->next_us || !rr->epoch || !rr->index || !rr->cpu_us) return 1;
    if (gpufeed_loader_open(&l, ds, ld, &err)) { fprintf(stderr, "bench_epoch_stall: %s\n", err.message); return 1; }
    tstart = now_us();
    for (;;) {
        c0 = thread_cpu_us();
        t0 = now_us();
        r = gpufeed_loader_next(l, &b);
        t1 = now_us();
        c1 = thread_cpu_us();
        if (r != GPUFEED_OK) break;
        if (rr->n == cap) {
            cap *= 2;
            rr->next_us = (double *)realloc(rr->next_us, (size_t)cap * sizeof(double));
            rr->epoch = (int64_t *)realloc(rr->epoch, (size_t)cap * sizeof(int64_t));
            rr->index = (int64_t *)realloc(rr->index, (size_t)cap * sizeof(int64_t));
            rr->cpu_us = (double *)realloc(rr->cpu_us, (size_t)cap * sizeof(double));
            if (!rr->next_us || !rr->epoch || !rr->index || !rr->cpu_us) { gpufeed_loader_close(l); return 1; }
        }
        rr->next_us[rr->n] = t1 - t0;
        rr->cpu_us[rr->n] = c1 - c0;
        rr->epoch[rr->n] = b.epoch;
        rr->index[rr->n] = b.index;
        rr->n++;
        if (step_us > 0) train_step(&b, step_us);
        if (stop_after > 0 && rr->n == stop_after) { r = GPUFEED_DONE; break; }
    }
    rr->wall_us = now_us() - tstart;
    if (r != GPUFEED_DONE) { fprintf(stderr, "bench_epoch_stall: %s\n", gpufeed_loader_error(l)); gpufeed_loader_close(l); return 1; }
    gpufeed_loader_stats(l, &rr->st);
    if (g_sched) print_sched();
    gpufeed_loader_close(l);
    return 0;
}

static void free_run(run_result *rr)
{
    free(rr->next_us); free(rr->cpu_us); free(rr->epoch); free(rr->index);
}

static double mean_of(const double *x, int64_t n)
{
    double s = 0;
    int64_t i;
    for (i = 0; i < n; i++) s += x[i];
    return n ? s / (double)n : 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_epoch_stall FILE... [--batch B] [--unit-rows N] [--workers N] [--ring-depth D]\n"
                    "         [--epochs E] [--step-us S | --step-factor F] [--prefill] [--warm-start-runs R] [--info] [--sched]\n");
}

int main(int argc, char **argv)
{
    const char **files = (const char **)calloc((size_t)argc + 1, sizeof(char *));
    int nfiles = 0, i, info_only = 0, rc = 0;
    long long warm_runs = 0;
    double step_us = -1, step_factor = 1.25;
    gpufeed_loader_desc ld;
    gpufeed_dataset_desc dd;
    gpufeed_dataset *ds = NULL;
    gpufeed_dataset_info info;
    gpufeed_error err;
    int64_t u, max_unit_rows = 0, min_unit_rows = INT64_MAX;
    int32_t depth;
    double rss_open;
    if (!files) return 1;
    memset(&ld, 0, sizeof ld);
    memset(&dd, 0, sizeof dd);
    ld.batch_rows = 4096;
    ld.epochs = 3;
    ld.workers = 1;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (!strcmp(a, "--batch") && has) ld.batch_rows = arg_ll(a, argv[++i], 1);
        else if (!strcmp(a, "--unit-rows") && has) dd.unit_rows = arg_ll(a, argv[++i], 1);
        else if (!strcmp(a, "--workers") && has) ld.workers = (int32_t)arg_ll(a, argv[++i], 1);
        else if (!strcmp(a, "--ring-depth") && has) ld.ring_depth = (int32_t)arg_ll(a, argv[++i], 1);
        else if (!strcmp(a, "--epochs") && has) ld.epochs = arg_ll(a, argv[++i], 1);
        else if (!strcmp(a, "--step-us") && has) step_us = (double)arg_ll(a, argv[++i], 0);
        else if (!strcmp(a, "--step-factor") && has) step_factor = atof(argv[++i]);
        else if (!strcmp(a, "--prefill")) ld.prefill = 1;
        else if (!strcmp(a, "--warm-start-runs") && has) warm_runs = arg_ll(a, argv[++i], 1);
        else if (!strcmp(a, "--info")) info_only = 1;
        else if (!strcmp(a, "--sched")) g_sched = 1;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(); return 0; }
        else if (a[0] == '-' && a[1]) { fprintf(stderr, "bench_epoch_stall: unknown option '%.100s'\n", a); usage(); return 2; }
        else files[nfiles++] = a;
    }
    if (!nfiles) { usage(); return 2; }
    dd.paths = files; dd.num_paths = nfiles;
    if (gpufeed_dataset_open(&ds, &dd, &err)) { fprintf(stderr, "bench_epoch_stall: %s\n", err.message); free(files); return 1; }
    rss_open = rss_now_mib();
    gpufeed_dataset_get_info(ds, &info);
    for (u = 0; u < info.num_units; u++) {
        const gpufeed_unit *un = gpufeed_dataset_unit(ds, u);
        if (un->num_rows > max_unit_rows) max_unit_rows = un->num_rows;
        if (un->num_rows < min_unit_rows) min_unit_rows = un->num_rows;
    }
    /* the loader's ring depth: ring_depth (default 2, 4 with more than 4
       workers), at least 2 without a shuffle window (see gpufeed_loader_open) */
    depth = ld.ring_depth ? ld.ring_depth : ld.workers > 4 ? 4 : 2;
    if (depth < 2) depth = 2;
    printf("rows %lld\n", (long long)info.num_rows);
    printf("units %lld\n", (long long)info.num_units);
    printf("unit_rows_max %lld\n", (long long)max_unit_rows);
    printf("unit_rows_min %lld\n", (long long)min_unit_rows);
    printf("row_bytes %lld\n", (long long)info.row_bytes);
    printf("workers %d\n", ld.workers);
    printf("ring_depth %d\n", depth);
    printf("batch_rows %lld\n", (long long)ld.batch_rows);
    printf("bound_bytes %.0f\n", (double)ld.workers * depth * (double)max_unit_rows * (double)info.row_bytes +
                                 (double)ld.batch_rows * (double)info.row_bytes);
    printf("rss_after_dataset_open_mib %.2f\n", rss_open);
    if (info_only) goto done;

    if (warm_runs > 0) {
        long long k;
        int p;
        for (k = 0; k < warm_runs; k++)
            for (p = 0; p <= 1; p++) {
                gpufeed_loader *l = NULL;
                gpufeed_loader_desc d = ld;
                gpufeed_batch b;
                double t0, t1, t2;
                d.prefill = p;
                d.epochs = 1;
                t0 = now_us();
                if (gpufeed_loader_open(&l, ds, &d, &err)) { fprintf(stderr, "bench_epoch_stall: %s\n", err.message); rc = 1; goto done; }
                t1 = now_us();
                if (gpufeed_loader_next(l, &b) != GPUFEED_OK) { fprintf(stderr, "bench_epoch_stall: %s\n", gpufeed_loader_error(l)); gpufeed_loader_close(l); rc = 1; goto done; }
                t2 = now_us();
                printf("warm prefill %d open_us %.1f first_next_us %.1f\n", p, t1 - t0, t2 - t1);
                gpufeed_loader_close(l);
            }
        goto done;
    }

    if (g_sched) { /* per-thread CPU accounting of a run without a step */
        run_result rr;
        gpufeed_loader_desc d = ld;
        gpufeed_loader *probe = NULL;
        int64_t want = 0, e;
        /* workers exit (and their /proc entries go) once the last epoch
           is decoded: run unbounded and stop after E epochs of batches */
        d.epochs = GPUFEED_EPOCHS_ENDLESS;
        if (gpufeed_loader_open(&probe, ds, &d, &err)) { fprintf(stderr, "bench_epoch_stall: %s\n", err.message); rc = 1; goto done; }
        for (e = 0; e < ld.epochs; e++) want += gpufeed_loader_epoch_batches(probe, e);
        gpufeed_loader_close(probe);
        if (run_loader(ds, &d, 0, want, &rr)) { rc = 1; goto done; }
        printf("units_decoded %llu\n", (unsigned long long)rr.st.units_decoded);
        printf("batches %lld\n", (long long)rr.n);
        printf("wall_us %.1f\n", rr.wall_us);
        printf("trainer_wait_s %.4f\n", rr.st.trainer_wait_s);
        printf("assembly_s %.4f\n", rr.st.copy_s);
        free_run(&rr);
        goto done;
    }
    if (step_us < 0) { /* calibrate: one epoch, no step */
        run_result cal;
        gpufeed_loader_desc d = ld;
        d.epochs = 1; d.prefill = 0;
        if (run_loader(ds, &d, 0, 0, &cal)) { rc = 1; goto done; }
        printf("calibration_mean_next_us %.2f\n", mean_of(cal.next_us, cal.n));
        printf("calibration_batches %lld\n", (long long)cal.n);
        step_us = step_factor * mean_of(cal.next_us, cal.n);
        free_run(&cal);
    }
    printf("step_us %.2f\n", step_us);
    {
        run_result rr;
        double *sorted, mean_all, mean_rest, p50, p95, maxv, first_e[3] = { -1, -1, -1 }, first_c[3] = { -1, -1, -1 };
        int64_t k, e0, n;
        if (run_loader(ds, &ld, step_us, 0, &rr)) { rc = 1; goto done; }
        n = rr.n;
        e0 = n ? rr.epoch[0] : 0;
        for (k = 0; k < n; k++) {
            int64_t e = rr.epoch[k] - e0;
            if (e >= 0 && e < 3 && rr.index[k] == 0) { first_e[e] = rr.next_us[k]; first_c[e] = rr.cpu_us[k]; }
        }
        sorted = (double *)malloc((size_t)(n ? n : 1) * sizeof(double));
        if (!sorted) { rc = 1; goto done; }
        memcpy(sorted, rr.next_us, (size_t)n * sizeof(double));
        qsort(sorted, (size_t)n, sizeof(double), cmp_double);
        mean_all = mean_of(rr.next_us, n);
        mean_rest = n > 1 ? mean_of(rr.next_us + 1, n - 1) : 0;
        p50 = n ? sorted[(size_t)((double)(n - 1) * 0.50 + 0.5)] : 0;
        p95 = n ? sorted[(size_t)((double)(n - 1) * 0.95 + 0.5)] : 0;
        maxv = n ? sorted[n - 1] : 0;
        printf("batches %lld\n", (long long)n);
        printf("wall_us %.1f\n", rr.wall_us);
        printf("mean_next_us %.2f\n", mean_all);
        printf("mean_next_excl_first_us %.2f\n", mean_rest);
        printf("p50_next_us %.2f\n", p50);
        printf("p95_next_us %.2f\n", p95);
        printf("max_next_us %.2f\n", maxv);
        printf("first_next_epoch1_us %.2f\n", first_e[0]);
        printf("first_next_epoch2_us %.2f\n", first_e[1]);
        printf("first_next_epoch3_us %.2f\n", first_e[2]);
        printf("mean_next_cpu_us %.2f\n", mean_of(rr.cpu_us, n));
        printf("first_next_epoch2_cpu_us %.2f\n", first_c[1]);
        /* the fair comparison for epoch 2's first batch: the other batches
           that open a new unit (known when every unit has the same rows and
           a batch never spans two units), epoch 1's first left out */
        if (min_unit_rows == max_unit_rows && max_unit_rows % ld.batch_rows == 0) {
            int64_t per = max_unit_rows / ld.batch_rows, cnt = 0;
            double sum = 0, csum = 0, *open_t = (double *)malloc((size_t)(n ? n : 1) * sizeof(double));
            if (!open_t) { rc = 1; goto done; }
            for (k = 1; k < n; k++)
                if (rr.index[k] % per == 0 && !(rr.epoch[k] - e0 == 1 && rr.index[k] == 0)) { sum += rr.next_us[k]; csum += rr.cpu_us[k]; open_t[cnt++] = rr.next_us[k]; }
            if (cnt) {
                qsort(open_t, (size_t)cnt, sizeof(double), cmp_double);
                printf("unit_open_batches %lld\n", (long long)cnt);
                printf("unit_open_mean_us %.2f\n", sum / (double)cnt);
                printf("unit_open_cpu_mean_us %.2f\n", csum / (double)cnt);
                printf("unit_open_p50_us %.2f\n", open_t[(size_t)((double)(cnt - 1) * 0.50 + 0.5)]);
                printf("unit_open_p95_us %.2f\n", open_t[(size_t)((double)(cnt - 1) * 0.95 + 0.5)]);
            }
            free(open_t);
        }
        /* the last batches of epoch 1 and the next ones of epoch 2, to see a
           drain or a refill around the boundary */
        for (k = 0; k < n; k++) if (rr.epoch[k] - e0 == 1 && rr.index[k] == 0) break;
        if (k < n) {
            int64_t a = k >= 3 ? k - 3 : 0, z = k + 4 < n ? k + 4 : n, m;
            printf("around_boundary_us");
            for (m = a; m < z; m++) printf(" %lld:%lld:%.1f", (long long)rr.epoch[m], (long long)rr.index[m], rr.next_us[m]);
            printf("\n");
        }
        printf("trainer_wait_s %.4f\n", rr.st.trainer_wait_s);
        printf("assembly_s %.4f\n", rr.st.copy_s);
        printf("units_decoded %llu\n", (unsigned long long)rr.st.units_decoded);
        printf("rss_end_mib %.2f\n", rss_now_mib());
        printf("rss_peak_mib %.2f\n", rss_peak_mib());
        free(sorted);
        free_run(&rr);
    }
done:
    gpufeed_dataset_close(ds);
    free(files);
    return rc;
}
