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

static int list_page_st(const char *xml, gf__rlstate *st, gf__rkeys *out, char **token, char *why, size_t cap)
{
    gf__rmatch m;
    gpufeed_allocator al;
    memset(&m, 0, sizeof m);
    memset(&al, 0, sizeof al);
    m.base = 5; /* prefix "data/" */
    return gf__rlist_page(&al, xml, strlen(xml), &m, st, out, token, why, cap);
}

static int list_page(const char *xml, gf__rkeys *out, char **token, char *why, size_t cap)
{
    gf__rlstate st;
    gpufeed_allocator al;
    int r;
    memset(&st, 0, sizeof st);
    memset(&al, 0, sizeof al);
    st.prefix = "data/";
    r = list_page_st(xml, &st, out, token, why, cap);
    gf__rlstate_free(&al, &st);
    return r;
}

#define LBR "<?xml version=\"1.0\"?>\n<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
#define LEND "</ListBucketResult>\n"
#define ENTRY(k) "<Contents><Key>" k "</Key><Size>10</Size></Contents>"

static void test_listing(void)
{
    gpufeed_allocator al;
    gf__rkeys k;
    char *tok = NULL, why[256];
    const char *good = LBR "<IsTruncated>true</IsTruncated><EncodingType>url</EncodingType>"
        "<Contents><Key>data/b.parquet</Key><Size>7</Size><LastModified>2026-11-28T10:00:00.120Z</LastModified></Contents>"
        "<Contents><Key>data/dir/</Key><Size>0</Size></Contents>"
        "<Contents><Key>data/notes.txt</Key><Size>3</Size></Contents>"
        "<Contents><Key>data/x/.crc</Key><Size>3</Size></Contents>"
        "<Contents><Key>data/year%3D2024/a+b.parquet</Key><Size>10</Size><ETag>&quot;e1&quot;</ETag></Contents>"
        "<Contents><Key>data/~_SUCCESS</Key><Size>0</Size></Contents>"
        "<KeyCount>6</KeyCount><NextContinuationToken>tok&amp;1</NextContinuationToken>" LEND;
    memset(&al, 0, sizeof al);
    memset(&k, 0, sizeof k);
    CHECK_MSG(list_page(good, &k, &tok, why, sizeof why) == 0, "%s", why);
    CHECK_MSG(k.n == 2, "%d keys", k.n);
    CHECK(k.n == 2 && !strcmp(k.v[0], "data/b.parquet") && !strcmp(k.v[1], "data/year=2024/a b.parquet"));
    CHECK(k.n == 2 && k.size[0] == 7 && k.mtime[0] == 1795860000 && !k.etag[0][0] && !strcmp(k.etag[1], "e1") && k.mtime[1] == -1);
    CHECK(tok && !strcmp(tok, "tok&1"));
    gf__free(&al, tok);
    gf__rkeys_free(&al, &k);
    /* the last page: no token */
    CHECK(list_page(LBR "<IsTruncated>false</IsTruncated>" ENTRY("data/c.parquet") LEND, &k, &tok, why, sizeof why) == 0);
    CHECK(k.n == 1 && tok == NULL);
    gf__rkeys_free(&al, &k);
    /* hostile pages: clear errors, never a crash */
    CHECK(list_page(LBR "<IsTruncated>false</IsTruncated><Contents><Key>data/a.parquet</Key><Size>1</Size>" LEND, &k, &tok, why, sizeof why) == -1);
    CHECK_HAS(why, "not closed");
    CHECK(list_page(LBR "<IsTruncated>false</IsTruncated><Contents><Size>1</Size></Contents>" LEND, &k, &tok, why, sizeof why) == -1);
    CHECK_HAS(why, "without a proper Key and Size");
    CHECK(list_page(LBR "<IsTruncated>false</IsTruncated><Contents><Key>data/a.parquet</Key><Size>99999999999999999999999</Size></Contents>" LEND,
                    &k, &tok, why, sizeof why) == -1);
    CHECK(list_page(LBR "<IsTruncated>false</IsTruncated><EncodingType>url</EncodingType>" ENTRY("data/a%zz.parquet") LEND, &k, &tok, why, sizeof why) == -1);
    CHECK(list_page(LBR "<IsTruncated>true</IsTruncated>" LEND, &k, &tok, why, sizeof why) == -1);
    CHECK_HAS(why, "NextContinuationToken");
    CHECK(list_page(LBR "<IsTruncated>true</IsTruncated><NextContinuationToken></NextContinuationToken>" LEND, &k, &tok, why, sizeof why) == -1);
    CHECK(list_page("", &k, &tok, why, sizeof why) == -1);
    CHECK_HAS(why, "not a <ListBucketResult> document");
    CHECK(list_page("<<<<<<>>>>>></Contents><Contents>", &k, &tok, why, sizeof why) == -1);
    /* a page cut right after a </Contents>: no closing root element */
    CHECK(list_page(LBR "<IsTruncated>false</IsTruncated>" ENTRY("data/a.parquet") ENTRY("data/b.parquet"), &k, &tok, why, sizeof why) == -1);
    CHECK_HAS(why, "cut short");
    /* no IsTruncated at all, or a wrong value */
    CHECK(list_page(LBR ENTRY("data/a.parquet") LEND, &k, &tok, why, sizeof why) == -1);
    CHECK_HAS(why, "no IsTruncated");
    CHECK(list_page(LBR "<IsTruncated>maybe</IsTruncated>" LEND, &k, &tok, why, sizeof why) == -1);
    /* HTML, garbage, an error document */
    CHECK(list_page("<!DOCTYPE html><html><body>Login</body></html>", &k, &tok, why, sizeof why) == -1);
    CHECK_HAS(why, "it starts with '<!DOCTYPE html>");
    CHECK(list_page("\x01\x02garbage\xff", &k, &tok, why, sizeof why) == -1);
    CHECK(list_page("<?xml version=\"1.0\"?><Error><Code>x</Code></Error>", &k, &tok, why, sizeof why) == -1);
    /* duplicate keys, keys out of order, a key outside the prefix, KeyCount against the entries */
    CHECK(list_page(LBR "<IsTruncated>false</IsTruncated>" ENTRY("data/a.parquet") ENTRY("data/a.parquet") LEND, &k, &tok, why, sizeof why) == -1);
    CHECK_HAS(why, "listed twice");
    CHECK(list_page(LBR "<IsTruncated>false</IsTruncated>" ENTRY("data/b.parquet") ENTRY("data/a.parquet") LEND, &k, &tok, why, sizeof why) == -1);
    CHECK_HAS(why, "out of order");
    CHECK(list_page(LBR "<IsTruncated>false</IsTruncated>" ENTRY("other/a.parquet") LEND, &k, &tok, why, sizeof why) == -1);
    CHECK_HAS(why, "outside the prefix");
    CHECK(list_page(LBR "<IsTruncated>false</IsTruncated>" ENTRY("data/a.parquet") "<KeyCount>2</KeyCount>" LEND, &k, &tok, why, sizeof why) == -1);
    CHECK_HAS(why, "KeyCount says 2");
    CHECK(list_page(LBR "<IsTruncated>false</IsTruncated><Contents><Key>data/a.parquet</Key><Size>1</Size><LastModified>yesterday</LastModified>"
                    "</Contents>" LEND, &k, &tok, why, sizeof why) == -1);
    gf__rkeys_free(&al, &k);
}

