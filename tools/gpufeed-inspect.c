/* gpufeed-inspect: the metadata of Parquet files, through gpufeed.h.

   Build:  cc -O2 -I. tools/gpufeed-inspect.c -o gpufeed-inspect -lpthread -lm
   Usage:  gpufeed-inspect [meta|schema|rowcount] [options] PATH...

   Commands (as in parquet-tools and pqrs; the word `meta` may be left out):
     meta       the whole report (the default): file size, writer, rows,
                key/value metadata, the schema tree with physical and
                logical types, and per row group and column chunk: codec,
                encodings, compressed/uncompressed sizes, page count, values,
                nulls and min .. max statistics
     schema     the schema as a Parquet message type, the text parquet-mr
                and parquet-tools print:
                  message schema {
                    optional int64 id;
                    optional binary name (STRING);
                    optional int64 ts (TIMESTAMP(MICROS,true));
                  }
                (lower-case physical type, fixed_len_byte_array(N), the
                annotation in parentheses, " = N" for a field id)
     rowcount   the number of rows of all the files together: one integer
   Options:
     --pages    meta: also list every page of every column chunk
     --raw      meta: statistics of DATE, TIME, TIMESTAMP and INT96 columns
                as stored integers (days, the column's unit, nanoseconds)
                instead of ISO-8601 text (the rules of gpufeed-cat)
     --json     JSON instead of text: meta and schema one object per file,
                a line each (JSON Lines); rowcount {"rows": N, "files": N}
     -h, --help this text
     --version  the version
   PATH is a Parquet file, a directory (its *.parquet files, sorted) or a
   glob in quotes, expanded as the dataset API expands them. Several files:
   meta prints one report after another; schema prints the schema once when
   every file has the same, else each under a `==> PATH <==` line; rowcount
   adds them up. The first file that cannot be read stops the run. A file
   named like a command: ./schema. Rows themselves: gpufeed-cat.

   Exit status: 0; 1 when a file cannot be read (one line on stderr naming
   it and the problem); 2 on a usage error. */
#define GPUFEED_IMPLEMENTATION
#include "../gpufeed.h"
#include "gf_cli.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- ISO-8601 text of temporal statistics (gpufeed-cat's rules) ---- */

static int64_t floor_div(int64_t a, int64_t d, int64_t *rem)
{
    int64_t q = a / d, r = a % d;
    if (r < 0) { q--; r += d; }
    *rem = r;
    return q;
}

/* the proleptic Gregorian date `days` after 1970-01-01 (counted from
   0000-03-01: 146097 days an era, 36524 a century, 1461 a 4-year block) */
static void civil_date(int64_t days, int64_t *year, int *month, int *day)
{
    static const int mlen[12] = { 31, 30, 31, 30, 31, 31, 30, 31, 30, 31, 31, 29 };
    int64_t doe, era = floor_div(days + 719468, 146097, &doe);
    int64_t c = doe / 36524, q, y, doy;
    int m = 0;
    if (c > 3) c = 3;
    doe -= c * 36524;
    q = doe / 1461;
    doe -= q * 1461;
    y = doe / 365;
    if (y > 3) y = 3;
    doy = doe - y * 365;
    while (doy >= mlen[m]) { doy -= mlen[m]; m++; }
    *year = era * 400 + c * 100 + q * 4 + y + (m >= 10);
    *month = m < 10 ? m + 3 : m - 9;
    *day = (int)doy + 1;
}

static int date_text(int64_t days, char *buf, size_t cap)
{
    int64_t y;
    int m, d;
    civil_date(days, &y, &m, &d);
    if (y >= 0 && y <= 9999) return snprintf(buf, cap, "%04d-%02d-%02d", (int)y, m, d);
    return snprintf(buf, cap, "%c%04lld-%02d-%02d", y < 0 ? '-' : '+', (long long)(y < 0 ? -y : y), m, d);
}

static void clock_text(int64_t sod, int64_t frac, gpufeed_time_unit u, int utc, char *buf, size_t cap)
{
    int digits = u == GPUFEED_UNIT_MILLIS ? 3 : u == GPUFEED_UNIT_MICROS ? 6 : 9;
    snprintf(buf, cap, "%02d:%02d:%02d.%0*lld%s", (int)(sod / 3600), (int)(sod / 60 % 60), (int)(sod % 60),
             digits, (long long)frac, utc ? "Z" : "");
}

static int64_t per_second(gpufeed_time_unit u)
{
    return u == GPUFEED_UNIT_MILLIS ? 1000 : u == GPUFEED_UNIT_MICROS ? 1000000 : 1000000000;
}

static void timestamp_text(int64_t v, gpufeed_time_unit u, int utc, char *buf, size_t cap)
{
    int64_t frac, sod, secs = floor_div(v, per_second(u), &frac);
    int64_t days = floor_div(secs, 86400, &sod);
    int n = date_text(days, buf, cap);
    if (n > 0 && (size_t)n + 1 < cap) {
        buf[n] = 'T';
        clock_text(sod, frac, u, utc, buf + n + 1, cap - (size_t)n - 1);
    }
}

