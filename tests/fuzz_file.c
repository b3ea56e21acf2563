/* Fuzz target: whole-file reading through gpufeed.h.

   Opens the input bytes as a Parquet file (memory source, or a read-at
   callback for some inputs), walks every piece of metadata, then for every
   row group x column lists the pages (gpufeed_chunk_pages: count, then
   fill) and reads the column to the end (gpufeed_column_open/read), touching
   every value so that ASan sees any out-of-bounds pointer. It checks the
   API's promises on the way (abort() on a violation):
     - every returned code is a known gpufeed_result, errors carry a message;
     - batches: 0 < num_rows <= max_rows, rows are contiguous, null_count
       matches valid[], null slots are zero, valid is NULL exactly when the
       column cannot be null, BOOLEAN is 0/1, FIXED_LEN_BYTE_ARRAY values have
       the column's width, DONE comes after exactly the row group's rows;
       nested leaves: levels within the column's maxima, every batch starts
       a row and holds num_rows of them, values = entries at max_def;
     - gpufeed_chunk_pages gives the same answer with and without an array;
     - allocation: the peak of live bytes stays under
       GF_FUZZ_MEM_BASE + GF_FUZZ_MEM_FACTOR * size, and nothing leaks.
   A hash of the input picks the variant: GPUFEED_OPEN_VERIFY_CRC (half the
   inputs; given to file_open or to column_open), rows per read, memory vs
   callback source, and (1 in 8 inputs) an allocation failure injected at the
   k-th allocation. The replay runs every file in that variant and in two
   fixed ones that read everything (see gff_replay).

   libFuzzer:
     clang -g -O1 -fsanitize=fuzzer,address,undefined -I. tests/fuzz_file.c -o build/fuzz_file
     mkdir -p build/fuzz-corpus && cp tests/data/?*.parquet tests/fuzz/?*.parquet build/fuzz-corpus/
     build/fuzz_file -dict=tests/fuzz.dict -max_len=262144 -rss_limit_mb=2048 build/fuzz-corpus
   Replay (plain main; files and directories, recursively):
     clang -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -DGF_FUZZ_MAIN -I. tests/fuzz_file.c -o build/fuzz_replay
     gcc -O2 -DGF_FUZZ_MAIN -I. tests/fuzz_file.c -o build/fuzz_replay
     build/fuzz_replay tests/data tests/fuzz
   The replay runs each file in a child process (so one crash does not hide
   the rest), prints FAIL and the name of every file that crashed or
   aborted, and ends with "N passed, N failed". GF_FUZZ_NOFORK=1 in the
   environment runs the files in-process instead (for a debugger). */
#if defined(GF_FUZZ_MAIN) && !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GPUFEED_STATIC
#define GPUFEED_IMPLEMENTATION
#include "gpufeed.h"

#ifndef GF_FUZZ_MEM_BASE
#define GF_FUZZ_MEM_BASE ((uint64_t)256 << 20)
#endif
#ifndef GF_FUZZ_MEM_FACTOR
#define GF_FUZZ_MEM_FACTOR 64
#endif

/* ---- counting allocator ------------------------------------------------ */

typedef struct gff_mem {
    uint64_t live, peak, limit;
    uint64_t nallocs;                  /* alloc + realloc calls */
    uint64_t fail_at;                  /* 0: never; else fail this call (1-based) */
    uint64_t failed;                   /* injected failures so far */
} gff_mem;

#define GFF_HDR 16                     /* keeps 16-byte alignment */

static void gff_check_peak(gff_mem *m, size_t want)
{
    if (m->live > m->peak) m->peak = m->live;
    if (m->peak > m->limit) {
        fprintf(stderr, "fuzz_file: live allocation %llu bytes (request %llu) exceeds the limit %llu\n",
                (unsigned long long)m->peak, (unsigned long long)want, (unsigned long long)m->limit);
        abort();
    }
}

static int gff_inject(gff_mem *m)
{
    m->nallocs++;
    if (m->fail_at && m->nallocs >= m->fail_at) { m->failed++; return 1; }
    return 0;
}

static void *gff_alloc(void *user, size_t size)
{
    gff_mem *m = (gff_mem *)user;
    unsigned char *p;
    if (gff_inject(m)) return NULL;
    if (size > m->limit) { /* would exceed anyway: report before malloc */
        m->live += size; gff_check_peak(m, size);
    }
    p = (unsigned char *)malloc(size + GFF_HDR);
    if (!p) return NULL;
    memcpy(p, &size, sizeof size);
    m->live += size;
    gff_check_peak(m, size);
    return p + GFF_HDR;
}

