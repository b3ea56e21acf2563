/* gpufeed-cat: print the rows of Parquet files as CSV or JSON Lines,
   through gpufeed.h.

   Build:  cc -O2 -I. tools/gpufeed-cat.c -o gpufeed-cat -lpthread -lm
   Usage:  gpufeed-cat [cat|head] [options] PATH...

   Commands (as in parquet-tools and pqrs; the word `cat` may be left out):
     cat                 every row (the default)
     head                the first rows: 5 unless -n says otherwise
   Options:
     -n N, --limit N     at most N rows in all (0: the CSV header only)
     --columns a,b       only these columns, in this order; a group (struct)
                         name selects its leaves
     --json              one JSON object per row (JSON Lines) instead of CSV
     --raw               DATE, TIME and TIMESTAMP (INT96 too) as the stored
                         integers instead of ISO-8601 text
     --verify-crc        check the page CRCs a file has
     -h, --help          this text
     --version           the version
   PATH is a Parquet file, a directory (its *.parquet files, sorted, hidden
   ones skipped) or a glob in quotes ('data/part-*.parquet', matches sorted):
   the same expansion as the dataset API and gpufeed-dense. Several files
   print in order as one table: one CSV header, and every file must have the
   columns of the first (same names, same types), or the run stops there
   with an error naming the file. A file named like a command: ./head.
   The metadata commands (schema, meta, rowcount) are gpufeed-inspect's.

   Exit status: 0; 1 when a file cannot be read (one line on stderr naming
   the file and the place: row group, column, row, page); 2 on a usage error
   (a bad option or value, no PATH).

   CSV (the contract tests and outside checks rely on; tests/render_csv.py
   is its reference implementation with pyarrow):
   - line 1: the column names, double-quoted, struct fields as dotted paths;
   - one line per row, RFC 4180 quoting; null is an empty, unquoted field;
   - BOOLEAN true/false; integers in decimal (unsigned as unsigned);
   - DATE as ISO-8601 YYYY-MM-DD (proleptic Gregorian calendar);
   - TIMESTAMP as YYYY-MM-DDThh:mm:ss.fff with 3, 6 or 9 fraction digits for
     MILLIS, MICROS or NANOS, always all of them; `Z` follows when the column
     is adjusted to UTC (isAdjustedToUTC, also the legacy TIMESTAMP_MILLIS /
     _MICROS annotations): an instant printed in UTC; without Z it is a
     local (wall-clock) time, printed as stored, no zone applied. INT96
     (Spark, Impala) as a NANOS timestamp without Z: the format does not say
     which zone its writer meant;
   - TIME as hh:mm:ss.fff (3, 6 or 9 digits by unit), `Z` when adjusted to
     UTC; a TIME outside 00:00:00..23:59:59.999999999 is an error naming it
     (--raw prints it);
   - years 0000..9999 as four digits; others with a sign and at least four
     digits (-0001 is 2 BC, +10000): pre-1970 values count backwards
     exactly, 1969-12-31T23:59:59.999Z is -1 ms;
   - with --raw: DATE in days since 1970-01-01, TIME/TIMESTAMP as the
     integer in the column's unit, INT96 as int64 nanoseconds since the Unix
     epoch (the format before ISO-8601 became the default);
   - FLOAT and FLOAT16 as %.9g, DOUBLE as %.17g, nan / inf / -inf, -0 signed;
   - DECIMAL as exact decimal text with `scale` digits after the point;
   - STRING/UTF8/ENUM/JSON as double-quoted text, bytes as stored; other
     binary as double-quoted lowercase hex;
   - a leaf under a list, map or repeated field (one CSV field per leaf,
     named by its dotted schema path, e.g. l.list.element, m.key_value.key,
     s.list.element.x): compact JSON (no spaces) in one double-quoted field,
     '"' doubled. Each repeated ancestor adds an array level ([] when
     empty, nested arrays for lists of lists); an undefined optional
     ancestor or a null value gives null at its depth; a row that is null
     before any array opens (the list itself, or its struct, is null) is
     the empty field like other nulls. Values inside JSON: integers and
     DECIMAL as bare JSON numbers; DATE/TIME/TIMESTAMP/INT96 as JSON
     strings of the text above (bare numbers with --raw); FLOAT/FLOAT16
     %.9g and DOUBLE %.17g with nan / inf / -inf as the JSON strings "nan"
     "inf" "-inf"; true/false; text as JSON strings (escapes \" \\ \b \f \n
     \r \t and \u00xx for other bytes below 0x20; other bytes, UTF-8
     included, as they are), other binary as a JSON string of lowercase hex.

   JSON Lines (--json): one object per row, {"name":value,...}, keys the CSV
   header's names in its order; values as inside the nested JSON above
   (null for a null, a nested leaf's array as an array), and the output is
   always valid UTF-8 JSON: bytes of a text value that are not well-formed
   UTF-8 become U+FFFD, one per maximal ill-formed subsequence (Unicode's
   recommended practice, what Python's bytes.decode(errors="replace")
   does). Non-finite floats are the strings "nan", "inf", "-inf" (JSON has
   no literal for them; a string keeps which one it was). */
