/* Second translation unit of the GPUFEED_STATIC test; see static_a.c. */
#define GPUFEED_STATIC
#define GPUFEED_IMPLEMENTATION
#include "gpufeed.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int static_b_read(const char *path, const char *column, int64_t *rows, int64_t *nulls, uint64_t *sum);

/* Same result as static_a_read, through a memory source and one-row-at-a-
   time reads instead (so the two units do not run identical code paths). */
int static_b_read(const char *path, const char *column, int64_t *rows, int64_t *nulls, uint64_t *sum)
{
    gpufeed_file_desc d;
    gpufeed_file *f;
    gpufeed_error err;
    gpufeed_column *c;
    gpufeed_column_desc cd;
    gpufeed_column_batch b;
    gpufeed_result r;
    const gpufeed_metadata *md;
    int32_t col, g;
    unsigned char *buf = NULL;
    size_t len = 0, cap = 0, got;
    FILE *fp = fopen(path, "rb");
    *rows = 0; *nulls = 0; *sum = 0;
    if (!fp) { fprintf(stderr, "static_b: cannot open %s\n", path); return 1; }
    do {
        if (len == cap) {
            unsigned char *nb = (unsigned char *)realloc(buf, cap = cap ? cap * 2 : 65536);
            if (!nb) { free(buf); fclose(fp); return 1; }
            buf = nb;
        }
        got = fread(buf + len, 1, cap - len, fp);
        len += got;
    } while (got);
    fclose(fp);
    memset(&d, 0, sizeof d);
    d.data = buf; d.data_size = len; d.name = path;
    if (gpufeed_file_open(&f, &d, &err) != GPUFEED_OK) { fprintf(stderr, "static_b: %s\n", err.message); free(buf); return 1; }
    md = gpufeed_file_metadata(f);
    col = gpufeed_file_find_column(f, column);
    if (col < 0 || md->columns[col].physical != GPUFEED_INT64) {
        fprintf(stderr, "static_b: %s: no INT64 column '%s'\n", path, column);
        gpufeed_file_close(f); free(buf);
        return 1;
    }
    memset(&cd, 0, sizeof cd);
    cd.max_rows = 1;
    for (g = 0; g < md->num_row_groups; g++) {
        if (gpufeed_column_open(&c, f, g, col, &cd, &err) != GPUFEED_OK) {
            fprintf(stderr, "static_b: %s\n", err.message); gpufeed_file_close(f); free(buf); return 1;
        }
        while ((r = gpufeed_column_read(c, &b)) == GPUFEED_OK) {
            const int64_t *v = (const int64_t *)b.values;
            *sum = *sum * 31u + (uint64_t)v[0] + (b.valid ? b.valid[0] : 1u);
            *rows += b.num_rows; *nulls += b.null_count;
        }
        if (r != GPUFEED_DONE) {
            fprintf(stderr, "static_b: %s\n", gpufeed_column_error(c));
            gpufeed_column_close(c); gpufeed_file_close(f); free(buf); return 1;
        }
        gpufeed_column_close(c);
    }
    gpufeed_file_close(f);
    free(buf);
    return 0;
}
