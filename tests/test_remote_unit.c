/* The >>remote section's pure parts, without a network or libcurl (the
   quick suite): range coalescing and splitting, glob matching and hidden
   keys, SigV4 URL encoding, path-style and virtual-hosted URLs,
   ListObjectsV2 requests and pages (hostile XML too), the checks of a
   response's Content-Range, byte count and ETag, header parsing.

   cc -std=c99 -DGPUFEED_CURL -I. tests/test_remote_unit.c -o build/test_remote_unit -lpthread -lm -ldl */
#define GPUFEED_IMPLEMENTATION
#define GPUFEED_STATIC
#define GPUFEED_CURL
#include "gpufeed.h"
#include "gf_test.h"
#include <stdlib.h>

static void test_coalesce(void)
{
    uint64_t o[6] = { 5000, 100, 300, 1000, 250, 900000 }, l[6] = { 100, 100, 100, 100, 60, 10 };
    int32_t n = gf__rcoalesce(o, l, 6, 1u << 20);
    /* sorted; 100+100 and 250+60 overlap/touch the next; a gap never adds more than the wanted bytes */
    CHECK_MSG(n == 4, "%d ranges", n);
    CHECK(o[0] == 100 && l[0] == 300);                   /* 100-200, 250-310, 300-400: gaps 50 <= 100 wanted */
    CHECK(o[1] == 1000 && l[1] == 100);                  /* gap 600 > 360 wanted so far */
    CHECK(o[2] == 5000 && l[2] == 100);
    CHECK(o[3] == 900000 && l[3] == 10);
    {
        uint64_t a[3] = { 0, 200, 400 }, b[3] = { 100, 100, 100 };
        CHECK(gf__rcoalesce(a, b, 3, 0) == 3);            /* gap 0: only touching ranges merge */
        a[1] = 100;
        CHECK(gf__rcoalesce(a, b, 3, 0) == 2 && b[0] == 200);
    }
    {
        uint64_t a[2] = { 0, 250 }, b[2] = { 100, 100 };  /* a gap of 150 after 100 wanted bytes: apart */
        CHECK(gf__rcoalesce(a, b, 2, 1u << 20) == 2);
        a[1] = 200;                                      /* a gap of 100: merged */
        CHECK(gf__rcoalesce(a, b, 2, 1u << 20) == 1 && b[0] == 300);
    }
    {
        uint64_t a[2] = { 0, 10 }, b[2] = { 0, 0 };
        CHECK(gf__rcoalesce(a, b, 2, 100) == 0);          /* empty ranges vanish */
    }
}

static void test_split(void)
{
    uint64_t o = 1000, l = 25, po[8], pl[8];
    int32_t n = gf__rsplit(&o, &l, 1, 10, po, pl, 8), i;
    uint64_t sum = 0;
    CHECK(n == 3);
    for (i = 0; i < n; i++) {
        CHECK(pl[i] <= 10 && pl[i] >= 7);                 /* near-equal parts: 9, 9, 7 */
        CHECK(po[i] == 1000 + sum);
        sum += pl[i];
    }
    CHECK(sum == 25);
    CHECK(gf__rsplit(&o, &l, 1, 1, po, pl, 8) == -1);     /* 25 parts do not fit in 8 */
}

static void test_glob(void)
{
    CHECK(gf__rglob("data/*.parquet", "data/a.parquet", 1));
    CHECK(!gf__rglob("data/*.parquet", "data/x/a.parquet", 1)); /* '*' stays within a segment */
    CHECK(gf__rglob("data/**/*.parquet", "data/a.parquet", 1));  /* '**' matches no segment too */
    CHECK(gf__rglob("data/**/*.parquet", "data/year=2024/month=1/a.parquet", 1));
    CHECK(!gf__rglob("data/**/*.parquet", "other/a.parquet", 1));
    CHECK(gf__rglob("y=202[34]/?.parquet", "y=2024/a.parquet", 1));
    CHECK(!gf__rglob("y=202[!34]/?.parquet", "y=2024/a.parquet", 1));
    CHECK(gf__rglob("y=202[0-9]/*", "y=2025/b", 1));
    CHECK(!gf__rglob("a?c", "a/c", 1));                   /* '?' is not '/' */
    CHECK(gf__rglob("a[b", "a[b", 1));                    /* no ']': a literal '[' */
    CHECK(gf__rglob("t/**", "t/x/y/z", 1));
    CHECK(!gf__rglob("t/**", "u/x", 1));
    CHECK(gf__rglob("a**b", "axxb", 1));                  /* '**' inside a segment: '*' */
    CHECK(!gf__rglob("a**b", "ax/xb", 1));
    CHECK(gf__rhidden("_SUCCESS") && gf__rhidden("x/.crc") && gf__rhidden("_tmp/a.parquet") && gf__rhidden("a/_c/b"));
    CHECK(!gf__rhidden("year=2024/part_0.parquet") && !gf__rhidden("a.b/c"));
}