#define GPUFEED_IMPLEMENTATION
#include "../gpufeed.h"
#include "gf_cli.h"
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
    int raw;           /* temporal values as stored integers */
    int strict;        /* JSON text as valid UTF-8 (--json) */
} col_state;

/* a growable text buffer */
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

static const char hexdigits[] = "0123456789abcdef";


/* ---- text forms of values ---- */

/* p[0..n) double-quoted, '"' doubled (RFC 4180) */
static void csv_quoted(sbuf *o, const uint8_t *p, size_t n)
{
    size_t i, s = 0;
    sb_put(o, "\"", 1);
    for (i = 0; i < n; i++) {
        if (p[i] == '"') { sb_put(o, p + s, i + 1 - s); sb_put(o, "\"", 1); s = i + 1; }
    }
    sb_put(o, p + s, n - s);
    sb_put(o, "\"", 1);
}

/* double-quoted lowercase hex (a CSV field or a JSON string alike) */
static void quoted_hex(sbuf *o, const uint8_t *p, uint32_t n)
{
    uint32_t i;
    sb_put(o, "\"", 1);
    for (i = 0; i < n; i++) { char c2[2]; c2[0] = hexdigits[p[i] >> 4]; c2[1] = hexdigits[p[i] & 15]; sb_put(o, c2, 2); }
    sb_put(o, "\"", 1);
}

/* %.*g, or nan / inf / -inf (as JSON strings when json) */
static void put_double(sbuf *o, double v, int prec, int json)
{
    char buf[64];
    if (v != v) sb_str(o, json ? "\"nan\"" : "nan");
    else if (v > 1.7976931348623157e308) sb_str(o, json ? "\"inf\"" : "inf");
    else if (v < -1.7976931348623157e308) sb_str(o, json ? "\"-inf\"" : "-inf");
    else { snprintf(buf, sizeof buf, "%.*g", prec, v); sb_str(o, buf); }
}

/* Length of the well-formed UTF-8 sequence at p (n > 0 bytes left), or 0
   with *bad the length of its maximal ill-formed prefix (at least 1). */
static uint32_t utf8_seq(const uint8_t *p, uint32_t n, uint32_t *bad)
{
    uint8_t c = p[0], lo = 0x80, hi = 0xBF;
    uint32_t len, k;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0) lo = 0xA0;      /* no overlong forms */
        if (c == 0xED) hi = 0x9F;      /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;      /* nothing beyond U+10FFFF */
    } else { *bad = 1; return 0; }
    for (k = 1; k < len; k++) {
        if (k >= n || p[k] < lo || p[k] > hi) { *bad = k; return 0; }
        lo = 0x80; hi = 0xBF;
    }
    return len;
}

/* A JSON string of raw bytes: escapes \" \\ \b \f \n \r \t and \u00xx
   below 0x20. strict: ill-formed UTF-8 becomes U+FFFD; else bytes pass. */
static void json_text(sbuf *o, const uint8_t *p, uint32_t n, int strict)
{
    uint32_t i = 0, s = 0;
    sb_put(o, "\"", 1);
    while (i < n) {
        const char *esc = NULL;
        char u[7];
        uint32_t len = 1, bad = 0;
        switch (p[i]) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        default:
            if (p[i] < 0x20) {
                memcpy(u, "\\u00", 4);
                u[4] = hexdigits[p[i] >> 4]; u[5] = hexdigits[p[i] & 15]; u[6] = 0;
                esc = u;
            } else if (strict && p[i] >= 0x80) {
                len = utf8_seq(p + i, n - i, &bad);
                if (!len) { esc = "\xEF\xBF\xBD"; len = bad; }
            }
            break;
        }
        if (esc) { sb_put(o, p + s, i - s); sb_str(o, esc); s = i + len; }
        i += len;
    }
    sb_put(o, p + s, n - s);
    sb_put(o, "\"", 1);
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


/* ---- dates and times (ISO-8601) ---- */

/* a / d rounded down, and the remainder in [0, d) (d > 0) */
static int64_t floor_div(int64_t a, int64_t d, int64_t *rem)
{
    int64_t q = a / d, r = a % d;
    if (r < 0) { q--; r += d; }
    *rem = r;
    return q;
}

