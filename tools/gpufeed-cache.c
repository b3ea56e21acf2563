/* gpufeed-cache: build, verify, inspect or remove the tensor cache of a
   dataset ahead of time, and keep a cache directory tidy.

   Build:  cc -O2 -I. tools/gpufeed-cache.c -o gpufeed-cache -lpthread -lm
   Usage:  gpufeed-cache build|verify|info|rm --cache DIR FEATURES [options]
                         FILE|DIR|GLOB...
           gpufeed-cache ls DIR
           gpufeed-cache prune DIR [--max-bytes N]
           (gpufeed-cache --help: a line per flag; the table in main() is
           where flags are declared, tools/gf_cli.h how)

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
   bar on a terminal (rows, MB/s, ETA) and one final line on stderr in any
   case (units, rows, MB/s, seconds, peak RSS); when a loader or another build is
   writing the same cache it waits for it (a line every 2 s; --no-wait:
   exit 1 at once), then verifies every
   unit and exits 0. --max-bytes N (K, M, G, T suffixes: 1024-based) is the
   directory's budget: least recently used caches no process uses are
   removed to make room. `verify` checks every unit's checksum and exits 1
   on any bad unit. --verify-crc checks page CRCs while decoding; --pread
   reads the files with pread instead of mapping them.

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

/* the build's progress: a live bar on a terminal, one final line in any case */
typedef struct prog {
    gf_cli_progress pg;
    int64_t done, total;
    uint64_t rows, bytes;
    int calls;
} prog;

static prog g_prog;

static void progress(void *user, int64_t done, int64_t total, uint64_t rows, uint64_t bytes)
{
    prog *p = (prog *)user;
    p->done = done;
    p->total = total;
    if (rows || !p->calls) { p->rows = rows; p->bytes = bytes; }
    p->calls++;
    if (gf_cli_progress_due(&p->pg)) {
        double el = gf_cli_now() - p->pg.t0, frac = total ? (double)done / (double)total : 1;
        double rate = el > 0 ? (double)bytes / el / 1e6 : 0, eta = frac > 0 ? el / frac - el : 0;
        char bar[31];
        int k, fill = (int)(frac * 30);
        for (k = 0; k < 30; k++) bar[k] = k < fill ? '#' : '.';
        bar[30] = 0;
        gf_cli_progress_line(&p->pg, "[%s] %3.0f%%  %llu rows  %.1f MB/s  ETA %.0fs", bar, 100 * frac, (unsigned long long)rows, rate, eta);
    }
}

static gf_cli g_cli;

/* the library's warnings and "waiting for" lines, in flag words, below the live line */
static void logline(void *user, const char *msg)
{
    (void)user;
    gf_cli_progress_done(&g_prog.pg);
    gf_cli_error(&g_cli, msg);
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
    if (gpufeed_cache_list(&e, &n, dir, &err)) { gf_cli_error(&g_cli, err.message); return 1; }
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
    if (r && r != GPUFEED_ERR_LIMIT) { gf_cli_error(&g_cli, err.message); return 1; }
    printf("removed %lld file%s (%s), kept %s; %lld in use left alone\n", (long long)pi.removed, pi.removed == 1 ? "" : "s", a, b, (long long)pi.skipped_in_use);
    if (r) { gf_cli_error(&g_cli, err.message); return 1; }
    return 0;
}

