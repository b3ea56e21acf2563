/* gpufeed-dense: Parquet files -> one dense row-major matrix, through gpufeed.h.

   Build:  cc -O2 -I. tools/gpufeed-dense.c -o gpufeed-dense -lpthread -lm
   Usage:  gpufeed-dense [options] -o OUT.bin FILE|DIR|GLOB...
           (gpufeed-dense --help: a line per flag; the table in main() is
           where flags are declared, tools/gf_cli.h how)

   Writes the matrix little-endian, rows x features, no header, to OUT.bin
   (-o -: to stdout), and prints rows, features, bytes read, seconds and
   GB/s on stderr (on a terminal, a progress line before them). Without
   --columns: every numeric and boolean leaf column of the first file, in
   schema order. --hash N hashes STRING/BINARY columns into N buckets.
   --where: conditions joined by `and`: `col < 3`, `<=`, `==` (or `=`),
   `>=`, `>`, `col between 1 and 5`, `col in (1, 2, 3)`, `col is null`,
   `col is not null`; strings in quotes ('a' or "a").
   List columns (a leaf with one repeated level: list<T>, a map's keys or
   values, e.g. --columns emb.list.element) need --list-width W: the
   feature fills W consecutive output columns. --ragged says what a list of
   another length does: error (default: exit 1 naming file, row group,
   column, row and length), pad (shorter lists padded with --fill, longer
   ones an error) or truncate (pad, and cut longer ones to W). A null list is
   W fills (--null-error: an error), and so is a null element's slot.
   --lengths a,b appends one column per named list column: the list's
   length (before padding or cutting; a null list gives --fill). Lists need
   --columns; predicates on list columns are refused.
   --feature gives one feature (output column) each, in order, in the
   syntax of every gpufeed tool (tools/gf_cli.h): COLUMN:DTYPE and options
   hash=N, seed=S, fill=V, null=fill|error, valid, cast=unsafe, width=W,
   ragged=error|pad|truncate, lengths; it replaces --columns, --dtype,
   --hash, --fill, --null-error, --unsafe-cast, --list-width, --ragged and
   --lengths. A feature with `valid` writes its validity mask too: all such
   masks go to --valid-out PATH (default OUT.bin.valid) as a uint8 matrix,
   rows x those features in order, 1 a value and 0 a null (its fill in
   OUT.bin). --verify-crc checks page CRCs where the file has them.
   --threads N splits the columns between N threads (the same bytes as one
   thread). */
#define _POSIX_C_SOURCE 200809L
#define GPUFEED_IMPLEMENTATION
#include "../gpufeed.h"
#include "gf_cli.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>
#include <time.h>
#include <errno.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* the library's C words, in this tool's flags */
static const gf_cli_words dense_words[] = {
    { "set hash_buckets to hash its values", "give --hash N (or --feature COLUMN:i32:hash=N) to hash its values" },
    { "set the feature's width", "give --list-width W (or --feature COLUMN:DTYPE:width=W)" },
    { "workers must be", "--threads must be" },
    { NULL, NULL }
};
static const gf_cli_words dense_feature_words[] = { /* with --feature (the shared words say hash=N, width=W) */
    { "workers must be", "--threads must be" },
    { NULL, NULL }
};

/* The features with `valid` (their indexes into *vfeat, *nvalid of them)
   and the file their masks go to: validp, or OUT.bin.valid (-o -: a usage
   error without --valid-out). 0, 1 on a write error, 2 on a usage error. */
static int valid_open(const gpufeed_dataset_info *info, const gpufeed_dataset *ds, const char *outp, const char *validp,
                      int32_t **vfeat, int32_t *nvalid, char **path, FILE **vout)
{
    int32_t k;
    *vfeat = (int32_t *)malloc((size_t)(info->num_features ? info->num_features : 1) * sizeof(int32_t));
    if (!*vfeat) return 1;
    for (k = 0; k < info->num_features; k++)
        if (gpufeed_dataset_feature(ds, k)->validity) (*vfeat)[(*nvalid)++] = k;
    if (!*nvalid) {
        if (!validp) return 0;
        fprintf(stderr, "gpufeed-dense: --valid-out: no feature has the `valid` option (--feature COL:DTYPE:valid)\n");
        return 2;
    }
    if (!validp && !strcmp(outp, "-")) {
        fprintf(stderr, "gpufeed-dense: features with `valid` write their masks to a file: give --valid-out PATH (-o - is stdout)\n");
        return 2;
    }
    *path = (char *)malloc(strlen(validp ? validp : outp) + 7);
    if (!*path) return 1;
    strcpy(*path, validp ? validp : outp);
    if (!validp) strcat(*path, ".valid");
    *vout = strcmp(*path, "-") ? fopen(*path, "wb") : stdout;
    if (!*vout) { fprintf(stderr, "gpufeed-dense: cannot write '%.100s': %s\n", *path, strerror(errno)); return 1; }
    return 0;
}

