/* http_source.c -- Parquet over HTTP range requests (libcurl) into gpufeed's
   loader and tensor cache: a remote source of your own, through
   gpufeed_dataset_desc.open_source. (gpufeed.h reads s3:// and https://
   paths itself when built with GPUFEED_CURL; this shows the hooks it uses.)

   Build (one command, from the repository root):
       cc -O2 -I. examples/http_source.c -o http_source -lcurl -lpthread -lm
   Run:
       ./http_source [options] URL...      (or --local PATH... to compare)
     --epochs N        epochs to deliver (default 2)
     --batch B         rows per batch (default 1024)
     --workers N       decode threads (default 2)
     --seed S          shuffle seed (default 1)
     --unit-rows N     rows per unit (default 65536)
     --cache DIR       tensor cache directory: epoch 0 builds it, later
                       epochs (and later runs) read no byte over HTTP
     --columns a,b     features (default: every numeric/boolean column, f32)
     --print-batches   one line per batch: epoch, index, rows, hash
     --retries N       attempts per request (default 4; backoff 100 ms x 2^k)
     --timeout S       per-request limit in seconds (default 30)
     --local           the arguments are local paths (same output, no HTTP)

   How it talks HTTP:
   - opening a URL is a HEAD request: size (Content-Length) and identity
     (size, ETag, Last-Modified), which keys the tensor cache; the footer
     then takes one or two range requests;
   - before a worker decodes a unit, gpufeed calls the source's will_read
     hook with the byte ranges of the unit's column chunks (sorted, merged
     where they touch); ranges with a hole of at most 256 KiB, and no larger
     than the bytes already wanted, are merged further, and each merged range
     is one GET with `Range: bytes=a-b`: a unit that is a whole row group is
     one request, a slice of a row group about one per column. The reads
     that follow are served from those buffers (at most 256 MiB kept, least
     recently used dropped); a read outside them is its own range request;
   - every request checks the status (206, or 200 for a whole-file range),
     the byte count and Content-Range; a dropped connection, a short body or
     a 5xx is retried with exponential backoff; connect timeout 5 s, no
     progress for 10 s or the --timeout limit aborts an attempt. When every
     attempt fails, read_at fails and gpufeed reports an I/O error naming
     the URL and the byte range: the loader stops at a deterministic batch,
     never hands out a partial batch, never hangs.
   At the end it prints the HTTP requests made while opening and while
   delivering epochs, bytes fetched, retries, and the loader's verdict. */
#define _POSIX_C_SOURCE 200809L
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define GPUFEED_IMPLEMENTATION
#define GPUFEED_STATIC
#include "gpufeed.h"

#define HTTP_MAX_RANGES 32             /* prefetched ranges kept per URL */
#define HTTP_COALESCE_GAP (256u << 10) /* merge ranges closer than this */
#define HTTP_MAX_PREFETCH ((uint64_t)256 << 20)

typedef struct http_stats {
    pthread_mutex_t mu;
    unsigned long long requests, bytes, retries, failures, prefetched_reads;
} http_stats;

typedef struct http_opts { int retries; long timeout_s; http_stats *st; } http_opts;

typedef struct http_range { uint64_t off, len, stamp; uint8_t *buf; } http_range;

typedef struct http_src {
    char *url;
    uint64_t size;
    const http_opts *o;
    pthread_mutex_t mu;
    http_range r[HTTP_MAX_RANGES];
    uint64_t stamp, held;
} http_src;

typedef struct sink { uint8_t *dst; size_t cap, got; int overflow; } sink;

static size_t on_body(char *p, size_t sz, size_t n, void *u)
{
    sink *s = (sink *)u;
    size_t k = sz * n;
    if (k > s->cap - s->got) { s->overflow = 1; return 0; }  /* more than asked: abort */
    memcpy(s->dst + s->got, p, k);
    s->got += k;
    return k;
}

static void count(const http_opts *o, unsigned long long req, unsigned long long bytes, unsigned long long retry, unsigned long long fail)
{
    pthread_mutex_lock(&o->st->mu);
    o->st->requests += req; o->st->bytes += bytes; o->st->retries += retry; o->st->failures += fail;
    pthread_mutex_unlock(&o->st->mu);
}

static void sleep_ms(long ms)
{
    struct timespec ts;
    ts.tv_sec = ms / 1000; ts.tv_nsec = (ms % 1000) * 1000000L;
    nanosleep(&ts, NULL);
}

