/* gf_cli.h -- what gpufeed's command-line tools share: one argument parser,
   library messages in the words of the flags, a progress line, and the
   --feature syntax.

   Include after gpufeed.h in a tool (one translation unit); every function
   is static.

   1. Flags
   --------
   A tool declares each flag once, in a table; parsing, `-h`/`--help` (a
   line per flag), `--version`, the error messages and the exit codes all
   come from it:

       gf_cli_opt opts[] = {
           { .name = "--batch", .kind = GF_CLI_I64, .target = &ld.batch_rows, .meta = "B",
             .min = 1, .flags = GF_CLI_REQUIRED, .help = "rows per batch" },
           { .name = "--limit", .alias = 'n', .kind = GF_CLI_I64, .target = &limit, .meta = "N",
             .help = "at most N rows" },
           { .name = "--json", .kind = GF_CLI_FLAG, .target = &json, .help = "JSON Lines" },
       };
       gf_cli cli = { "gpufeed-x", "[options] PATH...", "What it does, in one line.", opts, GF_CLI_COUNT(opts) };
       int rc = gf_cli_parse(&cli, argc, argv, 1);
       if (rc != GF_CLI_RUN) return rc;      (0 after --help or --version, 2 on a usage error)
       ... cli.pos[0 .. cli.npos - 1] are the PATHs ...
       gf_cli_free(&cli);

   Adding a flag is adding a line to the table (and, for a new kind of
   value, nothing else: the kinds below cover numbers, sizes, words, dtypes
   and features; GF_CLI_CALL takes a function for anything else).

   Kinds (what .target points to):
     GF_CLI_FLAG     no value: int32_t set to .value (0 means 1)
     GF_CLI_BITS     no value: uint32_t |= .value
     GF_CLI_INT      an integer >= .min and, when .max > 0, <= .max: int32_t
     GF_CLI_I64      the same into int64_t
     GF_CLI_U64      the same into uint64_t
     GF_CLI_SIZE     bytes with an optional K, M, G or T (1024-based): int64_t
     GF_CLI_NUM      a number (strtod): double
     GF_CLI_STR      any text: const char *
     GF_CLI_CHOICE   one word of .choices ("drop|pad"): its index, int32_t
     GF_CLI_DTYPE    f32, f64, f16, bf16, i32, i64 or u8, or the numpy names
                     (float32, float64, float16, bfloat16, int32, int64, uint8): gpufeed_dtype
     GF_CLI_FEATURE  COLUMN:DTYPE[:OPTION...] (section 4): gf_cli_features
     GF_CLI_CALL     .call(target, value, msg, cap): 0, or -1 with what is
                     wrong in msg ("needs ..."); the flag is named before it
   Flags (.flags):
     GF_CLI_REQUIRED  "TOOL: --batch is required" (exit 2) when missing
     GF_CLI_THREADS   a thread count: one warning line when it is more than
                      4 x the online cores (the run goes on)
   Every entry counts its uses in .seen (gf_cli_seen(&cli, "--dtype")).
   Values: `--batch 5`, `--batch=5`, `-n 5`, `-n5`; `--` ends the flags.
   .pos_name (default "PATH") names the arguments that are not flags in the
   help and in "no PATH given"; .min_pos (default 1, -1: none needed) is
   how many there must be. .head: lines after the usage line (commands);
   .tail: lines after the flags. .hints: pairs { "--hash", "hash a column
   with --feature COLUMN:i32:hash=N" } for flags a user may try that do not
   exist (added to the "unknown option" line).

   Exit codes, in every tool: 0 done, 1 a data or runtime error (a file
   that cannot be read, a failed write), 2 a usage error.

   2. Messages
   -----------
   gf_cli_error(&cli, msg) prints "TOOL: MSG" for a library error, with the
   library's words for the C fields (batch_rows, unit_rows, ring_depth,
   hash_buckets, ...) replaced by the flags that set them (.words: the
   tool's own pairs, tried before the shared ones) and the "dataset: ",
   "loader: ", "reader: " prefixes left out.

   3. Progress
   -----------
   gf_cli_progress: on a terminal (stderr) a live line rewritten in place
   (`\r`, at most every 0.2 s); on a pipe nothing until the tool's one final
   summary line.
*/
#ifndef GF_CLI_H
#define GF_CLI_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/time.h>
#include <sys/resource.h>

#if defined(__GNUC__) || defined(__clang__)
#define GF_CLI_FN static __attribute__((unused))
#define GF_CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define GF_CLI_FN static
#define GF_CLI_PRINTF(a, b)
#endif

#define GF_CLI_XSTR2(x) #x
#define GF_CLI_XSTR(x) GF_CLI_XSTR2(x)
#define GF_CLI_VERSION GF_CLI_XSTR(GPUFEED_VERSION_MAJOR) "." GF_CLI_XSTR(GPUFEED_VERSION_MINOR) "." GF_CLI_XSTR(GPUFEED_VERSION_PATCH)
#define GF_CLI_COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define GF_CLI_RUN (-1)                /* gf_cli_parse: go on */

