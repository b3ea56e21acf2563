/* gpufeed-bench: run the deterministic parallel loader over Parquet files
   and report throughput, the stall breakdown and a verdict.

   Build:  cc -O2 -I. tools/gpufeed-bench.c -o gpufeed-bench -lpthread -lm
   Usage:  gpufeed-bench FILE|DIR|GLOB... [--columns a,b] [--dtype f32|...]
             --batch B [--workers N] [--seed S] [--epochs E]
             [--shuffle-window W] [--no-shuffle] [--rank r --world w]
             [--even drop|pad] [--drop-last] [--start-epoch e --start-batch k]
             [--ring-depth D] [--unit-rows N] [--prefill] [--jitter-us X]
             [--print-batches] [--print-rows] [--sum] [--global-batch G [--partitions P]] [--trace out.json] [--cache DIR] [--cache-ram BYTES]
             [--pread] [--feature COLUMN:DTYPE[:OPTION...]]... [--verify-crc]

   --feature: one feature each, in order (the syntax of every gpufeed tool,
   tools/gf_cli.h: options hash=N, seed=S, fill=V, null=fill|error, valid,
   cast=unsafe, width=W, ragged=error|pad|truncate, lengths); instead of
   --columns/--dtype. --verify-crc checks page CRCs while decoding.
   --global-batch G: elastic mode (gpufeed_loader_desc.global_batch_rows):
   --batch may then be left out (it is G / world); --partitions P: the
   global batch is made of P partitions' blocks, a rank decodes only the
   units of its own (world must divide P). --print-rows prints one
   line per delivered row: `epoch global_batch position hash` (the row's
   position in its global batch, a 64-bit hash of its bytes): the lines of
   every rank, sorted, are the same for any --world that divides G.
   --sum adds each epoch's sum of every value to its line (a check that no
   row was lost). --print-batches prints one line per batch: `epoch index rows hash`
   (hash: 64-bit hash of the batch's bytes), the determinism contract: the
   same for any --workers, --ring-depth or timing. At the end, on stderr:
   rows/s, GB/s, the stall breakdown, the verdict, peak RSS, and with
   --cache the source bytes read per epoch (0 once the cache is built). */
#define GPUFEED_IMPLEMENTATION
#include "../gpufeed.h"
#include "gf_cli.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/resource.h>