/* One range GET with retries: exactly len bytes at off into dst. */
static int http_get(const http_src *h, uint64_t off, uint64_t len, uint8_t *dst, char *why, size_t why_cap)
{
    int attempt;
    char range[64];
    if (len == 0) return 0;
    snprintf(range, sizeof range, "%llu-%llu", (unsigned long long)off, (unsigned long long)(off + len - 1));
    for (attempt = 0; attempt < h->o->retries; attempt++) {
        CURL *c = curl_easy_init();
        sink s;
        CURLcode rc;
        long status = 0;
        if (!c) { snprintf(why, why_cap, "curl_easy_init failed"); return 1; }
        s.dst = dst; s.cap = (size_t)len; s.got = 0; s.overflow = 0;
        curl_easy_setopt(c, CURLOPT_URL, h->url);
        curl_easy_setopt(c, CURLOPT_RANGE, range);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, h->o->timeout_s);
        curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 10L);
        rc = curl_easy_perform(c);
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        curl_easy_cleanup(c);
        count(h->o, 1, s.got, attempt > 0, 0);
        if (rc == CURLE_OK && (status == 206 || (status == 200 && off == 0 && len == h->size)) && s.got == len) return 0;
        if (rc != CURLE_OK) snprintf(why, why_cap, "%s, bytes %s: %s (%llu of %llu bytes received)", h->url, range,
                                     s.overflow ? "server sent more than the range" : curl_easy_strerror(rc),
                                     (unsigned long long)s.got, (unsigned long long)len);
        else snprintf(why, why_cap, "%s, bytes %s: HTTP status %ld, %llu of %llu bytes", h->url, range, status,
                      (unsigned long long)s.got, (unsigned long long)len);
        if (status >= 400 && status < 500 && status != 408 && status != 429) break; /* not worth retrying */
        if (attempt + 1 < h->o->retries) sleep_ms(100L << attempt);
    }
    count(h->o, 0, 0, 0, 1);
    fprintf(stderr, "http_source: giving up after %d attempt(s): %s\n", h->o->retries, why);
    return 1;
}

static int http_read_at(void *ctx, uint64_t off, void *buf, size_t len)
{
    http_src *h = (http_src *)ctx;
    char why[512];
    int i;
    pthread_mutex_lock(&h->mu);
    for (i = 0; i < HTTP_MAX_RANGES; i++) {
        http_range *r = &h->r[i];
        if (r->buf && off >= r->off && off + len <= r->off + r->len) {
            memcpy(buf, r->buf + (off - r->off), len);
            r->stamp = ++h->stamp;
            pthread_mutex_unlock(&h->mu);
            pthread_mutex_lock(&h->o->st->mu); h->o->st->prefetched_reads++; pthread_mutex_unlock(&h->o->st->mu);
            return 0;
        }
    }
    pthread_mutex_unlock(&h->mu);
    return http_get(h, off, (uint64_t)len, (uint8_t *)buf, why, sizeof why);
}

/* keeps one fetched range, evicting the least recently used beyond the limits */
static void http_keep(http_src *h, uint64_t off, uint64_t len, uint8_t *buf)
{
    int i, slot = -1;
    pthread_mutex_lock(&h->mu);
    for (;;) {
        int lru = -1, used = 0;
        for (i = 0; i < HTTP_MAX_RANGES; i++) {
            if (!h->r[i].buf) { if (slot < 0) slot = i; continue; }
            used++;
            if (lru < 0 || h->r[i].stamp < h->r[lru].stamp) lru = i;
        }
        if (slot >= 0 && h->held + len <= HTTP_MAX_PREFETCH) break;
        if (lru < 0) break;
        h->held -= h->r[lru].len; free(h->r[lru].buf); h->r[lru].buf = NULL;
        if (slot < 0) slot = lru;
        (void)used;
    }
    if (slot < 0) { pthread_mutex_unlock(&h->mu); free(buf); return; }
    h->r[slot].off = off; h->r[slot].len = len; h->r[slot].buf = buf; h->r[slot].stamp = ++h->stamp;
    h->held += len;
    pthread_mutex_unlock(&h->mu);
}

/* gpufeed's hint: the unit's ranges (sorted, merged where they touch) */
static void http_will_read(void *ctx, const uint64_t *off, const uint64_t *len, int32_t n)
{
    http_src *h = (http_src *)ctx;
    int32_t i = 0;
    while (i < n) {
        uint64_t a = off[i], b = off[i] + len[i], useful = len[i];
        uint8_t *buf;
        char why[512];
        int32_t j = i + 1;
        /* merge the next range when the hole before it is small: at most
           HTTP_COALESCE_GAP and never more than the useful bytes so far, so
           a request never fetches more than twice what the unit reads */
        while (j < n && off[j] >= b && off[j] - b <= HTTP_COALESCE_GAP && off[j] - b <= useful) {
            b = off[j] + len[j]; useful += len[j]; j++;
        }
        i = j;
        if (b > h->size || b - a > HTTP_MAX_PREFETCH) continue; /* leave it to read_at */
        buf = (uint8_t *)malloc((size_t)(b - a));
        if (!buf) continue;
        if (http_get(h, a, b - a, buf, why, sizeof why)) { free(buf); continue; } /* read_at retries and reports */
        http_keep(h, a, b - a, buf);
    }
}