/* ---- 4. the feature syntax ----------------------------------------------

   One feature per --feature option, in the order given:

       --feature COLUMN:DTYPE[:OPTION...]

   DTYPE is f32, f64, f16, bf16, i32, i64 or u8, or its numpy name (float32,
   float64, float16, bfloat16, int32, int64, uint8): gf_cli_dtype_parse.
   OPTIONs (any order) set the fields of gpufeed_feature:

       hash=N            id = hash % N (hash_buckets): STRING/BINARY/FLBA values,
                         or integers (IDs)
       seed=S            the hash's seed (hash_seed)
       fill=V            the value written for nulls (fill)
       null=fill|error   null_policy
       valid             also a uint8 validity mask per row (validity)
       cast=safe|unsafe  cast
       width=W           list columns: W elements per row (width)
       ragged=error|pad|truncate   lists of another length (list_policy)
       lengths           one value per row: the list's length (list_lengths)
       unit=s|ms|us|ns   TIMESTAMP/TIME/DATE columns: the unit values arrive in,
                         whatever each file's (unit; default: the first file's)
       missing=error|null  a column some files lack: an error, or nulls there
       pack=T            token packing: each row a document of a list<int> column,
                         concatenated and cut into rows of T tokens (pack)
       positions         with pack: a second feature, each token's position in
                         its document (0 at every document's start)
       eos=ID            with pack: the token ID appended after every document

   e.g. --feature dep_delay:f32 --feature carrier:i32:hash=1000
        --feature emb.list.element:f32:width=8:ragged=pad
        --feature input_ids:i32:pack=2048:positions:eos=0
   A column name may itself contain ':' (the options and the dtype are taken
   from the right). The cache's description (gpufeed-cache ls) prints
   features in the same syntax. (It comes first in this file: the parser's
   GF_CLI_FEATURE kind uses it.) */

typedef struct gf_cli_features {
    gpufeed_feature *f;
    char **names;                      /* owned column names */
    int n, cap;
} gf_cli_features;

GF_CLI_FN int gf_cli_u64(const char *s, unsigned long long *out)
{
    char *e;
    if (!*s || *s == '-') return -1;
    errno = 0;
    *out = strtoull(s, &e, 10);
    return (*e || errno) ? -1 : 0;
}

/* a dtype by its short name (gpufeed_dtype_parse) or its numpy name: 0, or -1 */
GF_CLI_FN int gf_cli_dtype_parse(const char *s, gpufeed_dtype *out)
{
    static const char *const numpy[] = { "float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8" };
    static const gpufeed_dtype dt[] = { GPUFEED_DT_F32, GPUFEED_DT_F64, GPUFEED_DT_F16, GPUFEED_DT_BF16, GPUFEED_DT_I32, GPUFEED_DT_I64, GPUFEED_DT_U8 };
    size_t i;
    if (gpufeed_dtype_parse(s, out) == 0) return 0;
    for (i = 0; s && i < sizeof numpy / sizeof numpy[0]; i++)
        if (!strcmp(s, numpy[i])) { *out = dt[i]; return 0; }
    return -1;
}
#define GF_CLI_DTYPES "f32, f64, f16, bf16, i32, i64 or u8 (or float32, float64, float16, bfloat16, int32, int64, uint8)"

/* one OPTION (or the dtype) into *f: 1 taken, 0 not an option, -1 a bad value */
GF_CLI_FN int gf_cli_option(const char *o, size_t len, gpufeed_feature *f, char *msg, size_t cap)
{
    char v[128];
    const char *eq = (const char *)memchr(o, '=', len);
    unsigned long long u;
    size_t kl = eq ? (size_t)(eq - o) : len;
    if (eq) {
        size_t vl = len - kl - 1;
        if (vl >= sizeof v) { snprintf(msg, cap, "option '%.*s' is too long", (int)kl, o); return -1; }
        memcpy(v, eq + 1, vl); v[vl] = 0;
    }
#define GF_CLI_KEY(k) (kl == strlen(k) && memcmp(o, k, kl) == 0)
    if (!eq) {
        if (GF_CLI_KEY("valid")) { f->validity = 1; return 1; }
        if (GF_CLI_KEY("lengths")) { f->list_lengths = 1; return 1; }
        if (GF_CLI_KEY("positions")) { f->positions = 1; return 1; }
        return 0;
    }
    if (GF_CLI_KEY("pack")) {
        if (gf_cli_u64(v, &u) || u == 0 || u > (unsigned long long)GPUFEED_MAX_PACK) {
            snprintf(msg, cap, "pack=%s: needs tokens a row, an integer in [1, %d] (GPUFEED_MAX_PACK)", v, (int)GPUFEED_MAX_PACK); return -1;
        }
        f->pack = (int32_t)u; return 1;
    }
    if (GF_CLI_KEY("eos")) {
        char *e;
        long long x;
        errno = 0;
        x = strtoll(v, &e, 10);
        if (!*v || *e || errno) { snprintf(msg, cap, "eos=%s: needs an integer token id", v); return -1; }
        f->eos = (int64_t)x; f->use_eos = 1; return 1;
    }
    if (GF_CLI_KEY("hash")) {
        if (gf_cli_u64(v, &u) || u == 0) { snprintf(msg, cap, "hash=%s: needs a positive bucket count", v); return -1; }
        f->hash_buckets = (uint64_t)u; return 1;
    }
    if (GF_CLI_KEY("seed")) {
        if (gf_cli_u64(v, &u)) { snprintf(msg, cap, "seed=%s: needs an unsigned integer", v); return -1; }
        f->hash_seed = (uint64_t)u; return 1;
    }
    if (GF_CLI_KEY("fill")) {
        char *e;
        f->fill = strtod(v, &e);
        if (!*v || *e) { snprintf(msg, cap, "fill=%s: needs a number", v); return -1; }
        return 1;
    }
    if (GF_CLI_KEY("null")) {
        if (!strcmp(v, "fill")) f->null_policy = GPUFEED_NULL_FILL;
        else if (!strcmp(v, "error")) f->null_policy = GPUFEED_NULL_ERROR;
        else { snprintf(msg, cap, "null=%s: needs fill or error", v); return -1; }
        return 1;
    }
    if (GF_CLI_KEY("cast")) {
        if (!strcmp(v, "safe")) f->cast = GPUFEED_CAST_SAFE;
        else if (!strcmp(v, "unsafe")) f->cast = GPUFEED_CAST_UNSAFE;
        else { snprintf(msg, cap, "cast=%s: needs safe or unsafe", v); return -1; }
        return 1;
    }
    if (GF_CLI_KEY("width")) {
        if (gf_cli_u64(v, &u) || u == 0 || u > (unsigned long long)GPUFEED_MAX_LIST_WIDTH) {
            snprintf(msg, cap, "width=%s: needs an integer in [1, %lu]", v, (unsigned long)GPUFEED_MAX_LIST_WIDTH); return -1;
        }
        f->width = (int32_t)u; return 1;
    }
    if (GF_CLI_KEY("unit")) {
        if (!strcmp(v, "s")) f->unit = GPUFEED_UNIT_SECONDS;
        else if (!strcmp(v, "ms")) f->unit = GPUFEED_UNIT_MILLIS;
        else if (!strcmp(v, "us")) f->unit = GPUFEED_UNIT_MICROS;
        else if (!strcmp(v, "ns")) f->unit = GPUFEED_UNIT_NANOS;
        else { snprintf(msg, cap, "unit=%s: needs s, ms, us or ns", v); return -1; }
        return 1;
    }
    if (GF_CLI_KEY("missing")) {
        if (!strcmp(v, "error")) f->missing = GPUFEED_MISSING_ERROR;
        else if (!strcmp(v, "null")) f->missing = GPUFEED_MISSING_NULL;
        else { snprintf(msg, cap, "missing=%s: needs error or null", v); return -1; }
        return 1;
    }
    if (GF_CLI_KEY("ragged")) {
        if (!strcmp(v, "error")) f->list_policy = GPUFEED_LIST_ERROR;
        else if (!strcmp(v, "pad")) f->list_policy = GPUFEED_LIST_PAD;
        else if (!strcmp(v, "truncate")) f->list_policy = GPUFEED_LIST_TRUNCATE;
        else { snprintf(msg, cap, "ragged=%s: needs error, pad or truncate", v); return -1; }
        return 1;
    }
#undef GF_CLI_KEY
    snprintf(msg, cap, "unknown option '%.*s' (hash, seed, fill, null, valid, cast, width, ragged, lengths, unit, missing, pack, positions, eos)", (int)kl, o);
    return -1;
}

