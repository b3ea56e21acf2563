/* Hostile and malformed Parquet files, through gpufeed's public API.

   Every case asserts a specific result code and a message that names the
   file (and, where it applies, the row group, the column path, the page and
   the byte offset). Every case runs under a counting allocator: the peak of
   live bytes stays below 64 x file size + 1 MiB, nothing leaks, and an
   allocation past that bound is refused (so a hostile file cannot make the
   test allocate gigabytes). Files are built in memory with tests/pq_writer.h
   or derived from the files in tests/data. Run from the repository root.
   GPUFEED_MAX_LIST_WIDTH is lowered so that a list over the limit fits the
   memory bound. */
#define GPUFEED_MAX_LIST_WIDTH 1000
#define GPUFEED_IMPLEMENTATION
#include "../gpufeed.h"
#include "gf_test.h"
#include "pq_writer.h"
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* the name given to gpufeed: format characters catch a name used as a format */
#define NAME "hostile-%s%d.parquet"

/* ---- counting allocator ------------------------------------------------- */

typedef struct counting {
    size_t cur, peak, limit, biggest_refused;
    long refused, live;
} counting;
static counting g_mem;
static long g_rows_after_end;          /* reads that gave rows after DONE or an error */

typedef union { size_t n; long double ld; void *vp; long long ll; double d; } mem_hdr;

static void *c_alloc(void *u, size_t n)
{
    counting *c = (counting *)u;
    mem_hdr *h;
    if (n > c->limit || c->cur + n > c->limit) {
        c->refused++;
        if (n > c->biggest_refused) c->biggest_refused = n;
        return NULL;
    }
    h = (mem_hdr *)malloc(sizeof *h + n);
    if (!h) return NULL;
    h->n = n;
    c->cur += n; c->live++;
    if (c->cur > c->peak) c->peak = c->cur;
    return h + 1;
}
static void c_free(void *u, void *p)
{
    counting *c = (counting *)u;
    mem_hdr *h;
    if (!p) return;
    h = (mem_hdr *)p - 1;
    c->cur -= h->n; c->live--;
    free(h);
}
static void *c_realloc(void *u, void *p, size_t n)
{
    counting *c = (counting *)u;
    mem_hdr *h, *nh;
    size_t old;
    if (!p) return c_alloc(u, n);
    h = (mem_hdr *)p - 1;
    old = h->n;
    if (n > c->limit || c->cur - old + n > c->limit) {
        c->refused++;
        if (n > c->biggest_refused) c->biggest_refused = n;
        return NULL;
    }
    nh = (mem_hdr *)realloc(h, sizeof *nh + n);
    if (!nh) return NULL;
    nh->n = n;
    c->cur = c->cur - old + n;
    if (c->cur > c->peak) c->peak = c->cur;
    return nh + 1;
}

static size_t mem_bound(size_t file_size) { return 64 * file_size + (1u << 20); }
static void mem_reset(size_t file_size)
{
    memset(&g_mem, 0, sizeof g_mem);
    g_mem.limit = mem_bound(file_size);
}
/* bounded, nothing refused, nothing leaked */
static int mem_ok(void) { return g_mem.refused == 0 && g_mem.peak <= g_mem.limit && g_mem.cur == 0 && g_mem.live == 0; }
static void mem_report(int line)
{
    fprintf(stderr, "  (line %d) memory: peak %zu of %zu allowed, %ld refused (biggest %zu), %zu bytes / %ld blocks live\n",
            line, g_mem.peak, g_mem.limit, g_mem.refused, g_mem.biggest_refused, g_mem.cur, g_mem.live);
}

static void desc_init(gpufeed_file_desc *d, const void *data, size_t n)
{
    memset(d, 0, sizeof *d);
    d->data = data ? data : ""; d->data_size = n; d->name = NAME;
    d->allocator.alloc = c_alloc; d->allocator.realloc = c_realloc; d->allocator.free = c_free;
    d->allocator.user = &g_mem;
}

/* ---- running a whole file ------------------------------------------------ */

typedef struct outcome {
    gpufeed_result r;                  /* first error; GPUFEED_OK when all read */
    int stage;                         /* 0 open, 1 column open, 2 read */
    int rg, col;
    char msg[GPUFEED_ERROR_MAX];
    int64_t values;                    /* rows read before the error */
} outcome;

/* every column's pages walked by gpufeed_chunk_pages: must not crash */
static void walk_pages(gpufeed_file *f)
{
    const gpufeed_metadata *md = gpufeed_file_metadata(f);
    int g, c;
    for (g = 0; g < md->num_row_groups && g < 4; g++)
        for (c = 0; c < md->num_columns && c < 64; c++) {
            gpufeed_page_info pi[8];
            int64_t count = 0;
            gpufeed_error e;
            gpufeed_result r = gpufeed_chunk_pages(f, g, c, pi, 8, &count, &e);
            if (r != GPUFEED_OK && !strstr(e.message, NAME) && !strstr(e.message, gpufeed_file_name(f)))
                fprintf(stderr, "  chunk_pages message lacks the name: %s\n", e.message);
        }
}

/* opens (open flags `flags`) and reads every column of every row group until
   the first error */
static void run_desc(const gpufeed_file_desc *d, outcome *o)
{
    gpufeed_file *f = NULL;
    gpufeed_error err;
    const gpufeed_metadata *md;
    int g, c;
    memset(o, 0, sizeof *o);
    o->r = gpufeed_file_open(&f, d, &err);
    if (o->r != GPUFEED_OK) {
        strcpy(o->msg, err.message);
        if (err.code != o->r) { o->msg[0] = 0; strcat(o->msg, "err.code differs from the result"); }
        if (f != NULL) { gpufeed_file_close(f); strcat(o->msg, " [out not NULL]"); }
        return;
    }
    md = gpufeed_file_metadata(f);
    for (g = 0; g < md->num_row_groups && !o->r; g++)
        for (c = 0; c < md->num_columns && !o->r; c++) {
            gpufeed_column *col = NULL;
            gpufeed_column_desc cd;
            gpufeed_column_batch b;
            gpufeed_result r;
            memset(&cd, 0, sizeof cd);
            cd.max_rows = 4096;
            r = gpufeed_column_open(&col, f, g, c, &cd, &err);
            if (r != GPUFEED_OK) {
                o->r = r; o->stage = 1; o->rg = g; o->col = c; strcpy(o->msg, err.message);
                break;
            }
            while ((r = gpufeed_column_read(col, &b)) == GPUFEED_OK) o->values += b.num_rows;
            if (r != GPUFEED_DONE) { o->r = r; o->stage = 2; o->rg = g; o->col = c; strcpy(o->msg, gpufeed_column_error(col)); }
            /* reading again after the end or an error: no crash; counted */
            if (gpufeed_column_read(col, &b) == GPUFEED_OK) {
                if (!g_rows_after_end++ || getenv("GF_VERBOSE")) fprintf(stderr, "  note: a read after %s gave rows (%s)\n", gpufeed_result_string(r), o->msg);
            }
            gpufeed_column_close(col);
        }
    walk_pages(f);
    gpufeed_file_close(f);
}

static void run_mem(const void *data, size_t n, uint32_t flags, outcome *o)
{
    gpufeed_file_desc d;
    desc_init(&d, data, n);
    d.flags = flags;
    mem_reset(n);
    run_desc(&d, o);
}

/* the case must fail with `code`; the message must name the file and
   contain every needle (NULL-terminated) */
static void expect_fail_(int line, const pqw_buf *file, uint32_t flags, gpufeed_result code, const char *const *needles)
{
    outcome o;
    int i;
    run_mem(file->p, file->n, flags, &o);
    CHECK_MSG(o.r == code, "line %d: expected %s (%d), got %s (%d): %s", line,
              gpufeed_result_string(code), code, gpufeed_result_string(o.r), o.r, o.msg);
    CHECK_MSG(strstr(o.msg, NAME) != NULL, "line %d: message \"%s\" does not name the file", line, o.msg);
    for (i = 0; needles && needles[i]; i++)
        CHECK_MSG(strstr(o.msg, needles[i]) != NULL, "line %d: message \"%s\" lacks \"%s\"", line, o.msg, needles[i]);
    /* where the error is: a read error names row group, column, page and
       byte offset; a column open error the row group and column; Thrift
       errors a byte offset */
    if (o.stage == 2)
        CHECK_MSG(strstr(o.msg, "row group ") && strstr(o.msg, "column '") && strstr(o.msg, ", page ") && strstr(o.msg, "(byte offset "),
                  "line %d: read error without its place: %s", line, o.msg);
    if (o.stage == 1)
        CHECK_MSG(strstr(o.msg, "row group ") && strstr(o.msg, "column '"), "line %d: column error without its place: %s", line, o.msg);
    if (o.r == GPUFEED_ERR_THRIFT)
        CHECK_MSG(strstr(o.msg, "byte offset") != NULL, "line %d: Thrift error without a byte offset: %s", line, o.msg);
    if (!mem_ok()) { mem_report(line); CHECK_MSG(0, "line %d: memory not bounded or leaked", line); }
}
#define EXPECT_FAIL(file, flags, code, ...) expect_fail_(__LINE__, (file), (flags), (code), (const char *const[]){ __VA_ARGS__, NULL })
#define EXPECT_FAIL0(file, flags, code) expect_fail_(__LINE__, (file), (flags), (code), NULL)
/* builds the sfile first, then evaluates the needles (page offsets) */
#define SFAIL(s, flags, code, ...) do { s_build(s); { const char *const nd_[] = { __VA_ARGS__, NULL }; \
    expect_fail_(__LINE__, &(s)->out, (flags), (code), nd_); } } while (0)
#define SFAIL0(s, flags, code) do { s_build(s); expect_fail_(__LINE__, &(s)->out, (flags), (code), NULL); } while (0)

/* ---- a small INT32 file, easy to break ---------------------------------- */

typedef struct sfile {
    pqw_schema sch[8];
    pqw_page pages[8];
    pqw_buf bodies[8];
    pqw_page pages2[4];
    pqw_buf bodies2[4];
    pqw_chunk ch[2];
    pqw_rowgroup rg;
    pqw_file f;
    pqw_buf out;
    char off[64];                      /* "byte offset N" of pages[0] */
} sfile;

/* value of row r of the INT32 column */
static int32_t xval(int64_t r) { return (int32_t)(r * 11 - 7); }

/* an INT32 column "x" (repetition rep) of npages pages of 10 rows; optional
   columns have every third row null */
static void s_init(sfile *s, int npages, int rep)
{
    int p, i;
    memset(s, 0, sizeof *s);
    for (p = 0; p < npages; p++) {
        int32_t v[10]; uint32_t lv[10]; int nn = 0;
        for (i = 0; i < 10; i++) {
            int64_t r = p * 10 + i;
            lv[i] = rep == PQW_OPTIONAL ? (r % 3 != 2) : 1;
            if (lv[i]) v[nn++] = xval(r);
        }
        if (rep == PQW_OPTIONAL) pqw_levels_v1(&s->bodies[p], lv, 10, 1);
        pqw_plain_i32(&s->bodies[p], v, (size_t)nn);
        s->pages[p] = pqw_data_page(&s->bodies[p], 10, PQW_PLAIN);
    }
    pqw_simple(&s->f, s->sch, &s->rg, &s->ch[0], "x", PQW_INT32, rep, s->pages, npages);
}
/* a second column "y" (DOUBLE required, one page of 10 * npages rows) */
static void s_add_double(sfile *s, int rows)
{
    int i;
    for (i = 0; i < rows; i++) { double d = i * 0.25; pqw_plain_double(&s->bodies2[0], &d, 1); }
    s->pages2[0] = pqw_data_page(&s->bodies2[0], rows, PQW_PLAIN);
    s->sch[0] = pqw_root(2);
    s->sch[2] = pqw_leaf("y", PQW_DOUBLE, PQW_REQUIRED);
    s->f.nschema = 3;
    memset(&s->ch[1], 0, sizeof s->ch[1]);
    s->ch[1].pages = s->pages2; s->ch[1].npages = 1; s->ch[1].physical = PQW_DOUBLE; s->ch[1].path = "y";
    s->rg.nchunks = 2;
}
static pqw_buf *s_build(sfile *s)
{
    s->out.n = 0;
    pqw_build(&s->f, &s->out);
    sprintf(s->off, "byte offset %lld", (long long)s->pages[0].at);
    return &s->out;
}
static void s_free(sfile *s)
{
    int i;
    for (i = 0; i < 8; i++) pqw_free(&s->bodies[i]);
    for (i = 0; i < 4; i++) pqw_free(&s->bodies2[i]);
    pqw_free(&s->out);
}
static char *page_off(sfile *s, int p)
{
    static char buf[64];
    sprintf(buf, "byte offset %lld", (long long)s->pages[p].at);
    return buf;
}

/* reads column 0 of row group 0 and checks rows against xval (nulls where
   expected); returns 1 when all rows 0..nrows-1 came back right */
static int reads_x(const pqw_buf *file, int64_t nrows, int rep, int64_t max_rows)
{
    gpufeed_file_desc d;
    gpufeed_file *f = NULL;
    gpufeed_error err;
    gpufeed_column *c = NULL;
    gpufeed_column_desc cd;
    gpufeed_column_batch b;
    gpufeed_result r;
    int64_t row = 0;
    int ok = 1;
    desc_init(&d, file->p, file->n);
    mem_reset(file->n);
    if (gpufeed_file_open(&f, &d, &err)) { fprintf(stderr, "  open: %s\n", err.message); return 0; }
    memset(&cd, 0, sizeof cd); cd.max_rows = max_rows;
    if (gpufeed_column_open(&c, f, 0, 0, &cd, &err)) { fprintf(stderr, "  column open: %s\n", err.message); gpufeed_file_close(f); return 0; }
    while ((r = gpufeed_column_read(c, &b)) == GPUFEED_OK) {
        int64_t i;
        for (i = 0; i < b.num_rows; i++, row++) {
            int want_valid = rep == PQW_OPTIONAL ? (row % 3 != 2) : 1;
            int valid = b.valid ? b.valid[i] : 1;
            int32_t v = ((const int32_t *)b.values)[i];
            if (valid != want_valid || (valid && v != xval(row)) || (!valid && v != 0)) {
                if (ok) fprintf(stderr, "  row %lld: valid %d value %d\n", (long long)row, valid, v);
                ok = 0;
            }
        }
    }
    if (r != GPUFEED_DONE) { fprintf(stderr, "  read: %s\n", gpufeed_column_error(c)); ok = 0; }
    if (row != nrows) { fprintf(stderr, "  %lld rows, expected %lld\n", (long long)row, (long long)nrows); ok = 0; }
    gpufeed_column_close(c);
    gpufeed_file_close(f);
    if (!mem_ok()) { mem_report(__LINE__); ok = 0; }
    return ok;
}

/* ---- file level ---------------------------------------------------------- */

static void test_tiny_and_magic(void)
{
    pqw_buf b = {0};
    sfile s;
    outcome o;
    static const uint8_t empty[1] = { 0 };
    run_mem(empty, 0, 0, &o);
    CHECK(o.r == GPUFEED_ERR_NOT_PARQUET); CHECK_HAS(o.msg, NAME); CHECK(mem_ok());
    pqw_put(&b, "PAR1xxxPAR1", 11);
    EXPECT_FAIL(&b, 0, GPUFEED_ERR_NOT_PARQUET, "11 bytes");
    b.n = 0;
    pqw_put(&b, "PAR1\0\0\0\0PAR1", 12);            /* the smallest size: an empty footer */
    EXPECT_FAIL(&b, 0, GPUFEED_ERR_FOOTER, "empty footer");
    pqw_free(&b);

    s_init(&s, 1, PQW_REQUIRED);
    s.f.head_magic = "PAR2";
    SFAIL(&s, 0, GPUFEED_ERR_NOT_PARQUET, "start of the file", "byte offset 0");
    s.f.head_magic = NULL; s.f.tail_magic = "PAR!";
    {
        char off[64];
        s_build(&s);
        sprintf(off, "byte offset %llu", (unsigned long long)(s.out.n - 4));
        EXPECT_FAIL(&s.out, 0, GPUFEED_ERR_NOT_PARQUET, "end of the file", off);
    }
    s.f.tail_magic = "PARE";
    SFAIL(&s, 0, GPUFEED_ERR_ENCRYPTED, "PARE");
    s.f.tail_magic = NULL;
    s.f.footer_len = pqw_set(100000);
    SFAIL(&s, 0, GPUFEED_ERR_FOOTER, "footer length 100000");
    s.f.footer_len = pqw_set(0xFFFFFFFFu);
    SFAIL(&s, 0, GPUFEED_ERR_FOOTER, "footer length");
    s.f.footer_len = pqw_set(0);
    SFAIL(&s, 0, GPUFEED_ERR_FOOTER, "empty footer");
    /* a footer length reaching into the head magic */
    s_build(&s);
    s.f.footer_len = pqw_set((int64_t)s.out.n - 8);
    SFAIL(&s, 0, GPUFEED_ERR_FOOTER, "footer length");
    /* a footer one byte shorter / longer than stated: Thrift notices */
    s.f.footer_len = pqw_omit(); s_build(&s);
    s.f.footer_len = pqw_set(s.f.footer_size - 1);
    SFAIL(&s, 0, GPUFEED_ERR_THRIFT, "byte offset");
    s.f.footer_len = pqw_omit();
    CHECK(reads_x(s_build(&s), 10, PQW_REQUIRED, 0));
    s_free(&s);
}

/* digest of one column of a file: per (rg, col) result + FNV-1a of values */
typedef struct digest { gpufeed_result r; uint64_t h; int64_t rows; } digest;
#define MAXRG 4
#define MAXCOL 64

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const uint8_t *q = (const uint8_t *)p;
    while (n--) { h ^= *q++; h *= 1099511628211ull; }
    return h;
}

/* reads every column independently; returns the open result */
static gpufeed_result digest_desc(const gpufeed_file_desc *d, digest dg[MAXRG][MAXCOL], int *nrg, int *ncol, char *msg)
{
    gpufeed_file *f = NULL;
    gpufeed_error err;
    const gpufeed_metadata *md;
    gpufeed_result r;
    int g, c;
    *nrg = *ncol = 0;
    r = gpufeed_file_open(&f, d, &err);
    if (r) { if (msg) strcpy(msg, err.message); return r; }
    md = gpufeed_file_metadata(f);
    *nrg = md->num_row_groups < MAXRG ? md->num_row_groups : MAXRG;
    *ncol = md->num_columns < MAXCOL ? md->num_columns : MAXCOL;
    for (g = 0; g < *nrg; g++)
        for (c = 0; c < *ncol; c++) {
            gpufeed_column *col = NULL;
            gpufeed_column_desc cd;
            gpufeed_column_batch b;
            digest *x = &dg[g][c];
            size_t esz = gf__elem_size(md->columns[c].physical);
            memset(&cd, 0, sizeof cd); cd.max_rows = 1000;
            x->h = 14695981039346656037ull; x->rows = 0;
            x->r = gpufeed_column_open(&col, f, g, c, &cd, &err);
            if (x->r) { if (msg) strcpy(msg, err.message); continue; }
            while ((x->r = gpufeed_column_read(col, &b)) == GPUFEED_OK) {
                int64_t i;
                for (i = 0; i < b.num_rows; i++) {
                    uint8_t v = b.valid ? b.valid[i] : 1;
                    const uint8_t *val = (const uint8_t *)b.values + (size_t)i * esz;
                    x->h = fnv(x->h, &v, 1);
                    if (esz == sizeof(gpufeed_bytes) && md->columns[c].physical >= GPUFEED_BYTE_ARRAY) {
                        const gpufeed_bytes *by = (const gpufeed_bytes *)(const void *)val;
                        x->h = fnv(x->h, &by->len, 4);
                        if (by->len) x->h = fnv(x->h, by->ptr, by->len);
                    } else x->h = fnv(x->h, val, esz);
                }
                x->rows += b.num_rows;
            }
            if (x->r == GPUFEED_DONE) x->r = GPUFEED_OK;
            else if (msg) strcpy(msg, gpufeed_column_error(col));
            gpufeed_column_close(col);
        }
    walk_pages(f);
    gpufeed_file_close(f);
    return GPUFEED_OK;
}