static void http_close(void *ctx)
{
    http_src *h = (http_src *)ctx;
    int i;
    for (i = 0; i < HTTP_MAX_RANGES; i++) free(h->r[i].buf);
    pthread_mutex_destroy(&h->mu);
    free(h->url);
    free(h);
}

typedef struct hdrs { char etag[256], lm[128]; } hdrs;
static size_t on_header(char *p, size_t sz, size_t n, void *u)
{
    hdrs *h = (hdrs *)u;
    size_t k = sz * n, m;
    char *dst = NULL;
    size_t cap = 0, skip = 0;
    if (k > 5 && strncasecmp(p, "ETag:", 5) == 0) { dst = h->etag; cap = sizeof h->etag; skip = 5; }
    else if (k > 14 && strncasecmp(p, "Last-Modified:", 14) == 0) { dst = h->lm; cap = sizeof h->lm; skip = 14; }
    if (dst) {
        while (skip < k && p[skip] == ' ') skip++;
        m = k - skip;
        while (m > 0 && (p[skip + m - 1] == '\r' || p[skip + m - 1] == '\n')) m--;
        if (m >= cap) m = cap - 1;
        memcpy(dst, p + skip, m); dst[m] = 0;
    }
    return k;
}

/* gpufeed_dataset_desc.open_source: HEAD for size and identity */
static int http_open(void *user, const char *url, gpufeed_source *src, char *identity, size_t icap, char *why, size_t wcap)
{
    const http_opts *o = (const http_opts *)user;
    http_src *h;
    hdrs hd;
    int attempt;
    curl_off_t size = -1;
    long status = 0;
    CURLcode rc = CURLE_OK;
    memset(&hd, 0, sizeof hd);
    for (attempt = 0; attempt < o->retries; attempt++) {
        CURL *c = curl_easy_init();
        if (!c) { snprintf(why, wcap, "curl_easy_init failed"); return 1; }
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
        curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(c, CURLOPT_HEADERDATA, &hd);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, o->timeout_s);
        rc = curl_easy_perform(c);
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        curl_easy_getinfo(c, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &size);
        curl_easy_cleanup(c);
        count(o, 1, 0, attempt > 0, 0);
        if (rc == CURLE_OK && status == 200 && size >= 0) break;
        if (rc == CURLE_OK && status >= 400 && status < 500) break;
        if (attempt + 1 < o->retries) sleep_ms(100L << attempt);
    }
    if (rc != CURLE_OK) { snprintf(why, wcap, "HEAD %s: %s", url, curl_easy_strerror(rc)); return 1; }
    if (status != 200 || size < 0) { snprintf(why, wcap, "HEAD %s: HTTP status %ld%s", url, status, size < 0 ? ", no Content-Length" : ""); return 1; }
    h = (http_src *)calloc(1, sizeof *h);
    if (!h) { snprintf(why, wcap, "out of memory"); return 1; }
    h->url = strdup(url); h->size = (uint64_t)size; h->o = o;
    pthread_mutex_init(&h->mu, NULL);
    memset(src, 0, sizeof *src);
    src->read_at = http_read_at; src->will_read = http_will_read; src->close = http_close;
    src->ctx = h; src->size = h->size;
    snprintf(identity, icap, "http size=%llu etag=%s last-modified=%s", (unsigned long long)size, hd.etag, hd.lm);
    return 0;
}

