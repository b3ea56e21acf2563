/* DLPack export (>>dlpack) on host batches (the uploader's host fallback;
   tests/test_gpu.cu covers device batches on a GPU): the struct layouts
   match dlpack.h's, tensors describe exactly the batch bytes (whole matrix,
   strided feature views, per-feature arrays, masks), a slot stays held
   while any of its tensors lives, deleters may run after the uploader is
   closed, and misuse gets clear errors.

   cc -O2 -I. tests/test_dlpack.c -o build/test_dlpack -lpthread -lm */
#define GPUFEED_IMPLEMENTATION
#define GPUFEED_STATIC
#include "gpufeed.h"
#include "gf_test.h"
#include <stddef.h>
#include <stdlib.h>

#define DATA "tests/data/ids.parquet"

typedef struct rig {
    gpufeed_dataset *ds;
    gpufeed_loader *l;
    gpufeed_uploader *u;
} rig;

/* id as f32? no: features x (f32), k (f32 from INT32), y (f32, mask) or the
   mixed set id (i64), x (f32), y (f64, mask) */
static int rig_open(rig *r, int mixed, int layout, int slots)
{
    const char *paths[1] = { DATA };
    gpufeed_feature ft[3];
    gpufeed_dataset_desc dd;
    gpufeed_loader_desc ld;
    gpufeed_uploader_desc dv;
    gpufeed_error err;
    memset(r, 0, sizeof *r);
    memset(ft, 0, sizeof ft);
    ft[0].column = mixed ? "id" : "x"; ft[0].dtype = mixed ? GPUFEED_DT_I64 : GPUFEED_DT_F32;
    ft[1].column = mixed ? "x" : "k"; ft[1].dtype = GPUFEED_DT_F32;
    ft[2].column = "y"; ft[2].dtype = mixed ? GPUFEED_DT_F64 : GPUFEED_DT_F32; ft[2].validity = 1;
    memset(&dd, 0, sizeof dd);
    dd.paths = paths; dd.num_paths = 1; dd.features = ft; dd.num_features = 3; dd.layout = layout; dd.unit_rows = 2500;
    memset(&ld, 0, sizeof ld);
    ld.batch_rows = 300; ld.workers = 2; ld.seed = 9; ld.epochs = 1;
    memset(&dv, 0, sizeof dv);
    dv.host_fallback = 1; dv.slots = slots; dv.device = 0;
    if (gpufeed_dataset_open(&r->ds, &dd, &err) || gpufeed_loader_open(&r->l, r->ds, &ld, &err) ||
        gpufeed_uploader_open(&r->u, r->l, &dv, &err)) { fprintf(stderr, "  rig: %s\n", err.message); return 1; }
    return 0;
}
static void rig_close(rig *r)
{
    gpufeed_uploader_close(r->u);
    gpufeed_loader_close(r->l);
    gpufeed_dataset_close(r->ds);
}

static void test_abi_layouts(void)
{
    /* dlpack.h v1.x on LP64: DLTensor 48 bytes, DLManagedTensor 64,
       DLManagedTensorVersioned 80 with dl_tensor at 32 */
    CHECK(sizeof(gpufeed_dl_device) == 8 && sizeof(gpufeed_dl_dtype) == 4);
    CHECK(sizeof(gpufeed_dl_tensor) == 48);
    CHECK(offsetof(gpufeed_dl_tensor, device) == 8 && offsetof(gpufeed_dl_tensor, ndim) == 16 &&
          offsetof(gpufeed_dl_tensor, dtype) == 20 && offsetof(gpufeed_dl_tensor, shape) == 24 &&
          offsetof(gpufeed_dl_tensor, strides) == 32 && offsetof(gpufeed_dl_tensor, byte_offset) == 40);
    CHECK(sizeof(gpufeed_dl_managed) == 64 && offsetof(gpufeed_dl_managed, manager_ctx) == 48 &&
          offsetof(gpufeed_dl_managed, deleter) == 56);
    CHECK(sizeof(gpufeed_dl_managed_versioned) == 80 && offsetof(gpufeed_dl_managed_versioned, manager_ctx) == 8 &&
          offsetof(gpufeed_dl_managed_versioned, deleter) == 16 && offsetof(gpufeed_dl_managed_versioned, flags) == 24 &&
          offsetof(gpufeed_dl_managed_versioned, dl_tensor) == 32);
    CHECK(gpufeed_sizeof("gpufeed_feature") == sizeof(gpufeed_feature));
    CHECK(gpufeed_sizeof("gpufeed_device_batch") == sizeof(gpufeed_device_batch));
    CHECK(gpufeed_sizeof("no_such_type") == 0 && gpufeed_sizeof(NULL) == 0);
}

