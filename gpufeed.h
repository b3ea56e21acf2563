/* gpufeed.h -- keep GPUs fed from Parquet. One header, C99, no dependencies.

   What it is
   ----------
   gpufeed reads Parquet files with its own decoder (no Arrow, no Python at
   run time) and turns their columns into the dense arrays a trainer feeds
   to the GPU: each page is decoded straight into its place in the batch.
   This version contains: sources (file, memory, user read-at callback),
   the footer and its Thrift Compact Protocol metadata, the page walk,
   PLAIN / dictionary / RLE-bit-packed decoding of flat and nested columns
   (lists, maps, structs: repetition and definition levels), SNAPPY, LZ4,
   GZIP and ZSTD decoders, columnar-to-dense conversion over datasets of
   many files (features, statistics pruning, predicates, units, batches), the
   deterministic parallel loader (a ring of unit slots, seeded shuffles, rank
   sharding, exact resume), the file-backed tensor cache, pinned CUDA
   uploads with a device-resident mode, DLPack export of batches (PyTorch,
   CuPy, JAX, NumPy without a copy), hooks for remote sources and, with
   GPUFEED_CURL, s3:// and https:// paths (libcurl loaded at run time).

   Do this in exactly ONE C or C++ file:

       #define GPUFEED_IMPLEMENTATION
       #include "gpufeed.h"

   and include "gpufeed.h" without the define everywhere else. Defining
   GPUFEED_IMPLEMENTATION in a header that is itself included from several
   files gives duplicate symbols; GPUFEED_STATIC makes every function static
   instead, for one-file programs or to keep the symbols private.

   Usage: dense float32 batches of two features from a directory of files
   ---------------------------------------------------------------------
       gpufeed_feature ft[2] = {{0}}; gpufeed_dataset_desc d = {0};
       const char *paths[] = { "data/" };            // files, dirs, globs
       gpufeed_dataset *ds; gpufeed_reader *r; gpufeed_error err;
       gpufeed_reader_desc rd = {0}; gpufeed_batch b;
       ft[0].column = "dep_delay"; ft[0].dtype = GPUFEED_DT_F32;
       ft[1].column = "distance";  ft[1].dtype = GPUFEED_DT_F32;
       d.paths = paths; d.num_paths = 1; d.features = ft; d.num_features = 2;
       if (gpufeed_dataset_open(&ds, &d, &err)) { puts(err.message); return 1; }
       rd.batch_rows = 4096; gpufeed_reader_open(&r, ds, &rd, &err);
       while (gpufeed_reader_next(r, &b) == GPUFEED_OK)
           train(b.data, b.num_rows);                // float[num_rows][2]
       gpufeed_reader_close(r); gpufeed_dataset_close(ds);

   List features: set width (and list_policy) on a feature whose column is
   a list leaf, e.g. ft.column = "emb.list.element"; ft.width = 8: eight
   values per row (see gpufeed_feature).

   Lower level: gpufeed_file_open + gpufeed_column_open/read decode one
   column chunk page by page into typed values and validity; nested leaves
   (lists, maps) into repetition / definition levels and packed values, in
   whole rows.

   Reading path
   ------------
   This comment; then the API section (>>api to >>dlpack (API): every
   public type and function, with what it promises); then
   examples/read_dense.c (a dataset, a reader, batches: the whole path in
   one small program); then the implementation sections in order. They
   follow the data: bytes from a source, the footer's metadata, pages,
   decompressed, decoded, converted to dense features, units, batches,
   the loader, the GPU. No section calls into a later one (the cache's
   ahead-of-time build, which drives a loader, sits after the loader;
   tests/test_layout.py checks this and the rest of this layout).

   Table of contents (grep -n '/\* >>' gpufeed.h prints the map)
   -----------------
     >>options          build options and limits (their defaults)
     >>api              result codes, errors, the allocator
     >>source (API)     user sources (read-at callback), gpufeed_file_desc
     >>metadata (API)   FileMetaData as public types; gpufeed_file_open
     >>column (API)     the page-by-page column reader, gpufeed_chunk_pages
     >>dataset (API)    dtypes, features, predicates, datasets, units
     >>reader (API)     batches, views, the batch reader, gpufeed_scratch
     >>loader (API)     the deterministic parallel loader, stats
     >>cache (API)      the file-backed tensor cache, build, list, prune
     >>uploader (API)   pinned host slots, device batches
     >>dlpack (API)     batches as DLPack tensors
     >>impl             implementation starts: includes, compiler helpers
     >>base             allocation, errors, little-endian and varint helpers,
                        CRC32, hashes, the arena
     >>source           memory and file sources: open, mmap, pread
     >>remote           s3:// and http(s):// objects (GPUFEED_CURL): libcurl
                        loaded at run time, SigV4, listings, coalesced
                        parallel range reads, retries
     >>thrift           Thrift Compact Protocol decoder
     >>metadata         footer, FileMetaData, schema tree, row groups,
                        statistics; gpufeed_file_open
     >>pages            page headers
     >>codecs           SNAPPY (whole or in steps), LZ4_RAW and LZ4 (Hadoop
                        framing or raw), GZIP (DEFLATE in gzip members or a
                        zlib stream), ZSTD
     >>decode           RLE/bit-packed hybrid, levels, PLAIN, dictionary,
                        DELTA_*, BYTE_STREAM_SPLIT
     >>column           the column reader: the page walk of a chunk, pages
                        decompressed (or streamed through a window) and
                        decoded, nested leaves, chunk pages
     >>convert          dtypes, conversions to them, a feature's decoder
                        (gf__dcol) and the shared converted dictionaries
     >>dataset          the dataset's types, paths expanded, features bound
                        to columns, statistics pruning
     >>pageindex        the page index (OffsetIndex, or the page walk) of
                        a chunk
     >>unit             gpufeed_dataset_open (row groups cut into units),
                        accessors, the scratch that decodes one unit
     >>reader           the batch reader (threads split the features),
                        gpufeed_batch_view
     >>plan             the loader's state, its plan (pure functions of seed,
                        epoch, rank and world), window shuffle, unit slots
     >>cache            the tensor cache: identity, file I/O, header, checks,
                        locks, the directory, open, build while training,
                        serve; list and prune
     >>loader           the running loader: workers, the slot ring, batch assembly,
                        open, next, stats, close
     >>cachebuild       the cache ahead of time: build (drives a loader),
                        verify, info, remove
     >>gpu              the GPU backend: the CUDA runtime compiled in, or
                        the driver loaded at run time (libcuda.so.1); the
                        gather kernel (CUDA C and PTX)
     >>uploader         pinned slots, asynchronous copies, device-resident
                        mode
     >>dlpack           batches as DLPack tensors (PyTorch, CuPy, JAX, NumPy)
     >>license          MIT / public domain

   Options (define before including the implementation)
   -------
     GPUFEED_IMPLEMENTATION     emit the implementation in this file
     GPUFEED_STATIC             every public function is static
     GPUFEED_API                decoration for every public function
                                (default: extern, or static with GPUFEED_STATIC)
     GPUFEED_MALLOC(sz), GPUFEED_REALLOC(p, sz), GPUFEED_FREE(p)
                                default allocator (define all three or none);
                                a run-time allocator in the open desc wins
     GPUFEED_ASSERT(x)          internal invariants (default: assert(x), so off
                                under NDEBUG); define it empty to drop them
     GPUFEED_NO_STDIO           no path sources (no open/pread): memory and
                                callback sources only
     GPUFEED_NO_SNAPPY          leave the SNAPPY decoder out
     GPUFEED_NO_LZ4             leave the LZ4 / LZ4_RAW decoder out
     GPUFEED_USE_LIBSNAPPY      SNAPPY pages through the system libsnappy
                                instead of ours (link -lsnappy)
     GPUFEED_USE_LIBLZ4         LZ4 blocks through the system liblz4
                                instead of ours (link -llz4)
     GPUFEED_USE_BROTLI         BROTLI pages through the system
                                libbrotlidec (link -lbrotlidec); without it
                                a BROTLI column is a clear error that names
                                this macro (gpufeed has no brotli decoder of
                                its own: the format's 122 KiB built-in
                                dictionary would double the header)
     GPUFEED_NO_GZIP            leave the GZIP (DEFLATE) decoder out
     GPUFEED_USE_ZLIB           decode GZIP pages with the system zlib instead
                                of our own inflate (link -lz); same rules:
                                gzip members and zero padding, or a zlib
                                stream, exactly the page's size
     GPUFEED_NO_ZSTD            leave the ZSTD decoder out
     GPUFEED_USE_LIBZSTD        decode ZSTD pages with the system libzstd
                                instead of our decoder (needs zstd.h; link
                                -lzstd): same results, same checks of the
                                page size and frame headers, libzstd's
                                messages for the rest
     GPUFEED_NO_THREADS         the loader decodes on the caller's thread
     GPUFEED_CUDA               CUDA uploads with a host compiler (-lcudart);
                                on by default under nvcc
     GPUFEED_NO_CUDA            host batches only, even under nvcc
     GPUFEED_CUDA_DRIVER        the CUDA driver loaded at run time even where
                                the runtime could be compiled in (nvcc,
                                GPUFEED_CUDA)
     GPUFEED_CUDA_DRIVER_LIB    the driver library loaded ("libcuda.so.1")
     GPUFEED_NVTX               NVTX ranges around the pipeline's stages
     GPUFEED_NO_SIMD            scalar code only (no SSE2 / NEON / AVX-512);
                                the same bytes
     GPUFEED_NO_AVX512          no AVX-512 kernels (x86-64 with gcc or clang
                                chooses them at run time, when the CPU and
                                the OS have AVX-512F and BW); the same bytes
     GPUFEED_CURL               s3:// and http(s):// paths wherever a path
                                is taken (datasets, gpufeed_file_open,
                                gpufeed_expand_paths): libcurl is loaded at
                                run time (no curl headers, no -lcurl; -ldl
                                before glibc 2.34), the AWS_* variables
                                configure it (>>remote has the details);
                                without it such a path is an error naming
                                this macro, without libcurl one naming it
     GPUFEED_CURL_LIB           the library GPUFEED_CURL loads ("libcurl.so.4")
     Limits (a hostile file hits a limit, not the allocator):
     GPUFEED_MAX_FOOTER_SIZE       256 MiB  serialized FileMetaData
     GPUFEED_MAX_THRIFT_DEPTH      64       nesting of Thrift structs/lists
     GPUFEED_MAX_LIST_LENGTH       16 Mi    elements in one Thrift list
     GPUFEED_MAX_COLUMNS           65536    schema elements
     GPUFEED_MAX_SCHEMA_DEPTH      64       nesting of schema groups
     GPUFEED_MAX_PAGE_SIZE         1 GiB    compressed or uncompressed page
     GPUFEED_MAX_PAGE_HEADER_SIZE  16 MiB   serialized PageHeader
     GPUFEED_MAX_PAGE_VALUES       256 Mi   values in one page
     GPUFEED_MAX_DICT_ENTRIES      4 Mi     entries of one dictionary page
     GPUFEED_MAX_ZSTD_WINDOW       2 GiB    window a ZSTD frame may declare
                                            (zstd's largest: windowLog 31)
     GPUFEED_MAX_LIST_WIDTH        1 Mi     elements of one list (or map) value
     GPUFEED_MAX_RECORD_LEVELS     4 x the list width: level entries of one
                                            row of a nested column
     GPUFEED_ERROR_MAX             512      bytes of an error message
     GPUFEED_MAX_FEATURES          16384    features of one dataset (given, or
                                            the default set of a wide file):
                                            more is an error that names it
     GPUFEED_MAX_WORKERS           256      loader threads
     GPUFEED_MAX_PARTITION_KEYS    64       distinct key=value keys in a
                                            dataset's paths
     GPUFEED_MAX_OPEN_FILES        64       descriptors a dataset keeps open for
                                            files read with pread (or a quarter of
                                            `ulimit -n`, if less; more files: each
                                            opened again when read; mapped files
                                            keep none)
     GPUFEED_UNIT_BYTES            16 MiB   dense bytes of one unit at most
                                            (gpufeed_dataset_desc.unit_bytes'
                                            default): a wide row group is cut
                                            into units of this many bytes of
                                            rows, read on one after another
     GPUFEED_ALIGN                 256      alignment of batch buffers
     GPUFEED_DICT_CACHE_BYTES      256 MiB  converted dictionaries a loader's
                                            workers share
     GPUFEED_RELEASE_BYTES         4 MiB    bytes of a mapped file a decoding
                                            thread has read before it lets
                                            them go at once, at the end of
                                            a unit (within one: as soon as
                                            queued; a loader's worker: 4x), one
                                            madvise per run of adjacent
                                            ranges, so resident memory
                                            stays bounded without a call
                                            per column; a row group cut
                                            into units goes in one call,
                                            when the last of its units
                                            being decoded ends
     GPUFEED_KEEP_BYTES            0        bytes of mapped files a loader
                                            without a tensor cache keeps
                                            mapped across epochs (the first
                                            files' first bytes, in the
                                            dataset's order): it reads
                                            them every epoch, and mapping
                                            them back costs a fault per
                                            64 KiB (e.g. 512 MiB: decode-
                                            path epochs 6-11% shorter on
                                            a 187 MB file); the pages are
                                            the page cache's, shared and
                                            reclaimable, but they count in
                                            the process's RSS, which then
                                            grows with the dataset up to
                                            this much
     GPUFEED_MAP_HUGE              1        a dataset that reads at least
                                            half of a mapped file's column
                                            bytes asks for huge pages on
                                            its mapping (MADV_HUGEPAGE), so
                                            what it reads in comes into the
                                            page cache as 2 MiB folios,
                                            which later reads map at less
                                            cost; the mapping is placed a
                                            page off 2 MiB alignment, so
                                            the kernel maps them 64 KiB a
                                            fault and the RSS stays bounded
                                            (1M x 32 rows in one row group:
                                            1.1x faster once cached, first
                                            read 1.4-1.7x; but on a VM
                                            whose host takes free memory
                                            back, a first read into such
                                            memory is slower: 10M rows
                                            1.5-2.6x); 2: the advice, the
                                            mapping where the kernel puts
                                            it (whole 2 MiB folios mapped
                                            at once: 1.07x the placed
                                            mapping once cached, but up to
                                            4 MiB of the file mapped per
                                            column read: 137 against 36
                                            MiB RSS); 0: off
     GPUFEED_STREAM_STORES         1        shuffled batches that go to a GPU
                                            (an uploader's, pinned) are
                                            written with non-temporal stores
                                            (x86-64, rows of a multiple of 64
                                            bytes): whole lines to memory,
                                            where the copy engine reads
                                            them; 0: plain stores
     GPUFEED_GATHER_AHEAD          64       rows a shuffled gather prefetches
                                            ahead of the row it copies (into
                                            L2; 0: no prefetch)
     GPUFEED_REMOTE_INFLIGHT       16       requests in flight per reading thread
                                            (GPUFEED_CURL; each of these five
                                            also read from the environment
                                            variable of its name)
     GPUFEED_REMOTE_GAP            1 MiB    a unit's ranges closer than this
                                            are fetched as one (never more
                                            gap than wanted bytes)
     GPUFEED_REMOTE_PART           8 MiB    the largest request; larger ranges
                                            are cut into parts fetched in
                                            parallel
     GPUFEED_REMOTE_RETRIES        5        attempts after one that failed
                                            (5xx, 429, 408, dropped
                                            connections, short bodies,
                                            timeouts); backoff 100 ms doubling
     GPUFEED_REMOTE_TIMEOUT        120      seconds one attempt may take (and
                                            15 s without a byte: stalled)
     GPUFEED_REMOTE_BUFFER         256 MiB  fetched bytes a dataset keeps for
                                            its readers (least recently used
                                            dropped)
     GPUFEED_REMOTE_TAIL           64 KiB   an object's last bytes read when
                                            it opens (size, ETag, footer)
     GPUFEED_PAGE_WINDOW           128 KiB  a dense reader streams a larger
                                            SNAPPY page of fixed-width or
                                            dictionary-encoded values
                                            through a window this size per
                                            column, not a page-sized buffer
                                            (>= 4096; it grows for a page
                                            that needs more)

   Byte order: Parquet is little-endian and so is every host gpufeed
   supports (x86-64, aarch64). The implementation checks this at compile
   time where the compiler says, and at run time in gpufeed_file_open.

   Threads: no global mutable state (but for one flag: with GPUFEED_CURL,
   libcurl's process-wide curl_global_init runs once, under pthread_once;
   see >>remote). A gpufeed_file is read-only after
   open; any number of gpufeed_column readers may run on one file from
   different threads (the source's read callback must then be thread-safe,
   as pread is). Each object keeps the message of its own last error.
*/
#ifndef GPUFEED_H
#define GPUFEED_H

/* >>options */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define GPUFEED_VERSION_MAJOR 0
#define GPUFEED_VERSION_MINOR 1
#define GPUFEED_VERSION_PATCH 0

#ifndef GPUFEED_API
#  ifdef GPUFEED_STATIC
#    if defined(__GNUC__) || defined(__clang__)
#      define GPUFEED_API static __attribute__((unused))
#    else
#      define GPUFEED_API static
#    endif
#  else
#    define GPUFEED_API extern
#  endif
#endif

#ifndef GPUFEED_MAX_FOOTER_SIZE
#define GPUFEED_MAX_FOOTER_SIZE (256u << 20)
#endif
#ifndef GPUFEED_MAX_THRIFT_DEPTH
#define GPUFEED_MAX_THRIFT_DEPTH 64
#endif
#ifndef GPUFEED_MAX_LIST_LENGTH
#define GPUFEED_MAX_LIST_LENGTH (16u << 20)
#endif
#ifndef GPUFEED_MAX_COLUMNS
#define GPUFEED_MAX_COLUMNS 65536
#endif
#ifndef GPUFEED_MAX_SCHEMA_DEPTH
#define GPUFEED_MAX_SCHEMA_DEPTH 64
#endif
#ifndef GPUFEED_MAX_PAGE_SIZE
#define GPUFEED_MAX_PAGE_SIZE (1u << 30)
#endif
#ifndef GPUFEED_MAX_PAGE_HEADER_SIZE
#define GPUFEED_MAX_PAGE_HEADER_SIZE (16u << 20)
#endif
#ifndef GPUFEED_MAX_PAGE_VALUES
#define GPUFEED_MAX_PAGE_VALUES (256u << 20)
#endif
#ifndef GPUFEED_MAX_DICT_ENTRIES
#define GPUFEED_MAX_DICT_ENTRIES (4u << 20)
#endif
#ifndef GPUFEED_MAX_ZSTD_WINDOW
#define GPUFEED_MAX_ZSTD_WINDOW (1ull << 31)
#endif
#ifndef GPUFEED_DICT_CACHE_BYTES
#define GPUFEED_DICT_CACHE_BYTES (256u << 20)
#endif
#ifndef GPUFEED_RELEASE_BYTES
#define GPUFEED_RELEASE_BYTES (4u << 20)
#endif
#ifndef GPUFEED_KEEP_BYTES
#define GPUFEED_KEEP_BYTES 0
#endif
#ifndef GPUFEED_STREAM_STORES
#define GPUFEED_STREAM_STORES 1
#endif
#ifndef GPUFEED_GATHER_AHEAD
#define GPUFEED_GATHER_AHEAD 64
#endif
#ifndef GPUFEED_MAP_HUGE
#define GPUFEED_MAP_HUGE 1
#endif
#ifndef GPUFEED_PAGE_WINDOW
#define GPUFEED_PAGE_WINDOW (128u << 10)
#endif
#ifndef GPUFEED_REMOTE_INFLIGHT
#define GPUFEED_REMOTE_INFLIGHT 16
#endif
#ifndef GPUFEED_REMOTE_GAP
#define GPUFEED_REMOTE_GAP (1u << 20)
#endif
#ifndef GPUFEED_REMOTE_PART
#define GPUFEED_REMOTE_PART (8u << 20)
#endif
#ifndef GPUFEED_REMOTE_RETRIES
#define GPUFEED_REMOTE_RETRIES 5
#endif
#ifndef GPUFEED_REMOTE_TIMEOUT
#define GPUFEED_REMOTE_TIMEOUT 120
#endif
#ifndef GPUFEED_REMOTE_BUFFER
#define GPUFEED_REMOTE_BUFFER (256u << 20)
#endif
#ifndef GPUFEED_REMOTE_TAIL
#define GPUFEED_REMOTE_TAIL (64u << 10)
#endif
#ifndef GPUFEED_CURL_LIB
#define GPUFEED_CURL_LIB "libcurl.so.4"
#endif
#ifndef GPUFEED_MAX_LIST_WIDTH
#define GPUFEED_MAX_LIST_WIDTH (1u << 20)
#endif
#ifndef GPUFEED_MAX_RECORD_LEVELS
#define GPUFEED_MAX_RECORD_LEVELS ((uint64_t)4 * GPUFEED_MAX_LIST_WIDTH)
#endif
#ifndef GPUFEED_MAX_FEATURES
#define GPUFEED_MAX_FEATURES 16384
#endif
#ifndef GPUFEED_MAX_WORKERS
#define GPUFEED_MAX_WORKERS 256
#endif
#ifndef GPUFEED_UNIT_BYTES
#define GPUFEED_UNIT_BYTES ((int64_t)16 << 20)
#endif
#ifndef GPUFEED_MAX_OPEN_FILES
#define GPUFEED_MAX_OPEN_FILES 64
#endif
#ifndef GPUFEED_ALIGN
#define GPUFEED_ALIGN 256
#endif
#ifndef GPUFEED_ERROR_MAX
#define GPUFEED_ERROR_MAX 512
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* >>api ------------------------------------------------------------------ */

/* Result codes. 0 is success, GPUFEED_DONE (positive) ends an iteration,
   errors are negative and grouped by subsystem in ranges of 100. */
typedef enum gpufeed_result {
    GPUFEED_OK = 0,
    GPUFEED_DONE = 1,                   /* iteration finished, not an error */
    /* general -1 .. -99 */
    GPUFEED_ERR_INVALID_ARG = -1,       /* bad argument or option */
    GPUFEED_ERR_OUT_OF_MEMORY = -2,
    GPUFEED_ERR_LIMIT = -3,             /* a GPUFEED_MAX_* limit was hit */
    GPUFEED_ERR_UNSUPPORTED = -4,       /* valid Parquet, not supported yet */
    GPUFEED_ERR_PLATFORM = -5,          /* e.g. big-endian host */
    GPUFEED_ERR_USAGE = -6,             /* a call the API's contract does not allow now
                                           (e.g. a second thread in one loader's next) */
    /* source -100 .. -199 */
    GPUFEED_ERR_IO = -100,              /* open/read failed */
    GPUFEED_ERR_TRUNCATED = -101,       /* read past the end of the source */
    /* metadata -200 .. -299 */
    GPUFEED_ERR_NOT_PARQUET = -200,     /* bad magic */
    GPUFEED_ERR_FOOTER = -201,          /* footer length / layout invalid */
    GPUFEED_ERR_THRIFT = -202,          /* malformed Thrift */
    GPUFEED_ERR_SCHEMA = -203,          /* inconsistent schema / metadata */
    GPUFEED_ERR_ENCRYPTED = -204,       /* encrypted file or column */
    /* pages -300 .. -399 */
    GPUFEED_ERR_PAGE = -300,            /* bad page header or page layout */
    GPUFEED_ERR_CHECKSUM = -301,        /* page CRC mismatch */
    /* decode -400 .. -499 */
    GPUFEED_ERR_CODEC = -400,           /* corrupt compressed data */
    GPUFEED_ERR_ENCODING = -401,        /* corrupt or unknown encoding */
    GPUFEED_ERR_CORRUPT = -402,         /* values/levels disagree with headers */
    GPUFEED_ERR_DICTIONARY = -403,      /* missing dictionary / index out of range */
    /* upload -500 .. -599 */
    GPUFEED_ERR_NO_DEVICE = -500,       /* no CUDA build, driver or device */
    GPUFEED_ERR_CUDA = -501             /* a CUDA call failed */
} gpufeed_result;

/* A short, static description of a result code. */
GPUFEED_API const char *gpufeed_result_string(gpufeed_result r);

/* Error details filled by functions that create an object (when the object
   does not exist yet to hold its own message). */
typedef struct gpufeed_error {
    gpufeed_result code;
    char message[GPUFEED_ERROR_MAX];
} gpufeed_error;

/* Run-time allocator. All three functions or none (then GPUFEED_MALLOC
   and friends are used). `user` is passed back to each call. */
typedef struct gpufeed_allocator {
    void *(*alloc)(void *user, size_t size);
    void *(*realloc)(void *user, void *ptr, size_t size);
    void (*free)(void *user, void *ptr);
    void *user;
} gpufeed_allocator;

/* >>source (API): a user source is a read-at callback plus a size. read_at must
   fill exactly `len` bytes at `offset` and return 0, or return non-zero.
   It is called from any thread that reads the file. */
typedef struct gpufeed_source {
    int (*read_at)(void *ctx, uint64_t offset, void *buf, size_t len);
    void (*close)(void *ctx);          /* optional: called by gpufeed_file_close,
                                          and by gpufeed_file_open when it fails
                                          (the file owns the source from then on) */
    void *ctx;
    uint64_t size;                     /* total size in bytes */
    /* optional: a hint that these byte ranges are about to be read (the
       column chunks of one unit, called by the thread that decodes it, just
       before it reads them). A remote source can fetch them in a few large
       requests and serve the read_at calls that follow from memory. */
    void (*will_read)(void *ctx, const uint64_t *offsets, const uint64_t *lengths, int32_t n);
    /* optional: why the last read_at that failed did (a remote source: the
       request, its byte range, the HTTP status), written into buf; gpufeed
       adds it to the message of the read's error */
    void (*why)(void *ctx, char *buf, size_t cap);
} gpufeed_source;

/* What the s3:// and https:// objects of a dataset (GPUFEED_CURL, see
   >>remote) cost so far: gpufeed_dataset_remote_stats. Listing a prefix
   or glob happens before the dataset exists and is not counted. */
typedef struct gpufeed_remote_stats {
    uint64_t requests;                 /* HTTP requests sent, every attempt */
    uint64_t open_gets;                /* of them: GETs of objects' first and last
                                          bytes while opening (footers) */
    uint64_t gets;                     /* GETs of byte ranges after that (units) */
    uint64_t bytes;                    /* body bytes received */
    uint64_t retries;                  /* attempts after one that failed */
    uint64_t failures;                 /* requests given up (an error was returned) */
    uint64_t reads, reads_served;      /* read_at calls; of them, served from fetched
                                          ranges without a request */
} gpufeed_remote_stats;

enum {
    GPUFEED_OPEN_VERIFY_CRC = 1u << 0, /* check page CRCs where present */
    GPUFEED_OPEN_MMAP = 1u << 1,       /* map the file also on a network file system.
                                          Default: a local file is mapped (no copies,
                                          but one truncated while it is read raises
                                          SIGBUS), a file on NFS, Lustre, FUSE, SMB,
                                          Ceph, GPFS, 9P or AFS (statfs) is read with
                                          pread */
    GPUFEED_OPEN_PREAD = 1u << 2       /* every file through positioned reads instead
                                          of a mapping (files that may shrink while
                                          they are read: an error, never a signal) */
};

/* Exactly one of path, data or source. Zero-initialise: {0} = defaults. */
typedef struct gpufeed_file_desc {
    const char *path;                  /* a local file (mapped, see GPUFEED_OPEN_MMAP) */
    const void *data;                  /* or a memory buffer ...          */
    size_t data_size;                  /* ... of this size (not copied)   */
    const gpufeed_source *source;      /* or a user read-at callback      */
    const char *name;                  /* name used in messages (default: path,
                                          "<memory>" or "<source>") */
    uint32_t flags;                    /* GPUFEED_OPEN_* */
    gpufeed_allocator allocator;       /* optional */
} gpufeed_file_desc;

/* >>metadata (API): the footer's FileMetaData as public types; files -------- */
typedef enum gpufeed_physical_type {
    GPUFEED_BOOLEAN = 0, GPUFEED_INT32 = 1, GPUFEED_INT64 = 2,
    GPUFEED_INT96 = 3, GPUFEED_FLOAT = 4, GPUFEED_DOUBLE = 5,
    GPUFEED_BYTE_ARRAY = 6, GPUFEED_FIXED_LEN_BYTE_ARRAY = 7,
    GPUFEED_GROUP = 100                /* schema node without a type */
} gpufeed_physical_type;

/* Logical annotation, unified from LogicalType and legacy ConvertedType. */
typedef enum gpufeed_logical_type {
    GPUFEED_LT_NONE = 0, GPUFEED_LT_STRING, GPUFEED_LT_ENUM, GPUFEED_LT_JSON,
    GPUFEED_LT_BSON, GPUFEED_LT_UUID, GPUFEED_LT_DECIMAL, GPUFEED_LT_DATE,
    GPUFEED_LT_TIME, GPUFEED_LT_TIMESTAMP, GPUFEED_LT_INTEGER,
    GPUFEED_LT_FLOAT16, GPUFEED_LT_LIST, GPUFEED_LT_MAP,
    GPUFEED_LT_MAP_KEY_VALUE, GPUFEED_LT_INTERVAL, GPUFEED_LT_NULL,
    GPUFEED_LT_VARIANT, GPUFEED_LT_GEOMETRY, GPUFEED_LT_GEOGRAPHY,
    GPUFEED_LT_OTHER                   /* unknown annotation: read as physical */
} gpufeed_logical_type;

typedef enum gpufeed_time_unit {
    GPUFEED_UNIT_NONE = 0, GPUFEED_UNIT_MILLIS, GPUFEED_UNIT_MICROS,
    GPUFEED_UNIT_NANOS,
    GPUFEED_UNIT_SECONDS               /* features and predicates only (not in files) */
} gpufeed_time_unit;

typedef enum gpufeed_repetition {
    GPUFEED_REQUIRED = 0, GPUFEED_OPTIONAL = 1, GPUFEED_REPEATED = 2
} gpufeed_repetition;

typedef enum gpufeed_codec {
    GPUFEED_CODEC_UNCOMPRESSED = 0, GPUFEED_CODEC_SNAPPY = 1,
    GPUFEED_CODEC_GZIP = 2, GPUFEED_CODEC_LZO = 3, GPUFEED_CODEC_BROTLI = 4,
    GPUFEED_CODEC_LZ4 = 5, GPUFEED_CODEC_ZSTD = 6, GPUFEED_CODEC_LZ4_RAW = 7
} gpufeed_codec;

typedef enum gpufeed_encoding {
    GPUFEED_ENC_PLAIN = 0, GPUFEED_ENC_GROUP_VAR_INT = 1,
    GPUFEED_ENC_PLAIN_DICTIONARY = 2, GPUFEED_ENC_RLE = 3,
    GPUFEED_ENC_BIT_PACKED = 4, GPUFEED_ENC_DELTA_BINARY_PACKED = 5,
    GPUFEED_ENC_DELTA_LENGTH_BYTE_ARRAY = 6, GPUFEED_ENC_DELTA_BYTE_ARRAY = 7,
    GPUFEED_ENC_RLE_DICTIONARY = 8, GPUFEED_ENC_BYTE_STREAM_SPLIT = 9
} gpufeed_encoding;

/* One node of the schema tree (depth-first order, node 0 is the root). */
typedef struct gpufeed_schema_node {
    const char *name;
    const char *path;                  /* dotted path from the root's child */
    int32_t parent;                    /* -1 for the root */
    int32_t num_children;
    int32_t first_child;               /* index of the first child, or -1 */
    int32_t depth;                     /* root 0 */
    int32_t column;                    /* leaf column index, -1 for groups */
    gpufeed_physical_type physical;    /* GPUFEED_GROUP for groups */
    int32_t type_length;               /* FIXED_LEN_BYTE_ARRAY width */
    gpufeed_repetition repetition;
    gpufeed_logical_type logical;
    int32_t converted_type;            /* raw legacy ConvertedType, -1 if none */
    int32_t scale, precision;          /* DECIMAL */
    gpufeed_time_unit unit;            /* TIME / TIMESTAMP */
    int32_t is_adjusted_to_utc;        /* TIME / TIMESTAMP */
    int32_t int_bit_width;             /* INTEGER: 8, 16, 32, 64 */
    int32_t int_signed;                /* INTEGER */
    int32_t has_field_id, field_id;
    int16_t max_def, max_rep;          /* definition / repetition levels */
} gpufeed_schema_node;

/* Leaf columns, in schema order. */
typedef struct gpufeed_column_info {
    const char *path;                  /* dotted path */
    int32_t node;                      /* index into the schema nodes */
    gpufeed_physical_type physical;
    int32_t type_length;
    int16_t max_def, max_rep;
} gpufeed_column_info;

/* Column-chunk statistics as stored (min/max in PLAIN encoding, without a
   length prefix for BYTE_ARRAY). Prefer min_value/max_value; the legacy
   min/max fields are reported separately because their sort order was
   undefined for some types. */
typedef struct gpufeed_statistics {
    int32_t has_min_value, has_max_value;    /* fields 6 / 5 */
    int32_t has_min_legacy, has_max_legacy;  /* fields 2 / 1 */
    int32_t has_null_count, has_distinct_count;
    int32_t is_min_exact, is_max_exact;      /* -1 unknown, 0, 1 */
    const uint8_t *min_value, *max_value, *min_legacy, *max_legacy;
    uint32_t min_value_len, max_value_len, min_legacy_len, max_legacy_len;
    int64_t null_count, distinct_count;
} gpufeed_statistics;

typedef struct gpufeed_chunk_info {
    int32_t column;
    int32_t has_metadata;              /* 0: encrypted or missing */
    int32_t encrypted;
    gpufeed_physical_type physical;
    gpufeed_codec codec;
    uint32_t encodings;                /* bit mask, 1u << gpufeed_encoding */
    int64_t num_values;
    int64_t total_compressed_size, total_uncompressed_size;
    int64_t data_page_offset;
    int64_t dictionary_page_offset;    /* 0 or -1 when absent */
    int64_t index_page_offset;         /* -1 when absent */
    int64_t file_offset;
    const char *file_path;             /* NULL: this file */
    int64_t offset_index_offset;       /* -1 when absent */
    int32_t offset_index_length;
    int64_t column_index_offset;       /* -1 when absent */
    int32_t column_index_length;
    int64_t bloom_filter_offset;       /* -1 when absent */
    int32_t bloom_filter_length;
    int32_t has_statistics;
    gpufeed_statistics statistics;
} gpufeed_chunk_info;

typedef struct gpufeed_row_group_info {
    int64_t num_rows;
    int64_t total_byte_size;
    int64_t total_compressed_size;     /* -1 when absent */
    int64_t file_offset;               /* -1 when absent */
    int32_t ordinal;                   /* -1 when absent */
    const gpufeed_chunk_info *chunks;  /* one per leaf column */
} gpufeed_row_group_info;

typedef struct gpufeed_key_value {
    const char *key;
    const char *value;                 /* NULL when absent */
} gpufeed_key_value;

typedef struct gpufeed_metadata {
    int32_t version;
    int64_t num_rows;
    const char *created_by;            /* NULL when absent */
    int32_t num_nodes;
    const gpufeed_schema_node *nodes;
    int32_t num_columns;
    const gpufeed_column_info *columns;
    int32_t num_row_groups;
    const gpufeed_row_group_info *row_groups;
    int32_t num_key_values;
    const gpufeed_key_value *key_values;
    uint64_t file_size;
    uint32_t footer_length;
} gpufeed_metadata;

typedef struct gpufeed_file gpufeed_file;

/* Opens a Parquet file and parses its metadata. On failure returns the
   error, sets *out to NULL and fills *err (if not NULL). */
GPUFEED_API gpufeed_result gpufeed_file_open(gpufeed_file **out,
    const gpufeed_file_desc *desc, gpufeed_error *err);
GPUFEED_API void gpufeed_file_close(gpufeed_file *f);
GPUFEED_API const gpufeed_metadata *gpufeed_file_metadata(const gpufeed_file *f);
/* Leaf column index by dotted path, or -1. */
GPUFEED_API int32_t gpufeed_file_find_column(const gpufeed_file *f, const char *path);
/* The serialized footer (FileMetaData bytes) - e.g. for cache identity. */
GPUFEED_API const uint8_t *gpufeed_file_footer(const gpufeed_file *f, size_t *len);
GPUFEED_API const char *gpufeed_file_name(const gpufeed_file *f);
GPUFEED_API const char *gpufeed_physical_type_name(gpufeed_physical_type t);
GPUFEED_API const char *gpufeed_logical_type_name(gpufeed_logical_type t);
GPUFEED_API const char *gpufeed_codec_name(gpufeed_codec c);
GPUFEED_API const char *gpufeed_encoding_name(gpufeed_encoding e);

/* >>column (API): a page-by-page reader of one column chunk (any leaf column:
   flat ones as values + validity, nested ones as levels + packed values). */
typedef struct gpufeed_bytes {
    const uint8_t *ptr;
    uint32_t len;
} gpufeed_bytes;

typedef struct gpufeed_column_desc {
    int64_t max_rows;                  /* rows per read, default 65536 */
    uint32_t flags;                    /* GPUFEED_OPEN_VERIFY_CRC */
} gpufeed_column_desc;

/* Rows handed out by gpufeed_column_read. values holds num_rows slots (a
   null slot is zero) of the column's value type:
     BOOLEAN uint8_t (0/1)        INT32 int32_t      INT64 int64_t
     INT96 int64_t (nanoseconds since 1970-01-01, from Julian day + nanos)
     FLOAT float   DOUBLE double  BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY gpufeed_bytes
   valid[i] is 1 when row i is present, 0 when null; valid is NULL when the
   column cannot be null. Everything stays valid until the next read or
   close. A batch of a flat column never spans two pages; its level fields
   are NULL / 0.

   Nested leaves (max_rep > 0: under a list, map or repeated field): a batch
   holds whole rows, num_rows of them from first_row on, as num_levels level
   entries (the Dremel encoding: rep_levels[i] == 0 starts a row, r > 0
   adds an element to the open list at repetition depth r; def_levels[i] ==
   max_def is a value, lower levels say which ancestor is undefined: a null,
   an empty list, a null element) and num_values values packed in `values`,
   one per entry whose definition level is max_def, in order. valid is NULL;
   null_count is num_levels - num_values. A row is never split across
   batches, even when it spans pages (v1 pages may split a row, and old
   writers split rows in v2 pages too), so a batch may span pages: `page`
   is the first one. A batch ends at a row boundary once it holds max_rows
   rows or max_rows level entries. Limits: GPUFEED_MAX_LIST_WIDTH elements in
   one list, GPUFEED_MAX_RECORD_LEVELS entries in one row. */
typedef struct gpufeed_column_batch {
    int64_t first_row;                 /* within the row group */
    int64_t num_rows;
    int64_t null_count;
    const void *values;
    const uint8_t *valid;
    int32_t page;                      /* data page index within the chunk */
    gpufeed_encoding encoding;         /* of the page's values */
    /* nested leaves only (NULL / 0 for flat columns): */
    const int16_t *rep_levels;         /* [num_levels] */
    const int16_t *def_levels;         /* [num_levels] */
    int64_t num_levels;
    int64_t num_values;                /* packed values in `values` */
} gpufeed_column_batch;

typedef struct gpufeed_column gpufeed_column;

GPUFEED_API gpufeed_result gpufeed_column_open(gpufeed_column **out, gpufeed_file *f,
    int32_t row_group, int32_t column, const gpufeed_column_desc *desc, gpufeed_error *err);
/* GPUFEED_OK with rows, GPUFEED_DONE at the end of the chunk, or an error
   (then gpufeed_column_error tells what and where). */
GPUFEED_API gpufeed_result gpufeed_column_read(gpufeed_column *c,
    gpufeed_column_batch *out);
GPUFEED_API const char *gpufeed_column_error(const gpufeed_column *c);
GPUFEED_API uint64_t gpufeed_column_bytes_read(const gpufeed_column *c);
GPUFEED_API void gpufeed_column_close(gpufeed_column *c);

/* The pages of one column chunk, from their headers only (no page data is
   decompressed). Fills up to `cap` entries and sets *count to the number of
   pages in the chunk; call with cap 0 first to size the array. Works for
   every column, nested ones included. */
typedef struct gpufeed_page_info {
    int32_t type;                      /* 0 DATA_PAGE, 2 DICTIONARY_PAGE, 3 DATA_PAGE_V2, ... */
    gpufeed_encoding encoding;
    int64_t offset;                    /* file offset of the page header */
    int32_t header_size, compressed_size, uncompressed_size;
    int32_t num_values;                /* level entries (data) or entries (dictionary) */
    int32_t num_rows;                  /* v2 pages; -1 when not stated */
    int64_t first_value;               /* index of the first value within the chunk */
    int32_t has_crc;
} gpufeed_page_info;

GPUFEED_API gpufeed_result gpufeed_chunk_pages(gpufeed_file *f, int32_t row_group,
    int32_t column, gpufeed_page_info *pages, int64_t cap, int64_t *count,
    gpufeed_error *err);

/* >>dataset (API): dtypes, features, predicates, datasets, units --------- */

/* Output element types of dense features. */
typedef enum gpufeed_dtype {
    GPUFEED_DT_F32 = 0, GPUFEED_DT_F64, GPUFEED_DT_F16, GPUFEED_DT_BF16,
    GPUFEED_DT_I32, GPUFEED_DT_I64, GPUFEED_DT_U8
} gpufeed_dtype;

enum { GPUFEED_NULL_FILL = 0, GPUFEED_NULL_ERROR = 1 };
/* SAFE (default): exact or an error naming the feature, file, row group and
   row: an integer that does not fit the dtype, or that a float dtype cannot
   hold exactly (beyond 2^24 in f32, 2^53 in f64: int64 IDs are hashed or
   kept as i64, never rounded), a float with a fractional part / NaN / inf
   going to an integer dtype, a decimal with a fractional part going to an
   integer dtype, a time that loses digits in the feature's unit. UNSAFE:
   truncate toward zero and saturate (NaN becomes 0); integers round to the
   nearest float (even), as do f16 / bf16. Decimals and floats convert to
   floats by rounding either way. */
enum { GPUFEED_CAST_SAFE = 0, GPUFEED_CAST_UNSAFE = 1 };
/* A feature's column missing from some files of the dataset (a column a
   later file adds): GPUFEED_MISSING_ERROR (default) names the first such
   file; GPUFEED_MISSING_NULL reads it as nulls there (null_policy, fill and
   validity apply). */
enum { GPUFEED_MISSING_ERROR = 0, GPUFEED_MISSING_NULL = 1 };

/* One dense feature: a leaf column converted to `dtype`. Zero-initialise,
   then set `column` and `dtype`. */
typedef struct gpufeed_feature {
    const char *column;                /* dotted path of a leaf column */
    gpufeed_dtype dtype;
    int32_t null_policy;               /* GPUFEED_NULL_FILL or GPUFEED_NULL_ERROR */
    double fill;                       /* value written for nulls */
    int32_t validity;                  /* 1: also output a uint8 mask per row */
    int32_t cast;                      /* GPUFEED_CAST_SAFE or GPUFEED_CAST_UNSAFE */
    uint64_t hash_buckets;             /* id = hash % buckets: STRING/BINARY/FLBA values
                                          hashed as bytes, integers (IDs) as their
                                          int64 value's 8 little-endian bytes (the
                                          same id from INT32 and INT64 files) */
    uint64_t hash_seed;                /* seed of gpufeed_hash64 */
    int32_t width;                     /* list columns: elements per row (W), 0 = scalar */
    int32_t list_policy;               /* list columns: GPUFEED_LIST_* (other lengths) */
    int32_t list_lengths;              /* 1: one value per row, the list's length */
    int32_t unit;                      /* TIMESTAMP / TIME / DATE columns: the unit values
                                          arrive in (GPUFEED_UNIT_SECONDS, _MILLIS, _MICROS,
                                          _NANOS), whatever each file's unit (INT96: ns;
                                          DATE: days unless a unit is given); 0: the unit
                                          of the dataset's first file */
    int32_t missing;                   /* GPUFEED_MISSING_ERROR or GPUFEED_MISSING_NULL */
} gpufeed_feature;

/* List features. A feature on a leaf with exactly one repeated level (a
   list<T>, a map's keys or values, a legacy 2-level list, a repeated field)
   takes `width` W elements per row: W consecutive values of the dtype, in
   the row (row-major layout) or as a [rows, W] block (per-feature layout).
   Width is required: pyarrow writes fixed_size_list<T, W> as a plain list.
   A list of another length follows list_policy:
     GPUFEED_LIST_ERROR (default)  an error naming file, row group, column,
                                   row and the length found;
     GPUFEED_LIST_PAD              shorter lists padded with `fill`, longer
                                   ones an error;
     GPUFEED_LIST_TRUNCATE         shorter lists padded, longer ones cut to
                                   their first W elements.
   A null list follows null_policy (FILL: W fills, and validity 0 in the
   mask) and so does a null element (FILL: the fill in its slot). An empty
   list is a list of length 0. list_lengths = 1 (width 0) makes a second kind
   of feature on the same column: one value per row, the list's length
   before padding or truncation (a null list is null: its fill, default 0 -
   set fill -1 to tell it from an empty list - or an error). Predicates on
   list columns are refused. */
enum { GPUFEED_LIST_ERROR = 0, GPUFEED_LIST_PAD = 1, GPUFEED_LIST_TRUNCATE = 2 };

/* Predicates: `column op constant`, ANDed. Used to skip row groups by their
   statistics and then applied exactly to rows (null never matches a
   comparison). Constants are numbers (int64 or double) or byte strings; a
   string constant needs a STRING/BINARY column and vice versa. */
typedef enum gpufeed_op {
    GPUFEED_OP_LT = 0, GPUFEED_OP_LE, GPUFEED_OP_EQ, GPUFEED_OP_GE, GPUFEED_OP_GT,
    GPUFEED_OP_BETWEEN, GPUFEED_OP_IN, GPUFEED_OP_IS_NULL, GPUFEED_OP_IS_NOT_NULL
} gpufeed_op;

typedef enum gpufeed_value_kind {
    GPUFEED_VAL_INT = 0, GPUFEED_VAL_DOUBLE, GPUFEED_VAL_STRING, GPUFEED_VAL_UINT
} gpufeed_value_kind;

typedef struct gpufeed_value {
    gpufeed_value_kind kind;
    int64_t i;
    uint64_t u;                        /* GPUFEED_VAL_UINT */
    double d;
    const char *s;                     /* STRING: bytes ... */
    size_t len;                        /* ... and their length */
} gpufeed_value;

typedef struct gpufeed_predicate {
    const char *column;
    gpufeed_op op;
    gpufeed_value a, b;                /* b: upper bound of BETWEEN (inclusive) */
    const gpufeed_value *set;          /* IN */
    int32_t set_size;
    int32_t unit;                      /* TIMESTAMP / TIME / DATE columns: the unit of the
                                          constants (as gpufeed_feature.unit; 0: the
                                          dataset's first file's): instants compare,
                                          whatever each file's unit */
} gpufeed_predicate;

enum {
    GPUFEED_LAYOUT_ROW_MAJOR = 0,      /* one buffer [rows, total_width] */
    GPUFEED_LAYOUT_PER_FEATURE = 1     /* one buffer [rows, width] per feature */
};

typedef struct gpufeed_dataset_desc {
    const char *const *paths;          /* files, directories (their *.parquet,
                                          sorted) or glob patterns; with
                                          GPUFEED_CURL also s3:// objects,
                                          prefixes and globs, http(s):// URLs
                                          (see >>remote) */
    int32_t num_paths;
    const gpufeed_feature *features;   /* NULL: every numeric and boolean leaf
                                          of the first file (not under a list
                                          or map), as f32 */
    int32_t num_features;
    const gpufeed_predicate *where;    /* ANDed */
    int32_t num_where;
    int64_t unit_rows;                 /* target rows per unit (default 65536); a
                                          unit grows up to 4x rather than cut
                                          through pages larger than a quarter of it */
    int64_t unit_bytes;                /* dense bytes per unit at most (0: the
                                          default, GPUFEED_UNIT_BYTES; -1: no
                                          bound). Where unit_rows rows are more,
                                          the dataset is wide: each row group is
                                          cut into equal units of fewer rows, which
                                          a loader decodes in order, each worker
                                          its share of the features (memory
                                          follows the bytes in flight, not the
                                          row group) */
    int32_t layout;                    /* GPUFEED_LAYOUT_* */
    uint32_t flags;                    /* GPUFEED_OPEN_* */
    gpufeed_allocator allocator;
    /* Remote or custom storage: with open_source set, every entry of paths
       is a name (e.g. a URL) that open_source turns into a source (no
       directory listing, no globbing). It fills *src (the dataset owns it
       from then on and calls src->close) and writes into identity a string
       that changes whenever the object does (e.g. size + ETag +
       Last-Modified): the tensor cache keys on it instead of a local file's
       inode and times. Returns 0, or non-zero with a reason in why. */
    int (*open_source)(void *user, const char *path, gpufeed_source *src,
                       char *identity, size_t identity_cap, char *why, size_t why_cap);
    void *source_user;
} gpufeed_dataset_desc;

typedef struct gpufeed_dataset gpufeed_dataset;

/* A unit of work: a row range inside one row group. */
typedef struct gpufeed_unit {
    int32_t file, row_group;
    int64_t first_row, num_rows;       /* within the row group */
} gpufeed_unit;

typedef struct gpufeed_dataset_info {
    int32_t num_files;
    int32_t num_features;
    int64_t num_units;
    int64_t num_rows;                  /* rows in units (after row-group pruning,
                                          before row predicates) */
    int64_t total_rows;                /* rows in all files */
    int32_t row_groups, row_groups_pruned;
    int64_t row_bytes;                 /* bytes of one dense row (data only) */
    int32_t layout;
} gpufeed_dataset_info;

GPUFEED_API gpufeed_result gpufeed_dataset_open(gpufeed_dataset **out,
    const gpufeed_dataset_desc *desc, gpufeed_error *err);
/* Closes the dataset; loaders still open on it keep it until the last of
   them closes (see "Threads and lifetimes" at gpufeed_loader_open). */
GPUFEED_API void gpufeed_dataset_close(gpufeed_dataset *ds);
GPUFEED_API void gpufeed_dataset_get_info(const gpufeed_dataset *ds, gpufeed_dataset_info *info);
GPUFEED_API const gpufeed_feature *gpufeed_dataset_feature(const gpufeed_dataset *ds, int32_t i);
GPUFEED_API const char *gpufeed_dataset_file_path(const gpufeed_dataset *ds, int32_t file);
GPUFEED_API const gpufeed_unit *gpufeed_dataset_unit(const gpufeed_dataset *ds, int64_t i);
/* Source bytes read so far by all readers of this dataset. */
GPUFEED_API uint64_t gpufeed_dataset_bytes_read(const gpufeed_dataset *ds);
/* Microseconds readers of this dataset spent in the source's reads so far. */
GPUFEED_API uint64_t gpufeed_dataset_read_us(const gpufeed_dataset *ds);
/* Requests and bytes of the dataset's s3:// and https:// objects so far
   (zeros without any, or without GPUFEED_CURL). */
GPUFEED_API void gpufeed_dataset_remote_stats(const gpufeed_dataset *ds, gpufeed_remote_stats *st);
/* The files `paths` name, as gpufeed_dataset_open expands them (a directory:
   its *.parquet, sorted; a glob: its matches, sorted; with GPUFEED_CURL an
   s3:// prefix or glob: its objects' URLs, sorted by key; else the path itself):
   fn(user, file) for each, in order. An entry that expands to nothing is an
   error before any call. */
GPUFEED_API gpufeed_result gpufeed_expand_paths(const char *const *paths, int32_t num_paths,
    void (*fn)(void *user, const char *file), void *user, gpufeed_error *err);

/* Predicates written as the tools and the Python binding take them:
   conditions joined by `and`, each `COLUMN OP VALUE` with OP one of < <=
   = == >= >, or `COLUMN between A and B`, `COLUMN in (A, B, ...)`,
   `COLUMN is null`, `COLUMN is not null`. Values: integers (int64, or
   uint64 above it), decimals (double), 'quoted' or "quoted" strings; an
   integer followed by s, ms, us or ns is a time in that unit (the
   predicate's unit). gpufeed_where_predicates gives the array to put in
   gpufeed_dataset_desc.where (valid until gpufeed_where_free); a syntax
   error names the position. */
typedef struct gpufeed_where gpufeed_where;
GPUFEED_API gpufeed_result gpufeed_where_parse(gpufeed_where **out, const char *expr, gpufeed_error *err);
GPUFEED_API const gpufeed_predicate *gpufeed_where_predicates(const gpufeed_where *w, int32_t *count);
GPUFEED_API void gpufeed_where_free(gpufeed_where *w);

/* >>reader (API): batches, views, the batch reader, units into buffers --- */
/* A batch of dense rows. Row-major layout: data is [num_rows, row_bytes],
   feature f starts at byte offset feature_offset[f] of each row.
   Per-feature layout: features[f] is [num_rows, width_f]. valid[f] is a
   [num_rows] uint8 mask (1 present) for features with validity, else NULL.
   All buffers are aligned to GPUFEED_ALIGN bytes. */
typedef struct gpufeed_batch {
    int64_t num_rows;
    int64_t index;                     /* batch number in this pass */
    void *data;                        /* row-major layout */
    int64_t row_bytes;
    const int64_t *feature_offset;     /* byte offset of each feature in a row */
    void *const *features;             /* per-feature layout */
    uint8_t *const *valid;
    int64_t epoch;                     /* loader batches: the epoch */
    const gpufeed_feature *feature_info; /* the dataset's features (dtype, width) */
    int32_t num_features;
    int64_t slice_start;               /* elastic mode: where this rank's rows start in
                                          global batch `index` (0 otherwise) */
} gpufeed_batch;

/* One feature of a batch, checked against the dtype the caller expects:
   rows of `width` elements of `dtype`, `stride` bytes apart (the row in the
   row-major layout, the feature's own row in the per-feature one). Read it
   with gpufeed_view_f32() and friends (a memcpy: rows of mixed dtypes may
   leave a value unaligned), or hand base/stride to a kernel. */
typedef struct gpufeed_view {
    const uint8_t *base;
    size_t stride;                     /* bytes from one row to the next */
    int64_t rows;
    int32_t width;                     /* elements per row (1, or a list feature's W) */
    gpufeed_dtype dtype;
} gpufeed_view;
/* Feature `feature` of a host batch as `dtype`: GPUFEED_ERR_INVALID_ARG (and
   a message in err naming the feature and both dtypes) when it is not. */
GPUFEED_API gpufeed_result gpufeed_batch_view(gpufeed_view *out, const gpufeed_batch *b, int32_t feature,
    gpufeed_dtype dtype, gpufeed_error *err);
static inline float gpufeed_view_f32(const gpufeed_view *v, int64_t row, int32_t k)
{
    float x;
    memcpy(&x, v->base + (size_t)row * v->stride + (size_t)k * 4, 4);
    return x;
}
static inline double gpufeed_view_f64(const gpufeed_view *v, int64_t row, int32_t k)
{
    double x;
    memcpy(&x, v->base + (size_t)row * v->stride + (size_t)k * 8, 8);
    return x;
}
static inline int32_t gpufeed_view_i32(const gpufeed_view *v, int64_t row, int32_t k)
{
    int32_t x;
    memcpy(&x, v->base + (size_t)row * v->stride + (size_t)k * 4, 4);
    return x;
}
static inline int64_t gpufeed_view_i64(const gpufeed_view *v, int64_t row, int32_t k)
{
    int64_t x;
    memcpy(&x, v->base + (size_t)row * v->stride + (size_t)k * 8, 8);
    return x;
}
static inline uint8_t gpufeed_view_u8(const gpufeed_view *v, int64_t row, int32_t k)
{ return v->base[(size_t)row * v->stride + (size_t)k]; }
/* f16 and bf16 elements as their 16 bits */
static inline uint16_t gpufeed_view_u16(const gpufeed_view *v, int64_t row, int32_t k)
{
    uint16_t x;
    memcpy(&x, v->base + (size_t)row * v->stride + (size_t)k * 2, 2);
    return x;
}

enum { GPUFEED_KEEP_LAST = 0, GPUFEED_DROP_LAST = 1 };

typedef struct gpufeed_reader_desc {
    int64_t batch_rows;                /* B (required) */
    int32_t last_batch;                /* GPUFEED_KEEP_LAST or GPUFEED_DROP_LAST */
    int32_t threads;                   /* > 1: the features are split between that many
                                          threads (the caller's and threads - 1 more),
                                          each decoding its columns of every batch: the
                                          same bytes as one thread (default 1) */
} gpufeed_reader_desc;

typedef struct gpufeed_reader gpufeed_reader;

/* A single-threaded batch reader over all units in dataset order. */
GPUFEED_API gpufeed_result gpufeed_reader_open(gpufeed_reader **out, gpufeed_dataset *ds,
    const gpufeed_reader_desc *desc, gpufeed_error *err);
/* Fills the next batch into library-owned buffers (valid until the next
   call). GPUFEED_DONE at the end. */
GPUFEED_API gpufeed_result gpufeed_reader_next(gpufeed_reader *r, gpufeed_batch *out);
/* Same, into caller buffers: `data` (row-major, batch_rows * row_bytes
   bytes) or `features[f]` (per-feature), and `valid[f]` for masked
   features. */
GPUFEED_API gpufeed_result gpufeed_reader_next_into(gpufeed_reader *r, void *data,
    void *const *features, uint8_t *const *valid, int64_t *num_rows);
GPUFEED_API const char *gpufeed_reader_error(const gpufeed_reader *r);
GPUFEED_API void gpufeed_reader_close(gpufeed_reader *r);

/* Decodes a whole unit into caller buffers (the worker's call in the
   parallel pipeline). `scratch` holds per-thread decoder state: open one
   per thread with gpufeed_scratch_open. Rows failing the predicates are
   dropped; *num_rows tells how many were written. The buffers must hold
   the unit's planned rows (gpufeed_unit.num_rows): rows are decoded in
   place before the dropped ones are squeezed out. */
typedef struct gpufeed_scratch gpufeed_scratch;
GPUFEED_API gpufeed_result gpufeed_scratch_open(gpufeed_scratch **out, gpufeed_dataset *ds, gpufeed_error *err);
GPUFEED_API void gpufeed_scratch_close(gpufeed_scratch *s);
GPUFEED_API gpufeed_result gpufeed_dataset_decode_unit(gpufeed_dataset *ds, gpufeed_scratch *s,
    int64_t unit, void *data, void *const *features, uint8_t *const *valid, int64_t *num_rows);
GPUFEED_API const char *gpufeed_scratch_error(const gpufeed_scratch *s);

GPUFEED_API size_t gpufeed_dtype_size(gpufeed_dtype t);
/* Bytes of one row of a feature: the dtype's size x its width (W for list
   features, else 1). */
GPUFEED_API size_t gpufeed_feature_bytes(const gpufeed_feature *f);
GPUFEED_API const char *gpufeed_dtype_name(gpufeed_dtype t);
/* "f32", "f64", "f16", "bf16", "i32", "i64", "u8" -> 0, or -1 */
GPUFEED_API int gpufeed_dtype_parse(const char *s, gpufeed_dtype *out);
/* 64-bit hash of bytes (the hashing trick for categorical features). */
GPUFEED_API uint64_t gpufeed_hash64(const void *data, size_t len, uint64_t seed);
/* Round-to-nearest-even conversions. */
GPUFEED_API uint16_t gpufeed_double_to_half(double d);
GPUFEED_API uint16_t gpufeed_double_to_bf16(double d);
/* >>loader (API): the deterministic parallel loader ---------------------- */

enum { GPUFEED_EVEN_DROP = 0, GPUFEED_EVEN_PAD = 1 };

/* gpufeed_loader_desc.epochs: a stream without an end (until the loader is closed) */
#define GPUFEED_EPOCHS_ENDLESS (-1)

/* The batch stream is a pure function of (dataset, features, batch_rows,
   seed, shuffle options, epoch, rank, world): worker count, ring depth and
   thread timing never change it. Zero-initialise, set batch_rows. */
typedef struct gpufeed_loader_desc {
    int64_t batch_rows;                /* B: rows per batch on this rank */
    int32_t workers;                   /* decode threads (default 1) */
    int32_t ring_depth;                /* decoded units held per worker (default 2, 4
                                          with more than 4 workers): the ring has
                                          workers x ring_depth unit slots */
    uint64_t seed;
    int32_t no_unit_shuffle;           /* 1: units in dataset order every epoch */
    int32_t shuffle_window;            /* W >= 1: rows of W consecutive units are
                                          permuted; 0: rows stay in unit order */
    int32_t rank, world;               /* data-parallel rank of world (world 0 = 1) */
    int32_t last_batch;                /* world 1: GPUFEED_KEEP_LAST / GPUFEED_DROP_LAST */
    int32_t even;                      /* world > 1: every rank yields the same number
                                          of batches: GPUFEED_EVEN_DROP (drop rows past
                                          the smallest rank's full batches) or
                                          GPUFEED_EVEN_PAD (repeat rows up to the largest) */
    int64_t start_epoch, start_batch;  /* resume point: the checkpoint is (seed, epoch, batch);
                                          start_batch 0 .. the epoch's batch count (that
                                          count: the next epoch's start; past it: an error) */
    int64_t epochs;                    /* epochs to deliver (0: one); GPUFEED_EPOCHS_ENDLESS:
                                          until the loader is closed. start_epoch + epochs
                                          at most 2^61 / (the dataset's units + 1) */
    int32_t prefill;                   /* 1: open returns once every ring is full */
    const char *trace_path;            /* Chrome/Perfetto trace JSON written at close */
    int32_t trace_max_events;          /* default 1 << 20 */
    int32_t debug_jitter_us;           /* testing: each worker sleeps a random
                                          0..N us before each unit */
    const struct gpufeed_cache_desc *cache; /* the tensor cache (NULL: none) */
    int64_t global_batch_rows;         /* G > 0: elastic mode. The job's global batch
                                          of G rows is the same rows in the same order
                                          for any world that divides G: global batch k
                                          of epoch e is batch k of the stream one rank
                                          with batch_rows G would deliver, and rank r
                                          delivers its rows [r G / world, (r + 1) G /
                                          world). batch_rows is then G / world (or 0);
                                          start_batch counts global batches, so a
                                          checkpoint resumes at another world size;
                                          the epoch's last partial global batch is
                                          dropped (even and last_batch do not apply).
                                          0: per-world mode (the rank's own shard). */
    int32_t partitions;                /* elastic mode, P > 1: the global batch is P
                                          blocks of G / P rows, block p from the
                                          per-world stream of rank p of world P (its
                                          own units); rank r of world W (W divides P)
                                          serves blocks [r P / W, (r + 1) P / W) and
                                          decodes only their units, 1/W of the data.
                                          The order is the same for any W dividing P.
                                          0 or 1: every rank plans the whole stream
                                          (any W dividing G; each rank decodes every
                                          window its slices read). */
} gpufeed_loader_desc;

/* The pipeline's stages, for the verdict of gpufeed_loader_stats. */
typedef enum gpufeed_stage {
    GPUFEED_STAGE_NONE = 0,            /* no single stage: the hand-off (ring depth, cores) */
    GPUFEED_STAGE_READ,                /* reading the source */
    GPUFEED_STAGE_DECODE,              /* decoding pages into dense units */
    GPUFEED_STAGE_ASSEMBLY,            /* gathering (shuffled) rows into batches */
    GPUFEED_STAGE_CONSUMER             /* the trainer: the loader keeps up */
} gpufeed_stage;

typedef struct gpufeed_stats {
    double wall_s;                     /* since the first next() */
    double trainer_wait_s;             /* next() waiting for batches */
    double copy_s;                     /* next() copying batches into an uploader's slot
                                          (0 where the uploader trades buffers instead) */
    int32_t workers;
    int32_t ring_depth;                /* unit slots per worker in use (ring_depth, its
                                          default, or twice a shuffle window's share) */
    const double *worker_busy_s;       /* decode time per worker (source reads included) */
    const double *worker_backpressure_s; /* time each worker was idle: no batch to
                                          assemble and no unit to decode (every unit
                                          slot taken, or none left) */
    double ring_full_s;                /* of that, all workers' time with every unit
                                          slot taken and units left to decode */
    const double *worker_assembly_s;   /* time each worker assembled batches */
    double read_s;                     /* all workers' time in source reads (part of busy) */
    double consumer_s;                 /* the trainer's own time between next() calls */
    double life_s;                     /* since open: the workers' lifetime */
    const double *worker_busy;         /* 0..1 per worker: (decode + assembly) / life_s, or
                                          the share of life_s it did not sleep when that
                                          is larger (a loaded machine keeps runnable
                                          workers off the cores) */
    double workers_busy;               /* 0..1: the mean of worker_busy */
    gpufeed_stage bottleneck;          /* the stage the verdict names */
    uint64_t bytes_read;               /* source bytes */
    uint64_t units_decoded;            /* units decoded from the source (not those served
                                          from the cache) */
    int64_t units_per_epoch;           /* this rank's units an epoch (fewer than workers:
                                          workers wait for work; lower unit_rows) */
    uint64_t batches, rows;
    uint64_t rows_dropped, rows_repeated;
    int32_t cache_state;               /* GPUFEED_CACHE_* */
    uint64_t units_from_cache, cache_bad_units; /* units served from the cache; units
                                          that failed its checksum */
    char verdict[384];                 /* one line a person can act on */
} gpufeed_stats;

typedef struct gpufeed_loader gpufeed_loader;

/* Threads and lifetimes.
   - A loader is driven by one thread at a time: gpufeed_loader_next and
     the other calls on the same loader (stats, error, epoch_batches,
     epoch_bytes, close, and its uploader's calls) must not overlap.
     A second thread entering gpufeed_loader_next while another is inside
     gets GPUFEED_ERR_USAGE at once (the loader goes on undisturbed).
     Different loaders run in parallel, also loaders of one dataset, and
     each loader runs its own worker threads.
   - A dataset outlives what reads it: its readers and scratches must close
     first. Its loaders need not: gpufeed_dataset_close with loaders still
     open leaves the dataset to the last of them, which frees it when it
     closes (the dataset's handle must not be used after its close).
   - A loader outlives its uploader. A batch is valid until the next
     gpufeed_loader_next (an uploader's, until its slot is released); DLPack
     tensors may outlive both (gpufeed_batch_dlpack).
   - After X_close(x), x is gone: any call with it is undefined (as after
     free), and so is closing it twice. */
GPUFEED_API gpufeed_result gpufeed_loader_open(gpufeed_loader **out, gpufeed_dataset *ds,
    const gpufeed_loader_desc *desc, gpufeed_error *err);
/* The next batch (valid until the next call): GPUFEED_OK, GPUFEED_DONE after
   the last epoch, or an error (gpufeed_loader_error tells where);
   GPUFEED_ERR_USAGE while another thread is inside this call. */
GPUFEED_API gpufeed_result gpufeed_loader_next(gpufeed_loader *l, gpufeed_batch *out);
GPUFEED_API void gpufeed_loader_stats(gpufeed_loader *l, gpufeed_stats *st);
GPUFEED_API const char *gpufeed_loader_error(const gpufeed_loader *l);
GPUFEED_API void gpufeed_loader_close(gpufeed_loader *l);
/* Batches per epoch on this rank (after the even-batches rule). */
GPUFEED_API int64_t gpufeed_loader_epoch_batches(gpufeed_loader *l, int64_t epoch);
/* Source bytes read for the units of one epoch (0 when they came from the
   cache), for the first 64 epochs of the stream. */
GPUFEED_API uint64_t gpufeed_loader_epoch_bytes(gpufeed_loader *l, int64_t epoch);
/* 64-bit hash of a batch's bytes (data or features, then masks). */
GPUFEED_API uint64_t gpufeed_batch_hash(const gpufeed_dataset *ds, const gpufeed_batch *b);
/* 64-bit hash of one row's bytes (each feature's value, then each mask
   byte), the same in both layouts: rows can be compared across streams. */
GPUFEED_API uint64_t gpufeed_batch_row_hash(const gpufeed_dataset *ds, const gpufeed_batch *b, int64_t row);

/* >>cache (API): the file-backed tensor cache ---------------------------- */

/* Dense units as the batcher consumes them, in canonical unit order, in one
   file per (source files' identity, features, predicates, unit plan, format
   version): DIR/gpufeed-<key>.gfc. Built under a temporary name while
   epoch 0 decodes (or ahead of time with gpufeed_cache_build), fsync'ed and
   renamed when complete; units already stored are served while the build
   goes on. Every unit carries a checksum; a stale, partial or corrupt cache
   is never served.

   What a batch holds: batches are gathered only from memory the loader
   owns, after the unit's bytes there passed their checksum. The file is
   never mapped: a cache that fits the memory budget (ram_bytes) is read
   into the loader's memory, each unit at its first use, and served from
   there; a larger one (or no_map) has each unit read into a slot of the
   loader's ring at every use and checked there. So a cache file changed,
   overwritten or cut short while a loader serves it reaches no batch and
   raises no signal: what was read before the change was checked, what is
   read after fails its check (or its read) and comes from the source, the
   file removed at close. A build takes each source file's identity again
   when it completes (size, modification and change time, inode, footer):
   a build whose sources changed while it read them is discarded, so a
   cache never holds rows of a file in two states.

   Identity: the key covers each file's canonical path (realpath: relative,
   absolute and symlinked spellings are one cache), size, modification time
   (with nanoseconds) and footer bytes (an open_source file: its name and
   identity string), the features, predicates and unit plan. chmod, a copy
   renamed over the file with the same bytes and times, cp -p and rsync -a
   keep the cache; a content change never serves it. Its one limit: a
   change that keeps the size, the modification time (as the file system
   records it) and every footer byte is not seen.

   Housekeeping: a complete cache removes the older caches of its dataset
   (same paths, features and plan; other content); dir_max_bytes bounds the
   directory (least recently used first). A file some process has open is
   never removed (shared flocks); nothing leaves lock files behind. */
typedef struct gpufeed_cache_desc {
    const char *dir;                   /* cache directory (created if missing) */
    uint64_t max_bytes;                /* refuse a cache larger than this (0: no cap) */
    uint64_t ram_bytes;                /* the memory budget: with dir, a cache of at most
                                          this many bytes is held in the loader's memory
                                          (0: a sixteenth of the memory the process may
                                          use: the machine's, an rlimit or its cgroup's
                                          memory.max); without dir, the dense dataset is
                                          kept in RAM only, when it fits (0: off) */
    int32_t no_build;                  /* 1: use an existing cache, never build one */
    int32_t verify;                    /* GPUFEED_CACHE_VERIFY_*: when unit checksums are checked */
    void (*log)(void *user, const char *msg); /* warnings (default: stderr) */
    void *log_user;
    uint64_t dir_max_bytes;            /* byte budget of the whole directory: least
                                          recently used caches no process uses go
                                          first; a cache that cannot fit is not
                                          built (0: no budget) */
    int32_t no_wait;                   /* gpufeed_cache_build: fail at once when another
                                          process builds the same cache (default: wait
                                          for it, with progress lines through log) */
    int32_t no_map;                    /* 1: never hold the cache in memory: each use
                                          reads its unit into a ring slot and checks it
                                          (for many processes a machine over one large
                                          cache; measured 0.3-0.5x the held cache's
                                          speed, tools/bench/README.md) */
} gpufeed_cache_desc;

/* When the checksums of a cache held in memory are checked; a unit read
   into a ring slot (no_map, or a cache over the budget) is checked at every
   read whatever the mode. A unit found bad is decoded from the source and
   the file is removed at close. */
enum {
    GPUFEED_CACHE_VERIFY_FIRST_USE = 0, /* each unit as it is read into memory, at its first use */
    GPUFEED_CACHE_VERIFY_OPEN = 1,      /* every unit read in and checked when the loader opens */
    GPUFEED_CACHE_VERIFY_EVERY_USE = 2  /* also the copy in memory hashed again at every use
                                           (costs a hash of each unit) */
};

enum {
    GPUFEED_CACHE_OFF = 0,             /* no cache in use */
    GPUFEED_CACHE_BUILDING = 1,        /* being written by this loader */
    GPUFEED_CACHE_READY = 2            /* complete: units come from it */
};

typedef struct gpufeed_cache_info {
    int32_t exists;                    /* a complete cache file for this dataset */
    int32_t valid;                     /* its header, key and index check out */
    char path[1024];
    char key[33];
    uint64_t bytes;
    int64_t units, rows;
    char reason[256];                  /* why it is not valid */
} gpufeed_cache_info;

/* Decodes every unit and writes the cache (N worker threads); progress is
   called after each unit (may be NULL). When another process is building
   the same cache it waits for that build (c->no_wait: fails instead) and
   returns GPUFEED_OK once the cache is complete. */
GPUFEED_API gpufeed_result gpufeed_cache_build(gpufeed_dataset *ds, const gpufeed_cache_desc *c, int32_t workers,
    void (*progress)(void *user, int64_t units_done, int64_t units_total, uint64_t rows_done, uint64_t bytes_done),
    void *user, gpufeed_error *err);
/* Checks every unit's checksum; *bad_units counts the bad ones. */
GPUFEED_API gpufeed_result gpufeed_cache_verify(gpufeed_dataset *ds, const gpufeed_cache_desc *c, int64_t *bad_units, gpufeed_error *err);
GPUFEED_API gpufeed_result gpufeed_cache_get_info(gpufeed_dataset *ds, const gpufeed_cache_desc *c, gpufeed_cache_info *info, gpufeed_error *err);
GPUFEED_API gpufeed_result gpufeed_cache_remove(gpufeed_dataset *ds, const gpufeed_cache_desc *c, gpufeed_error *err);

/* One file of a cache directory, as gpufeed_cache_list sees it. */
enum {
    GPUFEED_CACHE_ENTRY_READY = 0,     /* a complete cache (in_use: a process has it open) */
    GPUFEED_CACHE_ENTRY_BUILDING = 1,  /* a .tmp a live process is writing */
    GPUFEED_CACHE_ENTRY_ABANDONED = 2, /* a .tmp nobody writes any more (its builder died) */
    GPUFEED_CACHE_ENTRY_INVALID = 3,   /* not a cache this version reads (reason says why) */
    GPUFEED_CACHE_ENTRY_LOCK = 4       /* a lock file of an older gpufeed */
};
typedef struct gpufeed_cache_entry {
    char path[1024];
    int32_t state;                     /* GPUFEED_CACHE_ENTRY_* */
    int32_t in_use;                    /* a process has it open (or builds it) */
    uint64_t bytes;                    /* file size */
    int64_t last_use;                  /* Unix seconds: last opened by a loader (its access time) */
    int64_t created;                   /* Unix seconds */
    int64_t units, rows;
    int64_t units_done, pid;           /* BUILDING: progress, and the builder's process */
    char key[33], dataset_id[33];      /* hex; dataset_id is shared by a dataset's versions */
    char dataset[512];                 /* its first file (canonical path), and how many more */
    char features[2048];               /* column:dtype[:options] ... (the tools' --feature syntax) */
    char plan[128];                    /* unit_rows, layout, predicates */
    char reason[256];                  /* INVALID: why */
} gpufeed_cache_entry;

/* Lists the cache files of dir (also .tmp and old lock files), least
   recently used first: *out (free it with gpufeed_cache_list_free) holds
   *count entries. */
GPUFEED_API gpufeed_result gpufeed_cache_list(gpufeed_cache_entry **out, int64_t *count, const char *dir, gpufeed_error *err);
GPUFEED_API void gpufeed_cache_list_free(gpufeed_cache_entry *list);

typedef struct gpufeed_cache_prune_info {
    int64_t removed;                   /* files removed */
    int64_t skipped_in_use;            /* files that would go but a process uses */
    uint64_t bytes_removed, bytes_kept;
} gpufeed_cache_prune_info;

/* Removes from dir what no process uses: .tmp files of dead builders,
   files this version cannot read, old lock files, caches superseded by a
   newer complete cache of the same dataset; then, with max_bytes > 0, the
   least recently used caches until the directory fits max_bytes
   (GPUFEED_ERR_LIMIT when what is in use alone exceeds it). out may be NULL. */
GPUFEED_API gpufeed_result gpufeed_cache_prune(gpufeed_cache_prune_info *out, const char *dir, uint64_t max_bytes, gpufeed_error *err);

/* >>uploader (API): pinned host slots, asynchronous copies, device batches -- */

/* Built with nvcc, or with GPUFEED_CUDA defined (and -lcudart), the uploader
   copies each batch to the device on its own non-blocking stream while the
   trainer computes. GPUFEED_NO_CUDA, or a plain C build, gives the same API
   with host batches (when host_fallback allows it). */
enum { GPUFEED_DEVICE_HOST = -1 };   /* gpufeed_uploader_desc.device: host batches */
typedef struct gpufeed_uploader_desc {
    int32_t device;                    /* CUDA device ordinal (default 0); GPUFEED_DEVICE_HOST:
                                          host batches, no GPU touched (the driver is not
                                          even loaded) */
    int32_t slots;                     /* batches in flight, 2..16 (default 3) */
    uint64_t max_pinned_bytes;         /* cap on pinned host memory; slots beyond it
                                          stay pageable, with a warning (0: no cap).
                                          The uploader also pins the loader's batch
                                          slots (workers + 4, at most 256 MiB) so that
                                          batches pass to it without a copy; a cap too
                                          small for both keeps them pageable and copies */
    int32_t host_fallback;             /* 1: no CUDA (build or device) -> host batches;
                                          0: gpufeed_uploader_open fails */
    uint64_t resident_bytes;           /* device-resident mode: when this rank's dense
                                          data (rows x row bytes + masks) fits, it is
                                          uploaded once and every batch is gathered on
                                          the device by the same deterministic plan: no
                                          PCIe traffic per epoch (nvcc builds, row-major
                                          layout; else plain uploads). 0: off */
} gpufeed_uploader_desc;

typedef struct gpufeed_device_batch {
    gpufeed_batch host;                /* the batch in its (pinned) host slot */
    void *data;                        /* device: row-major [rows, row_bytes] */
    void *const *features;             /* device: per-feature arrays */
    uint8_t *const *valid;             /* device: masks (NULL where none) */
    void *ready;                       /* cudaEvent_t fired when the copy is done */
    int32_t slot;
    int32_t on_device;                 /* 0: host fallback, use `host` */
    int32_t resident;                  /* 1: gathered on the device; host.data is NULL */
    uint64_t serial;                   /* which batch the slot holds (checked on release) */
    struct gpufeed_uploader *uploader; /* the uploader that gave it */
} gpufeed_device_batch;

typedef struct gpufeed_uploader gpufeed_uploader;

GPUFEED_API gpufeed_result gpufeed_uploader_open(gpufeed_uploader **out, gpufeed_loader *l,
    const gpufeed_uploader_desc *desc, gpufeed_error *err);
/* The next batch, its copy queued (not finished): make the trainer's stream
   wait with gpufeed_device_batch_wait, never the host. At most `slots`
   batches may be held at once, released in any order with
   gpufeed_uploader_release. The caller's current CUDA device is left as it
   was by every call. */
GPUFEED_API gpufeed_result gpufeed_uploader_next(gpufeed_uploader *u, gpufeed_device_batch *b);
/* cudaStreamWaitEvent(stream, b->ready): the stream waits, the host does not. */
GPUFEED_API gpufeed_result gpufeed_device_batch_wait(const gpufeed_device_batch *b, void *stream);
/* Records an event on `stream` (the one that read the batch): the slot is
   refilled only after the work queued there so far is done. */
GPUFEED_API gpufeed_result gpufeed_uploader_release(gpufeed_uploader *u, const gpufeed_device_batch *b, void *stream);
GPUFEED_API const char *gpufeed_uploader_error(const gpufeed_uploader *u);
GPUFEED_API void gpufeed_uploader_close(gpufeed_uploader *u);
/* 1 when built with CUDA and a device is usable; *why says otherwise. */
GPUFEED_API int gpufeed_cuda_available(int32_t device, char *why, size_t why_cap);

/* >>dlpack (API): batches as DLPack tensors ------------------------------ */

/* Our own definitions, laid out exactly as dlpack.h's DLDevice, DLDataType,
   DLTensor, DLManagedTensor and (DLPack >= 1.0) DLManagedTensorVersioned,
   so that PyTorch, CuPy, JAX and NumPy take them without dlpack.h. */
typedef struct gpufeed_dl_device {
    int32_t device_type;
    int32_t device_id;
} gpufeed_dl_device;
enum { GPUFEED_DL_CPU = 1, GPUFEED_DL_CUDA = 2, GPUFEED_DL_CUDA_HOST = 3 };
typedef struct gpufeed_dl_dtype {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} gpufeed_dl_dtype;
enum { GPUFEED_DL_INT = 0, GPUFEED_DL_UINT = 1, GPUFEED_DL_FLOAT = 2, GPUFEED_DL_BFLOAT = 4 };
typedef struct gpufeed_dl_tensor {
    void *data;
    gpufeed_dl_device device;
    int32_t ndim;
    gpufeed_dl_dtype dtype;
    int64_t *shape;
    int64_t *strides;                  /* in elements */
    uint64_t byte_offset;
} gpufeed_dl_tensor;
typedef struct gpufeed_dl_managed {
    gpufeed_dl_tensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct gpufeed_dl_managed *self);
} gpufeed_dl_managed;
typedef struct gpufeed_dl_version { uint32_t major, minor; } gpufeed_dl_version;
typedef struct gpufeed_dl_managed_versioned {
    gpufeed_dl_version version;        /* 1.0 */
    void *manager_ctx;
    void (*deleter)(struct gpufeed_dl_managed_versioned *self);
    uint64_t flags;                    /* 0: writable, not a copy */
    gpufeed_dl_tensor dl_tensor;
} gpufeed_dl_managed_versioned;

enum {
    GPUFEED_DL_ALL = -1                /* feature: the whole row-major [rows, columns]
                                          matrix (every feature of one dtype) */
};
/* Describes part of a batch held from gpufeed_uploader_next as a DLPack
   tensor, without a copy: feature GPUFEED_DL_ALL, or feature j ([rows] or
   [rows, width]; a strided view in the row-major layout); mask 1: feature
   j's validity mask ([rows] uint8) instead. The tensor lives on the device
   (kDLCUDA) when the batch does, else on the CPU. consumer_stream (a
   cudaStream_t, NULL the legacy default stream) is made to wait for the
   batch's copy. *out is a gpufeed_dl_managed (versioned 0) or a
   gpufeed_dl_managed_versioned (1). Each tensor holds the batch's slot:
   the slot is refilled only after the caller's gpufeed_uploader_release
   and every tensor's deleter (which records an event on consumer_stream,
   so the copy into the slot waits for the consumer's queued work). The
   deleter may run on any thread, also after gpufeed_uploader_close (the
   uploader's memory is freed when the last tensor goes). */
GPUFEED_API gpufeed_result gpufeed_batch_dlpack(gpufeed_uploader *u, const gpufeed_device_batch *b,
    int32_t feature, int32_t mask, void *consumer_stream, int32_t versioned, void **out);
/* sizeof of a public struct by name ("gpufeed_feature", ...), 0 if unknown:
   lets a binding (tools/gpufeed.py) check its mirror of the layouts. */
GPUFEED_API size_t gpufeed_sizeof(const char *type_name);

/* Helpers for tools and trainers. */
GPUFEED_API float gpufeed_half_to_float(uint16_t h);
GPUFEED_API int64_t gpufeed_int96_to_ns(const uint8_t b[12]);
GPUFEED_API uint32_t gpufeed_crc32(uint32_t crc, const void *data, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* GPUFEED_H */

/* >>impl ----------------------------------------------------------------- */
#ifdef GPUFEED_IMPLEMENTATION
#ifndef GPUFEED_IMPLEMENTATION_DONE
#define GPUFEED_IMPLEMENTATION_DONE

#include <string.h>
#include <stdio.h>
#include <stdarg.h>
#include <limits.h>
#include <stdlib.h>

#if defined(GPUFEED_MALLOC) && defined(GPUFEED_REALLOC) && defined(GPUFEED_FREE)
/* all three given */
#elif !defined(GPUFEED_MALLOC) && !defined(GPUFEED_REALLOC) && !defined(GPUFEED_FREE)
#include <stdlib.h>
#define GPUFEED_MALLOC(sz) malloc(sz)
#define GPUFEED_REALLOC(p, sz) realloc(p, sz)
#define GPUFEED_FREE(p) free(p)
#else
#error "gpufeed: define all of GPUFEED_MALLOC, GPUFEED_REALLOC and GPUFEED_FREE, or none"
#endif

#if defined(GPUFEED_NO_GZIP) && defined(GPUFEED_USE_ZLIB)
#error "gpufeed: GPUFEED_NO_GZIP leaves GZIP out, GPUFEED_USE_ZLIB decodes it with zlib: define one of them"
#endif
#ifdef GPUFEED_USE_ZLIB
#include <zlib.h>
#endif

#ifndef GPUFEED_ASSERT
#include <assert.h>
#define GPUFEED_ASSERT(x) assert(x)
#endif

#if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__)
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#error "gpufeed: big-endian hosts are not supported (Parquet is little-endian)"
#endif
#endif

#ifndef GPUFEED_NO_STDIO
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/mman.h>
#if defined(MAP_ANONYMOUS)
#define GF__MAP_ANON MAP_ANONYMOUS
#elif defined(__linux__)
#define GF__MAP_ANON 0x20              /* hidden by strict C99 headers; Linux's value */
#endif
/* pread is POSIX.1-2008 but hidden by glibc under strict -std=c99 (C++
   compilers define _GNU_SOURCE, so it is declared there). */
#ifndef __cplusplus
extern ssize_t pread(int, void *, size_t, off_t);
extern int madvise(void *, size_t, int);
#endif
#endif

#if defined(__GNUC__) || defined(__clang__)
#define GF__LIKELY(x) __builtin_expect(!!(x), 1)
#define GF__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define GF__PRINTF(a, b) __attribute__((format(printf, a, b)))
#define GF__INLINE static inline __attribute__((always_inline))
#else
#define GF__LIKELY(x) (x)
#define GF__UNLIKELY(x) (x)
#define GF__PRINTF(a, b)
#define GF__INLINE static
#endif

/* system headers that are not -pedantic clean (CUDA, NVTX) go between these */
#if defined(__GNUC__) || defined(__clang__)
#define GF__PEDANTIC_OFF _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wpedantic\"")
#define GF__PEDANTIC_ON _Pragma("GCC diagnostic pop")
#else
#define GF__PEDANTIC_OFF
#define GF__PEDANTIC_ON
#endif

/* opt-in system codec libraries (see the options list at the top) */
#if defined(GPUFEED_USE_LIBSNAPPY) && !defined(GPUFEED_NO_SNAPPY)
#include <snappy-c.h>
#endif
#if defined(GPUFEED_USE_LIBLZ4) && !defined(GPUFEED_NO_LZ4)
#include <lz4.h>
#endif
#if defined(GPUFEED_USE_BROTLI)
#include <brotli/decode.h>
#endif

/* NVTX ranges (GPUFEED_NVTX, header-only nvtx3) so Nsight shows the stages */
#if defined(GPUFEED_NVTX)
GF__PEDANTIC_OFF
#include <nvtx3/nvToolsExt.h>
GF__PEDANTIC_ON
#define GF__NVTX_PUSH(name) nvtxRangePushA(name)
#define GF__NVTX_POP() nvtxRangePop()
#else
#define GF__NVTX_PUSH(name) ((void)0)
#define GF__NVTX_POP() ((void)0)
#endif

#if !defined(GPUFEED_NO_THREADS)
#include <pthread.h>
#endif

/* SIMD: SSE2 on x86-64 and NEON on aarch64 (both baseline, no run-time
   dispatch) for the dense path's transposes, casts and index checks;
   GPUFEED_NO_SIMD keeps the scalar code, which gives the same bytes */
#if !defined(GPUFEED_NO_SIMD) && (defined(__SSE2__) || defined(_M_X64))
#define GF__SSE2 1
#include <emmintrin.h>
#elif !defined(GPUFEED_NO_SIMD) && defined(__ARM_NEON) && defined(__aarch64__)
#define GF__NEON 1
GF__PEDANTIC_OFF
#include <arm_neon.h>
GF__PEDANTIC_ON
#endif

/* AVX-512 (F and BW) kernels for the dense path, chosen at run time
   (x86-64 with gcc or clang): built with the target attribute, used when
   the CPU and the OS both have AVX-512, the SSE2 / scalar code otherwise
   (the same bytes). GPUFEED_NO_AVX512 or GPUFEED_NO_SIMD leaves them out. */
#if defined(GF__SSE2) && !defined(GPUFEED_NO_AVX512) && defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define GF__AVX512 1
#include <immintrin.h>
#define GF__TARGET_AVX512 __attribute__((target("avx512f,avx512bw,popcnt")))
static int gf__avx512(void) { return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw"); }
#endif

#if defined(GPUFEED_NO_ZSTD) && defined(GPUFEED_USE_LIBZSTD)
#error "gpufeed: GPUFEED_NO_ZSTD and GPUFEED_USE_LIBZSTD contradict each other: define one of them"
#endif
#ifdef GPUFEED_USE_LIBZSTD
GF__PEDANTIC_OFF
#include <zstd.h>
#include <zstd_errors.h>
GF__PEDANTIC_ON
#endif

/* >>base ----------------------------------------------------------------- */
#include <sys/time.h>

/* microseconds of the wall clock (stage timings, stall figures) */
static uint64_t gf__now_us(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
}

static void *gf__alloc(const gpufeed_allocator *a, size_t n)
{
    if (n == 0) n = 1;
    if (a && a->alloc) return a->alloc(a->user, n);
    return GPUFEED_MALLOC(n);
}
static void *gf__realloc(const gpufeed_allocator *a, void *p, size_t n)
{
    if (n == 0) n = 1;
    if (a && a->alloc) return a->realloc(a->user, p, n);
    return GPUFEED_REALLOC(p, n);
}
static void gf__free(const gpufeed_allocator *a, void *p)
{
    if (!p) return;
    if (a && a->alloc) { a->free(a->user, p); return; }
    GPUFEED_FREE(p);
}

/* grows *buf to at least `need` bytes (doubling from 4 KiB); 0 without memory */
static int gf__grow(const gpufeed_allocator *a, uint8_t **buf, size_t *cap, size_t need)
{
    uint8_t *n;
    size_t nc;
    if (need == 0) need = 1; /* always a real buffer */
    if (*buf && need <= *cap) return 1;
    nc = *cap ? *cap : 4096;
    while (nc < need) {
        if (nc > SIZE_MAX / 2) { nc = need; break; }
        nc *= 2;
    }
    GPUFEED_ASSERT(nc >= need);
    n = (uint8_t *)gf__realloc(a, *buf, nc);
    if (!n) return 0;
    *buf = n; *cap = nc;
    return 1;
}

static int gf__mul_ok_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    if (a != 0 && b > UINT64_MAX / a) return 0;
    *out = a * b;
    return 1;
}

/* An unsigned LEB128 varint of at most `maxb` bytes (the formats differ:
   snappy 5, RLE run headers 6, delta streams 10): 1 read, 0 the input
   ends first, -1 longer than maxb. */
static int gf__varint(const uint8_t **pp, const uint8_t *end, int maxb, uint64_t *out)
{
    const uint8_t *p = *pp;
    uint64_t v = 0;
    int i;
    for (i = 0; i < maxb; i++) {
        if (p >= end) return 0;
        v |= (uint64_t)(*p & 0x7F) << (7 * i);
        if (!(*p++ & 0x80)) {
            *pp = p;
            *out = v;
            return 1;
        }
    }
    return -1;
}
#define gf__uvarint(pp, end, out) (gf__varint((pp), (end), 10, (out)) == 1)

static uint16_t gf__ld16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t gf__ld32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static uint64_t gf__ld64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static void gf__vfmt(char *dst, size_t cap, const char *fmt, va_list ap)
{
    int n = vsnprintf(dst, cap, fmt, ap);
    if (n < 0) dst[0] = 0;
}
static void gf__fmt(char *dst, size_t cap, const char *fmt, ...) GF__PRINTF(3, 4);
static void gf__fmt(char *dst, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gf__vfmt(dst, cap, fmt, ap);
    va_end(ap);
}
static gpufeed_result gf__seterr(gpufeed_error *e, gpufeed_result code, const char *fmt, ...) GF__PRINTF(3, 4);
static gpufeed_result gf__seterr(gpufeed_error *e, gpufeed_result code, const char *fmt, ...)
{
    if (e) {
        va_list ap; va_start(ap, fmt);
        e->code = code; gf__vfmt(e->message, sizeof e->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

GPUFEED_API const char *gpufeed_result_string(gpufeed_result r)
{
    switch (r) {
    case GPUFEED_OK: return "ok";
    case GPUFEED_DONE: return "done";
    case GPUFEED_ERR_INVALID_ARG: return "invalid argument";
    case GPUFEED_ERR_OUT_OF_MEMORY: return "out of memory";
    case GPUFEED_ERR_LIMIT: return "limit exceeded";
    case GPUFEED_ERR_UNSUPPORTED: return "not supported";
    case GPUFEED_ERR_PLATFORM: return "unsupported platform";
    case GPUFEED_ERR_USAGE: return "call not allowed now (API contract)";
    case GPUFEED_ERR_IO: return "i/o error";
    case GPUFEED_ERR_TRUNCATED: return "truncated input";
    case GPUFEED_ERR_NOT_PARQUET: return "not a Parquet file";
    case GPUFEED_ERR_FOOTER: return "invalid footer";
    case GPUFEED_ERR_THRIFT: return "malformed Thrift metadata";
    case GPUFEED_ERR_SCHEMA: return "invalid schema or metadata";
    case GPUFEED_ERR_ENCRYPTED: return "encrypted Parquet is not supported";
    case GPUFEED_ERR_PAGE: return "invalid page";
    case GPUFEED_ERR_CHECKSUM: return "page checksum mismatch";
    case GPUFEED_ERR_CODEC: return "corrupt compressed data";
    case GPUFEED_ERR_ENCODING: return "corrupt encoded data";
    case GPUFEED_ERR_CORRUPT: return "values disagree with headers";
    case GPUFEED_ERR_DICTIONARY: return "dictionary error";
    case GPUFEED_ERR_NO_DEVICE: return "no CUDA device";
    case GPUFEED_ERR_CUDA: return "CUDA error";
    }
    return "unknown result";
}

/* CRC-32 (IEEE 802.3, reflected, as used by Parquet page CRCs and gzip),
   slicing-by-8 with tables computed on the fly per call site object (the
   tables are built once per gpufeed_file/column, or per gzip page; no
   global state). The register is linear: running bytes B from state s
   gives s * x^(8|B|) mod P plus B run from 0, so a long buffer runs as
   three slices side by side (three independent chains of table lookups)
   whose states are joined at the end. */
typedef struct gf__crc_tab { uint32_t t[8][256]; } gf__crc_tab;
static void gf__crc_init(gf__crc_tab *c)
{
    uint32_t i, j, k, v = 0xEDB88320u;

    /* each table is linear in its index: the powers of two, then sums */
    for (j = 128; j; j >>= 1) { c->t[0][j] = v; v = (v >> 1) ^ (0xEDB88320u & (0u - (v & 1u))); }
    for (k = 0; k < 8; k++) {
        c->t[k][0] = 0;
        if (k)
            for (j = 1; j < 256; j <<= 1) c->t[k][j] = (c->t[k - 1][j] >> 8) ^ c->t[0][c->t[k - 1][j] & 0xFF];
        for (j = 2; j < 256; j <<= 1)
            for (i = 1; i < j; i++) c->t[k][i + j] = c->t[k][i] ^ c->t[k][j];
    }
}
GF__INLINE uint32_t gf__crc_step8(const gf__crc_tab *c, uint32_t s, const uint8_t *p)
{
    uint32_t a = gf__ld32(p) ^ s, b = gf__ld32(p + 4);
    return c->t[7][a & 0xFF] ^ c->t[6][(a >> 8) & 0xFF] ^ c->t[5][(a >> 16) & 0xFF] ^
           c->t[4][a >> 24] ^ c->t[3][b & 0xFF] ^ c->t[2][(b >> 8) & 0xFF] ^
           c->t[1][(b >> 16) & 0xFF] ^ c->t[0][b >> 24];
}
/* a * b mod P, in the reflected order (bit 31 is x^0) */
static uint32_t gf__crc_mul(uint32_t a, uint32_t b)
{
    uint32_t m = 0;
    for (; b; b <<= 1) {
        if (b & 0x80000000u) m ^= a;
        a = (a >> 1) ^ (0xEDB88320u & (0u - (a & 1u)));
    }
    return m;
}
static uint32_t gf__crc_run(const gf__crc_tab *c, uint32_t crc, const uint8_t *p, size_t n)
{
    uint32_t s = ~crc;
    if (n >= 4096) {
        size_t q = (n / 3) & ~(size_t)7, i, e;
        uint32_t s1 = 0, s2 = 0, x = 0x80000000u, sq = 0x00800000u;   /* x^0, x^8 */
        for (i = 0; i < q; i += 8) {
            s = gf__crc_step8(c, s, p + i);
            s1 = gf__crc_step8(c, s1, p + q + i);
            s2 = gf__crc_step8(c, s2, p + 2 * q + i);
        }
        for (e = q; e; e >>= 1) {                                     /* x = x^(8q) */
            if (e & 1) x = gf__crc_mul(x, sq);
            sq = gf__crc_mul(sq, sq);
        }
        s = gf__crc_mul(gf__crc_mul(s, x) ^ s1, x) ^ s2;
        p += 3 * q; n -= 3 * q;
    }
    while (n >= 8) {
        s = gf__crc_step8(c, s, p);
        p += 8;
        n -= 8;
    }
    while (n--) s = (s >> 8) ^ c->t[0][(s ^ *p++) & 0xFF];
    return ~s;
}
GPUFEED_API uint32_t gpufeed_crc32(uint32_t crc, const void *data, size_t len)
{
    /* bitwise-table version for occasional callers; no static state */
    const uint8_t *p = (const uint8_t *)data;
    crc = ~crc;
    while (len--) {
        uint32_t j;
        crc ^= *p++;
        for (j = 0; j < 8; j++) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

/* 64-bit hash: the XXH64 algorithm (public domain specification),
   implemented here: the hashing trick of the dense conversions, the cache's
   checksums and the ZSTD content checksum (its low 32 bits). */
#define GF__P1 0x9E3779B185EBCA87ull
#define GF__P2 0xC2B2AE3D27D4EB4Full
#define GF__P3 0x165667B19E3779F9ull
#define GF__P4 0x85EBCA77C2B2AE63ull
#define GF__P5 0x27D4EB2F165667C5ull
static uint64_t gf__rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static uint64_t gf__xround(uint64_t acc, uint64_t in) { return gf__rotl(acc + in * GF__P2, 31) * GF__P1; }
GPUFEED_API uint64_t gpufeed_hash64(const void *data, size_t len, uint64_t seed)
{
    const uint8_t *p = (const uint8_t *)data, *end = p + len;
    uint64_t h;
    if (len >= 32) {
        uint64_t v1 = seed + GF__P1 + GF__P2, v2 = seed + GF__P2, v3 = seed, v4 = seed - GF__P1;
        const uint8_t *lim = end - 32;
        do {
            v1 = gf__xround(v1, gf__ld64(p)); v2 = gf__xround(v2, gf__ld64(p + 8));
            v3 = gf__xround(v3, gf__ld64(p + 16)); v4 = gf__xround(v4, gf__ld64(p + 24));
            p += 32;
        } while (p <= lim);
        h = gf__rotl(v1, 1) + gf__rotl(v2, 7) + gf__rotl(v3, 12) + gf__rotl(v4, 18);
        h = (h ^ gf__xround(0, v1)) * GF__P1 + GF__P4;
        h = (h ^ gf__xround(0, v2)) * GF__P1 + GF__P4;
        h = (h ^ gf__xround(0, v3)) * GF__P1 + GF__P4;
        h = (h ^ gf__xround(0, v4)) * GF__P1 + GF__P4;
    } else {
        h = seed + GF__P5;
    }
    h += (uint64_t)len;
    while (end - p >= 8) {
        h ^= gf__xround(0, gf__ld64(p));
        h = gf__rotl(h, 27) * GF__P1 + GF__P4;
        p += 8;
    }
    if (end - p >= 4) {
        h ^= (uint64_t)gf__ld32(p) * GF__P1;
        h = gf__rotl(h, 23) * GF__P2 + GF__P3;
        p += 4;
    }
    while (p < end) { h ^= (uint64_t)*p++ * GF__P5; h = gf__rotl(h, 11) * GF__P1; }
    h ^= h >> 33;
    h *= GF__P2;
    h ^= h >> 29;
    h *= GF__P3;
    h ^= h >> 32;
    return h;
}

GPUFEED_API float gpufeed_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1F, man = h & 0x3FF, bits;
    float f;
    if (exp == 0) {
        if (man == 0) bits = sign;
        else { /* subnormal: normalise */
            exp = 127 - 15 + 1;
            while (!(man & 0x400)) { man <<= 1; exp--; }
            man &= 0x3FF;
            bits = sign | (exp << 23) | (man << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7F800000u | (man << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    memcpy(&f, &bits, 4);
    return f;
}

GPUFEED_API int64_t gpufeed_int96_to_ns(const uint8_t b[12])
{
    /* 8 bytes nanoseconds within the day, then 4 bytes Julian day number.
       Wrap-around arithmetic (as other readers do) for absurd values. */
    uint64_t nanos = gf__ld64(b);
    int64_t jd = (int32_t)gf__ld32(b + 8);
    uint64_t days = (uint64_t)(jd - 2440588);
    return (int64_t)(days * 86400000000000ull + nanos);
}

static int gf__host_is_le(void)
{
    uint32_t one = 1;
    uint8_t c;
    memcpy(&c, &one, 1);
    return c == 1;
}

/* A simple arena for metadata: blocks from the allocator, freed at once. */
typedef struct gf__arena_block {
    struct gf__arena_block *next;
    size_t used, cap;
} gf__arena_block;
typedef struct gf__arena {
    const gpufeed_allocator *a;
    gf__arena_block *head;
} gf__arena;

static void *gf__arena_get(gf__arena *ar, size_t n)
{
    gf__arena_block *b = ar->head;
    size_t hdr = (sizeof(gf__arena_block) + 15) & ~(size_t)15;
    n = (n + 15) & ~(size_t)15;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        if (cap > SIZE_MAX - hdr) return NULL;
        b = (gf__arena_block *)gf__alloc(ar->a, hdr + cap);
        if (!b) return NULL;
        b->next = ar->head;
        b->used = 0;
        b->cap = cap;
        ar->head = b;
    }
    GPUFEED_ASSERT(b->cap - b->used >= n);
    {
        void *p = (uint8_t *)b + hdr + b->used;
        b->used += n;
        memset(p, 0, n);
        return p;
    }
}
static void gf__arena_free(gf__arena *ar)
{
    gf__arena_block *b = ar->head;
    while (b) {
        gf__arena_block *n = b->next;
        gf__free(ar->a, b);
        b = n;
    }
    ar->head = NULL;
}
static char *gf__arena_str(gf__arena *ar, const uint8_t *s, size_t n)
{
    char *d;
    if (n == SIZE_MAX) return NULL;
    d = (char *)gf__arena_get(ar, n + 1);
    if (!d) return NULL;
    if (n) memcpy(d, s, n);
    d[n] = 0;
    return d;
}

/* a decimal unsigned integer of n bytes (no sign, no spaces): 0, or -1 on
   anything else or when it does not fit in 64 bits */
static int gf__parse_u64(const char *s, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    size_t i;
    if (n == 0 || n > 20) return -1;
    for (i = 0; i < n; i++) {
        unsigned d = (unsigned)(unsigned char)s[i] - '0';
        if (d > 9 || v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* >>source --------------------------------------------------------------- */
#if !defined(GPUFEED_NO_STDIO) && defined(__linux__)
#include <sys/vfs.h>
#endif

typedef struct gf__memsrc {
    const uint8_t *data;
    size_t size;
} gf__memsrc;

/* a source handed to gpufeed and not kept: closed (its close is optional) */
static void gf__source_close(const gpufeed_source *src)
{
    if (src && src->close) src->close(src->ctx);
}

/* ": why" a source's last read failed (its why hook), or "" */
static const char *gf__source_why(const gpufeed_source *src, char *buf, size_t cap)
{
    buf[0] = 0;
    if (src->why && cap > 2) {
        buf[0] = ':';
        buf[1] = ' ';
        buf[2] = 0;
        src->why(src->ctx, buf + 2, cap - 2);
        if (!buf[2]) buf[0] = 0;
    }
    return buf;
}

static int gf__mem_read(void *ctx, uint64_t off, void *buf, size_t len)
{
    gf__memsrc *m = (gf__memsrc *)ctx;
    if (off > m->size || len > m->size - off) return -1;
    if (len) memcpy(buf, m->data + off, len);
    return 0;
}

#ifndef GPUFEED_NO_STDIO
/* A local file read with pread. A dataset's files do not keep their
   descriptors: a mapped one closes it once mapped (reads come from the
   mapping), and with more than GPUFEED_MAX_OPEN_FILES files read with
   pread (or a quarter of the descriptor limit, if less), each is opened
   again when a read needs it, in a pool that closes
   the least recently read idle one beyond that many (so a dataset of
   10,000 files runs under `ulimit -n 256`). A file opened again must be
   the one first opened (device, inode, size, modification time), else
   the read fails saying so. */
/* a stat's modification and change times, their nanoseconds (glibc without POSIX 2008 names them apart) */
#if defined(__GLIBC__) && !defined(__USE_XOPEN2K8)
#define GF__MTIME_NS(st) ((uint64_t)(st).st_mtimensec)
#define GF__CTIME_NS(st) ((uint64_t)(st).st_ctimensec)
#else
#define GF__MTIME_NS(st) ((uint64_t)(st).st_mtim.tv_nsec)
#define GF__CTIME_NS(st) ((uint64_t)(st).st_ctim.tv_nsec)
#endif
/* strerror(e) into out, and for a process or a system out of file
   descriptors, that it is so and what helps */
static void gf__errno_text(int e, char *out, size_t cap)
{
    if (e == EMFILE)
        gf__fmt(out, cap, "%s: this process is out of file descriptors (raise its limit, ulimit -n, or open fewer files at once)", strerror(e));
    else if (e == ENFILE) gf__fmt(out, cap, "%s: the system is out of file descriptors (its file table is full)", strerror(e));
    else gf__fmt(out, cap, "%s", strerror(e));
}
typedef struct gf__fdpool gf__fdpool;
typedef struct gf__fdsrc {
    int fd;                            /* -1: closed until a read needs it (pool) */
    gf__fdpool *pool;                  /* NULL: the descriptor stays open */
    const char *path;                  /* opened again from here */
    uint64_t dev, ino, size;           /* the file first opened */
    int64_t mt_s, mt_ns;
    int32_t users;                     /* reads in flight (under the pool's lock) */
    uint64_t last;                     /* the pool's tick at its last read */
    int reopen_errno;                  /* why the last reopen failed (0: another file) */
} gf__fdsrc;
struct gf__fdpool {
#if !defined(GPUFEED_NO_THREADS)
    pthread_mutex_t mu;
#endif
    gf__fdsrc **src;
    int32_t n, cap, open, max;
    uint64_t tick;
};
static void gf__fdpool_lock(gf__fdpool *p)
{
#if !defined(GPUFEED_NO_THREADS)
    pthread_mutex_lock(&p->mu);
#else
    (void)p;
#endif
}
static void gf__fdpool_unlock(gf__fdpool *p)
{
#if !defined(GPUFEED_NO_THREADS)
    pthread_mutex_unlock(&p->mu);
#else
    (void)p;
#endif
}
/* the descriptor for one read: opened again (the pool's least recently
   read idle file closed at its limit); 0, -1 when it cannot be */
static int gf__fdpool_get(gf__fdsrc *s)
{
    gf__fdpool *p = s->pool;
    struct stat st;
    int fd;
    gf__fdpool_lock(p);
    if (s->fd < 0) {
        if (p->open >= p->max) {
            gf__fdsrc *lru = NULL;
            int32_t i;
            for (i = 0; i < p->n; i++)
                if (p->src[i]->fd >= 0 && p->src[i]->users == 0 && (!lru || p->src[i]->last < lru->last)) lru = p->src[i];
            if (lru) { close(lru->fd); lru->fd = -1; p->open--; }
        }
        fd = open(s->path, O_RDONLY);
        if (fd < 0) { s->reopen_errno = errno; gf__fdpool_unlock(p); return -1; }
        if (fstat(fd, &st) != 0 || (uint64_t)st.st_dev != s->dev || (uint64_t)st.st_ino != s->ino || (uint64_t)st.st_size != s->size ||
            (int64_t)st.st_mtime != s->mt_s || (int64_t)GF__MTIME_NS(st) != s->mt_ns) {
            close(fd);
            s->reopen_errno = 0;
            gf__fdpool_unlock(p);
            return -1;
        }
        s->fd = fd;
        p->open++;
    }
    s->users++;
    gf__fdpool_unlock(p);
    return 0;
}
static void gf__fdpool_put(gf__fdsrc *s)
{
    gf__fdpool_lock(s->pool);
    s->users--;
    s->last = ++s->pool->tick;
    gf__fdpool_unlock(s->pool);
}
/* why a pooled file's read failed (gpufeed_source.why) */
static void gf__fd_why(void *ctx, char *buf, size_t cap)
{
    const gf__fdsrc *s = (const gf__fdsrc *)ctx;
    if (!s->pool || s->fd >= 0) gf__fmt(buf, cap, "%s", "");
    else if (s->reopen_errno) {
        char e[200];
        gf__errno_text(s->reopen_errno, e, sizeof e);
        gf__fmt(buf, cap, "opening it again for the read failed: %s", e);
    }
    else gf__fmt(buf, cap, "it is no longer the file the dataset opened (another file, size or modification time)");
}
static int gf__fd_read_open(gf__fdsrc *s, uint64_t off, void *buf, size_t len);
static int gf__fd_read(void *ctx, uint64_t off, void *buf, size_t len)
{
    gf__fdsrc *s = (gf__fdsrc *)ctx;
    int r;
    if (!s->pool) return gf__fd_read_open(s, off, buf, len);
    if (gf__fdpool_get(s)) return -1;
    r = gf__fd_read_open(s, off, buf, len);
    gf__fdpool_put(s);
    return r;
}
static int gf__fd_read_open(gf__fdsrc *s, uint64_t off, void *buf, size_t len)
{
    uint8_t *p = (uint8_t *)buf;
    while (len) {
        size_t chunk = len > (1u << 30) ? (1u << 30) : len;
        ssize_t r;
        if (off > (uint64_t)INT64_MAX) return -1;
        r = pread(s->fd, p, chunk, (off_t)off);
        if (r < 0) { if (errno == EINTR) continue; return -1; }
        if (r == 0) return -1; /* file shrank */
        p += r;
        off += (uint64_t)r;
        len -= (size_t)r;
    }
    return 0;
}

/* A file's read-only mapping placed one page past a 2 MiB boundary
   (GPUFEED_MAP_HUGE 1), or NULL (the caller maps it where the kernel
   chooses). A dataset asks for huge pages on the files it reads most of,
   so pages come into the page cache as 2 MiB folios; a mapping aligned
   to them would map each in one fault, but it would also keep each
   column's whole 2 MiB mapped however little of it the reader still
   needs, and letting bytes go behind the reader would no longer bound the
   process's RSS (4 MiB a column a reader: 137 MiB against 36 over 1M x 32
   rows). Placed off the boundary, a fault maps 64 KiB of a large folio at
   once, cheaper than of small ones, and what is let go leaves the RSS. */
static void *gf__map_placed(size_t len, size_t ps, int fd)
{
#if GPUFEED_MAP_HUGE == 1 && defined(__linux__)
    const size_t huge = (size_t)2 << 20;
    size_t span, used;
    uint8_t *r, *a;
    if (len > SIZE_MAX - huge - ps || ps > huge || (ps & (ps - 1))) return NULL;
    used = (len + ps - 1) / ps * ps;
    span = used + huge;
    r = (uint8_t *)mmap(NULL, span, PROT_NONE, MAP_PRIVATE | GF__MAP_ANON, -1, 0); /* reserved: nothing else lands there */
    if (r == (uint8_t *)MAP_FAILED) return NULL;
    a = r + ((huge - ((uintptr_t)r & (huge - 1))) & (huge - 1)) + ps; /* a boundary at or after r, then a page: a + used <= r + span */
    if (mmap(a, len, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED) { (void)munmap(r, span); return NULL; }
    if (a > r) (void)munmap(r, (size_t)(a - r));                     /* the reservation around it given back */
    if (r + span > a + used) (void)munmap(a + used, (size_t)(r + span - (a + used)));
    return a;
#else
    (void)len; (void)ps; (void)fd;
    return NULL;
#endif
}


/* A file system whose files another machine may change, shrink or remove
   while they are read (statfs's magic number): NFS, Lustre, FUSE, SMB and
   CIFS, Ceph, GPFS, 9P, AFS. A mapping of such a file raises SIGBUS when
   it shrinks (and mapped reads fault slowly there), so its files are read
   with pread unless the caller asks for a mapping (GPUFEED_OPEN_MMAP). */
static int gf__fs_is_network(uint64_t magic)
{
    static const uint32_t net[] = {
        0x6969u, 0x0BD00BD0u, 0x65735546u, 0x517Bu, 0xFF534D42u, 0xFE534D42u, 0x00C36400u, 0x47504653u, 0x01021997u, 0x5346414Fu
    };
    size_t i;
    for (i = 0; i < sizeof net / sizeof net[0]; i++) if (magic == net[i]) return 1;
    return 0;
}
static int gf__fd_on_network(int fd)
{
#if defined(__linux__)
    struct statfs sf;
    return fstatfs(fd, &sf) == 0 && gf__fs_is_network((uint64_t)(unsigned long)sf.f_type);
#else
    (void)fd;
    return 0;
#endif
}

/* Opens a path source: the descriptor (*fd_open = 1 once open), its size
   and a private read-only mapping of a non-empty file unless `flags` asks
   for positioned reads (GPUFEED_OPEN_PREAD) or the file is on a network
   file system and the mapping was not asked for (GPUFEED_OPEN_MMAP). *map
   stays NULL when mmap fails: reads then go through pread.
   0, -1 when open fails (errno says why), -2 when it is not a regular file. */
static int gf__path_open(const char *path, uint32_t flags, gf__fdsrc *fd, int *fd_open, uint64_t *size,
                         const uint8_t **map, uint64_t *map_len, uint64_t *map_page)
{
    struct stat st;
    int use_map = !(flags & GPUFEED_OPEN_PREAD);
    fd->fd = open(path, O_RDONLY);
    if (fd->fd < 0) return -1;
    *fd_open = 1;
    if (fstat(fd->fd, &st) != 0 || !S_ISREG(st.st_mode)) return -2;
    *size = (uint64_t)st.st_size;
    if (use_map && !(flags & GPUFEED_OPEN_MMAP) && gf__fd_on_network(fd->fd)) use_map = 0;
    if (use_map && st.st_size > 0) { /* mapped: measured faster than copies */
        long ps = sysconf(_SC_PAGESIZE);
        void *m = gf__map_placed((size_t)st.st_size, ps > 0 ? (size_t)ps : 4096, fd->fd);
        if (!m) m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd->fd, 0);
        if (m != MAP_FAILED) {
            *map = (const uint8_t *)m;
            *map_len = (uint64_t)st.st_size;
            *map_page = ps > 0 ? (uint64_t)ps : 4096;
        }
    }
    return 0;
}
#endif

#ifndef GPUFEED_NO_STDIO
#ifndef __cplusplus
extern char *realpath(const char *, char *);
#endif
/* A local path's canonical spelling (the tensor cache's identity of a
   file): absolute, symlinks resolved, no "." or ".." (realpath); when
   that fails (the file is gone), the path made absolute against the
   working directory. 0, or -1 when it does not fit `cap`. */
static int gf__canon_path(const char *path, char *out, size_t cap)
{
    char buf[4096], cwd[4096];
    if (!path || !*path || cap == 0) return -1;
    if (realpath(path, buf)) {
        if (strlen(buf) >= cap) return -1;
        memcpy(out, buf, strlen(buf) + 1);
        return 0;
    }
    if (path[0] == '/') gf__fmt(out, cap, "%s", path);
    else if (getcwd(cwd, sizeof cwd)) gf__fmt(out, cap, "%s/%s", cwd, path);
    else return -1;
    return 0;
}
#endif

/* >>remote --------------------------------------------------------------- */
/* Objects in S3 and S3-compatible stores (s3://bucket/key: MinIO, Ceph,
   GCS's interoperability, rclone) and plain HTTP(S) URLs, with
   GPUFEED_CURL: libcurl is loaded at run time (GPUFEED_CURL_LIB,
   libcurl.so.4), like the CUDA driver in >>gpu, so a build needs no curl
   headers and no -lcurl, and a program built with the macro still runs
   where libcurl is missing (then a remote path is an error naming the
   library). Without the macro a remote path is an error naming it.

   Configuration, read when a dataset (or file) opens:
     AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY  requests signed with SigV4
                        (libcurl's CURLOPT_AWS_SIGV4, libcurl >= 7.75);
                        without them requests go unsigned (public buckets)
     AWS_SESSION_TOKEN  sent (and signed) as x-amz-security-token
     AWS_REGION, AWS_DEFAULT_REGION   the signing region (us-east-1)
     AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL   a custom endpoint
                        (http://127.0.0.1:9000): path-style URLs
                        ENDPOINT/BUCKET/KEY; without one, AWS's
                        virtual-hosted https://BUCKET.s3.REGION.amazonaws.com/KEY
                        (path-style for a bucket with a dot)
     AWS_CA_BUNDLE      certificates to verify TLS with
   and GPUFEED_REMOTE_INFLIGHT, _GAP, _PART, _RETRIES, _TIMEOUT, _BUFFER
   (environment variables of the macros' names, plain integers) override
   the macros' defaults (>>options).

   Paths: an s3:// key that ends in '/' (or the bucket alone) is a prefix:
   every *.parquet object below it, recursively (ListObjectsV2, all
   pages), sorted by key, leaving out keys with a path segment below the
   prefix that starts with '_' or '.' (_SUCCESS, _committed_*, .crc). A key
   with '*', '?' or '[' is a glob on whole keys ('*', '?' and [...] within a
   segment, '**' for any number of segments), with the same rule for
   hidden segments below its literal directory. Any other key is an object
   (HEAD), or, when there is none, a prefix. Expanded names keep the keys
   as they are (s3://bucket/year=2024/part-0.parquet). http(s):// URLs are
   single objects.

   Reads: opening an object is one suffix GET of its last
   GPUFEED_REMOTE_TAIL bytes (size, ETag, footer), plus one of its first
   4 KiB when the object is larger; the objects of a dataset open
   GPUFEED_REMOTE_INFLIGHT requests at a time, 64 objects a round. A
   unit's byte ranges (will_read) are merged across gaps of at most
   GPUFEED_REMOTE_GAP bytes (never more gap than wanted bytes); what of
   them is not held yet is cut into parts of at most GPUFEED_REMOTE_PART
   bytes and fetched GPUFEED_REMOTE_INFLIGHT at a time (libcurl's multi
   interface, the connections kept for the next unit), while other
   threads that read those bytes wait for them; read_at serves them from
   memory. Read-ahead where requests are slow: from the GETs so far the
   context averages the time to a response's first byte and the transfer
   rate; their product is what one more request costs in bytes. A unit's
   range that starts where an earlier one of the same object ended (a
   read stream) is read on ahead (doubling, at most 4 times the range and
   that product); a read_at outside the announced ranges (the page
   headers a dataset walks in a file without a page index) reads a part
   ahead, and when it continues such a read-ahead, twice the last one (at
   most 8 parts, in parallel): a file without a page index opens in a few
   large requests, and its bytes are there for the units while the buffer
   holds them. Read-ahead only uses room that drops no bytes not yet
   read. Fetched ranges are kept up to GPUFEED_REMOTE_BUFFER bytes per
   dataset (those read through dropped first, then the least recently
   used): it should hold the units all workers decode at once. Every
   response is checked: its status,
   Content-Range against the range asked for, the byte count, the ETag
   against the one seen at open (a changed object is an error, never a
   mix of two versions). 5xx, 429, 408, dropped connections, short bodies
   and timeouts are retried GPUFEED_REMOTE_RETRIES times with exponential
   backoff (100 ms doubling, at most 5 s); errors name the bucket, key,
   byte range, the HTTP status and S3's error code (a wrong secret key:
   403 SignatureDoesNotMatch).

   Identity (the tensor cache's key): the URL, the size and the ETag, so
   a new version of an object makes a new cache; an HTTP server without
   ETags: Last-Modified.

   No global mutable state but one: curl_global_init must run once per
   process before other curl calls and is not thread-safe, so it runs
   under pthread_once (gf__curl_global_init). A dataset's remote context
   (gf__rctx) holds the loaded library, its curl handles and the fetched
   ranges; every source of the dataset holds a reference to it. */

/* s3://, https:// and http:// paths go to this section */
static int gf__remote_is_url(const char *p)
{
    if (!p) return 0;
    return strncmp(p, "s3://", 5) == 0 || strncmp(p, "https://", 8) == 0 || strncmp(p, "http://", 7) == 0;
}

/* A prefix's keys, sorted, as URLs: expansion's output through a callback
   (the caller's string vector lives in a later section); root: the length
   of the URL's part above the tree the path named (s3://bucket/prefix/),
   below which key=value segments are partition values */
typedef int (*gf__remote_add_fn)(void *user, const char *url, size_t root);

#ifdef GPUFEED_CURL
/* ---- pure helpers: ranges, globs, URLs, XML (no network) ---- */

/* sorts ranges by offset and merges those closer than `gap` (a merge never
   adds more gap bytes than the wanted bytes so far: at most twice what is
   wanted is fetched); overlapping or touching ranges always merge.
   Returns the new count. */
static int32_t gf__rcoalesce(uint64_t *off, uint64_t *len, int32_t n, uint64_t gap)
{
    int32_t a, b, m = 0;
    uint64_t useful = 0;
    for (a = 1; a < n; a++) { /* insertion sort: a unit has few ranges */
        uint64_t o = off[a], l = len[a];
        for (b = a; b > 0 && off[b - 1] > o; b--) {
            off[b] = off[b - 1];
            len[b] = len[b - 1];
        }
        off[b] = o;
        len[b] = l;
    }
    for (a = 0; a < n; a++) {
        uint64_t end, pend;
        if (len[a] == 0) continue;
        end = off[a] + len[a];
        if (m > 0) {
            pend = off[m - 1] + len[m - 1];
            if (off[a] <= pend || (off[a] - pend <= gap && off[a] - pend <= useful)) {
                if (end > pend) len[m - 1] = end - off[m - 1];
                useful += len[a];
                continue;
            }
        }
        off[m] = off[a];
        len[m] = len[a];
        useful = len[a];
        m++;
    }
    return m;
}

/* cuts ranges into parts of at most `part` bytes (equal ones per range)
   into po/pl (cap entries); the number of parts, -1 when cap is too small */
static int32_t gf__rsplit(const uint64_t *off, const uint64_t *len, int32_t n, uint64_t part, uint64_t *po, uint64_t *pl, int32_t cap)
{
    int32_t i, m = 0;
    if (part == 0) part = 1;
    for (i = 0; i < n; i++) {
        uint64_t k = (len[i] + part - 1) / part, each, at = 0;
        if (len[i] == 0) continue;
        each = (len[i] + k - 1) / k;
        while (at < len[i]) {
            uint64_t l = len[i] - at < each ? len[i] - at : each;
            if (m >= cap) return -1;
            po[m] = off[i] + at;
            pl[m] = l;
            m++;
            at += l;
        }
    }
    return m;
}

/* a character class [...] at p (p after '['): *matched, and the pointer
   after ']' (NULL: no closing bracket, then '[' is literal) */
static const char *gf__rglob_class(const char *p, char ch, int *matched)
{
    int neg = 0, hit = 0, first = 1;
    if (*p == '!' || *p == '^') { neg = 1; p++; }
    while (*p && (first || *p != ']')) {
        char lo = *p, hi = *p;
        if (lo == '/') return NULL;
        if (p[1] == '-' && p[2] && p[2] != ']') { hi = p[2]; p += 2; }
        if ((unsigned char)ch >= (unsigned char)lo && (unsigned char)ch <= (unsigned char)hi) hit = 1;
        p++;
        first = 0;
    }
    if (*p != ']') return NULL;
    *matched = hit != neg;
    return p + 1;
}

/* 1 when key k matches glob p: '*' any run and '?' any character within a
   path segment, [...] a class, '**' as a whole segment any number of
   segments (none included) */
static int gf__rglob(const char *p, const char *k, int seg_start)
{
    while (*p) {
        if (p[0] == '*' && p[1] == '*' && seg_start && (p[2] == '/' || p[2] == 0)) {
            const char *rest = p[2] ? p + 3 : p + 2;
            if (!*rest) return 1;
            for (;;) {
                if (gf__rglob(rest, k, 1)) return 1;
                k = strchr(k, '/');
                if (!k) return 0;
                k++;
            }
        }
        if (*p == '*') {
            while (*p == '*') p++;
            for (;;) {
                if (gf__rglob(p, k, 0)) return 1;
                if (!*k || *k == '/') return 0;
                k++;
            }
        }
        if (*p == '[') {
            int hit = 0;
            const char *q = *k && *k != '/' ? gf__rglob_class(p + 1, *k, &hit) : NULL;
            if (q) {
                if (!hit) return 0;
                p = q;
                k++;
                seg_start = 0;
                continue;
            }
            if (*k != '[') return 0; /* no ']': a literal '[' */
        } else if (*p == '?') {
            if (!*k || *k == '/') return 0;
        } else if (*p != *k) return 0;
        seg_start = *p == '/';
        p++;
        k++;
    }
    return *k == 0;
}

/* 1 when a path segment of rel starts with '_' or '.' (Spark's _SUCCESS,
   _committed_*, .crc files, hidden directories) */
static int gf__rhidden(const char *rel)
{
    const char *s = rel;
    while (*s) {
        if (*s == '_' || *s == '.') return 1;
        s = strchr(s, '/');
        if (!s) return 0;
        s++;
    }
    return 0;
}

/* appends src to dst (n used of cap) percent-encoding every byte but
   A-Z a-z 0-9 - _ . ~ (and '/' with keep_slash): SigV4's encoding of paths
   and query values. 0, or -1 when it does not fit. */
static int gf__uri_encode(char *dst, size_t cap, size_t *n, const char *src, int keep_slash)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; *src; src++) {
        unsigned char c = (unsigned char)*src;
        int plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
                    c == '~' || (keep_slash && c == '/');
        if (*n + (plain ? 1 : 3) >= cap) return -1;
        if (plain) {
            dst[(*n)++] = (char)c;
            continue;
        }
        dst[(*n)++] = '%';
        dst[(*n)++] = hex[c >> 4];
        dst[(*n)++] = hex[c & 15];
    }
    dst[*n] = 0;
    return 0;
}

static int gf__hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* the XML entity at s[*i] ('&'): one of the five named ones or &#N; /
   &#xN; (ASCII): *c, *i moved past it; 0, or -1 when malformed */
static int gf__xml_entity(const char *s, size_t n, size_t *i, int *c)
{
    static const char *const ent[] = { "amp;", "lt;", "gt;", "quot;", "apos;" };
    static const char rep[] = "&<>\"'";
    size_t k, j, at = *i + 1;
    int hexa, v = 0, d;
    for (k = 0; k < 5; k++) {
        size_t el = strlen(ent[k]);
        if (n - at >= el && memcmp(s + at, ent[k], el) == 0) {
            *c = rep[k];
            *i = at + el;
            return 0;
        }
    }
    if (at + 1 >= n || s[at] != '#') return -1;
    hexa = s[at + 1] == 'x';
    for (j = at + 1 + (size_t)hexa; j < n && s[j] != ';' && v < 128; j++) {
        d = hexa ? gf__hexval(s[j]) : (s[j] >= '0' && s[j] <= '9' ? s[j] - '0' : -1);
        if (d < 0) return -1;
        v = v * (hexa ? 16 : 10) + d;
    }
    if (j >= n || s[j] != ';' || v <= 0 || v >= 128) return -1;
    *c = v;
    *i = j + 1;
    return 0;
}

/* decodes n bytes of s into dst (cap): XML's entities, then, with url,
   %XX and '+' for a space (S3's encoding-type=url). 0, or -1 on a
   malformed escape, a NUL byte or an overflow. */
static int gf__rdecode(const char *s, size_t n, int url, char *dst, size_t cap)
{
    size_t i = 0, m = 0;
    while (i < n) {
        int c = (unsigned char)s[i];
        if (c == '&') {
            if (gf__xml_entity(s, n, &i, &c)) return -1;
        } else if (url && c == '+') {
            c = ' ';
            i++;
        } else if (url && c == '%') {
            int hi = i + 2 < n ? gf__hexval(s[i + 1]) : -1, lo = hi >= 0 ? gf__hexval(s[i + 2]) : -1;
            if (hi < 0 || lo < 0) return -1;
            c = hi * 16 + lo;
            i += 3;
        } else i++;
        if (c == 0 || m + 1 >= cap) return -1;
        dst[m++] = (char)c;
    }
    dst[m] = 0;
    return 0;
}

/* the next <tag>value</tag> in [*p, end): value and its length, *p moved
   past it; 1 found, 0 none, -1 an opening tag without its closing one.
   Enough XML for S3's answers (no attributes on these elements, no CDATA). */
static int gf__xml_tag(const char **p, const char *end, const char *tag, const char **v, size_t *vn)
{
    size_t tl = strlen(tag);
    const char *s = *p;
    while (end - s >= (ptrdiff_t)(tl + 2)) {
        const char *lt = (const char *)memchr(s, '<', (size_t)(end - s));
        const char *q;
        if (!lt || end - lt < (ptrdiff_t)(tl + 2)) return 0;
        if (memcmp(lt + 1, tag, tl) != 0 || lt[1 + tl] != '>') {
            s = lt + 1;
            continue;
        }
        q = lt + tl + 2;
        for (s = q; end - s >= (ptrdiff_t)(tl + 3); s++) {
            if (s[0] == '<' && s[1] == '/' && memcmp(s + 2, tag, tl) == 0 && s[2 + tl] == '>') {
                *v = q;
                *vn = (size_t)(s - q);
                *p = s + tl + 3;
                return 1;
            }
        }
        return -1;
    }
    return 0;
}


/* "bytes A-B/TOTAL" (TOTAL may be '*': *total = UINT64_MAX): 0 or -1 */
static int gf__parse_crange(const char *s, size_t n, uint64_t *a, uint64_t *b, uint64_t *total)
{
    const char *dash, *slash, *e = s + n;
    while (s < e && *s == ' ') s++;
    if (e - s < 6 || memcmp(s, "bytes", 5) != 0) return -1;
    s += 5;
    while (s < e && *s == ' ') s++;
    dash = (const char *)memchr(s, '-', (size_t)(e - s));
    slash = dash ? (const char *)memchr(dash, '/', (size_t)(e - dash)) : NULL;
    if (!slash) return -1;
    if (gf__parse_u64(s, (size_t)(dash - s), a) || gf__parse_u64(dash + 1, (size_t)(slash - dash - 1), b) || *b < *a) return -1;
    if (e - slash == 2 && slash[1] == '*') *total = UINT64_MAX;
    else if (gf__parse_u64(slash + 1, (size_t)(e - slash - 1), total) || *total <= *b) return -1;
    return 0;
}

/* s3://BUCKET/KEY into its parts (KEY may be empty): 0, or -1 when the
   bucket is missing or a part does not fit */
static int gf__s3_split(const char *url, char *bucket, size_t bcap, char *key, size_t kcap)
{
    const char *b = url + 5, *slash;
    size_t bl;
    if (strncmp(url, "s3://", 5) != 0) return -1;
    slash = strchr(b, '/');
    bl = slash ? (size_t)(slash - b) : strlen(b);
    if (bl == 0 || bl >= bcap) return -1;
    memcpy(bucket, b, bl);
    bucket[bl] = 0;
    b = slash ? slash + 1 : b + bl;
    if (strlen(b) >= kcap) return -1;
    memcpy(key, b, strlen(b) + 1);
    return 0;
}

/* the request URL of an object (a key) or, with key NULL, of its bucket:
   ENDPOINT/BUCKET[/KEY] with an endpoint (path style), else AWS's
   https://BUCKET.s3.REGION.amazonaws.com[/KEY] (https://s3.REGION.
   amazonaws.com/BUCKET[/KEY] for a bucket with a dot). 0, or -1 when it
   does not fit `cap`. */
static int gf__s3_url(const char *endpoint, const char *region, const char *bucket, const char *key, char *out, size_t cap)
{
    size_t n = 0;
    int w;
    if (endpoint && *endpoint) w = snprintf(out, cap, "%s/%s", endpoint, bucket);
    else if (strchr(bucket, '.')) w = snprintf(out, cap, "https://s3.%s.amazonaws.com/%s", region, bucket);
    else w = snprintf(out, cap, "https://%s.s3.%s.amazonaws.com", bucket, region);
    if (w < 0 || (size_t)w >= cap) return -1;
    n = (size_t)w;
    if (!key) return 0;
    if (n + 1 >= cap) return -1;
    out[n++] = '/';
    out[n] = 0;
    return gf__uri_encode(out, cap, &n, key, 1);
}

/* a ListObjectsV2 request: the bucket's URL, then its query with the
   parameters in SigV4's order (sorted by name) and values encoded */
static int gf__s3_list_url(const char *endpoint, const char *region, const char *bucket, const char *prefix, const char *token,
                           char *out, size_t cap)
{
    size_t n;
    if (gf__s3_url(endpoint, region, bucket, NULL, out, cap)) return -1;
    n = strlen(out);
    if (n + 2 >= cap) return -1;
    out[n++] = (endpoint && *endpoint) || strchr(bucket, '.') ? '?' : '/';
    if (out[n - 1] == '/') out[n++] = '?';
    out[n] = 0;
    if (token) {
        if (n + 20 >= cap) return -1;
        memcpy(out + n, "continuation-token=", 20);
        n += 19;
        if (gf__uri_encode(out, cap, &n, token, 0) || n + 1 >= cap) return -1;
        out[n++] = '&';
        out[n] = 0;
    }
    if (n + 38 > cap) return -1;
    memcpy(out + n, "encoding-type=url&list-type=2&prefix=", 38);
    n += 37;
    return gf__uri_encode(out, cap, &n, prefix, 0);
}

static char *gf__rstrdup(const gpufeed_allocator *a, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    char *d = (char *)gf__alloc(a, n + 1);
    if (!d) return NULL;
    if (n) memcpy(d, s, n);
    d[n] = 0;
    return d;
}

/* ---- pure helpers: whole XML answers, times, INI and JSON (no network) ---- */

static int gf__xml_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* up to 40 bytes of s as printable text, for messages */
static void gf__snippet(const char *s, size_t n, char *out, size_t cap)
{
    size_t i, m = 0;
    for (i = 0; i < n && i < 40 && m + 1 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        out[m++] = c >= 32 && c < 127 ? (char)c : '?';
    }
    out[m] = 0;
}

/* an answer that is one whole XML document whose root element is `root`:
   an optional declaration, then <root ...> first and </root> last
   (whitespace around them). 0, or -1 with what is wrong in why: a page
   cut anywhere, HTML or garbage are never taken for an answer */
static int gf__xml_whole(const char *s, size_t n, const char *root, char *why, size_t cap)
{
    size_t rl = strlen(root), i = 0, e = n;
    char snip[48];
    while (i < n && gf__xml_space(s[i])) i++;
    if (n - i >= 5 && memcmp(s + i, "<?xml", 5) == 0) {
        size_t j = i + 5;
        while (j + 1 < n && !(s[j] == '?' && s[j + 1] == '>')) j++;
        if (j + 1 >= n) {
            gf__fmt(why, cap, "a cut XML declaration");
            return -1;
        }
        i = j + 2;
        while (i < n && gf__xml_space(s[i])) i++;
    }
    if (n - i < rl + 2 || s[i] != '<' || memcmp(s + i + 1, root, rl) != 0 || !(s[i + 1 + rl] == '>' || gf__xml_space(s[i + 1 + rl]))) {
        gf__snippet(s + i, n - i, snip, sizeof snip);
        gf__fmt(why, cap, "not a <%s> document: it starts with '%s'", root, snip);
        return -1;
    }
    while (e > i && gf__xml_space(s[e - 1])) e--;
    if (e - i < 2 * rl + 5 || memcmp(s + e - rl - 3, "</", 2) != 0 || memcmp(s + e - rl - 1, root, rl) != 0 || s[e - 1] != '>') {
        gf__fmt(why, cap, "cut short: the document does not end with </%s>", root);
        return -1;
    }
    return 0;
}

/* w decimal digits at s: 0 and *v, or -1 */
static int gf__digits(const char *s, int w, int64_t *v)
{
    int k;
    *v = 0;
    for (k = 0; k < w; k++) {
        if (s[k] < '0' || s[k] > '9') return -1;
        *v = *v * 10 + (s[k] - '0');
    }
    return 0;
}

/* days since 1970-01-01 of a proleptic Gregorian date: years counted from
   March in eras of 400 years (146,097 days) */
static int64_t gf__days_civil(int64_t y, int64_t m, int64_t d)
{
    int64_t era, yoe, doy, doe;
    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* the date of day z since 1970-01-01 (the inverse of gf__days_civil) */
static void gf__civil_days(int64_t z, int64_t *y, int *m, int *d)
{
    int64_t era, doe, yoe, doy, mp;
    z += 719468;
    era = (z >= 0 ? z : z - 146096) / 146097;
    doe = z - era * 146097;
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

/* an ISO 8601 time as S3, STS and the metadata endpoints write it
   (2026-11-28T12:00:00Z, fractions of a second, +HH:MM or none: UTC)
   into unix seconds: 0, or -1 */
static int gf__iso8601(const char *s, size_t n, int64_t *out)
{
    static const int at[6] = { 0, 5, 8, 11, 14, 17 }, w[6] = { 4, 2, 2, 2, 2, 2 };
    int64_t v[6], t, hh, mm;
    size_t i = 19;
    int k;
    if (n < 19 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || s[13] != ':' || s[16] != ':') return -1;
    for (k = 0; k < 6; k++)
        if (gf__digits(s + at[k], w[k], &v[k])) return -1;
    if (v[1] < 1 || v[1] > 12 || v[2] < 1 || v[2] > 31 || v[3] > 23 || v[4] > 59 || v[5] > 60) return -1;
    t = gf__days_civil(v[0], v[1], v[2]) * 86400 + v[3] * 3600 + v[4] * 60 + v[5];
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    }
    if (i < n && (s[i] == 'Z' || s[i] == 'z')) i++;
    else if (i + 6 == n && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
        if (gf__digits(s + i + 1, 2, &hh) || gf__digits(s + i + 4, 2, &mm) || hh > 23 || mm > 59) return -1;
        t -= (s[i] == '+' ? 1 : -1) * (hh * 3600 + mm * 60);
        i += 6;
    }
    if (i != n) return -1;
    *out = t;
    return 0;
}

static const char gf__months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
static const char gf__wdays[] = "ThuFriSatSunMonTueWed"; /* 1970-01-01 was a Thursday */

/* an HTTP date (Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT) into unix
   seconds: 0, or -1 */
static int gf__http_date(const char *s, size_t n, int64_t *out)
{
    int64_t d, y, hh, mm, ss;
    int m;
    if (n != 29 || s[3] != ',' || s[4] != ' ' || s[7] != ' ' || s[11] != ' ' || s[16] != ' ' || s[19] != ':' || s[22] != ':' ||
        memcmp(s + 25, " GMT", 4) != 0)
        return -1;
    for (m = 0; m < 12 && memcmp(gf__months + 3 * m, s + 8, 3) != 0; m++) {}
    if (m == 12 || gf__digits(s + 5, 2, &d) || gf__digits(s + 12, 4, &y) || gf__digits(s + 17, 2, &hh) || gf__digits(s + 20, 2, &mm) ||
        gf__digits(s + 23, 2, &ss) || d < 1 || d > 31 || hh > 23 || mm > 59 || ss > 60)
        return -1;
    *out = gf__days_civil(y, m + 1, d) * 86400 + hh * 3600 + mm * 60 + ss;
    return 0;
}

/* unix seconds as an HTTP date (If-Unmodified-Since) into out (>= 30 bytes) */
static void gf__http_date_fmt(int64_t t, char *out, size_t cap)
{
    int64_t days = (t >= 0 ? t : t - 86399) / 86400, s = t - days * 86400, y;
    int m, d, wd = (int)(((days % 7) + 7) % 7);
    gf__civil_days(days, &y, &m, &d);
    gf__fmt(out, cap, "%.3s, %02d %.3s %04lld %02d:%02d:%02d GMT", gf__wdays + 3 * wd, d, gf__months + 3 * (m - 1), (long long)y, (int)(s / 3600),
            (int)(s / 60 % 60), (int)(s % 60));
}

/* a's first n bytes equal to b ignoring ASCII case, b's length n */
static int gf__ieq(const char *a, size_t n, const char *b)
{
    size_t i;
    if (strlen(b) != n) return 0;
    for (i = 0; i < n; i++) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = (char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = (char)(y - 'A' + 'a');
        if (x != y) return 0;
    }
    return 1;
}

/* a section header's name [ profile  dev ] against sect ("profile dev"):
   runs of spaces match one space */
static int gf__ini_sect_is(const char *h, size_t n, const char *sect)
{
    size_t i = 0;
    while (i < n && (h[i] == ' ' || h[i] == '\t')) i++;
    while (n > i && (h[n - 1] == ' ' || h[n - 1] == '\t')) n--;
    while (i < n && *sect) {
        if ((h[i] == ' ' || h[i] == '\t') && *sect == ' ') {
            while (i < n && (h[i] == ' ' || h[i] == '\t')) i++;
            sect++;
            continue;
        }
        if (h[i] != *sect) return 0;
        i++;
        sect++;
    }
    return i == n && !*sect;
}

/* one line of an INI text: [a, e) without its line end and trailing
   blanks; *next the next line's start */
static void gf__ini_line(const char *s, size_t n, size_t at, size_t *a, size_t *e, size_t *next)
{
    size_t j = at;
    while (j < n && s[j] != '\n') j++;
    *next = j < n ? j + 1 : n;
    *a = at;
    while (j > at && (s[j - 1] == '\r' || s[j - 1] == ' ' || s[j - 1] == '\t')) j--;
    *e = j;
}

/* The value of `key` in section `sect` of an AWS config or credentials
   file (n bytes of text): [sect] headers, `key = value` lines, '#' and
   ';' comment lines; indented lines (a nested setting's) are skipped. 1
   found (the value, trimmed, into out; key NULL: the section is there),
   0 absent, -1 a value that does not fit. */
static int gf__ini_get(const char *s, size_t n, const char *sect, const char *key, char *out, size_t cap)
{
    size_t at = 0, a, e, next;
    int in = 0;
    while (at < n) {
        const char *eq;
        gf__ini_line(s, n, at, &a, &e, &next);
        at = next;
        if (a == e || s[a] == '#' || s[a] == ';') continue;
        if (s[a] == ' ' || s[a] == '\t') continue; /* a nested setting's line */
        if (s[a] == '[') {
            in = s[e - 1] == ']' && e - a >= 2 && gf__ini_sect_is(s + a + 1, e - a - 2, sect);
            if (in && !key) return 1;
            continue;
        }
        eq = in && key ? (const char *)memchr(s + a, '=', e - a) : NULL;
        if (!eq) continue;
        {
            size_t kn = (size_t)(eq - (s + a)), v = (size_t)(eq - s) + 1;
            while (kn > 0 && (s[a + kn - 1] == ' ' || s[a + kn - 1] == '\t')) kn--;
            if (!gf__ieq(s + a, kn, key)) continue;
            while (v < e && (s[v] == ' ' || s[v] == '\t')) v++;
            if (e - v >= cap) return -1;
            memcpy(out, s + v, e - v);
            out[e - v] = 0;
            return 1;
        }
    }
    return 0;
}

/* A JSON text: credential_process's output and the container and
   instance metadata endpoints' answers. Strings unescaped (\uXXXX into
   UTF-8), numbers, literals, nested values skipped (16 levels at most);
   the whole text is checked. */
typedef struct gf__json {
    const char *s;
    size_t n, i;
    int depth;
} gf__json;

static void gf__json_ws(gf__json *j)
{
    while (j->i < j->n && gf__xml_space(j->s[j->i])) j->i++;
}

/* a code point as UTF-8 into out (m used of cap): 0 or -1 */
static int gf__utf8_put(uint32_t cp, char *out, size_t cap, size_t *m)
{
    int k = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4, b;
    static const unsigned char lead[5] = { 0, 0, 0xC0, 0xE0, 0xF0 };
    if (!out) return 0;
    if (*m + (size_t)k >= cap) return -1;
    for (b = k - 1; b > 0; b--) {
        out[*m + (size_t)b] = (char)(0x80 | (cp & 0x3F));
        cp >>= 6;
    }
    out[*m] = (char)(k == 1 ? cp : (lead[k] | cp));
    *m += (size_t)k;
    return 0;
}

/* \uXXXX at s (after the 'u'): the unit, or -1 */
static int32_t gf__json_u4(const char *s, size_t left)
{
    int32_t v = 0;
    int k;
    if (left < 4) return -1;
    for (k = 0; k < 4; k++) {
        int h = gf__hexval(s[k]);
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    return v;
}

/* an escape after '\' at j->i: its code point into *cp (a surrogate pair
   joined), j->i past it; 0 or -1 */
static int gf__json_escape(gf__json *j, uint32_t *cp)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *p;
    int32_t u, lo;
    char c = j->i < j->n ? j->s[j->i] : 0;
    if (c && (p = strchr(from, c)) != NULL) {
        *cp = (unsigned char)to[p - from];
        j->i++;
        return 0;
    }
    if (c != 'u' || (u = gf__json_u4(j->s + j->i + 1, j->n - j->i - 1)) < 0) return -1;
    j->i += 5;
    if (u >= 0xDC00 && u <= 0xDFFF) return -1;
    if (u >= 0xD800 && u <= 0xDBFF) {
        if (j->n - j->i < 6 || j->s[j->i] != '\\' || j->s[j->i + 1] != 'u') return -1;
        lo = gf__json_u4(j->s + j->i + 2, j->n - j->i - 2);
        if (lo < 0xDC00 || lo > 0xDFFF) return -1;
        j->i += 6;
        u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
    }
    *cp = (uint32_t)u;
    return 0;
}

/* a string at j->i ('"'): unescaped into out (NULL: skipped; *fits 0 when
   it did not fit in cap); 0 or -1 */
static int gf__json_string(gf__json *j, char *out, size_t cap, int *fits)
{
    size_t m = 0;
    *fits = 1;
    j->i++;
    while (j->i < j->n && j->s[j->i] != '"') {
        unsigned char c = (unsigned char)j->s[j->i];
        uint32_t cp = c;
        if (c < 0x20) return -1;
        if (c == '\\') {
            j->i++;
            if (gf__json_escape(j, &cp)) return -1;
            if (*fits && gf__utf8_put(cp, out, cap, &m)) *fits = 0;
            continue;
        }
        if (*fits && out && m + 1 < cap) out[m++] = (char)c;
        else if (out) *fits = 0;
        j->i++;
    }
    if (j->i >= j->n) return -1;
    j->i++;
    if (out && cap) out[m < cap ? m : cap - 1] = 0;
    return 0;
}

/* a number or a literal at j->i: [a, j->i); 0 or -1 */
static int gf__json_scalar(gf__json *j)
{
    static const char *const lit[] = { "true", "false", "null" };
    size_t a = j->i, d;
    int k;
    for (k = 0; k < 3; k++)
        if (j->n - j->i >= strlen(lit[k]) && memcmp(j->s + j->i, lit[k], strlen(lit[k])) == 0) {
            j->i += strlen(lit[k]);
            return 0;
        }
    if (j->i < j->n && j->s[j->i] == '-') j->i++;
    for (d = j->i; j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9'; j->i++) {}
    if (j->i == d) return -1;
    if (j->i < j->n && j->s[j->i] == '.') {
        for (d = ++j->i; j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9'; j->i++) {}
        if (j->i == d) return -1;
    }
    if (j->i < j->n && (j->s[j->i] == 'e' || j->s[j->i] == 'E')) {
        j->i++;
        if (j->i < j->n && (j->s[j->i] == '+' || j->s[j->i] == '-')) j->i++;
        for (d = j->i; j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9'; j->i++) {}
        if (j->i == d) return -1;
    }
    return j->i > a ? 0 : -1;
}

static int gf__json_value(gf__json *j);

/* an object or array at j->i ('{' or '['), skipped; 0 or -1 */
static int gf__json_nested(gf__json *j)
{
    char close = j->s[j->i] == '{' ? '}' : ']';
    int first = 1, fits;
    if (++j->depth > 16) return -1;
    j->i++;
    for (;;) {
        gf__json_ws(j);
        if (j->i < j->n && j->s[j->i] == close && first) break;
        if (!first) {
            if (j->i >= j->n || (j->s[j->i] != ',' && j->s[j->i] != close)) return -1;
            if (j->s[j->i] == close) break;
            j->i++;
            gf__json_ws(j);
        }
        first = 0;
        if (close == '}') {
            if (j->i >= j->n || j->s[j->i] != '"' || gf__json_string(j, NULL, 0, &fits)) return -1;
            gf__json_ws(j);
            if (j->i >= j->n || j->s[j->i] != ':') return -1;
            j->i++;
        }
        if (gf__json_value(j)) return -1;
    }
    j->i++;
    j->depth--;
    return 0;
}

static int gf__json_value(gf__json *j)
{
    int fits;
    gf__json_ws(j);
    if (j->i >= j->n) return -1;
    if (j->s[j->i] == '{' || j->s[j->i] == '[') return gf__json_nested(j);
    if (j->s[j->i] == '"') return gf__json_string(j, NULL, 0, &fits);
    return gf__json_scalar(j);
}

/* member `key` of the JSON object text s (n bytes): 1 a string (unescaped
   into out), 2 a number or literal (its text into out), 0 absent, -1
   malformed JSON (anywhere in the text) or a value that does not fit */
static int gf__json_get(const char *s, size_t n, const char *key, char *out, size_t cap)
{
    gf__json j;
    int found = 0, first = 1, fits;
    char k[64];
    memset(&j, 0, sizeof j);
    j.s = s;
    j.n = n;
    gf__json_ws(&j);
    if (j.i >= n || s[j.i] != '{') return -1;
    j.i++;
    for (;;) {
        size_t v;
        gf__json_ws(&j);
        if (j.i < n && s[j.i] == '}' && first) break;
        if (!first) {
            if (j.i >= n || (s[j.i] != ',' && s[j.i] != '}')) return -1;
            if (s[j.i] == '}') break;
            j.i++;
            gf__json_ws(&j);
        }
        first = 0;
        if (j.i >= n || s[j.i] != '"' || gf__json_string(&j, k, sizeof k, &fits)) return -1;
        gf__json_ws(&j);
        if (j.i >= n || s[j.i] != ':') return -1;
        j.i++;
        gf__json_ws(&j);
        v = j.i;
        if (fits && strcmp(k, key) == 0 && !found && j.i < n && s[j.i] == '"') {
            if (gf__json_string(&j, out, cap, &fits) || !fits) return -1;
            found = 1;
            continue;
        }
        if (gf__json_value(&j)) return -1;
        if (fits && strcmp(k, key) == 0 && !found && s[v] != '{' && s[v] != '[') {
            if (j.i - v >= cap) return -1;
            memcpy(out, s + v, j.i - v);
            out[j.i - v] = 0;
            found = 2;
        }
    }
    j.i++;
    gf__json_ws(&j);
    return j.i == n ? found : -1;
}

/* Where a redirect (301, 302, 307, 308) of a request to `from` may go:
   `loc` (absolute, or a path on the same host) into out when it stays on
   the same scheme://host:port, or, with AWS's own endpoints (aws), on an
   https://...amazonaws.com host. 0: follow it, -1: not (why). */
static int gf__redirect_ok(const char *from, const char *loc, int aws, char *out, size_t cap, char *why, size_t wcap)
{
    const char *fs = strstr(from, "://"), *fe, *ls = strstr(loc, "://"), *le;
    size_t fn, ln, i;
    int same;
    if (!fs) {
        gf__fmt(why, wcap, "a redirect of a request that is no URL");
        return -1;
    }
    fe = strchr(fs + 3, '/');
    fn = fe ? (size_t)(fe - from) : strlen(from);
    if (loc[0] == '/') {
        if (fn + strlen(loc) >= cap) return -1;
        memcpy(out, from, fn);
        memcpy(out + fn, loc, strlen(loc) + 1);
        return 0;
    }
    if (!ls || (strncmp(loc, "http://", 7) != 0 && strncmp(loc, "https://", 8) != 0)) {
        gf__fmt(why, wcap, "a Location that is no http(s) URL: '%.200s'", loc);
        return -1;
    }
    le = strchr(ls + 3, '/');
    ln = le ? (size_t)(le - loc) : strlen(loc);
    same = ln == fn;
    for (i = 0; same && i < ln; i++) {
        char a = from[i], b = loc[i];
        if (a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
        if (b >= 'A' && b <= 'Z') b = (char)(b - 'A' + 'a');
        same = a == b;
    }
    if (!same && aws && strncmp(loc, "https://", 8) == 0) {
        const char *h = loc + 8, *colon = (const char *)memchr(h, ':', (size_t)(loc + ln - h));
        size_t hn = (size_t)((colon ? colon : loc + ln) - h);
        same = hn > 14 && gf__ieq(h + hn - 14, 14, ".amazonaws.com");
    }
    if (!same) {
        gf__fmt(why, wcap, "to another endpoint, %.*s", (int)(ln < 200 ? ln : 200), loc);
        return -1;
    }
    if (strlen(loc) >= cap) return -1;
    memcpy(out, loc, strlen(loc) + 1);
    return 0;
}

/* ---- pure helpers: listing pages, checked (no network) ---- */

typedef struct gf__rkeys {             /* keys found and what the listing said of them, grown */
    char **v;
    char **etag;                       /* "" when none */
    uint64_t *size;
    int64_t *mtime;                    /* Last-Modified, unix seconds; -1 not given */
    int32_t n, cap;
} gf__rkeys;

static int gf__rkeys_push(const gpufeed_allocator *a, gf__rkeys *k, const char *s, uint64_t size, const char *etag, int64_t mtime)
{
    if (k->n == k->cap) {
        int32_t nc = k->cap ? k->cap * 2 : 64;
        char **nv, **ne;
        uint64_t *ns;
        int64_t *nm;
        if (nc <= k->cap || (size_t)nc > SIZE_MAX / 16) return -1;
        nv = (char **)gf__realloc(a, k->v, (size_t)nc * sizeof(char *));
        if (nv) k->v = nv;
        ne = nv ? (char **)gf__realloc(a, k->etag, (size_t)nc * sizeof(char *)) : NULL;
        if (ne) k->etag = ne;
        ns = ne ? (uint64_t *)gf__realloc(a, k->size, (size_t)nc * sizeof(uint64_t)) : NULL;
        if (ns) k->size = ns;
        nm = ns ? (int64_t *)gf__realloc(a, k->mtime, (size_t)nc * sizeof(int64_t)) : NULL;
        if (!nm) return -1;
        k->mtime = nm;
        k->cap = nc;
    }
    k->v[k->n] = gf__rstrdup(a, s);
    k->etag[k->n] = gf__rstrdup(a, etag ? etag : "");
    if (!k->v[k->n] || !k->etag[k->n]) {
        gf__free(a, k->v[k->n]);
        gf__free(a, k->etag[k->n]);
        return -1;
    }
    k->size[k->n] = size;
    k->mtime[k->n] = mtime;
    k->n++;
    return 0;
}

static void gf__rkeys_free(const gpufeed_allocator *a, gf__rkeys *k)
{
    int32_t i;
    for (i = 0; i < k->n; i++) {
        gf__free(a, k->v[i]);
        gf__free(a, k->etag[i]);
    }
    gf__free(a, k->v);
    gf__free(a, k->etag);
    gf__free(a, k->size);
    gf__free(a, k->mtime);
    memset(k, 0, sizeof *k);
}

/* which listed keys a path takes: a prefix's *.parquet, or a glob's matches */
typedef struct gf__rmatch {
    const char *glob;                  /* NULL: every *.parquet key below `base` */
    size_t base;                       /* the length of the literal directory (with its '/') */
} gf__rmatch;

static int gf__rmatch_key(const gf__rmatch *m, const char *key)
{
    size_t n = strlen(key);
    if (n <= m->base || key[n - 1] == '/' || gf__rhidden(key + m->base)) return 0;
    if (m->glob) return gf__rglob(m->glob, key, 1);
    return n >= 8 && strcmp(key + n - 8, ".parquet") == 0;
}

/* A listing's pages so far: every page must be a whole document with
   IsTruncated, keys within the prefix, ascending and unique within and
   across pages; a truncated page needs a continuation token not seen
   before; more pages than 8 + the keys listed is a listing that does not
   advance. */
typedef struct gf__rlstate {
    const char *prefix;
    char *last;                        /* the greatest key so far */
    int64_t keys;                      /* keys listed so far (taken or not) */
    int32_t page;                      /* pages so far */
    uint64_t *seen;                    /* hashes of the tokens seen (open addressing; 0: free) */
    uint32_t nseen, cap;
} gf__rlstate;

static void gf__rlstate_free(const gpufeed_allocator *a, gf__rlstate *st)
{
    gf__free(a, st->last);
    gf__free(a, st->seen);
    st->last = NULL;
    st->seen = NULL;
    st->nseen = st->cap = 0;
}

/* records a continuation token: 1 new, 0 seen before, -1 no memory */
static int gf__rlstate_token(const gpufeed_allocator *a, gf__rlstate *st, const char *tok)
{
    uint64_t h = gpufeed_hash64(tok, strlen(tok), 0x746f6b656e73ull) | 1;
    uint32_t i;
    if (2 * (st->nseen + 1) > st->cap) {
        uint32_t nc = st->cap ? st->cap * 2 : 64, k;
        uint64_t *ns = (uint64_t *)gf__alloc(a, (size_t)nc * sizeof(uint64_t));
        if (!ns || nc <= st->cap) return -1;
        memset(ns, 0, (size_t)nc * sizeof(uint64_t));
        for (k = 0; k < st->cap; k++) {
            if (!st->seen[k]) continue;
            for (i = (uint32_t)(st->seen[k] & (nc - 1)); ns[i]; i = (i + 1) & (nc - 1)) {}
            ns[i] = st->seen[k];
        }
        gf__free(a, st->seen);
        st->seen = ns;
        st->cap = nc;
    }
    for (i = (uint32_t)(h & (st->cap - 1)); st->seen[i]; i = (i + 1) & (st->cap - 1))
        if (st->seen[i] == h) return 0;
    st->seen[i] = h;
    st->nseen++;
    return 1;
}

/* the text of element `tag` in [p, end) decoded (entities; %XX too with
   url) into a new string (*out; NULL when absent): 0, or -1 malformed */
static int gf__xml_text(const gpufeed_allocator *a, const char *p, const char *end, const char *tag, int url, char **out)
{
    const char *v;
    size_t vn;
    int r = gf__xml_tag(&p, end, tag, &v, &vn);
    *out = NULL;
    if (r == 0) return 0;
    if (r < 0) return -1;
    *out = (char *)gf__alloc(a, vn + 1);
    if (!*out) return -1;
    if (gf__rdecode(v, vn, url, *out, vn + 1) == 0) return 0;
    gf__free(a, *out);
    *out = NULL;
    return -1;
}

/* one <Contents> entry (v, vn): checked against the pages so far, taken
   into out when m takes it. 0, or -1 (why). */
static int gf__rlist_entry(const gpufeed_allocator *a, const char *v, size_t vn, int url, const gf__rmatch *m, gf__rlstate *st, gf__rkeys *out,
                           char *why, size_t cap)
{
    char *key = NULL, *sz = NULL, *et = NULL, *lm = NULL, etag[128];
    uint64_t size = 0;
    int64_t mtime = -1;
    int rc = -1;
    etag[0] = 0;
    if (gf__xml_text(a, v, v + vn, "Key", url, &key) || !key || gf__xml_text(a, v, v + vn, "Size", 0, &sz) || !sz ||
        gf__parse_u64(sz, strlen(sz), &size))
        gf__fmt(why, cap, "an entry without a proper Key and Size");
    else if (gf__xml_text(a, v, v + vn, "ETag", 0, &et) || gf__xml_text(a, v, v + vn, "LastModified", 0, &lm) || (lm && gf__iso8601(lm, strlen(lm), &mtime)))
        gf__fmt(why, cap, "key '%.300s': a malformed ETag or LastModified", key);
    else if (strncmp(key, st->prefix, strlen(st->prefix)) != 0)
        gf__fmt(why, cap, "key '%.300s' is outside the prefix", key);
    else if (st->last && strcmp(key, st->last) <= 0)
        gf__fmt(why, cap, strcmp(key, st->last) == 0 ? "key '%.300s' listed twice" : "keys out of order: '%.300s' after a greater one", key);
    else rc = 0;
    if (rc == 0 && et) gf__etag_copy(etag, sizeof etag, et, strlen(et));
    if (rc == 0 && gf__rmatch_key(m, key) && gf__rkeys_push(a, out, key, size, etag, mtime)) {
        gf__fmt(why, cap, "out of memory");
        rc = -1;
    }
    if (rc == 0) {
        gf__free(a, st->last);
        st->last = key;
        st->keys++;
        key = NULL;
    }
    gf__free(a, key);
    gf__free(a, sz);
    gf__free(a, et);
    gf__free(a, lm);
    return rc;
}

/* IsTruncated of a page: 1 true, 0 false, -1 absent or malformed */
static int gf__rlist_truncated(const char *body, size_t n)
{
    const char *p = body, *v;
    size_t vn;
    if (gf__xml_tag(&p, body + n, "IsTruncated", &v, &vn) != 1) return -1;
    if (vn == 4 && memcmp(v, "true", 4) == 0) return 1;
    if (vn == 5 && memcmp(v, "false", 5) == 0) return 0;
    return -1;
}

/* One ListObjectsV2 page (n bytes), checked (see gf__rlstate): its
   <Contents> that m takes into out, its continuation token into *token
   (NULL: the last page). 0, or -1 with what is wrong in why. */
static int gf__rlist_page(const gpufeed_allocator *a, const char *body, size_t n, const gf__rmatch *m, gf__rlstate *st, gf__rkeys *out,
                          char **token, char *why, size_t cap)
{
    const char *p = body, *end = body + n, *v;
    size_t vn;
    int r, trunc, url;
    int64_t entries = 0;
    char *kc = NULL, *enc = NULL;
    uint64_t kcount;
    *token = NULL;
    st->page++;
    if (gf__xml_whole(body, n, "ListBucketResult", why, cap)) return -1;
    trunc = gf__rlist_truncated(body, n);
    if (trunc < 0) {
        gf__fmt(why, cap, "no IsTruncated element (true or false)");
        return -1;
    }
    if (gf__xml_text(a, body, end, "EncodingType", 0, &enc)) enc = NULL;
    url = enc && strcmp(enc, "url") == 0;
    gf__free(a, enc);
    while ((r = gf__xml_tag(&p, end, "Contents", &v, &vn)) == 1) {
        if (gf__rlist_entry(a, v, vn, url, m, st, out, why, cap)) return -1;
        entries++;
    }
    if (r < 0) {
        gf__fmt(why, cap, "a <Contents> element is not closed");
        return -1;
    }
    if (gf__xml_text(a, body, end, "KeyCount", 0, &kc) == 0 && kc && (gf__parse_u64(kc, strlen(kc), &kcount) || kcount != (uint64_t)entries)) {
        gf__fmt(why, cap, "KeyCount says %.30s, the page has %lld entries", kc, (long long)entries);
        gf__free(a, kc);
        return -1;
    }
    gf__free(a, kc);
    if (!trunc) return 0;
    if (gf__xml_text(a, body, end, "NextContinuationToken", 0, token) || !*token || !**token) {
        gf__free(a, *token);
        *token = NULL;
        gf__fmt(why, cap, "a truncated page without a proper NextContinuationToken");
        return -1;
    }
    r = gf__rlstate_token(a, st, *token);
    if (r <= 0) {
        gf__fmt(why, cap, r < 0 ? "out of memory" : "a continuation token seen before ('%.60s'): the listing goes round in circles", *token);
        gf__free(a, *token);
        *token = NULL;
        return -1;
    }
    if (st->page > 8 + st->keys) {
        gf__fmt(why, cap, "%d pages gave %lld keys: a listing that does not advance", (int)st->page, (long long)st->keys);
        gf__free(a, *token);
        *token = NULL;
        return -1;
    }
    return 0;
}

/* ---- pure helpers: manifests (the footers of objects, keyed by key, ETag and size) ---- */

/* A manifest holds what opening an object fetches (its size, ETag,
   Last-Modified, first bytes, footer) for a listing's objects, so that a
   later open of the same objects needs no GET:
     "GFMANIF1", u32 count, u32 root length, root (the s3:// path listed),
     per object: u32 URL length, URL, u64 size, i64 Last-Modified (unix s,
     -1), u8 ETag length, ETag, u32 head length, head (the object's first
     bytes), u64 tail offset, u32 tail length, tail (up to the object's
     end: its footer), then u64 gpufeed_hash64 of every byte before it.
   Little-endian; every length is checked against the limits below. */
#define GF__MF_MAGIC "GFMANIF1"
#define GF__MF_MAX_URL 4096
#define GF__MF_MAX_HEAD 4096
#define GF__MF_MAX_TAIL ((uint32_t)16 << 20)
#define GF__MF_SEED 0x6d616e6966657374ull

typedef struct gf__mfent {
    const char *url;
    size_t url_n;
    uint64_t size;
    int64_t mtime;
    const char *etag;
    size_t etag_n;
    const uint8_t *head, *tail;
    uint32_t head_n, tail_n;
    uint64_t tail_off;
} gf__mfent;

typedef struct gf__mfbuf {             /* a manifest being written */
    const gpufeed_allocator *a;
    uint8_t *p;
    size_t n, cap;
    int nomem;
} gf__mfbuf;

static void gf__mf_put(gf__mfbuf *b, const void *d, size_t n)
{
    if (b->nomem || (b->n + n > b->cap && gf__grow(b->a, &b->p, &b->cap, b->n + n))) {
        b->nomem = 1;
        return;
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}

static void gf__mf_u32(gf__mfbuf *b, uint32_t v)
{
    uint8_t x[4];
    int k;
    for (k = 0; k < 4; k++) x[k] = (uint8_t)(v >> (8 * k));
    gf__mf_put(b, x, 4);
}

static void gf__mf_u64(gf__mfbuf *b, uint64_t v)
{
    uint8_t x[8];
    int k;
    for (k = 0; k < 8; k++) x[k] = (uint8_t)(v >> (8 * k));
    gf__mf_put(b, x, 8);
}

/* the header of a manifest of `count` objects listed from root */
static void gf__mf_begin(gf__mfbuf *b, const char *root, uint32_t count)
{
    gf__mf_put(b, GF__MF_MAGIC, 8);
    gf__mf_u32(b, count);
    gf__mf_u32(b, (uint32_t)strlen(root));
    gf__mf_put(b, root, strlen(root));
}

static void gf__mf_add(gf__mfbuf *b, const gf__mfent *e)
{
    uint8_t en = (uint8_t)e->etag_n;
    gf__mf_u32(b, (uint32_t)e->url_n);
    gf__mf_put(b, e->url, e->url_n);
    gf__mf_u64(b, e->size);
    gf__mf_u64(b, (uint64_t)e->mtime);
    gf__mf_put(b, &en, 1);
    gf__mf_put(b, e->etag, e->etag_n);
    gf__mf_u32(b, e->head_n);
    gf__mf_put(b, e->head, e->head_n);
    gf__mf_u64(b, e->tail_off);
    gf__mf_u32(b, e->tail_n);
    gf__mf_put(b, e->tail, e->tail_n);
}

static void gf__mf_end(gf__mfbuf *b)
{
    if (!b->nomem) gf__mf_u64(b, gpufeed_hash64(b->p, b->n, GF__MF_SEED));
}

/* a manifest being read: p..end the entries */
typedef struct gf__mfread {
    const uint8_t *p, *end;
    uint32_t count, left;
    const char *root;
    size_t root_n;
} gf__mfread;

/* takes n bytes at the cursor: their start, or NULL when fewer are left */
static const uint8_t *gf__mf_take(gf__mfread *r, uint64_t n)
{
    const uint8_t *at = r->p;
    if (n > (uint64_t)(r->end - r->p)) return NULL;
    r->p += n;
    return at;
}

/* checks a manifest's magic, checksum and header: 0, or -1 (why) */
static int gf__mf_open(gf__mfread *r, const uint8_t *d, size_t n, char *why, size_t cap)
{
    const uint8_t *q;
    memset(r, 0, sizeof *r);
    if (n < 24 || memcmp(d, GF__MF_MAGIC, 8) != 0) {
        gf__fmt(why, cap, "not a gpufeed manifest (no %s magic)", GF__MF_MAGIC);
        return -1;
    }
    if (gf__ld64(d + n - 8) != gpufeed_hash64(d, n - 8, GF__MF_SEED)) {
        gf__fmt(why, cap, "its checksum does not match its %llu bytes (damaged or cut short)", (unsigned long long)n);
        return -1;
    }
    r->p = d + 8;
    r->end = d + n - 8;
    r->count = r->left = gf__ld32(gf__mf_take(r, 4));
    q = gf__mf_take(r, 4);
    r->root_n = gf__ld32(q);
    r->root = r->root_n <= GF__MF_MAX_URL ? (const char *)gf__mf_take(r, r->root_n) : NULL;
    if (!r->root || r->count > (uint32_t)(r->end - r->p) / 40) {
        gf__fmt(why, cap, "a malformed header");
        return -1;
    }
    return 0;
}

/* the next entry, its lengths checked: 1, 0 at the end, -1 malformed (why) */
static int gf__mf_next(gf__mfread *r, gf__mfent *e, char *why, size_t cap)
{
    const uint8_t *q;
    uint32_t k = r->count - r->left;
    memset(e, 0, sizeof e[0]);
    if (r->left == 0) {
        if (r->p == r->end) return 0;
        gf__fmt(why, cap, "%llu bytes after its last entry", (unsigned long long)(r->end - r->p));
        return -1;
    }
    r->left--;
    q = gf__mf_take(r, 4);
    e->url_n = q ? gf__ld32(q) : 0;
    e->url = q && e->url_n > 0 && e->url_n <= GF__MF_MAX_URL ? (const char *)gf__mf_take(r, e->url_n) : NULL;
    q = e->url ? gf__mf_take(r, 17) : NULL;
    if (q) {
        e->size = gf__ld64(q);
        e->mtime = (int64_t)gf__ld64(q + 8);
        e->etag_n = q[16];
    }
    e->etag = q && e->etag_n < 128 ? (const char *)gf__mf_take(r, e->etag_n) : NULL;
    q = e->etag ? gf__mf_take(r, 4) : NULL;
    e->head_n = q ? gf__ld32(q) : 0;
    e->head = q && e->head_n <= GF__MF_MAX_HEAD && e->head_n <= e->size ? gf__mf_take(r, e->head_n) : NULL;
    q = e->head ? gf__mf_take(r, 12) : NULL;
    if (q) {
        e->tail_off = gf__ld64(q);
        e->tail_n = gf__ld32(q + 8);
    }
    e->tail = q && e->tail_n >= 8 && e->tail_n <= GF__MF_MAX_TAIL && e->tail_off <= e->size && e->size - e->tail_off == e->tail_n
                  ? gf__mf_take(r, e->tail_n) : NULL;
    if (!e->tail || memchr(e->url, 0, e->url_n)) {
        gf__fmt(why, cap, "entry %u is malformed (lengths beyond its limits or the file)", (unsigned)k);
        return -1;
    }
    return 1;
}

#define GF__RMAX_INFLIGHT 64           /* the most requests in flight a fetching thread */

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/select.h>

/* ---- libcurl, loaded at run time ---- */

/* The entry points used, as curl/curl.h declares them (CURL and CURLM are
   void; CURLcode, CURLoption and CURLINFO enums of non-negative values:
   unsigned int; CURLMcode has -1: int). tests/test_s3_unit.c checks each
   type and value against the real curl/curl.h. */
struct curl_slist;
struct curl_waitfd;
struct CURLMsg;
typedef struct gf__curl {
    unsigned (*global_init)(long);
    void *(*easy_init)(void);
    void (*easy_cleanup)(void *);
    void (*easy_reset)(void *);
    unsigned (*easy_setopt)(void *, unsigned, ...);
    unsigned (*easy_getinfo)(void *, unsigned, ...);
    const char *(*easy_strerror)(unsigned);
    void *(*multi_init)(void);
    int (*multi_cleanup)(void *);
    int (*multi_add_handle)(void *, void *);
    int (*multi_remove_handle)(void *, void *);
    int (*multi_perform)(void *, int *);
    int (*multi_wait)(void *, struct curl_waitfd *, unsigned, int, int *);
    struct CURLMsg *(*multi_info_read)(void *, int *);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
} gf__curl;

/* the symbol of each entry point, in the order of gf__curl's fields */
static const char *const gf__curl_names[] = {
    "curl_global_init", "curl_easy_init", "curl_easy_cleanup", "curl_easy_reset", "curl_easy_setopt", "curl_easy_getinfo",
    "curl_easy_strerror", "curl_multi_init", "curl_multi_cleanup", "curl_multi_add_handle", "curl_multi_remove_handle",
    "curl_multi_perform", "curl_multi_wait", "curl_multi_info_read", "curl_slist_append", "curl_slist_free_all"
};

/* struct CURLMsg's layout (curl.h: an enum, the easy handle, a union of a
   pointer and a CURLcode) */
typedef struct gf__curlmsg {
    unsigned msg;
    void *easy;
    union { void *whatever; unsigned result; } data;
} gf__curlmsg;

/* curl.h's values of the options, infos and codes used here */
#define GF__CURLOPT_WRITEDATA 10001u
#define GF__CURLOPT_URL 10002u
#define GF__CURLOPT_RANGE 10007u
#define GF__CURLOPT_WRITEFUNCTION 20011u
#define GF__CURLOPT_LOW_SPEED_LIMIT 19u
#define GF__CURLOPT_LOW_SPEED_TIME 20u
#define GF__CURLOPT_HTTPHEADER 10023u
#define GF__CURLOPT_HEADERDATA 10029u
#define GF__CURLOPT_NOBODY 44u
#define GF__CURLOPT_CAINFO 10065u
#define GF__CURLOPT_HEADERFUNCTION 20079u
#define GF__CURLOPT_NOSIGNAL 99u
#define GF__CURLOPT_TIMEOUT_MS 155u
#define GF__CURLOPT_CONNECTTIMEOUT_MS 156u
#define GF__CURLOPT_USERNAME 10173u
#define GF__CURLOPT_PASSWORD 10174u
#define GF__CURLOPT_AWS_SIGV4 10305u
#define GF__CURLINFO_RESPONSE_CODE 0x200002u
#define GF__CURLMSG_DONE 1u
#define GF__CURL_GLOBAL_ALL 3L
#define GF__CURLE_UNSUPPORTED_PROTOCOL 1u
#define GF__CURLE_URL_MALFORMAT 3u
#define GF__CURLE_NOT_BUILT_IN 4u
#define GF__CURLE_WRITE_ERROR 23u
#define GF__CURLE_UNKNOWN_OPTION 48u

/* The one piece of process state in gpufeed. curl_global_init must run
   once per process before any other curl call, and it is not thread-safe:
   pthread_once runs it once. Its handle on libcurl is never closed, so the
   library (and what curl_global_init set up) is never unloaded while the
   contexts dlopen and dlclose it. */
static pthread_once_t gf__curl_once = PTHREAD_ONCE_INIT;
static int gf__curl_init_rc = -1;      /* written once, under gf__curl_once */
static void gf__curl_global_init(void)
{
    void *lib = dlopen(GPUFEED_CURL_LIB, RTLD_NOW | RTLD_LOCAL);
    void *sym = lib ? dlsym(lib, "curl_global_init") : NULL;
    unsigned (*init)(long) = NULL;
    if (!sym) return;
    memcpy(&init, &sym, sizeof sym); /* a function pointer, as dlsym promises */
    gf__curl_init_rc = (int)init(GF__CURL_GLOBAL_ALL);
}

/* loads libcurl and its entry points into c; 0, or why not */
static int gf__curl_load(gf__curl *c, void **lib, char *why, size_t cap)
{
    size_t i, n = sizeof gf__curl_names / sizeof gf__curl_names[0];
    GPUFEED_ASSERT(n * sizeof(void (*)(void)) == sizeof *c);
    *lib = dlopen(GPUFEED_CURL_LIB, RTLD_NOW | RTLD_LOCAL);
    if (!*lib) {
        const char *de = dlerror();
        gf__fmt(why, cap, "remote paths need libcurl: %s cannot be loaded (%s)", GPUFEED_CURL_LIB, de ? de : "not found");
        return -1;
    }
    for (i = 0; i < n; i++) {
        void *sym = dlsym(*lib, gf__curl_names[i]);
        if (!sym) {
            gf__fmt(why, cap, "%s lacks %s (too old a libcurl)", GPUFEED_CURL_LIB, gf__curl_names[i]);
            return -1;
        }
        memcpy((char *)c + i * sizeof(void (*)(void)), &sym, sizeof sym);
    }
    if (pthread_once(&gf__curl_once, gf__curl_global_init) != 0 || gf__curl_init_rc != 0) {
        gf__fmt(why, cap, "curl_global_init of %s failed (%d)", GPUFEED_CURL_LIB, gf__curl_init_rc);
        return -1;
    }
    return 0;
}

/* ---- the context: configuration, curl handles, fetched bytes ---- */

typedef struct gf__rcfg {
    char *key_id, *secret, *token, *region, *endpoint, *ca;
    int32_t inflight, retries;
    uint64_t gap, part, buffer, tail;
    long timeout_s;
} gf__rcfg;

typedef struct gf__rconn {             /* one fetching thread's curl handles */
    struct gf__rconn *next;
    void *multi;
    void *easy[GF__RMAX_INFLIGHT];
} gf__rconn;

typedef struct gf__rrange {            /* bytes of an object fetched and kept */
    uint64_t off, len, stamp;
    uint8_t *buf;
    int pending;                       /* being fetched by a will_read: readers wait for it */
    uint64_t served;                   /* bytes read_at copied from it (up to len: then it is done) */
} gf__rrange;
#define GF__RMAX_RANGES 64             /* kept per object */
#define GF__RSEQ 32                    /* read streams followed per object */
#define GF__RAHEAD_X 4                 /* a stream reads ahead at most this many times what it wants */

typedef struct gf__robj {              /* an object opened ahead (its first and last bytes) */
    char *url;
    int ok;
    uint64_t size;
    char etag[128], lastmod[64];
    gf__rrange head, tail;
    char why[GPUFEED_ERROR_MAX];
} gf__robj;

typedef struct gf__rsrc gf__rsrc;
typedef struct gf__rctx {
    gf__curl c;
    void *lib;
    gpufeed_allocator alloc;
    pthread_mutex_t mu;                /* everything below, and every source's ranges */
    pthread_cond_t done;               /* a pending range was fetched (or failed) */
    int32_t refs;
    gf__rcfg cfg;
    struct curl_slist *hdrs;           /* x-amz-content-sha256 (and the session token) */
    char sigv4[96];                    /* "aws:amz:REGION:s3" */
    gf__rconn *idle;                   /* handles no thread uses now */
    gf__rsrc *srcs;                    /* its sources (their kept ranges) */
    uint64_t ttfb_us, bw;              /* averages of GETs: time to the first byte (us), bytes/s */
    uint64_t held, stamp;              /* bytes kept; the LRU clock */
    uint64_t thru;                     /* bytes of kept ranges read through (dropped first) */
    gf__robj *ahead;                   /* objects opened ahead, not yet taken */
    int32_t nahead;
    gpufeed_remote_stats st;
} gf__rctx;

struct gf__rsrc {                      /* one object: a gpufeed_source's ctx */
    gf__rctx *cx;
    gf__rsrc *next;
    char *url;                         /* the request URL */
    char *name;                        /* s3://bucket/key or the URL */
    char *what;                        /* "bucket 'B', key 'K'" or the URL, in messages */
    int s3;
    uint64_t size;
    char etag[128];
    gf__rrange r[GF__RMAX_RANGES];
    uint64_t seq_end[GF__RSEQ], seq_ra[GF__RSEQ], seq_stamp[GF__RSEQ]; /* where read streams stand */
    uint64_t fail_off, fail_len;       /* a range will_read could not fetch: read_at fails there at once */
    char why[GPUFEED_ERROR_MAX];       /* the last failure */
};

/* an environment variable as an integer clamped to [lo, hi] (else the default) */
static uint64_t gf__renv_u64(const char *name, uint64_t def, uint64_t lo, uint64_t hi)
{
    const char *v = getenv(name);
    uint64_t x;
    if (!v || gf__parse_u64(v, strlen(v), &x)) return def;
    return x < lo ? lo : x > hi ? hi : x;
}

static const char *gf__renv(const char *a, const char *b)
{
    const char *v = getenv(a);
    if ((!v || !*v) && b) v = getenv(b);
    return v && *v ? v : NULL;
}

/* the configuration from the environment; 0, or -1 without memory */
static int gf__rcfg_load(gf__rcfg *g, const gpufeed_allocator *a)
{
    const char *ep = gf__renv("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL");
    const char *rg = gf__renv("AWS_REGION", "AWS_DEFAULT_REGION");
    const char *id = gf__renv("AWS_ACCESS_KEY_ID", NULL), *sk = gf__renv("AWS_SECRET_ACCESS_KEY", NULL);
    const char *tk = gf__renv("AWS_SESSION_TOKEN", NULL), *ca = gf__renv("AWS_CA_BUNDLE", NULL);
    memset(g, 0, sizeof *g);
    g->region = gf__rstrdup(a, rg ? rg : "us-east-1");
    g->endpoint = ep ? gf__rstrdup(a, ep) : NULL;
    g->key_id = id && sk ? gf__rstrdup(a, id) : NULL;
    g->secret = id && sk ? gf__rstrdup(a, sk) : NULL;
    g->token = tk && id && sk ? gf__rstrdup(a, tk) : NULL;
    g->ca = ca ? gf__rstrdup(a, ca) : NULL;
    if (!g->region || (ep && !g->endpoint) || (id && sk && (!g->key_id || !g->secret)) || (tk && id && sk && !g->token) || (ca && !g->ca)) return -1;
    if (g->endpoint) { /* no trailing '/' */
        size_t n = strlen(g->endpoint);
        while (n > 0 && g->endpoint[n - 1] == '/') g->endpoint[--n] = 0;
    }
    g->inflight = (int32_t)gf__renv_u64("GPUFEED_REMOTE_INFLIGHT", GPUFEED_REMOTE_INFLIGHT, 1, GF__RMAX_INFLIGHT);
    g->retries = (int32_t)gf__renv_u64("GPUFEED_REMOTE_RETRIES", GPUFEED_REMOTE_RETRIES, 0, 100);
    g->gap = gf__renv_u64("GPUFEED_REMOTE_GAP", GPUFEED_REMOTE_GAP, 0, (uint64_t)1 << 40);
    g->part = gf__renv_u64("GPUFEED_REMOTE_PART", GPUFEED_REMOTE_PART, 4096, (uint64_t)1 << 40);
    g->buffer = gf__renv_u64("GPUFEED_REMOTE_BUFFER", GPUFEED_REMOTE_BUFFER, 0, (uint64_t)1 << 50);
    g->timeout_s = (long)gf__renv_u64("GPUFEED_REMOTE_TIMEOUT", GPUFEED_REMOTE_TIMEOUT, 1, 86400);
    g->tail = GPUFEED_REMOTE_TAIL < 64 ? 64 : GPUFEED_REMOTE_TAIL;
    return 0;
}

static void gf__rcfg_free(gf__rcfg *g, const gpufeed_allocator *a)
{
    gf__free(a, g->key_id);
    gf__free(a, g->secret);
    gf__free(a, g->token);
    gf__free(a, g->region);
    gf__free(a, g->endpoint);
    gf__free(a, g->ca);
}

static void gf__robj_free(const gpufeed_allocator *a, gf__robj *o)
{
    gf__free(a, o->url);
    gf__free(a, o->head.buf);
    gf__free(a, o->tail.buf);
    memset(o, 0, sizeof *o);
}

static void gf__rctx_free(gf__rctx *cx)
{
    gpufeed_allocator a;
    int32_t i;
    if (!cx) return;
    a = cx->alloc;
    while (cx->idle) {
        gf__rconn *k = cx->idle;
        cx->idle = k->next;
        for (i = 0; i < GF__RMAX_INFLIGHT; i++)
            if (k->easy[i]) cx->c.easy_cleanup(k->easy[i]);
        if (k->multi) cx->c.multi_cleanup(k->multi);
        gf__free(&a, k);
    }
    for (i = 0; i < cx->nahead; i++) gf__robj_free(&a, &cx->ahead[i]);
    gf__free(&a, cx->ahead);
    if (cx->hdrs) cx->c.slist_free_all(cx->hdrs);
    gf__rcfg_free(&cx->cfg, &a);
    pthread_mutex_destroy(&cx->mu);
    pthread_cond_destroy(&cx->done);
    if (cx->lib) dlclose(cx->lib);
    gf__free(&a, cx);
}

/* drops a reference (the context goes with the last) */
static void gf__remote_release(gf__rctx *cx)
{
    int32_t left;
    if (!cx) return;
    pthread_mutex_lock(&cx->mu);
    left = --cx->refs;
    pthread_mutex_unlock(&cx->mu);
    if (left == 0) gf__rctx_free(cx);
}

/* a new context (one reference) from the environment */
static gpufeed_result gf__rctx_new(gf__rctx **out, const gpufeed_allocator *a, const char *path, gpufeed_error *err)
{
    gpufeed_allocator al;
    gf__rctx *cx;
    char why[GPUFEED_ERROR_MAX];
    memset(&al, 0, sizeof al);
    if (a && a->alloc) al = *a;
    *out = NULL;
    cx = (gf__rctx *)gf__alloc(&al, sizeof *cx);
    if (!cx) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    memset(cx, 0, sizeof *cx);
    cx->alloc = al;
    cx->refs = 1;
    pthread_mutex_init(&cx->mu, NULL);
    pthread_cond_init(&cx->done, NULL);
    if (gf__curl_load(&cx->c, &cx->lib, why, sizeof why)) {
        gf__rctx_free(cx);
        return gf__seterr(err, GPUFEED_ERR_UNSUPPORTED, "%s: %s", path, why);
    }
    if (gf__rcfg_load(&cx->cfg, &cx->alloc)) {
        gf__rctx_free(cx);
        return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    gf__fmt(cx->sigv4, sizeof cx->sigv4, "aws:amz:%.64s:s3", cx->cfg.region);
    cx->hdrs = cx->c.slist_append(NULL, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
    if (cx->hdrs && cx->cfg.token) {
        size_t n = strlen(cx->cfg.token) + 24;
        char *h = (char *)gf__alloc(&cx->alloc, n);
        struct curl_slist *l = NULL;
        if (h) {
            gf__fmt(h, n, "x-amz-security-token: %s", cx->cfg.token);
            l = cx->c.slist_append(cx->hdrs, h);
            gf__free(&cx->alloc, h);
        }
        if (!l) {
            gf__rctx_free(cx);
            return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
        }
    }
    if (!cx->hdrs) {
        gf__rctx_free(cx);
        return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    *out = cx;
    return GPUFEED_OK;
}

/* a fetching thread's handles: an idle set, or a new one (NULL: no memory) */
static gf__rconn *gf__rconn_get(gf__rctx *cx)
{
    gf__rconn *k;
    pthread_mutex_lock(&cx->mu);
    k = cx->idle;
    if (k) cx->idle = k->next;
    pthread_mutex_unlock(&cx->mu);
    if (k) return k;
    k = (gf__rconn *)gf__alloc(&cx->alloc, sizeof *k);
    if (!k) return NULL;
    memset(k, 0, sizeof *k);
    k->multi = cx->c.multi_init();
    if (!k->multi) {
        gf__free(&cx->alloc, k);
        return NULL;
    }
    return k;
}

static void gf__rconn_put(gf__rctx *cx, gf__rconn *k)
{
    pthread_mutex_lock(&cx->mu);
    k->next = cx->idle;
    cx->idle = k;
    pthread_mutex_unlock(&cx->mu);
}

/* ---- requests: ranged GETs, HEADs, listings, through the multi interface ---- */

enum { GF__RQ_GET = 0, GF__RQ_TAIL, GF__RQ_WHOLE, GF__RQ_HEAD, GF__RQ_LIST };
enum { GF__RS_NEW = 0, GF__RS_RUN, GF__RS_WAIT, GF__RS_OK, GF__RS_FAIL };

typedef struct gf__rreq {
    int kind;                          /* GF__RQ_* */
    const char *url;
    const char *what;                  /* "bucket 'B', key 'K'" or the URL */
    int sign;                          /* SigV4 (s3://) */
    int opening;                       /* counted as an opening GET */
    uint64_t off, len;                 /* GET: the range; TAIL: the last len bytes */
    uint64_t size;                     /* the object's size (GET); found (TAIL, WHOLE, HEAD) */
    const char *etag;                  /* GET: the ETag seen at open ("": none) */
    const gpufeed_allocator *a;
    uint8_t *dst;                      /* the body: GET exactly len bytes here; the */
    size_t dcap, cap, got;             /* others grow it (dcap) up to cap bytes */
    int grow;
    int hstatus;                       /* the response: its status line, */
    long status;                       /* curl's final status, */
    int has_cr;                        /* Content-Range (1, -1 malformed), */
    uint64_t cr_a, cr_b, cr_total;
    int has_cl;                        /* Content-Length, */
    uint64_t cl;
    char etag_got[128], lastmod[64];   /* ETag, Last-Modified, */
    char ebody[512];                   /* an error's body (S3's XML) */
    size_t ebody_n;
    int overflow, nomem;
    int state, attempts;
    uint64_t due_us;                   /* a retry's time */
    uint64_t t_start, t_first;         /* the attempt's start, its first byte (us) */
    char why[GPUFEED_ERROR_MAX];
} gf__rreq;

/* a header line "Name: value" whose name is `name` (any case): its value,
   spaces and the line end trimmed */
static int gf__hdr_is(const char *p, size_t k, const char *name, const char **v, size_t *vn)
{
    size_t nl = strlen(name), i;
    if (k <= nl || p[nl] != ':') return 0;
    for (i = 0; i < nl; i++) {
        char c = p[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != name[i]) return 0;
    }
    p += nl + 1;
    k -= nl + 1;
    while (k > 0 && (*p == ' ' || *p == '\t')) { p++; k--; }
    while (k > 0 && (p[k - 1] == '\r' || p[k - 1] == '\n' || p[k - 1] == ' ')) k--;
    *v = p;
    *vn = k;
    return 1;
}

/* an ETag without W/ and quotes (S3's listings leave the quotes out) */
static void gf__etag_copy(char *dst, size_t cap, const char *v, size_t n)
{
    if (n >= 2 && v[0] == 'W' && v[1] == '/') { v += 2; n -= 2; }
    if (n >= 2 && v[0] == '"' && v[n - 1] == '"') { v++; n -= 2; }
    if (n >= cap) n = cap - 1;
    memcpy(dst, v, n);
    dst[n] = 0;
}

static size_t gf__rq_header(char *p, size_t sz, size_t n, void *u)
{
    gf__rreq *q = (gf__rreq *)u;
    const char *v;
    size_t k, vn;
    if (sz && n > SIZE_MAX / sz) return 0;
    k = sz * n;
    if (k >= 12 && memcmp(p, "HTTP/", 5) == 0) { /* a response starts (a redirect's, a 100's, the last) */
        const char *sp = (const char *)memchr(p, ' ', k);
        if (!q->t_first) q->t_first = gf__now_us();
        q->hstatus = 0;
        if (sp && (size_t)(sp - p) + 4 <= k) q->hstatus = (sp[1] - '0') * 100 + (sp[2] - '0') * 10 + (sp[3] - '0');
        q->has_cr = q->has_cl = 0;
        q->etag_got[0] = q->lastmod[0] = 0;
        q->ebody_n = 0;
        q->ebody[0] = 0;
    } else if (gf__hdr_is(p, k, "content-range", &v, &vn)) {
        q->has_cr = gf__parse_crange(v, vn, &q->cr_a, &q->cr_b, &q->cr_total) == 0 ? 1 : -1;
    } else if (gf__hdr_is(p, k, "content-length", &v, &vn)) {
        q->has_cl = gf__parse_u64(v, vn, &q->cl) == 0 ? 1 : -1;
    } else if (gf__hdr_is(p, k, "etag", &v, &vn)) {
        gf__etag_copy(q->etag_got, sizeof q->etag_got, v, vn);
    } else if (gf__hdr_is(p, k, "last-modified", &v, &vn)) {
        if (vn >= sizeof q->lastmod) vn = sizeof q->lastmod - 1;
        memcpy(q->lastmod, v, vn);
        q->lastmod[vn] = 0;
    }
    return k;
}

static size_t gf__rq_body(char *p, size_t sz, size_t n, void *u)
{
    gf__rreq *q = (gf__rreq *)u;
    size_t k;
    if (sz && n > SIZE_MAX / sz) return 0;
    k = sz * n;
    if (q->hstatus < 200 || q->hstatus > 299) { /* an error: its first bytes, for S3's code */
        size_t room = sizeof q->ebody - 1 - q->ebody_n, c = k < room ? k : room;
        memcpy(q->ebody + q->ebody_n, p, c);
        q->ebody_n += c;
        q->ebody[q->ebody_n] = 0;
        return k;
    }
    if (k > q->cap - q->got) { /* more than asked for, or than a listing may hold */
        q->overflow = 1;
        return 0;
    }
    if (q->got + k > q->dcap) {
        size_t nc = q->dcap ? q->dcap : 65536;
        uint8_t *nd;
        while (nc < q->got + k) nc = nc > q->cap / 2 ? q->cap : nc * 2;
        nd = (uint8_t *)gf__realloc(q->a, q->dst, nc);
        if (!nd) {
            q->nomem = 1;
            return 0;
        }
        q->dst = nd;
        q->dcap = nc;
    }
    memcpy(q->dst + q->got, p, k);
    q->got += k;
    return k;
}

static const char *gf__http_reason(long s)
{
    switch (s) {
    case 301: return "Moved Permanently (the bucket is in another region: set AWS_REGION)";
    case 307: return "Temporary Redirect (the bucket is in another region: set AWS_REGION)";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 408: return "Request Timeout";
    case 412: return "Precondition Failed";
    case 416: return "Range Not Satisfiable";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "";
    }
}

/* sets the easy handle up for q's next attempt; 0, or -1 (why in q) */
static int gf__rq_setup(gf__rctx *cx, void *e, gf__rreq *q)
{
    const gf__curl *c = &cx->c;
    char range[64];
    c->easy_reset(e);
    c->easy_setopt(e, GF__CURLOPT_URL, q->url);
    c->easy_setopt(e, GF__CURLOPT_NOSIGNAL, 1L);
    c->easy_setopt(e, GF__CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    c->easy_setopt(e, GF__CURLOPT_TIMEOUT_MS, cx->cfg.timeout_s * 1000L);
    c->easy_setopt(e, GF__CURLOPT_LOW_SPEED_LIMIT, 1L); /* no byte for this long: a stalled connection */
    c->easy_setopt(e, GF__CURLOPT_LOW_SPEED_TIME, cx->cfg.timeout_s < 15 ? cx->cfg.timeout_s : 15L);
    c->easy_setopt(e, GF__CURLOPT_WRITEFUNCTION, gf__rq_body);
    c->easy_setopt(e, GF__CURLOPT_WRITEDATA, (void *)q);
    c->easy_setopt(e, GF__CURLOPT_HEADERFUNCTION, gf__rq_header);
    c->easy_setopt(e, GF__CURLOPT_HEADERDATA, (void *)q);
    if (cx->cfg.ca) c->easy_setopt(e, GF__CURLOPT_CAINFO, cx->cfg.ca);
    if (q->kind == GF__RQ_HEAD) c->easy_setopt(e, GF__CURLOPT_NOBODY, 1L);
    if (q->kind == GF__RQ_GET) gf__fmt(range, sizeof range, "%llu-%llu", (unsigned long long)q->off, (unsigned long long)(q->off + q->len - 1));
    if (q->kind == GF__RQ_TAIL) gf__fmt(range, sizeof range, "-%llu", (unsigned long long)q->len);
    if (q->kind == GF__RQ_GET || q->kind == GF__RQ_TAIL) c->easy_setopt(e, GF__CURLOPT_RANGE, range);
    if (q->sign && cx->cfg.key_id) {
        if (c->easy_setopt(e, GF__CURLOPT_AWS_SIGV4, cx->sigv4) == GF__CURLE_UNKNOWN_OPTION) {
            gf__fmt(q->why, sizeof q->why, "%s is older than 7.75: it cannot sign S3 requests (CURLOPT_AWS_SIGV4)", GPUFEED_CURL_LIB);
            return -1;
        }
        c->easy_setopt(e, GF__CURLOPT_USERNAME, cx->cfg.key_id);
        c->easy_setopt(e, GF__CURLOPT_PASSWORD, cx->cfg.secret);
        c->easy_setopt(e, GF__CURLOPT_HTTPHEADER, cx->hdrs);
    }
    q->hstatus = 0;
    q->has_cr = q->has_cl = 0;
    q->got = 0;
    q->overflow = q->nomem = 0;
    q->t_start = gf__now_us();
    q->t_first = 0;
    q->ebody_n = 0;
    q->etag_got[0] = q->lastmod[0] = 0;
    return 0;
}

/* the request in words: "GET bytes 0-99 of bucket 'b', key 'k'" */
static void gf__rq_name(const gf__rreq *q, char *out, size_t cap)
{
    switch (q->kind) {
    case GF__RQ_GET:
        gf__fmt(out, cap, "GET bytes %llu-%llu of %s", (unsigned long long)q->off, (unsigned long long)(q->off + q->len - 1), q->what);
        break;
    case GF__RQ_TAIL: gf__fmt(out, cap, "GET the last %llu bytes of %s", (unsigned long long)q->len, q->what); break;
    case GF__RQ_WHOLE: gf__fmt(out, cap, "GET %s", q->what); break;
    case GF__RQ_HEAD: gf__fmt(out, cap, "HEAD %s", q->what); break;
    default: gf__fmt(out, cap, "ListObjectsV2 of %s", q->what); break;
    }
}

/* an HTTP error in words: status, reason, S3's code and message, what
   to check; 1 when another attempt may succeed */
static int gf__rq_http_error(const gf__rctx *cx, gf__rreq *q, char *out, size_t cap)
{
    const char *p = q->ebody, *end = q->ebody + q->ebody_n, *v = NULL, *m = NULL;
    size_t vn = 0, mn = 0;
    const char *hint = "";
    char code[96] = "", msg[200] = "";
    if (gf__xml_tag(&p, end, "Code", &v, &vn) == 1 && gf__rdecode(v, vn, 0, code, sizeof code)) code[0] = 0;
    p = q->ebody;
    if (gf__xml_tag(&p, end, "Message", &m, &mn) == 1 && gf__rdecode(m, mn, 0, msg, sizeof msg)) msg[0] = 0;
    if (q->status == 403 && !cx->cfg.key_id) hint = " (no credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set)";
    else if (q->status == 403 && strcmp(code, "SignatureDoesNotMatch") == 0)
        hint = " (a wrong secret key: AWS_SECRET_ACCESS_KEY does not match AWS_ACCESS_KEY_ID)";
    else if (q->status == 403 && strcmp(code, "InvalidAccessKeyId") == 0) hint = " (an unknown AWS_ACCESS_KEY_ID)";
    else if (q->status == 403) hint = " (access denied: a wrong secret key, an unknown key id or no permission)";
    gf__fmt(out, cap, "HTTP %ld %s%s%s%s%s%s", q->status, gf__http_reason(q->status), code[0] ? ", " : "", code, msg[0] ? ": " : "", msg, hint);
    return q->status >= 500 || q->status == 429 || q->status == 408;
}

/* a 2xx answer to a ranged GET: what it says against what was asked */
static int gf__rq_check_get(gf__rreq *q, char *out, size_t cap)
{
    if (q->has_cr < 0) { gf__fmt(out, cap, "a malformed Content-Range header"); return -1; }
    if (q->has_cr > 0 && (q->cr_total != UINT64_MAX && q->cr_total != q->size)) {
        gf__fmt(out, cap, "the object changed while being read: its size is now %llu bytes, was %llu", (unsigned long long)q->cr_total,
                (unsigned long long)q->size);
        return -1;
    }
    if (q->has_cr > 0 && (q->cr_a != q->off || q->cr_b != q->off + q->len - 1)) {
        gf__fmt(out, cap, "the server answered bytes %llu-%llu", (unsigned long long)q->cr_a, (unsigned long long)q->cr_b);
        return -1;
    }
    if (q->has_cr == 0 && (q->status == 206 || q->off != 0 || q->len != q->size)) {
        gf__fmt(out, cap, "HTTP %ld without a Content-Range: the server ignored the Range header", q->status);
        return -1;
    }
    if (q->etag && q->etag[0] && q->etag_got[0] && strcmp(q->etag, q->etag_got) != 0) {
        gf__fmt(out, cap, "the object changed while being read: ETag %.60s, was %.60s", q->etag_got, q->etag);
        return -1;
    }
    if (q->got != q->len) {
        gf__fmt(out, cap, "a short body: %llu of %llu bytes", (unsigned long long)q->got, (unsigned long long)q->len);
        return 1;
    }
    return 0;
}

/* a 2xx answer to a suffix GET or a whole GET: the object's size */
static int gf__rq_check_size(gf__rreq *q, char *out, size_t cap)
{
    if (q->has_cr < 0 || (q->has_cr > 0 && (q->cr_total == UINT64_MAX || q->cr_b + 1 != q->cr_total))) {
        gf__fmt(out, cap, "a malformed Content-Range header for the object's end");
        return -1;
    }
    if (q->has_cr > 0) {
        q->off = q->cr_a;
        q->len = q->cr_b - q->cr_a + 1;
        q->size = q->cr_total;
    } else {
        if (q->has_cl > 0 && q->cl != q->got) {
            gf__fmt(out, cap, "a short body: %llu of %llu bytes", (unsigned long long)q->got, (unsigned long long)q->cl);
            return 1;
        }
        q->off = 0;
        q->len = q->got;
        q->size = q->got;
    }
    if (q->got != q->len) {
        gf__fmt(out, cap, "a short body: %llu of %llu bytes", (unsigned long long)q->got, (unsigned long long)q->len);
        return 1;
    }
    return 0;
}

/* what an attempt's end means: 0 done, 1 worth another attempt, 2 again at
   once as a whole GET (a suffix larger than the object: 416), -1 failed;
   the reason in q->why */
static int gf__rq_judge(gf__rctx *cx, void *e, gf__rreq *q, unsigned rc)
{
    char how[GPUFEED_ERROR_MAX], name[GPUFEED_ERROR_MAX / 2];
    int v = 0;
    how[0] = 0;
    q->status = 0;
    cx->c.easy_getinfo(e, GF__CURLINFO_RESPONSE_CODE, &q->status);
    if (rc != 0) {
        v = (rc == GF__CURLE_UNSUPPORTED_PROTOCOL || rc == GF__CURLE_URL_MALFORMAT || rc == GF__CURLE_NOT_BUILT_IN || rc == GF__CURLE_UNKNOWN_OPTION) ? -1 : 1;
        if (q->overflow) v = -1;
        if (q->nomem) v = -1;
        gf__fmt(how, sizeof how, "%s (%llu bytes received)",
                q->overflow ? "the server sent more bytes than asked for" : q->nomem ? "out of memory" : cx->c.easy_strerror(rc),
                (unsigned long long)q->got);
    } else if (q->kind == GF__RQ_TAIL && q->status == 416) {
        return 2;
    } else if (q->status < 200 || q->status > 299) {
        v = gf__rq_http_error(cx, q, how, sizeof how) ? 1 : -1;
    } else if (q->kind == GF__RQ_GET) {
        v = gf__rq_check_get(q, how, sizeof how);
    } else if (q->kind == GF__RQ_TAIL || q->kind == GF__RQ_WHOLE) {
        v = gf__rq_check_size(q, how, sizeof how);
    } else if (q->kind == GF__RQ_HEAD && q->has_cl > 0) {
        q->size = q->cl;
    }
    if (v == 0) return 0;
    gf__rq_name(q, name, sizeof name);
    gf__fmt(q->why, sizeof q->why, "%s: %s", name, how);
    return v;
}

static void gf__rsleep_ms(long ms)
{
    struct timeval tv;
    tv.tv_sec = ms / 1000;
    tv.tv_usec = (ms % 1000) * 1000;
    (void)select(0, NULL, NULL, NULL, &tv);
}

/* the request to start next: a retry that is due, else the next new one;
   -1 none now (*wake: the earliest retry) */
static int32_t gf__rq_pick(gf__rreq *q, int32_t n, int32_t *next, uint64_t now, uint64_t *wake)
{
    int32_t i;
    for (i = 0; i < *next; i++) {
        if (q[i].state != GF__RS_WAIT) continue;
        if (q[i].due_us <= now) return i;
        if (q[i].due_us < *wake) *wake = q[i].due_us;
    }
    if (*next < n) return (*next)++;
    return -1;
}

/* starts request j on slot i; 0, or -1 when it failed at once */
static int gf__rq_start(gf__rctx *cx, gf__rconn *k, int32_t i, gf__rreq *q)
{
    if (!k->easy[i]) k->easy[i] = cx->c.easy_init();
    if (!k->easy[i]) {
        gf__fmt(q->why, sizeof q->why, "curl_easy_init failed");
        return -1;
    }
    if (gf__rq_setup(cx, k->easy[i], q)) return -1;
    if (cx->c.multi_add_handle(k->multi, k->easy[i]) != 0) {
        gf__fmt(q->why, sizeof q->why, "curl_multi_add_handle failed");
        return -1;
    }
    q->state = GF__RS_RUN;
    q->attempts++;
    return 0;
}

/* an attempt ended: counted, judged, done or scheduled again */
static void gf__rq_end(gf__rctx *cx, void *e, gf__rreq *q, unsigned rc, int retries)
{
    int v = gf__rq_judge(cx, e, q, rc);
    pthread_mutex_lock(&cx->mu);
    cx->st.requests++;
    cx->st.bytes += q->got;
    if (q->kind == GF__RQ_GET && !q->opening) cx->st.gets++;
    if ((q->kind == GF__RQ_GET || q->kind == GF__RQ_TAIL || q->kind == GF__RQ_WHOLE) && q->opening) cx->st.open_gets++;
    if (v == 1 && q->attempts <= retries) cx->st.retries++;
    if (v < 0 || (v == 1 && q->attempts > retries)) cx->st.failures++;
    if (v == 0 && (q->kind == GF__RQ_GET || q->kind == GF__RQ_TAIL) && q->t_first > q->t_start) { /* the network's figures, averaged */
        uint64_t now = gf__now_us(), ttfb = q->t_first - q->t_start, bw = q->len * 1000000 / (now > q->t_first ? now - q->t_first : 1);
        cx->ttfb_us = cx->ttfb_us ? (cx->ttfb_us * 7 + ttfb) / 8 : ttfb;
        if (q->len >= 65536) cx->bw = cx->bw ? (cx->bw / 8) * 7 + bw / 8 : bw;
    }
    pthread_mutex_unlock(&cx->mu);
    if (v == 0) q->state = GF__RS_OK;
    else if (v == 2) {
        q->kind = GF__RQ_WHOLE;
        q->state = GF__RS_WAIT;
        q->due_us = 0;
        q->attempts--;
    } else if (v == 1 && q->attempts <= retries) {
        uint64_t ms = (uint64_t)100 << (q->attempts - 1 < 6 ? q->attempts - 1 : 6);
        if (ms > 5000) ms = 5000;
        ms += (gf__now_us() ^ (uint64_t)(uintptr_t)q) % (ms / 4 + 1); /* jitter: not all retries at once */
        q->state = GF__RS_WAIT;
        q->due_us = gf__now_us() + ms * 1000;
    } else {
        size_t l = strlen(q->why);
        if (v == 1) gf__fmt(q->why + l, sizeof q->why - l, " (after %d attempts)", q->attempts);
        q->state = GF__RS_FAIL;
    }
}

/* Runs n requests, cfg.inflight at a time on one set of handles, each with
   its retries. Returns how many failed (their reasons in why). */
static int32_t gf__rfetch(gf__rctx *cx, gf__rreq *q, int32_t n)
{
    gf__rconn *k = gf__rconn_get(cx);
    int32_t cur[GF__RMAX_INFLIGHT], next = 0, done = 0, failed = 0, i, slots = cx->cfg.inflight;
    if (!k) {
        for (i = 0; i < n; i++) gf__fmt(q[i].why, sizeof q[i].why, "out of memory for curl handles");
        return n;
    }
    for (i = 0; i < slots; i++) cur[i] = -1;
    while (done < n) {
        uint64_t now = gf__now_us(), wake = UINT64_MAX;
        int running = 0, left = 0, busy = 0, nfd;
        struct CURLMsg *m;
        for (i = 0; i < slots; i++) {
            int32_t j;
            if (cur[i] >= 0) continue;
            j = gf__rq_pick(q, n, &next, now, &wake);
            if (j < 0) break;
            if (gf__rq_start(cx, k, i, &q[j]) == 0) {
                cur[i] = j;
                continue;
            }
            q[j].state = GF__RS_FAIL;
            done++;
            failed++;
        }
        for (i = 0; i < slots; i++) busy += cur[i] >= 0;
        cx->c.multi_perform(k->multi, &running);
        while ((m = cx->c.multi_info_read(k->multi, &left)) != NULL) {
            gf__curlmsg msg;
            memcpy(&msg, m, sizeof msg);
            if (msg.msg != GF__CURLMSG_DONE) continue;
            for (i = 0; i < slots && (cur[i] < 0 || k->easy[i] != msg.easy); i++) {}
            if (i == slots) continue;
            cx->c.multi_remove_handle(k->multi, msg.easy);
            gf__rq_end(cx, msg.easy, &q[cur[i]], msg.data.result, cx->cfg.retries);
            if (q[cur[i]].state == GF__RS_OK || q[cur[i]].state == GF__RS_FAIL) {
                done++;
                failed += q[cur[i]].state == GF__RS_FAIL;
            }
            cur[i] = -1;
            busy--;
        }
        if (done >= n) break;
        if (busy > 0) cx->c.multi_wait(k->multi, NULL, 0, 50, &nfd);
        else if (wake != UINT64_MAX && wake > gf__now_us()) gf__rsleep_ms((long)((wake - gf__now_us()) / 1000 + 1));
    }
    gf__rconn_put(cx, k);
    return failed;
}

/* ---- one object as a gpufeed_source: kept ranges, will_read, read_at ---- */

/* bytes of kept ranges at off (up to len) copied to dst; 0 when none holds
   off. Under cx->mu. */
static uint64_t gf__rsrc_copy(gf__rsrc *s, uint64_t off, uint8_t *dst, uint64_t len)
{
    int32_t i;
    for (i = 0; i < GF__RMAX_RANGES; i++) {
        gf__rrange *r = &s->r[i];
        uint64_t n;
        if (!r->buf || r->pending || off < r->off || off >= r->off + r->len) continue;
        n = r->off + r->len - off;
        if (n > len) n = len;
        if (dst) memcpy(dst, r->buf + (off - r->off), (size_t)n);
        r->stamp = ++s->cx->stamp;
        if (dst && r->served < r->len) {
            r->served = n < r->len - r->served ? r->served + n : r->len;
            if (r->served == r->len) s->cx->thru += r->len;
        }
        return n;
    }
    return 0;
}

/* bytes from off (up to len) that a kept or pending range holds; *pending
   set when it is a pending one. Under cx->mu. */
static uint64_t gf__rsrc_covered(const gf__rsrc *s, uint64_t off, uint64_t len, int *pending)
{
    int32_t i;
    for (i = 0; i < GF__RMAX_RANGES; i++) {
        const gf__rrange *r = &s->r[i];
        if (!r->buf || off < r->off || off >= r->off + r->len) continue;
        if (pending) *pending = r->pending;
        return r->off + r->len - off < len ? r->off + r->len - off : len;
    }
    return 0;
}

/* where the next kept (or pending) range after off starts (end when none before it) */
static uint64_t gf__rsrc_next(const gf__rsrc *s, uint64_t off, uint64_t end)
{
    int32_t i;
    for (i = 0; i < GF__RMAX_RANGES; i++)
        if (s->r[i].buf && s->r[i].off > off && s->r[i].off < end) end = s->r[i].off;
    return end;
}

static void gf__rrange_drop(gf__rctx *cx, gf__rrange *r)
{
    if (r->served == r->len) cx->thru -= r->len;
    cx->held -= r->len;
    gf__free(&cx->alloc, r->buf);
    memset(r, 0, sizeof *r);
}

/* the kept range of the context's sources to drop first: the least
   recently used of those read through, else of all (NULL: none) */
static gf__rrange *gf__rctx_lru(gf__rctx *cx)
{
    gf__rrange *best = NULL;
    gf__rsrc *s;
    int32_t i, bd = 0;
    for (s = cx->srcs; s; s = s->next)
        for (i = 0; i < GF__RMAX_RANGES; i++) {
            gf__rrange *r = &s->r[i];
            int d = r->served == r->len;
            if (!r->buf || r->pending) continue;
            if (!best || d > bd || (d == bd && r->stamp < best->stamp)) {
                best = r;
                bd = d;
            }
        }
    return best;
}

/* bytes the buffer can take without dropping a range not read through yet:
   what read-ahead may use. Under cx->mu. */
static uint64_t gf__rctx_room(const gf__rctx *cx)
{
    return (cx->cfg.buffer > cx->held ? cx->cfg.buffer - cx->held : 0) + cx->thru;
}

/* keeps buf (len bytes at off) for s, dropping the least recently used
   ranges beyond the context's budget (never a pending one); with pending,
   a range being fetched into buf. The slot, or NULL when none is free of
   pending ranges or it exceeds the budget (then buf is freed unless
   pending). Under cx->mu. */
static gf__rrange *gf__rsrc_keep(gf__rsrc *s, uint64_t off, uint64_t len, uint8_t *buf, int pending)
{
    gf__rctx *cx = s->cx;
    gf__rrange *slot = NULL;
    int32_t i;
    for (i = 0; i < GF__RMAX_RANGES && len && len <= cx->cfg.buffer; i++) {
        if (s->r[i].pending) continue;
        if (!s->r[i].buf) { slot = &s->r[i]; break; }
        if (!slot || s->r[i].stamp < slot->stamp) slot = &s->r[i];
    }
    if (!slot) {
        if (!pending) gf__free(&cx->alloc, buf);
        return NULL;
    }
    if (slot->buf) gf__rrange_drop(cx, slot);
    while (cx->held + len > cx->cfg.buffer) {
        gf__rrange *r = gf__rctx_lru(cx);
        if (!r) break;
        gf__rrange_drop(cx, r);
    }
    slot->off = off;
    slot->len = len;
    slot->buf = buf;
    slot->pending = pending;
    slot->served = 0;
    slot->stamp = ++cx->stamp;
    cx->held += len;
    return slot;
}

/* a GET request of n bytes at off of s into dst */
static void gf__rsrc_req(gf__rsrc *s, gf__rreq *q, uint64_t off, uint64_t n, uint8_t *dst)
{
    memset(q, 0, sizeof *q);
    q->kind = GF__RQ_GET;
    q->url = s->url;
    q->what = s->what;
    q->sign = s->s3;
    q->off = off;
    q->len = n;
    q->size = s->size;
    q->etag = s->etag;
    q->a = &s->cx->alloc;
    q->dst = dst;
    q->dcap = q->cap = (size_t)n;
}

/* records a failure (read_at reports it; will_read's range fails there) */
static void gf__rsrc_fail(gf__rsrc *s, const gf__rreq *q, int from_hint)
{
    pthread_mutex_lock(&s->cx->mu);
    gf__fmt(s->why, sizeof s->why, "%s", q->why);
    if (from_hint) {
        s->fail_off = q->off;
        s->fail_len = q->len;
    }
    pthread_mutex_unlock(&s->cx->mu);
}

/* where a read_at's miss at off (wanted up to stop) should read to. Where
   a request's wait is worth more bytes than wanted (the averages of the
   requests so far: time to the first byte times the rate), a part; where
   the miss starts where an earlier read-ahead ended (a read stream: the
   page headers a dataset walks in a file without a page index), twice
   that read-ahead, up to GF__RAHEAD_PARTS parts fetched in parallel;
   within the object and the room that drops no bytes not read yet. What
   it brings is there for the units while the buffer holds it. Under
   cx->mu. */
#define GF__RAHEAD_PARTS 8
static uint64_t gf__rsrc_wait(gf__rsrc *s, uint64_t *from, uint64_t stop)
{
    gf__rctx *cx = s->cx;
    uint64_t w = cx->bw / 1000000 * cx->ttfb_us, room = gf__rctx_room(cx), ra = cx->cfg.part, off = *from;
    int32_t i, k = 0;
    if (stop - off >= cx->cfg.part || w <= stop - off) return stop;
    for (i = 0; i < GF__RSEQ; i++) { /* a stream: the miss at most a gap past where one ended */
        if (s->seq_stamp[i] && s->seq_end[i] <= off && off - s->seq_end[i] <= cx->cfg.gap) break;
        if (s->seq_stamp[i] < s->seq_stamp[k]) k = i;
    }
    if (i < GF__RSEQ) {
        k = i;
        off = s->seq_end[i]; /* the gap too: the units will want it */
        ra = s->seq_ra[i] * 2 > ra ? s->seq_ra[i] * 2 : ra;
        if (ra > cx->cfg.part * GF__RAHEAD_PARTS) ra = cx->cfg.part * GF__RAHEAD_PARTS;
    }
    if (ra > room) ra = room;
    ra = ra > s->size - off ? s->size - off : ra;
    if (off + ra <= stop || gf__rsrc_next(s, off, stop) < stop) return stop;
    *from = off;
    s->seq_end[k] = off + ra;
    s->seq_ra[k] = ra;
    s->seq_stamp[k] = ++cx->stamp;
    return off + ra;
}

/* a read_at's missing bytes [off, off+len) into dst, fetched as [from,
   to) around them: in parts fetched in parallel, all kept for the reads
   after it (only the missing bytes, straight into dst, none kept, when
   they exceed the buffer). 0, or -1 (why in s). */
static int gf__rsrc_fetch(gf__rsrc *s, uint64_t from, uint64_t to, uint64_t off, uint64_t len, uint8_t *dst)
{
    gf__rctx *cx = s->cx;
    gf__rreq *q;
    uint64_t po[GF__RMAX_INFLIGHT], pl[GF__RMAX_INFLIGHT], part = cx->cfg.part, all = to - from, at = from;
    int32_t n, i, bad = -1, keep = all <= cx->cfg.buffer;
    if (!keep) {
        all = len;
        at = off;
    }
    if (all / part >= GF__RMAX_INFLIGHT) part = all / (GF__RMAX_INFLIGHT - 1);
    n = gf__rsplit(&at, &all, 1, part, po, pl, GF__RMAX_INFLIGHT);
    q = n > 0 ? (gf__rreq *)gf__alloc(&cx->alloc, (size_t)n * sizeof *q) : NULL;
    if (!q) return -1;
    for (i = 0; i < n; i++) {
        uint8_t *b = keep ? (uint8_t *)gf__alloc(&cx->alloc, (size_t)pl[i]) : dst + (po[i] - off);
        if (!b) break;
        gf__rsrc_req(s, &q[i], po[i], pl[i], b);
    }
    if (i < n) bad = i;
    if (bad < 0 && gf__rfetch(cx, q, n))
        for (i = 0; i < n && bad < 0; i++)
            if (q[i].state != GF__RS_OK) bad = i;
    if (bad >= 0 && bad < n && q[bad].why[0]) gf__rsrc_fail(s, &q[bad], 0);
    if (keep) pthread_mutex_lock(&cx->mu);
    for (i = 0; keep && i < n && q[i].dst; i++) {
        uint64_t a = po[i] > off ? po[i] : off, e = po[i] + pl[i] < off + len ? po[i] + pl[i] : off + len;
        if (bad < 0 && e > a) memcpy(dst + (a - off), q[i].dst + (a - po[i]), (size_t)(e - a));
        if (bad < 0) gf__rsrc_keep(s, po[i], pl[i], q[i].dst, 0);
        else gf__free(&cx->alloc, q[i].dst);
    }
    if (keep) pthread_mutex_unlock(&cx->mu);
    gf__free(&cx->alloc, q);
    return bad >= 0 ? -1 : 0;
}

static int gf__rsrc_read(void *ctx, uint64_t off, void *buf, size_t len)
{
    gf__rsrc *s = (gf__rsrc *)ctx;
    gf__rctx *cx = s->cx;
    uint8_t *p = (uint8_t *)buf;
    uint64_t end, ahead, from;
    int missed = 0;
    pthread_mutex_lock(&cx->mu);
    cx->st.reads++;
    if (off > s->size || len > s->size - off) {
        gf__fmt(s->why, sizeof s->why, "a read of %llu bytes at offset %llu runs past the end of %s (%llu bytes)", (unsigned long long)len,
                (unsigned long long)off, s->what, (unsigned long long)s->size);
        pthread_mutex_unlock(&cx->mu);
        return -1;
    }
    end = off + len;
    while (off < end) {
        uint64_t got = gf__rsrc_copy(s, off, p, end - off), stop;
        int pending = 0;
        if (got) {
            off += got;
            p += got;
            continue;
        }
        if (gf__rsrc_covered(s, off, end - off, &pending) && pending) { /* a will_read is fetching it */
            pthread_cond_wait(&cx->done, &cx->mu);
            continue;
        }
        if (s->fail_len && off < s->fail_off + s->fail_len && s->fail_off < end) { /* will_read could not fetch it */
            s->fail_len = 0;
            pthread_mutex_unlock(&cx->mu);
            return -1;
        }
        stop = gf__rsrc_next(s, off, end);
        from = off;
        ahead = gf__rsrc_wait(s, &from, stop);
        pthread_mutex_unlock(&cx->mu);
        if (gf__rsrc_fetch(s, from, ahead, off, stop - off, p)) return -1;
        pthread_mutex_lock(&cx->mu);
        p += stop - off;
        off = stop;
        missed = 1;
    }
    cx->st.reads_served += !missed;
    pthread_mutex_unlock(&cx->mu);
    return 0;
}

/* a read stream: a missing piece [a, b) that starts where an earlier
   fetch of this object ended is read on ahead: twice the last read-ahead
   (at least b - a), at most GF__RAHEAD_X times b - a, a part, and what the
   network moves while a request waits for its first byte (the averages of
   the GETs so far: no read-ahead where requests answer at once). The new
   end of the piece. Under cx->mu. */
static uint64_t gf__rsrc_stream(gf__rsrc *s, uint64_t a, uint64_t b)
{
    int32_t i, k = 0;
    uint64_t ra = 0, lim = (b - a) * GF__RAHEAD_X, wait = s->cx->bw / 1000000 * s->cx->ttfb_us, room = gf__rctx_room(s->cx);
    if (wait < lim) lim = wait;
    if (room < lim) lim = room; /* read-ahead never drops bytes not read yet */
    for (i = 0; i < GF__RSEQ; i++) {
        if (s->seq_end[i] == a && s->seq_stamp[i]) break;
        if (s->seq_stamp[i] < s->seq_stamp[k]) k = i;
    }
    if (i < GF__RSEQ) {
        k = i;
        ra = s->seq_ra[i] * 2 > b - a ? s->seq_ra[i] * 2 : b - a;
        if (ra > lim) ra = lim;
        if (ra > s->cx->cfg.part) ra = s->cx->cfg.part;
        b = ra > s->size - b ? s->size : b + ra;
    }
    s->seq_end[k] = b;
    s->seq_ra[k] = ra;
    s->seq_stamp[k] = ++s->cx->stamp;
    return b;
}

/* the parts of ranges neither kept nor being fetched: into uo/ul (cap),
   read streams extended ahead; the count. Under cx->mu. */
static int32_t gf__rsrc_missing(gf__rsrc *s, const uint64_t *off, const uint64_t *len, int32_t n, uint64_t *uo, uint64_t *ul, int32_t cap)
{
    int32_t i, m = 0;
    for (i = 0; i < n; i++) {
        uint64_t a = off[i], b;
        if (a >= s->size) continue;
        b = len[i] > s->size - a ? s->size : a + len[i];
        while (a < b && m < cap) {
            uint64_t got = gf__rsrc_covered(s, a, b - a, NULL), stop;
            if (got) {
                a += got;
                continue;
            }
            stop = gf__rsrc_next(s, a, b);
            uo[m] = a;
            ul[m] = (stop == b ? gf__rsrc_stream(s, a, b) : stop) - a;
            m++;
            a = stop;
        }
    }
    return m;
}

/* a will_read's parts: each reserved as a pending range (readers of it
   wait) and its request made; the number of requests. Under cx->mu. */
static int32_t gf__rsrc_reserve(gf__rsrc *s, const uint64_t *po, const uint64_t *pl, int32_t np, gf__rreq *q, gf__rrange **slot)
{
    gf__rctx *cx = s->cx;
    int32_t i;
    for (i = 0; i < np; i++) {
        uint8_t *b = (uint8_t *)gf__alloc(&cx->alloc, (size_t)pl[i]);
        if (!b) break;
        gf__rsrc_req(s, &q[i], po[i], pl[i], b);
        slot[i] = gf__rsrc_keep(s, po[i], pl[i], b, 1);
    }
    return i;
}

/* a will_read's parts fetched: kept (or dropped when they failed), and the
   readers waiting for them woken */
static void gf__rsrc_settle(gf__rsrc *s, gf__rreq *q, gf__rrange **slot, int32_t np)
{
    gf__rctx *cx = s->cx;
    int32_t i, bad = -1;
    for (i = 0; i < np; i++)
        if (q[i].state != GF__RS_OK && bad < 0) bad = i;
    if (bad >= 0) gf__rsrc_fail(s, &q[bad], 1);
    pthread_mutex_lock(&cx->mu);
    for (i = 0; i < np; i++) {
        if (slot[i] && q[i].state == GF__RS_OK) slot[i]->pending = 0;
        else if (slot[i]) {
            slot[i]->pending = 0;
            gf__rrange_drop(cx, slot[i]);
        } else if (q[i].state == GF__RS_OK) gf__rsrc_keep(s, q[i].off, q[i].len, q[i].dst, 0);
        else gf__free(&cx->alloc, q[i].dst);
    }
    pthread_cond_broadcast(&cx->done);
    pthread_mutex_unlock(&cx->mu);
}

/* gpufeed's hint before a unit: its ranges, fetched now in few requests
   (merged across small gaps, then the parts not held yet, read streams
   extended ahead, cut into parts, in parallel); other threads' reads of
   them wait */
static void gf__rsrc_will_read(void *ctx, const uint64_t *off, const uint64_t *len, int32_t n)
{
    gf__rsrc *s = (gf__rsrc *)ctx;
    gf__rctx *cx = s->cx;
    const int32_t cap = 2 * n + GF__RMAX_RANGES + 1;
    uint64_t *uo, *ul, *po = NULL, total = 0;
    gf__rreq *q = NULL;
    gf__rrange **slot = NULL;
    int32_t m, np = 0, i;
    if (n <= 0 || (size_t)cap > SIZE_MAX / 32) return;
    uo = (uint64_t *)gf__alloc(&cx->alloc, (size_t)cap * 2 * sizeof(uint64_t));
    if (!uo) return; /* only a hint: read_at fetches what is missing */
    ul = uo + cap;
    memcpy(uo + cap - n, off, (size_t)n * sizeof *off);   /* the wanted ranges merged first, then what is */
    memcpy(ul + cap - n, len, (size_t)n * sizeof *len);   /* missing of them (never bytes held already) */
    m = gf__rcoalesce(uo + cap - n, ul + cap - n, n, cx->cfg.gap);
    pthread_mutex_lock(&cx->mu);
    m = gf__rsrc_missing(s, uo + cap - n, ul + cap - n, m, uo, ul, cap - n);
    m = gf__rcoalesce(uo, ul, m, 0);
    for (i = 0; i < m; i++) {
        np += (int32_t)((ul[i] + cx->cfg.part - 1) / cx->cfg.part);
        total += ul[i];
    }
    if (np > 0 && (size_t)np < SIZE_MAX / 64 && total <= cx->cfg.buffer) {
        po = (uint64_t *)gf__alloc(&cx->alloc, (size_t)np * 2 * sizeof(uint64_t));
        q = (gf__rreq *)gf__alloc(&cx->alloc, (size_t)np * sizeof *q);
        slot = (gf__rrange **)gf__alloc(&cx->alloc, (size_t)np * sizeof *slot);
    }
    if (po && q && slot) {
        uint64_t *pl = po + np;
        np = gf__rsplit(uo, ul, m, cx->cfg.part, po, pl, np);
        np = gf__rsrc_reserve(s, po, pl, np, q, slot);
    } else np = 0;
    pthread_mutex_unlock(&cx->mu);
    if (np > 0) {
        gf__rfetch(cx, q, np);
        gf__rsrc_settle(s, q, slot, np);
    }
    gf__free(&cx->alloc, slot);
    gf__free(&cx->alloc, q);
    gf__free(&cx->alloc, po);
    gf__free(&cx->alloc, uo);
}

static void gf__rsrc_why(void *ctx, char *buf, size_t cap)
{
    gf__rsrc *s = (gf__rsrc *)ctx;
    pthread_mutex_lock(&s->cx->mu);
    gf__fmt(buf, cap, "%s", s->why);
    pthread_mutex_unlock(&s->cx->mu);
}

static void gf__rsrc_close(void *ctx)
{
    gf__rsrc *s = (gf__rsrc *)ctx, **pp;
    gf__rctx *cx = s->cx;
    int32_t i;
    pthread_mutex_lock(&cx->mu);
    for (pp = &cx->srcs; *pp && *pp != s; pp = &(*pp)->next) {}
    if (*pp) *pp = s->next;
    for (i = 0; i < GF__RMAX_RANGES; i++)
        if (s->r[i].buf) gf__rrange_drop(cx, &s->r[i]);
    cx->refs--;
    i = cx->refs;
    pthread_mutex_unlock(&cx->mu);
    gf__free(&cx->alloc, s->url);
    gf__free(&cx->alloc, s->name);
    gf__free(&cx->alloc, s->what);
    gf__free(&cx->alloc, s);
    if (i == 0) gf__rctx_free(cx);
}

/* ---- opening objects: their last and first bytes, 64 objects a round ---- */

#define GF__RAHEAD 64                  /* objects opened ahead together */
#define GF__RHEAD 4096                 /* first bytes fetched with the last */

/* an object's request URL and its name in messages; 0, or -1 (why) */
static int gf__robj_names(const gf__rctx *cx, const char *url, char **rurl, char **what, char *why, size_t cap)
{
    char bucket[256], *key = NULL;
    size_t kl = strlen(url) + 1, ul;
    *rurl = *what = NULL;
    if (strncmp(url, "s3://", 5) != 0) {
        *rurl = gf__rstrdup(&cx->alloc, url);
        *what = gf__rstrdup(&cx->alloc, url);
        return *rurl && *what ? 0 : -1;
    }
    key = (char *)gf__alloc(&cx->alloc, kl);
    if (!key) return -1;
    if (gf__s3_split(url, bucket, sizeof bucket, key, kl) || !key[0]) {
        gf__fmt(why, cap, "not an object URL: s3://BUCKET/KEY");
        gf__free(&cx->alloc, key);
        return -1;
    }
    ul = strlen(url) * 3 + (cx->cfg.endpoint ? strlen(cx->cfg.endpoint) : 0) + strlen(cx->cfg.region) + 64;
    *rurl = (char *)gf__alloc(&cx->alloc, ul);
    *what = (char *)gf__alloc(&cx->alloc, kl + sizeof bucket + 32);
    if (*rurl && *what && gf__s3_url(cx->cfg.endpoint, cx->cfg.region, bucket, key, *rurl, ul) == 0)
        gf__fmt(*what, kl + sizeof bucket + 32, "bucket '%s', key '%s'", bucket, key);
    else if (*rurl) (*rurl)[0] = 0;
    gf__free(&cx->alloc, key);
    return *rurl && *what && (*rurl)[0] ? 0 : -1;
}

/* a suffix GET (its last `tail` bytes) of an object */
static void gf__robj_tail_req(gf__rctx *cx, gf__rreq *q, const char *url, const char *what, int s3)
{
    memset(q, 0, sizeof *q);
    q->kind = GF__RQ_TAIL;
    q->url = url;
    q->what = what;
    q->sign = s3;
    q->opening = 1;
    q->len = cx->cfg.tail;
    q->a = &cx->alloc;
    q->grow = 1;
    q->cap = (size_t)cx->cfg.tail;
}

/* what round 1 (the last bytes) found, into o; and round 2's request (the
   first bytes, when the last did not cover them): 1 when there is one */
static int gf__robj_took_tail(gf__rctx *cx, gf__robj *o, gf__rreq *t, gf__rreq *h)
{
    uint8_t *b;
    o->ok = t->state == GF__RS_OK;
    if (!o->ok) {
        gf__fmt(o->why, sizeof o->why, "%s", t->why);
        return 0;
    }
    o->size = t->size;
    gf__etag_copy(o->etag, sizeof o->etag, t->etag_got, strlen(t->etag_got));
    gf__fmt(o->lastmod, sizeof o->lastmod, "%s", t->lastmod);
    o->tail.off = t->off;
    o->tail.len = t->len;
    o->tail.buf = t->dst;
    t->dst = NULL;
    if (o->tail.off == 0) return 0;
    b = (uint8_t *)gf__alloc(&cx->alloc, GF__RHEAD);
    if (!b) {
        o->ok = 0;
        gf__fmt(o->why, sizeof o->why, "out of memory");
        return 0;
    }
    memset(h, 0, sizeof *h);
    h->kind = GF__RQ_GET;
    h->url = t->url;
    h->what = t->what;
    h->sign = t->sign;
    h->opening = 1;
    h->len = o->tail.off < GF__RHEAD ? o->tail.off : GF__RHEAD;
    h->size = o->size;
    h->etag = o->etag;
    h->a = &cx->alloc;
    h->dst = b;
    h->dcap = h->cap = (size_t)h->len;
    return 1;
}

/* round 2 (the first bytes) of the objects opened ahead: what it found */
static void gf__robj_took_head(gf__rctx *cx, gf__robj *w, gf__rreq *h)
{
    if (h->state == GF__RS_OK) {
        w->head.len = h->len;
        w->head.buf = h->dst;
        return;
    }
    gf__free(&cx->alloc, h->dst);
    w->ok = 0;
    gf__fmt(w->why, sizeof w->why, "%s", h->why);
}

/* opens up to GF__RAHEAD of the remote urls[0..n) ahead: the last bytes of
   each (size, ETag, footer), then the first of those larger than that, all
   in parallel; into cx->ahead (what was there goes). 0, or -1 without memory. */
static int gf__rctx_ahead(gf__rctx *cx, const char *const *urls, int32_t n)
{
    gf__robj *o;
    gf__rreq *q;
    char **rurl;
    int32_t i, m = 0, nq = 0, nh = 0, who[2 * GF__RAHEAD];
    for (i = 0; i < cx->nahead; i++) gf__robj_free(&cx->alloc, &cx->ahead[i]);
    gf__free(&cx->alloc, cx->ahead);
    cx->ahead = NULL;
    cx->nahead = 0;
    o = (gf__robj *)gf__alloc(&cx->alloc, GF__RAHEAD * sizeof *o);
    q = (gf__rreq *)gf__alloc(&cx->alloc, 2 * GF__RAHEAD * sizeof *q);
    rurl = (char **)gf__alloc(&cx->alloc, 2 * GF__RAHEAD * sizeof(char *));
    if (!o || !q || !rurl) {
        gf__free(&cx->alloc, o);
        gf__free(&cx->alloc, q);
        gf__free(&cx->alloc, rurl);
        return -1;
    }
    memset(o, 0, GF__RAHEAD * sizeof *o);
    memset(rurl, 0, 2 * GF__RAHEAD * sizeof(char *));
    cx->ahead = o;
    for (i = 0; i < n && m < GF__RAHEAD; i++) {
        if (!gf__remote_is_url(urls[i])) continue;
        o[m].url = gf__rstrdup(&cx->alloc, urls[i]);
        if (o[m].url && gf__robj_names(cx, urls[i], &rurl[2 * m], &rurl[2 * m + 1], o[m].why, sizeof o[m].why) == 0) {
            gf__robj_tail_req(cx, &q[nq], rurl[2 * m], rurl[2 * m + 1], strncmp(urls[i], "s3://", 5) == 0);
            who[nq++] = m;
        } else if (!o[m].why[0]) gf__fmt(o[m].why, sizeof o[m].why, "out of memory");
        m++;
    }
    cx->nahead = m;
    gf__rfetch(cx, q, nq);
    for (i = 0; i < nq; i++) {
        if (gf__robj_took_tail(cx, &o[who[i]], &q[i], &q[GF__RAHEAD + nh])) who[GF__RAHEAD + nh++] = who[i];
        gf__free(&cx->alloc, q[i].dst);
    }
    gf__rfetch(cx, q + GF__RAHEAD, nh);
    for (i = 0; i < nh; i++) gf__robj_took_head(cx, &o[who[GF__RAHEAD + i]], &q[GF__RAHEAD + i]);
    for (i = 0; i < 2 * GF__RAHEAD; i++) gf__free(&cx->alloc, rurl[i]);
    gf__free(&cx->alloc, rurl);
    gf__free(&cx->alloc, q);
    return 0;
}

/* a source for an object opened ahead (o): its first and last bytes kept */
static gf__rsrc *gf__rsrc_new(gf__rctx *cx, gf__robj *o)
{
    gf__rsrc *s = (gf__rsrc *)gf__alloc(&cx->alloc, sizeof *s);
    char why[64];
    if (!s) return NULL;
    memset(s, 0, sizeof *s);
    s->cx = cx;
    s->s3 = strncmp(o->url, "s3://", 5) == 0;
    s->name = gf__rstrdup(&cx->alloc, o->url);
    if (!s->name || gf__robj_names(cx, o->url, &s->url, &s->what, why, sizeof why)) {
        gf__free(&cx->alloc, s->name);
        gf__free(&cx->alloc, s->url);
        gf__free(&cx->alloc, s->what);
        gf__free(&cx->alloc, s);
        return NULL;
    }
    s->size = o->size;
    gf__fmt(s->etag, sizeof s->etag, "%s", o->etag);
    pthread_mutex_lock(&cx->mu);
    s->next = cx->srcs;
    cx->srcs = s;
    cx->refs++;
    if (o->tail.buf) gf__rsrc_keep(s, o->tail.off, o->tail.len, o->tail.buf, 0);
    if (o->head.buf) gf__rsrc_keep(s, 0, o->head.len, o->head.buf, 0);
    o->tail.buf = o->head.buf = NULL;
    pthread_mutex_unlock(&cx->mu);
    return s;
}

/* Opens urls[0] (an s3:// or http(s):// object) as a source: *cxp the
   dataset's context (made on the first call; NULL: a context of the
   source's own), urls[1..n) the objects opened next (opened ahead with
   it). identity (icap > 0): the URL, size and ETag (or Last-Modified). */
static gpufeed_result gf__remote_open(gf__rctx **cxp, const gpufeed_allocator *a, const char *const *urls, int32_t n,
                                      gpufeed_source *src, char *identity, size_t icap, gpufeed_error *err)
{
    gf__rctx *cx = cxp ? *cxp : NULL;
    gf__robj *o = NULL;
    gf__rsrc *s;
    gpufeed_result r;
    int32_t i, pass;
    memset(src, 0, sizeof *src);
    if (!cx) {
        r = gf__rctx_new(&cx, a, urls[0], err);
        if (r) return r;
        if (cxp) *cxp = cx;
    }
    for (pass = 0; pass < 2 && !o; pass++) {
        for (i = 0; i < cx->nahead && !o; i++)
            if (cx->ahead[i].url && strcmp(cx->ahead[i].url, urls[0]) == 0) o = &cx->ahead[i];
        if (!o && pass == 0 && gf__rctx_ahead(cx, urls, n)) break;
    }
    if (!o || !o->ok) {
        if (o) r = gf__seterr(err, GPUFEED_ERR_IO, "%s: cannot open: %s", urls[0], o->why);
        else r = gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "%s: out of memory", urls[0]);
        if (!cxp) gf__remote_release(cx);
        return r;
    }
    s = gf__rsrc_new(cx, o);
    if (s && identity && icap)
        gf__fmt(identity, icap, "%s size=%llu etag=%s last-modified=%s", urls[0], (unsigned long long)s->size, o->etag, o->etag[0] ? "" : o->lastmod);
    gf__robj_free(&cx->alloc, o);
    if (!cxp) gf__remote_release(cx); /* the source holds the context now */
    if (!s) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "%s: out of memory", urls[0]);
    src->read_at = gf__rsrc_read;
    src->will_read = gf__rsrc_will_read;
    src->why = gf__rsrc_why;
    src->close = gf__rsrc_close;
    src->ctx = s;
    src->size = s->size;
    return GPUFEED_OK;
}

/* ---- listing: ListObjectsV2, every page ---- */

/* every key of bucket under prefix that m takes, in out: 0, or -1 (why) */
static int gf__rlist(gf__rctx *cx, const char *bucket, const char *prefix, const gf__rmatch *m, gf__rkeys *out, char *why, size_t cap)
{
    char *token = NULL, *url = NULL, what[600];
    int32_t pages = 0;
    int rc = -1;
    gf__fmt(what, sizeof what, "bucket '%s', prefix '%.400s'", bucket, prefix);
    for (;;) {
        gf__rreq q;
        char *nt = NULL;
        size_t ul = strlen(prefix) * 3 + (token ? strlen(token) * 3 : 0) + strlen(bucket) + strlen(cx->cfg.region) +
                    (cx->cfg.endpoint ? strlen(cx->cfg.endpoint) : 0) + 160;
        gf__free(&cx->alloc, url);
        url = (char *)gf__alloc(&cx->alloc, ul);
        if (!url || gf__s3_list_url(cx->cfg.endpoint, cx->cfg.region, bucket, prefix, token, url, ul)) { gf__fmt(why, cap, "out of memory"); break; }
        memset(&q, 0, sizeof q);
        q.kind = GF__RQ_LIST;
        q.url = url;
        q.what = what;
        q.sign = 1;
        q.a = &cx->alloc;
        q.grow = 1;
        q.cap = (size_t)64 << 20;
        if (gf__rfetch(cx, &q, 1)) {
            gf__fmt(why, cap, "%s", q.why);
            gf__free(&cx->alloc, q.dst);
            break;
        }
        rc = gf__rlist_page(&cx->alloc, (const char *)q.dst, q.got, m, out, &nt, why, cap);
        gf__free(&cx->alloc, q.dst);
        if (rc == 0 && nt && token && strcmp(nt, token) == 0) {
            gf__fmt(why, cap, "a listing that does not advance: the same continuation token twice");
            rc = -1;
        }
        gf__free(&cx->alloc, token);
        token = nt;
        if (rc || !token) break;
        rc = -1;
        if (++pages >= 1000000) { gf__fmt(why, cap, "a listing of more than a million pages"); break; }
    }
    gf__free(&cx->alloc, token);
    gf__free(&cx->alloc, url);
    return rc;
}

static int gf__rcmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* HEAD of an object: 1 it exists, 0 not found (404), -1 another error (why) */
static int gf__rhead(gf__rctx *cx, const char *bucket, const char *key, char *why, size_t cap)
{
    gf__rreq q;
    char what[600], *url;
    size_t ul = strlen(key) * 3 + strlen(bucket) + strlen(cx->cfg.region) + (cx->cfg.endpoint ? strlen(cx->cfg.endpoint) : 0) + 96;
    int r;
    url = (char *)gf__alloc(&cx->alloc, ul);
    if (!url || gf__s3_url(cx->cfg.endpoint, cx->cfg.region, bucket, key, url, ul)) {
        gf__free(&cx->alloc, url);
        gf__fmt(why, cap, "out of memory");
        return -1;
    }
    gf__fmt(what, sizeof what, "bucket '%s', key '%.400s'", bucket, key);
    memset(&q, 0, sizeof q);
    q.kind = GF__RQ_HEAD;
    q.url = url;
    q.what = what;
    q.sign = 1;
    r = gf__rfetch(cx, &q, 1) == 0 ? 1 : q.status == 404 ? 0 : -1;
    if (r <= 0) gf__fmt(why, cap, "%s", q.why);
    gf__free(&cx->alloc, url);
    return r;
}

/* the keys an s3:// path names, sorted (see the section's comment); 0, or
   -1 with why. A key that is no object and no prefix: 0, none, and the
   HEAD's 404 in why. */
static int gf__s3_keys(gf__rctx *cx, const char *bucket, const char *key, gf__rkeys *out, size_t *base, char *why, size_t cap)
{
    gf__rmatch m;
    const char *meta = key + strcspn(key, "*?[");
    size_t kl = strlen(key);
    char *pre;
    int r;
    memset(&m, 0, sizeof m);
    if (*meta) { /* a glob: list from its literal start */
        m.glob = key;
        for (m.base = (size_t)(meta - key); m.base > 0 && key[m.base - 1] != '/'; m.base--) {}
        pre = gf__rstrdup(&cx->alloc, key);
        if (!pre) return -1;
        pre[meta - key] = 0;
    } else if (kl == 0 || key[kl - 1] == '/') {
        m.base = kl;
        pre = gf__rstrdup(&cx->alloc, key);
    } else {
        r = gf__rhead(cx, bucket, key, why, cap);
        for (*base = kl; *base > 0 && key[*base - 1] != '/'; (*base)--) {}
        if (r != 0) return r > 0 ? gf__rkeys_push(&cx->alloc, out, key) : -1;
        pre = (char *)gf__alloc(&cx->alloc, kl + 2); /* no such object: a prefix? */
        if (pre) {
            memcpy(pre, key, kl);
            pre[kl] = '/';
            pre[kl + 1] = 0;
        }
        m.base = kl + 1;
    }
    if (!pre) return -1;
    *base = m.base;
    r = gf__rlist(cx, bucket, pre, &m, out, why, cap);
    gf__free(&cx->alloc, pre);
    if (r == 0 && out->n > 1) qsort(out->v, (size_t)out->n, sizeof(char *), gf__rcmp_str);
    return r;
}

/* Expands a remote path (gf__expand_paths' branch): add(user, url) for
   each object, sorted by key; an error when it names none. */
static gpufeed_result gf__remote_expand(const char *path, gf__remote_add_fn add, void *user, gpufeed_error *err)
{
    gf__rctx *cx;
    gf__rkeys keys;
    gpufeed_result r;
    char bucket[256], *key, *url, why[GPUFEED_ERROR_MAX];
    size_t kl = strlen(path) + 1, base = 0, root;
    int32_t i;
    if (strncmp(path, "s3://", 5) != 0) { /* an http(s):// URL: one object */
        for (root = strlen(path); root > 0 && path[root - 1] != '/'; root--) {}
        return add(user, path, root) ? GPUFEED_OK : gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory");
    }
    r = gf__rctx_new(&cx, NULL, path, err);
    if (r) return r;
    memset(&keys, 0, sizeof keys);
    why[0] = 0;
    key = (char *)gf__alloc(&cx->alloc, kl);
    url = NULL;
    if (!key) r = gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    else if (gf__s3_split(path, bucket, sizeof bucket, key, kl)) r = gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "%s: not an s3://BUCKET/KEY path", path);
    else if (gf__s3_keys(cx, bucket, key, &keys, &base, why, sizeof why))
        r = gf__seterr(err, GPUFEED_ERR_IO, "%s: %s", path, why[0] ? why : "out of memory");
    else if (keys.n == 0 && why[0])
        r = gf__seterr(err, GPUFEED_ERR_IO, "%s: no such key (%s), and no *.parquet object below '%s/'", path, why, key);
    else if (keys.n == 0)
        r = gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "%s: no object %s in bucket '%s'", path,
                       strcspn(key, "*?[") < strlen(key) ? "matches" : "*.parquet below the prefix", bucket);
    for (i = 0; !r && i < keys.n; i++) {
        size_t ul = strlen(bucket) + strlen(keys.v[i]) + 8;
        gf__free(&cx->alloc, url);
        url = (char *)gf__alloc(&cx->alloc, ul);
        if (url) gf__fmt(url, ul, "s3://%s/%s", bucket, keys.v[i]);
        if (!url || !add(user, url, strlen(bucket) + 6 + base)) r = gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory");
    }
    gf__rkeys_free(&cx->alloc, &keys);
    gf__free(&cx->alloc, key);
    gf__free(&cx->alloc, url);
    gf__remote_release(cx);
    return r;
}

static void gf__remote_stats(gf__rctx *cx, gpufeed_remote_stats *st)
{
    memset(st, 0, sizeof *st);
    if (!cx) return;
    pthread_mutex_lock(&cx->mu);
    *st = cx->st;
    pthread_mutex_unlock(&cx->mu);
}

#else /* !GPUFEED_CURL: remote paths are an error that names the macro */

typedef struct gf__rctx gf__rctx;
static gpufeed_result gf__remote_off(const char *p, gpufeed_error *err)
{
    return gf__seterr(err, GPUFEED_ERR_UNSUPPORTED, "%s: s3:// and http(s):// paths need GPUFEED_CURL (libcurl, loaded at run time): "
                      "compile with -DGPUFEED_CURL", p);
}
static gpufeed_result gf__remote_expand(const char *path, gf__remote_add_fn add, void *user, gpufeed_error *err)
{
    (void)add;
    (void)user;
    return gf__remote_off(path, err);
}
static gpufeed_result gf__remote_open(gf__rctx **cxp, const gpufeed_allocator *a, const char *const *urls, int32_t n,
                                      gpufeed_source *src, char *identity, size_t icap, gpufeed_error *err)
{
    (void)cxp;
    (void)a;
    (void)n;
    (void)identity;
    (void)icap;
    memset(src, 0, sizeof *src);
    return gf__remote_off(urls[0], err);
}
static void gf__remote_release(gf__rctx *cx) { (void)cx; }
static void gf__remote_stats(gf__rctx *cx, gpufeed_remote_stats *st)
{
    (void)cx;
    memset(st, 0, sizeof *st);
}
#endif /* GPUFEED_CURL */

/* >>thrift --------------------------------------------------------------- */
/* Thrift Compact Protocol, decode only. Every read is bounds-checked; the
   first error sticks (later reads return zeros) and carries the byte offset
   in the file. Lists are bounded by the bytes left (each element takes at
   least one byte) and by GPUFEED_MAX_LIST_LENGTH; nesting by
   GPUFEED_MAX_THRIFT_DEPTH. Unknown fields of every type are skipped, and
   so is an optional field whose type is not the one its struct declares
   (gf__tc_expect); a required one of another type is an error. */

enum {
    GF__T_STOP = 0, GF__T_TRUE = 1, GF__T_FALSE = 2, GF__T_I8 = 3,
    GF__T_I16 = 4, GF__T_I32 = 5, GF__T_I64 = 6, GF__T_DOUBLE = 7,
    GF__T_BINARY = 8, GF__T_LIST = 9, GF__T_SET = 10, GF__T_MAP = 11,
    GF__T_STRUCT = 12
};

typedef struct gf__tc {
    const uint8_t *p, *end, *base;
    uint64_t base_off;                 /* file offset of base */
    int depth;
    gpufeed_result err;
    char msg[GPUFEED_ERROR_MAX];
    const char *what;                  /* struct being decoded */
    int trunc;                         /* the error was running out of input */
} gf__tc;

static void gf__tc_init(gf__tc *t, const uint8_t *p, size_t n, uint64_t off, const char *what)
{
    t->p = p;
    t->end = p + n;
    t->base = p;
    t->base_off = off;
    t->depth = 0;
    t->err = GPUFEED_OK;
    t->msg[0] = 0;
    t->what = what;
    t->trunc = 0;
}

static const char *gf__tc_type_name(int t)
{
    static const char *const names[] = { "stop", "bool", "bool", "i8", "i16",
        "i32", "i64", "double", "binary", "list", "set", "map", "struct" };
    return (t >= 0 && t <= 12) ? names[t] : "invalid";
}

static void gf__tc_fail(gf__tc *t, gpufeed_result code, const char *fmt, ...) GF__PRINTF(3, 4);
static void gf__tc_fail(gf__tc *t, gpufeed_result code, const char *fmt, ...)
{
    char tmp[GPUFEED_ERROR_MAX];
    va_list ap;
    if (t->err) return;
    va_start(ap, fmt);
    gf__vfmt(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    t->err = code;
    gf__fmt(t->msg, sizeof t->msg, "thrift %s: %s (byte offset %llu)", t->what, tmp,
            (unsigned long long)(t->base_off + (uint64_t)(t->p - t->base)));
    t->p = t->end; /* stop all further reading */
}

static uint64_t gf__tc_uvar(gf__tc *t)
{
    uint64_t v = 0;
    int shift = 0;
    for (;;) {
        uint8_t b;
        if (t->p >= t->end) {
            gf__tc_fail(t, GPUFEED_ERR_THRIFT, "truncated varint");
            t->trunc = 1;
            return 0;
        }
        b = *t->p++;
        if (shift == 63 && (b & 0x7E)) { gf__tc_fail(t, GPUFEED_ERR_THRIFT, "varint overflows 64 bits"); return 0; }
        v |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) return v;
        shift += 7;
        if (shift > 63) { gf__tc_fail(t, GPUFEED_ERR_THRIFT, "overlong varint"); return 0; }
    }
}
static int64_t gf__tc_zz(gf__tc *t)
{
    uint64_t u = gf__tc_uvar(t);
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

/* Reads a field header; returns its type (0 = STOP, -1 = error). */
static int gf__tc_field(gf__tc *t, int *id, int *last)
{
    uint8_t b;
    int type;
    if (t->err) return -1;
    if (t->p >= t->end) {
        gf__tc_fail(t, GPUFEED_ERR_THRIFT, "truncated struct (no STOP)");
        t->trunc = 1;
        return -1;
    }
    b = *t->p++;
    if (b == 0) return 0;
    type = b & 0x0F;
    if (b >> 4) {
        if (*last + (b >> 4) > 32767) { gf__tc_fail(t, GPUFEED_ERR_THRIFT, "field id beyond 32767"); return -1; }
        *id = *last + (b >> 4);
    }
    else {
        int64_t v = gf__tc_zz(t);
        if (t->err) return -1;
        if (v < -32768 || v > 32767) { gf__tc_fail(t, GPUFEED_ERR_THRIFT, "field id %lld out of range", (long long)v); return -1; }
        *id = (int)v;
    }
    if (type == 0 || type > 12) { gf__tc_fail(t, GPUFEED_ERR_THRIFT, "invalid field type %d", type); return -1; }
    *last = *id;
    return type;
}

static void gf__tc_need(gf__tc *t, uint64_t n)
{
    if (!t->err && n > (uint64_t)(t->end - t->p)) { gf__tc_fail(t, GPUFEED_ERR_THRIFT, "length %llu runs past the end", (unsigned long long)n); t->trunc = 1; }
}

/* list/set header; *n bounded by the bytes left */
static void gf__tc_list_hdr(gf__tc *t, int *etype, uint32_t *n)
{
    uint8_t b;
    uint64_t cnt;
    *n = 0; *etype = 0;
    if (t->err) return;
    if (t->p >= t->end) {
        gf__tc_fail(t, GPUFEED_ERR_THRIFT, "truncated list header");
        t->trunc = 1;
        return;
    }
    b = *t->p++;
    *etype = b & 0x0F;
    cnt = b >> 4;
    if (cnt == 15) cnt = gf__tc_uvar(t);
    if (t->err) return;

    /* an empty list's element type is irrelevant (fastparquet writes 0) */
    if (cnt > 0 && (*etype == 0 || *etype > 12)) { gf__tc_fail(t, GPUFEED_ERR_THRIFT, "invalid list element type %d", *etype); return; }
    if (cnt > GPUFEED_MAX_LIST_LENGTH) {
        gf__tc_fail(t, GPUFEED_ERR_LIMIT, "list of %llu elements exceeds GPUFEED_MAX_LIST_LENGTH", (unsigned long long)cnt);
        return;
    }
    if (cnt > (uint64_t)(t->end - t->p)) {
        gf__tc_fail(t, GPUFEED_ERR_THRIFT, "list of %llu elements cannot fit in the %llu bytes left", (unsigned long long)cnt,
                    (unsigned long long)(t->end - t->p));
        t->trunc = 1;
        return;
    }
    *n = (uint32_t)cnt;
}

static void gf__tc_skip(gf__tc *t, int type, int in_container);

static void gf__tc_skip_struct(gf__tc *t)
{
    int id = 0, last = 0, ft;
    if (++t->depth > GPUFEED_MAX_THRIFT_DEPTH) { gf__tc_fail(t, GPUFEED_ERR_LIMIT, "nesting deeper than GPUFEED_MAX_THRIFT_DEPTH"); return; }
    while ((ft = gf__tc_field(t, &id, &last)) > 0) gf__tc_skip(t, ft, 0);
    t->depth--;
}

static void gf__tc_skip(gf__tc *t, int type, int in_container)
{
    if (t->err) return;
    switch (type) {
    case GF__T_TRUE: case GF__T_FALSE:
        if (in_container) { gf__tc_need(t, 1); if (!t->err) t->p++; }
        break;
    case GF__T_I8:
        gf__tc_need(t, 1);
        if (!t->err) t->p++;
        break;
    case GF__T_I16: case GF__T_I32: case GF__T_I64: (void)gf__tc_uvar(t); break;
    case GF__T_DOUBLE:
        gf__tc_need(t, 8);
        if (!t->err) t->p += 8;
        break;
    case GF__T_BINARY: {
        uint64_t n = gf__tc_uvar(t);
        gf__tc_need(t, n);
        if (!t->err) t->p += n;
        break;
    }
    case GF__T_LIST: case GF__T_SET: {
        int et; uint32_t n, i;
        if (++t->depth > GPUFEED_MAX_THRIFT_DEPTH) { gf__tc_fail(t, GPUFEED_ERR_LIMIT, "nesting deeper than GPUFEED_MAX_THRIFT_DEPTH"); return; }
        gf__tc_list_hdr(t, &et, &n);
        for (i = 0; i < n && !t->err; i++) gf__tc_skip(t, et, 1);
        t->depth--;
        break;
    }
    case GF__T_MAP: {
        uint64_t n, i;
        int kt, vt;
        if (++t->depth > GPUFEED_MAX_THRIFT_DEPTH) { gf__tc_fail(t, GPUFEED_ERR_LIMIT, "nesting deeper than GPUFEED_MAX_THRIFT_DEPTH"); return; }
        n = gf__tc_uvar(t);
        if (t->err) return;
        if (n) {
            if (n > (uint64_t)(t->end - t->p) / 2) {
                gf__tc_fail(t, GPUFEED_ERR_THRIFT, "map of %llu entries cannot fit", (unsigned long long)n);
                t->trunc = 1;
                return;
            }
            if (n > GPUFEED_MAX_LIST_LENGTH) { gf__tc_fail(t, GPUFEED_ERR_LIMIT, "map exceeds GPUFEED_MAX_LIST_LENGTH"); return; }
            gf__tc_need(t, 1);
            if (t->err) return;
            kt = *t->p >> 4;
            vt = *t->p & 0x0F;
            t->p++;
            if (kt == 0 || kt > 12 || vt == 0 || vt > 12) { gf__tc_fail(t, GPUFEED_ERR_THRIFT, "invalid map types %d/%d", kt, vt); return; }
            for (i = 0; i < n && !t->err; i++) { gf__tc_skip(t, kt, 1); gf__tc_skip(t, vt, 1); }
        }
        t->depth--;
        break;
    }
    case GF__T_STRUCT: gf__tc_skip_struct(t); break;
    default: gf__tc_fail(t, GPUFEED_ERR_THRIFT, "cannot skip type %d", type);
    }
}

static void gf__tc_wrong(gf__tc *t, int id, int type, const char *want)
{
    gf__tc_fail(t, GPUFEED_ERR_THRIFT, "field %d has type %s, expected %s", id, gf__tc_type_name(type), want);
}

static int64_t gf__tc_int(gf__tc *t, int id, int type, int64_t lo, int64_t hi)
{
    int64_t v;
    if (t->err) return 0;
    if (type == GF__T_I8) {
        gf__tc_need(t, 1);
        if (t->err) return 0;
        v = (int8_t)*t->p++;
    } else if (type == GF__T_I16 || type == GF__T_I32 || type == GF__T_I64) {
        v = gf__tc_zz(t);
    } else { gf__tc_wrong(t, id, type, "an integer"); return 0; }
    if (!t->err && (v < lo || v > hi)) { gf__tc_fail(t, GPUFEED_ERR_THRIFT, "field %d value %lld out of range", id, (long long)v); return 0; }
    return v;
}
#define GF__I32(t, id, ty) ((int32_t)gf__tc_int((t), (id), (ty), INT32_MIN, INT32_MAX))
#define GF__I64(t, id, ty) (gf__tc_int((t), (id), (ty), INT64_MIN, INT64_MAX))

static int gf__tc_bool(gf__tc *t, int id, int type)
{
    if (type == GF__T_TRUE) return 1;
    if (type == GF__T_FALSE) return 0;
    gf__tc_wrong(t, id, type, "bool");
    return 0;
}

static void gf__tc_bin(gf__tc *t, int id, int type, const uint8_t **ptr, uint32_t *len)
{
    uint64_t n;
    *ptr = NULL; *len = 0;
    if (t->err) return;
    if (type != GF__T_BINARY) { gf__tc_wrong(t, id, type, "binary"); return; }
    n = gf__tc_uvar(t);
    gf__tc_need(t, n);
    if (t->err) return;
    if (n > UINT32_MAX) { gf__tc_fail(t, GPUFEED_ERR_LIMIT, "binary of %llu bytes", (unsigned long long)n); return; }
    *ptr = t->p;
    *len = (uint32_t)n;
    t->p += n;
}

static int gf__tc_enter(gf__tc *t, int id, int type)
{
    if (t->err) return 0;
    if (type != GF__T_STRUCT) { gf__tc_wrong(t, id, type, "struct"); return 0; }
    if (++t->depth > GPUFEED_MAX_THRIFT_DEPTH) { gf__tc_fail(t, GPUFEED_ERR_LIMIT, "nesting deeper than GPUFEED_MAX_THRIFT_DEPTH"); return 0; }
    return 1;
}

/* What a reader expects of a field: its kind, a list's element kind (0:
   any) and whether the field is required. A field whose wire type is not
   the expected one is skipped when it is optional, as Thrift's generated
   readers do (an older writer used ColumnMetaData id 15 for a list); a
   required one is an error naming the field and both types. */
enum { GF__K_INT = 1, GF__K_BOOL, GF__K_BIN, GF__K_DOUBLE, GF__K_STRUCT, GF__K_LIST };
typedef struct gf__tfield {
    int16_t id;
    uint8_t kind, elem, required;
} gf__tfield;
#define GF__NSPEC(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int gf__tc_kind_ok(int type, int kind)
{
    switch (kind) {
    case GF__K_INT: return type == GF__T_I8 || type == GF__T_I16 || type == GF__T_I32 || type == GF__T_I64;
    case GF__K_BOOL: return type == GF__T_TRUE || type == GF__T_FALSE;
    case GF__K_BIN: return type == GF__T_BINARY;
    case GF__K_DOUBLE: return type == GF__T_DOUBLE;
    case GF__K_STRUCT: return type == GF__T_STRUCT;
    case GF__K_LIST: return type == GF__T_LIST || type == GF__T_SET;
    }
    return 0;
}

/* 1: read the field (its type fits, or it is required and the reader will
   report the mismatch); 0: it was skipped. Fields not in spec: 1. */
static int gf__tc_expect(gf__tc *t, const gf__tfield *spec, int n, int id, int type)
{
    int i, fits;
    if (t->err) return 1;
    for (i = 0; i < n && spec[i].id != id; i++) {}
    if (i == n) return 1;
    fits = gf__tc_kind_ok(type, spec[i].kind);
    if (fits && spec[i].kind == GF__K_LIST && spec[i].elem && t->p < t->end) {
        int et = *t->p & 0x0F; /* peek at the list header: count > 0 and its element type */
        if ((*t->p >> 4) != 0 && !gf__tc_kind_ok(et, spec[i].elem)) fits = 0;
    }
    if (fits || spec[i].required) return 1;
    gf__tc_skip(t, type, 0);
    return 0;
}

static int gf__tc_list(gf__tc *t, int id, int type, int want_elem, uint32_t *n)
{
    int et = 0;
    *n = 0;
    if (t->err) return 0;
    if (type != GF__T_LIST && type != GF__T_SET) { gf__tc_wrong(t, id, type, "list"); return 0; }
    gf__tc_list_hdr(t, &et, n);
    if (t->err) return 0;
    if (*n == 0) return et; /* element type of an empty list is irrelevant */
    if (want_elem == GF__T_I32 ? (et != GF__T_I32 && et != GF__T_I16 && et != GF__T_I8 && et != GF__T_I64) : et != want_elem) {
        gf__tc_fail(t, GPUFEED_ERR_THRIFT, "field %d is a list of %s, expected %s", id, gf__tc_type_name(et), gf__tc_type_name(want_elem));
        *n = 0;
    }
    return et;
}

/* >>metadata ------------------------------------------------------------- */

struct gpufeed_file {
    gpufeed_allocator alloc;           /* copy of the desc's (may be empty) */
    gpufeed_source src;
    gf__memsrc mem;
#ifndef GPUFEED_NO_STDIO
    gf__fdsrc fd;
    int fd_open;
#endif
    const uint8_t *map;                /* a mapped local file: the whole file */
    uint64_t map_len;
    uint64_t map_page;                 /* the system's page size */
    char *name;
    uint64_t size;
    uint64_t data_end;                 /* first byte of the footer */
    uint32_t flags;
    gf__arena arena;
    gpufeed_metadata md;
    uint8_t *footer;
    uint32_t footer_len;
    uint64_t *chunk_limit;             /* [rg * ncols + col]: where the next chunk starts */
    uint64_t keep_to;                  /* a loader keeps the mapped bytes below this (GPUFEED_KEEP_BYTES) */
};

/* one SchemaElement as decoded, before the tree is built */
typedef struct gf__se {
    int32_t type, type_length, repetition, num_children, converted;
    int32_t scale, precision, has_field_id, field_id;
    const uint8_t *name;
    uint32_t name_len;
    int has_name;
    int has_type, has_rep, has_children, has_scale, has_precision;
    gpufeed_logical_type lt;           /* from LogicalType, NONE if absent */
    int lt_present;
    int32_t lt_scale, lt_precision, lt_utc, lt_bits, lt_signed;
    gpufeed_time_unit lt_unit;
} gf__se;

static void gf__parse_time_unit(gf__tc *t, gpufeed_time_unit *u)
{
    int id = 0, last = 0, ft;
    while ((ft = gf__tc_field(t, &id, &last)) > 0) {
        if (ft == GF__T_STRUCT && id >= 1 && id <= 3)
            *u = id == 1 ? GPUFEED_UNIT_MILLIS : id == 2 ? GPUFEED_UNIT_MICROS : GPUFEED_UNIT_NANOS;
        gf__tc_skip(t, ft, 0);
    }
}

static void gf__parse_logical(gf__tc *t, gf__se *e)
{
    int id = 0, last = 0, ft;
    e->lt_present = 1;
    e->lt = GPUFEED_LT_NONE;
    while ((ft = gf__tc_field(t, &id, &last)) > 0) {
        int iid = 0, ilast = 0, ift;
        if (ft != GF__T_STRUCT) {
            gf__tc_skip(t, ft, 0);
            e->lt = GPUFEED_LT_OTHER;
            continue;
        }
        switch (id) {
        case 1: e->lt = GPUFEED_LT_STRING; break;
        case 2: e->lt = GPUFEED_LT_MAP; break;
        case 3: e->lt = GPUFEED_LT_LIST; break;
        case 4: e->lt = GPUFEED_LT_ENUM; break;
        case 5: e->lt = GPUFEED_LT_DECIMAL; break;
        case 6: e->lt = GPUFEED_LT_DATE; break;
        case 7: e->lt = GPUFEED_LT_TIME; break;
        case 8: e->lt = GPUFEED_LT_TIMESTAMP; break;
        case 10: e->lt = GPUFEED_LT_INTEGER; break;
        case 11: e->lt = GPUFEED_LT_NULL; break;
        case 12: e->lt = GPUFEED_LT_JSON; break;
        case 13: e->lt = GPUFEED_LT_BSON; break;
        case 14: e->lt = GPUFEED_LT_UUID; break;
        case 15: e->lt = GPUFEED_LT_FLOAT16; break;
        case 16: e->lt = GPUFEED_LT_VARIANT; break;
        case 17: e->lt = GPUFEED_LT_GEOMETRY; break;
        case 18: e->lt = GPUFEED_LT_GEOGRAPHY; break;
        default:
            e->lt = GPUFEED_LT_OTHER;
            gf__tc_skip(t, ft, 0);
            continue;
        }
        if (!gf__tc_enter(t, id, ft)) return;
        while ((ift = gf__tc_field(t, &iid, &ilast)) > 0) {
            if (e->lt == GPUFEED_LT_DECIMAL && iid == 1) e->lt_scale = GF__I32(t, iid, ift);
            else if (e->lt == GPUFEED_LT_DECIMAL && iid == 2) e->lt_precision = GF__I32(t, iid, ift);
            else if ((e->lt == GPUFEED_LT_TIME || e->lt == GPUFEED_LT_TIMESTAMP) && iid == 1) e->lt_utc = gf__tc_bool(t, iid, ift);
            else if ((e->lt == GPUFEED_LT_TIME || e->lt == GPUFEED_LT_TIMESTAMP) && iid == 2) {
                if (gf__tc_enter(t, iid, ift)) { gf__parse_time_unit(t, &e->lt_unit); t->depth--; }
            }
            else if (e->lt == GPUFEED_LT_INTEGER && iid == 1) e->lt_bits = (int32_t)gf__tc_int(t, iid, ift, -128, 127);
            else if (e->lt == GPUFEED_LT_INTEGER && iid == 2) e->lt_signed = gf__tc_bool(t, iid, ift);
            else gf__tc_skip(t, ift, 0);
        }
        t->depth--;
    }
}

static const gf__tfield gf__spec_schema_element[] = {
    { 1, GF__K_INT, 0, 0 }, { 2, GF__K_INT, 0, 0 }, { 3, GF__K_INT, 0, 0 }, { 4, GF__K_BIN, 0, 1 },
    { 5, GF__K_INT, 0, 0 }, { 6, GF__K_INT, 0, 0 }, { 7, GF__K_INT, 0, 0 }, { 8, GF__K_INT, 0, 0 },
    { 9, GF__K_INT, 0, 0 }, { 10, GF__K_STRUCT, 0, 0 }
};

static void gf__parse_schema_element(gf__tc *t, gf__se *e)
{
    int id = 0, last = 0, ft;
    memset(e, 0, sizeof *e);
    e->type = -1;
    e->repetition = -1;
    e->num_children = 0;
    e->converted = -1;
    while ((ft = gf__tc_field(t, &id, &last)) > 0) {
        if (!gf__tc_expect(t, gf__spec_schema_element, GF__NSPEC(gf__spec_schema_element), id, ft)) continue;
        switch (id) {
        case 1:
            e->type = GF__I32(t, id, ft);
            e->has_type = 1;
            break;
        case 2: e->type_length = GF__I32(t, id, ft); break;
        case 3:
            e->repetition = GF__I32(t, id, ft);
            e->has_rep = 1;
            break;
        case 4:
            gf__tc_bin(t, id, ft, &e->name, &e->name_len);
            e->has_name = 1;
            break;
        case 5:
            e->num_children = GF__I32(t, id, ft);
            e->has_children = 1;
            break;
        case 6: e->converted = GF__I32(t, id, ft); break;
        case 7:
            e->scale = GF__I32(t, id, ft);
            e->has_scale = 1;
            break;
        case 8:
            e->precision = GF__I32(t, id, ft);
            e->has_precision = 1;
            break;
        case 9:
            e->field_id = GF__I32(t, id, ft);
            e->has_field_id = 1;
            break;
        case 10:
            if (gf__tc_enter(t, id, ft)) { gf__parse_logical(t, e); t->depth--; }
            break;
        default: gf__tc_skip(t, ft, 0);
        }
    }
    if (!t->err && !e->has_name) gf__tc_fail(t, GPUFEED_ERR_THRIFT, "SchemaElement without a name");
}

static const gf__tfield gf__spec_stats[] = {
    { 1, GF__K_BIN, 0, 0 }, { 2, GF__K_BIN, 0, 0 }, { 3, GF__K_INT, 0, 0 }, { 4, GF__K_INT, 0, 0 },
    { 5, GF__K_BIN, 0, 0 }, { 6, GF__K_BIN, 0, 0 }, { 7, GF__K_BOOL, 0, 0 }, { 8, GF__K_BOOL, 0, 0 }
};

static void gf__parse_stats(gf__tc *t, gf__arena *ar, gpufeed_statistics *s)
{
    int id = 0, last = 0, ft;
    const uint8_t *p; uint32_t n;
    s->is_min_exact = s->is_max_exact = -1;
    while ((ft = gf__tc_field(t, &id, &last)) > 0) {
        if (!gf__tc_expect(t, gf__spec_stats, GF__NSPEC(gf__spec_stats), id, ft)) continue;
        switch (id) {
        case 1:
            gf__tc_bin(t, id, ft, &p, &n);
            s->max_legacy = (const uint8_t *)gf__arena_str(ar, p, n);
            s->max_legacy_len = n;
            s->has_max_legacy = 1;
            break;
        case 2:
            gf__tc_bin(t, id, ft, &p, &n);
            s->min_legacy = (const uint8_t *)gf__arena_str(ar, p, n);
            s->min_legacy_len = n;
            s->has_min_legacy = 1;
            break;
        case 3:
            s->null_count = GF__I64(t, id, ft);
            s->has_null_count = 1;
            break;
        case 4:
            s->distinct_count = GF__I64(t, id, ft);
            s->has_distinct_count = 1;
            break;
        case 5:
            gf__tc_bin(t, id, ft, &p, &n);
            s->max_value = (const uint8_t *)gf__arena_str(ar, p, n);
            s->max_value_len = n;
            s->has_max_value = 1;
            break;
        case 6:
            gf__tc_bin(t, id, ft, &p, &n);
            s->min_value = (const uint8_t *)gf__arena_str(ar, p, n);
            s->min_value_len = n;
            s->has_min_value = 1;
            break;
        case 7: s->is_max_exact = gf__tc_bool(t, id, ft); break;
        case 8: s->is_min_exact = gf__tc_bool(t, id, ft); break;
        default: gf__tc_skip(t, ft, 0);
        }
        if (!t->err && ((id == 1 && !s->max_legacy) || (id == 2 && !s->min_legacy) ||
                        (id == 5 && !s->max_value) || (id == 6 && !s->min_value)))
            gf__tc_fail(t, GPUFEED_ERR_OUT_OF_MEMORY, "out of memory for statistics");
    }
}

static const gf__tfield gf__spec_column_meta[] = {
    { 1, GF__K_INT, 0, 1 }, { 2, GF__K_LIST, GF__K_INT, 1 }, { 3, GF__K_LIST, GF__K_BIN, 1 },
    { 4, GF__K_INT, 0, 1 }, { 5, GF__K_INT, 0, 1 }, { 6, GF__K_INT, 0, 1 }, { 7, GF__K_INT, 0, 1 },
    { 9, GF__K_INT, 0, 1 }, { 10, GF__K_INT, 0, 0 }, { 11, GF__K_INT, 0, 0 }, { 12, GF__K_STRUCT, 0, 0 },
    { 14, GF__K_INT, 0, 0 }, { 15, GF__K_INT, 0, 0 }
};

static void gf__parse_column_meta(gf__tc *t, gf__arena *ar, gpufeed_chunk_info *c)
{
    int id = 0, last = 0, ft;
    uint32_t n, i;
    int et;
    unsigned seen = 0;
    while ((ft = gf__tc_field(t, &id, &last)) > 0) {
        if (!gf__tc_expect(t, gf__spec_column_meta, GF__NSPEC(gf__spec_column_meta), id, ft)) continue;
        switch (id) {
        case 1:
            c->physical = (gpufeed_physical_type)GF__I32(t, id, ft);
            seen |= 1;
            break;
        case 2:
            et = gf__tc_list(t, id, ft, GF__T_I32, &n);
            for (i = 0; i < n && !t->err; i++) {
                int64_t e = gf__tc_int(t, id, et, INT32_MIN, INT32_MAX);
                if (e >= 0 && e < 32) c->encodings |= 1u << e;
            }
            seen |= 2;
            break;
        case 3: {
            const uint8_t *p; uint32_t len;
            et = gf__tc_list(t, id, ft, GF__T_BINARY, &n);
            for (i = 0; i < n && !t->err; i++) gf__tc_bin(t, id, et, &p, &len);
            break;
        }
        case 4:
            c->codec = (gpufeed_codec)GF__I32(t, id, ft);
            seen |= 4;
            break;
        case 5:
            c->num_values = GF__I64(t, id, ft);
            seen |= 8;
            break;
        case 6: c->total_uncompressed_size = GF__I64(t, id, ft); break;
        case 7:
            c->total_compressed_size = GF__I64(t, id, ft);
            seen |= 16;
            break;
        case 9:
            c->data_page_offset = GF__I64(t, id, ft);
            seen |= 32;
            break;
        case 10: c->index_page_offset = GF__I64(t, id, ft); break;
        case 11: c->dictionary_page_offset = GF__I64(t, id, ft); break;
        case 12:
            if (gf__tc_enter(t, id, ft)) {
                c->has_statistics = 1;
                gf__parse_stats(t, ar, &c->statistics);
                t->depth--;
            }
            break;
        case 14: c->bloom_filter_offset = GF__I64(t, id, ft); break;
        case 15: c->bloom_filter_length = GF__I32(t, id, ft); break;
        default: gf__tc_skip(t, ft, 0);
        }
    }
    if (!t->err && (seen & 63) != 63)
        gf__tc_fail(t, GPUFEED_ERR_THRIFT,
                    "ColumnMetaData misses a required field (type, encodings, codec, num_values, total_compressed_size or data_page_offset)");
    c->has_metadata = 1;
}

static const gf__tfield gf__spec_column_chunk[] = {
    { 1, GF__K_BIN, 0, 0 }, { 2, GF__K_INT, 0, 1 }, { 3, GF__K_STRUCT, 0, 0 }, { 4, GF__K_INT, 0, 0 },
    { 5, GF__K_INT, 0, 0 }, { 6, GF__K_INT, 0, 0 }, { 7, GF__K_INT, 0, 0 }, { 8, GF__K_STRUCT, 0, 0 },
    { 9, GF__K_BIN, 0, 0 }
};

static void gf__parse_column_chunk(gf__tc *t, gf__arena *ar, gpufeed_chunk_info *c)
{
    int id = 0, last = 0, ft;
    const uint8_t *p; uint32_t n;
    c->dictionary_page_offset = -1; c->index_page_offset = -1;
    c->offset_index_offset = -1;
    c->column_index_offset = -1;
    c->bloom_filter_offset = -1;
    while ((ft = gf__tc_field(t, &id, &last)) > 0) {
        if (!gf__tc_expect(t, gf__spec_column_chunk, GF__NSPEC(gf__spec_column_chunk), id, ft)) continue;
        switch (id) {
        case 1:
            gf__tc_bin(t, id, ft, &p, &n);
            if (!t->err && !(c->file_path = gf__arena_str(ar, p, n))) gf__tc_fail(t, GPUFEED_ERR_OUT_OF_MEMORY, "out of memory");
            break;
        case 2: c->file_offset = GF__I64(t, id, ft); break;
        case 3:
            if (gf__tc_enter(t, id, ft)) {
                t->what = "ColumnMetaData";
                gf__parse_column_meta(t, ar, c);
                t->what = "ColumnChunk";
                t->depth--;
            }
            break;
        case 4: c->offset_index_offset = GF__I64(t, id, ft); break;
        case 5: c->offset_index_length = GF__I32(t, id, ft); break;
        case 6: c->column_index_offset = GF__I64(t, id, ft); break;
        case 7: c->column_index_length = GF__I32(t, id, ft); break;
        case 8: case 9:
            c->encrypted = 1;
            gf__tc_skip(t, ft, 0);
            break;
        default: gf__tc_skip(t, ft, 0);
        }
    }
}

static const gf__tfield gf__spec_row_group[] = {
    { 1, GF__K_LIST, GF__K_STRUCT, 1 }, { 2, GF__K_INT, 0, 1 }, { 3, GF__K_INT, 0, 1 },
    { 5, GF__K_INT, 0, 0 }, { 6, GF__K_INT, 0, 0 }, { 7, GF__K_INT, 0, 0 }
};

static void gf__parse_row_group(gf__tc *t, gf__arena *ar, gpufeed_row_group_info *rg, int32_t *ncols, int64_t expect)
{
    int id = 0, last = 0, ft;
    uint32_t n, i;
    int seen = 0;
    rg->total_compressed_size = -1;
    rg->file_offset = -1;
    rg->ordinal = -1;
    *ncols = -1;
    while ((ft = gf__tc_field(t, &id, &last)) > 0) {
        if (!gf__tc_expect(t, gf__spec_row_group, GF__NSPEC(gf__spec_row_group), id, ft)) continue;
        switch (id) {
        case 1: {
            gpufeed_chunk_info *cs;
            (void)gf__tc_list(t, id, ft, GF__T_STRUCT, &n);
            if (t->err) break;

            /* check the count before allocating for it */
            if (expect >= 0 && (int64_t)n != expect) {
                gf__tc_fail(t, GPUFEED_ERR_SCHEMA, "row group has %u column chunks but the schema has %lld leaf columns", n, (long long)expect);
                break;
            }
            if (expect < 0 && n > (uint32_t)((t->end - t->p) / 3)) {
                gf__tc_fail(t, GPUFEED_ERR_THRIFT, "%u column chunks cannot fit in the %lld bytes left", n, (long long)(t->end - t->p));
                break;
            }
            cs = (gpufeed_chunk_info *)gf__arena_get(ar, (size_t)(n ? n : 1) * sizeof *cs);
            if (!cs) { gf__tc_fail(t, GPUFEED_ERR_OUT_OF_MEMORY, "out of memory for %u column chunks", n); break; }
            for (i = 0; i < n && !t->err; i++) {
                cs[i].column = (int32_t)i;
                if (++t->depth > GPUFEED_MAX_THRIFT_DEPTH) { gf__tc_fail(t, GPUFEED_ERR_LIMIT, "nesting too deep"); break; }
                t->what = "ColumnChunk";
                gf__parse_column_chunk(t, ar, &cs[i]);
                t->what = "RowGroup";
                t->depth--;
            }
            rg->chunks = cs; *ncols = (int32_t)n;
            break;
        }
        case 2: rg->total_byte_size = GF__I64(t, id, ft); break;
        case 3:
            rg->num_rows = GF__I64(t, id, ft);
            seen = 1;
            break;
        case 5: rg->file_offset = GF__I64(t, id, ft); break;
        case 6: rg->total_compressed_size = GF__I64(t, id, ft); break;
        case 7: rg->ordinal = (int32_t)gf__tc_int(t, id, ft, -32768, 32767); break;
        default: gf__tc_skip(t, ft, 0);
        }
    }
    if (!t->err && (!seen || *ncols < 0)) gf__tc_fail(t, GPUFEED_ERR_THRIFT, "RowGroup misses columns or num_rows");
    if (!t->err && rg->num_rows < 0) gf__tc_fail(t, GPUFEED_ERR_THRIFT, "RowGroup has negative num_rows");
}

/* decoded FileMetaData before validation */
typedef struct gf__fmd {
    gf__se *se; uint32_t nse;
    gpufeed_row_group_info *rgs;
    int32_t *rg_ncols;
    uint32_t nrg;
    gpufeed_key_value *kv; uint32_t nkv;
    int has_schema, has_rg, has_rows, encrypted_columns;
    int64_t nleaves;                   /* schema elements with a type and no children */
} gf__fmd;

static const gf__tfield gf__spec_file_metadata[] = {
    { 1, GF__K_INT, 0, 1 }, { 2, GF__K_LIST, GF__K_STRUCT, 1 }, { 3, GF__K_INT, 0, 1 },
    { 4, GF__K_LIST, GF__K_STRUCT, 1 }, { 5, GF__K_LIST, GF__K_STRUCT, 0 }, { 6, GF__K_BIN, 0, 0 },
    { 8, GF__K_STRUCT, 0, 0 }
};
static const gf__tfield gf__spec_key_value[] = { { 1, GF__K_BIN, 0, 1 }, { 2, GF__K_BIN, 0, 0 } };

static void gf__parse_file_metadata(gf__tc *t, gf__arena *ar, gpufeed_metadata *md, gf__fmd *d)
{
    int id = 0, last = 0, ft;
    uint32_t n, i;
    const uint8_t *p; uint32_t len;
    while ((ft = gf__tc_field(t, &id, &last)) > 0) {
        if (!gf__tc_expect(t, gf__spec_file_metadata, GF__NSPEC(gf__spec_file_metadata), id, ft)) continue;
        switch (id) {
        case 1: md->version = GF__I32(t, id, ft); break;
        case 2:
            (void)gf__tc_list(t, id, ft, GF__T_STRUCT, &n);
            if (t->err) break;
            if (n > GPUFEED_MAX_COLUMNS) { gf__tc_fail(t, GPUFEED_ERR_LIMIT, "%u schema elements exceed GPUFEED_MAX_COLUMNS", n); break; }
            if (n > (uint32_t)((t->end - t->p) / 3)) {
                gf__tc_fail(t, GPUFEED_ERR_THRIFT, "%u schema elements cannot fit in the %lld bytes left", n, (long long)(t->end - t->p));
                break;
            }
            d->se = (gf__se *)gf__arena_get(ar, (size_t)(n ? n : 1) * sizeof(gf__se));
            if (!d->se) { gf__tc_fail(t, GPUFEED_ERR_OUT_OF_MEMORY, "out of memory"); break; }
            for (i = 0; i < n && !t->err; i++) {
                if (++t->depth > GPUFEED_MAX_THRIFT_DEPTH) { gf__tc_fail(t, GPUFEED_ERR_LIMIT, "nesting too deep"); break; }
                t->what = "SchemaElement";
                gf__parse_schema_element(t, &d->se[i]);
                t->what = "FileMetaData";
                t->depth--;
            }
            d->nse = n; d->has_schema = 1;
            d->nleaves = 0;
            for (i = 1; i < n; i++) d->nleaves += d->se[i].has_type && !(d->se[i].has_children && d->se[i].num_children > 0);
            break;
        case 3:
            md->num_rows = GF__I64(t, id, ft);
            d->has_rows = 1;
            break;
        case 4:
            (void)gf__tc_list(t, id, ft, GF__T_STRUCT, &n);
            if (t->err) break;
            if (n > (uint32_t)((t->end - t->p) / 4)) {
                gf__tc_fail(t, GPUFEED_ERR_THRIFT, "%u row groups cannot fit in the %lld bytes left", n, (long long)(t->end - t->p));
                break;
            }
            d->rgs = (gpufeed_row_group_info *)gf__arena_get(ar, (size_t)(n ? n : 1) * sizeof *d->rgs);
            d->rg_ncols = (int32_t *)gf__arena_get(ar, (size_t)(n ? n : 1) * sizeof(int32_t));
            if (!d->rgs || !d->rg_ncols) { gf__tc_fail(t, GPUFEED_ERR_OUT_OF_MEMORY, "out of memory"); break; }
            for (i = 0; i < n && !t->err; i++) {
                if (++t->depth > GPUFEED_MAX_THRIFT_DEPTH) { gf__tc_fail(t, GPUFEED_ERR_LIMIT, "nesting too deep"); break; }
                t->what = "RowGroup";
                gf__parse_row_group(t, ar, &d->rgs[i], &d->rg_ncols[i], d->has_schema ? d->nleaves : -1);
                t->what = "FileMetaData";
                t->depth--;
            }
            d->nrg = n; d->has_rg = 1;
            break;
        case 5:
            (void)gf__tc_list(t, id, ft, GF__T_STRUCT, &n);
            if (t->err) break;
            d->kv = (gpufeed_key_value *)gf__arena_get(ar, (size_t)(n ? n : 1) * sizeof *d->kv);
            if (!d->kv) { gf__tc_fail(t, GPUFEED_ERR_OUT_OF_MEMORY, "out of memory"); break; }
            for (i = 0; i < n && !t->err; i++) {
                int kid = 0, klast = 0, kft;
                if (++t->depth > GPUFEED_MAX_THRIFT_DEPTH) { gf__tc_fail(t, GPUFEED_ERR_LIMIT, "nesting too deep"); break; }
                t->what = "KeyValue";
                while ((kft = gf__tc_field(t, &kid, &klast)) > 0) {
                    if (!gf__tc_expect(t, gf__spec_key_value, GF__NSPEC(gf__spec_key_value), kid, kft)) continue;
                    if (kid == 1 || kid == 2) {
                        char *s;
                        gf__tc_bin(t, kid, kft, &p, &len);
                        if (t->err) break;
                        s = gf__arena_str(ar, p, len);
                        if (!s) { gf__tc_fail(t, GPUFEED_ERR_OUT_OF_MEMORY, "out of memory"); break; }
                        if (kid == 1) d->kv[i].key = s; else d->kv[i].value = s;
                    } else gf__tc_skip(t, kft, 0);
                }
                if (!t->err && !d->kv[i].key) gf__tc_fail(t, GPUFEED_ERR_THRIFT, "KeyValue without a key");
                t->what = "FileMetaData";
                t->depth--;
            }
            d->nkv = n;
            break;
        case 6:
            gf__tc_bin(t, id, ft, &p, &len);
            if (!t->err && !(md->created_by = gf__arena_str(ar, p, len))) gf__tc_fail(t, GPUFEED_ERR_OUT_OF_MEMORY, "out of memory");
            break;
        case 8:
            d->encrypted_columns = 1;
            gf__tc_skip(t, ft, 0);
            break;
        default: gf__tc_skip(t, ft, 0);
        }
    }
    if (!t->err && (!d->has_schema || !d->has_rows || !d->has_rg))
        gf__tc_fail(t, GPUFEED_ERR_THRIFT, "FileMetaData misses schema, num_rows or row_groups");
}

/* Resolves the logical annotation of one element into the node. */
static void gf__resolve_logical(const gf__se *e, gpufeed_schema_node *nd)
{
    int phys = e->has_type ? e->type : -1;
    nd->logical = GPUFEED_LT_NONE;
    nd->unit = GPUFEED_UNIT_NONE;
    if (e->lt_present && e->lt != GPUFEED_LT_NONE) {
        nd->logical = e->lt;
        switch (e->lt) {
        case GPUFEED_LT_DECIMAL:
            nd->scale = e->lt_scale;
            nd->precision = e->lt_precision;
            break;
        case GPUFEED_LT_TIME: case GPUFEED_LT_TIMESTAMP:
            nd->unit = e->lt_unit;
            nd->is_adjusted_to_utc = e->lt_utc;
            break;
        case GPUFEED_LT_INTEGER:
            nd->int_bit_width = e->lt_bits;
            nd->int_signed = e->lt_signed;
            break;
        default: break;
        }
    } else {
        switch (e->converted) {
        case 0: nd->logical = GPUFEED_LT_STRING; break;
        case 1: nd->logical = GPUFEED_LT_MAP; break;
        case 2: nd->logical = GPUFEED_LT_MAP_KEY_VALUE; break;
        case 3: nd->logical = GPUFEED_LT_LIST; break;
        case 4: nd->logical = GPUFEED_LT_ENUM; break;
        case 5:
            nd->logical = GPUFEED_LT_DECIMAL;
            nd->scale = e->scale;
            nd->precision = e->precision;
            break;
        case 6: nd->logical = GPUFEED_LT_DATE; break;
        case 7:
            nd->logical = GPUFEED_LT_TIME;
            nd->unit = GPUFEED_UNIT_MILLIS;
            nd->is_adjusted_to_utc = 1;
            break;
        case 8:
            nd->logical = GPUFEED_LT_TIME;
            nd->unit = GPUFEED_UNIT_MICROS;
            nd->is_adjusted_to_utc = 1;
            break;
        case 9:
            nd->logical = GPUFEED_LT_TIMESTAMP;
            nd->unit = GPUFEED_UNIT_MILLIS;
            nd->is_adjusted_to_utc = 1;
            break;
        case 10:
            nd->logical = GPUFEED_LT_TIMESTAMP;
            nd->unit = GPUFEED_UNIT_MICROS;
            nd->is_adjusted_to_utc = 1;
            break;
        case 11: case 12: case 13: case 14:
            nd->logical = GPUFEED_LT_INTEGER;
            nd->int_signed = 0;
            nd->int_bit_width = 8 << (e->converted - 11);
            break;
        case 15: case 16: case 17: case 18:
            nd->logical = GPUFEED_LT_INTEGER;
            nd->int_signed = 1;
            nd->int_bit_width = 8 << (e->converted - 15);
            break;
        case 19: nd->logical = GPUFEED_LT_JSON; break;
        case 20: nd->logical = GPUFEED_LT_BSON; break;
        case 21: nd->logical = GPUFEED_LT_INTERVAL; break;
        case -1: break;
        default: nd->logical = GPUFEED_LT_OTHER; break;
        }
    }

    /* An annotation that cannot apply to the physical type is ignored: the
       column reads as its physical type (as for unknown annotations). */
    switch (nd->logical) {
    case GPUFEED_LT_DECIMAL:
        if (!(phys == GPUFEED_INT32 || phys == GPUFEED_INT64 || phys == GPUFEED_BYTE_ARRAY ||
              phys == GPUFEED_FIXED_LEN_BYTE_ARRAY) || nd->precision <= 0 || nd->scale < 0 ||
            nd->scale > nd->precision)
            nd->logical = GPUFEED_LT_OTHER;
        break;
    case GPUFEED_LT_DATE: if (phys != GPUFEED_INT32) nd->logical = GPUFEED_LT_OTHER; break;
    case GPUFEED_LT_TIME:
        if (!((nd->unit == GPUFEED_UNIT_MILLIS && phys == GPUFEED_INT32) ||
              ((nd->unit == GPUFEED_UNIT_MICROS || nd->unit == GPUFEED_UNIT_NANOS) && phys == GPUFEED_INT64)))
            nd->logical = GPUFEED_LT_OTHER;
        break;
    case GPUFEED_LT_TIMESTAMP:
        if (phys != GPUFEED_INT64 || nd->unit == GPUFEED_UNIT_NONE) nd->logical = GPUFEED_LT_OTHER;
        break;
    case GPUFEED_LT_INTEGER:
        if (!((phys == GPUFEED_INT32 && (nd->int_bit_width == 8 || nd->int_bit_width == 16 || nd->int_bit_width == 32)) ||
              (phys == GPUFEED_INT64 && nd->int_bit_width == 64)))
            nd->logical = GPUFEED_LT_OTHER;
        break;
    case GPUFEED_LT_FLOAT16:
        if (phys != GPUFEED_FIXED_LEN_BYTE_ARRAY || e->type_length != 2) nd->logical = GPUFEED_LT_OTHER;
        break;
    case GPUFEED_LT_UUID:
        if (phys != GPUFEED_FIXED_LEN_BYTE_ARRAY || e->type_length != 16) nd->logical = GPUFEED_LT_OTHER;
        break;
    default: break;
    }
}

typedef struct gf__build {
    gf__arena *ar;
    const gf__se *se;
    uint32_t nse;
    gpufeed_schema_node *nodes;
    gpufeed_column_info *cols;
    int32_t ncols;
    uint64_t path_budget;              /* bytes of dotted paths still allowed */
    char *msg; size_t msgcap;
} gf__build;

/* builds node i (already known to exist) and its subtree; returns the next
   element index or -1 on error */
static int64_t gf__build_node(gf__build *b, uint32_t i, int32_t parent, int32_t depth)
{
    const gf__se *e = &b->se[i];
    gpufeed_schema_node *nd = &b->nodes[i];
    uint32_t next = i + 1;
    int32_t c;
    nd->parent = parent;
    nd->depth = depth;
    nd->first_child = -1;
    nd->column = -1;
    nd->name = gf__arena_str(b->ar, e->name, e->name_len);
    if (!nd->name) { gf__fmt(b->msg, b->msgcap, "out of memory"); return -1; }
    if (depth > GPUFEED_MAX_SCHEMA_DEPTH) {
        gf__fmt(b->msg, b->msgcap, "schema nesting deeper than GPUFEED_MAX_SCHEMA_DEPTH (%d) at element %u", GPUFEED_MAX_SCHEMA_DEPTH, i);
        return -2;
    }
    nd->converted_type = e->converted;
    nd->has_field_id = e->has_field_id; nd->field_id = e->field_id;
    if (parent < 0) {
        nd->path = nd->name;
        nd->repetition = GPUFEED_REQUIRED;
        nd->max_def = 0; nd->max_rep = 0;
    } else {
        const gpufeed_schema_node *pn = &b->nodes[parent];
        size_t pl = pn->parent < 0 ? 0 : strlen(pn->path), nl = strlen(nd->name);
        char *path;
        if ((uint64_t)(pl + nl + 2) > b->path_budget) {
            gf__fmt(b->msg, b->msgcap, "dotted paths of the schema would take more than 16 x the footer's size (long names under many children)");
            return -3;
        }
        b->path_budget -= (uint64_t)(pl + nl + 2);
        path = (char *)gf__arena_get(b->ar, pl + nl + 2);
        if (!path) { gf__fmt(b->msg, b->msgcap, "out of memory"); return -1; }
        if (pl) {
            memcpy(path, pn->path, pl);
            path[pl] = '.';
            memcpy(path + pl + 1, nd->name, nl + 1);
        }
        else memcpy(path, nd->name, nl + 1);
        nd->path = path;
        if (!e->has_rep || e->repetition < 0 || e->repetition > 2) {
            gf__fmt(b->msg, b->msgcap, "schema element '%s' has %s repetition_type", path, e->has_rep ? "an invalid" : "no");
            return -2;
        }
        nd->repetition = (gpufeed_repetition)e->repetition;
        nd->max_def = (int16_t)(pn->max_def + (nd->repetition != GPUFEED_REQUIRED));
        nd->max_rep = (int16_t)(pn->max_rep + (nd->repetition == GPUFEED_REPEATED));
    }
    if (e->has_children && e->num_children > 0) {
        /* a group */
        if (e->has_type && parent >= 0) {
            gf__fmt(b->msg, b->msgcap, "schema element '%s' has both a type and children", nd->path);
            return -2;
        }
        if ((uint32_t)e->num_children > b->nse - next) {
            gf__fmt(b->msg, b->msgcap, "schema element '%s' claims %d children but only %u elements follow", nd->path, e->num_children, b->nse - next);
            return -2;
        }
        nd->physical = GPUFEED_GROUP;
        nd->num_children = e->num_children;
        nd->first_child = (int32_t)next;
        gf__resolve_logical(e, nd);
        for (c = 0; c < e->num_children; c++) {
            int64_t r;
            if (next >= b->nse) {
                gf__fmt(b->msg, b->msgcap, "schema element '%s': child %d is missing", nd->path, c);
                return -2;
            }
            r = gf__build_node(b, next, (int32_t)i, depth + 1);
            if (r < 0) return r;
            next = (uint32_t)r;
        }
    } else if (parent < 0) {
        nd->physical = GPUFEED_GROUP; /* an empty root */
    } else if (!e->has_type) {
        nd->physical = GPUFEED_GROUP; /* an empty group */
        gf__resolve_logical(e, nd);
    } else {
        if (e->type < 0 || e->type > 7) {
            gf__fmt(b->msg, b->msgcap, "column '%s' has unknown physical type %d", nd->path, e->type);
            return -2;
        }
        nd->physical = (gpufeed_physical_type)e->type;
        nd->type_length = e->type_length;
        if (nd->physical == GPUFEED_FIXED_LEN_BYTE_ARRAY && (e->type_length <= 0 || e->type_length > (int32_t)GPUFEED_MAX_PAGE_SIZE)) {
            gf__fmt(b->msg, b->msgcap, "column '%s' is FIXED_LEN_BYTE_ARRAY with invalid type_length %d", nd->path, e->type_length);
            return -2;
        }
        gf__resolve_logical(e, nd);
        nd->column = b->ncols;
        b->cols[b->ncols].path = nd->path;
        b->cols[b->ncols].node = (int32_t)i;
        b->cols[b->ncols].physical = nd->physical;
        b->cols[b->ncols].type_length = nd->type_length;
        b->cols[b->ncols].max_def = nd->max_def;
        b->cols[b->ncols].max_rep = nd->max_rep;
        b->ncols++;
    }
    return next;
}

static uint64_t gf__chunk_start(const gpufeed_chunk_info *ch)
{
    uint64_t start = (uint64_t)ch->data_page_offset;
    if (ch->dictionary_page_offset > 0 && (uint64_t)ch->dictionary_page_offset < start) start = (uint64_t)ch->dictionary_page_offset;
    return start;
}
static int gf__cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static gpufeed_result gf__file_fail(gpufeed_error *err, const char *name, gpufeed_result code, const char *what)
{
    return gf__seterr(err, code, "%s: %s", name, what);
}

static gpufeed_result gf__load_metadata(gpufeed_file *f, gpufeed_error *err)
{
    uint8_t tail[8], head[4];
    uint32_t flen;
    gf__tc *t;
    gf__fmd d;
    gf__build b;
    char msg[GPUFEED_ERROR_MAX];
    uint32_t i;
    int32_t c;
    gpufeed_metadata *md = &f->md;

    if (f->size < 12)
        return gf__seterr(err, GPUFEED_ERR_NOT_PARQUET, "%s: file of %llu bytes is too small to be Parquet (needs at least 12)", f->name,
                          (unsigned long long)f->size);
    if (f->src.read_at(f->src.ctx, 0, head, 4) || f->src.read_at(f->src.ctx, f->size - 8, tail, 8))
        return gf__seterr(err, GPUFEED_ERR_IO, "%s: read failed at the file's head or tail%s", f->name, gf__source_why(&f->src, msg, sizeof msg));
    if (memcmp(tail + 4, "PARE", 4) == 0)
        return gf__seterr(err, GPUFEED_ERR_ENCRYPTED, "%s: encrypted footer (magic PARE): encrypted Parquet is not supported", f->name);
    if (memcmp(tail + 4, "PAR1", 4) != 0)
        return gf__seterr(err, GPUFEED_ERR_NOT_PARQUET, "%s: no PAR1 magic at the end of the file (byte offset %llu)", f->name,
                          (unsigned long long)(f->size - 4));
    if (memcmp(head, "PAR1", 4) != 0)
        return gf__seterr(err, GPUFEED_ERR_NOT_PARQUET, "%s: no PAR1 magic at the start of the file (byte offset 0)", f->name);
    flen = gf__ld32(tail);
    if ((uint64_t)flen > f->size - 12)
        return gf__seterr(err, GPUFEED_ERR_FOOTER, "%s: footer length %u runs past the start of the file (file size %llu)", f->name, flen,
                          (unsigned long long)f->size);
    if (flen > GPUFEED_MAX_FOOTER_SIZE)
        return gf__seterr(err, GPUFEED_ERR_LIMIT, "%s: footer of %u bytes exceeds GPUFEED_MAX_FOOTER_SIZE", f->name, flen);
    if (flen == 0)
        return gf__seterr(err, GPUFEED_ERR_FOOTER, "%s: empty footer", f->name);
    f->footer_len = flen;
    f->data_end = f->size - 8 - flen;
    f->footer = (uint8_t *)gf__alloc(&f->alloc, flen);
    if (!f->footer) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "%s: out of memory for a %u-byte footer", f->name, flen);
    if (f->src.read_at(f->src.ctx, f->data_end, f->footer, flen))
        return gf__seterr(err, GPUFEED_ERR_IO, "%s: reading the footer (%u bytes at offset %llu) failed%s", f->name, flen,
                          (unsigned long long)f->data_end, gf__source_why(&f->src, msg, sizeof msg));

    t = (gf__tc *)gf__alloc(&f->alloc, sizeof *t);
    if (!t) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "%s: out of memory", f->name);
    memset(&d, 0, sizeof d);
    gf__tc_init(t, f->footer, flen, f->data_end, "FileMetaData");
    gf__parse_file_metadata(t, &f->arena, md, &d);
    if (t->err) {
        gpufeed_result r = t->err;
        gf__seterr(err, r, "%s: footer: %s", f->name, t->msg);
        gf__free(&f->alloc, t);
        return r;
    }
    gf__free(&f->alloc, t);
    md->file_size = f->size;
    md->footer_length = flen;

    /* schema tree */
    if (d.nse == 0) return gf__file_fail(err, f->name, GPUFEED_ERR_SCHEMA, "empty schema");
    memset(&b, 0, sizeof b);
    b.ar = &f->arena;
    b.se = d.se;
    b.nse = d.nse;
    b.msg = msg;
    b.msgcap = sizeof msg;
    b.path_budget = (uint64_t)flen * 16 + (256u << 10);
    b.nodes = (gpufeed_schema_node *)gf__arena_get(&f->arena, (size_t)d.nse * sizeof *b.nodes);
    b.cols = (gpufeed_column_info *)gf__arena_get(&f->arena, (size_t)d.nse * sizeof *b.cols);
    if (!b.nodes || !b.cols) return gf__file_fail(err, f->name, GPUFEED_ERR_OUT_OF_MEMORY, "out of memory");
    {
        int64_t r = gf__build_node(&b, 0, -1, 0);
        if (r < 0)
            return gf__seterr(err, r == -1 ? GPUFEED_ERR_OUT_OF_MEMORY : r == -3 ? GPUFEED_ERR_LIMIT : GPUFEED_ERR_SCHEMA, "%s: schema: %s", f->name, msg);
        if ((uint64_t)r != d.nse)
            return gf__seterr(err, GPUFEED_ERR_SCHEMA, "%s: schema: the root's children cover %lld of %u elements", f->name, (long long)r, d.nse);
    }
    md->num_nodes = (int32_t)d.nse; md->nodes = b.nodes;
    md->num_columns = b.ncols; md->columns = b.cols;
    md->num_key_values = (int32_t)d.nkv; md->key_values = d.kv;
    if (md->num_rows < 0) return gf__file_fail(err, f->name, GPUFEED_ERR_SCHEMA, "negative num_rows");

    /* row groups */
    {
        int64_t total = 0;
        for (i = 0; i < d.nrg; i++) {
            gpufeed_row_group_info *rg = &d.rgs[i];
            if (d.rg_ncols[i] != b.ncols)
                return gf__seterr(err, GPUFEED_ERR_SCHEMA, "%s: row group %u has %d column chunks but the schema has %d leaf columns", f->name, i,
                                  d.rg_ncols[i], b.ncols);
            if (rg->num_rows > INT64_MAX - total)
                return gf__seterr(err, GPUFEED_ERR_SCHEMA, "%s: row counts overflow", f->name);
            total += rg->num_rows;
            for (c = 0; c < b.ncols; c++) {
                gpufeed_chunk_info *ch = (gpufeed_chunk_info *)&rg->chunks[c];
                const gpufeed_column_info *ci = &b.cols[c];
                if (ch->encrypted || (d.encrypted_columns && !ch->has_metadata)) { ch->encrypted = 1; continue; }
                if (!ch->has_metadata)
                    return gf__seterr(err, GPUFEED_ERR_SCHEMA,
                                      "%s: row group %u, column '%s': the column chunk has no metadata (and the file is not encrypted)", f->name, i, ci->path);
                if (ch->physical != ci->physical)
                    return gf__seterr(err, GPUFEED_ERR_SCHEMA, "%s: row group %u, column '%s': chunk type %s differs from schema type %s", f->name, i,
                                      ci->path, gpufeed_physical_type_name(ch->physical), gpufeed_physical_type_name(ci->physical));
                if (ch->num_values < 0 || ch->total_compressed_size < 0 || ch->data_page_offset < 0)
                    return gf__seterr(err, GPUFEED_ERR_SCHEMA, "%s: row group %u, column '%s': negative size or offset in the chunk metadata", f->name, i,
                                      ci->path);
            }
        }
        if (total != md->num_rows && d.nrg > 0) {
            /* Some writers disagree; the row groups are authoritative. */
            md->num_rows = total;
        }
    }
    md->num_row_groups = (int32_t)d.nrg; md->row_groups = d.rgs;

    /* A chunk's pages end where the next chunk (of any row group) starts:
       the page walk never wanders into another column, even when a chunk's
       stated size or value count is wrong. */
    {
        uint64_t n = (uint64_t)d.nrg * (uint64_t)b.ncols, k, m = 0;
        uint64_t *starts;
        if (n > SIZE_MAX / sizeof(uint64_t)) return gf__file_fail(err, f->name, GPUFEED_ERR_LIMIT, "too many column chunks");
        f->chunk_limit = (uint64_t *)gf__arena_get(&f->arena, (size_t)(n ? n : 1) * sizeof(uint64_t));
        starts = (uint64_t *)gf__alloc(&f->alloc, (size_t)(n ? n : 1) * sizeof(uint64_t));
        if (!f->chunk_limit || !starts) { gf__free(&f->alloc, starts); return gf__file_fail(err, f->name, GPUFEED_ERR_OUT_OF_MEMORY, "out of memory"); }
        for (i = 0; i < d.nrg; i++)
            for (c = 0; c < b.ncols; c++) {
                const gpufeed_chunk_info *ch = &d.rgs[i].chunks[c];
                if (!ch->has_metadata || ch->encrypted) continue;
                starts[m++] = gf__chunk_start(ch);
            }
        qsort(starts, (size_t)m, sizeof(uint64_t), gf__cmp_u64);
        for (i = 0; i < d.nrg; i++)
            for (c = 0; c < b.ncols; c++) {
                const gpufeed_chunk_info *ch = &d.rgs[i].chunks[c];
                uint64_t st = gf__chunk_start(ch), lo = 0, hi = m, lim = f->data_end;
                k = (uint64_t)i * (uint64_t)b.ncols + (uint64_t)c;
                while (lo < hi) {
                    uint64_t mid = (lo + hi) / 2;
                    if (starts[mid] <= st) lo = mid + 1; else hi = mid;
                }
                if (lo < m && starts[lo] < lim) lim = starts[lo];
                f->chunk_limit[k] = lim;
            }
        gf__free(&f->alloc, starts);
    }
    return GPUFEED_OK;
}

GPUFEED_API gpufeed_result gpufeed_file_open(gpufeed_file **out, const gpufeed_file_desc *desc, gpufeed_error *err)
{
    gpufeed_file *f;
    gpufeed_result r;
    const char *name;
    int nsrc;

    /* the file owns a given source from the call on: every failure closes it */
    if (err) { err->code = GPUFEED_OK; err->message[0] = 0; }
    if (out) *out = NULL;
    if (!desc) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "gpufeed_file_open: desc is NULL");
    if (!out) { gf__source_close(desc->source); return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "gpufeed_file_open: out is NULL"); }
    if (desc->path && !desc->data && !desc->source && gf__remote_is_url(desc->path)) { /* s3:// or http(s):// (>>remote) */
        gpufeed_file_desc rd = *desc;
        gpufeed_source rs;
        r = gf__remote_open(NULL, &desc->allocator, &desc->path, 1, &rs, NULL, 0, err);
        if (r) return r;
        rd.path = NULL;
        rd.source = &rs;
        rd.name = desc->name ? desc->name : desc->path;
        return gpufeed_file_open(out, &rd, err);
    }
    if (!gf__host_is_le()) { gf__source_close(desc->source); return gf__seterr(err, GPUFEED_ERR_PLATFORM, "gpufeed: big-endian hosts are not supported"); }
    nsrc = (desc->path != NULL) + (desc->data != NULL) + (desc->source != NULL);
    if (nsrc != 1) {
        gf__source_close(desc->source);
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "gpufeed_file_open: set exactly one of path, data or source (%d set)", nsrc);
    }
    if ((desc->allocator.alloc || desc->allocator.realloc || desc->allocator.free) &&
        !(desc->allocator.alloc && desc->allocator.realloc && desc->allocator.free)) {
        gf__source_close(desc->source);
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "gpufeed_file_open: set all three allocator functions or none");
    }
    name = desc->name ? desc->name : desc->path ? desc->path : desc->data ? "<memory>" : "<source>";
    if (desc->source && !desc->source->read_at) {
        gf__source_close(desc->source);
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "%s: source without read_at", name);
    }
    f = (gpufeed_file *)gf__alloc(&desc->allocator, sizeof *f);
    if (!f) { gf__source_close(desc->source); return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "%s: out of memory", name); }
    memset(f, 0, sizeof *f);
    f->alloc = desc->allocator;
    f->arena.a = &f->alloc;
    f->flags = desc->flags;
    f->name = gf__arena_str(&f->arena, (const uint8_t *)name, strlen(name));
    if (!f->name) {
        gf__free(&desc->allocator, f);
        gf__source_close(desc->source);
        return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
    }
    if (desc->data) {
        f->mem.data = (const uint8_t *)desc->data; f->mem.size = desc->data_size;
        f->src.read_at = gf__mem_read;
        f->src.ctx = &f->mem;
        f->src.size = desc->data_size;
    } else if (desc->source) {
        f->src = *desc->source;
    } else {
#ifndef GPUFEED_NO_STDIO
        int pr = gf__path_open(desc->path, desc->flags, &f->fd, &f->fd_open, &f->src.size, &f->map, &f->map_len, &f->map_page);
        if (pr == -1) {
            char why[256];
            gf__errno_text(errno, why, sizeof why);
            r = gf__seterr(err, GPUFEED_ERR_IO, "%s: cannot open: %s", name, why);
            gpufeed_file_close(f);
            return r;
        }
        if (pr == -2) {
            r = gf__seterr(err, GPUFEED_ERR_IO, "%s: not a regular file", name);
            gpufeed_file_close(f);
            return r;
        }
        f->src.read_at = gf__fd_read;
        f->src.ctx = &f->fd;
#else
        gpufeed_file_close(f);
        return gf__seterr(err, GPUFEED_ERR_UNSUPPORTED, "%s: path sources are compiled out (GPUFEED_NO_STDIO)", name);
#endif
    }
    f->size = f->src.size;
    r = gf__load_metadata(f, err);
    if (r != GPUFEED_OK) { gpufeed_file_close(f); return r; }
    *out = f;
    return GPUFEED_OK;
}

GPUFEED_API void gpufeed_file_close(gpufeed_file *f)
{
    gpufeed_allocator a;
    if (!f) return;
    a = f->alloc;
#ifndef GPUFEED_NO_STDIO
    if (f->map) munmap((void *)f->map, (size_t)f->map_len);
    if (f->fd_open && f->fd.fd >= 0) {
        if (f->fd.pool) { gf__fdpool_lock(f->fd.pool); f->fd.pool->open--; gf__fdpool_unlock(f->fd.pool); }
        close(f->fd.fd);
    }
#endif
    if (f->src.close && f->src.read_at != gf__mem_read
#ifndef GPUFEED_NO_STDIO
        && f->src.read_at != gf__fd_read
#endif
        ) f->src.close(f->src.ctx);
    gf__free(&f->alloc, f->footer);
    gf__arena_free(&f->arena);
    gf__free(&a, f);
}

GPUFEED_API const gpufeed_metadata *gpufeed_file_metadata(const gpufeed_file *f) { return f ? &f->md : NULL; }
GPUFEED_API const char *gpufeed_file_name(const gpufeed_file *f) { return f ? f->name : ""; }
GPUFEED_API const uint8_t *gpufeed_file_footer(const gpufeed_file *f, size_t *len)
{
    if (len) *len = f ? f->footer_len : 0;
    return f ? f->footer : NULL;
}
GPUFEED_API int32_t gpufeed_file_find_column(const gpufeed_file *f, const char *path)
{
    int32_t i;
    if (!f || !path) return -1;
    for (i = 0; i < f->md.num_columns; i++)
        if (strcmp(f->md.columns[i].path, path) == 0) return i;
    return -1;
}

GPUFEED_API const char *gpufeed_physical_type_name(gpufeed_physical_type t)
{
    switch (t) {
    case GPUFEED_BOOLEAN: return "BOOLEAN";
    case GPUFEED_INT32: return "INT32";
    case GPUFEED_INT64: return "INT64";
    case GPUFEED_INT96: return "INT96";
    case GPUFEED_FLOAT: return "FLOAT";
    case GPUFEED_DOUBLE: return "DOUBLE";
    case GPUFEED_BYTE_ARRAY: return "BYTE_ARRAY";
    case GPUFEED_FIXED_LEN_BYTE_ARRAY: return "FIXED_LEN_BYTE_ARRAY";
    case GPUFEED_GROUP: return "GROUP";
    }
    return "UNKNOWN";
}
GPUFEED_API const char *gpufeed_logical_type_name(gpufeed_logical_type t)
{
    static const char *const n[] = { "NONE", "STRING", "ENUM", "JSON", "BSON", "UUID",
        "DECIMAL", "DATE", "TIME", "TIMESTAMP", "INTEGER", "FLOAT16", "LIST", "MAP",
        "MAP_KEY_VALUE", "INTERVAL", "NULL", "VARIANT", "GEOMETRY", "GEOGRAPHY", "OTHER" };
    return ((unsigned)t < sizeof n / sizeof n[0]) ? n[t] : "OTHER";
}
GPUFEED_API const char *gpufeed_codec_name(gpufeed_codec c)
{
    static const char *const n[] = { "UNCOMPRESSED", "SNAPPY", "GZIP", "LZO", "BROTLI", "LZ4", "ZSTD", "LZ4_RAW" };
    return ((unsigned)c < 8) ? n[c] : "UNKNOWN";
}
GPUFEED_API const char *gpufeed_encoding_name(gpufeed_encoding e)
{
    static const char *const n[] = { "PLAIN", "GROUP_VAR_INT", "PLAIN_DICTIONARY", "RLE", "BIT_PACKED",
        "DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY", "RLE_DICTIONARY", "BYTE_STREAM_SPLIT" };
    return ((unsigned)e < 10) ? n[e] : "UNKNOWN";
}

/* >>pages ---------------------------------------------------------------- */

enum { GF__PAGE_DATA = 0, GF__PAGE_INDEX = 1, GF__PAGE_DICT = 2, GF__PAGE_DATA_V2 = 3 };

typedef struct gf__ph {
    int32_t type, usize, csize, crc;
    int has_type, has_usize, has_csize, has_crc;
    int has_dph, has_v2, has_dict;
    int32_t nvalues, encoding, def_enc, rep_enc;     /* v1 and dictionary */
    int32_t nnulls, nrows, def_len, rep_len;         /* v2 */
    int is_compressed;
} gf__ph;

static const gf__tfield gf__spec_dph_v2[] = { { 7, GF__K_BOOL, 0, 0 } };
static const gf__tfield gf__spec_page_header[] = {
    { 1, GF__K_INT, 0, 1 }, { 2, GF__K_INT, 0, 1 }, { 3, GF__K_INT, 0, 1 }, { 4, GF__K_INT, 0, 0 },
    { 5, GF__K_STRUCT, 0, 0 }, { 7, GF__K_STRUCT, 0, 0 }, { 8, GF__K_STRUCT, 0, 0 }
};

static void gf__parse_dph(gf__tc *t, gf__ph *h, int v2)
{
    int id = 0, last = 0, ft;
    unsigned seen = 0;
    while ((ft = gf__tc_field(t, &id, &last)) > 0) {
        if (v2 && !gf__tc_expect(t, gf__spec_dph_v2, GF__NSPEC(gf__spec_dph_v2), id, ft)) continue;
        if (!v2) {
            switch (id) {
            case 1:
                h->nvalues = GF__I32(t, id, ft);
                seen |= 1;
                break;
            case 2:
                h->encoding = GF__I32(t, id, ft);
                seen |= 2;
                break;
            case 3: h->def_enc = GF__I32(t, id, ft); break;
            case 4: h->rep_enc = GF__I32(t, id, ft); break;
            default: gf__tc_skip(t, ft, 0);
            }
        } else {
            switch (id) {
            case 1:
                h->nvalues = GF__I32(t, id, ft);
                seen |= 1;
                break;
            case 2: h->nnulls = GF__I32(t, id, ft); break;
            case 3: h->nrows = GF__I32(t, id, ft); break;
            case 4:
                h->encoding = GF__I32(t, id, ft);
                seen |= 2;
                break;
            case 5:
                h->def_len = GF__I32(t, id, ft);
                seen |= 4;
                break;
            case 6:
                h->rep_len = GF__I32(t, id, ft);
                seen |= 8;
                break;
            case 7: h->is_compressed = gf__tc_bool(t, id, ft); break;
            default: gf__tc_skip(t, ft, 0);
            }
        }
    }
    if (!t->err && (seen & (v2 ? 15u : 3u)) != (v2 ? 15u : 3u))
        gf__tc_fail(t, GPUFEED_ERR_THRIFT, "data page header misses a required field");
}

static void gf__parse_page_header(gf__tc *t, gf__ph *h)
{
    int id = 0, last = 0, ft;
    memset(h, 0, sizeof *h);
    h->is_compressed = 1;
    while ((ft = gf__tc_field(t, &id, &last)) > 0) {
        if (!gf__tc_expect(t, gf__spec_page_header, GF__NSPEC(gf__spec_page_header), id, ft)) continue;
        switch (id) {
        case 1:
            h->type = GF__I32(t, id, ft);
            h->has_type = 1;
            break;
        case 2:
            h->usize = GF__I32(t, id, ft);
            h->has_usize = 1;
            break;
        case 3:
            h->csize = GF__I32(t, id, ft);
            h->has_csize = 1;
            break;
        case 4:
            h->crc = GF__I32(t, id, ft);
            h->has_crc = 1;
            break;
        case 5:
            if (gf__tc_enter(t, id, ft)) {
                h->has_dph = 1;
                gf__parse_dph(t, h, 0);
                t->depth--;
            }
            break;
        case 7:
            if (gf__tc_enter(t, id, ft)) {
                int iid = 0, ilast = 0, ift;
                unsigned seen = 0;
                h->has_dict = 1;
                while ((ift = gf__tc_field(t, &iid, &ilast)) > 0) {
                    if (iid == 1) { h->nvalues = GF__I32(t, iid, ift); seen |= 1; }
                    else if (iid == 2) { h->encoding = GF__I32(t, iid, ift); seen |= 2; }
                    else gf__tc_skip(t, ift, 0);
                }
                if (!t->err && seen != 3) gf__tc_fail(t, GPUFEED_ERR_THRIFT, "dictionary page header misses num_values or encoding");
                t->depth--;
            }
            break;
        case 8:
            if (gf__tc_enter(t, id, ft)) {
                h->has_v2 = 1;
                gf__parse_dph(t, h, 1);
                t->depth--;
            }
            break;
        default: gf__tc_skip(t, ft, 0);
        }
    }
    if (!t->err && (!h->has_type || !h->has_usize || !h->has_csize))
        gf__tc_fail(t, GPUFEED_ERR_THRIFT, "PageHeader misses type or sizes");
}

/* >>codecs --------------------------------------------------------------- */
/* The decompressors. Their inner loops keep several statements a line on
   purpose: an unrolled copy, a bit-buffer refill or one decoding step per
   line reads as one step, and the hot loops stay short enough to see whole.
   tests/test_layout.py exempts this section from one statement a line. */

/* A SNAPPY stream decoded in steps (gf__snappy_begin, gf__snappy_run):
   into a whole page's buffer, or into a window that keeps only the last
   bytes a column reader has not consumed and the history copies reach back
   into (the window is moved and grown by its owner between steps). buf is
   the window's start, `base` the page offset of buf[0], `total` the bytes
   the stream must produce. The input may come in pieces too: src is then
   the start of the piece at hand, `ibase` the stream offset of src[0],
   and `more` says that bytes follow iend (its owner reads them in). */
typedef struct gf__snap {
    const uint8_t *src, *ip, *iend;
    uint8_t *buf, *op, *end;
    uint64_t base, total, ibase;
    int more;
} gf__snap;

/* what a step ends with besides GPUFEED_OK (stopped, or the stream done)
   and GPUFEED_ERR_CODEC: the next element does not fit in the buffer; a
   copy reaches back past the window's start (into bytes it let go) */
#define GF__SNAP_ROOM 2
#define GF__SNAP_HISTORY 3
#define GF__SNAP_INPUT 4 /* the next element runs past the input at hand, and more follows */

#if !defined(GPUFEED_NO_SNAPPY) && !defined(GPUFEED_USE_LIBSNAPPY)
#define GF__SNAPPY_OWN 1
/* SNAPPY raw format: a varint length, then literals and back-references. */
static int gf__snappy_length(const uint8_t *src, size_t n, uint64_t *len, size_t *hdr)
{
    const uint8_t *p = src;
    uint64_t v;
    if (gf__varint(&p, src + n, 5, &v) != 1 || v > UINT32_MAX) return 0;
    *len = v; *hdr = (size_t)(p - src);
    return 1;
}

static gpufeed_result gf__snappy_begin(gf__snap *z, const uint8_t *src, size_t n, uint64_t total, char *msg, size_t cap)
{
    uint64_t ulen;
    size_t hdr;
    if (!gf__snappy_length(src, n, &ulen, &hdr)) { gf__fmt(msg, cap, "snappy: bad length header"); return GPUFEED_ERR_CODEC; }
    if (ulen != total) {
        gf__fmt(msg, cap, "snappy: stream says %llu bytes, page header says %llu", (unsigned long long)ulen, (unsigned long long)total);
        return GPUFEED_ERR_CODEC;
    }
    z->src = src; z->ip = src + hdr; z->iend = src + n;
    z->buf = z->op = z->end = NULL;
    z->base = 0; z->total = total; z->ibase = 0; z->more = 0;
    return GPUFEED_OK;
}

/* The fast loop of the SNAPPY decoder: the common elements while at least
   GF__SNAPPY_IN_SLACK input and GF__SNAPPY_OUT_SLACK output bytes remain
   (and up to olim), without bounds checks (the slack covers every read and
   write). Literals of up to 16 bytes and copies of up to 16 from 16 or
   more bytes back move 16 bytes at once (the bytes past the element are
   written again by the next). A copy of 4 to 8 bytes from 8 or more back
   reads exactly its own bytes, two 4-byte loads combined into one 8-byte
   store: from close behind (the last few elements' stores) a wider load
   would straddle two recent stores, and the processor then waits for both
   to reach the cache before it can forward them (the pattern of 8-byte
   integers and rounded doubles: a short literal, a copy from 8 bytes
   back; 1.3x on such pages). That case is chosen by the copy's length,
   not its distance: pages mixing near and far copies make a branch on the
   distance a guess the processor often gets wrong (1.09x on such pages).
   Anything else (a long literal, an offset before buf) leaves the loop at
   its tag for the careful step. */
#define GF__SNAPPY_IN_SLACK 24
#define GF__SNAPPY_OUT_SLACK 64
GF__INLINE void gf__snappy_fast(const uint8_t **pip, const uint8_t *iend, uint8_t **pop, uint8_t *dst, uint8_t *olim)
{
    const uint8_t *ip = *pip, *ilim;
    uint8_t *op = *pop;
    if (iend - ip <= GF__SNAPPY_IN_SLACK) return;
    ilim = iend - GF__SNAPPY_IN_SLACK;
    while (ip < ilim && op < olim) {
        const uint32_t tag = ip[0];
        uint32_t len, off, adv;
        const uint8_t *from;
        if ((tag & 3) == 0) {
            len = (tag >> 2) + 1;
            if (len > 16) break;
            memcpy(op, ip + 1, 16);
            op += len; ip += 1 + len;
            continue;
        }
        if ((tag & 3) == 1) { len = ((tag >> 2) & 7) + 4; off = ((tag >> 5) << 8) | ip[1]; adv = 2; }
        else if ((tag & 3) == 2) { len = (tag >> 2) + 1; off = gf__ld16(ip + 1); adv = 3; }
        else { len = (tag >> 2) + 1; off = gf__ld32(ip + 1); adv = 5; }
        if (off == 0 || off > (size_t)(op - dst)) break; /* the careful step names it */
        ip += adv;
        from = op - off;
        if (len - 4 <= 4 && off >= 8) { /* 4..8 bytes, none of them its own */
            uint64_t v = (uint64_t)gf__ld32(from) | (((uint64_t)gf__ld32(from + len - 4) >> (8 * (8 - len))) << 32);
            memcpy(op, &v, 8);
        } else if (off >= 16 && len <= 16) memcpy(op, from, 16);
        else if (len >= 4 && len <= 8 && len <= off) {
            uint64_t v = (uint64_t)gf__ld32(from) | (((uint64_t)gf__ld32(from + len - 4) >> (8 * (8 - len))) << 32);
            memcpy(op, &v, 8);
        } else if (off >= 8) {
            uint32_t i;
            for (i = 0; i < len; i += 8) memcpy(op + i, from + i, 8);
        } else {
            uint32_t i;
            for (i = 0; i < len; i++) op[i] = from[i];
        }
        op += len;
    }
    *pip = ip; *pop = op;
}

/* Decodes elements until the output reaches `stop` (NULL: the stream's
   end, where it must have produced exactly `total` bytes). An element is
   never split: one that does not fit before z->end stops the step at its
   tag (GF__SNAP_ROOM), unless it runs past `total` (an error); one that
   runs past the input at hand stops it there too when more input follows
   (GF__SNAP_INPUT). Errors name page and stream offsets (base + position,
   ibase + position), so a window names them as a whole page would. */
static int gf__snappy_run(gf__snap *z, const uint8_t *stop, char *msg, size_t cap)
{
    const uint8_t *ip = z->ip, *iend = z->iend, *src = z->src;
    uint8_t *op = z->op, *buf = z->buf, *oend = z->end;
    const uint64_t base = z->base, total = z->total, ibase = z->ibase;
    uint8_t *lend = total - base < (uint64_t)(oend - buf) ? buf + (total - base) : oend; /* the fast loop stays within the page */
    uint8_t *olim = lend - buf > GF__SNAPPY_OUT_SLACK ? lend - GF__SNAPPY_OUT_SLACK : buf;
    const uint8_t *at = ip; /* the element being decoded: where a step stops */
    int r = GPUFEED_OK;
    if (stop && stop < olim) olim = (uint8_t *)(uintptr_t)stop;
    while (ip < iend && (!stop || op < stop)) {
        uint32_t tag, len, off;
        gf__snappy_fast(&ip, iend, &op, buf, olim);
        if (ip >= iend || (stop && op >= stop)) break;

        /* the careful step: one element, every bound checked */
        at = ip;
        tag = *ip++;
        if ((tag & 3) == 0) {
            len = (tag >> 2) + 1;
            if (len > 60) {
                uint32_t nb = len - 60, i;
                if ((size_t)(iend - ip) < nb) goto trunc;
                len = 0;
                for (i = 0; i < nb; i++) len |= (uint32_t)ip[i] << (8 * i);
                if (len == UINT32_MAX) goto bad_lit;
                len += 1;
                ip += nb;
            }
            if ((size_t)(iend - ip) < len) goto trunc;
            if (total - base - (uint64_t)(op - buf) < len) goto bad_lit;
            if ((size_t)(oend - op) < len) { ip = at; r = GF__SNAP_ROOM; break; }
            if (len <= 16 && iend - ip >= 16 && oend - op >= 16) memcpy(op, ip, 16);
            else memcpy(op, ip, len);
            op += len; ip += len;
            continue;
        }
        if ((tag & 3) == 1) {
            if (ip >= iend) goto trunc;
            len = ((tag >> 2) & 7) + 4;
            off = ((tag >> 5) << 8) | *ip++;
        } else if ((tag & 3) == 2) {
            if (iend - ip < 2) goto trunc;
            len = (tag >> 2) + 1; off = gf__ld16(ip); ip += 2;
        } else {
            if (iend - ip < 4) goto trunc;
            len = (tag >> 2) + 1; off = gf__ld32(ip); ip += 4;
        }
        if (off == 0 || off > base + (uint64_t)(op - buf)) {
            gf__fmt(msg, cap, "snappy: copy offset %u outside the %llu bytes produced (input byte %llu)", off,
                    (unsigned long long)(base + (uint64_t)(op - buf)), (unsigned long long)(ibase + (uint64_t)(ip - src)));
            r = (int)GPUFEED_ERR_CODEC;
            break;
        }
        if (total - base - (uint64_t)(op - buf) < len) {
            gf__fmt(msg, cap, "snappy: copy of %u bytes overruns the %llu-byte output (input byte %llu)", len, (unsigned long long)total,
                    (unsigned long long)(ibase + (uint64_t)(ip - src)));
            r = (int)GPUFEED_ERR_CODEC;
            break;
        }
        if (off > (size_t)(op - buf)) { ip = at; r = GF__SNAP_HISTORY; break; }
        if ((size_t)(oend - op) < len) { ip = at; r = GF__SNAP_ROOM; break; }
        {
            const uint8_t *from = op - off;
            if (off >= 8 && (size_t)(oend - op) >= (size_t)len + 8) {
                uint8_t *e = op + len;
                while (op < e) { memcpy(op, from, 8); op += 8; from += 8; }
                op = e;
            } else {
                uint32_t i;
                for (i = 0; i < len; i++) op[i] = from[i];
                op += len;
            }
        }
    }
    z->ip = ip; z->op = op;
    if (r || ip < iend) return r;
    if (z->more) return GF__SNAP_INPUT;
    if (base + (uint64_t)(op - buf) != total) {
        gf__fmt(msg, cap, "snappy: stream produced %llu bytes, header said %llu", (unsigned long long)(base + (uint64_t)(op - buf)),
                (unsigned long long)total);
        return (int)GPUFEED_ERR_CODEC;
    }
    return GPUFEED_OK;
trunc:
    if (z->more) { z->ip = at; z->op = op; return GF__SNAP_INPUT; }
    z->ip = ip; z->op = op;
    gf__fmt(msg, cap, "snappy: stream truncated at input byte %llu", (unsigned long long)(ibase + (uint64_t)(ip - src)));
    return (int)GPUFEED_ERR_CODEC;
bad_lit:
    z->ip = ip; z->op = op;
    gf__fmt(msg, cap, "snappy: literal overruns the %llu-byte output (input byte %llu)", (unsigned long long)total,
            (unsigned long long)(ibase + (uint64_t)(ip - src)));
    return (int)GPUFEED_ERR_CODEC;
}

/* A whole stream into dst (exactly dn bytes) */
static gpufeed_result gf__snappy(const uint8_t *src, size_t n, uint8_t *dst, size_t dn, char *msg, size_t cap)
{
    gf__snap z;
    gpufeed_result r = gf__snappy_begin(&z, src, n, dn, msg, cap);
    if (r) return r;
    z.buf = z.op = dst; z.end = dst + dn;
    switch (gf__snappy_run(&z, NULL, msg, cap)) {
    case GPUFEED_OK: return GPUFEED_OK;
    case GF__SNAP_ROOM: case GF__SNAP_HISTORY: /* cannot happen with the whole page in dst */
        gf__fmt(msg, cap, "snappy: stream overruns its %llu-byte output", (unsigned long long)dn);
        return GPUFEED_ERR_CODEC;
    default: return GPUFEED_ERR_CODEC;
    }
}
#endif


#ifndef GPUFEED_NO_LZ4
/* LZ4 block format: sequences of (token, literals, offset, match).
   The fast loop runs while at least 32 bytes of input and output remain:
   short literal runs and matches are then copied 16 / 8 bytes at a time
   (over-copying into bytes that are written again next); near either end
   every copy is exact. Overlapping matches (offset < 8) are widened to a
   multiple of the offset that is >= 8 after their first 8 bytes. */
#ifdef GPUFEED_USE_LIBLZ4
/* opt-in: the system liblz4 decodes each block (link -llz4) */
static gpufeed_result gf__lz4_block(const uint8_t *src, size_t n, uint8_t *dst, size_t dn, size_t *produced, char *msg, size_t cap)
{
    int r;
    if (n > 0x7E000000u || dn > 0x7E000000u) {
        gf__fmt(msg, cap, "lz4: block of %llu bytes is too large for liblz4", (unsigned long long)n);
        return GPUFEED_ERR_CODEC;
    }
    r = LZ4_decompress_safe((const char *)src, (char *)dst, (int)n, (int)dn);
    if (r < 0) { gf__fmt(msg, cap, "lz4: liblz4 rejects the block (corrupt at input byte %d)", -r - 1); return GPUFEED_ERR_CODEC; }
    *produced = (size_t)r;
    return GPUFEED_OK;
}
#else
/* LZ4 keeps its own match copy rather than ZSTD's gf__zmatch_wild: with
   that one, LZ4_RAW in tools/bench/bench_codecs.c fell from about 1.05x to 0.86x
   of liblz4 (LZ4's matches are short and mostly far back). */
static void gf__lz4_match(uint8_t *op, size_t off, size_t mlen)
{
    /* the caller guarantees mlen + 8 bytes of room after op */
    const uint8_t *from = op - off;
    uint8_t *e = op + mlen;
    if (off < 8) {
        size_t i;
        for (i = 0; i < 8; i++) op[i] = from[i];
        op += 8;
        from = op - (off * ((8 + off - 1) / off));
    }
    while (op < e) { memcpy(op, from, 8); op += 8; from += 8; }
}

static gpufeed_result gf__lz4_block(const uint8_t *src, size_t n, uint8_t *dst, size_t dn, size_t *produced, char *msg, size_t cap)
{
    const uint8_t *ip = src, *iend = src + n;
    uint8_t *op = dst, *oend = dst + dn;
    while (ip < iend) {
        unsigned tok = *ip++;
        size_t lit = tok >> 4, mlen;
        size_t off;
        if (lit < 15 && iend - ip >= 32 && oend - op >= 32) {
            memcpy(op, ip, 16); op += lit; ip += lit;       /* short literals */
        } else {
            if (lit == 15) {
                unsigned b;
                do { if (ip >= iend) goto trunc; b = *ip++; lit += b; } while (b == 255);
            }
            if ((size_t)(iend - ip) < lit) goto trunc;
            if ((size_t)(oend - op) < lit) {
                gf__fmt(msg, cap, "lz4: literals overrun the %llu-byte output", (unsigned long long)dn);
                return GPUFEED_ERR_CODEC;
            }
            memcpy(op, ip, lit); op += lit; ip += lit;
            if (ip == iend) break; /* the last sequence has literals only */
        }
        if (iend - ip < 2) goto trunc;
        off = gf__ld16(ip); ip += 2;
        mlen = (tok & 15) + 4;
        if ((tok & 15) == 15) {
            unsigned b;
            do { if (ip >= iend) goto trunc; b = *ip++; mlen += b; } while (b == 255);
        }
        if (off == 0 || off > (size_t)(op - dst)) {
            gf__fmt(msg, cap, "lz4: match offset %u outside the %llu bytes produced", (unsigned)off, (unsigned long long)(op - dst));
            return GPUFEED_ERR_CODEC;
        }
        if ((size_t)(oend - op) < mlen) { gf__fmt(msg, cap, "lz4: match overruns the %llu-byte output", (unsigned long long)dn); return GPUFEED_ERR_CODEC; }
        if ((size_t)(oend - op) >= mlen + 16) {
            gf__lz4_match(op, off, mlen);
            op += mlen;
        } else {
            const uint8_t *from = op - off;
            size_t i;
            for (i = 0; i < mlen; i++) op[i] = from[i];
            op += mlen;
        }
    }
    *produced = (size_t)(op - dst);
    return GPUFEED_OK;
trunc:
    gf__fmt(msg, cap, "lz4: block truncated at input byte %llu", (unsigned long long)(ip - src));
    return GPUFEED_ERR_CODEC;
}
#endif /* GPUFEED_USE_LIBLZ4 */

static uint32_t gf__ld32be(const uint8_t *p) { return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]; }

/* LZ4_RAW: one block that fills the page exactly */
static gpufeed_result gf__lz4_raw(const uint8_t *src, size_t n, uint8_t *dst, size_t dn, char *msg, size_t cap)
{
    size_t got = 0;
    gpufeed_result r = gf__lz4_block(src, n, dst, dn, &got, msg, cap);
    if (r) return r;
    if (got != dn) {
        gf__fmt(msg, cap, "lz4: block produced %llu bytes, page header says %llu", (unsigned long long)got, (unsigned long long)dn);
        return GPUFEED_ERR_CODEC;
    }
    return GPUFEED_OK;
}

/* the legacy LZ4 codec: Hadoop framing (4-byte big-endian uncompressed and
   compressed lengths per frame, several frames), or a raw block when the
   framing does not parse */
static gpufeed_result gf__lz4_hadoop(const uint8_t *src, size_t n, uint8_t *dst, size_t dn, char *msg, size_t cap)
{
    const uint8_t *ip = src, *iend = src + n;
    size_t done = 0;
    int framed = n >= 8;
    while (framed && ip < iend) {
        uint32_t ul, cl;
        size_t got = 0;
        char m2[GPUFEED_ERROR_MAX];
        if (iend - ip < 8) { framed = 0; break; }
        ul = gf__ld32be(ip); cl = gf__ld32be(ip + 4);
        if (cl > (size_t)(iend - ip) - 8 || ul > dn - done) { framed = 0; break; }
        if (gf__lz4_block(ip + 8, cl, dst + done, ul, &got, m2, sizeof m2) || got != ul) { framed = 0; break; }
        done += ul; ip += 8 + (size_t)cl;
    }
    if (framed && done == dn) return GPUFEED_OK;
    return gf__lz4_raw(src, n, dst, dn, msg, cap);
}
#endif

#if defined(GPUFEED_USE_LIBSNAPPY) && !defined(GPUFEED_NO_SNAPPY)
/* opt-in: the system libsnappy instead of gf__snappy (link -lsnappy) */
static gpufeed_result gf__snappy_sys(const uint8_t *src, size_t n, uint8_t *dst, size_t dn, char *msg, size_t cap)
{
    size_t ulen = 0, got = dn;
    if (snappy_uncompressed_length((const char *)src, n, &ulen) != SNAPPY_OK) {
        gf__fmt(msg, cap, "snappy: libsnappy cannot read the length header");
        return GPUFEED_ERR_CODEC;
    }
    if (ulen != dn) {
        gf__fmt(msg, cap, "snappy: stream holds %llu bytes, page header says %llu", (unsigned long long)ulen, (unsigned long long)dn);
        return GPUFEED_ERR_CODEC;
    }
    if (snappy_uncompress((const char *)src, n, (char *)dst, &got) != SNAPPY_OK || got != dn) {
        gf__fmt(msg, cap, "snappy: libsnappy rejects the stream as corrupt");
        return GPUFEED_ERR_CODEC;
    }
    return GPUFEED_OK;
}
#define gf__snappy gf__snappy_sys
#endif

#ifdef GPUFEED_USE_BROTLI
/* BROTLI goes to the system libbrotlidec (link -lbrotlidec): gpufeed has no
   brotli decoder of its own, because brotli's built-in 122 KiB dictionary
   would more than double the size of this header for a codec that few
   Parquet writers use. */
static gpufeed_result gf__brotli_sys(const uint8_t *src, size_t n, uint8_t *dst, size_t dn, char *msg, size_t cap)
{
    BrotliDecoderState *s = BrotliDecoderCreateInstance(NULL, NULL, NULL);
    size_t ain = n, aout = dn;
    const uint8_t *in = src;
    uint8_t *out = dst;
    BrotliDecoderResult r;
    if (!s) { gf__fmt(msg, cap, "brotli: out of memory for the decoder"); return GPUFEED_ERR_OUT_OF_MEMORY; }
    r = BrotliDecoderDecompressStream(s, &ain, &in, &aout, &out, NULL);
    if (r == BROTLI_DECODER_RESULT_ERROR) {
        gf__fmt(msg, cap, "brotli: corrupt stream (%s) at input byte %llu", BrotliDecoderErrorString(BrotliDecoderGetErrorCode(s)),
                (unsigned long long)(n - ain));
        BrotliDecoderDestroyInstance(s); return GPUFEED_ERR_CODEC;
    }
    if (r == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT) {
        gf__fmt(msg, cap, "brotli: stream holds more than the page header's %llu bytes", (unsigned long long)dn);
        BrotliDecoderDestroyInstance(s); return GPUFEED_ERR_CODEC;
    }
    BrotliDecoderDestroyInstance(s);
    if (r != BROTLI_DECODER_RESULT_SUCCESS) {
        gf__fmt(msg, cap, "brotli: stream truncated after %llu of %llu bytes", (unsigned long long)(dn - aout), (unsigned long long)dn);
        return GPUFEED_ERR_CODEC;
    }
    if (aout != 0) {
        gf__fmt(msg, cap, "brotli: produced %llu bytes, page header says %llu", (unsigned long long)(dn - aout), (unsigned long long)dn);
        return GPUFEED_ERR_CODEC;
    }
    return GPUFEED_OK;
}
#endif

#if !defined(GPUFEED_NO_GZIP) && !defined(GPUFEED_USE_ZLIB)
/* GZIP: DEFLATE (RFC 1951) in one or more gzip members (RFC 1952), or in a
   zlib stream (RFC 1950) under the same codec id. The page is in memory and
   the output buffer holds exactly the page, so there is no sliding window:
   back-references read the output itself, within the current member.

   Huffman codes are read LSB-first from a 64-bit bit buffer through a
   primary table indexed by the next GF__INF_LBITS (literal/length) or
   GF__INF_DBITS (distance) bits; a longer code's primary entry points to a
   second-level table indexed by the bits that follow. A table entry: */
#define GF__HE_LIT 0x8000u  /* a literal, the byte in bits 16-31 */
#define GF__HE_EOB 0x4000u  /* end of block */
#define GF__HE_SUB 0x2000u  /* second-level table at bits 16-31, its index bits in 8-11 */
#define GF__HE_BAD 0x1000u  /* a symbol the format forbids, or no code at all */
/* otherwise a length or distance, its base in bits 16-31 (a code-length
   symbol: the symbol). Bits 0-7: the bits to take, the code's and then its
   extra bits' (a GF__HE_SUB entry: the primary bits); bits 8-11: the code's
   own (the extra bits' value starts there). */
#define GF__INF_LBITS 10
#define GF__INF_DBITS 8
#define GF__INF_CBITS 7
/* Second-level tables: one of 2^s entries covers a complete subtree of
   depth s, which holds at least s+1 codes, and 2^s/(s+1) grows with s; so
   286 literal/length codes of at most 15 bits (s <= 5) need at most
   47 * 32 + 8 entries, and 30 distance codes (s <= 7) 3 * 128 + 32. */
#define GF__INF_LSIZE ((1u << GF__INF_LBITS) + 47u * 32u + 8u)
#define GF__INF_DSIZE ((1u << GF__INF_DBITS) + 3u * 128u + 32u)

typedef struct gf__inf {
    const uint8_t *src, *in, *iend;    /* the page body, read cursor, end */
    uint8_t *dst, *out, *oend, *mstart; /* the page, write cursor, end, member start */
    uint64_t bb;                       /* bit buffer: the next bits, LSB first */
    unsigned nb;                       /* valid bits in bb */
    unsigned over;                     /* zero bytes fed past the input's end */
    unsigned member;                   /* 1-based gzip member, 0 for a zlib stream */
    int fixed;                         /* lt/dt hold the fixed code */
    char *msg;
    size_t cap;
    uint32_t lt[GF__INF_LSIZE];
    uint32_t dt[GF__INF_DSIZE];
    uint32_t ct[1u << GF__INF_CBITS];
} gf__inf;

static const uint16_t gf__inf_lbase[29] = { 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
    35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258 };
static const uint8_t gf__inf_lextra[29] = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
    3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0 };
static const uint16_t gf__inf_dbase[30] = { 1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193,
    257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577 };
static const uint8_t gf__inf_dextra[30] = { 0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6,
    7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13 };
/* the order code-length code lengths come in (RFC 1951 3.2.7) */
static const uint8_t gf__inf_clorder[19] = { 16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15 };

enum { GF__HC_LITLEN, GF__HC_DIST, GF__HC_CLEN };

/* the table entry of a symbol before its code is known: the extra bits
   count in bits 0-7 */
static uint32_t gf__inf_entry(int kind, unsigned sym)
{
    if (kind == GF__HC_LITLEN) {
        if (sym < 256) return GF__HE_LIT | (sym << 16);
        if (sym == 256) return GF__HE_EOB;
        if (sym <= 285) return ((uint32_t)gf__inf_lbase[sym - 257] << 16) | gf__inf_lextra[sym - 257];
        return GF__HE_BAD;                       /* 286, 287 */
    }
    if (kind == GF__HC_DIST) {
        if (sym < 30) return ((uint32_t)gf__inf_dbase[sym] << 16) | gf__inf_dextra[sym];
        return GF__HE_BAD;                       /* 30, 31 */
    }
    return sym << 16;
}

static unsigned gf__inf_rev(unsigned code, unsigned len)
{
    code = ((code & 0x5555u) << 1) | ((code >> 1) & 0x5555u);
    code = ((code & 0x3333u) << 2) | ((code >> 2) & 0x3333u);
    code = ((code & 0x0F0Fu) << 4) | ((code >> 4) & 0x0F0Fu);
    code = ((code & 0x00FFu) << 8) | ((code >> 8) & 0x00FFu);
    return code >> (16 - len);
}

/* Builds the decoding table of the canonical Huffman code with these code
   lengths (RFC 1951 3.2.2). Returns 0; 1 over-subscribed; 2 incomplete
   (a code with one symbol of length 1, or no symbols at all, is built and
   reported as 3 and 4: the caller decides); 5 the table would not fit. */
static int gf__inf_build(uint32_t *tab, unsigned cap, unsigned root, const uint8_t *lens, unsigned nsym, int kind)
{
    unsigned count[16], next[16], rem[16];
    uint16_t sorted[288];
    unsigned i, len, max = 0, used = 0, code, nsub;
    unsigned cur_prefix = ~0u, cur_base = 0, cur_bits = 0;
    int left = 1, ret = 0;
    memset(count, 0, sizeof count);
    for (i = 0; i < nsym; i++) count[lens[i]]++;
    count[0] = 0;
    for (len = 1; len <= 15; len++) {
        left = left * 2 - (int)count[len];
        if (left < 0) return 1;
        if (count[len]) { max = len; used += count[len]; }
    }
    if (left > 0) {
        if (used > 1 || (used == 1 && max != 1)) return 2;
        ret = used ? 3 : 4;
        for (i = 0; i < (1u << root); i++) tab[i] = GF__HE_BAD | 1u;
        if (!used) return ret;
    }

    /* symbols sorted by (length, symbol): the canonical code order */
    next[1] = 0;
    for (len = 1; len < 15; len++) next[len + 1] = next[len] + count[len];
    for (i = 0; i < nsym; i++) if (lens[i]) sorted[next[lens[i]]++] = (uint16_t)i;
    memcpy(rem, count, sizeof rem);
    nsub = 1u << root;
    code = 0;
    len = 0;
    for (i = 0; i < used; i++) {
        unsigned sym = sorted[i], l = lens[sym], rev, step, j;
        uint32_t e = gf__inf_entry(kind, sym);
        if (l != len) { code <<= l - len; len = l; }
        rev = gf__inf_rev(code, l);
        if (l <= root) {
            e = (e + l) | (l << 8);
            for (j = rev, step = 1u << l; j < (1u << root); j += step) tab[j] = e;
        } else {
            unsigned prefix = rev & ((1u << root) - 1);
            if (prefix != cur_prefix) {
                /* a new second-level table: as deep as the codes that fill
                   this prefix's subtree, taken in canonical order, reach */
                unsigned bits = l - root, d = l;
                int avail = 1 << bits;
                for (;;) {
                    avail -= (int)rem[d];
                    if (avail <= 0 || d == max) break;
                    d++; bits++; avail *= 2;
                }
                if (nsub + (1u << bits) > cap) return 5;
                cur_prefix = prefix; cur_base = nsub; cur_bits = bits;
                tab[prefix] = GF__HE_SUB | (cur_base << 16) | (bits << 8) | root;
                nsub += 1u << bits;
            }
            e = (e + l - root) | ((l - root) << 8);
            for (j = rev >> root, step = 1u << (l - root); j < (1u << cur_bits); j += step) tab[cur_base + j] = e;
        }
        rem[l]--;
        code++;
    }
    return ret;
}

/* "gzip: <what> (member N, input byte B)" */
static gpufeed_result gf__inf_fail(gf__inf *s, gpufeed_result code, const char *fmt, ...) GF__PRINTF(3, 4);
static gpufeed_result gf__inf_fail(gf__inf *s, gpufeed_result code, const char *fmt, ...)
{
    char what[256];
    unsigned long long pos = (unsigned long long)(s->in - s->src) + s->over - s->nb / 8;
    va_list ap;
    va_start(ap, fmt); gf__vfmt(what, sizeof what, fmt, ap); va_end(ap);
    if (s->member) gf__fmt(s->msg, s->cap, "gzip: %s (member %u, input byte %llu)", what, s->member, pos);
    else gf__fmt(s->msg, s->cap, "gzip: %s (zlib stream, input byte %llu)", what, pos);
    return code;
}

/* bits past the input's end were used: the stream is truncated */
#define GF__INF_SHORT(s) ((s)->over * 8 > (s)->nb)
static gpufeed_result gf__inf_truncated(gf__inf *s)
{
    return gf__inf_fail(s, GPUFEED_ERR_CODEC, "truncated: the input ends inside the deflate data");
}
/* an error found while decoding: when the bits that led to it came from
   past the input's end, the real error is the truncation */
static gpufeed_result gf__inf_bad(gf__inf *s, const char *what)
{
    if (GF__INF_SHORT(s)) return gf__inf_truncated(s);
    return gf__inf_fail(s, GPUFEED_ERR_CODEC, "%s", what);
}

/* tops the bit buffer up to more than 56 bits; zero bytes past the end */
static void gf__inf_fill(gf__inf *s)
{
    while (s->nb <= 56) {
        if (s->in < s->iend) s->bb |= (uint64_t)*s->in++ << s->nb;
        else s->over++;
        s->nb += 8;
    }
}
static unsigned gf__inf_take(gf__inf *s, unsigned n)
{
    unsigned v;
    if (s->nb < n) gf__inf_fill(s);
    v = (unsigned)(s->bb & ((1u << n) - 1));
    s->bb >>= n; s->nb -= n;
    return v;
}
/* to the next byte boundary; the cursor goes back over whole bytes still
   in the buffer. 0, or -1 when bits past the input's end were used. */
static int gf__inf_align(gf__inf *s)
{
    unsigned whole;
    s->bb >>= s->nb & 7; s->nb -= s->nb & 7;
    whole = s->nb / 8;
    if (whole < s->over) return -1;
    s->in -= whole - s->over;
    s->bb = 0; s->nb = 0; s->over = 0;
    return 0;
}

static gpufeed_result gf__inf_too_much(gf__inf *s)
{
    if (GF__INF_SHORT(s)) return gf__inf_truncated(s);
    return gf__inf_fail(s, GPUFEED_ERR_CODEC, "the stream holds more than the %llu bytes the page header says",
                        (unsigned long long)(s->oend - s->dst));
}

/* the Huffman-coded data of one block, up to its end-of-block code */
static gpufeed_result gf__inf_codes(gf__inf *s)
{
    const uint32_t *lt = s->lt, *dt = s->dt;
    const uint8_t *in = s->in, *iend = s->iend;
    uint8_t *out = s->out, *oend = s->oend, *mstart = s->mstart;
    uint64_t bb = s->bb, saved;
    unsigned nb = s->nb, over = s->over;
    const uint32_t lmask = (1u << GF__INF_LBITS) - 1, dmask = (1u << GF__INF_DBITS) - 1;
    uint32_t e, d, len, dist;
    const char *why;
    gpufeed_result r;

    /* more than 55 bits in bb, enough for a length and a distance with their
       extra bits (15 + 5 + 15 + 13); past the input's end zero bytes, counted
       in `over` (using any of them means the input is truncated) */
#define GF__INF_REFILL() do { \
        if (GF__LIKELY(iend - in >= 8)) { bb |= gf__ld64(in) << nb; in += (63 - nb) >> 3; nb |= 56; } \
        else { \
            while (nb <= 56) { if (in < iend) bb |= (uint64_t)*in++ << nb; else over++; nb += 8; } \
            if (over * 8 > nb) goto truncated; \
        } } while (0)
    GF__INF_REFILL();
    e = lt[bb & lmask];
    for (;;) {
        if (GF__UNLIKELY(e & GF__HE_SUB)) {
            bb >>= GF__INF_LBITS; nb -= GF__INF_LBITS;
            e = lt[(e >> 16) + ((uint32_t)bb & ((1u << ((e >> 8) & 15)) - 1))];
        }
        saved = bb;
        bb >>= e & 0xFF; nb -= e & 0xFF;
        if (e & GF__HE_LIT) {
            if (GF__UNLIKELY(out == oend)) goto too_much;
            *out++ = (uint8_t)(e >> 16);
            GF__INF_REFILL();
            e = lt[bb & lmask];
            continue;
        }
        if (GF__UNLIKELY(e & (GF__HE_EOB | GF__HE_BAD))) {
            if (e & GF__HE_EOB) break;
            why = "invalid literal/length code (286, 287, or a code the block does not define)";
            goto bad;
        }
        len = (e >> 16) + (uint32_t)((saved & ((1u << (e & 0xFF)) - 1)) >> ((e >> 8) & 15));
        d = dt[bb & dmask];
        if (GF__UNLIKELY(d & GF__HE_SUB)) {
            bb >>= GF__INF_DBITS; nb -= GF__INF_DBITS;
            d = dt[(d >> 16) + ((uint32_t)bb & ((1u << ((d >> 8) & 15)) - 1))];
        }
        saved = bb;
        bb >>= d & 0xFF; nb -= d & 0xFF;
        if (GF__UNLIKELY(d & GF__HE_BAD)) {
            why = "invalid distance code (30, 31, or a code the block does not define)";
            goto bad;
        }
        dist = (d >> 16) + (uint32_t)((saved & ((1u << (d & 0xFF)) - 1)) >> ((d >> 8) & 15));
        GF__INF_REFILL();
        e = lt[bb & lmask];                  /* the next code's lookup overlaps the copy */
        if (GF__UNLIKELY(dist > (size_t)(out - mstart))) goto far;
        if (GF__LIKELY((size_t)(oend - out) >= (size_t)len + 16)) {
            uint8_t *end = out + len;
            const uint8_t *from = out - dist;
            if (dist >= 8) {
                memcpy(out, from, 8); memcpy(out + 8, from + 8, 8);
                if (len > 16) {
                    out += 16; from += 16;
                    do { memcpy(out, from, 8); out += 8; from += 8; } while (out < end);
                }
            } else if (dist == 1) {
                memset(out, *from, len);
            } else {
                /* 8-byte moves, each right in its first dist bytes */
                do { uint64_t v = gf__ld64(from); memcpy(out, &v, 8); out += dist; from += dist; } while (out < end);
            }
            out = end;
        } else {
            const uint8_t *from = out - dist;
            uint32_t k;
            if (GF__UNLIKELY((size_t)(oend - out) < len)) goto too_much;
            for (k = 0; k < len; k++) out[k] = from[k];
            out += len;
        }
    }
#undef GF__INF_REFILL
    s->bb = bb; s->nb = nb; s->in = in; s->out = out; s->over = over;
    if (GF__INF_SHORT(s)) return gf__inf_truncated(s);
    return GPUFEED_OK;
truncated:
    s->bb = bb; s->nb = nb; s->in = in; s->out = out; s->over = over;
    return gf__inf_truncated(s);
too_much:
    s->bb = bb; s->nb = nb; s->in = in; s->out = out; s->over = over;
    return gf__inf_too_much(s);
bad:
    s->bb = bb; s->nb = nb; s->in = in; s->out = out; s->over = over;
    return gf__inf_bad(s, why);
far:
    s->bb = bb; s->nb = nb; s->in = in; s->out = out; s->over = over;
    if (GF__INF_SHORT(s)) return gf__inf_truncated(s);
    r = gf__inf_fail(s, GPUFEED_ERR_CODEC, "distance %u reaches back before the member's first byte (%llu bytes written)",
                     (unsigned)dist, (unsigned long long)(out - mstart));
    return r;
}

static gpufeed_result gf__inf_fixed(gf__inf *s)
{
    uint8_t lens[288];
    memset(lens, 8, 144); memset(lens + 144, 9, 112); memset(lens + 256, 7, 24); memset(lens + 280, 8, 8);
    if (gf__inf_build(s->lt, GF__INF_LSIZE, GF__INF_LBITS, lens, 288, GF__HC_LITLEN)) return GPUFEED_ERR_CODEC;
    memset(lens, 5, 32);
    if (gf__inf_build(s->dt, GF__INF_DSIZE, GF__INF_DBITS, lens, 32, GF__HC_DIST)) return GPUFEED_ERR_CODEC;
    s->fixed = 1;
    return GPUFEED_OK;
}

static const char *gf__inf_why(int r)
{
    return r == 1 ? "over-subscribed" : r == 2 ? "incomplete" : r == 4 ? "empty" : "too large";
}

/* the code lengths of a dynamic block (RFC 1951 3.2.7) into lt and dt */
static gpufeed_result gf__inf_dynamic(gf__inf *s)
{
    uint8_t clens[19], lens[286 + 30];
    unsigned hlit, hdist, hclen, i, n;
    int r;
    s->fixed = 0;
    hlit = gf__inf_take(s, 5) + 257;
    hdist = gf__inf_take(s, 5) + 1;
    hclen = gf__inf_take(s, 4) + 4;
    if (GF__INF_SHORT(s)) return gf__inf_truncated(s);
    if (hlit > 286) return gf__inf_fail(s, GPUFEED_ERR_CODEC, "dynamic block header says %u literal/length codes, at most 286", hlit);
    if (hdist > 30) return gf__inf_fail(s, GPUFEED_ERR_CODEC, "dynamic block header says %u distance codes, at most 30", hdist);
    memset(clens, 0, sizeof clens);
    for (i = 0; i < hclen; i++) clens[gf__inf_clorder[i]] = (uint8_t)gf__inf_take(s, 3);
    if (GF__INF_SHORT(s)) return gf__inf_truncated(s);
    r = gf__inf_build(s->ct, 1u << GF__INF_CBITS, GF__INF_CBITS, clens, 19, GF__HC_CLEN);
    if (r) return gf__inf_fail(s, GPUFEED_ERR_CODEC, "the code-length code is %s", gf__inf_why(r == 3 ? 2 : r));
    n = hlit + hdist;
    i = 0;
    while (i < n) {
        uint32_t e;
        unsigned sym, rep, val;
        if (s->nb < GF__INF_CBITS + 7) gf__inf_fill(s);
        e = s->ct[s->bb & ((1u << GF__INF_CBITS) - 1)];
        s->bb >>= e & 0xFF; s->nb -= e & 0xFF;
        sym = e >> 16;
        if (sym < 16) { lens[i++] = (uint8_t)sym; continue; }
        if (sym == 16) {
            if (i == 0) return gf__inf_bad(s, "code length 16 (repeat the previous length) with no previous length");
            val = lens[i - 1];
            rep = 3 + (unsigned)(s->bb & 3); s->bb >>= 2; s->nb -= 2;
        } else if (sym == 17) {
            val = 0; rep = 3 + (unsigned)(s->bb & 7); s->bb >>= 3; s->nb -= 3;
        } else {
            val = 0; rep = 11 + (unsigned)(s->bb & 127); s->bb >>= 7; s->nb -= 7;
        }
        if (rep > n - i) {
            if (GF__INF_SHORT(s)) return gf__inf_truncated(s);
            return gf__inf_fail(s, GPUFEED_ERR_CODEC, "code-length repeat of %u runs past the %u lengths (at %u)", rep, n, i);
        }
        memset(lens + i, (int)val, rep);
        i += rep;
    }
    if (GF__INF_SHORT(s)) return gf__inf_truncated(s);
    if (lens[256] == 0) return gf__inf_fail(s, GPUFEED_ERR_CODEC, "the block has no end-of-block code");
    r = gf__inf_build(s->lt, GF__INF_LSIZE, GF__INF_LBITS, lens, hlit, GF__HC_LITLEN);
    if (r && r != 3) return gf__inf_fail(s, GPUFEED_ERR_CODEC, "the literal/length code is %s", gf__inf_why(r));

    /* RFC 1951 3.2.7: one distance code of length 1 or none at all is fine */
    r = gf__inf_build(s->dt, GF__INF_DSIZE, GF__INF_DBITS, lens + hlit, hdist, GF__HC_DIST);
    if (r && r != 3 && r != 4) return gf__inf_fail(s, GPUFEED_ERR_CODEC, "the distance code is %s", gf__inf_why(r));
    return GPUFEED_OK;
}

/* one DEFLATE stream starting at s->in; on success s->in is just past it */
static gpufeed_result gf__inflate(gf__inf *s)
{
    unsigned final;
    gpufeed_result r;
    s->bb = 0; s->nb = 0; s->over = 0;
    do {
        unsigned type;
        final = gf__inf_take(s, 1);
        type = gf__inf_take(s, 2);
        if (GF__INF_SHORT(s)) return gf__inf_truncated(s);
        if (type == 0) {
            unsigned len, nlen;
            if (gf__inf_align(s)) return gf__inf_truncated(s);
            if (s->iend - s->in < 4) return gf__inf_fail(s, GPUFEED_ERR_CODEC, "truncated: the input ends inside a stored block's header");
            len = gf__ld16(s->in); nlen = gf__ld16(s->in + 2);
            if (len != (~nlen & 0xFFFFu)) return gf__inf_fail(s, GPUFEED_ERR_CODEC, "stored block length %u does not match its complement NLEN %u", len, nlen);
            s->in += 4;
            if ((size_t)(s->iend - s->in) < len)
                return gf__inf_fail(s, GPUFEED_ERR_CODEC, "truncated: a stored block of %u bytes, %llu left in the input", len,
                                    (unsigned long long)(s->iend - s->in));
            if ((size_t)(s->oend - s->out) < len) return gf__inf_too_much(s);
            memcpy(s->out, s->in, len);
            s->out += len; s->in += len;
            continue;
        }
        if (type == 3) return gf__inf_fail(s, GPUFEED_ERR_CODEC, "reserved block type 3");
        if (type == 1) { if (!s->fixed && (r = gf__inf_fixed(s)) != GPUFEED_OK) return gf__inf_fail(s, r, "internal: fixed code"); }
        else if ((r = gf__inf_dynamic(s)) != GPUFEED_OK) return r;
        if ((r = gf__inf_codes(s)) != GPUFEED_OK) return r;
    } while (!final);
    if (gf__inf_align(s)) return gf__inf_truncated(s);
    return GPUFEED_OK;
}

static uint32_t gf__adler32(const uint8_t *p, size_t n)
{
    uint32_t a = 1, b = 0;
    while (n) {
        size_t k = n < 5552 ? n : 5552;   /* the most bytes before b can overflow */
        n -= k;
        while (k >= 8) {
            a += p[0]; b += a; a += p[1]; b += a; a += p[2]; b += a; a += p[3]; b += a;
            a += p[4]; b += a; a += p[5]; b += a; a += p[6]; b += a; a += p[7]; b += a;
            p += 8; k -= 8;
        }
        while (k--) { a += *p++; b += a; }
        a %= 65521u; b %= 65521u;
    }
    return (b << 16) | a;
}

/* a gzip member's header (RFC 1952 2.3); s->in just past it */
static gpufeed_result gf__gzip_header(gf__inf *s, const gf__crc_tab *crc)
{
    const uint8_t *h = s->in, *p = s->in + 10, *end = s->iend;
    unsigned flg;
    if (end - h < 10) return gf__inf_fail(s, GPUFEED_ERR_CODEC, "truncated: the input ends inside the gzip header");
    if (h[2] != 8) return gf__inf_fail(s, GPUFEED_ERR_CODEC, "compression method %u, only 8 (deflate) exists", h[2]);
    flg = h[3];
    if (flg & 0xE0) return gf__inf_fail(s, GPUFEED_ERR_CODEC, "reserved header flag bits set (FLG 0x%02x)", flg);
    if (flg & 4) {                                             /* FEXTRA */
        size_t xlen;
        if (end - p < 2) goto trunc;
        xlen = gf__ld16(p); p += 2;
        if ((size_t)(end - p) < xlen) goto trunc;
        p += xlen;
    }
    if (flg & 8) {                                             /* FNAME */
        const uint8_t *z = (const uint8_t *)memchr(p, 0, (size_t)(end - p));
        if (!z) goto trunc;
        p = z + 1;
    }
    if (flg & 16) {                                            /* FCOMMENT */
        const uint8_t *z = (const uint8_t *)memchr(p, 0, (size_t)(end - p));
        if (!z) goto trunc;
        p = z + 1;
    }
    if (flg & 2) {                                             /* FHCRC */
        uint32_t want;
        if (end - p < 2) goto trunc;
        want = gf__crc_run(crc, 0, h, (size_t)(p - h)) & 0xFFFFu;
        if (gf__ld16(p) != want)
            return gf__inf_fail(s, GPUFEED_ERR_CHECKSUM, "header CRC16 0x%04x, the header's is 0x%04x", (unsigned)gf__ld16(p), (unsigned)want);
        p += 2;
    }
    s->in = p;
    return GPUFEED_OK;
trunc:
    return gf__inf_fail(s, GPUFEED_ERR_CODEC, "truncated: the input ends inside the gzip header");
}

static gpufeed_result gf__gzip(const uint8_t *src, size_t n, uint8_t *dst, size_t dn, char *msg, size_t cap)
{
    gf__inf s;
    gf__crc_tab crc;
    int crc_ready = 0;
    gpufeed_result r;
    s.src = src; s.in = src; s.iend = src + n;
    s.dst = dst; s.out = dst; s.oend = dst + dn; s.mstart = dst;
    s.bb = 0; s.nb = 0; s.over = 0; s.member = 1; s.fixed = 0;
    s.msg = msg; s.cap = cap;
    if (n == 0) return gf__inf_fail(&s, GPUFEED_ERR_CODEC, "empty page body, no gzip member");
    for (;;) {
        const uint8_t *p = s.in;
        size_t left = (size_t)(s.iend - p);
        s.mstart = s.out;

        /* a gzip magic, or the start of one where the input ends */
        if (p[0] == 0x1F && (left < 2 || p[1] == 0x8B)) {
            uint32_t want_crc, want_size, got_crc;
            if (!crc_ready) { gf__crc_init(&crc); crc_ready = 1; }
            if ((r = gf__gzip_header(&s, &crc)) != GPUFEED_OK) return r;
            if ((r = gf__inflate(&s)) != GPUFEED_OK) return r;
            if (s.iend - s.in < 8) return gf__inf_fail(&s, GPUFEED_ERR_CODEC, "truncated: the input ends inside the gzip trailer");
            want_crc = gf__ld32(s.in); want_size = gf__ld32(s.in + 4);
            got_crc = gf__crc_run(&crc, 0, s.mstart, (size_t)(s.out - s.mstart));
            if (got_crc != want_crc)
                return gf__inf_fail(&s, GPUFEED_ERR_CHECKSUM, "CRC-32 of the output is 0x%08x, the trailer says 0x%08x", (unsigned)got_crc, (unsigned)want_crc);
            if ((uint32_t)(s.out - s.mstart) != want_size)
                return gf__inf_fail(&s, GPUFEED_ERR_CHECKSUM, "the member produced %llu bytes, its ISIZE says %u (mod 2^32)",
                                    (unsigned long long)(s.out - s.mstart), (unsigned)want_size);
            s.in += 8;
        } else if (s.member == 1 && (p[0] & 0x0F) == 8 && (p[0] >> 4) <= 7 && (left < 2 || ((unsigned)p[0] * 256u + p[1]) % 31u == 0)) {
            uint32_t want, got;
            s.member = 0;
            if (left < 2) return gf__inf_fail(&s, GPUFEED_ERR_CODEC, "truncated: the input ends inside the zlib header");
            if (p[1] & 0x20) return gf__inf_fail(&s, GPUFEED_ERR_CODEC, "the zlib stream needs a preset dictionary (FDICT), which a page cannot have");
            s.in += 2;
            if ((r = gf__inflate(&s)) != GPUFEED_OK) return r;
            if (s.iend - s.in < 4) return gf__inf_fail(&s, GPUFEED_ERR_CODEC, "truncated: the input ends inside the zlib Adler-32 trailer");
            want = ((uint32_t)s.in[0] << 24) | ((uint32_t)s.in[1] << 16) | ((uint32_t)s.in[2] << 8) | s.in[3];
            got = gf__adler32(s.mstart, (size_t)(s.out - s.mstart));
            if (got != want)
                return gf__inf_fail(&s, GPUFEED_ERR_CHECKSUM, "Adler-32 of the output is 0x%08x, the trailer says 0x%08x", (unsigned)got, (unsigned)want);
            s.in += 4;
        } else if (s.member == 1) {
            return gf__inf_fail(&s, GPUFEED_ERR_CODEC, "neither a gzip member nor a zlib stream (first bytes 0x%02x 0x%02x)", p[0], left >= 2 ? p[1] : 0u);
        } else {
            return gf__inf_fail(&s, GPUFEED_ERR_CODEC, "%llu bytes after the last member are neither zero padding nor another gzip member",
                                (unsigned long long)left);
        }

        /* the input ends, or only zero padding is left, or another member */
        {
            const uint8_t *q = s.in;
            while (q < s.iend && *q == 0) q++;
            if (q == s.iend) break;
        }
        if (s.member == 0)
            return gf__inf_fail(&s, GPUFEED_ERR_CODEC, "%llu bytes after the zlib stream are not zero padding", (unsigned long long)(s.iend - s.in));
        s.member++;
    }
    if (s.out != s.oend)
        return gf__inf_fail(&s, GPUFEED_ERR_CODEC, "the stream produced %llu bytes, the page header says %llu",
                            (unsigned long long)(s.out - s.dst), (unsigned long long)dn);
    return GPUFEED_OK;
}
#endif

#ifdef GPUFEED_USE_ZLIB
/* GZIP through the system zlib (GPUFEED_USE_ZLIB, link -lz): gzip members
   and zlib streams told apart by zlib itself, members one after another,
   zero padding after the last. */
static gpufeed_result gf__gzip(const uint8_t *src, size_t n, uint8_t *dst, size_t dn, char *msg, size_t cap)
{
    z_stream z;
    size_t in_done = 0, out_done = 0;
    unsigned member = 1;
    unsigned char spill[1];
    gpufeed_result r = GPUFEED_OK;
    if (n == 0) { gf__fmt(msg, cap, "gzip: empty page body, no gzip member (member 1, input byte 0)"); return GPUFEED_ERR_CODEC; }
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 32) != Z_OK) { gf__fmt(msg, cap, "gzip: zlib inflateInit2 failed"); return GPUFEED_ERR_OUT_OF_MEMORY; }
    for (;;) {
        size_t in_left = n - in_done, out_left = dn - out_done, used_in, made;
        uInt give_in = (uInt)(in_left < UINT_MAX ? in_left : UINT_MAX);
        uInt give_out = out_left == 0 ? 1u : (uInt)(out_left < UINT_MAX ? out_left : UINT_MAX);
        int ret, full = out_left == 0;
        z.next_in = (Bytef *)(src + in_done);          /* zlib only reads it */
        z.avail_in = give_in;
        z.next_out = full ? spill : dst + out_done;   /* a full page: any more output is too much */
        z.avail_out = give_out;
        ret = inflate(&z, Z_NO_FLUSH);
        used_in = give_in - z.avail_in;
        made = give_out - z.avail_out;
        in_done += used_in;
        if (full && made) {
            gf__fmt(msg, cap, "gzip: the stream holds more than the %llu bytes the page header says (member %u, input byte %llu)",
                    (unsigned long long)dn, member, (unsigned long long)in_done);
            r = GPUFEED_ERR_CODEC; break;
        }
        if (!full) out_done += made;
        if (ret == Z_STREAM_END) {
            size_t k = in_done;
            while (k < n && src[k] == 0) k++;
            if (k == n) break;                                  /* zero padding, or the end */
            if (inflateReset(&z) != Z_OK) { gf__fmt(msg, cap, "gzip: zlib inflateReset failed"); r = GPUFEED_ERR_CODEC; break; }
            member++;
            continue;
        }
        if (ret == Z_OK && (used_in || made)) continue;
        if (ret == Z_NEED_DICT) {
            gf__fmt(msg, cap, "gzip: the zlib stream needs a preset dictionary (FDICT), which a page cannot have (input byte %llu)",
                    (unsigned long long)in_done);
            r = GPUFEED_ERR_CODEC; break;
        }
        if (ret == Z_MEM_ERROR) { gf__fmt(msg, cap, "gzip: zlib is out of memory"); r = GPUFEED_ERR_OUT_OF_MEMORY; break; }
        if (ret == Z_DATA_ERROR) {
            const char *why = z.msg ? z.msg : "corrupt data";
            r = (!strcmp(why, "incorrect data check") || !strcmp(why, "incorrect length check") || !strcmp(why, "header crc mismatch"))
                ? GPUFEED_ERR_CHECKSUM : GPUFEED_ERR_CODEC;
            gf__fmt(msg, cap, "gzip: zlib: %s (member %u, input byte %llu)", why, member, (unsigned long long)in_done);
            break;
        }
        if (in_done == n) {
            gf__fmt(msg, cap, "gzip: truncated: the input ends inside member %u (input byte %llu)", member, (unsigned long long)in_done);
            r = GPUFEED_ERR_CODEC; break;
        }
        gf__fmt(msg, cap, "gzip: zlib inflate returned %d (member %u, input byte %llu)", ret, member, (unsigned long long)in_done);
        r = GPUFEED_ERR_CODEC; break;
    }
    inflateEnd(&z);
    if (r == GPUFEED_OK && out_done != dn) {
        gf__fmt(msg, cap, "gzip: the stream produced %llu bytes, the page header says %llu", (unsigned long long)out_done, (unsigned long long)dn);
        r = GPUFEED_ERR_CODEC;
    }
    return r;
}
#endif

#ifndef GPUFEED_NO_ZSTD
/* ZSTD (RFC 8878). A page body is one or more frames, skippable frames
   among them, whose output fills the page exactly. Frames never reach into
   each other; dictionaries are not supported. */
#define GF__ZSTD_MAGIC 0xFD2FB528u
#define GF__ZSTD_BLOCK_MAX (128u << 10)
#define GF__ZSTD_NO_SIZE UINT64_MAX

typedef struct gf__zhdr {
    uint64_t window;            /* Window_Size (the content size for single-segment frames) */
    uint64_t fcs;               /* Frame_Content_Size, GF__ZSTD_NO_SIZE when absent */
    int checksum;               /* a 4-byte content checksum ends the frame */
    size_t size;                /* magic number + frame header bytes */
} gf__zhdr;

/* Parses the magic number and frame header at p (n bytes left); `at` and
   `frame` place messages. */
static gpufeed_result gf__zstd_header(const uint8_t *p, size_t n, gf__zhdr *h, unsigned frame, unsigned long long at, char *msg, size_t cap)
{
    static const uint8_t did_size[4] = { 0, 1, 2, 4 }, fcs_size[4] = { 0, 2, 4, 8 };
    unsigned fhd, single, fsz, dsz;
    uint32_t dict = 0;
    const uint8_t *q;
    size_t need;
    if (n < 5) {
        gf__fmt(msg, cap, "zstd: frame %u at input byte %llu: frame header truncated (%llu bytes left)", frame, at, (unsigned long long)n);
        return GPUFEED_ERR_CODEC;
    }
    fhd = p[4];
    single = (fhd >> 5) & 1;
    fsz = (fhd >> 6) ? fcs_size[fhd >> 6] : single;
    dsz = did_size[fhd & 3];
    if (fhd & 8) {
        gf__fmt(msg, cap, "zstd: frame %u at input byte %llu: reserved bit set in the frame header descriptor 0x%02x", frame, at, fhd);
        return GPUFEED_ERR_CODEC;
    }
    need = 5 + (single ? 0u : 1u) + dsz + fsz;
    if (n < need) {
        gf__fmt(msg, cap, "zstd: frame %u at input byte %llu: frame header truncated (%llu of %llu bytes)", frame, at, (unsigned long long)n,
                (unsigned long long)need);
        return GPUFEED_ERR_CODEC;
    }
    q = p + 5;
    h->window = 0;
    if (!single) {
        unsigned wlog = 10 + (*q >> 3);
        h->window = (1ull << wlog) + ((1ull << wlog) >> 3) * (*q & 7);
        q++;
    }
    if (dsz == 1) dict = *q;
    else if (dsz == 2) dict = gf__ld16(q);
    else if (dsz == 4) dict = gf__ld32(q);
    q += dsz;
    if (dict != 0) { /* 0 means "no dictionary" */
        gf__fmt(msg, cap, "zstd: frame %u at input byte %llu: ZSTD dictionaries are not supported (the frame needs dictionary %lu)", frame, at,
                (unsigned long)dict);
        return GPUFEED_ERR_UNSUPPORTED;
    }
    if (fsz == 1) h->fcs = *q;
    else if (fsz == 2) h->fcs = (uint64_t)gf__ld16(q) + 256;
    else if (fsz == 4) h->fcs = gf__ld32(q);
    else if (fsz == 8) h->fcs = gf__ld64(q);
    else h->fcs = GF__ZSTD_NO_SIZE;
    if (single) h->window = h->fcs;
    if (h->window > (uint64_t)GPUFEED_MAX_ZSTD_WINDOW) {
        gf__fmt(msg, cap, "zstd: frame %u at input byte %llu: window of %llu bytes exceeds GPUFEED_MAX_ZSTD_WINDOW (%llu)", frame, at,
                (unsigned long long)h->window, (unsigned long long)GPUFEED_MAX_ZSTD_WINDOW);
        return GPUFEED_ERR_LIMIT;
    }
    h->checksum = (fhd >> 2) & 1;
    h->size = need;
    return GPUFEED_OK;
}

/* A skippable frame at p (magic 0x184D2A50..5F): its total size in *skip. */
static gpufeed_result gf__zstd_skippable(const uint8_t *p, size_t n, size_t *skip, unsigned frame, unsigned long long at, char *msg, size_t cap)
{
    uint32_t len;
    if (n < 8) {
        gf__fmt(msg, cap, "zstd: frame %u at input byte %llu: skippable frame header truncated (%llu of 8 bytes)", frame, at, (unsigned long long)n);
        return GPUFEED_ERR_CODEC;
    }
    len = gf__ld32(p + 4);
    if (len > n - 8) {
        gf__fmt(msg, cap, "zstd: frame %u at input byte %llu: skippable frame of %lu bytes runs past the input (%llu bytes left)", frame, at,
                (unsigned long)len, (unsigned long long)(n - 8));
        return GPUFEED_ERR_CODEC;
    }
    *skip = 8 + (size_t)len;
    return GPUFEED_OK;
}

#ifdef GPUFEED_USE_LIBZSTD
/* GPUFEED_USE_LIBZSTD: the frames go through the system libzstd, one at a
   time, after our own header checks (window limit, dictionaries). */
static gpufeed_result gf__zstd(const uint8_t *src, size_t n, uint8_t *dst, size_t dn, char *msg, size_t cap)
{
    ZSTD_DCtx *dc = NULL;
    size_t ip = 0, op = 0;
    unsigned frame = 0;
    gpufeed_result r = GPUFEED_OK;
    for (; ip < n; frame++) {
        size_t fsize, got;
        gf__zhdr h;
        if (n - ip >= 4 && (gf__ld32(src + ip) & 0xFFFFFFF0u) == 0x184D2A50u) {
            r = gf__zstd_skippable(src + ip, n - ip, &fsize, frame, (unsigned long long)ip, msg, cap);
            if (r) break;
            ip += fsize;
            continue;
        }
        if (n - ip < 4 || gf__ld32(src + ip) != GF__ZSTD_MAGIC) {
            gf__fmt(msg, cap, "zstd: input byte %llu: not a zstd frame (%llu bytes left%s)", (unsigned long long)ip, (unsigned long long)(n - ip),
                    n - ip < 4 ? "" : ", bad magic number");
            r = GPUFEED_ERR_CODEC;
            break;
        }
        r = gf__zstd_header(src + ip, n - ip, &h, frame, (unsigned long long)ip, msg, cap);
        if (r) break;
        fsize = ZSTD_findFrameCompressedSize(src + ip, n - ip);
        if (ZSTD_isError(fsize)) {
            gf__fmt(msg, cap, "zstd: frame %u at input byte %llu: %s", frame, (unsigned long long)ip, ZSTD_getErrorName(fsize));
            r = GPUFEED_ERR_CODEC;
            break;
        }
        if (!dc && !(dc = ZSTD_createDCtx())) { gf__fmt(msg, cap, "zstd: out of memory for a decompression context"); r = GPUFEED_ERR_OUT_OF_MEMORY; break; }
        got = ZSTD_decompressDCtx(dc, dst + op, dn - op, src + ip, fsize);
        if (ZSTD_isError(got)) {
            if (ZSTD_getErrorCode(got) == ZSTD_error_dstSize_tooSmall)
                gf__fmt(msg, cap, "zstd: frame %u at input byte %llu: output exceeds the %llu-byte page (%llu bytes produced before it)", frame,
                        (unsigned long long)ip, (unsigned long long)dn, (unsigned long long)op);
            else
                gf__fmt(msg, cap, "zstd: frame %u at input byte %llu: %s", frame, (unsigned long long)ip, ZSTD_getErrorName(got));
            r = ZSTD_getErrorCode(got) == ZSTD_error_checksum_wrong ? GPUFEED_ERR_CHECKSUM : GPUFEED_ERR_CODEC;
            break;
        }
        ip += fsize; op += got;
    }
    if (dc) ZSTD_freeDCtx(dc);
    if (!r && op != dn) {
        gf__fmt(msg, cap, "zstd: frames produced %llu bytes, page header says %llu", (unsigned long long)op, (unsigned long long)dn);
        r = GPUFEED_ERR_CODEC;
    }
    return r;
}
#else
/* Our decoder. dst is the whole page and doubles as the window, so nothing
   is allocated: the entropy tables live on the stack (22 KiB), and a
   compressed block's literals are decoded into dst beyond the block's own
   output, where the sequences that consume them never catch up with them. */

static unsigned gf__hibit32(uint32_t v) /* v > 0 */
{
#if defined(__GNUC__) || defined(__clang__)
    return 31u - (unsigned)__builtin_clz(v);
#else
    unsigned r = 0;
    while (v >>= 1) r++;
    return r;
#endif
}

/* one state of a sequence FSE table, packed in 64 bits: the code's
   baseline (bits 0-31) and extra bits (32-39), then the bits to read for the
   next state (40-47) and its baseline (48-63) */
typedef uint64_t gf__zent;
#define GF__ZENT(base, extra, nbits, next) ((uint64_t)(base) | ((uint64_t)(extra) << 32) | ((uint64_t)(nbits) << 40) | ((uint64_t)(next) << 48))

typedef struct gf__zdec {
    gf__zent ll[1 << 9], ml[1 << 9], of[1 << 8];    /* literal length, match length, offset */
    uint16_t huf[1 << 11];      /* symbol | code bits << 8, indexed by the next 11 bits (whatever the code's depth) */
    uint32_t huf2[1 << 11];     /* the same for up to two symbols: sym1 | sym2 << 8 | bits << 16 | count << 24 */
    unsigned ll_log, ml_log, of_log;
    int have_ll, have_ml, have_of, have_huf, have_huf2; /* for Repeat_Mode and treeless literals */
    size_t rep[3];              /* repeat offsets */
    const uint8_t *src;         /* for messages */
    size_t dn;
    unsigned frame, block;
    char *msg;
    size_t cap;
} gf__zdec;

static gpufeed_result gf__zfail(const gf__zdec *z, const uint8_t *at, const char *fmt, ...) GF__PRINTF(3, 4);
static gpufeed_result gf__zfail(const gf__zdec *z, const uint8_t *at, const char *fmt, ...)
{
    char what[300];
    va_list ap;
    va_start(ap, fmt); gf__vfmt(what, sizeof what, fmt, ap); va_end(ap);
    gf__fmt(z->msg, z->cap, "zstd: frame %u, block %u (input byte %llu): %s", z->frame, z->block, (unsigned long long)(at - z->src), what);
    return GPUFEED_ERR_CODEC;
}

/* A backward bitstream (FSE and Huffman streams): read from the end to the
   start, `bits` holds the 8 bytes at ptr and the top `used` of them are
   consumed. A stream shorter than 8 bytes is copied into pad. A stream is
   read exactly when ptr == start and used == 64; more than 64 means bits
   were read from before its start (they read as garbage, never out of
   bounds, and fail that final check). */
typedef struct gf__zbits {
    uint64_t bits;
    unsigned used;
    const uint8_t *ptr, *start;
    uint8_t pad[8];
} gf__zbits;

static int gf__zbits_init(gf__zbits *b, const uint8_t *p, size_t n)
{
    if (n == 0 || p[n - 1] == 0) return -1;     /* no end mark */
    if (n >= 8) {
        b->start = p; b->ptr = p + n - 8; b->used = 0;
    } else {
        memcpy(b->pad, p, n); memset(b->pad + n, 0, 8 - n);
        b->start = b->ptr = b->pad; b->used = (unsigned)(8 - n) * 8;
    }
    b->bits = gf__ld64(b->ptr);
    b->used += 8 - gf__hibit32(p[n - 1]);       /* the zero padding and the end mark */
    return 0;
}
static void gf__zbits_fill(gf__zbits *b)
{
    size_t step = b->used >> 3, have = (size_t)(b->ptr - b->start);
    if (step > have) step = have;
    b->ptr -= step; b->used -= (unsigned)step * 8;
    b->bits = gf__ld64(b->ptr);
}
static int gf__zbits_done(gf__zbits *b)
{
    gf__zbits_fill(b);
    return b->ptr == b->start && b->used == 64;
}

/* An FSE table description (forward bitstream) at p[0..n): normalized
   counts into norm[0..*nsym), the accuracy log into *log. Returns the bytes
   used, 0 when the description is corrupt. */
static size_t gf__zfse_norm(const uint8_t *p, size_t n, int16_t *norm, unsigned max_sym, unsigned max_log, unsigned *log, unsigned *nsym)
{
    size_t pos = 4, nbits = n * 8;
    int left;
    unsigned sym = 0;
    uint8_t tail[8];
    if (n == 0) return 0;
    *log = (p[0] & 15) + 5;
    if (*log > max_log) return 0;
    left = 1 << *log;
    while (left > 0) {
        uint32_t v, t, low, val;
        size_t at = pos >> 3;
        int prob;
        if (pos >= nbits) return 0;
        if (n - at >= 8) v = (uint32_t)(gf__ld64(p + at) >> (pos & 7));
        else { memset(tail, 0, 8); memcpy(tail, p + at, n - at); v = (uint32_t)(gf__ld64(tail) >> (pos & 7)); }
        t = gf__hibit32((uint32_t)left + 1) + 1;        /* values 0..left+1 fit in t bits */
        low = (1u << t) - 1 - ((uint32_t)left + 1);     /* this many of them take t - 1 bits */
        val = v & ((1u << (t - 1)) - 1);
        if (val < low) pos += t - 1;
        else {
            val = v & ((1u << t) - 1);
            if (val >= (1u << (t - 1))) val -= low;
            pos += t;
        }
        prob = (int)val - 1;
        if (sym > max_sym || prob > left) return 0;
        norm[sym++] = (int16_t)prob;
        left -= prob < 0 ? 1 : prob;
        if (prob == 0) { /* 2-bit repeat flags: more zero probabilities */
            for (;;) {
                unsigned r, k;
                if (pos + 2 > nbits) return 0;
                r = (p[pos >> 3] >> (pos & 7)) & 3;
                if ((pos & 7) == 7) r = (p[pos >> 3] >> 7) | ((pos + 1 < nbits ? (p[(pos >> 3) + 1] & 1u) : 0u) << 1);
                pos += 2;
                for (k = 0; k < r; k++) {
                    if (sym > max_sym) return 0;
                    norm[sym++] = 0;
                }
                if (r != 3) break;
            }
        }
        if (pos > nbits) return 0;
    }
    *nsym = sym;
    return (pos + 7) >> 3;
}

/* Spreads normalized counts over the 1 << log states (RFC 8878 4.1.1):
   the symbol, the bits to read and the baseline of the next state. */
static int gf__zfse_build(const int16_t *norm, unsigned nsym, unsigned log, uint8_t *sym, uint8_t *nb, uint16_t *next)
{
    uint16_t cnt[256];
    unsigned size = 1u << log, mask = size - 1, step = (size >> 1) + (size >> 3) + 3, pos = 0, s, u;
    int high = (int)size - 1, i;
    for (s = 0; s < nsym; s++) {
        if (norm[s] == -1) { sym[high--] = (uint8_t)s; cnt[s] = 1; }
        else cnt[s] = (uint16_t)norm[s];
    }
    for (s = 0; s < nsym; s++)
        for (i = 0; i < norm[s]; i++) {
            sym[pos] = (uint8_t)s;
            do pos = (pos + step) & mask; while ((int)pos > high);
        }
    if (pos != 0) return -1;
    for (u = 0; u < size; u++) {
        unsigned x = cnt[sym[u]]++, k = log - gf__hibit32(x);
        nb[u] = (uint8_t)k;
        next[u] = (uint16_t)((x << k) - size);
    }
    return 0;
}

/* literal length and match length codes: baseline and extra bits */
static const uint32_t gf__zll_base[36] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 20, 22, 24, 28, 32, 40,
                                           48, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536 };
static const uint8_t gf__zll_bits[36] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3,
                                          4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
static const uint32_t gf__zml_base[53] = { 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26,
                                           27, 28, 29, 30, 31, 32, 33, 34, 35, 37, 39, 41, 43, 47, 51, 59, 67, 83, 99, 131, 259,
                                           515, 1027, 2051, 4099, 8195, 16387, 32771, 65539 };
static const uint8_t gf__zml_bits[53] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                          1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
/* the predefined distributions */
static const int16_t gf__zll_def[36] = { 4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1,
                                         -1, -1, -1, -1 };
static const int16_t gf__zml_def[53] = { 1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                         1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1 };
static const int16_t gf__zof_def[29] = { 1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1 };

/* The code tables of one sequence symbol type (kind 0 literal lengths,
   1 offsets, 2 match lengths) for compression mode `mode`; a description
   is read from *pip. */
static gpufeed_result gf__zseq_table(gf__zdec *z, int kind, unsigned mode, const uint8_t **pip, const uint8_t *end)
{
    static const char *const names[3] = { "literal length", "offset", "match length" };
    static const unsigned max_sym[3] = { 35, 31, 52 }, max_log[3] = { 9, 8, 9 }, def_log[3] = { 6, 5, 6 };
    gf__zent *t = kind == 0 ? z->ll : kind == 1 ? z->of : z->ml;
    int *have = kind == 0 ? &z->have_ll : kind == 1 ? &z->have_of : &z->have_ml;
    unsigned *logp = kind == 0 ? &z->ll_log : kind == 1 ? &z->of_log : &z->ml_log;
    int16_t norm[53];
    uint8_t sym[512], nb[512];
    uint16_t next[512];
    unsigned log = 0, nsym = 0, u, size;
    const uint8_t *ip = *pip;
    switch (mode) {
    case 0: /* predefined */
        log = def_log[kind];
        nsym = kind == 0 ? 36 : kind == 1 ? 29 : 53;
        memcpy(norm, kind == 0 ? gf__zll_def : kind == 1 ? gf__zof_def : gf__zml_def, nsym * sizeof(int16_t));
        break;
    case 1: /* RLE: one symbol */
        if (ip >= end) return gf__zfail(z, ip, "%s table truncated", names[kind]);
        if (*ip > max_sym[kind]) return gf__zfail(z, ip, "%s code %u out of range", names[kind], *ip);
        sym[0] = *ip++; nb[0] = 0; next[0] = 0;
        break;
    case 2: { /* FSE table description */
        size_t used = gf__zfse_norm(ip, (size_t)(end - ip), norm, max_sym[kind], max_log[kind], &log, &nsym);
        if (!used) return gf__zfail(z, ip, "corrupt %s table description", names[kind]);
        ip += used;
        break;
    }
    default: /* repeat */
        if (!*have) return gf__zfail(z, ip, "%s table repeated, but none was defined earlier in the frame", names[kind]);
        return GPUFEED_OK;
    }
    if (mode != 1 && gf__zfse_build(norm, nsym, log, sym, nb, next))
        return gf__zfail(z, *pip, "corrupt %s table description", names[kind]);
    size = 1u << log;
    for (u = 0; u < size; u++) {
        unsigned s = sym[u];
        if (kind == 0) t[u] = GF__ZENT(gf__zll_base[s], gf__zll_bits[s], nb[u], next[u]);
        else if (kind == 1) t[u] = GF__ZENT(1u << s, s, nb[u], next[u]);
        else t[u] = GF__ZENT(gf__zml_base[s], gf__zml_bits[s], nb[u], next[u]);
    }
    *have = 1;
    *logp = log;
    *pip = ip;
    return GPUFEED_OK;
}

/* Huffman weights compressed with FSE (two interleaved states, bits past
   the start read as zeros, RFC 8878 4.2.1.2). Returns the number of
   weights, 0 when corrupt. */
static unsigned gf__zhuf_fse_weights(const uint8_t *p, size_t n, uint8_t *w)
{
    int16_t norm[256];
    uint8_t sym[64], nb[64];
    uint16_t next[64];
    unsigned log, nsym, s1, s2, cnt = 0;
    long pos;
    size_t hd = gf__zfse_norm(p, n, norm, 255, 6, &log, &nsym);
    if (!hd || gf__zfse_build(norm, nsym, log, sym, nb, next)) return 0;
    p += hd; n -= hd;
    if (n == 0 || p[n - 1] == 0) return 0;
    pos = (long)(n - 1) * 8 + (long)gf__hibit32(p[n - 1]);
#define GF__ZRB(k, out) do { unsigned k_ = (k); long i_; (out) = 0; \
        for (i_ = pos - 1; i_ >= pos - (long)k_; i_--) (out) = ((out) << 1) | (i_ >= 0 ? (unsigned)(p[i_ >> 3] >> (i_ & 7)) & 1u : 0u); \
        pos -= (long)k_; } while (0)
    GF__ZRB(log, s1);
    GF__ZRB(log, s2);
    if (pos < 0) return 0;
    for (;;) {
        unsigned v;
        if (cnt >= 255) return 0;
        w[cnt++] = sym[s1]; GF__ZRB(nb[s1], v); s1 = next[s1] + v;
        if (pos < 0) { if (cnt >= 255) return 0; w[cnt++] = sym[s2]; break; }
        if (cnt >= 255) return 0;
        w[cnt++] = sym[s2]; GF__ZRB(nb[s2], v); s2 = next[s2] + v;
        if (pos < 0) { if (cnt >= 255) return 0; w[cnt++] = sym[s1]; break; }
    }
#undef GF__ZRB
    return cnt;
}

/* The Huffman tree description at p[0..n) into z->huf; bytes used in *used. */
static gpufeed_result gf__zhuf_table(gf__zdec *z, const uint8_t *p, size_t n, size_t *used)
{
    uint8_t w[256];
    unsigned nw, i, hb, sum = 0, mb, rest, wt;
    uint32_t start[13], cnt[13];
    if (n < 1) return gf__zfail(z, p, "Huffman tree description missing");
    hb = p[0];
    if (hb >= 128) { /* 4-bit weights */
        nw = hb - 127;
        if (n - 1 < (nw + 1) / 2) return gf__zfail(z, p, "Huffman tree description truncated");
        for (i = 0; i < nw; i++) w[i] = (uint8_t)((i & 1) ? p[1 + i / 2] & 15 : p[1 + i / 2] >> 4);
        *used = 1 + (nw + 1) / 2;
    } else {
        if (hb == 0 || n - 1 < hb) return gf__zfail(z, p, "Huffman tree description truncated or empty");
        nw = gf__zhuf_fse_weights(p + 1, hb, w);
        if (!nw) return gf__zfail(z, p, "corrupt FSE-compressed Huffman weights");
        *used = 1 + hb;
    }
    for (i = 0; i < nw; i++) {
        if (w[i] > 11) return gf__zfail(z, p, "Huffman weight %u of symbol %u exceeds 11", w[i], i);
        if (w[i]) sum += 1u << (w[i] - 1);
    }
    if (sum == 0) return gf__zfail(z, p, "Huffman weights are all zero");
    mb = gf__hibit32(sum) + 1;
    rest = (1u << mb) - sum;
    if (mb > 11 || (rest & (rest - 1))) return gf__zfail(z, p, "Huffman weights do not form a prefix code of at most 11 bits");
    w[nw] = (uint8_t)(gf__hibit32(rest) + 1);
    memset(cnt, 0, sizeof cnt);
    for (i = 0; i <= nw; i++) cnt[w[i]]++;

    /* codes in order of weight, then symbol; a code of b bits fills
       2^(11 - b) entries, so that the next 11 bits index the table */
    start[1] = 0;
    for (wt = 1; wt < 12; wt++) start[wt + 1] = start[wt] + (cnt[wt] << (wt - 1 + 11 - mb));
    for (i = 0; i <= nw; i++) {
        uint32_t k, len;
        uint16_t e;
        if (!w[i]) continue;
        len = 1u << (w[i] + 10u - mb);
        e = (uint16_t)(i | ((mb + 1 - w[i]) << 8));
        for (k = 0; k < len; k++) z->huf[start[w[i]] + k] = e;
        start[w[i]] += len;
    }
    z->have_huf = 1;
    z->have_huf2 = 0;
    return GPUFEED_OK;
}

/* The two-symbol table: where the first code leaves room in the next
   11 bits for a whole second one, one lookup gives both. */
static void gf__zhuf2_build(gf__zdec *z)
{
    unsigned mb = 11, size = 1u << mb, mask = size - 1, u;
    for (u = 0; u < size; u++) {
        uint16_t a = z->huf[u], b2;
        unsigned l1 = a >> 8;
        b2 = z->huf[(u << l1) & mask];
        if (l1 < mb && (unsigned)(b2 >> 8) <= mb - l1)
            z->huf2[u] = (uint32_t)(a & 0xFF) | ((uint32_t)(b2 & 0xFF) << 8) | ((l1 + (b2 >> 8)) << 16) | (2u << 24);
        else
            z->huf2[u] = (uint32_t)(a & 0xFF) | (l1 << 16) | (1u << 24);
    }
    z->have_huf2 = 1;
}

/* Finishes a Huffman stream symbol by symbol; 0 when it ends exactly. */
static int gf__zhuf_tail(const gf__zdec *z, gf__zbits *b, uint8_t *o, uint8_t *e)
{
    const uint16_t *dt = z->huf;
    while (o < e) {
        uint16_t v;
        gf__zbits_fill(b);
        if (b->used >= 64) return -1;
        v = dt[(b->bits << b->used) >> 53];
        *o++ = (uint8_t)v; b->used += v >> 8;
    }
    return gf__zbits_done(b) ? 0 : -1;
}

static unsigned gf__ctz64(uint64_t v) /* v > 0 */
{
#if defined(__GNUC__) || defined(__clang__)
    return (unsigned)__builtin_ctzll(v);
#else
    unsigned r = 0;
    while (!(v & 1)) { v >>= 1; r++; }
    return r;
#endif
}

/* The fast Huffman loops keep a stream in one register c: the unread bits
   on top, then a marker bit, then zeros, so that the marker's position
   counts the bits read since the 8 bytes at ip were loaded. The marker
   covers the lowest bit of those 8 bytes, which is never needed before the
   next load: a round reads at most 4 x 11 bits. */
#define GF__ZHIN(c, ip, b) do { (ip) = (b).ptr; (c) = (gf__ld64(ip) | 1) << (b).used; } while (0)
#define GF__ZHFILL(c, ip) do { unsigned t_ = gf__ctz64(c); (ip) -= t_ >> 3; (c) = (gf__ld64(ip) | 1) << (t_ & 7); } while (0)
#define GF__ZHOUT(c, ip, b) do { (b).ptr = (ip); (b).used = gf__ctz64(c); (b).bits = gf__ld64(ip); } while (0)
/* one symbol */
#define GF__ZH1(c, o) do { uint16_t v_ = dt[(c) >> 53]; *(o)++ = (uint8_t)v_; (c) <<= v_ >> 8; } while (0)
/* one or two symbols; two bytes are stored either way */
#define GF__ZH2(c, o) do { uint32_t v_ = d2[(c) >> 53]; uint16_t s_ = (uint16_t)v_; memcpy((o), &s_, 2); \
        (o) += v_ >> 24; (c) <<= (v_ >> 16) & 0xFF; } while (0)

static gpufeed_result gf__zhuf_1(gf__zdec *z, const uint8_t *p, size_t n, uint8_t *o, size_t cnt)
{
    const uint16_t *dt = z->huf;
    uint8_t *e = o + cnt;
    gf__zbits b;
    if (gf__zbits_init(&b, p, n)) return gf__zfail(z, p, "Huffman stream lacks its end mark");
    if (b.ptr - b.start >= 8) {
        const uint8_t *ip;
        uint64_t c;
        GF__ZHIN(c, ip, b);
        while (e - o >= 4 && ip - b.start >= 8) {
            GF__ZH1(c, o); GF__ZH1(c, o); GF__ZH1(c, o); GF__ZH1(c, o);
            GF__ZHFILL(c, ip);
        }
        GF__ZHOUT(c, ip, b);
    }
    if (gf__zhuf_tail(z, &b, o, e))
        return gf__zfail(z, p, "corrupt Huffman stream (%llu bytes for %llu literals)", (unsigned long long)n, (unsigned long long)cnt);
    return GPUFEED_OK;
}

/* four streams; the jump table gives the sizes of the first three */
static gpufeed_result gf__zhuf_4(gf__zdec *z, const uint8_t *p, size_t n, uint8_t *o, size_t cnt)
{
    const uint16_t *dt = z->huf;
    const uint32_t *d2 = z->huf2;
    size_t l1, l2, l3, seg = (cnt + 3) / 4;
    gf__zbits b1, b2, b3, b4;
    uint8_t *o1 = o, *o2 = o + seg, *o3 = o2 + seg, *o4 = o3 + seg, *e1 = o + seg, *e2 = o + 2 * seg, *e3 = o + 3 * seg, *e4 = o + cnt;
    const uint8_t *s;
    if (n < 10 || cnt < 6) return gf__zfail(z, p, "4-stream literals too short (%llu bytes for %llu literals)", (unsigned long long)n, (unsigned long long)cnt);
    l1 = gf__ld16(p); l2 = gf__ld16(p + 2); l3 = gf__ld16(p + 4);
    if (l1 + l2 + l3 >= n - 6) return gf__zfail(z, p, "Huffman jump table (%llu + %llu + %llu bytes) overruns the %llu-byte literals",
                                                 (unsigned long long)l1, (unsigned long long)l2, (unsigned long long)l3, (unsigned long long)n);
    s = p + 6;
    if (gf__zbits_init(&b1, s, l1) || gf__zbits_init(&b2, s + l1, l2) || gf__zbits_init(&b3, s + l1 + l2, l3) ||
        gf__zbits_init(&b4, s + l1 + l2 + l3, n - 6 - l1 - l2 - l3))
        return gf__zfail(z, p, "a Huffman stream lacks its end mark");
    if (b1.ptr - b1.start >= 8 && b2.ptr - b2.start >= 8 && b3.ptr - b3.start >= 8 && b4.ptr - b4.start >= 8) {
        const uint8_t *i1, *i2, *i3, *i4;
        uint64_t c1, c2, c3, c4;
        GF__ZHIN(c1, i1, b1); GF__ZHIN(c2, i2, b2); GF__ZHIN(c3, i3, b3); GF__ZHIN(c4, i4, b4);
        if (cnt >= 4096) { /* two symbols a lookup pay for building the table */
            if (!z->have_huf2) gf__zhuf2_build(z);
            while (e1 - o1 >= 8 && e2 - o2 >= 8 && e3 - o3 >= 8 && e4 - o4 >= 8 &&
                   i1 - b1.start >= 8 && i2 - b2.start >= 8 && i3 - b3.start >= 8 && i4 - b4.start >= 8) {
                GF__ZH2(c1, o1); GF__ZH2(c2, o2); GF__ZH2(c3, o3); GF__ZH2(c4, o4);
                GF__ZH2(c1, o1); GF__ZH2(c2, o2); GF__ZH2(c3, o3); GF__ZH2(c4, o4);
                GF__ZH2(c1, o1); GF__ZH2(c2, o2); GF__ZH2(c3, o3); GF__ZH2(c4, o4);
                GF__ZH2(c1, o1); GF__ZH2(c2, o2); GF__ZH2(c3, o3); GF__ZH2(c4, o4);
                GF__ZHFILL(c1, i1); GF__ZHFILL(c2, i2); GF__ZHFILL(c3, i3); GF__ZHFILL(c4, i4);
            }
        }
        while (e1 - o1 >= 4 && e2 - o2 >= 4 && e3 - o3 >= 4 && e4 - o4 >= 4 &&
               i1 - b1.start >= 8 && i2 - b2.start >= 8 && i3 - b3.start >= 8 && i4 - b4.start >= 8) {
            GF__ZH1(c1, o1); GF__ZH1(c2, o2); GF__ZH1(c3, o3); GF__ZH1(c4, o4);
            GF__ZH1(c1, o1); GF__ZH1(c2, o2); GF__ZH1(c3, o3); GF__ZH1(c4, o4);
            GF__ZH1(c1, o1); GF__ZH1(c2, o2); GF__ZH1(c3, o3); GF__ZH1(c4, o4);
            GF__ZH1(c1, o1); GF__ZH1(c2, o2); GF__ZH1(c3, o3); GF__ZH1(c4, o4);
            GF__ZHFILL(c1, i1); GF__ZHFILL(c2, i2); GF__ZHFILL(c3, i3); GF__ZHFILL(c4, i4);
        }
        GF__ZHOUT(c1, i1, b1); GF__ZHOUT(c2, i2, b2); GF__ZHOUT(c3, i3, b3); GF__ZHOUT(c4, i4, b4);
    }
    if (gf__zhuf_tail(z, &b1, o1, e1) || gf__zhuf_tail(z, &b2, o2, e2) || gf__zhuf_tail(z, &b3, o3, e3) || gf__zhuf_tail(z, &b4, o4, e4))
        return gf__zfail(z, p, "corrupt Huffman streams (%llu bytes for %llu literals)", (unsigned long long)n, (unsigned long long)cnt);
    return GPUFEED_OK;
}
#undef GF__ZHIN
#undef GF__ZHFILL
#undef GF__ZHOUT
#undef GF__ZH1
#undef GF__ZH2

/* The literals section at *pip (the block ends at bend) into dst just
   before litend; at most cap literals. */
static gpufeed_result gf__zlits(gf__zdec *z, const uint8_t **pip, const uint8_t *bend, uint8_t *litend, size_t cap, int page_limited, uint8_t **lit,
                                size_t *nlit)
{
    const uint8_t *ip = *pip;
    size_t avail = (size_t)(bend - ip), hs, regen, csize = 0;
    unsigned type, sf;
    uint8_t *out;
    gpufeed_result r;
    if (avail < 1) return gf__zfail(z, ip, "literals section missing");
    type = ip[0] & 3; sf = (ip[0] >> 2) & 3;
    hs = type < 2 ? (sf == 1 ? 2 : sf == 3 ? 3 : 1) : (sf < 2 ? 3 : sf == 2 ? 4 : 5);
    if (avail < hs) return gf__zfail(z, ip, "literals section header truncated");
    if (type < 2) {
        regen = hs == 1 ? (size_t)(ip[0] >> 3) : hs == 2 ? (size_t)(ip[0] >> 4) + ((size_t)ip[1] << 4)
                                                         : (size_t)(ip[0] >> 4) + ((size_t)ip[1] << 4) + ((size_t)ip[2] << 12);
    } else if (hs == 3) {
        uint32_t v = ip[0] | ((uint32_t)ip[1] << 8) | ((uint32_t)ip[2] << 16);
        regen = (v >> 4) & 0x3FF; csize = (v >> 14) & 0x3FF;
    } else if (hs == 4) {
        uint32_t v = gf__ld32(ip);
        regen = (v >> 4) & 0x3FFF; csize = v >> 18;
    } else {
        uint64_t v = gf__ld32(ip) | ((uint64_t)ip[4] << 32);
        regen = (size_t)((v >> 4) & 0x3FFFF); csize = (size_t)((v >> 22) & 0x3FFFF);
    }
    if (regen > cap) {
        if (page_limited) return gf__zfail(z, ip, "%llu literals: output exceeds the %llu-byte page", (unsigned long long)regen, (unsigned long long)z->dn);
        return gf__zfail(z, ip, "%llu literals exceed the block maximum of %llu bytes", (unsigned long long)regen, (unsigned long long)cap);
    }
    *pip = ip += hs; avail -= hs;
    out = litend - regen;
    switch (type) {
    case 0:
        if (avail < regen)
            return gf__zfail(z, ip, "%llu raw literals, only %llu bytes left in the block", (unsigned long long)regen, (unsigned long long)avail);
        memcpy(out, ip, regen);
        ip += regen;
        break;
    case 1:
        if (avail < 1) return gf__zfail(z, ip, "RLE literals truncated");
        memset(out, ip[0], regen);
        ip += 1;
        break;
    default: {
        const uint8_t *cend = ip + csize;
        if (csize > avail)
            return gf__zfail(z, ip, "compressed literals of %llu bytes, only %llu left in the block", (unsigned long long)csize, (unsigned long long)avail);
        if (type == 2) {
            size_t used = 0;
            r = gf__zhuf_table(z, ip, csize, &used);
            if (r) return r;
            ip += used;
        } else if (!z->have_huf) {
            return gf__zfail(z, ip - hs, "treeless literals, but no Huffman table earlier in the frame");
        }
        r = sf == 0 ? gf__zhuf_1(z, ip, (size_t)(cend - ip), out, regen) : gf__zhuf_4(z, ip, (size_t)(cend - ip), out, regen);
        if (r) return r;
        ip = cend;
    }
    }
    *pip = ip; *lit = out; *nlit = regen;
    return GPUFEED_OK;
}

/* Copies for the sequences: 16 bytes at a time, and the slow exact ones
   near the end of the page or of the literals. */
static void gf__zcopy16(uint8_t *d, const uint8_t *s, size_t n)
{
    memcpy(d, s, 16);
    if (GF__UNLIKELY(n > 16)) {
        uint8_t *e = d + n;
        d += 16; s += 16;
        do { memcpy(d, s, 16); d += 16; s += 16; } while (d < e);
    }
}
/* a match of n bytes from off back, allowed to write up to 15 bytes past */
static void gf__zmatch_wild(uint8_t *d, size_t off, size_t n)
{
    /* k % off for k < 8, off < 8 */
    static const uint8_t mod8[8][8] = { { 0 }, { 0, 0, 0, 0, 0, 0, 0, 0 }, { 0, 1, 0, 1, 0, 1, 0, 1 }, { 0, 1, 2, 0, 1, 2, 0, 1 },
                                        { 0, 1, 2, 3, 0, 1, 2, 3 }, { 0, 1, 2, 3, 4, 0, 1, 2 }, { 0, 1, 2, 3, 4, 5, 0, 1 },
                                        { 0, 1, 2, 3, 4, 5, 6, 0 } };
    const uint8_t *s = d - off;
    uint8_t *e = d + n;
    if (off >= 16) { gf__zcopy16(d, s, n); return; }
    if (off >= 8) {
        do { memcpy(d, s, 8); d += 8; s += 8; } while (d < e);
        return;
    }
    {   /* a short period: 8 bytes of the pattern in a register, rotated
           for each next 8 (no reading back of bytes just written) */
        static const uint8_t rot8[8] = { 0, 0, 0, 16, 0, 24, 16, 8 }; /* 8 % off, in bits */
        const uint8_t *m = mod8[off];
        unsigned r = rot8[off], l = (unsigned)off * 8 - r;
        uint64_t p = (uint64_t)s[m[0]] | ((uint64_t)s[m[1]] << 8) | ((uint64_t)s[m[2]] << 16) | ((uint64_t)s[m[3]] << 24) |
                     ((uint64_t)s[m[4]] << 32) | ((uint64_t)s[m[5]] << 40) | ((uint64_t)s[m[6]] << 48) | ((uint64_t)s[m[7]] << 56);
        memcpy(d, &p, 8);
        for (d += 8; d < e; d += 8) {
            p = (p >> r) | (p << l);
            memcpy(d, &p, 8);
        }
    }
}

/* The sequences section at ip..bend: decodes and executes the sequences
   at op (the block may produce up to oblk bytes there), consuming the
   nlit literals at lit; *opp receives the end of the block's output. */
static gpufeed_result gf__zseqs(gf__zdec *z, const uint8_t *ip, const uint8_t *bend, uint8_t *fstart, uint8_t **opp, uint8_t *oblk, uint8_t *oend,
                                const uint8_t *lit, size_t nlit, int page_limited)
{
    uint8_t *op = *opp;
    const uint8_t *lp = lit, *lend = lit + nlit, *at = ip, *bp, *bstart;
    unsigned nseq, left, modes, used;
    int wild;
    gf__zbits b;
    uint64_t bits;
    size_t sll, sml, sof, r1, r2, r3, room, gap0, tail;
    gpufeed_result r;
    if (ip >= bend) return gf__zfail(z, ip, "sequences section missing");
    nseq = *ip++;
    if (nseq >= 128) {
        if (nseq < 255) {
            if (ip >= bend) return gf__zfail(z, at, "sequences section header truncated");
            nseq = ((nseq - 128) << 8) + *ip++;
        } else {
            if (bend - ip < 2) return gf__zfail(z, at, "sequences section header truncated");
            nseq = gf__ld16(ip) + 0x7F00u; ip += 2;
        }
    }
    if (nseq == 0) {
        if (ip != bend) return gf__zfail(z, ip, "%llu bytes after an empty sequences section", (unsigned long long)(bend - ip));
        memmove(op, lp, nlit);
        *opp = op + nlit;
        return GPUFEED_OK;
    }
    if (ip >= bend) return gf__zfail(z, at, "sequences section header truncated");
    modes = *ip++;
    if (modes & 3) return gf__zfail(z, ip - 1, "reserved bits set in the symbol compression modes 0x%02x", modes);
    if ((r = gf__zseq_table(z, 0, modes >> 6, &ip, bend)) != GPUFEED_OK) return r;
    if ((r = gf__zseq_table(z, 1, (modes >> 4) & 3, &ip, bend)) != GPUFEED_OK) return r;
    if ((r = gf__zseq_table(z, 2, (modes >> 2) & 3, &ip, bend)) != GPUFEED_OK) return r;
    if (gf__zbits_init(&b, ip, (size_t)(bend - ip))) return gf__zfail(z, ip, "sequence bitstream is empty or lacks its end mark");

    /* the bit reader in scalars, so that it stays in registers */
    bits = b.bits; used = b.used; bp = b.ptr; bstart = b.start;
#define GF__ZFILL() do { size_t st_ = used >> 3, hv_ = (size_t)(bp - bstart); if (st_ > hv_) st_ = hv_; \
        bp -= st_; used -= (unsigned)st_ << 3; bits = gf__ld64(bp); } while (0)
#define GF__ZGET(n, out) do { unsigned n_ = (n); (out) = (size_t)(((bits << (used & 63)) >> 1) >> (63 - n_)); used += n_; } while (0)
    GF__ZGET(z->ll_log, sll);
    GF__ZGET(z->of_log, sof);
    GF__ZGET(z->ml_log, sml);
    r1 = z->rep[0]; r2 = z->rep[1]; r3 = z->rep[2];

    /* the output left for matches once every literal is placed: it only
       shrinks by the match lengths. The gap between the output and the
       unread literals is that plus gap0, and the page goes on tail bytes
       past the literals: with 16 bytes of each, every copy may overshoot */
    room = (size_t)(oblk - op) - nlit;
    gap0 = (size_t)(lend - oblk);
    tail = (size_t)(oend - lend);
    wild = gap0 >= 16 && tail >= 16;
    for (left = nseq; left > 0; left--) {
        uint64_t el = z->ll[sll], em = z->ml[sml], eo = z->of[sof];
        size_t ofv, ml, ll, off, v;
        GF__ZFILL();
        GF__ZGET((unsigned)(eo >> 32) & 0xFF, ofv);
        ofv += (uint32_t)eo;
        if (used > 32) GF__ZFILL();
        GF__ZGET((unsigned)(em >> 32) & 0xFF, ml);
        ml += (uint32_t)em;
        GF__ZGET((unsigned)(el >> 32) & 0xFF, ll);
        ll += (uint32_t)el;
        if (used > 38) GF__ZFILL();
        if (left > 1) {
            GF__ZGET((unsigned)(el >> 40) & 0xFF, v); sll = (size_t)(el >> 48) + v;
            GF__ZGET((unsigned)(em >> 40) & 0xFF, v); sml = (size_t)(em >> 48) + v;
            GF__ZGET((unsigned)(eo >> 40) & 0xFF, v); sof = (size_t)(eo >> 48) + v;
        }
        if (ofv > 3) {
            off = ofv - 3; r3 = r2; r2 = r1; r1 = off;
        } else {
            size_t k = ofv - 1 + (ll == 0);
            if (k == 0) off = r1;
            else {
                off = k == 1 ? r2 : k == 2 ? r3 : r1 - 1;
                if (k != 1) r3 = r2;
                r2 = r1; r1 = off;
            }
        }
        if (GF__UNLIKELY(ll > (size_t)(lend - lp)))
            return gf__zfail(z, at, "sequence %u of %u: literal length %llu, only %llu literals left", nseq - left, nseq, (unsigned long long)ll,
                             (unsigned long long)(lend - lp));
        if (GF__UNLIKELY(ml > room)) {
            if (page_limited) return gf__zfail(z, at, "sequence %u of %u: output exceeds the %llu-byte page", nseq - left, nseq, (unsigned long long)z->dn);
            return gf__zfail(z, at, "sequence %u of %u: the block's output exceeds its maximum of %llu bytes", nseq - left, nseq,
                             (unsigned long long)(oblk - *opp));
        }
        room -= ml;
        if (GF__UNLIKELY(off == 0 || off > (size_t)(op - fstart) + ll))
            return gf__zfail(z, at, "sequence %u of %u: offset %llu beyond the %llu bytes produced", nseq - left, nseq, (unsigned long long)off,
                             (unsigned long long)((size_t)(op - fstart) + ll));
        if (GF__LIKELY(wild || (room + gap0 >= 16 && tail + (size_t)(lend - lp) >= ll + 16))) {
            gf__zcopy16(op, lp, ll);
            op += ll; lp += ll;
            gf__zmatch_wild(op, off, ml);
            op += ml;
        } else {
            const uint8_t *s;
            size_t k;
            memmove(op, lp, ll);
            op += ll; lp += ll;
            s = op - off;
            if (off >= ml) memcpy(op, s, ml);
            else for (k = 0; k < ml; k++) op[k] = s[k];
            op += ml;
        }
    }
    GF__ZFILL();
#undef GF__ZFILL
#undef GF__ZGET
    if (bp != bstart || used != 64) return gf__zfail(z, at, "sequence bitstream not consumed exactly by its %u sequences", nseq);
    z->rep[0] = r1; z->rep[1] = r2; z->rep[2] = r3;
    memmove(op, lp, (size_t)(lend - lp));
    *opp = op + (lend - lp);
    return GPUFEED_OK;
}

/* One compressed block [ip, ip + bs); its output starts at *opp. */
static gpufeed_result gf__zblock(gf__zdec *z, const uint8_t *ip, size_t bs, uint8_t *fstart, uint8_t **opp, uint8_t *oend, size_t blockmax)
{
    uint8_t *op = *opp, *lit = NULL;
    size_t room = (size_t)(oend - op), cap = room < blockmax ? room : blockmax, nlit = 0;
    const uint8_t *bend = ip + bs;

    /* the literals end 64 bytes past the block's largest output when the
       page has room: the sequences' 16-byte copies then never slow down */
    uint8_t *litend = op + (room - cap >= 96 ? cap + 64 : room);
    gpufeed_result r = gf__zlits(z, &ip, bend, litend, cap, room < blockmax, &lit, &nlit);
    if (r) return r;
    return gf__zseqs(z, ip, bend, fstart, opp, op + cap, oend, lit, nlit, room < blockmax);
}

/* One frame at *pip (magic number checked) into *opp. */
static gpufeed_result gf__zframe(gf__zdec *z, const uint8_t **pip, const uint8_t *iend, uint8_t **opp, uint8_t *oend)
{
    const uint8_t *ip = *pip;
    uint8_t *op = *opp, *fstart = op;
    gf__zhdr h;
    size_t blockmax;
    gpufeed_result r = gf__zstd_header(ip, (size_t)(iend - ip), &h, z->frame, (unsigned long long)(ip - z->src), z->msg, z->cap);
    if (r) return r;
    if (h.fcs != GF__ZSTD_NO_SIZE && h.fcs > (uint64_t)(oend - op)) {
        gf__fmt(z->msg, z->cap, "zstd: frame %u at input byte %llu: content size %llu exceeds the %llu bytes left of the %llu-byte page", z->frame,
                (unsigned long long)(ip - z->src), (unsigned long long)h.fcs, (unsigned long long)(oend - op), (unsigned long long)z->dn);
        return GPUFEED_ERR_CODEC;
    }
    ip += h.size;
    blockmax = h.window < GF__ZSTD_BLOCK_MAX ? (size_t)h.window : GF__ZSTD_BLOCK_MAX;
    z->have_ll = z->have_ml = z->have_of = z->have_huf = z->have_huf2 = 0;
    z->rep[0] = 1; z->rep[1] = 4; z->rep[2] = 8;
    for (z->block = 0;; z->block++) {
        uint32_t bh;
        unsigned type;
        size_t bs;
        if (iend - ip < 3) return gf__zfail(z, ip, "block header truncated (%llu bytes left)", (unsigned long long)(iend - ip));
        bh = ip[0] | ((uint32_t)ip[1] << 8) | ((uint32_t)ip[2] << 16);
        type = (bh >> 1) & 3; bs = bh >> 3;
        if (type == 3) return gf__zfail(z, ip, "reserved block type 3");
        if (bs > blockmax)
            return gf__zfail(z, ip, "block size %llu exceeds the frame's block maximum of %llu bytes", (unsigned long long)bs, (unsigned long long)blockmax);
        ip += 3;
        if (type == 1 ? ip >= iend : (size_t)(iend - ip) < bs)
            return gf__zfail(z, ip - 3, "block of %llu bytes truncated (%llu bytes left)", (unsigned long long)(type == 1 ? 1 : bs),
                             (unsigned long long)(iend - ip));
        if (type < 2 && bs > (size_t)(oend - op))
            return gf__zfail(z, ip - 3, "%s block of %llu bytes: output exceeds the %llu-byte page", type ? "RLE" : "raw", (unsigned long long)bs,
                             (unsigned long long)z->dn);
        if (type == 0) { memcpy(op, ip, bs); op += bs; ip += bs; }
        else if (type == 1) { memset(op, *ip, bs); op += bs; ip += 1; }
        else {
            r = gf__zblock(z, ip, bs, fstart, &op, oend, blockmax);
            if (r) return r;
            ip += bs;
        }
        if (bh & 1) break;
    }
    if (h.fcs != GF__ZSTD_NO_SIZE && h.fcs != (uint64_t)(op - fstart))
        return gf__zfail(z, ip, "frame content size says %llu bytes, its blocks produced %llu", (unsigned long long)h.fcs, (unsigned long long)(op - fstart));
    if (h.checksum) {
        uint32_t want, got;
        if (iend - ip < 4) return gf__zfail(z, ip, "content checksum truncated (%llu bytes left)", (unsigned long long)(iend - ip));
        want = gf__ld32(ip);
        got = (uint32_t)gpufeed_hash64(fstart, (size_t)(op - fstart), 0);
        if (want != got) {
            gf__fmt(z->msg, z->cap, "zstd: frame %u: content checksum mismatch (stored 0x%08lx, computed 0x%08lx over %llu bytes)", z->frame,
                    (unsigned long)want, (unsigned long)got, (unsigned long long)(op - fstart));
            return GPUFEED_ERR_CHECKSUM;
        }
        ip += 4;
    }
    *pip = ip; *opp = op;
    return GPUFEED_OK;
}

static gpufeed_result gf__zstd(const uint8_t *src, size_t n, uint8_t *dst, size_t dn, char *msg, size_t cap)
{
    gf__zdec z;
    static const uint8_t no_input = 0;
    uint8_t no_output = 0;
    const uint8_t *ip, *iend;
    uint8_t *op, *oend;
    if (!src) { src = &no_input; n = 0; }
    if (!dst) { dst = &no_output; dn = 0; }
    z.src = src; z.dn = dn; z.msg = msg; z.cap = cap; z.frame = 0; z.block = 0;
    ip = src; iend = src + n; op = dst; oend = dst + dn;
    while (ip < iend) {
        size_t left = (size_t)(iend - ip);
        gpufeed_result r;
        if (left >= 4 && (gf__ld32(ip) & 0xFFFFFFF0u) == 0x184D2A50u) {
            size_t skip = 0;
            r = gf__zstd_skippable(ip, left, &skip, z.frame, (unsigned long long)(ip - src), msg, cap);
            if (r) return r;
            ip += skip; z.frame++;
            continue;
        }
        if (left < 4 || gf__ld32(ip) != GF__ZSTD_MAGIC) {
            gf__fmt(msg, cap, "zstd: input byte %llu: not a zstd frame (%llu bytes left%s)", (unsigned long long)(ip - src), (unsigned long long)left,
                    left < 4 ? "" : ", bad magic number");
            return GPUFEED_ERR_CODEC;
        }
        r = gf__zframe(&z, &ip, iend, &op, oend);
        if (r) return r;
        z.frame++;
    }
    if (op != oend) {
        gf__fmt(msg, cap, "zstd: frames produced %llu bytes, page header says %llu", (unsigned long long)(op - dst), (unsigned long long)dn);
        return GPUFEED_ERR_CODEC;
    }
    return GPUFEED_OK;
}
#endif /* GPUFEED_USE_LIBZSTD */
#endif /* GPUFEED_NO_ZSTD */


/* why a codec cannot be read by this build (when gf__codec_supported() is 0) */
static const char *gf__codec_missing(gpufeed_codec codec, char *buf, size_t cap)
{
    switch (codec) {
    case GPUFEED_CODEC_BROTLI: return "codec BROTLI needs the system libbrotlidec: compile with -DGPUFEED_USE_BROTLI and link -lbrotlidec";
    case GPUFEED_CODEC_LZO: return "codec LZO is not supported (deprecated in parquet-format; no current writer emits it)";
    case GPUFEED_CODEC_SNAPPY: return "codec SNAPPY is compiled out (GPUFEED_NO_SNAPPY)";
    case GPUFEED_CODEC_LZ4: case GPUFEED_CODEC_LZ4_RAW: return "codec LZ4 is compiled out (GPUFEED_NO_LZ4)";
    case GPUFEED_CODEC_GZIP: return "codec GZIP is compiled out (GPUFEED_NO_GZIP)";
    case GPUFEED_CODEC_ZSTD: return "codec ZSTD is compiled out (GPUFEED_NO_ZSTD)";
    default:
        gf__fmt(buf, cap, "codec %s is not supported yet", gpufeed_codec_name(codec));
        return buf;
    }
}

/* Decompresses one page body. `dst` holds exactly dn bytes. */
static gpufeed_result gf__decompress(gpufeed_codec codec, const uint8_t *src, size_t n, uint8_t *dst, size_t dn, char *msg, size_t cap)
{
    (void)src; (void)n; (void)dst; (void)dn;
    switch (codec) {
#ifndef GPUFEED_NO_SNAPPY
    case GPUFEED_CODEC_SNAPPY: return gf__snappy(src, n, dst, dn, msg, cap);
#endif
#ifndef GPUFEED_NO_LZ4
    case GPUFEED_CODEC_LZ4_RAW: return gf__lz4_raw(src, n, dst, dn, msg, cap);
    case GPUFEED_CODEC_LZ4: return gf__lz4_hadoop(src, n, dst, dn, msg, cap);
#endif
#if !defined(GPUFEED_NO_GZIP) || defined(GPUFEED_USE_ZLIB)
    case GPUFEED_CODEC_GZIP: return gf__gzip(src, n, dst, dn, msg, cap);
#endif
#ifndef GPUFEED_NO_ZSTD
    case GPUFEED_CODEC_ZSTD: return gf__zstd(src, n, dst, dn, msg, cap);
#endif
#ifdef GPUFEED_USE_BROTLI
    case GPUFEED_CODEC_BROTLI: return gf__brotli_sys(src, n, dst, dn, msg, cap);
#endif
    default: {
        char why[GPUFEED_ERROR_MAX];
        gf__fmt(msg, cap, "%s", gf__codec_missing(codec, why, sizeof why));
        return GPUFEED_ERR_UNSUPPORTED;
    }
    }
}

static int gf__codec_supported(gpufeed_codec codec)
{
    switch (codec) {
    case GPUFEED_CODEC_UNCOMPRESSED: return 1;
#ifndef GPUFEED_NO_SNAPPY
    case GPUFEED_CODEC_SNAPPY: return 1;
#endif
#ifndef GPUFEED_NO_LZ4
    case GPUFEED_CODEC_LZ4_RAW: case GPUFEED_CODEC_LZ4: return 1;
#endif
#ifdef GPUFEED_USE_BROTLI
    case GPUFEED_CODEC_BROTLI: return 1;
#endif
#if !defined(GPUFEED_NO_GZIP) || defined(GPUFEED_USE_ZLIB)
    case GPUFEED_CODEC_GZIP: return 1;
#endif
#ifndef GPUFEED_NO_ZSTD
    case GPUFEED_CODEC_ZSTD: return 1;
#endif
    default: return 0;
    }
}

/* The largest expansion a codec can produce from n input bytes; a page
   header claiming more is rejected before anything is allocated. */
static uint64_t gf__codec_max_expansion(gpufeed_codec codec, uint64_t n)
{
    switch (codec) {
    case GPUFEED_CODEC_SNAPPY: return n * 22 + 32;   /* 64 bytes from a 3-byte copy */
    case GPUFEED_CODEC_LZ4_RAW: case GPUFEED_CODEC_LZ4: return n * 256 + 64; /* a 255-run byte adds 255 */
    case GPUFEED_CODEC_GZIP:   /* a 258-byte match in 2 bits (1-bit length and distance codes) */
        return n > UINT64_MAX / 1032 - 1 ? UINT64_MAX : n * 1032 + 1032;
    case GPUFEED_CODEC_ZSTD: /* an RLE block: 4 bytes give up to 128 KiB */
        return n > UINT64_MAX / 32768 ? UINT64_MAX : n * 32768;
    default: return UINT64_MAX;
    }
}

/* >>decode --------------------------------------------------------------- */

/* RLE / bit-packed hybrid decoder (also the deprecated MSB-first BIT_PACKED
   level encoding, as a single literal run). Streaming: keeps its place
   between calls. A bit-packed run cut short by the end of the buffer is
   accepted as long as the values actually read are present. */
typedef struct gf__rle {
    const uint8_t *p, *end;
    int bw;
    int msb;                           /* BIT_PACKED (deprecated) levels */
    uint32_t rle_left, rle_val;
    uint32_t lit_left;                 /* values left in the literal run */
    uint32_t lit_avail;                /* of which present in the buffer */
    const uint8_t *lit;                /* start of the literal run */
    uint64_t lit_pos;                  /* index of the next literal value */
    int err;                           /* 1 corrupt */
    /* a page still being decompressed (a streamed page): each run first
       asks for its bytes, `ahead` of p (non-zero: they cannot be had);
       the hook may move the bytes and this reader's pointers with them */
    int (*need)(void *ctx, size_t ahead);
    void *need_ctx;
} gf__rle;

static void gf__rle_init(gf__rle *r, const uint8_t *p, const uint8_t *end, int bw)
{
    memset(r, 0, sizeof *r);
    r->p = p;
    r->end = end;
    r->bw = bw;
}

static void gf__rle_init_msb(gf__rle *r, const uint8_t *p, const uint8_t *end, int bw, uint32_t count)
{
    uint64_t bits = (uint64_t)count * (uint64_t)bw, have = (uint64_t)(end - p) * 8;
    memset(r, 0, sizeof *r);
    r->p = end;
    r->end = end;
    r->bw = bw;
    r->msb = 1;
    r->lit = p; r->lit_left = count;
    r->lit_avail = bw ? (uint32_t)((bits <= have ? bits : have) / (uint64_t)bw) : count;
}

static uint64_t gf__ld_upto8(const uint8_t *q, const uint8_t *end)
{
    uint64_t w = 0;
    if (end - q >= 8) return gf__ld64(q);
    if (q < end) memcpy(&w, q, (size_t)(end - q));
    return w;
}

/* next run header; returns 0 at the end of data or on error */
static int gf__rle_next_run(gf__rle *r)
{
    uint64_t h = 0;
    int got;
    if (r->need && r->need(r->need_ctx, 16)) { r->err = 1; return 0; } /* a header and an RLE value */
    got = gf__varint(&r->p, r->end, 6, &h);
    if (got < 0) { r->err = 1; return 0; }
    if (got == 0) { r->p = r->end; return 0; }
    if (h & 1) {
        uint64_t groups = h >> 1, vals = groups * 8, bytes = groups * (uint64_t)r->bw, have;
        if (vals > UINT32_MAX) { r->err = 1; return 0; }
        if (r->need && bytes && r->need(r->need_ctx, (size_t)bytes + 8)) { r->err = 1; return 0; } /* and the group kernel's slack */
        have = (uint64_t)(r->end - r->p);
        r->lit = r->p;
        r->lit_pos = 0;
        r->lit_left = (uint32_t)vals;
        if (r->bw == 0) r->lit_avail = (uint32_t)vals;
        else if (bytes <= have) r->lit_avail = (uint32_t)vals;
        else r->lit_avail = (uint32_t)(have * 8 / (uint64_t)r->bw);
        r->p += bytes <= have ? bytes : have;
    } else {
        uint32_t nb = (uint32_t)((r->bw + 7) / 8), i;
        uint32_t v = 0;
        if (h >> 1 > UINT32_MAX) { r->err = 1; return 0; }
        if ((uint32_t)(r->end - r->p) < nb) { r->err = 1; return 0; }
        for (i = 0; i < nb; i++) v |= (uint32_t)r->p[i] << (8 * i);
        r->p += nb;
        if (r->bw < 32 && (v >> r->bw)) { r->err = 1; return 0; }
        r->rle_left = (uint32_t)(h >> 1); r->rle_val = v;
    }
    return 1;
}

/* g groups of 8 values of a constant bit width (bit-packed runs), the
   width's kernel chosen once; needs 8 readable bytes beyond the groups. */
/* the 8 values written out: compilers at -O2 keep a loop over them, and
   its shifts by a variable cost 4-5x (0.9-1.1 against 0.2 ns a value) */
#define GF__UNPACK_ONE(J, BW) o[J] = (uint32_t)((gf__ld64(p + (((J) * (BW)) >> 3)) >> (((J) * (BW)) & 7)) & ((1ull << (BW)) - 1));
#define GF__UNPACK_CASE(BW) case BW: for (k_ = 0; k_ < g; k_++, p += BW, o += 8) { \
    GF__UNPACK_ONE(0, BW) GF__UNPACK_ONE(1, BW) GF__UNPACK_ONE(2, BW) GF__UNPACK_ONE(3, BW) \
    GF__UNPACK_ONE(4, BW) GF__UNPACK_ONE(5, BW) GF__UNPACK_ONE(6, BW) GF__UNPACK_ONE(7, BW) } break;
static void gf__unpack_groups(const uint8_t *p, int bw, uint32_t *o, uint64_t g)
{
    uint64_t k_;
    switch (bw) {
    GF__UNPACK_CASE(1) GF__UNPACK_CASE(2) GF__UNPACK_CASE(3) GF__UNPACK_CASE(4)
    GF__UNPACK_CASE(5) GF__UNPACK_CASE(6) GF__UNPACK_CASE(7) GF__UNPACK_CASE(8)
    GF__UNPACK_CASE(9) GF__UNPACK_CASE(10) GF__UNPACK_CASE(11) GF__UNPACK_CASE(12)
    GF__UNPACK_CASE(13) GF__UNPACK_CASE(14) GF__UNPACK_CASE(15) GF__UNPACK_CASE(16)
    GF__UNPACK_CASE(17) GF__UNPACK_CASE(18) GF__UNPACK_CASE(19) GF__UNPACK_CASE(20)
    GF__UNPACK_CASE(21) GF__UNPACK_CASE(22) GF__UNPACK_CASE(23) GF__UNPACK_CASE(24)
    GF__UNPACK_CASE(25) GF__UNPACK_CASE(26) GF__UNPACK_CASE(27) GF__UNPACK_CASE(28)
    GF__UNPACK_CASE(29) GF__UNPACK_CASE(30) GF__UNPACK_CASE(31) GF__UNPACK_CASE(32)
    default: for (k_ = 0; k_ < g * 8; k_++) o[k_] = 0; break;
    }
}
#undef GF__UNPACK_CASE
#undef GF__UNPACK_ONE

/* the value at bit offset `bit` of a bit-packed run (LSB first), its
   bits under mask; bytes past end read as zero */
static uint32_t gf__lsb_value(const uint8_t *base, const uint8_t *end, uint64_t bit, uint64_t mask)
{
    const uint8_t *q = base + (bit >> 3);
    uint64_t w = (end - q >= 8) ? gf__ld64(q) : gf__ld_upto8(q, end);
    return (uint32_t)((w >> (bit & 7)) & mask);
}

/* Reads up to n values; returns how many were read (fewer only at the end
   of the data or on corruption, which sets r->err). */
static uint32_t gf__rle_get(gf__rle *r, uint32_t *out, uint32_t n)
{
    uint32_t got = 0;
    const uint64_t mask = r->bw >= 32 ? 0xFFFFFFFFull : ((1ull << r->bw) - 1);
    while (got < n) {
        if (r->rle_left) {
            uint32_t k = n - got < r->rle_left ? n - got : r->rle_left, i;
            uint32_t v = r->rle_val;
            for (i = 0; i < k; i++) out[got + i] = v;
            got += k; r->rle_left -= k;
        } else if (r->lit_left) {
            uint32_t k = n - got < r->lit_left ? n - got : r->lit_left, i;
            uint32_t avail = r->lit_avail;
            const uint8_t *base = r->lit, *end = r->end; /* loads may reach into the next run: masked off */
            if (k > avail) { k = avail; r->err = 1; }
            if (r->bw == 0) {
                for (i = 0; i < k; i++) out[got + i] = 0;
            } else if (!r->msb) {
                uint64_t bit = r->lit_pos * (uint64_t)r->bw;
                uint32_t head = (uint32_t)((8 - (r->lit_pos & 7)) & 7);
                if (head > k) head = k;

                /* values up to a group boundary one at a time (a read that
                   ended inside a group), then whole groups with slack after
                   them: the width's kernel */
                for (i = 0; i < head; i++, bit += (uint64_t)r->bw) out[got + i] = gf__lsb_value(base, end, bit, mask);
                {
                    const uint8_t *q = base + (bit >> 3);
                    uint64_t g = (k - i) / 8, room = end - q >= (ptrdiff_t)r->bw + 8 ? (uint64_t)(end - q - 8) / (uint64_t)r->bw : 0;
                    if (g > room) g = room;
                    if (g) {
                        gf__unpack_groups(q, r->bw, out + got + i, g);
                        i += (uint32_t)(8 * g); bit += 8 * g * (uint64_t)r->bw;
                    }
                }
                for (; i < k; i++, bit += (uint64_t)r->bw) out[got + i] = gf__lsb_value(base, end, bit, mask);
            } else {
                uint64_t bit = r->lit_pos * (uint64_t)r->bw;
                for (i = 0; i < k; i++) {
                    uint32_t v = 0; int j;
                    for (j = 0; j < r->bw; j++, bit++)
                        v = (v << 1) | ((base[bit >> 3] >> (7 - (bit & 7))) & 1u);
                    out[got + i] = v;
                }
            }
            got += k;
            r->lit_left -= k;
            r->lit_avail -= k;
            r->lit_pos += k;
            if (r->err) return got;
        } else {
            if (!gf__rle_next_run(r)) return got;
        }
    }
    return got;
}

static int gf__bit_width(uint32_t max)
{
    int w = 0;
    while (max) { w++; max >>= 1; }
    return w;
}

/* up to 64 bits at bit offset `bit`, LSB first */
static uint64_t gf__bits_at(const uint8_t *p, uint64_t bit, int bw)
{
    uint64_t v = 0;
    size_t byte = (size_t)(bit >> 3);
    int sh = (int)(bit & 7), got = 0;
    if (bw == 0) return 0;
    while (got < bw) {
        uint64_t b = (uint64_t)(p[byte++] >> sh);
        v |= b << got;
        got += 8 - sh;
        sh = 0;
    }
    return bw >= 64 ? v : v & ((1ull << bw) - 1);
}

/* DELTA_BINARY_PACKED: decodes up to `max` values of `w` bytes (4 or 8)
   into out; returns the count, -1 when corrupt. *used: the bytes the stream
   took. Arithmetic wraps: modulo 2^64 for 8-byte values, modulo 2^32 for
   4-byte ones, whatever the width of the deltas (DuckDB writes INT32
   columns, unsigned ones too, with 64-bit deltas and miniblocks of up to 64
   bits; the low 32 bits of each sum are the value, as DuckDB reads them). */
static int64_t gf__delta_bp(const uint8_t *p, const uint8_t *end, int w, uint8_t *out, int64_t max, const uint8_t **used, char *msg, size_t cap)
{
    uint64_t bs, nmb, total, first, vpm, prev;
    int64_t n = 0;
    if (!gf__uvarint(&p, end, &bs) || !gf__uvarint(&p, end, &nmb) || !gf__uvarint(&p, end, &total) || !gf__uvarint(&p, end, &first)) {
        gf__fmt(msg, cap, "DELTA_BINARY_PACKED header truncated"); return -1;
    }
    if (bs == 0 || bs > 65536 || bs % 128 || nmb == 0 || nmb > bs || bs % nmb || (bs / nmb) % 8) {
        gf__fmt(msg, cap, "DELTA_BINARY_PACKED block of %llu values in %llu miniblocks is invalid", (unsigned long long)bs, (unsigned long long)nmb); return -1;
    }
    if (total > (uint64_t)max) {
        gf__fmt(msg, cap, "DELTA_BINARY_PACKED claims %llu values, the page has room for %lld", (unsigned long long)total, (long long)max);
        return -1;
    }
    vpm = bs / nmb;
    prev = (first >> 1) ^ (0 - (first & 1));
    if (total > 0) {
        if (w == 4) {
            uint32_t v = (uint32_t)prev;
            memcpy(out, &v, 4);
        } else {
            memcpy(out, &prev, 8);
        }
        n = 1;
    }
    while ((uint64_t)n < total) {
        uint64_t zmin, mind, m;
        const uint8_t *widths;
        if (!gf__uvarint(&p, end, &zmin)) { gf__fmt(msg, cap, "DELTA_BINARY_PACKED block header truncated"); return -1; }
        mind = (zmin >> 1) ^ (0 - (zmin & 1));
        if ((uint64_t)(end - p) < nmb) { gf__fmt(msg, cap, "DELTA_BINARY_PACKED bit widths truncated"); return -1; }
        widths = p; p += nmb;
        for (m = 0; m < nmb && (uint64_t)n < total; m++) {
            int bw = widths[m];
            uint64_t j, bytes;
            if (bw > 64) { gf__fmt(msg, cap, "DELTA_BINARY_PACKED miniblock bit width %d (at most 64)", bw); return -1; }
            bytes = vpm * (uint64_t)bw / 8;
            if ((uint64_t)(end - p) < bytes) { gf__fmt(msg, cap, "DELTA_BINARY_PACKED miniblock truncated"); return -1; }
            for (j = 0; j < vpm && (uint64_t)n < total; j++) {
                prev = prev + mind + gf__bits_at(p, j * (uint64_t)bw, bw);
                if (w == 4) {
                    uint32_t v = (uint32_t)prev; /* modulo 2^32 */
                    memcpy(out + (size_t)n * 4, &v, 4);
                }
                else memcpy(out + (size_t)n * 8, &prev, 8);
                n++;
            }
            p += bytes;
        }
    }
    *used = p;
    return n;
}

/* value element size in the output (INT96 becomes int64 nanoseconds) */
static size_t gf__elem_size(gpufeed_physical_type t)
{
    switch (t) {
    case GPUFEED_BOOLEAN: return 1;
    case GPUFEED_INT32: case GPUFEED_FLOAT: return 4;
    case GPUFEED_INT64: case GPUFEED_DOUBLE: case GPUFEED_INT96: return 8;
    default: return sizeof(gpufeed_bytes);
    }
}

/* PLAIN-decodes n values from [*pp, end) into out (compact). Returns 0 on
   success, 1 when the data runs out. *bitpos: bit offset for BOOLEAN. */
static int gf__plain_decode(gpufeed_physical_type t, int32_t tlen, const uint8_t **pp, const uint8_t *end,
                            uint32_t *bitpos, void *out, uint32_t n)
{
    const uint8_t *p = *pp;
    size_t avail = (size_t)(end - p);
    uint32_t i;
    switch (t) {
    case GPUFEED_BOOLEAN: {
        uint8_t *o = (uint8_t *)out;
        uint64_t bit = *bitpos;
        if ((bit + n + 7) / 8 > avail) return 1;
        for (i = 0; i < n; i++, bit++) o[i] = (uint8_t)((p[bit >> 3] >> (bit & 7)) & 1);
        *pp = p + (bit >> 3); *bitpos = (uint32_t)(bit & 7);
        return 0;
    }
    case GPUFEED_INT32: case GPUFEED_FLOAT:
        if (avail / 4 < n) return 1;
        memcpy(out, p, (size_t)n * 4);
        *pp = p + (size_t)n * 4;
        return 0;
    case GPUFEED_INT64: case GPUFEED_DOUBLE:
        if (avail / 8 < n) return 1;
        memcpy(out, p, (size_t)n * 8);
        *pp = p + (size_t)n * 8;
        return 0;
    case GPUFEED_INT96: {
        int64_t *o = (int64_t *)out;
        if (avail / 12 < n) return 1;
        for (i = 0; i < n; i++) o[i] = gpufeed_int96_to_ns(p + (size_t)i * 12);
        *pp = p + (size_t)n * 12; return 0;
    }
    case GPUFEED_BYTE_ARRAY: {
        gpufeed_bytes *o = (gpufeed_bytes *)out;
        for (i = 0; i < n; i++) {
            uint32_t len;
            if ((size_t)(end - p) < 4) return 1;
            len = gf__ld32(p); p += 4;
            if ((size_t)(end - p) < len) return 1;
            o[i].ptr = p;
            o[i].len = len;
            p += len;
        }
        *pp = p; return 0;
    }
    case GPUFEED_FIXED_LEN_BYTE_ARRAY: {
        gpufeed_bytes *o = (gpufeed_bytes *)out;
        if ((uint64_t)avail / (uint64_t)tlen < n) return 1;
        for (i = 0; i < n; i++) {
            o[i].ptr = p;
            o[i].len = (uint32_t)tlen;
            p += tlen;
        }
        *pp = p; return 0;
    }
    default: return 1;
    }
}

/* >>column --------------------------------------------------------------- */

#define GF__READ_AHEAD (1u << 20)
#define GF__LTILE 1024                 /* level entries decoded at a time (nested leaves) */

typedef struct gf__blk {
    uint8_t *p;
    size_t cap, used;
} gf__blk;

struct gf__relq;
struct gpufeed_column {
    gpufeed_file *f;
    int32_t rg, col;
    const gpufeed_chunk_info *ch;
    const gpufeed_column_info *ci;
    int64_t max_rows;
    uint32_t flags;
    gf__crc_tab *crc;
    size_t esz;                        /* output element size */
    /* page walk */
    uint64_t start, pos, region_end, chunk_end_hint;
    int64_t values_left;               /* chunk values not yet in a page */
    int64_t rows_done;
    int32_t data_pages, pages;         /* data pages / all pages seen */
    int32_t cur_page;                  /* index of the page being decoded */
    uint64_t page_off;                 /* header offset of the current page */
    /* read window over the file */
    uint8_t *win;
    size_t win_cap;
    uint64_t win_off;
    size_t win_len;
    /* decompressed page */
    uint8_t *dbuf; size_t dbuf_cap;
    /* or a SNAPPY page streamed through a window (z_on; a dense reader
       asks for it with z_want): the levels copied out to lbuf, the values
       decoded as the reader gets to them */
    gf__snap z;
    int z_on, z_want;
    uint8_t *zbuf; size_t zbuf_cap;
    /* a streamed page of a file read with positioned reads (not mapped):
       its compressed bytes (zin_len of them, at file offset zin_off; 0: the
       page's bytes are all at hand) come into zin a piece at a time */
    uint8_t *zin; size_t zin_cap;
    uint64_t zin_off, zin_len;
    uint8_t *lbuf; size_t lbuf_cap;
    /* dictionary */
    int has_dict;
    uint8_t *dict_buf; size_t dict_buf_cap;
    void *dict; uint32_t dict_n;       /* the decoded entries: dict_own, or the page
                                          bytes in dict_buf for fixed-width types */
    void *dict_own; size_t dict_cap;
    uint32_t dict_gen;                 /* bumped at every dictionary page */
    uint8_t **spare; size_t *spare_cap; /* a dense reader's: the scratch's one raw
                                          dictionary buffer, lent to the column that
                                          loads a dictionary page (NULL: none) */
    int scan;                          /* header scan: no read-ahead */
    int lent;                          /* out, valid and lv are a scratch's, shared by its
                                          scalar features (not freed with the column) */
    uint8_t *tbuf; size_t tbuf_cap;    /* BYTE_STREAM_SPLIT values, put back together */
    gpufeed_encoding enc_page;         /* the page's encoding as written */
    int dict_pending;                  /* after a seek: dictionary not loaded yet */
    /* current data page */
    int in_page;
    uint32_t page_left;                /* level entries left in the page */
    gpufeed_encoding enc;
    gf__rle def;
    const uint8_t *vp, *vend;
    uint32_t bitpos;
    gf__rle idx;
    int idx_ready;
    /* output */
    void *out;
    uint8_t *valid;
    uint32_t *lv;
    /* nested leaves (max_rep > 0) */
    int nested;
    int v2;                            /* the current page is a DATA_PAGE_V2 */
    gf__rle rep;                       /* the page's repetition levels */
    uint32_t *tr, *td;                 /* a tile of decoded levels ... */
    uint32_t tpos, tcnt;               /* ... consumed up to tpos */
    int row_start;                     /* the next entry must start a row */
    int64_t rows_seen;                 /* rows started in the chunk */
    uint64_t rec_levels;               /* entries of the current row */
    int16_t rdef[GPUFEED_MAX_SCHEMA_DEPTH + 2]; /* def level of the repeated node at each depth */
    int64_t wcnt[GPUFEED_MAX_SCHEMA_DEPTH + 2]; /* elements of the open list at each depth */
    uint32_t page_nv;                  /* level entries of the current page */
    uint8_t *orep, *odef; size_t orep_cap, odef_cap; /* a batch's levels (int16_t) */
    uint8_t *oval; size_t oval_cap;    /* a batch's packed values */
    gf__blk blk[40]; int32_t nblk, cblk; /* byte values copied out of earlier pages */
    int64_t pg_val0;                   /* first value of the batch from the current page */
    uint64_t bytes_read;
    uint64_t read_us;                  /* time in the source's read_at */
    uint64_t unmapped_to;              /* a mapped file: bytes before this were let go */
    struct gf__relq *relq;             /* a scratch's: let them go in batches (NULL: at once) */
    int rgrel;                         /* a unit's chunk of a split row group: the bytes before
                                          its pages, and after them, go with the row group
                                          (gf__scratch_rg_end) */
    gpufeed_result failed;             /* sticky: the first error */
    char err[GPUFEED_ERROR_MAX];
};

/* a scratch's queue of mapped-file byte ranges to let go (gf__relq_flush) */
#define GF__RELQ_N 128
typedef struct gf__rel { const gpufeed_file *f; uint64_t lo, hi; } gf__rel;
struct gf__relq {
    gf__rel r[GF__RELQ_N];
    int32_t n;
    int32_t hold;                      /* within a unit the queue goes at hold x `at` (0: 1x); a loader's worker: 4 */
    int32_t keep;                      /* 1: bytes below each file's keep_to stay mapped (a loader's worker) */
    uint64_t bytes, at;                /* at: the flush size (0: GPUFEED_RELEASE_BYTES) */
};

static gpufeed_result gf__col_fail(gpufeed_column *c, gpufeed_result code, const char *fmt, ...) GF__PRINTF(3, 4);
static gpufeed_result gf__col_fail(gpufeed_column *c, gpufeed_result code, const char *fmt, ...)
{
    char tmp[GPUFEED_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    gf__vfmt(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (c->failed) return c->failed; /* keep the first message */
    gf__fmt(c->err, sizeof c->err, "%s: row group %d, column '%s', page %d (byte offset %llu): %s",
            c->f->name, c->rg, c->ci->path, c->cur_page, (unsigned long long)c->page_off, tmp);
    c->failed = code;
    return code;
}

/* len bytes at file offset off into buf through the source's read_at:
   timed and counted for the column */
static gpufeed_result gf__col_read_at(gpufeed_column *c, uint64_t off, uint8_t *buf, uint64_t len)
{
    uint64_t t0 = gf__now_us();
    int failed = c->f->src.read_at(c->f->src.ctx, off, buf, (size_t)len);
    char why[GPUFEED_ERROR_MAX / 2];
    c->read_us += gf__now_us() - t0;
    if (failed)
        return gf__col_fail(c, GPUFEED_ERR_IO, "read of %llu bytes at offset %llu failed%s", (unsigned long long)len, (unsigned long long)off,
                            gf__source_why(&c->f->src, why, sizeof why));
    c->bytes_read += len;
    return GPUFEED_OK;
}

/* Makes [off, off+len) available; returns a pointer into the window. */
static gpufeed_result gf__col_fetch(gpufeed_column *c, uint64_t off, size_t len, const uint8_t **out)
{
    uint64_t want, room;
    if (c->f->map) { /* a mapped file: no copies */
        if (off > c->region_end || len > c->region_end - off)
            return gf__col_fail(c, GPUFEED_ERR_PAGE, "%llu bytes at offset %llu run past the column data (ends at %llu)",
                                (unsigned long long)len, (unsigned long long)off, (unsigned long long)c->region_end);
        if (!(off >= c->win_off && off + len <= c->win_off + c->win_len)) { /* count each byte range once */
            c->bytes_read += len;
            c->win_off = off; c->win_len = len;
        }
        *out = c->f->map + off;
        return GPUFEED_OK;
    }
    if (off < c->win_off || off + len > c->win_off + c->win_len || !c->win) {
        if (off > c->region_end || len > c->region_end - off)
            return gf__col_fail(c, GPUFEED_ERR_PAGE, "%llu bytes at offset %llu run past the column data (ends at %llu)",
                                (unsigned long long)len, (unsigned long long)off, (unsigned long long)c->region_end);
        room = c->region_end - off;
        want = len;
        {   /* read ahead within the chunk (as stated), at least a little */
            uint64_t ahead = c->chunk_end_hint > off ? c->chunk_end_hint - off : 65536;
            if (ahead > GF__READ_AHEAD) ahead = GF__READ_AHEAD;
            if (c->scan) ahead = 4096;
            if (c->z_want && ahead > 4096) ahead = 4096; /* a dense reader reads a page's bytes as it decodes them (zin) */
            if (ahead > want) want = ahead;
        }
        if (want > room) want = room;
        {
            /* keep what the window already holds from `off` on */
            size_t keep = 0;
            gpufeed_result r;
            if (c->win && off >= c->win_off && off < c->win_off + c->win_len) {
                keep = (size_t)(c->win_off + c->win_len - off);
                if (keep > want) keep = (size_t)want;
                memmove(c->win, c->win + (off - c->win_off), keep);
            }
            if (!gf__grow(&c->f->alloc, &c->win, &c->win_cap, (size_t)want))
                return gf__col_fail(c, GPUFEED_ERR_OUT_OF_MEMORY, "out of memory for a %llu-byte read", (unsigned long long)want);
            r = gf__col_read_at(c, off + keep, c->win + keep, want - keep);
            if (r) {
                c->win_len = 0;
                return r;
            }
            c->win_off = off; c->win_len = (size_t)want;
        }
    }
    *out = c->win + (off - c->win_off);
    return GPUFEED_OK;
}

/* Reads and parses the page header at c->pos. */
static gpufeed_result gf__col_header(gpufeed_column *c, gf__ph *h, uint64_t *hlen)
{
    uint64_t room = c->region_end - c->pos, tryn = 256;
    gf__tc t;
    for (;;) {
        const uint8_t *p = NULL;
        gpufeed_result r;
        uint64_t n = tryn < room ? tryn : room;
        if (n == 0) return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "the column data ends after %lld of %lld values",
                                         (long long)(c->ch->num_values - c->values_left), (long long)c->ch->num_values);

        /* use whatever the window already holds beyond the minimum */
        if (c->win && c->pos >= c->win_off && c->pos < c->win_off + c->win_len) {
            uint64_t inwin = c->win_off + c->win_len - c->pos;
            if (inwin > n) n = inwin < room ? inwin : room;
        }
        r = gf__col_fetch(c, c->pos, (size_t)n, &p);
        if (r) return r;
        if (n > GPUFEED_MAX_PAGE_HEADER_SIZE) n = GPUFEED_MAX_PAGE_HEADER_SIZE;
        gf__tc_init(&t, p, (size_t)n, c->pos, "PageHeader");
        gf__parse_page_header(&t, h);
        if (!t.err) { *hlen = (uint64_t)(t.p - p); return GPUFEED_OK; }

        /* only running out of bytes is worth a larger read */
        if (!t.trunc || n >= room) return gf__col_fail(c, t.err == GPUFEED_ERR_LIMIT ? GPUFEED_ERR_LIMIT : GPUFEED_ERR_PAGE, "%s", t.msg);
        if (n >= GPUFEED_MAX_PAGE_HEADER_SIZE)
            return gf__col_fail(c, GPUFEED_ERR_LIMIT, "page header larger than GPUFEED_MAX_PAGE_HEADER_SIZE (%u bytes)",
                                (unsigned)GPUFEED_MAX_PAGE_HEADER_SIZE);
        tryn = n * 8;
    }
}

static gpufeed_result gf__col_load_dict(gpufeed_column *c, const gf__ph *h, const uint8_t *data, size_t len)
{
    const gpufeed_allocator *a = &c->f->alloc;
    const uint8_t *p;
    uint32_t bitpos = 0;
    uint64_t n = (uint64_t)h->nvalues, maxn, need;
    if (h->nvalues < 0) return gf__col_fail(c, GPUFEED_ERR_PAGE, "dictionary page with %d values", h->nvalues);
    if (h->encoding != GPUFEED_ENC_PLAIN && h->encoding != GPUFEED_ENC_PLAIN_DICTIONARY)
        return gf__col_fail(c, GPUFEED_ERR_ENCODING, "dictionary page encoding %s is not PLAIN", gpufeed_encoding_name((gpufeed_encoding)h->encoding));

    /* the page's bytes bound the number of entries */
    switch (c->ci->physical) {
    case GPUFEED_BOOLEAN: maxn = (uint64_t)len * 8; break;
    case GPUFEED_BYTE_ARRAY: maxn = len / 4; break;
    case GPUFEED_FIXED_LEN_BYTE_ARRAY: maxn = len / (uint64_t)c->ci->type_length; break;
    case GPUFEED_INT96: maxn = len / 12; break;
    default: maxn = len / gf__elem_size(c->ci->physical); break;
    }
    if (n > maxn)
        return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "dictionary page claims %llu values but holds %llu bytes", (unsigned long long)n, (unsigned long long)len);
    if (n > GPUFEED_MAX_DICT_ENTRIES)
        return gf__col_fail(c, GPUFEED_ERR_LIMIT, "dictionary of %llu entries exceeds GPUFEED_MAX_DICT_ENTRIES", (unsigned long long)n);

    /* keep our own copy of the page bytes (BYTE_ARRAY entries point into
       it), unless the page was inflated straight into it */
    if (data != c->dict_buf) {
        if (!gf__grow(a, &c->dict_buf, &c->dict_buf_cap, len ? len : 1))
            return gf__col_fail(c, GPUFEED_ERR_OUT_OF_MEMORY, "out of memory for the dictionary");
        if (len) memcpy(c->dict_buf, data, len);
    }
    need = n * c->esz;
    switch (c->ci->physical) {
    case GPUFEED_INT32: case GPUFEED_INT64: case GPUFEED_FLOAT: case GPUFEED_DOUBLE:
        /* PLAIN fixed-width entries are the page bytes themselves */
        c->dict = c->dict_buf;
        break;
    default:
        if (!gf__grow(a, (uint8_t **)&c->dict_own, &c->dict_cap, (size_t)(need ? need : 1)))
            return gf__col_fail(c, GPUFEED_ERR_OUT_OF_MEMORY, "out of memory for the dictionary");
        c->dict = c->dict_own;
        p = c->dict_buf;
        if (gf__plain_decode(c->ci->physical, c->ci->type_length, &p, c->dict_buf + len, &bitpos, c->dict, (uint32_t)n))
            return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "dictionary page holds fewer than its %llu values", (unsigned long long)n);
        break;
    }
    c->dict_n = (uint32_t)n;
    c->has_dict = 1;
    c->dict_gen++;
    return GPUFEED_OK;
}

/* Decompresses a page body (n bytes at src, un bytes once inflated) into
   the reader's page buffer; *out points at the result. The claimed size is
   checked against what the codec can expand to before anything is allocated. */
static gpufeed_result gf__col_inflate_room(gpufeed_column *c, uint64_t n, size_t un, uint8_t **buf, size_t *cap)
{
    if ((uint64_t)un > gf__codec_max_expansion(c->ch->codec, n))
        return gf__col_fail(c, GPUFEED_ERR_CODEC, "page claims %llu bytes uncompressed from %llu compressed: impossible for %s",
                            (unsigned long long)un, (unsigned long long)n, gpufeed_codec_name(c->ch->codec));
    if (!gf__grow(&c->f->alloc, buf, cap, un ? un : 1))
        return gf__col_fail(c, GPUFEED_ERR_OUT_OF_MEMORY, "out of memory for a %llu-byte page", (unsigned long long)un);
    return GPUFEED_OK;
}
static gpufeed_result gf__col_inflate_to(gpufeed_column *c, const uint8_t *src, size_t n, size_t un, uint8_t **buf, size_t *cap)
{
    char msg[GPUFEED_ERROR_MAX];
    gpufeed_result r = gf__col_inflate_room(c, (uint64_t)n, un, buf, cap);
    if (r) return r;
    r = gf__decompress(c->ch->codec, src, n, *buf, un, msg, sizeof msg);
    if (r) return gf__col_fail(c, r, "%s", msg);
    return GPUFEED_OK;
}
static gpufeed_result gf__col_inflate(gpufeed_column *c, const uint8_t *src, size_t n, size_t un, const uint8_t **out)
{
    gpufeed_result r = gf__col_inflate_to(c, src, n, un, &c->dbuf, &c->dbuf_cap);
    if (r) return r;
    *out = c->dbuf;
    return GPUFEED_OK;
}

#ifndef GPUFEED_NO_STDIO
#if defined(MADV_DONTNEED)
#define GF__MADV_DONTNEED MADV_DONTNEED
#elif defined(__linux__)
#define GF__MADV_DONTNEED 4            /* hidden by strict C99 headers; Linux's value */
#endif
#if defined(MADV_HUGEPAGE)
#define GF__MADV_HUGEPAGE MADV_HUGEPAGE
#elif defined(__linux__)
#define GF__MADV_HUGEPAGE 14
#endif
/* The whole pages of bytes [lo, hi) of a mapped file let go: 1 when there
   was one. Only whole pages: a page the range shares with bytes still
   being read stays (letting it go would fault it back in, and the kernel
   maps the pages around a fault, the ones let go included). */
static int gf__file_release(const gpufeed_file *f, uint64_t lo, uint64_t hi)
{
    const uint64_t ps = f->map_page;
    lo = (lo + ps - 1) / ps * ps;
    hi = hi / ps * ps;
    if (hi <= lo) return 0;
#ifdef GF__MADV_DONTNEED
    (void)madvise((void *)(uintptr_t)(f->map + lo), (size_t)(hi - lo), GF__MADV_DONTNEED);
#endif
    return 1;
}
/* A mapped file's pages before the column's current page are done with:
   let them go (the page cache keeps them), so a process's resident memory
   does not grow with the data it reads. A scratch's columns queue their
   ranges and the scratch lets them go at the end of a unit (or a batch of
   the batch reader) once GPUFEED_RELEASE_BYTES are queued, and within one
   as soon as that many are. A loader's worker waits within a unit until
   4x that (relq.hold): every call makes the kernel interrupt the process's
   other threads to flush their TLBs (a hypervisor exit each on a virtual
   machine), and in the middle of a unit each column's range is apart from
   the others (the bytes it still reads lie between), so a flush there
   costs a call per column, where at a row group's end the chunks touch
   and go in one. A one-pass reader keeps the tighter bound: with 4x,
   gpufeed-dense's peak RSS over 10M rows of 1M-row row groups was
   48.6 MiB against 37.3 MiB (39.3 and 35.6 MiB over 1M rows). A
   loader's worker without a tensor cache leaves each file's bytes below
   keep_to mapped (GPUFEED_KEEP_BYTES in all, set at the dataset's open):
   every epoch reads them again, and bytes let go are mapped back a fault
   per 64 KiB (6-11% of a decode-path epoch on 1M x 32 rows); the
   loader's close lets them go. Off by default: the process's RSS would
   then grow with the dataset. A column read on its own lets go at once. */
static void gf__relq_compact(struct gf__relq *q) /* by file, then offset; touching ranges merged */
{
    int32_t i, j, n = 0;
    for (i = 1; i < q->n; i++) { /* insertion sort (at most GF__RELQ_N) */
        gf__rel x = q->r[i];
        for (j = i; j > 0 && ((uintptr_t)q->r[j - 1].f > (uintptr_t)x.f || (q->r[j - 1].f == x.f && q->r[j - 1].lo > x.lo)); j--) q->r[j] = q->r[j - 1];
        q->r[j] = x;
    }
    for (i = 0; i < q->n; i = j) {
        gf__rel x = q->r[i];
        for (j = i + 1; j < q->n && q->r[j].f == x.f && q->r[j].lo <= x.hi; j++) if (q->r[j].hi > x.hi) x.hi = q->r[j].hi;
        q->r[n++] = x;
    }
    q->n = n;
}
static int32_t gf__relq_flush(struct gf__relq *q) /* the calls it made */
{
    int32_t i, calls = 0;
    gf__relq_compact(q);
    for (i = 0; i < q->n; i++) {
        uint64_t lo = q->r[i].lo;
        if (q->keep && lo < q->r[i].f->keep_to) lo = q->r[i].f->keep_to; /* kept for the next epoch */
        if (lo < q->r[i].hi) calls += gf__file_release(q->r[i].f, lo, q->r[i].hi);
    }
    q->n = 0;
    q->bytes = 0;
    return calls;
}
static uint64_t gf__relq_at(const struct gf__relq *q) { return q->at ? q->at : (uint64_t)GPUFEED_RELEASE_BYTES; }
static void gf__relq_push(struct gf__relq *q, const gpufeed_file *f, uint64_t lo, uint64_t hi)
{
    if (q->n > 0 && q->r[q->n - 1].f == f && q->r[q->n - 1].hi == lo) q->r[q->n - 1].hi = hi; /* the common case: the next bytes */
    else {
        if (q->n == GF__RELQ_N) gf__relq_compact(q); /* a column's pieces, interleaved with the others' */
        if (q->n == GF__RELQ_N) (void)gf__relq_flush(q);
        q->r[q->n].f = f; q->r[q->n].lo = lo; q->r[q->n].hi = hi;
        q->n++;
    }
    q->bytes += hi - lo;
    if (q->bytes / (uint64_t)(q->hold > 1 ? q->hold : 1) >= gf__relq_at(q)) (void)gf__relq_flush(q); /* within a unit: a bound on what is held */
}
/* at the end of a unit (or a batch): let go once enough is queued */
static void gf__relq_unit_end(struct gf__relq *q)
{
    if (q->bytes >= gf__relq_at(q)) (void)gf__relq_flush(q);
}
static void gf__col_unmap_to(gpufeed_column *c, uint64_t upto)
{
    const uint64_t ps = c->f ? c->f->map_page : 1;
    if (!c->f || !c->f->map || upto <= c->unmapped_to) return;
    if (upto > c->f->map_len) upto = c->f->map_len;
    if (c->relq) {
        /* up to the start of the page the column still reads (that page
           goes with its next range), or through the page the chunk ends
           in when the column is done with it: that page is also the next
           chunk's first, which its reader left (rounding its start up),
           so without this neither would let it go */
        uint64_t to = upto == c->region_end ? (upto + ps - 1) / ps * ps : upto / ps * ps;
        if (to > c->f->map_len) to = c->f->map_len;
        if (to <= c->unmapped_to) return;
        gf__relq_push(c->relq, c->f, c->unmapped_to, to);
        c->unmapped_to = to;
        return;
    }
    if (gf__file_release(c->f, c->unmapped_to, upto)) c->unmapped_to = upto / ps * ps;
}
static void gf__col_unmap_done(gpufeed_column *c)
{
    /* a chunk read to its end: all of it (the bytes run on into the next
       chunk's, so a scratch's queue merges a row group into one range) */
    if (c->f && c->ch && c->rows_done >= c->f->md.row_groups[c->rg].num_rows) gf__col_unmap_to(c, c->region_end);
    else if (c->z_on && c->f && c->f->map && c->z.ip > c->f->map + c->page_off)
        gf__col_unmap_to(c, (uint64_t)(c->z.ip - c->f->map)); /* a streamed page: the bytes decoded so far */
    else gf__col_unmap_to(c, c->page_off);
}
/* A mapped file's pages all let go (after a walk of its page headers). */
static void gf__file_unmap_all(gpufeed_file *f)
{
#ifdef GF__MADV_DONTNEED
    if (f && f->map) (void)madvise((void *)(uintptr_t)f->map, (size_t)f->map_len, GF__MADV_DONTNEED);
#else
    (void)f;
#endif
}
#else
#define gf__relq_flush(q) ((void)0)
#define gf__relq_unit_end(q) ((void)0)
#define gf__col_unmap_to(c, upto) ((void)0)
#define gf__file_unmap_all(f) ((void)0)
#endif

/* Streamed pages. A dense reader walks its columns a tile of rows at a
   time, so every column's current page is in use at once: decompressed
   whole, 32 columns of 1 MiB pages are 32 MiB of buffers, more than the
   caches hold, and each page makes a round trip through memory between
   the codec and the tile that reads it. A SNAPPY page of a flat column
   with fixed-width PLAIN values or dictionary indices (of more than
   GPUFEED_PAGE_WINDOW bytes) is instead decompressed into a window as the
   reader gets there: its levels are copied out at the start, then the
   window keeps the bytes the reader has not consumed and those of the
   current 64 KiB SNAPPY block (writers compress in 64 KiB blocks, and no
   copy reaches back past its block's start). Each decoding step ends
   where a block ends, and room is made there when the next block does
   not fit, so a move carries only the bytes the reader has not consumed.
   A copy from further back (another compressor) decodes the page again
   whole (gf__col_z_whole); an error names the page offset a whole-page
   decode names. The reader's pointers into the window (c->vp, c->vend,
   and the dictionary indices' decoder c->idx) move with it. */
#if GPUFEED_PAGE_WINDOW < 4096
#error "GPUFEED_PAGE_WINDOW must be at least 4096"
#endif
#define GF__Z_HISTORY 65536u                   /* a SNAPPY block: the most kept behind the decoder */
#define GF__Z_AHEAD 16384u                     /* decoded past what is asked for */
#define GF__Z_ROOM (64u + 4096u)               /* the least room a step starts with */
#define GF__Z_IN 65536u                        /* compressed bytes read at a time (zin) */

#ifdef GF__SNAPPY_OWN
static uint64_t gf__col_z_pos(const gpufeed_column *c, const uint8_t *p) { return c->z.base + (uint64_t)(p - c->z.buf); }

/* the first window byte the reader still needs */
static const uint8_t *gf__col_z_low(const gpufeed_column *c)
{
    if (!c->idx_ready) return c->vp;
    return c->idx.lit_left ? c->idx.lit : c->idx.p;
}

/* the offset in the window of a reader pointer after the bytes from
   offset keep on moved to the start (a pointer before keep is no longer
   read: it goes to the start) */
static size_t gf__z_moved(const gpufeed_column *c, const uint8_t *p, size_t keep)
{
    size_t o = (size_t)(p - c->z.buf);
    return o < keep ? 0 : o - keep;
}

/* Moves the window's bytes from the first one still needed (by the reader,
   or as SNAPPY history) to its start, or into a larger buffer when that
   would free too little: room for at least `room` more bytes. */
static gpufeed_result gf__col_z_room(gpufeed_column *c, size_t room)
{
    gf__snap *z = &c->z;
    const size_t used = (size_t)(z->op - z->buf), cap = c->zbuf_cap;
    /* SNAPPY history back to the start of the current 64 KiB block only:
       the compressors writers use (snappy, snap, Go's) compress 64 KiB
       blocks apart, so no copy reaches past a block's start; one that does
       decodes the page whole (gf__col_z_whole) */
    size_t hist = (size_t)((z->base + used) & (GF__Z_HISTORY - 1));
    size_t keep, low = (size_t)(gf__col_z_low(c) - z->buf), live;
    size_t o_vp, o_p = 0, o_lit = 0;
    if (hist > cap / 2) hist = cap / 2;
    keep = used > hist ? used - hist : 0;
    if (low < keep) keep = low;
    live = used - keep;
    o_vp = gf__z_moved(c, c->vp, keep);
    if (c->idx_ready) { o_p = gf__z_moved(c, c->idx.p, keep); o_lit = c->idx.lit_left ? gf__z_moved(c, c->idx.lit, keep) : 0; }
    if (cap - live < room + GF__SNAPPY_OUT_SLACK || keep < cap / 4) { /* grow */
        size_t want = 2 * cap, most = (size_t)z->total + 2 * GF__SNAPPY_OUT_SLACK + 4096;
        uint8_t *nb;
        if (want < live + room + GF__SNAPPY_OUT_SLACK + cap / 2) want = live + room + GF__SNAPPY_OUT_SLACK + cap / 2;
        if (want > most) want = most;
        if (want < live + room + GF__SNAPPY_OUT_SLACK) want = live + room + GF__SNAPPY_OUT_SLACK;
        nb = (uint8_t *)gf__realloc(&c->f->alloc, c->zbuf, want);
        if (!nb) return gf__col_fail(c, GPUFEED_ERR_OUT_OF_MEMORY, "out of memory for a %llu-byte page window", (unsigned long long)want);
        c->zbuf = nb; c->zbuf_cap = want;
    }
    if (live && keep) memmove(c->zbuf, c->zbuf + keep, live);
    z->base += keep;
    z->buf = c->zbuf; z->op = c->zbuf + live; z->end = c->zbuf + c->zbuf_cap;
    c->vp = c->zbuf + o_vp;
    c->vend = z->op;
    if (c->idx_ready) {
        c->idx.p = c->zbuf + o_p;
        if (c->idx.lit_left) c->idx.lit = c->zbuf + o_lit;
        c->idx.end = z->op;
    }
    return GPUFEED_OK;
}

/* The streamed page decoded whole into the page buffer after all (a copy
   reaches back past the window): the reader's pointers follow, by page
   offset. */
static gpufeed_result gf__col_inflate_to(gpufeed_column *c, const uint8_t *src, size_t n, size_t un, uint8_t **buf, size_t *cap);
static gpufeed_result gf__col_z_whole(gpufeed_column *c)
{
    gf__snap *z = &c->z;
    const uint64_t vp = gf__col_z_pos(c, c->vp);
    uint64_t p = 0, lit = 0;
    const uint8_t *src = z->src;
    size_t n = (size_t)(z->iend - z->src);
    gpufeed_result r;
    if (c->idx_ready) {
        p = gf__col_z_pos(c, c->idx.p);
        if (c->idx.lit_left) lit = gf__col_z_pos(c, c->idx.lit);
    }
    c->z_on = 0;
    if (c->zin_len) { /* read in pieces: the whole page read again */
        r = gf__col_fetch(c, c->zin_off, (size_t)c->zin_len, &src);
        if (r) return r;
        n = (size_t)c->zin_len;
        c->zin_len = 0;
    }
    r = gf__col_inflate_to(c, src, n, (size_t)z->total, &c->dbuf, &c->dbuf_cap);
    if (r) return r;
    c->vp = c->dbuf + vp;
    c->vend = c->dbuf + z->total;
    if (c->idx_ready) {
        c->idx.p = c->dbuf + p;
        if (c->idx.lit_left) c->idx.lit = c->dbuf + lit;
        c->idx.end = c->vend;
    }
    return GPUFEED_OK;
}

/* The next piece of a streamed page's compressed bytes, for a file read
   with positioned reads: the bytes not yet decoded move to zin's start,
   then up to GF__Z_IN more (as many again as are kept, for an element
   longer than a piece) are read after them. The first piece takes what the
   read window already holds of the page (its header's read got there). */
static gpufeed_result gf__col_z_input(gpufeed_column *c, gf__snap *z, int first)
{
    const size_t left = first ? 0 : (size_t)(z->iend - z->ip);
    const uint64_t have = first ? 0 : z->ibase + (uint64_t)(z->iend - z->src), piece = left > GF__Z_IN ? left : GF__Z_IN;
    uint64_t n = c->zin_len - have, got = 0, at;
    gpufeed_result r;
    if (n > piece) n = piece;
    if (left) memmove(c->zin, z->ip, left);
    if (!gf__grow(&c->f->alloc, &c->zin, &c->zin_cap, left + (size_t)n))
        return gf__col_fail(c, GPUFEED_ERR_OUT_OF_MEMORY, "out of memory for a %llu-byte read", (unsigned long long)(left + n));
    at = c->zin_off + have;
    if (c->win && at >= c->win_off && at < c->win_off + c->win_len) { /* already read */
        got = c->win_off + c->win_len - at;
        if (got > n) got = n;
        memcpy(c->zin + left, c->win + (at - c->win_off), (size_t)got);
    }
    if (got < n && (r = gf__col_read_at(c, at + got, c->zin + left + got, n - got)) != GPUFEED_OK) return r;
    if (!first) {
        z->ibase += (uint64_t)(z->ip - z->src);
        z->src = z->ip = c->zin;
        z->iend = c->zin + left + n;
        z->more = have + n < c->zin_len;
    }
    return GPUFEED_OK;
}

/* A SNAPPY dictionary page of a file read with positioned reads,
   inflated into *buf (un bytes) as its compressed bytes come in a piece at
   a time: no buffer of the whole compressed page. */
static gpufeed_result gf__col_z_inflate(gpufeed_column *c, size_t un, uint8_t **buf, size_t *cap)
{
    char msg[GPUFEED_ERROR_MAX];
    gf__snap z;
    size_t n = c->zin_len < GF__Z_IN ? (size_t)c->zin_len : GF__Z_IN;
    int st;
    gpufeed_result r = gf__col_inflate_room(c, c->zin_len, un, buf, cap);
    if (r || (r = gf__col_z_input(c, &z, 1)) != GPUFEED_OK) return r;
    if (gf__snappy_begin(&z, c->zin, n, (uint64_t)un, msg, sizeof msg)) return gf__col_fail(c, GPUFEED_ERR_CODEC, "%s", msg);
    z.more = n < c->zin_len;
    z.buf = z.op = *buf;
    z.end = *buf + un;
    while ((st = gf__snappy_run(&z, NULL, msg, sizeof msg)) == GF__SNAP_INPUT)
        if ((r = gf__col_z_input(c, &z, 0)) != GPUFEED_OK) return r;
    c->zin_len = 0;
    if (st == GF__SNAP_ROOM || st == GF__SNAP_HISTORY) /* cannot happen with the whole page in *buf */
        gf__fmt(msg, sizeof msg, "snappy: stream overruns its %llu-byte output", (unsigned long long)un);
    return st ? gf__col_fail(c, GPUFEED_ERR_CODEC, "%s", msg) : GPUFEED_OK;
}

/* Decodes the streamed page up to page offset `want` (and a little more),
   making room in the window as it goes. */
static gpufeed_result gf__col_z_need(gpufeed_column *c, uint64_t want)
{
    gf__snap *z = &c->z;
    size_t room = GF__Z_ROOM;
    if (!c->z_on) return GPUFEED_OK;
    if (want > z->total) want = z->total;
    while (gf__col_z_pos(c, z->op) < want && (z->ip < z->iend || z->more)) {
        char msg[GPUFEED_ERROR_MAX];
        const uint64_t at = gf__col_z_pos(c, z->op), next = (at | (GF__Z_HISTORY - 1)) + 1; /* the next block's start */
        uint64_t goal = want + GF__Z_AHEAD, blk = z->total - at < GF__Z_HISTORY ? z->total - at : GF__Z_HISTORY;
        const uint8_t *stop;
        int st;
        /* room made where a block starts, when the block does not fit: no
           history to keep then, only what the reader has not consumed */
        if ((size_t)(z->end - z->op) < room || ((at & (GF__Z_HISTORY - 1)) == 0 && (size_t)(z->end - z->op) < blk + GF__SNAPPY_OUT_SLACK)) {
            gpufeed_result r = gf__col_z_room(c, room);
            if (r) return r;
        }
        if (goal > next) goal = next; /* each step ends at a block's end (where its elements end) */
        if (goal > z->total) goal = z->total;
        stop = goal - z->base < (uint64_t)(z->end - z->buf) ? z->buf + (goal - z->base) : z->end;
        st = gf__snappy_run(z, stop, msg, sizeof msg);
        if (st == GF__SNAP_ROOM) { room *= 2; continue; }     /* an element larger than the room */
        if (st == GF__SNAP_INPUT) {                            /* the next piece of the page's bytes */
            gpufeed_result r = gf__col_z_input(c, &c->z, 0);
            if (r) { c->z_on = 0; return r; }
            continue;
        }
        if (st == GF__SNAP_HISTORY) return gf__col_z_whole(c);
        if (st) { c->z_on = 0; return gf__col_fail(c, GPUFEED_ERR_CODEC, "%s", msg); }
        room = GF__Z_ROOM;
    }
    c->vend = z->op;
    if (c->idx_ready) c->idx.end = z->op;
    return GPUFEED_OK;
}

/* the dictionary indices' decoder asks for bytes ahead of its position */
static int gf__col_z_hook(void *ctx, size_t ahead)
{
    gpufeed_column *c = (gpufeed_column *)ctx;
    if (!c->z_on) return 0;
    return gf__col_z_need(c, gf__col_z_pos(c, c->idx.p) + ahead) != GPUFEED_OK;
}

/* the next n bytes from c->vp */
static gpufeed_result gf__col_z_vals(gpufeed_column *c, uint64_t n)
{
    return c->z_on ? gf__col_z_need(c, gf__col_z_pos(c, c->vp) + n) : GPUFEED_OK;
}

/* the page's end: the rest of the stream decoded and checked, as a whole
   page is */
static gpufeed_result gf__col_z_finish(gpufeed_column *c)
{
    gpufeed_result r;
    if (!c->z_on) return GPUFEED_OK;
    r = gf__col_z_need(c, c->z.total);
    while (!r && c->z_on && (c->z.ip < c->z.iend || c->z.more)) { /* bytes after the page's last: the error a whole page gives */
        char msg[GPUFEED_ERROR_MAX];
        int st = gf__snappy_run(&c->z, NULL, msg, sizeof msg);
        if (st == GF__SNAP_INPUT) { r = gf__col_z_input(c, &c->z, 0); continue; }
        if (st) r = gf__col_fail(c, GPUFEED_ERR_CODEC, "%s", msg);
        break;
    }
    c->z_on = 0;
    return r;
}
#else /* no SNAPPY decoder of our own: no page is streamed (gf__col_z_fits) or read in pieces (gf__col_z_snappy) */
static gpufeed_result gf__col_z_inflate(gpufeed_column *c, size_t un, uint8_t **buf, size_t *cap)
{
    (void)un; (void)buf; (void)cap;
    return gf__col_fail(c, GPUFEED_ERR_UNSUPPORTED, "a page read in pieces without a SNAPPY decoder");
}
static gpufeed_result gf__col_z_whole(gpufeed_column *c) { (void)c; return GPUFEED_OK; }
static int gf__col_z_hook(void *ctx, size_t ahead) { (void)ctx; (void)ahead; return 0; }
static gpufeed_result gf__col_z_vals(gpufeed_column *c, uint64_t n) { (void)c; (void)n; return GPUFEED_OK; }
static gpufeed_result gf__col_z_finish(gpufeed_column *c) { (void)c; return GPUFEED_OK; }
#endif

/* A dense reader's column gives its raw dictionary buffer back to the
   scratch, when the scratch has none, for the next dictionary page. */
static void gf__col_lend_dict(gpufeed_column *c)
{
    if (!c->spare || *c->spare || !c->dict_buf) return;
    *c->spare = c->dict_buf; *c->spare_cap = c->dict_buf_cap;
    c->dict_buf = NULL; c->dict_buf_cap = 0;
}

/* A dictionary page's body (compressed or not) into the reader's dictionary. */
static gpufeed_result gf__col_dict_page(gpufeed_column *c, const gf__ph *h, const uint8_t *p)
{
    const uint8_t *data = p;
    size_t len = (size_t)h->csize;
    if (!c->dict_buf && c->spare && *c->spare) { /* the scratch's buffer: already touched memory */
        c->dict_buf = *c->spare; c->dict_buf_cap = *c->spare_cap;
        *c->spare = NULL; *c->spare_cap = 0;
    }
    if (c->ch->codec != GPUFEED_CODEC_UNCOMPRESSED) { /* inflated straight into the dictionary's buffer */
        gpufeed_result r = !p ? gf__col_z_inflate(c, (size_t)h->usize, &c->dict_buf, &c->dict_buf_cap) /* read in pieces (zin) */
                              : gf__col_inflate_to(c, p, (size_t)h->csize, (size_t)h->usize, &c->dict_buf, &c->dict_buf_cap);
        if (r) return r;
        data = c->dict_buf;
        len = (size_t)h->usize;
    }
    return gf__col_load_dict(c, h, data, len);
}

/* Loads the dictionary page at the chunk's start without moving the page
   walk (used after a seek, when the first dictionary-encoded page needs it). */
static gpufeed_result gf__col_load_pending_dict(gpufeed_column *c)
{
    uint64_t save_pos = c->pos, save_off = c->page_off;
    int32_t save_page = c->cur_page;
    gf__ph h;
    uint64_t hlen;
    const uint8_t *p;
    gpufeed_result r;
    c->dict_pending = 0;
    c->pos = c->page_off = c->start;
    c->cur_page = 0;
    c->scan = 1;
    r = gf__col_header(c, &h, &hlen);
    c->scan = 0;
    if (r) return r;
    if (h.type != GF__PAGE_DICT) {
        c->pos = save_pos;
        c->page_off = save_off;
        c->cur_page = save_page;
        return GPUFEED_OK; /* no dictionary: the caller reports it */
    }
    if (!h.has_dict) return gf__col_fail(c, GPUFEED_ERR_PAGE, "dictionary page without a dictionary page header");
    if (!gf__codec_supported(c->ch->codec)) {
        char why[GPUFEED_ERROR_MAX];
        return gf__col_fail(c, GPUFEED_ERR_UNSUPPORTED, "%s", gf__codec_missing(c->ch->codec, why, sizeof why));
    }
    if (h.csize < 0 || h.usize < 0 || (uint32_t)h.csize > GPUFEED_MAX_PAGE_SIZE || (uint32_t)h.usize > GPUFEED_MAX_PAGE_SIZE ||
        (uint64_t)h.csize > c->region_end - c->pos - hlen)
        return gf__col_fail(c, GPUFEED_ERR_PAGE, "dictionary page of %d/%d bytes is invalid or runs past the column data", h.csize, h.usize);
    c->scan = 1;
    r = gf__col_fetch(c, c->pos + hlen, (size_t)h.csize, &p);
    c->scan = 0;
    if (r) return r;
    if (c->crc && h.has_crc && gf__crc_run(c->crc, 0, p, (size_t)h.csize) != (uint32_t)h.crc)
        return gf__col_fail(c, GPUFEED_ERR_CHECKSUM, "dictionary page CRC mismatch");
    r = gf__col_dict_page(c, &h, p);
    if (r) return r;
    c->pos = save_pos;
    c->page_off = save_off;
    c->cur_page = save_page;
    return GPUFEED_OK;
}


/* DELTA_LENGTH_BYTE_ARRAY (lengths, then the bytes) and DELTA_BYTE_ARRAY
   (prefix lengths, then suffixes as DELTA_LENGTH_BYTE_ARRAY) into PLAIN
   form: BYTE_ARRAY as length + bytes, FIXED_LEN_BYTE_ARRAY as the bytes. */
static gpufeed_result gf__col_delta_bytes(gpufeed_column *c, const uint8_t *vals, size_t vlen, int64_t nv, int prefixed)
{
    const gpufeed_allocator *a = &c->f->alloc;
    const uint8_t *p = vals, *end = vals + vlen, *used = NULL;
    int32_t *pre = NULL, *len = NULL;
    int64_t n, n2 = 0, i, room = nv;
    uint64_t total = 0, outsz;
    char msg[GPUFEED_ERROR_MAX];
    gpufeed_result r = GPUFEED_OK;
    int flba = c->ci->physical == GPUFEED_FIXED_LEN_BYTE_ARRAY;
    if (c->ci->physical != GPUFEED_BYTE_ARRAY && !(flba && prefixed))
        return gf__col_fail(c, GPUFEED_ERR_ENCODING, "%s on a %s column", prefixed ? "DELTA_BYTE_ARRAY" : "DELTA_LENGTH_BYTE_ARRAY",
                            gpufeed_physical_type_name(c->ci->physical));
    if (room > 32768 * (int64_t)vlen + 1) room = 32768 * (int64_t)vlen + 1;
    pre = (int32_t *)gf__alloc(a, (size_t)room * 4 + 8);
    len = (int32_t *)gf__alloc(a, (size_t)room * 4 + 8);
    if (!pre || !len) { r = gf__col_fail(c, GPUFEED_ERR_OUT_OF_MEMORY, "out of memory for %lld delta values", (long long)room); goto out; }
    if (prefixed) {
        n = gf__delta_bp(p, end, 4, (uint8_t *)pre, room, &used, msg, sizeof msg);
        if (n < 0) { r = gf__col_fail(c, GPUFEED_ERR_CORRUPT, "prefix lengths: %s", msg); goto out; }
        p = used;
    } else n = -1;
    n2 = gf__delta_bp(p, end, 4, (uint8_t *)len, room, &used, msg, sizeof msg);
    if (n2 < 0) { r = gf__col_fail(c, GPUFEED_ERR_CORRUPT, "lengths: %s", msg); goto out; }
    if (prefixed && n2 != n) {
        r = gf__col_fail(c, GPUFEED_ERR_CORRUPT, "DELTA_BYTE_ARRAY has %lld prefixes but %lld suffixes", (long long)n, (long long)n2);
        goto out;
    }
    p = used;

    /* sizes: the suffix bytes must be there; values are prefix + suffix */
    {
        uint64_t sfx = 0, prev = 0;
        for (i = 0; i < n2; i++) {
            uint64_t pl = prefixed ? (uint64_t)(uint32_t)pre[i] : 0, v;
            if (len[i] < 0 || (prefixed && (pre[i] < 0 || pl > prev))) {
                r = gf__col_fail(c, GPUFEED_ERR_CORRUPT, "delta value %lld has a negative length or a prefix longer than the value before it", (long long)i);
                goto out;
            }
            sfx += (uint64_t)(uint32_t)len[i];
            v = pl + (uint64_t)(uint32_t)len[i];
            if (flba && v != (uint64_t)c->ci->type_length) {
                r = gf__col_fail(c, GPUFEED_ERR_CORRUPT, "DELTA_BYTE_ARRAY value %lld has %llu bytes, the column %d", (long long)i, (unsigned long long)v,
                                 c->ci->type_length);
                goto out;
            }
            if (v > UINT32_MAX) { r = gf__col_fail(c, GPUFEED_ERR_LIMIT, "delta value of %llu bytes", (unsigned long long)v); goto out; }
            total += v; prev = v;
        }
        if (sfx > (uint64_t)(end - p)) {
            r = gf__col_fail(c, GPUFEED_ERR_CORRUPT, "delta byte arrays need %llu bytes, the page has %llu", (unsigned long long)sfx,
                             (unsigned long long)(end - p));
            goto out;
        }
    }
    outsz = total + (flba ? 0 : 4 * (uint64_t)n2);
    if (outsz > GPUFEED_MAX_PAGE_SIZE) {
        r = gf__col_fail(c, GPUFEED_ERR_LIMIT, "delta byte arrays expand to %llu bytes, beyond GPUFEED_MAX_PAGE_SIZE", (unsigned long long)outsz);
        goto out;
    }
    if (!gf__grow(a, &c->tbuf, &c->tbuf_cap, (size_t)outsz + 1)) {
        r = gf__col_fail(c, GPUFEED_ERR_OUT_OF_MEMORY, "out of memory for a %llu-byte page", (unsigned long long)outsz);
        goto out;
    }
    {
        uint8_t *o = c->tbuf, *last = NULL;
        for (i = 0; i < n2; i++) {
            uint32_t pl = prefixed ? (uint32_t)pre[i] : 0, sl = (uint32_t)len[i];
            uint8_t *val;
            if (!flba) {
                uint32_t vl = pl + sl;
                memcpy(o, &vl, 4);
                o += 4;
            }
            val = o;
            if (pl) memmove(o, last, pl); /* the previous value's first bytes */
            memcpy(o + pl, p, sl);
            p += sl; o += pl + sl;
            last = val;
        }
        c->vp = c->tbuf; c->vend = o;
    }
out:
    gf__free(a, pre); gf__free(a, len);
    return r;
}

/* The v1 page's levels section (repetition or definition) at the front of
   [*vals, *vals + *vlen): RLE with a 4-byte length, or the deprecated
   BIT_PACKED; moves *vals past it. */
static gpufeed_result gf__v1_levels(gpufeed_column *c, int32_t enc, int16_t maxl, uint64_t nv, const char *what,
                                    const uint8_t **vals, size_t *vlen, const uint8_t **lv, const uint8_t **lv_end)
{
    int bw = gf__bit_width((uint32_t)maxl);
    if (enc == GPUFEED_ENC_BIT_PACKED) {
        uint64_t nb = (nv * (uint64_t)bw + 7) / 8;
        if (nb > *vlen)
            return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "BIT_PACKED %s levels need %llu bytes, page has %llu", what, (unsigned long long)nb,
                                (unsigned long long)*vlen);
        *lv = *vals;
        *lv_end = *vals + nb;
        *vals += nb;
        *vlen -= (size_t)nb;
    } else if (enc == GPUFEED_ENC_RLE) {
        uint32_t n;
        if (*vlen < 4) return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "page too short for its %s-level length", what);
        n = gf__ld32(*vals);
        if (n > *vlen - 4) return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "%s levels of %u bytes overrun the %llu-byte page", what, n, (unsigned long long)*vlen);
        *lv = *vals + 4;
        *lv_end = *lv + n;
        *vals += 4 + (size_t)n;
        *vlen -= 4 + (size_t)n;
    } else {
        return gf__col_fail(c, GPUFEED_ERR_ENCODING, "%s level encoding %s is not supported", what, gpufeed_encoding_name((gpufeed_encoding)enc));
    }
    return GPUFEED_OK;
}

/* SNAPPY by our own decoder: a page it can take a piece at a time */
static int gf__col_z_snappy(const gpufeed_column *c)
{
#ifdef GF__SNAPPY_OWN
    return c->ch->codec == GPUFEED_CODEC_SNAPPY;
#else
    (void)c;
    return 0;
#endif
}

/* A v1 SNAPPY data page to stream (gf__col_z_need): a dense reader's
   flat column, its values fixed-width PLAIN or dictionary indices, the
   page larger than the window. */
static int gf__col_z_fits(const gpufeed_column *c, const gf__ph *h)
{
#ifdef GF__SNAPPY_OWN
    const gpufeed_physical_type pt = c->ci->physical;
    if (!c->z_want || c->nested || c->ci->max_rep > 0 || c->ci->max_def > 1 || c->ch->codec != GPUFEED_CODEC_SNAPPY) return 0;
    if ((uint32_t)h->usize <= GPUFEED_PAGE_WINDOW) return 0;
    if (h->encoding == GPUFEED_ENC_PLAIN_DICTIONARY || h->encoding == GPUFEED_ENC_RLE_DICTIONARY) return 1;
    return h->encoding == GPUFEED_ENC_PLAIN && (pt == GPUFEED_INT32 || pt == GPUFEED_INT64 || pt == GPUFEED_FLOAT || pt == GPUFEED_DOUBLE);
#else
    (void)c; (void)h;
    return 0;
#endif
}

#ifdef GF__SNAPPY_OWN
/* Starts streaming data page h (compressed bytes at p, nv level entries):
   the definition levels decoded and copied out to lbuf (*lv, *lv_end);
   *valsp, *vlenp: the values decoded so far. */
static gpufeed_result gf__col_z_start(gpufeed_column *c, const gf__ph *h, const uint8_t *p, uint64_t nv, const uint8_t **lv,
                                      const uint8_t **lv_end, const uint8_t **valsp, size_t *vlenp)
{
    char msg[GPUFEED_ERROR_MAX];
    const uint8_t *vals;
    size_t vlen = (size_t)h->usize;
    gpufeed_result r;
    size_t n = (size_t)h->csize;
    c->z_on = 0;
    if (c->zin_len) { /* the page's first piece */
        r = gf__col_z_input(c, &c->z, 1);
        if (r) return r;
        p = c->zin;
        n = c->zin_len < GF__Z_IN ? (size_t)c->zin_len : GF__Z_IN;
    }
    if (gf__snappy_begin(&c->z, p, n, (uint64_t)h->usize, msg, sizeof msg)) return gf__col_fail(c, GPUFEED_ERR_CODEC, "%s", msg);
    c->z.more = n < (uint64_t)h->csize;
    if (!gf__grow(&c->f->alloc, &c->zbuf, &c->zbuf_cap, GPUFEED_PAGE_WINDOW))
        return gf__col_fail(c, GPUFEED_ERR_OUT_OF_MEMORY, "out of memory for a page window");
    c->z.buf = c->z.op = c->zbuf;
    c->z.end = c->zbuf + c->zbuf_cap;
    c->z_on = 1;
    c->idx_ready = 0;
    c->vp = c->zbuf; /* the levels are read from the start */
    *lv = *lv_end = NULL;
    if (c->ci->max_def > 0) {
        uint64_t nb = (nv + 7) / 8; /* BIT_PACKED: a bit a level */
        if (h->def_enc == GPUFEED_ENC_RLE) {
            r = gf__col_z_vals(c, 4);
            if (r) return r;
            nb = c->vend - c->vp >= 4 ? 4 + (uint64_t)gf__ld32(c->vp) : 4;
        }
        r = gf__col_z_vals(c, nb);
        if (r) return r;
        vals = c->vp;
        r = gf__v1_levels(c, h->def_enc, c->ci->max_def, nv, "definition", &vals, &vlen, lv, lv_end);
        if (r) return r;
        if (!gf__grow(&c->f->alloc, &c->lbuf, &c->lbuf_cap, (size_t)(*lv_end - *lv) + 8))
            return gf__col_fail(c, GPUFEED_ERR_OUT_OF_MEMORY, "out of memory for a page's levels");
        memcpy(c->lbuf, *lv, (size_t)(*lv_end - *lv));
        *lv_end = c->lbuf + (*lv_end - *lv);
        *lv = c->lbuf;
        c->vp = vals;
    }
    *valsp = c->vp;
    *vlenp = (size_t)(c->z.op - c->vp);
    return GPUFEED_OK;
}
#else
static gpufeed_result gf__col_z_start(gpufeed_column *c, const gf__ph *h, const uint8_t *p, uint64_t nv, const uint8_t **lv,
                                      const uint8_t **lv_end, const uint8_t **valsp, size_t *vlenp)
{
    (void)h; (void)p; (void)nv; (void)lv; (void)lv_end; (void)valsp; (void)vlenp;
    return gf__col_fail(c, GPUFEED_ERR_UNSUPPORTED, "a streamed page without a SNAPPY decoder");
}
#endif

/* The level sections of data page h (its bytes at p, nv level entries):
   a v2 page keeps them uncompressed before the values, a v1 page puts
   them before the values inside the compressed body. The decoders of
   c->def and c->rep start on them; *valsp, *vlenp: the values section. */
static gpufeed_result gf__col_page_levels(gpufeed_column *c, const gf__ph *h, const uint8_t *p, int v2, uint64_t nv,
                                          const uint8_t **valsp, size_t *vlenp)
{
    const uint8_t *lv = NULL, *lv_end = NULL, *rl = NULL, *rl_end = NULL, *vals;
    size_t vlen;
    gpufeed_result r;
    if (v2) {
        uint64_t levels;
        if (h->def_len < 0 || h->rep_len < 0) return gf__col_fail(c, GPUFEED_ERR_PAGE, "negative level lengths in a v2 page");
        levels = (uint64_t)h->def_len + (uint64_t)h->rep_len;
        if (levels > (uint64_t)h->csize || levels > (uint64_t)h->usize)
            return gf__col_fail(c, GPUFEED_ERR_PAGE, "v2 level sections (%llu bytes) exceed the page (%d bytes)", (unsigned long long)levels, h->csize);
        rl = p; rl_end = p + h->rep_len;
        lv = p + h->rep_len; lv_end = lv + h->def_len;
        vals = p + levels;
        vlen = (size_t)((uint64_t)h->csize - levels);
        if (h->is_compressed && c->ch->codec != GPUFEED_CODEC_UNCOMPRESSED && vlen > 0) {
            size_t ulen = (size_t)((uint64_t)h->usize - levels);
            r = gf__col_inflate(c, vals, vlen, ulen, &vals);
            if (r) return r;
            vlen = ulen;
        }

        /* levels must stay valid: they live in the window, which the
           next fetch may move, but no fetch happens within a page */
    } else if (gf__col_z_fits(c, h)) {
        r = gf__col_z_start(c, h, p, nv, &lv, &lv_end, &vals, &vlen); /* decoded as the reader gets there */
        if (r) return r;
    } else {
        vals = p; vlen = (size_t)h->csize;
        if (c->ch->codec != GPUFEED_CODEC_UNCOMPRESSED) {
            r = gf__col_inflate(c, p, (size_t)h->csize, (size_t)h->usize, &vals);
            if (r) return r;
            vlen = (size_t)h->usize;
            gf__col_unmap_to(c, c->pos); /* inflated whole: its bytes are done with */
        }

        /* v1: repetition levels, then definition levels, then values */
        if (c->ci->max_rep > 0) {
            r = gf__v1_levels(c, h->rep_enc, c->ci->max_rep, nv, "repetition", &vals, &vlen, &rl, &rl_end);
            if (r) return r;
        }
        if (c->ci->max_def > 0) {
            r = gf__v1_levels(c, h->def_enc, c->ci->max_def, nv, "definition", &vals, &vlen, &lv, &lv_end);
            if (r) return r;
        }
    }
    if (c->ci->max_def > 0) {
        int bw = gf__bit_width((uint32_t)c->ci->max_def);
        if (!v2 && h->def_enc == GPUFEED_ENC_BIT_PACKED) gf__rle_init_msb(&c->def, lv, lv_end, bw, (uint32_t)nv);
        else gf__rle_init(&c->def, lv, lv_end, bw);
    }
    if (c->ci->max_rep > 0) {
        int bw = gf__bit_width((uint32_t)c->ci->max_rep);
        if (!v2 && h->rep_enc == GPUFEED_ENC_BIT_PACKED) gf__rle_init_msb(&c->rep, rl, rl_end, bw, (uint32_t)nv);
        else gf__rle_init(&c->rep, rl, rl_end, bw);
    }
    *valsp = vals;
    *vlenp = vlen;
    return GPUFEED_OK;
}

/* The values section of data page h by its encoding: PLAIN and RLE are
   read in place, DELTA_* and BYTE_STREAM_SPLIT rebuilt once into PLAIN
   form in the page buffer, dictionary indices need the dictionary.
   *again: the pending dictionary was loaded, walk this page again. */
static gpufeed_result gf__col_page_values(gpufeed_column *c, const gf__ph *h, const uint8_t *vals, size_t vlen,
                                          uint64_t nv, int *again)
{
    gpufeed_result r;
    switch (h->encoding) {
    case GPUFEED_ENC_PLAIN: break;
    case GPUFEED_ENC_DELTA_BINARY_PACKED: {
        /* decoded once into the page buffer, then read as PLAIN */
        int w = c->ci->physical == GPUFEED_INT32 ? 4 : 8;
        int64_t cnt, room;
        const uint8_t *used = NULL;
        char msg[GPUFEED_ERROR_MAX];
        if (c->ci->physical != GPUFEED_INT32 && c->ci->physical != GPUFEED_INT64)
            return gf__col_fail(c, GPUFEED_ERR_ENCODING, "DELTA_BINARY_PACKED on a %s column", gpufeed_physical_type_name(c->ci->physical));

        /* a page cannot hold more values than it has levels, nor more
           than a block (<= 65536 values, >= 2 bytes) per 2 bytes */
        room = (int64_t)nv;
        if (room > 32768 * (int64_t)vlen + 1) room = 32768 * (int64_t)vlen + 1;
        if (!gf__grow(&c->f->alloc, &c->tbuf, &c->tbuf_cap, (size_t)room * (size_t)w + 8))
            return gf__col_fail(c, GPUFEED_ERR_OUT_OF_MEMORY, "out of memory for %lld delta values", (long long)room);
        cnt = gf__delta_bp(vals, vals + vlen, w, c->tbuf, room, &used, msg, sizeof msg);
        if (cnt < 0) return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "%s", msg);
        c->vp = c->tbuf; c->vend = c->tbuf + (size_t)cnt * (size_t)w;
        c->enc = GPUFEED_ENC_PLAIN;
        break;
    }
    case GPUFEED_ENC_DELTA_LENGTH_BYTE_ARRAY: case GPUFEED_ENC_DELTA_BYTE_ARRAY: {
        /* rebuilt once into PLAIN form in the page buffer */
        r = gf__col_delta_bytes(c, vals, vlen, (int64_t)nv, h->encoding == GPUFEED_ENC_DELTA_BYTE_ARRAY);
        if (r) return r;
        c->enc = GPUFEED_ENC_PLAIN;
        break;
    }
    case GPUFEED_ENC_BYTE_STREAM_SPLIT: {
        /* byte k of value i is at k * N + i: put the values back
           together once, then read them as PLAIN */
        size_t w, nv2, i2, k2;
        switch (c->ci->physical) {
        case GPUFEED_FLOAT: case GPUFEED_INT32: w = 4; break;
        case GPUFEED_DOUBLE: case GPUFEED_INT64: w = 8; break;
        case GPUFEED_FIXED_LEN_BYTE_ARRAY: w = (size_t)c->ci->type_length; break;
        default: return gf__col_fail(c, GPUFEED_ERR_ENCODING, "BYTE_STREAM_SPLIT on a %s column", gpufeed_physical_type_name(c->ci->physical));
        }
        if (vlen % w)
            return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "BYTE_STREAM_SPLIT section of %llu bytes is not a multiple of the %llu-byte values",
                                (unsigned long long)vlen, (unsigned long long)w);
        nv2 = vlen / w;
        if (!gf__grow(&c->f->alloc, &c->tbuf, &c->tbuf_cap, vlen ? vlen : 1))
            return gf__col_fail(c, GPUFEED_ERR_OUT_OF_MEMORY, "out of memory for a %llu-byte page", (unsigned long long)vlen);
        for (k2 = 0; k2 < w; k2++) {
            const uint8_t *in = vals + k2 * nv2;
            uint8_t *o = c->tbuf + k2;
            for (i2 = 0; i2 < nv2; i2++) o[i2 * w] = in[i2];
        }
        c->vp = c->tbuf; c->vend = c->tbuf + vlen;
        c->enc = GPUFEED_ENC_PLAIN;
        break;
    }
    case GPUFEED_ENC_PLAIN_DICTIONARY: case GPUFEED_ENC_RLE_DICTIONARY:
        if (!c->has_dict && c->dict_pending) {
            /* after a seek: load the dictionary, then walk this page again */
            r = gf__col_load_pending_dict(c);
            if (r) return r;
            c->pos = c->page_off;
            c->pages = c->cur_page;
            c->data_pages--;
            *again = 1;
            return GPUFEED_OK;
        }
        if (!c->has_dict) return gf__col_fail(c, GPUFEED_ERR_DICTIONARY, "dictionary-encoded page but the chunk has no dictionary page");
        break;
    case GPUFEED_ENC_RLE:
        if (c->ci->physical != GPUFEED_BOOLEAN) return gf__col_fail(c, GPUFEED_ERR_ENCODING, "RLE values on a non-BOOLEAN column");
        break;
    default:
        return gf__col_fail(c, (h->encoding >= 0 && h->encoding <= 9) ? GPUFEED_ERR_UNSUPPORTED : GPUFEED_ERR_ENCODING,
                            "value encoding %s (%d) is not supported yet", gpufeed_encoding_name((gpufeed_encoding)h->encoding), h->encoding);
    }
    return GPUFEED_OK;
}

/* Advances to the next data page with values. GPUFEED_DONE at the end. */
static gpufeed_result gf__col_next_page(gpufeed_column *c)
{
    for (;;) {
        gf__ph h;
        uint64_t hlen, body;
        const uint8_t *p;
        gpufeed_result r;
        if (c->values_left == 0) return GPUFEED_DONE;
        c->page_off = c->pos;
        c->cur_page = c->pages;
        r = gf__col_header(c, &h, &hlen);
        if (r) return r;
        if (h.csize < 0 || h.usize < 0)
            return gf__col_fail(c, GPUFEED_ERR_PAGE, "negative page size (compressed %d, uncompressed %d)", h.csize, h.usize);
        if ((uint32_t)h.csize > GPUFEED_MAX_PAGE_SIZE || (uint32_t)h.usize > GPUFEED_MAX_PAGE_SIZE)
            return gf__col_fail(c, GPUFEED_ERR_LIMIT, "page of %d/%d bytes exceeds GPUFEED_MAX_PAGE_SIZE", h.csize, h.usize);
        body = c->pos + hlen;
        if (body > c->region_end || (uint64_t)h.csize > c->region_end - body)
            return gf__col_fail(c, GPUFEED_ERR_PAGE, "page of %d bytes at offset %llu runs past the column data (ends at %llu)",
                                h.csize, (unsigned long long)body, (unsigned long long)c->region_end);
        c->pos = body + (uint64_t)h.csize;
        c->pages++;
        if (h.type != GF__PAGE_DATA && h.type != GF__PAGE_DATA_V2 && h.type != GF__PAGE_DICT)
            continue; /* INDEX_PAGE and unknown page types are skipped */
        if (!gf__codec_supported(c->ch->codec)) {
            char why[GPUFEED_ERROR_MAX];
            return gf__col_fail(c, GPUFEED_ERR_UNSUPPORTED, "%s", gf__codec_missing(c->ch->codec, why, sizeof why));
        }
        c->zin_len = 0;
        p = NULL;
        if (!c->f->map && !(c->crc && h.has_crc) && (uint64_t)h.csize > GF__Z_IN &&
            (h.type == GF__PAGE_DATA ? gf__col_z_fits(c, &h) : h.type == GF__PAGE_DICT && c->z_want && gf__col_z_snappy(c))) {
            c->zin_off = body; /* streamed, or a dictionary inflated, read a piece at a time as the decoder gets there */
            c->zin_len = (uint64_t)h.csize;
        } else if ((r = gf__col_fetch(c, body, (size_t)h.csize, &p)) != GPUFEED_OK)
            return r;
        if (c->crc && h.has_crc) {
            uint32_t got = gf__crc_run(c->crc, 0, p, (size_t)h.csize);
            if (got != (uint32_t)h.crc)
                return gf__col_fail(c, GPUFEED_ERR_CHECKSUM, "page CRC is %08x, header says %08x", got, (uint32_t)h.crc);
        }
        if (h.type == GF__PAGE_DICT) {
            if (!h.has_dict) return gf__col_fail(c, GPUFEED_ERR_PAGE, "dictionary page without a dictionary page header");
            if (c->data_pages > 0) return gf__col_fail(c, GPUFEED_ERR_PAGE, "dictionary page after data pages");
            r = gf__col_dict_page(c, &h, p);
            if (r) return r;
            if (c->ch->codec != GPUFEED_CODEC_UNCOMPRESSED) gf__col_unmap_to(c, c->pos); /* inflated: its bytes are done with */
            continue;
        }

        /* a data page */
        {
            int v2 = h.type == GF__PAGE_DATA_V2;
            const uint8_t *vals = NULL; /* set by gf__col_page_levels */
            int again = 0;
            size_t vlen = 0;
            uint64_t nv;
            if (v2 ? !h.has_v2 : !h.has_dph) return gf__col_fail(c, GPUFEED_ERR_PAGE, "data page without its header struct");
            if (h.nvalues < 0) return gf__col_fail(c, GPUFEED_ERR_PAGE, "data page with %d values", h.nvalues);
            nv = (uint64_t)h.nvalues;
            if (nv > (uint64_t)c->values_left)
                return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "page has %llu values but only %lld remain in the column chunk", (unsigned long long)nv,
                                    (long long)c->values_left);
            if (nv > GPUFEED_MAX_PAGE_VALUES)
                return gf__col_fail(c, GPUFEED_ERR_LIMIT, "page of %llu values exceeds GPUFEED_MAX_PAGE_VALUES", (unsigned long long)nv);
            c->data_pages++;
            r = gf__col_page_levels(c, &h, p, v2, nv, &vals, &vlen);
            if (r) return r;
            c->v2 = v2;
            c->vp = vals;
            c->vend = vals + vlen;
            c->bitpos = 0;
            c->idx_ready = 0;
            c->enc = (gpufeed_encoding)h.encoding;
            c->enc_page = c->enc;
            r = gf__col_page_values(c, &h, vals, vlen, nv, &again);
            if (r) return r;
            if (again) continue;
            c->values_left -= (int64_t)nv;
            c->page_left = (uint32_t)nv;
            c->page_nv = (uint32_t)nv;
            c->in_page = nv > 0;
            if (c->in_page) return GPUFEED_OK;
        }
    }
}

/* Decodes n compact values of the current page into out. */
static gpufeed_result gf__col_values(gpufeed_column *c, void *out, uint32_t n)
{
    if (n == 0) return GPUFEED_OK;
    switch (c->enc) {
    case GPUFEED_ENC_PLAIN:
        if (gf__plain_decode(c->ci->physical, c->ci->type_length, &c->vp, c->vend, &c->bitpos, out, n))
            return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "page holds fewer values than its levels say (PLAIN data ends)");
        return GPUFEED_OK;
    case GPUFEED_ENC_RLE: {
        uint8_t *o = (uint8_t *)out;
        uint32_t i, done = 0;
        if (!c->idx_ready) {
            uint32_t len;
            if (c->vend - c->vp < 4) return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "RLE boolean values miss their length prefix");
            len = gf__ld32(c->vp);
            if (len > (size_t)(c->vend - c->vp) - 4) return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "RLE boolean length %u overruns the page", len);
            gf__rle_init(&c->idx, c->vp + 4, c->vp + 4 + len, 1);
            c->idx_ready = 1;
        }
        while (done < n) {
            uint32_t buf[256], k = n - done < 256 ? n - done : 256, got;
            got = gf__rle_get(&c->idx, buf, k);
            if (got != k) return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "RLE boolean values end before the page's levels do");
            for (i = 0; i < k; i++) o[done + i] = (uint8_t)buf[i];
            done += k;
        }
        return GPUFEED_OK;
    }
    default: { /* dictionary indices */
        uint32_t done = 0, i;
        const size_t es = c->esz;
        if (!c->idx_ready) {
            int bw;
            if (c->vp >= c->vend) return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "dictionary indices miss their bit width");
            bw = *c->vp;
            if (bw > 32) return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "dictionary index bit width %d", bw);
            gf__rle_init(&c->idx, c->vp + 1, c->vend, bw);
            c->idx_ready = 1;
        }
        while (done < n) {
            uint32_t buf[256], k = n - done < 256 ? n - done : 256, got;
            got = gf__rle_get(&c->idx, buf, k);
            if (got != k) return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "dictionary indices end before the page's levels do");
            for (i = 0; i < k; i++) {
                if (buf[i] >= c->dict_n)
                    return gf__col_fail(c, GPUFEED_ERR_DICTIONARY, "dictionary index %u out of range (dictionary has %u entries)", buf[i], c->dict_n);
            }
            if (!out) { done += k; continue; } /* dropped: checked, not gathered (c->dict may be gone) */
            switch (es) {
            case 1: for (i = 0; i < k; i++) ((uint8_t *)out)[done + i] = ((const uint8_t *)c->dict)[buf[i]]; break;
            case 4: for (i = 0; i < k; i++) ((uint32_t *)out)[done + i] = ((const uint32_t *)c->dict)[buf[i]]; break;
            case 8: for (i = 0; i < k; i++) ((uint64_t *)out)[done + i] = ((const uint64_t *)c->dict)[buf[i]]; break;
            default: for (i = 0; i < k; i++) ((gpufeed_bytes *)out)[done + i] = ((const gpufeed_bytes *)c->dict)[buf[i]]; break;
            }
            done += k;
        }
        return GPUFEED_OK;
    }
    }
}


/* Drops nn compact values of the current page (fixed-width PLAIN values
   are stepped over, the others decoded and dropped). */
static gpufeed_result gf__col_drop_values(gpufeed_column *c, uint32_t nn)
{
    if (nn == 0) return GPUFEED_OK;
    if (c->enc == GPUFEED_ENC_PLAIN && c->ci->physical != GPUFEED_BYTE_ARRAY) {
        uint64_t bits;
        size_t w;
        switch (c->ci->physical) {
        case GPUFEED_BOOLEAN: w = 0; break;
        case GPUFEED_INT32: case GPUFEED_FLOAT: w = 4; break;
        case GPUFEED_INT96: w = 12; break;
        case GPUFEED_FIXED_LEN_BYTE_ARRAY: w = (size_t)c->ci->type_length; break;
        default: w = 8; break;
        }
        if (w == 0) {
            bits = (uint64_t)c->bitpos + nn;
            if ((bits + 7) / 8 > (uint64_t)(c->vend - c->vp))
                return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "page holds fewer values than its levels say (PLAIN data ends)");
            c->vp += bits >> 3; c->bitpos = (uint32_t)(bits & 7);
        } else {
            gpufeed_result r = gf__col_z_vals(c, (uint64_t)nn * w);
            if (r) return r;
            if ((uint64_t)nn * w > (uint64_t)(c->vend - c->vp))
                return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "page holds fewer values than its levels say (PLAIN data ends)");
            c->vp += (size_t)nn * w;
        }
        return GPUFEED_OK;
    }
    while (nn > 0) { /* decode and drop, at most max_rows at a time (the size of c->out) */
        uint32_t k = (int64_t)nn < c->max_rows ? nn : (uint32_t)c->max_rows;
        gpufeed_result r = gf__col_values(c, c->enc == GPUFEED_ENC_RLE_DICTIONARY || c->enc == GPUFEED_ENC_PLAIN_DICTIONARY ? NULL : c->out, k);
        if (r) return r;
        nn -= k;
    }
    return GPUFEED_OK;
}

/* ---- nested leaves: level entries, rows of many entries ----

   The levels of the current page are decoded GF__LTILE entries at a time
   into c->tr / c->td; c->tpos is the first entry not consumed yet. A row
   (record) is one entry with repetition level 0 and the entries with
   levels > 0 after it, which may continue on the next pages. */

/* index of tile entry i within its page, for messages */
static int64_t gf__nest_entry(const gpufeed_column *c, uint32_t i)
{
    return (int64_t)c->page_nv - (int64_t)c->page_left - (int64_t)(c->tcnt - i);
}

/* Makes sure the tile holds entries, opening the next page when the
   current one is used up. GPUFEED_DONE at the end of the chunk. */
static gpufeed_result gf__nest_tile(gpufeed_column *c)
{
    uint32_t n, got;
    if (c->tpos < c->tcnt) return GPUFEED_OK;
    if (c->page_left == 0) {
        gpufeed_result r;
        c->in_page = 0;
        r = gf__col_next_page(c);
        if (r) return r;
    }
    n = c->page_left < GF__LTILE ? c->page_left : GF__LTILE;
    got = gf__rle_get(&c->rep, c->tr, n);
    if (got != n || c->rep.err)
        return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "repetition levels end after %u of the page's remaining %u values", got, c->page_left);
    got = gf__rle_get(&c->def, c->td, n);
    if (got != n || c->def.err)
        return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "definition levels end after %u of the page's remaining %u values", got, c->page_left);
    c->page_left -= n;
    c->tpos = 0; c->tcnt = n;
    return GPUFEED_OK;
}

/* Checks the pending entries of the tile from c->tpos on and finds where
   the caller's run ends: before the entry that would start row `limit`
   (rows counted in *rows), or before any row start once *levels reaches
   max_levels (with a row started), or at the tile's end. *e: the end of
   the run; *nn: its entries that hold a value; *stop: 1 when it ended
   before a row start. GPUFEED_DONE: the chunk has no more entries. */
static gpufeed_result gf__nest_seg(gpufeed_column *c, int64_t limit, int64_t *rows, int64_t *levels, int64_t max_levels,
                                   uint32_t *e, uint32_t *nn, int *stop)
{
    const uint32_t maxr = (uint32_t)c->ci->max_rep, maxd = (uint32_t)c->ci->max_def;
    const int64_t rg_rows = c->f->md.row_groups[c->rg].num_rows;
    uint32_t i, n = 0, j;
    gpufeed_result r;
    *stop = 0;
    *nn = 0;
    *e = c->tpos;
    r = gf__nest_tile(c);
    if (r) return r;
    for (i = c->tpos; i < c->tcnt; i++) {
        uint32_t rp = c->tr[i], df = c->td[i];
        if (rp > maxr)
            return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "repetition level %u exceeds the column's maximum %u (level entry %lld of the page)", rp, maxr,
                                (long long)gf__nest_entry(c, i));
        if (df > maxd)
            return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "definition level %u exceeds the column's maximum %u (level entry %lld of the page)", df, maxd,
                                (long long)gf__nest_entry(c, i));
        if (rp == 0) {
            if (*rows >= limit || (*rows > 0 && *levels >= max_levels)) { *stop = 1; break; }
            if (c->rows_seen >= rg_rows)
                return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "the levels start more rows than the row group's %lld (level entry %lld of the page)",
                                    (long long)rg_rows, (long long)gf__nest_entry(c, i));
            c->rows_seen++; (*rows)++;
            c->rec_levels = 0;
            for (j = 1; j <= maxr; j++) c->wcnt[j] = df >= (uint32_t)c->rdef[j];
        } else {
            if (c->row_start)
                return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "level entry %lld of the page has repetition level %u where a row must start (%s)",
                                    (long long)gf__nest_entry(c, i), rp,
                                    c->row_start == 2 ? "the first entry of a page found through the page index" : "the first entry of the column chunk");
            if (c->wcnt[rp] == 0)
                return gf__col_fail(c, GPUFEED_ERR_CORRUPT,
                                    "inconsistent levels: repetition level %u continues a list that row %lld does not have (null or empty; level entry %lld "
                                    "of the page)",
                                    rp, (long long)(c->rows_seen - 1), (long long)gf__nest_entry(c, i));
            if (df < (uint32_t)c->rdef[rp])
                return gf__col_fail(c, GPUFEED_ERR_CORRUPT,
                                    "inconsistent levels: repetition level %u adds a list element with definition level %u, below the %d the list's elements "
                                    "need (row %lld, level entry %lld of the page)",
                                    rp, df, c->rdef[rp], (long long)(c->rows_seen - 1), (long long)gf__nest_entry(c, i));
            if (++c->wcnt[rp] > (int64_t)GPUFEED_MAX_LIST_WIDTH)
                return gf__col_fail(c, GPUFEED_ERR_LIMIT, "row %lld has a list of more than GPUFEED_MAX_LIST_WIDTH (%lu) elements",
                                    (long long)(c->rows_seen - 1), (unsigned long)GPUFEED_MAX_LIST_WIDTH);
            for (j = rp + 1; j <= maxr; j++) c->wcnt[j] = df >= (uint32_t)c->rdef[j];
        }
        c->row_start = 0;
        if (++c->rec_levels > (uint64_t)GPUFEED_MAX_RECORD_LEVELS)
            return gf__col_fail(c, GPUFEED_ERR_LIMIT, "row %lld has more than GPUFEED_MAX_RECORD_LEVELS (%llu) level entries", (long long)(c->rows_seen - 1),
                                (unsigned long long)GPUFEED_MAX_RECORD_LEVELS);
        (*levels)++;
        n += df == maxd;
    }
    *e = i; *nn = n;
    return GPUFEED_OK;
}

/* Skips n rows of a nested leaf. */
static gpufeed_result gf__nest_skip(gpufeed_column *c, int64_t n)
{
    int64_t rows = 0, levels = 0;
    while (n > 0) {
        uint32_t e, nn;
        int stop;
        gpufeed_result r = gf__nest_seg(c, n, &rows, &levels, INT64_MAX, &e, &nn, &stop);
        if (r == GPUFEED_DONE) {
            if (rows < n) return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "chunk ended while skipping to row %lld", (long long)(c->rows_done + n));
            break;
        }
        if (r) return r;
        r = gf__col_drop_values(c, nn);
        if (r) return r;
        c->tpos = e;
        if (stop) break;
    }
    c->rows_done += n;
    return GPUFEED_OK;
}

/* room for n bytes that stay put until the next batch */
static uint8_t *gf__blk_get(gpufeed_column *c, size_t n)
{
    gf__blk *b;
    size_t cap;
    while (c->cblk < c->nblk) {
        b = &c->blk[c->cblk];
        if (b->cap - b->used >= n) {
            uint8_t *p = b->p + b->used;
            b->used += n;
            return p;
        }
        c->cblk++;
    }
    if (c->nblk == (int32_t)(sizeof c->blk / sizeof c->blk[0])) return NULL;
    cap = c->nblk ? c->blk[c->nblk - 1].cap : 65536;
    if (c->nblk && cap <= SIZE_MAX / 2) cap *= 2;
    if (cap < n) cap = n;
    b = &c->blk[c->nblk];
    b->p = (uint8_t *)gf__alloc(&c->f->alloc, cap);
    if (!b->p) return NULL;
    b->cap = cap; b->used = n;
    c->cblk = c->nblk++;
    return b->p;
}

/* A batch's byte values from the current page point into page buffers that
   the next page reuses: copy them out first. */
static gpufeed_result gf__nest_keep_bytes(gpufeed_column *c, int64_t nval)
{
    gpufeed_bytes *v = (gpufeed_bytes *)(void *)c->oval;
    int64_t i;
    for (i = c->pg_val0; i < nval; i++) {
        uint8_t *dst;
        if (v[i].len == 0) { v[i].ptr = (const uint8_t *)""; continue; }
        dst = gf__blk_get(c, v[i].len);
        if (!dst) return gf__col_fail(c, GPUFEED_ERR_OUT_OF_MEMORY, "out of memory keeping %u bytes of a row that spans pages", v[i].len);
        memcpy(dst, v[i].ptr, v[i].len);
        v[i].ptr = dst;
    }
    c->pg_val0 = nval;
    return GPUFEED_OK;
}

/* gpufeed_column_read for nested leaves: whole rows, levels + packed values */
static gpufeed_result gf__nest_read(gpufeed_column *c, gpufeed_column_batch *b)
{
    const size_t es = c->esz;
    const int bytes = c->ci->physical == GPUFEED_BYTE_ARRAY || c->ci->physical == GPUFEED_FIXED_LEN_BYTE_ARRAY;
    const gpufeed_allocator *a = &c->f->alloc;
    int64_t rows = 0, levels = 0, nval = 0;
    int32_t page = -1, k;
    gpufeed_encoding enc = GPUFEED_ENC_PLAIN;
    for (k = 0; k < c->nblk; k++) c->blk[k].used = 0;
    c->cblk = 0;
    c->pg_val0 = 0;
    for (;;) {
        uint32_t e, nn, s, i;
        int stop;
        int32_t dp = c->data_pages;
        int64_t lev0 = levels;
        gpufeed_result r;
        if (bytes && c->tpos == c->tcnt && c->page_left == 0 && nval > c->pg_val0) {
            r = gf__nest_keep_bytes(c, nval);
            if (r) return r;
        }
        r = gf__nest_seg(c, c->max_rows, &rows, &levels, c->max_rows, &e, &nn, &stop);
        if (r == GPUFEED_DONE) break;
        if (r) return r;
        if (c->data_pages != dp) c->pg_val0 = nval;
        if (page < 0) { page = c->data_pages - 1; enc = c->enc_page; }
        s = c->tpos;
        if (e > s) {
            int16_t *orp, *odf;
            size_t need = (size_t)levels * sizeof(int16_t);
            if (!gf__grow(a, &c->orep, &c->orep_cap, need) || !gf__grow(a, &c->odef, &c->odef_cap, need) ||
                !gf__grow(a, &c->oval, &c->oval_cap, (size_t)(nval + nn + 1) * es))
                return gf__col_fail(c, GPUFEED_ERR_OUT_OF_MEMORY, "out of memory for a batch of %lld level entries", (long long)levels);
            orp = (int16_t *)(void *)c->orep; odf = (int16_t *)(void *)c->odef;
            for (i = s; i < e; i++) { orp[lev0 + (i - s)] = (int16_t)c->tr[i]; odf[lev0 + (i - s)] = (int16_t)c->td[i]; }
            r = gf__col_values(c, c->oval + (size_t)nval * es, nn);
            if (r) return r;
            nval += nn;
            c->tpos = e;
        }
        if (stop) break;
    }
    if (rows == 0) {
        int64_t want = c->f->md.row_groups[c->rg].num_rows;
        if (c->rows_seen != want)
            return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "chunk ended after %lld of %lld rows", (long long)c->rows_seen, (long long)want);
        return GPUFEED_DONE;
    }
    b->first_row = c->rows_done;
    b->num_rows = rows;
    b->null_count = levels - nval;
    b->values = c->oval;
    b->valid = NULL;
    b->page = page;
    b->encoding = enc;
    b->rep_levels = (const int16_t *)(const void *)c->orep;
    b->def_levels = (const int16_t *)(const void *)c->odef;
    b->num_levels = levels;
    b->num_values = nval;
    c->rows_done += rows;
    return GPUFEED_OK;
}

/* Points a column reader (buffers kept) at another chunk. Validates the
   chunk; messages go to err (may be NULL) and c->err. */
static gpufeed_result gf__col_target(gpufeed_column *c, gpufeed_file *f, int32_t row_group, int32_t column, gpufeed_error *err)
{
    const gpufeed_row_group_info *rg = &f->md.row_groups[row_group];
    const gpufeed_chunk_info *ch = &rg->chunks[column];
    const gpufeed_column_info *ci = &f->md.columns[column];
    uint64_t start;

    /* the same chunk again (another unit of it): its dictionary still holds */
    int same = c->f == f && c->rg == row_group && c->col == column && c->has_dict && !c->failed;
    if (c->f && !c->rgrel) gf__col_unmap_to(c, c->region_end); /* the chunk it leaves: done with */
    c->rgrel = 0;
    c->f = f;
    c->rg = row_group;
    c->col = column;
    c->ch = ch;
    c->ci = ci;
    c->esz = gf__elem_size(ci->physical);
    if (!same) { c->has_dict = 0; c->dict_n = 0; }
    c->in_page = 0;
    c->z_on = 0;
    c->page_left = 0;
    c->dict_pending = 0;
    c->data_pages = c->pages = c->cur_page = 0; c->rows_done = 0;
    c->win_len = 0; c->win_off = 0;
    c->err[0] = 0; c->failed = GPUFEED_OK;
    if (ch->encrypted)
        return gf__seterr(err, GPUFEED_ERR_ENCRYPTED, "%s: row group %d, column '%s': the column is encrypted; encrypted Parquet is not supported", f->name,
                          row_group, ci->path);
    if (!ch->has_metadata)
        return gf__seterr(err, GPUFEED_ERR_SCHEMA, "%s: row group %d, column '%s': the column chunk has no metadata", f->name, row_group, ci->path);
    if (ch->file_path)
        return gf__seterr(err, GPUFEED_ERR_UNSUPPORTED, "%s: row group %d, column '%s': column data in another file ('%s') is not supported", f->name,
                          row_group, ci->path, ch->file_path);
    c->nested = ci->max_rep > 0;
    c->tpos = c->tcnt = 0;
    c->row_start = 1;
    c->rows_seen = 0;
    c->rec_levels = 0;
    c->page_nv = 0;
    if (c->nested) {
        /* each row has one entry or more */
        int32_t nd;
        if (ch->num_values < rg->num_rows)
            return gf__seterr(err, GPUFEED_ERR_CORRUPT, "%s: row group %d, column '%s': chunk has %lld level entries but the row group has %lld rows",
                              f->name, row_group, ci->path, (long long)ch->num_values, (long long)rg->num_rows);
        memset(c->rdef, 0, sizeof c->rdef);
        for (nd = ci->node; nd > 0; nd = f->md.nodes[nd].parent) {
            const gpufeed_schema_node *n = &f->md.nodes[nd];
            if (n->repetition == GPUFEED_REPEATED && n->max_rep >= 1 && n->max_rep <= GPUFEED_MAX_SCHEMA_DEPTH + 1) c->rdef[n->max_rep] = n->max_def;
        }
        if (!c->tr) c->tr = (uint32_t *)gf__alloc(&f->alloc, GF__LTILE * sizeof(uint32_t));
        if (!c->td) c->td = (uint32_t *)gf__alloc(&f->alloc, GF__LTILE * sizeof(uint32_t));
        if (!c->tr || !c->td) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "%s: out of memory", f->name);
    } else if (ch->num_values != rg->num_rows)
        return gf__seterr(err, GPUFEED_ERR_CORRUPT, "%s: row group %d, column '%s': chunk has %lld values but the row group has %lld rows", f->name,
                          row_group, ci->path, (long long)ch->num_values, (long long)rg->num_rows);
    start = (uint64_t)ch->data_page_offset;
    if (ch->dictionary_page_offset > 0 && (uint64_t)ch->dictionary_page_offset < start) start = (uint64_t)ch->dictionary_page_offset;
    if (ch->num_values > 0 && (start < 4 || start >= f->data_end))
        return gf__seterr(err, GPUFEED_ERR_PAGE, "%s: row group %d, column '%s': first page offset %llu is outside the column data [4, %llu)", f->name,
                          row_group, ci->path, (unsigned long long)start, (unsigned long long)f->data_end);
    c->start = c->pos = c->page_off = start;
    c->unmapped_to = start;
    c->region_end = f->chunk_limit[(size_t)row_group * (size_t)f->md.num_columns + (size_t)column];
    c->chunk_end_hint = start + (uint64_t)ch->total_compressed_size;
    if (c->chunk_end_hint < start) c->chunk_end_hint = c->region_end;
    c->values_left = ch->num_values;
    return GPUFEED_OK;
}

static void gf__nest_free(gpufeed_column *c, const gpufeed_allocator *a)
{
    int32_t k;
    gf__free(a, c->tr);
    gf__free(a, c->td);
    gf__free(a, c->orep);
    gf__free(a, c->odef);
    gf__free(a, c->oval);
    for (k = 0; k < c->nblk; k++) gf__free(a, c->blk[k].p);
    c->tr = c->td = NULL;
    c->orep = c->odef = c->oval = NULL;
    c->nblk = 0;
}

GPUFEED_API gpufeed_result gpufeed_column_open(gpufeed_column **out, gpufeed_file *f, int32_t row_group, int32_t column,
                                               const gpufeed_column_desc *desc, gpufeed_error *err)
{
    gpufeed_column *c;
    gpufeed_result r;
    int64_t max_rows;
    if (err) { err->code = GPUFEED_OK; err->message[0] = 0; }
    if (!out) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "gpufeed_column_open: out is NULL");
    *out = NULL;
    if (!f) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "gpufeed_column_open: file is NULL");
    if (row_group < 0 || row_group >= f->md.num_row_groups)
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "%s: row group %d does not exist (file has %d)", f->name, row_group, f->md.num_row_groups);
    if (column < 0 || column >= f->md.num_columns)
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "%s: column %d does not exist (file has %d)", f->name, column, f->md.num_columns);
    max_rows = desc && desc->max_rows > 0 ? desc->max_rows : 65536;
    if (max_rows > (1 << 24)) max_rows = 1 << 24;
    c = (gpufeed_column *)gf__alloc(&f->alloc, sizeof *c);
    if (!c) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "%s: out of memory", f->name);
    memset(c, 0, sizeof *c);
    r = gf__col_target(c, f, row_group, column, err);
    if (r) {
        gf__nest_free(c, &f->alloc);
        gf__free(&f->alloc, c);
        return r;
    }
    c->max_rows = max_rows;
    c->flags = (desc ? desc->flags : 0) | f->flags;
    c->out = gf__alloc(&f->alloc, (size_t)max_rows * (c->esz > 4 ? c->esz : 4));
    c->valid = (uint8_t *)gf__alloc(&f->alloc, (size_t)max_rows);
    c->lv = (uint32_t *)gf__alloc(&f->alloc, (size_t)max_rows * sizeof(uint32_t));
    if (c->flags & GPUFEED_OPEN_VERIFY_CRC) {
        c->crc = (gf__crc_tab *)gf__alloc(&f->alloc, sizeof *c->crc);
        if (c->crc) gf__crc_init(c->crc);
    }
    if (!c->out || !c->valid || !c->lv || ((c->flags & GPUFEED_OPEN_VERIFY_CRC) && !c->crc)) {
        gpufeed_column_close(c);
        return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "%s: out of memory", f->name);
    }
    *out = c;
    return GPUFEED_OK;
}

GPUFEED_API gpufeed_result gpufeed_column_read(gpufeed_column *c, gpufeed_column_batch *b)
{
    uint32_t n, nn, i;
    gpufeed_result r;
    if (!c || !b) return GPUFEED_ERR_INVALID_ARG;
    memset(b, 0, sizeof *b);
    if (c->failed) return c->failed;
    if (c->nested) return gf__nest_read(c, b);
    if (c->z_on && (r = gf__col_z_whole(c)) != GPUFEED_OK) return r; /* a page a dense reader streamed: whole from here on */
    if (!c->in_page) {
        r = gf__col_next_page(c);
        if (r == GPUFEED_DONE) {
            if (c->rows_done != c->ch->num_values)
                return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "chunk ended after %lld of %lld values", (long long)c->rows_done, (long long)c->ch->num_values);
            return GPUFEED_DONE;
        }
        if (r) return r;
    }
    n = c->page_left < (uint64_t)c->max_rows ? c->page_left : (uint32_t)c->max_rows;
    nn = n;
    if (c->ci->max_def > 0) {
        uint32_t got = gf__rle_get(&c->def, c->lv, n);
        uint32_t maxd = (uint32_t)c->ci->max_def;
        if (got != n || c->def.err)
            return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "definition levels end after %u of the page's remaining %u values",
                                got, c->page_left);
        nn = 0;
        for (i = 0; i < n; i++) {
            uint32_t l = c->lv[i];
            if (l > maxd) return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "definition level %u exceeds the column's maximum %u", l, maxd);
            c->valid[i] = (uint8_t)(l == maxd);
            nn += (l == maxd);
        }
    }
    r = gf__col_values(c, c->out, nn);
    if (r) return r;
    if (nn < n) { /* spread the compact values to their rows, back to front */
        const size_t es = c->esz;
        uint8_t *o = (uint8_t *)c->out;
        uint32_t j = nn;
        for (i = n; i-- > 0;) {
            if (c->valid[i]) { j--; if (j != i) memcpy(o + (size_t)i * es, o + (size_t)j * es, es); }
            else memset(o + (size_t)i * es, 0, es);
        }
    }
    b->first_row = c->rows_done;
    b->num_rows = n;
    b->null_count = (int64_t)(n - nn);
    b->values = c->out;
    b->valid = c->ci->max_def > 0 ? c->valid : NULL;
    b->page = c->data_pages - 1;
    b->encoding = c->enc_page;
    c->rows_done += n;
    c->page_left -= n;
    if (c->page_left == 0) c->in_page = 0;
    return GPUFEED_OK;
}

GPUFEED_API const char *gpufeed_column_error(const gpufeed_column *c) { return c ? c->err : ""; }
GPUFEED_API uint64_t gpufeed_column_bytes_read(const gpufeed_column *c) { return c ? c->bytes_read : 0; }

/* every buffer a column reader holds (not the reader itself) */
static void gf__col_free_buffers(gpufeed_column *c, const gpufeed_allocator *a)
{
    gf__free(a, c->win);
    gf__free(a, c->dbuf);
    gf__free(a, c->zbuf);
    gf__free(a, c->zin);
    gf__free(a, c->lbuf);
    gf__free(a, c->dict_buf);
    gf__free(a, c->dict_own);
    if (!c->lent) {
        gf__free(a, c->out);
        gf__free(a, c->valid);
        gf__free(a, c->lv);
    }
    gf__free(a, c->crc);
    gf__free(a, c->tbuf);
    gf__nest_free(c, a);
}

GPUFEED_API void gpufeed_column_close(gpufeed_column *c)
{
    if (!c) return;
    gf__col_free_buffers(c, &c->f->alloc);
    gf__free(&c->f->alloc, c);
}


GPUFEED_API gpufeed_result gpufeed_chunk_pages(gpufeed_file *f, int32_t row_group, int32_t column,
                                               gpufeed_page_info *pages, int64_t cap, int64_t *count, gpufeed_error *err)
{
    gpufeed_column c;
    gpufeed_result r = GPUFEED_OK;
    const gpufeed_chunk_info *ch;
    uint64_t start;
    int64_t n = 0;
    if (err) { err->code = GPUFEED_OK; err->message[0] = 0; }
    if (count) *count = 0;
    if (!f || !count || cap < 0 || (cap > 0 && !pages)) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "gpufeed_chunk_pages: bad arguments");
    if (row_group < 0 || row_group >= f->md.num_row_groups || column < 0 || column >= f->md.num_columns)
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "%s: no row group %d / column %d", f->name, row_group, column);
    ch = &f->md.row_groups[row_group].chunks[column];
    if (ch->encrypted)
        return gf__seterr(err, GPUFEED_ERR_ENCRYPTED, "%s: row group %d, column '%s' is encrypted", f->name, row_group, f->md.columns[column].path);
    if (!ch->has_metadata)
        return gf__seterr(err, GPUFEED_ERR_SCHEMA, "%s: row group %d, column '%s' has no metadata", f->name, row_group, f->md.columns[column].path);
    memset(&c, 0, sizeof c);
    c.f = f;
    c.rg = row_group;
    c.col = column;
    c.ch = ch;
    c.ci = &f->md.columns[column];
    start = (uint64_t)ch->data_page_offset;
    if (ch->dictionary_page_offset > 0 && (uint64_t)ch->dictionary_page_offset < start) start = (uint64_t)ch->dictionary_page_offset;
    c.start = c.pos = c.page_off = start;
    c.region_end = f->chunk_limit[(size_t)row_group * (size_t)f->md.num_columns + (size_t)column];
    c.chunk_end_hint = start + (uint64_t)ch->total_compressed_size;
    c.values_left = ch->num_values;
    c.scan = 1;
    if (ch->num_values > 0 && (start < 4 || start >= f->data_end)) {
        r = gf__col_fail(&c, GPUFEED_ERR_PAGE, "first page offset %llu is outside the column data", (unsigned long long)start);
    }
    while (!r && c.values_left > 0) {
        gf__ph h;
        uint64_t hlen = 0;
        c.page_off = c.pos;
        c.cur_page = c.pages;
        r = gf__col_header(&c, &h, &hlen);
        if (r) break;
        if (h.csize < 0 || (uint64_t)h.csize > c.region_end - c.pos - hlen) {
            r = gf__col_fail(&c, GPUFEED_ERR_PAGE, "page of %d bytes runs past the column data", h.csize);
            break;
        }
        if (n < cap) {
            gpufeed_page_info *pi = &pages[n];
            memset(pi, 0, sizeof *pi);
            pi->type = h.type;
            pi->encoding = (gpufeed_encoding)h.encoding;
            pi->offset = (int64_t)c.pos;
            pi->header_size = (int32_t)hlen;
            pi->compressed_size = h.csize;
            pi->uncompressed_size = h.usize;
            pi->num_values = (h.has_dph || h.has_v2 || h.has_dict) ? h.nvalues : 0;
            pi->num_rows = h.has_v2 ? h.nrows : -1;
            pi->first_value = ch->num_values - c.values_left;
            pi->has_crc = h.has_crc;
        }
        n++;
        c.pages++;
        if ((h.type == GF__PAGE_DATA && h.has_dph) || (h.type == GF__PAGE_DATA_V2 && h.has_v2)) {
            if (h.nvalues < 0 || h.nvalues > c.values_left) {
                r = gf__col_fail(&c, GPUFEED_ERR_CORRUPT, "page has %d values but only %lld remain in the column chunk", h.nvalues, (long long)c.values_left);
                break;
            }
            c.values_left -= h.nvalues;
        }
        c.pos += hlen + (uint64_t)h.csize;
    }
    gf__free(&f->alloc, c.win);
    *count = n;
    if (r) return gf__seterr(err, r, "%s", c.err);
    return GPUFEED_OK;
}


/* >>convert -------------------------------------------------------------- */
/* Columnar to dense: each page is decoded in tiles of GF__TILE values,
   converted to the feature's dtype and written straight to its place in
   the dense batch (row stride = the row's bytes). Dictionary pages are
   converted to the dtype once, then gathered by index. List features walk
   the level entries of whole rows (gf__dcol_read_list): each element's
   value goes to slot (row, index) of the feature's W slots, then pads,
   truncation and the policies' errors. */

#define GF__TILE 1024
#ifndef GF__STAGE_BYTES
#define GF__STAGE_BYTES (1u << 20)     /* a scratch's staging tile, at most (see gf__scratch_open_range) */
#endif
#define GF__STEP_MAX 16384

GPUFEED_API size_t gpufeed_dtype_size(gpufeed_dtype t)
{
    switch (t) {
    case GPUFEED_DT_F32: case GPUFEED_DT_I32: return 4;
    case GPUFEED_DT_F64: case GPUFEED_DT_I64: return 8;
    case GPUFEED_DT_F16: case GPUFEED_DT_BF16: return 2;
    case GPUFEED_DT_U8: return 1;
    }
    return 0;
}
GPUFEED_API size_t gpufeed_feature_bytes(const gpufeed_feature *f)
{
    if (!f) return 0;
    return gpufeed_dtype_size(f->dtype) * (size_t)(f->width > 0 && !f->list_lengths ? f->width : 1);
}
GPUFEED_API const char *gpufeed_dtype_name(gpufeed_dtype t)
{
    static const char *const n[] = { "f32", "f64", "f16", "bf16", "i32", "i64", "u8" };
    return ((unsigned)t < 7) ? n[t] : "?";
}
GPUFEED_API int gpufeed_dtype_parse(const char *s, gpufeed_dtype *out)
{
    static const char *const n[] = { "f32", "f64", "f16", "bf16", "i32", "i64", "u8" };
    int i;
    for (i = 0; i < 7; i++) if (s && strcmp(s, n[i]) == 0) { *out = (gpufeed_dtype)i; return 0; }
    return -1;
}

/* Rounds the 53-bit significand m (value m * 2^e2) to `keep` bits, to
   nearest even; returns the rounded significand (may be 2^keep). */
static uint64_t gf__rne_shift(uint64_t m, int shift)
{
    uint64_t r, rem, half;
    if (shift <= 0) return m;
    if (shift > 63) return 0;
    r = m >> shift;
    rem = m & ((1ull << shift) - 1);
    half = 1ull << (shift - 1);
    if (rem > half || (rem == half && (r & 1))) r++;
    return r;
}

/* IEEE double -> a smaller binary float with `mbits` stored mantissa bits
   and exponent bias `bias`, `ebits` exponent bits; round to nearest even */
static uint32_t gf__double_to_small(double d, int mbits, int ebits, int bias)
{
    uint64_t b, man, m, r;
    uint32_t sign, emax = (1u << ebits) - 1;
    int exp, e;
    memcpy(&b, &d, 8);
    sign = (uint32_t)(b >> 63) << (mbits + ebits);
    exp = (int)((b >> 52) & 0x7FF);
    man = b & ((1ull << 52) - 1);
    if (exp == 0x7FF) return sign | (emax << mbits) | (man ? (1u << (mbits - 1)) : 0);
    if (exp == 0) return sign; /* double subnormals are far below both formats */
    m = man | (1ull << 52);
    e = exp - 1023 + bias;
    if (e >= (int)emax) return sign | (emax << mbits);
    if (e >= 1) {
        r = gf__rne_shift(m, 52 - mbits);
        if (r >> (mbits + 1)) { r >>= 1; e++; }
        if (e >= (int)emax) return sign | (emax << mbits);
        return sign | ((uint32_t)e << mbits) | (uint32_t)(r & ((1ull << mbits) - 1));
    }

    /* subnormal result: units of 2^(1 - bias - mbits) */
    r = gf__rne_shift(m, 52 - mbits + (1 - e));
    return sign | (uint32_t)r; /* a carry into the exponent field is right */
}
GPUFEED_API uint16_t gpufeed_double_to_half(double d) { return (uint16_t)gf__double_to_small(d, 10, 5, 15); }
GPUFEED_API uint16_t gpufeed_double_to_bf16(double d) { return (uint16_t)gf__double_to_small(d, 7, 8, 127); }

/* an int64 as the double nearest to it after rounding to `bits`
   significant bits (exact: avoids double rounding for |v| > 2^53) */
static double gf__i64_round_bits(int64_t v, int bits)
{
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    int len = 0, shift;
    uint64_t t = u, r;
    double d;
    while (t) { len++; t >>= 1; }
    shift = len - bits;
    if (shift <= 0) d = (double)u;
    else {
        r = gf__rne_shift(u, shift);
        d = (double)r;
        while (shift--) d *= 2.0;
    }
    return v < 0 ? -d : d;
}
static double gf__u64_round_bits(uint64_t u, int bits)
{
    int len = 0, shift;
    uint64_t t = u, r;
    double d;
    while (t) { len++; t >>= 1; }
    shift = len - bits;
    if (shift <= 0) return (double)u;
    r = gf__rne_shift(u, shift);
    d = (double)r;
    while (shift--) d *= 2.0;
    return d;
}

/* Canonical source values, one 8-byte slot per value: */
enum {
    GF__CK_I64 = 0,                    /* int64 (bool, ints, dates, INT96 ns, decimals) */
    GF__CK_U64,                        /* uint64 */
    GF__CK_F64,                        /* double (FLOAT, DOUBLE, FLOAT16) */
    GF__CK_HASH                        /* uint64 hash of bytes */
};

static const double gf__pow10[23] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };

/* x * 2^e, exactly (no overflow or underflow for the values used here) */
static double gf__ldexp(double x, int e)
{
    while (e > 30) { x *= 1073741824.0; e -= 30; }
    while (e < -30) { x *= 1.0 / 1073741824.0; e += 30; }
    while (e > 0) { x *= 2.0; e--; }
    while (e < 0) { x *= 0.5; e++; }
    return x;
}

#if defined(__SIZEOF_INT128__) && (defined(__GNUC__) || defined(__clang__))
#define GF__HAVE_U128 1
__extension__ typedef unsigned __int128 gf__u128;
/* m / 10^s rounded to nearest even at `mbits` significant bits, exactly
   (m > 0, s <= 19): one 128-bit division, then rounding with the
   remainder as the sticky bit. */
static double gf__div_pow10_rne(uint64_t m, int32_t s, int mbits)
{
    uint64_t d = 1, top;
    gf__u128 num, q, r, low, half;
    int32_t i;
    int len = 0, k, qlen = 0, shift;
    for (i = 0; i < s; i++) d *= 10u;
    {
        uint64_t t = m;
        while (t) { len++; t >>= 1; }
    }
    k = 127 - len;
    num = (gf__u128)m << k;
    q = num / d; r = num % d;
    {
        gf__u128 t = q;
        while (t) { qlen++; t >>= 1; }
    }
    shift = qlen - mbits;
    if (shift <= 0) return gf__ldexp((double)(uint64_t)q, -k); /* cannot happen for s <= 19 */
    top = (uint64_t)(q >> shift);
    low = q & ((((gf__u128)1) << shift) - 1);
    half = ((gf__u128)1) << (shift - 1);
    if (low > half || (low == half && (r != 0 || (top & 1)))) top++;
    return gf__ldexp((double)top, shift - k);
}
#endif

/* A decimal's double value, correctly rounded. */
static double gf__dec_to_double(int64_t v, int32_t scale)
{
    if (scale <= 0) return (double)v;
    if (scale <= 22 && v >= -(1ll << 53) && v <= (1ll << 53)) return (double)v / gf__pow10[scale];
#ifdef GF__HAVE_U128
    if (scale <= 19) {
        uint64_t m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
        double d = gf__div_pow10_rne(m, scale, 53);
        return v < 0 ? -d : d;
    }
#endif
    {
        double d = (double)v;
        int32_t s = scale;
        while (s > 22) { d /= 1e22; s -= 22; }
        return d / gf__pow10[s];
    }
}
static float gf__dec_to_float(int64_t v, int32_t scale)
{
    static const float p10f[11] = { 1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f, 1e6f, 1e7f, 1e8f, 1e9f, 1e10f };
    if (scale >= 0 && scale <= 10 && v >= -(1ll << 24) && v <= (1ll << 24)) return (float)v / p10f[scale];
#ifdef GF__HAVE_U128
    if (scale > 0 && scale <= 19 && v != 0) {
        uint64_t m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
        float f = (float)gf__div_pow10_rne(m, scale, 24); /* exact: 24 bits */
        return v < 0 ? -f : f;
    }
#endif
    return (float)gf__dec_to_double(v, scale);
}

typedef struct gf__conv {
    int ck;                            /* canonical kind of the source */
    int32_t scale;                     /* decimals: > 0 */
    gpufeed_dtype dt;
    int unsafe_cast;
    uint64_t buckets;
    int64_t tmul, tdiv;                /* times: scaled from the file's unit to the feature's
                                          (x tmul or / tdiv; 0 or 1: as they are) */
    int32_t tsrc, tdst;                /* those units (GPUFEED_UNIT_*, GF__UNIT_DAYS), for messages */
} gf__conv;

/* an integer that float dtype dt holds exactly (SAFE casts); u: v is unsigned */
static int gf__int_exact(uint64_t v, int u, gpufeed_dtype dt)
{
    int bits = dt == GPUFEED_DT_F32 ? 24 : dt == GPUFEED_DT_F64 ? 53 : dt == GPUFEED_DT_F16 ? 11 : 8;
    uint64_t m = u || (int64_t)v >= 0 ? v : (uint64_t)0 - v; /* |v| */
    int top = 0, low = 0;
    if (!m) return 1;
    while (top < 64 && (m >> top) > 1) top++;      /* the highest set bit */
    while (!((m >> low) & 1)) low++;                /* the lowest */
    if (top - low >= bits) return 0;                /* more significant bits than the dtype has */
    return dt != GPUFEED_DT_F16 || top < 16;        /* f16 ends at 65504 */
}

/* Converts n canonical values to the dtype (no time scaling). Returns -1,
   or the index of the first value that cannot convert (SAFE cast). */
static int64_t gf__convert_dt(const gf__conv *cv, const uint64_t *in, void *outp, int64_t n)
{
    int64_t i;
    const int ck = cv->ck, unsafe_ = cv->unsafe_cast;
    switch (cv->dt) {
    case GPUFEED_DT_F32: {
        float *o = (float *)outp;
        if (ck == GF__CK_F64)
            for (i = 0; i < n; i++) {
                double d;
                memcpy(&d, &in[i], 8);
                o[i] = (float)d;
            }
        else if (ck == GF__CK_U64) for (i = 0; i < n; i++) {
            if (!unsafe_ && !gf__int_exact(in[i], 1, cv->dt)) return i;
            o[i] = (float)in[i];
        }
        else if (ck == GF__CK_HASH) for (i = 0; i < n; i++) o[i] = (float)(in[i] % cv->buckets);
        else if (cv->scale > 0) for (i = 0; i < n; i++) o[i] = gf__dec_to_float((int64_t)in[i], cv->scale);
        else for (i = 0; i < n; i++) {
            if (!unsafe_ && !gf__int_exact(in[i], 0, cv->dt)) return i;
            o[i] = (float)(int64_t)in[i];
        }
        return -1;
    }
    case GPUFEED_DT_F64: {
        double *o = (double *)outp;
        if (ck == GF__CK_F64) memcpy(o, in, (size_t)n * 8);
        else if (ck == GF__CK_U64) for (i = 0; i < n; i++) {
            if (!unsafe_ && !gf__int_exact(in[i], 1, cv->dt)) return i;
            o[i] = (double)in[i];
        }
        else if (ck == GF__CK_HASH) for (i = 0; i < n; i++) o[i] = (double)(in[i] % cv->buckets);
        else if (cv->scale > 0) for (i = 0; i < n; i++) o[i] = gf__dec_to_double((int64_t)in[i], cv->scale);
        else for (i = 0; i < n; i++) {
            if (!unsafe_ && !gf__int_exact(in[i], 0, cv->dt)) return i;
            o[i] = (double)(int64_t)in[i];
        }
        return -1;
    }
    case GPUFEED_DT_F16: case GPUFEED_DT_BF16: {
        uint16_t *o = (uint16_t *)outp;
        const int half = cv->dt == GPUFEED_DT_F16;
        for (i = 0; i < n; i++) {
            double d;
            if (ck == GF__CK_F64) memcpy(&d, &in[i], 8);
            else if (ck == GF__CK_U64) {
                if (!unsafe_ && !gf__int_exact(in[i], 1, cv->dt)) return i;
                d = gf__u64_round_bits(in[i], half ? 11 : 8);
            }
            else if (ck == GF__CK_HASH) d = gf__u64_round_bits(in[i] % cv->buckets, half ? 11 : 8);
            else if (cv->scale > 0) d = gf__dec_to_double((int64_t)in[i], cv->scale);
            else {
                if (!unsafe_ && !gf__int_exact(in[i], 0, cv->dt)) return i;
                d = gf__i64_round_bits((int64_t)in[i], half ? 11 : 8);
            }
            o[i] = half ? gpufeed_double_to_half(d) : gpufeed_double_to_bf16(d);
        }
        return -1;
    }
    default: break;
    }

    /* integer dtypes */
    {
        int64_t lo, hi;
        switch (cv->dt) {
        case GPUFEED_DT_I32:
            lo = INT32_MIN;
            hi = INT32_MAX;
            break;
        case GPUFEED_DT_U8:
            lo = 0;
            hi = 255;
            break;
        default:
            lo = INT64_MIN;
            hi = INT64_MAX;
            break;
        }
        for (i = 0; i < n; i++) {
            int64_t v;
            int bad = 0;
            if (ck == GF__CK_I64) {
                v = (int64_t)in[i];
                if (cv->scale > 0) {
                    int64_t p = 1, q;
                    int32_t s;
                    for (s = 0; s < cv->scale && s < 19; s++) p *= 10;
                    q = cv->scale > 18 ? 0 : v / p;
                    if (cv->scale > 18 ? v != 0 : q * p != v) bad = 1;
                    v = q;
                }
            } else if (ck == GF__CK_U64 || ck == GF__CK_HASH) {
                uint64_t u = ck == GF__CK_HASH ? in[i] % cv->buckets : in[i];
                if (u > (uint64_t)INT64_MAX) { bad = 1; v = INT64_MAX; }
                else v = (int64_t)u;
            } else {
                double d;
                memcpy(&d, &in[i], 8);
                if (d != d) { bad = 1; v = 0; }
                else if (d >= 9223372036854775808.0) { bad = 1; v = INT64_MAX; }
                else if (d < -9223372036854775808.0) { bad = 1; v = INT64_MIN; }
                else { v = (int64_t)d; if ((double)v != d) bad = 1; }
            }
            if (v < lo) { bad = 1; v = lo; }
            else if (v > hi) { bad = 1; v = hi; }
            if (bad && !unsafe_) return i;
            switch (cv->dt) {
            case GPUFEED_DT_I32: ((int32_t *)outp)[i] = (int32_t)v; break;
            case GPUFEED_DT_U8: ((uint8_t *)outp)[i] = (uint8_t)v; break;
            default: ((int64_t *)outp)[i] = v; break;
            }
        }
        return -1;
    }
}

/* Times in the file's unit scaled to the feature's, then converted: a
   value that loses digits (ns to ms) or leaves int64 is a SAFE cast's
   failure; UNSAFE truncates toward zero and saturates. */
static int64_t gf__convert_time(const gf__conv *cv, const uint64_t *in, void *outp, int64_t n)
{
    gf__conv c2 = *cv;
    uint64_t buf[256];
    int64_t i, k, m;
    const size_t dsz = gpufeed_dtype_size(cv->dt);
    c2.tmul = c2.tdiv = 1;
    for (i = 0; i < n; i += m) {
        m = n - i < 256 ? n - i : 256;
        for (k = 0; k < m; k++) {
            int64_t v = (int64_t)in[i + k], q;
            if (cv->tdiv > 1) {
                q = v / cv->tdiv; /* toward zero */
                if (q * cv->tdiv != v && !cv->unsafe_cast) return i + k;
            } else if (v > INT64_MAX / cv->tmul || v < INT64_MIN / cv->tmul) {
                if (!cv->unsafe_cast) return i + k;
                q = v > 0 ? INT64_MAX : INT64_MIN;
            } else q = v * cv->tmul;
            buf[k] = (uint64_t)q;
        }
        k = gf__convert_dt(&c2, buf, (uint8_t *)outp + (size_t)i * dsz, m);
        if (k >= 0) return i + k;
    }
    return -1;
}

/* Converts n canonical values to the dtype (times into the feature's unit
   first). Returns -1, or the index of the first value that cannot convert
   (SAFE cast). */
static int64_t gf__convert(const gf__conv *cv, const uint64_t *in, void *outp, int64_t n)
{
    if (cv->ck == GF__CK_I64 && (cv->tmul > 1 || cv->tdiv > 1)) return gf__convert_time(cv, in, outp, n);
    return gf__convert_dt(cv, in, outp, n);
}

/* Positions the reader at the data page whose header is at `page_offset`
   (page number `ordinal` in the chunk, first value `first_value`), loading
   the chunk's dictionary first when there is one before it. */
static gpufeed_result gf__col_seek(gpufeed_column *c, uint64_t page_offset, int32_t ordinal, int64_t first_row, int64_t first_value)
{
    if (page_offset != c->start && !c->has_dict) c->dict_pending = 1; /* loaded when a page needs it */
    if (c->rgrel && page_offset > c->unmapped_to) c->unmapped_to = page_offset; /* other units' bytes */
    c->pos = c->page_off = page_offset;
    c->pages = c->cur_page = ordinal;
    c->values_left = c->ch->num_values - first_value;
    c->rows_done = first_row;
    c->in_page = 0;
    c->z_on = 0;
    c->page_left = 0;
    if (c->nested) { /* the page must start a row: the page index says so */
        c->tpos = c->tcnt = 0;
        c->rows_seen = first_row;
        c->row_start = 2;
    }
    return GPUFEED_OK;
}

/* the 8 bits of b, LSB first, as 8 bytes of 0 or 1 (little-endian order) */
static uint64_t gf__bits_to_bytes(uint8_t b)
{
    uint64_t x = ((uint64_t)b * 0x0101010101010101ull) & 0x8040201008040201ull; /* byte i: bit i of b, in place */
    return ((x + 0x7F7F7F7F7F7F7F7Full) >> 7) & 0x0101010101010101ull;         /* a set bit carries into bit 7 */
}

/* Level decoding for n rows of the current page into c->valid (1 present);
   returns the number present via *nn. */
/* max level 1: levels straight to 0/1 bytes; returns the count read and
   adds the ones to *ones */
static uint32_t gf__rle_get01(gf__rle *r, uint8_t *out, uint32_t n, uint32_t *ones)
{
    uint32_t got = 0, cnt = 0;
    while (got < n) {
        if (r->rle_left) {
            uint32_t k = n - got < r->rle_left ? n - got : r->rle_left;
            if (r->rle_val > 1) { r->err = 1; break; }
            memset(out + got, (int)r->rle_val, k);
            cnt += r->rle_val ? k : 0;
            got += k; r->rle_left -= k;
        } else if (r->lit_left && !r->msb && r->bw == 1) {
            uint32_t k = n - got < r->lit_left ? n - got : r->lit_left, i = 0;
            uint64_t bit = r->lit_pos;
            if (k > r->lit_avail) { k = r->lit_avail; r->err = 1; }
            for (; i < k && (bit & 7); i++, bit++) cnt += out[got + i] = (uint8_t)((r->lit[bit >> 3] >> (bit & 7)) & 1);
            for (; i + 8 <= k; i += 8, bit += 8) { /* a byte: 8 rows */
                uint64_t x = gf__bits_to_bytes(r->lit[bit >> 3]);
                memcpy(out + got + i, &x, 8);
                cnt += (uint32_t)((x * 0x0101010101010101ull) >> 56);
            }
            for (; i < k; i++, bit++) cnt += out[got + i] = (uint8_t)((r->lit[bit >> 3] >> (bit & 7)) & 1);
            got += k;
            r->lit_left -= k;
            r->lit_avail -= k;
            r->lit_pos += k;
            if (r->err) break;
        } else if (r->lit_left) {
            uint32_t tmp[64], k = n - got < 64 ? n - got : 64, g, i;
            g = gf__rle_get(r, tmp, k);
            for (i = 0; i < g; i++) {
                if (tmp[i] > 1) { r->err = 1; break; }
                out[got + i] = (uint8_t)tmp[i];
                cnt += tmp[i];
            }
            got += i;
            if (g != k || r->err) break;
        } else if (!gf__rle_next_run(r)) break;
    }
    *ones += cnt;
    return got;
}

static gpufeed_result gf__col_levels(gpufeed_column *c, uint32_t n, uint32_t *nn)
{
    uint32_t i, got, maxd, cnt = 0;
    if (c->ci->max_def == 0) { *nn = n; return GPUFEED_OK; }
    if (c->ci->max_def == 1) {
        got = gf__rle_get01(&c->def, c->valid, n, &cnt);
        if (got != n || c->def.err)
            return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "definition levels end or exceed the maximum 1 after %u of the page's remaining %u values", got,
                                c->page_left);
        *nn = cnt;
        return GPUFEED_OK;
    }
    got = gf__rle_get(&c->def, c->lv, n);
    maxd = (uint32_t)c->ci->max_def;
    if (got != n || c->def.err)
        return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "definition levels end after %u of the page's remaining %u values", got, c->page_left);
    for (i = 0; i < n; i++) {
        uint32_t l = c->lv[i];
        if (l > maxd) return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "definition level %u exceeds the column's maximum %u", l, maxd);
        c->valid[i] = (uint8_t)(l == maxd);
        cnt += (l == maxd);
    }
    *nn = cnt;
    return GPUFEED_OK;
}

/* Skips n rows (within the current page and onwards). */
static gpufeed_result gf__col_skip(gpufeed_column *c, int64_t n)
{
    if (c->nested) return gf__nest_skip(c, n);
    while (n > 0) {
        uint32_t k, nn = 0;
        gpufeed_result r;
        if (!c->in_page) {
            r = gf__col_next_page(c);
            if (r == GPUFEED_DONE) return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "chunk ended while skipping to row %lld", (long long)(c->rows_done + n));
            if (r) return r;
        }
        k = c->page_left;
        if ((int64_t)k > n) k = (uint32_t)n;
        if (k > (uint32_t)c->max_rows) k = (uint32_t)c->max_rows;
        r = gf__col_levels(c, k, &nn);
        if (r) return r;
        r = gf__col_drop_values(c, nn);
        if (r) return r;
        c->page_left -= k;
        c->rows_done += k;
        n -= k;
        if (c->page_left == 0) {
            if ((r = gf__col_z_finish(c)) != GPUFEED_OK) return r; /* a page a dense reader streamed */
            c->in_page = 0;
        }
    }
    return GPUFEED_OK;
}

/* One feature's decoder: a column reader plus its conversion. */
/* Converted dictionaries shared by every reader of a dataset, keyed by
   (file, row group, feature): a worker that starts a unit in the middle of
   a column chunk takes the chunk's dictionary, already in the feature's
   dtype, instead of reading, inflating and converting the dictionary page
   again. Entries are immutable; a reference count keeps an entry in use
   from being evicted (least recently used first, GPUFEED_DICT_CACHE_BYTES
   in all). Only dictionaries whose every entry converts are shared. */
#define GF__DCACHE_N 1024
typedef struct gf__dent {
    const void *file; int32_t rg, feat;
    uint8_t *conv;
    uint32_t n;
    size_t bytes;
    int32_t refs; uint64_t tick;
} gf__dent;
typedef struct gf__dcache {
    gf__dent e[GF__DCACHE_N];
    int32_t used;
    size_t bytes;
    uint64_t tick;
#if !defined(GPUFEED_NO_THREADS)
    pthread_mutex_t mu;
#endif
} gf__dcache;

static void gf__dcache_lock(gf__dcache *dc)
{
#if !defined(GPUFEED_NO_THREADS)
    pthread_mutex_lock(&dc->mu);
#else
    (void)dc;
#endif
}
static void gf__dcache_unlock(gf__dcache *dc)
{
#if !defined(GPUFEED_NO_THREADS)
    pthread_mutex_unlock(&dc->mu);
#else
    (void)dc;
#endif
}
/* the entry for the key (a reference taken), or -1 */
static int32_t gf__dcache_get(gf__dcache *dc, const void *file, int32_t rg, int32_t feat)
{
    int32_t i, at = -1;
    if (!dc) return -1;
    gf__dcache_lock(dc);
    for (i = 0; i < dc->used; i++)
        if (dc->e[i].conv && dc->e[i].file == file && dc->e[i].rg == rg && dc->e[i].feat == feat) { at = i; break; }
    if (at >= 0) { dc->e[at].refs++; dc->e[at].tick = ++dc->tick; }
    gf__dcache_unlock(dc);
    return at;
}
static void gf__dcache_release(gf__dcache *dc, int32_t at)
{
    if (!dc || at < 0) return;
    gf__dcache_lock(dc);
    dc->e[at].refs--;
    gf__dcache_unlock(dc);
}
/* *conv (n entries, bytes in all, allocated with `a`, at least bytes + 8
   long) under the key, a reference taken: the entry takes the buffer
   (*conv and *cap become 0: no copy). -1 when it does not fit, and 0 or
   more, the buffer kept, when another reader was first. */
static int32_t gf__dcache_put(gf__dcache *dc, const gpufeed_allocator *a, const void *file, int32_t rg, int32_t feat,
                              uint8_t **conv, size_t *cap, uint32_t n, size_t bytes)
{
    int32_t i, at = -1;
    if (!dc || bytes > GPUFEED_DICT_CACHE_BYTES || *cap < bytes + 8) return -1;
    gf__dcache_lock(dc);
    for (i = 0; i < dc->used; i++) /* another reader was first */
        if (dc->e[i].conv && dc->e[i].file == file && dc->e[i].rg == rg && dc->e[i].feat == feat) {
            dc->e[i].refs++; dc->e[i].tick = ++dc->tick;
            gf__dcache_unlock(dc);
            return i;
        }
    for (;;) { /* room: a free entry and the budget, evicting the least recently used idle ones */
        int32_t lru = -1;
        at = -1;
        for (i = 0; i < dc->used; i++) if (!dc->e[i].conv) { at = i; break; }
        if (at < 0 && dc->used < GF__DCACHE_N) at = dc->used;
        if (at >= 0 && dc->bytes + bytes <= GPUFEED_DICT_CACHE_BYTES) break;
        for (i = 0; i < dc->used; i++)
            if (dc->e[i].conv && dc->e[i].refs == 0 && (lru < 0 || dc->e[i].tick < dc->e[lru].tick)) lru = i;
        if (lru < 0) {
            gf__dcache_unlock(dc);
            return -1;
        }
        gf__free(a, dc->e[lru].conv);
        dc->bytes -= dc->e[lru].bytes;
        dc->e[lru].conv = NULL;
    }
    if (at == dc->used) dc->used++;
    dc->e[at].file = file;
    dc->e[at].rg = rg;
    dc->e[at].feat = feat;
    dc->e[at].conv = *conv;
    memset(*conv + bytes, 0, 8);
    *conv = NULL; *cap = 0;
    dc->e[at].n = n;
    dc->e[at].bytes = bytes;
    dc->e[at].refs = 1; dc->e[at].tick = ++dc->tick;
    dc->bytes += bytes;
    gf__dcache_unlock(dc);
    return at;
}
static void gf__dcache_free(gf__dcache *dc, const gpufeed_allocator *a)
{
    int32_t i;
    if (!dc) return;
    for (i = 0; i < dc->used; i++) gf__free(a, dc->e[i].conv);
#if !defined(GPUFEED_NO_THREADS)
    pthread_mutex_destroy(&dc->mu);
#endif
    gf__free(a, dc);
}
static gf__dcache *gf__dcache_load(gf__dcache *const *slot)
{
#if defined(__GNUC__) || defined(__clang__)
    return __atomic_load_n(slot, __ATOMIC_ACQUIRE);
#else
    return *slot;
#endif
}
/* the dataset's cache, made at first use (NULL without memory: readers then
   keep their own copies) */
static gf__dcache *gf__dcache_of(gf__dcache **slot, const gpufeed_allocator *a)
{
    gf__dcache *dc, *none = NULL;
#if defined(__GNUC__) || defined(__clang__)
    dc = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
#else
    dc = *slot;
#endif
    if (dc) return dc;
    dc = (gf__dcache *)gf__alloc(a, sizeof *dc);
    if (!dc) return NULL;
    memset(dc, 0, sizeof *dc);
#if !defined(GPUFEED_NO_THREADS)
    if (pthread_mutex_init(&dc->mu, NULL) != 0) { gf__free(a, dc); return NULL; }
#endif
#if defined(__GNUC__) || defined(__clang__)
    if (!__atomic_compare_exchange_n(slot, &none, dc, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        gf__dcache_free(dc, a); /* another reader made it first */
        return none;
    }
#else
    (void)none;
    *slot = dc;
#endif
    return dc;
}

typedef struct gf__dcol {
    gpufeed_column c;
    int ready;
    gf__conv conv;
    int decimal_bytes;                 /* FLBA/BYTE_ARRAY decimal */
    int32_t dec_scale;                 /* decimal read as a double (ck F64) */
    int dec_int;                       /* wide decimal divided to an integer */
    const char *name;                  /* the feature, for messages */
    int f16;                           /* FLBA(2) FLOAT16 */
    int uint32_src;                    /* INT32 annotated unsigned */
    uint64_t seed;
    uint8_t *dconv; size_t dconv_cap;  /* dictionary in the dtype */
    uint8_t *dbad; size_t dbad_cap;    /* entries that cannot convert */
    uint32_t dgen;                     /* dictionary generation converted */
    int dconv_ok;
    uint8_t dbad_any;                  /* some entry cannot convert */
    const uint8_t *dview;              /* the converted dictionary in use: dconv, or
                                          the dataset's shared copy (entry dent) */
    int32_t dent;                      /* the shared entry held, -1 none */
    int32_t feat;                      /* the feature's index (the shared key) */
    gf__dcache **dcp;                  /* the dataset's shared dictionaries (NULL: none) */
    const gpufeed_allocator *da;
    /* a call's working tiles (gf__dtmp): a scratch's scalar features share
       one, as it reads them one after another; a list feature has its own */
    uint32_t *idx;                     /* [GF__TILE + 1] */
    uint64_t *cv;                      /* [GF__TILE] canonical values */
    uint64_t *tile;                    /* [GF__TILE + 1] converted values */
    /* list features */
    int32_t width;                     /* W (0: a scalar or lengths feature) */
    int32_t list_policy;
    int lengths;                       /* output the list's length */
    int64_t *vdst;                     /* [GF__TILE] where each value of a run goes (-1: dropped) */
    int64_t *vrow;                     /* [GF__TILE] and its row */
    int virt;                          /* this unit's file holds no such column: GF__VIRT_* */
    uint8_t vval[8];                   /* GF__VIRT_CONST: the value, in the dtype */
    struct gf__dtmp *town;             /* a list feature's own tiles (NULL: the scratch's) */
} gf__dcol;
#if GF__LTILE > GF__TILE
#error "GF__LTILE must not exceed GF__TILE"
#endif
typedef struct gf__dtmp {              /* a feature decoder's working tiles */
    uint32_t idx[GF__TILE + 1];
    uint64_t cv[GF__TILE];
    uint64_t tile[GF__TILE + 1];
    int64_t vdst[GF__TILE];
    int64_t vrow[GF__TILE];
} gf__dtmp;
static void gf__dcol_tiles(gf__dcol *d, gf__dtmp *t)
{
    d->idx = t->idx; d->cv = t->cv; d->tile = t->tile; d->vdst = t->vdst; d->vrow = t->vrow;
}

/* big-endian two's complement decimal bytes to int64; 0 if it does not fit */
static int gf__be_to_i64(const uint8_t *p, uint32_t n, int64_t *out)
{
    uint64_t v;
    uint32_t i;
    int neg;
    if (n == 0) { *out = 0; return 1; }
    neg = (p[0] & 0x80) != 0;
    for (i = 0; i + 8 < n; i++) if (p[i] != (neg ? 0xFF : 0x00)) return 0;
    if (n > 8 && (((p[n - 8] & 0x80) != 0) != neg)) return 0;
    v = neg ? ~0ull : 0;
    for (i = n > 8 ? n - 8 : 0; i < n; i++) v = (v << 8) | p[i];
    *out = (int64_t)v;
    return 1;
}

/* a decimal wider than 64 bits as a double (within an ulp: the magnitude
   and the division are each rounded once) */
static double gf__wide_dec_to_double(const uint8_t *p, uint32_t n, int32_t scale)
{
    double d = 0;
    uint32_t i;
    int neg = n > 0 && (p[0] & 0x80);
#ifdef GF__HAVE_U128
    if (n <= 16) {
        gf__u128 m = 0;
        for (i = 0; i < n; i++) m = (m << 8) | (neg ? (uint8_t)~p[i] : p[i]);
        if (neg) m += 1;
        d = (double)m;
    } else
#endif
    {
        for (i = 0; i < n; i++) d = d * 256.0 + (double)(neg ? (uint8_t)~p[i] : p[i]);
        if (neg) d += 1.0;
    }
    while (scale > 22) { d /= 1e22; scale -= 22; }
    if (scale > 0) d /= gf__pow10[scale];
    return neg ? -d : d;
}

/* An integer feature with hash_buckets (an ID): each canonical int64 (or
   uint64) replaced by the hash of its 8 little-endian bytes, so an INT32
   and an INT64 file give one value the same id. */
static void gf__hash_ints(const gf__dcol *d, uint64_t *cv, uint32_t n)
{
    uint32_t i;
    for (i = 0; i < n; i++) cv[i] = gpufeed_hash64(&cv[i], 8, d->seed);
}

/* typed (reader element) value i of `src` to canonical */
static int gf__canon_one(gf__dcol *d, const void *src, uint32_t i, uint64_t *out)
{
    const gpufeed_column *c = &d->c;
    switch (c->ci->physical) {
    case GPUFEED_BOOLEAN: *out = ((const uint8_t *)src)[i]; break;
    case GPUFEED_INT32: {
        int32_t v = ((const int32_t *)src)[i];
        *out = d->uint32_src ? (uint64_t)(uint32_t)v : (uint64_t)(int64_t)v;
        break;
    }
    case GPUFEED_INT64: case GPUFEED_INT96: *out = ((const uint64_t *)src)[i]; break;
    case GPUFEED_FLOAT:
        {
            double x = ((const float *)src)[i];
            memcpy(out, &x, 8);
            return 1;
        }
    case GPUFEED_DOUBLE: *out = ((const uint64_t *)src)[i]; return 1;
    default: {
        gpufeed_bytes b = ((const gpufeed_bytes *)src)[i];
        if (d->conv.ck == GF__CK_HASH) { *out = gpufeed_hash64(b.ptr, b.len, d->seed); return 1; }
        if (d->f16) {
            double x = gpufeed_half_to_float(gf__ld16(b.ptr));
            memcpy(out, &x, 8);
            return 1;
        }
        {
            int64_t v;
            if (d->conv.ck == GF__CK_F64) { /* a wide decimal as a double */
                double x;
                if (gf__be_to_i64(b.ptr, b.len, &v)) x = gf__dec_to_double(v, d->dec_scale);
                else x = gf__wide_dec_to_double(b.ptr, b.len, d->dec_scale);
                memcpy(out, &x, 8);
                return 1;
            }
            if (d->dec_int) { /* value / 10^scale, exactly; 0 when inexact or too wide (SAFE) */
#ifdef GF__HAVE_U128
                gf__u128 m = 0, p = 1, q, r;
                uint32_t k;
                int neg = b.len > 0 && (b.ptr[0] & 0x80);
                int32_t sc;
                if (b.len > 16) {
                    for (k = 0; k + 16 < b.len; k++)
                        if (b.ptr[k] != (neg ? 0xFF : 0)) {
                            if (!d->conv.unsafe_cast) return 0;
                            *out = neg ? (uint64_t)INT64_MIN : (uint64_t)INT64_MAX;
                            return 1;
                        }
                }
                for (k = b.len > 16 ? b.len - 16 : 0; k < b.len; k++) m = (m << 8) | (neg ? (uint8_t)~b.ptr[k] : b.ptr[k]);
                if (neg) m += 1;
                for (sc = 0; sc < d->dec_scale && sc < 38; sc++) p *= 10u;
                q = m / p; r = m % p;
                if (r != 0 && !d->conv.unsafe_cast) return 0;
                if (q > (gf__u128)INT64_MAX + (neg ? 1u : 0u)) {
                    if (!d->conv.unsafe_cast) return 0;
                    *out = neg ? (uint64_t)INT64_MIN : (uint64_t)INT64_MAX;
                    return 1;
                }
                *out = neg ? (uint64_t)0 - (uint64_t)q : (uint64_t)q;
                return 1;
#else
                if (!gf__be_to_i64(b.ptr, b.len, &v)) return 0;
                if (d->dec_scale > 0) {
                    int64_t p = 1; int32_t sc;
                    if (d->dec_scale > 18) {
                        if (v && !d->conv.unsafe_cast) return 0;
                        *out = 0;
                        return 1;
                    }
                    for (sc = 0; sc < d->dec_scale; sc++) p *= 10;
                    if (v % p && !d->conv.unsafe_cast) return 0;
                    v /= p;
                }
                *out = (uint64_t)v;
                return 1;
#endif
            }
            if (!gf__be_to_i64(b.ptr, b.len, &v)) return 0;
            *out = (uint64_t)v;
            return 1;
        }
    }
    }
    if (d->conv.ck == GF__CK_HASH) gf__hash_ints(d, out, 1); /* an integer ID */
    return 1;
}

enum { GF__UNIT_DAYS = 16 };         /* a DATE column's unit (beside GPUFEED_UNIT_*) */

/* nanoseconds in one of a time unit; its name */
static int64_t gf__unit_ns(int32_t u)
{
    switch (u) {
    case GPUFEED_UNIT_SECONDS: return 1000000000;
    case GPUFEED_UNIT_MILLIS: return 1000000;
    case GPUFEED_UNIT_MICROS: return 1000;
    case GF__UNIT_DAYS: return (int64_t)86400 * 1000000000;
    default: return 1;
    }
}
static const char *gf__unit_name(int32_t u)
{
    switch (u) {
    case GPUFEED_UNIT_SECONDS: return "s";
    case GPUFEED_UNIT_MILLIS: return "ms";
    case GPUFEED_UNIT_MICROS: return "us";
    case GPUFEED_UNIT_NANOS: return "ns";
    case GF__UNIT_DAYS: return "days";
    default: return "?";
    }
}

static void gf__fmt_canon(const gf__dcol *d, uint64_t v, char *buf, size_t cap)
{
    if (d->conv.ck == GF__CK_F64) {
        double x;
        memcpy(&x, &v, 8);
        gf__fmt(buf, cap, "%.17g", x);
    }
    else if (d->conv.ck == GF__CK_U64 || d->conv.ck == GF__CK_HASH) gf__fmt(buf, cap, "%llu", (unsigned long long)v);
    else if (d->conv.scale > 0) gf__fmt(buf, cap, "%lld (unscaled, scale %d)", (long long)(int64_t)v, d->conv.scale);
    else if (d->conv.tsrc && d->conv.tsrc != d->conv.tdst)
        gf__fmt(buf, cap, "%lld %s (in the feature's %s)", (long long)(int64_t)v, gf__unit_name(d->conv.tsrc), gf__unit_name(d->conv.tdst));
    else gf__fmt(buf, cap, "%lld", (long long)(int64_t)v);
}

/* what to do about a value a SAFE cast refused */
static const char *gf__cast_hint(const gf__dcol *d)
{
    const int float_dt = d->conv.dt == GPUFEED_DT_F32 || d->conv.dt == GPUFEED_DT_F64 || d->conv.dt == GPUFEED_DT_F16 || d->conv.dt == GPUFEED_DT_BF16;
    if (d->conv.tsrc && d->conv.tsrc != d->conv.tdst) return ": a finer unit keeps every digit (unit), or cast unsafe truncates";
    if (float_dt && (d->conv.ck == GF__CK_I64 || d->conv.ck == GF__CK_U64) && !d->conv.scale)
        return ": floats hold integers exactly only so far (f32: 2^24, f64: 2^53); use i32 / i64 (or hash_buckets for IDs), or cast unsafe to round";
    return "";
}

/* The current dictionary converted to the dtype, once per dictionary. */
static int gf__plain_direct(gf__dcol *d, uint32_t nn, uint8_t *out);
static gpufeed_result gf__dcol_dict(gf__dcol *d, size_t dsz)
{
    gpufeed_column *c = &d->c;
    uint32_t i, n = c->dict_n;
    const gpufeed_allocator *a = &c->f->alloc;
    if (d->dconv_ok && d->dgen == c->dict_gen) return GPUFEED_OK;
    if (n && !c->nested && c->dict == c->dict_buf && c->dict_buf_cap >= (size_t)n * dsz + 8 &&
        c->dict_buf_cap / 4 <= (size_t)n * dsz + 4096 && /* not a far larger buffer (the scratch's spare) kept for a few entries */
        !d->conv.scale && !d->decimal_bytes &&
        !d->dec_scale && !d->f16 && d->conv.ck == GF__CK_F64 &&
        ((c->ci->physical == GPUFEED_FLOAT && d->conv.dt == GPUFEED_DT_F32) || (c->ci->physical == GPUFEED_DOUBLE && d->conv.dt == GPUFEED_DT_F64))) {
        /* the entries are already the dtype: the page buffer becomes the
           converted dictionary (no copy; the reader's c->dict follows it),
           and no entry can be bad (dbad is read only when dbad_any) */
        uint8_t *t = d->dconv;
        size_t tc = d->dconv_cap;
        d->dconv = c->dict_buf; d->dconv_cap = c->dict_buf_cap;
        c->dict_buf = t; c->dict_buf_cap = tc;
        c->dict = d->dconv;
        memset(d->dconv + (size_t)n * dsz, 0, 8);
        d->dbad_any = 0;
        gf__col_lend_dict(c); /* the last dictionary's buffer: the next page's */
        goto converted;
    }
    if (!gf__grow(a, &d->dconv, &d->dconv_cap, (size_t)n * dsz + 8) || !gf__grow(a, &d->dbad, &d->dbad_cap, (size_t)n))
        return gf__col_fail(c, GPUFEED_ERR_OUT_OF_MEMORY, "out of memory converting the dictionary");
    if (n && !d->conv.scale && !d->uint32_src && !d->decimal_bytes && !d->dec_scale && !d->f16 &&
        (d->conv.dt == GPUFEED_DT_F32 || d->conv.dt == GPUFEED_DT_F64) &&
        (((c->ci->physical == GPUFEED_FLOAT || c->ci->physical == GPUFEED_DOUBLE) && d->conv.ck == GF__CK_F64) ||
         ((c->ci->physical == GPUFEED_INT32 || c->ci->physical == GPUFEED_INT64) && d->conv.ck == GF__CK_I64))) {
        /* a plain cast: the PLAIN kernels, straight from the entries (they
           decline a SAFE cast of an integer a float cannot hold: below, such
           entries are marked and fail only where a row uses them) */
        const uint8_t *save_vp = c->vp, *save_end = c->vend;
        c->vp = (const uint8_t *)c->dict; c->vend = c->vp + (size_t)n * gf__elem_size(c->ci->physical);
        i = (uint32_t)gf__plain_direct(d, n, d->dconv);
        c->vp = save_vp; c->vend = save_end;
        if (i == 1) { /* no entry is bad: dbad is read only when dbad_any, but by the list reader always */
            if (c->nested) memset(d->dbad, 0, n);
            d->dbad_any = 0;
            goto checked;
        }
    }
    for (i = 0; i < n; i += GF__TILE) {
        uint32_t k = n - i < GF__TILE ? n - i : GF__TILE, j;
        int64_t at = 0;
        memset(d->dbad + i, 0, k);
        switch (c->ci->physical) { /* the common types without a per-entry switch */
        case GPUFEED_INT32:
            if (d->uint32_src) for (j = 0; j < k; j++) d->cv[j] = (uint32_t)((const int32_t *)c->dict)[i + j];
            else for (j = 0; j < k; j++) d->cv[j] = (uint64_t)(int64_t)((const int32_t *)c->dict)[i + j];
            break;
        case GPUFEED_INT64: case GPUFEED_DOUBLE: case GPUFEED_INT96:
            memcpy(d->cv, (const uint64_t *)c->dict + i, (size_t)k * 8);
            break;
        case GPUFEED_FLOAT:
            for (j = 0; j < k; j++) { double x = ((const float *)c->dict)[i + j]; memcpy(&d->cv[j], &x, 8); }
            break;
        default:
            for (j = 0; j < k; j++)
                if (!gf__canon_one(d, c->dict, i + j, &d->cv[j])) { d->dbad[i + j] = 2; d->cv[j] = 0; }
            break;
        }
        if (d->conv.ck == GF__CK_HASH && (c->ci->physical == GPUFEED_INT32 || c->ci->physical == GPUFEED_INT64 || c->ci->physical == GPUFEED_INT96))
            gf__hash_ints(d, d->cv, k); /* integer IDs (the default case hashed its own) */

        /* convert, marking entries that fail and converting them unsafely */
        while (at < (int64_t)k) {
            int64_t bad = gf__convert(&d->conv, d->cv + at, d->dconv + (size_t)(i + at) * dsz, (int64_t)k - at);
            if (bad < 0) break;
            {
                gf__conv u = d->conv;
                u.unsafe_cast = 1;
                gf__convert(&u, d->cv + at + bad, d->dconv + (size_t)(i + at + bad) * dsz, 1);
                if (!d->dbad[i + at + bad]) d->dbad[i + at + bad] = 1;
                at += bad + 1;
            }
        }
    }
    n = c->dict_n;
    d->dbad_any = 0;
    for (i = 0; i < n; i++) d->dbad_any |= d->dbad[i];
checked:
    if (!c->nested && !d->dbad_any) { /* read only when some entry is bad: not kept a dictionary long */
        gf__free(a, d->dbad);
        d->dbad = NULL; d->dbad_cap = 0;
    }
    if (!c->nested && !d->dbad_any && c->spare && !*c->spare && c->dict == c->dict_buf && c->dict_buf) {
        /* fixed-width entries, all converted: the raw page is not read again
           (dview serves every value; c->dict only explains a bad entry), so
           its buffer goes back to the scratch for the next column's
           dictionary page instead of staying with this column */
        gf__col_lend_dict(c);
        c->dict = NULL;
    }
converted:
    n = c->dict_n;
    d->dgen = c->dict_gen;
    d->dconv_ok = 1;
    d->dview = d->dconv; /* stays the entry's when the dataset's cache takes the buffer */
    if (!c->nested && !d->dbad_any && d->dcp && d->dent < 0) /* for the other readers of this chunk */
        d->dent = gf__dcache_put(gf__dcache_of(d->dcp, d->da), d->da, c->f, c->rg, d->feat, &d->dconv, &d->dconv_cap, n, (size_t)n * dsz);
    return GPUFEED_OK;
}

/* Canonical values of nn present values of the current (non-dictionary)
   page, into d->cv. */
static gpufeed_result gf__dcol_canon(gf__dcol *d, uint32_t nn)
{
    gpufeed_column *c = &d->c;
    uint32_t i;
    const uint8_t *p = c->vp;
    size_t avail = (size_t)(c->vend - c->vp);
    if (c->enc == GPUFEED_ENC_PLAIN) {
        switch (c->ci->physical) {
        case GPUFEED_INT32:
            if (avail / 4 < nn) goto short_page;
            if (d->uint32_src) for (i = 0; i < nn; i++) d->cv[i] = gf__ld32(p + 4 * (size_t)i);
            else for (i = 0; i < nn; i++) d->cv[i] = (uint64_t)(int64_t)(int32_t)gf__ld32(p + 4 * (size_t)i);
            c->vp += 4 * (size_t)nn;
            if (d->conv.ck == GF__CK_HASH) gf__hash_ints(d, d->cv, nn);
            return GPUFEED_OK;
        case GPUFEED_INT64: case GPUFEED_DOUBLE:
            if (avail / 8 < nn) goto short_page;
            memcpy(d->cv, p, 8 * (size_t)nn);
            c->vp += 8 * (size_t)nn;
            if (d->conv.ck == GF__CK_HASH) gf__hash_ints(d, d->cv, nn);
            return GPUFEED_OK;
        case GPUFEED_FLOAT:
            if (avail / 4 < nn) goto short_page;
            for (i = 0; i < nn; i++) {
                float f; double x;
                memcpy(&f, p + 4 * (size_t)i, 4);
                x = f;
                memcpy(&d->cv[i], &x, 8);
            }
            c->vp += 4 * (size_t)nn;
            return GPUFEED_OK;
        default: break;
        }
    }

    /* the general path: decode to the reader's typed tile, then canonical */
    {
        gpufeed_result r = gf__col_values(c, c->out, nn);
        if (r) return r;
        for (i = 0; i < nn; i++) {
            if (!gf__canon_one(d, c->out, i, &d->cv[i]))
                return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "feature '%s': a decimal value near row %lld does not convert to %s exactly (cast: %s)",
                                    d->name ? d->name : "?", (long long)c->rows_done, gpufeed_dtype_name(d->conv.dt), d->conv.unsafe_cast ? "unsafe" : "safe");
        }
        return GPUFEED_OK;
    }
short_page:
    return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "page holds fewer values than its levels say (PLAIN data ends)");
}

/* Spreads compact values to rows: row i gets src[j] (j counting present
   rows) or the fill. Branch-free; src and idx have one spare slot. */
#define GF__SCATTER(T) { T f_, v_, m_; memcpy(&f_, fill, sizeof(T)); \
    for (; i < n; i++) { memcpy(&v_, src + (size_t)j * sizeof(T), sizeof(T)); m_ = (T)(0 - (T)valid[i]); \
        v_ = (T)((v_ & m_) | (f_ & (T)~m_)); memcpy(dst + (size_t)i * stride, &v_, sizeof(T)); j += valid[i]; } }
#if defined(GF__AVX512)
/* The spread for 4- and 8-byte values into consecutive rows: 16 (or 8)
   rows a step, the step's present values expanded into their rows over
   the fill (an expanding load reads only the values it places). Returns
   the rows done; *jp the values used. */
GF__TARGET_AVX512 static uint32_t gf__scatter_avx512(uint8_t *dst, const uint8_t *src, const uint8_t *valid, uint32_t n, const uint8_t *fill,
                                                     size_t dsz, uint32_t *jp)
{
    uint32_t i = 0, j = 0;
    const __m128i z = _mm_setzero_si128();
    if (dsz == 4) {
        uint32_t f;
        __m512i fv;
        memcpy(&f, fill, 4);
        fv = _mm512_set1_epi32((int)f);
        for (; i + 16 <= n; i += 16) {
            const uint32_t m = ~(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(valid + i)), z)) & 0xFFFFu;
            _mm512_storeu_si512((void *)(dst + (size_t)i * 4), _mm512_mask_expandloadu_epi32(fv, (__mmask16)m, src + (size_t)j * 4));
            j += (uint32_t)_mm_popcnt_u32(m);
        }
    } else {
        uint64_t f;
        __m512i fv;
        memcpy(&f, fill, 8);
        fv = _mm512_set1_epi64((long long)f);
        for (; i + 8 <= n; i += 8) {
            const uint32_t m = ~(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadl_epi64((const __m128i *)(const void *)(valid + i)), z)) & 0xFFu;
            _mm512_storeu_si512((void *)(dst + (size_t)i * 8), _mm512_mask_expandloadu_epi64(fv, (__mmask8)m, src + (size_t)j * 8));
            j += (uint32_t)_mm_popcnt_u32(m);
        }
    }
    *jp = j;
    return i;
}
#endif
static void gf__scatter(uint8_t *dst, size_t stride, const uint8_t *src, const uint8_t *valid, uint32_t n, const uint8_t *fill, size_t dsz)
{
    uint32_t i = 0, j = 0;
#if defined(GF__AVX512)
    if ((dsz == 4 || dsz == 8) && stride == dsz && gf__avx512()) i = gf__scatter_avx512(dst, src, valid, n, fill, dsz, &j);
#endif
    switch (dsz) {
    case 1: GF__SCATTER(uint8_t) break;
    case 2: GF__SCATTER(uint16_t) break;
    case 4: GF__SCATTER(uint32_t) break;
    default: GF__SCATTER(uint64_t) break;
    }
}
/* 1 when every one of the n indices is below dn (the dictionary's
   entries): four at a time where there is SIMD */
static int gf__idx_below(const uint32_t *idx, uint32_t n, uint32_t dn)
{
    uint32_t i = 0, over = 0;
    if (dn == 0) return n == 0;
#if defined(GF__SSE2)
    {   /* unsigned compare as signed, both sides offset by 2^31 */
        const __m128i flip = _mm_set1_epi32((int)0x80000000u), last = _mm_set1_epi32((int)((dn - 1) ^ 0x80000000u));
        __m128i acc = _mm_setzero_si128();
        for (; i + 4 <= n; i += 4)
            acc = _mm_or_si128(acc, _mm_cmpgt_epi32(_mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(idx + i)), flip), last));
        over = (uint32_t)_mm_movemask_epi8(acc);
    }
#elif defined(GF__NEON)
    {
        uint32x4_t m = vdupq_n_u32(0);
        for (; i + 4 <= n; i += 4) m = vmaxq_u32(m, vld1q_u32(idx + i));
        over = vmaxvq_u32(m) >= dn;
    }
#endif
    for (; i < n; i++) over |= idx[i] >= dn;
    return over == 0;
}

/* Dictionary gathers: row i gets entry idx[i] (dsz bytes each, rows
   stride apart). The indices are checked first, in one pass; then the
   entries are copied four at a time, nothing checked in the loop. An index
   past the dictionary (dn entries) reads entry 0 instead and makes the
   result non-zero, for the caller to report. dc holds at least 8 bytes. */
#define GF__GATHER4(T) { T a_, b_, c_, d_; \
    for (; i + 4 <= n; i += 4) { \
        memcpy(&a_, dc + (size_t)idx[i] * sizeof(T), sizeof(T)); memcpy(&b_, dc + (size_t)idx[i + 1] * sizeof(T), sizeof(T)); \
        memcpy(&c_, dc + (size_t)idx[i + 2] * sizeof(T), sizeof(T)); memcpy(&d_, dc + (size_t)idx[i + 3] * sizeof(T), sizeof(T)); \
        memcpy(dst + (size_t)i * stride, &a_, sizeof(T)); memcpy(dst + (size_t)(i + 1) * stride, &b_, sizeof(T)); \
        memcpy(dst + (size_t)(i + 2) * stride, &c_, sizeof(T)); memcpy(dst + (size_t)(i + 3) * stride, &d_, sizeof(T)); } \
    for (; i < n; i++) memcpy(dst + (size_t)i * stride, dc + (size_t)idx[i] * sizeof(T), sizeof(T)); }
#define GF__GATHER_CHECKED(T) \
    for (i = 0; i < n; i++) { uint32_t x_ = idx[i]; bad |= x_ >= dn; x_ = x_ < dn ? x_ : 0; \
        memcpy(dst + (size_t)i * stride, dc + (size_t)x_ * sizeof(T), sizeof(T)); }
static uint32_t gf__gather_dense(uint8_t *dst, size_t stride, const uint8_t *dc, const uint32_t *idx, uint32_t n, uint32_t dn, size_t dsz)
{
    uint32_t i = 0, bad = 0;
    if (gf__idx_below(idx, n, dn)) {
        switch (dsz) {
        case 1: GF__GATHER4(uint8_t) break;
        case 2: GF__GATHER4(uint16_t) break;
        case 4: GF__GATHER4(uint32_t) break;
        default: GF__GATHER4(uint64_t) break;
        }
        return 0;
    }
    switch (dsz) {
    case 1: GF__GATHER_CHECKED(uint8_t) break;
    case 2: GF__GATHER_CHECKED(uint16_t) break;
    case 4: GF__GATHER_CHECKED(uint32_t) break;
    default: GF__GATHER_CHECKED(uint64_t) break;
    }
    return bad;
}
#undef GF__SCATTER
#undef GF__GATHER4
#undef GF__GATHER_CHECKED

/* PLAIN fixed-width values straight into the dtype (d->tile), when the
   conversion is a plain cast that cannot fail: FLOAT, DOUBLE, INT32 and
   INT64 (no decimal, no unsigned annotation) to f32 or f64, INT32 to i32
   and INT64 to i64. The same values as the canonical path gives. 1 done,
   0 not such a case, -1 the page ends early. */
static int gf__plain_direct(gf__dcol *d, uint32_t nn, uint8_t *out)
{
    gpufeed_column *c = &d->c;
    const uint8_t *p = c->vp;
    size_t avail = (size_t)(c->vend - c->vp), esz;
    const gpufeed_physical_type pt = c->ci->physical;
    const gpufeed_dtype dt = d->conv.dt;
    uint32_t i;
    if (d->conv.scale > 0 || d->uint32_src || d->decimal_bytes || d->dec_scale || d->f16 || d->conv.tmul > 1 || d->conv.tdiv > 1) return 0;
    if (!d->conv.unsafe_cast && ((pt == GPUFEED_INT32 && dt == GPUFEED_DT_F32) || (pt == GPUFEED_INT64 && (dt == GPUFEED_DT_F32 || dt == GPUFEED_DT_F64)))) {
        /* a SAFE cast only when every integer is exact in the float dtype:
           else the general path finds the first one that is not, and says so */
        const size_t ez = pt == GPUFEED_INT32 ? 4 : 8;
        const int64_t lim = dt == GPUFEED_DT_F32 ? (int64_t)1 << 24 : (int64_t)1 << 53; /* within it every integer is exact */
        if (avail / ez < nn) return -1;
        for (i = 0; i < nn; i++) {
            int64_t v;
            if (ez == 4) { int32_t x; memcpy(&x, p + 4 * (size_t)i, 4); v = x; }
            else memcpy(&v, p + 8 * (size_t)i, 8);
            if ((v < -lim || v > lim) && !gf__int_exact((uint64_t)v, 0, dt)) return 0;
        }
    }
    if (!((pt == GPUFEED_FLOAT || pt == GPUFEED_DOUBLE) && d->conv.ck == GF__CK_F64) &&
        !((pt == GPUFEED_INT32 || pt == GPUFEED_INT64) && d->conv.ck == GF__CK_I64)) return 0;
    if (!(dt == GPUFEED_DT_F32 || dt == GPUFEED_DT_F64 || (dt == GPUFEED_DT_I32 && pt == GPUFEED_INT32) || (dt == GPUFEED_DT_I64 && pt == GPUFEED_INT64)))
        return 0;
    esz = pt == GPUFEED_FLOAT || pt == GPUFEED_INT32 ? 4 : 8;
    if (avail / esz < nn) return -1;
    if ((pt == GPUFEED_FLOAT && dt == GPUFEED_DT_F32) || (pt == GPUFEED_DOUBLE && dt == GPUFEED_DT_F64) ||
        (pt == GPUFEED_INT32 && dt == GPUFEED_DT_I32) || (pt == GPUFEED_INT64 && dt == GPUFEED_DT_I64))
        memcpy(out, p, (size_t)nn * esz);
    else if (dt == GPUFEED_DT_F32) {
        i = 0;
        if (pt == GPUFEED_DOUBLE) {
#if defined(GF__SSE2)
            for (; i + 4 <= nn; i += 4) {
                __m128 lo = _mm_cvtpd_ps(_mm_loadu_pd((const double *)(const void *)(p + 8 * (size_t)i)));
                __m128 hi = _mm_cvtpd_ps(_mm_loadu_pd((const double *)(const void *)(p + 8 * (size_t)i + 16)));
                _mm_storeu_ps((float *)(void *)(out + 4 * (size_t)i), _mm_movelh_ps(lo, hi));
            }
#elif defined(GF__NEON)
            for (; i + 4 <= nn; i += 4) {
                float32x2_t lo = vcvt_f32_f64(vld1q_f64((const double *)(const void *)(p + 8 * (size_t)i)));
                float32x2_t hi = vcvt_f32_f64(vld1q_f64((const double *)(const void *)(p + 8 * (size_t)i + 16)));
                vst1q_f32((float *)(void *)(out + 4 * (size_t)i), vcombine_f32(lo, hi));
            }
#endif
            for (; i < nn; i++) {
                double x;
                float y;
                memcpy(&x, p + 8 * (size_t)i, 8);
                y = (float)x;
                memcpy(out + 4 * (size_t)i, &y, 4);
            }
        } else if (pt == GPUFEED_INT32) {
#if defined(GF__SSE2)
            for (; i + 4 <= nn; i += 4)
                _mm_storeu_ps((float *)(void *)(out + 4 * (size_t)i), _mm_cvtepi32_ps(_mm_loadu_si128((const __m128i *)(const void *)(p + 4 * (size_t)i))));
#elif defined(GF__NEON)
            for (; i + 4 <= nn; i += 4)
                vst1q_f32((float *)(void *)(out + 4 * (size_t)i), vcvtq_f32_s32(vld1q_s32((const int32_t *)(const void *)(p + 4 * (size_t)i))));
#endif
            for (; i < nn; i++) {
                int32_t x;
                float y;
                memcpy(&x, p + 4 * (size_t)i, 4);
                y = (float)x;
                memcpy(out + 4 * (size_t)i, &y, 4);
            }
        } else {
            for (; i < nn; i++) {
                int64_t x;
                float y;
                memcpy(&x, p + 8 * (size_t)i, 8);
                y = (float)x;
                memcpy(out + 4 * (size_t)i, &y, 4);
            }
        }
    } else {
        for (i = 0; i < nn; i++) {
            double y;
            if (pt == GPUFEED_FLOAT) {
                float x;
                memcpy(&x, p + 4 * (size_t)i, 4);
                y = x;
            }
            else if (pt == GPUFEED_INT32) {
                int32_t x;
                memcpy(&x, p + 4 * (size_t)i, 4);
                y = (double)x;
            }
            else {
                int64_t x;
                memcpy(&x, p + 8 * (size_t)i, 8);
                y = (double)x;
            }
            memcpy(out + 8 * (size_t)i, &y, 8);
        }
    }
    c->vp += (size_t)nn * esz;
    return 1;
}

/* A unit inside the chunk: its dictionary from another reader, already
   converted (when the dataset's cache has it). */
static void gf__dcol_shared_dict(gf__dcol *d)
{
    gpufeed_column *c = &d->c;
    gf__dcache *dch = gf__dcache_load(d->dcp);
    int32_t at = gf__dcache_get(dch, c->f, c->rg, d->feat);
    if (at >= 0) {
        const gf__dent *e = &dch->e[at];
        d->dent = at;
        c->has_dict = 1;
        c->dict_pending = 0;
        c->dict_n = e->n;
        c->dict_gen++;
        d->dview = e->conv;
        d->dgen = c->dict_gen;
        d->dconv_ok = 1;
        d->dbad_any = 0;
    }
}

/* Reads k rows of the feature into dst (row stride `stride`), validity into
   vout (stride 1) when not NULL. */
static gpufeed_result gf__dcol_read(gf__dcol *d, const char *fname, int64_t k, uint8_t *dst, size_t stride,
                                    uint8_t *vout, const uint8_t *fill, int null_error, const uint8_t *mask)
{
    gpufeed_column *c = &d->c;
    const size_t dsz = gpufeed_dtype_size(d->conv.dt);
    while (k > 0) {
        uint32_t n, nn = 0, i, j;
        gpufeed_result r;
        if (!c->in_page && c->dict_pending && !c->has_dict && d->dent < 0 && d->dcp && gf__dcache_load(d->dcp))
            gf__dcol_shared_dict(d);
        if (!c->in_page) {
            c->z_want = 1; /* a large SNAPPY page streamed (gf__col_z_fits) */
            r = gf__col_next_page(c);
            c->z_want = 0;
            if (r == GPUFEED_DONE)
                return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "chunk ended at row %lld, %lld rows early", (long long)c->rows_done, (long long)k);
            if (r) return r;
        }
        n = c->page_left < GF__TILE ? c->page_left : GF__TILE;
        if ((int64_t)n > k) n = (uint32_t)k;
        r = gf__col_levels(c, n, &nn);
        if (r) return r;
        if (nn < n && null_error) { /* only rows the predicates keep count */
            for (i = 0; i < n && (c->valid[i] || (mask && !mask[i])); i++) {}
            if (i < n) return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "feature '%s': null at row %lld (null policy: error)", fname, (long long)(c->rows_done + i));
        }
        if (c->enc == GPUFEED_ENC_PLAIN_DICTIONARY || c->enc == GPUFEED_ENC_RLE_DICTIONARY) {
            uint32_t got;
            const uint8_t *dc;
            r = gf__dcol_dict(d, dsz);
            if (r) return r;
            if (!c->idx_ready && nn) {
                int bw;
                if ((r = gf__col_z_vals(c, 1)) != GPUFEED_OK) return r;
                if (c->vp >= c->vend) return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "dictionary indices miss their bit width");
                bw = *c->vp;
                if (bw > 32) return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "dictionary index bit width %d", bw);
                gf__rle_init(&c->idx, c->vp + 1, c->vend, bw);
                if (c->z_on) { c->idx.need = gf__col_z_hook; c->idx.need_ctx = c; } /* each run asks for its bytes */
                c->idx_ready = 1;
            }
            got = nn ? gf__rle_get(&c->idx, d->idx, nn) : 0;
            if (got != nn) return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "dictionary indices end before the page's levels do");

            /* entries that cannot convert are checked value by value (ranges
               are checked while gathering, below) */
            for (i = d->dbad_any ? 0 : nn; i < nn; i++) {
                uint32_t ix = d->idx[i];
                if (ix >= c->dict_n)
                    return gf__col_fail(c, GPUFEED_ERR_DICTIONARY, "dictionary index %u out of range (dictionary has %u entries)", ix, c->dict_n);
                if (d->dbad[ix] && !(d->dbad[ix] == 1 && d->conv.unsafe_cast)) {
                    char vb[96];
                    uint64_t cvv = 0;
                    int64_t row = c->rows_done;
                    uint32_t seen = 0;
                    for (j = 0; j < n; j++) {
                        if (!c->ci->max_def || c->valid[j]) {
                            if (seen == i) { row += j; break; }
                            seen++;
                        }
                    }
                    if (mask && !mask[row - c->rows_done]) continue; /* a dropped row */
                    if (d->dbad[ix] == 2)
                        return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "feature '%s': the decimal value at row %lld does not convert to %s exactly (cast: %s)",
                                            fname, (long long)row, gpufeed_dtype_name(d->conv.dt), d->conv.unsafe_cast ? "unsafe" : "safe");
                    gf__canon_one(d, c->dict, ix, &cvv);
                    gf__fmt_canon(d, cvv, vb, sizeof vb);
                    return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "feature '%s': value %s at row %lld does not convert to %s exactly (cast: safe)%s", fname, vb,
                                        (long long)row, gpufeed_dtype_name(d->conv.dt), gf__cast_hint(d));
                }
            }
            dc = d->dview;
            if (nn == n) j = gf__gather_dense(dst, stride, dc, d->idx, n, c->dict_n, dsz);
            else { /* the present rows' entries in a row, then spread to the rows with fills between */
                j = gf__gather_dense((uint8_t *)d->tile, dsz, dc, d->idx, nn, c->dict_n, dsz);
                if (!j) gf__scatter(dst, stride, (const uint8_t *)d->tile, c->valid, n, fill, dsz);
            }
            if (j) { /* an index out of range (it read entry 0): name it */
                for (i = 0; i < nn && d->idx[i] < c->dict_n; i++) {}
                return gf__col_fail(c, GPUFEED_ERR_DICTIONARY, "dictionary index %u out of range (dictionary has %u entries)", i < nn ? d->idx[i] : 0u,
                                    c->dict_n);
            }
        } else {
            int64_t bad;
            const uint8_t *t = (const uint8_t *)d->tile;
            const int in_place = nn == n && stride == dsz; /* no nulls, a contiguous destination: write it there */
            int direct;
            if ((r = gf__col_z_vals(c, (uint64_t)nn * c->esz)) != GPUFEED_OK) return r;
            direct = c->enc == GPUFEED_ENC_PLAIN ? gf__plain_direct(d, nn, in_place ? dst : (uint8_t *)d->tile) : 0;
            if (direct < 0) return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "page holds fewer values than its levels say (PLAIN data ends)");
            r = direct ? GPUFEED_OK : gf__dcol_canon(d, nn);
            if (r) return r;
            if (!direct) {
                int64_t at = 0;
                const size_t tz = gpufeed_dtype_size(d->conv.dt);
                while ((bad = gf__convert(&d->conv, d->cv + at, (uint8_t *)d->tile + (size_t)at * tz, (int64_t)nn - at)) >= 0) {
                    char vb[96];
                    int64_t row = c->rows_done;
                    uint32_t seen = 0;
                    bad += at;
                    for (j = 0; j < n; j++) {
                        if (!c->ci->max_def || c->valid[j]) {
                            if (seen == (uint32_t)bad) { row += j; break; }
                            seen++;
                        }
                    }
                    if (mask && !mask[row - c->rows_done]) { /* a dropped row: any value will do */
                        gf__conv u = d->conv;
                        u.unsafe_cast = 1;
                        gf__convert(&u, d->cv + bad, (uint8_t *)d->tile + (size_t)bad * tz, 1);
                        at = bad + 1;
                        continue;
                    }
                    gf__fmt_canon(d, d->cv[bad], vb, sizeof vb);
                    return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "feature '%s': value %s at row %lld does not convert to %s exactly (cast: safe)%s", fname, vb,
                                        (long long)row, gpufeed_dtype_name(d->conv.dt), gf__cast_hint(d));
                }
            }
            if (direct && in_place) { /* already there */
            } else if (nn == n) {
                if (stride == dsz) memcpy(dst, t, (size_t)n * dsz);
                else {
                    switch (dsz) {
                    case 4: for (i = 0; i < n; i++) memcpy(dst + (size_t)i * stride, t + (size_t)i * 4, 4); break;
                    case 8: for (i = 0; i < n; i++) memcpy(dst + (size_t)i * stride, t + (size_t)i * 8, 8); break;
                    case 2: for (i = 0; i < n; i++) memcpy(dst + (size_t)i * stride, t + (size_t)i * 2, 2); break;
                    default: for (i = 0; i < n; i++) dst[(size_t)i * stride] = t[i]; break;
                    }
                }
            } else {
                gf__scatter(dst, stride, t, c->valid, n, fill, dsz);
            }
        }
        if (vout) {
            if (c->ci->max_def == 0) memset(vout, 1, n);
            else memcpy(vout, c->valid, n);
            vout += n;
        }
        dst += (size_t)n * stride;
        if (mask) mask += n;
        c->page_left -= n;
        c->rows_done += n;
        k -= n;
        if (c->page_left == 0) {
            if ((r = gf__col_z_finish(c)) != GPUFEED_OK) return r;
            c->in_page = 0;
        }
    }
    return GPUFEED_OK;
}


/* List features (one repeated level): k rows into dst (row r at dst + r *
   stride, W slots of dsz bytes each), or with d->lengths each row's length
   as one value. Rows are read whole: the read ends before the entry that
   starts row k + 1. */
static gpufeed_result gf__dcol_read_list(gf__dcol *d, const char *fname, int64_t k, uint8_t *dst, size_t stride,
                                         uint8_t *vout, const uint8_t *fill, int null_error, const uint8_t *mask)
{
    gpufeed_column *c = &d->c;
    const size_t dsz = gpufeed_dtype_size(d->conv.dt);
    const uint32_t maxd = (uint32_t)c->ci->max_def, ldef = (uint32_t)(c->rdef[1] - 1);
    const int64_t W = d->width;
    const int64_t row0 = c->rows_done;
    int64_t rows = 0, levels = 0, row = -1, len = 0;
    int isnull = 0, done = 0;
    static const char *const pol[3] = { "error", "pad", "truncate" };
    const char *pname = pol[d->list_policy >= 0 && d->list_policy <= 2 ? d->list_policy : 0];
    while (!done) {
        uint32_t e, nn, i, nv = 0, s;
        int stop;
        gpufeed_result r = gf__nest_seg(c, k, &rows, &levels, INT64_MAX, &e, &nn, &stop);
        if (r == GPUFEED_DONE) {
            if (rows < k)
                return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "chunk ended at row %lld, %lld rows early", (long long)(row0 + rows), (long long)(k - rows));
            e = c->tpos;
            nn = 0;
            stop = 1;
        } else if (r) return r;
        done = stop;
        s = c->tpos;

        /* walk the entries: rows end, elements take their slots */
        for (i = s; i <= e; i++) {
            uint32_t rp, df;
            if (i == e && !done) break;    /* the run ends inside a row */
            rp = i < e ? c->tr[i] : 0; df = i < e ? c->td[i] : 0;
            if (rp == 0 && row >= 0) {     /* the row before ends here */
                int kept = !mask || mask[row];
                uint8_t *o = dst + (size_t)row * stride;
                if (isnull && null_error && kept)
                    return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "feature '%s': null list at row %lld (null policy: error)", fname, (long long)(row0 + row));
                if (vout) vout[row] = (uint8_t)!isnull;
                if (d->lengths) {
                    uint64_t lv = (uint64_t)len;
                    if (isnull) memcpy(o, fill, dsz);
                    else if (gf__convert(&d->conv, &lv, o, 1) >= 0) {
                        gf__conv u = d->conv;
                        if (kept)
                            return gf__col_fail(c, GPUFEED_ERR_CORRUPT,
                                                "feature '%s': list length %lld at row %lld does not convert to %s exactly (cast: safe)", fname,
                                                (long long)len, (long long)(row0 + row), gpufeed_dtype_name(d->conv.dt));
                        u.unsafe_cast = 1;
                        gf__convert(&u, &lv, o, 1);
                    }
                } else {
                    int64_t j;
                    if (kept && !isnull && len != W && !(len < W && d->list_policy != GPUFEED_LIST_ERROR) && !(len > W
                            && d->list_policy == GPUFEED_LIST_TRUNCATE))
                        return gf__col_fail(c, GPUFEED_ERR_CORRUPT,
                                            "feature '%s': the list at row %lld has %lld elements, the feature's width is %lld (list policy: %s)",
                                            fname, (long long)(row0 + row), (long long)len, (long long)W, pname);
                    for (j = isnull ? 0 : len; j < W; j++) memcpy(o + (size_t)j * dsz, fill, dsz);
                }
            }
            if (i == e) break;
            if (rp == 0) {
                row++;
                len = 0;
                isnull = df < ldef;
                if (df <= ldef) continue;  /* a null or empty list */
            } else if (row < 0) return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "a list continues before any row starts");

            /* an element of the row's list */
            if (df == maxd) {
                if (!d->lengths) {
                    d->vdst[nv] = len < W ? (int64_t)((size_t)row * stride + (size_t)len * dsz) : -1;
                    d->vrow[nv] = row;
                }
                nv++;
            } else if (!d->lengths && len < W) { /* a null element */
                if (null_error && (!mask || mask[row]))
                    return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "feature '%s': null element %lld of the list at row %lld (null policy: error)", fname,
                                        (long long)len, (long long)(row0 + row));
                memcpy(dst + (size_t)row * stride + (size_t)len * dsz, fill, dsz);
            }
            len++;
        }

        /* the run's values */
        if (nn && d->lengths) {
            r = gf__col_drop_values(c, nn);
            if (r) return r;
        } else if (nn && (c->enc == GPUFEED_ENC_PLAIN_DICTIONARY || c->enc == GPUFEED_ENC_RLE_DICTIONARY)) {
            uint32_t got, j;
            r = gf__dcol_dict(d, dsz);
            if (r) return r;
            if (!c->idx_ready) {
                int bw;
                if (c->vp >= c->vend) return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "dictionary indices miss their bit width");
                bw = *c->vp;
                if (bw > 32) return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "dictionary index bit width %d", bw);
                gf__rle_init(&c->idx, c->vp + 1, c->vend, bw);
                c->idx_ready = 1;
            }
            got = gf__rle_get(&c->idx, d->idx, nn);
            if (got != nn) return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "dictionary indices end before the page's levels do");
            for (j = 0; j < nn; j++) {
                uint32_t ix = d->idx[j];
                if (ix >= c->dict_n)
                    return gf__col_fail(c, GPUFEED_ERR_DICTIONARY, "dictionary index %u out of range (dictionary has %u entries)", ix, c->dict_n);
                if (d->vdst[j] < 0) continue;
                if (d->dbad[ix] && !(d->dbad[ix] == 1 && d->conv.unsafe_cast) && (!mask || mask[d->vrow[j]])) {
                    char vb[96];
                    uint64_t cvv = 0;
                    if (d->dbad[ix] == 2)
                        return gf__col_fail(c, GPUFEED_ERR_CORRUPT,
                                            "feature '%s': a decimal value in the list at row %lld does not convert to %s exactly (cast: %s)", fname,
                                            (long long)(row0 + d->vrow[j]), gpufeed_dtype_name(d->conv.dt), d->conv.unsafe_cast ? "unsafe" : "safe");
                    gf__canon_one(d, c->dict, ix, &cvv);
                    gf__fmt_canon(d, cvv, vb, sizeof vb);
                    return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "feature '%s': value %s in the list at row %lld does not convert to %s exactly (cast: safe)%s",
                                        fname, vb, (long long)(row0 + d->vrow[j]), gpufeed_dtype_name(d->conv.dt), gf__cast_hint(d));
                }
                memcpy(dst + d->vdst[j], d->dconv + (size_t)ix * dsz, dsz);
            }
        } else if (nn) {
            int64_t at = 0, bad;
            uint32_t j;
            r = gf__dcol_canon(d, nn);
            if (r) return r;
            while ((bad = gf__convert(&d->conv, d->cv + at, (uint8_t *)d->tile + (size_t)at * dsz, (int64_t)nn - at)) >= 0) {
                char vb[96];
                gf__conv u = d->conv;
                bad += at;
                if (d->vdst[bad] >= 0 && (!mask || mask[d->vrow[bad]])) {
                    gf__fmt_canon(d, d->cv[bad], vb, sizeof vb);
                    return gf__col_fail(c, GPUFEED_ERR_CORRUPT, "feature '%s': value %s in the list at row %lld does not convert to %s exactly (cast: safe)%s",
                                        fname, vb, (long long)(row0 + d->vrow[bad]), gpufeed_dtype_name(d->conv.dt), gf__cast_hint(d));
                }
                u.unsafe_cast = 1; /* a dropped value or row: any value will do */
                gf__convert(&u, d->cv + bad, (uint8_t *)d->tile + (size_t)bad * dsz, 1);
                at = bad + 1;
            }
            for (j = 0; j < nn; j++)
                if (d->vdst[j] >= 0) memcpy(dst + d->vdst[j], (const uint8_t *)d->tile + (size_t)j * dsz, dsz);
        }
        c->tpos = e;
    }
    c->rows_done += rows;
    return GPUFEED_OK;
}

/* >>dataset -------------------------------------------------------------- */
/* A dataset: its files (paths, directories, globs expanded), the features
   and predicates bound to each file's columns, and the statistics that
   prune row groups. gpufeed_dataset_open itself is in >>unit: it cuts the
   row groups into units with the page index of >>pageindex. */

#ifndef GPUFEED_NO_STDIO
#include <dirent.h>
#include <glob.h>
#include <sys/resource.h>
#endif

enum { GF__VIRT_NONE = 0, GF__VIRT_CONST, GF__VIRT_NULL };

typedef struct gf__bind {             /* a feature or predicate column in one file */
    int32_t col;                       /* -1: the file holds no such column (virt, pfix) */
    int list;                          /* a list feature (or a list's lengths) */
    gf__conv conv;
    int decimal_bytes, f16, uint32_src;
    int32_t dec_scale;                 /* decimals read as doubles (wide ones to floats) */
    int dec_int;                       /* wide decimal to an integer dtype: divided exactly */
    int virt;                          /* features: GF__VIRT_CONST (a partition key's value,
                                          vval) or GF__VIRT_NULL (missing=null, a null key) */
    uint8_t vval[8];                   /* GF__VIRT_CONST: the value in the feature's dtype */
    int pfix;                          /* predicates: -1 read the column; 0 no row of the file
                                          matches; 1 every row does */
    gpufeed_predicate padj;            /* predicates: the constants in this file's unit */
} gf__bind;

typedef struct gf__pidx {             /* data pages of one chunk: where rows start */
    int64_t n;
    int64_t *first_row;
    int64_t *first_value;              /* nested leaves: the page's first level entry (NULL: = first_row) */
    uint64_t *offset;
    int32_t *ordinal;
} gf__pidx;

typedef struct gf__rgplan {            /* a split row group: page index per column */
    int32_t file, rg;
    gf__pidx *idx;                     /* [nfeat + npred] */
    uint64_t lo, hi;                   /* the bytes of its chunks read (first page to chunk_limit) */
    int32_t busy;                      /* its units being decoded now (atomic; gf__scratch_rg_end) */
} gf__rgplan;

typedef struct gf__unitx {
    gpufeed_unit u;
    int32_t plan;                      /* index into rgplans, -1 when the unit is the whole row group */
} gf__unitx;

struct gpufeed_dataset {
    gpufeed_allocator alloc;
    uint32_t flags;
    int32_t nfiles;
    char **paths;
    gpufeed_file **files;
    int32_t nfeat, npred;
    gpufeed_feature *feats;
    gpufeed_predicate *preds;
    gf__bind *bind;                    /* [nfiles][nfeat + npred] */
    int32_t *tunit;                    /* [nfeat + npred]: the unit a time arrives in (0: not a time) */
    /* partition columns: key=value directory segments below a file's tree */
    int32_t nparts;
    char **part_key;                   /* [nparts] */
    int *part_int;                     /* [nparts]: every value an int64 (else strings) */
    const char **part_val;             /* [nfiles][nparts]: the value, NULL when null or absent */
    int all_pruned;                    /* the partition predicates keep no file: file 0 is
                                          opened, none of its row groups read */
    uint8_t (*fill)[8];                /* [nfeat]: each feature's fill in its dtype */
    const char **ident;                /* open_source, s3:// and https://: each file's identity */
    gf__rctx *remote;                  /* its s3:// and https:// objects' context (>>remote) */
#ifndef GPUFEED_NO_STDIO
    gf__fdpool *fdpool;                /* more files read with pread than GPUFEED_MAX_OPEN_FILES */
#endif
    int64_t *offs;                     /* row-major byte offset of each feature */
    int64_t row_bytes;
    int32_t layout;
    int64_t unit_rows;
    int64_t unit_bytes;                /* -1: no bound */
    int64_t wide_rows;                 /* > 0: a wide dataset (unit_rows rows are more than
                                          unit_bytes): row groups cut into runs of equal
                                          units of at most this many rows */
    gf__unitx *units; int64_t nunits;
    int64_t *runs; int64_t nruns;      /* a wide dataset: where each row group's units start
                                          (nruns + 1 entries); NULL otherwise */
    gf__rgplan *plans; int32_t nplans;
    int64_t num_rows, total_rows;
    int32_t rgs, rgs_pruned;
    uint64_t bytes_read;
    uint64_t read_us;                  /* time readers spent in read_at (atomic) */
    struct gf__dcache *dcache;         /* converted dictionaries shared by its readers */
    gf__arena arena;
    int64_t users;                     /* atomic: 2 x the loaders open on it, + 1 once closed */
};


static void gf__atomic_add(uint64_t *p, uint64_t v)
{
#if defined(__GNUC__) || defined(__clang__)
    __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#else
    *p += v;
#endif
}
#ifndef GPUFEED_NO_STDIO
/* a count shared by threads (a split row group's units being decoded):
   v added, the new value returned; v = 0 reads it */
static int32_t gf__atomic_count(int32_t *p, int32_t v)
{
#if defined(__GNUC__) || defined(__clang__)
    return v ? __atomic_add_fetch(p, v, __ATOMIC_ACQ_REL) : __atomic_load_n(p, __ATOMIC_ACQUIRE);
#else
    return *p += v;
#endif
}
#endif

/* ---- paths: files, directory trees, globs ---- */

/* A list of file names; root[i]: the length of the part of name i above
   the tree it was found in (the directory or the glob's fixed part, and
   its '/'): key=value segments below it are partition columns. */
typedef struct gf__strv {
    char **v;
    int32_t *root;
    int32_t n, cap;
} gf__strv;
static int gf__strv_push(gf__arena *ar, gf__strv *sv, const char *s, size_t root)
{
    if (sv->n == sv->cap) {
        int32_t nc = sv->cap ? sv->cap * 2 : 16;
        char **nv = (char **)gf__arena_get(ar, (size_t)nc * sizeof(char *));
        int32_t *nr = (int32_t *)gf__arena_get(ar, (size_t)nc * sizeof(int32_t));
        if (!nv || !nr || nc < sv->cap) return 0;
        if (sv->n) {
            memcpy(nv, sv->v, (size_t)sv->n * sizeof(char *));
            memcpy(nr, sv->root, (size_t)sv->n * sizeof(int32_t));
        }
        sv->v = nv; sv->root = nr; sv->cap = nc;
    }
    sv->v[sv->n] = gf__arena_str(ar, (const uint8_t *)s, strlen(s));
    sv->root[sv->n] = root > (size_t)INT32_MAX ? INT32_MAX : (int32_t)root;
    return sv->v[sv->n++] != NULL;
}
typedef struct gf__strv_sink { gf__arena *ar; gf__strv *sv; } gf__strv_sink; /* gf__remote_expand's output */
static int gf__strv_sink_push(void *u, const char *s, size_t root)
{
    return gf__strv_push(((gf__strv_sink *)u)->ar, ((gf__strv_sink *)u)->sv, s, root); /* key=value segments below root: partitions */
}

#ifndef GPUFEED_NO_STDIO
#include <fnmatch.h>
static int gf__is_glob(const char *s) { return strpbrk(s, "*?[") != NULL; }
static int gf__cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* Names a walk skips, as Spark and pyarrow do: hidden and bookkeeping
   files and directories (_SUCCESS, _committed_*, _temporary, _metadata,
   _common_metadata, .part-*.crc, .hive-staging*) */
static int gf__walk_skips(const char *name) { return name[0] == '_' || name[0] == '.'; }

/* A file a walk takes: *.parquet (Spark's part-*.snappy.parquet),
   *.parq, *.pq, or a name without an extension (Hive's 000000_0) */
static int gf__walk_takes(const char *name)
{
    size_t n = strlen(name);
    const char *dot = strrchr(name, '.');
    if (!dot) return 1;
    return (n > 8 && !strcmp(name + n - 8, ".parquet")) || (n > 5 && !strcmp(name + n - 5, ".parq")) || (n > 3 && !strcmp(name + n - 3, ".pq"));
}

#define GF__WALK_DEPTH 64

typedef struct gf__walk {
    gf__arena *ar;
    gf__strv *out;
    size_t root;                       /* the tree's root length in every name */
    const char *const *pat;            /* a "**" glob's segments below the root (NULL: every file) */
    int32_t npat;
    gpufeed_error *err;
} gf__walk;

/* pattern segments pat[0..np) match the path segments seg[0..ns) ("**":
   any number of segments, each name matched by fnmatch) */
static int gf__glob_match(const char *const *pat, int32_t np, const char *const *seg, int32_t ns)
{
    if (np == 0) return ns == 0;
    if (!strcmp(pat[0], "**")) {
        int32_t k;
        for (k = 0; k <= ns; k++) if (gf__glob_match(pat + 1, np - 1, seg + k, ns - k)) return 1;
        return 0;
    }
    return ns > 0 && fnmatch(pat[0], seg[0], 0) == 0 && gf__glob_match(pat + 1, np - 1, seg + 1, ns - 1);
}

/* the file `path` (below the walk's root) against the walk's pattern */
static int gf__walk_matches(const gf__walk *w, const char *path)
{
    const char *seg[GF__WALK_DEPTH + 1];
    char buf[4096];
    int32_t ns = 0;
    char *p;
    if (!w->pat) return 1;
    if (strlen(path + w->root) >= sizeof buf) return 0;
    memcpy(buf, path + w->root, strlen(path + w->root) + 1);
    for (p = buf; p && ns <= GF__WALK_DEPTH; ) {
        char *sl = strchr(p, '/');
        if (sl) *sl = 0;
        seg[ns++] = p;
        p = sl ? sl + 1 : NULL;
    }
    return gf__glob_match(w->pat, w->npat, seg, ns);
}

/* Walks directory `dir` recursively, entries in sorted order, skipping
   hidden and bookkeeping names: its Parquet files (those matching the
   pattern) into the walk's list. */
static gpufeed_result gf__walk_dir(gf__walk *w, const char *dir, int depth)
{
    DIR *d;
    struct dirent *e;
    gf__strv names;
    gpufeed_result r = GPUFEED_OK;
    size_t dl = strlen(dir);
    int32_t k;
    if (depth > GF__WALK_DEPTH)
        return gf__seterr(w->err, GPUFEED_ERR_LIMIT, "dataset: '%s' is more than %d directories deep (a symbolic link loop?)", dir, GF__WALK_DEPTH);
    memset(&names, 0, sizeof names);
    d = opendir(dir);
    if (!d) {
        char why[160];
        gf__errno_text(errno, why, sizeof why);
        return gf__seterr(w->err, GPUFEED_ERR_IO, "dataset: cannot read directory '%s': %s", dir, why);
    }
    while ((e = readdir(d)) != NULL)
        if (!gf__walk_skips(e->d_name) && !gf__strv_push(w->ar, &names, e->d_name, 0)) {
            closedir(d);
            return gf__seterr(w->err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory");
        }
    closedir(d);
    if (names.n) qsort(names.v, (size_t)names.n, sizeof(char *), gf__cmp_str);
    for (k = 0; k < names.n && !r; k++) {
        size_t nl = strlen(names.v[k]);
        char *full = (char *)gf__arena_get(w->ar, dl + nl + 2);
        struct stat st;
        if (!full) return gf__seterr(w->err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory");
        memcpy(full, dir, dl);
        full[dl] = '/';
        memcpy(full + dl + 1, names.v[k], nl + 1);
        if (stat(full, &st) != 0) continue; /* gone meanwhile, or a dangling link */
        if (S_ISDIR(st.st_mode)) r = gf__walk_dir(w, full, depth + 1);
        else if (S_ISREG(st.st_mode) && gf__walk_takes(names.v[k]) && gf__walk_matches(w, full) && !gf__strv_push(w->ar, w->out, full, w->root))
            r = gf__seterr(w->err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory");
    }
    return r;
}

/* A directory argument: its tree. `dir` keeps its spelling; a trailing
   '/' is not doubled. */
static gpufeed_result gf__expand_dir(gf__arena *ar, const char *dir, gf__strv *out, gpufeed_error *err)
{
    gf__walk w;
    size_t dl = strlen(dir);
    char *base = (char *)gf__arena_get(ar, dl + 1);
    int32_t before = out->n;
    gpufeed_result r;
    if (!base) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory");
    memcpy(base, dir, dl + 1);
    while (dl > 1 && base[dl - 1] == '/') base[--dl] = 0;
    memset(&w, 0, sizeof w);
    w.ar = ar; w.out = out; w.root = dl + 1; w.err = err;
    r = gf__walk_dir(&w, base, 0);
    if (!r && out->n == before)
        r = gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "dataset: directory '%s' holds no Parquet file (*.parquet, *.parq, *.pq or a name without "
                       "an extension, in it or below it; names starting with '_' or '.' are skipped)", dir);
    return r;
}

/* A glob with "**" (any number of directories): the tree below its fixed
   part walked, each file matched against the rest, sorted. */
static gpufeed_result gf__expand_starstar(gf__arena *ar, const char *p, gf__strv *out, gpufeed_error *err)
{
    const char *seg[GF__WALK_DEPTH + 1];
    char *copy = gf__arena_str(ar, (const uint8_t *)p, strlen(p)), *q, *base;
    int32_t ns = 0, fixed = 0, k, before = out->n;
    size_t bl;
    gf__walk w;
    gpufeed_result r;
    if (!copy) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory");
    for (q = copy; q && ns <= GF__WALK_DEPTH; ) {
        char *sl = strchr(q, '/');
        if (sl) *sl = 0;
        if (*q || ns == 0) seg[ns++] = q; /* "a//b" is "a/b"; a leading '/' gives an empty first segment */
        q = sl ? sl + 1 : NULL;
    }
    while (fixed < ns && !gf__is_glob(seg[fixed])) fixed++;
    base = (char *)gf__arena_get(ar, strlen(p) + 2);
    if (!base) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory");
    base[0] = 0;
    for (k = 0; k < fixed; k++) { strcat(base, seg[k]); if (k + 1 < fixed || !seg[k][0]) strcat(base, "/"); }
    if (!fixed) strcpy(base, ".");
    bl = strlen(base);
    while (bl > 1 && base[bl - 1] == '/') base[--bl] = 0;
    memset(&w, 0, sizeof w);
    w.ar = ar; w.out = out; w.root = bl + 1; w.err = err;
    w.pat = seg + fixed; w.npat = ns - fixed;
    r = gf__walk_dir(&w, base, 0);
    if (!fixed && !r) /* "./" added to every name: take it off again */
        for (k = before; k < out->n; k++) { out->v[k] += 2; out->root[k] -= 2; }
    if (!r && out->n == before) r = gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "dataset: glob '%s' matches no file", p);
    return r;
}
#endif

/* Expands each path: a directory into the Parquet files of its tree, a
   glob into its matches (sorted; a matched directory walked in turn; "**"
   for any number of directories), anything else as given. */
static gpufeed_result gf__expand_paths(gf__arena *ar, const char *const *paths, int32_t n, gf__strv *out, gpufeed_error *err)
{
    int32_t i;
    for (i = 0; i < n; i++) {
        const char *p = paths[i];
#ifndef GPUFEED_NO_STDIO
        gpufeed_result r;
#endif
        if (!p || !*p) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "dataset: path %d is empty", i);
        if (gf__remote_is_url(p)) { /* s3:// prefixes, globs, objects; http(s):// URLs (>>remote) */
            gf__strv_sink k = { ar, out };
            gpufeed_result rr = gf__remote_expand(p, gf__strv_sink_push, &k, err);
            if (rr) return rr;
            continue;
        }
#ifndef GPUFEED_NO_STDIO
        if (gf__is_glob(p) && strstr(p, "**")) {
            r = gf__expand_starstar(ar, p, out, err);
            if (r) return r;
            continue;
        }
        if (gf__is_glob(p)) {
            glob_t g;
            size_t k, fl;
            const char *slash;
            int rc = glob(p, 0, NULL, &g);
            if (rc == GLOB_NOMATCH || (rc == 0 && g.gl_pathc == 0)) {
                if (rc == 0) globfree(&g);
                return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "dataset: glob '%s' matches no file", p);
            }
            if (rc != 0) return gf__seterr(err, GPUFEED_ERR_IO, "dataset: glob '%s' failed", p);
            slash = p; /* the fixed part: up to the last '/' before the first wildcard */
            for (fl = 0; p[fl] && !strchr("*?[", p[fl]); fl++) if (p[fl] == '/') slash = p + fl + 1;
            for (k = 0; k < g.gl_pathc; k++) { /* glob sorts */
                struct stat st;
                if (stat(g.gl_pathv[k], &st) == 0 && S_ISDIR(st.st_mode)) r = gf__expand_dir(ar, g.gl_pathv[k], out, err);
                else r = gf__strv_push(ar, out, g.gl_pathv[k], (size_t)(slash - p)) ? GPUFEED_OK
                         : gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory");
                if (r) { globfree(&g); return r; }
            }
            globfree(&g);
            continue;
        }
        {
            struct stat st;
            if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
                r = gf__expand_dir(ar, p, out, err);
                if (r) return r;
                continue;
            }
        }
#endif
        {   /* a file as given: no partition columns (its root is its directory) */
            const char *sl = strrchr(p, '/');
            if (!gf__strv_push(ar, out, p, sl ? (size_t)(sl - p + 1) : 0)) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory");
        }
    }
    if (out->n == 0) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "dataset: no files given");
    return GPUFEED_OK;
}

GPUFEED_API gpufeed_result gpufeed_expand_paths(const char *const *paths, int32_t num_paths,
    void (*fn)(void *user, const char *file), void *user, gpufeed_error *err)
{
    gpufeed_allocator al;
    gf__arena ar;
    gf__strv files;
    gpufeed_result r;
    int32_t i;
    if (err) { err->code = GPUFEED_OK; err->message[0] = 0; }
    if (!paths || num_paths <= 0 || !fn) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "gpufeed_expand_paths: no paths given");
    memset(&al, 0, sizeof al);
    memset(&files, 0, sizeof files);
    ar.a = &al;
    ar.head = NULL;
    r = gf__expand_paths(&ar, paths, num_paths, &files, err);
    for (i = 0; !r && i < files.n; i++) fn(user, files.v[i]);
    gf__arena_free(&ar);
    return r;
}

/* compares a column value (kind 0 int64, 1 uint64, 2 double; decimals as
   an unscaled int64 with `scale`) with a constant exactly: -1, 0, 1, or 2
   when incomparable (NaN) */
static int gf__cmp_num(int kind, int64_t iv, uint64_t uv, double dv, int32_t scale, const gpufeed_value *cv)
{
    if (kind == 0 && scale > 0) { /* decimal: scale the constant when exact */
        if (cv->kind == GPUFEED_VAL_INT && scale <= 18) {
            int64_t p = 1, c = cv->i;
            int32_t k;
            for (k = 0; k < scale; k++) p *= 10;
            if (c > INT64_MAX / p || c < INT64_MIN / p) return c > 0 ? -1 : 1;
            c *= p;
            return iv < c ? -1 : iv > c;
        }
        kind = 2; dv = gf__dec_to_double(iv, scale);
    }
    if (kind == 2 || cv->kind == GPUFEED_VAL_DOUBLE) {
        double y;
        if (kind == 2) {
            if (dv != dv) return 2;
            y = cv->kind == GPUFEED_VAL_DOUBLE ? cv->d : cv->kind == GPUFEED_VAL_UINT ? (double)cv->u : (double)cv->i;
            if (y != y) return 2;
            if (cv->kind != GPUFEED_VAL_DOUBLE && dv >= -9223372036854775808.0 && dv < 9223372036854775808.0 && (double)(int64_t)dv == dv) {
                /* integral double vs integer constant: compare as integers */
                int64_t x = (int64_t)dv;
                if (cv->kind == GPUFEED_VAL_UINT) return x < 0 ? -1 : (uint64_t)x < cv->u ? -1 : (uint64_t)x > cv->u;
                return x < cv->i ? -1 : x > cv->i;
            }
            return dv < y ? -1 : dv > y;
        }

        /* an integer column vs a double constant: exact */
        y = cv->d;
        if (y != y) return 2;
        if (kind == 1) {
            double fl;
            uint64_t yi;
            if (y < 0) return 1;
            if (y >= 18446744073709551616.0) return -1;
            yi = (uint64_t)y; fl = (double)yi;
            return uv < yi ? -1 : uv > yi ? 1 : (fl == y ? 0 : -1);
        } else {
            double fl;
            int64_t yi;
            if (y >= 9223372036854775808.0) return -1;
            if (y < -9223372036854775808.0) return 1;
            fl = y < 0 && (double)(int64_t)y != y ? (double)((int64_t)y - 1) : (double)(int64_t)y;
            yi = (int64_t)fl;
            return iv < yi ? -1 : iv > yi ? 1 : (fl == y ? 0 : -1);
        }
    }
    if (cv->kind == GPUFEED_VAL_UINT) {
        if (kind == 1) return uv < cv->u ? -1 : uv > cv->u;
        return iv < 0 ? -1 : (uint64_t)iv < cv->u ? -1 : (uint64_t)iv > cv->u;
    }
    if (kind == 1) return cv->i < 0 ? 1 : uv < (uint64_t)cv->i ? -1 : uv > (uint64_t)cv->i;
    return iv < cv->i ? -1 : iv > cv->i;
}

/* ---- partition columns: key=value directory segments ---- */

#ifndef GPUFEED_MAX_PARTITION_KEYS
#define GPUFEED_MAX_PARTITION_KEYS 64
#endif

#ifndef GPUFEED_CURL /* else >>remote's */
/* a hex digit's value, -1 if it is none */
static int gf__hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}
#endif

/* a partition value as Spark and Hive write it into a path: %XX escapes
   decoded in place; -1 on a broken escape */
static int gf__unescape(char *s)
{
    char *w = s;
    for (; *s; s++) {
        if (*s == '%') {
            int hi = s[1] ? gf__hexval(s[1]) : -1, lo = hi >= 0 && s[2] ? gf__hexval(s[2]) : -1;
            if (hi < 0 || lo < 0) return -1;
            *w++ = (char)(hi * 16 + lo);
            s += 2;
        } else *w++ = *s;
    }
    *w = 0;
    return 0;
}

/* an int64 spelled in full, no spaces */
static int gf__parse_i64(const char *s, int64_t *out)
{
    uint64_t v = 0, lim;
    int neg = *s == '-';
    if (neg || *s == '+') s++;
    if (!*s) return 0;
    lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (lim - (uint64_t)(*s - '0')) / 10) return 0;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 1;
}

/* key k's index, added when new; -1 past GPUFEED_MAX_PARTITION_KEYS */
static int32_t gf__part_key(gpufeed_dataset *ds, const char *key, size_t kl)
{
    int32_t k;
    for (k = 0; k < ds->nparts; k++) if (strlen(ds->part_key[k]) == kl && !memcmp(ds->part_key[k], key, kl)) return k;
    if (ds->nparts >= GPUFEED_MAX_PARTITION_KEYS) return -1;
    ds->part_key[ds->nparts] = gf__arena_str(&ds->arena, (const uint8_t *)key, kl);
    return ds->part_key[ds->nparts] ? ds->nparts++ : -2;
}

/* The partition columns of the files: each key=value directory segment
   below a file's tree root (the directory or the glob's fixed part) is a
   column `key` with that value (decoded; __HIVE_DEFAULT_PARTITION__ is
   null, so is a key another file has and this one lacks). A key's values
   are int64 when every one parses as such, else strings. */
static gpufeed_result gf__dataset_partitions(gpufeed_dataset *ds, const gf__strv *files, gpufeed_error *err)
{
    int32_t i, k;
    ds->part_key = (char **)gf__arena_get(&ds->arena, GPUFEED_MAX_PARTITION_KEYS * sizeof(char *));
    ds->part_val = (const char **)gf__arena_get(&ds->arena, (size_t)files->n * GPUFEED_MAX_PARTITION_KEYS * sizeof(char *));
    ds->part_int = (int *)gf__arena_get(&ds->arena, GPUFEED_MAX_PARTITION_KEYS * sizeof(int));
    if (!ds->part_key || !ds->part_val || !ds->part_int) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory");
    memset((void *)ds->part_val, 0, (size_t)files->n * GPUFEED_MAX_PARTITION_KEYS * sizeof(char *));
    for (i = 0; i < files->n; i++) {
        const char *s = files->v[i] + files->root[i], *last = strrchr(s, '/');
        while (last && s < last) {
            const char *e = strchr(s, '/'), *eq = (const char *)memchr(s, '=', (size_t)(e - s));
            if (eq && eq > s) {
                char *v = gf__arena_str(&ds->arena, (const uint8_t *)eq + 1, (size_t)(e - eq - 1));
                k = gf__part_key(ds, s, (size_t)(eq - s));
                if (k == -1)
                    return gf__seterr(err, GPUFEED_ERR_LIMIT, "%s: more than %d partition keys (key=value directories): the limit is "
                                      "GPUFEED_MAX_PARTITION_KEYS", files->v[i], (int)GPUFEED_MAX_PARTITION_KEYS);
                if (k < 0 || !v) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory");
                if (ds->part_val[(size_t)i * GPUFEED_MAX_PARTITION_KEYS + (size_t)k])
                    return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "%s: partition key '%s' appears twice in the path", files->v[i], ds->part_key[k]);
                if (gf__unescape(v))
                    return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "%s: partition '%s': a broken %%XX escape in its value", files->v[i], ds->part_key[k]);
                ds->part_val[(size_t)i * GPUFEED_MAX_PARTITION_KEYS + (size_t)k] = strcmp(v, "__HIVE_DEFAULT_PARTITION__") ? v : "";
            }
            s = e + 1;
        }
    }
    for (k = 0; k < ds->nparts; k++) {
        ds->part_int[k] = 1;
        for (i = 0; i < files->n && ds->part_int[k]; i++) {
            const char *v = ds->part_val[(size_t)i * GPUFEED_MAX_PARTITION_KEYS + (size_t)k];
            int64_t x;
            if (v && *v && !gf__parse_i64(v, &x)) ds->part_int[k] = 0;
        }
    }
    /* the null marker ("") back to NULL */
    for (i = 0; i < files->n; i++)
        for (k = 0; k < ds->nparts; k++)
            if (ds->part_val[(size_t)i * GPUFEED_MAX_PARTITION_KEYS + (size_t)k] && !*ds->part_val[(size_t)i * GPUFEED_MAX_PARTITION_KEYS + (size_t)k])
                ds->part_val[(size_t)i * GPUFEED_MAX_PARTITION_KEYS + (size_t)k] = NULL;
    return GPUFEED_OK;
}

/* the partition key named `name`, or -1 */
static int32_t gf__part_find(const gpufeed_dataset *ds, const char *name)
{
    int32_t k;
    for (k = 0; k < ds->nparts; k++) if (!strcmp(ds->part_key[k], name)) return k;
    return -1;
}

/* a partition value `v` (NULL: null) of key k against predicate p: 1 it
   matches, 0 it does not */
static int gf__part_match(const gpufeed_dataset *ds, int32_t k, const char *v, const gpufeed_predicate *p)
{
    int32_t j, nv;
    int64_t iv = 0;
    if (p->op == GPUFEED_OP_IS_NULL) return v == NULL;
    if (p->op == GPUFEED_OP_IS_NOT_NULL) return v != NULL;
    if (!v) return 0;
    if (ds->part_int[k]) gf__parse_i64(v, &iv);
    nv = p->op == GPUFEED_OP_IN ? p->set_size : p->op == GPUFEED_OP_BETWEEN ? 2 : 1;
    for (j = 0; j < nv; j++) {
        const gpufeed_value *c = p->op == GPUFEED_OP_IN ? &p->set[j] : j ? &p->b : &p->a;
        int cmp;
        if (ds->part_int[k]) cmp = gf__cmp_num(0, iv, 0, 0.0, 0, c);
        else {
            size_t vl = strlen(v), m = vl < c->len ? vl : c->len;
            cmp = m ? memcmp(v, c->s, m) : 0;
            cmp = cmp ? (cmp < 0 ? -1 : 1) : vl < c->len ? -1 : vl > c->len ? 1 : 0;
        }
        if (cmp == 2) return 0;
        switch (p->op) {
        case GPUFEED_OP_LT: return cmp < 0;
        case GPUFEED_OP_LE: return cmp <= 0;
        case GPUFEED_OP_EQ: return cmp == 0;
        case GPUFEED_OP_GE: return cmp >= 0;
        case GPUFEED_OP_GT: return cmp > 0;
        case GPUFEED_OP_BETWEEN: if (j == 0 ? cmp < 0 : cmp > 0) return 0; break;
        default: if (cmp == 0) return 1; break; /* IN */
        }
    }
    return p->op == GPUFEED_OP_BETWEEN;
}

/* Predicates on partition keys, before any footer is read: a file whose
   path values fail one is dropped from the list (its name, root and
   values with it). A constant must suit the key (a string for string
   values, a number for integer ones). When no file is left, the last
   stays, none of its rows read (all_pruned). */
static gpufeed_result gf__partition_prune(gpufeed_dataset *ds, gf__strv *files, gpufeed_error *err)
{
    int32_t i, j, w = 0;
    for (j = 0; j < ds->npred; j++) {
        const gpufeed_predicate *p = &ds->preds[j];
        int32_t k = gf__part_find(ds, p->column), v, nv;
        if (k < 0) continue;
        nv = p->op == GPUFEED_OP_IN ? p->set_size : p->op == GPUFEED_OP_BETWEEN ? 2 : (p->op <= GPUFEED_OP_GT ? 1 : 0);
        for (v = 0; v < nv; v++) {
            const gpufeed_value *c = p->op == GPUFEED_OP_IN ? &p->set[v] : v ? &p->b : &p->a;
            if ((c->kind == GPUFEED_VAL_STRING) == ds->part_int[k])
                return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "predicate on partition key '%s': a %s constant cannot compare with its %s values",
                                  p->column, c->kind == GPUFEED_VAL_STRING ? "string" : "numeric", ds->part_int[k] ? "integer" : "string");
        }
    }
    for (i = 0; i < files->n; i++) {
        int keep = 1;
        for (j = 0; j < ds->npred && keep; j++) {
            int32_t k = gf__part_find(ds, ds->preds[j].column);
            if (k >= 0) keep = gf__part_match(ds, k, ds->part_val[(size_t)i * GPUFEED_MAX_PARTITION_KEYS + (size_t)k], &ds->preds[j]);
        }
        if (!keep && !(i == files->n - 1 && w == 0)) continue;
        if (!keep) ds->all_pruned = 1;
        files->v[w] = files->v[i];
        files->root[w] = files->root[i];
        if (w != i)
            memcpy((void *)&ds->part_val[(size_t)w * GPUFEED_MAX_PARTITION_KEYS], &ds->part_val[(size_t)i * GPUFEED_MAX_PARTITION_KEYS],
                   GPUFEED_MAX_PARTITION_KEYS * sizeof(char *));
        w++;
    }
    files->n = w;
    return GPUFEED_OK;
}

/* ---- predicates as text (gpufeed_where_parse) ---- */

struct gpufeed_where {
    gpufeed_allocator alloc;
    gf__arena arena;
    gpufeed_predicate *p;
    int32_t n, cap;
};

typedef struct gf__lex {
    const char *src, *p;
    int kind;                          /* 0 end, 1 word or number, 2 string, 3 symbol */
    const char *t;                     /* the token's text (strings: without quotes) ... */
    size_t len;                        /* ... and its length */
    size_t at;                         /* where it starts in src */
} gf__lex;

static int gf__lex_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

/* the next token; -1 on an unterminated string */
static int gf__lex_next(gf__lex *lx)
{
    const char *p = lx->p;
    while (*p && gf__lex_space(*p)) p++;
    lx->at = (size_t)(p - lx->src);
    lx->t = p;
    lx->len = 0;
    if (!*p) { lx->kind = 0; lx->p = p; return 0; }
    if (*p == '\'' || *p == '"') {
        const char q = *p++, *e = strchr(p, q);
        if (!e) return -1;
        lx->kind = 2; lx->t = p; lx->len = (size_t)(e - p);
        lx->p = e + 1;
        return 0;
    }
    if (strchr("<>=!(),", *p)) {
        lx->kind = 3;
        lx->len = (p[1] == '=' && strchr("<>=!", *p)) ? 2 : 1;
        lx->p = p + lx->len;
        return 0;
    }
    lx->kind = 1;
    while (*p && !gf__lex_space(*p) && !strchr("<>=!(),'\"", *p)) p++;
    lx->len = (size_t)(p - lx->t);
    lx->p = p;
    return 0;
}
static int gf__lex_is(const gf__lex *lx, const char *w)
{
    size_t i, n = strlen(w);
    if (lx->kind != 1 || lx->len != n) return 0;
    for (i = 0; i < n; i++) if ((lx->t[i] | 0x20) != w[i]) return 0; /* ASCII, either case */
    return 1;
}

/* a number or a string into *v (strings and the unit into the arena / *unit) */
static int gf__where_value(gpufeed_where *w, gf__lex *lx, gpufeed_value *v, int32_t *unit, char *msg, size_t cap)
{
    char buf[64];
    size_t n = lx->len;
    memset(v, 0, sizeof *v);
    if (lx->kind == 2) {
        char *s = gf__arena_str(&w->arena, (const uint8_t *)lx->t, lx->len);
        if (!s) { gf__fmt(msg, cap, "out of memory"); return -1; }
        v->kind = GPUFEED_VAL_STRING; v->s = s; v->len = lx->len;
        return 0;
    }
    if (lx->kind != 1 || n >= sizeof buf) { gf__fmt(msg, cap, "expected a value at offset %zu", lx->at); return -1; }
    memcpy(buf, lx->t, n);
    buf[n] = 0;
    if (n > 1 && (buf[n - 1] == 's')) { /* a time: 10s, 10ms, 10us, 10ns */
        int32_t u = GPUFEED_UNIT_SECONDS;
        size_t cut = 1;
        if (n > 2 && buf[n - 2] == 'm') { u = GPUFEED_UNIT_MILLIS; cut = 2; }
        else if (n > 2 && buf[n - 2] == 'u') { u = GPUFEED_UNIT_MICROS; cut = 2; }
        else if (n > 2 && buf[n - 2] == 'n') { u = GPUFEED_UNIT_NANOS; cut = 2; }
        buf[n - cut] = 0;
        if (!gf__parse_i64(buf, &v->i)) {
            gf__fmt(msg, cap, "'%.*s' at offset %zu: a time is an integer then s, ms, us or ns", (int)n, lx->t, lx->at);
            return -1;
        }
        if (*unit && *unit != u) { gf__fmt(msg, cap, "'%.*s' at offset %zu: one unit a condition", (int)n, lx->t, lx->at); return -1; }
        *unit = u;
        v->kind = GPUFEED_VAL_INT;
        return 0;
    }
    if (gf__parse_i64(buf, &v->i)) { v->kind = GPUFEED_VAL_INT; return 0; }
    {
        uint64_t u;
        if (gf__parse_u64(buf, n, &u) == 0) { v->kind = GPUFEED_VAL_UINT; v->u = u; return 0; } /* above INT64_MAX; past 2^64 - 1: a double below */
    }
    {
        char *e;
        v->d = strtod(buf, &e);
        if (*e || !*buf) { gf__fmt(msg, cap, "'%s' at offset %zu is not a number (quote strings)", buf, lx->at); return -1; }
        v->kind = GPUFEED_VAL_DOUBLE;
    }
    return 0;
}

/* one condition's operator and values */
static int gf__where_op(gpufeed_where *w, gf__lex *lx, gpufeed_predicate *p, char *msg, size_t cap)
{
    if (lx->kind == 3 && lx->t[0] != '(' && lx->t[0] != ')' && lx->t[0] != ',') {
        static const char *const ops[] = { "<", "<=", "==", ">=", ">", "=" };
        static const gpufeed_op codes[] = { GPUFEED_OP_LT, GPUFEED_OP_LE, GPUFEED_OP_EQ, GPUFEED_OP_GE, GPUFEED_OP_GT, GPUFEED_OP_EQ };
        int k;
        for (k = 0; k < 6 && !(strlen(ops[k]) == lx->len && !memcmp(ops[k], lx->t, lx->len)); k++) {}
        if (k == 6) { gf__fmt(msg, cap, "unknown operator '%.*s' at offset %zu", (int)lx->len, lx->t, lx->at); return -1; }
        p->op = codes[k];
        if (gf__lex_next(lx) || gf__where_value(w, lx, &p->a, &p->unit, msg, cap)) return -1;
        return gf__lex_next(lx);
    }
    if (gf__lex_is(lx, "between")) {
        p->op = GPUFEED_OP_BETWEEN;
        if (gf__lex_next(lx) || gf__where_value(w, lx, &p->a, &p->unit, msg, cap) || gf__lex_next(lx)) return -1;
        if (!gf__lex_is(lx, "and")) { gf__fmt(msg, cap, "between needs 'and' at offset %zu", lx->at); return -1; }
        if (gf__lex_next(lx) || gf__where_value(w, lx, &p->b, &p->unit, msg, cap)) return -1;
        return gf__lex_next(lx);
    }
    if (gf__lex_is(lx, "in")) {
        gpufeed_value *set = NULL;
        int32_t n = 0, cap_n = 0;
        p->op = GPUFEED_OP_IN;
        if (gf__lex_next(lx) || lx->kind != 3 || lx->t[0] != '(') { gf__fmt(msg, cap, "in needs '(' at offset %zu", lx->at); return -1; }
        do {
            if (n == cap_n) { /* grown in the arena (the old array stays there until free) */
                gpufeed_value *ns = (gpufeed_value *)gf__arena_get(&w->arena, (size_t)(cap_n ? cap_n * 2 : 16) * sizeof *ns);
                if (!ns || cap_n > INT32_MAX / 4) { gf__fmt(msg, cap, "out of memory"); return -1; }
                if (n) memcpy(ns, set, (size_t)n * sizeof *ns);
                set = ns;
                cap_n = cap_n ? cap_n * 2 : 16;
            }
            if (gf__lex_next(lx) || gf__where_value(w, lx, &set[n++], &p->unit, msg, cap) || gf__lex_next(lx)) return -1;
        } while (lx->kind == 3 && lx->t[0] == ',');
        if (lx->kind != 3 || lx->t[0] != ')') { gf__fmt(msg, cap, "in (...) needs ',' or ')' at offset %zu", lx->at); return -1; }
        p->set = set;
        p->set_size = n;
        return gf__lex_next(lx);
    }
    if (gf__lex_is(lx, "is")) {
        if (gf__lex_next(lx)) return -1;
        p->op = GPUFEED_OP_IS_NULL;
        if (gf__lex_is(lx, "not")) { p->op = GPUFEED_OP_IS_NOT_NULL; if (gf__lex_next(lx)) return -1; }
        if (!gf__lex_is(lx, "null")) { gf__fmt(msg, cap, "expected 'null' at offset %zu", lx->at); return -1; }
        return gf__lex_next(lx);
    }
    gf__fmt(msg, cap, "expected an operator at offset %zu", lx->at);
    return -1;
}

/* the conditions of expr into w; -1 with a message */
static int gf__where_conditions(gpufeed_where *w, const char *expr, char *msg, size_t cap)
{
    gf__lex lx;
    memset(&lx, 0, sizeof lx);
    lx.src = lx.p = expr;
    if (gf__lex_next(&lx)) { gf__fmt(msg, cap, "an unterminated string at offset %zu", lx.at); return -1; }
    for (;;) {
        gpufeed_predicate *p;
        if (w->n == w->cap) {
            int32_t nc = w->cap ? w->cap * 2 : 8;
            gpufeed_predicate *np = (gpufeed_predicate *)gf__arena_get(&w->arena, (size_t)nc * sizeof *np);
            if (!np) { gf__fmt(msg, cap, "out of memory"); return -1; }
            if (w->n) memcpy(np, w->p, (size_t)w->n * sizeof *np);
            w->p = np; w->cap = nc;
        }
        p = &w->p[w->n++];
        memset(p, 0, sizeof *p);
        if (lx.kind != 1 && lx.kind != 2) { gf__fmt(msg, cap, "expected a column name at offset %zu", lx.at); return -1; }
        p->column = gf__arena_str(&w->arena, (const uint8_t *)lx.t, lx.len);
        if (!p->column) { gf__fmt(msg, cap, "out of memory"); return -1; }
        if (gf__lex_next(&lx) || gf__where_op(w, &lx, p, msg, cap)) {
            if (!msg[0]) gf__fmt(msg, cap, "an unterminated string at offset %zu", lx.at);
            return -1;
        }
        if (lx.kind == 0) return 0;
        if (!gf__lex_is(&lx, "and") && !(lx.kind == 1 && lx.len == 2 && !memcmp(lx.t, "&&", 2))) {
            gf__fmt(msg, cap, "unexpected '%.*s' at offset %zu (join conditions with 'and')", (int)(lx.len < 40 ? lx.len : 40), lx.t, lx.at);
            return -1;
        }
        if (gf__lex_next(&lx)) { gf__fmt(msg, cap, "an unterminated string at offset %zu", lx.at); return -1; }
    }
}

GPUFEED_API gpufeed_result gpufeed_where_parse(gpufeed_where **out, const char *expr, gpufeed_error *err)
{
    gpufeed_allocator none;
    gpufeed_where *w;
    char msg[GPUFEED_ERROR_MAX];
    if (err) { err->code = GPUFEED_OK; err->message[0] = 0; }
    if (!out) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "gpufeed_where_parse: out is NULL");
    *out = NULL;
    if (!expr) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "gpufeed_where_parse: no expression");
    memset(&none, 0, sizeof none);
    w = (gpufeed_where *)gf__alloc(&none, sizeof *w);
    if (!w) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "where: out of memory");
    memset(w, 0, sizeof *w);
    w->arena.a = &w->alloc;
    msg[0] = 0;
    if (gf__where_conditions(w, expr, msg, sizeof msg)) {
        gpufeed_where_free(w);
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "where '%.200s': %s", expr, msg);
    }
    *out = w;
    return GPUFEED_OK;
}
GPUFEED_API const gpufeed_predicate *gpufeed_where_predicates(const gpufeed_where *w, int32_t *count)
{
    if (count) *count = w ? w->n : 0;
    return w ? w->p : NULL;
}
GPUFEED_API void gpufeed_where_free(gpufeed_where *w)
{
    gpufeed_allocator a;
    if (!w) return;
    a = w->alloc;
    gf__arena_free(&w->arena);
    gf__free(&a, w);
}

/* numeric or boolean leaf (the default feature set) */
static int gf__is_default_feature(const gpufeed_schema_node *n)
{
    if (n->max_rep > 0) return 0;
    switch (n->physical) {
    case GPUFEED_BOOLEAN: case GPUFEED_FLOAT: case GPUFEED_DOUBLE:
        return n->logical == GPUFEED_LT_NONE || n->logical == GPUFEED_LT_OTHER;
    case GPUFEED_INT32: case GPUFEED_INT64:
        return n->logical == GPUFEED_LT_NONE || n->logical == GPUFEED_LT_INTEGER || n->logical == GPUFEED_LT_OTHER;
    case GPUFEED_FIXED_LEN_BYTE_ARRAY: return n->logical == GPUFEED_LT_FLOAT16;
    default: return 0;
    }
}

/* how a column converts; 0 on success, else a message in msg */
static int gf__bind_column(const gpufeed_file *f, int32_t col, const gpufeed_feature *ft, int for_pred, gf__bind *b, char *msg, size_t cap)
{
    const gpufeed_column_info *ci = &f->md.columns[col];
    const gpufeed_schema_node *n = &f->md.nodes[ci->node];
    memset(b, 0, sizeof *b);
    b->col = col;
    b->pfix = -1;
    if (ci->max_rep > 0) {
        if (for_pred) { gf__fmt(msg, cap, "column '%s' is a list or map: predicates on list columns are not supported", ci->path); return -1; }
        if (ci->max_rep > 1) {
            gf__fmt(msg, cap, "column '%s' has %d repeated levels (a list of lists, or a list or map inside a list): list features need exactly one",
                    ci->path, ci->max_rep);
            return -1;
        }
        if (ft && !ft->width && !ft->list_lengths) {
            gf__fmt(msg, cap,
                    "column '%s' is a list: set the feature's width (elements per row; pyarrow writes fixed_size_list as a plain list, so the width is not "
                    "in the file)", ci->path);
            return -1;
        }
        b->list = 1;
    } else if (ft && (ft->width || ft->list_lengths)) {
        gf__fmt(msg, cap, "column '%s' is not a list: %s applies to list columns only", ci->path, ft->width ? "a width" : "list_lengths");
        return -1;
    }
    b->conv.ck = GF__CK_I64;
    if (ft && ft->list_lengths) { /* lengths: counts, whatever the element type */
        b->conv.dt = ft->dtype; b->conv.unsafe_cast = ft->cast == GPUFEED_CAST_UNSAFE;
        return 0;
    }
    if (ft) {
        b->conv.dt = ft->dtype;
        b->conv.unsafe_cast = ft->cast == GPUFEED_CAST_UNSAFE;
        b->conv.buckets = ft->hash_buckets;
    }
    switch (n->physical) {
    case GPUFEED_BOOLEAN: break;
    case GPUFEED_INT32:
        if (n->logical == GPUFEED_LT_INTEGER && !n->int_signed) b->uint32_src = 1;
        if (n->logical == GPUFEED_LT_DECIMAL) b->conv.scale = n->scale;
        break;
    case GPUFEED_INT64:
        if (n->logical == GPUFEED_LT_INTEGER && !n->int_signed) b->conv.ck = GF__CK_U64;
        if (n->logical == GPUFEED_LT_DECIMAL) b->conv.scale = n->scale;
        break;
    case GPUFEED_INT96: break;
    case GPUFEED_FLOAT: case GPUFEED_DOUBLE: b->conv.ck = GF__CK_F64; break;
    case GPUFEED_BYTE_ARRAY: case GPUFEED_FIXED_LEN_BYTE_ARRAY:
        if (n->logical == GPUFEED_LT_FLOAT16 && n->physical == GPUFEED_FIXED_LEN_BYTE_ARRAY) {
            b->f16 = 1;
            b->conv.ck = GF__CK_F64;
            break;
        }
        if (n->logical == GPUFEED_LT_DECIMAL && !(ft && ft->hash_buckets)) {
            b->decimal_bytes = 1; b->conv.scale = n->scale;
            if (ft && n->precision > 18 && (ft->dtype == GPUFEED_DT_F32 || ft->dtype == GPUFEED_DT_F64 || ft->dtype == GPUFEED_DT_F16
                                            || ft->dtype == GPUFEED_DT_BF16)) {
                /* wider than 64 bits: to floats through a double */
                b->conv.ck = GF__CK_F64;
                b->dec_scale = n->scale;
                b->conv.scale = 0;
            } else if (ft && n->precision > 18) {
                b->dec_int = 1;
                b->dec_scale = n->scale;
                b->conv.scale = 0;
            }
            break;
        }
        if (for_pred) { b->conv.ck = GF__CK_HASH; break; } /* compared as bytes */
        if (!ft || !ft->hash_buckets) {
            gf__fmt(msg, cap, "column '%s' is %s%s%s and cannot convert to %s: set hash_buckets to hash its values",
                    ci->path, gpufeed_physical_type_name(n->physical), n->logical ? " " : "",
                    n->logical ? gpufeed_logical_type_name(n->logical) : "", ft ? gpufeed_dtype_name(ft->dtype) : "?");
            return -1;
        }
        b->conv.ck = GF__CK_HASH;
        break;
    default: gf__fmt(msg, cap, "column '%s' has no values", ci->path); return -1;
    }
    if (ft && ft->hash_buckets && b->conv.ck != GF__CK_HASH) {
        if (n->physical == GPUFEED_FLOAT || n->physical == GPUFEED_DOUBLE || b->f16 || b->dec_scale) {
            gf__fmt(msg, cap, "column '%s' holds floating-point values: hash_buckets applies to byte and integer columns", ci->path);
            return -1;
        }
        b->conv.ck = GF__CK_HASH; /* an integer ID: its int64 value hashed (gf__hash_ints) */
        b->conv.scale = 0;        /* a decimal's unscaled integer */
    }
    if (b->conv.scale < 0) b->conv.scale = 0;
    return 0;
}

/* ---- statistics: pruning row groups by predicates ---- */

/* A statistics bound as a comparable value. kind: 0 signed int, 1 unsigned
   int, 2 double, 3 bytes; returns 0 when the bound cannot be used. */
typedef struct gf__sv {
    int kind;
    int64_t i;
    uint64_t u;
    double d;
    const uint8_t *p;
    uint32_t len;
} gf__sv;

static int gf__stat_value(const gpufeed_schema_node *n, const gpufeed_statistics *s, int want_max, gf__sv *v)
{
    const uint8_t *p; uint32_t len;
    int legacy = 0;
    if (want_max ? s->has_max_value : s->has_min_value) {
        p = want_max ? s->max_value : s->min_value; len = want_max ? s->max_value_len : s->min_value_len;
    } else if (want_max ? s->has_max_legacy : s->has_min_legacy) {
        p = want_max ? s->max_legacy : s->min_legacy; len = want_max ? s->max_legacy_len : s->min_legacy_len;
        legacy = 1;
    } else return 0;
    memset(v, 0, sizeof *v);
    switch (n->physical) {
    case GPUFEED_BOOLEAN:
        if (len < 1) return 0;
        v->kind = 0;
        v->i = p[0] != 0;
        return 1;
    case GPUFEED_INT32: {
        int32_t x;
        if (len != 4 || n->logical == GPUFEED_LT_DECIMAL) return 0;
        memcpy(&x, p, 4);
        if (n->logical == GPUFEED_LT_INTEGER && !n->int_signed) {
            if (legacy) return 0;
            v->kind = 1;
            v->u = (uint32_t)x;
        }
        else { v->kind = 0; v->i = x; }
        return 1;
    }
    case GPUFEED_INT64: {
        int64_t x;
        if (len != 8 || n->logical == GPUFEED_LT_DECIMAL) return 0;
        memcpy(&x, p, 8);
        if (n->logical == GPUFEED_LT_INTEGER && !n->int_signed) {
            if (legacy) return 0;
            v->kind = 1;
            v->u = (uint64_t)x;
        }
        else { v->kind = 0; v->i = x; }
        return 1;
    }
    case GPUFEED_FLOAT:
        {
            float x;
            if (len != 4) return 0;
            memcpy(&x, p, 4);
            if (x != x) return 0;
            v->kind = 2;
            v->d = x;
            return 1;
        }
    case GPUFEED_DOUBLE:
        {
            double x;
            if (len != 8) return 0;
            memcpy(&x, p, 8);
            if (x != x) return 0;
            v->kind = 2;
            v->d = x;
            return 1;
        }
    case GPUFEED_BYTE_ARRAY:
        if (legacy || n->logical == GPUFEED_LT_DECIMAL) return 0; /* legacy byte order was signed */
        v->kind = 3;
        v->p = p;
        v->len = len;
        return 1;
    default: return 0;
    }
}

/* compare a statistic with a constant: <0, 0, >0; 2 = incomparable */
static int gf__cmp_sv(const gf__sv *a, const gpufeed_value *c)
{
    if (a->kind == 3) {
        uint32_t m;
        int r;
        if (c->kind != GPUFEED_VAL_STRING) return 2;
        m = a->len < c->len ? a->len : (uint32_t)c->len;
        r = m ? memcmp(a->p, c->s, m) : 0;
        if (r) return r < 0 ? -1 : 1;
        return a->len < c->len ? -1 : a->len > c->len ? 1 : 0;
    }
    if (c->kind == GPUFEED_VAL_STRING) return 2;
    if (c->kind == GPUFEED_VAL_DOUBLE) {
        double x = a->kind == 0 ? (double)a->i : a->kind == 1 ? (double)a->u : a->d;
        if (c->d != c->d) return 2;

        /* exactness: an integer statistic vs a double constant */
        if (a->kind == 0 && (a->i > (1ll << 53) || a->i < -(1ll << 53))) return 2;
        if (a->kind == 1 && a->u > (1ull << 53)) return 2;
        return x < c->d ? -1 : x > c->d ? 1 : 0;
    }
    if (c->kind == GPUFEED_VAL_UINT) {
        if (a->kind == 0) return a->i < 0 ? -1 : (uint64_t)a->i < c->u ? -1 : (uint64_t)a->i > c->u ? 1 : 0;
        if (a->kind == 1) return a->u < c->u ? -1 : a->u > c->u ? 1 : 0;
        return 2;
    }

    /* integer constant */
    if (a->kind == 0) return a->i < c->i ? -1 : a->i > c->i ? 1 : 0;
    if (a->kind == 1) { if (c->i < 0) return 1; return a->u < (uint64_t)c->i ? -1 : a->u > (uint64_t)c->i ? 1 : 0; }
    if (c->i > (1ll << 53) || c->i < -(1ll << 53)) return 2;
    return a->d < (double)c->i ? -1 : a->d > (double)c->i ? 1 : 0;
}

/* 1 when the statistics prove that no row of the chunk can match */
static int gf__prune(const gpufeed_schema_node *n, const gpufeed_chunk_info *ch, int64_t rows, const gpufeed_predicate *p)
{
    const gpufeed_statistics *s = &ch->statistics;
    gf__sv mn, mx;
    int hmn, hmx, c1, c2;
    int32_t k;
    if (!ch->has_statistics) return 0;
    if (p->op == GPUFEED_OP_IS_NULL) return s->has_null_count && s->null_count == 0;
    if (s->has_null_count && s->null_count >= rows && rows > 0) return 1; /* all null: no comparison matches */
    if (p->op == GPUFEED_OP_IS_NOT_NULL) return 0;
    hmn = gf__stat_value(n, s, 0, &mn);
    hmx = gf__stat_value(n, s, 1, &mx);
    switch (p->op) {
    case GPUFEED_OP_LT: return hmn && (c1 = gf__cmp_sv(&mn, &p->a)) != 2 && c1 >= 0;
    case GPUFEED_OP_LE: return hmn && (c1 = gf__cmp_sv(&mn, &p->a)) != 2 && c1 > 0;
    case GPUFEED_OP_GT: return hmx && (c1 = gf__cmp_sv(&mx, &p->a)) != 2 && c1 <= 0;
    case GPUFEED_OP_GE: return hmx && (c1 = gf__cmp_sv(&mx, &p->a)) != 2 && c1 < 0;
    case GPUFEED_OP_EQ:
        return (hmn && (c1 = gf__cmp_sv(&mn, &p->a)) != 2 && c1 > 0) || (hmx && (c2 = gf__cmp_sv(&mx, &p->a)) != 2 && c2 < 0);
    case GPUFEED_OP_BETWEEN:
        return (hmx && (c1 = gf__cmp_sv(&mx, &p->a)) != 2 && c1 < 0) || (hmn && (c2 = gf__cmp_sv(&mn, &p->b)) != 2 && c2 > 0);
    case GPUFEED_OP_IN:
        for (k = 0; k < p->set_size; k++) {
            int out = (hmn && (c1 = gf__cmp_sv(&mn, &p->set[k])) != 2 && c1 > 0) || (hmx && (c2 = gf__cmp_sv(&mx, &p->set[k])) != 2 && c2 < 0);
            if (!out) return 0;
        }
        return 1;
    default: return 0;
    }
}

/* >>pageindex ------------------------------------------------------------ */
/* The page index (OffsetIndex) of a chunk, or its page walk when it has
   none: where each data page's rows start, to split a row group into
   units and to position a reader at a unit's first row. */

/* OffsetIndex { 1: list<PageLocation{1: offset i64, 2: compressed_page_size i32, 3: first_row_index i64}> } */
static int gf__read_offset_index(gpufeed_dataset *ds, gpufeed_file *f, const gpufeed_chunk_info *ch, gf__pidx *pi)
{
    uint8_t *buf;
    gf__tc t;
    int id = 0, last = 0, ft, ok = 0, dict;
    uint64_t off = (uint64_t)ch->offset_index_offset, len = (uint64_t)(uint32_t)ch->offset_index_length;
    if (ch->offset_index_offset < 0 || ch->offset_index_length <= 0 || off > f->size || len > f->size - off || len > GPUFEED_MAX_FOOTER_SIZE) return 0;
    buf = (uint8_t *)gf__alloc(&ds->alloc, (size_t)len);
    if (!buf) return 0;
    if (f->src.read_at(f->src.ctx, off, buf, (size_t)len)) { gf__free(&ds->alloc, buf); return 0; }
    gf__atomic_add(&ds->bytes_read, len);
    dict = ch->dictionary_page_offset > 0 && ch->dictionary_page_offset < ch->data_page_offset;
    gf__tc_init(&t, buf, (size_t)len, off, "OffsetIndex");
    while ((ft = gf__tc_field(&t, &id, &last)) > 0) {
        if (id == 1) {
            uint32_t n, i;
            gf__tc_list(&t, id, ft, GF__T_STRUCT, &n);
            if (t.err) break;
            pi->first_row = (int64_t *)gf__arena_get(&ds->arena, (size_t)(n ? n : 1) * 8);
            pi->offset = (uint64_t *)gf__arena_get(&ds->arena, (size_t)(n ? n : 1) * 8);
            pi->ordinal = (int32_t *)gf__arena_get(&ds->arena, (size_t)(n ? n : 1) * 4);
            if (!pi->first_row || !pi->offset || !pi->ordinal) break;
            for (i = 0; i < n && !t.err; i++) {
                int iid = 0, ilast = 0, ift;
                t.depth++;
                while ((ift = gf__tc_field(&t, &iid, &ilast)) > 0) {
                    if (iid == 1) pi->offset[i] = (uint64_t)GF__I64(&t, iid, ift);
                    else if (iid == 3) pi->first_row[i] = GF__I64(&t, iid, ift);
                    else gf__tc_skip(&t, ift, 0);
                }
                t.depth--;
                pi->ordinal[i] = (int32_t)i + dict;
            }
            pi->n = n;
            ok = !t.err;
        } else gf__tc_skip(&t, ft, 0);
    }
    gf__free(&ds->alloc, buf);
    if (t.err) ok = 0;

    /* sanity: increasing rows starting at 0, offsets inside the data */
    if (ok) {
        int64_t i;
        if (pi->n == 0 || pi->first_row[0] != 0) ok = 0;
        for (i = 0; ok && i < pi->n; i++) {
            if (pi->offset[i] < 4 || pi->offset[i] >= f->data_end) ok = 0;
            if (i && pi->first_row[i] <= pi->first_row[i - 1]) ok = 0;
        }
    }
    return ok;
}


static int gf__cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* bytes of the page of a chunk that straddles row r (0 when r starts a page) */
static uint64_t gf__straddle_bytes(const gf__pidx *pi, const gpufeed_file *f, int32_t rg, int32_t col, int64_t r)
{
    int64_t lo = 0, hi = pi->n - 1;
    uint64_t end;
    if (pi->n == 0) return 0;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        if (pi->first_row[mid] <= r) lo = mid; else hi = mid - 1;
    }
    if (pi->first_row[lo] == r) return 0;
    if (lo + 1 < pi->n) end = pi->offset[lo + 1];
    else {
        const gpufeed_chunk_info *ch = &f->md.row_groups[rg].chunks[col];
        end = gf__chunk_start(ch) + (uint64_t)ch->total_compressed_size;
    }
    return end > pi->offset[lo] ? end - pi->offset[lo] : 1;
}

static gpufeed_result gf__page_index(gpufeed_dataset *ds, int32_t file, int32_t rg, int32_t col, gf__pidx *pi, gpufeed_error *err)
{
    gpufeed_file *f = ds->files[file];
    const gpufeed_chunk_info *ch = &f->md.row_groups[rg].chunks[col];
    gpufeed_page_info *pages;
    int64_t n = 0, i, k, o = 0;
    gpufeed_result r;
    const int nested = f->md.columns[col].max_rep > 0;
    gf__pidx oi;
    int have_oi = 0;
    memset(pi, 0, sizeof *pi);
    memset(&oi, 0, sizeof oi);

    /* flat: the offset index has everything. Nested leaves: a page's first
       row is known from the offset index only (v1 pages may split rows, and
       v2 num_rows was written wrong by old writers), its first level entry
       from the page headers. */
    if (gf__read_offset_index(ds, f, ch, nested ? &oi : pi)) {
        if (!nested) return GPUFEED_OK;
        have_oi = 1;
    }
    memset(pi, 0, sizeof *pi);
    r = gpufeed_chunk_pages(f, rg, col, NULL, 0, &n, err);
    if (r) return r;
    pages = (gpufeed_page_info *)gf__alloc(&ds->alloc, (size_t)(n ? n : 1) * sizeof *pages);
    if (!pages) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "%s: out of memory", f->name);
    r = gpufeed_chunk_pages(f, rg, col, pages, n, &n, err);
    if (r) { gf__free(&ds->alloc, pages); return r; }
    pi->first_row = (int64_t *)gf__arena_get(&ds->arena, (size_t)(n ? n : 1) * 8);
    pi->offset = (uint64_t *)gf__arena_get(&ds->arena, (size_t)(n ? n : 1) * 8);
    pi->ordinal = (int32_t *)gf__arena_get(&ds->arena, (size_t)(n ? n : 1) * 4);
    if (nested) pi->first_value = (int64_t *)gf__arena_get(&ds->arena, (size_t)(n ? n : 1) * 8);
    if (!pi->first_row || !pi->offset || !pi->ordinal || (nested && !pi->first_value)) {
        gf__free(&ds->alloc, pages);
        return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "%s: out of memory", f->name);
    }
    for (i = 0, k = 0; i < n; i++) {
        int64_t row = pages[i].first_value;
        if ((pages[i].type != GF__PAGE_DATA && pages[i].type != GF__PAGE_DATA_V2) || pages[i].num_values <= 0) continue;
        if (nested) {
            if (k == 0) row = 0; /* the chunk's first data page */
            else {
                row = -1;
                while (have_oi && o < oi.n && oi.offset[o] < (uint64_t)pages[i].offset) o++;
                if (have_oi && o < oi.n && oi.offset[o] == (uint64_t)pages[i].offset) row = oi.first_row[o];
                if (row <= pi->first_row[k - 1]) continue; /* unknown (or not increasing): no seek to this page */
            }
            pi->first_value[k] = pages[i].first_value;
        }
        pi->first_row[k] = row;
        pi->offset[k] = (uint64_t)pages[i].offset;
        pi->ordinal[k] = (int32_t)i;
        k++;
    }
    pi->n = k;
    gf__free(&ds->alloc, pages);
    return GPUFEED_OK;
}

/* >>unit ----------------------------------------------------------------- */
/* Units: gpufeed_dataset_open opens the files, binds the features,
   prunes row groups by statistics and cuts the rest into units (row
   ranges, split by the page index); the dataset's accessors; then the
   per-thread decoder state (gpufeed_scratch) that decodes one unit
   (gpufeed_dataset_decode_unit, the loader workers' call). */

static void gf__dataset_free(gpufeed_dataset *ds)
{
    int32_t i;
    gpufeed_allocator a;
    if (!ds) return;
    a = ds->alloc;
    for (i = 0; i < ds->nfiles; i++) gpufeed_file_close(ds->files ? ds->files[i] : NULL);
#ifndef GPUFEED_NO_STDIO
    if (ds->fdpool) {
#if !defined(GPUFEED_NO_THREADS)
        pthread_mutex_destroy(&ds->fdpool->mu);
#endif
        gf__free(&a, ds->fdpool->src);
        gf__free(&a, ds->fdpool);
    }
#endif
    gf__remote_release(ds->remote);
    gf__dcache_free(ds->dcache, &a);
    gf__arena_free(&ds->arena);
    gf__free(&a, ds);
}

/* The dataset's users: 2 added for each loader opened on it, -2 when it
   closes, 1 (set, not added) by gpufeed_dataset_close. 1 when that leaves
   it closed with no loader open: the caller frees it. A dataset closed
   while loaders use it goes when the last of them closes. */
static int gf__dataset_users(gpufeed_dataset *ds, int64_t v)
{
    int64_t now;
#if defined(__GNUC__) || defined(__clang__)
    now = v == 1 ? (__atomic_fetch_or(&ds->users, (int64_t)1, __ATOMIC_ACQ_REL) | 1) : __atomic_add_fetch(&ds->users, v, __ATOMIC_ACQ_REL);
#else
    now = v == 1 ? (ds->users |= 1) : (ds->users += v);
#endif
    return now == 1;
}

GPUFEED_API void gpufeed_dataset_close(gpufeed_dataset *ds)
{
    if (ds && gf__dataset_users(ds, 1)) gf__dataset_free(ds);
}

static gpufeed_result gf__check_feature(const gpufeed_feature *ft, int32_t i, uint8_t fill[8], gpufeed_error *err)
{
    gf__conv cv;
    uint64_t in;
    const char *name = ft->column ? ft->column : "(null)";
    if (!ft->column || !*ft->column) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "feature %d has no column", i);
    if ((unsigned)ft->dtype > GPUFEED_DT_U8) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "feature '%s': unknown dtype %d", name, (int)ft->dtype);
    if (ft->null_policy != GPUFEED_NULL_FILL && ft->null_policy != GPUFEED_NULL_ERROR)
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "feature '%s': unknown null policy %d", name, ft->null_policy);
    if (ft->cast != GPUFEED_CAST_SAFE && ft->cast != GPUFEED_CAST_UNSAFE)
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "feature '%s': unknown cast %d", name, ft->cast);
    if (ft->width < 0 || (uint64_t)ft->width > (uint64_t)GPUFEED_MAX_LIST_WIDTH)
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "feature '%s': width %d is outside [0, GPUFEED_MAX_LIST_WIDTH = %lu]", name, ft->width,
                          (unsigned long)GPUFEED_MAX_LIST_WIDTH);
    if (ft->list_policy != GPUFEED_LIST_ERROR && ft->list_policy != GPUFEED_LIST_PAD && ft->list_policy != GPUFEED_LIST_TRUNCATE)
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "feature '%s': unknown list policy %d", name, ft->list_policy);
    if (ft->list_lengths != 0 && ft->list_lengths != 1)
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "feature '%s': list_lengths must be 0 or 1 (got %d)", name, ft->list_lengths);
    if (ft->list_lengths && ft->width)
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "feature '%s': a lengths feature has one value per row: leave width 0 (width %d)", name, ft->width);
    if (ft->list_lengths && ft->hash_buckets)
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "feature '%s': a lengths feature cannot hash (hash_buckets %llu)", name,
                          (unsigned long long)ft->hash_buckets);
    if (ft->hash_buckets) {
        uint64_t cap;
        switch (ft->dtype) {
        case GPUFEED_DT_I32: cap = 1ull << 31; break;
        case GPUFEED_DT_U8: cap = 256; break;
        case GPUFEED_DT_F32: cap = 1ull << 24; break;
        case GPUFEED_DT_F64: cap = 1ull << 53; break;
        case GPUFEED_DT_F16: cap = 2048; break;
        case GPUFEED_DT_BF16: cap = 256; break;
        default: cap = 1ull << 63; break;
        }
        if (ft->hash_buckets > cap)
            return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "feature '%s': %llu hash buckets do not fit %s exactly (at most %llu)", name,
                              (unsigned long long)ft->hash_buckets, gpufeed_dtype_name(ft->dtype), (unsigned long long)cap);
    }

    /* the fill value in the dtype: exact for integer dtypes */
    memset(&cv, 0, sizeof cv);
    cv.ck = GF__CK_F64; cv.dt = ft->dtype;
    memcpy(&in, &ft->fill, 8);
    memset(fill, 0, 8);
    if (gf__convert(&cv, &in, fill, 1) >= 0)
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "feature '%s': fill value %.17g is not representable in %s", name, ft->fill,
                          gpufeed_dtype_name(ft->dtype));
    return GPUFEED_OK;
}

/* gpufeed_dataset_open, its phases. Each sets *err and returns the code
   on failure; the caller frees the dataset then. */

/* the files: names as given (open_source), or paths, directories and
   globs expanded; each opened (its footer parsed) */
#ifndef GPUFEED_NO_STDIO
/* A local file just opened (its footer read): a mapped one gives up its
   descriptor (reads come from the mapping); with a pool, one read with
   pread joins it, closed until a read needs it. 0, or -1 out of memory. */
static int gf__dataset_file_rest(gpufeed_dataset *ds, gpufeed_file *f)
{
    gf__fdpool *p = ds->fdpool;
    struct stat st;
    if (!f->fd_open || f->fd.fd < 0 || f->src.read_at != gf__fd_read || fstat(f->fd.fd, &st) != 0) return 0; /* kept open */
    f->fd.dev = (uint64_t)st.st_dev; f->fd.ino = (uint64_t)st.st_ino; f->fd.size = (uint64_t)st.st_size;
    f->fd.mt_s = (int64_t)st.st_mtime; f->fd.mt_ns = (int64_t)GF__MTIME_NS(st);
    f->fd.path = f->name; /* the identity recorded: a cache build checks it again */
    if (f->map) {
        close(f->fd.fd);
        f->fd.fd = -1;
        f->fd_open = 0;
        f->mem.data = f->map; f->mem.size = f->map_len;
        f->src.read_at = gf__mem_read; f->src.ctx = &f->mem;
        return 0;
    }
    if (!p) return 0; /* kept open */
    if (p->n == p->cap) {
        int32_t nc = p->cap ? p->cap * 2 : 256;
        gf__fdsrc **ns = (gf__fdsrc **)gf__realloc(&ds->alloc, p->src, (size_t)nc * sizeof *ns);
        if (!ns) return -1;
        p->src = ns; p->cap = nc;
    }
    f->fd.pool = p;
    f->src.why = gf__fd_why;
    close(f->fd.fd);
    f->fd.fd = -1;
    p->src[p->n++] = &f->fd;
    return 0;
}
#endif

static gpufeed_result gf__dataset_open_files(gpufeed_dataset *ds, const gpufeed_dataset_desc *desc, gpufeed_error *err)
{
    gf__strv files;
    gpufeed_result r;
    int32_t i;
    memset(&files, 0, sizeof files);
    if (desc->open_source) { /* names as given: no listing, no globbing */
        files.n = desc->num_paths;
        files.v = (char **)gf__arena_get(&ds->arena, (size_t)files.n * sizeof(char *));
        files.root = (int32_t *)gf__arena_get(&ds->arena, (size_t)files.n * sizeof(int32_t));
        ds->ident = (const char **)gf__arena_get(&ds->arena, (size_t)files.n * sizeof(const char *));
        if (!files.v || !files.root || !ds->ident) { return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory"); }
        for (i = 0; i < files.n; i++) {
            if (!desc->paths[i]) { return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "dataset: path %d is NULL", i); }
            files.v[i] = gf__arena_str(&ds->arena, (const uint8_t *)desc->paths[i], strlen(desc->paths[i]));
            files.root[i] = 0; /* names as given: no partition columns from them */
            if (strrchr(desc->paths[i], '/')) files.root[i] = (int32_t)(strrchr(desc->paths[i], '/') - desc->paths[i] + 1);
            if (!files.v[i]) { return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory"); }
        }
    } else {
        r = gf__expand_paths(&ds->arena, desc->paths, desc->num_paths, &files, err);
        if (r) { return r; }
    }
    r = gf__dataset_partitions(ds, &files, err);
    if (!r) r = gf__partition_prune(ds, &files, err); /* before any footer is read */
    if (r) return r;
    ds->files = (gpufeed_file **)gf__arena_get(&ds->arena, (size_t)files.n * sizeof(gpufeed_file *));
    if (!ds->files) { return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory"); }
    ds->paths = files.v;
#ifndef GPUFEED_NO_STDIO
    {
        /* the pool's bound: GPUFEED_MAX_OPEN_FILES, or a quarter of the
           process's descriptor limit where that is less */
        struct rlimit rl;
        int64_t lim = GPUFEED_MAX_OPEN_FILES > 0 ? GPUFEED_MAX_OPEN_FILES : 1;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (int64_t)(rl.rlim_cur / 4) < lim)
            lim = rl.rlim_cur / 4 > 4 ? (int64_t)(rl.rlim_cur / 4) : 4;
        if (files.n > lim && !desc->open_source) { /* descriptors opened when reads need them */
            ds->fdpool = (gf__fdpool *)gf__alloc(&ds->alloc, sizeof *ds->fdpool);
            if (!ds->fdpool) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory");
            memset(ds->fdpool, 0, sizeof *ds->fdpool);
            ds->fdpool->max = (int32_t)lim;
#if !defined(GPUFEED_NO_THREADS)
            pthread_mutex_init(&ds->fdpool->mu, NULL);
#endif
        }
    }
#endif
    for (i = 0; i < files.n; i++) {
        gpufeed_file_desc od;
        gpufeed_source src;
        memset(&od, 0, sizeof od);
        od.path = files.v[i];
        od.flags = desc->flags;
        od.allocator = desc->allocator;
        if (desc->open_source) {
            char ident[1024], why[GPUFEED_ERROR_MAX];
            memset(&src, 0, sizeof src);
            ident[0] = 0; why[0] = 0;
            if (desc->open_source(desc->source_user, files.v[i], &src, ident, sizeof ident, why, sizeof why) != 0) {
                why[sizeof why - 1] = 0;
                gf__seterr(err, GPUFEED_ERR_IO, "%s: cannot open: %s", files.v[i], why[0] ? why : "open_source failed");
                return GPUFEED_ERR_IO;
            }
            if (!src.read_at) { /* a bug in the callback: give back what it opened */
                gf__source_close(&src);
                gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "%s: open_source returned a source without read_at", files.v[i]);
                return GPUFEED_ERR_INVALID_ARG;
            }
            ident[sizeof ident - 1] = 0;
            ds->ident[i] = gf__arena_str(&ds->arena, (const uint8_t *)ident, strlen(ident));
            if (!ds->ident[i]) { /* the message first: the name lives in the arena */
                gf__source_close(&src);
                gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "%s: out of memory", files.v[i]);
                return GPUFEED_ERR_OUT_OF_MEMORY;
            }
            od.path = NULL;
            od.source = &src;
            od.name = files.v[i];
            od.flags &= ~(uint32_t)GPUFEED_OPEN_MMAP;
            od.flags |= GPUFEED_OPEN_PREAD;
        } else if (gf__remote_is_url(files.v[i])) { /* s3:// or http(s):// (>>remote): the next objects opened with it */
            char ident[1024] = "";
            if (!ds->ident) ds->ident = (const char **)gf__arena_get(&ds->arena, (size_t)files.n * sizeof(const char *));
            if (!ds->ident) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory");
            r = gf__remote_open(&ds->remote, &ds->alloc, (const char *const *)files.v + i, files.n - i, &src, ident, sizeof ident, err);
            if (r) return r;
            ds->ident[i] = gf__arena_str(&ds->arena, (const uint8_t *)ident, strlen(ident));
            if (!ds->ident[i]) { gf__source_close(&src); return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "%s: out of memory", files.v[i]); }
            od.path = NULL;
            od.source = &src;
            od.name = files.v[i];
        }
        r = gpufeed_file_open(&ds->files[i], &od, err);
        ds->nfiles = i + (r == GPUFEED_OK);
        if (r) { return r; }
#ifndef GPUFEED_NO_STDIO
        if (gf__dataset_file_rest(ds, ds->files[i])) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory");
#endif
    }
    return GPUFEED_OK;
}

static gpufeed_result gf__dataset_open_features(gpufeed_dataset *ds, const gpufeed_dataset_desc *desc, gpufeed_error *err)
{
    gpufeed_result r;
    int32_t i;

    /* features: given, or every numeric/boolean leaf of the first file */
    if (desc->num_features > 0) {
        ds->nfeat = desc->num_features;
        ds->feats = (gpufeed_feature *)gf__arena_get(&ds->arena, (size_t)ds->nfeat * sizeof *ds->feats);
        if (!ds->feats) { return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory"); }
        for (i = 0; i < ds->nfeat; i++) {
            ds->feats[i] = desc->features[i];
            if (desc->features[i].column)
                ds->feats[i].column = gf__arena_str(&ds->arena, (const uint8_t *)desc->features[i].column, strlen(desc->features[i].column));
        }
    } else {
        const gpufeed_metadata *md = &ds->files[0]->md;
        int32_t k;
        ds->feats = (gpufeed_feature *)gf__arena_get(&ds->arena, (size_t)(md->num_columns + ds->nparts + 1) * sizeof *ds->feats);
        if (!ds->feats) { return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory"); }
        for (i = 0; i < md->num_columns; i++) {
            if (!gf__is_default_feature(&md->nodes[md->columns[i].node])) continue;
            if (ds->nfeat >= GPUFEED_MAX_FEATURES)
                return gf__seterr(err, GPUFEED_ERR_LIMIT, "%s: more than %d numeric or boolean columns for the default features: the limit is "
                                  "GPUFEED_MAX_FEATURES (%d); name the features, or define GPUFEED_MAX_FEATURES larger", ds->paths[0],
                                  (int)GPUFEED_MAX_FEATURES, (int)GPUFEED_MAX_FEATURES);
            ds->feats[ds->nfeat].column = md->columns[i].path;
            ds->feats[ds->nfeat].dtype = GPUFEED_DT_F32;
            ds->nfeat++;
        }
        for (k = 0; k < ds->nparts && ds->nfeat < GPUFEED_MAX_FEATURES; k++) /* integer partition keys too, after the columns */
            if (ds->part_int[k] && gpufeed_file_find_column(ds->files[0], ds->part_key[k]) < 0) {
                ds->feats[ds->nfeat].column = ds->part_key[k];
                ds->feats[ds->nfeat].dtype = GPUFEED_DT_F32;
                ds->nfeat++;
            }
        if (ds->nfeat == 0) { r = gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "%s: no numeric or boolean column to use as a feature", ds->paths[0]); return r; }
    }
    ds->fill = (uint8_t (*)[8])gf__arena_get(&ds->arena, (size_t)ds->nfeat * 8);
    if (!ds->fill) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory");
    for (i = 0; i < ds->nfeat; i++) {
        r = gf__check_feature(&ds->feats[i], i, ds->fill[i], err);
        if (r) { return r; }
    }
    return GPUFEED_OK;
}

static gpufeed_result gf__dataset_open_predicates(gpufeed_dataset *ds, const gpufeed_dataset_desc *desc, gpufeed_error *err)
{
    gpufeed_result r;
    int32_t i;

    /* predicates */
    ds->npred = desc->num_where;
    if (ds->npred) {
        ds->preds = (gpufeed_predicate *)gf__arena_get(&ds->arena, (size_t)ds->npred * sizeof *ds->preds);
        if (!ds->preds) { return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory"); }
        for (i = 0; i < ds->npred; i++) {
            gpufeed_predicate *p = &ds->preds[i];
            *p = desc->where[i];
            if (!p->column || (unsigned)p->op > GPUFEED_OP_IS_NOT_NULL) {
                r = gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "predicate %d: no column or unknown operator", i);
                return r;
            }
            if (p->op == GPUFEED_OP_IN && (p->set_size <= 0 || !p->set)) {
                r = gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "predicate on '%s': IN needs a non-empty set", p->column);
                return r;
            }
            p->column = gf__arena_str(&ds->arena, (const uint8_t *)p->column, strlen(p->column));

            /* copy constants (strings and sets) */
            {
                gpufeed_value *vals[2];
                int32_t v;
                vals[0] = &p->a; vals[1] = &p->b;
                for (v = 0; v < 2; v++)
                    if (vals[v]->kind == GPUFEED_VAL_STRING && vals[v]->s) vals[v]->s = gf__arena_str(&ds->arena, (const uint8_t *)vals[v]->s, vals[v]->len);
                if (p->op == GPUFEED_OP_IN) {
                    gpufeed_value *set = (gpufeed_value *)gf__arena_get(&ds->arena, (size_t)p->set_size * sizeof *set);
                    if (!set) { return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory"); }
                    for (v = 0; v < p->set_size; v++) {
                        set[v] = p->set[v];
                        if (set[v].kind == GPUFEED_VAL_STRING && set[v].s) set[v].s = gf__arena_str(&ds->arena, (const uint8_t *)set[v].s, set[v].len);
                    }
                    p->set = set;
                }
            }
        }
    }
    return GPUFEED_OK;
}

/* ---- binding: features and predicates to each file's columns ---- */

/* the unit a column's times are in: GPUFEED_UNIT_MILLIS, _MICROS, _NANOS
   (TIMESTAMP, TIME; INT96 timestamps: ns), GF__UNIT_DAYS (DATE); 0: not a time */
static int32_t gf__col_tunit(const gpufeed_file *f, int32_t col)
{
    const gpufeed_schema_node *n = &f->md.nodes[f->md.columns[col].node];
    if (n->physical == GPUFEED_INT96) return GPUFEED_UNIT_NANOS;
    if (n->logical == GPUFEED_LT_DATE) return GF__UNIT_DAYS;
    if ((n->logical == GPUFEED_LT_TIMESTAMP || n->logical == GPUFEED_LT_TIME) && n->unit != GPUFEED_UNIT_NONE) return (int32_t)n->unit;
    return 0;
}
/* The unit each feature's and predicate's times arrive in: the one it
   asks for, else the unit of the first file that holds the column (a DATE:
   days). 0 for a column that is not a time. */
static gpufeed_result gf__dataset_tunits(gpufeed_dataset *ds, gpufeed_error *err)
{
    const int32_t nb = ds->nfeat + ds->npred;
    int32_t i, j;
    ds->tunit = (int32_t *)gf__arena_get(&ds->arena, (size_t)(nb ? nb : 1) * sizeof(int32_t));
    if (!ds->tunit) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory");
    for (j = 0; j < nb; j++) {
        const char *name = j < ds->nfeat ? ds->feats[j].column : ds->preds[j - ds->nfeat].column;
        int32_t want = j < ds->nfeat ? ds->feats[j].unit : ds->preds[j - ds->nfeat].unit, u = 0;
        if (want && want != GPUFEED_UNIT_SECONDS && want != GPUFEED_UNIT_MILLIS && want != GPUFEED_UNIT_MICROS && want != GPUFEED_UNIT_NANOS)
            return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "%s '%s': unknown unit %d (s, ms, us or ns)", j < ds->nfeat ? "feature" : "predicate",
                              name, want);
        for (i = 0; i < ds->nfiles && gf__part_find(ds, name) < 0; i++) {
            int32_t col = gpufeed_file_find_column(ds->files[i], name);
            if (col < 0) continue;
            u = gf__col_tunit(ds->files[i], col);
            if (want && !u)
                return gf__seterr(err, GPUFEED_ERR_SCHEMA, "%s: %s '%s': a unit applies to TIMESTAMP, TIME and DATE columns", ds->paths[i],
                                  j < ds->nfeat ? "feature" : "predicate", name);
            break;
        }
        if (want && i == ds->nfiles)
            return gf__seterr(err, GPUFEED_ERR_SCHEMA, "%s '%s': a unit applies to TIMESTAMP, TIME and DATE columns", j < ds->nfeat ? "feature" : "predicate",
                              name);
        ds->tunit[j] = want ? want : u;
    }
    return GPUFEED_OK;
}

/* a conversion from unit `from` to `to`: *mul or *div (the other 1) */
static void gf__unit_scale(int32_t from, int32_t to, int64_t *mul, int64_t *div)
{
    int64_t a = gf__unit_ns(from), b = gf__unit_ns(to);
    *mul = a >= b ? a / b : 1;
    *div = a < b ? b / a : 1;
}

/* Times of this file converted to the feature's or predicate's unit: the
   column's unit against ds->tunit[j]; a column that is a time in one file
   and not in another is an error. */
static int gf__bind_time(const gpufeed_dataset *ds, int32_t i, int32_t j, gf__bind *b, char *msg, size_t cap)
{
    int32_t u = gf__col_tunit(ds->files[i], b->col), want = ds->tunit[j];
    if (!u && !want) return 0;
    if (!u || !want) {
        gf__fmt(msg, cap, "column '%s' holds %s here and %s in an earlier file", ds->files[i]->md.columns[b->col].path, u ? "times" : "no times",
                u ? "no times" : "times");
        return -1;
    }
    b->conv.tsrc = u;
    b->conv.tdst = want;
    if (u != want) gf__unit_scale(u, want, &b->conv.tmul, &b->conv.tdiv);
    return 0;
}

/* names the leaves under `name` when it is a group (a list, map or struct):
   "" when there are none */
static void gf__column_hint(const gpufeed_file *f, const char *name, char *buf, size_t cap)
{
    size_t nl = strlen(name), used;
    int32_t c, shown = 0, more = 0;
    buf[0] = 0;
    for (c = 0; c < f->md.num_columns; c++) {
        const char *p = f->md.columns[c].path;
        if (strncmp(p, name, nl) != 0 || p[nl] != '.') continue;
        if (shown == 4) { more++; continue; }
        used = strlen(buf);
        gf__fmt(buf + used, cap - used, "%s'%s'", shown ? ", " : " (a list, map or struct: name a leaf, e.g. ", p);
        shown++;
    }
    used = strlen(buf);
    if (shown) gf__fmt(buf + used, cap - used, more ? ", and %d more)" : ")", (int)more);
}

/* Feature j is the partition key k in file i: the path's value, converted
   once (an integer, or a string's hash with hash_buckets); null when the
   value is or the path lacks the key. */
static gpufeed_result gf__bind_partition(gpufeed_dataset *ds, int32_t i, int32_t j, int32_t k, gf__bind *b, gpufeed_error *err)
{
    const gpufeed_feature *ft = &ds->feats[j];
    const char *v = ds->part_val[(size_t)i * GPUFEED_MAX_PARTITION_KEYS + (size_t)k];
    uint64_t in;
    int64_t x = 0;
    if (ft->width || ft->list_lengths)
        return gf__seterr(err, GPUFEED_ERR_SCHEMA, "feature '%s': a partition key holds one value a row (no width, no list lengths)", ft->column);
    if (!ds->part_int[k] && !ft->hash_buckets)
        return gf__seterr(err, GPUFEED_ERR_SCHEMA, "feature '%s': the partition key holds strings (e.g. '%s'): set hash_buckets to hash them",
                          ft->column, v ? v : "null");
    if (!v) { b->virt = GF__VIRT_NULL; return GPUFEED_OK; }
    b->virt = GF__VIRT_CONST;
    b->conv.dt = ft->dtype;
    b->conv.unsafe_cast = ft->cast == GPUFEED_CAST_UNSAFE;
    b->conv.buckets = ft->hash_buckets;
    if (ds->part_int[k]) gf__parse_i64(v, &x);
    in = (uint64_t)x;
    if (ft->hash_buckets) in = ds->part_int[k] ? gpufeed_hash64(&in, 8, ft->hash_seed) : gpufeed_hash64(v, strlen(v), ft->hash_seed);
    b->conv.ck = ft->hash_buckets ? GF__CK_HASH : GF__CK_I64;
    if (gf__convert(&b->conv, &in, b->vval, 1) >= 0)
        return gf__seterr(err, GPUFEED_ERR_CORRUPT, "%s: feature '%s': the partition value %s does not convert to %s exactly (cast: safe)", ds->paths[i],
                          ft->column, v, gpufeed_dtype_name(ft->dtype));
    return GPUFEED_OK;
}

/* feature j in file i: a column, a partition key's value, or nulls
   (missing=null) */
static gpufeed_result gf__bind_feature(gpufeed_dataset *ds, int32_t i, int32_t j, gpufeed_error *err)
{
    gpufeed_file *f = ds->files[i];
    const gpufeed_feature *ft = &ds->feats[j];
    gf__bind *b = &ds->bind[(size_t)i * (size_t)(ds->nfeat + ds->npred) + (size_t)j];
    int32_t k = gf__part_find(ds, ft->column), col;
    char msg[GPUFEED_ERROR_MAX];
    memset(b, 0, sizeof *b);
    b->col = -1;
    b->pfix = -1;
    if (k >= 0) return gf__bind_partition(ds, i, j, k, b, err);
    col = gpufeed_file_find_column(f, ft->column);
    if (col < 0 && ft->missing == GPUFEED_MISSING_NULL) { b->virt = GF__VIRT_NULL; return GPUFEED_OK; }
    if (col < 0) {
        gf__column_hint(f, ft->column, msg, sizeof msg);
        return gf__seterr(err, GPUFEED_ERR_SCHEMA, "%s: feature '%s': no such column in this file%s%s", f->name, ft->column, msg,
                          msg[0] || ds->nfiles < 2 ? "" : " (set missing=null to read it as nulls where it is missing)");
    }
    if (gf__bind_column(f, col, ft, 0, b, msg, sizeof msg) || gf__bind_time(ds, i, j, b, msg, sizeof msg))
        return gf__seterr(err, GPUFEED_ERR_SCHEMA, "%s: feature '%s': %s", f->name, ft->column, msg);
    return GPUFEED_OK;
}

/* An integer constant c in unit P against values in unit F: in F, exactly
   (finer: c x mul, which may leave int64; coarser: c / div, whose
   remainder decides <, <= and ==). Returns the rewritten op, or -1 when no
   value matches, -2 when every present value does. */
static int gf__time_const(int op, const gpufeed_value *c, int64_t mul, int64_t div, gpufeed_value *out)
{
    *out = *c;
    if (c->kind == GPUFEED_VAL_DOUBLE) { out->d = mul > 1 ? c->d * (double)mul : c->d / (double)div; return op; }
    if (c->kind == GPUFEED_VAL_UINT && c->u > (uint64_t)INT64_MAX) return op == GPUFEED_OP_LT || op == GPUFEED_OP_LE ? -2 : -1;
    out->kind = GPUFEED_VAL_INT;
    out->i = c->kind == GPUFEED_VAL_UINT ? (int64_t)c->u : c->i;
    if (mul > 1) {
        if (out->i > INT64_MAX / mul) return op == GPUFEED_OP_LT || op == GPUFEED_OP_LE ? -2 : -1;
        if (out->i < INT64_MIN / mul) return op == GPUFEED_OP_GT || op == GPUFEED_OP_GE ? -2 : -1;
        out->i *= mul;
        return op;
    }
    if (div > 1) {
        int64_t q = out->i / div, r = out->i % div;
        if (r < 0) { q--; r += div; } /* floor */
        out->i = q;
        if (r) {
            if (op == GPUFEED_OP_EQ) return -1;
            if (op == GPUFEED_OP_LT) return GPUFEED_OP_LE;
            if (op == GPUFEED_OP_GE) return GPUFEED_OP_GT;
        }
    }
    return op;
}

/* A predicate on times, in this file's unit (padj, or pfix when the file
   settles it whole) */
static gpufeed_result gf__bind_pred_time(gpufeed_dataset *ds, int32_t i, const gpufeed_predicate *p, gf__bind *b, gpufeed_error *err)
{
    int64_t mul, div;
    gf__unit_scale(b->conv.tdst, b->conv.tsrc, &mul, &div); /* constants from the predicate's unit to the file's */
    if (mul == 1 && div == 1) return GPUFEED_OK;
    if (p->op == GPUFEED_OP_BETWEEN) {
        int lo = gf__time_const(GPUFEED_OP_GE, &p->a, mul, div, &b->padj.a), hi = gf__time_const(GPUFEED_OP_LE, &p->b, mul, div, &b->padj.b);
        if (lo == -1 || hi == -1) b->pfix = 0;
        else if (lo == -2 && hi == -2) b->padj.op = GPUFEED_OP_IS_NOT_NULL;
        else if (lo == -2) { b->padj.op = GPUFEED_OP_LE; b->padj.a = b->padj.b; }
        else if (hi == -2) b->padj.op = lo == GPUFEED_OP_GT ? GPUFEED_OP_GT : GPUFEED_OP_GE;
        else if (lo == GPUFEED_OP_GT) { if (b->padj.a.i == INT64_MAX) b->pfix = 0; else b->padj.a.i++; }
    } else if (p->op == GPUFEED_OP_IN) {
        gpufeed_value *set = (gpufeed_value *)gf__arena_get(&ds->arena, (size_t)p->set_size * sizeof *set);
        int32_t v, n = 0;
        if (!set) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory");
        for (v = 0; v < p->set_size; v++) if (gf__time_const(GPUFEED_OP_EQ, &p->set[v], mul, div, &set[n]) == GPUFEED_OP_EQ) n++;
        b->padj.set = set;
        b->padj.set_size = n;
        if (!n) b->pfix = 0;
    } else if (p->op <= GPUFEED_OP_GT) {
        int op = gf__time_const(p->op, &p->a, mul, div, &b->padj.a);
        if (op == -1) b->pfix = 0;
        else b->padj.op = op == -2 ? GPUFEED_OP_IS_NOT_NULL : (gpufeed_op)op;
    }
    (void)i;
    return GPUFEED_OK;
}

/* predicate j in file i: its column (constants checked against it; times
   in the file's unit), or settled whole: a partition key (the files that
   fail it are gone already), a column the file lacks (null: only IS NULL
   matches). *found: the file holds the column. */
static gpufeed_result gf__bind_predicate(gpufeed_dataset *ds, int32_t i, int32_t j, int *found, gpufeed_error *err)
{
    gpufeed_file *f = ds->files[i];
    const gpufeed_predicate *p = &ds->preds[j - ds->nfeat];
    gf__bind *b = &ds->bind[(size_t)i * (size_t)(ds->nfeat + ds->npred) + (size_t)j];
    int32_t col = gpufeed_file_find_column(f, p->column), v, nv;
    char msg[GPUFEED_ERROR_MAX];
    int bytes_col;
    memset(b, 0, sizeof *b);
    b->col = -1;
    b->padj = *p;
    if (gf__part_find(ds, p->column) >= 0) { b->pfix = 1; *found = 1; return GPUFEED_OK; }
    if (col < 0) { b->pfix = p->op == GPUFEED_OP_IS_NULL; return GPUFEED_OK; }
    *found = 1;
    if (gf__bind_column(f, col, NULL, 1, b, msg, sizeof msg) || gf__bind_time(ds, i, j, b, msg, sizeof msg))
        return gf__seterr(err, GPUFEED_ERR_SCHEMA, "%s: predicate '%s': %s", f->name, p->column, msg);
    b->padj = *p;
    bytes_col = b->conv.ck == GF__CK_HASH;
    nv = p->op == GPUFEED_OP_IN ? p->set_size : p->op == GPUFEED_OP_BETWEEN ? 2 : (p->op <= GPUFEED_OP_GT ? 1 : 0);
    for (v = 0; v < nv; v++) { /* constants must suit the column */
        const gpufeed_value *c = p->op == GPUFEED_OP_IN ? &p->set[v] : v ? &p->b : &p->a;
        if ((c->kind == GPUFEED_VAL_STRING) != bytes_col || (unsigned)c->kind > GPUFEED_VAL_UINT || (c->kind == GPUFEED_VAL_STRING && !c->s && c->len))
            return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "%s: predicate on '%s': a %s constant cannot compare with this %s column", f->name, p->column,
                              c->kind == GPUFEED_VAL_STRING ? "string" : "numeric", bytes_col ? "byte/string" : "numeric");
    }
    return b->conv.tsrc ? gf__bind_pred_time(ds, i, p, b, err) : GPUFEED_OK;
}

/* every feature and predicate bound in every file; the row layout */
static gpufeed_result gf__dataset_open_bind(gpufeed_dataset *ds, gpufeed_error *err)
{
    gpufeed_result r;
    int32_t i, j, nb = ds->nfeat + ds->npred;
    int *found;
    ds->bind = (gf__bind *)gf__arena_get(&ds->arena, (size_t)ds->nfiles * (size_t)nb * sizeof *ds->bind);
    found = (int *)gf__arena_get(&ds->arena, (size_t)(ds->npred ? ds->npred : 1) * sizeof(int));
    if (!ds->bind || !found) { return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory"); }
    memset(found, 0, (size_t)(ds->npred ? ds->npred : 1) * sizeof(int));
    r = gf__dataset_tunits(ds, err);
    for (i = 0; i < ds->nfiles && !r; i++)
        for (j = 0; j < nb && !r; j++)
            r = j < ds->nfeat ? gf__bind_feature(ds, i, j, err) : gf__bind_predicate(ds, i, j, &found[j - ds->nfeat], err);
    for (j = 0; j < ds->npred && !r; j++)
        if (!found[j]) {
            char hint[GPUFEED_ERROR_MAX];
            gf__column_hint(ds->files[0], ds->preds[j].column, hint, sizeof hint);
            r = gf__seterr(err, GPUFEED_ERR_SCHEMA, "predicate column '%s': no such column in any file of the dataset%s", ds->preds[j].column, hint);
        }
    if (r) return r;

    /* layout */
    ds->offs = (int64_t *)gf__arena_get(&ds->arena, (size_t)ds->nfeat * sizeof(int64_t));
    if (!ds->offs) { return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory"); }
    for (i = 0; i < ds->nfeat; i++) { ds->offs[i] = ds->row_bytes; ds->row_bytes += (int64_t)gpufeed_feature_bytes(&ds->feats[i]); }
    return GPUFEED_OK;
}

/* the candidate cuts of a split row group: every column's page boundaries
   inside (0, rows), sorted, each once; NULL without memory */
static int64_t *gf__plan_candidates(gpufeed_dataset *ds, const gf__rgplan *pl, int32_t nb, int64_t rows, int64_t *count)
{
    int64_t cand_n = 0, ci, pg;
    int64_t *cand;
    int32_t j;
    for (j = 0; j < nb; j++) cand_n += pl->idx[j].n;
    cand = (int64_t *)gf__alloc(&ds->alloc, (size_t)(cand_n + 1) * sizeof(int64_t));
    if (!cand) return NULL;
    cand_n = 0;
    for (j = 0; j < nb; j++)
        for (pg = 0; pg < pl->idx[j].n; pg++)
            if (pl->idx[j].first_row[pg] > 0 && pl->idx[j].first_row[pg] < rows) cand[cand_n++] = pl->idx[j].first_row[pg];
    qsort(cand, (size_t)cand_n, sizeof(int64_t), gf__cmp_i64);
    {
        int64_t w2 = 0;
        for (ci = 0; ci < cand_n; ci++) if (!w2 || cand[ci] != cand[w2 - 1]) cand[w2++] = cand[ci];
        cand_n = w2;
    }
    *count = cand_n;
    return cand;
}

/* the bytes of every page that straddles row r (each read by both units) */
static uint64_t gf__cut_cost(const gpufeed_dataset *ds, const gf__rgplan *pl, int32_t i, int32_t rg, int32_t nb, int64_t r)
{
    uint64_t cost = 0;
    int32_t j;
    for (j = 0; j < nb; j++) {
        int32_t col = ds->bind[(size_t)i * (size_t)nb + (size_t)j].col;
        if (col >= 0) cost += gf__straddle_bytes(&pl->idx[j], ds->files[i], rg, col, r);
    }
    return cost;
}

/* a cut at `at` costing `cost` is cheap when the pages it straddles hold at
   most 64 KiB, or a quarter of the bytes the unit [start, at) reads
   (rg_bytes over rows: the row group's bytes of the columns read) */
static int gf__cut_cheap(uint64_t cost, uint64_t rg_bytes, int64_t rows, int64_t start, int64_t at)
{
    return cost <= 65536 || (double)cost * 4.0 <= (double)rg_bytes * (double)(at - start) / (double)rows;
}

/* The next cut of file i's row group rg from `start`: the cheapest
   candidate in [start + unit_rows/2, start + 2 unit_rows] (ties: nearest to
   start + unit_rows), leaving no last unit under unit_rows / 2 rows
   (a short unit costs its columns' seeks as a full one does). When that
   cut goes through large pages (every page it
   straddles is read and decompressed up to the cut by two units), the
   first cheap candidate in (start + 2 unit_rows, start + 4 unit_rows] or
   the row group's end there instead: on a file whose pages hold more rows
   than a unit, cutting inside them costs a third of the decoding (a
   2M-row file of 1 MiB pages: 1.35-1.37x an epoch's time at 1 worker).
   Without a candidate, the next boundary, or a cut inside a big page.
   *lo_cp: the first candidate not below the range, kept from call to
   call. */
static int64_t gf__plan_cut(const gpufeed_dataset *ds, const gf__rgplan *pl, int32_t i, int32_t rg, int32_t nb,
                            const int64_t *cand, int64_t cand_n, int64_t *lo_cp, int64_t start, int64_t rows, uint64_t rg_bytes)
{
    int64_t lo = start + (ds->unit_rows + 1) / 2, hi = start + 2 * ds->unit_rows, target = start + ds->unit_rows;
    const int64_t tail = rows - (ds->unit_rows + 1) / 2; /* a cut after it leaves a short last unit */
    int64_t best = -1, ci, lo_c = *lo_cp;
    uint64_t best_cost = UINT64_MAX;
    while (lo_c < cand_n && cand[lo_c] < lo) lo_c++;
    for (ci = lo_c; ci < cand_n && cand[ci] <= hi; ci++) {
        uint64_t cost;
        int64_t dist, best_dist;
        if (cand[ci] > tail) continue;
        cost = gf__cut_cost(ds, pl, i, rg, nb, cand[ci]);
        dist = cand[ci] > target ? cand[ci] - target : target - cand[ci];
        best_dist = best > target ? best - target : target - best;
        if (cost < best_cost || (cost == best_cost && dist < best_dist)) {
            best_cost = cost;
            best = cand[ci];
        }
    }
    if (best >= 0 && !gf__cut_cheap(best_cost, rg_bytes, rows, start, best)) {
        /* a costly cut: a cheap one further on, up to 4 units' rows */
        const int64_t far = start + 4 * ds->unit_rows;
        for (; ci < cand_n && cand[ci] <= far && cand[ci] <= tail; ci++)
            if (gf__cut_cheap(gf__cut_cost(ds, pl, i, rg, nb, cand[ci]), rg_bytes, rows, start, cand[ci])) break;
        if (ci < cand_n && cand[ci] <= far && cand[ci] <= tail) best = cand[ci];
        else if (rows <= far) best = rows;
    }
    if (best < 0) {
        /* no page boundary near: the next boundary, or cut inside a big page */
        int64_t nxt = lo_c < cand_n && cand[lo_c] <= tail ? cand[lo_c] : rows;
        int64_t seg = 0; /* the boundary the current page run starts at */
        for (ci = lo_c; ci > 0; ci--) {
            if (cand[ci - 1] <= start) {
                seg = cand[ci - 1];
                break;
            }
        }
        if (nxt - start <= 8 * ds->unit_rows) best = nxt;
        else {
            int64_t piece = (nxt - seg + 7) / 8;
            best = start + (piece > ds->unit_rows ? piece : ds->unit_rows);
            if (nxt - best < ds->unit_rows) best = nxt;
        }
    }
    GPUFEED_ASSERT(best > start); /* every cut moves on */
    *lo_cp = lo_c;
    return best;
}

/* the plan: row groups (pruned by statistics) split into units */
/* 1 when no row of file i's row group rg can match: no file passed the
   partition predicates, a predicate settled for the file fails, or the
   statistics prove a predicate fails */
static int gf__rg_pruned(const gpufeed_dataset *ds, int32_t i, int32_t rg)
{
    const gpufeed_file *f = ds->files[i];
    const gpufeed_row_group_info *g = &f->md.row_groups[rg];
    int32_t j;
    if (ds->all_pruned) return 1;
    for (j = 0; j < ds->npred; j++) {
        const gf__bind *b = &ds->bind[(size_t)i * (size_t)(ds->nfeat + ds->npred) + (size_t)(ds->nfeat + j)];
        if (b->pfix == 0) return 1;
        if (b->pfix < 0 && gf__prune(&f->md.nodes[f->md.columns[b->col].node], &g->chunks[b->col], g->num_rows, &b->padj)) return 1;
    }
    return 0;
}

/* the plan being built: units, and the split row groups' page indexes */
typedef struct gf__uplan {
    gf__unitx *units; int64_t cap;
    gf__rgplan *plans; int32_t pcap;
} gf__uplan;
static int gf__uplan_push(gpufeed_dataset *ds, gf__uplan *b, int32_t i, int32_t rg, int64_t start, int64_t rows, int32_t plan)
{
    gf__unitx *x;
    if (ds->nunits == b->cap) {
        int64_t nc = b->cap ? b->cap * 2 : 64;
        gf__unitx *nu = (gf__unitx *)gf__realloc(&ds->alloc, b->units, (size_t)nc * sizeof *nu);
        if (!nu) return -1;
        b->units = nu; b->cap = nc;
    }
    x = &b->units[ds->nunits++];
    x->u.file = i; x->u.row_group = rg;
    x->u.first_row = start; x->u.num_rows = rows;
    x->plan = plan;
    return 0;
}

/* File i's row group rg, of more rows than a unit: the page index of every
   column read, then its units. Cut where few pages straddle: a page that
   straddles a cut is read and decompressed by both units. Candidate cuts
   are the page boundaries of every column; from each start the cheapest
   candidate in [start + unit_rows/2, start + 2 unit_rows] wins (ties:
   nearest to start + unit_rows). Without a candidate, a page holding more
   rows is cut inside, into at most 8 pieces. A wide dataset's row group
   goes into k equal units instead, read on one after another (the pages
   they cut through are read once). */
static gpufeed_result gf__plan_split(gpufeed_dataset *ds, gf__uplan *b, int32_t i, int32_t rg, gpufeed_error *err)
{
    gpufeed_file *f = ds->files[i];
    const gpufeed_row_group_info *g = &f->md.row_groups[rg];
    const int32_t nb = ds->nfeat + ds->npred;
    const int64_t rows = g->num_rows;
    int64_t start = 0, cand_n = 0, lo_c = 0, kth = 0, *cand;
    uint64_t rg_bytes = 0; /* the bytes of the columns read */
    gf__rgplan *pl;
    gpufeed_error e2;
    gpufeed_result r;
    int32_t j;
    if (ds->nplans == b->pcap) {
        int32_t nc = b->pcap ? b->pcap * 2 : 8;
        gf__rgplan *np = (gf__rgplan *)gf__realloc(&ds->alloc, b->plans, (size_t)nc * sizeof *np);
        if (!np) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory");
        b->plans = np; b->pcap = nc;
    }
    pl = &b->plans[ds->nplans];
    pl->file = i; pl->rg = rg;
    pl->busy = 0;
    pl->lo = UINT64_MAX; pl->hi = 0;
    for (j = 0; j < nb; j++) {
        int32_t col = ds->bind[(size_t)i * (size_t)nb + (size_t)j].col;
        uint64_t lo, hi;
        int64_t cs;
        if (col < 0) continue; /* a value the file does not hold */
        lo = gf__chunk_start(&g->chunks[col]);
        hi = f->chunk_limit[(size_t)rg * (size_t)f->md.num_columns + (size_t)col];
        if (lo < pl->lo) pl->lo = lo;
        if (hi > pl->hi) pl->hi = hi;
        cs = g->chunks[col].total_compressed_size;
        rg_bytes = rg_bytes + (uint64_t)(cs > 0 ? cs : 0) < rg_bytes ? UINT64_MAX : rg_bytes + (uint64_t)(cs > 0 ? cs : 0);
    }
    if (pl->hi < pl->lo) pl->hi = pl->lo;
    pl->idx = (gf__pidx *)gf__arena_get(&ds->arena, (size_t)nb * sizeof(gf__pidx));
    if (!pl->idx) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory");
    /* A wide dataset's mapped file goes without page indexes: its units are
       read on from the row group's start, and a unit that is not (a rank's
       first, one after a unit the cache served) skips its rows from the
       chunk's start; the index would cost a walk of every column's page
       headers at open (2,000 columns x 4 row groups: 0.3-0.9 s). Read
       through a source, the index bounds each column's read-ahead. */
    for (j = 0; j < nb; j++) memset(&pl->idx[j], 0, sizeof pl->idx[j]);
    for (j = 0; j < nb && !(ds->wide_rows && f->map); j++) {
        if (ds->bind[(size_t)i * (size_t)nb + (size_t)j].col < 0) continue;
        r = gf__page_index(ds, i, rg, ds->bind[(size_t)i * (size_t)nb + (size_t)j].col, &pl->idx[j], &e2);
        if (r) return gf__seterr(err, r, "%s", e2.message);
    }
    /* a walk of page headers (no page index) maps a little of every page:
       let it go per row group, so the resident set does not grow with the
       file (the page cache keeps the bytes) */
    if (!(ds->wide_rows && f->map)) gf__file_unmap_all(f);
    cand = gf__plan_candidates(ds, pl, nb, rows, &cand_n);
    if (!cand) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory");
    while (rows - start > (ds->wide_rows ? 0 : ds->unit_rows)) {
        int64_t best;
        if (ds->wide_rows) {
            const int64_t k = (rows + ds->wide_rows - 1) / ds->wide_rows;
            kth++;
            best = rows / k * kth + (kth < rows % k ? kth : rows % k);
        } else best = gf__plan_cut(ds, pl, i, rg, nb, cand, cand_n, &lo_c, start, rows, rg_bytes);
        if (best >= rows) break;
        if (gf__uplan_push(ds, b, i, rg, start, best - start, ds->nplans)) {
            gf__free(&ds->alloc, cand);
            return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory");
        }
        start = best;
    }
    gf__free(&ds->alloc, cand);
    if (gf__uplan_push(ds, b, i, rg, start, rows - start, ds->nplans)) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory");
    ds->nplans++;
    return GPUFEED_OK;
}

static gpufeed_result gf__dataset_open_plan(gpufeed_dataset *ds, gpufeed_error *err)
{
    gpufeed_result r = GPUFEED_OK;
    int32_t i;
    gf__uplan b;
    memset(&b, 0, sizeof b);
    if (ds->unit_bytes > 0 && ds->row_bytes > 0 && ds->unit_rows > ds->unit_bytes / ds->row_bytes) {
        int64_t wr = ds->unit_bytes / ds->row_bytes; /* a wide dataset: units bounded by bytes */
        ds->wide_rows = wr < 64 ? 64 : wr;
    }
    for (i = 0; i < ds->nfiles && !r; i++) {
        gpufeed_file *f = ds->files[i];
        int32_t rg;
        for (rg = 0; rg < f->md.num_row_groups && !r; rg++) {
            const int64_t rows = f->md.row_groups[rg].num_rows;
            ds->total_rows += rows;
            ds->rgs++;
            if (gf__rg_pruned(ds, i, rg)) { ds->rgs_pruned++; continue; }
            if (rows == 0) continue;
            ds->num_rows += rows;
            if (rows > (ds->wide_rows ? ds->wide_rows : ds->unit_rows)) r = gf__plan_split(ds, &b, i, rg, err);
            else if (gf__uplan_push(ds, &b, i, rg, 0, rows, -1)) r = gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory");
        }
    }

    /* move the plan into the arena (one allocation freed with it) */
    if (!r) {
        ds->units = (gf__unitx *)gf__arena_get(&ds->arena, (size_t)(ds->nunits ? ds->nunits : 1) * sizeof *b.units);
        ds->plans = (gf__rgplan *)gf__arena_get(&ds->arena, (size_t)(ds->nplans ? ds->nplans : 1) * sizeof *b.plans);
        if (!ds->units || !ds->plans) r = gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory");
    }
    if (!r && ds->nunits) memcpy(ds->units, b.units, (size_t)ds->nunits * sizeof *b.units);
    if (!r && ds->nplans) memcpy(ds->plans, b.plans, (size_t)ds->nplans * sizeof *b.plans);
    gf__free(&ds->alloc, b.units); gf__free(&ds->alloc, b.plans);
    if (!r && ds->wide_rows) { /* runs: each row group's units */
        int64_t u, n = 0;
        ds->runs = (int64_t *)gf__arena_get(&ds->arena, (size_t)(ds->nunits + 1) * sizeof(int64_t));
        if (!ds->runs) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory");
        for (u = 0; u < ds->nunits; u++)
            if (!u || ds->units[u].u.file != ds->units[u - 1].u.file || ds->units[u].u.row_group != ds->units[u - 1].u.row_group) ds->runs[n++] = u;
        ds->runs[n] = ds->nunits;
        ds->nruns = n;
    }
    return r;
}

/* Huge pages for a mapped file the dataset reads most of (GPUFEED_MAP_HUGE).
   A file read in through faults at many places at once (a reader walks
   all its columns' chunks together) comes into the page cache in small
   folios, and mapping those costs a fault and a page-table entry per 4 to
   64 KiB, on every later read too; asked for huge pages, the kernel reads
   the file in as 2 MiB folios (around each fault, 4 MiB), which cost
   later mappings less (gf__map_placed). The read-around is why a file the
   dataset reads little of (a few of many columns) is left alone: it
   would read unused bytes. Advice only: a kernel or file system without
   large folios ignores it. The cost: 2 MiB folios take whole free blocks,
   and a VM whose host has taken such blocks back pays for their first
   touch (a first read of 1.4 GB: 2.9-4.4 s against 1.6-2.0 s; of 143 MB,
   with memory at hand: 0.13-0.15 against 0.21-0.22 s). Sizes from the
   file: the metadata refused negative ones; each counts at most the file,
   and the sum stops where it would overflow. */
static void gf__dataset_map_huge(gpufeed_dataset *ds, int32_t fi)
{
#if GPUFEED_MAP_HUGE && !defined(GPUFEED_NO_STDIO) && defined(GF__MADV_HUGEPAGE)
    gpufeed_file *f = ds->files[fi];
    const int32_t nb = ds->nfeat + ds->npred;
    uint64_t all = 0, used = 0;
    uint8_t *want;
    int32_t g, c, j;
    if (!f->map || f->md.num_columns <= 0) return;
    want = (uint8_t *)gf__alloc(&ds->alloc, (size_t)f->md.num_columns);
    if (!want) return; /* advice only */
    memset(want, 0, (size_t)f->md.num_columns);
    for (j = 0; j < nb; j++) {
        int32_t col = ds->bind[(size_t)fi * (size_t)nb + (size_t)j].col;
        if (col >= 0 && col < f->md.num_columns) want[col] = 1;
    }
    for (g = 0; g < f->md.num_row_groups; g++)
        for (c = 0; c < f->md.num_columns; c++) {
            int64_t sz = f->md.row_groups[g].chunks[c].total_compressed_size;
            uint64_t b = sz > 0 ? ((uint64_t)sz < f->map_len ? (uint64_t)sz : f->map_len) : 0;
            if (all > UINT64_MAX - b) { g = f->md.num_row_groups; break; }
            all += b;
            if (want[c]) used += b;
        }
    gf__free(&ds->alloc, want);
    if (used > 0 && used >= all - used) (void)madvise((void *)(uintptr_t)f->map, (size_t)f->map_len, GF__MADV_HUGEPAGE);
#else
    (void)ds; (void)fi;
#endif
}

GPUFEED_API gpufeed_result gpufeed_dataset_open(gpufeed_dataset **out, const gpufeed_dataset_desc *desc, gpufeed_error *err)
{
    gpufeed_dataset *ds;
    gpufeed_result r;
    if (err) { err->code = GPUFEED_OK; err->message[0] = 0; }
    if (!out) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "gpufeed_dataset_open: out is NULL");
    *out = NULL;
    if (!desc || !desc->paths || desc->num_paths <= 0) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "dataset: no paths given");
    if (desc->num_features < 0 || (desc->num_features > 0 && !desc->features))
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "dataset: bad feature list (%d features, features %s)", desc->num_features,
                          desc->features ? "set" : "NULL");
    if (desc->num_features > GPUFEED_MAX_FEATURES)
        return gf__seterr(err, GPUFEED_ERR_LIMIT, "dataset: %d features: the limit is GPUFEED_MAX_FEATURES (%d); define it larger", desc->num_features,
                          (int)GPUFEED_MAX_FEATURES);
    if (desc->num_where < 0 || (desc->num_where > 0 && !desc->where)) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "dataset: bad predicate list");
    if (desc->layout != GPUFEED_LAYOUT_ROW_MAJOR && desc->layout != GPUFEED_LAYOUT_PER_FEATURE)
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "dataset: unknown layout %d", desc->layout);
    if (desc->unit_rows < 0) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "dataset: negative unit_rows");
    if (desc->unit_bytes < -1) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "dataset: unit_bytes %lld (0: the default, -1: no bound)",
                                                 (long long)desc->unit_bytes);
    ds = (gpufeed_dataset *)gf__alloc(&desc->allocator, sizeof *ds);
    if (!ds) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "dataset: out of memory");
    memset(ds, 0, sizeof *ds);
    ds->alloc = desc->allocator;
    ds->arena.a = &ds->alloc;
    ds->flags = desc->flags;
    ds->layout = desc->layout;
    ds->unit_rows = desc->unit_rows ? desc->unit_rows : 65536;
    ds->unit_bytes = desc->unit_bytes ? desc->unit_bytes : GPUFEED_UNIT_BYTES;
    r = gf__dataset_open_predicates(ds, desc, err); /* first: partition keys prune files */
    if (!r) r = gf__dataset_open_files(ds, desc, err);
    if (!r) r = gf__dataset_open_features(ds, desc, err);
    if (!r) r = gf__dataset_open_bind(ds, err);
    if (!r) { /* before the plan's walk of the page headers reads any page in */
        int32_t i;
        for (i = 0; i < ds->nfiles; i++) gf__dataset_map_huge(ds, i);
    }
    if (!r) r = gf__dataset_open_plan(ds, err);
    if (r) {
        gf__dataset_free(ds);
        return r;
    }
    if (ds->total_rows == 0) {
        r = gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "dataset: the %d file(s) hold no rows (first: %s)", ds->nfiles, ds->paths[0]);
        gf__dataset_free(ds); return r;
    }
#if !defined(GPUFEED_NO_STDIO)
    {
        int32_t i;
        uint64_t left = (uint64_t)GPUFEED_KEEP_BYTES;
        for (i = 0; i < ds->nfiles; i++) gf__file_unmap_all(ds->files[i]); /* the plan's page walk touched the files: nothing of them is needed yet */
        for (i = 0; i < ds->nfiles; i++) { /* what a loader keeps mapped: the first files' first bytes */
            gpufeed_file *f = ds->files[i];
            const uint64_t ps = f->map_page ? f->map_page : 4096;
            uint64_t k = f->map ? (f->map_len < left ? f->map_len : left) : 0;
            if (k < f->map_len) k = k / ps * ps; /* a partly kept file: whole pages */
            f->keep_to = k;
            left -= k;
        }
    }
#endif
    *out = ds;
    return GPUFEED_OK;
}

GPUFEED_API void gpufeed_dataset_get_info(const gpufeed_dataset *ds, gpufeed_dataset_info *info)
{
    memset(info, 0, sizeof *info);
    if (!ds) return;
    info->num_files = ds->nfiles;
    info->num_features = ds->nfeat;
    info->num_units = ds->nunits;
    info->num_rows = ds->num_rows; info->total_rows = ds->total_rows;
    info->row_groups = ds->rgs; info->row_groups_pruned = ds->rgs_pruned;
    info->row_bytes = ds->row_bytes; info->layout = ds->layout;
}
GPUFEED_API const gpufeed_feature *gpufeed_dataset_feature(const gpufeed_dataset *ds, int32_t i)
{
    return (ds && i >= 0 && i < ds->nfeat) ? &ds->feats[i] : NULL;
}
GPUFEED_API const char *gpufeed_dataset_file_path(const gpufeed_dataset *ds, int32_t file)
{
    return (ds && file >= 0 && file < ds->nfiles) ? ds->paths[file] : NULL;
}
GPUFEED_API const gpufeed_unit *gpufeed_dataset_unit(const gpufeed_dataset *ds, int64_t i)
{
    return (ds && i >= 0 && i < ds->nunits) ? &ds->units[i].u : NULL;
}
GPUFEED_API uint64_t gpufeed_dataset_bytes_read(const gpufeed_dataset *ds)
{
#if defined(__GNUC__) || defined(__clang__)
    return ds ? __atomic_load_n(&ds->bytes_read, __ATOMIC_RELAXED) : 0;
#else
    return ds ? ds->bytes_read : 0;
#endif
}

GPUFEED_API uint64_t gpufeed_dataset_read_us(const gpufeed_dataset *ds)
{
#if defined(__GNUC__) || defined(__clang__)
    return ds ? __atomic_load_n(&ds->read_us, __ATOMIC_RELAXED) : 0;
#else
    return ds ? ds->read_us : 0;
#endif
}

GPUFEED_API void gpufeed_dataset_remote_stats(const gpufeed_dataset *ds, gpufeed_remote_stats *st)
{
    if (st) gf__remote_stats(ds ? ds->remote : NULL, st);
}

/* ---- per-thread decoder state ---- */

struct gpufeed_scratch {
    gpufeed_dataset *ds;
    uint8_t *stage;                    /* row-major, every feature 4 or 8 bytes: the
                                          tile's features column by column, then
                                          transposed into the rows */
    int32_t stage_w;                   /* that width, 0: features go straight to rows */
    int64_t step;                      /* rows of a unit a pass over the features reads */
    int share;                         /* a loader's worker: dictionaries of split row groups shared */
    uint64_t *wr; size_t wr_cap;       /* a unit's byte ranges for will_read */
    uint8_t *dspare; size_t dspare_cap; /* a raw dictionary page buffer, lent to columns */
    int32_t j0, j1;                    /* the features this scratch decodes (a threaded
                                          reader splits them; the predicates are every
                                          scratch's) */
    gf__dcol *dc;                      /* [j1 - j0]: feature j's is GF__DC(s, j) */
    gf__dtmp *tmp;                     /* the scalar features' working tiles ... */
    gpufeed_column tiles;              /* ... and output tile (out, valid, lv) */
    gpufeed_column **pc;               /* [npred] spaced readers */
    uint8_t mask[GF__TILE];
    int64_t unit;                      /* unit positioned, -1 none */
    int64_t left;                      /* rows of the unit not yet read */
    uint64_t last_bytes;               /* source bytes of the last decode */
    struct gf__relq relq;              /* mapped bytes done with, let go in batches */
    struct gf__rgplan *pend;           /* a row group to let go at the next unit (gf__scratch_rg_end) */
    int rgmode;                        /* decoding a unit: split row groups go whole */
    int own;                           /* a column-parallel loader's worker: its columns' chunks
                                          are read by it alone, unit after unit, so their bytes
                                          go as read, not with the row group */
    char err[GPUFEED_ERROR_MAX];
};

#define GF__DC(s, j) ((s)->dc[(j) - (s)->j0])

/* a scratch's column: its output tile (GF__TILE values), or the one `lend`
   shares (a scalar feature's: lend->out, valid and lv) */
static gpufeed_result gf__col_init_buffers(gpufeed_column *c, const gpufeed_allocator *a, uint32_t flags, const gpufeed_column *lend)
{
    c->max_rows = GF__TILE;
    c->flags = flags;
    c->lent = lend != NULL;
    c->out = lend ? lend->out : gf__alloc(a, (size_t)GF__TILE * 16);
    c->valid = lend ? lend->valid : (uint8_t *)gf__alloc(a, GF__TILE);
    c->lv = lend ? lend->lv : (uint32_t *)gf__alloc(a, (size_t)GF__TILE * sizeof(uint32_t));
    if (flags & GPUFEED_OPEN_VERIFY_CRC) {
        c->crc = (gf__crc_tab *)gf__alloc(a, sizeof *c->crc);
        if (c->crc) gf__crc_init(c->crc);
    }
    if (!c->out || !c->valid || !c->lv || ((flags & GPUFEED_OPEN_VERIFY_CRC) && !c->crc)) return GPUFEED_ERR_OUT_OF_MEMORY;
    return GPUFEED_OK;
}

#ifndef GPUFEED_NO_STDIO
static void gf__scratch_rg_pending(gpufeed_scratch *s, const gf__rgplan *next);
#endif
GPUFEED_API void gpufeed_scratch_close(gpufeed_scratch *s)
{
    int32_t i;
    const gpufeed_allocator *a;
    if (!s) return;
    a = &s->ds->alloc;
#ifndef GPUFEED_NO_STDIO
    gf__scratch_rg_pending(s, NULL);
#endif
    (void)gf__relq_flush(&s->relq);
    if (s->dc) for (i = s->j0; i < s->j1; i++) {
        if (GF__DC(s, i).dent >= 0) gf__dcache_release(gf__dcache_load(&s->ds->dcache), GF__DC(s, i).dent);
        gf__col_free_buffers(&GF__DC(s, i).c, a);
        gf__free(a, GF__DC(s, i).dconv); gf__free(a, GF__DC(s, i).dbad);
        gf__free(a, GF__DC(s, i).town);
    }
    gf__col_free_buffers(&s->tiles, a);
    gf__free(a, s->tmp);
    if (s->pc) for (i = 0; i < s->ds->npred; i++) if (s->pc[i]) { gf__col_free_buffers(s->pc[i], a); gf__free(a, s->pc[i]); }
    gf__free(a, s->dc);
    gf__free(a, s->pc);
    gf__free(a, s->stage);
    gf__free(a, s->dspare);
    gf__free(a, s->wr);
    gf__free(a, s);
}

static gpufeed_result gf__scratch_open_range(gpufeed_dataset *ds, int32_t j0, int32_t j1, gpufeed_scratch **out);
GPUFEED_API gpufeed_result gpufeed_scratch_open(gpufeed_scratch **out, gpufeed_dataset *ds, gpufeed_error *err)
{
    gpufeed_result r;
    if (err) {
        err->code = GPUFEED_OK;
        err->message[0] = 0;
    }
    if (!out) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "gpufeed_scratch_open: out is NULL");
    *out = NULL;
    if (!ds) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "gpufeed_scratch_open: dataset is NULL");
    r = gf__scratch_open_range(ds, 0, ds->nfeat, out);
    if (r) return gf__seterr(err, r, "scratch: out of memory");
    return GPUFEED_OK;
}
static gpufeed_result gf__scratch_open_range(gpufeed_dataset *ds, int32_t j0, int32_t j1, gpufeed_scratch **out)
{
    gpufeed_scratch *s;
    int32_t i;
    *out = NULL;
    s = (gpufeed_scratch *)gf__alloc(&ds->alloc, sizeof *s);
    if (!s) return GPUFEED_ERR_OUT_OF_MEMORY;
    memset(s, 0, sizeof *s);
    s->ds = ds; s->unit = -1;
    s->j0 = j0; s->j1 = j1;
    s->dc = (gf__dcol *)gf__alloc(&ds->alloc, (size_t)(j1 > j0 ? j1 - j0 : 1) * sizeof(gf__dcol));
    s->pc = (gpufeed_column **)gf__alloc(&ds->alloc, (size_t)(ds->npred ? ds->npred : 1) * sizeof(gpufeed_column *));
    if (!s->dc || !s->pc) {
        gf__free(&ds->alloc, s->dc);
        gf__free(&ds->alloc, s->pc);
        s->dc = NULL;
        s->pc = NULL;
        gpufeed_scratch_close(s);
        return GPUFEED_ERR_OUT_OF_MEMORY;
    }
    memset(s->dc, 0, (size_t)(j1 > j0 ? j1 - j0 : 1) * sizeof(gf__dcol));
    memset(s->pc, 0, (size_t)(ds->npred ? ds->npred : 1) * sizeof(gpufeed_column *));
    /* the scalar features' shared tiles: a wide table's decoder state is its
       columns' pages and dictionaries, not 57 KiB of tiles a column */
    s->tmp = (gf__dtmp *)gf__alloc(&ds->alloc, sizeof(gf__dtmp));
    if (!s->tmp || gf__col_init_buffers(&s->tiles, &ds->alloc, ds->flags, NULL)) { gpufeed_scratch_close(s); return GPUFEED_ERR_OUT_OF_MEMORY; }
    for (i = j0; i < j1; i++) { /* this scratch's features only: another's are not its memory */
        gf__dcol *d = &GF__DC(s, i);
        const int scalar = !ds->feats[i].width && !ds->feats[i].list_lengths;
        d->dent = -1;
        d->feat = i;
        d->dcp = NULL;
        d->da = &ds->alloc; /* gf__scratch_share */
        if (!scalar) d->town = (gf__dtmp *)gf__alloc(&ds->alloc, sizeof(gf__dtmp));
        if ((!scalar && !d->town) || gf__col_init_buffers(&d->c, &ds->alloc, ds->flags, scalar ? &s->tiles : NULL)) {
            gpufeed_scratch_close(s);
            return GPUFEED_ERR_OUT_OF_MEMORY;
        }
        gf__dcol_tiles(d, scalar ? s->tmp : d->town);
        d->c.spare = &s->dspare; d->c.spare_cap = &s->dspare_cap;
        d->c.relq = &s->relq;
    }
    s->step = GF__TILE;
    if (ds->layout == GPUFEED_LAYOUT_ROW_MAJOR && j1 - j0 >= 2) { /* the staging tile */
        size_t w = gpufeed_feature_bytes(&ds->feats[j0]);
        int same = w == 4 || w == 8, flat = ds->npred == 0;
        for (i = j0; i < j1 && same; i++) same = gpufeed_feature_bytes(&ds->feats[i]) == w && ds->offs[i] - ds->offs[j0] == (int64_t)(w * (size_t)(i - j0));
        for (i = j0; i < j1 && flat; i++) flat = ds->feats[i].width == 0 && !ds->feats[i].list_lengths;
        if (same && w * (size_t)(j1 - j0) * GF__TILE <= ((size_t)4 << 20)) {
            /* scalar features without predicates: as many rows a pass as fit
               GF__STAGE_BYTES, so each column's dictionary and page bytes are
               fetched into the core's cache once for that many rows, not once
               for every GF__TILE */
            if (flat) {
                int64_t st = (int64_t)(GF__STAGE_BYTES / (w * (size_t)(j1 - j0))) / GF__TILE * GF__TILE;
                s->step = st < GF__TILE ? GF__TILE : st > GF__STEP_MAX ? GF__STEP_MAX : st;
            }
            s->stage = (uint8_t *)gf__alloc(&ds->alloc, w * (size_t)(j1 - j0) * (size_t)s->step);
            if (!s->stage) { gpufeed_scratch_close(s); return GPUFEED_ERR_OUT_OF_MEMORY; }
            s->stage_w = (int32_t)w;
        }
    }
    for (i = 0; i < ds->npred; i++) {
        s->pc[i] = (gpufeed_column *)gf__alloc(&ds->alloc, sizeof(gpufeed_column));
        if (!s->pc[i]) { gpufeed_scratch_close(s); return GPUFEED_ERR_OUT_OF_MEMORY; }
        memset(s->pc[i], 0, sizeof(gpufeed_column));
        if (gf__col_init_buffers(s->pc[i], &ds->alloc, ds->flags, NULL)) { gpufeed_scratch_close(s); return GPUFEED_ERR_OUT_OF_MEMORY; }
        s->pc[i]->relq = &s->relq;
    }
    *out = s;
    return GPUFEED_OK;
}
GPUFEED_API const char *gpufeed_scratch_error(const gpufeed_scratch *s) { return s ? s->err : ""; }

/* read ahead no further than the pages holding rows before r1 */
static void gf__col_hint(gpufeed_column *c, const gf__pidx *pi, int64_t r1)
{
    int64_t e = 0;
    if (!pi || pi->n == 0) return;
    while (e < pi->n && pi->first_row[e] < r1) e++;
    c->chunk_end_hint = (e < pi->n && pi->offset[e] > c->start) ? pi->offset[e] : gf__chunk_start(c->ch) + (uint64_t)c->ch->total_compressed_size;
}

/* positions column c at row r0 of its chunk using the page index; d: the
   feature's decoder (NULL for a predicate's column), whose shared
   dictionary, when the dataset's cache has it, serves the skipped rows'
   indices too (they are checked against its size, not gathered), so a
   unit starting inside a page does not read, inflate and convert the
   dictionary page again */
static gpufeed_result gf__col_position(gpufeed_column *c, const gf__pidx *pi, int64_t r0, int64_t r1, gf__dcol *d)
{
    int64_t lo = 0, hi, at;
    gpufeed_result r;
    gf__col_hint(c, pi, r1); /* read ahead no further than the unit's pages */
    if (r0 == 0) return GPUFEED_OK;
    if (!pi || pi->n == 0) return gf__col_skip(c, r0);
    hi = pi->n - 1;
    while (lo < hi) { /* last page with first_row <= r0 */
        int64_t mid = lo + (hi - lo + 1) / 2;
        if (pi->first_row[mid] <= r0) lo = mid; else hi = mid - 1;
    }
    at = pi->first_row[lo] <= r0 ? lo : 0;
    if (pi->first_row[at] > 0 || pi->offset[at] != c->start) {
        r = gf__col_seek(c, pi->offset[at], pi->ordinal[at], pi->first_row[at], pi->first_value ? pi->first_value[at] : pi->first_row[at]);
        if (r) return r;
    }
    if (d && r0 > c->rows_done && c->dict_pending && !c->has_dict && d->dent < 0 && d->dcp && gf__dcache_load(d->dcp)) gf__dcol_shared_dict(d);
    return gf__col_skip(c, r0 - c->rows_done);
}

static gpufeed_result gf__scratch_fail_col(gpufeed_scratch *s, const gpufeed_column *c, gpufeed_result r)
{
    gf__fmt(s->err, sizeof s->err, "%s", c->err);
    return r;
}

/* Tells a source with a will_read hook which byte ranges the unit reads:
   per column, its dictionary page (from the chunk start to the first data
   page) and the data pages that hold the unit's rows (the whole chunk
   without a page index). Ranges are sorted and merged where they touch. */
static void gf__scratch_will_read(gpufeed_scratch *s, const gf__unitx *ux, gpufeed_file *f, const gf__bind *bind,
                                  const gf__rgplan *pl, int32_t nb)
{
    uint64_t *off, *len;
    int32_t n = 0, j, a, b;
    if (!f->src.will_read || f->map || nb <= 0) return;
    if (s->wr_cap < (size_t)nb * 4) { /* grown once */
        uint64_t *w = (uint64_t *)gf__realloc(&s->ds->alloc, s->wr, (size_t)nb * 4 * sizeof(uint64_t));
        if (!w) return; /* only a hint */
        s->wr = w; s->wr_cap = (size_t)nb * 4;
    }
    off = s->wr;
    len = off + 2 * nb;
    for (j = 0; j < nb; j++) {
        const gpufeed_chunk_info *ch;
        uint64_t st, en, lo, hi;
        const gf__pidx *pi = pl ? &pl->idx[j] : NULL;
        if (bind[j].col < 0) continue; /* a value the file does not hold */
        ch = &f->md.row_groups[ux->u.row_group].chunks[bind[j].col];
        st = gf__chunk_start(ch);
        en = st + (uint64_t)ch->total_compressed_size;
        lo = st;
        hi = en;
        if (en > f->data_end || en < st) continue; /* a lying size: the reader reports it */
        if (pi && pi->n > 0) {
            int64_t e = 0, b0 = 0, r0 = ux->u.first_row, r1 = ux->u.first_row + ux->u.num_rows;
            while (b0 + 1 < pi->n && pi->first_row[b0 + 1] <= r0) b0++;
            while (e < pi->n && pi->first_row[e] < r1) e++;
            lo = pi->offset[b0];
            if (e < pi->n && pi->offset[e] > lo && pi->offset[e] <= en) hi = pi->offset[e];
            if (lo < st || lo > hi) { lo = st; hi = en; }
            if (pi->offset[0] > st && lo > st) {
                off[n] = st;
                len[n] = pi->offset[0] - st;
                n++;
            } /* dictionary */
        }
        off[n] = lo;
        len[n] = hi - lo;
        n++;
    }
    for (a = 1; a < n; a++) { /* insertion sort by offset */
        uint64_t o = off[a], l = len[a];
        for (b = a; b > 0 && off[b - 1] > o; b--) { off[b] = off[b - 1]; len[b] = len[b - 1]; }
        off[b] = o; len[b] = l;
    }
    for (a = 0, b = 0; a < n; a++) {
        if (b > 0 && off[a] <= off[b - 1] + len[b - 1]) {
            uint64_t e = off[a] + len[a];
            if (e > off[b - 1] + len[b - 1]) len[b - 1] = e - off[b - 1];
        } else {
            off[b] = off[a];
            len[b] = len[a];
            b++;
        }
    }
    if (b > 0) f->src.will_read(f->src.ctx, off, len, b);
}

/* Points every decoder at the unit's first row. */
static gpufeed_result gf__scratch_begin(gpufeed_scratch *s, int64_t unit)
{
    gpufeed_dataset *ds = s->ds;
    const gf__unitx *ux = &ds->units[unit];
    gpufeed_file *f = ds->files[ux->u.file];
    const int32_t nb = ds->nfeat + ds->npred;
    const gf__bind *bind = &ds->bind[(size_t)ux->u.file * (size_t)nb];
    const gf__rgplan *pl = ux->plan >= 0 ? &ds->plans[ux->plan] : NULL;
    gpufeed_error e;
    gpufeed_result r;
    int32_t j;
    if (s->share)
        for (j = s->j0; j < s->j1; j++) GF__DC(s, j).dcp = ux->plan >= 0 ? &ds->dcache : NULL;
    gf__scratch_will_read(s, ux, f, bind, pl, nb);
    for (j = 0; j < nb; j++) {
        gpufeed_column *c;
        if (j < ds->nfeat && (j < s->j0 || j >= s->j1)) continue; /* another scratch's feature */
        c = j < ds->nfeat ? &GF__DC(s, j).c : s->pc[j - ds->nfeat];
        if (j < ds->nfeat) {
            GF__DC(s, j).virt = bind[j].virt;
            memcpy(GF__DC(s, j).vval, bind[j].vval, 8);
        }
        if (bind[j].col < 0) continue; /* a partition value, nulls, or a predicate settled for the file */
        if (c->f == f && c->rg == ux->u.row_group && c->col == bind[j].col && !c->failed && c->rows_done == ux->u.first_row && ux->u.first_row > 0) {
            /* the previous unit ended where this one starts: read on */
            if (pl) gf__col_hint(c, &pl->idx[j], ux->u.first_row + ux->u.num_rows);
            c->rgrel = pl && s->rgmode && !s->own;
            continue;
        }
        r = gf__col_target(c, f, ux->u.row_group, bind[j].col, &e);
        if (r) { gf__fmt(s->err, sizeof s->err, "%s", e.message); return r; }
        c->rgrel = pl && s->rgmode && !s->own;
        if (j < ds->nfeat) {
            gf__dcol *d = &GF__DC(s, j);
            d->conv = bind[j].conv;
            d->decimal_bytes = bind[j].decimal_bytes;
            d->f16 = bind[j].f16;
            d->uint32_src = bind[j].uint32_src;
            d->dec_scale = bind[j].dec_scale; d->dec_int = bind[j].dec_int;
            d->name = ds->feats[j].column;
            d->seed = ds->feats[j].hash_seed;
            d->width = ds->feats[j].width;
            d->list_policy = ds->feats[j].list_policy;
            d->lengths = ds->feats[j].list_lengths;
            if (!c->has_dict) { /* another chunk: let go of its dictionary */
                d->dconv_ok = 0;
                gf__dcache_release(gf__dcache_load(&ds->dcache), d->dent);
                d->dent = -1;
            } /* else the converted dictionary (keyed by dict_gen) still holds */
        }
        r = gf__col_position(c, pl ? &pl->idx[j] : NULL, ux->u.first_row, ux->u.first_row + ux->u.num_rows, j < ds->nfeat ? &GF__DC(s, j) : NULL);
        if (r) return gf__scratch_fail_col(s, c, r);
    }
    s->unit = unit;
    s->left = ux->u.num_rows;
    return GPUFEED_OK;
}

/* an approximate double of a big-endian two's complement of any length */
static double gf__be_to_double(const uint8_t *p, uint32_t n)
{
    double d = 0;
    uint32_t i;
    int neg = n > 0 && (p[0] & 0x80);
    for (i = 0; i < n; i++) d = d * 256.0 + (double)(neg ? (uint8_t)~p[i] : p[i]);
    return neg ? -(d + 1.0) : d;
}

/* value i (spaced) of a predicate reader's batch matches the predicate? */
static int gf__match_value(const gpufeed_column *c, const gpufeed_column_batch *b, int64_t i, const gpufeed_predicate *p)
{
    const gpufeed_schema_node *n = &c->f->md.nodes[c->ci->node];
    int present = !b->valid || b->valid[i];
    int kind; /* 0 int, 1 uint, 2 double, 3 bytes */
    int64_t iv = 0;
    uint64_t uv = 0;
    double dv = 0;
    gpufeed_bytes bv;
    int32_t k, nv, scale = 0;
    int cmp[2] = { 0, 0 };
    bv.ptr = NULL; bv.len = 0;
    if (p->op == GPUFEED_OP_IS_NULL) return !present;
    if (p->op == GPUFEED_OP_IS_NOT_NULL) return present;
    if (!present) return 0;
    switch (c->ci->physical) {
    case GPUFEED_BOOLEAN:
        kind = 0;
        iv = ((const uint8_t *)b->values)[i];
        break;
    case GPUFEED_INT32: {
        int32_t x = ((const int32_t *)b->values)[i];
        if (n->logical == GPUFEED_LT_INTEGER && !n->int_signed) { kind = 1; uv = (uint32_t)x; }
        else { kind = 0; iv = x; }
        break;
    }
    case GPUFEED_INT64: case GPUFEED_INT96: {
        int64_t x = ((const int64_t *)b->values)[i];
        if (n->logical == GPUFEED_LT_INTEGER && !n->int_signed) { kind = 1; uv = (uint64_t)x; }
        else { kind = 0; iv = x; }
        break;
    }
    case GPUFEED_FLOAT:
        kind = 2;
        dv = ((const float *)b->values)[i];
        break;
    case GPUFEED_DOUBLE:
        kind = 2;
        dv = ((const double *)b->values)[i];
        break;
    default:
        bv = ((const gpufeed_bytes *)b->values)[i];
        if (n->logical == GPUFEED_LT_FLOAT16 && bv.len == 2) { kind = 2; dv = gpufeed_half_to_float(gf__ld16(bv.ptr)); }
        else if (n->logical == GPUFEED_LT_DECIMAL) {
            if (gf__be_to_i64(bv.ptr, bv.len, &iv)) kind = 0;
            else {
                kind = 2;
                dv = gf__be_to_double(bv.ptr, bv.len);
                while (scale < n->scale) { dv /= 10.0; scale++; }
                scale = 0;
            }
        }
        else kind = 3;
        break;
    }
    if (n->logical == GPUFEED_LT_DECIMAL && kind == 0) scale = n->scale;
    nv = p->op == GPUFEED_OP_IN ? p->set_size : p->op == GPUFEED_OP_BETWEEN ? 2 : 1;
    for (k = 0; k < nv; k++) {
        const gpufeed_value *cv = p->op == GPUFEED_OP_IN ? &p->set[k] : k ? &p->b : &p->a;
        int r;
        if (kind == 3) {
            uint32_t m;
            if (cv->kind != GPUFEED_VAL_STRING) return 0;
            m = bv.len < cv->len ? bv.len : (uint32_t)cv->len;
            r = m ? memcmp(bv.ptr, cv->s, m) : 0;
            r = r ? (r < 0 ? -1 : 1) : (bv.len < cv->len ? -1 : bv.len > cv->len ? 1 : 0);
        } else {
            if (cv->kind == GPUFEED_VAL_STRING) return 0;
            r = gf__cmp_num(kind, iv, uv, dv, scale, cv);
        }
        if (p->op == GPUFEED_OP_IN) { if (r == 0) return 1; continue; }
        if (r == 2) return 0;
        cmp[k] = r;
    }
    switch (p->op) {
    case GPUFEED_OP_LT: return cmp[0] < 0;
    case GPUFEED_OP_LE: return cmp[0] <= 0;
    case GPUFEED_OP_EQ: return cmp[0] == 0;
    case GPUFEED_OP_GE: return cmp[0] >= 0;
    case GPUFEED_OP_GT: return cmp[0] > 0;
    case GPUFEED_OP_BETWEEN: return cmp[0] >= 0 && cmp[1] <= 0;
    default: return 0;
    }
}

/* out[i][j] = in[j][i] for k rows (rb bytes apart in out) of F features of
   w (4 or 8) bytes: blocks of 16 rows, so the rows written stay in L1
   while the columns stream in */
static void gf__transpose(uint8_t *out, size_t rb, const uint8_t *in, int64_t k, int32_t F, int32_t w)
{
    int64_t i0, i;
    int32_t j;
    for (i0 = 0; i0 < k; i0 += 16) {
        int64_t i1 = i0 + 16 < k ? i0 + 16 : k;
        j = 0;
#if defined(GF__SSE2) || defined(GF__NEON)
        if (w == 4 && i1 - i0 == 16) { /* 4 x 4 blocks */
            for (; j + 4 <= F; j += 4) {
                const uint8_t *c0 = in + ((size_t)j * (size_t)k) * 4;
                for (i = i0; i < i1; i += 4) {
                    const size_t o = (size_t)i * 4;
                    uint8_t *r = out + (size_t)i * rb + (size_t)j * 4;
#if defined(GF__SSE2)
                    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(c0 + o));
                    __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(c0 + (size_t)k * 4 + o));
                    __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(c0 + (size_t)k * 8 + o));
                    __m128i d = _mm_loadu_si128((const __m128i *)(const void *)(c0 + (size_t)k * 12 + o));
                    __m128i ab0 = _mm_unpacklo_epi32(a, b), ab1 = _mm_unpackhi_epi32(a, b);
                    __m128i cd0 = _mm_unpacklo_epi32(c, d), cd1 = _mm_unpackhi_epi32(c, d);
                    _mm_storeu_si128((__m128i *)(void *)r, _mm_unpacklo_epi64(ab0, cd0));
                    _mm_storeu_si128((__m128i *)(void *)(r + rb), _mm_unpackhi_epi64(ab0, cd0));
                    _mm_storeu_si128((__m128i *)(void *)(r + 2 * rb), _mm_unpacklo_epi64(ab1, cd1));
                    _mm_storeu_si128((__m128i *)(void *)(r + 3 * rb), _mm_unpackhi_epi64(ab1, cd1));
#else
                    uint32x4_t a = vld1q_u32((const uint32_t *)(const void *)(c0 + o));
                    uint32x4_t b = vld1q_u32((const uint32_t *)(const void *)(c0 + (size_t)k * 4 + o));
                    uint32x4_t c = vld1q_u32((const uint32_t *)(const void *)(c0 + (size_t)k * 8 + o));
                    uint32x4_t d = vld1q_u32((const uint32_t *)(const void *)(c0 + (size_t)k * 12 + o));
                    uint32x4x2_t ab = vtrnq_u32(a, b), cd = vtrnq_u32(c, d);
                    vst1q_u32((uint32_t *)(void *)r, vcombine_u32(vget_low_u32(ab.val[0]), vget_low_u32(cd.val[0])));
                    vst1q_u32((uint32_t *)(void *)(r + rb), vcombine_u32(vget_low_u32(ab.val[1]), vget_low_u32(cd.val[1])));
                    vst1q_u32((uint32_t *)(void *)(r + 2 * rb), vcombine_u32(vget_high_u32(ab.val[0]), vget_high_u32(cd.val[0])));
                    vst1q_u32((uint32_t *)(void *)(r + 3 * rb), vcombine_u32(vget_high_u32(ab.val[1]), vget_high_u32(cd.val[1])));
#endif
                }
            }
        } else if (w == 8 && i1 - i0 == 16) { /* 2 x 2 blocks */
            for (; j + 2 <= F; j += 2) {
                const uint8_t *c0 = in + ((size_t)j * (size_t)k) * 8;
                for (i = i0; i < i1; i += 2) {
                    const size_t o = (size_t)i * 8;
                    uint8_t *r = out + (size_t)i * rb + (size_t)j * 8;
#if defined(GF__SSE2)
                    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(c0 + o));
                    __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(c0 + (size_t)k * 8 + o));
                    _mm_storeu_si128((__m128i *)(void *)r, _mm_unpacklo_epi64(a, b));
                    _mm_storeu_si128((__m128i *)(void *)(r + rb), _mm_unpackhi_epi64(a, b));
#else
                    uint64x2_t a = vld1q_u64((const uint64_t *)(const void *)(c0 + o));
                    uint64x2_t b = vld1q_u64((const uint64_t *)(const void *)(c0 + (size_t)k * 8 + o));
                    vst1q_u64((uint64_t *)(void *)r, vcombine_u64(vget_low_u64(a), vget_low_u64(b)));
                    vst1q_u64((uint64_t *)(void *)(r + rb), vcombine_u64(vget_high_u64(a), vget_high_u64(b)));
#endif
                }
            }
        }
#endif
        for (; j < F; j++) { /* scalar: the remaining features (all of them without SIMD or in a short block) */
            const uint8_t *src = in + ((size_t)j * (size_t)k) * (size_t)w;
            uint8_t *dst = out + (size_t)j * (size_t)w;
            if (w == 4) for (i = i0; i < i1; i++) memcpy(dst + (size_t)i * rb, src + (size_t)i * 4, 4);
            else for (i = i0; i < i1; i++) memcpy(dst + (size_t)i * rb, src + (size_t)i * 8, 8);
        }
    }
}

/* The loader's workers share converted dictionaries (units of one chunk
   go to different workers, or come back to one out of order); a reader
   that walks the chunks once keeps its own. Only the dictionaries of a
   row group cut into several units are shared (gf__scratch_begin): a
   unit that is a whole row group is the only reader of its dictionaries
   in an epoch, and keeping them for the next epoch measured no faster
   while the cache grew with the dataset (up to GPUFEED_DICT_CACHE_BYTES). */
static void gf__scratch_share(gpufeed_scratch *s)
{
    int32_t i;
    s->share = 1;
    for (i = s->j0; i < s->j1; i++) GF__DC(s, i).dcp = &s->ds->dcache;
}

/* k rows of a feature whose column this unit's file does not hold: its
   partition value in every row, or nulls (the fill, validity 0; with
   null_policy ERROR the first row kept is an error) */
static gpufeed_result gf__virt_rows(const gf__dcol *d, const gpufeed_feature *ft, int64_t k, uint8_t *dst, size_t stride, uint8_t *vout,
                                    const uint8_t *fill, const uint8_t *mask, const char *file, int64_t row0, char *err, size_t cap)
{
    const size_t esz = gpufeed_dtype_size(ft->dtype);
    const int32_t w = ft->width > 0 && !ft->list_lengths ? ft->width : 1;
    const uint8_t *v = d->virt == GF__VIRT_CONST ? d->vval : fill;
    int64_t i;
    int32_t e;
    if (d->virt == GF__VIRT_NULL && ft->null_policy == GPUFEED_NULL_ERROR)
        for (i = 0; i < k; i++)
            if (!mask || mask[i]) {
                gf__fmt(err, cap, "%s: feature '%s': null at row %lld (null policy: error): the file lacks the column (missing=null), or its "
                        "partition value is null", file, ft->column, (long long)(row0 + i));
                return GPUFEED_ERR_CORRUPT;
            }
    for (i = 0; i < k; i++)
        for (e = 0; e < w; e++) memcpy(dst + (size_t)i * stride + (size_t)e * esz, v, esz);
    if (vout) memset(vout, d->virt == GF__VIRT_CONST, (size_t)k);
    return GPUFEED_OK;
}

/* Reads k (<= s->step) rows of the positioned unit into the destination
   at row `at`; drops rows failing the predicates; returns rows kept. */
static gpufeed_result gf__scratch_rows(gpufeed_scratch *s, int64_t k, void *data, void *const *features,
                                       uint8_t *const *valid, int64_t at, int64_t *kept)
{
    gpufeed_dataset *ds = s->ds;
    int32_t j;
    gpufeed_result r;
    int64_t i, w;

    /* the predicates first: null and cast checks apply to kept rows only */
    if (ds->npred) {
        const gf__bind *pb = &ds->bind[(size_t)ds->units[s->unit].u.file * (size_t)(ds->nfeat + ds->npred) + (size_t)ds->nfeat];
        memset(s->mask, 1, (size_t)k);
        for (j = 0; j < ds->npred; j++) {
            gpufeed_column *c = s->pc[j];
            int64_t done = 0;
            if (pb[j].pfix >= 0) { /* settled for the whole file */
                if (!pb[j].pfix) memset(s->mask, 0, (size_t)k);
                continue;
            }
            while (done < k) {
                gpufeed_column_batch b;
                c->max_rows = k - done;
                r = gpufeed_column_read(c, &b);
                if (r == GPUFEED_DONE) r = gf__col_fail(c, GPUFEED_ERR_CORRUPT, "chunk ended early");
                if (r) return gf__scratch_fail_col(s, c, r);
                for (i = 0; i < b.num_rows; i++)
                    if (s->mask[done + i] && !gf__match_value(c, &b, i, &pb[j].padj)) s->mask[done + i] = 0;
                done += b.num_rows;
            }
        }
    }
    for (j = s->j0; j < s->j1; j++) {
        const gpufeed_feature *ft = &ds->feats[j];
        size_t dsz = gpufeed_feature_bytes(ft);
        uint8_t *dst;
        size_t stride;
        if (s->stage) { dst = s->stage + (size_t)(j - s->j0) * (size_t)k * dsz; stride = dsz; }
        else if (ds->layout == GPUFEED_LAYOUT_ROW_MAJOR) { dst = (uint8_t *)data + at * ds->row_bytes + ds->offs[j]; stride = (size_t)ds->row_bytes; }
        else { dst = (uint8_t *)features[j] + (size_t)at * dsz; stride = dsz; }
        if (GF__DC(s, j).virt)
            r = gf__virt_rows(&GF__DC(s, j), ft, k, dst, stride, (valid && valid[j]) ? valid[j] + at : NULL, ds->fill[j], ds->npred ? s->mask : NULL,
                              ds->files[ds->units[s->unit].u.file]->name, ds->units[s->unit].u.first_row + ds->units[s->unit].u.num_rows - s->left,
                              s->err, sizeof s->err);
        else if (GF__DC(s, j).c.nested)
            r = gf__dcol_read_list(&GF__DC(s, j), ft->column, k, dst, stride, (valid && valid[j]) ? valid[j] + at : NULL,
                                   ds->fill[j], ft->null_policy == GPUFEED_NULL_ERROR, ds->npred ? s->mask : NULL);
        else
            r = gf__dcol_read(&GF__DC(s, j), ft->column, k, dst, stride, (valid && valid[j]) ? valid[j] + at : NULL,
                              ds->fill[j], ft->null_policy == GPUFEED_NULL_ERROR, ds->npred ? s->mask : NULL);
        if (r) return GF__DC(s, j).virt ? r : gf__scratch_fail_col(s, &GF__DC(s, j).c, r);
    }
    if (s->stage)
        gf__transpose((uint8_t *)data + at * ds->row_bytes + ds->offs[s->j0], (size_t)ds->row_bytes, s->stage, k, s->j1 - s->j0, s->stage_w);
    s->left -= k;
    if (ds->npred == 0) { *kept = k; return GPUFEED_OK; }

    /* compact the kept rows (this scratch's features: row bytes [b0, b1)) */
    {
        const int64_t b0 = s->j0 < s->j1 ? ds->offs[s->j0] : 0;
        const int64_t b1 = s->j0 < s->j1 ? ds->offs[s->j1 - 1] + (int64_t)gpufeed_feature_bytes(&ds->feats[s->j1 - 1]) : 0;
        for (i = 0, w = 0; i < k; i++) {
            if (!s->mask[i]) continue;
            if (w != i) {
                if (ds->layout == GPUFEED_LAYOUT_ROW_MAJOR)
                    memcpy((uint8_t *)data + (at + w) * ds->row_bytes + b0, (uint8_t *)data + (at + i) * ds->row_bytes + b0, (size_t)(b1 - b0));
                else for (j = s->j0; j < s->j1; j++) {
                    size_t dsz = gpufeed_feature_bytes(&ds->feats[j]);
                    memcpy((uint8_t *)features[j] + (size_t)(at + w) * dsz, (uint8_t *)features[j] + (size_t)(at + i) * dsz, dsz);
                }
                for (j = s->j0; j < s->j1; j++) if (valid && valid[j]) valid[j][at + w] = valid[j][at + i];
            }
            w++;
        }
    }
    *kept = w;
    return GPUFEED_OK;
}

#ifndef GPUFEED_NO_STDIO
/* A split row group's bytes, all let go (queued) unless a unit of it is
   being decoded: that unit's end lets them go. */
static void gf__scratch_rg_release(gpufeed_scratch *s, gf__rgplan *pl)
{
    gpufeed_file *f = s->ds->files[pl->file];
    const uint64_t ps = f->map_page ? f->map_page : 1;
    uint64_t hi = (pl->hi + ps - 1) / ps * ps;
    if (gf__atomic_count(&pl->busy, 0) > 0) return;
    if (!f->map) return;
    if (hi > f->map_len) hi = f->map_len;
    if (hi > pl->lo) gf__relq_push(&s->relq, f, pl->lo, hi);
}
/* A unit of a split row group has ended. Its columns' ranges lie apart
   (the other units' bytes between them), so letting them go took a call
   per column, and each call interrupts every core running a worker to
   flush its TLB: on 15 workers, keeping the file mapped was 1.18x faster.
   Instead the last of the row group's units to end (none other being
   decoded) lets the whole row group go in one call, and the others leave
   theirs to it; so resident memory stays bounded by the row groups being
   decoded. When this scratch's columns are still inside the row group,
   its next unit may read on from their pages: the call waits for that
   unit's start (gf__scratch_rg_pending), or for a loader's worker to
   find no unit to start, when it goes before the worker sleeps. */
static void gf__scratch_rg_end(gpufeed_scratch *s, gf__rgplan *pl)
{
    struct gf__relq *q = &s->relq;
    gpufeed_file *f = s->ds->files[pl->file];
    const uint64_t ps = f->map_page ? f->map_page : 1;
    uint64_t lo = pl->lo / ps * ps, hi = (pl->hi + ps - 1) / ps * ps;
    int32_t i, j, n = 0, inside = 0;
    const int32_t left = gf__atomic_count(&pl->busy, -1);
    if (!f->map) return;
    for (i = 0; i < q->n; i++) { /* this unit's ranges: they go with the row group */
        if (q->r[i].f == f && q->r[i].lo >= lo && q->r[i].hi <= hi) {
            uint64_t b = q->r[i].hi - q->r[i].lo;
            q->bytes = q->bytes > b ? q->bytes - b : 0;
            continue;
        }
        q->r[n++] = q->r[i];
    }
    q->n = n;
    if (left > 0) return;
    for (j = s->j0; j < s->ds->nfeat + s->ds->npred && !inside; j++) {
        const gpufeed_column *c = j < s->j1 ? &GF__DC(s, j).c : j < s->ds->nfeat ? NULL : s->pc[j - s->ds->nfeat];
        inside = c && c->f == f && c->rg == pl->rg && !c->failed && c->rows_done < f->md.row_groups[pl->rg].num_rows;
    }
    if (s->pend && s->pend != pl) gf__scratch_rg_release(s, s->pend);
    s->pend = NULL;
    if (inside) s->pend = pl;
    else gf__scratch_rg_release(s, pl);
}
/* at a unit's start: a row group left pending goes unless the unit reads on in it */
static void gf__scratch_rg_pending(gpufeed_scratch *s, const gf__rgplan *next)
{
    if (!s->pend || s->pend == next) return;
    gf__scratch_rg_release(s, s->pend);
    s->pend = NULL;
    gf__relq_unit_end(&s->relq); /* before the next unit maps its pages */
}
#endif

static void gf__scratch_account(gpufeed_scratch *s, gf__rgplan *pl)
{
    int32_t j;
    uint64_t t = 0, us = 0;
#ifndef GPUFEED_NO_STDIO
    for (j = s->j0; j < s->j1; j++) gf__col_unmap_done(&GF__DC(s, j).c);
    for (j = 0; j < s->ds->npred; j++) gf__col_unmap_done(s->pc[j]);
    if (pl && !s->own) gf__scratch_rg_end(s, pl);
    gf__relq_unit_end(&s->relq);
#else
    (void)pl;
#endif
    for (j = s->j0; j < s->j1; j++) {
        t += GF__DC(s, j).c.bytes_read; GF__DC(s, j).c.bytes_read = 0;
        us += GF__DC(s, j).c.read_us; GF__DC(s, j).c.read_us = 0;
    }
    for (j = 0; j < s->ds->npred; j++) {
        t += s->pc[j]->bytes_read; s->pc[j]->bytes_read = 0;
        us += s->pc[j]->read_us; s->pc[j]->read_us = 0;
    }
    s->last_bytes = t;
    if (t) gf__atomic_add(&s->ds->bytes_read, t);
    if (us) gf__atomic_add(&s->ds->read_us, us);
}

GPUFEED_API gpufeed_result gpufeed_dataset_decode_unit(gpufeed_dataset *ds, gpufeed_scratch *s, int64_t unit, void *data,
                                                       void *const *features, uint8_t *const *valid, int64_t *num_rows)
{
    gpufeed_result r;
    gf__rgplan *pl;
    int64_t got = 0;
    if (num_rows) *num_rows = 0;
    if (!ds || !s || s->ds != ds || unit < 0 || unit >= ds->nunits || !num_rows ||
        (ds->layout == GPUFEED_LAYOUT_ROW_MAJOR ? !data : !features))
        return GPUFEED_ERR_INVALID_ARG;
    pl = ds->units[unit].plan >= 0 ? &ds->plans[ds->units[unit].plan] : NULL;
#ifndef GPUFEED_NO_STDIO
    if (pl && !s->own) (void)gf__atomic_count(&pl->busy, 1);
#endif
    s->rgmode = 1;
#ifndef GPUFEED_NO_STDIO
    gf__scratch_rg_pending(s, pl);
#endif
    r = gf__scratch_begin(s, unit);
    while (!r && s->left > 0) {
        int64_t k = s->left < s->step ? s->left : s->step, kept = 0;
        r = gf__scratch_rows(s, k, data, features, valid, got, &kept);
        got += kept;
    }
    gf__scratch_account(s, pl);
    s->rgmode = 0;
    s->unit = -1;
    *num_rows = got;
    return r;
}

/* >>reader --------------------------------------------------------------- */
/* The single-threaded batch reader (with optional helper threads that
   split the features): batches of B rows over all units in dataset order. */

/* A threaded reader's helper: its scratch decodes features [j0, j1) of the
   same rows as every other helper (the predicates too, so every one keeps
   the same rows). */
typedef struct gf__rpart {
    struct gpufeed_reader *r;
    gpufeed_scratch *s;
    int64_t next_unit, filled;
    gpufeed_result res;
#if !defined(GPUFEED_NO_THREADS)
    pthread_t th;
    int started;
#endif
} gf__rpart;

struct gpufeed_reader {
    gpufeed_dataset *ds;
    gpufeed_scratch *s;
    int64_t B;
    int32_t drop_last;
    int32_t T;                         /* parts (threads); part 0 is the caller's (s) */
    gf__rpart *part;
#if !defined(GPUFEED_NO_THREADS)
    pthread_mutex_t mu;
    pthread_cond_t go, finish;
    uint64_t gen;                      /* batches handed out */
    int32_t finished, quit, sync;      /* sync: mu, go and finish exist */
#endif
    void *cdata;
    void *const *cfeat;
    uint8_t *const *cvalid; /* the batch being filled */
    int64_t next_unit;
    int64_t index;
    int done;
    gpufeed_result failed;
    void *buf;                         /* library-owned batch (aligned) */
    void *data;
    void **features;
    uint8_t **valid;
    char err[GPUFEED_ERROR_MAX];
};

static size_t gf__align_up(size_t v)
{
    GPUFEED_ASSERT((GPUFEED_ALIGN & (GPUFEED_ALIGN - 1)) == 0); /* the mask needs a power of two */
    return (v + (GPUFEED_ALIGN - 1)) & ~(size_t)(GPUFEED_ALIGN - 1);
}

/* One batch of B rows in one slab: the row-major data (or each feature's
   array), then each validity mask, every part GPUFEED_ALIGN-aligned. */
static size_t gf__batch_bytes(const gpufeed_dataset *ds, int64_t B)
{
    size_t t = 0;
    int32_t j;
    if (ds->layout == GPUFEED_LAYOUT_ROW_MAJOR) t = gf__align_up((size_t)B * (size_t)ds->row_bytes);
    else for (j = 0; j < ds->nfeat; j++) t += gf__align_up((size_t)B * gpufeed_feature_bytes(&ds->feats[j]));
    for (j = 0; j < ds->nfeat; j++) if (ds->feats[j].validity) t += gf__align_up((size_t)B);
    return t ? t : GPUFEED_ALIGN;
}
static void gf__batch_layout(const gpufeed_dataset *ds, int64_t B, uint8_t *base, void **data, void **feat, uint8_t **valid)
{
    size_t off = 0;
    int32_t j;
    *data = NULL;
    if (ds->layout == GPUFEED_LAYOUT_ROW_MAJOR) { *data = base; off = gf__align_up((size_t)B * (size_t)ds->row_bytes); }
    for (j = 0; j < ds->nfeat; j++) {
        feat[j] = NULL;
        if (ds->layout == GPUFEED_LAYOUT_PER_FEATURE) { feat[j] = base + off; off += gf__align_up((size_t)B * gpufeed_feature_bytes(&ds->feats[j])); }
    }
    for (j = 0; j < ds->nfeat; j++) {
        valid[j] = NULL;
        if (ds->feats[j].validity) { valid[j] = base + off; off += gf__align_up((size_t)B); }
    }
}

/* fills up to B rows with scratch s from unit *next_unit on */
static gpufeed_result gf__reader_fill(gpufeed_reader *r, gpufeed_scratch *s, int64_t *next_unit, void *data, void *const *features,
                                      uint8_t *const *valid, int64_t *filled_out)
{
    gpufeed_result res = GPUFEED_OK;
    int64_t filled = 0;
    while (filled < r->B) {
        int64_t k, kept = 0;
        if (s->unit < 0 || s->left == 0) {
            if (*next_unit >= r->ds->nunits) break;
            res = gf__scratch_begin(s, (*next_unit)++);
            if (res) break;
            continue;
        }
        k = r->B - filled;
        if (k > s->left) k = s->left;
        if (k > s->step) k = s->step;
        res = gf__scratch_rows(s, k, data, features, valid, filled, &kept);
        if (res) break;
        filled += kept;
    }
    gf__scratch_account(s, NULL);
    *filled_out = filled;
    return res;
}

#if !defined(GPUFEED_NO_THREADS)
static void *gf__reader_main(void *arg)
{
    gf__rpart *p = (gf__rpart *)arg;
    gpufeed_reader *r = p->r;
    uint64_t seen = 0;
    for (;;) {
        pthread_mutex_lock(&r->mu);
        while (r->gen == seen && !r->quit) pthread_cond_wait(&r->go, &r->mu);
        if (r->quit) { pthread_mutex_unlock(&r->mu); break; }
        seen = r->gen;
        pthread_mutex_unlock(&r->mu);
        p->res = gf__reader_fill(r, p->s, &p->next_unit, r->cdata, r->cfeat, r->cvalid, &p->filled);
        pthread_mutex_lock(&r->mu);
        r->finished++;
        pthread_cond_signal(&r->finish);
        pthread_mutex_unlock(&r->mu);
    }
    return NULL;
}
#endif

/* the reader's parts: features split by bytes, the splits on 64-byte
   boundaries of the row where the features allow (threads then write
   separate cache lines), a scratch and (past the first) a thread each */
static int gf__reader_parts(gpufeed_reader *r)
{
    gpufeed_dataset *ds = r->ds;
    int32_t t, j = 0;
    int64_t total = 0;
    r->part = (gf__rpart *)gf__alloc(&ds->alloc, (size_t)r->T * sizeof(gf__rpart));
    if (!r->part) return 1;
    memset(r->part, 0, (size_t)r->T * sizeof(gf__rpart));
    if (r->T == 1) {
        if (gpufeed_scratch_open(&r->s, ds, NULL)) return 1;
        r->part[0].r = r; r->part[0].s = r->s;
        return 0;
    }
    for (t = 0; t < ds->nfeat; t++) total += (int64_t)gpufeed_feature_bytes(&ds->feats[t]) + (ds->feats[t].validity ? 1 : 0);
    for (t = 0; t < r->T; t++) {
        int32_t j0 = j, best = -1;
        if (t == r->T - 1) j = ds->nfeat;
        else {
            int64_t want = total * (t + 1) / r->T, acc = 0, bestd = INT64_MAX;
            int32_t q;
            for (q = 0; q < ds->nfeat; q++) {
                acc += (int64_t)gpufeed_feature_bytes(&ds->feats[q]) + (ds->feats[q].validity ? 1 : 0);
                if (q + 1 > j0 && q + 1 < ds->nfeat - (r->T - 1 - t) + 1) {
                    int64_t dd = acc > want ? acc - want : want - acc;
                    if (ds->layout == GPUFEED_LAYOUT_ROW_MAJOR && (ds->offs[q] + (int64_t)gpufeed_feature_bytes(&ds->feats[q])) % 64 != 0) dd += 64;
                    if (dd < bestd) { bestd = dd; best = q + 1; }
                }
            }
            j = best > j0 ? best : j0 + 1;
        }
        r->part[t].r = r;
        if (gf__scratch_open_range(ds, j0, j, &r->part[t].s)) return 1;
    }
    r->s = r->part[0].s;
#if !defined(GPUFEED_NO_THREADS)
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->go, NULL);
    pthread_cond_init(&r->finish, NULL);
    r->sync = 1;
    for (t = 1; t < r->T; t++) {
        if (pthread_create(&r->part[t].th, NULL, gf__reader_main, &r->part[t]) != 0) return 1;
        r->part[t].started = 1;
    }
#endif
    return 0;
}

GPUFEED_API gpufeed_result gpufeed_reader_open(gpufeed_reader **out, gpufeed_dataset *ds, const gpufeed_reader_desc *desc, gpufeed_error *err)
{
    gpufeed_reader *r;
    size_t total = 0, off;
    uint64_t chk;
    if (err) { err->code = GPUFEED_OK; err->message[0] = 0; }
    if (!out) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "gpufeed_reader_open: out is NULL");
    *out = NULL;
    if (!ds || !desc) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "gpufeed_reader_open: dataset or desc is NULL");
    if (desc->batch_rows <= 0) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "reader: batch_rows must be positive (got %lld)", (long long)desc->batch_rows);
    if (desc->last_batch != GPUFEED_KEEP_LAST && desc->last_batch != GPUFEED_DROP_LAST)
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "reader: unknown last_batch %d", desc->last_batch);
    if (!gf__mul_ok_u64((uint64_t)desc->batch_rows, (uint64_t)ds->row_bytes + (uint64_t)ds->nfeat * (GPUFEED_ALIGN + 1), &chk) || chk > ((uint64_t)1 << 40))
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "reader: batch of %lld rows x %lld bytes is too large", (long long)desc->batch_rows,
                          (long long)ds->row_bytes);
    r = (gpufeed_reader *)gf__alloc(&ds->alloc, sizeof *r);
    if (!r) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "reader: out of memory");
    memset(r, 0, sizeof *r);
    r->ds = ds;
    r->B = desc->batch_rows;
    r->drop_last = desc->last_batch;
    if (desc->threads < 0 || desc->threads > GPUFEED_MAX_WORKERS) {
        gpufeed_reader_close(r);
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "reader: threads must be 1..%d (got %d)", GPUFEED_MAX_WORKERS, desc->threads);
    }
    r->T = 1;
#if !defined(GPUFEED_NO_THREADS)
    r->T = desc->threads > 1 ? desc->threads : 1;
    if (r->T > ds->nfeat) r->T = ds->nfeat > 0 ? ds->nfeat : 1;
#endif
    if (gf__reader_parts(r)) { gpufeed_reader_close(r); return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "reader: out of memory"); }
    r->features = (void **)gf__alloc(&ds->alloc, (size_t)ds->nfeat * sizeof(void *));
    r->valid = (uint8_t **)gf__alloc(&ds->alloc, (size_t)ds->nfeat * sizeof(uint8_t *));
    if (!r->features || !r->valid) { gpufeed_reader_close(r); return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "reader: out of memory"); }

    /* one slab: data (row-major) or each feature, then the masks */
    total = gf__batch_bytes(ds, r->B);
    r->buf = gf__alloc(&ds->alloc, total + GPUFEED_ALIGN);
    if (!r->buf) {
        gpufeed_reader_close(r);
        return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "reader: out of memory for a %llu-byte batch", (unsigned long long)total);
    }
    off = gf__align_up((size_t)(uintptr_t)r->buf) - (size_t)(uintptr_t)r->buf;
    gf__batch_layout(ds, r->B, (uint8_t *)r->buf + off, &r->data, r->features, r->valid);
    *out = r;
    return GPUFEED_OK;
}

GPUFEED_API gpufeed_result gpufeed_reader_next_into(gpufeed_reader *r, void *data, void *const *features, uint8_t *const *valid, int64_t *num_rows)
{
    gpufeed_dataset *ds;
    int64_t filled = 0;
    gpufeed_result res = GPUFEED_OK;
    if (!r || !num_rows) return GPUFEED_ERR_INVALID_ARG;
    *num_rows = 0;
    ds = r->ds;
    if (ds->layout == GPUFEED_LAYOUT_ROW_MAJOR ? !data : !features) return GPUFEED_ERR_INVALID_ARG;
    if (r->failed) return r->failed;
    if (r->done) return GPUFEED_DONE;
    if (r->T <= 1) {
        res = gf__reader_fill(r, r->s, &r->next_unit, data, features, valid, &filled);
        if (res) {
            gf__fmt(r->err, sizeof r->err, "%s", r->s->err);
            r->failed = res;
            return res;
        }
    }
#if !defined(GPUFEED_NO_THREADS)
    else { /* every part fills its features of the batch; the first failure (by part) wins */
        int32_t t;
        pthread_mutex_lock(&r->mu);
        r->cdata = data;
        r->cfeat = features;
        r->cvalid = valid;
        r->finished = 0;
        r->gen++;
        pthread_cond_broadcast(&r->go);
        pthread_mutex_unlock(&r->mu);
        r->part[0].res = gf__reader_fill(r, r->part[0].s, &r->part[0].next_unit, data, features, valid, &r->part[0].filled);
        pthread_mutex_lock(&r->mu);
        while (r->finished < r->T - 1) pthread_cond_wait(&r->finish, &r->mu);
        pthread_mutex_unlock(&r->mu);
        for (t = 0; t < r->T; t++)
            if (r->part[t].res) {
                gf__fmt(r->err, sizeof r->err, "%s", r->part[t].s->err);
                return r->failed = r->part[t].res;
            }
        for (t = 1; t < r->T; t++)
            if (r->part[t].filled != r->part[0].filled) {
                gf__fmt(r->err, sizeof r->err, "reader: internal error: its threads filled %lld and %lld rows", (long long)r->part[0].filled,
                        (long long)r->part[t].filled);
                return r->failed = GPUFEED_ERR_PLATFORM;
            }
        filled = r->part[0].filled;
    }
#endif
    if (filled == 0 || (filled < r->B && r->drop_last)) { r->done = 1; return GPUFEED_DONE; }
    *num_rows = filled;
    r->index++;
    return GPUFEED_OK;
}

GPUFEED_API gpufeed_result gpufeed_reader_next(gpufeed_reader *r, gpufeed_batch *out)
{
    gpufeed_result res;
    int64_t n = 0;
    if (!r || !out) return GPUFEED_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    res = gpufeed_reader_next_into(r, r->data, r->features, r->valid, &n);
    if (res) return res;
    out->num_rows = n;
    out->index = r->index - 1;
    out->data = r->data;
    out->row_bytes = r->ds->row_bytes;
    out->feature_offset = r->ds->offs;
    out->feature_info = r->ds->feats; out->num_features = r->ds->nfeat;
    out->features = r->features;
    out->valid = r->valid;
    return GPUFEED_OK;
}

GPUFEED_API const char *gpufeed_reader_error(const gpufeed_reader *r) { return r ? r->err : ""; }

GPUFEED_API void gpufeed_reader_close(gpufeed_reader *r)
{
    const gpufeed_allocator *a;
    int32_t t;
    if (!r) return;
    a = &r->ds->alloc;
#if !defined(GPUFEED_NO_THREADS)
    if (r->sync) {
        pthread_mutex_lock(&r->mu);
        r->quit = 1;
        pthread_cond_broadcast(&r->go);
        pthread_mutex_unlock(&r->mu);
        for (t = 1; t < r->T; t++) if (r->part[t].started) pthread_join(r->part[t].th, NULL);
        pthread_mutex_destroy(&r->mu);
        pthread_cond_destroy(&r->go);
        pthread_cond_destroy(&r->finish);
    }
#endif
    if (r->part) for (t = 0; t < r->T; t++) if (r->part[t].s != r->s) gpufeed_scratch_close(r->part[t].s);
    gf__free(a, r->part);
    gpufeed_scratch_close(r->s);
    gf__free(a, r->buf);
    gf__free(a, r->features);
    gf__free(a, r->valid);
    gf__free(a, r);
}


GPUFEED_API gpufeed_result gpufeed_batch_view(gpufeed_view *out, const gpufeed_batch *b, int32_t feature, gpufeed_dtype dtype, gpufeed_error *err)
{
    const gpufeed_feature *f;
    size_t z;
    if (err) { err->code = GPUFEED_OK; err->message[0] = 0; }
    if (!out || !b) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "gpufeed_batch_view: out or batch is NULL");
    memset(out, 0, sizeof *out);
    if (!b->feature_info || feature < 0 || feature >= b->num_features)
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "gpufeed_batch_view: no feature %d (the batch has %d)", feature, b->feature_info ? b->num_features : 0);
    f = &b->feature_info[feature];
    if (f->dtype != dtype)
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "feature %d ('%s') is %s, not %s", feature, f->column ? f->column : "?",
                          gpufeed_dtype_name(f->dtype), gpufeed_dtype_name(dtype));
    z = gpufeed_feature_bytes(f);
    if (b->data) { out->base = (const uint8_t *)b->data + b->feature_offset[feature]; out->stride = (size_t)b->row_bytes; }
    else if (b->features && b->features[feature]) { out->base = (const uint8_t *)b->features[feature]; out->stride = z; }
    else return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "feature %d ('%s'): the batch holds no host data (a device-resident batch?)", feature,
                           f->column ? f->column : "?");
    out->rows = b->num_rows;
    out->width = f->width > 0 ? f->width : 1;
    out->dtype = dtype;
    return GPUFEED_OK;
}

/* >>plan ----------------------------------------------------------------- */
/* The loader's state and its plan (pure functions of seed, epoch, rank
   and world), the window shuffle and the layout of unit slots: what the
   tensor cache (>>cache) and the running loader (>>loader) both use. */
/* The loader: the epoch's units are permuted by (seed, epoch); this rank
   takes every world-th of them; the workers claim stream positions in
   order, each decoding the unit at its position g into slot g mod RS of
   one ring, and batches are assembled from the slots in stream order.
   Which worker decodes a unit depends on timing; what any batch holds
   does not. */

#if !defined(GPUFEED_NO_THREADS)
#include <sys/select.h>
#endif
#if defined(__GNUC__) || defined(__clang__)
#define GF__LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define GF__STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define GF__LOAD_SC(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define GF__STORE_SC(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)
#define GF__ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define GF__GET(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define GF__ADD_AR(p, v) __atomic_fetch_add((p), (v), __ATOMIC_ACQ_REL)
#else
#define GF__LOAD(p) (*(p))
#define GF__STORE(p, v) (*(p) = (v))
#define GF__LOAD_SC(p) (*(p))
#define GF__STORE_SC(p, v) (*(p) = (v))
#define GF__ADD(p, v) ((*(p) += (v)) - (v))
#define GF__GET(p) (*(p))
#define GF__ADD_AR(p, v) ((*(p) += (v)) - (v))
#if !defined(GPUFEED_NO_THREADS)
#error "gpufeed: threads need GCC/Clang atomics; define GPUFEED_NO_THREADS"
#endif
#endif

/* compare-and-swap on the loader's shared words (plain stores without threads) */
static int gf__cas_i64(int64_t *p, int64_t from, int64_t to)
{
#if defined(__GNUC__) || defined(__clang__)
    return __atomic_compare_exchange_n(p, &from, to, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
#else
    if (*p != from) return 0;
    *p = to;
    return 1;
#endif
}
static int gf__cas_i32(int32_t *p, int32_t from, int32_t to)
{
#if defined(__GNUC__) || defined(__clang__)
    return __atomic_compare_exchange_n(p, &from, to, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
#else
    if (*p != from) return 0;
    *p = to;
    return 1;
#endif
}

/* splitmix64: seeds and a small PRNG for permutations */
static uint64_t gf__mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}
typedef struct gf__rng { uint64_t s; } gf__rng;
static uint64_t gf__rng_next(gf__rng *r) { r->s += 0x9E3779B97F4A7C15ull; return gf__mix64(r->s); }
static uint64_t gf__rng_below(gf__rng *r, uint64_t n)
{
    uint64_t th = (0 - n) % n, x; /* unbiased: reject the short tail */
    do x = gf__rng_next(r); while (x < th);
    return x % n;
}

/* The permutation of all units for an epoch (rank r of `world` takes
   perm[i * world + r]). A wide dataset's units come in runs (a row
   group's, in order: ds->runs, nruns + 1 starts): the runs are permuted,
   each kept whole, so that its units are decoded one after another,
   reading on; with several ranks, each takes a contiguous block of that
   sequence (its share of units), not every world-th unit, so that it too
   reads on. perm holds 2n entries (the upper half: scratch). Without runs
   every unit is one. */
static void gf__epoch_perm(int64_t *perm, int64_t n, const gpufeed_dataset *ds, int32_t world, uint64_t seed, int64_t epoch, int shuffle)
{
    const int64_t nr = ds && ds->runs ? ds->nruns : n;
    int64_t i, at;
    gf__rng r;
    for (i = 0; i < nr; i++) perm[i] = i;
    if (shuffle) {
        r.s = gf__mix64(seed ^ gf__mix64((uint64_t)epoch ^ 0x6770756665656421ull));
        for (i = nr - 1; i > 0; i--) {
            int64_t j = (int64_t)gf__rng_below(&r, (uint64_t)i + 1), t = perm[i];
            perm[i] = perm[j]; perm[j] = t;
        }
    }
    if (nr == n) return;
    /* runs into units, from the back: run i's units land at or after i,
       on entries already read */
    for (i = nr - 1, at = n; i >= 0; i--) {
        const int64_t ru = perm[i], len = ds->runs[ru + 1] - ds->runs[ru];
        int64_t k;
        at -= len;
        for (k = len - 1; k >= 0; k--) perm[at + k] = ds->runs[ru] + k;
    }
    if (world > 1) { /* rank r's block: its M_r = ceil((n - r) / world) units from start_r */
        int64_t r, start = 0, *seq = perm + n;
        memcpy(seq, perm, (size_t)n * sizeof(int64_t));
        for (r = 0; r < world; r++) {
            const int64_t m = (n - r + world - 1) / world;
            for (i = 0; i < m; i++) perm[i * world + r] = seq[start + i];
            start += m;
        }
    }
}

typedef struct gf__cache gf__cache;
typedef struct gf__piece {
    uint64_t off, len;
    uint8_t *ptr;
} gf__piece;
typedef struct gf__cidx { uint64_t off, rows, bytes, sum; } gf__cidx;

/* A decoded unit in a slot of the loader's ring (its buffers, or pointers into the
   cache when the unit was served from it). */
typedef struct gf__uslot {
    uint8_t *mem;
    void *data;
    void **feat;
    uint8_t **valid;
    int64_t rows, unit, g;
    int64_t pub;                       /* atomic: g + 1 once position g is decoded into it */
    gpufeed_result res;
    char err[GPUFEED_ERROR_MAX];
    /* column-parallel loaders (gf__colpar_step): every worker decodes its
       features of each position */
    int64_t cset;                      /* atomic: g + 1 once position g is set up, -(g + 1) while
                                          a worker sets it up */
    int32_t cmode;                     /* GF__CP_DECODE, or GF__CP_DONE (served by the cache,
                                          skipped: published by the setup) */
    int32_t cleft;                     /* atomic: workers yet to decode their features */
    int32_t cfail;                     /* atomic: 1 once a worker wrote res and err */
} gf__uslot;
enum { GF__CP_DECODE = 0, GF__CP_DONE = 1 };

/* trace event kinds (per thread, Chrome trace names in gf__write_trace) */
enum { GF__EV_DECODE = 0, GF__EV_WAIT = 1, GF__EV_IDLE = 2, GF__EV_ASSEMBLE = 3 };
typedef struct gf__tev {
    uint64_t ts, dur;
    int64_t arg;
    int32_t kind;
} gf__tev;

/* One worker's share of the loader's ring of unit slots (allocated with
   the worker; any worker decodes into any slot, gf__slot_of). */
typedef struct gf__ring {
    gf__uslot *slot;
    int32_t depth;
} gf__ring;

/* One epoch's plan on this rank: the unit permutation, the rank's rows
   before each of its units, and the even-batches rule. */
typedef struct gf__eplan {
    int64_t epoch;                     /* -1: not computed */
    int64_t *perm;                     /* [U] */
    int64_t *pre;                      /* [M + 1] */
    int64_t *rank_rows;                /* [world] */
    int64_t nb, take, pad, R;          /* batches, rows used, rows repeated, the rank's rows */
    int64_t kr;                        /* the last batch holding real rows, -1 none */
} gf__eplan;

/* A batch slot: batch q is assembled into slot q mod S. */
typedef struct gf__bslot {
    uint8_t *mem;
    void *data;
    void **feat;
    uint8_t **valid;
    int64_t ready;                     /* the batch assembled here (atomic), -1 none */
    int64_t rows, epoch, index, repeated;
    gpufeed_result res;
    char err[GPUFEED_ERROR_MAX];
} gf__bslot;

#define GF__GCHUNK 1024                /* rows whose sources are resolved at once */
#define GF__WT_MAX 1024                /* buckets of a window's unit look-up table */
#if GPUFEED_GATHER_AHEAD < 0 || GPUFEED_GATHER_AHEAD >= GF__GCHUNK
#error "GPUFEED_GATHER_AHEAD must be in [0, 1024)"
#endif

typedef struct gf__worker {
    gpufeed_loader *l;
    int32_t id;
    gf__ring ring;
    gpufeed_scratch *s;
#if !defined(GPUFEED_NO_THREADS)
    pthread_t th;
    int started;
#endif
    uint64_t busy_us, asm_us, idle_us, units, batches; /* atomics: read by stats */
    uint64_t jitter_us;                /* of busy_us, asleep for debug_jitter_us */
    uint64_t full_us;                  /* of idle_us, asleep with every unit slot taken */
    int64_t perm_epoch;                /* decode: the permutation in perm */
    int64_t *perm;
    gf__piece *pc;                     /* cache image pieces */
    int finalize;                      /* this worker wrote the cache's last unit */
    int64_t gd;                        /* the stream position claimed to decode (-1: none) */
    int64_t cg;                        /* column-parallel: the next position to decode this
                                          worker's features of */
    /* the batch in hand: number, epoch, index, the rows it gathers [glo,
       ghi) of the epoch's row stream, the next one (gat), -1: none left */
    int64_t gq, ge, gk, glo, ghi, gat;
    int64_t gqlast;                    /* the last batch claimed (ge, gk are its place) */
    int gend;                          /* no batches left to claim */
    gf__eplan gp;
    gf__eplan dp;                      /* elastic mode: the decode position's epoch plan */
    const gf__uslot **wu;              /* [step] the window's units */
    int64_t *woff;                     /* [step + 1] their first rows in the window */
    uint32_t cu[GF__GCHUNK], cr[GF__GCHUNK];
    const uint8_t *src[GF__GCHUNK];    /* also the fused gather's ring of sources */
    uint32_t wt[GF__WT_MAX];           /* the window's unit of each 2^g-row bucket */
    gf__tev *ev; int64_t nev, cap_ev;
} gf__worker;

struct gpufeed_loader {
    gpufeed_dataset *ds;
    gpufeed_loader_desc d;
    int32_t N, D, S, W, step, rank, world, threads;
    int32_t prank, pworld;             /* the plan's rank and world: the rank's own, or
                                          0 of 1 in elastic mode (every rank plans the
                                          global stream) */
    int elastic;
    int colpar;                        /* a wide dataset: every worker decodes its share of the
                                          features of every position (gf__colpar_step) */
    gpufeed_loader **inner;            /* partitioned elastic mode: one per partition served */
    int32_t ninner;
    uint8_t *omem;
    void *odata;
    void **ofeat;
    uint8_t **ovalid; /* its batch */
    int64_t G, s0;                     /* rows a batch index spans in the plan (the
                                          global batch, else B), this rank's start in it */
    int64_t B, U, M, NW;               /* batch rows, units, units and windows per epoch on this rank */
    int64_t *unit_rows;
    int64_t first_epoch, bidx0;        /* the first batch delivered */
    int64_t w0, base_ua;               /* the first window decoded, and its first unit (epoch * M + index) */
    int64_t total;                     /* stream positions (units), -1 unbounded */
    int64_t max_unit_rows;
    gf__worker *w;
    gf__worker *hw;                    /* the consumer's part: it assembles while it waits */
    gf__bslot *bs;                     /* [S] */
    int32_t stop;                      /* atomic */
    /* wake-ups: any state change bumps seq and wakes the sleepers */
    uint64_t seq;                      /* atomic */
    int32_t sleepers;                  /* atomic */
#if !defined(GPUFEED_NO_THREADS)
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_mutex_t fmu;               /* the release frontier */
#endif
    /* the release frontier: the oldest window whose units are still held */
    int64_t fA;                        /* as epoch * NW + window */
    int64_t fexp;                      /* its expected pieces, -1 not computed */
    int64_t *wdone;                    /* [WR] pieces done per window in flight (atomics) */
    int64_t WR;
    gf__eplan fplan;
    gpufeed_result ffail;              /* the first failed unit the frontier released ... */
    int64_t ffail_epoch;               /* ... its epoch */
    char ferr[GPUFEED_ERROR_MAX];
    int64_t fdoneA;                    /* atomic: windows released (as epoch * NW + window) */
    /* consumer */
    int64_t q, ce, ck;                 /* the next batch: number, epoch, index */
    int cend;                          /* the stream has no next batch */
    int64_t released;                  /* atomic: batches the consumer let go of */
    int64_t claim;                     /* atomic: the next batch no worker has claimed */
    int64_t dnext;                     /* atomic: the next stream position no worker has claimed */
    int64_t dtail;                     /* atomic: positions below it released (their slots free) */
    int64_t RS;                        /* unit slots in the ring: N x D */
    int holding;
    gf__eplan cplan, aplan;            /* the consumer's epoch; gpufeed_loader_epoch_batches */
    void *dst_data;
    void **dst_feat;
    uint8_t **dst_valid; /* the uploader's slot (NULL: none) */
    int stream_out;                    /* batches go to a device, not to this CPU's caches:
                                          shuffled rows are written with non-temporal
                                          stores (set by the uploader) */
    int64_t delivered;
    uint64_t t_first, wait_us, copy_us, batches, rows, dropped, repeated;
    double busy_s[GPUFEED_MAX_WORKERS], bp_s[GPUFEED_MAX_WORKERS], asm_s[GPUFEED_MAX_WORKERS], share[GPUFEED_MAX_WORKERS];
    gf__tev *ev; int64_t nev, cap_ev;
    uint64_t t_open, t_last_ret, consumer_us;
    gf__cache *cache;
    int index_mode;                    /* units "decode" to their global row ids (device-resident mode) */
    int64_t *unit_base;                /* index mode: first global row of each unit */
    uint64_t epoch_bytes[64];          /* atomics */
    gpufeed_result failed;
    int done;
    char err[GPUFEED_ERROR_MAX];
    int32_t busy;                      /* atomic: a thread is in gpufeed_loader_next */
    int32_t cache_share;               /* loaders of this process opening the cache together */
    int counted;                       /* among its dataset's users (gf__dataset_users) */
};


static void gf__trace(gf__tev **ev, int64_t *n, int64_t *cap, int64_t max, const gpufeed_allocator *a, int32_t kind, uint64_t ts, uint64_t dur, int64_t arg)
{
    if (max <= 0 || *n >= max) return;
    if (*n == *cap) {
        int64_t nc = *cap ? *cap * 2 : 1024;
        gf__tev *ne;
        if (nc > max) nc = max;
        ne = (gf__tev *)gf__realloc(a, *ev, (size_t)nc * sizeof *ne);
        if (!ne) return;
        *ev = ne; *cap = nc;
    }
    (*ev)[*n].kind = kind;
    (*ev)[*n].ts = ts;
    (*ev)[*n].dur = dur;
    (*ev)[*n].arg = arg;
    (*n)++;
}
#define GF__TRACE_W(w, kind, t0, t1, arg) \
    gf__trace(&(w)->ev, &(w)->nev, &(w)->cap_ev, (w)->l->d.trace_path ? (w)->l->d.trace_max_events : 0, &(w)->l->ds->alloc, (kind), (t0), (t1) - (t0), (arg))

/* ---- the plan: pure functions of (seed, epoch, rank, world) ---- */

static void gf__eplan_free(gf__eplan *p, const gpufeed_allocator *a)
{
    gf__free(a, p->perm);
    gf__free(a, p->pre);
    gf__free(a, p->rank_rows);
    p->perm = NULL;
    p->pre = NULL;
    p->rank_rows = NULL;
}
static int gf__eplan_alloc(gpufeed_loader *l, gf__eplan *p)
{
    const gpufeed_allocator *a = &l->ds->alloc;
    p->epoch = -1;
    p->perm = (int64_t *)gf__alloc(a, (size_t)l->U * 2 * sizeof(int64_t)); /* gf__epoch_perm's scratch above */
    p->pre = (int64_t *)gf__alloc(a, (size_t)(l->M + 1) * sizeof(int64_t));
    p->rank_rows = (int64_t *)gf__alloc(a, (size_t)l->pworld * sizeof(int64_t));
    return p->perm && p->pre && p->rank_rows;
}

/* epoch e's plan into p (kept while e stays the same) */
static const gf__eplan *gf__eplan_at(const gpufeed_loader *l, gf__eplan *p, int64_t e)
{
    int64_t i, q, nb, R;
    if (p->epoch == e) return p;
    gf__epoch_perm(p->perm, l->U, l->ds, l->pworld, l->d.seed, e, !l->d.no_unit_shuffle);
    for (q = 0; q < l->pworld; q++) p->rank_rows[q] = 0;
    for (i = 0; i < l->U; i++) p->rank_rows[i % l->pworld] += l->unit_rows[p->perm[i]];
    R = p->rank_rows[l->prank];
    if (l->elastic) nb = R / l->G; /* the partial global batch is dropped */
    else if (l->world == 1) nb = l->d.last_batch == GPUFEED_DROP_LAST ? R / l->B : (R + l->B - 1) / l->B;
    else {
        nb = l->d.even == GPUFEED_EVEN_PAD ? 0 : INT64_MAX;
        for (q = 0; q < l->world; q++) {
            int64_t b = l->d.even == GPUFEED_EVEN_PAD ? (p->rank_rows[q] + l->B - 1) / l->B : p->rank_rows[q] / l->B;
            if (l->d.even == GPUFEED_EVEN_PAD ? b > nb : b < nb) nb = b;
        }
    }
    p->nb = nb;
    p->R = R;
    if (l->elastic) { p->take = nb * l->G; p->pad = 0; }
    else {
        p->take = (l->world == 1 && l->d.last_batch == GPUFEED_KEEP_LAST) ? R : (R < nb * l->B ? R : nb * l->B);
        p->pad = (l->world > 1 && nb * l->B > R) ? nb * l->B - R : 0;
    }
    p->kr = p->take > 0 ? (p->take - 1) / l->G : -1;
    p->pre[0] = 0;
    for (i = 0; i < l->M; i++) p->pre[i + 1] = p->pre[i] + l->unit_rows[p->perm[i * l->pworld + l->prank]];
    p->epoch = e;
    return p;
}

/* the rows batch k gathers, [lo, hi) of the epoch's row stream: its own,
   or for a padding batch those of the last real batch */
static void gf__batch_span(const gpufeed_loader *l, const gf__eplan *p, int64_t k, int64_t *lo, int64_t *hi)
{
    if (p->kr < 0) { *lo = *hi = 0; return; }
    if (k > p->kr) k = p->kr;
    *lo = k * l->G + l->s0;
    *hi = *lo + l->B < p->take ? *lo + l->B : p->take;
}

/* floor(a / b) for b > 0 */
static int64_t gf__floordiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* window w of an epoch: units [i0, i1), rows [r0, r1) */
static void gf__window(const gpufeed_loader *l, const gf__eplan *p, int64_t w, int64_t *i0, int64_t *i1, int64_t *r0, int64_t *r1)
{
    *i0 = w * l->step;
    *i1 = *i0 + l->step < l->M ? *i0 + l->step : l->M;
    *r0 = p->pre[*i0];
    *r1 = p->pre[*i1];
}

/* the window holding row r (the first whose rows end after r), NW if none */
static int64_t gf__window_of(const gpufeed_loader *l, const gf__eplan *p, int64_t r)
{
    int64_t lo = 0, hi = l->NW;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2, e = (mid + 1) * l->step;
        if (p->pre[e < l->M ? e : l->M] > r) hi = mid; else lo = mid + 1;
    }
    return lo;
}

/* How many batch pieces read window w: one per batch whose span meets it,
   batches from kstart on (the same rule the gathers follow). */
static int64_t gf__window_pieces(const gpufeed_loader *l, const gf__eplan *p, int64_t w, int64_t kstart)
{
    int64_t i0, i1, r0, r1, n = 0;
    gf__window(l, p, w, &i0, &i1, &r0, &r1);
    if (p->kr < 0 || r1 <= r0 || r0 >= p->take) return 0;
    if (r1 > p->take) r1 = p->take;
    {   /* batch k spans [k G + s0, k G + s0 + B): it meets [r0, r1) for k in [klo, khi] */
        int64_t klo = gf__floordiv(r0 - l->s0 - l->B, l->G) + 1, khi = gf__floordiv(r1 - 1 - l->s0, l->G);
        if (klo < kstart) klo = kstart;
        if (khi > p->kr) khi = p->kr;
        if (khi >= klo) n += khi - klo + 1;
    }
    if (p->nb > p->kr + 1 && (r0 > p->kr * l->B ? r0 : p->kr * l->B) < r1) { /* padding batches read the last real one */
        int64_t k0 = p->kr + 1 > kstart ? p->kr + 1 : kstart;
        if (p->nb > k0) n += p->nb - k0;
    }
    return n;
}

/* stream position of the rank's i-th unit of epoch e */
static int64_t gf__gpos(const gpufeed_loader *l, int64_t e, int64_t i) { return e * l->M + i - l->base_ua; }

/* stream position -> (epoch, index in the rank's unit list) */
static void gf__pos(const gpufeed_loader *l, int64_t g, int64_t *epoch, int64_t *i)
{
    int64_t p = l->base_ua + g;
    *epoch = p / l->M;
    *i = p % l->M;
}

static int64_t gf__unit_at(const gpufeed_loader *l, int64_t *perm, int64_t *perm_epoch, int64_t epoch, int64_t i)
{
    if (*perm_epoch != epoch) {
        gf__epoch_perm(perm, l->U, l->ds, l->pworld, l->d.seed, epoch, !l->d.no_unit_shuffle);
        *perm_epoch = epoch;
    }
    return perm[i * l->pworld + l->prank];
}

/* The ring of unit slots: stream position g goes into slot g mod RS (RS =
   N x D, each worker allocating D of them). Workers claim positions in
   stream order, whichever is free next (gf__decode_step), so a worker
   that runs faster decodes more units: the loader delivers the sum of its
   workers' rates, not N times the slowest one's. What a position holds
   never depends on which worker decoded it. */
static gf__uslot *gf__slot_of(const gpufeed_loader *l, int64_t g)
{
    int64_t k = g % l->RS;
    return &l->w[k / l->D].ring.slot[k % l->D];
}
static int gf__published(const gpufeed_loader *l, int64_t g)
{
    return GF__LOAD(&gf__slot_of(l, g)->pub) == g + 1;
}

/* moves (e, k) `by` batches on; 0 at the end of the stream */
static int gf__advance(const gpufeed_loader *l, gf__eplan *p, int64_t *e, int64_t *k, int64_t by)
{
    int64_t empty = 0;
    *k += by;
    for (;;) {
        if (l->d.epochs > 0 && *e >= l->d.start_epoch + l->d.epochs) return 0;
        gf__eplan_at(l, p, *e);
        if (*k < p->nb) return 1;
        if (p->nb == 0 && ++empty > 4096) return 0; /* no batches at all (checked at open) */
        *k -= p->nb;
        (*e)++;
    }
}

/* ---- the window shuffle: a keyed bijection of [0, n) ---- */
/* Rows of a window are read in the order x -> bij(x): invertible mixing
   steps (odd multipliers, xorshifts, additions) on the smallest power of
   two holding n, walked until the value falls below n (a cycle walk, so
   the result is a permutation of [0, n)). Any thread computes any row's
   source on its own: no shared permutation table. */
typedef struct gf__bij {
    uint64_t n, mask, k0, k1, k2;
    int sh;
} gf__bij;
static void gf__bij_init(gf__bij *b, uint64_t n, uint64_t key)
{
    int bits = 1;
    while (bits < 63 && ((uint64_t)1 << bits) < n) bits++;
    b->n = n;
    b->mask = ((uint64_t)1 << bits) - 1;
    b->sh = (bits + 1) / 2;
    b->k0 = gf__mix64(key ^ 0x5368756666656c30ull);
    b->k1 = gf__mix64(key ^ 0x5368756666656c31ull) | 1;
    b->k2 = gf__mix64(key ^ 0x5368756666656c32ull);
}
GF__INLINE uint64_t gf__bij_round(const gf__bij *b, uint64_t x)
{
    x = (x * 0x9E3779B97F4A7C15ull + b->k0) & b->mask;
    x ^= x >> b->sh;
    x = (x * b->k1) & b->mask;
    x ^= x >> b->sh;
    x = (x * 0xBF58476D1CE4E5B9ull + b->k2) & b->mask;
    x ^= x >> b->sh;
    return x;
}
GF__INLINE uint64_t gf__bij_at(const gf__bij *b, uint64_t x)
{
    do x = gf__bij_round(b, x); while (x >= b->n);
    return x;
}
static uint64_t gf__window_key(const gpufeed_loader *l, int64_t e, int64_t i0)
{
    return gf__mix64(l->d.seed ^ gf__mix64((uint64_t)e * 0x100000001B3ull ^ gf__mix64((uint64_t)i0 ^ ((uint64_t)l->prank << 40))));
}

/* ---- unit slots ---- */

static void gf__slot_layout(gpufeed_loader *l, gf__uslot *s)
{
    gpufeed_dataset *ds = l->ds;
    size_t off = (64 - ((size_t)(uintptr_t)s->mem & 63)) & 63;
    int32_t j;
    const size_t R = (size_t)l->max_unit_rows;
    if (ds->layout == GPUFEED_LAYOUT_ROW_MAJOR) { s->data = s->mem + off; off += (R * (size_t)ds->row_bytes + 63) & ~(size_t)63; }
    for (j = 0; j < ds->nfeat; j++) {
        s->feat[j] = NULL;
        if (ds->layout == GPUFEED_LAYOUT_PER_FEATURE) { s->feat[j] = s->mem + off; off += (R * gpufeed_feature_bytes(&ds->feats[j]) + 63) & ~(size_t)63; }
    }
    for (j = 0; j < ds->nfeat; j++) {
        s->valid[j] = NULL;
        if (ds->feats[j].validity) { s->valid[j] = s->mem + off; off += (R + 63) & ~(size_t)63; }
    }
}
static size_t gf__slot_bytes(gpufeed_loader *l)
{
    gpufeed_dataset *ds = l->ds;
    size_t R = (size_t)l->max_unit_rows, t = 64;
    int32_t j;
    if (ds->layout == GPUFEED_LAYOUT_ROW_MAJOR) t += (R * (size_t)ds->row_bytes + 63) & ~(size_t)63;
    for (j = 0; j < ds->nfeat; j++) {
        if (ds->layout == GPUFEED_LAYOUT_PER_FEATURE) t += (R * gpufeed_feature_bytes(&ds->feats[j]) + 63) & ~(size_t)63;
        if (ds->feats[j].validity) t += (R + 63) & ~(size_t)63;
    }
    return t;
}

/* >>cache ---------------------------------------------------------------- */
/* File layout (little-endian):
     [0, 4096)      header: magic, version, key, unit count, bytes per row
                    of a unit image, offsets, sizes, index checksum, dataset
                    identity, builder, description, header checksum
     [4096, ...)    index: per unit {offset, rows, bytes, checksum} (32 bytes)
     data           unit images, each 4 KiB-aligned: the row-major data (or
                    each feature's array), then each validity mask.
   Header fields (byte offset): 0 magic "GPUFEEDC" (complete) or "GPUFEEDB"
   (being built: only the dataset identity, description, builder pid and
   progress mean anything), 8 version, 12 header size, 16 key (16 bytes),
   32 units, 40 bytes per image row, 48 index offset, 56 data offset, 64 file
   size, 72 rows, 80 index checksum, 88 dataset identity (16 bytes),
   104 builder pid, 112 units written, 120 creation time (Unix seconds),
   128 description length, 132 description ("dataset\nfeatures\nplan"),
   4088 header checksum.
   Offsets follow from the row counts, so workers write units in parallel
   with positioned writes. The checksum is gpufeed_hash64 chained over the
   image's pieces in order.

   Serving. Batches are gathered only from memory the loader owns, checked
   there: c->ram, the whole cache when it fits the memory budget (each unit
   read with pread and checked by the first use that finds it missing, or
   stored there by this process's build), else the ring slot of each use
   (read and checked every time). Nothing is mapped: a file changed or cut
   short under a loader fails a check or a read, never reaches a batch,
   never raises a signal.

   Names and locks: DIR/gpufeed-<key>.gfc, built as DIR/gpufeed-<key>.gfc.tmp.
   A builder holds the .tmp with an exclusive flock (a second builder finds
   it busy); every process using a cache file holds a shared flock on it
   while it is open. Removing a file (an older version of the dataset, the
   directory's byte budget, gpufeed_cache_prune) takes the exclusive lock
   without waiting and skips the file when that fails: a file in use is
   never removed. The kernel drops the locks of a process that dies; there
   are no lock files.

   Identity. The dataset identity is what the user asked for: each file's
   canonical path (realpath: the same file however it is spelled; for an
   open_source dataset, the name), the features, predicates, layout and
   unit_rows. The key adds what the files hold: each file's size,
   modification time (with nanoseconds) and a hash of its footer bytes (an
   open_source file: its identity string instead of size and time), and the
   unit plan. chmod, a copy renamed over the file with the same bytes and
   times, cp -p and rsync -a keep the key; any change of size, of the
   modification time or of a footer byte changes it. The one limit: a
   change that keeps the size, the modification time (as the file system
   records it) and every byte of the footer is not seen. A build takes
   each source's stat (size, modification and change time, inode) with
   the key, and again with the footer read back when it completes: a build
   whose sources changed while it read them is discarded, so no cache holds
   rows of a file in two states. A new complete cache removes the older
   caches of its dataset that no process uses. */

#ifndef GPUFEED_NO_STDIO
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <sys/file.h>
#include <sys/select.h>
#include <sys/time.h>
#include <sys/resource.h>
#include <dirent.h>
#include <time.h>
#ifndef __cplusplus
extern ssize_t pwrite(int, const void *, size_t, off_t);
extern int ftruncate(int, off_t);
#endif
#if !defined(GPUFEED_NO_THREADS)       /* struct timespec comes with pthread.h */
#define GF__CACHE_TOUCH 1
#ifndef __cplusplus
extern int futimens(int, const struct timespec[2]);
#endif
#ifndef UTIME_NOW
#define UTIME_NOW ((1l << 30) - 1l)
#define UTIME_OMIT ((1l << 30) - 2l)
#endif
#endif
#endif


#define GF__CACHE_VERSION 2u
#define GF__CACHE_HDR 4096u
#define GF__CACHE_DESC_OFF 132u
#define GF__CACHE_DESC_MAX (GF__CACHE_HDR - 8u - GF__CACHE_DESC_OFF)

/* a source file as the cache's key took it (its path's stat, and the
   stat of the descriptor the dataset reads it through) */
typedef struct gf__srcid {
    uint64_t size, mtime_s, mtime_ns, ctime_s, ctime_ns, ino, dev;
    int32_t gone;                      /* stat failed: no cache matches */
} gf__srcid;

struct gf__cache {
    int32_t state;                     /* GPUFEED_CACHE_*, atomic */
    char dir[1024], path[1100], tmp[1110];
    void (*log)(void *user, const char *msg);
    void *log_user;
    uint64_t key[2], dsid[2];
    char descr[GF__CACHE_DESC_MAX];
    uint64_t img_row, data_off, size;
    int64_t U;
    gf__cidx *idx;
    uint8_t *ust;                      /* per unit (atomic): 0 unchecked, 1 good (with ram: in ram), 2 bad,
                                          3 being written, 4 being read into ram */
    int64_t written;                   /* atomic */
    int fd;                            /* the cache (shared lock) or the .tmp being built (exclusive lock) */
    uint8_t *ram;                      /* the cache in the loader's own memory (units at their file
                                          offsets); NULL: each use reads its unit into a ring slot */
    uint64_t ram_budget;               /* the largest cache kept in ram */
    int32_t ram_asked;                 /* ram is the RAM tier asked for (ram_bytes): it serves even
                                          when the file part of a build fails; else it only holds
                                          the file's units */
    int32_t failed;                    /* atomic: the file part of the build was abandoned */
    uint64_t served, bad;              /* atomics */
    int32_t verify;                    /* GPUFEED_CACHE_VERIFY_* */
    uint64_t sig;                      /* atomic: the file's size, time and inode when last looked at */
    int32_t shrunk;                    /* atomic: the file shrank under us: read nothing more from it */
    uint64_t dir_budget;               /* gpufeed_cache_desc.dir_max_bytes */
    int64_t *first_idx;                /* a build's waits: each unit's index in the stream's first epoch */
    const gpufeed_dataset *ds;         /* its sources, taken again when a build completes */
    gf__srcid *src;                    /* [nfiles] what the key was computed from */
    int32_t src_moved;                 /* a path names another file than the one the dataset
                                          reads: this cache is neither served nor built */
#if !defined(GPUFEED_NO_THREADS)
    pthread_mutex_t mu;
    pthread_cond_t cv;                 /* a unit stored, the build finished or failed */
    int mu_init;
    int32_t waiters;                   /* atomic */
#endif
    const gpufeed_allocator *a;
};

static void gf__cache_log(gf__cache *c, const char *fmt, ...) GF__PRINTF(2, 3);
static void gf__cache_log(gf__cache *c, const char *fmt, ...)
{
    char msg[GPUFEED_ERROR_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    gf__vfmt(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->log) c->log(c->log_user, msg);
#ifndef GPUFEED_NO_STDIO
    else fprintf(stderr, "gpufeed: %s\n", msg);
#endif
}

#ifndef GPUFEED_NO_STDIO
static void gf__st64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
#endif

/* compare-and-swap on the cache's shared words (plain stores without threads) */
static int gf__cas_u8(uint8_t *p, uint8_t from, uint8_t to)
{
#if defined(__GNUC__) || defined(__clang__)
    return __atomic_compare_exchange_n(p, &from, to, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
#else
    if (*p != from) return 0;
    *p = to;
    return 1;
#endif
}
#ifndef GPUFEED_NO_STDIO
static int gf__cas_u64(uint64_t *p, uint64_t from, uint64_t to)
{
#if defined(__GNUC__) || defined(__clang__)
    return __atomic_compare_exchange_n(p, &from, to, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
#else
    if (*p != from) return 0;
    *p = to;
    return 1;
#endif
}
#endif

/* ---- identity (dataset identity, key, description) ---- */

typedef struct gf__h2 { uint64_t h[2]; } gf__h2;
static void gf__h2_feed(gf__h2 *k, const void *p, size_t n)
{
    k->h[0] = gpufeed_hash64(p, n, k->h[0]);
    k->h[1] = gpufeed_hash64(p, n, k->h[1] ^ 0x9E3779B97F4A7C15ull);
}
static void gf__h2_u64(gf__h2 *k, uint64_t v) { gf__h2_feed(k, &v, 8); }
static void gf__h2_str(gf__h2 *k, const char *s)
{
    s = s ? s : "";
    gf__h2_u64(k, (uint64_t)strlen(s));
    gf__h2_feed(k, s, strlen(s));
}

/* file i's name in the identity: its canonical path (or its open_source name) */
static void gf__cache_file_name(const gpufeed_dataset *ds, int32_t i, char *out, size_t cap)
{
#ifndef GPUFEED_NO_STDIO
    if (!(ds->ident && ds->ident[i]) && gf__canon_path(ds->paths[i], out, cap) == 0) return;
#endif
    gf__fmt(out, cap, "%s", ds->paths[i]);
}

/* the dataset identity: canonical paths, features, predicates, unit plan
   options; never what the files hold (the older caches of a dataset share it) */
static void gf__cache_dataset_id(const gpufeed_dataset *ds, uint64_t id[2])
{
    gf__h2 k;
    int32_t i, j;
    char name[4096];
    k.h[0] = 0x6770756665656430ull; k.h[1] = 0x6461746173657431ull;
    gf__h2_u64(&k, GF__CACHE_VERSION);
    gf__h2_u64(&k, (uint64_t)ds->nfiles);
    for (i = 0; i < ds->nfiles; i++) { gf__cache_file_name(ds, i, name, sizeof name); gf__h2_str(&k, name); }
    gf__h2_u64(&k, (uint64_t)ds->nfeat);
    for (i = 0; i < ds->nfeat; i++) {
        const gpufeed_feature *f = &ds->feats[i];
        gf__h2_str(&k, f->column);
        gf__h2_u64(&k, (uint64_t)f->dtype);
        gf__h2_u64(&k, (uint64_t)f->null_policy);
        gf__h2_feed(&k, &f->fill, 8);
        gf__h2_u64(&k, (uint64_t)f->validity);
        gf__h2_u64(&k, (uint64_t)f->cast);
        gf__h2_u64(&k, f->hash_buckets);
        gf__h2_u64(&k, f->hash_seed);
        gf__h2_u64(&k, (uint64_t)f->width);
        gf__h2_u64(&k, (uint64_t)f->list_policy); gf__h2_u64(&k, (uint64_t)f->list_lengths);
        if (ds->tunit[i] || f->missing) { /* newer fields: only where set, so older keys hold */
            gf__h2_u64(&k, (uint64_t)ds->tunit[i]);
            gf__h2_u64(&k, (uint64_t)f->missing);
        }
    }
    gf__h2_u64(&k, (uint64_t)ds->npred);
    for (i = 0; i < ds->npred; i++) {
        const gpufeed_predicate *p = &ds->preds[i];
        int32_t nv = p->op == GPUFEED_OP_IN ? p->set_size : 2;
        gf__h2_str(&k, p->column); gf__h2_u64(&k, (uint64_t)p->op);
        if (ds->tunit[ds->nfeat + i]) gf__h2_u64(&k, (uint64_t)ds->tunit[ds->nfeat + i]);
        for (j = 0; j < nv; j++) {
            const gpufeed_value *v = p->op == GPUFEED_OP_IN ? &p->set[j] : j ? &p->b : &p->a;
            gf__h2_u64(&k, (uint64_t)v->kind);
            gf__h2_u64(&k, (uint64_t)v->i);
            gf__h2_u64(&k, v->u);
            gf__h2_feed(&k, &v->d, 8);
            gf__h2_u64(&k, (uint64_t)v->len);
            if (v->kind == GPUFEED_VAL_STRING && v->s) gf__h2_feed(&k, v->s, v->len);
        }
    }
    gf__h2_u64(&k, (uint64_t)ds->layout); gf__h2_u64(&k, (uint64_t)ds->unit_rows);
    if (ds->wide_rows) gf__h2_u64(&k, (uint64_t)ds->wide_rows ^ 0x57494445ull); /* a wide dataset's units */
    id[0] = k.h[0]; id[1] = k.h[1];
}

/* the key: the dataset identity, what each file holds (size, modification
   time as `src` took it, footer bytes; or its open_source identity), the unit plan */
static void gf__cache_key(const gpufeed_dataset *ds, const uint64_t dsid[2], const gf__srcid *src, uint64_t key[2])
{
    gf__h2 k;
    int32_t i;
    int64_t u;
    k.h[0] = 0x6770756665656430ull; k.h[1] = 0x6b65792d68696768ull;
    gf__h2_u64(&k, dsid[0]); gf__h2_u64(&k, dsid[1]);
    for (i = 0; i < ds->nfiles; i++) {
        size_t flen;
        const uint8_t *foot = gpufeed_file_footer(ds->files[i], &flen);
        gf__h2_u64(&k, ds->files[i]->size);
        if (ds->ident && ds->ident[i]) gf__h2_str(&k, ds->ident[i]);
        else if (src && !src[i].gone) { gf__h2_u64(&k, src[i].mtime_s); gf__h2_u64(&k, src[i].mtime_ns); }
        else gf__h2_u64(&k, 0x676f6e65ull); /* gone: no cache will match */
        gf__h2_u64(&k, gpufeed_hash64(foot, flen, 0));
    }
    gf__h2_u64(&k, (uint64_t)ds->nunits);
    for (u = 0; u < ds->nunits; u++) {
        gf__h2_u64(&k, (uint64_t)ds->units[u].u.file); gf__h2_u64(&k, (uint64_t)ds->units[u].u.row_group);
        gf__h2_u64(&k, (uint64_t)ds->units[u].u.first_row); gf__h2_u64(&k, (uint64_t)ds->units[u].u.num_rows);
    }
    key[0] = k.h[0]; key[1] = k.h[1];
}

/* appends to out[*n] what gf__fmt makes of the arguments (truncating at cap) */
static void gf__cat(char *out, size_t cap, size_t *n, const char *fmt, ...) GF__PRINTF(4, 5);
static void gf__cat(char *out, size_t cap, size_t *n, const char *fmt, ...)
{
    va_list ap;
    if (*n + 1 >= cap) return;
    va_start(ap, fmt);
    gf__vfmt(out + *n, cap - *n, fmt, ap);
    va_end(ap);
    *n += strlen(out + *n);
}

/* What the header records for `gpufeed-cache ls`: the dataset (its first
   file and how many more), the features in the tools' --feature syntax
   (column:dtype[:hash=N][:seed=S][:fill=V][:null=error][:valid]
   [:cast=unsafe][:width=W][:ragged=pad|truncate][:lengths][:unit=U]
   [:missing=null]) and the plan. */
static void gf__cache_describe(const gpufeed_dataset *ds, char *out, size_t cap)
{
    static const char *const ragged[] = { "error", "pad", "truncate" };
    char name[4096];
    size_t n = 0;
    int32_t i;
    gf__cache_file_name(ds, 0, name, sizeof name);
    gf__cat(out, cap, &n, "%s", name);
    if (ds->nfiles > 1) gf__cat(out, cap, &n, " (and %d more files)", ds->nfiles - 1);
    gf__cat(out, cap, &n, "\n");
    for (i = 0; i < ds->nfeat; i++) {
        const gpufeed_feature *f = &ds->feats[i];
        gf__cat(out, cap, &n, "%s%s:%s", i ? " " : "", f->column, gpufeed_dtype_name(f->dtype));
        if (f->hash_buckets) gf__cat(out, cap, &n, ":hash=%llu", (unsigned long long)f->hash_buckets);
        if (f->hash_seed) gf__cat(out, cap, &n, ":seed=%llu", (unsigned long long)f->hash_seed);
        if (f->fill != 0) gf__cat(out, cap, &n, ":fill=%.17g", f->fill);
        if (f->null_policy == GPUFEED_NULL_ERROR) gf__cat(out, cap, &n, ":null=error");
        if (f->validity) gf__cat(out, cap, &n, ":valid");
        if (f->cast == GPUFEED_CAST_UNSAFE) gf__cat(out, cap, &n, ":cast=unsafe");
        if (f->width) gf__cat(out, cap, &n, ":width=%d", f->width);
        if (f->list_policy > 0 && f->list_policy <= 2) gf__cat(out, cap, &n, ":ragged=%s", ragged[f->list_policy]);
        if (f->list_lengths) gf__cat(out, cap, &n, ":lengths");
        if (f->unit) gf__cat(out, cap, &n, ":unit=%s", gf__unit_name(f->unit));
        if (f->missing == GPUFEED_MISSING_NULL) gf__cat(out, cap, &n, ":missing=null");
    }
    gf__cat(out, cap, &n, "\nunit_rows=%lld layout=%s predicates=%d", (long long)(ds->wide_rows ? ds->wide_rows : ds->unit_rows),
            ds->layout == GPUFEED_LAYOUT_PER_FEATURE ? "per-feature" : "row-major", ds->npred);
    if (ds->wide_rows) gf__cat(out, cap, &n, " wide (unit_bytes=%lld)", (long long)ds->unit_bytes);
    if (n + 1 >= cap && cap > 4) memcpy(out + cap - 4, "...", 4); /* cut: say so */
}

static uint64_t gf__cache_img_row(const gpufeed_dataset *ds)
{
    uint64_t r = (uint64_t)ds->row_bytes;
    int32_t j;
    for (j = 0; j < ds->nfeat; j++) if (ds->feats[j].validity) r++;
    return r;
}

/* the pieces of a unit image: (offset in the image, length, slot pointer) */
static int32_t gf__image_pieces(const gpufeed_dataset *ds, uint64_t rows, void *data, void *const *feat, uint8_t *const *valid, gf__piece *pc)
{
    int32_t n = 0, j;
    uint64_t off = 0;
    if (ds->layout == GPUFEED_LAYOUT_ROW_MAJOR) {
        pc[n].off = 0;
        pc[n].len = rows * (uint64_t)ds->row_bytes;
        pc[n].ptr = (uint8_t *)data;
        off = pc[n].len;
        n++;
    }
    else for (j = 0; j < ds->nfeat; j++) {
        pc[n].off = off;
        pc[n].len = rows * gpufeed_feature_bytes(&ds->feats[j]);
        pc[n].ptr = feat ? (uint8_t *)feat[j] : NULL;
        off += pc[n].len;
        n++;
    }
    for (j = 0; j < ds->nfeat; j++)
        if (ds->feats[j].validity) {
            pc[n].off = off;
            pc[n].len = rows;
            pc[n].ptr = valid ? valid[j] : NULL;
            off += rows;
            n++;
        }
    return n;
}

static uint64_t gf__pieces_sum(const gf__piece *pc, int32_t n, const uint8_t *base)
{
    uint64_t h = 0x63616368652d7631ull;
    int32_t i;
    for (i = 0; i < n; i++) h = gpufeed_hash64(base ? base + pc[i].off : pc[i].ptr, (size_t)pc[i].len, h);
    return h;
}

#ifndef GPUFEED_NO_STDIO
/* gpufeed_hash64 in steps: the same value over bytes fed in pieces of
   any size, so that a unit read in chunks is hashed while each chunk is
   still in the CPU's caches */
typedef struct gf__h64 {
    uint64_t v[4], seed, total;
    uint8_t buf[32];
    uint32_t n;
} gf__h64;
static void gf__h64_init(gf__h64 *h, uint64_t seed)
{
    memset(h, 0, sizeof *h);
    h->seed = seed;
    h->v[0] = seed + GF__P1 + GF__P2;
    h->v[1] = seed + GF__P2;
    h->v[2] = seed;
    h->v[3] = seed - GF__P1;
}
GF__INLINE void gf__h64_stripe(gf__h64 *h, const uint8_t *p)
{
    h->v[0] = gf__xround(h->v[0], gf__ld64(p));
    h->v[1] = gf__xround(h->v[1], gf__ld64(p + 8));
    h->v[2] = gf__xround(h->v[2], gf__ld64(p + 16));
    h->v[3] = gf__xround(h->v[3], gf__ld64(p + 24));
}
static void gf__h64_update(gf__h64 *h, const uint8_t *p, size_t len)
{
    h->total += len;
    if (h->n) { /* fill the stripe left from the last call */
        size_t k = 32 - h->n < len ? 32 - h->n : len;
        memcpy(h->buf + h->n, p, k);
        h->n += (uint32_t)k;
        p += k;
        len -= k;
        if (h->n < 32) return;
        gf__h64_stripe(h, h->buf);
        h->n = 0;
    }
    for (; len >= 32; p += 32, len -= 32) gf__h64_stripe(h, p);
    if (len) memcpy(h->buf, p, len);
    h->n = (uint32_t)len;
}
static uint64_t gf__h64_final(const gf__h64 *h)
{
    const uint8_t *p = h->buf, *end = h->buf + h->n;
    uint64_t r;
    if (h->total >= 32) {
        r = gf__rotl(h->v[0], 1) + gf__rotl(h->v[1], 7) + gf__rotl(h->v[2], 12) + gf__rotl(h->v[3], 18);
        r = (r ^ gf__xround(0, h->v[0])) * GF__P1 + GF__P4;
        r = (r ^ gf__xround(0, h->v[1])) * GF__P1 + GF__P4;
        r = (r ^ gf__xround(0, h->v[2])) * GF__P1 + GF__P4;
        r = (r ^ gf__xround(0, h->v[3])) * GF__P1 + GF__P4;
    } else r = h->seed + GF__P5;
    r += h->total;
    for (; end - p >= 8; p += 8) r = gf__rotl(r ^ gf__xround(0, gf__ld64(p)), 27) * GF__P1 + GF__P4;
    if (end - p >= 4) { r = gf__rotl(r ^ (uint64_t)gf__ld32(p) * GF__P1, 23) * GF__P2 + GF__P3; p += 4; }
    for (; p < end; p++) r = gf__rotl(r ^ (uint64_t)*p * GF__P5, 11) * GF__P1;
    r ^= r >> 33;
    r *= GF__P2;
    r ^= r >> 29;
    r *= GF__P3;
    return r ^ (r >> 32);
}
#endif

static void gf__cache_free(gf__cache *c)
{
    if (!c) return;
#ifndef GPUFEED_NO_STDIO
    if (c->fd >= 0) close(c->fd); /* releases its lock */
#endif
#if !defined(GPUFEED_NO_THREADS)
    if (c->mu_init) { pthread_mutex_destroy(&c->mu); pthread_cond_destroy(&c->cv); }
#endif
    gf__free(c->a, c->ram);
    gf__free(c->a, c->idx);
    gf__free(c->a, c->ust);
    gf__free(c->a, c->first_idx);
    gf__free(c->a, c->src);
    gf__free(c->a, c);
}

/* the layout for the given unit rows: offsets, sizes */
static void gf__cache_layout(gf__cache *c, const int64_t *unit_rows)
{
    int64_t u;
    uint64_t off;
    c->data_off = ((uint64_t)GF__CACHE_HDR + (uint64_t)c->U * 32 + 4095) & ~(uint64_t)4095;
    off = c->data_off;
    for (u = 0; u < c->U; u++) {
        c->idx[u].off = off; c->idx[u].rows = (uint64_t)unit_rows[u];
        c->idx[u].bytes = (uint64_t)unit_rows[u] * c->img_row;
        off += (c->idx[u].bytes + 4095) & ~(uint64_t)4095;
    }
    c->size = off;
}

/* wakes the workers waiting for a unit of the build (stored, or the build over) */
static void gf__cache_wake(gf__cache *c)
{
#if !defined(GPUFEED_NO_THREADS)
    if (c->mu_init && GF__LOAD_SC(&c->waiters)) {
        pthread_mutex_lock(&c->mu);
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
    }
#else
    (void)c;
#endif
}

/* ---- file I/O, header, checks, locks ---- */
#ifndef GPUFEED_NO_STDIO
static int gf__read_full(int fd, void *buf, size_t len, uint64_t off)
{
    gf__fdsrc s;
    memset(&s, 0, sizeof s);
    s.fd = fd;
    return gf__fd_read_open(&s, off, buf, len);
}
static int gf__write_full(int fd, const void *buf, size_t len, uint64_t off)
{
    const uint8_t *p = (const uint8_t *)buf;
    while (len) {
        ssize_t w = pwrite(fd, p, len > (1u << 30) ? (1u << 30) : len, (off_t)off);
        if (w < 0) { if (errno == EINTR) continue; return -1; }
        if (w == 0) { errno = ENOSPC; return -1; }
        p += w;
        off += (uint64_t)w;
        len -= (size_t)w;
    }
    return 0;
}

/* what stat says of a source file */
static void gf__srcid_of(const struct stat *st, gf__srcid *id)
{
    memset(id, 0, sizeof *id);
    id->size = (uint64_t)st->st_size;
    id->mtime_s = (uint64_t)st->st_mtime; id->mtime_ns = GF__MTIME_NS(*st);
    id->ctime_s = (uint64_t)st->st_ctime; id->ctime_ns = GF__CTIME_NS(*st);
    id->ino = (uint64_t)st->st_ino; id->dev = (uint64_t)st->st_dev;
}
static void gf__srcid_take(const char *path, gf__srcid *id)
{
    struct stat st;
    if (stat(path, &st) == 0) gf__srcid_of(&st, id);
    else { memset(id, 0, sizeof *id); id->gone = 1; }
}
/* what differs between two takes of a file, NULL nothing. The change time
   moves with every write and every change of the times (cp -p, touch), and
   no one sets it back: a file rewritten and put back as it was differs. */
static const char *gf__srcid_diff(const gf__srcid *a, const gf__srcid *b)
{
    if (a->gone || b->gone) return "it is gone";
    if (a->ino != b->ino || a->dev != b->dev) return "another file took its name";
    if (a->size != b->size) return "its size changed";
    if (a->mtime_s != b->mtime_s || a->mtime_ns != b->mtime_ns) return "its modification time changed";
    if (a->ctime_s != b->ctime_s || a->ctime_ns != b->ctime_ns) return "it was written or its times were set (its change time moved)";
    return NULL;
}

/* The key takes each source file's identity from its path; the dataset
   reads the file it opened. Both must be the same file, unchanged, from
   the key (c->src) to the end of a build: 0 when they are, else 1 with
   why naming the file and what changed. With `footers`, also the footer:
   read again from the file the dataset reads, it must be the bytes the
   dataset parsed. */
static int gf__cache_sources_changed(const gf__cache *c, char *why, size_t cap, int footers)
{
    const gpufeed_dataset *ds = c->ds;
    int32_t i;
    if (!ds || !c->src) return 0;
    for (i = 0; i < ds->nfiles; i++) {
        const gpufeed_file *f = ds->files[i];
        gf__srcid now, rd;
        struct stat st;
        const char *d;
        if (ds->ident && ds->ident[i]) continue; /* open_source and remote files: their identity strings */
        gf__srcid_take(ds->paths[i], &now);
        d = gf__srcid_diff(&c->src[i], &now);
        if (!d && f->fd_open) {
            if (fstat(f->fd.fd, &st) != 0) d = "it cannot be read";
            else {
                gf__srcid_of(&st, &rd);
                if (gf__srcid_diff(&now, &rd)) d = "the file the dataset opened is no longer the one its path names";
            }
        } else if (!d && f->fd.path) { /* its descriptor closed after open: the file as it was opened */
            if (now.dev != f->fd.dev || now.ino != f->fd.ino || now.size != f->fd.size || (int64_t)now.mtime_s != f->fd.mt_s ||
                (int64_t)now.mtime_ns != f->fd.mt_ns)
                d = "the file the dataset opened is no longer the one its path names";
        }
        if (!d && footers && f->footer_len && (f->fd_open || f->fd.path)) { /* read as the dataset reads it */
            uint8_t *b = (uint8_t *)gf__alloc(c->a, f->footer_len);
            int bad = !b || (f->fd_open ? gf__read_full(f->fd.fd, b, f->footer_len, f->data_end)
                                        : f->src.read_at(f->src.ctx, f->data_end, b, f->footer_len));
            if (bad || memcmp(b, f->footer, f->footer_len) != 0) d = "its footer changed";
            gf__free(c->a, b);
        }
        if (d) { gf__fmt(why, cap, "source %s: %s", ds->paths[i], d); return 1; }
    }
    return 0;
}

/* The memory this process may use: the machine's, or less under an
   address-space or data limit (setrlimit) or under its cgroup's limit
   (v2 memory.max, v1 memory.limit_in_bytes: its group's and those above
   it); 0 unknown. */
static uint64_t gf__mem_limit(void)
{
    long pg = sysconf(_SC_PAGESIZE), np = sysconf(_SC_PHYS_PAGES);
    uint64_t m = pg > 0 && np > 0 ? (uint64_t)pg * (uint64_t)np : 0;
    struct rlimit rl;
    int k;
    for (k = 0; k < 2; k++)
        if (getrlimit(k ? RLIMIT_DATA : RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (!m || (uint64_t)rl.rlim_cur < m))
            m = (uint64_t)rl.rlim_cur;
#if defined(__linux__)
    {
        char line[1100], dir[1200];
        const char *file = "memory.max";
        FILE *f = fopen("/proc/self/cgroup", "r");
        size_t n, root = 0;
        dir[0] = 0;
        while (f && fgets(line, sizeof line, f)) {
            const char *v1 = strstr(line, ":memory:/");
            line[strcspn(line, "\n")] = 0;
            if (strncmp(line, "0::/", 4) == 0 && !root) { gf__fmt(dir, sizeof dir, "/sys/fs/cgroup%s", line + 3); root = 14; }
            else if (v1) { gf__fmt(dir, sizeof dir, "/sys/fs/cgroup/memory%s", v1 + 8); root = 21; file = "memory.limit_in_bytes"; }
        }
        if (f) fclose(f);
        while ((n = strlen(dir)) > root + 1) { /* the group, then each one above it */
            char path[1300];
            unsigned long long v;
            FILE *g;
            gf__fmt(path, sizeof path, "%s/%s", dir, file);
            g = fopen(path, "r");
            if (g && fscanf(g, "%llu", &v) == 1 && v > 0 && (!m || (uint64_t)v < m)) m = (uint64_t)v;
            if (g) fclose(g);
            while (n > root + 1 && dir[n - 1] != '/') n--;
            dir[n > root + 1 ? n - 1 : 0] = 0;
        }
    }
#endif
    return m;
}
#endif

/* The largest cache kept in the loader's own memory: ram_bytes, or (a
   cache directory, ram_bytes 0) a sixteenth of the memory the process may
   use, divided among the `share` loaders of one process that open it (a
   partitioned loader's); 0 with no_map. */
static uint64_t gf__cache_ram_budget(const gpufeed_cache_desc *cd, int32_t share)
{
    uint64_t b;
    if (!cd->dir || !*cd->dir) return cd->ram_bytes; /* a cache in RAM only: the size asked for */
    if (cd->no_map) return 0;
#ifndef GPUFEED_NO_STDIO
    b = cd->ram_bytes ? cd->ram_bytes : gf__mem_limit() / 16;
#else
    b = cd->ram_bytes;
#endif
    return share > 1 ? b / (uint64_t)share : b;
}

/* c->ram for a cache of c->size bytes (NULL: no memory; the units are then
   read into the ring's slots). Shuffled gathers read it at random: huge
   pages where the system gives them for the asking (GPUFEED_MAP_HUGE), so
   a window of units costs fewer TLB misses. */
static uint8_t *gf__cache_ram_alloc(gf__cache *c)
{
    uint8_t *r;
    if (c->size > (uint64_t)SIZE_MAX) return NULL;
    r = (uint8_t *)gf__alloc(c->a, (size_t)c->size);
#if GPUFEED_MAP_HUGE && defined(GF__MADV_HUGEPAGE) && !defined(GPUFEED_NO_STDIO)
    if (r) {
        const uintptr_t huge = (uintptr_t)2 << 20;
        uintptr_t lo = ((uintptr_t)r + huge - 1) & ~(huge - 1), hi = ((uintptr_t)r + (uintptr_t)c->size) & ~(huge - 1);
        if (hi > lo) (void)madvise((void *)lo, (size_t)(hi - lo), GF__MADV_HUGEPAGE);
    }
#endif
    return r;
}

#ifndef GPUFEED_NO_STDIO
/* a file's size, modification time and inode, in one word */
static uint64_t gf__stat_sig(const struct stat *st)
{
    uint64_t v[5];
    v[0] = (uint64_t)st->st_size;
    v[1] = (uint64_t)st->st_mtime;
    v[2] = GF__MTIME_NS(*st);
    v[3] = (uint64_t)st->st_ino; v[4] = (uint64_t)st->st_dev;
    return gpufeed_hash64(v, sizeof v, 0x7369676e6174ull) | 1; /* never 0: 0 is "not recorded" */
}

/* the file was used now: its access time (the directory's least-recently-
   used order); the modification time stays. Without threads (no struct
   timespec in strict C99) the kernel's own access time stands in. */
static void gf__cache_touch(int fd)
{
#ifdef GF__CACHE_TOUCH
    struct timespec ts[2];
    memset(ts, 0, sizeof ts);
    ts[0].tv_nsec = UTIME_NOW; ts[1].tv_nsec = UTIME_OMIT;
    (void)futimens(fd, ts);
#else
    (void)fd;
#endif
}

static void gf__sleep_ms(int ms)
{
    struct timeval tv;
    tv.tv_sec = ms / 1000; tv.tv_usec = (long)(ms % 1000) * 1000;
    select(0, NULL, NULL, NULL, &tv);
}

/* the header of a complete cache (magic GPUFEEDC) or of a build (GPUFEEDB) */
static void gf__cache_header(const gf__cache *c, uint8_t *hdr, int complete, uint64_t isum)
{
    uint32_t v = GF__CACHE_VERSION, hs = GF__CACHE_HDR, dl;
    uint64_t rows = 0;
    int64_t u;
    memset(hdr, 0, GF__CACHE_HDR);
    memcpy(hdr, complete ? "GPUFEEDC" : "GPUFEEDB", 8);
    memcpy(hdr + 8, &v, 4); memcpy(hdr + 12, &hs, 4);
    gf__st64(hdr + 16, c->key[0]);
    gf__st64(hdr + 24, c->key[1]);
    gf__st64(hdr + 32, (uint64_t)c->U);
    gf__st64(hdr + 40, c->img_row);
    gf__st64(hdr + 48, GF__CACHE_HDR);
    gf__st64(hdr + 56, c->data_off);
    for (u = 0; u < c->U; u++) rows += c->idx[u].rows;
    gf__st64(hdr + 64, c->size);
    gf__st64(hdr + 72, rows);
    gf__st64(hdr + 80, isum);
    gf__st64(hdr + 88, c->dsid[0]); gf__st64(hdr + 96, c->dsid[1]);
    gf__st64(hdr + 104, complete ? 0 : (uint64_t)getpid());
    gf__st64(hdr + 112, complete ? (uint64_t)c->U : 0);
    gf__st64(hdr + 120, (uint64_t)time(NULL));
    dl = (uint32_t)strlen(c->descr);
    if (dl > GF__CACHE_DESC_MAX - 1) dl = GF__CACHE_DESC_MAX - 1;
    memcpy(hdr + 128, &dl, 4); memcpy(hdr + GF__CACHE_DESC_OFF, c->descr, dl);
    gf__st64(hdr + GF__CACHE_HDR - 8, gpufeed_hash64(hdr, GF__CACHE_HDR - 8, 0));
}

/* Checks the cache file open on fd: header, key, index (and every unit
   when `verify_all`). Fills c->idx from it. 0 valid, else a reason. */
static int gf__cache_check_fd(gf__cache *c, const gpufeed_dataset *ds, int fd, int verify_all, char *why, size_t cap, uint64_t *file_bytes)
{
    uint8_t hdr[GF__CACHE_HDR];
    struct stat st;
    uint64_t v, nunits, img, doff, size, isum;
    int64_t u;
    *file_bytes = 0;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < GF__CACHE_HDR || gf__read_full(fd, hdr, GF__CACHE_HDR, 0)) {
        gf__fmt(why, cap, "%s: truncated header", c->path); return 2;
    }
    *file_bytes = (uint64_t)st.st_size;
    if (memcmp(hdr, "GPUFEEDC", 8) != 0) { gf__fmt(why, cap, "%s: not a gpufeed cache (bad magic)", c->path); return 2; }
    if (gpufeed_hash64(hdr, GF__CACHE_HDR - 8, 0) != gf__ld64(hdr + GF__CACHE_HDR - 8)) {
        gf__fmt(why, cap, "%s: header checksum mismatch", c->path);
        return 2;
    }
    v = gf__ld32(hdr + 8);
    if (v != GF__CACHE_VERSION) { gf__fmt(why, cap, "%s: format version %llu, expected %u", c->path, (unsigned long long)v, GF__CACHE_VERSION); return 2; }
    if (gf__ld64(hdr + 16) != c->key[0] || gf__ld64(hdr + 24) != c->key[1]) { gf__fmt(why, cap, "%s: key differs (stale cache)", c->path); return 2; }
    nunits = gf__ld64(hdr + 32);
    img = gf__ld64(hdr + 40);
    doff = gf__ld64(hdr + 56);
    size = gf__ld64(hdr + 64);
    isum = gf__ld64(hdr + 80);
    if (nunits != (uint64_t)c->U || img != c->img_row || size != (uint64_t)st.st_size
        || doff != (((uint64_t)GF__CACHE_HDR + nunits * 32 + 4095) & ~(uint64_t)4095)) {
        gf__fmt(why, cap, "%s: layout differs from the dataset's (units %llu, file size %llu of %llu)", c->path,
                (unsigned long long)nunits, (unsigned long long)st.st_size, (unsigned long long)size);
        return 2;
    }
    {
        uint8_t *ib = (uint8_t *)gf__alloc(c->a, (size_t)nunits * 32);
        uint64_t off = doff;
        if (!ib) { gf__fmt(why, cap, "out of memory"); return 2; }
        if (gf__read_full(fd, ib, (size_t)nunits * 32, GF__CACHE_HDR) || gpufeed_hash64(ib, (size_t)nunits * 32, 0) != isum) {
            gf__free(c->a, ib);
            gf__fmt(why, cap, "%s: index checksum mismatch", c->path);
            return 2;
        }
        for (u = 0; u < c->U; u++) {
            c->idx[u].off = gf__ld64(ib + u * 32); c->idx[u].rows = gf__ld64(ib + u * 32 + 8);
            c->idx[u].bytes = gf__ld64(ib + u * 32 + 16); c->idx[u].sum = gf__ld64(ib + u * 32 + 24);
            if (c->idx[u].off != off || c->idx[u].bytes != c->idx[u].rows * img || c->idx[u].rows > (uint64_t)ds->units[u].u.num_rows) {
                gf__free(c->a, ib);
                gf__fmt(why, cap, "%s: index entry %lld is inconsistent", c->path, (long long)u);
                return 2;
            }
            off += (c->idx[u].bytes + 4095) & ~(uint64_t)4095;
        }
        gf__free(c->a, ib);
        if (off != size) { gf__fmt(why, cap, "%s: index does not cover the file", c->path); return 2; }
    }
    c->size = size; c->data_off = doff;
    if (verify_all) {
        uint8_t *buf = NULL;
        size_t cap2 = 0;
        gf__piece *pc = (gf__piece *)gf__alloc(c->a, (size_t)(2 * ds->nfeat + 2) * sizeof(gf__piece));
        int64_t bad = 0;
        if (!pc) { gf__fmt(why, cap, "out of memory"); return 2; }
        for (u = 0; u < c->U; u++) {
            int32_t np = gf__image_pieces(ds, c->idx[u].rows, NULL, NULL, NULL, pc);
            if (!gf__grow(c->a, &buf, &cap2, (size_t)c->idx[u].bytes + 1) || gf__read_full(fd, buf, (size_t)c->idx[u].bytes, c->idx[u].off) ||
                gf__pieces_sum(pc, np, buf) != c->idx[u].sum) { c->ust[u] = 2; bad++; }
            else c->ust[u] = 1;
        }
        gf__free(c->a, buf); gf__free(c->a, pc);
        if (bad) { gf__fmt(why, cap, "%s: %lld of %lld units fail their checksum", c->path, (long long)bad, (long long)c->U); return 3; }
    }
    return 0;
}

/* the same for c->path, opened here (no lock): 1 when there is no file */
static int gf__cache_check_file(gf__cache *c, const gpufeed_dataset *ds, int verify_all, char *why, size_t cap, uint64_t *file_bytes)
{
    int fd = open(c->path, O_RDONLY | O_NONBLOCK), r;
    *file_bytes = 0;
    if (fd < 0 && errno != ENOENT) {
        char e[256];
        gf__errno_text(errno, e, sizeof e);
        gf__fmt(why, cap, "%s: cannot open: %s", c->path, e);
        return 2;
    }
    if (fd < 0) { gf__fmt(why, cap, "no cache file"); return 1; }
    r = gf__cache_check_fd(c, ds, fd, verify_all, why, cap, file_bytes);
    close(fd);
    return r;
}

static int gf__mkdir_p(const char *dir)
{
    char tmp[1024];
    size_t i, n = strlen(dir);
    struct stat st;
    if (n == 0 || n >= sizeof tmp) return -1;
    memcpy(tmp, dir, n + 1);
    for (i = 1; i <= n; i++) {
        if (tmp[i] == '/' || tmp[i] == 0) {
            char ch = tmp[i];
            tmp[i] = 0;
            if (stat(tmp, &st) != 0 && mkdir(tmp, 0777) != 0 && errno != EEXIST) return -1;
            tmp[i] = ch;
        }
    }
    return (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) ? 0 : -1;
}

/* Removes path unless a process uses it: takes its lock exclusively without
   waiting, checks the name still leads to the locked file, unlinks. 1
   removed, 0 in use (or already gone). */
static int gf__unlink_unused(const char *path)
{
    struct stat a, b;
    int fd = open(path, O_RDONLY | O_NONBLOCK), ok = 0;
    if (fd < 0) return 0;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &a) == 0 && stat(path, &b) == 0 &&
        a.st_ino == b.st_ino && a.st_dev == b.st_dev)
        ok = unlink(path) == 0;
    close(fd);
    return ok;
}

/* ---- the directory (listing, budget, older versions) ---- */

typedef struct gf__cent {
    gpufeed_cache_entry e;
    char name[256];
    uint64_t dsid[2];
    uint64_t mtime_ns;                 /* the file's modification time: which version is newer */
    int32_t kind;                      /* 0 .gfc, 1 .gfc.tmp, 2 legacy .gfc.lock */
    int32_t removed;
} gf__cent;

static int gf__ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* what a cache file's header says (any magic), into e */
static void gf__cache_read_entry(int fd, gf__cent *ce)
{
    uint8_t hdr[GF__CACHE_HDR];
    gpufeed_cache_entry *e = &ce->e;
    uint32_t dl;
    char *nl;
    if (gf__read_full(fd, hdr, GF__CACHE_HDR, 0)) {
        gf__fmt(e->reason, sizeof e->reason, "truncated header");
        e->state = GPUFEED_CACHE_ENTRY_INVALID;
        return;
    }
    if (memcmp(hdr, ce->kind == 1 ? "GPUFEEDB" : "GPUFEEDC", 8) != 0) {
        gf__fmt(e->reason, sizeof e->reason, ce->kind == 1 || memcmp(hdr, "GPUFEEDB", 8) ? "bad magic" : "an unfinished build under the final name");
        e->state = GPUFEED_CACHE_ENTRY_INVALID;
        return;
    }
    if (gf__ld32(hdr + 8) != GF__CACHE_VERSION) {
        gf__fmt(e->reason, sizeof e->reason, "format version %u (this gpufeed reads %u)", gf__ld32(hdr + 8), GF__CACHE_VERSION);
        e->state = GPUFEED_CACHE_ENTRY_INVALID;
        return;
    }
    if (ce->kind == 0 && gpufeed_hash64(hdr, GF__CACHE_HDR - 8, 0) != gf__ld64(hdr + GF__CACHE_HDR - 8)) {
        gf__fmt(e->reason, sizeof e->reason, "header checksum mismatch");
        e->state = GPUFEED_CACHE_ENTRY_INVALID;
        return;
    }
    gf__fmt(e->key, sizeof e->key, "%016llx%016llx", (unsigned long long)gf__ld64(hdr + 16), (unsigned long long)gf__ld64(hdr + 24));
    ce->dsid[0] = gf__ld64(hdr + 88); ce->dsid[1] = gf__ld64(hdr + 96);
    gf__fmt(e->dataset_id, sizeof e->dataset_id, "%016llx%016llx", (unsigned long long)ce->dsid[0], (unsigned long long)ce->dsid[1]);
    e->units = (int64_t)gf__ld64(hdr + 32); e->rows = (int64_t)gf__ld64(hdr + 72);
    e->pid = (int64_t)gf__ld64(hdr + 104); e->units_done = (int64_t)gf__ld64(hdr + 112);
    e->created = (int64_t)gf__ld64(hdr + 120);
    dl = gf__ld32(hdr + 128);
    if (dl > GF__CACHE_DESC_MAX - 1) dl = GF__CACHE_DESC_MAX - 1;
    hdr[GF__CACHE_DESC_OFF + dl] = 0;
    {
        char *d = (char *)hdr + GF__CACHE_DESC_OFF;
        nl = strchr(d, '\n');
        if (nl) *nl = 0;
        gf__fmt(e->dataset, sizeof e->dataset, "%s", d);
        if (nl) {
            char *f = nl + 1, *nl2 = strchr(f, '\n');
            if (nl2) *nl2 = 0;
            gf__fmt(e->features, sizeof e->features, "%s", f);
            if (nl2) gf__fmt(e->plan, sizeof e->plan, "%s", nl2 + 1);
        }
    }
}

/* one directory entry; 0 when it is not one of ours */
static int gf__cache_scan_one(const char *dir, const char *name, gf__cent *ce)
{
    struct stat st;
    int fd;
    gpufeed_cache_entry *e = &ce->e;
    memset(ce, 0, sizeof *ce);
    if (strncmp(name, "gpufeed-", 8) != 0 || strlen(name) >= sizeof ce->name) return 0;
    if (gf__ends_with(name, ".gfc")) ce->kind = 0;
    else if (gf__ends_with(name, ".gfc.tmp")) ce->kind = 1;
    else if (gf__ends_with(name, ".gfc.lock")) ce->kind = 2;
    else return 0;
    memcpy(ce->name, name, strlen(name) + 1);
    gf__fmt(e->path, sizeof e->path, "%s/%s", dir, name);
    if (stat(e->path, &st) != 0 || !S_ISREG(st.st_mode)) return 0; /* a fifo, a directory... is not ours */
    fd = open(e->path, O_RDONLY | O_NONBLOCK);
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) { if (fd >= 0) close(fd); return 0; }
    e->bytes = (uint64_t)st.st_size;
    e->last_use = (int64_t)st.st_atime;
    ce->mtime_ns = (uint64_t)st.st_mtime * 1000000000u + GF__MTIME_NS(st);
    if (ce->kind == 2) { /* an older gpufeed's build lock (fcntl): held while it builds */
        struct flock fl;
        memset(&fl, 0, sizeof fl);
        fl.l_type = F_WRLCK; fl.l_whence = SEEK_SET;
        e->state = GPUFEED_CACHE_ENTRY_LOCK;
        e->in_use = fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
        close(fd);
        return 1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) e->in_use = 1;
    else flock(fd, LOCK_UN);
    e->state = ce->kind == 1 ? (e->in_use ? GPUFEED_CACHE_ENTRY_BUILDING : GPUFEED_CACHE_ENTRY_ABANDONED) : GPUFEED_CACHE_ENTRY_READY;
    gf__cache_read_entry(fd, ce);
    if (ce->kind == 1 && e->state == GPUFEED_CACHE_ENTRY_INVALID) /* a build not yet started writing */
        e->state = e->in_use ? GPUFEED_CACHE_ENTRY_BUILDING : GPUFEED_CACHE_ENTRY_ABANDONED;
    close(fd);
    return 1;
}

/* every cache file of dir; *out from the allocator (NULL when none) */
static int gf__cache_scan(const char *dir, const gpufeed_allocator *a, gf__cent **out, int64_t *n, char *why, size_t cap)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    gf__cent *v = NULL;
    int64_t k = 0, vcap = 0;
    *out = NULL; *n = 0;
    if (!d) {
        char e[256];
        gf__errno_text(errno, e, sizeof e);
        gf__fmt(why, cap, "cannot read the cache directory '%s': %s", dir, e);
        return -1;
    }
    while ((de = readdir(d)) != NULL) {
        gf__cent ce;
        if (!gf__cache_scan_one(dir, de->d_name, &ce)) continue;
        if (k == vcap) {
            int64_t nc = vcap ? vcap * 2 : 16;
            gf__cent *nv = (gf__cent *)gf__realloc(a, v, (size_t)nc * sizeof *nv);
            if (!nv) {
                gf__free(a, v);
                closedir(d);
                gf__fmt(why, cap, "out of memory listing '%s'", dir);
                return -1;
            }
            v = nv; vcap = nc;
        }
        v[k++] = ce;
    }
    closedir(d);
    *out = v; *n = k;
    return 0;
}

static int gf__cent_lru(const void *x, const void *y)
{
    const gf__cent *a = (const gf__cent *)x, *b = (const gf__cent *)y;
    if (a->e.last_use != b->e.last_use) return a->e.last_use < b->e.last_use ? -1 : 1;
    return strcmp(a->name, b->name);
}

enum {
    GF__SWEEP_OLDER = 1,               /* complete caches of dataset `dsid` other than `keep` */
    GF__SWEEP_LEFTOVERS = 2,           /* abandoned .tmp, unreadable files, old lock files, superseded versions */
    GF__SWEEP_BUDGET = 4               /* least recently used first, down to the budget */
};

static void gf__cent_remove(gf__cent *ce, gpufeed_cache_prune_info *pi)
{
    int ok;
    if (ce->kind == 2) { /* an old build lock: free when no fcntl lock is held on it */
        ok = !ce->e.in_use && unlink(ce->e.path) == 0;
    } else ok = gf__unlink_unused(ce->e.path);
    if (ok) {
        ce->removed = 1;
        pi->removed++;
        pi->bytes_removed += ce->e.bytes;
    }
    else pi->skipped_in_use++;
}

/* Removes what `mode` says from dir, never a file in use nor the one named
   `keep`; with a budget, least recently used complete caches go until the
   directory (plus `reserve` bytes to come) fits it. pi->bytes_kept: what
   the directory holds afterwards. 0, or -1 when dir cannot be read. */
static int gf__cache_sweep(const char *dir, const gpufeed_allocator *a, int mode, const uint64_t *dsid, const char *keep,
                           uint64_t budget, uint64_t reserve, gpufeed_cache_prune_info *pi, char *why, size_t cap)
{
    gf__cent *v;
    int64_t n, i, j;
    uint64_t total = 0;
    memset(pi, 0, sizeof *pi);
    if (gf__cache_scan(dir, a, &v, &n, why, cap)) return -1;
    for (i = 0; i < n; i++) {
        gf__cent *ce = &v[i];
        int go = 0;
        if (keep && strcmp(ce->name, keep) == 0) continue;
        if (ce->kind == 1 && ce->e.state == GPUFEED_CACHE_ENTRY_ABANDONED) go = 1; /* nobody builds it */
        if ((mode & GF__SWEEP_OLDER) && ce->kind == 0 && ce->e.state == GPUFEED_CACHE_ENTRY_READY && dsid &&
            ce->dsid[0] == dsid[0] && ce->dsid[1] == dsid[1]) go = 1;
        if ((mode & GF__SWEEP_LEFTOVERS) && (ce->e.state == GPUFEED_CACHE_ENTRY_INVALID || ce->kind == 2)) go = 1;
        if ((mode & GF__SWEEP_LEFTOVERS) && ce->kind == 0 && ce->e.state == GPUFEED_CACHE_ENTRY_READY)
            for (j = 0; j < n; j++) /* a newer complete cache of the same dataset supersedes it */
                if (j != i && v[j].kind == 0 && v[j].e.state == GPUFEED_CACHE_ENTRY_READY && v[j].dsid[0] == ce->dsid[0] &&
                    v[j].dsid[1] == ce->dsid[1] && (v[j].e.created > ce->e.created || (v[j].e.created == ce->e.created
                                                                                       && v[j].mtime_ns > ce->mtime_ns))) go = 1;
        if (go) gf__cent_remove(ce, pi);
    }
    for (i = 0; i < n; i++) if (!v[i].removed) total += v[i].e.bytes;
    if ((mode & GF__SWEEP_BUDGET) && budget && total + reserve > budget) {
        if (n > 1) qsort(v, (size_t)n, sizeof *v, gf__cent_lru);
        for (i = 0; i < n && total + reserve > budget; i++) {
            gf__cent *ce = &v[i];
            if (ce->removed || ce->kind != 0 || (keep && strcmp(ce->name, keep) == 0)) continue;
            if (ce->e.in_use) { pi->skipped_in_use++; continue; }
            gf__cent_remove(ce, pi);
            if (ce->removed) total -= ce->e.bytes;
        }
    }
    pi->bytes_kept = total;
    gf__free(a, v);
    return 0;
}

static const char *gf__basename(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}
#endif

/* ---- open, build, serve ---- */

/* Opens the cache for a dataset: READY when a valid file exists (unit rows
   come from its index), BUILDING when this process may build it (the
   caller provides unit rows first via gf__cache_begin_build), else OFF.
   `share`: loaders of this process that open it together (their memory
   budget is shared). */
static gf__cache *gf__cache_new(gpufeed_dataset *ds, const gpufeed_cache_desc *cd, int32_t share)
{
    gf__cache *c = (gf__cache *)gf__alloc(&ds->alloc, sizeof *c);
    if (!c) return NULL;
    memset(c, 0, sizeof *c);
    c->a = &ds->alloc;
    c->fd = -1;
    c->U = ds->nunits;
    c->log = cd->log; c->log_user = cd->log_user;
    c->verify = cd->verify;
    c->ram_budget = gf__cache_ram_budget(cd, share);
    c->dir_budget = cd->dir_max_bytes;
    c->ds = ds;
    c->img_row = gf__cache_img_row(ds);
    c->idx = (gf__cidx *)gf__alloc(&ds->alloc, (size_t)(c->U ? c->U : 1) * sizeof(gf__cidx));
    c->ust = (uint8_t *)gf__alloc(&ds->alloc, (size_t)(c->U ? c->U : 1));
    if (!c->idx || !c->ust) { gf__cache_free(c); return NULL; }
    memset(c->idx, 0, (size_t)(c->U ? c->U : 1) * sizeof(gf__cidx));
    memset(c->ust, 0, (size_t)(c->U ? c->U : 1));
#if !defined(GPUFEED_NO_THREADS)
    if (pthread_mutex_init(&c->mu, NULL) == 0) {
        if (pthread_cond_init(&c->cv, NULL) == 0) c->mu_init = 1;
        else pthread_mutex_destroy(&c->mu);
    }
#endif
    gf__cache_dataset_id(ds, c->dsid);
#ifndef GPUFEED_NO_STDIO
    { /* each local source as the key takes it, compared again when a build completes */
        int32_t i;
        c->src = (gf__srcid *)gf__alloc(&ds->alloc, (size_t)(ds->nfiles ? ds->nfiles : 1) * sizeof(gf__srcid));
        if (!c->src) { gf__cache_free(c); return NULL; }
        for (i = 0; i < ds->nfiles; i++) {
            if (ds->ident && ds->ident[i]) memset(&c->src[i], 0, sizeof c->src[i]); /* its identity string */
            else gf__srcid_take(ds->paths[i], &c->src[i]);
        }
        if (cd->dir && *cd->dir) {
            char why[GPUFEED_ERROR_MAX];
            c->src_moved = gf__cache_sources_changed(c, why, sizeof why, 0);
            if (c->src_moved) gf__cache_log(c, "warning: cache not used: %s since the dataset was opened; reading the source", why);
        }
    }
#endif
    gf__cache_key(ds, c->dsid, c->src, c->key);
    gf__cache_describe(ds, c->descr, sizeof c->descr);
    if (cd->dir && *cd->dir) {
        size_t n = strlen(cd->dir);
        if (n >= sizeof c->dir - 1) { gf__cache_free(c); return NULL; }
        memcpy(c->dir, cd->dir, n + 1);
        while (n > 1 && c->dir[n - 1] == '/') c->dir[--n] = 0;
        gf__fmt(c->path, sizeof c->path, "%s/gpufeed-%016llx%016llx.gfc", c->dir, (unsigned long long)c->key[0], (unsigned long long)c->key[1]);
        gf__fmt(c->tmp, sizeof c->tmp, "%s.tmp", c->path);
    }
    return c;
}

#ifndef GPUFEED_NO_STDIO
/* a cache found bad: removed unless another process uses it (we hold a
   shared lock on fd: made exclusive without waiting, or left alone) */
static void gf__cache_drop_bad(gf__cache *c, int fd)
{
    struct stat a, b;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &a) == 0 && stat(c->path, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev)
        unlink(c->path);
}
#endif

#ifndef GPUFEED_NO_STDIO
/* Reads unit u's image from the file into memory the loader owns, piece by
   piece in chunks hashed as they arrive: at base + each piece's offset
   (the unit's place in ram, or a buffer), or with base NULL at each
   piece's pointer (a ring slot). 0 when what was read matches the unit's
   checksum; 1 when it does not, or the read failed (a file that shrank). */
#define GF__CACHE_CHUNK ((size_t)256 << 10)
static int gf__cache_read_unit(gf__cache *c, int64_t u, const gf__piece *pc, int32_t np, uint8_t *base)
{
    uint64_t h = 0x63616368652d7631ull; /* gf__pieces_sum's */
    int32_t i;
    for (i = 0; i < np; i++) {
        uint8_t *dst = base ? base + pc[i].off : pc[i].ptr;
        uint64_t at = 0;
        gf__h64 st;
        gf__h64_init(&st, h);
        while (at < pc[i].len) {
            size_t n = pc[i].len - at < GF__CACHE_CHUNK ? (size_t)(pc[i].len - at) : GF__CACHE_CHUNK;
            if (gf__read_full(c->fd, dst + at, n, c->idx[u].off + pc[i].off + at)) return 1;
            gf__h64_update(&st, dst + at, n);
            at += n;
        }
        h = gf__h64_final(&st);
    }
    return h != c->idx[u].sum;
}

/* GPUFEED_CACHE_VERIFY_OPEN: every unit read and checked at open, into
   ram when there is one (then served from there); the bad units, -1 out
   of memory */
static int64_t gf__cache_check_all(gf__cache *c, const gpufeed_dataset *ds)
{
    gf__piece *pc = (gf__piece *)gf__alloc(c->a, (size_t)(2 * ds->nfeat + 2) * sizeof(gf__piece));
    uint8_t *buf = NULL;
    size_t cap = 0;
    int64_t u, bad = 0;
    if (!pc) return -1;
    for (u = 0; u < c->U && bad >= 0; u++) {
        int32_t np = gf__image_pieces(ds, c->idx[u].rows, NULL, NULL, NULL, pc);
        uint8_t *base = c->ram ? c->ram + c->idx[u].off : NULL;
        if (!base && !gf__grow(c->a, &buf, &cap, (size_t)c->idx[u].bytes + 1)) bad = -1;
        else if (gf__cache_read_unit(c, u, pc, np, base ? base : buf)) { c->ust[u] = 2; bad++; }
        else c->ust[u] = c->ram ? 1 : 0; /* without ram, each use reads and checks its unit anyway */
    }
    gf__free(c->a, buf);
    gf__free(c->a, pc);
    return bad;
}
#endif

/* 1 READY from the file, 0 not there or not valid. A cache that fits
   c->ram_budget is served from the loader's own memory (each unit read in
   and checked at its first use); a larger one unit by unit into the ring's
   slots, checked at every use. */
static int gf__cache_try_ready(gf__cache *c, gpufeed_dataset *ds, const gpufeed_cache_desc *cd)
{
#ifndef GPUFEED_NO_STDIO
    char why[512];
    uint64_t fbytes;
    int r, fd, tries;
    int64_t bad;
    struct stat st;
    if (!c->path[0] || c->src_moved) return 0;
    for (tries = 0; ; tries++) {
        fd = open(c->path, O_RDONLY | O_NONBLOCK);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE) {
                gf__errno_text(errno, why, sizeof why);
                gf__cache_log(c, "warning: cannot open the cache %s: %s", c->path, why);
            }
            return 0;
        }
        if (flock(fd, LOCK_SH) == 0 && fstat(fd, &st) == 0 && st.st_nlink > 0) break;
        close(fd); /* removed between our open and our lock */
        if (tries == 2) return 0;
    }
    r = gf__cache_check_fd(c, ds, fd, 0, why, sizeof why, &fbytes);
    if (r != 0) {
        gf__cache_log(c, "warning: cache not used: %s; %s", why, cd->no_build ? "reading the source" : "rebuilding it");
        gf__cache_drop_bad(c, fd);
        close(fd);
        return 0;
    }
    c->fd = fd;
    if (c->ram_budget && c->size <= c->ram_budget) c->ram = gf__cache_ram_alloc(c); /* NULL: each use reads its unit into a slot */
    memset(c->ust, 0, (size_t)c->U);
    if (cd->verify == GPUFEED_CACHE_VERIFY_OPEN && (bad = gf__cache_check_all(c, ds)) != 0) {
        if (bad < 0) gf__cache_log(c, "warning: cache not used: out of memory checking %s; reading the source", c->path);
        else gf__cache_log(c, "warning: cache not used: %s: %lld of %lld units fail their checksum; %s", c->path, (long long)bad, (long long)c->U,
                           cd->no_build ? "reading the source" : "rebuilding it");
        if (bad > 0) gf__cache_drop_bad(c, fd);
        close(fd);
        c->fd = -1;
        gf__free(c->a, c->ram);
        c->ram = NULL;
        return 0;
    }
    GF__STORE(&c->sig, gf__stat_sig(&st));
    gf__cache_touch(fd);
    c->state = GPUFEED_CACHE_READY;
    return 1;
#else
    (void)c;
    (void)ds;
    (void)cd;
    return 0;
#endif
}

#ifndef GPUFEED_NO_STDIO
/* Opens and locks c->tmp for a build: 1 ours, 0 another process builds it
   (its lock is held), -1 an error (errno). */
static int gf__cache_lock_tmp(gf__cache *c)
{
    int tries;
    for (tries = 0; tries < 4; tries++) {
        struct stat a, b;
        int fd = open(c->tmp, O_RDWR | O_CREAT, 0666);
        if (fd < 0) return -1;
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            close(fd);
            if (e == EWOULDBLOCK) return 0;
            errno = e;
            return -1;
        }
        if (fstat(fd, &a) == 0 && stat(c->tmp, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev) { c->fd = fd; return 1; }
        close(fd); /* renamed or removed under us: the name now leads elsewhere */
    }
    errno = EAGAIN;
    return -1;
}

/* the directory's byte budget, before a build of c->size bytes: 1 it fits */
static int gf__cache_make_room(gf__cache *c)
{
    gpufeed_cache_prune_info pi;
    char why[GPUFEED_ERROR_MAX];
    if (!c->dir_budget) return 1;
    if (c->size > c->dir_budget) {
        gf__cache_log(c, "warning: the cache would take %llu bytes, more than the directory's budget dir_max_bytes %llu: not caching",
                      (unsigned long long)c->size, (unsigned long long)c->dir_budget);
        return 0;
    }
    if (gf__cache_sweep(c->dir, c->a, GF__SWEEP_BUDGET, NULL, gf__basename(c->path), c->dir_budget, c->size, &pi, why, sizeof why) != 0) return 1;
    if (pi.bytes_kept + c->size > c->dir_budget) {
        gf__cache_log(c,
                      "warning: cache directory '%s' keeps %llu bytes in use or being built; with this cache (%llu bytes) it would exceed dir_max_bytes "
                      "%llu: not caching",
                      c->dir, (unsigned long long)pi.bytes_kept, (unsigned long long)c->size, (unsigned long long)c->dir_budget);
        return 0;
    }
    return 1;
}
#endif

/* Starts a build for the given unit rows: 1 BUILDING, 0 not possible
   (warned), -1 another process completed it meanwhile. */
static int gf__cache_begin_build(gf__cache *c, const gpufeed_cache_desc *cd, const int64_t *unit_rows)
{
    if (c->src_moved) return 0;
    gf__cache_layout(c, unit_rows);
    if (cd->max_bytes && c->size > cd->max_bytes) {
        gf__cache_log(c, "warning: the cache would take %llu bytes, more than max_bytes %llu: not caching", (unsigned long long)c->size,
                      (unsigned long long)cd->max_bytes);
        return 0;
    }
    if (cd->ram_bytes && c->size <= cd->ram_bytes) { /* asked for: also without a file */
        c->ram = gf__cache_ram_alloc(c);
        c->ram_asked = c->ram != NULL;
        if (!c->ram) gf__cache_log(c, "warning: no memory for a %llu-byte in-RAM cache", (unsigned long long)c->size);
    }
#ifndef GPUFEED_NO_STDIO
    if (c->path[0]) {
        struct statvfs sv;
        struct stat fst;
        int lk;
        uint8_t *hdr;
        if (gf__mkdir_p(c->dir) != 0) {
            gf__cache_log(c, "warning: cache directory '%s' cannot be created: %s; reading the source%s", c->dir, strerror(errno),
                          c->ram ? " (RAM cache only)" : "");
            goto no_file;
        }
        if (statvfs(c->dir, &sv) == 0 && (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize < c->size + (c->size >> 6) + 4096) {
            gf__cache_log(c, "warning: '%s' has %llu bytes free, the cache needs %llu: not caching", c->dir,
                          (unsigned long long)((uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize), (unsigned long long)c->size);
            goto no_file;
        }
        if (!gf__cache_make_room(c)) goto no_file;
        lk = gf__cache_lock_tmp(c);
        if (lk < 0) {
            char why[256];
            int e = errno;
            gf__errno_text(e, why, sizeof why);
            if (e == EMFILE || e == ENFILE) gf__cache_log(c, "warning: cannot open the cache file %s: %s; reading the source", c->tmp, why);
            else gf__cache_log(c, "warning: cache directory '%s' is not writable (%s): reading the source", c->dir, why);
            goto no_file;
        }
        if (lk == 0) { /* the kernel drops a dead builder's lock */
            gf__cache_log(c, "warning: another process is building the cache %s: reading the source this time", c->path);
            goto no_file;
        }
        if (stat(c->path, &fst) == 0) { /* finished by another process between our check and the lock */
            close(c->fd); c->fd = -1;
            gf__free(c->a, c->ram); c->ram = NULL;
            return -1;
        }
        hdr = (uint8_t *)gf__alloc(c->a, GF__CACHE_HDR);
        if (hdr) gf__cache_header(c, hdr, 0, 0); /* "being built": who, what, how far */
        if (!hdr || ftruncate(c->fd, 0) != 0 || ftruncate(c->fd, (off_t)c->size) != 0 || gf__write_full(c->fd, hdr, GF__CACHE_HDR, 0) != 0) {
            gf__cache_log(c, "warning: cannot create '%s' (%s): reading the source", c->tmp, hdr ? strerror(errno) : "out of memory");
            gf__free(c->a, hdr);
            unlink(c->tmp);
            close(c->fd);
            c->fd = -1;
            goto no_file;
        }
        gf__free(c->a, hdr);
        /* units stored by the build are served at once: from ram when the cache fits
           its budget (else, quietly, read back into the ring's slots) */
        if (!c->ram && c->ram_budget && c->size <= c->ram_budget) c->ram = gf__cache_ram_alloc(c);
    }
no_file:
#endif
    if (c->fd < 0 && !c->ram) return 0;
    c->state = GPUFEED_CACHE_BUILDING;
    return 1;
}

#ifndef GPUFEED_NO_STDIO
/* Abandons the file part of a build (disk full...): nothing half-written stays. */
static void gf__cache_abandon(gf__cache *c, const char *why)
{
    int32_t expected = 0;
#if defined(__GNUC__) || defined(__clang__)
    if (!__atomic_compare_exchange_n(&c->failed, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return;
#else
    if (c->failed) return;
    c->failed = 1; (void)expected;
#endif
    gf__cache_log(c, "warning: writing the cache failed (%s): continuing from the source; the partial file is removed", why);
    unlink(c->tmp); /* the descriptor stays open until close: other workers may be writing or reading */
    gf__cache_wake(c);
}
#endif

/* The last unit is in. Each source is taken again: a build whose sources
   changed while it read them is discarded (the run goes on from the
   source). Else write index + header, fsync, rename; the older caches of
   the dataset go (unless in use) and the directory's budget is kept; then
   serve it. */
static void gf__cache_finalize(gf__cache *c)
{
#ifndef GPUFEED_NO_STDIO
    char why[GPUFEED_ERROR_MAX];
    if (gf__cache_sources_changed(c, why, sizeof why, 1)) {
        gf__cache_log(c, "warning: %s while the cache was built from it: the cache is discarded (the next run builds it again); "
                      "units come from the source from now on", why);
        if (c->fd >= 0 && !GF__LOAD(&c->failed)) unlink(c->tmp);
        GF__STORE(&c->failed, 1);
        GF__STORE(&c->state, GPUFEED_CACHE_OFF);
        gf__cache_wake(c);
        return;
    }
    if (c->fd >= 0 && !GF__LOAD(&c->failed)) {
        uint8_t *hdr = (uint8_t *)gf__alloc(c->a, GF__CACHE_HDR), *ib = (uint8_t *)gf__alloc(c->a, (size_t)c->U * 32 + 1);
        int64_t u;
        int ok = hdr && ib;
        if (ok) {
            for (u = 0; u < c->U; u++) {
                gf__st64(ib + u * 32, c->idx[u].off);
                gf__st64(ib + u * 32 + 8, c->idx[u].rows);
                gf__st64(ib + u * 32 + 16, c->idx[u].bytes);
                gf__st64(ib + u * 32 + 24, c->idx[u].sum);
            }
            gf__cache_header(c, hdr, 1, gpufeed_hash64(ib, (size_t)c->U * 32, 0));
            ok = gf__write_full(c->fd, ib, (size_t)c->U * 32, GF__CACHE_HDR) == 0 && fsync(c->fd) == 0 &&
                 gf__write_full(c->fd, hdr, GF__CACHE_HDR, 0) == 0 && fsync(c->fd) == 0 && rename(c->tmp, c->path) == 0;
        }
        gf__free(c->a, hdr); gf__free(c->a, ib);
        if (!ok) gf__cache_abandon(c, hdr && ib ? strerror(errno) : "out of memory");
        else {
            int dfd = open(c->dir, O_RDONLY);
            struct stat st;
            gpufeed_cache_prune_info pi;
            if (dfd >= 0) { fsync(dfd); close(dfd); }
            flock(c->fd, LOCK_SH); /* from builder to user */
            if (fstat(c->fd, &st) == 0) GF__STORE(&c->sig, gf__stat_sig(&st));
            gf__cache_touch(c->fd);
            gf__cache_sweep(c->dir, c->a, GF__SWEEP_OLDER | (c->dir_budget ? GF__SWEEP_BUDGET : 0), c->dsid, gf__basename(c->path),
                            c->dir_budget, 0, &pi, why, sizeof why);
            if (c->ram) { close(c->fd); c->fd = -1; } /* served from RAM: the file is not in use here */
        }
    }
    if (c->ram_asked || ((c->ram || c->fd >= 0) && !GF__LOAD(&c->failed))) GF__STORE(&c->state, GPUFEED_CACHE_READY);
    else GF__STORE(&c->state, GPUFEED_CACHE_OFF);
#else
    GF__STORE(&c->state, c->ram ? GPUFEED_CACHE_READY : GPUFEED_CACHE_OFF);
#endif
    gf__cache_wake(c);
}

/* After a unit was decoded from the source (slot pointers), during a build. */
static int gf__cache_store(gf__cache *c, const gpufeed_dataset *ds, int64_t u, int64_t rows, void *data, void *const *feat, uint8_t *const *valid,
                           gf__piece *pc)
{
    int32_t np, i;
    int64_t n;
    if (GF__LOAD(&c->state) != GPUFEED_CACHE_BUILDING) return 0;
    if (!gf__cas_u8(&c->ust[u], 0, 3)) return 0;
    np = gf__image_pieces(ds, (uint64_t)rows, data, feat, valid, pc);
    c->idx[u].sum = gf__pieces_sum(pc, np, NULL);
    for (i = 0; i < np; i++) {
        if (c->ram) memcpy(c->ram + c->idx[u].off + pc[i].off, pc[i].ptr, (size_t)pc[i].len);
#ifndef GPUFEED_NO_STDIO
        if (c->fd >= 0 && !GF__LOAD(&c->failed) && gf__write_full(c->fd, pc[i].ptr, (size_t)pc[i].len, c->idx[u].off + pc[i].off) != 0)
            gf__cache_abandon(c, strerror(errno));
#endif
    }
    GF__STORE_SC(&c->ust[u], (uint8_t)1);
#if defined(__GNUC__) || defined(__clang__)
    n = __atomic_fetch_add(&c->written, 1, __ATOMIC_ACQ_REL) + 1; /* the last one sees every unit's index entry */
#else
    n = ++c->written;
#endif
#ifndef GPUFEED_NO_STDIO
    if (c->fd >= 0 && !GF__LOAD(&c->failed)) { /* progress, for a process waiting on this build */
        uint64_t done = (uint64_t)n;
        (void)gf__write_full(c->fd, &done, 8, 112);
    }
#endif
    gf__cache_wake(c);
    return n == c->U; /* the caller finalizes, after handing its unit on */
}

/* the index of unit u in the stream's first epoch (computed once) */
static int64_t gf__cache_first_index(gf__cache *c, const gpufeed_loader *l, int64_t u)
{
    int64_t r = -1;
#if !defined(GPUFEED_NO_THREADS)
    if (c->mu_init) pthread_mutex_lock(&c->mu);
#endif
    if (!c->first_idx) {
        int64_t *perm = (int64_t *)gf__alloc(c->a, (size_t)l->U * 2 * sizeof(int64_t)); /* gf__epoch_perm's scratch above */
        c->first_idx = (int64_t *)gf__alloc(c->a, (size_t)l->U * sizeof(int64_t));
        if (perm && c->first_idx) {
            int64_t i;
            gf__epoch_perm(perm, l->U, l->ds, l->pworld, l->d.seed, l->first_epoch, !l->d.no_unit_shuffle);
            for (i = 0; i < l->U; i++) c->first_idx[perm[i]] = i;
        } else { gf__free(c->a, c->first_idx); c->first_idx = NULL; }
        gf__free(c->a, perm);
    }
    if (c->first_idx) r = c->first_idx[u];
#if !defined(GPUFEED_NO_THREADS)
    if (c->mu_init) pthread_mutex_unlock(&c->mu);
#endif
    return r;
}

/* During a build: unit u at stream position g is not in the cache yet, but
   an earlier position decodes and stores it (every unit of the stream's
   first epoch that the stream does not skip). 1: come back once it is
   stored (the worker keeps its claim on position g and assembles batches
   meanwhile; the earlier position was claimed first and is never itself
   pending, so nothing waits in a circle), and epochs after the first read
   no source bytes however far ahead the workers run. 0: decode it here. */
static int gf__cache_pending(gf__cache *c, const gpufeed_loader *l, int64_t u, int64_t g)
{
    int64_t epoch, i, u0 = l->base_ua - l->first_epoch * l->M;
    uint8_t st;
    if (GF__LOAD(&c->state) != GPUFEED_CACHE_BUILDING) return 0;
    st = GF__LOAD_SC(&c->ust[u]);
    if (st == 1 || st == 2) return 0;
    if (GF__LOAD(&c->failed) && !c->ram_asked) return 0;
    gf__pos(l, g, &epoch, &i);
    if (epoch == l->first_epoch) return 0; /* its first (and only) position of the epoch */
    if (epoch == l->first_epoch + 1 && u0 > 0 && gf__cache_first_index(c, l, u) < u0) return 0; /* skipped by the resume */
    return 1;
}

#ifndef GPUFEED_NO_STDIO
/* Before a unit is read from the file: has the file changed on disk since
   it was last looked at (size, modification time, inode)? Said once a
   change; what was read into memory before stays as it was checked, what
   is read from now on is checked as it is read. A file that shrank is not
   read any more. 1 the file can be read. */
static int gf__cache_readable(gf__cache *c)
{
    struct stat st;
    uint64_t sig, old;
    if (c->fd < 0 || GF__LOAD(&c->shrunk)) return 0;
    if (GF__LOAD(&c->state) == GPUFEED_CACHE_BUILDING) return 1; /* our own .tmp, written as we go */
    if (fstat(c->fd, &st) != 0) return 1;
    sig = gf__stat_sig(&st);
    old = GF__LOAD(&c->sig);
    if (sig == old) return 1;
    if ((uint64_t)st.st_size < c->size) GF__STORE(&c->shrunk, 1);
    if (gf__cas_u64(&c->sig, old, sig))
        gf__cache_log(c, "warning: cache %s changed on disk during the run: %s", c->path,
                      GF__LOAD(&c->shrunk) ? "it shrank: the units not yet read come from the source"
                                           : "every unit read from it from now on is checked as it is read");
    return !GF__LOAD(&c->shrunk);
}
#endif

/* a unit found bad: decoded from the source from now on, the file dropped at close */
static int gf__cache_bad(gf__cache *c, int64_t u)
{
    GF__STORE_SC(&c->ust[u], (uint8_t)2);
    GF__ADD(&c->bad, 1);
    gf__cache_wake(c);
    gf__cache_log(c, "warning: cache %s: unit %lld fails its checksum (or cannot be read): decoding it from the source; the cache will be rebuilt",
                  c->path[0] ? c->path : "(RAM)", (long long)u);
    return 1;
}

/* the slot points at unit u's image at base (its place in ram) */
static void gf__cache_point(const gf__cache *c, const gpufeed_dataset *ds, int64_t u, gf__uslot *s, const gf__piece *pc, const uint8_t *base)
{
    int32_t i, k = 0;
    if (ds->layout == GPUFEED_LAYOUT_ROW_MAJOR) s->data = (void *)(base + pc[k++].off);
    else for (i = 0; i < ds->nfeat; i++) s->feat[i] = (void *)(base + pc[k++].off);
    for (i = 0; i < ds->nfeat; i++) s->valid[i] = ds->feats[i].validity ? (uint8_t *)(base + pc[k++].off) : NULL;
    s->rows = (int64_t)c->idx[u].rows;
}

/* Serves unit u into the slot. Batches are gathered only from memory the
   loader owns, checked there: the cache's copy in ram (each unit read in
   and checked by the first use that finds it missing, or stored there by
   this process's build; again at every use with
   GPUFEED_CACHE_VERIFY_EVERY_USE), or else the slot's own buffers, read
   from the file and checked at every use. Nothing is read through a
   mapping, so a file changed or cut short under the loader reaches no
   batch: what was read before is what was checked, what is read after
   fails its check (or its read) and comes from the source. 0 served, 1
   the unit must come from the source. */
static int gf__cache_serve(gf__cache *c, gpufeed_loader *l, int64_t u, gf__uslot *s, gf__piece *pc)
{
    const gpufeed_dataset *ds = l->ds;
    int32_t np, state = GF__LOAD(&c->state);
    uint8_t st;
    if (state == GPUFEED_CACHE_OFF) return 1;
    st = GF__LOAD(&c->ust[u]);
    if (st == 2) return 1;
    if (state == GPUFEED_CACHE_BUILDING && st != 1) return 1; /* not stored (yet): gf__cache_pending tells the caller */
    if (GF__LOAD(&c->failed) && !c->ram_asked) return 1;      /* the file part of the build was given up */
    if (c->ram) {
        uint8_t *base = c->ram + c->idx[u].off;
        np = gf__image_pieces(ds, c->idx[u].rows, NULL, NULL, NULL, pc);
        if (st == 1) { /* in ram, checked: only this loader writes there */
            if (c->verify == GPUFEED_CACHE_VERIFY_EVERY_USE && gf__pieces_sum(pc, np, base) != c->idx[u].sum) return gf__cache_bad(c, u);
            gf__cache_point(c, ds, u, s, pc, base);
            GF__ADD(&c->served, 1);
            return 0;
        }
#ifndef GPUFEED_NO_STDIO
        if (st == 0 && gf__cas_u8(&c->ust[u], 0, 4)) { /* this use reads it in */
            if (!gf__cache_readable(c)) { GF__STORE_SC(&c->ust[u], (uint8_t)0); return 1; }
            if (gf__cache_read_unit(c, u, pc, np, base)) return gf__cache_bad(c, u);
            GF__STORE_SC(&c->ust[u], (uint8_t)1);
            gf__cache_point(c, ds, u, s, pc, base);
            GF__ADD(&c->served, 1);
            return 0;
        }
#endif
        /* another worker reads it in now: this use reads its own copy */
    }
#ifndef GPUFEED_NO_STDIO
    if (!gf__cache_readable(c)) return 1;
    gf__slot_layout(l, s); /* positioned reads into the slot's own buffers, checked every time */
    np = gf__image_pieces(ds, c->idx[u].rows, s->data, s->feat, s->valid, pc);
    if (gf__cache_read_unit(c, u, pc, np, NULL)) return gf__cache_bad(c, u);
    s->rows = (int64_t)c->idx[u].rows;
    GF__ADD(&c->served, 1);
    return 0;
#else
    return 1;
#endif
}

/* Loader close: drop an unfinished build, and a cache found corrupt
   (unless another process uses it). */
static void gf__cache_close(gf__cache *c)
{
    if (!c) return;
#ifndef GPUFEED_NO_STDIO
    if (GF__LOAD(&c->state) == GPUFEED_CACHE_BUILDING && c->fd >= 0) {
        struct stat a, b;
        if (!GF__LOAD(&c->failed) && fstat(c->fd, &a) == 0 && stat(c->tmp, &b) == 0 && a.st_ino == b.st_ino) unlink(c->tmp);
        close(c->fd); c->fd = -1;
    }
    if (GF__LOAD(&c->bad) > 0 && c->path[0] && c->fd >= 0) gf__cache_drop_bad(c, c->fd);
#endif
    gf__cache_free(c);
}

static int32_t gf__cache_state(const gf__cache *c) { return GF__LOAD(&c->state); }
static uint64_t gf__cache_count(const gf__cache *c, int which) { return which ? GF__GET(&c->bad) : GF__GET(&c->served); }
static const gf__cidx *gf__cache_index(const gf__cache *c) { return c->idx; }


/* ---- directory API (list, prune) ---- */

GPUFEED_API gpufeed_result gpufeed_cache_list(gpufeed_cache_entry **out, int64_t *count, const char *dir, gpufeed_error *err)
{
#ifndef GPUFEED_NO_STDIO
    gpufeed_allocator a;
    gf__cent *v;
    gpufeed_cache_entry *e;
    int64_t n, i;
    char why[GPUFEED_ERROR_MAX];
#endif
    if (err) { err->code = GPUFEED_OK; err->message[0] = 0; }
    if (out) *out = NULL;
    if (count) *count = 0;
    if (!out || !count || !dir || !*dir) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "gpufeed_cache_list: out, count or dir is NULL");
#ifndef GPUFEED_NO_STDIO
    memset(&a, 0, sizeof a);
    if (gf__cache_scan(dir, &a, &v, &n, why, sizeof why)) return gf__seterr(err, GPUFEED_ERR_IO, "%s", why);
    if (n > 1) qsort(v, (size_t)n, sizeof *v, gf__cent_lru);
    e = (gpufeed_cache_entry *)gf__alloc(&a, (size_t)(n ? n : 1) * sizeof *e);
    if (!e) { gf__free(&a, v); return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "gpufeed_cache_list: out of memory"); }
    for (i = 0; i < n; i++) e[i] = v[i].e;
    gf__free(&a, v);
    *out = e; *count = n;
    return GPUFEED_OK;
#else
    return gf__seterr(err, GPUFEED_ERR_UNSUPPORTED, "gpufeed_cache_list: cache files are compiled out (GPUFEED_NO_STDIO)");
#endif
}

GPUFEED_API void gpufeed_cache_list_free(gpufeed_cache_entry *list)
{
    gpufeed_allocator a;
    memset(&a, 0, sizeof a);
    gf__free(&a, list);
}

GPUFEED_API gpufeed_result gpufeed_cache_prune(gpufeed_cache_prune_info *out, const char *dir, uint64_t max_bytes, gpufeed_error *err)
{
    gpufeed_cache_prune_info pi;
#ifndef GPUFEED_NO_STDIO
    gpufeed_allocator a;
    char why[GPUFEED_ERROR_MAX];
#endif
    if (err) { err->code = GPUFEED_OK; err->message[0] = 0; }
    memset(&pi, 0, sizeof pi);
    if (out) *out = pi;
    if (!dir || !*dir) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "gpufeed_cache_prune: dir is NULL or empty");
#ifndef GPUFEED_NO_STDIO
    memset(&a, 0, sizeof a);
    if (gf__cache_sweep(dir, &a, GF__SWEEP_LEFTOVERS | GF__SWEEP_BUDGET, NULL, NULL, max_bytes, 0, &pi, why, sizeof why))
        return gf__seterr(err, GPUFEED_ERR_IO, "%s", why);
    if (out) *out = pi;
    if (max_bytes && pi.bytes_kept > max_bytes)
        return gf__seterr(err, GPUFEED_ERR_LIMIT, "cache directory '%s' still holds %llu bytes, more than %llu: the rest is in use or being built",
                          dir, (unsigned long long)pi.bytes_kept, (unsigned long long)max_bytes);
    return GPUFEED_OK;
#else
    (void)max_bytes;
    return gf__seterr(err, GPUFEED_ERR_UNSUPPORTED, "gpufeed_cache_prune: cache files are compiled out (GPUFEED_NO_STDIO)");
#endif
}

/* >>loader --------------------------------------------------------------- */
/* The running loader: workers claim stream positions in order and decode
   their units into the ring's slots (from the source, or served by the
   tensor cache), any worker assembles any batch,
   the consumer takes them in order; open, next, stats, close. */

/* decodes the unit at stream position g into slot s */
static void gf__decode_pos(gf__worker *w, int64_t g, gf__uslot *s)
{
    gpufeed_loader *l = w->l;
    int64_t epoch, i, unit, rows = 0;
    uint64_t t0 = gf__now_us(), t1;
    int served = 0;
    GF__NVTX_PUSH("gpufeed decode unit");
    gf__pos(l, g, &epoch, &i);
    unit = gf__unit_at(l, w->perm, &w->perm_epoch, epoch, i);
    s->g = g;
    s->unit = unit;
    s->err[0] = 0;
    s->res = GPUFEED_OK;
    if (l->d.debug_jitter_us > 0) { /* timing noise for determinism tests: a slow decode */
#if !defined(GPUFEED_NO_THREADS)
        struct timeval tv;
        uint64_t x = gf__mix64(gf__now_us() ^ ((uint64_t)w->id << 32) ^ (uint64_t)g), j0 = gf__now_us();
        tv.tv_sec = 0; tv.tv_usec = (long)(x % (uint64_t)l->d.debug_jitter_us);
        select(0, NULL, NULL, NULL, &tv);
        GF__ADD(&w->jitter_us, gf__now_us() - j0);
#endif
    }
    if (l->index_mode) { /* the unit's global row ids */
        int64_t k2, *o = (int64_t *)s->data;
        rows = l->unit_rows[unit];
        for (k2 = 0; k2 < rows; k2++) o[k2] = l->unit_base[unit] + k2;
        s->rows = rows;
    } else if (l->cache && gf__cache_serve(l->cache, l, unit, s, w->pc) == 0) {
        rows = s->rows;
        served = 1;
    } else {
        gf__slot_layout(l, s); /* the slot's own buffers (a served unit pointed elsewhere) */
        s->res = gpufeed_dataset_decode_unit(l->ds, w->s, unit, s->data, s->feat, s->valid, &rows);
        if (epoch - l->first_epoch < 64) GF__ADD(&l->epoch_bytes[epoch - l->first_epoch], w->s->last_bytes);
        if (!s->res && l->cache && rows == l->unit_rows[unit] && gf__cache_store(l->cache, l->ds, unit, rows, s->data, s->feat, s->valid, w->pc))
            w->finalize = 1;
    }
    if (s->res) gf__fmt(s->err, sizeof s->err, "%s", gpufeed_scratch_error(w->s));
    else if (rows != l->unit_rows[unit]) {
        s->res = GPUFEED_ERR_CORRUPT;
        gf__fmt(s->err, sizeof s->err, "unit %lld decoded to %lld rows, planned %lld", (long long)unit, (long long)rows, (long long)l->unit_rows[unit]);
    }
    s->rows = rows;
    GF__NVTX_POP();
    t1 = gf__now_us();
    GF__ADD(&w->busy_us, t1 - t0);
    if (!served) GF__ADD(&w->units, 1); /* units decoded (the cache counts the ones it served) */
    GF__TRACE_W(w, GF__EV_DECODE, t0, t1, unit);
}

/* ---- wake-ups ---- */

static void gf__notify(gpufeed_loader *l)
{
#if !defined(GPUFEED_NO_THREADS)
    if (!l->threads) return;
    __atomic_fetch_add(&l->seq, 1, __ATOMIC_SEQ_CST);
    if (GF__LOAD_SC(&l->sleepers)) {
        pthread_mutex_lock(&l->mu);
        pthread_cond_broadcast(&l->cv);
        pthread_mutex_unlock(&l->mu);
    }
#else
    (void)l;
#endif
}

#if !defined(GPUFEED_NO_THREADS)
/* sleeps until seq moves past `seen` (or stop); a timeout bounds any wait */
static void gf__sleep(gpufeed_loader *l, uint64_t seen)
{
    struct timespec ts;
    struct timeval tv;
    gettimeofday(&tv, NULL);
    ts.tv_sec = tv.tv_sec + 1;
    ts.tv_nsec = (long)tv.tv_usec * 1000;
    pthread_mutex_lock(&l->mu);
    __atomic_fetch_add(&l->sleepers, 1, __ATOMIC_SEQ_CST);
    if (GF__LOAD_SC(&l->seq) == seen && !GF__LOAD(&l->stop)) pthread_cond_timedwait(&l->cv, &l->mu, &ts);
    __atomic_fetch_sub(&l->sleepers, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&l->mu);
}
#endif

/* ---- the release frontier ---- */
/* Units are freed in stream order, a window at a time, once every batch
   piece that reads the window is done and all its units are published.
   The first failed unit it frees is remembered, so that a failure in
   rows no batch reads is still reported, at the epoch's end. */
static void gf__frontier(gpufeed_loader *l)
{
    int moved = 0;
#if !defined(GPUFEED_NO_THREADS)
    if (l->threads) pthread_mutex_lock(&l->fmu);
#endif
    for (;;) {
        int64_t A = l->fA, e = A / l->NW, w = A % l->NW, i0, i1, r0, r1, i, slot = A % l->WR;
        const gf__eplan *p;
        if (l->d.epochs > 0 && e >= l->d.start_epoch + l->d.epochs) break;
        p = gf__eplan_at(l, &l->fplan, e);
        if (l->fexp < 0) l->fexp = gf__window_pieces(l, p, w, e == l->first_epoch ? l->bidx0 : 0);
        if (GF__LOAD(&l->wdone[slot]) < l->fexp) break;
        gf__window(l, p, w, &i0, &i1, &r0, &r1);
        for (i = i0; i < i1 && gf__published(l, gf__gpos(l, e, i)); i++) {}
        if (i < i1) break;
        for (i = i0; i < i1; i++) {
            int64_t g = gf__gpos(l, e, i);
            const gf__uslot *s = gf__slot_of(l, g);
            if (s->res && !l->ffail) {
                l->ffail = s->res; l->ffail_epoch = e;
                gf__fmt(l->ferr, sizeof l->ferr, "%s", s->err);
            }
            GF__STORE_SC(&l->dtail, g + 1); /* its slot free for position g + RS */
        }
        GF__STORE(&l->wdone[slot], (int64_t)0);
        l->fA = A + 1;
        l->fexp = -1;
        GF__STORE_SC(&l->fdoneA, A + 1);
        moved = 1;
    }
#if !defined(GPUFEED_NO_THREADS)
    if (l->threads) pthread_mutex_unlock(&l->fmu);
#endif
    if (moved) gf__notify(l);
}

/* ---- batch assembly (any worker, any batch) ---- */

/* Shuffled rows come from anywhere in a window of tens of MiB: each copy
   waits on memory unless its lines were asked for well before. The gather
   prefetches GPUFEED_GATHER_AHEAD rows ahead into L2 (locality 2: prefetcht1
   on x86-64, PRFM PLDL2KEEP on aarch64). Measured on a 2-core x86-64 host
   copying 128-byte rows from a 32 MiB window: 16 rows ahead into L1 with a
   non-temporal hint (the first version) ran at half the speed of 64 ahead
   into L2; a prefetch into L1 holds a miss buffer each, and a core has few. */
#if (defined(__GNUC__) || defined(__clang__)) && GPUFEED_GATHER_AHEAD > 0
#define GF__PREFETCH(p) __builtin_prefetch((p), 0, 2)
#else
#define GF__PREFETCH(p) ((void)(p))
#endif
#define GF__AHEAD ((uint32_t)GPUFEED_GATHER_AHEAD)
/* every line of the RB bytes at p */
#define GF__PREFETCH_ROW(p, RB) do { \
        const uint8_t *gf__q = (p); size_t gf__o; \
        for (gf__o = 0; gf__o < (RB); gf__o += 64) GF__PREFETCH(gf__q + gf__o); \
        GF__PREFETCH(gf__q + (RB) - 1); /* a row that ends in one more line */ \
    } while (0)
/* LOOP(RB) instantiated for the common row sizes (a constant RB lets the
   compiler inline each row's memcpy), LOOP(rb) for the others */
#define GF__ROW_SIZES(rb, LOOP) \
    switch (rb) { \
    case 4: LOOP(4) break; case 8: LOOP(8) break; case 12: LOOP(12) break; case 16: LOOP(16) break; \
    case 20: LOOP(20) break; case 24: LOOP(24) break; case 32: LOOP(32) break; case 48: LOOP(48) break; \
    case 64: LOOP(64) break; case 96: LOOP(96) break; case 128: LOOP(128) break; case 256: LOOP(256) break; \
    default: LOOP(rb) break; \
    }
/* copies n rows whose sources are src[] into dst (rows of rb bytes),
   prefetching ahead */
#define GF__GATHER_LOOP(RB) \
    for (i = 0; i < warm; i++) GF__PREFETCH_ROW(src[i], (RB)); \
    for (i = 0; i < n; i++) { \
        if (i + GF__AHEAD < n) GF__PREFETCH_ROW(src[i + GF__AHEAD], (RB)); \
        memcpy(dst + (size_t)i * (RB), src[i], (RB)); \
    }
static void gf__gather_rows(uint8_t *dst, const uint8_t *const *src, uint32_t n, size_t rb)
{
    uint32_t i, warm = n;
    if (warm > GF__AHEAD) warm = GF__AHEAD; /* the rows prefetched before the first copy */
    GF__ROW_SIZES(rb, GF__GATHER_LOOP)
}
#undef GF__GATHER_LOOP

/* Which unit of the window holds row y. With every unit at least 2^g rows
   long, a bucket of 2^g rows holds at most one unit's start, so the unit
   at the bucket's start (t[y >> g]) or the next one holds y: one table
   read and one compare, no branch. 0 when the units are too uneven for a
   table of GF__WT_MAX buckets (or one is empty): a binary search then. */
static int gf__wtable(gf__worker *w, int64_t nu, int *g)
{
    int64_t j, mn = -1, rows = w->woff[nu], nb, bk;
    int gg = 0;
    for (j = 0; j < nu; j++) {
        int64_t r = w->woff[j + 1] - w->woff[j];
        if (r <= 0) return 0;
        if (j < nu - 1 && (mn < 0 || r < mn)) mn = r; /* the last unit may end anywhere */
    }
    if (mn < 0) mn = rows;
    while (gg < 62 && ((int64_t)2 << gg) <= mn) gg++;
    nb = ((rows - 1) >> gg) + 1;
    if (nb > GF__WT_MAX) return 0;
    for (bk = 0, j = 0; bk < nb; bk++) {
        while (j + 1 < nu && w->woff[j + 1] <= (bk << gg)) j++;
        w->wt[bk] = (uint32_t)j;
    }
    *g = gg;
    return 1;
}
GF__INLINE int64_t gf__wunit(const gf__worker *w, int g, int64_t y)
{
    int64_t j = w->wt[y >> g];
    return j + (y >= w->woff[j + 1]);
}

/* The common shuffled gather (row-major, no validity masks): row k's
   source is worked out GF__AHEAD rows before it is copied, prefetched,
   and kept in a ring (w->src), so the mixing arithmetic of the bijection
   runs while earlier rows' lines are on their way. */
#define GF__FUSED_SRC(xx, RB) do { \
        int64_t y_ = (int64_t)gf__bij_at(bj, (uint64_t)(xx)), j_ = gf__wunit(w, g, y_); \
        const uint8_t *p_ = (const uint8_t *)w->wu[j_]->data + (size_t)(y_ - w->woff[j_]) * (RB); \
        w->src[(xx) & (GF__GCHUNK - 1)] = p_; \
        GF__PREFETCH_ROW(p_, (RB)); \
    } while (0)
#define GF__FUSED_LOOP(RB) \
    for (x = x0; x < x1 && x < x0 + (int64_t)GF__AHEAD; x++) GF__FUSED_SRC(x, (RB)); \
    for (x = x0; x < x1; x++) { \
        if (x + (int64_t)GF__AHEAD < x1) GF__FUSED_SRC(x + (int64_t)GF__AHEAD, (RB)); \
        memcpy(out + (size_t)(x - x0) * (RB), w->src[x & (GF__GCHUNK - 1)], (RB)); \
    }
#ifdef GF__SSE2
/* a row of rb bytes (a multiple of 64, dst aligned to 64) with
   non-temporal stores: whole lines to memory, none read first */
GF__INLINE void gf__row_stream(uint8_t *dst, const uint8_t *src, size_t rb)
{
    size_t o;
    for (o = 0; o < rb; o += 16) _mm_stream_si128((__m128i *)(void *)(dst + o), _mm_loadu_si128((const __m128i *)(const void *)(src + o)));
}
#define GF__FUSED_LOOP_NT(RB) \
    for (x = x0; x < x1 && x < x0 + (int64_t)GF__AHEAD; x++) GF__FUSED_SRC(x, (RB)); \
    for (x = x0; x < x1; x++) { \
        if (x + (int64_t)GF__AHEAD < x1) GF__FUSED_SRC(x + (int64_t)GF__AHEAD, (RB)); \
        gf__row_stream(out + (size_t)(x - x0) * (RB), w->src[x & (GF__GCHUNK - 1)], (RB)); \
    }
#endif
static void gf__gather_fused(gf__worker *w, const gf__bij *bj, int g, uint8_t *out, int64_t x0, int64_t x1, size_t rb)
{
    int64_t x;
#ifdef GF__SSE2
    /* rows bound for a device: written past the caches (the copy engine
       reads them from memory), so no line is read before it is written */
    if (w->l->stream_out && rb % 64 == 0 && ((uintptr_t)out & 63) == 0) {
        switch (rb) {
        case 64: GF__FUSED_LOOP_NT(64) break;
        case 128: GF__FUSED_LOOP_NT(128) break;
        case 256: GF__FUSED_LOOP_NT(256) break;
        default: GF__FUSED_LOOP_NT(rb) break;
        }
        _mm_sfence(); /* before the batch is handed on */
        return;
    }
#endif
    GF__ROW_SIZES(rb, GF__FUSED_LOOP)
}
#undef GF__FUSED_LOOP
#undef GF__FUSED_LOOP_NT
#undef GF__FUSED_SRC
#undef GF__ROW_SIZES

/* Copies rows [a, b) of window w (epoch e, plan p) into batch slot bs from
   row d on. Row x of the window (0-based) is row bij(x) of the window's
   units taken in order (x itself with shuffle_window 0). */
static void gf__gather_piece(gf__worker *w, const gf__eplan *p, int64_t e, int64_t win, int64_t a, int64_t b, gf__bslot *bs, int64_t d)
{
    gpufeed_loader *l = w->l;
    gpufeed_dataset *ds = l->ds;
    int64_t i0, i1, r0, r1, j, nu, x;
    const int rowmajor = ds->layout == GPUFEED_LAYOUT_ROW_MAJOR;
    const size_t rb = (size_t)ds->row_bytes;
    gf__bij bj;
    int32_t f;
    int masks = 0, g = 0, table;
    gf__window(l, p, win, &i0, &i1, &r0, &r1);
    for (f = 0; f < ds->nfeat; f++) masks |= bs->valid[f] != NULL;
    nu = i1 - i0;
    for (j = 0; j < nu; j++) {
        w->wu[j] = gf__slot_of(l, gf__gpos(l, e, i0 + j));
        w->woff[j] = p->pre[i0 + j] - r0;
    }
    w->woff[nu] = r1 - r0;
    if (l->W == 0) { /* unit order: one unit, a run of rows */
        const gf__uslot *s = w->wu[0];
        int64_t n = b - a, src = a - r0;
        if (rowmajor) memcpy((uint8_t *)bs->data + (size_t)d * rb, (const uint8_t *)s->data + (size_t)src * rb, (size_t)n * rb);
        else for (f = 0; f < ds->nfeat; f++) {
            size_t z = gpufeed_feature_bytes(&ds->feats[f]);
            memcpy((uint8_t *)bs->feat[f] + (size_t)d * z, (const uint8_t *)s->feat[f] + (size_t)src * z, (size_t)n * z);
        }
        for (f = 0; f < ds->nfeat; f++) if (bs->valid[f]) memcpy(bs->valid[f] + d, s->valid[f] + src, (size_t)n);
        return;
    }
    gf__bij_init(&bj, (uint64_t)(r1 - r0), gf__window_key(l, e, i0));
    table = gf__wtable(w, nu, &g);
    if (rowmajor && !masks && table) { /* the common case */
        gf__gather_fused(w, &bj, g, (uint8_t *)bs->data + (size_t)d * rb, a - r0, b - r0, rb);
        return;
    }
    for (x = a - r0; x < b - r0; ) {
        uint32_t n = (uint32_t)(b - r0 - x < GF__GCHUNK ? b - r0 - x : GF__GCHUNK), k;
        for (k = 0; k < n; k++) { /* resolve the chunk's sources */
            int64_t y = (int64_t)gf__bij_at(&bj, (uint64_t)(x + k)), len = nu;
            const int64_t *at = w->woff;
            if (table) at += gf__wunit(w, g, y);
            else while (len > 1) { /* the last unit starting at or before y, without branches */
                int64_t half = len / 2;
                at = at[half] <= y ? at + half : at;
                len -= half;
            }
            w->cu[k] = (uint32_t)(at - w->woff);
            w->cr[k] = (uint32_t)(y - *at);
        }
        if (rowmajor) {
            for (k = 0; k < n; k++) w->src[k] = (const uint8_t *)w->wu[w->cu[k]]->data + (size_t)w->cr[k] * rb;
            gf__gather_rows((uint8_t *)bs->data + (size_t)d * rb, w->src, n, rb);
        } else for (f = 0; f < ds->nfeat; f++) {
            size_t z = gpufeed_feature_bytes(&ds->feats[f]);
            for (k = 0; k < n; k++) w->src[k] = (const uint8_t *)w->wu[w->cu[k]]->feat[f] + (size_t)w->cr[k] * z;
            gf__gather_rows((uint8_t *)bs->feat[f] + (size_t)d * z, w->src, n, z);
        }
        for (f = 0; f < ds->nfeat; f++) {
            uint8_t *m = bs->valid[f];
            if (!m) continue;
            for (k = 0; k < n; k++) m[d + k] = w->wu[w->cu[k]]->valid[f][w->cr[k]];
        }
        x += n; d += n;
    }
}

/* pads batch slot bs from `filled` rows to B: repeats its own rows, or
   zeros when it has none */
static void gf__pad_batch(gpufeed_loader *l, gf__bslot *bs, int64_t filled)
{
    gpufeed_dataset *ds = l->ds;
    int64_t i;
    int32_t j;
    if (filled == 0) {
        if (ds->layout == GPUFEED_LAYOUT_ROW_MAJOR) memset(bs->data, 0, (size_t)(l->B * ds->row_bytes));
        else for (j = 0; j < ds->nfeat; j++) memset(bs->feat[j], 0, (size_t)l->B * gpufeed_feature_bytes(&ds->feats[j]));
        for (j = 0; j < ds->nfeat; j++) if (bs->valid[j]) memset(bs->valid[j], 0, (size_t)l->B);
        return;
    }
    for (i = filled; i < l->B; i++) {
        int64_t src = i % filled;
        if (ds->layout == GPUFEED_LAYOUT_ROW_MAJOR)
            memcpy((uint8_t *)bs->data + i * ds->row_bytes, (uint8_t *)bs->data + src * ds->row_bytes, (size_t)ds->row_bytes);
        else for (j = 0; j < ds->nfeat; j++) {
            size_t z = gpufeed_feature_bytes(&ds->feats[j]);
            memcpy((uint8_t *)bs->feat[j] + (size_t)i * z, (uint8_t *)bs->feat[j] + (size_t)src * z, z);
        }
        for (j = 0; j < ds->nfeat; j++) if (bs->valid[j]) bs->valid[j][i] = bs->valid[j][src];
    }
}

/* Claims the next batch to assemble (any worker takes any batch: batch q's
   rows are a pure function of the plan) when its slot is free: 1 with the
   batch in hand (number, epoch, index, span), 0 when none can be taken now
   (w->gend at the end of the stream). */
static int gf__claim(gf__worker *w)
{
    gpufeed_loader *l = w->l;
    int64_t q = GF__LOAD_SC(&l->claim);
    for (;;) {
        if (q >= GF__LOAD_SC(&l->released) + l->S) return 0;
#if defined(__GNUC__) || defined(__clang__)
        if (__atomic_compare_exchange_n(&l->claim, &q, q + 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) break;
#else
        l->claim = q + 1;
        break;
#endif
    }
    if (w->gqlast < 0) {
        w->ge = l->first_epoch;
        w->gk = l->bidx0;
        w->gqlast = 0;
    }
    if (!gf__advance(l, &w->gp, &w->ge, &w->gk, q - w->gqlast)) { w->gend = 1; return 0; }
    w->gqlast = q;
    w->gq = q;
    gf__batch_span(l, &w->gp, w->gk, &w->glo, &w->ghi);
    w->gat = w->glo;
    return 1;
}

static int gf__gather_step(gf__worker *w);

/* One step of the batch in hand: the next window's piece when its units
   are published (1), else 0. Completes the batch after its last piece. */
static int gf__gather_step(gf__worker *w)
{
    gpufeed_loader *l = w->l;
    gf__bslot *bs = &l->bs[w->gq % l->S];
    const gf__eplan *p = gf__eplan_at(l, &w->gp, w->ge);
    uint64_t t0 = gf__now_us(), t1;
    int64_t filled, q0 = w->gq;
    if (w->gat == w->glo) { bs->res = GPUFEED_OK; bs->err[0] = 0; }
    if (w->gat < w->ghi) {
        int64_t win = gf__window_of(l, p, w->gat), i0, i1, r0, r1, i, b, A;
        gf__window(l, p, win, &i0, &i1, &r0, &r1);
        for (i = i0; i < i1; i++) if (!gf__published(l, gf__gpos(l, w->ge, i))) return 0;
        for (i = i0; i < i1 && !bs->res; i++) {
            const gf__uslot *s = gf__slot_of(l, gf__gpos(l, w->ge, i));
            if (s->res) { bs->res = s->res; gf__fmt(bs->err, sizeof bs->err, "%s", s->err); }
        }
        b = r1 < w->ghi ? r1 : w->ghi;
        GF__NVTX_PUSH("gpufeed assemble batch");
        if (!bs->res) gf__gather_piece(w, p, w->ge, win, w->gat, b, bs, w->gat - w->glo);
        GF__NVTX_POP();
        w->gat = b;
        A = w->ge * l->NW + win;
        GF__ADD_AR(&l->wdone[A % l->WR], (int64_t)1);
        gf__frontier(l);
    }
    if (w->gat >= w->ghi) { /* the batch is complete */
        filled = w->ghi - w->glo;
        bs->rows = filled;
        bs->repeated = 0;
        if (w->gk > p->kr && p->kr >= 0) { /* a padding batch: the last real batch's rows, repeated */
            if (!bs->res) gf__pad_batch(l, bs, filled);
            bs->repeated = l->B; bs->rows = l->B;
        } else if (filled < l->B && p->pad > 0 && l->world > 1) {
            if (!bs->res) gf__pad_batch(l, bs, filled);
            bs->repeated = l->B - filled; bs->rows = l->B;
        }
        bs->epoch = w->ge; bs->index = w->gk;
        GF__STORE_SC(&bs->ready, w->gq);
        GF__ADD(&w->batches, 1);
        w->gq = -1;
        gf__notify(l);
    }
    t1 = gf__now_us();
    GF__ADD(&w->asm_us, t1 - t0);
    GF__TRACE_W(w, GF__EV_ASSEMBLE, t0, t1, q0);
    return 1;
}

/* The consumer, while it waits for its batch: it claims the next batch
   only when every unit the batch reads is decoded, and assembles it whole
   before it looks again (so it never holds a batch the workers need while
   the trainer runs). On a machine with as many workers as cores this
   replaces a sleep and a wake-up per batch with work. 1: a batch done. */
#if !defined(GPUFEED_NO_THREADS)
static int gf__help(gpufeed_loader *l)
{
    gf__worker *h = l->hw;
    int64_t q, lo, hi, win, i0, i1, r0, r1, i;
    const gf__eplan *p;
    if (!h || h->gend) return 0;
    q = GF__LOAD_SC(&l->claim);
    if (q >= GF__LOAD_SC(&l->released) + l->S) return 0;
    if (h->gqlast < 0) {
        h->ge = l->first_epoch;
        h->gk = l->bidx0;
        h->gqlast = 0;
    }
    if (q < h->gqlast) return 0;
    if (!gf__advance(l, &h->gp, &h->ge, &h->gk, q - h->gqlast)) { h->gend = 1; return 0; }
    h->gqlast = q;
    p = gf__eplan_at(l, &h->gp, h->ge);
    gf__batch_span(l, p, h->gk, &lo, &hi);
    for (win = lo < hi ? gf__window_of(l, p, lo) : l->NW; win < l->NW; win++) {
        gf__window(l, p, win, &i0, &i1, &r0, &r1);
        if (r0 >= hi) break;
        for (i = i0; i < i1; i++) if (!gf__published(l, gf__gpos(l, h->ge, i))) return 0;
    }
#if defined(__GNUC__) || defined(__clang__)
    if (!__atomic_compare_exchange_n(&l->claim, &q, q + 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) return 0;
#else
    l->claim = q + 1;
#endif
    h->gq = q;
    h->glo = lo;
    h->ghi = hi;
    h->gat = lo;
    while (h->gq >= 0) gf__gather_step(h);
    return 1;
}
#endif

/* The next stream position no worker has claimed, into *g, once its
   slot is free (it held position g - RS, which must be released): 1
   claimed, 0 none now (the ring is full or the stream ends), -1 another
   worker took it first (look again). */
static int gf__claim_pos(gpufeed_loader *l, int64_t *g)
{
    int64_t p = GF__LOAD_SC(&l->dnext);
    if (l->total >= 0 && p >= l->total) return 0;
    if (p >= GF__LOAD_SC(&l->dtail) + l->RS) return 0;
#if defined(__GNUC__) || defined(__clang__)
    if (!__atomic_compare_exchange_n(&l->dnext, &p, p + 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) return -1;
#else
    l->dnext = p + 1;
#endif
    *g = p;
    return 1;
}

/* one unit of decoding: the next stream position no worker has claimed,
   once its slot is free (1), else 0. A claimed position stays this
   worker's until it is decoded (a cache unit an earlier position is
   storing: later, with the claim kept). */
static int gf__decode_step(gf__worker *w)
{
    gpufeed_loader *l = w->l;
    gf__uslot *s;
    if (w->gd < 0) {
        int got = gf__claim_pos(l, &w->gd);
        if (got <= 0) return -got; /* none: 0; taken first: 1, look again */
    }
    s = gf__slot_of(l, w->gd);
    if (l->cache && !l->index_mode) { /* a unit an earlier position is about to store in the cache: later */
        int64_t epoch, i;
        gf__pos(l, w->gd, &epoch, &i);
        if (gf__cache_pending(l->cache, l, gf__unit_at(l, w->perm, &w->perm_epoch, epoch, i), w->gd)) return 0;
    }
    if (l->elastic && !(l->cache && gf__cache_state(l->cache) == GPUFEED_CACHE_BUILDING)) {
        /* elastic mode: a window none of this rank's slices reads is not decoded
           (a cache being built needs every unit) */
        int64_t epoch, i;
        const gf__eplan *p;
        gf__pos(l, w->gd, &epoch, &i);
        p = gf__eplan_at(l, &w->dp, epoch);
        if (gf__window_pieces(l, p, i / l->step, epoch == l->first_epoch ? l->bidx0 : 0) == 0) {
            s->g = w->gd;
            s->unit = -1;
            s->rows = 0;
            s->res = GPUFEED_OK;
            s->err[0] = 0;
            GF__STORE_SC(&s->pub, w->gd + 1);
            w->gd = -1;
            gf__notify(l);
            gf__frontier(l);
            return 1;
        }
    }
    gf__decode_pos(w, w->gd, s);
    GF__STORE_SC(&s->pub, w->gd + 1);
    w->gd = -1;
    gf__notify(l);
    gf__frontier(l); /* a window no batch reads is freed by its last unit */
    if (w->finalize) { w->finalize = 0; gf__cache_finalize(l->cache); } /* after the unit is handed on */
    return 1;
}

/* ---- column-parallel decoding (a wide dataset) ---- */
/* A wide dataset's units are a row group's rows a few MiB at a time, in
   runs the epoch keeps in order. Every worker owns a share of the features
   (its scratch's range) and decodes that share of every position, reading
   on through the run: each column chunk is read once an epoch by one
   worker, and the decoder state (pages, dictionaries) of a column lives in
   one worker only, so memory follows the columns once, not once a worker.
   The first worker to reach a position sets it up (the cache may serve it,
   elastic mode may skip it); the last to finish its share publishes it. */

/* worker k's features [*j0, *j1): a contiguous share, even by bytes,
   none empty (the loader has at most as many workers as features) */
static void gf__colpar_range(const gpufeed_loader *l, int32_t k, int32_t *j0, int32_t *j1)
{
    const gpufeed_dataset *ds = l->ds;
    const int32_t F = ds->nfeat, N = l->N;
    int32_t j = 0, q;
    int64_t at = 0;
    for (q = 0; q <= k; q++) {
        const int64_t target = (int64_t)((double)ds->row_bytes * (double)(q + 1) / (double)N);
        *j0 = j;
        do at += (int64_t)gpufeed_feature_bytes(&ds->feats[j++]);
        while (j < F - (N - 1 - q) && (q == N - 1 || at < target));
        if (q == N - 1) j = F;
    }
    *j1 = j;
}

/* sets up position g in slot s: 1 the workers decode it, 0 published
   (served, skipped), -1 not yet (a unit an earlier position stores) */
static int gf__colpar_setup(gf__worker *w, int64_t g, gf__uslot *s)
{
    gpufeed_loader *l = w->l;
    int64_t epoch, i, unit;
    gf__pos(l, g, &epoch, &i);
    unit = gf__unit_at(l, w->perm, &w->perm_epoch, epoch, i);
    if (l->cache && !l->index_mode && gf__cache_pending(l->cache, l, unit, g)) return -1;
    s->g = g;
    s->unit = unit;
    s->err[0] = 0;
    s->res = GPUFEED_OK;
    s->cfail = 0;
    s->cmode = GF__CP_DONE;
    if (l->index_mode) { /* the unit's global row ids */
        int64_t k, *o = (int64_t *)s->data;
        s->rows = l->unit_rows[unit];
        for (k = 0; k < s->rows; k++) o[k] = l->unit_base[unit] + k;
        return 0;
    }
    if (l->elastic && !(l->cache && gf__cache_state(l->cache) == GPUFEED_CACHE_BUILDING)) {
        const gf__eplan *p = gf__eplan_at(l, &w->dp, epoch);
        if (gf__window_pieces(l, p, i / l->step, epoch == l->first_epoch ? l->bidx0 : 0) == 0) {
            s->unit = -1; /* no slice of this rank reads its window */
            s->rows = 0;
            return 0;
        }
    }
    if (l->cache && gf__cache_serve(l->cache, l, unit, s, w->pc) == 0) {
        GF__ADD(&w->units, 1);
        return 0;
    }
    gf__slot_layout(l, s);
    s->rows = l->unit_rows[unit];
    s->cleft = l->N;
    s->cmode = GF__CP_DECODE;
    return 1;
}

/* this worker's features of the unit in slot s; the last one publishes */
static void gf__colpar_decode(gf__worker *w, int64_t g, gf__uslot *s)
{
    gpufeed_loader *l = w->l;
    int64_t epoch, i, rows = 0;
    uint64_t t0 = gf__now_us(), t1;
    gpufeed_result r;
    GF__NVTX_PUSH("gpufeed decode features");
    gf__pos(l, g, &epoch, &i);
    if (l->d.debug_jitter_us > 0) { /* timing noise for determinism tests */
#if !defined(GPUFEED_NO_THREADS)
        struct timeval tv;
        uint64_t x = gf__mix64(gf__now_us() ^ ((uint64_t)w->id << 32) ^ (uint64_t)g), j0 = gf__now_us();
        tv.tv_sec = 0; tv.tv_usec = (long)(x % (uint64_t)l->d.debug_jitter_us);
        select(0, NULL, NULL, NULL, &tv);
        GF__ADD(&w->jitter_us, gf__now_us() - j0);
#endif
    }
    r = gpufeed_dataset_decode_unit(l->ds, w->s, s->unit, s->data, s->feat, s->valid, &rows);
    if (epoch - l->first_epoch < 64) GF__ADD(&l->epoch_bytes[epoch - l->first_epoch], w->s->last_bytes);
    if ((r || rows != s->rows) && gf__cas_i32(&s->cfail, 0, 1)) { /* the first failure's words */
        s->res = r ? r : GPUFEED_ERR_CORRUPT;
        if (r) gf__fmt(s->err, sizeof s->err, "%s", gpufeed_scratch_error(w->s));
        else gf__fmt(s->err, sizeof s->err, "unit %lld decoded to %lld rows, planned %lld", (long long)s->unit, (long long)rows, (long long)s->rows);
    }
    GF__NVTX_POP();
    t1 = gf__now_us();
    GF__ADD(&w->busy_us, t1 - t0);
    GF__TRACE_W(w, GF__EV_DECODE, t0, t1, s->unit);
    if (GF__ADD_AR(&s->cleft, -1) != 1) return;
    /* the last share: the unit is whole */
    GF__ADD(&w->units, 1);
    if (!s->res && l->cache && gf__cache_store(l->cache, l->ds, s->unit, s->rows, s->data, s->feat, s->valid, w->pc)) w->finalize = 1;
    GF__STORE_SC(&s->pub, g + 1);
    gf__notify(l);
    gf__frontier(l);
    if (w->finalize) { w->finalize = 0; gf__cache_finalize(l->cache); }
}

/* one position of this worker's features (1), else 0. A position below
   dtail is done (its slot freed: it was served or skipped). */
static int gf__colpar_step(gf__worker *w)
{
    gpufeed_loader *l = w->l;
    const int64_t g = w->cg;
    gf__uslot *s;
    int64_t set;
    int32_t mode;
    if (l->total >= 0 && g >= l->total) return 0;
    if (g >= GF__LOAD_SC(&l->dtail) + l->RS) return 0; /* its slot is not free yet */
    s = gf__slot_of(l, g);
    set = GF__LOAD_SC(&s->cset);
    if (set != g + 1) {
        int got;
        if (set == -(g + 1)) return 0; /* another worker sets it up */
        if (set > g + 1 || -set > g + 1 || g < GF__LOAD_SC(&l->dtail)) { w->cg++; return 1; } /* done, the slot reused */
        if (!gf__cas_i64(&s->cset, set, -(g + 1))) return 1; /* taken first: look again */
        got = gf__colpar_setup(w, g, s);
        if (got < 0) { GF__STORE_SC(&s->cset, set); return 0; }
        GF__STORE_SC(&s->cset, g + 1);
        if (got == 0) {
            GF__STORE_SC(&s->pub, g + 1);
            gf__notify(l);
            gf__frontier(l);
            w->cg++;
            return 1;
        }
        gf__notify(l); /* the others may decode their shares */
    }
    mode = GF__LOAD_SC(&s->cmode);
    if (g < GF__LOAD_SC(&l->dtail)) { w->cg++; return 1; } /* published and freed: the slot may be another position's */
    if (mode == GF__CP_DECODE) gf__colpar_decode(w, g, s);
    w->cg++;
    return 1;
}

/* a worker's step: assemble when it can, else decode; 0 when neither */
static int gf__worker_step(gf__worker *w)
{
    if (w->gq < 0 && !w->gend) gf__claim(w);
    if (w->gq >= 0 && gf__gather_step(w)) return 1;
    return w->l->colpar ? gf__colpar_step(w) : gf__decode_step(w);
}
#if !defined(GPUFEED_NO_THREADS)
static int gf__worker_done(const gf__worker *w)
{
    return w->gend && w->gq < 0 && w->gd < 0 && w->l->total >= 0 && (w->l->colpar ? w->cg : GF__LOAD_SC(&w->l->dnext)) >= w->l->total;
}

static void *gf__worker_main(void *arg)
{
    gf__worker *w = (gf__worker *)arg;
    gpufeed_loader *l = w->l;
    while (!GF__LOAD(&l->stop) && !gf__worker_done(w)) {
        uint64_t seen = GF__LOAD_SC(&l->seq), t0, t1;
        int64_t p;
        int full;
        if (gf__worker_step(w)) continue;
        p = l->colpar ? w->cg : GF__LOAD_SC(&l->dnext); /* a position left to decode, but its slot taken */
        full = (l->total < 0 || p < l->total) && p >= GF__LOAD_SC(&l->dtail) + l->RS;
#ifndef GPUFEED_NO_STDIO
        /* a row group left for a next unit that may read on: not held while asleep */
        if (w->s->pend) gf__scratch_rg_pending(w->s, NULL);
#endif
        t0 = gf__now_us();
        gf__sleep(l, seen);
        t1 = gf__now_us();
        GF__ADD(&w->idle_us, t1 - t0);
        if (full) GF__ADD(&w->full_us, t1 - t0);
        GF__TRACE_W(w, GF__EV_IDLE, t0, t1, w->gq);
    }
    return NULL;
}
#endif

/* ---- the consumer ---- */

static void gf__stop_workers(gpufeed_loader *l)
{
#if !defined(GPUFEED_NO_THREADS)
    int32_t i;
    for (i = 0; i < l->ninner; i++) gf__stop_workers(l->inner[i]);
    if (!l->threads || !l->w) return;
    GF__STORE_SC(&l->stop, 1);
    pthread_mutex_lock(&l->mu);
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    for (i = 0; i < l->N; i++) if (l->w[i].started) { pthread_join(l->w[i].th, NULL); l->w[i].started = 0; }
#else
    (void)l;
#endif
}

static int gf__batch_ready(gpufeed_loader *l, int64_t q) { return GF__LOAD_SC(&l->bs[q % l->S].ready) == q; }
static int gf__released_to(gpufeed_loader *l, int64_t A) { return GF__LOAD_SC(&l->fdoneA) >= A; }

/* Waits until cond(l, arg) holds: sleeping on the workers' progress, or,
   single-threaded, doing their steps on this thread. Non-zero when
   nothing can move (a bug: reported, never a hang). */
static int gf__wait_for(gpufeed_loader *l, int (*cond)(gpufeed_loader *, int64_t), int64_t arg)
{
    while (!cond(l, arg)) {
        if (!l->threads) {
            int32_t i, moved = 0;
            for (i = 0; i < l->N; i++) moved |= gf__worker_step(&l->w[i]);
            if (!moved) return 1;
            continue;
        }
#if !defined(GPUFEED_NO_THREADS)
        {
            uint64_t seen = GF__LOAD_SC(&l->seq);
            if (cond(l, arg)) break;
            if (cond == gf__batch_ready && gf__help(l)) continue;
            gf__sleep(l, seen);
        }
#endif
    }
    return 0;
}


/* rows of each rank in an epoch; returns this rank's batches */
GPUFEED_API int64_t gpufeed_loader_epoch_batches(gpufeed_loader *l, int64_t epoch)
{
    if (!l || epoch < 0) return 0;
    if (l->ninner) return gpufeed_loader_epoch_batches(l->inner[0], epoch);
    return gf__eplan_at(l, &l->aplan, epoch)->nb;
}

static void gf__write_trace(gpufeed_loader *l)
{
#ifndef GPUFEED_NO_STDIO
    FILE *f;
    int32_t i;
    int64_t k;
    int first = 1;
    static const char *const names[] = { "decode unit", "trainer wait", "idle", "assemble batch" };
    if (!l->d.trace_path) return;
    f = fopen(l->d.trace_path, "w");
    if (!f) return;
    fprintf(f, "{\"traceEvents\": [\n");
    fprintf(f, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 0, \"args\": {\"name\": \"gpufeed loader\"}}");
    fprintf(f, ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 0, \"args\": {\"name\": \"consumer\"}}");
    for (i = 0; i < l->N; i++)
        fprintf(f, ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": %d, \"args\": {\"name\": \"worker %d\"}}", i + 1, i);
    first = 0;
    for (k = 0; k < l->nev; k++)
        fprintf(f, "%s{\"name\": \"%s\", \"ph\": \"X\", \"pid\": 1, \"tid\": 0, \"ts\": %llu, \"dur\": %llu, \"args\": {\"batch\": %lld}}",
                first ? "" : ",\n", names[l->ev[k].kind], (unsigned long long)(l->ev[k].ts - l->t_open), (unsigned long long)l->ev[k].dur,
                (long long)l->ev[k].arg);
    for (i = 0; i < l->N; i++)
        for (k = 0; k < l->w[i].nev; k++)
            fprintf(f, ",\n{\"name\": \"%s\", \"ph\": \"X\", \"pid\": 1, \"tid\": %d, \"ts\": %llu, \"dur\": %llu, \"args\": {\"%s\": %lld}}",
                    names[l->w[i].ev[k].kind], i + 1, (unsigned long long)(l->w[i].ev[k].ts - l->t_open), (unsigned long long)l->w[i].ev[k].dur,
                    l->w[i].ev[k].kind == GF__EV_DECODE ? "unit" : "batch", (long long)l->w[i].ev[k].arg);
    fprintf(f, "\n], \"displayTimeUnit\": \"ms\"}\n");
    fclose(f);
#else
    (void)l;
#endif
}

GPUFEED_API void gpufeed_loader_close(gpufeed_loader *l)
{
    const gpufeed_allocator *a;
    gpufeed_dataset *ds;
    int32_t i, k;
    if (!l) return;
    ds = l->counted ? l->ds : NULL; /* a dataset closed before this loader goes with it */
    a = &l->ds->alloc;
    if (l->inner) { /* partitioned: the partitions' loaders */
        for (i = 0; i < l->ninner; i++) gpufeed_loader_close(l->inner[i]);
        gf__free(a, l->inner);
        gf__free(a, l->omem);
        gf__free(a, l->ofeat);
        gf__free(a, l->ovalid);
        gf__free(a, l);
        if (ds && gf__dataset_users(ds, -2)) gf__dataset_free(ds);
        return;
    }
    gf__stop_workers(l);
    gf__write_trace(l);
#ifndef GPUFEED_NO_STDIO
    if (l->w && l->N > 0 && l->w[0].s && l->w[0].s->relq.keep) /* the kept bytes go with the loader */
        for (i = 0; i < l->ds->nfiles; i++)
            if (l->ds->files[i]->keep_to) (void)gf__file_release(l->ds->files[i], 0, l->ds->files[i]->keep_to);
#endif
    gf__cache_close(l->cache);
    if (l->w) {
        for (i = 0; i < l->N; i++) {
            gf__worker *w = &l->w[i];
            if (w->ring.slot) for (k = 0; k < w->ring.depth; k++) {
                gf__free(a, w->ring.slot[k].mem);
                gf__free(a, w->ring.slot[k].feat);
                gf__free(a, w->ring.slot[k].valid);
            }
            gf__free(a, w->ring.slot);
            gpufeed_scratch_close(w->s);
            gf__free(a, w->perm);
            gf__free(a, w->ev);
            gf__free(a, w->pc);
            gf__free(a, (void *)w->wu); gf__free(a, w->woff);
            gf__eplan_free(&w->gp, a);
            gf__eplan_free(&w->dp, a);
        }
    }
    if (l->hw) {
        gf__free(a, (void *)l->hw->wu);
        gf__free(a, l->hw->woff);
        gf__free(a, l->hw->ev);
        gf__eplan_free(&l->hw->gp, a);
        gf__free(a, l->hw);
    }
    if (l->bs)
        for (i = 0; i < l->S; i++) {
            gf__free(a, l->bs[i].mem);
            gf__free(a, l->bs[i].feat);
            gf__free(a, l->bs[i].valid);
        }
#if !defined(GPUFEED_NO_THREADS)
    if (l->threads) {
        pthread_mutex_destroy(&l->mu);
        pthread_cond_destroy(&l->cv);
        pthread_mutex_destroy(&l->fmu);
    }
#endif
    gf__eplan_free(&l->fplan, a);
    gf__eplan_free(&l->cplan, a);
    gf__eplan_free(&l->aplan, a);
    gf__free(a, l->w);
    gf__free(a, l->bs);
    gf__free(a, l->unit_rows);
    gf__free(a, l->unit_base);
    gf__free(a, l->wdone);
    gf__free(a, l->ev);
    gf__free(a, l);
    if (ds && gf__dataset_users(ds, -2)) gf__dataset_free(ds);
}

GPUFEED_API const char *gpufeed_loader_error(const gpufeed_loader *l) { return l ? l->err : ""; }

static gpufeed_result gf__loader_open_ex(gpufeed_loader **out, gpufeed_dataset *ds, const gpufeed_loader_desc *desc,
                                         gpufeed_error *err, const int64_t *rows_override);

static gpufeed_result gf__loader_open_parts(gpufeed_loader **out, gpufeed_dataset *ds, const gpufeed_loader_desc *desc, gpufeed_error *err);

GPUFEED_API gpufeed_result gpufeed_loader_open(gpufeed_loader **out, gpufeed_dataset *ds, const gpufeed_loader_desc *desc, gpufeed_error *err)
{
    gpufeed_loader_desc d;
    if (!desc) return gf__loader_open_ex(out, ds, desc, err, NULL);
    d = *desc;
    if (d.epochs == 0) d.epochs = 1; /* a zero-initialised desc: one epoch (endless is GPUFEED_EPOCHS_ENDLESS) */
    if (d.global_batch_rows > 0 && d.partitions > 1) return gf__loader_open_parts(out, ds, &d, err);
    return gf__loader_open_ex(out, ds, &d, err, NULL);
}

/* gf__loader_open_in, its phases. Each sets *err and returns the code on
   failure; the caller closes the loader then. */

/* the stream's geometry: workers, world, batch rows, windows, ring depth */
static gpufeed_result gf__loader_open_plan(gpufeed_loader *l, gpufeed_dataset *ds, const gpufeed_loader_desc *desc, gpufeed_error *err)
{
    l->ds = ds; l->d = *desc;
    l->t_open = gf__now_us();
    l->N = desc->workers ? desc->workers : 1;
    l->W = desc->shuffle_window;
    l->world = desc->world ? desc->world : 1;
    l->rank = desc->rank;
    l->elastic = desc->global_batch_rows > 0;
    if (l->elastic) { /* every rank plans the global stream, then takes its slice */
        l->pworld = 1; l->prank = 0;
        l->G = desc->global_batch_rows;
        l->B = l->G / l->world;
        l->s0 = (int64_t)l->rank * l->B;
        l->d.batch_rows = l->B;
    } else {
        l->pworld = l->world; l->prank = l->rank;
        l->B = desc->batch_rows;
        l->G = l->B; l->s0 = 0;
    }
    l->U = ds->nunits;
    l->fplan.epoch = l->cplan.epoch = l->aplan.epoch = -1;
    if (!l->d.trace_max_events) l->d.trace_max_events = 1 << 20;
    if (l->U < l->world) {
        int32_t world = l->world;
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "loader: %lld units cannot be shared by %d ranks (use smaller unit_rows)", (long long)ds->nunits,
                          world);
    }
    l->M = (l->U - l->prank + l->pworld - 1) / l->pworld;
    if (l->W > l->M) l->W = (int32_t)l->M; /* a window beyond the epoch is the epoch */
    l->step = l->W > 1 ? l->W : 1;
    l->NW = (l->M + l->step - 1) / l->step;
    {
        uint64_t bb;
        if (!gf__mul_ok_u64((uint64_t)l->B, (uint64_t)ds->row_bytes + (uint64_t)ds->nfeat + 1, &bb) || bb > ((uint64_t)1 << 40)) {
            int64_t rows = l->B;
            return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "loader: batch of %lld rows x %lld bytes is too large", (long long)rows, (long long)ds->row_bytes);
        }
    }

    /* units held per worker: a window's share, twice (one being read while
       the next decodes). The default is 2, and 4 with more than 4 workers:
       units finish out of order, and with many workers the ring ran full
       behind the oldest one (on 16 cores, 15 workers idle 21% of the time
       at 2; an epoch took 0.061-0.067 s at 2, 0.049-0.051 s at 4) */
    l->D = desc->ring_depth ? desc->ring_depth : l->N > 4 ? 4 : 2;
    {
        int32_t share = (l->step + l->N - 1) / l->N, need = 2 * share;
        if (need < 2) need = 2;
        if (l->D < need) l->D = need;
    }
    /* A wide dataset: the workers decode every position together
       (gf__colpar_step), so the ring holds positions, not units a worker:
       two windows, and at least 4 (ring_depth given: that many a worker) */
    if (ds->wide_rows > 0 && ds->nfeat >= l->N) {
        int32_t need = 2 * l->step < 4 ? 4 : 2 * l->step;
        l->colpar = 1;
        if (!desc->ring_depth) l->D = (need + l->N - 1) / l->N;
    }
#if !defined(GPUFEED_NO_THREADS)
    l->threads = 1;
#endif
    return GPUFEED_OK;
}

/* rows of every unit: the dataset's, the override's, the cache's index or
   one counting pass through the predicates; the cache opened or built */
static gpufeed_result gf__loader_open_rows(gpufeed_loader *l, const gpufeed_loader_desc *desc, const int64_t *rows_override,
                                          gpufeed_error *err)
{
    gpufeed_dataset *ds = l->ds;
    const gpufeed_allocator *a = &ds->alloc;
    int64_t i;
    l->unit_rows = (int64_t *)gf__alloc(a, (size_t)l->U * sizeof(int64_t));
    l->w = (gf__worker *)gf__alloc(a, (size_t)l->N * sizeof(gf__worker));
    if (!l->unit_rows || !l->w) { return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "loader: out of memory"); }
    memset(l->w, 0, (size_t)l->N * sizeof(gf__worker));
    if (!gf__eplan_alloc(l, &l->fplan) || !gf__eplan_alloc(l, &l->cplan) || !gf__eplan_alloc(l, &l->aplan)) {
        return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "loader: out of memory");
    }
    for (i = 0; i < l->U; i++) {
        l->unit_rows[i] = rows_override ? rows_override[i] : ds->units[i].u.num_rows;
        if (ds->units[i].u.num_rows > l->max_unit_rows) l->max_unit_rows = ds->units[i].u.num_rows;
    }
    if (rows_override) { /* the index loader: unit u holds rows unit_base[u] .. + unit_rows[u] */
        l->index_mode = 1;
        l->unit_base = (int64_t *)gf__alloc(a, (size_t)l->U * sizeof(int64_t));
        if (!l->unit_base) { return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "loader: out of memory"); }
        for (i = 0; i < l->U; i++) l->unit_base[i] = i ? l->unit_base[i - 1] + l->unit_rows[i - 1] : 0;
    }
    if (desc->cache && !rows_override) {
        l->cache = gf__cache_new(ds, desc->cache, l->cache_share > 1 ? l->cache_share : 1);
        if (!l->cache) { return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "loader: out of memory for the cache"); }
        if (gf__cache_try_ready(l->cache, ds, desc->cache)) { /* rows from the cache's index */
            l->max_unit_rows = 0;
            for (i = 0; i < l->U; i++) {
                l->unit_rows[i] = (int64_t)gf__cache_index(l->cache)[i].rows;
                if (l->unit_rows[i] > l->max_unit_rows) l->max_unit_rows = l->unit_rows[i];
            }
            for (i = 0; i < l->U; i++) if (ds->units[i].u.num_rows > l->max_unit_rows) l->max_unit_rows = ds->units[i].u.num_rows;
        }
    }
    if (ds->npred > 0 && !rows_override && !(l->cache && gf__cache_state(l->cache) == GPUFEED_CACHE_READY)) {
        /* rows that pass the predicates: one counting pass */
        gpufeed_scratch *s;
        gf__uslot tmp;
        memset(&tmp, 0, sizeof tmp);
        if (gpufeed_scratch_open(&s, ds, NULL)) { return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "loader: out of memory"); }
        tmp.mem = (uint8_t *)gf__alloc(a, gf__slot_bytes(l));
        tmp.feat = (void **)gf__alloc(a, (size_t)ds->nfeat * sizeof(void *));
        tmp.valid = (uint8_t **)gf__alloc(a, (size_t)ds->nfeat * sizeof(uint8_t *));
        if (!tmp.mem || !tmp.feat || !tmp.valid) {
            gf__free(a, tmp.mem);
            gf__free(a, tmp.feat);
            gf__free(a, tmp.valid);
            gpufeed_scratch_close(s);
            return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "loader: out of memory");
        }
        gf__slot_layout(l, &tmp);
        for (i = 0; i < l->U; i++) {
            int64_t rows = 0;
            gpufeed_result r = gpufeed_dataset_decode_unit(ds, s, i, tmp.data, tmp.feat, tmp.valid, &rows);
            if (r) {
                gf__seterr(err, r, "%s", gpufeed_scratch_error(s));
                gf__free(a, tmp.mem);
                gf__free(a, tmp.feat);
                gf__free(a, tmp.valid);
                gpufeed_scratch_close(s);
                return r;
            }
            l->unit_rows[i] = rows;
        }
        gf__free(a, tmp.mem);
        gf__free(a, tmp.feat);
        gf__free(a, tmp.valid);
        gpufeed_scratch_close(s);
    }
    if (l->world > 1 && l->d.even == GPUFEED_EVEN_PAD && !l->elastic) {
        /* Padding batches read the last real batch's units again, so its
           units are held until they are assembled too: the ring holds the
           most units a batch can span (the fewest-row units summing to B,
           and one it starts inside), plus a window, else one worker would
           wait for a slot that only its own batch frees. */
        int64_t *sorted = (int64_t *)gf__alloc(a, (size_t)l->U * sizeof(int64_t)), span = 1, sum = 0, need;
        if (!sorted) { return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "loader: out of memory"); }
        memcpy(sorted, l->unit_rows, (size_t)l->U * sizeof(int64_t));
        qsort(sorted, (size_t)l->U, sizeof(int64_t), gf__cmp_i64);
        for (i = 0; i < l->U && sum < l->B; i++, span++) sum += sorted[i];
        gf__free(a, sorted);
        need = span + l->step + 1;
        if ((int64_t)l->N * l->D < need) l->D = (int32_t)((need + l->N - 1) / l->N);
    }
    if (l->cache && gf__cache_state(l->cache) == GPUFEED_CACHE_OFF) {
        if (desc->cache->no_build) { gf__cache_free(l->cache); l->cache = NULL; }
        else if (l->world > 1) {
            gf__cache_log(l->cache,
                          "warning: with world %d no rank builds the cache while training (each decodes only its share): build it ahead of time "
                          "(gpufeed_cache_build, gpufeed-cache build); reading the source", l->world);
            gf__cache_free(l->cache); l->cache = NULL;
        } else {
            int b = gf__cache_begin_build(l->cache, desc->cache, l->unit_rows);
            if (b < 0 && gf__cache_try_ready(l->cache, ds, desc->cache)) b = 1; /* another process just finished it */
            if (b <= 0) { gf__cache_free(l->cache); l->cache = NULL; }
        }
    }
    return GPUFEED_OK;
}

/* where the stream starts (batch start_batch of start_epoch, the window of
   its first row), its length, and the consumer's cursor */
static gpufeed_result gf__loader_open_start(gpufeed_loader *l, const gpufeed_loader_desc *desc, gpufeed_error *err)
{
    if (desc->epochs < 0) { /* an endless stream needs batches */
        int64_t e, any = 0;
        for (e = desc->start_epoch; e < desc->start_epoch + 64 && !any; e++) any = gf__eplan_at(l, &l->aplan, e)->nb > 0;
        if (!any) {
            return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "loader: no batches: %lld rows per batch is more than this rank's rows in every epoch",
                              (long long)desc->batch_rows);
        }
    }

    /* where the stream starts: batch start_batch of start_epoch (the next
       epoch past its end), decoding from the window of its first row */
    {
        const gf__eplan *p = gf__eplan_at(l, &l->aplan, desc->start_epoch);
        l->first_epoch = desc->start_epoch;
        l->bidx0 = desc->start_batch;
        if (desc->start_batch > p->nb)
            return gf__seterr(err, GPUFEED_ERR_INVALID_ARG,
                              "loader: start_batch %lld is past the end of epoch %lld, which has %lld batches on this rank "
                              "(0..%lld; %lld: the next epoch's start)", (long long)desc->start_batch, (long long)desc->start_epoch,
                              (long long)p->nb, (long long)(p->nb > 0 ? p->nb - 1 : 0), (long long)p->nb);
        if (p->nb > 0 && desc->start_batch == p->nb) { l->first_epoch++; l->bidx0 = 0; } /* one past the last batch: the next epoch */
        p = gf__eplan_at(l, &l->aplan, l->first_epoch);
        if (l->bidx0 == 0) l->w0 = 0;
        else {
            int64_t S0 = p->take, S1;
            if (p->kr >= 0) gf__batch_span(l, p, l->bidx0, &S0, &S1);
            l->w0 = gf__window_of(l, p, S0);
        }
        l->base_ua = l->first_epoch * l->M + (l->w0 * l->step < l->M ? l->w0 * l->step : l->M);
    }
    if (desc->epochs > 0) {
        int64_t last = desc->start_epoch + desc->epochs; /* exclusive */
        l->total = last * l->M - l->base_ua;
        if (l->total < 0) l->total = 0;
    } else l->total = -1;
    l->fA = l->first_epoch * l->NW + l->w0;
    l->fdoneA = l->fA;
    l->fexp = -1;

    /* the consumer's cursor */
    l->ce = l->first_epoch; l->ck = l->bidx0;
    for (;;) {
        const gf__eplan *p;
        if (desc->epochs > 0 && l->ce >= desc->start_epoch + desc->epochs) { l->cend = 1; break; }
        p = gf__eplan_at(l, &l->cplan, l->ce);
        if (l->ck < p->nb) break;
        if (p->R > p->take) l->dropped += (uint64_t)(p->R - p->take);
        l->ce++; l->ck = 0;
    }
    return GPUFEED_OK;
}

/* windows in flight, batch slots, and the unit slots (D allocated by each worker) */
/* Huge pages for a loader's own large buffers (unit and batch slots, with
   the default allocator; GPUFEED_MAP_HUGE): a wide table's ring is hundreds
   of MiB, first touched in 4 KiB faults by every worker at once (on 16
   cores, a 2,000-column file's first epoch took 1.8x the next ones). Two
   epochs of a 2,000 x 100k file at 2 workers: 157,000 page faults without
   the advice, 96,000 with it, the same peak RSS. Advice only. */
static void gf__advise_huge(const gpufeed_allocator *a, void *p, size_t n)
{
#if GPUFEED_MAP_HUGE && !defined(GPUFEED_NO_STDIO) && defined(GF__MADV_HUGEPAGE)
    const uintptr_t h = (uintptr_t)2 << 20, lo = ((uintptr_t)p + h - 1) & ~(h - 1), hi = ((uintptr_t)p + n) & ~(h - 1);
    if (!p || (a && a->alloc)) return; /* the caller's allocator: its memory to advise */
    if (hi > lo) (void)madvise((void *)lo, (size_t)(hi - lo), GF__MADV_HUGEPAGE);
#else
    (void)a; (void)p; (void)n;
#endif
}

static gpufeed_result gf__loader_open_slots(gpufeed_loader *l, gpufeed_error *err)
{
    gpufeed_dataset *ds = l->ds;
    const gpufeed_allocator *a = &ds->alloc;
    int32_t j;
    size_t slotb, bbytes;
    uint64_t bytes;

    /* windows in flight (their piece counters), batch slots */
    l->WR = (int64_t)l->N * l->D + 2;
    l->RS = (int64_t)l->N * l->D;
    l->dnext = 0;
    l->dtail = 0;
    l->wdone = (int64_t *)gf__alloc(a, (size_t)l->WR * sizeof(int64_t));
    if (!l->wdone) { return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "loader: out of memory"); }
    memset(l->wdone, 0, (size_t)l->WR * sizeof(int64_t));
    bbytes = gf__batch_bytes(ds, l->B);
    l->S = l->N + 4; /* a slot a worker, one the trainer holds, slack for the one it assembles and readiness */
    if ((uint64_t)l->S * bbytes > ((uint64_t)(ds->wide_rows ? 128 : 256) << 20)) {
        /* cap the batch slots' memory, keeping 3 (a wide dataset's: half,
           its memory follows the bytes in flight) */
        uint64_t s = ((uint64_t)(ds->wide_rows ? 128 : 256) << 20) / (bbytes ? bbytes : 1);
        l->S = s < 3 ? 3 : (int32_t)s;
    }
    l->bs = (gf__bslot *)gf__alloc(a, (size_t)l->S * sizeof(gf__bslot));
    if (!l->bs) { return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "loader: out of memory for batches"); }
    memset(l->bs, 0, (size_t)l->S * sizeof(gf__bslot));
    for (j = 0; j < l->S; j++) {
        gf__bslot *b = &l->bs[j];
        void *data;
        size_t off;
        b->ready = -1;
        b->mem = (uint8_t *)gf__alloc(a, bbytes + GPUFEED_ALIGN);
        b->feat = (void **)gf__alloc(a, (size_t)(ds->nfeat ? ds->nfeat : 1) * sizeof(void *));
        b->valid = (uint8_t **)gf__alloc(a, (size_t)(ds->nfeat ? ds->nfeat : 1) * sizeof(uint8_t *));
        if (!b->mem || !b->feat || !b->valid) {
            return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "loader: out of memory for batches (%llu bytes each)", (unsigned long long)bbytes);
        }
        gf__advise_huge(a, b->mem, bbytes + GPUFEED_ALIGN);
        memset(b->mem, 0, bbytes + GPUFEED_ALIGN);
        off = gf__align_up((size_t)(uintptr_t)b->mem) - (size_t)(uintptr_t)b->mem;
        gf__batch_layout(ds, l->B, b->mem + off, &data, b->feat, b->valid);
        b->data = data;
    }

    /* workers: rings of unit slots, allocated once */
    slotb = gf__slot_bytes(l);
    if (!gf__mul_ok_u64((uint64_t)slotb, (uint64_t)l->N * (uint64_t)l->D, &bytes) || bytes > ((uint64_t)1 << 42)) {
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "loader: %d workers x %d slots x %llu bytes is too much memory", l->N, l->D, (unsigned long long)slotb);
    }
    for (j = 0; j < l->N; j++) {
        gf__worker *w = &l->w[j];
        int32_t k, j0 = 0, j1 = 0;
        w->l = l;
        w->id = j;
        w->perm_epoch = -1;
        w->gp.epoch = -1;
        w->ring.depth = l->D;
        w->ring.slot = (gf__uslot *)gf__alloc(a, (size_t)l->D * sizeof(gf__uslot));
        if (w->ring.slot) memset(w->ring.slot, 0, (size_t)l->D * sizeof(gf__uslot)); /* a failed open closes what it has */
        w->perm = (int64_t *)gf__alloc(a, (size_t)l->U * 2 * sizeof(int64_t)); /* gf__epoch_perm's scratch above */
        w->wu = (const gf__uslot **)gf__alloc(a, (size_t)l->step * sizeof(gf__uslot *));
        w->woff = (int64_t *)gf__alloc(a, (size_t)(l->step + 1) * sizeof(int64_t));
        w->pc = (gf__piece *)gf__alloc(a, (size_t)(2 * ds->nfeat + 2) * sizeof(gf__piece));
        w->dp.epoch = -1;
        if (l->colpar) gf__colpar_range(l, j, &j0, &j1);
        if (!w->ring.slot || !w->perm || !w->wu || !w->woff || !w->pc || !gf__eplan_alloc(l, &w->gp) || !gf__eplan_alloc(l, &w->dp)
            || (l->colpar ? gf__scratch_open_range(ds, j0, j1, &w->s) : gpufeed_scratch_open(&w->s, ds, NULL))) {
            return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "loader: out of memory");
        }
        if (l->colpar) w->s->own = 1; /* its columns' bytes: read by it alone, in order */
        else gf__scratch_share(w->s);
        w->s->relq.hold = 4; /* see gf__relq_push: a worker's calls interrupt the others */
        w->s->relq.keep = l->cache == NULL; /* every epoch reads the source again (GPUFEED_KEEP_BYTES) */
        for (k = 0; k < l->D; k++) {
            gf__uslot *s = &w->ring.slot[k];
            s->mem = (uint8_t *)gf__alloc(a, slotb);
            gf__advise_huge(a, s->mem, slotb);
            s->feat = (void **)gf__alloc(a, (size_t)(ds->nfeat ? ds->nfeat : 1) * sizeof(void *));
            s->valid = (uint8_t **)gf__alloc(a, (size_t)(ds->nfeat ? ds->nfeat : 1) * sizeof(uint8_t *));
            if (!s->mem || !s->feat || !s->valid) {
                return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "loader: out of memory for unit slots (%llu bytes each)", (unsigned long long)slotb);
            }
            gf__slot_layout(l, s);
        }
        w->gd = -1; /* no position claimed */
        w->gq = -1; w->gqlast = -1;
    }
    return GPUFEED_OK;
}

#if !defined(GPUFEED_NO_THREADS)
/* the helper worker, the locks, the worker threads; with prefill, the
   first batches assembled before the call returns */
static gpufeed_result gf__loader_open_threads(gpufeed_loader *l, const gpufeed_loader_desc *desc, gpufeed_error *err)
{
    const gpufeed_allocator *a = &l->ds->alloc;
    int32_t j;
    l->hw = (gf__worker *)gf__alloc(a, sizeof(gf__worker));
    if (!l->hw) { return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "loader: out of memory"); }
    memset(l->hw, 0, sizeof *l->hw);
    l->hw->l = l;
    l->hw->id = -1;
    l->hw->gq = -1;
    l->hw->gqlast = -1;
    l->hw->gp.epoch = -1;
    l->hw->wu = (const gf__uslot **)gf__alloc(a, (size_t)l->step * sizeof(gf__uslot *));
    l->hw->woff = (int64_t *)gf__alloc(a, (size_t)(l->step + 1) * sizeof(int64_t));
    if (!l->hw->wu || !l->hw->woff || !gf__eplan_alloc(l, &l->hw->gp)) { return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "loader: out of memory"); }
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv, NULL);
    pthread_mutex_init(&l->fmu, NULL);
    for (j = 0; j < l->N; j++) {
        if (pthread_create(&l->w[j].th, NULL, gf__worker_main, &l->w[j]) != 0) {
            return gf__seterr(err, GPUFEED_ERR_PLATFORM, "loader: cannot start worker thread %d", j);
        }
        l->w[j].started = 1;
    }
    if (desc->prefill) { /* warm start: the first batches assembled */
        int64_t e = l->ce, k = l->ck, q;
        for (q = 0; q < l->S - 1 && !l->cend; q++) {
            if (q > 0 && !gf__advance(l, &l->aplan, &e, &k, 1)) break;
            gf__wait_for(l, gf__batch_ready, q);
        }
    }
    return GPUFEED_OK;
}
#endif

/* The desc's fields, each in its range before any arithmetic uses it:
   epochs and batch numbers bounded so that a stream position (epoch x
   units + unit) and a window number fit 62 bits. */
static gpufeed_result gf__loader_check_desc(const gpufeed_dataset *ds, const gpufeed_loader_desc *desc, gpufeed_error *err)
{
    const int64_t emax = (INT64_MAX / 4) / (ds->nunits + 1), bmax = INT64_MAX / 4;
    if (desc->global_batch_rows < 0)
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "loader: negative global_batch_rows (%lld)", (long long)desc->global_batch_rows);
    if (desc->partitions < 0 || (desc->partitions > 1 && desc->global_batch_rows == 0))
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "loader: partitions %d needs global_batch_rows (elastic mode)", desc->partitions);
    if (desc->global_batch_rows > 0) { /* elastic mode: batch_rows follows from G and the world */
        int64_t wd = desc->world > 0 ? desc->world : 1;
        if (desc->global_batch_rows % wd != 0)
            return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "loader: global_batch_rows %lld is not a multiple of world %lld (every rank takes an equal slice)",
                              (long long)desc->global_batch_rows, (long long)wd);
        if (desc->batch_rows != 0 && desc->batch_rows != desc->global_batch_rows / wd)
            return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "loader: batch_rows %lld does not match global_batch_rows %lld / world %lld = %lld (leave it 0)",
                              (long long)desc->batch_rows, (long long)desc->global_batch_rows, (long long)wd, (long long)(desc->global_batch_rows / wd));
    } else if (desc->batch_rows <= 0) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "loader: batch_rows must be positive (got %lld)",
                                                        (long long)desc->batch_rows);
    if (desc->workers < 0 || desc->workers > GPUFEED_MAX_WORKERS)
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "loader: workers must be 1..%d (got %d)", GPUFEED_MAX_WORKERS, desc->workers);
    if (desc->ring_depth < 0 || desc->ring_depth > 1024)
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "loader: ring_depth must be 1..1024 (got %d)", desc->ring_depth);
    if (desc->shuffle_window < 0) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "loader: negative shuffle_window");
    if (desc->world < 0 || desc->rank < 0 || (desc->world > 0 && desc->rank >= desc->world) || (desc->world == 0 && desc->rank != 0))
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "loader: rank %d is not in world %d", desc->rank, desc->world);
    if (desc->start_epoch < 0 || desc->start_batch < 0) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "loader: negative start_epoch or start_batch");
    if (desc->epochs < 0 && desc->epochs != GPUFEED_EPOCHS_ENDLESS)
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "loader: epochs %lld: a count, 0 (one epoch) or GPUFEED_EPOCHS_ENDLESS (%d)",
                          (long long)desc->epochs, GPUFEED_EPOCHS_ENDLESS);
    if (desc->start_epoch > emax || (desc->epochs > 0 && desc->epochs > emax - desc->start_epoch))
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG,
                          "loader: start_epoch %lld + epochs %lld is more than %lld (the most epochs %lld units can be counted in)",
                          (long long)desc->start_epoch, (long long)desc->epochs, (long long)emax, (long long)ds->nunits);
    if (desc->start_batch > bmax)
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "loader: start_batch %lld is more than %lld", (long long)desc->start_batch, (long long)bmax);
    if (desc->last_batch != GPUFEED_KEEP_LAST && desc->last_batch != GPUFEED_DROP_LAST)
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "loader: unknown last_batch %d", desc->last_batch);
    if (desc->even != GPUFEED_EVEN_DROP && desc->even != GPUFEED_EVEN_PAD)
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "loader: unknown even policy %d", desc->even);
    if (desc->debug_jitter_us < 0 || desc->trace_max_events < 0)
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "loader: negative debug_jitter_us (%d) or trace_max_events (%d)", desc->debug_jitter_us,
                          desc->trace_max_events);
    if (desc->cache && (desc->cache->verify < GPUFEED_CACHE_VERIFY_FIRST_USE || desc->cache->verify > GPUFEED_CACHE_VERIFY_EVERY_USE))
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "loader: unknown cache verify mode %d", desc->cache->verify);
    if (ds->nunits == 0) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "loader: the dataset has no rows to load (every row group was pruned)");
    return GPUFEED_OK;
}

/* rows_override: the rows of every unit are known (the index loader of the
   device-resident mode): no counting pass, no cache, not one of the
   dataset's users. cache_share: loaders opening the cache together. */
static gpufeed_result gf__loader_open_in(gpufeed_loader **out, gpufeed_dataset *ds, const gpufeed_loader_desc *desc,
                                         gpufeed_error *err, const int64_t *rows_override, int32_t cache_share)
{
    gpufeed_loader *l;
    const gpufeed_allocator *a;
    gpufeed_result r;
    if (err) { err->code = GPUFEED_OK; err->message[0] = 0; }
    if (!out) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "gpufeed_loader_open: out is NULL");
    *out = NULL;
    if (!ds || !desc) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "gpufeed_loader_open: dataset or desc is NULL");
    a = &ds->alloc;
    r = gf__loader_check_desc(ds, desc, err);
    if (r) return r;
    l = (gpufeed_loader *)gf__alloc(a, sizeof *l);
    if (!l) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "loader: out of memory");
    memset(l, 0, sizeof *l);
    l->cache_share = cache_share;
    r = gf__loader_open_plan(l, ds, desc, err);
    if (!r) r = gf__loader_open_rows(l, desc, rows_override, err);
    if (!r) r = gf__loader_open_start(l, desc, err);
    if (!r) r = gf__loader_open_slots(l, err);
#if !defined(GPUFEED_NO_THREADS)
    if (!r) r = gf__loader_open_threads(l, desc, err);
#endif
    if (r) {
        gpufeed_loader_close(l);
        return r;
    }
    if (!rows_override) { /* the dataset stays until this loader closes */
        l->counted = 1;
        (void)gf__dataset_users(ds, 2);
    }
    *out = l;
    return GPUFEED_OK;
}

static gpufeed_result gf__loader_open_ex(gpufeed_loader **out, gpufeed_dataset *ds, const gpufeed_loader_desc *desc,
                                         gpufeed_error *err, const int64_t *rows_override)
{
    return gf__loader_open_in(out, ds, desc, err, rows_override, 1);
}

/* Partitioned elastic mode: rank r of world W serves partitions [r P / W,
   (r + 1) P / W) of P, each the per-world stream of rank p of world P with
   batches of G / P rows; batch k is their batch k side by side. */
static gpufeed_result gf__loader_open_parts(gpufeed_loader **out, gpufeed_dataset *ds, const gpufeed_loader_desc *desc, gpufeed_error *err)
{
    gpufeed_loader *l;
    const gpufeed_allocator *a;
    int64_t G = desc->global_batch_rows;
    int32_t P = desc->partitions, W = desc->world > 0 ? desc->world : 1, per, j, N;
    size_t bb, off;
    if (err) { err->code = GPUFEED_OK; err->message[0] = 0; }
    if (!out) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "gpufeed_loader_open: out is NULL");
    *out = NULL;
    if (!ds) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "gpufeed_loader_open: dataset or desc is NULL");
    if (desc->world < 0 || desc->rank < 0 || desc->rank >= W)
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "loader: rank %d is not in world %d", desc->rank, desc->world);
    if (P % W != 0) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "loader: world %d does not divide partitions %d (a rank serves whole partitions)", W, P);
    if (G % P != 0) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "loader: global_batch_rows %lld is not a multiple of partitions %d", (long long)G, P);
    if (desc->batch_rows != 0 && desc->batch_rows != G / W)
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "loader: batch_rows %lld does not match global_batch_rows %lld / world %d = %lld (leave it 0)",
                          (long long)desc->batch_rows, (long long)G, W, (long long)(G / W));
    if (desc->workers < 0 || desc->workers > GPUFEED_MAX_WORKERS)
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "loader: workers must be 1..%d (got %d)", GPUFEED_MAX_WORKERS, desc->workers);
    a = &ds->alloc;
    l = (gpufeed_loader *)gf__alloc(a, sizeof *l);
    if (!l) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "loader: out of memory");
    memset(l, 0, sizeof *l);
    l->ds = ds; l->d = *desc;
    l->t_open = gf__now_us();
    l->world = W;
    l->rank = desc->rank;
    l->elastic = 1;
    l->G = G;
    l->B = G / W;
    l->s0 = (int64_t)desc->rank * l->B;
    l->d.batch_rows = l->B;
    per = P / W;
    N = desc->workers ? desc->workers : 1;
    l->inner = (gpufeed_loader **)gf__alloc(a, (size_t)per * sizeof(gpufeed_loader *));
    if (!l->inner) { gf__free(a, l); return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "loader: out of memory"); }
    memset(l->inner, 0, (size_t)per * sizeof(gpufeed_loader *));
    for (j = 0; j < per; j++) {
        gpufeed_loader_desc in = *desc;
        gpufeed_result r;
        in.global_batch_rows = 0; in.partitions = 0;
        in.rank = desc->rank * per + j; in.world = P;
        in.batch_rows = G / P;
        in.workers = N / per + (j < N % per ? 1 : 0); /* the workers shared out, one at least */
        if (in.workers < 1) in.workers = 1;
        if (!in.ring_depth) in.ring_depth = N > 4 ? 4 : 2; /* the default of the loader's workers in all */
        in.trace_path = NULL;
        r = gf__loader_open_in(&l->inner[j], ds, &in, err, NULL, per);
        if (r) {
            l->ninner = j;
            gpufeed_loader_close(l);
            return r;
        }
        l->ninner = j + 1;
        l->N += l->inner[j]->N;
    }
    bb = gf__batch_bytes(ds, l->B);
    l->omem = (uint8_t *)gf__alloc(a, bb + GPUFEED_ALIGN);
    l->ofeat = (void **)gf__alloc(a, (size_t)(ds->nfeat ? ds->nfeat : 1) * sizeof(void *));
    l->ovalid = (uint8_t **)gf__alloc(a, (size_t)(ds->nfeat ? ds->nfeat : 1) * sizeof(uint8_t *));
    if (!l->omem || !l->ofeat || !l->ovalid) {
        gpufeed_loader_close(l);
        return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "loader: out of memory for batches");
    }
    memset(l->omem, 0, bb + GPUFEED_ALIGN);
    off = gf__align_up((size_t)(uintptr_t)l->omem) - (size_t)(uintptr_t)l->omem;
    gf__batch_layout(ds, l->B, l->omem + off, &l->odata, l->ofeat, l->ovalid);
    l->counted = 1; /* it frees its partitions' loaders with the dataset's allocator */
    (void)gf__dataset_users(ds, 2);
    *out = l;
    return GPUFEED_OK;
}

/* the partitions' batch k, side by side (into the uploader's slot if set) */
static gpufeed_result gf__next_parts(gpufeed_loader *l, gpufeed_batch *out)
{
    gpufeed_dataset *ds = l->ds;
    void *data = l->dst_data ? l->dst_data : l->odata;
    void **feat = l->dst_feat ? l->dst_feat : l->ofeat;
    uint8_t **valid = l->dst_valid ? l->dst_valid : l->ovalid;
    int64_t part = l->G / ((int64_t)l->world * (int64_t)l->ninner) * 0 + l->B / l->ninner, at = 0;
    int32_t j, f;
    uint64_t t0 = gf__now_us();
    gpufeed_result r = GPUFEED_OK;
    gpufeed_batch b;
    memset(&b, 0, sizeof b);
    if (!l->t_first) l->t_first = t0;
    for (j = 0; j < l->ninner; j++) {
        r = gpufeed_loader_next(l->inner[j], &b);
        if (r == GPUFEED_DONE && j == 0) break;
        if (r) {
            if (r == GPUFEED_DONE) {
                gf__fmt(l->err, sizeof l->err, "loader: internal error: partition %d ended before the others", j);
                r = GPUFEED_ERR_PLATFORM;
            }
            else gf__fmt(l->err, sizeof l->err, "%s", gpufeed_loader_error(l->inner[j]));
            return l->failed = r;
        }
        if (b.num_rows != part) {
            gf__fmt(l->err, sizeof l->err, "loader: internal error: partition %d gave %lld rows, want %lld", j, (long long)b.num_rows, (long long)part);
            return l->failed = GPUFEED_ERR_PLATFORM;
        }
        if (ds->layout == GPUFEED_LAYOUT_ROW_MAJOR) memcpy((uint8_t *)data + at * ds->row_bytes, b.data, (size_t)(part * ds->row_bytes));
        else for (f = 0; f < ds->nfeat; f++) {
            size_t z = gpufeed_feature_bytes(&ds->feats[f]);
            memcpy((uint8_t *)feat[f] + (size_t)at * z, b.features[f], (size_t)part * z);
        }
        for (f = 0; f < ds->nfeat; f++) if (valid[f] && b.valid[f]) memcpy(valid[f] + at, b.valid[f], (size_t)part);
        at += part;
    }
    l->wait_us += gf__now_us() - t0;
    if (r == GPUFEED_DONE) { l->done = 1; return GPUFEED_DONE; }
    out->num_rows = at;
    out->index = b.index;
    out->epoch = b.epoch;
    out->data = ds->layout == GPUFEED_LAYOUT_ROW_MAJOR ? data : NULL;
    out->row_bytes = ds->row_bytes;
    out->feature_offset = ds->offs;
    out->features = ds->layout == GPUFEED_LAYOUT_PER_FEATURE ? feat : l->ofeat;
    out->valid = valid;
    out->feature_info = ds->feats; out->num_features = ds->nfeat;
    out->slice_start = l->s0;
    l->batches++;
    l->rows += (uint64_t)at;
    return GPUFEED_OK;
}

/* the uploader's slot as the batch's destination (NULL: the loader's own) */
static void gf__deliver(gpufeed_loader *l, const gf__bslot *bs, gpufeed_batch *out)
{
    gpufeed_dataset *ds = l->ds;
    out->num_rows = bs->rows;
    out->index = bs->index;
    out->epoch = bs->epoch;
    out->row_bytes = ds->row_bytes;
    out->feature_offset = ds->offs;
    out->feature_info = ds->feats; out->num_features = ds->nfeat;
    out->slice_start = l->s0;
    if (!l->dst_data && !l->dst_feat) {
        out->data = bs->data;
        out->features = bs->feat;
        out->valid = bs->valid;
        return;
    }
    {
        uint64_t t0 = gf__now_us();
        int32_t j;
        size_t n = (size_t)bs->rows;
        if (ds->layout == GPUFEED_LAYOUT_ROW_MAJOR) memcpy(l->dst_data, bs->data, n * (size_t)ds->row_bytes);
        else for (j = 0; j < ds->nfeat; j++) memcpy(l->dst_feat[j], bs->feat[j], n * gpufeed_feature_bytes(&ds->feats[j]));
        for (j = 0; j < ds->nfeat; j++) if (bs->valid[j] && l->dst_valid && l->dst_valid[j]) memcpy(l->dst_valid[j], bs->valid[j], n);
        out->data = l->dst_data;
        out->features = l->dst_feat;
        out->valid = l->dst_valid;
        l->copy_us += gf__now_us() - t0;
    }
}

/* The uploader's exchange, in place of gf__deliver's copy: the batch just
   delivered keeps its memory, which passes to the caller, and its slot
   takes `mem` (a buffer of the same size from the same allocator) in its
   place. No worker touches the slot until the next gpufeed_loader_next
   releases it, and that release publishes the new pointers. Returns the
   batch's memory. Only for a loader without partitions. */
static uint8_t *gf__loader_exchange(gpufeed_loader *l, uint8_t *mem)
{
    gf__bslot *bs = &l->bs[(l->q - 1) % l->S];
    uint8_t *old = bs->mem;
    void *data;
    bs->mem = mem;
    gf__batch_layout(l->ds, l->B, mem + (gf__align_up((size_t)(uintptr_t)mem) - (size_t)(uintptr_t)mem), &data, bs->feat, bs->valid);
    bs->data = data;
    return old;
}

/* failures in units no batch read: reported once the frontier passed them */
static gpufeed_result gf__check_released(gpufeed_loader *l, int64_t upto_epoch)
{
    if (gf__wait_for(l, gf__released_to, upto_epoch * l->NW)) {
        gf__fmt(l->err, sizeof l->err, "loader: internal error: no progress possible (batch %lld)", (long long)l->q);
        return l->failed = GPUFEED_ERR_PLATFORM;
    }
    if (l->ffail && l->ffail_epoch < upto_epoch) {
        gf__fmt(l->err, sizeof l->err, "%s", l->ferr);
        return l->failed = l->ffail;
    }
    return GPUFEED_OK;
}

static gpufeed_result gf__loader_next(gpufeed_loader *l, gpufeed_batch *out)
{
    uint64_t t0, tw = 0;
    gf__bslot *bs;
    int64_t e_prev;
    if (l->failed) return l->failed;
    if (l->done) return GPUFEED_DONE;
    if (l->ninner) return gf__next_parts(l, out);
    t0 = gf__now_us();
    if (!l->t_first) l->t_first = t0;
    else if (l->t_last_ret) l->consumer_us += t0 - l->t_last_ret;
    if (l->holding) { /* the previous batch's slot may be refilled */
        GF__STORE_SC(&l->released, l->q);
        l->holding = 0;
        gf__notify(l);
    }
    if (l->cend) {
        int64_t upto = l->d.epochs > 0 ? l->d.start_epoch + l->d.epochs : l->ce;
        gpufeed_result r = gf__check_released(l, upto);
        if (r) return r;
        l->done = 1;
        gf__stop_workers(l); /* they are done: a cache build they finished is final now */
        return GPUFEED_DONE;
    }
    if (l->ce > l->first_epoch) {
        gpufeed_result r = gf__check_released(l, l->ce);
        if (r) return r;
    }
    if (!gf__batch_ready(l, l->q)) {
        uint64_t w0 = gf__now_us();
        int stuck = gf__wait_for(l, gf__batch_ready, l->q);
        tw = gf__now_us() - w0;
        l->wait_us += tw;
        gf__trace(&l->ev, &l->nev, &l->cap_ev, l->d.trace_path ? l->d.trace_max_events : 0, &l->ds->alloc, GF__EV_WAIT, w0, tw, l->q);
        if (stuck) {
            gf__fmt(l->err, sizeof l->err, "loader: internal error: no progress possible (batch %lld)", (long long)l->q);
            return l->failed = GPUFEED_ERR_PLATFORM;
        }
    }
    bs = &l->bs[l->q % l->S];
    if (bs->res) {
        gf__fmt(l->err, sizeof l->err, "%s", bs->err);
        return l->failed = bs->res;
    }
    gf__deliver(l, bs, out);
    l->q++;
    l->holding = 1;
    l->delivered++;
    l->batches++;
    l->rows += (uint64_t)bs->rows;
    l->repeated += (uint64_t)bs->repeated;

    /* the cursor moves to the next batch (past epochs without any) */
    e_prev = l->ce;
    l->ck++;
    for (;;) {
        const gf__eplan *p;
        if (l->d.epochs > 0 && l->ce >= l->d.start_epoch + l->d.epochs) { l->cend = 1; break; }
        p = gf__eplan_at(l, &l->cplan, l->ce);
        if (l->ck < p->nb) break;
        if (p->R > p->take) l->dropped += (uint64_t)(p->R - p->take);
        l->ce++; l->ck = 0;
        if (l->ce - e_prev > 4096) { l->cend = 1; break; } /* no batches ahead */
    }
    l->t_last_ret = gf__now_us();
    (void)tw;
    return GPUFEED_OK;
}

/* One thread at a time: a second thread that enters while another is
   inside gets GPUFEED_ERR_USAGE (and an empty batch), the loader untouched. */
GPUFEED_API gpufeed_result gpufeed_loader_next(gpufeed_loader *l, gpufeed_batch *out)
{
    gpufeed_result r;
    int32_t idle = 0;
    if (!l || !out) return GPUFEED_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
#if defined(__GNUC__) || defined(__clang__)
    if (!__atomic_compare_exchange_n(&l->busy, &idle, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return GPUFEED_ERR_USAGE;
#else
    if (l->busy != idle) return GPUFEED_ERR_USAGE;
    l->busy = 1;
#endif
    r = gf__loader_next(l, out);
    GF__STORE_SC(&l->busy, (int32_t)0);
    return r;
}

/* loader l's workers into the arrays of `into` from entry k on, their
   decode and assembly seconds into *dec and *asmb; the next entry */
static int32_t gf__stats_workers(gpufeed_loader *l, gpufeed_loader *into, int32_t k, gpufeed_stats *st, double *dec, double *asmb, double *help,
                                  double *jit)
{
    int32_t i;
    for (i = 0; i < l->N && k < GPUFEED_MAX_WORKERS; i++, k++) {
        *jit += (double)GF__GET(&l->w[i].jitter_us) * 1e-6;
        st->ring_full_s += (double)GF__GET(&l->w[i].full_us) * 1e-6;
        into->busy_s[k] = (double)GF__GET(&l->w[i].busy_us) * 1e-6;
        into->asm_s[k] = (double)GF__GET(&l->w[i].asm_us) * 1e-6;
        into->bp_s[k] = (double)GF__GET(&l->w[i].idle_us) * 1e-6;
        st->units_decoded += GF__GET(&l->w[i].units);
        *dec += into->busy_s[k]; *asmb += into->asm_s[k];
    }
    if (l->hw) *help += (double)GF__GET(&l->hw->asm_us) * 1e-6; /* the consumer's own assembly */
    st->rows_dropped += l->dropped; st->rows_repeated += l->repeated;
    st->units_per_epoch += l->M;
    if (l->cache) { /* each partition's loader has its own */
        st->cache_state = gf__cache_state(l->cache);
        st->units_from_cache += gf__cache_count(l->cache, 0);
        st->cache_bad_units += gf__cache_count(l->cache, 1);
    }
    return k;
}

/* each worker's busy share of the loader's life (into l->share) and their
   mean: the per-worker figures and the summary are the same numbers */
static double gf__stats_shares(gpufeed_loader *l, int32_t k, double life)
{
    double sum = 0;
    int32_t i;
    for (i = 0; i < k; i++) {
        double work = life > 0 ? (l->busy_s[i] + l->asm_s[i]) / life : 0;
        double awake = life > 0 ? 1 - l->bp_s[i] / life : 0; /* a worker that never slept was busy, also when
                                                                 the machine's other work kept it off a core */
        double b = awake > work ? awake : work;
        l->share[i] = b < 0 ? 0 : b > 1 ? 1 : b;
        sum += l->share[i];
    }
    return k > 0 ? sum / k : 0;
}

/* the times the verdict weighs (seconds) */
typedef struct gf__vtimes {
    double wall, life, wait, cons, dec, asmb, help, rd, jit;
    int32_t threads, cores;
} gf__vtimes;

/* what helps when decoding (or reading) limits the loader: more workers
   while cores are free, the tensor cache while there is none */
static const char *gf__stats_decode_advice(const gpufeed_stats *st, int32_t cores)
{
    int free_cores = cores <= 0 || st->workers < cores, cache = st->cache_state != GPUFEED_CACHE_OFF;
    if (free_cores && !cache) return "add workers (up to the free cores) or use the tensor cache";
    if (free_cores) return "add workers (up to the free cores), or build the cache ahead (gpufeed_cache_build, gpufeed-cache build)";
    if (!cache) return "the tensor cache or fewer features, or more cores";
    return "build the cache ahead (gpufeed_cache_build, gpufeed-cache build), fewer features, or more cores";
}

/* the verdict when the loader has threads and the trainer waits: the stage
   that limits it and what helps; `pace` says how the trainer waited */
static void gf__stats_stage(gpufeed_stats *st, const gf__vtimes *t, const char *pace)
{
    char *v = st->verdict;
    size_t cap = sizeof st->verdict;
    double dpart = t->dec - t->rd > 0 ? t->dec - t->rd : 0, work = t->dec + t->asmb > 0 ? t->dec + t->asmb : 1;
    double cpu = t->life > 0 ? (t->dec - t->rd - t->jit + t->asmb) / t->life : 0; /* cores kept busy */
    int32_t k = st->workers;
    if (t->cores > 0 && (cpu >= 0.8 * t->cores || (k >= t->cores && cpu >= 0.5 * t->cores))) {
        /* every core works for the loader (or as many workers as cores work
           half the time or more): more workers or a deeper ring cannot help */
        st->bottleneck = t->rd >= dpart && t->rd >= t->asmb - t->help ? GPUFEED_STAGE_READ : t->asmb >= dpart ? GPUFEED_STAGE_ASSEMBLY : GPUFEED_STAGE_DECODE;
        gf__fmt(v, cap, "%s is the bottleneck and the cores are the limit: %s; the loader kept %.1f of %d cores busy (workers %.0f%% busy, "
                "%.0f%% of it assembling batches, %.0f%% decoding): %s",
                st->bottleneck == GPUFEED_STAGE_ASSEMBLY ? "batch assembly" : st->bottleneck == GPUFEED_STAGE_READ ? "reading" : "decoding", pace,
                cpu < t->cores ? cpu : (double)t->cores, t->cores, 100 * st->workers_busy, 100 * t->asmb / work, 100 * t->dec / work,
                st->bottleneck == GPUFEED_STAGE_ASSEMBLY ? "a smaller shuffle_window or fewer features, or more cores"
                                                         : gf__stats_decode_advice(st, t->cores));
    } else if (st->cache_state == GPUFEED_CACHE_OFF && t->wait >= 0.3 * t->wall && t->life > 0 && k > 0 && st->ring_full_s >= 0.1 * t->life * k &&
               dpart >= t->asmb) {
        /* workers that mostly decode slept with every unit slot taken while
           the trainer waited: units finish out of order, and the ring ran
           full behind the oldest one (with assembly the larger part, the
           slots wait for batches to be assembled instead; units served
           from a cache fill the ring at once, which is the cache working) */
        st->bottleneck = GPUFEED_STAGE_NONE;
        gf__fmt(v, cap, "the ring ran full: %s; workers %.0f%% busy, asleep %.0f%% of their time with every unit slot taken: raise ring_depth and "
                "set prefill (now %d a worker)", pace, 100 * st->workers_busy, 100 * st->ring_full_s / (t->life * k), (int)st->ring_depth);
    } else if (st->workers_busy < 0.6 && (t->dec + t->asmb + t->help) < 0.6 * (t->life * k + t->help)) {
        st->bottleneck = GPUFEED_STAGE_NONE;
        gf__fmt(v, cap, "workers %.0f%% busy only: %s; raise ring_depth and set prefill; with fewer cores than workers, fewer workers",
                100 * st->workers_busy, pace);
    } else if (t->rd >= dpart && t->rd >= t->asmb) {
        st->bottleneck = GPUFEED_STAGE_READ;
        gf__fmt(v, cap, "reading is the bottleneck: %s; workers %.0f%% busy, %.0f%% of it reading the source: local files, mapped (without "
                "GPUFEED_OPEN_PREAD), a will_read source, or the tensor cache", pace, 100 * st->workers_busy, 100 * t->rd / work);
    } else if (dpart >= t->asmb) {
        st->bottleneck = GPUFEED_STAGE_DECODE;
        gf__fmt(v, cap, "decoding is the bottleneck: %s; workers %.0f%% busy, %.0f%% of it decoding: %s", pace, 100 * st->workers_busy,
                100 * dpart / work, gf__stats_decode_advice(st, t->cores));
    } else {
        st->bottleneck = GPUFEED_STAGE_ASSEMBLY;
        gf__fmt(v, cap, "batch assembly is the bottleneck: %s; workers %.0f%% busy, %.0f%% of it assembling batches: add workers, or a smaller "
                "shuffle_window or fewer features", pace, 100 * st->workers_busy, 100 * t->asmb / work);
    }
}

/* The verdict's rules, in order: a build without threads; a trainer that
   hardly waits (the consumer is the bottleneck); fewer units an epoch than
   workers (named in any verdict but the first); then the stage that limits
   the loader. A consumer that does no work between batches (a benchmark of
   the loader alone: under 20 us a batch) is named as such instead of "the
   trainer waited". */
static void gf__stats_verdict(gpufeed_stats *st, const gf__vtimes *t)
{
    char pace[128], units[128] = "";
    double wf = t->wall > 0 ? t->wait / t->wall : 0;
    int32_t k = st->workers;
    int idle;                           /* the consumer does no work between batches */
    if (wf > 1) wf = 1;
    if (!t->threads) {
        st->bottleneck = GPUFEED_STAGE_DECODE;
        gf__fmt(st->verdict, sizeof st->verdict, "single-threaded build: the trainer decoded inline for %.0f%% of the time",
                t->wall > 0 ? 100 * (t->dec + t->asmb < t->wall ? t->dec + t->asmb : t->wall) / t->wall : 0.0);
        return;
    }
    if (st->units_per_epoch < k)
        gf__fmt(units, sizeof units, "%lld unit%s an epoch for %d workers", (long long)st->units_per_epoch, st->units_per_epoch == 1 ? "" : "s", (int)k);
    idle = st->batches > 0 && t->cons < 20e-6 * (double)st->batches; /* under 20 us a batch */
    if (wf < 0.05) {
        st->bottleneck = GPUFEED_STAGE_CONSUMER;
        if (idle) gf__fmt(st->verdict, sizeof st->verdict, "the loader keeps up even with a consumer that does no work between batches (%.1f us a "
                          "batch): it waited %.0f%% of the time (workers %.0f%% busy)%s%s%s", 1e6 * t->cons / (double)st->batches, 100 * wf,
                          100 * st->workers_busy, units[0] ? "; " : "", units, units[0] ? ": fewer workers would do" : "");
        else gf__fmt(st->verdict, sizeof st->verdict, "the consumer is the bottleneck: the trainer waited %.0f%% of the time (workers %.0f%% busy): "
                     "not input-bound%s%s%s", 100 * wf, 100 * st->workers_busy, units[0] ? "; " : "", units, units[0] ? ": fewer workers would do" : "");
        return;
    }
    if (idle)
        gf__fmt(pace, sizeof pace, "the consumer does no work between batches (%.1f us a batch: a benchmark of the loader alone)",
                1e6 * t->cons / (double)st->batches);
    else gf__fmt(pace, sizeof pace, "the trainer waited %.0f%% of the time", 100 * wf);
    if (units[0]) {
        /* a unit is the work one worker takes: with fewer units than workers some wait, whatever the ring */
        st->bottleneck = GPUFEED_STAGE_NONE;
        gf__fmt(st->verdict, sizeof st->verdict, "%s: lower unit_rows (or use fewer workers); %s; workers %.0f%% busy", units, pace,
                100 * st->workers_busy);
        return;
    }
    gf__stats_stage(st, t, pace);
}

GPUFEED_API void gpufeed_loader_stats(gpufeed_loader *l, gpufeed_stats *st)
{
    int32_t k = 0;
    gf__vtimes t;
    memset(st, 0, sizeof *st);
    memset(&t, 0, sizeof t);
    if (!l) return;
    {
        uint64_t now = gf__now_us();
        t.wall = l->t_first ? (double)(now - l->t_first) * 1e-6 : 0;
        t.life = (double)(now - l->t_open) * 1e-6;
    }
    t.wait = (double)l->wait_us * 1e-6;
    t.cons = (double)l->consumer_us * 1e-6;
    if (l->ninner) t.cons = t.wall > t.wait ? t.wall - t.wait : 0; /* partitions: next() is all the loader's time */
    st->wall_s = t.wall;
    st->life_s = t.life;
    st->trainer_wait_s = t.wait;
    st->consumer_s = t.cons;
    st->copy_s = (double)l->copy_us * 1e-6;
    if (l->ninner) {
        int32_t i;
        for (i = 0; i < l->ninner; i++) k = gf__stats_workers(l->inner[i], l, k, st, &t.dec, &t.asmb, &t.help, &t.jit); /* partitioned */
    } else k = gf__stats_workers(l, l, 0, st, &t.dec, &t.asmb, &t.help, &t.jit);
    st->workers = k;
    st->ring_depth = l->ninner ? l->inner[0]->D : l->D;
    t.threads = l->ninner ? l->inner[0]->threads : l->threads;
#if !defined(GPUFEED_NO_THREADS) && !defined(GPUFEED_NO_STDIO)
    {
        long nc = sysconf(_SC_NPROCESSORS_ONLN);
        t.cores = nc > 0 && nc < 4096 ? (int32_t)nc : 0;
    }
#endif
    t.rd = (double)gpufeed_dataset_read_us(l->ds) * 1e-6;
    st->worker_busy_s = l->busy_s;
    st->worker_assembly_s = l->asm_s;
    st->worker_backpressure_s = l->bp_s;
    st->worker_busy = l->share;
    st->read_s = t.rd;
    st->bytes_read = gpufeed_dataset_bytes_read(l->ds);
    st->batches = l->batches; st->rows = l->rows;
    st->workers_busy = gf__stats_shares(l, k, t.life);
    t.asmb += t.help; /* the trainer's own assembly while it waited is work done */
    gf__stats_verdict(st, &t);
}

GPUFEED_API uint64_t gpufeed_loader_epoch_bytes(gpufeed_loader *l, int64_t epoch)
{
    if (!l) return 0;
    if (l->ninner) {
        uint64_t t = 0;
        int32_t j;
        for (j = 0; j < l->ninner; j++) t += gpufeed_loader_epoch_bytes(l->inner[j], epoch);
        return t;
    }
    if (epoch < l->first_epoch || epoch - l->first_epoch >= 64) return 0;
    return GF__GET(&l->epoch_bytes[epoch - l->first_epoch]);
}

GPUFEED_API uint64_t gpufeed_batch_row_hash(const gpufeed_dataset *ds, const gpufeed_batch *b, int64_t row)
{
    uint64_t h = 0;
    int32_t j;
    if (!ds || !b || row < 0 || row >= b->num_rows) return 0;
    for (j = 0; j < ds->nfeat; j++) {
        size_t z = gpufeed_feature_bytes(&ds->feats[j]);
        const uint8_t *p = ds->layout == GPUFEED_LAYOUT_ROW_MAJOR ? (const uint8_t *)b->data + row * b->row_bytes + ds->offs[j]
                                                                 : (const uint8_t *)b->features[j] + (size_t)row * z;
        h = gpufeed_hash64(p, z, h);
    }
    for (j = 0; j < ds->nfeat; j++) if (b->valid && b->valid[j]) h = gpufeed_hash64(b->valid[j] + row, 1, h);
    return h;
}

GPUFEED_API uint64_t gpufeed_batch_hash(const gpufeed_dataset *ds, const gpufeed_batch *b)
{
    uint64_t h = 0;
    int32_t j;
    if (!ds || !b) return 0;
    if (ds->layout == GPUFEED_LAYOUT_ROW_MAJOR) h = gpufeed_hash64(b->data, (size_t)(b->num_rows * ds->row_bytes), 0);
    else for (j = 0; j < ds->nfeat; j++) h = gpufeed_hash64(b->features[j], (size_t)b->num_rows * gpufeed_feature_bytes(&ds->feats[j]), h);
    for (j = 0; j < ds->nfeat; j++) if (b->valid && b->valid[j]) h = gpufeed_hash64(b->valid[j], (size_t)b->num_rows, h);
    return h;
}

/* >>cachebuild ----------------------------------------------------------- */
/* The tensor cache ahead of time: gpufeed_cache_build drives a loader
   over one epoch; verify, info and remove open the cache only. */

typedef struct gf__logcap {
    void (*log)(void *, const char *);
    void *user;
    char last[GPUFEED_ERROR_MAX + 256];
} gf__logcap;
static void gf__logcap_fn(void *user, const char *msg)
{
    gf__logcap *lc = (gf__logcap *)user;
    gf__fmt(lc->last, sizeof lc->last, "%s", msg);
    if (lc->log) lc->log(lc->user, msg);
#ifndef GPUFEED_NO_STDIO
    else fprintf(stderr, "gpufeed: %s\n", msg);
#endif
}

#ifndef GPUFEED_NO_STDIO
/* Another process holds the build lock of c's .tmp: 1 (with its progress), else 0. */
static int gf__cache_builder(const gf__cache *c, int64_t *done, int64_t *total, int64_t *pid)
{
    uint8_t h[128];
    int fd = open(c->tmp, O_RDONLY | O_NONBLOCK), busy;
    *done = *total = *pid = 0;
    if (fd < 0) return 0;
    busy = flock(fd, LOCK_EX | LOCK_NB) != 0;
    if (busy && gf__read_full(fd, h, sizeof h, 0) == 0 && memcmp(h, "GPUFEEDB", 8) == 0) {
        *total = (int64_t)gf__ld64(h + 32);
        *pid = (int64_t)gf__ld64(h + 104);
        *done = (int64_t)gf__ld64(h + 112);
    }
    close(fd);
    return busy;
}

/* Waits while another process builds c (a progress line every few
   seconds): 1 its cache is complete and valid, 0 nobody builds it now. */
static int gf__cache_wait_builder(gf__cache *c, const gpufeed_dataset *ds)
{
    uint64_t t0 = gf__now_us(), last = 0;
    for (;;) {
        char why[512];
        uint64_t fb, now;
        int64_t done, total, pid;
        if (gf__cache_check_file(c, ds, 0, why, sizeof why, &fb) == 0) return 1;
        if (!gf__cache_builder(c, &done, &total, &pid)) return 0;
        now = gf__now_us();
        if (!last || now - last >= 2000000u) {
            if (pid) gf__cache_log(c, "waiting for process %lld, which is building the cache %s: %lld of %lld units (%.0f s)",
                                   (long long)pid, c->path, (long long)done, (long long)total, (double)(now - t0) / 1e6);
            else gf__cache_log(c, "waiting for another process, which is building the cache %s (%.0f s)", c->path, (double)(now - t0) / 1e6);
            last = now;
        }
        gf__sleep_ms(50);
    }
}
#endif

GPUFEED_API gpufeed_result gpufeed_cache_build(gpufeed_dataset *ds, const gpufeed_cache_desc *c, int32_t workers,
    void (*progress)(void *user, int64_t units_done, int64_t units_total, uint64_t rows_done, uint64_t bytes_done),
    void *user, gpufeed_error *err)
{
    gpufeed_loader_desc ld;
    gpufeed_cache_desc cd;
    gpufeed_loader *l;
    gpufeed_batch b;
    gpufeed_result r;
    gf__logcap lc;
    gpufeed_stats st;
    uint64_t rows = 0, bytes = 0;
    int attempt;
    if (err) { err->code = GPUFEED_OK; err->message[0] = 0; }
    if (!ds || !c || (!c->dir && !c->ram_bytes)) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "gpufeed_cache_build: no dataset or no cache directory");
    memset(&lc, 0, sizeof lc);
    lc.log = c->log; lc.user = c->log_user;
    cd = *c;
    cd.log = gf__logcap_fn;
    cd.log_user = &lc;
    cd.no_build = 0;
    memset(&ld, 0, sizeof ld);
    ld.batch_rows = 65536; /* the batches only drain the loader: at most 8 MiB each (wide rows) */
    if (ds->row_bytes > 0 && ld.batch_rows > ((int64_t)8 << 20) / ds->row_bytes)
        ld.batch_rows = ((int64_t)8 << 20) / ds->row_bytes > 64 ? ((int64_t)8 << 20) / ds->row_bytes : 64;
    ld.workers = workers > 0 ? workers : 1;
    ld.no_unit_shuffle = 1;
    ld.epochs = 1;
    ld.cache = &cd;

    /* another process building the same cache: wait for it (progress
       lines through the log), or with no_wait fail; then build, or find it
       complete */
    for (attempt = 0; ; attempt++) {
#ifndef GPUFEED_NO_STDIO
        gf__cache *probe = NULL;
        int64_t done, total, pid;
        if (c->dir && *c->dir) {
            probe = gf__cache_new(ds, &cd, 1);
            if (!probe) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "gpufeed_cache_build: out of memory");
            if (c->no_wait && gf__cache_builder(probe, &done, &total, &pid)) {
                r = gf__seterr(err, GPUFEED_ERR_IO, "another process (pid %lld) is building the cache %s: not waiting (no_wait)", (long long)pid, probe->path);
                gf__cache_free(probe);
                return r;
            }
            if (!c->no_wait) (void)gf__cache_wait_builder(probe, ds);
        }
#endif
        r = gpufeed_loader_open(&l, ds, &ld, err);
        if (r || l->cache) {
#ifndef GPUFEED_NO_STDIO
            gf__cache_free(probe);
#endif
            if (r) return r;
            break;
        }
        gpufeed_loader_close(l);
#ifndef GPUFEED_NO_STDIO
        if (probe && !c->no_wait && attempt < 100 && gf__cache_builder(probe, &done, &total, &pid)) { gf__cache_free(probe); continue; }
        gf__cache_free(probe);
#endif
        return gf__seterr(err, GPUFEED_ERR_IO, "cache not built: %s", lc.last[0] ? lc.last : "no cache");
    }
    if (gf__cache_state(l->cache) == GPUFEED_CACHE_READY) {
        if (progress) progress(user, ds->nunits, ds->nunits, 0, 0);
        gpufeed_loader_close(l);
        return GPUFEED_OK; /* already there */
    }
    while ((r = gpufeed_loader_next(l, &b)) == GPUFEED_OK) {
        rows += (uint64_t)b.num_rows;
        bytes += (uint64_t)b.num_rows * gf__cache_img_row(ds);
        if (progress) { gpufeed_loader_stats(l, &st); progress(user, (int64_t)st.units_decoded, ds->nunits, rows, bytes); }
    }
    if (r != GPUFEED_DONE) {
        gf__seterr(err, r, "%s", gpufeed_loader_error(l));
        gpufeed_loader_close(l);
        return r;
    }
    gf__stop_workers(l); /* the worker that wrote the last unit finalizes: wait for it */
    r = gf__cache_state(l->cache) == GPUFEED_CACHE_READY ? GPUFEED_OK : GPUFEED_ERR_IO;
    if (r) gf__seterr(err, r, "cache not built: %s", lc.last[0] ? lc.last : "the build did not complete");
    gpufeed_loader_close(l);
    return r;
}

static gpufeed_result gf__cache_inspect(gpufeed_dataset *ds, const gpufeed_cache_desc *cd, int verify, gpufeed_cache_info *info, int64_t *bad,
                                        gpufeed_error *err)
{
    gf__cache *c;
    gpufeed_cache_desc q;
    if (err) { err->code = GPUFEED_OK; err->message[0] = 0; }
    if (!ds || !cd || !cd->dir) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "cache: no dataset or no directory");
    q = *cd;
    c = gf__cache_new(ds, &q, 1);
    if (!c) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "cache: out of memory");
    memset(info, 0, sizeof *info);
    gf__fmt(info->path, sizeof info->path, "%s", c->path);
    gf__fmt(info->key, sizeof info->key, "%016llx%016llx", (unsigned long long)c->key[0], (unsigned long long)c->key[1]);
#ifndef GPUFEED_NO_STDIO
    {
        uint64_t fb = 0;
        int r = gf__cache_check_file(c, ds, verify, info->reason, sizeof info->reason, &fb);
        info->exists = r != 1;
        info->valid = r == 0;
        info->bytes = fb;
        info->units = c->U;
        if (r == 0) { int64_t u; for (u = 0; u < c->U; u++) info->rows += (int64_t)c->idx[u].rows; }
        if (bad) {
            int64_t u;
            *bad = 0;
            if (r == 3) for (u = 0; u < c->U; u++) *bad += c->ust[u] == 2;
        }
        if (r == 1) gf__fmt(info->reason, sizeof info->reason, "no cache file %s", c->path);
    }
#else
    (void)verify; (void)bad;
#endif
    gf__cache_free(c);
    return GPUFEED_OK;
}

GPUFEED_API gpufeed_result gpufeed_cache_get_info(gpufeed_dataset *ds, const gpufeed_cache_desc *c, gpufeed_cache_info *info, gpufeed_error *err)
{
    return gf__cache_inspect(ds, c, 0, info, NULL, err);
}

GPUFEED_API gpufeed_result gpufeed_cache_verify(gpufeed_dataset *ds, const gpufeed_cache_desc *c, int64_t *bad_units, gpufeed_error *err)
{
    gpufeed_cache_info info;
    int64_t bad = 0;
    gpufeed_result r = gf__cache_inspect(ds, c, 1, &info, &bad, err);
    if (bad_units) *bad_units = bad;
    if (r) return r;
    if (!info.exists) return gf__seterr(err, GPUFEED_ERR_IO, "%s", info.reason);
    if (!info.valid) return gf__seterr(err, GPUFEED_ERR_CORRUPT, "%s", info.reason);
    return GPUFEED_OK;
}

GPUFEED_API gpufeed_result gpufeed_cache_remove(gpufeed_dataset *ds, const gpufeed_cache_desc *cd, gpufeed_error *err)
{
    gf__cache *c;
    if (err) { err->code = GPUFEED_OK; err->message[0] = 0; }
    if (!ds || !cd || !cd->dir) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "cache: no dataset or no directory");
    c = gf__cache_new(ds, cd, 1);
    if (!c) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "cache: out of memory");
#ifndef GPUFEED_NO_STDIO
    unlink(c->path); unlink(c->tmp);
#endif
    gf__cache_free(c);
    return GPUFEED_OK;
}

/* >>gpu ------------------------------------------------------------------ */
/* The few GPU operations the uploader needs (memory, pinning, copies,
   streams, events, one kernel), through one of two backends:
   - the CUDA runtime compiled in (GF__CUDA): nvcc, or GPUFEED_CUDA with a
     host compiler, the CUDA headers and -lcudart;
   - the CUDA driver loaded at run time (GF__CUDRV): any other build on
     Linux. libcuda.so.1 comes with every NVIDIA driver, so a plain `cc`
     build (no CUDA headers; -ldl where glibc is older than 2.34) feeds the
     GPU wherever a driver is installed; the few types and entry points it
     uses are declared here. The gather kernel of the device-resident mode
     travels as PTX text, compiled by the driver when it is first needed.
   Both work in the device's primary context: the one the runtime (PyTorch,
   CuPy, the user's kernels) uses, so device pointers, streams and events
   pass between them. Each op returns 0 or the backend's error code;
   gf__gpu_str says what a code means. */

#if !defined(GPUFEED_NO_CUDA) && (defined(__CUDACC__) || defined(GPUFEED_CUDA)) && !defined(GPUFEED_CUDA_DRIVER)
#define GF__CUDA 1
GF__PEDANTIC_OFF
#include <cuda_runtime.h>
GF__PEDANTIC_ON
#elif !defined(GPUFEED_NO_CUDA) && defined(__linux__)
#define GF__CUDRV 1
#include <dlfcn.h>
#endif
#if defined(GF__CUDA) || defined(GF__CUDRV)
#define GF__GPU 1
#endif

#ifdef GF__CUDRV
/* The driver's entry points, as cuda.h declares them (CUresult is an enum
   of non-negative values: unsigned int; CUdeviceptr a 64-bit integer; the
   handles pointers to the same incomplete structs). The names with _v2
   are the current versions of the calls whose first ABI changed.
   tests/test_cudrv_abi.c checks each type against cuda.h. */
struct CUctx_st;
struct CUstream_st;
struct CUevent_st;
struct CUmod_st;
struct CUfunc_st;
typedef unsigned long long gf__cuptr;
typedef struct gf__cudrv {
    unsigned (*Init)(unsigned);
    unsigned (*DeviceGetCount)(int *);
    unsigned (*DeviceGet)(int *, int);
    unsigned (*DevicePrimaryCtxRetain)(struct CUctx_st **, int);
    unsigned (*DevicePrimaryCtxRelease)(int);
    unsigned (*CtxPushCurrent)(struct CUctx_st *);
    unsigned (*CtxPopCurrent)(struct CUctx_st **);
    unsigned (*CtxGetCurrent)(struct CUctx_st **);
    unsigned (*StreamCreate)(struct CUstream_st **, unsigned);
    unsigned (*StreamDestroy)(struct CUstream_st *);
    unsigned (*StreamSynchronize)(struct CUstream_st *);
    unsigned (*StreamWaitEvent)(struct CUstream_st *, struct CUevent_st *, unsigned);
    unsigned (*EventCreate)(struct CUevent_st **, unsigned);
    unsigned (*EventDestroy)(struct CUevent_st *);
    unsigned (*EventRecord)(struct CUevent_st *, struct CUstream_st *);
    unsigned (*EventSynchronize)(struct CUevent_st *);
    unsigned (*MemAlloc)(gf__cuptr *, size_t);
    unsigned (*MemFree)(gf__cuptr);
    unsigned (*MemHostAlloc)(void **, size_t, unsigned);
    unsigned (*MemFreeHost)(void *);
    unsigned (*MemHostRegister)(void *, size_t, unsigned);
    unsigned (*MemHostUnregister)(void *);
    unsigned (*MemcpyHtoD)(gf__cuptr, const void *, size_t);
    unsigned (*MemcpyHtoDAsync)(gf__cuptr, const void *, size_t, struct CUstream_st *);
    unsigned (*ModuleLoadData)(struct CUmod_st **, const void *);
    unsigned (*ModuleUnload)(struct CUmod_st *);
    unsigned (*ModuleGetFunction)(struct CUfunc_st **, struct CUmod_st *, const char *);
    unsigned (*LaunchKernel)(struct CUfunc_st *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             struct CUstream_st *, void **, void **);
    unsigned (*GetErrorName)(unsigned, const char **);
    unsigned (*GetErrorString)(unsigned, const char **);
} gf__cudrv;

/* the symbol of each entry point, in the order of gf__cudrv's fields */
static const char *const gf__cudrv_names[] = {
    "cuInit", "cuDeviceGetCount", "cuDeviceGet", "cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease_v2",
    "cuCtxPushCurrent_v2", "cuCtxPopCurrent_v2", "cuCtxGetCurrent", "cuStreamCreate", "cuStreamDestroy_v2", "cuStreamSynchronize",
    "cuStreamWaitEvent", "cuEventCreate", "cuEventDestroy_v2", "cuEventRecord", "cuEventSynchronize", "cuMemAlloc_v2",
    "cuMemFree_v2", "cuMemHostAlloc", "cuMemFreeHost", "cuMemHostRegister_v2", "cuMemHostUnregister", "cuMemcpyHtoD_v2",
    "cuMemcpyHtoDAsync_v2", "cuModuleLoadData", "cuModuleUnload", "cuModuleGetFunction", "cuLaunchKernel",
    "cuGetErrorName", "cuGetErrorString"
};

/* cuda.h's values of the flags used here */
#define GF__CU_STREAM_NON_BLOCKING 0x1u
#define GF__CU_EVENT_DISABLE_TIMING 0x2u
#define GF__CU_HOST_PORTABLE_MAPPED 0x3u  /* PORTABLE | DEVICEMAP: what the runtime's default
                                             flags mean under unified addressing */
#define GF__CU_ERROR_NOT_FOUND 500u
#ifndef GPUFEED_CUDA_DRIVER_LIB
#define GPUFEED_CUDA_DRIVER_LIB "libcuda.so.1"
#endif

/* PTX of the gather kernel: gf__gather(src, idx, n, rb, dst) copies row
   idx[r] of src to row r of dst (rows of rb bytes) for r < n: a warp a row,
   4-byte words when rb allows, else bytes; with rb == 1 (validity masks) a
   thread a row. PTX ISA 6.0 for sm_50 and later: any driver of the last
   years compiles it for its GPU. The runtime build's gf__gather_kernel
   below is the same loop in CUDA C. */
static const char gf__gather_ptx[] =
    ".version 6.0\n.target sm_50\n.address_size 64\n"
    ".visible .entry gf__gather(.param .u64 src, .param .u64 idx, .param .u64 n, .param .u64 rb, .param .u64 dst)\n{\n"
    ".reg .pred %p<4>;\n.reg .b16 %h<2>;\n.reg .b32 %w<5>;\n.reg .b64 %d<20>;\n"
    "ld.param.u64 %d1, [src];\nld.param.u64 %d2, [idx];\nld.param.u64 %d3, [n];\n"
    "ld.param.u64 %d4, [rb];\nld.param.u64 %d5, [dst];\n"
    "cvta.to.global.u64 %d1, %d1;\ncvta.to.global.u64 %d2, %d2;\ncvta.to.global.u64 %d5, %d5;\n"
    /* t = ctaid * ntid + tid (%d6), threads in the grid (%d8) */
    "mov.u32 %w1, %ctaid.x;\nmov.u32 %w2, %ntid.x;\nmov.u32 %w3, %tid.x;\nmov.u32 %w4, %nctaid.x;\n"
    "mul.wide.u32 %d6, %w1, %w2;\ncvt.u64.u32 %d7, %w3;\nadd.s64 %d6, %d6, %d7;\nmul.wide.u32 %d8, %w4, %w2;\n"
    "setp.eq.s64 %p1, %d4, 1;\n@%p1 bra MASK;\n"
    /* a warp a row: lane (%d9), row (%d6), rows a step (%d8); word rows (%p2) */
    "and.b64 %d9, %d6, 31;\nshr.u64 %d6, %d6, 5;\nshr.u64 %d8, %d8, 5;\n"
    "and.b64 %d10, %d4, 3;\nsetp.eq.s64 %p2, %d10, 0;\n"
    "ROW:\nsetp.ge.s64 %p1, %d6, %d3;\n@%p1 bra DONE;\n"
    "shl.b64 %d11, %d6, 3;\nadd.s64 %d11, %d2, %d11;\nld.global.u64 %d12, [%d11];\n"
    "mul.lo.s64 %d12, %d12, %d4;\nadd.s64 %d12, %d1, %d12;\nmul.lo.s64 %d13, %d6, %d4;\nadd.s64 %d13, %d5, %d13;\n"
    "@!%p2 bra BYTES;\nshl.b64 %d14, %d9, 2;\n"
    "WORD:\nsetp.ge.s64 %p3, %d14, %d4;\n@%p3 bra NEXT;\n"
    "add.s64 %d15, %d12, %d14;\nld.global.u32 %w1, [%d15];\nadd.s64 %d16, %d13, %d14;\nst.global.u32 [%d16], %w1;\n"
    "add.s64 %d14, %d14, 128;\nbra.uni WORD;\n"
    "BYTES:\nmov.u64 %d14, %d9;\n"
    "BYTE:\nsetp.ge.s64 %p3, %d14, %d4;\n@%p3 bra NEXT;\n"
    "add.s64 %d15, %d12, %d14;\nld.global.u8 %h1, [%d15];\nadd.s64 %d16, %d13, %d14;\nst.global.u8 [%d16], %h1;\n"
    "add.s64 %d14, %d14, 32;\nbra.uni BYTE;\n"
    "NEXT:\nadd.s64 %d6, %d6, %d8;\nbra.uni ROW;\n"
    /* a thread a row: dst[t] = src[idx[t]] */
    "MASK:\nsetp.ge.s64 %p1, %d6, %d3;\n@%p1 bra DONE;\n"
    "shl.b64 %d11, %d6, 3;\nadd.s64 %d11, %d2, %d11;\nld.global.u64 %d12, [%d11];\nadd.s64 %d12, %d1, %d12;\n"
    "ld.global.u8 %h1, [%d12];\nadd.s64 %d13, %d5, %d6;\nst.global.u8 [%d13], %h1;\n"
    "add.s64 %d6, %d6, %d8;\nbra.uni MASK;\n"
    "DONE:\nret;\n}\n";
#endif /* GF__CUDRV */

#if defined(GF__CUDA) && defined(__CUDACC__)
/* the gather kernel (see gf__gather_ptx) */
__global__ void gf__gather_kernel(const unsigned char *src, const long long *idx, long long n, long long rb, unsigned char *dst)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x, nt = (long long)gridDim.x * blockDim.x, r, k;
    long long lane = t & 31;
    if (rb == 1) {
        for (r = t; r < n; r += nt) dst[r] = src[idx[r]];
        return;
    }
    for (r = t >> 5; r < n; r += nt >> 5) {
        const unsigned char *s = src + idx[r] * rb;
        unsigned char *d = dst + r * rb;
        if ((rb & 3) == 0) for (k = lane * 4; k < rb; k += 128) *(unsigned *)(d + k) = *(const unsigned *)(s + k);
        else for (k = lane; k < rb; k += 32) d[k] = s[k];
    }
}
#endif

#ifdef GF__GPU
typedef struct gf__gpu {
    int32_t dev;
#ifdef GF__CUDRV
    gf__cudrv f;
    void *lib;                         /* dlopen's handle (kept: see gf__gpu_close) */
    struct CUctx_st *ctx;              /* the device's primary context, retained */
    struct CUmod_st *mod;              /* the gather kernel, loaded on first use */
    struct CUfunc_st *gather;
#endif
} gf__gpu;

/* what error e means, as "NAME: description" */
static const char *gf__gpu_str(const gf__gpu *g, int e, char *buf, size_t cap)
{
#ifdef GF__CUDRV
    const char *name = NULL, *text = NULL;
    if (g->f.GetErrorName) g->f.GetErrorName((unsigned)e, &name);
    if (g->f.GetErrorString) g->f.GetErrorString((unsigned)e, &text);
    if (name) gf__fmt(buf, cap, "%s (%s)", name, text ? text : "no description");
    else gf__fmt(buf, cap, "CUresult %d", e);
#else
    (void)g;
    gf__fmt(buf, cap, "%s (%s)", cudaGetErrorName((cudaError_t)e), cudaGetErrorString((cudaError_t)e));
#endif
    return buf;
}

#ifdef GF__CUDRV
/* loads libcuda.so.1 and its entry points; 0, or why not in `why` */
static int gf__cudrv_load(gf__gpu *g, char *why, size_t cap)
{
    size_t i, n = sizeof gf__cudrv_names / sizeof gf__cudrv_names[0];
    GPUFEED_ASSERT(n * sizeof(void (*)(void)) == sizeof g->f);
    g->lib = dlopen(GPUFEED_CUDA_DRIVER_LIB, RTLD_NOW | RTLD_LOCAL);
    if (!g->lib) {
        const char *de = dlerror();
        gf__fmt(why, cap, "no CUDA driver: %s cannot be loaded (%s)", GPUFEED_CUDA_DRIVER_LIB, de ? de : "not found");
        return -1;
    }
    for (i = 0; i < n; i++) {
        void *sym = dlsym(g->lib, gf__cudrv_names[i]);
        if (!sym) {
            gf__fmt(why, cap, "the CUDA driver %s lacks %s (too old a driver)", GPUFEED_CUDA_DRIVER_LIB, gf__cudrv_names[i]);
            return -1;
        }
        memcpy((char *)&g->f + i * sizeof(void (*)(void)), &sym, sizeof sym); /* a function pointer, as dlsym promises */
    }
    return 0;
}
#endif

/* Opens device `dev`: 1 when it is usable, else 0 and why. With ctx, also
   takes the device's context (the driver's primary context, retained; the
   runtime makes its own current on demand). */
static int gf__gpu_open(gf__gpu *g, int32_t dev, int ctx, char *why, size_t cap)
{
    char m[160];
    int n = 0, e;
    memset(g, 0, sizeof *g);
    g->dev = dev;
#ifdef GF__CUDRV
    if (gf__cudrv_load(g, why, cap)) return 0;
    e = (int)g->f.Init(0);
    if (!e) e = (int)g->f.DeviceGetCount(&n);
    if (e) { gf__fmt(why, cap, "no CUDA device: the driver says %s", gf__gpu_str(g, e, m, sizeof m)); return 0; }
#else
    e = (int)cudaGetDeviceCount(&n);
    if (e) { gf__fmt(why, cap, "no CUDA device: %s", gf__gpu_str(g, e, m, sizeof m)); cudaGetLastError(); return 0; }
#endif
    if (dev < 0 || dev >= n) { gf__fmt(why, cap, "no CUDA device %d (%d present)", dev, n); return 0; }
#ifdef GF__CUDRV
    if (ctx) {
        int d = 0;
        e = (int)g->f.DeviceGet(&d, dev);
        if (!e) e = (int)g->f.DevicePrimaryCtxRetain(&g->ctx, d);
        if (e) { g->ctx = NULL; gf__fmt(why, cap, "CUDA device %d: %s", dev, gf__gpu_str(g, e, m, sizeof m)); return 0; }
    }
#else
    (void)ctx;
#endif
    if (why && cap) why[0] = 0;
    return 1;
}

/* Gives back what gf__gpu_open took. The driver library stays loaded: the
   runtime and other users may share it, and it is not made to be unloaded
   while contexts live. */
static void gf__gpu_close(gf__gpu *g)
{
#ifdef GF__CUDRV
    if (g->ctx) {
        int d = 0;
        if (g->mod) {
            g->f.CtxPushCurrent(g->ctx);
            g->f.ModuleUnload(g->mod);
            g->f.CtxPopCurrent(NULL);
        }
        if (!g->f.DeviceGet(&d, g->dev)) g->f.DevicePrimaryCtxRelease(d);
    }
#endif
    memset(g, 0, sizeof *g);
}

/* makes the device current for the calls that follow; gf__gpu_leave puts
   the caller's device (context) back. The driver's context is pushed only
   where another (or none) is current: a trainer's thread has the primary
   context current already, and then nothing is pushed. */
static int gf__gpu_enter(gf__gpu *g)
{
#ifdef GF__CUDRV
    struct CUctx_st *cur = NULL;
    if (!g->f.CtxGetCurrent(&cur) && cur == g->ctx) return 0;
    return g->f.CtxPushCurrent(g->ctx) ? 0 : 1;
#else
    int prev = 0;
    cudaGetDevice(&prev);
    if (prev != g->dev) cudaSetDevice(g->dev);
    return prev;
#endif
}
static void gf__gpu_leave(gf__gpu *g, int prev)
{
#ifdef GF__CUDRV
    if (prev) g->f.CtxPopCurrent(NULL); /* 1: gf__gpu_enter pushed */
#else
    if (prev != g->dev) cudaSetDevice(prev);
#endif
}

/* forgets a failure the runtime keeps as its last error (the driver keeps none) */
static void gf__gpu_clear(gf__gpu *g)
{
    (void)g;
#ifdef GF__CUDA
    cudaGetLastError();
#endif
}

#ifdef GF__CUDRV
#define GF__STREAM(s) ((struct CUstream_st *)(s))
#define GF__EVENT(v) ((struct CUevent_st *)(v))
#define GF__DPTR(p) ((gf__cuptr)(uintptr_t)(p))
static int gf__gpu_stream_new(gf__gpu *g, void **s) { return (int)g->f.StreamCreate((struct CUstream_st **)s, GF__CU_STREAM_NON_BLOCKING); }
static int gf__gpu_stream_free(gf__gpu *g, void *s) { return (int)g->f.StreamDestroy(GF__STREAM(s)); }
static int gf__gpu_stream_sync(gf__gpu *g, void *s) { return (int)g->f.StreamSynchronize(GF__STREAM(s)); }
static int gf__gpu_stream_wait(gf__gpu *g, void *s, void *v) { return (int)g->f.StreamWaitEvent(GF__STREAM(s), GF__EVENT(v), 0); }
static int gf__gpu_event_new(gf__gpu *g, void **v) { return (int)g->f.EventCreate((struct CUevent_st **)v, GF__CU_EVENT_DISABLE_TIMING); }
static int gf__gpu_event_free(gf__gpu *g, void *v) { return (int)g->f.EventDestroy(GF__EVENT(v)); }
static int gf__gpu_event_record(gf__gpu *g, void *v, void *s) { return (int)g->f.EventRecord(GF__EVENT(v), GF__STREAM(s)); }
static int gf__gpu_event_sync(gf__gpu *g, void *v) { return (int)g->f.EventSynchronize(GF__EVENT(v)); }
static int gf__gpu_malloc(gf__gpu *g, void **p, size_t n)
{
    gf__cuptr d = 0;
    int e = (int)g->f.MemAlloc(&d, n ? n : 1);
    *p = e ? NULL : (void *)(uintptr_t)d;
    return e;
}
static int gf__gpu_free(gf__gpu *g, void *p) { return (int)g->f.MemFree(GF__DPTR(p)); }
static int gf__gpu_pin(gf__gpu *g, void *p, size_t n) { return (int)g->f.MemHostRegister(p, n, GF__CU_HOST_PORTABLE_MAPPED); }
static int gf__gpu_unpin(gf__gpu *g, void *p) { return (int)g->f.MemHostUnregister(p); }
static int gf__gpu_host_alloc(gf__gpu *g, void **p, size_t n) { return (int)g->f.MemHostAlloc(p, n, GF__CU_HOST_PORTABLE_MAPPED); }
static int gf__gpu_host_free(gf__gpu *g, void *p) { return (int)g->f.MemFreeHost(p); }
static int gf__gpu_htod(gf__gpu *g, void *dst, const void *src, size_t n) { return (int)g->f.MemcpyHtoD(GF__DPTR(dst), src, n); }
static int gf__gpu_htod_async(gf__gpu *g, void *dst, const void *src, size_t n, void *s)
{
    return (int)g->f.MemcpyHtoDAsync(GF__DPTR(dst), src, n, GF__STREAM(s));
}
#else
static int gf__gpu_stream_new(gf__gpu *g, void **s) { (void)g; return (int)cudaStreamCreateWithFlags((cudaStream_t *)s, cudaStreamNonBlocking); }
static int gf__gpu_stream_free(gf__gpu *g, void *s) { (void)g; return (int)cudaStreamDestroy((cudaStream_t)s); }
static int gf__gpu_stream_sync(gf__gpu *g, void *s) { (void)g; return (int)cudaStreamSynchronize((cudaStream_t)s); }
static int gf__gpu_stream_wait(gf__gpu *g, void *s, void *v) { (void)g; return (int)cudaStreamWaitEvent((cudaStream_t)s, (cudaEvent_t)v, 0); }
static int gf__gpu_event_new(gf__gpu *g, void **v) { (void)g; return (int)cudaEventCreateWithFlags((cudaEvent_t *)v, cudaEventDisableTiming); }
static int gf__gpu_event_free(gf__gpu *g, void *v) { (void)g; return (int)cudaEventDestroy((cudaEvent_t)v); }
static int gf__gpu_event_record(gf__gpu *g, void *v, void *s) { (void)g; return (int)cudaEventRecord((cudaEvent_t)v, (cudaStream_t)s); }
static int gf__gpu_event_sync(gf__gpu *g, void *v) { (void)g; return (int)cudaEventSynchronize((cudaEvent_t)v); }
static int gf__gpu_malloc(gf__gpu *g, void **p, size_t n) { (void)g; *p = NULL; return (int)cudaMalloc(p, n ? n : 1); }
static int gf__gpu_free(gf__gpu *g, void *p) { (void)g; return (int)cudaFree(p); }
static int gf__gpu_pin(gf__gpu *g, void *p, size_t n) { (void)g; return (int)cudaHostRegister(p, n, cudaHostRegisterDefault); }
static int gf__gpu_unpin(gf__gpu *g, void *p) { (void)g; return (int)cudaHostUnregister(p); }
static int gf__gpu_host_alloc(gf__gpu *g, void **p, size_t n) { (void)g; *p = NULL; return (int)cudaHostAlloc(p, n, cudaHostAllocDefault); }
static int gf__gpu_host_free(gf__gpu *g, void *p) { (void)g; return (int)cudaFreeHost(p); }
static int gf__gpu_htod(gf__gpu *g, void *dst, const void *src, size_t n) { (void)g; return (int)cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice); }
static int gf__gpu_htod_async(gf__gpu *g, void *dst, const void *src, size_t n, void *s)
{
    (void)g;
    return (int)cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, (cudaStream_t)s);
}
#endif

/* loads the gather kernel (the driver compiles its PTX; in the device's
   context, entered) */
static int gf__gpu_gather_load(gf__gpu *g)
{
#ifdef GF__CUDRV
    int e = 0;
    if (!g->mod) e = (int)g->f.ModuleLoadData(&g->mod, gf__gather_ptx);
    if (!e && !g->gather) e = (int)g->f.ModuleGetFunction(&g->gather, g->mod, "gf__gather");
    return e;
#elif defined(__CUDACC__)
    (void)g;
    return 0;
#else
    (void)g;
    return (int)cudaErrorNotSupported;
#endif
}

/* queues gf__gather(src, idx, n, rb, dst) on stream s (loaded before) */
static int gf__gpu_gather(gf__gpu *g, void *s, const void *src, const void *idx, long long n, long long rb, void *dst)
{
    unsigned blocks = (unsigned)(rb == 1 ? (n + 255) / 256 : (n + 7) / 8); /* 256 threads: 8 rows a block */
    if (blocks > 4096) blocks = 4096;
    if (blocks == 0) blocks = 1;
#ifdef GF__CUDRV
    {
        gf__cuptr a = GF__DPTR(src), i = GF__DPTR(idx), d = GF__DPTR(dst);
        void *args[5];
        args[0] = &a; args[1] = &i; args[2] = &n; args[3] = &rb; args[4] = &d;
        return (int)g->f.LaunchKernel(g->gather, blocks, 1, 1, 256, 1, 1, 0, GF__STREAM(s), args, NULL);
    }
#elif defined(__CUDACC__)
    (void)g;
    gf__gather_kernel<<<blocks, 256, 0, (cudaStream_t)s>>>((const unsigned char *)src, (const long long *)idx, n, rb, (unsigned char *)dst);
    return (int)cudaGetLastError();
#else
    (void)g; (void)s; (void)src; (void)idx; (void)n; (void)rb; (void)dst;
    return (int)cudaErrorNotSupported;
#endif
}
#endif /* GF__GPU */

/* >>uploader ------------------------------------------------------------- */
/* A ring of batch slots, each a pinned host slab and a device slab. The
   loader's workers assemble each batch in one of the loader's batch slots;
   the uploader then trades its free slab for that slot's memory, so the
   batch becomes the uploader slot's host slab without a copy (the loader's
   batch slots are pinned at open for this). Where the buffers cannot be
   alike (a pageable or page-locked-allocated slab, max_pinned_bytes, a
   partitioned loader) the batch is copied into the slab instead. One
   asynchronous copy per piece on a non-blocking copy stream; events without
   timing. Before a slot is
   refilled: the host waits for its previous copy (long done in the steady
   state) and the copy stream waits for the trainer's release event. */

typedef struct gf__dslot {
    uint8_t *hmem;
    uint8_t *host;
    int pinned; /* 0 pageable, 1 registered, 2 allocated page-locked */
    void *hdata;
    void **hfeat;
    uint8_t **hvalid;
    void *dmem;
    void *ddata;
    void **dfeat;
    uint8_t **dvalid;
    void *didx;                        /* resident mode: the batch's row ids, on the device */
    void *hidx;                        /* ... and in pinned host memory */
    void *copied, *released;           /* events (cudaEvent_t / CUevent) */
    int used, held, release_recorded;
    int32_t refs;                      /* live DLPack tensors of this batch */
    uint64_t serial;
} gf__dslot;

struct gpufeed_uploader {
    gpufeed_loader *l;
    gpufeed_uploader_desc d;
    int on_device;
    int32_t n;
    size_t slab;
    gf__dslot *s;
    uint64_t k;
#ifdef GF__GPU
    gf__gpu gpu;
    void *copy;                        /* the copy stream */
#endif
    /* device-resident mode */
    int resident;
    gpufeed_dataset *ids;              /* the plan with one feature: the global row id */
    gpufeed_feature idfeat;
    int64_t idoff;
    gpufeed_loader *il;                /* the index loader: same desc, same batches */
    void *drows;                       /* every row, canonical unit order */
    uint8_t **dmask;
    int64_t total_rows;
    gpufeed_allocator alloc;           /* the dataset's, kept for a deferred free */
    int32_t nfeat;
    int32_t live_refs;                 /* DLPack tensors alive, all slots */
    int exchange;                      /* 1: slots trade memory with the loader's batch
                                          slots instead of copying each batch */
    int closing;                       /* closed with tensors alive: freed by the last deleter */
#if !defined(GPUFEED_NO_THREADS)
    pthread_mutex_t mu;                /* slot state: deleters may run on any thread */
#endif
    char err[GPUFEED_ERROR_MAX];
};
#if !defined(GPUFEED_NO_THREADS)
#define GF__ULOCK(u) pthread_mutex_lock(&(u)->mu)
#define GF__UUNLOCK(u) pthread_mutex_unlock(&(u)->mu)
#else
#define GF__ULOCK(u) ((void)0)
#define GF__UUNLOCK(u) ((void)0)
#endif

GPUFEED_API int gpufeed_cuda_available(int32_t device, char *why, size_t why_cap)
{
#ifdef GF__GPU
    gf__gpu g;
    char m[256];
    int ok = gf__gpu_open(&g, device, 0, m, sizeof m);
    if (why) gf__fmt(why, why_cap, "%s", ok ? "" : m);
    gf__gpu_close(&g);
    return ok;
#else
    (void)device;
    if (why) gf__fmt(why, why_cap, "built without CUDA (GPUFEED_NO_CUDA, or a system without libcuda.so.1)");
    return 0;
#endif
}

static void gf__uploader_free(gpufeed_uploader *u);

GPUFEED_API void gpufeed_uploader_close(gpufeed_uploader *u)
{
    int defer;
    if (!u) return;
    u->l->dst_data = NULL;
    u->l->dst_feat = NULL;
    u->l->dst_valid = NULL; /* the loader hands out its own slots again */
#ifdef GF__GPU
    if (u->exchange && u->on_device) { /* the buffers the loader holds now: pageable again */
        int32_t i;
        int prev = gf__gpu_enter(&u->gpu);
        if (u->copy) gf__gpu_stream_sync(&u->gpu, u->copy);
        for (i = 0; i < u->l->S; i++) gf__gpu_unpin(&u->gpu, u->l->bs[i].mem);
        gf__gpu_leave(&u->gpu, prev);
    }
#endif
    u->exchange = 0;
    u->l->stream_out = 0;
    gpufeed_loader_close(u->il); u->il = NULL;
    GF__ULOCK(u);
    defer = u->live_refs > 0;
    u->closing = 1;
    GF__UUNLOCK(u);
    if (!defer) gf__uploader_free(u); /* else the last DLPack deleter frees it */
}

static void gf__uploader_free(gpufeed_uploader *u)
{
    const gpufeed_allocator *a = &u->alloc;
    int32_t i;
#ifdef GF__GPU
    int prev = 0;
    if (u->on_device) {
        prev = gf__gpu_enter(&u->gpu);
        if (u->copy) gf__gpu_stream_sync(&u->gpu, u->copy);
    }
#endif
    if (u->s) for (i = 0; i < u->n; i++) {
        gf__dslot *s = &u->s[i];
#ifdef GF__GPU
        if (u->on_device) {
            if (s->copied) gf__gpu_event_free(&u->gpu, s->copied);
            if (s->released) gf__gpu_event_free(&u->gpu, s->released);
            if (s->dmem) gf__gpu_free(&u->gpu, s->dmem);
            if (s->pinned == 1) gf__gpu_unpin(&u->gpu, s->hmem);
            if (s->pinned == 2) { gf__gpu_host_free(&u->gpu, s->hmem); s->hmem = NULL; }
        }
#endif
        gf__free(a, s->hmem);
        gf__free(a, s->hfeat);
        gf__free(a, s->hvalid);
        gf__free(a, s->dfeat);
        gf__free(a, s->dvalid);
    }
#ifdef GF__GPU
    if (u->on_device) {
        for (i = 0; u->s && i < u->n; i++) {
            if (u->s[i].didx) gf__gpu_free(&u->gpu, u->s[i].didx);
            if (u->s[i].hidx) gf__gpu_host_free(&u->gpu, u->s[i].hidx);
        }
        if (u->drows) gf__gpu_free(&u->gpu, u->drows);
        if (u->dmask) { int32_t j; for (j = 0; j < u->nfeat; j++) if (u->dmask[j]) gf__gpu_free(&u->gpu, u->dmask[j]); }
    }
    if (u->on_device && u->copy) gf__gpu_stream_free(&u->gpu, u->copy);
    if (u->on_device) gf__gpu_leave(&u->gpu, prev);
    gf__gpu_close(&u->gpu);
#endif
#if !defined(GPUFEED_NO_THREADS)
    pthread_mutex_destroy(&u->mu);
#endif
    gf__free(a, u->ids); gf__free(a, u->dmask);
    gf__free(a, u->s);
    gf__free(a, u);
}

#ifdef GF__GPU
/* Device-resident mode: every unit decoded once (canonical order) and
   copied to the device; an index loader with the same desc yields each
   batch's global row ids, and a kernel gathers the rows. Same batches as
   the host path, no PCIe traffic per epoch beyond the ids. */
static gpufeed_result gf__resident_setup(gpufeed_uploader *u, gpufeed_error *err)
{
    gpufeed_loader *l = u->l;
    gpufeed_dataset *ds = l->ds;
    const gpufeed_allocator *a = &ds->alloc;
    gpufeed_loader_desc ld;
    gpufeed_scratch *sc = NULL;
    uint8_t *hdata = NULL, **hvalid = NULL;
    int64_t i, nmask = 0, base = 0;
    int32_t j, nf = ds->nfeat ? ds->nfeat : 1;
    uint64_t bytes;
    gpufeed_result r = GPUFEED_OK;
    char m[160];
    int e = 0;
    if (ds->layout != GPUFEED_LAYOUT_ROW_MAJOR || l->index_mode) {
        fprintf(stderr, "gpufeed: note: the device-resident mode needs the row-major layout: plain uploads\n");
        return GPUFEED_OK;
    }
#if defined(GF__CUDA) && !defined(__CUDACC__)
    fprintf(stderr, "gpufeed: note: the device-resident mode needs a kernel: build with nvcc, or without GPUFEED_CUDA "
                    "(the driver loads it): plain uploads\n");
    return GPUFEED_OK;
#endif
    for (i = 0; i < l->U; i++) u->total_rows += l->unit_rows[i];
    for (j = 0; j < ds->nfeat; j++) nmask += ds->feats[j].validity != 0;
    bytes = (uint64_t)u->total_rows * ((uint64_t)ds->row_bytes + (uint64_t)nmask);
    if (bytes > u->d.resident_bytes) {
        fprintf(stderr, "gpufeed: note: the dense data (%llu bytes) exceeds resident_bytes (%llu): plain uploads\n",
                (unsigned long long)bytes, (unsigned long long)u->d.resident_bytes);
        return GPUFEED_OK;
    }

    e = gf__gpu_gather_load(&u->gpu);
    if (e) return gf__seterr(err, GPUFEED_ERR_CUDA, "uploader: the device-resident gather kernel does not load: %s", gf__gpu_str(&u->gpu, e, m, sizeof m));

    /* the index plan: the same units, one int64 feature (the row id) */
    u->ids = (gpufeed_dataset *)gf__alloc(a, sizeof *u->ids);
    u->dmask = (uint8_t **)gf__alloc(a, (size_t)nf * sizeof(uint8_t *));
    hvalid = (uint8_t **)gf__alloc(a, (size_t)nf * sizeof(uint8_t *));
    if (!u->ids || !u->dmask || !hvalid) { gf__free(a, hvalid); return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "uploader: out of memory"); }
    memset(u->dmask, 0, (size_t)nf * sizeof(uint8_t *)); memset(hvalid, 0, (size_t)nf * sizeof(uint8_t *));
    /* the dataset as it is, but for the counters its loader's running
       workers add to (read apart from them: no torn copy, no race) */
    memcpy(u->ids, ds, offsetof(gpufeed_dataset, bytes_read));
    u->ids->bytes_read = 0; u->ids->read_us = 0;
    u->ids->dcache = gf__dcache_load(&ds->dcache); u->ids->arena = ds->arena;
    u->ids->users = 0;
    memset(&u->idfeat, 0, sizeof u->idfeat);
    u->idfeat.column = "row id"; u->idfeat.dtype = GPUFEED_DT_I64;
    u->idoff = 0;
    u->ids->feats = &u->idfeat;
    u->ids->nfeat = 1;
    u->ids->offs = &u->idoff;
    u->ids->row_bytes = 8;
    u->ids->layout = GPUFEED_LAYOUT_ROW_MAJOR;
    u->ids->npred = 0;
    u->ids->preds = NULL;
    ld = l->d;
    ld.cache = NULL;
    ld.trace_path = NULL;
    ld.workers = 1;
    ld.prefill = 0;
    r = gf__loader_open_ex(&u->il, u->ids, &ld, err, l->unit_rows);
    if (r) { gf__free(a, hvalid); return r; }
    gf__stop_workers(l); /* the decoding loader has nothing left to do */
    /* every row, once */
    e = gf__gpu_malloc(&u->gpu, &u->drows, (size_t)(u->total_rows ? u->total_rows : 1) * (size_t)ds->row_bytes);
    for (j = 0; j < ds->nfeat && !e; j++)
        if (ds->feats[j].validity) e = gf__gpu_malloc(&u->gpu, (void **)&u->dmask[j], (size_t)(u->total_rows ? u->total_rows : 1));
    if (e) {
        gf__free(a, hvalid);
        return gf__seterr(err, GPUFEED_ERR_CUDA, "uploader: resident copy of %llu bytes: %s", (unsigned long long)bytes, gf__gpu_str(&u->gpu, e, m, sizeof m));
    }
    hdata = (uint8_t *)gf__alloc(a, (size_t)l->max_unit_rows * (size_t)ds->row_bytes + 1);
    for (j = 0; j < ds->nfeat; j++) if (ds->feats[j].validity) hvalid[j] = (uint8_t *)gf__alloc(a, (size_t)l->max_unit_rows + 1);
    if (!hdata || gpufeed_scratch_open(&sc, ds, NULL)) r = gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "uploader: out of memory");
    for (i = 0; i < l->U && !r; i++) {
        int64_t rows = 0;
        r = gpufeed_dataset_decode_unit(ds, sc, i, hdata, NULL, hvalid, &rows);
        if (r) { gf__seterr(err, r, "%s", gpufeed_scratch_error(sc)); break; }
        if (rows != l->unit_rows[i]) {
            r = gf__seterr(err, GPUFEED_ERR_CORRUPT, "uploader: unit %lld decoded to %lld rows, planned %lld", (long long)i, (long long)rows,
                           (long long)l->unit_rows[i]);
            break;
        }
        if (rows)
            e = gf__gpu_htod(&u->gpu, (uint8_t *)u->drows + (size_t)base * (size_t)ds->row_bytes, hdata, (size_t)rows * (size_t)ds->row_bytes);
        for (j = 0; j < ds->nfeat && !e && rows; j++)
            if (hvalid[j]) e = gf__gpu_htod(&u->gpu, u->dmask[j] + base, hvalid[j], (size_t)rows);
        if (e) { r = gf__seterr(err, GPUFEED_ERR_CUDA, "uploader: resident copy: %s", gf__gpu_str(&u->gpu, e, m, sizeof m)); break; }
        base += rows;
    }
    gpufeed_scratch_close(sc);
    gf__free(a, hdata);
    for (j = 0; j < ds->nfeat; j++) gf__free(a, hvalid[j]);
    gf__free(a, hvalid);
    if (r) return r;
    for (i = 0; i < u->n; i++) { /* each slot: the batch's ids, pinned and on the device */
        e = gf__gpu_malloc(&u->gpu, &u->s[i].didx, (size_t)l->B * 8);
        if (!e) e = gf__gpu_host_alloc(&u->gpu, &u->s[i].hidx, (size_t)l->B * 8 + GPUFEED_ALIGN);
        if (e) return gf__seterr(err, GPUFEED_ERR_CUDA, "uploader: slot %lld: %s", (long long)i, gf__gpu_str(&u->gpu, e, m, sizeof m));
    }
    u->resident = 1;
    return GPUFEED_OK;
}

/* one resident batch: ids from the index loader, rows gathered on the device */
static gpufeed_result gf__resident_next(gpufeed_uploader *u, gf__dslot *s, gpufeed_device_batch *b)
{
    gpufeed_dataset *ds = u->l->ds;
    gpufeed_result r;
    int32_t slot = b->slot, j;
    size_t rows;
    int e = 0;
    int prev;
    char m[160];
    u->il->dst_data = s->hidx; /* the index loader's batch goes into the pinned slot */
    r = gpufeed_loader_next(u->il, &b->host);
    b->slot = slot;
    if (r) { if (r != GPUFEED_DONE) gf__fmt(u->err, sizeof u->err, "%s", gpufeed_loader_error(u->il)); return r; }
    rows = (size_t)b->host.num_rows;
    prev = gf__gpu_enter(&u->gpu);
    GF__NVTX_PUSH("gpufeed resident gather");
    if (s->release_recorded) e = gf__gpu_stream_wait(&u->gpu, u->copy, s->released);
    if (!e && rows) e = gf__gpu_htod_async(&u->gpu, s->didx, s->hidx, rows * 8, u->copy);
    if (!e && rows) e = gf__gpu_gather(&u->gpu, u->copy, u->drows, s->didx, (long long)rows, (long long)ds->row_bytes, s->ddata);
    for (j = 0; j < ds->nfeat && !e && rows; j++)
        if (u->dmask[j]) e = gf__gpu_gather(&u->gpu, u->copy, u->dmask[j], s->didx, (long long)rows, 1, s->dvalid[j]);
    if (!e) e = gf__gpu_event_record(&u->gpu, s->copied, u->copy);
    GF__NVTX_POP();
    gf__gpu_leave(&u->gpu, prev);
    if (e) {
        gf__fmt(u->err, sizeof u->err, "uploader: resident gather of batch %lld failed: %s", (long long)b->host.index, gf__gpu_str(&u->gpu, e, m, sizeof m));
        return GPUFEED_ERR_CUDA;
    }
    b->host.data = NULL;
    b->host.row_bytes = ds->row_bytes;
    b->host.feature_offset = ds->offs;
    b->host.feature_info = ds->feats; b->host.num_features = ds->nfeat;
    b->host.features = NULL; b->host.valid = NULL;
    b->data = s->ddata;
    b->features = s->dfeat;
    b->valid = s->dvalid;
    b->ready = (void *)s->copied;
    b->on_device = 1; b->resident = 1;
    return GPUFEED_OK;
}
#endif

/* Exchange mode: each batch's memory passes from the loader's batch slot
   to the uploader's slot, and the slot's free buffer goes back in its place,
   so no batch is copied on the consumer's thread. It needs every buffer
   alike: the same size, the dataset's allocator, and on a device all
   pinned (the loader's batch slots are registered here, within
   max_pinned_bytes). Otherwise each batch is copied into the slot. */
static void gf__uploader_exchange_setup(gpufeed_uploader *u, uint64_t pinned)
{
    gpufeed_loader *l = u->l;
    int32_t i;
    u->exchange = 0;
    if (l->ninner || u->resident || gf__batch_bytes(l->ds, l->B) != u->slab) return;
    for (i = 0; i < u->n; i++) if (u->s[i].pinned != (u->on_device ? 1 : 0)) return;
#ifdef GF__GPU
    if (u->on_device) {
        int prev;
        if (u->d.max_pinned_bytes && pinned + (uint64_t)l->S * (u->slab + GPUFEED_ALIGN) > u->d.max_pinned_bytes) return;
        prev = gf__gpu_enter(&u->gpu);
        for (i = 0; i < l->S; i++)
            if (gf__gpu_pin(&u->gpu, l->bs[i].mem, u->slab + GPUFEED_ALIGN)) break;
        if (i < l->S) {
            gf__gpu_clear(&u->gpu);
            while (i-- > 0) gf__gpu_unpin(&u->gpu, l->bs[i].mem);
            gf__gpu_leave(&u->gpu, prev);
            return;
        }
        gf__gpu_leave(&u->gpu, prev);
    }
#endif
    (void)pinned;
    u->exchange = 1;
    l->stream_out = GPUFEED_STREAM_STORES && u->on_device;
}

/* slot i's host slab: allocated, touched, and on a device pinned (once,
   never per batch) within max_pinned_bytes; its per-feature tables */
static gpufeed_result gf__slot_host(gpufeed_uploader *u, int32_t i, uint64_t *pinned, gpufeed_error *err)
{
    const gpufeed_allocator *a = &u->alloc;
    gf__dslot *s = &u->s[i];
    int32_t nf = u->nfeat ? u->nfeat : 1;
    s->hfeat = (void **)gf__alloc(a, (size_t)nf * sizeof(void *));
    s->hvalid = (uint8_t **)gf__alloc(a, (size_t)nf * sizeof(uint8_t *));
    s->dfeat = (void **)gf__alloc(a, (size_t)nf * sizeof(void *));
    s->dvalid = (uint8_t **)gf__alloc(a, (size_t)nf * sizeof(uint8_t *));
    if (!s->hfeat || !s->hvalid || !s->dfeat || !s->dvalid) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "uploader: out of memory");
    memset(s->dfeat, 0, (size_t)nf * sizeof(void *));
    memset(s->dvalid, 0, (size_t)nf * sizeof(uint8_t *));
    s->hmem = (uint8_t *)gf__alloc(a, u->slab + GPUFEED_ALIGN);
    if (!s->hmem) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "uploader: out of memory for a %llu-byte slot", (unsigned long long)u->slab);
    memset(s->hmem, 0, u->slab + GPUFEED_ALIGN);
#ifdef GF__GPU
    if (!u->on_device) {
        /* host batches: nothing to pin */
    } else if (u->d.max_pinned_bytes && *pinned + u->slab + GPUFEED_ALIGN > u->d.max_pinned_bytes) {
        fprintf(stderr, "gpufeed: warning: slot %d stays pageable (max_pinned_bytes %llu reached): its copies are synchronous\n", i,
                (unsigned long long)u->d.max_pinned_bytes);
    } else if (!gf__gpu_pin(&u->gpu, s->hmem, u->slab + GPUFEED_ALIGN)) {
        s->pinned = 1;
        *pinned += u->slab + GPUFEED_ALIGN;
    } else {
        void *hp = NULL;
        gf__gpu_clear(&u->gpu);
        if (!gf__gpu_host_alloc(&u->gpu, &hp, u->slab + GPUFEED_ALIGN)) {
            gf__free(a, s->hmem);
            s->hmem = (uint8_t *)hp;
            s->pinned = 2;
            *pinned += u->slab + GPUFEED_ALIGN;
        } else {
            gf__gpu_clear(&u->gpu);
            fprintf(stderr, "gpufeed: warning: cannot pin slot %d (%llu bytes): pageable memory, synchronous copies\n", i, (unsigned long long)u->slab);
        }
    }
#else
    (void)pinned;
#endif
    s->host = s->hmem + (gf__align_up((size_t)(uintptr_t)s->hmem) - (size_t)(uintptr_t)s->hmem);
    {
        void *hd;
        gf__batch_layout(u->l->ds, u->l->B, s->host, &hd, s->hfeat, s->hvalid);
        s->hdata = hd;
    }
    return GPUFEED_OK;
}

#ifdef GF__GPU
/* slot i's device slab and events (the device entered) */
static gpufeed_result gf__slot_device(gpufeed_uploader *u, int32_t i, gpufeed_error *err)
{
    gf__dslot *s = &u->s[i];
    char m[160];
    void *dd;
    int e = gf__gpu_malloc(&u->gpu, &s->dmem, u->slab);
    if (!e) e = gf__gpu_event_new(&u->gpu, &s->copied);
    if (!e) e = gf__gpu_event_new(&u->gpu, &s->released);
    if (e) return gf__seterr(err, GPUFEED_ERR_CUDA, "uploader: device %d, slot %d: %s", u->d.device, i, gf__gpu_str(&u->gpu, e, m, sizeof m));
    gf__batch_layout(u->l->ds, u->l->B, (uint8_t *)s->dmem, &dd, s->dfeat, s->dvalid);
    s->ddata = dd;
    return GPUFEED_OK;
}
#endif

/* the slots, the copy stream and the resident copy (on a device: the
   device entered) */
static gpufeed_result gf__uploader_setup(gpufeed_uploader *u, uint64_t *pinned, gpufeed_error *err)
{
    gpufeed_result r = GPUFEED_OK;
    int32_t i;
#ifdef GF__GPU
    if (u->on_device) {
        char m[160];
        int e = gf__gpu_stream_new(&u->gpu, &u->copy);
        if (e) {
            u->copy = NULL;
            return gf__seterr(err, GPUFEED_ERR_CUDA, "uploader: device %d: %s", u->d.device, gf__gpu_str(&u->gpu, e, m, sizeof m));
        }
    }
#endif
    for (i = 0; i < u->n && !r; i++) {
        r = gf__slot_host(u, i, pinned, err);
#ifdef GF__GPU
        if (!r && u->on_device) r = gf__slot_device(u, i, err);
#endif
    }
#ifdef GF__GPU
    if (!r && u->on_device && u->d.resident_bytes) r = gf__resident_setup(u, err);
#endif
    if (!r) gf__uploader_exchange_setup(u, *pinned);
    return r;
}

GPUFEED_API gpufeed_result gpufeed_uploader_open(gpufeed_uploader **out, gpufeed_loader *l, const gpufeed_uploader_desc *desc, gpufeed_error *err)
{
    gpufeed_uploader *u;
    const gpufeed_allocator *a;
    char why[256];
    uint64_t pinned = 0;
    gpufeed_result r;
    if (err) { err->code = GPUFEED_OK; err->message[0] = 0; }
    if (!out) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "gpufeed_uploader_open: out is NULL");
    *out = NULL;
    if (!l || !desc) return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "gpufeed_uploader_open: loader or desc is NULL");
    if (desc->slots < 0 || desc->slots > 16 || desc->slots == 1)
        return gf__seterr(err, GPUFEED_ERR_INVALID_ARG, "uploader: slots must be 2..16 (got %d)", desc->slots);
    a = &l->ds->alloc;
    u = (gpufeed_uploader *)gf__alloc(a, sizeof *u);
    if (!u) return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "uploader: out of memory");
    memset(u, 0, sizeof *u);
    u->l = l; u->d = *desc;
    u->alloc = *a; u->nfeat = l->ds->nfeat;
#if !defined(GPUFEED_NO_THREADS)
    pthread_mutex_init(&u->mu, NULL);
#endif
    u->n = desc->slots ? desc->slots : 3;
    if (desc->device == GPUFEED_DEVICE_HOST)
        u->on_device = 0; /* asked for host batches */
    else
#ifdef GF__GPU
        u->on_device = gf__gpu_open(&u->gpu, desc->device, 1, why, sizeof why);
#else
        u->on_device = gpufeed_cuda_available(desc->device, why, sizeof why);
#endif
    if (!u->on_device && !desc->host_fallback && desc->device != GPUFEED_DEVICE_HOST) {
        gpufeed_uploader_close(u);
        return gf__seterr(err, GPUFEED_ERR_NO_DEVICE, "uploader: %s (set host_fallback for host batches)", why);
    }
    u->slab = gf__batch_bytes(l->ds, l->B);
    u->s = (gf__dslot *)gf__alloc(a, (size_t)u->n * sizeof(gf__dslot));
    if (!u->s) { gpufeed_uploader_close(u); return gf__seterr(err, GPUFEED_ERR_OUT_OF_MEMORY, "uploader: out of memory"); }
    memset(u->s, 0, (size_t)u->n * sizeof(gf__dslot));
#ifdef GF__GPU
    if (u->on_device) {
        int prev = gf__gpu_enter(&u->gpu);
        r = gf__uploader_setup(u, &pinned, err);
        gf__gpu_leave(&u->gpu, prev);
    } else
#endif
        r = gf__uploader_setup(u, &pinned, err);
    if (r) { gpufeed_uploader_close(u); return r; }
    *out = u;
    return GPUFEED_OK;
}

GPUFEED_API gpufeed_result gpufeed_uploader_next(gpufeed_uploader *u, gpufeed_device_batch *b)
{
    gf__dslot *s;
    gpufeed_result r;
    gpufeed_loader *l;
    if (!u || !b) return GPUFEED_ERR_INVALID_ARG;
    memset(b, 0, sizeof *b);
    l = u->l;
    {   /* the next free slot in ring order (releases may come in any order) */
        int32_t i, at = -1;
        GF__ULOCK(u);
        for (i = 0; i < u->n; i++) {
            int32_t q = (int32_t)((u->k + (uint64_t)i) % (uint64_t)u->n);
            if (!u->s[q].held && !u->s[q].refs) { at = q; break; }
        }
        GF__UUNLOCK(u);
        if (at < 0) {
            gf__fmt(u->err, sizeof u->err,
                    "uploader: all %d slots are held: release a batch (gpufeed_uploader_release) and drop its DLPack tensors before taking another", u->n);
            return GPUFEED_ERR_INVALID_ARG;
        }
        s = &u->s[at];
        b->slot = at;
    }
#ifdef GF__GPU
    if (u->on_device) {
        int prev = gf__gpu_enter(&u->gpu);
        if (s->used) gf__gpu_event_sync(&u->gpu, s->copied); /* its host slab is free once its last copy is done */
        gf__gpu_leave(&u->gpu, prev);
    }
#endif
#ifdef GF__GPU
    if (u->resident) {
        r = gf__resident_next(u, s, b);
        if (r) return r;
        s->used = 1;
        s->held = 1;
        s->release_recorded = 0;
        s->serial = b->serial = u->k;
        b->uploader = u;
        u->k++;
        return GPUFEED_OK;
    }
#endif
    /* the loader's batch goes into this slot: the slot's free memory is
       traded for the batch slot's (no copy), or the batch is copied in */
    l->dst_data = u->exchange ? NULL : s->hdata;
    l->dst_feat = u->exchange ? NULL : s->hfeat;
    l->dst_valid = u->exchange ? NULL : s->hvalid;
    {
        int32_t slot = b->slot;
        r = gpufeed_loader_next(l, &b->host);
        b->slot = slot;
    }
    if (r) { if (r != GPUFEED_DONE) gf__fmt(u->err, sizeof u->err, "%s", gpufeed_loader_error(l)); return r; }
    if (u->exchange) {
        void *hd;
        s->hmem = gf__loader_exchange(l, s->hmem);
        s->host = s->hmem + (gf__align_up((size_t)(uintptr_t)s->hmem) - (size_t)(uintptr_t)s->hmem);
        gf__batch_layout(l->ds, l->B, s->host, &hd, s->hfeat, s->hvalid);
        s->hdata = hd;
        b->host.data = s->hdata;
        b->host.features = s->hfeat;
        b->host.valid = s->hvalid;
    }
    b->on_device = u->on_device;
#ifdef GF__GPU
    if (u->on_device) {
        const gpufeed_dataset *ds = l->ds;
        size_t rows = (size_t)b->host.num_rows;
        int32_t j;
        int e = 0;
        char m[160];
        int prev = gf__gpu_enter(&u->gpu);
        GF__NVTX_PUSH("gpufeed upload");
        if (s->release_recorded) e = gf__gpu_stream_wait(&u->gpu, u->copy, s->released); /* the trainer is done with it */
        if (!e && ds->layout == GPUFEED_LAYOUT_ROW_MAJOR && rows)
            e = gf__gpu_htod_async(&u->gpu, s->ddata, s->hdata, rows * (size_t)ds->row_bytes, u->copy);
        for (j = 0; j < ds->nfeat && !e; j++) {
            if (ds->layout == GPUFEED_LAYOUT_PER_FEATURE && rows)
                e = gf__gpu_htod_async(&u->gpu, s->dfeat[j], s->hfeat[j], rows * gpufeed_feature_bytes(&ds->feats[j]), u->copy);
            if (!e && s->hvalid[j] && rows) e = gf__gpu_htod_async(&u->gpu, s->dvalid[j], s->hvalid[j], rows, u->copy);
        }
        if (!e) e = gf__gpu_event_record(&u->gpu, s->copied, u->copy);
        GF__NVTX_POP();
        gf__gpu_leave(&u->gpu, prev);
        if (e) {
            gf__fmt(u->err, sizeof u->err, "uploader: copy of batch %lld failed: %s", (long long)b->host.index, gf__gpu_str(&u->gpu, e, m, sizeof m));
            return GPUFEED_ERR_CUDA;
        }
        b->data = s->ddata;
        b->features = s->dfeat;
        b->valid = s->dvalid;
        b->ready = (void *)s->copied;
    }
#endif
    s->used = 1;
    s->held = 1;
    s->release_recorded = 0;
    s->serial = b->serial = u->k;
    b->uploader = u;
    u->k++;
    return GPUFEED_OK;
}

GPUFEED_API gpufeed_result gpufeed_device_batch_wait(const gpufeed_device_batch *b, void *stream)
{
    if (!b) return GPUFEED_ERR_INVALID_ARG;
    if (!b->on_device) return GPUFEED_OK;
#ifdef GF__GPU
    if (!b->uploader) return GPUFEED_ERR_INVALID_ARG;
    {
        gf__gpu *g = &b->uploader->gpu;
        int prev = gf__gpu_enter(g), e = gf__gpu_stream_wait(g, stream, b->ready);
        gf__gpu_leave(g, prev);
        return e ? GPUFEED_ERR_CUDA : GPUFEED_OK;
    }
#else
    (void)stream;
    return GPUFEED_OK;
#endif
}

/* the consumer on `stream` is done with slot s (called with the lock held):
   the slot's next copy waits for what is queued there now */
static gpufeed_result gf__slot_record_release(gpufeed_uploader *u, gf__dslot *s, void *stream)
{
#ifdef GF__GPU
    if (u->on_device) {
        int prev = gf__gpu_enter(&u->gpu);
        int e = 0;
        char m[160];

        /* one event per slot: an earlier consumer's point must have passed
           before the event moves to another stream (rare: several tensors) */
        if (s->release_recorded) e = gf__gpu_event_sync(&u->gpu, s->released);
        if (!e) e = gf__gpu_event_record(&u->gpu, s->released, stream);
        gf__gpu_leave(&u->gpu, prev);
        if (e) { gf__fmt(u->err, sizeof u->err, "uploader: release: %s", gf__gpu_str(&u->gpu, e, m, sizeof m)); return GPUFEED_ERR_CUDA; }
        s->release_recorded = 1;
    }
#else
    (void)u;
    (void)s;
    (void)stream;
#endif
    return GPUFEED_OK;
}

GPUFEED_API gpufeed_result gpufeed_uploader_release(gpufeed_uploader *u, const gpufeed_device_batch *b, void *stream)
{
    gf__dslot *s;
    gpufeed_result r;
    if (!u || !b) return GPUFEED_ERR_INVALID_ARG;
    if (b->slot < 0 || b->slot >= u->n) {
        gf__fmt(u->err, sizeof u->err, "uploader: release of slot %d: no such slot", b->slot);
        return GPUFEED_ERR_INVALID_ARG;
    }
    GF__ULOCK(u);
    s = &u->s[b->slot];
    if (!s->held || s->serial != b->serial) {
        gf__fmt(u->err, sizeof u->err, "uploader: release of batch %llu in slot %d: %s", (unsigned long long)b->serial, b->slot,
                s->held ? "the slot holds a newer batch" : "not held");
        GF__UUNLOCK(u);
        return GPUFEED_ERR_INVALID_ARG;
    }
    r = gf__slot_record_release(u, s, stream);
    if (!r) s->held = 0;
    GF__UUNLOCK(u);
    return r;
}

GPUFEED_API const char *gpufeed_uploader_error(const gpufeed_uploader *u) { return u ? u->err : ""; }

/* >>dlpack: batches as DLPack tensors ------------------------------------ */

typedef struct gf__dlblock {           /* one exported tensor, one allocation */
    union {
        gpufeed_dl_managed m;
        gpufeed_dl_managed_versioned v;
    } t;
    int64_t shape[2], strides[2];
    gpufeed_uploader *u;
    int32_t slot;
    uint64_t serial;
    void *stream;
} gf__dlblock;

static void gf__dl_unref(gf__dlblock *k)
{
    gpufeed_uploader *u = k->u;
    int last;
    GF__ULOCK(u);
    if (k->slot >= 0 && k->slot < u->n && u->s[k->slot].serial == k->serial && u->s[k->slot].refs > 0) {
        gf__dslot *s = &u->s[k->slot];
        (void)gf__slot_record_release(u, s, k->stream);
        s->refs--;
    }
    u->live_refs--;
    last = u->closing && u->live_refs == 0;
    GF__UUNLOCK(u);
    {
        gpufeed_allocator a = u->alloc;
        gf__free(&a, k);
    }
    if (last) gf__uploader_free(u);
}
static void gf__dl_delete(gpufeed_dl_managed *m) { if (m) gf__dl_unref((gf__dlblock *)m->manager_ctx); }
static void gf__dl_delete_v(gpufeed_dl_managed_versioned *v) { if (v) gf__dl_unref((gf__dlblock *)v->manager_ctx); }

static gpufeed_dl_dtype gf__dl_dtype(gpufeed_dtype t)
{
    gpufeed_dl_dtype d;
    d.lanes = 1;
    switch (t) {
    case GPUFEED_DT_F32:
        d.code = GPUFEED_DL_FLOAT;
        d.bits = 32;
        break;
    case GPUFEED_DT_F64:
        d.code = GPUFEED_DL_FLOAT;
        d.bits = 64;
        break;
    case GPUFEED_DT_F16:
        d.code = GPUFEED_DL_FLOAT;
        d.bits = 16;
        break;
    case GPUFEED_DT_BF16:
        d.code = GPUFEED_DL_BFLOAT;
        d.bits = 16;
        break;
    case GPUFEED_DT_I32:
        d.code = GPUFEED_DL_INT;
        d.bits = 32;
        break;
    case GPUFEED_DT_I64:
        d.code = GPUFEED_DL_INT;
        d.bits = 64;
        break;
    default:
        d.code = GPUFEED_DL_UINT;
        d.bits = 8;
        break;
    }
    return d;
}

/* values per row of feature j (a fixed-width list feature has `width`) */
static int64_t gf__feat_cols(const gpufeed_dataset *ds, int32_t j)
{
    return (int64_t)(gpufeed_feature_bytes(&ds->feats[j]) / gpufeed_dtype_size(ds->feats[j].dtype));
}

GPUFEED_API gpufeed_result gpufeed_batch_dlpack(gpufeed_uploader *u, const gpufeed_device_batch *b,
    int32_t feature, int32_t mask, void *consumer_stream, int32_t versioned, void **out)
{
    const gpufeed_dataset *ds;
    gf__dlblock *k;
    gpufeed_dl_tensor *t;
    gf__dslot *s;
    int on_dev;
    char *base;
    if (out) *out = NULL;
    if (!u || !b || !out) return GPUFEED_ERR_INVALID_ARG;
    ds = u->l->ds;
    if (b->slot < 0 || b->slot >= u->n) { gf__fmt(u->err, sizeof u->err, "dlpack: batch slot %d: no such slot", b->slot); return GPUFEED_ERR_INVALID_ARG; }
    if (feature < GPUFEED_DL_ALL || feature >= ds->nfeat) {
        gf__fmt(u->err, sizeof u->err, "dlpack: feature %d: the dataset has %d features", feature, ds->nfeat);
        return GPUFEED_ERR_INVALID_ARG;
    }
    if (mask && (feature < 0 || !ds->feats[feature].validity)) {
        gf__fmt(u->err, sizeof u->err, "dlpack: feature %d has no validity mask (set validity in its gpufeed_feature)",
                feature); return GPUFEED_ERR_INVALID_ARG;
    }
    if (feature == GPUFEED_DL_ALL) {
        int32_t j;
        if (ds->layout != GPUFEED_LAYOUT_ROW_MAJOR) {
            gf__fmt(u->err, sizeof u->err, "dlpack: the whole batch as one tensor needs the row-major layout (use one tensor per feature)");
            return GPUFEED_ERR_INVALID_ARG;
        }
        for (j = 1; j < ds->nfeat; j++)
            if (ds->feats[j].dtype != ds->feats[0].dtype) {
                gf__fmt(u->err, sizeof u->err, "dlpack: features 0 (%s) and %d (%s) differ in dtype: export them one by one",
                        gpufeed_dtype_name(ds->feats[0].dtype), j, gpufeed_dtype_name(ds->feats[j].dtype));
                return GPUFEED_ERR_INVALID_ARG;
            }
    }
    k = (gf__dlblock *)gf__alloc(&u->alloc, sizeof *k);
    if (!k) { gf__fmt(u->err, sizeof u->err, "dlpack: out of memory"); return GPUFEED_ERR_OUT_OF_MEMORY; }
    memset(k, 0, sizeof *k);
    GF__ULOCK(u);
    s = &u->s[b->slot];
    if (!s->held || s->serial != b->serial) {
        GF__UUNLOCK(u);
        gf__free(&u->alloc, k);
        gf__fmt(u->err, sizeof u->err, "dlpack: batch %llu is no longer held (released, or its slot reused)", (unsigned long long)b->serial);
        return GPUFEED_ERR_INVALID_ARG;
    }
    s->refs++; u->live_refs++;
    GF__UUNLOCK(u);
    k->u = u;
    k->slot = b->slot;
    k->serial = b->serial;
    k->stream = consumer_stream;
    on_dev = b->on_device;
    t = versioned ? &k->t.v.dl_tensor : &k->t.m.dl_tensor;
    t->device.device_type = on_dev ? GPUFEED_DL_CUDA : GPUFEED_DL_CPU;
    t->device.device_id = on_dev ? u->d.device : 0;
    t->shape = k->shape; t->strides = k->strides;
    t->byte_offset = 0;
    k->shape[0] = b->host.num_rows;
    if (mask) {
        t->data = on_dev ? (void *)b->valid[feature] : (void *)b->host.valid[feature];
        t->ndim = 1;
        t->dtype = gf__dl_dtype(GPUFEED_DT_U8);
        k->strides[0] = 1;
    } else if (ds->layout == GPUFEED_LAYOUT_ROW_MAJOR) {
        gpufeed_dtype dt = ds->feats[feature < 0 ? 0 : feature].dtype;
        int64_t es = (int64_t)gpufeed_dtype_size(dt);
        base = on_dev ? (char *)b->data : (char *)b->host.data;
        t->dtype = gf__dl_dtype(dt);
        if (feature < 0) {
            t->data = base; t->ndim = 2;
            k->shape[1] = ds->row_bytes / es;
            k->strides[0] = ds->row_bytes / es;
            k->strides[1] = 1;
        } else {
            /* a strided view: rows are row_bytes apart; DLPack strides count
               elements, so the feature's offset goes into byte_offset */
            t->data = base; t->byte_offset = (uint64_t)ds->offs[feature];
            t->ndim = gf__feat_cols(ds, feature) > 1 ? 2 : 1;
            k->shape[1] = gf__feat_cols(ds, feature);
            if (ds->row_bytes % es != 0 || ds->offs[feature] % es != 0) {
                /* cannot be expressed in elements: refuse rather than copy */
                GF__ULOCK(u);
                s->refs--;
                u->live_refs--;
                GF__UUNLOCK(u);
                gf__free(&u->alloc, k);
                gf__fmt(u->err, sizeof u->err, "dlpack: feature %d (%s) is not aligned to its element size in the %lld-byte row: use the per-feature layout",
                        feature, gpufeed_dtype_name(dt), (long long)ds->row_bytes);
                return GPUFEED_ERR_INVALID_ARG;
            }
            k->strides[0] = ds->row_bytes / es; k->strides[1] = 1;
        }
    } else {
        gpufeed_dtype dt = ds->feats[feature].dtype;
        t->data = on_dev ? b->features[feature] : b->host.features[feature];
        t->dtype = gf__dl_dtype(dt);
        k->shape[1] = gf__feat_cols(ds, feature);
        t->ndim = k->shape[1] > 1 ? 2 : 1;
        k->strides[0] = k->shape[1]; k->strides[1] = 1;
    }
    if (versioned) {
        k->t.v.version.major = 1; k->t.v.version.minor = 0;
        k->t.v.manager_ctx = k;
        k->t.v.deleter = gf__dl_delete_v;
        k->t.v.flags = 0;
    } else {
        k->t.m.manager_ctx = k; k->t.m.deleter = gf__dl_delete;
    }
#ifdef GF__GPU
    if (on_dev) {
        char m[160];
        int prev = gf__gpu_enter(&u->gpu), e = gf__gpu_stream_wait(&u->gpu, consumer_stream, b->ready);
        gf__gpu_leave(&u->gpu, prev);
        if (e) {
            gf__fmt(u->err, sizeof u->err, "dlpack: the consumer stream cannot wait for the batch: %s", gf__gpu_str(&u->gpu, e, m, sizeof m));
            if (versioned) gf__dl_delete_v(&k->t.v); else gf__dl_delete(&k->t.m);
            return GPUFEED_ERR_CUDA;
        }
    }
#endif
    *out = versioned ? (void *)&k->t.v : (void *)&k->t.m;
    return GPUFEED_OK;
}

GPUFEED_API size_t gpufeed_sizeof(const char *n)
{
    static const struct { const char *name; size_t size; } t[] = {
        { "gpufeed_feature", sizeof(gpufeed_feature) }, { "gpufeed_dataset_desc", sizeof(gpufeed_dataset_desc) },
        { "gpufeed_loader_desc", sizeof(gpufeed_loader_desc) }, { "gpufeed_cache_desc", sizeof(gpufeed_cache_desc) },
        { "gpufeed_uploader_desc", sizeof(gpufeed_uploader_desc) }, { "gpufeed_device_batch", sizeof(gpufeed_device_batch) },
        { "gpufeed_batch", sizeof(gpufeed_batch) }, { "gpufeed_error", sizeof(gpufeed_error) },
        { "gpufeed_stats", sizeof(gpufeed_stats) }, { "gpufeed_predicate", sizeof(gpufeed_predicate) },
        { "gpufeed_value", sizeof(gpufeed_value) }, { "gpufeed_source", sizeof(gpufeed_source) },
        { "gpufeed_dl_tensor", sizeof(gpufeed_dl_tensor) }, { "gpufeed_dl_managed", sizeof(gpufeed_dl_managed) },
        { "gpufeed_dl_managed_versioned", sizeof(gpufeed_dl_managed_versioned) }
    };
    size_t i;
    if (!n) return 0;
    for (i = 0; i < sizeof t / sizeof t[0]; i++) if (strcmp(t[i].name, n) == 0) return t[i].size;
    return 0;
}

#endif /* GPUFEED_IMPLEMENTATION_DONE */
#endif /* GPUFEED_IMPLEMENTATION */

/* >>license --------------------------------------------------------------
This software is available under two licenses; choose whichever you prefer.
------------------------------------------------------------------------------
ALTERNATIVE A - MIT License
Copyright (c) 2026 the gpufeed authors
Permission is hereby granted, free of charge, to any person obtaining a copy of
this software and associated documentation files (the "Software"), to deal in
the Software without restriction, including without limitation the rights to
use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies
of the Software, and to permit persons to whom the Software is furnished to do
so, subject to the following conditions:
The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.
THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
------------------------------------------------------------------------------
ALTERNATIVE B - Public Domain (www.unlicense.org)
This is free and unencumbered software released into the public domain.
Anyone is free to copy, modify, publish, use, compile, sell, or distribute this
software, either in source code form or as a compiled binary, for any purpose,
commercial or non-commercial, and by any means.
In jurisdictions that recognize copyright laws, the author or authors of this
software dedicate any and all copyright interest in the software to the public
domain. We make this dedication for the benefit of the public at large and to
the detriment of our heirs and successors. We intend this dedication to be an
overt act of relinquishment in perpetuity of all present and future rights to
this software under copyright law.
THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN
ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION
WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
------------------------------------------------------------------------------
*/