/* build, verify, info or rm for one dataset (a mixture: each source's) */
static int data_cmd_one(gf_cli *cli, const char *cmd, gpufeed_dataset_desc *dd, gpufeed_cache_desc *cd, gf_cli_features *fs, gpufeed_dtype dt,
                        int32_t workers)
{
    gpufeed_dataset *ds = NULL;
    gpufeed_error err;
    int rc = 0;
    if (gpufeed_dataset_open(&ds, dd, &err)) { gf_cli_error(cli, err.message); rc = 1; goto done; }
    if (!fs->n && dt != GPUFEED_DT_F32) { /* the default columns, with --dtype */
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
            if (gf_cli_features_push(fs, &f, name)) { free(name); rc = 1; goto done; }
        }
        gpufeed_dataset_close(ds); ds = NULL;
        dd->features = fs->f; dd->num_features = fs->n;
        if (gpufeed_dataset_open(&ds, dd, &err)) { gf_cli_error(cli, err.message); rc = 1; goto done; }
    }
    if (!strcmp(cmd, "build")) {
        prog *p = &g_prog;
        gpufeed_cache_info info;
        int64_t bad = 0;
        double el;
        gpufeed_result r;
        gf_cli_progress_start(&p->pg);
        r = gpufeed_cache_build(ds, cd, workers, progress, p, &err);
        gf_cli_progress_done(&p->pg);
        if (r) { gf_cli_error(cli, err.message); rc = 1; goto done; }
        el = gf_cli_now() - p->pg.t0;
        if (p->calls && !p->rows && p->done == p->total)
            fprintf(stderr, "units %lld/%lld: already built\n", (long long)p->done, (long long)p->total);
        else
            fprintf(stderr, "units %lld/%lld, rows %llu, %.1f MB/s, %.2f s, peak RSS %.1f MiB\n", (long long)p->done, (long long)p->total,
                    (unsigned long long)p->rows, el > 0 ? (double)p->bytes / el / 1e6 : 0.0, el, gf_cli_peak_rss_mib());
        if (gpufeed_cache_verify(ds, cd, &bad, &err)) { fprintf(stderr, "gpufeed-cache: built, but verify failed: %s\n", err.message); rc = 1; goto done; }
        gpufeed_cache_get_info(ds, cd, &info, &err);
        printf("built %s: %llu bytes, %lld units, %lld rows, %.2f s; verified\n", info.path, (unsigned long long)info.bytes, (long long)info.units, (long long)info.rows, gf_cli_now() - p->pg.t0);
    } else if (!strcmp(cmd, "verify")) {
        int64_t bad = 0;
        gpufeed_result r = gpufeed_cache_verify(ds, cd, &bad, &err);
        if (r) { fprintf(stderr, "gpufeed-cache: verify failed: %s\n", err.message); rc = 1; goto done; }
        printf("ok: every unit matches its checksum\n");
    } else if (!strcmp(cmd, "info")) {
        gpufeed_cache_info info;
        if (gpufeed_cache_get_info(ds, cd, &info, &err)) { gf_cli_error(cli, err.message); rc = 1; goto done; }
        printf("path:   %s\nkey:    %s\nexists: %s\nvalid:  %s%s%s%s\nbytes:  %llu\nunits:  %lld\nrows:   %lld\n", info.path, info.key,
               info.exists ? "yes" : "no", info.valid ? "yes" : "no", info.valid ? "" : " (", info.valid ? "" : info.reason, info.valid ? "" : ")",
               (unsigned long long)info.bytes, (long long)info.units, (long long)info.rows);
        if (!info.valid) rc = 1;
    } else {
        if (gpufeed_cache_remove(ds, cd, &err)) { gf_cli_error(cli, err.message); rc = 1; goto done; }
        printf("removed\n");
    }
done:
    gpufeed_dataset_close(ds);
    return rc;
}

static const char **g_files;
static void free_files(void) { free((void *)g_files); g_files = NULL; }