static void test_views_match_batch(void)
{
    rig r;
    gpufeed_device_batch b;
    int k, nb = 0;
    if (rig_open(&r, 0, GPUFEED_LAYOUT_ROW_MAJOR, 3)) { CHECK(0); return; }
    while (gpufeed_uploader_next(r.u, &b) == GPUFEED_OK) {
        gpufeed_dl_managed *all = NULL, *f1 = NULL, *m2 = NULL;
        gpufeed_dl_managed_versioned *v0 = NULL;
        int64_t i, bad = 0;
        CHECK(b.on_device == 0);
        CHECK(gpufeed_batch_dlpack(r.u, &b, GPUFEED_DL_ALL, 0, NULL, 0, (void **)&all) == GPUFEED_OK);
        CHECK(gpufeed_batch_dlpack(r.u, &b, 1, 0, NULL, 0, (void **)&f1) == GPUFEED_OK);
        CHECK(gpufeed_batch_dlpack(r.u, &b, 2, 1, NULL, 0, (void **)&m2) == GPUFEED_OK);
        CHECK(gpufeed_batch_dlpack(r.u, &b, 0, 0, NULL, 1, (void **)&v0) == GPUFEED_OK);
        if (!all || !f1 || !m2 || !v0) break;
        CHECK(all->dl_tensor.device.device_type == GPUFEED_DL_CPU && all->dl_tensor.ndim == 2);
        CHECK(all->dl_tensor.shape[0] == b.host.num_rows && all->dl_tensor.shape[1] == 3);
        CHECK(all->dl_tensor.strides[0] == b.host.row_bytes / 4 && all->dl_tensor.strides[1] == 1);
        CHECK(all->dl_tensor.dtype.code == GPUFEED_DL_FLOAT && all->dl_tensor.dtype.bits == 32 && all->dl_tensor.dtype.lanes == 1);
        CHECK(f1->dl_tensor.ndim == 1 && f1->dl_tensor.shape[0] == b.host.num_rows);
        CHECK(m2->dl_tensor.dtype.code == GPUFEED_DL_UINT && m2->dl_tensor.dtype.bits == 8 && m2->dl_tensor.strides[0] == 1);
        CHECK(v0->version.major == 1 && v0->version.minor == 0 && v0->flags == 0);
        for (i = 0; i < b.host.num_rows; i++) { /* element (i, j) through the DLPack description == the batch */
            const char *rowp = (const char *)b.host.data + i * b.host.row_bytes;
            float want1, got1, wantall, gotall, want0, got0;
            memcpy(&want1, rowp + b.host.feature_offset[1], 4);
            memcpy(&got1, (const char *)f1->dl_tensor.data + f1->dl_tensor.byte_offset + (size_t)(i * f1->dl_tensor.strides[0]) * 4, 4);
            memcpy(&wantall, rowp + b.host.feature_offset[2], 4);
            memcpy(&gotall, (const char *)all->dl_tensor.data + (size_t)(i * all->dl_tensor.strides[0] + 2) * 4, 4);
            memcpy(&want0, rowp + b.host.feature_offset[0], 4);
            memcpy(&got0, (const char *)v0->dl_tensor.data + v0->dl_tensor.byte_offset + (size_t)(i * v0->dl_tensor.strides[0]) * 4, 4);
            if (want1 != got1 || wantall != gotall || want0 != got0) bad++;
            if (((const uint8_t *)m2->dl_tensor.data)[i] != b.host.valid[2][i]) bad++;
        }
        CHECK_MSG(bad == 0, "%lld elements differ", (long long)bad);
        for (k = 0; k < 2; k++) { /* releasing the batch first, tensors after: both orders work */
            if (k == (nb & 1)) CHECK(gpufeed_uploader_release(r.u, &b, NULL) == GPUFEED_OK);
            else { all->deleter(all); f1->deleter(f1); m2->deleter(m2); v0->deleter(v0); }
        }
        nb++;
    }
    CHECK(nb == (20000 + 299) / 300);
    rig_close(&r);
}