/* The proleptic Gregorian date `days` after 1970-01-01. Counted from
   0000-03-01 so that a leap day closes each year, 4-year block, century
   and 400-year era: 146097 days an era, 36524 a century, 1461 a block. */
static void civil_date(int64_t days, int64_t *year, int *month, int *day)
{
    static const int mlen[12] = { 31, 30, 31, 30, 31, 31, 30, 31, 30, 31, 31, 29 }; /* March .. February */
    int64_t doe, era = floor_div(days + 719468, 146097, &doe);
    int64_t c = doe / 36524, q, y, doy;
    int m = 0;
    if (c > 3) c = 3;                  /* the era's last day: Feb 29 of year 400 */
    doe -= c * 36524;
    q = doe / 1461;
    doe -= q * 1461;
    y = doe / 365;
    if (y > 3) y = 3;                  /* the block's last day: Feb 29 */
    doy = doe - y * 365;
    while (doy >= mlen[m]) { doy -= mlen[m]; m++; }
    *year = era * 400 + c * 100 + q * 4 + y + (m >= 10);
    *month = m < 10 ? m + 3 : m - 9;
    *day = (int)doy + 1;
}

static void iso_date(sbuf *o, int64_t days)
{
    char buf[48];
    int64_t y;
    int m, d;
    civil_date(days, &y, &m, &d);
    if (y >= 0 && y <= 9999) snprintf(buf, sizeof buf, "%04d-%02d-%02d", (int)y, m, d);
    else snprintf(buf, sizeof buf, "%c%04lld-%02d-%02d", y < 0 ? '-' : '+', (long long)(y < 0 ? -y : y), m, d);
    sb_str(o, buf);
}

static int64_t unit_per_second(gpufeed_time_unit u)
{
    return u == GPUFEED_UNIT_MILLIS ? 1000 : u == GPUFEED_UNIT_MICROS ? 1000000 : 1000000000;
}

static int unit_digits(gpufeed_time_unit u)
{
    return u == GPUFEED_UNIT_MILLIS ? 3 : u == GPUFEED_UNIT_MICROS ? 6 : 9;
}

/* hh:mm:ss.f of `sod` seconds and `frac` units into the day */
static void clock_text(sbuf *o, int64_t sod, int64_t frac, gpufeed_time_unit u, int utc)
{
    char buf[48];
    snprintf(buf, sizeof buf, "%02d:%02d:%02d.%0*lld%s", (int)(sod / 3600), (int)(sod / 60 % 60), (int)(sod % 60),
             unit_digits(u), (long long)frac, utc ? "Z" : "");
    sb_str(o, buf);
}

static void iso_timestamp(sbuf *o, int64_t v, gpufeed_time_unit u, int utc)
{
    int64_t frac, sod, secs = floor_div(v, unit_per_second(u), &frac);
    int64_t days = floor_div(secs, 86400, &sod);
    iso_date(o, days);
    sb_put(o, "T", 1);
    clock_text(o, sod, frac, u, utc);
}

/* 1 when v is not a time of day */
static int iso_time(sbuf *o, int64_t v, gpufeed_time_unit u, int utc)
{
    int64_t per = unit_per_second(u);
    if (v < 0 || v >= 86400 * per) return 1;
    clock_text(o, v / per, v % per, u, utc);
    return 0;
}

/* a temporal value as ISO-8601 text (quoted when json); 1 when it has none */
static int put_temporal(sbuf *o, const gpufeed_schema_node *nd, int64_t v, int json)
{
    int r = 0;
    if (json) sb_put(o, "\"", 1);
    if (nd->physical == GPUFEED_INT96) iso_timestamp(o, v, GPUFEED_UNIT_NANOS, 0);
    else if (nd->logical == GPUFEED_LT_DATE) iso_date(o, v);
    else if (nd->logical == GPUFEED_LT_TIMESTAMP) iso_timestamp(o, v, nd->unit, nd->is_adjusted_to_utc);
    else r = iso_time(o, v, nd->unit, nd->is_adjusted_to_utc);
    if (json) sb_put(o, "\"", 1);
    return r;
}

static int is_temporal(const gpufeed_schema_node *nd)
{
    return nd->physical == GPUFEED_INT96 || nd->logical == GPUFEED_LT_DATE ||
           nd->logical == GPUFEED_LT_TIME || nd->logical == GPUFEED_LT_TIMESTAMP;
}