int main(int argc, char **argv)
{
    const char **paths = (const char **)calloc((size_t)argc, sizeof(char *));
    const char *cache_dir = NULL, *columns = NULL;
    long epochs = 2, batch = 1024, workers = 2, unit_rows = 65536;
    unsigned long long seed = 1;
    int npaths = 0, local = 0, print = 0, i, rc = 0;
    http_stats st;
    http_opts o;
    gpufeed_dataset_desc dd;
    gpufeed_loader_desc ld;
    gpufeed_cache_desc cd;
    gpufeed_feature ft[64];
    char *colbuf = NULL;
    gpufeed_dataset *ds = NULL;
    gpufeed_loader *l = NULL;
    gpufeed_error err;
    gpufeed_batch b;
    gpufeed_stats s;
    gpufeed_result r;
    unsigned long long open_requests, nb = 0, rows = 0;
    long e;

    memset(&st, 0, sizeof st);
    pthread_mutex_init(&st.mu, NULL);
    o.retries = 4; o.timeout_s = 30; o.st = &st;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--epochs") && v) { epochs = atol(v); i++; }
        else if (!strcmp(a, "--batch") && v) { batch = atol(v); i++; }
        else if (!strcmp(a, "--workers") && v) { workers = atol(v); i++; }
        else if (!strcmp(a, "--seed") && v) { seed = strtoull(v, NULL, 10); i++; }
        else if (!strcmp(a, "--unit-rows") && v) { unit_rows = atol(v); i++; }
        else if (!strcmp(a, "--cache") && v) { cache_dir = v; i++; }
        else if (!strcmp(a, "--columns") && v) { columns = v; i++; }
        else if (!strcmp(a, "--retries") && v) { o.retries = atoi(v); i++; }
        else if (!strcmp(a, "--timeout") && v) { o.timeout_s = atol(v); i++; }
        else if (!strcmp(a, "--print-batches")) print = 1;
        else if (!strcmp(a, "--local")) local = 1;
        else if (a[0] == '-') { fprintf(stderr, "http_source: unknown option %s (see the comment at the top of examples/http_source.c)\n", a); return 2; }
        else paths[npaths++] = a;
    }
    if (npaths == 0 || epochs < 1 || batch < 1 || workers < 1 || o.retries < 1 || o.timeout_s < 1) {
        fprintf(stderr, "usage: http_source [--epochs N] [--batch B] [--workers N] [--seed S] [--unit-rows N] [--cache DIR]\n"
                        "                   [--columns a,b] [--print-batches] [--retries N] [--timeout S] [--local] URL...\n");
        return 2;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    memset(&dd, 0, sizeof dd);
    dd.paths = paths; dd.num_paths = npaths; dd.unit_rows = unit_rows;
    if (!local) { dd.open_source = http_open; dd.source_user = &o; }
    if (columns) { /* comma-separated feature columns, as f32 */
        char *p, *save = NULL;
        int nf = 0;
        colbuf = strdup(columns);
        memset(ft, 0, sizeof ft);
        for (p = strtok_r(colbuf, ",", &save); p && nf < 64; p = strtok_r(NULL, ",", &save)) { ft[nf].column = p; ft[nf].dtype = GPUFEED_DT_F32; nf++; }
        dd.features = ft; dd.num_features = nf;
    }
    if (gpufeed_dataset_open(&ds, &dd, &err) != GPUFEED_OK) { fprintf(stderr, "http_source: %s\n", err.message); rc = 1; goto out; }
    open_requests = st.requests;
    memset(&ld, 0, sizeof ld);
    ld.batch_rows = batch; ld.workers = (int32_t)workers; ld.seed = seed; ld.shuffle_window = 2; ld.epochs = epochs;
    memset(&cd, 0, sizeof cd);
    if (cache_dir) { cd.dir = cache_dir; ld.cache = &cd; }
    if (gpufeed_loader_open(&l, ds, &ld, &err) != GPUFEED_OK) { fprintf(stderr, "http_source: %s\n", err.message); rc = 1; goto out; }
    while ((r = gpufeed_loader_next(l, &b)) == GPUFEED_OK) {
        if (print) printf("epoch %lld batch %lld rows %lld hash %016llx\n", (long long)b.epoch, (long long)b.index,
                          (long long)b.num_rows, (unsigned long long)gpufeed_batch_hash(ds, &b));
        nb++; rows += (unsigned long long)b.num_rows;
    }
    if (r != GPUFEED_DONE) { fprintf(stderr, "http_source: %s\n", gpufeed_loader_error(l)); rc = 1; }
    for (e = 0; e < epochs && e < 64; e++)
        printf("epoch %ld: source bytes read %llu\n", e, (unsigned long long)gpufeed_loader_epoch_bytes(l, e));
    gpufeed_loader_stats(l, &s);
    printf("%llu batches, %llu rows; cache %s\n", nb, rows,
           s.cache_state == GPUFEED_CACHE_READY ? "ready" : s.cache_state == GPUFEED_CACHE_BUILDING ? "building" : "off");
    printf("http: %llu requests while opening, %llu while delivering epochs; %llu bytes; %llu retries; %llu failed; %llu reads served from prefetched ranges\n",
           open_requests, st.requests - open_requests, st.bytes, st.retries, st.failures, st.prefetched_reads);
    printf("verdict: %s\n", s.verdict);
out:
    if (l) gpufeed_loader_close(l);
    if (ds) gpufeed_dataset_close(ds);
    curl_global_cleanup();
    free(colbuf);
    free((void *)paths);
    return rc;
}