static void test_per_feature_layout(void)
{
    rig r;
    gpufeed_device_batch b;
    gpufeed_dl_managed *t = NULL;
    gpufeed_error err;
    (void)err;
    if (rig_open(&r, 1, GPUFEED_LAYOUT_PER_FEATURE, 2)) { CHECK(0); return; }
    CHECK(gpufeed_uploader_next(r.u, &b) == GPUFEED_OK);
    CHECK(gpufeed_batch_dlpack(r.u, &b, 0, 0, NULL, 0, (void **)&t) == GPUFEED_OK);
    if (t) {
        CHECK(t->dl_tensor.data == b.host.features[0] && t->dl_tensor.ndim == 1 && t->dl_tensor.strides[0] == 1);
        CHECK(t->dl_tensor.dtype.code == GPUFEED_DL_INT && t->dl_tensor.dtype.bits == 64);
        t->deleter(t);
    }
    /* mixed dtypes cannot be one matrix; per-feature layout neither */
    t = NULL;
    CHECK(gpufeed_batch_dlpack(r.u, &b, GPUFEED_DL_ALL, 0, NULL, 0, (void **)&t) == GPUFEED_ERR_INVALID_ARG && t == NULL);
    CHECK_HAS(gpufeed_uploader_error(r.u), "row-major");
    CHECK(gpufeed_batch_dlpack(r.u, &b, 1, 1, NULL, 0, (void **)&t) == GPUFEED_ERR_INVALID_ARG);
    CHECK_HAS(gpufeed_uploader_error(r.u), "no validity mask");
    CHECK(gpufeed_batch_dlpack(r.u, &b, 7, 0, NULL, 0, (void **)&t) == GPUFEED_ERR_INVALID_ARG);
    CHECK_HAS(gpufeed_uploader_error(r.u), "3 features");
    CHECK(gpufeed_uploader_release(r.u, &b, NULL) == GPUFEED_OK);
    CHECK(gpufeed_batch_dlpack(r.u, &b, 0, 0, NULL, 0, (void **)&t) == GPUFEED_ERR_INVALID_ARG);
    CHECK_HAS(gpufeed_uploader_error(r.u), "no longer held");
    rig_close(&r);
    if (rig_open(&r, 1, GPUFEED_LAYOUT_ROW_MAJOR, 2)) { CHECK(0); return; }
    CHECK(gpufeed_uploader_next(r.u, &b) == GPUFEED_OK);
    CHECK(gpufeed_batch_dlpack(r.u, &b, GPUFEED_DL_ALL, 0, NULL, 0, (void **)&t) == GPUFEED_ERR_INVALID_ARG);
    CHECK_HAS(gpufeed_uploader_error(r.u), "differ in dtype");
    CHECK(gpufeed_uploader_release(r.u, &b, NULL) == GPUFEED_OK);
    rig_close(&r);
}

static void test_tensors_hold_slots(void)
{
    rig r;
    gpufeed_device_batch b[3];
    gpufeed_dl_managed *t[2] = { NULL, NULL };
    float first[4];
    if (rig_open(&r, 0, GPUFEED_LAYOUT_ROW_MAJOR, 2)) { CHECK(0); return; }
    CHECK(gpufeed_uploader_next(r.u, &b[0]) == GPUFEED_OK);
    CHECK(gpufeed_batch_dlpack(r.u, &b[0], GPUFEED_DL_ALL, 0, NULL, 0, (void **)&t[0]) == GPUFEED_OK);
    memcpy(first, b[0].host.data, sizeof first);
    CHECK(gpufeed_uploader_release(r.u, &b[0], NULL) == GPUFEED_OK);
    CHECK(gpufeed_uploader_next(r.u, &b[1]) == GPUFEED_OK);
    CHECK(gpufeed_batch_dlpack(r.u, &b[1], GPUFEED_DL_ALL, 0, NULL, 0, (void **)&t[1]) == GPUFEED_OK);
    CHECK(gpufeed_uploader_release(r.u, &b[1], NULL) == GPUFEED_OK);
    /* both slots are held by tensors: no third batch, and the first tensor's bytes are intact */
    CHECK(gpufeed_uploader_next(r.u, &b[2]) == GPUFEED_ERR_INVALID_ARG);
    CHECK_HAS(gpufeed_uploader_error(r.u), "DLPack tensors");
    CHECK(t[0] && memcmp(t[0]->dl_tensor.data, first, sizeof first) == 0);
    if (t[0]) t[0]->deleter(t[0]);
    CHECK(gpufeed_uploader_next(r.u, &b[2]) == GPUFEED_OK);
    CHECK(b[2].slot == b[0].slot);
    /* close with a tensor alive: its deleter runs later and frees the uploader (ASan checks) */
    gpufeed_uploader_close(r.u);
    gpufeed_loader_close(r.l);
    if (t[1]) {
        float v;
        memcpy(&v, t[1]->dl_tensor.data, 4);   /* still readable after close */
        (void)v;
        t[1]->deleter(t[1]);
    }
    gpufeed_dataset_close(r.ds);
}

int main(void)
{
    RUN(test_abi_layouts);
    RUN(test_views_match_batch);
    RUN(test_per_feature_layout);
    RUN(test_tensors_hold_slots);
    return TEST_SUMMARY();
}