/* a listing's pages checked against each other: duplicates across pages,
   alternating and always-new continuation tokens */
static void test_listing_pages(void)
{
    gpufeed_allocator al;
    gf__rkeys k;
    gf__rlstate st;
    char *tok = NULL, why[256];
    int i, r = 0;
    memset(&al, 0, sizeof al);
    memset(&k, 0, sizeof k);
    memset(&st, 0, sizeof st);
    st.prefix = "data/";
    CHECK(list_page_st(LBR "<IsTruncated>true</IsTruncated>" ENTRY("data/a.parquet") "<NextContinuationToken>A</NextContinuationToken>" LEND,
                       &st, &k, &tok, why, sizeof why) == 0 && tok && !strcmp(tok, "A"));
    gf__free(&al, tok);
    /* the next page repeats the last key: a duplicate across pages */
    CHECK(list_page_st(LBR "<IsTruncated>true</IsTruncated>" ENTRY("data/a.parquet") "<NextContinuationToken>B</NextContinuationToken>" LEND,
                       &st, &k, &tok, why, sizeof why) == -1);
    CHECK_HAS(why, "listed twice");
    gf__rlstate_free(&al, &st);
    gf__rkeys_free(&al, &k);
    /* alternating tokens A, B, A: the third page's token was seen */
    memset(&st, 0, sizeof st);
    st.prefix = "data/";
    CHECK(list_page_st(LBR "<IsTruncated>true</IsTruncated>" ENTRY("data/a.parquet") "<NextContinuationToken>A</NextContinuationToken>" LEND, &st,
                       &k, &tok, why, sizeof why) == 0);
    gf__free(&al, tok);
    CHECK(list_page_st(LBR "<IsTruncated>true</IsTruncated>" ENTRY("data/b.parquet") "<NextContinuationToken>B</NextContinuationToken>" LEND, &st,
                       &k, &tok, why, sizeof why) == 0);
    gf__free(&al, tok);
    CHECK(list_page_st(LBR "<IsTruncated>true</IsTruncated>" ENTRY("data/c.parquet") "<NextContinuationToken>A</NextContinuationToken>" LEND, &st,
                       &k, &tok, why, sizeof why) == -1 && tok == NULL);
    CHECK_HAS(why, "seen before");
    gf__rlstate_free(&al, &st);
    gf__rkeys_free(&al, &k);
    /* always-new tokens with empty pages: stopped by the page cap (8 + the keys listed) */
    memset(&st, 0, sizeof st);
    st.prefix = "data/";
    for (i = 0; i < 100 && r == 0; i++) {
        char page[300];
        snprintf(page, sizeof page, LBR "<IsTruncated>true</IsTruncated><NextContinuationToken>t%d</NextContinuationToken>" LEND, i);
        r = list_page_st(page, &st, &k, &tok, why, sizeof why);
        gf__free(&al, tok);
        tok = NULL;
    }
    CHECK_MSG(r == -1 && i == 9, "stopped at page %d", i);
    CHECK_HAS(why, "does not advance");
    gf__rlstate_free(&al, &st);
    gf__rkeys_free(&al, &k);
    /* many tokens: the seen-set grows (hash collisions impossible to confuse) */
    memset(&st, 0, sizeof st);
    for (i = 0; i < 5000; i++) {
        char t[32];
        snprintf(t, sizeof t, "token-%d", i);
        if (gf__rlstate_token(&al, &st, t) != 1) break;
    }
    CHECK(i == 5000 && gf__rlstate_token(&al, &st, "token-17") == 0 && gf__rlstate_token(&al, &st, "token-5000") == 1);
    gf__rlstate_free(&al, &st);
}