/* a batch's masks as rows of nvalid bytes (row buffer rb) into vout */
static int valid_write(const gpufeed_batch *b, const int32_t *vfeat, int32_t nvalid, uint8_t *rb, FILE *vout)
{
    int64_t r;
    int32_t k;
    for (r = 0; r < b->num_rows; r++)
        for (k = 0; k < nvalid; k++) rb[r * nvalid + k] = b->valid[vfeat[k]] ? b->valid[vfeat[k]][r] : 1;
    return fwrite(rb, (size_t)nvalid, (size_t)b->num_rows, vout) != (size_t)b->num_rows;
}

static const char **g_files;
static void free_files(void) { free((void *)g_files); g_files = NULL; }

int main(int argc, char **argv)
{
    const char *columns = NULL, *outp = NULL, *where = NULL, *lengths = NULL, *validp = NULL;
    char *valid_path = NULL;
    int32_t *vfeat = NULL, nvalid = 0;
    uint8_t *vrow = NULL;
    FILE *vout = NULL;
    int64_t list_width = 0;
    int32_t ragged = GPUFEED_LIST_ERROR;
    const char **files = NULL;
    int nfiles = 0, i, rc = 0, legacy = 0;
    int32_t null_error = 0, unsafe_cast = 0, threads = 1;
    gf_cli_features fs;
    double fill = 0;
    int64_t batch = 4096, unit_rows = 0, unit_bytes = 0, hash = 0;
    gpufeed_dtype dt = GPUFEED_DT_F32;
    gpufeed_feature *feats = NULL;
    int nfeat = 0;
    const gpufeed_predicate *preds = NULL;
    gpufeed_where *wh = NULL;
    int32_t npred = 0;
    gpufeed_dataset_desc dd;
    gpufeed_dataset *ds = NULL;
    gpufeed_reader *rd = NULL;
    gpufeed_reader_desc rdd;
    gpufeed_loader *lo = NULL;
    gpufeed_error err;
    gpufeed_dataset_info info;
    FILE *out = NULL;
    double t0, t1;
    long long rows = 0;
    uint32_t open_flags = 0;
    const char *manifest_dir = NULL;
    gf_cli_progress pg;
    gf_cli_opt opts[] = {
        { .name = "-o", .kind = GF_CLI_STR, .target = &outp, .meta = "OUT.bin", .flags = GF_CLI_REQUIRED,
          .help = "the output file; - writes to stdout (not a terminal)" },
        { .name = "--feature", .kind = GF_CLI_FEATURE, .target = &fs, .meta = "COL:DTYPE[:OPT...]",
          .help = "one feature (output column) each, in order; options hash=N, seed=S,\n"
                  "fill=V, null=fill|error, valid (its mask into --valid-out), cast=unsafe, width=W,\n"
                  "ragged=error|pad|truncate, lengths; replaces the nine flags from --columns to --lengths" },
        { .name = "--valid-out", .kind = GF_CLI_STR, .target = &validp, .meta = "PATH",
          .help = "where the validity masks of the features with `valid` go (default OUT.bin.valid):\n"
                  "a uint8 matrix, rows x those features in order, 1 a value, 0 a null (its fill in OUT)" },
        { .name = "--columns", .kind = GF_CLI_STR, .target = &columns, .meta = "a,b",
          .help = "these columns, in order (default: every numeric and boolean column)" },
        { .name = "--dtype", .kind = GF_CLI_DTYPE, .target = &dt, .meta = "T", .help = "f32 (default), f64, f16, bf16, i32, i64 or u8, or the numpy name (float32 ...)" },
        { .name = "--fill", .kind = GF_CLI_NUM, .target = &fill, .meta = "V", .help = "the value written for nulls (default 0)" },
        { .name = "--null-error", .kind = GF_CLI_FLAG, .target = &null_error, .help = "a null is an error (naming file, column, row)" },
        { .name = "--unsafe-cast", .kind = GF_CLI_FLAG, .target = &unsafe_cast,
          .help = "convert values that do not fit the dtype anyway (default: an error)" },
        { .name = "--hash", .kind = GF_CLI_I64, .target = &hash, .meta = "N", .min = 1,
          .help = "STRING/BINARY columns: the hash of each value into N buckets" },
        { .name = "--list-width", .kind = GF_CLI_I64, .target = &list_width, .meta = "W", .min = 1, .max = (long long)GPUFEED_MAX_LIST_WIDTH,
          .help = "list columns: W elements per row (W output columns)" },
        { .name = "--ragged", .kind = GF_CLI_CHOICE, .target = &ragged, .meta = "error|pad|truncate", .choices = "error|pad|truncate",
          .help = "a list of another length: an error (default), padded with --fill\n"
                  "(longer: an error), or padded and cut to W" },
        { .name = "--lengths", .kind = GF_CLI_STR, .target = &lengths, .meta = "a,b",
          .help = "one more column per named list column: the list's length" },
        { .name = "--where", .kind = GF_CLI_STR, .target = &where, .meta = "EXPR",
          .help = "only rows where EXPR holds: conditions joined by `and`: `col < 3`, <=, ==, >=, >,\n"
                  "`col between 1 and 5`, `col in (1, 2)`, `col is [not] null`; strings in quotes" },
        { .name = "--batch", .kind = GF_CLI_I64, .target = &batch, .meta = "B", .min = 1, .help = "rows per read (default 4096: the batch stays in cache)" },
        { .name = "--unit-rows", .kind = GF_CLI_I64, .target = &unit_rows, .meta = "N", .min = 1,
          .help = "rows per unit of work (default 65536)" },
        { .name = "--unit-bytes", .kind = GF_CLI_SIZE, .target = &unit_bytes, .meta = "BYTES", .min = -1,
          .help = "dense bytes per unit at most (default 16M, 4M of packed tokens): a wider table's row groups are cut\ninto units this size, decoded in order, each worker its share of the columns; -1: no bound" },
        { .name = "--threads", .kind = GF_CLI_INT, .target = &threads, .meta = "N", .min = 1, .max = GPUFEED_MAX_WORKERS,
          .flags = GF_CLI_THREADS, .help = "threads that split the columns between them (default 1; the same bytes)" },
        { .name = "--manifest-dir", .kind = GF_CLI_STR, .target = &manifest_dir, .meta = "DIR",
          .help = "s3:// paths: keep the objects' footers here, so a later run lists the objects\nand fetches no footer" },
        { .name = "--pread", .kind = GF_CLI_BITS, .target = &open_flags, .value = GPUFEED_OPEN_PREAD,
          .help = "positioned reads instead of mapping the files" },
        { .name = "--mmap", .kind = GF_CLI_BITS, .target = &open_flags, .value = GPUFEED_OPEN_MMAP, .help = "map the files (the default)" },
        { .name = "--verify-crc", .kind = GF_CLI_BITS, .target = &open_flags, .value = GPUFEED_OPEN_VERIFY_CRC,
          .help = "check page CRCs where the file has them" },
    };
    gf_cli cli;
    static const char *const legacy_flags[] = { "--columns", "--dtype", "--fill", "--null-error", "--unsafe-cast", "--hash",
                                                "--list-width", "--ragged", "--lengths" };

    memset(&fs, 0, sizeof fs);
    memset(&cli, 0, sizeof cli);
    cli.prog = "gpufeed-dense";
    cli.usage = "[options] -o OUT.bin PATH...";
    cli.about = "Parquet files -> one dense row-major matrix (little-endian, rows x features, no header).";
    cli.opts = opts;
    cli.nopts = GF_CLI_COUNT(opts);
    cli.words = dense_words;
    cli.tail = "Without --columns or --feature: every numeric and boolean leaf column of the first file.\n"
               "On stderr at the end: rows, features, bytes read, seconds, GB/s (two lines); on a\n"
               "terminal a progress line (rows written) while it runs.\n"
               "Exit status: 0; 1 when the data cannot be read or the output written; 2 on a usage error.\n";
    rc = gf_cli_parse(&cli, argc, argv, 1);
    if (rc != GF_CLI_RUN) { gf_cli_features_free(&fs); gf_cli_free(&cli); return rc; }
    rc = 0;
    files = cli.pos;
    nfiles = cli.npos;
    cli.pos = NULL;
    g_files = files;
    atexit(free_files);
    for (i = 0; i < GF_CLI_COUNT(legacy_flags); i++) legacy |= gf_cli_seen(&cli, legacy_flags[i]) > 0;
    if (fs.n) cli.words = dense_feature_words;
    if (fs.n && legacy) {
        fprintf(stderr, "gpufeed-dense: --feature replaces --columns, --dtype, --fill, --null-error, --unsafe-cast, --hash, --list-width, --ragged and --lengths: use one or the other\n");
        gf_cli_features_free(&fs); return 2;
    }
    if (lengths && !columns) { fprintf(stderr, "gpufeed-dense: --lengths needs --columns\n"); gf_cli_features_free(&fs); return 2; }
    if (validp && !strcmp(validp, outp)) { fprintf(stderr, "gpufeed-dense: --valid-out must be another file than -o\n"); gf_cli_features_free(&fs); return 2; }
    if (!strcmp(outp, "-") && isatty(1)) {
        fprintf(stderr, "gpufeed-dense: -o - writes binary to stdout, which is a terminal: redirect it (> OUT.bin, | ...)\n");
        gf_cli_features_free(&fs); return 2;
    }

    if (where) {
        if (gpufeed_where_parse(&wh, where, &err)) {
            fprintf(stderr, "gpufeed-dense: --%s\n", err.message);
            rc = 2; goto done;
        }
        preds = gpufeed_where_predicates(wh, &npred);
    }
    if (columns) {
        const char *p = columns;
        gpufeed_file *first = NULL;
        gpufeed_dataset_desc probe;
        int ncols = 1, pass;
        for (i = 0; columns[i]; i++) ncols += columns[i] == ',';
        if (lengths) { ncols++; for (i = 0; lengths[i]; i++) ncols += lengths[i] == ','; }
        feats = (gpufeed_feature *)calloc((size_t)ncols, sizeof *feats);
        if (!feats) { rc = 1; goto done; }
        /* hashing applies to byte columns, widths to list columns: look at
           the first file's types */
        memset(&probe, 0, sizeof probe);
        probe.paths = files; probe.num_paths = nfiles;
        {
            gpufeed_dataset *pd = NULL;
            gpufeed_feature one;
            memset(&one, 0, sizeof one);
            /* open the first matched file through a tiny dataset to expand dirs/globs */
            probe.features = &one; probe.num_features = 0;
            if (gpufeed_dataset_open(&pd, &probe, &err) == GPUFEED_OK) {
                gpufeed_file_desc od;
                memset(&od, 0, sizeof od);
                od.path = gpufeed_dataset_file_path(pd, 0);
                gpufeed_file_open(&first, &od, NULL);
                gpufeed_dataset_close(pd);
            } else {
                gpufeed_file_desc od;
                memset(&od, 0, sizeof od);
                od.path = files[0];
                gpufeed_file_open(&first, &od, NULL);
            }
        }
        for (pass = 0; pass < 2; pass++) { /* the columns, then the lengths columns */
            p = pass ? lengths : columns;
            while (p && *p) {
                const char *e = strchr(p, ',');
                size_t n = e ? (size_t)(e - p) : strlen(p);
                char *name = (char *)malloc(n + 1);
                gpufeed_feature *ft;
                int32_t c;
                const gpufeed_metadata *md = first ? gpufeed_file_metadata(first) : NULL;
                if (!name) { rc = 1; goto done; }
                memcpy(name, p, n); name[n] = 0;
                ft = &feats[nfeat++];
                ft->column = name; /* freed at the end */
                ft->dtype = dt;
                ft->fill = fill;
                ft->null_policy = null_error ? GPUFEED_NULL_ERROR : GPUFEED_NULL_FILL;
                ft->cast = unsafe_cast ? GPUFEED_CAST_UNSAFE : GPUFEED_CAST_SAFE;
                c = first ? gpufeed_file_find_column(first, name) : -1;
                if (c >= 0) {
                    const gpufeed_schema_node *nd = &md->nodes[md->columns[c].node];
                    int is_list = md->columns[c].max_rep > 0;
                    if (pass) ft->list_lengths = 1;
                    else if (is_list) {
                        if (!list_width) {
                            fprintf(stderr, "gpufeed-dense: %s: column '%s' is a list: give --list-width W (and --ragged pad|truncate for lists of other lengths)\n",
                                    gpufeed_file_name(first), name);
                            gpufeed_file_close(first);
                            rc = 1; goto done;
                        }
                        ft->width = (int32_t)list_width;
                        ft->list_policy = ragged;
                    }
                    if (!pass && hash && (nd->physical == GPUFEED_BYTE_ARRAY || nd->physical == GPUFEED_FIXED_LEN_BYTE_ARRAY) &&
                        nd->logical != GPUFEED_LT_DECIMAL && nd->logical != GPUFEED_LT_FLOAT16)
                        ft->hash_buckets = (uint64_t)hash;
                } else if (pass) ft->list_lengths = 1;
                p += n; if (*p == ',') p++;
            }
        }
        gpufeed_file_close(first);
    }
    memset(&dd, 0, sizeof dd);
    dd.flags = open_flags; /* files are mapped by default */
    dd.manifest_dir = manifest_dir;
    dd.paths = files; dd.num_paths = nfiles;
    dd.features = feats; dd.num_features = nfeat;
    if (fs.n) { dd.features = fs.f; dd.num_features = fs.n; }
    dd.where = npred ? preds : NULL; dd.num_where = npred;
    dd.unit_rows = unit_rows; dd.unit_bytes = unit_bytes;
    t0 = now_s();
    if (gpufeed_dataset_open(&ds, &dd, &err)) { gf_cli_error(&cli, err.message); rc = 1; goto done; }
    if (!columns && (dt != GPUFEED_DT_F32 || fill != 0 || null_error || unsafe_cast)) {
        /* default columns with non-default options: reopen with explicit features */
        int32_t k, n = 0;
        gpufeed_dataset_get_info(ds, &info);
        feats = (gpufeed_feature *)calloc((size_t)info.num_features, sizeof *feats);
        if (!feats) { rc = 1; goto done; }
        for (k = 0; k < info.num_features; k++) {
            feats[n] = *gpufeed_dataset_feature(ds, k);
            {
                size_t l = strlen(feats[n].column);
                char *cp = (char *)malloc(l + 1);
                if (!cp) { rc = 1; goto done; }
                memcpy(cp, feats[n].column, l + 1);
                feats[n].column = cp; /* freed at the end (own_names) */
            }
            feats[n].dtype = dt; feats[n].fill = fill;
            feats[n].null_policy = null_error ? GPUFEED_NULL_ERROR : GPUFEED_NULL_FILL;
            feats[n].cast = unsafe_cast ? GPUFEED_CAST_UNSAFE : GPUFEED_CAST_SAFE;
            nfeat = ++n;
        }
        gpufeed_dataset_close(ds); ds = NULL;
        dd.features = feats; dd.num_features = n;
        if (gpufeed_dataset_open(&ds, &dd, &err)) { gf_cli_error(&cli, err.message); rc = 1; goto done; }
    }
    gpufeed_dataset_get_info(ds, &info);
    rc = valid_open(&info, ds, outp, validp, &vfeat, &nvalid, &valid_path, &vout);
    if (rc) goto done;
    if (nvalid && !(vrow = (uint8_t *)malloc((size_t)batch * (size_t)nvalid))) {
        fprintf(stderr, "gpufeed-dense: out of memory for the masks of --batch %lld rows\n", (long long)batch);
        rc = 1; goto done;
    }
    if (info.pack) { /* packed rows are cut by a loader, in the dataset's order */
        gpufeed_loader_desc ld;
        memset(&ld, 0, sizeof ld);
        ld.batch_rows = batch; ld.workers = threads; ld.no_unit_shuffle = 1;
        if (gpufeed_loader_open(&lo, ds, &ld, &err)) { gf_cli_error(&cli, err.message); rc = 1; goto done; }
    } else {
        memset(&rdd, 0, sizeof rdd);
        rdd.batch_rows = batch;
        rdd.threads = threads; /* the columns split between threads: the same bytes */
        if (gpufeed_reader_open(&rd, ds, &rdd, &err)) { gf_cli_error(&cli, err.message); rc = 1; goto done; }
    }
    out = strcmp(outp, "-") ? fopen(outp, "wb") : stdout;
    if (!out) { fprintf(stderr, "gpufeed-dense: cannot write '%.100s': %s\n", outp, strerror(errno)); rc = 1; goto done; }
    if (out == stdout) outp = "stdout";
    gf_cli_progress_start(&pg);
    for (;;) {
        gpufeed_batch b;
        gpufeed_result r = lo ? gpufeed_loader_next(lo, &b) : gpufeed_reader_next(rd, &b);
        if (r == GPUFEED_DONE) break;
        if (r) { gf_cli_progress_done(&pg); gf_cli_error(&cli, lo ? gpufeed_loader_error(lo) : gpufeed_reader_error(rd)); rc = 1; goto done; }
        if (fwrite(b.data, (size_t)b.row_bytes, (size_t)b.num_rows, out) != (size_t)b.num_rows) {
            gf_cli_progress_done(&pg);
            fprintf(stderr, "gpufeed-dense: write to '%.100s' failed: %s\n", outp, strerror(errno)); rc = 1; goto done;
        }
        if (nvalid && valid_write(&b, vfeat, nvalid, vrow, vout)) {
            gf_cli_progress_done(&pg);
            fprintf(stderr, "gpufeed-dense: write to '%.100s' failed: %s\n", valid_path, strerror(errno)); rc = 1; goto done;
        }
        rows += b.num_rows;
        if (gf_cli_progress_due(&pg)) {
            double el = gf_cli_now() - pg.t0;
            if (npred) gf_cli_progress_line(&pg, "%lld rows written (of at most %lld), %.1f MB/s", rows, (long long)info.num_rows,
                                            el > 0 ? (double)rows * (double)info.row_bytes / el / 1e6 : 0.0);
            else gf_cli_progress_line(&pg, "%lld of %lld rows written (%.0f%%), %.1f MB/s", rows, (long long)info.num_rows,
                                      info.num_rows ? 100.0 * (double)rows / (double)info.num_rows : 100.0,
                                      el > 0 ? (double)rows * (double)info.row_bytes / el / 1e6 : 0.0);
        }
    }
    gf_cli_progress_done(&pg);
    if (out == stdout ? (fflush(out) != 0 || ferror(out)) : fclose(out) != 0) {
        out = NULL;
        fprintf(stderr, "gpufeed-dense: write to '%.100s' failed: %s\n", outp, strerror(errno)); rc = 1; goto done;
    }
    out = NULL;
    if (vout && fclose(vout) != 0) {
        vout = NULL;
        fprintf(stderr, "gpufeed-dense: write to '%.100s' failed: %s\n", valid_path, strerror(errno)); rc = 1; goto done;
    }
    vout = NULL;
    t1 = now_s();
    {
        double secs = t1 - t0, bytes = (double)rows * (double)info.row_bytes;
        fprintf(stderr, "rows %lld, features %d, dtype row bytes %lld, files %d, units %lld, row groups %d (pruned %d)\n",
                rows, info.num_features, (long long)info.row_bytes, info.num_files, (long long)info.num_units,
                info.row_groups, info.row_groups_pruned);
        fprintf(stderr, "bytes read %llu, seconds %.3f, output %.3f GB/s (%.0f rows/s)\n",
                (unsigned long long)gpufeed_dataset_bytes_read(ds), secs, secs > 0 ? bytes / secs / 1e9 : 0.0, secs > 0 ? (double)rows / secs : 0.0);
        if (nvalid) fprintf(stderr, "validity masks of %d features: %s (%lld rows x %d bytes)\n", (int)nvalid, valid_path, rows, (int)nvalid);
    }
done:
    if (out && out != stdout) fclose(out);
    gpufeed_loader_close(lo);
    if (vout) fclose(vout);
    free(vfeat);
    free(vrow);
    free(valid_path);
    gpufeed_reader_close(rd);
    gpufeed_dataset_close(ds);
    gpufeed_where_free(wh);
    for (i = 0; feats && i < nfeat; i++) free((char *)feats[i].column); /* own_names: every column name was copied */
    free(feats);
    gf_cli_features_free(&fs);
    return rc;
}
