/* gpufeed-inspect: a Parquet file's metadata, through gpufeed.h -- the schema
   tree with physical and logical types, the row groups, and per column
   chunk: codec, encodings, compressed/uncompressed sizes, page count and
   statistics (what `parquet-tools meta` shows).

   Build:  cc -O2 -I. tools/gpufeed-inspect.c -o gpufeed-inspect -lpthread -lm
   Usage:  gpufeed-inspect [--pages] FILE
           --pages   also list every page of every column chunk */
#define GPUFEED_IMPLEMENTATION
#include "../gpufeed.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
static void stat_text(const gpufeed_schema_node *n, const uint8_t *p, uint32_t len, char *buf, size_t cap)
{
    static const char hx[] = "0123456789abcdef";
    int32_t i32; int64_t i64; float f; double d;
    size_t i, o = 0;
    switch (n->physical) {
    case GPUFEED_BOOLEAN: if (len >= 1) { snprintf(buf, cap, "%s", p[0] ? "true" : "false"); return; } break;
    case GPUFEED_INT32:
        if (len == 4) {
            memcpy(&i32, p, 4);
            if (n->logical == GPUFEED_LT_INTEGER && !n->int_signed) snprintf(buf, cap, "%u", (unsigned)i32);
            else snprintf(buf, cap, "%d", i32);
            return;
        }
        break;
    case GPUFEED_INT64:
        if (len == 8) {
            memcpy(&i64, p, 8);
            if (n->logical == GPUFEED_LT_INTEGER && !n->int_signed) snprintf(buf, cap, "%llu", (unsigned long long)i64);
            else snprintf(buf, cap, "%lld", (long long)i64);
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

int main(int argc, char **argv)
{
    const char *path = NULL;
    int show_pages = 0, i, rc = 0;
    gpufeed_open_desc d;
    gpufeed_error err;
    gpufeed_file *f;
    const gpufeed_metadata *md;
    char buf[512], b1[64], b2[64];
    int32_t rg, c;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--pages")) show_pages = 1;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { fprintf(stderr, "usage: gpufeed-inspect [--pages] FILE\n"); return 0; }
        else if (argv[i][0] == '-') { fprintf(stderr, "gpufeed-inspect: unknown option '%s'\nusage: gpufeed-inspect [--pages] FILE\n", argv[i]); return 2; }
        else if (!path) path = argv[i];
        else { fprintf(stderr, "gpufeed-inspect: more than one file given\n"); return 2; }
    }
    if (!path) { fprintf(stderr, "usage: gpufeed-inspect [--pages] FILE\n"); return 2; }
    memset(&d, 0, sizeof d);
    d.path = path;
    if (gpufeed_file_open(&f, &d, &err)) { fprintf(stderr, "gpufeed-inspect: %s\n", err.message); return 1; }
    md = gpufeed_file_metadata(f);

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

    printf("\nschema:\n");
    for (i = 0; i < md->num_nodes; i++) {
        const gpufeed_schema_node *n = &md->nodes[i];
        char lt[128];
        static const char *const rep[] = { "required", "optional", "repeated" };
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

    for (rg = 0; rg < md->num_row_groups; rg++) {
        const gpufeed_row_group_info *g = &md->row_groups[rg];
        human((double)g->total_byte_size, b1, sizeof b1);
        printf("\nrow group %d: %lld rows, %s uncompressed", rg, (long long)g->num_rows, b1);
        if (g->total_compressed_size >= 0) { human((double)g->total_compressed_size, b2, sizeof b2); printf(", %s compressed", b2); }
        printf("\n");
        printf("  %-28s %-12s %-44s %12s %12s %6s %9s %9s  %s\n", "column", "codec", "encodings", "compressed", "uncompressed", "pages", "values", "nulls", "min .. max");
        for (c = 0; c < md->num_columns; c++) {
            const gpufeed_chunk_info *ch = &g->chunks[c];
            const gpufeed_schema_node *n = &md->nodes[md->columns[c].node];
            char enc[256], mn[96], mx[96], nulls[32];
            int64_t npages = 0;
            size_t o = 0;
            int e;
            if (ch->encrypted || !ch->has_metadata) {
                printf("  %-28s %s\n", md->columns[c].path, ch->encrypted ? "(encrypted)" : "(no metadata)");
                continue;
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
                if (s->has_min_value) stat_text(n, s->min_value, s->min_value_len, mn, sizeof mn);
                else if (s->has_min_legacy) stat_text(n, s->min_legacy, s->min_legacy_len, mn, sizeof mn);
                if (s->has_max_value) stat_text(n, s->max_value, s->max_value_len, mx, sizeof mx);
                else if (s->has_max_legacy) stat_text(n, s->max_legacy, s->max_legacy_len, mx, sizeof mx);
                if (s->has_null_count) snprintf(nulls, sizeof nulls, "%lld", (long long)s->null_count);
            }
            printf("  %-28s %-12s %-44s %12lld %12lld %6lld %9lld %9s  %s%s%s\n", md->columns[c].path,
                   gpufeed_codec_name(ch->codec), enc, (long long)ch->total_compressed_size,
                   (long long)ch->total_uncompressed_size, (long long)npages, (long long)ch->num_values, nulls,
                   mn, (mn[0] || mx[0]) ? " .. " : "", mx);
            if (show_pages && npages > 0) {
                gpufeed_page_info *pi = (gpufeed_page_info *)malloc((size_t)npages * sizeof *pi);
                int64_t k, got = 0;
                static const char *const pt[] = { "DATA_PAGE", "INDEX_PAGE", "DICTIONARY_PAGE", "DATA_PAGE_V2" };
                if (pi && gpufeed_chunk_pages(f, rg, c, pi, npages, &got, &err) == GPUFEED_OK) {
                    for (k = 0; k < got && k < npages; k++)
                        printf("      page %lld: %-15s offset %lld, header %d, compressed %d, uncompressed %d, values %d, %s%s\n",
                               (long long)k, (pi[k].type >= 0 && pi[k].type <= 3) ? pt[pi[k].type] : "UNKNOWN",
                               (long long)pi[k].offset, pi[k].header_size, pi[k].compressed_size, pi[k].uncompressed_size,
                               pi[k].num_values, gpufeed_encoding_name(pi[k].encoding), pi[k].has_crc ? ", crc" : "");
                }
                free(pi);
            }
        }
    }
    (void)buf;
    gpufeed_file_close(f);
    return rc;
}