/* v as the temporal type of n (ISO-8601); 0 when n is not temporal or v is
   not a time of day */
static int temporal_text(const gpufeed_schema_node *n, int64_t v, char *buf, size_t cap)
{
    if (n->physical == GPUFEED_INT96) { timestamp_text(v, GPUFEED_UNIT_NANOS, 0, buf, cap); return 1; }
    if (n->logical == GPUFEED_LT_DATE) { date_text(v, buf, cap); return 1; }
    if (n->logical == GPUFEED_LT_TIMESTAMP) { timestamp_text(v, n->unit, n->is_adjusted_to_utc, buf, cap); return 1; }
    if (n->logical == GPUFEED_LT_TIME && v >= 0 && v < 86400 * per_second(n->unit)) {
        clock_text(v / per_second(n->unit), v % per_second(n->unit), n->unit, n->is_adjusted_to_utc, buf, cap);
        return 1;
    }
    return 0;
}


/* ---- meta ---- */

static void logical_text(const gpufeed_schema_node *n, char *buf, size_t cap)
{
    const char *u = n->unit == GPUFEED_UNIT_MILLIS ? "MILLIS" : n->unit == GPUFEED_UNIT_MICROS ? "MICROS" :
                    n->unit == GPUFEED_UNIT_NANOS ? "NANOS" : "?";
    switch (n->logical) {
    case GPUFEED_LT_NONE: buf[0] = 0; break;
    case GPUFEED_LT_DECIMAL: snprintf(buf, cap, "DECIMAL(%d,%d)", n->precision, n->scale); break;
    case GPUFEED_LT_TIME: snprintf(buf, cap, "TIME(%s,%s)", u, n->is_adjusted_to_utc ? "utc" : "local"); break;
    case GPUFEED_LT_TIMESTAMP: snprintf(buf, cap, "TIMESTAMP(%s,%s)", u, n->is_adjusted_to_utc ? "utc" : "local"); break;
    case GPUFEED_LT_INTEGER: snprintf(buf, cap, "INTEGER(%d,%s)", n->int_bit_width, n->int_signed ? "signed" : "unsigned"); break;
    default: snprintf(buf, cap, "%s", gpufeed_logical_type_name(n->logical)); break;
    }
}

/* a statistics value, decoded by the column's type */
static void stat_text(const gpufeed_schema_node *n, const uint8_t *p, uint32_t len, int raw, char *buf, size_t cap)
{
    static const char hx[] = "0123456789abcdef";
    int32_t i32; int64_t i64; float f; double d;
    size_t i, o = 0;
    switch (n->physical) {
    case GPUFEED_BOOLEAN: if (len >= 1) { snprintf(buf, cap, "%s", p[0] ? "true" : "false"); return; } break;
    case GPUFEED_INT32:
        if (len == 4) {
            memcpy(&i32, p, 4);
            if (!raw && temporal_text(n, i32, buf, cap)) return;
            if (n->logical == GPUFEED_LT_INTEGER && !n->int_signed) snprintf(buf, cap, "%u", (unsigned)i32);
            else snprintf(buf, cap, "%d", i32);
            return;
        }
        break;
    case GPUFEED_INT64:
        if (len == 8) {
            memcpy(&i64, p, 8);
            if (!raw && temporal_text(n, i64, buf, cap)) return;
            if (n->logical == GPUFEED_LT_INTEGER && !n->int_signed) snprintf(buf, cap, "%llu", (unsigned long long)i64);
            else snprintf(buf, cap, "%lld", (long long)i64);
            return;
        }
        break;
    case GPUFEED_INT96:
        if (len == 12) {
            i64 = gpufeed_int96_to_ns(p);
            if (raw) snprintf(buf, cap, "%lld", (long long)i64);
            else temporal_text(n, i64, buf, cap);
            return;
        }
        break;
    case GPUFEED_FLOAT: if (len == 4) { memcpy(&f, p, 4); snprintf(buf, cap, "%.9g", f); return; } break;
    case GPUFEED_DOUBLE: if (len == 8) { memcpy(&d, p, 8); snprintf(buf, cap, "%.17g", d); return; } break;
    case GPUFEED_BYTE_ARRAY:
        if (n->logical == GPUFEED_LT_STRING || n->logical == GPUFEED_LT_ENUM || n->logical == GPUFEED_LT_JSON) {
            buf[o++] = '"';
            for (i = 0; i < len && o + 6 < cap; i++) buf[o++] = (p[i] >= 32 && p[i] < 127) ? (char)p[i] : '?';
            if (i < len) { buf[o++] = '.'; buf[o++] = '.'; }
            buf[o++] = '"'; buf[o] = 0;
            return;
        }
        break;
    default: break;
    }
    buf[o++] = '0'; buf[o++] = 'x';
    for (i = 0; i < len && o + 5 < cap; i++) { buf[o++] = hx[p[i] >> 4]; buf[o++] = hx[p[i] & 15]; }
    if (i < len) { buf[o++] = '.'; buf[o++] = '.'; }
    buf[o] = 0;
}

