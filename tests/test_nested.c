/* Nested columns: level -> JSON assembly (gpufeed-cat's nested_row), legacy
   list and map forms that modern writers do not produce (crafted with
   tests/pq_writer.h and printed by gpufeed-cat's cat_path), the column
   reader's batches of whole rows, and dense list features (widths, list
   policies, null policies, lengths, both layouts, seeks through an offset
   index).

   Run from the repository root: it writes its files into a temporary
   directory under build/. With --write DIR it also leaves the crafted
   legacy files in DIR, for tests/check_corpus.py to compare them with
   pyarrow's reading. */
#define _POSIX_C_SOURCE 200809L
#define GPUFEED_CAT_NO_MAIN
#include "../tools/gpufeed-cat.c"
#include "gf_test.h"
#include "pq_writer.h"
#include <unistd.h>
#include <errno.h>
#include <sys/stat.h>

static char g_dir[64];

/* ---- level -> JSON ------------------------------------------------------- */

/* Assembles every row of the entries with slots given as a string of O
   (optional) and R (repeated) nodes, top-down; values are int32 10, 11, ...
   Rows are joined with '|'; a null row is "<null>". */
static void assemble(const char *spec, const int16_t *rep, const int16_t *def, int64_t n, char *out, size_t cap)
{
    col_state cs;
    gpufeed_schema_node nd;
    sbuf sb;
    int32_t vals[64];
    int64_t i, nv = 0, at = 0;
    int k, maxd;
    memset(&cs, 0, sizeof cs); memset(&nd, 0, sizeof nd); memset(&sb, 0, sizeof sb);
    nd.physical = GPUFEED_INT32;
    cs.nd = &nd;
    for (k = 0; spec[k]; k++) { cs.slots[k].rep = spec[k] == 'R'; cs.slots[k].def = (int16_t)(k + 1); }
    cs.nslots = k; maxd = k;
    for (i = 0; i < n; i++) if (def[i] == maxd) { vals[nv] = (int32_t)(10 + nv); nv++; }
    cs.b.rep_levels = rep; cs.b.def_levels = def; cs.b.num_levels = n; cs.b.num_values = nv; cs.b.values = vals;
    out[0] = 0;
    while (at < n) {
        int64_t end = at + 1;
        int r;
        while (end < n && rep[end] != 0) end++;
        cs.lat = at;
        r = nested_row(&cs, &sb, end);
        if (out[0]) strncat(out, "|", cap - strlen(out) - 1);
        if (r < 0) strncat(out, "<bad>", cap - strlen(out) - 1);
        else if (r > 0) strncat(out, "<null>", cap - strlen(out) - 1);
        else { sb_put(&sb, "", 1); strncat(out, sb.p, cap - strlen(out) - 1); }
        at = end;
    }
    free(sb.p);
}

#define ASSEMBLES(spec, rep, def, want) do { char got_[512]; \
    assemble(spec, rep, def, (int64_t)(sizeof rep / sizeof rep[0]), got_, sizeof got_); \
    CHECK_MSG(strcmp(got_, want) == 0, "%s: got %s, want %s", spec, got_, want); } while (0)

static void test_assembly(void)
{
    {   /* 3-level LIST: optional l / repeated list / optional element */
        static const int16_t r[] = { 0, 0, 0, 0, 1, 1 }, d[] = { 0, 1, 2, 3, 3, 2 };
        ASSEMBLES("ORO", r, d, "<null>|[]|[null]|[10,11,null]");
    }
    {   /* a required list of required elements (repeated only) */
        static const int16_t r[] = { 0, 0, 1, 1 }, d[] = { 0, 1, 1, 1 };
        ASSEMBLES("R", r, d, "[]|[10,11,12]");
    }
    {   /* a map's values: optional m / repeated key_value / optional value */
        static const int16_t r[] = { 0, 1, 0, 0 }, d[] = { 3, 2, 1, 0 };
        ASSEMBLES("ORO", r, d, "[10,null]|[]|<null>");
    }
    {   /* a list of lists: [[10,11],[],null,[null]], null, [], [null] */
        static const int16_t r[] = { 0, 2, 1, 1, 1, 0, 0, 0 }, d[] = { 5, 5, 3, 2, 4, 0, 1, 2 };
        ASSEMBLES("OROR" "O", r, d, "[[10,11],[],null,[null]]|<null>|[]|[null]");
    }
    {   /* a struct in a list: optional l / repeated list / optional element struct / optional x */
        static const int16_t r[] = { 0, 1, 1 }, d[] = { 4, 2, 3 };
        ASSEMBLES("OROO", r, d, "[10,null,null]");
    }
    {   /* a list inside an optional struct: null struct, null list, [] and values */
        static const int16_t r[] = { 0, 0, 0, 0, 1 }, d[] = { 0, 1, 2, 4, 4 };
        ASSEMBLES("OORO", r, d, "<null>|<null>|[]|[10,11]");
    }
    {   /* continuing deeper than the open arrays: levels that do not assemble */
        static const int16_t r[] = { 0, 2 }, d[] = { 1, 5 };
        ASSEMBLES("OROR" "O", r, d, "<bad>");
    }
}

/* ---- crafted legacy files -------------------------------------------------- */

typedef struct craft {
    pqw_schema sch[8];
    pqw_page pages[2][2];
    pqw_buf bodies[2][2], vals[2][2];
    pqw_chunk ch[2];
    pqw_rowgroup rg;
    pqw_file f;
    pqw_buf out;
} craft;

static void craft_free(craft *c)
{
    int i, j;
    for (i = 0; i < 2; i++) for (j = 0; j < 2; j++) { pqw_free(&c->bodies[i][j]); pqw_free(&c->vals[i][j]); }
    pqw_free(&c->out);
}