static void test_xml_whole(void)
{
    char why[200];
    CHECK(gf__xml_whole("<A></A>", 7, "A", why, sizeof why) == 0);
    CHECK(gf__xml_whole(" \n<?xml version=\"1.0\"?>\n<A x=\"1\">t</A>\r\n", 39, "A", why, sizeof why) == 0);
    CHECK(gf__xml_whole("<AB></AB>", 9, "A", why, sizeof why) == -1);
    CHECK(gf__xml_whole("<A>", 3, "A", why, sizeof why) == -1);
    CHECK(gf__xml_whole("<?xml version", 13, "A", why, sizeof why) == -1);
    CHECK_HAS(why, "cut XML declaration");
    CHECK(gf__xml_whole("<A></A><B/>", 11, "A", why, sizeof why) == -1);
}

static void test_times(void)
{
    int64_t t = 0;
    char d[40];
    CHECK(gf__iso8601("1970-01-01T00:00:00Z", 20, &t) == 0 && t == 0);
    CHECK(gf__iso8601("2026-11-28T10:00:00.120Z", 24, &t) == 0 && t == 1795860000);
    CHECK(gf__iso8601("2026-11-28T11:00:00+01:00", 25, &t) == 0 && t == 1795860000);
    CHECK(gf__iso8601("2000-02-29T00:00:00", 19, &t) == 0 && t == 951782400);
    CHECK(gf__iso8601("2026-13-01T00:00:00Z", 20, &t) == -1);
    CHECK(gf__iso8601("2026-11-28T10:00:00Zjunk", 24, &t) == -1);
    CHECK(gf__iso8601("2026-11-28", 10, &t) == -1);
    CHECK(gf__http_date("Sat, 28 Nov 2026 10:00:00 GMT", 29, &t) == 0 && t == 1795860000);
    CHECK(gf__http_date("Sat, 28 Nov 2026 10:00:00 UTC", 29, &t) == -1);
    CHECK(gf__http_date("Sat, 28 Foo 2026 10:00:00 GMT", 29, &t) == -1);
    gf__http_date_fmt(1795860000, d, sizeof d);
    CHECK_MSG(!strcmp(d, "Sat, 28 Nov 2026 10:00:00 GMT"), "%s", d);
    gf__http_date_fmt(951782400, d, sizeof d);
    CHECK_MSG(!strcmp(d, "Tue, 29 Feb 2000 00:00:00 GMT"), "%s", d);
    /* refresh times: 5 minutes before, or half the life of short ones */
    CHECK(gf__cred_refresh_at(1000, 0) == 0);
    CHECK(gf__cred_refresh_at(1000, 1000 + 3600) == 1000 + 3600 - 300);
    CHECK(gf__cred_refresh_at(1000, 1004) == 1002);
}

