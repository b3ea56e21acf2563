/* gpufeed-cat: print a Parquet file's rows as CSV, through gpufeed.h.

   Build:  cc -O2 -I. tools/gpufeed-cat.c -o gpufeed-cat -lpthread -lm
   Usage:  gpufeed-cat [--columns a,b] [--limit N] [--verify-crc] FILE

   Output contract (tests and outside checks rely on it):
   - line 1: the column names, double-quoted, struct fields as dotted paths;
   - one line per row, RFC 4180 quoting; null is an empty, unquoted field;
   - BOOLEAN true/false; integers in decimal (unsigned as unsigned); DATE in
     days; TIME/TIMESTAMP as the integer in the column's unit; INT96 as int64
     nanoseconds since the Unix epoch;
   - FLOAT and FLOAT16 as %.9g, DOUBLE as %.17g, nan / inf / -inf, -0 signed;
   - DECIMAL as exact decimal text with `scale` digits after the point;
   - STRING/UTF8/ENUM/JSON as double-quoted text; other binary as
     double-quoted lowercase hex;
   - a leaf under a list, map or repeated field (one CSV field per leaf,
     named by its dotted schema path, e.g. l.list.element, m.key_value.key,
     s.list.element.x): compact JSON (no spaces) in one double-quoted field,
     '"' doubled. Each repeated ancestor adds an array level ([] when
     empty, nested arrays for lists of lists); an undefined optional
     ancestor or a null value gives null at its depth; a row that is null
     before any array opens (the list itself, or its struct, is null) is
     the empty field like other nulls. Values inside JSON: integers, DATE,
     TIME/TIMESTAMP, INT96 and DECIMAL as in the CSV (bare JSON numbers),
     FLOAT/FLOAT16 %.9g and DOUBLE %.17g with nan / inf / -inf as the JSON
     strings "nan" "inf" "-inf", true/false, text as JSON strings (escapes
     \" \\ \b \f \n \r \t and \u00xx for other bytes below 0x20; other
     bytes, UTF-8 included, as they are), other binary as a JSON string of
     lowercase hex;
   - on error: non-zero exit and one line on stderr naming file and place. */
#define GPUFEED_IMPLEMENTATION
#include "../gpufeed.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* nested leaves: the optional and repeated nodes from the top-level field
   down to the leaf */
typedef struct slot { int rep; int16_t def; } slot;
#define MAX_SLOTS 80

typedef struct col_state {
    int32_t col;
    const gpufeed_schema_node *nd;
    gpufeed_column *rd;
    gpufeed_column_batch b;
    int64_t at;        /* row within the batch */
    int64_t lat, vat;  /* nested: level entry and value within the batch */
    int nslots;
    slot slots[MAX_SLOTS];
    int done;
} col_state;

/* a growable text buffer for one JSON cell */
typedef struct sbuf { char *p; size_t n, cap; int oom; } sbuf;
static void sb_put(sbuf *b, const void *d, size_t n)
{
    if (b->oom) return;
    if (b->cap - b->n < n + 1) {
        size_t nc = b->cap ? b->cap : 256;
        char *np;
        while (nc - b->n < n + 1) nc *= 2;
        np = (char *)realloc(b->p, nc);
        if (!np) { b->oom = 1; return; }
        b->p = np; b->cap = nc;
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}
static void sb_str(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

static void put_quoted(FILE *o, const uint8_t *p, uint32_t n)
{
    uint32_t i, s = 0;
    fputc('"', o);
    for (i = 0; i < n; i++) {
        if (p[i] == '"') { fwrite(p + s, 1, i + 1 - s, o); fputc('"', o); s = i + 1; }
    }
    fwrite(p + s, 1, n - s, o);
    fputc('"', o);
}

static void put_hex(FILE *o, const uint8_t *p, uint32_t n)
{
    static const char hx[] = "0123456789abcdef";
    uint32_t i;
    fputc('"', o);
    for (i = 0; i < n; i++) { fputc(hx[p[i] >> 4], o); fputc(hx[p[i] & 15], o); }
    fputc('"', o);
}

static void put_double(FILE *o, double v, int prec)
{
    if (v != v) fputs("nan", o);
    else if (v > 1.7976931348623157e308) fputs("inf", o);
    else if (v < -1.7976931348623157e308) fputs("-inf", o);
    else fprintf(o, "%.*g", prec, v);
}

/* digits (most significant first, no sign) with `scale` digits after '.' */
static void dec_digits(sbuf *o, int neg, const char *digits, int32_t scale)
{
    size_t n = strlen(digits);
    if (neg) sb_put(o, "-", 1);
    if (scale <= 0) { sb_str(o, digits); return; }
    if (n <= (size_t)scale) {
        size_t i;
        sb_str(o, "0.");
        for (i = n; i < (size_t)scale; i++) sb_put(o, "0", 1);
        sb_str(o, digits);
    } else {
        sb_put(o, digits, n - (size_t)scale);
        sb_put(o, ".", 1);
        sb_str(o, digits + n - (size_t)scale);
    }
}

static void dec_i64(sbuf *o, int64_t v, int32_t scale)
{
    char buf[32];
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)u);
    dec_digits(o, v < 0, buf, scale);
}