/* column k: one page (or two, split after entry `split` when > 0) */
static void craft_col(craft *c, int k, const char *path, int32_t type, const uint32_t *rep, const uint32_t *def, size_t n,
                      int maxr, int maxd, const pqw_buf *values, int v2, size_t split)
{
    pqw_chunk *ch = &c->ch[k];
    int rbw = maxr > 1 ? 2 : 1, dbw = maxd > 3 ? 3 : maxd > 1 ? 2 : 1;
    memset(ch, 0, sizeof *ch);
    ch->physical = type; ch->path = path; ch->pages = c->pages[k];
    if (split) {
        /* values of the first part: the first `nv1` values of `values` (fixed width 4 only) */
        size_t i, nv1 = 0;
        for (i = 0; i < split; i++) nv1 += def[i] == (uint32_t)maxd;
        c->vals[k][0].n = 0; c->vals[k][1].n = 0;
        pqw_put(&c->vals[k][0], values->p, nv1 * 4);
        pqw_put(&c->vals[k][1], values->p + nv1 * 4, values->n - nv1 * 4);
        c->pages[k][0] = pqw_nested_page(&c->bodies[k][0], rep, def, split, rbw, dbw, &c->vals[k][0], v2);
        c->pages[k][1] = pqw_nested_page(&c->bodies[k][1], rep + split, def + split, n - split, rbw, dbw, &c->vals[k][1], v2);
        ch->npages = 2;
    } else {
        c->pages[k][0] = pqw_nested_page(&c->bodies[k][0], rep, def, n, rbw, dbw, values, v2);
        ch->npages = 1;
    }
}

static void craft_file(craft *c, int nschema, int ncols, int64_t rows)
{
    c->rg.chunks = c->ch; c->rg.nchunks = ncols; c->rg.num_rows = pqw_set(rows);
    c->f.schema = c->sch; c->f.nschema = nschema; c->f.rgs = &c->rg; c->f.nrgs = 1;
    c->out.n = 0;
    pqw_build(&c->f, &c->out);
}

static const char *g_write_dir;

static int write_file(const char *path, const pqw_buf *b)
{
    FILE *fp = fopen(path, "wb");
    int ok = fp && fwrite(b->p, 1, b->n, fp) == b->n;
    if (fp && fclose(fp)) ok = 0;
    return ok;
}

/* gpufeed-cat's output of the crafted file (also left in --write DIR) */
static void cat_is(const pqw_buf *file, const char *name, const char *want)
{
    char path[256], *got;
    FILE *o = tmpfile();
    long n;
    int rc;
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    CHECK(write_file(path, file));
    if (g_write_dir) {
        char keep[512];
        snprintf(keep, sizeof keep, "%s/%s", g_write_dir, name);
        CHECK(write_file(keep, file));
    }
    if (!o) { CHECK(o != NULL); return; }
    rc = cat_path(o, path, NULL, -1, 0);
    n = ftell(o);
    got = (char *)calloc((size_t)(n > 0 ? n : 0) + 1, 1);
    rewind(o);
    if (got && n > 0 && fread(got, 1, (size_t)n, o) != (size_t)n) got[0] = 0;
    CHECK_MSG(rc == 0, "%s: cat_path failed", name);
    CHECK_MSG(got && strcmp(got, want) == 0, "%s: got\n%s\nwant\n%s", name, got ? got : "(null)", want);
    free(got);
    fclose(o);
}

static void i32s(pqw_buf *b, const int32_t *v, size_t n) { b->n = 0; pqw_plain_i32(b, v, n); }