static void test_ini(void)
{
    const char *s = "# comment\n[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key=secret0\n\n"
                    "[profile  dev]\nregion = eu-west-1\ns3 =\n  addressing_style = path\n; another\nAWS_ACCESS_KEY_ID = AKIDDEV  \r\n"
                    "[broken\nregion = x\n[dev]\nregion = us-west-2\n";
    char v[64];
    size_t n = strlen(s);
    CHECK(gf__ini_get(s, n, "default", "aws_access_key_id", v, sizeof v) == 1 && !strcmp(v, "AKIDDEFAULT"));
    CHECK(gf__ini_get(s, n, "default", "aws_secret_access_key", v, sizeof v) == 1 && !strcmp(v, "secret0"));
    CHECK(gf__ini_get(s, n, "profile dev", "region", v, sizeof v) == 1 && !strcmp(v, "eu-west-1"));
    CHECK(gf__ini_get(s, n, "profile dev", "aws_access_key_id", v, sizeof v) == 1 && !strcmp(v, "AKIDDEV")); /* keys in any case */
    CHECK(gf__ini_get(s, n, "profile dev", "addressing_style", v, sizeof v) == 0);                       /* nested: not a setting */
    CHECK(gf__ini_get(s, n, "dev", "region", v, sizeof v) == 1 && !strcmp(v, "us-west-2"));
    CHECK(gf__ini_get(s, n, "nope", NULL, NULL, 0) == 0 && gf__ini_get(s, n, "profile dev", NULL, NULL, 0) == 1);
    CHECK(gf__ini_get(s, n, "default", "aws_access_key_id", v, 4) == -1);                                /* does not fit */
}