/* big-endian two's complement of any length */
static int dec_bytes(sbuf *o, const uint8_t *p, uint32_t n, int32_t scale)
{
    uint8_t *mag;
    char *digits;
    uint32_t i, len = n, nd = 0;
    int neg = n > 0 && (p[0] & 0x80);
    if (n == 0) { dec_i64(o, 0, scale); return 0; }
    mag = (uint8_t *)malloc(n);
    digits = (char *)malloc((size_t)n * 3 + 2);
    if (!mag || !digits) { free(mag); free(digits); return -1; }
    memcpy(mag, p, n);
    if (neg) { /* negate: invert and add one */
        int carry = 1;
        for (i = n; i-- > 0;) {
            unsigned v = (unsigned)(uint8_t)~mag[i] + (unsigned)carry;
            mag[i] = (uint8_t)v; carry = v >> 8;
        }
    }
    /* repeated division by 10 */
    for (;;) {
        unsigned rem = 0;
        int nonzero = 0;
        for (i = 0; i < len; i++) {
            unsigned cur = rem * 256 + mag[i];
            mag[i] = (uint8_t)(cur / 10); rem = cur % 10;
            if (mag[i]) nonzero = 1;
        }
        digits[nd++] = (char)('0' + rem);
        if (!nonzero) break;
    }
    for (i = 0; i < nd / 2; i++) { char t = digits[i]; digits[i] = digits[nd - 1 - i]; digits[nd - 1 - i] = t; }
    digits[nd] = 0;
    dec_digits(o, neg, digits, scale);
    free(mag); free(digits);
    return 0;
}

static void put_decimal_i64(FILE *o, int64_t v, int32_t scale)
{
    char buf[80];
    sbuf b;
    memset(&b, 0, sizeof b);
    b.p = buf; b.cap = sizeof buf; /* fits: at most 20 digits, a sign, "0." and the scale's zeros */
    if (scale > 40) { sbuf h; memset(&h, 0, sizeof h); dec_i64(&h, v, scale); if (h.p) fwrite(h.p, 1, h.n, o); free(h.p); return; }
    dec_i64(&b, v, scale);
    fwrite(b.p, 1, b.n, o);
}

static int put_decimal_bytes(FILE *o, const uint8_t *p, uint32_t n, int32_t scale)
{
    sbuf b;
    int r;
    memset(&b, 0, sizeof b);
    r = dec_bytes(&b, p, n, scale);
    if (!r && b.oom) r = -1;
    if (!r && b.n) fwrite(b.p, 1, b.n, o);
    free(b.p);
    return r;
}

static int is_text(const gpufeed_schema_node *nd)
{
    return nd->logical == GPUFEED_LT_STRING || nd->logical == GPUFEED_LT_ENUM || nd->logical == GPUFEED_LT_JSON;
}