static void *gff_realloc(void *user, void *ptr, size_t size)
{
    gff_mem *m = (gff_mem *)user;
    unsigned char *p, *q;
    size_t old = 0;
    if (!ptr) return gff_alloc(user, size);
    if (gff_inject(m)) return NULL;
    p = (unsigned char *)ptr - GFF_HDR;
    memcpy(&old, p, sizeof old);
    if (size > old && size - old > m->limit) { m->live += size; gff_check_peak(m, size); }
    q = (unsigned char *)realloc(p, size + GFF_HDR);
    if (!q) return NULL;
    memcpy(q, &size, sizeof size);
    m->live = m->live - old + size; /* old and new both live during a copy; count the new size */
    gff_check_peak(m, size);
    return q + GFF_HDR;
}

static void gff_free(void *user, void *ptr)
{
    gff_mem *m = (gff_mem *)user;
    unsigned char *p;
    size_t old;
    if (!ptr) return;
    p = (unsigned char *)ptr - GFF_HDR;
    memcpy(&old, p, sizeof old);
    if (old > m->live) { fprintf(stderr, "fuzz_file: free of %llu bytes with only %llu live\n", (unsigned long long)old, (unsigned long long)m->live); abort(); }
    m->live -= old;
    free(p);
}

/* ---- helpers ------------------------------------------------------------- */

static volatile uint64_t gff_sink;     /* keeps the touched bytes alive */

/* Work budget per input, so that a tiny file claiming hundreds of millions
   of RLE-repeated values does not stall the fuzzer: every byte of a value is
   touched until GF_FUZZ_TOUCH_BUDGET bytes have been, then only its first
   and last byte; reading stops after GF_FUZZ_MAX_ROWS rows in all. */
#ifndef GF_FUZZ_TOUCH_BUDGET
#define GF_FUZZ_TOUCH_BUDGET ((uint64_t)64 << 20)
#endif
#ifndef GF_FUZZ_MAX_ROWS
#define GF_FUZZ_MAX_ROWS ((int64_t)1 << 22)
#endif
static uint64_t gff_touch_left;
static int64_t gff_rows_left;
/* replay statistics (GF_FUZZ_VERBOSE=1 prints them per file) */
static int gff_verbose;
static int64_t gff_st_cols_ok, gff_st_cols_err, gff_st_rows;
static int gff_st_open;

#define GFF_FAIL(...) do { fprintf(stderr, "fuzz_file: "); fprintf(stderr, __VA_ARGS__); \
    fputc('\n', stderr); abort(); } while (0)

static uint64_t gff_touch(const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    uint64_t s = 0;
    size_t i;
    for (i = 0; i < n; i++) s = s * 31 + b[i];
    return s;
}

static uint64_t gff_str(const char *s)
{
    if (!s) return 0;
    return gff_touch(s, strlen(s) + 1);
}

static int gff_known_result(gpufeed_result r)
{
    switch (r) {
    case GPUFEED_OK: case GPUFEED_DONE: case GPUFEED_ERR_INVALID_ARG:
    case GPUFEED_ERR_OUT_OF_MEMORY: case GPUFEED_ERR_LIMIT: case GPUFEED_ERR_UNSUPPORTED:
    case GPUFEED_ERR_PLATFORM: case GPUFEED_ERR_USAGE: case GPUFEED_ERR_IO: case GPUFEED_ERR_TRUNCATED:
    case GPUFEED_ERR_NOT_PARQUET: case GPUFEED_ERR_FOOTER: case GPUFEED_ERR_THRIFT:
    case GPUFEED_ERR_SCHEMA: case GPUFEED_ERR_ENCRYPTED: case GPUFEED_ERR_PAGE:
    case GPUFEED_ERR_CHECKSUM: case GPUFEED_ERR_CODEC: case GPUFEED_ERR_ENCODING:
    case GPUFEED_ERR_CORRUPT: case GPUFEED_ERR_DICTIONARY:
    case GPUFEED_ERR_NO_DEVICE: case GPUFEED_ERR_CUDA:
        return 1;
    }
    return 0;
}