static void test_urls(void)
{
    char out[512], b[64], k[256];
    size_t n = 0;
    CHECK(gf__uri_encode(out, sizeof out, &n, "year=2024/a b+c~_.-", 1) == 0);
    CHECK_HAS(out, "year%3D2024/a%20b%2Bc~_.-");
    n = 0;
    CHECK(gf__uri_encode(out, sizeof out, &n, "a/b", 0) == 0 && strcmp(out, "a%2Fb") == 0);
    n = 0;
    CHECK(gf__uri_encode(out, 3, &n, "abc", 0) == -1);    /* does not fit */
    CHECK(gf__s3_split("s3://bkt/dir/x.parquet", b, sizeof b, k, sizeof k) == 0 && !strcmp(b, "bkt") && !strcmp(k, "dir/x.parquet"));
    CHECK(gf__s3_split("s3://bkt", b, sizeof b, k, sizeof k) == 0 && !strcmp(b, "bkt") && !k[0]);
    CHECK(gf__s3_split("s3:///x", b, sizeof b, k, sizeof k) == -1);
    CHECK(gf__s3_url("http://127.0.0.1:9000", "us-east-1", "bkt", "y=1/a b.parquet", out, sizeof out) == 0);
    CHECK_MSG(!strcmp(out, "http://127.0.0.1:9000/bkt/y%3D1/a%20b.parquet"), "%s", out);
    CHECK(gf__s3_url(NULL, "eu-west-1", "bkt", "k", out, sizeof out) == 0 && !strcmp(out, "https://bkt.s3.eu-west-1.amazonaws.com/k"));
    CHECK(gf__s3_url(NULL, "eu-west-1", "my.bkt", "k", out, sizeof out) == 0 && !strcmp(out, "https://s3.eu-west-1.amazonaws.com/my.bkt/k"));
    CHECK(gf__s3_url(NULL, "eu-west-1", "bkt", "k", out, 20) == -1);
    /* query parameters sorted by name (SigV4's canonical order), values encoded */
    CHECK(gf__s3_list_url("http://h:1", "r", "bkt", "a/b=", "t+/=", out, sizeof out) == 0);
    CHECK_MSG(!strcmp(out, "http://h:1/bkt?continuation-token=t%2B%2F%3D&encoding-type=url&list-type=2&prefix=a%2Fb%3D"), "%s", out);
    CHECK(gf__s3_list_url(NULL, "r", "bkt", "", NULL, out, sizeof out) == 0);
    CHECK_MSG(!strcmp(out, "https://bkt.s3.r.amazonaws.com/?encoding-type=url&list-type=2&prefix="), "%s", out);
}

static void test_decode(void)
{
    char out[64];
    CHECK(gf__rdecode("year%3D2024/a+b%2Bc", 19, 1, out, sizeof out) == 0 && !strcmp(out, "year=2024/a b+c"));
    CHECK(gf__rdecode("&quot;abc&quot;&amp;&#65;&#x42;", 31, 0, out, sizeof out) == 0 && !strcmp(out, "\"abc\"&AB"));
    CHECK(gf__rdecode("bad%4", 5, 1, out, sizeof out) == -1);       /* a cut escape */
    CHECK(gf__rdecode("bad%zz", 6, 1, out, sizeof out) == -1);
    CHECK(gf__rdecode("nul%00", 6, 1, out, sizeof out) == -1);      /* no NUL in a key */
    CHECK(gf__rdecode("&bogus;", 7, 0, out, sizeof out) == -1);
    CHECK(gf__rdecode("&#99999999999;", 14, 0, out, sizeof out) == -1);
    CHECK(gf__rdecode("&#65", 4, 0, out, sizeof out) == -1);        /* no ';' */
    CHECK(gf__rdecode("abcdef", 6, 0, out, 4) == -1);               /* does not fit */
}

static void test_numbers(void)
{
    uint64_t a, b, t;
    CHECK(gf__parse_u64("18446744073709551615", 20, &a) == 0 && a == UINT64_MAX);
    CHECK(gf__parse_u64("18446744073709551616", 20, &a) == -1);     /* overflow */
    CHECK(gf__parse_u64("", 0, &a) == -1 && gf__parse_u64("-1", 2, &a) == -1 && gf__parse_u64("1 ", 2, &a) == -1);
    CHECK(gf__parse_crange("bytes 0-99/1000", 15, &a, &b, &t) == 0 && a == 0 && b == 99 && t == 1000);
    CHECK(gf__parse_crange("bytes 5-9/*", 11, &a, &b, &t) == 0 && t == UINT64_MAX);
    CHECK(gf__parse_crange("bytes 9-5/100", 13, &a, &b, &t) == -1); /* end before start */
    CHECK(gf__parse_crange("bytes 0-99/99", 13, &a, &b, &t) == -1); /* past the total */
    CHECK(gf__parse_crange("bytes 0-99999999999999999999/1", 30, &a, &b, &t) == -1);
    CHECK(gf__parse_crange("items 0-1/2", 11, &a, &b, &t) == -1);
}