static void put_cell(FILE *o, const col_state *cs)
{
    const gpufeed_schema_node *nd = cs->nd;
    int64_t i = cs->at;
    const void *v = cs->b.values;
    if (cs->b.valid && !cs->b.valid[i]) return;
    switch (nd->physical) {
    case GPUFEED_BOOLEAN: fputs(((const uint8_t *)v)[i] ? "true" : "false", o); break;
    case GPUFEED_INT32: {
        int32_t x = ((const int32_t *)v)[i];
        if (nd->logical == GPUFEED_LT_DECIMAL) put_decimal_i64(o, x, nd->scale);
        else if (nd->logical == GPUFEED_LT_INTEGER && !nd->int_signed) fprintf(o, "%u", (unsigned)(uint32_t)x);
        else fprintf(o, "%d", x);
        break;
    }
    case GPUFEED_INT64: {
        int64_t x = ((const int64_t *)v)[i];
        if (nd->logical == GPUFEED_LT_DECIMAL) put_decimal_i64(o, x, nd->scale);
        else if (nd->logical == GPUFEED_LT_INTEGER && !nd->int_signed) fprintf(o, "%llu", (unsigned long long)(uint64_t)x);
        else fprintf(o, "%lld", (long long)x);
        break;
    }
    case GPUFEED_INT96: fprintf(o, "%lld", (long long)((const int64_t *)v)[i]); break;
    case GPUFEED_FLOAT: put_double(o, ((const float *)v)[i], 9); break;
    case GPUFEED_DOUBLE: put_double(o, ((const double *)v)[i], 17); break;
    case GPUFEED_BYTE_ARRAY: case GPUFEED_FIXED_LEN_BYTE_ARRAY: {
        gpufeed_bytes b = ((const gpufeed_bytes *)v)[i];
        if (nd->logical == GPUFEED_LT_FLOAT16 && b.len == 2)
            put_double(o, gpufeed_half_to_float((uint16_t)(b.ptr[0] | (b.ptr[1] << 8))), 9);
        else if (nd->logical == GPUFEED_LT_DECIMAL) put_decimal_bytes(o, b.ptr, b.len, nd->scale);
        else if (is_text(nd)) put_quoted(o, b.ptr, b.len);
        else put_hex(o, b.ptr, b.len);
        break;
    }
    default: break;
    }
}


/* ---- nested leaves: JSON ---- */

static void json_double(sbuf *o, double v, int prec)
{
    char buf[64];
    if (v != v) sb_str(o, "\"nan\"");
    else if (v > 1.7976931348623157e308) sb_str(o, "\"inf\"");
    else if (v < -1.7976931348623157e308) sb_str(o, "\"-inf\"");
    else { snprintf(buf, sizeof buf, "%.*g", prec, v); sb_str(o, buf); }
}

static void json_text(sbuf *o, const uint8_t *p, uint32_t n)
{
    static const char hx[] = "0123456789abcdef";
    uint32_t i, s = 0;
    sb_put(o, "\"", 1);
    for (i = 0; i < n; i++) {
        const char *esc = NULL;
        char u[7];
        switch (p[i]) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        default:
            if (p[i] < 0x20) { memcpy(u, "\\u00", 4); u[4] = hx[p[i] >> 4]; u[5] = hx[p[i] & 15]; u[6] = 0; esc = u; }
            break;
        }
        if (esc) { sb_put(o, p + s, i - s); sb_str(o, esc); s = i + 1; }
    }
    sb_put(o, p + s, n - s);
    sb_put(o, "\"", 1);
}

static void json_hex(sbuf *o, const uint8_t *p, uint32_t n)
{
    static const char hx[] = "0123456789abcdef";
    uint32_t i;
    sb_put(o, "\"", 1);
    for (i = 0; i < n; i++) { char c2[2]; c2[0] = hx[p[i] >> 4]; c2[1] = hx[p[i] & 15]; sb_put(o, c2, 2); }
    sb_put(o, "\"", 1);
}