static void test_json(void)
{
    const char *s = "{\"Version\": 1, \"AccessKeyId\":\"AKID\\u0041\", \"Nested\": {\"a\": [1, 2, {\"b\": null}]},\n"
                    "\"SecretAccessKey\": \"s\\\"e\\\\c\\/r\\n\", \"Expiration\": \"2026-11-28T10:00:00Z\", \"Flag\": true, \"Snow\": \"\\u2603\\ud83d\\ude00\"}";
    char v[64];
    size_t n = strlen(s);
    CHECK(gf__json_get(s, n, "Version", v, sizeof v) == 2 && !strcmp(v, "1"));
    CHECK(gf__json_get(s, n, "AccessKeyId", v, sizeof v) == 1 && !strcmp(v, "AKIDA"));
    CHECK(gf__json_get(s, n, "SecretAccessKey", v, sizeof v) == 1 && !strcmp(v, "s\"e\\c/r\n"));
    CHECK(gf__json_get(s, n, "Flag", v, sizeof v) == 2 && !strcmp(v, "true"));
    CHECK(gf__json_get(s, n, "Snow", v, sizeof v) == 1 && !strcmp(v, "\xe2\x98\x83\xf0\x9f\x98\x80"));
    CHECK(gf__json_get(s, n, "Missing", v, sizeof v) == 0);
    CHECK(gf__json_get(s, n, "Nested", v, sizeof v) == 0);                       /* not a scalar */
    CHECK(gf__json_get(s, n, "AccessKeyId", v, 3) == -1);                        /* does not fit */
    CHECK(gf__json_get("{\"a\": \"x\"", 9, "a", v, sizeof v) == -1);              /* cut */
    CHECK(gf__json_get("{\"a\": \"x\"} junk", 15, "a", v, sizeof v) == -1);      /* trailing garbage */
    CHECK(gf__json_get("{\"a\": 01x}", 10, "a", v, sizeof v) == -1);
    CHECK(gf__json_get("{\"a\": \"\\ud800\"}", 15, "a", v, sizeof v) == -1);     /* a lone surrogate */
    CHECK(gf__json_get("{\"a\": \"\x01\"}", 10, "a", v, sizeof v) == -1);        /* a control character */
    CHECK(gf__json_get("[1]", 3, "a", v, sizeof v) == -1);
    {
        char deep[80];
        memset(deep, '[', 40);
        memset(deep + 40, ']', 40);
        CHECK(gf__json_get("{\"a\": 1, \"b\": [[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}", 56, "a", v, sizeof v) == -1); /* too deep */
        (void)deep;
    }
}

static void test_redirects(void)
{
    char out[300], why[200];
    CHECK(gf__redirect_ok("http://127.0.0.1:9000/bkt/k", "/bkt/k?x=1", 0, out, sizeof out, why, sizeof why) == 0 &&
          !strcmp(out, "http://127.0.0.1:9000/bkt/k?x=1"));
    CHECK(gf__redirect_ok("http://127.0.0.1:9000/bkt/k", "http://127.0.0.1:9000/bkt/k2", 0, out, sizeof out, why, sizeof why) == 0);
    CHECK(gf__redirect_ok("http://127.0.0.1:9000/bkt/k", "http://127.0.0.1:9001/bkt/k", 0, out, sizeof out, why, sizeof why) == -1);
    CHECK_HAS(why, "another endpoint, http://127.0.0.1:9001");
    CHECK(gf__redirect_ok("https://b.s3.us-east-1.amazonaws.com/k", "https://b.s3.eu-west-1.amazonaws.com/k", 1, out, sizeof out, why, sizeof why) == 0);
    CHECK(gf__redirect_ok("https://b.s3.us-east-1.amazonaws.com/k", "https://evil.example.com/k", 1, out, sizeof out, why, sizeof why) == -1);
    CHECK(gf__redirect_ok("https://b.s3.us-east-1.amazonaws.com/k", "http://b.s3.eu-west-1.amazonaws.com/k", 1, out, sizeof out, why, sizeof why) == -1);
    CHECK(gf__redirect_ok("https://b.s3.us-east-1.amazonaws.com/k", "ftp://x/y", 1, out, sizeof out, why, sizeof why) == -1);
}

