#!/usr/bin/env bash
# Compiles gpufeed.h under every supported compiler, language standard and
# build option, with warnings as errors, and runs the small programs that
# need linking (static / non-static two-TU builds, option behaviour).
#
#   bash tests/compile_matrix.sh    (from anywhere; outputs in build/compile-matrix.XXXXXX,
#                                    kept only when a check failed)
#
# Each check prints "PASS name" or "FAIL name" (then the compiler output);
# the last line is "N passed, N failed" and the exit status is non-zero on a
# failure. A compiler that is not installed is reported as "SKIP name: ..."
# and not counted. -Wshadow / -Wconversion (and a few more) are run as
# optional extras ("INFO optional ...") and never fail the script.
# The checks run in parallel (MATRIX_JOBS, default: the number of CPUs);
# the output keeps the order below.
set -u
cd "$(dirname "$0")/.." || exit 2

mkdir -p build
T=$(mktemp -d build/compile-matrix.XXXXXX) || exit 2   # removed at the end when all passed
WARN=(-Wall -Wextra -Werror -pedantic)
DATA=tests/data/pyarrow_default.parquet
JOBS=${MATRIX_JOBS:-$(nproc 2> /dev/null || echo 2)}

ok() { echo "PASS $1"; }
bad() {
    echo "FAIL $1"
    if [ -n "${2:-}" ] && [ -s "$2" ]; then sed -e 's/^/    /' "$2" | head -n 60; fi
}
have() { command -v "$1" > /dev/null 2>&1; }

# check NAME CMD...: PASS when CMD succeeds with no output on stderr/stdout
# from the compiler (warnings are errors anyway).
check() {
    local name=$1
    shift
    local log="$T/$name.log"
    if "$@" > "$log" 2>&1; then ok "$name"; else bad "$name" "$log"; fi
}

# ---- translation units --------------------------------------------------------

cat > "$T/impl.c" << 'EOF'
/* the implementation, and one use of it */
#define GPUFEED_IMPLEMENTATION
#include "gpufeed.h"
int matrix_impl(void);
int matrix_impl(void) { return gpufeed_result_string(GPUFEED_OK)[0] == 'o'; }
EOF

cat > "$T/decl.c" << 'EOF'
/* declarations only: every public type and a few calls */
#include "gpufeed.h"
const char *matrix_decl(gpufeed_file *f, gpufeed_column *c);
const char *matrix_decl(gpufeed_file *f, gpufeed_column *c)
{
    const gpufeed_metadata *md = gpufeed_file_metadata(f);
    gpufeed_column_batch b;
    gpufeed_page_info pi;
    gpufeed_error err;
    gpufeed_allocator a;
    gpufeed_source s;
    gpufeed_column_desc cd;
    (void)b; (void)pi; (void)err; (void)a; (void)s; (void)cd;
    if (md && md->num_columns > 0) return md->columns[0].path;
    return c ? gpufeed_column_error(c) : gpufeed_result_string(GPUFEED_DONE);
}
EOF

# the STATIC implementation with nothing used: no unused-function warnings
cat > "$T/static_unused.c" << 'EOF'
#define GPUFEED_STATIC
#define GPUFEED_IMPLEMENTATION
#include "gpufeed.h"
int matrix_static_unused(void);
int matrix_static_unused(void) { return 0; }
EOF

# the header twice (include guard) and the implementation twice
cat > "$T/twice.c" << 'EOF'
#include "gpufeed.h"
#include "gpufeed.h"
#define GPUFEED_IMPLEMENTATION
#include "gpufeed.h"
#include "gpufeed.h"
int matrix_twice(void);
int matrix_twice(void) { return (int)gpufeed_crc32(0, "a", 1); }
EOF