/* every result the library hands out must be a known code with a string */
static void gff_result(gpufeed_result r, const char *where)
{
    const char *s = gpufeed_result_string(r);
    if (!s || !gff_known_result(r) || strcmp(s, "unknown result") == 0)
        GFF_FAIL("%s returned unknown result %d", where, (int)r);
    gff_sink += gff_str(s);
}

static void gff_message(const char *msg, const char *where)
{
    size_t n;
    if (!msg) GFF_FAIL("%s: NULL error message", where);
    n = strlen(msg);
    if (n == 0) GFF_FAIL("%s: empty error message", where);
    if (n >= GPUFEED_ERROR_MAX) GFF_FAIL("%s: error message of %u bytes", where, (unsigned)n);
    gff_sink += gff_touch(msg, n);
}

static void gff_error(gpufeed_result r, const gpufeed_error *err, const char *where)
{
    gff_result(r, where);
    if (r < 0) {
        if (err->code != r) GFF_FAIL("%s returned %d but err.code is %d", where, (int)r, (int)err->code);
        gff_message(err->message, where);
    }
}

/* ---- metadata walk ------------------------------------------------------- */

static void gff_stats(const gpufeed_statistics *s)
{
    if (s->has_min_value) gff_sink += gff_touch(s->min_value, s->min_value_len);
    if (s->has_max_value) gff_sink += gff_touch(s->max_value, s->max_value_len);
    if (s->has_min_legacy) gff_sink += gff_touch(s->min_legacy, s->min_legacy_len);
    if (s->has_max_legacy) gff_sink += gff_touch(s->max_legacy, s->max_legacy_len);
    gff_sink += (uint64_t)s->null_count + (uint64_t)s->distinct_count;
}

static void gff_metadata(gpufeed_file *f)
{
    const gpufeed_metadata *md = gpufeed_file_metadata(f);
    const uint8_t *footer;
    size_t flen = 0;
    int32_t i, c;
    if (!md) GFF_FAIL("gpufeed_file_metadata returned NULL");
    if (md->num_nodes < 1 || md->num_columns < 0 || md->num_row_groups < 0 || md->num_key_values < 0)
        GFF_FAIL("negative counts in the metadata");
    if (md->num_columns > md->num_nodes) GFF_FAIL("more columns than schema nodes");
    gff_sink += gff_str(md->created_by) + gff_str(gpufeed_file_name(f));
    footer = gpufeed_file_footer(f, &flen);
    if (flen != md->footer_length) GFF_FAIL("footer length %u vs %u", (unsigned)flen, md->footer_length);
    gff_sink += gff_touch(footer, flen);
    for (i = 0; i < md->num_nodes; i++) {
        const gpufeed_schema_node *nd = &md->nodes[i];
        gff_sink += gff_str(nd->name) + gff_str(nd->path);
        gff_sink += gff_str(gpufeed_physical_type_name(nd->physical));
        gff_sink += gff_str(gpufeed_logical_type_name(nd->logical));
        if (nd->parent < -1 || nd->parent >= md->num_nodes) GFF_FAIL("node %d: parent %d", i, nd->parent);
        if (nd->num_children > 0 && (nd->first_child <= i || nd->first_child + nd->num_children > md->num_nodes))
            GFF_FAIL("node %d: children [%d, +%d)", i, nd->first_child, nd->num_children);
        if (nd->column >= md->num_columns) GFF_FAIL("node %d: column %d", i, nd->column);
    }
    for (c = 0; c < md->num_columns; c++) {
        const gpufeed_column_info *ci = &md->columns[c];
        int32_t found;
        if (ci->node < 0 || ci->node >= md->num_nodes) GFF_FAIL("column %d: node %d", c, ci->node);
        if (md->nodes[ci->node].column != c) GFF_FAIL("column %d: node %d says column %d", c, ci->node, md->nodes[ci->node].column);
        if (ci->physical == GPUFEED_FIXED_LEN_BYTE_ARRAY && ci->type_length <= 0) GFF_FAIL("column %d: width %d", c, ci->type_length);
        found = gpufeed_file_find_column(f, ci->path);
        if (found < 0 || found > c || strcmp(md->columns[found].path, ci->path) != 0)
            GFF_FAIL("find_column('%s') = %d for column %d", ci->path, found, c);
    }
    for (i = 0; i < md->num_key_values; i++)
        gff_sink += gff_str(md->key_values[i].key) + gff_str(md->key_values[i].value);
    for (i = 0; i < md->num_row_groups; i++) {
        const gpufeed_row_group_info *rg = &md->row_groups[i];
        if (rg->num_rows < 0) GFF_FAIL("row group %d: %lld rows", i, (long long)rg->num_rows);
        for (c = 0; c < md->num_columns; c++) {
            const gpufeed_chunk_info *ch = &rg->chunks[c];
            gff_sink += gff_str(ch->file_path) + gff_str(gpufeed_codec_name(ch->codec));
            gff_sink += (uint64_t)ch->num_values + ch->encodings;
            if (ch->has_statistics) gff_stats(&ch->statistics);
        }
    }
}

