/* Two-translation-unit test of GPUFEED_STATIC (tests/compile_matrix.sh):
   static_a.c and static_b.c each include the implementation with every
   function static. They must compile with -Wall -Wextra -Werror -pedantic
   (no unused-function warnings), link together without duplicate symbols,
   and read the same column to the same result.

       cc -std=c99 -Wall -Wextra -Werror -pedantic -I. tests/static_a.c tests/static_b.c -o build/static_ab
       build/static_ab tests/data/pyarrow_default.parquet */
#define GPUFEED_STATIC
#define GPUFEED_IMPLEMENTATION
#include "gpufeed.h"
#include <stdio.h>
#include <string.h>

/* in static_b.c */
int static_b_read(const char *path, const char *column, int64_t *rows, int64_t *nulls, uint64_t *sum);

/* Reads `column` of every row group: rows, nulls and a checksum of the
   values. Returns 0, or prints the error and returns 1. */
static int static_a_read(const char *path, const char *column, int64_t *rows, int64_t *nulls, uint64_t *sum)
{
    gpufeed_file_desc d;
    gpufeed_file *f;
    gpufeed_error err;
    gpufeed_column *c;
    gpufeed_column_batch b;
    gpufeed_result r;
    const gpufeed_metadata *md;
    int32_t col, g;
    memset(&d, 0, sizeof d);
    d.path = path;
    *rows = 0; *nulls = 0; *sum = 0;
    if (gpufeed_file_open(&f, &d, &err) != GPUFEED_OK) { fprintf(stderr, "static_a: %s\n", err.message); return 1; }
    md = gpufeed_file_metadata(f);
    col = gpufeed_file_find_column(f, column);
    if (col < 0 || md->columns[col].physical != GPUFEED_INT64) {
        fprintf(stderr, "static_a: %s: no INT64 column '%s'\n", path, column);
        gpufeed_file_close(f);
        return 1;
    }
    for (g = 0; g < md->num_row_groups; g++) {
        if (gpufeed_column_open(&c, f, g, col, NULL, &err) != GPUFEED_OK) {
            fprintf(stderr, "static_a: %s\n", err.message); gpufeed_file_close(f); return 1;
        }
        while ((r = gpufeed_column_read(c, &b)) == GPUFEED_OK) {
            const int64_t *v = (const int64_t *)b.values;
            int64_t i;
            for (i = 0; i < b.num_rows; i++) *sum = *sum * 31u + (uint64_t)v[i] + (b.valid ? b.valid[i] : 1u);
            *rows += b.num_rows; *nulls += b.null_count;
        }
        if (r != GPUFEED_DONE) {
            fprintf(stderr, "static_a: %s\n", gpufeed_column_error(c));
            gpufeed_column_close(c); gpufeed_file_close(f); return 1;
        }
        gpufeed_column_close(c);
    }
    gpufeed_file_close(f);
    return 0;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "tests/data/pyarrow_default.parquet";
    const char *column = argc > 2 ? argv[2] : "i64";
    int64_t ra, na, rb, nb;
    uint64_t sa, sb;
    if (static_a_read(path, column, &ra, &na, &sa) || static_b_read(path, column, &rb, &nb, &sb)) return 1;
    printf("static_a: %lld rows, %lld nulls, checksum %016llx\n", (long long)ra, (long long)na, (unsigned long long)sa);
    printf("static_b: %lld rows, %lld nulls, checksum %016llx\n", (long long)rb, (long long)nb, (unsigned long long)sb);
    if (ra != rb || na != nb || sa != sb || ra == 0) { printf("MISMATCH\n"); return 1; }
    printf("agree\n");
    return 0;
}