# a program that reads one column: options are checked by what it does
cat > "$T/prog.c" << 'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef MATRIX_CUSTOM_ALLOC
static long matrix_live, matrix_calls;
static void *matrix_malloc(size_t n) { matrix_live++; matrix_calls++; return malloc(n); }
static void *matrix_realloc(void *p, size_t n) { if (!p) matrix_live++; matrix_calls++; return realloc(p, n); }
static void matrix_free(void *p) { if (p) matrix_live--; free(p); }
#define GPUFEED_MALLOC(sz) matrix_malloc(sz)
#define GPUFEED_REALLOC(p, sz) matrix_realloc(p, sz)
#define GPUFEED_FREE(p) matrix_free(p)
#endif
#define GPUFEED_IMPLEMENTATION
#include "gpufeed.h"

int main(int argc, char **argv)
{
    gpufeed_file_desc d;
    gpufeed_file *f;
    gpufeed_error err;
    gpufeed_column *c;
    gpufeed_column_batch b;
    gpufeed_result r, want = GPUFEED_DONE;
    unsigned char *buf = NULL;
    size_t len = 0, cap = 0, got;
    long rows = 0;
    int32_t col;
    FILE *fp;
    if (argc < 2) return 2;
    fp = fopen(argv[1], "rb");
    if (!fp) return 2;
    do {
        if (len == cap) { cap = cap ? cap * 2 : 65536; buf = (unsigned char *)realloc(buf, cap); if (!buf) return 2; }
        got = fread(buf + len, 1, cap - len, fp);
        len += got;
    } while (got);
    fclose(fp);
    memset(&d, 0, sizeof d);
#ifdef GPUFEED_NO_STDIO
    d.path = argv[1];   /* path sources are compiled out */
    if (gpufeed_file_open(&f, &d, &err) != GPUFEED_ERR_UNSUPPORTED) { printf("path open did not fail with UNSUPPORTED\n"); return 1; }
    d.path = NULL;
#endif
    d.data = buf; d.data_size = len;
    if (gpufeed_file_open(&f, &d, &err)) { printf("open: %s\n", err.message); return 1; }
    col = gpufeed_file_find_column(f, "i64");
    if (col < 0 || gpufeed_column_open(&c, f, 0, col, NULL, &err)) { printf("column: %s\n", err.message); return 1; }
    while ((r = gpufeed_column_read(c, &b)) == GPUFEED_OK) rows += (long)b.num_rows;
#ifdef GPUFEED_NO_SNAPPY
    want = GPUFEED_ERR_UNSUPPORTED;   /* the file is SNAPPY-compressed */
#endif
#ifdef MATRIX_GZIP_PAGE
    {   /* one gzip member of "ab" (a fixed-code block) decoded as a page, or
           refused as not supported */
        static const unsigned char gz[] = { 0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3, 0x4B, 0x4C, 0x02, 0x00,
                                            0x6D, 0x48, 0x83, 0x9E, 2, 0, 0, 0 };
        unsigned char out[2];
        char m[GPUFEED_ERROR_MAX];
        gpufeed_result g = gf__decompress(GPUFEED_CODEC_GZIP, gz, sizeof gz, out, 2, m, sizeof m);
#ifdef GPUFEED_NO_GZIP
        if (g != GPUFEED_ERR_UNSUPPORTED || gf__codec_supported(GPUFEED_CODEC_GZIP)) { printf("GZIP page: %d (%s), expected not supported\n", (int)g, m); return 1; }
#else
        if (g != GPUFEED_OK || memcmp(out, "ab", 2) != 0) { printf("GZIP page: %d (%s)\n", (int)g, m); return 1; }
#endif
    }
#endif
    if (r != want) { printf("read gave %s (%s), expected %s\n", gpufeed_result_string(r), gpufeed_column_error(c), gpufeed_result_string(want)); return 1; }
    gpufeed_column_close(c);
    gpufeed_file_close(f);
    free(buf);
#ifdef MATRIX_CUSTOM_ALLOC
    if (matrix_calls == 0 || matrix_live != 0) { printf("custom allocator: %ld calls, %ld blocks live\n", matrix_calls, matrix_live); return 1; }
#endif
    printf("%ld rows, result %s\n", rows, gpufeed_result_string(r));
    return 0;
}
EOF