static void test_legacy_forms(void)
{
    int v2;
    for (v2 = 0; v2 < 2; v2++) {
        craft c;
        pqw_buf vals = {0};
        char name[64];
        memset(&c, 0, sizeof c);
        {   /* a 2-level list: optional group l (LIST) { repeated int32 element; } */
            static const uint32_t r[] = { 0, 1, 0, 0, 0 }, d[] = { 2, 2, 0, 1, 2 };
            static const int32_t v[] = { 1, 2, 3 };
            c.sch[0] = pqw_root(1);
            c.sch[1] = pqw_group("l", 1, PQW_OPTIONAL); c.sch[1].converted_type = pqw_set(3);
            c.sch[2] = pqw_leaf("element", PQW_INT32, PQW_REPEATED);
            i32s(&vals, v, 3);
            craft_col(&c, 0, "l.element", PQW_INT32, r, d, 5, 1, 2, &vals, v2, v2 ? 0 : 1);
            craft_file(&c, 3, 1, 4);
            snprintf(name, sizeof name, "legacy_two_level_list_v%d.parquet", v2 + 1);
            cat_is(&c.out, name, "\"l.element\"\n\"[1,2]\"\n\n\"[]\"\n\"[3]\"\n");
        }
        {   /* a repeated primitive without annotation: repeated int32 r */
            static const uint32_t r[] = { 0, 1, 0, 0 }, d[] = { 1, 1, 0, 1 };
            static const int32_t v[] = { 5, 6, 7 };
            c.sch[0] = pqw_root(1);
            c.sch[1] = pqw_leaf("r", PQW_INT32, PQW_REPEATED);
            i32s(&vals, v, 3);
            craft_col(&c, 0, "r", PQW_INT32, r, d, 4, 1, 1, &vals, v2, 0);
            craft_file(&c, 2, 1, 3);
            snprintf(name, sizeof name, "legacy_repeated_primitive_v%d.parquet", v2 + 1);
            cat_is(&c.out, name, "\"r\"\n\"[5,6]\"\n\"[]\"\n\"[7]\"\n");
        }
        {   /* LIST of `repeated group array { optional int32 x }`: the group is the element */
            static const uint32_t r[] = { 0, 1, 0, 0, 0 }, d[] = { 3, 2, 0, 1, 3 };
            static const int32_t v[] = { 1, 4 };
            c.sch[0] = pqw_root(1);
            c.sch[1] = pqw_group("l", 1, PQW_OPTIONAL); c.sch[1].converted_type = pqw_set(3);
            c.sch[2] = pqw_group("array", 1, PQW_REPEATED);
            c.sch[3] = pqw_leaf("x", PQW_INT32, PQW_OPTIONAL);
            i32s(&vals, v, 2);
            craft_col(&c, 0, "l.array.x", PQW_INT32, r, d, 5, 1, 3, &vals, v2, 0);
            craft_file(&c, 4, 1, 4);
            snprintf(name, sizeof name, "legacy_list_of_array_group_v%d.parquet", v2 + 1);
            cat_is(&c.out, name, "\"l.array.x\"\n\"[1,null]\"\n\n\"[]\"\n\"[4]\"\n");
        }
        {   /* a legacy map: optional group m (MAP) { repeated group map (MAP_KEY_VALUE)
               { required binary key (UTF8); optional int32 value; } } */
            static const uint32_t r[] = { 0, 1, 0, 0, 0 }, dk[] = { 2, 2, 0, 1, 2 }, dv[] = { 3, 2, 0, 1, 3 };
            static const int32_t v[] = { 1, 3 };
            static const char *const keys[] = { "a", "b", "c" };
            pqw_buf kb = {0};
            c.sch[0] = pqw_root(1);
            c.sch[1] = pqw_group("m", 1, PQW_OPTIONAL); c.sch[1].converted_type = pqw_set(1);
            c.sch[2] = pqw_group("map", 2, PQW_REPEATED); c.sch[2].converted_type = pqw_set(2);
            c.sch[3] = pqw_leaf("key", PQW_BYTE_ARRAY, PQW_REQUIRED); c.sch[3].converted_type = pqw_set(0);
            c.sch[4] = pqw_leaf("value", PQW_INT32, PQW_OPTIONAL);
            pqw_plain_str(&kb, keys, 3);
            craft_col(&c, 0, "m.map.key", PQW_BYTE_ARRAY, r, dk, 5, 1, 2, &kb, v2, 0);
            i32s(&vals, v, 2);
            craft_col(&c, 1, "m.map.value", PQW_INT32, r, dv, 5, 1, 3, &vals, v2, v2 ? 0 : 2);
            craft_file(&c, 5, 2, 4);
            snprintf(name, sizeof name, "legacy_map_key_value_v%d.parquet", v2 + 1);
            cat_is(&c.out, name, "\"m.map.key\",\"m.map.value\"\n\"[\"\"a\"\",\"\"b\"\"]\",\"[1,null]\"\n,\n\"[]\",\"[]\"\n\"[\"\"c\"\"]\",\"[3]\"\n");
            pqw_free(&kb);
        }
        {   /* a repeated group without annotation: repeated group pts { required int32 x; optional int32 y; } */
            static const uint32_t r[] = { 0, 1, 0, 0 }, dx[] = { 1, 1, 0, 1 }, dy[] = { 2, 1, 0, 2 };
            static const int32_t x[] = { 1, 2, 3 }, y[] = { 10, 30 };
            pqw_buf yb = {0};
            c.sch[0] = pqw_root(1);
            c.sch[1] = pqw_group("pts", 2, PQW_REPEATED);
            c.sch[2] = pqw_leaf("x", PQW_INT32, PQW_REQUIRED);
            c.sch[3] = pqw_leaf("y", PQW_INT32, PQW_OPTIONAL);
            i32s(&vals, x, 3);
            craft_col(&c, 0, "pts.x", PQW_INT32, r, dx, 4, 1, 1, &vals, v2, 0);
            i32s(&yb, y, 2);
            craft_col(&c, 1, "pts.y", PQW_INT32, r, dy, 4, 1, 2, &yb, v2, 0);
            craft_file(&c, 4, 2, 3);
            snprintf(name, sizeof name, "legacy_repeated_group_v%d.parquet", v2 + 1);
            cat_is(&c.out, name, "\"pts.x\",\"pts.y\"\n\"[1,2]\",\"[10,null]\"\n\"[]\",\"[]\"\n\"[3]\",\"[30]\"\n");
            pqw_free(&yb);
        }
        pqw_free(&vals);
        craft_free(&c);
    }
}

/* ---- the column reader ------------------------------------------------------ */

/* list<string> in three v1 pages, rows split across all of them: every
   max_rows gives whole rows, the same levels and the same strings (values
   of a row spanning pages are copied out of the page buffers) */
static void test_reader_batches(void)
{
    static const uint32_t r[] = { 0, 1, 1, 1, 0, 1, 0, 0, 1, 1, 1, 1, 0 };
    static const uint32_t d[] = { 3, 3, 2, 3, 3, 3, 0, 3, 3, 3, 2, 3, 3 };
    static const char *const s[] = { "alpha", "", "gamma", "delta", "epsilon", "z1", "z2", "z3", "z4", "last" };
    static const size_t cut[] = { 0, 3, 9, 13 };
    craft c;
    pqw_buf vb[3] = { {0}, {0}, {0} };
    pqw_page pg[3];
    pqw_buf bodies[3] = { {0}, {0}, {0} };
    char path[256];
    int p, mr, ok;
    size_t vi = 0;
    memset(&c, 0, sizeof c);
    c.sch[0] = pqw_root(1);
    c.sch[1] = pqw_group("l", 1, PQW_OPTIONAL); c.sch[1].converted_type = pqw_set(3);
    c.sch[2] = pqw_group("list", 1, PQW_REPEATED);
    c.sch[3] = pqw_leaf("element", PQW_BYTE_ARRAY, PQW_OPTIONAL); c.sch[3].converted_type = pqw_set(0);
    for (p = 0; p < 3; p++) {
        size_t i;
        for (i = cut[p]; i < cut[p + 1]; i++) if (d[i] == 3) { pqw_plain_ba1(&vb[p], s[vi], strlen(s[vi])); vi++; }
        pg[p] = pqw_nested_page(&bodies[p], r + cut[p], d + cut[p], cut[p + 1] - cut[p], 1, 2, &vb[p], 0);
    }
    memset(&c.ch[0], 0, sizeof c.ch[0]);
    c.ch[0].physical = PQW_BYTE_ARRAY; c.ch[0].path = "l.list.element"; c.ch[0].pages = pg; c.ch[0].npages = 3;
    c.ch[0].codec = PQW_UNCOMPRESSED;
    craft_file(&c, 4, 1, 5);
    snprintf(path, sizeof path, "%s/batches.parquet", g_dir);
    CHECK(write_file(path, &c.out));
    for (mr = 1; mr <= 6; mr++) {
        gpufeed_file_desc od;
        gpufeed_file *f = NULL;
        gpufeed_column *col = NULL;
        gpufeed_column_desc cd;
        gpufeed_column_batch b;
        gpufeed_error err;
        int64_t rows = 0, lev = 0, nv = 0, i;
        memset(&od, 0, sizeof od); od.path = path;
        memset(&cd, 0, sizeof cd); cd.max_rows = mr;
        if (gpufeed_file_open(&f, &od, &err) || gpufeed_column_open(&col, f, 0, 0, &cd, &err)) { CHECK_MSG(0, "%s", err.message); gpufeed_file_close(f); break; }
        ok = 1;
        while (gpufeed_column_read(col, &b) == GPUFEED_OK) {
            if (b.first_row != rows || b.num_rows > mr || b.rep_levels[0] != 0) ok = 0;
            for (i = 0; i < b.num_levels; i++) if (b.rep_levels[i] != (int16_t)r[lev + i] || b.def_levels[i] != (int16_t)d[lev + i]) ok = 0;
            for (i = 0; i < b.num_values; i++) {
                gpufeed_bytes v = ((const gpufeed_bytes *)b.values)[i];
                if (v.len != strlen(s[nv + i]) || (v.len && memcmp(v.ptr, s[nv + i], v.len))) ok = 0;
            }
            rows += b.num_rows; lev += b.num_levels; nv += b.num_values;
        }
        CHECK_MSG(ok && rows == 5 && lev == 13 && nv == 10 && !gpufeed_column_error(col)[0], "max_rows %d: %lld rows, %lld levels, %lld values: %s", mr,
                  (long long)rows, (long long)lev, (long long)nv, gpufeed_column_error(col));
        gpufeed_column_close(col);
        gpufeed_file_close(f);
    }
    for (p = 0; p < 3; p++) { pqw_free(&vb[p]); pqw_free(&bodies[p]); }
    craft_free(&c);
}