/* ---- pages ---------------------------------------------------------------- */

static void gff_pages(gpufeed_file *f, int32_t rg, int32_t col)
{
    gpufeed_error err;
    int64_t count = -1, count2 = -1, i;
    gpufeed_page_info *pages;
    gpufeed_result r = gpufeed_chunk_pages(f, rg, col, NULL, 0, &count, &err), r2;
    gff_error(r, &err, "gpufeed_chunk_pages(count)");
    if (count < 0) GFF_FAIL("chunk_pages: count %lld", (long long)count);
    if (r == GPUFEED_ERR_OUT_OF_MEMORY) return;       /* injected: the fill call may differ */
    if (count > 16 * 1024 * 1024) GFF_FAIL("chunk_pages: %lld pages", (long long)count);
    pages = (gpufeed_page_info *)malloc((size_t)(count ? count : 1) * sizeof *pages);
    if (!pages) abort();
    memset(pages, 0xA5, (size_t)(count ? count : 1) * sizeof *pages);
    r2 = gpufeed_chunk_pages(f, rg, col, pages, count, &count2, &err);
    gff_error(r2, &err, "gpufeed_chunk_pages(fill)");
    if (r2 != GPUFEED_ERR_OUT_OF_MEMORY && (r2 != r || count2 != count))
        GFF_FAIL("chunk_pages: count call gave %d/%lld, fill call %d/%lld", (int)r, (long long)count, (int)r2, (long long)count2);
    for (i = 0; i < count2 && i < count; i++) {
        const gpufeed_page_info *p = &pages[i];
        gff_sink += (uint64_t)p->type + (uint64_t)p->offset + (uint64_t)p->header_size + (uint64_t)p->compressed_size +
                    (uint64_t)p->uncompressed_size + (uint64_t)p->num_values + (uint64_t)p->num_rows +
                    (uint64_t)p->first_value + (uint64_t)p->has_crc;
        gff_sink += gff_str(gpufeed_encoding_name(p->encoding));
        if (p->header_size <= 0 || p->compressed_size < 0 || p->offset < 4)
            GFF_FAIL("chunk_pages: page %lld has header %d bytes, body %d bytes at %lld", (long long)i,
                     p->header_size, p->compressed_size, (long long)p->offset);
        if (i > 0 && p->offset < pages[i - 1].offset + pages[i - 1].header_size + pages[i - 1].compressed_size)
            GFF_FAIL("chunk_pages: page %lld overlaps the previous one", (long long)i);
    }
    free(pages);
}

/* ---- column reading ------------------------------------------------------- */

static int gff_zero(const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    size_t i;
    for (i = 0; i < n; i++) if (b[i]) return 0;
    return 1;
}