# two-TU, non-static: implementation in one file, declarations in the other
cat > "$T/user.c" << 'EOF'
#include <stdio.h>
#include "gpufeed.h"
#ifdef __cplusplus
extern "C"
#endif
int matrix_impl(void);
int main(int argc, char **argv)
{
    gpufeed_file_desc d = {0};
    gpufeed_file *f;
    gpufeed_error err;
    const gpufeed_metadata *md;
    if (argc < 2 || !matrix_impl()) return 2;
    d.path = argv[1];
    if (gpufeed_file_open(&f, &d, &err)) { printf("%s\n", err.message); return 1; }
    md = gpufeed_file_metadata(f);
    printf("%d columns, %lld rows\n", md->num_columns, (long long)md->num_rows);
    if (md->num_columns <= 0) return 1;
    gpufeed_file_close(f);
    return 0;
}
EOF
cp "$T/user.c" "$T/user.cpp"

# a CUDA translation unit with the implementation
cat > "$T/cuda.cu" << 'EOF'
#define GPUFEED_IMPLEMENTATION
#include "gpufeed.h"
__global__ void matrix_kernel(const double *in, double *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * 2.0;
}
int matrix_cuda(void);
int matrix_cuda(void) { return gpufeed_result_string(GPUFEED_OK)[0] == 'o'; }
EOF

# ---- the checks, one job each ----------------------------------------------------------

langflags() { case $1 in *++) echo "-x c++" ;; esac; }
tagof() { echo "$1${2#-std=}"; }

# implementation and declarations-only TUs under one compiler and standard
job_basic() {
    local comp=$1 std=$2 tag
    tag=$(tagof "$comp" "$std")
    if ! have "$comp"; then echo "SKIP $tag: $comp not installed"; return; fi
    # shellcheck disable=SC2046
    check "$tag-impl" "$comp" "$std" "${WARN[@]}" -I. $(langflags "$comp") -c "$T/impl.c" -o "$T/$tag-impl.o"
    # shellcheck disable=SC2046
    check "$tag-decl" "$comp" "$std" "${WARN[@]}" -I. $(langflags "$comp") -c "$T/decl.c" -o "$T/$tag-decl.o"
}

# GPUFEED_STATIC with nothing used, the header included twice, optional warnings
job_more() {
    local comp=$1 std=$2 tag extra log n
    local extras=("-Wshadow -Wconversion")
    tag=$(tagof "$comp" "$std")
    if ! have "$comp"; then echo "SKIP $tag: $comp not installed"; return; fi
    # shellcheck disable=SC2046
    check "$tag-static-unused" "$comp" "$std" "${WARN[@]}" -I. $(langflags "$comp") -c "$T/static_unused.c" -o "$T/$tag-su.o"
    # shellcheck disable=SC2046
    check "$tag-include-twice" "$comp" "$std" "${WARN[@]}" -I. $(langflags "$comp") -c "$T/twice.c" -o "$T/$tag-tw.o"
    case $comp in
        *++) ;;
        *) extras+=("-Wstrict-prototypes -Wmissing-prototypes -Wundef -Wcast-qual -Wdouble-promotion") ;;
    esac
    for extra in "${extras[@]}"; do   # reported, never counted
        log="$T/$tag-extra.log"
        # shellcheck disable=SC2046,SC2086
        if "$comp" "$std" "${WARN[@]}" $extra -I. $(langflags "$comp") -c "$T/impl.c" -o "$T/$tag-x.o" > "$log" 2>&1; then
            echo "INFO optional $tag $extra: clean"
        else
            n=$(grep -c 'error:' "$log")
            echo "INFO optional $tag $extra: $n diagnostics, first: $(grep -m1 'error:' "$log")"
        fi
    done
}

job_o2() {
    local comp=$1 std=$2 tag
    tag=$(tagof "$comp" "$std")
    if ! have "$comp"; then echo "SKIP $tag-O2: $comp not installed"; return; fi
    # shellcheck disable=SC2046
    check "$tag-O2" "$comp" "$std" "${WARN[@]}" -O2 -I. $(langflags "$comp") -c "$T/impl.c" -o "$T/$tag-o2.o"
}

