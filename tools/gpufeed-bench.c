/* gpufeed-bench: run the deterministic parallel loader over Parquet files
   and report throughput, the stall breakdown and a verdict.

   Build:  cc -O2 -I. tools/gpufeed-bench.c -o gpufeed-bench -lpthread -lm
   Usage:  gpufeed-bench [options] --batch B FILE|DIR|GLOB...
           (gpufeed-bench --help: a line per flag; the table in main() is
           where flags are declared, tools/gf_cli.h how)

   --sum adds each epoch's sum of every value to its line (a check that no
   row was lost). --print-batches prints one line per batch: `epoch index rows hash`
   (hash: 64-bit hash of the batch's bytes), the determinism contract: the
   same for any --workers, --ring-depth or timing. At the end, on stderr:
   rows/s, GB/s, the stall breakdown, the verdict, peak RSS, and with
   --cache the source bytes read per epoch (0 once the cache is built).
   On a terminal a progress line (epoch, batch, rows/s) runs meanwhile.
   --feature takes the syntax of every gpufeed tool (tools/gf_cli.h).
   --global-batch G (elastic mode, with --world/--rank, optionally
   --partitions P) and --print-rows (`epoch global_batch position hash` per
   row) let any user compare streams across world sizes. */
#define GPUFEED_IMPLEMENTATION
#include "../gpufeed.h"
#include "gf_cli.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

/* the loader's C words that differ from this tool's flags */
static const gf_cli_words bench_words[] = {
    { "workers must be", "--workers must be" },
    { "fewer cores than workers, fewer workers", "fewer cores than --workers, fewer --workers" },
    { NULL, NULL }
};

static gf_cli g_cli;