/* value i of a packed values array, as JSON */
static void json_value(sbuf *o, const gpufeed_schema_node *nd, const void *v, int64_t i)
{
    char buf[48];
    switch (nd->physical) {
    case GPUFEED_BOOLEAN: sb_str(o, ((const uint8_t *)v)[i] ? "true" : "false"); break;
    case GPUFEED_INT32: {
        int32_t x = ((const int32_t *)v)[i];
        if (nd->logical == GPUFEED_LT_DECIMAL) { dec_i64(o, x, nd->scale); break; }
        if (nd->logical == GPUFEED_LT_INTEGER && !nd->int_signed) snprintf(buf, sizeof buf, "%u", (unsigned)(uint32_t)x);
        else snprintf(buf, sizeof buf, "%d", x);
        sb_str(o, buf);
        break;
    }
    case GPUFEED_INT64: {
        int64_t x = ((const int64_t *)v)[i];
        if (nd->logical == GPUFEED_LT_DECIMAL) { dec_i64(o, x, nd->scale); break; }
        if (nd->logical == GPUFEED_LT_INTEGER && !nd->int_signed) snprintf(buf, sizeof buf, "%llu", (unsigned long long)(uint64_t)x);
        else snprintf(buf, sizeof buf, "%lld", (long long)x);
        sb_str(o, buf);
        break;
    }
    case GPUFEED_INT96: snprintf(buf, sizeof buf, "%lld", (long long)((const int64_t *)v)[i]); sb_str(o, buf); break;
    case GPUFEED_FLOAT: json_double(o, ((const float *)v)[i], 9); break;
    case GPUFEED_DOUBLE: json_double(o, ((const double *)v)[i], 17); break;
    case GPUFEED_BYTE_ARRAY: case GPUFEED_FIXED_LEN_BYTE_ARRAY: {
        gpufeed_bytes b = ((const gpufeed_bytes *)v)[i];
        if (nd->logical == GPUFEED_LT_FLOAT16 && b.len == 2)
            json_double(o, gpufeed_half_to_float((uint16_t)(b.ptr[0] | (b.ptr[1] << 8))), 9);
        else if (nd->logical == GPUFEED_LT_DECIMAL) { if (dec_bytes(o, b.ptr, b.len, nd->scale)) o->oom = 1; }
        else if (is_text(nd)) json_text(o, b.ptr, b.len);
        else json_hex(o, b.ptr, b.len);
        break;
    }
    default: sb_str(o, "null"); break;
    }
}

/* The optional and repeated nodes on the path from the top-level field to
   the leaf; -1 when the path is too deep. */
static int make_slots(const gpufeed_metadata *md, col_state *cs)
{
    int32_t path[MAX_SLOTS], n = 0, k, nd = md->columns[cs->col].node;
    for (; nd > 0; nd = md->nodes[nd].parent) {
        if (md->nodes[nd].repetition == GPUFEED_REQUIRED) continue;
        if (n == MAX_SLOTS) return -1;
        path[n++] = nd;
    }
    cs->nslots = n;
    for (k = 0; k < n; k++) {
        const gpufeed_schema_node *x = &md->nodes[path[n - 1 - k]];
        cs->slots[k].rep = x->repetition == GPUFEED_REPEATED;
        cs->slots[k].def = x->max_def;
    }
    return 0;
}

/* One row of a nested leaf (entries [lat, end) of the batch) as JSON into o.
   Returns 1 when the row is null before any array opens (printed as the
   empty field), 0 when o holds the JSON, -1 on inconsistent levels. */