static void human(double b, char *buf, size_t cap)
{
    const char *u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    int i = 0;
    while (b >= 1024 && i < 4) { b /= 1024; i++; }
    snprintf(buf, cap, i ? "%.1f %s" : "%.0f %s", b, u[i]);
}

static void print_header(const char *path, const gpufeed_metadata *md)
{
    char b1[64];
    int i;
    human((double)md->file_size, b1, sizeof b1);
    printf("file:        %s\n", path);
    printf("size:        %llu bytes (%s), footer %u bytes\n", (unsigned long long)md->file_size, b1, md->footer_length);
    printf("created_by:  %s\n", md->created_by ? md->created_by : "(not stated)");
    printf("version:     %d\n", md->version);
    printf("rows:        %lld\n", (long long)md->num_rows);
    printf("row groups:  %d\n", md->num_row_groups);
    printf("columns:     %d\n", md->num_columns);
    for (i = 0; i < md->num_key_values; i++) {
        const char *v = md->key_values[i].value;
        size_t n = v ? strlen(v) : 0;
        printf("key/value:   %s = ", md->key_values[i].key);
        if (!v) printf("(null)\n");
        else if (n > 60) printf("(%zu bytes)\n", n);
        else printf("%s\n", v);
    }
}

static void print_tree(const gpufeed_metadata *md)
{
    static const char *const rep[] = { "required", "optional", "repeated" };
    int i;
    printf("\nschema:\n");
    for (i = 0; i < md->num_nodes; i++) {
        const gpufeed_schema_node *n = &md->nodes[i];
        char lt[128];
        logical_text(n, lt, sizeof lt);
        printf("%*s", 2 + 2 * n->depth, "");
        if (i == 0) { printf("%s (root, %d fields)\n", n->name, n->num_children); continue; }
        printf("%s %s", rep[n->repetition], n->name);
        if (n->physical == GPUFEED_GROUP) printf(" (group%s%s, %d fields)", lt[0] ? " " : "", lt, n->num_children);
        else {
            printf(": %s", gpufeed_physical_type_name(n->physical));
            if (n->physical == GPUFEED_FIXED_LEN_BYTE_ARRAY) printf("(%d)", n->type_length);
            if (lt[0]) printf(" %s", lt);
            printf("  [column %d, max def %d, max rep %d]", n->column, n->max_def, n->max_rep);
        }
        if (n->has_field_id) printf(" id=%d", n->field_id);
        printf("\n");
    }
}

static void print_pages(gpufeed_file *f, int32_t rg, int32_t c, int64_t npages)
{
    static const char *const pt[] = { "DATA_PAGE", "INDEX_PAGE", "DICTIONARY_PAGE", "DATA_PAGE_V2" };
    gpufeed_page_info *pi = (gpufeed_page_info *)malloc((size_t)npages * sizeof *pi);
    gpufeed_error err;
    int64_t k, got = 0;
    if (pi && gpufeed_chunk_pages(f, rg, c, pi, npages, &got, &err) == GPUFEED_OK) {
        for (k = 0; k < got && k < npages; k++)
            printf("      page %lld: %-15s offset %lld, header %d, compressed %d, uncompressed %d, values %d, %s%s\n",
                   (long long)k, (pi[k].type >= 0 && pi[k].type <= 3) ? pt[pi[k].type] : "UNKNOWN",
                   (long long)pi[k].offset, pi[k].header_size, pi[k].compressed_size, pi[k].uncompressed_size,
                   pi[k].num_values, gpufeed_encoding_name(pi[k].encoding), pi[k].has_crc ? ", crc" : "");
    }
    free(pi);
}