/* ---- dense list features ------------------------------------------------------ */

/* id: required int32 0..5; l: list<int32> with rows [1,2,3] [4,5] null []
   [6,null,7,8] [9,10,11], split into two pages inside row 1 (page 2 starts
   with a continuation), or at the row-3 boundary with aligned = 1. With
   oi_row >= 0, an offset index for l says page 2 starts at row oi_row. */
typedef struct oi_ctx { int64_t off, len; } oi_ctx;
static void oi_hook(pqw_tc *t, void *ctx)
{
    const oi_ctx *o = (const oi_ctx *)ctx;
    pqw_tc_i64(t, 4, o->off);   /* ColumnChunk.offset_index_offset */
    pqw_tc_i32(t, 5, o->len);   /* ColumnChunk.offset_index_length */
}
static void dense_file(craft *c, const char *name, int aligned, int64_t oi_row, char *path, size_t cap)
{
    static const uint32_t r[] = { 0, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 0, 1, 1 };
    static const uint32_t d[] = { 3, 3, 3, 3, 3, 0, 1, 3, 2, 3, 3, 3, 3, 3 };
    static const int32_t v[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 };
    static const int32_t ids[] = { 0, 1, 2, 3, 4, 5 };
    static oi_ctx ctx;
    pqw_buf vals = {0}, ib = {0}, oi = {0};
    memset(c, 0, sizeof *c);
    c->sch[0] = pqw_root(2);
    c->sch[1] = pqw_leaf("id", PQW_INT32, PQW_REQUIRED);
    c->sch[2] = pqw_group("l", 1, PQW_OPTIONAL); c->sch[2].converted_type = pqw_set(3);
    c->sch[3] = pqw_group("list", 1, PQW_REPEATED);
    c->sch[4] = pqw_leaf("element", PQW_INT32, PQW_OPTIONAL);
    pqw_plain_i32(&c->bodies[0][0], ids, 6);
    memset(&c->ch[0], 0, sizeof c->ch[0]);
    c->pages[0][0] = pqw_data_page(&c->bodies[0][0], 6, PQW_PLAIN);
    c->ch[0].physical = PQW_INT32; c->ch[0].path = "id"; c->ch[0].pages = c->pages[0]; c->ch[0].npages = 1;
    pqw_plain_i32(&vals, v, 11);
    craft_col(c, 1, "l.list.element", PQW_INT32, r, d, 14, 1, 3, &vals, 0, aligned ? 6 : 4);
    craft_file(c, 5, 2, 6);
    if (oi_row >= 0) {
        /* OffsetIndex { 1: list<PageLocation { 1: offset, 2: compressed_page_size, 3: first_row_index }> },
           placed after the file's last chunk (the walk never gets there) */
        static pqw_page more[3];
        pqw_tc t;
        int k;
        pqw_tc_init(&t, &oi);
        pqw_tc_begin(&t);
        pqw_tc_list(&t, 1, PQW_T_STRUCT, 2);
        for (k = 0; k < 2; k++) {
            pqw_tc_begin(&t);
            pqw_tc_i64(&t, 1, c->pages[1][k].at);
            pqw_tc_i32(&t, 2, c->pages[1][k].header_len + (int64_t)c->pages[1][k].body_len);
            pqw_tc_i64(&t, 3, k ? oi_row : 0);
            pqw_tc_end(&t);
        }
        pqw_tc_end(&t);
        more[0] = c->pages[1][0]; more[1] = c->pages[1][1];
        memset(&more[2], 0, sizeof more[2]);
        more[2].type = PQW_INDEX_PAGE; more[2].header_raw = oi.p; more[2].header_raw_len = oi.n;
        c->ch[1].pages = more; c->ch[1].npages = 3;
        ctx.off = c->ch[1].end; ctx.len = (int64_t)oi.n;
        c->ch[1].extra_chunk.fn = oi_hook; c->ch[1].extra_chunk.ctx = &ctx;
        craft_file(c, 5, 2, 6);
    }
    snprintf(path, cap, "%s/%s", g_dir, name);
    CHECK(write_file(path, &c->out));
    pqw_free(&vals); pqw_free(&ib); pqw_free(&oi);
}

typedef struct dense_out {
    gpufeed_result r;
    char msg[GPUFEED_ERROR_MAX];
    int64_t rows;
    float data[64];
    void *feat[4];
    float f0[16]; float f1[64]; int32_t f2[16];
    uint8_t valid[4][16];
} dense_out;