static int load_file(const char *path, pqw_buf *b)
{
    FILE *fp = fopen(path, "rb");
    char tmp[65536];
    size_t n;
    b->n = 0;
    if (!fp) return 0;
    while ((n = fread(tmp, 1, sizeof tmp, fp)) > 0) pqw_put(b, tmp, n);
    fclose(fp);
    return 1;
}

typedef struct reference {
    pqw_buf file;
    digest dg[MAXRG][MAXCOL];
    int nrg, ncol;
    uint32_t footer_len;
    size_t data_end;
} reference;

static int load_reference(const char *path, reference *ref)
{
    gpufeed_file_desc d;
    int g, c, ok = 1;
    memset(ref, 0, sizeof *ref);
    if (!load_file(path, &ref->file) || ref->file.n < 12) { fprintf(stderr, "  cannot read %s\n", path); return 0; }
    desc_init(&d, ref->file.p, ref->file.n);
    mem_reset(ref->file.n);
    if (digest_desc(&d, ref->dg, &ref->nrg, &ref->ncol, NULL) != GPUFEED_OK) { fprintf(stderr, "  %s does not open\n", path); return 0; }
    for (g = 0; g < ref->nrg; g++)
        for (c = 0; c < ref->ncol; c++)
            if (ref->dg[g][c].r != GPUFEED_OK) { fprintf(stderr, "  %s: rg %d column %d does not read\n", path, g, c); ok = 0; }
    memcpy(&ref->footer_len, ref->file.p + ref->file.n - 8, 4);
    ref->data_end = ref->file.n - 8 - ref->footer_len;
    if (!mem_ok()) { mem_report(__LINE__); ok = 0; }
    return ok;
}

/* a variant of the reference file: every column either errors or reads the
   reference's values; returns the number of columns that errored, or -1 when
   a column read different values (or memory was not bounded) */
static int compare_variant(const reference *ref, const gpufeed_file_desc *d, size_t size, gpufeed_result *first_err, char *msg)
{
    digest dg[MAXRG][MAXCOL];
    int nrg, ncol, g, c, errors = 0;
    gpufeed_result r;
    mem_reset(size);
    r = digest_desc(d, dg, &nrg, &ncol, msg);
    if (!mem_ok()) { mem_report(__LINE__); return -1; }
    if (r) { if (first_err) *first_err = r; return MAXRG * MAXCOL; }
    if (nrg != ref->nrg || ncol != ref->ncol) return -1;
    for (g = 0; g < nrg; g++)
        for (c = 0; c < ncol; c++) {
            if (dg[g][c].r != GPUFEED_OK) { if (first_err && !errors) *first_err = dg[g][c].r; errors++; }
            else if (dg[g][c].h != ref->dg[g][c].h || dg[g][c].rows != ref->dg[g][c].rows) {
                fprintf(stderr, "  rg %d column %d reads different values\n", g, c);
                return -1;
            }
        }
    return errors;
}

static void test_truncation(void)
{
    reference *ref = (reference *)calloc(1, sizeof *ref);
    size_t n, i, npoints = 0;
    int crashes_avoided = 0;
    if (!load_reference("tests/data/pyarrow_default.parquet", ref)) { CHECK(0); free(ref); return; }
    n = ref->file.n;
    /* plain truncation: ~200 evenly spread points and every byte of the
       last 64 */
    for (i = 0; i <= 264; i++) {
        size_t cut = i < 200 ? n * i / 200 : n - 64 + (i - 200);
        gpufeed_file_desc d;
        gpufeed_result fe = GPUFEED_OK;
        uint8_t *copy;
        int e;
        char msg[GPUFEED_ERROR_MAX] = "";
        if (cut >= n) continue;
        copy = (uint8_t *)malloc(cut ? cut : 1);
        memcpy(copy, ref->file.p, cut);
        desc_init(&d, copy, cut);
        e = compare_variant(ref, &d, cut, &fe, msg);
        CHECK_MSG(e > 0, "cut at %u: %d", (unsigned)cut, e);
        if (e > 0) CHECK_MSG(strstr(msg, NAME) != NULL, "cut at %u: %s", (unsigned)cut, msg);
        free(copy);
        npoints++;
    }
    /* data truncation with the footer re-attached: offsets past the data */
    for (i = 0; i <= 264; i++) {
        size_t cut = i < 200 ? ref->data_end * i / 200 : ref->data_end - 64 + (i - 200);
        pqw_buf v = {0};
        gpufeed_file_desc d;
        gpufeed_result fe = GPUFEED_OK;
        char msg[GPUFEED_ERROR_MAX] = "";
        int e;
        if (cut < 4) cut = 4;
        pqw_put(&v, ref->file.p, cut);
        pqw_put(&v, ref->file.p + ref->data_end, n - ref->data_end);
        desc_init(&d, v.p, v.n);
        e = compare_variant(ref, &d, v.n, &fe, msg);
        CHECK_MSG(e >= 0, "data cut at %u: a column read wrong values or memory", (unsigned)cut);
        if (cut < ref->data_end) CHECK_MSG(e > 0, "data cut at %u: no column noticed", (unsigned)cut);
        if (e > 0) {
            CHECK_MSG(fe == GPUFEED_ERR_PAGE || fe == GPUFEED_ERR_CORRUPT || fe == GPUFEED_ERR_CODEC || fe == GPUFEED_ERR_DICTIONARY,
                      "data cut at %u: %s: %s", (unsigned)cut, gpufeed_result_string(fe), msg);
            CHECK_HAS(msg, NAME);
        }
        pqw_free(&v);
        crashes_avoided++;
    }
    CHECK(npoints > 200 && crashes_avoided > 200);
    pqw_free(&ref->file);
    free(ref);
}

/* a read-at source over a buffer that fails reads touching [fail_from, ...) */
typedef struct failsrc { const uint8_t *p; size_t n; uint64_t fail_from, fail_to; int reads, closes; } failsrc;
static int fail_read(void *ctx, uint64_t off, void *buf, size_t len)
{
    failsrc *s = (failsrc *)ctx;
    s->reads++;
    if (off > s->n || len > s->n - off) return -1;
    if (off + len > s->fail_from && (s->fail_to == 0 || off < s->fail_to)) return -1;
    memcpy(buf, s->p + off, len);
    return 0;
}
static void fail_close(void *ctx) { ((failsrc *)ctx)->closes++; }

static void test_failing_source(void)
{
    reference *ref = (reference *)calloc(1, sizeof *ref);
    size_t i;
    int saw_io_in_data = 0, nerr = 0;
    if (!load_reference("tests/data/pyarrow_default.parquet", ref)) { CHECK(0); free(ref); return; }
    {   /* a source that works reads the same values */
        failsrc fs; gpufeed_source src; gpufeed_file_desc d; gpufeed_result fe = GPUFEED_OK;
        memset(&fs, 0, sizeof fs); fs.p = ref->file.p; fs.n = ref->file.n; fs.fail_from = UINT64_MAX;
        memset(&src, 0, sizeof src); src.read_at = fail_read; src.close = fail_close; src.ctx = &fs; src.size = ref->file.n;
        desc_init(&d, NULL, 0); d.data = NULL; d.data_size = 0; d.source = &src;
        CHECK(compare_variant(ref, &d, ref->file.n, &fe, NULL) == 0);
        CHECK(fs.reads > 0 && fs.closes == 1);
    }
    for (i = 0; i < 100; i++) {
        failsrc fs; gpufeed_source src; gpufeed_file_desc d;
        gpufeed_result fe = GPUFEED_OK;
        char msg[GPUFEED_ERROR_MAX] = "";
        int e;
        /* one unreadable byte at fail_from */
        memset(&fs, 0, sizeof fs); fs.p = ref->file.p; fs.n = ref->file.n;
        fs.fail_from = ref->file.n * i / 100; fs.fail_to = fs.fail_from + 1;
        memset(&src, 0, sizeof src); src.read_at = fail_read; src.ctx = &fs; src.size = ref->file.n;
        desc_init(&d, NULL, 0); d.data = NULL; d.data_size = 0; d.source = &src; d.name = NULL;
        e = compare_variant(ref, &d, ref->file.n, &fe, msg);
        CHECK_MSG(e >= 0, "fail from %u: wrong values or memory", (unsigned)fs.fail_from);
        if (e > 0) {
            nerr++;
            CHECK_MSG(fe == GPUFEED_ERR_IO, "fail from %u: %s: %s", (unsigned)fs.fail_from, gpufeed_result_string(fe), msg);
            CHECK_HAS(msg, "<source>");
            if (e < MAXRG * MAXCOL) { saw_io_in_data++; CHECK_HAS(msg, "row group"); CHECK_HAS(msg, "column '"); }
        }
    }
    CHECK(saw_io_in_data > 10 && nerr > 50);
    pqw_free(&ref->file);
    free(ref);
}

static void test_footer_flips(void)
{
    reference *ref = (reference *)calloc(1, sizeof *ref);
    int seed, opened = 0, failed = 0, bad = 0;
    uint64_t rng = 12345;
    if (!load_reference("tests/data/pyarrow_default.parquet", ref)) { CHECK(0); free(ref); return; }
    for (seed = 0; seed < 200; seed++) {
        uint8_t *copy = (uint8_t *)malloc(ref->file.n);
        gpufeed_file_desc d;
        outcome o;
        int k, nflips = 1 + seed % 4;
        memcpy(copy, ref->file.p, ref->file.n);
        for (k = 0; k < nflips; k++) {
            size_t at;
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            at = ref->data_end + (size_t)((rng >> 33) % ref->footer_len);
            if (seed % 3 == 0) copy[at] = (uint8_t)(rng >> 20);      /* any byte */
            else copy[at] ^= (uint8_t)(1u << ((rng >> 40) % 8));     /* one bit */
        }
        desc_init(&d, copy, ref->file.n);
        mem_reset(ref->file.n);
        run_desc(&d, &o);
        if (o.r == GPUFEED_OK) opened++; else failed++;
        if (o.r != GPUFEED_OK && !strstr(o.msg, NAME)) { bad++; fprintf(stderr, "  seed %d: message without the name: %s\n", seed, o.msg); }
        if (o.r > 0 || (o.r != GPUFEED_OK && !o.msg[0])) { bad++; fprintf(stderr, "  seed %d: result %d without a message\n", seed, o.r); }
        if (!mem_ok()) { bad++; mem_report(__LINE__); fprintf(stderr, "  seed %d: %s\n", seed, o.msg); }
        free(copy);
    }
    CHECK_MSG(bad == 0, "%d of 200 footer corruptions misbehaved", bad);
    CHECK(failed > 50);
    pqw_free(&ref->file);
    free(ref);
}

/* flips in the page data of several real files: errors or values, never a
   crash, bounded memory */
static void test_data_flips(void)
{
    static const char *const files[] = {
        "tests/data/pyarrow_default.parquet", "tests/data/pyarrow_v2_snappy.parquet",
        "tests/data/pyarrow_heavy_nulls.parquet", "tests/data/pyarrow_int96_crc.parquet",
        "tests/data/pyarrow_dict_fallback.parquet"
    };
    size_t fi;
    int bad = 0, errors = 0;
    uint64_t rng = 987654321;
    for (fi = 0; fi < sizeof files / sizeof files[0]; fi++) {
        reference *ref = (reference *)calloc(1, sizeof *ref);
        int seed;
        if (!load_reference(files[fi], ref)) { CHECK_MSG(0, "%s", files[fi]); pqw_free(&ref->file); free(ref); continue; }
        for (seed = 0; seed < 60; seed++) {
            uint8_t *copy = (uint8_t *)malloc(ref->file.n);
            gpufeed_file_desc d;
            outcome o;
            int k;
            memcpy(copy, ref->file.p, ref->file.n);
            for (k = 0; k < 1 + seed % 3; k++) {
                size_t at;
                rng = rng * 6364136223846793005ull + 1442695040888963407ull;
                at = 4 + (size_t)((rng >> 33) % (ref->data_end - 4));
                copy[at] ^= (uint8_t)(1u << ((rng >> 50) % 8));
            }
            desc_init(&d, copy, ref->file.n);
            d.flags = seed % 2 ? GPUFEED_OPEN_VERIFY_CRC : 0;
            mem_reset(ref->file.n);
            run_desc(&d, &o);
            if (o.r != GPUFEED_OK) errors++;
            if (o.r != GPUFEED_OK && !strstr(o.msg, NAME)) { bad++; fprintf(stderr, "  %s seed %d: %s\n", files[fi], seed, o.msg); }
            if (!mem_ok()) { bad++; mem_report(__LINE__); }
            free(copy);
        }
        pqw_free(&ref->file);
        free(ref);
    }
    CHECK_MSG(bad == 0, "%d data corruptions misbehaved", bad);
    CHECK(errors > 20);
}

/* ---- Thrift in the footer ------------------------------------------------ */

static void h_num_rows_as_string(pqw_tc *t, void *ctx) { (void)ctx; pqw_tc_str(t, 3, "many"); }
static void h_overlong_version(pqw_tc *t, void *ctx)
{
    (void)ctx;
    pqw_tc_field(t, 1, PQW_T_I32);
    pqw_fill(t->b, 0x80, 10); pqw_u8(t->b, 0);
}
static void h_overlong_10th(pqw_tc *t, void *ctx)
{
    (void)ctx;
    pqw_tc_field(t, 1, PQW_T_I64);
    pqw_fill(t->b, 0xFF, 9); pqw_u8(t->b, 0x03);
}
static void h_big_list(pqw_tc *t, void *ctx)
{
    pqw_tc_field(t, 99, PQW_T_LIST);
    pqw_tc_list_hdr(t, PQW_T_I32, *(const uint64_t *)ctx);
}
static void h_big_map(pqw_tc *t, void *ctx)
{
    pqw_tc_field(t, 99, PQW_T_MAP);
    pqw_tc_map_hdr(t, PQW_T_I32, PQW_T_I32, *(const uint64_t *)ctx);
}
static void h_nest(pqw_tc *t, void *ctx)
{
    int i, n = *(const int *)ctx;
    pqw_tc_field(t, 99, PQW_T_STRUCT);
    for (i = 0; i < n; i++) pqw_u8(t->b, 0x1C);   /* field delta 1, struct */
    for (i = 0; i <= n; i++) pqw_u8(t->b, 0);
}
static void h_nest_lists(pqw_tc *t, void *ctx)
{
    int i, n = *(const int *)ctx;
    pqw_tc_field(t, 98, PQW_T_LIST);
    for (i = 0; i < n; i++) pqw_u8(t->b, 0x19);   /* one element, a list */
    pqw_u8(t->b, 0x05);
}
static void h_binary_too_long(pqw_tc *t, void *ctx) { (void)ctx; pqw_tc_field(t, 6, PQW_T_BINARY); pqw_uvarint(t->b, 1u << 30); }
static void h_kv(pqw_tc *t, void *ctx)
{
    (void)ctx;
    pqw_tc_list(t, 5, PQW_T_STRUCT, 2);
    pqw_tc_begin(t); pqw_tc_str(t, 1, "k"); pqw_tc_str(t, 2, "v"); pqw_tc_end(t);
    pqw_tc_begin(t); pqw_tc_str(t, 2, "value without a key"); pqw_tc_end(t);
}
static void h_bad_field_type(pqw_tc *t, void *ctx) { (void)ctx; pqw_u8(t->b, 0x1E); }

static void test_footer_thrift(void)
{
    sfile s;
    uint64_t big;
    int depth;
    s_init(&s, 1, PQW_REQUIRED);
    s.f.num_rows = pqw_omit(); s.f.extra.fn = h_num_rows_as_string;
    SFAIL(&s, 0, GPUFEED_ERR_THRIFT, "field 3", "FileMetaData", "byte offset");
    s.f.num_rows.mode = 0;
    s.f.version = pqw_omit(); s.f.extra.fn = h_overlong_version;
    SFAIL(&s, 0, GPUFEED_ERR_THRIFT, "varint", "byte offset");
    s.f.extra.fn = h_overlong_10th;
    SFAIL(&s, 0, GPUFEED_ERR_THRIFT, "varint", "byte offset");
    s.f.version.mode = 0;
    big = 1u << 30; s.f.extra.fn = h_big_list; s.f.extra.ctx = &big;
    SFAIL(&s, 0, GPUFEED_ERR_LIMIT, "GPUFEED_MAX_LIST_LENGTH", "byte offset");
    big = 1000;
    SFAIL(&s, 0, GPUFEED_ERR_THRIFT, "cannot fit", "byte offset");
    big = UINT64_MAX;
    SFAIL0(&s, 0, GPUFEED_ERR_LIMIT);
    s.f.extra.fn = h_big_map; big = 1u << 30;
    SFAIL(&s, 0, GPUFEED_ERR_THRIFT, "map", "byte offset");
    depth = 10000; s.f.extra.fn = h_nest; s.f.extra.ctx = &depth;
    SFAIL(&s, 0, GPUFEED_ERR_LIMIT, "GPUFEED_MAX_THRIFT_DEPTH");
    s.f.extra.fn = h_nest_lists;
    SFAIL(&s, 0, GPUFEED_ERR_LIMIT, "GPUFEED_MAX_THRIFT_DEPTH");
    depth = 40; s.f.extra.fn = h_nest;        /* deep but within the limit: skipped */
    CHECK(reads_x(s_build(&s), 10, PQW_REQUIRED, 0));
    s.f.extra.fn = h_binary_too_long; s.f.extra.ctx = NULL;
    SFAIL(&s, 0, GPUFEED_ERR_THRIFT, "runs past the end");
    s.f.extra.fn = h_kv;
    SFAIL(&s, 0, GPUFEED_ERR_THRIFT, "KeyValue without a key");
    s.f.extra.fn = h_bad_field_type;
    SFAIL(&s, 0, GPUFEED_ERR_THRIFT, "invalid field type");
    s.f.extra.fn = NULL;
    /* a footer that is not Thrift at all */
    {
        static const uint8_t junk[] = "this is not thrift at all";
        s.f.footer_raw = junk; s.f.footer_raw_len = sizeof junk - 1;
        SFAIL(&s, 0, GPUFEED_ERR_THRIFT, "byte offset");
        s.f.footer_raw = NULL;
    }
    /* schema list: element count beyond the bytes / beyond GPUFEED_MAX_COLUMNS */
    {
        pqw_buf foot = {0};
        pqw_tc t;
        pqw_tc_init(&t, &foot);
        pqw_tc_begin(&t);
        pqw_tc_list(&t, 2, PQW_T_STRUCT, 1000);
        pqw_fill(&foot, 0, 100);
        s.f.footer_raw = foot.p; s.f.footer_raw_len = foot.n;
        SFAIL(&s, 0, GPUFEED_ERR_THRIFT, "cannot fit");
        foot.n = 0; pqw_tc_init(&t, &foot); pqw_tc_begin(&t);
        pqw_tc_list(&t, 2, PQW_T_STRUCT, GPUFEED_MAX_COLUMNS + 1);
        pqw_fill(&foot, 0, GPUFEED_MAX_COLUMNS + 8);
        s.f.footer_raw = foot.p; s.f.footer_raw_len = foot.n;
        SFAIL(&s, 0, GPUFEED_ERR_LIMIT, "GPUFEED_MAX_COLUMNS");
        s.f.footer_raw = NULL;
        pqw_free(&foot);
    }
    s_free(&s);
}