job_nvcc() {
    local std=$1 name log
    name="nvcc${std:+-${std#-std=}}-impl"
    if ! have nvcc; then echo "SKIP ${name%-impl}: not installed"; return; fi
    # shellcheck disable=SC2086
    check "$name" nvcc $std -x cu -Xcompiler -Wall,-Wextra,-Werror -I. -c "$T/cuda.cu" -o "$T/$name.o"
    if [ -z "$std" ]; then   # nvcc's own (EDG front-end) warnings: reported, never counted
        log="$T/nvcc-all-warnings.log"
        if nvcc -x cu -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror -I. -c "$T/cuda.cu" -o "$T/nvcc-aw.o" > "$log" 2>&1; then
            echo "INFO optional nvcc -Werror all-warnings: clean"
        else
            echo "INFO optional nvcc -Werror all-warnings: $(grep -c 'error\|warning' "$log") diagnostics, first: $(grep -m1 'error\|warning' "$log")"
        fi
    fi
}

# builds prog.c with the given compiler and options and runs it on the data file
job_nvcc_curl() {   # the remote section under nvcc
    if ! have nvcc; then echo "SKIP nvcc-curl: not installed"; return; fi
    check nvcc-curl-impl nvcc -x cu -DGPUFEED_CURL -Xcompiler -Wall,-Wextra,-Werror -I. -c "$T/cuda.cu" -o "$T/nvcc-curl.o"
}

job_prog() {
    local name=$1 log
    shift
    log="$T/$name.log"
    if ! have "$1"; then echo "SKIP $name: $1 not installed"; return; fi
    if "$@" -o "$T/$name" > "$log" 2>&1 && "$T/$name" "$DATA" >> "$log" 2>&1; then ok "$name"; else bad "$name" "$log"; fi
}

# a build that must stop with the #error: NAME, the error's words, the flags
neg_build() {
    local name=$1 msg=$2 log="$T/$1.log"
    shift 2
    if gcc -std=c99 -I. "$@" -c "$T/impl.c" -o "$T/$name.o" > "$log" 2>&1; then
        echo "    (compiled, but it must not)" >> "$log"
        bad "$name" "$log"
    elif grep -q "$msg" "$log"; then
        ok "$name"
    else
        echo "    (failed without the #error message)" >> "$log"
        bad "$name" "$log"
    fi
}

# some but not all of the three allocator macros must stop the build with the #error
job_negative() {
    local combo name
    for combo in "-DGPUFEED_MALLOC(s)=malloc(s)" \
                 "-DGPUFEED_FREE(p)=free(p)" \
                 "-DGPUFEED_MALLOC(s)=malloc(s) -DGPUFEED_REALLOC(p,s)=realloc(p,s)"; do
        name="neg-partial-malloc-$(echo "$combo" | sed -e 's/-DGPUFEED_//g; s/([^)]*)=[a-z]*([^)]*)//g; s/ /+/g')"
        # shellcheck disable=SC2086
        neg_build "$name" 'define all of GPUFEED_MALLOC, GPUFEED_REALLOC and GPUFEED_FREE, or none' $combo
    done
}

# GPUFEED_NO_GZIP with GPUFEED_USE_ZLIB must stop the build with the #error
job_negative_gzip() {
    neg_build neg-no-gzip-use-zlib 'GPUFEED_NO_GZIP leaves GZIP out, GPUFEED_USE_ZLIB decodes it with zlib' -DGPUFEED_NO_GZIP -DGPUFEED_USE_ZLIB
}

# GPUFEED_USE_LIBZSTD needs zstd.h and -lzstd (after the sources)
job_libzstd() {
    local name=$1 log
    shift
    log="$T/$name.log"
    if ! have "$1"; then echo "SKIP $name: $1 not installed"; return; fi
    if ! echo '#include <zstd.h>' | "$1" -E -x c - > /dev/null 2>&1; then echo "SKIP $name: zstd.h not installed (libzstd-dev)"; return; fi
    if "$@" -x none -lzstd -o "$T/$name" > "$log" 2>&1 && "$T/$name" "$DATA" >> "$log" 2>&1; then ok "$name"; else bad "$name" "$log"; fi
}