/* reads the whole dataset into o (row-major data, or per-feature into f0/f1/f2) */
static void dense_read(const char *path, const gpufeed_feature *ft, int nf, int layout, int64_t unit_rows, dense_out *o)
{
    gpufeed_dataset_desc dd;
    gpufeed_dataset *ds = NULL;
    gpufeed_reader *rd = NULL;
    gpufeed_reader_desc rdd;
    gpufeed_error err;
    gpufeed_batch b;
    const char *paths[1];
    int j;
    memset(o, 0, sizeof *o);
    paths[0] = path;
    memset(&dd, 0, sizeof dd);
    dd.paths = paths; dd.num_paths = 1; dd.features = ft; dd.num_features = nf; dd.layout = layout; dd.unit_rows = unit_rows;
    o->r = gpufeed_dataset_open(&ds, &dd, &err);
    if (o->r) { snprintf(o->msg, sizeof o->msg, "%s", err.message); return; }
    memset(&rdd, 0, sizeof rdd); rdd.batch_rows = 16;
    o->r = gpufeed_reader_open(&rd, ds, &rdd, &err);
    if (o->r) { snprintf(o->msg, sizeof o->msg, "%s", err.message); gpufeed_dataset_close(ds); return; }
    while ((o->r = gpufeed_reader_next(rd, &b)) == GPUFEED_OK) {
        if (layout == GPUFEED_LAYOUT_ROW_MAJOR) memcpy((uint8_t *)o->data + o->rows * b.row_bytes, b.data, (size_t)(b.num_rows * b.row_bytes));
        else {
            void *dst[3];
            dst[0] = o->f0; dst[1] = o->f1; dst[2] = o->f2;
            for (j = 0; j < nf && j < 3; j++) {
                size_t z = gpufeed_feature_bytes(&ft[j]);
                memcpy((uint8_t *)dst[j] + (size_t)o->rows * z, b.features[j], (size_t)b.num_rows * z);
            }
        }
        for (j = 0; j < nf && j < 4; j++) if (b.valid[j]) memcpy(o->valid[j] + o->rows, b.valid[j], (size_t)b.num_rows);
        o->rows += b.num_rows;
    }
    if (o->r == GPUFEED_DONE) o->r = GPUFEED_OK;
    else snprintf(o->msg, sizeof o->msg, "%s", gpufeed_reader_error(rd));
    gpufeed_reader_close(rd);
    gpufeed_dataset_close(ds);
}

static int floats_are(const float *got, const float *want, int n)
{
    int i;
    for (i = 0; i < n; i++) if (!(got[i] == want[i] || (got[i] != got[i] && want[i] != want[i]))) {
        fprintf(stderr, "  element %d: got %g, want %g\n", i, got[i], want[i]);
        return 0;
    }
    return 1;
}