/* absurd element counts that do fit in the footer: each element a 1-byte
   empty struct. Memory must stay proportional to the file. */
static void test_footer_list_amplification(void)
{
    enum { N = 200000 };
    pqw_buf foot = {0}, file = {0};
    pqw_tc t;
    /* RowGroup.columns: N empty ColumnChunk structs */
    pqw_tc_init(&t, &foot);
    pqw_tc_begin(&t);
    pqw_tc_list(&t, 2, PQW_T_STRUCT, 2);
    pqw_tc_begin(&t); pqw_tc_str(&t, 4, "schema"); pqw_tc_i32(&t, 5, 1); pqw_tc_end(&t);
    pqw_tc_begin(&t); pqw_tc_i32(&t, 1, PQW_INT32); pqw_tc_i32(&t, 3, 0); pqw_tc_str(&t, 4, "x"); pqw_tc_end(&t);
    pqw_tc_i64(&t, 3, 0);
    pqw_tc_list(&t, 4, PQW_T_STRUCT, 1);
    pqw_tc_begin(&t);
    pqw_tc_list(&t, 1, PQW_T_STRUCT, N);
    pqw_fill(&foot, 0, N);
    pqw_tc_i64(&t, 3, 0);
    pqw_tc_end(&t);
    pqw_tc_end(&t);
    pqw_put(&file, "PAR1", 4); pqw_append(&file, &foot); pqw_le32(&file, (uint32_t)foot.n); pqw_put(&file, "PAR1", 4);
    EXPECT_FAIL(&file, 0, GPUFEED_ERR_SCHEMA, "column chunks");
    /* FileMetaData.schema: N 1-byte elements (each lacks a name) */
    foot.n = 0; file.n = 0;
    pqw_tc_init(&t, &foot);
    pqw_tc_begin(&t);
    pqw_tc_list(&t, 2, PQW_T_STRUCT, 60000);
    pqw_fill(&foot, 0, 60000);
    pqw_tc_end(&t);
    pqw_put(&file, "PAR1", 4); pqw_append(&file, &foot); pqw_le32(&file, (uint32_t)foot.n); pqw_put(&file, "PAR1", 4);
    EXPECT_FAIL(&file, 0, GPUFEED_ERR_THRIFT, "schema elements cannot fit");
    /* FileMetaData.row_groups: N 1-byte row groups */
    foot.n = 0; file.n = 0;
    pqw_tc_init(&t, &foot);
    pqw_tc_begin(&t);
    pqw_tc_list(&t, 4, PQW_T_STRUCT, N);
    pqw_fill(&foot, 0, N);
    pqw_tc_end(&t);
    pqw_put(&file, "PAR1", 4); pqw_append(&file, &foot); pqw_le32(&file, (uint32_t)foot.n); pqw_put(&file, "PAR1", 4);
    EXPECT_FAIL(&file, 0, GPUFEED_ERR_THRIFT, "row groups cannot fit");
    pqw_free(&foot); pqw_free(&file);
}

/* column paths are built by copying the parent's path: a long group name
   with many children multiplies (children x name length) */
static void test_schema_path_amplification(void)
{
    enum { KIDS = 4000, NAMELEN = 20000 };
    pqw_buf foot = {0}, file = {0};
    pqw_tc t;
    char *longname = (char *)malloc(NAMELEN + 1);
    int i;
    memset(longname, 'g', NAMELEN); longname[NAMELEN] = 0;
    pqw_tc_init(&t, &foot);
    pqw_tc_begin(&t);
    pqw_tc_list(&t, 2, PQW_T_STRUCT, KIDS + 2);
    pqw_tc_begin(&t); pqw_tc_str(&t, 4, "schema"); pqw_tc_i32(&t, 5, 1); pqw_tc_end(&t);
    pqw_tc_begin(&t); pqw_tc_i32(&t, 3, 1); pqw_tc_str(&t, 4, longname); pqw_tc_i32(&t, 5, KIDS); pqw_tc_end(&t);
    for (i = 0; i < KIDS; i++) {
        char nm[16];
        sprintf(nm, "c%d", i);
        pqw_tc_begin(&t); pqw_tc_i32(&t, 1, PQW_INT32); pqw_tc_i32(&t, 3, 1); pqw_tc_str(&t, 4, nm); pqw_tc_end(&t);
    }
    pqw_tc_i64(&t, 3, 0);
    pqw_tc_list(&t, 4, PQW_T_STRUCT, 0);
    pqw_tc_end(&t);
    pqw_put(&file, "PAR1", 4); pqw_append(&file, &foot); pqw_le32(&file, (uint32_t)foot.n); pqw_put(&file, "PAR1", 4);
    {   /* valid, but its dotted paths would take 80 MB: a limit, within bounded memory */
        outcome o;
        run_mem(file.p, file.n, 0, &o);
        CHECK_MSG(o.r == GPUFEED_ERR_LIMIT, "%s", o.msg);
        CHECK_HAS(o.msg, "dotted paths");
        if (!mem_ok()) { mem_report(__LINE__); CHECK_MSG(0, "%d columns under a %d-byte group name: memory not bounded by the file size (%zu bytes)", KIDS, NAMELEN, file.n); }
    }
    free(longname);
    pqw_free(&foot); pqw_free(&file);
}

/* ---- schema -------------------------------------------------------------- */

static void test_schema(void)
{
    sfile s;
    s_init(&s, 1, PQW_REQUIRED);
    s.sch[0].num_children = pqw_set(5);
    SFAIL(&s, 0, GPUFEED_ERR_SCHEMA, "claims 5 children");
    s.sch[0].num_children = pqw_set(INT32_MAX);
    SFAIL(&s, 0, GPUFEED_ERR_SCHEMA, "children");
    s.sch[0].num_children = pqw_set(-1);
    SFAIL(&s, 0, GPUFEED_ERR_SCHEMA, "schema");
    s.sch[0].num_children = pqw_set(0);
    SFAIL(&s, 0, GPUFEED_ERR_SCHEMA, "cover 1 of 2");
    s.sch[0].num_children = pqw_set(1);
    /* a leaf claiming children that do not exist */
    s.sch[1].num_children = pqw_set(1);
    SFAIL(&s, 0, GPUFEED_ERR_SCHEMA, "column chunks", "0 leaf columns");
    s.sch[1].num_children = pqw_omit();
    s.sch[1].repetition = pqw_omit();
    SFAIL(&s, 0, GPUFEED_ERR_SCHEMA, "'x'", "repetition");
    s.sch[1].repetition = pqw_set(7);
    SFAIL(&s, 0, GPUFEED_ERR_SCHEMA, "repetition");
    s.sch[1].repetition = pqw_set(PQW_REQUIRED);
    s.sch[1].type = pqw_set(8);
    SFAIL(&s, 0, GPUFEED_ERR_SCHEMA, "physical type 8");
    s.sch[1].type = pqw_set(-1);
    SFAIL(&s, 0, GPUFEED_ERR_SCHEMA, "'x'");
    s.sch[1].type = pqw_set(PQW_FLBA); s.sch[1].type_length = pqw_set(0); s.ch[0].physical = PQW_FLBA;
    SFAIL(&s, 0, GPUFEED_ERR_SCHEMA, "type_length 0");
    s.sch[1].type_length = pqw_set(-4);
    SFAIL(&s, 0, GPUFEED_ERR_SCHEMA, "type_length");
    s.sch[1].type = pqw_set(PQW_INT32); s.sch[1].type_length = pqw_omit(); s.ch[0].physical = PQW_INT32;
    s.sch[1].name = NULL;
    SFAIL(&s, 0, GPUFEED_ERR_THRIFT, "without a name");
    s.sch[1].name = "x";
    CHECK(reads_x(s_build(&s), 10, PQW_REQUIRED, 0));
    /* empty schema */
    s.f.nschema = 0;
    SFAIL(&s, 0, GPUFEED_ERR_SCHEMA, "0 leaf columns");
    s.f.nschema = 2;
    s_free(&s);

    {   /* "cycle-like": each element claims one child, deeper than the limit */
        enum { D = GPUFEED_MAX_SCHEMA_DEPTH + 10 };
        pqw_schema sch[D + 2];
        pqw_file f;
        pqw_buf out = {0};
        int i;
        memset(&f, 0, sizeof f);
        sch[0] = pqw_root(1);
        for (i = 1; i <= D; i++) sch[i] = pqw_group("g", 1, PQW_OPTIONAL);
        sch[D + 1] = pqw_leaf("x", PQW_INT32, PQW_OPTIONAL);
        f.schema = sch; f.nschema = D + 2;
        pqw_build(&f, &out);
        EXPECT_FAIL(&out, 0, GPUFEED_ERR_SCHEMA, "GPUFEED_MAX_SCHEMA_DEPTH");
        /* the last group claims 2 children: one missing */
        sch[0] = pqw_root(1);
        f.nschema = 5;
        sch[3].num_children = pqw_set(2);
        sch[4] = pqw_leaf("x", PQW_INT32, PQW_OPTIONAL);
        out.n = 0; pqw_build(&f, &out);
        EXPECT_FAIL(&out, 0, GPUFEED_ERR_SCHEMA, "g.g.g");
        /* a group claiming all elements, root claiming two children */
        sch[0] = pqw_root(2);
        sch[1] = pqw_group("a", 3, PQW_OPTIONAL);
        sch[2] = pqw_leaf("x", PQW_INT32, PQW_OPTIONAL);
        sch[3] = pqw_leaf("y", PQW_INT32, PQW_OPTIONAL);
        sch[4] = pqw_leaf("z", PQW_INT32, PQW_OPTIONAL);
        out.n = 0; pqw_build(&f, &out);
        EXPECT_FAIL(&out, 0, GPUFEED_ERR_SCHEMA, "schema");
        /* a group with a type */
        sch[0] = pqw_root(1);
        sch[1] = pqw_group("a", 1, PQW_OPTIONAL); sch[1].type = pqw_set(PQW_INT32);
        sch[2] = pqw_leaf("x", PQW_INT32, PQW_OPTIONAL);
        f.nschema = 3;
        out.n = 0; pqw_build(&f, &out);
        EXPECT_FAIL(&out, 0, GPUFEED_ERR_SCHEMA, "both a type and children");
        pqw_free(&out);
    }
}

/* ---- row groups and chunk metadata --------------------------------------- */

static void h_field_8_crypto(pqw_tc *t, void *ctx)
{
    (void)ctx;
    pqw_tc_struct(t, 8); pqw_tc_struct(t, 1); pqw_tc_end(t); pqw_tc_end(t);
}

static void test_row_groups(void)
{
    sfile s;
    s_init(&s, 1, PQW_REQUIRED);
    s_add_double(&s, 10);
    CHECK(reads_x(s_build(&s), 10, PQW_REQUIRED, 0));
    s.rg.nchunks = 1;
    SFAIL(&s, 0, GPUFEED_ERR_SCHEMA, "row group has 1 column chunks", "2 leaf columns");
    s.rg.nchunks = 2;
    s.ch[1].physical = PQW_INT64;
    SFAIL(&s, 0, GPUFEED_ERR_SCHEMA, "row group 0", "column 'y'", "INT64", "DOUBLE");
    s.ch[1].physical = PQW_DOUBLE;
    s.ch[1].num_values = pqw_set(-5);
    SFAIL(&s, 0, GPUFEED_ERR_SCHEMA, "row group 0", "column 'y'", "negative");
    s.ch[1].num_values = pqw_set(9);
    SFAIL(&s, 0, GPUFEED_ERR_CORRUPT, "row group 0", "column 'y'", "9 values", "10 rows");
    s.ch[1].num_values.mode = 0;
    s.ch[1].data_page_offset = pqw_set(1 << 30);
    SFAIL(&s, 0, GPUFEED_ERR_PAGE, "row group 0", "column 'y'", "outside");
    s.ch[1].data_page_offset = pqw_set(0);
    SFAIL(&s, 0, GPUFEED_ERR_PAGE, "column 'y'", "outside");
    s.ch[1].data_page_offset = pqw_set(-3);
    SFAIL(&s, 0, GPUFEED_ERR_SCHEMA, "column 'y'");
    s.ch[1].data_page_offset.mode = 0;
    s.ch[1].no_meta = 1;
    SFAIL(&s, 0, GPUFEED_ERR_SCHEMA, "column 'y'", "no metadata");
    s.ch[1].no_meta = 0;
    s.ch[1].file_path = "other.parquet";
    SFAIL(&s, 0, GPUFEED_ERR_UNSUPPORTED, "column 'y'", "other.parquet");
    s.ch[1].file_path = NULL;
    s.ch[1].crypto = 1;
    SFAIL(&s, 0, GPUFEED_ERR_ENCRYPTED, "row group 0", "column 'y'");
    /* FileMetaData.encryption_algorithm (8) and a chunk without metadata */
    s.ch[1].crypto = 0; s.ch[1].no_meta = 1; s.f.extra.fn = h_field_8_crypto;
    SFAIL(&s, 0, GPUFEED_ERR_ENCRYPTED, "column 'y'");
    s.ch[1].no_meta = 0; s.f.extra.fn = NULL;
    s.ch[1].type_field = pqw_omit();
    SFAIL(&s, 0, GPUFEED_ERR_THRIFT, "ColumnMetaData", "required");
    s.ch[1].type_field.mode = 0;
    s.rg.num_rows = pqw_set(-1);
    SFAIL(&s, 0, GPUFEED_ERR_THRIFT, "negative num_rows");
    s.rg.num_rows = pqw_omit();
    SFAIL(&s, 0, GPUFEED_ERR_THRIFT, "RowGroup");
    s.rg.num_rows.mode = 0;
    s.f.num_rows = pqw_set(-5);
    SFAIL(&s, 0, GPUFEED_ERR_SCHEMA, "negative num_rows");
    s.f.num_rows = pqw_set(12345);          /* disagrees: the row groups win */
    CHECK(reads_x(s_build(&s), 10, PQW_REQUIRED, 0));
    s.f.num_rows.mode = 0;
    {   /* row counts that overflow int64 across row groups */
        pqw_rowgroup two[2];
        two[0] = s.rg; two[1] = s.rg;
        two[0].num_rows = pqw_set(INT64_MAX); two[1].num_rows = pqw_set(INT64_MAX);
        s.f.rgs = two; s.f.nrgs = 2; s.f.num_rows = pqw_set(0);
        SFAIL(&s, 0, GPUFEED_ERR_SCHEMA, "overflow");
        s.f.rgs = &s.rg; s.f.nrgs = 1; s.f.num_rows.mode = 0;
    }
    CHECK(reads_x(s_build(&s), 10, PQW_REQUIRED, 0));
    s_free(&s);
}

static void test_unsupported_columns(void)
{
    sfile s;
    /* a repeated column whose pages carry no repetition levels: the
       values are read as levels, which do not hold up */
    s_init(&s, 1, PQW_REQUIRED);
    s.sch[1].repetition = pqw_set(PQW_REPEATED);
    SFAIL(&s, 0, GPUFEED_ERR_CORRUPT, "row group 0", "column 'x'", s.off);
    s_free(&s);
    /* unsupported codecs and encodings */
    s_init(&s, 1, PQW_REQUIRED);
    s.ch[0].codec = 4;                    /* BROTLI */
    SFAIL(&s, 0, GPUFEED_ERR_UNSUPPORTED, "BROTLI", "column 'x'");
    s.ch[0].codec = PQW_GZIP;             /* GZIP over bytes that are not gzip */
    SFAIL(&s, 0, GPUFEED_ERR_CODEC, "gzip", "neither a gzip member nor a zlib stream", "column 'x'");
    s.ch[0].codec = 99;
    SFAIL(&s, 0, GPUFEED_ERR_UNSUPPORTED, "codec");
    s.ch[0].codec = PQW_UNCOMPRESSED;
    s.pages[0].encoding = pqw_set(5);     /* DELTA_BINARY_PACKED over PLAIN bytes: a corrupt delta header */
    SFAIL(&s, 0, GPUFEED_ERR_CORRUPT, "DELTA_BINARY_PACKED", s.off);
    s.pages[0].encoding = pqw_set(1);     /* GROUP_VAR_INT: deprecated, never written */
    SFAIL(&s, 0, GPUFEED_ERR_UNSUPPORTED, "GROUP_VAR_INT", s.off);
    s.pages[0].encoding = pqw_set(77);
    SFAIL(&s, 0, GPUFEED_ERR_ENCODING, "77");
    s.pages[0].encoding = pqw_set(PQW_RLE);
    SFAIL(&s, 0, GPUFEED_ERR_ENCODING, "RLE");
    s_free(&s);
}

/* ---- pages --------------------------------------------------------------- */