/* Parses one --feature SPEC into *f; *column (malloc'ed, the caller frees)
   holds the column name f->column points to. 0, or -1 with a message. */
GF_CLI_FN int gf_cli_feature_parse(const char *spec, gpufeed_feature *f, char **column, char *msg, size_t cap)
{
    size_t end = strlen(spec);
    int have_dtype = 0;
    memset(f, 0, sizeof *f);
    *column = NULL;
    f->dtype = GPUFEED_DT_F32;
    /* options and the dtype, from the right */
    while (end > 0) {
        size_t start = end;
        int r;
        while (start > 0 && spec[start - 1] != ':') start--;
        if (start == 0) break; /* the first piece is the column */
        r = gf_cli_option(spec + start, end - start, f, msg, cap);
        if (r < 0) return -1;
        if (r == 0) {
            char dt[16];
            gpufeed_dtype d;
            size_t l = end - start;
            if (l < sizeof dt) { memcpy(dt, spec + start, l); dt[l] = 0; }
            if (l >= sizeof dt || gf_cli_dtype_parse(dt, &d) != 0) {
                if (!have_dtype && end != strlen(spec)) {
                    snprintf(msg, cap, "'%.*s' is neither a dtype (" GF_CLI_DTYPES ") nor an option", (int)l, spec + start);
                    return -1;
                }
                break; /* part of the column name */
            }
            f->dtype = d;
            have_dtype = 1;
            end = start - 1;
            break; /* the dtype ends the options; the rest is the column */
        }
        end = start - 1;
    }
    if (!have_dtype && end != strlen(spec)) { snprintf(msg, cap, "'%s': options need a dtype before them (COLUMN:DTYPE:OPTION...)", spec); return -1; }
    if (end == 0) { snprintf(msg, cap, "'%s': no column name", spec); return -1; }
    if (!have_dtype) { /* a typo after a dtype must not pass for a column name ("x:f32:valdi") */
        const char *q = spec;
        while ((q = (const char *)memchr(q, ':', end - (size_t)(q - spec))) != NULL) {
            const char *r = ++q, *e = (const char *)memchr(r, ':', end - (size_t)(r - spec));
            char dt[16];
            gpufeed_dtype d;
            size_t l = e ? (size_t)(e - r) : end - (size_t)(r - spec);
            if (e && l < sizeof dt) {
                memcpy(dt, r, l); dt[l] = 0;
                if (gf_cli_dtype_parse(dt, &d) == 0) { snprintf(msg, cap, "'%s': unknown option '%s' after the dtype", spec, e + 1); return -1; }
            }
        }
    }
    *column = (char *)malloc(end + 1);
    if (!*column) { snprintf(msg, cap, "out of memory"); return -1; }
    memcpy(*column, spec, end); (*column)[end] = 0;
    f->column = *column;
    if (f->list_lengths && f->width) { snprintf(msg, cap, "'%s': lengths and width=W make two features: give the column twice", spec); free(*column); *column = NULL; return -1; }
    if ((f->positions || f->use_eos) && !f->pack) { snprintf(msg, cap, "'%s': %s needs pack=T", spec, f->positions ? "positions" : "eos"); free(*column); *column = NULL; return -1; }
    return 0;
}

