/* fuzz_replay_main.c -- runs a libFuzzer target's inputs without libFuzzer
   (for compilers and architectures without its runtime, e.g. a cross
   compiler). Link it with one target:
       aarch64-linux-gnu-gcc -O1 -static -DGFF_TARGET=snappy -I. -Itests tests/fuzz_decoders.c tests/fuzz_replay_main.c -o fz_snappy
       qemu-aarch64 fz_snappy tests/fuzz/dec/snappy
   Arguments are files or directories (one level deep). Every input runs in
   this process: a crash or abort ends the run with a non-zero status, and
   the input is named first when GF_REPLAY_VERBOSE is set. Ends with
   "N passed, 0 failed" (one per input). */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static long g_runs;
static int g_verbose;

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    long n;
    if (!f) { fprintf(stderr, "cannot open %s\n", path); return 1; }
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) { fclose(f); fprintf(stderr, "cannot size %s\n", path); return 1; }
    buf = (uint8_t *)malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) { fclose(f); free(buf); fprintf(stderr, "cannot read %s\n", path); return 1; }
    fclose(f);
    if (g_verbose) fprintf(stderr, "%s\n", path);
    LLVMFuzzerTestOneInput(buf, (size_t)n);
    free(buf);
    g_runs++;
    return 0;
}

int main(int argc, char **argv)
{
    int i, bad = 0;
    const char *v = getenv("GF_REPLAY_VERBOSE");
    g_verbose = v && *v && strcmp(v, "0") != 0;
    for (i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) { fprintf(stderr, "no such input: %s\n", argv[i]); bad++; continue; }
        if (S_ISDIR(st.st_mode)) {
            DIR *d = opendir(argv[i]);
            struct dirent *e;
            char path[4096];
            if (!d) { bad++; continue; }
            while ((e = readdir(d)) != NULL) {
                struct stat fs;
                if (e->d_name[0] == '.') continue;
                snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
                if (stat(path, &fs) == 0 && S_ISREG(fs.st_mode)) bad += run_file(path);
            }
            closedir(d);
        } else {
            bad += run_file(argv[i]);
        }
    }
    printf("%ld passed, %d failed\n", g_runs, bad);
    return bad ? 1 : 0;
}
