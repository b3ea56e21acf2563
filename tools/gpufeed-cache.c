/* gpufeed-cache: build, verify, inspect or remove the tensor cache of a
   dataset ahead of time, and keep a cache directory tidy.

   Build:  cc -O2 -I. tools/gpufeed-cache.c -o gpufeed-cache -lpthread -lm
   Usage:  gpufeed-cache build|verify|info|rm --cache DIR FEATURES [--unit-rows N]
                         [--workers N] [--verify-crc] [--no-wait] [--max-bytes N]
                         FILE|DIR|GLOB...
           gpufeed-cache ls DIR
           gpufeed-cache prune DIR [--max-bytes N]

   FEATURES: --feature COLUMN:DTYPE[:OPTION...], once per feature, in the
   loader's order (the syntax of every gpufeed tool, tools/gf_cli.h):
   options hash=N, seed=S, fill=V, null=fill|error, valid, cast=unsafe,
   width=W, ragged=error|pad|truncate, lengths. For example the README's
   trainer:
       gpufeed-cache build --cache /local/ssd/cache --feature dep_delay:f32 \
           --feature distance:f32 --feature carrier:i32:hash=1000 data/
   Or --columns a,b [--dtype T] (one dtype for all); neither: every numeric
   and boolean column as --dtype (f32).

   The cache is the one a loader with the same files, features and unit
   rows uses (its name is a key over all of them). `build` shows a progress
   bar on a terminal (rows, MB/s, ETA) and plain lines otherwise; when a
   loader or another build is writing the same cache it waits for it (a
   progress line every 2 s; --no-wait: exit 1 at once), then verifies every
   unit and exits 0. --max-bytes N (K, M, G, T suffixes: 1024-based) is the
   directory's budget: least recently used caches no process uses are
   removed to make room. `verify` checks every unit's checksum and exits 1
   on any bad unit. --verify-crc checks page CRCs while decoding.

   `ls DIR` lists the cache files (least recently used first): state,
   size, last use, dataset, features. `prune DIR` removes what no process
   uses: builds whose process died, files this version cannot read, old
   lock files, caches superseded by a newer one of the same dataset; with
   --max-bytes N, least recently used caches until the directory fits
   (exit 1 when what is in use alone is larger). */
#define GPUFEED_IMPLEMENTATION
#include "../gpufeed.h"
#include "gf_cli.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/time.h>

