/* gpufeed-cache: build, verify, inspect or remove the tensor cache of a
   dataset ahead of time.

   Build:  cc -O2 -I. tools/gpufeed-cache.c -o gpufeed-cache -lpthread -lm
   Usage:  gpufeed-cache build|verify|info|rm --cache DIR [--columns a,b]
                         [--dtype f32|...] [--unit-rows N] [--workers N] FILE|DIR|GLOB...

   The cache is the one a loader with the same files, columns, dtype and
   unit rows uses (its name is a key over all of them). `build` shows a
   progress bar on a terminal (rows, MB/s, ETA) and plain lines otherwise;
   `verify` checks every unit's checksum and exits 1 on any bad unit. */
#define GPUFEED_IMPLEMENTATION
#include "../gpufeed.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static void usage(void)
{
    fprintf(stderr, "usage: gpufeed-cache build|verify|info|rm --cache DIR [--columns a,b] [--dtype T] [--unit-rows N] [--workers N] FILE...\n");
}

static const char **g_files;
static void free_files(void) { free((void *)g_files); g_files = NULL; }

int main(int argc, char **argv)
{
    const char *cmd, *dir = NULL, *columns = NULL;
    const char **files;
    int nfiles = 0, i, rc = 0, workers = 2;
    long long unit_rows = 0;
    gpufeed_dtype dt = GPUFEED_DT_F32;
    gpufeed_dataset_desc dd;
    gpufeed_dataset *ds = NULL;
    gpufeed_cache_desc cd;
    gpufeed_error err;
    gpufeed_feature *feats = NULL;
    char **names = NULL;
    int nfeat = 0;
    if (argc < 2) { usage(); return 2; }
    cmd = argv[1];
    if (strcmp(cmd, "build") && strcmp(cmd, "verify") && strcmp(cmd, "info") && strcmp(cmd, "rm")) { usage(); return 2; }
    files = (const char **)calloc((size_t)argc, sizeof *files);
    g_files = files;
    atexit(free_files);
    if (!files) return 1;
    for (i = 2; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (!strcmp(a, "--cache") && has) dir = argv[++i];
        else if (!strcmp(a, "--columns") && has) columns = argv[++i];
        else if (!strcmp(a, "--dtype") && has) { if (gpufeed_dtype_parse(argv[++i], &dt)) { fprintf(stderr, "gpufeed-cache: unknown dtype '%.100s'\n", argv[i]); return 2; } }
        else if (!strcmp(a, "--unit-rows") && has) { unit_rows = atoll(argv[++i]); if (unit_rows <= 0) { fprintf(stderr, "gpufeed-cache: --unit-rows needs a positive integer\n"); return 2; } }
        else if (!strcmp(a, "--workers") && has) { workers = atoi(argv[++i]); if (workers <= 0) { fprintf(stderr, "gpufeed-cache: --workers needs a positive integer\n"); return 2; } }
        else if (a[0] == '-') { fprintf(stderr, "gpufeed-cache: unknown option '%.100s'\n", a); usage(); return 2; }
        else files[nfiles++] = a;
    }
    if (!dir || !nfiles) { usage(); return 2; }
    memset(&dd, 0, sizeof dd);
    memset(&cd, 0, sizeof cd);
    cd.dir = dir;
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
            feats[nfeat].column = names[nfeat]; feats[nfeat].dtype = dt;
            nfeat++;
            p += len; if (*p == ',') p++;
        }
    }
    dd.paths = files; dd.num_paths = nfiles; dd.features = feats; dd.num_features = nfeat; dd.unit_rows = unit_rows;
    if (gpufeed_dataset_open(&ds, &dd, &err)) { fprintf(stderr, "gpufeed-cache: %s\n", err.message); rc = 1; goto done; }
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
        if (gpufeed_dataset_open(&ds, &dd, &err)) { fprintf(stderr, "gpufeed-cache: %s\n", err.message); rc = 1; goto done; }
    }
    if (!strcmp(cmd, "build")) {
        prog p;
        gpufeed_cache_info info;
        p.t0 = now_s(); p.last = 0; p.tty = isatty(2);
        if (gpufeed_cache_build(ds, &cd, workers, progress, &p, &err)) { fprintf(stderr, "gpufeed-cache: %s\n", err.message); rc = 1; goto done; }
        gpufeed_cache_info_get(ds, &cd, &info, &err);
        printf("built %s: %llu bytes, %lld units, %lld rows, %.2f s\n", info.path, (unsigned long long)info.bytes, (long long)info.units, (long long)info.rows, now_s() - p.t0);
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
    if (names) for (i = 0; i < nfeat; i++) free(names[i]);
    free(names); free(feats);
    return rc;
}
