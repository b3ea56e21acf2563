/* Breadth of the page walk (>>pages, >>column): chunks with more pages than
   a 16-bit counter holds, and column chunks placed beyond 2 GiB and 4 GiB
   in the file (64-bit offsets throughout), through a read-at callback and
   through a sparse file on disk; page CRCs checked on every page.

   cc -O2 -I. -Itests tests/test_breadth.c -o build/test_breadth -lpthread -lm */
#define _POSIX_C_SOURCE 200809L
#define GPUFEED_IMPLEMENTATION
#define GPUFEED_STATIC
#include "gpufeed.h"
#include "pq_writer.h"
#include "gf_test.h"
#include <stdlib.h>
#include <unistd.h>
#include <fcntl.h>

/* a chunk of `npages` PLAIN INT32 pages (v1 and v2 alternating) holding
   value i at row i; page k holds 1 + k % 3 values */
static int64_t build_many_pages(pqw_buf *file, int npages, int crc, pqw_page **pages_out, pqw_buf **bodies_out)
{
    pqw_file f; pqw_schema sch[2]; pqw_rowgroup rg; pqw_chunk ch;
    pqw_page *pg = (pqw_page *)calloc((size_t)npages, sizeof *pg);
    pqw_buf *bodies = (pqw_buf *)calloc((size_t)npages, sizeof *bodies);
    int64_t row = 0;
    int k;
    for (k = 0; k < npages; k++) {
        int32_t n = 1 + k % 3, j;
        for (j = 0; j < n; j++) { int32_t v = (int32_t)(row + j); pqw_plain_i32(&bodies[k], &v, 1); }
        pg[k] = (k & 1) ? pqw_v2_page(&bodies[k], n, PQW_PLAIN, 0, 0, 0) : pqw_data_page(&bodies[k], n, PQW_PLAIN);
        if (k & 1) pg[k].is_compressed = pqw_set(0);
        pg[k].crc_auto = crc;
        row += n;
    }
    pqw_simple(&f, sch, &rg, &ch, "x", PQW_INT32, PQW_REQUIRED, pg, npages);
    pqw_build(&f, file);
    *pages_out = pg; *bodies_out = bodies;
    return row;
}

static void free_pages(pqw_page *pg, pqw_buf *bodies, int npages)
{
    int k;
    for (k = 0; k < npages; k++) pqw_free(&bodies[k]);
    free(bodies); free(pg);
}

/* reads column 0 of row group 0 and checks value i at row i */
static int64_t read_sequence(gpufeed_file *f, int64_t expect_rows, const char *what)
{
    gpufeed_column *c = NULL;
    gpufeed_column_desc cd;
    gpufeed_column_batch b;
    gpufeed_error err;
    gpufeed_result r;
    int64_t rows = 0, bad = 0;
    memset(&cd, 0, sizeof cd);
    cd.max_rows = 1000;
    cd.flags = GPUFEED_OPEN_VERIFY_CRC;
    r = gpufeed_column_open(&c, f, 0, 0, &cd, &err);
    CHECK_MSG(r == GPUFEED_OK, "%s: %s", what, err.message);
    if (r) return -1;
    while ((r = gpufeed_column_read(c, &b)) == GPUFEED_OK) {
        int64_t i;
        for (i = 0; i < b.num_rows; i++)
            if (((const int32_t *)b.values)[i] != (int32_t)(b.first_row + i)) bad++;
        rows += b.num_rows;
    }
    CHECK_MSG(r == GPUFEED_DONE, "%s: %s", what, gpufeed_column_error(c));
    CHECK_MSG(rows == expect_rows, "%s: %lld rows, expected %lld", what, (long long)rows, (long long)expect_rows);
    CHECK_MSG(bad == 0, "%s: %lld wrong values", what, (long long)bad);
    gpufeed_column_close(c);
    return rows;
}