static int list_page(const char *xml, gf__rkeys *out, char **token, char *why, size_t cap)
{
    gf__rmatch m;
    gpufeed_allocator al;
    memset(&m, 0, sizeof m);
    memset(&al, 0, sizeof al);
    m.base = 5; /* prefix "data/" */
    return gf__rlist_page(&al, xml, strlen(xml), &m, out, token, why, cap);
}

static void test_listing(void)
{
    gpufeed_allocator al;
    gf__rkeys k;
    char *tok = NULL, why[256];
    const char *good =
        "<?xml version=\"1.0\"?><ListBucketResult><IsTruncated>true</IsTruncated>"
        "<Contents><Key>data/year%3D2024/a+b.parquet</Key><Size>10</Size><ETag>&quot;e1&quot;</ETag></Contents>"
        "<Contents><Key>data/_SUCCESS</Key><Size>0</Size></Contents>"
        "<Contents><Key>data/x/.crc</Key><Size>3</Size></Contents>"
        "<Contents><Key>data/notes.txt</Key><Size>3</Size></Contents>"
        "<Contents><Key>data/dir/</Key><Size>0</Size></Contents>"
        "<Contents><Key>data/b.parquet</Key><Size>7</Size></Contents>"
        "<NextContinuationToken>tok&amp;1</NextContinuationToken></ListBucketResult>";
    memset(&al, 0, sizeof al);
    memset(&k, 0, sizeof k);
    CHECK(list_page(good, &k, &tok, why, sizeof why) == 0);
    CHECK_MSG(k.n == 2, "%d keys", k.n);
    CHECK(k.n == 2 && !strcmp(k.v[0], "data/year=2024/a b.parquet") && !strcmp(k.v[1], "data/b.parquet"));
    CHECK(tok && !strcmp(tok, "tok&1"));
    gf__free(&al, tok);
    gf__rkeys_free(&al, &k);
    /* the last page: no token */
    CHECK(list_page("<IsTruncated>false</IsTruncated><Contents><Key>data/c.parquet</Key><Size>1</Size></Contents>", &k, &tok, why, sizeof why) == 0);
    CHECK(k.n == 1 && tok == NULL);
    gf__rkeys_free(&al, &k);
    /* hostile pages: clear errors, never a crash */
    CHECK(list_page("<Contents><Key>data/a.parquet</Key><Size>1</Size>", &k, &tok, why, sizeof why) == -1);
    CHECK_HAS(why, "not closed");
    CHECK(list_page("<Contents><Size>1</Size></Contents>", &k, &tok, why, sizeof why) == -1);
    CHECK_HAS(why, "without a proper Key and Size");
    CHECK(list_page("<Contents><Key>data/a.parquet</Key><Size>99999999999999999999999</Size></Contents>", &k, &tok, why, sizeof why) == -1);
    CHECK(list_page("<Contents><Key>data/a%zz.parquet</Key><Size>1</Size></Contents>", &k, &tok, why, sizeof why) == -1);
    CHECK(list_page("<IsTruncated>true</IsTruncated>", &k, &tok, why, sizeof why) == -1);
    CHECK_HAS(why, "NextContinuationToken");
    CHECK(list_page("<IsTruncated>true</IsTruncated><NextContinuationToken></NextContinuationToken>", &k, &tok, why, sizeof why) == -1);
    CHECK(list_page("<Contents><Key>data/a.parquet</Key><Size>1</Contents", &k, &tok, why, sizeof why) == -1);
    CHECK(list_page("", &k, &tok, why, sizeof why) == 0 && k.n == 0);
    CHECK(list_page("<<<<<<>>>>>></Contents><Contents>", &k, &tok, why, sizeof why) == -1);
    gf__rkeys_free(&al, &k);
}

static void test_glob_match_keys(void)
{
    gf__rmatch m;
    memset(&m, 0, sizeof m);
    m.glob = "hive/year=*/**/*.parquet";
    m.base = 5;
    CHECK(gf__rmatch_key(&m, "hive/year=2024/month=1/p.parquet"));
    CHECK(!gf__rmatch_key(&m, "hive/year=2024/_tmp/p.parquet"));  /* hidden below the glob's directory */
    CHECK(!gf__rmatch_key(&m, "hive/year=2024/month=1/p.csv"));
    m.glob = NULL;
    CHECK(gf__rmatch_key(&m, "hive/a.parquet") && !gf__rmatch_key(&m, "hive/a.parquet.crc") && !gf__rmatch_key(&m, "hive/"));
}