GF_CLI_FN int gf_cli_features_push(gf_cli_features *fs, const gpufeed_feature *f, char *name)
{
    if (fs->n == fs->cap) {
        int nc = fs->cap ? fs->cap * 2 : 8;
        gpufeed_feature *nf = (gpufeed_feature *)realloc(fs->f, (size_t)nc * sizeof *nf);
        char **nn;
        if (!nf) return -1;
        fs->f = nf;
        nn = (char **)realloc(fs->names, (size_t)nc * sizeof *nn);
        if (!nn) return -1;
        fs->names = nn; fs->cap = nc;
    }
    fs->f[fs->n] = *f;
    fs->names[fs->n] = name;
    fs->n++;
    return 0;
}

/* --feature SPEC: appends one feature (a packed column with positions: two,
   its tokens and their positions). 0, or -1 with a message. */
GF_CLI_FN int gf_cli_features_add(gf_cli_features *fs, const char *spec, char *msg, size_t cap)
{
    gpufeed_feature f;
    char *name;
    if (gf_cli_feature_parse(spec, &f, &name, msg, cap)) return -1;
    if (f.pack && f.positions) {
        char *name2 = (char *)malloc(strlen(name) + 1);
        gpufeed_feature pos = f;
        f.positions = 0;
        if (!name2 || gf_cli_features_push(fs, &f, name)) { free(name); free(name2); snprintf(msg, cap, "out of memory"); return -1; }
        strcpy(name2, name);
        pos.column = name2;
        if (gf_cli_features_push(fs, &pos, name2)) { free(name2); snprintf(msg, cap, "out of memory"); return -1; }
        return 0;
    }
    if (gf_cli_features_push(fs, &f, name)) { free(name); snprintf(msg, cap, "out of memory"); return -1; }
    return 0;
}

/* --columns a,b with one dtype (the older syntax): appends one feature per name */
GF_CLI_FN int gf_cli_features_columns(gf_cli_features *fs, const char *columns, gpufeed_dtype dt, char *msg, size_t cap)
{
    const char *p = columns;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        gpufeed_feature f;
        char *name = (char *)malloc(len + 1);
        if (!name) { snprintf(msg, cap, "out of memory"); return -1; }
        memcpy(name, p, len); name[len] = 0;
        memset(&f, 0, sizeof f);
        f.column = name; f.dtype = dt;
        if (!len) { free(name); snprintf(msg, cap, "--columns '%s': an empty column name", columns); return -1; }
        if (gf_cli_features_push(fs, &f, name)) { free(name); snprintf(msg, cap, "out of memory"); return -1; }
        p += len; if (*p == ',') p++;
    }
    return 0;
}

/* --mix PATH=WEIGHT (repeated): the sources of a mixture (gpufeed_loader_open_mixture).
   The weight is what follows the last '=' (a path may hold key=value
   directories), a finite number above 0. */
typedef struct gf_cli_mix {
    const char **paths;                /* point into argv's strings, cut at the '=' (copied) */
    char **own;
    double *weights;
    int n, cap;
} gf_cli_mix;

GF_CLI_FN int gf_cli_mix_add(void *target, const char *v, char *msg, size_t cap)
{
    gf_cli_mix *m = (gf_cli_mix *)target;
    const char *eq = strrchr(v, '=');
    char *end, *path;
    double w;
    if (!eq || eq == v) { snprintf(msg, cap, "needs PATH=WEIGHT, got '%.100s'", v); return -1; }
    w = strtod(eq + 1, &end);
    if (!eq[1] || *end || !(w > 0) || w > 1e300) { snprintf(msg, cap, "needs PATH=WEIGHT with a weight above 0, got '%.100s'", v); return -1; }
    if (m->n == m->cap) {
        int nc = m->cap ? m->cap * 2 : 4;
        const char **np = (const char **)realloc((void *)m->paths, (size_t)nc * sizeof *np);
        char **no;
        double *nw;
        if (!np) { snprintf(msg, cap, "out of memory"); return -1; }
        m->paths = np;
        no = (char **)realloc(m->own, (size_t)nc * sizeof *no);
        if (!no) { snprintf(msg, cap, "out of memory"); return -1; }
        m->own = no;
        nw = (double *)realloc(m->weights, (size_t)nc * sizeof *nw);
        if (!nw) { snprintf(msg, cap, "out of memory"); return -1; }
        m->weights = nw;
        m->cap = nc;
    }
    path = (char *)malloc((size_t)(eq - v) + 1);
    if (!path) { snprintf(msg, cap, "out of memory"); return -1; }
    memcpy(path, v, (size_t)(eq - v));
    path[eq - v] = 0;
    m->own[m->n] = path;
    m->paths[m->n] = path;
    m->weights[m->n] = w;
    m->n++;
    return 0;
}

GF_CLI_FN void gf_cli_mix_free(gf_cli_mix *m)
{
    int i;
    for (i = 0; i < m->n; i++) free(m->own[i]);
    free((void *)m->paths); free(m->own); free(m->weights);
    memset(m, 0, sizeof *m);
}

GF_CLI_FN void gf_cli_features_free(gf_cli_features *fs)
{
    int i;
    for (i = 0; i < fs->n; i++) free(fs->names[i]);
    free(fs->names); free(fs->f);
    memset(fs, 0, sizeof *fs);
}


/* ---- 1. flags ------------------------------------------------------------ */

enum {
    GF_CLI_FLAG = 0, GF_CLI_BITS, GF_CLI_INT, GF_CLI_I64, GF_CLI_U64, GF_CLI_SIZE, GF_CLI_NUM,
    GF_CLI_STR, GF_CLI_CHOICE, GF_CLI_DTYPE, GF_CLI_FEATURE, GF_CLI_CALL
};
enum { GF_CLI_REQUIRED = 1, GF_CLI_THREADS = 2 };