static void test_more_than_32767_pages(void)
{
    pqw_buf file = {0}, *bodies;
    pqw_page *pg;
    const int npages = 40000;
    int64_t rows = build_many_pages(&file, npages, 1, &pg, &bodies), count = -1;
    gpufeed_file_desc d;
    gpufeed_file *f = NULL;
    gpufeed_error err;
    memset(&d, 0, sizeof d);
    d.data = file.p; d.data_size = file.n; d.name = "many_pages";
    d.flags = GPUFEED_OPEN_VERIFY_CRC;
    CHECK_MSG(gpufeed_file_open(&f, &d, &err) == GPUFEED_OK, "%s", err.message);
    if (f) {
        gpufeed_page_info *pi = (gpufeed_page_info *)malloc(sizeof *pi * (size_t)npages);
        CHECK(gpufeed_chunk_pages(f, 0, 0, NULL, 0, &count, &err) == GPUFEED_OK && count == npages);
        CHECK(gpufeed_chunk_pages(f, 0, 0, pi, npages, &count, &err) == GPUFEED_OK);
        CHECK(pi[npages - 1].first_value == rows - (1 + (npages - 1) % 3));
        CHECK(pi[npages - 1].has_crc == 1);
        read_sequence(f, rows, "40000 pages");
        free(pi);
        gpufeed_file_close(f);
    }
    /* a wrong CRC on page 39,999 is found and named */
    {
        gpufeed_column *c = NULL;
        gpufeed_column_desc cd;
        gpufeed_column_batch b;
        gpufeed_result r;
        file.p[pg[npages - 2].body_at] ^= 1;
        memset(&d, 0, sizeof d);
        d.data = file.p; d.data_size = file.n; d.name = "many_pages";
        CHECK(gpufeed_file_open(&f, &d, &err) == GPUFEED_OK);
        memset(&cd, 0, sizeof cd); cd.flags = GPUFEED_OPEN_VERIFY_CRC;
        CHECK(gpufeed_column_open(&c, f, 0, 0, &cd, &err) == GPUFEED_OK);
        while ((r = gpufeed_column_read(c, &b)) == GPUFEED_OK) {}
        CHECK(r == GPUFEED_ERR_CHECKSUM);
        CHECK_HAS(gpufeed_column_error(c), "page 39998");
        CHECK_HAS(gpufeed_column_error(c), "CRC");
        gpufeed_column_close(c);
        gpufeed_file_close(f);
    }
    free_pages(pg, bodies, npages);
    pqw_free(&file);
}

/* A file whose column chunk starts `shift` bytes further than where
   pq_writer put it: virtual bytes [4, 4 + shift) are zeros. */
typedef struct shifted { const pqw_buf *real; uint64_t shift; } shifted;

static int shifted_read(void *ctx, uint64_t off, void *buf, size_t len)
{
    const shifted *s = (const shifted *)ctx;
    uint8_t *o = (uint8_t *)buf;
    while (len) {
        size_t k;
        if (off < 4) { k = (size_t)(4 - off) < len ? (size_t)(4 - off) : len; memcpy(o, s->real->p + off, k); }
        else if (off < 4 + s->shift) { uint64_t room = 4 + s->shift - off; k = room < len ? (size_t)room : len; memset(o, 0, k); }
        else {
            uint64_t ro = off - s->shift;
            if (ro + len > s->real->n) return 1;
            k = len; memcpy(o, s->real->p + ro, k);
        }
        o += k; off += k; len -= k;
    }
    return 0;
}

static void build_shifted(pqw_buf *file, uint64_t shift, pqw_page *pg, pqw_buf *bodies, int npages, int64_t *rows)
{
    pqw_file f; pqw_schema sch[2]; pqw_rowgroup rg; pqw_chunk ch;
    int k;
    int64_t row = 0;
    for (k = 0; k < npages; k++) {
        int32_t n = 100, j;
        bodies[k].n = 0;
        for (j = 0; j < n; j++) { int32_t v = (int32_t)(row + j); pqw_plain_i32(&bodies[k], &v, 1); }
        pg[k] = pqw_data_page(&bodies[k], n, PQW_PLAIN);
        pg[k].crc_auto = 1;
        row += n;
    }
    *rows = row;
    /* pass 1 lays the pages out; pass 2 writes the footer with shifted offsets */
    pqw_simple(&f, sch, &rg, &ch, "x", PQW_INT32, PQW_REQUIRED, pg, npages);
    pqw_build(&f, file);
    ch.data_page_offset = pqw_set(pg[0].at + (int64_t)shift);
    ch.file_offset = pqw_set(ch.end + (int64_t)shift);
    file->n = 0;
    pqw_build(&f, file);
}