static int nested_row(col_state *cs, sbuf *o, int64_t end)
{
    const gpufeed_column_batch *b = &cs->b;
    int depth = 0, first = 1;
    int64_t i;
    o->n = 0;
    for (i = cs->lat; i < end; i++) {
        int rp = b->rep_levels[i], df = b->def_levels[i], k = 0, s;
        if (!first) {
            int seen = 0;
            if (rp < 1 || rp > depth) return -1;
            while (depth > rp) { sb_put(o, "]", 1); depth--; }
            sb_put(o, ",", 1);
            /* go on after the rp-th repeated node */
            for (k = 0; k < cs->nslots; k++) if (cs->slots[k].rep && ++seen == rp) { k++; break; }
        }
        first = 0;
        for (s = k; s < cs->nslots; s++) {
            if (df < cs->slots[s].def) {
                if (cs->slots[s].rep) sb_str(o, "[]");
                else if (depth == 0) return 1;
                else sb_str(o, "null");
                break;
            }
            if (cs->slots[s].rep) { sb_put(o, "[", 1); depth++; }
        }
        if (s == cs->nslots) {
            if (cs->vat >= b->num_values) return -1;
            json_value(o, cs->nd, b->values, cs->vat++);
        }
    }
    while (depth > 0) { sb_put(o, "]", 1); depth--; }
    return 0;
}

static int add_column(const gpufeed_metadata *md, col_state **cols, int *ncols, int32_t c)
{
    col_state *n = (col_state *)realloc(*cols, (size_t)(*ncols + 1) * sizeof *n);
    if (!n) return -1;
    memset(&n[*ncols], 0, sizeof n[*ncols]);
    n[*ncols].col = c;
    n[*ncols].nd = &md->nodes[md->columns[c].node];
    *cols = n; (*ncols)++;
    return 0;
}


/* Prints the file at `path` (open flags `flags`) to o; 0, or 1 after a
   message on stderr. */
