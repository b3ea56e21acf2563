/* mpi_ranks.c -- data-parallel ranks under MPI: every rank opens the same
   dataset with its rank and the world size, and gpufeed hands each rank a
   disjoint shard with the same number of batches per epoch.

   Build (one command, from the repository root):
       mpicc -O2 -I. examples/mpi_ranks.c -o mpi_ranks -lpthread -lm
   Run:
       mpirun -np 4 ./mpi_ranks [PATH] [EPOCHS] [SEED] [OUTPREFIX]
   PATH defaults to tests/data/ids.parquet (20,000 rows with an `id` column
   0..19999). With OUTPREFIX, rank r writes OUTPREFIX.r: one line per batch,
       epoch batch rows hash id id id ...
   which tests/test_mpi.sh uses to check that the shards are disjoint and
   complete, the batch counts equal, and a rerun identical.

   The same code runs under torchrun or Slurm without MPI: take rank and
   world from RANK / WORLD_SIZE (torchrun) or SLURM_PROCID / SLURM_NTASKS
   (srun) instead of MPI_Comm_rank / MPI_Comm_size - see README "Ranks". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GPUFEED_IMPLEMENTATION
#define GPUFEED_STATIC
#include "gpufeed.h"

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "tests/data/ids.parquet";
    long epochs = argc > 2 ? strtol(argv[2], NULL, 10) : 2;
    unsigned long long seed = argc > 3 ? strtoull(argv[3], NULL, 10) : 7;
    const char *prefix = argc > 4 ? argv[4] : NULL;
    int rank = 0, world = 1, rc = 0;
    const char *paths[1];
    gpufeed_feature ft[2];
    gpufeed_dataset_desc dd;
    gpufeed_loader_desc ld;
    gpufeed_dataset *ds = NULL;
    gpufeed_loader *l = NULL;
    gpufeed_error err;
    gpufeed_batch b;
    gpufeed_result r;
    long long nbatches = 0, nrows = 0, counts[2], *all = NULL;
    FILE *out = NULL;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    if (epochs < 1) epochs = 1;

    memset(ft, 0, sizeof ft);
    ft[0].column = "id"; ft[0].dtype = GPUFEED_DT_I64;
    ft[1].column = "x"; ft[1].dtype = GPUFEED_DT_F32;
    paths[0] = path;
    memset(&dd, 0, sizeof dd);
    dd.paths = paths; dd.num_paths = 1;
    dd.features = ft; dd.num_features = 2;
    dd.unit_rows = 1000;
    memset(&ld, 0, sizeof ld);
    ld.batch_rows = 256;
    ld.workers = 2;
    ld.seed = seed;
    ld.shuffle_window = 2;
    ld.rank = rank; ld.world = world;
    ld.even = GPUFEED_EVEN_PAD;        /* every rank gets the same number of batches */
    ld.epochs = epochs;
    if (gpufeed_dataset_open(&ds, &dd, &err) != GPUFEED_OK ||
        gpufeed_loader_open(&l, ds, &ld, &err) != GPUFEED_OK) {
        fprintf(stderr, "rank %d: %s\n", rank, err.message);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (prefix) {
        char name[1024];
        snprintf(name, sizeof name, "%s.%d", prefix, rank);
        out = fopen(name, "w");
        if (!out) { perror(name); MPI_Abort(MPI_COMM_WORLD, 1); }
    }
    while ((r = gpufeed_loader_next(l, &b)) == GPUFEED_OK) {
        nbatches++; nrows += b.num_rows;
        if (out) {
            int64_t i;
            fprintf(out, "%lld %lld %lld %016llx", (long long)b.epoch, (long long)b.index, (long long)b.num_rows,
                    (unsigned long long)gpufeed_batch_hash(ds, &b));
            for (i = 0; i < b.num_rows; i++) {
                int64_t id;
                memcpy(&id, (const uint8_t *)b.data + i * b.row_bytes + b.feature_offset[0], 8);
                fprintf(out, " %lld", (long long)id);
            }
            fputc('\n', out);
        }
    }
    if (r != GPUFEED_DONE) { fprintf(stderr, "rank %d: %s\n", rank, gpufeed_loader_error(l)); rc = 1; }
    if (out) fclose(out);

    /* rank 0 gathers every rank's counts: equal batch counts are the point */
    counts[0] = nbatches; counts[1] = nrows;
    if (rank == 0) all = (long long *)malloc(sizeof(long long) * 2 * (size_t)world);
    MPI_Gather(counts, 2, MPI_LONG_LONG, all, 2, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        int i, equal = 1;
        for (i = 0; i < world; i++) {
            printf("rank %d: %lld batches, %lld rows over %ld epochs\n", i, all[2 * i], all[2 * i + 1], epochs);
            if (all[2 * i] != all[0]) equal = 0;
        }
        printf("%s\n", equal ? "batch counts equal on every rank" : "BATCH COUNTS DIFFER");
        if (!equal) rc = 1;
        free(all);
    }
    gpufeed_loader_close(l);
    gpufeed_dataset_close(ds);
    MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
}