static void gff_column(gpufeed_file *f, int32_t rg, int32_t col, int64_t max_rows, uint32_t flags)
{
    const gpufeed_metadata *md = gpufeed_file_metadata(f);
    const gpufeed_column_info *ci = &md->columns[col];
    const int64_t rg_rows = md->row_groups[rg].num_rows;
    gpufeed_column_desc cd;
    gpufeed_column *c = NULL;
    gpufeed_column_batch b;
    gpufeed_error err;
    gpufeed_result r;
    int64_t rows = 0, limit = max_rows > 0 ? max_rows : 65536, i;
    size_t es;
    int64_t batches = 0;
    memset(&cd, 0, sizeof cd);
    cd.max_rows = max_rows; cd.flags = flags;
    r = gpufeed_column_open(&c, f, rg, col, &cd, &err);
    gff_error(r, &err, "gpufeed_column_open");
    if (r != GPUFEED_OK) {
        if (c) GFF_FAIL("column_open failed but set *out");
        gff_st_cols_err++;
        if (gff_verbose) fprintf(stderr, "  open: %s\n", err.message);
        return;
    }
    if (!c) GFF_FAIL("column_open succeeded without a reader");
    switch (ci->physical) {
    case GPUFEED_BOOLEAN: es = 1; break;
    case GPUFEED_INT32: case GPUFEED_FLOAT: es = 4; break;
    case GPUFEED_INT64: case GPUFEED_DOUBLE: case GPUFEED_INT96: es = 8; break;
    default: es = sizeof(gpufeed_bytes); break;
    }
    for (;;) {
        int64_t nulls = 0;
        r = gpufeed_column_read(c, &b);
        gff_result(r, "gpufeed_column_read");
        if (r < 0) {
            gff_message(gpufeed_column_error(c), "gpufeed_column_read");
            gff_st_cols_err++;
            if (gff_verbose) fprintf(stderr, "  read: %s\n", gpufeed_column_error(c));
            break;
        }
        if (r == GPUFEED_DONE) {
            if (rows != rg_rows) GFF_FAIL("DONE after %lld of %lld rows", (long long)rows, (long long)rg_rows);
            gff_st_cols_ok++;
            break;
        }
        if (++batches > rg_rows + 1) GFF_FAIL("more batches than rows");
        if (b.num_rows <= 0 || b.num_rows > limit) GFF_FAIL("batch of %lld rows (max %lld)", (long long)b.num_rows, (long long)limit);
        if (b.first_row != rows) GFF_FAIL("batch starts at row %lld, expected %lld", (long long)b.first_row, (long long)rows);
        if (rows + b.num_rows > rg_rows) GFF_FAIL("%lld rows read of a %lld-row group", (long long)(rows + b.num_rows), (long long)rg_rows);
        if (!b.values) GFF_FAIL("batch without values");
        gff_sink += (uint64_t)b.page + (uint64_t)b.encoding;
        if (ci->max_rep > 0) { /* a nested leaf: levels and packed values */
            int64_t starts = 0, present = 0;
            if (b.valid || !b.rep_levels || !b.def_levels) GFF_FAIL("nested batch: valid %p, levels %p %p", (const void *)b.valid, (const void *)b.rep_levels, (const void *)b.def_levels);
            if (b.num_levels < b.num_rows || b.rep_levels[0] != 0) GFF_FAIL("nested batch of %lld levels for %lld rows does not start a row", (long long)b.num_levels, (long long)b.num_rows);
            for (i = 0; i < b.num_levels; i++) {
                if (b.rep_levels[i] < 0 || b.rep_levels[i] > ci->max_rep || b.def_levels[i] < 0 || b.def_levels[i] > ci->max_def)
                    GFF_FAIL("level entry %lld: rep %d def %d (max %d / %d)", (long long)i, b.rep_levels[i], b.def_levels[i], ci->max_rep, ci->max_def);
                starts += b.rep_levels[i] == 0;
                present += b.def_levels[i] == ci->max_def;
            }
            if (starts != b.num_rows || present != b.num_values || b.null_count != b.num_levels - b.num_values)
                GFF_FAIL("nested batch: %lld rows, %lld values, %lld nulls; levels say %lld rows, %lld values", (long long)b.num_rows,
                         (long long)b.num_values, (long long)b.null_count, (long long)starts, (long long)present);
            for (i = 0; i < b.num_values; i++) {
                const unsigned char *slot = (const unsigned char *)b.values + (size_t)i * es;
                if (es == sizeof(gpufeed_bytes) && (ci->physical == GPUFEED_BYTE_ARRAY || ci->physical == GPUFEED_FIXED_LEN_BYTE_ARRAY)) {
                    gpufeed_bytes v;
                    memcpy(&v, slot, sizeof v);
                    if (ci->physical == GPUFEED_FIXED_LEN_BYTE_ARRAY && v.len != (uint32_t)ci->type_length)
                        GFF_FAIL("FIXED_LEN_BYTE_ARRAY value of %u bytes, width %d", v.len, ci->type_length);
                    if (v.len && !v.ptr) GFF_FAIL("bytes value with NULL pointer and length %u", v.len);
                    if (v.len <= gff_touch_left) { gff_sink += gff_touch(v.ptr, v.len); gff_touch_left -= v.len; }
                    else if (v.len) { gff_sink += (uint64_t)v.ptr[0] + v.ptr[v.len - 1]; gff_touch_left = 0; }
                } else {
                    if (ci->physical == GPUFEED_BOOLEAN && slot[0] > 1) GFF_FAIL("BOOLEAN value %d", slot[0]);
                    gff_sink += gff_touch(slot, es);
                }
            }
            rows += b.num_rows;
            gff_st_rows += b.num_rows;
            gff_rows_left -= b.num_levels;
            if (gff_rows_left <= 0) break;       /* work budget spent */
            continue;
        }
        if (b.rep_levels || b.def_levels || b.num_levels || b.num_values) GFF_FAIL("flat batch with level fields set");
        if ((b.valid != NULL) != (ci->max_def > 0)) GFF_FAIL("valid is %s for max_def %d", b.valid ? "set" : "NULL", ci->max_def);
        for (i = 0; i < b.num_rows; i++) {
            const unsigned char *slot = (const unsigned char *)b.values + (size_t)i * es;
            int present = b.valid ? b.valid[i] : 1;
            if (b.valid && b.valid[i] > 1) GFF_FAIL("valid[%lld] = %d", (long long)i, b.valid[i]);
            if (!present) {
                nulls++;
                if (!gff_zero(slot, es)) GFF_FAIL("null slot %lld is not zero", (long long)(rows + i));
                continue;
            }
            if (es == sizeof(gpufeed_bytes) && (ci->physical == GPUFEED_BYTE_ARRAY || ci->physical == GPUFEED_FIXED_LEN_BYTE_ARRAY)) {
                gpufeed_bytes v;
                memcpy(&v, slot, sizeof v);
                if (ci->physical == GPUFEED_FIXED_LEN_BYTE_ARRAY && v.len != (uint32_t)ci->type_length)
                    GFF_FAIL("FIXED_LEN_BYTE_ARRAY value of %u bytes, width %d", v.len, ci->type_length);
                if (v.len && !v.ptr) GFF_FAIL("bytes value with NULL pointer and length %u", v.len);
                if (v.len <= gff_touch_left) { gff_sink += gff_touch(v.ptr, v.len); gff_touch_left -= v.len; }
                else { gff_sink += (uint64_t)v.ptr[0] + v.ptr[v.len - 1]; gff_touch_left = 0; }
            } else {
                if (ci->physical == GPUFEED_BOOLEAN && slot[0] > 1) GFF_FAIL("BOOLEAN value %d", slot[0]);
                gff_sink += gff_touch(slot, es);
            }
        }
        if (nulls != b.null_count) GFF_FAIL("null_count %lld, valid[] says %lld", (long long)b.null_count, (long long)nulls);
        rows += b.num_rows;
        gff_st_rows += b.num_rows;
        gff_rows_left -= b.num_rows;
        if (gff_rows_left <= 0) break;           /* work budget spent */
    }
    gff_sink += gpufeed_column_bytes_read(c);
    gpufeed_column_close(c);
}