static void test_page_sizes(void)
{
    sfile s;
    s_init(&s, 2, PQW_REQUIRED);
    CHECK(reads_x(s_build(&s), 20, PQW_REQUIRED, 0));
    s.pages[0].csize = pqw_set(-1);
    SFAIL(&s, 0, GPUFEED_ERR_PAGE, "row group 0", "column 'x'", "page", s.off, "negative");
    s.pages[0].csize = pqw_set(INT32_MIN);
    SFAIL(&s, 0, GPUFEED_ERR_PAGE, "column 'x'", s.off);
    s.pages[0].csize = pqw_set(INT32_MAX);
    SFAIL(&s, 0, GPUFEED_ERR_LIMIT, "column 'x'", s.off, "GPUFEED_MAX_PAGE_SIZE");
    s.pages[0].csize = pqw_set((int64_t)GPUFEED_MAX_PAGE_SIZE + 1);
    SFAIL(&s, 0, GPUFEED_ERR_LIMIT, "GPUFEED_MAX_PAGE_SIZE");
    s.pages[0].csize = pqw_set(1000000);          /* past the file */
    SFAIL(&s, 0, GPUFEED_ERR_PAGE, "column 'x'", s.off, "runs past");
    s.pages[0].csize.mode = 0;
    s.pages[1].csize = pqw_set(100000);
    SFAIL(&s, 0, GPUFEED_ERR_PAGE, "column 'x'", page_off(&s, 1), "runs past");
    s.pages[1].csize.mode = 0;
    s.pages[0].usize = pqw_set(-7);
    SFAIL(&s, 0, GPUFEED_ERR_PAGE, "column 'x'", s.off, "negative");
    s.pages[0].usize = pqw_set(INT32_MAX);        /* uncompressed: not used, but over the limit */
    SFAIL(&s, 0, GPUFEED_ERR_LIMIT, "column 'x'", s.off);
    s.pages[0].usize.mode = 0;
    /* the page covers the next page too: its values are read, trailing bytes
       ignored; the chunk then lacks values */
    s.pages[0].csize = pqw_set((int64_t)s.bodies[0].n + 5);
    {
        outcome o;
        s_build(&s);
        run_mem(s.out.p, s.out.n, 0, &o);
        CHECK_MSG(o.r == GPUFEED_ERR_PAGE || o.r == GPUFEED_ERR_CORRUPT, "%s", o.msg);
        CHECK_HAS(o.msg, NAME); CHECK_HAS(o.msg, "column 'x'");
        CHECK(mem_ok());
    }
    s.pages[0].csize.mode = 0;
    /* garbage where the page header should be */
    {
        static const uint8_t junk[] = { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF };
        s.pages[1].header_raw = junk; s.pages[1].header_raw_len = sizeof junk;
        SFAIL(&s, 0, GPUFEED_ERR_PAGE, "column 'x'", "PageHeader", page_off(&s, 1));
        s.pages[1].header_raw = NULL;
    }
    /* header without the sizes; a data page without its DataPageHeader */
    s.pages[0].csize = pqw_omit();
    SFAIL(&s, 0, GPUFEED_ERR_PAGE, "column 'x'", "PageHeader", s.off);
    s.pages[0].csize.mode = 0;
    s.pages[0].sub = -1;
    SFAIL(&s, 0, GPUFEED_ERR_PAGE, "column 'x'", "header", s.off);
    s.pages[0].sub = 0;
    s.pages[0].num_values = pqw_set(-1);
    SFAIL(&s, 0, GPUFEED_ERR_PAGE, "column 'x'", s.off);
    s.pages[0].num_values.mode = 0;
    s.pages[0].encoding = pqw_omit();
    SFAIL(&s, 0, GPUFEED_ERR_PAGE, "column 'x'", s.off);
    s.pages[0].encoding = pqw_set(PQW_PLAIN);
    CHECK(reads_x(s_build(&s), 20, PQW_REQUIRED, 0));
    s_free(&s);
}

static void test_snappy_pages(void)
{
    sfile s;
    pqw_buf raw = {0}, z = {0};
    s_init(&s, 1, PQW_REQUIRED);
    pqw_append(&raw, &s.bodies[0]);
    pqw_snappy_compress(&z, raw.p, raw.n);
    s.bodies[0].n = 0; pqw_append(&s.bodies[0], &z);
    s.pages[0] = pqw_data_page(&s.bodies[0], 10, PQW_PLAIN);
    s.pages[0].raw_len = raw.n;
    s.ch[0].codec = PQW_SNAPPY;
    CHECK(reads_x(s_build(&s), 10, PQW_REQUIRED, 0));
    /* 1 GiB claimed from a few bytes: refused before allocating */
    s.pages[0].usize = pqw_set(1 << 30);
    SFAIL(&s, 0, GPUFEED_ERR_CODEC, "column 'x'", s.off, "impossible");
    s.pages[0].usize = pqw_set((1 << 30) - 1);
    SFAIL(&s, 0, GPUFEED_ERR_CODEC, "column 'x'", s.off);
    /* the page header lies about the length: bigger / smaller than the stream */
    s.pages[0].usize = pqw_set((int64_t)raw.n + 1);
    SFAIL(&s, 0, GPUFEED_ERR_CODEC, "column 'x'", s.off, "snappy");
    s.pages[0].usize = pqw_set((int64_t)raw.n - 1);
    SFAIL(&s, 0, GPUFEED_ERR_CODEC, "column 'x'", s.off, "snappy");
    s.pages[0].usize.mode = 0;
    /* the stream's own length header lies */
    s.bodies[0].p[0] = (uint8_t)(raw.n + 3);
    SFAIL(&s, 0, GPUFEED_ERR_CODEC, "snappy");
    s.bodies[0].p[0] = (uint8_t)(raw.n - 3);
    s.pages[0].usize = pqw_set((int64_t)raw.n - 3);
    SFAIL(&s, 0, GPUFEED_ERR_CODEC, "snappy");
    s.bodies[0].p[0] = (uint8_t)raw.n; s.pages[0].usize.mode = 0;
    /* a page reaching into the next bytes: the stream has trailing garbage */
    s_add_double(&s, 10);
    s.pages[0].csize = pqw_set((int64_t)s.bodies[0].n + 8);
    SFAIL(&s, 0, GPUFEED_ERR_PAGE, "column 'x'", s.off, "runs past the column data");
    s.pages[0].csize = pqw_set((int64_t)s.bodies[0].n + 1);   /* one byte past: the same (issue 19) */
    SFAIL(&s, 0, GPUFEED_ERR_PAGE, "column 'x'", s.off, "runs past the column data");
    s.pages[0].csize.mode = 0;
    CHECK(reads_x(s_build(&s), 10, PQW_REQUIRED, 0));
    /* an empty page body under SNAPPY */
    s.pages[0].csize = pqw_set(0);
    SFAIL(&s, 0, GPUFEED_ERR_CODEC, "column 'x'");
    s.pages[0].csize.mode = 0;
    pqw_free(&raw); pqw_free(&z);
    s_free(&s);
    {   /* a page at snappy's best ratio (zeros: 64 bytes per 3-byte copy)
           stays within the expansion bound */
        enum { NZ = 100000 };
        int32_t *zeros = (int32_t *)calloc(NZ, sizeof *zeros);
        outcome o;
        s_init(&s, 1, PQW_REQUIRED);
        pqw_plain_i32(&raw, zeros, NZ);
        s.bodies[0].n = 0; pqw_snappy_compress(&s.bodies[0], raw.p, raw.n);
        s.pages[0] = pqw_data_page(&s.bodies[0], NZ, PQW_PLAIN); s.pages[0].raw_len = raw.n;
        s.ch[0].codec = PQW_SNAPPY;
        CHECK(raw.n > 21 * s.bodies[0].n);
        s_build(&s);
        run_mem(s.out.p, s.out.n, 0, &o);
        CHECK_MSG(o.r == GPUFEED_OK && o.values == NZ, "%s", o.msg);
        CHECK(mem_ok());
        free(zeros); pqw_free(&raw);
        s_free(&s);
    }
}

/* a codec (supported or not) must not allocate what the page header claims */
static void test_unsupported_codec_allocation(void)
{
    sfile s;
    s_init(&s, 1, PQW_REQUIRED);
    s.ch[0].codec = PQW_ZSTD; /* more than ZSTD can expand the body to */
    s.pages[0].usize = pqw_set(1 << 30);
    SFAIL(&s, 0, GPUFEED_ERR_CODEC, "impossible for ZSTD", "column 'x'");
    s.ch[0].codec = 4;                    /* BROTLI (without GPUFEED_USE_BROTLI) */
    s.pages[0].usize = pqw_set(500 << 20);
    SFAIL(&s, 0, GPUFEED_ERR_UNSUPPORTED, "BROTLI", "column 'x'");
    /* a supported codec: more than DEFLATE can expand to is refused first */
    s.ch[0].codec = PQW_GZIP;
    SFAIL(&s, 0, GPUFEED_ERR_CODEC, "impossible for GZIP", "column 'x'");
    s_free(&s);
}

static void test_value_counts(void)
{
    sfile s;
    /* more values in the page than the chunk says */
    s_init(&s, 2, PQW_REQUIRED);
    s.ch[0].num_values = pqw_set(15); s.rg.num_rows = pqw_set(15);
    SFAIL(&s, 0, GPUFEED_ERR_CORRUPT, "row group 0", "column 'x'", page_off(&s, 1), "remain");
    s.ch[0].num_values = pqw_set(5); s.rg.num_rows = pqw_set(5);
    SFAIL(&s, 0, GPUFEED_ERR_CORRUPT, "column 'x'", s.off);
    /* fewer: the chunk says 25, the pages hold 20 */
    s.ch[0].num_values = pqw_set(25); s.rg.num_rows = pqw_set(25);
    SFAIL(&s, 0, GPUFEED_ERR_CORRUPT, "column 'x'", "20 of 25");
    /* a page header says more values than its data holds */
    s.ch[0].num_values.mode = 0; s.rg.num_rows.mode = 0;
    s.pages[1].num_values = pqw_set(11); s.pages[1].n = 11;
    SFAIL(&s, 0, GPUFEED_ERR_CORRUPT, "column 'x'", page_off(&s, 1), "PLAIN");
    s.pages[1].num_values.mode = 0; s.pages[1].n = 10;
    /* pages with zero values are skipped */
    {
        pqw_page keep = s.pages[1];
        static const uint8_t nothing[1] = { 0 };
        s.pages[1].body = nothing; s.pages[1].body_len = 0; s.pages[1].n = 0;
        s.pages[2] = keep;
        s.ch[0].npages = 3;
        CHECK(reads_x(s_build(&s), 20, PQW_REQUIRED, 3));
        s.ch[0].npages = 2; s.pages[1] = keep;
    }
    CHECK(reads_x(s_build(&s), 20, PQW_REQUIRED, 7));
    s_free(&s);
}

/* chunk x says 20 values but has one page of 10; the next bytes in the file
   are column y's page. Reading x must not hand out y's bytes as x's values. */
static void test_walk_into_next_chunk(void)
{
    sfile s;
    int i;
    s_init(&s, 1, PQW_REQUIRED);
    s_add_double(&s, 10);
    for (i = 0; i < 10; i++) { double d = 100 + i; pqw_plain_double(&s.bodies2[1], &d, 1); }
    s.pages2[1] = pqw_data_page(&s.bodies2[1], 10, PQW_PLAIN);
    s.ch[1].npages = 2;
    s.ch[0].num_values = pqw_set(20);
    SFAIL(&s, 0, GPUFEED_ERR_CORRUPT, "row group 0", "column 'x'");
    s_free(&s);
}

static void test_levels(void)
{
    sfile s;
    s_init(&s, 2, PQW_OPTIONAL);
    CHECK(reads_x(s_build(&s), 20, PQW_OPTIONAL, 0));
    CHECK(reads_x(&s.out, 20, PQW_OPTIONAL, 4));
    {   /* definition levels running out: a run header without its bytes */
        uint32_t lv[10] = { 1, 1, 0, 1, 1, 0, 1, 1, 0, 1 };
        int32_t v[7] = { 1, 2, 3, 4, 5, 6, 7 };
        pqw_buf b = {0};
        pqw_le32(&b, 0);
        pqw_bp_run(&b, lv, 1, 1);
        b.n = 4 + 1;                       /* header only: no level bytes */
        pqw_set_le32(&b, 0, 1);
        pqw_plain_i32(&b, v, 7);
        s.bodies[0].n = 0; pqw_append(&s.bodies[0], &b);
        s.pages[0] = pqw_data_page(&s.bodies[0], 10, PQW_PLAIN);
        SFAIL(&s, 0, GPUFEED_ERR_CORRUPT, "row group 0", "column 'x'", s.off, "definition levels");
        /* an RLE run of level 1 for only 6 values */
        b.n = 0; pqw_le32(&b, 2); pqw_rle_run(&b, 1, 6, 1); pqw_plain_i32(&b, v, 7);
        s.bodies[0].n = 0; pqw_append(&s.bodies[0], &b);
        s.pages[0] = pqw_data_page(&s.bodies[0], 10, PQW_PLAIN);
        SFAIL(&s, 0, GPUFEED_ERR_CORRUPT, "column 'x'", s.off, "definition levels");
        /* level length prefix overrunning the page */
        b.n = 0; pqw_le32(&b, 1000); pqw_rle_run(&b, 1, 10, 1);
        s.bodies[0].n = 0; pqw_append(&s.bodies[0], &b);
        s.pages[0] = pqw_data_page(&s.bodies[0], 10, PQW_PLAIN);
        SFAIL(&s, 0, GPUFEED_ERR_CORRUPT, "column 'x'", s.off);
        /* page too short for the length prefix */
        b.n = 0; pqw_u8(&b, 1); pqw_u8(&b, 0);
        s.bodies[0].n = 0; pqw_append(&s.bodies[0], &b);
        s.pages[0] = pqw_data_page(&s.bodies[0], 10, PQW_PLAIN);
        SFAIL(&s, 0, GPUFEED_ERR_CORRUPT, "column 'x'", s.off);
        /* a level value >= 2^bw in an RLE run */
        b.n = 0; pqw_le32(&b, 2); pqw_rle_run(&b, 3, 10, 1); pqw_plain_i32(&b, v, 7);
        s.bodies[0].n = 0; pqw_append(&s.bodies[0], &b);
        s.pages[0] = pqw_data_page(&s.bodies[0], 10, PQW_PLAIN);
        SFAIL(&s, 0, GPUFEED_ERR_CORRUPT, "column 'x'", s.off);
        /* PLAIN values shorter than the levels need: 7 present, 6 values */
        b.n = 0; pqw_levels_v1(&b, lv, 10, 1); pqw_plain_i32(&b, v, 6);
        s.bodies[0].n = 0; pqw_append(&s.bodies[0], &b);
        s.pages[0] = pqw_data_page(&s.bodies[0], 10, PQW_PLAIN);
        SFAIL(&s, 0, GPUFEED_ERR_CORRUPT, "column 'x'", s.off, "PLAIN");
        /* unknown level encoding */
        b.n = 0; pqw_levels_v1(&b, lv, 10, 1); pqw_plain_i32(&b, v, 7);
        s.bodies[0].n = 0; pqw_append(&s.bodies[0], &b);
        s.pages[0] = pqw_data_page(&s.bodies[0], 10, PQW_PLAIN);
        s.pages[0].def_enc = pqw_set(PQW_PLAIN);
        SFAIL(&s, 0, GPUFEED_ERR_ENCODING, "column 'x'", s.off, "definition level encoding");
        s.pages[0].def_enc = pqw_set(123);
        SFAIL(&s, 0, GPUFEED_ERR_ENCODING, "column 'x'", s.off);
        /* BIT_PACKED levels shorter than the page's values need */
        b.n = 0; pqw_u8(&b, 0xDB);
        s.bodies[0].n = 0; pqw_append(&s.bodies[0], &b);
        s.pages[0] = pqw_data_page(&s.bodies[0], 10, PQW_PLAIN);
        s.pages[0].def_enc = pqw_set(PQW_BIT_PACKED);
        SFAIL(&s, 0, GPUFEED_ERR_CORRUPT, "column 'x'", s.off, "BIT_PACKED");
        pqw_free(&b);
    }
    s_free(&s);

    {   /* definition level > max: optional group g { optional int32 x }, max 2 */
        pqw_schema sch[3];
        pqw_page pg;
        pqw_chunk ch;
        pqw_rowgroup rg;
        pqw_file f;
        pqw_buf body = {0}, out = {0};
        uint32_t lv[8] = { 2, 2, 1, 0, 3, 2, 2, 2 };
        int32_t v[6] = { 1, 2, 3, 4, 5, 6 };
        pqw_levels_v1(&body, lv, 8, 2);
        pqw_plain_i32(&body, v, 6);
        pg = pqw_data_page(&body, 8, PQW_PLAIN);
        pqw_simple(&f, sch, &rg, &ch, "x", PQW_INT32, PQW_OPTIONAL, &pg, 1);
        sch[1] = pqw_group("g", 1, PQW_OPTIONAL);
        sch[2] = pqw_leaf("x", PQW_INT32, PQW_OPTIONAL);
        f.nschema = 3; ch.path = "g.x";
        pqw_build(&f, &out);
        {
            char off[64];
            sprintf(off, "byte offset %lld", (long long)pg.at);
            EXPECT_FAIL(&out, 0, GPUFEED_ERR_CORRUPT, "row group 0", "column 'g.x'", off, "definition level 3");
        }
        /* the same with valid levels reads: 2 = present, 0/1 = null */
        lv[4] = 2;
        body.n = 0; pqw_levels_v1(&body, lv, 8, 2); pqw_plain_i32(&body, v, 6);
        pg = pqw_data_page(&body, 8, PQW_PLAIN);
        out.n = 0; pqw_build(&f, &out);
        {
            gpufeed_file_desc d; gpufeed_file *fp; gpufeed_error e; gpufeed_column *c; gpufeed_column_batch bt;
            desc_init(&d, out.p, out.n); mem_reset(out.n);
            if (gpufeed_file_open(&fp, &d, &e) == GPUFEED_OK) {
                if (gpufeed_column_open(&c, fp, 0, 0, NULL, &e) == GPUFEED_OK) {
                    CHECK(gpufeed_column_read(c, &bt) == GPUFEED_OK && bt.num_rows == 8 && bt.null_count == 2);
                    CHECK(bt.valid && bt.valid[2] == 0 && bt.valid[3] == 0 && bt.valid[4] == 1);
                    CHECK(((const int32_t *)bt.values)[4] == 3 && ((const int32_t *)bt.values)[7] == 6);
                    CHECK(gpufeed_column_read(c, &bt) == GPUFEED_DONE);
                    gpufeed_column_close(c);
                } else CHECK_MSG(0, "%s", e.message);
                gpufeed_file_close(fp);
            } else CHECK_MSG(0, "%s", e.message);
            CHECK(mem_ok());
        }
        pqw_free(&body); pqw_free(&out);
    }
}

/* a dictionary chunk: dict page of `nd` INT32 entries (xval(0..nd-1)),
   data page of 10 indices */
static void s_dict(sfile *s, int nd, const uint32_t *idx, int n, int bw)
{
    int32_t dv[64];
    int i;
    for (i = 0; i < nd; i++) dv[i] = xval(i);
    s_init(s, 1, PQW_REQUIRED);
    s->bodies[0].n = 0; pqw_plain_i32(&s->bodies[0], dv, (size_t)nd);
    s->pages[0] = pqw_dict_page(&s->bodies[0], nd);
    pqw_dict_indices(&s->bodies[1], idx, (size_t)n, bw);
    s->pages[1] = pqw_data_page(&s->bodies[1], n, PQW_RLE_DICTIONARY);
    s->ch[0].npages = 2;
}

