/* Fuzz target: gpufeed's ZSTD decoder alone (gf__decompress with
   GPUFEED_CODEC_ZSTD). The first 4 input bytes (little-endian) give the
   page's uncompressed size, taken modulo 4 MiB + 1; the rest is the page
   body. A result must be a known code with a message on failure.

   libFuzzer:
     clang -g -O1 -fsanitize=fuzzer,address,undefined -I. tests/fuzz_zstd.c -o build/fuzz_zstd
     rm -rf build/fuzz-zstd && cp -r tests/fuzz/zstd build/fuzz-zstd
     build/fuzz_zstd -max_len=65536 -rss_limit_mb=2048 build/fuzz-zstd
   The seeds in tests/fuzz/zstd/ are small libzstd frames with that 4-byte
   prefix (levels 1..22, checksums, several frames, skippable frames).

   Differential (-DGF_FUZZ_ZSTD_DIFF ... -lzstd): whatever gpufeed decodes,
   libzstd must decode to the same bytes; and whatever libzstd decodes to
   exactly the page's size, gpufeed must decode too, unless it broke a rule
   of RFC 8878 that libzstd does not check (reserved bits, block sizes
   against a small window, bytes after an empty sequences section). */
#define GPUFEED_IMPLEMENTATION
#include "../gpufeed.h"
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#ifdef GF_FUZZ_ZSTD_DIFF
#include <zstd.h>
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char msg[GPUFEED_ERROR_MAX];
    uint32_t dn;
    uint8_t *dst;
    gpufeed_result r;
    if (size < 4) return 0;
    memcpy(&dn, data, 4);
    dn %= (4u << 20) + 1;
    dst = (uint8_t *)malloc(dn ? dn : 1);
    if (!dst) return 0;
    msg[0] = 0;
    r = gf__decompress(GPUFEED_CODEC_ZSTD, data + 4, size - 4, dst, dn, msg, sizeof msg);
    if (r != GPUFEED_OK && (msg[0] == 0 || strcmp(gpufeed_result_string(r), "unknown result") == 0)) abort();
#ifdef GF_FUZZ_ZSTD_DIFF
    {
        uint8_t *ref = (uint8_t *)malloc(dn + 1);
        size_t got;
        if (!ref) abort();
        got = ZSTD_decompress(ref, dn + 1, data + 4, size - 4);
        if (r == GPUFEED_OK && (ZSTD_isError(got) || got != dn || (dn && memcmp(ref, dst, dn) != 0))) abort();
        if (r != GPUFEED_OK && !ZSTD_isError(got) && got == dn && !strstr(msg, "reserved bit") && !strstr(msg, "block maximum") &&
            !strstr(msg, "exceeds its maximum") && !strstr(msg, "after an empty sequences section") && !strstr(msg, "exceeds the frame's block maximum")) {
            fprintf(stderr, "libzstd decodes what gpufeed rejects: %s\n", msg);
            abort();
        }
        free(ref);
    }
#endif
    free(dst);
    return 0;
}
