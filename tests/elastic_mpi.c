/* Elastic mode under MPI (tests/test_mpi.sh): every rank opens the loader
   with the job's global batch, the world and its rank from MPI, and writes
   one line per delivered row to PREFIX.<rank>:

       epoch global_batch position hash

   (the row's position in its global batch, gpufeed_batch_row_hash), so
   that the lines of all ranks, sorted, can be compared across world sizes.
   Rank 0 prints each rank's batch count and source bytes read.

   mpicc -O2 -std=c99 -I. tests/elastic_mpi.c -o elastic_mpi -lpthread -lm
   mpirun -np W ./elastic_mpi FILE G P EPOCHS SEED WINDOW UNIT_ROWS CACHE_DIR|- START_EPOCH START_BATCH PREFIX */
#define GPUFEED_IMPLEMENTATION
#include "gpufeed.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *paths[1];
    gpufeed_dataset_desc dd;
    gpufeed_loader_desc ld;
    gpufeed_cache_desc cd;
    gpufeed_dataset *ds = NULL;
    gpufeed_loader *l = NULL;
    gpufeed_error err;
    gpufeed_batch b;
    gpufeed_result r;
    int rank = 0, world = 1, rc = 0, i;
    long long mine[2] = { 0, 0 }, *all = NULL;
    char name[4096];
    FILE *out;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    if (argc != 12) {
        if (rank == 0) fprintf(stderr, "usage: elastic_mpi FILE G P EPOCHS SEED WINDOW UNIT_ROWS CACHE|- START_EPOCH START_BATCH PREFIX\n");
        MPI_Finalize();
        return 2;
    }
    paths[0] = argv[1];
    memset(&dd, 0, sizeof dd);
    dd.paths = paths; dd.num_paths = 1;
    dd.unit_rows = atoll(argv[7]);
    memset(&ld, 0, sizeof ld);
    ld.global_batch_rows = atoll(argv[2]);
    ld.partitions = atoi(argv[3]);
    ld.epochs = atoll(argv[4]);
    ld.seed = strtoull(argv[5], NULL, 10);
    ld.shuffle_window = atoi(argv[6]);
    ld.start_epoch = atoll(argv[9]);
    ld.start_batch = atoll(argv[10]);
    ld.rank = rank; ld.world = world; ld.workers = 2;
    memset(&cd, 0, sizeof cd);
    if (strcmp(argv[8], "-") != 0) { cd.dir = argv[8]; cd.no_build = 1; ld.cache = &cd; }
    if (gpufeed_dataset_open(&ds, &dd, &err) || gpufeed_loader_open(&l, ds, &ld, &err)) {
        fprintf(stderr, "rank %d: %s\n", rank, err.message);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    snprintf(name, sizeof name, "%s.%d", argv[11], rank);
    out = fopen(name, "w");
    if (!out) { perror(name); MPI_Abort(MPI_COMM_WORLD, 1); }
    while ((r = gpufeed_loader_next(l, &b)) == GPUFEED_OK) {
        int64_t q;
        for (q = 0; q < b.num_rows; q++)
            fprintf(out, "%lld %lld %lld %016llx\n", (long long)b.epoch, (long long)b.index, (long long)(b.slice_start + q),
                    (unsigned long long)gpufeed_batch_row_hash(ds, &b, q));
        mine[0]++;
    }
    if (r != GPUFEED_DONE) { fprintf(stderr, "rank %d: %s\n", rank, gpufeed_loader_error(l)); rc = 1; }
    for (i = 0; i < 64; i++) mine[1] += (long long)gpufeed_loader_epoch_bytes(l, ld.start_epoch + i);
    fclose(out);
    if (rank == 0) all = (long long *)calloc((size_t)world * 2, sizeof *all);
    MPI_Gather(mine, 2, MPI_LONG_LONG, all, 2, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0 && all) {
        for (i = 0; i < world; i++) printf("rank %d: %lld batches, source bytes read %lld\n", i, all[2 * i], all[2 * i + 1]);
        free(all);
    }
    gpufeed_loader_close(l);
    gpufeed_dataset_close(ds);
    MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
}