static void test_dictionary(void)
{
    sfile s;
    uint32_t idx[10] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
    s_dict(&s, 10, idx, 10, 4);
    CHECK(reads_x(s_build(&s), 10, PQW_REQUIRED, 0));
    CHECK(reads_x(&s.out, 10, PQW_REQUIRED, 3));
    /* out of range */
    s_free(&s);
    idx[7] = 10;
    s_dict(&s, 10, idx, 10, 4);
    SFAIL(&s, 0, GPUFEED_ERR_DICTIONARY, "row group 0", "column 'x'", page_off(&s, 1), "index 10");
    s_free(&s);
    idx[7] = 7;
    /* an empty dictionary */
    s_dict(&s, 0, idx, 10, 4);
    SFAIL(&s, 0, GPUFEED_ERR_DICTIONARY, "column 'x'", "index 0");
    s_free(&s);
    /* no dictionary page at all */
    s_dict(&s, 10, idx, 10, 4);
    s.ch[0].pages = &s.pages[1]; s.ch[0].npages = 1;
    SFAIL(&s, 0, GPUFEED_ERR_DICTIONARY, "column 'x'", page_off(&s, 1), "no dictionary");
    s.ch[0].pages = s.pages; s.ch[0].npages = 2;
    /* the dictionary page after the data page */
    {
        pqw_page d = s.pages[0];
        pqw_page dp = s.pages[1];
        s.pages[0] = dp; s.pages[1] = d;    /* data, then dict */
        SFAIL(&s, 0, GPUFEED_ERR_DICTIONARY, "column 'x'", s.off, "no dictionary");
        s.pages[0] = d; s.pages[1] = dp; s.pages[2] = d; s.pages[3] = dp;
        s.ch[0].npages = 4;                 /* dict, data, dict, data */
        SFAIL(&s, 0, GPUFEED_ERR_PAGE, "column 'x'", page_off(&s, 2), "after data pages");
        s.ch[0].npages = 2;
    }
    /* dictionary page claims more entries than its bytes hold */
    s.pages[0].num_values = pqw_set(11);
    SFAIL(&s, 0, GPUFEED_ERR_CORRUPT, "column 'x'", s.off, "dictionary");
    s.pages[0].num_values = pqw_set(INT32_MAX);      /* no 8 GiB dictionary array */
    SFAIL(&s, 0, GPUFEED_ERR_CORRUPT, "column 'x'", s.off, "dictionary");
    s.pages[0].num_values = pqw_set(-1);
    SFAIL(&s, 0, GPUFEED_ERR_PAGE, "column 'x'", s.off);
    s.pages[0].num_values.mode = 0;
    s.pages[0].encoding = pqw_set(PQW_RLE);
    SFAIL(&s, 0, GPUFEED_ERR_ENCODING, "column 'x'", s.off, "dictionary");
    s.pages[0].encoding.mode = 0;
    s.pages[0].sub = -1;
    SFAIL(&s, 0, GPUFEED_ERR_PAGE, "column 'x'", s.off, "dictionary page");
    s.pages[0].sub = 0;
    CHECK(reads_x(s_build(&s), 10, PQW_REQUIRED, 0));
    s_free(&s);
    /* bit width byte > 32; indices running out; no bit width byte */
    s_dict(&s, 10, idx, 10, 4);
    s.bodies[1].p[0] = 33;
    SFAIL(&s, 0, GPUFEED_ERR_CORRUPT, "column 'x'", page_off(&s, 1), "bit width");
    s.bodies[1].p[0] = 4;
    s.pages[1].body_len = 3;
    SFAIL(&s, 0, GPUFEED_ERR_CORRUPT, "column 'x'", page_off(&s, 1), "indices");
    s.pages[1].body_len = 0;
    SFAIL(&s, 0, GPUFEED_ERR_CORRUPT, "column 'x'", "bit width");
    s_free(&s);
    /* dictionary pages under SNAPPY, and an absurd uncompressed size */
    {
        pqw_buf z = {0};
        s_dict(&s, 10, idx, 10, 4);
        pqw_snappy_compress(&z, s.bodies[0].p, s.bodies[0].n);
        s.pages[0].raw_len = s.bodies[0].n;
        s.pages[0].body = z.p; s.pages[0].body_len = z.n;
        pqw_snappy_compress(&s.bodies[2], s.bodies[1].p, s.bodies[1].n);
        s.pages[1].raw_len = s.bodies[1].n;
        s.pages[1].body = s.bodies[2].p; s.pages[1].body_len = s.bodies[2].n;
        s.ch[0].codec = PQW_SNAPPY;
        CHECK(reads_x(s_build(&s), 10, PQW_REQUIRED, 0));
        s.pages[0].usize = pqw_set(1 << 30);
        SFAIL(&s, 0, GPUFEED_ERR_CODEC, "column 'x'", s.off);
        s.pages[0].usize = pqw_set(41);
        SFAIL(&s, 0, GPUFEED_ERR_CODEC, "column 'x'", s.off, "snappy");
        pqw_free(&z);
        s_free(&s);
    }
}

static void test_crc(void)
{
    sfile s;
    outcome o;
    s_init(&s, 2, PQW_OPTIONAL);
    s.pages[0].crc_auto = 1; s.pages[1].crc_auto = 1;
    s_build(&s);
    run_mem(s.out.p, s.out.n, GPUFEED_OPEN_VERIFY_CRC, &o);
    CHECK_MSG(o.r == GPUFEED_OK, "%s", o.msg);
    CHECK(mem_ok());
    s.pages[0].crc_auto = 0; s.pages[0].crc = pqw_set(0x12345678);
    s_build(&s);
    EXPECT_FAIL(&s.out, GPUFEED_OPEN_VERIFY_CRC, GPUFEED_ERR_CHECKSUM, "row group 0", "column 'x'", s.off, "12345678");
    CHECK(reads_x(&s.out, 20, PQW_OPTIONAL, 0));          /* accepted without the flag */
    {   /* the flag given per column */
        gpufeed_file_desc d; gpufeed_file *f; gpufeed_error e; gpufeed_column *c; gpufeed_column_desc cd; gpufeed_column_batch b;
        desc_init(&d, s.out.p, s.out.n); mem_reset(s.out.n);
        if (gpufeed_file_open(&f, &d, &e) == GPUFEED_OK) {
            memset(&cd, 0, sizeof cd); cd.flags = GPUFEED_OPEN_VERIFY_CRC;
            if (gpufeed_column_open(&c, f, 0, 0, &cd, &e) == GPUFEED_OK) {
                CHECK(gpufeed_column_read(c, &b) == GPUFEED_ERR_CHECKSUM);
                CHECK_HAS(gpufeed_column_error(c), "CRC");
                gpufeed_column_close(c);
            }
            gpufeed_file_close(f);
        }
        CHECK(mem_ok());
    }
    /* the second page's CRC bad: the first page's rows still come out */
    s.pages[0].crc_auto = 1; s.pages[1].crc_auto = 0; s.pages[1].crc = pqw_set(-1);
    s_build(&s);
    run_mem(s.out.p, s.out.n, GPUFEED_OPEN_VERIFY_CRC, &o);
    CHECK(o.r == GPUFEED_ERR_CHECKSUM && o.values == 10);
    CHECK_HAS(o.msg, page_off(&s, 1));
    /* a flipped bit in the page data */
    s.pages[1].crc_auto = 1;
    s_build(&s);
    s.out.p[s.pages[1].body_at + 6] ^= 0x10;
    EXPECT_FAIL(&s.out, GPUFEED_OPEN_VERIFY_CRC, GPUFEED_ERR_CHECKSUM, "column 'x'", page_off(&s, 1));
    s_free(&s);
    /* a dictionary page's CRC */
    {
        uint32_t idx[10] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
        s_dict(&s, 10, idx, 10, 4);
        s.pages[0].crc = pqw_set(77); s.pages[1].crc_auto = 1;
        SFAIL(&s, GPUFEED_OPEN_VERIFY_CRC, GPUFEED_ERR_CHECKSUM, "column 'x'", s.off);
        s_free(&s);
    }
}

/* error messages name the same page (index and offset) whether the header or
   the body of that page is bad */
static void test_page_numbers_consistent(void)
{
    sfile s;
    outcome o1, o2;
    const char *p1, *p2;
    static const uint8_t junk[] = { 0xFF, 0xFF, 0xFF };
    s_init(&s, 2, PQW_REQUIRED);
    s.pages[1].header_raw = junk; s.pages[1].header_raw_len = sizeof junk;
    s_build(&s);
    run_mem(s.out.p, s.out.n, 0, &o1);
    s.pages[1].header_raw = NULL;
    s.pages[1].body_len = 8;               /* 2 of 10 values */
    s_build(&s);
    run_mem(s.out.p, s.out.n, 0, &o2);
    CHECK(o1.r == GPUFEED_ERR_PAGE && o2.r == GPUFEED_ERR_CORRUPT);
    CHECK_HAS(o1.msg, page_off(&s, 1));
    CHECK_HAS(o2.msg, page_off(&s, 1));
    p1 = strstr(o1.msg, ", page ");
    p2 = strstr(o2.msg, ", page ");
    CHECK(p1 && p2);
    if (p1 && p2) CHECK_MSG(atoi(p1 + 7) == atoi(p2 + 7), "header error says page %d, body error says page %d (\"%s\" / \"%s\")", atoi(p1 + 7), atoi(p2 + 7), o1.msg, o2.msg);
    s_free(&s);
}

/* ---- arguments and sources ----------------------------------------------- */

static int never_read(void *ctx, uint64_t off, void *buf, size_t len) { (void)ctx; (void)off; (void)buf; (void)len; return -1; }

static void test_bad_arguments(void)
{
    gpufeed_file *f = (gpufeed_file *)(uintptr_t)1;
    gpufeed_error e;
    gpufeed_file_desc d;
    gpufeed_source src;
    gpufeed_column *c = NULL;
    gpufeed_column_batch b;
    sfile s;
    int64_t count;
    CHECK(gpufeed_file_open(&f, NULL, &e) == GPUFEED_ERR_INVALID_ARG && f == NULL && e.code == GPUFEED_ERR_INVALID_ARG && e.message[0]);
    CHECK(gpufeed_file_open(NULL, NULL, NULL) == GPUFEED_ERR_INVALID_ARG);
    s_init(&s, 1, PQW_REQUIRED);
    s_build(&s);
    desc_init(&d, s.out.p, s.out.n);
    CHECK(gpufeed_file_open(NULL, &d, &e) == GPUFEED_ERR_INVALID_ARG);
    d.path = "tests/data/pyarrow_default.parquet";          /* two sources */
    CHECK(gpufeed_file_open(&f, &d, &e) == GPUFEED_ERR_INVALID_ARG && f == NULL);
    CHECK_HAS(e.message, "2 set");
    memset(&src, 0, sizeof src); src.read_at = never_read; src.size = 100;
    d.source = &src;                                          /* three */
    CHECK(gpufeed_file_open(&f, &d, &e) == GPUFEED_ERR_INVALID_ARG);
    memset(&d, 0, sizeof d);                                  /* none */
    CHECK(gpufeed_file_open(&f, &d, &e) == GPUFEED_ERR_INVALID_ARG);
    CHECK_HAS(e.message, "0 set");
    src.read_at = NULL; d.source = &src;
    CHECK(gpufeed_file_open(&f, &d, &e) == GPUFEED_ERR_INVALID_ARG);
    desc_init(&d, s.out.p, s.out.n); d.allocator.free = NULL;   /* two of three allocator functions */
    CHECK(gpufeed_file_open(&f, &d, &e) == GPUFEED_ERR_INVALID_ARG);
    /* a working file, then bad row group / column numbers */
    desc_init(&d, s.out.p, s.out.n);
    mem_reset(s.out.n);
    CHECK(gpufeed_file_open(&f, &d, NULL) == GPUFEED_OK);
    if (f) {
        CHECK(gpufeed_column_open(&c, f, 1, 0, NULL, &e) == GPUFEED_ERR_INVALID_ARG && c == NULL);
        CHECK_HAS(e.message, NAME); CHECK_HAS(e.message, "row group 1");
        CHECK(gpufeed_column_open(&c, f, -1, 0, NULL, &e) == GPUFEED_ERR_INVALID_ARG);
        CHECK(gpufeed_column_open(&c, f, 0, 1, NULL, &e) == GPUFEED_ERR_INVALID_ARG);
        CHECK_HAS(e.message, "column 1");
        CHECK(gpufeed_column_open(&c, f, 0, -5, NULL, &e) == GPUFEED_ERR_INVALID_ARG);
        CHECK(gpufeed_column_open(&c, f, 0, INT32_MAX, NULL, NULL) == GPUFEED_ERR_INVALID_ARG);
        CHECK(gpufeed_column_open(&c, NULL, 0, 0, NULL, &e) == GPUFEED_ERR_INVALID_ARG);
        CHECK(gpufeed_column_open(NULL, f, 0, 0, NULL, &e) == GPUFEED_ERR_INVALID_ARG);
        CHECK(gpufeed_chunk_pages(f, 0, 1, NULL, 0, &count, &e) == GPUFEED_ERR_INVALID_ARG);
        CHECK(gpufeed_chunk_pages(f, 0, 0, NULL, 4, &count, &e) == GPUFEED_ERR_INVALID_ARG);
        CHECK(gpufeed_chunk_pages(f, 0, 0, NULL, -1, &count, &e) == GPUFEED_ERR_INVALID_ARG);
        CHECK(gpufeed_chunk_pages(f, 0, 0, NULL, 0, NULL, &e) == GPUFEED_ERR_INVALID_ARG);
        CHECK(gpufeed_chunk_pages(f, 0, 0, NULL, 0, &count, &e) == GPUFEED_OK && count == 1);
        CHECK(gpufeed_file_find_column(f, "nope") == -1 && gpufeed_file_find_column(f, NULL) == -1 && gpufeed_file_find_column(NULL, "x") == -1);
        {   /* negative max_rows falls back to the default */
            gpufeed_column_desc cd; memset(&cd, 0, sizeof cd); cd.max_rows = -3;
            CHECK(gpufeed_column_open(&c, f, 0, 0, &cd, &e) == GPUFEED_OK);
            CHECK(gpufeed_column_read(c, NULL) == GPUFEED_ERR_INVALID_ARG);
            CHECK(gpufeed_column_read(c, &b) == GPUFEED_OK && b.num_rows == 10);
            CHECK(gpufeed_column_read(c, &b) == GPUFEED_DONE);
            CHECK(gpufeed_column_read(c, &b) == GPUFEED_DONE);
            gpufeed_column_close(c);
        }
        gpufeed_file_close(f);
    }
    CHECK(mem_ok());
    CHECK(gpufeed_column_read(NULL, &b) == GPUFEED_ERR_INVALID_ARG);
    gpufeed_column_close(NULL);
    gpufeed_file_close(NULL);
    CHECK(gpufeed_file_metadata(NULL) == NULL);
    CHECK(gpufeed_chunk_pages(NULL, 0, 0, NULL, 0, &count, &e) == GPUFEED_ERR_INVALID_ARG);
    s_free(&s);
}

static void test_paths(void)
{
    gpufeed_file *f = NULL;
    gpufeed_error e;
    gpufeed_file_desc d;
    memset(&d, 0, sizeof d);
    d.path = "tests/data/no-such-file.parquet";
    CHECK(gpufeed_file_open(&f, &d, &e) == GPUFEED_ERR_IO && f == NULL);
    CHECK_HAS(e.message, "tests/data/no-such-file.parquet");
    d.path = "tests/data";
    CHECK(gpufeed_file_open(&f, &d, &e) == GPUFEED_ERR_IO && f == NULL);
    CHECK_HAS(e.message, "tests/data");
    d.path = "tests/data"; d.name = NAME;
    CHECK(gpufeed_file_open(&f, &d, &e) == GPUFEED_ERR_IO);
    CHECK_HAS(e.message, NAME);
    d.name = NULL;
    d.path = "tests/data/MANIFEST.txt";                 /* not Parquet */
    CHECK(gpufeed_file_open(&f, &d, &e) == GPUFEED_ERR_NOT_PARQUET);
    CHECK_HAS(e.message, "tests/data/MANIFEST.txt");
    {   /* a real file by path reads the same values as from memory */
        reference *ref = (reference *)calloc(1, sizeof *ref);
        if (load_reference("tests/data/pyarrow_default.parquet", ref)) {
            gpufeed_result fe = GPUFEED_OK;
            desc_init(&d, NULL, 0); d.data = NULL; d.path = "tests/data/pyarrow_default.parquet";
            CHECK(compare_variant(ref, &d, ref->file.n, &fe, NULL) == 0);
        } else CHECK(0);
        pqw_free(&ref->file);
        free(ref);
    }
}

static void test_source_failures(void)
{
    sfile s;
    failsrc fs;
    gpufeed_source src;
    gpufeed_file_desc d;
    outcome o;
    s_init(&s, 2, PQW_REQUIRED);
    s_build(&s);
    memset(&fs, 0, sizeof fs); fs.p = s.out.p; fs.n = s.out.n;
    memset(&src, 0, sizeof src); src.read_at = fail_read; src.close = fail_close; src.ctx = &fs; src.size = s.out.n;
    desc_init(&d, NULL, 0); d.data = NULL; d.source = &src;
    /* fails at once */
    fs.fail_from = 0;
    mem_reset(s.out.n); run_desc(&d, &o);
    CHECK(o.r == GPUFEED_ERR_IO && o.stage == 0); CHECK_HAS(o.msg, NAME); CHECK(mem_ok());
    /* fails reading the footer (not the tail) */
    fs.fail_from = (uint64_t)s.f.footer_at + 3; fs.fail_to = s.out.n - 8;
    mem_reset(s.out.n); run_desc(&d, &o);
    CHECK(o.r == GPUFEED_ERR_IO && o.stage == 0); CHECK_HAS(o.msg, "footer"); CHECK(mem_ok());
    /* fails in the second page's data */
    fs.fail_from = (uint64_t)s.pages[1].body_at + 2; fs.fail_to = fs.fail_from + 1;
    mem_reset(s.out.n); run_desc(&d, &o);
    CHECK(o.r == GPUFEED_ERR_IO && o.stage == 2);
    CHECK_HAS(o.msg, NAME); CHECK_HAS(o.msg, "row group 0"); CHECK_HAS(o.msg, "column 'x'");
    CHECK(mem_ok());
    /* a source claiming more bytes than it has */
    fs.fail_from = UINT64_MAX; fs.fail_to = 0; src.size = s.out.n + 100;
    mem_reset(s.out.n); run_desc(&d, &o);
    CHECK(o.r == GPUFEED_ERR_IO || o.r == GPUFEED_ERR_NOT_PARQUET);
    CHECK(mem_ok());
    s_free(&s);
}

/* ---- positive traps: unusual but valid files read right ------------------- */

