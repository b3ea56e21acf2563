/* The lower level: one column chunk, page by page, as typed values and
   validity (tested: it prints the sum pyarrow gives).

   cc -O2 -I. examples/read_column.c -o read_column -lpthread -lm
*/
#define GPUFEED_IMPLEMENTATION
#include "gpufeed.h"
#include <stdio.h>

int main(void)
{
    gpufeed_file_desc d = {0};
    gpufeed_error err;
    gpufeed_file *f;
    gpufeed_column *c;
    gpufeed_column_batch b;
    gpufeed_result r;
    double sum = 0;

    d.path = "examples/data/flights.parquet";
    if (gpufeed_file_open(&f, &d, &err)) { fprintf(stderr, "%s\n", err.message); return 1; }
    int32_t col = gpufeed_file_find_column(f, "dep_delay");
    for (int32_t rg = 0; rg < gpufeed_file_metadata(f)->num_row_groups; rg++) {
        if (gpufeed_column_open(&c, f, rg, col, NULL, &err)) { fprintf(stderr, "%s\n", err.message); return 1; }
        while ((r = gpufeed_column_read(c, &b)) == GPUFEED_OK)
            for (int64_t i = 0; i < b.num_rows; i++)
                if (!b.valid || b.valid[i])
                    sum += ((const double *)b.values)[i];
        if (r != GPUFEED_DONE) fprintf(stderr, "%s\n", gpufeed_column_error(c));
        gpufeed_column_close(c);
    }
    printf("sum of dep_delay: %.0f\n", sum);
    gpufeed_file_close(f);
    return 0;
}