typedef struct gf_cli_opt {
    const char *name;                  /* "--batch" */
    char alias;                        /* 'n' for -n, or 0 */
    int kind;                          /* GF_CLI_* */
    void *target;
    const char *meta;                  /* the value's name in the help: "B" */
    const char *help;                  /* one line ('\n' continues it) */
    long long min, max;                /* integer kinds: the range (max 0: none) */
    const char *choices;               /* GF_CLI_CHOICE: "drop|pad" */
    unsigned long long value;          /* GF_CLI_FLAG / GF_CLI_BITS */
    int (*call)(void *target, const char *value, char *msg, size_t cap); /* GF_CLI_CALL */
    int flags;                         /* GF_CLI_REQUIRED | GF_CLI_THREADS */
    int seen;                          /* uses, counted by gf_cli_parse */
} gf_cli_opt;

typedef struct gf_cli_words { const char *c, *flag; } gf_cli_words;

typedef struct gf_cli {
    const char *prog;                  /* "gpufeed-bench" */
    const char *usage;                 /* what follows the name: "[options] PATH..." */
    const char *about;                 /* one line */
    gf_cli_opt *opts;
    int nopts;
    const char *head, *tail;           /* help text around the flags */
    const char *pos_name;              /* default "PATH" */
    const char *pos_help;              /* its help line (default: FILE|DIR|GLOB) */
    int min_pos;                       /* default 1; -1: none needed */
    const gf_cli_words *words;         /* the tool's C words -> flags, {0, 0} ended */
    const char *const *hints;          /* { "--flag", "hint", ..., NULL } */
    const char **pos;                  /* out: the other arguments */
    int npos;
} gf_cli;

GF_CLI_FN gf_cli_opt *gf_cli_find(gf_cli *c, const char *name)
{
    int i;
    for (i = 0; i < c->nopts; i++)
        if (!strcmp(c->opts[i].name, name)) return &c->opts[i];
    return NULL;
}

GF_CLI_FN int gf_cli_seen(gf_cli *c, const char *name)
{
    gf_cli_opt *o = gf_cli_find(c, name);
    return o ? o->seen : 0;
}

GF_CLI_FN void gf_cli_free(gf_cli *c)
{
    free((void *)c->pos);
    c->pos = NULL;
    c->npos = 0;
}

GF_CLI_FN const char *gf_cli_pos_name(const gf_cli *c) { return c->pos_name ? c->pos_name : "PATH"; }

/* "  --batch B" / "  -n, --limit N" into buf; its length */
GF_CLI_FN int gf_cli_opt_label(const gf_cli_opt *o, char *buf, size_t cap)
{
    char al[8] = "";
    if (o->alias) snprintf(al, sizeof al, "-%c, ", o->alias);
    return snprintf(buf, cap, "  %s%s%s%s", al, o->name, o->meta ? " " : "", o->meta ? o->meta : "");
}

/* label, then the text's lines from column `col` */
GF_CLI_FN void gf_cli_help_text(FILE *f, const char *label, const char *text, int col)
{
    int n = (int)strlen(label);
    fputs(label, f);
    if (!text || !*text) { fputc('\n', f); return; }
    if (n + 2 > col) { fputc('\n', f); n = 0; }
    while (*text) {
        const char *e = strchr(text, '\n');
        int len = e ? (int)(e - text) : (int)strlen(text);
        fprintf(f, "%*s%.*s\n", col - n, "", len, text);
        n = 0;
        text += len;
        if (*text) text++;
    }
}

GF_CLI_FN void gf_cli_help(const gf_cli *c, FILE *f)
{
    const int col = 26;
    char label[128];
    int i;
    fprintf(f, "usage: %s %s\n", c->prog, c->usage);
    if (c->about) fprintf(f, "%s\n", c->about);
    if (c->min_pos >= 0) {
        snprintf(label, sizeof label, "  %s", gf_cli_pos_name(c));
        gf_cli_help_text(f, label, c->pos_help ? c->pos_help : "FILE|DIR|GLOB: a .parquet file, a directory (its *.parquet, sorted)\nor a glob in quotes ('data/part-*.parquet', matches sorted)", col);
    }
    if (c->head) fputs(c->head, f);
    fprintf(f, "options:\n");
    for (i = 0; i < c->nopts; i++) {
        const gf_cli_opt *o = &c->opts[i];
        char text[1024];
        gf_cli_opt_label(o, label, sizeof label);
        snprintf(text, sizeof text, "%s%s", (o->flags & GF_CLI_REQUIRED) ? "required: " : "", o->help ? o->help : "");
        gf_cli_help_text(f, label, text, col);
    }
    gf_cli_help_text(f, "  -h, --help", "this text", col);
    gf_cli_help_text(f, "  --version", "the version (" GF_CLI_VERSION ")", col);
    if (c->tail) fputs(c->tail, f);
}

/* N with an optional K, M, G or T suffix (1024-based, "KiB"/"KB" too); -1 when malformed */
GF_CLI_FN long long gf_cli_parse_size(const char *s)
{
    char *e;
    long long v, m = 1;
    if (*s < '0' || *s > '9') return -1;
    errno = 0;
    v = strtoll(s, &e, 10);
    if (e == s || v < 0 || errno) return -1;
    if (*e == 'K' || *e == 'k') m = 1ll << 10;
    else if (*e == 'M' || *e == 'm') m = 1ll << 20;
    else if (*e == 'G' || *e == 'g') m = 1ll << 30;
    else if (*e == 'T' || *e == 't') m = 1ll << 40;
    else if (*e) return -1;
    if (*e && e[1] && strcmp(e + 1, "iB") && strcmp(e + 1, "B")) return -1;
    if (v > (1ll << 62) / m) return -1;
    return v * m;
}