# GPUFEED_NO_ZSTD with GPUFEED_USE_LIBZSTD must stop the build with the #error
job_negative_zstd() {
    neg_build neg-no-zstd-and-libzstd 'GPUFEED_NO_ZSTD and GPUFEED_USE_LIBZSTD contradict each other' -DGPUFEED_NO_ZSTD -DGPUFEED_USE_LIBZSTD
}

# a shuffled gather's prefetch distance out of its range must stop the build with the #error
job_negative_ahead() {
    neg_build neg-gather-ahead-1024 'GPUFEED_GATHER_AHEAD must be in \[0, 1024)' -DGPUFEED_GATHER_AHEAD=1024
    neg_build neg-gather-ahead-minus1 'GPUFEED_GATHER_AHEAD must be in \[0, 1024)' -DGPUFEED_GATHER_AHEAD=-1
    # and a page window too small for a SNAPPY element's slack
    neg_build neg-page-window-1024 'GPUFEED_PAGE_WINDOW must be at least 4096' -DGPUFEED_PAGE_WINDOW=1024
}

job_static_gcc() {
    local log="$T/static-two-tu-gcc.log"
    if gcc -std=c99 "${WARN[@]}" -I. tests/static_a.c tests/static_b.c -o "$T/static_ab" > "$log" 2>&1 &&
       "$T/static_ab" "$DATA" >> "$log" 2>&1; then ok static-two-tu-gcc; else bad static-two-tu-gcc "$log"; fi
}

job_static_cxx() {
    local log="$T/static-two-tu-clang++.log"
    if clang++ -std=c++11 "${WARN[@]}" -I. -x c++ tests/static_a.c tests/static_b.c -o "$T/static_ab_cxx" > "$log" 2>&1 &&
       "$T/static_ab_cxx" "$DATA" >> "$log" 2>&1; then ok static-two-tu-clang++; else bad static-two-tu-clang++ "$log"; fi
}

job_static_symbols() {   # no gpufeed symbol is exported from a GPUFEED_STATIC object
    local log="$T/static-two-tu-symbols.log"
    if clang -std=c99 "${WARN[@]}" -I. -c tests/static_b.c -o "$T/static_b.o" > "$log" 2>&1 &&
       ! nm -g --defined-only "$T/static_b.o" | grep -E ' (gpufeed_|gf__)' >> "$log" 2>&1; then
        ok static-two-tu-symbols
    else
        echo "    (static_b.o exports gpufeed symbols, listed above)" >> "$log"
        bad static-two-tu-symbols "$log"
    fi
}

job_extern_c() {
    local log="$T/extern-two-tu-gcc.log"
    if gcc -std=c99 "${WARN[@]}" -I. -c "$T/impl.c" -o "$T/x-impl.o" > "$log" 2>&1 &&
       gcc -std=c99 "${WARN[@]}" -I. -c "$T/user.c" -o "$T/x-user.o" >> "$log" 2>&1 &&
       gcc "$T/x-impl.o" "$T/x-user.o" -o "$T/extern_two_tu" >> "$log" 2>&1 &&
       "$T/extern_two_tu" "$DATA" >> "$log" 2>&1; then ok extern-two-tu-gcc; else bad extern-two-tu-gcc "$log"; fi
}

job_extern_cxx() {   # extern "C" linkage across languages
    local log="$T/extern-two-tu-c-impl-c++-user.log"
    if clang -std=c99 "${WARN[@]}" -I. -c "$T/impl.c" -o "$T/y-impl.o" > "$log" 2>&1 &&
       clang++ -std=c++17 "${WARN[@]}" -Wno-missing-field-initializers -I. -c "$T/user.cpp" -o "$T/y-user.o" >> "$log" 2>&1 &&
       clang++ "$T/y-impl.o" "$T/y-user.o" -o "$T/extern_two_tu_cxx" >> "$log" 2>&1 &&
       "$T/extern_two_tu_cxx" "$DATA" >> "$log" 2>&1; then ok extern-two-tu-c-impl-c++-user; else bad extern-two-tu-c-impl-c++-user "$log"; fi
}