/* one column chunk's line (and its pages); 0, or 1 after a message */
static int print_chunk(gpufeed_file *f, int32_t rg, int32_t c, int show_pages, int raw)
{
    const gpufeed_metadata *md = gpufeed_file_metadata(f);
    const gpufeed_chunk_info *ch = &md->row_groups[rg].chunks[c];
    const gpufeed_schema_node *n = &md->nodes[md->columns[c].node];
    char enc[256], mn[96], mx[96], nulls[32];
    gpufeed_error err;
    int64_t npages = 0;
    size_t o = 0;
    int e, rc = 0;
    if (ch->encrypted || !ch->has_metadata) {
        printf("  %-28s %s\n", md->columns[c].path, ch->encrypted ? "(encrypted)" : "(no metadata)");
        return 0;
    }
    enc[0] = 0;
    for (e = 0; e < 32; e++)
        if (ch->encodings & (1u << e)) o += (size_t)snprintf(enc + o, sizeof enc - o, "%s%s", o ? "," : "", gpufeed_encoding_name((gpufeed_encoding)e));
    if (gpufeed_chunk_pages(f, rg, c, NULL, 0, &npages, &err)) {
        fprintf(stderr, "gpufeed-inspect: %s\n", err.message);
        rc = 1;
    }
    mn[0] = mx[0] = 0;
    strcpy(nulls, "-");
    if (ch->has_statistics) {
        const gpufeed_statistics *s = &ch->statistics;
        if (s->has_min_value) stat_text(n, s->min_value, s->min_value_len, raw, mn, sizeof mn);
        else if (s->has_min_legacy) stat_text(n, s->min_legacy, s->min_legacy_len, raw, mn, sizeof mn);
        if (s->has_max_value) stat_text(n, s->max_value, s->max_value_len, raw, mx, sizeof mx);
        else if (s->has_max_legacy) stat_text(n, s->max_legacy, s->max_legacy_len, raw, mx, sizeof mx);
        if (s->has_null_count) snprintf(nulls, sizeof nulls, "%lld", (long long)s->null_count);
    }
    printf("  %-28s %-12s %-44s %12lld %12lld %6lld %9lld %9s  %s%s%s\n", md->columns[c].path,
           gpufeed_codec_name(ch->codec), enc, (long long)ch->total_compressed_size,
           (long long)ch->total_uncompressed_size, (long long)npages, (long long)ch->num_values, nulls,
           mn, (mn[0] || mx[0]) ? " .. " : "", mx);
    if (show_pages && npages > 0) print_pages(f, rg, c, npages);
    return rc;
}

/* the whole report of one open file; 0, or 1 when a chunk's pages could
   not be listed (after a message) */
static int print_meta(gpufeed_file *f, const char *path, int show_pages, int raw)
{
    const gpufeed_metadata *md = gpufeed_file_metadata(f);
    char b1[64], b2[64];
    int32_t rg, c;
    int rc = 0;
    print_header(path, md);
    print_tree(md);
    for (rg = 0; rg < md->num_row_groups; rg++) {
        const gpufeed_row_group_info *g = &md->row_groups[rg];
        human((double)g->total_byte_size, b1, sizeof b1);
        printf("\nrow group %d: %lld rows, %s uncompressed", rg, (long long)g->num_rows, b1);
        if (g->total_compressed_size >= 0) { human((double)g->total_compressed_size, b2, sizeof b2); printf(", %s compressed", b2); }
        printf("\n");
        printf("  %-28s %-12s %-44s %12s %12s %6s %9s %9s  %s\n", "column", "codec", "encodings", "compressed", "uncompressed", "pages", "values", "nulls", "min .. max");
        for (c = 0; c < md->num_columns; c++) rc |= print_chunk(f, rg, c, show_pages, raw);
    }
    return rc;
}


/* ---- schema: the Parquet message type ---- */

/* a growable text buffer */
typedef struct sbuf { char *p; size_t n, cap; int oom; } sbuf;
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    int n;
    if (b->oom) return;
    va_start(ap, fmt);
    n = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
    va_end(ap);
    if (n < 0) { b->oom = 1; return; }
    if (!b->p || (size_t)n >= b->cap - b->n) {
        size_t nc = b->cap ? b->cap : 1024;
        char *np;
        while (nc - b->n <= (size_t)n) nc *= 2;
        np = (char *)realloc(b->p, nc);
        if (!np) { b->oom = 1; return; }
        b->p = np; b->cap = nc;
        va_start(ap, fmt);
        vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
    }
    b->n += (size_t)n;
}

/* the annotation as parquet-mr writes it ("" when none) */
static void annotation_text(const gpufeed_schema_node *n, char *buf, size_t cap)
{
    const char *u = n->unit == GPUFEED_UNIT_MILLIS ? "MILLIS" : n->unit == GPUFEED_UNIT_MICROS ? "MICROS" : "NANOS";
    const char *utc = n->is_adjusted_to_utc ? "true" : "false";
    switch (n->logical) {
    case GPUFEED_LT_NONE: case GPUFEED_LT_OTHER: buf[0] = 0; break;
    case GPUFEED_LT_DECIMAL: snprintf(buf, cap, "DECIMAL(%d,%d)", n->precision, n->scale); break;
    case GPUFEED_LT_TIME: snprintf(buf, cap, "TIME(%s,%s)", u, utc); break;
    case GPUFEED_LT_TIMESTAMP: snprintf(buf, cap, "TIMESTAMP(%s,%s)", u, utc); break;
    case GPUFEED_LT_INTEGER: snprintf(buf, cap, "INTEGER(%d,%s)", n->int_bit_width, n->int_signed ? "true" : "false"); break;
    case GPUFEED_LT_NULL: snprintf(buf, cap, "UNKNOWN"); break;
    default: snprintf(buf, cap, "%s", gpufeed_logical_type_name(n->logical)); break;
    }
}

static void lower(const char *s, char *buf, size_t cap)
{
    size_t i;
    for (i = 0; s[i] && i + 1 < cap; i++) buf[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]);
    buf[i] = 0;
}