static double now_s(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

typedef struct prog { double t0, last; int tty; } prog;

static void progress(void *user, int64_t done, int64_t total, uint64_t rows, uint64_t bytes)
{
    prog *p = (prog *)user;
    double t = now_s(), el = t - p->t0, rate = el > 0 ? (double)bytes / el / 1e6 : 0, frac = total ? (double)done / (double)total : 1;
    double eta = frac > 0 ? el / frac - el : 0;
    if (p->tty) {
        int w = 30, k, fill = (int)(frac * w);
        fprintf(stderr, "\r[");
        for (k = 0; k < w; k++) fputc(k < fill ? '#' : '.', stderr);
        fprintf(stderr, "] %3.0f%%  %llu rows  %.1f MB/s  ETA %.0fs   ", 100 * frac, (unsigned long long)rows, rate, eta);
        if (done >= total) fputc('\n', stderr);
    } else if (t - p->last >= 1.0 || done >= total) {
        fprintf(stderr, "units %lld/%lld, rows %llu, %.1f MB/s, ETA %.0fs\n", (long long)done, (long long)total, (unsigned long long)rows, rate, eta);
        p->last = t;
    }
}

static void logline(void *user, const char *msg)
{
    (void)user;
    fprintf(stderr, "gpufeed-cache: %s\n", msg);
}

static void usage(void)
{
    fprintf(stderr, "usage: gpufeed-cache build|verify|info|rm --cache DIR [--feature COL:DTYPE[:OPT...]]... [--columns a,b] [--dtype T]\n"
                    "                     [--unit-rows N] [--workers N] [--verify-crc] [--no-wait] [--max-bytes N] FILE...\n"
                    "       gpufeed-cache ls DIR\n"
                    "       gpufeed-cache prune DIR [--max-bytes N]\n"
                    "  --feature options: hash=N seed=S fill=V null=fill|error valid cast=unsafe width=W ragged=error|pad|truncate lengths\n");
}

/* N with an optional K, M, G or T suffix (1024-based); -1 when malformed */
static long long parse_bytes(const char *s)
{
    char *e;
    long long v = strtoll(s, &e, 10), m = 1;
    if (e == s || v < 0) return -1;
    if (*e == 'K' || *e == 'k') m = 1ll << 10;
    else if (*e == 'M' || *e == 'm') m = 1ll << 20;
    else if (*e == 'G' || *e == 'g') m = 1ll << 30;
    else if (*e == 'T' || *e == 't') m = 1ll << 40;
    else if (*e) return -1;
    if (*e && e[1] && strcmp(e + 1, "iB") && strcmp(e + 1, "B")) return -1;
    if (v > (1ll << 62) / m) return -1;
    return v * m;
}

static void fmt_size(uint64_t b, char *out, size_t cap)
{
    if (b >= (1ull << 30)) snprintf(out, cap, "%.1f GiB", (double)b / (double)(1ull << 30));
    else if (b >= (1ull << 20)) snprintf(out, cap, "%.1f MiB", (double)b / (double)(1ull << 20));
    else if (b >= (1ull << 10)) snprintf(out, cap, "%.1f KiB", (double)b / 1024.0);
    else snprintf(out, cap, "%llu B", (unsigned long long)b);
}

static int cmd_ls(const char *dir)
{
    gpufeed_cache_entry *e;
    int64_t n, i;
    uint64_t total = 0;
    gpufeed_error err;
    if (gpufeed_cache_list(&e, &n, dir, &err)) { fprintf(stderr, "gpufeed-cache: %s\n", err.message); return 1; }
    for (i = 0; i < n; i++) {
        char size[32], when[64], state[320];
        const char *name = strrchr(e[i].path, '/');
        time_t t = (time_t)e[i].last_use;
        struct tm *tm = localtime(&t);
        name = name ? name + 1 : e[i].path;
        fmt_size(e[i].bytes, size, sizeof size);
        if (!tm || !strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", tm)) snprintf(when, sizeof when, "%lld", (long long)e[i].last_use);
        switch (e[i].state) {
        case GPUFEED_CACHE_ENTRY_READY: snprintf(state, sizeof state, "%s", e[i].in_use ? "ready, in use" : "ready"); break;
        case GPUFEED_CACHE_ENTRY_BUILDING:
            snprintf(state, sizeof state, "building (process %lld, %lld of %lld units)", (long long)e[i].pid, (long long)e[i].units_done, (long long)e[i].units);
            break;
        case GPUFEED_CACHE_ENTRY_ABANDONED: snprintf(state, sizeof state, "abandoned build (no process writes it; prune removes it)"); break;
        case GPUFEED_CACHE_ENTRY_INVALID: snprintf(state, sizeof state, "invalid: %s", e[i].reason); break;
        default: snprintf(state, sizeof state, "lock file of an older gpufeed%s", e[i].in_use ? ", held" : ""); break;
        }
        printf("%s  %s  %s  last use %s\n", name, state, size, when);
        if (e[i].state == GPUFEED_CACHE_ENTRY_READY || e[i].state == GPUFEED_CACHE_ENTRY_BUILDING) {
            if (e[i].state == GPUFEED_CACHE_ENTRY_READY) printf("  units:    %lld (%lld rows)\n", (long long)e[i].units, (long long)e[i].rows);
            printf("  dataset:  %s\n  features: %s\n  plan:     %s\n", e[i].dataset, e[i].features[0] ? e[i].features : "(default)", e[i].plan);
        }
        total += e[i].bytes;
    }
    {
        char size[32];
        fmt_size(total, size, sizeof size);
        printf("%lld file%s, %s in %s\n", (long long)n, n == 1 ? "" : "s", size, dir);
    }
    gpufeed_cache_list_free(e);
    return 0;
}

static int cmd_prune(const char *dir, long long max_bytes)
{
    gpufeed_cache_prune_info pi;
    gpufeed_error err;
    gpufeed_result r = gpufeed_cache_prune(&pi, dir, max_bytes > 0 ? (uint64_t)max_bytes : 0, &err);
    char a[32], b[32];
    fmt_size(pi.bytes_removed, a, sizeof a); fmt_size(pi.bytes_kept, b, sizeof b);
    if (r && r != GPUFEED_ERR_LIMIT) { fprintf(stderr, "gpufeed-cache: %s\n", err.message); return 1; }
    printf("removed %lld file%s (%s), kept %s; %lld in use left alone\n", (long long)pi.removed, pi.removed == 1 ? "" : "s", a, b, (long long)pi.skipped_in_use);
    if (r) { fprintf(stderr, "gpufeed-cache: %s\n", err.message); return 1; }
    return 0;
}

static const char **g_files;
static void free_files(void) { free((void *)g_files); g_files = NULL; }

int main(int argc, char **argv)
{
    const char *cmd, *dir = NULL, *columns = NULL;
    const char **files;
    int nfiles = 0, i, rc = 0, workers = 2, verify_crc = 0, no_wait = 0, have_dtype = 0;
    long long unit_rows = 0, max_bytes = 0;
    gpufeed_dtype dt = GPUFEED_DT_F32;
    gpufeed_dataset_desc dd;
    gpufeed_dataset *ds = NULL;
    gpufeed_cache_desc cd;
    gpufeed_error err;
    gf_cli_features fs;
    char msg[256];
    memset(&fs, 0, sizeof fs);
    if (argc < 2) { usage(); return 2; }
    cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) { usage(); return 0; }
    if (strcmp(cmd, "build") && strcmp(cmd, "verify") && strcmp(cmd, "info") && strcmp(cmd, "rm") && strcmp(cmd, "ls") && strcmp(cmd, "prune")) {
        fprintf(stderr, "gpufeed-cache: unknown command '%.100s'\n", cmd); usage(); return 2;
    }
    files = (const char **)calloc((size_t)argc, sizeof *files);
    g_files = files;
    atexit(free_files);
    if (!files) return 1;
    for (i = 2; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (!strcmp(a, "--cache") && has) dir = argv[++i];
        else if (!strcmp(a, "--feature") && has) {
            if (gf_cli_features_add(&fs, argv[++i], msg, sizeof msg)) { fprintf(stderr, "gpufeed-cache: --feature '%.200s': %s\n", argv[i], msg); gf_cli_features_free(&fs); return 2; }
        }
        else if (!strcmp(a, "--columns") && has) columns = argv[++i];
        else if (!strcmp(a, "--dtype") && has) { if (gpufeed_dtype_parse(argv[++i], &dt)) { fprintf(stderr, "gpufeed-cache: unknown dtype '%.100s'\n", argv[i]); gf_cli_features_free(&fs); return 2; } have_dtype = 1; }
        else if (!strcmp(a, "--unit-rows") && has) { unit_rows = atoll(argv[++i]); if (unit_rows <= 0) { fprintf(stderr, "gpufeed-cache: --unit-rows needs a positive integer\n"); gf_cli_features_free(&fs); return 2; } }
        else if (!strcmp(a, "--workers") && has) { workers = atoi(argv[++i]); if (workers <= 0) { fprintf(stderr, "gpufeed-cache: --workers needs a positive integer\n"); gf_cli_features_free(&fs); return 2; } }
        else if (!strcmp(a, "--max-bytes") && has) {
            max_bytes = parse_bytes(argv[++i]);
            if (max_bytes <= 0) { fprintf(stderr, "gpufeed-cache: --max-bytes needs a positive size (bytes, or with K, M, G, T), got '%.100s'\n", argv[i]); gf_cli_features_free(&fs); return 2; }
        }
        else if (!strcmp(a, "--verify-crc")) verify_crc = 1;
        else if (!strcmp(a, "--no-wait")) no_wait = 1;
        else if (a[0] == '-') {
            fprintf(stderr, "gpufeed-cache: unknown option '%.100s'%s\n", a,
                    !strcmp(a, "--hash") ? " (hash a column with --feature COLUMN:i32:hash=N)" : "");
            usage(); gf_cli_features_free(&fs); return 2;
        }
        else files[nfiles++] = a;
    }
    if (!strcmp(cmd, "ls") || !strcmp(cmd, "prune")) {
        if (!dir && nfiles == 1) dir = files[0];
        else if (nfiles) { usage(); gf_cli_features_free(&fs); return 2; }
        if (!dir) { usage(); gf_cli_features_free(&fs); return 2; }
        gf_cli_features_free(&fs);
        return !strcmp(cmd, "ls") ? cmd_ls(dir) : cmd_prune(dir, max_bytes);
    }
    if (!dir || !nfiles) { usage(); gf_cli_features_free(&fs); return 2; }
    if (fs.n && (columns || have_dtype)) {
        fprintf(stderr, "gpufeed-cache: --feature gives each feature its dtype: not with --columns or --dtype\n");
        gf_cli_features_free(&fs); return 2;
    }
    if (columns && gf_cli_features_columns(&fs, columns, dt, msg, sizeof msg)) { fprintf(stderr, "gpufeed-cache: %s\n", msg); gf_cli_features_free(&fs); return 2; }
    memset(&dd, 0, sizeof dd);
    memset(&cd, 0, sizeof cd);
    cd.dir = dir;
    cd.no_wait = no_wait;
    cd.dir_max_bytes = (uint64_t)max_bytes;
    cd.log = logline;
    dd.paths = files; dd.num_paths = nfiles; dd.features = fs.n ? fs.f : NULL; dd.num_features = fs.n; dd.unit_rows = unit_rows;
    if (verify_crc) dd.flags |= GPUFEED_OPEN_VERIFY_CRC;
    if (gpufeed_dataset_open(&ds, &dd, &err)) { fprintf(stderr, "gpufeed-cache: %s\n", err.message); rc = 1; goto done; }
    if (!fs.n && dt != GPUFEED_DT_F32) { /* the default columns, with --dtype */
        gpufeed_dataset_info info;
        int32_t k;
        gpufeed_dataset_get_info(ds, &info);
        for (k = 0; k < info.num_features; k++) {
            const char *col = gpufeed_dataset_feature(ds, k)->column;
            gpufeed_feature f;
            char *name = (char *)malloc(strlen(col) + 1);
            if (!name) { rc = 1; goto done; }
            strcpy(name, col);
            memset(&f, 0, sizeof f);
            f.column = name; f.dtype = dt;
            if (gf_cli_features_push(&fs, &f, name)) { free(name); rc = 1; goto done; }
        }
        gpufeed_dataset_close(ds); ds = NULL;
        dd.features = fs.f; dd.num_features = fs.n;
        if (gpufeed_dataset_open(&ds, &dd, &err)) { fprintf(stderr, "gpufeed-cache: %s\n", err.message); rc = 1; goto done; }
    }
    if (!strcmp(cmd, "build")) {
        prog p;
        gpufeed_cache_info info;
        int64_t bad = 0;
        p.t0 = now_s(); p.last = 0; p.tty = isatty(2);
        if (gpufeed_cache_build(ds, &cd, workers, progress, &p, &err)) { fprintf(stderr, "gpufeed-cache: %s\n", err.message); rc = 1; goto done; }
        if (gpufeed_cache_verify(ds, &cd, &bad, &err)) { fprintf(stderr, "gpufeed-cache: built, but verify failed: %s\n", err.message); rc = 1; goto done; }
        gpufeed_cache_info_get(ds, &cd, &info, &err);
        printf("built %s: %llu bytes, %lld units, %lld rows, %.2f s; verified\n", info.path, (unsigned long long)info.bytes, (long long)info.units, (long long)info.rows, now_s() - p.t0);
    } else if (!strcmp(cmd, "verify")) {
        int64_t bad = 0;
        gpufeed_result r = gpufeed_cache_verify(ds, &cd, &bad, &err);
        if (r) { fprintf(stderr, "gpufeed-cache: verify failed: %s\n", err.message); rc = 1; goto done; }
        printf("ok: every unit matches its checksum\n");
    } else if (!strcmp(cmd, "info")) {
        gpufeed_cache_info info;
        if (gpufeed_cache_info_get(ds, &cd, &info, &err)) { fprintf(stderr, "gpufeed-cache: %s\n", err.message); rc = 1; goto done; }
        printf("path:   %s\nkey:    %s\nexists: %s\nvalid:  %s%s%s%s\nbytes:  %llu\nunits:  %lld\nrows:   %lld\n", info.path, info.key,
               info.exists ? "yes" : "no", info.valid ? "yes" : "no", info.valid ? "" : " (", info.valid ? "" : info.reason, info.valid ? "" : ")",
               (unsigned long long)info.bytes, (long long)info.units, (long long)info.rows);
        if (!info.valid) rc = 1;
    } else {
        if (gpufeed_cache_remove(ds, &cd, &err)) { fprintf(stderr, "gpufeed-cache: %s\n", err.message); rc = 1; goto done; }
        printf("removed\n");
    }
done:
    gpufeed_dataset_close(ds);
    gf_cli_features_free(&fs);
    return rc;
}