static void test_manifest_format(void)
{
    gpufeed_allocator al;
    gf__mfbuf b;
    gf__mfread r;
    gf__mfent e, g;
    uint8_t head[4] = { 'P', 'A', 'R', '1' }, tail[20];
    char why[200];
    size_t i;
    int bad = 0;
    memset(&al, 0, sizeof al);
    memset(&b, 0, sizeof b);
    memset(tail, 7, sizeof tail);
    memcpy(tail + 16, "PAR1", 4);
    b.a = &al;
    memset(&e, 0, sizeof e);
    e.url = "s3://bkt/data/a.parquet";
    e.url_n = strlen(e.url);
    e.size = 1000;
    e.mtime = 1795860000;
    e.etag = "e1";
    e.etag_n = 2;
    e.head = head;
    e.head_n = 4;
    e.tail = tail;
    e.tail_n = 20;
    e.tail_off = 980;
    gf__mf_begin(&b, "s3://bkt/data/", 2);
    gf__mf_add(&b, &e);
    e.url = "s3://bkt/data/b.parquet";
    e.etag_n = 0;
    gf__mf_add(&b, &e);
    gf__mf_end(&b);
    CHECK(!b.nomem);
    CHECK(gf__mf_open(&r, b.p, b.n, why, sizeof why) == 0 && r.count == 2 && r.root_n == 14 && !memcmp(r.root, "s3://bkt/data/", 14));
    CHECK(gf__mf_next(&r, &g, why, sizeof why) == 1 && g.size == 1000 && g.mtime == 1795860000 && g.etag_n == 2 && g.tail_off == 980 &&
          g.tail_n == 20 && !memcmp(g.tail, tail, 20) && g.url_n == 23);
    CHECK(gf__mf_next(&r, &g, why, sizeof why) == 1 && g.etag_n == 0 && !memcmp(g.url, "s3://bkt/data/b.parquet", 23));
    CHECK(gf__mf_next(&r, &g, why, sizeof why) == 0);
    /* every byte flipped and every cut: refused with a reason, never a crash */
    for (i = 0; i < b.n; i++) {
        b.p[i] ^= 0x40;
        if (gf__mf_open(&r, b.p, b.n, why, sizeof why) == 0) bad++;
        b.p[i] ^= 0x40;
        if (gf__mf_open(&r, b.p, i, why, sizeof why) == 0) bad++;
    }
    CHECK_MSG(bad == 0, "%d damaged manifests accepted", bad);
    CHECK(gf__mf_open(&r, b.p, b.n - 1, why, sizeof why) == -1);
    CHECK_HAS(why, "checksum");
    /* lengths that lie, under a valid checksum: refused by the bounds */
    {
        gf__mfbuf h;
        memset(&h, 0, sizeof h);
        h.a = &al;
        gf__mf_begin(&h, "s3://bkt/", 1);
        gf__mf_u32(&h, 5);
        gf__mf_put(&h, "s3://", 5);
        gf__mf_u64(&h, 10);
        gf__mf_u64(&h, 0);
        gf__mf_put(&h, "\0", 1);
        gf__mf_u32(&h, 4);
        gf__mf_put(&h, "PAR1", 4);
        gf__mf_u64(&h, 2);          /* the tail at 2 of 10 bytes claims 8 ... */
        gf__mf_u32(&h, 4000000000u); /* ... but says 4 GB */
        gf__mf_put(&h, "PAR1PAR1", 8);
        gf__mf_put(&h, "padpadpadpadpadpadpadpadpadpadpadpadpadpad", 40);
        gf__mf_end(&h);
        CHECK(gf__mf_open(&r, h.p, h.n, why, sizeof why) == 0 && gf__mf_next(&r, &g, why, sizeof why) == -1);
        CHECK_HAS(why, "entry 0 is malformed");
        gf__free(&al, h.p);
    }
    gf__free(&al, b.p);
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
    strcpy(line, "Last-Modified: Sat, 28 Nov 2026 10:00:00 GMT\r\n");
    gf__rq_header(line, 1, strlen(line), &q);
    CHECK(q.mtime_got == 1795860000);
    strcpy(line, "Location: http://h/x\r\n");
    gf__rq_header(line, 1, strlen(line), &q);
    CHECK(!strcmp(q.loc, "http://h/x"));
    strcpy(line, "x-amz-bucket-region: eu-west-1\r\n");
    gf__rq_header(line, 1, strlen(line), &q);
    CHECK(!strcmp(q.region_got, "eu-west-1"));
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
    q.has_cr = 0;                                          /* 206 without a Content-Range */
    q.status = 206;
    CHECK(gf__rq_check_get(&q, why, sizeof why) == -1);
    CHECK_HAS(why, "ignored the Range header");
    q.has_cr = -1;
    CHECK(gf__rq_check_get(&q, why, sizeof why) == -1);
    /* the body callback refuses more than asked (a lying server) */
    q.got = 8;
    q.hstatus = 206;
    CHECK(gf__rq_body((char *)"abcdef", 1, 6, &q) == 0 && q.overflow == 1);
    /* a 200 with the whole object for a range: the range sliced out of it */
    {
        gpufeed_allocator al;
        char obj[100];
        int k;
        memset(&al, 0, sizeof al);
        for (k = 0; k < 100; k++) obj[k] = (char)k;
        memset(&q, 0, sizeof q);
        q.kind = GF__RQ_GET;
        q.a = &al;
        q.off = 10;
        q.len = 10;
        q.size = 100;
        q.cap = 10;
        q.mtime = -1;
        q.hstatus = 200;
        q.status = 200;
        for (k = 0; k < 100; k += 7) CHECK(gf__rq_body(obj + k, 1, (size_t)(k + 7 <= 100 ? 7 : 100 - k), &q) == (size_t)(k + 7 <= 100 ? 7 : 100 - k));
        CHECK(q.slice && q.got == 10 && q.pos == 100 && q.dst && q.dst[0] == 10 && q.dst[9] == 19);
        CHECK_MSG(gf__rq_check_get(&q, why, sizeof why) == 0, "%s", why);
        q.pos = 60;                                        /* cut short: another attempt */
        CHECK(gf__rq_check_get(&q, why, sizeof why) == 1);
        CHECK_HAS(why, "HTTP 200 with 60 bytes for a range of an object of 100 bytes");
        q.pos = 95;                                        /* longer than the object: refused */
        CHECK(gf__rq_body(obj, 1, 7, &q) == 0 && q.overflow);
        gf__free(&al, q.dst);
    }
    /* without an ETag: Last-Modified of the answer against the one opened */
    memset(&q, 0, sizeof q);
    q.kind = GF__RQ_GET;
    q.off = 0;
    q.len = 10;
    q.size = 100;
    q.status = 206;
    q.has_cr = 1;
    q.cr_a = 0;
    q.cr_b = 9;
    q.cr_total = 100;
    q.got = 10;
    q.mtime = 1795860000;
    q.mtime_got = 1795860000;
    CHECK(gf__rq_check_get(&q, why, sizeof why) == 0);
    q.mtime_got = 1795860010;                              /* replaced, same size */
    CHECK(gf__rq_check_get(&q, why, sizeof why) == -1);
    CHECK_HAS(why, "Last-Modified Sat, 28 Nov 2026 10:00:10 GMT, was Sat, 28 Nov 2026 10:00:00 GMT");
    /* 412: the pin named; a 403 without credentials says what was tried */
    {
        gf__rctx cx;
        memset(&cx, 0, sizeof cx);
        pthread_mutex_init(&cx.mu, NULL);
        gf__fmt(cx.cred.from, sizeof cx.cred.from, "none found: tried everything");
        q.status = 412;
        q.etag = "e1";
        q.sign = 1;
        CHECK(gf__rq_http_error(&cx, &q, why, sizeof why) == 0);
        CHECK_HAS(why, "HTTP 412 Precondition Failed (the object changed since it was opened: its ETag is no longer e1)");
        q.manifest = 1;
        CHECK(gf__rq_http_error(&cx, &q, why, sizeof why) == 0);
        CHECK_HAS(why, "gpufeed-cache manifest");
        q.etag = "";
        q.mtime = 1795860000;
        CHECK(gf__rq_http_error(&cx, &q, why, sizeof why) == 0);
        CHECK_HAS(why, "modified after Sat, 28 Nov 2026 10:00:00 GMT");
        q.status = 403;
        CHECK(gf__rq_http_error(&cx, &q, why, sizeof why) == 0);
        CHECK_HAS(why, "no credentials: none found: tried everything");
        pthread_mutex_destroy(&cx.mu);
    }
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
    RUN(test_listing_pages);
    RUN(test_xml_whole);
    RUN(test_times);
    RUN(test_ini);
    RUN(test_json);
    RUN(test_redirects);
    RUN(test_manifest_format);
    RUN(test_glob_match_keys);
    RUN(test_headers);
    RUN(test_response_checks);
    return TEST_SUMMARY();
}