/* ---- callback source -------------------------------------------------------- */

typedef struct gff_src { const uint8_t *data; size_t size; int closed; } gff_src;

static int gff_read_at(void *ctx, uint64_t off, void *buf, size_t len)
{
    gff_src *s = (gff_src *)ctx;
    if (off > s->size || len > s->size - off) return -1;
    if (len) memcpy(buf, s->data + off, len);
    return 0;
}
static void gff_src_close(void *ctx) { ((gff_src *)ctx)->closed++; }

/* ---- the target ---------------------------------------------------------------- */

/* One run over the input. `h` picks the variant: bit 0 VERIFY_CRC (bit 9:
   in the column desc instead of the open desc), bits 1-2 rows per read,
   bit 3 callback source, bits 4-6 all zero: fail an allocation (the
   (1 + (h >> 8) % 48)-th and every later one). */
static void gff_run(const uint8_t *data, size_t size, uint32_t h)
{
    gff_mem mem;
    gff_src src;
    gpufeed_source source;
    gpufeed_file_desc d;
    gpufeed_file *f = NULL;
    gpufeed_error err;
    gpufeed_result r, open_r;
    uint32_t flags, col_flags = 0;
    int64_t max_rows;
    int32_t g, c;
    static const int64_t rows_choice[4] = { 0, 1, 7, 1000 };

    memset(&mem, 0, sizeof mem);
    mem.limit = GF_FUZZ_MEM_BASE + (uint64_t)GF_FUZZ_MEM_FACTOR * (uint64_t)size;
    if (((h >> 4) & 7) == 0) mem.fail_at = 1 + ((h >> 8) % 48);  /* 1 in 8: inject an allocation failure */
    flags = (h & 1) ? GPUFEED_OPEN_VERIFY_CRC : 0;
    if (flags && ((h >> 9) & 1)) { col_flags = flags; flags = 0; }
    max_rows = rows_choice[(h >> 1) & 3];

    memset(&d, 0, sizeof d);
    if ((h >> 3) & 1) {
        src.data = data; src.size = size; src.closed = 0;
        memset(&source, 0, sizeof source);
        source.read_at = gff_read_at; source.close = gff_src_close; source.ctx = &src; source.size = size;
        d.source = &source;
    } else {
        d.data = data ? (const void *)data : (const void *)""; d.data_size = size;
    }
    d.flags = flags;
    d.allocator.alloc = gff_alloc; d.allocator.realloc = gff_realloc; d.allocator.free = gff_free;
    d.allocator.user = &mem;

    gff_touch_left = GF_FUZZ_TOUCH_BUDGET;
    gff_rows_left = GF_FUZZ_MAX_ROWS;
    r = open_r = gpufeed_file_open(&f, &d, &err);
    gff_error(r, &err, "gpufeed_file_open");
    gff_st_open = r;
    if (gff_verbose && r != GPUFEED_OK) fprintf(stderr, "  file_open: %s\n", err.message);
    if (r != GPUFEED_OK) {
        if (f) GFF_FAIL("file_open failed but set *out");
    } else {
        const gpufeed_metadata *md;
        if (!f) GFF_FAIL("file_open succeeded without a file");
        gff_metadata(f);
        md = gpufeed_file_metadata(f);
        for (g = 0; g < md->num_row_groups && gff_rows_left > 0; g++)
            for (c = 0; c < md->num_columns && gff_rows_left > 0; c++) {
                gff_pages(f, g, c);
                gff_column(f, g, c, max_rows, col_flags);
            }
        /* out-of-range arguments */
        {
            gpufeed_column *cc = NULL;
            int64_t n = 0;
            r = gpufeed_column_open(&cc, f, md->num_row_groups, 0, NULL, &err);
            if (r != GPUFEED_ERR_INVALID_ARG || cc) GFF_FAIL("column_open(bad row group) = %d", (int)r);
            r = gpufeed_chunk_pages(f, 0, md->num_columns, NULL, 0, &n, &err);
            if (r != GPUFEED_ERR_INVALID_ARG) GFF_FAIL("chunk_pages(bad column) = %d", (int)r);
        }
        gpufeed_file_close(f);
    }
    if (d.source && (src.closed > 1 || (open_r == GPUFEED_OK && src.closed != 1)))
        GFF_FAIL("source close called %d times", src.closed);
    if (mem.live != 0) GFF_FAIL("%llu bytes still allocated after gpufeed_file_close", (unsigned long long)mem.live);
    if (gff_verbose)
        fprintf(stderr, "  open %d (%s), columns ok %lld, errors %lld, rows %lld, peak %llu bytes (%.1fx the input), crc %d, max_rows %lld, %s source, fail_at %llu\n",
                gff_st_open, gpufeed_result_string((gpufeed_result)gff_st_open), (long long)gff_st_cols_ok,
                (long long)gff_st_cols_err, (long long)gff_st_rows, (unsigned long long)mem.peak,
                size ? (double)mem.peak / (double)size : 0.0, (flags | col_flags) != 0, (long long)max_rows,
                d.source ? "callback" : "memory", (unsigned long long)mem.fail_at);
    gff_st_cols_ok = gff_st_cols_err = gff_st_rows = 0;
}