/* an integer option's value into its target: 0, or -1 with "needs ..." in msg */
GF_CLI_FN int gf_cli_set_int(gf_cli_opt *o, const char *v, char *msg, size_t cap)
{
    long long hi = o->max > 0 ? o->max : LLONG_MAX;
    int well_formed, in_range;
    char *e = NULL;
    char need[96];
    if (o->kind == GF_CLI_INT && hi > INT32_MAX) hi = INT32_MAX;
    errno = 0;
    if (o->kind == GF_CLI_U64) {
        unsigned long long u = 0;
        well_formed = *v >= '0' && *v <= '9';
        if (well_formed) u = strtoull(v, &e, 10);
        well_formed = well_formed && !*e && !errno;
        in_range = u >= (unsigned long long)(o->min > 0 ? o->min : 0) && (o->max <= 0 || u <= (unsigned long long)hi);
        if (well_formed && in_range) { *(uint64_t *)o->target = (uint64_t)u; return 0; }
    } else {
        long long x = strtoll(v, &e, 10);
        well_formed = *v && !*e && !errno;
        in_range = x >= o->min && x <= hi;
        if (well_formed && in_range) {
            if (o->kind == GF_CLI_INT) *(int32_t *)o->target = (int32_t)x;
            else *(int64_t *)o->target = (int64_t)x;
            return 0;
        }
    }
    if (o->max > 0 || (well_formed && hi == INT32_MAX)) snprintf(need, sizeof need, "needs an integer in [%lld, %lld]", o->min, hi);
    else if (o->min == 1) snprintf(need, sizeof need, "needs a positive integer");
    else if (o->min == 0) snprintf(need, sizeof need, "needs a non-negative integer");
    else snprintf(need, sizeof need, "needs an integer >= %lld", o->min);
    snprintf(msg, cap, "%s, got '%.100s'", need, v);
    return -1;
}

/* one value into o->target: 0, or -1 with what is wrong in msg */
GF_CLI_FN int gf_cli_set(gf_cli_opt *o, const char *v, char *msg, size_t cap)
{
    char *e;
    switch (o->kind) {
    case GF_CLI_INT: case GF_CLI_I64: case GF_CLI_U64:
        return gf_cli_set_int(o, v, msg, cap);
    case GF_CLI_SIZE: {
        const int none = o->min < 0 && strcmp(v, "-1") == 0; /* -1: where min allows it (no bound) */
        long long x = none ? -1 : gf_cli_parse_size(v);
        if ((x < 0 && !none) || x < o->min) {
            snprintf(msg, cap, "needs a %ssize (bytes, or with K, M, G, T), got '%.100s'", o->min > 0 ? "positive " : "", v);
            return -1;
        }
        *(int64_t *)o->target = (int64_t)x;
        return 0;
    }
    case GF_CLI_NUM: {
        double d = strtod(v, &e);
        if (!*v || *e) { snprintf(msg, cap, "needs a number, got '%.100s'", v); return -1; }
        *(double *)o->target = d;
        return 0;
    }
    case GF_CLI_STR:
        *(const char **)o->target = v;
        return 0;
    case GF_CLI_CHOICE: {
        const char *p = o->choices;
        int k = 0;
        size_t n = strlen(v);
        while (p && *p) {
            const char *bar = strchr(p, '|');
            size_t len = bar ? (size_t)(bar - p) : strlen(p);
            if (len == n && !memcmp(p, v, n)) { *(int32_t *)o->target = k; return 0; }
            k++;
            p += len;
            if (*p) p++;
        }
        {   /* "needs drop or pad" / "needs error, pad or truncate" */
            char list[256] = "";
            const char *q = o->choices;
            int i = 0;
            size_t at = 0;
            while (q && *q && at < sizeof list - 1) {
                const char *bar = strchr(q, '|');
                size_t len = bar ? (size_t)(bar - q) : strlen(q);
                at += (size_t)snprintf(list + at, sizeof list - at, "%s%.*s", i == 0 ? "" : (bar ? ", " : " or "), (int)len, q);
                i++;
                q += len;
                if (*q) q++;
            }
            snprintf(msg, cap, "needs %s, got '%.100s'", list, v);
        }
        return -1;
    }
    case GF_CLI_DTYPE:
        if (gf_cli_dtype_parse(v, (gpufeed_dtype *)o->target)) {
            snprintf(msg, cap, "needs " GF_CLI_DTYPES ", got '%.100s'", v);
            return -1;
        }
        return 0;
    case GF_CLI_FEATURE: {
        char m2[256];
        if (gf_cli_features_add((gf_cli_features *)o->target, v, m2, sizeof m2)) {
            snprintf(msg, cap, "'%.200s': %s", v, m2);
            return -1;
        }
        return 0;
    }
    case GF_CLI_CALL:
        return o->call(o->target, v, msg, cap);
    default:
        snprintf(msg, cap, "is declared with an unknown kind %d", o->kind);
        return -1;
    }
}

/* the edit distance of two short strings (for "did you mean") */
GF_CLI_FN int gf_cli_distance(const char *a, const char *b)
{
    int d[64], i, j, la = (int)strlen(a), lb = (int)strlen(b);
    if (la > 62 || lb > 62) return 99;
    for (j = 0; j <= lb; j++) d[j] = j;
    for (i = 1; i <= la; i++) {
        int prev = d[0], cur;
        d[0] = i;
        for (j = 1; j <= lb; j++) {
            cur = d[j];
            d[j] = prev + (a[i - 1] != b[j - 1]);
            if (d[j - 1] + 1 < d[j]) d[j] = d[j - 1] + 1;
            if (cur + 1 < d[j]) d[j] = cur + 1;
            prev = cur;
        }
    }
    return d[lb];
}