static void message_text(const gpufeed_metadata *md, sbuf *o)
{
    static const char *const rep[] = { "required", "optional", "repeated" };
    int32_t open[GPUFEED_MAX_SCHEMA_DEPTH + 2], nopen = 0, i;
    sb_printf(o, "message %s {\n", md->num_nodes ? md->nodes[0].name : "schema");
    open[nopen++] = 0;
    for (i = 1; i < md->num_nodes; i++) {
        const gpufeed_schema_node *n = &md->nodes[i];
        char ann[128], phys[64];
        while (nopen > 1 && open[nopen - 1] >= n->depth) { nopen--; sb_printf(o, "%*s}\n", 2 * open[nopen], ""); }
        annotation_text(n, ann, sizeof ann);
        sb_printf(o, "%*s%s ", 2 * n->depth, "", rep[n->repetition]);
        if (n->physical == GPUFEED_GROUP) sb_printf(o, "group");
        else {
            if (n->physical == GPUFEED_BYTE_ARRAY) strcpy(phys, "binary"); /* parquet-mr's word */
            else lower(gpufeed_physical_type_name(n->physical), phys, sizeof phys);
            sb_printf(o, "%s", phys);
            if (n->physical == GPUFEED_FIXED_LEN_BYTE_ARRAY) sb_printf(o, "(%d)", n->type_length);
        }
        sb_printf(o, " %s", n->name);
        if (ann[0]) sb_printf(o, " (%s)", ann);
        if (n->has_field_id) sb_printf(o, " = %d", n->field_id);
        if (n->physical == GPUFEED_GROUP && nopen < GPUFEED_MAX_SCHEMA_DEPTH + 2) { sb_printf(o, " {\n"); open[nopen++] = n->depth; }
        else sb_printf(o, ";\n");
    }
    while (nopen > 0) { nopen--; sb_printf(o, "%*s}\n", 2 * open[nopen], ""); }
}


/* ---- --json ---- */

/* bytes p[0..n) as a JSON string: ill-formed UTF-8 becomes U+FFFD */
static void json_bytes(sbuf *o, const uint8_t *p, size_t n)
{
    size_t i = 0;
    sb_printf(o, "\"");
    while (i < n) {
        uint8_t c = p[i];
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0, k;
        int ok = len > 0 && i + len <= n && !(len > 1 && c < 0xc2);
        for (k = 1; ok && k < len; k++) ok = (p[i + k] & 0xc0) == 0x80;
        if (ok && len == 3) ok = !(c == 0xe0 && p[i + 1] < 0xa0) && !(c == 0xed && p[i + 1] >= 0xa0);
        if (ok && len == 4) ok = !(c == 0xf0 && p[i + 1] < 0x90) && !(c == 0xf4 && p[i + 1] >= 0x90) && c <= 0xf4;
        if (!ok) { sb_printf(o, "\\ufffd"); i++; continue; }
        if (c == '"' || c == '\\') sb_printf(o, "\\%c", c);
        else if (c < 0x20) sb_printf(o, "\\u%04x", c);
        else sb_printf(o, "%.*s", (int)len, (const char *)p + i);
        i += len;
    }
    sb_printf(o, "\"");
}
static void json_str(sbuf *o, const char *s)
{
    if (!s) sb_printf(o, "null");
    else json_bytes(o, (const uint8_t *)s, strlen(s));
}

/* a statistics value: a JSON number where the column is numeric (and the
   value finite), true/false, a JSON string of the text otherwise (ISO-8601
   temporal values unless raw, text, 0x... for other bytes) */
static void json_stat(sbuf *o, const gpufeed_schema_node *n, const uint8_t *p, uint32_t len, int raw)
{
    char buf[128];
    int temporal = n->physical == GPUFEED_INT96 || n->logical == GPUFEED_LT_DATE || n->logical == GPUFEED_LT_TIMESTAMP || n->logical == GPUFEED_LT_TIME;
    int numeric = n->physical == GPUFEED_INT32 || n->physical == GPUFEED_INT64 || n->physical == GPUFEED_FLOAT || n->physical == GPUFEED_DOUBLE ||
                  n->physical == GPUFEED_INT96;
    if (n->physical == GPUFEED_BYTE_ARRAY && (n->logical == GPUFEED_LT_STRING || n->logical == GPUFEED_LT_ENUM || n->logical == GPUFEED_LT_JSON)) {
        json_bytes(o, p, len);
        return;
    }
    stat_text(n, p, len, raw, buf, sizeof buf);
    if (n->physical == GPUFEED_BOOLEAN && len >= 1) sb_printf(o, "%s", buf);
    else if (numeric && (raw || !temporal) && strncmp(buf, "0x", 2) != 0 && isfinite(strtod(buf, NULL))) sb_printf(o, "%s", buf);
    else json_str(o, buf);
}