/* manifest S3PREFIX...: the manifest beside the data of each prefix */
static int cmd_manifest(gf_cli *cli, const char **paths, int n)
{
    gpufeed_remote_stats st;
    gpufeed_error err;
    int i;
    for (i = 0; i < cli->nopts; i++)
        if (cli->opts[i].seen) {
            fprintf(stderr, "gpufeed-cache: %s does not apply to manifest\n", cli->opts[i].name);
            return 2;
        }
    if (n < 1) {
        fprintf(stderr, "gpufeed-cache: manifest takes one or more s3://BUCKET/PREFIX/\n");
        return 2;
    }
    for (i = 0; i < n; i++) {
        double t0 = gf_cli_now();
        if (gpufeed_remote_manifest_write(paths[i], &st, &err)) {
            gf_cli_error(cli, err.message);
            return 1;
        }
        printf("%s (%.2f s: %llu requests, %llu listing pages, %llu GETs of footers)\n", st.manifest, gf_cli_now() - t0, (unsigned long long)st.requests,
               (unsigned long long)st.list_pages, (unsigned long long)st.open_gets);
    }
    return 0;
}

static const char *const cache_hints[] = {
    "--hash", "hash a column with --feature COLUMN:i32:hash=N",
    "--batch", "the cache does not depend on the batch size: leave it out",
    NULL
};