static uint32_t gff_hash(const uint8_t *data, size_t size)
{
    uint32_t h = 2166136261u;
    size_t i;
    for (i = 0; i < size; i++) h = (h ^ data[i]) * 16777619u;   /* FNV-1a */
    return h ^ (h >> 15);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gff_run(data, size, gff_hash(data, size));
    return 0;
}

/* ---- replay main -------------------------------------------------------------------- */

#ifdef GF_FUZZ_MAIN
#include <dirent.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static int gff_passed, gff_failed, gff_nofork;

/* The fuzzer's variant of the input, then two fixed ones that read all of
   it (no injected allocation failure): CRC checks + default rows per read
   from memory, and no CRC + 7 rows per read from a callback source. */
static void gff_replay(const uint8_t *data, size_t n)
{
    LLVMFuzzerTestOneInput(data, n);
    gff_run(data, n, 0x11u);
    gff_run(data, n, 0x1Cu);
}

static int gff_load(const char *path, uint8_t **out, size_t *n)
{
    FILE *fp = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t cap = 0, len = 0;
    if (!fp) return -1;
    for (;;) {
        size_t got;
        if (len == cap) {
            uint8_t *nb;
            cap = cap ? cap * 2 : 65536;
            nb = (uint8_t *)realloc(buf, cap);
            if (!nb) { free(buf); fclose(fp); return -1; }
            buf = nb;
        }
        got = fread(buf + len, 1, cap - len, fp);
        len += got;
        if (got == 0) break;
    }
    fclose(fp);
    *out = buf; *n = len;
    return 0;
}