GF_CLI_FN void gf_cli_unknown(const gf_cli *c, const char *a)
{
    char name[128];
    const char *best = NULL, *hint = NULL;
    int i, bd = 3;
    size_t n = strcspn(a, "=");
    if (n >= sizeof name) n = sizeof name - 1;
    memcpy(name, a, n);
    name[n] = 0;
    for (i = 0; c->hints && c->hints[i] && c->hints[i + 1]; i += 2)
        if (!strcmp(c->hints[i], name)) hint = c->hints[i + 1];
    for (i = 0; !hint && n >= 5 && i < c->nopts; i++) {
        int d = gf_cli_distance(name, c->opts[i].name);
        if (d < bd) { bd = d; best = c->opts[i].name; }
    }
    if (hint) fprintf(stderr, "%s: unknown option '%.100s' (%s)\n", c->prog, name, hint);
    else if (best) fprintf(stderr, "%s: unknown option '%.100s' (did you mean %s? %s --help lists them)\n", c->prog, name, best, c->prog);
    else fprintf(stderr, "%s: unknown option '%.100s' (%s --help lists them)\n", c->prog, name, c->prog);
}

GF_CLI_FN long gf_cli_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

/* Parses argv[first..]: GF_CLI_RUN, or the exit code to return now (0
   after --help or --version, 2 after a usage error, with its message). */
GF_CLI_FN int gf_cli_parse(gf_cli *c, int argc, char **argv, int first)
{
    int i, nomore = 0;
    char msg[512];
    c->npos = 0;
    c->pos = (const char **)calloc((size_t)(argc > 0 ? argc : 1), sizeof *c->pos);
    if (!c->pos) { fprintf(stderr, "%s: out of memory\n", c->prog); return 1; }
    for (i = first; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        gf_cli_opt *o = NULL;
        int k;
        if (nomore || a[0] != '-' || a[1] == 0) { c->pos[c->npos++] = a; continue; }
        if (!strcmp(a, "--")) { nomore = 1; continue; }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { gf_cli_help(c, stdout); return fflush(stdout) ? 1 : 0; }
        if (!strcmp(a, "--version")) { printf("%s %s\n", c->prog, GF_CLI_VERSION); return fflush(stdout) ? 1 : 0; }
        {   /* the whole name ("--batch", "-o"), else a one-letter alias ("-n 5", "-n5") */
            size_t n = a[1] == '-' ? strcspn(a, "=") : strlen(a);
            for (k = 0; k < c->nopts && !o; k++)
                if (strlen(c->opts[k].name) == n && !memcmp(c->opts[k].name, a, n)) o = &c->opts[k];
            if (o && a[n] == '=') v = a + n + 1;
            for (k = 0; !o && a[1] != '-' && k < c->nopts; k++)
                if (c->opts[k].alias && c->opts[k].alias == a[1]) o = &c->opts[k];
            if (o && !v && a[1] != '-' && a[2] && strcmp(o->name, a)) {
                if (o->kind == GF_CLI_FLAG || o->kind == GF_CLI_BITS) o = NULL;
                else v = a + 2;
            }
        }
        if (!o) { gf_cli_unknown(c, a); return 2; }
        o->seen++;
        if (o->kind == GF_CLI_FLAG || o->kind == GF_CLI_BITS) {
            if (v) { fprintf(stderr, "%s: %s takes no value\n", c->prog, o->name); return 2; }
            if (o->kind == GF_CLI_FLAG) *(int32_t *)o->target = o->value ? (int32_t)o->value : 1;
            else *(uint32_t *)o->target |= (uint32_t)o->value;
            continue;
        }
        {
            char typed[8];
            const char *as = o->name;   /* the flag as typed: "-n" or "--limit" */
            if (a[1] != '-' && strcmp(o->name, a)) { snprintf(typed, sizeof typed, "-%c", a[1]); as = typed; }
            if (!v) {
                if (i + 1 >= argc) {
                    fprintf(stderr, "%s: %s needs a value%s%s%s\n", c->prog, as, o->meta ? " (" : "", o->meta ? o->meta : "", o->meta ? ")" : "");
                    return 2;
                }
                v = argv[++i];
            }
            if (gf_cli_set(o, v, msg, sizeof msg)) {
                fprintf(stderr, "%s: %s %s\n", c->prog, as, msg);
                return 2;
            }
        }
    }
    for (i = 0; i < c->nopts; i++)
        if ((c->opts[i].flags & GF_CLI_REQUIRED) && !c->opts[i].seen) {
            fprintf(stderr, "%s: %s is required (%s --help lists the flags)\n", c->prog, c->opts[i].name, c->prog);
            return 2;
        }
    if (c->min_pos >= 0 && c->npos < (c->min_pos ? c->min_pos : 1)) {
        fprintf(stderr, "%s: no %s given (%s --help shows the usage)\n", c->prog, gf_cli_pos_name(c), c->prog);
        return 2;
    }
    for (i = 0; i < c->nopts; i++) {
        const gf_cli_opt *o = &c->opts[i];
        long cores;
        if (!(o->flags & GF_CLI_THREADS) || !o->seen || o->kind != GF_CLI_INT) continue;
        cores = gf_cli_cores();
        if (*(const int32_t *)o->target > 4 * cores)
            fprintf(stderr, "%s: warning: %s %d is more than 4 x the %ld online cores: most threads will wait for a core\n",
                    c->prog, o->name, (int)*(const int32_t *)o->target, cores);
    }
    return GF_CLI_RUN;
}