static void test_dense_lists(void)
{
    craft c;
    char path[256];
    gpufeed_feature ft[3];
    dense_out o;
    int aligned;
    for (aligned = 0; aligned < 2; aligned++) {
        dense_file(&c, aligned ? "dense_aligned.parquet" : "dense_split.parquet", aligned, -1, path, sizeof path);
        memset(ft, 0, sizeof ft);
        ft[0].column = "id"; ft[0].dtype = GPUFEED_DT_F32;
        ft[1].column = "l.list.element"; ft[1].dtype = GPUFEED_DT_F32; ft[1].width = 3; ft[1].fill = -1; ft[1].validity = 1;
        ft[1].list_policy = GPUFEED_LIST_TRUNCATE;
        ft[2].column = "l.list.element"; ft[2].dtype = GPUFEED_DT_F32; ft[2].list_lengths = 1; ft[2].fill = -1; ft[2].validity = 1;
        {   /* row-major: id, 3 elements, length */
            static const float want[] = { 0, 1, 2, 3, 3,   1, 4, 5, -1, 2,   2, -1, -1, -1, -1,   3, -1, -1, -1, 0,
                                          4, 6, -1, 7, 4,   5, 9, 10, 11, 3 };
            static const uint8_t vl[] = { 1, 1, 0, 1, 1, 1 };
            int64_t ur;
            for (ur = 1; ur <= 6; ur += 5) {
                dense_read(path, ft, 3, GPUFEED_LAYOUT_ROW_MAJOR, ur, &o);
                CHECK_MSG(o.r == GPUFEED_OK && o.rows == 6, "%s", o.msg);
                CHECK(floats_are(o.data, want, 30));
                CHECK(memcmp(o.valid[1], vl, 6) == 0 && memcmp(o.valid[2], vl, 6) == 0);
            }
        }
        {   /* per-feature: [6] ids, [6, 3] elements, [6] lengths as i32 */
            static const float want1[] = { 1, 2, 3, 4, 5, 0, 0, 0, 0, 0, 0, 0, 6, 0, 7, 9, 10, 11 };
            static const int32_t want2[] = { 3, 2, 0, 0, 4, 3 };
            ft[1].fill = 0; ft[2].fill = 0; ft[2].dtype = GPUFEED_DT_I32;
            dense_read(path, ft, 3, GPUFEED_LAYOUT_PER_FEATURE, 0, &o);
            CHECK_MSG(o.r == GPUFEED_OK && o.rows == 6, "%s", o.msg);
            CHECK(floats_are(o.f1, want1, 18));
            CHECK(memcmp(o.f2, want2, sizeof want2) == 0);
            CHECK(gpufeed_feature_bytes(&ft[1]) == 12 && gpufeed_feature_bytes(&ft[2]) == 4);
            ft[2].dtype = GPUFEED_DT_F32; ft[1].fill = -1; ft[2].fill = -1;
        }
        /* list policies and null policies */
        ft[1].list_policy = GPUFEED_LIST_ERROR;
        dense_read(path, ft, 2, GPUFEED_LAYOUT_ROW_MAJOR, 0, &o);
        CHECK(o.r == GPUFEED_ERR_CORRUPT);
        CHECK_HAS(o.msg, "feature 'l.list.element'"); CHECK_HAS(o.msg, "row group 0"); CHECK_HAS(o.msg, "column 'l.list.element'");
        CHECK_HAS(o.msg, "the list at row 1 has 2 elements, the feature's width is 3 (list policy: error)");
        ft[1].list_policy = GPUFEED_LIST_PAD;
        dense_read(path, ft, 2, GPUFEED_LAYOUT_ROW_MAJOR, 0, &o);
        CHECK(o.r == GPUFEED_ERR_CORRUPT); CHECK_HAS(o.msg, "the list at row 4 has 4 elements, the feature's width is 3 (list policy: pad)");
        ft[1].list_policy = GPUFEED_LIST_TRUNCATE; ft[1].null_policy = GPUFEED_NULL_ERROR;
        dense_read(path, ft, 2, GPUFEED_LAYOUT_ROW_MAJOR, 0, &o);
        CHECK(o.r == GPUFEED_ERR_CORRUPT); CHECK_HAS(o.msg, "null list at row 2 (null policy: error)");
        ft[2].null_policy = GPUFEED_NULL_ERROR;
        dense_read(path, &ft[2], 1, GPUFEED_LAYOUT_ROW_MAJOR, 0, &o);
        CHECK(o.r == GPUFEED_ERR_CORRUPT); CHECK_HAS(o.msg, "null list at row 2");
        ft[2].null_policy = GPUFEED_NULL_FILL;
        ft[1].width = 4; ft[1].list_policy = GPUFEED_LIST_PAD;
        {   /* rows 0..5 of width 4 padded; the null list errors first: select rows without it */
            gpufeed_feature one = ft[1];
            one.null_policy = GPUFEED_NULL_FILL;
            dense_read(path, &one, 1, GPUFEED_LAYOUT_ROW_MAJOR, 0, &o);
            CHECK_MSG(o.r == GPUFEED_OK, "%s", o.msg);
            one.null_policy = GPUFEED_NULL_ERROR;
            dense_read(path, &one, 1, GPUFEED_LAYOUT_ROW_MAJOR, 0, &o);
            CHECK(o.r == GPUFEED_ERR_CORRUPT); CHECK_HAS(o.msg, "null list at row 2");
        }
        craft_free(&c);
    }
    {   /* null elements under NULL_ERROR */
        dense_file(&c, "dense_nulls.parquet", 1, -1, path, sizeof path);
        memset(ft, 0, sizeof ft);
        ft[0].column = "l.list.element"; ft[0].width = 5; ft[0].list_policy = GPUFEED_LIST_PAD; ft[0].null_policy = GPUFEED_NULL_ERROR;
        dense_read(path, ft, 1, GPUFEED_LAYOUT_ROW_MAJOR, 0, &o);
        CHECK(o.r == GPUFEED_ERR_CORRUPT); CHECK_HAS(o.msg, "null list at row 2");
        craft_free(&c);
    }
    /* refused specs */
    {
        static const struct { int width, policy, lengths; const char *col; gpufeed_result r; const char *needle; } bad[] = {
            { 0, 0, 0, "l.list.element", GPUFEED_ERR_SCHEMA, "set the feature's width" },
            { 3, 0, 0, "id", GPUFEED_ERR_SCHEMA, "is not a list" },
            { 0, 0, 1, "id", GPUFEED_ERR_SCHEMA, "is not a list" },
            { -1, 0, 0, "l.list.element", GPUFEED_ERR_INVALID_ARG, "width -1" },
            { 3, 7, 0, "l.list.element", GPUFEED_ERR_INVALID_ARG, "unknown list policy 7" },
            { 3, 0, 1, "l.list.element", GPUFEED_ERR_INVALID_ARG, "leave width 0" },
        };
        size_t k;
        dense_file(&c, "dense_refused.parquet", 1, -1, path, sizeof path);
        for (k = 0; k < sizeof bad / sizeof bad[0]; k++) {
            memset(ft, 0, sizeof ft);
            ft[0].column = bad[k].col; ft[0].width = bad[k].width; ft[0].list_policy = bad[k].policy; ft[0].list_lengths = bad[k].lengths;
            dense_read(path, ft, 1, GPUFEED_LAYOUT_ROW_MAJOR, 0, &o);
            CHECK_MSG(o.r == bad[k].r, "case %d: %d %s", (int)k, o.r, o.msg);
            CHECK_HAS(o.msg, bad[k].needle);
        }
        {   /* a predicate on a list column */
            gpufeed_dataset_desc dd;
            gpufeed_dataset *ds = NULL;
            gpufeed_predicate pr;
            gpufeed_error err;
            const char *paths[1];
            paths[0] = path;
            memset(ft, 0, sizeof ft); memset(&pr, 0, sizeof pr); memset(&dd, 0, sizeof dd);
            ft[0].column = "id";
            pr.column = "l.list.element"; pr.op = GPUFEED_OP_GT; pr.a.kind = GPUFEED_VAL_INT; pr.a.i = 3;
            dd.paths = paths; dd.num_paths = 1; dd.features = ft; dd.num_features = 1; dd.where = &pr; dd.num_where = 1;
            CHECK(gpufeed_dataset_open(&ds, &dd, &err) == GPUFEED_ERR_SCHEMA);
            CHECK_HAS(err.message, "predicates on list columns are not supported");
            gpufeed_dataset_close(ds);
        }
        craft_free(&c);
    }
}

/* a unit that starts inside the row group, decoded by a fresh scratch:
   the reader seeks to the page the offset index names */
static void test_dense_seek(void)
{
    craft c;
    char path[256];
    int aligned;
    for (aligned = 0; aligned < 2; aligned++) {
        gpufeed_feature ft[2];
        gpufeed_dataset_desc dd;
        gpufeed_dataset *ds = NULL;
        gpufeed_scratch *sc = NULL;
        gpufeed_error err;
        gpufeed_dataset_info info;
        const char *paths[1];
        float data[6 * 4];
        int64_t n = 0;
        gpufeed_result r;
        dense_file(&c, aligned ? "seek_aligned.parquet" : "seek_lying.parquet", aligned, 3, path, sizeof path);
        paths[0] = path;
        memset(ft, 0, sizeof ft); memset(&dd, 0, sizeof dd);
        ft[0].column = "id";
        ft[1].column = "l.list.element"; ft[1].width = 3; ft[1].fill = -1; ft[1].list_policy = GPUFEED_LIST_TRUNCATE;
        dd.paths = paths; dd.num_paths = 1; dd.features = ft; dd.num_features = 2; dd.unit_rows = 3;
        r = gpufeed_dataset_open(&ds, &dd, &err);
        CHECK_MSG(r == GPUFEED_OK, "%s", err.message);
        if (r) { craft_free(&c); continue; }
        gpufeed_dataset_get_info(ds, &info);
        CHECK_MSG(info.num_units == 2, "%lld units", (long long)info.num_units);
        CHECK(gpufeed_scratch_open(&sc, ds, NULL) == GPUFEED_OK);
        r = gpufeed_dataset_decode_unit(ds, sc, 1, data, NULL, NULL, &n);
        if (aligned) {
            static const float want[] = { 3, -1, -1, -1,   4, 6, -1, 7,   5, 9, 10, 11 };
            CHECK_MSG(r == GPUFEED_OK && n == 3, "%s", gpufeed_scratch_error(sc));
            CHECK(floats_are(data, want, 12));
        } else {
            CHECK(r == GPUFEED_ERR_CORRUPT);
            CHECK_HAS(gpufeed_scratch_error(sc), "column 'l.list.element'");
            CHECK_HAS(gpufeed_scratch_error(sc), "page 1");
            CHECK_HAS(gpufeed_scratch_error(sc), "repetition level 1 where a row must start (the first entry of a page found through the page index)");
        }
        gpufeed_scratch_close(sc);
        gpufeed_dataset_close(ds);
        craft_free(&c);
    }
}