static void gff_run_file(const char *path)
{
    uint8_t *buf = NULL;
    size_t n = 0;
    pid_t pid;
    int status = 0;
    if (gff_load(path, &buf, &n) != 0) {
        printf("FAIL %s (cannot read)\n", path); gff_failed++; return;
    }
    if (gff_verbose) fprintf(stderr, "%s (%llu bytes)\n", path, (unsigned long long)n);
    fflush(stdout); fflush(stderr);
    if (gff_nofork) {
        /* a copy of exactly n bytes, so ASan catches reads past the end */
        uint8_t *exact = (uint8_t *)malloc(n ? n : 1);
        if (!exact) abort();
        if (n) memcpy(exact, buf, n);
        gff_replay(exact, n);
        free(exact);
        gff_passed++;
        free(buf);
        return;
    }
    pid = fork();
    if (pid < 0) { perror("fork"); exit(2); }
    if (pid == 0) {
        uint8_t *exact = (uint8_t *)malloc(n ? n : 1);
        if (!exact) _exit(3);
        if (n) memcpy(exact, buf, n);
        free(buf);
        gff_replay(exact, n);
        free(exact);
        fflush(stdout); fflush(stderr);
        _exit(0);
    }
    free(buf);
    if (waitpid(pid, &status, 0) < 0) { perror("waitpid"); exit(2); }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) { gff_passed++; return; }
    gff_failed++;
    if (WIFSIGNALED(status)) printf("FAIL %s (signal %d)\n", path, WTERMSIG(status));
    else printf("FAIL %s (exit %d)\n", path, WEXITSTATUS(status));
}

static int gff_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void gff_walk(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) { printf("FAIL %s (no such file)\n", path); gff_failed++; return; }
    if (S_ISDIR(st.st_mode)) {
        DIR *dir = opendir(path);
        struct dirent *e;
        char **names = NULL;
        size_t nn = 0, cap = 0, k;
        if (!dir) { printf("FAIL %s (cannot open directory)\n", path); gff_failed++; return; }
        while ((e = readdir(dir)) != NULL) {
            size_t len;
            char *full;
            if (e->d_name[0] == '.') continue;             /* ., .., hidden files */
            len = strlen(path) + strlen(e->d_name) + 2;
            full = (char *)malloc(len);
            if (!full) abort();
            snprintf(full, len, "%s/%s", path, e->d_name);
            if (nn == cap) {
                char **nb;
                cap = cap ? cap * 2 : 64;
                nb = (char **)realloc(names, cap * sizeof *names);
                if (!nb) abort();
                names = nb;
            }
            names[nn++] = full;
        }
        closedir(dir);
        if (nn) qsort(names, nn, sizeof *names, gff_cmp);
        for (k = 0; k < nn; k++) { gff_walk(names[k]); free(names[k]); }
        free(names);
    } else if (S_ISREG(st.st_mode)) {
        gff_run_file(path);
    }
}

int main(int argc, char **argv)
{
    int i;
    const char *nf = getenv("GF_FUZZ_NOFORK");
    const char *vb = getenv("GF_FUZZ_VERBOSE");
    gff_nofork = nf && nf[0] && strcmp(nf, "0") != 0;
    gff_verbose = vb && vb[0] && strcmp(vb, "0") != 0;
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
        return 2;
    }
    for (i = 1; i < argc; i++) gff_walk(argv[i]);
    printf("%d passed, %d failed\n", gff_passed, gff_failed);
    return gff_failed ? 1 : 0;
}
#endif