static void json_schema(sbuf *o, const gpufeed_metadata *md)
{
    static const char *const rep[] = { "required", "optional", "repeated" };
    int i;
    sb_printf(o, "\"schema\":[");
    for (i = 0; i < md->num_nodes; i++) {
        const gpufeed_schema_node *n = &md->nodes[i];
        char lt[128];
        logical_text(n, lt, sizeof lt);
        sb_printf(o, "%s{\"name\":", i ? "," : "");
        json_str(o, n->name);
        sb_printf(o, ",\"depth\":%d,\"repetition\":\"%s\",\"physical\":", n->depth, i ? rep[n->repetition] : "required");
        if (n->physical == GPUFEED_GROUP) sb_printf(o, "null,\"children\":%d", n->num_children);
        else sb_printf(o, "\"%s\",\"column\":%d,\"max_def\":%d,\"max_rep\":%d", gpufeed_physical_type_name(n->physical), n->column, n->max_def,
                       n->max_rep);
        if (n->physical == GPUFEED_FIXED_LEN_BYTE_ARRAY) sb_printf(o, ",\"type_length\":%d", n->type_length);
        sb_printf(o, ",\"logical\":");
        if (lt[0]) json_str(o, lt);
        else sb_printf(o, "null");
        if (n->has_field_id) sb_printf(o, ",\"field_id\":%d", n->field_id);
        sb_printf(o, "}");
    }
    sb_printf(o, "]");
}

static void json_pages(sbuf *o, gpufeed_file *f, int32_t rg, int32_t c, int64_t npages)
{
    static const char *const pt[] = { "DATA_PAGE", "INDEX_PAGE", "DICTIONARY_PAGE", "DATA_PAGE_V2" };
    gpufeed_page_info *pi = (gpufeed_page_info *)malloc((size_t)(npages > 0 ? npages : 1) * sizeof *pi);
    gpufeed_error err;
    int64_t k, got = 0;
    sb_printf(o, ",\"pages\":[");
    if (pi && gpufeed_chunk_pages(f, rg, c, pi, npages, &got, &err) == GPUFEED_OK)
        for (k = 0; k < got && k < npages; k++)
            sb_printf(o, "%s{\"type\":\"%s\",\"offset\":%lld,\"header\":%d,\"compressed\":%d,\"uncompressed\":%d,\"values\":%d,\"encoding\":\"%s\","
                      "\"crc\":%s}", k ? "," : "", (pi[k].type >= 0 && pi[k].type <= 3) ? pt[pi[k].type] : "UNKNOWN", (long long)pi[k].offset,
                      pi[k].header_size, pi[k].compressed_size, pi[k].uncompressed_size, pi[k].num_values, gpufeed_encoding_name(pi[k].encoding),
                      pi[k].has_crc ? "true" : "false");
    sb_printf(o, "]");
    free(pi);
}

/* one column chunk as a JSON object; 0, or 1 after a message */
static int json_chunk(sbuf *o, gpufeed_file *f, int32_t rg, int32_t c, int show_pages, int raw)
{
    const gpufeed_metadata *md = gpufeed_file_metadata(f);
    const gpufeed_chunk_info *ch = &md->row_groups[rg].chunks[c];
    const gpufeed_schema_node *n = &md->nodes[md->columns[c].node];
    gpufeed_error err;
    int64_t npages = 0;
    int e, k = 0, rc = 0;
    sb_printf(o, "%s{\"path\":", c ? "," : "");
    json_str(o, md->columns[c].path);
    if (ch->encrypted || !ch->has_metadata) { sb_printf(o, ",\"%s\":true}", ch->encrypted ? "encrypted" : "no_metadata"); return 0; }
    if (gpufeed_chunk_pages(f, rg, c, NULL, 0, &npages, &err)) { fprintf(stderr, "gpufeed-inspect: %s\n", err.message); rc = 1; }
    sb_printf(o, ",\"codec\":\"%s\",\"encodings\":[", gpufeed_codec_name(ch->codec));
    for (e = 0; e < 32; e++)
        if (ch->encodings & (1u << e)) sb_printf(o, "%s\"%s\"", k++ ? "," : "", gpufeed_encoding_name((gpufeed_encoding)e));
    sb_printf(o, "],\"compressed\":%lld,\"uncompressed\":%lld,\"num_pages\":%lld,\"values\":%lld", (long long)ch->total_compressed_size,
              (long long)ch->total_uncompressed_size, (long long)npages, (long long)ch->num_values);
    if (ch->has_statistics) {
        const gpufeed_statistics *s = &ch->statistics;
        if (s->has_null_count) sb_printf(o, ",\"null_count\":%lld", (long long)s->null_count);
        if (s->has_min_value || s->has_min_legacy) {
            sb_printf(o, ",\"min\":");
            if (s->has_min_value) json_stat(o, n, s->min_value, s->min_value_len, raw);
            else json_stat(o, n, s->min_legacy, s->min_legacy_len, raw);
        }
        if (s->has_max_value || s->has_max_legacy) {
            sb_printf(o, ",\"max\":");
            if (s->has_max_value) json_stat(o, n, s->max_value, s->max_value_len, raw);
            else json_stat(o, n, s->max_legacy, s->max_legacy_len, raw);
        }
    }
    if (show_pages) json_pages(o, f, rg, c, npages);
    sb_printf(o, "}");
    return rc;
}