/* the loader's and the cache's warnings, in flag words */
static void log_line(void *user, const char *msg)
{
    (void)user;
    gf_cli_error(&g_cli, msg);
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
/* the first 64 epochs' rows and seconds, for the cache's line */
typedef struct epoch_times { uint64_t rows[64]; double secs[64]; } epoch_times;

static void epoch_line(int64_t e, uint64_t rows, double secs, int sums, double sum, epoch_times *et, int64_t e0)
{
    if (e - e0 >= 0 && e - e0 < 64) { et->rows[e - e0] = rows; et->secs[e - e0] = secs; }
    fprintf(stderr, "epoch %lld: %llu rows, %.4f s, %.0f rows/s", (long long)e, (unsigned long long)rows, secs, secs > 0 ? (double)rows / secs : 0.0);
    if (sums) fprintf(stderr, ", sum %.17g", sum);
    fputc('\n', stderr);
}

/* the cache's effect in one line: the epochs it served (no source byte
   read) against those that decoded */
static void cache_effect(gpufeed_loader *l, const epoch_times *et, int64_t e0, int64_t n)
{
    double rs[2] = { 0, 0 }, ss[2] = { 0, 0 };
    uint64_t bytes = 0;
    int64_t e, cnt[2] = { 0, 0 }, first = -1, last = -1;
    char which[64];
    for (e = 0; e < n && e < 64; e++) {
        uint64_t b = gpufeed_loader_epoch_bytes(l, e0 + e);
        int served = b == 0;
        rs[served] += (double)et->rows[e]; ss[served] += et->secs[e]; cnt[served]++;
        bytes += b;
        if (served && first < 0) first = e0 + e;
        if (served) last = e0 + e;
    }
    if (!cnt[1]) { fprintf(stderr, "cache effect: no epoch served from the cache yet (it is built while epochs decode)\n"); return; }
    if (first == last) snprintf(which, sizeof which, "epoch %lld", (long long)first);
    else snprintf(which, sizeof which, "epochs %lld-%lld", (long long)first, (long long)last);
    fprintf(stderr, "cache effect: %s from the cache at %.1f M rows/s, no source byte read", which, ss[1] > 0 ? rs[1] / ss[1] / 1e6 : 0.0);
    if (cnt[0] && ss[0] > 0 && rs[0] > 0 && ss[1] > 0)
        fprintf(stderr, ": %.1fx the epoch%s that decoded (%.1f M rows/s, %.1f MB of Parquet read)", (rs[1] / ss[1]) / (rs[0] / ss[0]),
                cnt[0] > 1 ? "s" : "", rs[0] / ss[0] / 1e6, (double)bytes / 1e6);
    fputc('\n', stderr);
}

/* what the s3:// or https:// objects cost (GPUFEED_CURL), on stderr */
static void print_remote(const gpufeed_remote_stats *rs, uint64_t units, double t_open)
{
    if (!rs->requests && !rs->manifest_objects) return;
    fprintf(stderr, "remote: %llu requests: %llu GETs opening the objects, %llu range GETs after (%.2f a decoded unit); %llu bytes; "
            "%llu retries, %llu failed; %llu of %llu reads served from fetched ranges\n", (unsigned long long)rs->requests,
            (unsigned long long)rs->open_gets, (unsigned long long)rs->gets, units ? (double)rs->gets / (double)units : 0.0,
            (unsigned long long)rs->bytes, (unsigned long long)rs->retries, (unsigned long long)rs->failures,
            (unsigned long long)rs->reads_served, (unsigned long long)rs->reads);
    fprintf(stderr, "remote open: %.3f s; %llu listing pages, %llu HEADs, %llu objects from manifests; %llu whole answers to ranges, "
            "%llu redirects, %llu credential refreshes; credentials: %s\n", t_open, (unsigned long long)rs->list_pages, (unsigned long long)rs->heads,
            (unsigned long long)rs->manifest_objects, (unsigned long long)rs->whole_answers, (unsigned long long)rs->redirects,
            (unsigned long long)rs->refreshes, rs->credentials);
    if (rs->manifest[0]) fprintf(stderr, "manifest: %s\n", rs->manifest);
}

static const char **g_files;
static void free_files(void) { free((void *)g_files); g_files = NULL; }

int main(int argc, char **argv)
{
    const char *columns = NULL, *where = NULL;
    gpufeed_where *wh = NULL;
    int nfiles = 0, i, rc = 0;
    int32_t print = 0, sums = 0, print_rows = 0, open_only = 0;
    gpufeed_dtype dt = GPUFEED_DT_F32;
    gpufeed_loader_desc ld;
    gpufeed_dataset_desc dd;
    gpufeed_dataset *ds = NULL;
    gpufeed_loader *l = NULL;
    gpufeed_error err;
    gpufeed_feature *feats = NULL;
    char **names = NULL;
    int nfeat = 0;
    int64_t unit_rows = 0, unit_bytes = 0, cache_ram = 0;
    double t0, t1, t_open = 0;
    gpufeed_cache_desc cache;
    gf_cli_features fs;
    gf_cli_mix mixl;
    int32_t until = 0;
    gpufeed_dataset **mds = NULL;
    char msg[256];
    const char **files;
    gf_cli_opt opts[] = {
        { .name = "--batch", .kind = GF_CLI_I64, .target = &ld.batch_rows, .meta = "B", .min = 1,
          .help = "required: rows per batch (with --global-batch: G / world, may be left out)" },
        { .name = "--global-batch", .kind = GF_CLI_I64, .target = &ld.global_batch_rows, .meta = "G", .min = 1,
          .help = "elastic mode: a global batch of G rows, the same for any --world dividing G;\n"
                  "this rank delivers its G / world rows of each" },
        { .name = "--partitions", .kind = GF_CLI_INT, .target = &ld.partitions, .meta = "P", .min = 1,
          .help = "elastic mode: the global batch is P partitions' blocks; a rank decodes only\n"
                  "its partitions' units (--world must divide P)" },
        { .name = "--columns", .kind = GF_CLI_STR, .target = &columns, .meta = "a,b",
          .help = "these columns, all as --dtype (default: every numeric and boolean column)" },
        { .name = "--dtype", .kind = GF_CLI_DTYPE, .target = &dt, .meta = "T", .help = "f32 (default), f64, f16, bf16, i32, i64 or u8, or the numpy name (float32 ...)" },
        { .name = "--where", .kind = GF_CLI_STR, .target = &where, .meta = "EXPR",
          .help = "rows that match: 'col >= 4 and name in (\"a\", \"b\")' (see gpufeed_where_parse)" },
        { .name = "--feature", .kind = GF_CLI_FEATURE, .target = &fs, .meta = "COL:DTYPE[:OPT...]",
          .help = "one feature each, in order, instead of --columns/--dtype; options hash=N,\n"
                  "seed=S, fill=V, null=fill|error, valid, cast=unsafe, width=W,\n"
                  "ragged=error|pad|truncate, lengths, unit=s|ms|us|ns, missing=null,\n"
                  "pack=T, positions, eos=ID (token packing)" },
        { .name = "--mix", .kind = GF_CLI_CALL, .target = &mixl, .call = gf_cli_mix_add, .meta = "PATH=WEIGHT",
          .help = "a mixture (instead of PATHs), one source each: batches draw rows from the\n"
                  "sources in proportion to their weights (tokens, with pack=T)" },
        { .name = "--until", .kind = GF_CLI_CHOICE, .target = &until, .meta = "first|longest", .choices = "first|longest",
          .help = "a mixture's epoch ends when its first source runs out (default) or its last\n"
                  "(the others start their next epoch's order)" },
        { .name = "--workers", .kind = GF_CLI_INT, .target = &ld.workers, .meta = "N", .min = 1, .max = GPUFEED_MAX_WORKERS,
          .flags = GF_CLI_THREADS, .help = "decode threads (default 1)" },
        { .name = "--epochs", .kind = GF_CLI_I64, .target = &ld.epochs, .meta = "E", .min = 1, .help = "epochs to run (default 1)" },
        { .name = "--seed", .kind = GF_CLI_U64, .target = &ld.seed, .meta = "S", .help = "the shuffle's seed (default 0)" },
        { .name = "--shuffle-window", .kind = GF_CLI_INT, .target = &ld.shuffle_window, .meta = "W",
          .help = "rows of W consecutive units are shuffled together (0: rows in unit order)" },
        { .name = "--no-shuffle", .kind = GF_CLI_FLAG, .target = &ld.no_unit_shuffle, .help = "units in dataset order every epoch" },
        { .name = "--drop-last", .kind = GF_CLI_FLAG, .target = &ld.last_batch, .value = GPUFEED_DROP_LAST,
          .help = "drop each epoch's last batch when it is short" },
        { .name = "--rank", .kind = GF_CLI_INT, .target = &ld.rank, .meta = "r", .help = "this rank of --world (data parallel)" },
        { .name = "--world", .kind = GF_CLI_INT, .target = &ld.world, .meta = "w", .min = 1, .help = "ranks sharing the data (default 1)" },
        { .name = "--even", .kind = GF_CLI_CHOICE, .target = &ld.even, .meta = "drop|pad|drop-any", .choices = "drop|pad|drop-any",
          .help = "every rank the same batch count: drop rows (default; an error when an epoch\n"
                  "would drop more than --world x --batch rows), repeat some, or drop whatever the loss" },
        { .name = "--start-epoch", .kind = GF_CLI_I64, .target = &ld.start_epoch, .meta = "e", .help = "resume at this epoch ..." },
        { .name = "--start-batch", .kind = GF_CLI_I64, .target = &ld.start_batch, .meta = "k", .help = "... and this batch" },
        { .name = "--ring-depth", .kind = GF_CLI_INT, .target = &ld.ring_depth, .meta = "D", .min = 1, .max = 1024,
          .help = "decoded units queued per worker (default 2; 4 with more than 4 workers)" },
        { .name = "--unit-rows", .kind = GF_CLI_I64, .target = &unit_rows, .meta = "N", .min = 1,
          .help = "rows per unit of work (default 65536)" },
        { .name = "--unit-bytes", .kind = GF_CLI_SIZE, .target = &unit_bytes, .meta = "BYTES", .min = -1,
          .help = "dense bytes per unit at most (default 16M, 4M of packed tokens): a wider table's row groups are cut\ninto units this size, decoded in order, each worker its share of the columns; -1: no bound" },
        { .name = "--prefill", .kind = GF_CLI_FLAG, .target = &ld.prefill, .help = "fill every worker's queue before the first batch" },
        { .name = "--jitter-us", .kind = GF_CLI_INT, .target = &ld.debug_jitter_us, .meta = "X",
          .help = "testing: each worker sleeps 0..X us before each unit" },
        { .name = "--open-only", .kind = GF_CLI_FLAG, .target = &open_only,
          .help = "open the dataset, print what opening it took (s3:// objects: the requests), exit" },
        { .name = "--print-batches", .kind = GF_CLI_FLAG, .target = &print,
          .help = "one line per batch on stdout: `epoch index rows hash`\n"
                  "(the same for any --workers, --ring-depth or timing)" },
        { .name = "--print-rows", .kind = GF_CLI_FLAG, .target = &print_rows,
          .help = "one line per row on stdout: `epoch global_batch position hash` (its place in\n"
                  "the global batch, a hash of its bytes): sorted, every rank's lines together\n"
                  "are the same for any world dividing the global batch" },
        { .name = "--sum", .kind = GF_CLI_FLAG, .target = &sums,
          .help = "add each epoch's sum of every value to its line (a check that no row was lost)" },
        { .name = "--trace", .kind = GF_CLI_STR, .target = &ld.trace_path, .meta = "OUT.json",
          .help = "a Chrome/Perfetto trace of the workers and the consumer" },
        { .name = "--cache", .kind = GF_CLI_STR, .target = &cache.dir, .meta = "DIR",
          .help = "the tensor cache: built during the first epoch, then served" },
        { .name = "--manifest-dir", .kind = GF_CLI_STR, .target = &dd.manifest_dir, .meta = "DIR",
          .help = "s3:// paths: keep the objects' footers here, so a later run lists the objects\nand fetches no footer (default: the --cache directory)" },
        { .name = "--cache-ram", .kind = GF_CLI_SIZE, .target = &cache_ram, .meta = "BYTES", .min = 1,
          .help = "with --cache: hold a cache of at most BYTES in memory (default: a sixteenth of\n"
                  "the memory); alone: keep the dataset in RAM when it fits (K, M, G, T suffixes)" },
        { .name = "--cache-no-ram", .kind = GF_CLI_FLAG, .target = &cache.no_map,
          .help = "never hold the cache in memory: each use reads its unit and checks it" },
        { .name = "--cache-verify", .kind = GF_CLI_CHOICE, .target = &cache.verify, .meta = "first|open|every", .choices = "first|open|every",
          .help = "when a cache held in memory is checked: as each unit is read in (default),\n"
                  "all at open, or also at every use" },
        { .name = "--pread", .kind = GF_CLI_BITS, .target = &dd.flags, .value = GPUFEED_OPEN_PREAD,
          .help = "positioned reads instead of mapping the files (a file cut short while it\n"
                  "is read is then an error, never a signal)" },
        { .name = "--mmap", .kind = GF_CLI_BITS, .target = &dd.flags, .value = GPUFEED_OPEN_MMAP,
          .help = "map the files also on a network file system (default: local files are\n"
                  "mapped, files on NFS, Lustre, FUSE... read with pread)" },
        { .name = "--verify-crc", .kind = GF_CLI_BITS, .target = &dd.flags, .value = GPUFEED_OPEN_VERIFY_CRC,
          .help = "check page CRCs while decoding" },
    };
    gf_cli *cli = &g_cli;

    memset(&fs, 0, sizeof fs);
    memset(&mixl, 0, sizeof mixl);
    memset(&ld, 0, sizeof ld);
    memset(&dd, 0, sizeof dd);
    memset(&cache, 0, sizeof cache);
    ld.epochs = 1;
    cli->prog = "gpufeed-bench";
    cli->usage = "[options] --batch B PATH...  (or --mix PATH=WEIGHT ... instead of PATHs)";
    cli->min_pos = -1;
    cli->about = "Run the deterministic parallel loader over Parquet files: rows/s, GB/s, where the time went, a verdict.";
    cli->opts = opts;
    cli->nopts = GF_CLI_COUNT(opts);
    cli->words = bench_words;
    cli->tail = "On stderr at the end: rows/s, GB/s dense, the stall breakdown, per worker busy time,\n"
                "the verdict, peak RSS; with --cache the source bytes read per epoch (0 once built)\n"
                "and the cache's effect in one line.\n"
                "On a terminal a progress line (epoch, batch, rows/s) while it runs.\n"
                "Exit status: 0; 1 when the data cannot be read; 2 on a usage error.\n";
    rc = gf_cli_parse(cli, argc, argv, 1);
    if (rc != GF_CLI_RUN) { gf_cli_features_free(&fs); gf_cli_mix_free(&mixl); gf_cli_free(cli); return rc; }
    rc = 0;
    files = cli->pos;
    nfiles = cli->npos;
    if ((nfiles == 0) == (mixl.n == 0)) {
        fprintf(stderr, "gpufeed-bench: %s\n", nfiles ? "--mix names the sources: give no PATH with it" : "no PATH given (or --mix PATH=WEIGHT)");
        gf_cli_features_free(&fs); gf_cli_mix_free(&mixl); gf_cli_free(cli);
        return 2;
    }
    if (gf_cli_seen(cli, "--until") && !mixl.n) {
        fprintf(stderr, "gpufeed-bench: --until needs --mix\n");
        gf_cli_features_free(&fs); gf_cli_mix_free(&mixl); gf_cli_free(cli);
        return 2;
    }
    g_files = files;
    cli->pos = NULL;
    atexit(free_files);
    if (!cache.dir && (gf_cli_seen(cli, "--cache-no-ram") || gf_cli_seen(cli, "--cache-verify"))) {
        fprintf(stderr, "gpufeed-bench: --cache-no-ram and --cache-verify need --cache DIR\n");
        gf_cli_features_free(&fs); gf_cli_free(cli);
        return 2;
    }
    if (cache.dir || cache_ram) {
        cache.ram_bytes = (uint64_t)cache_ram;
        cache.log = log_line;
        ld.cache = &cache;
    }
    if (ld.batch_rows <= 0 && ld.global_batch_rows <= 0) {
        fprintf(stderr, "gpufeed-bench: --batch is required (or --global-batch)\n");
        gf_cli_features_free(&fs); gf_cli_free(cli);
        return 2;
    }
    if (fs.n && (columns || gf_cli_seen(cli, "--dtype"))) { fprintf(stderr, "gpufeed-bench: --feature gives each feature its dtype: not with --columns or --dtype\n"); gf_cli_features_free(&fs); return 2; }
    if (columns && gf_cli_features_columns(&fs, columns, dt, msg, sizeof msg)) {
        fprintf(stderr, "gpufeed-bench: %s\n", msg);
        gf_cli_features_free(&fs);
        return 2;
    }
    dd.paths = files; dd.num_paths = nfiles;
    if (!dd.manifest_dir) dd.manifest_dir = cache.dir; /* s3:// footers kept beside the cache */
    if (fs.n) { dd.features = fs.f; dd.num_features = fs.n; }
    dd.unit_rows = unit_rows; dd.unit_bytes = unit_bytes;
    if (where && gpufeed_where_parse(&wh, where, &err)) {
        fprintf(stderr, "gpufeed-bench: --%s\n", err.message);
        gf_cli_features_free(&fs);
        return 2;
    }
    dd.where = gpufeed_where_predicates(wh, &dd.num_where);
    t0 = gf_cli_now();
    if (mixl.n) { /* a mixture: one dataset a source, the same features */
        gpufeed_mix_source *src = (gpufeed_mix_source *)calloc((size_t)mixl.n, sizeof *src);
        gpufeed_mixture_desc md;
        mds = (gpufeed_dataset **)calloc((size_t)mixl.n, sizeof *mds);
        if (!src || !mds) { free(src); rc = 1; goto done; }
        for (i = 0; i < mixl.n; i++) {
            dd.paths = &mixl.paths[i]; dd.num_paths = 1;
            if (gpufeed_dataset_open(&mds[i], &dd, &err)) {
                char out[2048];
                gf_cli_translate(cli, err.message, out, sizeof out);
                fprintf(stderr, "gpufeed-bench: --mix %s: %s\n", mixl.paths[i], out);
                free(src); rc = 1; goto done;
            }
            src[i].dataset = mds[i]; src[i].weight = mixl.weights[i];
        }
        memset(&md, 0, sizeof md);
        md.sources = src; md.num_sources = mixl.n; md.until = until;
        ds = mds[0];
        if (gpufeed_loader_open_mixture(&l, &md, &ld, &err)) { gf_cli_error(cli, err.message); free(src); rc = 1; goto done; }
        free(src);
    } else if (gpufeed_dataset_open(&ds, &dd, &err)) { gf_cli_error(cli, err.message); rc = 1; goto done; }
    t_open = gf_cli_now() - t0;
    if (open_only) {
        gpufeed_remote_stats rs;
        gpufeed_dataset_info info;
        gpufeed_dataset_get_info(ds, &info);
        gpufeed_dataset_remote_stats(ds, &rs);
        fprintf(stderr, "opened %d files (%lld units, %lld rows) in %.3f s\n", (int)info.num_files, (long long)info.num_units, (long long)info.num_rows, t_open);
        print_remote(&rs, 0, t_open);
        goto done;
    }
    if (!mixl.n && !columns && dt != GPUFEED_DT_F32) {
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
        if (gpufeed_dataset_open(&ds, &dd, &err)) { gf_cli_error(cli, err.message); rc = 1; goto done; }
    }
    if (!mixl.n && gpufeed_loader_open(&l, ds, &ld, &err)) { gf_cli_error(cli, err.message); rc = 1; goto done; }
    {
        gpufeed_batch b;
        gpufeed_result r;
        uint64_t rows = 0, bytes = 0;
        gpufeed_stats st;
        gpufeed_remote_stats rs;
        double secs, t_epoch_end = 0;
        int32_t k;
        double t_mark = gf_cli_now(), esum = 0;
        int64_t cur_epoch = -1;
        uint64_t erows = 0;
        gf_cli_progress pg;
        int64_t ep_batches = 0;
        epoch_times et;
        memset(&et, 0, sizeof et);
        gf_cli_progress_start(&pg);
        if ((print || print_rows) && isatty(1)) pg.tty = 0; /* batch lines on the same terminal */
        while ((r = gpufeed_loader_next(l, &b)) == GPUFEED_OK) {
            if (b.epoch != cur_epoch) { /* the previous epoch ended with the batch before */
                gf_cli_progress_done(&pg);
                if (cur_epoch >= 0) epoch_line(cur_epoch, erows, t_epoch_end - t_mark, sums, esum, &et, ld.start_epoch);
                if (cur_epoch >= 0) t_mark = t_epoch_end;
                cur_epoch = b.epoch; erows = 0; esum = 0;
                if (pg.tty) ep_batches = gpufeed_loader_epoch_batches(l, cur_epoch);
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
            t_epoch_end = gf_cli_now();
            if (gf_cli_progress_due(&pg)) {
                double el = gf_cli_now() - pg.t0;
                gf_cli_progress_line(&pg, "epoch %lld/%lld, batch %lld/%lld, %llu rows, %.0f rows/s",
                                     (long long)(b.epoch - ld.start_epoch + 1), (long long)ld.epochs, (long long)b.index + 1,
                                     (long long)ep_batches, (unsigned long long)rows, el > 0 ? (double)rows / el : 0.0);
            }
        }
        gf_cli_progress_done(&pg);
        if (cur_epoch >= 0 && r == GPUFEED_DONE) epoch_line(cur_epoch, erows, t_epoch_end - t_mark, sums, esum, &et, ld.start_epoch);
        if (r != GPUFEED_DONE) { gf_cli_error(cli, gpufeed_loader_error(l)); rc = 1; goto done; }
        t1 = gf_cli_now();
        secs = t1 - t0;
        gpufeed_loader_stats(l, &st);
        fprintf(stderr, "rows %llu, batches %llu, %.3f s, %.0f rows/s, %.3f GB/s dense, source bytes read %llu\n",
                (unsigned long long)rows, (unsigned long long)st.batches, secs, secs > 0 ? (double)rows / secs : 0.0,
                secs > 0 ? (double)bytes / secs / 1e9 : 0.0, (unsigned long long)st.bytes_read);
        fprintf(stderr, "stall: trainer waited %.3f s of %.3f s (%.1f%%), copying batches %.3f s; units decoded %llu (%lld an epoch); "
                "rows dropped %llu, repeated %llu\n",
                st.trainer_wait_s, st.wall_s, st.wall_s > 0 ? 100 * st.trainer_wait_s / st.wall_s : 0.0, st.copy_s,
                (unsigned long long)st.units_decoded, (long long)st.units_per_epoch, (unsigned long long)st.rows_dropped,
                (unsigned long long)st.rows_repeated);
        {
            gpufeed_dataset_info di;
            gpufeed_dataset_get_info(ds, &di);
            if (di.pack) /* rows of T tokens */
                fprintf(stderr, "packing: %d tokens a row, %llu tokens, %.0f tokens/s; tokens dropped %llu (each epoch's last partial row)\n", di.pack,
                        (unsigned long long)rows * (unsigned long long)di.pack, secs > 0 ? (double)rows * di.pack / secs : 0.0,
                        (unsigned long long)st.tokens_dropped);
        }
        for (k = 0; k < st.workers; k++) /* the verdict's "workers N% busy" is the mean of these */
            fprintf(stderr, "worker %d: decode %.3f s, batch assembly %.3f s, idle %.3f s (%.0f%% busy)\n", k, st.worker_busy_s[k],
                    st.worker_assembly_s[k], st.worker_backpressure_s[k], 100 * st.worker_busy[k]);
        fprintf(stderr, "source reads %.3f s (part of decode); the consumer's own time between batches %.3f s\n", st.read_s, st.consumer_s);
        gpufeed_dataset_remote_stats(ds, &rs);
        print_remote(&rs, st.units_decoded, t_open);
        if (ld.cache) {
            int64_t e;
            static const char *const cs[] = { "off", "building", "ready" };
            fprintf(stderr, "cache: %s, units from cache %llu, bad units %llu\n", cs[st.cache_state], (unsigned long long)st.units_from_cache, (unsigned long long)st.cache_bad_units);
            for (e = ld.start_epoch; e < ld.start_epoch + ld.epochs && e < ld.start_epoch + 64; e++)
                fprintf(stderr, "epoch %lld: source bytes read %llu\n", (long long)e, (unsigned long long)gpufeed_loader_epoch_bytes(l, e));
            cache_effect(l, &et, ld.start_epoch, ld.epochs);
        }
        {
            char v[1024];
            gf_cli_translate(cli, st.verdict, v, sizeof v);
            fprintf(stderr, "verdict: %s\n", v);
        }
        fprintf(stderr, "peak RSS %.1f MiB\n", gf_cli_peak_rss_mib());
    }
done:
    gpufeed_loader_close(l);
    if (mds) {
        for (i = 0; i < mixl.n; i++) gpufeed_dataset_close(mds[i]);
        free(mds);
    } else gpufeed_dataset_close(ds);
    gf_cli_mix_free(&mixl);
    gpufeed_where_free(wh);
    if (names) for (i = 0; i < nfeat; i++) free(names[i]);
    free(names); free(feats);
    gf_cli_features_free(&fs);
    return rc;
}
