/* gf_cli.h -- the feature syntax shared by gpufeed's command-line tools.

   One feature per --feature option, in the order given:

       --feature COLUMN:DTYPE[:OPTION...]

   DTYPE is f32, f64, f16, bf16, i32, i64 or u8 (as gpufeed_dtype_parse).
   OPTIONs (any order) set the fields of gpufeed_feature:

       hash=N            STRING/BINARY/FLBA: id = hash % N (hash_buckets)
       seed=S            the hash's seed (hash_seed)
       fill=V            the value written for nulls (fill)
       null=fill|error   null_policy
       valid             also a uint8 validity mask per row (validity)
       cast=safe|unsafe  cast
       width=W           list columns: W elements per row (width)
       ragged=error|pad|truncate   lists of another length (list_policy)
       lengths           one value per row: the list's length (list_lengths)

   e.g. --feature dep_delay:f32 --feature carrier:i32:hash=1000
        --feature emb.list.element:f32:width=8:ragged=pad
   A column name may itself contain ':' (the options and the dtype are taken
   from the right). The cache's description (gpufeed-cache ls) prints
   features in the same syntax.

   Include after gpufeed.h in a tool (one translation unit); every function
   is static. */
#ifndef GF_CLI_H
#define GF_CLI_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#if defined(__GNUC__) || defined(__clang__)
#define GF_CLI_FN static __attribute__((unused))
#else
#define GF_CLI_FN static
#endif

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
        return 0;
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
    if (GF_CLI_KEY("ragged")) {
        if (!strcmp(v, "error")) f->list_policy = GPUFEED_LIST_ERROR;
        else if (!strcmp(v, "pad")) f->list_policy = GPUFEED_LIST_PAD;
        else if (!strcmp(v, "truncate")) f->list_policy = GPUFEED_LIST_TRUNCATE;
        else { snprintf(msg, cap, "ragged=%s: needs error, pad or truncate", v); return -1; }
        return 1;
    }
#undef GF_CLI_KEY
    snprintf(msg, cap, "unknown option '%.*s' (hash, seed, fill, null, valid, cast, width, ragged, lengths)", (int)kl, o);
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
            if (l >= sizeof dt || gpufeed_dtype_parse(dt, &d) != 0) {
                if (!have_dtype && end != strlen(spec)) {
                    snprintf(msg, cap, "'%.*s' is neither a dtype (f32, f64, f16, bf16, i32, i64, u8) nor an option", (int)l, spec + start);
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
                if (gpufeed_dtype_parse(dt, &d) == 0) { snprintf(msg, cap, "'%s': unknown option '%s' after the dtype", spec, e + 1); return -1; }
            }
        }
    }
    *column = (char *)malloc(end + 1);
    if (!*column) { snprintf(msg, cap, "out of memory"); return -1; }
    memcpy(*column, spec, end); (*column)[end] = 0;
    f->column = *column;
    if (f->list_lengths && f->width) { snprintf(msg, cap, "'%s': lengths and width=W make two features: give the column twice", spec); free(*column); *column = NULL; return -1; }
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

/* --feature SPEC: appends one feature. 0, or -1 with a message. */
GF_CLI_FN int gf_cli_features_add(gf_cli_features *fs, const char *spec, char *msg, size_t cap)
{
    gpufeed_feature f;
    char *name;
    if (gf_cli_feature_parse(spec, &f, &name, msg, cap)) return -1;
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

GF_CLI_FN void gf_cli_features_free(gf_cli_features *fs)
{
    int i;
    for (i = 0; i < fs->n; i++) free(fs->names[i]);
    free(fs->names); free(fs->f);
    memset(fs, 0, sizeof *fs);
}

#endif