/* meta --json: the file as one JSON object on one line */
static int json_meta(gpufeed_file *f, const char *path, int show_pages, int raw)
{
    const gpufeed_metadata *md = gpufeed_file_metadata(f);
    sbuf o;
    int32_t rg, c, i;
    int rc = 0;
    memset(&o, 0, sizeof o);
    sb_printf(&o, "{\"file\":");
    json_str(&o, path);
    sb_printf(&o, ",\"size\":%llu,\"footer_length\":%u,\"created_by\":", (unsigned long long)md->file_size, md->footer_length);
    json_str(&o, md->created_by);
    sb_printf(&o, ",\"version\":%d,\"num_rows\":%lld,\"num_columns\":%d,\"key_values\":[", md->version, (long long)md->num_rows, md->num_columns);
    for (i = 0; i < md->num_key_values; i++) {
        sb_printf(&o, "%s{\"key\":", i ? "," : "");
        json_str(&o, md->key_values[i].key);
        sb_printf(&o, ",\"value\":");
        json_str(&o, md->key_values[i].value);
        sb_printf(&o, "}");
    }
    sb_printf(&o, "],");
    json_schema(&o, md);
    sb_printf(&o, ",\"row_groups\":[");
    for (rg = 0; rg < md->num_row_groups; rg++) {
        const gpufeed_row_group_info *g = &md->row_groups[rg];
        sb_printf(&o, "%s{\"num_rows\":%lld,\"total_byte_size\":%lld", rg ? "," : "", (long long)g->num_rows, (long long)g->total_byte_size);
        if (g->total_compressed_size >= 0) sb_printf(&o, ",\"total_compressed_size\":%lld", (long long)g->total_compressed_size);
        sb_printf(&o, ",\"columns\":[");
        for (c = 0; c < md->num_columns; c++) rc |= json_chunk(&o, f, rg, c, show_pages, raw);
        sb_printf(&o, "]}");
    }
    sb_printf(&o, "]}\n");
    if (o.oom) { fprintf(stderr, "gpufeed-inspect: out of memory\n"); rc = 1; }
    else fwrite(o.p, 1, o.n, stdout);
    free(o.p);
    return rc;
}


/* ---- commands over files ---- */

typedef struct path_list { char **v; int n, cap, oom; } path_list;

static void path_list_add(void *user, const char *file)
{
    path_list *l = (path_list *)user;
    size_t n = strlen(file) + 1;
    if (l->oom) return;
    if (l->n == l->cap) {
        int nc = l->cap ? l->cap * 2 : 16;
        char **nv = (char **)realloc(l->v, (size_t)nc * sizeof *nv);
        if (!nv) { l->oom = 1; return; }
        l->v = nv; l->cap = nc;
    }
    if (!(l->v[l->n] = (char *)malloc(n))) { l->oom = 1; return; }
    memcpy(l->v[l->n++], file, n);
}

static gpufeed_file *open_file(const char *path)
{
    gpufeed_file_desc d;
    gpufeed_error err;
    gpufeed_file *f;
    memset(&d, 0, sizeof d);
    d.path = path;
    if (gpufeed_file_open(&f, &d, &err)) { fprintf(stderr, "gpufeed-inspect: %s\n", err.message); return NULL; }
    return f;
}

static int cmd_meta(const path_list *files, int show_pages, int raw, int json)
{
    int i, rc = 0;
    for (i = 0; i < files->n; i++) {
        gpufeed_file *f = open_file(files->v[i]);
        if (!f) return 1;
        if (json) rc |= json_meta(f, files->v[i], show_pages, raw);
        else {
            if (i) printf("\n");
            rc |= print_meta(f, files->v[i], show_pages, raw);
        }
        gpufeed_file_close(f);
    }
    return rc;
}

/* schema --json: {"file": ..., "schema": [...]} a line per file */
static int cmd_schema_json(const path_list *files)
{
    int i;
    for (i = 0; i < files->n; i++) {
        gpufeed_file *f = open_file(files->v[i]);
        sbuf o;
        if (!f) return 1;
        memset(&o, 0, sizeof o);
        sb_printf(&o, "{\"file\":");
        json_str(&o, files->v[i]);
        sb_printf(&o, ",");
        json_schema(&o, gpufeed_file_metadata(f));
        sb_printf(&o, "}\n");
        gpufeed_file_close(f);
        if (o.oom) { fprintf(stderr, "gpufeed-inspect: out of memory\n"); free(o.p); return 1; }
        fwrite(o.p, 1, o.n, stdout);
        free(o.p);
    }
    return 0;
}