static int is_text(const gpufeed_schema_node *nd)
{
    return nd->logical == GPUFEED_LT_STRING || nd->logical == GPUFEED_LT_ENUM || nd->logical == GPUFEED_LT_JSON;
}

/* Value i of a values array into o: a CSV field (json 0) or JSON (json 1).
   0, -1 out of memory, 1 when the value has no text form (a TIME that is
   not a time of day). */
static int put_value(sbuf *o, const col_state *cs, const void *v, int64_t i, int json)
{
    const gpufeed_schema_node *nd = cs->nd;
    char buf[48];
    int r = 0;
    switch (nd->physical) {
    case GPUFEED_BOOLEAN: sb_str(o, ((const uint8_t *)v)[i] ? "true" : "false"); break;
    case GPUFEED_INT32: {
        int32_t x = ((const int32_t *)v)[i];
        if (nd->logical == GPUFEED_LT_DECIMAL) { dec_i64(o, x, nd->scale); break; }
        if (is_temporal(nd) && !cs->raw) { r = put_temporal(o, nd, x, json); break; }
        if (nd->logical == GPUFEED_LT_INTEGER && !nd->int_signed) snprintf(buf, sizeof buf, "%u", (unsigned)(uint32_t)x);
        else snprintf(buf, sizeof buf, "%d", x);
        sb_str(o, buf);
        break;
    }
    case GPUFEED_INT64: case GPUFEED_INT96: {
        int64_t x = ((const int64_t *)v)[i];
        if (nd->logical == GPUFEED_LT_DECIMAL) { dec_i64(o, x, nd->scale); break; }
        if (is_temporal(nd) && !cs->raw) { r = put_temporal(o, nd, x, json); break; }
        if (nd->logical == GPUFEED_LT_INTEGER && !nd->int_signed) snprintf(buf, sizeof buf, "%llu", (unsigned long long)(uint64_t)x);
        else snprintf(buf, sizeof buf, "%lld", (long long)x);
        sb_str(o, buf);
        break;
    }
    case GPUFEED_FLOAT: put_double(o, ((const float *)v)[i], 9, json); break;
    case GPUFEED_DOUBLE: put_double(o, ((const double *)v)[i], 17, json); break;
    case GPUFEED_BYTE_ARRAY: case GPUFEED_FIXED_LEN_BYTE_ARRAY: {
        gpufeed_bytes b = ((const gpufeed_bytes *)v)[i];
        if (nd->logical == GPUFEED_LT_FLOAT16 && b.len == 2)
            put_double(o, gpufeed_half_to_float((uint16_t)(b.ptr[0] | (b.ptr[1] << 8))), 9, json);
        else if (nd->logical == GPUFEED_LT_DECIMAL) { if (dec_bytes(o, b.ptr, b.len, nd->scale)) o->oom = 1; }
        else if (is_text(nd)) {
            if (json) json_text(o, b.ptr, b.len, cs->strict);
            else csv_quoted(o, b.ptr, b.len);
        } else quoted_hex(o, b.ptr, b.len);
        break;
    }
    default: if (json) sb_str(o, "null"); break;
    }
    return o->oom ? -1 : r;
}


/* ---- nested leaves: JSON ---- */

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
   empty field), 0 when o holds the JSON, -1 on inconsistent levels, -2 on a
   value without a text form (a TIME beyond a day). */
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
            if (put_value(o, cs, b->values, cs->vat++, 1) > 0) return -2;
        }
    }
    while (depth > 0) { sb_put(o, "]", 1); depth--; }
    return 0;
}


/* ---- one file ---- */

typedef struct cat_opts {
    const char *columns;               /* NULL: every leaf column */
    long long limit;                   /* rows in all; -1: no limit */
    uint32_t flags;                    /* GPUFEED_OPEN_* */
    int json;                          /* JSON Lines instead of CSV */
    int raw;                           /* temporal values as stored integers */
} cat_opts;

/* what the files printed so far agreed on */
typedef struct cat_run {
    long long printed;                 /* rows, over all files */
    int started;                       /* the first file fixed the columns */
    char *first;                       /* its path */
    int ncols;
    char **names;                      /* its columns: dotted paths ... */
    gpufeed_schema_node *kinds;        /* ... and types */
} cat_run;