/* the parallel loader (2 workers, every unit order, a RAM cache in epoch
   1) with list features gives the reader's rows: W-wide features travel
   through slots, row copies, shuffles and the cache like any other */
static void test_dense_loader(void)
{
    craft c;
    char path[256];
    int layout;
    dense_file(&c, "loader.parquet", 0, -1, path, sizeof path);
    for (layout = 0; layout < 2; layout++) {
        gpufeed_feature ft[3];
        gpufeed_dataset_desc dd;
        gpufeed_dataset *ds = NULL;
        gpufeed_error err;
        gpufeed_loader *l = NULL;
        gpufeed_loader_desc ld;
        gpufeed_cache_desc cd;
        gpufeed_batch b;
        dense_out ref;
        const char *paths[1];
        float got[2][64];
        int32_t glen[2][16];
        float gel[2][64];
        uint8_t gval[2][16];
        int64_t rows[2] = { 0, 0 };
        int e;
        memset(ft, 0, sizeof ft);
        ft[0].column = "id";
        ft[1].column = "l.list.element"; ft[1].width = 3; ft[1].fill = -1; ft[1].list_policy = GPUFEED_LIST_TRUNCATE; ft[1].validity = 1;
        ft[2].column = "l.list.element"; ft[2].list_lengths = 1; ft[2].fill = -1; ft[2].dtype = GPUFEED_DT_I32;
        dense_read(path, ft, 3, layout, 2, &ref);
        CHECK_MSG(ref.r == GPUFEED_OK && ref.rows == 6, "%s", ref.msg);
        paths[0] = path;
        memset(&dd, 0, sizeof dd);
        dd.paths = paths; dd.num_paths = 1; dd.features = ft; dd.num_features = 3; dd.layout = layout; dd.unit_rows = 2;
        if (gpufeed_dataset_open(&ds, &dd, &err)) { CHECK_MSG(0, "%s", err.message); continue; }
        memset(&ld, 0, sizeof ld); memset(&cd, 0, sizeof cd);
        cd.ram_bytes = 1 << 20;
        ld.batch_rows = 4; ld.workers = 2; ld.epochs = 2; ld.no_unit_shuffle = 1; ld.cache = &cd;
        if (gpufeed_loader_open(&l, ds, &ld, &err)) { CHECK_MSG(0, "%s", err.message); gpufeed_dataset_close(ds); continue; }
        memset(got, 0, sizeof got); memset(glen, 0, sizeof glen); memset(gel, 0, sizeof gel);
        while (gpufeed_loader_next(l, &b) == GPUFEED_OK) {
            int64_t i;
            e = (int)b.epoch;
            if (e < 0 || e > 1 || rows[e] + b.num_rows > 6) { CHECK(0); break; }
            if (layout == GPUFEED_LAYOUT_ROW_MAJOR) {
                CHECK(b.row_bytes == 4 + 12 + 4);
                for (i = 0; i < b.num_rows; i++) {
                    memcpy(&got[e][(rows[e] + i) * 5], (const uint8_t *)b.data + i * b.row_bytes, 16);
                    memcpy(&glen[e][rows[e] + i], (const uint8_t *)b.data + i * b.row_bytes + 16, 4);
                }
            } else {
                memcpy(&gel[e][rows[e] * 3], b.features[1], (size_t)b.num_rows * 12);
                memcpy(&glen[e][rows[e]], b.features[2], (size_t)b.num_rows * 4);
            }
            memcpy(&gval[e][rows[e]], b.valid[1], (size_t)b.num_rows);
            rows[e] += b.num_rows;
        }
        CHECK_MSG(rows[0] == 6 && rows[1] == 6, "%lld / %lld rows: %s", (long long)rows[0], (long long)rows[1], gpufeed_loader_error(l));
        for (e = 0; e < 2; e++) {
            int64_t i;
            for (i = 0; i < 6; i++) {
                int32_t want_len;
                if (layout == GPUFEED_LAYOUT_ROW_MAJOR) {
                    const uint8_t *row = (const uint8_t *)ref.data + i * 20;
                    CHECK(memcmp(&got[e][i * 5], row, 16) == 0);
                    memcpy(&want_len, row + 16, 4);
                } else {
                    CHECK(memcmp(&gel[e][i * 3], &ref.f1[i * 3], 12) == 0);
                    want_len = ref.f2[i];
                }
                CHECK_MSG(glen[e][i] == want_len, "epoch %d row %lld: length %d, want %d", e, (long long)i, glen[e][i], want_len);
                CHECK(gval[e][i] == ref.valid[1][i]);
            }
        }
        gpufeed_loader_close(l);
        gpufeed_dataset_close(ds);
    }
    craft_free(&c);
}

/* DLPack views (issue 19): every dtype's code and bits, a list feature as a
   2-D tensor (shape rows x width, row stride width in the per-feature
   layout, the row's elements in the row-major one) whose elements are the
   batch's, a one-column feature as 1-D. Host batches (the uploader's
   fallback). */
