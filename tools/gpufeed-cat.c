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
   - on error: non-zero exit and one line on stderr naming file and place. */
#define GPUFEED_IMPLEMENTATION
#include "../gpufeed.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct col_state {
    int32_t col;
    const gpufeed_schema_node *nd;
    gpufeed_column *rd;
    gpufeed_column_batch b;
    int64_t at;        /* row within the batch */
    int done;
} col_state;

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
static void put_decimal_digits(FILE *o, int neg, const char *digits, int32_t scale)
{
    size_t n = strlen(digits);
    if (neg) fputc('-', o);
    if (scale <= 0) { fputs(digits, o); return; }
    if (n <= (size_t)scale) {
        size_t i;
        fputs("0.", o);
        for (i = n; i < (size_t)scale; i++) fputc('0', o);
        fputs(digits, o);
    } else {
        fwrite(digits, 1, n - (size_t)scale, o);
        fputc('.', o);
        fputs(digits + n - (size_t)scale, o);
    }
}

static void put_decimal_i64(FILE *o, int64_t v, int32_t scale)
{
    char buf[32];
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)u);
    put_decimal_digits(o, v < 0, buf, scale);
}

/* big-endian two's complement of any length */
static int put_decimal_bytes(FILE *o, const uint8_t *p, uint32_t n, int32_t scale)
{
    uint8_t *mag;
    char *digits;
    uint32_t i, len = n, nd = 0;
    int neg = n > 0 && (p[0] & 0x80);
    if (n == 0) { put_decimal_i64(o, 0, scale); return 0; }
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
    put_decimal_digits(o, neg, digits, scale);
    free(mag); free(digits);
    return 0;
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

static void usage(void)
{
    fprintf(stderr, "usage: gpufeed-cat [--columns a,b] [--limit N] [--verify-crc] FILE\n");
}

int main(int argc, char **argv)
{
    const char *path = NULL, *columns = NULL;
    long long limit = -1, printed = 0;
    gpufeed_open_desc d;
    gpufeed_error err;
    gpufeed_file *f;
    const gpufeed_metadata *md;
    col_state *cols = NULL;
    int ncols = 0, i, rc = 0;
    int32_t rg;
    static char obuf[1 << 16];

    memset(&d, 0, sizeof d);
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--columns") && i + 1 < argc) columns = argv[++i];
        else if (!strcmp(argv[i], "--limit") && i + 1 < argc) {
            char *end;
            limit = strtoll(argv[++i], &end, 10);
            if (*end || limit < 0) { fprintf(stderr, "gpufeed-cat: --limit needs a non-negative integer, got '%s'\n", argv[i]); return 2; }
        }
        else if (!strcmp(argv[i], "--verify-crc")) d.flags |= GPUFEED_OPEN_VERIFY_CRC;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(); return 0; }
        else if (argv[i][0] == '-' && argv[i][1]) { fprintf(stderr, "gpufeed-cat: unknown option '%s'\n", argv[i]); usage(); return 2; }
        else if (!path) path = argv[i];
        else { fprintf(stderr, "gpufeed-cat: more than one file given\n"); usage(); return 2; }
    }
    if (!path) { usage(); return 2; }
    d.path = path;
    if (gpufeed_file_open(&f, &d, &err)) { fprintf(stderr, "gpufeed-cat: %s\n", err.message); return 1; }
    md = gpufeed_file_metadata(f);
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);

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
        if (md->columns[cols[i].col].max_rep > 0) {
            fprintf(stderr, "gpufeed-cat: %s: column '%s' is a list or map: nested values are not supported yet\n", path, md->columns[cols[i].col].path);
            rc = 1; goto out;
        }
    }
    for (i = 0; i < ncols; i++) {
        if (i) fputc(',', stdout);
        put_quoted(stdout, (const uint8_t *)md->columns[cols[i].col].path, (uint32_t)strlen(md->columns[cols[i].col].path));
    }
    fputc('\n', stdout);

    for (rg = 0; rg < md->num_row_groups && (limit < 0 || printed < limit); rg++) {
        int64_t r, nrows = md->row_groups[rg].num_rows;
        for (i = 0; i < ncols; i++) {
            if (gpufeed_column_open(f, rg, cols[i].col, NULL, &cols[i].rd, &err)) {
                fprintf(stderr, "gpufeed-cat: %s\n", err.message); rc = 1; goto out;
            }
            cols[i].at = 0; cols[i].b.num_rows = 0;
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
                    cs->at = 0;
                }
                if (i) fputc(',', stdout);
                put_cell(stdout, cs);
                cs->at++;
            }
            fputc('\n', stdout);
        }
        for (i = 0; i < ncols; i++) { gpufeed_column_close(cols[i].rd); cols[i].rd = NULL; }
    }
    goto out;
oom:
    fprintf(stderr, "gpufeed-cat: out of memory\n");
    rc = 1;
out:
    fflush(stdout);
    for (i = 0; i < ncols; i++) gpufeed_column_close(cols[i].rd);
    free(cols);
    gpufeed_file_close(f);
    return rc;
}