static void run_free(cat_run *run)
{
    int i;
    for (i = 0; i < run->ncols; i++) free(run->names[i]);
    free(run->names);
    free(run->kinds);
    free(run->first);
    memset(run, 0, sizeof *run);
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = (char *)malloc(n);
    if (d) memcpy(d, s, n);
    return d;
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

/* The columns `spec` names (NULL: every leaf) into *cols; 0, -1 out of
   memory, or 1 after a message naming the missing column. */
static int select_columns(gpufeed_file *f, const char *path, const char *spec, col_state **cols, int *ncols)
{
    const gpufeed_metadata *md = gpufeed_file_metadata(f);
    const char *p = spec;
    int32_t i;
    if (!spec) {
        for (i = 0; i < md->num_columns; i++) if (add_column(md, cols, ncols, i)) return -1;
        return 0;
    }
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char name[4096];
        int32_t c, k, found = 0;
        if (n >= sizeof name) n = sizeof name - 1;
        memcpy(name, p, n); name[n] = 0;
        c = gpufeed_file_find_column(f, name);
        if (c >= 0) { if (add_column(md, cols, ncols, c)) return -1; found = 1; }
        else { /* a group: all its leaves */
            size_t nl = strlen(name);
            for (k = 0; k < md->num_columns; k++)
                if (!strncmp(md->columns[k].path, name, nl) && md->columns[k].path[nl] == '.') {
                    if (add_column(md, cols, ncols, k)) return -1;
                    found = 1;
                }
        }
        if (!found) { fprintf(stderr, "gpufeed-cat: %s: no column '%s'\n", path, name); return 1; }
        p += n; if (*p == ',') p++;
    }
    return 0;
}

static int same_kind(const gpufeed_schema_node *a, const gpufeed_schema_node *b)
{
    return a->physical == b->physical && a->logical == b->logical && a->unit == b->unit &&
           a->is_adjusted_to_utc == b->is_adjusted_to_utc && a->scale == b->scale &&
           a->precision == b->precision && a->type_length == b->type_length &&
           a->int_signed == b->int_signed && a->max_rep == b->max_rep;
}

/* The first file fixes the columns; later ones must match. 0, -1 out of
   memory, or 1 after a message. */
static int agree_columns(cat_run *run, const char *path, const gpufeed_metadata *md, const col_state *cols, int ncols)
{
    int i;
    if (!run->started) {
        run->first = dup_str(path);
        run->names = (char **)calloc((size_t)ncols + 1, sizeof *run->names);
        run->kinds = (gpufeed_schema_node *)calloc((size_t)ncols + 1, sizeof *run->kinds);
        if (!run->first || !run->names || !run->kinds) return -1;
        for (i = 0; i < ncols; i++) {
            run->names[i] = dup_str(md->columns[cols[i].col].path);
            if (!run->names[i]) return -1;
            run->ncols = i + 1;
            run->kinds[i] = *cols[i].nd;
        }
        run->started = 1;
        return 0;
    }
    if (ncols != run->ncols) {
        fprintf(stderr, "gpufeed-cat: %s: %d columns, but %s has %d (files print as one table)\n", path, ncols, run->first, run->ncols);
        return 1;
    }
    for (i = 0; i < ncols; i++) {
        const gpufeed_schema_node *a = cols[i].nd, *b = &run->kinds[i];
        if (strcmp(md->columns[cols[i].col].path, run->names[i])) {
            fprintf(stderr, "gpufeed-cat: %s: column %d is '%s', but '%s' in %s (files print as one table)\n", path, i + 1,
                    md->columns[cols[i].col].path, run->names[i], run->first);
            return 1;
        }
        if (!same_kind(a, b)) {
            fprintf(stderr, "gpufeed-cat: %s: column '%s' is %s %s here, %s %s in %s (files print as one table)\n", path, run->names[i],
                    gpufeed_physical_type_name(a->physical), gpufeed_logical_type_name(a->logical),
                    gpufeed_physical_type_name(b->physical), gpufeed_logical_type_name(b->logical), run->first);
            return 1;
        }
    }
    return 0;
}

/* keys[i] = "name": for JSON Lines */
static int json_keys(const gpufeed_metadata *md, const col_state *cols, int ncols, sbuf *keys)
{
    int i;
    for (i = 0; i < ncols; i++) {
        const char *name = md->columns[cols[i].col].path;
        sbuf k;
        memset(&k, 0, sizeof k);
        json_text(&k, (const uint8_t *)name, (uint32_t)strlen(name), 1);
        sb_put(&k, ":", 1);
        keys[i] = k;
        if (k.oom) return -1;
    }
    return 0;
}

/* One cell of row r (the column's batch is positioned on it) into line.
   0, or 1 after a message. */