job_extern_dup() {   # two implementations without GPUFEED_STATIC must clash at link time
    local log="$T/extern-duplicate-impl.log"
    sed -e 's/matrix_impl/matrix_impl2/g' "$T/impl.c" > "$T/impl2.c"
    printf 'int main(void) { return 0; }\n' > "$T/zmain.c"
    if clang -std=c99 -I. -c "$T/impl.c" -o "$T/z1.o" > "$log" 2>&1 &&
       clang -std=c99 -I. -c "$T/impl2.c" -o "$T/z2.o" >> "$log" 2>&1 &&
       ! gcc "$T/zmain.c" "$T/z1.o" "$T/z2.o" -o "$T/zdup" >> "$log" 2>&1 &&
       grep -q 'multiple definition' "$log"; then ok extern-duplicate-impl; else bad extern-duplicate-impl "$log"; fi
}

JOBLIST=()
add() { JOBLIST+=("$(printf '%q ' "$@")"); }   # a command line, quoted for eval

# 1. compilers x standards (slowest first)
add job_o2 g++ -std=c++17
add job_prog opt-ndebug-O2-gcc gcc -std=c99 "${WARN[@]}" -O2 -DNDEBUG -I. "$T/prog.c"
for cc in "gcc -std=c99" "gcc -std=c11" "clang -std=c99" "clang -std=c11" \
          "g++ -std=c++11" "g++ -std=c++17" "clang++ -std=c++11" "clang++ -std=c++17"; do
    # shellcheck disable=SC2086
    add job_basic $cc
done
for cc in "gcc -std=c99" "clang -std=c11" "g++ -std=c++11" "clang++ -std=c++17"; do
    # shellcheck disable=SC2086
    add job_more $cc
done
# 2. nvcc
add job_nvcc ""
add job_nvcc -std=c++17
add job_nvcc_curl
# 3. build options (prog.c checks what each does)
add job_prog opt-default-gcc gcc -std=c99 "${WARN[@]}" -I. "$T/prog.c"
add job_prog opt-no-stdio-gcc gcc -std=c99 "${WARN[@]}" -DGPUFEED_NO_STDIO -I. "$T/prog.c"
add job_prog opt-no-stdio-clang++ clang++ -std=c++11 "${WARN[@]}" -DGPUFEED_NO_STDIO -I. -x c++ "$T/prog.c"
add job_prog opt-no-snappy-gcc gcc -std=c99 "${WARN[@]}" -DGPUFEED_NO_SNAPPY -I. "$T/prog.c"
add job_prog opt-no-snappy-clang++ clang++ -std=c++11 "${WARN[@]}" -DGPUFEED_NO_SNAPPY -I. -x c++ "$T/prog.c"
add job_prog opt-no-stdio-no-snappy-clang clang -std=c11 "${WARN[@]}" -DGPUFEED_NO_STDIO -DGPUFEED_NO_SNAPPY -I. "$T/prog.c"
add job_prog opt-no-lz4-clang clang -std=c99 "${WARN[@]}" -DGPUFEED_NO_LZ4 -I. "$T/prog.c"
add job_prog opt-use-libsnappy-gcc gcc -std=c99 "${WARN[@]}" -DGPUFEED_USE_LIBSNAPPY -I. "$T/prog.c" -lsnappy
add job_prog opt-use-syslibs-clang++ clang++ -std=c++11 "${WARN[@]}" -DGPUFEED_USE_LIBSNAPPY -DGPUFEED_USE_LIBLZ4 \
    -DGPUFEED_USE_BROTLI -I. -x c++ "$T/prog.c" -x none -lsnappy -llz4 -lbrotlidec