/* ---- 2. messages --------------------------------------------------------- */

GF_CLI_FN int gf_cli_ident(char ch) { return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9'); }

/* msg with the C words replaced (whole words only), into out */
GF_CLI_FN void gf_cli_translate(const gf_cli *c, const char *msg, char *out, size_t cap)
{
    /* the library's C words, as the tools' flags say them (after a tool's own) */
    static const gf_cli_words gf_cli_shared_words[] = {
        { "set hash_buckets to hash its values", "hash it with --feature COLUMN:i32:hash=N" },
        { "hash_buckets applies to byte and integer columns", "hash=N applies to byte and integer columns" },
        { "set the feature's width", "give the feature a width (--feature COLUMN:DTYPE:width=W)" },
        { "raise ring_depth and set prefill", "raise --ring-depth and give --prefill" },
        { "mapped (without GPUFEED_OPEN_PREAD)", "mapped (leave out --pread)" },
        { "(gpufeed_cache_build, gpufeed-cache build)", "(gpufeed-cache build)" },
        { "gpufeed_dataset_desc.unit_rows", "--unit-rows" },
        { "elastic mode (global_batch_rows)", "elastic mode (--global-batch)" },
        { "even = GPUFEED_EVEN_DROP_ANY", "--even drop-any" },
        { "even = GPUFEED_EVEN_DROP", "--even drop" },
        { "even = GPUFEED_EVEN_PAD", "--even pad" },
        { "dir_max_bytes", "--max-bytes" },
        { "batch_rows", "--batch" },
        { "unit_rows", "--unit-rows" },
        { "ring_depth", "--ring-depth" },
        { "shuffle_window", "--shuffle-window" },
        { "start_batch", "--start-batch" },
        { "start_epoch", "--start-epoch" },
        { "ram_bytes", "--cache-ram" },
        { NULL, NULL }
    };
    static const char *const prefixes[] = { "dataset: ", "loader: ", "reader: " };
    size_t o = 0;
    const char *p = msg;
    int k;
    for (k = 0; k < 3; k++)
        if (!strncmp(p, prefixes[k], strlen(prefixes[k]))) { p += strlen(prefixes[k]); break; }
    while (*p && o + 1 < cap) {
        const gf_cli_words *w = NULL;
        int pass;
        for (pass = 0; pass < 2 && !w; pass++) {
            const gf_cli_words *t = pass ? gf_cli_shared_words : c->words;
            for (; t && t->c && !w; t++) {
                size_t n = strlen(t->c);
                if (strncmp(p, t->c, n)) continue;
                if (gf_cli_ident(t->c[0]) && p > msg && gf_cli_ident(p[-1])) continue;
                if (gf_cli_ident(t->c[n - 1]) && gf_cli_ident(p[n])) continue;
                w = t;
            }
        }
        if (w) {
            size_t n = strlen(w->flag);
            if (o + n >= cap) break;
            memcpy(out + o, w->flag, n);
            o += n;
            p += strlen(w->c);
        } else out[o++] = *p++;
    }
    out[o] = 0;
}

/* "TOOL: MSG" on stderr, MSG in flag words */
GF_CLI_FN void gf_cli_error(const gf_cli *c, const char *msg)
{
    char out[2048];
    gf_cli_translate(c, msg, out, sizeof out);
    fprintf(stderr, "%s: %s\n", c->prog, out);
}

/* ---- 3. progress ----------------------------------------------------------- */

typedef struct gf_cli_progress {
    int tty;                           /* stderr is a terminal */
    double t0, last;                   /* start, last live line */
    int len;                           /* the live line's length (0: none shown) */
} gf_cli_progress;

/* This process's peak resident set in MiB: VmHWM of /proc/self/status
   (Linux: the process's own, from its exec on), else getrusage's
   ru_maxrss, which also counts the parent's high-water mark when the
   parent started it with vfork (a Python parent that once held a GiB makes
   every child it starts report a GiB) */
GF_CLI_FN double gf_cli_peak_rss_mib(void)
{
    struct rusage ru;
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6)) { kb = atoll(line + 6); break; }
    if (f) fclose(f);
    if (kb >= 0) return (double)kb / 1024.0;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

GF_CLI_FN double gf_cli_now(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

GF_CLI_FN void gf_cli_progress_start(gf_cli_progress *p)
{
    memset(p, 0, sizeof *p);
    p->tty = isatty(2);
    p->t0 = gf_cli_now();
    p->last = -1;
}

/* a live line is due: a terminal, and 0.2 s since the last one (the first at once) */
GF_CLI_FN int gf_cli_progress_due(gf_cli_progress *p)
{
    double t;
    if (!p->tty) return 0;
    t = gf_cli_now();
    if (p->last >= 0 && t - p->last < 0.2) return 0;
    p->last = t;
    return 1;
}

/* the live line ("\r" + text, padded over the previous one) */
GF_CLI_FN GF_CLI_PRINTF(2, 3) void gf_cli_progress_line(gf_cli_progress *p, const char *fmt, ...)
{
    char line[256];
    va_list ap;
    int n;
    if (!p->tty) return;
    va_start(ap, fmt);
    n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (n >= (int)sizeof line) n = (int)sizeof line - 1;
    fprintf(stderr, "\r%s%*s", line, p->len > n ? p->len - n : 0, "");
    fflush(stderr);
    p->len = n;
}

/* erases the live line: what follows (the summary) starts at column 0 */
GF_CLI_FN void gf_cli_progress_done(gf_cli_progress *p)
{
    if (p->tty && p->len) { fprintf(stderr, "\r%*s\r", p->len, ""); fflush(stderr); }
    p->len = 0;
}

#endif