static int put_cell(col_state *cs, sbuf *line, sbuf *cell, const cat_opts *op, const char *path, int32_t rg, int64_t r)
{
    const char *why = NULL;
    const char *name = cs->nd->path;
    if (cs->b.rep_levels) {
        int64_t end = cs->lat + 1;
        int k;
        while (end < cs->b.num_levels && cs->b.rep_levels[end] != 0) end++;
        k = nested_row(cs, cell, end);
        if (k == -1) why = "levels that do not assemble";
        else if (k == -2) why = "a TIME value outside 00:00:00..24:00:00 (--raw prints it)";
        else if (cell->oom) why = "out of memory";
        else if (k == 1) { if (op->json) sb_str(line, "null"); }
        else if (op->json) sb_put(line, cell->p, cell->n);
        else csv_quoted(line, (const uint8_t *)cell->p, cell->n);
        cs->lat = end;
    } else if (cs->b.valid && !cs->b.valid[cs->at]) {
        if (op->json) sb_str(line, "null");
    } else {
        int k = put_value(line, cs, cs->b.values, cs->at, op->json);
        if (k > 0) {
            long long x = cs->nd->physical == GPUFEED_INT32 ? (long long)((const int32_t *)cs->b.values)[cs->at]
                                                           : (long long)((const int64_t *)cs->b.values)[cs->at];
            fprintf(stderr, "gpufeed-cat: %s: row group %d, column '%s', row %lld: TIME value %lld is outside 00:00:00..24:00:00 (--raw prints it)\n",
                    path, rg, name, (long long)r, x);
            return 1;
        }
    }
    if (why || line->oom) {
        fprintf(stderr, "gpufeed-cat: %s: row group %d, column '%s', row %lld: %s\n", path, rg, name, (long long)r,
                why ? why : "out of memory");
        return 1;
    }
    cs->at++;
    return 0;
}

/* The rows of row group rg; 0, or 1 after a message. */
static int cat_row_group(FILE *o, gpufeed_file *f, const char *path, int32_t rg, col_state *cols, int ncols,
                         const sbuf *keys, const cat_opts *op, cat_run *run)
{
    const gpufeed_metadata *md = gpufeed_file_metadata(f);
    int64_t r, nrows = md->row_groups[rg].num_rows;
    gpufeed_error err;
    sbuf line, cell;
    int i, rc = 0;
    memset(&line, 0, sizeof line);
    memset(&cell, 0, sizeof cell);
    for (i = 0; i < ncols; i++) {
        if (gpufeed_column_open(&cols[i].rd, f, rg, cols[i].col, NULL, &err)) {
            fprintf(stderr, "gpufeed-cat: %s\n", err.message);
            while (i-- > 0) { gpufeed_column_close(cols[i].rd); cols[i].rd = NULL; } /* the columns opened before it */
            return 1;
        }
        cols[i].at = 0; cols[i].b.num_rows = 0;
        cols[i].lat = cols[i].vat = 0;
    }
    for (r = 0; r < nrows && (op->limit < 0 || run->printed < op->limit) && !rc; r++, run->printed++) {
        line.n = 0;
        if (op->json) sb_put(&line, "{", 1);
        for (i = 0; i < ncols && !rc; i++) {
            col_state *cs = &cols[i];
            if (cs->at >= cs->b.num_rows) {
                gpufeed_result res = gpufeed_column_read(cs->rd, &cs->b);
                if (res == GPUFEED_DONE) {
                    fprintf(stderr, "gpufeed-cat: %s: row group %d, column '%s': ended at row %lld of %lld\n", path, rg,
                            md->columns[cs->col].path, (long long)r, (long long)nrows);
                    rc = 1;
                    break;
                }
                if (res) { fprintf(stderr, "gpufeed-cat: %s\n", gpufeed_column_error(cs->rd)); rc = 1; break; }
                cs->at = 0; cs->lat = 0; cs->vat = 0;
            }
            if (i) sb_put(&line, ",", 1);
            if (op->json) sb_put(&line, keys[i].p, keys[i].n);
            rc = put_cell(cs, &line, &cell, op, path, rg, r);
        }
        if (rc) break;
        sb_str(&line, op->json ? "}\n" : "\n");
        if (line.oom) { fprintf(stderr, "gpufeed-cat: out of memory\n"); rc = 1; break; }
        fwrite(line.p, 1, line.n, o);
    }
    for (i = 0; i < ncols; i++) { gpufeed_column_close(cols[i].rd); cols[i].rd = NULL; }
    free(line.p);
    free(cell.p);
    return rc;
}

/* Prints the file at `path` as part of `run`; 0, or 1 after a message on
   stderr. */
/* Opens path (its footer) into *fp and its selected columns into *cols,
   checked against the files before it (run). 0, -1 out of memory, or 1
   after a message; *fp is NULL when the file did not open. */