static void test_dlpack_dtypes_and_lists(void)
{
    static const gpufeed_dtype dts[7] = { GPUFEED_DT_F32, GPUFEED_DT_F64, GPUFEED_DT_F16, GPUFEED_DT_BF16, GPUFEED_DT_I32, GPUFEED_DT_I64, GPUFEED_DT_U8 };
    static const int codes[7] = { GPUFEED_DL_FLOAT, GPUFEED_DL_FLOAT, GPUFEED_DL_FLOAT, GPUFEED_DL_BFLOAT, GPUFEED_DL_INT, GPUFEED_DL_INT, GPUFEED_DL_UINT };
    static const int bits[7] = { 32, 64, 16, 16, 32, 64, 8 };
    craft c;
    char path[256];
    int layout;
    dense_file(&c, "dlpack.parquet", 0, -1, path, sizeof path);
    for (layout = 0; layout < 2; layout++) {
        gpufeed_feature ft[8];
        gpufeed_dataset_desc dd;
        gpufeed_loader_desc ld;
        gpufeed_uploader_desc dv;
        gpufeed_dataset *ds = NULL;
        gpufeed_loader *l = NULL;
        gpufeed_uploader *u = NULL;
        gpufeed_device_batch b;
        gpufeed_error err;
        const char *paths[1];
        int nf = layout == GPUFEED_LAYOUT_PER_FEATURE ? 8 : 2, j, lf = nf - 1;
        memset(ft, 0, sizeof ft);
        for (j = 0; j < nf - 1; j++) { ft[j].column = "id"; ft[j].dtype = layout == GPUFEED_LAYOUT_PER_FEATURE ? dts[j] : GPUFEED_DT_F32; }
        ft[lf].column = "l.list.element"; ft[lf].dtype = GPUFEED_DT_F32; ft[lf].width = 3; ft[lf].fill = -1; ft[lf].list_policy = GPUFEED_LIST_TRUNCATE;
        paths[0] = path;
        memset(&dd, 0, sizeof dd);
        dd.paths = paths; dd.num_paths = 1; dd.features = ft; dd.num_features = nf; dd.layout = layout;
        memset(&ld, 0, sizeof ld);
        ld.batch_rows = 6; ld.workers = 1; ld.epochs = 1; ld.no_unit_shuffle = 1;
        memset(&dv, 0, sizeof dv);
        dv.host_fallback = 1; dv.slots = 2;
        if (gpufeed_dataset_open(&ds, &dd, &err) || gpufeed_loader_open(&l, ds, &ld, &err) || gpufeed_uploader_open(&u, l, &dv, &err)) {
            CHECK_MSG(0, "%s", err.message);
            if (l) gpufeed_loader_close(l);
            if (ds) gpufeed_dataset_close(ds);
            continue;
        }
        CHECK(gpufeed_uploader_next(u, &b) == GPUFEED_OK && b.host.num_rows == 6);
        for (j = 0; j < nf; j++) {
            gpufeed_dl_managed *t = NULL;
            const gpufeed_dl_tensor *x;
            int64_t i, w = j == lf ? 3 : 1, bad = 0;
            if (gpufeed_batch_dlpack(u, &b, j, 0, NULL, 0, (void **)&t) != GPUFEED_OK || !t) { CHECK_MSG(0, "layout %d feature %d: %s", layout, j, gpufeed_uploader_error(u)); continue; }
            x = &t->dl_tensor;
            if (j < 7 && layout == GPUFEED_LAYOUT_PER_FEATURE)
                CHECK_MSG(x->dtype.code == codes[j] && x->dtype.bits == bits[j] && x->dtype.lanes == 1, "%s: code %d bits %d, want %d %d",
                          gpufeed_dtype_name(dts[j]), x->dtype.code, x->dtype.bits, codes[j], bits[j]);
            CHECK_MSG(x->ndim == (w > 1 ? 2 : 1) && x->shape[0] == 6 && (w == 1 || x->shape[1] == w), "layout %d feature %d: ndim %d", layout, j, x->ndim);
            if (layout == GPUFEED_LAYOUT_PER_FEATURE) CHECK_MSG(x->strides[0] == w && (w == 1 || x->strides[1] == 1), "feature %d: row stride %lld, want %lld", j, (long long)x->strides[0], (long long)w);
            else CHECK(x->strides[0] == b.host.row_bytes / 4 && (w == 1 || x->strides[1] == 1));
            if (x->dtype.code == GPUFEED_DL_FLOAT && x->dtype.bits == 32) {
                for (i = 0; i < 6; i++) {
                    int64_t e;
                    for (e = 0; e < w; e++) {
                        float want, got;
                        const char *src = layout == GPUFEED_LAYOUT_PER_FEATURE ? (const char *)b.host.features[j] + (size_t)(i * w + e) * 4
                                                                             : (const char *)b.host.data + (size_t)i * (size_t)b.host.row_bytes + (size_t)b.host.feature_offset[j] + (size_t)e * 4;
                        memcpy(&want, src, 4);
                        memcpy(&got, (const char *)x->data + x->byte_offset + (size_t)(i * x->strides[0] + e * (w > 1 ? x->strides[1] : 0)) * 4, 4);
                        if (want != got) bad++;
                    }
                }
                CHECK_MSG(bad == 0, "layout %d feature %d: %lld elements differ from the batch", layout, j, (long long)bad);
            }
            t->deleter(t);
        }
        CHECK(gpufeed_uploader_release(u, &b, NULL) == GPUFEED_OK);
        gpufeed_uploader_close(u);
        gpufeed_loader_close(l);
        gpufeed_dataset_close(ds);
    }
    craft_free(&c);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--write")) {
        g_write_dir = argv[2];
        if (mkdir(g_write_dir, 0777) != 0 && errno != EEXIST) { fprintf(stderr, "test_nested: cannot make %s\n", g_write_dir); return 1; }
    }
    snprintf(g_dir, sizeof g_dir, "build/test-nested.XXXXXX");
    if (!mkdtemp(g_dir)) { fprintf(stderr, "test_nested: cannot make a directory under build/ (run from the repository root)\n"); return 1; }
    RUN(test_assembly);
    RUN(test_legacy_forms);
    RUN(test_reader_batches);
    RUN(test_dense_lists);
    RUN(test_dense_seek);
    RUN(test_dense_loader);
    RUN(test_dlpack_dtypes_and_lists);
    {   /* remove the directory and its files */
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
        if (system(cmd) != 0) fprintf(stderr, "test_nested: could not remove %s\n", g_dir);
    }
    return TEST_SUMMARY();
}