static double now_s(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

static long long arg_ll(const char *opt, const char *v, long long min)
{
    char *e;
    long long x = strtoll(v, &e, 10);
    if (*e || x < min) { fprintf(stderr, "gpufeed-bench: %s needs an integer >= %lld, got '%.100s'\n", opt, min, v); exit(2); }
    return x;
}

static void usage(void)
{
    fprintf(stderr, "usage: gpufeed-bench FILE... --batch B [--columns a,b] [--dtype T] [--workers N] [--seed S] [--epochs E]\n"
                    "         [--shuffle-window W] [--no-shuffle] [--rank r --world w] [--even drop|pad] [--drop-last]\n"
                    "         [--start-epoch e --start-batch k] [--ring-depth D] [--unit-rows N] [--prefill]\n"
                    "         [--jitter-us X] [--print-batches] [--print-rows] [--sum] [--global-batch G [--partitions P]] [--trace out.json] [--cache DIR] [--cache-ram BYTES]\n"
                    "         [--pread] [--feature COL:DTYPE[:OPT...]]... [--verify-crc]\n");
}

/* the sum of every value of a batch (a check that no row was lost) */
static double batch_sum(const gpufeed_dataset *ds, const gpufeed_batch *b)
{
    gpufeed_dataset_info info;
    double t = 0;
    int64_t i;
    int32_t j;
    gpufeed_dataset_get_info(ds, &info);
    for (j = 0; j < info.num_features; j++) {
        const gpufeed_feature *f = gpufeed_dataset_feature(ds, j);
        size_t z = gpufeed_dtype_size(f->dtype), w = f->width > 0 ? (size_t)f->width : 1, e;
        for (i = 0; i < b->num_rows; i++)
            for (e = 0; e < w; e++) {
                const uint8_t *p = info.layout == GPUFEED_LAYOUT_ROW_MAJOR ? (const uint8_t *)b->data + i * b->row_bytes + b->feature_offset[j] + e * z
                                                                           : (const uint8_t *)b->features[j] + ((size_t)i * w + e) * z;
                switch (f->dtype) {
                case GPUFEED_DT_F32: { float v; memcpy(&v, p, 4); t += v; break; }
                case GPUFEED_DT_F64: { double v; memcpy(&v, p, 8); t += v; break; }
                case GPUFEED_DT_I32: { int32_t v; memcpy(&v, p, 4); t += (double)v; break; }
                case GPUFEED_DT_I64: { int64_t v; memcpy(&v, p, 8); t += (double)v; break; }
                case GPUFEED_DT_U8: t += p[0]; break;
                default: { uint16_t v; memcpy(&v, p, 2); t += f->dtype == GPUFEED_DT_F16 ? (double)gpufeed_half_to_float(v) : 0.0; break; }
                }
            }
    }
    return t;
}

/* one line per epoch on stderr: its rows, seconds and rate (and --sum) */
static void epoch_line(int64_t e, uint64_t rows, double secs, int sums, double sum)
{
    fprintf(stderr, "epoch %lld: %llu rows, %.4f s, %.0f rows/s", (long long)e, (unsigned long long)rows, secs, secs > 0 ? (double)rows / secs : 0.0);
    if (sums) fprintf(stderr, ", sum %.17g", sum);
    fputc('\n', stderr);
}

static const char **g_files;
static void free_files(void) { free((void *)g_files); g_files = NULL; }

int main(int argc, char **argv)
{
    const char **files = (const char **)calloc((size_t)argc + 1, sizeof(char *));
    const char *columns = NULL;
    int nfiles = 0, i, rc = 0, print = 0, sums = 0, print_rows = 0;
    gpufeed_dtype dt = GPUFEED_DT_F32;
    gpufeed_loader_desc ld;
    gpufeed_dataset_desc dd;
    gpufeed_dataset *ds = NULL;
    gpufeed_loader *l = NULL;
    gpufeed_error err;
    gpufeed_feature *feats = NULL;
    char **names = NULL;
    int nfeat = 0;
    long long unit_rows = 0;
    double t0, t1;
    gpufeed_cache_desc cache;
    gf_cli_features fs;
    char msg[256];
    memset(&fs, 0, sizeof fs);
    if (!files) return 1;
    g_files = files;
    atexit(free_files);
    memset(&ld, 0, sizeof ld);
    memset(&dd, 0, sizeof dd);
    memset(&cache, 0, sizeof cache);
    ld.epochs = 1;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (!strcmp(a, "--columns") && has) columns = argv[++i];
        else if (!strcmp(a, "--dtype") && has) { if (gpufeed_dtype_parse(argv[++i], &dt)) { fprintf(stderr, "gpufeed-bench: unknown dtype '%.100s'\n", argv[i]); return 2; } }
        else if (!strcmp(a, "--batch") && has) ld.batch_rows = arg_ll(a, argv[++i], 1);
        else if (!strcmp(a, "--workers") && has) ld.workers = (int32_t)arg_ll(a, argv[++i], 1);
        else if (!strcmp(a, "--seed") && has) ld.seed = (uint64_t)arg_ll(a, argv[++i], 0);
        else if (!strcmp(a, "--epochs") && has) ld.epochs = arg_ll(a, argv[++i], 1);
        else if (!strcmp(a, "--shuffle-window") && has) ld.shuffle_window = (int32_t)arg_ll(a, argv[++i], 0);
        else if (!strcmp(a, "--no-shuffle")) ld.no_unit_shuffle = 1;
        else if (!strcmp(a, "--rank") && has) ld.rank = (int32_t)arg_ll(a, argv[++i], 0);
        else if (!strcmp(a, "--world") && has) ld.world = (int32_t)arg_ll(a, argv[++i], 1);
        else if (!strcmp(a, "--even") && has) {
            const char *v = argv[++i];
            if (!strcmp(v, "drop")) ld.even = GPUFEED_EVEN_DROP; else if (!strcmp(v, "pad")) ld.even = GPUFEED_EVEN_PAD;
            else { fprintf(stderr, "gpufeed-bench: --even takes drop or pad\n"); return 2; }
        }
        else if (!strcmp(a, "--drop-last")) ld.last_batch = GPUFEED_DROP_LAST;
        else if (!strcmp(a, "--start-epoch") && has) ld.start_epoch = arg_ll(a, argv[++i], 0);
        else if (!strcmp(a, "--start-batch") && has) ld.start_batch = arg_ll(a, argv[++i], 0);
        else if (!strcmp(a, "--ring-depth") && has) ld.ring_depth = (int32_t)arg_ll(a, argv[++i], 1);
        else if (!strcmp(a, "--unit-rows") && has) unit_rows = arg_ll(a, argv[++i], 1);
        else if (!strcmp(a, "--prefill")) ld.prefill = 1;
        else if (!strcmp(a, "--mmap")) dd.flags |= GPUFEED_OPEN_MMAP; /* the default */
        else if (!strcmp(a, "--pread")) dd.flags |= GPUFEED_OPEN_PREAD;
        else if (!strcmp(a, "--jitter-us") && has) ld.debug_jitter_us = (int32_t)arg_ll(a, argv[++i], 0);
        else if (!strcmp(a, "--print-batches")) print = 1;
        else if (!strcmp(a, "--sum")) sums = 1;
        else if (!strcmp(a, "--print-rows")) print_rows = 1;
        else if (!strcmp(a, "--global-batch") && has) ld.global_batch_rows = arg_ll(a, argv[++i], 1);
        else if (!strcmp(a, "--partitions") && has) ld.partitions = (int32_t)arg_ll(a, argv[++i], 1);
        else if (!strcmp(a, "--trace") && has) ld.trace_path = argv[++i];
        else if (!strcmp(a, "--cache") && has) { cache.dir = argv[++i]; ld.cache = &cache; }
        else if (!strcmp(a, "--cache-ram") && has) { cache.ram_bytes = (uint64_t)arg_ll(a, argv[++i], 1); ld.cache = &cache; }
        else if (!strcmp(a, "--feature") && has) {
            if (gf_cli_features_add(&fs, argv[++i], msg, sizeof msg)) { fprintf(stderr, "gpufeed-bench: --feature '%.200s': %s\n", argv[i], msg); gf_cli_features_free(&fs); return 2; }
        }
        else if (!strcmp(a, "--verify-crc")) dd.flags |= GPUFEED_OPEN_VERIFY_CRC;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(); return 0; }
        else if (a[0] == '-' && a[1]) { fprintf(stderr, "gpufeed-bench: unknown option '%.100s'\n", a); usage(); gf_cli_features_free(&fs); return 2; }
        else files[nfiles++] = a;
    }
    if (!nfiles || (ld.batch_rows <= 0 && ld.global_batch_rows <= 0)) { usage(); gf_cli_features_free(&fs); return 2; }
    if (fs.n && (columns || dt != GPUFEED_DT_F32)) { fprintf(stderr, "gpufeed-bench: --feature gives each feature its dtype: not with --columns or --dtype\n"); gf_cli_features_free(&fs); return 2; }
    if (columns) {
        const char *p = columns;
        int n = 1;
        for (i = 0; columns[i]; i++) n += columns[i] == ',';
        feats = (gpufeed_feature *)calloc((size_t)n, sizeof *feats);
        names = (char **)calloc((size_t)n, sizeof *names);
        if (!feats || !names) return 1;
        while (*p) {
            const char *e = strchr(p, ',');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            names[nfeat] = (char *)malloc(len + 1);
            if (!names[nfeat]) return 1;
            memcpy(names[nfeat], p, len); names[nfeat][len] = 0;
            feats[nfeat].column = names[nfeat];
            feats[nfeat].dtype = dt;
            nfeat++;
            p += len; if (*p == ',') p++;
        }
    }
    dd.paths = files; dd.num_paths = nfiles;
    dd.features = feats; dd.num_features = nfeat;
    if (fs.n) { dd.features = fs.f; dd.num_features = fs.n; }
    dd.unit_rows = unit_rows;
    t0 = now_s();
    if (gpufeed_dataset_open(&ds, &dd, &err)) { fprintf(stderr, "gpufeed-bench: %s\n", err.message); rc = 1; goto done; }
    if (!columns && dt != GPUFEED_DT_F32) {
        gpufeed_dataset_info info;
        int32_t k;
        gpufeed_dataset_get_info(ds, &info);
        feats = (gpufeed_feature *)calloc((size_t)info.num_features, sizeof *feats);
        names = (char **)calloc((size_t)info.num_features, sizeof *names);
        if (!feats || !names) { rc = 1; goto done; }
        for (k = 0; k < info.num_features; k++) {
            const char *c = gpufeed_dataset_feature(ds, k)->column;
            names[k] = (char *)malloc(strlen(c) + 1);
            if (!names[k]) { rc = 1; goto done; }
            strcpy(names[k], c);
            feats[k].column = names[k]; feats[k].dtype = dt;
        }
        nfeat = info.num_features;
        gpufeed_dataset_close(ds); ds = NULL;
        dd.features = feats; dd.num_features = nfeat;
        if (gpufeed_dataset_open(&ds, &dd, &err)) { fprintf(stderr, "gpufeed-bench: %s\n", err.message); rc = 1; goto done; }
    }
    if (gpufeed_loader_open(&l, ds, &ld, &err)) { fprintf(stderr, "gpufeed-bench: %s\n", err.message); rc = 1; goto done; }
    {
        gpufeed_batch b;
        gpufeed_result r;
        uint64_t rows = 0, bytes = 0;
        gpufeed_stats st;
        struct rusage ru;
        double secs, t_epoch_end = 0;
        int32_t k;
        double t_mark = now_s(), esum = 0;
        int64_t cur_epoch = -1;
        uint64_t erows = 0;
        while ((r = gpufeed_loader_next(l, &b)) == GPUFEED_OK) {
            if (b.epoch != cur_epoch) { /* the previous epoch ended with the batch before */
                if (cur_epoch >= 0) epoch_line(cur_epoch, erows, t_epoch_end - t_mark, sums, esum);
                if (cur_epoch >= 0) t_mark = t_epoch_end;
                cur_epoch = b.epoch; erows = 0; esum = 0;
            }
            rows += (uint64_t)b.num_rows;
            erows += (uint64_t)b.num_rows;
            bytes += (uint64_t)b.num_rows * (uint64_t)b.row_bytes;
            if (sums) esum += batch_sum(ds, &b);
            if (print) printf("%lld %lld %lld %016llx\n", (long long)b.epoch, (long long)b.index, (long long)b.num_rows,
                              (unsigned long long)gpufeed_batch_hash(ds, &b));
            if (print_rows) {
                int64_t q;
                for (q = 0; q < b.num_rows; q++)
                    printf("%lld %lld %lld %016llx\n", (long long)b.epoch, (long long)b.index, (long long)(b.slice_start + q),
                           (unsigned long long)gpufeed_batch_row_hash(ds, &b, q));
            }
            t_epoch_end = now_s();
        }
        if (cur_epoch >= 0 && r == GPUFEED_DONE) epoch_line(cur_epoch, erows, t_epoch_end - t_mark, sums, esum);
        if (r != GPUFEED_DONE) { fprintf(stderr, "gpufeed-bench: %s\n", gpufeed_loader_error(l)); rc = 1; goto done; }
        t1 = now_s();
        secs = t1 - t0;
        gpufeed_loader_stats(l, &st);
        getrusage(RUSAGE_SELF, &ru);
        fprintf(stderr, "rows %llu, batches %llu, %.3f s, %.0f rows/s, %.3f GB/s dense, source bytes read %llu\n",
                (unsigned long long)rows, (unsigned long long)st.batches, secs, secs > 0 ? (double)rows / secs : 0.0,
                secs > 0 ? (double)bytes / secs / 1e9 : 0.0, (unsigned long long)st.bytes_read);
        fprintf(stderr, "stall: trainer waited %.3f s of %.3f s (%.1f%%), copying batches %.3f s; units decoded %llu; rows dropped %llu, repeated %llu\n",
                st.trainer_wait_s, st.wall_s, st.wall_s > 0 ? 100 * st.trainer_wait_s / st.wall_s : 0.0, st.copy_s,
                (unsigned long long)st.units_decoded, (unsigned long long)st.rows_dropped, (unsigned long long)st.rows_repeated);
        for (k = 0; k < st.workers; k++) {
            double busy = st.life_s > 0 ? (st.worker_busy_s[k] + st.worker_assembly_s[k]) / st.life_s : 0.0;
            if (busy > 1) busy = 1;
            fprintf(stderr, "worker %d: decode %.3f s, batch assembly %.3f s, idle %.3f s (%.0f%% busy)\n", k, st.worker_busy_s[k],
                    st.worker_assembly_s[k], st.worker_backpressure_s[k], 100 * busy);
        }
        fprintf(stderr, "source reads %.3f s (part of decode); the consumer's own time between batches %.3f s\n", st.read_s, st.consumer_s);
        if (ld.cache) {
            int64_t e;
            static const char *const cs[] = { "off", "building", "ready" };
            fprintf(stderr, "cache: %s, units from cache %llu, bad units %llu\n", cs[st.cache_state], (unsigned long long)st.units_from_cache, (unsigned long long)st.cache_bad_units);
            for (e = ld.start_epoch; e < ld.start_epoch + ld.epochs && e < ld.start_epoch + 64; e++)
                fprintf(stderr, "epoch %lld: source bytes read %llu\n", (long long)e, (unsigned long long)gpufeed_loader_epoch_bytes(l, e));
        }
        fprintf(stderr, "verdict: %s\n", st.verdict);
        fprintf(stderr, "peak RSS %.1f MiB\n", (double)ru.ru_maxrss / 1024.0);
    }
done:
    gpufeed_loader_close(l);
    gpufeed_dataset_close(ds);
    if (names) for (i = 0; i < nfeat; i++) free(names[i]);
    free(names); free(feats);
    gf_cli_features_free(&fs);
    return rc;
}