static int cat_prepare(const char *path, const cat_opts *op, cat_run *run, gpufeed_file **fp, col_state **colsp, int *ncolsp)
{
    gpufeed_file_desc d;
    gpufeed_error err;
    gpufeed_file *f;
    const gpufeed_metadata *md;
    col_state *cols = NULL;
    int ncols = 0, i, rc = 0;

    *fp = NULL;
    memset(&d, 0, sizeof d);
    d.path = path;
    d.flags = op->flags;
    if (gpufeed_file_open(&f, &d, &err)) { fprintf(stderr, "gpufeed-cat: %s\n", err.message); return 1; }
    *fp = f;
    md = gpufeed_file_metadata(f);

    rc = select_columns(f, path, op->columns, &cols, &ncols);
    for (i = 0; i < ncols && !rc && op->json; i++) {   /* JSON keys must differ */
        int k;
        for (k = 0; k < i && cols[k].col != cols[i].col; k++) {}
        if (k < i) {
            fprintf(stderr, "gpufeed-cat: --json: column '%s' is selected twice (keys of a JSON object must differ)\n",
                    md->columns[cols[i].col].path);
            rc = 1;
        }
    }
    for (i = 0; i < ncols && !rc; i++) {
        cols[i].raw = op->raw;
        cols[i].strict = op->json;
        if (md->columns[cols[i].col].max_rep > 0 && make_slots(md, &cols[i])) {
            fprintf(stderr, "gpufeed-cat: %s: column '%s' is nested too deeply\n", path, md->columns[cols[i].col].path);
            rc = 1;
        }
    }
    if (!rc) rc = agree_columns(run, path, md, cols, ncols);
    *colsp = cols;
    *ncolsp = ncols;
    return rc;
}

static int cat_file(FILE *o, const char *path, const cat_opts *op, cat_run *run)
{
    gpufeed_file *f;
    const gpufeed_metadata *md;
    col_state *cols = NULL;
    sbuf *keys = NULL;
    int ncols = 0, i, rc = 0, first = !run->started;
    int32_t rg;

    rc = cat_prepare(path, op, run, &f, &cols, &ncols);
    if (!f) return rc;
    md = gpufeed_file_metadata(f);
    if (!rc) {
        if (first && !op->json) {
            sbuf h;
            memset(&h, 0, sizeof h);
            for (i = 0; i < ncols; i++) {
                if (i) sb_put(&h, ",", 1);
                csv_quoted(&h, (const uint8_t *)md->columns[cols[i].col].path, strlen(md->columns[cols[i].col].path));
            }
            sb_put(&h, "\n", 1);
            if (h.oom) rc = -1;
            else fwrite(h.p, 1, h.n, o);
            free(h.p);
        }
    }
    if (!rc && op->json) {
        keys = (sbuf *)calloc((size_t)ncols + 1, sizeof *keys);
        rc = keys ? json_keys(md, cols, ncols, keys) : -1;
    }
    for (rg = 0; !rc && rg < md->num_row_groups && (op->limit < 0 || run->printed < op->limit); rg++)
        rc = cat_row_group(o, f, path, rg, cols, ncols, keys, op, run);
    if (rc < 0) { fprintf(stderr, "gpufeed-cat: out of memory\n"); rc = 1; }
    fflush(o);
    if (keys) for (i = 0; i < ncols; i++) free(keys[i].p);
    free(keys);
    free(cols);
    gpufeed_file_close(f);
    return rc;
}

#ifdef GPUFEED_CAT_NO_MAIN /* tests include this file for cat_path and nested_row */
/* One file with the default options but these (tests print crafted files
   with it). */
static int cat_path(FILE *o, const char *path, const char *columns, long long limit, uint32_t flags)
{
    cat_opts op;
    cat_run run;
    int rc;
    memset(&op, 0, sizeof op);
    memset(&run, 0, sizeof run);
    op.columns = columns;
    op.limit = limit;
    op.flags = flags;
    rc = cat_file(o, path, &op, &run);
    run_free(&run);
    return rc;
}

#else

typedef struct path_list { char **v; int n, cap, oom; } path_list;

static void path_list_add(void *user, const char *file)
{
    path_list *l = (path_list *)user;
    if (l->oom) return;
    if (l->n == l->cap) {
        int nc = l->cap ? l->cap * 2 : 16;
        char **nv = (char **)realloc(l->v, (size_t)nc * sizeof *nv);
        if (!nv) { l->oom = 1; return; }
        l->v = nv; l->cap = nc;
    }
    if (!(l->v[l->n] = dup_str(file))) { l->oom = 1; return; }
    l->n++;
}

/* Several files print as one table: every file's columns are checked
   before a row is printed. 0, or 1 after a message naming the file. */
