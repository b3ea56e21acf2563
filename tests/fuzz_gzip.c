/* libFuzzer target for the GZIP codec (gzip members, zlib streams, DEFLATE).

   Input: 4 bytes little-endian, the page's uncompressed size (taken modulo
   4 MiB + 1), then the page body. The size is refused, as the page reader
   does, when DEFLATE cannot expand the body that far. Then
   gf__decompress must return OK or an error with a message; sanitizers
   catch the rest. The body is copied to an allocation of its exact size.

     clang -g -O1 -fsanitize=fuzzer,address,undefined -I. tests/fuzz_gzip.c -o build/fuzz_gzip
     build/fuzz_gzip -max_total_time=120 build/fuzz-gzip tests/fuzz/gzip

   A plain driver replays files without libFuzzer:
     clang -g -O1 -fsanitize=address,undefined -DGF_FUZZ_MAIN -I. tests/fuzz_gzip.c -o build/asan/fuzz_gzip_replay
     build/asan/fuzz_gzip_replay FILES...       (the seeds: tests/fuzz/gzip)
   It ends with "N passed, N failed" (failed: a file it could not read). */
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GPUFEED_STATIC
#define GPUFEED_IMPLEMENTATION
#include "gpufeed.h"

#define GFZ_MAX_OUT ((uint32_t)4 << 20)

static long gfz_decoded;               /* inputs that decoded (the replay reports it) */

#ifdef __cplusplus
extern "C"
#endif
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint32_t dn;
    size_t n;
    uint8_t *src, *dst;
    char msg[GPUFEED_ERROR_MAX];
    gpufeed_result r;
    if (size < 4) return 0;
    dn = (uint32_t)data[0] | ((uint32_t)data[1] << 8) | ((uint32_t)data[2] << 16) | ((uint32_t)data[3] << 24);
    dn %= GFZ_MAX_OUT + 1;
    n = size - 4;
    if ((uint64_t)dn > gf__codec_max_expansion(GPUFEED_CODEC_GZIP, (uint64_t)n)) return 0;
    src = (uint8_t *)malloc(n ? n : 1);
    dst = (uint8_t *)malloc(dn ? dn : 1);
    if (!src || !dst) abort();
    if (n) memcpy(src, data + 4, n);
    msg[0] = 0;
    r = gf__decompress(GPUFEED_CODEC_GZIP, src, n, dst, dn, msg, sizeof msg);
    if (r == GPUFEED_OK) gfz_decoded++;
    if (r != GPUFEED_OK && (msg[0] == 0 || strncmp(msg, "gzip: ", 6) != 0)) {
        fprintf(stderr, "fuzz_gzip: error %d without a gzip message: \"%s\"\n", (int)r, msg);
        abort();
    }
    free(src);
    free(dst);
    return 0;
}

#ifdef GF_FUZZ_MAIN
int main(int argc, char **argv)
{
    int i, passed = 0, failed = 0;
    for (i = 1; i < argc; i++) {
        FILE *fp = fopen(argv[i], "rb");
        uint8_t *buf = NULL;
        size_t len = 0, cap = 0, got;
        if (!fp) { printf("FAIL %s (cannot read)\n", argv[i]); failed++; continue; }
        do {
            if (len == cap) {
                uint8_t *nb;
                cap = cap ? cap * 2 : 65536;
                nb = (uint8_t *)realloc(buf, cap);
                if (!nb) abort();
                buf = nb;
            }
            got = fread(buf + len, 1, cap - len, fp);
            len += got;
        } while (got);
        fclose(fp);
        LLVMFuzzerTestOneInput(buf, len);
        free(buf);
        passed++;
    }
    printf("INFO %ld of %d inputs decoded, the others were refused with a message\n", gfz_decoded, passed);
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
#endif