static int cmd_schema(const path_list *files)
{
    sbuf *texts = (sbuf *)calloc((size_t)files->n, sizeof *texts);
    int i, same = 1, rc = 0;
    if (!texts) { fprintf(stderr, "gpufeed-inspect: out of memory\n"); return 1; }
    for (i = 0; i < files->n && !rc; i++) {
        gpufeed_file *f = open_file(files->v[i]);
        if (!f) { rc = 1; break; }
        message_text(gpufeed_file_metadata(f), &texts[i]);
        gpufeed_file_close(f);
        if (texts[i].oom) { fprintf(stderr, "gpufeed-inspect: out of memory\n"); rc = 1; }
        else if (i && (texts[i].n != texts[0].n || memcmp(texts[i].p, texts[0].p, texts[0].n))) same = 0;
    }
    for (i = 0; i < files->n && !rc; i++) {
        if (!same) printf("%s==> %s <==\n", i ? "\n" : "", files->v[i]);
        fwrite(texts[i].p, 1, texts[i].n, stdout);
        if (same) break;
    }
    for (i = 0; i < files->n; i++) free(texts[i].p);
    free(texts);
    return rc;
}

static int cmd_rowcount(const path_list *files, int json)
{
    long long total = 0;
    int i;
    for (i = 0; i < files->n; i++) {
        gpufeed_file *f = open_file(files->v[i]);
        if (!f) return 1;
        total += (long long)gpufeed_file_metadata(f)->num_rows;
        gpufeed_file_close(f);
    }
    if (json) printf("{\"rows\":%lld,\"files\":%d}\n", total, files->n);
    else printf("%lld\n", total);
    return 0;
}

static int file_exists(const char *p)
{
    FILE *f = fopen(p, "rb");
    if (f) fclose(f);
    return f != NULL;
}

int main(int argc, char **argv)
{
    const char **paths;
    const char *cmd = "meta";
    path_list files;
    gpufeed_error err;
    int i = 1, npaths = 0, rc = 0;
    int32_t show_pages = 0, raw = 0, json = 0;
    gf_cli_opt opts[] = {
        { .name = "--pages", .kind = GF_CLI_FLAG, .target = &show_pages, .help = "meta: also list every page of every column chunk" },
        { .name = "--raw", .kind = GF_CLI_FLAG, .target = &raw,
          .help = "meta: DATE/TIME/TIMESTAMP/INT96 statistics as stored integers, not ISO-8601" },
        { .name = "--json", .kind = GF_CLI_FLAG, .target = &json,
          .help = "JSON: meta and schema an object a file, a line each; rowcount {\"rows\": N, \"files\": N}" },
    };
    gf_cli cli;

    memset(&files, 0, sizeof files);
    memset(&cli, 0, sizeof cli);
    cli.prog = "gpufeed-inspect";
    cli.usage = "[meta|schema|rowcount] [options] PATH...";
    cli.about = "Print the metadata of Parquet files.";
    cli.head = "commands:\n"
               "  meta                    sizes, writer, rows, schema tree, row groups, column chunks,\n"
               "                          statistics (the default)\n"
               "  schema                  the schema as a Parquet message type (as parquet-tools prints it)\n"
               "  rowcount                the number of rows of all the files: one integer\n";
    cli.tail = "rows (cat, head): gpufeed-cat\n"
               "Exit status: 0; 1 when a file cannot be read; 2 on a usage error.\n";
    cli.opts = opts;
    cli.nopts = GF_CLI_COUNT(opts);
    if (argc > 1 && (!strcmp(argv[1], "meta") || !strcmp(argv[1], "schema") || !strcmp(argv[1], "rowcount"))) cmd = argv[i++];
    else if (argc > 1 && (!strcmp(argv[1], "cat") || !strcmp(argv[1], "head")) && !file_exists(argv[1])) {
        fprintf(stderr, "gpufeed-inspect: '%s' is a gpufeed-cat command: gpufeed-cat %s PATH...\n", argv[1], argv[1]);
        return 2;
    }
    rc = gf_cli_parse(&cli, argc, argv, i);
    if (rc != GF_CLI_RUN) { gf_cli_free(&cli); return rc; }
    rc = 0;
    paths = cli.pos;
    npaths = cli.npos;
    if (!rc && (show_pages || raw) && strcmp(cmd, "meta")) {
        fprintf(stderr, "gpufeed-inspect: %s applies to meta, not %s\n", show_pages ? "--pages" : "--raw", cmd);
        rc = 2;
    }
    if (!rc && gpufeed_expand_paths(paths, npaths, path_list_add, &files, &err)) {
        gf_cli_error(&cli, err.message);
        rc = 1;
    }
    if (!rc && files.oom) { fprintf(stderr, "gpufeed-inspect: out of memory\n"); rc = 1; }
    if (!rc) {
        if (!strcmp(cmd, "schema")) rc = json ? cmd_schema_json(&files) : cmd_schema(&files);
        else if (!strcmp(cmd, "rowcount")) rc = cmd_rowcount(&files, json);
        else rc = cmd_meta(&files, show_pages, raw, json);
        if (fflush(stdout) || ferror(stdout)) { fprintf(stderr, "gpufeed-inspect: cannot write the output\n"); rc = 1; }
    }
    for (i = 0; i < files.n; i++) free(files.v[i]);
    free(files.v);
    gf_cli_free(&cli);
    return rc;
}