static int cat_check_files(char *const *paths, int n, const cat_opts *op)
{
    cat_run chk;
    int i, rc = 0;
    memset(&chk, 0, sizeof chk);
    for (i = 0; i < n && !rc; i++) {
        gpufeed_file *f;
        col_state *cols = NULL;
        int ncols = 0;
        rc = cat_prepare(paths[i], op, &chk, &f, &cols, &ncols);
        free(cols);
        gpufeed_file_close(f);
    }
    run_free(&chk);
    if (rc < 0) { fprintf(stderr, "gpufeed-cat: out of memory\n"); rc = 1; }
    return rc;
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
    cat_opts op;
    cat_run run;
    path_list files;
    gpufeed_error err;
    int i = 1, npaths = 0, rc = 0;
    int64_t limit = -1;
    int32_t json = 0, raw = 0;
    static char obuf[1 << 16];
    gf_cli_opt opts[] = {
        { .name = "--limit", .alias = 'n', .kind = GF_CLI_I64, .target = &limit, .meta = "N",
          .help = "at most N rows in all (0: the CSV header only)" },
        { .name = "--columns", .kind = GF_CLI_STR, .target = &op.columns, .meta = "a,b",
          .help = "only these columns, in this order (a group name selects its leaves)" },
        { .name = "--json", .kind = GF_CLI_FLAG, .target = &json, .help = "one JSON object per row (JSON Lines) instead of CSV" },
        { .name = "--raw", .kind = GF_CLI_FLAG, .target = &raw,
          .help = "DATE, TIME, TIMESTAMP and INT96 as stored integers, not ISO-8601" },
        { .name = "--verify-crc", .kind = GF_CLI_BITS, .target = &op.flags, .value = GPUFEED_OPEN_VERIFY_CRC,
          .help = "check the page CRCs a file has" },
    };
    gf_cli cli;

    memset(&op, 0, sizeof op);
    memset(&run, 0, sizeof run);
    memset(&files, 0, sizeof files);
    memset(&cli, 0, sizeof cli);
    cli.prog = "gpufeed-cat";
    cli.usage = "[cat|head] [options] PATH...";
    cli.about = "Print the rows of Parquet files as CSV (or JSON Lines).";
    cli.pos_help = "FILE|DIR|GLOB: a .parquet file, a directory (its *.parquet, sorted) or a quoted\n"
                   "glob; several print in order, as one table";
    cli.head = "commands:\n"
               "  cat                     every row (the default)\n"
               "  head                    the first 5 rows (-n for another count)\n";
    cli.tail = "metadata (schema, meta, rowcount): gpufeed-inspect\n"
               "Exit status: 0; 1 when a file cannot be read; 2 on a usage error.\n";
    cli.opts = opts;
    cli.nopts = GF_CLI_COUNT(opts);
    if (argc > 1 && !strcmp(argv[1], "cat")) i = 2;
    else if (argc > 1 && !strcmp(argv[1], "head")) { i = 2; limit = 5; }
    else if (argc > 1 && (!strcmp(argv[1], "schema") || !strcmp(argv[1], "meta") || !strcmp(argv[1], "rowcount")) && !file_exists(argv[1])) {
        fprintf(stderr, "gpufeed-cat: '%s' is a gpufeed-inspect command: gpufeed-inspect %s PATH...\n", argv[1], argv[1]);
        return 2;
    }
    rc = gf_cli_parse(&cli, argc, argv, i);
    if (rc != GF_CLI_RUN) { gf_cli_free(&cli); return rc; }
    rc = 0;
    op.limit = limit;
    op.json = json;
    op.raw = raw;
    paths = cli.pos;
    npaths = cli.npos;
    if (gpufeed_expand_paths(paths, npaths, path_list_add, &files, &err)) {
        gf_cli_error(&cli, err.message);
        rc = 1;
    }
    if (!rc && files.oom) { fprintf(stderr, "gpufeed-cat: out of memory\n"); rc = 1; }
    if (!rc && files.n > 1) rc = cat_check_files(files.v, files.n, &op);
    if (!rc) {
        setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
        for (i = 0; i < files.n && !rc && (op.limit < 0 || run.printed < op.limit || !run.started); i++)
            rc = cat_file(stdout, files.v[i], &op, &run);
        if (fflush(stdout) || ferror(stdout)) { fprintf(stderr, "gpufeed-cat: cannot write the output\n"); rc = 1; }
    }
    for (i = 0; i < files.n; i++) free(files.v[i]);
    free(files.v);
    gf_cli_free(&cli);
    run_free(&run);
    return rc;
}
#endif