int main(int argc, char **argv)
{
    const char *cmd = NULL, *dir = NULL, *mdir = NULL, *columns = NULL, *where = NULL;
    gpufeed_where *wh = NULL;
    const char **files;
    int nfiles = 0, i, rc = 0, data_cmd = 0;
    int32_t workers = 2, verify_crc = 0, no_wait = 0, use_pread = 0;
    int64_t unit_rows = 0, unit_bytes = 0, max_bytes = 0;
    gpufeed_dtype dt = GPUFEED_DT_F32;
    gpufeed_dataset_desc dd;
    gpufeed_cache_desc cd;
    gpufeed_error err;
    gf_cli_features fs;
    gf_cli_mix mixl;
    char msg[256];
    gf_cli_opt opts[] = {
        { .name = "--cache", .kind = GF_CLI_STR, .target = &dir, .meta = "DIR", .help = "the cache directory (build, verify, info, rm)" },
        { .name = "--manifest-dir", .kind = GF_CLI_STR, .target = &mdir, .meta = "DIR",
          .help = "s3:// paths: the directory of the manifests of the objects' footers\n(default: the --cache directory)" },
        { .name = "--feature", .kind = GF_CLI_FEATURE, .target = &fs, .meta = "COL:DTYPE[:OPT...]",
          .help = "one feature each, in the loader's order; options hash=N, seed=S, fill=V,\n"
                  "null=fill|error, valid, cast=unsafe, width=W, ragged=error|pad|truncate, lengths,\nunit=s|ms|us|ns, missing=null" },
        { .name = "--columns", .kind = GF_CLI_STR, .target = &columns, .meta = "a,b",
          .help = "these columns, all as --dtype (instead of --feature)" },
        { .name = "--mix", .kind = GF_CLI_CALL, .target = &mixl, .call = gf_cli_mix_add, .meta = "PATH=WEIGHT",
          .help = "a mixture's sources (instead of PATHs, as gpufeed-bench takes them): each source's\n"
                  "cache, the one a mixture's loader uses (the weights do not change it)" },
        { .name = "--dtype", .kind = GF_CLI_DTYPE, .target = &dt, .meta = "T", .help = "f32 (default), f64, f16, bf16, i32, i64 or u8, or the numpy name (float32 ...)" },
        { .name = "--where", .kind = GF_CLI_STR, .target = &where, .meta = "EXPR",
          .help = "the rows the loader keeps: 'col >= 4 and name in (\"a\", \"b\")' (a cache is\nper expression, as the loader's)" },
        { .name = "--unit-rows", .kind = GF_CLI_I64, .target = &unit_rows, .meta = "N", .min = 1,
          .help = "rows per unit of work: the loader's (default 65536)" },
        { .name = "--unit-bytes", .kind = GF_CLI_SIZE, .target = &unit_bytes, .meta = "BYTES", .min = -1,
          .help = "dense bytes per unit at most (default 16M, 4M of packed tokens): a wider table's row groups are cut\ninto units this size, decoded in order, each worker its share of the columns; -1: no bound" },
        { .name = "--workers", .kind = GF_CLI_INT, .target = &workers, .meta = "N", .min = 1, .max = GPUFEED_MAX_WORKERS,
          .flags = GF_CLI_THREADS, .help = "build: decode threads (default 2)" },
        { .name = "--verify-crc", .kind = GF_CLI_FLAG, .target = &verify_crc, .help = "check page CRCs while decoding" },
        { .name = "--pread", .kind = GF_CLI_FLAG, .target = &use_pread,
          .help = "build: positioned reads instead of mapping the files (a file cut short while it\nis read is then an error, never a signal)" },
        { .name = "--no-wait", .kind = GF_CLI_FLAG, .target = &no_wait,
          .help = "build: exit 1 at once when another process builds the same cache" },
        { .name = "--max-bytes", .kind = GF_CLI_SIZE, .target = &max_bytes, .meta = "N", .min = 1,
          .help = "build, prune: the directory's budget (K, M, G, T suffixes, 1024-based);\n"
                  "least recently used caches no process uses are removed to make room" },
    };
    gf_cli *cli = &g_cli;

    memset(&fs, 0, sizeof fs);
    memset(&mixl, 0, sizeof mixl);
    cli->prog = "gpufeed-cache";
    cli->usage = "build|verify|info|rm --cache DIR [options] PATH...\n"
                 "       gpufeed-cache ls DIR\n"
                 "       gpufeed-cache prune DIR [--max-bytes N]\n"
                 "       gpufeed-cache manifest s3://BUCKET/PREFIX/...";
    cli->about = "Build, verify, inspect or remove the tensor cache of a dataset ahead of time; keep a cache directory tidy.";
    cli->head = "commands:\n"
                "  build                   decode every unit into the cache (waits for a build in progress),\n"
                "                          then verify it; a progress line on a terminal\n"
                "  verify                  check every unit's checksum (exit 1 on a bad one)\n"
                "  info                    path, key, whether it exists and is valid, bytes, units, rows\n"
                "  rm                      remove the dataset's cache\n"
                "  ls DIR                  the cache files, least recently used first\n"
                "  manifest S3PREFIX/      write PREFIX_gpufeed_manifest beside the data: every *.parquet\n"
                "                          object's footer, so every rank opens the prefix with one GET\n"
                "  prune DIR               remove what no process uses (dead builds, unreadable files,\n"
                "                          superseded caches); with --max-bytes, down to the budget\n";
    cli->tail = "The cache is the one a loader with the same files, features and --unit-rows uses.\n"
                "Without --feature or --columns: every numeric and boolean column as --dtype.\n"
                "Exit status: 0; 1 when the data or the cache cannot be read or written; 2 on a usage error.\n";
    cli->opts = opts;
    cli->nopts = GF_CLI_COUNT(opts);
    cli->min_pos = -1;
    cli->hints = cache_hints;
    cli->words = NULL;
    if (argc > 1 && argv[1][0] != '-') {
        static const char *const cmds[] = { "build", "verify", "info", "rm", "ls", "prune", "manifest" };
        cmd = argv[1];
        for (i = 0; i < 7 && strcmp(cmd, cmds[i]); i++) {}
        if (i == 7) { fprintf(stderr, "gpufeed-cache: unknown command '%.100s' (build, verify, info, rm, ls, prune, manifest)\n", cmd); return 2; }
        data_cmd = i < 4;
        if (data_cmd) gf_cli_find(cli, "--cache")->flags |= GF_CLI_REQUIRED;
    }
    rc = gf_cli_parse(cli, argc, argv, cmd ? 2 : 1);
    if (rc != GF_CLI_RUN) { gf_cli_features_free(&fs); gf_cli_free(cli); return rc; }
    rc = 0;
    files = cli->pos;
    nfiles = cli->npos;
    cli->pos = NULL;
    g_files = files;
    atexit(free_files);
    if (!cmd) { fprintf(stderr, "gpufeed-cache: no command given (build, verify, info, rm, ls, prune, manifest; gpufeed-cache --help shows the usage)\n"); gf_cli_features_free(&fs); return 2; }
    if (!strcmp(cmd, "manifest")) {
        gf_cli_features_free(&fs);
        return cmd_manifest(cli, files, nfiles);
    }
    if (!data_cmd) {
        for (i = 0; i < cli->nopts; i++) {
            const char *n = opts[i].name;
            if (opts[i].seen && strcmp(n, "--cache") && !(!strcmp(cmd, "prune") && !strcmp(n, "--max-bytes"))) {
                fprintf(stderr, "gpufeed-cache: %s does not apply to %s\n", n, cmd);
                gf_cli_features_free(&fs); return 2;
            }
        }
        if ((dir != NULL) + nfiles != 1) {
            fprintf(stderr, "gpufeed-cache: %s takes one DIR, %s\n", cmd, (dir != NULL) + nfiles ? "got more" : "got none");
            gf_cli_features_free(&fs); return 2;
        }
        if (!dir) dir = files[0];
        gf_cli_features_free(&fs);
        return !strcmp(cmd, "ls") ? cmd_ls(dir) : cmd_prune(dir, max_bytes);
    }
    if ((nfiles == 0) == (mixl.n == 0)) {
        fprintf(stderr, "gpufeed-cache: %s\n", nfiles ? "--mix names the sources: give no PATH with it" : "no PATH given (gpufeed-cache --help shows the usage)");
        gf_cli_features_free(&fs); gf_cli_mix_free(&mixl); return 2;
    }
    if (fs.n && (columns || gf_cli_seen(cli, "--dtype"))) {
        fprintf(stderr, "gpufeed-cache: --feature gives each feature its dtype: not with --columns or --dtype\n");
        gf_cli_features_free(&fs); return 2;
    }
    if (columns && gf_cli_features_columns(&fs, columns, dt, msg, sizeof msg)) { fprintf(stderr, "gpufeed-cache: %s\n", msg); gf_cli_features_free(&fs); return 2; }
    memset(&dd, 0, sizeof dd);
    memset(&cd, 0, sizeof cd);
    cd.dir = dir;
    dd.manifest_dir = mdir ? mdir : dir; /* s3:// footers kept beside the cache */
    cd.no_wait = no_wait;
    cd.dir_max_bytes = (uint64_t)max_bytes;
    cd.log = logline;
    dd.paths = files; dd.num_paths = nfiles; dd.features = fs.n ? fs.f : NULL; dd.num_features = fs.n; dd.unit_rows = unit_rows; dd.unit_bytes = unit_bytes;
    if (verify_crc) dd.flags |= GPUFEED_OPEN_VERIFY_CRC;
    if (use_pread) dd.flags |= GPUFEED_OPEN_PREAD;
    if (where && gpufeed_where_parse(&wh, where, &err)) {
        fprintf(stderr, "gpufeed-cache: --%s\n", err.message);
        gf_cli_features_free(&fs);
        return 2;
    }
    dd.where = gpufeed_where_predicates(wh, &dd.num_where);
    if (mixl.n) { /* each source's cache: a mixture's loader uses one a source */
        for (i = 0; i < mixl.n; i++) {
            int r;
            dd.paths = &mixl.paths[i]; dd.num_paths = 1;
            fprintf(stderr, "source %d: %s (weight %g)\n", i, mixl.paths[i], mixl.weights[i]);
            r = data_cmd_one(cli, cmd, &dd, &cd, &fs, dt, workers);
            if (r) rc = r;
        }
    } else rc = data_cmd_one(cli, cmd, &dd, &cd, &fs, dt, workers);
    gpufeed_where_free(wh);
    gf_cli_features_free(&fs);
    gf_cli_mix_free(&mixl);
    return rc;
}