static void test_offsets_beyond_4gb(void)
{
    static const uint64_t shifts[] = { (uint64_t)3 << 30, (uint64_t)5 << 30 };  /* past 2 GiB, past 4 GiB */
    int s;
    for (s = 0; s < 2; s++) {
        pqw_buf file = {0}, bodies[4];
        pqw_page pg[4];
        int64_t rows = 0, count = 0;
        shifted sh;
        gpufeed_source src;
        gpufeed_file_desc d;
        gpufeed_file *f = NULL;
        gpufeed_error err;
        gpufeed_page_info pi[4];
        char what[64];
        memset(bodies, 0, sizeof bodies);
        build_shifted(&file, shifts[s], pg, bodies, 4, &rows);
        sh.real = &file; sh.shift = shifts[s];
        memset(&src, 0, sizeof src);
        src.read_at = shifted_read; src.ctx = &sh; src.size = file.n + shifts[s];
        memset(&d, 0, sizeof d);
        d.source = &src; d.name = "shifted";
        snprintf(what, sizeof what, "chunk at %llu GiB (callback)", (unsigned long long)(shifts[s] >> 30));
        CHECK_MSG(gpufeed_file_open(&f, &d, &err) == GPUFEED_OK, "%s: %s", what, err.message);
        if (f) {
            const gpufeed_metadata *md = gpufeed_file_metadata(f);
            CHECK(md->row_groups[0].chunks[0].data_page_offset == (int64_t)(pg[0].at + (int64_t)shifts[s]));
            CHECK(gpufeed_chunk_pages(f, 0, 0, pi, 4, &count, &err) == GPUFEED_OK && count == 4);
            CHECK(pi[3].offset == pg[3].at + (int64_t)shifts[s]);
            read_sequence(f, rows, what);
            gpufeed_file_close(f);
        }
#ifndef GPUFEED_NO_STDIO
        { /* the same bytes as a sparse file on disk: positioned reads */
            char path[] = "/tmp/gpufeed_sparse_XXXXXX";
            int fd = mkstemp(path);
            CHECK(fd >= 0);
            if (fd >= 0) {
                int ok = pwrite(fd, file.p, 4, 0) == 4 &&
                         pwrite(fd, file.p + 4, file.n - 4, (off_t)(4 + shifts[s])) == (ssize_t)(file.n - 4);
                close(fd);
                CHECK_MSG(ok, "cannot write the sparse file");
                if (ok) {
                    memset(&d, 0, sizeof d);
                    d.path = path;
                    d.flags = GPUFEED_OPEN_PREAD;
                    snprintf(what, sizeof what, "chunk at %llu GiB (sparse file, positioned reads)", (unsigned long long)(shifts[s] >> 30));
                    CHECK_MSG(gpufeed_file_open(&f, &d, &err) == GPUFEED_OK, "%s: %s", what, err.message);
                    if (f) { read_sequence(f, rows, what); gpufeed_file_close(f); }
                    d.flags = GPUFEED_OPEN_MMAP;
                    snprintf(what, sizeof what, "chunk at %llu GiB (sparse file, mmap)", (unsigned long long)(shifts[s] >> 30));
                    CHECK_MSG(gpufeed_file_open(&f, &d, &err) == GPUFEED_OK, "%s: %s", what, err.message);
                    if (f) { read_sequence(f, rows, what); gpufeed_file_close(f); }
                }
                unlink(path);
            }
        }
#endif
        {
            int k;
            for (k = 0; k < 4; k++) pqw_free(&bodies[k]);
        }
        pqw_free(&file);
    }
}

int main(void)
{
    RUN(test_more_than_32767_pages);
    RUN(test_offsets_beyond_4gb);
    return TEST_SUMMARY();
}