add job_prog opt-gzip-ours-gcc gcc -std=c99 "${WARN[@]}" -DMATRIX_GZIP_PAGE -I. "$T/prog.c"
add job_prog opt-no-gzip-gcc gcc -std=c99 "${WARN[@]}" -DMATRIX_GZIP_PAGE -DGPUFEED_NO_GZIP -I. "$T/prog.c"
add job_prog opt-no-gzip-clang++ clang++ -std=c++11 "${WARN[@]}" -DMATRIX_GZIP_PAGE -DGPUFEED_NO_GZIP -I. -x c++ "$T/prog.c"
add job_prog opt-use-zlib-gcc gcc -std=c99 "${WARN[@]}" -DMATRIX_GZIP_PAGE -DGPUFEED_USE_ZLIB -I. "$T/prog.c" -lz
add job_prog opt-use-zlib-clang++ clang++ -std=c++11 "${WARN[@]}" -DMATRIX_GZIP_PAGE -DGPUFEED_USE_ZLIB -I. -x c++ "$T/prog.c" -lz
add job_negative_gzip
add job_prog opt-no-zstd-gcc gcc -std=c99 "${WARN[@]}" -DGPUFEED_NO_ZSTD -I. "$T/prog.c"
add job_prog opt-no-zstd-clang++ clang++ -std=c++11 "${WARN[@]}" -DGPUFEED_NO_ZSTD -I. -x c++ "$T/prog.c"
add job_libzstd opt-use-libzstd-gcc gcc -std=c99 "${WARN[@]}" -DGPUFEED_USE_LIBZSTD -I. "$T/prog.c"
add job_libzstd opt-use-libzstd-clang++ clang++ -std=c++11 "${WARN[@]}" -DGPUFEED_USE_LIBZSTD -I. -x c++ "$T/prog.c"
add job_negative_zstd
add job_negative_ahead
add job_prog opt-custom-malloc-gcc gcc -std=c99 "${WARN[@]}" -DMATRIX_CUSTOM_ALLOC -I. "$T/prog.c"
add job_prog opt-custom-malloc-g++ g++ -std=c++17 "${WARN[@]}" -DMATRIX_CUSTOM_ALLOC -I. -x c++ "$T/prog.c"
add job_prog opt-custom-assert-clang clang -std=c99 "${WARN[@]}" "-DGPUFEED_ASSERT(x)=((void)0)" -I. "$T/prog.c"
add job_prog opt-no-avx512-clang++ clang++ -std=c++11 "${WARN[@]}" -DGPUFEED_NO_AVX512 -I. -x c++ "$T/prog.c"
add job_prog opt-no-simd-gcc gcc -std=c99 "${WARN[@]}" -DGPUFEED_NO_SIMD -I. "$T/prog.c"
add job_prog opt-small-limits-gcc gcc -std=c99 "${WARN[@]}" -DGPUFEED_ERROR_MAX=64 -DGPUFEED_MAX_THRIFT_DEPTH=16 \
    -DGPUFEED_MAX_PAGE_HEADER_SIZE=4096 -I. "$T/prog.c"
# GPUFEED_CURL (s3:// and http(s):// through libcurl loaded at run time): no curl headers, -ldl
add job_prog opt-curl-gcc gcc -std=c99 "${WARN[@]}" -DGPUFEED_CURL -I. "$T/prog.c" -ldl
add job_prog opt-curl-clang++ clang++ -std=c++11 "${WARN[@]}" -DGPUFEED_CURL -I. -x c++ "$T/prog.c" -x none -ldl
add job_prog opt-curl-no-threads-clang clang -std=c11 "${WARN[@]}" -DGPUFEED_CURL -DGPUFEED_NO_THREADS -I. "$T/prog.c" -ldl -lpthread
add job_negative
# 4. two translation units
add job_static_gcc
add job_static_cxx
add job_static_symbols
add job_extern_c
add job_extern_cxx
add job_extern_dup

# ---- run them, JOBS at a time; print in order ----------------------------------------------

mkdir -p "$T/jobs"
i=0
running=0
for j in "${JOBLIST[@]}"; do
    i=$((i + 1))
    ( eval "$j" ) > "$T/jobs/$(printf '%03d' "$i").out" 2>&1 &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then wait -n; running=$((running - 1)); fi
done
wait
cat "$T"/jobs/*.out
pass=$(cat "$T"/jobs/*.out | grep -c '^PASS ')
fail=$(cat "$T"/jobs/*.out | grep -c '^FAIL ')
echo "$pass passed, $fail failed"
if [ "$fail" -eq 0 ]; then rm -rf "$T"; else echo "(outputs kept in $T)"; exit 1; fi