static void test_traps(void)
{
    sfile s;
    uint32_t idx[10] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
    {   /* dictionary_page_offset 0 / absent, dictionary at data_page_offset */
        s_dict(&s, 10, idx, 10, 4);
        s.ch[0].dictionary_page_offset = pqw_set(0);
        s_build(&s);
        s.ch[0].data_page_offset = pqw_set(s.pages[0].at);
        CHECK(reads_x(s_build(&s), 10, PQW_REQUIRED, 0));
        s.ch[0].dictionary_page_offset = pqw_omit();
        CHECK(reads_x(s_build(&s), 10, PQW_REQUIRED, 0));
        s.ch[0].dictionary_page_offset = pqw_set(-1);
        CHECK(reads_x(s_build(&s), 10, PQW_REQUIRED, 0));
        s_free(&s);
    }
    {   /* dictionary index bit width 0: every index is 0 */
        pqw_buf b = {0};
        int32_t one = xval(0);
        s_init(&s, 1, PQW_REQUIRED);
        s.bodies[0].n = 0; pqw_plain_i32(&s.bodies[0], &one, 1);
        s.pages[0] = pqw_dict_page(&s.bodies[0], 1);
        pqw_u8(&b, 0); pqw_rle_run(&b, 0, 10, 0);
        pqw_append(&s.bodies[1], &b);
        s.pages[1] = pqw_data_page(&s.bodies[1], 10, PQW_PLAIN_DICTIONARY);
        s.ch[0].npages = 2;
        s_build(&s);
        {
            gpufeed_file_desc d; gpufeed_file *f; gpufeed_error e; gpufeed_column *c; gpufeed_column_batch bt;
            int i, ok = 0;
            desc_init(&d, s.out.p, s.out.n); mem_reset(s.out.n);
            if (gpufeed_file_open(&f, &d, &e) == GPUFEED_OK) {
                if (gpufeed_column_open(&c, f, 0, 0, NULL, &e) == GPUFEED_OK) {
                    if (gpufeed_column_read(c, &bt) == GPUFEED_OK && bt.num_rows == 10) {
                        ok = 1;
                        for (i = 0; i < 10; i++) ok &= ((const int32_t *)bt.values)[i] == one;
                        ok &= bt.encoding == GPUFEED_ENC_PLAIN_DICTIONARY;
                    } else fprintf(stderr, "  %s\n", gpufeed_column_error(c));
                    ok &= gpufeed_column_read(c, &bt) == GPUFEED_DONE;
                    gpufeed_column_close(c);
                }
                gpufeed_file_close(f);
            }
            CHECK(ok && mem_ok());
        }
        /* bit width 0 with a bit-packed run */
        b.n = 0; pqw_u8(&b, 0); pqw_uvarint(&b, (2 << 1) | 1);
        s.bodies[1].n = 0; pqw_append(&s.bodies[1], &b);
        s.pages[1] = pqw_data_page(&s.bodies[1], 10, PQW_RLE_DICTIONARY);
        {
            outcome o;
            s_build(&s);
            run_mem(s.out.p, s.out.n, 0, &o);
            CHECK_MSG(o.r == GPUFEED_OK && o.values == 10, "%s", o.msg);
        }
        pqw_free(&b);
        s_free(&s);
    }
    /* total_compressed_size wrong both ways */
    s_init(&s, 3, PQW_OPTIONAL);
    s.ch[0].total_compressed = pqw_set(1);
    CHECK(reads_x(s_build(&s), 30, PQW_OPTIONAL, 0));
    s.ch[0].total_compressed = pqw_set(0);
    CHECK(reads_x(s_build(&s), 30, PQW_OPTIONAL, 0));
    s.ch[0].total_compressed = pqw_set(1000000000000LL);
    CHECK(reads_x(s_build(&s), 30, PQW_OPTIONAL, 0));
    s.ch[0].total_compressed.mode = 0;
    s.ch[0].total_uncompressed = pqw_set(-5);
    CHECK(reads_x(s_build(&s), 30, PQW_OPTIONAL, 0));
    s.ch[0].total_uncompressed.mode = 0;
    /* trailing garbage after a page's PLAIN values */
    pqw_fill(&s.bodies[1], 0xEE, 13);
    s.pages[1].body = s.bodies[1].p; s.pages[1].body_len = s.bodies[1].n;
    CHECK(reads_x(s_build(&s), 30, PQW_OPTIONAL, 0));
    CHECK(reads_x(&s.out, 30, PQW_OPTIONAL, 4));
    s_free(&s);
    {   /* INDEX_PAGE and an unknown page type (7) between data pages */
        static const uint8_t blob[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
        pqw_page ip, up;
        s_init(&s, 3, PQW_REQUIRED);
        memset(&ip, 0, sizeof ip); ip.type = PQW_INDEX_PAGE; ip.body = blob; ip.body_len = 9;
        up = ip; up.type = 7;
        s.pages[5] = s.pages[2]; s.pages[4] = up; s.pages[3] = s.pages[1]; s.pages[2] = ip;
        s.pages[1] = up;
        s.ch[0].npages = 6;               /* data, 7, index, data, 7, data */
        CHECK(reads_x(s_build(&s), 30, PQW_REQUIRED, 0));
        {
            gpufeed_file_desc d; gpufeed_file *f; gpufeed_error e; gpufeed_page_info pi[8]; int64_t n = 0;
            desc_init(&d, s.out.p, s.out.n); mem_reset(s.out.n);
            if (gpufeed_file_open(&f, &d, &e) == GPUFEED_OK) {
                CHECK(gpufeed_chunk_pages(f, 0, 0, pi, 8, &n, &e) == GPUFEED_OK && n == 6);
                CHECK(pi[1].type == 7 && pi[2].type == 1 && pi[3].type == 0 && pi[3].first_value == 10);
                CHECK(pi[5].offset == s.pages[5].at && pi[5].num_values == 10);
                gpufeed_file_close(f);
            } else CHECK_MSG(0, "%s", e.message);
            CHECK(mem_ok());
        }
        /* unknown pages before the first data page, data_page_offset at them */
        {
            pqw_page d0 = s.pages[0], d1 = s.pages[3], d2 = s.pages[5];
            s.pages[0] = up; s.pages[1] = ip; s.pages[2] = d0; s.pages[3] = d1; s.pages[4] = d2;
            s.ch[0].npages = 5;
            s_build(&s);
            s.ch[0].data_page_offset = pqw_set(s.pages[0].at);
            CHECK(reads_x(s_build(&s), 30, PQW_REQUIRED, 0));
        }
        s_free(&s);
    }
    {   /* a v2 page, all nulls, SNAPPY: the empty values are not decompressed */
        uint32_t lv[10] = { 0 };
        pqw_buf lev = {0};
        s_init(&s, 2, PQW_OPTIONAL);
        pqw_hybrid(&lev, lv, 10, 1);
        s.bodies[1].n = 0; pqw_append(&s.bodies[1], &lev);
        s.pages[1] = pqw_v2_page(&s.bodies[1], 10, PQW_PLAIN, 10, (int32_t)lev.n, 0);
        {   /* page 0 as v2 + snappy too */
            uint32_t l0[10]; int32_t v[10]; int i, nn = 0;
            pqw_buf lv0 = {0}, raw = {0};
            for (i = 0; i < 10; i++) { l0[i] = (i % 3 != 2); if (l0[i]) v[nn++] = xval(i); }
            pqw_hybrid(&lv0, l0, 10, 1);
            pqw_plain_i32(&raw, v, (size_t)nn);
            s.bodies[0].n = 0; pqw_append(&s.bodies[0], &lv0);
            pqw_snappy_compress(&s.bodies[0], raw.p, raw.n);
            s.pages[0] = pqw_v2_page(&s.bodies[0], 10, PQW_PLAIN, 10 - nn, (int32_t)lv0.n, 0);
            s.pages[0].raw_len = lv0.n + raw.n;
            pqw_free(&lv0); pqw_free(&raw);
        }
        s.ch[0].codec = PQW_SNAPPY;
        s_build(&s);
        {
            gpufeed_file_desc d; gpufeed_file *f; gpufeed_error e; gpufeed_column *c; gpufeed_column_batch bt;
            int ok = 0, i;
            desc_init(&d, s.out.p, s.out.n); mem_reset(s.out.n);
            if (gpufeed_file_open(&f, &d, &e) == GPUFEED_OK) {
                if (gpufeed_column_open(&c, f, 0, 0, NULL, &e) == GPUFEED_OK) {
                    if (gpufeed_column_read(c, &bt) == GPUFEED_OK && bt.num_rows == 10 && bt.null_count == 3) ok = 1;
                    else fprintf(stderr, "  page 0: %s\n", gpufeed_column_error(c));
                    if (gpufeed_column_read(c, &bt) == GPUFEED_OK && bt.num_rows == 10 && bt.null_count == 10 && bt.valid) {
                        for (i = 0; i < 10; i++) ok &= bt.valid[i] == 0 && ((const int32_t *)bt.values)[i] == 0;
                    } else { ok = 0; fprintf(stderr, "  page 1: %s\n", gpufeed_column_error(c)); }
                    ok &= gpufeed_column_read(c, &bt) == GPUFEED_DONE;
                    gpufeed_column_close(c);
                }
                gpufeed_file_close(f);
            }
            CHECK(ok && mem_ok());
        }
        /* is_compressed = false under a SNAPPY chunk: values stored raw */
        {
            uint32_t l0[10]; int32_t v[10]; int i, nn = 0;
            pqw_buf lv0 = {0};
            for (i = 0; i < 10; i++) { l0[i] = (i % 3 != 2); if (l0[i]) v[nn++] = xval(i); }
            pqw_hybrid(&lv0, l0, 10, 1);
            s.bodies[0].n = 0; pqw_append(&s.bodies[0], &lv0); pqw_plain_i32(&s.bodies[0], v, (size_t)nn);
            s.pages[0] = pqw_v2_page(&s.bodies[0], 10, PQW_PLAIN, 10 - nn, (int32_t)lv0.n, 0);
            s.pages[0].is_compressed = pqw_set(0);
            s.pages[1].is_compressed = pqw_set(0);
            s_build(&s);
            {
                outcome o;
                run_mem(s.out.p, s.out.n, 0, &o);
                CHECK_MSG(o.r == GPUFEED_OK && o.values == 20, "%s", o.msg);
            }
            /* v2 level lengths past the page */
            s.pages[0].def_len = pqw_set(1000);
            SFAIL(&s, 0, GPUFEED_ERR_PAGE, "column 'x'", s.off, "v2");
            s.pages[0].def_len = pqw_set(-1);
            SFAIL(&s, 0, GPUFEED_ERR_PAGE, "column 'x'", s.off);
            s.pages[0].def_len = pqw_set((int64_t)lv0.n); s.pages[0].rep_len = pqw_set((int64_t)s.bodies[0].n);
            SFAIL(&s, 0, GPUFEED_ERR_PAGE, "column 'x'", s.off);
            pqw_free(&lv0);
        }
        pqw_free(&lev);
        s_free(&s);
    }
    {   /* RLE-encoded BOOLEAN values with their 4-byte length prefix */
        pqw_schema sch[2]; pqw_page pg[2]; pqw_chunk ch; pqw_rowgroup rg; pqw_file f;
        pqw_buf b0 = {0}, b1 = {0}, out = {0}, runs = {0};
        uint32_t bits[30];
        uint32_t lv[30];
        int i;
        for (i = 0; i < 30; i++) { bits[i] = (i < 12) ? 1 : (i * 7) % 3 == 0; lv[i] = i % 4 != 1; }
        pqw_hybrid(&runs, bits, 30, 1);
        pqw_le32(&b0, (uint32_t)runs.n); pqw_append(&b0, &runs);
        pg[0] = pqw_data_page(&b0, 30, PQW_RLE);
        /* optional booleans: levels then the RLE values of the present ones */
        {
            uint32_t present[30]; int nn = 0;
            for (i = 0; i < 30; i++) if (lv[i]) present[nn++] = bits[i];
            runs.n = 0; pqw_hybrid(&runs, present, (size_t)nn, 1);
            pqw_levels_v1(&b1, lv, 30, 1);
            pqw_le32(&b1, (uint32_t)runs.n); pqw_append(&b1, &runs);
            pg[1] = pqw_data_page(&b1, 30, PQW_RLE);
        }
        pqw_simple(&f, sch, &rg, &ch, "flag", PQW_BOOLEAN, PQW_REQUIRED, pg, 1);
        pqw_build(&f, &out);
        {
            gpufeed_file_desc d; gpufeed_file *fp; gpufeed_error e; gpufeed_column *c; gpufeed_column_batch bt;
            gpufeed_column_desc cd;
            int ok = 0, pass;
            for (pass = 0; pass < 2; pass++) {
                int64_t row = 0;
                if (pass == 1) {
                    sch[1].repetition = pqw_set(PQW_OPTIONAL);
                    ch.pages = &pg[1];
                    out.n = 0; pqw_build(&f, &out);
                }
                desc_init(&d, out.p, out.n); mem_reset(out.n);
                ok = 0;
                memset(&cd, 0, sizeof cd); cd.max_rows = 7;
                if (gpufeed_file_open(&fp, &d, &e) == GPUFEED_OK) {
                    if (gpufeed_column_open(&c, fp, 0, 0, &cd, &e) == GPUFEED_OK) {
                        gpufeed_result r;
                        ok = 1;
                        while ((r = gpufeed_column_read(c, &bt)) == GPUFEED_OK) {
                            for (i = 0; i < bt.num_rows; i++, row++) {
                                int valid = bt.valid ? bt.valid[i] : 1;
                                int want_valid = pass ? (int)lv[row] : 1;
                                ok &= valid == want_valid && ((const uint8_t *)bt.values)[i] == (valid ? bits[row] : 0);
                            }
                        }
                        ok &= r == GPUFEED_DONE && row == 30;
                        if (r != GPUFEED_DONE) fprintf(stderr, "  %s\n", gpufeed_column_error(c));
                        gpufeed_column_close(c);
                    } else fprintf(stderr, "  %s\n", e.message);
                    gpufeed_file_close(fp);
                } else fprintf(stderr, "  %s\n", e.message);
                CHECK_MSG(ok && mem_ok(), "RLE booleans, pass %d", pass);
            }
            /* the length prefix overrunning the page; runs ending early */
            sch[1].repetition = pqw_set(PQW_REQUIRED); ch.pages = &pg[0];
            pqw_set_le32(&b0, 0, 1000);
            out.n = 0; pqw_build(&f, &out);
            EXPECT_FAIL(&out, 0, GPUFEED_ERR_CORRUPT, "column 'flag'", "RLE boolean");
            pqw_set_le32(&b0, 0, 2);
            out.n = 0; pqw_build(&f, &out);
            EXPECT_FAIL(&out, 0, GPUFEED_ERR_CORRUPT, "column 'flag'", "RLE boolean");
            pg[0].body_len = 2;
            out.n = 0; pqw_build(&f, &out);
            EXPECT_FAIL(&out, 0, GPUFEED_ERR_CORRUPT, "column 'flag'");
        }
        pqw_free(&b0); pqw_free(&b1); pqw_free(&out); pqw_free(&runs);
    }
    {   /* deprecated BIT_PACKED definition levels (v1) */
        uint32_t lv[10]; int32_t v[10]; int i, nn = 0;
        pqw_buf b = {0};
        s_init(&s, 1, PQW_OPTIONAL);
        for (i = 0; i < 10; i++) { lv[i] = (i % 3 != 2); if (lv[i]) v[nn++] = xval(i); }
        pqw_pack_msb(&b, lv, 10, 1);
        pqw_plain_i32(&b, v, (size_t)nn);
        s.bodies[0].n = 0; pqw_append(&s.bodies[0], &b);
        s.pages[0] = pqw_data_page(&s.bodies[0], 10, PQW_PLAIN);
        s.pages[0].def_enc = pqw_set(PQW_BIT_PACKED);
        CHECK(reads_x(s_build(&s), 10, PQW_OPTIONAL, 0));
        CHECK(reads_x(&s.out, 10, PQW_OPTIONAL, 3));
        pqw_free(&b);
        s_free(&s);
    }
    {   /* zero rows: a chunk with no pages */
        s_init(&s, 0, PQW_OPTIONAL);
        CHECK(reads_x(s_build(&s), 0, PQW_OPTIONAL, 0));
        s_free(&s);
    }
}

/* ---- big headers and huge (virtual) sources ------------------------------ */

static void h_page_blob(pqw_tc *t, void *ctx)
{
    size_t n = *(const size_t *)ctx;
    uint8_t *blob = (uint8_t *)calloc(n ? n : 1, 1);
    pqw_tc_bin(t, 99, blob, n);
    free(blob);
}

static void test_big_page_headers(void)
{
    sfile s;
    size_t blob = 70000;
    s_init(&s, 2, PQW_REQUIRED);
    /* a 70 KB page header (an unknown binary field) reads fine, even when the
       chunk's total_compressed_size gives no read-ahead */
    s.pages[1].extra.fn = h_page_blob; s.pages[1].extra.ctx = &blob;
    CHECK(reads_x(s_build(&s), 20, PQW_REQUIRED, 0));
    s.ch[0].total_compressed = pqw_set(1);
    CHECK(reads_x(s_build(&s), 20, PQW_REQUIRED, 0));
    /* a page header larger than GPUFEED_MAX_PAGE_HEADER_SIZE hits the limit */
    blob = (size_t)GPUFEED_MAX_PAGE_HEADER_SIZE + 4096;
    SFAIL(&s, 0, GPUFEED_ERR_LIMIT, "column 'x'", page_off(&s, 1), "GPUFEED_MAX_PAGE_HEADER_SIZE");
    s_free(&s);
}

/* a read-at source of `size` bytes: head bytes, tail bytes, zeros between */
typedef struct vsrc { uint64_t size; const uint8_t *head; size_t head_n; const uint8_t *tail; size_t tail_n; uint64_t bytes; } vsrc;
static int v_read(void *ctx, uint64_t off, void *buf, size_t len)
{
    vsrc *v = (vsrc *)ctx;
    uint8_t *o = (uint8_t *)buf;
    uint64_t ts;
    if (off > v->size || len > v->size - off) return -1;
    v->bytes += len;
    memset(o, 0, len);
    if (off < v->head_n) memcpy(o, v->head + off, (size_t)(len < v->head_n - off ? len : v->head_n - off));
    ts = v->size - v->tail_n;
    if (off + len > ts) {
        uint64_t from = off > ts ? off : ts;
        memcpy(o + (from - off), v->tail + (from - ts), (size_t)(off + len - from));
    }
    return 0;
}

static gpufeed_result run_virtual(vsrc *v, size_t mem_limit, outcome *o)
{
    gpufeed_source src;
    gpufeed_file_desc d;
    memset(&src, 0, sizeof src); src.read_at = v_read; src.ctx = v; src.size = v->size;
    desc_init(&d, NULL, 0); d.data = NULL; d.source = &src;
    memset(&g_mem, 0, sizeof g_mem); g_mem.limit = mem_limit;
    v->bytes = 0;
    run_desc(&d, o);
    return o->r;
}

static void test_virtual_sources(void)
{
    vsrc v;
    outcome o;
    uint8_t tail[8];
    sfile s;
    /* a footer length over GPUFEED_MAX_FOOTER_SIZE in a 300 MiB source */
    memset(&v, 0, sizeof v);
    v.size = 300u << 20; v.head = (const uint8_t *)"PAR1"; v.head_n = 4;
    {
        uint32_t fl = GPUFEED_MAX_FOOTER_SIZE + 1;
        memcpy(tail, &fl, 4); memcpy(tail + 4, "PAR1", 4);
    }
    v.tail = tail; v.tail_n = 8;
    CHECK(run_virtual(&v, 1u << 20, &o) == GPUFEED_ERR_LIMIT);
    CHECK_HAS(o.msg, "GPUFEED_MAX_FOOTER_SIZE");
    CHECK(mem_ok() && v.bytes < 4096);
    /* a 1 TiB source: real pages at the start, the footer at the end */
    s_init(&s, 1, PQW_REQUIRED);
    s.ch[0].total_compressed = pqw_set(1ll << 39);
    s_build(&s);
    memset(&v, 0, sizeof v);
    v.size = 1ull << 40;
    v.head = s.out.p; v.head_n = (size_t)s.f.footer_at;
    v.tail = s.out.p + s.f.footer_at; v.tail_n = s.out.n - (size_t)s.f.footer_at;
    CHECK_MSG(run_virtual(&v, 8u << 20, &o) == GPUFEED_OK && o.values == 10, "%s", o.msg);
    CHECK(mem_ok());
    CHECK_MSG(v.bytes <= (5u << 20), "%llu bytes read", (unsigned long long)v.bytes);
    /* the chunk claims 20 values: after its page come zeros, not a page
       header. A corrupt header is a page error, found without reading (or
       allocating) tens of MiB */
    s.ch[0].num_values = pqw_set(20);
    s_build(&s);
    v.head = s.out.p; v.head_n = (size_t)s.f.footer_at;
    v.tail = s.out.p + s.f.footer_at; v.tail_n = s.out.n - (size_t)s.f.footer_at;
    run_virtual(&v, 8u << 20, &o);
    CHECK_MSG(o.r == GPUFEED_ERR_PAGE, "%s", o.msg);
    CHECK_HAS(o.msg, "column 'x'");
    if (!mem_ok()) { mem_report(__LINE__); CHECK(0); }
    CHECK_MSG(v.bytes <= (8u << 20), "%llu bytes read for a corrupt page header", (unsigned long long)v.bytes);
    s_free(&s);
}

/* after an error, reading again must not quietly hand out later rows */
static void test_errors_sticky(void)
{
    sfile s;
    gpufeed_file_desc d; gpufeed_file *f; gpufeed_error e; gpufeed_column *c; gpufeed_column_batch b;
    gpufeed_column_desc cd;
    s_init(&s, 3, PQW_REQUIRED);
    s.pages[1].crc = pqw_set(1);
    s_build(&s);
    desc_init(&d, s.out.p, s.out.n); d.flags = GPUFEED_OPEN_VERIFY_CRC; mem_reset(s.out.n);
    memset(&cd, 0, sizeof cd);
    if (gpufeed_file_open(&f, &d, &e) == GPUFEED_OK) {
        if (gpufeed_column_open(&c, f, 0, 0, &cd, &e) == GPUFEED_OK) {
            gpufeed_result r1, r2, r3;
            CHECK(gpufeed_column_read(c, &b) == GPUFEED_OK && b.num_rows == 10);
            r1 = gpufeed_column_read(c, &b);
            CHECK(r1 == GPUFEED_ERR_CHECKSUM);
            r2 = gpufeed_column_read(c, &b);
            CHECK_MSG(r2 < 0, "after %s the next read gave %s with %lld rows, first_row %lld",
                      gpufeed_result_string(r1), gpufeed_result_string(r2), (long long)b.num_rows, (long long)b.first_row);
            r3 = gpufeed_column_read(c, &b);
            CHECK_MSG(r3 < 0, "then %s", gpufeed_result_string(r3));
            gpufeed_column_close(c);
        }
        gpufeed_file_close(f);
    }
    CHECK(mem_ok());
    s_free(&s);
    CHECK_MSG(g_rows_after_end == 0, "%ld reads after DONE or an error gave rows in the other tests", g_rows_after_end);
}


/* ---- the newer value encodings: hostile sections, and one valid read each */

static int read_bytes_column(const pqw_buf *file, const char *want0, const char *want1)
{
    gpufeed_file_desc d;
    gpufeed_file *f = NULL;
    gpufeed_column *c = NULL;
    gpufeed_column_batch b;
    gpufeed_error err;
    int ok = 0;
    memset(&d, 0, sizeof d);
    d.data = file->p; d.data_size = file->n; d.name = "delta.parquet";
    if (gpufeed_file_open(&f, &d, &err) || gpufeed_column_open(&c, f, 0, 0, NULL, &err)) { fprintf(stderr, "  %s\n", err.message); goto out; }
    if (gpufeed_column_read(c, &b) == GPUFEED_OK && b.num_rows == 2) {
        const gpufeed_bytes *v = (const gpufeed_bytes *)b.values;
        ok = v[0].len == strlen(want0) && memcmp(v[0].ptr, want0, v[0].len) == 0 &&
             v[1].len == strlen(want1) && memcmp(v[1].ptr, want1, v[1].len) == 0;
    }
out:
    gpufeed_column_close(c);
    gpufeed_file_close(f);
    return ok;
}


/* ---- nested columns ------------------------------------------------------ */

/* A LIST column: optional group l (LIST) { repeated group list { <elem>
   int32 element } } (max_def 3, or 2 with a required element), or with
   deep = 1 a list of lists a.list.element.list.element (max_def 5, max_rep
   2). Pages are built from level arrays; values are 100, 101, ... */
typedef struct nfile {
    pqw_schema sch[8];
    pqw_page pages[4];
    pqw_buf bodies[4], vals[4];
    pqw_chunk ch;
    pqw_rowgroup rg;
    pqw_file f;
    pqw_buf out;
    int deep, maxd, maxr, npages;
    int32_t next_val;
} nfile;

static void n_init(nfile *s, int deep, int elem_rep, int64_t rows)
{
    memset(s, 0, sizeof *s);
    s->deep = deep;
    s->sch[0] = pqw_root(1);
    s->sch[1] = pqw_group(deep ? "a" : "l", 1, PQW_OPTIONAL); s->sch[1].converted_type = pqw_set(3);
    s->sch[2] = pqw_group("list", 1, PQW_REPEATED);
    if (deep) {
        s->sch[3] = pqw_group("element", 1, PQW_OPTIONAL); s->sch[3].converted_type = pqw_set(3);
        s->sch[4] = pqw_group("list", 1, PQW_REPEATED);
        s->sch[5] = pqw_leaf("element", PQW_INT32, elem_rep);
        s->f.nschema = 6; s->ch.path = "a.list.element.list.element";
        s->maxd = 4 + (elem_rep == PQW_OPTIONAL); s->maxr = 2;
    } else {
        s->sch[3] = pqw_leaf("element", PQW_INT32, elem_rep);
        s->f.nschema = 4; s->ch.path = "l.list.element";
        s->maxd = 2 + (elem_rep == PQW_OPTIONAL); s->maxr = 1;
    }
    s->ch.pages = s->pages; s->ch.physical = PQW_INT32;
    s->rg.chunks = &s->ch; s->rg.nchunks = 1; s->rg.num_rows = pqw_set(rows);
    s->f.schema = s->sch; s->f.rgs = &s->rg; s->f.nrgs = 1;
    s->next_val = 100;
}
/* appends a page of n entries; values for entries at max_def */
static void n_page(nfile *s, const uint32_t *rep, const uint32_t *def, size_t n, int v2)
{
    int p = s->npages++;
    size_t i;
    s->vals[p].n = 0;
    for (i = 0; i < n; i++) if (def[i] == (uint32_t)s->maxd) { int32_t v = s->next_val++; pqw_plain_i32(&s->vals[p], &v, 1); }
    s->pages[p] = pqw_nested_page(&s->bodies[p], rep, def, n, s->maxr == 1 ? 1 : 2, s->maxd <= 3 ? 2 : 3, &s->vals[p], v2);
    s->ch.npages = s->npages;
}
static pqw_buf *n_build(nfile *s) { s->out.n = 0; pqw_build(&s->f, &s->out); return &s->out; }
static void n_free(nfile *s)
{
    int i;
    for (i = 0; i < 4; i++) { pqw_free(&s->bodies[i]); pqw_free(&s->vals[i]); }
    pqw_free(&s->out);
}
#define NFAIL(s, code, ...) do { n_build(s); { const char *const nd_[] = { __VA_ARGS__, NULL }; \
    expect_fail_(__LINE__, &(s)->out, 0, (code), nd_); } } while (0)