static int cat_path(FILE *o, const char *path, const char *columns, long long limit, uint32_t flags)
{
    long long printed = 0;
    gpufeed_open_desc d;
    gpufeed_error err;
    gpufeed_file *f;
    const gpufeed_metadata *md;
    col_state *cols = NULL;
    int ncols = 0, i, rc = 0;
    int32_t rg;
    sbuf cell;

    memset(&d, 0, sizeof d);
    memset(&cell, 0, sizeof cell);
    d.path = path;
    d.flags = flags;
    if (gpufeed_file_open(&f, &d, &err)) { fprintf(stderr, "gpufeed-cat: %s\n", err.message); return 1; }
    md = gpufeed_file_metadata(f);

    if (columns) {
        const char *p = columns;
        while (*p) {
            const char *e = strchr(p, ',');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            char name[4096];
            int32_t c, k, found = 0;
            if (n >= sizeof name) n = sizeof name - 1;
            memcpy(name, p, n); name[n] = 0;
            c = gpufeed_file_find_column(f, name);
            if (c >= 0) { if (add_column(md, &cols, &ncols, c)) goto oom; found = 1; }
            else { /* a group: all its leaves */
                size_t nl = strlen(name);
                for (k = 0; k < md->num_columns; k++)
                    if (!strncmp(md->columns[k].path, name, nl) && md->columns[k].path[nl] == '.') {
                        if (add_column(md, &cols, &ncols, k)) goto oom;
                        found = 1;
                    }
            }
            if (!found) { fprintf(stderr, "gpufeed-cat: %s: no column '%s'\n", path, name); rc = 1; goto out; }
            p += n; if (*p == ',') p++;
        }
    } else {
        for (i = 0; i < md->num_columns; i++) if (add_column(md, &cols, &ncols, i)) goto oom;
    }
    for (i = 0; i < ncols; i++) {
        if (md->columns[cols[i].col].max_rep > 0 && make_slots(md, &cols[i])) {
            fprintf(stderr, "gpufeed-cat: %s: column '%s' is nested too deeply\n", path, md->columns[cols[i].col].path);
            rc = 1; goto out;
        }
    }
    for (i = 0; i < ncols; i++) {
        if (i) fputc(',', o);
        put_quoted(o, (const uint8_t *)md->columns[cols[i].col].path, (uint32_t)strlen(md->columns[cols[i].col].path));
    }
    fputc('\n', o);

    for (rg = 0; rg < md->num_row_groups && (limit < 0 || printed < limit); rg++) {
        int64_t r, nrows = md->row_groups[rg].num_rows;
        for (i = 0; i < ncols; i++) {
            if (gpufeed_column_open(f, rg, cols[i].col, NULL, &cols[i].rd, &err)) {
                fprintf(stderr, "gpufeed-cat: %s\n", err.message); rc = 1; goto out;
            }
            cols[i].at = 0; cols[i].b.num_rows = 0;
            cols[i].lat = cols[i].vat = 0;
        }
        for (r = 0; r < nrows && (limit < 0 || printed < limit); r++, printed++) {
            for (i = 0; i < ncols; i++) {
                col_state *cs = &cols[i];
                if (cs->at >= cs->b.num_rows) {
                    gpufeed_result res = gpufeed_column_read(cs->rd, &cs->b);
                    if (res == GPUFEED_DONE) {
                        fprintf(stderr, "gpufeed-cat: %s: row group %d, column '%s': ended at row %lld of %lld\n", path, rg, md->columns[cs->col].path, (long long)r, (long long)nrows);
                        rc = 1; goto out;
                    }
                    if (res) { fprintf(stderr, "gpufeed-cat: %s\n", gpufeed_column_error(cs->rd)); rc = 1; goto out; }
                    cs->at = 0; cs->lat = 0; cs->vat = 0;
                }
                if (i) fputc(',', o);
                if (cs->b.rep_levels) {
                    int64_t end = cs->lat + 1;
                    int k;
                    while (end < cs->b.num_levels && cs->b.rep_levels[end] != 0) end++;
                    k = nested_row(cs, &cell, end);
                    if (k < 0 || cell.oom) {
                        fprintf(stderr, "gpufeed-cat: %s: row group %d, column '%s', row %lld: %s\n", path, rg, md->columns[cs->col].path, (long long)r,
                                cell.oom ? "out of memory" : "levels that do not assemble");
                        rc = 1; goto out;
                    }
                    if (k == 0) put_quoted(o, (const uint8_t *)cell.p, (uint32_t)cell.n);
                    cs->lat = end;
                } else put_cell(o, cs);
                cs->at++;
            }
            fputc('\n', o);
        }
        for (i = 0; i < ncols; i++) { gpufeed_column_close(cols[i].rd); cols[i].rd = NULL; }
    }
    goto out;
oom:
    fprintf(stderr, "gpufeed-cat: out of memory\n");
    rc = 1;
out:
    fflush(o);
    for (i = 0; i < ncols; i++) gpufeed_column_close(cols[i].rd);
    free(cols);
    free(cell.p);
    gpufeed_file_close(f);
    return rc;
}

#ifndef GPUFEED_CAT_NO_MAIN /* tests include this file for cat_path and nested_row */
static void usage(void)
{
    fprintf(stderr, "usage: gpufeed-cat [--columns a,b] [--limit N] [--verify-crc] FILE\n");
}

int main(int argc, char **argv)
{
    const char *path = NULL, *columns = NULL;
    long long limit = -1;
    uint32_t flags = 0;
    int i;
    static char obuf[1 << 16];

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--columns") && i + 1 < argc) columns = argv[++i];
        else if (!strcmp(argv[i], "--limit") && i + 1 < argc) {
            char *end;
            limit = strtoll(argv[++i], &end, 10);
            if (*end || limit < 0) { fprintf(stderr, "gpufeed-cat: --limit needs a non-negative integer, got '%s'\n", argv[i]); return 2; }
        }
        else if (!strcmp(argv[i], "--verify-crc")) flags |= GPUFEED_OPEN_VERIFY_CRC;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(); return 0; }
        else if (argv[i][0] == '-' && argv[i][1]) { fprintf(stderr, "gpufeed-cat: unknown option '%s'\n", argv[i]); usage(); return 2; }
        else if (!path) path = argv[i];
        else { fprintf(stderr, "gpufeed-cat: more than one file given\n"); usage(); return 2; }
    }
    if (!path) { usage(); return 2; }
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    return cat_path(stdout, path, columns, limit, flags);
}
#endif