static void test_headers(void)
{
    gf__rreq q;
    char line[128];
    memset(&q, 0, sizeof q);
    strcpy(line, "HTTP/1.1 206 Partial Content\r\n");
    gf__rq_header(line, 1, strlen(line), &q);
    CHECK(q.hstatus == 206);
    strcpy(line, "Content-Range: bytes 10-19/100\r\n");
    gf__rq_header(line, 1, strlen(line), &q);
    CHECK(q.has_cr == 1 && q.cr_a == 10 && q.cr_b == 19 && q.cr_total == 100);
    strcpy(line, "ETAG: W/\"abc\"\r\n");
    gf__rq_header(line, 1, strlen(line), &q);
    CHECK(!strcmp(q.etag_got, "abc"));
    strcpy(line, "content-length: 1x\r\n");
    gf__rq_header(line, 1, strlen(line), &q);
    CHECK(q.has_cl == -1);
    strcpy(line, "Content-Range: bytes 19-10/100\r\n");
    gf__rq_header(line, 1, strlen(line), &q);
    CHECK(q.has_cr == -1);
    strcpy(line, "HTTP/1.1 200 OK\r\n");                  /* a new response forgets the last one's headers */
    gf__rq_header(line, 1, strlen(line), &q);
    CHECK(q.hstatus == 200 && q.has_cr == 0 && q.has_cl == 0 && !q.etag_got[0]);
}

/* a ranged GET's answer against the request: the checks of gf__rq_check_get */
static void test_response_checks(void)
{
    gf__rreq q;
    char why[256];
    uint8_t buf[10];
    memset(&q, 0, sizeof q);
    q.kind = GF__RQ_GET;
    q.off = 10;
    q.len = 10;
    q.size = 100;
    q.etag = "e1";
    q.dst = buf;
    q.cap = q.dcap = 10;
    q.status = 206;
    q.has_cr = 1;
    q.cr_a = 10;
    q.cr_b = 19;
    q.cr_total = 100;
    q.got = 10;
    strcpy(q.etag_got, "e1");
    CHECK(gf__rq_check_get(&q, why, sizeof why) == 0);
    q.cr_total = 101;                                      /* the object grew: changed */
    CHECK(gf__rq_check_get(&q, why, sizeof why) == -1);
    CHECK_HAS(why, "changed");
    q.cr_total = 100;
    q.cr_a = 0;                                            /* another range than asked */
    CHECK(gf__rq_check_get(&q, why, sizeof why) == -1);
    CHECK_HAS(why, "answered bytes 0-19");
    q.cr_a = 10;
    strcpy(q.etag_got, "e2");                              /* a new version mid-read */
    CHECK(gf__rq_check_get(&q, why, sizeof why) == -1);
    CHECK_HAS(why, "ETag e2, was e1");
    strcpy(q.etag_got, "e1");
    q.got = 7;                                             /* a short body: retried */
    CHECK(gf__rq_check_get(&q, why, sizeof why) == 1);
    CHECK_HAS(why, "short body: 7 of 10");
    q.got = 10;
    q.has_cr = 0;                                          /* 200 with the whole object for a range */
    q.status = 200;
    CHECK(gf__rq_check_get(&q, why, sizeof why) == -1);
    CHECK_HAS(why, "ignored the Range header");
    q.has_cr = -1;
    CHECK(gf__rq_check_get(&q, why, sizeof why) == -1);
    /* the body callback refuses more than asked (a lying server) */
    q.got = 8;
    q.hstatus = 206;
    CHECK(gf__rq_body((char *)"abcdef", 1, 6, &q) == 0 && q.overflow == 1);
    /* a suffix GET: the size from Content-Range; an inconsistent one refused */
    memset(&q, 0, sizeof q);
    q.kind = GF__RQ_TAIL;
    q.has_cr = 1;
    q.cr_a = 90;
    q.cr_b = 99;
    q.cr_total = 100;
    q.got = 10;
    CHECK(gf__rq_check_size(&q, why, sizeof why) == 0 && q.size == 100 && q.off == 90 && q.len == 10);
    q.cr_total = 200;
    CHECK(gf__rq_check_size(&q, why, sizeof why) == -1);
    q.has_cr = 0;
    q.has_cl = 1;
    q.cl = 12;
    CHECK(gf__rq_check_size(&q, why, sizeof why) == 1);     /* Content-Length 12, 10 bytes came */
}

int main(void)
{
    RUN(test_coalesce);
    RUN(test_split);
    RUN(test_glob);
    RUN(test_urls);
    RUN(test_decode);
    RUN(test_numbers);
    RUN(test_listing);
    RUN(test_glob_match_keys);
    RUN(test_headers);
    RUN(test_response_checks);
    return TEST_SUMMARY();
}