/* reads column 0 (max_rows per read) and checks rows, levels and values */
static int n_reads(const pqw_buf *file, int64_t rows, int64_t levels, int64_t values, int64_t max_rows)
{
    gpufeed_file_desc d;
    gpufeed_file *f = NULL;
    gpufeed_error err;
    gpufeed_column *c = NULL;
    gpufeed_column_desc cd;
    gpufeed_column_batch b;
    gpufeed_result r;
    int64_t nr = 0, nl = 0, nv = 0, i;
    int ok = 1;
    desc_init(&d, file->p, file->n);
    mem_reset(file->n);
    if (gpufeed_file_open(&f, &d, &err)) { fprintf(stderr, "  open: %s\n", err.message); return 0; }
    memset(&cd, 0, sizeof cd); cd.max_rows = max_rows;
    if (gpufeed_column_open(&c, f, 0, 0, &cd, &err)) { fprintf(stderr, "  column open: %s\n", err.message); gpufeed_file_close(f); return 0; }
    while ((r = gpufeed_column_read(c, &b)) == GPUFEED_OK) {
        int64_t rs = 0;
        if (b.first_row != nr || !b.rep_levels || !b.def_levels || b.valid || b.num_levels < b.num_rows || b.rep_levels[0] != 0) ok = 0;
        for (i = 0; i < b.num_levels; i++) rs += b.rep_levels[i] == 0;
        if (rs != b.num_rows || b.null_count != b.num_levels - b.num_values) ok = 0;
        for (i = 0; i < b.num_values; i++) if (((const int32_t *)b.values)[i] != 100 + (int32_t)(nv + i)) ok = 0;
        nr += b.num_rows; nl += b.num_levels; nv += b.num_values;
    }
    if (r != GPUFEED_DONE) { fprintf(stderr, "  read: %s\n", gpufeed_column_error(c)); ok = 0; }
    if (nr != rows || nl != levels || nv != values) {
        fprintf(stderr, "  %lld rows, %lld levels, %lld values; expected %lld, %lld, %lld\n", (long long)nr, (long long)nl, (long long)nv,
                (long long)rows, (long long)levels, (long long)values);
        ok = 0;
    }
    gpufeed_column_close(c);
    gpufeed_file_close(f);
    if (!mem_ok()) { mem_report(__LINE__); ok = 0; }
    return ok;
}

static void test_nested_levels(void)
{
    nfile s;
    int v2;
    for (v2 = 0; v2 < 2; v2++) {
        /* the good file: [100, 101, null], null, [], row 3 spans the pages: [102, 103] */
        static const uint32_t r1[] = { 0, 1, 1, 0, 0, 0 }, d1[] = { 3, 3, 2, 0, 1, 3 };
        static const uint32_t r2[] = { 1, 0 }, d2[] = { 3, 3 };
        n_init(&s, 0, PQW_OPTIONAL, 5);
        n_page(&s, r1, d1, 6, v2); n_page(&s, r2, d2, 2, v2);
        CHECK(n_reads(n_build(&s), 5, 8, 5, 0));
        CHECK(n_reads(&s.out, 5, 8, 5, 1));
        CHECK(n_reads(&s.out, 5, 8, 5, 2));
        n_free(&s);
        /* the chunk's first entry continues a row */
        n_init(&s, 0, PQW_OPTIONAL, 2);
        { static const uint32_t r[] = { 1, 0 }, d[] = { 3, 3 }; n_page(&s, r, d, 2, v2); }
        NFAIL(&s, GPUFEED_ERR_CORRUPT, "column 'l.list.element'", "page 0", "byte offset", "level entry 0 of the page has repetition level 1 where a row must start");
        n_free(&s);
        /* continuing an empty list, and an element below its list's level */
        n_init(&s, 0, PQW_OPTIONAL, 1);
        { static const uint32_t r[] = { 0, 1 }, d[] = { 1, 3 }; n_page(&s, r, d, 2, v2); }
        NFAIL(&s, GPUFEED_ERR_CORRUPT, "inconsistent levels", "continues a list that row 0 does not have", "level entry 1");
        n_free(&s);
        n_init(&s, 0, PQW_OPTIONAL, 1);
        { static const uint32_t r[] = { 0, 1 }, d[] = { 3, 1 }; n_page(&s, r, d, 2, v2); }
        NFAIL(&s, GPUFEED_ERR_CORRUPT, "inconsistent levels", "definition level 1, below the 2");
        n_free(&s);
        /* a definition level above the maximum (required element: max 2) */
        n_init(&s, 0, PQW_REQUIRED, 1);
        { static const uint32_t r[] = { 0, 1 }, d[] = { 2, 3 }; n_page(&s, r, d, 2, v2); }
        NFAIL(&s, GPUFEED_ERR_CORRUPT, "definition level 3 exceeds the column's maximum 2", "level entry 1");
        n_free(&s);
        /* a repetition level above the maximum (a list of lists: max 2) */
        n_init(&s, 1, PQW_OPTIONAL, 1);
        { static const uint32_t r[] = { 0, 3 }, d[] = { 5, 5 }; n_page(&s, r, d, 2, v2); }
        NFAIL(&s, GPUFEED_ERR_CORRUPT, "column 'a.list.element.list.element'", "repetition level 3 exceeds the column's maximum 2");
        n_free(&s);
        /* more rows than the row group has, and fewer */
        n_init(&s, 0, PQW_OPTIONAL, 1);
        { static const uint32_t r[] = { 0, 0 }, d[] = { 3, 3 }; n_page(&s, r, d, 2, v2); }
        NFAIL(&s, GPUFEED_ERR_CORRUPT, "start more rows than the row group's 1");
        n_free(&s);
        n_init(&s, 0, PQW_OPTIONAL, 3);
        { static const uint32_t r[] = { 0, 1, 0 }, d[] = { 3, 3, 3 }; n_page(&s, r, d, 3, v2); }
        NFAIL(&s, GPUFEED_ERR_CORRUPT, "chunk ended after 2 of 3 rows");
        n_free(&s);
        /* fewer level entries than rows: refused at open */
        n_init(&s, 0, PQW_OPTIONAL, 4);
        { static const uint32_t r[] = { 0, 0, 0 }, d[] = { 3, 3, 3 }; n_page(&s, r, d, 3, v2); }
        NFAIL(&s, GPUFEED_ERR_CORRUPT, "chunk has 3 level entries but the row group has 4 rows");
        n_free(&s);
        /* values missing behind the levels */
        n_init(&s, 0, PQW_OPTIONAL, 1);
        { static const uint32_t r[] = { 0, 1, 1 }, d[] = { 3, 3, 3 }; n_page(&s, r, d, 3, v2); }
        s.vals[0].n = 0;
        s.pages[0] = pqw_nested_page(&s.bodies[0], r1, d1, 3, 1, 2, NULL, v2);
        NFAIL(&s, GPUFEED_ERR_CORRUPT, "page holds fewer values than its levels say");
        n_free(&s);
    }
    /* v1: repetition levels that end early, an unknown level encoding */
    {
        pqw_buf b = {0};
        static const uint32_t d[] = { 3, 3, 3 };
        n_init(&s, 0, PQW_OPTIONAL, 1);
        pqw_le32(&b, 2); pqw_rle_run(&b, 0, 1, 1);     /* one repetition level of three */
        pqw_levels_v1(&b, d, 3, 2);
        { int32_t v[3] = { 100, 101, 102 }; pqw_plain_i32(&b, v, 3); }
        s.pages[0] = pqw_data_page(&b, 3, PQW_PLAIN); s.npages = 1; s.ch.npages = 1;
        NFAIL(&s, GPUFEED_ERR_CORRUPT, "repetition levels end after 1 of the page's remaining 3 values");
        s.pages[0].rep_enc = pqw_set(PQW_PLAIN);
        NFAIL(&s, GPUFEED_ERR_ENCODING, "repetition level encoding PLAIN is not supported");
        s.pages[0].rep_enc.mode = 0;
        b.n = 0; pqw_le32(&b, 1000);                  /* a length beyond the page */
        s.pages[0] = pqw_data_page(&b, 3, PQW_PLAIN);
        NFAIL(&s, GPUFEED_ERR_CORRUPT, "repetition levels of 1000 bytes overrun");
        pqw_free(&b); n_free(&s);
    }
    /* limits: a list wider than GPUFEED_MAX_LIST_WIDTH (1000 here), a row with
       more than GPUFEED_MAX_RECORD_LEVELS (4000) entries; RLE runs keep the
       file small, null elements need no values */
    {
        pqw_buf b = {0};
        n_init(&s, 0, PQW_OPTIONAL, 1);
        pqw_le32(&b, 0); { size_t at = b.n; pqw_rle_run(&b, 0, 1, 1); pqw_rle_run(&b, 1, 1000, 1); pqw_set_le32(&b, at - 4, (uint32_t)(b.n - at)); }
        pqw_le32(&b, 0); { size_t at = b.n; pqw_rle_run(&b, 2, 1001, 2); pqw_set_le32(&b, at - 4, (uint32_t)(b.n - at)); }
        s.pages[0] = pqw_data_page(&b, 1001, PQW_PLAIN); s.npages = 1; s.ch.npages = 1;
        NFAIL(&s, GPUFEED_ERR_LIMIT, "row 0 has a list of more than GPUFEED_MAX_LIST_WIDTH (1000) elements");
        b.n = 0;   /* 1000 entries: the widest list allowed */
        pqw_le32(&b, 0); { size_t at = b.n; pqw_rle_run(&b, 0, 1, 1); pqw_rle_run(&b, 1, 999, 1); pqw_set_le32(&b, at - 4, (uint32_t)(b.n - at)); }
        pqw_le32(&b, 0); { size_t at = b.n; pqw_rle_run(&b, 2, 1000, 2); pqw_set_le32(&b, at - 4, (uint32_t)(b.n - at)); }
        s.pages[0] = pqw_data_page(&b, 1000, PQW_PLAIN);
        n_build(&s);
        CHECK(n_reads(&s.out, 1, 1000, 0, 0));
        pqw_free(&b); n_free(&s);
        /* a list of lists: 100 lists of 50 null elements = 5000 entries */
        n_init(&s, 1, PQW_OPTIONAL, 1);
        b.n = 0;
        pqw_le32(&b, 0);
        {
            size_t at = b.n; int k;
            pqw_rle_run(&b, 0, 1, 2);
            for (k = 0; k < 100; k++) { if (k) pqw_rle_run(&b, 1, 1, 2); pqw_rle_run(&b, 2, 49, 2); }
            pqw_set_le32(&b, at - 4, (uint32_t)(b.n - at));
        }
        pqw_le32(&b, 0); { size_t at = b.n; pqw_rle_run(&b, 4, 5000, 3); pqw_set_le32(&b, at - 4, (uint32_t)(b.n - at)); }
        s.pages[0] = pqw_data_page(&b, 5000, PQW_PLAIN); s.npages = 1; s.ch.npages = 1;
        NFAIL(&s, GPUFEED_ERR_LIMIT, "row 0 has more than GPUFEED_MAX_RECORD_LEVELS (4000) level entries");
        pqw_free(&b); n_free(&s);
    }
}

