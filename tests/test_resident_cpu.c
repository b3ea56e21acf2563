/* The device-resident mode's plan, checked on the CPU: an index loader over
   the same units (as gpufeed_uploader_open builds it) yields row ids; rows
   gathered on the host from a copy of every unit in canonical order must
   give exactly the real loader's batches (hashes), for shuffles, windows,
   shards with padding and predicates. Only the CUDA gather kernel itself is
   left for the GPU test (tests/test_gpu.cu).
   Build: cc -O2 -std=c99 -I. tests/test_resident_cpu.c -o test_resident_cpu -lpthread -lm */
#define GPUFEED_IMPLEMENTATION
#include "../gpufeed.h"
#include "gf_test.h"
#include <stdlib.h>

static int check_plan(int world, int rank, int even, int window, uint64_t seed, int with_where)
{
    const char *paths[1] = { "tests/data/ids.parquet" };
    gpufeed_feature ft[3];
    gpufeed_predicate pr;
    gpufeed_dataset_desc dd;
    gpufeed_loader_desc ld;
    gpufeed_dataset *ds = NULL, ids;
    gpufeed_feature idf;
    int64_t idoff = 0, u, base = 0, total = 0, nb = 0;
    gpufeed_loader *l = NULL, *il = NULL;
    gpufeed_scratch *sc = NULL;
    gpufeed_error err;
    uint8_t *rows = NULL, *masks = NULL, *tmp = NULL, *tmask = NULL;
    int bad = 0;
    memset(ft, 0, sizeof ft); memset(&dd, 0, sizeof dd); memset(&ld, 0, sizeof ld); memset(&pr, 0, sizeof pr);
    ft[0].column = "id"; ft[0].dtype = GPUFEED_DT_I64;
    ft[1].column = "x"; ft[1].dtype = GPUFEED_DT_F32;
    ft[2].column = "y"; ft[2].dtype = GPUFEED_DT_F64; ft[2].validity = 1;
    pr.column = "k"; pr.op = GPUFEED_OP_LT; pr.a.kind = GPUFEED_VAL_INT; pr.a.i = 60;
    dd.paths = paths; dd.num_paths = 1; dd.features = ft; dd.num_features = 3; dd.unit_rows = 900;
    if (with_where) { dd.where = &pr; dd.num_where = 1; }
    if (gpufeed_dataset_open(&ds, &dd, &err)) { fprintf(stderr, "%s\n", err.message); return 1; }
    ld.batch_rows = 500; ld.workers = 2; ld.seed = seed; ld.shuffle_window = window; ld.epochs = 3;
    ld.rank = rank; ld.world = world; ld.even = even;
    if (gpufeed_loader_open(&l, ds, &ld, &err)) { fprintf(stderr, "%s\n", err.message); gpufeed_dataset_close(ds); return 1; }
    /* the index plan, exactly as gf__resident_setup builds it */
    ids = *ds;
    memset(&idf, 0, sizeof idf); idf.column = "row id"; idf.dtype = GPUFEED_DT_I64;
    ids.feats = &idf; ids.nfeat = 1; ids.offs = &idoff; ids.row_bytes = 8;
    ids.layout = GPUFEED_LAYOUT_ROW_MAJOR; ids.npred = 0; ids.preds = NULL;
    {
        gpufeed_loader_desc il_d = ld;
        il_d.workers = 1;
        if (gf__loader_open_ex(&il, &ids, &il_d, &err, l->unit_rows)) { fprintf(stderr, "%s\n", err.message); bad++; goto done; }
    }
    /* every unit once, canonical order: the "resident" copy */
    for (u = 0; u < l->U; u++) total += l->unit_rows[u];
    rows = (uint8_t *)malloc((size_t)(total + 1) * (size_t)ds->row_bytes);
    masks = (uint8_t *)malloc((size_t)total + 1);
    tmp = (uint8_t *)malloc((size_t)ld.batch_rows * (size_t)ds->row_bytes);
    tmask = (uint8_t *)malloc((size_t)ld.batch_rows);
    if (!rows || !masks || !tmp || !tmask || gpufeed_scratch_open(&sc, ds, NULL)) { bad++; goto done; }
    for (u = 0; u < l->U; u++) { /* decode needs room for the unit's planned rows, then copy the kept ones */
        int64_t n = 0, cap = ds->units[u].u.num_rows;
        uint8_t *valid[3], *ud = (uint8_t *)malloc((size_t)(cap + 1) * (size_t)ds->row_bytes), *um = (uint8_t *)malloc((size_t)cap + 1);
        valid[0] = NULL; valid[1] = NULL; valid[2] = um;
        if (!ud || !um || gpufeed_dataset_decode_unit(ds, sc, u, ud, NULL, valid, &n) || n != l->unit_rows[u]) { free(ud); free(um); bad++; goto done; }
        memcpy(rows + (size_t)base * (size_t)ds->row_bytes, ud, (size_t)n * (size_t)ds->row_bytes);
        memcpy(masks + base, um, (size_t)n);
        free(ud); free(um);
        base += n;
    }
    for (;;) {
        gpufeed_batch rb, ib;
        gpufeed_result r1 = gpufeed_loader_next(l, &rb), r2 = gpufeed_loader_next(il, &ib);
        uint8_t *v[3];
        gpufeed_batch g;
        int64_t i;
        if (r1 != r2) { bad++; fprintf(stderr, "  results differ: %d vs %d\n", (int)r1, (int)r2); break; }
        if (r1) break;
        if (rb.num_rows != ib.num_rows || rb.epoch != ib.epoch || rb.index != ib.index) { bad++; break; }
        for (i = 0; i < ib.num_rows; i++) { /* the gather */
            int64_t id = ((const int64_t *)ib.data)[i];
            memcpy(tmp + (size_t)i * (size_t)ds->row_bytes, rows + (size_t)id * (size_t)ds->row_bytes, (size_t)ds->row_bytes);
            tmask[i] = masks[id];
        }
        memset(&g, 0, sizeof g);
        g.num_rows = ib.num_rows; g.data = tmp; v[0] = NULL; v[1] = NULL; v[2] = tmask; g.valid = v;
        if (gpufeed_batch_hash(ds, &g) != gpufeed_batch_hash(ds, &rb)) bad++;
        nb++;
    }
done:
    if (bad) fprintf(stderr, "  world %d rank %d even %d window %d seed %llu where %d: %d of %lld batches differ\n",
                     world, rank, even, window, (unsigned long long)seed, with_where, bad, (long long)nb);
    free(rows); free(masks); free(tmp); free(tmask);
    gpufeed_scratch_close(sc);
    gpufeed_loader_close(il);
    gpufeed_loader_close(l);
    gpufeed_dataset_close(ds);
    return bad || nb == 0;
}

static void test_plain(void) { CHECK(check_plan(1, 0, GPUFEED_EVEN_DROP, 0, 7, 0) == 0); }
static void test_windows(void) { CHECK(check_plan(1, 0, GPUFEED_EVEN_DROP, 3, 11, 0) == 0); CHECK(check_plan(1, 0, GPUFEED_EVEN_DROP, 1, 12, 0) == 0); }
static void test_shards_pad(void) { int r; for (r = 0; r < 3; r++) CHECK(check_plan(3, r, GPUFEED_EVEN_PAD, 2, 5, 0) == 0); }
static void test_shards_drop(void) { int r; for (r = 0; r < 4; r++) CHECK(check_plan(4, r, GPUFEED_EVEN_DROP_ANY, 0, 5, 0) == 0); }
static void test_predicates(void) { CHECK(check_plan(1, 0, GPUFEED_EVEN_DROP, 2, 9, 1) == 0); CHECK(check_plan(2, 1, GPUFEED_EVEN_PAD, 0, 9, 1) == 0); }

int main(void)
{
    RUN(test_plain);
    RUN(test_windows);
    RUN(test_shards_pad);
    RUN(test_shards_drop);
    RUN(test_predicates);
    return TEST_SUMMARY();
}