static void test_new_encodings(void)
{
    sfile s;
    int i, k;
    /* BYTE_STREAM_SPLIT: byte k of value i at k * n + i reads back the values */
    s_init(&s, 1, PQW_REQUIRED);
    {
        uint8_t plain[40], split[40];
        memcpy(plain, s.bodies[0].p, 40);
        for (i = 0; i < 10; i++) for (k = 0; k < 4; k++) split[k * 10 + i] = plain[i * 4 + k];
        memcpy(s.bodies[0].p, split, 40);
    }
    s.pages[0].encoding = pqw_set(9);
    CHECK(reads_x(s_build(&s), 10, PQW_REQUIRED, 0));
    s.pages[0].body_len = 39;            /* a section that is not whole values */
    SFAIL(&s, 0, GPUFEED_ERR_CORRUPT, "BYTE_STREAM_SPLIT", "not a multiple", "column 'x'", s.off);
    s.pages[0].body_len = 40;
    s.pages[0].encoding = pqw_set(6);    /* DELTA_LENGTH_BYTE_ARRAY on INT32 */
    SFAIL(&s, 0, GPUFEED_ERR_ENCODING, "DELTA_LENGTH_BYTE_ARRAY on a INT32 column", s.off);
    s.pages[0].encoding = pqw_set(7);    /* DELTA_BYTE_ARRAY on INT32 */
    SFAIL(&s, 0, GPUFEED_ERR_ENCODING, "DELTA_BYTE_ARRAY on a INT32 column", s.off);
    s_free(&s);
    {   /* DELTA_BYTE_ARRAY on a BYTE_ARRAY column: prefixes, suffix lengths, suffixes */
        static const uint8_t ok_body[] = { 0x80, 0x01, 0x04, 0x02, 0x00, 0x02, 0, 0, 0, 0,   /* prefixes 0, 1 */
                                           0x80, 0x01, 0x04, 0x02, 0x02, 0x00, 0, 0, 0, 0,   /* suffix lengths 1, 1 */
                                           'a', 'b' };                                       /* -> "a", "ab" */
        static const uint8_t long_prefix[] = { 0x80, 0x01, 0x04, 0x02, 0x00, 0x0A, 0, 0, 0, 0, /* prefixes 0, 5 */
                                               0x80, 0x01, 0x04, 0x02, 0x02, 0x00, 0, 0, 0, 0, 'a', 'b' };
        static const uint8_t fewer_suffixes[] = { 0x80, 0x01, 0x04, 0x02, 0x00, 0x02, 0, 0, 0, 0,
                                                  0x80, 0x01, 0x04, 0x01, 0x02, 'a' };         /* one suffix length */
        static const uint8_t short_bytes[] = { 0x80, 0x01, 0x04, 0x02, 0x00, 0x02, 0, 0, 0, 0,
                                               0x80, 0x01, 0x04, 0x02, 0x02, 0x00, 0, 0, 0, 0, 'a' }; /* one byte of two */
        const uint8_t *bodies[4];
        size_t lens[4];
        int which;
        bodies[0] = ok_body; lens[0] = sizeof ok_body;
        bodies[1] = long_prefix; lens[1] = sizeof long_prefix;
        bodies[2] = fewer_suffixes; lens[2] = sizeof fewer_suffixes;
        bodies[3] = short_bytes; lens[3] = sizeof short_bytes;
        for (which = 0; which < 4; which++) {
            pqw_schema sch[2];
            pqw_page pg;
            pqw_chunk ch;
            pqw_rowgroup rg;
            pqw_file f;
            pqw_buf body = {0}, out = {0};
            pqw_put(&body, bodies[which], lens[which]);
            pg = pqw_data_page(&body, 2, PQW_PLAIN);
            pg.encoding = pqw_set(7);
            pqw_simple(&f, sch, &rg, &ch, "s", PQW_BYTE_ARRAY, PQW_REQUIRED, &pg, 1);
            pqw_build(&f, &out);
            switch (which) {
            case 0: CHECK(read_bytes_column(&out, "a", "ab")); break;
            case 1: EXPECT_FAIL(&out, 0, GPUFEED_ERR_CORRUPT, "column 's'", "prefix longer than the value before it"); break;
            case 2: EXPECT_FAIL(&out, 0, GPUFEED_ERR_CORRUPT, "column 's'", "2 prefixes but 1 suffixes"); break;
            default: EXPECT_FAIL(&out, 0, GPUFEED_ERR_CORRUPT, "column 's'", "need 2 bytes, the page has 1"); break;
            }
            pqw_free(&body); pqw_free(&out);
        }
    }
}

/* ---- issue 19: the Thrift remaining-bytes check, the footer-length check -- */

/* The footer (FileMetaData) of sfile s, serialized, without its closing STOP,
   then one more field whose binary value (the last bytes of the footer)
   claims `extra` bytes more than follow it. kind 0: created_by (field 6);
   1: a key_value_metadata list (field 5) of one KeyValue whose value is the
   last field; 2: an unknown field 99 (skipped). extra 0 with close: the
   structs closed (STOP bytes), a valid footer. Returns the position of the
   value's first byte in the footer. */
static const char claim_text[] = "one byte short";
static size_t claim_footer(sfile *s, pqw_buf *foot, int kind, int extra, int close)
{
    pqw_tc t;
    size_t len = sizeof claim_text - 1, at;
    s->f.created_by = NULL;
    s_build(s);                        /* chunk offsets, for the row group */
    foot->n = 0;
    pqw_tc_init(&t, foot);
    pqw_write_file_meta(&t, &s->f);
    foot->n--;                         /* FileMetaData's STOP */
    switch (kind) {
    case 0: pqw_u8(foot, PQW_T_BINARY); pqw_uvarint(foot, pqw_zigzag(6)); break;
    case 1:
        pqw_u8(foot, PQW_T_LIST); pqw_uvarint(foot, pqw_zigzag(5));
        pqw_u8(foot, 0x10 | PQW_T_STRUCT);             /* one KeyValue */
        pqw_u8(foot, 0x10 | PQW_T_BINARY); pqw_uvarint(foot, 1); pqw_u8(foot, 'k'); /* key (1) */
        pqw_u8(foot, 0x10 | PQW_T_BINARY);            /* value (2) */
        break;
    default: pqw_u8(foot, PQW_T_BINARY); pqw_uvarint(foot, pqw_zigzag(99)); break;
    }
    pqw_uvarint(foot, len + (size_t)extra);
    at = foot->n;
    pqw_put(foot, claim_text, len);
    if (close) {
        if (kind == 1) pqw_u8(foot, 0);                /* KeyValue's STOP */
        pqw_u8(foot, 0);                               /* FileMetaData's STOP */
    }
    s->f.footer_raw = foot->p; s->f.footer_raw_len = foot->n;
    s_build(s);
    s->f.footer_raw = NULL;
    return at;
}

/* A footer whose last field is a binary claiming exactly one byte more than
   the footer holds: a Thrift error naming the struct, the length and the
   byte offset of the value, never a read of the byte past the footer (the
   file and gpufeed's copy of the footer are allocations of exact size, so
   ASan sees such a read). The same footer with the value's true length
   opens and reads back the value. */
static void test_footer_binary_one_past_end(void)
{
    static const char *const what[3] = { "thrift FileMetaData:", "thrift KeyValue:", "thrift FileMetaData:" };
    sfile s;
    pqw_buf foot = {0};
    int kind;
    s_init(&s, 1, PQW_REQUIRED);
    for (kind = 0; kind < 3; kind++) {
        char len_msg[64], off_msg[64];
        size_t at = claim_footer(&s, &foot, kind, 1, 0);
        uint8_t *exact = (uint8_t *)malloc(s.out.n);   /* the file, exactly */
        pqw_buf file;
        memcpy(exact, s.out.p, s.out.n);
        file.p = exact; file.n = file.cap = s.out.n;
        sprintf(len_msg, "length %u runs past the end", (unsigned)(sizeof claim_text));
        sprintf(off_msg, "(byte offset %llu)", (unsigned long long)((size_t)s.f.footer_at + at));
        CHECK_MSG(s.f.footer_size == (int64_t)foot.n && (size_t)s.f.footer_size == at + sizeof claim_text - 1,
                  "kind %d: the value does not end the footer", kind);
        EXPECT_FAIL(&file, 0, GPUFEED_ERR_THRIFT, "footer: ", what[kind], len_msg, off_msg);
        free(exact);
        /* the value's true length, the structs closed: a valid footer */
        claim_footer(&s, &foot, kind, 0, 1);
        {
            gpufeed_file_desc d;
            gpufeed_file *f = NULL;
            gpufeed_error e;
            exact = (uint8_t *)malloc(s.out.n);
            memcpy(exact, s.out.p, s.out.n);
            desc_init(&d, exact, s.out.n);
            mem_reset(s.out.n);
            CHECK_MSG(gpufeed_file_open(&f, &d, &e) == GPUFEED_OK, "kind %d: %s", kind, e.message);
            if (f) {
                const gpufeed_metadata *md = gpufeed_file_metadata(f);
                if (kind == 0) CHECK(md->created_by && strcmp(md->created_by, claim_text) == 0);
                if (kind == 1) CHECK(md->num_key_values == 1 && strcmp(md->key_values[0].key, "k") == 0 &&
                                     md->key_values[0].value && strcmp(md->key_values[0].value, claim_text) == 0);
                CHECK(md->num_rows == 10 && md->num_row_groups == 1);
                gpufeed_file_close(f);
            }
            CHECK(mem_ok());
            free(exact);
        }
    }
    pqw_free(&foot);
    s_free(&s);
}

/* Footer lengths that make the footer overlap the leading magic (it may
   start at byte 4 at the earliest: length <= size - 12): size - 11, - 10
   and - 9 are footer errors naming the length and the file size; size - 12
   is the largest length allowed, and opens when the footer does fill the
   file (a file without data pages). */
static void test_footer_length_overlaps_magic(void)
{
    pqw_schema sch[2];
    pqw_file f;
    pqw_buf b = {0};
    sfile s;
    int k;
    char msg[128];
    memset(&f, 0, sizeof f);
    sch[0] = pqw_root(1);
    sch[1] = pqw_leaf("x", PQW_INT32, PQW_REQUIRED);
    f.schema = sch; f.nschema = 2; f.nrgs = 0;
    pqw_build(&f, &b);
    CHECK(f.footer_at == 4 && (size_t)f.footer_size == b.n - 12);
    {   /* length size - 12: the footer right after the head magic */
        gpufeed_file_desc d;
        gpufeed_file *fp = NULL;
        gpufeed_error e;
        desc_init(&d, b.p, b.n);
        mem_reset(b.n);
        CHECK_MSG(gpufeed_file_open(&fp, &d, &e) == GPUFEED_OK, "%s", e.message);
        if (fp) {
            const gpufeed_metadata *md = gpufeed_file_metadata(fp);
            CHECK(md->footer_length == (uint32_t)(b.n - 12) && md->num_rows == 0 && md->num_columns == 1 && md->num_row_groups == 0);
            gpufeed_file_close(fp);
        }
        CHECK(mem_ok());
    }
    for (k = 11; k >= 9; k--) {
        pqw_set_le32(&b, b.n - 8, (uint32_t)(b.n - (size_t)k));
        sprintf(msg, "footer length %u runs past the start of the file (file size %u)", (unsigned)(b.n - (size_t)k), (unsigned)b.n);
        EXPECT_FAIL(&b, 0, GPUFEED_ERR_FOOTER, msg);
    }
    pqw_free(&b);
    /* a file with data: the same rule */
    s_init(&s, 1, PQW_REQUIRED);
    s_build(&s);
    for (k = 11; k >= 9; k--) {
        s.f.footer_len = pqw_set((int64_t)s.out.n - k);
        s_build(&s);
        sprintf(msg, "footer length %u runs past the start of the file (file size %u)", (unsigned)(s.out.n - (size_t)k), (unsigned)s.out.n);
        EXPECT_FAIL(&s.out, 0, GPUFEED_ERR_FOOTER, msg);
    }
    s.f.footer_len = pqw_omit();
    CHECK(reads_x(s_build(&s), 10, PQW_REQUIRED, 0));
    s_free(&s);
}

/* ---- issue 19: the schema's depth limit and element count at their bounds */

/* A leaf at depth GPUFEED_MAX_SCHEMA_DEPTH (the root at 0, groups between)
   opens; one level deeper is the depth error, naming the element. */
static void test_schema_depth_exact(void)
{
    enum { D = GPUFEED_MAX_SCHEMA_DEPTH };
    pqw_schema sch[D + 2];
    pqw_file f;
    pqw_buf out = {0};
    int k, i;
    for (k = 0; k < 2; k++) {
        int groups = D - 1 + k;
        memset(&f, 0, sizeof f);
        sch[0] = pqw_root(1);
        for (i = 1; i <= groups; i++) sch[i] = pqw_group("g", 1, PQW_OPTIONAL);
        sch[groups + 1] = pqw_leaf("x", PQW_INT32, PQW_OPTIONAL);
        f.schema = sch; f.nschema = groups + 2; f.nrgs = 0;
        out.n = 0;
        pqw_build(&f, &out);
        if (k == 0) {
            gpufeed_file_desc d;
            gpufeed_file *fp = NULL;
            gpufeed_error e;
            desc_init(&d, out.p, out.n);
            mem_reset(out.n);
            CHECK_MSG(gpufeed_file_open(&fp, &d, &e) == GPUFEED_OK, "a leaf at depth %d: %s", D, e.message);
            if (fp) {
                const gpufeed_metadata *md = gpufeed_file_metadata(fp);
                CHECK(md->num_columns == 1 && md->columns[0].max_def == D);
                gpufeed_file_close(fp);
            }
            CHECK(mem_ok());
        } else {
            char msg[96];
            sprintf(msg, "deeper than GPUFEED_MAX_SCHEMA_DEPTH (%d) at element %d", D, D + 1);
            EXPECT_FAIL(&out, 0, GPUFEED_ERR_SCHEMA, msg);
        }
    }
    pqw_free(&out);
}

/* A footer whose schema list comes last and holds n elements of the
   smallest size, 3 bytes ({4: name ""} and STOP), in exactly the 3n bytes
   before FileMetaData's STOP: the count check lets it through (the schema
   it makes is then refused for what it is: a root without children), and a
   count one larger is refused by the count check. */
static void test_schema_count_exact(void)
{
    int k;
    for (k = 0; k < 2; k++) {
        sfile s;
        pqw_buf foot = {0};
        int n = 3, i;
        s_init(&s, 1, PQW_REQUIRED);
        pqw_u8(&foot, 0x15); pqw_u8(&foot, 2);          /* 1: version = 1 */
        pqw_u8(&foot, 0x26); pqw_u8(&foot, 0);          /* 3: num_rows = 0 */
        pqw_u8(&foot, 0x19); pqw_u8(&foot, 0x0C);       /* 4: row_groups = [] */
        pqw_u8(&foot, 0x09); pqw_u8(&foot, 4);          /* 2: schema, its id in full */
        pqw_u8(&foot, (uint8_t)(((n + k) << 4) | 0x0C)); /* n (+ 1) structs */
        for (i = 0; i < n; i++) { pqw_u8(&foot, 0x48); pqw_u8(&foot, 0); pqw_u8(&foot, 0); }
        pqw_u8(&foot, 0);                               /* FileMetaData's STOP */
        s.f.footer_raw = foot.p; s.f.footer_raw_len = foot.n;
        s_build(&s);
        s.f.footer_raw = NULL;
        if (k == 0) EXPECT_FAIL(&s.out, 0, GPUFEED_ERR_SCHEMA, "the root's children cover 1 of 3 elements");
        else EXPECT_FAIL(&s.out, 0, GPUFEED_ERR_THRIFT, "4 schema elements cannot fit in the 10 bytes left");
        pqw_free(&foot);
        s_free(&s);
    }
}

/* repetition_type: 3, one past REPEATED (2), is refused naming the
   element, as are -1 and none; the same file with REQUIRED reads */
static void test_repetition_type_bounds(void)
{
    sfile s;
    s_init(&s, 1, PQW_REQUIRED);
    s.sch[1].repetition = pqw_set(3);
    SFAIL(&s, 0, GPUFEED_ERR_SCHEMA, "schema element 'x' has an invalid repetition_type");
    s.sch[1].repetition = pqw_set(-1);
    SFAIL(&s, 0, GPUFEED_ERR_SCHEMA, "schema element 'x' has an invalid repetition_type");
    s.sch[1].repetition = pqw_omit();
    SFAIL(&s, 0, GPUFEED_ERR_SCHEMA, "schema element 'x' has no repetition_type");
    s.sch[1].repetition = pqw_set(PQW_REQUIRED);
    CHECK(reads_x(s_build(&s), 10, PQW_REQUIRED, 0));
    s_free(&s);
}

/* FileMetaData.num_rows that disagrees with the row groups (some writers
   do): the row groups' sum is authoritative, in the metadata and in what
   the file reads (issue 19) */
static void test_num_rows_from_row_groups(void)
{
    static const int64_t claims[] = { 7, 11, 0, 1000 };
    size_t k;
    for (k = 0; k < sizeof claims / sizeof claims[0]; k++) {
        sfile s;
        gpufeed_file_desc d;
        gpufeed_file *fp = NULL;
        gpufeed_error e;
        s_init(&s, 1, PQW_REQUIRED);
        s.f.num_rows = pqw_set(claims[k]);
        s_build(&s);
        desc_init(&d, s.out.p, s.out.n);
        mem_reset(s.out.n);
        CHECK_MSG(gpufeed_file_open(&fp, &d, &e) == GPUFEED_OK, "num_rows %lld: %s", (long long)claims[k], e.message);
        if (fp) {
            const gpufeed_metadata *md = gpufeed_file_metadata(fp);
            CHECK_MSG(md->num_rows == 10 && md->num_row_groups == 1 && md->row_groups[0].num_rows == 10,
                      "footer num_rows %lld: metadata says %lld", (long long)claims[k], (long long)md->num_rows);
            gpufeed_file_close(fp);
        }
        CHECK(mem_ok());
        CHECK(reads_x(s_build(&s), 10, PQW_REQUIRED, 0));
        s_free(&s);
    }
}

int main(void)
{
    RUN(test_tiny_and_magic);
    RUN(test_truncation);
    RUN(test_failing_source);
    RUN(test_footer_flips);
    RUN(test_data_flips);
    RUN(test_footer_thrift);
    RUN(test_footer_list_amplification);
    RUN(test_schema_path_amplification);
    RUN(test_schema);
    RUN(test_row_groups);
    RUN(test_unsupported_columns);
    RUN(test_page_sizes);
    RUN(test_snappy_pages);
    RUN(test_unsupported_codec_allocation);
    RUN(test_value_counts);
    RUN(test_walk_into_next_chunk);
    RUN(test_levels);
    RUN(test_dictionary);
    RUN(test_crc);
    RUN(test_page_numbers_consistent);
    RUN(test_bad_arguments);
    RUN(test_paths);
    RUN(test_source_failures);
    RUN(test_traps);
    RUN(test_big_page_headers);
    RUN(test_virtual_sources);
    RUN(test_errors_sticky);
    RUN(test_new_encodings);
    RUN(test_nested_levels);
    RUN(test_footer_binary_one_past_end);
    RUN(test_footer_length_overlaps_magic);
    RUN(test_schema_depth_exact);
    RUN(test_schema_count_exact);
    RUN(test_repetition_type_bounds);
    RUN(test_num_rows_from_row_groups);
    return TEST_SUMMARY();
}
